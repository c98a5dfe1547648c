/*
 * dml.cu - GPU writes into the registered pool (gpu_dml.h): UPDATE and
 * DELETE with HCL undo logging, INSERT ... SELECT's conversion, and the
 * recovery kernel that undoes an HCL segment in parallel (INSERT at the
 * tail: gpu/dml_append.cu).
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
 * Dense updates (PRAGMA gpu_update_mode, dml_k_stage/dml_k_lines): step
 * 3 of the columns chosen for it is done after the logging kernel, as
 * whole dirty 128-byte lines merged in HBM and stored by one warp each.
 *
 * Conventional logging (PRAGMA gpu_log = conventional, dml_k_conv) is
 * the baseline: entries appended to locked log partitions, written in
 * the same segment format.
 *
 * No function here waits for anything but its own stream.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cub/block/block_reduce.cuh>

#include "dml_geom.cuh"
#include "gpu_dml.h"
#include "gpu_internal.h"
#include "persist.cuh"

#include "gpmdb.h"

#include "../engine/value_inline.h"
#include "../engine/vector.h"

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
	uint64_t rmin, rmax; /* the lowest and highest row of the batch */
	uint64_t linemask;   /* bit k: column k is written as lines */
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
		if ((a.linemask >> k) & 1)
			continue; /* dml_k_stage/dml_k_lines write it */
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
		 * rest (grid scope); none: the kernel boundary alone. */
		if (scope != GPU_SCOPE_NONE)
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

/* ---- dense updates: whole dirty lines (gpu_update_opts) ------------ */

/*
 * Lines of a column: its array in a tablet is 256-byte aligned in the
 * pool (tablet.c's tab_layout) and tablets start at multiples of 1024
 * rows, so line L of a column of width w holds rows [L * rpl, (L + 1) *
 * rpl), rpl = 128 / w, all in one tablet, at a 128-byte aligned address.
 */
#define DML_LINE 128u
/* Lines staged in HBM at a time (256 MiB of values): bigger columns are
 * written in windows of this many lines. */
#define DML_LINE_WIN (1ull << 21)

/* Dirty lines of width w's geometry: bit (row / rpl - l0) of bm. */
__global__ void dml_k_mark(const uint64_t *rows, uint64_t n, uint32_t rpl,
			   uint64_t l0, uint32_t *bm)
{
	uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n) {
		uint64_t l = rows[i] / rpl - l0;

		atomicOr(&bm[l >> 5], 1u << (l & 31));
	}
}

/* *cnt += set bits of bm[0, nw). */
__global__ void dml_k_count(const uint32_t *bm, uint64_t nw,
			    unsigned long long *cnt)
{
	uint64_t wd = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
	unsigned c = wd < nw ? (unsigned)__popc(bm[wd]) : 0;

	c = __reduce_add_sync(0xffffffffu, c);
	if (threadIdx.x % 32 == 0 && c)
		atomicAdd(cnt, (unsigned long long)c);
}

/* Thread i puts row i's new value of column k into its line's slot of
 * the HBM stage (lines [wl, wl + nl) of the column) and marks it in the
 * line's row mask (mwpl words per line); the NULL bit change goes to the
 * masks of dml_k_bits, as dml_data's. */
__global__ void dml_k_stage(dml_args a, uint32_t k, uint64_t wl, uint64_t nl,
			    char *stage, uint32_t *lmask, uint32_t mwpl)
{
	uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
	uint32_t w, rpl, o;
	uint64_t row, l;
	bool nul;

	if (i >= a.n)
		return;
	w = a.widths[k];
	rpl = DML_LINE / w;
	row = a.rows[i];
	l = row / rpl;
	if (l < wl || l >= wl + nl)
		return; /* another window's */
	l -= wl;
	o = (uint32_t)(row % rpl);
	nul = a.nls[k] && dml_bit(a.nls[k], i);
	dml_store(stage + l * DML_LINE + (uint64_t)o * w,
		  nul ? 0 : dml_load(a.vals[k] + i * w, w), w);
	atomicOr(&lmask[l * mwpl + o / 32], 1u << (o % 32));
	atomicOr(&(nul ? a.setm : a.clrm)[k * a.nwords + (row >> 5)],
		 1u << (row & 31));
}

/*
 * One warp per line of the window [wl, wl + nl) of table column c: a line
 * with a staged row is stored whole, lane j its bytes [4j, 4j + 4) (one
 * coalesced 128-byte store), the staged rows' bytes from the stage, the
 * others as read from the pool just before; then persisted.
 *
 * Why a whole-line write is safe with HCL undo: it runs after the batch's
 * logging kernel ended, so every changed row's entry (old value, old NULL
 * bit) and its tail are persisted before any byte of the line is stored.
 * The unchanged rows of the line are stored with the bytes they already
 * hold (read here; nobody else writes the column during the batch: one
 * writer, and each line has one warp).  A crash that tears the line (some
 * of its 4-byte stores in the pool, some not) leaves every unchanged row
 * as it was whichever half landed, and every changed row (even one torn
 * between its two halves) is restored whole from its entry by recovery.
 */
__global__ void dml_k_lines(char *pool, const uint64_t *tab, uint32_t stride,
			    uint32_t c, uint32_t w, uint64_t wl, uint64_t nl,
			    const uint32_t *stage, const uint32_t *lmask,
			    uint32_t mwpl, unsigned long long *dirty)
{
	uint64_t gw = ((uint64_t)blockIdx.x * blockDim.x + threadIdx.x) / 32;
	uint32_t lane = threadIdx.x % 32, any = 0;
	int nd;

	if (gw < nl)
		for (uint32_t q = 0; q < mwpl; q++)
			any |= lmask[gw * mwpl + q];
	if (any) { /* the same for the whole warp: clean lines are skipped */
		const uint32_t *m = lmask + gw * mwpl;
		uint32_t rpl = DML_LINE / w, newb = 0, nv, *dst;
		/* rows overlapping this lane's 4 bytes; which bytes are new */
		uint32_t r0 = 4 * lane / w, nr = w >= 4 ? 1 : 4 / w;
		uint32_t nb = w >= 4 ? 4 : w;
		uint64_t row0 = (wl + gw) * rpl, ti = dml_tab_index(row0);
		const uint64_t *tt = tab + ti * stride;

		for (uint32_t j = 0; j < nr; j++) {
			uint32_t r = r0 + j;

			if ((m[r >> 5] >> (r & 31)) & 1u)
				newb |= ((1u << nb) - 1) << (j * nb);
		}
		dst = (uint32_t *)(pool + tt[2 * c] +
				   (row0 - dml_first_row(ti)) * w) +
		      lane;
		nv = stage[gw * (DML_LINE / 4) + lane];
		if (newb != 0xFu) {
			uint32_t keep = 0, old = *dst;

			for (uint32_t b = 0; b < 4; b++)
				if (!((newb >> b) & 1u))
					keep |= 0xFFu << (8 * b);
			nv = (nv & ~keep) | (old & keep);
		}
		*dst = nv;
		gpm_persist_thread(); /* before the host's commit */
	}
	/* dirty lines of the block: one atomic per block */
	nd = __syncthreads_count(any && lane == 0);
	if (threadIdx.x == 0 && nd)
		atomicAdd(dirty, (unsigned long long)nd);
}

static void (*dml_hook)(int done);

extern "C" void gpu_dml_set_launch_hook(void (*fn)(int done))
{
	dml_hook = fn;
}

void dml_note(int done)
{
	if (dml_hook)
		dml_hook(done);
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

/*
 * Which columns of an UPDATE are written as whole lines (a.linemask):
 * uo lines all, scatter (or NULL) none; auto, per column: lines when the
 * batch has GPU_LINES_MIN_ROWS rows or more and at least
 * uo->min_rows_per_line of them per dirty line of the column's geometry
 * (dirty lines counted by dml_k_mark/dml_k_count, one bitmap per width).
 * hw: the columns' widths on the host.
 */
static int dml_choose(dml_mem *m, dml_args &a, const uint32_t *hw,
		      const gpu_update_opts *uo, gpu_dml_timing *t, char *err,
		      size_t errlen)
{
	cudaStream_t s = gpu_stream();
	unsigned long long *cnt = NULL, hc[9] = {0};
	double t0 = dml_ms();
	int rc;

	a.linemask = 0;
	if (!uo || uo->mode == GPU_UPD_SCATTER || a.is_delete)
		return GPMDB_OK;
	if (uo->mode == GPU_UPD_LINES) {
		for (uint32_t k = 0; k < a.ncols; k++)
			a.linemask |= 1ull << k;
		return GPMDB_OK;
	}
	if (a.n < GPU_LINES_MIN_ROWS || !(uo->min_rows_per_line > 0))
		return GPMDB_OK;
	if ((rc = dml_alloc(m, (void **)&cnt, sizeof(hc), err, errlen)) ||
	    (rc = gpu_memset(cnt, 0, sizeof(hc), err, errlen)))
		return rc;
	for (uint32_t w = 1; w <= 8; w *= 2) {
		uint32_t rpl = DML_LINE / w, *bm = NULL;
		uint64_t l0 = a.rmin / rpl, nw = (a.rmax / rpl - l0) / 32 + 1;
		bool used = false;

		for (uint32_t k = 0; k < a.ncols; k++)
			used = used || hw[k] == w;
		if (!used)
			continue;
		if ((rc = dml_alloc(m, (void **)&bm, nw * 4, err, errlen)) ||
		    (rc = gpu_memset(bm, 0, nw * 4, err, errlen)))
			return rc;
		dml_k_mark<<<dml_grid(a.n), DML_TPB, 0, s>>>(a.rows, a.n, rpl,
							     l0, bm);
		GPU_TRY(cudaGetLastError());
		dml_k_count<<<dml_grid(nw), DML_TPB, 0, s>>>(bm, nw, cnt + w);
		GPU_TRY(cudaGetLastError());
	}
	if ((rc = gpu_download(hc, cnt, sizeof(hc), err, errlen)))
		return rc;
	for (uint32_t k = 0; k < a.ncols; k++)
		if (hw[k] <= 8 && hc[hw[k]] &&
		    (double)a.n / (double)hc[hw[k]] >= uo->min_rows_per_line)
			a.linemask |= 1ull << k;
	t->mark_ms = dml_ms() - t0;
	return GPMDB_OK;
}

/* The lines phase: every column of a.linemask, window by window, staged
 * (dml_k_stage) and written (dml_k_lines).  After the logging kernel. */
static int dml_lines(dml_mem *m, dml_args &a, const uint32_t *hw,
		     const uint32_t *hcols, gpu_dml_timing *t, char *err,
		     size_t errlen)
{
	cudaStream_t s = gpu_stream();
	uint64_t maxl = 0;
	uint32_t *stage = NULL, *lmask = NULL;
	unsigned long long *dirty = NULL, hd = 0;
	int rc;

	for (uint32_t k = 0; k < a.ncols; k++) {
		uint64_t rpl = DML_LINE / hw[k];
		uint64_t nl = a.rmax / rpl - a.rmin / rpl + 1;

		if ((a.linemask >> k) & 1)
			maxl = nl > maxl ? nl : maxl;
	}
	if (maxl > DML_LINE_WIN)
		maxl = DML_LINE_WIN;
	if ((rc =
		 dml_alloc(m, (void **)&stage, maxl * DML_LINE, err, errlen)) ||
	    (rc = dml_alloc(m, (void **)&lmask, maxl * 16, err, errlen)) ||
	    (rc = dml_alloc(m, (void **)&dirty, 8, err, errlen)) ||
	    (rc = gpu_memset(dirty, 0, 8, err, errlen)))
		return rc;
	for (uint32_t k = 0; k < a.ncols; k++) {
		uint32_t w = hw[k], rpl = DML_LINE / w, mwpl = (rpl + 31) / 32;
		uint64_t l1 = a.rmax / rpl;

		if (!((a.linemask >> k) & 1))
			continue;
		if (w == 0 || DML_LINE % w) {
			snprintf(err, errlen,
				 "GPU UPDATE: width %u cannot be written as "
				 "lines",
				 w);
			return GPMDB_MISUSE;
		}
		t->line_cols++;
		t->line_rows += a.n;
		for (uint64_t wl = a.rmin / rpl; wl <= l1; wl += DML_LINE_WIN) {
			uint64_t nl = l1 - wl + 1 < DML_LINE_WIN ? l1 - wl + 1
								 : DML_LINE_WIN;

			if ((rc = gpu_memset(lmask, 0, nl * mwpl * 4, err,
					     errlen)))
				return rc;
			dml_k_stage<<<dml_grid(a.n), DML_TPB, 0, s>>>(
			    a, k, wl, nl, (char *)stage, lmask, mwpl);
			GPU_TRY(cudaGetLastError());
			dml_k_lines<<<dml_grid(nl * 32), DML_TPB, 0, s>>>(
			    a.pool, a.tab, a.stride, hcols[k], w, wl, nl, stage,
			    lmask, mwpl, dirty);
			GPU_TRY(cudaGetLastError());
		}
	}
	if ((rc = gpu_download(&hd, dirty, 8, err, errlen)))
		return rc;
	t->dirty_lines += hd;
	return GPMDB_OK;
}

/* Launches the logging and data phases as the scope says, the lines
 * phase (UPDATE columns of a.linemask) and the bits kernel after them.
 * hw, hcols: the updated columns' widths and table columns (host; NULL
 * for DELETE). */
static int dml_run(dml_mem *m, dml_args &a, int scope, uint32_t nparts,
		   const uint32_t *hw, const uint32_t *hcols,
		   unsigned long long *dadded, gpu_dml_timing *t, char *err,
		   size_t errlen)
{
	cudaStream_t s = gpu_stream();
	unsigned nb = a.g.nblocks;
	int nk = a.is_delete ? 1 : (int)a.ncols;
	uint64_t all = a.ncols >= 64 ? ~0ull : (1ull << a.ncols) - 1;
	/* the data kernel has nothing to store when every column is lines */
	int scat = a.is_delete || (a.linemask & all) != all;
	double t0 = dml_ms(), tl;
	int rc;

	dml_note(0);
	if (nparts) {
		/* conventional: nparts slots of ceil(n / nparts) rows each */
		uint32_t *claim = NULL, *pub = NULL;
		uint64_t per = (a.n + nparts - 1) / nparts;

		if (a.is_delete || nparts > hcl_threads(&a.g) ||
		    per * a.ncols > a.g.entries_per_thread || a.linemask) {
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
		if (scat)
			dml_k_hcl<<<nb, DML_TPB, 0, s>>>(a, 4, scope);
	} else {
		dml_k_hcl<<<nb, DML_TPB, 0, s>>>(a, scat ? 7 : 3, scope);
	}
	GPU_TRY(cudaGetLastError());
	if (nparts || (a.linemask && scope != GPU_SCOPE_GRID)) {
		/* the log (and scattered data) is one kernel: its time is
		 * log_ms, apart from the lines phase's */
		GPU_TRY(cudaStreamSynchronize(s));
		t->log_ms = dml_ms() - t0;
		t0 = dml_ms();
	}
	if (a.linemask) {
		/* after the logging kernel: every entry and tail persisted */
		tl = dml_ms();
		if ((rc = dml_lines(m, a, hw, hcols, t, err, errlen)))
			return rc;
		GPU_TRY(cudaStreamSynchronize(s));
		t->lines_ms = dml_ms() - tl;
	}
	if (a.nwords) {
		dim3 grid(dml_grid(a.nwords), (unsigned)nk);

		dml_k_bits<<<grid, DML_TPB, 0, s>>>(
		    a.pool, a.tab, a.stride, a.cols, a.is_delete, a.setm,
		    a.is_delete ? NULL : a.clrm, a.nwords, dadded);
		GPU_TRY(cudaGetLastError());
	}
	GPU_TRY(cudaStreamSynchronize(s));
	dml_note(1);
	t->data_ms = dml_ms() - t0;
	return GPMDB_OK;
}

/* rowids on the host, or (drange: their min and max) on the device */
static int dml_common(dml_mem *m, dml_args &a, void *pool, uint64_t seg_off,
		      const hcl_geom *geom, const gpu_tab_layout *lay,
		      const uint64_t *rowids, uint64_t n, int nk,
		      const uint64_t *drange, char *err, size_t errlen)
{
	uint64_t rows = 0, rmin = UINT64_MAX;
	int rc;

	memset(&a, 0, sizeof(a));
	a.pool = (char *)pool;
	a.seg_off = seg_off;
	a.g = *geom;
	a.stride = lay->stride;
	a.ntab = lay->ntab;
	a.n = n;
	if (drange) {
		rmin = drange[0];
		rows = drange[1] + 1;
		if (n && dml_tab_index(drange[1]) >= lay->ntab) {
			snprintf(err, errlen, "row %llu has no tablet",
				 (unsigned long long)drange[1]);
			return GPMDB_MISUSE;
		}
	}
	for (uint64_t i = 0; !drange && i < n; i++) {
		if (dml_tab_index(rowids[i]) >= lay->ntab) {
			snprintf(err, errlen, "row %llu has no tablet",
				 (unsigned long long)rowids[i]);
			return GPMDB_MISUSE;
		}
		if (rowids[i] + 1 > rows)
			rows = rowids[i] + 1;
		if (rowids[i] < rmin)
			rmin = rowids[i];
	}
	a.nwords = (rows + 31) / 32;
	a.rmin = n ? rmin : 0;
	a.rmax = rows ? rows - 1 : 0;
	if (drange)
		a.rows = (uint64_t *)rowids;
	if ((rc = dml_up(m, (void **)&a.tab, lay->tab,
			 (size_t)lay->ntab * lay->stride * 8, err, errlen)) ||
	    (!drange &&
	     (rc = dml_up(m, (void **)&a.rows, rowids, n * 8, err, errlen))) ||
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
 * partitions; drange: rowids, vals and nulls are device arrays (rowids'
 * min and max in drange), else host arrays uploaded here. */
static int dml_update(void *pool, uint64_t seg_off, const hcl_geom *geom,
		      const gpu_tab_layout *lay, const uint64_t *rowids,
		      uint64_t n, int ncols, const uint32_t *cols,
		      const void *const *vals, const uint32_t *const *nulls,
		      int scope, uint32_t nparts, const gpu_update_opts *uo,
		      const uint64_t *drange, gpu_dml_timing *t, char *err,
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
	rc = dml_common(&m, a, pool, seg_off, geom, lay, rowids, n, ncols,
			drange, err, errlen);
	for (int k = 0; k < ncols && rc == GPMDB_OK; k++) {
		void *p = NULL;

		widths[k] = lay->widths[cols[k]];
		t->bytes += n * (widths[k] + 4);
		if (drange) {
			dv[k] = vals[k];
			dn[k] = nulls[k];
			continue;
		}
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
		rc = dml_choose(&m, a, widths, nparts ? NULL : uo, t, err,
				errlen);
	}
	if (rc == GPMDB_OK)
		rc = dml_run(&m, a, scope, nparts, widths, cols, NULL, t, err,
			     errlen);
	dml_free_all(&m);
	t->bytes += 4ull * HCL_ENTRY_WORDS * ncols * n + 4 * n;
	/* lines columns stored whole dirty lines instead of their values */
	for (int k = 0; k < ncols && rc == GPMDB_OK; k++)
		if ((a.linemask >> k) & 1)
			t->bytes -= n * widths[k];
	t->bytes += t->dirty_lines * DML_LINE;
	t->total_ms = dml_ms() - t0;
	return rc;
}

extern "C" int gpu_hcl_update(void *pool, uint64_t seg_off,
			      const hcl_geom *geom, const gpu_tab_layout *lay,
			      const uint64_t *rowids, uint64_t n, int ncols,
			      const uint32_t *cols, const void *const *vals,
			      const uint32_t *const *nulls, int scope,
			      const gpu_update_opts *uo, gpu_dml_timing *t,
			      char *err, size_t errlen)
{
	return dml_update(pool, seg_off, geom, lay, rowids, n, ncols, cols,
			  vals, nulls, scope, 0, uo, NULL, t, err, errlen);
}

extern "C" int gpu_hcl_update_dev(
    void *pool, uint64_t seg_off, const hcl_geom *geom,
    const gpu_tab_layout *lay, const uint64_t *rowids, uint64_t n,
    const uint64_t range[2], int ncols, const uint32_t *cols,
    const void *const *vals, const uint32_t *const *nulls, int scope,
    const gpu_update_opts *uo, gpu_dml_timing *t, char *err, size_t errlen)
{
	return dml_update(pool, seg_off, geom, lay, rowids, n, ncols, cols,
			  vals, nulls, scope, 0, uo, range, t, err, errlen);
}

/* A block's smallest and largest row id (dml_k_range's BlockReduce). */
struct dml_span {
	unsigned long long lo, hi;
};
struct dml_span_op {
	__device__ dml_span operator()(const dml_span &a,
				       const dml_span &b) const
	{
		dml_span c = {a.lo < b.lo ? a.lo : b.lo,
			      a.hi > b.hi ? a.hi : b.hi};
		return c;
	}
};

/* Range and order of n row ids: one atomic per block, not per row (2.5M
 * rows on two addresses took 3.7 ms of bench_batch's 14 ms UPDATE a,
 * H200). */
__global__ static void dml_k_range(const uint64_t *r, uint64_t n,
				   unsigned long long *out)
{
	typedef cub::BlockReduce<dml_span, DML_TPB> br;
	__shared__ typename br::TempStorage ts;
	uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x;
	dml_span v = {~0ull, 0};
	int down = 0;

	if (i < n) {
		v.lo = v.hi = r[i];
		down = i && r[i] <= r[i - 1];
	}
	v = br(ts).Reduce(v, dml_span_op());
	down = __syncthreads_or(down);
	if (threadIdx.x == 0) {
		atomicMin(&out[0], v.lo);
		atomicMax(&out[1], v.hi);
		if (down)
			out[2] = 0; /* not strictly increasing */
	}
}

extern "C" int gpu_rowid_range(const uint64_t *rowids, uint64_t n,
			       uint64_t out[3], char *err, size_t errlen)
{
	unsigned long long init[3] = {~0ull, 0, 1}, *d = NULL;
	int rc;

	out[0] = out[1] = 0;
	out[2] = 1;
	if ((rc = gpu_init(err, errlen)) || n == 0)
		return rc;
	if ((rc = gpu_alloc((void **)&d, sizeof(init), err, errlen)))
		return rc;
	if ((rc = gpu_upload(d, init, sizeof(init), err, errlen)) == GPMDB_OK) {
		dml_k_range<<<dml_grid(n), DML_TPB, 0, gpu_stream()>>>(rowids,
								       n, d);
		cudaError_t e = cudaGetLastError();
		rc = e != cudaSuccess
			 ? gpu_cuda_fail(e, "dml_k_range", err, errlen)
			 : gpu_download(init, d, sizeof(init), err, errlen);
	}
	gpu_free(d, NULL, 0);
	if (rc == GPMDB_OK) {
		out[0] = init[0];
		out[1] = init[1];
		out[2] = init[2];
	}
	return rc;
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
			  vals, nulls, GPU_SCOPE_THREAD, nparts, NULL, NULL, t,
			  err, errlen);
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
	rc = dml_common(&m, a, pool, seg_off, geom, lay, rowids, n, 1, NULL,
			err, errlen);
	if (rc == GPMDB_OK)
		rc = dml_alloc(&m, (void **)&dadded, 8, err, errlen);
	if (rc == GPMDB_OK)
		rc = gpu_memset(dadded, 0, 8, err, errlen);
	t->upload_ms = dml_ms() - t0;
	if (rc == GPMDB_OK) {
		a.is_delete = 1;
		rc = dml_run(&m, a, scope, 0, NULL, NULL, dadded, t, err,
			     errlen);
	}
	if (rc == GPMDB_OK)
		rc = gpu_download(&hadded, dadded, 8, err, errlen);
	dml_free_all(&m);
	*added = hadded;
	t->bytes = 4ull * HCL_ENTRY_WORDS * n + 8 * n;
	t->total_ms = dml_ms() - t0;
	return rc;
}

/* ---- INSERT ... SELECT: device results into storage arrays ----------- */

/* Row i of a non-NULL source value, as the CPU's sval (engine.h): *iv
 * for INT/BOOL/DEC/DATE, *dv for REAL; returns its BC_T_* class. */
__device__ static inline int ins_read(const gpu_ins_src &s, uint64_t i,
				      int64_t *iv, double *dv)
{
	switch (s.src) {
	case BC_COL_INT64:
		*iv = ((const int64_t *)s.data)[i];
		return BC_T_INT;
	case BC_COL_INT32:
		*iv = ((const int32_t *)s.data)[i];
		return BC_T_INT;
	case BC_COL_DEC:
		*iv = ((const int64_t *)s.data)[i];
		return BC_T_DEC;
	case BC_COL_DATE:
		*iv = ((const int32_t *)s.data)[i];
		return BC_T_DATE;
	case BC_COL_BOOL:
		*iv = ((const uint8_t *)s.data)[i];
		return BC_T_BOOL;
	case BC_COL_FLOAT:
		*dv = ((const float *)s.data)[i];
		return BC_T_REAL;
	default: /* BC_COL_DOUBLE (the host admits no other type) */
		*dv = ((const double *)s.data)[i];
		return BC_T_REAL;
	}
}

/* One value converted as rel.c's sval_convert(mode 1) and stored as
 * dml.c's rcol_to_storage narrows it; false where the CPU reports an
 * error (the caller then leaves the statement to the CPU). */
__device__ static inline bool ins_value(const gpu_ins_src &s, uint64_t i,
					uint64_t *bits)
{
	int64_t iv = 0;
	double dv = 0;
	int st = VAL_OK;
	int from = ins_read(s, i, &iv, &dv);

	switch (s.dst_t) {
	case BC_T_INT:
	case BC_T_BOOL:
		if (from == BC_T_REAL) {
			if (dv != floor(dv) || !(dv >= -9223372036854775808.0 &&
						 dv < 9223372036854775808.0))
				return false;
			iv = val_real_to_i64(dv);
		} else if (from == BC_T_DEC) {
			if (iv % val_pow10(s.src_scale) != 0)
				return false;
			iv = val_dec_to_i64(iv, s.src_scale);
		} else if (from == BC_T_DATE) {
			return false;
		}
		if (s.dst_t == BC_T_BOOL && from != BC_T_BOOL)
			iv = iv != 0;
		if (s.width == 4)
			*bits = (uint32_t)(int32_t)iv;
		else
			*bits = (uint64_t)iv; /* 8, or BOOL's 1 (0/1) */
		return true;
	case BC_T_REAL:
		if (from == BC_T_DATE)
			return false;
		if (from == BC_T_DEC)
			dv = val_dec_to_real(iv, s.src_scale);
		else if (from != BC_T_REAL)
			dv = (double)iv;
		if (s.width == 4) {
			float f = (float)dv;
			*bits = __float_as_uint(f);
		} else {
			*bits = (uint64_t)__double_as_longlong(dv);
		}
		return true;
	case BC_T_DEC:
		/* the same scale is no conversion: no precision check */
		if (from == BC_T_DEC && s.src_scale == s.dst_scale) {
			*bits = (uint64_t)iv;
			return true;
		}
		if (from == BC_T_INT || from == BC_T_BOOL)
			st = val_i64_to_dec(iv, s.dst_scale, &iv);
		else if (from == BC_T_DEC)
			st = val_dec_rescale(iv, s.src_scale, s.dst_scale, &iv);
		else
			return false; /* REAL, DATE (the host declines REAL) */
		if (st == VAL_OK && s.dst_prec && !val_dec_fits(iv, s.dst_prec))
			st = VAL_OVERFLOW;
		*bits = (uint64_t)iv;
		return st == VAL_OK;
	default: /* BC_T_DATE */
		if (from != BC_T_DATE)
			return false;
		*bits = (uint32_t)(int32_t)iv;
		return true;
	}
}

/* Thread i: row i of one column into its storage array, 0 for NULL as
 * on the CPU; lane 0 of each warp stores the warp's NULL word (a warp
 * is 32 aligned rows: blocks are 256 threads). st[0]: the first NULL
 * row, st[1]: the first row that does not convert. */
__global__ void dml_k_ins_conv(gpu_ins_src s, uint64_t n, char *dst,
			       uint32_t *bm, unsigned long long *st)
{
	uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
	bool act = i < n, nul = false, bad = false;
	uint64_t bits = 0;

	if (act) {
		if (s.is_const) {
			nul = s.knull;
			bits = s.konst;
		} else if (s.src == VEC_NULL) {
			nul = true;
		} else {
			nul = s.nulls && s.nulls[i];
			if (!nul)
				bad = !ins_value(s, i, &bits);
		}
		if (nul || bad)
			bits = 0;
		dml_store(dst + i * s.width, bits, s.width);
		if (nul)
			atomicMin(&st[0], (unsigned long long)i);
		if (bad)
			atomicMin(&st[1], (unsigned long long)i);
	}
	uint32_t m = __ballot_sync(0xffffffffu, act && nul);
	if ((threadIdx.x & 31) == 0 && act)
		bm[i >> 5] = m;
}

extern "C" int gpu_ins_convert(const gpu_ins_src *src, int ncols, uint64_t n,
			       void **vals, uint32_t **nulls,
			       uint64_t *first_null, uint64_t *first_bad,
			       char *err, size_t errlen)
{
	unsigned long long *dst = NULL, *hst = NULL;
	cudaStream_t s;
	int rc;

	for (int c = 0; c < ncols; c++) {
		vals[c] = NULL;
		nulls[c] = NULL;
		first_null[c] = first_bad[c] = UINT64_MAX;
	}
	if ((rc = gpu_init(err, errlen)) || n == 0 || ncols == 0)
		return rc;
	s = gpu_stream();
	hst = (unsigned long long *)malloc(16 * (size_t)ncols);
	if (!hst) {
		snprintf(err, errlen, "out of memory");
		return GPMDB_NOMEM;
	}
	rc = gpu_alloc((void **)&dst, 16 * (size_t)ncols, err, errlen);
	/* 0xff bytes: UINT64_MAX, "none yet" for atomicMin */
	if (rc == GPMDB_OK)
		rc = gpu_memset(dst, 0xff, 16 * (size_t)ncols, err, errlen);
	for (int c = 0; c < ncols && rc == GPMDB_OK; c++) {
		rc = gpu_alloc(&vals[c], n * src[c].width, err, errlen);
		if (rc == GPMDB_OK)
			rc = gpu_alloc((void **)&nulls[c], (n + 31) / 32 * 4,
				       err, errlen);
		if (rc != GPMDB_OK)
			break;
		dml_k_ins_conv<<<dml_grid(n), DML_TPB, 0, s>>>(
		    src[c], n, (char *)vals[c], nulls[c], dst + 2 * c);
		cudaError_t e = cudaGetLastError();
		if (e != cudaSuccess)
			rc = gpu_cuda_fail(e, "dml_k_ins_conv", err, errlen);
	}
	/* gpu_download waits for the stream: the kernels are done */
	if (rc == GPMDB_OK)
		rc = gpu_download(hst, dst, 16 * (size_t)ncols, err, errlen);
	if (rc == GPMDB_OK)
		for (int c = 0; c < ncols; c++) {
			first_null[c] = hst[2 * c];
			first_bad[c] = hst[2 * c + 1];
		}
	gpu_free(dst, NULL, 0);
	free(hst);
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
	/* check pass: [0] bit c (c < 63; 63: any higher) of the columns
	 * with entries to apply, [1] 1 when there are DELETE entries */
	unsigned long long *cmask;
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
			else if (en.row < a.row_count && en.kind == HCL_K_VALUE)
				atomicOr(&a.cmask[0],
					 1ull << (en.col < 63 ? en.col : 63));
			else if (en.row < a.row_count)
				atomicOr(&a.cmask[1], 1ull);
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

/*
 * What recovery touches, as page-rounded ranges of the mapping, sorted,
 * merged and clear of the segment's pages [s0, s1) (registered first, for
 * the check pass): in each tablet holding rows of [row_lo, row_count), the
 * value array and NULL bitmap of every column with entries (cmask: bit c, c <
 * 63; bit 63 any higher column) and the deleted bitmap when there are
 * DELETE entries.  Registering only these instead of the whole pool is
 * what keeps GPU recovery short in a big pool: cudaHostRegister pins and
 * maps every page it is given, in time about proportional to the bytes.
 * r: 2 * (ntab * (2 * ncols + 1) + 2) slots; returns the ranges.
 */
static int rec_range_cmp(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;

	return a < b ? -1 : a > b;
}

static uint32_t rec_ranges(uint64_t map_len, uint64_t s0, uint64_t s1,
			   const gpu_tab_layout *lay, uint64_t row_lo,
			   uint64_t row_count, unsigned long long cmask,
			   bool del, uint64_t *r)
{
	uint64_t pg = (uint64_t)sysconf(_SC_PAGESIZE), n = 0, m = 0;

	for (uint32_t i = 0; i < lay->ntab && dml_first_row(i) < row_count;
	     i++) {
		const uint64_t *tt = lay->tab + (uint64_t)i * lay->stride;
		uint64_t cap = dml_capacity(i);

		if (dml_first_row(i) + cap <= row_lo)
			continue; /* no row of [row_lo, row_count) here */

		for (uint32_t c = 0; c < lay->ncols; c++) {
			if (!((cmask >> (c < 63 ? c : 63)) & 1))
				continue;
			r[2 * n] = tt[2 * c];
			r[2 * n++ + 1] = tt[2 * c] + cap * lay->widths[c];
			r[2 * n] = tt[2 * c + 1];
			r[2 * n++ + 1] = tt[2 * c + 1] + cap / 8;
		}
		if (del) {
			r[2 * n] = tt[lay->stride - 1];
			r[2 * n++ + 1] = tt[lay->stride - 1] + cap / 8;
		}
	}
	for (uint64_t k = 0; k < n; k++) {
		r[2 * k] = r[2 * k] / pg * pg;
		r[2 * k + 1] = (r[2 * k + 1] + pg - 1) / pg * pg;
		if (r[2 * k + 1] > map_len)
			r[2 * k + 1] = map_len;
	}
	qsort(r, n, 16, rec_range_cmp);
	for (uint64_t k = 0; k < n; k++) {
		if (r[2 * k] >= r[2 * k + 1])
			continue;
		if (m && r[2 * k] <= r[2 * (m - 1) + 1]) {
			if (r[2 * k + 1] > r[2 * (m - 1) + 1])
				r[2 * (m - 1) + 1] = r[2 * k + 1];
			continue;
		}
		r[2 * m] = r[2 * k];
		r[2 * m++ + 1] = r[2 * k + 1];
	}
	/* The segment is a separate extent (chunks are whole pages), so
	 * this only matters with pages larger than a chunk: the ranges are
	 * disjoint, so at most one contains the segment and is split. */
	for (uint64_t k = 0; k < m; k++) {
		uint64_t lo = r[2 * k], hi = r[2 * k + 1];

		if (hi <= s0 || lo >= s1)
			continue;
		r[2 * k + 1] = s0 > lo ? s0 : lo; /* [lo, s0) or empty */
		if (hi > s1) {
			r[2 * m] = s1;
			r[2 * m++ + 1] = hi;
		}
	}
	n = 0;
	for (uint64_t k = 0; k < m; k++)
		if (r[2 * k] < r[2 * k + 1]) {
			r[2 * n] = r[2 * k];
			r[2 * n++ + 1] = r[2 * k + 1];
		}
	return (uint32_t)n;
}

extern "C" uint32_t gpu_write_ranges(uint64_t map_len, uint64_t s0, uint64_t s1,
				     const gpu_tab_layout *lay, uint64_t row_lo,
				     uint64_t row_end, unsigned long long cmask,
				     int del, uint64_t *r)
{
	uint32_t n = rec_ranges(map_len, s0, s1, lay, row_lo, row_end, cmask,
				del != 0, r);

	/* the segment itself is written too (rec_ranges leaves it out) */
	if (s1 > s0) {
		r[2 * n] = s0;
		r[2 * n + 1] = s1;
		n++;
	}
	return n;
}

/* Registers the ranges [pool + r[2k], pool + r[2k + 1]), adding to
 * *done (to unregister whatever happens) and *bytes. */
static int rec_register(char *pool, const uint64_t *r, uint32_t nr,
			uint32_t *done, uint64_t *bytes, char *err,
			size_t errlen)
{
	for (uint32_t k = 0; k < nr; k++) {
		int rc = gpu_host_register_uva(pool + r[2 * k],
					       r[2 * k + 1] - r[2 * k],
					       "a range of the pool for GPU "
					       "recovery",
					       err, errlen);

		if (rc != GPMDB_OK)
			return rc;
		(*done)++;
		*bytes += r[2 * k + 1] - r[2 * k];
	}
	return GPMDB_OK;
}

static int rec_unregister(char *pool, const uint64_t *r, uint32_t nr, char *err,
			  size_t errlen)
{
	int rc = GPMDB_OK;

	for (uint32_t k = 0; k < nr; k++) {
		cudaError_t e = cudaHostUnregister(pool + r[2 * k]);

		if (e != cudaSuccess) {
			(void)cudaGetLastError();
			if (rc == GPMDB_OK)
				rc = gpu_cuda_fail(e, "cudaHostUnregister", err,
						   errlen);
		}
	}
	return rc;
}

extern "C" int gpu_hcl_recover(void *pool, uint64_t map_len, uint64_t seg_off,
			       uint64_t seg_size, const gpu_tab_layout *lay,
			       uint64_t row_count, uint64_t *applied,
			       gpu_recover_timing *rt, char *err, size_t errlen)
{
	dml_mem m;

	m.n = 0;
	rec_args a;
	hcl_header h;
	cudaStream_t s;
	unsigned long long happ = 0, hcm[2] = {0, 0};
	int hbad = 0, rc, whole;
	uint64_t nth, sets, *rr = NULL, pg = (uint64_t)sysconf(_SC_PAGESIZE);
	uint32_t nreg = 0;
	gpu_recover_timing rt0;
	double t0;

	if (!rt)
		rt = &rt0;
	memset(rt, 0, sizeof(*rt));
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
	/* ranges: the segment's, then at most 2 per column and tablet, the
	 * deleted bitmaps and a split */
	rr = (uint64_t *)malloc(16 * ((size_t)lay->ntab * lay->stride + 4));
	if (!rr) {
		snprintf(err, errlen, "out of memory");
		return GPMDB_NOMEM;
	}
	/* the whole pool registered already (by this process): reuse it;
	 * else the segment's pages now, for the check pass */
	whole = gpu_pm_is_registered(pool, map_len);
	t0 = dml_ms();
	if (!whole) {
		rr[0] = seg_off / pg * pg;
		rr[1] = (seg_off + seg_size + pg - 1) / pg * pg;
		rr[1] = rr[1] < map_len ? rr[1] : map_len;
		if ((rc = rec_register((char *)pool, rr, 1, &nreg,
				       &rt->reg_bytes, err, errlen)))
			goto out;
	}
	rt->register_ms = dml_ms() - t0;
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
	    (rc = dml_alloc(&m, (void **)&a.cmask, 16, err, errlen)) ||
	    (rc = gpu_memset(a.setm, 0, a.nwords * 4 * sets, err, errlen)) ||
	    (rc = gpu_memset(a.clrm, 0, a.nwords * 4 * sets, err, errlen)) ||
	    (rc = gpu_memset(a.applied, 0, 8, err, errlen)) ||
	    (rc = gpu_memset(a.bad, 0, 4, err, errlen)) ||
	    (rc = gpu_memset(a.cmask, 0, 16, err, errlen)))
		goto out;
	dml_k_recover<<<dml_grid(nth), DML_TPB, 0, s>>>(a, 1);
	{
		cudaError_t e = cudaGetLastError();
		if (e != cudaSuccess) {
			rc = gpu_cuda_fail(e, "dml_k_recover", err, errlen);
			goto out;
		}
	}
	if ((rc = gpu_download(&hbad, a.bad, 4, err, errlen)) ||
	    (rc = gpu_download(hcm, a.cmask, 16, err, errlen)))
		goto out;
	if (hbad) {
		snprintf(err, errlen, "HCL segment at 0x%llx is damaged",
			 (unsigned long long)seg_off);
		rc = GPMDB_CORRUPT;
		goto out;
	}
	if (!whole) {
		/* now the arrays the entries name (rr[0..1] stays the
		 * segment's: the rest goes after it) */
		double tr = dml_ms();
		uint32_t nr =
		    rec_ranges(map_len, rr[0], rr[1], lay, 0, row_count, hcm[0],
			       hcm[1] != 0, rr + 2);

		rc = rec_register((char *)pool, rr + 2, nr, &nreg,
				  &rt->reg_bytes, err, errlen);
		rt->register_ms += dml_ms() - tr;
		if (rc)
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
	rt->reg_ranges = nreg;
	if (nreg) {
		char e2[256];
		double tu;
		/* every kernel done before the pages are unpinned */
		cudaError_t e = cudaStreamSynchronize(gpu_stream());

		if (e != cudaSuccess && rc == GPMDB_OK)
			rc = gpu_cuda_fail(e, "cudaStreamSynchronize", err,
					   errlen);
		tu = dml_ms();
		rt->kernel_ms = tu - t0 - rt->register_ms;
		/* the ranges registered are rr's first nreg (the segment's,
		 * then the arrays', in order) */
		if (rec_unregister((char *)pool, rr, nreg, e2, sizeof(e2)) !=
			GPMDB_OK &&
		    rc == GPMDB_OK) {
			snprintf(err, errlen, "%s", e2);
			rc = GPMDB_GPU;
		}
		rt->register_ms += dml_ms() - tu;
	} else {
		rt->kernel_ms = dml_ms() - t0 - rt->register_ms;
	}
	free(rr);
	return rc;
}
