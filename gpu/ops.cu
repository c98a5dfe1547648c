/*
 * ops.cu - the GPU operators behind gpu/exec/ (gpu.h): selection
 * compaction (CUB DeviceSelect), batched downloads, and grouped or scalar
 * aggregation (CUB radix sort of the keys, segmented scans); the fused
 * scan-filter-aggregate and the small helpers are ops_fused.cu's
 * (ops_int.cuh between them).
 *
 * Few groups (fitting in shared memory): one hash-aggregation pass
 * (ops_hash_agg, below).  Otherwise aggregates are computed with CUB
 * DeviceScan::InclusiveScanByKey over the
 * rows sorted by group (one integer key: radix sort of the key; several
 * keys, TEXT or DOUBLE ones: relops.cu's ro_key_groups): a scan visits the rows
 * of a group in row order (the radix sort is stable), so order-sensitive
 * results match the CPU's sequential loop: the first of equal MIN/MAX values,
 * and the integer overflow check, which the CPU makes on every partial sum (a
 * sum that overflows and comes back is still an error): every prefix of the
 * exact 128-bit running sum is checked against the int64 range.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cub/cub.cuh>

#include "gpmdb.h"

#include "gpu_internal.h"
#include "ops_int.cuh"

#include "../engine/value_inline.h" /* val_dec_to_real */

#include "../engine/vector.h" /* VEC_NULL */

struct ops_eq {
	__device__ bool operator()(uint32_t a, uint32_t b) const
	{
		return a == b;
	}
};

/* Device allocations of one operator, freed together. */
#define OPS_MAXMEM 32
typedef struct ops_mem {
	void *p[OPS_MAXMEM];
	int n;
} ops_mem;

static int ops_alloc(ops_mem *m, void **out, size_t bytes, char *err,
		     size_t errlen)
{
	int rc;

	*out = NULL;
	if (m->n == OPS_MAXMEM) {
		snprintf(err, errlen, "gpu ops: too many buffers");
		return GPMDB_INTERNAL;
	}
	/* n = 0 would give NULL, which CUB reads as "ask for the size" */
	if ((rc = gpu_alloc(out, bytes ? bytes : 16, err, errlen)))
		return rc;
	m->p[m->n++] = *out;
	return GPMDB_OK;
}

static void ops_release(ops_mem *m)
{
	for (int i = m->n - 1; i >= 0; i--)
		gpu_free(m->p[i], NULL, 0);
	m->n = 0;
}

/* ---- selection -------------------------------------------------------- */

/* The CPU filter's truth test (exec.c filter_rows): not NULL and != 0;
 * other types and VEC_NULL select nothing. */
__global__ void ops_flags(gpu_col p, uint32_t n, uint8_t *flags)
{
	uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
	uint8_t t = 0;

	if (i >= n)
		return;
	if (!(p.nulls && p.nulls[i])) {
		switch (p.type) {
		case BC_COL_BOOL:
			t = ((const uint8_t *)p.data)[i] != 0;
			break;
		case BC_COL_INT64:
			t = ((const int64_t *)p.data)[i] != 0;
			break;
		case BC_COL_DOUBLE:
			t = ((const double *)p.data)[i] != 0;
			break;
		default:
			t = 0;
		}
	}
	flags[i] = t;
}

__global__ void ops_iota(uint32_t *v, uint32_t n)
{
	uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		v[i] = i;
}

extern "C" int gpu_select(const gpu_col *pred, uint32_t n,
			  const uint32_t *sel_in, uint32_t **idx,
			  uint32_t *count, char *err, size_t errlen)
{
	cudaStream_t s = gpu_stream();
	ops_mem m = {{0}, 0};
	uint8_t *flags;
	uint32_t *in, *out = NULL, *dnum;
	void *tmp;
	size_t tb = 0;
	int rc;

	*idx = NULL;
	*count = 0;
	if ((rc = gpu_init(err, errlen)))
		return rc;
	if ((rc = gpu_alloc((void **)&out, (size_t)n * 4 + 4, err, errlen)))
		return rc;
	if (!n || pred->type == VEC_NULL) {
		*idx = out;
		return GPMDB_OK;
	}
	if ((rc = ops_alloc(&m, (void **)&flags, n, err, errlen)) ||
	    (rc = ops_alloc(&m, (void **)&dnum, 4, err, errlen)))
		goto fail;
	in = (uint32_t *)sel_in;
	if (!in) {
		if ((rc = ops_alloc(&m, (void **)&in, (size_t)n * 4, err,
				    errlen)))
			goto fail;
		ops_iota<<<ops_grid(n), OPS_BLOCK, 0, s>>>(in, n);
	}
	ops_flags<<<ops_grid(n), OPS_BLOCK, 0, s>>>(*pred, n, flags);
	if (cudaGetLastError() != cudaSuccess) {
		rc = gpu_cuda_fail(cudaErrorLaunchFailure, "ops_flags<<<>>>",
				   err, errlen);
		goto fail;
	}
	{
		cudaError_t e = cub::DeviceSelect::Flagged(
		    NULL, tb, in, flags, out, dnum, (int)n, s);
		if (e != cudaSuccess) {
			rc = gpu_cuda_fail(e, "cub::DeviceSelect::Flagged", err,
					   errlen);
			goto fail;
		}
		if ((rc = ops_alloc(&m, &tmp, tb, err, errlen)))
			goto fail;
		e = cub::DeviceSelect::Flagged(tmp, tb, in, flags, out, dnum,
					       (int)n, s);
		if (e == cudaSuccess)
			e = cudaMemcpyAsync(count, dnum, 4,
					    cudaMemcpyDeviceToHost, s);
		if (e == cudaSuccess)
			e = cudaStreamSynchronize(s);
		if (e != cudaSuccess) {
			rc = gpu_cuda_fail(e, "cub::DeviceSelect::Flagged", err,
					   errlen);
			goto fail;
		}
	}
	ops_release(&m);
	*idx = out;
	return GPMDB_OK;
fail:
	ops_release(&m);
	gpu_free(out, NULL, 0);
	return rc;
}

/* ---- downloads -------------------------------------------------------- */

extern "C" int gpu_download_many(int k, void *const *dst,
				 const void *const *src, const size_t *len,
				 char *err, size_t errlen)
{
	cudaStream_t s = gpu_stream();
	size_t total = 0, off = 0;
	char *dev = NULL, *host = NULL;
	int rc;

	if ((rc = gpu_init(err, errlen)))
		return rc;
	for (int i = 0; i < k; i++)
		total += (len[i] + 15) & ~(size_t)15;
	if (!total)
		return GPMDB_OK;
	/* Device-to-device copies into one buffer (HBM speed), then one
	 * transfer over the bus. */
	if ((rc = gpu_alloc((void **)&dev, total, err, errlen)))
		return rc;
	host = (char *)malloc(total);
	if (!host) {
		gpu_free(dev, NULL, 0);
		snprintf(err, errlen, "out of memory");
		return GPMDB_NOMEM;
	}
	for (int i = 0; i < k; i++) {
		if (len[i]) {
			cudaError_t e =
			    cudaMemcpyAsync(dev + off, src[i], len[i],
					    cudaMemcpyDeviceToDevice, s);
			if (e != cudaSuccess) {
				rc = gpu_cuda_fail(e, "cudaMemcpyAsync", err,
						   errlen);
				goto out;
			}
		}
		off += (len[i] + 15) & ~(size_t)15;
	}
	if ((rc = gpu_download(host, dev, total, err, errlen)))
		goto out;
	off = 0;
	for (int i = 0; i < k; i++) {
		memcpy(dst[i], host + off, len[i]);
		off += (len[i] + 15) & ~(size_t)15;
	}
out:
	gpu_free(dev, NULL, 0);
	free(host);
	return rc;
}

/* ---- aggregation ------------------------------------------------------- */

/* Widened value of element i of a dense column (INT64, DEC, DATE, BOOL). */
__device__ static int64_t ops_ival(const gpu_col &c, uint32_t i)
{
	switch (c.type) {
	case BC_COL_INT32:
	case BC_COL_DATE:
		return ((const int32_t *)c.data)[i];
	case BC_COL_BOOL:
		return ((const uint8_t *)c.data)[i];
	default:
		return ((const int64_t *)c.data)[i];
	}
}

__device__ static bool ops_null(const gpu_col &c, uint32_t i)
{
	return c.type == VEC_NULL || (c.nulls && c.nulls[i]);
}

/* Sortable key: int64 with the sign bit flipped orders as unsigned. */
__global__ void ops_sortkey(gpu_col k, uint32_t n, uint64_t *key,
			    uint8_t *knull)
{
	uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i >= n)
		return;
	bool nl = ops_null(k, i);
	key[i] = nl ? 0 : (uint64_t)ops_ival(k, i) ^ (1ull << 63);
	knull[i] = nl;
}

/* head[i] = 1 where a new group starts (sorted by NULL flag, then key). */
__global__ void ops_heads(const uint64_t *key, const uint8_t *knull, uint32_t n,
			  uint32_t *head)
{
	uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i >= n)
		return;
	head[i] = i == 0 || knull[i] != knull[i - 1] ||
		  (!knull[i] && key[i] != key[i - 1]);
}

/* gid = inclusive sum of heads - 1; at each head, the group's first row
 * and key. */
__global__ void ops_groups(uint32_t *gid, const uint32_t *head,
			   const uint32_t *idx, const uint64_t *key,
			   const uint8_t *knull, uint32_t n, uint32_t *first,
			   int64_t *gkey, uint8_t *gnull)
{
	uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i >= n)
		return;
	uint32_t g = --gid[i];
	if (head[i]) {
		first[g] = idx ? idx[i] : i;
		gkey[g] = key ? (int64_t)(key[i] ^ (1ull << 63)) : 0;
		gnull[g] = knull ? knull[i] : 0;
	}
}

/* Scan values.  c counts non-NULL values (rows for COUNT(*)). */
typedef struct ops_isum {
	__int128 s;
	uint64_t c;
} ops_isum;
typedef struct ops_rsum {
	double s;
	uint64_t c;
} ops_rsum;
typedef struct ops_imm {
	int64_t v;
	uint64_t c;
} ops_imm;
typedef struct ops_rmm {
	double v;
	uint64_t c;
} ops_rmm;

struct ops_isum_op {
	__device__ ops_isum operator()(const ops_isum &a,
				       const ops_isum &b) const
	{
		ops_isum r = {a.s + b.s, a.c + b.c};
		return r;
	}
};
struct ops_rsum_op {
	__device__ ops_rsum operator()(const ops_rsum &a,
				       const ops_rsum &b) const
	{
		ops_rsum r = {a.s + b.s, a.c + b.c};
		return r;
	}
};
/* MIN/MAX keep the earlier of equal values (the CPU replaces only on
 * strictly less / greater); NULLs (c = 0) are skipped. */
template <typename M, bool MAX> struct ops_mm_op {
	__device__ M operator()(const M &a, const M &b) const
	{
		M r = a;
		r.c = a.c + b.c;
		if (!a.c)
			r.v = b.v;
		else if (b.c && (MAX ? b.v > a.v : b.v < a.v))
			r.v = b.v;
		return r;
	}
};

/* Row value at sorted position i (row idx[i] of the dense argument). */
__global__ void ops_mk_isum(gpu_col a, const uint32_t *idx, uint32_t n,
			    int star, ops_isum *v)
{
	uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i >= n)
		return;
	uint32_t r = idx ? idx[i] : i;
	ops_isum x = {0, 0};
	if (star) {
		x.c = 1;
	} else if (!ops_null(a, r)) {
		x.s = ops_ival(a, r);
		x.c = 1;
	}
	v[i] = x;
}

__global__ void ops_mk_rsum(gpu_col a, const uint32_t *idx, uint32_t n,
			    ops_rsum *v)
{
	uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i >= n)
		return;
	uint32_t r = idx ? idx[i] : i;
	ops_rsum x = {0, 0};
	if (!ops_null(a, r)) {
		x.s = ((const double *)a.data)[r];
		x.c = 1;
	}
	v[i] = x;
}

__global__ void ops_mk_imm(gpu_col a, const uint32_t *idx, uint32_t n,
			   ops_imm *v)
{
	uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i >= n)
		return;
	uint32_t r = idx ? idx[i] : i;
	ops_imm x = {0, 0};
	if (!ops_null(a, r)) {
		x.v = ops_ival(a, r);
		x.c = 1;
	}
	v[i] = x;
}

__global__ void ops_mk_rmm(gpu_col a, const uint32_t *idx, uint32_t n,
			   ops_rmm *v)
{
	uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i >= n)
		return;
	uint32_t r = idx ? idx[i] : i;
	ops_rmm x = {0, 0};
	if (!ops_null(a, r)) {
		x.v = ((const double *)a.data)[r];
		x.c = 1;
	}
	v[i] = x;
}

/* Overflow: a partial sum of the scan outside int64. */
__global__ void ops_ovf(const ops_isum *v, uint32_t n, int *flag)
{
	uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n &&
	    (v[i].s > (__int128)INT64_MAX || v[i].s < (__int128)INT64_MIN))
		*flag = 1;
}

/* At the last position of each group: its result. */
template <typename V>
__global__ void ops_ends(const V *v, const uint32_t *gid, uint32_t n, V *res)
{
	uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n && (i == n - 1 || gid[i + 1] != gid[i]))
		res[gid[i]] = v[i];
}

template <typename V, typename Op>
static int ops_scan(ops_mem *m, const uint32_t *gid, V *in, uint32_t n, Op op,
		    V **out, char *err, size_t errlen)
{
	cudaStream_t s = gpu_stream();
	size_t tb = 0;
	void *tmp;
	int rc;

	if ((rc = ops_alloc(m, (void **)out, sizeof(V) * (size_t)n, err,
			    errlen)))
		return rc;
	GPU_TRY(cub::DeviceScan::InclusiveScanByKey(NULL, tb, gid, in, *out, op,
						    (int)n, ops_eq(), s));
	if ((rc = ops_alloc(m, &tmp, tb, err, errlen)))
		return rc;
	GPU_TRY(cub::DeviceScan::InclusiveScanByKey(tmp, tb, gid, in, *out, op,
						    (int)n, ops_eq(), s));
	return GPMDB_OK;
}

/* One aggregate on the device: scan the built values by group, take
 * each group's end into *res (ng, device); ovf: the integer overflow
 * check of every prefix (queued: read after a synchronisation). */
template <typename V, typename Op>
static int ops_agg_res(ops_mem *m, const uint32_t *gid, V *vals, uint32_t n,
		       uint32_t ng, Op op, V **res, int *ovf, char *err,
		       size_t errlen)
{
	cudaStream_t s = gpu_stream();
	V *sc;
	int rc;

	if ((rc = ops_scan(m, gid, vals, n, op, &sc, err, errlen)) ||
	    (rc = ops_alloc(m, (void **)res, sizeof(V) * (size_t)ng, err,
			    errlen)))
		return rc;
	ops_ends<V><<<ops_grid(n), OPS_BLOCK, 0, s>>>(sc, gid, n, *res);
	GPU_TRY(cudaGetLastError());
	if (ovf) {
		int *d;
		if ((rc = ops_alloc(m, (void **)&d, sizeof(int), err, errlen)))
			return rc;
		GPU_TRY(cudaMemsetAsync(d, 0, sizeof(int), s));
		ops_ovf<<<ops_grid(n), OPS_BLOCK, 0, s>>>((const ops_isum *)sc,
							  n, d);
		GPU_TRY(cudaGetLastError());
		GPU_TRY(cudaMemcpyAsync(ovf, d, sizeof(int),
					cudaMemcpyDeviceToHost, s));
	}
	return GPMDB_OK;
}

/* One aggregate: build, scan, take the groups' ends, download. */
template <typename V, typename Op>
static int ops_agg_one(ops_mem *m, const uint32_t *gid, V *vals, uint32_t n,
		       uint32_t ng, Op op, V *host, int *ovf, char *err,
		       size_t errlen)
{
	cudaStream_t s = gpu_stream();
	V *res;
	int rc;

	if ((rc = ops_agg_res(m, gid, vals, n, ng, op, &res, ovf, err, errlen)))
		return rc;
	GPU_TRY(cudaMemcpyAsync(host, res, sizeof(V) * (size_t)ng,
				cudaMemcpyDeviceToHost, s));
	GPU_TRY(cudaStreamSynchronize(s));
	return GPMDB_OK;
}

extern "C" void gpu_group_free(gpu_groups *g)
{
	if (!g)
		return;
	free(g->first);
	free(g->order);
	free(g->key);
	free(g->key_null);
	for (int a = 0; a < g->naggs; a++) {
		free(g->res[a].cnt);
		free(g->res[a].sum_lo);
		free(g->res[a].sum_hi);
		free(g->res[a].i64);
		free(g->res[a].f64);
	}
	free(g->res);
	memset(g, 0, sizeof(*g));
}

static int ops_sort_keys(ops_mem *m, const gpu_col *key, uint32_t n,
			 uint32_t **idx_out, uint64_t **key_out,
			 uint8_t **null_out, char *err, size_t errlen)
{
	cudaStream_t s = gpu_stream();
	uint64_t *k0, *k1, *ka, *st;
	uint8_t *nf, *nf1, *nf2;
	uint32_t *i0, *i1, *i2, *ia;
	void *tmp;
	size_t tb = 0, tb2 = 0;
	int rc, nb;

	if ((rc = ops_alloc(m, (void **)&k0, 8 * (size_t)n, err, errlen)) ||
	    (rc = ops_alloc(m, (void **)&k1, 8 * (size_t)n, err, errlen)) ||
	    (rc = ops_alloc(m, (void **)&nf, n, err, errlen)) ||
	    (rc = ops_alloc(m, (void **)&nf1, n, err, errlen)) ||
	    (rc = ops_alloc(m, (void **)&nf2, n, err, errlen)) ||
	    (rc = ops_alloc(m, (void **)&i0, 4 * (size_t)n, err, errlen)) ||
	    (rc = ops_alloc(m, (void **)&i1, 4 * (size_t)n, err, errlen)) ||
	    (rc = ops_alloc(m, (void **)&i2, 4 * (size_t)n, err, errlen)) ||
	    (rc = ops_alloc(m, (void **)&st, 32, err, errlen)))
		return rc;
	ops_sortkey<<<ops_grid(n), OPS_BLOCK, 0, s>>>(*key, n, k0, nf);
	ops_iota<<<ops_grid(n), OPS_BLOCK, 0, s>>>(i0, n);
	GPU_TRY(cudaGetLastError());
	/* Stable LSD radix sorts: by key, then by the NULL flag, so NULLs
	 * form one group and rows keep their order inside a group. */
	GPU_TRY(cub::DeviceRadixSort::SortPairs(NULL, tb, k0, k1, i0, i1,
						(int)n, 0, 64, s));
	GPU_TRY(cub::DeviceRadixSort::SortPairs(NULL, tb2, nf1, nf2, i1, i2,
						(int)n, 0, 1, s));
	if ((rc = ops_alloc(m, &tmp, tb > tb2 ? tb : tb2, err, errlen)))
		return rc;
	/* only the bits the keys use; none when they are in order */
	if ((rc = gpu_key_bits(k0, n, 64, st, &nb, err, errlen)))
		return rc;
	ia = i0;
	ka = k0;
	if (nb) {
		GPU_TRY(cub::DeviceRadixSort::SortPairs(tmp, tb, k0, k1, i0, i1,
							(int)n, 0, nb, s));
		ia = i1;
		ka = k1;
	}
	if (key->nulls) {
		ops_gather<uint8_t>
		    <<<ops_grid(n), OPS_BLOCK, 0, s>>>(nf, ia, n, nf1);
		GPU_TRY(cudaGetLastError());
		GPU_TRY(cub::DeviceRadixSort::SortPairs(tmp, tb2, nf1, nf2, ia,
							i2, (int)n, 0, 1, s));
		ops_gather<uint64_t>
		    <<<ops_grid(n), OPS_BLOCK, 0, s>>>(k0, i2, n, k1);
		GPU_TRY(cudaGetLastError());
		*idx_out = i2;
		*null_out = nf2;
		*key_out = k1;
	} else {
		GPU_TRY(cudaMemsetAsync(nf1, 0, n, s));
		*idx_out = ia;
		*null_out = nf1;
		*key_out = ka;
	}
	return GPMDB_OK;
}

/* ---- hash aggregation (few groups) --------------------------------------
 *
 * Why: the sort-based path radix-sorts every row (58 ms for 100M rows and
 * 1000 groups on the H100) when a few groups fit in shared memory.  One
 * pass instead: a global open-addressing table maps a key to a group id
 * (ids in order of insertion; the engine orders groups by their first
 * row, so insertion order does not matter); each block accumulates its
 * contiguous share of rows into shared-memory arrays (warp-aggregated
 * when a whole warp hits one group, e.g. the scalar aggregate), then
 * merges them into global arrays with atomics.  Exactness: COUNT, MIN_I
 * and MAX_I are order-free; SUM_I keeps the sums of the positive values
 * and of the magnitudes of the negative ones: when the first is at most
 * INT64_MAX and the second at most 2^63, no partial sum in any order
 * (the CPU's row order included) leaves int64, and the total is exact;
 * otherwise the call reports OPS_H_RETRY and the sort path (which checks
 * every prefix) runs.  SUM_R is added in another order (as the sort
 * path: documented as not bit-identical).  MIN_R/MAX_R ("the first of
 * equal values": -0.0 vs 0.0) and more groups than fit take the sort
 * path.  Several keys, TEXT or DOUBLE keys (ops_hagg<true>): the table is
 * keyed by a 64-bit hash of the row's keys, and a slot is the row's group
 * only when the keys equal those of the row that made the group (a shared
 * hash takes another slot: never a false merge). */

typedef struct ops_hargs {
	gpu_col key; /* type VEC_NULL + keyed 0: the scalar aggregate */
	/* several keys, TEXT or DOUBLE ones (ops_hagg<true>): the table is
	 * keyed by gk_hash of the row and gkey holds each group's first
	 * inserted row, against which every row's keys are compared */
	const gpu_sortcol *mkeys; /* device */
	int nmk;
	int keyed, naggs;
	/* at most this many groups in a warp: reduced over the warp;
	 * dedup: one table lookup per key of a warp; redux: COUNT and SUM_I
	 * reduced per group by redux.sync (ops_hgred) */
	int wmax, dedup, redux;
	int op[OPS_H_MAXAGG];
	gpu_col arg[OPS_H_MAXAGG];
	uint32_t n, chunk, gmax, cap;
	/* device: the table (cap + 1 slots, the last one the NULL key),
	 * the header (ngroups, flags), per group first row / key / NULL
	 * flag, and the accumulators acc[(a * 3 + j) * gmax + g] */
	unsigned long long *tkey;
	uint32_t *tstate;
	uint32_t *hdr;
	uint32_t *first;
	long long *gkey;
	uint8_t *gnull;
	unsigned long long *acc;
	/* a fused filter (gpu_fused_agg): rows failing a term are skipped */
	int nterms;
	gpu_term term[GPU_FUSE_MAXTERMS];
} ops_hargs;

#define OPS_HF_GROUPS 1u /* more groups than gmax */
#define OPS_HF_SUM    2u /* a SUM_I outside the exact range */

__device__ static uint64_t ops_hmix(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdull;
	k ^= k >> 33;
	k *= 0xc4ceb9fe1a85ec53ull;
	k ^= k >> 33;
	return k;
}

/* Row i's table key (MULTI: the hash of its keys) and *nl: it goes to
 * the NULL key's slot (a NULL integer key, or the scalar aggregate). */
template <bool MULTI>
__device__ static uint64_t ops_hkey(const ops_hargs &h, uint32_t i, bool *nl)
{
	*nl = !MULTI && (!h.keyed || ops_null(h.key, i));
	return MULTI ? gk_hash(h.mkeys, h.nmk, i)
	       : *nl ? 0
		     : (uint64_t)ops_ival(h.key, i);
}

/* The group id of row i (table key k, nl: ops_hkey's), inserting it;
 * UINT32_MAX when the table is full (the flag is set).  MULTI: the key
 * is the row's hash, a slot matches when the hash does and the keys
 * equal those of the group's representative row (so two keys sharing a
 * hash take two slots). */
template <bool MULTI>
__device__ static uint32_t ops_hgid(const ops_hargs &h, uint32_t i, uint64_t k,
				    bool nl)
{
	uint32_t s = nl ? h.cap : (uint32_t)(ops_hmix(k) & (h.cap - 1));
	if (!MULTI && !h.keyed)
		s = h.cap; /* the scalar aggregate: one group, "NULL key" */
	for (uint32_t probe = 0; probe <= h.cap; probe++) {
		volatile uint32_t *st = h.tstate + s;
		uint32_t v = *st;
		if (v == OPS_H_EMPTY &&
		    *(volatile uint32_t *)&h.hdr[0] >= h.gmax) {
			/* a new key past the groups that fit: the sort path
			 * runs; claiming slots would fill the table, and every
			 * later new key would probe all of it */
			atomicOr(&h.hdr[1], OPS_HF_GROUPS);
			return UINT32_MAX;
		}
		if (v == OPS_H_EMPTY) {
			v = atomicCAS(h.tstate + s, OPS_H_EMPTY, OPS_H_BUSY);
			if (v == OPS_H_EMPTY) {
				uint32_t g = atomicAdd(&h.hdr[0], 1);
				if (g >= h.gmax) {
					atomicOr(&h.hdr[1], OPS_HF_GROUPS);
					g = h.gmax; /* never used */
				} else {
					h.gkey[g] =
					    MULTI ? (long long)i : (long long)k;
					h.gnull[g] = h.keyed && nl;
				}
				h.tkey[s] = k;
				__threadfence();
				atomicExch(h.tstate + s, g + 2);
				return g < h.gmax ? g : UINT32_MAX;
			}
		}
		while (v == OPS_H_BUSY)
			v = *st;
		if (MULTI) {
			/* the representative row was written before the
			 * state was set (fence) */
			if (((volatile unsigned long long *)h.tkey)[s] == k &&
			    (v - 2 >= h.gmax ||
			     gk_rows_eq(h.mkeys, h.nmk,
					(uint32_t)((volatile long long *)
						       h.gkey)[v - 2],
					i)))
				return v - 2 < h.gmax ? v - 2 : UINT32_MAX;
		} else if (s == h.cap ||
			   ((volatile unsigned long long *)h.tkey)[s] == k) {
			return v - 2 < h.gmax ? v - 2 : UINT32_MAX;
		}
		/* overflowed already: the result will not be used.  Why
		 * here: the first round's threads all pass the count check
		 * above at once and claim every slot, and the rest then
		 * probed the whole full table (about 250 ms for TPC-H Q17 at
		 * SF10, 2M groups) */
		if (*(volatile uint32_t *)&h.hdr[1] & OPS_HF_GROUPS)
			return UINT32_MAX;
		s = (s + 1) & (h.cap - 1);
	}
	atomicOr(&h.hdr[1], OPS_HF_GROUPS);
	return UINT32_MAX;
}

/* Adds p (<= 2^63 + 1) to an unsigned sum that must stay <= lim; sets
 * the flag on the step that passes lim (the sum only grows, so some step
 * does, wrapping or not). */
__device__ static void ops_hadd_lim(unsigned long long *a, uint64_t p,
				    uint64_t lim, uint32_t *flags)
{
	if (!p)
		return;
	uint64_t old = atomicAdd(a, (unsigned long long)p);
	if (old + p < old || old + p > lim)
		atomicOr(flags, OPS_HF_SUM);
}

/* One row's (or a warp's reduced) contribution to aggregate a of group
 * g: c values, pos/neg sums, real sum, min/max. */
__device__ static void ops_hput(int op, unsigned long long *c,
				unsigned long long *x, unsigned long long *y,
				uint64_t cnt, uint64_t pos, uint64_t neg,
				double rs, long long mm, uint32_t *flags)
{
	if (!cnt)
		return;
	atomicAdd(c, (unsigned long long)cnt);
	switch (op) {
	case GPU_AGG_SUM_I:
		ops_hadd_lim(x, pos, OPS_LIM_POS, flags);
		ops_hadd_lim(y, neg, OPS_LIM_NEG, flags);
		break;
	case GPU_AGG_SUM_R:
		atomicAdd((double *)x, rs);
		break;
	case GPU_AGG_MIN_I:
		atomicMin((long long *)x, mm);
		break;
	case GPU_AGG_MAX_I:
		atomicMax((long long *)x, mm);
		break;
	}
}

/* Sums (or min/max) one aggregate's contributions over the warp into
 * lane 0: only the fields op uses (op is the same in every lane). */
__device__ static void ops_hwred(int op, uint64_t *cnt, uint64_t *pos,
				 uint64_t *neg, double *rs, long long *mm)
{
	for (int o = 16; o; o >>= 1) {
		*cnt += __shfl_down_sync(0xffffffffu, *cnt, o);
		if (op == GPU_AGG_SUM_I) {
			*pos = ops_sat_add(
			    *pos, __shfl_down_sync(0xffffffffu, *pos, o),
			    OPS_LIM_POS + 1);
			*neg = ops_sat_add(
			    *neg, __shfl_down_sync(0xffffffffu, *neg, o),
			    OPS_LIM_NEG + 1);
		} else if (op == GPU_AGG_SUM_R) {
			*rs += __shfl_down_sync(0xffffffffu, *rs, o);
		} else if (op == GPU_AGG_MIN_I || op == GPU_AGG_MAX_I) {
			long long t = __shfl_down_sync(0xffffffffu, *mm, o);
			*mm = op == GPU_AGG_MIN_I ? (t < *mm ? t : *mm)
						  : (t > *mm ? t : *mm);
		}
	}
}

/* The sum of v over the lanes of peers (each lane's group), by redux.sync
 * on 32-bit limbs of 26, 21 and 17 bits (a limb's sum over 32 lanes fits
 * 32 bits); l1, l2: some lane of the warp has bits in the second, third
 * limb (the same in every lane).  Saturates at sat. */
__device__ static uint64_t ops_hlimbs(uint32_t peers, uint64_t v, bool l1,
				      bool l2, uint64_t sat)
{
	unsigned __int128 t =
	    __reduce_add_sync(peers, (unsigned)(v & ((1u << 26) - 1)));

	if (l1)
		t += (unsigned __int128)__reduce_add_sync(
			 peers, (unsigned)((v >> 26) & ((1u << 21) - 1)))
		     << 26;
	if (l2)
		t += (unsigned __int128)__reduce_add_sync(peers,
							  (unsigned)(v >> 47))
		     << 47;
	return t > sat ? sat : (uint64_t)t;
}

/* A COUNT's (cnt: 0 or 1) or an integer SUM's (cnt, pos, neg)
 * contributions summed over each lane's group of the warp (peers): every
 * lane gets its group's sums.  The warp's lanes all call it. */
__device__ static void ops_hgred(uint32_t peers, uint64_t *cnt, uint64_t *pos,
				 uint64_t *neg, bool sum)
{
	*cnt = (uint64_t)__popc(__ballot_sync(0xffffffffu, *cnt != 0) & peers);
	if (!sum)
		return;
	unsigned need = __reduce_or_sync(
	    0xffffffffu, (*pos >> 26 ? 1u : 0u) | (*pos >> 47 ? 2u : 0u) |
			     (*neg ? 4u : 0u) | (*neg >> 26 ? 8u : 0u) |
			     (*neg >> 47 ? 16u : 0u));
	*pos = ops_hlimbs(peers, *pos, need & 1, need & 2, OPS_LIM_POS + 1);
	*neg = need & 4 ? ops_hlimbs(peers, *neg, need & 8, need & 16,
				     OPS_LIM_NEG + 1)
			: 0;
}

template <bool MULTI>
__global__ void __launch_bounds__(OPS_H_BLOCK) ops_hagg(ops_hargs h)
{
	extern __shared__ unsigned long long ops_hsm[];
	unsigned long long *sacc = ops_hsm;
	uint32_t *sfirst = (uint32_t *)(sacc + (size_t)h.naggs * 3 * h.gmax);
	__shared__ uint32_t sflags;
	uint32_t gm = h.gmax;

	for (uint32_t g = threadIdx.x; g < gm; g += blockDim.x) {
		sfirst[g] = UINT32_MAX;
		for (int a = 0; a < h.naggs; a++) {
			sacc[(a * 3 + 0) * gm + g] = 0;
			long long init = h.op[a] == GPU_AGG_MIN_I   ? INT64_MAX
					 : h.op[a] == GPU_AGG_MAX_I ? INT64_MIN
								    : 0;
			sacc[(a * 3 + 1) * gm + g] = (unsigned long long)init;
			sacc[(a * 3 + 2) * gm + g] = 0;
		}
	}
	if (threadIdx.x == 0)
		sflags = 0;
	__syncthreads();
	uint64_t lo = (uint64_t)blockIdx.x * h.chunk;
	uint64_t hi = lo + h.chunk < h.n ? lo + h.chunk : h.n;
	uint32_t lane = threadIdx.x & 31;
	/* every thread runs the same number of rounds: whole warps shuffle */
	for (uint64_t base = lo, r = 0; base < hi; base += blockDim.x, r++) {
		/* more groups than fit: the sort path will run; stop now
		 * (a warp-uniform exit: lane 0's read) instead of probing a
		 * table that fills up (every new key then probed all of it:
		 * 1.5 s for 200k groups of 6M rows, TPC-H Q17 at SF1) */
		if (!(r & 3)) {
			uint32_t fl =
			    lane ? 0 : *(volatile uint32_t *)&h.hdr[1];
			if (__shfl_sync(0xffffffffu, fl, 0) & OPS_HF_GROUPS)
				break;
		}
		uint64_t ii = base + threadIdx.x;
		uint32_t i = (uint32_t)ii;
		bool valid =
		    ii < hi && (!h.nterms || ops_pass(h.term, h.nterms, i));
		bool nl = false;
		uint64_t k = valid ? ops_hkey<MULTI>(h, i, &nl) : 0;
		/* One lookup per key of the warp, not per row: the lanes
		 * holding one key take its first lane's group (MULTI: when
		 * their keys equal that row's, not only the hash).  Every
		 * lookup reads the table's words from L2. */
		uint32_t same =
		    __match_any_sync(0xffffffffu, k) &
		    __match_any_sync(0xffffffffu,
				     (uint32_t)valid | (uint32_t)nl << 1);
		uint32_t first = (uint32_t)__ffs(same) - 1;
		if (!h.dedup)
			first = lane;
		uint32_t g = valid && lane == first
				 ? ops_hgid<MULTI>(h, i, k, nl)
				 : UINT32_MAX;
		g = __shfl_sync(0xffffffffu, g, first);
		uint32_t fi = __shfl_sync(0xffffffffu, i, first);
		if (MULTI && valid && lane != first &&
		    !gk_rows_eq(h.mkeys, h.nmk, i, fi))
			g = ops_hgid<MULTI>(h, i, k, nl);
		if (g != UINT32_MAX && i < sfirst[g])
			atomicMin(&sfirst[g], i);
		/* A few groups in the warp: each group's contributions are
		 * reduced over the warp and added once (shuffles), instead
		 * of by every lane (shared-memory atomics on a few words,
		 * serialised: TPC-H Q1's 4 groups took 26 ms at SF10).  More
		 * groups than h.wmax: every lane adds its own. */
		uint32_t peers = __match_any_sync(0xffffffffu, g);
		uint32_t leads = __ballot_sync(
		    0xffffffffu,
		    g != UINT32_MAX && lane == (uint32_t)__ffs(peers) - 1);
		bool wagg = __popc(leads) <= h.wmax;
		for (int a = 0; a < h.naggs; a++) {
			int op = h.op[a];
			uint64_t cnt = 0, pos = 0, neg = 0;
			double rs = 0;
			long long mm =
			    op == GPU_AGG_MIN_I ? INT64_MAX : INT64_MIN;
			if (g != UINT32_MAX && (op == GPU_AGG_COUNT_STAR ||
						!ops_null(h.arg[a], i))) {
				cnt = 1;
				if (op == GPU_AGG_SUM_R) {
					rs = ((const double *)h.arg[a].data)[i];
				} else if (op != GPU_AGG_COUNT_STAR &&
					   op != GPU_AGG_COUNT) {
					int64_t v = ops_ival(h.arg[a], i);
					mm = v;
					if (v >= 0)
						pos = (uint64_t)v;
					else
						neg = (uint64_t)(-(v + 1)) + 1;
				}
			}
			if (h.redux &&
			    (op == GPU_AGG_COUNT_STAR || op == GPU_AGG_COUNT ||
			     op == GPU_AGG_SUM_I)) {
				/* every group of the warp at once: its first
				 * lane adds */
				ops_hgred(peers, &cnt, &pos, &neg,
					  op == GPU_AGG_SUM_I);
				if (g != UINT32_MAX &&
				    lane == (uint32_t)__ffs(peers) - 1)
					ops_hput(op,
						 &sacc[(a * 3 + 0) * gm + g],
						 &sacc[(a * 3 + 1) * gm + g],
						 &sacc[(a * 3 + 2) * gm + g],
						 cnt, pos, neg, 0, 0, &sflags);
				continue;
			}
			if (!wagg) {
				if (g != UINT32_MAX)
					ops_hput(
					    op, &sacc[(a * 3 + 0) * gm + g],
					    &sacc[(a * 3 + 1) * gm + g],
					    &sacc[(a * 3 + 2) * gm + g], cnt,
					    pos, neg, rs, mm, &sflags);
				continue;
			}
			for (uint32_t m = leads; m; m &= m - 1) {
				uint32_t grp = __shfl_sync(0xffffffffu, g,
							   (int)__ffs(m) - 1);
				bool in = g == grp;
				uint64_t c = in ? cnt : 0, p = in ? pos : 0,
					 q = in ? neg : 0;
				double r = in ? rs : 0;
				long long x = in		    ? mm
					      : op == GPU_AGG_MIN_I ? INT64_MAX
								    : INT64_MIN;
				ops_hwred(op, &c, &p, &q, &r, &x);
				if (lane == 0)
					ops_hput(op,
						 &sacc[(a * 3 + 0) * gm + grp],
						 &sacc[(a * 3 + 1) * gm + grp],
						 &sacc[(a * 3 + 2) * gm + grp],
						 c, p, q, r, x, &sflags);
			}
		}
	}
	__syncthreads();
	/* more groups than fit: the sort path runs, and the merge would
	 * only add contention (every block adding every group into the same
	 * few thousand words: 240-270 ms at TPC-H SF10, Q2, Q17, Q20) */
	if (*(volatile uint32_t *)&h.hdr[1] & OPS_HF_GROUPS)
		return;
	/* merge: every group this block saw has an id below the count now */
	uint32_t ng = *(volatile uint32_t *)&h.hdr[0];
	if (ng > gm)
		ng = gm;
	if (threadIdx.x == 0 && sflags)
		atomicOr(&h.hdr[1], sflags);
	for (uint32_t g = threadIdx.x; g < ng; g += blockDim.x) {
		if (sfirst[g] == UINT32_MAX)
			continue;
		atomicMin(&h.first[g], sfirst[g]);
		for (int a = 0; a < h.naggs; a++) {
			unsigned long long c = sacc[(a * 3 + 0) * gm + g];
			unsigned long long x = sacc[(a * 3 + 1) * gm + g];
			unsigned long long y = sacc[(a * 3 + 2) * gm + g];
			ops_hput(h.op[a], &h.acc[(a * 3 + 0) * gm + g],
				 &h.acc[(a * 3 + 1) * gm + g],
				 &h.acc[(a * 3 + 2) * gm + g], c, x, y,
				 __longlong_as_double((long long)x),
				 (long long)x, &h.hdr[1]);
		}
	}
}

__global__ void ops_hinit(ops_hargs h)
{
	uint32_t g = blockIdx.x * blockDim.x + threadIdx.x;

	if (g >= h.gmax)
		return;
	h.first[g] = UINT32_MAX;
	for (int a = 0; a < h.naggs; a++) {
		h.acc[(a * 3 + 0) * h.gmax + g] = 0;
		long long init = h.op[a] == GPU_AGG_MIN_I   ? INT64_MAX
				 : h.op[a] == GPU_AGG_MAX_I ? INT64_MIN
							    : 0;
		h.acc[(a * 3 + 1) * h.gmax + g] = (unsigned long long)init;
		h.acc[(a * 3 + 2) * h.gmax + g] = 0;
	}
}

/* GPMDB_GPU_HAGG (measurements): "old", a lookup per row and atomics per
 * lane unless the whole warp is one group; "shuffle", a lookup per key
 * of a warp and up to 8 groups of a warp reduced by shuffles; default
 * ("redux"): as shuffle, and COUNT and integer SUM reduced per group by
 * redux.sync. */
static void ops_hagg_tuning(int *wmax, int *dedup, int *redux)
{
	static int mode = -1;

	if (mode < 0) {
		const char *e = getenv("GPMDB_GPU_HAGG");
		mode = e && !strcmp(e, "old")	    ? 0
		       : e && !strcmp(e, "shuffle") ? 1
						    : 2;
	}
	*wmax = mode ? 8 : 1;
	*dedup = mode >= 1;
	*redux = mode >= 2;
}

/* The hash path: GPMDB_OK with g filled, OPS_H_RETRY (the sort path
 * must run), or an error. */
int ops_hash_agg(const gpu_col *key, const gpu_sortcol *mkeys, int nmk,
		 uint32_t n, const gpu_agg *aggs, int naggs,
		 const gpu_term *terms, int nterms, gpu_groups *g, char *err,
		 size_t errlen)
{
	cudaStream_t s = gpu_stream();
	void (*kern)(ops_hargs) = mkeys ? ops_hagg<true> : ops_hagg<false>;
	ops_hargs h;
	int dev = 0, optin = 0, sms = 0, per_sm = 0;
	char *mem = NULL, *host = NULL;
	int rc = GPMDB_OK;

	if (naggs > OPS_H_MAXAGG)
		return OPS_H_RETRY;
	for (int a = 0; a < naggs; a++)
		if (aggs[a].op == GPU_AGG_MIN_R ||
		    aggs[a].op == GPU_AGG_MAX_R || aggs[a].op > GPU_AGG_MAX_R ||
		    aggs[a].op < 0)
			return OPS_H_RETRY;
	memset(&h, 0, sizeof(h));
	GPU_TRY(cudaGetDevice(&dev));
	GPU_TRY(cudaDeviceGetAttribute(
	    &optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
	GPU_TRY(
	    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
	size_t per_group = 4 + (size_t)naggs * 24;
	size_t budget = optin > 2048 ? (size_t)optin - 1024 : 0;
	uint32_t gmax = (uint32_t)(budget / per_group);
	if (gmax > 4096)
		gmax = 4096;
	gmax &= ~31u;
	if (gmax < 32)
		return OPS_H_RETRY;
	uint32_t cap = 64;
	while (cap < 2 * gmax)
		cap <<= 1;
	size_t smem = per_group * gmax;
	GPU_TRY(cudaFuncSetAttribute(
	    kern, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
	GPU_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
	    &per_sm, kern, OPS_H_BLOCK, smem));
	if (per_sm < 1)
		return OPS_H_RETRY;
	uint32_t blocks = (uint32_t)sms * (uint32_t)per_sm;
	h.key = key ? *key : gpu_col();
	h.keyed = key != NULL || mkeys != NULL;
	ops_hagg_tuning(&h.wmax, &h.dedup, &h.redux);
	h.mkeys = mkeys;
	h.nmk = nmk;
	h.naggs = naggs;
	for (int a = 0; a < naggs; a++) {
		h.op[a] = aggs[a].op;
		h.arg[a] = aggs[a].arg;
	}
	h.nterms = nterms;
	for (int k = 0; k < nterms; k++)
		h.term[k] = terms[k];
	h.n = n;
	h.chunk = (uint32_t)(((uint64_t)n + blocks - 1) / blocks);
	h.chunk = (h.chunk + OPS_H_BLOCK - 1) / OPS_H_BLOCK * OPS_H_BLOCK;
	blocks = (uint32_t)(((uint64_t)n + h.chunk - 1) / h.chunk);
	h.gmax = gmax;
	h.cap = cap;
	/* one allocation: [hdr 16 | first | gkey | gnull | acc] is downloaded
	 * in one copy; the table after it */
	size_t o_first = 16, o_key = o_first + 4 * (size_t)gmax,
	       o_null = o_key + 8 * (size_t)gmax,
	       o_acc = (o_null + gmax + 15) & ~(size_t)15,
	       o_end = o_acc + 24 * (size_t)naggs * gmax,
	       o_tkey = (o_end + 15) & ~(size_t)15,
	       o_tst = o_tkey + 8 * ((size_t)cap + 1),
	       total = o_tst + 4 * ((size_t)cap + 1);
	if ((rc = gpu_alloc((void **)&mem, total, err, errlen)))
		return rc;
	h.hdr = (uint32_t *)mem;
	h.first = (uint32_t *)(mem + o_first);
	h.gkey = (long long *)(mem + o_key);
	h.gnull = (uint8_t *)(mem + o_null);
	h.acc = (unsigned long long *)(mem + o_acc);
	h.tkey = (unsigned long long *)(mem + o_tkey);
	h.tstate = (uint32_t *)(mem + o_tst);
	uint32_t ng = 0, flags = 0;
	if (!(host = (char *)malloc(o_end))) {
		snprintf(err, errlen, "out of memory");
		rc = GPMDB_NOMEM;
		goto out;
	}
	OPS_TRY(cudaMemsetAsync(mem, 0, 16, s));
	OPS_TRY(cudaMemsetAsync(mem + o_tst, 0, 4 * ((size_t)cap + 1), s));
	ops_hinit<<<(gmax + OPS_BLOCK - 1) / OPS_BLOCK, OPS_BLOCK, 0, s>>>(h);
	OPS_TRY(cudaGetLastError());
	kern<<<blocks, OPS_H_BLOCK, smem, s>>>(h);
	OPS_TRY(cudaGetLastError());
	OPS_TRY(cudaMemcpyAsync(host, mem, o_end, cudaMemcpyDeviceToHost, s));
	OPS_TRY(cudaStreamSynchronize(s));
	memcpy(&ng, host, 4);
	memcpy(&flags, host + 4, 4);
	if (flags || ng > gmax) {
		rc = OPS_H_RETRY;
		goto out;
	}
	g->ngroups = ng;
	g->naggs = naggs;
	if ((rc = ops_host((void **)&g->first, 4 * (size_t)ng + 4, err,
			   errlen)) ||
	    (rc =
		 ops_host((void **)&g->key, 8 * (size_t)ng + 8, err, errlen)) ||
	    (rc = ops_host((void **)&g->key_null, ng + 1, err, errlen)) ||
	    (rc = ops_host((void **)&g->res,
			   sizeof(gpu_agg_res) * (size_t)(naggs ? naggs : 1),
			   err, errlen)))
		goto out;
	memcpy(g->first, host + o_first, 4 * (size_t)ng);
	memcpy(g->key, host + o_key, 8 * (size_t)ng);
	memcpy(g->key_null, host + o_null, ng);
	if (mkeys) {
		/* the key columns are read at the first rows */
		free(g->key);
		free(g->key_null);
		g->key = NULL;
		g->key_null = NULL;
	}
	for (int a = 0; a < naggs && !rc; a++) {
		gpu_agg_res *r = &g->res[a];
		const uint64_t *c = (const uint64_t *)(host + o_acc) +
				    (size_t)(a * 3 + 0) * gmax,
			       *x = c + gmax, *y = c + 2 * (size_t)gmax;
		int op = aggs[a].op;
		if ((rc = ops_host((void **)&r->cnt, 8 * (size_t)ng + 8, err,
				   errlen)))
			break;
		memcpy(r->cnt, c, 8 * (size_t)ng);
		if (op == GPU_AGG_COUNT_STAR || op == GPU_AGG_COUNT ||
		    op == GPU_AGG_SUM_I) {
			if ((rc = ops_host((void **)&r->sum_lo,
					   8 * (size_t)ng + 8, err, errlen)) ||
			    (rc = ops_host((void **)&r->sum_hi,
					   8 * (size_t)ng + 8, err, errlen)))
				break;
			for (uint32_t k = 0; k < ng; k++) {
				/* COUNT: the sort path's sum of the
				 * counted values is the count */
				int64_t v = op == GPU_AGG_SUM_I
						? (int64_t)(x[k] - y[k])
						: (int64_t)c[k];
				r->sum_lo[k] = (uint64_t)v;
				r->sum_hi[k] = v < 0 ? -1 : 0;
			}
		} else if (op == GPU_AGG_SUM_R) {
			if ((rc = ops_host((void **)&r->f64, 8 * (size_t)ng + 8,
					   err, errlen)))
				break;
			memcpy(r->f64, x, 8 * (size_t)ng);
		} else {
			if ((rc = ops_host((void **)&r->i64, 8 * (size_t)ng + 8,
					   err, errlen)))
				break;
			memcpy(r->i64, x, 8 * (size_t)ng);
		}
	}
out:
	gpu_free(mem, NULL, 0);
	free(host);
	if (rc)
		gpu_group_free(g);
	return rc;
}

/* One key the integer paths take (ops_ival widens it). */
bool ops_int_key(const gpu_sortcol *k)
{
	switch (k->col.type) {
	case BC_COL_INT64:
	case BC_COL_DEC:
	case BC_COL_INT32:
	case BC_COL_DATE:
	case BC_COL_BOOL:
	case VEC_NULL:
		return true;
	}
	return false;
}

/* The groups in the order of their first rows (the CPU's hash aggregate
 * meets them so): a radix sort of (first row, group) on the device, then
 * *order on the host.  Why: the engine's qsort_r of 15M groups took about
 * 2 s (TPC-H Q18 at SF10); this takes milliseconds. */
static int ops_first_order(ops_mem *m, const uint32_t *dfirst, uint32_t ng,
			   uint32_t n, uint32_t **order, char *err,
			   size_t errlen)
{
	cudaStream_t s = gpu_stream();
	uint32_t *iota, *ord, *fs;
	void *tmp;
	size_t tb = 0;
	int bits = 1, rc;

	while (bits < 32 && (n - 1) >> bits)
		bits++; /* first rows are below n */
	if ((rc = ops_alloc(m, (void **)&iota, 4 * (size_t)ng, err, errlen)) ||
	    (rc = ops_alloc(m, (void **)&ord, 4 * (size_t)ng, err, errlen)) ||
	    (rc = ops_alloc(m, (void **)&fs, 4 * (size_t)ng, err, errlen)))
		return rc;
	ops_iota<<<ops_grid(ng), OPS_BLOCK, 0, s>>>(iota, ng);
	GPU_TRY(cudaGetLastError());
	GPU_TRY(cub::DeviceRadixSort::SortPairs(NULL, tb, dfirst, fs, iota, ord,
						(int)ng, 0, bits, s));
	if ((rc = ops_alloc(m, &tmp, tb, err, errlen)) ||
	    (rc = ops_host((void **)order, 4 * (size_t)ng, err, errlen)))
		return rc;
	GPU_TRY(cub::DeviceRadixSort::SortPairs(tmp, tb, dfirst, fs, iota, ord,
						(int)ng, 0, bits, s));
	GPU_TRY(cudaMemcpyAsync(*order, ord, 4 * (size_t)ng,
				cudaMemcpyDeviceToHost, s));
	return GPMDB_OK;
}

/* ---- results kept on the device (gpu_group_agg_keep) ----------------- */

__device__ static void ops_put(const gpu_col &o, uint32_t j, long long i,
			       double r)
{
	switch (o.type) {
	case BC_COL_DOUBLE:
		((double *)o.data)[j] = r;
		break;
	case BC_COL_INT32:
	case BC_COL_DATE:
		((int32_t *)o.data)[j] = (int32_t)i;
		break;
	case BC_COL_BOOL:
		((uint8_t *)o.data)[j] = (uint8_t)i;
		break;
	default: /* INT64, DEC */
		((int64_t *)o.data)[j] = i;
	}
}

/* Output row j: the key of the group that comes j-th by first row. */
__global__ void ops_key_at(gpu_col key, const uint32_t *first,
			   const uint32_t *ord, uint32_t ng, gpu_col o)
{
	uint32_t j = blockIdx.x * blockDim.x + threadIdx.x;

	if (j >= ng)
		return;
	uint32_t r = first[ord[j]];
	bool nul = gk_null(key, r);
	o.nulls[j] = nul;
	if (key.type == BC_COL_TEXT) {
		/* still pointing into the key column's text buffer */
		gpu_str v = {0, 0};
		if (!nul)
			v = ((const gpu_str *)key.data)[r];
		((gpu_str *)o.data)[j] = v;
	} else if (key.type == BC_COL_DOUBLE)
		ops_put(o, j, 0, nul ? 0 : ((const double *)key.data)[r]);
	else if (key.type == BC_COL_FLOAT)
		ops_put(o, j, 0, nul ? 0 : ((const float *)key.data)[r]);
	else
		ops_put(o, j, nul ? 0 : ops_ival(key, r), 0);
}

/* A DECIMAL sum as the CPU's AVG and TOTAL take it: divided by ten
 * scale times. */
__device__ static double ops_unscale(double v, int scale)
{
	for (int q = 0; q < scale; q++)
		v /= 10;
	return v;
}

__device__ static void ops_fin_one(const ops_isum &r, const gpu_agg_fin &f,
				   const gpu_col &o, uint32_t j)
{
	double d = (double)r.s;
	bool nul = !r.c && f.fin != GPU_FIN_COUNT && f.fin != GPU_FIN_TOTAL;

	o.nulls[j] = nul;
	if (f.fin == GPU_FIN_COUNT)
		ops_put(o, j, (long long)r.c, 0);
	else if (nul)
		ops_put(o, j, 0, 0);
	else if (f.fin == GPU_FIN_SUM)
		ops_put(o, j, (long long)r.s, d);
	else if (f.fin == GPU_FIN_AVG)
		ops_put(o, j, 0, ops_unscale(d, f.scale) / (double)r.c);
	else /* TOTAL */
		ops_put(o, j, 0, r.c ? ops_unscale(d, f.scale) : 0);
}

__device__ static void ops_fin_one(const ops_rsum &r, const gpu_agg_fin &f,
				   const gpu_col &o, uint32_t j)
{
	bool nul = !r.c && f.fin != GPU_FIN_TOTAL;

	o.nulls[j] = nul;
	if (nul)
		ops_put(o, j, 0, 0);
	else if (f.fin == GPU_FIN_AVG)
		ops_put(o, j, 0, r.s / (double)r.c);
	else
		ops_put(o, j, 0, r.c ? r.s : 0);
}

__device__ static void ops_fin_one(const ops_imm &r, const gpu_agg_fin &f,
				   const gpu_col &o, uint32_t j)
{
	(void)f;
	o.nulls[j] = !r.c;
	ops_put(o, j, r.c ? r.v : 0, 0);
}

__device__ static void ops_fin_one(const ops_rmm &r, const gpu_agg_fin &f,
				   const gpu_col &o, uint32_t j)
{
	(void)f;
	o.nulls[j] = !r.c;
	ops_put(o, j, 0, r.c ? r.v : 0);
}

template <typename V>
__global__ void ops_fin(const V *res, const uint32_t *ord, uint32_t ng,
			gpu_agg_fin f, gpu_col o)
{
	uint32_t j = blockIdx.x * blockDim.x + threadIdx.x;

	if (j < ng)
		ops_fin_one(res[ord[j]], f, o, j);
}

static size_t ops_width(int type)
{
	switch (type) {
	case BC_COL_TEXT: /* gpu_str */
	case BC_COL_DOUBLE:
	case BC_COL_INT64:
	case BC_COL_DEC:
		return 8;
	case BC_COL_INT32:
	case BC_COL_DATE:
		return 4;
	default:
		return 1;
	}
}

/* A result column of ng rows: one allocation, values then NULL bytes. */
static int ops_out_col(gpu_col *o, uint8_t type, uint32_t ng, char *err,
		       size_t errlen)
{
	size_t w = ops_width(type), db = (w * (size_t)ng + 15) & ~(size_t)15;
	void *p;
	int rc;

	memset(o, 0, sizeof(*o));
	if ((rc = gpu_alloc(&p, db + ng + 16, err, errlen)))
		return rc;
	o->data = p;
	o->nulls = (uint8_t *)p + db;
	o->type = type;
	return GPMDB_OK;
}

/* One aggregate over the sorted rows into its result column: build the
 * values, scan by group, take each group's end, finish in first-row
 * order. */
template <typename V, typename Op>
static int ops_keep_one(ops_mem *m, const uint32_t *gid, V *v, uint32_t n,
			uint32_t ng, Op op, const uint32_t *ord,
			const gpu_agg_fin &f, gpu_col *o, int *ovf, char *err,
			size_t errlen)
{
	cudaStream_t s = gpu_stream();
	V *res;
	int rc;

	if ((rc = ops_agg_res(m, gid, v, n, ng, op, &res, ovf, err, errlen)) ||
	    (rc = ops_out_col(o, f.type, ng, err, errlen)))
		return rc;
	ops_fin<V><<<ops_grid(ng), OPS_BLOCK, 0, s>>>(res, ord, ng, f, *o);
	GPU_TRY(cudaGetLastError());
	return GPMDB_OK;
}

/* The sort path's groups (gid over the sorted positions, idx: position
 * -> row, dfirst: each group's first row) finished on the device into
 * out[0..nkeys + naggs) (gpu_group_agg_keep). */
static int ops_keep(ops_mem *m, const gpu_sortcol *keys, int nkeys,
		    const uint32_t *idx, const uint32_t *gid, uint32_t n,
		    uint32_t ng, const uint32_t *dfirst, const gpu_agg *aggs,
		    int naggs, const gpu_agg_fin *fin, gpu_groups *g,
		    gpu_col *out, char *err, size_t errlen)
{
	cudaStream_t s = gpu_stream();
	uint32_t *iota, *ord, *fs;
	void *tmp;
	size_t tb = 0;
	int bits = 1, rc, k;

	while (bits < 32 && (n - 1) >> bits)
		bits++;
	if ((rc = ops_alloc(m, (void **)&iota, 4 * (size_t)ng + 4, err,
			    errlen)) ||
	    (rc = ops_alloc(m, (void **)&ord, 4 * (size_t)ng + 4, err,
			    errlen)) ||
	    (rc = ops_alloc(m, (void **)&fs, 4 * (size_t)ng + 4, err, errlen)))
		return rc;
	ops_iota<<<ops_grid(ng), OPS_BLOCK, 0, s>>>(iota, ng);
	GPU_TRY(cudaGetLastError());
	GPU_TRY(cub::DeviceRadixSort::SortPairs(NULL, tb, dfirst, fs, iota, ord,
						(int)ng, 0, bits, s));
	if ((rc = ops_alloc(m, &tmp, tb, err, errlen)))
		return rc;
	GPU_TRY(cub::DeviceRadixSort::SortPairs(tmp, tb, dfirst, fs, iota, ord,
						(int)ng, 0, bits, s));
	g->ngroups = ng;
	g->naggs = naggs;
	if ((rc = ops_host((void **)&g->res,
			   sizeof(gpu_agg_res) * (size_t)(naggs ? naggs : 1),
			   err, errlen)))
		return rc;
	for (k = 0; k < nkeys; k++) {
		const gpu_col *kc = &keys[k].col;
		uint8_t t = kc->type == BC_COL_FLOAT ? (uint8_t)BC_COL_DOUBLE
						     : kc->type;
		if (kc->type == VEC_NULL)
			t = BC_COL_INT64; /* every value NULL */
		if ((rc = ops_out_col(&out[k], t, ng, err, errlen)))
			return rc;
		out[k].prec = kc->prec;
		out[k].scale = kc->scale;
		ops_key_at<<<ops_grid(ng), OPS_BLOCK, 0, s>>>(*kc, dfirst, ord,
							      ng, out[k]);
		GPU_TRY(cudaGetLastError());
	}
	for (int a = 0; a < naggs && !rc; a++) {
		const gpu_agg *ag = &aggs[a];
		gpu_col *o = &out[nkeys + a];
		int mark = m->n;
		switch (ag->op) {
		case GPU_AGG_COUNT_STAR:
		case GPU_AGG_COUNT:
		case GPU_AGG_SUM_I: {
			ops_isum *v;
			if ((rc = ops_alloc(m, (void **)&v,
					    sizeof(*v) * (size_t)n, err,
					    errlen)))
				break;
			ops_mk_isum<<<ops_grid(n), OPS_BLOCK, 0, s>>>(
			    ag->arg, idx, n, ag->op == GPU_AGG_COUNT_STAR, v);
			rc = ops_keep_one(
			    m, gid, v, n, ng, ops_isum_op(), ord, fin[a], o,
			    ag->op == GPU_AGG_SUM_I ? &g->res[a].overflow
						    : NULL,
			    err, errlen);
			break;
		}
		case GPU_AGG_SUM_R: {
			ops_rsum *v;
			if ((rc = ops_alloc(m, (void **)&v,
					    sizeof(*v) * (size_t)n, err,
					    errlen)))
				break;
			ops_mk_rsum<<<ops_grid(n), OPS_BLOCK, 0, s>>>(
			    ag->arg, idx, n, v);
			rc = ops_keep_one(m, gid, v, n, ng, ops_rsum_op(), ord,
					  fin[a], o, NULL, err, errlen);
			break;
		}
		case GPU_AGG_MIN_I:
		case GPU_AGG_MAX_I: {
			ops_imm *v;
			if ((rc = ops_alloc(m, (void **)&v,
					    sizeof(*v) * (size_t)n, err,
					    errlen)))
				break;
			ops_mk_imm<<<ops_grid(n), OPS_BLOCK, 0, s>>>(ag->arg,
								     idx, n, v);
			if (ag->op == GPU_AGG_MIN_I)
				rc = ops_keep_one(m, gid, v, n, ng,
						  ops_mm_op<ops_imm, false>(),
						  ord, fin[a], o, NULL, err,
						  errlen);
			else
				rc = ops_keep_one(m, gid, v, n, ng,
						  ops_mm_op<ops_imm, true>(),
						  ord, fin[a], o, NULL, err,
						  errlen);
			break;
		}
		case GPU_AGG_MIN_R:
		case GPU_AGG_MAX_R: {
			ops_rmm *v;
			if ((rc = ops_alloc(m, (void **)&v,
					    sizeof(*v) * (size_t)n, err,
					    errlen)))
				break;
			ops_mk_rmm<<<ops_grid(n), OPS_BLOCK, 0, s>>>(ag->arg,
								     idx, n, v);
			if (ag->op == GPU_AGG_MIN_R)
				rc = ops_keep_one(m, gid, v, n, ng,
						  ops_mm_op<ops_rmm, false>(),
						  ord, fin[a], o, NULL, err,
						  errlen);
			else
				rc = ops_keep_one(m, gid, v, n, ng,
						  ops_mm_op<ops_rmm, true>(),
						  ord, fin[a], o, NULL, err,
						  errlen);
			break;
		}
		default:
			snprintf(err, errlen, "unknown GPU aggregate %d",
				 ag->op);
			rc = GPMDB_INTERNAL;
		}
		/* this aggregate's device buffers are done with once the
		 * finishing kernel ran (stream order) */
		while (!rc && m->n > mark)
			gpu_free(m->p[--m->n], NULL, 0);
	}
	if (!rc)
		GPU_TRY(cudaStreamSynchronize(s));
	return rc;
}

/* gpu_group_agg, or with out (gpu_group_agg_keep) the sort path's
 * results finished on the device. */
static int ops_group_agg(const gpu_sortcol *keys, int nkeys, uint32_t n,
			 const gpu_agg *aggs, int naggs, const gpu_agg_fin *fin,
			 gpu_groups *g, gpu_col *out, int *on_dev, char *err,
			 size_t errlen)
{
	cudaStream_t s = gpu_stream();
	ops_mem m = {{0}, 0};
	uint32_t *idx = NULL, *head, *gid, *dfirst, ng = 0;
	uint64_t *skey = NULL;
	uint8_t *snull = NULL, *dgnull;
	int64_t *dgkey;
	const gpu_col *key = NULL;
	gpu_sortcol *dk = NULL;
	bool multi = false;
	void *tmp;
	size_t tb = 0;
	int rc;

	memset(g, 0, sizeof(*g));
	if ((rc = gpu_init(err, errlen)))
		return rc;
	if (!n)
		return GPMDB_OK;
	if (nkeys < 0 || nkeys > 64) {
		snprintf(err, errlen,
			 "%d GROUP BY keys (at most 64 on the GPU)", nkeys);
		return GPMDB_UNSUPPORTED;
	}
	if (nkeys == 1 && ops_int_key(&keys[0]))
		key = &keys[0].col;
	else if (nkeys) {
		/* several keys, TEXT, DOUBLE: hashed rows compared exactly
		 * (the hash path), or the multi-key sort */
		multi = true;
		if ((rc = ops_alloc(&m, (void **)&dk,
				    sizeof(gpu_sortcol) * (size_t)nkeys, err,
				    errlen)))
			goto out;
		OPS_TRY(cudaMemcpyAsync(dk, keys, sizeof(gpu_sortcol) * nkeys,
					cudaMemcpyHostToDevice, s));
	}
	/* few groups: one pass with a hash table; else (or when a sum needs
	 * the row-order check) the sort path below */
	rc = ops_hash_agg(key, dk, nkeys, n, aggs, naggs, NULL, 0, g, err,
			  errlen);
	if (rc != OPS_H_RETRY)
		goto out;
	rc = GPMDB_OK;
	if (key &&
	    (rc = ops_sort_keys(&m, key, n, &idx, &skey, &snull, err, errlen)))
		goto out;
	if ((rc = ops_alloc(&m, (void **)&head, 4 * (size_t)n, err, errlen)) ||
	    (rc = ops_alloc(&m, (void **)&gid, 4 * (size_t)n, err, errlen)))
		goto out;
	if (multi) {
		/* idx: rows with equal keys together, in row order */
		if ((rc = ro_key_groups(keys, nkeys, n, &idx, head, err,
					errlen)))
			goto out;
		if (m.n == OPS_MAXMEM) {
			gpu_free(idx, NULL, 0);
			snprintf(err, errlen, "gpu ops: too many buffers");
			rc = GPMDB_INTERNAL;
			goto out;
		}
		m.p[m.n++] = idx;
	} else if (key) {
		ops_heads<<<ops_grid(n), OPS_BLOCK, 0, s>>>(skey, snull, n,
							    head);
	} else {
		OPS_TRY(cudaMemsetAsync(head, 0, 4 * (size_t)n, s));
		OPS_TRY(cudaMemsetAsync(head, 1, 1, s)); /* head[0] = 1 */
	}
	OPS_TRY(cudaGetLastError());
	OPS_TRY(cub::DeviceScan::InclusiveSum(NULL, tb, head, gid, (int)n, s));
	if ((rc = ops_alloc(&m, &tmp, tb, err, errlen)))
		goto out;
	OPS_TRY(cub::DeviceScan::InclusiveSum(tmp, tb, head, gid, (int)n, s));
	OPS_TRY(
	    cudaMemcpyAsync(&ng, gid + n - 1, 4, cudaMemcpyDeviceToHost, s));
	OPS_TRY(cudaStreamSynchronize(s));
	if ((rc = ops_alloc(&m, (void **)&dfirst, 4 * (size_t)ng, err,
			    errlen)) ||
	    (rc =
		 ops_alloc(&m, (void **)&dgkey, 8 * (size_t)ng, err, errlen)) ||
	    (rc = ops_alloc(&m, (void **)&dgnull, ng, err, errlen)))
		goto out;
	ops_groups<<<ops_grid(n), OPS_BLOCK, 0, s>>>(
	    gid, head, idx, skey, snull, n, dfirst, dgkey, dgnull);
	OPS_TRY(cudaGetLastError());
	if (out) {
		rc = ops_keep(&m, keys, nkeys, idx, gid, n, ng, dfirst, aggs,
			      naggs, fin, g, out, err, errlen);
		if (!rc)
			*on_dev = 1;
		goto out;
	}
	g->ngroups = ng;
	g->naggs = naggs;
	if ((rc = ops_host((void **)&g->first, 4 * (size_t)ng, err, errlen)) ||
	    (!multi &&
	     (rc = ops_host((void **)&g->key, 8 * (size_t)ng, err, errlen))) ||
	    (!multi &&
	     (rc = ops_host((void **)&g->key_null, ng, err, errlen))) ||
	    (rc = ops_host((void **)&g->res,
			   sizeof(gpu_agg_res) * (size_t)(naggs ? naggs : 1),
			   err, errlen)))
		goto out;
	OPS_TRY(cudaMemcpyAsync(g->first, dfirst, 4 * (size_t)ng,
				cudaMemcpyDeviceToHost, s));
	if (ng > 1 &&
	    (rc = ops_first_order(&m, dfirst, ng, n, &g->order, err, errlen)))
		goto out;
	if (!multi) {
		/* multi: the engine reads the key columns at the first rows */
		OPS_TRY(cudaMemcpyAsync(g->key, dgkey, 8 * (size_t)ng,
					cudaMemcpyDeviceToHost, s));
		OPS_TRY(cudaMemcpyAsync(g->key_null, dgnull, ng,
					cudaMemcpyDeviceToHost, s));
	}
	for (int a = 0; a < naggs && !rc; a++) {
		const gpu_agg *ag = &aggs[a];
		gpu_agg_res *r = &g->res[a];
		int mark = m.n;
		if ((rc = ops_host((void **)&r->cnt, 8 * (size_t)ng, err,
				   errlen)))
			break;
		switch (ag->op) {
		case GPU_AGG_COUNT_STAR:
		case GPU_AGG_COUNT:
		case GPU_AGG_SUM_I: {
			ops_isum *v, *h;
			if ((rc = ops_alloc(&m, (void **)&v,
					    sizeof(*v) * (size_t)n, err,
					    errlen)))
				break;
			ops_mk_isum<<<ops_grid(n), OPS_BLOCK, 0, s>>>(
			    ag->arg, idx, n, ag->op == GPU_AGG_COUNT_STAR, v);
			if ((rc = ops_host((void **)&h, sizeof(*h) * (size_t)ng,
					   err, errlen)))
				break;
			rc = ops_agg_one(&m, gid, v, n, ng, ops_isum_op(), h,
					 ag->op == GPU_AGG_SUM_I ? &r->overflow
								 : NULL,
					 err, errlen);
			if (!rc &&
			    (rc = ops_host((void **)&r->sum_lo, 8 * (size_t)ng,
					   err, errlen)) == 0 &&
			    (rc = ops_host((void **)&r->sum_hi, 8 * (size_t)ng,
					   err, errlen)) == 0)
				for (uint32_t k = 0; k < ng; k++) {
					r->cnt[k] = h[k].c;
					r->sum_lo[k] = (uint64_t)h[k].s;
					r->sum_hi[k] = (int64_t)(h[k].s >> 64);
				}
			free(h);
			break;
		}
		case GPU_AGG_SUM_R: {
			ops_rsum *v, *h;
			if ((rc = ops_alloc(&m, (void **)&v,
					    sizeof(*v) * (size_t)n, err,
					    errlen)))
				break;
			ops_mk_rsum<<<ops_grid(n), OPS_BLOCK, 0, s>>>(
			    ag->arg, idx, n, v);
			if ((rc = ops_host((void **)&h, sizeof(*h) * (size_t)ng,
					   err, errlen)))
				break;
			rc = ops_agg_one(&m, gid, v, n, ng, ops_rsum_op(), h,
					 NULL, err, errlen);
			if (!rc &&
			    !(rc = ops_host((void **)&r->f64, 8 * (size_t)ng,
					    err, errlen)))
				for (uint32_t k = 0; k < ng; k++) {
					r->cnt[k] = h[k].c;
					r->f64[k] = h[k].s;
				}
			free(h);
			break;
		}
		case GPU_AGG_MIN_I:
		case GPU_AGG_MAX_I: {
			ops_imm *v, *h;
			if ((rc = ops_alloc(&m, (void **)&v,
					    sizeof(*v) * (size_t)n, err,
					    errlen)))
				break;
			ops_mk_imm<<<ops_grid(n), OPS_BLOCK, 0, s>>>(ag->arg,
								     idx, n, v);
			if ((rc = ops_host((void **)&h, sizeof(*h) * (size_t)ng,
					   err, errlen)))
				break;
			if (ag->op == GPU_AGG_MIN_I)
				rc = ops_agg_one(&m, gid, v, n, ng,
						 ops_mm_op<ops_imm, false>(), h,
						 NULL, err, errlen);
			else
				rc = ops_agg_one(&m, gid, v, n, ng,
						 ops_mm_op<ops_imm, true>(), h,
						 NULL, err, errlen);
			if (!rc &&
			    !(rc = ops_host((void **)&r->i64, 8 * (size_t)ng,
					    err, errlen)))
				for (uint32_t k = 0; k < ng; k++) {
					r->cnt[k] = h[k].c;
					r->i64[k] = h[k].v;
				}
			free(h);
			break;
		}
		case GPU_AGG_MIN_R:
		case GPU_AGG_MAX_R: {
			ops_rmm *v, *h;
			if ((rc = ops_alloc(&m, (void **)&v,
					    sizeof(*v) * (size_t)n, err,
					    errlen)))
				break;
			ops_mk_rmm<<<ops_grid(n), OPS_BLOCK, 0, s>>>(ag->arg,
								     idx, n, v);
			if ((rc = ops_host((void **)&h, sizeof(*h) * (size_t)ng,
					   err, errlen)))
				break;
			if (ag->op == GPU_AGG_MIN_R)
				rc = ops_agg_one(&m, gid, v, n, ng,
						 ops_mm_op<ops_rmm, false>(), h,
						 NULL, err, errlen);
			else
				rc = ops_agg_one(&m, gid, v, n, ng,
						 ops_mm_op<ops_rmm, true>(), h,
						 NULL, err, errlen);
			if (!rc &&
			    !(rc = ops_host((void **)&r->f64, 8 * (size_t)ng,
					    err, errlen)))
				for (uint32_t k = 0; k < ng; k++) {
					r->cnt[k] = h[k].c;
					r->f64[k] = h[k].v;
				}
			free(h);
			break;
		}
		default:
			snprintf(err, errlen, "unknown GPU aggregate %d",
				 ag->op);
			rc = GPMDB_INTERNAL;
		}
		/* this aggregate's device buffers are done with */
		while (!rc && m.n > mark)
			gpu_free(m.p[--m.n], NULL, 0);
	}
	if (!rc) {
		cudaError_t e = cudaStreamSynchronize(s);
		if (e != cudaSuccess)
			rc = gpu_cuda_fail(e, "cudaStreamSynchronize", err,
					   errlen);
	}
out:
	ops_release(&m);
	if (rc) {
		gpu_group_free(g);
		for (int k = 0; out && k < nkeys + naggs; k++) {
			gpu_free(out[k].data, NULL, 0);
			memset(&out[k], 0, sizeof(out[k]));
		}
	}
	return rc;
}

extern "C" int gpu_group_agg(const gpu_sortcol *keys, int nkeys, uint32_t n,
			     const gpu_agg *aggs, int naggs, gpu_groups *g,
			     char *err, size_t errlen)
{
	return ops_group_agg(keys, nkeys, n, aggs, naggs, NULL, g, NULL, NULL,
			     err, errlen);
}

extern "C" int gpu_group_agg_keep(const gpu_sortcol *keys, int nkeys,
				  uint32_t n, const gpu_agg *aggs, int naggs,
				  const gpu_agg_fin *fin, gpu_groups *g,
				  gpu_col *out, int *on_dev, char *err,
				  size_t errlen)
{
	*on_dev = 0;
	memset(out, 0, sizeof(gpu_col) * (size_t)(nkeys + naggs));
	return ops_group_agg(keys, nkeys, n, aggs, naggs, fin, g, out, on_dev,
			     err, errlen);
}
