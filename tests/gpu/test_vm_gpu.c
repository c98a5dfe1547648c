/*
 * test_vm_gpu.c - the device layer and the GPU expression interpreter, on
 * a machine with a GPU (make test-gpu).  Device setup (facts, the memory
 * pool, the error path of an absurd allocation), then the differential
 * test of tests/gpu/vmdiff.h: thousands of random programs run by vm_run
 * and by gpu_vm_run on the same inputs, results equal bit for bit,
 * errors included.  Without a GPU the first case fails with the reason.
 * VD_SCALE=n multiplies the random work.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "harness.h"

#include "gpu/vmdiff.h"

static char err[512];
static int have_gpu;

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void test_device_init(void)
{
	gpu_info f;
	char line[512];

	int rc = gpu_init(err, sizeof(err));
	CHECKF(rc == GPMDB_OK, "gpu_init: %d %s", rc, err);
	have_gpu = rc == GPMDB_OK;
	if (!have_gpu)
		return;
	CHECK(gpu_available());
	CHECK_RC(gpu_get_info(&f, err, sizeof(err)), GPMDB_OK);
	CHECK(f.name[0]);
	CHECK(f.sm_count > 0);
	CHECK(f.mem_total > f.mem_free / 2 && f.mem_free > 0);
	CHECK(f.bandwidth_gbs > 100);
	CHECK(f.cc_major * 10 + f.cc_minor >= GPU_MIN_CC);
	gpu_describe(line, sizeof(line));
	printf("# device: %s (driver %d, runtime %d)\n", line, f.driver_version,
	       f.runtime_version);
	/* Idempotent. */
	CHECK_RC(gpu_init(err, sizeof(err)), GPMDB_OK);
}

static void test_pool(void)
{
	enum { N = 1 << 20 };
	static uint8_t h[N], back[N];
	gpu_info a, b;
	void *d = NULL, *z = (void *)1;

	if (!have_gpu)
		return;
	for (int i = 0; i < N; i++)
		h[i] = (uint8_t)(i * 7 + 3);
	CHECK_RC(gpu_alloc(&z, 0, err, sizeof(err)), GPMDB_OK);
	CHECK(z == NULL);
	CHECK_RC(gpu_alloc(&d, N, err, sizeof(err)), GPMDB_OK);
	CHECK_RC(gpu_upload(d, h, N, err, sizeof(err)), GPMDB_OK);
	CHECK_RC(gpu_download(back, d, N, err, sizeof(err)), GPMDB_OK);
	CHECK(!memcmp(h, back, N));
	CHECK_RC(gpu_memset(d, 0xab, N, err, sizeof(err)), GPMDB_OK);
	CHECK_RC(gpu_download(back, d, N, err, sizeof(err)), GPMDB_OK);
	CHECK(back[0] == 0xab && back[N - 1] == 0xab);
	CHECK_RC(gpu_get_info(&a, err, sizeof(err)), GPMDB_OK);
	CHECK(a.pool_used >= N);
	CHECK_RC(gpu_free(d, err, sizeof(err)), GPMDB_OK);
	CHECK_RC(gpu_sync(err, sizeof(err)), GPMDB_OK);
	/* Many queries' worth of allocations: served from the pool. */
	for (int k = 0; k < 1000; k++) {
		CHECK_RC(
		    gpu_alloc(&d, (size_t)(k % 17 + 1) << 16, err, sizeof(err)),
		    GPMDB_OK);
		CHECK_RC(gpu_free(d, err, sizeof(err)), GPMDB_OK);
	}
	CHECK_RC(gpu_sync(err, sizeof(err)), GPMDB_OK);
	CHECK_RC(gpu_get_info(&b, err, sizeof(err)), GPMDB_OK);
	CHECKF(b.pool_used + N <= a.pool_used + 4096, "used %llu then %llu",
	       (unsigned long long)a.pool_used,
	       (unsigned long long)b.pool_used);
	CHECK(b.pool_reserved >= N); /* kept, not given back */
}

/* An allocation no GPU can satisfy: an error naming the call, and the
 * device is still usable. */
static void test_absurd_alloc(void)
{
	void *d = (void *)1;
	int rc;

	if (!have_gpu)
		return;
	rc = gpu_alloc(&d, (size_t)1 << 50, err, sizeof(err));
	CHECKF(rc == GPMDB_NOMEM || rc == GPMDB_GPU, "rc %d", rc);
	CHECKF(strstr(err, "cudaMallocFromPoolAsync"), "err: %s", err);
	printf("# absurd allocation: %d %s\n", rc, err);
	CHECK(d == NULL);
	CHECK_RC(gpu_alloc(&d, 4096, err, sizeof(err)), GPMDB_OK);
	CHECK_RC(gpu_free(d, err, sizeof(err)), GPMDB_OK);
	CHECK_RC(gpu_sync(err, sizeof(err)), GPMDB_OK);
}

/* gpu_vm_run refuses what it cannot run, loudly. */
static void test_unsupported(void)
{
	bc_program p;
	gpu_col in = {NULL, NULL, NULL, BC_COL_TEXT, 0, 0, 0, 0}, out[1];
	int rc;

	if (!have_gpu)
		return;
	bc_init(&p);
	bc_input(&p, BC_COL_TEXT, 0, 0);
	bc_emit_output(&p,
		       bc_emit_op(&p, BC_UPPER, bc_emit_load(&p, 0), -1, -1));
	rc = gpu_vm_run(&p, &in, 1, 0, NULL, 0, NULL, out, err, sizeof(err));
	CHECKF(rc == GPMDB_UNSUPPORTED && strstr(err, "UPPER"), "%d %s", rc,
	       err);
}

/* ---- the differential test on the GPU -------------------------------- */

typedef struct dev_data {
	gpu_col col[VD_NCOLS];
	char *heap;
	uint32_t *sel;
	char *heap2; /* VD_TEXT2 in a buffer of its own (vd_data.heap2) */
	gpu_str *own2;
} dev_data;

static void *dev_copy(const void *h, size_t n, int *rc)
{
	void *d = NULL;

	if (*rc)
		return NULL;
	*rc = gpu_alloc(&d, n ? n : 1, err, sizeof(err));
	if (!*rc)
		*rc = gpu_upload(d, h, n, err, sizeof(err));
	return d;
}

static void dev_unload(vd_data *d)
{
	dev_data *dd = d->dev;

	if (!dd)
		return;
	for (int c = 0; c < VD_NCOLS; c++) {
		gpu_free(dd->col[c].data, NULL, 0);
		gpu_free(dd->col[c].nulls, NULL, 0);
	}
	gpu_free(dd->heap, NULL, 0);
	gpu_free(dd->sel, NULL, 0);
	gpu_free(dd->heap2, NULL, 0);
	gpu_free(dd->own2, NULL, 0);
	free(dd);
	d->dev = NULL;
}

static int dev_load(vd_data *d)
{
	dev_data *dd = calloc(1, sizeof(*dd));
	size_t ne = d->nelem + 1;
	int rc = 0;

	d->dev = dd;
	dd->heap = dev_copy(d->heap, d->nheap, &rc);
	dd->heap2 = dev_copy(d->heap2, d->nheap2, &rc);
	dd->own2 = dev_copy(d->own2, ne * sizeof(gpu_str), &rc);
	if (d->sel)
		dd->sel = dev_copy(d->sel, sizeof(uint32_t) * d->n, &rc);
	for (int c = 0; c < VD_NCOLS; c++) {
		dd->col[c] = d->col[c];
		dd->col[c].data = dev_copy(d->col[c].data, ne * 8, &rc);
		dd->col[c].nulls = dev_copy(d->col[c].nulls, ne, &rc);
		dd->col[c].sel = dd->sel;
	}
	if (rc) {
		fprintf(stderr, "dev_load: %s\n", err);
		dev_unload(d);
	}
	return rc;
}

static void dev_free_out(const bc_program *p, gpu_col *out)
{
	for (uint32_t k = 0; k < p->noutputs; k++) {
		free(out[k].data);
		free(out[k].nulls);
	}
}

static double gpu_secs;

/* gpu_vm_run over in (device columns), the outputs back in host
 * arrays as gvm_run_host gives them. */
static int dev_run_in(const bc_program *p, vd_data *d, const gpu_col *in,
		      const char *text, uint64_t ntext,
		      const char *const *itext, gpu_col *out, char *e,
		      size_t elen)
{
	gpu_col dout[BC_MAX_OUTPUTS];
	double t0 = now();
	int rc = gpu_vm_run(p, in, VD_NCOLS, d->n, text, ntext, itext, dout, e,
			    elen);

	gpu_secs += now() - t0;
	if (rc)
		return rc;
	/* Results back to host arrays, as gvm_run_host gives them. */
	for (uint32_t k = 0; k < p->noutputs; k++) {
		size_t w = gvm_out_width(dout[k].type) * d->n;
		out[k] = dout[k];
		out[k].data = malloc(w + 1);
		out[k].nulls = malloc(d->n + 1);
		if (!rc)
			rc =
			    gpu_download(out[k].data, dout[k].data, w, e, elen);
		if (!rc)
			rc = gpu_download(out[k].nulls, dout[k].nulls, d->n, e,
					  elen);
	}
	gpu_vm_free_outputs(p, dout);
	if (rc)
		dev_free_out(p, out);
	return rc;
}

static int dev_run(const bc_program *p, vd_data *d, gpu_col *out, char *e,
		   size_t elen)
{
	dev_data *dd = d->dev;

	return dev_run_in(p, d, dd->col, dd->heap, d->nheap, NULL, out, e,
			  elen);
}

static const vd_backend gpu_backend = {"gpu", dev_load, dev_unload, dev_run,
				       dev_free_out};

/* Programs run with a text base per input (dev_run_own). */
static unsigned own_runs;

/* Each TEXT input in a device buffer of its own, no run buffer (the
 * engine's way for a program without TEXT outputs); a program with a TEXT
 * output is refused so and then runs on the shared heap. */
static int dev_run_own(const bc_program *p, vd_data *d, gpu_col *out, char *e,
		       size_t elen)
{
	dev_data *dd = d->dev;
	gpu_col in[VD_NCOLS];
	const char *itext[VD_NCOLS];
	int rc;

	vd_own_inputs(dd->col, dd->heap, dd->heap2, dd->own2, in, itext);
	rc = dev_run_in(p, d, in, NULL, 0, itext, out, e, elen);
	if (!vd_text_out(p)) {
		own_runs++;
		return rc;
	}
	CHECKF(rc == GPMDB_UNSUPPORTED ||
		   (rc == GPMDB_MISUSE &&
		    strstr(e, "has a text buffer of its own")),
	       "a TEXT output with own text buffers: %d %s", rc, e);
	if (!rc)
		dev_free_out(p, out);
	return dev_run(p, d, out, e, elen);
}

static const vd_backend gpu_own_backend = {"gpu-own", dev_load, dev_unload,
					   dev_run_own, dev_free_out};

static int scale(void)
{
	const char *s = getenv("VD_SCALE");
	int n = s ? atoi(s) : 1;
	return n > 0 ? n : 1;
}

static void test_differential(void)
{
	vd_stats st;
	unsigned untested = 0;
	double t0 = now();

	if (!have_gpu)
		return;
	gpu_secs = 0;
	vd_differential(&gpu_backend, 24, 20000, 120 * scale(), &st);
	printf("# gpu: %u programs (%u ok, %u SQL errors, %u mismatches), "
	       "%u rows, %.1f s (%.2f s in gpu_vm_run)\n",
	       st.programs, st.ok, st.errors, st.failed, st.rows, now() - t0,
	       gpu_secs);
	CHECK(st.failed == 0);
	CHECKF(st.programs > 2000, "%u programs", st.programs);
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

/* The random programs with VD_TEXT and VD_TEXT2 in separate device
 * buffers (gpu_vm_run's itext): those without a TEXT output read each
 * through its own base, bit for bit as vm_run. */
static void test_differential_own(void)
{
	vd_stats st;

	if (!have_gpu)
		return;
	own_runs = 0;
	vd_differential(&gpu_own_backend, 8, 20000, 60 * scale(), &st);
	printf("# gpu, own text buffers: %u programs (%u ok, %u SQL errors, "
	       "%u mismatches), %u without a TEXT output\n",
	       st.programs, st.ok, st.errors, st.failed, own_runs);
	CHECK(st.failed == 0);
	CHECKF(own_runs > st.programs / 4, "%u of %u programs", own_runs,
	       st.programs);
}

/* A large batch (many VEC_BATCHes), one error deep inside: the same
 * message as vm_run's, and a rough rate. */
static void test_large(void)
{
	static vd_ref ref;
	static bc_program p;
	gpu_col out[BC_MAX_OUTPUTS];
	vd_data d;
	int rc, x, y, r;
	double t0;

	if (!have_gpu)
		return;
	vd_data_make(&d, 3000000, 0, 0, 0);
	CHECK(dev_load(&d) == 0);
	/* (i64 * 3 + i32) > 10 AND date < 2000-01-01 OR text LIKE '%b%' */
	bc_init(&p);
	for (int c = 0; c < VD_NCOLS; c++)
		bc_input(&p, vd_schema[c].type, vd_schema[c].prec,
			 vd_schema[c].scale);
	x = bc_emit_op(&p, BC_MUL_I, bc_emit_load(&p, VD_I64),
		       bc_emit_int(&p, 3), -1);
	x = bc_emit_op(&p, BC_ADD_I, x, bc_emit_load(&p, VD_I32), -1);
	x = bc_emit_op(&p, BC_GT_I, x, bc_emit_int(&p, 10), -1);
	y = bc_emit_op(&p, BC_LT_DT, bc_emit_load(&p, VD_DATE),
		       bc_emit_date(&p, 10957), -1);
	r = bc_emit_op(&p, BC_AND, x, y, -1);
	r = bc_emit_op(&p, BC_OR, r,
		       bc_emit_op(&p, BC_LIKE, bc_emit_load(&p, VD_TEXT),
				  bc_emit_text(&p, "%b%", 3), -1),
		       -1);
	bc_emit_output(&p, r);
	CHECK(!p.err);
	vd_ref_run(&p, &d, &ref);
	t0 = now();
	rc = dev_run(&p, &d, out, err, sizeof(err));
	printf("# 3M rows, 9 ops: %.1f ms with transfers back\n",
	       (now() - t0) * 1e3);
	CHECK(vd_compare(&p, &d, &ref, rc, err, out, "large"));
	if (!rc)
		dev_free_out(&p, out);
	vd_ref_free(&p, &ref);
	/* One overflowing row near the end. */
	((int64_t *)d.col[VD_I64].data)[2999001] = INT64_MAX / 2;
	d.col[VD_I64].nulls[2999001] = 0;
	dev_unload(&d);
	CHECK(dev_load(&d) == 0);
	vd_ref_run(&p, &d, &ref);
	CHECK(ref.rc == GPMDB_ERROR);
	rc = dev_run(&p, &d, out, err, sizeof(err));
	CHECK(vd_compare(&p, &d, &ref, rc, err, out, "large error"));
	printf("# error row 2999001: %d %s\n", rc, err);
	if (!rc)
		dev_free_out(&p, out);
	vd_ref_free(&p, &ref);
	dev_unload(&d);
	vd_data_free(&d);
}

int main(void)
{
	vm_scratch_init(&vd_scratch);
	TEST_RUN(test_device_init);
	TEST_RUN(test_pool);
	TEST_RUN(test_absurd_alloc);
	TEST_RUN(test_unsupported);
	TEST_RUN(test_differential);
	TEST_RUN(test_differential_own);
	TEST_RUN(test_large);
	vm_scratch_free(&vd_scratch);
	gpu_shutdown();
	TEST_MAIN_END();
}
