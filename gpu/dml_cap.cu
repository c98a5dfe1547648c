/*
 * dml_cap.cu - CPU-assisted persistence (GPM's CAP-mm) of UPDATE and
 * DELETE batches (gpu/dml_cap.h; docs/gpu.md "CPU-assisted
 * persistence").
 *
 * Why: in msync mode (an ordinary file system) CUDA cannot register the
 * pool's mapping, so kernels cannot store into it.  The work the GPU can
 * still do is the part of a batch that reads the table: each row's old
 * values, which the column cache holds in HBM, turned into the HCL
 * entries of the undo log, striped as a warp writes them (hcl.h).  The
 * image is built with the segment's own layout, so the host copies it
 * down with a few large copies (pinned staging, every core) instead of
 * reading every old value at a random place of the mapping and storing
 * six scattered words per entry, as the CPU path does.
 *
 * The host persists the copied entries before it copies the tails, and
 * the tails before it writes any data (engine/write/batch_cap.c): the
 * HCL protocol is the CPU's, so is recovery.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dml_cap.h"
#include "gpu_internal.h"

#include "gpmdb.h"

/* gpu/dml.cu: tells the crash tests' launch hook (gpu_dml_set_launch_hook) */
void dml_note(int done);

#define CAP_TPB	  256u
#define CAP_CHUNK (32ull << 20) /* bytes of one staged D2H copy */
#define CAP_PIECE (1ull << 20)	/* bytes of one host copy task */

struct gpu_cap_batch {
	char *img;	 /* device: tails [0, tbytes), entries after */
	uint64_t tbytes; /* tails of the threads' warps */
	uint64_t ebytes; /* entries of the threads' warps */
};

static double cap_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static unsigned cap_grid(uint64_t n)
{
	return (unsigned)((n + CAP_TPB - 1) / CAP_TPB);
}

/* inv[live[j]] = j: the cache index of each live row (the others stay
 * -1, set by the caller). */
__global__ static void cap_k_inv(const int64_t *live, uint64_t nlive,
				 int64_t *inv, uint64_t nrows)
{
	uint64_t j = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;

	if (j < nlive && live[j] >= 0 && (uint64_t)live[j] < nrows)
		inv[live[j]] = (int64_t)j;
}

/* Word k of an entry of (block, warp, lane) lies HCL_WARP words after
 * word k - 1 (hcl.h), so a warp's k-th words are one line. */
__device__ static inline void cap_put(uint32_t *ent, const hcl_geom *g,
				      uint64_t i, uint32_t e,
				      const hcl_entry *en)
{
	uint32_t words[HCL_ENTRY_WORDS];
	uint32_t b = (uint32_t)(i / g->threads_per_block);
	uint32_t w = (uint32_t)(i % g->threads_per_block) / HCL_WARP;
	uint32_t *w0 =
	    ent + hcl_word_index(g, b, w, (uint32_t)(i % HCL_WARP), e, 0);

	hcl_encode(en, words);
	for (uint32_t k = 0; k < HCL_ENTRY_WORDS; k++)
		w0[(uint64_t)k * HCL_WARP] = words[k];
}

/* Thread i logs row rows[i]: its old values from the cache (UPDATE) or
 * one delete entry when the row is live (DELETE), and its tail. */
__global__ static void cap_k_log(const uint64_t *rows, uint64_t n,
				 const gpu_cap_col *cols, uint32_t ncols,
				 const int64_t *inv, uint64_t nlive,
				 uint64_t nrows, hcl_geom g, uint32_t *ents,
				 uint32_t *tails, unsigned long long *added,
				 unsigned *bad)
{
	uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
	uint64_t r;
	int64_t j;
	uint32_t b, w;

	if (i >= n)
		return;
	r = rows[i];
	if (inv)
		j = r < nrows ? inv[r] : -1;
	else
		j = r < nlive ? (int64_t)r : -1;
	b = (uint32_t)(i / g.threads_per_block);
	w = (uint32_t)(i % g.threads_per_block) / HCL_WARP;
	if (j < 0) {
		/* DELETE: deleted already, nothing to undo; UPDATE: the
		 * cache cannot give its old value */
		if (ncols)
			atomicOr(bad, 1u);
		return;
	}
	if (ncols == 0) {
		hcl_entry en = {HCL_K_DELETE, 0, r, 0, 0};

		cap_put(ents, &g, i, 0, &en);
		tails[hcl_tail_index(&g, b, w, (uint32_t)(i % HCL_WARP))] = 1;
		atomicAdd(added, 1ull);
		return;
	}
	for (uint32_t k = 0; k < ncols; k++) {
		const gpu_cap_col c = cols[k];
		const char *src = (const char *)c.vals + (uint64_t)j * c.width;
		hcl_entry en = {HCL_K_VALUE, c.col, r, 0, 0};

		switch (c.width) {
		case 1:
			en.old_value = *(const uint8_t *)src;
			break;
		case 2:
			en.old_value = *(const uint16_t *)src;
			break;
		case 4:
			en.old_value = *(const uint32_t *)src;
			break;
		default:
			en.old_value = *(const uint64_t *)src;
			break;
		}
		en.old_null = c.nulls && c.nulls[j] ? 1u : 0u;
		cap_put(ents, &g, i, k, &en);
	}
	tails[hcl_tail_index(&g, b, w, (uint32_t)(i % HCL_WARP))] = ncols;
}

/* Device allocations of one call, freed together. */
typedef struct {
	void *p[8];
	int n;
} cap_mem;

static int cap_alloc(cap_mem *m, void **out, size_t bytes, char *err,
		     size_t errlen)
{
	int rc = gpu_alloc(out, bytes ? bytes : 8, err, errlen);

	if (rc == GPMDB_OK)
		m->p[m->n++] = *out;
	return rc;
}

static void cap_free_all(cap_mem *m)
{
	char e[200];

	for (int k = 0; k < m->n; k++)
		(void)gpu_free(m->p[k], e, sizeof(e)); /* nothing to undo */
	m->n = 0;
}

extern "C" int gpu_cap_build(const hcl_geom *g, const uint64_t *rowids,
			     uint64_t n, int ncols, const gpu_cap_col *cols,
			     const int64_t *live_rows, uint64_t nlive,
			     uint64_t nrows, uint64_t *added,
			     gpu_cap_batch **out, gpu_cap_timing *t, char *err,
			     size_t errlen)
{
	cudaStream_t s;
	cap_mem m;
	gpu_cap_batch *b = NULL;
	uint64_t warps = (n + HCL_WARP - 1) / HCL_WARP, *drows = NULL;
	gpu_cap_col *dcols = NULL;
	int64_t *inv = NULL;
	unsigned long long *cnt = NULL, hc[2] = {0, 0};
	double t0 = cap_ms();
	int rc;

	m.n = 0;
	*out = NULL;
	*added = 0;
	if ((rc = gpu_init(err, errlen)))
		return rc;
	s = gpu_stream();
	if (n == 0 || ncols < 0 || ncols > 64 || !g ||
	    g->threads_per_block % HCL_WARP ||
	    (uint64_t)g->nblocks * g->threads_per_block < n ||
	    g->entries_per_thread < (uint32_t)(ncols ? ncols : 1))
		return gpu_say(err, errlen, GPMDB_MISUSE,
			       "gpu_cap_build: bad arguments (%llu rows, %d "
			       "columns)",
			       (unsigned long long)n, ncols);
	b = (gpu_cap_batch *)calloc(1, sizeof(*b));
	if (!b)
		return gpu_say(err, errlen, GPMDB_NOMEM, "out of memory");
	b->tbytes = warps * HCL_WARP * 4;
	b->ebytes =
	    warps * g->entries_per_thread * HCL_ENTRY_WORDS * HCL_LINE_BYTES;
	rc = gpu_alloc((void **)&b->img, b->tbytes + b->ebytes, err, errlen);
	if (rc) {
		free(b);
		return rc;
	}
	if ((rc = cap_alloc(&m, (void **)&drows, n * 8, err, errlen)) ||
	    (rc = cap_alloc(&m, (void **)&cnt, sizeof(hc), err, errlen)) ||
	    (rc = cap_alloc(&m, (void **)&dcols,
			    sizeof(gpu_cap_col) * (ncols ? ncols : 1), err,
			    errlen)))
		goto fail;
	/* pageable uploads go at about 1.3 GB/s: the row ids through the
	 * pinned staging of gpu_upload_staged */
	if ((rc = gpu_upload_staged(drows, rowids, n * 8, err, errlen)) ||
	    (ncols && (rc = gpu_upload(dcols, cols, sizeof(gpu_cap_col) * ncols,
				       err, errlen))) ||
	    (rc = gpu_memset(cnt, 0, sizeof(hc), err, errlen)) ||
	    (rc = gpu_memset(b->img, 0, b->tbytes + b->ebytes, err, errlen)))
		goto fail;
	if (live_rows) {
		if ((rc = cap_alloc(&m, (void **)&inv, nrows * 8, err,
				    errlen)) ||
		    (rc = gpu_memset(inv, 0xff, nrows * 8, err, errlen)))
			goto fail;
		if (nlive) {
			cap_k_inv<<<cap_grid(nlive), CAP_TPB, 0, s>>>(
			    live_rows, nlive, inv, nrows);
			if (cudaError_t e = cudaGetLastError()) {
				rc = gpu_cuda_fail(e, "cap_k_inv", err, errlen);
				goto fail;
			}
		}
	}
	if (cudaError_t e = cudaStreamSynchronize(s)) {
		rc = gpu_cuda_fail(e, "cudaStreamSynchronize (upload)", err,
				   errlen);
		goto fail;
	}
	if (t)
		t->upload_ms += cap_ms() - t0;
	t0 = cap_ms();
	cap_k_log<<<cap_grid(n), CAP_TPB, 0, s>>>(
	    drows, n, dcols, (uint32_t)ncols, inv, nlive, nrows, *g,
	    (uint32_t *)(b->img + b->tbytes), (uint32_t *)b->img, cnt,
	    (unsigned *)(cnt + 1));
	if (cudaError_t e = cudaGetLastError()) {
		rc = gpu_cuda_fail(e, "cap_k_log", err, errlen);
		goto fail;
	}
	if ((rc = gpu_download(hc, cnt, sizeof(hc), err, errlen)))
		goto fail;
	if (t) {
		t->kernel_ms += cap_ms() - t0;
		t->bytes += b->tbytes + b->ebytes;
	}
	if (hc[1]) {
		rc = gpu_say(err, errlen, GPMDB_NOTFOUND,
			     "a row of the UPDATE is not in the column "
			     "cache's live rows");
		goto fail;
	}
	cap_free_all(&m);
	*added = hc[0];
	*out = b;
	return GPMDB_OK;
fail:
	cap_free_all(&m);
	gpu_cap_free(b);
	return rc;
}

extern "C" uint64_t gpu_cap_region_bytes(const gpu_cap_batch *b, int region)
{
	return !b ? 0 : region ? b->tbytes : b->ebytes;
}

/* Two pinned staging buffers and their events, made once and kept: the
 * next batch's copies need them again (pinning costs as much as a copy
 * of the same size). */
static pthread_mutex_t cap_lock = PTHREAD_MUTEX_INITIALIZER;
static char *cap_stage[2];
static cudaEvent_t cap_ev[2];

static int cap_stage_ready(char *err, size_t errlen)
{
	for (int k = 0; k < 2; k++) {
		if (!cap_ev[k])
			GPU_TRY(cudaEventCreateWithFlags(
			    &cap_ev[k], cudaEventDisableTiming));
		if (!cap_stage[k])
			GPU_TRY(cudaHostAlloc((void **)&cap_stage[k], CAP_CHUNK,
					      cudaHostAllocDefault));
	}
	return GPMDB_OK;
}

/* dst[0, len) = src on every core, a piece per task (the destination's
 * first touch of fresh pool pages is most of the cost). */
static void cap_copy(char *dst, const char *src, uint64_t len)
{
	int64_t np = (int64_t)((len + CAP_PIECE - 1) / CAP_PIECE);

#pragma omp parallel for schedule(static) if (np > 2)
	for (int64_t q = 0; q < np; q++) {
		uint64_t o = (uint64_t)q * CAP_PIECE;
		uint64_t k = len - o < CAP_PIECE ? len - o : CAP_PIECE;

		memcpy(dst + o, src + o, k);
	}
}

static int cap_fetch_locked(const char *src, char *dst, uint64_t len, char *err,
			    size_t errlen)
{
	cudaStream_t s = gpu_stream();
	uint64_t nch = (len + CAP_CHUNK - 1) / CAP_CHUNK;
	int rc;

	if ((rc = cap_stage_ready(err, errlen)))
		return rc;
	/* chunk c goes down into buffer c & 1 while the host copies chunk
	 * c - 1 out of the other one */
	for (uint64_t c = 0; c <= nch; c++) {
		if (c < nch) {
			uint64_t o = c * CAP_CHUNK;
			uint64_t k = len - o < CAP_CHUNK ? len - o : CAP_CHUNK;

			GPU_TRY(cudaMemcpyAsync(cap_stage[c & 1], src + o, k,
						cudaMemcpyDeviceToHost, s));
			GPU_TRY(cudaEventRecord(cap_ev[c & 1], s));
		}
		if (c > 0) {
			uint64_t p = c - 1, o = p * CAP_CHUNK;
			uint64_t k = len - o < CAP_CHUNK ? len - o : CAP_CHUNK;

			GPU_TRY(cudaEventSynchronize(cap_ev[p & 1]));
			cap_copy(dst + o, cap_stage[p & 1], k);
		}
	}
	return GPMDB_OK;
}

extern "C" int gpu_cap_fetch(gpu_cap_batch *b, int region, void *dst,
			     gpu_cap_timing *t, char *err, size_t errlen)
{
	double t0 = cap_ms();
	int rc;

	if (!b || !dst)
		return gpu_say(err, errlen, GPMDB_MISUSE,
			       "gpu_cap_fetch: no batch");
	pthread_mutex_lock(&cap_lock);
	rc = cap_fetch_locked(region ? b->img : b->img + b->tbytes, (char *)dst,
			      region ? b->tbytes : b->ebytes, err, errlen);
	pthread_mutex_unlock(&cap_lock);
	if (rc)
		(void)cudaGetLastError(); /* the error is reported */
	if (t)
		t->fetch_ms += cap_ms() - t0;
	return rc;
}

extern "C" void gpu_cap_free(gpu_cap_batch *b)
{
	char e[200];

	if (!b)
		return;
	if (b->img)
		(void)gpu_free(b->img, e, sizeof(e)); /* nothing to undo */
	free(b);
}

extern "C" void gpu_cap_note(int done)
{
	dml_note(done);
}
