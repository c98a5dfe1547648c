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
/* Passes (exec_gpu_ops.c "passes"): at most XO_MAX_PARTS parts; the
 * parts for rows of about bytes device bytes (4x for working memory), at
 * most per rows each. */
#define XO_MAX_PARTS 4096u
uint32_t xo_parts_for(uint64_t bytes, uint64_t rows, uint64_t per);
/* A split of r's rows by the hash of columns 0..nc-1 (exec_hash_row, the
 * CPU's hash tables': equal for rows the GPU finds equal, NULLs equal,
 * -0.0 = 0.0, TEXT binary) into np parts: part p's rows, ascending, are
 * idx[off[p] .. off[p + 1]); pt[i] is row i's part (XO_NO_PART: with
 * skip_null, a row with a NULL among the columns, in no part). */
#define XO_NO_PART UINT32_MAX
typedef struct xo_split {
	uint32_t np;
	uint32_t *pt, *idx;
	uint64_t *off;
} xo_split;
int xo_split_rows(exec_ctx *x, const rel *r, int nc, uint32_t np,
		  bool skip_null, xo_split *sp);
void xo_split_free(xo_split *sp);
/* The rows of sp's largest part. */
uint64_t xo_split_max(const xo_split *sp);
/* A new relation of rows idx[0..m) of a (and b after it, na = a's rows),
 * with a's column types, text copied. */
int xo_rows_rel(exec_ctx *x, const rel *a, const rel *b, const uint32_t *idx,
		uint64_t m, rel **out);
/* exec_gpu.c's lock around GPU work (one stream, one program slot). */
void exec_gpu_lock(void);
void exec_gpu_unlock(void);

#endif /* GPMDB_EXEC_GPU_OPS_H */
