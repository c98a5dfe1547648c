/*
 * explain.c - the EXPLAIN text of a plan: one line per node, the backend
 * the GPU executor chooses for it (exec_gpu_annotate, exec_gpu_explain)
 * and, under EXPLAIN ANALYZE, the figures of the run.  A statement-level
 * service over both the planner's nodes and the executors: the planner
 * itself never calls an executor (docs/engine.md "Layout").
 */
#include "engine.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
				  plan_agg_name(n->aggs[i].fn));
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
