/*
 * gvm_row.h - one row of an expression program (see gvm.h).
 *
 * gvm_row is compiled twice: by nvcc as a __host__ __device__ function the
 * kernel calls once per thread, and by the C compiler for gvm_run_host,
 * which tests/unit/test_vm_rowwise.c checks against vm_run op for op.
 * Each case mirrors vm_cpu.c's loop body for one row: same helpers from
 * value_inline.h, same NULL rules, same statuses, same error mask.
 */
#ifndef GPMDB_GVM_ROW_H
#define GPMDB_GVM_ROW_H

#include "../engine/value_inline.h"
#include "gvm.h"

#define GVM_FN VAL_FN

/*
 * The order in which vm_run meets errors: batch of VEC_BATCH rows first,
 * then instruction, then row within the batch.  The smallest key over all
 * rows is the error vm_run reports.
 */
GVM_FN uint64_t gvm_key(uint32_t row, uint32_t pc)
{
	return ((uint64_t)(row / VEC_BATCH) << 20) | ((uint64_t)pc << 11) |
	       (row % VEC_BATCH);
}

/*
 * NaN bits: x86 negates a double by flipping its sign bit and widens a
 * float NaN keeping sign and payload; the GPU's neg.f64 and cvt.f64.f32
 * give a canonical NaN instead.  These two do it the x86 way on both, so
 * results match vm_cpu bit for bit even for NaN inputs.
 */
GVM_FN int64_t gvm_flip_sign(int64_t bits)
{
	return (int64_t)((uint64_t)bits ^ 0x8000000000000000ull);
}

GVM_FN double gvm_f2d(float f)
{
	union {
		float f;
		uint32_t u;
	} a;
	union {
		double d;
		uint64_t u;
	} b;

	if (f == f)
		return (double)f;
	a.f = f;
	/* sign, all-ones exponent, quiet bit, payload moved up 29 bits */
	b.u = ((uint64_t)(a.u >> 31) << 63) | 0x7ff8000000000000ull |
	      ((uint64_t)(a.u & 0x7fffff) << 29);
	return b.d;
}

GVM_FN int gvm_str_eq(const gvm_reg *x, const gvm_reg *y)
{
	if (x->len != y->len)
		return 0;
	for (uint32_t i = 0; i < x->len; i++)
		if (x->v.s[i] != y->v.s[i])
			return 0;
	return 1;
}

GVM_FN int gvm_ncmp_i(int64_t x, int64_t y)
{
	return x < y ? -1 : x > y;
}

GVM_FN int gvm_ncmp_r(double x, double y)
{
	return x < y ? -1 : x > y;
}

GVM_FN int gvm_tcmp(const gvm_reg *x, const gvm_reg *y)
{
	return val_text_cmp(x->v.s, x->len, y->v.s, y->len);
}

/* vm_in_int / vm_in_real: binary search of a sorted constant set. */
GVM_FN int gvm_in_int(const bc_imm *set, uint32_t n, int64_t v)
{
	uint32_t lo = 0, hi = n;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (set[mid].i < v)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && set[lo].i == v;
}

GVM_FN int gvm_in_real(const bc_imm *set, uint32_t n, double v)
{
	uint32_t lo = 0, hi = n;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (set[mid].r < v)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && set[lo].r == v;
}

GVM_FN int gvm_in_text(const bc_program *p, uint32_t first, uint32_t n,
		       const gvm_reg *x)
{
	for (uint32_t k = first; k < first + n; k++) {
		const char *c = p->text + p->str_off[k];
		uint32_t i;
		if (p->str_len[k] != x->len)
			continue;
		for (i = 0; i < x->len && c[i] == x->v.s[i]; i++)
			;
		if (i == x->len)
			return 1;
	}
	return 0;
}

/* A TEXT register as an output element: input text or constant text. */
GVM_FN gpu_str gvm_str_out(const bc_program *p, const gvm_io *io,
			   const gvm_reg *v)
{
	gpu_str s;
	uintptr_t a = (uintptr_t)v->v.s, ct = (uintptr_t)p->text;

	s.off = 0;
	s.len = 0;
	if (v->null || !v->v.s)
		return s;
	if (a >= ct && a <= ct + BC_MAX_TEXT)
		s.off = GPU_STR_CONST | (uint32_t)(a - ct);
	else
		s.off = (uint32_t)(a - (uintptr_t)io->text);
	s.len = v->len;
	return s;
}

#define GVM_SLOT(r) (gp->slot[(r) < BC_MAX_REGS ? (r) : 0])
#define GVM_R(r)    (&R[GVM_SLOT(r)])
#define GVM_SA	    (p->rtype[in->a].scale)
#define GVM_SB	    (p->rtype[in->b].scale)
#define GVM_SD	    (p->rtype[in->dst].scale)
#define GVM_PD	    (p->rtype[in->dst].prec)

/* STMT runs only for rows where no operand is NULL (it sets st). */
#define GVM_UN(STMT)                                                           \
	do {                                                                   \
		const gvm_reg *x = GVM_R(in->a);                               \
		z->len = 0;                                                    \
		z->null = x->null;                                             \
		if (z->null) {                                                 \
			z->v.i = 0;                                            \
			break;                                                 \
		}                                                              \
		STMT;                                                          \
	} while (0)

#define GVM_BIN(STMT)                                                          \
	do {                                                                   \
		const gvm_reg *x = GVM_R(in->a), *y = GVM_R(in->b);            \
		z->len = 0;                                                    \
		z->null = x->null | y->null;                                   \
		if (z->null) {                                                 \
			z->v.i = 0;                                            \
			break;                                                 \
		}                                                              \
		STMT;                                                          \
	} while (0)

/* The comparison family over register field F (v.i or v.r). */
#define GVM_CMP_CASES(SUF, F, NCMP)                                            \
	case BC_EQ_##SUF:                                                      \
		GVM_BIN(z->v.i = x->F == y->F);                                \
		break;                                                         \
	case BC_NE_##SUF:                                                      \
		GVM_BIN(z->v.i = !(x->F == y->F));                             \
		break;                                                         \
	case BC_LT_##SUF:                                                      \
		GVM_BIN(z->v.i = NCMP(x->F, y->F) < 0);                        \
		break;                                                         \
	case BC_LE_##SUF:                                                      \
		GVM_BIN(z->v.i = NCMP(x->F, y->F) <= 0);                       \
		break;                                                         \
	case BC_GT_##SUF:                                                      \
		GVM_BIN(z->v.i = NCMP(x->F, y->F) > 0);                        \
		break;                                                         \
	case BC_GE_##SUF:                                                      \
		GVM_BIN(z->v.i = NCMP(x->F, y->F) >= 0);                       \
		break;                                                         \
	case BC_IS_##SUF:                                                      \
	case BC_ISNOT_##SUF: {                                                 \
		const gvm_reg *x = GVM_R(in->a), *y = GVM_R(in->b);            \
		int eq =                                                       \
		    x->null || y->null ? x->null == y->null : x->F == y->F;    \
		z->v.i = eq ^ (in->op == BC_ISNOT_##SUF);                      \
		z->null = 0;                                                   \
		z->len = 0;                                                    \
		break;                                                         \
	}                                                                      \
	case BC_NULLIF_##SUF: {                                                \
		const gvm_reg *x = GVM_R(in->a), *y = GVM_R(in->b);            \
		*z = *x;                                                       \
		z->null = x->null || (!y->null && x->F == y->F);               \
		break;                                                         \
	}

/*
 * Runs p for one row.  R: the thread's GVM_MAX_SLOTS registers.  Returns
 * 0, or the failing status with *epc set (and ei filled when not NULL:
 * the second, single-row pass that builds the message).  Outputs are
 * written after the last instruction, as vm_run's outputs show the
 * registers' final values.
 */
GVM_FN int gvm_row(const gvm_prog *gp, const gvm_io *io, uint32_t row,
		   gvm_reg *R, uint32_t *epc, gvm_errinfo *ei)
{
	const bc_program *p = &gp->p;

	for (uint32_t pc = 0; pc < p->ninsns; pc++) {
		const bc_insn *in = &p->insns[pc];
		gvm_reg *z = GVM_R(in->dst);
		int st = 0;

		switch (in->op) {
		case BC_NOP:
		case BC_OUTPUT:
			break;
		case BC_LOAD_COL: {
			const gpu_col *c = &io->in[in->a];
			uint32_t i = c->sel ? c->sel[row] : row;
			z->len = 0;
			z->v.i = 0;
			z->null = c->type == VEC_NULL || i == GPU_NO_ROW ||
				  (c->nulls && c->nulls[i] != 0);
			if (z->null)
				break;
			switch (c->type) {
			case BC_COL_INT32:
			case BC_COL_DATE:
				z->v.i = ((const int32_t *)c->data)[i];
				break;
			case BC_COL_INT64:
			case BC_COL_DEC:
				z->v.i = ((const int64_t *)c->data)[i];
				break;
			case BC_COL_FLOAT:
				z->v.r = gvm_f2d(((const float *)c->data)[i]);
				break;
			case BC_COL_DOUBLE:
				z->v.r = ((const double *)c->data)[i];
				break;
			case BC_COL_BOOL:
				z->v.i = ((const uint8_t *)c->data)[i];
				break;
			case BC_COL_TEXT: {
				gpu_str s = ((const gpu_str *)c->data)[i];
				z->v.s = io->itext[in->a] + s.off;
				z->len = s.len;
				break;
			}
			}
			break;
		}
		case BC_CONST:
			z->null = 0;
			z->len = 0;
			switch (p->rtype[in->dst].type) {
			case BC_T_BOOL:
				z->v.i = (uint8_t)in->imm.i;
				break;
			case BC_T_DATE:
				z->v.i = (int32_t)in->imm.i;
				break;
			case BC_T_REAL:
				z->v.r = in->imm.r;
				break;
			case BC_T_TEXT:
				z->v.s = p->text + p->str_off[in->imm.i];
				z->len = p->str_len[in->imm.i];
				break;
			case BC_T_NULL:
				z->null = 1;
				z->v.i = 0;
				break;
			default:
				z->v.i = in->imm.i;
			}
			break;
		case BC_NULL:
			z->null = 1;
			z->v.i = 0;
			z->len = 0;
			break;
		case BC_MOVE:
			*z = *GVM_R(in->a);
			break;

		/* ---- INT ---- */
		case BC_ADD_I:
			GVM_BIN(st = val_i64_add(x->v.i, y->v.i, &z->v.i));
			break;
		case BC_SUB_I:
			GVM_BIN(st = val_i64_sub(x->v.i, y->v.i, &z->v.i));
			break;
		case BC_MUL_I:
			GVM_BIN(st = val_i64_mul(x->v.i, y->v.i, &z->v.i));
			break;
		case BC_DIV_I:
			GVM_BIN(st = val_i64_div(x->v.i, y->v.i, &z->v.i));
			break;
		case BC_MOD_I:
			GVM_BIN(st = val_i64_mod(x->v.i, y->v.i, &z->v.i));
			break;
		case BC_NEG_I:
			GVM_UN(st = val_i64_neg(x->v.i, &z->v.i));
			break;
		case BC_ABS_I:
			GVM_UN(st = val_i64_abs(x->v.i, &z->v.i));
			break;

		/* ---- REAL ---- */
		case BC_ADD_R:
			GVM_BIN(st = val_real_check(x->v.r + y->v.r, &z->v.r));
			break;
		case BC_SUB_R:
			GVM_BIN(st = val_real_check(x->v.r - y->v.r, &z->v.r));
			break;
		case BC_MUL_R:
			GVM_BIN(st = val_real_check(x->v.r * y->v.r, &z->v.r));
			break;
		case BC_DIV_R:
			GVM_BIN(st = val_real_div(x->v.r, y->v.r, &z->v.r));
			break;
		case BC_MOD_R:
			GVM_BIN(st = val_real_mod(x->v.r, y->v.r, &z->v.r));
			break;
		case BC_NEG_R:
			GVM_UN(z->v.i = gvm_flip_sign(x->v.i));
			break;
		case BC_ABS_R:
			GVM_UN(z->v.i =
				   x->v.r < 0 ? gvm_flip_sign(x->v.i) : x->v.i);
			break;

		/* ---- DEC ---- */
		case BC_ADD_D:
			GVM_BIN(st = val_dec_add(x->v.i, GVM_SA, y->v.i, GVM_SB,
						 GVM_SD, &z->v.i));
			break;
		case BC_SUB_D:
			GVM_BIN(st = val_dec_sub(x->v.i, GVM_SA, y->v.i, GVM_SB,
						 GVM_SD, &z->v.i));
			break;
		case BC_MUL_D:
			GVM_BIN(st = val_dec_mul(x->v.i, GVM_SA, y->v.i, GVM_SB,
						 GVM_SD, &z->v.i));
			break;
		case BC_DIV_D:
			GVM_BIN(st = val_dec_div(x->v.i, GVM_SA, y->v.i, GVM_SB,
						 &z->v.r));
			break;
		case BC_MOD_D:
			GVM_BIN(st = val_dec_mod(x->v.i, GVM_SA, y->v.i, GVM_SB,
						 GVM_SD, &z->v.i));
			break;
		case BC_NEG_D:
			GVM_UN(st = val_i64_neg(x->v.i, &z->v.i));
			break;
		case BC_ABS_D:
			GVM_UN(st = val_i64_abs(x->v.i, &z->v.i));
			break;

		/* ---- conversions ---- */
		case BC_I2R:
			GVM_UN(z->v.r = (double)x->v.i);
			break;
		case BC_I2D:
			GVM_UN(st = val_i64_to_dec(x->v.i, GVM_SD, &z->v.i);
			       if (!st && !val_dec_fits(z->v.i, GVM_PD)) st =
				   VAL_OVERFLOW);
			break;
		case BC_D2R:
			GVM_UN(z->v.r = val_dec_to_real(x->v.i, GVM_SA));
			break;
		case BC_D2D:
			GVM_UN(st = val_dec_rescale(x->v.i, GVM_SA, GVM_SD,
						    &z->v.i);
			       if (!st && !val_dec_fits(z->v.i, GVM_PD)) st =
				   VAL_OVERFLOW);
			break;
		case BC_R2I:
			GVM_UN(z->v.i = val_real_to_i64(x->v.r));
			break;
		case BC_D2I:
			GVM_UN(z->v.i = val_dec_to_i64(x->v.i, GVM_SA));
			break;
		case BC_T2I:
			GVM_UN(z->v.i = val_text_to_i64(x->v.s, x->len));
			break;
		case BC_T2D: {
			uint32_t e;
			GVM_UN(st = val_dec_parse(x->v.s, x->len, GVM_SD,
						  &z->v.i, &e);
			       if (!st && !val_dec_fits(z->v.i, GVM_PD)) st =
				   VAL_OVERFLOW);
			break;
		}
		case BC_T2DT: {
			int32_t d = 0;
			GVM_UN(st = val_date_parse(x->v.s, x->len, &d);
			       z->v.i = d);
			break;
		}
		case BC_B2I:
			GVM_UN(z->v.i = x->v.i);
			break;
		case BC_I2B:
			GVM_UN(z->v.i = x->v.i != 0);
			break;
		case BC_R2B:
			GVM_UN(z->v.i = x->v.r != 0);
			break;

			/* ---- comparisons ---- */
			GVM_CMP_CASES(I, v.i, gvm_ncmp_i)
			GVM_CMP_CASES(R, v.r, gvm_ncmp_r)
			GVM_CMP_CASES(D, v.i, gvm_ncmp_i)
			GVM_CMP_CASES(DT, v.i, gvm_ncmp_i)
			GVM_CMP_CASES(B, v.i, gvm_ncmp_i)
		case BC_EQ_T:
			GVM_BIN(z->v.i = gvm_str_eq(x, y));
			break;
		case BC_NE_T:
			GVM_BIN(z->v.i = !gvm_str_eq(x, y));
			break;
		case BC_LT_T:
			GVM_BIN(z->v.i = gvm_tcmp(x, y) < 0);
			break;
		case BC_LE_T:
			GVM_BIN(z->v.i = gvm_tcmp(x, y) <= 0);
			break;
		case BC_GT_T:
			GVM_BIN(z->v.i = gvm_tcmp(x, y) > 0);
			break;
		case BC_GE_T:
			GVM_BIN(z->v.i = gvm_tcmp(x, y) >= 0);
			break;
		case BC_IS_T:
		case BC_ISNOT_T: {
			const gvm_reg *x = GVM_R(in->a), *y = GVM_R(in->b);
			int eq = x->null || y->null ? x->null == y->null
						    : gvm_str_eq(x, y);
			z->v.i = eq ^ (in->op == BC_ISNOT_T);
			z->null = 0;
			z->len = 0;
			break;
		}
		case BC_NULLIF_T: {
			const gvm_reg *x = GVM_R(in->a), *y = GVM_R(in->b);
			*z = *x;
			z->null = x->null || (!y->null && gvm_str_eq(x, y));
			if (z->null) {
				z->v.i = 0;
				z->len = 0;
			}
			break;
		}

		/* ---- logic ---- */
		case BC_AND:
		case BC_OR: {
			/* The dominant value (0 for AND, 1 for OR) wins over
			 * NULL; otherwise any NULL makes NULL. */
			const gvm_reg *x = GVM_R(in->a), *y = GVM_R(in->b);
			int dom = in->op == BC_OR;
			int xd = !x->null && (x->v.i != 0) == dom;
			int yd = !y->null && (y->v.i != 0) == dom;
			z->v.i = xd || yd ? dom : !dom;
			z->null = !(xd || yd) && (x->null || y->null);
			z->len = 0;
			break;
		}
		case BC_NOT:
			GVM_UN(z->v.i = !x->v.i);
			break;
		case BC_IS_NULL:
		case BC_NOT_NULL:
			z->v.i =
			    (GVM_R(in->a)->null != 0) ^ (in->op == BC_NOT_NULL);
			z->null = 0;
			z->len = 0;
			break;
		case BC_IS_TRUE:
		case BC_IS_FALSE: {
			const gvm_reg *x = GVM_R(in->a);
			z->v.i =
			    !x->null && (x->v.i != 0) == (in->op == BC_IS_TRUE);
			z->null = 0;
			z->len = 0;
			break;
		}
		case BC_SELECT: {
			const gvm_reg *c = GVM_R(in->a);
			*z = c->v.i && !c->null ? *GVM_R(in->b) : *GVM_R(in->c);
			break;
		}
		case BC_COALESCE: {
			const gvm_reg *x = GVM_R(in->a);
			*z = !x->null ? *x : *GVM_R(in->b);
			break;
		}

		/* ---- text ---- */
		case BC_LIKE:
			GVM_BIN(int32_t esc = -1; z->v.i = 0; if (in->c) {
				const gvm_reg *e = GVM_R(in->c - 1);
				if (e->null) {
					/* ESCAPE NULL: NULL, as SQLite */
					z->null = 1;
					break;
				}
				if (val_text_length(e->v.s, e->len) != 1) {
					st = GVM_ST_ESCAPE;
					break;
				}
				uint32_t k = 0;
				esc =
				    (int32_t)val_utf8_read(e->v.s, e->len, &k);
			} z->v.i = val_like(x->v.s, x->len, y->v.s, y->len,
							      esc));
			break;
		case BC_GLOB:
			GVM_BIN(z->v.i =
				    val_glob(x->v.s, x->len, y->v.s, y->len));
			break;
		case BC_IN_I:
		case BC_IN_R:
		case BC_IN_DT:
		case BC_IN_T: {
			const gvm_reg *x = GVM_R(in->a);
			const bc_imm *set = p->consts + in->imm.i;
			int f;
			z->len = 0;
			z->v.i = 0;
			if (in->b == 0 && !in->c) { /* x IN () is false, even
						     * for NULL */
				z->null = 0;
				break;
			}
			if (x->null) {
				z->null = 1;
				break;
			}
			if (in->op == BC_IN_R)
				f = gvm_in_real(set, in->b, x->v.r);
			else if (in->op == BC_IN_T)
				f = gvm_in_text(p, (uint32_t)in->imm.i, in->b,
						x);
			else
				f = gvm_in_int(set, in->b, x->v.i);
			z->v.i = f;
			z->null = !f && in->c;
			break;
		}
		case BC_LENGTH:
			GVM_UN(z->v.i = val_text_length(x->v.s, x->len));
			break;
		case BC_SUBSTR:
			GVM_BIN(uint32_t o; uint32_t l;
				const gvm_reg *c =
				    in->c ? GVM_R(in->c - 1) : NULL;
				if (c && c->null) {
					z->null = 1;
					break;
				} val_substr(x->v.s, x->len, y->v.i,
					     c ? c->v.i : 0, c != NULL, &o, &l);
				z->v.s = x->v.s + o; z->len = l);
			break;
		case BC_TRIM:
		case BC_LTRIM:
		case BC_RTRIM:
			GVM_UN(uint32_t o; uint32_t l;
			       const gvm_reg *b =
				   in->b ? GVM_R(in->b - 1) : NULL;
			       int which = in->op == BC_TRIM	? 3
					   : in->op == BC_LTRIM ? 1
								: 2;
			       if (b && b->null) {
				       z->null = 1;
				       break;
			       }
			       /* An empty set trims nothing, even when its
				* pointer is NULL (NULL means spaces). */
			       val_trim(x->v.s, x->len,
					b ? (b->v.s ? b->v.s : "") : NULL,
					b ? b->len : 0, which, &o, &l);
			       z->v.s = x->v.s + o; z->len = l);
			break;
		case BC_INSTR:
			GVM_BIN(z->v.i =
				    val_instr(x->v.s, x->len, y->v.s, y->len));
			break;

		/* ---- numeric functions ---- */
		case BC_ROUND_D:
			GVM_UN(const gvm_reg *b =
				   in->b ? GVM_R(in->b - 1) : NULL;
			       if (b && b->null) {
				       z->null = 1;
				       break;
			       } st = val_dec_round(x->v.i, GVM_SA,
						    b ? b->v.i : 0, &z->v.i));
			break;

		/* ---- dates ---- */
		case BC_DATE_ADD_DAYS: {
			int32_t d = 0;
			GVM_BIN(
			    st = val_date_add_days((int32_t)x->v.i, y->v.i, &d);
			    z->v.i = d);
			break;
		}
		case BC_DATE_ADD_MONTHS: {
			int32_t d = 0;
			GVM_BIN(st = val_date_add_months((int32_t)x->v.i,
							 y->v.i, &d);
				z->v.i = d);
			break;
		}
		case BC_DATE_ADD_YEARS: {
			int32_t d = 0;
			GVM_BIN(st = val_date_add_years((int32_t)x->v.i, y->v.i,
							&d);
				z->v.i = d);
			break;
		}
		case BC_DATE_DIFF:
			GVM_BIN(z->v.i = x->v.i - y->v.i);
			break;
		case BC_EXTRACT_YEAR:
			GVM_UN(z->v.i = val_date_year((int32_t)x->v.i));
			break;
		case BC_EXTRACT_MONTH:
			GVM_UN(z->v.i = val_date_month((int32_t)x->v.i));
			break;
		case BC_EXTRACT_DAY:
			GVM_UN(z->v.i = val_date_day((int32_t)x->v.i));
			break;
		default:
			/* gvm_prepare lets no other op through. */
			*epc = pc;
			if (ei) {
				ei->pc = pc;
				ei->st = -1;
				ei->row = row;
				ei->len = 0;
			}
			return -1;
		}
		if (st) {
			if (st == VAL_NULL) {
				z->null = 1;
				continue;
			}
			/* A bad ESCAPE is an error even where the mask is
			 * off, as in vm_cpu. */
			if (st != GVM_ST_ESCAPE && in->m) {
				const gvm_reg *mk = GVM_R(in->m - 1);
				if (!mk->v.i || mk->null) {
					z->null = 1;
					continue;
				}
			}
			*epc = pc;
			if (ei) {
				ei->pc = pc;
				ei->st = st;
				ei->row = row;
				ei->len = 0;
				if (in->op == BC_T2DT) {
					const gvm_reg *x = GVM_R(in->a);
					uint32_t n = x->len > 64 ? 64 : x->len;
					for (uint32_t k = 0; k < n; k++)
						ei->text[k] = x->v.s[k];
					ei->len = n;
				}
			}
			return st;
		}
	}
	for (uint32_t k = 0; k < p->noutputs; k++) {
		const gpu_col *o = &io->out[k];
		const gvm_reg *v = GVM_R(gp->out_reg[k]);
		o->nulls[row] = v->null;
		switch (o->type) {
		case BC_COL_BOOL:
			((uint8_t *)o->data)[row] = (uint8_t)v->v.i;
			break;
		case BC_COL_INT64:
		case BC_COL_DEC:
			((int64_t *)o->data)[row] = v->v.i;
			break;
		case BC_COL_DOUBLE:
			((double *)o->data)[row] = v->v.r;
			break;
		case BC_COL_DATE:
			((int32_t *)o->data)[row] = (int32_t)v->v.i;
			break;
		case BC_COL_TEXT:
			((gpu_str *)o->data)[row] = gvm_str_out(p, io, v);
			break;
		}
	}
	return 0;
}

#endif /* GPMDB_GVM_ROW_H */
