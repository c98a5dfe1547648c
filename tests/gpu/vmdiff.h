/*
 * vmdiff.h - differential testing of a row interpreter backend against
 * vm_run (the CPU interpreter), shared by tests/unit/test_vm_rowwise.c
 * (gvm_run_host, no GPU) and tests/gpu/test_vm_gpu.c (the GPU).
 *
 * A data set is a fixed schema of columns of every input type with NULLs,
 * extreme values, odd text (UTF-8, LIKE/GLOB metacharacters, dates and
 * numbers as text) and optionally a selection vector and an all-NULL
 * (VEC_NULL) column.  Random programs are built with the bc_emit_*
 * builder from the ops the GPU supports, with constants, NULL operands and
 * error masks; each is run by vm_run in batches of VEC_BATCH and by the
 * backend over all rows, and the results must agree: the same return
 * code and message, the same output types, the same NULL flags, and the
 * same values bit for bit (doubles compared as bytes, text as bytes).
 *
 * Include after harness.h; define nothing else first.
 */
#ifndef GPMDB_VMDIFF_H
#define GPMDB_VMDIFF_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpmdb.h"

#include "../engine/bytecode.h"
#include "../engine/value.h"
#include "../engine/vm.h"
#include "../gpu/gpu.h"
#include "../gpu/gvm.h"

/* ---- random numbers ---------------------------------------------------- */

static uint64_t vd_rng = 0x9e3779b97f4a7c15ull;

static uint64_t vd_rand(void)
{
	vd_rng ^= vd_rng << 13;
	vd_rng ^= vd_rng >> 7;
	vd_rng ^= vd_rng << 17;
	return vd_rng;
}

static int vd_pct(int pct)
{
	return (int)(vd_rand() % 100) < pct;
}

static int64_t vd_range(int64_t lo, int64_t hi)
{
	return lo + (int64_t)(vd_rand() % (uint64_t)(hi - lo + 1));
}

/* An integer: mostly small, sometimes large, rarely extreme (wild). */
static int64_t vd_int(int wild)
{
	static const int64_t ext[] = {INT64_MIN,	 INT64_MAX,
				      INT64_MIN + 1,	 -1,
				      (int64_t)1 << 62,	 -((int64_t)1 << 62),
				      (int64_t)1 << 32,	 4000001,
				      -4000001,		 200001,
				      999999999999999999};
	int r = (int)(vd_rand() % 100);

	if (wild && r < 4)
		return ext[vd_rand() % (sizeof(ext) / sizeof(ext[0]))];
	if (r < 70)
		return vd_range(-100, 100);
	if (r < 90)
		return vd_range(-1000000, 1000000);
	return vd_range(-3000000000LL, 3000000000LL);
}

static double vd_real(int wild)
{
	static const double ext[] = {
	    0.0,  -0.0,	      1e308,  -1e308,  5e-324, INFINITY, -INFINITY,
	    NAN,  -NAN,	      -0.0,   3e38,    -3e39,  2.675,	 0.5,
	    -0.5, 1e15 + 0.3, 9.2e18, -9.3e18, 1.5,    -2.5};
	int r = (int)(vd_rand() % 100);

	if (r < (wild ? 15 : 5))
		return ext[vd_rand() % (sizeof(ext) / sizeof(ext[0]))];
	if (r < 50)
		return (double)vd_range(-100, 100) / 4;
	return ((double)(int64_t)vd_rand() / 9.2e18) *
	       pow(10.0, (double)vd_range(-5, 12));
}

static int32_t vd_date(int wild)
{
	int r = (int)(vd_rand() % 100);

	if (wild && r < 5)
		return r & 1 ? -719162 + (int32_t)vd_range(0, 40)
			     : 2932896 - (int32_t)vd_range(0, 40);
	return (int32_t)vd_range(-25567, 47482); /* 1900 .. 2100 */
}

/*
 * More digits than int64 holds: T2I saturates.  val_date_parse (engine/
 * value_inline.h) accumulates the year without a bound, which is signed
 * overflow there (reported to the value layer's owner), also for a
 * substr of INT64_MIN's digits; under the sanitizers both words are
 * shorter than the overflow.
 */
#if defined(__SANITIZE_ADDRESS__)
#define VD_LONG_DIGITS "99999999999999999"
#define VD_MIN_DIGITS  "-922337203685477580"
#else
#define VD_LONG_DIGITS "99999999999999999999"
#define VD_MIN_DIGITS  "-9223372036854775808"
#endif

static const char *const vd_words[] = {"",
				       "a",
				       "abc",
				       "ABC",
				       "Abc",
				       "hello world",
				       "  padded  ",
				       " x",
				       "x ",
				       "1995-03-15",
				       "2020-02-29",
				       "2021-02-29",
				       "2020-13-01",
				       " 2020-1-5 ",
				       "0001-01-01",
				       "9999-12-31",
				       "12",
				       "-7",
				       "+42",
				       "3.25",
				       "-0.125",
				       "1e3",
				       "1.5e-3",
				       "12ab",
				       "  99  ",
				       VD_LONG_DIGITS,
				       VD_MIN_DIGITS,
				       "0.005",
				       "\xc3\xa9t\xc3\xa9",
				       "\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e",
				       "%",
				       "_",
				       "a%",
				       "%c",
				       "a_c",
				       "%b%",
				       "A%C",
				       "[a-c]*",
				       "*",
				       "?b?",
				       "x\\y",
				       "\\",
				       "\\%",
				       "ab%_\\",
				       "[^a]bc",
				       "abcabcabc",
				       "bc",
				       "\x80\xbf",
				       "xyzzy",
				       "é%"};
#define VD_NWORDS (sizeof(vd_words) / sizeof(vd_words[0]))

/* ---- data sets --------------------------------------------------------- */

/* The schema every program declares as its inputs. */
enum {
	VD_I32,
	VD_I64,
	VD_F32,
	VD_F64,
	VD_DEC2,
	VD_DEC4,
	VD_DATE,
	VD_BOOL,
	VD_TEXT,
	VD_TEXT2,
	VD_I64B,
	VD_NCOLS
};

static const struct {
	uint8_t type, prec, scale;
} vd_schema[VD_NCOLS] = {
    {BC_COL_INT32, 0, 0},  {BC_COL_INT64, 0, 0}, {BC_COL_FLOAT, 0, 0},
    {BC_COL_DOUBLE, 0, 0}, {BC_COL_DEC, 18, 2},	 {BC_COL_DEC, 10, 4},
    {BC_COL_DATE, 0, 0},   {BC_COL_BOOL, 0, 0},	 {BC_COL_TEXT, 0, 0},
    {BC_COL_TEXT, 0, 0},   {BC_COL_INT64, 0, 0}};

typedef struct vd_data {
	uint32_t n;	/* rows */
	uint32_t nelem; /* elements of each array (> n with a sel) */
	uint32_t *sel;	/* NULL or n entries < nelem */
	char *heap;	/* text bytes */
	uint64_t nheap;
	gpu_col col[VD_NCOLS];	/* host arrays */
	vec_str *str[VD_NCOLS]; /* TEXT columns as vm_run wants them */
	/* VD_TEXT2's values again in a buffer of their own, laid out
	 * differently (reversed, after a pad), for runs that give each TEXT
	 * input its own base: a read through the wrong base shows */
	char *heap2;
	uint64_t nheap2;
	gpu_str *own2;
	void *dev; /* the backend's copy */
} vd_data;

static void vd_data_free(vd_data *d)
{
	for (int c = 0; c < VD_NCOLS; c++) {
		free(d->col[c].data);
		free(d->col[c].nulls);
		free(d->str[c]);
	}
	free(d->sel);
	free(d->heap);
	free(d->heap2);
	free(d->own2);
	memset(d, 0, sizeof(*d));
}

/* heap2 and own2 from VD_TEXT2's values as they are now. */
static void vd_make_own2(vd_data *d)
{
	free(d->heap2);
	free(d->own2);
	d->heap2 = malloc(d->nheap + 4);
	d->own2 = calloc(d->nelem + 1, sizeof(gpu_str));
	memcpy(d->heap2, "###", 3);
	d->nheap2 = 3;
	for (uint32_t i = d->nelem; i-- > 0;) {
		gpu_str s = ((gpu_str *)d->col[VD_TEXT2].data)[i];
		memcpy(d->heap2 + d->nheap2, d->heap + s.off, s.len);
		d->own2[i].off = (uint32_t)d->nheap2;
		d->own2[i].len = s.len;
		d->nheap2 += s.len;
	}
}

/* n rows; wild: extreme values; with_sel: a selection vector; nullcol:
 * column VD_I64B is VEC_NULL. */
static void vd_data_make(vd_data *d, uint32_t n, int wild, int with_sel,
			 int nullcol)
{
	uint64_t cap = 64;
	uint32_t ne = with_sel ? n + n / 2 + 1 : n;
	int nullpct = (int)vd_range(0, 30);

	memset(d, 0, sizeof(*d));
	d->n = n;
	d->nelem = ne;
	d->heap = malloc(cap);
	if (with_sel) {
		d->sel = malloc(sizeof(uint32_t) * (n ? n : 1));
		for (uint32_t i = 0; i < n; i++)
			d->sel[i] = (uint32_t)(vd_rand() % ne);
	}
	for (int c = 0; c < VD_NCOLS; c++) {
		gpu_col *col = &d->col[c];
		col->type = vd_schema[c].type;
		col->prec = vd_schema[c].prec;
		col->scale = vd_schema[c].scale;
		col->sel = d->sel;
		col->data = calloc(ne + 1, 8);
		col->nulls = calloc(ne + 1, 1);
		if (c == VD_TEXT || c == VD_TEXT2)
			d->str[c] = calloc(ne + 1, sizeof(vec_str));
		for (uint32_t i = 0; i < ne; i++) {
			col->nulls[i] = vd_pct(nullpct);
			switch (c) {
			case VD_I32:
				((int32_t *)col->data)[i] =
				    (int32_t)(wild && vd_pct(3)
						  ? (vd_pct(50) ? INT32_MIN
								: INT32_MAX)
						  : vd_int(0) % 100000);
				break;
			case VD_I64:
			case VD_I64B:
				((int64_t *)col->data)[i] = vd_int(wild);
				break;
			case VD_F32:
				((float *)col->data)[i] = (float)vd_real(wild);
				break;
			case VD_F64:
				((double *)col->data)[i] = vd_real(wild);
				break;
			case VD_DEC2:
			case VD_DEC4:
				((int64_t *)col->data)[i] = c == VD_DEC4
								? vd_int(0) * 37
								: vd_int(wild);
				break;
			case VD_DATE:
				((int32_t *)col->data)[i] = vd_date(wild);
				break;
			case VD_BOOL:
				/* vm_cpu keeps the raw byte: 2 is true too. */
				((uint8_t *)col->data)[i] =
				    (uint8_t)(vd_pct(5) ? 2 : vd_rand() & 1);
				break;
			default: {
				const char *w = vd_words[vd_rand() % VD_NWORDS];
				uint32_t len = (uint32_t)strlen(w);
				char buf[24];
				if (vd_pct(15)) { /* random short text */
					static const char al[] =
					    "abAB%_\\ 1.-e[]*?";
					len = (uint32_t)vd_range(0, 20);
					for (uint32_t k = 0; k < len; k++)
						buf[k] = al[vd_rand() %
							    (sizeof(al) - 1)];
					w = buf;
				}
				while (d->nheap + len + 1 > cap)
					d->heap = realloc(d->heap, cap *= 2);
				memcpy(d->heap + d->nheap, w, len);
				((gpu_str *)col->data)[i].off =
				    (uint32_t)d->nheap;
				((gpu_str *)col->data)[i].len = len;
				d->nheap += len + (vd_pct(50) ? 1 : 0);
			}
			}
		}
		if (c == VD_I64B && nullcol)
			col->type = VEC_NULL;
	}
	/* vec_str views once the heap has stopped moving. */
	for (int c = VD_TEXT; c <= VD_TEXT2; c++)
		for (uint32_t i = 0; i < ne; i++) {
			gpu_str s = ((gpu_str *)d->col[c].data)[i];
			d->str[c][i].ptr = d->heap + s.off;
			d->str[c][i].len = s.len;
		}
	vd_make_own2(d);
}

/* Whether p has a TEXT output (its offsets need the run's one buffer). */
static int vd_text_out(const bc_program *p)
{
	for (uint32_t k = 0; k < p->noutputs; k++)
		if (p->rtype[p->out_reg[k]].type == BC_T_TEXT)
			return 1;
	return 0;
}

/* The inputs of a run where each TEXT input has a buffer of its own
 * (no run buffer): VD_TEXT in heap, VD_TEXT2 in heap2 at own2, given
 * (col, heap, heap2, own2) where the backend keeps them. */
static void vd_own_inputs(const gpu_col *col, const char *heap,
			  const char *heap2, gpu_str *own2, gpu_col *in,
			  const char **itext)
{
	memcpy(in, col, sizeof(gpu_col) * VD_NCOLS);
	memset(itext, 0, sizeof(*itext) * VD_NCOLS);
	in[VD_TEXT2].data = own2;
	itext[VD_TEXT] = heap;
	itext[VD_TEXT2] = heap2;
}

/* ---- random programs --------------------------------------------------- */

/* Registers by type, for picking operands. */
typedef struct vd_gen {
	bc_program *p;
	int reg[BC_T_COUNT][BC_MAX_REGS];
	int nreg[BC_T_COUNT];
	int last;
} vd_gen;

static void vd_add(vd_gen *g, int r)
{
	int t;

	if (r < 0)
		return;
	t = g->p->rtype[r].type;
	g->reg[t][g->nreg[t]++] = r;
	g->last = r;
}

/* A register of type t (sometimes a NULL-typed one, as bytecode allows),
 * or -1 if there is none. */
static int vd_pick(vd_gen *g, int t)
{
	if (g->nreg[BC_T_NULL] && vd_pct(4))
		return g->reg[BC_T_NULL][vd_rand() % g->nreg[BC_T_NULL]];
	if (!g->nreg[t])
		return -1;
	/* Prefer recent registers: deeper expressions. */
	if (vd_pct(60) && g->nreg[t] > 3)
		return g->reg[t][g->nreg[t] - 1 - (int)(vd_rand() % 3)];
	return g->reg[t][vd_rand() % g->nreg[t]];
}

static int vd_code_type(char c)
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

static int vd_any(vd_gen *g)
{
	for (int tries = 0; tries < 20; tries++) {
		int t = (int)(vd_rand() % BC_T_COUNT), r = vd_pick(g, t);
		if (r >= 0)
			return r;
	}
	return g->last;
}

static void vd_const(vd_gen *g, int wild)
{
	bc_program *p = g->p;
	const char *w;

	switch (vd_rand() % 9) {
	case 0:
		vd_add(g, bc_emit_int(p, vd_int(wild)));
		break;
	case 1:
		vd_add(g, bc_emit_real(p, vd_real(wild)));
		break;
	case 2:
		vd_add(g, bc_emit_date(p, vd_date(wild)));
		break;
	case 3:
		vd_add(g,
		       bc_emit_dec(p, vd_int(wild), 18, (int)vd_range(0, 6)));
		break;
	case 4:
	case 5:
		w = vd_words[vd_rand() % VD_NWORDS];
		vd_add(g, bc_emit_text(p, w, (uint32_t)strlen(w)));
		break;
	case 6:
		vd_add(g, bc_emit_bool(p, (int)(vd_rand() & 1)));
		break;
	case 7:
		vd_add(g, bc_emit_null(p, (int)vd_range(0, BC_T_COUNT - 1),
				       (int)vd_range(0, 4)));
		break;
	default:
		vd_add(g, bc_emit_int(p, vd_range(-3, 30)));
	}
}

/* One instruction of op (a supported one); returns 0 if it could not be
 * built from the registers there are. */
static int vd_emit(vd_gen *g, int op, int wild)
{
	bc_program *p = g->p;
	const bc_opinfo *oi = &bc_ops[op];
	int ops[3] = {-1, -1, -1}, r, oldmask = -2;
	char codes[3] = {oi->a, oi->b, oi->c};

	switch (op) {
	case BC_NOP:
		return bc_emit_raw(p, BC_NOP, 0, 0, 0, 0, (bc_imm){0}) >= 0;
	case BC_LOAD_COL:
		vd_add(g, bc_emit_load(p, (int)(vd_rand() % VD_NCOLS)));
		return 1;
	case BC_CONST:
	case BC_NULL:
		vd_const(g, wild);
		return 1;
	case BC_OUTPUT:
		return 0;
	case BC_I2D:
	case BC_D2D:
	case BC_T2D: {
		int a = vd_pick(g, op == BC_I2D	  ? BC_T_INT
				   : op == BC_D2D ? BC_T_DEC
						  : BC_T_TEXT);
		int m = vd_pct(25) ? vd_pick(g, BC_T_BOOL) : -1;
		if (a < 0)
			return 0;
		if (m >= 0)
			oldmask = bc_set_mask(p, m);
		vd_add(g, bc_emit_to_dec(p, op, a,
					 vd_pct(50) ? 0 : (int)vd_range(1, 18),
					 (int)vd_range(0, 8)));
		if (oldmask != -2)
			bc_set_mask(p, oldmask);
		return 1;
	}
	case BC_IN_I:
	case BC_IN_R:
	case BC_IN_DT:
	case BC_IN_T: {
		int t = op == BC_IN_I	 ? (vd_pct(50) ? BC_T_INT : BC_T_DEC)
			: op == BC_IN_R	 ? BC_T_REAL
			: op == BC_IN_DT ? BC_T_DATE
					 : BC_T_TEXT;
		int a = vd_pick(g, t), n = (int)vd_range(0, 6);
		int hn = vd_pct(30);
		if (a < 0)
			return 0;
		if (op == BC_IN_R) {
			double v[8];
			for (int k = 0; k < n; k++)
				v[k] = vd_pct(50) ? (double)vd_range(-5, 5)
						  : vd_real(wild);
			vd_add(g, bc_emit_in_real(p, a, v, n, hn));
		} else if (op == BC_IN_T) {
			const char *s[8];
			uint32_t l[8];
			for (int k = 0; k < n; k++) {
				s[k] = vd_words[vd_rand() % VD_NWORDS];
				l[k] = (uint32_t)strlen(s[k]);
			}
			vd_add(g, bc_emit_in_text(p, a, s, l, n, hn));
		} else {
			int64_t v[8];
			for (int k = 0; k < n; k++)
				v[k] = op == BC_IN_DT ? vd_date(0)
				       : vd_pct(60)   ? vd_range(-10, 10)
						      : vd_int(wild);
			vd_add(g, bc_emit_in_int(p, a, v, n, hn));
		}
		return 1;
	}
	}
#if defined(__SANITIZE_ADDRESS__)
	/* val_dec_round computes s - n unchecked (signed overflow for n near
	 * INT64_MIN, reported to the value layer's owner): small n only. */
	if (op == BC_ROUND_D) {
		int a = vd_pick(g, BC_T_DEC);
		int b = vd_pct(50) ? bc_emit_int(p, vd_range(-20, 20)) : -1;
		if (a < 0)
			return 0;
		r = bc_emit_op(p, op, a, b, -1);
		vd_add(g, r);
		return r >= 0;
	}
#endif
	for (int k = 0; k < 3; k++) {
		char c = codes[k];
		int t = vd_code_type(c);
		if (c == '-')
			continue;
		if (c == 'i' || c == 't') {
			if (vd_pct(40))
				continue;
			ops[k] = vd_pick(g, t);
			continue;
		}
		if (c == '*') {
			/* SELECT's b and c, COALESCE's a and b: one type. */
			if ((op == BC_SELECT && k == 2) ||
			    (op == BC_COALESCE && k == 1)) {
				int t0 = p->rtype[ops[k - 1]].type;
				ops[k] = t0 == BC_T_NULL ? vd_any(g)
							 : vd_pick(g, t0);
				if (ops[k] < 0)
					ops[k] = ops[k - 1];
			} else {
				ops[k] = vd_any(g);
			}
		} else {
			ops[k] = vd_pick(g, t);
		}
		if (ops[k] < 0)
			return 0;
	}
	/* DEC comparisons want equal scales: rescale b to a's. */
	if (op >= BC_EQ_D && op <= BC_NULLIF_D &&
	    p->rtype[ops[0]].type == BC_T_DEC &&
	    p->rtype[ops[1]].type == BC_T_DEC &&
	    p->rtype[ops[0]].scale != p->rtype[ops[1]].scale) {
		ops[1] = bc_emit_to_dec(p, BC_D2D, ops[1], 0,
					p->rtype[ops[0]].scale);
		if (ops[1] < 0)
			return 0;
	}
	if (oi->mask && vd_pct(25)) {
		int m = vd_pick(g, BC_T_BOOL);
		if (m >= 0)
			oldmask = bc_set_mask(p, m);
	}
	r = bc_emit_op(p, op, ops[0], ops[1], ops[2]);
	if (oldmask != -2)
		bc_set_mask(p, oldmask);
	vd_add(g, r);
	return r >= 0;
}

/* The ops gvm supports (filled by vd_ops_init). */
static int vd_ops[BC_NOPS], vd_nops;

static void vd_ops_init(void)
{
	vd_nops = 0;
	for (int op = 0; op < BC_NOPS; op++)
		if (!gvm_op_unsupported(op) && op != BC_OUTPUT)
			vd_ops[vd_nops++] = op;
}

/* A random program over the schema; force: an op it must contain (or -1).
 * Returns 0 when the builder refused (the caller tries again). */
static int vd_program(bc_program *p, int force, int wild)
{
	static vd_gen g;
	int nops = (int)vd_range(3, 40), nout;

	memset(&g, 0, sizeof(g));
	g.p = p;
	g.last = -1;
	bc_init(p);
	for (int c = 0; c < VD_NCOLS; c++)
		bc_input(p, vd_schema[c].type, vd_schema[c].prec,
			 vd_schema[c].scale);
	for (int c = 0; c < VD_NCOLS; c++)
		if (vd_pct(70))
			vd_add(&g, bc_emit_load(p, c));
	for (int k = 0; k < 3; k++)
		vd_const(&g, wild);
	for (int k = 0; k < nops && !p->err; k++) {
		int op = force >= 0 && (k % 5 == 0 || k == nops - 1)
			     ? force
			     : vd_ops[vd_rand() % vd_nops];
		(void)vd_emit(&g, op, wild);
	}
	nout = (int)vd_range(1, 5);
	bc_emit_output(p, g.last);
	for (int k = 1; k < nout; k++)
		bc_emit_output(p, (int)(vd_rand() % p->nregs));
	return !p->err && !bc_check(p, NULL, 0);
}

/* ---- running and comparing --------------------------------------------- */

/* A backend: runs p over all rows of d, results in host arrays. */
typedef struct vd_backend {
	const char *name;
	int (*load)(vd_data *d);
	void (*unload)(vd_data *d);
	int (*run)(const bc_program *p, vd_data *d, gpu_col *out, char *err,
		   size_t errlen);
	void (*free_out)(const bc_program *p, gpu_col *out);
} vd_backend;

/* vm_run's results over all rows, batch by batch, copied out. */
typedef struct vd_ref {
	int rc;
	char err[256];
	uint8_t type[BC_MAX_OUTPUTS], scale[BC_MAX_OUTPUTS];
	uint8_t *nulls[BC_MAX_OUTPUTS];
	uint64_t *val[BC_MAX_OUTPUTS]; /* 8 bytes a row */
	vec_str *str[BC_MAX_OUTPUTS];
} vd_ref;

static vm_scratch vd_scratch;

static void vd_ref_free(const bc_program *p, vd_ref *r)
{
	for (uint32_t k = 0; k < p->noutputs; k++) {
		free(r->nulls[k]);
		free(r->val[k]);
		free(r->str[k]);
	}
	memset(r, 0, sizeof(*r));
}

static void vd_ref_run(const bc_program *p, vd_data *d, vd_ref *r)
{
	vec in[VD_NCOLS], out[BC_MAX_OUTPUTS];
	/* Text results live in the scratch arena only until the next
	 * batch; the ops gvm supports make no new text, so they point into
	 * the heap or the program, which outlive the run. */
	memset(r, 0, sizeof(*r));
	for (uint32_t k = 0; k < p->noutputs; k++) {
		r->nulls[k] = calloc(d->n + 1, 1);
		r->val[k] = calloc(d->n + 1, 8);
		r->str[k] = calloc(d->n + 1, sizeof(vec_str));
	}
	for (uint32_t b = 0; b < d->n || (b == 0 && d->n == 0);
	     b += VEC_BATCH) {
		uint32_t n = d->n - b < VEC_BATCH ? d->n - b : VEC_BATCH;
		for (int c = 0; c < VD_NCOLS; c++) {
			const gpu_col *col = &d->col[c];
			size_t w = col->type == BC_COL_TEXT ? sizeof(vec_str)
				   : col->type == BC_COL_INT32 ||
					   col->type == BC_COL_DATE ||
					   col->type == BC_COL_FLOAT
				       ? 4
				   : col->type == BC_COL_BOOL ? 1
							      : 8;
			/* Without a sel, the batch is a slice; with one, the
			 * sel is sliced and indexes the whole arrays. */
			size_t off = d->sel ? 0 : b;
			memset(&in[c], 0, sizeof(in[c]));
			in[c].type = col->type;
			in[c].prec = col->prec;
			in[c].scale = col->scale;
			in[c].count = n;
			in[c].v.data =
			    col->type == BC_COL_TEXT
				? (void *)(d->str[c] + off)
				: (void *)((char *)col->data + off * w);
			in[c].nulls = col->nulls + off;
			in[c].sel = d->sel ? d->sel + b : NULL;
		}
		r->rc = vm_run(p, in, VD_NCOLS, n, out, &vd_scratch, r->err,
			       sizeof(r->err));
		if (r->rc)
			return;
		for (uint32_t k = 0; k < p->noutputs; k++) {
			const vec *o = &out[k];
			r->type[k] = o->type;
			r->scale[k] = o->scale;
			for (uint32_t i = 0; i < n; i++) {
				uint64_t v = 0;
				r->nulls[k][b + i] = o->type == VEC_NULL ||
						     (o->nulls && o->nulls[i]);
				switch (o->type) {
				case BC_COL_BOOL:
					v = o->v.u8[i];
					break;
				case BC_COL_DATE:
					v = (uint64_t)(int64_t)o->v.i32[i];
					break;
				case BC_COL_INT64:
				case BC_COL_DEC:
				case BC_COL_DOUBLE:
					memcpy(&v, &o->v.i64[i], 8);
					break;
				case BC_COL_TEXT:
					r->str[k][b + i] = o->v.str[i];
					break;
				}
				r->val[k][b + i] = v;
			}
		}
		if (d->n == 0)
			break;
	}
}

/* Compares the backend's outputs with vm_run's; returns 1 if they agree
 * (and reports the first difference otherwise). */
static int vd_compare(const bc_program *p, vd_data *d, const vd_ref *r, int rc,
		      const char *err, gpu_col *out, const char *what)
{
	if (rc != r->rc || (rc && strcmp(err, r->err))) {
		CHECKF(0, "%s: rc %d '%s', vm_run %d '%s'", what, rc, err,
		       r->rc, r->err);
		return 0;
	}
	if (rc)
		return 1;
	for (uint32_t k = 0; k < p->noutputs; k++) {
		const gpu_col *o = &out[k];
		if (d->n &&
		    (o->type != r->type[k] ||
		     (o->type == BC_COL_DEC && o->scale != r->scale[k]))) {
			CHECKF(0, "%s: output %u type %d/%d, vm_run %d/%d",
			       what, k, o->type, o->scale, r->type[k],
			       r->scale[k]);
			return 0;
		}
		for (uint32_t i = 0; i < d->n; i++) {
			int bad = 0;
			uint64_t v = 0;
			if (o->nulls[i] != r->nulls[k][i]) {
				CHECKF(0,
				       "%s: output %u row %u null %d, "
				       "vm_run %d",
				       what, k, i, o->nulls[i], r->nulls[k][i]);
				return 0;
			}
			if (o->nulls[i])
				continue;
			switch (o->type) {
			case BC_COL_BOOL:
				v = ((uint8_t *)o->data)[i];
				break;
			case BC_COL_DATE:
				v = (uint64_t)(int64_t)((int32_t *)o->data)[i];
				break;
			case BC_COL_INT64:
			case BC_COL_DEC:
			case BC_COL_DOUBLE:
				memcpy(&v, (char *)o->data + 8 * (size_t)i, 8);
				break;
			case BC_COL_TEXT: {
				gpu_str s = ((gpu_str *)o->data)[i];
				const char *t =
				    s.off & GPU_STR_CONST
					? p->text + (s.off & ~GPU_STR_CONST)
					: d->heap + s.off;
				vec_str c = r->str[k][i];
				bad = s.len != c.len ||
				      (s.len && memcmp(t, c.ptr, s.len));
				if (bad)
					CHECKF(0,
					       "%s: output %u row %u '%.*s', "
					       "vm_run '%.*s'",
					       what, k, i, (int)s.len, t,
					       (int)c.len, c.ptr);
				break;
			}
			}
			if (o->type != BC_COL_TEXT && v != r->val[k][i]) {
				CHECKF(0,
				       "%s: output %u (type %d) row %u: "
				       "%#llx, vm_run %#llx",
				       what, k, o->type, i,
				       (unsigned long long)v,
				       (unsigned long long)r->val[k][i]);
				bad = 1;
			}
			if (bad)
				return 0;
		}
	}
	return 1;
}

static void vd_dump(const bc_program *p)
{
	static char dis[65536];

	bc_disasm(p, dis, sizeof(dis));
	fprintf(stderr, "program:\n%s", dis);
}

/* Counters of one differential run, for the summary line. */
typedef struct vd_stats {
	unsigned programs, ok, errors, failed, rows;
	unsigned forced[BC_NOPS];
} vd_stats;

/*
 * ndata data sets of nrows rows, nprog programs each; every supported op
 * is forced into programs in turn.  Returns the number of mismatches.
 */
static unsigned vd_differential(const vd_backend *be, int ndata, uint32_t nrows,
				int nprog, vd_stats *st)
{
	static bc_program p;
	static gpu_col out[BC_MAX_OUTPUTS];
	static vd_ref ref;
	char err[256], what[128];
	int opi = 0;

	memset(st, 0, sizeof(*st));
	if (getenv("VD_SEED"))
		vd_rng = strtoull(getenv("VD_SEED"), NULL, 0) | 1;
	if (!vd_nops)
		vd_ops_init();
	for (int ds = 0; ds < ndata; ds++) {
		vd_data d;
		int wild = ds % 3 == 2;
		uint32_t n = ds == 0 ? 1 : ds == 1 ? 0 : nrows - (uint32_t)ds;
		vd_data_make(&d, n, wild, ds % 4 == 3, ds % 5 == 4);
		if (be->load && be->load(&d)) {
			CHECKF(0, "%s: loading data set %d failed", be->name,
			       ds);
			vd_data_free(&d);
			st->failed++;
			return st->failed;
		}
		for (int k = 0; k < nprog; k++) {
			int rc, force = vd_ops[opi % vd_nops];
			if (!vd_program(&p, force, wild))
				continue;
			opi++;
			st->forced[force]++;
			st->programs++;
			st->rows += d.n;
			vd_ref_run(&p, &d, &ref);
			rc = be->run(&p, &d, out, err, sizeof(err));
			snprintf(what, sizeof(what), "%s: data %d program %d",
				 be->name, ds, k);
			if (!vd_compare(&p, &d, &ref, rc, err, out, what)) {
				st->failed++;
				if (st->failed <= 3)
					vd_dump(&p);
			} else if (rc) {
				st->errors++;
			} else {
				st->ok++;
			}
			if (!rc)
				be->free_out(&p, out);
			vd_ref_free(&p, &ref);
		}
		if (be->unload)
			be->unload(&d);
		vd_data_free(&d);
	}
	return st->failed;
}

#endif /* GPMDB_VMDIFF_H */
