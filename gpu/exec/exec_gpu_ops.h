/*
 * exec_gpu_ops.h - between exec_gpu.c (backend choice, filter, project,
 * aggregate) and exec_gpu_ops.c (sort and top-N, join, DISTINCT, set
 * operations on the GPU).
 */
#ifndef GPMDB_EXEC_GPU_OPS_H
#define GPMDB_EXEC_GPU_OPS_H

#include "../../engine/engine.h"

/* The backend of an operator (exec_gpu.c xg_decide). */
enum { XG_CPU, XG_GPU, XG_WANTED_CPU, XG_NO_OP };

/* True for the kinds exec_gpu_ops.c runs: SORT, JOIN (SEMI/ANTI too),
 * DISTINCT, SETOP, LIMIT (a truncation of a GPU result; exec_gpu.c's
 * xg_decide decides it from its input). */
bool exec_gpu_ops_kind(int kind);
/* exec_gpu.c's backend choice of any node (XG_*, why as there). */
int exec_gpu_decide(exec_ctx *x, pnode *n, char *why, size_t len);
/* XG_* for such a node, the reason of a CPU choice in why. */
int exec_gpu_ops_decide(exec_ctx *x, pnode *n, char *why, size_t len);
/* SORT over a GPU PROJECT of a table scan, the projection kept on the
 * device and only its rows [want.skip, want.keep) brought back
 * (exec_gpu.c): GPMDB_OK, an error, or -1 "use the general path". */
int exec_gpu_sort_dev(exec_ctx *x, pnode *n, exec_rows want, rel **out);
/* Process-wide (PRAGMA gpu_stats part_ops, part_passes): SORT, JOIN,
 * DISTINCT and set operations that ran in passes over parts of their
 * inputs (too large for the device at once), and those passes. */
extern uint64_t xo_part_ops, xo_part_passes;
/* Device bytes of columns 0..nc-1 of r uploaded (values, NULL bytes,
 * text). */
uint64_t exec_gpu_rel_bytes(const rel *r, int nc);
/* Rows [lo, lo + m) of r as v, its columns borrowed (vc: room for
 * r->ncols; never rel_free v). */
void exec_gpu_rel_view(const rel *r, uint64_t lo, uint64_t m, rcol *vc, rel *v);
/* exec_gpu.c's lock around GPU work (one stream, one program slot). */
void exec_gpu_lock(void);
void exec_gpu_unlock(void);

#endif /* GPMDB_EXEC_GPU_OPS_H */
