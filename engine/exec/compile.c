/*
 * compile.c - bound expressions to bytecode programs (bytecode.h), and
 * their evaluation over relations with the CPU interpreter (vm.h).
 *
 * One program per expression, one output.  Inputs are columns of the
 * relation the expression runs over, values of an outer query's current
 * row (correlated subqueries: broadcast through a zero selection vector)
 * and subquery results, which are computed per batch before the program
 * runs and handed over as input columns.
 *
 * SQLite's comparison rules with static types: numbers compare as
 * numbers; a column of numeric affinity compared with text converts the
 * text when it looks like a number (literal text is converted here, at
 * compile time); a text column compared with a number without affinity
 * compares the number's text; otherwise a number is less than any text.
 */
#include "../engine.h"
#include "../value.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const uint32_t zero_sel[VEC_BATCH];

typedef struct cc {
	exec_ctx *x;
	bc_program *p;
	cexpr *c;
	const pnode *node;
	bool post;
	int mask; /* BOOL register of the live rows, or -1 */
	int inreg[BC_MAX_INPUTS];
	/* reuse: programs are limited to BC_MAX_REGS registers */
	struct {
		int from, to, reg;
	} convs[BC_MAX_REGS];
	int nconvs;
	struct {
		int type;
		bc_imm v;
		int reg;
	} consts[BC_MAX_REGS];
	int nconsts;
} cc;

/* Constants are emitted once per program. */
static int cc_const(cc *c, int type, bc_imm v)
{
	int r;

	for (int i = 0; i < c->nconsts; i++)
		if (c->consts[i].type == type && c->consts[i].v.i == v.i)
			return c->consts[i].reg;
	switch (type) {
	case BC_T_INT:
		r = bc_emit_int(c->p, v.i);
		break;
	case BC_T_REAL:
		r = bc_emit_real(c->p, v.r);
		break;
	case BC_T_DATE:
		r = bc_emit_date(c->p, (int32_t)v.i);
		break;
	default:
		r = bc_emit_bool(c->p, (int)v.i);
	}
	if (r >= 0 && c->nconsts < BC_MAX_REGS) {
		c->consts[c->nconsts].type = type;
		c->consts[c->nconsts].v = v;
		c->consts[c->nconsts++].reg = r;
	}
	return r;
}

static int cc_int(cc *c, int64_t v)
{
	return cc_const(c, BC_T_INT, (bc_imm){.i = v});
}

static int cc_real(cc *c, double v)
{
	return cc_const(c, BC_T_REAL, (bc_imm){.r = v});
}

/* The constant an INT register holds, if it is one. */
static bool const_int(cc *c, int r, int64_t *v)
{
	for (int i = 0; i < c->nconsts; i++)
		if (c->consts[i].reg == r && c->consts[i].type == BC_T_INT) {
			*v = c->consts[i].v.i;
			return true;
		}
	return false;
}

static int cc_fail(cc *c)
{
	if (c->x->db->errcode)
		return c->x->db->errcode;
	return db_err(c->x->db, GPMDB_ERROR, "%s",
		      c->p->errmsg[0] ? c->p->errmsg
				      : "expression too complex");
}

static int rtype_of(cc *c, int r)
{
	return c->p->rtype[r].type;
}

static int coltype_of(int t)
{
	switch (t) {
	case BC_T_BOOL:
		return BC_COL_BOOL;
	case BC_T_INT:
		return BC_COL_INT64;
	case BC_T_REAL:
		return BC_COL_DOUBLE;
	case BC_T_DEC:
		return BC_COL_DEC;
	case BC_T_DATE:
		return BC_COL_DATE;
	default:
		return BC_COL_TEXT;
	}
}

/* A register loading input (kind, col, level, e); same inputs shared. */
static int add_input(cc *c, int kind, int col, int level, ast_expr *e, etype ty)
{
	cexpr *x = c->c;
	int k;

	if (ty.t == BC_T_NULL)
		return bc_emit_null(c->p, BC_T_NULL, 0);
	if (kind != IN_SUBQ)
		for (k = 0; k < x->ninputs; k++)
			if (x->in[k].kind == kind && x->in[k].col == col &&
			    x->in[k].level == level)
				return c->inreg[k];
	k = bc_input(c->p, coltype_of(ty.t), ty.prec, ty.scale);
	if (k < 0)
		return -1;
	x->in[k] = (cinput){kind, col, level, e, NULL, NULL, NULL, ty};
	x->ninputs = k + 1;
	return c->inreg[k] = bc_emit_load(c->p, k);
}

/* ---- conversions ---- */

static int conv_raw(cc *c, int r, etype to);

static int conv(cc *c, int r, etype to)
{
	int key, out;
	int64_t iv;

	if (r < 0)
		return -1;
	if (to.t == BC_T_NULL || to.t == ET_INTERVAL ||
	    (c->p->rtype[r].type == to.t &&
	     (to.t != BC_T_DEC || c->p->rtype[r].scale == to.scale)))
		return r;
	/* fold conversions of integer constants */
	if (c->p->rtype[r].type == BC_T_INT && const_int(c, r, &iv)) {
		if (to.t == BC_T_REAL)
			return cc_real(c, (double)iv);
		if (to.t == BC_T_BOOL)
			return cc_const(c, BC_T_BOOL, (bc_imm){.i = iv != 0});
	}
	key = to.t | to.scale << 8 | to.prec << 16;
	for (int i = 0; i < c->nconvs; i++)
		if (c->convs[i].from == r && c->convs[i].to == key)
			return c->convs[i].reg;
	out = conv_raw(c, r, to);
	/* conversions that cannot fail do not depend on the error mask */
	if (out >= 0 && c->nconvs < BC_MAX_REGS &&
	    !bc_ops[c->p->insns[c->p->ninsns - 1].op].mask) {
		c->convs[c->nconvs].from = r;
		c->convs[c->nconvs].to = key;
		c->convs[c->nconvs++].reg = out;
	}
	return out;
}

static int conv_raw(cc *c, int r, etype to)
{
	bc_program *p = c->p;
	int from;

	if (r < 0)
		return -1;
	from = rtype_of(c, r);
	if (to.t == BC_T_NULL || to.t == ET_INTERVAL)
		return r;
	if (from == to.t) {
		if (from == BC_T_DEC && p->rtype[r].scale != to.scale)
			return bc_emit_to_dec(p, BC_D2D, r, 0, to.scale);
		return r;
	}
	if (from == BC_T_NULL)
		return bc_emit_null(p, to.t, to.scale);
	if (from == BC_T_BOOL && to.t != BC_T_TEXT && to.t != BC_T_INT)
		r = bc_emit_op(p, BC_B2I, r, -1, -1), from = BC_T_INT;
	switch (to.t) {
	case BC_T_TEXT:
		switch (from) {
		case BC_T_BOOL:
			r = bc_emit_op(p, BC_B2I, r, -1, -1);
			return bc_emit_op(p, BC_I2T, r, -1, -1);
		case BC_T_INT:
			return bc_emit_op(p, BC_I2T, r, -1, -1);
		case BC_T_REAL:
			return bc_emit_op(p, BC_R2T, r, -1, -1);
		case BC_T_DEC:
			return bc_emit_op(p, BC_D2T, r, -1, -1);
		case BC_T_DATE:
			return bc_emit_op(p, BC_DT2T, r, -1, -1);
		}
		break;
	case BC_T_INT:
		switch (from) {
		case BC_T_BOOL:
			return bc_emit_op(p, BC_B2I, r, -1, -1);
		case BC_T_REAL:
			return bc_emit_op(p, BC_R2I, r, -1, -1);
		case BC_T_DEC:
			return bc_emit_op(p, BC_D2I, r, -1, -1);
		case BC_T_TEXT:
			return bc_emit_op(p, BC_T2I, r, -1, -1);
		}
		break;
	case BC_T_REAL:
		switch (from) {
		case BC_T_INT:
			return bc_emit_op(p, BC_I2R, r, -1, -1);
		case BC_T_DEC:
			return bc_emit_op(p, BC_D2R, r, -1, -1);
		case BC_T_TEXT:
			return bc_emit_op(p, BC_T2R, r, -1, -1);
		}
		break;
	case BC_T_DEC:
		switch (from) {
		case BC_T_INT:
			return bc_emit_to_dec(p, BC_I2D, r, to.prec, to.scale);
		case BC_T_REAL:
			return bc_emit_to_dec(p, BC_R2D, r, to.prec, to.scale);
		case BC_T_TEXT:
			return bc_emit_to_dec(p, BC_T2D, r, to.prec, to.scale);
		}
		break;
	case BC_T_BOOL:
		switch (from) {
		case BC_T_INT:
			return bc_emit_op(p, BC_I2B, r, -1, -1);
		case BC_T_REAL:
			return bc_emit_op(p, BC_R2B, r, -1, -1);
		case BC_T_DEC:
			r = bc_emit_op(p, BC_D2R, r, -1, -1);
			return bc_emit_op(p, BC_R2B, r, -1, -1);
		case BC_T_TEXT:
			r = bc_emit_op(p, BC_T2R, r, -1, -1);
			return bc_emit_op(p, BC_R2B, r, -1, -1);
		}
		break;
	case BC_T_DATE:
		if (from == BC_T_TEXT)
			return bc_emit_op(p, BC_T2DT, r, -1, -1);
		break;
	}
	db_err(c->x->db, GPMDB_MISMATCH, "cannot convert %s to %s",
	       et_name(et_make(from)), et_name(to));
	return -1;
}

static int to_bool(cc *c, int r)
{
	return conv(c, r, et_make(BC_T_BOOL));
}

static int null_bool(cc *c)
{
	return bc_emit_null(c->p, BC_T_BOOL, 0);
}

/* v where neither a nor b is NULL, else NULL. */
static int const_nullprop(cc *c, int v, int a, int b)
{
	bc_program *p = c->p;
	int na = bc_emit_op(p, BC_IS_NULL, a, -1, -1);
	int nb = bc_emit_op(p, BC_IS_NULL, b, -1, -1);
	int any = bc_emit_op(p, BC_OR, na, nb, -1);
	return bc_emit_op(p, BC_SELECT, any, null_bool(c), bc_emit_bool(p, v));
}

static int cx(cc *c, ast_expr *e);

/* ---- comparisons ---- */

enum { K_EQ, K_NE, K_LT, K_LE, K_GT, K_GE, K_IS, K_ISNOT };

static int cmp_base(int t)
{
	switch (t) {
	case BC_T_INT:
		return BC_EQ_I;
	case BC_T_REAL:
		return BC_EQ_R;
	case BC_T_DEC:
		return BC_EQ_D;
	case BC_T_DATE:
		return BC_EQ_DT;
	case BC_T_TEXT:
		return BC_EQ_T;
	default:
		return BC_EQ_B;
	}
}

/* Result of "number k text" when a number meets text it cannot be
 * converted to: numbers are smaller. */
static int num_vs_text(int k, bool num_left)
{
	switch (k) {
	case K_EQ:
	case K_IS:
		return 0;
	case K_NE:
	case K_ISNOT:
		return 1;
	case K_LT:
	case K_LE:
		return num_left;
	default:
		return !num_left;
	}
}

/* Text literal as a number for a comparison with a numeric column:
 * -1 when it does not look like one. */
static int text_lit_num(cc *c, ast_expr *e)
{
	int isint;

	if (!val_text_is_numeric(e->str, (uint32_t)e->slen, &isint))
		return -2;
	if (isint) {
		int64_t v = val_text_to_i64(e->str, (uint32_t)e->slen);
		return cc_int(c, v);
	}
	return cc_real(c, val_text_to_real(e->str, (uint32_t)e->slen));
}

static int emit_cmp(cc *c, int k, ast_expr *le, int a, ast_expr *re, int b)
{
	bc_program *p = c->p;
	int ta, tb, affa, affb;

	if (a < 0 || b < 0)
		return -1;
	ta = rtype_of(c, a);
	tb = rtype_of(c, b);
	affa = le ? expr_type(le).aff : AFF_NONE;
	affb = re ? expr_type(re).aff : AFF_NONE;
	if (ta == BC_T_NULL || tb == BC_T_NULL) {
		if (k == K_IS || k == K_ISNOT) {
			if (ta == BC_T_NULL && tb == BC_T_NULL)
				return bc_emit_bool(p, k == K_IS);
			return bc_emit_op(p,
					  k == K_IS ? BC_IS_NULL : BC_NOT_NULL,
					  ta == BC_T_NULL ? b : a, -1, -1);
		}
		return null_bool(c);
	}
	if (et_numeric(ta) && et_numeric(tb)) {
		etype u;
		if (ta == BC_T_REAL || tb == BC_T_REAL) {
			u = et_make(BC_T_REAL);
		} else if (ta == BC_T_DEC || tb == BC_T_DEC) {
			u = et_make(BC_T_DEC);
			int sa = ta == BC_T_DEC ? p->rtype[a].scale : 0;
			int sb = tb == BC_T_DEC ? p->rtype[b].scale : 0;
			u.scale = (uint8_t)(sa > sb ? sa : sb);
		} else if (ta == BC_T_BOOL && tb == BC_T_BOOL) {
			u = et_make(BC_T_BOOL);
		} else {
			u = et_make(BC_T_INT);
		}
		a = conv(c, a, u);
		b = conv(c, b, u);
	} else if (ta == BC_T_TEXT && tb == BC_T_TEXT) {
		/* same type */
	} else if ((ta == BC_T_DATE || ta == BC_T_TEXT) &&
		   (tb == BC_T_DATE || tb == BC_T_TEXT)) {
		a = conv(c, a, et_make(BC_T_DATE));
		b = conv(c, b, et_make(BC_T_DATE));
	} else if (ta == BC_T_DATE || tb == BC_T_DATE) {
		db_err(c->x->db, GPMDB_MISMATCH, "cannot compare %s with %s",
		       et_name(et_make(ta)), et_name(et_make(tb)));
		return -1;
	} else {
		/* a number and a text */
		bool num_left = tb == BC_T_TEXT;
		int nr = num_left ? a : b, tr = num_left ? b : a;
		int naff = num_left ? affa : affb,
		    taff = num_left ? affb : affa;
		ast_expr *te = num_left ? re : le;

		if (naff == AFF_NUM && taff != AFF_NUM) {
			if (te && te->kind == AST_E_STRING) {
				int v = text_lit_num(c, te);
				if (v == -2)
					return const_nullprop(
					    c, num_vs_text(k, num_left), nr,
					    tr);
				tr = v;
			} else {
				tr = conv(c, tr, et_make(BC_T_REAL));
			}
			return emit_cmp(c, k, NULL, num_left ? nr : tr, NULL,
					num_left ? tr : nr);
		}
		if (taff == AFF_TEXT && naff == AFF_NONE) {
			nr = conv(c, nr, et_make(BC_T_TEXT));
			return emit_cmp(c, k, NULL, num_left ? nr : tr, NULL,
					num_left ? tr : nr);
		}
		if (k == K_IS || k == K_ISNOT)
			return bc_emit_bool(p, num_vs_text(k, num_left));
		return const_nullprop(c, num_vs_text(k, num_left), nr, tr);
	}
	if (a < 0 || b < 0)
		return -1;
	return bc_emit_op(p, cmp_base(rtype_of(c, a)) + k, a, b, -1);
}

static int cmp_kind(ast_op op)
{
	switch (op) {
	case AST_OP_EQ:
		return K_EQ;
	case AST_OP_NE:
		return K_NE;
	case AST_OP_LT:
		return K_LT;
	case AST_OP_LE:
		return K_LE;
	case AST_OP_GT:
		return K_GT;
	case AST_OP_GE:
		return K_GE;
	case AST_OP_IS:
		return K_IS;
	default:
		return K_ISNOT;
	}
}

/* ---- arithmetic ---- */

/*
 * Exact folding of literal arithmetic.  A literal with a decimal point is a
 * REAL (SQLite's rule), so `0.06 + 0.01` computed in binary is
 * 0.06999999999999999, and `l_discount <= 0.06 + 0.01` (TPC-H Q6) would
 * drop the DECIMAL rows equal to 0.07.  What the user wrote is decimal:
 * +, - and * of such literals (and integers) are computed exactly as
 * scaled integers and the result becomes the REAL nearest to the exact
 * value, which is what the literal 0.07 gives.
 */
typedef struct {
	int64_t v; /* value * 10^scale */
	int scale;
} cc_dec;

/* A REAL literal as the decimal the user most likely wrote: the shortest
 * text that reads back as the same double (at most 15 digits, so that the
 * value is what was typed), read exactly by val_dec_parse. */
static bool dec_of_real(double r, cc_dec *d)
{
	char buf[64];
	const char *dot;
	uint32_t end;
	int prec;

	for (prec = 1; prec <= 15; prec++) {
		snprintf(buf, sizeof(buf), "%.*g", prec, r);
		if (strtod(buf, NULL) == r)
			break;
	}
	if (prec > 15 || strpbrk(buf, "eEnNiI"))
		return false; /* exponent, nan, inf: not plain decimal text */
	dot = strchr(buf, '.');
	d->scale = dot ? (int)strlen(dot + 1) : 0;
	return d->scale <= 18 &&
	       val_dec_parse(buf, (uint32_t)strlen(buf), d->scale, &d->v,
			     &end) == VAL_OK &&
	       end == strlen(buf);
}

static bool dec_rescale(cc_dec *d, int scale)
{
	if (scale > 18 || scale < d->scale ||
	    val_dec_rescale(d->v, d->scale, scale, &d->v) != VAL_OK)
		return false;
	d->scale = scale;
	return true;
}

/* e as an exact decimal when it is made only of numeric literals, unary
 * minus, +, - and *, with at least one REAL literal somewhere (integer
 * arithmetic keeps its own rules). */
static bool exact_lit(const ast_expr *e, cc_dec *d, bool *has_real)
{
	cc_dec a, b;

	switch (e->kind) {
	case AST_E_INT:
		d->v = e->ival;
		d->scale = 0;
		return true;
	case AST_E_REAL:
		*has_real = true;
		return dec_of_real(e->rval, d);
	case AST_E_UNARY:
		if (e->op != AST_OP_NEG || !exact_lit(e->l, d, has_real) ||
		    d->v == INT64_MIN)
			return false;
		d->v = -d->v;
		return true;
	case AST_E_BINARY:
		if (e->op != AST_OP_ADD && e->op != AST_OP_SUB &&
		    e->op != AST_OP_MUL)
			return false;
		if (!exact_lit(e->l, &a, has_real) ||
		    !exact_lit(e->r, &b, has_real))
			return false;
		if (e->op == AST_OP_MUL) {
			if (a.scale + b.scale > 18 ||
			    val_i64_mul(a.v, b.v, &d->v) != VAL_OK)
				return false;
			d->scale = a.scale + b.scale;
			return true;
		}
		{
			int sc = a.scale > b.scale ? a.scale : b.scale;
			if (!dec_rescale(&a, sc) || !dec_rescale(&b, sc))
				return false;
			if (e->op == AST_OP_ADD
				? val_i64_add(a.v, b.v, &d->v) != VAL_OK
				: val_i64_sub(a.v, b.v, &d->v) != VAL_OK)
				return false;
			d->scale = sc;
		}
		return true;
	default:
		return false;
	}
}

/* The REAL nearest to an exact decimal (strtod rounds correctly). */
static double dec_to_real(const cc_dec *d)
{
	char buf[64];
	uint64_t u = d->v < 0 ? -(uint64_t)d->v : (uint64_t)d->v;

	snprintf(buf, sizeof(buf), "%s%llue-%d", d->v < 0 ? "-" : "",
		 (unsigned long long)u, d->scale);
	return strtod(buf, NULL);
}

static int arith(cc *c, ast_expr *e)
{
	bc_program *p = c->p;
	etype t = expr_type(e);
	ast_expr *le = e->l, *re = e->r;
	int a, b, op;
	cc_dec exact;
	bool has_real = false;

	if (t.t == BC_T_NULL)
		return bc_emit_null(p, BC_T_NULL, 0);
	if (t.t == BC_T_REAL && exact_lit(e, &exact, &has_real) && has_real)
		return cc_real(c, dec_to_real(&exact));
	if (t.t == BC_T_DATE ||
	    (t.t == BC_T_INT && expr_type(le).t == BC_T_DATE)) {
		/* date +/- days or interval, date - date */
		ast_expr *d = le, *n = re;
		if (expr_type(le).t != BC_T_DATE &&
		    expr_type(le).t != BC_T_TEXT)
			d = re, n = le;
		a = conv(c, cx(c, d), et_make(BC_T_DATE));
		if (t.t == BC_T_INT)
			return bc_emit_op(p, BC_DATE_DIFF, a,
					  conv(c, cx(c, n), et_make(BC_T_DATE)),
					  -1);
		op = BC_DATE_ADD_DAYS;
		if (d->kind == AST_E_DATE &&
		    (n->kind == AST_E_INTERVAL || n->kind == AST_E_INT)) {
			/* a literal date +/- a literal: once, not per row
			 * (TPC-H Q6's bound took a third of its time); out of
			 * range is left to the row-wise error below */
			int64_t k = e->op == AST_OP_SUB ? -n->ival : n->ival;
			int32_t r;
			int32_t d0 = (int32_t)d->ival;
			int u = n->kind == AST_E_INT ? AST_UNIT_DAY : n->unit;
			int vr =
			    u == AST_UNIT_MONTH ? val_date_add_months(d0, k, &r)
			    : u == AST_UNIT_YEAR ? val_date_add_years(d0, k, &r)
						 : val_date_add_days(d0, k, &r);
			if (vr == VAL_OK)
				return cc_const(c, BC_T_DATE, (bc_imm){.i = r});
		}
		if (n->kind == AST_E_INTERVAL) {
			b = bc_emit_int(p, n->ival);
			op = n->unit == AST_UNIT_MONTH	? BC_DATE_ADD_MONTHS
			     : n->unit == AST_UNIT_YEAR ? BC_DATE_ADD_YEARS
							: BC_DATE_ADD_DAYS;
		} else {
			b = conv(c, cx(c, n), et_make(BC_T_INT));
		}
		if (e->op == AST_OP_SUB)
			b = bc_emit_op(p, BC_NEG_I, b, -1, -1);
		return bc_emit_op(p, op, a, b, -1);
	}
	a = cx(c, le);
	b = cx(c, re);
	if (a < 0 || b < 0)
		return -1;
	if (t.t == BC_T_DEC) {
		etype da = et_make(BC_T_DEC), db = et_make(BC_T_DEC);
		if (rtype_of(c, a) == BC_T_DEC)
			da.scale = p->rtype[a].scale;
		if (rtype_of(c, b) == BC_T_DEC)
			db.scale = p->rtype[b].scale;
		a = conv(c, a, da);
		b = conv(c, b, db);
	} else {
		a = conv(c, a, t);
		b = conv(c, b, t);
	}
	if (a < 0 || b < 0)
		return -1;
	switch (e->op) {
	case AST_OP_ADD:
		op = BC_ADD_I;
		break;
	case AST_OP_SUB:
		op = BC_SUB_I;
		break;
	case AST_OP_MUL:
		op = BC_MUL_I;
		break;
	case AST_OP_DIV:
		op = BC_DIV_I;
		break;
	default:
		op = BC_MOD_I;
	}
	/* the families are laid out I (ADD SUB MUL DIV MOD), R, D */
	if (t.t == BC_T_REAL)
		op = op - BC_ADD_I + BC_ADD_R;
	else if (t.t == BC_T_DEC)
		op = op - BC_ADD_I + BC_ADD_D;
	return bc_emit_op(p, op, a, b, -1);
}

/* ---- CASE ---- */

/* Mask for a branch taken where `taken` (BOOL, never NULL) is set. */
static int push_mask(cc *c, int taken)
{
	int m = taken;

	if (c->mask >= 0)
		m = bc_emit_op(c->p, BC_AND, c->mask, taken, -1);
	bc_set_mask(c->p, m);
	return m;
}

static int compile_case(cc *c, ast_expr *e)
{
	bc_program *p = c->p;
	etype t = expr_type(e);
	int n = e->list->n / 2, base = -1, prior = -1, saved = c->mask;
	int conds[512], vals[512], r;

	if (n > 512)
		return db_err(c->x->db, GPMDB_ERROR, "CASE too large"), -1;
	if (e->l)
		base = cx(c, e->l);
	for (int i = 0; i < n; i++) {
		ast_expr *w = e->list->v[2 * i], *th = e->list->v[2 * i + 1];
		int cond, taken, notprior;

		if (prior >= 0) {
			notprior = bc_emit_op(p, BC_NOT, prior, -1, -1);
			c->mask = push_mask(c, notprior);
		}
		if (e->l)
			cond = emit_cmp(c, K_EQ, e->l, base, w, cx(c, w));
		else
			cond = to_bool(c, cx(c, w));
		cond = bc_emit_op(p, BC_IS_TRUE, cond, -1, -1);
		taken = prior >= 0 ? bc_emit_op(p, BC_AND, cond, notprior, -1)
				   : cond;
		c->mask = saved;
		bc_set_mask(p, saved);
		c->mask = push_mask(c, taken);
		vals[i] = conv(c, cx(c, th), t);
		conds[i] = cond;
		c->mask = saved;
		bc_set_mask(p, saved);
		prior =
		    prior < 0 ? cond : bc_emit_op(p, BC_OR, prior, cond, -1);
		if (prior < 0)
			return -1;
	}
	if (e->r) {
		int nm = bc_emit_op(p, BC_NOT, prior, -1, -1);
		c->mask = push_mask(c, nm);
		r = conv(c, cx(c, e->r), t);
		c->mask = saved;
		bc_set_mask(p, saved);
	} else {
		r = bc_emit_null(p, t.t, t.scale);
	}
	for (int i = n - 1; i >= 0 && r >= 0; i--)
		r = bc_emit_op(p, BC_SELECT, conds[i], vals[i], r);
	return r;
}

/* ---- functions ---- */

static int arg(cc *c, ast_expr *e, int i, etype t)
{
	return conv(c, cx(c, e->list->v[i]), t);
}

/*
 * char(N, ...): the UTF-8 text of code points N...  Only integer literals
 * (what .dump writes: char(10), char(13)) for now, folded into a constant;
 * a computed code point needs a bytecode op, which the VMs lack yet.
 */
static int char_func(cc *c, ast_expr *e)
{
	int n = e->list ? e->list->n : 0;
	char buf[4 * 100];
	uint32_t len = 0;

	for (int i = 0; i < n; i++) {
		ast_expr *a = e->list->v[i];
		int64_t cp;
		if (a->kind != AST_E_INT) {
			db_err(c->x->db, GPMDB_UNSUPPORTED,
			       "char() of anything but integer literals is "
			       "not supported yet");
			return -1;
		}
		/* as SQLite: out-of-range code points become U+FFFD */
		cp = a->ival < 0 || a->ival > 0x10ffff ? 0xfffd : a->ival;
		if (cp < 0x80) {
			buf[len++] = (char)cp;
		} else if (cp < 0x800) {
			buf[len++] = (char)(0xc0 | (cp >> 6));
			buf[len++] = (char)(0x80 | (cp & 0x3f));
		} else if (cp < 0x10000) {
			buf[len++] = (char)(0xe0 | (cp >> 12));
			buf[len++] = (char)(0x80 | ((cp >> 6) & 0x3f));
			buf[len++] = (char)(0x80 | (cp & 0x3f));
		} else {
			buf[len++] = (char)(0xf0 | (cp >> 18));
			buf[len++] = (char)(0x80 | ((cp >> 12) & 0x3f));
			buf[len++] = (char)(0x80 | ((cp >> 6) & 0x3f));
			buf[len++] = (char)(0x80 | (cp & 0x3f));
		}
	}
	return bc_emit_text(c->p, buf, len);
}

static int compile_func(cc *c, ast_expr *e)
{
	bc_program *p = c->p;
	etype t = expr_type(e);
	const char *nm = e->name;
	int n = e->list ? e->list->n : 0, a, b, r;
	etype T = et_make(BC_T_TEXT), I = et_make(BC_T_INT);

	if (expr_is_agg_call(e, NULL))
		return db_err(c->x->db, GPMDB_ERROR,
			      "misuse of aggregate: %s()", nm),
		       -1;
	if (t.t == BC_T_NULL && strcasecmp(nm, "typeof"))
		return bc_emit_null(p, BC_T_NULL, 0);
	if (!strcasecmp(nm, "abs")) {
		a = arg(c, e, 0, t);
		return bc_emit_op(p,
				  t.t == BC_T_INT   ? BC_ABS_I
				  : t.t == BC_T_DEC ? BC_ABS_D
						    : BC_ABS_R,
				  a, -1, -1);
	}
	if (!strcasecmp(nm, "round")) {
		a = arg(c, e, 0, t);
		b = n > 1 ? arg(c, e, 1, I) : -1;
		return bc_emit_op(p, t.t == BC_T_DEC ? BC_ROUND_D : BC_ROUND_R,
				  a, b, -1);
	}
	if (!strcasecmp(nm, "length"))
		return bc_emit_op(p, BC_LENGTH, arg(c, e, 0, T), -1, -1);
	if (!strcasecmp(nm, "substr") || !strcasecmp(nm, "substring")) {
		a = arg(c, e, 0, T);
		b = arg(c, e, 1, I);
		return bc_emit_op(p, BC_SUBSTR, a, b,
				  n > 2 ? arg(c, e, 2, I) : -1);
	}
	if (!strcasecmp(nm, "upper"))
		return bc_emit_op(p, BC_UPPER, arg(c, e, 0, T), -1, -1);
	if (!strcasecmp(nm, "lower"))
		return bc_emit_op(p, BC_LOWER, arg(c, e, 0, T), -1, -1);
	if (!strcasecmp(nm, "trim") || !strcasecmp(nm, "ltrim") ||
	    !strcasecmp(nm, "rtrim")) {
		int op = !strcasecmp(nm, "trim")    ? BC_TRIM
			 : !strcasecmp(nm, "ltrim") ? BC_LTRIM
						    : BC_RTRIM;
		a = arg(c, e, 0, T);
		return bc_emit_op(p, op, a, n > 1 ? arg(c, e, 1, T) : -1, -1);
	}
	if (!strcasecmp(nm, "replace")) {
		a = arg(c, e, 0, T);
		b = arg(c, e, 1, T);
		return bc_emit_op(p, BC_REPLACE, a, b, arg(c, e, 2, T));
	}
	if (!strcasecmp(nm, "instr")) {
		a = arg(c, e, 0, T);
		return bc_emit_op(p, BC_INSTR, a, arg(c, e, 1, T), -1);
	}
	if (!strcasecmp(nm, "coalesce") || !strcasecmp(nm, "ifnull")) {
		r = arg(c, e, n - 1, t);
		for (int i = n - 2; i >= 0 && r >= 0; i--)
			r = bc_emit_op(p, BC_COALESCE, arg(c, e, i, t), r, -1);
		return r;
	}
	if (!strcasecmp(nm, "nullif")) {
		etype u = et_unify(expr_type(e->list->v[0]),
				   expr_type(e->list->v[1]));
		a = arg(c, e, 0, u);
		b = arg(c, e, 1, u);
		if (u.t == BC_T_NULL)
			return a;
		r = bc_emit_op(p, cmp_base(u.t) + 8, a, b, -1);
		return conv(c, r, t);
	}
	if (!strcasecmp(nm, "typeof")) {
		etype at = expr_type(e->list->v[0]);
		const char *tn =
		    at.t == BC_T_INT || at.t == BC_T_BOOL   ? "integer"
		    : at.t == BC_T_REAL || at.t == BC_T_DEC ? "real"
		    : at.t == BC_T_NULL			    ? "null"
							    : "text";
		a = cx(c, e->list->v[0]);
		if (a < 0)
			return -1;
		b = bc_emit_op(p, BC_IS_NULL, a, -1, -1);
		return bc_emit_op(p, BC_SELECT, b, bc_emit_text(p, "null", 4),
				  bc_emit_text(p, tn, (uint32_t)strlen(tn)));
	}
	if (!strcasecmp(nm, "char"))
		return char_func(c, e);
	if (!strcasecmp(nm, "min") || !strcasecmp(nm, "max")) {
		int k = !strcasecmp(nm, "min") ? K_LT : K_GT, anynull;
		r = arg(c, e, 0, t);
		anynull = bc_emit_op(p, BC_IS_NULL, r, -1, -1);
		for (int i = 1; i < n && r >= 0; i++) {
			a = arg(c, e, i, t);
			b = emit_cmp(c, k, NULL, a, NULL, r);
			r = bc_emit_op(p, BC_SELECT, b, a, r);
			anynull = bc_emit_op(
			    p, BC_OR, anynull,
			    bc_emit_op(p, BC_IS_NULL, a, -1, -1), -1);
		}
		return bc_emit_op(p, BC_SELECT, anynull,
				  bc_emit_null(p, t.t, t.scale), r);
	}
	db_err(c->x->db, GPMDB_ERROR, "no such function: %s", nm);
	return -1;
}

/* ---- expressions ---- */

static int column_ref(cc *c, ast_expr *e)
{
	etype t = expr_type(e);

	if (e->rel > 0)
		return add_input(c, IN_OUTER, e->col, e->rel, NULL, t);
	for (int k = 0; k < c->node->ncols; k++)
		if (c->node->g[k] == e->col)
			return add_input(c, IN_COL, k, 0, NULL, c->node->ty[k]);
	db_err(c->x->db, GPMDB_INTERNAL,
	       "column %s is not available here (not grouped?)", e->name);
	return -1;
}

static int param(cc *c, ast_expr *e)
{
	gpmdb_stmt *st = c->x->st;
	sval *v;

	if (!st || e->ival < 1 || e->ival > st->nparams)
		return bc_emit_null(c->p, BC_T_NULL, 0);
	v = &st->params[e->ival - 1];
	switch (v->t) {
	case BC_T_INT:
		return bc_emit_int(c->p, v->u.i);
	case BC_T_REAL:
		return bc_emit_real(c->p, v->u.r);
	case BC_T_TEXT:
		return bc_emit_text(c->p, v->u.s.ptr, v->u.s.len);
	}
	return bc_emit_null(c->p, BC_T_NULL, 0);
}

static int in_list(cc *c, ast_expr *e)
{
	bc_program *p = c->p;
	ast_expr_list *l = e->list;
	int a, acc = -1;

	if (!l || l->n == 0)
		return bc_emit_bool(p, e->negated);
	a = cx(c, e->l);
	if (a < 0)
		return -1;
	/* long lists of plain constants: one set lookup */
	if (l->n > 4 &&
	    (rtype_of(c, a) == BC_T_INT || rtype_of(c, a) == BC_T_TEXT)) {
		bool ok = true, has_null = false;
		ast_expr_kind want =
		    rtype_of(c, a) == BC_T_INT ? AST_E_INT : AST_E_STRING;
		for (int i = 0; i < l->n; i++) {
			if (l->v[i]->kind == AST_E_NULL)
				has_null = true;
			else if (l->v[i]->kind != want)
				ok = false;
		}
		if (ok && l->n <= BC_MAX_CONSTS) {
			int nv = 0;
			if (want == AST_E_INT) {
				int64_t v[BC_MAX_CONSTS];
				for (int i = 0; i < l->n; i++)
					if (l->v[i]->kind == AST_E_INT)
						v[nv++] = l->v[i]->ival;
				acc = bc_emit_in_int(p, a, v, nv, has_null);
			} else {
				const char *s[BC_MAX_CONSTS];
				uint32_t len[BC_MAX_CONSTS];
				for (int i = 0; i < l->n; i++)
					if (l->v[i]->kind == AST_E_STRING) {
						s[nv] = l->v[i]->str;
						len[nv++] =
						    (uint32_t)l->v[i]->slen;
					}
				acc =
				    bc_emit_in_text(p, a, s, len, nv, has_null);
			}
			goto done;
		}
	}
	for (int i = 0; i < l->n && (i == 0 || acc >= 0); i++) {
		int eq = emit_cmp(c, K_EQ, e->l, a, l->v[i], cx(c, l->v[i]));
		acc = i == 0 ? eq : bc_emit_op(p, BC_OR, acc, eq, -1);
	}
done:
	if (e->negated && acc >= 0)
		acc = bc_emit_op(p, BC_NOT, acc, -1, -1);
	return acc;
}

static int cx_inner(cc *c, ast_expr *e)
{
	bc_program *p = c->p;
	einfo *in = e->bind;
	int a, b, r;

	if (c->post && in && in->post_col >= 0)
		return add_input(c, IN_COL, in->post_col, 0, NULL,
				 c->node->ty[in->post_col]);
	switch (e->kind) {
	case AST_E_INT:
		return cc_int(c, e->ival);
	case AST_E_REAL:
		return cc_real(c, e->rval);
	case AST_E_STRING:
		return bc_emit_text(p, e->str, (uint32_t)e->slen);
	case AST_E_NULL:
		return bc_emit_null(p, BC_T_NULL, 0);
	case AST_E_BOOL:
		return bc_emit_bool(p, (int)e->ival);
	case AST_E_DATE:
		return cc_const(c, BC_T_DATE, (bc_imm){.i = e->ival});
	case AST_E_INTERVAL:
		db_err(c->x->db, GPMDB_ERROR, "an INTERVAL is not a value");
		return -1;
	case AST_E_PARAM:
		return param(c, e);
	case AST_E_COLUMN:
		return column_ref(c, e);
	case AST_E_UNARY:
		a = cx(c, e->l);
		switch (e->op) {
		case AST_OP_NOT:
			return bc_emit_op(p, BC_NOT, to_bool(c, a), -1, -1);
		case AST_OP_PLUS:
			return a;
		default: {
			etype t = expr_type(e);
			if (t.t == BC_T_NULL)
				return bc_emit_null(p, BC_T_NULL, 0);
			a = conv(c, a, t);
			return bc_emit_op(p,
					  t.t == BC_T_INT   ? BC_NEG_I
					  : t.t == BC_T_DEC ? BC_NEG_D
							    : BC_NEG_R,
					  a, -1, -1);
		}
		}
	case AST_E_BINARY:
		switch (e->op) {
		case AST_OP_ADD:
		case AST_OP_SUB:
		case AST_OP_MUL:
		case AST_OP_DIV:
		case AST_OP_MOD:
			return arith(c, e);
		case AST_OP_AND:
		case AST_OP_OR:
			a = to_bool(c, cx(c, e->l));
			b = to_bool(c, cx(c, e->r));
			return bc_emit_op(
			    p, e->op == AST_OP_AND ? BC_AND : BC_OR, a, b, -1);
		case AST_OP_CONCAT:
			a = conv(c, cx(c, e->l), et_make(BC_T_TEXT));
			b = conv(c, cx(c, e->r), et_make(BC_T_TEXT));
			return bc_emit_op(p, BC_CONCAT, a, b, -1);
		default:
			a = cx(c, e->l);
			b = cx(c, e->r);
			return emit_cmp(c, cmp_kind(e->op), e->l, a, e->r, b);
		}
	case AST_E_ISNULL:
		a = cx(c, e->l);
		return bc_emit_op(p, e->negated ? BC_NOT_NULL : BC_IS_NULL, a,
				  -1, -1);
	case AST_E_BETWEEN:
		a = cx(c, e->l);
		b = emit_cmp(c, K_GE, e->l, a, e->r, cx(c, e->r));
		r = emit_cmp(c, K_LE, e->l, a, e->x, cx(c, e->x));
		r = bc_emit_op(p, BC_AND, b, r, -1);
		return e->negated ? bc_emit_op(p, BC_NOT, r, -1, -1) : r;
	case AST_E_LIKE:
		a = conv(c, cx(c, e->l), et_make(BC_T_TEXT));
		b = conv(c, cx(c, e->r), et_make(BC_T_TEXT));
		if (e->op == AST_OP_GLOB) {
			r = bc_emit_op(p, BC_GLOB, a, b, -1);
		} else {
			int x = e->x ? conv(c, cx(c, e->x), et_make(BC_T_TEXT))
				     : -1;
			r = bc_emit_op(p, BC_LIKE, a, b, x);
		}
		return e->negated ? bc_emit_op(p, BC_NOT, r, -1, -1) : r;
	case AST_E_IN_LIST:
		return in_list(c, e);
	case AST_E_IN_SELECT:
	case AST_E_EXISTS:
	case AST_E_SUBQUERY: {
		etype t = expr_type(e);
		int k;
		if (t.t == BC_T_NULL)
			return bc_emit_null(p, BC_T_NULL, 0);
		r = add_input(c, IN_SUBQ, 0, 0, e, t);
		if (r < 0)
			return -1;
		k = (int)p->ninputs - 1;
		if (e->kind == AST_E_IN_SELECT) {
			int rc = cx_compile(c->x, e->l, c->node, c->post,
					    &c->c->in[k].lhs);
			if (rc)
				return -1;
			if (e->negated)
				r = bc_emit_op(p, BC_NOT, r, -1, -1);
		} else if (e->kind == AST_E_EXISTS && e->negated) {
			r = bc_emit_op(p, BC_NOT, r, -1, -1);
		}
		return r;
	}
	case AST_E_CASE:
		return compile_case(c, e);
	case AST_E_CAST: {
		etype t = expr_type(e);
		a = cx(c, e->l);
		if (t.t == BC_T_NULL)
			return a;
		if (t.t == BC_T_DEC && a >= 0 && rtype_of(c, a) == BC_T_DEC)
			return bc_emit_to_dec(p, BC_D2D, a, t.prec, t.scale);
		return conv(c, a, t);
	}
	case AST_E_FUNC:
		return compile_func(c, e);
	case AST_E_EXTRACT:
		a = conv(c, cx(c, e->l), et_make(BC_T_DATE));
		return bc_emit_op(p,
				  e->unit == AST_UNIT_YEAR    ? BC_EXTRACT_YEAR
				  : e->unit == AST_UNIT_MONTH ? BC_EXTRACT_MONTH
							      : BC_EXTRACT_DAY,
				  a, -1, -1);
	case AST_E_COLLATE:
		return cx(c, e->l);
	case AST_E_STAR:
		break;
	}
	db_err(c->x->db, GPMDB_INTERNAL, "cannot compile expression kind %d",
	       e->kind);
	return -1;
}

/* Nodes of an expression, counting at most to lim. */
static int expr_size(const ast_expr *e, int lim)
{
	int n = 1;

	if (!e)
		return 0;
	n += expr_size(e->l, lim);
	if (n < lim)
		n += expr_size(e->r, lim);
	if (n < lim)
		n += expr_size(e->x, lim);
	if (e->list)
		for (int i = 0; i < e->list->n && n < lim; i++)
			n += expr_size(e->list->v[i], lim);
	return n;
}

/* A large operand becomes a program of its own whose result is an input
 * of this one: programs have at most BC_MAX_REGS registers and the
 * builder does not reuse them. */
static int cx_split(cc *c, ast_expr *e)
{
	cexpr *sub;
	etype t;
	int k, rc;

	if ((rc = cx_compile(c->x, e, c->node, c->post, &sub)))
		return -1;
	t = sub->ty;
	if (t.t == BC_T_NULL) {
		cx_free(sub);
		return bc_emit_null(c->p, BC_T_NULL, 0);
	}
	k = bc_input(c->p, coltype_of(t.t), t.prec, t.scale);
	if (k < 0) {
		cx_free(sub);
		return -1;
	}
	c->c->in[k] = (cinput){IN_EXPR, -1, 0, e, sub, NULL, NULL, t};
	c->c->ninputs = k + 1;
	return c->inreg[k] = bc_emit_load(c->p, k);
}

static int cx(cc *c, ast_expr *e)
{
	int r;

	if (c->p->err || c->x->db->errcode)
		return -1;
	if (c->mask < 0 && c->p->nregs > 0 &&
	    !(c->post && e->bind && ((einfo *)e->bind)->post_col >= 0) &&
	    (c->p->nregs > BC_MAX_REGS / 2 ||
	     c->p->ninsns > BC_MAX_INSNS / 2) &&
	    expr_size(e, 8) >= 8 && c->c->ninputs < BC_MAX_INPUTS - 8)
		r = cx_split(c, e);
	else
		r = cx_inner(c, e);
	if (r < 0)
		return -1;
	/* keep the register in the bound type (CASE, unions of types) */
	etype t = expr_type(e);
	if (t.t != BC_T_NULL && t.t != ET_INTERVAL && t.t != rtype_of(c, r) &&
	    !(c->post && e->bind && ((einfo *)e->bind)->post_col >= 0))
		r = conv(c, r, t);
	return r;
}

int cx_compile(exec_ctx *x, ast_expr *e, const pnode *node, bool post,
	       cexpr **out)
{
	cexpr *ce = calloc(1, sizeof(*ce));
	cc *c;
	int r;

	*out = NULL;
	if (!ce || !(ce->prog = malloc(sizeof(bc_program)))) {
		free(ce);
		return db_err(x->db, GPMDB_NOMEM, "out of memory");
	}
	bc_init(ce->prog);
	vm_scratch_init(&ce->scratch);
	ce->node = node;
	ce->post = post;
	c = calloc(1, sizeof(*c));
	if (!c) {
		cx_free(ce);
		return db_err(x->db, GPMDB_NOMEM, "out of memory");
	}
	*c = (cc){x, ce->prog, ce, node, post, -1, {0}, {{0}}, 0, {{0}}, 0};
	r = cx(c, e);
	if (r >= 0)
		r = bc_emit_output(c->p, r);
	if (r < 0) {
		int rc = cc_fail(c);
		free(c);
		cx_free(ce);
		return rc;
	}
	ce->ty = et_make(rtype_of(c, c->p->out_reg[0]));
	ce->ty.scale = c->p->rtype[c->p->out_reg[0]].scale;
	free(c);
	*out = ce;
	return GPMDB_OK;
}

void cx_free(cexpr *c)
{
	if (!c)
		return;
	vm_scratch_free(&c->scratch);
	for (int k = 0; k < c->ninputs; k++) {
		cx_free(c->in[k].lhs);
		if (c->in[k].hold)
			c->in[k].hold->x = NULL;
		rel_free(c->in[k].hold);
		if (c->in[k].lhold)
			c->in[k].lhold->x = NULL;
		rel_free(c->in[k].lhold);
	}
	free(c->prog);
	free(c);
}

/* ---- evaluation ---- */

static int frame_vec(exec_ctx *x, cinput *ci, vec *v)
{
	frame *f;
	int k;

	if (ci->level > x->nframes)
		return db_err(x->db, GPMDB_INTERNAL,
			      "correlated reference without an outer row");
	f = &x->frames[x->nframes - ci->level];
	for (k = 0; k < f->node->ncols; k++)
		if (f->node->g[k] == ci->col)
			break;
	if (k == f->node->ncols)
		return db_err(x->db, GPMDB_UNSUPPORTED,
			      "this correlated reference is not supported "
			      "yet");
	rel_vec(f->r, k, f->row, v);
	v->sel = zero_sel;
	return GPMDB_OK;
}

/* Copies a program's output into a one-column relation of its own, so
 * that the VM scratch it lives in can be reused. */
static int keep_vec(exec_ctx *x, rel **hold, etype t, const vec *v, uint32_t n)
{
	int rc;

	if (!*hold && !(*hold = rel_new(x, 1, &t)))
		return x->db->errcode;
	(*hold)->nrows = 0;
	vec_arena_reset(&(*hold)->strs);
	if ((rc = rel_reserve(*hold, n)) ||
	    (rc = rel_put_vec(*hold, 0, 0, v, n)))
		return rc;
	(*hold)->nrows = n;
	return GPMDB_OK;
}

/* The values of subquery input ci of c for rows [start, start+n) of in,
 * into ci->hold (exec_subquery runs an uncorrelated one once per
 * statement). */
static int eval_subq(exec_ctx *x, cexpr *c, cinput *ci, const rel *in,
		     uint64_t start, uint32_t n)
{
	vec v, lhs, *lp = NULL;
	int rc;

	if (ci->lhs) {
		if ((rc = cx_eval(x, ci->lhs, in, start, n, &v)) ||
		    (rc = keep_vec(x, &ci->lhold, ci->lhs->ty, &v, n)))
			return rc;
		rel_vec(ci->lhold, 0, 0, &lhs);
		lp = &lhs;
	}
	if (x->nframes >= MAX_FRAMES)
		return db_err(x->db, GPMDB_ERROR, "subqueries nested too deep");
	x->frames[x->nframes] = (frame){c->node, in, start, c->post};
	if (!ci->hold && !(ci->hold = rel_new(x, 1, &ci->ty)))
		return x->db->errcode;
	return exec_subquery(x, ci->e, lp, n, ci->hold);
}

static int eval_inputs(exec_ctx *x, cexpr *c, const rel *in, uint64_t start,
		       uint32_t n, vec *inputs)
{
	int rc;

	for (int k = 0; k < c->ninputs; k++) {
		cinput *ci = &c->in[k];
		vec v;
		switch (ci->kind) {
		case IN_COL:
			rel_vec(in, ci->col, start, &inputs[k]);
			break;
		case IN_OUTER:
			if ((rc = frame_vec(x, ci, &inputs[k])))
				return rc;
			break;
		case IN_EXPR:
			if ((rc = cx_eval(x, ci->lhs, in, start, n, &v)) ||
			    (rc = keep_vec(x, &ci->hold, ci->ty, &v, n)))
				return rc;
			rel_vec(ci->hold, 0, 0, &inputs[k]);
			break;
		case IN_SUBQ:
			if ((rc = eval_subq(x, c, ci, in, start, n)))
				return rc;
			rel_vec(ci->hold, 0, 0, &inputs[k]);
			break;
		}
	}
	return GPMDB_OK;
}

bool cx_input_const(const cexpr *c, int k)
{
	const cinput *ci = &c->in[k];
	const einfo *ei;

	if (ci->kind != IN_SUBQ || ci->lhs || !ci->e)
		return false;
	ei = ci->e->bind;
	return ei && !ei->correlated &&
	       (ci->e->kind == AST_E_SUBQUERY || ci->e->kind == AST_E_EXISTS);
}

int cx_input_value(exec_ctx *x, cexpr *c, int k, sval *v)
{
	cinput *ci = &c->in[k];
	int rc;

	if (!cx_input_const(c, k))
		return db_err(x->db, GPMDB_INTERNAL,
			      "input %d is not one value per statement", k);
	/* an uncorrelated subquery reads no frame: no input rows needed */
	if ((rc = eval_subq(x, c, ci, NULL, 0, 1)))
		return rc;
	rel_get(ci->hold, 0, 0, v);
	return GPMDB_OK;
}

bool cx_pure(const cexpr *c)
{
	for (int k = 0; k < c->ninputs; k++)
		if (c->in[k].kind != IN_COL)
			return false;
	return true;
}

int cx_eval_pure(const cexpr *c, const rel *in, uint64_t start, uint32_t n,
		 vec *out, vm_scratch *s, char *err, size_t errlen)
{
	vec inputs[BC_MAX_INPUTS];

	for (int k = 0; k < c->ninputs; k++)
		rel_vec(in, c->in[k].col, start, &inputs[k]);
	err[0] = 0;
	return vm_run(c->prog, inputs, c->ninputs, n, out, s, err, errlen);
}

int cx_eval_pure_sel(const cexpr *c, const rel *in, const uint32_t *sel,
		     uint32_t n, vec *out, vm_scratch *s, char *err,
		     size_t errlen)
{
	vec inputs[BC_MAX_INPUTS];

	for (int k = 0; k < c->ninputs; k++) {
		rel_vec(in, c->in[k].col, 0, &inputs[k]);
		inputs[k].sel = sel;
	}
	err[0] = 0;
	return vm_run(c->prog, inputs, c->ninputs, n, out, s, err, errlen);
}

int cx_eval(exec_ctx *x, cexpr *c, const rel *in, uint64_t start, uint32_t n,
	    vec *out)
{
	vec inputs[BC_MAX_INPUTS];
	char err[256];
	int d = x->depth, rc;

	if (d >= 64)
		return db_err(x->db, GPMDB_ERROR,
			      "expressions nested too deep");
	/* one batch of work: the place where Ctrl-C and progress are seen */
	if ((rc = db_check_interrupt(x->db)))
		return rc;
	while (x->db->nscratch <= d)
		vm_scratch_init(&x->db->scratch[x->db->nscratch++]);
	x->depth++;
	rc = eval_inputs(x, c, in, start, n, inputs);
	x->depth--;
	if (rc)
		return rc;
	rc = vm_run(c->prog, inputs, c->ninputs, n, out, &x->db->scratch[d],
		    err, sizeof(err));
	if (rc)
		return db_err(x->db, rc == GPMDB_MISUSE ? GPMDB_INTERNAL : rc,
			      "%s", err[0] ? err : "expression failed");
	return GPMDB_OK;
}
