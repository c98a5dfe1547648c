/*
 * gpu_dml.h - GPU writes into the pool (docs/gpu.md "GPU writes"):
 * registering the pool mapping with CUDA, the UPDATE/DELETE kernels that
 * log with HCL and store in place, the INSERT kernel, the recovery
 * kernel.  gpu/persist.cu, gpu/dml.cu, gpu/dml_append.cu; gpu/dml_host.c
 * without CUDA.
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
/* cudaHostRegister(p, len, Mapped|Portable), checked that the device
 * address is the host's (kernels use host pointers); GPMDB_UNSUPPORTED
 * with the driver's words about WHAT otherwise (nothing left registered). */
int gpu_host_register_uva(void *p, uint64_t len, const char *what, char *err,
			  size_t errlen);
int gpu_pm_register(void *base, uint64_t len, char *err, size_t errlen);
int gpu_pm_unregister(void *base, char *err, size_t errlen);
/* 1 when [base, base + len) is registered as one range. */
int gpu_pm_is_registered(const void *base, uint64_t len);
/* Registers what is not registered yet of the pool offset ranges
 * [r[2k], r[2k + 1]) (k < nr) of the mapping at base (page-rounded), and
 * keeps them for later calls; a mapping with another base or length
 * drops the ranges of the old one first.  *added: bytes registered now.
 * Nothing to do where the whole mapping is registered. */
int gpu_pm_ensure(void *base, uint64_t map_len, const uint64_t *r, uint32_t nr,
		  uint64_t *added, char *err, size_t errlen);
/* 1 when [p, p + len) lies inside one range gpu_pm_ensure registered of
 * the mapping at base, map_len long as it is now (the column cache then
 * DMAs from it instead of staging it). */
int gpu_pm_range_registered(const void *base, uint64_t map_len, const void *p,
			    uint64_t len);
/* Unregisters the ranges of the mapping at base (NULL: any). */
void gpu_pm_ranges_drop(void *base);
/* Bytes of the pool registered as ranges. */
uint64_t gpu_pm_range_bytes(void);
/* Time gpu_pm_ensure spent, cumulative (ns): populating the new ranges'
 * pages on every core (MADV_POPULATE_WRITE), and cudaHostRegister. */
void gpu_pm_range_times(uint64_t *populate_ns, uint64_t *register_ns);

/* Persist scope of the HCL protocol's two barriers (entries -> tails,
 * tails -> data); see gpu/persist.cuh.  NONE: no barriers at all (the
 * scoped-barrier paper's baseline, for measurement: a crash during the
 * kernel may leave values in place without their log entries). */
enum {
	GPU_SCOPE_THREAD = 0,
	GPU_SCOPE_BLOCK = 1,
	GPU_SCOPE_GRID = 2,
	GPU_SCOPE_NONE = 3
};

typedef struct {
	double upload_ms; /* arguments to the device */
	double log_ms;	  /* entries + tails (grid scope: two kernels) */
	double data_ms;	  /* in-place stores (or the whole kernel) */
	double total_ms;
	uint64_t bytes; /* bytes stored into the pool */
	/* UPDATE's write of the new values (gpu_update_opts): the time of
	 * counting dirty lines for the choice (auto), of the whole-line
	 * writes, the columns written as lines, the rows and dirty lines
	 * they had (summed over those columns) */
	double mark_ms, lines_ms;
	uint32_t line_cols;
	uint64_t line_rows, dirty_lines;
} gpu_dml_timing;

/*
 * How an HCL UPDATE writes its new values (PRAGMA gpu_update_mode,
 * docs/gpu.md "Dense updates"):
 *   scatter: each row's thread stores its values in place (one PCIe
 *            store per value);
 *   lines:   after the entries and tails are persisted, the new values
 *            are merged into the column's dirty 128-byte lines in HBM
 *            (unchanged bytes read from the pool) and each dirty line is
 *            written back whole by one warp (coalesced), then persisted;
 *   auto:    per column of the batch, lines when it has at least
 *            min_rows_per_line updated rows per dirty line and at least
 *            GPU_LINES_MIN_ROWS rows, scatter otherwise.
 */
enum { GPU_UPD_AUTO = 0, GPU_UPD_SCATTER = 1, GPU_UPD_LINES = 2 };
#define GPU_LINES_MIN_ROWS 4096u
typedef struct {
	int mode;		  /* GPU_UPD_* */
	double min_rows_per_line; /* auto's threshold (> 0) */
} gpu_update_opts;

/*
 * A test hook (tests/gpu/crash_gpu_dml.c): fn(0) just before a batch's
 * first write kernel is launched (after its uploads; INSERT: before its
 * first column's upload), fn(1) once every write kernel of it finished.
 * NULL (the default) turns it off.  Process-wide.
 */
void gpu_dml_set_launch_hook(void (*fn)(int done));

/* Table layout, as stg_gpu_layout: tab[i * stride + 2c] data offset of
 * column c in tablet i, +1 its NULL bitmap, [i * stride + stride - 1]
 * the deleted bitmap; widths[c] bytes per value. */
typedef struct {
	const uint64_t *tab;
	uint32_t ntab, stride;
	const uint32_t *widths;
	uint32_t ncols;
} gpu_tab_layout;

/* The ranges a write of rows [row_lo, row_end) of the table lay touches
 * (the whole tablets holding them: columns in cmask, their NULL bitmaps,
 * the deleted bitmaps when del) and the segment [s0, s1), page-rounded,
 * merged, in r (2 * (ntab * (2 * ncols + 1) + 2) slots); returns how
 * many. */
uint32_t gpu_write_ranges(uint64_t map_len, uint64_t s0, uint64_t s1,
			  const gpu_tab_layout *lay, uint64_t row_lo,
			  uint64_t row_end, unsigned long long cmask, int del,
			  uint64_t *r);

/*
 * UPDATE: row rowids[i] (thread i of geom: 256-thread blocks) gets
 * vals[k][i] (widths[cols[k]] bytes; nulls[k] a bitmap over i, may be
 * NULL) in column cols[k], k < ncols.  Each thread writes its ncols HCL
 * entries (old value, old NULL bit) into its slot of the segment at
 * seg_off, persists them, sets and persists its tail, then stores the new
 * values in place and persists them (uo NULL or scatter; uo lines: the
 * columns' dirty lines are written whole after every entry and tail is
 * persisted, see gpu_update_opts).  Host arrays; returns after every
 * store is persisted.
 */
int gpu_hcl_update(void *pool, uint64_t seg_off, const hcl_geom *geom,
		   const gpu_tab_layout *lay, const uint64_t *rowids,
		   uint64_t n, int ncols, const uint32_t *cols,
		   const void *const *vals, const uint32_t *const *nulls,
		   int scope, const gpu_update_opts *uo, gpu_dml_timing *t,
		   char *err, size_t errlen);
/* The same from device arrays (an UPDATE's rows and values computed on
 * the GPU, engine/write/batch_gpu.c bgpu_update_select): range[0] and
 * range[1] are the least and greatest row id (gpu_rowid_range). */
int gpu_hcl_update_dev(void *pool, uint64_t seg_off, const hcl_geom *geom,
		       const gpu_tab_layout *lay, const uint64_t *rowids,
		       uint64_t n, const uint64_t range[2], int ncols,
		       const uint32_t *cols, const void *const *vals,
		       const uint32_t *const *nulls, int scope,
		       const gpu_update_opts *uo, gpu_dml_timing *t, char *err,
		       size_t errlen);
/* Device row ids: out[0] the least, out[1] the greatest, out[2] 1 when
 * they are strictly increasing. */
int gpu_rowid_range(const uint64_t *rowids, uint64_t n, uint64_t out[3],
		    char *err, size_t errlen);
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

/* Called by gpu_append/gpu_append_dev before the kernels of each chunk
 * (table rows [r0, r1), inside one tablet, in order) are queued, while
 * earlier chunks' copies and kernels run: the caller registers what the
 * chunk's kernels store into (and may stop the INSERT: non-zero, a
 * message in err).  NULL: everything is registered already. */
typedef int (*gpu_append_chunk_fn)(void *ctx, uint64_t r0, uint64_t r1,
				   char *err, size_t errlen);

/* INSERT: rows [start, start + n) of the table get vals[c][i] (all
 * columns, fixed width), NULL bits from nulls[c] (may be NULL), cleared
 * deleted bits; the tablets exist (stg_append_reserve).  A pipeline of
 * chunks (docs/gpu.md "INSERT pipeline"): every core copies chunk k + 2
 * into a pinned staging buffer while chunk k + 1 goes up on a copy
 * stream and chunk k's kernels store into the pool.  t->upload_ms is
 * the host's staging time; returns after every store is persisted. */
int gpu_append(void *pool, const gpu_tab_layout *lay, uint64_t start,
	       uint64_t n, const void *const *vals,
	       const uint32_t *const *nulls, gpu_append_chunk_fn fn, void *ctx,
	       gpu_dml_timing *t, char *err, size_t errlen);
/* What an INSERT leaves on the device for the column cache
 * (gpu_append_keep): column c's values of the batch's rows into vals[c]
 * (n values of the column's width; NULL: not kept) and its NULL bits as
 * bytes into nullb[c] (n bytes, 1 = NULL; NULL: not kept), the form
 * gcache_adopt takes. */
typedef struct gpu_append_copies {
	void *const *vals;
	uint8_t *const *nullb;
} gpu_append_copies;
/* gpu_append that also copies each chunk, once on the device, into keep
 * (NULL: gpu_append).  srcw[c] (NULL: lay->widths[c] for every column)
 * is the bytes per value of vals[c]: 4 for a column of width 8 uploads
 * int32_t values that the kernels sign-extend as they store them (a
 * bound INT32 array into a BIGINT column: no widened copy on the host,
 * half the bytes over PCIe); any other difference is GPMDB_MISUSE. */
int gpu_append_keep(void *pool, const gpu_tab_layout *lay, uint64_t start,
		    uint64_t n, const void *const *vals,
		    const uint32_t *const *nulls, const uint32_t *srcw,
		    gpu_append_chunk_fn fn, void *ctx,
		    const gpu_append_copies *keep, gpu_dml_timing *t, char *err,
		    size_t errlen);
/* The same from device arrays (gpu_ins_convert's): nothing is uploaded,
 * the kernels copy device memory into the pool, chunk by chunk. */
int gpu_append_dev(void *pool, const gpu_tab_layout *lay, uint64_t start,
		   uint64_t n, const void *const *dvals,
		   const uint32_t *const *dnulls, gpu_append_chunk_fn fn,
		   void *ctx, gpu_dml_timing *t, char *err, size_t errlen);

/*
 * INSERT ... SELECT whose SELECT result is on the device (docs/gpu.md
 * "INSERT ... SELECT"): one source per table column, turned into the
 * column's storage array as the CPU's INSERT does (rel.c sval_convert in
 * its strict mode, then dml.c rcol_to_storage's narrowing).
 *   data:    device column (a gpu_vm_run output: type src, scale
 *            src_scale, nulls 1 byte per row, 1 = NULL, may be NULL);
 *   src:     BC_COL_* (VEC_NULL: every row NULL, data unused);
 *   is_const: every row is the constant konst (storage bits of the
 *            column's width), or NULL when knull; data unused;
 *   dst_t:   the column's SQL type (BC_T_INT, BOOL, REAL, DEC, DATE),
 *            dst_prec/dst_scale for DEC; width: its storage width
 *            (INT 4 or 8, REAL 4 (float) or 8, BOOL 1, DATE 4, DEC 8).
 * Conversions that are an error on the CPU (a REAL or DECIMAL with a
 * fraction into an integer, DECIMAL overflow, a DATE into a number) are
 * not done: the row is reported in first_bad.
 */
typedef struct {
	const void *data;
	const uint8_t *nulls;
	uint8_t src, src_scale, dst_t, dst_prec, dst_scale;
	uint8_t is_const, knull;
	uint32_t width;
	uint64_t konst;
} gpu_ins_src;

/*
 * Converts n rows of src[0..ncols): vals[c] (device, n * width bytes;
 * NULL rows hold 0, as on the CPU) and nulls[c] (device NULL bitmap,
 * (n + 31) / 32 words), both from gpu_alloc: the caller gpu_frees them,
 * also on failure.  first_null[c] / first_bad[c]: the first NULL row and
 * the first row that does not convert, UINT64_MAX when none.
 */
int gpu_ins_convert(const gpu_ins_src *src, int ncols, uint64_t n, void **vals,
		    uint32_t **nulls, uint64_t *first_null, uint64_t *first_bad,
		    char *err, size_t errlen);

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
 * Entries of rows >= row_count are skipped, as the CPU does.  When the
 * mapping is not registered, registers for the call only what recovery
 * touches (the segment and the table's tablets, page-rounded and merged)
 * instead of the whole pool, and unregisters it after.  GPMDB_CORRUPT
 * (nothing applied) when a tail exceeds its slot.  rt (may be NULL): the
 * time in cudaHostRegister/Unregister and in the kernels.
 */
typedef struct {
	double register_ms;  /* cudaHostRegister + cudaHostUnregister */
	double kernel_ms;    /* uploads, check and apply kernels */
	uint64_t reg_bytes;  /* bytes registered for the call (0: reused) */
	uint32_t reg_ranges; /* ranges registered */
} gpu_recover_timing;

int gpu_hcl_recover(void *pool, uint64_t map_len, uint64_t seg_off,
		    uint64_t seg_size, const gpu_tab_layout *lay,
		    uint64_t row_count, uint64_t *applied,
		    gpu_recover_timing *rt, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif
#endif /* GPMDB_GPU_DML_H */
