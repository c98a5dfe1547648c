/*
 * ops_int.cuh - between ops.cu and ops_fused.cu: launch geometry, host
 * buffers, the gather kernel, a fused filter's terms (evaluated inside the
 * hash and the fused aggregation kernels), the exact-sum limits.  Device
 * functions are static inline here: each file compiles its own copy (no
 * relocatable device code).
 */
#ifndef GPMDB_OPS_INT_CUH
#define GPMDB_OPS_INT_CUH

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpmdb.h"

#include "gpu_internal.h"

#include "../engine/value_inline.h" /* val_dec_to_real */
#include "../engine/vector.h"	    /* VEC_NULL */

#define OPS_BLOCK 256

static inline unsigned ops_grid(uint64_t n)
{
	return (unsigned)((n + OPS_BLOCK - 1) / OPS_BLOCK);
}

template <typename T>
__global__ void ops_gather(const T *src, const uint32_t *idx, uint32_t n,
			   T *dst)
{
	uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		dst[i] = src[idx[i]];
}

static inline int ops_host(void **p, size_t bytes, char *err, size_t errlen)
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

#define OPS_H_MAXAGG 8
#define OPS_H_RETRY  1000 /* not a GPMDB code: "use the sort path" */
#define OPS_H_BLOCK  1024
#define OPS_H_EMPTY  0u
#define OPS_H_BUSY   1u /* state >= 2: ready, gid = state - 2 */

/* ---- a fused filter's terms (gpu_fused_agg) ---------------------------- */

/* LOAD_COL's value of row i of c (a double's bits for DOUBLE/FLOAT: the
 * comparisons do not depend on NaN bits) and its NULL flag. */
__device__ static inline bool ops_tload(const gpu_col &c, uint32_t i,
					long long *v)
{
	switch (c.type) {
	case VEC_NULL:
		*v = 0;
		return true;
	case BC_COL_INT32:
	case BC_COL_DATE:
		*v = __ldg((const int *)c.data + i);
		break;
	case BC_COL_BOOL:
		*v = __ldg((const unsigned char *)c.data + i);
		break;
	case BC_COL_FLOAT:
		*v = __double_as_longlong(
		    (double)__ldg((const float *)c.data + i));
		break;
	default: /* INT64, DEC, DOUBLE */
		*v = __ldg((const long long *)c.data + i);
	}
	return c.nulls && __ldg((const unsigned char *)c.nulls + i);
}

/* A term's comparison of x and y (gvm_row's GVM_CMP_CASES over the same
 * registers): a NULL side makes it NULL, which fails the filter. */
__device__ static inline bool ops_tcmp(const gpu_term &t, long long x, bool xn,
				       long long y, bool yn)
{
	int c;
	bool eq;

	if (t.op == GPU_TERM_ISNULL)
		return xn;
	if (t.op == GPU_TERM_NOTNULL)
		return !xn;
	if (xn || yn)
		return false;
	if (t.acvt)
		x = __double_as_longlong(t.acvt == GPU_CVT_I2R
					     ? (double)x
					     : val_dec_to_real(x, t.ascale));
	if (t.bcol && t.bcvt)
		y = __double_as_longlong(t.bcvt == GPU_CVT_I2R
					     ? (double)y
					     : val_dec_to_real(y, t.bscale));
	if (t.real) {
		double p = __longlong_as_double(x), q = __longlong_as_double(y);
		c = p < q ? -1 : p > q;
		eq = p == q;
	} else {
		c = x < y ? -1 : x > y;
		eq = x == y;
	}
	switch (t.op) {
	case GPU_TERM_EQ:
		return eq;
	case GPU_TERM_NE:
		return !eq;
	case GPU_TERM_LT:
		return c < 0;
	case GPU_TERM_LE:
		return c <= 0;
	case GPU_TERM_GT:
		return c > 0;
	default:
		return c >= 0;
	}
}

/* One row against all terms (the hash kernel's rows). */
__device__ static inline bool ops_pass(const gpu_term *t, int nt, uint32_t i)
{
	bool ok = true;

	for (int k = 0; k < nt; k++) {
		long long x, y = t[k].k.i;
		bool xn = ops_tload(t[k].a, i, &x), yn = false;
		if (t[k].bcol && t[k].op != GPU_TERM_ISNULL &&
		    t[k].op != GPU_TERM_NOTNULL)
			yn = ops_tload(t[k].b, i, &y);
		ok &= ops_tcmp(t[k], x, xn, y, yn);
	}
	return ok;
}

/* U rows at once (the scalar kernel): the loads of a column for the U
 * rows are independent and go out together, so each thread keeps U
 * loads in flight instead of one.  in[u]: row i[u] exists. */
#define OPS_F_U 4

__device__ static inline void ops_tload_u(const gpu_col &c, const uint32_t *i,
					  const bool *in, long long *v,
					  bool *nl)
{
#pragma unroll
	for (int u = 0; u < OPS_F_U; u++) {
		v[u] = 0;
		nl[u] = false;
	}
	switch (c.type) {
	case VEC_NULL:
#pragma unroll
		for (int u = 0; u < OPS_F_U; u++)
			nl[u] = true;
		return;
	case BC_COL_INT32:
	case BC_COL_DATE:
#pragma unroll
		for (int u = 0; u < OPS_F_U; u++)
			if (in[u])
				v[u] = __ldg((const int *)c.data + i[u]);
		break;
	case BC_COL_BOOL:
#pragma unroll
		for (int u = 0; u < OPS_F_U; u++)
			if (in[u])
				v[u] =
				    __ldg((const unsigned char *)c.data + i[u]);
		break;
	case BC_COL_FLOAT:
#pragma unroll
		for (int u = 0; u < OPS_F_U; u++)
			if (in[u])
				v[u] = __double_as_longlong((double)__ldg(
				    (const float *)c.data + i[u]));
		break;
	default: /* INT64, DEC, DOUBLE */
#pragma unroll
		for (int u = 0; u < OPS_F_U; u++)
			if (in[u])
				v[u] = __ldg((const long long *)c.data + i[u]);
	}
	if (c.nulls)
#pragma unroll
		for (int u = 0; u < OPS_F_U; u++)
			nl[u] = in[u] &&
				__ldg((const unsigned char *)c.nulls + i[u]);
}

__device__ static inline void ops_pass_u(const gpu_term *t, int nt,
					 const uint32_t *i, const bool *in,
					 bool *ok)
{
#pragma unroll
	for (int u = 0; u < OPS_F_U; u++)
		ok[u] = in[u];
	for (int k = 0; k < nt; k++) {
		long long x[OPS_F_U], y[OPS_F_U];
		bool xn[OPS_F_U], yn[OPS_F_U];
		ops_tload_u(t[k].a, i, in, x, xn);
		if (t[k].bcol && t[k].op != GPU_TERM_ISNULL &&
		    t[k].op != GPU_TERM_NOTNULL) {
			ops_tload_u(t[k].b, i, in, y, yn);
		} else {
#pragma unroll
			for (int u = 0; u < OPS_F_U; u++) {
				y[u] = t[k].k.i;
				yn[u] = false;
			}
		}
#pragma unroll
		for (int u = 0; u < OPS_F_U; u++)
			ok[u] =
			    ok[u] && ops_tcmp(t[k], x[u], xn[u], y[u], yn[u]);
	}
}

#define OPS_LIM_POS ((uint64_t)INT64_MAX)
#define OPS_LIM_NEG (1ull << 63)

__device__ static inline uint64_t ops_sat_add(uint64_t a, uint64_t b,
					      uint64_t sat)
{
	uint64_t r = a + b;
	return r < a || r > sat ? sat : r;
}

/* ops.cu: the hash aggregate (also with a fused filter's terms) and the
 * keys the integer paths take. */
int ops_hash_agg(const gpu_col *key, const gpu_sortcol *mkeys, int nmk,
		 uint32_t n, const gpu_agg *aggs, int naggs,
		 const gpu_term *terms, int nterms, gpu_groups *g, char *err,
		 size_t errlen);
bool ops_int_key(const gpu_sortcol *k);

#endif /* GPMDB_OPS_INT_CUH */
