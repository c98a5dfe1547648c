/*
 * dml_cap.h - CPU-assisted persistence (GPM's CAP-mm) of UPDATE and
 * DELETE batches (gpu/dml_cap.cu; docs/gpu.md "CPU-assisted
 * persistence"): on a pool CUDA cannot map (msync mode), the GPU builds
 * a batch's HCL undo entries and tails in HBM from the column cache, and
 * the host copies them down into the pool's segment, persists them, then
 * writes the data.
 *
 * The image has the segment's own layout (storage/hcl.h) from the tails'
 * offset on, so the host copies it with large memcpys: entries region
 * first (persisted), tails after (persisted), as the HCL protocol wants.
 */
#ifndef GPMDB_GPU_DML_CAP_H
#define GPMDB_GPU_DML_CAP_H

#include <stddef.h>
#include <stdint.h>

#include "../storage/hcl.h"

#ifdef __cplusplus
extern "C" {
#endif

/* An updated column's old values on the device: the column cache's
 * array of the table's live rows (gpu/cache.h), width bytes a value,
 * NULL bytes (1 = NULL) or NULL where the column has no NULL. */
typedef struct {
	const void *vals;
	const uint8_t *nulls;
	uint32_t col;	/* table column */
	uint32_t width; /* bytes a value: 1, 2, 4 or 8 */
} gpu_cap_col;

typedef struct {
	double upload_ms; /* row ids (and the live-row map) to the device */
	double kernel_ms; /* the entries and tails built in HBM */
	double fetch_ms;  /* image regions copied down (gpu_cap_fetch) */
	uint64_t bytes;	  /* bytes of log built */
} gpu_cap_timing;

typedef struct gpu_cap_batch gpu_cap_batch;

/*
 * Builds the log of a batch in HBM: thread i of geometry g logs row
 * rowids[i] (host array), reading its old values (UPDATE: ncols columns
 * of cols) from the cache arrays, whose index j of row r is r itself
 * when live_rows is NULL (no deleted rows), else the j with
 * live_rows[j] == r (the cache's row id column, device, nlive rows).
 * DELETE (ncols 0): one HCL_K_DELETE entry for each live row; *added:
 * their number.  A row an UPDATE names that is not live (deleted, or
 * past the cache) makes GPMDB_NOTFOUND: nothing was written anywhere,
 * the caller may write the batch another way.  *out: free with
 * gpu_cap_free.
 */
int gpu_cap_build(const hcl_geom *g, const uint64_t *rowids, uint64_t n,
		  int ncols, const gpu_cap_col *cols, const int64_t *live_rows,
		  uint64_t nlive, uint64_t nrows, uint64_t *added,
		  gpu_cap_batch **out, gpu_cap_timing *t, char *err,
		  size_t errlen);
/* Region 0: the entries of threads [0, n) (hcl_entries_offset on),
 * region 1: their tails (hcl_tails_offset on).  Bytes of a region. */
uint64_t gpu_cap_region_bytes(const gpu_cap_batch *b, int region);
/* Copies region into dst (host memory, e.g. the segment in the pool
 * mapping) through pinned staging, on every core. */
int gpu_cap_fetch(gpu_cap_batch *b, int region, void *dst, gpu_cap_timing *t,
		  char *err, size_t errlen);
void gpu_cap_free(gpu_cap_batch *b);
/* The crash tests' launch notes (gpu_dml_set_launch_hook): done 0 before
 * the batch's GPU log is built, 1 once the host wrote its data. */
void gpu_cap_note(int done);

#ifdef __cplusplus
}
#endif
#endif /* GPMDB_GPU_DML_CAP_H */
