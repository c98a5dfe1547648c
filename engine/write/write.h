/*
 * write.h - the batch write path (engine/write/): the batch API's array
 * binding and columnar results (batch.c), rows to storage with their
 * phases (write_phases.c), dml.c's services for them.  The GPU write path
 * itself is batch_gpu.h.
 */
#ifndef GPMDB_WRITE_H
#define GPMDB_WRITE_H

#include "../exec/exec.h"

/* ---- batch API (batch.c): array binding, columnar results ---- */

typedef struct stmt_batch stmt_batch;
/* True when arrays are bound and the statement is not running row-wise. */
bool batch_active(gpmdb_stmt *st);
/* Before a statement runs: MISUSE for arrays on other than INSERT, UPDATE,
 * DELETE, or arrays of different lengths. */
int batch_check(gpmdb_stmt *st, ast_stmt *s);
/* Runs an INSERT/UPDATE/DELETE once for all parameter rows (dml_exec
 * calls it inside the statement's transaction or savepoint). */
int batch_exec(gpmdb_stmt *st, ast_stmt *s);
/* Parameter i (1-based) got a scalar: its array binding ends. */
void batch_unbind(gpmdb_stmt *st, int i);
void batch_result_free(gpmdb_stmt *st);
void batch_stmt_free(gpmdb_stmt *st);

/* write_phases.c: rows to storage (bgpu_*) with their phase and bytes;
 * the commit and a savepoint's release as the commit phase */
int wp_append(gpmdb *db, uint32_t tid, const stg_schema *sch,
	      const stg_col_batch *b, uint64_t n);
/* wp_append where from[c] says how column c's values come (storage.h
 * stg_append_from; NULL: as wp_append): the CPU path only, the caller
 * converts them itself for backend = gpu. */
int wp_append_from(gpmdb *db, uint32_t tid, const stg_schema *sch,
		   const stg_col_batch *b, const uint8_t *from, uint64_t n);
int wp_update(gpmdb *db, uint32_t tid, const stg_schema *sch, int ncols,
	      const uint32_t *cols, const uint64_t *rowids, uint64_t n,
	      const stg_col_batch *vals);
int wp_delete(gpmdb *db, uint32_t tid, const uint64_t *rowids, uint64_t n);
int wp_commit(gpmdb *db);
int wp_release(gpmdb *db, const stg_mark *m);
/* EXPLAIN ANALYZE INSERT/UPDATE/DELETE after the run: st->explain gets
 * head, the plan that ran (st->plan), the batch path and the phases. */
int wp_explain(gpmdb_stmt *st, const char *head);
/* PRAGMA gpu_write_stats rows (name, value, bytes; bytes < 0: NULL) and
 * the phase rows of the last write. */
int wp_stat_row(gpmdb *db, rel *r, const char *name, double value,
		int64_t bytes);
int wp_pragma_rows(gpmdb *db, rel *r);

/* dml.c services for batch.c */
typedef struct dml_key {
	int n;
	int cols[32];
} dml_key;
/* Every set of columns that must be unique (PRIMARY KEY, UNIQUE, unique
 * indexes); *keys malloc'd. */
int dml_unique_keys(gpmdb *db, const stg_schema *sch, dml_key **keys, int *nk);
/* Table by name (views and missing tables get SQLite's messages). */
int dml_find_table(gpmdb *db, const char *name, uint32_t *tid,
		   stg_schema **sch);
/* A column's DEFAULT value (NULL when none); text lives in hold. */
int dml_default_value(gpmdb_stmt *st, const stg_column_info *c, sval *v,
		      rel *hold);

#endif /* GPMDB_WRITE_H */
