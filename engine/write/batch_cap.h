/*
 * batch_cap.h - CPU-assisted persistence of UPDATE/DELETE batches
 * (batch_cap.c, docs/gpu.md "CPU-assisted persistence"): the GPU builds
 * the undo log from the column cache, the host persists it and the data.
 */
#ifndef GPMDB_BATCH_CAP_H
#define GPMDB_BATCH_CAP_H

#include "../engine.h"

/* PRAGMA gpu_persist's values (db->gpu_persist) */
enum {
	BCAP_PERSIST_AUTO = 0,
	BCAP_PERSIST_KERNEL = 1,
	BCAP_PERSIST_CAP = 2,
	/* the host writes CAP batches alone (the CAP before issue 16), to
	 * compare */
	BCAP_PERSIST_HOST = 3
};

/* Returned when the GPU cannot take the batch and nothing was written:
 * the caller writes it through stg_update/stg_delete. */
#define BCAP_DECLINED (-1)

/* backend = gpu and gpu_persist = cap, or auto in msync mode. */
bool bcap_wanted(gpmdb *db);
/* GPMDB_OK, BCAP_DECLINED, or an error set on db (the statement's
 * rollback undoes what the log holds). */
int bcap_update(gpmdb *db, uint32_t tid, const stg_schema *sch, int ncols,
		const uint32_t *cols, const uint64_t *rowids, uint64_t n,
		const stg_col_batch *vals);
int bcap_delete(gpmdb *db, uint32_t tid, const stg_schema *sch,
		const uint64_t *rowids, uint64_t n);
/* Whether an UPDATE by predicate whose rows and values the GPU found
 * (batch_gpu.c bgpu_update_select) takes them down to the CAP writer:
 * CAP wanted, no conventional log, no TEXT set column, a GPU. */
bool bcap_select_ok(gpmdb *db, const stg_schema *sch, int ncols,
		    const uint32_t *cols);
/* The device's row ids (ascending) and storage-typed values (widths,
 * NULL bitmaps or NULL) of such an UPDATE, copied down and written by
 * the CAP writer (wp_update); the connection's error set on failure. */
int bcap_update_from_dev(gpmdb *db, uint32_t tid, const stg_schema *sch,
			 int ncols, const uint32_t *cols,
			 const uint64_t *drowids, uint64_t n, void *const *dv,
			 const uint32_t *const *dnl, const uint32_t *widths);
/* gpu_write_stats' CAP rows through row(ctx, name, value); why: the last
 * batch the host wrote alone and its reason. */
int bcap_stat_rows(int (*row)(void *ctx, const char *name, double v), void *ctx,
		   char *why, size_t wlen);

#endif /* GPMDB_BATCH_CAP_H */
