/*
 * types.h - the value types every part of the engine shares: the static
 * type of an expression (etype) and a scalar value (sval), and the names
 * of the structures the groups hand each other (docs/engine.md "Layout").
 *
 * Types: every expression has a static type (etype): a bytecode register
 * type (BC_T_*) plus DECIMAL precision/scale and an affinity that only
 * steers SQLite's comparison rules (a column compared with text).
 */
#ifndef GPMDB_TYPES_H
#define GPMDB_TYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "../include/gpmdb.h"
#include "../sql/ast.h"
#include "bytecode.h"
#include "vector.h"

/* The structures of the groups (engine/plan, engine/exec, engine/index),
 * known by name to the others. */
typedef struct rel rel;		  /* exec/exec.h */
typedef struct exec_ctx exec_ctx; /* core.h */
typedef struct cexpr cexpr;	  /* exec/exec.h */
typedef struct pnode pnode;	  /* plan/plan.h */
typedef struct ixpath ixpath;	  /* plan/plan.h */
typedef struct vshare vshare;	  /* plan/plan.h */

/* ---- types and scalar values ---- */

enum { AFF_NONE = 0, AFF_NUM, AFF_TEXT };
/* Pseudo type of an INTERVAL literal (only an operand of date +/-). */
#define ET_INTERVAL 15

typedef struct etype {
	uint8_t t; /* BC_T_* or ET_INTERVAL */
	uint8_t prec, scale, aff;
} etype;

static inline etype et_make(int t)
{
	etype e = {(uint8_t)t, 0, 0, AFF_NONE};
	return e;
}
/* Packed into ast_expr.rtype (0 = unresolved). */
static inline int et_pack(etype e)
{
	return 1 + e.t + (e.prec << 8) + (e.scale << 16) + (e.aff << 24);
}
static inline etype et_unpack(int v)
{
	etype e;
	v -= 1;
	e.t = v & 255;
	e.prec = (v >> 8) & 255;
	e.scale = (v >> 16) & 255;
	e.aff = (v >> 24) & 255;
	return e;
}
static inline bool et_numeric(int t)
{
	return t == BC_T_INT || t == BC_T_REAL || t == BC_T_DEC ||
	       t == BC_T_BOOL;
}
/* The common type of two (CASE branches, UNION columns). */
etype et_unify(etype a, etype b);
const char *et_name(etype e);

typedef struct sval {
	uint8_t t; /* BC_T_*; BC_T_NULL = NULL */
	uint8_t scale;
	union {
		int64_t i; /* INT, DEC, DATE, BOOL */
		double r;
		vec_str s;
	} u;
} sval;

/* A TEXT value over s (not copied) and an INT value: the rows that
 * PRAGMAs build. */
static inline sval sval_of_text(const char *s)
{
	sval v = {.t = BC_T_TEXT};
	v.u.s.ptr = s;
	v.u.s.len = (uint32_t)strlen(s);
	return v;
}

static inline sval sval_of_int(int64_t i)
{
	sval v = {.t = BC_T_INT};
	v.u.i = i;
	return v;
}

/* The value of a parameter-free literal (text points into the AST); false
 * when e is not one.  It reads nothing but the AST: the planner uses it
 * too (types.c). */
bool exec_literal(const ast_expr *e, sval *v);

#endif /* GPMDB_TYPES_H */
