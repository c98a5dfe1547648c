/*
 * plan_int.h - between the planner's files (engine/plan/): plan.c (sources,
 * scopes, the query core, aggregates, set operations, ORDER BY/LIMIT),
 * plan_join.c (conjuncts, estimates, join order), plan_decor.c
 * (decorrelation of subqueries), plan_prune.c (column pruning).
 */
#ifndef GPMDB_PLAN_INT_H
#define GPMDB_PLAN_INT_H

#include "plan.h"

#define NOMEM(b) (db_err((b)->db, GPMDB_NOMEM, "out of memory"), NULL)

/* ---- plan.c ---- */

/* A node of kind with ncols output columns (layouts unset). */
pnode *plan_node_new(bctx *b, int kind, int ncols);
/* Columns of s into d's layout from column at. */
void plan_node_copy_layout(pnode *d, int at, const pnode *s);
pnode *plan_node_filter(bctx *b, pnode *child, ast_expr *pred, bool post);
/* FROM and WHERE of a query core into scope sc: the joins and filters. */
pnode *plan_from_where(bctx *b, ast_select *s, scope *sc);

typedef struct aggctx {
	bctx *b;
	scope *sc;
	int ngroup;
	ast_expr **group;
	aggdef *aggs;
	ast_expr **calls; /* the call (or column) of each aggregate */
	int naggs, cap;
} aggctx;

int plan_agg_slot(aggctx *ac, int fn, ast_expr *call, ast_expr *arg);

/* ---- plan_join.c ---- */

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

int plan_conj_add(bctx *b, conjv *cv, ast_expr *e);
void plan_expr_mask(const scope *sc, const ast_expr *e, uint64_t *mask,
		    bool *all);
ast_expr *plan_and_of(bctx *b, ast_expr *a, ast_expr *e);
/* Two key types a hash join can compare. */
bool plan_hashable(etype a, etype b);
pnode *plan_node_join(bctx *b, pnode *l, pnode *r, int jtype);
double plan_est_sel(const ast_expr *e);
pnode *plan_join_ordered(bctx *b, scope *sc, conjv *where);
/* Adds to cv, per source, the OR its terms in an OR of AND-ed terms
 * imply (the filters of that source before the joins). */
int plan_or_implied(bctx *b, const scope *sc, conjv *cv);
pnode *plan_join_greedy(bctx *b, scope *sc, conjv *cv);
int plan_using(bctx *b, scope *sc, int si, conjv *extra);

/* ---- plan_decor.c ---- */

pnode *plan_decor(bctx *b, scope *sc, pnode *node, ast_expr *e, bool *done);

/* ---- plan_prune.c ---- */

int plan_prune(bctx *b, pnode *root);

#endif /* GPMDB_PLAN_INT_H */
