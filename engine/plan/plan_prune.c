/*
 * plan_prune.c - column pruning of a finished plan (below).
 */
#include "../value.h"
#include "plan_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- column pruning ---- */

/*
 * After a SELECT is planned, each node learns which of its output columns
 * its parent reads; a table scan then reads only those (tcol maps its
 * output columns to table columns) and filters and joins above it carry
 * only what is read: SELECT sum(v) FROM t WHERE k < 9 copies 2 columns,
 * not every column of t.  Expressions find columns by FROM id (g), so a
 * smaller layout needs no change to them.  PROJECT, AGG, VALUES and the
 * nodes over a PROJECT keep all their columns (positions matter there).
 * An expression with a correlated subquery keeps every column of its
 * input: the subquery reads the outer row through that layout (frames).
 * Runs again for a larger plan containing this one: pruning what is
 * already pruned changes nothing.
 */
static void prune_all(uint8_t *need, int n)
{
	memset(need, 1, (size_t)(n > 0 ? n : 0));
}

/* Marks in need the columns of in's layout that e reads. */
static void prune_refs(const ast_expr *e, const pnode *in, uint8_t *need)
{
	if (!e)
		return;
	switch (e->kind) {
	case AST_E_COLUMN:
		if (e->rel == 0) {
			bool found = false;
			for (int k = 0; k < in->ncols; k++)
				if (in->g[k] == e->col) {
					need[k] = 1;
					found = true;
				}
			if (!found) /* compile reports it; keep everything */
				prune_all(need, in->ncols);
		}
		return;
	case AST_E_SUBQUERY:
	case AST_E_EXISTS:
	case AST_E_IN_SELECT: {
		const einfo *inf = e->bind;
		if (!inf || inf->correlated)
			prune_all(need, in->ncols);
		break;
	}
	default:
		break;
	}
	prune_refs(e->l, in, need);
	prune_refs(e->r, in, need);
	prune_refs(e->x, in, need);
	if (e->list)
		for (int i = 0; i < e->list->n; i++)
			prune_refs(e->list->v[i], in, need);
}

static int prune_node(bctx *b, pnode *n, const uint8_t *need);
static int prune_semi(bctx *b, pnode *n, const uint8_t *need);

/* Child c of n gets a need array (all columns when all). */
static uint8_t *prune_need(bctx *b, const pnode *c, bool all)
{
	uint8_t *nd = ast_alloc(b->a, (size_t)c->ncols + 1);

	if (nd) {
		memset(nd, 0, (size_t)c->ncols + 1);
		if (all)
			prune_all(nd, c->ncols);
	}
	return nd;
}

static int prune_scan(bctx *b, pnode *n, const uint8_t *need)
{
	int k = 0;
	int *tc;

	for (int i = 0; i < n->ncols; i++)
		k += need[i] != 0;
	if (k == n->ncols)
		return GPMDB_OK;
	tc = n->tcol ? n->tcol
		     : ast_alloc(b->a, sizeof(int) * (size_t)(n->ncols + 1));
	if (!tc)
		return db_err(b->db, GPMDB_NOMEM, "out of memory");
	k = 0;
	for (int i = 0; i < n->ncols; i++) {
		if (!need[i])
			continue;
		tc[k] = n->tcol ? n->tcol[i] : i;
		n->ty[k] = n->ty[i];
		n->g[k] = n->g[i];
		n->names[k] = n->names[i];
		k++;
	}
	n->tcol = tc;
	n->ncols = n->nvis = k;
	return GPMDB_OK;
}

/*
 * Join n's children: ln and rn get the columns that jn needs of the
 * layout j (n's left columns, then its right ones: n itself, or a
 * SEMI/ANTI JOIN's pair) and those its keys read; the children are
 * pruned and j takes their layout.
 */
static int prune_join_sides(bctx *b, pnode *n, pnode *j, const uint8_t *jn,
			    uint8_t *ln, uint8_t *rn)
{
	int lc = n->l->ncols, rc;

	for (int i = 0; i < j->ncols; i++)
		if (jn[i]) {
			if (i < lc)
				ln[i] = 1;
			else
				rn[i - lc] = 1;
		}
	for (int i = 0; i < n->nkeys; i++) {
		prune_refs(n->lkeys[i], n->l, ln);
		prune_refs(n->rkeys[i], n->r, rn);
	}
	if ((rc = prune_node(b, n->l, ln)) || (rc = prune_node(b, n->r, rn)))
		return rc;
	j->ncols = j->nvis = n->l->ncols + n->r->ncols;
	plan_node_copy_layout(j, 0, n->l);
	plan_node_copy_layout(j, n->l->ncols, n->r);
	return GPMDB_OK;
}

/* SEMI/ANTI JOIN: the left child gives the output columns and with the
 * right one the keys and the residual's columns (over the pair layout). */
static int prune_semi(bctx *b, pnode *n, const uint8_t *need)
{
	pnode *p = n->pair;
	int lc = n->l->ncols, rc;
	uint8_t *jn = prune_need(b, p, false), *ln = prune_need(b, n->l, false),
		*rn = prune_need(b, n->r, false);

	if (!jn || !ln || !rn)
		return db_err(b->db, GPMDB_NOMEM, "out of memory");
	for (int i = 0; i < n->ncols && i < lc; i++)
		ln[i] |= need[i];
	prune_refs(n->pred, p, jn);
	if ((rc = prune_join_sides(b, n, p, jn, ln, rn)))
		return rc;
	n->ncols = n->nvis = n->l->ncols;
	plan_node_copy_layout(n, 0, n->l);
	return GPMDB_OK;
}

/*
 * FILTER n's columns that its parent does not read (need[i] 0) become
 * n->unread, found by FROM id since pruning the child (ln) changes the
 * layout.  A column without an id counts as read.
 */
static int prune_filter(bctx *b, pnode *n, const uint8_t *need, uint8_t *ln)
{
	int nold = n->ncols, rc;
	int *og = malloc(sizeof(int) * ((size_t)nold + 1));
	bool *u = NULL, any = false;

	if (!og)
		return db_err(b->db, GPMDB_NOMEM, "out of memory");
	memcpy(og, n->g, sizeof(int) * (size_t)nold);
	if ((rc = prune_node(b, n->l, ln)))
		goto out;
	/* a filter passes its input's rows on: same layout */
	n->ncols = n->l->ncols;
	n->nvis = n->l->nvis;
	plan_node_copy_layout(n, 0, n->l);
	n->unread = NULL;
	if (!(u = ast_alloc(b->a, (size_t)n->ncols + 1))) {
		rc = db_err(b->db, GPMDB_NOMEM, "out of memory");
		goto out;
	}
	for (int k = 0; k < n->ncols; k++) {
		bool seen = false, read = n->g[k] < 0;
		for (int i = 0; i < nold && !read; i++)
			if (og[i] == n->g[k]) {
				seen = true;
				read = need[i] != 0;
			}
		u[k] = seen && !read;
		any |= u[k];
	}
	if (any)
		n->unread = u;
out:
	free(og);
	return rc;
}

static int prune_node(bctx *b, pnode *n, const uint8_t *need)
{
	uint8_t *ln = NULL, *rn = NULL;
	int rc;

	switch (n->kind) {
	case PN_SCAN:
	case PN_ISCAN:
		return prune_scan(b, n, need);
	case PN_ONE:
	case PN_VALUES:
		return GPMDB_OK;
	case PN_FILTER:
		if (!(ln = prune_need(b, n->l, n->post)))
			break;
		if (!n->post) {
			for (int i = 0; i < n->ncols && i < n->l->ncols; i++)
				ln[i] |= need[i];
			prune_refs(n->pred, n->l, ln);
		}
		return prune_filter(b, n, need, ln);
	case PN_JOIN: {
		if (n->pair) /* SEMI/ANTI: the output is the left columns */
			return prune_semi(b, n, need);
		uint8_t *jn = prune_need(b, n, false);
		if (!jn || !(ln = prune_need(b, n->l, false)) ||
		    !(rn = prune_need(b, n->r, false)))
			break;
		memcpy(jn, need, (size_t)n->ncols);
		prune_refs(n->pred, n, jn);
		return prune_join_sides(b, n, n, jn, ln, rn);
	}
	case PN_PROJECT:
		if (!(ln = prune_need(b, n->l, n->post)))
			break;
		if (!n->post)
			for (int i = 0; i < n->nexprs; i++)
				prune_refs(n->exprs[i], n->l, ln);
		return prune_node(b, n->l, ln);
	case PN_AGG:
		if (!(ln = prune_need(b, n->l, false)))
			break;
		for (int i = 0; i < n->ngroup; i++)
			prune_refs(n->group[i], n->l, ln);
		for (int i = 0; i < n->naggs; i++) {
			prune_refs(n->aggs[i].arg, n->l, ln);
			prune_refs(n->aggs[i].sep, n->l, ln);
		}
		return prune_node(b, n->l, ln);
	default: /* SORT, DISTINCT, LIMIT, SETOP, CONVERT: by position */
		if (n->l && ((ln = prune_need(b, n->l, true)) == NULL ||
			     (rc = prune_node(b, n->l, ln))))
			return ln ? rc
				  : db_err(b->db, GPMDB_NOMEM, "out of memory");
		if (n->r && ((rn = prune_need(b, n->r, true)) == NULL ||
			     (rc = prune_node(b, n->r, rn))))
			return rn ? rc
				  : db_err(b->db, GPMDB_NOMEM, "out of memory");
		return GPMDB_OK;
	}
	return db_err(b->db, GPMDB_NOMEM, "out of memory");
}

/* Prunes the plan under root, whose every column is read. */
int plan_prune(bctx *b, pnode *root)
{
	uint8_t *need = prune_need(b, root, true);

	if (!need)
		return db_err(b->db, GPMDB_NOMEM, "out of memory");
	return prune_node(b, root, need);
}
