/*
 * plan.c - SELECT to a tree of physical operators (pnode), and EXPLAIN.
 *
 * A query's FROM items are flattened into sources; WHERE and inner-join
 * ON conditions are split into conjuncts.  Without LEFT JOINs the joins
 * are ordered greedily: start from the smallest source, then add the
 * smallest source connected by an equality (hash join on those keys),
 * else the smallest one (cross join); conjuncts of one source filter it
 * before the joins.  With LEFT JOINs the written order is kept.
 */
#include "engine.h"
#include "value.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define NOMEM(b) (db_err((b)->db, GPMDB_NOMEM, "out of memory"), NULL)

static pnode *pn_new(bctx *b, int kind, int ncols)
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

static void pn_copy_layout(pnode *d, int at, const pnode *s)
{
	for (int i = 0; i < s->ncols; i++) {
		d->ty[at + i] = s->ty[i];
		d->g[at + i] = s->g[i];
		d->names[at + i] = s->names[i];
	}
}

static pnode *pn_unary(bctx *b, int kind, pnode *child)
{
	pnode *n = pn_new(b, kind, child->ncols);

	if (!n)
		return NOMEM(b);
	pn_copy_layout(n, 0, child);
	n->nvis = child->nvis;
	n->l = child;
	n->est = child->est;
	return n;
}

static double est_sel(const ast_expr *e);

static pnode *pn_filter(bctx *b, pnode *child, ast_expr *pred, bool post)
{
	pnode *n = pn_unary(b, PN_FILTER, child);

	if (!n)
		return NULL;
	n->pred = pred;
	n->post = post;
	n->est = child->est * est_sel(pred) + 1;
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
	n = pn_new(b, PN_SCAN, sch->ncols);
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
	m = pn_new(b, PN_SCAN, n->ncols + 1);
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
	pn_copy_layout(m, 0, n);
	m->ty[n->ncols] = et_make(BC_T_INT);
	m->g[n->ncols] = G_ROWID;
	m->names[n->ncols] = "rowid";
	return m;
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

/* ---- conjuncts ---- */

typedef struct conj {
	ast_expr *e;
	uint64_t mask;
	bool all; /* contains a subquery: apply after the joins */
	bool used;
} conj;

typedef struct conjv {
	conj *v;
	int n, cap;
} conjv;

static int conj_add(bctx *b, conjv *cv, ast_expr *e);

/* An expression that may be evaluated twice with no change in meaning:
 * columns, literals and operators (no functions, which may be random(),
 * no subqueries). */
static bool conj_pure(const ast_expr *e)
{
	if (!e)
		return true;
	switch (e->kind) {
	case AST_E_FUNC:
	case AST_E_SUBQUERY:
	case AST_E_EXISTS:
	case AST_E_IN_SELECT:
	case AST_E_STAR:
		return false;
	default:
		break;
	}
	if (!conj_pure(e->l) || !conj_pure(e->r) || !conj_pure(e->x))
		return false;
	if (e->list)
		for (int i = 0; i < e->list->n; i++)
			if (!conj_pure(e->list->v[i]))
				return false;
	return true;
}

/* Is c one of the AND-ed terms of e? */
static bool and_has(const ast_expr *e, const ast_expr *c)
{
	if (e->kind == AST_E_BINARY && e->op == AST_OP_AND)
		return and_has(e->l, c) || and_has(e->r, c);
	if (e->kind == AST_E_BINARY && e->op == AST_OP_EQ &&
	    c->kind == AST_E_BINARY && c->op == AST_OP_EQ &&
	    expr_equal(e->l, c->r) && expr_equal(e->r, c->l))
		return true; /* a = b and b = a */
	return expr_equal(e, c);
}

/* Is c an AND-ed term of every OR-ed term of e? */
static bool or_all_have(const ast_expr *e, const ast_expr *c)
{
	if (e->kind == AST_E_BINARY && e->op == AST_OP_OR)
		return or_all_have(e->l, c) && or_all_have(e->r, c);
	return and_has(e, c);
}

/* (A AND x) OR (A AND y): A is also added as a conjunct of its own (the
 * OR stays), so that it can be a join key or filter one source early.
 * TPC-H Q19 repeats its join equality in each OR-ed term; without this
 * it is a cross join.  d walks the terms of the first OR-ed term. */
static int or_factor(bctx *b, conjv *cv, const ast_expr *orx, ast_expr *d)
{
	if (d->kind == AST_E_BINARY && d->op == AST_OP_AND) {
		int rc = or_factor(b, cv, orx, d->l);
		return rc ? rc : or_factor(b, cv, orx, d->r);
	}
	if (!conj_pure(d) || !or_all_have(orx, d))
		return 0;
	for (int k = 0; k < cv->n; k++)
		if (expr_equal(cv->v[k].e, d))
			return 0;
	return conj_add(b, cv, d);
}

static int conj_add(bctx *b, conjv *cv, ast_expr *e)
{
	if (e->kind == AST_E_BINARY && e->op == AST_OP_AND) {
		int rc = conj_add(b, cv, e->l);
		return rc ? rc : conj_add(b, cv, e->r);
	}
	if (e->kind == AST_E_BINARY && e->op == AST_OP_OR) {
		ast_expr *first = e;
		int rc;
		while (first->kind == AST_E_BINARY && first->op == AST_OP_OR)
			first = first->l;
		if ((rc = or_factor(b, cv, e, first)))
			return rc;
	}
	if (cv->n == cv->cap) {
		int cap = cv->cap ? cv->cap * 2 : 16;
		conj *n = ast_alloc(b->a, sizeof(conj) * (size_t)cap);
		if (!n)
			return db_err(b->db, GPMDB_NOMEM, "out of memory");
		if (cv->n)
			memcpy(n, cv->v, sizeof(conj) * (size_t)cv->n);
		cv->v = n;
		cv->cap = cap;
	}
	cv->v[cv->n++] = (conj){e, 0, false, false};
	return 0;
}

static int src_of(const scope *sc, int g)
{
	for (int i = 0; i < sc->nsrc; i++)
		if (g >= sc->src[i].first &&
		    g < sc->src[i].first + sc->src[i].n)
			return i;
	return -1;
}

static void expr_mask(const scope *sc, const ast_expr *e, uint64_t *mask,
		      bool *all)
{
	if (!e)
		return;
	switch (e->kind) {
	case AST_E_COLUMN:
		if (e->rel == 0) {
			int s = src_of(sc, e->col);
			if (s >= 0 && s < 64)
				*mask |= 1ull << s;
			else
				*all = true;
		}
		return;
	case AST_E_SUBQUERY:
	case AST_E_EXISTS:
	case AST_E_IN_SELECT:
		*all = true;
		break;
	default:
		break;
	}
	expr_mask(sc, e->l, mask, all);
	expr_mask(sc, e->r, mask, all);
	expr_mask(sc, e->x, mask, all);
	if (e->list)
		for (int i = 0; i < e->list->n; i++)
			expr_mask(sc, e->list->v[i], mask, all);
}

static ast_expr *and_of(bctx *b, ast_expr *a, ast_expr *e)
{
	ast_expr *r;

	if (!a)
		return e;
	r = ast_binary(b->a, AST_OP_AND, a, e);
	r->rtype = et_pack(et_make(BC_T_BOOL));
	return r;
}

static bool hashable(etype a, etype b)
{
	if (a.t != b.t || a.t == BC_T_NULL || a.t == ET_INTERVAL)
		return false;
	return a.t != BC_T_DEC || a.scale == b.scale;
}

/* An equality usable as hash key between sets lm and rm: *lk is the side
 * over lm. */
static bool equi_key(const scope *sc, conj *c, uint64_t lm, uint64_t rm,
		     ast_expr **lk, ast_expr **rk)
{
	uint64_t ml = 0, mr = 0;
	bool al = false, ar = false;
	ast_expr *e = c->e;

	if (c->all || e->kind != AST_E_BINARY || e->op != AST_OP_EQ)
		return false;
	expr_mask(sc, e->l, &ml, &al);
	expr_mask(sc, e->r, &mr, &ar);
	if (al || ar || !ml || !mr ||
	    !hashable(expr_type(e->l), expr_type(e->r)))
		return false;
	if ((ml & ~lm) == 0 && (mr & ~rm) == 0) {
		*lk = e->l;
		*rk = e->r;
		return true;
	}
	if ((mr & ~lm) == 0 && (ml & ~rm) == 0) {
		*lk = e->r;
		*rk = e->l;
		return true;
	}
	return false;
}

static pnode *pn_join(bctx *b, pnode *l, pnode *r, int jtype)
{
	pnode *n = pn_new(b, PN_JOIN, l->ncols + r->ncols);

	if (!n)
		return NOMEM(b);
	pn_copy_layout(n, 0, l);
	pn_copy_layout(n, l->ncols, r);
	n->l = l;
	n->r = r;
	n->jtype = jtype;
	n->lkeys = ast_alloc(b->a, sizeof(ast_expr *) * 64);
	n->rkeys = ast_alloc(b->a, sizeof(ast_expr *) * 64);
	if (!n->lkeys || !n->rkeys)
		return NOMEM(b);
	return n;
}

/* ---- cardinality estimates for the join order ---- */

/*
 * Without statistics, a join's size is guessed from distinct counts of
 * its key columns: |L join R| = |L| |R| / max(ndv_L(k), ndv_R(k)).  A
 * table column's distinct count is guessed from up to EST_SAMPLE rows
 * spread over the table (read at plan time through the tablet views): a
 * column whose sampled values all differ looks like a key (ndv = rows).
 * Columns equated by the query's equalities form classes; a class with
 * a key-looking member is a foreign key into it, so no member has more
 * distinct values than that key's table has rows (TPC-H declares no
 * keys: c_nationkey = s_nationkey = n_nationkey has at most 25).
 */
#define EST_SAMPLE 512

typedef struct est_ctx {
	bctx *b;
	const scope *sc;
	int ncols;
	double
	    *ndv; /* per scope column: guessed distinct values, < 0: unknown */
	bool *uniq; /* looks like a key of its table */
	int *cls;   /* union-find over scope columns */
	double *bound;
} est_ctx;

static int est_find(est_ctx *ec, int g)
{
	while (ec->cls[g] != g)
		g = ec->cls[g] = ec->cls[ec->cls[g]];
	return g;
}

static int ndv_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Guessed distinct values of column tc (storage type st) of table tid with
 * rows live rows; < 0 when the type is not sampled (text, booleans). */
static double est_sample(gpmdb *db, uint32_t tid, int tc, int st, double rows,
			 bool *uniq)
{
	uint64_t vals[EST_SAMPLE], total = stg_row_count(db->pool, tid), base;
	uint64_t want, next = 0, k = 0, n = 0;
	uint32_t nt;
	size_t w;

	*uniq = false;
	if (st == STG_T_TEXT || st == STG_T_BOOLEAN || total == 0 ||
	    stg_tablet_count(db->pool, tid, &nt))
		return -1;
	w = stg_type_width((stg_type)st);
	want = total < EST_SAMPLE ? total : EST_SAMPLE;
	base = 0;
	for (uint32_t t = 0; t < nt && k < want; t++) {
		stg_tablet_view v;
		if (stg_tablet_get(db->pool, tid, t, &v))
			return -1;
		/* the k-th sample is row k * total / want */
		while (k < want && next < base + v.nrows) {
			uint32_t i = (uint32_t)(next - base);
			const char *src =
			    (const char *)v.data[tc] + (size_t)i * w;
			bool dead =
			    v.deleted && (v.deleted[i / 32] >> (i % 32) & 1);
			bool null = v.nulls && v.nulls[tc] &&
				    (v.nulls[tc][i / 32] >> (i % 32) & 1);
			if (!dead && !null) {
				uint64_t x = 0;
				if (w == 4) {
					int32_t y;
					memcpy(&y, src, 4);
					x = (uint64_t)(int64_t)y;
				} else {
					memcpy(&x, src, 8);
				}
				vals[n++] = x;
			}
			k++;
			next = k * total / want;
		}
		base += v.nrows;
	}
	if (n < 2)
		return rows;
	qsort(vals, n, sizeof(vals[0]), ndv_cmp);
	double d = 0, f1 = 0;
	for (uint64_t i = 0; i < n;) {
		uint64_t j = i + 1;
		while (j < n && vals[j] == vals[i])
			j++;
		d++;
		f1 += j - i == 1;
		i = j;
	}
	if (d == (double)n) {
		*uniq = true;
		return rows;
	}
	/* GEE: singletons stand for the unseen values, scaled */
	double g = sqrt(rows / (double)n) * f1 + (d - f1);
	return g < d ? d : g > rows ? rows : g;
}

/* The scan under a source's node (filters over it), or NULL. */
static const pnode *est_scan(const pnode *n)
{
	while (n && n->kind == PN_FILTER)
		n = n->l;
	return n && n->kind == PN_SCAN && !n->rowid ? n : NULL;
}

static double est_col_ndv(est_ctx *ec, int g)
{
	if (ec->ndv[g] == -2) { /* not looked at yet */
		int s = src_of(ec->sc, g);
		const pnode *scan =
		    s >= 0 ? est_scan(ec->sc->src[s].node) : NULL;
		int tc = s >= 0 ? g - ec->sc->src[s].first : -1;
		ec->ndv[g] = -1;
		if (scan && !scan->tcol && tc >= 0 && tc < scan->ntcols)
			ec->ndv[g] = est_sample(ec->b->db, scan->table_id, tc,
						scan->stype[tc], scan->est,
						&ec->uniq[g]);
	}
	return ec->ndv[g];
}

static int est_init(est_ctx *ec, bctx *b, const scope *sc, const conjv *cv)
{
	int n = sc->ncols;
	bool *key;

	ec->b = b;
	ec->sc = sc;
	ec->ncols = n;
	ec->ndv = ast_alloc(b->a, sizeof(double) * (size_t)(n + 1));
	ec->uniq = ast_alloc(b->a, sizeof(bool) * (size_t)(n + 1));
	ec->cls = ast_alloc(b->a, sizeof(int) * (size_t)(n + 1));
	ec->bound = ast_alloc(b->a, sizeof(double) * (size_t)(n + 1));
	key = ast_alloc(b->a, sizeof(bool) * (size_t)(n + 1));
	if (!ec->ndv || !ec->uniq || !ec->cls || !ec->bound || !key)
		return db_err(b->db, GPMDB_NOMEM, "out of memory");
	for (int g = 0; g < n; g++) {
		ec->ndv[g] = -2;
		ec->cls[g] = g;
		ec->bound[g] = -1;
	}
	/* classes of columns equated between sources */
	for (int k = 0; k < cv->n; k++) {
		const ast_expr *e = cv->v[k].e;
		if (cv->v[k].all || e->kind != AST_E_BINARY ||
		    e->op != AST_OP_EQ || e->l->kind != AST_E_COLUMN ||
		    e->r->kind != AST_E_COLUMN || e->l->rel || e->r->rel ||
		    e->l->col < 0 || e->r->col < 0 || e->l->col >= n ||
		    e->r->col >= n)
			continue;
		int x = est_find(ec, e->l->col), y = est_find(ec, e->r->col);
		if (x != y)
			ec->cls[x] = y;
		key[e->l->col] = key[e->r->col] = true;
	}
	/* a key-looking member bounds its class: a foreign key into it
	 * (only join columns are sampled) */
	for (int g = 0; g < n; g++) {
		if (!key[g])
			continue;
		double d = est_col_ndv(ec, g);
		int c = est_find(ec, g);
		if (d >= 0 && ec->uniq[g] &&
		    (ec->bound[c] < 0 || d < ec->bound[c]))
			ec->bound[c] = d;
	}
	return GPMDB_OK;
}

/* Distinct values of key expression e on a side of rows rows. */
static double est_ndv(est_ctx *ec, const ast_expr *e, double rows)
{
	double d = rows;

	if (e->kind == AST_E_COLUMN && e->rel == 0 && e->col >= 0 &&
	    e->col < ec->ncols) {
		double c = est_col_ndv(ec, e->col);
		double bd = ec->bound[est_find(ec, e->col)];
		if (c >= 0 && c < d)
			d = c;
		if (bd >= 0 && bd < d)
			d = bd;
	}
	return d < 1 ? 1 : d;
}

/* Selectivity guess of a filter condition. */
static double est_sel(const ast_expr *e)
{
	if (!e)
		return 1;
	switch (e->kind) {
	case AST_E_BINARY:
		switch (e->op) {
		case AST_OP_AND:
			return est_sel(e->l) * est_sel(e->r);
		case AST_OP_OR: {
			double s = est_sel(e->l) + est_sel(e->r);
			return s > 1 ? 1 : s;
		}
		case AST_OP_EQ:
		case AST_OP_IS:
			return 0.1;
		case AST_OP_NE:
		case AST_OP_ISNOT:
			return 0.9;
		default:
			return 0.3;
		}
	case AST_E_IN_LIST: {
		double s = 0.1 * (e->list ? e->list->n : 1);
		s = s > 0.5 ? 0.5 : s;
		return e->negated ? 1 - s : s;
	}
	case AST_E_LIKE:
		return e->negated ? 0.8 : 0.2;
	case AST_E_BETWEEN:
		return e->negated ? 0.75 : 0.25;
	case AST_E_ISNULL:
		return e->negated ? 0.9 : 0.1;
	default:
		return 0.3;
	}
}

/* Estimated rows of joining the set inset (lrows rows) with source i
 * (rrows rows) on the conjuncts that become keys or residuals. */
static double est_join(est_ctx *ec, conjv *cv, uint64_t inset, int i,
		       double lrows, double rrows)
{
	uint64_t bit = 1ull << i;
	double maxd = 1, prod = 1, sel = 1;
	bool key = false;

	for (int k = 0; k < cv->n; k++) {
		conj *c = &cv->v[k];
		ast_expr *lk, *rk;
		if (c->used || c->all || (c->mask & ~(inset | bit)) ||
		    !(c->mask & bit))
			continue;
		if (equi_key(ec->sc, c, inset, bit, &lk, &rk)) {
			double dl = est_ndv(ec, lk, lrows),
			       dr = est_ndv(ec, rk, rrows);
			double d = dl > dr ? dl : dr;
			key = true;
			maxd = d > maxd ? d : maxd;
			prod *= d;
		} else {
			sel *= est_sel(c->e);
		}
	}
	if (!key)
		return lrows * rrows * sel;
	/* several keys: independent, but never more selective than a key
	 * of the smaller side (a composite foreign key: each row of the
	 * larger side meets one row of the smaller, as lineitem's
	 * (partkey, suppkey) meets partsupp) */
	double small = lrows < rrows ? lrows : rrows;
	double den = prod < small ? prod : small;
	if (den < maxd)
		den = maxd;
	return lrows * rrows / den * sel;
}

/* The greedy order from source start: at each step the source whose join
 * with the set so far is estimated smallest (one connected by an equality
 * if any); returns the sum of the intermediate sizes, order in ord. */
static double est_order(est_ctx *ec, conjv *cv, int ns, const double *est,
			int start, int *ord, double *sizes)
{
	uint64_t all = ns == 64 ? ~0ull : (1ull << ns) - 1;
	uint64_t inset = 1ull << start;
	double rows = est[start], cost = 0;
	int k = 0;

	ord[k] = start;
	sizes[k++] = rows;
	while (inset != all) {
		int best = -1;
		double bsz = 0;
		bool bkey = false;
		for (int i = 0; i < ns; i++) {
			ast_expr *lk, *rk;
			bool key = false;
			if (inset & (1ull << i))
				continue;
			for (int c = 0; c < cv->n && !key; c++)
				key = !cv->v[c].used &&
				      equi_key(ec->sc, &cv->v[c], inset,
					       1ull << i, &lk, &rk);
			double sz = est_join(ec, cv, inset, i, rows, est[i]);
			/* a cross join only when nothing is connected */
			if (best < 0 || (key && !bkey) ||
			    (key == bkey && sz < bsz)) {
				best = i;
				bsz = sz;
				bkey = key;
			}
		}
		inset |= 1ull << best;
		rows = bsz < 1 ? 1 : bsz;
		cost += rows;
		ord[k] = best;
		sizes[k++] = rows;
	}
	return cost;
}

/* Conjunct c over the sources `have` and `bit` goes to join j: a hash
 * key when it equates an expression of each side, else its residual. */
static void join_take(bctx *b, const scope *sc, pnode *j, conj *c,
		      uint64_t have, uint64_t bit)
{
	ast_expr *lk, *rk;

	if (j->nkeys < 64 && equi_key(sc, c, have, bit, &lk, &rk)) {
		j->lkeys[j->nkeys] = lk;
		j->rkeys[j->nkeys++] = rk;
	} else {
		j->pred = and_of(b, j->pred, c->e);
	}
}

/* The AND of e's AND-ed terms that read source set `bit` alone (pure
 * ones: they are evaluated twice), or NULL. */
static ast_expr *and_only(bctx *b, const scope *sc, ast_expr *e, uint64_t bit)
{
	uint64_t m = 0;
	bool all = false;

	if (e->kind == AST_E_BINARY && e->op == AST_OP_AND) {
		ast_expr *l = and_only(b, sc, e->l, bit);
		ast_expr *r = and_only(b, sc, e->r, bit);
		return l && r ? and_of(b, l, r) : l ? l : r;
	}
	expr_mask(sc, e, &m, &all);
	return !all && m == bit && conj_pure(e) ? e : NULL;
}

/* For an OR of terms each of which has AND-ed terms over `bit` alone,
 * the OR of those: implied by e, it filters that source before the
 * joins.  NULL when some OR-ed term says nothing about the source. */
static ast_expr *or_implied_for(bctx *b, const scope *sc, ast_expr *e,
				uint64_t bit)
{
	if (e->kind == AST_E_BINARY && e->op == AST_OP_OR) {
		ast_expr *l = or_implied_for(b, sc, e->l, bit);
		ast_expr *r = l ? or_implied_for(b, sc, e->r, bit) : NULL;
		ast_expr *o;
		if (!r)
			return NULL;
		o = ast_binary(b->a, AST_OP_OR, l, r);
		if (o)
			o->rtype = et_pack(et_make(BC_T_BOOL));
		return o;
	}
	return and_only(b, sc, e, bit);
}

/* (A1 AND B1) OR (A2 AND B2) over sources a and b: (A1 OR A2) filters a
 * and (B1 OR B2) filters b before the joins; the OR stays as it is.
 * TPC-H Q7 keeps 2 of 25 nations on each side, Q19 a few parts and
 * lineitems, instead of joining everything first. */
static int or_implied(bctx *b, const scope *sc, conjv *cv)
{
	int n0 = cv->n;

	for (int k = 0; k < n0; k++) {
		conj c = cv->v[k];
		if (c.all || c.e->kind != AST_E_BINARY ||
		    c.e->op != AST_OP_OR || !(c.mask & (c.mask - 1)))
			continue;
		for (int s = 0; s < sc->nsrc && s < 64; s++) {
			uint64_t bit = 1ull << s;
			ast_expr *d;
			int n1 = cv->n;
			if (!(c.mask & bit) ||
			    !(d = or_implied_for(b, sc, c.e, bit)))
				continue;
			if (conj_add(b, cv, d))
				return -1;
			for (int q = n1; q < cv->n; q++)
				cv->v[q].mask = 0, cv->v[q].all = false,
				expr_mask(sc, cv->v[q].e, &cv->v[q].mask,
					  &cv->v[q].all);
		}
	}
	return 0;
}

/* The conjunct's sources, computed again (its scope may have grown). */
static void conj_mask(const scope *sc, conj *c)
{
	c->mask = 0;
	c->all = false;
	expr_mask(sc, c->e, &c->mask, &c->all);
}

/* WHERE conjuncts (and inner ON ones) over sources in `have` alone that
 * no step used yet, as filters over node: see join_ordered. */
static pnode *ordered_filters(bctx *b, const scope *sc, conjv *where,
			      pnode *node, uint64_t have)
{
	for (int k = 0; k < where->n && node; k++) {
		conj *c = &where->v[k];
		if (c->used)
			continue;
		conj_mask(sc, c);
		if (c->all || !c->mask || (c->mask & ~have))
			continue;
		node = pn_filter(b, node, c->e, false);
		c->used = true;
	}
	return node;
}

/*
 * Joins built in the written order (LEFT JOIN present).  WHERE conjuncts
 * and inner joins' ON conjuncts are applied at the first step where all
 * their sources are in: a filter over the rows so far commutes with the
 * joins after it (inner ones, and LEFT ones, whose left rows it reads),
 * so this is the result of filtering after the last join, without the
 * cross products that left inner joins keyless (a three-way `a JOIN b ON
 * ... LEFT JOIN c` ran out of memory).  At an inner join they are its
 * keys or residual, or filter its right source alone; at a LEFT join
 * they filter its output (never its right source: that would keep rows
 * the WHERE drops).  The rest (subqueries, outer references, sources
 * past 64) stay for the caller.
 */
static pnode *join_ordered(bctx *b, scope *sc, conjv *where)
{
	pnode *node = sc->src[0].node;
	uint64_t inset = 1;

	if (sc->nsrc <= 64 &&
	    !(node = ordered_filters(b, sc, where, node, inset)))
		return NULL;
	for (int i = 1; i < sc->nsrc; i++) {
		ssrc *s = &sc->src[i];
		conjv on = {0};
		pnode *j, *r = s->node;
		uint64_t bit = i < 64 ? 1ull << i : 0;
		bool left = s->jtype == JOIN_LEFT;

		if (s->on && conj_add(b, &on, s->on))
			return NULL;
		if (!left && s->on) {
			/* inner ON: same as WHERE */
			for (int k = 0; k < on.n; k++)
				if (conj_add(b, where, on.v[k].e))
					return NULL;
			on.n = 0;
		}
		/* inner: conjuncts of this source alone filter it first */
		if (!left && bit &&
		    !(r = ordered_filters(b, sc, where, r, bit)))
			return NULL;
		/* LEFT: an ON conjunct over the right source alone filters
		 * it first (a right row it rejects matches no left row) */
		for (int k = 0; k < on.n; k++) {
			conj *c = &on.v[k];
			expr_mask(sc, c->e, &c->mask, &c->all);
			if (bit && !c->all && c->mask == bit &&
			    conj_pure(c->e)) {
				if (!(r = pn_filter(b, r, c->e, false)))
					return NULL;
				c->used = true;
			}
		}
		j = pn_join(b, node, r, left ? JOIN_LEFT : JOIN_INNER);
		if (!j)
			return NULL;
		for (int k = 0; k < on.n; k++) {
			conj *c = &on.v[k];
			if (!c->used)
				join_take(b, sc, j, c, inset, bit);
		}
		/* inner: what joins this source to those before */
		for (int k = 0; !left && bit && k < where->n; k++) {
			conj *c = &where->v[k];
			if (c->used)
				continue;
			conj_mask(sc, c);
			if (c->all || !(c->mask & bit) ||
			    (c->mask & ~(inset | bit)))
				continue;
			join_take(b, sc, j, c, inset, bit);
			c->used = true;
		}
		j->est = node->est * (j->nkeys ? 1 : r->est);
		node = j;
		inset |= bit;
		/* LEFT: WHERE conjuncts that read its right side filter its
		 * output */
		if (left && bit &&
		    !(node = ordered_filters(b, sc, where, node, inset)))
			return NULL;
	}
	return node;
}

static pnode *join_greedy(bctx *b, scope *sc, conjv *cv)
{
	int ns = sc->nsrc;
	pnode *node;
	uint64_t inset;
	double est[64], sizes[64], bsizes[64], bcost = -1;
	pnode *srcn[64];
	int ord[64], bord[64] = {0};
	est_ctx ec;

	for (int i = 0; i < ns; i++) {
		srcn[i] = sc->src[i].node;
		est[i] = srcn[i]->est;
	}
	/* single-source conjuncts filter their source */
	for (int k = 0; k < cv->n; k++) {
		conj *c = &cv->v[k];
		if (c->all || __builtin_popcountll(c->mask) > 1)
			continue;
		int s = c->mask ? __builtin_ctzll(c->mask) : 0;
		srcn[s] = pn_filter(b, srcn[s], c->e, false);
		if (!srcn[s])
			return NULL;
		est[s] = srcn[s]->est;
		c->used = true;
	}
	if (ns == 1)
		return srcn[0];
	/* the greedy order from each start; the one with the smallest sum of
	 * estimated intermediate results wins (ties: the smaller start) */
	if (est_init(&ec, b, sc, cv))
		return NULL;
	for (int s = 0; s < ns; s++) {
		double cost = est_order(&ec, cv, ns, est, s, ord, sizes);
		if (bcost < 0 || cost < bcost ||
		    (cost == bcost && est[s] < est[bord[0]])) {
			bcost = cost;
			memcpy(bord, ord, sizeof(int) * (size_t)ns);
			memcpy(bsizes, sizes, sizeof(double) * (size_t)ns);
		}
	}
	node = srcn[bord[0]];
	inset = 1ull << bord[0];
	for (int step = 1; step < ns; step++) {
		int best = bord[step];
		pnode *j = pn_join(b, node, srcn[best], JOIN_INNER);
		if (!j)
			return NULL;
		uint64_t bit = 1ull << best;
		for (int k = 0; k < cv->n; k++) {
			conj *c = &cv->v[k];
			if (c->used || c->all || (c->mask & ~(inset | bit)))
				continue;
			join_take(b, sc, j, c, inset, bit);
			c->used = true;
		}
		j->jtype = j->nkeys || j->pred ? JOIN_INNER : JOIN_CROSS;
		j->est = bsizes[step];
		node = j;
		inset |= bit;
	}
	return node;
}

/* USING and NATURAL: equalities between the right source and the
 * sources before it; the right columns are hidden from unqualified
 * names. */
static int plan_using(bctx *b, scope *sc, int si, conjv *extra)
{
	ssrc *s = &sc->src[si];
	ast_name_list nat = {0};
	ast_name_list *names = s->using_cols;

	if (s->natural) {
		names = &nat;
		for (int i = 0; i < s->n; i++) {
			scol *rc = &sc->cols[s->first + i];
			for (int j = 0; j < s->first; j++)
				if (!sc->cols[j].hidden &&
				    !strcasecmp(sc->cols[j].name, rc->name)) {
					ast_name_list_add(b->a, &nat,
							  (char *)rc->name);
					break;
				}
		}
	}
	if (!names)
		return 0;
	for (int k = 0; k < names->n; k++) {
		int lg = -1, rg = -1;
		for (int j = 0; j < s->first; j++)
			if (!sc->cols[j].hidden &&
			    !strcasecmp(sc->cols[j].name, names->v[k]))
				lg = j;
		for (int i = 0; i < s->n; i++)
			if (!strcasecmp(sc->cols[s->first + i].name,
					names->v[k]))
				rg = s->first + i;
		if (lg < 0 || rg < 0)
			return db_err(b->db, GPMDB_ERROR,
				      "cannot join using column %s - column "
				      "not present in both tables",
				      names->v[k]);
		sc->cols[rg].hidden = true;
		ast_expr *l = ast_expr_new(b->a, AST_E_COLUMN, 0, 0);
		ast_expr *r = ast_expr_new(b->a, AST_E_COLUMN, 0, 0);
		l->name = (char *)sc->cols[lg].name;
		r->name = (char *)sc->cols[rg].name;
		l->col = lg;
		r->col = rg;
		l->rtype = et_pack(sc->cols[lg].ty);
		r->rtype = et_pack(sc->cols[rg].ty);
		ast_expr *eq = ast_binary(b->a, AST_OP_EQ, l, r);
		eq->rtype = et_pack(et_make(BC_T_BOOL));
		if (s->jtype == JOIN_LEFT) {
			s->on = and_of(b, s->on, eq);
		} else if (conj_add(b, extra, eq)) {
			return b->db->errcode;
		}
	}
	return 0;
}

/* ---- aggregates ---- */

typedef struct aggctx {
	bctx *b;
	scope *sc;
	int ngroup;
	ast_expr **group;
	aggdef *aggs;
	ast_expr **calls; /* the call (or column) of each aggregate */
	int naggs, cap;
} aggctx;

static int agg_slot(aggctx *ac, int fn, ast_expr *call, ast_expr *arg)
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
		slot = agg_slot(ac, fn, e,
				e->star || !e->list ? NULL : e->list->v[0]);
	} else if (e->kind == AST_E_COLUMN && e->rel == 0) {
		slot = agg_slot(ac, AGG_ANY, e, e);
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

static const char *agg_name(int fn);

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
		return agg_slot(ac, fn, e,
				e->star || !e->list ? NULL : e->list->v[0]) < 0
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
		c = col_ref(b, gids[k], t, agg_name(fn));
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

static pnode *plan_from_where(bctx *b, ast_select *s, scope *sc);

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
		w = and_of(b, w, keep[i]);
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
	pnode *n = pn_join(b, l, r, jt);

	if (!n)
		return NULL;
	if (semi) { /* the output is the left columns */
		pnode *pair = n;
		n = pn_new(b, PN_JOIN, l->ncols);
		if (!n)
			return NOMEM(b);
		pn_copy_layout(n, 0, l);
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
static pnode *decor(bctx *b, scope *sc, pnode *node, ast_expr *e, bool *done)
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
		    !hashable(expr_type(lhs), p->ty[0]))
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
			if (in && hashable(expr_type(in), expr_type(out))) {
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
		if (!hashable(expr_type(lhs), expr_type(val)))
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
		pnode *pj = pn_new(b, PN_PROJECT, nk + m.n);
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
			j->pred = and_of(b, j->pred, c);
		}
		return j;
	}

	/* scalar: GROUP BY the inner keys, the aggregates of the value */
	aggctx ac = {b, NULL, 0, NULL, NULL, NULL, 0, 0};
	if (agg_collect(&ac, val))
		return NULL;
	pnode *ag = pn_new(b, PN_AGG, nk + ac.naggs);
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
	return pn_filter(b, j, ne, false);
}

/* FROM and WHERE of a query core into scope sc: the joins and filters. */
static pnode *plan_from_where(bctx *b, ast_select *s, scope *sc)
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
		    conj_add(b, &cv, src->on))
			return NULL;
	}
	if (s->where) {
		if (bind_expr(b, sc, s->where, false))
			return NULL;
		if (conj_add(b, &cv, s->where))
			return NULL;
	}
	for (int k = 0; k < cv.n; k++)
		expr_mask(sc, cv.v[k].e, &cv.v[k].mask, &cv.v[k].all);
	if (!has_left && sc->nsrc > 1 && sc->nsrc <= 64 &&
	    or_implied(b, sc, &cv))
		return NULL;
	if (sc->nsrc == 0) {
		node = pn_new(b, PN_ONE, 0);
		if (!node)
			return NOMEM(b);
		node->est = 1;
	} else if (has_left || sc->nsrc > 64) {
		conjv w = {0};
		for (int k = 0; k < cv.n; k++)
			if (conj_add(b, &w, cv.v[k].e))
				return NULL;
		node = join_ordered(b, sc, &w);
		cv = w;
		for (int k = 0; k < cv.n; k++) {
			if (cv.v[k].used)
				continue; /* applied by join_ordered */
			cv.v[k].mask = 0;
			cv.v[k].all = false;
			expr_mask(sc, cv.v[k].e, &cv.v[k].mask, &cv.v[k].all);
		}
	} else {
		node = join_greedy(b, sc, &cv);
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
			    !(node = decor(b, sc, node, cv.v[k].e, &done)))
				return NULL;
			if (!done)
				node = pn_filter(b, node, cv.v[k].e, false);
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
			if (agg_slot(&ac, AGG_ANY, e, e) < 0)
				goto nomem;
		}
		ag = pn_new(b, PN_AGG, ngroup + ac.naggs);
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
			node = pn_filter(b, node, s->having, true);
			if (!node)
				goto fail;
		}
		pj = pn_new(b, PN_PROJECT, ntot);
		if (!pj)
			goto nomem;
		pj->post = true;
	} else {
		pj = pn_new(b, PN_PROJECT, ntot);
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
	pnode *n = pn_new(b, PN_VALUES, nc);
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
	pnode *n = pn_new(b, PN_CONVERT, child->nvis);
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
	n = pn_new(b, PN_SETOP, l->nvis);
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
	pn_copy_layout(j, 0, n->l);
	pn_copy_layout(j, n->l->ncols, n->r);
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
	pn_copy_layout(n, 0, n->l);
	return GPMDB_OK;
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
		if ((rc = prune_node(b, n->l, ln)))
			return rc;
		/* a filter passes its input's rows on: same layout */
		n->ncols = n->l->ncols;
		n->nvis = n->l->nvis;
		pn_copy_layout(n, 0, n->l);
		return GPMDB_OK;
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
static int plan_prune(bctx *b, pnode *root)
{
	uint8_t *need = prune_need(b, root, true);

	if (!need)
		return db_err(b->db, GPMDB_NOMEM, "out of memory");
	return prune_node(b, root, need);
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

/* ---- EXPLAIN ---- */

typedef struct sbuf {
	char *p;
	size_t n, cap;
	bool fail;
	bool backends; /* EXPLAIN: each node's backend (exec_gpu_annotate) */
	bool analyze;  /* EXPLAIN ANALYZE: each node's figures of the run */
} sbuf;

static void sb_printf(sbuf *s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void sb_printf(sbuf *s, const char *fmt, ...)
{
	va_list ap;
	int k;

	if (s->fail)
		return;
	for (;;) {
		va_start(ap, fmt);
		k = vsnprintf(s->p ? s->p + s->n : NULL,
			      s->p ? s->cap - s->n : 0, fmt, ap);
		va_end(ap);
		if (k < 0) {
			s->fail = true;
			return;
		}
		if (s->p && s->n + (size_t)k < s->cap) {
			s->n += (size_t)k;
			return;
		}
		size_t cap = s->cap ? s->cap * 2 : 1024;
		while (cap < s->n + (size_t)k + 1)
			cap *= 2;
		char *np = realloc(s->p, cap);
		if (!np) {
			s->fail = true;
			return;
		}
		s->p = np;
		s->cap = cap;
	}
}

static void sb_expr(sbuf *s, const ast_expr *e)
{
	char *t = ast_expr_to_sql(e);

	sb_printf(s, "%s", t ? t : "?");
	free(t);
}

static const char *agg_name(int fn)
{
	static const char *n[] = {"count(*)", "count",	      "sum",
				  "avg",      "min",	      "max",
				  "total",    "group_concat", "any"};
	return n[fn];
}

/* Calls fn for each subquery plan that e evaluates (not those of parts
 * read from the input: post_col under post, as compile.c reads them). */
static void explain_expr_subs(const ast_expr *e, bool post,
			      void (*fn)(pnode *, const einfo *, void *),
			      void *arg)
{
	const einfo *in;

	if (!e)
		return;
	in = e->bind;
	if (post && in && in->post_col >= 0)
		return;
	if (in && in->sub &&
	    (e->kind == AST_E_SUBQUERY || e->kind == AST_E_EXISTS ||
	     e->kind == AST_E_IN_SELECT))
		fn(in->sub, in, arg);
	explain_expr_subs(e->l, post, fn, arg);
	explain_expr_subs(e->r, post, fn, arg);
	explain_expr_subs(e->x, post, fn, arg);
	for (int i = 0; e->list && i < e->list->n; i++)
		explain_expr_subs(e->list->v[i], post, fn, arg);
}

/* Calls fn for each subquery plan that node n evaluates itself. */
static void explain_node_subs(const pnode *n,
			      void (*fn)(pnode *, const einfo *, void *),
			      void *arg)
{
	explain_expr_subs(n->pred, n->post, fn, arg);
	for (int i = 0; i < n->nexprs; i++)
		explain_expr_subs(n->exprs[i], n->post, fn, arg);
	for (int i = 0; n->kind == PN_VALUES && i < n->nrows; i++)
		for (int j = 0; n->rows[i] && j < n->rows[i]->n; j++)
			explain_expr_subs(n->rows[i]->v[j], false, fn, arg);
	for (int i = 0; i < n->nkeys; i++) {
		explain_expr_subs(n->lkeys[i], false, fn, arg);
		explain_expr_subs(n->rkeys[i], false, fn, arg);
	}
	for (int i = 0; i < n->ngroup; i++)
		explain_expr_subs(n->group[i], false, fn, arg);
	for (int i = 0; i < n->naggs; i++)
		explain_expr_subs(n->aggs[i].arg, false, fn, arg);
	explain_expr_subs(n->limit, false, fn, arg);
	explain_expr_subs(n->offset, false, fn, arg);
}

/* EXPLAIN ANALYZE's figures of n.  A node with no run of its own under
 * one that ran (or was run inside another) was taken in by it: a GPU
 * operator that consumed its input on the device (a fused filter, a
 * cached scan, a join kept on the device, a projection sorted there)
 * never calls exec_node on it.  Under a node that never ran (a subquery
 * no row asked for) it did not run either.  Neither has figures to show.
 * Returns whether n ran, on its own or inside the node above. */
static bool explain_analyzed(sbuf *s, const pnode *n, bool up_ran)
{
	if (!n->an_calls) {
		sb_printf(s, " [%s]",
			  up_ran ? "run inside the operator above" : "not run");
		return up_ran;
	}
	sb_printf(s, " [");
	if (n->an_calls > 1)
		sb_printf(s, "calls=%llu ", (unsigned long long)n->an_calls);
	sb_printf(s, "rows=%llu time=%.3f ms self=%.3f ms]",
		  (unsigned long long)n->an_rows, (double)n->an_ns / 1e6,
		  (double)n->an_self_ns / 1e6);
	return true;
}

static void explain_node(sbuf *s, const pnode *n, int depth, bool up_ran);

typedef struct explain_sub_arg {
	sbuf *s;
	int depth;
} explain_sub_arg;

static void explain_sub(pnode *sub, const einfo *in, void *arg)
{
	explain_sub_arg *a = arg;

	sb_printf(a->s, "%*sSUBQUERY%s\n", a->depth * 2, "",
		  in->correlated ? " (correlated: run per row)" : "");
	explain_node(a->s, sub, a->depth + 1, false);
}

/* up_ran: EXPLAIN ANALYZE, the node above ran (explain_analyzed) */
static void explain_node(sbuf *s, const pnode *n, int depth, bool up_ran)
{
	static const char *jn[] = {"INNER", "LEFT", "CROSS",
				   "SEMI",  "ANTI", "ANTI (NOT IN)"};

	sb_printf(s, "%*s", depth * 2, "");
	switch (n->kind) {
	case PN_SCAN:
		sb_printf(s, "SCAN %s", n->tname);
		break;
	case PN_ISCAN: {
		char ib[1024];
		plan_index_explain(n, ib, sizeof(ib));
		sb_printf(s, "%s", ib);
		break;
	}
	case PN_ONE:
		sb_printf(s, "ONE ROW");
		break;
	case PN_VALUES:
		sb_printf(s, "VALUES (%d rows)", n->nrows);
		break;
	case PN_FILTER:
		sb_printf(s, "FILTER ");
		sb_expr(s, n->pred);
		break;
	case PN_PROJECT:
		sb_printf(s, "PROJECT ");
		for (int i = 0; i < n->nexprs; i++) {
			sb_printf(s, "%s", i ? ", " : "");
			sb_expr(s, n->exprs[i]);
		}
		break;
	case PN_JOIN:
		sb_printf(s, "%s %s JOIN", n->nkeys ? "HASH" : "NESTED LOOP",
			  jn[n->jtype]);
		for (int i = 0; i < n->nkeys; i++) {
			sb_printf(s, "%s", i ? " AND " : " ON ");
			sb_expr(s, n->lkeys[i]);
			sb_printf(s, " = ");
			sb_expr(s, n->rkeys[i]);
		}
		if (n->pred) {
			sb_printf(s, " FILTER ");
			sb_expr(s, n->pred);
		}
		break;
	case PN_AGG:
		sb_printf(s, "HASH AGGREGATE");
		for (int i = 0; i < n->ngroup; i++) {
			sb_printf(s, "%s", i ? ", " : " GROUP BY ");
			sb_expr(s, n->group[i]);
		}
		for (int i = 0; i < n->naggs; i++) {
			sb_printf(s, "%s%s", i ? ", " : " COMPUTE ",
				  agg_name(n->aggs[i].fn));
			if (n->aggs[i].fn != AGG_COUNT_STAR) {
				sb_printf(s, "(%s",
					  n->aggs[i].distinct ? "DISTINCT "
							      : "");
				sb_expr(s, n->aggs[i].arg);
				sb_printf(s, ")");
			}
		}
		break;
	case PN_SORT:
		sb_printf(s, "SORT");
		for (int i = 0; i < n->nsort; i++)
			sb_printf(s, "%s#%d%s", i ? ", " : " BY ",
				  n->sort_col[i] + 1,
				  n->desc[i] ? " DESC" : "");
		break;
	case PN_DISTINCT:
		sb_printf(s, "DISTINCT");
		break;
	case PN_LIMIT:
		sb_printf(s, "LIMIT ");
		sb_expr(s, n->limit);
		if (n->offset) {
			sb_printf(s, " OFFSET ");
			sb_expr(s, n->offset);
		}
		break;
	case PN_SETOP:
		sb_printf(s, "%s",
			  n->op == AST_UNION	   ? "UNION"
			  : n->op == AST_UNION_ALL ? "UNION ALL"
			  : n->op == AST_INTERSECT ? "INTERSECT"
						   : "EXCEPT");
		break;
	case PN_CONVERT:
		sb_printf(s, "CONVERT");
		break;
	}
	if (s->backends) {
		char bb[512];
		sb_printf(s, " (%s)", exec_gpu_explain(n, bb, sizeof(bb)));
	} else {
		sb_printf(s, " (backend=cpu)");
	}
	if (s->analyze) {
		up_ran = explain_analyzed(s, n, up_ran);
		if (n->kind == PN_ISCAN && n->an_calls) {
			/* what the index gave, before deleted rows */
			sb_printf(s, " [index rows=%llu",
				  (unsigned long long)n->ix->an_index_rows);
			if (n->ix->an_fallback)
				sb_printf(
				    s,
				    "; %llu runs scanned the table "
				    "instead",
				    (unsigned long long)n->ix->an_fallback);
			sb_printf(s, "]");
		}
		sb_printf(s, "\n");
		/* the subqueries this operator evaluated: their time is in
		 * its own (self) time */
		explain_sub_arg a = {s, depth + 1};
		explain_node_subs(n, explain_sub, &a);
	} else {
		sb_printf(s, "\n");
	}
	if (n->l)
		explain_node(s, n->l, depth + 1, up_ran);
	if (n->r)
		explain_node(s, n->r, depth + 1, up_ran);
}

static void explain_reset_sub(pnode *sub, const einfo *in, void *arg)
{
	(void)in;
	(void)arg;
	explain_analyze_reset(sub);
}

/* Clears the EXPLAIN ANALYZE figures of a plan and of its subqueries'
 * plans before its run. */
void explain_analyze_reset(pnode *n)
{
	for (; n; n = n->l) {
		n->an_calls = n->an_rows = n->an_ns = n->an_self_ns = 0;
		if (n->ix)
			n->ix->an_index_rows = n->ix->an_fallback = 0;
		explain_node_subs(n, explain_reset_sub, NULL);
		explain_analyze_reset(n->r);
	}
}

/* The EXPLAIN text of root (NULL: head alone, a statement with no plan);
 * analyze: with the figures of the run just made (EXPLAIN ANALYZE). */
int explain_plan(gpmdb_stmt *st, pnode *root, const char *head, bool analyze)
{
	sbuf s = {.analyze = analyze};

	if (head)
		sb_printf(&s, "%s (backend=cpu)\n", head);
	if (root) {
		exec_gpu_annotate(st, root);
		s.backends = true;
		explain_node(&s, root, head ? 1 : 0, false);
	}
	if (s.fail) {
		free(s.p);
		return db_err(st->db, GPMDB_NOMEM, "out of memory");
	}
	free(st->explain);
	st->explain = s.p ? s.p : calloc(1, 1);
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
		node = pn_filter(b, node, where, false);
		if (!node)
			return NULL;
	}
	for (int i = 0; i < n; i++)
		if (bind_expr(b, sc, exprs[i], false))
			return NULL;
	pj = pn_new(b, PN_PROJECT, n + 1);
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
