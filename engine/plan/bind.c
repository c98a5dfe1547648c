/*
 * bind.c - name resolution and static types of expressions.
 *
 * Binding writes the AST's binder slots in place: rtype (a packed etype),
 * rel (the scope level a column reference resolved at: 0 = this query,
 * 1 = the enclosing one, ...), col (the column's id in that query's FROM
 * layout) and bind (an einfo for subqueries and aggregate rewriting).
 * Binding again (new parameter types) overwrites them.
 */
#include "../value.h"
#include "plan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

etype expr_type(const ast_expr *e)
{
	return e->rtype ? et_unpack(e->rtype) : et_make(BC_T_NULL);
}

static void set_type(ast_expr *e, etype t)
{
	e->rtype = et_pack(t);
}

einfo *einfo_get(bctx *b, ast_expr *e)
{
	einfo *in = e->bind;

	if (!in) {
		in = ast_alloc(b->a, sizeof(*in));
		if (!in)
			return NULL;
		in->post_col = -1;
		e->bind = in;
	}
	return in;
}

etype stg_to_etype(const stg_column_info *c)
{
	etype t = et_make(BC_T_NULL);

	switch (c->type) {
	case STG_T_INT:
	case STG_T_BIGINT:
		t.t = BC_T_INT;
		t.aff = AFF_NUM;
		break;
	case STG_T_FLOAT:
	case STG_T_DOUBLE:
		t.t = BC_T_REAL;
		t.aff = AFF_NUM;
		break;
	case STG_T_DECIMAL:
		t.t = BC_T_DEC;
		t.prec = c->precision;
		t.scale = c->scale;
		t.aff = AFF_NUM;
		break;
	case STG_T_DATE:
		t.t = BC_T_DATE;
		t.aff = AFF_NUM;
		break;
	case STG_T_BOOLEAN:
		t.t = BC_T_BOOL;
		t.aff = AFF_NUM;
		break;
	case STG_T_TEXT:
		t.t = BC_T_TEXT;
		t.aff = AFF_TEXT;
		break;
	}
	return t;
}

/* ---- functions ---- */

enum { F_SCALAR, F_AGG };

typedef struct fdef {
	const char *name;
	int kind, min, max, agg;
} fdef;

static const fdef funcs[] = {
    {"count", F_AGG, 0, 1, AGG_COUNT},
    {"sum", F_AGG, 1, 1, AGG_SUM},
    {"avg", F_AGG, 1, 1, AGG_AVG},
    {"total", F_AGG, 1, 1, AGG_TOTAL},
    {"group_concat", F_AGG, 1, 2, AGG_GROUP_CONCAT},
    {"min", F_AGG, 1, 1, AGG_MIN},
    {"max", F_AGG, 1, 1, AGG_MAX},
    {"min", F_SCALAR, 2, 100, 0},
    {"max", F_SCALAR, 2, 100, 0},
    {"abs", F_SCALAR, 1, 1, 0},
    {"round", F_SCALAR, 1, 2, 0},
    {"length", F_SCALAR, 1, 1, 0},
    {"substr", F_SCALAR, 2, 3, 0},
    {"substring", F_SCALAR, 2, 3, 0},
    {"upper", F_SCALAR, 1, 1, 0},
    {"lower", F_SCALAR, 1, 1, 0},
    {"trim", F_SCALAR, 1, 2, 0},
    {"ltrim", F_SCALAR, 1, 2, 0},
    {"rtrim", F_SCALAR, 1, 2, 0},
    {"replace", F_SCALAR, 3, 3, 0},
    {"instr", F_SCALAR, 2, 2, 0},
    {"coalesce", F_SCALAR, 2, 100, 0},
    {"ifnull", F_SCALAR, 2, 2, 0},
    {"nullif", F_SCALAR, 2, 2, 0},
    {"typeof", F_SCALAR, 1, 1, 0},
    {"char", F_SCALAR, 0, 100, 0},
};

static const fdef *func_find(const char *name, int nargs, bool *known)
{
	*known = false;
	for (size_t i = 0; i < sizeof(funcs) / sizeof(funcs[0]); i++) {
		if (strcasecmp(funcs[i].name, name))
			continue;
		*known = true;
		if (nargs >= funcs[i].min && nargs <= funcs[i].max)
			return &funcs[i];
	}
	return NULL;
}

bool expr_is_agg_call(const ast_expr *e, int *fn)
{
	bool known;
	const fdef *f;
	int n;

	if (e->kind != AST_E_FUNC)
		return false;
	n = e->list ? e->list->n : 0;
	if (e->star)
		n = 0;
	f = func_find(e->name, n, &known);
	if (!f || f->kind != F_AGG)
		return false;
	if (fn)
		*fn = e->star ? AGG_COUNT_STAR : f->agg;
	return true;
}

/* ---- column lookup ---- */

/* Subquery boundaries being bound, for the `correlated` flag. */
static struct {
	scope *sc;
	einfo *in;
} corr_stack[256];
static __thread int corr_n;

static bool scope_below(scope *s, scope *anc)
{
	for (; s; s = s->up)
		if (s == anc)
			return true;
	return false;
}

static int scope_add_oref(scope *s, int g)
{
	for (int i = 0; i < s->norefs; i++)
		if (s->orefs[i] == g)
			return 0;
	if (s->norefs == s->orefcap) {
		int cap = s->orefcap ? s->orefcap * 2 : 8;
		int *n = realloc(s->orefs, (size_t)cap * sizeof(int));
		if (!n)
			return -1;
		s->orefs = n;
		s->orefcap = cap;
	}
	s->orefs[s->norefs++] = g;
	return 0;
}

static int bind_column(bctx *b, scope *sc, ast_expr *e)
{
	int level = 0;

	for (scope *s = sc; s; s = s->up, level++) {
		int found = -1, n = 0;

		for (int i = 0; i < s->ncols; i++) {
			scol *c = &s->cols[i];
			if (strcasecmp(c->name, e->name))
				continue;
			if (e->table) {
				if (!c->tab || strcasecmp(c->tab, e->table))
					continue;
			} else if (c->hidden) {
				continue;
			}
			if (found < 0)
				found = i;
			n++;
		}
		if (n > 1)
			return db_err(b->db, GPMDB_ERROR,
				      "ambiguous column name: %s%s%s",
				      e->table ? e->table : "",
				      e->table ? "." : "", e->name);
		if (n == 1) {
			e->rel = level;
			e->col = s->cols[found].g;
			set_type(e, s->cols[found].ty);
			if (level > 0) {
				if (scope_add_oref(s, e->col))
					return db_err(b->db, GPMDB_NOMEM,
						      "out of memory");
				for (int k = 0; k < corr_n; k++)
					if (scope_below(corr_stack[k].sc, s))
						corr_stack[k].in->correlated =
						    true;
			}
			return GPMDB_OK;
		}
	}
	if (e->table) {
		/* say whether the table is unknown */
		bool tab = false;
		for (scope *s = sc; s && !tab; s = s->up)
			for (int i = 0; i < s->nsrc; i++)
				if (s->src[i].name &&
				    !strcasecmp(s->src[i].name, e->table))
					tab = true;
		return db_err(b->db, GPMDB_ERROR, "no such column: %s.%s",
			      e->table, e->name);
	}
	return db_err(b->db, GPMDB_ERROR, "no such column: %s", e->name);
}

/* ---- types of operators ---- */

/* The numeric type a value of type t takes in arithmetic. */
static etype arith_operand(const ast_expr *e)
{
	etype t = expr_type(e);

	switch (t.t) {
	case BC_T_BOOL:
		return et_make(BC_T_INT);
	case BC_T_TEXT:
		if (e->kind == AST_E_STRING) {
			int isint = 1;
			if (!val_text_is_numeric(e->str, (uint32_t)e->slen,
						 &isint) ||
			    isint)
				return et_make(BC_T_INT);
		}
		return et_make(BC_T_REAL);
	}
	t.aff = AFF_NONE;
	return t;
}

static int arith_type(bctx *b, ast_expr *e)
{
	etype l = expr_type(e->l), r = expr_type(e->r), t;
	ast_op op = e->op;

	if (l.t == ET_INTERVAL || r.t == ET_INTERVAL) {
		if (op == AST_OP_ADD && l.t == ET_INTERVAL &&
		    (r.t == BC_T_DATE || r.t == BC_T_TEXT))
			goto date;
		if ((op == AST_OP_ADD || op == AST_OP_SUB) &&
		    r.t == ET_INTERVAL &&
		    (l.t == BC_T_DATE || l.t == BC_T_TEXT))
			goto date;
		if (l.t == BC_T_NULL || r.t == BC_T_NULL) {
			set_type(e, et_make(BC_T_NULL));
			return 0;
		}
		return db_err(b->db, GPMDB_ERROR,
			      "cannot apply %s to %s and %s", ast_op_name(op),
			      et_name(l), et_name(r));
	}
	if (l.t == BC_T_DATE || r.t == BC_T_DATE) {
		if (op == AST_OP_SUB && l.t == BC_T_DATE && r.t == BC_T_DATE) {
			set_type(e, et_make(BC_T_INT));
			return 0;
		}
		if ((op == AST_OP_ADD || op == AST_OP_SUB) &&
		    l.t == BC_T_DATE &&
		    (r.t == BC_T_INT || r.t == BC_T_BOOL || r.t == BC_T_NULL))
			goto date;
		if (op == AST_OP_ADD && r.t == BC_T_DATE &&
		    (l.t == BC_T_INT || l.t == BC_T_NULL))
			goto date;
		return db_err(b->db, GPMDB_ERROR,
			      "cannot apply %s to %s and %s", ast_op_name(op),
			      et_name(l), et_name(r));
	}
	l = arith_operand(e->l);
	r = arith_operand(e->r);
	if (l.t == BC_T_NULL || r.t == BC_T_NULL) {
		set_type(e, et_make(BC_T_NULL));
		return 0;
	}
	if (l.t == BC_T_REAL || r.t == BC_T_REAL) {
		t = et_make(BC_T_REAL);
	} else if (l.t == BC_T_DEC || r.t == BC_T_DEC) {
		if (op == AST_OP_DIV) {
			t = et_make(BC_T_REAL);
		} else {
			int sl = l.t == BC_T_DEC ? l.scale : 0;
			int sr = r.t == BC_T_DEC ? r.scale : 0;
			t = et_make(BC_T_DEC);
			t.prec = 18;
			t.scale = (uint8_t)(op == AST_OP_MUL
						? (sl + sr > 18 ? 18 : sl + sr)
						: (sl > sr ? sl : sr));
		}
	} else {
		t = et_make(BC_T_INT);
	}
	set_type(e, t);
	return 0;
date:
	set_type(e, et_make(BC_T_DATE));
	return 0;
}

static int func_type(bctx *b, ast_expr *e, const fdef *f)
{
	int n = e->list ? e->list->n : 0;
	etype a = n ? expr_type(e->list->v[0]) : et_make(BC_T_NULL), t;
	const char *nm = f->name;

	(void)b;
	if (!strcmp(nm, "abs")) {
		t = a.t == BC_T_TEXT   ? et_make(BC_T_REAL)
		    : a.t == BC_T_BOOL ? et_make(BC_T_INT)
				       : a;
		t.aff = AFF_NONE;
	} else if (!strcmp(nm, "round")) {
		t = a.t == BC_T_DEC    ? a
		    : a.t == BC_T_NULL ? a
				       : et_make(BC_T_REAL);
		t.aff = AFF_NONE;
	} else if (!strcmp(nm, "length") || !strcmp(nm, "instr")) {
		t = et_make(BC_T_INT);
	} else if (!strcmp(nm, "coalesce") || !strcmp(nm, "ifnull") ||
		   !strcmp(nm, "min") || !strcmp(nm, "max")) {
		t = et_make(BC_T_NULL);
		for (int i = 0; i < n; i++)
			t = et_unify(t, expr_type(e->list->v[i]));
		t.aff = AFF_NONE;
		if (t.t == ET_INTERVAL)
			return db_err(b->db, GPMDB_ERROR,
				      "an INTERVAL is not a value");
	} else if (!strcmp(nm, "nullif")) {
		t = a;
		t.aff = AFF_NONE;
	} else {
		t = et_make(BC_T_TEXT);
	}
	set_type(e, t);
	return 0;
}

static int bind_list(bctx *b, scope *sc, ast_expr_list *l, bool agg_ok)
{
	int rc;

	if (!l)
		return 0;
	for (int i = 0; i < l->n; i++)
		if ((rc = bind_expr(b, sc, l->v[i], agg_ok)))
			return rc;
	return 0;
}

static int bind_sub(bctx *b, scope *sc, ast_expr *e)
{
	einfo *in = einfo_get(b, e);
	pnode *p;

	if (!in)
		return db_err(b->db, GPMDB_NOMEM, "out of memory");
	if (corr_n >= 256)
		return db_err(b->db, GPMDB_ERROR, "subqueries nested too deep");
	in->correlated = false;
	corr_stack[corr_n].sc = sc;
	corr_stack[corr_n].in = in;
	corr_n++;
	p = plan_select(b, e->sub, sc);
	corr_n--;
	if (!p)
		return b->db->errcode ? b->db->errcode : GPMDB_ERROR;
	in->sub = p;
	if (e->kind == AST_E_EXISTS) {
		set_type(e, et_make(BC_T_BOOL));
		return 0;
	}
	if (p->nvis != 1)
		return db_err(b->db, GPMDB_ERROR,
			      "sub-select returns %d columns - expected 1",
			      p->nvis);
	if (e->kind == AST_E_IN_SELECT) {
		set_type(e, et_make(BC_T_BOOL));
		return 0;
	}
	etype t = p->ty[0];
	t.aff = AFF_NONE;
	set_type(e, t);
	return 0;
}

int bind_expr(bctx *b, scope *sc, ast_expr *e, bool agg_ok)
{
	int rc = 0, fn;
	etype t;

	e->bind = NULL;
	e->rtype = 0;
	switch (e->kind) {
	case AST_E_INT:
		set_type(e, et_make(BC_T_INT));
		return 0;
	case AST_E_REAL:
		set_type(e, et_make(BC_T_REAL));
		return 0;
	case AST_E_STRING:
		set_type(e, et_make(BC_T_TEXT));
		return 0;
	case AST_E_NULL:
		set_type(e, et_make(BC_T_NULL));
		return 0;
	case AST_E_BOOL:
		set_type(e, et_make(BC_T_BOOL));
		return 0;
	case AST_E_DATE:
		set_type(e, et_make(BC_T_DATE));
		return 0;
	case AST_E_INTERVAL:
		set_type(e, et_make(ET_INTERVAL));
		return 0;
	case AST_E_PARAM: {
		gpmdb_stmt *st = b->st;
		sval *v = st && e->ival >= 1 && e->ival <= st->nparams
			      ? &st->params[e->ival - 1]
			      : NULL;
		t = et_make(v ? v->t : BC_T_NULL);
		set_type(e, t);
		return 0;
	}
	case AST_E_COLUMN:
		return bind_column(b, sc, e);
	case AST_E_STAR:
		return db_err(b->db, GPMDB_ERROR, "near \"*\": syntax error");
	case AST_E_UNARY:
		if ((rc = bind_expr(b, sc, e->l, agg_ok)))
			return rc;
		t = expr_type(e->l);
		if (t.t == ET_INTERVAL)
			return db_err(b->db, GPMDB_ERROR,
				      "an INTERVAL is not a value");
		switch (e->op) {
		case AST_OP_NOT:
			set_type(e, et_make(BC_T_BOOL));
			break;
		case AST_OP_BITNOT:
			return db_err(b->db, GPMDB_UNSUPPORTED,
				      "the ~ operator is not supported yet");
		case AST_OP_PLUS:
			t.aff = AFF_NONE;
			set_type(e, t);
			break;
		default:
			if (t.t == BC_T_DATE)
				return db_err(b->db, GPMDB_ERROR,
					      "cannot negate a DATE");
			set_type(e, arith_operand(e->l));
		}
		return 0;
	case AST_E_BINARY:
		if ((rc = bind_expr(b, sc, e->l, agg_ok)) ||
		    (rc = bind_expr(b, sc, e->r, agg_ok)))
			return rc;
		switch (e->op) {
		case AST_OP_ADD:
		case AST_OP_SUB:
		case AST_OP_MUL:
		case AST_OP_DIV:
		case AST_OP_MOD:
			return arith_type(b, e);
		case AST_OP_CONCAT:
			set_type(e, et_make(BC_T_TEXT));
			return 0;
		case AST_OP_BITAND:
		case AST_OP_BITOR:
		case AST_OP_LSHIFT:
		case AST_OP_RSHIFT:
			return db_err(b->db, GPMDB_UNSUPPORTED,
				      "the %s operator is not supported yet",
				      ast_op_name(e->op));
		default:
			if (expr_type(e->l).t == ET_INTERVAL ||
			    expr_type(e->r).t == ET_INTERVAL)
				return db_err(b->db, GPMDB_ERROR,
					      "an INTERVAL is not a value");
			set_type(e, et_make(BC_T_BOOL));
			return 0;
		}
	case AST_E_ISNULL:
		if ((rc = bind_expr(b, sc, e->l, agg_ok)))
			return rc;
		set_type(e, et_make(BC_T_BOOL));
		return 0;
	case AST_E_BETWEEN:
		if ((rc = bind_expr(b, sc, e->l, agg_ok)) ||
		    (rc = bind_expr(b, sc, e->r, agg_ok)) ||
		    (rc = bind_expr(b, sc, e->x, agg_ok)))
			return rc;
		set_type(e, et_make(BC_T_BOOL));
		return 0;
	case AST_E_LIKE:
		if ((rc = bind_expr(b, sc, e->l, agg_ok)) ||
		    (rc = bind_expr(b, sc, e->r, agg_ok)) ||
		    (e->x && (rc = bind_expr(b, sc, e->x, agg_ok))))
			return rc;
		set_type(e, et_make(BC_T_BOOL));
		return 0;
	case AST_E_IN_LIST:
		if ((rc = bind_expr(b, sc, e->l, agg_ok)) ||
		    (rc = bind_list(b, sc, e->list, agg_ok)))
			return rc;
		set_type(e, et_make(BC_T_BOOL));
		return 0;
	case AST_E_IN_SELECT:
		if ((rc = bind_expr(b, sc, e->l, agg_ok)))
			return rc;
		return bind_sub(b, sc, e);
	case AST_E_EXISTS:
	case AST_E_SUBQUERY:
		return bind_sub(b, sc, e);
	case AST_E_CASE:
		if ((e->l && (rc = bind_expr(b, sc, e->l, agg_ok))) ||
		    (rc = bind_list(b, sc, e->list, agg_ok)) ||
		    (e->r && (rc = bind_expr(b, sc, e->r, agg_ok))))
			return rc;
		t = e->r ? expr_type(e->r) : et_make(BC_T_NULL);
		for (int i = 1; i < e->list->n; i += 2)
			t = et_unify(t, expr_type(e->list->v[i]));
		if (t.t == ET_INTERVAL)
			return db_err(b->db, GPMDB_ERROR,
				      "an INTERVAL is not a value");
		t.aff = AFF_NONE;
		set_type(e, t);
		return 0;
	case AST_E_CAST: {
		ast_type *ty = e->type;
		if ((rc = bind_expr(b, sc, e->l, agg_ok)))
			return rc;
		switch (ty->cls) {
		case AST_TYPE_INT:
			t = et_make(BC_T_INT);
			break;
		case AST_TYPE_REAL:
			t = et_make(BC_T_REAL);
			break;
		case AST_TYPE_DECIMAL:
			t = et_make(BC_T_DEC);
			t.prec = (uint8_t)(ty->nargs >= 1 ? ty->p : 18);
			t.scale = (uint8_t)(ty->nargs >= 2 ? ty->s : 0);
			if (ty->p > 18 || ty->s > ty->p)
				return db_err(b->db, GPMDB_UNSUPPORTED,
					      "DECIMAL(%lld,%lld) is not "
					      "supported (precision <= 18)",
					      (long long)ty->p,
					      (long long)ty->s);
			break;
		case AST_TYPE_DATE:
			t = et_make(BC_T_DATE);
			break;
		case AST_TYPE_BOOLEAN:
			t = et_make(BC_T_BOOL);
			break;
		case AST_TYPE_TEXT:
			t = et_make(BC_T_TEXT);
			break;
		default:
			/* SQLite's rule for other names: NUMERIC */
			if (strcasestr(ty->name, "INT"))
				t = et_make(BC_T_INT);
			else if (strcasestr(ty->name, "CHAR") ||
				 strcasestr(ty->name, "CLOB") ||
				 strcasestr(ty->name, "TEXT"))
				t = et_make(BC_T_TEXT);
			else
				return db_err(b->db, GPMDB_UNSUPPORTED,
					      "CAST to %s is not supported yet",
					      ty->name);
		}
		t.aff = t.t == BC_T_TEXT ? AFF_TEXT : AFF_NUM;
		if (expr_type(e->l).t == BC_T_NULL)
			t = et_make(BC_T_NULL);
		set_type(e, t);
		return 0;
	}
	case AST_E_FUNC: {
		int n = e->list ? e->list->n : 0;
		bool known;
		const fdef *f = func_find(e->name, e->star ? 0 : n, &known);

		if (!known)
			return db_err(b->db, GPMDB_ERROR,
				      "no such function: %s", e->name);
		if (!f || (e->star && strcasecmp(e->name, "count")))
			return db_err(b->db, GPMDB_ERROR,
				      "wrong number of arguments to function "
				      "%s()",
				      e->name);
		if (f->kind == F_AGG) {
			if (!agg_ok)
				return db_err(b->db, GPMDB_ERROR,
					      "misuse of aggregate: %s()",
					      e->name);
			if (n == 0 && !e->star)
				return db_err(b->db, GPMDB_ERROR,
					      "wrong number of arguments to "
					      "function %s()",
					      e->name);
			for (scope *s = sc; s; s = NULL)
				s->has_agg = true;
			if ((rc = bind_list(b, sc, e->list, false)))
				return rc;
			expr_is_agg_call(e, &fn);
			t = n ? expr_type(e->list->v[0]) : et_make(BC_T_NULL);
			switch (fn) {
			case AGG_COUNT_STAR:
			case AGG_COUNT:
				t = et_make(BC_T_INT);
				break;
			case AGG_SUM:
				if (t.t == BC_T_BOOL)
					t = et_make(BC_T_INT);
				else if (t.t == BC_T_DEC)
					t.prec = 18;
				else if (t.t != BC_T_INT && t.t != BC_T_NULL)
					t = et_make(BC_T_REAL);
				break;
			case AGG_AVG:
			case AGG_TOTAL:
				t = et_make(BC_T_REAL);
				break;
			case AGG_GROUP_CONCAT:
				t = et_make(BC_T_TEXT);
				break;
			}
			if (t.t == ET_INTERVAL)
				return db_err(b->db, GPMDB_ERROR,
					      "an INTERVAL is not a value");
			t.aff = AFF_NONE;
			set_type(e, t);
			return 0;
		}
		if (e->distinct)
			return db_err(b->db, GPMDB_ERROR,
				      "DISTINCT in a call of the non-aggregate "
				      "function %s()",
				      e->name);
		if ((rc = bind_list(b, sc, e->list, agg_ok)))
			return rc;
		return func_type(b, e, f);
	}
	case AST_E_EXTRACT:
		if ((rc = bind_expr(b, sc, e->l, agg_ok)))
			return rc;
		t = expr_type(e->l);
		if (t.t != BC_T_DATE && t.t != BC_T_TEXT && t.t != BC_T_NULL)
			return db_err(b->db, GPMDB_ERROR,
				      "EXTRACT needs a DATE, not %s",
				      et_name(t));
		set_type(e, et_make(BC_T_INT));
		return 0;
	case AST_E_COLLATE:
		/* BINARY only: RTRIM was accepted once and compared binary,
		 * a silent wrong answer ('a ' = 'a' COLLATE RTRIM is 1 in
		 * SQLite) */
		if (strcasecmp(e->name, "binary"))
			return db_err(b->db, GPMDB_UNSUPPORTED,
				      "COLLATE %s is not supported yet",
				      e->name);
		if ((rc = bind_expr(b, sc, e->l, agg_ok)))
			return rc;
		e->rtype = e->l->rtype;
		return 0;
	}
	return db_err(b->db, GPMDB_INTERNAL, "unknown expression kind %d",
		      e->kind);
}

/* Structural equality of bound expressions (GROUP BY matching). */
bool expr_equal(const ast_expr *a, const ast_expr *b)
{
	if (a == b)
		return true;
	if (!a || !b || a->kind != b->kind || a->op != b->op ||
	    a->negated != b->negated || a->distinct != b->distinct ||
	    a->star != b->star || a->unit != b->unit)
		return false;
	switch (a->kind) {
	case AST_E_INT:
	case AST_E_BOOL:
	case AST_E_DATE:
	case AST_E_INTERVAL:
	case AST_E_PARAM:
		return a->ival == b->ival;
	case AST_E_REAL:
		return a->rval == b->rval;
	case AST_E_STRING:
		return a->slen == b->slen && !memcmp(a->str, b->str, a->slen);
	case AST_E_NULL:
		return true;
	case AST_E_COLUMN:
		return a->rel == b->rel && a->col == b->col;
	case AST_E_IN_SELECT:
	case AST_E_EXISTS:
	case AST_E_SUBQUERY:
		return false;
	case AST_E_FUNC:
	case AST_E_COLLATE:
		if (strcasecmp(a->name, b->name))
			return false;
		break;
	case AST_E_CAST:
		if (a->rtype != b->rtype)
			return false;
		break;
	default:
		break;
	}
	if (!expr_equal(a->l, b->l) && (a->l || b->l))
		return false;
	if (!expr_equal(a->r, b->r) && (a->r || b->r))
		return false;
	if (!expr_equal(a->x, b->x) && (a->x || b->x))
		return false;
	if ((a->list == NULL) != (b->list == NULL))
		return false;
	if (a->list) {
		if (a->list->n != b->list->n)
			return false;
		for (int i = 0; i < a->list->n; i++)
			if (!expr_equal(a->list->v[i], b->list->v[i]))
				return false;
	}
	return true;
}
