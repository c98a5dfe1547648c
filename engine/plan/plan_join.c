/*
 * plan_join.c - a query core's conjuncts and joins: WHERE and inner-join
 * ON conditions split into conjuncts, the equalities that make hash-join
 * keys, the cardinality estimates and the join order (greedy without
 * LEFT JOINs, the written order with them), USING and NATURAL.
 */
#include "../value.h"
#include "plan_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- conjuncts ---- */

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
	return plan_conj_add(b, cv, d);
}

int plan_conj_add(bctx *b, conjv *cv, ast_expr *e)
{
	if (e->kind == AST_E_BINARY && e->op == AST_OP_AND) {
		int rc = plan_conj_add(b, cv, e->l);
		return rc ? rc : plan_conj_add(b, cv, e->r);
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

void plan_expr_mask(const scope *sc, const ast_expr *e, uint64_t *mask,
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
	plan_expr_mask(sc, e->l, mask, all);
	plan_expr_mask(sc, e->r, mask, all);
	plan_expr_mask(sc, e->x, mask, all);
	if (e->list)
		for (int i = 0; i < e->list->n; i++)
			plan_expr_mask(sc, e->list->v[i], mask, all);
}

ast_expr *plan_and_of(bctx *b, ast_expr *a, ast_expr *e)
{
	ast_expr *r;

	if (!a)
		return e;
	r = ast_binary(b->a, AST_OP_AND, a, e);
	r->rtype = et_pack(et_make(BC_T_BOOL));
	return r;
}

bool plan_hashable(etype a, etype b)
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
	plan_expr_mask(sc, e->l, &ml, &al);
	plan_expr_mask(sc, e->r, &mr, &ar);
	if (al || ar || !ml || !mr ||
	    !plan_hashable(expr_type(e->l), expr_type(e->r)))
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

pnode *plan_node_join(bctx *b, pnode *l, pnode *r, int jtype)
{
	pnode *n = plan_node_new(b, PN_JOIN, l->ncols + r->ncols);

	if (!n)
		return NOMEM(b);
	plan_node_copy_layout(n, 0, l);
	plan_node_copy_layout(n, l->ncols, r);
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
			uint64_t cell = 0;
			const char *src =
			    stg_tablet_col(&v, tc, w, i, 1, &cell);
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
double plan_est_sel(const ast_expr *e)
{
	if (!e)
		return 1;
	switch (e->kind) {
	case AST_E_BINARY:
		switch (e->op) {
		case AST_OP_AND:
			return plan_est_sel(e->l) * plan_est_sel(e->r);
		case AST_OP_OR: {
			double s = plan_est_sel(e->l) + plan_est_sel(e->r);
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
			sel *= plan_est_sel(c->e);
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

/* Sources up to this many: the best left-deep order by dynamic
 * programming over their subsets; more: the greedy orders. */
#define JOIN_DP_MAX 12

/* The left-deep order with the smallest sum of estimated intermediate
 * sizes (est_order's measure, over every order instead of one per
 * start): cost[S] is the least sum that joins set S, rows[S] its size
 * then, last[S] the source joined last.  A step joins a source
 * connected by an equality whenever one is.  Greedy steps take the
 * smallest next result and can miss a small path that starts larger:
 * TPC-H Q5 joined orders, customer and lineitem before the region's
 * filter (910k rows at SF1 through two more joins), where the order
 * region, nation, customer, orders, lineitem keeps 180k.  Returns the
 * cost, or -1 without memory. */
static double est_order_dp(est_ctx *ec, conjv *cv, int ns, const double *est,
			   int *ord, double *sizes)
{
	size_t n = (size_t)1 << ns;
	double *cost = malloc(n * sizeof(double)), *rows = malloc(n * 8);
	int8_t *last = malloc(n), *first = malloc(n);
	double best;

	if (!cost || !rows || !last || !first) {
		free(cost);
		free(rows);
		free(last);
		free(first);
		return -1;
	}
	for (size_t m = 0; m < n; m++)
		cost[m] = -1;
	for (int i = 0; i < ns; i++) {
		cost[(size_t)1 << i] = 0;
		rows[(size_t)1 << i] = est[i];
		last[(size_t)1 << i] = first[(size_t)1 << i] = (int8_t)i;
	}
	/* a set's supersets are numerically larger: done in order */
	for (size_t m = 1; m < n; m++) {
		bool key[64], any = false;
		if (cost[m] < 0)
			continue;
		for (int i = 0; i < ns; i++) {
			ast_expr *lk, *rk;
			key[i] = false;
			if (m & ((size_t)1 << i))
				continue;
			for (int c = 0; c < cv->n && !key[i]; c++)
				key[i] = !cv->v[c].used &&
					 equi_key(ec->sc, &cv->v[c], m,
						  1ull << i, &lk, &rk);
			any |= key[i];
		}
		for (int i = 0; i < ns; i++) {
			size_t mi = m | ((size_t)1 << i);
			if (mi == m || (any && !key[i]))
				continue;
			double sz = est_join(ec, cv, m, i, rows[m], est[i]);
			sz = sz < 1 ? 1 : sz;
			/* ties: the smaller first source (as the greedy
			 * orders' choice) */
			if (cost[mi] < 0 || cost[m] + sz < cost[mi] ||
			    (cost[m] + sz == cost[mi] &&
			     est[first[m]] < est[first[mi]])) {
				cost[mi] = cost[m] + sz;
				rows[mi] = sz;
				last[mi] = (int8_t)i;
				first[mi] = first[m];
			}
		}
	}
	best = cost[n - 1];
	for (size_t m = n - 1, k = (size_t)ns; k-- > 0;) {
		ord[k] = last[m];
		sizes[k] = rows[m];
		m &= ~((size_t)1 << last[m]);
	}
	free(cost);
	free(rows);
	free(last);
	free(first);
	return best;
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
		j->pred = plan_and_of(b, j->pred, c->e);
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
		return l && r ? plan_and_of(b, l, r) : l ? l : r;
	}
	plan_expr_mask(sc, e, &m, &all);
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
int plan_or_implied(bctx *b, const scope *sc, conjv *cv)
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
			if (plan_conj_add(b, cv, d))
				return -1;
			for (int q = n1; q < cv->n; q++) {
				cv->v[q].mask = 0;
				cv->v[q].all = false;
				plan_expr_mask(sc, cv->v[q].e, &cv->v[q].mask,
					       &cv->v[q].all);
			}
		}
	}
	return 0;
}

/* The conjunct's sources, computed again (its scope may have grown). */
static void conj_mask(const scope *sc, conj *c)
{
	c->mask = 0;
	c->all = false;
	plan_expr_mask(sc, c->e, &c->mask, &c->all);
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
		node = plan_node_filter(b, node, c->e, false);
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
pnode *plan_join_ordered(bctx *b, scope *sc, conjv *where)
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

		if (s->on && plan_conj_add(b, &on, s->on))
			return NULL;
		if (!left && s->on) {
			/* inner ON: same as WHERE */
			for (int k = 0; k < on.n; k++)
				if (plan_conj_add(b, where, on.v[k].e))
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
			plan_expr_mask(sc, c->e, &c->mask, &c->all);
			if (bit && !c->all && c->mask == bit &&
			    conj_pure(c->e)) {
				if (!(r = plan_node_filter(b, r, c->e, false)))
					return NULL;
				c->used = true;
			}
		}
		j = plan_node_join(b, node, r, left ? JOIN_LEFT : JOIN_INNER);
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

/* A conjunct `column = column` of one type over two sources: its
 * columns in *x, *y. */
static bool col_eq(const conj *c, ast_expr **x, ast_expr **y)
{
	const ast_expr *e = c->e;

	if (c->all || e->kind != AST_E_BINARY || e->op != AST_OP_EQ ||
	    e->l->kind != AST_E_COLUMN || e->r->kind != AST_E_COLUMN ||
	    e->l->rel || e->r->rel || __builtin_popcountll(c->mask) != 2)
		return false;
	etype a = expr_type(e->l), t = expr_type(e->r);
	if (a.t != t.t || a.scale != t.scale || !plan_hashable(a, t))
		return false;
	*x = e->l;
	*y = e->r;
	return true;
}

static int uf_find(int *p, int g)
{
	while (p[g] != g)
		g = p[g] = p[p[g]];
	return g;
}

/* Whether cv equates columns g and h already. */
static bool eq_known(const conjv *cv, int g, int h)
{
	for (int k = 0; k < cv->n; k++) {
		ast_expr *x, *y;
		if (col_eq(&cv->v[k], &x, &y) &&
		    ((x->col == g && y->col == h) ||
		     (x->col == h && y->col == g)))
			return true;
	}
	return false;
}

/* Equalities implied by two others through a shared column (a = b AND
 * b = c: a = c), between columns of one type in different sources, so
 * that the join order may join a and c's sources directly: TPC-H Q5
 * says c_nationkey = s_nationkey and s_nationkey = n_nationkey, and
 * the order region, nation, customer, orders, lineitem, supplier needs
 * c_nationkey = n_nationkey.  A NULL satisfies no equality, so the
 * implied one drops no row the others keep. */
static int plan_implied_eq(bctx *b, const scope *sc, conjv *cv)
{
	for (int p = 0; p < cv->n && cv->n < 64; p++)
		for (int q = p + 1; q < cv->n && cv->n < 64; q++) {
			ast_expr *pe[2], *qe[2];
			if (!col_eq(&cv->v[p], &pe[0], &pe[1]) ||
			    !col_eq(&cv->v[q], &qe[0], &qe[1]))
				continue;
			for (int i = 0; i < 2; i++)
				for (int j = 0; j < 2; j++) {
					ast_expr *x = pe[1 - i], *y = qe[1 - j];
					uint64_t mx = 0, my = 0;
					bool ax = false, ay = false;
					if (pe[i]->col != qe[j]->col ||
					    x->col == y->col ||
					    eq_known(cv, x->col, y->col))
						continue;
					plan_expr_mask(sc, x, &mx, &ax);
					plan_expr_mask(sc, y, &my, &ay);
					if (mx == my)
						continue;
					ast_expr *e =
					    ast_alloc(b->a, sizeof(*e));
					if (!e)
						return db_err(b->db,
							      GPMDB_NOMEM,
							      "out of memory");
					*e = *cv->v[p].e;
					e->l = x;
					e->r = y;
					int rc = plan_conj_add(b, cv, e);
					if (rc)
						return rc;
					cv->v[cv->n - 1].mask = mx | my;
				}
		}
	return GPMDB_OK;
}

pnode *plan_join_greedy(bctx *b, scope *sc, conjv *cv)
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
	if (ns > 2 && plan_implied_eq(b, sc, cv))
		return NULL;
	/* single-source conjuncts filter their source */
	for (int k = 0; k < cv->n; k++) {
		conj *c = &cv->v[k];
		if (c->all || __builtin_popcountll(c->mask) > 1)
			continue;
		int s = c->mask ? __builtin_ctzll(c->mask) : 0;
		srcn[s] = plan_node_filter(b, srcn[s], c->e, false);
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
	if (ns <= JOIN_DP_MAX) {
		if ((bcost = est_order_dp(&ec, cv, ns, est, bord, bsizes)) < 0)
			return NOMEM(b);
	}
	for (int s = 0; ns > JOIN_DP_MAX && s < ns; s++) {
		double cost = est_order(&ec, cv, ns, est, s, ord, sizes);
		if (bcost < 0 || cost < bcost ||
		    (cost == bcost && est[s] < est[bord[0]])) {
			bcost = cost;
			memcpy(bord, ord, sizeof(int) * (size_t)ns);
			memcpy(bsizes, sizes, sizeof(double) * (size_t)ns);
		}
	}
	/* classes of the columns equated by the conjuncts applied so far */
	int *ucls = ast_alloc(b->a, sizeof(int) * (size_t)(sc->ncols + 1));
	for (int g = 0; ucls && g < sc->ncols; g++)
		ucls[g] = g;
	node = srcn[bord[0]];
	inset = 1ull << bord[0];
	for (int step = 1; step < ns; step++) {
		int best = bord[step];
		pnode *j = plan_node_join(b, node, srcn[best], JOIN_INNER);
		if (!j)
			return NULL;
		uint64_t bit = 1ull << best;
		for (int k = 0; k < cv->n; k++) {
			conj *c = &cv->v[k];
			if (c->used || c->all || (c->mask & ~(inset | bit)))
				continue;
			c->used = true;
			/* a column equality that those applied already imply
			 * (an implied one, or an original one after it) */
			ast_expr *x, *y;
			if (ucls && col_eq(c, &x, &y) && x->col < sc->ncols &&
			    y->col < sc->ncols) {
				int rx = uf_find(ucls, x->col),
				    ry = uf_find(ucls, y->col);
				if (rx == ry)
					continue;
				ucls[rx] = ry;
			}
			join_take(b, sc, j, c, inset, bit);
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
int plan_using(bctx *b, scope *sc, int si, conjv *extra)
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
			s->on = plan_and_of(b, s->on, eq);
		} else if (plan_conj_add(b, extra, eq)) {
			return b->db->errcode;
		}
	}
	return 0;
}
