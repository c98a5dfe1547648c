/*
 * ops.cu - the GPU operators behind engine/exec_gpu.c (gpu.h): selection
 * compaction (CUB DeviceSelect), batched downloads, and grouped or scalar
 * aggregation (CUB radix sort of the keys, segmented scans).
 *
 * Aggregates are computed with CUB DeviceScan::InclusiveScanByKey over the
 * rows sorted by group: a scan visits the rows of a group in row order
 * (the radix sort is stable), so order-sensitive results match the CPU's
 * sequential loop: the first of equal MIN/MAX values, and the integer
 * overflow check, which the CPU makes on every partial sum (a sum that
 * overflows and comes back is still an error): every prefix of the exact
 * 128-bit running sum is checked against the int64 range.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cub/cub.cuh>

#include "gpmdb.h"

#include "gpu_internal.h"

#define OPS_BLOCK 256
#include "../engine/vector.h" /* VEC_NULL */

struct ops_eq {
	__device__ bool operator()(uint32_t a, uint32_t b) const
	{
		return a == b;
	}
};

static unsigned ops_grid(uint64_t n)
{
	return (unsigned)((n + OPS_BLOCK - 1) / OPS_BLOCK);
}

/* Device allocations of one operator, freed together. */
typedef struct ops_mem {
	void *p[32];
	int n;
} ops_mem;

static int ops_alloc(ops_mem *m, void **out, size_t bytes, char *err,
		     size_t errlen)
{
	int rc;

	*out = NULL;
	if (m->n == 32) {
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
		rc = gpu_cuda_fail(cudaErrorLaunchFailure, "ops_flags<<<>>>", err,
				   errlen);
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

template <typename T>
__global__ void ops_gather(const T *src, const uint32_t *idx, uint32_t n,
			   T *dst)
{
	uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		dst[i] = src[idx[i]];
}

/* head[i] = 1 where a new group starts (sorted by NULL flag, then key). */
__global__ void ops_heads(const uint64_t *key, const uint8_t *knull,
			  uint32_t n, uint32_t *head)
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

	if (i < n && (v[i].s > (__int128)INT64_MAX ||
		      v[i].s < (__int128)INT64_MIN))
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
	GPU_TRY(cub::DeviceScan::InclusiveScanByKey(
	    NULL, tb, gid, in, *out, op, (int)n, ops_eq(), s));
	if ((rc = ops_alloc(m, &tmp, tb, err, errlen)))
		return rc;
	GPU_TRY(cub::DeviceScan::InclusiveScanByKey(
	    tmp, tb, gid, in, *out, op, (int)n, ops_eq(), s));
	return GPMDB_OK;
}

/* One aggregate: build, scan, take the groups' ends, download. */
template <typename V, typename Op>
static int ops_agg_one(ops_mem *m, const uint32_t *gid, V *vals, uint32_t n,
		       uint32_t ng, Op op, V *host, int *ovf, char *err,
		       size_t errlen)
{
	cudaStream_t s = gpu_stream();
	V *sc, *res;
	int rc;

	if ((rc = ops_scan(m, gid, vals, n, op, &sc, err, errlen)) ||
	    (rc = ops_alloc(m, (void **)&res, sizeof(V) * (size_t)ng, err,
			    errlen)))
		return rc;
	ops_ends<V><<<ops_grid(n), OPS_BLOCK, 0, s>>>(sc, gid, n, res);
	GPU_TRY(cudaGetLastError());
	if (ovf) {
		int *d;
		if ((rc = ops_alloc(m, (void **)&d, sizeof(int), err, errlen)))
			return rc;
		GPU_TRY(cudaMemsetAsync(d, 0, sizeof(int), s));
		ops_ovf<<<ops_grid(n), OPS_BLOCK, 0, s>>>(
		    (const ops_isum *)sc, n, d);
		GPU_TRY(cudaGetLastError());
		GPU_TRY(
		    cudaMemcpyAsync(ovf, d, sizeof(int), cudaMemcpyDeviceToHost, s));
	}
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
	uint64_t *k0, *k1;
	uint8_t *nf, *nf1, *nf2;
	uint32_t *i0, *i1, *i2;
	void *tmp;
	size_t tb = 0, tb2 = 0;
	int rc;

	if ((rc = ops_alloc(m, (void **)&k0, 8 * (size_t)n, err, errlen)) ||
	    (rc = ops_alloc(m, (void **)&k1, 8 * (size_t)n, err, errlen)) ||
	    (rc = ops_alloc(m, (void **)&nf, n, err, errlen)) ||
	    (rc = ops_alloc(m, (void **)&nf1, n, err, errlen)) ||
	    (rc = ops_alloc(m, (void **)&nf2, n, err, errlen)) ||
	    (rc = ops_alloc(m, (void **)&i0, 4 * (size_t)n, err, errlen)) ||
	    (rc = ops_alloc(m, (void **)&i1, 4 * (size_t)n, err, errlen)) ||
	    (rc = ops_alloc(m, (void **)&i2, 4 * (size_t)n, err, errlen)))
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
	GPU_TRY(cub::DeviceRadixSort::SortPairs(tmp, tb, k0, k1, i0, i1,
						(int)n, 0, 64, s));
	if (key->nulls) {
		ops_gather<uint8_t><<<ops_grid(n), OPS_BLOCK, 0, s>>>(nf, i1, n,
								       nf1);
		GPU_TRY(cudaGetLastError());
		GPU_TRY(cub::DeviceRadixSort::SortPairs(tmp, tb2, nf1, nf2, i1,
							i2, (int)n, 0, 1, s));
		ops_gather<uint64_t><<<ops_grid(n), OPS_BLOCK, 0, s>>>(k0, i2,
									n, k1);
		GPU_TRY(cudaGetLastError());
		*idx_out = i2;
		*null_out = nf2;
	} else {
		GPU_TRY(cudaMemsetAsync(nf1, 0, n, s));
		*idx_out = i1;
		*null_out = nf1;
	}
	*key_out = k1;
	return GPMDB_OK;
}

static int ops_host(void **p, size_t bytes, char *err, size_t errlen)
{
	*p = calloc(bytes ? bytes : 1, 1);
	if (!*p) {
		snprintf(err, errlen, "out of memory");
		return GPMDB_NOMEM;
	}
	return GPMDB_OK;
}

/* GPU_TRY for gpu_group_agg: frees what it holds on the way out. */
#define OPS_TRY(call)                                                          \
	do {                                                                   \
		cudaError_t e_ = (call);                                       \
		if (e_ != cudaSuccess) {                                       \
			rc = gpu_cuda_fail(e_, #call, err, errlen);            \
			goto out;                                              \
		}                                                              \
	} while (0)

extern "C" int gpu_group_agg(const gpu_col *key, uint32_t n,
			     const gpu_agg *aggs, int naggs, gpu_groups *g,
			     char *err, size_t errlen)
{
	cudaStream_t s = gpu_stream();
	ops_mem m = {{0}, 0};
	uint32_t *idx = NULL, *head, *gid, *dfirst, ng = 0;
	uint64_t *skey = NULL;
	uint8_t *snull = NULL, *dgnull;
	int64_t *dgkey;
	void *tmp;
	size_t tb = 0;
	int rc;

	memset(g, 0, sizeof(*g));
	if ((rc = gpu_init(err, errlen)))
		return rc;
	if (!n)
		return GPMDB_OK;
	if (key && (rc = ops_sort_keys(&m, key, n, &idx, &skey, &snull, err,
				       errlen)))
		goto out;
	if ((rc = ops_alloc(&m, (void **)&head, 4 * (size_t)n, err, errlen)) ||
	    (rc = ops_alloc(&m, (void **)&gid, 4 * (size_t)n, err, errlen)))
		goto out;
	if (key) {
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
	OPS_TRY(cudaMemcpyAsync(&ng, gid + n - 1, 4, cudaMemcpyDeviceToHost, s));
	OPS_TRY(cudaStreamSynchronize(s));
	if ((rc = ops_alloc(&m, (void **)&dfirst, 4 * (size_t)ng, err,
			    errlen)) ||
	    (rc = ops_alloc(&m, (void **)&dgkey, 8 * (size_t)ng, err,
			    errlen)) ||
	    (rc = ops_alloc(&m, (void **)&dgnull, ng, err, errlen)))
		goto out;
	ops_groups<<<ops_grid(n), OPS_BLOCK, 0, s>>>(gid, head, idx, skey, snull,
						     n, dfirst, dgkey, dgnull);
	OPS_TRY(cudaGetLastError());
	g->ngroups = ng;
	g->naggs = naggs;
	if ((rc = ops_host((void **)&g->first, 4 * (size_t)ng, err, errlen)) ||
	    (rc = ops_host((void **)&g->key, 8 * (size_t)ng, err, errlen)) ||
	    (rc = ops_host((void **)&g->key_null, ng, err, errlen)) ||
	    (rc = ops_host((void **)&g->res, sizeof(gpu_agg_res) *
						 (size_t)(naggs ? naggs : 1),
			   err, errlen)))
		goto out;
	OPS_TRY(cudaMemcpyAsync(g->first, dfirst, 4 * (size_t)ng,
				cudaMemcpyDeviceToHost, s));
	OPS_TRY(cudaMemcpyAsync(g->key, dgkey, 8 * (size_t)ng,
				cudaMemcpyDeviceToHost, s));
	OPS_TRY(cudaMemcpyAsync(g->key_null, dgnull, ng, cudaMemcpyDeviceToHost,
				s));
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
			if (!rc && (rc = ops_host((void **)&r->sum_lo,
						  8 * (size_t)ng, err, errlen)) ==
				       0 &&
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
			ops_mk_rsum<<<ops_grid(n), OPS_BLOCK, 0, s>>>(ag->arg,
								      idx, n, v);
			if ((rc = ops_host((void **)&h, sizeof(*h) * (size_t)ng,
					   err, errlen)))
				break;
			rc = ops_agg_one(&m, gid, v, n, ng, ops_rsum_op(), h,
					 NULL, err, errlen);
			if (!rc && !(rc = ops_host((void **)&r->f64,
						   8 * (size_t)ng, err, errlen)))
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
			if (!rc && !(rc = ops_host((void **)&r->i64,
						   8 * (size_t)ng, err, errlen)))
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
			if (!rc && !(rc = ops_host((void **)&r->f64,
						   8 * (size_t)ng, err, errlen)))
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
	if (rc)
		gpu_group_free(g);
	return rc;
}

__global__ void ops_rebase(gpu_str *v, uint64_t n, uint32_t base)
{
	uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		v[i].off += base;
}

extern "C" int gpu_str_rebase(gpu_str *v, uint64_t n, uint32_t base,
			      char *err, size_t errlen)
{
	int rc = gpu_init(err, errlen);

	if (rc || !n)
		return rc;
	ops_rebase<<<ops_grid(n), OPS_BLOCK, 0, gpu_stream()>>>(v, n, base);
	GPU_TRY(cudaGetLastError());
	return GPMDB_OK;
}

extern "C" int gpu_copy(void *dst, const void *src, size_t n, char *err,
			size_t errlen)
{
	int rc = gpu_init(err, errlen);

	if (rc || !n)
		return rc;
	GPU_TRY(cudaMemcpyAsync(dst, src, n, cudaMemcpyDeviceToDevice,
				gpu_stream()));
	return GPMDB_OK;
}
