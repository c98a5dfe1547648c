/*
 * exec_share.c - a view used more than once in a statement runs once.
 *
 * Each use of a view is planned on its own (plan_view), from the same
 * SQL, and the uses of one view share a vshare record.  The optimiser
 * may still change one use and not another (columns pruned, filters
 * pushed down, an index chosen), so a use takes the result of another
 * only when its final plan is the same node for node (plan_same); the
 * first use that runs keeps a copy of its rows for the others, for one
 * execution of the statement (TPC-H Q15 reads its view twice: the
 * revenue of every supplier, and their maximum).
 *
 * A view reads no outer column, so its rows are the same wherever it
 * is used; a use whose plan gained one (a correlated filter pushed into
 * it), a subquery or an index search is not shared.
 */
#include "../engine.h"
#include "exec_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool share_no_outer(const ast_expr *e)
{
	if (!e)
		return true;
	if (e->kind == AST_E_COLUMN && e->rel != 0)
		return false;
	if (!share_no_outer(e->l) || !share_no_outer(e->r) ||
	    !share_no_outer(e->x))
		return false;
	for (int i = 0; e->list && i < e->list->n; i++)
		if (!share_no_outer(e->list->v[i]))
			return false;
	return true;
}

/* Equal expressions without outer references (expr_equal refuses
 * subqueries). */
static bool share_expr(const ast_expr *a, const ast_expr *b)
{
	if (!a || !b)
		return a == b;
	return expr_equal(a, b) && share_no_outer(a);
}

static bool share_exprs(ast_expr *const *a, ast_expr *const *b, int n)
{
	if (n && (!a || !b))
		return a == b;
	for (int i = 0; i < n; i++)
		if (!share_expr(a[i], b[i]))
			return false;
	return true;
}

static bool share_ints(const int *a, const int *b, int n)
{
	if (!a || !b)
		return a == b;
	return !memcmp(a, b, sizeof(int) * (size_t)n);
}

static bool share_bools(const bool *a, const bool *b, int n)
{
	if (!a || !b)
		return a == b;
	return !memcmp(a, b, sizeof(bool) * (size_t)n);
}

/* The same output columns; g, the ids of the columns in the FROM
 * layout of the query reading them, compared too unless root (a use's
 * root is numbered by the query using the view). */
static bool share_layout(const pnode *a, const pnode *b, bool root)
{
	if (a->ncols != b->ncols || a->nvis != b->nvis)
		return false;
	for (int c = 0; c < a->ncols; c++) {
		etype x = a->ty[c], y = b->ty[c];
		if (x.t != y.t || x.prec != y.prec || x.scale != y.scale ||
		    x.aff != y.aff)
			return false;
	}
	return root || share_ints(a->g, b->g, a->ncols);
}

static bool same_node(const pnode *a, const pnode *b, bool root)
{
	if (!a || !b)
		return a == b;
	if (a->kind != b->kind || !share_layout(a, b, root))
		return false;
	/* SCAN */
	if (a->table_id != b->table_id || a->ntcols != b->ntcols ||
	    a->rowid != b->rowid || a->ix || b->ix ||
	    !share_ints(a->tcol, b->tcol, a->ncols))
		return false;
	/* FILTER, PROJECT, VALUES (not shared) */
	if (a->post != b->post || !share_expr(a->pred, b->pred) ||
	    !share_bools(a->unread, b->unread, a->ncols) ||
	    a->nexprs != b->nexprs ||
	    !share_exprs(a->exprs, b->exprs, a->nexprs) || a->nrows || b->nrows)
		return false;
	/* JOIN */
	if (a->jtype != b->jtype || a->nkeys != b->nkeys ||
	    !share_exprs(a->lkeys, b->lkeys, a->nkeys) ||
	    !share_exprs(a->rkeys, b->rkeys, a->nkeys) ||
	    ((a->pair || b->pair) &&
	     (!a->pair || !b->pair || !share_layout(a->pair, b->pair, false))))
		return false;
	/* AGG */
	if (a->ngroup != b->ngroup || a->naggs != b->naggs ||
	    !share_exprs(a->group, b->group, a->ngroup))
		return false;
	for (int i = 0; i < a->naggs; i++) {
		const aggdef *x = &a->aggs[i], *y = &b->aggs[i];
		if (x->fn != y->fn || x->distinct != y->distinct ||
		    !share_expr(x->arg, y->arg) ||
		    !share_expr(x->sep, y->sep) || x->res.t != y->res.t ||
		    x->res.scale != y->res.scale)
			return false;
	}
	/* SORT, LIMIT, SETOP */
	if (a->nsort != b->nsort ||
	    !share_ints(a->sort_col, b->sort_col, a->nsort) ||
	    !share_bools(a->desc, b->desc, a->nsort) ||
	    !share_bools(a->nulls_first, b->nulls_first, a->nsort) ||
	    !share_expr(a->limit, b->limit) ||
	    !share_expr(a->offset, b->offset) || a->op != b->op)
		return false;
	return same_node(a->l, b->l, false) && same_node(a->r, b->r, false);
}

bool plan_same(const pnode *a, const pnode *b)
{
	return same_node(a, b, true);
}

/* A copy of r's rows into *out (x: accounted there, or NULL). */
static int share_copy(exec_ctx *x, const rel *r, rel **out)
{
	etype ty[r->ncols ? r->ncols : 1];
	rel *o;
	int rc;

	for (int c = 0; c < r->ncols; c++)
		ty[c] = r->cols[c].ty;
	if (!(o = rel_new(x, r->ncols, ty)))
		return GPMDB_NOMEM;
	if ((rc = rel_reserve(o, r->nrows)))
		goto fail;
	for (int c = 0; c < r->ncols && r->nrows; c++) {
		const rcol *s = &r->cols[c];
		rcol *d = &o->cols[c];
		memcpy(d->nulls, s->nulls, r->nrows);
		if (s->ty.t != BC_T_TEXT) {
			memcpy(d->data, s->data, r->nrows * rel_width(s->ty.t));
			continue;
		}
		const vec_str *sv = s->data;
		vec_str *dv = d->data;
		for (uint64_t i = 0; i < r->nrows; i++) {
			dv[i].ptr = NULL;
			dv[i].len = 0;
			if (!s->nulls[i] &&
			    (rc = rel_str(o, sv[i].ptr, sv[i].len, &dv[i])))
				goto fail;
		}
	}
	o->nrows = r->nrows;
	*out = o;
	return GPMDB_OK;
fail:
	rel_free(o);
	return rc;
}

bool exec_share_ok(pnode *n)
{
	vshare *v = n->vsh;

	/* a built aggregate limited to a join's keys has part of its rows */
	if (!v || v->uses < 2 || n->keyfilter)
		return false;
	if (!n->vsame)
		n->vsame = n == v->first || plan_same(n, v->first) ? 1 : -1;
	return n->vsame > 0;
}

int exec_share_get(exec_ctx *x, pnode *n, rel **out)
{
	vshare *v = n->vsh;

	if (!v->res || v->gen != x->gen)
		return GPMDB_NOTFOUND;
	/* a failure has said why (rel_new, rel_reserve, rel_str) */
	return share_copy(x, v->res, out);
}

int exec_share_put(exec_ctx *x, pnode *n, const rel *r)
{
	vshare *v = n->vsh;
	rel *c = NULL;

	if (share_copy(NULL, r, &c))
		return db_err(x->db, GPMDB_NOMEM, "out of memory");
	rel_free(v->res);
	v->res = c;
	v->gen = x->gen;
	return GPMDB_OK;
}

void exec_share_free(vshare *list)
{
	for (vshare *v = list; v; v = v->next) {
		rel_free(v->res);
		v->res = NULL;
	}
}
