/*
 * types.c - the static types of expressions (types.h): the common type of
 * two, a type's name, the value of a literal.  Used by the binder, the
 * planner and the executors alike.
 */
#include "types.h"

#include <string.h>

etype et_unify(etype a, etype b)
{
	etype r;

	if (a.t == BC_T_NULL)
		return b;
	if (b.t == BC_T_NULL || (a.t == b.t && a.t != BC_T_DEC))
		return a;
	if (a.t == BC_T_TEXT || b.t == BC_T_TEXT)
		return et_make(BC_T_TEXT);
	if (a.t == BC_T_DATE || b.t == BC_T_DATE)
		return et_make(BC_T_TEXT);
	if (a.t == BC_T_REAL || b.t == BC_T_REAL)
		return et_make(BC_T_REAL);
	if (a.t == BC_T_DEC || b.t == BC_T_DEC) {
		r = et_make(BC_T_DEC);
		r.scale = a.scale > b.scale ? a.scale : b.scale;
		r.prec = 18;
		return r;
	}
	return et_make(BC_T_INT);
}

const char *et_name(etype e)
{
	switch (e.t) {
	case BC_T_NULL:
		return "NULL";
	case BC_T_BOOL:
		return "BOOLEAN";
	case BC_T_INT:
		return "INTEGER";
	case BC_T_REAL:
		return "REAL";
	case BC_T_DEC:
		return "DECIMAL";
	case BC_T_DATE:
		return "DATE";
	case BC_T_TEXT:
		return "TEXT";
	case ET_INTERVAL:
		return "INTERVAL";
	}
	return "?";
}

bool exec_literal(const ast_expr *e, sval *v)
{
	memset(v, 0, sizeof(*v));
	switch (e->kind) {
	case AST_E_INT:
		v->t = BC_T_INT;
		v->u.i = e->ival;
		return true;
	case AST_E_REAL:
		v->t = BC_T_REAL;
		v->u.r = e->rval;
		return true;
	case AST_E_STRING:
		v->t = BC_T_TEXT;
		v->u.s.ptr = e->str;
		v->u.s.len = (uint32_t)e->slen;
		return true;
	case AST_E_NULL:
		v->t = BC_T_NULL;
		return true;
	case AST_E_BOOL:
		v->t = BC_T_BOOL;
		v->u.i = e->ival;
		return true;
	case AST_E_DATE:
		v->t = BC_T_DATE;
		v->u.i = e->ival;
		return true;
	default:
		return false;
	}
}
