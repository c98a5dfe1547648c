/*
 * exec_gpu.c - the GPU backend of the executor (docs/gpu.md): backend
 * choice per operator, EXPLAIN's reasons, the GPU pragmas and statistics,
 * and GPU filter, projection and aggregation.
 *
 * Shape: a FILTER, PROJECT or AGG node runs on the GPU together with the
 * FILTERs below it down to its source.  When the source is a table SCAN,
 * the columns come from the HBM column cache (gpu/cache.h) and the scan
 * and filters never materialise on the host; any other source runs first
 * (on either backend) and its relation is uploaded.  Filters compact the
 * selected row ids on the device (CUB select); projections run over the
 * selection and come back in one transfer; aggregates are reduced on the
 * device and only the groups come back.
 *
 * Choice (xg_decide): backend=cpu: CPU.  backend=gpu: every FILTER,
 * PROJECT and AGG the GPU supports.  backend=auto: those whose source is
 * a table scan of at least gpu_threshold live rows, when a GPU is there.
 * An operator the planner wanted on the GPU but cannot run there is an
 * error naming the operator and the reason under gpu_strict, else it runs
 * on the CPU and gpu_stats' cpu_fallbacks goes up.  SORT, JOIN, DISTINCT
 * and set operations are decided and run by exec_gpu_ops.c.  Operators
 * with no GPU version yet (limit, cross joins, UNION ALL, values) run on
 * the CPU under every setting, and EXPLAIN says so.
 */
#include "../../engine/engine.h"
#include "../../engine/value.h"
#include "../../engine/write/batch_gpu.h"
#include "exec_gpu_dev.h"
#include "exec_gpu_ops.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../cache.h"
#include "../gpu.h"
#include "../gpu_dml.h"
#include "../index_gpu.h"

#include <time.h>

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
} xg_win;

/* GROUP BY keys on the GPU (gpu_group_agg's limit) */
#define XG_MAX_KEYS 64

/* GPU work is serialised: one stream, one constant-memory program.
 * Recursive: a GPU operator runs its (non-scan) source first, which may
 * be a GPU operator too; xg_depth makes only the outermost one start a
 * new cache pin (what the outer one holds must not be evicted). */
static pthread_mutex_t xg_lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
static int xg_depth;

void exec_gpu_lock(void)
{
	pthread_mutex_lock(&xg_lock);
}

void exec_gpu_unlock(void)
{
	pthread_mutex_unlock(&xg_lock);
}

/* ---- decisions ------------------------------------------------------- */

static const char *xg_kind_name(int k)
{
	static const char *nm[] = {
	    "SCAN",	     "ONE ROW",	  "VALUES",    "FILTER",   "PROJECT",
	    "JOIN",	     "AGGREGATE", "SORT",      "DISTINCT", "LIMIT",
	    "SET OPERATION", "CONVERT",	  "INDEX SCAN"};
	return k >= 0 && k < (int)(sizeof(nm) / sizeof(nm[0])) ? nm[k] : "?";
}

static int xg_expr_ok(exec_ctx *x, pnode *n, int i, ast_expr *e, bool post,
		      const pnode *in, cexpr **out, char *why, size_t len)
{
	cexpr *c;
	char r[200];

	*out = NULL;
	if (exec_node_cx(x, n, i, e, post, in, &c)) {
		snprintf(why, len, "expression does not compile: %.200s",
			 x->db->errmsg);
		db_clear(x->db);
		return 0;
	}
	for (int k = 0; k < c->ninputs; k++) {
		switch (c->in[k].kind) {
		case IN_COL:
			break;
		case IN_OUTER:
			snprintf(why, len,
				 "expression has a correlated "
				 "reference to an outer query");
			return 0;
		case IN_SUBQ:
			/* one value per statement: a constant of the run */
			if (cx_input_const(c, k))
				break;
			snprintf(why, len, "%s",
				 c->in[k].lhs
				     ? "expression has an IN "
				       "(subquery) with a left operand "
				       "(one answer per row)"
				     : "expression has a correlated "
				       "subquery");
			return 0;
		default:
			snprintf(why, len,
				 "expression is split into "
				 "sub-programs (too large)");
			return 0;
		}
	}
	if (!gpu_vm_supports(c->prog, r, sizeof(r))) {
		/* "op UPPER at 3 makes new text...: runs on the CPU" */
		char *cut = strstr(r, ": runs on the CPU");
		if (cut)
			*cut = 0;
		snprintf(why, len, "%s", r);
		return 0;
	}
	*out = c;
	return 1;
}

static bool xg_same_type(etype a, etype b)
{
	return a.t == b.t && (a.t != BC_T_DEC || a.scale == b.scale);
}

static int xg_agg_ok(exec_ctx *x, pnode *n, char *why, size_t len)
{
	static const char *an[] = {"count(*)", "count",	       "sum",
				   "avg",      "min",	       "max",
				   "total",    "group_concat", "a bare column"};
	cexpr *c;

	if (n->ngroup > XG_MAX_KEYS) {
		snprintf(why, len,
			 "GROUP BY of %d keys (at most %d on the GPU)",
			 n->ngroup, XG_MAX_KEYS);
		return 0;
	}
	for (int k = 0; k < n->ngroup; k++) {
		etype t = n->ty[k];
		/* TEXT compares binary (memcmp) on the CPU: the binder
		 * accepts no other collation (COLLATE RTRIM is binary) */
		if (t.t != BC_T_INT && t.t != BC_T_DATE && t.t != BC_T_BOOL &&
		    t.t != BC_T_DEC && t.t != BC_T_TEXT && t.t != BC_T_REAL) {
			snprintf(why, len, "GROUP BY key of type %s",
				 et_name(t));
			return 0;
		}
		if (!xg_expr_ok(x, n, k, n->group[k], false, n->l, &c, why,
				len))
			return 0;
		if (!xg_same_type(c->ty, t)) {
			snprintf(why, len, "GROUP BY key needs a conversion");
			return 0;
		}
	}
	for (int a = 0; a < n->naggs; a++) {
		const aggdef *ad = &n->aggs[a];
		if (ad->fn == AGG_GROUP_CONCAT) {
			snprintf(why, len, "aggregate %s", an[ad->fn]);
			return 0;
		}
		if (ad->distinct && ad->fn == AGG_ANY) {
			snprintf(why, len, "DISTINCT aggregate %s", an[ad->fn]);
			return 0;
		}
		if (!ad->arg)
			continue;
		if (!xg_expr_ok(x, n, n->ngroup + a, ad->arg, false, n->l, &c,
				why, len))
			return 0;
		etype t = c->ty;
		if (!xg_same_type(t, expr_type(ad->arg))) {
			snprintf(why, len, "argument of %s needs a conversion",
				 an[ad->fn]);
			return 0;
		}
		bool num = t.t == BC_T_INT || t.t == BC_T_BOOL ||
			   t.t == BC_T_DEC || t.t == BC_T_REAL;
		bool ok = true;
		/* DISTINCT: the argument is deduplicated per group by
		 * equality (gpu_distinct_nulls): the key types */
		if (ad->distinct && !num && t.t != BC_T_DATE &&
		    t.t != BC_T_TEXT) {
			snprintf(why, len, "DISTINCT aggregate %s of %s",
				 an[ad->fn], et_name(t));
			return 0;
		}
		switch (ad->fn) {
		case AGG_ANY: /* any value: gathered at a row */
		case AGG_COUNT:
			break;
		case AGG_SUM:
			ok =
			    num && (ad->res.t == BC_T_REAL ||
				    (ad->res.t == BC_T_INT &&
				     t.t != BC_T_REAL && t.t != BC_T_DEC) ||
				    (ad->res.t == BC_T_DEC && t.t == BC_T_DEC &&
				     t.scale == ad->res.scale));
			if (ad->res.t == BC_T_REAL && t.t == BC_T_DEC)
				ok = false;
			break;
		case AGG_AVG:
		case AGG_TOTAL:
			ok = num;
			break;
		case AGG_MIN:
		case AGG_MAX:
			ok = num || t.t == BC_T_DATE;
			break;
		}
		if (!ok) {
			snprintf(why, len, "%s of %s (result %s)", an[ad->fn],
				 et_name(t), et_name(ad->res));
			return 0;
		}
	}
	return 1;
}

/* What n's GPU chain stops at: the first node below n's FILTERs that the
 * GPU does not take (a SCAN is taken: it comes from the cache). */
static pnode *xg_source(exec_ctx *x, pnode *n, char *why, size_t len)
{
	pnode *s = n->l;
	cexpr *c;

	while (s && s->kind == PN_FILTER &&
	       xg_expr_ok(x, s, 0, s->pred, s->post, s->l, &c, why, len))
		s = s->l;
	return s;
}

static int xg_join_ok(exec_ctx *x, pnode *j, char *why, size_t len);
static bool xg_agg_keep_ok(const pnode *n);

static uint64_t xg_scan_rows(gpmdb *db, const pnode *s)
{
	uint64_t r = stg_row_count(db->pool, s->table_id),
		 d = stg_deleted_count(db->pool, s->table_id);
	return r > d ? r - d : 0;
}

/* The backend of n: XG_GPU, XG_CPU (by choice), XG_WANTED_CPU (wanted
 * on the GPU, cannot: a fallback), XG_NO_OP (no GPU version).  why: the
 * reason for a CPU choice (may be empty). */
static int xg_decide(exec_ctx *x, pnode *n, char *why, size_t len)
{
	gpmdb *db = x->db;
	char gerr[300];
	pnode *src;
	int ok;

	why[0] = 0;
	if (db->backend == 1)
		return XG_CPU;
	/* LIMIT truncates its input's result (exec_gpu_ops.c; a GPU sort
	 * below keeps only LIMIT + OFFSET rows): on the GPU exactly when
	 * that input is */
	if (n->kind == PN_LIMIT) {
		char w[400];
		int d = xg_decide(x, n->l, w, sizeof(w));
		if (d == XG_GPU)
			return XG_GPU;
		snprintf(why, len,
			 "its input (%s) runs on the CPU: LIMIT slices it "
			 "there",
			 xg_kind_name(n->l->kind));
		return d == XG_CPU ? XG_CPU : XG_NO_OP;
	}
	/* sort, join, distinct, set operations: exec_gpu_ops.c */
	if (exec_gpu_ops_kind(n->kind))
		return exec_gpu_ops_decide(x, n, why, len);
	if (n->kind != PN_FILTER && n->kind != PN_PROJECT &&
	    n->kind != PN_AGG) {
		/* an index read is a point or range access: the CPU's */
		if (n->kind == PN_SCAN || n->kind == PN_ONE ||
		    n->kind == PN_ISCAN)
			return XG_CPU;
		snprintf(why, len, "no GPU version of %s yet",
			 xg_kind_name(n->kind));
		return XG_NO_OP;
	}
	/* auto looks at the input first, so that small queries never start
	 * CUDA */
	src = xg_source(x, n, why, len);
	/* a join the GPU keeps on the device counts as a scan (its own
	 * choice looked at the threshold) */
	if (db->backend == 0 && src && src->kind == PN_JOIN) {
		char w[400];
		if (!xg_join_ok(x, src, w, sizeof(w))) {
			snprintf(why, len,
				 "input (join) is not kept on the device: %s",
				 w);
			return XG_CPU;
		}
	} else if (db->backend == 0) {
		if (src && src->kind == PN_ISCAN) {
			snprintf(why, len,
				 "input is an index read (the rows a search "
				 "found)");
			return XG_CPU;
		}
		if (!src || src->kind != PN_SCAN) {
			snprintf(why, len,
				 "input (%s) is not a table scan (auto uses "
				 "the GPU for scans)",
				 src ? xg_kind_name(src->kind) : "?");
			return XG_CPU;
		}
		uint64_t rows = xg_scan_rows(db, src);
		if (rows < db->gpu_threshold) {
			snprintf(why, len,
				 "input %llu rows < gpu threshold %llu",
				 (unsigned long long)rows,
				 (unsigned long long)db->gpu_threshold);
			return XG_CPU;
		}
	}
	if (gpu_init(gerr, sizeof(gerr))) {
		snprintf(why, len, "no GPU: %s", gerr);
		return db->backend == 2 ? XG_WANTED_CPU : XG_CPU;
	}
	why[0] = 0;
	if (n->kind == PN_FILTER) {
		cexpr *c;
		ok = xg_expr_ok(x, n, 0, n->pred, n->post, n->l, &c, why, len);
	} else if (n->kind == PN_PROJECT) {
		cexpr *c;
		ok = 1;
		for (int i = 0; i < n->nexprs && ok; i++)
			ok = xg_expr_ok(x, n, i, n->exprs[i], n->post, n->l, &c,
					why, len);
	} else {
		ok = xg_agg_ok(x, n, why, len);
	}
	return ok ? XG_GPU : XG_WANTED_CPU;
}

/* xg_decide for exec_gpu_ops.c (LIMIT runs there) */
int exec_gpu_decide(exec_ctx *x, pnode *n, char *why, size_t len)
{
	return xg_decide(x, n, why, len);
}

/* ---- EXPLAIN -------------------------------------------------------- */

static const char *xg_note(const pnode *n)
{
	if (n->kind == PN_AGG)
		for (int a = 0; a < n->naggs; a++) {
			const aggdef *ad = &n->aggs[a];
			etype t =
			    ad->arg ? expr_type(ad->arg) : et_make(BC_T_INT);
			if (((ad->fn == AGG_SUM || ad->fn == AGG_AVG ||
			      ad->fn == AGG_TOTAL) &&
			     (t.t == BC_T_REAL || t.t == BC_T_DEC) &&
			     !(ad->fn == AGG_SUM && t.t == BC_T_DEC)))
				return "floating-point sums: added in another "
				       "order than on the CPU, may differ in "
				       "the last bits";
		}
	return "";
}

static void xg_mark(exec_ctx *x, pnode *n, bool fused);

/* The source of a GPU chain: a cached scan, a join kept on the device
 * (its inputs marked the same way), or an input of its own. */
static void xg_mark_src(exec_ctx *x, pnode *src)
{
	char w[400];

	if (src && src->kind == PN_SCAN) {
		xg_mark(x, src, true);
		return;
	}
	if (!src || src->kind != PN_JOIN || !xg_join_ok(x, src, w, sizeof(w))) {
		xg_mark(x, src, false);
		return;
	}
	src->xg_mode = XG_GPU;
	src->xg_why = src->jtype == JOIN_INNER || src->jtype == JOIN_LEFT
			  ? "pairs kept on the device for the operator above"
			  : "rows kept on the device for the operator above";
	for (int t = 0; t < 2; t++) {
		pnode *c = t ? src->r : src->l, *s2;
		cexpr *cx;
		if (c->kind != PN_FILTER ||
		    !xg_expr_ok(x, c, 0, c->pred, c->post, c->l, &cx, w,
				sizeof(w))) {
			xg_mark_src(x, c);
			continue;
		}
		s2 = xg_source(x, c, w, sizeof(w));
		for (pnode *f = c; f && f != s2; f = f->l)
			xg_mark(x, f, true);
		xg_mark_src(x, s2);
	}
}

static void xg_mark(exec_ctx *x, pnode *n, bool fused)
{
	char why[400];
	int d;

	if (!n)
		return;
	if (fused) {
		n->xg_mode = XG_GPU;
		n->xg_why = n->kind == PN_SCAN
				? "columns from the GPU cache"
				: "fused into the operator above";
		return;
	}
	d = xg_decide(x, n, why, sizeof(why));
	n->xg_mode = (int8_t)d;
	n->xg_why = NULL;
	{
		const char *txt = d == XG_GPU ? xg_note(n) : why;
		size_t l = strlen(txt) + 1;
		char *p = l > 1 ? ast_alloc(&x->st->parena, l) : NULL;
		if (p) {
			memcpy(p, txt, l);
			n->xg_why = p;
		}
	}
	if (d == XG_GPU && !exec_gpu_ops_kind(n->kind)) {
		char w2[200];
		pnode *src = xg_source(x, n, w2, sizeof(w2));
		for (pnode *f = n->l; f && f != src; f = f->l)
			xg_mark(x, f, true);
		xg_mark_src(x, src);
		return;
	}
	xg_mark(x, n->l, false);
	xg_mark(x, n->r, false);
}

void exec_gpu_annotate(gpmdb_stmt *st, pnode *root)
{
	exec_ctx x;

	memset(&x, 0, sizeof(x));
	x.db = st->db;
	x.st = st;
	x.mem_limit = st->db->mem_limit;
	pthread_mutex_lock(&xg_lock);
	xg_mark(&x, root, false);
	pthread_mutex_unlock(&xg_lock);
}

const char *exec_gpu_explain(const pnode *n, char *buf, size_t len)
{
	const char *why = n->xg_why;

	if (n->xg_mode == XG_GPU)
		snprintf(buf, len, "backend=gpu%s%s%s", why ? " (" : "",
			 why ? why : "", why ? ")" : "");
	else if (why)
		snprintf(buf, len, "backend=cpu (%s)", why);
	else
		snprintf(buf, len, "backend=cpu");
	return buf;
}

/* ---- device inputs ---------------------------------------------------- */

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
	pnode *scan; /* cache source, or NULL */
	rel *in;     /* host source */
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

/* Fused aggregates run and declined (gpu_stats, process-wide). */
static uint64_t xg_fused_aggs, xg_fused_declines;
/* GROUP BY results kept on the device for the operator above
 * (gpu_stats, process-wide). */
static uint64_t xg_kept_aggs;
/* Runs that copied several text columns into one buffer (a TEXT
 * output) and the bytes copied (gpu_stats, process-wide). */
static uint64_t xg_text_merges, xg_text_merged_bytes;

/* xg_agg's hook for streamed scans (below). */
struct xg_out;
static int xg_sagg_window(exec_ctx *x, pnode *n, xg_src *s,
			  const struct xg_out *key, const gpu_sortcol *kc,
			  const gpu_agg *ga, const gpu_groups *g);

static int xg_gerr(exec_ctx *x, int rc, const char *op, const char *msg)
{
	/* SQL errors of rows keep the CPU's words; the rest name the GPU */
	if (rc == GPMDB_ERROR)
		return db_err(x->db, rc, "%s", msg);
	return db_err(x->db, rc, "GPU %s: %s", op, msg);
}

static int xg_keep_dev(xg_src *s, void *p)
{
	if (s->ndev == 512) {
		gpu_free(p, NULL, 0);
		return db_err(s->x->db, GPMDB_NOMEM, "too many GPU buffers");
	}
	s->dev[s->ndev++] = p;
	return GPMDB_OK;
}

static int xg_keep_host(xg_src *s, void *p)
{
	if (s->nhost == 512) {
		free(p);
		return db_err(s->x->db, GPMDB_NOMEM, "too many buffers");
	}
	s->host[s->nhost++] = p;
	return GPMDB_OK;
}

static void xg_outs_free(struct xg_out *o, int n);

static void xg_src_free(xg_src *s)
{
	xg_outs_free(s->outs, s->nouts);
	if (s->own) {
		xg_src_free(s->own);
		free(s->own);
	}
	for (int i = 0; i < s->nleaf; i++) {
		if (s->leaf[i].src && !s->leaf[i].borrowed) {
			xg_src_free(s->leaf[i].src);
			free(s->leaf[i].src);
		}
		gpu_free(s->leaf[i].idx, NULL, 0);
	}
	free(s->leaf);
	for (int i = 0; i < s->ndev; i++)
		gpu_free(s->dev[i], NULL, 0);
	for (int i = 0; i < s->nhost; i++)
		free(s->host[i]);
	gpu_free(s->sel, NULL, 0);
	free(s->cols);
	rel_free(s->in);
	memset(s, 0, sizeof(*s));
}

static int xg_coltype(int t)
{
	switch (t) {
	case BC_T_BOOL:
		return BC_COL_BOOL;
	case BC_T_INT:
		return BC_COL_INT64;
	case BC_T_REAL:
		return BC_COL_DOUBLE;
	case BC_T_DEC:
		return BC_COL_DEC;
	case BC_T_DATE:
		return BC_COL_DATE;
	case BC_T_TEXT:
		return BC_COL_TEXT;
	}
	return VEC_NULL;
}

/* Uploads column c of the host source. */
static int xg_upload_rel(xg_src *s, int c, xg_col *o)
{
	exec_ctx *x = s->x;
	const rcol *rc_ = &s->in->cols[c];
	uint64_t n = s->in->nrows;
	char err[300];
	void *d;
	int rc;

	o->col.type = (uint8_t)xg_coltype(rc_->ty.t);
	o->col.prec = rc_->ty.prec;
	o->col.scale = rc_->ty.scale;
	if (o->col.type == VEC_NULL || !n)
		return GPMDB_OK;
	if (o->col.type == BC_COL_TEXT) {
		/* strings packed into one host buffer: device offsets map back
		 * to it */
		uint64_t total = 0, off = 0;
		const vec_str *v = rc_->data;
		for (uint64_t i = 0; i < n; i++)
			if (!rc_->nulls[i])
				total += v[i].len;
		if (total >= 0x80000000ull)
			return db_err(x->db, GPMDB_UNSUPPORTED,
				      "GPU input: text column of %llu bytes "
				      "(2 GiB per GPU run)",
				      (unsigned long long)total);
		char *hb = malloc(total + 1);
		gpu_str *hs = malloc(sizeof(gpu_str) * n);
		gcache_seg *seg = malloc(sizeof(gcache_seg));
		if (!hb || !hs || !seg) {
			free(hb);
			free(hs);
			free(seg);
			return db_err(x->db, GPMDB_NOMEM, "out of memory");
		}
		for (uint64_t i = 0; i < n; i++) {
			uint32_t l = rc_->nulls[i] ? 0 : v[i].len;
			if (l)
				memcpy(hb + off, v[i].ptr, l);
			hs[i].off = (uint32_t)off;
			hs[i].len = l;
			off += l;
		}
		seg->dev_off = 0;
		seg->host = hb;
		if ((rc = xg_keep_host(s, hb)) || (rc = xg_keep_host(s, seg))) {
			free(hs);
			return rc;
		}
		void *dt;
		if ((rc = gpu_alloc(&dt, total + 1, err, sizeof(err))) ||
		    (rc = xg_keep_dev(s, dt)) ||
		    (rc = gpu_upload(dt, hb, total, err, sizeof(err))) ||
		    (rc = gpu_alloc(&d, sizeof(gpu_str) * n + n, err,
				    sizeof(err))) ||
		    (rc = xg_keep_dev(s, d)) ||
		    (rc = gpu_upload(d, hs, sizeof(gpu_str) * n, err,
				     sizeof(err)))) {
			free(hs);
			return x->db->errcode == rc
				   ? rc
				   : xg_gerr(x, rc, "upload", err);
		}
		free(hs);
		o->text = dt;
		o->ntext = total;
		o->seg = seg;
		o->nseg = 1;
		o->col.data = d;
		o->col.nulls = (uint8_t *)d + sizeof(gpu_str) * n;
	} else {
		size_t w = rel_width(rc_->ty.t);
		if ((rc = gpu_alloc(&d, w * n + n, err, sizeof(err))) ||
		    (rc = xg_keep_dev(s, d)) ||
		    (rc = gpu_upload(d, rc_->data, w * n, err, sizeof(err))))
			return x->db->errcode == rc
				   ? rc
				   : xg_gerr(x, rc, "upload", err);
		o->col.data = d;
		o->col.nulls = (uint8_t *)d + w * n;
	}
	if ((rc = gpu_upload(o->col.nulls, rc_->nulls, n, err, sizeof(err))))
		return xg_gerr(x, rc, "upload", err);
	x->db->gstat.bytes_uploaded +=
	    n * (rel_width(rc_->ty.t) + 1) + o->ntext;
	return GPMDB_OK;
}

/*
 * Registers the pool mapping with CUDA once per mapping, so that the
 * column cache DMAs from it at bus speed (unregistered: about 1.3 GB/s
 * was measured).  The range is the connection's db->gpu_reg_base, shared
 * with the GPU writes (batch_gpu.c), which unregister it at close.  A
 * refusal (a pool on ext4: "invalid argument") is remembered for that
 * mapping and reported by gpu_stats (cache_pool_registered 0,
 * cache_register_failures, a row "cache_upload_staged_because: <the
 * driver's words>"); the cache then uploads through pinned staging.
 */
static void xg_register(gpmdb *db)
{
	static const void *fail_base;
	static uint64_t fail_len;
	uint64_t len = 0;
	void *base = stg_pool_base(db->pool, &len);
	struct timespec t0, t1;
	char e[400];
	int rc;

	if (!base || !len)
		return;
	if (db->gpu_reg_base == base && db->gpu_reg_len == len &&
	    gpu_pm_is_registered(base, len))
		return;
	if (fail_base == base && fail_len == len)
		return;
	{
		/* Pinning the whole pool took seconds at SF10 (issue 17) for
		 * a first query that reads a fraction of it: columns go up
		 * through the pinned staging ring instead, unless asked */
		const char *pin = getenv("GPMDB_GPU_PIN_POOL");
		if (!pin || !*pin || !strcmp(pin, "0")) {
			gcache_note_register(0, 0,
					     "the pool is not pinned whole "
					     "(GPMDB_GPU_PIN_POOL=1 does)");
			fail_base = base;
			fail_len = len;
			return;
		}
	}
	if (stg_pool_durability(db->pool) == STG_DUR_MSYNC &&
	    !stg_pool_readonly(db->pool)) {
		/* msync mode maps the pool privately and drops private pages
		 * after commits (storage/wal.c): pinned pages would go stale,
		 * and pinning would copy every page */
		gcache_note_register(0, 0,
				     "msync mode: the pool is mapped privately "
				     "and written back at commit");
		fail_base = base;
		fail_len = len;
		return;
	}
	if (db->gpu_reg_base) {
		/* remapped: the old range goes (it may be unmapped already;
		 * a refusal only keeps its pins until the process ends) */
		(void)gpu_pm_unregister(db->gpu_reg_base, e, sizeof(e));
		db->gpu_reg_base = NULL;
		db->gpu_reg_len = 0;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	rc = gpu_pm_register(base, len, e, sizeof(e));
	clock_gettime(CLOCK_MONOTONIC, &t1);
	gcache_note_register(rc == GPMDB_OK,
			     (uint64_t)((t1.tv_sec - t0.tv_sec) * 1000000000LL +
					(t1.tv_nsec - t0.tv_nsec)),
			     rc == GPMDB_OK ? "" : e);
	if (rc == GPMDB_OK) {
		db->gpu_reg_base = base;
		db->gpu_reg_len = len;
	} else {
		fail_base = base;
		fail_len = len;
	}
}

static int xg_load(xg_src *s, int c)
{
	xg_col *o = &s->cols[c];
	exec_ctx *x = s->x;
	char err[300];
	int rc;

	if (o->loaded)
		return GPMDB_OK;
	if (s->nleaf) {
		/* a joined source: the leaf's column, read at the pairs */
		int j = s->nleaf - 1;
		while (j > 0 && s->leaf[j].col0 > c)
			j--;
		xg_src *ls = s->leaf[j].src;
		int lc = c - s->leaf[j].col0;
		if ((rc = xg_load(ls, lc)))
			return rc;
		*o = ls->cols[lc];
		o->col.sel = s->leaf[j].idx;
		return GPMDB_OK;
	}
	if (s->scan) {
		pnode *sc = s->scan;
		gcache_colref ref;
		/* the table column (plan_prune may have dropped some) */
		int tc = sc->tcol ? sc->tcol[c] : c;
		bool rid = tc >= sc->ntcols;
		xg_register(x->db);
		if (s->win) {
			/* a streamed window: its rows alone, freed with s */
			void *dev;
			gcache_seg *seg;
			rc = gcache_column_range(
			    x->db->pool, sc->table_id, rid ? GCACHE_ROWID : tc,
			    rid ? 0 : sc->stype[tc], s->win->row0,
			    s->win->nrows, &ref, &dev, &seg, err, sizeof(err));
			if (rc)
				return xg_gerr(x, rc, "column window", err);
			if ((rc = xg_keep_dev(s, dev))) {
				free(seg);
				return rc;
			}
			if (seg && (rc = xg_keep_host(s, seg)))
				return rc;
		} else {
			rc = gcache_column(
			    x->db->pool, x->db->gpu_owner, sc->table_id,
			    rid ? GCACHE_ROWID : tc, rid ? 0 : sc->stype[tc],
			    &ref, err, sizeof(err));
			if (rc)
				return xg_gerr(x, rc, "column cache", err);
		}
		if (ref.nrows != s->nrows)
			return db_err(x->db, GPMDB_INTERNAL,
				      "GPU column cache: %llu rows, expected "
				      "%u",
				      (unsigned long long)ref.nrows, s->nrows);
		if (!s->win && ref.hit)
			x->db->gstat.cache_hits++;
		else if (!s->win)
			x->db->gstat.cache_misses++;
		o->col = ref.col;
		o->col.prec = sc->ty[c].prec;
		o->col.scale = sc->ty[c].scale;
		o->text = ref.text;
		o->ntext = ref.ntext;
		o->seg = ref.seg;
		o->nseg = ref.nseg;
	} else if ((rc = xg_upload_rel(s, c, o))) {
		return rc;
	}
	o->ndata = s->nrows;
	o->loaded = true;
	return GPMDB_OK;
}

/* ---- running a program over the source ------------------------------ */

typedef struct xg_out {
	gpu_col col[BC_MAX_OUTPUTS];
	bc_program *p;	 /* the program as run (its constant text) */
	gcache_seg *seg; /* the run's text buffer -> host */
	uint32_t nseg;
	const char *dtext; /* the run's text buffer (device) */
	uint64_t ntext;	   /* its bytes */
	bool have;
} xg_out;

static void xg_out_free(xg_out *o);

/* An array of n runs, and the array */
static void xg_outs_free(struct xg_out *o, int n)
{
	for (int i = 0; o && i < n; i++)
		xg_out_free(&o[i]);
	free(o);
}

static void xg_out_free(xg_out *o)
{
	if (o->have)
		gpu_vm_free_outputs(o->p, o->col);
	free(o->p);
	free(o->seg);
	memset(o, 0, sizeof(*o));
}

/*
 * Input k of c, an uncorrelated subquery (xg_expr_ok lets no other kind
 * through), becomes a constant of p, the program copy the run uses: its
 * value is one for the statement and computed on the host by the CPU's
 * exec_subquery (once per statement, the same NULL for no row, the same
 * conversion), so the GPU needs no input column for it and the value
 * sits in constant memory with the program.  Not computed when the run
 * has no rows: the CPU evaluates nothing then either (a subquery error
 * stays unreported on both).
 */
static int xg_bind_subq(xg_src *s, cexpr *c, int k, bc_program *p)
{
	exec_ctx *x = s->x;
	const bc_rtype *it = &p->in_type[k];
	sval v;
	int rc;

	if (!cx_input_const(c, k))
		return db_err(x->db, GPMDB_INTERNAL,
			      "input %d of a GPU expression is a correlated "
			      "subquery",
			      k);
	if (!(s->sel ? s->nsel : s->nrows))
		return bc_bind_input(p, k, 1, (bc_imm){0}, NULL, 0)
			   ? db_err(x->db, GPMDB_INTERNAL, "%s", p->errmsg)
			   : GPMDB_OK;
	if ((rc = cx_input_value(x, c, k, &v)))
		return rc;
	if (v.t != BC_T_NULL && (xg_coltype(v.t) != it->type ||
				 (v.t == BC_T_DEC && v.scale != it->scale)))
		return db_err(x->db, GPMDB_INTERNAL,
			      "a subquery value of type %s for a GPU input "
			      "of type %d",
			      bc_type_name(v.t), it->type);
	bc_imm imm = {0};
	if (v.t == BC_T_REAL)
		imm.r = v.u.r;
	else if (v.t != BC_T_TEXT && v.t != BC_T_NULL)
		imm.i = v.u.i;
	if (bc_bind_input(p, k, v.t == BC_T_NULL, imm,
			  v.t == BC_T_TEXT ? v.u.s.ptr : NULL,
			  v.t == BC_T_TEXT ? v.u.s.len : 0))
		/* a long TEXT value: the program's constant text is full */
		return db_err(x->db, GPMDB_UNSUPPORTED,
			      "GPU expression: a subquery's value (%s) does "
			      "not fit the program (%s)",
			      bc_type_name(v.t), p->errmsg);
	return GPMDB_OK;
}

static int xg_run(xg_src *s, cexpr *c, xg_out *o)
{
	exec_ctx *x = s->x;
	gpu_col in[BC_MAX_INPUTS];
	int tcols[BC_MAX_INPUTS], nt = 0, rc;
	const char *text = NULL, *itext[BC_MAX_INPUTS] = {0};
	uint64_t ntext = 0;
	bool tout = false;
	char err[400];

	memset(o, 0, sizeof(*o));
	if (!(o->p = malloc(sizeof(bc_program))))
		return db_err(x->db, GPMDB_NOMEM, "out of memory");
	memcpy(o->p, c->prog, sizeof(bc_program));
	for (int k = 0; k < c->ninputs; k++) {
		int col = c->in[k].col;
		if (c->in[k].kind == IN_SUBQ) {
			if ((rc = xg_bind_subq(s, c, k, o->p)))
				return rc;
			memset(&in[k], 0, sizeof(in[k]));
			in[k].type = VEC_NULL; /* never read: see above */
			continue;
		}
		if ((rc = xg_load(s, col)))
			return rc;
		in[k] = s->cols[col].col;
		/* a joined source's columns carry their leaf's rows */
		if (!s->nleaf)
			in[k].sel = s->sel;
		/* LOAD_COL widens INT32 and FLOAT as the scan would: read the
		 * cached storage arrays as they are */
		if (in[k].type == BC_COL_INT32 &&
		    o->p->in_type[k].type == BC_COL_INT64)
			o->p->in_type[k].type = BC_COL_INT32;
		if (in[k].type == BC_COL_FLOAT &&
		    o->p->in_type[k].type == BC_COL_DOUBLE)
			o->p->in_type[k].type = BC_COL_FLOAT;
		if (in[k].type == BC_COL_TEXT) {
			int j;
			for (j = 0; j < nt && tcols[j] != col; j++)
				;
			if (j == nt)
				tcols[nt++] = col;
		}
	}
	for (uint32_t k = 0; k < o->p->noutputs; k++)
		tout |= o->p->rtype[o->p->out_reg[k]].type == BC_T_TEXT;
	if (nt > 1 && !tout) {
		/* No TEXT output, so nothing needs one buffer for the run:
		 * each input reads its own column's text, no copy */
		for (int k = 0; k < c->ninputs; k++)
			if (in[k].type == BC_COL_TEXT)
				itext[k] = s->cols[c->in[k].col].text;
		nt = 0;
	}
	/* With a TEXT output, one text buffer per run (output offsets are
	 * into it, and o->seg maps them back): one column's own, or
	 * several copied together with their references rebased. */
	uint32_t nseg = 0;
	for (int j = 0; j < nt; j++)
		nseg += s->cols[tcols[j]].nseg;
	if (nseg && !(o->seg = calloc(nseg, sizeof(gcache_seg))))
		return db_err(x->db, GPMDB_NOMEM, "out of memory");
	if (nt == 1) {
		xg_col *tc = &s->cols[tcols[0]];
		text = tc->text;
		ntext = tc->ntext;
		memcpy(o->seg, tc->seg, sizeof(gcache_seg) * tc->nseg);
		o->nseg = tc->nseg;
	} else if (nt > 1) {
		uint64_t total = 0, base = 0;
		char *buf;
		for (int j = 0; j < nt; j++)
			total += s->cols[tcols[j]].ntext;
		if (total >= 0x80000000ull)
			return db_err(x->db, GPMDB_UNSUPPORTED,
				      "GPU input: text columns of %llu bytes "
				      "together (2 GiB per GPU run)",
				      (unsigned long long)total);
		if ((rc = gpu_alloc((void **)&buf, total + 1, err,
				    sizeof(err))) ||
		    (rc = xg_keep_dev(s, buf)))
			return xg_gerr(x, rc, "text", err);
		for (int j = 0; j < nt; j++) {
			xg_col *tc = &s->cols[tcols[j]];
			uint64_t n = tc->ndata;
			gpu_str *copy;
			if ((rc = gpu_copy(buf + base, tc->text, tc->ntext, err,
					   sizeof(err))) ||
			    (rc = gpu_alloc((void **)&copy,
					    n * sizeof(gpu_str) + 1, err,
					    sizeof(err))) ||
			    (rc = xg_keep_dev(s, copy)) ||
			    (rc = gpu_copy(copy, tc->col.data,
					   n * sizeof(gpu_str), err,
					   sizeof(err))) ||
			    (rc = gpu_str_rebase(copy, n, (uint32_t)base, err,
						 sizeof(err))))
				return xg_gerr(x, rc, "text", err);
			for (int k = 0; k < c->ninputs; k++)
				if (c->in[k].kind == IN_COL &&
				    c->in[k].col == tcols[j])
					in[k].data = copy;
			for (uint32_t q = 0; q < tc->nseg; q++) {
				o->seg[o->nseg] = tc->seg[q];
				o->seg[o->nseg++].dev_off += base;
			}
			base += tc->ntext;
		}
		text = buf;
		ntext = total;
		xg_text_merges++;
		xg_text_merged_bytes += total;
	}
	o->dtext = text;
	o->ntext = ntext;
	rc = gpu_vm_run(o->p, in, c->ninputs, s->sel ? s->nsel : s->nrows, text,
			ntext, itext, o->col, err, sizeof(err));
	if (rc)
		return xg_gerr(x, rc, "expression", err);
	o->have = true;
	return GPMDB_OK;
}

/* A TEXT output value as host bytes. */
static const char *xg_host_text(const xg_out *o, gpu_str v)
{
	if (v.off & GPU_STR_CONST)
		return o->p->text + (v.off & ~GPU_STR_CONST);
	uint32_t lo = 0, hi = o->nseg;
	while (hi - lo > 1) { /* the last segment starting at or before off */
		uint32_t mid = (lo + hi) / 2;
		if (o->seg[mid].dev_off <= v.off)
			lo = mid;
		else
			hi = mid;
	}
	return o->seg[lo].host + (v.off - o->seg[lo].dev_off);
}

/* Output 0 of o as a key column for gpu_sort / gpu_group_agg: TEXT
 * keys get the run's text buffer and a device copy of the program's
 * constant text (values with GPU_STR_CONST point there). */
static int xg_keycol(xg_src *s, const xg_out *o, gpu_sortcol *k)
{
	char err[300];
	void *d;
	int rc;

	memset(k, 0, sizeof(*k));
	k->col = o->col[0];
	if (k->col.type != BC_COL_TEXT)
		return GPMDB_OK;
	k->text = o->dtext;
	if (!o->p || !o->p->ntext)
		return GPMDB_OK;
	if ((rc = gpu_alloc(&d, o->p->ntext, err, sizeof(err))) ||
	    (rc = xg_keep_dev(s, d)) ||
	    (rc = gpu_upload(d, o->p->text, o->p->ntext, err, sizeof(err))))
		return s->x->db->errcode == rc ? rc
					       : xg_gerr(s->x, rc, "text", err);
	k->ctext = d;
	return GPMDB_OK;
}

/* Downloads output k of n runs (one transfer for all) and appends them
 * as columns cols[k] of r. */
static int xg_fetch(exec_ctx *x, xg_out *outs, int nout, uint32_t n, rel *r)
{
	void *dst[2 * 256] = {0};
	const void *src[2 * 256] = {0};
	size_t len[2 * 256] = {0};
	void *hb[256];
	int rc = GPMDB_OK, k;
	char err[300];

	if (nout > 256)
		return db_err(x->db, GPMDB_UNSUPPORTED,
			      "GPU output: more than 256 columns");
	memset(hb, 0, sizeof(hb));
	for (k = 0; k < nout; k++) {
		gpu_col *c = &outs[k].col[0];
		size_t w = c->type == BC_COL_TEXT    ? sizeof(gpu_str)
			   : c->type == BC_COL_DATE  ? 4
			   : c->type == BC_COL_INT32 ? 4
			   : c->type == BC_COL_FLOAT ? 4
			   : c->type == BC_COL_BOOL  ? 1
			   : c->type == VEC_NULL     ? 0
						     : 8;
		if (!(hb[k] = malloc(w * n + n + 1))) {
			rc = db_err(x->db, GPMDB_NOMEM, "out of memory");
			goto out;
		}
		dst[2 * k] = hb[k];
		src[2 * k] = c->data;
		len[2 * k] = w * n;
		dst[2 * k + 1] = (char *)hb[k] + w * n;
		src[2 * k + 1] = c->nulls;
		len[2 * k + 1] = c->type == VEC_NULL ? 0 : n;
	}
	if ((rc = gpu_download_many(2 * nout, dst, src, len, err,
				    sizeof(err)))) {
		rc = xg_gerr(x, rc, "download", err);
		goto out;
	}
	for (k = 0; k < nout; k++)
		x->db->gstat.bytes_downloaded += len[2 * k] + len[2 * k + 1];
	if ((rc = rel_reserve(r, n)))
		goto out;
	for (k = 0; k < nout && !rc; k++) {
		gpu_col *c = &outs[k].col[0];
		vec v;
		memset(&v, 0, sizeof(v));
		v.type = c->type;
		v.prec = c->prec;
		v.scale = c->scale;
		v.count = n;
		v.nulls = (uint8_t *)dst[2 * k + 1];
		v.v.data = hb[k];
		if (c->type == BC_COL_TEXT) {
			gpu_str *gs = hb[k];
			vec_str *vs = malloc(sizeof(vec_str) * n + 1);
			if (!vs) {
				rc =
				    db_err(x->db, GPMDB_NOMEM, "out of memory");
				break;
			}
			for (uint32_t i = 0; i < n; i++) {
				gpu_str g = gs[i];
				vs[i].len = v.nulls[i] ? 0 : g.len;
				vs[i].ptr =
				    v.nulls[i] ? "" : xg_host_text(&outs[k], g);
			}
			v.v.str = vs;
			rc = rel_put_vec(r, k, 0, &v, n);
			free(vs);
		} else {
			/* values of NULL rows are unspecified on the GPU;
			 * the CPU's are zero */
			size_t w = len[2 * k] / (n ? n : 1);
			if (c->type != VEC_NULL)
				for (uint32_t i = 0; i < n; i++)
					if (v.nulls[i])
						memset((char *)hb[k] + i * w, 0,
						       w);
			rc = rel_put_vec(r, k, 0, &v, n);
		}
	}
	if (!rc)
		r->nrows = n;
out:
	for (k = 0; k < nout; k++)
		free(hb[k]);
	return rc;
}

/* ---- streamed scans: tables whose columns do not fit the cache ------- */

/* The columns of src (a SCAN) that n's chain reads: need[c] set. */
static void xg_mark_cx(const cexpr *c, bool *need, int ncols)
{
	for (int k = 0; k < c->ninputs; k++)
		if (c->in[k].kind == IN_COL && c->in[k].col >= 0 &&
		    c->in[k].col < ncols)
			need[c->in[k].col] = true;
}

static int xg_need_cols(exec_ctx *x, pnode *n, pnode *src, bool *need)
{
	cexpr *c;
	int rc;

	for (pnode *f = n->kind == PN_FILTER ? n : n->l; f && f != src;
	     f = f->l) {
		if ((rc = exec_node_cx(x, f, 0, f->pred, f->post, f->l, &c)))
			return rc;
		xg_mark_cx(c, need, src->ncols);
	}
	if (n->kind == PN_PROJECT) {
		for (int i = 0; i < n->nexprs; i++) {
			if ((rc = exec_node_cx(x, n, i, n->exprs[i], n->post,
					       n->l, &c)))
				return rc;
			xg_mark_cx(c, need, src->ncols);
		}
	} else if (n->kind == PN_AGG) {
		for (int k = 0; k < n->ngroup; k++) {
			if ((rc = exec_node_cx(x, n, k, n->group[k], false,
					       n->l, &c)))
				return rc;
			xg_mark_cx(c, need, src->ncols);
		}
		for (int a = 0; a < n->naggs; a++) {
			if (!n->aggs[a].arg)
				continue;
			if ((rc =
				 exec_node_cx(x, n, n->ngroup + a,
					      n->aggs[a].arg, false, n->l, &c)))
				return rc;
			xg_mark_cx(c, need, src->ncols);
		}
	} else {
		/* a FILTER whose consumer is on the CPU returns every
		 * column */
		for (int k = 0; k < n->ncols && k < src->ncols; k++)
			need[k] = true;
	}
	return GPMDB_OK;
}

/* Column c of scan sc as the cache names it. */
static void xg_tcol(const pnode *sc, int c, int *col, int *stype)
{
	int tc = sc->tcol ? sc->tcol[c] : c;

	*col = tc >= sc->ntcols ? GCACHE_ROWID : tc;
	*stype = tc >= sc->ntcols ? 0 : sc->stype[tc];
}

/*
 * The size check of the normal path: whether the columns n's chain needs
 * (their cache entries' sizes, or what loading them would take) fit in
 * what the cache can give the query.  A cached column costs a lookup; an
 * uncached one is measured (the measure is memoised for its load).
 */
static int xg_fits(exec_ctx *x, pnode *n, pnode *src, bool *fits)
{
	bool *need = calloc((size_t)src->ncols + 1, sizeof(bool));
	uint64_t total = 0, b;
	char err[300];
	int rc, col, st;

	*fits = true;
	if (!need)
		return db_err(x->db, GPMDB_NOMEM, "out of memory");
	if ((rc = xg_need_cols(x, n, src, need)))
		goto out;
	for (int c = 0; c < src->ncols; c++) {
		if (!need[c])
			continue;
		xg_tcol(src, c, &col, &st);
		if ((rc = gcache_need(x->db->pool, x->db->gpu_owner,
				      src->table_id, col, st, &b, err,
				      sizeof(err)))) {
			rc = xg_gerr(x, rc, "column cache", err);
			goto out;
		}
		total += b;
	}
	*fits = total <= gcache_room();
out:
	free(need);
	return rc;
}

/* Appends cur to the windows when it has live rows; clears it. */
static int xg_win_push(exec_ctx *x, xg_win **w, uint32_t *nw, uint32_t *cap,
		       xg_win *cur)
{
	if (cur->live) {
		if (*nw == *cap) {
			uint32_t c2 = *cap ? 2 * *cap : 16;
			xg_win *w2 = realloc(*w, sizeof(xg_win) * c2);
			if (!w2)
				return db_err(x->db, GPMDB_NOMEM,
					      "out of memory");
			*w = w2;
			*cap = c2;
		}
		(*w)[(*nw)++] = *cur;
	}
	memset(cur, 0, sizeof(*cur));
	return GPMDB_OK;
}

/* Live rows and device bytes of the columns cols over [r0, r0 + rn). */
static int xg_win_measure(exec_ctx *x, uint32_t table_id, const int *cols,
			  const int *sts, int nc, uint64_t r0, uint64_t rn,
			  xg_win *o)
{
	uint64_t l = 0, b = 0;
	char err[300];
	int rc;

	memset(o, 0, sizeof(*o));
	o->row0 = r0;
	o->nrows = rn;
	for (int k = 0; k < nc; k++) {
		if ((rc = gcache_range_size(x->db->pool, table_id, cols[k],
					    sts[k], r0, rn, &l, &b, err,
					    sizeof(err))))
			return xg_gerr(x, rc, "column window", err);
		o->live = l;
		o->bytes += b;
	}
	return GPMDB_OK;
}

/*
 * The windows of a streamed scan: ranges of the table's physical rows
 * whose needed columns take at most budget device bytes (a quarter of
 * what the cache can give the query or of the free device memory when
 * less, at least XG_WIN_MIN_BUDGET).  Whole
 * tablets are put together while they fit; a tablet larger than the
 * budget is cut into pieces of a multiple of 1024 rows (a piece's text
 * may still pass the budget when its strings are longer than the
 * tablet's average).  Windows without live rows are left out.
 */
static int xg_windows(exec_ctx *x, pnode *n, pnode *src, xg_win **wout,
		      uint32_t *nwout)
{
	stg_pool *p = x->db->pool;
	bool *need = calloc((size_t)src->ncols + 1, sizeof(bool));
	int *cols = calloc((size_t)src->ncols + 1, sizeof(int)),
	    *sts = calloc((size_t)src->ncols + 1, sizeof(int)), nc = 0;
	uint64_t room = gcache_room(), budget;
	xg_win *w = NULL, cur, tw;
	gpu_info gi;
	uint32_t nw = 0, cap = 0, nt = 0;
	int rc = GPMDB_OK;

	*wout = NULL;
	*nwout = 0;
	memset(&cur, 0, sizeof(cur));
	/* the device memory free now (the pool keeps freed memory: its
	 * unused part counts), when less than the cache's room */
	if (gpu_get_info(&gi, NULL, 0) == GPMDB_OK) {
		uint64_t avail =
		    gi.mem_free + (gi.pool_reserved > gi.pool_used
				       ? gi.pool_reserved - gi.pool_used
				       : 0);
		if (avail < room)
			room = avail;
	}
	budget = room / 4;
	if (budget < XG_WIN_MIN_BUDGET)
		budget = XG_WIN_MIN_BUDGET;
	if (!need || !cols || !sts) {
		rc = db_err(x->db, GPMDB_NOMEM, "out of memory");
		goto out;
	}
	if ((rc = xg_need_cols(x, n, src, need)))
		goto out;
	for (int c = 0; c < src->ncols; c++)
		if (need[c]) {
			xg_tcol(src, c, &cols[nc], &sts[nc]);
			nc++;
		}
	if (!nc) { /* count(*) alone: windows sized by the row ids */
		cols[nc] = GCACHE_ROWID;
		sts[nc++] = 0;
	}
	if (stg_tablet_count(p, src->table_id, &nt)) {
		rc = db_err(x->db, stg_errcode(p), "%s", stg_errmsg(p));
		goto out;
	}
	for (uint32_t t = 0; t < nt && !rc; t++) {
		stg_tablet_view v;
		if (stg_tablet_get(p, src->table_id, t, &v)) {
			rc = db_err(x->db, stg_errcode(p), "%s", stg_errmsg(p));
			break;
		}
		if (!v.nrows)
			continue;
		if ((rc = xg_win_measure(x, src->table_id, cols, sts, nc,
					 v.first_row, v.nrows, &tw)))
			break;
		if (tw.bytes <= budget || v.nrows <= 1024) {
			if (cur.nrows &&
			    (cur.row0 + cur.nrows != tw.row0 ||
			     cur.bytes + tw.bytes > budget ||
			     cur.live + tw.live > UINT32_MAX) &&
			    (rc = xg_win_push(x, &w, &nw, &cap, &cur)))
				break;
			if (!cur.nrows)
				cur.row0 = tw.row0;
			cur.nrows += tw.nrows;
			cur.live += tw.live;
			cur.bytes += tw.bytes;
			continue;
		}
		if ((rc = xg_win_push(x, &w, &nw, &cap, &cur)))
			break;
		uint64_t k = (tw.bytes + budget - 1) / budget;
		uint64_t step = ((uint64_t)v.nrows / k) & ~1023ull;
		uint64_t end = v.first_row + v.nrows;
		if (step < 1024)
			step = 1024;
		for (uint64_t r0 = v.first_row; r0 < end && !rc; r0 += step) {
			uint64_t rn = end - r0 < step ? end - r0 : step;
			if (!(rc = xg_win_measure(x, src->table_id, cols, sts,
						  nc, r0, rn, &cur)))
				rc = xg_win_push(x, &w, &nw, &cap, &cur);
		}
	}
	if (!rc)
		rc = xg_win_push(x, &w, &nw, &cap, &cur);
out:
	free(need);
	free(cols);
	free(sts);
	if (rc) {
		free(w);
		return rc;
	}
	*wout = w;
	*nwout = nw;
	return GPMDB_OK;
}

/* ---- the operators -------------------------------------------------- */

static int xg_prepare_at(exec_ctx *x, pnode *n, pnode **chain, int nchain,
			 pnode *src, xg_src *s, const xg_win *win);
static int xg_prepare(exec_ctx *x, pnode *n, xg_src *s);

static uint32_t xg_rows(const xg_src *s)
{
	return s->sel ? s->nsel : s->nrows;
}

/* Sets up the source of n's chain and runs the chain's filters (bottom
 * up): s->sel holds the selected rows.  win: a window of a streamed scan;
 * NULL otherwise. */
static int xg_prepare_win(exec_ctx *x, pnode *n, xg_src *s, const xg_win *win)
{
	pnode *chain[64], *src;
	int nchain = 0;
	char why[300];

	memset(s, 0, sizeof(*s));
	s->x = x;
	src = xg_source(x, n, why, sizeof(why));
	if (n->kind == PN_FILTER)
		chain[nchain++] = n;
	for (pnode *f = n->l; f != src; f = f->l) {
		if (nchain == 64)
			return db_err(x->db, GPMDB_UNSUPPORTED,
				      "GPU input: more than 63 filters");
		chain[nchain++] = f;
	}
	return xg_prepare_at(x, n, chain, nchain, src, s, win);
}

/* ---- joins kept on the device ----------------------------------------- */

/* Joins whose pairs a GPU operator above reads on the device (pairs in
 * HBM, columns gathered through them) instead of a host relation. */
static uint64_t xg_dev_joins;

/* out[k] = base[idx[k]], k < m (device index arrays; GPU_NO_ROW stays). */
static int xg_remap(exec_ctx *x, const uint32_t *base, const uint32_t *idx,
		    uint32_t m, uint32_t **out)
{
	char err[300];
	int rc;

	if ((rc = gpu_remap(base, idx, m, out, err, sizeof(err))))
		return xg_gerr(x, rc, "join", err);
	return GPMDB_OK;
}

/* *out: a new device array of a[0..na) then b[0..nb) (b NULL: GPU_NO_ROW). */
static int xg_concat(exec_ctx *x, const uint32_t *a, uint32_t na,
		     const uint32_t *b, uint32_t nb, uint32_t **out)
{
	char err[300];
	int rc;

	if ((rc = gpu_alloc((void **)out, 4 * ((size_t)na + nb) + 4, err,
			    sizeof(err))) ||
	    (rc = gpu_copy(*out, a, 4 * (size_t)na, err, sizeof(err))) ||
	    (rc = b ? gpu_copy(*out + na, b, 4 * (size_t)nb, err, sizeof(err))
		    : gpu_memset(*out + na, 0xff, 4 * (size_t)nb, err,
				 sizeof(err)))) {
		gpu_free(*out, NULL, 0);
		*out = NULL;
		return xg_gerr(x, rc, "join", err);
	}
	return GPMDB_OK;
}

/* Keeps rows idx[0..cnt) (device; positions among s's current rows,
 * taken over) of s: a selection composed with s->sel, or for a joined
 * source each leaf's rows compacted. */
static int xg_src_select(xg_src *s, uint32_t *idx, uint32_t cnt)
{
	uint32_t *m;
	int rc = GPMDB_OK;

	if (!s->nleaf) {
		if (s->sel) {
			rc = xg_remap(s->x, s->sel, idx, cnt, &m);
			gpu_free(idx, NULL, 0);
			if (rc)
				return rc;
			gpu_free(s->sel, NULL, 0);
			idx = m;
		}
		s->sel = idx;
		s->nsel = cnt;
		return GPMDB_OK;
	}
	for (int i = 0; i < s->nleaf && !rc; i++) {
		if (!(rc = xg_remap(s->x, s->leaf[i].idx, idx, cnt, &m))) {
			gpu_free(s->leaf[i].idx, NULL, 0);
			s->leaf[i].idx = m;
		}
	}
	gpu_free(idx, NULL, 0);
	s->nrows = cnt;
	/* loaded columns point at the old rows */
	for (int c = 0; c < s->ncols; c++)
		s->cols[c].loaded = false;
	return rc;
}

/*
 * Whether JOIN j can be a device source: an inner equi-join the GPU runs
 * (exec_gpu_ops_decide: key types, the threshold under auto), keys and
 * residual the GPU interpreter runs.  Other joins (LEFT, SEMI/ANTI)
 * return host relations (exec_gpu_ops.c).
 */
static int xg_join_ok(exec_ctx *x, pnode *j, char *why, size_t len)
{
	cexpr *c;

	bool semi = j->jtype == JOIN_SEMI || j->jtype == JOIN_ANTI ||
		    j->jtype == JOIN_ANTI_NULL;
	if (j->kind != PN_JOIN || !j->nkeys ||
	    (j->jtype != JOIN_INNER && j->jtype != JOIN_LEFT && !semi)) {
		snprintf(why, len,
			 "only inner, LEFT, semi and anti equi-joins stay on "
			 "the device");
		return 0;
	}
	if (j->jtype == JOIN_ANTI_NULL && j->pred) {
		snprintf(why, len,
			 "a NOT IN join with a residual condition returns a "
			 "host relation");
		return 0;
	}
	if (j->nkeys > 32) {
		snprintf(why, len, "%d join keys (32 on the device)", j->nkeys);
		return 0;
	}
	if (exec_gpu_ops_decide(x, j, why, len) != XG_GPU)
		return 0;
	for (int k = 0; k < j->nkeys; k++)
		if (!xg_expr_ok(x, j, k, j->lkeys[k], false, j->l, &c, why,
				len) ||
		    !xg_expr_ok(x, j, j->nkeys + k, j->rkeys[k], false, j->r,
				&c, why, len))
			return 0;
	if (j->pred && !xg_expr_ok(x, j, 2 * j->nkeys, j->pred, false,
				   semi && j->pair ? j->pair : j, &c, why, len))
		return 0;
	return 1;
}

/* Whether PROJECT c can be a device source (xg_prepare_proj): it runs on
 * the GPU over a scan or a device join, and no output is TEXT (a TEXT
 * output may point at its program's constants, which another program
 * cannot read). */
/* Is c's program a column of the source as it is (one LOAD_COL, its
 * OUTPUT)? */
static bool xg_passthrough(const cexpr *c)
{
	const bc_program *p = c->prog;
	int load = -1;

	if (c->ninputs != 1 || c->in[0].kind != IN_COL || p->noutputs != 1)
		return false;
	for (uint32_t k = 0; k < p->ninsns; k++) {
		const bc_insn *in = &p->insns[k];
		if (in->op == BC_NOP)
			continue;
		if (in->op == BC_LOAD_COL && in->a == 0 && load < 0)
			load = in->dst;
		else if (!(in->op == BC_OUTPUT && load >= 0 && in->a == load))
			return false;
	}
	return load >= 0 && p->out_reg[0] == load;
}

static int xg_proj_ok(exec_ctx *x, pnode *c)
{
	char why[400];
	pnode *src;

	if (c->kind != PN_PROJECT || c->ncols != c->nexprs)
		return 0;
	/* TEXT outputs: source columns as they are (their values point
	 * into the column's own text; a computed string may point into the
	 * program's constants, which a consumer's program cannot read) */
	for (int i = 0; i < c->ncols; i++) {
		cexpr *cx;
		if (c->ty[i].t != BC_T_TEXT)
			continue;
		if (exec_node_cx(x, c, i, c->exprs[i], c->post, c->l, &cx)) {
			db_clear(x->db); /* the CPU's run reports it */
			return 0;
		}
		if (!xg_passthrough(cx))
			return 0;
	}
	if (xg_decide(x, c, why, sizeof(why)) != XG_GPU)
		return 0;
	src = xg_source(x, c, why, sizeof(why));
	return src &&
	       (src->kind == PN_SCAN ||
		(src->kind == PN_JOIN &&
		 xg_join_ok(x, src, why, sizeof(why))) ||
		/* a GROUP BY kept on the device (TPC-H Q13, Q15's view) */
		xg_agg_keep_ok(src));
}

/* PROJECT c as a source: run over its own source, the outputs stay on
 * the device as dense columns (a join's input needs no host relation). */
static int xg_prepare_proj(exec_ctx *x, pnode *c, xg_src *s)
{
	xg_src *in = calloc(1, sizeof(xg_src));
	struct xg_out *o = calloc((size_t)c->nexprs + 1, sizeof(xg_out));
	int rc;

	memset(s, 0, sizeof(*s));
	s->x = x;
	s->own = in;
	s->outs = o;
	if (!in || !o)
		return db_err(x->db, GPMDB_NOMEM, "out of memory");
	s->nouts = c->nexprs;
	if ((rc = xg_prepare(x, c, in)))
		return rc;
	for (int i = 0; i < c->nexprs; i++) {
		cexpr *cx;
		if ((rc = exec_node_cx(x, c, i, c->exprs[i], c->post, c->l,
				       &cx)) ||
		    (rc = xg_run(in, cx, &o[i])))
			return rc;
	}
	s->ncols = c->ncols;
	if (!(s->cols = calloc((size_t)s->ncols + 1, sizeof(xg_col))))
		return db_err(x->db, GPMDB_NOMEM, "out of memory");
	s->nrows = xg_rows(in);
	for (int i = 0; i < c->nexprs; i++) {
		s->cols[i].col = o[i].col[0];
		s->cols[i].col.sel = NULL;
		s->cols[i].ndata = s->nrows;
		s->cols[i].loaded = true;
		/* TEXT (xg_proj_ok: a column as it is): the run's buffer,
		 * kept by in, and its map to host bytes, kept by o */
		s->cols[i].text = o[i].dtext;
		s->cols[i].ntext = o[i].ntext;
		s->cols[i].seg = o[i].seg;
		s->cols[i].nseg = o[i].nseg;
	}
	x->db->gstat.gpu_ops++;
	return GPMDB_OK;
}

/* A join's input c as a source: its GPU filters and scan, a device join,
 * or whatever else runs it (on either backend) uploaded. */
static int xg_prepare_side(exec_ctx *x, pnode *c, xg_src *s)
{
	char why[300];
	cexpr *cx;

	if (c->kind == PN_FILTER &&
	    xg_expr_ok(x, c, 0, c->pred, c->post, c->l, &cx, why, sizeof(why)))
		return xg_prepare_win(x, c, s, NULL);
	if (xg_proj_ok(x, c))
		return xg_prepare_proj(x, c, s);
	memset(s, 0, sizeof(*s));
	s->x = x;
	return xg_prepare_at(x, c, NULL, 0, c, s, NULL);
}

/*
 * A SEMI/ANTI join's kept left rows (positions among the left input's
 * rows, device) when it has a residual: the pairs (gpu_join_dev) as a
 * source over the pair layout whose leaves borrow the inputs', the
 * residual run over every pair (as exec.c does), then the left rows that
 * a passing pair names (SEMI) or that none names (ANTI).
 */
static int xg_semi_residual(exec_ctx *x, pnode *j, xg_src **side,
			    const gpu_sortcol *kc, uint32_t **rows,
			    uint32_t *nrows)
{
	const pnode *pl = j->pair ? j->pair : j;
	uint32_t nl = xg_rows(side[0]), *pi[2] = {NULL, NULL}, *idx = NULL,
		 *kept = NULL, cnt = 0;
	uint64_t np = 0;
	struct xg_out o;
	xg_src t;
	char err[300];
	cexpr *c;
	int rc, n = 0;

	memset(&o, 0, sizeof(o));
	memset(&t, 0, sizeof(t));
	t.x = x;
	if ((rc = gpu_join_dev(kc, kc + j->nkeys, j->nkeys, nl,
			       xg_rows(side[1]), NULL, NULL, 1ull << 31, &pi[0],
			       &pi[1], &np, err, sizeof(err)))) {
		rc = xg_gerr(x, rc, "join", err);
		goto out;
	}
	t.ncols = pl->ncols;
	t.nrows = (uint32_t)np;
	if (!(t.cols = calloc((size_t)t.ncols + 1, sizeof(xg_col))) ||
	    !(t.leaf = calloc((size_t)(side[0]->nleaf + side[1]->nleaf + 2),
			      sizeof(xg_leaf)))) {
		rc = db_err(x->db, GPMDB_NOMEM, "out of memory");
		goto out;
	}
	for (int s = 0; s < 2 && !rc; s++) {
		xg_src *in = side[s];
		int col0 = s ? j->l->ncols : 0;
		uint32_t *m = NULL;
		if (!in->nleaf) {
			rc = in->sel
				 ? xg_remap(x, in->sel, pi[s], (uint32_t)np, &m)
				 : xg_concat(x, pi[s], (uint32_t)np, NULL, 0,
					     &m);
			if (!rc)
				t.leaf[n++] = (xg_leaf){in, m, col0, true};
			continue;
		}
		for (int q = 0; q < in->nleaf && !rc; q++)
			if (!(rc = xg_remap(x, in->leaf[q].idx, pi[s],
					    (uint32_t)np, &m)))
				t.leaf[n++] =
				    (xg_leaf){in->leaf[q].src, m,
					      col0 + in->leaf[q].col0, true};
	}
	t.nleaf = n;
	if (rc ||
	    (rc = exec_node_cx(x, j, 2 * j->nkeys, j->pred, false, pl, &c)) ||
	    (rc = xg_run(&t, c, &o)))
		goto out;
	if ((rc = gpu_select(&o.col[0], (uint32_t)np, NULL, &idx, &cnt, err,
			     sizeof(err)))) {
		rc = xg_gerr(x, rc, "select", err);
		goto out;
	}
	if ((rc = xg_remap(x, pi[0], idx, cnt, &kept)))
		goto out;
	if ((rc = gpu_unmatched(kept, cnt, nl, j->jtype == JOIN_SEMI, rows,
				nrows, err, sizeof(err))))
		rc = xg_gerr(x, rc, "join", err);
out:
	xg_out_free(&o);
	xg_src_free(&t);
	gpu_free(pi[0], NULL, 0);
	gpu_free(pi[1], NULL, 0);
	gpu_free(idx, NULL, 0);
	gpu_free(kept, NULL, 0);
	return rc;
}

/* A SEMI/ANTI join of the prepared inputs side[0..1] with their keys kc:
 * s becomes the left input with the rows it keeps. */
static int xg_semi_dev(exec_ctx *x, pnode *j, xg_src **side,
		       const gpu_sortcol *kc, xg_src *s)
{
	xg_src *l = side[0];
	uint32_t *rows, cnt;
	char err[300];
	int rc;

	if (xg_rows(l) > UINT32_MAX / 2 || xg_rows(side[1]) > UINT32_MAX / 2)
		return xg_gerr(x, GPMDB_UNSUPPORTED, "join",
			       "an input of more than 2^31 rows");
	if (j->pred) {
		if ((rc = xg_semi_residual(x, j, side, kc, &rows, &cnt)) ||
		    (rc = xg_src_select(l, rows, cnt)))
			return rc;
		goto done;
	}
	if ((rc = gpu_semi_join_dev(
		 kc, kc + j->nkeys, j->nkeys, xg_rows(l), xg_rows(side[1]),
		 j->jtype == JOIN_SEMI	 ? GPU_SEMI
		 : j->jtype == JOIN_ANTI ? GPU_ANTI
					 : GPU_ANTI_NULL,
		 l->nleaf ? NULL : l->sel, &rows, &cnt, err, sizeof(err))))
		return xg_gerr(x, rc, "join", err);
	if (l->nleaf) {
		/* positions among the joined input's rows */
		if ((rc = xg_src_select(l, rows, cnt)))
			return rc;
	} else {
		/* rows of the input's columns (through its selection) */
		gpu_free(l->sel, NULL, 0);
		l->sel = rows;
		l->nsel = cnt;
	}
done:
	free(s->cols);
	*s = *l;
	free(l);
	side[0] = NULL;
	x->db->gstat.gpu_ops++;
	xg_dev_joins++;
	return GPMDB_OK;
}

/*
 * JOIN j as a source of s: both inputs prepared as sources, their keys
 * computed on the device, the pairs (gpu_join_dev) kept there as rows
 * of the inputs' leaves, the residual run as a filter.  Columns are
 * read through the pairs when an operator needs them (xg_load): nothing
 * is materialised on the host, and only the columns used are read.  The
 * pairs are in exec.c's order (left rows ascending, a left row's right
 * rows descending), as are the inputs' rows: the CPU join's rows.
 */
static int xg_prepare_join(exec_ctx *x, pnode *j, xg_src *s)
{
	int nk = j->nkeys, rc = GPMDB_OK, nl = 0;
	xg_src *side[2] = {calloc(1, sizeof(xg_src)),
			   calloc(1, sizeof(xg_src))};
	xg_out *ko = calloc(2 * (size_t)nk, sizeof(xg_out));
	gpu_sortcol *kc = calloc(2 * (size_t)nk, sizeof(gpu_sortcol));
	uint32_t *pi[2] = {NULL, NULL}, *ld = NULL, nleft = 0;
	uint64_t np = 0;
	bool left = j->jtype == JOIN_LEFT;
	char err[300];

	if (!side[0] || !side[1] || !ko || !kc) {
		rc = db_err(x->db, GPMDB_NOMEM, "out of memory");
		goto out;
	}
	for (int t = 0; t < 2 && !rc; t++)
		rc = xg_prepare_side(x, t ? j->r : j->l, side[t]);
	/* keys as exec_join evaluates them: left, then right */
	for (int t = 0; t < 2 && !rc; t++)
		for (int k = 0; k < nk && !rc; k++) {
			cexpr *c;
			if (!(rc = exec_node_cx(x, j, t * nk + k,
						t ? j->rkeys[k] : j->lkeys[k],
						false, t ? j->r : j->l, &c)) &&
			    !(rc = xg_run(side[t], c, &ko[t * nk + k])))
				rc = xg_keycol(side[t], &ko[t * nk + k],
					       &kc[t * nk + k]);
		}
	if (rc)
		goto out;
	if (j->jtype != JOIN_INNER && !left) {
		rc = xg_semi_dev(x, j, side, kc, s);
		goto out;
	}
	/* pairs as rows of the inputs' columns: through a plain input's
	 * selection; a joined input's leaves are remapped below */
	if (xg_rows(side[0]) > UINT32_MAX / 2 ||
	    xg_rows(side[1]) > UINT32_MAX / 2) {
		rc = xg_gerr(x, GPMDB_UNSUPPORTED, "join",
			     "an input of more than 2^31 rows");
		goto out;
	}
	nleft = xg_rows(side[0]);
	if ((rc = gpu_join_dev(kc, kc + nk, nk, nleft, xg_rows(side[1]),
			       left || side[0]->nleaf ? NULL : side[0]->sel,
			       side[1]->nleaf ? NULL : side[1]->sel, 1ull << 31,
			       &pi[0], &pi[1], &np, err, sizeof(err)))) {
		rc = xg_gerr(x, rc, "join", err);
		goto out;
	}
	for (int k = 0; k < 2 * nk; k++)
		xg_out_free(&ko[k]);
	/* LEFT: the pairs' left positions (dense) are kept to find the
	 * unmatched rows; the leaf gets rows of the input's columns */
	if (left) {
		ld = pi[0];
		pi[0] = NULL;
		if (!side[0]->nleaf && side[0]->sel)
			rc =
			    xg_remap(x, side[0]->sel, ld, (uint32_t)np, &pi[0]);
		else
			rc = xg_concat(x, ld, (uint32_t)np, NULL, 0, &pi[0]);
		if (rc)
			goto out;
	}
	/* the leaves: a plain input is one, a joined one brings its own */
	if (!(s->leaf = calloc((size_t)(side[0]->nleaf + 1) +
				   (size_t)(side[1]->nleaf + 1),
			       sizeof(xg_leaf)))) {
		rc = db_err(x->db, GPMDB_NOMEM, "out of memory");
		goto out;
	}
	for (int t = 0; t < 2 && !rc; t++) {
		int col0 = t ? j->l->ncols : 0;
		xg_src *in = side[t];
		if (!in->nleaf) {
			s->leaf[nl++] = (xg_leaf){in, pi[t], col0};
			side[t] = NULL;
			pi[t] = NULL;
			continue;
		}
		for (int q = 0; q < in->nleaf && !rc; q++) {
			xg_leaf *lf = &in->leaf[q];
			uint32_t *m;
			if ((rc =
				 xg_remap(x, lf->idx, pi[t], (uint32_t)np, &m)))
				break;
			s->leaf[nl++] = (xg_leaf){lf->src, m, col0 + lf->col0};
			lf->src = NULL;
		}
	}
	s->nleaf = nl;
	s->nrows = (uint32_t)np;
	if (rc)
		goto out;
	x->db->gstat.gpu_ops++;
	xg_dev_joins++;
	/* the residual, over the pairs' layout (the join's own) */
	if (j->pred) {
		cexpr *c;
		xg_out o;
		uint32_t *idx, cnt;
		if ((rc = exec_node_cx(x, j, 2 * nk, j->pred, false, j, &c)))
			goto out;
		if ((rc = xg_run(s, c, &o))) {
			xg_out_free(&o);
			goto out;
		}
		rc = gpu_select(&o.col[0], s->nrows, NULL, &idx, &cnt, err,
				sizeof(err));
		xg_out_free(&o);
		if (rc) {
			rc = xg_gerr(x, rc, "select", err);
			goto out;
		}
		if (left) {
			uint32_t *m;
			if ((rc = xg_remap(x, ld, idx, cnt, &m))) {
				gpu_free(idx, NULL, 0);
				goto out;
			}
			gpu_free(ld, NULL, 0);
			ld = m;
		}
		if ((rc = xg_src_select(s, idx, cnt)))
			goto out;
	}
	/* LEFT: the left rows no pair kept, after the pairs (exec.c's
	 * order), with no right row (GPU_NO_ROW reads NULL) */
	if (left) {
		int nll = side[0] ? side[0]->nleaf : 1;
		uint32_t *u = NULL, nu = 0;
		if ((rc = gpu_unmatched(ld, s->nrows, nleft, 0, &u, &nu, err,
					sizeof(err)))) {
			rc = xg_gerr(x, rc, "join", err);
			goto out;
		}
		for (int q = 0; q < s->nleaf && !rc; q++) {
			xg_leaf *lf = &s->leaf[q];
			uint32_t *ext = NULL, *m = NULL;
			const uint32_t *base = q >= nll	 ? NULL
					       : side[0] ? side[0]->leaf[q].idx
							 : lf->src->sel;
			if (q < nll)
				rc = base ? xg_remap(x, base, u, nu, &ext)
					  : xg_concat(x, u, nu, NULL, 0, &ext);
			if (!rc &&
			    !(rc = xg_concat(x, lf->idx, s->nrows,
					     q < nll ? ext : NULL, nu, &m))) {
				gpu_free(lf->idx, NULL, 0);
				lf->idx = m;
			}
			gpu_free(ext, NULL, 0);
		}
		gpu_free(u, NULL, 0);
		s->nrows += nu;
		for (int c = 0; c < s->ncols; c++)
			s->cols[c].loaded = false;
	}
out:
	gpu_free(ld, NULL, 0);
	if (ko)
		for (int k = 0; k < 2 * nk; k++)
			xg_out_free(&ko[k]);
	for (int t = 0; t < 2; t++) {
		if (side[t]) {
			xg_src_free(side[t]);
			free(side[t]);
		}
		gpu_free(pi[t], NULL, 0);
	}
	free(ko);
	free(kc);
	return rc;
}

/* Undoes a failed xg_prepare_join: s is empty again. */
static void xg_unjoin(xg_src *s)
{
	exec_ctx *x = s->x;
	int ncols = s->ncols;
	xg_col *cols = s->cols;

	s->cols = NULL;
	xg_src_free(s);
	s->x = x;
	s->ncols = ncols;
	s->cols = cols;
	memset(cols, 0, sizeof(xg_col) * (size_t)ncols);
}

static int xg_agg_keep(exec_ctx *x, pnode *n, xg_src *d);

/* xg_prepare_win's work for the given chain (top first) and source. */
static int xg_prepare_at(exec_ctx *x, pnode *n, pnode **chain, int nchain,
			 pnode *src, xg_src *s, const xg_win *win)
{
	char why[300], err[300];
	int rc;

	s->ncols = src->ncols;
	if (!(s->cols = calloc((size_t)s->ncols + 1, sizeof(xg_col))))
		return db_err(x->db, GPMDB_NOMEM, "out of memory");
	if (src->kind == PN_SCAN) {
		bool fits = true;
		s->scan = src;
		if (win) {
			s->win = win;
			s->nrows = (uint32_t)win->live;
		} else {
			/* the size check: tables too large for the cache,
			 * or for 32-bit row numbers, are streamed */
			s->nrows = (uint32_t)xg_scan_rows(x->db, src);
			if (xg_scan_rows(x->db, src) > UINT32_MAX)
				return XG_STREAM;
			if ((rc = xg_fits(x, n, src, &fits)))
				return rc;
			if (!fits)
				return XG_STREAM;
		}
	} else {
		rc = XG_DECLINE;
		if (src->kind == PN_JOIN &&
		    xg_join_ok(x, src, why, sizeof(why))) {
			rc = xg_prepare_join(x, src, s);
			/* inputs too large for the device: the join on the
			 * host path (exec_gpu_ops.c streams nothing either,
			 * but takes less memory at once) */
			if (rc == XG_STREAM ||
			    (rc == GPMDB_NOMEM &&
			     !strncmp(x->db->errmsg, "GPU ", 4))) {
				if (rc != XG_STREAM)
					db_clear(x->db);
				xg_unjoin(s);
				rc = XG_DECLINE;
			} else if (rc) {
				return rc;
			}
		}
		/* a projection under this operator (TPC-H Q9's under its
		 * GROUP BY): its outputs stay on the device */
		if (rc == XG_DECLINE && src->kind == PN_PROJECT &&
		    xg_proj_ok(x, src)) {
			free(s->cols);
			s->cols = NULL;
			rc = xg_prepare_proj(x, src, s);
			if (rc == XG_STREAM ||
			    (rc == GPMDB_NOMEM &&
			     !strncmp(x->db->errmsg, "GPU ", 4))) {
				/* too large for the device: as before */
				if (rc != XG_STREAM)
					db_clear(x->db);
				xg_src_free(s);
				s->x = x;
				s->ncols = src->ncols;
				if (!(s->cols = calloc((size_t)s->ncols + 1,
						       sizeof(xg_col))))
					return db_err(x->db, GPMDB_NOMEM,
						      "out of memory");
				rc = XG_DECLINE;
			} else if (rc) {
				return rc;
			}
		}
		/* a GROUP BY under this operator: its groups stay on the
		 * device when there are many (TPC-H Q17, Q18: millions of
		 * groups went to the host and came back) */
		if (rc == XG_DECLINE && src->kind == PN_AGG &&
		    (rc = xg_agg_keep(x, src, s)) != XG_DECLINE) {
			if (rc)
				return rc;
		} else if (rc == XG_DECLINE) {
			if ((rc = exec_node(x, src, &s->in)))
				return rc;
			if (s->in->nrows > UINT32_MAX)
				return db_err(x->db, GPMDB_UNSUPPORTED,
					      "GPU input: more than 2^32 rows");
			s->nrows = (uint32_t)s->in->nrows;
		}
	}
	/* filters: lowest first */
	for (int i = nchain - 1; i >= 0; i--) {
		pnode *f = chain[i];
		cexpr *c;
		xg_out o;
		uint32_t *idx, cnt;
		if ((rc = exec_node_cx(x, f, 0, f->pred, f->post, f->l, &c)))
			return rc;
		if ((rc = xg_run(s, c, &o))) {
			xg_out_free(&o);
			return rc;
		}
		rc = gpu_select(&o.col[0], s->sel ? s->nsel : s->nrows, s->sel,
				&idx, &cnt, err, sizeof(err));
		xg_out_free(&o);
		if (rc)
			return xg_gerr(x, rc, "select", err);
		if (s->nleaf) {
			if ((rc = xg_src_select(s, idx, cnt)))
				return rc;
		} else {
			gpu_free(s->sel, NULL, 0);
			s->sel = idx;
			s->nsel = cnt;
		}
		x->db->gstat.gpu_ops++;
	}
	return GPMDB_OK;
}

static int xg_prepare(exec_ctx *x, pnode *n, xg_src *s)
{
	return xg_prepare_win(x, n, s, NULL);
}

static int xg_project(exec_ctx *x, pnode *n, xg_src *s, rel **out)
{
	xg_out *o = calloc((size_t)n->nexprs + 1, sizeof(xg_out));
	rel *r = NULL;
	int rc = GPMDB_OK, i;

	if (!o)
		return db_err(x->db, GPMDB_NOMEM, "out of memory");
	for (i = 0; i < n->nexprs && !rc; i++) {
		cexpr *c;
		if (!(rc = exec_node_cx(x, n, i, n->exprs[i], n->post, n->l,
					&c)))
			rc = xg_run(s, c, &o[i]);
	}
	if (!rc && !(r = rel_new(x, n->ncols, n->ty)))
		rc = x->db->errcode ? x->db->errcode : GPMDB_NOMEM;
	if (!rc)
		rc = xg_fetch(x, o, n->nexprs, xg_rows(s), r);
	for (i = 0; i < n->nexprs; i++)
		xg_out_free(&o[i]);
	free(o);
	if (rc) {
		rel_free(r);
		return rc;
	}
	*out = r;
	return GPMDB_OK;
}

/*
 * SORT (keep rows: its LIMIT + OFFSET, or all) over a GPU PROJECT whose
 * source is a table scan.  Why: the general path materialised the whole
 * projection on the host and uploaded the keys again (4.7 s for a top-100
 * of 100M rows).  Here the projection's outputs stay on the device, the
 * keys are sorted there (gpu_sort; a small keep sorts only candidates)
 * and only the first keep rows are gathered on the device and come back.
 * The rows and their order are those of the general path.  XG_DECLINE
 * when the shape does not fit (the caller runs the general path).
 */
int exec_gpu_sort_dev(exec_ctx *x, pnode *n, uint64_t keep, rel **out)
{
	pnode *p = n->l, *src;
	gpu_sortcol *keys = NULL; /* heap: xg_prepare recurses below */
	xg_out *o = NULL, *g = NULL;
	uint32_t *perm = NULL, *dperm = NULL, m;
	rel *r = NULL;
	char why[400], err[300];
	xg_src s;
	int rc = GPMDB_OK, d;

	if (!p || p->kind != PN_PROJECT || n->nsort > 64 ||
	    p->nexprs != n->ncols)
		return XG_DECLINE;
	pthread_mutex_lock(&xg_lock);
	if (xg_depth++ == 0)
		gcache_begin();
	d = xg_decide(x, p, why, sizeof(why));
	src = d == XG_GPU ? xg_source(x, p, why, sizeof(why)) : NULL;
	/* a source that stays on the device: a scan, a device join, a
	 * GROUP BY whose groups stay there (TPC-H Q10: 389k groups with
	 * TEXT keys, of which LIMIT keeps 20) */
	if (!src ||
	    !(src->kind == PN_SCAN ||
	      (src->kind == PN_JOIN && xg_join_ok(x, src, why, sizeof(why))) ||
	      xg_agg_keep_ok(src))) {
		xg_depth--;
		pthread_mutex_unlock(&xg_lock);
		return XG_DECLINE;
	}
	memset(&s, 0, sizeof(s));
	if ((rc = xg_prepare(x, p, &s)))
		goto out;
	if (!(o = calloc((size_t)p->nexprs + 1, sizeof(xg_out))) ||
	    !(g = calloc((size_t)p->nexprs + 1, sizeof(xg_out))) ||
	    !(keys = calloc((size_t)n->nsort + 1, sizeof(gpu_sortcol)))) {
		rc = db_err(x->db, GPMDB_NOMEM, "out of memory");
		goto out;
	}
	for (int i = 0; i < p->nexprs && !rc; i++) {
		cexpr *c;
		if (!(rc = exec_node_cx(x, p, i, p->exprs[i], p->post, p->l,
					&c)))
			rc = xg_run(&s, c, &o[i]);
	}
	if (rc)
		goto out;
	x->db->gstat.gpu_ops++; /* the projection */
	m = xg_rows(&s);
	if (keep > m)
		keep = m;
	for (int k = 0; k < n->nsort && !rc; k++) {
		rc = xg_keycol(&s, &o[n->sort_col[k]], &keys[k]);
		keys[k].desc = n->desc[k];
		keys[k].nulls_first = n->nulls_first[k];
	}
	if (rc)
		goto out;
	if (!(perm = malloc(4 * keep + 4))) {
		rc = db_err(x->db, GPMDB_NOMEM, "out of memory");
		goto out;
	}
	if ((rc = gpu_sort(keys, n->nsort, m, (uint32_t)keep, perm, err,
			   sizeof(err))) ||
	    (rc = gpu_alloc((void **)&dperm, 4 * keep + 4, err, sizeof(err))) ||
	    (rc = gpu_upload(dperm, perm, 4 * keep, err, sizeof(err)))) {
		rc = xg_gerr(x, rc, "sort", err);
		goto out;
	}
	x->db->gstat.bytes_downloaded += 4 * keep;
	/* the kept rows of every output, gathered on the device; text still
	 * maps through each output's segments */
	for (int i = 0; i < p->nexprs && !rc; i++) {
		g[i] = o[i];
		g[i].have = false;
		if ((rc = gpu_gather(&o[i].col[0], dperm, (uint32_t)keep,
				     &g[i].col[0], err, sizeof(err))))
			rc = xg_gerr(x, rc, "gather", err);
	}
	if (!rc && !(r = rel_new(x, n->ncols, n->ty)))
		rc = x->db->errcode ? x->db->errcode : GPMDB_NOMEM;
	if (!rc)
		rc = xg_fetch(x, g, p->nexprs, (uint32_t)keep, r);
out:
	for (int i = 0; g && i < p->nexprs; i++)
		gpu_free(g[i].col[0].data, NULL, 0);
	for (int i = 0; o && i < p->nexprs; i++)
		xg_out_free(&o[i]);
	free(o);
	free(g);
	free(keys);
	free(perm);
	gpu_free(dperm, NULL, 0);
	xg_src_free(&s);
	xg_depth--;
	pthread_mutex_unlock(&xg_lock);
	if (rc) {
		rel_free(r);
		/* too large for the cache: the general path streams the
		 * projection (exec_gpu_node) and sorts its rows */
		return rc == XG_STREAM ? XG_DECLINE : rc;
	}
	*out = r;
	return GPMDB_OK;
}

/* Every column of a FILTER over a cache source, each through an identity
 * program, into o[0..n->ncols). */
static int xg_filter_runs(exec_ctx *x, pnode *n, xg_src *s, xg_out *o)
{
	cexpr c;
	int rc = GPMDB_OK;

	memset(&c, 0, sizeof(c));
	c.ninputs = 1;
	for (int k = 0; k < n->ncols && !rc; k++) {
		bc_program *p = malloc(sizeof(bc_program));
		etype t = n->ty[k];
		if (!p)
			return db_err(x->db, GPMDB_NOMEM, "out of memory");
		bc_init(p);
		bc_input(p, xg_coltype(t.t), t.prec, t.scale);
		if (xg_coltype(t.t) == VEC_NULL)
			bc_emit_output(p, bc_emit_null(p, BC_T_INT, 0));
		else
			bc_emit_output(p, bc_emit_load(p, 0));
		c.prog = p;
		c.in[0].kind = IN_COL;
		c.in[0].col = k;
		rc = xg_run(s, &c, &o[k]);
		free(p);
	}
	return rc;
}

/* A FILTER whose consumer is on the CPU: its rows, every column. */
static int xg_filter_out(exec_ctx *x, pnode *n, xg_src *s, rel **out)
{
	rel *r = rel_new(x, n->ncols, n->ty);
	char err[300];
	int rc = GPMDB_OK;

	if (!r)
		return x->db->errcode ? x->db->errcode : GPMDB_NOMEM;
	if (s->in) {
		/* host source: gather the selected rows on the host, as the
		 * CPU filter does */
		uint32_t m = xg_rows(s), *idx = malloc(4 * (size_t)m + 4);
		if (!idx) {
			rel_free(r);
			return db_err(x->db, GPMDB_NOMEM, "out of memory");
		}
		if (s->sel && (rc = gpu_download(idx, s->sel, 4 * (size_t)m,
						 err, sizeof(err))))
			rc = xg_gerr(x, rc, "download", err);
		for (uint32_t k = 0; !s->sel && k < m; k++)
			idx[k] = k;
		if (!rc && m == s->in->nrows) {
			free(idx);
			rel_free(r);
			*out = s->in;
			s->in = NULL;
			return GPMDB_OK;
		}
		if (!rc)
			rc = rel_reserve(r, m);
		for (uint32_t k = 0; k < m && !rc; k++)
			rc = rel_copy_row(r, s->in, idx[k]);
		free(idx);
	} else {
		/* cache source: each column through an identity program */
		xg_out *o = calloc((size_t)n->ncols + 1, sizeof(xg_out));
		if (!o) {
			rel_free(r);
			return db_err(x->db, GPMDB_NOMEM, "out of memory");
		}
		rc = xg_filter_runs(x, n, s, o);
		if (!rc)
			rc = xg_fetch(x, o, n->ncols, xg_rows(s), r);
		for (int k = 0; k < n->ncols; k++)
			xg_out_free(&o[k]);
		free(o);
	}
	if (rc) {
		rel_free(r);
		return rc;
	}
	*out = r;
	return GPMDB_OK;
}

static int xg_cmp_first(const void *a, const void *b, void *arg)
{
	const uint32_t *first = arg;
	uint32_t x = first[*(const uint32_t *)a],
		 y = first[*(const uint32_t *)b];
	return x < y ? -1 : x > y;
}

/* perm[0..nout): group numbers in the order of their first rows (as the
 * CPU's hash aggregate finds them): the device's order when it made one
 * (many groups), else sorted here. */
static void xg_group_order(const gpu_groups *g, uint32_t nout, uint32_t *perm)
{
	if (g->order && nout == g->ngroups) {
		memcpy(perm, g->order, sizeof(uint32_t) * nout);
		return;
	}
	for (uint32_t k = 0; k < nout; k++)
		perm[k] = k;
	if (g->ngroups && nout > 1)
		qsort_r(perm, nout, sizeof(uint32_t), xg_cmp_first, g->first);
}

/* AVG or TOTAL of a group from its sum (0 without values) and count, as
 * agg_final: a DECIMAL argument's sum divided by ten scale times; TOTAL
 * 0.0 without values, AVG NULL. */
static sval xg_avg_total(const aggdef *ad, etype t, long double sum,
			 uint64_t cnt)
{
	sval v;

	memset(&v, 0, sizeof(v));
	v.t = BC_T_NULL;
	if (cnt && t.t == BC_T_DEC)
		for (int q = 0; q < t.scale; q++)
			sum /= 10;
	if (ad->fn == AGG_TOTAL) {
		v.t = BC_T_REAL;
		v.u.r = (double)sum;
	} else if (cnt) {
		v.t = BC_T_REAL;
		v.u.r = (double)(sum / cnt);
	}
	return v;
}

static sval xg_ival(etype t, int64_t i)
{
	sval v;
	memset(&v, 0, sizeof(v));
	v.t = t.t == BC_T_INT || t.t == BC_T_DEC || t.t == BC_T_DATE ||
		      t.t == BC_T_BOOL
		  ? t.t
		  : BC_T_INT;
	v.scale = t.scale;
	v.u.i = i;
	return v;
}

static long double xg_i128(const gpu_agg_res *r, uint32_t g)
{
	__int128 s = ((__int128)r->sum_hi[g] << 64) | r->sum_lo[g];
	return (long double)s;
}

/*
 * An aggregate's key or argument that is a plain column over all rows
 * (no filter: no selection): the aggregate reads the source's device
 * array itself.  Why: running the identity program copied every value
 * and NULL byte (the 1000-group GROUP BY of 100M rows copied k, v and q,
 * 2.7 GB, before aggregating them).  The GPU aggregate widens INT32,
 * DATE and BOOL as LOAD_COL does; FLOAT and TEXT go through the program.
 * 1 with *col set; 0: run the program, or an error in *rc (loading the
 * column failed).
 */
static int xg_direct(xg_src *s, cexpr *c, gpu_col *col, int *rc)
{
	*rc = GPMDB_OK;
	if (s->sel || s->nleaf || !xg_passthrough(c))
		return 0;
	if ((*rc = xg_load(s, c->in[0].col)))
		return 0;
	const gpu_col *g = &s->cols[c->in[0].col].col;
	bool ints = g->type == BC_COL_INT64 || g->type == BC_COL_DEC ||
		    g->type == BC_COL_INT32 || g->type == BC_COL_DATE ||
		    g->type == BC_COL_BOOL;
	int t = c->ty.t;
	if (!((ints && (t == BC_T_INT || t == BC_T_DEC || t == BC_T_DATE ||
			t == BC_T_BOOL)) ||
	      (g->type == BC_COL_DOUBLE && t == BC_T_REAL)))
		return 0;
	*col = *g;
	col->sel = NULL;
	return 1;
}

/*
 * The key columns of groups whose first rows are first[perm[0..nout)]
 * into columns 0..ng of r (rows 0..nout): the rows are gathered on the
 * device and come back in one transfer (TEXT through each key's run's
 * segments).  Why the first row: the CPU's group keeps the key values of
 * its first row.
 */
static int xg_group_keys(exec_ctx *x, pnode *n, xg_src *s, const xg_out *key,
			 const gpu_sortcol *kc, const uint32_t *first,
			 const uint32_t *perm, uint32_t nout, rel *r)
{
	int ng = n->ngroup, rc = GPMDB_OK;
	uint32_t *fr = malloc(4 * (size_t)nout + 4), *dfr = NULL;
	xg_out *gk = calloc((size_t)ng + 1, sizeof(xg_out));
	rel *kr = NULL;
	char err[300];

	if (!fr || !gk) {
		rc = db_err(x->db, GPMDB_NOMEM, "out of memory");
		goto out;
	}
	for (uint32_t k = 0; k < nout; k++)
		fr[k] = first[perm[k]];
	if ((rc = gpu_alloc((void **)&dfr, 4 * (size_t)nout + 4, err,
			    sizeof(err))) ||
	    (rc = xg_keep_dev(s, dfr)) ||
	    (rc = gpu_upload(dfr, fr, 4 * (size_t)nout, err, sizeof(err)))) {
		rc = x->db->errcode == rc ? rc : xg_gerr(x, rc, "upload", err);
		goto out;
	}
	x->db->gstat.bytes_uploaded += 4 * (uint64_t)nout;
	for (int k = 0; k < ng; k++) {
		/* the gathered copy maps text through the key's run */
		gk[k].p = key[k].p;
		gk[k].seg = key[k].seg;
		gk[k].nseg = key[k].nseg;
		if ((rc = gpu_gather(&kc[k].col, dfr, nout, &gk[k].col[0], err,
				     sizeof(err)))) {
			rc = xg_gerr(x, rc, "gather", err);
			goto out;
		}
		if (gk[k].col[0].data &&
		    (rc = xg_keep_dev(s, gk[k].col[0].data)))
			goto out;
	}
	if (!(kr = rel_new(x, ng, n->ty))) {
		rc = x->db->errcode ? x->db->errcode : GPMDB_NOMEM;
		goto out;
	}
	if ((rc = xg_fetch(x, gk, ng, nout, kr)))
		goto out;
	for (uint32_t row = 0; row < nout && !rc; row++)
		for (int k = 0; k < ng && !rc; k++) {
			sval v;
			rel_get(kr, k, row, &v);
			rc = rel_set(r, k, row, &v);
		}
out:
	free(fr);
	free(gk);
	rel_free(kr);
	return rc;
}

/*
 * Bare columns (AGG_ANY): each group's least row number with a value
 * (g->res[a].i64, the MIN over gpu_row_numbers) gathers the argument's
 * run on the device; all come back in one transfer as the columns of
 * *out (nout rows in the output's order perm), aggregate a's in column
 * col[a].  A group with no value reads row 0 (its result is NULL).
 */
static int xg_any_values(exec_ctx *x, pnode *n, xg_src *s, const xg_out *args,
			 const gpu_groups *g, const uint32_t *perm,
			 uint32_t nout, int *col, rel **out)
{
	int na = n->naggs, nany = 0, rc = GPMDB_OK;
	etype *ty = calloc((size_t)na + 1, sizeof(etype));
	xg_out *ga = calloc((size_t)na + 1, sizeof(xg_out));
	uint32_t *pos = malloc(4 * (size_t)nout + 4), *dpos;
	char err[300];

	*out = NULL;
	if (!ty || !ga || !pos) {
		rc = db_err(x->db, GPMDB_NOMEM, "out of memory");
		goto done;
	}
	for (int a = 0; a < na; a++) {
		col[a] = -1;
		if (n->aggs[a].fn != AGG_ANY)
			continue;
		const gpu_agg_res *res = &g->res[a];
		xg_out *o = &ga[nany];
		for (uint32_t k = 0; k < nout; k++)
			pos[k] =
			    res->cnt[perm[k]] ? (uint32_t)res->i64[perm[k]] : 0;
		if ((rc = gpu_alloc((void **)&dpos, 4 * (size_t)nout + 4, err,
				    sizeof(err))) ||
		    (rc = xg_keep_dev(s, dpos)) ||
		    (rc = gpu_upload(dpos, pos, 4 * (size_t)nout, err,
				     sizeof(err)))) {
			rc = x->db->errcode == rc
				 ? rc
				 : xg_gerr(x, rc, "upload", err);
			goto done;
		}
		x->db->gstat.bytes_uploaded += 4 * (uint64_t)nout;
		/* the gathered copy maps text through the argument's run */
		o->p = args[a].p;
		o->seg = args[a].seg;
		o->nseg = args[a].nseg;
		if ((rc = gpu_gather(&args[a].col[0], dpos, nout, &o->col[0],
				     err, sizeof(err)))) {
			rc = xg_gerr(x, rc, "gather", err);
			goto done;
		}
		if (o->col[0].data && (rc = xg_keep_dev(s, o->col[0].data)))
			goto done;
		ty[nany] = expr_type(n->aggs[a].arg);
		col[a] = nany++;
	}
	if (!nany)
		goto done;
	if (!(*out = rel_new(x, nany, ty))) {
		rc = x->db->errcode ? x->db->errcode : GPMDB_NOMEM;
		goto done;
	}
	rc = xg_fetch(x, ga, nany, nout, *out);
done:
	free(ty);
	free(ga);
	free(pos);
	return rc;
}

/* Row row of the aggregate's result: group perm[row]'s key and values.
 * x NULL: no error message is set (the parallel pass). */
static int xg_agg_row(exec_ctx *x, const pnode *n, const gpu_groups *g,
		      const gpu_agg *ga, const rel *anyv, const int *anycol,
		      bool empty_scalar, const uint32_t *perm, uint32_t row,
		      rel *r)
{
	int ng = n->ngroup, na = n->naggs, rc = GPMDB_OK;
	uint32_t gi = perm[row];

	if (ng && g->key) {
		sval v = xg_ival(n->ty[0], g->key[gi]);
		if (g->key_null[gi])
			v.t = BC_T_NULL;
		if ((rc = rel_set(r, 0, row, &v)))
			return rc;
	}
	for (int a = 0; a < na && !rc; a++) {
		const aggdef *ad = &n->aggs[a];
		const gpu_agg_res *res = empty_scalar ? NULL : &g->res[a];
		etype t = ad->arg ? expr_type(ad->arg) : et_make(BC_T_INT);
		uint64_t cnt = res ? res->cnt[gi] : 0;
		sval v;
		memset(&v, 0, sizeof(v));
		v.t = BC_T_NULL;
		switch (ad->fn) {
		case AGG_COUNT_STAR:
		case AGG_COUNT:
			v.t = BC_T_INT;
			v.u.i = (int64_t)cnt;
			break;
		case AGG_SUM:
			if (!cnt)
				break;
			v.t = ad->res.t;
			v.scale = ad->res.scale;
			if (v.t == BC_T_REAL)
				v.u.r = ga[a].op == GPU_AGG_SUM_R
					    ? res->f64[gi]
					    : (double)xg_i128(res, gi);
			else
				v.u.i = (int64_t)res->sum_lo[gi];
			break;
		case AGG_AVG:
		case AGG_TOTAL:
			v = xg_avg_total(ad, t,
					 !cnt ? 0
					 : ga[a].op == GPU_AGG_SUM_R
					     ? (long double)res->f64[gi]
					     : xg_i128(res, gi),
					 cnt);
			break;
		case AGG_MIN:
		case AGG_MAX:
			if (!cnt)
				break;
			if (t.t == BC_T_REAL) {
				v.t = BC_T_REAL;
				v.u.r = res->f64[gi];
			} else {
				v = xg_ival(t, res->i64[gi]);
			}
			break;
		case AGG_ANY:
			if (cnt && anyv && anycol[a] >= 0)
				rel_get(anyv, anycol[a], row, &v);
			break;
		}
		/* as agg_final: to the aggregate's result type */
		if (v.t != BC_T_NULL &&
		    (v.t != ad->res.t ||
		     (v.t == BC_T_DEC && v.scale != ad->res.scale)) &&
		    (rc = sval_convert(x, &v, ad->res, 0, r)))
			break;
		rc = rel_set(r, ng + a, row, &v);
	}
	return rc;
}

/* How aggregate ad becomes its result on the device (gpu_group_agg_keep):
 * false when the host must finish it (ANY, a result type the host would
 * convert to). */
static bool xg_agg_fin(const aggdef *ad, gpu_agg_fin *f)
{
	etype t = ad->arg ? expr_type(ad->arg) : et_make(BC_T_INT);

	memset(f, 0, sizeof(*f));
	f->type = (uint8_t)xg_coltype(ad->res.t);
	switch (ad->fn) {
	case AGG_COUNT_STAR:
	case AGG_COUNT:
		f->fin = GPU_FIN_COUNT;
		return ad->res.t == BC_T_INT;
	case AGG_SUM:
		f->fin = GPU_FIN_SUM;
		/* as xg_agg_row: an integer sum takes the result type, a
		 * REAL sum must be REAL */
		return t.t == BC_T_REAL
			   ? ad->res.t == BC_T_REAL
			   : (ad->res.t == BC_T_INT || ad->res.t == BC_T_DEC ||
			      ad->res.t == BC_T_REAL);
	case AGG_AVG:
	case AGG_TOTAL:
		f->fin = ad->fn == AGG_AVG ? GPU_FIN_AVG : GPU_FIN_TOTAL;
		f->scale = t.t == BC_T_DEC ? t.scale : 0;
		return ad->res.t == BC_T_REAL;
	case AGG_MIN:
	case AGG_MAX:
		f->fin = GPU_FIN_MINMAX;
		return ad->res.t == t.t &&
		       (t.t != BC_T_DEC || ad->res.scale == t.scale) &&
		       t.t != BC_T_TEXT && t.t != BC_T_NULL;
	default:
		return false;
	}
}

/* Can n's groups stay on the device for the operator above (xg_agg's
 * keep)?  Keys of any type (TEXT ones: columns as they are, xg_agg
 * checks), aggregates xg_agg_fin finishes. */
static bool xg_agg_keep_ok(const pnode *n)
{
	gpu_agg_fin f;

	if (n->kind != PN_AGG || n->ngroup < 1)
		return false;
	for (int k = 0; k < n->ngroup; k++)
		if (n->ty[k].t == BC_T_NULL)
			return false;
	for (int a = 0; a < n->naggs; a++)
		if (!xg_agg_fin(&n->aggs[a], &f))
			return false;
	return true;
}

/* The device result of gpu_group_agg_keep as source d's columns. */
static int xg_agg_to_src(exec_ctx *x, pnode *n, gpu_col *cols, uint32_t ng,
			 const xg_out *key, xg_src *d)
{
	int rc = GPMDB_OK;

	d->x = x;

	for (int c = 0; c < n->ncols; c++) {
		xg_col *o = &d->cols[c];
		if (!rc)
			rc = xg_keep_dev(d, cols[c].data);
		else
			gpu_free(cols[c].data, NULL, 0);
		memset(o, 0, sizeof(*o));
		o->col = cols[c];
		o->col.prec = n->ty[c].prec;
		o->col.scale = n->ty[c].scale;
		o->ndata = ng;
		o->loaded = true;
		if (c < n->ngroup && cols[c].type == BC_COL_TEXT) {
			/* the key's run: its text buffer (kept alive with
			 * the AGG's source, xg_agg_keep) and a copy of its
			 * map to host bytes */
			const xg_out *k = &key[c];
			gcache_seg *sg = NULL;
			if (!rc &&
			    !(sg = malloc(sizeof(gcache_seg) * (k->nseg + 1))))
				rc =
				    db_err(x->db, GPMDB_NOMEM, "out of memory");
			if (!rc && (rc = xg_keep_host(d, sg)) == GPMDB_OK) {
				if (k->nseg)
					memcpy(sg, k->seg,
					       sizeof(gcache_seg) * k->nseg);
				o->text = k->dtext;
				o->ntext = k->ntext;
				o->seg = sg;
				o->nseg = k->nseg;
			}
		}
	}
	d->x = x;
	d->nrows = ng;
	return rc;
}

static int xg_agg(exec_ctx *x, pnode *n, xg_src *s, rel **out, xg_src *keep)
{
	int ng = n->ngroup, na = n->naggs, rc = GPMDB_OK;
	xg_out *key = calloc((size_t)ng + 1, sizeof(xg_out)),
	       *args = calloc((size_t)na + 1, sizeof(xg_out));
	gpu_agg *ga = calloc((size_t)na + 1, sizeof(gpu_agg));
	int *anycol = calloc((size_t)na + 1, sizeof(int));
	/* on the heap: exec_node recursion runs through this frame */
	gpu_sortcol *kc = calloc(XG_MAX_KEYS, sizeof(gpu_sortcol));
	gpu_groups g;
	uint32_t m = xg_rows(s), *perm = NULL;
	rel *r = NULL, *anyv = NULL;
	char err[300];

	memset(&g, 0, sizeof(g));
	if (!kc || !key || !args || !ga || !anycol) {
		rc = db_err(x->db, GPMDB_NOMEM, "out of memory");
		goto out;
	}
	if (ng > XG_MAX_KEYS) {
		rc = db_err(x->db, GPMDB_UNSUPPORTED,
			    "GPU aggregate: more than %d keys", XG_MAX_KEYS);
		goto out;
	}
	/* keys, then arguments: the CPU's order of evaluation (and so of
	 * errors) */
	for (int k = 0; k < ng; k++) {
		cexpr *c;
		if ((rc = exec_node_cx(x, n, k, n->group[k], false, n->l, &c)))
			goto out;
		if (xg_direct(s, c, &kc[k].col, &rc))
			continue;
		/* fused: no program runs over rows the filter would drop */
		if (!rc && s->fuse)
			rc = XG_UNFUSED;
		if (rc || (rc = xg_run(s, c, &key[k])) ||
		    (rc = xg_keycol(s, &key[k], &kc[k])))
			goto out;
		/* a computed TEXT key may point into the program's constants,
		 * which a consumer cannot read: its groups come to the host */
		if (n->ty[k].t == BC_T_TEXT && !xg_passthrough(c))
			keep = NULL;
	}
	for (int a = 0; a < na; a++) {
		const aggdef *ad = &n->aggs[a];
		cexpr *c;
		etype t = ad->arg ? expr_type(ad->arg) : et_make(BC_T_INT);
		if (s->fuse && (ad->fn == AGG_ANY || ad->distinct)) {
			rc = XG_UNFUSED;
			goto out;
		}
		if (ad->arg) {
			if ((rc = exec_node_cx(x, n, ng + a, ad->arg, false,
					       n->l, &c)))
				goto out;
			/* a bare column is gathered from its run (text
			 * mapped through the run's segments) */
			if (ad->fn == AGG_ANY ||
			    !xg_direct(s, c, &ga[a].arg, &rc)) {
				if (!rc && s->fuse)
					rc = XG_UNFUSED;
				if (rc || (rc = xg_run(s, c, &args[a])))
					goto out;
				ga[a].arg = args[a].col[0];
			}
		}
		/* DISTINCT: rows repeating their group's (keys, argument)
		 * become NULL arguments, which every aggregate skips; the
		 * first of equal values stays, so sums add in row order as
		 * on the CPU */
		if (ad->distinct && ad->arg) {
			gpu_sortcol *dk =
			    calloc((size_t)ng + 1, sizeof(gpu_sortcol));
			uint8_t *dn = NULL;
			if (!dk) {
				rc =
				    db_err(x->db, GPMDB_NOMEM, "out of memory");
				goto out;
			}
			memcpy(dk, kc, sizeof(gpu_sortcol) * (size_t)ng);
			if (args[a].have)
				rc = xg_keycol(s, &args[a], &dk[ng]);
			else
				dk[ng].col = ga[a].arg;
			if (!rc && (rc = gpu_distinct_nulls(dk, ng + 1, m, &dn,
							    err, sizeof(err))))
				rc = xg_gerr(x, rc, "DISTINCT aggregate", err);
			free(dk);
			if (!rc && dn)
				rc = xg_keep_dev(s, dn);
			if (rc)
				goto out;
			ga[a].arg.nulls = dn;
		}
		bool real = t.t == BC_T_REAL;
		switch (ad->fn) {
		case AGG_COUNT_STAR:
			ga[a].op = GPU_AGG_COUNT_STAR;
			break;
		case AGG_COUNT:
			ga[a].op = GPU_AGG_COUNT;
			break;
		case AGG_SUM:
		case AGG_AVG:
		case AGG_TOTAL:
			ga[a].op = real ? GPU_AGG_SUM_R : GPU_AGG_SUM_I;
			break;
		case AGG_MIN:
			ga[a].op = real ? GPU_AGG_MIN_R : GPU_AGG_MIN_I;
			break;
		case AGG_MAX:
			ga[a].op = real ? GPU_AGG_MAX_R : GPU_AGG_MAX_I;
			break;
		case AGG_ANY: {
			/* the least row number with a value: agg_step's
			 * first non-NULL value of the group */
			gpu_col rn;
			if ((rc = gpu_row_numbers(&ga[a].arg, m, &rn, err,
						  sizeof(err)))) {
				rc = xg_gerr(x, rc, "bare column", err);
				goto out;
			}
			if ((rc = xg_keep_dev(s, rn.data)))
				goto out;
			ga[a].op = GPU_AGG_MIN_I;
			ga[a].arg = rn;
			break;
		}
		}
	}
	if (s->fuse) {
		int declined = 0;
		rc = gpu_fused_agg(s->terms, s->nterms, kc, ng, m, ga, na, &g,
				   &declined, err, sizeof(err));
		if (!rc && declined) {
			/* the general path gives the exact result (or
			 * error) */
			xg_fused_declines++;
			rc = XG_UNFUSED;
			goto out;
		}
	} else {
		if (keep && !s->sagg) {
			/* the operator above reads the groups on the device:
			 * many groups stay there (few come back as usual) */
			gpu_agg_fin *fin = calloc((size_t)na + 1, sizeof(*fin));
			gpu_col *kcols =
			    calloc((size_t)n->ncols + 1, sizeof(gpu_col));
			int on_dev = 0;
			if (!fin || !kcols) {
				free(fin);
				free(kcols);
				rc =
				    db_err(x->db, GPMDB_NOMEM, "out of memory");
				goto out;
			}
			for (int a = 0; a < na; a++)
				xg_agg_fin(&n->aggs[a], &fin[a]);
			rc = gpu_group_agg_keep(kc, ng, m, ga, na, fin, &g,
						kcols, &on_dev, err,
						sizeof(err));
			free(fin);
			if (!rc && on_dev) {
				x->db->gstat.gpu_ops++;
				xg_kept_aggs++;
				for (int a = 0; a < na && !rc; a++)
					if (g.res[a].overflow &&
					    n->aggs[a].fn == AGG_SUM &&
					    n->aggs[a].res.t != BC_T_REAL)
						rc = db_err(x->db, GPMDB_ERROR,
							    "integer overflow");
				int rc2 = xg_agg_to_src(x, n, kcols, g.ngroups,
							key, keep);
				free(kcols);
				rc = rc ? rc : rc2;
				goto out;
			}
			free(kcols);
		} else {
			rc = gpu_group_agg(kc, ng, m, ga, na, &g, err,
					   sizeof(err));
		}
	}
	if (rc) {
		rc = xg_gerr(x, rc, "aggregate", err);
		goto out;
	}
	x->db->gstat.gpu_ops++;
	/* a streamed scan (xg_stream): this window's groups are merged into
	 * s->sagg; the results come after the last window */
	if (s->sagg) {
		rc = xg_sagg_window(x, n, s, key, kc, ga, &g);
		goto out;
	}
	/* the CPU checks every partial sum: so does the GPU */
	for (int a = 0; a < na; a++)
		if (g.res && g.res[a].overflow && n->aggs[a].fn == AGG_SUM &&
		    n->aggs[a].res.t != BC_T_REAL) {
			rc = db_err(x->db, GPMDB_ERROR, "integer overflow");
			goto out;
		}
	uint32_t nout = g.ngroups;
	bool empty_scalar = !ng && nout == 0;
	if (empty_scalar)
		nout = 1;
	if (!(perm = malloc(sizeof(uint32_t) * (nout + 1)))) {
		rc = db_err(x->db, GPMDB_NOMEM, "out of memory");
		goto out;
	}
	if (ng)
		xg_group_order(&g, nout, perm);
	else
		for (uint32_t k = 0; k < nout; k++)
			perm[k] = k;
	if (!(r = rel_new(x, n->ncols, n->ty)) || (rc = rel_reserve(r, nout))) {
		rc = rc ? rc : x->db->errcode ? x->db->errcode : GPMDB_NOMEM;
		goto out;
	}
	/* several keys, TEXT or REAL ones: read at the groups' first rows */
	if (ng && !g.key && nout &&
	    (rc = xg_group_keys(x, n, s, key, kc, g.first, perm, nout, r)))
		goto out;
	/* bare columns: their values at the rows found above */
	if (!empty_scalar && nout &&
	    (rc = xg_any_values(x, n, s, args, &g, perm, nout, anycol, &anyv)))
		goto out;
	/* many groups and no TEXT to allocate: rows in parallel (15M groups
	 * took most of a second in one thread, TPC-H Q18 at SF10); a row that
	 * fails there runs again in order for the CPU's first error */
	bool par = nout >= 65536;
	for (int c = 0; c < n->ncols && par; c++)
		par = n->ty[c].t != BC_T_TEXT;
	if (par) {
		int bad = 0;
#pragma omp parallel for schedule(static) reduction(| : bad)
		for (int64_t row = 0; row < (int64_t)nout; row++)
			bad |= xg_agg_row(NULL, n, &g, ga, anyv, anycol,
					  empty_scalar, perm, (uint32_t)row,
					  r) != GPMDB_OK;
		par = !bad;
	}
	for (uint32_t row = 0; !par && row < nout && !rc; row++)
		rc = xg_agg_row(x, n, &g, ga, anyv, anycol, empty_scalar, perm,
				row, r);
	if (!rc) {
		r->nrows = nout;
		*out = r;
		r = NULL;
	}
out:
	gpu_group_free(&g);
	for (int k = 0; key && k < ng; k++)
		xg_out_free(&key[k]);
	free(key);
	free(kc);
	for (int a = 0; args && a < na; a++)
		xg_out_free(&args[a]);
	free(args);
	free(ga);
	free(anycol);
	free(perm);
	rel_free(anyv);
	rel_free(r);
	return rc;
}

/* AGG n under an operator that reads its result on the device: its
 * groups become source d's columns (xg_agg's keep: many groups stay on
 * the device; few come back and d reads them as a host source).
 * XG_DECLINE: n runs as usual (exec_node), nothing was done. */
static int xg_fused(exec_ctx *x, pnode *n, xg_src *s, rel **out);

static int xg_agg_keep(exec_ctx *x, pnode *n, xg_src *d)
{
	char why[400];
	xg_src s;
	rel *r = NULL;
	int rc;

	if (!xg_agg_keep_ok(n) || xg_decide(x, n, why, sizeof(why)) != XG_GPU)
		return XG_DECLINE;
	/* the fused kernel first, as exec_gpu_node: few groups, filters
	 * evaluated inside the aggregate (a host result, d reads it as a
	 * host source); it declines many groups */
	rc = xg_fused(x, n, &s, &r);
	if (rc == XG_UNFUSED) {
		xg_src_free(&s);
		rc = xg_prepare(x, n, &s);
		if (!rc)
			rc = xg_agg(x, n, &s, &r, d);
	}
	/* TEXT keys on the device point into buffers of the AGG's source:
	 * d keeps it */
	for (int k = 0; !rc && !r && k < n->ngroup; k++)
		if (n->ty[k].t == BC_T_TEXT) {
			xg_src *own = malloc(sizeof(*own));
			if (!own) {
				rc =
				    db_err(x->db, GPMDB_NOMEM, "out of memory");
				break;
			}
			*own = s;
			memset(&s, 0, sizeof(s));
			d->own = own;
			break;
		}
	xg_src_free(&s);
	/* too large for the device (exec_node streams it), or a GPU error:
	 * the AGG again as its own operator, which falls back (or fails
	 * under gpu_strict) as any other; SQL errors are the query's */
	if (rc == XG_STREAM ||
	    (rc && rc != GPMDB_ERROR && rc != GPMDB_INTERRUPT &&
	     !strncmp(x->db->errmsg, "GPU ", 4))) {
		if (rc != XG_STREAM)
			db_clear(x->db);
		rel_free(r);
		return XG_DECLINE;
	}
	if (rc) {
		rel_free(r);
		return rc;
	}
	if (r) {
		d->in = r;
		d->nrows = (uint32_t)r->nrows;
	}
	return GPMDB_OK;
}

/* ---- fused scan-filter-aggregate ---------------------------------------
 *
 * Why: an AGG over FILTERs of a cached scan ran each filter's program
 * over every row (a BOOL column written), compacted the passing rows
 * (CUB select: flags, row ids, the selection written and read again) and
 * ran each argument over the selection before aggregating: at least two
 * passes over the data and a synchronisation per step.  When every
 * filter is a conjunction of comparisons of columns with constants or
 * columns (and IS [NOT] NULL), and the keys and arguments are plain
 * columns, the aggregation kernel evaluates the terms itself
 * (gpu_fused_agg): one pass, no selection.  These programs cannot fail,
 * so no row error can be missed; anything else takes the general path.
 */

/* The register kinds of xg_terms' walk. */
enum { XT_NONE, XT_COL, XT_CONST, XT_CONJ };

/* Column type ct LOAD_COL'ed into a register of type rt, compared as the
 * interpreter compares it: 1 as int64, 2 as double, 0 not fused. */
static int xg_term_fam(int ct, int rt)
{
	switch (rt) {
	case BC_T_INT:
		return ct == BC_COL_INT32 || ct == BC_COL_INT64;
	case BC_T_DEC:
		return ct == BC_COL_DEC;
	case BC_T_DATE:
		return ct == BC_COL_DATE;
	case BC_T_BOOL:
		return ct == BC_COL_BOOL;
	case BC_T_REAL:
		return ct == BC_COL_DOUBLE || ct == BC_COL_FLOAT ? 2 : 0;
	}
	return 0;
}

/* The comparison op's relation (GPU_TERM_EQ..GE) and register type, or
 * -1. */
static int xg_term_rel(int op, int *rt)
{
	static const struct {
		int eq, t;
	} fam[] = {{BC_EQ_I, BC_T_INT},
		   {BC_EQ_R, BC_T_REAL},
		   {BC_EQ_D, BC_T_DEC},
		   {BC_EQ_DT, BC_T_DATE},
		   {BC_EQ_B, BC_T_BOOL}};
	/* each family is EQ, NE, LT, LE, GT, GE, IS, ISNOT, NULLIF */
	for (size_t k = 0; k < sizeof(fam) / sizeof(fam[0]); k++)
		if (op >= fam[k].eq && op <= fam[k].eq + 5) {
			*rt = fam[k].t;
			return op - fam[k].eq;
		}
	return -1;
}

/*
 * Appends the terms of filter program c to t[*nt..] when the program is
 * a conjunction the fused kernel evaluates exactly as the interpreter
 * would; *ok = false (t unchanged) otherwise.  Only the terms the output
 * depends on are kept (a dead comparison cannot fail, so dropping it
 * changes nothing).
 */
static int xg_terms(xg_src *s, cexpr *c, gpu_term *t, int *nt, bool *ok)
{
	const bc_program *p = c->prog;
	uint8_t kind[BC_MAX_REGS], cvt[BC_MAX_REGS], cscale[BC_MAX_REGS];
	uint16_t col[BC_MAX_REGS]; /* XT_COL: the source column */
	bc_imm cval[BC_MAX_REGS];  /* XT_CONST: the value CONST makes */
	uint32_t mask[BC_MAX_REGS];
	gpu_term cand[32];
	int nc = 0, out = -1, rc;

	*ok = false;
	memset(kind, 0, sizeof(kind));
	if (p->noutputs != 1 || p->nregs > BC_MAX_REGS)
		return GPMDB_OK;
	for (int k = 0; k < c->ninputs; k++)
		if (c->in[k].kind != IN_COL || c->in[k].col < 0 ||
		    c->in[k].col >= s->ncols)
			return GPMDB_OK;
	for (uint32_t pc = 0; pc < p->ninsns; pc++) {
		const bc_insn *in = &p->insns[pc];
		int d = in->dst, a = in->a, b = in->b, rt = 0, cmp;
		if (in->op == BC_NOP)
			continue;
		if (in->op == BC_OUTPUT) {
			out = a;
			continue;
		}
		if (d >= BC_MAX_REGS || a >= BC_MAX_REGS || b >= BC_MAX_REGS)
			return GPMDB_OK;
		kind[d] = XT_NONE;
		switch (in->op) {
		case BC_LOAD_COL:
			if (a >= c->ninputs)
				return GPMDB_OK;
			kind[d] = XT_COL;
			col[d] = (uint16_t)c->in[a].col;
			cvt[d] = GPU_CVT_NONE;
			continue;
		case BC_CONST: {
			/* the value as gvm_row's CONST makes it */
			bc_imm v = in->imm;
			int ty = p->rtype[d].type;
			if (ty == BC_T_NULL || ty == BC_T_TEXT)
				return GPMDB_OK;
			if (ty == BC_T_BOOL)
				v.i = (uint8_t)v.i;
			else if (ty == BC_T_DATE)
				v.i = (int32_t)v.i;
			kind[d] = XT_CONST;
			cval[d] = v;
			continue;
		}
		case BC_I2D: {
			/* a constant made decimal (m >= 10): folded as the
			 * interpreter computes it; a failure is left to the
			 * general path */
			int64_t v;
			if (kind[a] != XT_CONST ||
			    val_i64_to_dec(cval[a].i, p->rtype[d].scale, &v) ||
			    !val_dec_fits(v, p->rtype[d].prec))
				return GPMDB_OK;
			kind[d] = XT_CONST;
			cval[d].i = v;
			continue;
		}
		case BC_I2R:
		case BC_D2R:
			/* a column compared as REAL (k = v, m <= 500.5) */
			if (kind[a] != XT_COL || cvt[a] != GPU_CVT_NONE ||
			    p->rtype[a].type !=
				(in->op == BC_I2R ? BC_T_INT : BC_T_DEC))
				return GPMDB_OK;
			kind[d] = XT_COL;
			col[d] = col[a];
			cvt[d] = in->op == BC_I2R ? GPU_CVT_I2R : GPU_CVT_D2R;
			cscale[d] = p->rtype[a].scale;
			continue;
		case BC_MOVE:
			kind[d] = kind[a];
			col[d] = col[a];
			cvt[d] = cvt[a];
			cscale[d] = cscale[a];
			cval[d] = cval[a];
			mask[d] = mask[a];
			continue;
		case BC_AND:
			if (kind[a] != XT_CONJ || kind[b] != XT_CONJ)
				return GPMDB_OK;
			kind[d] = XT_CONJ;
			mask[d] = mask[a] | mask[b];
			continue;
		}
		if (nc == 32)
			return GPMDB_OK;
		gpu_term *tm = &cand[nc];
		memset(tm, 0, sizeof(*tm));
		if (in->op == BC_IS_NULL || in->op == BC_NOT_NULL) {
			if (kind[a] != XT_COL)
				return GPMDB_OK;
			if ((rc = xg_load(s, col[a])))
				return rc;
			tm->op = in->op == BC_IS_NULL ? GPU_TERM_ISNULL
						      : GPU_TERM_NOTNULL;
			tm->a = s->cols[col[a]].col;
		} else if ((cmp = xg_term_rel(in->op, &rt)) >= 0) {
			int ra = a, rb = b;
			if (kind[ra] == XT_CONST && kind[rb] == XT_COL) {
				/* 5 < k is k > 5 */
				static const int mirror[] = {
				    GPU_TERM_EQ, GPU_TERM_NE, GPU_TERM_GT,
				    GPU_TERM_GE, GPU_TERM_LT, GPU_TERM_LE};
				ra = b;
				rb = a;
				cmp = mirror[cmp];
			}
			if (kind[ra] != XT_COL ||
			    (kind[rb] != XT_COL && kind[rb] != XT_CONST) ||
			    p->rtype[ra].type != rt || p->rtype[rb].type != rt)
				return GPMDB_OK;
			int opnd[2] = {ra, rb};
			for (int q = 0; q < 2; q++) {
				int r = opnd[q];
				if (q == 1 && kind[r] == XT_CONST) {
					tm->k = cval[r];
					break;
				}
				if ((rc = xg_load(s, col[r])))
					return rc;
				const gpu_col *g = &s->cols[col[r]].col;
				/* the column as LOAD_COL (and I2R/D2R) give
				 * it to a register of type rt */
				int fam = cvt[r] == GPU_CVT_I2R
					      ? xg_term_fam(g->type, BC_T_INT)
					  : cvt[r] == GPU_CVT_D2R
					      ? xg_term_fam(g->type, BC_T_DEC)
					      : xg_term_fam(g->type, rt);
				if (!fam)
					return GPMDB_OK;
				if (q == 0) {
					tm->a = *g;
					tm->acvt = cvt[r];
					tm->ascale = cscale[r];
				} else {
					tm->bcol = 1;
					tm->b = *g;
					tm->bcvt = cvt[r];
					tm->bscale = cscale[r];
				}
			}
			tm->op = cmp;
			tm->real = rt == BC_T_REAL;
		} else {
			return GPMDB_OK;
		}
		tm->a.sel = NULL;
		tm->b.sel = NULL;
		kind[d] = XT_CONJ;
		mask[d] = 1u << nc;
		nc++;
	}
	if (out < 0 || out >= BC_MAX_REGS)
		return GPMDB_OK;
	if (kind[out] == XT_COL && cvt[out] == GPU_CVT_NONE &&
	    p->rtype[out].type == BC_T_BOOL) {
		/* WHERE b: true when not NULL and != 0 */
		if ((rc = xg_load(s, col[out])))
			return rc;
		if (s->cols[col[out]].col.type != BC_COL_BOOL || nc == 32)
			return GPMDB_OK;
		memset(&cand[nc], 0, sizeof(cand[nc]));
		cand[nc].op = GPU_TERM_NE;
		cand[nc].a = s->cols[col[out]].col;
		cand[nc].a.sel = NULL;
		kind[out] = XT_CONJ;
		mask[out] = 1u << nc;
		nc++;
	}
	if (kind[out] != XT_CONJ)
		return GPMDB_OK;
	int need = 0;
	for (int k = 0; k < nc; k++)
		need += (mask[out] >> k) & 1;
	if (*nt + need > GPU_FUSE_MAXTERMS)
		return GPMDB_OK;
	for (int k = 0; k < nc; k++)
		if ((mask[out] >> k) & 1)
			t[(*nt)++] = cand[k];
	*ok = true;
	return GPMDB_OK;
}

/*
 * n (an AGG) with its filters fused into the aggregate kernel, when its
 * source is a cached table scan (not streamed) and every filter, key and
 * argument fits (xg_terms, xg_agg).  XG_UNFUSED: the general path runs
 * (s is freed by the caller either way).
 */
static int xg_fused(exec_ctx *x, pnode *n, xg_src *s, rel **out)
{
	pnode *src;
	gpu_term *t;
	int nf = 0, nt = 0, rc;
	bool fits = true, ok = true;
	char why[300];

	memset(s, 0, sizeof(*s));
	if (n->kind != PN_AGG)
		return XG_UNFUSED;
	src = xg_source(x, n, why, sizeof(why));
	if (!src || src->kind != PN_SCAN ||
	    xg_scan_rows(x->db, src) > UINT32_MAX)
		return XG_UNFUSED;
	for (pnode *f = n->l; f != src; f = f->l)
		nf++;
	/* without filters a grouped aggregate reads its columns directly
	 * already (the same hash kernel) */
	if (!nf && n->ngroup)
		return XG_UNFUSED;
	if ((rc = xg_fits(x, n, src, &fits)))
		return rc;
	if (!fits)
		return XG_UNFUSED;
	s->x = x;
	s->scan = src;
	s->nrows = (uint32_t)xg_scan_rows(x->db, src);
	s->ncols = src->ncols;
	if (!(s->cols = calloc((size_t)s->ncols + 1, sizeof(xg_col))) ||
	    !(t = calloc(GPU_FUSE_MAXTERMS, sizeof(gpu_term))))
		return db_err(x->db, GPMDB_NOMEM, "out of memory");
	if ((rc = xg_keep_host(s, t)))
		return rc;
	for (pnode *f = n->l; f != src && ok; f = f->l) {
		cexpr *c;
		if ((rc = exec_node_cx(x, f, 0, f->pred, f->post, f->l, &c)) ||
		    (rc = xg_terms(s, c, t, &nt, &ok)))
			return rc;
	}
	if (!ok)
		return XG_UNFUSED;
	s->fuse = true;
	s->terms = t;
	s->nterms = nt;
	if ((rc = xg_agg(x, n, s, out, NULL)))
		return rc;
	xg_fused_aggs++;
	x->db->gstat.gpu_ops += (uint64_t)nf; /* the filters ran too */
	return GPMDB_OK;
}

/* ---- streamed scans: running the chain window by window -------------- */

/* Appends the rows of s to d (same column types); s's text moves to d. */
static int xg_rel_append(rel *d, rel *s)
{
	uint64_t n = s->nrows, at = d->nrows;
	int rc;

	if (!n)
		return GPMDB_OK;
	if ((rc = rel_reserve(d, n)))
		return rc;
	for (int c = 0; c < d->ncols; c++) {
		size_t w = rel_width(d->cols[c].ty.t);
		memcpy((char *)d->cols[c].data + at * w, s->cols[c].data,
		       n * w);
		memcpy(d->cols[c].nulls + at, s->cols[c].nulls, n);
	}
	rel_adopt(d, s);
	d->nrows += n;
	return GPMDB_OK;
}

/* A group's merged aggregate: count, exact sum, min/max, REAL sum. */
typedef struct xg_acc {
	uint64_t cnt;
	__int128 sum;
	int64_t mm;
	double f;
} xg_acc;

/*
 * The merge of a streamed AGG: groups in the order of their first row
 * (windows in row order, a window's groups by first row: a group's first
 * row is in the first window that has it), found by a hash of their key
 * values; r holds the keys (and, at the end, the results).
 */
typedef struct xg_sagg {
	rel *r;
	uint64_t ngr, cap;
	xg_acc *acc; /* ngr x naggs */
	uint64_t *hv;
	uint32_t *slot; /* open addressing: group + 1, 0 empty */
	uint64_t nslot;
	int *op; /* each aggregate's GPU op */
	bool have_op;
} xg_sagg;

static void xg_sagg_free(xg_sagg *sa)
{
	free(sa->acc);
	free(sa->hv);
	free(sa->slot);
	free(sa->op);
}

static uint64_t xg_sv_hash(uint64_t h, const sval *v)
{
	uint64_t u;

	switch (v->t) {
	case BC_T_NULL:
		u = 0x12345;
		break;
	case BC_T_REAL: {
		double d = v->u.r;
		if (d == 0)
			d = 0; /* -0.0 and 0.0 are one group */
		memcpy(&u, &d, 8);
		break;
	}
	case BC_T_TEXT:
		u = 1469598103934665603ull;
		for (uint32_t k = 0; k < v->u.s.len; k++)
			u = (u ^ (uint8_t)v->u.s.ptr[k]) * 1099511628211ull;
		break;
	default:
		u = (uint64_t)v->u.i;
	}
	h ^= u + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
	return h * 0xff51afd7ed558ccdull;
}

static int xg_sagg_grow_slots(exec_ctx *x, xg_sagg *sa)
{
	uint64_t ns = sa->nslot ? 2 * sa->nslot : 64;
	uint32_t *sl = calloc(ns, sizeof(uint32_t));

	if (!sl)
		return db_err(x->db, GPMDB_NOMEM, "out of memory");
	for (uint64_t g = 0; g < sa->ngr; g++) {
		uint64_t i = sa->hv[g] & (ns - 1);
		while (sl[i])
			i = (i + 1) & (ns - 1);
		sl[i] = (uint32_t)(g + 1);
	}
	free(sa->slot);
	sa->slot = sl;
	sa->nslot = ns;
	return GPMDB_OK;
}

/* The group of key values kv (found or appended); *gid its index. */
static int xg_sagg_find(exec_ctx *x, xg_sagg *sa, int ng, int na,
			const sval *kv, uint64_t *gid)
{
	uint64_t h = 0, i;
	int rc;

	for (int k = 0; k < ng; k++)
		h = xg_sv_hash(h, &kv[k]);
	if ((sa->ngr + 1) * 2 > sa->nslot && (rc = xg_sagg_grow_slots(x, sa)))
		return rc;
	for (i = h & (sa->nslot - 1); sa->slot[i];
	     i = (i + 1) & (sa->nslot - 1)) {
		uint64_t g = sa->slot[i] - 1;
		bool eq = sa->hv[g] == h;
		for (int k = 0; k < ng && eq; k++) {
			sval a;
			rel_get(sa->r, k, g, &a);
			eq = sval_cmp(&a, &kv[k]) == 0;
		}
		if (eq) {
			*gid = g;
			return GPMDB_OK;
		}
	}
	if (sa->ngr >= UINT32_MAX - 1)
		return db_err(x->db, GPMDB_UNSUPPORTED,
			      "GPU stream: more than 2^32 groups");
	if (sa->ngr == sa->cap) {
		uint64_t c2 = sa->cap ? 2 * sa->cap : 64;
		xg_acc *a2 =
		    realloc(sa->acc, sizeof(xg_acc) * c2 * (size_t)(na + 1));
		if (a2)
			sa->acc = a2;
		uint64_t *h2 = a2 ? realloc(sa->hv, 8 * c2) : NULL;
		if (!h2)
			return db_err(x->db, GPMDB_NOMEM, "out of memory");
		sa->hv = h2;
		sa->cap = c2;
	}
	if ((rc = rel_reserve(sa->r, 1)))
		return rc;
	for (int k = 0; k < ng; k++)
		if ((rc = rel_set(sa->r, k, sa->ngr, &kv[k])))
			return rc;
	memset(&sa->acc[sa->ngr * (uint64_t)na], 0, sizeof(xg_acc) * na);
	sa->hv[sa->ngr] = h;
	sa->slot[i] = (uint32_t)(sa->ngr + 1);
	*gid = sa->ngr++;
	sa->r->nrows = sa->ngr;
	return GPMDB_OK;
}

static __int128 xg_sum128(const gpu_agg_res *r, uint32_t g)
{
	return (__int128)(((unsigned __int128)(uint64_t)r->sum_hi[g] << 64) |
			  r->sum_lo[g]);
}

#define XG_I64_MAX ((__int128)INT64_MAX)
#define XG_I64_MIN ((__int128)INT64_MIN)

/*
 * Overflow of integer sums across windows.  The CPU raises "integer
 * overflow" when a partial sum of a group (in row order) leaves int64.
 * A window gives each group its exact 128-bit total T and whether any
 * partial sum inside the window, counted from the window's start, left
 * int64 (one flag per aggregate).  With B the group's total of the
 * earlier windows, the CPU's partial sums in the window are B + the
 * window's.  So: B + T outside int64 is the CPU's error (that partial
 * sum is one of the CPU's); B = 0 for every group of the window makes
 * the flag exact.  Otherwise a second pass gives each group's min and
 * max value m, M in the window (count c): its partial sums lie in
 * [max(c min(m,0), T - c max(M,0)), min(c max(M,0), T - c min(m,0))]
 * (between the sums of its negative and of its positive values), exact
 * when the values have one sign.  Groups this bound proves safe are;
 * when the others all have B = 0 the flag decides; otherwise the answer
 * is not known on the GPU: GPMDB_UNSUPPORTED (the CPU runs the query,
 * counted, or gpu_strict's error).
 */
static int xg_sagg_check(exec_ctx *x, pnode *n, xg_src *s,
			 const gpu_sortcol *kc, const gpu_agg *ga,
			 const gpu_groups *g, const uint32_t *perm,
			 const uint64_t *gid)
{
	xg_sagg *sa = s->sagg;
	int ng = n->ngroup, na = n->naggs, nchk = 0, rc = GPMDB_OK;
	uint32_t nw = g->ngroups, *perm2 = NULL;
	int *chk = calloc((size_t)na + 1, sizeof(int));
	gpu_agg *g2a = calloc(2 * (size_t)na + 1, sizeof(gpu_agg));
	gpu_groups g2;
	bool anyb = false;
	char err[300];

	memset(&g2, 0, sizeof(g2));
	if (!chk || !g2a) {
		rc = db_err(x->db, GPMDB_NOMEM, "out of memory");
		goto out;
	}
	for (int a = 0; a < na; a++)
		if (ga[a].op == GPU_AGG_SUM_I && n->aggs[a].fn == AGG_SUM &&
		    n->aggs[a].res.t != BC_T_REAL)
			chk[nchk++] = a;
	for (int i = 0; i < nchk; i++)
		for (uint32_t j = 0; j < nw; j++) {
			const gpu_agg_res *res = &g->res[chk[i]];
			__int128 b = sa->acc[gid[j] * na + chk[i]].sum,
				 t = b + xg_sum128(res, perm[j]);
			if (t > XG_I64_MAX || t < XG_I64_MIN) {
				rc = db_err(x->db, GPMDB_ERROR,
					    "integer overflow");
				goto out;
			}
			anyb |= b != 0;
		}
	if (!anyb) {
		for (int i = 0; i < nchk; i++)
			if (g->res[chk[i]].overflow) {
				rc = db_err(x->db, GPMDB_ERROR,
					    "integer overflow");
				goto out;
			}
		goto out;
	}
	for (int i = 0; i < nchk; i++) {
		g2a[2 * i].op = GPU_AGG_MIN_I;
		g2a[2 * i].arg = ga[chk[i]].arg;
		g2a[2 * i + 1].op = GPU_AGG_MAX_I;
		g2a[2 * i + 1].arg = ga[chk[i]].arg;
	}
	if ((rc = gpu_group_agg(kc, ng, xg_rows(s), g2a, 2 * nchk, &g2, err,
				sizeof(err)))) {
		rc = xg_gerr(x, rc, "aggregate", err);
		goto out;
	}
	/* the same groups: matched by their first rows */
	if (g2.ngroups != nw || !(perm2 = malloc(4 * (size_t)nw + 4))) {
		rc = g2.ngroups != nw
			 ? db_err(x->db, GPMDB_INTERNAL,
				  "GPU stream: %u groups, then %u", nw,
				  g2.ngroups)
			 : db_err(x->db, GPMDB_NOMEM, "out of memory");
		goto out;
	}
	if (ng)
		xg_group_order(&g2, nw, perm2);
	else
		for (uint32_t j = 0; j < nw; j++)
			perm2[j] = j;
	for (uint32_t j = 0; ng && j < nw; j++)
		if (g2.first[perm2[j]] != g->first[perm[j]]) {
			rc = db_err(x->db, GPMDB_INTERNAL,
				    "GPU stream: groups differ between passes");
			goto out;
		}
	for (int i = 0; i < nchk; i++) {
		const gpu_agg_res *res = &g->res[chk[i]];
		bool unsafe = false, unsafe_b = false;
		for (uint32_t j = 0; j < nw; j++) {
			uint32_t gi = perm[j], gj = perm2[j];
			__int128 c = (__int128)res->cnt[gi],
				 b = sa->acc[gid[j] * na + chk[i]].sum,
				 t = xg_sum128(res, gi);
			int64_t mn = g2.res[2 * i].i64[gj],
				mx = g2.res[2 * i + 1].i64[gj];
			if (!c)
				continue;
			__int128 cmn = c * (mn < 0 ? mn : 0),
				 cmx = c * (mx > 0 ? mx : 0);
			__int128 hi = cmx < t - cmn ? cmx : t - cmn;
			__int128 lo = cmn > t - cmx ? cmn : t - cmx;
			if (b + hi <= XG_I64_MAX && b + lo >= XG_I64_MIN)
				continue;
			unsafe = true;
			unsafe_b |= b != 0;
		}
		if (!unsafe)
			continue;
		if (!unsafe_b) {
			if (res->overflow) {
				rc = db_err(x->db, GPMDB_ERROR,
					    "integer overflow");
				goto out;
			}
			continue;
		}
		rc = db_err(x->db, GPMDB_UNSUPPORTED,
			    "GPU stream: an integer sum near the int64 limit "
			    "over row windows (its partial sums across "
			    "windows cannot be checked on the GPU)");
		goto out;
	}
out:
	gpu_group_free(&g2);
	free(perm2);
	free(chk);
	free(g2a);
	return rc;
}

/*
 * xg_agg's hook for a streamed scan: merges one window's groups g (its
 * keys: the one integer key in g->key, else read at the groups' first
 * rows by xg_group_keys) into s->sagg.
 */
static int xg_sagg_window(exec_ctx *x, pnode *n, xg_src *s,
			  const struct xg_out *key, const gpu_sortcol *kc,
			  const gpu_agg *ga, const gpu_groups *g)
{
	xg_sagg *sa = s->sagg;
	int ng = n->ngroup, na = n->naggs, rc = GPMDB_OK;
	uint32_t nw = g->ngroups, *perm = malloc(4 * (size_t)nw + 4);
	uint64_t *gid = malloc(8 * (size_t)nw + 8);
	sval *kv = calloc((size_t)ng + 1, sizeof(sval));
	rel *kr = NULL;

	if (!perm || !gid || !kv) {
		rc = db_err(x->db, GPMDB_NOMEM, "out of memory");
		goto out;
	}
	if (!sa->have_op) {
		if (!(sa->op = calloc((size_t)na + 1, sizeof(int)))) {
			rc = db_err(x->db, GPMDB_NOMEM, "out of memory");
			goto out;
		}
		for (int a = 0; a < na; a++)
			sa->op[a] = ga[a].op;
		sa->have_op = true;
	}
	if (!nw)
		goto out;
	if (ng)
		xg_group_order(g, nw, perm);
	else
		for (uint32_t j = 0; j < nw; j++)
			perm[j] = j;
	if (ng && !g->key) {
		if (!(kr = rel_new(x, n->ncols, n->ty)) ||
		    (rc = rel_reserve(kr, nw))) {
			rc = rc		      ? rc
			     : x->db->errcode ? x->db->errcode
					      : GPMDB_NOMEM;
			goto out;
		}
		if ((rc = xg_group_keys(x, n, s, key, kc, g->first, perm, nw,
					kr)))
			goto out;
	}
	for (uint32_t j = 0; j < nw && !rc; j++) {
		uint32_t gi = perm[j];
		if (ng && g->key) {
			kv[0] = xg_ival(n->ty[0], g->key[gi]);
			if (g->key_null[gi])
				kv[0].t = BC_T_NULL;
		} else {
			for (int k = 0; k < ng; k++)
				rel_get(kr, k, j, &kv[k]);
		}
		rc = xg_sagg_find(x, sa, ng, na, kv, &gid[j]);
	}
	if (rc || (rc = xg_sagg_check(x, n, s, kc, ga, g, perm, gid)))
		goto out;
	for (uint32_t j = 0; j < nw; j++) {
		uint32_t gi = perm[j];
		for (int a = 0; a < na; a++) {
			const gpu_agg_res *res = &g->res[a];
			xg_acc *ac = &sa->acc[gid[j] * na + a];
			uint64_t c = res->cnt[gi];
			bool first = ac->cnt == 0;
			if (!c)
				continue;
			ac->cnt += c;
			switch (ga[a].op) {
			case GPU_AGG_COUNT_STAR:
			case GPU_AGG_COUNT:
				break;
			case GPU_AGG_SUM_I:
				ac->sum += xg_sum128(res, gi);
				break;
			case GPU_AGG_SUM_R:
				ac->f += res->f64[gi];
				break;
			/* the earlier window's value on ties, as the CPU
			 * keeps the first of equal values */
			case GPU_AGG_MIN_I:
				if (first || res->i64[gi] < ac->mm)
					ac->mm = res->i64[gi];
				break;
			case GPU_AGG_MAX_I:
				if (first || res->i64[gi] > ac->mm)
					ac->mm = res->i64[gi];
				break;
			case GPU_AGG_MIN_R:
				if (first || res->f64[gi] < ac->f)
					ac->f = res->f64[gi];
				break;
			case GPU_AGG_MAX_R:
				if (first || res->f64[gi] > ac->f)
					ac->f = res->f64[gi];
				break;
			}
		}
	}
out:
	free(perm);
	free(gid);
	free(kv);
	rel_free(kr);
	return rc;
}

/* The results of the merged groups into sa->r (as xg_agg's). */
static int xg_sagg_finish(exec_ctx *x, pnode *n, xg_sagg *sa)
{
	int ng = n->ngroup, na = n->naggs, rc = GPMDB_OK;
	rel *r = sa->r;
	xg_acc zero;

	memset(&zero, 0, sizeof(zero));
	if (!ng && !sa->ngr) { /* the empty scalar aggregate: one row */
		if ((rc = rel_reserve(r, 1)))
			return rc;
		r->nrows = 1;
	}
	for (uint64_t row = 0; row < r->nrows && !rc; row++) {
		for (int a = 0; a < na && !rc; a++) {
			const aggdef *ad = &n->aggs[a];
			const xg_acc *ac =
			    row < sa->ngr ? &sa->acc[row * na + a] : &zero;
			int op = sa->op ? sa->op[a] : GPU_AGG_COUNT_STAR;
			etype t =
			    ad->arg ? expr_type(ad->arg) : et_make(BC_T_INT);
			uint64_t cnt = ac->cnt;
			sval v;
			memset(&v, 0, sizeof(v));
			v.t = BC_T_NULL;
			switch (ad->fn) {
			case AGG_COUNT_STAR:
			case AGG_COUNT:
				v.t = BC_T_INT;
				v.u.i = (int64_t)cnt;
				break;
			case AGG_SUM:
				if (!cnt)
					break;
				v.t = ad->res.t;
				v.scale = ad->res.scale;
				if (v.t == BC_T_REAL)
					v.u.r =
					    op == GPU_AGG_SUM_R
						? ac->f
						: (double)(long double)ac->sum;
				else /* checked per window: fits */
					v.u.i = (int64_t)ac->sum;
				break;
			case AGG_AVG:
			case AGG_TOTAL:
				v = xg_avg_total(ad, t,
						 !cnt ? 0
						 : op == GPU_AGG_SUM_R
						     ? (long double)ac->f
						     : (long double)ac->sum,
						 cnt);
				break;
			case AGG_MIN:
			case AGG_MAX:
				if (!cnt)
					break;
				if (t.t == BC_T_REAL) {
					v.t = BC_T_REAL;
					v.u.r = ac->f;
				} else {
					v = xg_ival(t, ac->mm);
				}
				break;
			default:
				return db_err(x->db, GPMDB_UNSUPPORTED,
					      "GPU stream: aggregate %d",
					      (int)ad->fn);
			}
			if (v.t != BC_T_NULL &&
			    (v.t != ad->res.t ||
			     (v.t == BC_T_DEC && v.scale != ad->res.scale)) &&
			    (rc = sval_convert(x, &v, ad->res, 0, r)))
				break;
			rc = rel_set(r, ng + a, row, &v);
		}
	}
	return rc;
}

/* Process-wide (as the cache's counters): PRAGMA gpu_stats. */
static uint64_t xg_stream_queries, xg_stream_windows;

/*
 * n's chain over a table scan whose columns do not fit the cache (or
 * whose load ran out of device memory): window by window (xg_windows),
 * each window's columns loaded into temporary device buffers
 * (gcache_column_range), the chain run over them as over a cached
 * table.  FILTER and PROJECT rows are appended in row order (the CPU's
 * order); AGG results are merged by group (xg_sagg_window).  Row errors
 * come window by window, so the first in row order is reported.
 */
static int xg_stream(exec_ctx *x, pnode *n, rel **out)
{
	char why[300];
	pnode *src = xg_source(x, n, why, sizeof(why));
	xg_win *w = NULL;
	uint32_t nw = 0;
	xg_sagg sa;
	rel *r = NULL;
	int rc = GPMDB_OK;

	memset(&sa, 0, sizeof(sa));
	if (!src || src->kind != PN_SCAN)
		return db_err(x->db, GPMDB_INTERNAL,
			      "GPU stream: the input is not a table scan");
	for (int a = 0; n->kind == PN_AGG && a < n->naggs; a++) {
		const aggdef *ad = &n->aggs[a];
		if (ad->distinct || ad->fn == AGG_ANY ||
		    ad->fn == AGG_GROUP_CONCAT)
			return db_err(x->db, GPMDB_UNSUPPORTED,
				      "GPU stream: the table's columns do not "
				      "fit the GPU cache and %s aggregates "
				      "are not merged across row windows",
				      ad->distinct	  ? "DISTINCT"
				      : ad->fn == AGG_ANY ? "bare-column"
							  : "group_concat");
	}
	if ((rc = xg_windows(x, n, src, &w, &nw)))
		return rc;
	xg_stream_queries++;
	xg_stream_windows += nw;
	if (!(r = rel_new(x, n->ncols, n->ty))) {
		free(w);
		return x->db->errcode ? x->db->errcode : GPMDB_NOMEM;
	}
	sa.r = r;
	for (uint32_t i = 0; i < nw && !rc; i++) {
		xg_src s;
		rel *wr = NULL;
		rc = xg_prepare_win(x, n, &s, &w[i]);
		if (!rc) {
			if (n->kind == PN_AGG) {
				s.sagg = &sa;
				rc = xg_agg(x, n, &s, &wr, NULL);
			} else if (n->kind == PN_PROJECT) {
				rc = xg_project(x, n, &s, &wr);
			} else {
				rc = xg_filter_out(x, n, &s, &wr);
			}
		}
		xg_src_free(&s);
		if (!rc && wr)
			rc = xg_rel_append(r, wr);
		rel_free(wr);
	}
	if (!rc && n->kind == PN_AGG)
		rc = xg_sagg_finish(x, n, &sa);
	xg_sagg_free(&sa);
	free(w);
	if (rc) {
		rel_free(r);
		return rc;
	}
	*out = r;
	return GPMDB_OK;
}

int exec_gpu_node(exec_ctx *x, pnode *n, rel **out)
{
	gpmdb *db = x->db;
	char why[400];
	xg_src s;
	int d, rc;

	if (db->backend != 1 && exec_gpu_ops_kind(n->kind))
		return exec_gpu_ops_node(x, n, out);
	if (db->backend == 1 || (n->kind != PN_FILTER &&
				 n->kind != PN_PROJECT && n->kind != PN_AGG))
		return XG_DECLINE;
	pthread_mutex_lock(&xg_lock);
	if (xg_depth++ == 0)
		gcache_begin();
	d = xg_decide(x, n, why, sizeof(why));
	if (d != XG_GPU) {
		xg_depth--;
		pthread_mutex_unlock(&xg_lock);
		if (d != XG_WANTED_CPU)
			return XG_DECLINE;
		goto fallback;
	}
	rc = xg_fused(x, n, &s, out);
	if (rc == XG_UNFUSED) {
		xg_src_free(&s);
		rc = xg_prepare(x, n, &s);
		if (!rc) {
			if (n->kind == PN_PROJECT)
				rc = xg_project(x, n, &s, out);
			else if (n->kind == PN_AGG)
				rc = xg_agg(x, n, &s, out, NULL);
			else
				rc = xg_filter_out(x, n, &s, out);
		}
	}
	bool scan = s.scan != NULL;
	xg_src_free(&s);
	/* columns that do not fit the cache, or a load or run that ran
	 * out of device memory: the scan again, in row windows */
	if (scan && (rc == XG_STREAM ||
		     (rc == GPMDB_NOMEM && !strncmp(db->errmsg, "GPU ", 4)))) {
		if (rc != XG_STREAM)
			db_clear(db);
		if (xg_depth == 1)
			gcache_begin(); /* unpins what the failed try loaded */
		rc = xg_stream(x, n, out);
	}
	if (!rc && n->kind != PN_AGG)
		db->gstat.gpu_ops++;
	xg_depth--;
	pthread_mutex_unlock(&xg_lock);
	/* an SQL error of a row (overflow, invalid date) is the query's
	 * error, as on the CPU; an error of the source's own operators
	 * too */
	if (!rc || rc == GPMDB_ERROR || rc == GPMDB_INTERRUPT ||
	    strncmp(db->errmsg, "GPU ", 4))
		return rc;
	snprintf(why, sizeof(why), "%s", db->errmsg + 4);
	db_clear(db);
fallback:
	if (db->gpu_strict)
		return db_err(db, GPMDB_UNSUPPORTED,
			      "gpu_strict: %s cannot run on the GPU: %s",
			      xg_kind_name(n->kind), why);
	db->gstat.cpu_fallbacks++;
	return XG_DECLINE;
}

/* ---- pragmas and statistics ----------------------------------------- */

static const char *xg_stat_cols[] = {"name", "value"};
static const char *xg_one_col[] = {"value"};

static bool xg_is_pragma(const char *name)
{
	return !strcasecmp(name, "backend") ||
	       !strcasecmp(name, "gpu_strict") ||
	       !strcasecmp(name, "gpu_threshold") ||
	       !strcasecmp(name, "gpu_cache_limit") ||
	       !strcasecmp(name, "gpu_stats") || !strcasecmp(name, "gpu_info");
}

int exec_gpu_pragma_columns(ast_stmt *s, const char ***names)
{
	if (!xg_is_pragma(s->name))
		return -1;
	if (!strcasecmp(s->name, "gpu_stats")) {
		*names = xg_stat_cols;
		return 2;
	}
	if (s->pragma_value && !s->pragma_call) {
		*names = NULL;
		return 0;
	}
	*names = xg_one_col;
	return 1;
}

static int xg_row(gpmdb *db, rel *r, const char *name, const char *text,
		  int64_t i)
{
	sval v = {.t = BC_T_INT};
	v.u.i = i;
	return pragma_row(db, r, name, text, v);
}

static int xg_bool(const char *v, bool *out)
{
	if (!strcasecmp(v, "on") || !strcasecmp(v, "1") ||
	    !strcasecmp(v, "true") || !strcasecmp(v, "yes")) {
		*out = true;
		return 0;
	}
	if (!strcasecmp(v, "off") || !strcasecmp(v, "0") ||
	    !strcasecmp(v, "false") || !strcasecmp(v, "no")) {
		*out = false;
		return 0;
	}
	return -1;
}

int exec_gpu_set_backend(gpmdb *db, const char *v)
{
	if (!strcasecmp(v, "auto"))
		db->backend = 0;
	else if (!strcasecmp(v, "cpu"))
		db->backend = 1;
	else if (!strcasecmp(v, "gpu"))
		/* without a GPU each operator falls back (counted) or, under
		 * gpu_strict, fails with gpu_init's message */
		db->backend = 2;
	else
		return db_err(db, GPMDB_ERROR,
			      "unknown backend \"%s\" (expected auto, cpu or "
			      "gpu)",
			      v);
	bgpu_index_hooks(db); /* index sort and probe on the GPU or not */
	return GPMDB_OK;
}

void exec_gpu_open(gpmdb *db)
{
	db->gpu_owner = gcache_new_owner();
	db->gpu_threshold = XG_DEFAULT_THRESHOLD;
}

void exec_gpu_close(gpmdb *db)
{
	pthread_mutex_lock(&xg_lock);
	gcache_drop_owner(db->gpu_owner);
	pthread_mutex_unlock(&xg_lock);
}

int exec_gpu_after_write(int rc)
{
	gcache_bump();
	return rc;
}

int exec_gpu_pragma(gpmdb_stmt *st, ast_stmt *s, const char *v, rel **out)
{
	static const char *bn[] = {"auto", "cpu", "gpu"};
	gpmdb *db = st->db;
	bool set = v && s->pragma_value && !s->pragma_call;
	etype tt[2] = {et_make(BC_T_TEXT), et_make(BC_T_INT)};
	rel *r = NULL;
	int rc = GPMDB_OK;
	const char *nm = s->name;

	if (set) {
		if (!strcasecmp(nm, "backend"))
			return exec_gpu_set_backend(db, v);
		if (!strcasecmp(nm, "gpu_strict")) {
			bool b;
			if (xg_bool(v, &b))
				return db_err(db, GPMDB_ERROR,
					      "gpu_strict is on or off");
			db->gpu_strict = b;
			return GPMDB_OK;
		}
		if (!strcasecmp(nm, "gpu_threshold") ||
		    !strcasecmp(nm, "gpu_cache_limit")) {
			char *end;
			long long k = strtoll(v, &end, 10);
			if (*end || k < 0)
				return db_err(db, GPMDB_ERROR,
					      "%s wants a number >= 0", nm);
			if (!strcasecmp(nm, "gpu_threshold"))
				db->gpu_threshold = (uint64_t)k;
			else
				gcache_set_limit((uint64_t)k << 20);
			return GPMDB_OK;
		}
		return db_err(db, GPMDB_ERROR, "PRAGMA %s cannot be set", nm);
	}
	if (!strcasecmp(nm, "gpu_stats")) {
		gcache_stats cs;
		gpu_ix_cache_stats ics;
		stg_ix_hook_stats ihs;
		if (!(r = rel_new(NULL, 2, tt)))
			return db_err(db, GPMDB_NOMEM, "out of memory");
		pthread_mutex_lock(&xg_lock);
		gcache_get_stats(&cs);
		gpu_ix_cache_get_stats(&ics);
		stg_index_hook_stats(&ihs);
		pthread_mutex_unlock(&xg_lock);
		const struct {
			const char *n;
			uint64_t v;
		} rows[] = {
		    {"gpu_operators", db->gstat.gpu_ops},
		    {"cpu_fallbacks", db->gstat.cpu_fallbacks},
		    {"gpu_time_us", db->gstat.gpu_ns / 1000},
		    {"bytes_uploaded", db->gstat.bytes_uploaded + 0},
		    {"bytes_downloaded", db->gstat.bytes_downloaded},
		    {"cache_hits", db->gstat.cache_hits},
		    {"cache_misses", db->gstat.cache_misses},
		    {"cache_entries", cs.entries},
		    {"cache_bytes", cs.bytes},
		    {"cache_uploaded_bytes", cs.uploaded},
		    {"cache_evictions", cs.evictions},
		    {"cache_oom_evictions", cs.oom_evictions},
		    {"cache_stale", cs.stale},
		    {"cache_upload_direct_bytes", cs.up_direct},
		    {"cache_upload_staged_bytes", cs.up_staged},
		    {"cache_load_us", cs.load_ns / 1000},
		    {"cache_pool_registered", cs.reg_ok},
		    {"cache_register_failures", cs.reg_fail},
		    {"cache_register_us", cs.reg_ns / 1000},
		    {"device_joins", xg_dev_joins},
		    {"stream_queries", xg_stream_queries},
		    {"stream_windows", xg_stream_windows},
		    {"stream_loaded_bytes", cs.range_bytes},
		    {"fused_aggs", xg_fused_aggs},
		    {"fused_declines", xg_fused_declines},
		    {"device_group_results", xg_kept_aggs},
		    {"text_merges", xg_text_merges},
		    {"text_merged_bytes", xg_text_merged_bytes},
		    /* CUDA context creation in this process */
		    {"init_us", gpu_init_us()},
		    {"index_cache_entries", ics.entries},
		    {"index_cache_bytes", ics.bytes},
		    {"index_cache_hits", ics.hits},
		    {"index_cache_misses", ics.misses},
		    {"index_cache_evictions", ics.evictions},
		    /* the last bulk index sort and probe of this thread:
		     * rows, where (1 GPU, 0 CPU) and wall time */
		    {"index_sort_rows", ihs.sort_rows},
		    {"index_sort_gpu", ihs.sort_gpu},
		    {"index_sort_us", ihs.sort_us},
		    {"index_probe_keys", ihs.probe_keys},
		    {"index_probe_gpu", ihs.probe_gpu},
		    {"index_probe_us", ihs.probe_us},
		};
		for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]) && !rc;
		     i++)
			rc = xg_row(db, r, rows[i].n, NULL, (int64_t)rows[i].v);
		/* the registration's failure, in the driver's words (the
		 * value column is numeric: the words go in the name) */
		if (!rc && cs.reg_fail && !cs.reg_ok) {
			char nm2[300];
			snprintf(nm2, sizeof(nm2),
				 "cache_upload_staged_because: %.200s",
				 cs.reg_msg);
			rc = xg_row(db, r, nm2, NULL, 1);
		}
	} else {
		char buf[400];
		bool num = false;
		int64_t iv = 0;
		if (!strcasecmp(nm, "backend"))
			snprintf(buf, sizeof(buf), "%s", bn[db->backend]);
		else if (!strcasecmp(nm, "gpu_strict"))
			snprintf(buf, sizeof(buf), "%s",
				 db->gpu_strict ? "on" : "off");
		else if (!strcasecmp(nm, "gpu_info")) {
			pthread_mutex_lock(&xg_lock);
			gpu_describe(buf, sizeof(buf));
			pthread_mutex_unlock(&xg_lock);
		} else {
			num = true;
			iv = !strcasecmp(nm, "gpu_threshold")
				 ? (int64_t)db->gpu_threshold
				 : (int64_t)(gcache_get_limit() >> 20);
		}
		if (!(r = rel_new(NULL, 1, num ? &tt[1] : &tt[0])))
			return db_err(db, GPMDB_NOMEM, "out of memory");
		rc = xg_row(db, r, NULL, num ? NULL : buf, iv);
	}
	if (rc) {
		rel_free(r);
		return rc;
	}
	*out = r;
	return GPMDB_OK;
}

bool exec_gpu_is_pragma(const char *name)
{
	return xg_is_pragma(name);
}

/* ---- INSERT ... SELECT: the result left on the device ---------------- */

/* exec_gpu_dev's owner: the runs whose outputs it hands out. */
typedef struct xg_dev {
	exec_gpu_dev d;
	xg_out *o;
	int nout;
	gpu_col *cols;
} xg_dev;

void exec_gpu_dev_free(exec_gpu_dev *d)
{
	xg_dev *h = d ? d->priv : NULL;

	if (!h)
		return;
	for (int i = 0; h->o && i < h->nout; i++)
		xg_out_free(&h->o[i]);
	free(h->o);
	free(h->cols);
	free(h);
}

/*
 * exec_gpu_node's PROJECT / FILTER over a cached table scan, without
 * xg_fetch: the outputs stay on the device, owned by the handle.  Only
 * the fitting path: a scan streamed in row windows appends each window's
 * rows on the host (xg_stream), so it declines.  TEXT outputs point into
 * text buffers freed here: the caller (batch_gpu.c) writes no TEXT.
 */
int exec_gpu_select_dev(exec_ctx *x, pnode *n, exec_gpu_dev **out, char *why,
			size_t len)
{
	gpmdb *db = x->db;
	xg_dev *h = NULL;
	pnode *src = NULL;
	xg_src s;
	int rc = GPMDB_OK, d, nout;

	*out = NULL;
	why[0] = 0;
	memset(&s, 0, sizeof(s));
	if (db->backend == 1 || !n ||
	    (n->kind != PN_PROJECT && n->kind != PN_FILTER)) {
		snprintf(why, len,
			 "the SELECT's top operator is %s, not a projection "
			 "or filter",
			 n ? xg_kind_name(n->kind) : "?");
		return XG_DECLINE;
	}
	pthread_mutex_lock(&xg_lock);
	if (xg_depth++ == 0)
		gcache_begin();
	d = xg_decide(x, n, why, len);
	bool dev_src = false;
	if (d == XG_GPU) {
		char jw[300];
		src = xg_source(x, n, why, len);
		/* a table scan, or a join kept on the device */
		dev_src = src && (src->kind == PN_SCAN ||
				  (src->kind == PN_JOIN &&
				   xg_join_ok(x, src, jw, sizeof(jw))));
		if (!dev_src)
			snprintf(why, len,
				 "the %s's input (%s) is not a table scan or "
				 "a join kept on the device",
				 xg_kind_name(n->kind),
				 src ? xg_kind_name(src->kind) : "?");
	} else if (!why[0]) {
		snprintf(why, len, "the %s runs on the CPU",
			 xg_kind_name(n->kind));
	}
	if (!dev_src) {
		xg_depth--;
		pthread_mutex_unlock(&xg_lock);
		return XG_DECLINE;
	}
	nout = n->kind == PN_PROJECT ? n->nexprs : n->ncols;
	if (!(h = calloc(1, sizeof(*h))) ||
	    !(h->o = calloc((size_t)nout + 1, sizeof(xg_out))) ||
	    !(h->cols = calloc((size_t)nout + 1, sizeof(gpu_col)))) {
		rc = db_err(db, GPMDB_NOMEM, "out of memory");
		goto out;
	}
	h->d.priv = h;
	h->nout = nout;
	if ((rc = xg_prepare(x, n, &s)))
		goto out;
	if (n->kind == PN_PROJECT) {
		for (int i = 0; i < nout && !rc; i++) {
			cexpr *c;
			if (!(rc = exec_node_cx(x, n, i, n->exprs[i], n->post,
						n->l, &c)))
				rc = xg_run(&s, c, &h->o[i]);
		}
	} else {
		rc = xg_filter_runs(x, n, &s, h->o);
	}
	if (rc)
		goto out;
	for (int i = 0; i < nout; i++)
		h->cols[i] = h->o[i].col[0];
	h->d.nrows = xg_rows(&s);
	h->d.ncols = nout;
	h->d.cols = h->cols;
	h->d.ty = n->ty;
	db->gstat.gpu_ops++;
out:
	xg_src_free(&s); /* stream-ordered: after the runs */
	xg_depth--;
	pthread_mutex_unlock(&xg_lock);
	if (!rc) {
		*out = &h->d;
		return GPMDB_OK;
	}
	if (h)
		h->d.priv = h; /* exec_gpu_dev_free finds it */
	exec_gpu_dev_free(h ? &h->d : NULL);
	if (rc == XG_STREAM) {
		snprintf(why, len,
			 "the table's columns do not fit the GPU cache (a "
			 "streamed scan's rows come to the host)");
		return XG_DECLINE;
	}
	/* an SQL error of a row is the statement's, as on the CPU; a GPU
	 * failure (out of device memory...) leaves it to the general
	 * path, which tries again and falls back as it does */
	if (rc == GPMDB_ERROR || rc == GPMDB_INTERRUPT ||
	    strncmp(db->errmsg, "GPU ", 4))
		return rc;
	snprintf(why, len, "%s", db->errmsg);
	db_clear(db);
	return XG_DECLINE;
}
