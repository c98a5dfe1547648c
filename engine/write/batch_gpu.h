/*
 * batch_gpu.h - the engine's GPU write path (batch_gpu.c): where the
 * batch API and the DML executor hand rows to storage, these choose
 * between GPU kernels storing into the pool (backend=gpu) and the CPU
 * (stg_append / stg_update / stg_delete).  On failure the connection's
 * error is set and returned.
 */
#ifndef GPMDB_BATCH_GPU_H
#define GPMDB_BATCH_GPU_H

#include "../engine.h"

/* from: stg_append_from's (NULL: every column as stored); an
 * STG_FROM_I32 column goes up as int32_t and the kernels widen it. */
int bgpu_append(gpmdb *db, uint32_t tid, const stg_col_batch *cols,
		const uint8_t *from, uint64_t nrows);
int bgpu_update(gpmdb *db, uint32_t tid, int ncols, const uint32_t *cols,
		const uint64_t *rowids, uint64_t n, const stg_col_batch *vals);
int bgpu_delete(gpmdb *db, uint32_t tid, const uint64_t *rowids, uint64_t n);
/* The pool's mapping registered with CUDA for the GPU (once per mapping;
 * the ranges themselves as writes and loads need them); why on failure. */
int bgpu_register(gpmdb *db, char *why, size_t wlen);
/* INSERT ... SELECT (dml.c do_insert) with node, the planned SELECT, and
 * map (table column c <- node column map[c], -1: its DEFAULT; NULL: the
 * same order): under backend=gpu, when node is a GPU projection or
 * filter over a table scan, its result goes from the device into the
 * table without a round trip through the host and *done is set; else
 * *done is false (counted in gpu_write_stats' insert_select_host with
 * the reason) and the caller runs the general path.  tname: the table
 * as the statement names it (error messages). */
int bgpu_insert_select(gpmdb_stmt *st, uint32_t tid, const stg_schema *sch,
		       const char *tname, pnode *node, const int *map,
		       bool *done);

/* UPDATE (dml.c do_update) with node, the planned PROJECT (rowid, the
 * new values of cols[0..ncols)): under backend=gpu, when node is a GPU
 * projection or filter over a table scan, the rows and values go from
 * the device into the table (HCL kernels reading them in place) and into
 * the cached columns, and *done is set; else *done is false (counted in
 * gpu_write_stats' update_select_host with the reason) and the caller
 * runs the general path.  tname: the table as the statement names it. */
int bgpu_update_select(gpmdb_stmt *st, uint32_t tid, const stg_schema *sch,
		       const char *tname, pnode *node, int ncols,
		       const uint32_t *cols, bool *done);
/* The HCL kernels update rows rowids[0..n) (device, strictly increasing;
 * rng: the least, the greatest, 1) of columns cols with device values
 * dv[k] (the storage form, widths[k] bytes a value) and NULL bitmaps
 * dnl[k] (device, NULL: none); the cached copies of the columns take the
 * values.  The caller checked the values (NOT NULL) and that the path
 * fits (bgpu_update_dev_declines); db->changes is the caller's. */
int bgpu_update_dev(gpmdb *db, uint32_t tid, int ncols, const uint32_t *cols,
		    const uint64_t *rowids, uint64_t n, const uint64_t rng[3],
		    void *const *dv, const uint32_t *const *dnl,
		    const uint32_t *widths);
/* true, with the reason in why, when an UPDATE of cols of table tid
 * cannot be written by bgpu_update_dev: backend not gpu, TEXT columns,
 * an index covering one (the host path keeps its keys), conventional
 * logging, the CPU-assisted path, no GPU. */
bool bgpu_update_dev_declines(gpmdb *db, uint32_t tid, const stg_schema *sch,
			      int ncols, const uint32_t *cols, char *why,
			      size_t wlen);

/* Before stg_open: the GPU recovery hook for this open (backend=gpu or
 * GPMDB_GPU_RECOVERY=1; GPMDB_GPU_RECOVERY=0 turns it off). */
void bgpu_before_open(gpmdb *db);
/* The index sort and probe hooks (gpu/index_gpu.h) for the backend:
 * set under auto and gpu, cleared under cpu; GPMDB_GPU_INDEX=0 or 1
 * overrides.  At open and at every PRAGMA backend. */
/* After a statement that may have sorted or probed an index in bulk
 * (CREATE INDEX, REINDEX, large INSERT/UPDATE, bound key arrays): under
 * backend gpu, a bulk sort or probe the GPU declined is a counted
 * fallback, an error under gpu_strict (the statement then rolls back). */
int bgpu_index_check(gpmdb *db, const char *op);
void bgpu_index_hooks(gpmdb *db);
/* Before stg_close: the pool's CUDA registration goes. */
void bgpu_before_close(gpmdb *db);

/* PRAGMA gpu_persist, gpu_persist_scope, gpu_log, gpu_log_partitions,
 * gpu_update_mode, gpu_lines_min_density, gpu_write_stats,
 * gpu_write_fallback (the last fallback's reason), recovery_stats */
bool bgpu_is_pragma(const char *name);
int bgpu_pragma_columns(ast_stmt *s, const char ***names);
int bgpu_pragma(gpmdb_stmt *st, ast_stmt *s, const char *v, rel **out);

#endif /* GPMDB_BATCH_GPU_H */
