/*
 * dml.cu - GPU writes into the registered pool (gpu_dml.h): UPDATE and
 * DELETE with HCL undo logging, INSERT at the tail, and the recovery
 * kernel that undoes an HCL segment in parallel.
 *
 * UPDATE/DELETE, thread i = row rowids[i] = HCL thread i of the segment's
 * geometry (256-thread blocks, as the CPU writer pretends):
 *   1. its entries (kind|col, row, old value, old NULL bit) into its slot,
 *      striped so a warp's k-th words are one 128-byte line; persist;
 *   2. its tail = entries written; persist;
 *   3. the new values in place; persist.
 * A crash between any two steps leaves a state recovery undoes (hcl.h).
 * NULL and deleted bits of different rows share 32-bit words, and
 * atomics on host memory over PCIe are not something to rely on, so step
 * 3 records bit changes as set/clear masks in device memory (atomics on
 * HBM) and a second kernel, one thread per touched word, stores each
 * changed word once.  That kernel runs after the logging kernel finished,
 * so every bit change still follows its persisted entry.
 *
 * Conventional logging (PRAGMA gpu_log = conventional, dml_k_conv) is
 * the baseline: entries appended to locked log partitions, written in
 * the same segment format.
 *
 * No function here waits for anything but its own stream.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "gpu_dml.h"
#include "gpu_internal.h"
#include "persist.cuh"

#include "gpmdb.h"

#define DML_TPB 256u /* HCL's geometry (hcl.c's HCL_TPB) */

/* ---- tablet geometry: storage/tablet.c's, for host and device ------ */

#define DML_BIG_ROW  (1024ull * 1023) /* first row of tablet 10 */
#define DML_MAX_ROWS (1ull << 20)

__host__ __device__ static inline uint64_t dml_tab_index(uint64_t row)
{
	uint64_t x, i = 0;

	if (row >= DML_BIG_ROW)
		return 10 + (row - DML_BIG_ROW) / DML_MAX_ROWS;
	/* tablet i holds rows [1024 (2^i - 1), 1024 (2^(i+1) - 1)) */
	x = row / 1024 + 1;
	while (x >>= 1)
		i++;
	return i;
}

__host__ __device__ static inline uint64_t dml_first_row(uint64_t idx)
{
	if (idx <= 10)
		return 1024ull * ((1ull << idx) - 1);
	return DML_BIG_ROW + (idx - 10) * DML_MAX_ROWS;
}

__host__ __device__ static inline uint64_t dml_capacity(uint64_t idx)
{
	return idx >= 10 ? DML_MAX_ROWS : 1024ull << idx;
}

static double dml_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* ---- device helpers ------------------------------------------------- */

__device__ static inline uint64_t dml_load(const char *p, uint32_t w)
{
	switch (w) {
	case 8:
		return *(const uint64_t *)p;
	case 4:
		return *(const uint32_t *)p;
	case 2:
		return *(const uint16_t *)p;
	default:
		return *(const uint8_t *)p;
	}
}

__device__ static inline void dml_store(char *p, uint64_t v, uint32_t w)
{
	switch (w) {
	case 8:
		*(uint64_t *)p = v;
		break;
	case 4:
		*(uint32_t *)p = (uint32_t)v;
		break;
	case 2:
		*(uint16_t *)p = (uint16_t)v;
		break;
	default:
		*(uint8_t *)p = (uint8_t)v;
	}
}

__device__ static inline uint32_t dml_bit(const uint32_t *w, uint64_t i)
{
	return (w[i >> 5] >> (i & 31)) & 1u;
}

/* Word k of an entry of (block, warp, lane) lies HCL_WARP words after
 * word k - 1: the striping that makes a warp's stores one line. */
__device__ static inline void dml_put_entry(uint32_t *ent, const hcl_geom *g,
					    uint32_t b, uint32_t w, uint32_t l,
					    uint32_t e, const hcl_entry *en)
{
	uint32_t words[HCL_ENTRY_WORDS];
	uint32_t *w0 = ent + hcl_word_index(g, b, w, l, e, 0);

	hcl_encode(en, words);
	for (uint32_t k = 0; k < HCL_ENTRY_WORDS; k++)
		w0[(uint64_t)k * HCL_WARP] = words[k];
}

/* ---- UPDATE / DELETE ------------------------------------------------ */

struct dml_args {
	char *pool;
	uint64_t seg_off;
	hcl_geom g;
	const uint64_t *tab;
	uint32_t stride, ntab;
	const uint64_t *rows;
	uint64_t n;
	uint32_t ncols;		    /* updated columns (DELETE: 0) */
	const uint32_t *cols;	    /* table column of each (device) */
	const uint32_t *widths;	    /* its width (device) */
	const char *const *vals;    /* device pointers (device array) */
	const uint32_t *const *nls; /* NULL bitmaps or NULL (device array) */
	uint32_t *setm, *clrm;	    /* [k * nwords + row / 32] */
	uint64_t nwords;
	int is_delete;
};

/* Rows not yet deleted get an entry; the bit is read again in each phase
 * kernel (it changes only in the bits kernel, which runs last). */
__device__ static inline uint32_t dml_nent(const dml_args &a,
					   const uint64_t *tt, uint64_t lr)
{
	if (!a.is_delete)
		return a.ncols;
	return !dml_bit((const uint32_t *)(a.pool + tt[a.stride - 1]), lr);
}

/* Step 3 of thread i (row row, tablet offsets tt, row lr in it): the new
 * values in place, bit changes as masks in HBM (stored by dml_k_bits). */
__device__ static inline void dml_data(const dml_args &a, uint64_t i,
				       uint64_t row, const uint64_t *tt,
				       uint64_t lr)
{
	if (a.is_delete) {
		atomicOr(&a.setm[row >> 5], 1u << (row & 31));
		return;
	}
	for (uint32_t k = 0; k < a.ncols; k++) {
		uint32_t c = a.cols[k], w = a.widths[k];
		bool nul = a.nls[k] && dml_bit(a.nls[k], i);
		uint64_t v = nul ? 0 : dml_load(a.vals[k] + i * w, w);
		uint32_t *m = nul ? a.setm : a.clrm;

		dml_store(a.pool + tt[2 * c] + lr * w, v, w);
		atomicOr(&m[k * a.nwords + (row >> 5)], 1u << (row & 31));
	}
}

__global__ void dml_k_hcl(dml_args a, int phases, int scope)
{
	uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
	bool act = i < a.n;
	uint32_t wp = threadIdx.x / HCL_WARP, ln = threadIdx.x % HCL_WARP;
	char *seg = a.pool + a.seg_off;
	uint32_t *ent = (uint32_t *)(seg + hcl_entries_offset(&a.g));
	uint32_t *tails = (uint32_t *)(seg + hcl_tails_offset());
	const uint64_t *tt = a.tab;
	uint64_t row = 0, lr = 0;

	if (act) {
		uint64_t ti;

		row = a.rows[i];
		ti = dml_tab_index(row);
		tt = a.tab + ti * a.stride;
		lr = row - dml_first_row(ti);
	}
	if (phases & 1) {
		if (act && a.is_delete) {
			hcl_entry en = {HCL_K_DELETE, 0, row, 0, 0};

			if (dml_nent(a, tt, lr))
				dml_put_entry(ent, &a.g, blockIdx.x, wp, ln, 0,
					      &en);
		} else if (act) {
			for (uint32_t k = 0; k < a.ncols; k++) {
				uint32_t c = a.cols[k], w = a.widths[k];
				hcl_entry en;

				en.kind = HCL_K_VALUE;
				en.col = c;
				en.row = row;
				en.old_value =
				    dml_load(a.pool + tt[2 * c] + lr * w, w);
				en.old_null = dml_bit(
				    (const uint32_t *)(a.pool + tt[2 * c + 1]),
				    lr);
				dml_put_entry(ent, &a.g, blockIdx.x, wp, ln, k,
					      &en);
			}
		}
		/* Entries before the tail that makes them count.  A
		 * thread's entries guard only its own row, so thread scope
		 * is enough; block and grid are the wider variants. */
		gpm_persist(scope);
	}
	if (phases & 2) {
		if (act)
			tails[hcl_tail_index(&a.g, blockIdx.x, wp, ln)] =
			    dml_nent(a, tt, lr);
		/* The tail before the row's data: same reasoning. */
		gpm_persist(scope);
	}
	if (phases & 4) {
		if (act)
			dml_data(a, i, row, tt, lr);
		/* The values must be in the pool before the host's commit:
		 * fence here, the kernel boundary and the host's sync do the
		 * rest (grid scope). */
		gpm_persist_thread();
	}
}

/* One thread per 32-row word (blockIdx.y = mask set k): stores the words
 * whose bits change, once each. */
__global__ void dml_k_bits(char *pool, const uint64_t *tab, uint32_t stride,
			   const uint32_t *cols, int is_delete,
			   const uint32_t *setm, const uint32_t *clrm,
			   uint64_t nwords, unsigned long long *added)
{
	uint64_t wd = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
	uint64_t k = blockIdx.y, ti, lw;
	uint32_t s, c, old, nw, *p;
	const uint64_t *tt;

	if (wd >= nwords)
		return;
	s = setm[k * nwords + wd];
	c = clrm ? clrm[k * nwords + wd] : 0;
	if ((s | c) == 0)
		return;
	/* tablets start at multiples of 1024 rows: a global word is one
	 * word of one tablet */
	ti = dml_tab_index(wd * 32);
	tt = tab + ti * stride;
	lw = (wd * 32 - dml_first_row(ti)) / 32;
	p = (uint32_t *)(pool +
			 (is_delete ? tt[stride - 1] : tt[2 * cols[k] + 1])) +
	    lw;
	old = *p;
	nw = (old | s) & ~c;
	if (nw != old)
		*p = nw;
	if (is_delete && added)
		atomicAdd(added, (unsigned long long)__popc(s & ~old));
	gpm_persist_thread(); /* before the host's commit (grid scope) */
}

/*
 * Conventional logging (PRAGMA gpu_log = conventional): the baseline HCL
 * is measured against, as classic distributed logging does it.  The undo
 * log is nparts partitions; partition p is HCL thread p of the segment
 * (so the format, and recovery, stay HCL's) and thread i of the batch
 * appends to partition i % nparts:
 *   1. claims ncols entries with an atomicAdd on the partition's claim
 *      counter (HBM), writes them at the claimed position, persists;
 *   2. waits until the partition's published tail reaches its position:
 *      entries become valid in claim order, so the persisted tail stays
 *      a sentinel (every entry below it is persisted).  This serial
 *      hand-off per partition is the lock of a locked log partition;
 *   3. stores and persists tail = position + ncols, publishes it;
 *   4. stores its new values in place (dml_data), persists.
 * Waiting cannot deadlock: a claimed position is held by a running
 * thread, and the lowest unpublished one waits for nothing (Volta and
 * later schedule diverged threads independently).
 */
__global__ void dml_k_conv(dml_args a, uint32_t nparts, uint32_t *claim,
			   uint32_t *pub)
{
	uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
	char *seg = a.pool + a.seg_off;
	uint32_t *ent = (uint32_t *)(seg + hcl_entries_offset(&a.g));
	uint32_t *tails = (uint32_t *)(seg + hcl_tails_offset());
	uint32_t p, b, w, l, e0;
	uint64_t row, ti, lr;
	const uint64_t *tt;

	if (i >= a.n)
		return;
	p = (uint32_t)(i % nparts);
	b = p / a.g.threads_per_block;
	w = (p % a.g.threads_per_block) / HCL_WARP;
	l = p % HCL_WARP;
	row = a.rows[i];
	ti = dml_tab_index(row);
	tt = a.tab + ti * a.stride;
	lr = row - dml_first_row(ti);
	e0 = atomicAdd(&claim[p], a.ncols);
	for (uint32_t k = 0; k < a.ncols; k++) {
		uint32_t c = a.cols[k], wd = a.widths[k];
		hcl_entry en;

		en.kind = HCL_K_VALUE;
		en.col = c;
		en.row = row;
		en.old_value = dml_load(a.pool + tt[2 * c] + lr * wd, wd);
		en.old_null =
		    dml_bit((const uint32_t *)(a.pool + tt[2 * c + 1]), lr);
		dml_put_entry(ent, &a.g, b, w, l, e0 + k, &en);
	}
	gpm_persist_thread(); /* the entries before the tail covers them */
	while (*(volatile uint32_t *)&pub[p] != e0)
		__nanosleep(32);
	__threadfence(); /* acquire: the previous tail store came first */
	tails[hcl_tail_index(&a.g, b, w, l)] = e0 + a.ncols;
	gpm_persist_thread(); /* the tail before the next one and the data */
	atomicExch(&pub[p], e0 + a.ncols);
	dml_data(a, i, row, tt, lr);
	gpm_persist_thread(); /* before the host's commit (grid scope) */
}

/* Device allocations of one call, freed together. */
struct dml_mem {
	void *p[160]; /* 4 + 2 per column (64 at most) + 4 */
	int n;
};

static int dml_alloc(dml_mem *m, void **out, size_t bytes, char *err,
		     size_t errlen)
{
	int rc = gpu_alloc(out, bytes ? bytes : 8, err, errlen);

	if (rc == GPMDB_OK)
		m->p[m->n++] = *out;
	return rc;
}

static void dml_free_all(dml_mem *m)
{
	for (int i = 0; i < m->n; i++)
		gpu_free(m->p[i], NULL, 0);
	m->n = 0;
}

static int dml_up(dml_mem *m, void **out, const void *src, size_t bytes,
		  char *err, size_t errlen)
{
	int rc = dml_alloc(m, out, bytes, err, errlen);

	if (rc == GPMDB_OK && bytes)
		rc = gpu_upload(*out, src, bytes, err, errlen);
	return rc;
}

static unsigned dml_grid(uint64_t n)
{
	return (unsigned)((n + DML_TPB - 1) / DML_TPB);
}

/* Launches the logging and data phases as the scope says and the bits
 * kernel after them. */
static int dml_run(dml_mem *m, dml_args &a, int scope, uint32_t nparts,
		   unsigned long long *dadded, gpu_dml_timing *t, char *err,
		   size_t errlen)
{
	cudaStream_t s = gpu_stream();
	unsigned nb = a.g.nblocks;
	int nk = a.is_delete ? 1 : (int)a.ncols;
	double t0 = dml_ms();

	if (nparts) {
		/* conventional: nparts slots of ceil(n / nparts) rows each */
		uint32_t *claim = NULL, *pub = NULL;
		uint64_t per = (a.n + nparts - 1) / nparts;
		int rc;

		if (a.is_delete || nparts > hcl_threads(&a.g) ||
		    per * a.ncols > a.g.entries_per_thread) {
			snprintf(err, errlen,
				 "log partitions do not fit the batch");
			return GPMDB_MISUSE;
		}
		if ((rc = dml_alloc(m, (void **)&claim, 4ull * nparts, err,
				    errlen)) ||
		    (rc = dml_alloc(m, (void **)&pub, 4ull * nparts, err,
				    errlen)) ||
		    (rc = gpu_memset(claim, 0, 4ull * nparts, err, errlen)) ||
		    (rc = gpu_memset(pub, 0, 4ull * nparts, err, errlen)))
			return rc;
		t0 = dml_ms();
		dml_k_conv<<<dml_grid(a.n), DML_TPB, 0, s>>>(a, nparts, claim,
							     pub);
	} else if (a.n > (uint64_t)nb * DML_TPB ||
		   a.g.threads_per_block != DML_TPB) {
		snprintf(err, errlen, "HCL geometry does not fit the batch");
		return GPMDB_MISUSE;
	} else if (scope == GPU_SCOPE_GRID) {
		/* three kernels: all entries, then all tails, then data */
		dml_k_hcl<<<nb, DML_TPB, 0, s>>>(a, 1, scope);
		GPU_TRY(cudaGetLastError());
		dml_k_hcl<<<nb, DML_TPB, 0, s>>>(a, 2, scope);
		GPU_TRY(cudaGetLastError());
		GPU_TRY(cudaStreamSynchronize(s));
		t->log_ms = dml_ms() - t0;
		t0 = dml_ms();
		dml_k_hcl<<<nb, DML_TPB, 0, s>>>(a, 4, scope);
	} else {
		dml_k_hcl<<<nb, DML_TPB, 0, s>>>(a, 7, scope);
	}
	GPU_TRY(cudaGetLastError());
	if (nparts) {
		/* the log and the data are one kernel: its time is log_ms */
		GPU_TRY(cudaStreamSynchronize(s));
		t->log_ms = dml_ms() - t0;
		t0 = dml_ms();
	}
	if (a.nwords) {
		dim3 grid(dml_grid(a.nwords), (unsigned)nk);

		dml_k_bits<<<grid, DML_TPB, 0, s>>>(
		    a.pool, a.tab, a.stride, a.cols, a.is_delete, a.setm,
		    a.is_delete ? NULL : a.clrm, a.nwords, dadded);
		GPU_TRY(cudaGetLastError());
	}
	GPU_TRY(cudaStreamSynchronize(s));
	t->data_ms = dml_ms() - t0;
	return GPMDB_OK;
}

static int dml_common(dml_mem *m, dml_args &a, void *pool, uint64_t seg_off,
		      const hcl_geom *geom, const gpu_tab_layout *lay,
		      const uint64_t *rowids, uint64_t n, int nk, char *err,
		      size_t errlen)
{
	uint64_t rows = 0;
	int rc;

	memset(&a, 0, sizeof(a));
	a.pool = (char *)pool;
	a.seg_off = seg_off;
	a.g = *geom;
	a.stride = lay->stride;
	a.ntab = lay->ntab;
	a.n = n;
	for (uint64_t i = 0; i < n; i++) {
		if (dml_tab_index(rowids[i]) >= lay->ntab) {
			snprintf(err, errlen, "row %llu has no tablet",
				 (unsigned long long)rowids[i]);
			return GPMDB_MISUSE;
		}
		if (rowids[i] + 1 > rows)
			rows = rowids[i] + 1;
	}
	a.nwords = (rows + 31) / 32;
	if ((rc = dml_up(m, (void **)&a.tab, lay->tab,
			 (size_t)lay->ntab * lay->stride * 8, err, errlen)) ||
	    (rc = dml_up(m, (void **)&a.rows, rowids, n * 8, err, errlen)) ||
	    (rc = dml_alloc(m, (void **)&a.setm, a.nwords * 4 * nk, err,
			    errlen)) ||
	    (rc = dml_alloc(m, (void **)&a.clrm, a.nwords * 4 * nk, err,
			    errlen)) ||
	    (rc = gpu_memset(a.setm, 0, a.nwords * 4 * nk, err, errlen)) ||
	    (rc = gpu_memset(a.clrm, 0, a.nwords * 4 * nk, err, errlen)))
		return rc;
	return GPMDB_OK;
}

/* UPDATE with HCL (nparts 0, scope) or conventional logging into nparts
 * partitions. */
static int dml_update(void *pool, uint64_t seg_off, const hcl_geom *geom,
		      const gpu_tab_layout *lay, const uint64_t *rowids,
		      uint64_t n, int ncols, const uint32_t *cols,
		      const void *const *vals, const uint32_t *const *nulls,
		      int scope, uint32_t nparts, gpu_dml_timing *t, char *err,
		      size_t errlen)
{
	dml_mem m;

	m.n = 0;
	dml_args a;
	gpu_dml_timing tt;
	uint32_t widths[64];
	const void *dv[64], *dn[64];
	double t0 = dml_ms();
	int rc;

	if (!t)
		t = &tt;
	memset(t, 0, sizeof(*t));
	if ((rc = gpu_init(err, errlen)))
		return rc;
	if (n == 0)
		return GPMDB_OK;
	if (ncols < 1 || ncols > 64) {
		snprintf(err, errlen, "GPU UPDATE of %d columns (1 to 64)",
			 ncols);
		return GPMDB_UNSUPPORTED;
	}
	rc = dml_common(&m, a, pool, seg_off, geom, lay, rowids, n, ncols, err,
			errlen);
	for (int k = 0; k < ncols && rc == GPMDB_OK; k++) {
		void *p = NULL;

		widths[k] = lay->widths[cols[k]];
		t->bytes += n * (widths[k] + 4);
		rc = dml_up(&m, &p, vals[k], n * widths[k], err, errlen);
		dv[k] = p;
		dn[k] = NULL;
		if (rc == GPMDB_OK && nulls[k]) {
			rc = dml_up(&m, &p, nulls[k], (n + 31) / 32 * 4, err,
				    errlen);
			dn[k] = p;
		}
	}
	if (rc == GPMDB_OK)
		rc = dml_up(&m, (void **)&a.cols, cols, 4 * (size_t)ncols, err,
			    errlen);
	if (rc == GPMDB_OK)
		rc = dml_up(&m, (void **)&a.widths, widths, 4 * (size_t)ncols,
			    err, errlen);
	if (rc == GPMDB_OK)
		rc = dml_up(&m, (void **)&a.vals, dv, 8 * (size_t)ncols, err,
			    errlen);
	if (rc == GPMDB_OK)
		rc = dml_up(&m, (void **)&a.nls, dn, 8 * (size_t)ncols, err,
			    errlen);
	if (rc == GPMDB_OK) {
		cudaError_t e = cudaStreamSynchronize(gpu_stream());
		if (e != cudaSuccess)
			rc = gpu_cuda_fail(e, "cudaStreamSynchronize", err,
					   errlen);
	}
	t->upload_ms = dml_ms() - t0;
	if (rc == GPMDB_OK) {
		a.ncols = (uint32_t)ncols;
		rc = dml_run(&m, a, scope, nparts, NULL, t, err, errlen);
	}
	dml_free_all(&m);
	t->bytes += 4ull * HCL_ENTRY_WORDS * ncols * n + 4 * n;
	t->total_ms = dml_ms() - t0;
	return rc;
}

extern "C" int gpu_hcl_update(void *pool, uint64_t seg_off,
			      const hcl_geom *geom, const gpu_tab_layout *lay,
			      const uint64_t *rowids, uint64_t n, int ncols,
			      const uint32_t *cols, const void *const *vals,
			      const uint32_t *const *nulls, int scope,
			      gpu_dml_timing *t, char *err, size_t errlen)
{
	return dml_update(pool, seg_off, geom, lay, rowids, n, ncols, cols,
			  vals, nulls, scope, 0, t, err, errlen);
}

extern "C" int gpu_conv_update(void *pool, uint64_t seg_off,
			       const hcl_geom *geom, const gpu_tab_layout *lay,
			       const uint64_t *rowids, uint64_t n, int ncols,
			       const uint32_t *cols, const void *const *vals,
			       const uint32_t *const *nulls, uint32_t nparts,
			       gpu_dml_timing *t, char *err, size_t errlen)
{
	if (nparts == 0) {
		snprintf(err, errlen, "conventional logging: no partitions");
		return GPMDB_MISUSE;
	}
	return dml_update(pool, seg_off, geom, lay, rowids, n, ncols, cols,
			  vals, nulls, GPU_SCOPE_THREAD, nparts, t, err,
			  errlen);
}

extern "C" int gpu_hcl_delete(void *pool, uint64_t seg_off,
			      const hcl_geom *geom, const gpu_tab_layout *lay,
			      const uint64_t *rowids, uint64_t n, int scope,
			      uint64_t *added, gpu_dml_timing *t, char *err,
			      size_t errlen)
{
	dml_mem m;

	m.n = 0;
	dml_args a;
	gpu_dml_timing tt;
	unsigned long long *dadded = NULL, hadded = 0;
	double t0 = dml_ms();
	int rc;

	if (!t)
		t = &tt;
	memset(t, 0, sizeof(*t));
	*added = 0;
	if ((rc = gpu_init(err, errlen)))
		return rc;
	if (n == 0)
		return GPMDB_OK;
	rc = dml_common(&m, a, pool, seg_off, geom, lay, rowids, n, 1, err,
			errlen);
	if (rc == GPMDB_OK)
		rc = dml_alloc(&m, (void **)&dadded, 8, err, errlen);
	if (rc == GPMDB_OK)
		rc = gpu_memset(dadded, 0, 8, err, errlen);
	t->upload_ms = dml_ms() - t0;
	if (rc == GPMDB_OK) {
		a.is_delete = 1;
		rc = dml_run(&m, a, scope, 0, dadded, t, err, errlen);
	}
	if (rc == GPMDB_OK)
		rc = gpu_download(&hadded, dadded, 8, err, errlen);
	dml_free_all(&m);
	*added = hadded;
	t->bytes = 4ull * HCL_ENTRY_WORDS * n + 8 * n;
	t->total_ms = dml_ms() - t0;
	return rc;
}

/* ---- INSERT --------------------------------------------------------- */

/* Values of rows [lr, lr + n) of one column of one tablet: coalesced. */
__global__ void dml_k_copy(char *dst, const char *src, uint64_t n, uint32_t w)
{
	uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		dml_store(dst + i * w, dml_load(src + i * w, w), w);
	gpm_persist_thread(); /* before the host's row count (grid scope) */
}

/* Bits [lr0, lr0 + n) of a tablet bitmap from bits [b0, b0 + n) of src
 * (NULL: zeros), one thread per destination word: the first and last
 * words keep the bits of the rows around them. */
__global__ void dml_k_putbits(uint32_t *dst, uint64_t lr0, uint64_t n,
			      const uint32_t *src, uint64_t b0)
{
	uint64_t wd =
	    (lr0 >> 5) + (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
	uint32_t old, out = 0;

	if (wd > (lr0 + n - 1) >> 5)
		return;
	old = dst[wd];
	for (uint32_t b = 0; b < 32; b++) {
		uint64_t r = wd * 32 + b;
		uint32_t bit;

		if (r >= lr0 && r < lr0 + n)
			bit = src ? dml_bit(src, b0 + (r - lr0)) : 0;
		else
			bit = (old >> b) & 1u;
		out |= bit << b;
	}
	if (out != old)
		dst[wd] = out;
	gpm_persist_thread();
}

extern "C" int gpu_append(void *pool, const gpu_tab_layout *lay, uint64_t start,
			  uint64_t n, const void *const *vals,
			  const uint32_t *const *nulls, gpu_dml_timing *t,
			  char *err, size_t errlen)
{
	cudaStream_t s;
	gpu_dml_timing tt;
	double t0 = dml_ms();
	char *cp = (char *)pool;
	int rc;

	if (!t)
		t = &tt;
	memset(t, 0, sizeof(*t));
	if ((rc = gpu_init(err, errlen)))
		return rc;
	if (n == 0)
		return GPMDB_OK;
	s = gpu_stream();
	if (dml_tab_index(start + n - 1) >= lay->ntab) {
		snprintf(err, errlen, "rows up to %llu have no tablet",
			 (unsigned long long)(start + n));
		return GPMDB_MISUSE;
	}
	/* Column by column: upload, then one coalesced copy per tablet;
	 * one device buffer at a time keeps the footprint at one column. */
	for (uint32_t c = 0; c <= lay->ncols && rc == GPMDB_OK; c++) {
		dml_mem m;

		m.n = 0;
		uint32_t w = c < lay->ncols ? lay->widths[c] : 0;
		void *dv = NULL, *dn = NULL;
		double tu = dml_ms();

		if (c < lay->ncols) {
			rc = dml_up(&m, &dv, vals[c], n * w, err, errlen);
			if (rc == GPMDB_OK && nulls[c])
				rc = dml_up(&m, &dn, nulls[c],
					    (n + 31) / 32 * 4, err, errlen);
		}
		t->upload_ms += dml_ms() - tu;
		for (uint64_t r = start; r < start + n && rc == GPMDB_OK;) {
			uint64_t ti = dml_tab_index(r);
			uint64_t f = dml_first_row(ti), cap = dml_capacity(ti);
			uint64_t r1 = start + n < f + cap ? start + n : f + cap;
			uint64_t lr = r - f, k = r1 - r, b0 = r - start;
			const uint64_t *tt2 = lay->tab + ti * lay->stride;
			uint64_t nwd = ((lr + k - 1) >> 5) - (lr >> 5) + 1;

			if (c < lay->ncols) {
				dml_k_copy<<<dml_grid(k), DML_TPB, 0, s>>>(
				    cp + tt2[2 * c] + lr * w,
				    (const char *)dv + b0 * w, k, w);
				cudaError_t e = cudaGetLastError();
				if (e == cudaSuccess) {
					dml_k_putbits<<<dml_grid(nwd), DML_TPB,
							0, s>>>(
					    (uint32_t *)(cp + tt2[2 * c + 1]),
					    lr, k, (const uint32_t *)dn, b0);
					e = cudaGetLastError();
				}
				if (e != cudaSuccess)
					rc = gpu_cuda_fail(e, "dml_k_copy", err,
							   errlen);
				t->bytes += k * w + k / 8;
			} else {
				dml_k_putbits<<<dml_grid(nwd), DML_TPB, 0, s>>>(
				    (uint32_t *)(cp + tt2[lay->stride - 1]), lr,
				    k, NULL, 0);
				cudaError_t e = cudaGetLastError();
				if (e != cudaSuccess)
					rc = gpu_cuda_fail(e, "dml_k_putbits",
							   err, errlen);
				t->bytes += k / 8;
			}
			r = r1;
		}
		dml_free_all(&m); /* stream-ordered: after the kernels */
	}
	if (rc == GPMDB_OK) {
		cudaError_t e = cudaStreamSynchronize(s);
		if (e != cudaSuccess)
			rc = gpu_cuda_fail(e, "cudaStreamSynchronize", err,
					   errlen);
	}
	t->total_ms = dml_ms() - t0;
	t->data_ms = t->total_ms - t->upload_ms;
	return rc;
}

/* ---- recovery ------------------------------------------------------- */

struct rec_args {
	char *pool;
	hcl_geom g;
	const uint32_t *tails, *ent;
	const uint64_t *tab;
	uint32_t stride, ntab, ncols;
	const uint32_t *widths;
	uint64_t row_count, nwords;
	uint32_t *setm, *clrm; /* [c * nwords + w]; c = ncols: deleted */
	unsigned long long *applied;
	int *bad;
};

__device__ static inline void rec_entry(const rec_args &a, uint32_t b,
					uint32_t w, uint32_t l, uint32_t e,
					hcl_entry *en)
{
	uint32_t words[HCL_ENTRY_WORDS];
	const uint32_t *w0 = a.ent + hcl_word_index(&a.g, b, w, l, e, 0);

	for (uint32_t k = 0; k < HCL_ENTRY_WORDS; k++)
		words[k] = w0[(uint64_t)k * HCL_WARP];
	hcl_decode(words, en);
}

/* check = 1: validate only (tails within slots, kinds, columns, rows in
 * tablets), so that nothing is applied from a damaged segment. */
__global__ void dml_k_recover(rec_args a, int check)
{
	uint64_t t = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
	uint32_t b, w, l, tail;

	if (t >= hcl_threads(&a.g))
		return;
	b = (uint32_t)(t / a.g.threads_per_block);
	w = (uint32_t)(t % a.g.threads_per_block) / HCL_WARP;
	l = (uint32_t)(t % HCL_WARP);
	tail = a.tails[hcl_tail_index(&a.g, b, w, l)];
	if (tail > a.g.entries_per_thread) {
		*a.bad = 1;
		return;
	}
	/* newest first, as hcl_foreach; rows of one batch are distinct */
	for (uint32_t e = tail; e-- > 0;) {
		hcl_entry en;

		rec_entry(a, b, w, l, e, &en);
		if (check) {
			if ((en.kind != HCL_K_VALUE &&
			     en.kind != HCL_K_DELETE) ||
			    (en.kind == HCL_K_VALUE && en.col >= a.ncols) ||
			    (en.row < a.row_count &&
			     dml_tab_index(en.row) >= a.ntab))
				*a.bad = 1;
			continue;
		}
		if (en.row >= a.row_count)
			continue; /* appended after what we roll back to */
		uint64_t ti = dml_tab_index(en.row);
		const uint64_t *tt = a.tab + ti * a.stride;
		uint64_t lr = en.row - dml_first_row(ti);
		uint32_t bit = 1u << (en.row & 31);

		if (en.kind == HCL_K_VALUE) {
			uint32_t wd = a.widths[en.col];

			dml_store(a.pool + tt[2 * en.col] + lr * wd,
				  en.old_value, wd);
			atomicOr(
			    &(en.old_null
				  ? a.setm
				  : a.clrm)[en.col * a.nwords + (en.row >> 5)],
			    bit);
		} else {
			atomicOr(&a.clrm[a.ncols * a.nwords + (en.row >> 5)],
				 bit);
		}
		atomicAdd(a.applied, 1ull);
	}
	if (!check)
		gpm_persist_thread(); /* before recovery truncates the log */
}

/* Bits of recovery: k < ncols NULL bitmaps, k = ncols deleted. */
__global__ void dml_k_recbits(char *pool, const uint64_t *tab, uint32_t stride,
			      uint32_t ncols, const uint32_t *setm,
			      const uint32_t *clrm, uint64_t nwords)
{
	uint64_t wd = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
	uint64_t k = blockIdx.y, ti, lw;
	uint32_t s, c, old, nw, *p;
	const uint64_t *tt;

	if (wd >= nwords)
		return;
	s = setm[k * nwords + wd];
	c = clrm[k * nwords + wd];
	if ((s | c) == 0)
		return;
	ti = dml_tab_index(wd * 32);
	tt = tab + ti * stride;
	lw = (wd * 32 - dml_first_row(ti)) / 32;
	p = (uint32_t *)(pool + (k == ncols ? tt[stride - 1] : tt[2 * k + 1])) +
	    lw;
	old = *p;
	nw = (old | s) & ~c;
	if (nw != old)
		*p = nw;
	gpm_persist_thread();
}

extern "C" int gpu_hcl_recover(void *pool, uint64_t map_len, uint64_t seg_off,
			       uint64_t seg_size, const gpu_tab_layout *lay,
			       uint64_t row_count, uint64_t *applied, char *err,
			       size_t errlen)
{
	dml_mem m;

	m.n = 0;
	rec_args a;
	hcl_header h;
	cudaStream_t s;
	unsigned long long happ = 0;
	int hbad = 0, rc, reg = 0;
	uint64_t nth, sets;

	*applied = 0;
	if ((rc = gpu_init(err, errlen)))
		return rc;
	if (seg_size < sizeof(h) || seg_off + seg_size > map_len) {
		snprintf(err, errlen, "HCL segment outside the pool");
		return GPMDB_CORRUPT;
	}
	memcpy(&h, (char *)pool + seg_off, sizeof(h));
	if (hcl_segment_bytes(&h.geom) > seg_size ||
	    h.geom.threads_per_block == 0 ||
	    h.geom.threads_per_block % HCL_WARP) {
		snprintf(err, errlen, "HCL segment header is bad");
		return GPMDB_CORRUPT;
	}
	if (!gpu_pm_is_registered(pool, map_len)) {
		if ((rc = gpu_pm_register(pool, map_len, err, errlen)))
			return rc;
		reg = 1;
	}
	s = gpu_stream();
	memset(&a, 0, sizeof(a));
	a.pool = (char *)pool;
	a.g = h.geom;
	a.tails =
	    (const uint32_t *)((char *)pool + seg_off + hcl_tails_offset());
	a.ent = (const uint32_t *)((char *)pool + seg_off +
				   hcl_entries_offset(&h.geom));
	a.stride = lay->stride;
	a.ntab = lay->ntab;
	a.ncols = lay->ncols;
	a.row_count = row_count;
	a.nwords = (row_count + 31) / 32;
	sets = (uint64_t)lay->ncols + 1;
	nth = hcl_threads(&h.geom);
	if ((rc = dml_up(&m, (void **)&a.tab, lay->tab,
			 (size_t)lay->ntab * lay->stride * 8, err, errlen)) ||
	    (rc = dml_up(&m, (void **)&a.widths, lay->widths,
			 4 * (size_t)lay->ncols, err, errlen)) ||
	    (rc = dml_alloc(&m, (void **)&a.setm, a.nwords * 4 * sets, err,
			    errlen)) ||
	    (rc = dml_alloc(&m, (void **)&a.clrm, a.nwords * 4 * sets, err,
			    errlen)) ||
	    (rc = dml_alloc(&m, (void **)&a.applied, 8, err, errlen)) ||
	    (rc = dml_alloc(&m, (void **)&a.bad, 4, err, errlen)) ||
	    (rc = gpu_memset(a.setm, 0, a.nwords * 4 * sets, err, errlen)) ||
	    (rc = gpu_memset(a.clrm, 0, a.nwords * 4 * sets, err, errlen)) ||
	    (rc = gpu_memset(a.applied, 0, 8, err, errlen)) ||
	    (rc = gpu_memset(a.bad, 0, 4, err, errlen)))
		goto out;
	dml_k_recover<<<dml_grid(nth), DML_TPB, 0, s>>>(a, 1);
	{
		cudaError_t e = cudaGetLastError();
		if (e != cudaSuccess) {
			rc = gpu_cuda_fail(e, "dml_k_recover", err, errlen);
			goto out;
		}
	}
	if ((rc = gpu_download(&hbad, a.bad, 4, err, errlen)))
		goto out;
	if (hbad) {
		snprintf(err, errlen, "HCL segment at 0x%llx is damaged",
			 (unsigned long long)seg_off);
		rc = GPMDB_CORRUPT;
		goto out;
	}
	dml_k_recover<<<dml_grid(nth), DML_TPB, 0, s>>>(a, 0);
	{
		cudaError_t e = cudaGetLastError();
		if (e == cudaSuccess && a.nwords) {
			dim3 grid(dml_grid(a.nwords), (unsigned)sets);

			dml_k_recbits<<<grid, DML_TPB, 0, s>>>(
			    a.pool, a.tab, a.stride, a.ncols, a.setm, a.clrm,
			    a.nwords);
			e = cudaGetLastError();
		}
		if (e != cudaSuccess) {
			rc = gpu_cuda_fail(e, "dml_k_recbits", err, errlen);
			goto out;
		}
	}
	rc = gpu_download(&happ, a.applied, 8, err, errlen);
	*applied = happ;
out:
	dml_free_all(&m);
	if (reg) {
		char e2[256];

		cudaError_t e = cudaStreamSynchronize(s);

		if (e != cudaSuccess && rc == GPMDB_OK)
			rc = gpu_cuda_fail(e, "cudaStreamSynchronize", err,
					   errlen);
		if (gpu_pm_unregister(pool, e2, sizeof(e2)) != GPMDB_OK &&
		    rc == GPMDB_OK) {
			snprintf(err, errlen, "%s", e2);
			rc = GPMDB_GPU;
		}
	}
	return rc;
}
