/*
 * engine.h - every group's header, for the statement layer (db.c, stmt.c,
 * pragma.c, backup.c, explain.c) and the executors.  The groups
 * (docs/engine.md "Layout"):
 *
 *   types.h, core.h        values, connections, statements, errors
 *   plan/plan.h            the planner: bind.c, plan*.c, index/plan_index.c
 *   exec/exec.h            the CPU executor: exec.c, exec/rel.c,
 *                          exec/compile.c, index/exec_index.c
 *   ../gpu/exec/exec_gpu.h the GPU executor's host side (gpu/exec/)
 *   write/write.h          the batch write path: write/, dml.c
 *
 * The planner includes plan/plan.h only (tests/check_layout.sh).
 */
#ifndef GPMDB_ENGINE_H
#define GPMDB_ENGINE_H

#include "../gpu/exec/exec_gpu.h"
#include "core.h"
#include "exec/exec.h"
#include "plan/plan.h"
#include "write/write.h"

/* ---- statements ---- */

/* explain.c: the EXPLAIN text of root (NULL: head alone, a statement with
 * no plan) under the line head (NULL: none) whose backend column says
 * head_right (NULL: "cpu"): each node's backend as the GPU executor
 * chooses it and its CPU pipeline, then the reasons for the CPU; analyze:
 * with the figures and pipelines of the run just made (EXPLAIN ANALYZE). */
int explain_plan(gpmdb_stmt *st, pnode *root, const char *head,
		 const char *head_right, bool analyze);
void explain_analyze_reset(pnode *n);
/* A PRAGMA result row appended to r: name (when not NULL), then txt, or
 * num when txt is NULL (pragma.c; the GPU pragmas use it too). */
int pragma_row(gpmdb *db, rel *r, const char *name, const char *txt, sval num);
/* A row of r.ncols values v appended to a PRAGMA result (pragma.c,
 * index_sql.c). */
int pragma_put_row(gpmdb *db, rel *r, const sval *v);

int dml_exec(gpmdb_stmt *st, ast_stmt *s);
/* What SQLite reports at prepare rather than step: CREATE of a name that
 * is taken ("table t already exists"); checked again when it runs. */
int dml_prepare_check(gpmdb_stmt *st, ast_stmt *s);
/* EXPLAIN UPDATE/DELETE: st->plan is the plan that finds the rows. */
int dml_explain_plan(gpmdb_stmt *st, ast_stmt *s);
int pragma_exec(gpmdb_stmt *st, ast_stmt *s, rel **out);
/* The indexes' SQL surface (index_sql.c): PRAGMA index_list(t) (SQLite's
 * columns, then bytes and entries), PRAGMA index_info(i) / index_xinfo(i)
 * into r (its columns made by pragma_exec), and REINDEX [[main.]name]
 * (check_only: resolve the name, as at prepare, and rebuild nothing). */
int ixsql_index_list(gpmdb *db, rel *r, const char *table);
int ixsql_index_info(gpmdb *db, rel *r, const char *index, bool xinfo);
int ixsql_reindex(gpmdb_stmt *st, ast_stmt *s, bool check_only);
/* backup.c: VACUUM [main] INTO 'file' (plain VACUUM: an error saying so). */
int vacuum_exec(gpmdb_stmt *st, ast_stmt *s);
/* PRAGMA checkpoint, checkpoint_file, checkpoint_interval,
 * checkpoint_status (backup.c); ckpt_close stops the thread. */
typedef struct db_ckpt db_ckpt;
bool ckpt_is_pragma(const char *name);
int ckpt_pragma_columns(ast_stmt *s, const char ***names);
int ckpt_pragma(gpmdb_stmt *st, ast_stmt *s, const char *v, rel **out);
void ckpt_close(gpmdb *db);
int stmt_add_cx(gpmdb_stmt *st, cexpr *c);
int stmt_add_hold(gpmdb_stmt *st, rel *r);
int stmt_own(gpmdb_stmt *st, void *p);
int pragma_columns(ast_stmt *s, const char ***names);
/* Readies st->x for one execution (a new generation, no memory used). */
void stmt_exec_init(gpmdb_stmt *st);
int stmt_run_select(gpmdb_stmt *st, rel **out);
/* Drops the plan and plans again (the row-wise batch path needs a fresh
 * plan arena per parameter row). */
int stmt_replan(gpmdb_stmt *st);

#endif /* GPMDB_ENGINE_H */
