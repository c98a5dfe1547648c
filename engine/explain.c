/*
 * explain.c - the EXPLAIN text of a plan (docs/engine.md "EXPLAIN"): one
 * line per node with, in a column of its own, the backend the GPU
 * executor chooses for it (exec_gpu_annotate, exec_gpu_explain), the CPU
 * pipeline it is part of (exec_pipes_annotate; under EXPLAIN ANALYZE the
 * one it ran in) and the figures of the run; then the reasons for the
 * CPU, each once.  A statement-level service over both the planner's
 * nodes and the executors: the planner itself never calls an executor
 * (docs/engine.md "Layout").
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

/* One line: left (indent and the node's text) and right (backend,
 * pipeline, figures; NULL for a SUBQUERY line), put in a column. */
typedef struct xline {
	char *left, *right;
} xline;

/* A reason for the CPU and the operators it applies to. */
typedef struct xreason {
	const char *why;
	sbuf ops;
} xreason;

typedef struct xout {
	xline *v;
	int n, cap;
	xreason *r;
	int nr, rcap;
	bool analyze; /* EXPLAIN ANALYZE: each node's figures of the run */
	bool gpu;     /* some node is on the GPU */
	bool fail;
} xout;

/* The pipelines of one plan tree (a statement's, a subquery's) are
 * numbered 1, 2, ... in the order of their pl_id (the order they run). */
typedef struct xpipes {
	uint32_t *id;
	int n, cap;
	bool fail;
} xpipes;

static void xp_collect(xpipes *m, const pnode *n)
{
	for (; n; n = n->l) {
		bool seen = !n->pl_id;
		for (int i = 0; i < m->n && !seen; i++)
			seen = m->id[i] == n->pl_id;
		if (!seen) {
			if (m->n == m->cap) {
				int cap = m->cap ? m->cap * 2 : 16;
				uint32_t *v = realloc(m->id, sizeof(uint32_t) *
								 (size_t)cap);
				if (!v) {
					m->fail = true;
					return;
				}
				m->id = v;
				m->cap = cap;
			}
			m->id[m->n++] = n->pl_id;
		}
		xp_collect(m, n->r);
	}
}

/* The number of pipeline id in its tree: 1 + the ids below it. */
static int xp_number(const xpipes *m, uint32_t id)
{
	int k = 1;

	for (int i = 0; i < m->n; i++)
		k += m->id[i] < id;
	return k;
}

static void xo_line(xout *o, sbuf *l, sbuf *r)
{
	if (l->fail || (r && r->fail))
		o->fail = true;
	if (!o->fail && o->n == o->cap) {
		int cap = o->cap ? o->cap * 2 : 32;
		xline *v = realloc(o->v, sizeof(xline) * (size_t)cap);
		if (v) {
			o->v = v;
			o->cap = cap;
		} else {
			o->fail = true;
		}
	}
	if (o->fail) {
		free(l->p);
		if (r)
			free(r->p);
		return;
	}
	o->v[o->n].left = l->p ? l->p : calloc(1, 1);
	o->v[o->n].right = r ? (r->p ? r->p : calloc(1, 1)) : NULL;
	o->n++;
}

/* Reason why applies to operator label: one entry per distinct reason. */
static void xo_reason(xout *o, const char *why, const char *label)
{
	xreason *x = NULL;

	for (int i = 0; i < o->nr && !x; i++)
		if (!strcmp(o->r[i].why, why))
			x = &o->r[i];
	if (!x) {
		if (o->nr == o->rcap) {
			int cap = o->rcap ? o->rcap * 2 : 8;
			xreason *v =
			    realloc(o->r, sizeof(xreason) * (size_t)cap);
			if (!v) {
				o->fail = true;
				return;
			}
			o->r = v;
			o->rcap = cap;
		}
		x = &o->r[o->nr++];
		memset(x, 0, sizeof(*x));
		x->why = why;
	}
	/* each operator once: "PROJECT, FILTER" */
	for (const char *p = x->ops.p; p && (p = strstr(p, label));
	     p += strlen(label))
		if ((p == x->ops.p || p[-1] == ' ') &&
		    (!p[strlen(label)] || p[strlen(label)] == ','))
			return;
	sb_printf(&x->ops, "%s%s", x->ops.n ? ", " : "", label);
	if (x->ops.fail)
		o->fail = true;
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
	if (n->an_spill) /* exec/spill.c */
		sb_printf(s, " [spilled %llu bytes]",
			  (unsigned long long)n->an_spill);
	if (n->an_shared) { /* exec/exec_share.c */
		sb_printf(s, " [the rows of view %s's earlier use]",
			  n->vsh->name);
		return n->an_shared < n->an_calls;
	}
	return true;
}

static void explain_tree(xout *o, const pnode *n, int depth);

typedef struct explain_sub_arg {
	xout *o;
	int depth;
} explain_sub_arg;

static void explain_sub(pnode *sub, const einfo *in, void *arg)
{
	explain_sub_arg *a = arg;
	sbuf l = {0};

	sb_printf(&l, "%*sSUBQUERY%s", a->depth * 2, "",
		  in->correlated ? " (correlated: run per row)" : "");
	xo_line(a->o, &l, NULL);
	explain_tree(a->o, sub, a->depth + 1);
}

/* The words that name n's operator: its line's start and its name in
 * the reasons for the CPU. */
static void explain_label(sbuf *s, const pnode *n)
{
	static const char *jn[] = {"INNER", "LEFT", "CROSS",
				   "SEMI",  "ANTI", "ANTI (NOT IN)"};

	switch (n->kind) {
	case PN_SCAN:
		sb_printf(s, "SCAN");
		break;
	case PN_ISCAN: { /* SEARCH or SCAN ... USING INDEX */
		char ib[1024];
		plan_index_explain(n, ib, sizeof(ib));
		sb_printf(s, "%.*s", (int)strcspn(ib, " "), ib);
		break;
	}
	case PN_ONE:
		sb_printf(s, "ONE ROW");
		break;
	case PN_VALUES:
		sb_printf(s, "VALUES");
		break;
	case PN_FILTER:
		sb_printf(s, "FILTER");
		break;
	case PN_PROJECT:
		sb_printf(s, "PROJECT");
		break;
	case PN_JOIN:
		sb_printf(s, "%s %s JOIN", n->nkeys ? "HASH" : "NESTED LOOP",
			  jn[n->jtype]);
		break;
	case PN_AGG:
		sb_printf(s, "HASH AGGREGATE");
		break;
	case PN_SORT:
		sb_printf(s, "SORT");
		break;
	case PN_DISTINCT:
		sb_printf(s, "DISTINCT");
		break;
	case PN_LIMIT:
		sb_printf(s, "LIMIT");
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
}

/* The node's text after its label. */
static void explain_text(sbuf *s, const pnode *n)
{
	switch (n->kind) {
	case PN_SCAN:
		sb_printf(s, " %s", n->tname);
		break;
	case PN_ISCAN: {
		char ib[1024];
		plan_index_explain(n, ib, sizeof(ib));
		sb_printf(s, "%s", strchr(ib, ' ') ? strchr(ib, ' ') : "");
		break;
	}
	case PN_VALUES:
		sb_printf(s, " (%d rows)", n->nrows);
		break;
	case PN_FILTER:
		sb_printf(s, " ");
		sb_expr(s, n->pred);
		break;
	case PN_PROJECT:
		for (int i = 0; i < n->nexprs; i++) {
			sb_printf(s, "%s", i ? ", " : " ");
			sb_expr(s, n->exprs[i]);
		}
		break;
	case PN_JOIN:
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
		for (int i = 0; i < n->nsort; i++)
			sb_printf(s, "%s#%d%s", i ? ", " : " BY ",
				  n->sort_col[i] + 1,
				  n->desc[i] ? " DESC" : "");
		break;
	case PN_LIMIT:
		sb_printf(s, " ");
		sb_expr(s, n->limit);
		if (n->offset) {
			sb_printf(s, " OFFSET ");
			sb_expr(s, n->offset);
		}
		break;
	default:
		break;
	}
}

/* n's line: the backend, its pipeline (numbered in m), a GPU note; the
 * reason for the CPU goes to the statement's reasons.  up_ran: EXPLAIN
 * ANALYZE, the node above ran (explain_analyzed). */
static void explain_node(xout *o, const pnode *n, int depth, bool up_ran,
			 const xpipes *m)
{
	static const char *role[] = {"", " source", " sink"};
	sbuf l = {0}, r = {0}, lb = {0};
	bool gpu;
	const char *why = exec_gpu_explain(n, &gpu);

	explain_label(&lb, n);
	sb_printf(&l, "%*s%s", depth * 2, "", lb.p ? lb.p : "");
	explain_text(&l, n);
	sb_printf(&r, "%s", gpu ? "gpu" : "cpu");
	if (n->pl_id) {
		sb_printf(&r, "  pipeline %d%s", xp_number(m, n->pl_id),
			  role[n->pl_role]);
		if (n->pl_build != PL_BUILD_NONE)
			sb_printf(&r, " (build: %s)",
				  n->pl_build == PL_BUILD_LEFT ? "left"
							       : "right");
	}
	if (gpu && why && *why)
		sb_printf(&r, " (%s)", why);
	else if (!gpu && why && *why && lb.p)
		xo_reason(o, why, lb.p);
	o->gpu |= gpu;
	free(lb.p);
	if (o->analyze) {
		up_ran = explain_analyzed(&r, n, up_ran);
		if (n->kind == PN_ISCAN && n->an_calls) {
			/* what the index gave, before deleted rows */
			sb_printf(&r, " [index rows=%llu",
				  (unsigned long long)n->ix->an_index_rows);
			if (n->ix->an_fallback)
				sb_printf(
				    &r,
				    "; %llu runs scanned the table "
				    "instead",
				    (unsigned long long)n->ix->an_fallback);
			sb_printf(&r, "]");
		}
		xo_line(o, &l, &r);
		/* the subqueries this operator evaluated: their time is in
		 * its own (self) time */
		explain_sub_arg a = {o, depth + 1};
		explain_node_subs(n, explain_sub, &a);
	} else {
		xo_line(o, &l, &r);
	}
	if (n->l)
		explain_node(o, n->l, depth + 1, up_ran, m);
	if (n->r)
		explain_node(o, n->r, depth + 1, up_ran, m);
}

/* A plan tree (the statement's, a subquery's) with its own pipeline
 * numbers. */
static void explain_tree(xout *o, const pnode *n, int depth)
{
	xpipes m = {0};

	xp_collect(&m, n);
	if (m.fail)
		o->fail = true;
	explain_node(o, n, depth, false, &m);
	free(m.id);
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
		n->an_shared = n->an_spill = 0;
		n->pl_id = 0;
		n->pl_role = PL_STAGE;
		n->pl_build = PL_BUILD_NONE;
		if (n->ix)
			n->ix->an_index_rows = n->ix->an_fallback = 0;
		explain_node_subs(n, explain_reset_sub, NULL);
		explain_analyze_reset(n->r);
	}
}

/* Lines longer than this are left out of the column's position. */
#define EXPLAIN_COL_MAX 80

/* The lines with their right parts in one column, then the reasons for
 * the CPU, each once: "backend: cpu (why)" when every operator is on the
 * CPU for one reason, else "backend: cpu for OP, OP (why)" per reason. */
static void explain_finish(xout *o, sbuf *s)
{
	size_t col = 0;

	for (int i = 0; i < o->n; i++) {
		size_t k = strlen(o->v[i].left);
		if (o->v[i].right && k <= EXPLAIN_COL_MAX && k > col)
			col = k;
	}
	for (int i = 0; i < o->n; i++) {
		size_t k = strlen(o->v[i].left);
		if (!o->v[i].right) {
			sb_printf(s, "%s\n", o->v[i].left);
			continue;
		}
		sb_printf(s, "%s%*s%s\n", o->v[i].left,
			  (int)(k < col ? col - k + 2 : 2), "", o->v[i].right);
	}
	for (int i = 0; i < o->nr; i++) {
		if (o->nr == 1 && !o->gpu)
			sb_printf(s, "backend: cpu (%s)\n", o->r[i].why);
		else
			sb_printf(s, "backend: cpu for %s (%s)\n",
				  o->r[i].ops.p, o->r[i].why);
	}
}

static void xo_free(xout *o)
{
	for (int i = 0; i < o->n; i++) {
		free(o->v[i].left);
		free(o->v[i].right);
	}
	for (int i = 0; i < o->nr; i++)
		free(o->r[i].ops.p);
	free(o->v);
	free(o->r);
}

/* The EXPLAIN text of root (NULL: head alone, a statement with no plan)
 * under head (NULL: none; head_right: its right part, NULL: "cpu");
 * analyze: with the figures and the pipelines of the run just made
 * (EXPLAIN ANALYZE). */
int explain_plan(gpmdb_stmt *st, pnode *root, const char *head,
		 const char *head_right, bool analyze)
{
	xout o = {.analyze = analyze};
	sbuf s = {0};

	if (head) {
		sbuf l = {0}, r = {0};
		sb_printf(&l, "%s", head);
		sb_printf(&r, "%s", head_right ? head_right : "cpu");
		xo_line(&o, &l, &r);
	}
	if (root) {
		exec_gpu_annotate(st, root);
		if (!analyze)
			exec_pipes_annotate(st, root);
		explain_tree(&o, root, head ? 1 : 0);
	}
	if (!o.fail)
		explain_finish(&o, &s);
	xo_free(&o);
	if (o.fail || s.fail) {
		free(s.p);
		return db_err(st->db, GPMDB_NOMEM, "out of memory");
	}
	free(st->explain);
	st->explain = s.p ? s.p : calloc(1, 1);
	return GPMDB_OK;
}
