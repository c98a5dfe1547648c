/*
 * ops_fused.cu - the fused scan-filter-aggregate (gpu_fused_agg) and small
 * device helpers (gpu_str_rebase, gpu_gather, gpu_copy,
 * gpu_row_numbers); the rest of the operators are ops.cu's, the parts
 * both use ops_int.cuh's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cub/cub.cuh>

#include "gpmdb.h"

#include "gpu_internal.h"
#include "ops_int.cuh"

#include "../engine/vector.h" /* VEC_NULL */

/* ---- fused scan-filter-aggregate ----------------------------------------
 *
 * Why: the general path runs the filter's program over every row (its
 * BOOL output written), compacts the passing row numbers (CUB select:
 * flags, row ids and the selection written and read again), runs each
 * argument's program over the selection (a copy of its values), then
 * aggregates: at least two passes over the data, four synchronisations.
 * Here the filter's terms are evaluated inside the aggregation kernel and
 * each byte of the columns is read once.  No keys: every thread keeps
 * its own accumulators over a grid-stride range of rows (coalesced: one
 * row per thread per step), a CUB BlockReduce per aggregate leaves one
 * partial per block, and a one-block kernel folds the partials: no
 * atomics, and REAL sums are added in the same order on every run of the
 * same grid.  Exactness as the hash path: integer sums keep their
 * positive part and the magnitude of their negative part, saturating;
 * within INT64_MAX and 2^63 no partial sum in any order (the CPU's row
 * order included) leaves int64, else the caller runs the general path
 * (declined), whose scan checks every prefix.  MIN_R/MAX_R keep the row
 * of their value, so ties (-0.0 and 0.0) go to the first row, as on the
 * CPU.  With keys, ops_hash_agg runs with the terms. */

#define OPS_F_BLOCK  256
#define OPS_F_MAXAGG 8 /* plus the hidden count of passing rows */

typedef struct ops_facc {
	unsigned long long c; /* values (COUNT_STAR: rows) */
	unsigned long long x; /* SUM_I positive part, SUM_R / MIN / MAX */
	unsigned long long y; /* SUM_I magnitude of the negative part */
	uint32_t row;	      /* MIN_R/MAX_R: the value's row */
	uint32_t pad;
} ops_facc;

typedef struct ops_fargs {
	uint32_t n;
	int na, nterms;
	int op[OPS_F_MAXAGG + 1];
	gpu_col arg[OPS_F_MAXAGG + 1];
	gpu_term term[GPU_FUSE_MAXTERMS];
	ops_facc *part; /* gridDim.x * na partials */
} ops_fargs;

typedef struct ops_fops {
	int na;
	int op[OPS_F_MAXAGG + 1];
} ops_fops;

__device__ static ops_facc ops_finit(int op)
{
	ops_facc a;

	a.c = 0;
	a.x = op == GPU_AGG_MIN_I   ? (unsigned long long)INT64_MAX
	      : op == GPU_AGG_MAX_I ? (unsigned long long)INT64_MIN
				    : 0;
	a.y = 0;
	a.row = UINT32_MAX;
	a.pad = 0;
	return a;
}

/* Row i's contribution (it passed the terms). */
__device__ static void ops_fstep(int op, const gpu_col &c, uint32_t i,
				 ops_facc *s)
{
	long long v;

	if (op == GPU_AGG_COUNT_STAR) {
		s->c++;
		return;
	}
	if (ops_tload(c, i, &v))
		return;
	s->c++;
	switch (op) {
	case GPU_AGG_SUM_I:
		if (v >= 0)
			s->x = ops_sat_add(s->x, (uint64_t)v, OPS_LIM_POS + 1);
		else
			s->y = ops_sat_add(s->y, (uint64_t)(-(v + 1)) + 1,
					   OPS_LIM_NEG + 1);
		break;
	case GPU_AGG_SUM_R:
		s->x = (unsigned long long)__double_as_longlong(
		    __longlong_as_double((long long)s->x) +
		    __longlong_as_double(v));
		break;
	case GPU_AGG_MIN_I:
		if (v < (long long)s->x)
			s->x = (unsigned long long)v;
		break;
	case GPU_AGG_MAX_I:
		if (v > (long long)s->x)
			s->x = (unsigned long long)v;
		break;
	case GPU_AGG_MIN_R:
	case GPU_AGG_MAX_R: {
		/* rows come in ascending order: strict comparison keeps the
		 * first of equal values */
		double d = __longlong_as_double(v),
		       cur = __longlong_as_double((long long)s->x);
		if (s->c == 1 || (op == GPU_AGG_MIN_R ? d < cur : d > cur)) {
			s->x = (unsigned long long)v;
			s->row = i;
		}
		break;
	}
	}
}

/* Combines two accumulators of one aggregate (associative and
 * commutative, so the reduction's shape does not matter but for the
 * rounding of REAL sums). */
struct ops_fred {
	int op;
	__device__ ops_fred(int o) : op(o)
	{
	}
	__device__ ops_facc operator()(const ops_facc &a,
				       const ops_facc &b) const
	{
		ops_facc r = a;

		r.c = a.c + b.c;
		switch (op) {
		case GPU_AGG_SUM_I:
			r.x = ops_sat_add(a.x, b.x, OPS_LIM_POS + 1);
			r.y = ops_sat_add(a.y, b.y, OPS_LIM_NEG + 1);
			break;
		case GPU_AGG_SUM_R:
			r.x = (unsigned long long)__double_as_longlong(
			    __longlong_as_double((long long)a.x) +
			    __longlong_as_double((long long)b.x));
			break;
		case GPU_AGG_MIN_I:
			r.x = (long long)b.x < (long long)a.x ? b.x : a.x;
			break;
		case GPU_AGG_MAX_I:
			r.x = (long long)b.x > (long long)a.x ? b.x : a.x;
			break;
		case GPU_AGG_MIN_R:
		case GPU_AGG_MAX_R: {
			double p = __longlong_as_double((long long)a.x),
			       q = __longlong_as_double((long long)b.x);
			bool take =
			    b.c &&
			    (!a.c || (op == GPU_AGG_MIN_R ? q < p : q > p) ||
			     (q == p && b.row < a.row));
			if (take) {
				r.x = b.x;
				r.row = b.row;
			}
			break;
		}
		}
		return r;
	}
};

template <int NA>
__global__ void __launch_bounds__(OPS_F_BLOCK) ops_fscan(ops_fargs f)
{
	typedef cub::BlockReduce<ops_facc, OPS_F_BLOCK> ops_br;
	__shared__ typename ops_br::TempStorage ts;
	ops_facc acc[NA];
	uint64_t stride = (uint64_t)gridDim.x * blockDim.x;

#pragma unroll
	for (int a = 0; a < NA; a++)
		acc[a] = ops_finit(a < f.na ? f.op[a] : GPU_AGG_COUNT_STAR);
	/* rows ii + u * stride: each step of a warp reads consecutive rows */
	for (uint64_t ii = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
	     ii < f.n; ii += OPS_F_U * stride) {
		uint32_t i[OPS_F_U];
		bool in[OPS_F_U], ok[OPS_F_U];
#pragma unroll
		for (int u = 0; u < OPS_F_U; u++) {
			in[u] = ii + u * stride < f.n;
			i[u] = (uint32_t)(ii + u * stride);
		}
		ops_pass_u(f.term, f.nterms, i, in, ok);
#pragma unroll
		for (int u = 0; u < OPS_F_U; u++) {
			if (!ok[u])
				continue;
#pragma unroll
			for (int a = 0; a < NA; a++)
				if (a < f.na)
					ops_fstep(f.op[a], f.arg[a], i[u],
						  &acc[a]);
		}
	}
#pragma unroll
	for (int a = 0; a < NA; a++) {
		if (a >= f.na)
			break;
		ops_facc r = ops_br(ts).Reduce(acc[a], ops_fred(f.op[a]));
		if (threadIdx.x == 0)
			f.part[(size_t)blockIdx.x * f.na + a] = r;
		__syncthreads(); /* ts is used again */
	}
}

/* One block: the partials of nb blocks into res[0..na). */
__global__ void __launch_bounds__(OPS_F_BLOCK)
    ops_ffold(const ops_facc *part, uint32_t nb, ops_fops o, ops_facc *res)
{
	typedef cub::BlockReduce<ops_facc, OPS_F_BLOCK> ops_br;
	__shared__ typename ops_br::TempStorage ts;

	for (int a = 0; a < o.na; a++) {
		ops_fred red(o.op[a]);
		ops_facc t = ops_finit(o.op[a]);
		for (uint32_t b = threadIdx.x; b < nb; b += blockDim.x)
			t = red(t, part[(size_t)b * o.na + a]);
		ops_facc r = ops_br(ts).Reduce(t, red);
		if (threadIdx.x == 0)
			res[a] = r;
		__syncthreads();
	}
}

/* The scalar fused aggregate (no keys). */
static int ops_fused_scalar(const gpu_term *terms, int nterms, uint32_t n,
			    const gpu_agg *aggs, int naggs, gpu_groups *g,
			    int *declined, char *err, size_t errlen)
{
	/* the grid: enough resident blocks to fill the GPU, computed once
	 * per kernel (device 0 only) */
	static int sms, per_sm[3];
	void (*const kerns[3])(ops_fargs) = {ops_fscan<3>, ops_fscan<5>,
					     ops_fscan<OPS_F_MAXAGG + 1>};
	cudaStream_t s = gpu_stream();
	ops_fargs f;
	ops_fops o;
	ops_facc hres[OPS_F_MAXAGG + 1];
	char *mem = NULL;
	int rc = GPMDB_OK, dev = 0;

	memset(&f, 0, sizeof(f));
	memset(&o, 0, sizeof(o));
	f.n = n;
	f.na = o.na = naggs + 1;
	f.nterms = nterms;
	for (int k = 0; k < nterms; k++)
		f.term[k] = terms[k];
	for (int a = 0; a < naggs; a++) {
		f.op[a] = o.op[a] = aggs[a].op;
		f.arg[a] = aggs[a].arg;
	}
	/* the rows that passed: no groups when none did */
	f.op[naggs] = o.op[naggs] = GPU_AGG_COUNT_STAR;
	int kk = f.na <= 3 ? 0 : f.na <= 5 ? 1 : 2;
	if (!sms) {
		GPU_TRY(cudaGetDevice(&dev));
		GPU_TRY(cudaDeviceGetAttribute(
		    &sms, cudaDevAttrMultiProcessorCount, dev));
	}
	if (!per_sm[kk])
		GPU_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
		    &per_sm[kk], kerns[kk], OPS_F_BLOCK, 0));
	uint64_t want = ((uint64_t)n + OPS_F_BLOCK - 1) / OPS_F_BLOCK;
	uint64_t full = (uint64_t)sms * (uint64_t)(per_sm[kk] ? per_sm[kk] : 1);
	uint32_t blocks = (uint32_t)(want < full ? want : full);
	if (!blocks)
		blocks = 1;
	size_t np = (size_t)blocks * (size_t)f.na;
	if ((rc = gpu_alloc((void **)&mem, sizeof(ops_facc) * (np + f.na), err,
			    errlen)))
		return rc;
	f.part = (ops_facc *)mem;
	kerns[kk]<<<blocks, OPS_F_BLOCK, 0, s>>>(f);
	OPS_TRY(cudaGetLastError());
	ops_ffold<<<1, OPS_F_BLOCK, 0, s>>>(f.part, blocks, o, f.part + np);
	OPS_TRY(cudaGetLastError());
	OPS_TRY(cudaMemcpyAsync(hres, f.part + np, sizeof(ops_facc) * f.na,
				cudaMemcpyDeviceToHost, s));
	OPS_TRY(cudaStreamSynchronize(s));
	for (int a = 0; a < naggs; a++)
		if (aggs[a].op == GPU_AGG_SUM_I &&
		    (hres[a].x > OPS_LIM_POS || hres[a].y > OPS_LIM_NEG)) {
			*declined = 1;
			snprintf(err, errlen,
				 "an integer sum near the int64 limit (every "
				 "partial sum is checked in row order)");
			goto out;
		}
	if (!hres[naggs].c)
		goto out; /* no row passed: no groups */
	g->ngroups = 1;
	if ((rc = ops_host((void **)&g->first, 4, err, errlen)) ||
	    (rc = ops_host((void **)&g->res,
			   sizeof(gpu_agg_res) * (size_t)(naggs ? naggs : 1),
			   err, errlen)))
		goto out;
	g->naggs = naggs; /* gpu_group_free frees res[0..naggs) */
	for (int a = 0; a < naggs && !rc; a++) {
		gpu_agg_res *r = &g->res[a];
		const ops_facc *h = &hres[a];
		int op = aggs[a].op;
		if ((rc = ops_host((void **)&r->cnt, 8, err, errlen)))
			break;
		r->cnt[0] = h->c;
		if (op == GPU_AGG_COUNT_STAR || op == GPU_AGG_COUNT ||
		    op == GPU_AGG_SUM_I) {
			if ((rc = ops_host((void **)&r->sum_lo, 8, err,
					   errlen)) ||
			    (rc =
				 ops_host((void **)&r->sum_hi, 8, err, errlen)))
				break;
			/* COUNT: the sort path's sum of the counted values
			 * is the count */
			int64_t v = op == GPU_AGG_SUM_I ? (int64_t)(h->x - h->y)
							: (int64_t)h->c;
			r->sum_lo[0] = (uint64_t)v;
			r->sum_hi[0] = v < 0 ? -1 : 0;
		} else if (op == GPU_AGG_SUM_R || op == GPU_AGG_MIN_R ||
			   op == GPU_AGG_MAX_R) {
			if ((rc = ops_host((void **)&r->f64, 8, err, errlen)))
				break;
			memcpy(r->f64, &h->x, 8);
		} else {
			if ((rc = ops_host((void **)&r->i64, 8, err, errlen)))
				break;
			r->i64[0] = (int64_t)h->x;
		}
	}
out:
	gpu_free(mem, NULL, 0);
	if (rc || *declined)
		gpu_group_free(g);
	return rc;
}

/* Is aggregate a's argument one the fused kernels read as they are? */
static bool ops_fused_arg(const gpu_agg *a)
{
	int t = a->arg.type;

	switch (a->op) {
	case GPU_AGG_COUNT_STAR:
		return true;
	case GPU_AGG_COUNT: /* the NULL flags only */
		return !a->arg.sel;
	case GPU_AGG_SUM_R:
	case GPU_AGG_MIN_R:
	case GPU_AGG_MAX_R:
		return t == BC_COL_DOUBLE && !a->arg.sel;
	case GPU_AGG_SUM_I:
	case GPU_AGG_MIN_I:
	case GPU_AGG_MAX_I:
		return (t == BC_COL_INT64 || t == BC_COL_DEC ||
			t == BC_COL_INT32 || t == BC_COL_DATE ||
			t == BC_COL_BOOL) &&
		       !a->arg.sel;
	}
	return false;
}

extern "C" int gpu_fused_agg(const gpu_term *terms, int nterms,
			     const gpu_sortcol *keys, int nkeys, uint32_t n,
			     const gpu_agg *aggs, int naggs, gpu_groups *g,
			     int *declined, char *err, size_t errlen)
{
	cudaStream_t s = gpu_stream();
	gpu_sortcol *dk = NULL;
	const gpu_col *key = NULL;
	int rc;

	memset(g, 0, sizeof(*g));
	*declined = 0;
	if ((rc = gpu_init(err, errlen)))
		return rc;
	if (!n)
		return GPMDB_OK;
	if (nterms < 0 || nterms > GPU_FUSE_MAXTERMS || naggs > OPS_F_MAXAGG ||
	    nkeys < 0 || nkeys > 64) {
		*declined = 1;
		snprintf(err, errlen,
			 "%d filter terms, %d aggregates, %d keys (at most "
			 "%d, %d, 64 fused)",
			 nterms, naggs, nkeys, GPU_FUSE_MAXTERMS, OPS_F_MAXAGG);
		return GPMDB_OK;
	}
	for (int k = 0; k < nterms; k++)
		if (terms[k].a.sel || (terms[k].bcol && terms[k].b.sel) ||
		    terms[k].a.type == BC_COL_TEXT ||
		    (terms[k].bcol && terms[k].b.type == BC_COL_TEXT)) {
			*declined = 1;
			snprintf(err, errlen,
				 "a filter term over a TEXT or "
				 "selected column");
			return GPMDB_OK;
		}
	for (int a = 0; a < naggs; a++)
		if (!ops_fused_arg(&aggs[a])) {
			*declined = 1;
			snprintf(err, errlen,
				 "aggregate %d's argument (type %d) is not "
				 "read directly",
				 a, aggs[a].arg.type);
			return GPMDB_OK;
		}
	if (!nkeys)
		return ops_fused_scalar(terms, nterms, n, aggs, naggs, g,
					declined, err, errlen);
	if (nkeys == 1 && ops_int_key(&keys[0])) {
		key = &keys[0].col;
	} else {
		if ((rc = gpu_alloc((void **)&dk,
				    sizeof(gpu_sortcol) * (size_t)nkeys, err,
				    errlen)))
			return rc;
		cudaError_t e =
		    cudaMemcpyAsync(dk, keys, sizeof(gpu_sortcol) * nkeys,
				    cudaMemcpyHostToDevice, s);
		if (e != cudaSuccess) {
			gpu_free(dk, NULL, 0);
			return gpu_cuda_fail(e, "cudaMemcpyAsync", err, errlen);
		}
	}
	rc = ops_hash_agg(key, dk, nkeys, n, aggs, naggs, terms, nterms, g, err,
			  errlen);
	if (rc == OPS_H_RETRY) {
		*declined = 1;
		snprintf(err, errlen,
			 "more groups than fit in shared memory, a REAL "
			 "min/max or an integer sum near the int64 limit");
		rc = GPMDB_OK;
	}
	/* the copy of keys was queued before the kernel that read it */
	gpu_free(dk, NULL, 0);
	return rc;
}

__global__ void ops_rebase(gpu_str *v, uint64_t n, uint32_t base)
{
	uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		v[i].off += base;
}

extern "C" int gpu_str_rebase(gpu_str *v, uint64_t n, uint32_t base, char *err,
			      size_t errlen)
{
	int rc = gpu_init(err, errlen);

	if (rc || !n)
		return rc;
	ops_rebase<<<ops_grid(n), OPS_BLOCK, 0, gpu_stream()>>>(v, n, base);
	GPU_TRY(cudaGetLastError());
	return GPMDB_OK;
}

/* Rows idx[0..m) (device) of a dense column into a new dense column:
 * one allocation (values, then NULL bytes) at dst->data. */
extern "C" int gpu_gather(const gpu_col *src, const uint32_t *idx, uint32_t m,
			  gpu_col *dst, char *err, size_t errlen)
{
	cudaStream_t s = gpu_stream();
	size_t w;
	char *p;
	int rc;

	*dst = *src;
	dst->data = NULL;
	dst->nulls = NULL;
	dst->sel = NULL;
	switch (src->type) {
	case VEC_NULL:
		return GPMDB_OK;
	case BC_COL_BOOL:
		w = 1;
		break;
	case BC_COL_INT32:
	case BC_COL_DATE:
	case BC_COL_FLOAT:
		w = 4;
		break;
	default: /* INT64, DEC, DOUBLE, TEXT (gpu_str) */
		w = 8;
	}
	if ((rc = gpu_alloc((void **)&p, w * m + m + 16, err, errlen)))
		return rc;
	dst->data = p;
	if (m) {
		if (w == 1)
			ops_gather<uint8_t><<<ops_grid(m), OPS_BLOCK, 0, s>>>(
			    (const uint8_t *)src->data, idx, m, (uint8_t *)p);
		else if (w == 4)
			ops_gather<uint32_t><<<ops_grid(m), OPS_BLOCK, 0, s>>>(
			    (const uint32_t *)src->data, idx, m, (uint32_t *)p);
		else
			ops_gather<uint64_t><<<ops_grid(m), OPS_BLOCK, 0, s>>>(
			    (const uint64_t *)src->data, idx, m, (uint64_t *)p);
		cudaError_t e = cudaGetLastError();
		if (e == cudaSuccess && src->nulls) {
			ops_gather<uint8_t><<<ops_grid(m), OPS_BLOCK, 0, s>>>(
			    src->nulls, idx, m, (uint8_t *)p + w * m);
			e = cudaGetLastError();
		}
		if (e != cudaSuccess) {
			gpu_free(p, NULL, 0);
			dst->data = NULL;
			return gpu_cuda_fail(e, "ops_gather<<<>>>", err,
					     errlen);
		}
	}
	if (src->nulls)
		dst->nulls = (uint8_t *)p + w * m;
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

/* out[i] = i, NULL where row i of c is NULL. */
__global__ void ops_rownum(gpu_col c, uint32_t m, int64_t *out, uint8_t *nl)
{
	uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i >= m)
		return;
	out[i] = i;
	nl[i] = gk_null(c, i);
}

extern "C" int gpu_row_numbers(const gpu_col *like, uint32_t m, gpu_col *out,
			       char *err, size_t errlen)
{
	cudaStream_t s = gpu_stream();
	char *p;
	int rc;

	memset(out, 0, sizeof(*out));
	if (like->sel) {
		snprintf(err, errlen, "gpu_row_numbers: a column with sel");
		return GPMDB_MISUSE;
	}
	if ((rc = gpu_alloc((void **)&p, 9 * (size_t)m + 16, err, errlen)))
		return rc;
	out->type = BC_COL_INT64;
	out->data = p;
	out->nulls = (uint8_t *)p + 8 * (size_t)m;
	if (m) {
		ops_rownum<<<ops_grid(m), OPS_BLOCK, 0, s>>>(
		    *like, m, (int64_t *)p, out->nulls);
		cudaError_t e = cudaGetLastError();
		if (e != cudaSuccess) {
			gpu_free(p, NULL, 0);
			memset(out, 0, sizeof(*out));
			return gpu_cuda_fail(e, "ops_rownum<<<>>>", err,
					     errlen);
		}
	}
	return GPMDB_OK;
}
