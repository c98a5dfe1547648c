/*
 * plan.c - SELECT to a tree of physical operators (pnode).
 *
 * A query's FROM items are flattened into sources; WHERE and inner-join
 * ON conditions are split into conjuncts.  Without LEFT JOINs the joins
 * are ordered greedily: start from the smallest source, then add the
 * smallest source connected by an equality (hash join on those keys),
 * else the smallest one (cross join); conjuncts of one source filter it
 * before the joins.  With LEFT JOINs the written order is kept.
 *
 * This file: sources and scopes, the query core (aggregates, GROUP BY,
 * HAVING, ORDER BY, LIMIT), VALUES, set operations, plan_select and
 * plan_dml.  The joins are plan_join.c's, decorrelation plan_decor.c's,
 * column pruning plan_prune.c's (plan_int.h between them).
 */
#include "../value.h"
#include "plan_int.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

const char *plan_agg_name(int fn)
{
	static const char *n[] = {"count(*)", "count",	      "sum",
				  "avg",      "min",	      "max",
				  "total",    "group_concat", "any"};
	return n[fn];
}

pnode *plan_node_new(bctx *b, int kind, int ncols)
{
	pnode *n = ast_alloc(b->a, sizeof(*n));

	if (!n)
		return NULL;
	n->kind = kind;
	n->ncols = n->nvis = ncols;
	n->ty = ast_alloc(b->a, sizeof(etype) * (size_t)(ncols + 1));
	n->g = ast_alloc(b->a, sizeof(int) * (size_t)(ncols + 1));
	n->names = ast_alloc(b->a, sizeof(char *) * (size_t)(ncols + 1));
	if (!n->ty || !n->g || !n->names)
		return NULL;
	for (int i = 0; i < ncols; i++) {
		n->g[i] = -1;
		n->names[i] = "";
	}
	n->est = 1000;
	return n;
}

void plan_node_copy_layout(pnode *d, int at, const pnode *s)
{
	for (int i = 0; i < s->ncols; i++) {
		d->ty[at + i] = s->ty[i];
		d->g[at + i] = s->g[i];
		d->names[at + i] = s->names[i];
	}
}

static pnode *pn_unary(bctx *b, int kind, pnode *child)
{
	pnode *n = plan_node_new(b, kind, child->ncols);

	if (!n)
		return NOMEM(b);
	plan_node_copy_layout(n, 0, child);
	n->nvis = child->nvis;
	n->l = child;
	n->est = child->est;
	return n;
}

pnode *plan_node_filter(bctx *b, pnode *child, ast_expr *pred, bool post)
{
	pnode *n = pn_unary(b, PN_FILTER, child);

	if (!n)
		return NULL;
	n->pred = pred;
	n->post = post;
	n->est = child->est * plan_est_sel(pred) + 1;
	return n;
}

/* ---- scope ---- */

static int scope_add(bctx *b, scope *sc, const char *name, const char *tab,
		     etype ty)
{
	if (sc->ncols == sc->cap) {
		int cap = sc->cap ? sc->cap * 2 : 16;
		scol *n = ast_alloc(b->a, sizeof(scol) * (size_t)cap);
		if (!n)
			return -1;
		if (sc->ncols)
			memcpy(n, sc->cols, sizeof(scol) * (size_t)sc->ncols);
		sc->cols = n;
		sc->cap = cap;
	}
	sc->cols[sc->ncols] = (scol){name, tab, ty, false, sc->ncols};
	return sc->ncols++;
}

static ssrc *scope_src(bctx *b, scope *sc)
{
	if (sc->nsrc == sc->srccap) {
		int cap = sc->srccap ? sc->srccap * 2 : 8;
		ssrc *n = ast_alloc(b->a, sizeof(ssrc) * (size_t)cap);
		if (!n)
			return NULL;
		if (sc->nsrc)
			memcpy(n, sc->src, sizeof(ssrc) * (size_t)sc->nsrc);
		sc->src = n;
		sc->srccap = cap;
	}
	memset(&sc->src[sc->nsrc], 0, sizeof(ssrc));
	return &sc->src[sc->nsrc++];
}

/* ---- sources ---- */

static pnode *plan_scan(bctx *b, uint32_t tid)
{
	stg_schema *sch;
	pnode *n;

	if (stg_table_schema(b->db->pool, tid, &sch)) {
		db_err_stg(b->db);
		return NULL;
	}
	n = plan_node_new(b, PN_SCAN, sch->ncols);
	if (!n) {
		stg_schema_free(sch);
		return NOMEM(b);
	}
	n->table_id = tid;
	n->tname = ast_strndup(b->a, sch->name, strlen(sch->name));
	n->ntcols = sch->ncols;
	n->stype = ast_alloc(b->a, sizeof(int) * (size_t)(sch->ncols + 1));
	if (!n->stype) {
		stg_schema_free(sch);
		return NOMEM(b);
	}
	for (int i = 0; i < sch->ncols; i++) {
		n->stype[i] = sch->cols[i].type;
		n->ty[i] = stg_to_etype(&sch->cols[i]);
		n->names[i] = ast_strndup(b->a, sch->cols[i].name,
					  strlen(sch->cols[i].name));
	}
	n->est = (double)(stg_row_count(b->db->pool, tid) -
			  stg_deleted_count(b->db->pool, tid));
	stg_schema_free(sch);
	return n;
}

pnode *plan_table_scan(bctx *b, uint32_t tid, bool rowid);
pnode *plan_table_scan(bctx *b, uint32_t tid, bool rowid)
{
	pnode *n = plan_scan(b, tid), *m;

	if (!n || !rowid)
		return n;
	m = plan_node_new(b, PN_SCAN, n->ncols + 1);
	if (!m)
		return NOMEM(b);
	*m = (pnode){.kind = PN_SCAN,
		     .ncols = n->ncols + 1,
		     .nvis = n->ncols + 1,
		     .ty = m->ty,
		     .g = m->g,
		     .names = m->names,
		     .est = n->est,
		     .table_id = tid,
		     .tname = n->tname,
		     .ntcols = n->ntcols,
		     .stype = n->stype,
		     .rowid = true};
	plan_node_copy_layout(m, 0, n);
	m->ty[n->ncols] = et_make(BC_T_INT);
	m->g[n->ncols] = G_ROWID;
	m->names[n->ncols] = "rowid";
	return m;
}

/* Records n as a use of view name (exec/exec_share.c). */
static int plan_view_use(bctx *b, const char *name, const char *sql, pnode *n)
{
	gpmdb_stmt *st = b->st;
	vshare *v;

	for (v = st->vshares; v; v = v->next)
		if (!strcasecmp(v->name, name) && !strcmp(v->sql, sql))
			break;
	if (!v) {
		if (!(v = ast_alloc(&st->parena, sizeof(*v))) ||
		    !(v->name = ast_strndup(&st->parena, name, strlen(name))) ||
		    !(v->sql = ast_strndup(&st->parena, sql, strlen(sql))))
			return db_err(b->db, GPMDB_NOMEM, "out of memory");
		v->first = n;
		v->uses = 0;
		v->res = NULL;
		v->gen = 0;
		v->next = st->vshares;
		st->vshares = v;
	}
	v->uses++;
	n->vsh = v;
	return GPMDB_OK;
}

static pnode *plan_view(bctx *b, const char *name, const char *sql,
			ast_name_list **cols)
{
	parse_result *pr;
	pnode *n;
	int nwith = b->nwith;

	if (b->view_depth > 32) {
		db_err(b->db, GPMDB_ERROR,
		       "view %s is defined in terms of "
		       "itself or nested too deep",
		       name);
		return NULL;
	}
	pr = stmt_parse_extra(b->st, sql);
	if (!pr)
		return NULL;
	if (!pr->stmt || pr->stmt->kind != AST_STMT_CREATE_VIEW) {
		db_err(b->db, GPMDB_CORRUPT, "the SQL of view %s is damaged",
		       name);
		return NULL;
	}
	*cols = pr->stmt->cols;
	bctx vb = *b;
	vb.a = &pr->arena;
	vb.sql = sql;
	vb.nwith = 0; /* a view sees no CTE of the query using it */
	vb.view_depth++;
	n = plan_select(&vb, pr->stmt->select, NULL);
	b->nwith = nwith;
	if (n && plan_view_use(b, name, sql, n))
		return NULL;
	return n;
}

static pnode *plan_cte(bctx *b, ast_cte *cte, int level)
{
	char *text = ast_select_to_sql(cte->select);
	parse_result *pr;
	pnode *n;

	if (!text)
		return NOMEM(b);
	pr = stmt_parse_extra(b->st, text);
	free(text);
	if (!pr)
		return NULL;
	if (!pr->stmt || pr->stmt->kind != AST_STMT_SELECT) {
		db_err(b->db, GPMDB_INTERNAL, "cannot re-read CTE %s",
		       cte->name);
		return NULL;
	}
	bctx cb = *b;
	cb.a = &pr->arena;
	cb.sql = pr->stmt ? NULL : NULL;
	cb.nwith = level + 1; /* its WITH and the enclosing ones */
	n = plan_select(&cb, pr->stmt->select, NULL);
	return n;
}

/* Finds a CTE by name: its entry, and how many WITH entries it may see. */
static ast_cte *cte_find(bctx *b, const char *name, int *level)
{
	for (int w = b->nwith - 1; w >= 0; w--) {
		ast_with *wl = b->with[w];
		for (int i = 0; i < wl->n; i++)
			if (!strcasecmp(wl->v[i]->name, name)) {
				*level = w;
				/* earlier entries of this WITH: visible via
				 * the same list (the name order matters
				 * little for non-recursive WITH) */
				return wl->v[i];
			}
	}
	return NULL;
}

static int find_object(bctx *b, const char *name, stg_objkind kind, char **sql)
{
	stg_object *objs;
	int n, rc = GPMDB_NOTFOUND;

	if (stg_objects_list(b->db->pool, &objs, &n))
		return db_err_stg(b->db);
	for (int i = 0; i < n; i++)
		if (objs[i].kind == kind && !strcasecmp(objs[i].name, name)) {
			*sql =
			    ast_strndup(b->a, objs[i].sql, strlen(objs[i].sql));
			rc = GPMDB_OK;
			break;
		}
	stg_objects_free(objs, n);
	return rc;
}

static int add_source(bctx *b, scope *sc, pnode *node, const char *name,
		      ast_name_list *aliases, int jtype, ast_from *f)
{
	ssrc *s = scope_src(b, sc);

	if (!s)
		return db_err(b->db, GPMDB_NOMEM, "out of memory");
	s->name = name;
	s->first = sc->ncols;
	s->n = node->nvis;
	s->node = node;
	s->jtype = jtype;
	s->left = jtype == JOIN_LEFT;
	if (f) {
		s->on = f->on;
		s->using_cols = f->using_cols;
		s->natural = f->natural;
	}
	if (aliases && aliases->n > node->nvis)
		return db_err(b->db, GPMDB_ERROR,
			      "table %s has %d values for %d columns", name,
			      node->nvis, aliases->n);
	for (int i = 0; i < node->nvis; i++) {
		const char *cn =
		    aliases && i < aliases->n ? aliases->v[i] : node->names[i];
		int g = scope_add(b, sc, cn, name, node->ty[i]);
		if (g < 0)
			return db_err(b->db, GPMDB_NOMEM, "out of memory");
		node->g[i] = g;
	}
	return 0;
}

static int plan_from(bctx *b, scope *sc, ast_from *f, int jtype, ast_from *jf)
{
	pnode *node = NULL;
	const char *name = NULL;
	ast_name_list *aliases = NULL;
	int rc, level;

	switch (f->kind) {
	case AST_FROM_JOIN:
		if ((rc = plan_from(b, sc, f->left, JOIN_INNER, NULL)))
			return rc;
		return plan_from(b, sc, f->right,
				 f->join == AST_JOIN_LEFT    ? JOIN_LEFT
				 : f->join == AST_JOIN_CROSS ? JOIN_CROSS
							     : JOIN_INNER,
				 f);
	case AST_FROM_SUBQUERY:
		node = plan_select(b, f->sub, NULL);
		if (!node)
			return b->db->errcode ? b->db->errcode : GPMDB_ERROR;
		name = f->alias;
		aliases = f->col_aliases;
		break;
	case AST_FROM_TABLE: {
		uint32_t tid;
		ast_cte *cte = cte_find(b, f->name, &level);
		char *sql = NULL;

		name = f->alias ? f->alias : f->name;
		aliases = f->col_aliases;
		if (cte) {
			node = plan_cte(b, cte, level);
			if (!node)
				return b->db->errcode;
			if (cte->cols) {
				if (cte->cols->n != node->nvis)
					return db_err(
					    b->db, GPMDB_ERROR,
					    "table %s has %d values for %d "
					    "columns",
					    cte->name, node->nvis,
					    cte->cols->n);
				if (!aliases)
					aliases = cte->cols;
			}
		} else if (stg_table_find(b->db->pool, f->name, &tid) ==
			   GPMDB_OK) {
			node = plan_scan(b, tid);
			if (!node)
				return b->db->errcode;
		} else if ((rc = find_object(b, f->name, STG_OBJ_VIEW, &sql)) ==
			   GPMDB_OK) {
			ast_name_list *vcols = NULL;
			node = plan_view(b, f->name, sql, &vcols);
			if (!node)
				return b->db->errcode;
			if (vcols && !aliases)
				aliases = vcols;
		} else if (rc == GPMDB_NOTFOUND &&
			   (rc = pragma_schema_view(b->db, f->name, &sql)) !=
			       GPMDB_NOTFOUND) {
			/* sqlite_schema: a view of the catalog */
			ast_name_list *vcols = NULL;
			char *text =
			    sql ? ast_strndup(b->a, sql, strlen(sql)) : NULL;
			free(sql);
			if (rc)
				return rc;
			if (!text)
				return db_err(b->db, GPMDB_NOMEM,
					      "out of memory");
			node = plan_view(b, f->name, text, &vcols);
			if (!node)
				return b->db->errcode;
			if (!aliases)
				aliases = vcols;
		} else if (rc == GPMDB_NOTFOUND) {
			return db_err(b->db, GPMDB_ERROR, "no such table: %s",
				      f->name);
		} else {
			return rc;
		}
		break;
	}
	}
	return add_source(b, sc, node, name, aliases, jtype, jf);
}

/* ---- aggregates ---- */

int plan_agg_slot(aggctx *ac, int fn, ast_expr *call, ast_expr *arg)
{
	for (int i = 0; i < ac->naggs; i++)
		if (ac->aggs[i].fn == fn && expr_equal(ac->calls[i], call))
			return i;
	if (ac->naggs == ac->cap) {
		int cap = ac->cap ? ac->cap * 2 : 16;
		aggdef *n = ast_alloc(ac->b->a, sizeof(aggdef) * (size_t)cap);
		ast_expr **c =
		    ast_alloc(ac->b->a, sizeof(ast_expr *) * (size_t)cap);
		if (!n || !c)
			return -1;
		if (ac->naggs) {
			memcpy(n, ac->aggs, sizeof(aggdef) * (size_t)ac->naggs);
			memcpy(c, ac->calls,
			       sizeof(ast_expr *) * (size_t)ac->naggs);
		}
		ac->aggs = n;
		ac->calls = c;
		ac->cap = cap;
	}
	ac->aggs[ac->naggs] =
	    (aggdef){fn, call->distinct, arg, NULL, expr_type(call)};
	if (fn == AGG_GROUP_CONCAT && call->list->n > 1)
		ac->aggs[ac->naggs].sep = call->list->v[1];
	ac->calls[ac->naggs] = call;
	return ac->naggs++;
}

static int agg_rewrite(aggctx *ac, ast_expr *e)
{
	einfo *in;
	int fn, slot = -1, rc;

	if (!e)
		return 0;
	for (int k = 0; k < ac->ngroup; k++)
		if (expr_equal(ac->group[k], e) && e->kind != AST_E_INT &&
		    e->kind != AST_E_NULL && e->kind != AST_E_STRING &&
		    e->kind != AST_E_REAL) {
			if (!(in = einfo_get(ac->b, e)))
				return GPMDB_NOMEM;
			in->post_col = k;
			return 0;
		}
	if (expr_is_agg_call(e, &fn)) {
		slot = plan_agg_slot(
		    ac, fn, e, e->star || !e->list ? NULL : e->list->v[0]);
	} else if (e->kind == AST_E_COLUMN && e->rel == 0) {
		slot = plan_agg_slot(ac, AGG_ANY, e, e);
	} else {
		switch (e->kind) {
		case AST_E_SUBQUERY:
		case AST_E_EXISTS:
			return 0;
		case AST_E_IN_SELECT:
			return agg_rewrite(ac, e->l);
		default:
			break;
		}
		if ((rc = agg_rewrite(ac, e->l)) ||
		    (rc = agg_rewrite(ac, e->r)) ||
		    (rc = agg_rewrite(ac, e->x)))
			return rc;
		if (e->list)
			for (int i = 0; i < e->list->n; i++)
				if ((rc = agg_rewrite(ac, e->list->v[i])))
					return rc;
		return 0;
	}
	if (slot < 0 || !(in = einfo_get(ac->b, e)))
		return db_err(ac->b->db, GPMDB_NOMEM, "out of memory");
	in->post_col = ac->ngroup + slot;
	return 0;
}

/* ---- select core ---- */

typedef struct ocol {
	ast_expr *e;
	const char *name;
} ocol;

static const char *expr_name(bctx *b, ast_expr *e)
{
	if (e->kind == AST_E_COLUMN)
		return e->name;
	if (b->sql && e->end > e->off)
		return ast_strndup(b->a, b->sql + e->off, e->end - e->off);
	char *t = ast_expr_to_sql(e);
	const char *r = t ? ast_strndup(b->a, t, strlen(t)) : "?";
	free(t);
	return r;
}

static int ordinal(bctx *b, ast_expr *e, int n, const char *what, int i, int *k)
{
	static const char *nth[] = {"1st", "2nd", "3rd"};
	char buf[16];

	if (e->kind != AST_E_INT)
		return 0;
	if (e->ival < 1 || e->ival > n) {
		if (i < 3)
			snprintf(buf, sizeof(buf), "%s", nth[i]);
		else
			snprintf(buf, sizeof(buf), "%dth", i + 1);
		return db_err(b->db, GPMDB_ERROR,
			      "%s %s term out of range - should be between 1 "
			      "and %d",
			      buf, what, n);
	}
	*k = (int)e->ival - 1;
	return 1;
}

static pnode *plan_order_limit(bctx *b, ast_select *s, pnode *node,
			       const int *sort_col, int nsort)
{
	if (nsort) {
		pnode *so = pn_unary(b, PN_SORT, node);
		if (!so)
			return NULL;
		so->nsort = nsort;
		so->sort_col = ast_alloc(b->a, sizeof(int) * (size_t)nsort);
		so->desc = ast_alloc(b->a, sizeof(bool) * (size_t)nsort);
		so->nulls_first = ast_alloc(b->a, sizeof(bool) * (size_t)nsort);
		if (!so->sort_col || !so->desc || !so->nulls_first)
			return NOMEM(b);
		for (int i = 0; i < nsort; i++) {
			ast_order_term *t = s->order_by->v[i];
			so->sort_col[i] = sort_col[i];
			so->desc[i] = t->desc;
			so->nulls_first[i] = t->nulls == AST_NULLS_DEFAULT
						 ? !t->desc
						 : t->nulls == AST_NULLS_FIRST;
		}
		node = so;
	}
	if (s->limit) {
		scope empty = {0};
		pnode *li = pn_unary(b, PN_LIMIT, node);
		if (!li || bind_expr(b, &empty, s->limit, false) ||
		    (s->offset && bind_expr(b, &empty, s->offset, false)))
			return NULL;
		li->limit = s->limit;
		li->offset = s->offset;
		node = li;
	}
	return node;
}

/* FROM and WHERE of a query core into scope sc: the joins and filters. */
pnode *plan_from_where(bctx *b, ast_select *s, scope *sc)
{
	pnode *node;
	conjv cv = {0};
	bool has_left = false;

	if (s->from && plan_from(b, sc, s->from, JOIN_INNER, NULL))
		return NULL;
	for (int i = 0; i < sc->nsrc; i++) {
		if (sc->src[i].jtype == JOIN_LEFT)
			has_left = true;
		if ((sc->src[i].using_cols || sc->src[i].natural) &&
		    plan_using(b, sc, i, &cv))
			return NULL;
	}
	/* ON and WHERE */
	for (int i = 0; i < sc->nsrc; i++) {
		ssrc *src = &sc->src[i];
		if (src->on && !src->using_cols && !src->natural &&
		    bind_expr(b, sc, src->on, false))
			return NULL;
		if (src->on && !has_left && sc->nsrc <= 64 &&
		    plan_conj_add(b, &cv, src->on))
			return NULL;
	}
	if (s->where) {
		if (bind_expr(b, sc, s->where, false))
			return NULL;
		if (plan_conj_add(b, &cv, s->where))
			return NULL;
	}
	for (int k = 0; k < cv.n; k++)
		plan_expr_mask(sc, cv.v[k].e, &cv.v[k].mask, &cv.v[k].all);
	if (!has_left && sc->nsrc > 1 && sc->nsrc <= 64 &&
	    plan_or_implied(b, sc, &cv))
		return NULL;
	if (sc->nsrc == 0) {
		node = plan_node_new(b, PN_ONE, 0);
		if (!node)
			return NOMEM(b);
		node->est = 1;
	} else if (has_left || sc->nsrc > 64) {
		conjv w = {0};
		for (int k = 0; k < cv.n; k++)
			if (plan_conj_add(b, &w, cv.v[k].e))
				return NULL;
		node = plan_join_ordered(b, sc, &w);
		cv = w;
		for (int k = 0; k < cv.n; k++) {
			if (cv.v[k].used)
				continue; /* applied by join_ordered */
			cv.v[k].mask = 0;
			cv.v[k].all = false;
			plan_expr_mask(sc, cv.v[k].e, &cv.v[k].mask,
				       &cv.v[k].all);
		}
	} else {
		node = plan_join_greedy(b, sc, &cv);
	}
	if (!node)
		return NULL;
	/* what is left: plain filters first, then the subqueries, which
	 * decor turns into joins where it can */
	for (int pass = 0; pass < 2; pass++)
		for (int k = 0; k < cv.n; k++) {
			bool done = false;
			if (cv.v[k].used || cv.v[k].all != (pass == 1))
				continue;
			if (pass == 1 &&
			    !(node = plan_decor(b, sc, node, cv.v[k].e, &done)))
				return NULL;
			if (!done)
				node =
				    plan_node_filter(b, node, cv.v[k].e, false);
			if (!node)
				return NULL;
		}
	return node;
}

static pnode *plan_core(bctx *b, ast_select *s, scope *up, bool outer)
{
	scope *sc = ast_alloc(b->a, sizeof(scope));
	pnode *node;
	ocol *oc = NULL;
	int noc = 0, cap = 0, rc;
	ast_expr **group = NULL;
	int ngroup = s->group_by ? s->group_by->n : 0;
	int nsort = outer && s->order_by ? s->order_by->n : 0;
	int *sort_col = NULL;
	ast_expr **hidden = NULL;
	int nhidden = 0;

	if (!sc)
		return NOMEM(b);
	sc->up = up;
	node = plan_from_where(b, s, sc);
	if (!node)
		goto fail;

	/* result columns, * expanded */
	for (int i = 0; i < s->cols->n; i++) {
		ast_result_col *r = s->cols->v[i];
		int from = 0, to = 0;

		if (r->expr->kind == AST_E_STAR) {
			bool found = false;
			for (int k = 0; k < sc->nsrc; k++) {
				ssrc *src = &sc->src[k];
				if (r->expr->table &&
				    (!src->name ||
				     strcasecmp(src->name, r->expr->table)))
					continue;
				found = true;
				from = src->first;
				to = src->first + src->n;
				for (int g = from; g < to; g++) {
					if (!r->expr->table &&
					    sc->cols[g].hidden)
						continue;
					if (noc == cap) {
						cap = cap ? cap * 2 : 16;
						ocol *n = ast_alloc(
						    b->a,
						    sizeof(ocol) * (size_t)cap);
						if (!n)
							goto nomem;
						if (noc)
							memcpy(n, oc,
							       sizeof(ocol) *
								   (size_t)noc);
						oc = n;
					}
					ast_expr *e = ast_expr_new(
					    b->a, AST_E_COLUMN, r->expr->off,
					    r->expr->end);
					e->name = (char *)sc->cols[g].name;
					e->table = (char *)sc->cols[g].tab;
					e->rel = 0;
					e->col = g;
					e->rtype = et_pack(sc->cols[g].ty);
					oc[noc].e = e;
					oc[noc++].name = sc->cols[g].name;
				}
			}
			if (!found && r->expr->table) {
				db_err(b->db, GPMDB_ERROR, "no such table: %s",
				       r->expr->table);
				goto fail;
			}
			if (!found && !r->expr->table) {
				db_err(b->db, GPMDB_ERROR,
				       "no tables specified");
				goto fail;
			}
			continue;
		}
		if (noc == cap) {
			cap = cap ? cap * 2 : 16;
			ocol *n = ast_alloc(b->a, sizeof(ocol) * (size_t)cap);
			if (!n)
				goto nomem;
			if (noc)
				memcpy(n, oc, sizeof(ocol) * (size_t)noc);
			oc = n;
		}
		if (bind_expr(b, sc, r->expr, true))
			goto fail;
		if (expr_type(r->expr).t == ET_INTERVAL) {
			db_err(b->db, GPMDB_ERROR,
			       "an INTERVAL is not a value");
			goto fail;
		}
		oc[noc].e = r->expr;
		oc[noc++].name = r->alias ? r->alias : expr_name(b, r->expr);
	}

	/* GROUP BY: ordinals and result aliases first */
	if (ngroup) {
		group = ast_alloc(b->a, sizeof(ast_expr *) * (size_t)ngroup);
		if (!group)
			goto nomem;
		for (int i = 0; i < ngroup; i++) {
			ast_expr *e = s->group_by->v[i];
			int k;
			rc = ordinal(b, e, noc, "GROUP BY", i, &k);
			if (rc < 0 || (rc > 0 && b->db->errcode))
				goto fail;
			if (rc > 0) {
				group[i] = oc[k].e;
				continue;
			}
			if (e->kind == AST_E_COLUMN && !e->table) {
				bool incol = false;
				for (int g = 0; g < sc->ncols; g++)
					if (!strcasecmp(sc->cols[g].name,
							e->name))
						incol = true;
				if (!incol)
					for (k = 0; k < noc; k++)
						if (s->cols->v[0] &&
						    !strcasecmp(oc[k].name,
								e->name))
							break;
				if (!incol && k < noc) {
					group[i] = oc[k].e;
					continue;
				}
			}
			if (bind_expr(b, sc, e, false))
				goto fail;
			group[i] = e;
		}
	}
	if (s->having && bind_expr(b, sc, s->having, true))
		goto fail;

	/* ORDER BY: ordinal, result name, result expression or hidden */
	if (nsort) {
		sort_col = ast_alloc(b->a, sizeof(int) * (size_t)nsort);
		hidden = ast_alloc(b->a, sizeof(ast_expr *) * (size_t)nsort);
		if (!sort_col || !hidden)
			goto nomem;
		for (int i = 0; i < nsort; i++) {
			ast_expr *e = s->order_by->v[i]->expr;
			int k = -1;
			rc = ordinal(b, e, noc, "ORDER BY", i, &k);
			if (rc > 0 && b->db->errcode)
				goto fail;
			if (rc == 0 && e->kind == AST_E_COLUMN && !e->table)
				for (int j = 0; j < noc; j++)
					if (s->cols &&
					    !strcasecmp(oc[j].name, e->name)) {
						k = j;
						break;
					}
			if (k < 0) {
				if (bind_expr(b, sc, e, true))
					goto fail;
				for (int j = 0; j < noc && k < 0; j++)
					if (expr_equal(oc[j].e, e))
						k = j;
			}
			if (k < 0) {
				k = noc + nhidden;
				hidden[nhidden++] = e;
			}
			sort_col[i] = k;
		}
	}

	int ntot = noc + nhidden;
	pnode *pj;
	if (sc->has_agg || ngroup || s->having) {
		aggctx ac = {b, sc, ngroup, group, NULL, NULL, 0, 0};
		pnode *ag;
		for (int i = 0; i < noc; i++)
			if (agg_rewrite(&ac, oc[i].e))
				goto fail;
		for (int i = 0; i < nhidden; i++)
			if (agg_rewrite(&ac, hidden[i]))
				goto fail;
		if (s->having && agg_rewrite(&ac, s->having))
			goto fail;
		/* columns used by correlated subqueries */
		for (int i = 0; i < sc->norefs; i++) {
			int g = sc->orefs[i], k;
			for (k = 0; k < ngroup; k++)
				if (group[k]->kind == AST_E_COLUMN &&
				    group[k]->rel == 0 && group[k]->col == g)
					break;
			if (k < ngroup)
				continue;
			ast_expr *e = ast_expr_new(b->a, AST_E_COLUMN, 0, 0);
			e->name = (char *)sc->cols[g].name;
			e->col = g;
			e->rtype = et_pack(sc->cols[g].ty);
			if (plan_agg_slot(&ac, AGG_ANY, e, e) < 0)
				goto nomem;
		}
		ag = plan_node_new(b, PN_AGG, ngroup + ac.naggs);
		if (!ag)
			goto nomem;
		ag->l = node;
		ag->ngroup = ngroup;
		ag->group = group;
		ag->naggs = ac.naggs;
		ag->aggs = ac.aggs;
		ag->est = ngroup ? node->est * 0.5 + 1 : 1;
		for (int k = 0; k < ngroup; k++) {
			ag->ty[k] = expr_type(group[k]);
			if (group[k]->kind == AST_E_COLUMN &&
			    group[k]->rel == 0)
				ag->g[k] = group[k]->col;
			ag->names[k] = "group";
		}
		for (int k = 0; k < ac.naggs; k++) {
			ag->ty[ngroup + k] = ac.aggs[k].res;
			if (ac.aggs[k].fn == AGG_ANY)
				ag->g[ngroup + k] = ac.aggs[k].arg->col;
			ag->names[ngroup + k] = "agg";
		}
		node = ag;
		if (s->having) {
			node = plan_node_filter(b, node, s->having, true);
			if (!node)
				goto fail;
		}
		pj = plan_node_new(b, PN_PROJECT, ntot);
		if (!pj)
			goto nomem;
		pj->post = true;
	} else {
		pj = plan_node_new(b, PN_PROJECT, ntot);
		if (!pj)
			goto nomem;
	}
	pj->l = node;
	pj->est = node->est;
	pj->nexprs = ntot;
	pj->nvis = noc;
	pj->exprs = ast_alloc(b->a, sizeof(ast_expr *) * (size_t)(ntot + 1));
	if (!pj->exprs)
		goto nomem;
	for (int i = 0; i < ntot; i++) {
		ast_expr *e = i < noc ? oc[i].e : hidden[i - noc];
		pj->exprs[i] = e;
		pj->ty[i] = expr_type(e);
		pj->names[i] = i < noc ? oc[i].name : "";
	}
	node = pj;
	if (s->distinct) {
		node = pn_unary(b, PN_DISTINCT, node);
		if (!node)
			goto fail;
	}
	if (outer)
		node = plan_order_limit(b, s, node, sort_col, nsort);
	free(sc->orefs);
	return node;
nomem:
	db_err(b->db, GPMDB_NOMEM, "out of memory");
fail:
	free(sc->orefs);
	return NULL;
}

static pnode *plan_values(bctx *b, ast_select *s, scope *up)
{
	ast_values *v = s->values;
	int nc = v->v[0]->n;
	pnode *n = plan_node_new(b, PN_VALUES, nc);
	scope sc = {0};

	if (!n)
		return NOMEM(b);
	sc.up = up;
	n->nrows = v->n;
	n->rows = v->v;
	n->est = v->n;
	for (int c = 0; c < nc; c++) {
		char *nm = ast_alloc(b->a, 24);
		if (!nm)
			return NOMEM(b);
		snprintf(nm, 24, "column%d", c + 1);
		n->names[c] = nm;
		n->ty[c] = et_make(BC_T_NULL);
	}
	for (int r = 0; r < v->n; r++) {
		if (v->v[r]->n != nc) {
			db_err(b->db, GPMDB_ERROR,
			       "all VALUES must have the same number of terms");
			return NULL;
		}
		for (int c = 0; c < nc; c++) {
			if (bind_expr(b, &sc, v->v[r]->v[c], false))
				return NULL;
			n->ty[c] = et_unify(n->ty[c], expr_type(v->v[r]->v[c]));
		}
	}
	for (int c = 0; c < nc; c++)
		n->ty[c].aff = AFF_NONE;
	return n;
}

static pnode *plan_convert(bctx *b, pnode *child, const etype *ty)
{
	bool same = true;

	for (int i = 0; i < child->nvis; i++)
		if (child->ty[i].t != ty[i].t ||
		    child->ty[i].scale != ty[i].scale)
			same = false;
	if (same && child->ncols == child->nvis)
		return child;
	pnode *n = plan_node_new(b, PN_CONVERT, child->nvis);
	if (!n)
		return NOMEM(b);
	n->l = child;
	n->est = child->est;
	for (int i = 0; i < child->nvis; i++) {
		n->ty[i] = ty[i];
		n->names[i] = child->names[i];
	}
	return n;
}

static pnode *plan_body(bctx *b, ast_select *s, scope *up, bool outer)
{
	pnode *l, *r, *n;

	switch (s->kind) {
	case AST_SEL_CORE:
		return plan_core(b, s, up, outer);
	case AST_SEL_VALUES:
		return plan_values(b, s, up);
	case AST_SEL_COMPOUND:
		break;
	}
	l = plan_body(b, s->left, up, false);
	if (!l)
		return NULL;
	r = plan_body(b, s->right, up, false);
	if (!r)
		return NULL;
	if (l->nvis != r->nvis) {
		db_err(b->db, GPMDB_ERROR,
		       "SELECTs to the left and right of %s do not have the "
		       "same number of result columns",
		       s->op == AST_UNION_ALL	? "UNION ALL"
		       : s->op == AST_UNION	? "UNION"
		       : s->op == AST_INTERSECT ? "INTERSECT"
						: "EXCEPT");
		return NULL;
	}
	etype *ty = ast_alloc(b->a, sizeof(etype) * (size_t)(l->nvis + 1));
	if (!ty)
		return NOMEM(b);
	for (int i = 0; i < l->nvis; i++) {
		ty[i] = et_unify(l->ty[i], r->ty[i]);
		ty[i].aff = AFF_NONE;
	}
	if (!(l = plan_convert(b, l, ty)) || !(r = plan_convert(b, r, ty)))
		return NULL;
	n = plan_node_new(b, PN_SETOP, l->nvis);
	if (!n)
		return NOMEM(b);
	n->l = l;
	n->r = r;
	n->op = s->op;
	n->est = l->est + r->est;
	for (int i = 0; i < l->nvis; i++) {
		n->ty[i] = ty[i];
		n->names[i] = l->names[i];
	}
	return n;
}

/* The first core of a compound (names and expressions for ORDER BY). */
static ast_select *first_core(ast_select *s)
{
	while (s->kind == AST_SEL_COMPOUND)
		s = s->left;
	return s;
}

pnode *plan_select(bctx *b, ast_select *s, scope *up)
{
	pnode *n;
	int nwith = b->nwith;

	if (++b->depth > 200) {
		db_err(b->db, GPMDB_ERROR, "subqueries nested too deep");
		return NULL;
	}
	if (s->with) {
		if (b->nwith >= 64) {
			db_err(b->db, GPMDB_ERROR, "too many nested WITH");
			return NULL;
		}
		b->with[b->nwith++] = s->with;
	}
	if (s->kind == AST_SEL_CORE) {
		n = plan_core(b, s, up, true);
	} else {
		n = plan_body(b, s, up, false);
		if (n && s->order_by) {
			int ns = s->order_by->n;
			int *sc = ast_alloc(b->a, sizeof(int) * (size_t)ns);
			ast_select *fc = first_core(s);
			if (!sc) {
				n = NOMEM(b);
				goto out;
			}
			for (int i = 0; i < ns; i++) {
				ast_expr *e = s->order_by->v[i]->expr;
				int k = -1, rc;
				rc = ordinal(b, e, n->nvis, "ORDER BY", i, &k);
				if (rc && b->db->errcode) {
					n = NULL;
					goto out;
				}
				if (k < 0 && e->kind == AST_E_COLUMN)
					for (int j = 0; j < n->nvis; j++)
						if (!strcasecmp(n->names[j],
								e->name)) {
							k = j;
							break;
						}
				if (k < 0 && fc->kind == AST_SEL_CORE &&
				    e->kind == AST_E_COLUMN) {
					/* a column of the first SELECT */
					for (int j = 0; j < fc->cols->n; j++) {
						ast_expr *x =
						    fc->cols->v[j]->expr;
						if (x->kind == AST_E_COLUMN &&
						    !strcasecmp(x->name,
								e->name) &&
						    j < n->nvis) {
							k = j;
							break;
						}
					}
				}
				if (k < 0) {
					db_err(b->db, GPMDB_ERROR,
					       "%d%s ORDER BY term does not "
					       "match any column in the result "
					       "set",
					       i + 1,
					       i == 0	? "st"
					       : i == 1 ? "nd"
					       : i == 2 ? "rd"
							: "th");
					n = NULL;
					goto out;
				}
				sc[i] = k;
			}
			n = plan_order_limit(b, s, n, sc, ns);
		} else if (n && s->limit) {
			n = plan_order_limit(b, s, n, NULL, 0);
		}
	}
out:
	b->nwith = nwith;
	b->depth--;
	if (n && (plan_index(b, n) || plan_prune(b, n)))
		return NULL;
	return n;
}

bctx plan_bctx(gpmdb_stmt *st)
{
	bctx b = {0};

	b.st = st;
	b.db = st->db;
	b.a = &st->parena;
	b.sql = st->sql;
	return b;
}

int plan_stmt_select(gpmdb_stmt *st)
{
	bctx b = plan_bctx(st);
	pnode *n;

	n = plan_select(&b, st->pr.stmt->select, NULL);
	if (!n)
		return st->db->errcode ? st->db->errcode : GPMDB_ERROR;
	st->plan = n;
	st->ncols = n->nvis;
	st->names = n->names;
	st->types = n->ty;
	return GPMDB_OK;
}

/* UPDATE and DELETE: PROJECT(rowid, exprs) over FILTER(where) over a scan
 * of the table with its row ids. */
pnode *plan_dml(bctx *b, uint32_t tid, const char *tname, ast_expr *where,
		ast_expr **exprs, int n)
{
	scope *sc = ast_alloc(b->a, sizeof(scope));
	pnode *scan, *node, *pj;

	if (!sc)
		return NOMEM(b);
	scan = plan_table_scan(b, tid, true);
	if (!scan)
		return NULL;
	if (add_source(b, sc, scan, tname, NULL, JOIN_INNER, NULL))
		return NULL;
	/* add_source numbered the visible columns, the row id included:
	 * give it back its own id and hide it from names */
	scan->g[scan->ncols - 1] = G_ROWID;
	sc->cols[sc->ncols - 1].name = "";
	node = scan;
	if (where) {
		if (bind_expr(b, sc, where, false))
			return NULL;
		node = plan_node_filter(b, node, where, false);
		if (!node)
			return NULL;
	}
	for (int i = 0; i < n; i++)
		if (bind_expr(b, sc, exprs[i], false))
			return NULL;
	pj = plan_node_new(b, PN_PROJECT, n + 1);
	if (!pj)
		return NOMEM(b);
	pj->l = node;
	pj->nexprs = n + 1;
	pj->exprs = ast_alloc(b->a, sizeof(ast_expr *) * (size_t)(n + 1));
	if (!pj->exprs)
		return NOMEM(b);
	ast_expr *rid = ast_expr_new(b->a, AST_E_COLUMN, 0, 0);
	rid->name = "rowid";
	rid->col = G_ROWID;
	rid->rtype = et_pack(et_make(BC_T_INT));
	pj->exprs[0] = rid;
	pj->ty[0] = et_make(BC_T_INT);
	for (int i = 0; i < n; i++) {
		pj->exprs[i + 1] = exprs[i];
		pj->ty[i + 1] = expr_type(exprs[i]);
	}
	free(sc->orefs);
	if (plan_index(b, pj) || plan_prune(b, pj))
		return NULL;
	return pj;
}
