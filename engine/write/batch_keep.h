/*
 * batch_keep.h - the copies a GPU INSERT leaves for the column cache.
 */
#ifndef GPMDB_BATCH_KEEP_H
#define GPMDB_BATCH_KEEP_H

#include "../../gpu/gpu_dml.h"
#include "../engine.h"

/*
 * A GPU INSERT into an empty table leaves its columns in the column cache
 * (gcache_adopt): the first statement after a bulk load then finds them
 * there instead of uploading them again (bench_batch's first UPDATE a
 * and b after the INSERT spent 12-14 ms loading a column each).  The
 * pipeline copies each chunk on the device as it goes (gpu_append_keep).
 * Only when the columns fit the cache's room twice over; otherwise, or
 * when device memory is short, nothing is kept.
 */
typedef struct bgk_keep {
	void *vals[STG_MAX_COLUMNS];
	uint8_t *nullb[STG_MAX_COLUMNS];
	uint64_t bytes[STG_MAX_COLUMNS];
	gpu_append_copies copies;
} bgk_keep;

/* Device buffers for the n rows from start of every column (nls[c]: the
 * column's NULL bits, NULL when none); false: nothing is kept. */
bool bgk_alloc(gpmdb *db, uint32_t tid, const stg_schema *sch, uint64_t start,
	       uint64_t n, const uint32_t **nls, bgk_keep *k);
/* After the INSERT's rows are in: the copies become cache entries. */
void bgk_adopt(gpmdb *db, uint32_t tid, const stg_schema *sch, uint64_t n,
	       bgk_keep *k);
/* What is still held (after a failure, or what bgk_adopt left). */
void bgk_free(const stg_schema *sch, bgk_keep *k);

#endif
