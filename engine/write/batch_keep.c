/*
 * batch_keep.c - the copies a GPU INSERT leaves for the column cache
 * (batch_keep.h; batch_gpu.c bgpu_append, gpu_append_keep).
 */
#include "batch_keep.h"

#include "../../gpu/cache.h"
#include "../../gpu/exec/exec_gpu_ops.h"
#include "../../gpu/gpu.h"

#include <string.h>

void bgk_free(const stg_schema *sch, bgk_keep *k)
{
	exec_gpu_lock();
	for (int c = 0; c < sch->ncols; c++) {
		gpu_free(k->vals[c], NULL, 0);
		k->vals[c] = NULL;
	}
	exec_gpu_unlock();
}

bool bgk_alloc(gpmdb *db, uint32_t tid, const stg_schema *sch, uint64_t start,
	       uint64_t n, const uint32_t **nls, bgk_keep *k)
{
	uint64_t need = 0;
	char err[300];

	memset(k, 0, sizeof(*k));
	if (start != 0 || stg_deleted_count(db->pool, tid) ||
	    sch->ncols > STG_MAX_COLUMNS)
		return false;
	for (int c = 0; c < sch->ncols; c++)
		need +=
		    n * stg_type_width(sch->cols[c].type) + (nls[c] ? n : 0);
	exec_gpu_lock();
	if (need * 2 > gcache_room()) {
		exec_gpu_unlock();
		return false;
	}
	for (int c = 0; c < sch->ncols; c++)
		if (gcache_adopt_alloc(sch->cols[c].type, n, nls[c] != NULL,
				       &k->vals[c], &k->nullb[c], &k->bytes[c],
				       err, sizeof(err)) != GPMDB_OK) {
			exec_gpu_unlock();
			bgk_free(sch, k);
			return false;
		}
	exec_gpu_unlock();
	k->copies.vals = k->vals;
	k->copies.nullb = k->nullb;
	return true;
}

/* After the INSERT's rows are in: the copies become cache entries (each
 * taken by the cache, or freed by it). */
void bgk_adopt(gpmdb *db, uint32_t tid, const stg_schema *sch, uint64_t n,
	       bgk_keep *k)
{
	exec_gpu_lock();
	for (int c = 0; c < sch->ncols; c++) {
		(void)gcache_adopt(db->pool, db->gpu_owner, tid, c,
				   sch->cols[c].type, k->vals[c], k->bytes[c],
				   n, k->nullb[c] != NULL);
		k->vals[c] = NULL;
	}
	exec_gpu_unlock();
}