/*
 * batch_keys_gpu.h - the rows of a batch of bound keys found on the GPU in
 * one pass over the cached key column (batch_keys_gpu.c, gpu/keymatch.h).
 */
#ifndef GPMDB_BATCH_KEYS_GPU_H
#define GPMDB_BATCH_KEYS_GPU_H

#include <stdbool.h>

#include "../engine.h"

#include "../../gpu/keymatch.h"

/* Matched live rows (gpu/keymatch.h gpu_keymatch_out, which the host
 * paths of batch.c fill too): row ids ascending, each with the last
 * parameter row whose key it has; or kept on the device (drowid, dprow,
 * rng).  bgpu_keymatch_free frees either. */
typedef gpu_keymatch_out bgpu_keymatch;

void bgpu_keymatch_free(bgpu_keymatch *m);

/*
 * Under backend=gpu, n keys (column ci's storage form; a key with its
 * bit set in nulls or skip[j] set matches nothing) of column col of table
 * tid matched on the GPU; used[j] (may be NULL) set to whether parameter
 * row j matched; keep: the matches stay on the device for
 * bgpu_update_keys.  1 when it ran: *rc GPMDB_OK and *m filled, or an
 * error set on db.  0 when the batch is small (under 16384 keys), the
 * column not integer-like, no GPU, PRAGMA gpu_key_match = probe, or the
 * column too big for the device (the reason kept for PRAGMA
 * gpu_write_stats): the caller finds the rows its own way.
 */
int bgpu_match_keys(gpmdb *db, uint32_t tid, const stg_column_info *ci, int col,
		    const void *keys, const uint32_t *nulls,
		    const uint8_t *skip, uint64_t n, uint8_t *used, bool keep,
		    bgpu_keymatch *m, int *rc);
/*
 * UPDATE by bound keys written from a match kept on the device: the set
 * columns' values, host arrays of the n parameter rows in the storage
 * form (vals[k] with its NULL bitmap; the caller checked them), gathered
 * into the matched rows' order on the device and written by the HCL
 * kernels (bgpu_update_dev).  The connection's error on failure.
 */
int bgpu_update_keys(gpmdb *db, uint32_t tid, const stg_schema *sch, int ncols,
		     const uint32_t *cols, const stg_col_batch *vals,
		     uint64_t n, const bgpu_keymatch *m);
/* gpu_write_stats' key match rows through row(ctx, name, value); why: the
 * last declined batch's reason. */
int bgpu_keys_stat_rows(int (*row)(void *ctx, const char *name, double v),
			void *ctx, char *why, size_t wlen);

#endif /* GPMDB_BATCH_KEYS_GPU_H */
