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
#include "engine.h"
#include "exec_gpu_ops.h"
#include "value.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../gpu/cache.h"
#include "../gpu/gpu.h"
#include "../gpu/gpu_dml.h"

#include <time.h>

#define XG_DEFAULT_THRESHOLD 100000

/* Not a GPMDB code: "run this node on the CPU". */
#define XG_DECLINE (-1)

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
	static const char *nm[] = {"SCAN",	"ONE ROW",	 "VALUES",
				   "FILTER",	"PROJECT",	 "JOIN",
				   "AGGREGATE", "SORT",		 "DISTINCT",
				   "LIMIT",	"SET OPERATION", "CONVERT"};
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
			snprintf(why, len, "expression has a subquery");
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

	if (n->ngroup > 1) {
		snprintf(why, len,
			 "GROUP BY of %d keys (one integer, decimal, date or "
			 "boolean key on the GPU yet)",
			 n->ngroup);
		return 0;
	}
	for (int k = 0; k < n->ngroup; k++) {
		etype t = n->ty[k];
		if (t.t != BC_T_INT && t.t != BC_T_DATE && t.t != BC_T_BOOL &&
		    t.t != BC_T_DEC) {
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
		if (ad->fn == AGG_GROUP_CONCAT || ad->fn == AGG_ANY) {
			snprintf(why, len, "aggregate %s", an[ad->fn]);
			return 0;
		}
		if (ad->distinct) {
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
		switch (ad->fn) {
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
	/* sort, join, distinct, set operations: exec_gpu_ops.c */
	if (exec_gpu_ops_kind(n->kind))
		return exec_gpu_ops_decide(x, n, why, len);
	if (n->kind != PN_FILTER && n->kind != PN_PROJECT &&
	    n->kind != PN_AGG) {
		if (n->kind == PN_SCAN || n->kind == PN_ONE)
			return XG_CPU;
		snprintf(why, len, "no GPU version of %s yet",
			 xg_kind_name(n->kind));
		return XG_NO_OP;
	}
	/* auto looks at the input first, so that small queries never start
	 * CUDA */
	src = xg_source(x, n, why, len);
	if (db->backend == 0) {
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
		if (src && src->kind == PN_SCAN)
			xg_mark(x, src, true);
		else
			xg_mark(x, src, false);
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
} xg_col;

typedef struct xg_src {
	exec_ctx *x;
	pnode *scan; /* cache source, or NULL */
	rel *in;     /* host source */
	uint32_t nrows;
	int ncols;
	xg_col *cols;
	uint32_t *sel; /* device selection, NULL = all rows */
	uint32_t nsel;
	/* what to free */
	void *dev[512];
	int ndev;
	void *host[512];
	int nhost;
} xg_src;

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

static void xg_src_free(xg_src *s)
{
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
	if (s->scan) {
		pnode *sc = s->scan;
		gcache_colref ref;
		/* the table column (plan_prune may have dropped some) */
		int tc = sc->tcol ? sc->tcol[c] : c;
		bool rid = tc >= sc->ntcols;
		xg_register(x->db);
		rc = gcache_column(x->db->pool, x->db->gpu_owner, sc->table_id,
				   rid ? GCACHE_ROWID : tc,
				   rid ? 0 : sc->stype[tc], &ref, err,
				   sizeof(err));
		if (rc)
			return xg_gerr(x, rc, "column cache", err);
		if (ref.nrows != s->nrows)
			return db_err(x->db, GPMDB_INTERNAL,
				      "GPU column cache: %llu rows, expected "
				      "%u",
				      (unsigned long long)ref.nrows, s->nrows);
		if (ref.hit)
			x->db->gstat.cache_hits++;
		else
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
	o->loaded = true;
	return GPMDB_OK;
}

/* ---- running a program over the source ------------------------------ */

typedef struct xg_out {
	gpu_col col[BC_MAX_OUTPUTS];
	bc_program *p;	 /* the program as run (its constant text) */
	gcache_seg *seg; /* the run's text buffer -> host */
	uint32_t nseg;
	bool have;
} xg_out;

static void xg_out_free(xg_out *o)
{
	if (o->have)
		gpu_vm_free_outputs(o->p, o->col);
	free(o->p);
	free(o->seg);
	memset(o, 0, sizeof(*o));
}

static int xg_run(xg_src *s, cexpr *c, xg_out *o)
{
	exec_ctx *x = s->x;
	gpu_col in[BC_MAX_INPUTS];
	int tcols[BC_MAX_INPUTS], nt = 0, rc;
	const char *text = NULL;
	uint64_t ntext = 0;
	char err[400];

	memset(o, 0, sizeof(*o));
	if (!(o->p = malloc(sizeof(bc_program))))
		return db_err(x->db, GPMDB_NOMEM, "out of memory");
	memcpy(o->p, c->prog, sizeof(bc_program));
	for (int k = 0; k < c->ninputs; k++) {
		int col = c->in[k].col;
		if ((rc = xg_load(s, col)))
			return rc;
		in[k] = s->cols[col].col;
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
	/* One text buffer per run: one column's own, or several copied
	 * together with their references rebased. */
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
			uint64_t n = s->nrows;
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
				if (c->in[k].col == tcols[j])
					in[k].data = copy;
			for (uint32_t q = 0; q < tc->nseg; q++) {
				o->seg[o->nseg] = tc->seg[q];
				o->seg[o->nseg++].dev_off += base;
			}
			base += tc->ntext;
		}
		text = buf;
		ntext = total;
	}
	rc = gpu_vm_run(o->p, in, c->ninputs, s->sel ? s->nsel : s->nrows, text,
			ntext, o->col, err, sizeof(err));
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
		size_t w = c->type == BC_COL_TEXT   ? sizeof(gpu_str)
			   : c->type == BC_COL_DATE ? 4
			   : c->type == BC_COL_BOOL ? 1
			   : c->type == VEC_NULL    ? 0
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

/* ---- the operators -------------------------------------------------- */

/* Sets up the source of n's chain and runs the chain's filters (bottom
 * up): s->sel holds the selected rows. */
static int xg_prepare(exec_ctx *x, pnode *n, xg_src *s)
{
	pnode *chain[64], *src;
	int nchain = 0, rc;
	char why[300], err[300];

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
	s->ncols = src->ncols;
	if (!(s->cols = calloc((size_t)s->ncols + 1, sizeof(xg_col))))
		return db_err(x->db, GPMDB_NOMEM, "out of memory");
	if (src->kind == PN_SCAN) {
		s->scan = src;
		s->nrows = (uint32_t)xg_scan_rows(x->db, src);
		if (xg_scan_rows(x->db, src) > UINT32_MAX)
			return db_err(x->db, GPMDB_UNSUPPORTED,
				      "GPU input: table of more than 2^32 "
				      "rows");
	} else {
		if ((rc = exec_node(x, src, &s->in)))
			return rc;
		if (s->in->nrows > UINT32_MAX)
			return db_err(x->db, GPMDB_UNSUPPORTED,
				      "GPU input: more than 2^32 rows");
		s->nrows = (uint32_t)s->in->nrows;
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
		gpu_free(s->sel, NULL, 0);
		s->sel = idx;
		s->nsel = cnt;
		x->db->gstat.gpu_ops++;
	}
	return GPMDB_OK;
}

static uint32_t xg_rows(const xg_src *s)
{
	return s->sel ? s->nsel : s->nrows;
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
	gpu_sortcol keys[64];
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
	if (!src || src->kind != PN_SCAN) {
		xg_depth--;
		pthread_mutex_unlock(&xg_lock);
		return XG_DECLINE;
	}
	memset(&s, 0, sizeof(s));
	if ((rc = xg_prepare(x, p, &s)))
		goto out;
	if (!(o = calloc((size_t)p->nexprs + 1, sizeof(xg_out))) ||
	    !(g = calloc((size_t)p->nexprs + 1, sizeof(xg_out)))) {
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
	for (int k = 0; k < n->nsort; k++) {
		keys[k].col = o[n->sort_col[k]].col[0];
		keys[k].desc = n->desc[k];
		keys[k].nulls_first = n->nulls_first[k];
	}
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
	free(perm);
	gpu_free(dperm, NULL, 0);
	xg_src_free(&s);
	xg_depth--;
	pthread_mutex_unlock(&xg_lock);
	if (rc) {
		rel_free(r);
		return rc;
	}
	*out = r;
	return GPMDB_OK;
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
		cexpr c;
		if (!o) {
			rel_free(r);
			return db_err(x->db, GPMDB_NOMEM, "out of memory");
		}
		memset(&c, 0, sizeof(c));
		c.ninputs = 1;
		for (int k = 0; k < n->ncols && !rc; k++) {
			bc_program *p = malloc(sizeof(bc_program));
			etype t = n->ty[k];
			if (!p) {
				rc =
				    db_err(x->db, GPMDB_NOMEM, "out of memory");
				break;
			}
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
	const bc_program *p = c->prog;
	int load = -1;

	*rc = GPMDB_OK;
	if (s->sel || c->ninputs != 1 || c->in[0].kind != IN_COL ||
	    p->noutputs != 1)
		return 0;
	for (uint32_t k = 0; k < p->ninsns; k++) {
		const bc_insn *in = &p->insns[k];
		if (in->op == BC_NOP)
			continue;
		if (in->op == BC_LOAD_COL && in->a == 0 && load < 0)
			load = in->dst;
		else if (!(in->op == BC_OUTPUT && load >= 0 && in->a == load))
			return 0;
	}
	if (load < 0 || p->out_reg[0] != load)
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

static int xg_agg(exec_ctx *x, pnode *n, xg_src *s, rel **out)
{
	int ng = n->ngroup, na = n->naggs, rc = GPMDB_OK;
	xg_out key, *args = calloc((size_t)na + 1, sizeof(xg_out));
	gpu_agg *ga = calloc((size_t)na + 1, sizeof(gpu_agg));
	gpu_col kcol;
	gpu_groups g;
	uint32_t m = xg_rows(s), *perm = NULL;
	rel *r = NULL;
	char err[300];

	memset(&kcol, 0, sizeof(kcol));
	memset(&key, 0, sizeof(key));
	memset(&g, 0, sizeof(g));
	if (!args || !ga) {
		rc = db_err(x->db, GPMDB_NOMEM, "out of memory");
		goto out;
	}
	/* keys, then arguments: the CPU's order of evaluation (and so of
	 * errors) */
	if (ng) {
		cexpr *c;
		if ((rc = exec_node_cx(x, n, 0, n->group[0], false, n->l, &c)))
			goto out;
		if (!xg_direct(s, c, &kcol, &rc)) {
			if (rc || (rc = xg_run(s, c, &key)))
				goto out;
			kcol = key.col[0];
		}
	}
	for (int a = 0; a < na; a++) {
		const aggdef *ad = &n->aggs[a];
		cexpr *c;
		etype t = ad->arg ? expr_type(ad->arg) : et_make(BC_T_INT);
		if (ad->arg) {
			if ((rc = exec_node_cx(x, n, ng + a, ad->arg, false,
					       n->l, &c)))
				goto out;
			if (!xg_direct(s, c, &ga[a].arg, &rc)) {
				if (rc || (rc = xg_run(s, c, &args[a])))
					goto out;
				ga[a].arg = args[a].col[0];
			}
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
		}
	}
	rc = gpu_group_agg(ng ? &kcol : NULL, m, ga, na, &g, err, sizeof(err));
	if (rc) {
		rc = xg_gerr(x, rc, "aggregate", err);
		goto out;
	}
	x->db->gstat.gpu_ops++;
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
	for (uint32_t k = 0; k < nout; k++)
		perm[k] = k;
	/* groups in the order of their first row, as the CPU's hash
	 * aggregate finds them */
	if (ng)
		qsort_r(perm, nout, sizeof(uint32_t), xg_cmp_first, g.first);
	if (!(r = rel_new(x, n->ncols, n->ty)) || (rc = rel_reserve(r, nout))) {
		rc = rc ? rc : x->db->errcode ? x->db->errcode : GPMDB_NOMEM;
		goto out;
	}
	for (uint32_t row = 0; row < nout && !rc; row++) {
		uint32_t gi = perm[row];
		if (ng) {
			sval v = xg_ival(n->ty[0], g.key[gi]);
			if (g.key_null[gi])
				v.t = BC_T_NULL;
			if ((rc = rel_set(r, 0, row, &v)))
				break;
		}
		for (int a = 0; a < na && !rc; a++) {
			const aggdef *ad = &n->aggs[a];
			const gpu_agg_res *res =
			    empty_scalar ? NULL : &g.res[a];
			etype t =
			    ad->arg ? expr_type(ad->arg) : et_make(BC_T_INT);
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
			case AGG_TOTAL: {
				long double sum = 0;
				if (cnt)
					sum = ga[a].op == GPU_AGG_SUM_R
						  ? (long double)res->f64[gi]
						  : xg_i128(res, gi);
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
				break;
			}
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
			}
			/* as agg_final: to the aggregate's result type */
			if (v.t != BC_T_NULL &&
			    (v.t != ad->res.t ||
			     (v.t == BC_T_DEC && v.scale != ad->res.scale)) &&
			    (rc = sval_convert(x, &v, ad->res, 0, r)))
				break;
			rc = rel_set(r, ng + a, row, &v);
		}
	}
	if (!rc) {
		r->nrows = nout;
		*out = r;
		r = NULL;
	}
out:
	gpu_group_free(&g);
	xg_out_free(&key);
	for (int a = 0; args && a < na; a++)
		xg_out_free(&args[a]);
	free(args);
	free(ga);
	free(perm);
	rel_free(r);
	return rc;
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
	rc = xg_prepare(x, n, &s);
	if (!rc) {
		if (n->kind == PN_PROJECT)
			rc = xg_project(x, n, &s, out);
		else if (n->kind == PN_AGG)
			rc = xg_agg(x, n, &s, out);
		else
			rc = xg_filter_out(x, n, &s, out);
	}
	if (!rc && n->kind != PN_AGG)
		db->gstat.gpu_ops++;
	xg_src_free(&s);
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
	sval v[2];
	int c = 0;

	memset(v, 0, sizeof(v));
	if (name) {
		v[c].t = BC_T_TEXT;
		v[c].u.s.ptr = name;
		v[c++].u.s.len = (uint32_t)strlen(name);
	}
	if (text) {
		v[c].t = BC_T_TEXT;
		v[c].u.s.ptr = text;
		v[c].u.s.len = (uint32_t)strlen(text);
	} else {
		v[c].t = BC_T_INT;
		v[c].u.i = i;
	}
	if (rel_reserve(r, 1))
		return db_err(db, GPMDB_NOMEM, "out of memory");
	for (int k = 0; k <= c; k++)
		if (rel_set(r, k, r->nrows, &v[k]))
			return db_err(db, GPMDB_NOMEM, "out of memory");
	r->nrows++;
	return GPMDB_OK;
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
		if (!(r = rel_new(NULL, 2, tt)))
			return db_err(db, GPMDB_NOMEM, "out of memory");
		pthread_mutex_lock(&xg_lock);
		gcache_get_stats(&cs);
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
		    {"cache_stale", cs.stale},
		    {"cache_upload_direct_bytes", cs.up_direct},
		    {"cache_upload_staged_bytes", cs.up_staged},
		    {"cache_load_us", cs.load_ns / 1000},
		    {"cache_pool_registered", cs.reg_ok},
		    {"cache_register_failures", cs.reg_fail},
		    {"cache_register_us", cs.reg_ns / 1000},
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
