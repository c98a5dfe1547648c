/*
 * exec_index.c - the index read operator (PN_ISCAN, planned by
 * plan_index.c).
 *
 * The node's key ranges are made from the current values of its
 * literals, parameters and outer columns (plan_index_ranges, with this
 * file's ixlate for what only the run knows); a cursor per
 * range gives the row ids (stg_icur_*), and only the columns of the node's
 * layout are gathered from the rows' tablets (one tablet view per tablet
 * touched, deleted rows skipped).  An unordered read sorts its row ids
 * first: the rows come in table order, as from a scan (a later sort's
 * ties, a DML's row order are then the same on both paths), duplicates
 * of overlapping IN ranges go, and the tablets are read forwards.  An
 * ordered read (ORDER BY ... LIMIT) keeps the key order and is pulled a
 * chunk at a time by the LIMIT above it (exec_index_limit).
 *
 * A value that cannot be a key of its column when the node runs makes
 * an unordered read scan the table (the filters above select the rows;
 * EXPLAIN ANALYZE counts these runs).  For an ordered read that would
 * lose the order: it is an error, and cannot happen today, since a
 * statement is planned again whenever its bindings change and the plan
 * checked the values it saw.
 */
#include "../engine.h"

#include <stdlib.h>
#include <string.h>

#include "../../storage/stg_gpu.h"

/* ---- the key values only the run knows (plan.h ixlate) ---- */

static int late_value(void *arg, const ast_expr *e, sval *v, rel **hold)
{
	exec_ctx *x = arg;

	if (e->kind == AST_E_COLUMN)
		return exec_outer_value(x, e, v) ? IXV_VALUE : IXV_NONE;
	if (!*hold && !(*hold = rel_new(x, 0, NULL)))
		return IXV_ERROR;
	return exec_scalar(x, (ast_expr *)e, v, *hold) ? IXV_ERROR : IXV_VALUE;
}

static uint64_t late_join_rows(void *arg, const ixpath *ix)
{
	(void)arg;
	return ix->jrel->nrows;
}

static void late_join_key(void *arg, const ixpath *ix, uint64_t i, int c,
			  sval *v)
{
	(void)arg;
	rel_get(ix->jrel, c, i, v);
}

/* The node's ranges for the values of this run. */
static int ranges(exec_ctx *x, const ixpath *ix, ixranges *out)
{
	ixlate late = {late_value, late_join_rows, late_join_key, x};
	return plan_index_ranges(x->db, x->st, &late, ix, out);
}

static void ranges_free(ixranges *r)
{
	rel *hold = r->hold;
	plan_index_ranges_free(r);
	rel_free(hold);
}

/* Row ids read from a cursor per call. */
#define IX_BATCH 1024

struct ixrun {
	ixranges rg;
	int ri;	       /* range being read */
	stg_icur *cur; /* its cursor (NULL: not open yet) */
	bool done;     /* every range read */
	bool pulling;  /* exec_index_limit drives the reads */
	uint64_t want; /* row ids the next pull reads */
};

static void run_close(struct ixrun *r);

/* ---- row ids ---- */

typedef struct idvec {
	uint64_t *v;
	uint64_t n, cap;
} idvec;

static int idvec_grow(exec_ctx *x, idvec *d, uint64_t more)
{
	if (d->n + more <= d->cap)
		return GPMDB_OK;
	uint64_t cap = d->cap ? d->cap : 64;
	while (cap < d->n + more)
		cap *= 2;
	uint64_t *nv = realloc(d->v, sizeof(uint64_t) * cap);
	if (!nv)
		return db_err(x->db, GPMDB_NOMEM, "out of memory");
	d->v = nv;
	d->cap = cap;
	return GPMDB_OK;
}

/* Up to max more row ids of the run's ranges, in order, into d. */
static int run_read(exec_ctx *x, const ixpath *ix, struct ixrun *r,
		    uint64_t max, idvec *d)
{
	stg_pool *p = x->db->pool;
	uint64_t start = d->n;

	while (!r->done && d->n - start < max) {
		uint32_t got = 0, ask;
		int rc;
		if (!r->cur) {
			if (r->ri >= r->rg.n) {
				r->done = true;
				break;
			}
			if (stg_icur_open(p, ix->index_id, &r->rg.r[r->ri],
					  &r->cur))
				return db_err_stg(x->db);
		}
		ask = max - (d->n - start) < IX_BATCH
			  ? (uint32_t)(max - (d->n - start))
			  : IX_BATCH;
		if ((rc = idvec_grow(x, d, ask)))
			return rc;
		if (stg_icur_next(r->cur, d->v + d->n, ask, &got))
			return db_err_stg(x->db);
		d->n += got;
		if (!got) {
			stg_icur_close(r->cur);
			r->cur = NULL;
			r->ri++;
		}
		if ((rc = db_check_interrupt(x->db)))
			return rc;
	}
	return GPMDB_OK;
}

static void run_close(struct ixrun *r)
{
	if (!r)
		return;
	if (r->cur)
		stg_icur_close(r->cur);
	ranges_free(&r->rg);
	free(r);
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* ---- gathering rows ---- */

/* The rows ids[0..m) (deleted ones skipped) in n's layout. */
static int gather(exec_ctx *x, pnode *n, const uint64_t *ids, uint64_t m,
		  rel **out)
{
	stg_pool *p = x->db->pool;
	stg_tablet_view *views = NULL;
	stg_textbuf tb = {0};
	uint8_t *have = NULL;
	uint32_t nt;
	uint64_t o = 0;
	rel *r;
	int rc = GPMDB_OK;

	if (stg_tablet_count(p, n->table_id, &nt))
		return db_err_stg(x->db);
	if (!(r = rel_new(x, n->ncols, n->ty)))
		return x->db->errcode;
	if ((rc = rel_reserve(r, m)))
		goto out;
	views = malloc(sizeof(stg_tablet_view) * ((size_t)nt + 1));
	have = calloc((size_t)nt + 1, 1);
	if (!views || !have) {
		rc = db_err(x->db, GPMDB_NOMEM, "out of memory");
		goto out;
	}
	for (uint64_t k = 0; k < m; k++) {
		uint64_t id = ids[k], ti = stg_tab_index_of(id), lr;
		const stg_tablet_view *v;
		if (ti >= nt) {
			rc = db_err(x->db, GPMDB_CORRUPT,
				    "index %s: row %llu is past table %s",
				    n->ix->iname, (unsigned long long)id,
				    n->tname);
			goto out;
		}
		if (!have[ti]) {
			if (stg_tablet_get(p, n->table_id, (uint32_t)ti,
					   &views[ti])) {
				rc = db_err_stg(x->db);
				goto out;
			}
			have[ti] = 1;
		}
		v = &views[ti];
		lr = id - v->first_row;
		if (lr >= v->nrows) {
			rc = db_err(x->db, GPMDB_CORRUPT,
				    "index %s: row %llu is past table %s",
				    n->ix->iname, (unsigned long long)id,
				    n->tname);
			goto out;
		}
		if (v->deleted && (v->deleted[lr / 32] >> (lr % 32) & 1))
			continue;
		for (int c = 0; c < n->ncols; c++) {
			int tc = n->tcol ? n->tcol[c] : c;
			rcol *d = &r->cols[c];
			const void *src;
			const char *heap;
			const uint32_t *nl;
			uint64_t cell = 0, at = lr; /* an encoded cell */
			if (tc >= n->ntcols) {	    /* the row id */
				((int64_t *)d->data)[o] = (int64_t)id;
				d->nulls[o] = 0;
				continue;
			}
			src = v->data[tc];
			heap = v->heap;
			if (!src && n->stype[tc] == STG_T_TEXT) {
				/* compressed TEXT: its block decompressed */
				if ((rc = stg_tablet_text(v, tc, lr, 1,
							  (stg_strref *)&cell,
							  &heap, &tb))) {
					rc = db_err(x->db, rc,
						    "table %s: a compressed "
						    "block is damaged",
						    n->tname);
					goto out;
				}
				src = &cell;
				at = 0;
			} else if (!src) {
				stg_colenc_decode(&v->enc[tc], v->enc[tc].width,
						  lr, 1, &cell);
				src = &cell;
				at = 0;
			}
			nl = v->nulls ? v->nulls[tc] : NULL;
			if (nl && (nl[lr / 32] >> (lr % 32) & 1)) {
				/* NULL rows hold 0, as a scan leaves them */
				d->nulls[o] = 1;
				memset((char *)d->data + o * rel_width(d->ty.t),
				       0, rel_width(d->ty.t));
				continue;
			}
			d->nulls[o] = 0;
			switch (n->stype[tc]) {
			case STG_T_INT:
				((int64_t *)d->data)[o] =
				    ((const int32_t *)src)[at];
				break;
			case STG_T_FLOAT:
				((double *)d->data)[o] =
				    ((const float *)src)[at];
				break;
			case STG_T_TEXT: {
				const stg_strref *s =
				    &((const stg_strref *)src)[at];
				if ((rc = rel_str(r, heap + s->off, s->len,
						  &((vec_str *)d->data)[o])))
					goto out;
				break;
			}
			default: {
				/* same width in storage and relation */
				size_t w = rel_width(d->ty.t);
				memcpy((char *)d->data + o * w,
				       (const char *)src + at * w, w);
			}
			}
		}
		o++;
	}
	r->nrows = o;
out:
	stg_textbuf_free(&tb);
	free(views);
	free(have);
	if (rc) {
		rel_free(r);
		return rc;
	}
	*out = r;
	return GPMDB_OK;
}

/* ---- the operator ---- */

static int no_key(exec_ctx *x, const pnode *n)
{
	return db_err(x->db, GPMDB_INTERNAL,
		      "ordered read of index %s: a bound value is not a key "
		      "of its column (the statement needs a new plan)",
		      n->ix->iname);
}

int exec_iscan(exec_ctx *x, pnode *n, rel **out)
{
	ixpath *ix = n->ix;
	struct ixrun *r = ix->run, own = {0};
	idvec ids = {0};
	int rc;

	if (r && r->pulling) {
		/* the next chunk of an ordered read */
		rc = run_read(x, ix, r, r->want, &ids);
		if (!rc) {
			ix->an_index_rows += ids.n;
			rc = gather(x, n, ids.v, ids.n, out);
		}
		free(ids.v);
		return rc;
	}
	/* an inner side with more outer rows than a fifth of its table:
	 * the scan is cheaper than that many searches */
	if (ix->njk && ix->jrel &&
	    (double)ix->jrel->nrows >
		0.2 * (double)stg_row_count(x->db->pool, n->table_id))
		rc = 1;
	else
		rc = ranges(x, ix, &own.rg);
	if (rc == 1) {
		if (ix->ordered) {
			ranges_free(&own.rg);
			return no_key(x, n);
		}
		/* a value that is no key of its column (or an inner side run
		 * without its outer keys, or too many of them): the filters
		 * above and the join decide over every row */
		ranges_free(&own.rg);
		ix->an_fallback++;
		return exec_scan_table(x, n, out);
	}
	if (rc) {
		ranges_free(&own.rg);
		return rc;
	}
	rc = run_read(x, ix, &own, UINT64_MAX, &ids);
	if (own.cur)
		stg_icur_close(own.cur);
	ranges_free(&own.rg);
	if (!rc && !ix->ordered && ids.n > 1) {
		uint64_t k = 0;
		qsort(ids.v, ids.n, sizeof(uint64_t), u64_cmp);
		for (uint64_t i = 0; i < ids.n; i++)
			if (!i || ids.v[i] != ids.v[k - 1])
				ids.v[k++] = ids.v[i];
		ids.n = k;
	}
	if (!rc) {
		ix->an_index_rows += ids.n;
		rc = gather(x, n, ids.v, ids.n, out);
	}
	free(ids.v);
	return rc;
}

/* Appends every row of part to acc (same layout). */
static int rel_append(exec_ctx *x, rel *acc, const rel *part)
{
	uint32_t *idx;
	int rc;

	if (!part->nrows)
		return GPMDB_OK;
	idx = malloc(sizeof(uint32_t) * part->nrows);
	if (!idx)
		return db_err(x->db, GPMDB_NOMEM, "out of memory");
	for (uint64_t i = 0; i < part->nrows; i++)
		idx[i] = (uint32_t)i;
	rc = rel_gather_rows(acc, part, idx, part->nrows);
	free(idx);
	return rc;
}

int exec_index_limit(exec_ctx *x, pnode *li, int64_t want, rel **out)
{
	pnode *s = li->l;
	struct ixrun *r;
	rel *acc = NULL, *part;
	uint64_t chunk, need = want < 0 ? UINT64_MAX : (uint64_t)want;
	int rc;

	if (!s || s->kind != PN_PROJECT || s->post)
		return -1;
	for (s = s->l; s && s->kind == PN_FILTER && !s->post; s = s->l)
		;
	if (!s || s->kind != PN_ISCAN || !s->ix->ordered)
		return -1;
	if (!(r = calloc(1, sizeof(*r))))
		return db_err(x->db, GPMDB_NOMEM, "out of memory");
	rc = ranges(x, s->ix, &r->rg);
	if (rc == 1)
		rc = no_key(x, s);
	if (rc) {
		run_close(r);
		return rc;
	}
	r->pulling = true;
	s->ix->run = r;
	/* a filter may drop rows: the chunks grow, up to 1M row ids */
	chunk = need < 16 ? 16 : need > 65536 ? 65536 : need;
	while (!rc) {
		r->want = chunk;
		if ((rc = exec_node(x, li->l, &part)))
			break;
		if (!acc) {
			acc = part;
		} else {
			rc = rel_append(x, acc, part);
			rel_free(part);
		}
		if (rc || r->done || acc->nrows >= need)
			break;
		if (chunk < (1u << 20))
			chunk *= 2;
	}
	s->ix->run = NULL;
	run_close(r);
	if (rc) {
		rel_free(acc);
		return rc;
	}
	*out = acc;
	return GPMDB_OK;
}
