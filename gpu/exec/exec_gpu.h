/*
 * exec_gpu.h - the GPU executor's API for the rest of the engine
 * (gpu/exec/: the host side of the GPU operators, beside their kernels in
 * gpu/).  Built on the CPU executor's relations and compiled expressions
 * (engine/exec/exec.h); exec_gpu_node is called by exec_node for each
 * plan node.
 */
#ifndef GPMDB_EXEC_GPU_H
#define GPMDB_EXEC_GPU_H

#include "../../engine/exec/exec.h"

/* exec_gpu.c: the GPU backend.  exec_gpu_node runs n on the GPU when
 * the backend choice says so: GPMDB_OK (*out set), an error, or -1 "run
 * it on the CPU". */
int exec_gpu_node(exec_ctx *x, pnode *n, rel **out);
/* exec_gpu_ops.c: ORDER BY n on the GPU keeping its first keep rows
 * (top-N under LIMIT): as exec_gpu_node, -1 means "on the CPU". */
int exec_gpu_sort(exec_ctx *x, pnode *n, uint64_t keep, rel **out);
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
