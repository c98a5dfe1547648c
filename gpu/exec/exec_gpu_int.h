/*
 * exec_gpu_int.h - between the GPU executor's files (gpu/exec/):
 *
 *   exec_gpu.c         backend choice, EXPLAIN, projection and filter,
 *                      exec_gpu_rows, INSERT ... SELECT's device result
 *   exec_gpu_src.c     device sources, program runs, fetches, windows
 *   exec_gpu_prep.c    a source's preparation: filters, device joins,
 *                      projections and GROUP BYs kept on the device
 *   exec_gpu_agg.c     aggregates, GROUP BY, the fused aggregate
 *   exec_gpu_stream.c  streamed scans (tables larger than the cache)
 *   exec_gpu_pragma.c  the GPU pragmas and statistics
 *   exec_gpu_ops.c     sort, join, DISTINCT, set operations (exec_gpu_ops.h)
 */
#ifndef GPMDB_EXEC_GPU_INT_H
#define GPMDB_EXEC_GPU_INT_H

#include "../../engine/engine.h"
#include "../../engine/value.h"
#include "../../engine/write/batch_gpu.h"
#include "exec_gpu_dev.h"
#include "exec_gpu_ops.h"

#include "../cache.h"
#include "../gpu.h"
#include "../gpu_dml.h"
#include "../index_gpu.h"

/* Measured: tpc/bench_threshold on the H100 (docs/gpu.md "Choosing the
 * backend"): the GPU wins from 10k-30k rows (filter, group by, top-N),
 * a join from 100k. */
#define XG_DEFAULT_THRESHOLD 30000

/* Not a GPMDB code: "run this node on the CPU". */
#define XG_DECLINE (-1)

/* Not a GPMDB code: "the chain's columns do not fit the cache: stream
 * the scan in row windows" (xg_stream). */
#define XG_STREAM (-2)

/* Not a GPMDB code: "the fused scan-filter-aggregate does not apply:
 * run the filters, then the aggregate" (xg_fused). */
#define XG_UNFUSED (-3)

/* A streamed window's device bytes: at least this much */
#define XG_WIN_MIN_BUDGET (256u << 10)

/* A window of a streamed scan: physical rows [row0, row0 + nrows) of the
 * table, live of them live; bytes: its needed columns on the device. */
typedef struct xg_win {
	uint64_t row0, nrows, live, bytes;
	uint64_t text; /* of bytes: the TEXT columns' (gcache_text_limit) */
	/* a window of a host source (xg_stream_host): its rows, borrowed,
	 * instead of running the source */
	rel *host;
} xg_win;

/* GROUP BY keys on the GPU (gpu_group_agg's limit) */
#define XG_MAX_KEYS 64

typedef struct xg_col {
	bool loaded;
	gpu_col col;
	const char *text; /* TEXT: device buffer */
	uint64_t ntext;
	const gcache_seg *seg; /* device offset -> host bytes */
	uint32_t nseg;
	uint32_t ndata; /* values at col.data (a joined source's column:
			   its leaf's rows, read through col.sel) */
} xg_col;

/* A leaf of a joined source (xg_prepare_join): a scan or host source
 * whose columns are the joined source's [col0, col0 + src->ncols), at
 * its rows idx[0..nrows of the joined source) (device). */
typedef struct xg_leaf {
	struct xg_src *src;
	uint32_t *idx;
	int col0;
	bool borrowed; /* src belongs to someone else */
} xg_leaf;

typedef struct xg_src {
	exec_ctx *x;
	pnode *scan;	  /* cache source, or NULL */
	rel *in;	  /* host source */
	bool in_borrowed; /* in belongs to someone else (a host window) */
	uint32_t nrows;
	int ncols;
	xg_col *cols;
	uint32_t *sel; /* device selection, NULL = all rows */
	uint32_t nsel;
	/* a joined source: its leaves (nrows rows, never a sel; filters
	 * and the residual compact the leaves' idx instead) */
	xg_leaf *leaf;
	int nleaf;
	/* a streamed scan: the window (columns loaded for it alone, not
	 * cached) and, for an AGG, the merge of the windows' groups */
	const xg_win *win;
	struct xg_sagg *sagg;
	/* set by the caller of xg_agg over a host window with GROUP BY keys:
	 * *firsts gets the groups' first rows (window rows), in the order
	 * of the result (malloc'd) */
	uint32_t **firsts;
	/* a projection kept on the device (xg_prepare_proj): its outputs
	 * are the columns, own the source they were computed over */
	struct xg_out *outs;
	int nouts;
	struct xg_src *own;
	/* a fused AGG (xg_fused): no filter ran, the aggregate evaluates
	 * these terms itself over all nrows rows */
	bool fuse;
	const gpu_term *terms;
	int nterms;
	/* what to free */
	void *dev[512];
	int ndev;
	void *host[512];
	int nhost;
} xg_src;

typedef struct xg_out {
	gpu_col col[BC_MAX_OUTPUTS];
	bc_program *p;	 /* the program as run (its constant text) */
	gcache_seg *seg; /* the run's text buffer -> host */
	uint32_t nseg;
	const char *dtext; /* the run's text buffer (device) */
	uint64_t ntext;	   /* its bytes */
	bool have;
} xg_out;

/* A group's merged aggregate: count, exact sum, min/max, REAL sum. */
typedef struct xg_acc {
	uint64_t cnt;
	__int128 sum;
	int64_t mm;
	double f;
} xg_acc;

/* Process-wide counters (PRAGMA gpu_stats). */
extern uint64_t xg_fused_aggs, xg_fused_declines;
extern uint64_t xg_prefetch_bytes, xg_prefetch_ns; /* exec_gpu.c */
extern uint64_t xg_kept_aggs;
extern uint64_t xg_text_merges, xg_text_merged_bytes;
extern uint64_t xg_dev_joins;
extern uint64_t xg_stream_queries, xg_stream_windows, xg_stream_shrinks;
extern uint64_t xg_agg_parts_runs, xg_stream_agg_parts, xg_stream_sels;

/* ---- exec_gpu.c ---- */

int xg_expr_ok(exec_ctx *x, pnode *n, int i, ast_expr *e, bool post,
	       const pnode *in, cexpr **out, char *why, size_t len);
pnode *xg_source(exec_ctx *x, pnode *n, char *why, size_t len);
uint64_t xg_scan_rows(gpmdb *db, const pnode *s);
int xg_decide(exec_ctx *x, pnode *n, char *why, size_t len);
int xg_project(exec_ctx *x, pnode *n, xg_src *s, rel **out);
int xg_filter_out(exec_ctx *x, pnode *n, xg_src *s, rel **out);
int xg_col_runs(exec_ctx *x, int ncols, const etype *ty, const bool *skip,
		xg_src *s, xg_out *o);

/* ---- exec_gpu_src.c ---- */

int xg_gerr(exec_ctx *x, int rc, const char *op, const char *msg);
int xg_keep_dev(xg_src *s, void *p);
int xg_keep_host(xg_src *s, void *p);
void xg_src_free(xg_src *s);
int xg_load(xg_src *s, int c);
void xg_out_free(xg_out *o);
int xg_run(xg_src *s, cexpr *c, xg_out *o);
int xg_keycol(xg_src *s, const xg_out *o, gpu_sortcol *k);
int xg_fetch(exec_ctx *x, xg_out *outs, int nout, uint32_t n, rel *r);
int xg_fits(exec_ctx *x, pnode *n, pnode *src, bool *fits);
/* xg_fits for the columns n's consumer reads alone, not its filters' */
int xg_fits_out(exec_ctx *x, pnode *n, pnode *src, bool *fits);
int xg_windows(exec_ctx *x, pnode *n, pnode *src, uint32_t div, xg_win **wout,
	       uint32_t *nwout);
uint32_t xg_rows(const xg_src *s);
int xg_prepare_win(exec_ctx *x, pnode *n, xg_src *s, const xg_win *win);
/* xg_stream over rows of a host source (in: the source's rows, whose
 * text the result takes over) that did not fit the device at once. */
int xg_stream_host(exec_ctx *x, pnode *n, rel *in, rel **out);
/* Device sources (joins, projections, GROUP BYs kept there) made as host
 * relations instead (exec_gpu_prep.c; set for a retry that ran out of
 * device memory). */
extern int xg_host_sources;
bool xg_shrink_begin(void);
/* qsort_r's comparison of row numbers by first[row] (arg): groups in
 * the order of their first rows (exec_gpu_agg.c) */
int xg_cmp_first(const void *a, const void *b, void *arg);

/* ---- exec_gpu_prep.c ---- */

int xg_join_ok(exec_ctx *x, pnode *j, char *why, size_t len);
bool xg_passthrough(const cexpr *c);
int xg_prepare_at(exec_ctx *x, pnode *n, pnode **chain, int nchain, pnode *src,
		  xg_src *s, const xg_win *win);
int xg_prepare(exec_ctx *x, pnode *n, xg_src *s);
/* A device source (a scan, a join, a projection kept on the device) gave
 * up with rc: true when its inputs are too large for the device
 * (XG_STREAM, or the device's memory ran out). */
bool xg_too_large(exec_ctx *x, int rc);

/* ---- exec_gpu_agg.c ---- */

void xg_group_order(const gpu_groups *g, uint32_t nout, uint32_t *perm);
sval xg_avg_total(const aggdef *ad, etype t, long double sum, uint64_t cnt);
sval xg_ival(etype t, int64_t i);
/* The exact sum of group g in the device's results (SUM_I). */
__int128 xg_sum128(const gpu_agg_res *r, uint32_t g);
/* Aggregate ad's value from its state ac (op: its GPU op; the device's
 * results of a group or a streamed scan's merge of them), converted to
 * its result type as agg_final, into column col of row row of r.  any:
 * ANY's value (NULL: none).  x NULL: no error message is set (the
 * parallel pass). */
int xg_agg_value(exec_ctx *x, const aggdef *ad, int op, const xg_acc *ac,
		 const sval *any, rel *r, int col, uint64_t row);
int xg_group_keys(exec_ctx *x, pnode *n, xg_src *s, const xg_out *key,
		  const gpu_sortcol *kc, const uint32_t *first,
		  const uint32_t *perm, uint32_t nout, rel *r);
bool xg_agg_keep_ok(const pnode *n);
int xg_agg(exec_ctx *x, pnode *n, xg_src *s, rel **out, xg_src *keep);
int xg_agg_keep(exec_ctx *x, pnode *n, xg_src *d);
int xg_fused(exec_ctx *x, pnode *n, xg_src *s, rel **out);

/* ---- exec_gpu_stream.c ---- */

int xg_sagg_window(exec_ctx *x, pnode *n, xg_src *s, const struct xg_out *key,
		   const gpu_sortcol *kc, const gpu_agg *ga,
		   const gpu_groups *g);
int xg_stream(exec_ctx *x, pnode *n, rel **out);
/* A chain's filters over a scan too large for the cache run window by
 * window into a selection of the table's rows, s the cached scan with it,
 * when the consumer's own columns fit; XG_STREAM when they do not. */
int xg_stream_sel(exec_ctx *x, pnode *n, pnode **chain, int nchain, pnode *src,
		  xg_src *s);

#endif /* GPMDB_EXEC_GPU_INT_H */
