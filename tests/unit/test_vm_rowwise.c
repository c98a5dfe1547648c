/*
 * test_vm_rowwise.c - the GPU's row interpreter (gpu/gvm_row.h) run on the
 * host by gvm_run_host, checked against vm_run: the same code the kernel
 * runs, so semantic differences show up here without a GPU.  Also the
 * planner's view (gpu_vm_supports), register slots, and the order of
 * errors across batches.  VD_SCALE=n multiplies the random work.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#include "gpu/vmdiff.h"

static int host_run(const bc_program *p, vd_data *d, gpu_col *out, char *err,
		    size_t errlen)
{
	return gvm_run_host(p, d->col, VD_NCOLS, d->n, d->heap, d->nheap, NULL,
			    out, err, errlen);
}

static const vd_backend host_backend = {"host", NULL, NULL, host_run,
					gvm_host_free_outputs};

/* Programs run with a text base per input (host_run_own). */
static unsigned own_runs;

/*
 * Each TEXT input in a buffer of its own, no run buffer (what the engine
 * does for a program without TEXT outputs).  A program with a TEXT
 * output is refused so (GPMDB_MISUSE) and then runs on the shared heap.
 */
static int host_run_own(const bc_program *p, vd_data *d, gpu_col *out,
			char *err, size_t errlen)
{
	gpu_col in[VD_NCOLS];
	const char *itext[VD_NCOLS];
	int rc;

	vd_own_inputs(d->col, d->heap, d->heap2, d->own2, in, itext);
	rc = gvm_run_host(p, in, VD_NCOLS, d->n, NULL, 0, itext, out, err,
			  errlen);
	if (!vd_text_out(p)) {
		own_runs++;
		return rc;
	}
	CHECKF(rc == GPMDB_UNSUPPORTED ||
		   (rc == GPMDB_MISUSE &&
		    strstr(err, "has a text buffer of its own")),
	       "a TEXT output with own text buffers: %d %s", rc, err);
	if (!rc)
		gvm_host_free_outputs(p, out);
	return host_run(p, d, out, err, errlen);
}

static const vd_backend host_own_backend = {
    "host-own", NULL, NULL, host_run_own, gvm_host_free_outputs};

static int scale(void)
{
	const char *s = getenv("VD_SCALE");
	int n = s ? atoi(s) : 1;
	return n > 0 ? n : 1;
}

/* Every op the GPU leaves to the CPU is refused by name. */
static void test_unsupported(void)
{
	static const int ops[] = {BC_CONCAT, BC_UPPER, BC_LOWER,  BC_REPLACE,
				  BC_I2T,    BC_R2T,   BC_D2T,	  BC_DT2T,
				  BC_T2R,    BC_R2D,   BC_ROUND_R};
	char why[256];

	for (size_t k = 0; k < sizeof(ops) / sizeof(ops[0]); k++) {
		bc_program p;
		int t, r, i, x;
		bc_init(&p);
		bc_input(&p, BC_COL_TEXT, 0, 0);
		bc_input(&p, BC_COL_INT64, 0, 0);
		bc_input(&p, BC_COL_DOUBLE, 0, 0);
		bc_input(&p, BC_COL_DEC, 18, 2);
		bc_input(&p, BC_COL_DATE, 0, 0);
		t = bc_emit_load(&p, 0);
		i = bc_emit_load(&p, 1);
		x = bc_emit_load(&p, 2);
		switch (ops[k]) {
		case BC_CONCAT:
			r = bc_emit_op(&p, ops[k], t, t, -1);
			break;
		case BC_REPLACE:
			r = bc_emit_op(&p, ops[k], t, t, t);
			break;
		case BC_I2T:
			r = bc_emit_op(&p, ops[k], i, -1, -1);
			break;
		case BC_R2T:
		case BC_ROUND_R:
			r = bc_emit_op(&p, ops[k], x, -1, -1);
			break;
		case BC_D2T:
			r = bc_emit_op(&p, ops[k], bc_emit_load(&p, 3), -1, -1);
			break;
		case BC_DT2T:
			r = bc_emit_op(&p, ops[k], bc_emit_load(&p, 4), -1, -1);
			break;
		case BC_R2D:
			r = bc_emit_to_dec(&p, ops[k], x, 18, 2);
			break;
		default:
			r = bc_emit_op(&p, ops[k], t, -1, -1);
		}
		bc_emit_output(&p, r);
		CHECKF(!p.err, "%s: %s", bc_ops[ops[k]].name, p.errmsg);
		CHECK(gpu_vm_supports(&p, why, sizeof(why)) == 0);
		CHECKF(strstr(why, bc_ops[ops[k]].name) &&
			   strstr(why, "runs on the CPU"),
		       "why: %s", why);
		CHECK(gvm_op_unsupported(ops[k]) != NULL);
	}
	/* And the rest are supported. */
	for (int op = 0; op < BC_NOPS; op++) {
		int listed = 0;
		for (size_t k = 0; k < sizeof(ops) / sizeof(ops[0]); k++)
			listed |= ops[k] == op;
		CHECKF(listed == (gvm_op_unsupported(op) != NULL), "op %s",
		       bc_ops[op].name);
	}
}

/* Live ranges, not register numbers, bound what a thread holds. */
static void test_slots(void)
{
	bc_program p;
	char why[256];
	int r, regs[70];

	/* 70 values alive at once: too many. */
	bc_init(&p);
	bc_input(&p, BC_COL_INT64, 0, 0);
	for (int k = 0; k < 70; k++)
		regs[k] = bc_emit_load(&p, 0);
	r = regs[0];
	for (int k = 1; k < 70; k++)
		r = bc_emit_op(&p, BC_ADD_I, r, regs[k], -1);
	bc_emit_output(&p, r);
	CHECK(!p.err);
	CHECK(gpu_vm_supports(&p, why, sizeof(why)) == 0);
	CHECKF(strstr(why, "live registers"), "why: %s", why);

	/* 250 registers in a chain: two alive at a time. */
	bc_init(&p);
	bc_input(&p, BC_COL_INT64, 0, 0);
	r = bc_emit_load(&p, 0);
	for (int k = 0; k < 124; k++)
		r = bc_emit_op(&p, BC_ADD_I, r, bc_emit_int(&p, k), -1);
	bc_emit_output(&p, r);
	CHECKF(!p.err, "%s", p.errmsg);
	CHECKF(p.nregs > 240, "%u registers", p.nregs);
	CHECKF(gpu_vm_supports(&p, why, sizeof(why)) == 1, "why: %s", why);
	{
		int64_t x[3] = {1, 2, INT64_MAX - 10};
		gpu_col in = {x, NULL, NULL, BC_COL_INT64, 0, 0, 0, 0};
		gpu_col out[1];
		char err[128];
		int rc = gvm_run_host(&p, &in, 1, 2, NULL, 0, NULL, out, err,
				      sizeof(err));
		CHECKF(rc == 0, "%s", err);
		if (!rc) {
			/* 1 + (0 + 1 + ... + 123) */
			CHECK(((int64_t *)out[0].data)[0] == 1 + 123 * 124 / 2);
			CHECK(((int64_t *)out[0].data)[1] == 2 + 123 * 124 / 2);
			gvm_host_free_outputs(&p, out);
		}
		rc = gvm_run_host(&p, &in, 1, 3, NULL, 0, NULL, out, err,
				  sizeof(err));
		CHECKF(rc == GPMDB_ERROR && !strcmp(err, "integer overflow"),
		       "%d %s", rc, err);
	}
}

/*
 * vm_run works batch by batch: an error in batch 0 at a late instruction
 * wins over one in batch 1 at an early instruction.  gvm's error key
 * must say the same.
 */
static void test_error_order(void)
{
	enum { N = 2 * VEC_BATCH + 5 };
	static int64_t x[N];
	static gpu_str s[N];
	static char heap[] = "2020-01-012020-02-30";
	gpu_col in[2] = {{x, NULL, NULL, BC_COL_INT64, 0, 0, 0, 0},
			 {s, NULL, NULL, BC_COL_TEXT, 0, 0, 0, 0}};
	bc_program p;
	gpu_col out[2];
	char err[128];
	int a, t, rc;

	for (int i = 0; i < N; i++) {
		x[i] = i;
		s[i].off = 0;
		s[i].len = 10;
	}
	x[VEC_BATCH + 7] = INT64_MAX; /* batch 1, first op */
	s[100].off = 10;	      /* batch 0, second op */
	bc_init(&p);
	bc_input(&p, BC_COL_INT64, 0, 0);
	bc_input(&p, BC_COL_TEXT, 0, 0);
	a = bc_emit_load(&p, 0);
	t = bc_emit_load(&p, 1);
	bc_emit_output(&p, bc_emit_op(&p, BC_ADD_I, a, bc_emit_int(&p, 1), -1));
	bc_emit_output(&p, bc_emit_op(&p, BC_T2DT, t, -1, -1));
	rc = gvm_run_host(&p, in, 2, N, heap, sizeof(heap), NULL, out, err,
			  sizeof(err));
	CHECKF(rc == GPMDB_ERROR && !strcmp(err, "invalid date: '2020-02-30'"),
	       "%d %s", rc, err);
	/* Without batch 0's error, batch 1's shows. */
	s[100].off = 0;
	rc = gvm_run_host(&p, in, 2, N, heap, sizeof(heap), NULL, out, err,
			  sizeof(err));
	CHECKF(rc == GPMDB_ERROR && !strcmp(err, "integer overflow"), "%d %s",
	       rc, err);
	/* Inputs of the wrong type: vm_run's words. */
	in[0].type = BC_COL_DOUBLE;
	rc = gvm_run_host(&p, in, 2, N, heap, sizeof(heap), NULL, out, err,
			  sizeof(err));
	CHECKF(rc == GPMDB_MISUSE &&
		   !strcmp(err, "input 0 has type 4, program wants 2"),
	       "%d %s", rc, err);
}

/* Output k, row i of a host run as text ("NULL" for NULL). */
static void bind_show(const gpu_col *o, uint32_t i, const bc_program *p,
		      const char *heap, char *buf, size_t len)
{
	if (o->type == VEC_NULL || o->nulls[i]) {
		snprintf(buf, len, "NULL");
		return;
	}
	switch (o->type) {
	case BC_COL_TEXT: {
		gpu_str g = ((const gpu_str *)o->data)[i];
		const char *b = g.off & GPU_STR_CONST
				    ? p->text + (g.off & ~GPU_STR_CONST)
				    : heap + g.off;
		snprintf(buf, len, "'%.*s'", (int)g.len, b);
		break;
	}
	case BC_COL_DOUBLE:
		snprintf(buf, len, "%.17g", ((const double *)o->data)[i]);
		break;
	case BC_COL_BOOL:
		snprintf(buf, len, "%d", ((const uint8_t *)o->data)[i]);
		break;
	case BC_COL_DATE:
		snprintf(buf, len, "%d", ((const int32_t *)o->data)[i]);
		break;
	default:
		snprintf(buf, len, "%lld",
			 (long long)((const int64_t *)o->data)[i]);
	}
}

/*
 * bc_bind_input (an uncorrelated subquery's value on the GPU): a program
 * whose input 1 is bound to a constant gives, row by row, what the same
 * program gives with that value broadcast as a column (sel all zeros),
 * for every type and for NULL; input 1 is loaded twice and its text is
 * added to the pool once; a text that does not fit is refused.
 */
static void test_bind_input(void)
{
	enum { N = 5 };
	static const int types[] = {BC_COL_INT64, BC_COL_DEC,  BC_COL_DOUBLE,
				    BC_COL_DATE,  BC_COL_BOOL, BC_COL_TEXT};
	static char heap[] = "xyzcherry";
	int64_t x[N] = {1, -2, 30, 0, 7}, i64 = -1234;
	double f64 = 2.5;
	int32_t date = 19000;
	uint8_t bo = 1, nul1 = 1, nul0 = 0;
	gpu_str str = {3, 6};
	uint32_t zero[N] = {0};
	char err[128], a[64], b[64];

	for (size_t t = 0; t < sizeof(types) / sizeof(types[0]); t++)
		for (int isnull = 0; isnull < 2; isnull++) {
			int ty = types[t], v, w, r;
			bc_program p, q;
			bc_imm imm = {0};
			void *data = &i64;
			bc_init(&p);
			bc_input(&p, BC_COL_INT64, 0, 0);
			bc_input(&p, ty, ty == BC_COL_DEC ? 18 : 0,
				 ty == BC_COL_DEC ? 2 : 0);
			r = bc_emit_load(&p, 0);
			v = bc_emit_load(&p, 1);
			w = bc_emit_load(&p, 1);
			bc_emit_output(&p, v);
			if (ty == BC_COL_INT64)
				bc_emit_output(
				    &p, bc_emit_op(&p, BC_ADD_I, r, w, -1));
			else if (ty == BC_COL_TEXT)
				bc_emit_output(
				    &p, bc_emit_op(&p, BC_EQ_T, w, v, -1));
			else
				bc_emit_output(
				    &p, bc_emit_op(&p, BC_COALESCE, w, v, -1));
			CHECKF(!p.err, "%s", p.errmsg);
			switch (ty) {
			case BC_COL_DOUBLE:
				imm.r = f64;
				data = &f64;
				break;
			case BC_COL_DATE:
				imm.i = date;
				data = &date;
				break;
			case BC_COL_BOOL:
				imm.i = bo;
				data = &bo;
				break;
			case BC_COL_TEXT:
				data = &str;
				break;
			default:
				imm.i = i64;
			}
			q = p;
			CHECKF(bc_bind_input(&q, 1, isnull, imm, heap + str.off,
					     str.len) == 0,
			       "%s", q.errmsg);
			CHECK(q.nstrs ==
			      p.nstrs + (ty == BC_COL_TEXT && !isnull));
			gpu_col in[2] = {
			    {x, NULL, NULL, BC_COL_INT64, 0, 0, 0, 0},
			    {data, isnull ? &nul1 : &nul0, zero, (uint8_t)ty,
			     18, 2, 0, 0}};
			gpu_col bound[2] = {in[0], {0}}, o1[2], o2[2];
			bound[1].type = VEC_NULL;
			int rc1 = gvm_run_host(&p, in, 2, N, heap, sizeof(heap),
					       NULL, o1, err, sizeof(err));
			CHECKF(rc1 == 0, "%s", err);
			int rc2 =
			    gvm_run_host(&q, bound, 2, N, heap, sizeof(heap),
					 NULL, o2, err, sizeof(err));
			CHECKF(rc2 == 0, "%s", err);
			if (rc1 || rc2)
				continue;
			for (int k = 0; k < 2; k++)
				for (uint32_t i = 0; i < N; i++) {
					bind_show(&o1[k], i, &p, heap, a,
						  sizeof(a));
					bind_show(&o2[k], i, &q, heap, b,
						  sizeof(b));
					CHECKF(!strcmp(a, b),
					       "type %d null %d output %d row "
					       "%u: column %s, bound %s",
					       ty, isnull, k, i, a, b);
				}
			gvm_host_free_outputs(&p, o1);
			gvm_host_free_outputs(&q, o2);
		}

	/* the text pool full: refused, with the builder's words */
	{
		static char big[BC_MAX_TEXT];
		bc_program p;
		memset(big, 'a', sizeof(big));
		bc_init(&p);
		bc_input(&p, BC_COL_TEXT, 0, 0);
		bc_emit_output(&p, bc_emit_load(&p, 0));
		bc_emit_output(&p, bc_emit_text(&p, big, BC_MAX_TEXT - 4));
		CHECKF(!p.err, "%s", p.errmsg);
		CHECK(bc_bind_input(&p, 0, 0, (bc_imm){0}, big, 5) == -1);
		CHECKF(strstr(p.errmsg, "text constants"), "%s", p.errmsg);
	}
}

/*
 * Two TEXT inputs in separate buffers (VD_TEXT in heap, VD_TEXT2 in
 * heap2, laid out differently): comparisons of one with the other, IN,
 * LIKE with the other as pattern, SUBSTR/TRIM of one compared with or
 * measured against the other, all without a TEXT output, equal vm_run's
 * over the same rows (several batches, a selection vector).  A TEXT
 * output is refused with own buffers, and allowed when every base is the
 * run's buffer.  (CONCAT makes new text, which the GPU does not run.)
 */
static void test_own_text(void)
{
	static const char *const list[] = {"abc", "a", "", "x ", "hello world"};
	static const uint32_t llen[] = {3, 1, 0, 2, 11};
	static vd_ref ref;
	static bc_program p;
	gpu_col out[BC_MAX_OUTPUTS], in[VD_NCOLS];
	const char *itext[VD_NCOLS];
	char err[256];
	int rc;

	for (int sel = 0; sel < 2; sel++) {
		vd_data d;
		int a, b, x, y, z;
		vd_data_make(&d, 3 * VEC_BATCH + 17, 0, sel, 0);
		/* a third of the rows: both columns hold the same word */
		for (uint32_t i = 0; i < d.nelem; i += 3) {
			((gpu_str *)d.col[VD_TEXT2].data)[i] =
			    ((gpu_str *)d.col[VD_TEXT].data)[i];
			d.col[VD_TEXT2].nulls[i] = d.col[VD_TEXT].nulls[i];
			d.str[VD_TEXT2][i] = d.str[VD_TEXT][i];
		}
		vd_make_own2(&d);
		bc_init(&p);
		for (int c = 0; c < VD_NCOLS; c++)
			bc_input(&p, vd_schema[c].type, vd_schema[c].prec,
				 vd_schema[c].scale);
		a = bc_emit_load(&p, VD_TEXT);
		b = bc_emit_load(&p, VD_TEXT2);
		bc_emit_output(&p, bc_emit_op(&p, BC_EQ_T, a, b, -1));
		bc_emit_output(&p, bc_emit_op(&p, BC_LT_T, b, a, -1));
		bc_emit_output(&p, bc_emit_op(&p, BC_NE_T, a, b, -1));
		x = bc_emit_in_text(&p, b, list, llen, 5, 0);
		y = bc_emit_in_text(&p, a, list, llen, 5, 1);
		bc_emit_output(&p, bc_emit_op(&p, BC_AND, x, y, -1));
		bc_emit_output(&p, bc_emit_op(&p, BC_LIKE, a, b, -1));
		x = bc_emit_op(&p, BC_SUBSTR, b, bc_emit_int(&p, 2),
			       bc_emit_int(&p, 3));
		y = bc_emit_op(&p, BC_LENGTH, x, -1, -1);
		z = bc_emit_op(&p, BC_LENGTH, a, -1, -1);
		bc_emit_output(&p, bc_emit_op(&p, BC_ADD_I, y, z, -1));
		x = bc_emit_op(&p, BC_TRIM, a, -1, -1);
		bc_emit_output(&p, bc_emit_op(&p, BC_GE_T, x, b, -1));
		bc_emit_output(
		    &p, bc_emit_op(&p, BC_EQ_T, x,
				   bc_emit_op(&p, BC_RTRIM, b, -1, -1), -1));
		CHECKF(!p.err, "%s", p.errmsg);
		vd_ref_run(&p, &d, &ref);
		CHECKF(ref.rc == 0, "vm_run: %s", ref.err);
		rc = host_run_own(&p, &d, out, err, sizeof(err));
		CHECK(vd_compare(&p, &d, &ref, rc, err, out, "own text"));
		if (!rc) {
			/* the rows where both are equal were seen */
			uint32_t eq = 0;
			for (uint32_t i = 0; i < d.n; i++)
				eq += !out[0].nulls[i] &&
				      ((uint8_t *)out[0].data)[i];
			CHECKF(eq > d.n / 8, "%u equal rows of %u", eq, d.n);
			gvm_host_free_outputs(&p, out);
		}
		vd_ref_free(&p, &ref);

		/* a TEXT output: refused with own buffers ... */
		bc_emit_output(&p, b);
		CHECKF(!p.err, "%s", p.errmsg);
		vd_own_inputs(d.col, d.heap, d.heap2, d.own2, in, itext);
		rc = gvm_run_host(&p, in, VD_NCOLS, d.n, NULL, 0, itext, out,
				  err, sizeof(err));
		CHECKF(rc == GPMDB_MISUSE &&
			   !strcmp(err, "output 8 is TEXT and input 9 has a "
					"text buffer of its own"),
		       "%d %s", rc, err);
		/* ... and allowed when every base is the run's buffer */
		itext[VD_TEXT] = itext[VD_TEXT2] = d.heap;
		rc = gvm_run_host(&p, d.col, VD_NCOLS, d.n, d.heap, d.nheap,
				  itext, out, err, sizeof(err));
		vd_ref_run(&p, &d, &ref);
		CHECK(vd_compare(&p, &d, &ref, rc, err, out, "one buffer"));
		if (!rc)
			gvm_host_free_outputs(&p, out);
		vd_ref_free(&p, &ref);
		vd_data_free(&d);
	}
}

/* The random programs with a text base per input: those without a TEXT
 * output (most) read VD_TEXT and VD_TEXT2 in separate buffers. */
static void test_differential_own(void)
{
	vd_stats st;

	own_runs = 0;
	vd_differential(&host_own_backend, 12, 2600, 70 * scale(), &st);
	printf("# host, own text buffers: %u programs (%u ok, %u SQL "
	       "errors, %u mismatches), %u without a TEXT output\n",
	       st.programs, st.ok, st.errors, st.failed, own_runs);
	CHECK(st.failed == 0);
	CHECKF(own_runs > st.programs / 4, "%u of %u programs", own_runs,
	       st.programs);
}

static void test_differential(void)
{
	vd_stats st;
	unsigned untested = 0;

	vd_differential(&host_backend, 12, 2600, 70 * scale(), &st);
	printf("# host: %u programs (%u ok, %u SQL errors, %u mismatches), "
	       "%u rows\n",
	       st.programs, st.ok, st.errors, st.failed, st.rows);
	CHECK(st.failed == 0);
	CHECKF(st.programs > 500, "%u programs", st.programs);
	CHECKF(st.ok > st.programs / 4, "only %u of %u without error", st.ok,
	       st.programs);
	for (int k = 0; k < vd_nops; k++)
		if (!st.forced[vd_ops[k]]) {
			fprintf(stderr, "op %s never tested\n",
				bc_ops[vd_ops[k]].name);
			untested++;
		}
	CHECK(untested == 0);
}

int main(void)
{
	vm_scratch_init(&vd_scratch);
	TEST_RUN(test_unsupported);
	TEST_RUN(test_slots);
	TEST_RUN(test_error_order);
	TEST_RUN(test_bind_input);
	TEST_RUN(test_differential);
	TEST_RUN(test_own_text);
	TEST_RUN(test_differential_own);
	vm_scratch_free(&vd_scratch);
	TEST_MAIN_END();
}
