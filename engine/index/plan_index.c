/*
 * plan_index.c - access paths through the persistent indexes (storage.h
 * "Indexes"): which table scans become index reads, and the key ranges
 * they read.
 *
 * The pass runs over a finished plan (plan_select, plan_dml), before the
 * columns are pruned.  Two shapes are rewritten:
 *
 *   FILTER ... FILTER over SCAN t: the conjuncts of the filters that
 *   compare a column of t with a constant (a literal or a bound
 *   parameter) give, for each index of t, an equality prefix of its key
 *   and an interval (or an IN list) on the next key column.  The path
 *   whose estimated rows (stg_index_estimate) are fewest is taken when
 *   it is an equality on every column of a unique index, or when it
 *   reads at most IX_MAX_FRACTION of the table's rows; the scan becomes
 *   an ISCAN.  The filters stay: a key range only ever widens what the
 *   predicate accepts (a REAL constant against an INT column reads
 *   [floor, ceil]), and the filter gives the exact rows with the
 *   comparison rules of the scan path, so both paths return the same
 *   rows in the same order (an ISCAN gives them in row id order).
 *
 *   LIMIT over SORT over PROJECT over FILTERs over SCAN t, when the ORDER
 *   BY terms are columns of an index after its equality prefix, in one
 *   direction with SQLite's NULL order (first ascending, last
 *   descending): the SORT goes and the ISCAN reads in key order, the
 *   LIMIT pulling chunks until enough rows passed the filters
 *   (exec_index_limit).
 *
 * Values are read when the node runs (plan_index_ranges), so a prepared
 * statement re-executed with new bindings reads the new keys; the cost
 * choice uses the values bound when it was planned (a statement is
 * planned again when its bindings change, stmt.c).  A value that cannot
 * be a key of the column (text against a number column, a number
 * against TEXT, FLOAT(p) and BOOLEAN columns, a REAL beyond 2^52
 * against an integer) makes the planner keep the scan; at run time it
 * makes the ISCAN scan the table (EXPLAIN ANALYZE counts it).
 */
#include "../plan/plan.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../value.h"

/* A non-unique (or partial) path is taken when it reads at most this
 * share of the table: a row read through the index costs a random access
 * per column where a scan streams (docs/engine.md "Indexes"). */
#define IX_MAX_FRACTION 0.1
/* ORDER BY ... LIMIT n reads the index in order when n (plus OFFSET) is
 * at most this share of the table, or at most IX_ORDER_SMALL rows. */
#define IX_ORDER_FRACTION 0.1
#define IX_ORDER_SMALL	  1000

#define NOMEM(b) (db_err((b)->db, GPMDB_NOMEM, "out of memory"))

/* ---- values and keys ---- */

/* Computed when the read runs: arithmetic, CAST and uncorrelated scalar
 * subqueries over literals and parameters (no function: random() would
 * be called once, not per row). */
static bool computed(const ast_expr *e)
{
	const einfo *in;

	switch (e->kind) {
	case AST_E_INT:
	case AST_E_REAL:
	case AST_E_STRING:
	case AST_E_DATE:
	case AST_E_PARAM:
		return true;
	case AST_E_UNARY:
		return (e->op == AST_OP_NEG || e->op == AST_OP_PLUS) &&
		       computed(e->l);
	case AST_E_BINARY:
		return (e->op == AST_OP_ADD || e->op == AST_OP_SUB ||
			e->op == AST_OP_MUL || e->op == AST_OP_DIV ||
			e->op == AST_OP_MOD || e->op == AST_OP_CONCAT) &&
		       computed(e->l) && computed(e->r);
	case AST_E_CAST:
		return computed(e->l);
	case AST_E_SUBQUERY:
		in = e->bind;
		return in && !in->correlated;
	default:
		return false;
	}
}

int plan_index_value(const gpmdb_stmt *st, const ixlate *late,
		     const ast_expr *e, sval *v, rel **hold)
{
	if (e->kind != AST_E_COLUMN && e->kind != AST_E_PARAM &&
	    e->kind != AST_E_BOOL && e->kind != AST_E_NULL &&
	    !exec_literal(e, v)) {
		if (!computed(e))
			return IXV_NONE;
		if (!late || !hold)
			return IXV_UNKNOWN;
		return late->value(late->arg, e, v, hold);
	}
	if (e->kind == AST_E_COLUMN) {
		if (e->rel <= 0)
			return IXV_NONE;
		if (!late)
			return IXV_UNKNOWN;
		return late->value(late->arg, e, v, hold);
	}
	if (e->kind == AST_E_PARAM) {
		memset(v, 0, sizeof(*v));
		v->t = BC_T_NULL;
		/* as compile.c's param(): INT, REAL, TEXT, else NULL */
		if (st && e->ival >= 1 && e->ival <= st->nparams) {
			const sval *p = &st->params[e->ival - 1];
			if (p->t == BC_T_INT || p->t == BC_T_REAL ||
			    p->t == BC_T_TEXT)
				*v = *p;
		}
		return IXV_VALUE;
	}
	if (e->kind == AST_E_BOOL || e->kind == AST_E_NULL)
		return IXV_NONE;
	return exec_literal(e, v) ? IXV_VALUE : IXV_NONE;
}

/* A key value now (into out->hold when computed): IXV_VALUE, or
 * IXV_ERROR, or anything else when there is none (while planning, an
 * outer column's or a computed one's). */
static int key_value(const gpmdb_stmt *st, const ixlate *late,
		     const ast_expr *e, sval *v, ixranges *out)
{
	return plan_index_value(st, late, e, v, &out->hold);
}

/* plan_index_ranges' answer when a value is missing: the statement's
 * error, or 1 (no key: scan). */
#define NO_VALUE(db, kv) ((kv) == IXV_ERROR ? (db)->errcode : 1)

static void key_int(stg_key_val *k, int64_t i)
{
	memset(k, 0, sizeof(*k));
	k->i = i;
}

/* An integer key column (of [min, max]) and a REAL value r: the integers
 * that may compare equal to r. */
static bool key_from_real(double r, int64_t min, int64_t max, stg_key_val *lo,
			  stg_key_val *hi, bool *exact)
{
	if (isnan(r))
		return false;
	if (r >= (double)max || r <= (double)min) {
		/* beyond the column's values: the bound at its end */
		int64_t e = r > 0 ? max : min;
		key_int(lo, e);
		key_int(hi, e);
		*exact = false;
		return true;
	}
	/* an integer and a REAL compare as numbers; past 2^52 the double's
	 * neighbours are not consecutive integers */
	if (fabs(r) >= 4503599627370496.0)
		return false;
	key_int(lo, (int64_t)floor(r));
	key_int(hi, (int64_t)ceil(r));
	*exact = floor(r) == r;
	return true;
}

bool plan_index_key(const sval *v, int stype, int scale, stg_key_val *lo,
		    stg_key_val *hi, bool *exact)
{
	memset(lo, 0, sizeof(*lo));
	memset(hi, 0, sizeof(*hi));
	*exact = true;
	switch (stype) {
	case STG_T_INT:
	case STG_T_BIGINT: {
		int64_t min = stype == STG_T_INT ? INT32_MIN : INT64_MIN;
		int64_t max = stype == STG_T_INT ? INT32_MAX : INT64_MAX;
		if (v->t == BC_T_REAL)
			return key_from_real(v->u.r, min, max, lo, hi, exact);
		if (v->t != BC_T_INT)
			return false;
		if (v->u.i < min || v->u.i > max) {
			int64_t e = v->u.i > max ? max : min;
			key_int(lo, e);
			key_int(hi, e);
			*exact = false;
			return true;
		}
		key_int(lo, v->u.i);
		key_int(hi, v->u.i);
		return true;
	}
	case STG_T_DECIMAL: {
		double p10 = 1;
		int64_t m = 1;
		if (v->t == BC_T_DEC && v->scale == scale) {
			key_int(lo, v->u.i);
			key_int(hi, v->u.i);
			return true;
		}
		for (int i = 0; i < scale; i++) {
			p10 *= 10;
			m *= 10;
		}
		if (v->t == BC_T_INT) {
			int64_t s;
			if (__builtin_mul_overflow(v->u.i, m, &s))
				return false;
			key_int(lo, s);
			key_int(hi, s);
			return true;
		}
		if (v->t != BC_T_REAL || isnan(v->u.r))
			return false;
		/* the scaled REAL is inexact (0.07 * 100 is 7.000000000000001):
		 * one unit more on each side */
		double x = v->u.r * p10;
		if (fabs(x) >= 4503599627370496.0)
			return false;
		key_int(lo, (int64_t)floor(x) - 1);
		key_int(hi, (int64_t)ceil(x) + 1);
		*exact = false;
		return true;
	}
	case STG_T_DOUBLE:
		if (v->t == BC_T_INT) {
			if (v->u.i > 9007199254740992ll ||
			    v->u.i < -9007199254740992ll)
				return false;
			lo->d = hi->d = (double)v->u.i;
		} else if (v->t == BC_T_REAL && !isnan(v->u.r)) {
			lo->d = hi->d = v->u.r;
		} else {
			return false;
		}
		if (lo->d == 0) {
			/* -0.0 equals 0.0 but may be another key */
			lo->d = -0.0;
			hi->d = 0.0;
			*exact = false;
		}
		return true;
	case STG_T_DATE:
		if (v->t != BC_T_DATE)
			return false;
		key_int(lo, v->u.i);
		key_int(hi, v->u.i);
		return true;
	case STG_T_TEXT:
		if (v->t != BC_T_TEXT)
			return false;
		lo->s = hi->s = v->u.s.ptr ? v->u.s.ptr : "";
		lo->len = hi->len = v->u.s.len;
		return true;
	default:
		/* FLOAT(p): a 32-bit value compared as a double; BOOLEAN */
		return false;
	}
}

/* ---- ranges ---- */

void plan_index_ranges_free(ixranges *r)
{
	free(r->r);
	free(r->keys);
	memset(r, 0, sizeof(*r));
}

/* A new range: its lo keys at keys[2k * nkey], hi at keys[(2k+1) nkey]. */
static stg_ix_range *rng_add(ixranges *o, int nkey, const stg_key_val *pre,
			     int npre, stg_key_val **plo, stg_key_val **phi)
{
	stg_ix_range *r;
	stg_key_val *lo, *hi;

	if (o->n == o->cap)
		return NULL;
	r = &o->r[o->n];
	lo = &o->keys[(size_t)o->n * 2 * (size_t)nkey];
	hi = lo + nkey;
	o->n++;
	if (npre) {
		memcpy(lo, pre, sizeof(*pre) * (size_t)npre);
		memcpy(hi, pre, sizeof(*pre) * (size_t)npre);
	}
	*r = (stg_ix_range){.nlo = npre,
			    .nhi = npre,
			    .lo = lo,
			    .hi = hi,
			    .lo_incl = true,
			    .hi_incl = true};
	*plo = lo;
	*phi = hi;
	return r;
}

/* The ranges of an inner side: one per outer row (its keys on the key
 * prefix; a NULL key matches nothing). */
static int join_ranges(gpmdb *db, const ixpath *ix, const ixlate *late,
		       ixranges *out)
{
	uint64_t nrows = late->join_rows(late->arg, ix);
	stg_key_val l, h, *klo, *khi;
	stg_ix_range *r;
	sval v;
	bool ex;

	out->cap = (int)nrows + 1;
	out->r = calloc((size_t)out->cap, sizeof(stg_ix_range));
	out->keys = calloc((size_t)out->cap * 2 * (size_t)ix->nkey,
			   sizeof(stg_key_val));
	if (!out->r || !out->keys) {
		plan_index_ranges_free(out);
		return db_err(db, GPMDB_NOMEM, "out of memory");
	}
	for (uint64_t i = 0; i < nrows; i++) {
		int j;
		klo = khi = NULL;
		r = rng_add(out, ix->nkey, NULL, 0, &klo, &khi);
		if (!r || !klo || !khi)
			return db_err(db, GPMDB_INTERNAL,
				      "index ranges overflow");
		for (j = 0; j < ix->njk; j++) {
			late->join_key(late->arg, ix, i, ix->jkey[j], &v);
			if (v.t == BC_T_NULL)
				break;
			if (!plan_index_key(&v, ix->kstype[j], ix->kscale[j],
					    &l, &h, &ex))
				return 1;
			klo[j] = l;
			khi[j] = h;
			r->nlo = r->nhi = j + 1;
			if (!ex)
				break;
		}
		if (j < ix->njk && v.t == BC_T_NULL)
			out->n--; /* no match: no range */
	}
	return GPMDB_OK;
}

/* bound's answer for a NULL bound: no row can match (no GPMDB code). */
#define BOUND_NULL (-1)

/* The key of bound e (the interval's lo, or hi) on key column ix->neq:
 * GPMDB_OK with *key and *exact, BOUND_NULL, 1 when the value can be no
 * key (scan instead), or the statement's error. */
static int bound(gpmdb *db, const gpmdb_stmt *st, const ixlate *late,
		 const ixpath *ix, const ast_expr *e, bool hi, ixranges *out,
		 stg_key_val *key, bool *exact)
{
	int j = ix->neq, kv;
	stg_key_val l, h;
	sval v;

	if ((kv = key_value(st, late, e, &v, out)) != IXV_VALUE)
		return NO_VALUE(db, kv);
	if (v.t == BC_T_NULL)
		return BOUND_NULL;
	if (!plan_index_key(&v, ix->kstype[j], ix->kscale[j], &l, &h, exact))
		return 1;
	*key = hi ? h : l;
	return GPMDB_OK;
}

int plan_index_ranges(gpmdb *db, const gpmdb_stmt *st, const ixlate *late,
		      const ixpath *ix, ixranges *out)
{
	int cap = ix->in ? ix->in->n + 1 : 2, nk = ix->nkey;
	stg_key_val pre[STG_INDEX_MAX_COLS], l, h, *klo, *khi;
	stg_ix_range *r;
	sval v;
	bool ex;
	int kv, rc;

	memset(out, 0, sizeof(*out));
	if (ix->njk)
		return ix->jrel && late ? join_ranges(db, ix, late, out) : 1;
	out->cap = cap;
	out->r = calloc((size_t)cap, sizeof(stg_ix_range));
	out->keys = calloc((size_t)cap * 2 * (size_t)nk, sizeof(stg_key_val));
	if (!out->r || !out->keys) {
		plan_index_ranges_free(out);
		return db_err(db, GPMDB_NOMEM, "out of memory");
	}
	for (int j = 0; j < ix->neq; j++) {
		memset(&pre[j], 0, sizeof(pre[j]));
		if (ix->is_null[j]) {
			pre[j].null = true;
			continue;
		}
		if ((kv = key_value(st, late, ix->eq[j], &v, out)) != IXV_VALUE)
			return NO_VALUE(db, kv);
		if (v.t == BC_T_NULL) /* = NULL: no row */
			return GPMDB_OK;
		if (!plan_index_key(&v, ix->kstype[j], ix->kscale[j], &l, &h,
				    &ex))
			return 1;
		if (!ex) {
			/* not one key (bindings the plan did not see): the
			 * interval [l, h] on this column, nothing after it;
			 * the order of an ordered read would be lost */
			if (ix->ordered)
				return 1;
			r = rng_add(out, nk, pre, j, &klo, &khi);
			klo[j] = l;
			khi[j] = h;
			r->nlo = r->nhi = j + 1;
			return GPMDB_OK;
		}
		pre[j] = l;
	}
	if (!ix->icol) {
		r = rng_add(out, nk, pre, ix->neq, &klo, &khi);
		r->desc = ix->desc;
		return GPMDB_OK;
	}
	int j = ix->neq;
	if (ix->in) {
		for (int k = 0; k < ix->in->n; k++) {
			if ((kv = key_value(st, late, ix->in->v[k], &v, out)) !=
			    IXV_VALUE)
				return NO_VALUE(db, kv);
			if (v.t == BC_T_NULL) /* x IN (NULL, ...) */
				continue;
			if (!plan_index_key(&v, ix->kstype[j], ix->kscale[j],
					    &l, &h, &ex))
				return 1;
			r = rng_add(out, nk, pre, j, &klo, &khi);
			klo[j] = l;
			khi[j] = h;
			r->nlo = r->nhi = j + 1;
		}
		return GPMDB_OK;
	}
	r = rng_add(out, nk, pre, j, &klo, &khi);
	r->desc = ix->desc;
	if (ix->lo) {
		if ((rc = bound(db, st, late, ix, ix->lo, false, out, &klo[j],
				&ex)))
			return rc == BOUND_NULL ? (out->n = 0, GPMDB_OK) : rc;
		r->nlo = j + 1;
		r->lo_incl = ex ? ix->lo_incl : true;
	} else {
		/* above the NULLs, which no comparison accepts */
		memset(&klo[j], 0, sizeof(klo[j]));
		klo[j].null = true;
		r->nlo = j + 1;
		r->lo_incl = false;
	}
	if (ix->hi) {
		if ((rc = bound(db, st, late, ix, ix->hi, true, out, &khi[j],
				&ex)))
			return rc == BOUND_NULL ? (out->n = 0, GPMDB_OK) : rc;
		r->nhi = j + 1;
		r->hi_incl = ex ? ix->hi_incl : true;
	}
	return GPMDB_OK;
}

/* ---- the conjuncts ---- */

enum { T_EQ, T_NULL, T_LO, T_HI, T_IN };

typedef struct term {
	int kind;
	int tc; /* table column */
	ast_expr *v;
	ast_expr_list *in;
	bool incl;
} term;

typedef struct terms {
	int n, cap;
	term *v;
} terms;

/* A key value: a literal, a parameter, an outer query's column. */
static bool is_const(const ast_expr *e)
{
	switch (e->kind) {
	case AST_E_INT:
	case AST_E_REAL:
	case AST_E_STRING:
	case AST_E_DATE:
	case AST_E_PARAM:
		return true;
	case AST_E_COLUMN:
		return e->rel > 0;
	default:
		return computed(e);
	}
}

/* The table column of scan s that e reads, or -1. */
static int scan_col(const pnode *s, const ast_expr *e)
{
	if (e->kind != AST_E_COLUMN || e->rel != 0)
		return -1;
	for (int i = 0; i < s->ncols; i++)
		if (s->g[i] == e->col && e->col != G_ROWID) {
			int tc = s->tcol ? s->tcol[i] : i;
			return tc < s->ntcols ? tc : -1;
		}
	return -1;
}

/* The table column of scan s that column reference e, read over node
 * in's output, is: through FILTERs and the plain columns of PROJECTs (a
 * view's or a derived table's), -1 otherwise. */
static int col_at(const pnode *in, const pnode *s, const ast_expr *e)
{
	while (in && in != s) {
		if (in->kind == PN_PROJECT && !in->post) {
			int i = 0;
			if (e->kind != AST_E_COLUMN || e->rel != 0)
				return -1;
			while (i < in->ncols && i < in->nexprs &&
			       in->g[i] != e->col)
				i++;
			if (i >= in->ncols || i >= in->nexprs)
				return -1;
			e = in->exprs[i];
		} else if (in->kind != PN_FILTER || in->post) {
			return -1;
		}
		in = in->l;
	}
	return in ? scan_col(s, e) : -1;
}

static int terms_add(bctx *b, terms *t, term x)
{
	if (t->n == t->cap) {
		int cap = t->cap ? t->cap * 2 : 8;
		term *n = ast_alloc(b->a, sizeof(term) * (size_t)cap);
		if (!n)
			return NOMEM(b);
		if (t->n)
			memcpy(n, t->v, sizeof(term) * (size_t)t->n);
		t->v = n;
		t->cap = cap;
	}
	t->v[t->n++] = x;
	return GPMDB_OK;
}

/* The terms of conjunct e, over node in's output, on the columns of
 * scan s (AND split). */
static int terms_of(bctx *b, const pnode *s, const pnode *in, ast_expr *e,
		    terms *t)
{
	int tc;

	if (e->kind == AST_E_BINARY && e->op == AST_OP_AND) {
		int rc = terms_of(b, s, in, e->l, t);
		return rc ? rc : terms_of(b, s, in, e->r, t);
	}
	switch (e->kind) {
	case AST_E_BINARY: {
		ast_expr *c = e->l, *k = e->r;
		int op = e->op;
		if (op != AST_OP_EQ && op != AST_OP_LT && op != AST_OP_LE &&
		    op != AST_OP_GT && op != AST_OP_GE && op != AST_OP_IS)
			return GPMDB_OK;
		if (col_at(in, s, c) < 0) {
			/* constant op column: the mirrored comparison */
			c = e->r;
			k = e->l;
			op = op == AST_OP_LT   ? AST_OP_GT
			     : op == AST_OP_LE ? AST_OP_GE
			     : op == AST_OP_GT ? AST_OP_LT
			     : op == AST_OP_GE ? AST_OP_LE
					       : op;
		}
		if ((tc = col_at(in, s, c)) < 0)
			return GPMDB_OK;
		if (op == AST_OP_IS && k->kind == AST_E_NULL)
			return terms_add(b, t,
					 (term){T_NULL, tc, NULL, NULL, true});
		/* `a IS ?` bound to NULL means IS NULL: a parameter's value
		 * is not known for good here */
		if (!is_const(k) || (op == AST_OP_IS && k->kind == AST_E_PARAM))
			return GPMDB_OK;
		if (op == AST_OP_EQ || op == AST_OP_IS)
			return terms_add(b, t, (term){T_EQ, tc, k, NULL, true});
		if (op == AST_OP_GT || op == AST_OP_GE)
			return terms_add(
			    b, t, (term){T_LO, tc, k, NULL, op == AST_OP_GE});
		return terms_add(b, t,
				 (term){T_HI, tc, k, NULL, op == AST_OP_LE});
	}
	case AST_E_ISNULL:
		if (e->negated || (tc = col_at(in, s, e->l)) < 0)
			return GPMDB_OK;
		return terms_add(b, t, (term){T_NULL, tc, NULL, NULL, true});
	case AST_E_BETWEEN: {
		int rc;
		if (e->negated || (tc = col_at(in, s, e->l)) < 0 ||
		    !is_const(e->r) || !is_const(e->x))
			return GPMDB_OK;
		if ((rc = terms_add(b, t, (term){T_LO, tc, e->r, NULL, true})))
			return rc;
		return terms_add(b, t, (term){T_HI, tc, e->x, NULL, true});
	}
	case AST_E_IN_LIST:
		if (e->negated || !e->list || !e->list->n ||
		    (tc = col_at(in, s, e->l)) < 0)
			return GPMDB_OK;
		for (int i = 0; i < e->list->n; i++)
			if (!is_const(e->list->v[i]))
				return GPMDB_OK;
		return terms_add(b, t, (term){T_IN, tc, NULL, e->list, true});
	default:
		return GPMDB_OK;
	}
}

/* ---- paths ---- */

/* Whether v (current value) converts to a key of key column j: exactly
 * (exact) or at all. */
static bool conv_ok(bctx *b, const ixpath *ix, int j, const ast_expr *e,
		    bool *exact)
{
	sval v;
	stg_key_val l, h;
	int kv = plan_index_value(b->st, NULL, e, &v, NULL);

	*exact = true;
	if (kv == IXV_UNKNOWN) {
		/* an outer column: known per outer row; its type says
		 * whether it can be a key (an inexact one at run time makes
		 * the range an interval on that column, ix->ordered never
		 * has outer keys) */
		int t = expr_type(e).t, st = ix->kstype[j];
		if (ix->ordered)
			return false;
		switch (st) {
		case STG_T_INT:
		case STG_T_BIGINT:
		case STG_T_DECIMAL:
		case STG_T_DOUBLE:
			return t == BC_T_INT || t == BC_T_REAL ||
			       (t == BC_T_DEC && st == STG_T_DECIMAL);
		case STG_T_TEXT:
			return t == BC_T_TEXT;
		case STG_T_DATE:
			return t == BC_T_DATE;
		default:
			return false;
		}
	}
	if (kv != IXV_VALUE)
		return false;
	if (v.t == BC_T_NULL)
		return true; /* no row: any range will do */
	return plan_index_key(&v, ix->kstype[j], ix->kscale[j], &l, &h, exact);
}

/* The path of index info over scan s given the terms; NULL when the
 * terms give it no key (and !ordered). */
static ixpath *path_make(bctx *b, const pnode *s, const stg_index_info *info,
			 const terms *t, const stg_schema *sch, bool ordered)
{
	ixpath *ix = ast_alloc(b->a, sizeof(ixpath));
	int nk = info->ncols;
	bool ex;

	if (!ix)
		return NULL;
	ix->index_id = info->index_id;
	ix->iname = ast_strndup(b->a, info->name, strlen(info->name));
	ix->unique = info->unique;
	ix->nkey = nk;
	ix->ktcol = ast_alloc(b->a, sizeof(int) * (size_t)nk);
	ix->kstype = ast_alloc(b->a, sizeof(int) * (size_t)nk);
	ix->kscale = ast_alloc(b->a, (size_t)nk);
	ix->kname = ast_alloc(b->a, sizeof(char *) * (size_t)nk);
	ix->eq = ast_alloc(b->a, sizeof(ast_expr *) * (size_t)nk);
	ix->is_null = ast_alloc(b->a, sizeof(bool) * (size_t)nk);
	if (!ix->ktcol || !ix->kstype || !ix->kscale || !ix->kname || !ix->eq ||
	    !ix->is_null)
		return NULL;
	for (int j = 0; j < nk; j++) {
		int tc = (int)info->cols[j];
		if (tc < 0 || tc >= s->ntcols)
			return NULL;
		ix->ktcol[j] = tc;
		ix->kstype[j] = s->stype[tc];
		ix->kscale[j] = sch->cols[tc].scale;
		ix->kname[j] = ast_strndup(b->a, sch->cols[tc].name,
					   strlen(sch->cols[tc].name));
	}
	ix->ordered = ordered;
	/* the equality prefix: exact keys only */
	int j = 0;
	for (; j < nk; j++) {
		int k;
		for (k = 0; k < t->n; k++) {
			const term *m = &t->v[k];
			if (m->tc != ix->ktcol[j])
				continue;
			if (m->kind == T_NULL)
				break;
			if (m->kind == T_EQ && conv_ok(b, ix, j, m->v, &ex) &&
			    ex)
				break;
		}
		if (k == t->n)
			break;
		ix->is_null[j] = t->v[k].kind == T_NULL;
		ix->eq[j] = t->v[k].v;
	}
	ix->neq = j;
	if (j < nk) {
		/* an interval on key column j: an IN list (not for an
		 * ordered read: one range per value), bounds, or an equality
		 * whose key is not exact ([floor, ceil]) */
		for (int k = 0; k < t->n && !ix->icol; k++) {
			const term *m = &t->v[k];
			bool ok = m->tc == ix->ktcol[j];
			if (!ok)
				continue;
			if (m->kind == T_IN && !ordered) {
				for (int i = 0; i < m->in->n && ok; i++)
					ok =
					    conv_ok(b, ix, j, m->in->v[i], &ex);
				if (ok) {
					ix->icol = true;
					ix->in = m->in;
				}
			} else if (m->kind == T_EQ &&
				   conv_ok(b, ix, j, m->v, &ex)) {
				ix->icol = true;
				ix->lo = ix->hi = m->v;
				ix->lo_incl = ix->hi_incl = true;
			}
		}
		for (int k = 0; k < t->n && !ix->in && !ix->lo; k++) {
			const term *m = &t->v[k];
			if (m->tc == ix->ktcol[j] && m->kind == T_LO &&
			    conv_ok(b, ix, j, m->v, &ex)) {
				ix->icol = true;
				ix->lo = m->v;
				ix->lo_incl = m->incl;
			}
		}
		for (int k = 0; k < t->n && !ix->in && !ix->hi; k++) {
			const term *m = &t->v[k];
			if (m->tc == ix->ktcol[j] && m->kind == T_HI &&
			    conv_ok(b, ix, j, m->v, &ex)) {
				ix->icol = true;
				ix->hi = m->v;
				ix->hi_incl = m->incl;
			}
		}
	}
	if (!ordered && !ix->neq && !ix->icol)
		return NULL;
	return ix;
}

static bool outer_ref(const ast_expr *e)
{
	return e && e->kind == AST_E_COLUMN && e->rel > 0;
}

/* Known only when the read runs: an outer column, a computed value. */
static bool late_value(const ast_expr *e)
{
	sval v;

	return e && (outer_ref(e) ||
		     plan_index_value(NULL, NULL, e, &v, NULL) == IXV_UNKNOWN);
}

/* Whether a key value of the path is an outer query's column (outer) or
 * known only when it runs (late). */
static bool path_has(const ixpath *ix, bool (*f)(const ast_expr *))
{
	bool o = f(ix->lo) || f(ix->hi);

	for (int j = 0; j < ix->neq; j++)
		o |= f(ix->eq[j]);
	for (int k = 0; ix->in && k < ix->in->n; k++)
		o |= f(ix->in->v[k]);
	return o;
}

static bool path_outer(const ixpath *ix)
{
	return path_has(ix, outer_ref);
}

/* Estimated rows of a path for the values bound now. */
static double path_rows(bctx *b, const ixpath *ix, const stg_index_info *info)
{
	ixranges rg;
	double f = 0;
	int rc;

	if (path_has(ix, late_value)) {
		/* keys known when the read runs: a guess, an equality on a
		 * key as selective as a join key's, a range as a filter's */
		f = ix->neq || ix->in || (ix->lo && ix->lo == ix->hi) ? 0.01
								      : 0.25;
		return f * (double)info->entries;
	}
	rc = plan_index_ranges(b->db, b->st, NULL, ix, &rg);
	if (rc) {
		plan_index_ranges_free(&rg);
		db_clear(b->db);
		return -1;
	}
	for (int i = 0; i < rg.n; i++)
		f += stg_index_estimate(b->db->pool, ix->index_id, &rg.r[i]);
	plan_index_ranges_free(&rg);
	return f * (double)info->entries;
}

/* Key columns a path constrains. */
static int path_cols(const ixpath *ix)
{
	return ix->neq + (ix->icol ? 1 : 0);
}

/* A unique index with an equality on every key column: one row. */
static bool path_point(const ixpath *ix)
{
	return ix->unique && ix->neq == ix->nkey;
}

typedef struct scan_ctx {
	stg_index_info *info;
	int ninfo;
	stg_schema *sch;
	double live;
} scan_ctx;

static int scan_ctx_open(bctx *b, const pnode *s, scan_ctx *c)
{
	stg_pool *p = b->db->pool;

	memset(c, 0, sizeof(*c));
	if (stg_index_list(p, s->table_id, &c->info, &c->ninfo))
		return db_err_stg(b->db);
	if (!c->ninfo)
		return GPMDB_OK;
	if (stg_table_schema(p, s->table_id, &c->sch)) {
		free(c->info);
		c->info = NULL;
		return db_err_stg(b->db);
	}
	c->live = (double)(stg_row_count(p, s->table_id) -
			   stg_deleted_count(p, s->table_id));
	return GPMDB_OK;
}

static void scan_ctx_close(scan_ctx *c)
{
	free(c->info);
	if (c->sch)
		stg_schema_free(c->sch);
}

/* The terms of the FILTER chain from top down to scan s. */
static int chain_terms(bctx *b, pnode *top, const pnode *s, terms *t)
{
	int rc;

	for (pnode *f = top; f != s; f = f->l)
		if (f->kind == PN_FILTER && !f->post &&
		    (rc = terms_of(b, s, f->l, f->pred, t)))
			return rc;
	return GPMDB_OK;
}

/* The best search path for scan s under the filters from top, or NULL;
 * *rows its estimate. */
static int best_search(bctx *b, pnode *top, pnode *s, scan_ctx *c,
		       ixpath **best, double *rows)
{
	terms t = {0};
	int rc;

	*best = NULL;
	*rows = -1;
	if ((rc = chain_terms(b, top, s, &t)))
		return rc;
	if (!t.n)
		return GPMDB_OK;
	for (int i = 0; i < c->ninfo; i++) {
		ixpath *ix = path_make(b, s, &c->info[i], &t, c->sch, false);
		double r;
		if (!ix) {
			if (b->a->err)
				return NOMEM(b);
			continue;
		}
		if (path_point(ix) && !ix->in) {
			*best = ix;
			*rows = 1;
			return GPMDB_OK;
		}
		r = path_rows(b, ix, &c->info[i]);
		if (r < 0)
			continue;
		/* ties: the path that uses more key columns */
		if (!*best || r < *rows ||
		    (r == *rows && path_cols(ix) > path_cols(*best))) {
			*best = ix;
			*rows = r;
		}
	}
	if (*best && *rows > IX_MAX_FRACTION * c->live && !path_point(*best))
		*best = NULL;
	return GPMDB_OK;
}

static void to_iscan(pnode *top, pnode *s, ixpath *ix, double rows)
{
	s->kind = PN_ISCAN;
	s->ix = ix;
	if (rows >= 0 && rows < s->est)
		s->est = rows + 1;
	for (pnode *f = top; f != s; f = f->l)
		if (f->est > s->est)
			f->est = s->est;
}

/* The FILTER chain over a SCAN starting at n, or NULL; deep: through
 * PROJECTs too (a view's, a derived table's: reading fewer rows under
 * them changes nothing, unlike under a LIMIT, DISTINCT or aggregate). */
static pnode *chain_scan_at(pnode *n, bool deep)
{
	while (n && ((n->kind == PN_FILTER && !n->post) ||
		     (deep && n->kind == PN_PROJECT && !n->post)))
		n = n->l;
	return n && n->kind == PN_SCAN ? n : NULL;
}

static pnode *chain_scan(pnode *n)
{
	return chain_scan_at(n, false);
}

/* The key column of ix that sort column k of project pj reads, or -1. */
static int sort_key_col(const pnode *pj, const pnode *s, const ixpath *ix,
			int k)
{
	int tc;

	if (k < 0 || k >= pj->nexprs || (tc = scan_col(s, pj->exprs[k])) < 0)
		return -1;
	for (int j = 0; j < ix->nkey; j++)
		if (ix->ktcol[j] == tc)
			return j;
	return -1;
}

/* Whether the SORT so is the order of ix read forwards (or backwards:
 * *desc) after its equality prefix. */
static bool sort_matches(const pnode *so, const pnode *pj, const pnode *s,
			 const ixpath *ix, bool *desc)
{
	int next = ix->neq, nvar = 0;

	for (int i = 0; i < so->nsort; i++) {
		int j = sort_key_col(pj, s, ix, so->sort_col[i]);
		if (j < 0)
			return false;
		if (j < ix->neq)
			continue; /* one value in the range */
		if (j != next++)
			return false;
		if (so->nulls_first[i] != !so->desc[i])
			return false;
		if (nvar++ && so->desc[i] != *desc)
			return false;
		*desc = so->desc[i];
	}
	return nvar > 0;
}

/* Whether e reads an outer query's column (outside its subqueries). */
static bool expr_outer(const ast_expr *e)
{
	if (!e)
		return false;
	if (outer_ref(e))
		return true;
	if (expr_outer(e->l) || expr_outer(e->r) || expr_outer(e->x))
		return true;
	for (int i = 0; e->list && i < e->list->n; i++)
		if (expr_outer(e->list->v[i]))
			return true;
	return false;
}

/* LIMIT over SORT over PROJECT over FILTERs over SCAN: an index read in
 * order instead of the sort, when an index fits and the rows wanted are
 * few.  *done when it rewrote the plan. */
static int try_ordered(bctx *b, pnode *li, bool *done)
{
	pnode *so = li->l, *pj, *s;
	scan_ctx c;
	sval lv, ov;
	double want;
	int rc;

	*done = false;
	if (!so || so->kind != PN_SORT || !(pj = so->l) ||
	    pj->kind != PN_PROJECT || pj->post || !(s = chain_scan(pj->l)) ||
	    s->ix_tried)
		return GPMDB_OK;
	/* in a correlated subquery the filters change with every outer row:
	 * an ordered read could go through the whole index each time, where
	 * the scan is kept for the statement (filter_corr) and sorted */
	for (pnode *f = pj->l; f != s; f = f->l)
		if (expr_outer(f->pred))
			return GPMDB_OK;
	if (plan_index_value(b->st, NULL, li->limit, &lv, NULL) != IXV_VALUE ||
	    lv.t != BC_T_INT || lv.u.i < 0)
		return GPMDB_OK;
	want = (double)lv.u.i;
	if (li->offset) {
		if (plan_index_value(b->st, NULL, li->offset, &ov, NULL) !=
			IXV_VALUE ||
		    ov.t != BC_T_INT)
			return GPMDB_OK;
		if (ov.u.i > 0)
			want += (double)ov.u.i;
	}
	if ((rc = scan_ctx_open(b, s, &c)))
		return rc;
	if (!c.ninfo ||
	    (want > IX_ORDER_SMALL && want > IX_ORDER_FRACTION * c.live)) {
		scan_ctx_close(&c);
		return GPMDB_OK;
	}
	terms t = {0};
	ixpath *best = NULL, *srch;
	double srows;
	if ((rc = chain_terms(b, pj->l, s, &t)) ||
	    (rc = best_search(b, pj->l, s, &c, &srch, &srows))) {
		scan_ctx_close(&c);
		return rc;
	}
	/* a search that finds few rows beats reading in order */
	if (srch && (path_point(srch) || srows <= 4 * want)) {
		scan_ctx_close(&c);
		return GPMDB_OK;
	}
	/* of the indexes in the ORDER BY's order, the one whose key the
	 * WHERE constrains most */
	for (int i = 0; i < c.ninfo; i++) {
		bool desc = false;
		ixpath *ix = path_make(b, s, &c.info[i], &t, c.sch, true);
		if (!ix) {
			if (b->a->err) {
				scan_ctx_close(&c);
				return NOMEM(b);
			}
			continue;
		}
		if (sort_matches(so, pj, s, ix, &desc) &&
		    (!best || path_cols(ix) > path_cols(best))) {
			ix->desc = desc;
			best = ix;
		}
	}
	scan_ctx_close(&c);
	if (!best)
		return GPMDB_OK;
	s->ix_tried = true;
	to_iscan(pj->l, s, best, -1);
	li->l = pj; /* no sort: the rows come in order */
	*done = true;
	return GPMDB_OK;
}

static int try_search(bctx *b, pnode *top)
{
	pnode *s = chain_scan_at(top, true);
	scan_ctx c;
	ixpath *ix;
	double rows;
	bool corr = false;
	int rc;

	/* each chain once from its top (the filters below it see fewer
	 * terms); a view's own chain, tried when the view was planned, is
	 * tried again from the outer query's filters above it */
	if (!s || top->ix_tried || top == s)
		return GPMDB_OK;
	for (pnode *f = top; f != s; f = f->l) {
		f->ix_tried = true;
		corr |= f->kind == PN_FILTER && expr_outer(f->pred);
	}
	s->ix_tried = true;
	if ((rc = scan_ctx_open(b, s, &c)))
		return rc;
	if (c.ninfo && !(rc = best_search(b, top, s, &c, &ix, &rows)) && ix &&
	    /* a correlated subquery's filter keeps its scan for the whole
	     * statement (exec.c filter_corr): a search by constants alone
	     * would run again for every outer row */
	    (!corr || path_outer(ix) || path_point(ix)))
		to_iscan(top, s, ix, rows);
	scan_ctx_close(&c);
	return rc;
}

/* A join key of the inner side that is a plain column of scan s: its
 * number in n's keys, or -1. */
static int join_key_of(const pnode *n, const pnode *s, int tc)
{
	for (int k = 0; k < n->nkeys; k++)
		if (scan_col(s, n->rkeys[k]) == tc)
			return k;
	return -1;
}

/*
 * Index nested loop: a join whose outer (left) side is estimated small
 * and whose inner side is a table (under filters) with an index led by
 * the inner join keys reads only the inner rows whose keys some outer row
 * has, through the index, one range per outer row; the hash join then
 * joins them as before (a reduction of the inner side: the result is the
 * same whatever the inner side's other rows).  Not for NOT IN's join,
 * whose rule needs to know whether the inner side has a NULL key.
 */
static int try_join(bctx *b, pnode *n)
{
	pnode *s = chain_scan(n->r);
	scan_ctx c;
	ixpath *best = NULL;
	int rc;

	if (!n->nkeys || n->jtype == JOIN_ANTI_NULL || n->jtype == JOIN_CROSS ||
	    !s || n->l->est > 100000)
		return GPMDB_OK;
	if ((rc = scan_ctx_open(b, s, &c)))
		return rc;
	for (int i = 0; i < c.ninfo; i++) {
		const stg_index_info *in = &c.info[i];
		int jk[STG_INDEX_MAX_COLS], nj = 0;
		while (nj < in->ncols) {
			int k = join_key_of(n, s, (int)in->cols[nj]);
			bool dup = false;
			for (int u = 0; u < nj; u++)
				dup |= jk[u] == k;
			if (k < 0 || dup)
				break;
			jk[nj++] = k;
		}
		if (!nj)
			continue;
		/* each outer row reads about one entry of a unique key, a few
		 * of another */
		bool point = in->unique && nj == in->ncols;
		if (n->l->est > (point ? 0.1 : 0.01) * c.live)
			continue;
		if (best && nj <= best->njk)
			continue;
		terms t = {0};
		ixpath *ix = path_make(b, s, in, &t, c.sch, true);
		if (!ix) {
			scan_ctx_close(&c);
			return b->a->err ? NOMEM(b) : GPMDB_OK;
		}
		ix->ordered = false;
		ix->njk = nj;
		ix->jkey = ast_alloc(b->a, sizeof(int) * (size_t)nj);
		if (!ix->jkey) {
			scan_ctx_close(&c);
			return NOMEM(b);
		}
		memcpy(ix->jkey, jk, sizeof(int) * (size_t)nj);
		best = ix;
	}
	scan_ctx_close(&c);
	if (best) {
		s->ix_tried = true;
		to_iscan(n->r, s, best, n->l->est);
	}
	return GPMDB_OK;
}

int plan_index(bctx *b, pnode *n)
{
	int rc;
	bool done;

	if (!n || !b->db->pool)
		return GPMDB_OK;
	if (n->kind == PN_LIMIT && (rc = try_ordered(b, n, &done)))
		return rc;
	/* a filter chain over a scan (the lower filters of the chain find
	 * their scan tried already); over anything else, what is below */
	if (n->kind == PN_FILTER && !n->post && (rc = try_search(b, n)))
		return rc;
	if ((rc = plan_index(b, n->l)) || (rc = plan_index(b, n->r)))
		return rc;
	/* after the children: a search by constants on the inner side
	 * comes first */
	if (n->kind == PN_JOIN && (rc = try_join(b, n)))
		return rc;
	return GPMDB_OK;
}

/* ---- EXPLAIN ---- */

void plan_index_explain(const pnode *n, char *buf, size_t len)
{
	const ixpath *ix = n->ix;
	size_t o;
	int k = 0;

#define IXP(...)                                                               \
	do {                                                                   \
		if (o < len)                                                   \
			o += (size_t)snprintf(buf + o, len - o, __VA_ARGS__);  \
	} while (0)
	o = 0;
	if (ix->njk) {
		IXP("SEARCH %s USING INDEX %s (", n->tname, ix->iname);
		for (int j = 0; j < ix->njk; j++)
			IXP("%s%s=?", j ? " AND " : "", ix->kname[j]);
		IXP(")");
		return;
	}
	if (!ix->neq && !ix->icol) {
		IXP("SCAN %s USING INDEX %s", n->tname, ix->iname);
		return;
	}
	IXP("SEARCH %s USING INDEX %s (", n->tname, ix->iname);
	for (int j = 0; j < ix->neq; j++)
		IXP("%s%s=?", k++ ? " AND " : "", ix->kname[j]);
	if (ix->icol) {
		const char *c = ix->kname[ix->neq];
		if (ix->in || (ix->lo && ix->lo == ix->hi)) {
			IXP("%s%s=?", k++ ? " AND " : "", c);
		} else {
			if (ix->lo)
				IXP("%s%s>?", k++ ? " AND " : "", c);
			if (ix->hi)
				IXP("%s%s<?", k++ ? " AND " : "", c);
		}
	}
	IXP(")");
#undef IXP
}
