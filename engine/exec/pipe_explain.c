/*
 * pipe_explain.c - EXPLAIN's view of the CPU pipelines (docs/engine.md
 * "EXPLAIN"): which nodes of a plan run as one pipeline and in which
 * order the pipelines run, without running them.  The decision is
 * pipe.c's own (pipe_plan: pipe_go's planning, stopped before anything
 * runs); this file only walks the plan in exec_node's order, and, under
 * EXPLAIN ANALYZE, records the pipelines that did run (pipe_ran), so
 * that the two can be compared (tests/unit/test_explain_pipes.c).
 */
#include "pipe_int.h"

#include <string.h>

/* One member of a shape; a node already there (a SCAN read twice) keeps
 * its first role. */
static void shape_add(pipe_shape *sh, pnode *n, int role, int build)
{
	for (int i = 0; i < sh->n; i++)
		if (sh->node[i] == n)
			return;
	if (sh->n < PIPE_SHAPE_MAX) {
		sh->node[sh->n] = n;
		sh->role[sh->n] = (int8_t)role;
		sh->build[sh->n++] = (int8_t)build;
	}
}

static void shape_dep(pipe_shape *sh, pnode *n)
{
	if (sh->ndeps < PIPE_SHAPE_MAX)
		sh->deps[sh->ndeps++] = n;
}

int pipe_shape_of(const pipe *p, pipe_shape *sh)
{
	memset(sh, 0, sizeof(*sh));
	/* in pipe_go's order: a SEMI/ANTI mark join's left side is built
	 * before the pipeline starts (pipe_run_semi), then the source
	 * relation, then the joins' built sides, bottom up */
	if (p->mark)
		shape_dep(sh, p->mark->s.n->l);
	if (!p->src)
		shape_dep(sh, p->top_src);
	for (int i = 0; i < p->ns; i++)
		if (p->st[i].kind == PS_JOIN)
			shape_dep(sh, p->st[i].sleft ? p->st[i].n->r
						     : p->st[i].n->l);
	if (p->src)
		shape_add(sh, p->src, PL_SOURCE, PL_BUILD_NONE);
	for (int i = 0; i < p->ns; i++) {
		const pstage *s = &p->st[i];
		shape_add(sh, s->n, PL_STAGE,
			  s->kind != PS_JOIN ? PL_BUILD_NONE
			  : s->sleft	     ? PL_BUILD_RIGHT
					     : PL_BUILD_LEFT);
	}
	/* the sink, when it is a node of its own (else the relation of the
	 * top stage) */
	if (p->agg) /* a DISTINCT's inner AGG stands for its plan node */
		shape_add(sh, p->agg->dof ? p->agg->dof : p->agg, PL_SINK,
			  PL_BUILD_NONE);
	else if (p->mark)
		shape_add(sh, p->mark->s.n, PL_SINK, PL_BUILD_LEFT);
	else if (p->topn)
		shape_add(sh, p->topn, PL_SINK, PL_BUILD_NONE);
	return GPMDB_OK;
}

static void shape_number(const pipe_shape *sh, uint32_t id)
{
	for (int i = 0; i < sh->n; i++) {
		pnode *n = sh->node[i];
		if (n->pl_id)
			continue; /* ran before: its first pipeline */
		n->pl_id = id;
		n->pl_role = sh->role[i];
		n->pl_build = sh->build[i];
	}
}

void pipe_ran(const pipe *p)
{
	pipe_shape sh;

	pipe_shape_of(p, &sh);
	shape_number(&sh, ++p->x->an_pipes);
}

/* ---- EXPLAIN: the plan walked as exec_node runs it ---- */

static void pw_clear(pnode *n)
{
	for (; n; n = n->l) {
		n->pl_id = 0;
		n->pl_role = PL_STAGE;
		n->pl_build = PL_BUILD_NONE;
		pw_clear(n->r);
	}
}

static bool pw_has_sub(const ast_expr *e)
{
	if (!e)
		return false;
	if (e->kind == AST_E_SUBQUERY || e->kind == AST_E_EXISTS ||
	    e->kind == AST_E_IN_SELECT)
		return true;
	if (pw_has_sub(e->l) || pw_has_sub(e->r) || pw_has_sub(e->x))
		return true;
	for (int i = 0; e->list && i < e->list->n; i++)
		if (pw_has_sub(e->list->v[i]))
			return true;
	return false;
}

/* LIMIT n's value as exec_limit computes it, when that runs no
 * subquery; -1 when unknown or negative. */
static int64_t pw_limit(exec_ctx *x, const pnode *n)
{
	int64_t lim = -1, off = 0;

	if (pw_has_sub(n->limit) || pw_has_sub(n->offset) ||
	    exec_limit_value(x, n->limit, &lim) ||
	    (n->offset && exec_limit_value(x, n->offset, &off))) {
		db_clear(x->db);
		return -1;
	}
	if (off < 0)
		off = 0;
	if (lim < 0 || (uint64_t)lim >= UINT64_MAX / 2 - (uint64_t)off)
		return -1;
	return lim + off;
}

static void pw_walk(exec_ctx *x, pnode *n);

/* n as a pipeline (SORT: a top-N one keeping keep rows), numbered after
 * the nodes that run before it; false: exec_node runs n's operator. */
static bool pw_pipe(exec_ctx *x, pnode *n, uint64_t keep)
{
	pipe_shape sh;
	int rc = pipe_plan(x, n, keep, &sh);

	if (rc) {
		if (rc != PIPE_DECLINE) /* the run reports it */
			db_clear(x->db);
		return false;
	}
	for (int i = 0; i < sh.ndeps; i++)
		pw_walk(x, sh.deps[i]);
	shape_number(&sh, ++x->an_pipes);
	return true;
}

/* exec_op_run's choices: the GPU's nodes decline pipe_plan (pipe_cpu),
 * the others' inputs run in order, left first */
static void pw_walk(exec_ctx *x, pnode *n)
{
	if (!n)
		return;
	switch (n->kind) {
	case PN_FILTER:
	case PN_PROJECT:
	case PN_JOIN:
	case PN_AGG:
		if (pw_pipe(x, n, 0))
			return;
		break;
	case PN_LIMIT: {
		/* ORDER BY ... LIMIT: exec_limit's top-N (exec_sort_top) */
		int64_t keep =
		    n->l && n->l->kind == PN_SORT ? pw_limit(x, n) : -1;
		if (keep >= 0 && pw_pipe(x, n->l, (uint64_t)keep))
			return;
		break;
	}
	default:
		break;
	}
	pw_walk(x, n->l);
	pw_walk(x, n->r);
}

void exec_pipes_annotate(gpmdb_stmt *st, pnode *root)
{
	exec_ctx x;

	memset(&x, 0, sizeof(x));
	x.db = st->db;
	x.st = st;
	x.mem_limit = st->db->mem_limit;
	pw_clear(root);
	pw_walk(&x, root);
}
