/*
 * gpu_dml.h - GPU writes into the pool (docs/gpu.md "GPU writes"):
 * registering the pool mapping with CUDA, the UPDATE/DELETE kernels that
 * log with HCL and store in place, the INSERT kernel, the recovery
 * kernel.  gpu/persist.cu, gpu/dml.cu; gpu/dml_host.c without CUDA.
 *
 * Pointers named pool are the host address of the mapping; offsets
 * (tab, seg_off) are from its start, as storage/stg_gpu.h gives them.
 * Every function returns a GPMDB_* code with a message in err.
 */
#ifndef GPMDB_GPU_DML_H
#define GPMDB_GPU_DML_H

#include <stddef.h>
#include <stdint.h>

#include "../storage/hcl.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the pool mapping (gpu/persist.cu) ---------------------------------
 * cudaHostRegister(base, len): kernels may then store into the mapping.
 * One registration per base; registering a base again with another
 * length (the pool grew and was remapped in place) unregisters the old
 * range first.  Fails with GPMDB_UNSUPPORTED and the driver's words when
 * CUDA refuses the mapping (a file on ext4/xfs: "invalid argument"). */
int gpu_pm_register(void *base, uint64_t len, char *err, size_t errlen);
int gpu_pm_unregister(void *base, char *err, size_t errlen);
/* 1 when [base, base + len) is registered as one range. */
int gpu_pm_is_registered(const void *base, uint64_t len);

/* Persist scope of the HCL protocol's two barriers (entries -> tails,
 * tails -> data); see gpu/persist.cuh. */
enum { GPU_SCOPE_THREAD = 0, GPU_SCOPE_BLOCK = 1, GPU_SCOPE_GRID = 2 };

typedef struct {
	double upload_ms; /* arguments to the device */
	double log_ms;	  /* entries + tails (grid scope: two kernels) */
	double data_ms;	  /* in-place stores (or the whole kernel) */
	double total_ms;
	uint64_t bytes; /* bytes stored into the pool */
} gpu_dml_timing;

/* Table layout, as stg_gpu_layout: tab[i * stride + 2c] data offset of
 * column c in tablet i, +1 its NULL bitmap, [i * stride + stride - 1]
 * the deleted bitmap; widths[c] bytes per value. */
typedef struct {
	const uint64_t *tab;
	uint32_t ntab, stride;
	const uint32_t *widths;
	uint32_t ncols;
} gpu_tab_layout;

/*
 * UPDATE: row rowids[i] (thread i of geom: 256-thread blocks) gets
 * vals[k][i] (widths[cols[k]] bytes; nulls[k] a bitmap over i, may be
 * NULL) in column cols[k], k < ncols.  Each thread writes its ncols HCL
 * entries (old value, old NULL bit) into its slot of the segment at
 * seg_off, persists them, sets and persists its tail, then stores the new
 * values in place and persists them.  Host arrays; returns after every
 * store is persisted.
 */
int gpu_hcl_update(void *pool, uint64_t seg_off, const hcl_geom *geom,
		   const gpu_tab_layout *lay, const uint64_t *rowids,
		   uint64_t n, int ncols, const uint32_t *cols,
		   const void *const *vals, const uint32_t *const *nulls,
		   int scope, gpu_dml_timing *t, char *err, size_t errlen);
/*
 * UPDATE with conventional logging (PRAGMA gpu_log = conventional, the
 * baseline of the batch benchmark): the same arguments, but thread i
 * appends its entries to log partition i % nparts (HCL thread p of the
 * segment is partition p: the geometry must have nparts threads or more
 * with ceil(n / nparts) * ncols entries each), claiming its position with
 * an atomicAdd and publishing the partition's tail in claim order
 * (gpu/dml.cu).  The segment is a valid HCL segment: recovery is HCL's.
 */
int gpu_conv_update(void *pool, uint64_t seg_off, const hcl_geom *geom,
		    const gpu_tab_layout *lay, const uint64_t *rowids,
		    uint64_t n, int ncols, const uint32_t *cols,
		    const void *const *vals, const uint32_t *const *nulls,
		    uint32_t nparts, gpu_dml_timing *t, char *err,
		    size_t errlen);
/* DELETE: the same with one HCL_K_DELETE entry for each row not yet
 * deleted; *added = rows whose deleted bit went from 0 to 1. */
int gpu_hcl_delete(void *pool, uint64_t seg_off, const hcl_geom *geom,
		   const gpu_tab_layout *lay, const uint64_t *rowids,
		   uint64_t n, int scope, uint64_t *added, gpu_dml_timing *t,
		   char *err, size_t errlen);

/* INSERT: rows [start, start + n) of the table get vals[c][i] (all
 * columns, fixed width), NULL bits from nulls[c] (may be NULL), cleared
 * deleted bits; the tablets exist (stg_append_reserve). */
int gpu_append(void *pool, const gpu_tab_layout *lay, uint64_t start,
	       uint64_t n, const void *const *vals,
	       const uint32_t *const *nulls, gpu_dml_timing *t, char *err,
	       size_t errlen);

/*
 * The PCIe limits of the batch benchmark (tpc/batch/bench_batch.c):
 * cudaMemcpy of `bytes` from pinned host memory to the device (*h2d) and
 * back (*d2h), best of `reps` after a warm-up, in GB/s.  The buffers are
 * freed before it returns.
 */
int gpu_pcie_bandwidth(uint64_t bytes, int reps, double *h2d, double *d2h,
		       char *err, size_t errlen);

/*
 * Recovery: applies every entry of the HCL segment at seg_off (header
 * already checked) of a table with row_count rows, in parallel (one
 * thread per HCL thread, its entries newest first), and persists.
 * Entries of rows >= row_count are skipped, as the CPU does.  Registers
 * the mapping for the call when it is not.  GPMDB_CORRUPT (nothing
 * applied) when a tail exceeds its slot.
 */
int gpu_hcl_recover(void *pool, uint64_t map_len, uint64_t seg_off,
		    uint64_t seg_size, const gpu_tab_layout *lay,
		    uint64_t row_count, uint64_t *applied, char *err,
		    size_t errlen);

#ifdef __cplusplus
}
#endif
#endif /* GPMDB_GPU_DML_H */
