/*
 * exec_agg.c - the CPU aggregate: hash GROUP BY on one thread or on all
 * (per-thread groups merged in row order), aggregate steps and finals
 * shared with the pipelined aggregate (pipe.c).
 */
#include "../engine.h"
#include "../value.h"
#include "exec_int.h"

#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- aggregate ---- */

int agg_step(exec_ctx *x, const aggdef *a, aggst *s, const sval *v,
	     const sval *sep)
{
	int64_t t;

	if (a->fn == AGG_COUNT_STAR) {
		s->cnt++;
		return GPMDB_OK;
	}
	if (v->t == BC_T_NULL) {
		if (a->fn == AGG_ANY && !s->has) {
			s->v = *v;
			s->has = true;
		}
		return GPMDB_OK;
	}
	s->cnt++;
	switch (a->fn) {
	case AGG_COUNT:
		break;
	case AGG_SUM:
		if (a->res.t == BC_T_INT || a->res.t == BC_T_DEC) {
			int64_t add = v->u.i;
			if (a->res.t == BC_T_DEC && v->t == BC_T_DEC &&
			    v->scale != a->res.scale)
				val_dec_rescale(add, v->scale, a->res.scale,
						&add);
			if (__builtin_add_overflow(s->i, add, &t))
				return db_err(x->db, GPMDB_ERROR,
					      "integer overflow");
			s->i = t;
		} else {
			s->r += v->t == BC_T_REAL ? v->u.r
				: v->t == BC_T_DEC
				    ? val_dec_to_real(v->u.i, v->scale)
				: v->t == BC_T_TEXT
				    ? val_text_to_real(v->u.s.ptr, v->u.s.len)
				    : (double)v->u.i;
		}
		break;
	case AGG_AVG:
	case AGG_TOTAL:
		s->r += v->t == BC_T_REAL  ? v->u.r
			: v->t == BC_T_DEC ? val_dec_to_real(v->u.i, v->scale)
			: v->t == BC_T_TEXT
			    ? val_text_to_real(v->u.s.ptr, v->u.s.len)
			    : (long double)v->u.i;
		break;
	case AGG_MIN:
		if (!s->has || sval_cmp(v, &s->v) < 0)
			s->v = *v;
		s->has = true;
		break;
	case AGG_MAX:
		if (!s->has || sval_cmp(v, &s->v) > 0)
			s->v = *v;
		s->has = true;
		break;
	case AGG_ANY:
		if (!s->has || s->v.t == BC_T_NULL)
			s->v = *v;
		s->has = true;
		break;
	case AGG_GROUP_CONCAT: {
		char buf[64], sbuf[64];
		uint32_t len, slen = 1;
		const char *p = sval_text(v, buf, &len);
		const char *sp = ",";
		if (sep)
			sp = sep->t == BC_T_NULL ? ""
						 : sval_text(sep, sbuf, &slen);
		if (sep && sep->t == BC_T_NULL)
			slen = 0;
		size_t need = s->gclen + len + slen + 1;
		if (need > s->gccap) {
			size_t cap = s->gccap ? s->gccap * 2 : 64;
			while (cap < need)
				cap *= 2;
			char *np = realloc(s->gc, cap);
			if (!np)
				return db_err(x->db, GPMDB_NOMEM,
					      "out of memory");
			int rc = exec_mem(x, cap - s->gccap);
			s->gc = np;
			s->gccap = cap;
			if (rc)
				return rc;
		}
		if (s->has) {
			memcpy(s->gc + s->gclen, sp, slen);
			s->gclen += slen;
		}
		memcpy(s->gc + s->gclen, p, len);
		s->gclen += len;
		s->has = true;
		break;
	}
	}
	return GPMDB_OK;
}

int agg_final(exec_ctx *x, const aggdef *a, aggst *s, rel *r, int c,
	      uint64_t row)
{
	sval v;

	memset(&v, 0, sizeof(v));
	v.t = BC_T_NULL;
	switch (a->fn) {
	case AGG_COUNT_STAR:
	case AGG_COUNT:
		v.t = BC_T_INT;
		v.u.i = s->cnt;
		break;
	case AGG_SUM:
		if (!s->cnt)
			break;
		v.t = a->res.t;
		v.scale = a->res.scale;
		if (v.t == BC_T_REAL)
			v.u.r = (double)s->r;
		else
			v.u.i = s->i;
		break;
	case AGG_AVG:
		if (!s->cnt)
			break;
		v.t = BC_T_REAL;
		v.u.r = (double)(s->r / s->cnt);
		break;
	case AGG_TOTAL:
		v.t = BC_T_REAL;
		v.u.r = (double)s->r;
		break;
	case AGG_GROUP_CONCAT:
		if (!s->has)
			break;
		v.t = BC_T_TEXT;
		v.u.s.ptr = s->gc;
		v.u.s.len = (uint32_t)s->gclen;
		break;
	default:
		if (s->has)
			v = s->v;
	}
	if (v.t != BC_T_NULL &&
	    (v.t != a->res.t || (v.t == BC_T_DEC && v.scale != a->res.scale))) {
		int rc = sval_convert(x, &v, a->res, 0, r);
		if (rc)
			return rc;
	}
	return rel_set(r, c, row, &v);
}

static int eval_col(exec_ctx *x, pnode *n, int slot, ast_expr *e, const rel *in,
		    rel *dst, int c)
{
	cexpr *cx;
	int rc;

	if ((rc = exec_node_cx(x, n, slot, e, false, n->l, &cx)))
		return rc;
	return exec_eval_into(x, cx, in, dst, c);
}

/* ---- parallel hash aggregate ---- */

/* Inputs of fewer rows aggregate on one thread. */
#define AGG_PAR_MIN_ROWS 65536

/* exec_rows_eq over the key relation, numbers compared without svals (one
 * column has one type and scale; REAL as sval_cmp compares). */
bool exec_keys_eq(const rel *k, uint64_t i, const rel *k2, uint64_t j)
{
	for (int c = 0; c < k->ncols; c++) {
		const rcol *col = &k->cols[c], *col2 = &k2->cols[c];
		bool ni = col->nulls[i] || col->ty.t == BC_T_NULL,
		     nj = col2->nulls[j] || col2->ty.t == BC_T_NULL;
		if (ni || nj) {
			if (ni != nj)
				return false;
			continue;
		}
		switch (col->ty.t) {
		case BC_T_BOOL:
			if (((uint8_t *)col->data)[i] !=
			    ((uint8_t *)col2->data)[j])
				return false;
			break;
		case BC_T_DATE:
			if (((int32_t *)col->data)[i] !=
			    ((int32_t *)col2->data)[j])
				return false;
			break;
		case BC_T_REAL: {
			double a = ((double *)col->data)[i],
			       b = ((double *)col2->data)[j];
			if (a < b || a > b)
				return false;
			break;
		}
		case BC_T_TEXT: {
			if (col2->ty.t == BC_T_TEXT) { /* binary collation */
				vec_str a = ((vec_str *)col->data)[i],
					b = ((vec_str *)col2->data)[j];
				if (a.len != b.len)
					return false;
				if (a.len <= 8) { /* short keys: no call */
					for (uint32_t q = 0; q < a.len; q++)
						if (a.ptr[q] != b.ptr[q])
							return false;
				} else if (a.ptr != b.ptr &&
					   memcmp(a.ptr, b.ptr, a.len))
					return false;
				break;
			}
			sval a, b;
			rel_get(k, c, i, &a);
			rel_get(k2, c, j, &b);
			if (sval_cmp(&a, &b))
				return false;
			break;
		}
		default:
			if (((int64_t *)col->data)[i] !=
			    ((int64_t *)col2->data)[j])
				return false;
		}
	}
	return true;
}

/* One thread's groups over its rows [lo, hi): open addressing on the key
 * hash, each group known by its first row (keys compared there). */

void agg_local_free(agg_local *l)
{
	free(l->hash);
	free(l->frow);
	free(l->slot);
	free(l->st);
	memset(l, 0, sizeof(*l));
}

/* The group of row i (hash hv) in l, added when new; -1 out of memory. */
int64_t agg_local_group(agg_local *l, const rel *keys, int na, uint64_t hv,
			uint64_t i)
{
	uint64_t m = l->nslot - 1, s = (hv ^ hv >> 29) & m;
	int64_t e;

	while ((e = l->slot[s]) >= 0) {
		if (l->hash[e] == hv && exec_keys_eq(keys, l->frow[e], keys, i))
			return e;
		s = (s + 1) & m;
	}
	if (l->n == l->cap) {
		uint64_t cap = l->cap * 2;
		uint64_t *h = realloc(l->hash, cap * 8);
		uint64_t *f = h ? realloc(l->frow, cap * 8) : NULL;
		aggst *st =
		    f ? realloc(l->st, cap * (size_t)na * sizeof(aggst)) : NULL;
		if (h)
			l->hash = h;
		if (f)
			l->frow = f;
		if (!st)
			return -1;
		l->st = st;
		l->cap = cap;
	}
	if (2 * (l->n + 1) > l->nslot) { /* grow the slots and rehash */
		uint64_t ns = l->nslot * 2;
		int64_t *sl = malloc(ns * 8);
		if (!sl)
			return -1;
		memset(sl, 0xff, ns * 8);
		for (uint64_t g = 0; g < l->n; g++) {
			uint64_t t = (l->hash[g] ^ l->hash[g] >> 29) & (ns - 1);
			while (sl[t] >= 0)
				t = (t + 1) & (ns - 1);
			sl[t] = (int64_t)g;
		}
		free(l->slot);
		l->slot = sl;
		l->nslot = ns;
		m = ns - 1;
		s = (hv ^ hv >> 29) & m;
		while (l->slot[s] >= 0)
			s = (s + 1) & m;
	}
	e = (int64_t)l->n++;
	l->hash[e] = hv;
	l->frow[e] = i;
	memset(&l->st[(uint64_t)e * (size_t)na], 0, (size_t)na * sizeof(aggst));
	l->slot[s] = e;
	return e;
}

int agg_local_init(agg_local *l, int na)
{
	l->cap = 64;
	l->nslot = 256;
	l->hash = malloc(l->cap * 8);
	l->frow = malloc(l->cap * 8);
	l->st = malloc(l->cap * (size_t)na * sizeof(aggst) + 1);
	l->slot = malloc(l->nslot * 8);
	if (!l->hash || !l->frow || !l->st || !l->slot)
		return GPMDB_NOMEM;
	memset(l->slot, 0xff, l->nslot * 8);
	return GPMDB_OK;
}

/* An INT or DECIMAL sum: s->i += v with the overflow check of agg_step,
 * and the least/greatest prefix, so that the merge can tell whether the
 * serial order would have overflowed on the way. */
bool agg_isum(const aggdef *a)
{
	return a->fn == AGG_SUM &&
	       (a->res.t == BC_T_INT || a->res.t == BC_T_DEC);
}

static int agg_par_rows(exec_ctx *x, const pnode *n, const rel *keys,
			const rel *args, agg_local *l)
{
	int na = n->naggs, ng = n->ngroup;

	for (uint64_t i = l->lo; i < l->hi; i++) {
		if (!(i & 4095) && atomic_load(&x->db->interrupted))
			return GPMDB_INTERRUPT;
		uint64_t hv = ng ? exec_hash_row(keys, ng, i) : 0;
		int64_t e = agg_local_group(l, keys, na, hv, i);
		if (e < 0)
			return GPMDB_NOMEM;
		aggst *st = &l->st[(uint64_t)e * (size_t)na];
		for (int a = 0; a < na; a++) {
			const aggdef *ad = &n->aggs[a];
			aggst *s = &st[a];
			sval v;
			if (ad->fn == AGG_COUNT_STAR) {
				s->cnt++;
				continue;
			}
			rel_get(args, 2 * a, i, &v);
			if (agg_isum(ad) && v.t != BC_T_NULL) {
				int64_t add = v.u.i;
				if (ad->res.t == BC_T_DEC && v.t == BC_T_DEC &&
				    v.scale != ad->res.scale)
					val_dec_rescale(add, v.scale,
							ad->res.scale, &add);
				if (!agg_isum_add(s, add))
					return GPMDB_ERROR;
				continue;
			}
			/* no error here: INT sums are above, no group_concat */
			agg_step(x, ad, s, &v, NULL);
		}
	}
	return GPMDB_OK;
}

/* Adds the later partial state l into g (rows of g come first). */
bool agg_merge(const aggdef *a, aggst *g, const aggst *l)
{
	int64_t t;

	switch (a->fn) {
	case AGG_COUNT_STAR:
	case AGG_COUNT:
		g->cnt += l->cnt;
		return true;
	case AGG_SUM:
		if (agg_isum(a)) {
			if (__builtin_add_overflow(g->i, l->plo, &t) ||
			    __builtin_add_overflow(g->i, l->phi, &t) ||
			    __builtin_add_overflow(g->i, l->i, &t))
				return false;
			g->i = t;
		} else {
			g->r += l->r;
		}
		g->cnt += l->cnt;
		return true;
	case AGG_AVG:
	case AGG_TOTAL:
		g->r += l->r;
		g->cnt += l->cnt;
		return true;
	case AGG_MIN:
	case AGG_MAX:
		if (l->has) {
			int d = g->has ? sval_cmp(&l->v, &g->v) : 0;
			if (!g->has || (a->fn == AGG_MIN ? d < 0 : d > 0))
				g->v = l->v;
			g->has = true;
		}
		g->cnt += l->cnt;
		return true;
	case AGG_ANY:
		if (l->has &&
		    (!g->has || (g->v.t == BC_T_NULL && l->v.t != BC_T_NULL)))
			g->v = l->v;
		g->has |= l->has;
		g->cnt += l->cnt;
		return true;
	}
	return false;
}

bool agg_merge_all(const aggdef *aggs, int na, aggst *g, const aggst *l)
{
	bool ok = true;

	for (int a = 0; a < na; a++)
		ok &= agg_merge(&aggs[a], &g[a], &l[a]);
	return ok;
}

/*
 * The hash aggregate on all threads: each aggregates a contiguous range
 * of rows into groups of its own, then the partial groups are merged in
 * thread order, so that groups come out in the order of their first row
 * as on one thread.  INT sums check every prefix the serial order would
 * have had (agg_merge); REAL sums add partial sums (long double).  Not
 * for DISTINCT or group_concat.  AGG_DECLINE: use the serial path (also
 * when a thread met an overflow, so that it reports it as before).
 */
static int agg_par(exec_ctx *x, pnode *n, const rel *keys, const rel *args,
		   rel *r, uint64_t **frow)
{
	int na = n->naggs, ng = n->ngroup, nt = omp_get_max_threads();
	uint64_t rows = keys->nrows;
	agg_local *loc, gl = {0};
	size_t bytes = 0;
	int rc = GPMDB_OK;

	if (rows < AGG_PAR_MIN_ROWS || nt < 2 || !na)
		return AGG_DECLINE;
	for (int a = 0; a < na; a++)
		if (n->aggs[a].distinct || n->aggs[a].fn == AGG_GROUP_CONCAT)
			return AGG_DECLINE;
	if (!(loc = calloc((size_t)nt, sizeof(agg_local))))
		return db_err(x->db, GPMDB_NOMEM, "out of memory");
#pragma omp parallel num_threads(nt)
	{
		int t = omp_get_thread_num(), tn = omp_get_num_threads();
		agg_local *l = &loc[t];
		l->lo = rows * (uint64_t)t / (uint64_t)tn;
		l->hi = rows * (uint64_t)(t + 1) / (uint64_t)tn;
		l->err = agg_local_init(l, na);
		if (!l->err)
			l->err = agg_par_rows(x, n, keys, args, l);
	}
	for (int t = 0; t < nt; t++) {
		if (loc[t].err == GPMDB_NOMEM || loc[t].err == GPMDB_INTERRUPT)
			rc = rc ? rc : loc[t].err;
		else if (loc[t].err)
			rc = rc ? rc : AGG_DECLINE;
		bytes += loc[t].cap * ((size_t)na * sizeof(aggst) + 16) +
			 loc[t].nslot * 8;
	}
	if (!rc && exec_mem(x, bytes)) {
		/* over the memory limit: exec_mem's message */
		x->mem -= bytes;
		for (int t = 0; t < nt; t++)
			agg_local_free(&loc[t]);
		free(loc);
		return x->db->errcode;
	}
	if (rc)
		bytes = 0; /* not counted */
	if (!rc && agg_local_init(&gl, na))
		rc = GPMDB_NOMEM;
	for (int t = 0; t < nt && !rc; t++) {
		agg_local *l = &loc[t];
		for (uint64_t e = 0; e < l->n && !rc; e++) {
			int64_t g = agg_local_group(&gl, keys, na, l->hash[e],
						    l->frow[e]);
			if (g < 0) {
				rc = GPMDB_NOMEM;
				break;
			}
			if (!agg_merge_all(n->aggs, na,
					   &gl.st[(uint64_t)g * (size_t)na],
					   &l->st[e * (size_t)na]))
				rc = AGG_DECLINE;
		}
	}
	for (int t = 0; t < nt; t++)
		agg_local_free(&loc[t]);
	free(loc);
	if (x->mem >= bytes)
		x->mem -= bytes;
	if (!rc)
		rc = rel_reserve(r, gl.n);
	for (uint64_t g = 0; g < gl.n && !rc; g++) {
		for (int k = 0; k < ng && !rc; k++) {
			sval v;
			rel_get(keys, k, gl.frow[g], &v);
			rc = rel_set(r, k, g, &v);
		}
		for (int a = 0; a < na && !rc; a++)
			rc =
			    agg_final(x, &n->aggs[a],
				      &gl.st[g * (size_t)na + a], r, ng + a, g);
	}
	if (!rc)
		r->nrows = gl.n;
	if (!rc && frow) { /* each group's first row (spill.c) */
		if ((*frow = malloc(sizeof(uint64_t) * (gl.n + 1))))
			memcpy(*frow, gl.frow, sizeof(uint64_t) * gl.n);
		else
			rc = GPMDB_NOMEM;
	}
	agg_local_free(&gl);
	if (rc == GPMDB_NOMEM)
		return db_err(x->db, GPMDB_NOMEM, "out of memory");
	if (rc == GPMDB_INTERRUPT)
		return db_err(x->db, GPMDB_INTERRUPT, "interrupted");
	return rc;
}

int exec_agg(exec_ctx *x, pnode *n, rel **out)
{
	rel *in = NULL;
	int rc;

	if (n->naggs > 120)
		return db_err(x->db, GPMDB_UNSUPPORTED,
			      "more than 120 aggregates in one query are not "
			      "supported yet");
	if ((rc = exec_node(x, n->l, &in)))
		return rc;
	rc = exec_agg_in(x, n, in, out, NULL);
	/* past the memory limit: by partitions of the input (spill.c) */
	if (spill_over(x, rc) && n->ngroup)
		return spill_agg_rel(x, n, in, out);
	rel_free(in);
	return rc;
}

int exec_agg_in(exec_ctx *x, pnode *n, rel *in, rel **out, uint64_t **frow)
{
	rel *keys = NULL, *args = NULL, *r = NULL;
	etype aty[256];
	int na = n->naggs, ng = n->ngroup, rc = GPMDB_OK;
	uint64_t ngroups = 0, *gid = NULL;
	aggst *st = NULL;
	htab h = {0};
	bool hh = false;
	size_t stmem = 0; /* the states' bytes counted */

	*out = NULL;
	/* group keys and aggregate arguments of every input row */
	if (!(keys = rel_new(x, ng, n->ty)) ||
	    (rc = rel_reserve(keys, in->nrows)))
		goto fail;
	for (int k = 0; k < ng; k++)
		if ((rc = eval_col(x, n, k, n->group[k], in, keys, k)))
			goto fail;
	keys->nrows = in->nrows;
	for (int a = 0; a < na; a++) {
		aty[2 * a] = n->aggs[a].arg ? expr_type(n->aggs[a].arg)
					    : et_make(BC_T_INT);
		aty[2 * a + 1] = n->aggs[a].sep ? expr_type(n->aggs[a].sep)
						: et_make(BC_T_NULL);
	}
	if (!(args = rel_new(x, 2 * na, aty)) ||
	    (rc = rel_reserve(args, in->nrows)))
		goto fail;
	for (int a = 0; a < na; a++) {
		if (n->aggs[a].arg &&
		    (rc = eval_col(x, n, ng + a, n->aggs[a].arg, in, args,
				   2 * a)))
			goto fail;
		if (n->aggs[a].sep &&
		    (rc = eval_col(x, n, ng + na + a, n->aggs[a].sep, in, args,
				   2 * a + 1)))
			goto fail;
	}
	args->nrows = in->nrows;
	if (!(r = exec_rel_like(x, n)))
		goto fail;
	if ((rc = agg_par(x, n, keys, args, r, frow)) != AGG_DECLINE) {
		if (!rc) {
			*out = r;
			r = NULL;
		}
		goto fail;
	}
	rc = GPMDB_OK;
	rel_free(r);
	r = NULL;
	/* group ids */
	gid = malloc(sizeof(uint64_t) * (in->nrows + 1));
	if (!gid) {
		rc = db_err(x->db, GPMDB_NOMEM, "out of memory");
		goto fail;
	}
	if (!(r = exec_rel_like(x, n)))
		goto fail;
	if (ng) {
		if ((rc = exec_ht_init(x, &h, 64)))
			goto fail;
		hh = true;
		for (uint64_t i = 0; i < in->nrows; i++) {
			uint64_t hv = exec_hash_row(keys, ng, i);
			int64_t e;
			for (e = exec_ht_first(&h, hv); e >= 0; e = h.next[e])
				if (h.hash[e] == hv &&
				    exec_rows_eq(r, (uint64_t)e, keys, i, ng))
					break;
			if (e < 0) {
				e = (int64_t)ngroups++;
				if ((rc = exec_ht_add(x, &h, hv)) ||
				    (rc = rel_reserve(r, 1)))
					goto fail;
				for (int k = 0; k < ng; k++) {
					sval v;
					rel_get(keys, k, i, &v);
					if ((rc = rel_set(r, k, (uint64_t)e,
							  &v)))
						goto fail;
				}
				r->nrows++;
			}
			gid[i] = (uint64_t)e;
		}
	} else {
		ngroups = 1;
		memset(gid, 0, sizeof(uint64_t) * (in->nrows + 1));
		if ((rc = rel_reserve(r, 1)))
			goto fail;
		r->nrows = 1;
	}
	st = calloc(ngroups * (size_t)(na ? na : 1), sizeof(aggst));
	if (!st) {
		rc = db_err(x->db, GPMDB_NOMEM, "out of memory");
		goto fail;
	}
	stmem = ngroups * (size_t)na * sizeof(aggst);
	if ((rc = exec_mem(x, stmem)))
		goto fail;
	for (int a = 0; a < na; a++) {
		const aggdef *ad = &n->aggs[a];
		htab dh = {0};
		rel *seen = NULL;
		if (ad->distinct) {
			etype dt[2] = {et_make(BC_T_INT), aty[2 * a]};
			if ((rc = exec_ht_init(x, &dh, 64)))
				goto fail;
			if (!(seen = rel_new(x, 2, dt))) {
				exec_ht_free(x, &dh);
				goto fail;
			}
		}
		for (uint64_t i = 0; i < in->nrows; i++) {
			sval v, sep, *sp = NULL;
			if (ad->arg)
				rel_get(args, 2 * a, i, &v);
			else
				v.t = BC_T_INT;
			if (ad->sep) {
				rel_get(args, 2 * a + 1, i, &sep);
				sp = &sep;
			}
			if (ad->distinct && v.t != BC_T_NULL) {
				sval g = {.t = BC_T_INT,
					  .u.i = (int64_t)gid[i]};
				uint64_t hv = exec_hash_mix(
				    gid[i],
				    exec_hash_val(&args->cols[2 * a], i));
				int64_t e;
				for (e = exec_ht_first(&dh, hv); e >= 0;
				     e = dh.next[e]) {
					sval a0, a1;
					rel_get(seen, 0, (uint64_t)e, &a0);
					rel_get(seen, 1, (uint64_t)e, &a1);
					if (dh.hash[e] == hv &&
					    !sval_cmp(&a0, &g) &&
					    !sval_cmp(&a1, &v))
						break;
				}
				if (e >= 0)
					continue;
				if ((rc = exec_ht_add(x, &dh, hv)) ||
				    (rc = rel_reserve(seen, 1)) ||
				    (rc = rel_set(seen, 0, seen->nrows, &g)) ||
				    (rc = rel_set(seen, 1, seen->nrows, &v))) {
					exec_ht_free(x, &dh);
					rel_free(seen);
					goto fail;
				}
				seen->nrows++;
			}
			if ((rc = agg_step(x, ad, &st[gid[i] * (size_t)na + a],
					   &v, sp))) {
				if (ad->distinct) {
					exec_ht_free(x, &dh);
					rel_free(seen);
				}
				goto fail;
			}
		}
		if (ad->distinct) {
			exec_ht_free(x, &dh);
			rel_free(seen);
		}
	}
	for (uint64_t g = 0; g < ngroups; g++)
		for (int a = 0; a < na; a++)
			if ((rc = agg_final(x, &n->aggs[a],
					    &st[g * (size_t)na + a], r, ng + a,
					    g)))
				goto fail;
	if (frow) { /* each group's first row: groups are numbered in
		       the order of their first row */
		if (!(*frow = malloc(sizeof(uint64_t) * (ngroups + 1)))) {
			rc = db_err(x->db, GPMDB_NOMEM, "out of memory");
			goto fail;
		}
		for (uint64_t i = in->nrows, g; i-- > 0;)
			if ((g = ng ? gid[i] : 0) < ngroups)
				(*frow)[g] = i;
		if (!ng)
			(*frow)[0] = 0;
	}
	*out = r;
	r = NULL;
	rc = GPMDB_OK;
fail:
	if (!rc && !*out)
		rc = x->db->errcode ? x->db->errcode : GPMDB_NOMEM;
	if (st) {
		for (uint64_t g = 0; g < ngroups * (size_t)na; g++)
			free(st[g].gc);
		free(st);
	}
	/* a spilled aggregate runs once per partition (spill.c) */
	x->mem -= stmem <= x->mem ? stmem : x->mem;
	if (hh)
		exec_ht_free(x, &h);
	free(gid);
	rel_free(r);
	rel_free(args);
	rel_free(keys);
	return rc;
}
