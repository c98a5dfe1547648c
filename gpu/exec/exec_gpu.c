/*
 * exec_gpu.c - the GPU backend of the executor (docs/gpu.md): backend
 * choice per operator, EXPLAIN's reasons, GPU filter and projection, and
 * exec_gpu_rows, the GPU implementation of FILTER, PROJECT and AGG in
 * engine/exec/exec_op.c's table (the other files of gpu/exec:
 * exec_gpu_int.h).
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
#include "exec_gpu_int.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

/* GPU work is serialised: one stream, one constant-memory program.
 * Recursive: a GPU operator runs its (non-scan) source first, which may
 * be a GPU operator too; xg_depth makes only the outermost one start a
 * new cache pin (what the outer one holds must not be evicted). */
static pthread_mutex_t xg_lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
static int xg_depth;
/* xg_depth as this thread sees it (exec_gpu_nested) */
static _Thread_local int xg_nest;

bool exec_gpu_nested(void)
{
	return xg_nest > 0;
}

/*
 * Whether a streamed run that ran out of device memory may go again in
 * smaller windows (xg_stream_again): only where no GPU operator around
 * it has another way (the outermost call, whose failed try is unpinned
 * here, or an outer call already in its host-source try).  An inner
 * call's shortage is left to the outer call, which frees what it holds
 * and makes its sources on the host (exec_gpu_rows).
 */
bool xg_shrink_begin(void)
{
	if (xg_depth == 1) {
		gcache_begin();
		return true;
	}
	return xg_host_sources != 0;
}

void exec_gpu_lock(void)
{
	pthread_mutex_lock(&xg_lock);
}

void exec_gpu_unlock(void)
{
	pthread_mutex_unlock(&xg_lock);
}

bool exec_gpu_failed(gpmdb *db, int rc)
{
	return rc != GPMDB_ERROR && rc != GPMDB_INTERRUPT &&
	       !strncmp(db->errmsg, "GPU ", 4);
}

/* ---- a fresh process's first statement -------------------------------- */

/* Columns mapped ahead (gpu_stats prefetch_bytes, prefetch_us). */
uint64_t xg_prefetch_bytes, xg_prefetch_ns;

#define XG_PF_TABLES 32

typedef struct {
	uint32_t table_id;
	int ntcols;
	int *types; /* per table column: its storage type, -1 not read */
} xg_pf_table;

/* The table columns the scans under n read, merged per table. */
static void xg_pf_walk(const pnode *n, xg_pf_table *t, int *nt, int depth)
{
	for (; n && depth < 256; n = n->l, depth++) {
		if (n->r)
			xg_pf_walk(n->r, t, nt, depth + 1);
		if (n->kind != PN_SCAN || n->ntcols <= 0)
			continue;
		int k = 0;
		while (k < *nt && t[k].table_id != n->table_id)
			k++;
		if (k == *nt) {
			if (k == XG_PF_TABLES ||
			    !(t[k].types =
				  malloc(sizeof(int) * (size_t)n->ntcols)))
				continue;
			t[k].table_id = n->table_id;
			t[k].ntcols = n->ntcols;
			for (int c = 0; c < n->ntcols; c++)
				t[k].types[c] = -1;
			(*nt)++;
		}
		for (int i = 0; i < n->ncols; i++) {
			int c = n->tcol ? n->tcol[i] : i;
			if (c >= 0 && c < n->ntcols && c < t[k].ntcols)
				t[k].types[c] = n->stype[c];
		}
	}
}

/*
 * Why: a fresh process's first GPU statement waits 120-170 ms for CUDA's
 * setup (the thread gpu_init_async started at open), then copies its
 * columns through pinned staging from pages this process has not mapped
 * yet, faulting them in one at a time (4-6 GB/s: 64 of Q6's 220 ms at
 * TPC-H SF10 on the H200).  While the setup still runs, the pages of the
 * columns the plan's scans read are mapped on every core instead
 * (stg_prefetch_cols); after it this does nothing.
 */
void exec_gpu_prefetch(exec_ctx *x, pnode *root)
{
	xg_pf_table t[XG_PF_TABLES];
	int nt = 0;
	struct timespec t0, t1;

	if (x->db->backend == 1 || !root || !gpu_init_pending())
		return;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	xg_pf_walk(root, t, &nt, 0);
	for (int k = 0; k < nt; k++) {
		uint64_t b = 0;
		/* a failure leaves the reads to fault as before */
		if (!stg_prefetch_cols(x->db->pool, t[k].table_id, t[k].types,
				       t[k].ntcols, &b))
			xg_prefetch_bytes += b;
		free(t[k].types);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	xg_prefetch_ns += (uint64_t)((t1.tv_sec - t0.tv_sec) * 1000000000LL +
				     (t1.tv_nsec - t0.tv_nsec));
}

/* ---- decisions ------------------------------------------------------- */

int xg_expr_ok(exec_ctx *x, pnode *n, int i, ast_expr *e, bool post,
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
pnode *xg_source(exec_ctx *x, pnode *n, char *why, size_t len)
{
	pnode *s = n->l;
	cexpr *c;

	while (s && s->kind == PN_FILTER &&
	       xg_expr_ok(x, s, 0, s->pred, s->post, s->l, &c, why, len))
		s = s->l;
	return s;
}

uint64_t xg_scan_rows(gpmdb *db, const pnode *s)
{
	uint64_t r = stg_row_count(db->pool, s->table_id),
		 d = stg_deleted_count(db->pool, s->table_id);
	return r > d ? r - d : 0;
}

/* The backend of n: XG_GPU, XG_CPU (by choice), XG_WANTED_CPU (wanted
 * on the GPU, cannot: a fallback), XG_NO_OP (no GPU version).  why: the
 * reason for a CPU choice (may be empty). */
int xg_decide(exec_ctx *x, pnode *n, char *why, size_t len)
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
			 exec_op_name(n->l->kind));
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
			 exec_op_name(n->kind));
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
				 src ? exec_op_name(src->kind) : "?");
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

/* Every node of the tree at n on the CPU for reason why. */
static void xg_mark_cpu(pnode *n, const char *why)
{
	for (; n; n = n->l) {
		n->xg_mode = XG_CPU;
		n->xg_why = why;
		xg_mark_cpu(n->r, why);
	}
}

/* Some node of the tree at n found that there is no GPU (gpu_init ran
 * and failed: it remembers that). */
static bool xg_found_no_gpu(const pnode *n)
{
	for (; n; n = n->l)
		if ((n->xg_mode != XG_GPU && n->xg_why &&
		     strstr(n->xg_why, "no GPU: ")) ||
		    xg_found_no_gpu(n->r))
			return true;
	return false;
}

void exec_gpu_annotate(gpmdb_stmt *st, pnode *root)
{
	exec_ctx x;
	char gerr[300], why[320];

	memset(&x, 0, sizeof(x));
	x.db = st->db;
	x.st = st;
	x.mem_limit = st->db->mem_limit;
	pthread_mutex_lock(&xg_lock);
	/* no GPU, when that is known without starting CUDA (a build
	 * without it; backend=gpu starts it anyway; a node's choice tried
	 * it): the one reason for every node, said once by EXPLAIN, rather
	 * than each node's reason for not trying */
#ifdef GPMDB_HAVE_GPU
	bool known = st->db->backend == 2;
#else
	bool known = st->db->backend != 1;
#endif
	if (!known || !gpu_init(gerr, sizeof(gerr))) {
		xg_mark(&x, root, false);
		known = xg_found_no_gpu(root) && gpu_init(gerr, sizeof(gerr));
	}
	if (known) {
		size_t l;
		char *p;
		snprintf(why, sizeof(why), "no GPU: %s", gerr);
		l = strlen(why) + 1;
		if ((p = ast_alloc(&st->parena, l)))
			memcpy(p, why, l);
		xg_mark_cpu(root, p);
	}
	pthread_mutex_unlock(&xg_lock);
}

const char *exec_gpu_explain(const pnode *n, bool *gpu)
{
	*gpu = n->xg_mode == XG_GPU;
	return n->xg_why;
}

int xg_project(exec_ctx *x, pnode *n, xg_src *s, rel **out)
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
int exec_gpu_sort_dev(exec_ctx *x, pnode *n, exec_rows want, rel **out)
{
	pnode *p = n->l, *src;
	gpu_sortcol *keys = NULL; /* heap: xg_prepare recurses below */
	xg_out *o = NULL, *g = NULL;
	uint32_t *perm = NULL, *dperm = NULL, m, keep, skip, cnt;
	rel *r = NULL;
	char why[400], err[300];
	xg_src s;
	int rc = GPMDB_OK, d;

	if (!p || p->kind != PN_PROJECT || n->nsort > 64 ||
	    p->nexprs != n->ncols)
		return XG_DECLINE;
	pthread_mutex_lock(&xg_lock);
	xg_nest++;
	if (xg_depth++ == 0) {
		gcache_begin();
		xg_host_sources = 0; /* a top-level GPU call tries the device */
	}
	d = xg_decide(x, p, why, sizeof(why));
	src = d == XG_GPU ? xg_source(x, p, why, sizeof(why)) : NULL;
	/* a source that stays on the device: a scan, a device join, a
	 * GROUP BY whose groups stay there (TPC-H Q10: 389k groups with
	 * TEXT keys, of which LIMIT keeps 20) */
	if (!src ||
	    !(src->kind == PN_SCAN ||
	      (src->kind == PN_JOIN && xg_join_ok(x, src, why, sizeof(why))) ||
	      xg_agg_keep_ok(src))) {
		xg_nest--;
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
	keep = want.keep < m ? (uint32_t)want.keep : m;
	skip = want.skip < keep ? (uint32_t)want.skip : keep;
	cnt = keep - skip;
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
	/* the first keep rows' order; the OFFSET's skip of them are left
	 * out of the gather */
	if ((rc = gpu_sort(keys, n->nsort, m, keep, perm, err, sizeof(err))) ||
	    (rc = gpu_alloc((void **)&dperm, 4 * (size_t)cnt + 4, err,
			    sizeof(err))) ||
	    (rc = gpu_upload(dperm, perm + skip, 4 * (size_t)cnt, err,
			     sizeof(err)))) {
		rc = xg_gerr(x, rc, "sort", err);
		goto out;
	}
	x->db->gstat.bytes_downloaded += 4 * (uint64_t)keep;
	/* the kept rows of every output, gathered on the device; text still
	 * maps through each output's segments */
	for (int i = 0; i < p->nexprs && !rc; i++) {
		g[i] = o[i];
		g[i].have = false;
		if ((rc = gpu_gather(&o[i].col[0], dperm, cnt, &g[i].col[0],
				     err, sizeof(err))))
			rc = xg_gerr(x, rc, "gather", err);
	}
	if (!rc && !(r = rel_new(x, n->ncols, n->ty)))
		rc = x->db->errcode ? x->db->errcode : GPMDB_NOMEM;
	if (!rc)
		rc = xg_fetch(x, g, p->nexprs, cnt, r);
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
	xg_nest--;
	xg_depth--;
	pthread_mutex_unlock(&xg_lock);
	if (rc) {
		rel_free(r);
		/* too large for the cache: the general path streams the
		 * projection (exec_gpu_rows) and sorts its rows */
		return rc == XG_STREAM ? XG_DECLINE : rc;
	}
	*out = r;
	return GPMDB_OK;
}

/* Columns 0..ncols-1 of s (types ty), each through an identity program,
 * into o[0..ncols); a column with skip[k] set is not run: its output is
 * NULL (xg_fetch fetches nothing for it). */
int xg_col_runs(exec_ctx *x, int ncols, const etype *ty, const bool *skip,
		xg_src *s, xg_out *o)
{
	cexpr c;
	int rc = GPMDB_OK;

	memset(&c, 0, sizeof(c));
	c.ninputs = 1;
	for (int k = 0; k < ncols && !rc; k++) {
		if (skip && skip[k]) {
			/* no parent reads it: NULL, nothing run or fetched
			 * (xg_fetch) */
			memset(&o[k], 0, sizeof(o[k]));
			o[k].col[0].type = VEC_NULL;
			continue;
		}
		bc_program *p = malloc(sizeof(bc_program));
		etype t = ty[k];
		if (!p)
			return db_err(x->db, GPMDB_NOMEM, "out of memory");
		bc_init(p);
		bc_input(p, rel_vec_type(t.t), t.prec, t.scale);
		if (rel_vec_type(t.t) == VEC_NULL)
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

/* Every column of a FILTER over a cache source (those no parent reads
 * NULL), into o[0..n->ncols). */
static int xg_filter_runs(exec_ctx *x, pnode *n, xg_src *s, xg_out *o)
{
	return xg_col_runs(x, n->ncols, n->ty, n->unread, s, o);
}

/* A FILTER whose consumer is on the CPU: its rows, every column. */
int xg_filter_out(exec_ctx *x, pnode *n, xg_src *s, rel **out)
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
		if (!rc && m == s->in->nrows && !s->in_borrowed) {
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

int exec_gpu_rows(exec_ctx *x, pnode *n, exec_rows want, rel **out, char *why,
		  size_t len)
{
	gpmdb *db = x->db;
	xg_src s;
	int d, rc;

	(void)want;
	pthread_mutex_lock(&xg_lock);
	xg_nest++;
	if (xg_depth++ == 0) {
		gcache_begin();
		xg_host_sources = 0; /* a top-level GPU call tries the device */
	}
	d = xg_decide(x, n, why, len);
	if (d != XG_GPU) {
		xg_nest--;
		xg_depth--;
		pthread_mutex_unlock(&xg_lock);
		if (d != XG_WANTED_CPU)
			why[0] = 0;
		return EXEC_OP_CPU;
	}
	/* a second try makes the source a host relation (below) */
	for (int again = 0;; again = 1) {
		uint64_t mark = gcache_pin_mark();
		rc = again ? XG_UNFUSED : xg_fused(x, n, &s, out);
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
		/* a host source that ran out of device memory: its rows
		 * are kept and streamed below rather than made again */
		rel *hin = NULL;
		if (!scan && s.in && !s.in_borrowed && xg_too_large(x, rc)) {
			hin = s.in;
			s.in = NULL;
		}
		xg_src_free(&s);
		bool big = xg_too_large(x, rc);
		/* columns that do not fit the cache, or a load or run that
		 * ran out of device memory: the scan again, in row windows;
		 * a host source in windows of its rows.  A source kept on
		 * the device (pairs of a join, a GROUP BY's groups) that ran
		 * out of memory: again with the source made on the host,
		 * where its operators run in passes and the chain reads it in
		 * windows.  Otherwise the error stays (its message too). */
		bool stream = big && (scan || hin),
		     retry = big && !stream && !again && !xg_host_sources;
		if ((stream || retry) && rc != XG_STREAM)
			db_clear(db);
		/* unpins what the failed try loaded (nested: only that, the
		 * outer calls' columns stay pinned) */
		if ((stream || retry) && xg_depth == 1)
			gcache_begin();
		else if (stream || retry)
			gcache_unpin_since(mark);
		if (stream)
			rc = hin ? xg_stream_host(x, n, hin, out)
				 : xg_stream(x, n, out);
		rel_free(hin);
		if (!retry)
			break;
		xg_host_sources = 1;
	}
	if (!rc && n->kind != PN_AGG)
		db->gstat.gpu_ops++;
	xg_nest--;
	xg_depth--;
	pthread_mutex_unlock(&xg_lock);
	/* a GPU failure here is exec_op_run's fallback */
	return rc;
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
 * exec_gpu_rows's PROJECT / FILTER over a cached table scan, without
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
			 n ? exec_op_name(n->kind) : "?");
		return XG_DECLINE;
	}
	pthread_mutex_lock(&xg_lock);
	xg_nest++;
	if (xg_depth++ == 0) {
		gcache_begin();
		xg_host_sources = 0; /* a top-level GPU call tries the device */
	}
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
				 exec_op_name(n->kind),
				 src ? exec_op_name(src->kind) : "?");
	} else if (!why[0]) {
		snprintf(why, len, "the %s runs on the CPU",
			 exec_op_name(n->kind));
	}
	if (!dev_src) {
		xg_nest--;
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
	xg_nest--;
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
	if (!exec_gpu_failed(db, rc))
		return rc;
	snprintf(why, len, "%s", db->errmsg);
	db_clear(db);
	return XG_DECLINE;
}
