/*
 * plan_decor.c - decorrelation: WHERE conjuncts with a subquery that would
 * run once per outer row become joins (below), and the aggregates of the
 * subqueries so rewritten.
 */
#include "../value.h"
#include "plan_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- decorrelation ---- */

/*
 * WHERE conjuncts with a subquery that would run once per outer row become
 * joins, run once:
 *   [NOT] EXISTS (SELECT ... WHERE i = o AND ...)  SEMI / ANTI JOIN on i = o
 *   x IN (SELECT y ... [WHERE i = o ...])           SEMI JOIN on x = y, i = o
 *   x NOT IN (SELECT y ...), uncorrelated           ANTI JOIN with NOT IN's
 *                                                   NULL rule (ANTI_NULL)
 *   x <op> (SELECT f(agg) FROM ... WHERE i = o ...)
 *       LEFT JOIN of the outer rows with the subquery's FROM/WHERE grouped
 *       by i, then the comparison with f(agg) over the join (an outer row
 *       without a group gets NULL aggregates and count 0, as the subquery
 *       over no rows gives)
 * i are expressions of the subquery's own columns, o of the outer query's
 * (the correlation); other correlated terms of an EXISTS or IN subquery
 * become the join's residual.  The subquery's FROM and uncorrelated WHERE
 * are planned again as a plain query; the columns the join reads from it
 * get new FROM ids (syn_id), above any real column id, so that they do
 * not collide with the outer query's.  Other shapes keep the subquery.
 */
static __thread int syn_next = 1 << 24;

static int syn_id(void)
{
	if (syn_next >= 1 << 30)
		syn_next = 1 << 24;
	return syn_next++;
}

/* What an expression of the subquery refers to: its own columns (inner),
 * the outer query's (outer, only directly, not from a nested subquery),
 * anything else (beyond: further out, or the outer query from inside a
 * nested subquery), and whether it has subqueries and aggregates. */
typedef struct drefs {
	bool inner, outer, beyond, sub, agg;
} drefs;

static void drefs_sel(const ast_select *s, int d, drefs *r);

static void drefs_expr(const ast_expr *e, int d, drefs *r)
{
	if (!e)
		return;
	switch (e->kind) {
	case AST_E_COLUMN:
		if (e->rel == d && d == 0)
			r->inner = true;
		else if (e->rel == d + 1 && d == 0)
			r->outer = true;
		else if (e->rel > d)
			r->beyond = true;
		return;
	case AST_E_SUBQUERY:
	case AST_E_EXISTS:
	case AST_E_IN_SELECT:
		r->sub = true;
		drefs_sel(e->sub, d + 1, r);
		break;
	case AST_E_FUNC:
		if (d == 0 && expr_is_agg_call(e, NULL))
			r->agg = true;
		break;
	default:
		break;
	}
	drefs_expr(e->l, d, r);
	drefs_expr(e->r, d, r);
	drefs_expr(e->x, d, r);
	if (e->list)
		for (int i = 0; i < e->list->n; i++)
			drefs_expr(e->list->v[i], d, r);
}

static void drefs_from(const ast_from *f, int d, drefs *r)
{
	if (!f)
		return;
	if (f->kind == AST_FROM_JOIN) {
		drefs_from(f->left, d, r);
		drefs_from(f->right, d, r);
		drefs_expr(f->on, d, r);
	} else if (f->kind == AST_FROM_SUBQUERY) {
		drefs_sel(f->sub, d + 1, r);
	}
}

static void drefs_sel(const ast_select *s, int d, drefs *r)
{
	if (!s)
		return;
	if (s->kind == AST_SEL_COMPOUND) {
		drefs_sel(s->left, d, r);
		drefs_sel(s->right, d, r);
		return;
	}
	if (s->kind == AST_SEL_VALUES) {
		for (int i = 0; s->values && i < s->values->n; i++)
			for (int k = 0; k < s->values->v[i]->n; k++)
				drefs_expr(s->values->v[i]->v[k], d, r);
		return;
	}
	for (int i = 0; s->cols && i < s->cols->n; i++)
		if (s->cols->v[i]->expr->kind != AST_E_STAR)
			drefs_expr(s->cols->v[i]->expr, d, r);
	drefs_from(s->from, d, r);
	drefs_expr(s->where, d, r);
	for (int i = 0; s->group_by && i < s->group_by->n; i++)
		drefs_expr(s->group_by->v[i], d, r);
	drefs_expr(s->having, d, r);
	for (int i = 0; s->order_by && i < s->order_by->n; i++)
		drefs_expr(s->order_by->v[i]->expr, d, r);
}

static drefs drefs_of(const ast_expr *e)
{
	drefs r = {0};

	drefs_expr(e, 0, &r);
	return r;
}

/* The AND-ed terms of e, appended to v (at most max). */
static int and_terms(ast_expr *e, ast_expr **v, int n, int max)
{
	if (!e || n < 0)
		return n;
	if (e->kind == AST_E_BINARY && e->op == AST_OP_AND)
		return and_terms(e->r, v, and_terms(e->l, v, n, max), max);
	if (n >= max)
		return -1;
	v[n] = e;
	return n + 1;
}

/* Maps an inner column id to the FROM id it has over the join. */
typedef struct dmap {
	int n;
	int from[64], to[64];
	ast_expr *e[64]; /* the inner column's expression */
} dmap;

static ast_expr *col_ref(bctx *b, int g, etype t, const char *name)
{
	ast_expr *e = ast_expr_new(b->a, AST_E_COLUMN, 0, 0);

	e->name = (char *)name;
	e->rel = 0;
	e->col = g;
	e->rtype = et_pack(t);
	return e;
}

/* A copy of the subquery expression e for the outer query: outer columns
 * (rel 1) become its own (rel 0), inner ones are renamed through m (NULL:
 * there are none); NULL when an inner column is not in m. */
static ast_expr *dclone(bctx *b, const ast_expr *e, const dmap *m)
{
	ast_expr *c;

	if (!e)
		return NULL;
	c = ast_alloc(b->a, sizeof(*c));
	if (!c)
		return NULL;
	*c = *e;
	c->bind = NULL;
	if (e->kind == AST_E_COLUMN) {
		if (e->rel == 1) {
			c->rel = 0;
		} else {
			int k = 0;
			while (m && k < m->n && m->from[k] != e->col)
				k++;
			if (!m || k == m->n)
				return NULL;
			c->col = m->to[k];
		}
		return c;
	}
	if ((e->l && !(c->l = dclone(b, e->l, m))) ||
	    (e->r && !(c->r = dclone(b, e->r, m))) ||
	    (e->x && !(c->x = dclone(b, e->x, m))))
		return NULL;
	if (e->list) {
		ast_expr_list *l = ast_alloc(b->a, sizeof(*l));
		if (!l)
			return NULL;
		l->n = l->cap = e->list->n;
		l->v = ast_alloc(b->a,
				 sizeof(ast_expr *) * (size_t)(e->list->n + 1));
		if (!l->v)
			return NULL;
		for (int i = 0; i < e->list->n; i++)
			if (!(l->v[i] = dclone(b, e->list->v[i], m)))
				return NULL;
		c->list = l;
	}
	return c;
}

/* Adds the inner columns of e to m (new FROM ids); false when full. */
static bool dmap_cols(const ast_expr *e, dmap *m)
{
	if (!e)
		return true;
	if (e->kind == AST_E_COLUMN) {
		if (e->rel != 0)
			return true;
		for (int k = 0; k < m->n; k++)
			if (m->from[k] == e->col)
				return true;
		if (m->n == 64)
			return false;
		m->from[m->n] = e->col;
		m->e[m->n] = (ast_expr *)e;
		m->to[m->n++] = syn_id();
		return true;
	}
	if (!dmap_cols(e->l, m) || !dmap_cols(e->r, m) || !dmap_cols(e->x, m))
		return false;
	for (int i = 0; e->list && i < e->list->n; i++)
		if (!dmap_cols(e->list->v[i], m))
			return false;
	return true;
}

/* A column outside an aggregate call (a scalar subquery's "any row"). */
static bool agg_bare(const ast_expr *e)
{
	if (!e || expr_is_agg_call(e, NULL))
		return false;
	if (e->kind == AST_E_COLUMN)
		return true;
	if (agg_bare(e->l) || agg_bare(e->r) || agg_bare(e->x))
		return true;
	for (int i = 0; e->list && i < e->list->n; i++)
		if (agg_bare(e->list->v[i]))
			return true;
	return false;
}

/* The aggregate calls of e into ac's slots. */
static int agg_collect(aggctx *ac, ast_expr *e)
{
	int fn, rc;

	if (!e)
		return 0;
	if (expr_is_agg_call(e, &fn))
		return plan_agg_slot(ac, fn, e,
				     e->star || !e->list ? NULL
							 : e->list->v[0]) < 0
			   ? db_err(ac->b->db, GPMDB_NOMEM, "out of memory")
			   : 0;
	if ((rc = agg_collect(ac, e->l)) || (rc = agg_collect(ac, e->r)) ||
	    (rc = agg_collect(ac, e->x)))
		return rc;
	for (int i = 0; e->list && i < e->list->n; i++)
		if ((rc = agg_collect(ac, e->list->v[i])))
			return rc;
	return 0;
}

/* A copy of e with each aggregate call replaced by its column (FROM id
 * gids[slot]) of the grouped subquery joined to the outer rows: an outer
 * row without a group reads NULL there, which is the value over no rows
 * except for count() and total(): coalesce(c, 0). */
static ast_expr *agg_subst(bctx *b, aggctx *ac, const ast_expr *e,
			   const int *gids)
{
	ast_expr *c;
	int fn;

	if (!e)
		return NULL;
	if (expr_is_agg_call(e, &fn)) {
		int k = 0;
		while (k < ac->naggs &&
		       !(ac->aggs[k].fn == fn && expr_equal(ac->calls[k], e)))
			k++;
		if (k == ac->naggs)
			return NULL;
		etype t = ac->aggs[k].res;
		c = col_ref(b, gids[k], t, plan_agg_name(fn));
		if (fn == AGG_COUNT || fn == AGG_COUNT_STAR ||
		    fn == AGG_TOTAL) {
			ast_expr *z = ast_expr_new(
			    b->a, fn == AGG_TOTAL ? AST_E_REAL : AST_E_INT, 0,
			    0);
			ast_expr *f = ast_expr_new(b->a, AST_E_FUNC, 0, 0);
			z->rtype = et_pack(
			    et_make(fn == AGG_TOTAL ? BC_T_REAL : BC_T_INT));
			f->name = "coalesce";
			f->list = ast_expr_list_add(b->a, NULL, c);
			f->list = ast_expr_list_add(b->a, f->list, z);
			f->rtype = et_pack(t);
			c = f;
		}
		return c;
	}
	c = ast_alloc(b->a, sizeof(*c));
	if (!c)
		return NULL;
	*c = *e;
	c->bind = NULL;
	if ((e->l && !(c->l = agg_subst(b, ac, e->l, gids))) ||
	    (e->r && !(c->r = agg_subst(b, ac, e->r, gids))) ||
	    (e->x && !(c->x = agg_subst(b, ac, e->x, gids))))
		return NULL;
	if (e->list) {
		ast_expr_list *l = NULL;
		for (int i = 0; i < e->list->n; i++) {
			ast_expr *x = agg_subst(b, ac, e->list->v[i], gids);
			if (!x)
				return NULL;
			l = ast_expr_list_add(b->a, l, x);
		}
		c->list = l;
	}
	return c;
}

/* The subquery's FROM and its uncorrelated WHERE terms (keep[0..nkeep)),
 * planned as a query of its own under scope up. */
static pnode *decor_inner(bctx *b, ast_select *s, scope *up, ast_expr **keep,
			  int nkeep)
{
	ast_expr *saved = s->where, *w = NULL;
	scope *isc = ast_alloc(b->a, sizeof(scope));
	pnode *t;

	if (!isc)
		return NOMEM(b);
	isc->up = up;
	for (int i = 0; i < nkeep; i++)
		w = plan_and_of(b, w, keep[i]);
	s->where = w;
	t = plan_from_where(b, s, isc);
	s->where = saved;
	free(isc->orefs);
	return t;
}

/* A join node n of type jt over l and r, keys from lk/rk. */
static pnode *decor_join(bctx *b, pnode *l, pnode *r, int jt, ast_expr **lk,
			 ast_expr **rk, int nk)
{
	bool semi = jt != JOIN_LEFT;
	pnode *n = plan_node_join(b, l, r, jt);

	if (!n)
		return NULL;
	if (semi) { /* the output is the left columns */
		pnode *pair = n;
		n = plan_node_new(b, PN_JOIN, l->ncols);
		if (!n)
			return NOMEM(b);
		plan_node_copy_layout(n, 0, l);
		n->l = l;
		n->r = r;
		n->jtype = jt;
		n->lkeys = pair->lkeys;
		n->rkeys = pair->rkeys;
		n->pair = pair;
		pair->l = pair->r = NULL;
		n->est = l->est * 0.5 + 1;
	} else {
		n->est = l->est;
	}
	for (int i = 0; i < nk; i++) {
		n->lkeys[i] = lk[i];
		n->rkeys[i] = rk[i];
	}
	n->nkeys = nk;
	return n;
}

/* Every column e reads (of this query) is an output column of n. */
static bool expr_in_layout(const ast_expr *e, const pnode *n)
{
	if (!e)
		return true;
	switch (e->kind) {
	case AST_E_COLUMN: {
		if (e->rel)
			return false;
		for (int k = 0; k < n->ncols; k++)
			if (n->g[k] == e->col)
				return true;
		return false;
	}
	case AST_E_SUBQUERY:
	case AST_E_EXISTS:
	case AST_E_IN_SELECT:
		return false;
	default:
		break;
	}
	if (!expr_in_layout(e->l, n) || !expr_in_layout(e->r, n) ||
	    !expr_in_layout(e->x, n))
		return false;
	for (int i = 0; e->list && i < e->list->n; i++)
		if (!expr_in_layout(e->list->v[i], n))
			return false;
	return true;
}

/* A SEMI/ANTI join of node with r on keys that read one input of an
 * inner join (or the preserved side of a LEFT join, or the input of a
 * filter) below node goes down to that input: it keeps a row by that
 * row's own values, so it may filter before the joins above, which then
 * meet fewer rows (TPC-H Q18: 57 orders of 1.5 million before the
 * join with lineitem). */
static pnode *semi_place(bctx *b, pnode *node, pnode *r, int jt, ast_expr **lk,
			 ast_expr **rk, int nk)
{
	bool in_l = true, in_r = node->kind == PN_JOIN &&
				 node->jtype == JOIN_INNER && node->r;

	if (node->kind == PN_FILTER && !node->post) {
		in_r = false;
	} else if (node->kind != PN_JOIN ||
		   (node->jtype != JOIN_INNER && node->jtype != JOIN_LEFT)) {
		return decor_join(b, node, r, jt, lk, rk, nk);
	}
	for (int i = 0; i < nk; i++) {
		in_l = in_l && expr_in_layout(lk[i], node->l);
		in_r = in_r && expr_in_layout(lk[i], node->r);
	}
	if (in_l) {
		pnode *d = semi_place(b, node->l, r, jt, lk, rk, nk);
		if (!d)
			return NULL;
		node->l = d;
		return node;
	}
	if (in_r) {
		pnode *d = semi_place(b, node->r, r, jt, lk, rk, nk);
		if (!d)
			return NULL;
		node->r = d;
		return node;
	}
	return decor_join(b, node, r, jt, lk, rk, nk);
}

#define DECOR_MAX   64
#define DECOR_DEPTH 24

/* Replaces the WHERE conjunct e of scope sc's query over node by a join
 * when it has one of the shapes above: the new node, node itself when it
 * has not (*done false), NULL on error. */
pnode *plan_decor(bctx *b, scope *sc, pnode *node, ast_expr *e, bool *done)
{
	ast_expr *sq = e, *lhs = NULL;
	bool neg = false, scalar = false;
	int side = 0; /* scalar: the subquery is e->l (1) or e->r (2) */
	einfo *inf;

	*done = false;
	/* each join level costs the executor's recursion much more stack
	 * than a subquery does: deep nests keep their subqueries below this */
	if (b->depth > DECOR_DEPTH)
		return node;
	if (e->kind == AST_E_UNARY && e->op == AST_OP_NOT &&
	    e->l->kind == AST_E_EXISTS) {
		sq = e->l;
		neg = true;
	} else if (e->kind == AST_E_IN_SELECT) {
		neg = e->negated;
		lhs = e->l;
	} else if (e->kind == AST_E_BINARY &&
		   (e->op == AST_OP_EQ || e->op == AST_OP_NE ||
		    e->op == AST_OP_LT || e->op == AST_OP_LE ||
		    e->op == AST_OP_GT || e->op == AST_OP_GE)) {
		side = e->l->kind == AST_E_SUBQUERY   ? 1
		       : e->r->kind == AST_E_SUBQUERY ? 2
						      : 0;
		if (!side)
			return node;
		sq = side == 1 ? e->l : e->r;
		lhs = side == 1 ? e->r : e->l;
		scalar = true;
	} else if (e->kind != AST_E_EXISTS) {
		return node;
	}
	inf = sq->bind;
	if (!inf || !inf->sub)
		return node;
	if (lhs) { /* the outer operand: the outer query's columns only */
		drefs r = drefs_of(lhs);
		if (r.outer || r.beyond || r.sub)
			return node;
	}

	/* uncorrelated IN / NOT IN: a join with the subquery's result */
	if (!inf->correlated) {
		pnode *p = inf->sub;
		if (e->kind != AST_E_IN_SELECT || p->nvis != 1 ||
		    !plan_hashable(expr_type(lhs), p->ty[0]))
			return node;
		int g = syn_id();
		p->g[0] = g;
		ast_expr *rk = col_ref(b, g, p->ty[0], "subquery");
		*done = true;
		return semi_place(b, node, p, neg ? JOIN_ANTI_NULL : JOIN_SEMI,
				  &lhs, &rk, 1);
	}
	if (e->kind == AST_E_IN_SELECT && neg)
		return node; /* correlated NOT IN: NULLs per outer row */

	ast_select *s = sq->sub;
	if (s->kind != AST_SEL_CORE || s->with || !s->from || s->group_by ||
	    s->having || s->limit || s->offset || !s->cols ||
	    (scalar && s->distinct))
		return node;
	/* the select list, FROM and ORDER BY: no outer references */
	ast_expr *val = NULL;
	{
		drefs r = {0};
		drefs_from(s->from, 0, &r);
		for (int i = 0; s->order_by && i < s->order_by->n; i++)
			drefs_expr(s->order_by->v[i]->expr, 0, &r);
		if (r.outer || r.beyond)
			return node;
		r = (drefs){0};
		for (int i = 0; i < s->cols->n; i++)
			if (s->cols->v[i]->expr->kind != AST_E_STAR)
				drefs_expr(s->cols->v[i]->expr, 0, &r);
		if (r.outer || r.beyond)
			return node;
		if (!scalar && e->kind != AST_E_IN_SELECT) {
			if (r.agg) /* EXISTS (SELECT count(*) ...): one row */
				return node;
		} else {
			if (s->cols->n != 1 ||
			    s->cols->v[0]->expr->kind == AST_E_STAR)
				return node;
			val = s->cols->v[0]->expr;
			if (r.sub || (scalar ? !r.agg || agg_bare(val) : r.agg))
				return node;
		}
	}
	/* the WHERE terms: uncorrelated ones stay, correlated equalities
	 * become keys, other correlated terms the residual */
	ast_expr *terms[DECOR_MAX], *keep[DECOR_MAX], *resid[DECOR_MAX];
	ast_expr *ok[DECOR_MAX + 1], *ik[DECOR_MAX + 1];
	int nt = and_terms(s->where, terms, 0, DECOR_MAX);
	int nkeep = 0, nres = 0, nk = 0;
	if (nt < 0)
		return node;
	for (int i = 0; i < nt; i++) {
		ast_expr *t = terms[i];
		drefs r = drefs_of(t);
		if (r.beyond)
			return node;
		if (!r.outer) {
			keep[nkeep++] = t;
			continue;
		}
		if (r.sub || r.agg)
			return node;
		if (t->kind == AST_E_BINARY && t->op == AST_OP_EQ) {
			drefs a = drefs_of(t->l), c = drefs_of(t->r);
			ast_expr *in = NULL, *out = NULL;
			if (a.inner && !a.outer && c.outer && !c.inner) {
				in = t->l;
				out = t->r;
			} else if (c.inner && !c.outer && a.outer && !a.inner) {
				in = t->r;
				out = t->l;
			}
			if (in &&
			    plan_hashable(expr_type(in), expr_type(out))) {
				ik[nk] = in;
				ok[nk++] = out;
				continue;
			}
		}
		if (scalar) /* a residual cannot be applied before grouping */
			return node;
		resid[nres++] = t;
	}
	if (val && !scalar) { /* x IN (SELECT y ...): the key x = y */
		if (!plan_hashable(expr_type(lhs), expr_type(val)))
			return node;
		ik[nk] = val;
		ok[nk++] = NULL;
	}
	if (nk == 0)
		return node;

	/* the plan: the subquery's FROM and its uncorrelated WHERE */
	pnode *t = decor_inner(b, s, sc, keep, nkeep);
	if (!t)
		return NULL;
	*done = true;
	ast_expr *lk[DECOR_MAX + 1], *rk[DECOR_MAX + 1];
	for (int i = 0; i < nk; i++)
		if (!(lk[i] = ok[i] ? dclone(b, ok[i], NULL) : lhs))
			return NOMEM(b);
	if (!scalar) {
		/* a projection of the keys and the residual's columns, under
		 * new FROM ids */
		dmap m = {0};
		for (int i = 0; i < nres; i++)
			if (!dmap_cols(resid[i], &m))
				return db_err(b->db, GPMDB_ERROR,
					      "subquery too complex"),
				       NULL;
		pnode *pj = plan_node_new(b, PN_PROJECT, nk + m.n);
		if (!pj)
			return NOMEM(b);
		pj->l = t;
		pj->est = t->est;
		pj->nexprs = nk + m.n;
		pj->exprs = ast_alloc(b->a, sizeof(ast_expr *) *
						(size_t)(nk + m.n + 1));
		if (!pj->exprs)
			return NOMEM(b);
		for (int i = 0; i < nk + m.n; i++) {
			ast_expr *x = i < nk ? ik[i] : m.e[i - nk];
			pj->exprs[i] = x;
			pj->ty[i] = expr_type(x);
			pj->g[i] = i < nk ? syn_id() : m.to[i - nk];
			if (i < nk)
				rk[i] = col_ref(b, pj->g[i], pj->ty[i],
						ik[i]->kind == AST_E_COLUMN
						    ? ik[i]->name
						    : "key");
		}
		pnode *j = decor_join(b, node, pj, neg ? JOIN_ANTI : JOIN_SEMI,
				      lk, rk, nk);
		if (!j)
			return NULL;
		for (int i = 0; i < nres; i++) {
			ast_expr *c = dclone(b, resid[i], &m);
			if (!c)
				return NOMEM(b);
			j->pred = plan_and_of(b, j->pred, c);
		}
		return j;
	}

	/* scalar: GROUP BY the inner keys, the aggregates of the value */
	aggctx ac = {b, NULL, 0, NULL, NULL, NULL, 0, 0};
	if (agg_collect(&ac, val))
		return NULL;
	pnode *ag = plan_node_new(b, PN_AGG, nk + ac.naggs);
	if (!ag)
		return NOMEM(b);
	ag->l = t;
	ag->ngroup = nk;
	ag->group = ast_alloc(b->a, sizeof(ast_expr *) * (size_t)(nk + 1));
	if (!ag->group)
		return NOMEM(b);
	ag->naggs = ac.naggs;
	ag->aggs = ac.aggs;
	ag->est = t->est * 0.5 + 1;
	for (int i = 0; i < nk; i++) {
		ag->group[i] = ik[i];
		ag->ty[i] = expr_type(ik[i]);
		ag->g[i] = syn_id();
		ag->names[i] = "group";
		rk[i] =
		    col_ref(b, ag->g[i], ag->ty[i],
			    ik[i]->kind == AST_E_COLUMN ? ik[i]->name : "key");
	}
	for (int k = 0; k < ac.naggs; k++) {
		ag->ty[nk + k] = ac.aggs[k].res;
		ag->g[nk + k] = syn_id();
		ag->names[nk + k] = "agg";
	}
	pnode *j = decor_join(b, node, ag, JOIN_LEFT, lk, rk, nk);
	if (!j)
		return NULL;
	ast_expr *v = agg_subst(b, &ac, val, ag->g + nk);
	if (!v)
		return NOMEM(b);
	ast_expr *ne = ast_alloc(b->a, sizeof(*ne));
	if (!ne)
		return NOMEM(b);
	*ne = *e;
	ne->bind = NULL;
	if (side == 1)
		ne->l = v;
	else
		ne->r = v;
	return plan_node_filter(b, j, ne, false);
}
