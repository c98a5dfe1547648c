/*
 * stg_gpu.h - the storage API of the GPU write path (storage/hcl_gpu.c).
 *
 * A GPU batch stores straight into the pool mapping (registered with
 * CUDA by the gpu layer), so the storage layer hands it offsets instead of
 * doing the writes itself, and keeps the logs: the host allocates and
 * logs (HCL segment, tablets, row counts, deleted counts) through these
 * calls, the kernels fill what they are given, and recovery on open needs
 * no GPU because the HCL format is the one the CPU writes (hcl.h).
 *
 * Protocol of a GPU UPDATE/DELETE batch (inside a storage transaction):
 *   stg_gpu_layout_get            offsets of every tablet's columns
 *   stg_hcl_begin_gpu             segment allocated, HCL_BATCH logged,
 *                                 header and zeroed tails persisted
 *   (no allocation from here: the mapping stays where it is)
 *   kernels: entries, tails, data, each persisted before the next
 *   stg_hcl_end                   bytes counted, deleted count logged
 * and of a GPU INSERT batch:
 *   stg_append_reserve            NOT NULL checked, tablets allocated
 *   stg_gpu_layout_get            (after the reserve: it may allocate)
 *   kernels: values, NULL bits, deleted bits of rows past the count
 *   stg_append_finish             the new row count, through the log
 * The commit record is stg_commit's, as for the CPU path.
 */
#ifndef GPMDB_STG_GPU_H
#define GPMDB_STG_GPU_H

#include <stdint.h>

#include "hcl.h"
#include "storage.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Where a table's data lies: tab[i * stride + 2 * c] is the pool offset of
 * column c's array in tablet i, tab[i * stride + 2 * c + 1] its NULL
 * bitmap, tab[i * stride + 2 * ncols] the deleted-row bitmap; stride =
 * 2 * ncols + 1.  Tablet i's first row and capacity follow from i alone
 * (storage/tablet.c's geometry, stg_tab_first_row). */
typedef struct {
	uint32_t table_id;
	uint32_t ncols;
	uint64_t row_count; /* rows inside the count (this transaction's) */
	uint32_t ntab;
	uint32_t stride;
	uint32_t *types;  /* stg_type of each column */
	uint32_t *widths; /* bytes per value of each column */
	uint64_t *tab;	  /* ntab * stride offsets */
} stg_gpu_layout;

int stg_gpu_layout_get(stg_pool *p, uint32_t table_id, stg_gpu_layout *out);
void stg_gpu_layout_free(stg_gpu_layout *l);

/* Tablet geometry (the same functions tablet.c uses). */
uint64_t stg_tab_index_of(uint64_t row);
uint64_t stg_tab_first_row(uint64_t idx);
uint64_t stg_tab_capacity(uint64_t idx);

/* An HCL segment of a GPU batch: nthreads threads (row i of the batch is
 * thread i, 256-thread blocks as hcl_geom_for chooses), epp entries each. */
typedef struct {
	uint64_t seg_off;
	uint64_t seg_size;
	hcl_geom geom;
} stg_hcl_seg;

/* ncols/cols: the columns an UPDATE's kernels change (their write stamps,
 * stg_col_stamp); 0/NULL for a DELETE (the table's rows change). */
int stg_hcl_begin_gpu(stg_pool *p, uint32_t table_id, int ncols,
		      const uint32_t *cols, uint64_t nthreads, uint32_t epp,
		      stg_hcl_seg *out);
/* After the kernels persisted everything: counts bytes and adds deleted_added
 * to the table's deleted count through the log.  Crash points
 * update.data/delete.data. */
int stg_hcl_end(stg_pool *p, uint32_t table_id, const stg_hcl_seg *s,
		uint64_t bytes, bool is_delete, uint64_t deleted_added);

/* INSERT: checks NOT NULL of cols (as stg_append), makes the tablets for
 * rows [*start, *start + nrows) exist.  TEXT columns are not supported
 * (GPMDB_UNSUPPORTED; the caller uses stg_append). */
int stg_append_reserve(stg_pool *p, uint32_t table_id,
		       const stg_col_batch *cols, uint64_t nrows,
		       uint64_t *start);
/* stg_append_reserve with stg_append_from's from[c] (NULL: all
 * STG_FROM_SAME): an STG_FROM_I32 column's keys are checked as the
 * int32_t values they are; the kernels widen them as they store. */
int stg_append_reserve_from(stg_pool *p, uint32_t table_id,
			    const stg_col_batch *cols, const uint8_t *from,
			    uint64_t nrows, uint64_t *start);
/* The rows were written and persisted: the row count becomes start +
 * nrows through the metadata log.  Crash points append.data/append.count. */
int stg_append_finish(stg_pool *p, uint32_t table_id, uint64_t start,
		      uint64_t nrows, uint64_t bytes);

/* CPU-assisted persistence (engine/write/batch_cap.c, docs/gpu.md): the
 * GPU builds a batch's entries and tails in HBM, the host copies them
 * into the segment (stg_hcl_seg_addr, after stg_hcl_begin_gpu), persists
 * the entries, then the tails (stg_hcl_persist: [off, off + len) of the
 * segment; the caller fires hcl.entry and hcl.tail), then writes the
 * data with these, on every core, and ends with stg_hcl_end.  No TEXT
 * column.  *bytes: bytes of cells written; *added: deleted bits that
 * went from 0 to 1. */
void *stg_hcl_seg_addr(stg_pool *p, const stg_hcl_seg *s);
int stg_hcl_persist(stg_pool *p, const stg_hcl_seg *s, uint64_t off,
		    uint64_t len);
int stg_cap_update_apply(stg_pool *p, const stg_gpu_layout *l, int ncols,
			 const uint32_t *cols, const uint64_t *rowids,
			 uint64_t n, const stg_col_batch *vals,
			 uint64_t *bytes);
int stg_cap_delete_apply(stg_pool *p, const stg_gpu_layout *l,
			 const uint64_t *rowids, uint64_t n, uint64_t *added);

/* Recovery by a GPU: the hook is called during recovery at open for each
 * HCL segment to undo (the segment's header checked, its table found).
 * It returns GPMDB_OK when it applied every entry (*applied of them),
 * anything else to let the CPU do it.  Set per thread, before stg_open;
 * NULL (the default) = CPU only. */
typedef struct {
	char *base; /* the pool mapping */
	uint64_t map_len;
	stg_durability dur;
	uint64_t seg_off, seg_size;
	const stg_gpu_layout *layout;
} stg_hcl_undo_job;
typedef int (*stg_hcl_undo_hook)(const stg_hcl_undo_job *job,
				 uint64_t *applied);
void stg_set_hcl_undo_hook(stg_hcl_undo_hook fn);

/* Called with a pmem-mode pool's mapping just before storage unmaps it
 * to map the file again (growth, a shrink: the base may move), so that
 * whatever registered ranges of it with the GPU unregisters them while
 * the pages are still there.  A registration left on unmapped addresses
 * collides with a later mapping there: a column cache's cudaHostAlloc
 * failed with "resource already mapped" (test_index_bulk, H200).  One
 * hook for the process; NULL (the default): none. */
typedef void (*stg_unmap_hook)(void *base, uint64_t len);
void stg_set_unmap_hook(stg_unmap_hook fn);

/* What the last recovery on this thread did on the GPU. */
typedef struct {
	uint64_t segments;     /* undone by the hook */
	uint64_t entries;      /* entries it applied */
	uint64_t cpu_segments; /* left to the CPU (hook declined or absent) */
	double ms;	       /* time in the hook */
} stg_gpu_recovery_stats;
void stg_gpu_recovery_last(stg_gpu_recovery_stats *out);
void stg_gpu_recovery_reset(void);

#ifdef __cplusplus
}
#endif
#endif /* GPMDB_STG_GPU_H */
