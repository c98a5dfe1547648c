/*
 * exec_gpu.h - the GPU executor's API for the rest of the engine
 * (gpu/exec/: the host side of the GPU operators, beside their kernels in
 * gpu/).  Built on the CPU executor's relations and compiled expressions
 * (engine/exec/exec.h); engine/exec/exec_op.c's table of physical
 * operators names the GPU implementations below.
 */
#ifndef GPMDB_EXEC_GPU_H
#define GPMDB_EXEC_GPU_H

#include "../../engine/exec/exec.h"

/*
 * The GPU implementations of the physical operators (engine/exec/
 * exec_op.c's table; exec_op_run chooses and falls back).  Each runs n on
 * the GPU when the backend choice says so and returns GPMDB_OK (*out
 * set), an error, or EXEC_OP_CPU: the CPU runs n, why empty when the CPU
 * was chosen (below gpu_threshold, no GPU version) and saying what
 * stopped the GPU when it was wanted (a fallback).  keep: the rows a
 * LIMIT above a SORT wants (UINT64_MAX: all).
 */
#define EXEC_OP_CPU (-1)
typedef int (*exec_gpu_fn)(exec_ctx *x, pnode *n, uint64_t keep, rel **out,
			   char *why, size_t len);
/* exec_gpu.c: FILTER, PROJECT, AGG with the FILTERs below them */
int exec_gpu_rows(exec_ctx *x, pnode *n, uint64_t keep, rel **out, char *why,
		  size_t len);
/* exec_gpu_ops.c: SORT (top-N: its first keep rows) */
int exec_gpu_sort(exec_ctx *x, pnode *n, uint64_t keep, rel **out, char *why,
		  size_t len);
/* exec_gpu_ops.c: JOIN (SEMI/ANTI too), DISTINCT, SETOP, LIMIT */
int exec_gpu_ops_node(exec_ctx *x, pnode *n, uint64_t keep, rel **out,
		      char *why, size_t len);
/* True when rc (not GPMDB_OK) is the GPU's failure (its message starts
 * "GPU "; the operator falls back), not the query's own error: an SQL
 * error of a row (GPMDB_ERROR) or an interrupt. */
bool exec_gpu_failed(gpmdb *db, int rc);
void exec_gpu_annotate(gpmdb_stmt *st, pnode *root);
/* EXPLAIN: after exec_gpu_annotate, *gpu: n runs on the GPU; returns a
 * note on the GPU's work or the reason for the CPU, or NULL. */
const char *exec_gpu_explain(const pnode *n, bool *gpu);
bool exec_gpu_is_pragma(const char *name);
int exec_gpu_pragma_columns(ast_stmt *s, const char ***names);
int exec_gpu_pragma(gpmdb_stmt *st, ast_stmt *s, const char *v, rel **out);
int exec_gpu_set_backend(gpmdb *db, const char *v);
void exec_gpu_open(gpmdb *db);
void exec_gpu_close(gpmdb *db);
/* After a writing statement or a transaction's end: the GPU column
 * cache's entries become stale.  Returns rc. */
int exec_gpu_after_write(int rc);

#endif /* GPMDB_EXEC_GPU_H */
