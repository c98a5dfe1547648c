/*
 * gpu_internal.h - what the .cu files of gpu/ share: gpmdb's stream and
 * the CUDA error check.  C++ (nvcc) only.
 */
#ifndef GPMDB_GPU_INTERNAL_H
#define GPMDB_GPU_INTERNAL_H

#include <cuda_runtime.h>

#include "gpu.h"

extern "C" {

/* Writes a printf-style message into err (when there is room) and
 * returns rc: the GPU layer's errors (device.cu). */
int gpu_say(char *err, size_t errlen, int rc, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* gpmdb's stream (valid after gpu_init succeeded). */
cudaStream_t gpu_stream(void);
/* Turns a failed CUDA call into a gpmdb error: "call: text (name)";
 * GPMDB_NOMEM for an allocation, GPMDB_GPU otherwise. */
int gpu_cuda_fail(cudaError_t e, const char *call, char *err, size_t errlen);
/* Can this device run gpmdb's kernels?  cudaSuccess or why not. */
cudaError_t gvm_probe_kernel(void);
}

/* Every CUDA call goes through GPU_TRY: a failure returns from the
 * calling function (which has err and errlen) with the call named. */
#define GPU_TRY(call)                                                          \
	do {                                                                   \
		cudaError_t e_ = (call);                                       \
		if (e_ != cudaSuccess)                                         \
			return gpu_cuda_fail(e_, #call, err, errlen);          \
	} while (0)

/* ---- key columns on the device (ops.cu, relops.cu; gpu.h gpu_sortcol)
 *
 * The CPU's comparisons (exec.c sval_cmp, hash_row/rows_eq) of one static
 * type: integers as int64, DOUBLE/FLOAT by value with -0.0 equal to 0.0,
 * TEXT as val_text_cmp (unsigned bytes, then the shorter first). */

#include "../engine/vector.h" /* VEC_NULL */

__device__ __forceinline__ bool gk_null(const gpu_col &c, uint32_t i)
{
	return c.type == VEC_NULL || (c.nulls && c.nulls[i]);
}

/* A fixed-width value as an unsigned number in ascending order (exec.c
 * sortkey_make); 0 for TEXT. */
__device__ __forceinline__ uint64_t gk_ukey(const gpu_col &c, uint32_t i)
{
	double d;
	uint64_t u;

	switch (c.type) {
	case BC_COL_INT64:
	case BC_COL_DEC:
		return (uint64_t)((const int64_t *)c.data)[i] ^ (1ull << 63);
	case BC_COL_INT32:
	case BC_COL_DATE:
		return (uint64_t)(int64_t)((const int32_t *)c.data)[i] ^
		       (1ull << 63);
	case BC_COL_BOOL:
		return ((const uint8_t *)c.data)[i];
	case BC_COL_DOUBLE:
		d = ((const double *)c.data)[i];
		break;
	case BC_COL_FLOAT:
		d = (double)((const float *)c.data)[i];
		break;
	default:
		return 0;
	}
	if (d == 0)
		d = 0; /* -0.0 sorts and compares as 0.0 */
	u = (uint64_t)__double_as_longlong(d);
	return u >> 63 ? ~u : u | 1ull << 63;
}

/* The bytes of TEXT row i of k and their length. */
__device__ __forceinline__ const uint8_t *gk_str(const gpu_sortcol &k,
						 uint32_t i, uint32_t *len)
{
	gpu_str s = ((const gpu_str *)k.col.data)[i];
	*len = s.len;
	if (s.off & GPU_STR_CONST)
		return (const uint8_t *)k.ctext + (s.off & ~GPU_STR_CONST);
	return (const uint8_t *)k.text + s.off;
}

/* Word w of TEXT row i: bytes [8w, 8w + 8) big-endian, zero past the
 * end.  Words in order, then the length, order as val_text_cmp. */
__device__ __forceinline__ uint64_t gk_word(const gpu_sortcol &k, uint32_t i,
					    uint32_t w)
{
	uint32_t len;
	const uint8_t *b = gk_str(k, i, &len);
	uint64_t u = 0;

	for (uint32_t j = 8 * w; j < 8 * w + 8; j++)
		u = u << 8 | (j < len ? b[j] : 0u);
	return u;
}

/* Rows i of a and j of b equal (NULLs equal each other). */
__device__ __forceinline__ bool gk_eq(const gpu_sortcol &a, uint32_t i,
				      const gpu_sortcol &b, uint32_t j)
{
	bool na = gk_null(a.col, i), nb = gk_null(b.col, j);

	if (na || nb)
		return na == nb;
	if (a.col.type != BC_COL_TEXT)
		return gk_ukey(a.col, i) == gk_ukey(b.col, j);
	uint32_t la, lb;
	const uint8_t *pa = gk_str(a, i, &la), *pb = gk_str(b, j, &lb);
	if (la != lb)
		return false;
	for (uint32_t q = 0; q < la; q++)
		if (pa[q] != pb[q])
			return false;
	return true;
}

/* Rows i and j equal over all nk keys. */
__device__ __forceinline__ bool gk_rows_eq(const gpu_sortcol *k, int nk,
					   uint32_t i, uint32_t j)
{
	for (int c = 0; c < nk; c++)
		if (!gk_eq(k[c], i, k[c], j))
			return false;
	return true;
}

/* A 64-bit hash of row i over nk keys: equal rows (gk_eq) hash equal. */
__device__ __forceinline__ uint64_t gk_hash(const gpu_sortcol *k, int nk,
					    uint32_t i)
{
	uint64_t h = 0x9e3779b97f4a7c15ull;

	for (int c = 0; c < nk; c++) {
		uint64_t v;
		if (gk_null(k[c].col, i)) {
			v = 0x12345;
		} else if (k[c].col.type == BC_COL_TEXT) {
			uint32_t len;
			const uint8_t *b = gk_str(k[c], i, &len);
			v = 1469598103934665603ull;
			for (uint32_t q = 0; q < len; q++)
				v = (v ^ b[q]) * 1099511628211ull;
			v ^= len;
		} else {
			v = gk_ukey(k[c].col, i);
		}
		h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
		h *= 0xff51afd7ed558ccdull;
	}
	return h ^ (h >> 29);
}

/*
 * relops.cu: orders rows [0, m) so that rows equal over keys[0..nk) are
 * adjacent, in row order among themselves (stable), for GROUP BY: *perm
 * (device, m entries: gpu_free it) the rows in that order, head[i] (device,
 * m entries) 1 where perm[i] starts a new set of equal rows, else 0.
 * keys: host array.  TEXT keys: a hash sort with exact neighbour checks,
 * or gpu_sort's order (GPU_SORT_MAX_TEXT applies) after a collision.
 */
int ro_key_groups(const gpu_sortcol *keys, int nk, uint32_t m, uint32_t **perm,
		  uint32_t *head, char *err, size_t errlen);

/*
 * relops.cu: the bits a stable LSD radix sort of k[0..n) (device) needs,
 * at most bits: 0 when the keys are in order already (the sort would
 * change nothing), else those below the highest bit where the smallest
 * and largest key differ.  scratch: 3 device words.  Synchronises.
 */
int gpu_key_bits(const uint64_t *k, uint32_t n, int bits, void *scratch,
		 int *need, char *err, size_t errlen);

#endif /* GPMDB_GPU_INTERNAL_H */
