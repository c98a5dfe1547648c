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
 * stopped the GPU when it was wanted (a fallback).  want: the rows a
 * LIMIT above a SORT wants (exec.h; only the SORT reads it).
 */
#define EXEC_OP_CPU (-1)
typedef int (*exec_gpu_fn)(exec_ctx *x, pnode *n, exec_rows want, rel **out,
			   char *why, size_t len);
/* exec_gpu.c: FILTER, PROJECT, AGG with the FILTERs below them */
int exec_gpu_rows(exec_ctx *x, pnode *n, exec_rows want, rel **out, char *why,
		  size_t len);
/* exec_gpu_ops.c: SORT (top-N: its rows [want.skip, want.keep)) */
int exec_gpu_sort(exec_ctx *x, pnode *n, exec_rows want, rel **out, char *why,
		  size_t len);
/* exec_gpu_ops.c: JOIN (SEMI/ANTI too), DISTINCT, SETOP, LIMIT */
int exec_gpu_ops_node(exec_ctx *x, pnode *n, exec_rows want, rel **out,
		      char *why, size_t len);
/*
 * The device-batch implementations of exec_op.c's table (exec_batch in
 * exec.h): each fills b with node n's rows on the device for the GPU
 * operator consumer above it (win: the window of a streamed scan), or
 * returns EXEC_OP_CPU: no device batch here (too large for the device
 * too: exec_op_batch gives n's host relation instead, uploaded), or
 * XG_STREAM (a table scan too large for the cache) or an error.
 */
typedef int (*exec_gpu_batch_fn)(exec_ctx *x, pnode *consumer, pnode *n,
				 struct xg_src *b, const struct xg_win *win);
/* exec_gpu_prep.c: a table scan from the HBM cache, a join whose pairs
 * stay on the device, a projection or a GROUP BY kept there */
int exec_gpu_batch_scan(exec_ctx *x, pnode *consumer, pnode *n,
			struct xg_src *b, const struct xg_win *win);
int exec_gpu_batch_join(exec_ctx *x, pnode *consumer, pnode *n,
			struct xg_src *b, const struct xg_win *win);
int exec_gpu_batch_proj(exec_ctx *x, pnode *consumer, pnode *n,
			struct xg_src *b, const struct xg_win *win);
int exec_gpu_batch_agg(exec_ctx *x, pnode *consumer, pnode *n, struct xg_src *b,
		       const struct xg_win *win);
/* True when rc (not GPMDB_OK) is the GPU's failure (its message starts
 * "GPU "; the operator falls back), not the query's own error: an SQL
 * error of a row (GPMDB_ERROR) or an interrupt. */
bool exec_gpu_failed(gpmdb *db, int rc);
/* True while this thread runs inside a GPU operator (FILTER, PROJECT,
 * AGGREGATE chains, the device sort): an operator run for its input is
 * nested, and that operator may make room (exec_op_run). */
bool exec_gpu_nested(void);
void exec_gpu_annotate(gpmdb_stmt *st, pnode *root);
/* Before a SELECT runs: while CUDA's setup still runs on its thread, the
 * pages of the columns root's scans read are mapped on every core. */
void exec_gpu_prefetch(exec_ctx *x, pnode *root);
/* EXPLAIN: after exec_gpu_annotate, *gpu: n runs on the GPU; returns a
 * note on the GPU's work or the reason for the CPU, or NULL. */
const char *exec_gpu_explain(const pnode *n, bool *gpu);
bool exec_gpu_is_pragma(const char *name);
int exec_gpu_pragma_columns(ast_stmt *s, const char ***names);
int exec_gpu_pragma(gpmdb_stmt *st, ast_stmt *s, const char *v, rel **out);
int exec_gpu_set_backend(gpmdb *db, const char *v);
void exec_gpu_open(gpmdb *db);
void exec_gpu_close(gpmdb *db);

#endif /* GPMDB_EXEC_GPU_H */
