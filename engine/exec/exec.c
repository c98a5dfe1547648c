/*
 * exec.c - the CPU operators (scan, filter, project, sort, distinct, limit,
 * set operations, subqueries; joins in exec_join.c, aggregates in
 * exec_agg.c, pipelines of them in pipe.c).  Each plan node produces a
 * materialised relation from its children's; expressions run batch by batch
 * (VEC_BATCH rows) through the bytecode interpreter.  Every allocation
 * is counted against the query's memory limit.
 */
#include "../engine.h"
#include "../value.h"
#include "exec_int.h"

#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- helpers ---- */

int exec_node_cx(exec_ctx *x, pnode *n, int i, ast_expr *e, bool post,
		 const pnode *in, cexpr **out)
{
	int rc;

	if (!n->cx) {
		int cnt =
		    n->nexprs + n->ngroup + 2 * n->naggs + n->nkeys * 2 + 4;
		n->cx = calloc((size_t)cnt, sizeof(cexpr *));
		if (!n->cx || stmt_own(x->st, n->cx)) {
			free(n->cx);
			n->cx = NULL;
			return db_err(x->db, GPMDB_NOMEM, "out of memory");
		}
		n->ncx = cnt;
	}
	if (!n->cx[i]) {
		if ((rc = cx_compile(x, e, in, post, &n->cx[i])))
			return rc;
		if (stmt_add_cx(x->st, n->cx[i])) {
			cx_free(n->cx[i]);
			n->cx[i] = NULL;
			return db_err(x->db, GPMDB_NOMEM, "out of memory");
		}
	}
	*out = n->cx[i];
	return GPMDB_OK;
}

rel *exec_rel_like(exec_ctx *x, const pnode *n)
{
	return rel_new(x, n->ncols, n->ty);
}

/* dst gets rows idx[0..m) of src (same column types). */
static int rel_gather(rel *dst, const rel *src, const uint32_t *idx, uint64_t m)
{
	return exec_gather_rows(dst, src, idx, m);
}

/* *out = rows idx[0..m) of in, shaped as n's output; frees idx (not in). */
int exec_gather_out(exec_ctx *x, const pnode *n, const rel *in, uint32_t *idx,
		    uint64_t m, rel **out)
{
	rel *r = exec_rel_like(x, n);
	int rc = r ? rel_gather(r, in, idx, m) : x->db->errcode;

	free(idx);
	if (rc) {
		rel_free(r);
		return rc;
	}
	*out = r;
	return GPMDB_OK;
}

/* Row equality, NULLs equal (GROUP BY, DISTINCT, set operations). */
bool exec_rows_eq(const rel *a, uint64_t i, const rel *b, uint64_t j, int ncols)
{
	sval x, y;

	for (int c = 0; c < ncols; c++) {
		rel_get(a, c, i, &x);
		rel_get(b, c, j, &y);
		if (sval_cmp(&x, &y))
			return false;
	}
	return true;
}

/* A chained hash table over row numbers. */

int exec_ht_init(exec_ctx *x, htab *h, uint64_t expect)
{
	memset(h, 0, sizeof(*h));
	h->nb = 64;
	while (h->nb < expect * 2)
		h->nb *= 2;
	h->head = malloc(h->nb * sizeof(int64_t));
	if (!h->head)
		return db_err(x->db, GPMDB_NOMEM, "out of memory");
	memset(h->head, 0xff, h->nb * sizeof(int64_t));
	return exec_mem(x, h->nb * 8);
}

void exec_ht_free(exec_ctx *x, htab *h)
{
	if (x && x->mem >= (h->nb + h->cap * 2) * 8)
		x->mem -= (h->nb + h->cap * 2) * 8;
	free(h->head);
	free(h->next);
	free(h->hash);
}

int exec_ht_add(exec_ctx *x, htab *h, uint64_t hash)
{
	int rc;

	if (h->n == h->cap) {
		uint64_t cap = h->cap ? h->cap * 2 : 256;
		int64_t *nx = realloc(h->next, cap * sizeof(int64_t));
		uint64_t *hs = nx ? realloc(h->hash, cap * 8) : NULL;
		if (nx)
			h->next = nx;
		if (!nx || !hs)
			return db_err(x->db, GPMDB_NOMEM, "out of memory");
		h->hash = hs;
		if ((rc = exec_mem(x, (cap - h->cap) * 16)))
			return rc;
		h->cap = cap;
	}
	if (h->n >= h->nb) { /* grow the buckets and rechain */
		uint64_t nb = h->nb * 4;
		int64_t *hd = malloc(nb * sizeof(int64_t));
		if (!hd)
			return db_err(x->db, GPMDB_NOMEM, "out of memory");
		memset(hd, 0xff, nb * sizeof(int64_t));
		for (uint64_t k = 0; k < h->n; k++) {
			uint64_t bkt = h->hash[k] & (nb - 1);
			h->next[k] = hd[bkt];
			hd[bkt] = (int64_t)k;
		}
		free(h->head);
		h->head = hd;
		if ((rc = exec_mem(x, (nb - h->nb) * 8)))
			return rc;
		h->nb = nb;
	}
	uint64_t bkt = hash & (h->nb - 1);
	h->hash[h->n] = hash;
	h->next[h->n] = h->head[bkt];
	h->head[bkt] = (int64_t)h->n;
	h->n++;
	return GPMDB_OK;
}

int64_t exec_ht_first(const htab *h, uint64_t hash)
{
	return h->head[hash & (h->nb - 1)];
}

/* ---- scan ---- */

/* One tablet's part of a scan: its view, its live rows (keep == NULL:
 * rows 0..m-1, none deleted) and where they go in the output. */

/* Copies column c (table column tc) of one tablet's live rows into d at
 * part->base: one loop per storage type, memcpy when the widths agree
 * and no row is deleted.  Not TEXT. */
void scan_fill(const pnode *n, const scan_part *sp, int tc, rcol *d)
{
	const stg_tablet_view *v = &sp->v;
	const uint32_t *keep = sp->keep;
	const uint32_t *nl;
	const char *src;
	uint64_t o = sp->base, m = sp->m;
	size_t w = rel_width(d->ty.t);

	if (tc >= n->ntcols) { /* the row id */
		for (uint64_t k = 0; k < m; k++) {
			((int64_t *)d->data)[o + k] =
			    (int64_t)(v->first_row + (keep ? keep[k] : k));
			d->nulls[o + k] = 0;
		}
		return;
	}
	src = v->data[tc];
	nl = v->nulls ? v->nulls[tc] : NULL;
#define SCAN_LOOP(T, S)                                                        \
	do {                                                                   \
		T *dd = (T *)d->data + o;                                      \
		const S *ss = (const S *)src;                                  \
		if (keep)                                                      \
			for (uint64_t k = 0; k < m; k++)                       \
				dd[k] = (T)ss[keep[k]];                        \
		else                                                           \
			for (uint64_t k = 0; k < m; k++)                       \
				dd[k] = (T)ss[k];                              \
	} while (0)
	switch (n->stype[tc]) {
	case STG_T_INT:
		SCAN_LOOP(int64_t, int32_t);
		break;
	case STG_T_FLOAT:
		SCAN_LOOP(double, float);
		break;
	case STG_T_BIGINT:
	case STG_T_DECIMAL:
	case STG_T_DOUBLE:
	case STG_T_DATE:
	case STG_T_BOOLEAN:
		/* same width in storage and in the relation */
		if (!keep) {
			memcpy((char *)d->data + o * w, src, m * w);
			break;
		}
		for (uint64_t k = 0; k < m; k++)
			memcpy((char *)d->data + (o + k) * w,
			       src + (uint64_t)keep[k] * w, w);
		break;
	}
#undef SCAN_LOOP
	if (!nl) {
		memset(d->nulls + o, 0, m);
		return;
	}
	for (uint64_t k = 0; k < m; k++) {
		uint32_t i = keep ? keep[k] : (uint32_t)k;
		if (!keep && i % 32 == 0 && m - k >= 32 && !nl[i / 32]) {
			/* a word without NULLs: 32 rows at once */
			memset(d->nulls + o + k, 0, 32);
			k += 31;
			continue;
		}
		uint8_t isnull = nl[i / 32] >> (i % 32) & 1;
		d->nulls[o + k] = isnull;
		if (isnull) /* NULL rows hold 0, as rel_set leaves them */
			memset((char *)d->data + (o + k) * w, 0, w);
	}
}

/* TEXT column c of one tablet: every live value copied into one block of
 * the relation's arena (the pool's mapping may move when it grows, and
 * the result outlives the scan). */
int scan_fill_text(rel *r, const scan_part *sp, int tc, rcol *d)
{
	const stg_tablet_view *v = &sp->v;
	const stg_strref *src = v->data[tc];
	const uint32_t *nl = v->nulls ? v->nulls[tc] : NULL;
	uint64_t total = 0;
	char *p;

	for (uint64_t k = 0; k < sp->m; k++) {
		uint32_t i = sp->keep ? sp->keep[k] : (uint32_t)k;
		if (!nl || !(nl[i / 32] >> (i % 32) & 1))
			total += src[i].len;
	}
	p = vec_arena_alloc(&r->strs, total ? total : 1);
	if (!p)
		return db_err(r->x ? r->x->db : NULL, GPMDB_NOMEM,
			      "out of memory");
	r->bytes += total;
	for (uint64_t k = 0; k < sp->m; k++) {
		uint32_t i = sp->keep ? sp->keep[k] : (uint32_t)k;
		vec_str *o = &((vec_str *)d->data)[sp->base + k];
		if (nl && (nl[i / 32] >> (i % 32) & 1)) {
			d->nulls[sp->base + k] = 1;
			o->ptr = NULL;
			o->len = 0;
			continue;
		}
		d->nulls[sp->base + k] = 0;
		memcpy(p, v->heap + src[i].off, src[i].len);
		o->ptr = p;
		o->len = src[i].len;
		p += src[i].len;
	}
	return exec_mem(r->x, total);
}

/* Scans the live rows of every tablet, only the columns of n's layout
 * (plan_prune): the tablets are listed first, so that the relation is
 * allocated once, then the numeric columns are copied by all threads
 * (one tablet column each), text on this one. */
int exec_scan(exec_ctx *x, pnode *n, rel **out)
{
	stg_pool *p = x->db->pool;
	uint32_t nt;
	scan_part *parts = NULL;
	uint64_t total = 0;
	rel *r;
	int rc = GPMDB_OK;

	if (stg_tablet_count(p, n->table_id, &nt))
		return db_err_stg(x->db);
	if (!(r = exec_rel_like(x, n)))
		return x->db->errcode;
	parts = calloc((size_t)nt + 1, sizeof(scan_part));
	if (!parts) {
		rel_free(r);
		return db_err(x->db, GPMDB_NOMEM, "out of memory");
	}
	for (uint32_t t = 0; t < nt && !rc; t++) {
		scan_part *sp = &parts[t];
		stg_tablet_view *v = &sp->v;
		bool del = false;

		if ((rc = db_check_interrupt(x->db)))
			break;
		if (stg_tablet_get(p, n->table_id, t, v)) {
			rc = db_err_stg(x->db);
			break;
		}
		/* this path takes whole tablets: encoded ones decoded */
		if ((rc = stg_tablet_decode_all(v, NULL, &sp->pb))) {
			rc = db_err(x->db, rc, "%s", stg_decode_errstr(rc));
			break;
		}
		for (uint32_t i = 0; v->deleted && i < (v->nrows + 31) / 32;
		     i++)
			if (v->deleted[i])
				del = true;
		sp->base = total;
		sp->m = v->nrows;
		if (del) {
			sp->keep = malloc(sizeof(uint32_t) * (v->nrows + 1));
			if (!sp->keep) {
				rc =
				    db_err(x->db, GPMDB_NOMEM, "out of memory");
				break;
			}
			sp->m = 0;
			for (uint32_t i = 0; i < v->nrows; i++)
				if (!(v->deleted[i / 32] >> (i % 32) & 1))
					sp->keep[sp->m++] = i;
		}
		total += sp->m;
	}
	if (!rc)
		rc = rel_reserve(r, total);
	/* text columns: the relation's arena is not shared between threads */
	for (uint32_t t = 0; t < nt && !rc; t++)
		for (int c = 0; c < n->ncols && !rc; c++) {
			int tc = n->tcol ? n->tcol[c] : c;
			if (tc < n->ntcols && n->stype[tc] == STG_T_TEXT)
				rc = scan_fill_text(r, &parts[t], tc,
						    &r->cols[c]);
		}
	if (!rc) {
		int64_t items = (int64_t)nt * n->ncols;
#pragma omp parallel for schedule(dynamic, 1) if (total >= 65536 && items > 1)
		for (int64_t it = 0; it < items; it++) {
			int c = (int)(it % n->ncols);
			int tc = n->tcol ? n->tcol[c] : c;
			if (tc < n->ntcols && n->stype[tc] == STG_T_TEXT)
				continue;
			scan_fill(n, &parts[it / n->ncols], tc, &r->cols[c]);
		}
		r->nrows = total;
	}
	for (uint32_t t = 0; t < nt; t++) {
		free(parts[t].keep);
		stg_plainbuf_free(&parts[t].pb);
	}
	free(parts);
	if (rc) {
		rel_free(r);
		return rc;
	}
	*out = r;
	return GPMDB_OK;
}

int exec_scan_table(exec_ctx *x, pnode *n, rel **out)
{
	return exec_scan(x, n, out);
}

int rel_gather_rows(rel *dst, const rel *src, const uint32_t *idx, uint64_t m)
{
	return rel_gather(dst, src, idx, m);
}

/* ---- filter ---- */

/* Appends to dst the row numbers s + i of the n rows of v that are true;
 * returns how many. */
uint32_t exec_filter_true(const vec *v, uint32_t n, uint64_t s, uint32_t *dst)
{
	uint32_t k = 0;

	if (v->type == VEC_NULL)
		return 0;
	if (v->type == BC_COL_BOOL &&
	    !v->sel) { /* the usual case, branchless */
		const uint8_t *b = v->v.u8, *nl = v->nulls;
		if (nl)
			for (uint32_t i = 0; i < n; i++) {
				dst[k] = (uint32_t)(s + i);
				k += (b[i] != 0) & (nl[i] == 0);
			}
		else
			for (uint32_t i = 0; i < n; i++) {
				dst[k] = (uint32_t)(s + i);
				k += b[i] != 0;
			}
		return k;
	}
	for (uint32_t i = 0; i < n; i++) {
		uint32_t j = v->sel ? v->sel[i] : i;
		bool t;
		if (v->nulls && v->nulls[j])
			continue;
		switch (v->type) {
		case BC_COL_BOOL:
			t = v->v.u8[j];
			break;
		case BC_COL_INT64:
			t = v->v.i64[j] != 0;
			break;
		case BC_COL_DOUBLE:
			t = v->v.f64[j] != 0;
			break;
		default:
			t = false;
		}
		if (t)
			dst[k++] = (uint32_t)(s + i);
	}
	return k;
}

/* Inputs smaller than this many batches are evaluated on one thread: a
 * parallel region costs more than a few batches. */
#define PAR_MIN_BATCHES 8

/* Runs fn(x, c, in, batch, arg) over the batches of in on all threads with
 * one VM scratch each.  The error reported is that of the first failing
 * batch, as a serial run would report it. */
typedef int (*par_batch_fn)(exec_ctx *x, uint64_t b, const vec *v, uint32_t n,
			    void *arg, char *err, size_t errlen);

static int par_batches(exec_ctx *x, const cexpr *c, const rel *in,
		       par_batch_fn fn, void *arg)
{
	uint64_t nb = (in->nrows + VEC_BATCH - 1) / VEC_BATCH;
	int nt = omp_get_max_threads();
	vm_scratch *scr = db_par_scratch(x->db, nt);
	uint64_t bad = UINT64_MAX; /* first failing batch */
	int bad_rc = GPMDB_OK;
	char bad_msg[256] = "";

	if (!scr)
		return db_err(x->db, GPMDB_NOMEM, "out of memory");
#pragma omp parallel num_threads(nt)
	{
		vm_scratch *sc = &scr[omp_get_thread_num()];
		char err[256];
#pragma omp for schedule(dynamic, 4)
		for (uint64_t b = 0; b < nb; b++) {
			uint64_t s = b * VEC_BATCH, seen;
			uint32_t n =
			    (uint32_t)(in->nrows - s < VEC_BATCH ? in->nrows - s
								 : VEC_BATCH);
			vec v;
			int rc;
#pragma omp atomic read
			seen = bad;
			if (b > seen)
				continue;
			rc =
			    cx_eval_pure(c, in, s, n, &v, sc, err, sizeof(err));
			if (!rc)
				rc = fn(x, b, &v, n, arg, err, sizeof(err));
			if (rc) {
#pragma omp critical(par_batches_err)
				if (b < bad) {
					bad = b;
					bad_rc = rc;
					snprintf(bad_msg, sizeof(bad_msg), "%s",
						 err);
				}
			}
		}
	}
	if (bad == UINT64_MAX)
		return GPMDB_OK;
	if (bad_rc == GPMDB_MISUSE)
		bad_rc = GPMDB_INTERNAL;
	return db_err(x->db, bad_rc, "%s",
		      bad_msg[0] ? bad_msg : "expression failed");
}

typedef struct filter_par {
	uint32_t *sel;
	uint32_t *cnt; /* matches per batch, at sel + batch * VEC_BATCH */
} filter_par;

static int filter_batch(exec_ctx *x, uint64_t b, const vec *v, uint32_t n,
			void *arg, char *err, size_t errlen)
{
	filter_par *fp = arg;
	uint64_t s = b * VEC_BATCH;

	(void)x;
	(void)err;
	(void)errlen;
	fp->cnt[b] = exec_filter_true(v, n, s, fp->sel + s);
	return GPMDB_OK;
}

static int filter_rows(exec_ctx *x, cexpr *c, const rel *in, uint32_t **idx,
		       uint64_t *m)
{
	uint32_t *sel = malloc(sizeof(uint32_t) * (in->nrows + 1));
	uint64_t k = 0, nb = (in->nrows + VEC_BATCH - 1) / VEC_BATCH;
	int rc;

	if (!sel)
		return db_err(x->db, GPMDB_NOMEM, "out of memory");
	if (nb >= PAR_MIN_BATCHES && omp_get_max_threads() > 1 && cx_pure(c)) {
		filter_par fp = {sel, calloc(nb, sizeof(uint32_t))};
		if (!fp.cnt) {
			free(sel);
			return db_err(x->db, GPMDB_NOMEM, "out of memory");
		}
		rc = par_batches(x, c, in, filter_batch, &fp);
		for (uint64_t b = 0; !rc && b < nb; b++) {
			memmove(sel + k, sel + b * VEC_BATCH,
				sizeof(uint32_t) * fp.cnt[b]);
			k += fp.cnt[b];
		}
		free(fp.cnt);
		if (rc) {
			free(sel);
			return rc;
		}
		*idx = sel;
		*m = k;
		return GPMDB_OK;
	}
	for (uint64_t s = 0; s < in->nrows; s += VEC_BATCH) {
		uint32_t n =
		    (uint32_t)(in->nrows - s < VEC_BATCH ? in->nrows - s
							 : VEC_BATCH);
		vec v;
		if ((rc = cx_eval(x, c, in, s, n, &v))) {
			free(sel);
			return rc;
		}
		k += exec_filter_true(&v, n, s, sel + k);
	}
	*idx = sel;
	*m = k;
	return GPMDB_OK;
}

/*
 * A correlated subquery runs its plan once per outer row.  A FILTER over
 * a table SCAN in it keeps the scan for the whole execution of the
 * statement (the table cannot change while a statement reads it), and
 * when its predicate has a conjunct inner_column = outer_column (both
 * INTEGER), a hash of the scan on that column: each run then filters
 * only the rows whose key equals the outer value, instead of copying
 * and filtering the whole table (TPC-H Q4, Q21: EXISTS on lineitem per
 * order).  The full predicate still decides, so the hash only has to
 * find every row where the equality can be true.
 */
typedef struct corr_cache {
	uint64_t gen;	/* the execution the scan and hash belong to */
	rel *scan;	/* held (stmt_add_hold) */
	int64_t *heads; /* nb buckets, then one link per scan row; -1 ends */
	uint64_t nb;
	int key;	 /* scan column of the key */
	ast_expr *outer; /* the outer column; NULL: no key, scan only */
} corr_cache;

/* The inner = outer INTEGER equality among the AND-ed terms of e. */
static ast_expr *corr_key(const pnode *scan, ast_expr *e, int *col)
{
	if (e->kind == AST_E_BINARY && e->op == AST_OP_AND) {
		ast_expr *o = corr_key(scan, e->l, col);
		return o ? o : corr_key(scan, e->r, col);
	}
	if (e->kind != AST_E_BINARY || e->op != AST_OP_EQ)
		return NULL;
	for (int side = 0; side < 2; side++) {
		ast_expr *in = side ? e->r : e->l, *o = side ? e->l : e->r;
		if (in->kind != AST_E_COLUMN || in->rel != 0 ||
		    o->kind != AST_E_COLUMN || o->rel <= 0 ||
		    expr_type(in).t != BC_T_INT || expr_type(o).t != BC_T_INT)
			continue;
		for (int k = 0; k < scan->ncols; k++)
			if (scan->g[k] == in->col &&
			    scan->ty[k].t == BC_T_INT) {
				*col = k;
				return o;
			}
	}
	return NULL;
}

/* The outer row's value of o, found as compile.c's frame_vec finds it
 * for the predicate; false when it cannot be found there. */
static bool corr_outer(exec_ctx *x, const ast_expr *o, sval *v)
{
	const frame *f;

	if (o->rel > x->nframes)
		return false;
	f = &x->frames[x->nframes - o->rel];
	for (int k = 0; k < f->node->ncols; k++)
		if (f->node->g[k] == o->col) {
			rel_get(f->r, k, f->row, v);
			return true;
		}
	return false;
}

bool exec_outer_value(exec_ctx *x, const ast_expr *o, sval *v)
{
	return o->kind == AST_E_COLUMN && o->rel > 0 && corr_outer(x, o, v);
}

static uint64_t corr_bucket(int64_t v, uint64_t nb)
{
	uint64_t h = exec_hash_mix(0, (uint64_t)v);
	return (h ^ (h >> 31)) & (nb - 1);
}

static int corr_build(exec_ctx *x, pnode *n, corr_cache *cc)
{
	rel *scan, *h;
	etype ti = et_make(BC_T_INT);
	int rc;

	cc->scan = NULL;
	cc->heads = NULL;
	if ((rc = exec_node(x, n->l, &scan)))
		return rc;
	if ((rc = stmt_add_hold(x->st, scan))) {
		rel_free(scan);
		return rc;
	}
	cc->scan = scan;
	cc->gen = x->gen;
	if (!cc->outer)
		return GPMDB_OK;
	for (cc->nb = 16; cc->nb < scan->nrows; cc->nb *= 2)
		;
	if (!(h = rel_new(x, 1, &ti)))
		return x->db->errcode;
	if ((rc = stmt_add_hold(x->st, h))) {
		rel_free(h);
		return rc;
	}
	if ((rc = rel_reserve(h, cc->nb + scan->nrows)))
		return rc;
	h->nrows = cc->nb + scan->nrows;
	cc->heads = h->cols[0].data;
	for (uint64_t b = 0; b < cc->nb; b++)
		cc->heads[b] = -1;
	/* linked from the last row up, so each chain is in scan order */
	const rcol *k = &scan->cols[cc->key];
	int64_t *next = cc->heads + cc->nb;
	for (uint64_t i = scan->nrows; i-- > 0;) {
		next[i] = -1;
		if (k->nulls[i])
			continue;
		uint64_t b = corr_bucket(((int64_t *)k->data)[i], cc->nb);
		next[i] = cc->heads[b];
		cc->heads[b] = (int64_t)i;
	}
	return GPMDB_OK;
}

static int filter_corr(exec_ctx *x, pnode *n, rel **out)
{
	corr_cache *cc = n->corr;
	rel *in, *cand = NULL;
	cexpr *c;
	uint32_t *idx = NULL;
	uint64_t m = 0;
	sval v;
	int rc;

	if (!cc) {
		cc = calloc(1, sizeof(*cc));
		if (!cc || stmt_own(x->st, cc)) {
			free(cc);
			return db_err(x->db, GPMDB_NOMEM, "out of memory");
		}
		cc->outer = corr_key(n->l, n->pred, &cc->key);
		n->corr = cc;
	}
	if ((cc->gen != x->gen || !cc->scan) && (rc = corr_build(x, n, cc)))
		return rc;
	in = cc->scan;
	if (cc->heads && corr_outer(x, cc->outer, &v)) {
		/* the rows whose key equals the outer value */
		const rcol *k = &cc->scan->cols[cc->key];
		const int64_t *next = cc->heads + cc->nb;
		uint32_t *cidx = NULL;
		uint64_t cm = 0, ccap = 0;
		if (v.t == BC_T_INT)
			for (int64_t i = cc->heads[corr_bucket(v.u.i, cc->nb)];
			     i >= 0; i = next[i]) {
				if (((int64_t *)k->data)[i] != v.u.i)
					continue;
				if (cm == ccap) {
					ccap = ccap ? ccap * 2 : 16;
					uint32_t *ni = realloc(
					    cidx, sizeof(uint32_t) * ccap);
					if (!ni) {
						free(cidx);
						return db_err(x->db,
							      GPMDB_NOMEM,
							      "out of memory");
					}
					cidx = ni;
				}
				cidx[cm++] = (uint32_t)i;
			}
		cand = exec_rel_like(x, n->l);
		rc = cand ? rel_gather(cand, cc->scan, cidx, cm)
			  : x->db->errcode;
		free(cidx);
		if (rc) {
			rel_free(cand);
			return rc;
		}
		in = cand;
	}
	if ((rc = exec_node_cx(x, n, 0, n->pred, n->post, n->l, &c)) ||
	    (rc = filter_rows(x, c, in, &idx, &m))) {
		rel_free(cand);
		return rc;
	}
	if (cand && m == cand->nrows) {
		free(idx);
		*out = cand;
		return GPMDB_OK;
	}
	rc = exec_gather_out(x, n, in, idx, m, out);
	rel_free(cand);
	return rc;
}

int exec_filter(exec_ctx *x, pnode *n, rel **out)
{
	rel *in;
	cexpr *c;
	uint32_t *idx = NULL;
	uint64_t m = 0;
	int rc;

	if (x->corr && n->l->kind == PN_SCAN && !n->post)
		return filter_corr(x, n, out);
	if ((rc = exec_node(x, n->l, &in)))
		return rc;
	if ((rc = exec_node_cx(x, n, 0, n->pred, n->post, n->l, &c)) ||
	    (rc = filter_rows(x, c, in, &idx, &m))) {
		rel_free(in);
		return rc;
	}
	if (m == in->nrows) {
		free(idx);
		*out = in;
		return GPMDB_OK;
	}
	rc = exec_gather_out(x, n, in, idx, m, out);
	rel_free(in);
	return rc;
}

/* ---- project ---- */

/* The input column a plain reference reads, or -1. */
int exec_plain_col(const pnode *n, const ast_expr *e, bool post)
{
	const einfo *in = e->bind;

	if (post)
		return in && in->post_col >= 0 &&
			       n->l->ty[in->post_col].t == expr_type(e).t
			   ? in->post_col
			   : -1;
	if (e->kind != AST_E_COLUMN || e->rel != 0)
		return -1;
	for (int k = 0; k < n->l->ncols; k++)
		if (n->l->g[k] == e->col)
			return k;
	return -1;
}

typedef struct project_par {
	rel *r;
	int col;
} project_par;

/* Stores one batch of a projection.  Non-TEXT output columns only: the
 * common case copies arrays into the batch's own rows; a conversion
 * (which may set the connection's error) is serialised. */
static int project_batch(exec_ctx *x, uint64_t b, const vec *v, uint32_t n,
			 void *arg, char *err, size_t errlen)
{
	project_par *pp = arg;
	const rcol *d = &pp->r->cols[pp->col];
	int rc;

	if (v->type == rel_vec_type(d->ty.t) && !v->sel &&
	    (v->type != BC_COL_DEC || v->scale == d->ty.scale))
		return rel_put_vec(pp->r, pp->col, b * VEC_BATCH, v, n);
#pragma omp critical(project_batch_convert)
	{
		rc = rel_put_vec(pp->r, pp->col, b * VEC_BATCH, v, n);
		if (rc)
			snprintf(err, errlen, "%s", x->db->errmsg);
	}
	return rc;
}

/* Evaluates c over every row of in into column col of dst (room
 * reserved): batches on all threads when c reads only its input and
 * stores no text. */
int exec_eval_into(exec_ctx *x, cexpr *c, const rel *in, rel *dst, int col)
{
	int rc;

	if (in->nrows >= PAR_MIN_BATCHES * (uint64_t)VEC_BATCH &&
	    omp_get_max_threads() > 1 && cx_pure(c) &&
	    dst->cols[col].ty.t != BC_T_TEXT) {
		project_par pp = {dst, col};
		return par_batches(x, c, in, project_batch, &pp);
	}
	for (uint64_t s = 0; s < in->nrows; s += VEC_BATCH) {
		uint32_t m =
		    (uint32_t)(in->nrows - s < VEC_BATCH ? in->nrows - s
							 : VEC_BATCH);
		vec v;
		if ((rc = cx_eval(x, c, in, s, m, &v)) ||
		    (rc = rel_put_vec(dst, col, s, &v, m)))
			return rc;
	}
	return GPMDB_OK;
}

int exec_project(exec_ctx *x, pnode *n, rel **out)
{
	rel *in, *r;
	int rc;

	if ((rc = exec_node(x, n->l, &in)))
		return rc;
	r = exec_rel_like(x, n);
	if (!r || (rc = rel_reserve(r, in->nrows)))
		goto fail;
	for (int i = 0; i < n->nexprs; i++) {
		ast_expr *e = n->exprs[i];
		int pc = exec_plain_col(n, e, n->post);
		rcol *d = &r->cols[i];

		if (pc >= 0 && in->cols[pc].ty.t == d->ty.t &&
		    in->cols[pc].ty.scale == d->ty.scale) {
			const rcol *s = &in->cols[pc];
			if (!in->nrows)
				continue;
			size_t w = rel_width(d->ty.t);
			memcpy(d->data, s->data, in->nrows * w);
			memcpy(d->nulls, s->nulls, in->nrows);
			if (d->ty.t == BC_T_TEXT)
				for (uint64_t k = 0; k < in->nrows; k++) {
					vec_str *v = &((vec_str *)d->data)[k];
					if (!d->nulls[k] &&
					    (rc =
						 rel_str(r, v->ptr, v->len, v)))
						goto fail;
				}
			continue;
		}
		cexpr *c;
		if ((rc = exec_node_cx(x, n, i, e, n->post, n->l, &c)) ||
		    (rc = exec_eval_into(x, c, in, r, i)))
			goto fail;
	}
	r->nrows = in->nrows;
	rel_free(in);
	*out = r;
	return GPMDB_OK;
fail:
	rel_free(in);
	rel_free(r);
	return rc ? rc : x->db->errcode;
}

/* ---- values ---- */

/* A parameter's value as compile.c's param() compiles it (INT, REAL,
 * TEXT, else NULL): INSERT ... VALUES (?, ...) then costs no program per
 * value (loading TPC-H through prepared INSERTs spent most of its time
 * compiling one-value programs). */
static bool param_sval(const exec_ctx *x, const ast_expr *e, sval *v)
{
	const gpmdb_stmt *st = x->st;

	if (e->kind != AST_E_PARAM)
		return false;
	memset(v, 0, sizeof(*v));
	v->t = BC_T_NULL;
	if (st && e->ival >= 1 && e->ival <= st->nparams) {
		const sval *p = &st->params[e->ival - 1];
		if (p->t == BC_T_INT || p->t == BC_T_REAL || p->t == BC_T_TEXT)
			*v = *p;
	}
	return true;
}

int exec_scalar(exec_ctx *x, ast_expr *e, sval *v, rel *hold)
{
	static const pnode none = {.kind = PN_ONE};
	rel *one;
	cexpr *c;
	vec out;
	int rc;

	if (exec_literal(e, v) || param_sval(x, e, v)) {
		if (v->t == BC_T_TEXT && hold)
			return rel_str(hold, v->u.s.ptr, v->u.s.len, &v->u.s);
		return GPMDB_OK;
	}
	if (!(one = rel_new(x, 0, NULL)))
		return x->db->errcode;
	one->nrows = 1;
	if ((rc = cx_compile(x, e, &none, false, &c))) {
		rel_free(one);
		return rc;
	}
	rc = cx_eval(x, c, one, 0, 1, &out);
	if (!rc) {
		etype t = c->ty;
		rel *tmp = rel_new(x, 1, &t);
		if (!tmp || rel_reserve(tmp, 1) ||
		    (rc = rel_put_vec(tmp, 0, 0, &out, 1))) {
			rc = rc ? rc : x->db->errcode;
		} else {
			rel_get(tmp, 0, 0, v);
			if (v->t == BC_T_TEXT && hold)
				rc = rel_str(hold, v->u.s.ptr, v->u.s.len,
					     &v->u.s);
			else if (v->t == BC_T_TEXT)
				rc = db_err(x->db, GPMDB_INTERNAL,
					    "text value without storage");
		}
		rel_free(tmp);
	}
	cx_free(c);
	rel_free(one);
	return rc;
}

int exec_values(exec_ctx *x, pnode *n, rel **out)
{
	rel *r = exec_rel_like(x, n);
	int rc;

	if (!r || (rc = rel_reserve(r, (uint64_t)n->nrows)))
		goto fail;
	for (int i = 0; i < n->nrows; i++) {
		for (int c = 0; c < n->ncols; c++) {
			const ast_expr *e = n->rows[i]->v[c];
			char lit[128];
			sval v;
			/* a decimal literal into a DECIMAL column: from its
			 * text, exactly (the REAL would round past 15 digits)
			 */
			if (n->ty[c].t == BC_T_DEC && e->kind == AST_E_REAL &&
			    e->str && e->slen + 2 < sizeof(lit)) {
				snprintf(lit, sizeof(lit), "%s%.*s",
					 signbit(e->rval) ? "-" : "",
					 (int)e->slen, e->str);
				memset(&v, 0, sizeof(v));
				v.t = BC_T_TEXT;
				v.u.s.ptr = lit;
				v.u.s.len = (uint32_t)strlen(lit);
				if ((rc =
					 sval_convert(x, &v, n->ty[c], 0, r)) ||
				    (rc = rel_set(r, c, (uint64_t)i, &v)))
					goto fail;
				continue;
			}
			if ((rc = exec_scalar(x, n->rows[i]->v[c], &v, r)) ||
			    (rc = sval_convert(x, &v, n->ty[c], 0, r)) ||
			    (rc = rel_set(r, c, (uint64_t)i, &v)))
				goto fail;
		}
	}
	r->nrows = (uint64_t)n->nrows;
	*out = r;
	return GPMDB_OK;
fail:
	rel_free(r);
	return x->db->errcode ? x->db->errcode : GPMDB_NOMEM;
}

/* ---- sort, distinct, limit, set operations ---- */

typedef struct sortctx {
	const rel *r;
	const pnode *n;
} sortctx;

static int sort_cmp(const void *a, const void *b, void *arg)
{
	const sortctx *s = arg;
	uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;

	for (int k = 0; k < s->n->nsort; k++) {
		sval x, y;
		int c = s->n->sort_col[k], d;
		rel_get(s->r, c, i, &x);
		rel_get(s->r, c, j, &y);
		if (x.t == BC_T_NULL || y.t == BC_T_NULL) {
			if (x.t == y.t)
				continue;
			d = x.t == BC_T_NULL ? -1 : 1;
			if (!s->n->nulls_first[k])
				d = -d;
			return d;
		}
		d = sval_cmp(&x, &y);
		if (d)
			return s->n->desc[k] ? -d : d;
	}
	return i < j ? -1 : i > j; /* stable */
}

/* exec_sortkey: sort_cmp's order compared without rel_get and sval_cmp,
 * which took most of a sort's time. */
typedef exec_sortkey sortkey;

static int sortkey_cmp(const void *a, const void *b)
{
	const sortkey *p = a, *q = b;

	if (p->rank != q->rank)
		return p->rank < q->rank ? -1 : 1;
	if (p->key != q->key)
		return p->key < q->key ? -1 : 1;
	return p->row < q->row ? -1 : p->row > q->row; /* stable */
}

static void sortkey_make(const rcol *c, const pnode *n, uint64_t i, sortkey *k)
{
	uint64_t u;

	k->row = (uint32_t)i;
	if (c->nulls[i]) {
		k->rank = n->nulls_first[0] ? 0 : 2;
		k->key = 0;
		return;
	}
	if (c->ty.t == BC_T_REAL) {
		/* IEEE order as unsigned: flip negatives, set the sign of
		 * positives; -0.0 is 0.0 as sval_cmp has it. */
		double d = ((const double *)c->data)[i];
		if (d == 0)
			d = 0;
		memcpy(&u, &d, sizeof(u));
		u = u >> 63 ? ~u : u | 1ull << 63;
	} else {
		/* DEC: one column has one scale. */
		u = (uint64_t)((const int64_t *)c->data)[i] ^ 1ull << 63;
	}
	k->rank = 1;
	k->key = n->desc[0] ? ~u : u;
}

/* Max-heap (by sortkey_cmp) of the keep smallest keys: sift h[i] down. */
static void sortkey_sift(sortkey *h, uint64_t m, uint64_t i)
{
	for (;;) {
		uint64_t l = 2 * i + 1, big = i;
		if (l < m && sortkey_cmp(&h[l], &h[big]) > 0)
			big = l;
		if (l + 1 < m && sortkey_cmp(&h[l + 1], &h[big]) > 0)
			big = l + 1;
		if (big == i)
			return;
		sortkey t = h[i];
		h[i] = h[big];
		h[big] = t;
		i = big;
	}
}

/* Rows [a, z) into a max-heap h of the keep smallest keys; returns how
 * many it holds. */
static uint64_t sortkey_heap(const rcol *c, const pnode *n, uint64_t a,
			     uint64_t z, uint64_t keep, sortkey *h)
{
	uint64_t nk = 0;

	for (uint64_t i = a; i < z; i++) {
		sortkey t;
		sortkey_make(c, n, i, &t);
		if (nk < keep) {
			/* heap insert: sift up */
			uint64_t j = nk++;
			h[j] = t;
			while (j && sortkey_cmp(&h[(j - 1) / 2], &h[j]) < 0) {
				sortkey u = h[j];
				h[j] = h[(j - 1) / 2];
				h[(j - 1) / 2] = u;
				j = (j - 1) / 2;
			}
		} else if (sortkey_cmp(&t, &h[0]) < 0) {
			h[0] = t;
			sortkey_sift(h, nk, 0);
		}
	}
	return nk;
}

/* Inputs from this many rows keep a heap per thread. */
#define PAR_TOPN_MIN 65536

/* The first min(keep, rows) rows of in in the order of n when n sorts by
 * one numeric column: their row numbers into idx, the count into *m.
 * False (nothing done) for other sorts or without memory, which then take
 * the general path.  A small keep (LIMIT) keeps a heap of that many keys
 * instead of sorting every row. */
static void exec_par_sort(void *base, size_t n, size_t size,
			  int (*cmp)(const void *, const void *, void *),
			  void *arg);
static int sortkey_cmp_r(const void *a, const void *b, void *arg);

static bool sort_one_number(const rel *in, const pnode *n, uint64_t keep,
			    uint32_t *idx, uint64_t *m)
{
	const rcol *c;
	sortkey *k;
	uint64_t nk = 0;
	bool sorted = false;

	if (n->nsort != 1)
		return false;
	c = &in->cols[n->sort_col[0]];
	if (c->ty.t != BC_T_INT && c->ty.t != BC_T_DEC && c->ty.t != BC_T_REAL)
		return false;
	if (keep > in->nrows)
		keep = in->nrows;
	if (!(k = malloc(sizeof(sortkey) * (keep + 1))))
		return false;
	if (keep == in->nrows) {
		/* every row: in row order, so that the radix sort's
		 * stability is sortkey_cmp's order by row */
#pragma omp parallel for schedule(static) if (in->nrows >= PAR_TOPN_MIN)
		for (uint64_t i = 0; i < in->nrows; i++)
			sortkey_make(c, n, i, &k[i]);
		nk = in->nrows;
		sorted = exec_radix_sort(k, nk);
	} else if (keep > 0) {
		/* a heap per thread over its share of the rows, then the
		 * heaps' union sorted: the order is total (ties by row), so
		 * the keep smallest are the serial pass's exactly */
		int nt = in->nrows >= PAR_TOPN_MIN ? omp_get_max_threads() : 1;
		sortkey *all =
		    nt > 1 ? malloc(sizeof(sortkey) * keep * (size_t)nt) : NULL;
		uint64_t *cnt = nt > 1 ? calloc((size_t)nt, 8) : NULL;
		if (nt > 1 && (!all || !cnt)) {
			free(all);
			free(cnt);
			all = NULL;
			cnt = NULL;
			nt = 1;
		}
#pragma omp parallel num_threads(nt) if (nt > 1)
		{
			int t = omp_get_thread_num(),
			    tn = omp_get_num_threads();
			sortkey *h = nt > 1 ? all + (size_t)t * keep : k;
			uint64_t a = in->nrows * (uint64_t)t / (uint64_t)tn,
				 z = in->nrows * (uint64_t)(t + 1) /
				     (uint64_t)tn,
				 hn = sortkey_heap(c, n, a, z, keep, h);
			if (nt > 1)
				cnt[t] = hn;
			else
				nk = hn;
		}
		if (nt > 1) {
			/* thread t's heap is at all + t * keep: pack, sort,
			 * keep the first */
			uint64_t tot = 0;
			for (int t = 0; t < nt; t++) {
				memmove(all + tot, all + (size_t)t * keep,
					sizeof(sortkey) * cnt[t]);
				tot += cnt[t];
			}
			qsort(all, tot, sizeof(sortkey), sortkey_cmp);
			nk = tot < keep ? tot : keep;
			memcpy(k, all, sizeof(sortkey) * nk);
			free(all);
			free(cnt);
		}
	}
	if (!sorted)
		exec_par_sort(k, nk, sizeof(sortkey), sortkey_cmp_r, NULL);
	for (uint64_t i = 0; i < nk; i++)
		idx[i] = k[i].row;
	*m = nk;
	free(k);
	return true;
}

/* Inputs smaller than this sort on one thread. */
#define PAR_SORT_MIN 32768

typedef int (*sort_cmp_fn)(const void *, const void *, void *);

static int sortkey_cmp_r(const void *a, const void *b, void *arg)
{
	(void)arg;
	return sortkey_cmp(a, b);
}

/*
 * qsort_r on all threads: each sorts a contiguous run, then runs are
 * merged pairwise.  cmp must be a total order (the comparators here end
 * with the row number), so the result is the serial sort's exactly.
 * Without the memory for the merge buffer it sorts on one thread.
 */
static void exec_par_sort(void *base, size_t n, size_t size, sort_cmp_fn cmp,
			  void *arg)
{
	int nt = omp_get_max_threads();
	char *a = base, *tmp;
	size_t run;

	if (n < PAR_SORT_MIN || nt < 2 || !(tmp = malloc(n * size))) {
		qsort_r(base, n, size, cmp, arg);
		return;
	}
	run = (n + (size_t)nt - 1) / (size_t)nt;
#pragma omp parallel for num_threads(nt) schedule(static, 1)
	for (int t = 0; t < nt; t++) {
		size_t lo = (size_t)t * run;
		if (lo < n)
			qsort_r(a + lo * size, (lo + run < n ? run : n - lo),
				size, cmp, arg);
	}
	/* merge runs of width run, 2 run, ... between a and tmp */
	char *src = a, *dst = tmp;
	for (size_t w = run; w < n; w *= 2) {
		long npairs = (long)((n + 2 * w - 1) / (2 * w));
#pragma omp parallel for num_threads(nt) schedule(dynamic, 1)
		for (long pi = 0; pi < npairs; pi++) {
			size_t lo = (size_t)pi * 2 * w;
			size_t mid = lo + w < n ? lo + w : n;
			size_t hi = lo + 2 * w < n ? lo + 2 * w : n;
			size_t i = lo, j = mid, k = lo;
			while (i < mid && j < hi) {
				if (cmp(src + j * size, src + i * size, arg) <
				    0)
					memcpy(dst + k++ * size,
					       src + j++ * size, size);
				else
					memcpy(dst + k++ * size,
					       src + i++ * size, size);
			}
			memcpy(dst + k * size, src + i * size,
			       (mid - i) * size);
			k += mid - i;
			memcpy(dst + k * size, src + j * size, (hi - j) * size);
		}
		char *t = src;
		src = dst;
		dst = t;
	}
	if (src != a)
		memcpy(a, src, n * size);
	free(tmp);
}

uint64_t exec_sort_idx(const rel *in, const pnode *n, uint64_t keep,
		       uint32_t *idx)
{
	uint64_t m;

	if (!sort_one_number(in, n, keep, idx, &m)) {
		for (uint64_t i = 0; i < in->nrows; i++)
			idx[i] = (uint32_t)i;
		sortctx sc = {in, n};
		exec_par_sort(idx, in->nrows, sizeof(uint32_t), sort_cmp, &sc);
		m = keep < in->nrows ? keep : in->nrows;
	}
	return m;
}

/* ORDER BY; its rows [want.skip, want.keep) (a LIMIT above it; EXEC_ALL:
 * all). */
int exec_sort_top(exec_ctx *x, pnode *n, exec_rows want, rel **out)
{
	rel *in;
	uint32_t *idx;
	uint64_t m, skip;
	int rc;

	/* a top-N of a pipeline: its threads keep their candidates only
	 * (pipe.c), in input order; else the whole input */
	if (want.keep != UINT64_MAX &&
	    (rc = pipe_run_topn(x, n, want.keep, &in)) != PIPE_DECLINE) {
		if (rc)
			goto spill;
	} else if ((rc = exec_node(x, n->l, &in))) {
		goto spill;
	}
	idx = malloc(sizeof(uint32_t) * (in->nrows + 1));
	if (!idx) {
		rel_free(in);
		return db_err(x->db, GPMDB_NOMEM, "out of memory");
	}
	m = exec_sort_idx(in, n, want.keep, idx);
	skip = want.skip < m ? want.skip : m;
	memmove(idx, idx + skip, sizeof(uint32_t) * (m - skip));
	rc = exec_gather_out(x, n, in, idx, m - skip, out);
	rel_free(in);
spill:
	/* past the memory limit: sorted runs in a temporary file */
	if (!spill_over(x, rc))
		return rc;
	return spill_sort(x, n, want, out);
}

/* Keeps the first of equal rows (over the first ncols columns) of in;
 * with probe: only rows found (want = true) / not found in probe. */
static int dedup(exec_ctx *x, rel *in, int ncols, const rel *probe, bool want,
		 const pnode *n, rel **out)
{
	htab h, ph;
	rel *r = exec_rel_like(x, n);
	uint32_t *keep = malloc(sizeof(uint32_t) * (in->nrows + 1));
	uint32_t *first = malloc(sizeof(uint32_t) * (in->nrows + 1));
	uint64_t m = 0;
	int rc;

	if (!r || !keep || !first) {
		free(keep);
		free(first);
		rel_free(r);
		return db_err(x->db, GPMDB_NOMEM, "out of memory");
	}
	if ((rc = exec_ht_init(x, &h, in->nrows)))
		goto out;
	if (probe) {
		if ((rc = exec_ht_init(x, &ph, probe->nrows))) {
			exec_ht_free(x, &h);
			goto out;
		}
		for (uint64_t i = 0; i < probe->nrows; i++)
			if ((rc = exec_ht_add(x, &ph,
					      exec_hash_row(probe, ncols, i))))
				goto done;
	}
	for (uint64_t i = 0; i < in->nrows; i++) {
		uint64_t hv = exec_hash_row(in, ncols, i);
		int64_t e;
		for (e = exec_ht_first(&h, hv); e >= 0; e = h.next[e])
			if (h.hash[e] == hv &&
			    exec_rows_eq(in, first[e], in, i, ncols))
				break;
		if (e >= 0)
			continue;
		first[h.n] = (uint32_t)i;
		if ((rc = exec_ht_add(x, &h, hv)))
			goto done;
		if (probe) {
			bool found = false;
			for (e = exec_ht_first(&ph, hv); e >= 0 && !found;
			     e = ph.next[e])
				if (ph.hash[e] == hv &&
				    exec_rows_eq(probe, (uint64_t)e, in, i,
						 ncols))
					found = true;
			if (found != want)
				continue;
		}
		keep[m++] = (uint32_t)i;
	}
	rc = rel_gather(r, in, keep, m);
done:
	exec_ht_free(x, &h);
	if (probe)
		exec_ht_free(x, &ph);
out:
	free(keep);
	free(first);
	if (rc) {
		rel_free(r);
		return rc;
	}
	*out = r;
	return GPMDB_OK;
}

int exec_distinct(exec_ctx *x, pnode *n, rel **out)
{
	rel *in;
	int rc;

	if ((rc = exec_node(x, n->l, &in)))
		return rc;
	rc = dedup(x, in, n->nvis, NULL, false, n, out);
	rel_free(in);
	return rc;
}

int exec_limit_value(exec_ctx *x, ast_expr *e, int64_t *v)
{
	sval s;
	int rc;

	if ((rc = exec_scalar(x, e, &s, NULL)))
		return rc;
	if (s.t == BC_T_REAL)
		s.u.i = (int64_t)s.u.r;
	else if (s.t != BC_T_INT && s.t != BC_T_BOOL && s.t != BC_T_DEC)
		return db_err(x->db, GPMDB_MISMATCH,
			      "datatype mismatch: "
			      "LIMIT and OFFSET take "
			      "integers");
	*v = s.u.i;
	return GPMDB_OK;
}

int exec_limit(exec_ctx *x, pnode *n, rel **out)
{
	int64_t lim = -1, off = 0;
	rel *in = NULL;
	int rc;

	if ((rc = exec_limit_value(x, n->limit, &lim)) ||
	    (n->offset && (rc = exec_limit_value(x, n->offset, &off))))
		return rc;
	if (off < 0)
		off = 0;
	/* ORDER BY ... LIMIT read from an index in order: only the rows
	 * wanted are read (-1: not that plan) */
	rc = exec_index_limit(x, n,
			      lim >= 0 && (uint64_t)lim <
					      UINT64_MAX / 2 - (uint64_t)off
				  ? lim + off
				  : -1,
			      &in);
	if (rc != -1) {
		if (rc)
			return rc;
	} else {
		/* over a SORT: only its rows from OFFSET to LIMIT + OFFSET
		 * (each implementation of SORT leaves out the others) */
		exec_rows want = EXEC_ALL;
		if (n->l->kind == PN_SORT) {
			want.skip = (uint64_t)off;
			if (lim >= 0 &&
			    (uint64_t)lim < UINT64_MAX / 2 - (uint64_t)off)
				want.keep = (uint64_t)(lim + off);
			off = 0;
		}
		if ((rc = exec_node_rows(x, n->l, want, &in)))
			return rc;
	}
	uint64_t from = (uint64_t)off > in->nrows ? in->nrows : (uint64_t)off;
	uint64_t cnt = in->nrows - from;
	if (lim >= 0 && (uint64_t)lim < cnt)
		cnt = (uint64_t)lim;
	if (from == 0 && cnt == in->nrows) {
		*out = in;
		return GPMDB_OK;
	}
	uint32_t *idx = malloc(sizeof(uint32_t) * (cnt + 1));
	if (!idx) {
		rel_free(in);
		return db_err(x->db, GPMDB_NOMEM, "out of memory");
	}
	for (uint64_t i = 0; i < cnt; i++)
		idx[i] = (uint32_t)(from + i);
	rc = exec_gather_out(x, n, in, idx, cnt, out);
	rel_free(in);
	return rc;
}

int exec_convert(exec_ctx *x, pnode *n, rel **out)
{
	rel *in, *r;
	int rc;

	if ((rc = exec_node(x, n->l, &in)))
		return rc;
	r = exec_rel_like(x, n);
	if (!r || (rc = rel_reserve(r, in->nrows)))
		goto fail;
	for (int c = 0; c < n->ncols; c++)
		for (uint64_t s = 0; s < in->nrows; s += VEC_BATCH) {
			uint32_t m =
			    (uint32_t)(in->nrows - s < VEC_BATCH ? in->nrows - s
								 : VEC_BATCH);
			vec v;
			rel_vec(in, c, s, &v);
			if (in->cols[c].ty.t == BC_T_NULL) {
				v.type = VEC_NULL;
				v.count = m;
			}
			if ((rc = rel_put_vec(r, c, s, &v, m)))
				goto fail;
		}
	r->nrows = in->nrows;
	rel_free(in);
	*out = r;
	return GPMDB_OK;
fail:
	rel_free(in);
	rel_free(r);
	return rc ? rc : x->db->errcode;
}

int exec_setop(exec_ctx *x, pnode *n, rel **out)
{
	rel *l, *r, *u;
	int rc;

	if ((rc = exec_node(x, n->l, &l)))
		return rc;
	if ((rc = exec_node(x, n->r, &r))) {
		rel_free(l);
		return rc;
	}
	switch (n->op) {
	case AST_UNION_ALL:
	case AST_UNION:
		u = exec_rel_like(x, n);
		rc = u ? rel_reserve(u, r->nrows) : x->db->errcode;
		for (uint64_t i = 0; !rc && i < l->nrows; i++)
			rc = rel_copy_row(u, l, i);
		for (uint64_t i = 0; !rc && i < r->nrows; i++)
			rc = rel_copy_row(u, r, i);
		if (!rc && n->op == AST_UNION) {
			rc = dedup(x, u, n->ncols, NULL, false, n, out);
			rel_free(u);
		} else if (!rc) {
			*out = u;
		} else {
			rel_free(u);
		}
		break;
	default:
		rc = dedup(x, l, n->ncols, r, n->op == AST_INTERSECT, n, out);
	}
	rel_free(l);
	rel_free(r);
	return rc;
}

static uint64_t exec_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void exec_span_begin(exec_ctx *x, exec_span *sp)
{
	sp->t0 = exec_now_ns();
	sp->kids = x->an_kid_ns;
	x->an_kid_ns = 0;
}

/* Ends the span begun by exec_span_begin: under EXPLAIN ANALYZE, adds the
 * run to n's figures (a failed run counts no rows); the time goes to the
 * parent's account of its children either way.  Returns the time. */
uint64_t exec_span_end(exec_ctx *x, pnode *n, const exec_span *sp, int rc,
		       const rel *out)
{
	uint64_t dt = exec_now_ns() - sp->t0;

	if (x->analyze) {
		n->an_calls++;
		n->an_ns += dt;
		n->an_self_ns += dt > x->an_kid_ns ? dt - x->an_kid_ns : 0;
		if (!rc && out)
			n->an_rows += out->nrows;
	}
	x->an_kid_ns = sp->kids + dt;
	return dt;
}

/* Ends a span whose node did not run after all (a GPU sort that fell
 * back): the nodes it ran still count as children of the running one. */
void exec_span_drop(exec_ctx *x, const exec_span *sp)
{
	x->an_kid_ns += sp->kids;
}

/* Runs node n (exec_op.c chooses its implementation); want: the rows of
 * a SORT a LIMIT above it wants (EXEC_ALL: all).  A node that ran GPU
 * operators of its own (not only in the nodes below it) adds its time,
 * less that of the nodes below it, to the connection's GPU time (PRAGMA
 * gpu_stats gpu_time_us, the shell's .timer). */
int exec_node_rows(exec_ctx *x, pnode *n, exec_rows want, rel **out)
{
	uint64_t kid_ns0 = x->kid_ns, kid_ops0 = x->kid_ops;
	uint64_t ops0 = x->db->gstat.gpu_ops, dt, kids, ops;
	exec_span sp;
	int rc;

	x->kid_ns = x->kid_ops = 0;
	exec_span_begin(x, &sp);
	if (!want.skip && want.keep == UINT64_MAX && n->vsh &&
	    exec_share_ok(n)) {
		/* a view used before in this execution: its rows */
		rc = exec_share_get(x, n, out);
		n->an_shared += !rc && x->analyze;
		if (rc == GPMDB_NOTFOUND &&
		    !(rc = exec_op_run(x, n, want, out)) &&
		    (rc = exec_share_put(x, n, *out))) {
			rel_free(*out);
			*out = NULL;
		}
	} else {
		rc = exec_op_run(x, n, want, out);
	}
	dt = exec_span_end(x, n, &sp, rc, *out);
	kids = x->kid_ns;
	ops = x->db->gstat.gpu_ops - ops0;
	if (ops > x->kid_ops)
		x->db->gstat.gpu_ns += dt > kids ? dt - kids : 0;
	x->kid_ns = kid_ns0 + dt;
	x->kid_ops = kid_ops0 + ops;
	return rc;
}

int exec_node(exec_ctx *x, pnode *n, rel **out)
{
	return exec_node_rows(x, n, EXEC_ALL, out);
}

/* ---- subqueries ---- */

static int set_cmp(const void *a, const void *b, void *arg)
{
	const rel *r = arg;
	sval x, y;

	rel_get(r, 0, *(const uint32_t *)a, &x);
	rel_get(r, 0, *(const uint32_t *)b, &y);
	return sval_cmp(&x, &y);
}

/* Sorts the subquery result's first column, NULLs dropped, into a new
 * relation; *has_null says whether there were any. */
static int make_set(exec_ctx *x, rel *r, rel **set, bool *has_null)
{
	uint32_t *idx = malloc(sizeof(uint32_t) * (r->nrows + 1));
	uint64_t m = 0;
	rel *s;
	int rc;

	*has_null = false;
	if (!idx)
		return db_err(x->db, GPMDB_NOMEM, "out of memory");
	for (uint64_t i = 0; i < r->nrows; i++) {
		if (r->cols[0].nulls[i] || r->cols[0].ty.t == BC_T_NULL)
			*has_null = true;
		else
			idx[m++] = (uint32_t)i;
	}
	qsort_r(idx, m, sizeof(uint32_t), set_cmp, r);
	s = rel_new(x, 1, &r->cols[0].ty);
	if (!s) {
		free(idx);
		return x->db->errcode;
	}
	/* only the first column matters */
	rel tmp = *r;
	tmp.ncols = 1;
	rc = rel_gather(s, &tmp, idx, m);
	free(idx);
	if (rc) {
		rel_free(s);
		return rc;
	}
	*set = s;
	return GPMDB_OK;
}

static int set_probe(const rel *set, bool has_null, const sval *v, etype lty,
		     sval *res)
{
	uint64_t lo = 0, hi = set->nrows;
	sval key = *v, y;

	res->t = BC_T_BOOL;
	if (set->nrows == 0 && !has_null) {
		res->u.i = 0;
		return 0;
	}
	if (v->t == BC_T_NULL) {
		res->t = BC_T_NULL;
		return 0;
	}
	/* a numeric column meets numeric-looking text: compare numbers */
	if (set->cols[0].ty.t == BC_T_TEXT && lty.aff == AFF_NUM &&
	    key.t != BC_T_TEXT) {
		/* handled by the caller's conversion; fall through */
	}
	while (lo < hi) {
		uint64_t mid = (lo + hi) / 2;
		rel_get(set, 0, mid, &y);
		int d = sval_cmp(&y, &key);
		if (d == 0) {
			res->u.i = 1;
			return 0;
		}
		if (d < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (has_null)
		res->t = BC_T_NULL;
	else
		res->u.i = 0;
	return 0;
}

/* One subquery result for a row: r is the subquery's output. */
static int sub_value(exec_ctx *x, ast_expr *e, rel *r, rel *set, bool has_null,
		     const vec *lhs, uint32_t i, rel *hold)
{
	sval v;

	memset(&v, 0, sizeof(v));
	switch (e->kind) {
	case AST_E_EXISTS:
		v.t = BC_T_BOOL;
		v.u.i = r->nrows > 0;
		break;
	case AST_E_SUBQUERY:
		if (r->nrows)
			rel_get(r, 0, 0, &v);
		else
			v.t = BC_T_NULL;
		break;
	default: {
		sval l;
		rel_vec_get(lhs, i, &l);
		if (l.t == BC_T_TEXT && set->cols[0].ty.t != BC_T_TEXT &&
		    set->cols[0].ty.t != BC_T_NULL &&
		    expr_type(e->l).aff == AFF_NONE) {
			/* no conversion: text never equals a number */
		}
		set_probe(set, has_null, &l, expr_type(e->l), &v);
	}
	}
	if (v.t != BC_T_NULL && v.t != hold->cols[0].ty.t) {
		int rc = sval_convert(x, &v, hold->cols[0].ty, 0, hold);
		if (rc)
			return rc;
	}
	return rel_set(hold, 0, i, &v);
}

int exec_subquery(exec_ctx *x, ast_expr *e, const vec *lhs, uint32_t n,
		  rel *hold)
{
	einfo *in = e->bind;
	frame *f = &x->frames[x->nframes];
	uint64_t base = f->row;
	rel *r = NULL, *set = NULL;
	bool has_null = false;
	/* EXPLAIN ANALYZE: a subquery's time stays in the self time of the
	 * operator evaluating it (its plan is shown under that operator) */
	uint64_t an_kids = x->an_kid_ns;
	int rc;

	hold->nrows = 0;
	vec_arena_reset(&hold->strs);
	if ((rc = rel_reserve(hold, n)))
		return rc;
	if (!in->correlated) {
		if (in->gen != x->gen || !in->hold) {
			x->nframes++;
			rc = exec_node(x, in->sub, &r);
			x->an_kid_ns = an_kids;
			x->nframes--;
			if (rc)
				return rc;
			if (e->kind == AST_E_IN_SELECT) {
				rc = make_set(x, r, &set, &has_null);
				rel_free(r);
				if (rc)
					return rc;
				r = set;
			}
			if ((rc = stmt_add_hold(x->st, r))) {
				rel_free(r);
				return rc;
			}
			in->hold = r;
			in->set_null = has_null;
			in->gen = x->gen;
		}
		for (uint32_t i = 0; i < n; i++)
			if ((rc = sub_value(x, e, in->hold, in->hold,
					    in->set_null, lhs, i, hold)))
				return rc;
		hold->nrows = n;
		return GPMDB_OK;
	}
	for (uint32_t i = 0; i < n; i++) {
		f->row = base + i;
		x->nframes++;
		x->corr++; /* filter_corr: keep scans across the rows */
		rc = exec_node(x, in->sub, &r);
		x->an_kid_ns = an_kids;
		x->corr--;
		x->nframes--;
		if (rc)
			return rc;
		if (e->kind == AST_E_IN_SELECT) {
			rc = make_set(x, r, &set, &has_null);
			rel_free(r);
			r = set;
			if (rc)
				return rc;
		}
		rc = sub_value(x, e, r, r, has_null, lhs, i, hold);
		rel_free(r);
		if (rc)
			return rc;
	}
	f->row = base;
	hold->nrows = n;
	return GPMDB_OK;
}
