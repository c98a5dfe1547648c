/*
 * bytecode.c - op metadata, the program builder, the checker and the
 * disassembler (see bytecode.h).
 */
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bytecode.h"
#include "gpmdb.h"

#define BC_INFO_(name, r, a, b, c, imm, fl) {#name, r, a, b, c, imm, fl},
const bc_opinfo bc_ops[BC_NOPS] = {BC_OPS(BC_INFO_)};
#undef BC_INFO_

static const char *const bc_type_names[BC_T_COUNT] = {
    "NULL", "BOOL", "INT", "REAL", "DEC", "DATE", "TEXT"};

const char *bc_type_name(int t)
{
	return t >= 0 && t < BC_T_COUNT ? bc_type_names[t] : "?";
}

/* The register type an operand code stands for (-1: not a type). */
static int bc_code_type(char c)
{
	switch (c) {
	case 'B':
		return BC_T_BOOL;
	case 'I':
	case 'i':
		return BC_T_INT;
	case 'R':
		return BC_T_REAL;
	case 'D':
		return BC_T_DEC;
	case 'A':
		return BC_T_DATE;
	case 'T':
	case 't':
		return BC_T_TEXT;
	}
	return -1;
}

static int bc_fail(bc_program *p, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static int bc_fail(bc_program *p, const char *fmt, ...)
{
	va_list ap;

	if (!p->err) {
		va_start(ap, fmt);
		vsnprintf(p->errmsg, sizeof(p->errmsg), fmt, ap);
		va_end(ap);
	}
	p->err = 1;
	return -1;
}

void bc_init(bc_program *p)
{
	static _Atomic uint64_t next_id;

	memset(p, 0, sizeof(*p));
	p->id = atomic_fetch_add(&next_id, 1) + 1;
}

int bc_input(bc_program *p, int coltype, int prec, int scale)
{
	if (p->err)
		return -1;
	if (p->ninputs >= BC_MAX_INPUTS)
		return bc_fail(p, "too many input columns");
	if (coltype < BC_COL_INT32 || coltype > BC_COL_TEXT)
		return bc_fail(p, "bad input column type %d", coltype);
	p->in_type[p->ninputs] =
	    (bc_rtype){(uint8_t)coltype, (uint8_t)scale, (uint8_t)prec, 0};
	return (int)p->ninputs++;
}

int bc_new_reg(bc_program *p, int type, int prec, int scale)
{
	if (p->err)
		return -1;
	if (p->nregs >= BC_MAX_REGS)
		return bc_fail(p, "expression too complex (registers)");
	if (scale < 0 || scale > 18 || prec < 0 || prec > 18)
		return bc_fail(p, "bad DECIMAL(%d,%d)", prec, scale);
	p->rtype[p->nregs] =
	    (bc_rtype){(uint8_t)type, (uint8_t)scale, (uint8_t)prec, 0};
	return (int)p->nregs++;
}

int bc_emit_raw(bc_program *p, int op, int dst, int a, int b, int c, bc_imm imm)
{
	bc_insn *in;

	if (p->err)
		return -1;
	if (p->ninsns >= BC_MAX_INSNS)
		return bc_fail(p, "expression too complex (instructions)");
	if (op < 0 || op >= BC_NOPS)
		return bc_fail(p, "bad op %d", op);
	in = &p->insns[p->ninsns];
	memset(in, 0, sizeof(*in));
	in->op = (uint16_t)op;
	in->dst = (uint16_t)(dst < 0 ? 0 : dst);
	in->a = (uint16_t)(a < 0 ? 0 : a);
	in->b = (uint16_t)(b < 0 ? 0 : b);
	in->c = (uint16_t)(c < 0 ? 0 : c);
	in->imm = imm;
	if (bc_ops[op].mask)
		in->m = p->cur_mask;
	return (int)p->ninsns++;
}

int bc_set_mask(bc_program *p, int reg)
{
	int old = (int)p->cur_mask - 1;

	p->cur_mask = (uint16_t)(reg < 0 ? 0 : reg + 1);
	return old;
}

static int bc_emit_const(bc_program *p, int type, int prec, int scale,
			 bc_imm imm)
{
	int r = bc_new_reg(p, type, prec, scale);

	if (r < 0 || bc_emit_raw(p, BC_CONST, r, 0, 0, 0, imm) < 0)
		return -1;
	return r;
}

int bc_emit_int(bc_program *p, int64_t v)
{
	return bc_emit_const(p, BC_T_INT, 0, 0, (bc_imm){.i = v});
}

int bc_emit_real(bc_program *p, double v)
{
	return bc_emit_const(p, BC_T_REAL, 0, 0, (bc_imm){.r = v});
}

int bc_emit_bool(bc_program *p, int v)
{
	return bc_emit_const(p, BC_T_BOOL, 0, 0, (bc_imm){.i = v != 0});
}

int bc_emit_date(bc_program *p, int32_t days)
{
	return bc_emit_const(p, BC_T_DATE, 0, 0, (bc_imm){.i = days});
}

int bc_emit_dec(bc_program *p, int64_t v, int prec, int scale)
{
	return bc_emit_const(p, BC_T_DEC, prec, scale, (bc_imm){.i = v});
}

/* Adds a text constant to the pool; returns its number. */
static int bc_add_text(bc_program *p, const char *s, uint32_t len)
{
	if (p->err)
		return -1;
	if (p->nstrs >= BC_MAX_STRS || len > BC_MAX_TEXT - p->ntext)
		return bc_fail(p, "expression too complex (text constants)");
	if (len)
		memcpy(p->text + p->ntext, s, len);
	p->str_off[p->nstrs] = p->ntext;
	p->str_len[p->nstrs] = len;
	p->ntext += len;
	return (int)p->nstrs++;
}

int bc_emit_text(bc_program *p, const char *s, uint32_t len)
{
	int k = bc_add_text(p, s, len);

	if (k < 0)
		return -1;
	return bc_emit_const(p, BC_T_TEXT, 0, 0, (bc_imm){.i = k});
}

int bc_emit_null(bc_program *p, int type, int scale)
{
	int r = bc_new_reg(p, type, 0, scale);

	if (r < 0 || bc_emit_raw(p, BC_NULL, r, 0, 0, 0, (bc_imm){0}) < 0)
		return -1;
	return r;
}

int bc_emit_load(bc_program *p, int col)
{
	static const uint8_t t[] = {
	    [BC_COL_INT32] = BC_T_INT,	[BC_COL_INT64] = BC_T_INT,
	    [BC_COL_FLOAT] = BC_T_REAL, [BC_COL_DOUBLE] = BC_T_REAL,
	    [BC_COL_DEC] = BC_T_DEC,	[BC_COL_DATE] = BC_T_DATE,
	    [BC_COL_BOOL] = BC_T_BOOL,	[BC_COL_TEXT] = BC_T_TEXT};
	const bc_rtype *it;
	int r;

	if (p->err)
		return -1;
	if (col < 0 || (uint32_t)col >= p->ninputs)
		return bc_fail(p, "no input column %d", col);
	it = &p->in_type[col];
	r = bc_new_reg(p, t[it->type], it->prec, it->scale);
	if (r < 0 || bc_emit_raw(p, BC_LOAD_COL, r, col, 0, 0, (bc_imm){0}) < 0)
		return -1;
	return r;
}

int bc_bind_input(bc_program *p, int col, int is_null, bc_imm imm,
		  const char *s, uint32_t len)
{
	int k = -1;

	if (p->err)
		return -1;
	if (col < 0 || (uint32_t)col >= p->ninputs)
		return bc_fail(p, "no input column %d", col);
	for (uint32_t pc = 0; pc < p->ninsns; pc++) {
		bc_insn *in = &p->insns[pc];
		if (in->op != BC_LOAD_COL || in->a != col)
			continue;
		in->a = 0;
		if (is_null) {
			in->op = BC_NULL;
			in->imm = (bc_imm){0};
			continue;
		}
		in->op = BC_CONST;
		in->imm = imm;
		if (p->rtype[in->dst].type == BC_T_TEXT) {
			if (k < 0 && (k = bc_add_text(p, s, len)) < 0)
				return -1;
			in->imm = (bc_imm){.i = k};
		}
	}
	return 0;
}

/* The register type of an operand (NULL for an absent one). */
static const bc_rtype *bc_rt(const bc_program *p, int r)
{
	static const bc_rtype none = {BC_T_NULL, 0, 0, 0};
	return r >= 0 && (uint32_t)r < p->nregs ? &p->rtype[r] : &none;
}

int bc_emit_op(bc_program *p, int op, int a, int b, int c)
{
	const bc_opinfo *oi;
	int type, scale = 0, prec = 0, dst;
	const bc_rtype *ta = bc_rt(p, a), *tb = bc_rt(p, b);

	if (p->err)
		return -1;
	if (op < 0 || op >= BC_NOPS)
		return bc_fail(p, "bad op %d", op);
	oi = &bc_ops[op];
	switch (oi->res) {
	case '=':
		type = ta->type;
		scale = ta->scale;
		prec = ta->prec;
		/* COALESCE(NULL, x) has x's type */
		if (type == BC_T_NULL) {
			type = tb->type;
			scale = tb->scale;
			prec = tb->prec;
		}
		break;
	case '>': {
		const bc_rtype *tc = bc_rt(p, c);
		const bc_rtype *t = tb->type != BC_T_NULL ? tb : tc;
		type = t->type;
		scale = t->scale;
		prec = t->prec;
		break;
	}
	case 'D':
		type = BC_T_DEC;
		scale = ta->scale;
		if (op == BC_ADD_D || op == BC_SUB_D || op == BC_MOD_D)
			scale = ta->scale > tb->scale ? ta->scale : tb->scale;
		else if (op == BC_MUL_D)
			scale = ta->scale + tb->scale > 18
				    ? 18
				    : ta->scale + tb->scale;
		break;
	case '-':
		return bc_fail(p, "op %s has no result", oi->name);
	default:
		type = bc_code_type(oi->res);
		if (type < 0)
			return bc_fail(p, "op %s needs its result type",
				       oi->name);
	}
	dst = bc_new_reg(p, type, prec, scale);
	if (dst < 0)
		return -1;
	/* Optional operands are stored as register + 1. */
	if (oi->b == 'i' || oi->b == 't')
		b = b < 0 ? 0 : b + 1;
	if (oi->c == 'i' || oi->c == 't')
		c = c < 0 ? 0 : c + 1;
	if (bc_emit_raw(p, op, dst, a, b, c, (bc_imm){0}) < 0)
		return -1;
	if (bc_check(p, p->errmsg, sizeof(p->errmsg))) {
		p->err = 1;
		return -1;
	}
	return dst;
}

int bc_emit_to_dec(bc_program *p, int op, int a, int prec, int scale)
{
	int dst;

	if (op != BC_I2D && op != BC_D2D && op != BC_R2D && op != BC_T2D)
		return bc_fail(p, "op %d is not a conversion to DEC", op);
	dst = bc_new_reg(p, BC_T_DEC, prec, scale);
	if (dst < 0 || bc_emit_raw(p, op, dst, a, 0, 0, (bc_imm){0}) < 0)
		return -1;
	return dst;
}

static int bc_cmp_i64(const void *x, const void *y)
{
	int64_t a = ((const bc_imm *)x)->i, b = ((const bc_imm *)y)->i;
	return a < b ? -1 : a > b;
}

static int bc_cmp_f64(const void *x, const void *y)
{
	double a = ((const bc_imm *)x)->r, b = ((const bc_imm *)y)->r;
	return a < b ? -1 : a > b;
}

/* Reserves n constant slots; returns the first. */
static int bc_slots(bc_program *p, int n)
{
	if (p->err)
		return -1;
	if (n < 0 || n > 0xffff || (uint32_t)n > BC_MAX_CONSTS - p->nconsts)
		return bc_fail(p, "IN list too long");
	p->nconsts += (uint32_t)n;
	return (int)(p->nconsts - (uint32_t)n);
}

static int bc_emit_in(bc_program *p, int op, int a, int first, int n,
		      int has_null)
{
	int dst = bc_new_reg(p, BC_T_BOOL, 0, 0);

	if (dst < 0 || bc_emit_raw(p, op, dst, a, n, has_null != 0,
				   (bc_imm){.i = first}) < 0)
		return -1;
	if (bc_check(p, p->errmsg, sizeof(p->errmsg))) {
		p->err = 1;
		return -1;
	}
	return dst;
}

int bc_emit_in_int(bc_program *p, int a, const int64_t *v, int n, int has_null)
{
	int first = bc_slots(p, n);
	int op = bc_rt(p, a)->type == BC_T_DATE ? BC_IN_DT : BC_IN_I;

	if (first < 0)
		return -1;
	for (int k = 0; k < n; k++)
		p->consts[first + k].i = v[k];
	qsort(p->consts + first, (size_t)n, sizeof(bc_imm), bc_cmp_i64);
	return bc_emit_in(p, op, a, first, n, has_null);
}

int bc_emit_in_real(bc_program *p, int a, const double *v, int n, int has_null)
{
	int first = bc_slots(p, n);

	if (first < 0)
		return -1;
	for (int k = 0; k < n; k++)
		p->consts[first + k].r = v[k];
	qsort(p->consts + first, (size_t)n, sizeof(bc_imm), bc_cmp_f64);
	return bc_emit_in(p, BC_IN_R, a, first, n, has_null);
}

int bc_emit_in_text(bc_program *p, int a, const char *const *s,
		    const uint32_t *len, int n, int has_null)
{
	int first = (int)p->nstrs;

	if (n > 0xffff)
		return bc_fail(p, "IN list too long");
	for (int k = 0; k < n; k++)
		if (bc_add_text(p, s[k], len[k]) < 0)
			return -1;
	return bc_emit_in(p, BC_IN_T, a, first, n, has_null);
}

int bc_emit_output(bc_program *p, int reg)
{
	if (p->err)
		return -1;
	if (p->noutputs >= BC_MAX_OUTPUTS)
		return bc_fail(p, "too many outputs");
	if (reg < 0 || (uint32_t)reg >= p->nregs)
		return bc_fail(p, "no register %d", reg);
	p->out_reg[p->noutputs++] = (uint16_t)reg;
	return bc_emit_raw(p, BC_OUTPUT, 0, reg, 0, 0, (bc_imm){0});
}

/* ---- checker ---------------------------------------------------------- */

static int bc_bad(char *err, size_t len, uint32_t pc, const char *what,
		  const char *op)
{
	if (err && len)
		snprintf(err, len, "bad program: insn %u (%s): %s", pc, op,
			 what);
	return GPMDB_ERROR;
}

/* One register operand against its code; opt: stored + 1. */
static const char *bc_check_operand(const bc_program *p, char code, int reg,
				    int *isreg)
{
	int want = bc_code_type(code);

	*isreg = 0;
	if (code == '-' || code == 'n' || code == 'k')
		return NULL;
	if (code == 'i' || code == 't') {
		if (reg == 0)
			return NULL;
		reg--;
	}
	*isreg = 1;
	if ((uint32_t)reg >= p->nregs)
		return "register out of range";
	if (want >= 0 && p->rtype[reg].type != want &&
	    p->rtype[reg].type != BC_T_NULL)
		return "operand type";
	return NULL;
}

/* The register an operand names (optional ones are stored + 1). */
static int bc_opreg(char code, int v)
{
	return code == 'i' || code == 't' ? v - 1 : v;
}

int bc_check(const bc_program *p, char *err, size_t errlen)
{
	uint32_t nout = 0;

	if (p->ninsns > BC_MAX_INSNS || p->nregs > BC_MAX_REGS ||
	    p->ninputs > BC_MAX_INPUTS || p->nconsts > BC_MAX_CONSTS ||
	    p->nstrs > BC_MAX_STRS || p->ntext > BC_MAX_TEXT)
		return bc_bad(err, errlen, 0, "counts", "-");
	for (uint32_t pc = 0; pc < p->ninsns; pc++) {
		const bc_insn *in = &p->insns[pc];
		const bc_opinfo *oi;
		const char *why = NULL;
		int ra, rb, rc, dt;

		if (in->op >= BC_NOPS)
			return bc_bad(err, errlen, pc, "unknown op", "?");
		oi = &bc_ops[in->op];
		if (in->op == BC_OUTPUT) {
			if (in->a >= p->nregs)
				return bc_bad(err, errlen, pc, "register",
					      oi->name);
			nout++;
			continue;
		}
		if (oi->res == '-')
			continue;
		if (in->dst >= p->nregs)
			return bc_bad(err, errlen, pc, "dst out of range",
				      oi->name);
		dt = p->rtype[in->dst].type;
		if ((why = bc_check_operand(p, oi->a, in->a, &ra)) ||
		    (why = bc_check_operand(p, oi->b, in->b, &rb)) ||
		    (why = bc_check_operand(p, oi->c, in->c, &rc)))
			return bc_bad(err, errlen, pc, why, oi->name);
		/* The VM's loops read operands after writing dst. */
		if ((ra && bc_opreg(oi->a, in->a) == in->dst) ||
		    (rb && bc_opreg(oi->b, in->b) == in->dst) ||
		    (rc && bc_opreg(oi->c, in->c) == in->dst))
			return bc_bad(err, errlen, pc, "dst is an operand",
				      oi->name);
		if (in->m && (in->m - 1 >= (int)p->nregs ||
			      p->rtype[in->m - 1].type != BC_T_BOOL))
			return bc_bad(err, errlen, pc, "mask register",
				      oi->name);
		if (bc_code_type(oi->res) >= 0 && dt != bc_code_type(oi->res))
			return bc_bad(err, errlen, pc, "result type", oi->name);
		switch (in->op) {
		case BC_LOAD_COL:
			if (in->a >= p->ninputs)
				return bc_bad(err, errlen, pc, "input column",
					      oi->name);
			break;
		case BC_CONST:
			if (dt == BC_T_TEXT &&
			    (in->imm.i < 0 || in->imm.i >= p->nstrs))
				return bc_bad(err, errlen, pc, "text constant",
					      oi->name);
			break;
		case BC_MOVE:
		case BC_COALESCE:
		case BC_NULLIF_I:
		case BC_NULLIF_R:
		case BC_NULLIF_D:
		case BC_NULLIF_DT:
		case BC_NULLIF_T:
		case BC_NULLIF_B:
			if (p->rtype[in->a].type != dt &&
			    p->rtype[in->a].type != BC_T_NULL)
				return bc_bad(err, errlen, pc, "operand type",
					      oi->name);
			if (in->op == BC_COALESCE &&
			    p->rtype[in->b].type != dt &&
			    p->rtype[in->b].type != BC_T_NULL)
				return bc_bad(err, errlen, pc, "operand type",
					      oi->name);
			break;
		case BC_SELECT:
			if ((p->rtype[in->b].type != dt &&
			     p->rtype[in->b].type != BC_T_NULL) ||
			    (p->rtype[in->c].type != dt &&
			     p->rtype[in->c].type != BC_T_NULL))
				return bc_bad(err, errlen, pc, "operand type",
					      oi->name);
			break;
		case BC_IN_I: {
			int t = p->rtype[in->a].type;
			if (t != BC_T_INT && t != BC_T_DEC && t != BC_T_NULL)
				return bc_bad(err, errlen, pc, "operand type",
					      oi->name);
		}
			/* fall through */
		case BC_IN_R:
		case BC_IN_DT:
			if (in->imm.i < 0 || in->imm.i + in->b > p->nconsts)
				return bc_bad(err, errlen, pc, "constant set",
					      oi->name);
			break;
		case BC_IN_T:
			if (in->imm.i < 0 || in->imm.i + in->b > p->nstrs)
				return bc_bad(err, errlen, pc, "constant set",
					      oi->name);
			break;
		}
		/* Same-scale rules of DEC comparisons. */
		if ((in->op >= BC_EQ_D && in->op <= BC_NULLIF_D) &&
		    p->rtype[in->a].scale != p->rtype[in->b].scale &&
		    p->rtype[in->a].type == BC_T_DEC &&
		    p->rtype[in->b].type == BC_T_DEC)
			return bc_bad(err, errlen, pc, "DEC scales differ",
				      oi->name);
	}
	if (nout != p->noutputs)
		return bc_bad(err, errlen, 0, "output count", "-");
	return 0;
}

/* ---- disassembler ----------------------------------------------------- */

typedef struct bc_buf {
	char *p;
	size_t len, used;
} bc_buf;

static void bc_put(bc_buf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void bc_put(bc_buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(b->used < b->len ? b->p + b->used : NULL,
		      b->used < b->len ? b->len - b->used : 0, fmt, ap);
	va_end(ap);
	if (n > 0)
		b->used += (size_t)n;
}

static void bc_put_type(bc_buf *b, const bc_rtype *t)
{
	if (t->type == BC_T_DEC)
		bc_put(b, "DEC(%d,%d)", t->prec, t->scale);
	else
		bc_put(b, "%s", bc_type_name(t->type));
}

static void bc_put_text(bc_buf *b, const bc_program *p, int64_t k)
{
	bc_put(b, "'");
	for (uint32_t i = 0; i < p->str_len[k]; i++) {
		char c = p->text[p->str_off[k] + i];
		if (c == '\'')
			bc_put(b, "''");
		else if ((unsigned char)c < 0x20)
			bc_put(b, "\\x%02x", (unsigned char)c);
		else
			bc_put(b, "%c", c);
	}
	bc_put(b, "'");
}

static void bc_put_operand(bc_buf *b, char code, int v, const char *name)
{
	switch (code) {
	case '-':
		return;
	case 'n':
		bc_put(b, " %s=%d", name, v);
		return;
	case 'k':
		bc_put(b, " col%d", v);
		return;
	case 'i':
	case 't':
		if (v)
			bc_put(b, " r%d", v - 1);
		return;
	}
	bc_put(b, " r%d", v);
}

int bc_disasm(const bc_program *p, char *buf, size_t len)
{
	bc_buf b = {buf, len, 0};

	if (len)
		buf[0] = 0;
	for (uint32_t pc = 0; pc < p->ninsns; pc++) {
		const bc_insn *in = &p->insns[pc];
		const bc_opinfo *oi =
		    in->op < BC_NOPS ? &bc_ops[in->op] : &bc_ops[0];

		bc_put(&b, "%3u %-16s", pc, oi->name);
		if (oi->res != '-') {
			bc_put(&b, " r%d:", in->dst);
			bc_put_type(&b, &p->rtype[in->dst]);
			bc_put(&b, " <-");
		}
		bc_put_operand(&b, oi->a, in->a, "a");
		bc_put_operand(&b, oi->b, in->b,
			       in->op >= BC_IN_I && in->op <= BC_IN_T ? "n"
								      : "b");
		bc_put_operand(&b, oi->c, in->c,
			       in->op >= BC_IN_I && in->op <= BC_IN_T ? "null"
								      : "c");
		if (in->op == BC_CONST) {
			switch (p->rtype[in->dst].type) {
			case BC_T_REAL:
				bc_put(&b, " %.17g", in->imm.r);
				break;
			case BC_T_TEXT:
				bc_put(&b, " ");
				bc_put_text(&b, p, in->imm.i);
				break;
			default:
				bc_put(&b, " %lld", (long long)in->imm.i);
			}
		} else if (in->op == BC_IN_T) {
			bc_put(&b, " {");
			for (int k = 0; k < in->b; k++) {
				bc_put(&b, k ? ", " : "");
				bc_put_text(&b, p, in->imm.i + k);
			}
			bc_put(&b, "}");
		} else if (oi->imm == 's') {
			bc_put(&b, " {");
			for (int k = 0; k < in->b; k++) {
				const bc_imm *v = &p->consts[in->imm.i + k];
				bc_put(&b, k ? ", " : "");
				if (in->op == BC_IN_R)
					bc_put(&b, "%.17g", v->r);
				else
					bc_put(&b, "%lld", (long long)v->i);
			}
			bc_put(&b, "}");
		}
		if (in->m)
			bc_put(&b, " mask=r%d", in->m - 1);
		bc_put(&b, "\n");
	}
	return (int)b.used;
}
