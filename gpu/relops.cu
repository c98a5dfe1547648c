/*
 * relops.cu - GPU ORDER BY / top-N, DISTINCT and set operations, and the
 * equi-join (gpu.h), each giving row numbers in exactly the CPU's order
 * (engine/exec.c), so that the engine gathers the same rows on the host.
 *
 * Sorting: every key becomes an unsigned integer in the wanted order (the
 * CPU's sortkey_make mapping: -0.0 is 0.0, DESC inverts the bits) and a
 * NULL rank; a permutation (row ids, initially in row order) is sorted by
 * stable CUB radix passes from the last key to the first, each key by its
 * value then by its NULL rank.  A TEXT key is several such numbers: its
 * bytes as big-endian 8-byte words zero-padded to the longest value, then
 * its length (least significant): lexicographic order of those is
 * val_text_cmp's (memcmp, then the shorter first).  Stable LSD passes make ties
 * keep row order: the CPU's sort is stable (qsort with the row as last key).
 *
 * DISTINCT / UNION / INTERSECT / EXCEPT: the same sort over all columns,
 * run heads where a column differs from the previous row; the head of a
 * run is its first row (stable), which is the row the CPU's hash dedup
 * keeps; kept rows come back in row order (CUB select).
 *
 * DISTINCT and the join's runs need only equal rows together: with TEXT
 * columns the rows are sorted by a 64-bit hash instead (ro_eq_sorted).
 *
 * Join: the right side's rows with no NULL key are sorted by key (runs of
 * equal keys, right rows ascending inside a run); an open-addressing hash
 * table in device memory maps a key to its run; each left row probes it;
 * an exclusive scan of the match counts places every left row's pairs;
 * pairs are written left row by left row, right rows in descending order:
 * the order in which the CPU's chained hash table (newest first) finds
 * them.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cub/cub.cuh>
#include <thrust/iterator/counting_iterator.h>

#include "gpmdb.h"

#include "gpu_internal.h"

#include "../engine/vector.h" /* VEC_NULL */

#define RO_BLOCK 256

static unsigned ro_grid(uint64_t n)
{
	return (unsigned)((n + RO_BLOCK - 1) / RO_BLOCK);
}

/* Device allocations of one call, freed together. */
typedef struct ro_mem {
	void *p[48];
	int n;
} ro_mem;

static int ro_alloc(ro_mem *m, void **out, size_t bytes, char *err,
		    size_t errlen)
{
	int rc;

	*out = NULL;
	if (m->n == 48) {
		snprintf(err, errlen, "gpu relops: too many buffers");
		return GPMDB_INTERNAL;
	}
	/* never 0 bytes: CUB reads a NULL temp pointer as a size query */
	if ((rc = gpu_alloc(out, bytes ? bytes : 16, err, errlen)))
		return rc;
	m->p[m->n++] = *out;
	return GPMDB_OK;
}

static void ro_release(ro_mem *m)
{
	for (int i = m->n - 1; i >= 0; i--)
		gpu_free(m->p[i], NULL, 0);
	m->n = 0;
}

/* ---- keys ------------------------------------------------------------- */

#define ro_null gk_null
#define ro_ukey gk_ukey

/* Pass 1 of a key: ukey[i] = key of row perm[i] (DESC: inverted). */
__global__ void ro_keys(gpu_col c, const uint32_t *perm, uint32_t n, int desc,
			uint64_t *ukey)
{
	uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i >= n)
		return;
	uint32_t r = perm[i];
	uint64_t u = ro_null(c, r) ? 0 : ro_ukey(c, r);
	ukey[i] = desc ? ~u : u;
}

/* Pass 2 of a key: rank[i] of row perm[i]: 0 NULLs first, 1 values, 2
 * NULLs last. */
__global__ void ro_ranks(gpu_col c, const uint32_t *perm, uint32_t n,
			 int nulls_first, uint8_t *rank)
{
	uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i >= n)
		return;
	rank[i] = ro_null(c, perm[i]) ? (nulls_first ? 0 : 2) : 1;
}

/* *maxlen = the longest non-NULL TEXT value of rows perm[0..n). */
__global__ void ro_tmax(gpu_sortcol k, const uint32_t *perm, uint32_t n,
			uint32_t *maxlen)
{
	uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i >= n)
		return;
	uint32_t r = perm[i];
	if (!ro_null(k.col, r))
		atomicMax(maxlen, ((const gpu_str *)k.col.data)[r].len);
}

/* A TEXT pass: ukey[i] = word w of row perm[i], or (w < 0) its length
 * (DESC: inverted; the length as maxlen - len, which needs fewer bits). */
__global__ void ro_tkeys(gpu_sortcol k, const uint32_t *perm, uint32_t n, int w,
			 uint32_t maxlen, uint64_t *ukey)
{
	uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i >= n)
		return;
	uint32_t r = perm[i];
	uint64_t u = 0;
	if (!ro_null(k.col, r)) {
		if (w < 0) {
			uint32_t len = ((const gpu_str *)k.col.data)[r].len;
			u = k.desc ? maxlen - len : len;
		} else {
			u = gk_word(k, r, (uint32_t)w);
			if (k.desc)
				u = ~u;
		}
	}
	ukey[i] = u;
}

/* ---- how much of a key a sort needs ------------------------------------
 *
 * Why: a 64-bit radix sort makes 8 passes over keys and values, but
 * TPC-H's keys (and most integer keys) differ only in their low 20-30
 * bits, and a table's key columns are often in order already (orders by
 * o_orderkey, lineitem by l_orderkey, the dimension tables by their
 * keys), where a stable sort leaves the rows as they are.  One pass over
 * the materialised keys finds their range and whether they are in order:
 * in order, no sort; else only the bits where the smallest and largest
 * key differ (every key between them shares the bits above).  Q17's
 * subquery's GROUP BY l_partkey at SF10 sorts 21 bits, 3 passes. */

struct ro_min_op {
	__device__ unsigned long long operator()(unsigned long long a,
						 unsigned long long b) const
	{
		return a < b ? a : b;
	}
};

struct ro_max_op {
	__device__ unsigned long long operator()(unsigned long long a,
						 unsigned long long b) const
	{
		return a > b ? a : b;
	}
};

/* st[0] = min, st[1] = max of k[0..n), st[2] = 1 when some k[i] < k[i-1]. */
__global__ void ro_krange(const uint64_t *k, uint32_t n, unsigned long long *st)
{
	typedef cub::BlockReduce<unsigned long long, RO_BLOCK> br;
	__shared__ typename br::TempStorage t;
	unsigned long long lo = ~0ull, hi = 0;
	int down = 0;

	for (uint32_t i = blockIdx.x * RO_BLOCK + threadIdx.x; i < n;
	     i += gridDim.x * RO_BLOCK) {
		unsigned long long v = k[i];
		lo = v < lo ? v : lo;
		hi = v > hi ? v : hi;
		if (i && k[i - 1] > v)
			down = 1;
	}
	lo = br(t).Reduce(lo, ro_min_op());
	__syncthreads();
	hi = br(t).Reduce(hi, ro_max_op());
	down = __syncthreads_or(down);
	if (threadIdx.x == 0) {
		atomicMin(&st[0], lo);
		atomicMax(&st[1], hi);
		if (down)
			atomicOr(&st[2], 1ull);
	}
}

/* GPMDB_GPU_SORT_BITS=64: every sort over all 64 bits (measurements). */
static bool ro_full_bits(void)
{
	static int full = -1;

	if (full < 0) {
		const char *e = getenv("GPMDB_GPU_SORT_BITS");
		full = e && !strcmp(e, "64");
	}
	return full;
}

int gpu_key_bits(const uint64_t *k, uint32_t n, int bits, void *scratch,
		 int *need, char *err, size_t errlen)
{
	cudaStream_t s = gpu_stream();
	unsigned long long h[3] = {~0ull, 0, 0};
	unsigned g = ro_grid(n) < 1024 ? ro_grid(n) : 1024;

	*need = bits;
	if (ro_full_bits() || n < 2)
		return GPMDB_OK;
	GPU_TRY(
	    cudaMemcpyAsync(scratch, h, sizeof(h), cudaMemcpyHostToDevice, s));
	ro_krange<<<g, RO_BLOCK, 0, s>>>(k, n, (unsigned long long *)scratch);
	GPU_TRY(cudaGetLastError());
	GPU_TRY(
	    cudaMemcpyAsync(h, scratch, sizeof(h), cudaMemcpyDeviceToHost, s));
	GPU_TRY(cudaStreamSynchronize(s));
	if (!h[2])
		*need = 0;
	else if (64 - __builtin_clzll(h[0] ^ h[1]) < bits)
		*need = 64 - __builtin_clzll(h[0] ^ h[1]);
	return GPMDB_OK;
}

__global__ void ro_iota(uint32_t *v, uint32_t n)
{
	uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		v[i] = i;
}

/*
 * Sorts perm (m row ids, in perm.Current()) stably by keys[0..nk) (the
 * first key most significant).  tmp/tbytes: CUB temporary storage sized by
 * ro_sort_tmp.  uk: 2 x m uint64, rk: 2 x m uint8, mx: 8 uint32 scratch
 * (the TEXT length, gpu_key_bits' words).
 */
static int ro_sort(const gpu_sortcol *keys, int nk, uint32_t m,
		   cub::DoubleBuffer<uint32_t> &perm, uint64_t *uk, uint8_t *rk,
		   uint32_t *mx, void *tmp, size_t tbytes, char *err,
		   size_t errlen)
{
	cudaStream_t s = gpu_stream();
	void *st = mx + 2; /* gpu_key_bits' 3 words, 8-byte aligned */
	int rc, nb;

	for (int k = nk - 1; k >= 0; k--) {
		const gpu_sortcol *c = &keys[k];
		int bits = c->col.type == BC_COL_BOOL ? 1 : 64;
		size_t tb = tbytes;
		if (c->col.type == BC_COL_TEXT) {
			/* LSD: the length, then the words from the last; the
			 * NULL rank below */
			uint32_t maxlen = 0;
			GPU_TRY(cudaMemsetAsync(mx, 0, 4, s));
			ro_tmax<<<ro_grid(m), RO_BLOCK, 0, s>>>(
			    *c, perm.Current(), m, mx);
			GPU_TRY(cudaGetLastError());
			GPU_TRY(cudaMemcpyAsync(&maxlen, mx, 4,
						cudaMemcpyDeviceToHost, s));
			GPU_TRY(cudaStreamSynchronize(s));
			if (maxlen > GPU_SORT_MAX_TEXT) {
				snprintf(err, errlen,
					 "a TEXT key of %u bytes (at most %d "
					 "per GPU sort)",
					 maxlen, GPU_SORT_MAX_TEXT);
				return GPMDB_UNSUPPORTED;
			}
			int lbits = 1;
			while (lbits < 32 && (maxlen >> lbits))
				lbits++;
			for (int w = -1; maxlen && w < (int)(maxlen + 7) / 8;
			     w++) {
				/* the words from the last one, the length
				 * (w = -1) first */
				int ww =
				    w < 0 ? -1 : (int)(maxlen + 7) / 8 - 1 - w;
				cub::DoubleBuffer<uint64_t> kb(uk, uk + m);
				tb = tbytes;
				ro_tkeys<<<ro_grid(m), RO_BLOCK, 0, s>>>(
				    *c, perm.Current(), m, ww, maxlen, uk);
				GPU_TRY(cudaGetLastError());
				if ((rc = gpu_key_bits(uk, m,
						       ww < 0 ? lbits : 64, st,
						       &nb, err, errlen)))
					return rc;
				if (nb)
					GPU_TRY(cub::DeviceRadixSort::SortPairs(
					    tmp, tb, kb, perm, (int)m, 0, nb,
					    s));
			}
		} else if (c->col.type != VEC_NULL) {
			cub::DoubleBuffer<uint64_t> kb(uk, uk + m);
			ro_keys<<<ro_grid(m), RO_BLOCK, 0, s>>>(
			    c->col, perm.Current(), m, c->desc, uk);
			GPU_TRY(cudaGetLastError());
			/* BOOL DESC: ~u is 0xff..fe / 0xff..ff: the low bit
			 * still orders them */
			nb = bits;
			if (bits > 1 && (rc = gpu_key_bits(uk, m, bits, st, &nb,
							   err, errlen)))
				return rc;
			if (nb)
				GPU_TRY(cub::DeviceRadixSort::SortPairs(
				    tmp, tb, kb, perm, (int)m, 0, nb, s));
		}
		if (c->col.type == VEC_NULL || c->col.nulls) {
			cub::DoubleBuffer<uint8_t> rb(rk, rk + m);
			tb = tbytes;
			ro_ranks<<<ro_grid(m), RO_BLOCK, 0, s>>>(
			    c->col, perm.Current(), m, c->nulls_first, rk);
			GPU_TRY(cudaGetLastError());
			GPU_TRY(cub::DeviceRadixSort::SortPairs(
			    tmp, tb, rb, perm, (int)m, 0, 2, s));
		}
	}
	return GPMDB_OK;
}

/* Temporary storage for ro_sort over m rows (the larger of the two key
 * widths). */
static int ro_sort_tmp(uint32_t m, size_t *bytes, char *err, size_t errlen)
{
	size_t a = 0, b = 0;
	cub::DoubleBuffer<uint64_t> kb(NULL, NULL);
	cub::DoubleBuffer<uint8_t> rb(NULL, NULL);
	cub::DoubleBuffer<uint32_t> pb(NULL, NULL);

	GPU_TRY(cub::DeviceRadixSort::SortPairs(NULL, a, kb, pb, (int)m, 0, 64,
						gpu_stream()));
	GPU_TRY(cub::DeviceRadixSort::SortPairs(NULL, b, rb, pb, (int)m, 0, 2,
						gpu_stream()));
	*bytes = a > b ? a : b;
	return GPMDB_OK;
}

/* Sets up a permutation of m entries (initially 0..m-1 unless init) and
 * the scratch ro_sort needs, and sorts it. */
static int ro_sorted(ro_mem *mem, const gpu_sortcol *keys, int nk, uint32_t m,
		     const uint32_t *init, uint32_t **out, char *err,
		     size_t errlen)
{
	cudaStream_t s = gpu_stream();
	uint32_t *p, *mx;
	uint64_t *uk;
	uint8_t *rk;
	void *tmp;
	size_t tb = 0;
	int rc;

	if ((rc = ro_alloc(mem, (void **)&p, 8 * (size_t)m, err, errlen)) ||
	    (rc = ro_alloc(mem, (void **)&mx, 32, err, errlen)) ||
	    (rc = ro_alloc(mem, (void **)&uk, 16 * (size_t)m, err, errlen)) ||
	    (rc = ro_alloc(mem, (void **)&rk, 2 * (size_t)m, err, errlen)) ||
	    (rc = ro_sort_tmp(m, &tb, err, errlen)) ||
	    (rc = ro_alloc(mem, &tmp, tb, err, errlen)))
		return rc;
	if (init) {
		GPU_TRY(cudaMemcpyAsync(p, init, 4 * (size_t)m,
					cudaMemcpyDeviceToDevice, s));
	} else {
		ro_iota<<<ro_grid(m), RO_BLOCK, 0, s>>>(p, m);
		GPU_TRY(cudaGetLastError());
	}
	cub::DoubleBuffer<uint32_t> perm(p, p + m);
	if ((rc = ro_sort(keys, nk, m, perm, uk, rk, mx, tmp, tb, err, errlen)))
		return rc;
	*out = perm.Current();
	return GPMDB_OK;
}

static int ro_check_n(uint64_t n, char *err, size_t errlen)
{
	/* CUB takes an int count */
	if (n > (uint64_t)INT_MAX / 2) {
		snprintf(err, errlen, "%llu rows (at most %d per GPU sort)",
			 (unsigned long long)n, INT_MAX / 2);
		return GPMDB_UNSUPPORTED;
	}
	return GPMDB_OK;
}

/* ---- top-N: sort only the candidates ----------------------------------
 *
 * Why: ORDER BY ... LIMIT n over 100M rows sorted every row (several
 * radix passes of 100M keys) to keep 100.  Instead: the first key's order
 * as one monotone 64-bit number (rank of NULLs in the top two bits, the
 * value's top 62 bits, of TEXT the first 8 bytes: lossy but never out of
 * order); a sorted sample of
 * it gives a threshold; the rows at or below it (a set closed downwards
 * in the sort order, all ties of the threshold included, in row order)
 * are selected and only they are sorted by every key, stably: their first
 * n rows are the first n of the whole sort.  Too few or too many
 * candidates (heavy ties, an unlucky sample): the full sort runs. */

#define RO_SAMPLE 65536u

__device__ static uint64_t ro_comp(const gpu_sortcol &k, uint32_t r)
{
	bool nl = ro_null(k.col, r);
	uint64_t rank = nl ? (k.nulls_first ? 0 : 2) : 1;
	/* TEXT: its first 8 bytes, monotone in val_text_cmp's order */
	uint64_t u = nl				 ? 0
		     : k.col.type == BC_COL_TEXT ? gk_word(k, r, 0)
						 : ro_ukey(k.col, r);
	if (k.desc && !nl)
		u = ~u;
	return rank << 62 | u >> 2;
}

__global__ void ro_sample(gpu_sortcol k, uint32_t n, uint32_t ns, uint64_t *out)
{
	uint32_t j = blockIdx.x * blockDim.x + threadIdx.x;

	if (j < ns)
		out[j] = ro_comp(k, (uint32_t)((uint64_t)j * n / ns));
}

struct ro_below {
	gpu_sortcol k;
	uint64_t thr;
	__device__ bool operator()(const uint32_t &r) const
	{
		return ro_comp(k, r) <= thr;
	}
};

/* *out: the first keep rows' ids (device) when the candidate path ran,
 * NULL when the full sort must run. */
static int ro_topn(ro_mem *m, const gpu_sortcol *keys, int nkeys, uint32_t n,
		   uint32_t keep, uint32_t **out, char *err, size_t errlen)
{
	cudaStream_t s = gpu_stream();
	uint32_t ns = n < RO_SAMPLE ? n : RO_SAMPLE, *cand, *cnt, nc = 0;
	uint64_t *smp, *smp2, thr;
	void *tmp;
	size_t tb = 0, tb2 = 0;
	int rc;

	*out = NULL;
	if ((rc = ro_alloc(m, (void **)&smp, 16 * (size_t)ns, err, errlen)) ||
	    (rc =
		 ro_alloc(m, (void **)&cand, 4 * (size_t)n + 4, err, errlen)) ||
	    (rc = ro_alloc(m, (void **)&cnt, 4, err, errlen)))
		return rc;
	smp2 = smp + ns;
	ro_sample<<<ro_grid(ns), RO_BLOCK, 0, s>>>(keys[0], n, ns, smp);
	GPU_TRY(cudaGetLastError());
	thrust::counting_iterator<uint32_t> it(0);
	ro_below pred;
	pred.k = keys[0];
	pred.thr = 0;
	GPU_TRY(cub::DeviceRadixSort::SortKeys(NULL, tb, smp, smp2, (int)ns, 0,
					       64, s));
	GPU_TRY(
	    cub::DeviceSelect::If(NULL, tb2, it, cand, cnt, (int)n, pred, s));
	if ((rc = ro_alloc(m, &tmp, tb > tb2 ? tb : tb2, err, errlen)))
		return rc;
	GPU_TRY(cub::DeviceRadixSort::SortKeys(tmp, tb, smp, smp2, (int)ns, 0,
					       64, s));
	/* the sample position whose rows should hold keep rows, with a
	 * margin (the sample is a stride, not random) */
	uint64_t pos = (uint64_t)keep * ns / n * 2 + 16;
	if (pos >= ns)
		return GPMDB_OK;
	GPU_TRY(
	    cudaMemcpyAsync(&thr, smp2 + pos, 8, cudaMemcpyDeviceToHost, s));
	GPU_TRY(cudaStreamSynchronize(s));
	pred.thr = thr;
	tb2 = tb > tb2 ? tb : tb2;
	GPU_TRY(
	    cub::DeviceSelect::If(tmp, tb2, it, cand, cnt, (int)n, pred, s));
	GPU_TRY(cudaMemcpyAsync(&nc, cnt, 4, cudaMemcpyDeviceToHost, s));
	GPU_TRY(cudaStreamSynchronize(s));
	if (nc < keep || nc > n / 4)
		return GPMDB_OK;
	return ro_sorted(m, keys, nkeys, nc, cand, out, err, errlen);
}

extern "C" int gpu_sort(const gpu_sortcol *keys, int nkeys, uint32_t n,
			uint32_t keep, uint32_t *perm, char *err, size_t errlen)
{
	ro_mem m = {{0}, 0};
	uint32_t *p;
	int rc;

	if (keep > n)
		keep = n;
	if (!n || !keep)
		return GPMDB_OK;
	if ((rc = ro_check_n(n, err, errlen)))
		return rc;
	p = NULL;
	/* a small LIMIT over many rows: sort only the candidates */
	if (keep <= n / 64 && n >= (1u << 16) &&
	    (rc = ro_topn(&m, keys, nkeys, n, keep, &p, err, errlen))) {
		ro_release(&m);
		return rc;
	}
	if (!p)
		rc = ro_sorted(&m, keys, nkeys, n, NULL, &p, err, errlen);
	if (!rc)
		rc = gpu_download(perm, p, 4 * (size_t)keep, err, errlen);
	ro_release(&m);
	return rc;
}

/* ---- DISTINCT and set operations -------------------------------------- */

/* diff[i] |= row perm[i] differs from row perm[i-1] in column c (NULLs
 * equal each other, as the CPU's rows_eq). */
__global__ void ro_diff(gpu_sortcol c, const uint32_t *perm, uint32_t n,
			uint32_t *diff)
{
	uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i >= n)
		return;
	if (i == 0) {
		diff[0] = 1;
		return;
	}
	if (!gk_eq(c, perm[i], c, perm[i - 1]))
		diff[i] = 1;
}

/* Sorted hashes: *bad = 1 when neighbours share a hash but differ. */
__global__ void ro_hclash(const gpu_sortcol *keys, int nk, const uint64_t *hash,
			  const uint32_t *perm, uint32_t n, uint32_t *bad)
{
	uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i == 0 || i >= n || hash[i] != hash[i - 1])
		return;
	if (!gk_rows_eq(keys, nk, perm[i], perm[i - 1]))
		*bad = 1;
}

__global__ void ro_hashes(const gpu_sortcol *keys, int nk, const uint32_t *perm,
			  uint32_t n, uint64_t *hash)
{
	uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		hash[i] = gk_hash(keys, nk, perm[i]);
}

/*
 * For equality only (DISTINCT, set operations, join runs, GROUP BY): m row
 * ids (0..m-1, or init) ordered so that equal rows are adjacent, stably.
 * Without TEXT keys: ro_sorted.  With: one radix pass over a 64-bit hash
 * of the row (cheaper than a pass per 8 bytes of text, and no length
 * limit); when two different rows with one hash end up next to each
 * other, equal rows might be split, and ro_sorted's full order runs.
 */
static int ro_eq_sorted(ro_mem *mem, const gpu_sortcol *keys, int nk,
			uint32_t m, const uint32_t *init, uint32_t **out,
			char *err, size_t errlen)
{
	cudaStream_t s = gpu_stream();
	gpu_sortcol *dk;
	uint32_t *p, *bad, clash = 0;
	uint64_t *hk;
	void *tmp;
	size_t tb = 0;
	int rc, text = 0;

	for (int k = 0; k < nk; k++)
		text |= keys[k].col.type == BC_COL_TEXT;
	if (!text)
		return ro_sorted(mem, keys, nk, m, init, out, err, errlen);
	if ((rc = ro_alloc(mem, (void **)&dk, sizeof(gpu_sortcol) * nk, err,
			   errlen)) ||
	    (rc = ro_alloc(mem, (void **)&p, 8 * (size_t)m, err, errlen)) ||
	    (rc = ro_alloc(mem, (void **)&hk, 16 * (size_t)m, err, errlen)) ||
	    (rc = ro_alloc(mem, (void **)&bad, 4, err, errlen)))
		return rc;
	GPU_TRY(cudaMemcpyAsync(dk, keys, sizeof(gpu_sortcol) * nk,
				cudaMemcpyHostToDevice, s));
	GPU_TRY(cudaMemsetAsync(bad, 0, 4, s));
	if (init) {
		GPU_TRY(cudaMemcpyAsync(p, init, 4 * (size_t)m,
					cudaMemcpyDeviceToDevice, s));
	} else {
		ro_iota<<<ro_grid(m), RO_BLOCK, 0, s>>>(p, m);
		GPU_TRY(cudaGetLastError());
	}
	ro_hashes<<<ro_grid(m), RO_BLOCK, 0, s>>>(dk, nk, p, m, hk);
	GPU_TRY(cudaGetLastError());
	cub::DoubleBuffer<uint64_t> kb(hk, hk + m);
	cub::DoubleBuffer<uint32_t> perm(p, p + m);
	GPU_TRY(cub::DeviceRadixSort::SortPairs(NULL, tb, kb, perm, (int)m, 0,
						64, s));
	if ((rc = ro_alloc(mem, &tmp, tb, err, errlen)))
		return rc;
	GPU_TRY(cub::DeviceRadixSort::SortPairs(tmp, tb, kb, perm, (int)m, 0,
						64, s));
	ro_hclash<<<ro_grid(m), RO_BLOCK, 0, s>>>(dk, nk, kb.Current(),
						  perm.Current(), m, bad);
	GPU_TRY(cudaGetLastError());
	GPU_TRY(cudaMemcpyAsync(&clash, bad, 4, cudaMemcpyDeviceToHost, s));
	GPU_TRY(cudaStreamSynchronize(s));
	if (clash)
		return ro_sorted(mem, keys, nk, m, init, out, err, errlen);
	*out = perm.Current();
	return GPMDB_OK;
}

int ro_key_groups(const gpu_sortcol *keys, int nk, uint32_t m, uint32_t **perm,
		  uint32_t *head, char *err, size_t errlen)
{
	cudaStream_t s = gpu_stream();
	ro_mem mem = {{0}, 0};
	uint32_t *p;
	int rc;

	*perm = NULL;
	if ((rc = ro_check_n(m, err, errlen)) ||
	    (rc = ro_eq_sorted(&mem, keys, nk, m, NULL, &p, err, errlen)) ||
	    (rc = gpu_alloc((void **)perm, 4 * (size_t)m + 4, err, errlen)))
		goto out;
	{
		cudaError_t e = cudaMemcpyAsync(*perm, p, 4 * (size_t)m,
						cudaMemcpyDeviceToDevice, s);
		if (e == cudaSuccess)
			e = cudaMemsetAsync(head, 0, 4 * (size_t)m, s);
		for (int k = 0; k < nk && e == cudaSuccess; k++) {
			ro_diff<<<ro_grid(m), RO_BLOCK, 0, s>>>(keys[k], p, m,
								head);
			e = cudaGetLastError();
		}
		/* ro_release frees p: the kernels must have read it */
		if (e == cudaSuccess)
			e = cudaStreamSynchronize(s);
		if (e != cudaSuccess)
			rc = gpu_cuda_fail(e, "ro_key_groups", err, errlen);
	}
out:
	if (rc) {
		gpu_free(*perm, NULL, 0);
		*perm = NULL;
	}
	ro_release(&mem);
	return rc;
}

/* At the last element of each run: does the run hold a probe row (row id
 * >= nl)?  Left rows come first in a run (stable sort, lower ids). */
__global__ void ro_run_probe(const uint32_t *perm, const uint32_t *diff,
			     const uint32_t *run, uint32_t n, uint32_t nl,
			     uint8_t *has_probe)
{
	uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i >= n)
		return;
	if (i == n - 1 || diff[i + 1])
		has_probe[run[i] - 1] = perm[i] >= nl;
}

/* keep[row] for the first row of each run: mode 0 every run, 1 runs with
 * a probe row, 2 runs without; only left rows. */
__global__ void ro_keep(const uint32_t *perm, const uint32_t *diff,
			const uint32_t *run, const uint8_t *has_probe,
			uint32_t n, uint32_t nl, int mode, uint8_t *keep)
{
	uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i >= n || !diff[i])
		return;
	uint32_t r = perm[i];
	if (r >= nl)
		return;
	if (mode == 0 || (has_probe[run[i] - 1] != 0) == (mode == 1))
		keep[r] = 1;
}

extern "C" int gpu_distinct(const gpu_sortcol *cols, int ncols, uint32_t n,
			    uint32_t nl, int mode, uint32_t **rows,
			    uint32_t *nrows, char *err, size_t errlen)
{
	cudaStream_t s = gpu_stream();
	ro_mem m = {{0}, 0};
	uint32_t *p, *diff, *run, *out, *cnt;
	uint8_t *keep, *hp;
	void *tmp;
	size_t tb = 0, tb2 = 0;
	int rc;

	*rows = NULL;
	*nrows = 0;
	if (!n || !nl)
		return GPMDB_OK;
	if ((rc = ro_check_n(n, err, errlen)))
		return rc;
	if ((rc = ro_eq_sorted(&m, cols, ncols, n, NULL, &p, err, errlen)) ||
	    (rc = ro_alloc(&m, (void **)&diff, 4 * (size_t)n, err, errlen)) ||
	    (rc = ro_alloc(&m, (void **)&run, 4 * (size_t)n, err, errlen)) ||
	    (rc = ro_alloc(&m, (void **)&keep, n, err, errlen)) ||
	    (rc = ro_alloc(&m, (void **)&hp, n, err, errlen)) ||
	    (rc = ro_alloc(&m, (void **)&out, 4 * (size_t)n, err, errlen)) ||
	    (rc = ro_alloc(&m, (void **)&cnt, 4, err, errlen)))
		goto out;
#define RO_TRY(call)                                                           \
	do {                                                                   \
		cudaError_t e_ = (call);                                       \
		if (e_ != cudaSuccess) {                                       \
			rc = gpu_cuda_fail(e_, #call, err, errlen);            \
			goto out;                                              \
		}                                                              \
	} while (0)
	RO_TRY(cudaMemsetAsync(diff, 0, 4 * (size_t)n, s));
	RO_TRY(cudaMemsetAsync(keep, 0, n, s));
	for (int c = 0; c < ncols; c++) {
		ro_diff<<<ro_grid(n), RO_BLOCK, 0, s>>>(cols[c], p, n, diff);
		RO_TRY(cudaGetLastError());
	}
	{
		thrust::counting_iterator<uint32_t> it(0);
		RO_TRY(cub::DeviceScan::InclusiveSum(NULL, tb, diff, run,
						     (int)n, s));
		RO_TRY(cub::DeviceSelect::Flagged(NULL, tb2, it, keep, out, cnt,
						  (int)n, s));
		if ((rc = ro_alloc(&m, &tmp, tb > tb2 ? tb : tb2, err, errlen)))
			goto out;
		RO_TRY(cub::DeviceScan::InclusiveSum(tmp, tb, diff, run, (int)n,
						     s));
		if (mode) {
			ro_run_probe<<<ro_grid(n), RO_BLOCK, 0, s>>>(
			    p, diff, run, n, nl, hp);
			RO_TRY(cudaGetLastError());
		}
		ro_keep<<<ro_grid(n), RO_BLOCK, 0, s>>>(p, diff, run, hp, n, nl,
							mode, keep);
		RO_TRY(cudaGetLastError());
		tb2 = tb > tb2 ? tb : tb2;
		RO_TRY(cub::DeviceSelect::Flagged(tmp, tb2, it, keep, out, cnt,
						  (int)n, s));
	}
	if ((rc = gpu_download(nrows, cnt, 4, err, errlen)))
		goto out;
	if (!(*rows = (uint32_t *)malloc(4 * (size_t)*nrows + 4))) {
		snprintf(err, errlen, "out of memory");
		rc = GPMDB_NOMEM;
		goto out;
	}
	if ((rc = gpu_download(*rows, out, 4 * (size_t)*nrows, err, errlen))) {
		free(*rows);
		*rows = NULL;
	}
out:
	if (rc)
		*nrows = 0;
	ro_release(&m);
	return rc;
}

/* ---- join ------------------------------------------------------------- */

/* valid[i]: right row i has no NULL key. */
__global__ void ro_valid(const gpu_sortcol *keys, int nk, uint32_t n,
			 uint8_t *valid)
{
	uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i >= n)
		return;
	uint8_t v = 1;
	for (int k = 0; k < nk; k++)
		if (ro_null(keys[k].col, i))
			v = 0;
	valid[i] = v;
}

/* Run heads of the sorted right rows: start[run] = position. */
__global__ void ro_runs(const uint32_t *diff, const uint32_t *run, uint32_t n,
			uint32_t *start)
{
	uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n && diff[i])
		start[run[i] - 1] = i;
}

/* Inserts each run (by its first row's key) into the table: slot = run
 * + 1, 0 empty. */
__global__ void ro_build(const gpu_sortcol *rkeys, int nk, const uint32_t *perm,
			 const uint32_t *start, uint32_t nruns, uint32_t *slot,
			 uint64_t mask)
{
	uint32_t r = blockIdx.x * blockDim.x + threadIdx.x;

	if (r >= nruns)
		return;
	uint64_t h = gk_hash(rkeys, nk, perm[start[r]]) & mask;
	while (atomicCAS(&slot[h], 0u, r + 1) != 0)
		h = (h + 1) & mask;
}

/* Probes left row i: cnt[i] matches starting at sorted position pos[i]. */
__global__ void ro_probe(const gpu_sortcol *lkeys, const gpu_sortcol *rkeys,
			 int nk, uint32_t nl, const uint32_t *perm,
			 const uint32_t *start, uint32_t nruns, uint32_t nsort,
			 const uint32_t *slot, uint64_t mask, uint64_t *cnt,
			 uint32_t *pos)
{
	uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i >= nl)
		return;
	cnt[i] = 0;
	for (int k = 0; k < nk; k++)
		if (ro_null(lkeys[k].col, i))
			return;
	uint64_t h = gk_hash(lkeys, nk, i) & mask;
	for (;;) {
		uint32_t s = slot[h];
		if (!s)
			return;
		uint32_t r = s - 1, row = perm[start[r]];
		bool eq = true;
		for (int k = 0; k < nk && eq; k++)
			eq = gk_eq(lkeys[k], i, rkeys[k], row);
		if (eq) {
			uint32_t end = r + 1 < nruns ? start[r + 1] : nsort;
			cnt[i] = end - start[r];
			pos[i] = start[r];
			return;
		}
		h = (h + 1) & mask;
	}
}

/* Left row i's pairs at off[i]: right rows of its run, last first;
 * through lmap/rmap (NULL: none) when given. */
__global__ void ro_emit(const uint64_t *cnt, const uint64_t *off,
			const uint32_t *pos, const uint32_t *perm, uint32_t nl,
			const uint32_t *lmap, const uint32_t *rmap,
			uint32_t *li, uint32_t *ri)
{
	uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i >= nl)
		return;
	uint64_t c = cnt[i], o = off[i];
	uint32_t l = lmap ? lmap[i] : i;
	for (uint64_t k = 0; k < c; k++) {
		uint32_t r = perm[pos[i] + (uint32_t)(c - 1 - k)];
		li[o + k] = l;
		ri[o + k] = rmap ? rmap[r] : r;
	}
}

/*
 * The join's table and probe, shared by gpu_join and gpu_semi_join: the
 * right rows with no NULL key sorted into runs of equal keys (*perm, in
 * m), a table from key to run, and for each left row (nl > 0) *cnt (its
 * matches: 0 with a NULL key or none) and *pos (where its run starts in
 * *perm).  *dk: the keys on the device (left nk, then right nk).  No
 * right row with a key: every count is 0.
 */
static int ro_join_probe(ro_mem *m, const gpu_sortcol *lkeys,
			 const gpu_sortcol *rkeys, int nkeys, uint32_t nl,
			 uint32_t nr, gpu_sortcol **dk, uint64_t **cnt,
			 uint32_t **pos, uint32_t **perm, uint32_t *nkeyed,
			 char *err, size_t errlen)
{
	cudaStream_t s = gpu_stream();
	uint8_t *valid;
	uint32_t *rv, *nv, nvalid = 0, nruns = 0, *p, *diff, *run, *start,
			   *slot;
	uint64_t hs;
	gpu_sortcol sk[32];
	void *tmp;
	size_t tb = 0;
	int rc;

	*perm = NULL;
	if ((rc = ro_alloc(m, (void **)dk, sizeof(gpu_sortcol) * 2 * nkeys, err,
			   errlen)) ||
	    (rc = ro_alloc(m, (void **)cnt, 8 * (size_t)nl, err, errlen)) ||
	    (rc = ro_alloc(m, (void **)pos, 4 * (size_t)nl, err, errlen)))
		return rc;
	GPU_TRY(cudaMemcpyAsync(*dk, lkeys, sizeof(gpu_sortcol) * nkeys,
				cudaMemcpyHostToDevice, s));
	GPU_TRY(cudaMemcpyAsync(*dk + nkeys, rkeys, sizeof(gpu_sortcol) * nkeys,
				cudaMemcpyHostToDevice, s));
	GPU_TRY(cudaMemsetAsync(*cnt, 0, 8 * (size_t)nl, s));
	if (!nr)
		return GPMDB_OK;
	if ((rc = ro_alloc(m, (void **)&valid, nr, err, errlen)) ||
	    (rc = ro_alloc(m, (void **)&rv, 4 * (size_t)nr, err, errlen)) ||
	    (rc = ro_alloc(m, (void **)&nv, 4, err, errlen)))
		return rc;
	/* the right rows with a key (a NULL key matches nothing) */
	ro_valid<<<ro_grid(nr), RO_BLOCK, 0, s>>>(*dk + nkeys, nkeys, nr,
						  valid);
	GPU_TRY(cudaGetLastError());
	{
		thrust::counting_iterator<uint32_t> it(0);
		GPU_TRY(cub::DeviceSelect::Flagged(NULL, tb, it, valid, rv, nv,
						   (int)nr, s));
		if ((rc = ro_alloc(m, &tmp, tb, err, errlen)))
			return rc;
		GPU_TRY(cub::DeviceSelect::Flagged(tmp, tb, it, valid, rv, nv,
						   (int)nr, s));
	}
	if ((rc = gpu_download(&nvalid, nv, 4, err, errlen)))
		return rc;
	if (nkeyed)
		*nkeyed = nvalid;
	if (!nvalid)
		return GPMDB_OK;
	for (int k = 0; k < nkeys; k++) {
		sk[k] = rkeys[k];
		sk[k].desc = 0;
		sk[k].nulls_first = 1;
	}
	if ((rc = ro_eq_sorted(m, sk, nkeys, nvalid, rv, &p, err, errlen)) ||
	    (rc = ro_alloc(m, (void **)&diff, 4 * (size_t)nvalid, err,
			   errlen)) ||
	    (rc =
		 ro_alloc(m, (void **)&run, 4 * (size_t)nvalid, err, errlen)) ||
	    (rc =
		 ro_alloc(m, (void **)&start, 4 * (size_t)nvalid, err, errlen)))
		return rc;
	*perm = p;
	GPU_TRY(cudaMemsetAsync(diff, 0, 4 * (size_t)nvalid, s));
	for (int k = 0; k < nkeys; k++) {
		ro_diff<<<ro_grid(nvalid), RO_BLOCK, 0, s>>>(sk[k], p, nvalid,
							     diff);
		GPU_TRY(cudaGetLastError());
	}
	tb = 0;
	GPU_TRY(
	    cub::DeviceScan::InclusiveSum(NULL, tb, diff, run, (int)nvalid, s));
	if ((rc = ro_alloc(m, &tmp, tb, err, errlen)))
		return rc;
	GPU_TRY(
	    cub::DeviceScan::InclusiveSum(tmp, tb, diff, run, (int)nvalid, s));
	if ((rc = gpu_download(&nruns, run + nvalid - 1, 4, err, errlen)))
		return rc;
	ro_runs<<<ro_grid(nvalid), RO_BLOCK, 0, s>>>(diff, run, nvalid, start);
	GPU_TRY(cudaGetLastError());
	/* the table: a power of two, at least twice the distinct keys */
	for (hs = 1024; hs < 2 * (uint64_t)nruns; hs *= 2)
		;
	if ((rc = ro_alloc(m, (void **)&slot, 4 * hs, err, errlen)))
		return rc;
	GPU_TRY(cudaMemsetAsync(slot, 0, 4 * hs, s));
	ro_build<<<ro_grid(nruns), RO_BLOCK, 0, s>>>(
	    *dk + nkeys, nkeys, p, start, nruns, slot, hs - 1);
	GPU_TRY(cudaGetLastError());
	ro_probe<<<ro_grid(nl), RO_BLOCK, 0, s>>>(*dk, *dk + nkeys, nkeys, nl,
						  p, start, nruns, nvalid, slot,
						  hs - 1, *cnt, *pos);
	GPU_TRY(cudaGetLastError());
	return GPMDB_OK;
}

static int ro_nkeys_ok(int nkeys, char *err, size_t errlen)
{
	if (nkeys < 1 || nkeys > 32) {
		snprintf(err, errlen, "%d join keys (1 to 32 on the GPU)",
			 nkeys);
		return GPMDB_UNSUPPORTED;
	}
	return GPMDB_OK;
}

/* gpu_join and gpu_join_dev: the pairs on the device (*dli, *dri, the
 * caller's to gpu_free), through lmap/rmap when given. */
static int ro_join_pairs(const gpu_sortcol *lkeys, const gpu_sortcol *rkeys,
			 int nkeys, uint32_t nl, uint32_t nr,
			 const uint32_t *lmap, const uint32_t *rmap,
			 uint64_t max_pairs, uint32_t **dli, uint32_t **dri,
			 uint64_t *npairs, char *err, size_t errlen)
{
	cudaStream_t s = gpu_stream();
	ro_mem m = {{0}, 0};
	gpu_sortcol *dk;
	uint32_t *p, *pos;
	uint64_t *cnt, *off, total = 0, last[2];
	void *tmp;
	size_t tb2 = 0;
	int rc;

	*dli = *dri = NULL;
	*npairs = 0;
	if ((rc = ro_nkeys_ok(nkeys, err, errlen)))
		return rc;
	if (!nl || !nr)
		return GPMDB_OK;
	if ((rc = ro_check_n(nr, err, errlen)) ||
	    (rc = ro_check_n(nl, err, errlen)))
		return rc;
	if ((rc = ro_join_probe(&m, lkeys, rkeys, nkeys, nl, nr, &dk, &cnt,
				&pos, &p, NULL, err, errlen)))
		goto out;
	if (!p) /* no right row with a key */
		goto out;
	if ((rc = ro_alloc(&m, (void **)&off, 8 * (size_t)nl, err, errlen)))
		goto out;
	RO_TRY(cub::DeviceScan::ExclusiveSum(NULL, tb2, cnt, off, (int)nl, s));
	if ((rc = ro_alloc(&m, &tmp, tb2, err, errlen)))
		goto out;
	RO_TRY(cub::DeviceScan::ExclusiveSum(tmp, tb2, cnt, off, (int)nl, s));
	RO_TRY(cudaMemcpyAsync(&last[0], off + nl - 1, 8,
			       cudaMemcpyDeviceToHost, s));
	RO_TRY(cudaMemcpyAsync(&last[1], cnt + nl - 1, 8,
			       cudaMemcpyDeviceToHost, s));
	RO_TRY(cudaStreamSynchronize(s));
	total = last[0] + last[1];
	if (total > max_pairs) {
		snprintf(err, errlen,
			 "the join makes %llu pairs (at most %llu on the GPU)",
			 (unsigned long long)total,
			 (unsigned long long)max_pairs);
		rc = GPMDB_UNSUPPORTED;
		goto out;
	}
	if (!total)
		goto out;
	/* not ro_alloc'd: they outlive the call */
	if ((rc = gpu_alloc((void **)dli, 4 * total, err, errlen)) ||
	    (rc = gpu_alloc((void **)dri, 4 * total, err, errlen)))
		goto out;
	ro_emit<<<ro_grid(nl), RO_BLOCK, 0, s>>>(cnt, off, pos, p, nl, lmap,
						 rmap, *dli, *dri);
	RO_TRY(cudaGetLastError());
	*npairs = total;
out:
	if (rc) {
		gpu_free(*dli, NULL, 0);
		gpu_free(*dri, NULL, 0);
		*dli = *dri = NULL;
		*npairs = 0;
	}
	ro_release(&m);
	return rc;
}

extern "C" int gpu_join(const gpu_sortcol *lkeys, const gpu_sortcol *rkeys,
			int nkeys, uint32_t nl, uint32_t nr, uint64_t max_pairs,
			uint32_t **li, uint32_t **ri, uint64_t *npairs,
			char *err, size_t errlen)
{
	uint32_t *dli, *dri;
	uint64_t total;
	int rc;

	*li = *ri = NULL;
	*npairs = 0;
	if ((rc = ro_join_pairs(lkeys, rkeys, nkeys, nl, nr, NULL, NULL,
				max_pairs, &dli, &dri, &total, err, errlen)) ||
	    !total)
		return rc;
	*li = (uint32_t *)malloc(4 * total);
	*ri = (uint32_t *)malloc(4 * total);
	if (!*li || !*ri) {
		snprintf(err, errlen, "out of memory");
		rc = GPMDB_NOMEM;
	} else {
		void *dst[2] = {*li, *ri};
		const void *src[2] = {dli, dri};
		size_t len[2] = {4 * total, 4 * total};
		rc = gpu_download_many(2, dst, src, len, err, errlen);
	}
	gpu_free(dli, NULL, 0);
	gpu_free(dri, NULL, 0);
	if (rc) {
		free(*li);
		free(*ri);
		*li = *ri = NULL;
		return rc;
	}
	*npairs = total;
	return GPMDB_OK;
}

extern "C" int gpu_join_dev(const gpu_sortcol *lkeys, const gpu_sortcol *rkeys,
			    int nkeys, uint32_t nl, uint32_t nr,
			    const uint32_t *lmap, const uint32_t *rmap,
			    uint64_t max_pairs, uint32_t **li, uint32_t **ri,
			    uint64_t *npairs, char *err, size_t errlen)
{
	return ro_join_pairs(lkeys, rkeys, nkeys, nl, nr, lmap, rmap, max_pairs,
			     li, ri, npairs, err, errlen);
}

/* keep[i]: left row i is in a SEMI (mode 0: it has a match), ANTI (1:
 * none) or ANTI_NULL (2: none and no NULL key) join's output. */
__global__ void ro_semi_keep(const gpu_sortcol *lkeys, int nk,
			     const uint64_t *cnt, uint32_t nl, int mode,
			     uint8_t *keep)
{
	uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i >= nl)
		return;
	/* 3, 4: NOT IN over an empty right side (every row), over one with
	 * a NULL key (none) */
	bool k = mode == 3   ? true
		 : mode == 4 ? false
		 : mode == 0 ? cnt[i] != 0
			     : cnt[i] == 0;
	for (int c = 0; mode == 2 && k && c < nk; c++)
		if (ro_null(lkeys[c].col, i))
			k = false;
	keep[i] = k;
}

/* The kept left rows of a SEMI/ANTI join (mode GPU_*; rules: NOT IN's
 * whole-input rules for GPU_ANTI_NULL) as row numbers through lmap (NULL:
 * the row itself) in row order: *out (device, in m) and *n (host). */
static int ro_semi_rows(ro_mem *m, const gpu_sortcol *lkeys,
			const gpu_sortcol *rkeys, int nkeys, uint32_t nl,
			uint32_t nr, int mode, bool rules, const uint32_t *lmap,
			uint32_t **out, uint32_t *n, char *err, size_t errlen)
{
	cudaStream_t s = gpu_stream();
	gpu_sortcol *dk;
	uint32_t *p, *pos, *nv, nkeyed = 0;
	uint64_t *cnt;
	uint8_t *keep;
	void *tmp;
	size_t tb = 0;
	int rc;

	*out = NULL;
	*n = 0;
	if ((rc = ro_nkeys_ok(nkeys, err, errlen)))
		return rc;
	if (mode < 0 || mode > 2) {
		snprintf(err, errlen, "gpu_semi_join: mode %d", mode);
		return GPMDB_MISUSE;
	}
	if (!nl)
		return GPMDB_OK;
	if ((rc = ro_check_n(nr, err, errlen)) ||
	    (rc = ro_check_n(nl, err, errlen)))
		return rc;
	if ((rc = ro_join_probe(m, lkeys, rkeys, nkeys, nl, nr, &dk, &cnt, &pos,
				&p, &nkeyed, err, errlen)) ||
	    (rc = ro_alloc(m, (void **)&keep, nl, err, errlen)) ||
	    (rc = ro_alloc(m, (void **)out, 4 * (size_t)nl, err, errlen)) ||
	    (rc = ro_alloc(m, (void **)&nv, 4, err, errlen)))
		return rc;
	if (rules && mode == GPU_ANTI_NULL)
		mode = !nr ? 3 : nkeyed < nr ? 4 : mode;
	ro_semi_keep<<<ro_grid(nl), RO_BLOCK, 0, s>>>(dk, nkeys, cnt, nl, mode,
						      keep);
	GPU_TRY(cudaGetLastError());
	/* the kept left rows in row order: exec.c's semi_out */
	if (lmap) {
		GPU_TRY(cub::DeviceSelect::Flagged(NULL, tb, lmap, keep, *out,
						   nv, (int)nl, s));
		if ((rc = ro_alloc(m, &tmp, tb, err, errlen)))
			return rc;
		GPU_TRY(cub::DeviceSelect::Flagged(tmp, tb, lmap, keep, *out,
						   nv, (int)nl, s));
	} else {
		thrust::counting_iterator<uint32_t> it(0);
		GPU_TRY(cub::DeviceSelect::Flagged(NULL, tb, it, keep, *out, nv,
						   (int)nl, s));
		if ((rc = ro_alloc(m, &tmp, tb, err, errlen)))
			return rc;
		GPU_TRY(cub::DeviceSelect::Flagged(tmp, tb, it, keep, *out, nv,
						   (int)nl, s));
	}
	return gpu_download(n, nv, 4, err, errlen);
}

extern "C" int gpu_semi_join(const gpu_sortcol *lkeys, const gpu_sortcol *rkeys,
			     int nkeys, uint32_t nl, uint32_t nr, int mode,
			     uint32_t **rows, uint32_t *nrows, char *err,
			     size_t errlen)
{
	ro_mem m = {{0}, 0};
	uint32_t *out;
	int rc;

	*rows = NULL;
	*nrows = 0;
	if ((rc = ro_semi_rows(&m, lkeys, rkeys, nkeys, nl, nr, mode, false,
			       NULL, &out, nrows, err, errlen)))
		goto out;
	if (!(*rows = (uint32_t *)malloc(4 * (size_t)*nrows + 4))) {
		snprintf(err, errlen, "out of memory");
		rc = GPMDB_NOMEM;
		goto out;
	}
	if (*nrows &&
	    (rc = gpu_download(*rows, out, 4 * (size_t)*nrows, err, errlen)))
		goto out;
out:
	if (rc) {
		free(*rows);
		*rows = NULL;
		*nrows = 0;
	}
	ro_release(&m);
	return rc;
}

extern "C" int gpu_semi_join_dev(const gpu_sortcol *lkeys,
				 const gpu_sortcol *rkeys, int nkeys,
				 uint32_t nl, uint32_t nr, int mode,
				 const uint32_t *lmap, uint32_t **rows,
				 uint32_t *nrows, char *err, size_t errlen)
{
	ro_mem m = {{0}, 0};
	uint32_t *out;
	int rc;

	*rows = NULL;
	*nrows = 0;
	rc = ro_semi_rows(&m, lkeys, rkeys, nkeys, nl, nr, mode, true, lmap,
			  &out, nrows, err, errlen);
	/* the result outlives the call: a copy of its length */
	if (!rc &&
	    (rc = gpu_alloc((void **)rows, 4 * (size_t)*nrows + 4, err,
			    errlen)) == GPMDB_OK &&
	    *nrows)
		rc = gpu_copy(*rows, out, 4 * (size_t)*nrows, err, errlen);
	if (rc) {
		gpu_free(*rows, NULL, 0);
		*rows = NULL;
		*nrows = 0;
	}
	ro_release(&m);
	return rc;
}

__global__ void ro_remap(const uint32_t *base, const uint32_t *idx, uint32_t m,
			 uint32_t *out)
{
	uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;

	if (k < m)
		out[k] = idx[k] == GPU_NO_ROW ? GPU_NO_ROW : base[idx[k]];
}

extern "C" int gpu_remap(const uint32_t *base, const uint32_t *idx, uint32_t m,
			 uint32_t **out, char *err, size_t errlen)
{
	int rc;

	if ((rc = gpu_alloc((void **)out, 4 * (size_t)m + 4, err, errlen)))
		return rc;
	if (!m)
		return GPMDB_OK;
	ro_remap<<<ro_grid(m), RO_BLOCK, 0, gpu_stream()>>>(base, idx, m, *out);
	cudaError_t e = cudaGetLastError();
	if (e != cudaSuccess) {
		gpu_free(*out, NULL, 0);
		*out = NULL;
		return gpu_cuda_fail(e, "ro_remap<<<>>>", err, errlen);
	}
	return GPMDB_OK;
}

__global__ void ro_shift(const uint32_t *src, uint32_t n, uint32_t add,
			 uint32_t *dst)
{
	uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;

	if (k < n)
		dst[k] = src[k] + add;
}

extern "C" int gpu_idx_shift(uint32_t *dst, const uint32_t *src, uint32_t n,
			     uint32_t add, char *err, size_t errlen)
{
	if (!n)
		return GPMDB_OK;
	ro_shift<<<ro_grid(n), RO_BLOCK, 0, gpu_stream()>>>(src, n, add, dst);
	cudaError_t e = cudaGetLastError();
	if (e != cudaSuccess)
		return gpu_cuda_fail(e, "ro_shift<<<>>>", err, errlen);
	return GPMDB_OK;
}

__global__ void ro_mark(const uint32_t *li, uint64_t np, uint8_t *hit)
{
	uint64_t k = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;

	if (k < np)
		hit[li[k]] = 1;
}

__global__ void ro_not(uint8_t *f, uint32_t n)
{
	uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;

	if (k < n)
		f[k] = !f[k];
}

extern "C" int gpu_unmatched(const uint32_t *li, uint64_t np, uint32_t nl,
			     int matched, uint32_t **rows, uint32_t *nrows,
			     char *err, size_t errlen)
{
	cudaStream_t s = gpu_stream();
	ro_mem m = {{0}, 0};
	uint8_t *hit;
	uint32_t *nv;
	void *tmp;
	size_t tb = 0;
	int rc;

	*rows = NULL;
	*nrows = 0;
	if ((rc = gpu_alloc((void **)rows, 4 * (size_t)nl + 4, err, errlen)))
		return rc;
	if (!nl)
		return GPMDB_OK;
	if ((rc = ro_alloc(&m, (void **)&hit, nl, err, errlen)) ||
	    (rc = ro_alloc(&m, (void **)&nv, 4, err, errlen)))
		goto out;
	RO_TRY(cudaMemsetAsync(hit, 0, nl, s));
	if (np) {
		ro_mark<<<(unsigned)((np + RO_BLOCK - 1) / RO_BLOCK), RO_BLOCK,
			  0, s>>>(li, np, hit);
		RO_TRY(cudaGetLastError());
	}
	if (!matched) {
		ro_not<<<ro_grid(nl), RO_BLOCK, 0, s>>>(hit, nl);
		RO_TRY(cudaGetLastError());
	}
	{
		thrust::counting_iterator<uint32_t> it(0);
		RO_TRY(cub::DeviceSelect::Flagged(NULL, tb, it, hit, *rows, nv,
						  (int)nl, s));
		if ((rc = ro_alloc(&m, &tmp, tb, err, errlen)))
			goto out;
		RO_TRY(cub::DeviceSelect::Flagged(tmp, tb, it, hit, *rows, nv,
						  (int)nl, s));
	}
	rc = gpu_download(nrows, nv, 4, err, errlen);
out:
	if (rc) {
		gpu_free(*rows, NULL, 0);
		*rows = NULL;
		*nrows = 0;
	}
	ro_release(&m);
	return rc;
}

/* nulls[perm[i]]: row perm[i] is not the first of its set (head[i] 0) or
 * its argument (the last key) is NULL. */
__global__ void ro_dmask(gpu_sortcol arg, const uint32_t *perm,
			 const uint32_t *head, uint32_t m, uint8_t *nulls)
{
	uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i >= m)
		return;
	uint32_t r = perm[i];
	nulls[r] = !head[i] || ro_null(arg.col, r);
}

extern "C" int gpu_distinct_nulls(const gpu_sortcol *keys, int nk, uint32_t m,
				  uint8_t **nulls, char *err, size_t errlen)
{
	cudaStream_t s = gpu_stream();
	uint32_t *perm = NULL, *head = NULL;
	int rc;

	*nulls = NULL;
	if (nk < 1) {
		snprintf(err, errlen, "gpu_distinct_nulls: no argument");
		return GPMDB_MISUSE;
	}
	if ((rc = gpu_alloc((void **)nulls, (size_t)m + 16, err, errlen)))
		return rc;
	if (!m)
		return GPMDB_OK;
	if ((rc = gpu_alloc((void **)&head, 4 * (size_t)m + 4, err, errlen)) ||
	    (rc = ro_key_groups(keys, nk, m, &perm, head, err, errlen)))
		goto out;
	ro_dmask<<<ro_grid(m), RO_BLOCK, 0, s>>>(keys[nk - 1], perm, head, m,
						 *nulls);
	{
		cudaError_t e = cudaGetLastError();
		/* perm and head are freed below: the kernel must be done */
		if (e == cudaSuccess)
			e = cudaStreamSynchronize(s);
		if (e != cudaSuccess)
			rc = gpu_cuda_fail(e, "ro_dmask<<<>>>", err, errlen);
	}
out:
	gpu_free(perm, NULL, 0);
	gpu_free(head, NULL, 0);
	if (rc) {
		gpu_free(*nulls, NULL, 0);
		*nulls = NULL;
	}
	return rc;
}
