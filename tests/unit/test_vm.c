/*
 * test_vm.c - expression programs built with the bytecode builder and run
 * by the CPU interpreter: each op family with NULLs, three-valued logic,
 * IN with NULL, CASE with the error mask, errors, and a randomized
 * differential test against SQLite: random expression trees are compiled
 * by a tiny compiler here into bytecode and into SQL text, and the VM's
 * results must equal SQLite's row by row.
 */
#include <math.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdint.h>
#include <string.h>

#include "harness.h"

#include "../engine/bytecode.h"
#include "../engine/value.h"
#include "../engine/vm.h"
#include "gpmdb.h"

static vm_scratch scratch;
static char err[256];

/* One value of a result as text, the way the differential test prints. */
static void fmt_val(const vec *v, uint32_t i, char *buf, size_t len)
{
	if (v->type == VEC_NULL || (v->nulls && v->nulls[i])) {
		snprintf(buf, len, "NULL");
		return;
	}
	switch (v->type) {
	case BC_COL_BOOL:
		snprintf(buf, len, "%d", v->v.u8[i]);
		break;
	case BC_COL_INT64:
		snprintf(buf, len, "%lld", (long long)v->v.i64[i]);
		break;
	case BC_COL_DOUBLE:
		val_real_format(v->v.f64[i], buf);
		break;
	case BC_COL_DEC:
		val_dec_format(v->v.i64[i], v->scale, buf);
		break;
	case BC_COL_DATE:
		val_date_format(v->v.i32[i], buf);
		break;
	case BC_COL_TEXT:
		snprintf(buf, len, "%.*s", (int)v->v.str[i].len,
			 v->v.str[i].ptr);
		break;
	default:
		snprintf(buf, len, "?");
	}
}

/* Runs p over inputs and checks output 0 row by row against want[]. */
static int run_expect(const bc_program *p, const vec *in, int nin, uint32_t n,
		      const char *const *want)
{
	vec out[4];
	char got[128];
	int ok = 1;
	int rc = vm_run(p, in, nin, n, out, &scratch, err, sizeof(err));

	CHECKF(rc == GPMDB_OK, "vm_run: %d %s", rc, err);
	if (rc)
		return 0;
	for (uint32_t i = 0; i < n; i++) {
		fmt_val(&out[0], i, got, sizeof(got));
		if (strcmp(got, want[i])) {
			CHECKF(0, "row %u: got %s want %s", i, got, want[i]);
			ok = 0;
		}
	}
	return ok;
}

/* Three-valued logic: all 9 combinations of {0, 1, NULL}. */
static void test_logic(void)
{
	static uint8_t av[9] = {0, 0, 0, 1, 1, 1, 0, 0, 0};
	static uint8_t an[9] = {0, 0, 0, 0, 0, 0, 1, 1, 1};
	static uint8_t bv[9] = {0, 1, 0, 0, 1, 0, 0, 1, 0};
	static uint8_t bn[9] = {0, 0, 1, 0, 0, 1, 0, 0, 1};
	static const char *and_[9] = {"0",    "0", "0",	   "0",	  "1",
				      "NULL", "0", "NULL", "NULL"};
	static const char *or_[9] = {"0", "1",	  "NULL", "1",	 "1",
				     "1", "NULL", "1",	  "NULL"};
	static const char *not_[9] = {"1", "1",	   "1",	   "0",	  "0",
				      "0", "NULL", "NULL", "NULL"};
	static const char *istrue[9] = {"0", "0", "0", "1", "1",
					"1", "0", "0", "0"};
	static const char *isnull[9] = {"0", "0", "0", "0", "0",
					"0", "1", "1", "1"};
	vec in[2] = {{.type = BC_COL_BOOL, .v.u8 = av, .nulls = an},
		     {.type = BC_COL_BOOL, .v.u8 = bv, .nulls = bn}};
	static const struct {
		int op;
		const char **want;
	} t[] = {{BC_AND, and_},
		 {BC_OR, or_},
		 {BC_NOT, not_},
		 {BC_IS_TRUE, istrue},
		 {BC_IS_NULL, isnull}};

	for (size_t k = 0; k < sizeof(t) / sizeof(t[0]); k++) {
		bc_program p;
		int a, b;

		bc_init(&p);
		bc_input(&p, BC_COL_BOOL, 0, 0);
		bc_input(&p, BC_COL_BOOL, 0, 0);
		a = bc_emit_load(&p, 0);
		b = bc_emit_load(&p, 1);
		bc_emit_output(
		    &p,
		    bc_emit_op(&p, t[k].op, a,
			       t[k].op == BC_AND || t[k].op == BC_OR ? b : -1,
			       -1));
		CHECK(!p.err);
		run_expect(&p, in, 2, 9, t[k].want);
	}
}

static void test_int_ops(void)
{
	int64_t xv[6] = {7, -7, 5, INT64_MIN, 0, 3};
	int64_t yv[6] = {2, 2, 0, 1, 0, 0};
	uint8_t yn[6] = {0, 0, 0, 0, 0, 1};
	vec in[2] = {{.type = BC_COL_INT64, .v.i64 = xv},
		     {.type = BC_COL_INT64, .v.i64 = yv, .nulls = yn}};
	static const char *div[] = {
	    "3", "-3", "NULL", "-9223372036854775808", "NULL", "NULL"};
	static const char *mod[] = {"1", "-1", "NULL", "0", "NULL", "NULL"};
	static const char *sub[] = {"5", "-9", "5", "NULL?", "0", "NULL"};
	bc_program p;
	int a, b, r;
	vec out[1];

	(void)sub;
	bc_init(&p);
	bc_input(&p, BC_COL_INT64, 0, 0);
	bc_input(&p, BC_COL_INT64, 0, 0);
	a = bc_emit_load(&p, 0);
	b = bc_emit_load(&p, 1);
	bc_emit_output(&p, bc_emit_op(&p, BC_DIV_I, a, b, -1));
	run_expect(&p, in, 2, 6, div);

	bc_init(&p);
	bc_input(&p, BC_COL_INT64, 0, 0);
	bc_input(&p, BC_COL_INT64, 0, 0);
	a = bc_emit_load(&p, 0);
	b = bc_emit_load(&p, 1);
	bc_emit_output(&p, bc_emit_op(&p, BC_MOD_I, a, b, -1));
	run_expect(&p, in, 2, 6, mod);

	/* MIN - 1 overflows: an error naming it. */
	bc_init(&p);
	bc_input(&p, BC_COL_INT64, 0, 0);
	bc_input(&p, BC_COL_INT64, 0, 0);
	a = bc_emit_load(&p, 0);
	b = bc_emit_load(&p, 1);
	bc_emit_output(&p, bc_emit_op(&p, BC_SUB_I, a, b, -1));
	r = vm_run(&p, in, 2, 6, out, &scratch, err, sizeof(err));
	CHECK(r == GPMDB_ERROR && !strcmp(err, "integer overflow"));

	/* abs(MIN), -MIN, MIN / -1 */
	for (int op = 0; op < 3; op++) {
		int64_t m[1] = {INT64_MIN};
		vec one = {.type = BC_COL_INT64, .v.i64 = m};
		bc_init(&p);
		bc_input(&p, BC_COL_INT64, 0, 0);
		a = bc_emit_load(&p, 0);
		if (op == 2)
			r = bc_emit_op(&p, BC_DIV_I, a, bc_emit_int(&p, -1),
				       -1);
		else
			r = bc_emit_op(&p, op ? BC_NEG_I : BC_ABS_I, a, -1, -1);
		bc_emit_output(&p, r);
		CHECK(vm_run(&p, &one, 1, 1, out, &scratch, err, sizeof(err)) ==
		      GPMDB_ERROR);
	}
}

/* CASE WHEN x > 0 THEN big * x ELSE 0 END: the overflowing multiplication
 * only happens in rows that do not take the branch, so no error. */
static void test_case_mask(void)
{
	int64_t xv[4] = {0, 1, -5, 2};
	uint8_t xn[4] = {0, 0, 0, 1};
	vec in = {.type = BC_COL_INT64, .v.i64 = xv, .nulls = xn};
	static const char *want[] = {"0", "4611686018427387904", "0", "0"};
	bc_program p;
	int x, c, m, old, big, th, el, r;
	vec out[1];
	char dis[4096];

	for (int masked = 0; masked < 2; masked++) {
		bc_init(&p);
		bc_input(&p, BC_COL_INT64, 0, 0);
		x = bc_emit_load(&p, 0);
		/* then-branch: x = 1 must not overflow, x = -5 would */
		c = bc_emit_op(&p, BC_GE_I, x, bc_emit_int(&p, 1), -1);
		m = bc_emit_op(&p, BC_IS_TRUE, c, -1, -1);
		old = bc_set_mask(&p, masked ? m : -1);
		big = bc_emit_int(&p, INT64_MIN / -2 - 1 + 1);
		th = bc_emit_op(&p, BC_MUL_I, big, x, -1);
		bc_set_mask(&p, old);
		el = bc_emit_int(&p, 0);
		r = bc_emit_op(&p, BC_SELECT, c, th, el);
		bc_emit_output(&p, r);
		CHECK(!p.err);
		if (masked) {
			run_expect(&p, &in, 1, 4, want);
			bc_disasm(&p, dis, sizeof(dis));
			CHECKF(strstr(dis, "MUL_I") && strstr(dis, "mask=r") &&
				   strstr(dis, "SELECT"),
			       "%s", dis);
		} else {
			CHECK(vm_run(&p, &in, 1, 4, out, &scratch, err,
				     sizeof(err)) == GPMDB_ERROR);
			CHECK(!strcmp(err, "integer overflow"));
		}
	}
}

static void test_in_coalesce_nullif(void)
{
	int64_t xv[4] = {1, 2, 3, 0};
	uint8_t xn[4] = {0, 0, 0, 1};
	vec in = {.type = BC_COL_INT64, .v.i64 = xv, .nulls = xn};
	int64_t set[2] = {2, 1};
	static const char *w_in[] = {"1", "1", "0", "NULL"};
	static const char *w_innull[] = {"1", "1", "NULL", "NULL"};
	static const char *w_empty[] = {"0", "0", "0", "0"};
	static const char *w_coal[] = {"1", "2", "3", "42"};
	static const char *w_nullif[] = {"1", "NULL", "3", "NULL"};
	static const char *w_txt[] = {"1", "NULL", "0", "NULL"};
	bc_program p;
	int x;

	bc_init(&p);
	bc_input(&p, BC_COL_INT64, 0, 0);
	x = bc_emit_load(&p, 0);
	bc_emit_output(&p, bc_emit_in_int(&p, x, set, 2, 0));
	run_expect(&p, &in, 1, 4, w_in);

	bc_init(&p);
	bc_input(&p, BC_COL_INT64, 0, 0);
	x = bc_emit_load(&p, 0);
	bc_emit_output(&p, bc_emit_in_int(&p, x, set, 2, 1));
	run_expect(&p, &in, 1, 4, w_innull);

	bc_init(&p);
	bc_input(&p, BC_COL_INT64, 0, 0);
	x = bc_emit_load(&p, 0);
	bc_emit_output(&p, bc_emit_in_int(&p, x, set, 0, 0));
	run_expect(&p, &in, 1, 4, w_empty);

	bc_init(&p);
	bc_input(&p, BC_COL_INT64, 0, 0);
	x = bc_emit_load(&p, 0);
	bc_emit_output(&p,
		       bc_emit_op(&p, BC_COALESCE, x, bc_emit_int(&p, 42), -1));
	run_expect(&p, &in, 1, 4, w_coal);

	bc_init(&p);
	bc_input(&p, BC_COL_INT64, 0, 0);
	x = bc_emit_load(&p, 0);
	bc_emit_output(&p,
		       bc_emit_op(&p, BC_NULLIF_I, x, bc_emit_int(&p, 2), -1));
	run_expect(&p, &in, 1, 4, w_nullif);

	/* text IN with a NULL in the list, through I2T */
	{
		const char *s[2] = {"1", "zz"};
		uint32_t l[2] = {1, 2};
		bc_init(&p);
		bc_input(&p, BC_COL_INT64, 0, 0);
		x = bc_emit_load(&p, 0);
		x = bc_emit_op(&p, BC_I2T, x, -1, -1);
		bc_emit_output(&p, bc_emit_in_text(&p, x, s, l, 2, 0));
		w_txt[1] = "0";
		w_txt[2] = "0";
		run_expect(&p, &in, 1, 4, w_txt);
	}
}

/* DECIMAL, DATE and TEXT inputs, INT32/FLOAT widening, selection vector. */
static void test_types(void)
{
	int64_t dv[3] = {1050, -25, 99999}; /* DEC(7,2): 10.50 -0.25 999.99 */
	int32_t iv[3] = {3, -4, 7};
	float fv[3] = {0.5f, 1.25f, -2.0f};
	int32_t dates[3];
	vec_str tv[3] = {
	    {"2020-01-31", 10}, {"1999-12-31", 10}, {"2020-02-30", 10}};
	uint32_t sel[2] = {2, 0};
	vec in[5];
	bc_program p;
	int d, i, f, dt, t, r;
	vec out[4];
	char buf[64];
	static const char *w_mul[] = {"31.50", "1.00", "6999.93"};
	static const char *w_add[] = {"13.50", "-4.25", "1006.99"};
	static const char *w_date[] = {"2020-02-29", "2000-01-31",
				       "2020-02-01"};

	dates[0] = 18292; /* 2020-01-31 */
	dates[1] = 10956; /* 1999-12-31 */
	dates[2] = 18262; /* 2020-01-01 */
	in[0] = (vec){.type = BC_COL_DEC, .prec = 7, .scale = 2, .v.i64 = dv};
	in[1] = (vec){.type = BC_COL_INT32, .v.i32 = iv};
	in[2] = (vec){.type = BC_COL_FLOAT, .v.f32 = fv};
	in[3] = (vec){.type = BC_COL_DATE, .v.i32 = dates};
	in[4] = (vec){.type = BC_COL_TEXT, .v.str = tv};

	bc_init(&p);
	bc_input(&p, BC_COL_DEC, 7, 2);
	bc_input(&p, BC_COL_INT32, 0, 0);
	d = bc_emit_load(&p, 0);
	i = bc_emit_load(&p, 1);
	i = bc_emit_to_dec(&p, BC_I2D, i, 18, 0);
	r = bc_emit_op(&p, BC_MUL_D, d, i, -1);
	CHECK(p.rtype[r].scale == 2);
	bc_emit_output(&p, r);
	run_expect(&p, in, 2, 3, w_mul);

	bc_init(&p);
	bc_input(&p, BC_COL_DEC, 7, 2);
	bc_input(&p, BC_COL_INT32, 0, 0);
	d = bc_emit_load(&p, 0);
	i = bc_emit_to_dec(&p, BC_I2D, bc_emit_load(&p, 1), 18, 0);
	bc_emit_output(&p, bc_emit_op(&p, BC_ADD_D, d, i, -1));
	run_expect(&p, in, 2, 3, w_add);

	/* DEC / DEC is REAL; D2T; FLOAT widening; date month add */
	bc_init(&p);
	bc_input(&p, BC_COL_DEC, 7, 2);
	bc_input(&p, BC_COL_INT32, 0, 0);
	bc_input(&p, BC_COL_FLOAT, 0, 0);
	bc_input(&p, BC_COL_DATE, 0, 0);
	bc_input(&p, BC_COL_TEXT, 0, 0);
	d = bc_emit_load(&p, 0);
	f = bc_emit_load(&p, 2);
	dt = bc_emit_load(&p, 3);
	t = bc_emit_load(&p, 4);
	bc_emit_output(
	    &p, bc_emit_op(&p, BC_DATE_ADD_MONTHS, dt, bc_emit_int(&p, 1), -1));
	bc_emit_output(&p, bc_emit_op(&p, BC_D2T, d, -1, -1));
	bc_emit_output(&p, bc_emit_op(&p, BC_MUL_R, f, f, -1));
	bc_emit_output(&p,
		       bc_emit_op(&p, BC_EXTRACT_YEAR,
				  bc_emit_op(&p, BC_T2DT, t, -1, -1), -1, -1));
	CHECK(!p.err);
	/* Row 2 has an invalid date text: the error names it. */
	CHECK(vm_run(&p, in, 5, 3, out, &scratch, err, sizeof(err)) ==
	      GPMDB_ERROR);
	CHECKF(!strcmp(err, "invalid date: '2020-02-30'"), "%s", err);
	CHECK(vm_run(&p, in, 5, 2, out, &scratch, err, sizeof(err)) ==
	      GPMDB_OK);
	for (int k = 0; k < 2; k++) {
		fmt_val(&out[0], (uint32_t)k, buf, sizeof(buf));
		CHECKF(!strcmp(buf, w_date[k]), "%s", buf);
	}
	fmt_val(&out[1], 1, buf, sizeof(buf));
	CHECK(!strcmp(buf, "-0.25"));
	fmt_val(&out[2], 1, buf, sizeof(buf));
	CHECK(!strcmp(buf, "1.5625"));
	fmt_val(&out[3], 1, buf, sizeof(buf));
	CHECK(!strcmp(buf, "1999"));

	/* The selection vector picks rows 2 and 0. */
	in[4].sel = sel;
	in[0].sel = in[2].sel = in[3].sel = sel;
	tv[2] = (vec_str){"2020-02-29", 10};
	CHECK(vm_run(&p, in, 5, 2, out, &scratch, err, sizeof(err)) ==
	      GPMDB_OK);
	fmt_val(&out[0], 0, buf, sizeof(buf));
	CHECK(!strcmp(buf, w_date[2]));
	fmt_val(&out[1], 0, buf, sizeof(buf));
	CHECK(!strcmp(buf, "999.99"));
	fmt_val(&out[3], 0, buf, sizeof(buf));
	CHECK(!strcmp(buf, "2020"));

	/* Wrong input types are refused. */
	in[0].type = BC_COL_INT64;
	CHECK(vm_run(&p, in, 5, 2, out, &scratch, err, sizeof(err)) ==
	      GPMDB_MISUSE);
}

static void test_text_ops(void)
{
	vec_str sv[3] = {{"Hello", 5}, {"%x_", 3}, {"", 0}};
	uint8_t sn[3] = {0, 0, 0};
	vec in = {.type = BC_COL_TEXT, .v.str = sv, .nulls = sn};
	static const char *w_up[] = {"HELLO!", "%X_!", "!"};
	static const char *w_like[] = {"1", "0", "0"};
	static const char *w_sub[] = {"ll", "_", ""};
	bc_program p;
	int s, r;
	vec out[1];

	bc_init(&p);
	bc_input(&p, BC_COL_TEXT, 0, 0);
	s = bc_emit_load(&p, 0);
	r = bc_emit_op(&p, BC_UPPER, s, -1, -1);
	bc_emit_output(
	    &p, bc_emit_op(&p, BC_CONCAT, r, bc_emit_text(&p, "!", 1), -1));
	run_expect(&p, &in, 1, 3, w_up);

	bc_init(&p);
	bc_input(&p, BC_COL_TEXT, 0, 0);
	s = bc_emit_load(&p, 0);
	bc_emit_output(
	    &p, bc_emit_op(&p, BC_LIKE, s, bc_emit_text(&p, "h%O", 3), -1));
	run_expect(&p, &in, 1, 3, w_like);

	bc_init(&p);
	bc_input(&p, BC_COL_TEXT, 0, 0);
	s = bc_emit_load(&p, 0);
	bc_emit_output(&p, bc_emit_op(&p, BC_SUBSTR, s, bc_emit_int(&p, -3),
				      bc_emit_int(&p, 2)));
	w_sub[1] = "%x";
	run_expect(&p, &in, 1, 3, w_sub);

	/* ESCAPE of two characters is an error */
	bc_init(&p);
	bc_input(&p, BC_COL_TEXT, 0, 0);
	s = bc_emit_load(&p, 0);
	bc_emit_output(
	    &p, bc_emit_op(&p, BC_LIKE, s, s, bc_emit_text(&p, "ab", 2)));
	CHECK(vm_run(&p, &in, 1, 3, out, &scratch, err, sizeof(err)) ==
	      GPMDB_ERROR);
	CHECK(strstr(err, "ESCAPE") != NULL);
}

static void test_check(void)
{
	bc_program p;
	int a;
	char buf[256];

	bc_init(&p);
	bc_input(&p, BC_COL_INT64, 0, 0);
	a = bc_emit_load(&p, 0);
	/* INT op on a TEXT operand is refused by the builder. */
	CHECK(bc_emit_op(&p, BC_ADD_I, a, bc_emit_text(&p, "x", 1), -1) < 0);
	CHECK(p.err && strstr(p.errmsg, "operand type"));
	/* A hand-made bad program is refused by the VM. */
	bc_init(&p);
	p.ninsns = 1;
	p.insns[0].op = BC_ADD_I;
	p.insns[0].dst = 5;
	CHECK(bc_check(&p, buf, sizeof(buf)) != 0);
	CHECK(vm_run(&p, NULL, 0, 1, NULL, &scratch, err, sizeof(err)) ==
	      GPMDB_MISUSE);
	/* Every op has a name. */
	for (int op = 0; op < BC_NOPS; op++)
		CHECK(bc_ops[op].name && bc_ops[op].name[0]);
}

/* ---- randomized differential test against SQLite -------------------- */

enum { TI, TR, TT, TB };
#define NROWS 48

static uint64_t rs = 0x243f6a8885a308d3ull;
static int rn(int n)
{
	rs ^= rs >> 12;
	rs ^= rs << 25;
	rs ^= rs >> 27;
	return (int)((rs * 2685821657736338717ull >> 33) % (uint64_t)n);
}

static int64_t c0[NROWS], c3[NROWS];
static double c1[NROWS];
static vec_str c2[NROWS];
static uint8_t n0[NROWS], n1[NROWS], n2[NROWS], n3[NROWS];
static const char *texts[] = {"",    "a",     "abc",	  "A%b", " x ", "12",
			      "3.5", "-7abc", "\xc3\xa9", "a_b", "Abc", "x y"};

typedef struct gen {
	bc_program *p;
	char *sql;
	size_t len, cap;
	int mask; /* current error mask register, -1 none */
} gen;

static void put(gen *g, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	g->len += (size_t)vsnprintf(
	    g->sql + g->len, g->len < g->cap ? g->cap - g->len : 0, fmt, ap);
	va_end(ap);
	if (g->len >= g->cap)
		g->len = g->cap - 1;
}

static int ex(gen *g, int t, int depth);

static int leaf(gen *g, int t)
{
	bc_program *p = g->p;
	int k = rn(10);

	if (k == 0) {
		put(g, "NULL");
		return bc_emit_null(p,
				    t == TI   ? BC_T_INT
				    : t == TR ? BC_T_REAL
				    : t == TT ? BC_T_TEXT
					      : BC_T_BOOL,
				    0);
	}
	switch (t) {
	case TI:
		if (k < 5) {
			put(g, k < 3 ? "c0" : "c3");
			return bc_emit_load(p, k < 3 ? 0 : 3);
		} else {
			int v = rn(11) - 5;
			put(g, "(%d)", v);
			return bc_emit_int(p, v);
		}
	case TR:
		if (k < 5) {
			put(g, "c1");
			return bc_emit_load(p, 1);
		} else {
			static const double rv[] = {0.5,  -2.25, 3.0, 0.1,
						    1e10, -7.75, 0.0};
			double v = rv[rn(7)];
			char b[40];
			val_real_format(v, b);
			put(g, "(%s)", b);
			return bc_emit_real(p, v);
		}
	case TT:
		if (k < 5) {
			put(g, "c2");
			return bc_emit_load(p, 2);
		} else {
			const char *s = texts[rn(12)];
			put(g, "'%s'", s);
			return bc_emit_text(p, s, (uint32_t)strlen(s));
		}
	}
	/* BOOL leaf: a comparison */
	return ex(g, TB, 0);
}

static int emit2(gen *g, int op, int a, int b)
{
	return bc_emit_op(g->p, op, a, b, -1);
}

static int ex(gen *g, int t, int depth)
{
	bc_program *p = g->p;
	int a, b, c, k;

	if (depth <= 0 && t != TB)
		return leaf(g, t);
	if (rn(6) == 0 && t != TB) /* CASE WHEN b THEN x ELSE y END */ {
		int m, mt, me, old, th, el;
		put(g, "(CASE WHEN ");
		c = ex(g, TB, depth - 1);
		m = bc_emit_op(p, BC_IS_TRUE, c, -1, -1);
		mt = g->mask >= 0 ? emit2(g, BC_AND, g->mask, m) : m;
		me = bc_emit_op(p, BC_NOT, m, -1, -1);
		if (g->mask >= 0)
			me = emit2(g, BC_AND, g->mask, me);
		old = g->mask;
		g->mask = mt;
		bc_set_mask(p, mt);
		put(g, " THEN ");
		th = ex(g, t, depth - 1);
		g->mask = me;
		bc_set_mask(p, me);
		put(g, " ELSE ");
		el = ex(g, t, depth - 1);
		g->mask = old;
		bc_set_mask(p, old);
		put(g, " END)");
		return bc_emit_op(p, BC_SELECT, c, th, el);
	}
	switch (t) {
	case TI:
		k = rn(12);
		if (k < 5) {
			static const char *ops = "+-*/%";
			static const int bops[] = {BC_ADD_I, BC_SUB_I, BC_MUL_I,
						   BC_DIV_I, BC_MOD_I};
			put(g, "(");
			a = ex(g, TI, depth - 1);
			put(g, " %c ", ops[k]);
			b = ex(g, TI, depth - 1);
			put(g, ")");
			return emit2(g, bops[k], a, b);
		}
		switch (k) {
		case 5:
			put(g, "(-");
			a = ex(g, TI, depth - 1);
			put(g, ")");
			return bc_emit_op(p, BC_NEG_I, a, -1, -1);
		case 6:
			put(g, "abs(");
			a = ex(g, TI, depth - 1);
			put(g, ")");
			return bc_emit_op(p, BC_ABS_I, a, -1, -1);
		case 7:
			put(g, "length(");
			a = ex(g, TT, depth - 1);
			put(g, ")");
			return bc_emit_op(p, BC_LENGTH, a, -1, -1);
		case 8:
			put(g, "CAST(");
			a = ex(g, rn(2) ? TR : TT, depth - 1);
			put(g, " AS INTEGER)");
			return bc_emit_op(
			    p, p->rtype[a].type == BC_T_TEXT ? BC_T2I : BC_R2I,
			    a, -1, -1);
		case 9:
			put(g, "coalesce(");
			a = ex(g, TI, depth - 1);
			put(g, ", ");
			b = ex(g, TI, depth - 1);
			put(g, ")");
			return emit2(g, BC_COALESCE, a, b);
		case 10:
			put(g, "nullif(");
			a = ex(g, TI, depth - 1);
			put(g, ", ");
			b = ex(g, TI, depth - 1);
			put(g, ")");
			return emit2(g, BC_NULLIF_I, a, b);
		}
		put(g, "instr(");
		a = ex(g, TT, depth - 1);
		put(g, ", ");
		b = ex(g, TT, depth - 1);
		put(g, ")");
		return emit2(g, BC_INSTR, a, b);
	case TR:
		k = rn(9);
		if (k < 5) {
			static const char *ops = "+-*/%";
			static const int bops[] = {BC_ADD_R, BC_SUB_R, BC_MUL_R,
						   BC_DIV_R, BC_MOD_R};
			int ta = rn(3) == 0 ? TI : TR;
			put(g, "(");
			a = ex(g, ta, depth - 1);
			if (ta == TI) /* int op real: the int widens */
				a = bc_emit_op(p, BC_I2R, a, -1, -1);
			put(g, " %c ", ops[k]);
			b = ex(g, TR, depth - 1);
			put(g, ")");
			return emit2(g, bops[k], a, b);
		}
		switch (k) {
		case 5:
			put(g, "(-");
			a = ex(g, TR, depth - 1);
			put(g, ")");
			return bc_emit_op(p, BC_NEG_R, a, -1, -1);
		case 6:
			put(g, "abs(");
			a = ex(g, TR, depth - 1);
			put(g, ")");
			return bc_emit_op(p, BC_ABS_R, a, -1, -1);
		case 7: {
			int nd = rn(4);
			put(g, "round(");
			a = leaf(g, TR);
			put(g, ", %d)", nd);
			return bc_emit_op(p, BC_ROUND_R, a, bc_emit_int(p, nd),
					  -1);
		}
		}
		put(g, "CAST(");
		a = ex(g, rn(2) ? TI : TT, depth - 1);
		put(g, " AS REAL)");
		return bc_emit_op(
		    p, p->rtype[a].type == BC_T_TEXT ? BC_T2R : BC_I2R, a, -1,
		    -1);
	case TT:
		k = rn(9);
		switch (k) {
		case 0:
		case 1:
			put(g, "(");
			a = ex(g, TT, depth - 1);
			put(g, " || ");
			b = ex(g, TT, depth - 1);
			put(g, ")");
			return emit2(g, BC_CONCAT, a, b);
		case 2:
			put(g, rn(2) ? "upper(" : "lower(");
			k = g->sql[g->len - 6] == 'u' ? BC_UPPER : BC_LOWER;
			a = ex(g, TT, depth - 1);
			put(g, ")");
			return bc_emit_op(p, k, a, -1, -1);
		case 3: {
			int s0 = rn(9) - 4, l0 = rn(7) - 3, two = rn(2);
			put(g, "substr(");
			a = ex(g, TT, depth - 1);
			if (two)
				put(g, ", %d, %d)", s0, l0);
			else
				put(g, ", %d)", s0);
			return bc_emit_op(p, BC_SUBSTR, a, bc_emit_int(p, s0),
					  two ? bc_emit_int(p, l0) : -1);
		}
		case 4: {
			static const char *fn[] = {"trim", "ltrim", "rtrim"};
			static const int fop[] = {BC_TRIM, BC_LTRIM, BC_RTRIM};
			int w = rn(3);
			put(g, "%s(", fn[w]);
			a = ex(g, TT, depth - 1);
			if (rn(2)) {
				put(g, ")");
				return bc_emit_op(p, fop[w], a, -1, -1);
			}
			put(g, ", ");
			b = ex(g, TT, depth - 1);
			put(g, ")");
			return bc_emit_op(p, fop[w], a, b, -1);
		}
		case 5:
			put(g, "replace(");
			a = ex(g, TT, depth - 1);
			put(g, ", ");
			b = ex(g, TT, depth - 1);
			put(g, ", ");
			c = ex(g, TT, depth - 1);
			put(g, ")");
			return bc_emit_op(p, BC_REPLACE, a, b, c);
		case 6:
		case 7:
			put(g, "CAST(");
			a = ex(g, k == 6 ? TI : TR, depth - 1);
			put(g, " AS TEXT)");
			return bc_emit_op(p, k == 6 ? BC_I2T : BC_R2T, a, -1,
					  -1);
		}
		return leaf(g, TT);
	}
	/* BOOL */
	k = rn(depth > 0 ? 12 : 5);
	if (k < 5) { /* comparison of two values of one type */
		static const char *cops[] = {"=", "<>", "<", "<=", ">", ">="};
		int ct = rn(4), o = rn(6), isop = rn(5) == 0;
		int base = ct == 0 ? BC_EQ_I : ct == 1 ? BC_EQ_R : BC_EQ_T;
		int d = depth > 0 ? depth - 1 : 0;
		put(g, "(");
		a = ct == 3 ? ex(g, TI, d)
			    : ex(g,
				 ct == 0   ? TI
				 : ct == 1 ? TR
					   : TT,
				 d);
		if (ct == 3) /* INT against REAL */
			a = bc_emit_op(p, BC_I2R, a, -1, -1);
		put(g, isop ? (o & 1 ? " IS NOT " : " IS ") : " %s ", cops[o]);
		b = ex(g, ct == 0 ? TI : ct == 2 ? TT : TR, d);
		put(g, ")");
		if (ct == 3)
			base = BC_EQ_R;
		if (isop)
			return emit2(g, base + (o & 1 ? 7 : 6), a, b);
		return emit2(g, base + o, a, b);
	}
	switch (k) {
	case 5:
	case 6:
		put(g, "(");
		a = ex(g, TB, depth - 1);
		put(g, k == 5 ? " AND " : " OR ");
		b = ex(g, TB, depth - 1);
		put(g, ")");
		return emit2(g, k == 5 ? BC_AND : BC_OR, a, b);
	case 7:
		put(g, "(NOT ");
		a = ex(g, TB, depth - 1);
		put(g, ")");
		return bc_emit_op(p, BC_NOT, a, -1, -1);
	case 8:
		put(g, "(");
		a = ex(g, rn(2) ? TI : TT, depth - 1);
		k = rn(2);
		put(g, k ? " IS NULL)" : " IS NOT NULL)");
		return bc_emit_op(p, k ? BC_IS_NULL : BC_NOT_NULL, a, -1, -1);
	case 9:
		put(g, "(");
		a = ex(g, TT, depth - 1);
		k = rn(2);
		put(g, k ? " LIKE " : " GLOB ");
		b = ex(g, TT, depth - 1);
		put(g, ")");
		return emit2(g, k ? BC_LIKE : BC_GLOB, a, b);
	case 10: { /* IN (constants) */
		int hn = rn(3) == 0, nv = rn(4), ty = rn(3);
		int64_t iv[4];
		double dv[4];
		const char *sv[4];
		uint32_t sl[4];
		put(g, "(");
		a = ex(g, ty == 0 ? TI : ty == 1 ? TR : TT, depth - 1);
		put(g, " IN (");
		for (int q = 0; q < nv; q++) {
			iv[q] = rn(7) - 3;
			dv[q] = (rn(9) - 4) * 0.5;
			sv[q] = texts[rn(12)];
			sl[q] = (uint32_t)strlen(sv[q]);
			if (ty == 0)
				put(g, "%s%lld", q ? ", " : "",
				    (long long)iv[q]);
			else if (ty == 1)
				put(g, "%s%.1f", q ? ", " : "", dv[q]);
			else
				put(g, "%s'%s'", q ? ", " : "", sv[q]);
		}
		if (hn)
			put(g, "%sNULL", nv ? ", " : "");
		put(g, "))");
		if (ty == 0)
			return bc_emit_in_int(p, a, iv, nv, hn);
		if (ty == 1)
			return bc_emit_in_real(p, a, dv, nv, hn);
		return bc_emit_in_text(p, a, sv, sl, nv, hn);
	}
	}
	/* BETWEEN: GE, LE, AND */
	put(g, "(");
	a = ex(g, TI, depth - 1);
	put(g, " BETWEEN ");
	b = ex(g, TI, depth - 1);
	put(g, " AND ");
	c = ex(g, TI, depth - 1);
	put(g, ")");
	b = emit2(g, BC_GE_I, a, b);
	c = emit2(g, BC_LE_I, a, c);
	return emit2(g, BC_AND, b, c);
}

static void test_differential(void)
{
	sqlite3 *db;
	sqlite3_stmt *ins;
	static const int64_t iv[] = {-5, -3, -1, 0,   1,    2,
				     3,	 5,  7,	 100, -100, 3000000000LL};
	static const double rv[] = {0.5, -2.25, 3.0, 1e10,    -0.1,
				    7.5, 0.0,	2.5, 1.0 / 3, -1e-3};
	int ncmp = 0, nskip = 0, nbad = 0;
	static bc_program prog;
	char sql[8192], q[9000], got[256];
	vec in[4], out[1];

	CHECK(sqlite3_open(":memory:", &db) == SQLITE_OK);
	sqlite3_exec(db,
		     "CREATE TABLE t(c0 INTEGER, c1 REAL, c2 TEXT, "
		     "c3 INTEGER)",
		     NULL, NULL, NULL);
	sqlite3_prepare_v2(db, "INSERT INTO t VALUES(?1, ?2, ?3, ?4)", -1, &ins,
			   NULL);
	for (int r = 0; r < NROWS; r++) {
		const char *s = texts[rn(12)];
		c0[r] = iv[rn(12)];
		c3[r] = iv[rn(12)];
		c1[r] = rv[rn(10)];
		c2[r] = (vec_str){s, (uint32_t)strlen(s)};
		n0[r] = rn(6) == 0;
		n1[r] = rn(6) == 0;
		n2[r] = rn(6) == 0;
		n3[r] = rn(6) == 0;
		sqlite3_reset(ins);
		if (n0[r])
			sqlite3_bind_null(ins, 1);
		else
			sqlite3_bind_int64(ins, 1, c0[r]);
		if (n1[r])
			sqlite3_bind_null(ins, 2);
		else
			sqlite3_bind_double(ins, 2, c1[r]);
		if (n2[r])
			sqlite3_bind_null(ins, 3);
		else
			sqlite3_bind_text(ins, 3, s, -1, SQLITE_STATIC);
		if (n3[r])
			sqlite3_bind_null(ins, 4);
		else
			sqlite3_bind_int64(ins, 4, c3[r]);
		CHECK(sqlite3_step(ins) == SQLITE_DONE);
	}
	sqlite3_finalize(ins);
	in[0] = (vec){.type = BC_COL_INT64, .v.i64 = c0, .nulls = n0};
	in[1] = (vec){.type = BC_COL_DOUBLE, .v.f64 = c1, .nulls = n1};
	in[2] = (vec){.type = BC_COL_TEXT, .v.str = c2, .nulls = n2};
	in[3] = (vec){.type = BC_COL_INT64, .v.i64 = c3, .nulls = n3};

	for (int iter = 0; iter < 3000 && nbad < 10; iter++) {
		gen g = {&prog, sql, 0, sizeof(sql), -1};
		sqlite3_stmt *st;
		int r, t = rn(4), rc;

		bc_init(&prog);
		bc_input(&prog, BC_COL_INT64, 0, 0);
		bc_input(&prog, BC_COL_DOUBLE, 0, 0);
		bc_input(&prog, BC_COL_TEXT, 0, 0);
		bc_input(&prog, BC_COL_INT64, 0, 0);
		r = ex(&g, t, 1 + rn(4));
		if (prog.err) { /* program too big: try another */
			nskip++;
			continue;
		}
		bc_emit_output(&prog, r);
		CHECKF(!prog.err, "%s: %s", sql, prog.errmsg);
		rc = vm_run(&prog, in, 4, NROWS, out, &scratch, err,
			    sizeof(err));
		if (rc == GPMDB_ERROR && !strcmp(err, "integer overflow")) {
			nskip++; /* SQLite goes to REAL here; we raise */
			continue;
		}
		CHECKF(rc == GPMDB_OK, "%s: %s", sql, err);
		if (rc)
			continue;
		snprintf(q, sizeof(q), "SELECT %s FROM t ORDER BY rowid", sql);
		if (sqlite3_prepare_v2(db, q, -1, &st, NULL) != SQLITE_OK) {
			CHECKF(0, "%s: %s", q, sqlite3_errmsg(db));
			nbad++;
			continue;
		}
		for (uint32_t i = 0; i < NROWS; i++) {
			const char *want;
			if (sqlite3_step(st) != SQLITE_ROW) {
				CHECKF(0, "%s: %s", q, sqlite3_errmsg(db));
				nbad++;
				break;
			}
			want = sqlite3_column_type(st, 0) == SQLITE_NULL
				   ? "NULL"
				   : (const char *)sqlite3_column_text(st, 0);
			fmt_val(&out[0], i, got, sizeof(got));
			if (strcmp(want, got)) {
				CHECKF(0, "%s\n  row %u: sqlite '%s' vm '%s'",
				       q, i, want, got);
				nbad++;
				break;
			}
		}
		sqlite3_finalize(st);
		ncmp++;
	}
	printf("# differential: %d expressions compared, %d skipped\n", ncmp,
	       nskip);
	CHECK(ncmp > 2000);
	sqlite3_close(db);
}

int main(void)
{
	vm_scratch_init(&scratch);
	TEST_RUN(test_logic);
	TEST_RUN(test_int_ops);
	TEST_RUN(test_case_mask);
	TEST_RUN(test_in_coalesce_nullif);
	TEST_RUN(test_types);
	TEST_RUN(test_text_ops);
	TEST_RUN(test_check);
	TEST_RUN(test_differential);
	vm_scratch_free(&scratch);
	TEST_MAIN_END();
}
