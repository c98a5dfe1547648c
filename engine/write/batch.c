/*
 * batch.c - the batch C API: array binding, columnar append
 * (include/gpmdb.h, docs/engine.md "Batch API"); columnar results are
 * batch_result.c's.
 *
 * Array binding.  gpmdb_bind_array_* attaches a caller-owned array to a
 * parameter (not copied: a 10M-row batch must not be duplicated); the
 * next gpmdb_step runs the prepared INSERT/UPDATE/DELETE once for all n
 * parameter rows, inside the one transaction (or savepoint) stmt.c puts
 * around any writing statement, so the batch is all-or-nothing.  The
 * common shapes have set-at-a-time paths that never plan per row:
 *   INSERT INTO t [(cols)] VALUES (e, ...)   each e a parameter or literal:
 *       every column converted to its storage layout in one pass, NOT NULL
 *       and UNIQUE checked (keys hashed), one stg_append;
 *   UPDATE t SET c = e, ... WHERE k1 = ? AND k2 = ? ...
 *   DELETE FROM t WHERE k1 = ? AND ...
 *       the parameter keys go into a hash table, one pass over the table
 *       finds the rows, one stg_update / stg_delete.
 * Anything else (expressions over parameters, INSERT ... SELECT, other
 * WHERE shapes, an UPDATE that sets one of its WHERE columns) runs the
 * statement once per parameter row, inside the same transaction: correct,
 * and as slow as n statements.
 *
 * Semantics follow running the statement once per parameter row in
 * order: an UPDATE whose parameter rows repeat a key applies the last
 * one's values and counts every execution in gpmdb_changes; a DELETE
 * counts each row once.  Errors carry " (parameter row k)" (k 0-based,
 * the index into the arrays) for the lowest k that fails.
 */
#include "../engine.h"
#include "../exec/exec_int.h"
#include "../value.h"
#include "batch_gpu.h"
#include "batch_int.h"
#include "batch_keys_gpu.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* A value source for one column of a batch: a bound array or a constant
 * broadcast to every row (a scalar parameter, a literal, a DEFAULT). */
enum { BS_NONE = 0, BS_ARRAY, BS_CONST };

typedef struct bsrc {
	int kind;
	int type; /* GPMDB_ARRAY_* */
	const void *values;
	const uint8_t *nulls;
	int64_t n;
	sval v; /* BS_CONST */
	/* an INT32 array into a BIGINT column left as it is, widened by
	 * stg_append as it writes (STG_FROM_I32): the CPU write path only */
	bool widen_later;
} bsrc;

/* Messages: the first error of a statement wins in db_err, so errors found
 * while looking for the lowest failing row are kept here and the lowest
 * one is raised at the end. */
typedef struct berr {
	int rc;
	int64_t row; /* -1: not tied to a row */
	char msg[512];
} berr;

/* Copies a message, cut to fit. */
static void copy_msg(char *dst, size_t size, const char *src)
{
	size_t n = strnlen(src, size - 1);

	memcpy(dst, src, n);
	dst[n] = 0;
}

static void berr_take(berr *e, gpmdb *db, int rc, int64_t row)
{
	/* the lowest row wins; -1 (every row) is lowest */
	if (!e->rc || row < e->row) {
		e->rc = rc;
		e->row = row;
		copy_msg(e->msg, sizeof(e->msg), db->errmsg);
	}
	db_clear(db);
}

static int berr_raise(gpmdb *db, const berr *e, const char *what);

/* A unique violation from storage: the batch row at fault (mapped through
 * map[0..nmap) when map is given) and the key's value, "(k.id = 5)". */
static int bkey_raise(gpmdb *db, berr *e, const char *what, int64_t nmap,
		      const int64_t *map)
{
	int64_t row = stg_constraint_row(db->pool);
	const char *key = stg_constraint_key(db->pool);
	char msg[sizeof(db->errmsg) + 300];

	if (map && row >= 0 && row < nmap)
		row = map[row];
	if (key && key[0]) {
		snprintf(msg, sizeof(msg), "%.700s (%.280s)", db->errmsg, key);
		db_clear(db); /* db_err keeps a statement's first error */
		db_err(db, GPMDB_CONSTRAINT, "%s", msg);
	}
	berr_take(e, db, GPMDB_CONSTRAINT, row);
	return berr_raise(db, e, what);
}

/* Raises e with " (<what> row k)" appended. */
static int berr_raise(gpmdb *db, const berr *e, const char *what)
{
	db_clear(db);
	if (e->row >= 0)
		return db_err(db, e->rc, "%s (%s %lld)", e->msg, what,
			      (long long)e->row);
	return db_err(db, e->rc, "%s", e->msg);
}

static const char *array_type_name(int t)
{
	switch (t) {
	case GPMDB_ARRAY_INT32:
		return "INT32";
	case GPMDB_ARRAY_INT64:
		return "INT64";
	case GPMDB_ARRAY_DOUBLE:
		return "DOUBLE";
	case GPMDB_ARRAY_TEXT:
		return "TEXT";
	}
	return "unknown";
}

/* ---- binding ---- */

stmt_batch *batch_get(gpmdb_stmt *st)
{
	if (!st->batch) {
		st->batch = calloc(1, sizeof(*st->batch));
		if (!st->batch)
			return NULL;
		if (st->nparams) {
			st->batch->arr =
			    calloc((size_t)st->nparams, sizeof(bsrc));
			if (!st->batch->arr) {
				free(st->batch);
				st->batch = NULL;
			}
		}
	}
	return st->batch;
}

void batch_unbind(gpmdb_stmt *st, int i)
{
	stmt_batch *b = st->batch;

	if (b && b->arr && i >= 1 && i <= st->nparams &&
	    b->arr[i - 1].kind == BS_ARRAY) {
		b->arr[i - 1].kind = BS_NONE;
		b->narrays--;
	}
}

static int bind_array(gpmdb_stmt *st, int i, int type, const void *values,
		      const uint8_t *nulls, int64_t n)
{
	static const char *fn[] = {
	    "", "gpmdb_bind_array_int32", "gpmdb_bind_array_int64",
	    "gpmdb_bind_array_double", "gpmdb_bind_array_text"};
	stmt_batch *b;

	if (!st)
		return GPMDB_MISUSE;
	db_clear(st->db);
	if (st->state != 0)
		return db_err(st->db, GPMDB_MISUSE,
			      "%s: bind on a running statement (call "
			      "gpmdb_reset first)",
			      fn[type]);
	if (i < 1 || i > st->nparams)
		return db_err(st->db, GPMDB_RANGE,
			      "%s: parameter index %d out of range (1..%d)",
			      fn[type], i, st->nparams);
	if (n < 0 || (n > 0 && !values))
		return db_err(st->db, GPMDB_MISUSE,
			      "%s: parameter %d: %s (n = %lld)", fn[type], i,
			      n < 0 ? "negative length" : "values is NULL",
			      (long long)n);
	if (!(b = batch_get(st)))
		return db_err(st->db, GPMDB_NOMEM, "out of memory");
	/* the scalar slot is unused while an array is bound */
	free(st->param_text[i - 1]);
	st->param_text[i - 1] = NULL;
	memset(&st->params[i - 1], 0, sizeof(sval));
	st->params[i - 1].t = BC_T_NULL;
	st->params_changed = true;
	if (b->arr[i - 1].kind != BS_ARRAY)
		b->narrays++;
	b->arr[i - 1] = (bsrc){.kind = BS_ARRAY,
			       .type = type,
			       .values = values,
			       .nulls = nulls,
			       .n = n};
	return GPMDB_OK;
}

int gpmdb_bind_array_int32(gpmdb_stmt *s, int i, const int32_t *values,
			   int64_t n, const uint8_t *nulls)
{
	return bind_array(s, i, GPMDB_ARRAY_INT32, values, nulls, n);
}

int gpmdb_bind_array_int64(gpmdb_stmt *s, int i, const int64_t *values,
			   int64_t n, const uint8_t *nulls)
{
	return bind_array(s, i, GPMDB_ARRAY_INT64, values, nulls, n);
}

int gpmdb_bind_array_double(gpmdb_stmt *s, int i, const double *values,
			    int64_t n, const uint8_t *nulls)
{
	return bind_array(s, i, GPMDB_ARRAY_DOUBLE, values, nulls, n);
}

int gpmdb_bind_array_text(gpmdb_stmt *s, int i, const char *const *values,
			  int64_t n, const uint8_t *nulls)
{
	return bind_array(s, i, GPMDB_ARRAY_TEXT, (const void *)values, nulls,
			  n);
}

int gpmdb_clear_bindings(gpmdb_stmt *st)
{
	if (!st)
		return GPMDB_MISUSE;
	db_clear(st->db);
	if (st->state != 0)
		return db_err(st->db, GPMDB_MISUSE,
			      "gpmdb_clear_bindings on a running statement "
			      "(call gpmdb_reset first)");
	for (int i = 1; i <= st->nparams; i++) {
		batch_unbind(st, i);
		free(st->param_text[i - 1]);
		st->param_text[i - 1] = NULL;
		memset(&st->params[i - 1], 0, sizeof(sval));
		st->params[i - 1].t = BC_T_NULL;
	}
	st->params_changed = true;
	return GPMDB_OK;
}

bool batch_active(gpmdb_stmt *st)
{
	return st->batch && st->batch->narrays > 0 && !st->batch->in_loop;
}

/* The common length of the bound arrays, or MISUSE naming two that differ. */
static int batch_rows(gpmdb_stmt *st, int64_t *n)
{
	int first = 0;

	for (int i = 0; i < st->nparams; i++) {
		const bsrc *a = &st->batch->arr[i];
		if (a->kind != BS_ARRAY)
			continue;
		if (!first) {
			first = i + 1;
			*n = a->n;
		} else if (a->n != *n) {
			return db_err(st->db, GPMDB_MISUSE,
				      "array parameters have different "
				      "lengths: parameter %d has %lld values, "
				      "parameter %d has %lld",
				      first, (long long)*n, i + 1,
				      (long long)a->n);
		}
	}
	return GPMDB_OK;
}

int batch_check(gpmdb_stmt *st, ast_stmt *s)
{
	int64_t n;

	if (!batch_active(st))
		return GPMDB_OK;
	/* EXPLAIN ANALYZE runs the batch (and shows its phases) */
	if ((s->explain && s->explain != 3) ||
	    (s->kind != AST_STMT_INSERT && s->kind != AST_STMT_UPDATE &&
	     s->kind != AST_STMT_DELETE))
		return db_err(st->db, GPMDB_MISUSE,
			      "array parameters are only for INSERT, UPDATE "
			      "and DELETE, not %s%s",
			      s->explain == 3 ? "EXPLAIN ANALYZE "
			      : s->explain    ? "EXPLAIN "
					      : "",
			      ast_stmt_kind_name(s->kind));
	return batch_rows(st, &n);
}

/* ---- value sources ---- */

/* Value k of a source as a scalar (INT, REAL, TEXT or NULL). */
static void src_get(const bsrc *b, int64_t k, sval *v)
{
	if (b->kind == BS_CONST) {
		*v = b->v;
		return;
	}
	memset(v, 0, sizeof(*v));
	if (b->nulls && b->nulls[k]) {
		v->t = BC_T_NULL;
		return;
	}
	switch (b->type) {
	case GPMDB_ARRAY_INT32:
		v->t = BC_T_INT;
		v->u.i = ((const int32_t *)b->values)[k];
		break;
	case GPMDB_ARRAY_INT64:
		v->t = BC_T_INT;
		v->u.i = ((const int64_t *)b->values)[k];
		break;
	case GPMDB_ARRAY_DOUBLE:
		v->u.r = ((const double *)b->values)[k];
		v->t = isnan(v->u.r) ? BC_T_NULL : BC_T_REAL;
		break;
	default: {
		const char *p = ((const char *const *)b->values)[k];
		if (!p) {
			v->t = BC_T_NULL;
			break;
		}
		size_t len = strlen(p);
		v->t = BC_T_TEXT;
		v->u.s.ptr = p;
		v->u.s.len =
		    len > UINT32_MAX / 2 ? UINT32_MAX / 2 : (uint32_t)len;
	}
	}
}

/* The source of expression e: a parameter (array or broadcast scalar) or
 * a literal; false for anything else. */
static bool expr_source(gpmdb_stmt *st, const ast_expr *e, bsrc *out)
{
	memset(out, 0, sizeof(*out));
	if (e->kind == AST_E_PARAM) {
		if (e->ival < 1 || e->ival > st->nparams)
			return false;
		if (st->batch->arr[e->ival - 1].kind == BS_ARRAY) {
			*out = st->batch->arr[e->ival - 1];
			return true;
		}
		out->kind = BS_CONST;
		out->v = st->params[e->ival - 1];
		return true;
	}
	out->kind = BS_CONST;
	return exec_literal(e, &out->v);
}

/* ---- conversion to the storage layout ---- */

/* One column of a batch in storage layout: values (owned or borrowed from
 * the caller's array) and a NULL bitmap (owned, NULL = none). */
typedef struct ccol {
	const void *values;
	void *own;
	uint32_t *nulls;
	uint8_t from; /* stg_append_from's: STG_FROM_SAME or _I32 */
} ccol;

static void ccol_free(ccol *c)
{
	free(c->own);
	free(c->nulls);
	memset(c, 0, sizeof(*c));
}

static size_t stg_width(stg_type t)
{
	return t == STG_T_TEXT ? sizeof(stg_text) : stg_type_width(t);
}

static void set_null(uint32_t *nl, int64_t k)
{
	nl[k / 32] |= 1u << (k % 32);
}

static bool is_null(const uint32_t *nl, int64_t k)
{
	return nl && (nl[k / 32] >> (k % 32) & 1);
}

/* Stores v (already converted to column type t's etype) at row k of a
 * storage array.  Fails only for INT (int32) out of range. */
static int store_value(gpmdb *db, stg_type t, void *arr, int64_t k,
		       const sval *v)
{
	switch (t) {
	case STG_T_INT:
		if (v->u.i < INT32_MIN || v->u.i > INT32_MAX)
			return db_err(db, GPMDB_MISMATCH,
				      "integer %lld out of range for an INT "
				      "(32-bit) column",
				      (long long)v->u.i);
		((int32_t *)arr)[k] = (int32_t)v->u.i;
		break;
	case STG_T_BIGINT:
	case STG_T_DECIMAL:
		((int64_t *)arr)[k] = v->u.i;
		break;
	case STG_T_FLOAT:
		((float *)arr)[k] = (float)v->u.r;
		break;
	case STG_T_DOUBLE:
		((double *)arr)[k] = v->u.r;
		break;
	case STG_T_DATE:
		((int32_t *)arr)[k] = (int32_t)v->u.i;
		break;
	case STG_T_BOOLEAN:
		((uint8_t *)arr)[k] = (uint8_t)v->u.i;
		break;
	case STG_T_TEXT:
		((stg_text *)arr)[k] = (stg_text){v->u.s.ptr, v->u.s.len};
		break;
	}
	return GPMDB_OK;
}

/* Batches of at least this many rows are converted on all threads. */
#define PAR_MIN_ROWS 65536

/* Bitmap of the source's NULLs (byte flags, NaN, NULL strings) for rows
 * [0, n); NULL when there are none.  *fail set when out of memory.  One
 * bitmap word per iteration, so that threads never share a word. */
static uint32_t *src_null_bitmap(const bsrc *b, int64_t n, bool *fail)
{
	int64_t nw = n / 32 + 1;
	uint32_t *nl;
	bool any = false;

	*fail = false;
	/* integers without NULL flags have no NULL to find: no pass */
	if (!b->nulls && b->type != GPMDB_ARRAY_DOUBLE &&
	    b->type != GPMDB_ARRAY_TEXT)
		return NULL;
	nl = malloc((size_t)nw * 4);
	*fail = !nl;
	if (!nl)
		return NULL;
#pragma omp parallel for schedule(static)                                      \
    reduction(||                                                               \
	      : any) if (n >= PAR_MIN_ROWS)
	for (int64_t w = 0; w < nw; w++) {
		uint32_t bits = 0;
		int64_t e = (w + 1) * 32 < n ? (w + 1) * 32 : n;
		for (int64_t k = w * 32; k < e; k++) {
			bool nul = b->nulls && b->nulls[k];
			if (!nul && b->type == GPMDB_ARRAY_DOUBLE)
				nul = isnan(((const double *)b->values)[k]);
			if (!nul && b->type == GPMDB_ARRAY_TEXT)
				nul = !((const char *const *)b->values)[k];
			bits |= (uint32_t)nul << (k % 32);
		}
		nl[w] = bits;
		any = any || bits;
	}
	if (!any) {
		free(nl);
		nl = NULL;
	}
	return nl;
}

/* A DOUBLE array narrowed to FLOAT into out and its NULLs (the byte
 * flags, NaN) as src_null_bitmap finds them, in one pass over the
 * values instead of two; one bitmap word per iteration. */
static uint32_t *conv_float_nulls(const bsrc *b, float *out, int64_t n,
				  bool *fail)
{
	int64_t nw = n / 32 + 1;
	const double *v = b->values;
	uint32_t *nl = malloc((size_t)nw * 4);
	bool any = false;

	*fail = !nl;
	if (!nl)
		return NULL;
#pragma omp parallel for schedule(static)                                      \
    reduction(||                                                               \
	      : any) if (n >= PAR_MIN_ROWS)
	for (int64_t w = 0; w < nw; w++) {
		uint32_t bits = 0;
		int64_t e = (w + 1) * 32 < n ? (w + 1) * 32 : n;
		for (int64_t k = w * 32; k < e; k++) {
			double d = v[k];
			bool nul = (b->nulls && b->nulls[k]) || isnan(d);
			out[k] = (float)d;
			bits |= (uint32_t)nul << (k % 32);
		}
		nl[w] = bits;
		any = any || bits;
	}
	if (!any) {
		free(nl);
		nl = NULL;
	}
	return nl;
}

/* The widening/narrowing loop of conv_column's fast path (any thread
 * count): returns the lowest row whose text is too long, or n. */
static int64_t conv_loop(const bsrc *src, stg_type t, void *out, int64_t n)
{
	int at = src->type;
	int64_t bad = n;

#pragma omp parallel for schedule(static)                                      \
    reduction(min                                                              \
	      : bad) if (n >= PAR_MIN_ROWS)
	for (int64_t k = 0; k < n; k++) {
		switch (t) {
		case STG_T_BIGINT:
			((int64_t *)out)[k] = ((const int32_t *)src->values)[k];
			break;
		case STG_T_FLOAT:
			((float *)out)[k] =
			    (float)((const double *)src->values)[k];
			break;
		case STG_T_DOUBLE:
			((double *)out)[k] =
			    at == GPMDB_ARRAY_INT32
				? ((const int32_t *)src->values)[k]
				: (double)((const int64_t *)src->values)[k];
			break;
		default: {
			const char *p = ((const char *const *)src->values)[k];
			size_t len = p ? strlen(p) : 0;
			if (len > UINT32_MAX / 2) {
				if (k < bad)
					bad = k;
				len = 0;
			}
			((stg_text *)out)[k] =
			    (stg_text){p ? p : "", (uint32_t)len};
		}
		}
	}
	return bad;
}

/*
 * Converts rows [0, n) of src into the storage layout of column col
 * (SQLite's affinity rules, as an INSERT does).  mask (NULL = all rows)
 * selects the rows that matter; others are left NULL.  With nomatch
 * (key matching) a value that does not convert marks nomatch[k] instead
 * of failing.  With notnull, a NULL in a NOT NULL column fails.  On
 * failure e gets the lowest failing row and its message.
 */
static int conv_column(exec_ctx *x, rel *hold, const bsrc *src,
		       const stg_column_info *col, const char *tname, int64_t n,
		       const uint8_t *mask, uint8_t *nomatch, bool notnull,
		       ccol *out, berr *e)
{
	gpmdb *db = x->db;
	stg_type t = col->type;
	etype ty = stg_to_etype(col);
	size_t w = stg_width(t);
	bool fail = false;
	int rc;

	memset(out, 0, sizeof(*out));
	notnull = notnull && (col->flags & STG_COL_NOTNULL);
	if (n == 0)
		return GPMDB_OK;
	/* fast paths: the array already has the column's layout, or a
	 * plain widening/narrowing loop (these cannot fail, so rows outside
	 * the mask are converted too: nobody reads them) */
	if (src->kind == BS_ARRAY) {
		int at = src->type;
		bool later = src->widen_later && at == GPMDB_ARRAY_INT32 &&
			     t == STG_T_BIGINT;
		bool direct = (at == GPMDB_ARRAY_INT64 && t == STG_T_BIGINT) ||
			      (at == GPMDB_ARRAY_INT32 && t == STG_T_INT) ||
			      (at == GPMDB_ARRAY_DOUBLE && t == STG_T_DOUBLE) ||
			      later;
		bool loop =
		    (at == GPMDB_ARRAY_INT32 && t == STG_T_BIGINT) ||
		    (at == GPMDB_ARRAY_DOUBLE && t == STG_T_FLOAT) ||
		    ((at == GPMDB_ARRAY_INT32 || at == GPMDB_ARRAY_INT64) &&
		     t == STG_T_DOUBLE) ||
		    (at == GPMDB_ARRAY_TEXT && t == STG_T_TEXT && !mask);
		/* DOUBLE to FLOAT: narrowed and scanned for NaN in one pass */
		bool fused = at == GPMDB_ARRAY_DOUBLE && t == STG_T_FLOAT;
		if ((direct || loop) && !fused) {
			out->nulls = src_null_bitmap(src, n, &fail);
			if (fail)
				return db_err(db, GPMDB_NOMEM, "out of memory");
		}
		if (direct) {
			out->values = src->values;
			out->from = later ? STG_FROM_I32 : STG_FROM_SAME;
		} else if (fused) {
			if (!(out->own = malloc((size_t)n * w)))
				return db_err(db, GPMDB_NOMEM, "out of memory");
			out->values = out->own;
			out->nulls = conv_float_nulls(src, out->own, n, &fail);
			if (fail)
				return db_err(db, GPMDB_NOMEM, "out of memory");
		} else if (loop) {
			if (!(out->own = malloc((size_t)n * w)))
				return db_err(db, GPMDB_NOMEM, "out of memory");
			out->values = out->own;
			int64_t bad = conv_loop(src, t, out->own, n);
			if (bad < n) {
				berr_take(e, db,
					  db_err(db, GPMDB_TOOBIG,
						 "string or blob too big"),
					  bad);
				return e->rc;
			}
		}
		if (direct || loop) {
			if (notnull && out->nulls)
				for (int64_t k = 0; k < n; k++)
					if (is_null(out->nulls, k) &&
					    (!mask || mask[k])) {
						berr_take(
						    e, db,
						    db_err(db, GPMDB_CONSTRAINT,
							   "NOT NULL "
							   "constraint "
							   "failed: %s.%s",
							   tname, col->name),
						    k);
						return e->rc;
					}
			return GPMDB_OK;
		}
	}
	/* general path: one scalar conversion per value (a constant is
	 * converted once) */
	out->own = calloc((size_t)n, w);
	out->nulls = calloc((size_t)n / 32 + 1, 4);
	if (!out->own || !out->nulls)
		return db_err(db, GPMDB_NOMEM, "out of memory");
	out->values = out->own;
	sval cv;
	bool cnull = false;
	if (src->kind == BS_CONST && mask) {
		/* a constant fails only if some row needs it */
		int64_t k = 0;
		while (k < n && !mask[k])
			k++;
		if (k == n) {
			memset(out->nulls, 0xff, ((size_t)n / 32 + 1) * 4);
			return GPMDB_OK;
		}
	}
	if (src->kind == BS_CONST) {
		cv = src->v;
		if ((rc = sval_convert(x, &cv, ty, 1, hold)) ||
		    (cv.t != BC_T_NULL &&
		     (rc = store_value(db, t, out->own, 0, &cv)))) {
			if (nomatch) {
				db_clear(db);
				memset(nomatch, 1, (size_t)n);
				return GPMDB_OK;
			}
			berr_take(e, db, rc, mask ? -1 : 0);
			return rc;
		}
		cnull = cv.t == BC_T_NULL;
	}
	for (int64_t k = 0; k < n; k++) {
		sval v;
		if (mask && !mask[k]) {
			set_null(out->nulls, k);
			continue;
		}
		if (src->kind == BS_CONST) {
			if (cnull)
				goto null;
			if (k)
				memcpy((char *)out->own + (size_t)k * w,
				       out->own, w);
			continue;
		}
		src_get(src, k, &v);
		if (v.t == BC_T_NULL)
			goto null;
		if ((rc = sval_convert(x, &v, ty, 1, hold)) ||
		    (v.t != BC_T_NULL &&
		     (rc = store_value(db, t, out->own, k, &v)))) {
			if (nomatch) {
				db_clear(db);
				nomatch[k] = 1;
				set_null(out->nulls, k);
				continue;
			}
			/* name the column: the conversion's message does not */
			char m[400];
			copy_msg(m, sizeof(m), db->errmsg);
			db_clear(db);
			db_err(db, rc, "%s (column %s.%s)", m, tname,
			       col->name);
			berr_take(e, db, rc, k);
			return rc;
		}
		if (v.t != BC_T_NULL)
			continue;
	null:
		set_null(out->nulls, k);
		if (notnull) {
			berr_take(e, db,
				  db_err(db, GPMDB_CONSTRAINT,
					 "NOT NULL constraint failed: %s.%s",
					 tname, col->name),
				  k);
			return e->rc;
		}
	}
	return GPMDB_OK;
}

/* ---- keys: hashing rows of the table and of the batch ---- */

/* Key columns of a set of rows, normalised so that equal SQL values are
 * equal bits: integers as int64, reals as double bits (-0.0 as 0.0),
 * text as pointer and length. */
typedef struct kcol {
	bool text;
	uint64_t *iv;
	stg_text *tv;
} kcol;

typedef struct kset {
	int n;
	kcol c[32];
	uint8_t *null; /* row has a NULL in the key: matches nothing */
	uint64_t nrows;
} kset;

static void kset_free(kset *k)
{
	for (int i = 0; i < k->n; i++) {
		free(k->c[i].iv);
		free(k->c[i].tv);
	}
	free(k->null);
	memset(k, 0, sizeof(*k));
}

/* A non-TEXT key value's bits, so that equal SQL values are equal bits:
 * integers as int64, reals as double bits with -0.0 as 0.0.  */
static inline uint64_t bkey_num_bits(stg_type t, const void *arr, uint64_t i)
{
	double d;
	uint64_t u;

	switch (t) {
	case STG_T_INT:
	case STG_T_DATE:
		return (uint64_t)(int64_t)((const int32_t *)arr)[i];
	case STG_T_BOOLEAN:
		return ((const uint8_t *)arr)[i];
	case STG_T_FLOAT:
		d = ((const float *)arr)[i];
		break;
	case STG_T_DOUBLE:
		d = ((const double *)arr)[i];
		break;
	default:
		return (uint64_t)((const int64_t *)arr)[i];
	}
	if (d == 0)
		d = 0; /* -0.0 equals 0.0 */
	memcpy(&u, &d, 8);
	return u;
}

/* The 64-bit finaliser both key hashes mix with. */
static inline uint64_t bkey_mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	x ^= x >> 33;
	return x;
}

static int kset_init(gpmdb *db, kset *k, int ncols, const stg_type *types,
		     uint64_t nrows)
{
	memset(k, 0, sizeof(*k));
	k->n = ncols;
	k->nrows = nrows;
	k->null = calloc(nrows + 1, 1);
	if (!k->null)
		return db_err(db, GPMDB_NOMEM, "out of memory");
	for (int i = 0; i < ncols; i++) {
		k->c[i].text = types[i] == STG_T_TEXT;
		if (k->c[i].text)
			k->c[i].tv = malloc((nrows + 1) * sizeof(stg_text));
		else
			k->c[i].iv = malloc((nrows + 1) * sizeof(uint64_t));
		if (!k->c[i].tv && !k->c[i].iv) {
			kset_free(k);
			return db_err(db, GPMDB_NOMEM, "out of memory");
		}
	}
	return GPMDB_OK;
}

/* Row i of key column c from a storage array: a tablet's (heap != NULL:
 * TEXT as stg_strref into it) or a batch's (TEXT as stg_text). */
static void kset_put(kset *k, int c, uint64_t i, stg_type t, const void *arr,
		     uint64_t j, const char *heap, bool null)
{
	if (null) {
		k->null[i] = 1;
		return;
	}
	if (!k->c[c].text) {
		k->c[c].iv[i] = bkey_num_bits(t, arr, j);
	} else if (heap) {
		stg_strref r = ((const stg_strref *)arr)[j];
		k->c[c].tv[i] = (stg_text){heap + r.off, r.len};
	} else {
		k->c[c].tv[i] = ((const stg_text *)arr)[j];
	}
}

static uint64_t kset_hash(const kset *k, uint64_t i)
{
	uint64_t h = 0x9e3779b97f4a7c15ull;

	for (int c = 0; c < k->n; c++) {
		uint64_t v;
		if (k->c[c].text) {
			const stg_text *s = &k->c[c].tv[i];
			v = 1469598103934665603ull;
			for (uint32_t b = 0; b < s->len; b++)
				v = (v ^ (uint8_t)s->ptr[b]) * 1099511628211ull;
			v ^= s->len;
		} else {
			v = k->c[c].iv[i];
		}
		h = bkey_mix64(h ^ v) + (uint64_t)c;
	}
	return h;
}

static bool kset_eq(const kset *a, uint64_t i, const kset *b, uint64_t j)
{
	for (int c = 0; c < a->n; c++) {
		if (a->c[c].text) {
			const stg_text *x = &a->c[c].tv[i], *y = &b->c[c].tv[j];
			if (x->len != y->len ||
			    (x->len && memcmp(x->ptr, y->ptr, x->len)))
				return false;
		} else if (a->c[c].iv[i] != b->c[c].iv[j]) {
			return false;
		}
	}
	return true;
}

/* Open addressing over row numbers: a slot is the high half of the
 * row's hash (a tag: most mismatches never touch the key arrays, which
 * would be a cache miss each) above row + 1; 0 = empty. */
typedef struct khash {
	uint64_t *slot;
	uint64_t mask;
} khash;

static int khash_init(gpmdb *db, khash *h, uint64_t nrows)
{
	uint64_t cap = 16;

	if (nrows >= UINT32_MAX - 1)
		return db_err(db, GPMDB_TOOBIG,
			      "batch of %llu rows: key checks handle at most "
			      "4294967294 rows at once",
			      (unsigned long long)nrows);
	while (cap < nrows * 2)
		cap *= 2;
	h->slot = calloc(cap, sizeof(uint64_t));
	h->mask = cap - 1;
	if (!h->slot)
		return db_err(db, GPMDB_NOMEM, "out of memory");
	return GPMDB_OK;
}

static uint64_t khash_row(const khash *kh, uint64_t s)
{
	return (uint32_t)kh->slot[s] - 1;
}

static void khash_set(khash *kh, uint64_t s, uint64_t h, uint64_t row)
{
	kh->slot[s] = (h >> 32 << 32) | (row + 1);
}

/* Finds row j of probe in k (hashed h); returns the slot index, and
 * *found whether it holds an equal row (else it is the empty slot). */
static uint64_t khash_find(const khash *kh, const kset *k, uint64_t h,
			   const kset *probe, uint64_t j, bool *found)
{
	uint64_t s = h & kh->mask, tag = h >> 32;

	while (kh->slot[s]) {
		if (kh->slot[s] >> 32 == tag &&
		    kset_eq(k, khash_row(kh, s), probe, j)) {
			*found = true;
			return s;
		}
		s = (s + 1) & kh->mask;
	}
	*found = false;
	return s;
}

/* Rows hashed ahead of their lookups (see match_keys). */
#define KH_AHEAD 16

/* ---- INSERT ---- */

/*
 * Appends nrows rows to table tid: srcs[c] is table column c's source.
 * Everything is converted and checked before storage is written; what
 * names the failing row in messages ("parameter row", "row").
 */
static int insert_batch(exec_ctx *x, uint32_t tid, const stg_schema *sch,
			const bsrc *srcs, int64_t nrows, const char *what)
{
	gpmdb *db = x->db;
	ccol *cols = calloc((size_t)sch->ncols + 1, sizeof(ccol));
	stg_col_batch *b = calloc((size_t)sch->ncols + 1, sizeof(*b));
	uint8_t *from = calloc((size_t)sch->ncols + 1, 1);
	rel *hold = rel_new(x, 0, NULL);
	int rc = GPMDB_OK, ph = wp_to(db, WP_BIND);
	berr e = {0};

	wp_path(db, "%lld %ss converted in one pass", (long long)nrows, what);
	/* a large growth of the pool file starts now, beside the conversion
	 * and the key check (best effort: the append reports any failure) */
	if (nrows > 0)
		(void)stg_grow_ahead(db->pool, tid, (uint64_t)nrows);
	if (!cols || !b || !from || !hold) {
		rc = db_err(db, GPMDB_NOMEM, "out of memory");
		goto out;
	}
	for (int c = 0; c < sch->ncols; c++) {
		bsrc sc = srcs[c];

		/* INT32 arrays of BIGINT columns are widened as they are
		 * written (storage on the CPU path, the kernels on the GPU's):
		 * no 8-byte copy of the batch here */
		sc.widen_later = true;
		rc = conv_column(x, hold, &sc, &sch->cols[c], sch->name, nrows,
				 NULL, NULL, true, &cols[c], &e);
		if (rc && rc != e.rc)
			goto out; /* out of memory: not a row's fault */
	}
	if (e.rc) {
		rc = berr_raise(db, &e, what);
		goto out;
	}
	for (int c = 0; c < sch->ncols; c++) {
		b[c].values = cols[c].values;
		b[c].nulls = cols[c].nulls;
		from[c] = cols[c].from;
	}
	/* unique keys: storage checks them through the table's indexes
	 * before it writes; the error names the lowest row at fault */
	if (nrows > 0 &&
	    (rc = wp_append_from(db, tid, sch, b, from, (uint64_t)nrows))) {
		if (rc == GPMDB_CONSTRAINT) /* backend=gpu: batch_gpu.c */
			rc = bkey_raise(db, &e, what, -1, NULL);
		goto out;
	}
	db->changes = nrows;
	rc = GPMDB_OK;
out:
	wp_to(db, ph);
	if (cols)
		for (int c = 0; c < sch->ncols; c++)
			ccol_free(&cols[c]);
	free(cols);
	free(b);
	free(from);
	rel_free(hold);
	return rc;
}

/* INSERT INTO t [(cols)] VALUES (params and literals): 1 = done (rc in
 * *rc), 0 = not this shape. */
static int fast_insert(gpmdb_stmt *st, ast_stmt *s, int64_t n, int *rcp)
{
	gpmdb *db = st->db;
	ast_select *sel = s->select;
	stg_schema *sch = NULL;
	uint32_t tid;
	bsrc *srcs = NULL;
	ast_expr_list *row;
	rel *hold = NULL;
	int rc;

	if (s->default_values || !sel || sel->kind != AST_SEL_VALUES ||
	    !sel->values || sel->values->n != 1 || sel->with || sel->order_by ||
	    sel->limit)
		return 0;
	row = sel->values->v[0];
	for (int i = 0; i < row->n; i++) {
		bsrc tmp;
		if (!expr_source(st, row->v[i], &tmp))
			return 0;
	}
	if ((rc = dml_find_table(db, s->name, &tid, &sch)))
		goto out;
	int nsrc = s->cols ? s->cols->n : sch->ncols;
	if (row->n != nsrc) {
		if (s->cols)
			rc = db_err(db, GPMDB_ERROR, "%d values for %d columns",
				    row->n, nsrc);
		else
			rc = db_err(db, GPMDB_ERROR,
				    "table %s has %d columns but %d values "
				    "were supplied",
				    s->name, nsrc, row->n);
		goto out;
	}
	srcs = calloc((size_t)sch->ncols + 1, sizeof(bsrc));
	stmt_exec_init(st);
	hold = rel_new(&st->x, 0, NULL);
	if (!srcs || !hold) {
		rc = db_err(db, GPMDB_NOMEM, "out of memory");
		goto out;
	}
	for (int k = 0; k < row->n; k++) {
		int c = k;
		if (s->cols) {
			for (c = 0; c < sch->ncols; c++)
				if (!strcasecmp(sch->cols[c].name,
						s->cols->v[k]))
					break;
			if (c == sch->ncols) {
				rc = db_err(db, GPMDB_ERROR,
					    "table %s has no column named %s",
					    s->name, s->cols->v[k]);
				goto out;
			}
		}
		expr_source(st, row->v[k], &srcs[c]);
	}
	for (int c = 0; c < sch->ncols; c++) {
		if (srcs[c].kind != BS_NONE)
			continue;
		/* a column left out gets its DEFAULT, evaluated once */
		srcs[c].kind = BS_CONST;
		if ((rc = dml_default_value(st, &sch->cols[c], &srcs[c].v,
					    hold)))
			goto out;
	}
	rc = insert_batch(&st->x, tid, sch, srcs, n, "parameter row");
out:
	rel_free(hold);
	free(srcs);
	stg_schema_free(sch);
	*rcp = rc;
	return 1;
}

/* ---- UPDATE and DELETE by key ---- */

typedef struct kterm {
	int col; /* table column */
	bsrc src;
} kterm;

/* WHERE k1 = ? AND k2 = ? ...: the terms, false for any other shape. */
static bool where_keys(gpmdb_stmt *st, const stg_schema *sch, const char *tname,
		       ast_expr *w, kterm *t, int *nt)
{
	ast_expr *c, *p;

	if (!w)
		return false;
	if (w->kind == AST_E_BINARY && w->op == AST_OP_AND)
		return where_keys(st, sch, tname, w->l, t, nt) &&
		       where_keys(st, sch, tname, w->r, t, nt);
	if (w->kind != AST_E_BINARY || w->op != AST_OP_EQ || *nt >= 32)
		return false;
	c = w->l->kind == AST_E_COLUMN ? w->l : w->r;
	p = c == w->l ? w->r : w->l;
	if (c->kind != AST_E_COLUMN || p->kind != AST_E_PARAM ||
	    (c->table && strcasecmp(c->table, tname)))
		return false;
	for (int i = 0; i < sch->ncols; i++)
		if (!strcasecmp(sch->cols[i].name, c->name)) {
			t[*nt].col = i;
			if (!expr_source(st, p, &t[*nt].src))
				return false;
			(*nt)++;
			return true;
		}
	return false; /* no such column: the row-wise path reports it */
}

/* Matched live rows: their row ids and the batch rows whose keys they
 * have (on the device when the GPU kept them: batch_keys_gpu.h). */
typedef bgpu_keymatch kmatch;

/*
 * Hashes the batch's keys and makes one pass over the table: every live
 * row whose key equals a batch row's.  Several batch rows with one key:
 * the last one is the row's (as if run in order), and changes counts all.
 * used[k] (when not NULL) is set for batch rows whose key matched.
 */
/* One tablet's table rows that match a parameter key: their row ids
 * and key slots, in row order.  KH_AHEAD rows at a time, in locals,
 * hashed and prefetched before their lookups.  Runs on any thread (kh
 * and k are only read); true when out of memory. */
typedef struct tmatch {
	uint64_t *rowid, *slot;
	uint64_t n, cap;
} tmatch;

static bool match_tablet(const khash *kh, const kset *k, const kterm *terms,
			 int nt, const stg_type *types,
			 const stg_tablet_view *v, tmatch *o)
{
	uint64_t pv[32][KH_AHEAD];
	stg_text ptv[32][KH_AHEAD];
	uint8_t pnull[KH_AHEAD];
	uint64_t ph[KH_AHEAD];
	kset probe = {0};

	probe.n = nt;
	probe.nrows = KH_AHEAD;
	for (int i = 0; i < nt; i++) {
		probe.c[i].text = types[i] == STG_T_TEXT;
		probe.c[i].iv = pv[i];
		probe.c[i].tv = ptv[i];
	}
	probe.null = pnull;
	for (uint32_t r = 0; r < v->nrows; r++) {
		bool found;
		uint32_t q = r % KH_AHEAD;
		if (q == 0)
			for (uint32_t u = 0; u < KH_AHEAD && r + u < v->nrows;
			     u++) {
				uint32_t rr = r + u;
				pnull[u] =
				    v->deleted &&
				    (v->deleted[rr / 32] >> (rr % 32) & 1);
				if (pnull[u])
					continue;
				for (int i = 0; i < nt; i++) {
					int tc = terms[i].col;
					kset_put(&probe, i, u, types[i],
						 v->data[tc], rr, v->heap,
						 is_null(v->nulls[tc], rr));
				}
				if (pnull[u])
					continue;
				ph[u] = kset_hash(&probe, u);
				__builtin_prefetch(&kh->slot[ph[u] & kh->mask]);
			}
		if (pnull[q])
			continue;
		uint64_t s = khash_find(kh, k, ph[q], &probe, q, &found);
		if (!found)
			continue;
		if (o->n == o->cap) {
			uint64_t nc = o->cap ? o->cap * 2 : 1024;
			uint64_t *a = realloc(o->rowid, nc * 8);
			if (a)
				o->rowid = a;
			uint64_t *b = a ? realloc(o->slot, nc * 8) : NULL;
			if (!a || !b)
				return true;
			o->slot = b;
			o->cap = nc;
		}
		o->rowid[o->n] = v->first_row + r;
		o->slot[o->n++] = s;
	}
	return false;
}

/* A unique index whose key columns are exactly the terms' columns: the
 * index's id, and in kpos[i] the key position of term i; false when none
 * (or a column is named twice). */
static bool match_index(gpmdb *db, uint32_t tid, const kterm *terms, int nt,
			uint32_t *index_id, int *kpos)
{
	stg_index_info *info = NULL;
	int ni = 0;
	bool ok = false;

	if (stg_index_list(db->pool, tid, &info, &ni)) {
		db_clear(db);
		return false;
	}
	for (int i = 0; i < ni && !ok; i++) {
		if (!info[i].unique || info[i].ncols != nt)
			continue;
		ok = true;
		for (int t = 0; t < nt && ok; t++) {
			kpos[t] = -1;
			for (int j = 0; j < nt; j++)
				if ((int)info[i].cols[j] == terms[t].col)
					kpos[t] = j;
			for (int u = 0; u < t && kpos[t] >= 0; u++)
				if (kpos[u] == kpos[t])
					kpos[t] = -1;
			ok = kpos[t] >= 0;
		}
		if (ok)
			*index_id = info[i].index_id;
	}
	free(info);
	return ok;
}

/*
 * match_keys through a unique index covering the key columns: one
 * stg_index_probe of the converted keys (a key with a NULL, or a value
 * that cannot equal the column, matches nothing) instead of the hash
 * and the pass over the table.  The matches are those of the hash path:
 * in row id order, each with the last parameter row of its key, changes
 * counting every parameter row that matched.
 */
static int match_keys_index(exec_ctx *x, uint32_t index_id, const int *kpos,
			    int nt, const ccol *kc, const uint8_t *nomatch,
			    int64_t n, uint8_t *used, kmatch *m)
{
	gpmdb *db = x->db;
	stg_col_batch keys[32];
	uint32_t *nl[32] = {0};
	int64_t *rid = malloc(sizeof(int64_t) * ((size_t)n + 1));
	/* (row id, parameter row) pairs: key, row of exec_radix_sort */
	exec_sortkey *pr = malloc(sizeof(*pr) * ((size_t)n + 1));
	uint64_t np = 0;
	int rc = GPMDB_OK;

	if ((uint64_t)n > UINT32_MAX) {
		rc = db_err(db, GPMDB_TOOBIG,
			    "%lld bound rows: at most 4294967295 a batch",
			    (long long)n);
		goto out;
	}
	if (!rid || !pr) {
		rc = db_err(db, GPMDB_NOMEM, "out of memory");
		goto out;
	}
	for (int i = 0; i < nt; i++) {
		size_t words = (size_t)n / 32 + 1;
		if (!(nl[i] = calloc(words, 4))) {
			rc = db_err(db, GPMDB_NOMEM, "out of memory");
			goto out;
		}
		if (kc[i].nulls)
			memcpy(nl[i], kc[i].nulls, words * 4);
		for (int64_t j = 0; j < n; j++)
			if (nomatch[j])
				set_null(nl[i], j);
		keys[kpos[i]].values = kc[i].values;
		keys[kpos[i]].nulls = nl[i];
	}
	if (stg_index_probe(db->pool, index_id, keys, (uint64_t)n, rid)) {
		rc = db_err_stg(db);
		goto out;
	}
	for (int64_t j = 0; j < n; j++)
		if (rid[j] >= 0)
			pr[np++] =
			    (exec_sortkey){(uint64_t)rid[j], 1, (uint32_t)j};
	/* by row id, a key's parameter rows in their order (a stable radix
	 * sort on every core: qsort of 2.5M pairs took 0.3-0.6 s of an
	 * UPDATE by bound keys) */
	if (!exec_radix_sort(pr, np)) {
		rc = db_err(db, GPMDB_NOMEM, "out of memory");
		goto out;
	}
	m->rowid = malloc(sizeof(uint64_t) * (np + 1));
	m->prow = malloc(sizeof(int64_t) * (np + 1));
	if (!m->rowid || !m->prow) {
		rc = db_err(db, GPMDB_NOMEM, "out of memory");
		goto out;
	}
	/* the parameter rows that matched (random stores: every core) */
#pragma omp parallel for schedule(static) if (used && np >= 65536)
	for (uint64_t i = 0; i < np; i++)
		if (used)
			used[pr[i].row] = 1;
	m->changes = (long long)np;
	for (uint64_t i = 0; i < np; i++) {
		if (i + 1 < np && pr[i + 1].key == pr[i].key)
			continue; /* the last parameter row of the key wins */
		m->rowid[m->n] = pr[i].key;
		m->prow[m->n++] = pr[i].row;
	}
out:
	for (int i = 0; i < nt; i++)
		free(nl[i]);
	free(rid);
	free(pr);
	return rc;
}

static int match_keys(exec_ctx *x, uint32_t tid, const stg_schema *sch,
		      const kterm *terms, int nt, int64_t n, uint8_t *used,
		      bool keep, kmatch *m)
{
	gpmdb *db = x->db;
	stg_type types[32] = {0};
	ccol kc[32];
	uint8_t *nomatch = calloc((size_t)n + 1, 1);
	uint32_t *cnt = NULL, nt_tab = 0;
	uint64_t *slot_of = NULL;
	rel *hold = rel_new(x, 0, NULL);
	kset k = {0};
	khash kh = {0};
	berr e = {0};
	stg_tablet_view *views = NULL;
	stg_plainbuf *pbs = NULL;
	tmatch *tm = NULL;
	int rc = GPMDB_OK, ph = wp_to(db, WP_LOCATE);

	memset(kc, 0, sizeof(kc));
	memset(m, 0, sizeof(*m));
	if (!nomatch || !hold) {
		rc = db_err(db, GPMDB_NOMEM, "out of memory");
		goto out;
	}
	for (int i = 0; i < nt; i++) {
		types[i] = sch->cols[terms[i].col].type;
		/* a value that cannot equal the column matches nothing */
		if ((rc = conv_column(x, hold, &terms[i].src,
				      &sch->cols[terms[i].col], sch->name, n,
				      NULL, nomatch, false, &kc[i], &e)))
			goto out;
	}
	/* a unique index on exactly these columns finds the rows (not
	 * over REAL keys: the hash equates -0.0 and 0.0, which an index
	 * may order as two keys).  On the CPU a probe is a descent of the
	 * tree per key, about 0.9 us, where the pass costs about 75 ns a
	 * table row (bench_index, 2M rows, 500k keys, 2-core VM: probe
	 * 0.43 s, hash and pass 0.26 s in all): the probe for batches of at
	 * most a tenth of the table's rows; with backend=gpu always (the
	 * GPU probes large batches, stg_set_index_probe_hook) */
	uint32_t ixid;
	int kpos[32];
	bool real_key = false;
	/* backend=gpu, one integer-like key column: one pass over the
	 * cached column on the GPU (batch_keys_gpu.c) */
	if (nt == 1 && n > 0) {
		int grc;

		if (bgpu_match_keys(db, tid, &sch->cols[terms[0].col],
				    terms[0].col, kc[0].values, kc[0].nulls,
				    nomatch, (uint64_t)n, used, keep, m,
				    &grc)) {
			rc = grc;
			goto out;
		}
	}
	uint64_t live =
	    stg_row_count(db->pool, tid) - stg_deleted_count(db->pool, tid);
	for (int i = 0; i < nt; i++)
		real_key |= types[i] == STG_T_DOUBLE || types[i] == STG_T_FLOAT;
	if (!real_key && (db->backend == 2 || (uint64_t)n * 10 <= live) &&
	    match_index(db, tid, terms, nt, &ixid, kpos)) {
		wp_path(db, "%lld keys probed in a unique index", (long long)n);
		rc = match_keys_index(x, ixid, kpos, nt, kc, nomatch, n, used,
				      m);
		goto out;
	}
	wp_path(db, "%lld keys hashed, one pass over the table", (long long)n);
	if ((rc = kset_init(db, &k, nt, types, (uint64_t)n)) ||
	    (rc = khash_init(db, &kh, (uint64_t)n)))
		goto out;
	/* per slot: parameter rows with its key, and bit 31 once a table
	 * row matched (one array: one cache miss per lookup) */
	cnt = calloc(kh.mask + 1, sizeof(uint32_t));
	slot_of = malloc(sizeof(uint64_t) * ((size_t)n + 1));
	if (!cnt || !slot_of) {
		rc = db_err(db, GPMDB_NOMEM, "out of memory");
		goto out;
	}
	for (int64_t j = 0; j < n; j++) {
		bool found;
		for (int i = 0; i < nt; i++)
			kset_put(&k, i, (uint64_t)j, types[i], kc[i].values,
				 (uint64_t)j, NULL,
				 nomatch[j] || is_null(kc[i].nulls, j));
		slot_of[j] = UINT64_MAX;
		if (k.null[j])
			continue;
		uint64_t h = kset_hash(&k, (uint64_t)j);
		uint64_t s = khash_find(&kh, &k, h, &k, (uint64_t)j, &found);
		khash_set(&kh, s, h, (uint64_t)j); /* the last one wins */
		cnt[s]++;
		slot_of[j] = s;
	}
	/* the probe: tablets in parallel (the key table is only read),
	 * each tablet's matches in its own list, joined in table order */
	if (stg_tablet_count(db->pool, tid, &nt_tab)) {
		rc = db_err_stg(db);
		goto out;
	}
	views = calloc((size_t)nt_tab + 1, sizeof(*views));
	pbs = calloc((size_t)nt_tab + 1, sizeof(*pbs));
	tm = calloc((size_t)nt_tab + 1, sizeof(*tm));
	if (!views || !tm || !pbs) {
		rc = db_err(db, GPMDB_NOMEM, "out of memory");
		goto out;
	}
	for (uint32_t t = 0; t < nt_tab; t++) {
		if (stg_tablet_get(db->pool, tid, t, &views[t])) {
			rc = db_err_stg(db);
			goto out;
		}
		/* match_tablet reads whole arrays: encoded ones decoded */
		if ((rc = stg_tablet_decode_all(&views[t], NULL, &pbs[t]))) {
			rc = db_err(db, rc, "%s", stg_decode_errstr(rc));
			goto out;
		}
	}
	bool nomem = false;
#pragma omp parallel for schedule(dynamic, 1) if (nt_tab > 1)
	for (uint32_t t = 0; t < nt_tab; t++)
		if (!__atomic_load_n(&nomem, __ATOMIC_RELAXED) &&
		    match_tablet(&kh, &k, terms, nt, types, &views[t], &tm[t]))
			__atomic_store_n(&nomem, true, __ATOMIC_RELAXED);
	if (nomem) {
		rc = db_err(db, GPMDB_NOMEM, "out of memory");
		goto out;
	}
	uint64_t tot = 0;
	for (uint32_t t = 0; t < nt_tab; t++)
		tot += tm[t].n;
	m->rowid = malloc(sizeof(uint64_t) * (tot + 1));
	m->prow = malloc(sizeof(int64_t) * (tot + 1));
	if (!m->rowid || !m->prow) {
		rc = db_err(db, GPMDB_NOMEM, "out of memory");
		goto out;
	}
	for (uint32_t t = 0; t < nt_tab; t++)
		for (uint64_t i = 0; i < tm[t].n; i++) {
			uint64_t s = tm[t].slot[i];
			m->rowid[m->n] = tm[t].rowid[i];
			m->prow[m->n++] = (int64_t)khash_row(&kh, s);
			m->changes += cnt[s] & 0x7fffffffu;
			cnt[s] |= 0x80000000u;
		}
	if (used)
		for (int64_t j = 0; j < n; j++) {
			if (j + KH_AHEAD < n &&
			    slot_of[j + KH_AHEAD] != UINT64_MAX)
				__builtin_prefetch(&cnt[slot_of[j + KH_AHEAD]]);
			used[j] = slot_of[j] != UINT64_MAX &&
				  (cnt[slot_of[j]] & 0x80000000u);
		}
out:
	for (int i = 0; i < nt; i++)
		ccol_free(&kc[i]);
	for (uint32_t t = 0; tm && t < nt_tab; t++) {
		free(tm[t].rowid);
		free(tm[t].slot);
	}
	free(tm);
	for (uint32_t t = 0; pbs && t < nt_tab; t++)
		stg_plainbuf_free(&pbs[t]);
	free(pbs);
	free(views);
	free(nomatch);
	free(cnt);
	free(slot_of);
	free(kh.slot);
	kset_free(&k);
	rel_free(hold);
	if (rc)
		bgpu_keymatch_free(m);
	wp_to(db, ph);
	return rc;
}

static int fast_delete(gpmdb_stmt *st, ast_stmt *s, int64_t n, int *rcp)
{
	gpmdb *db = st->db;
	stg_schema *sch = NULL;
	uint32_t tid;
	kterm terms[32];
	int nt = 0, rc;
	kmatch m = {0};

	if ((rc = dml_find_table(db, s->name, &tid, &sch)))
		goto out;
	if (!where_keys(st, sch, s->name, s->where, terms, &nt)) {
		stg_schema_free(sch);
		return 0;
	}
	stmt_exec_init(st);
	if ((rc = match_keys(&st->x, tid, sch, terms, nt, n, NULL, false, &m)))
		goto out;
	if (m.n && (rc = wp_delete(db, tid, m.rowid, m.n)))
		goto out; /* backend=gpu: batch_gpu.c */
	db->changes = (long long)m.n;
out:
	free(m.rowid);
	free(m.prow);
	stg_schema_free(sch);
	*rcp = rc;
	return 1;
}

static int fast_update(gpmdb_stmt *st, ast_stmt *s, int64_t n, int *rcp)
{
	gpmdb *db = st->db;
	stg_schema *sch = NULL;
	uint32_t tid, ucols[STG_MAX_COLUMNS];
	kterm terms[32];
	bsrc *set = NULL;
	ccol *pc = NULL;
	stg_col_batch *vals = NULL;
	uint8_t *used = NULL;
	rel *hold = NULL;
	int nt = 0, nset = 0, rc, ph = -1;
	kmatch m = {0};
	bool keep = false;
	berr e = {0};

	if ((rc = dml_find_table(db, s->name, &tid, &sch)))
		goto out;
	set = calloc((size_t)sch->ncols + 1, sizeof(bsrc));
	if (!set) {
		rc = db_err(db, GPMDB_NOMEM, "out of memory");
		goto out;
	}
	/* SET: parameters and literals only; the last assignment wins */
	for (int k = 0; k < s->nsets; k++) {
		int c;
		for (c = 0; c < sch->ncols; c++)
			if (!strcasecmp(sch->cols[c].name, s->sets[k]->col))
				break;
		if (c == sch->ncols ||
		    !expr_source(st, s->sets[k]->expr, &set[c]))
			goto slow;
	}
	if (!where_keys(st, sch, s->name, s->where, terms, &nt))
		goto slow;
	/* setting a key column changes what later rows match: row-wise */
	for (int i = 0; i < nt; i++)
		if (set[terms[i].col].kind != BS_NONE)
			goto slow;
	stmt_exec_init(st);
	hold = rel_new(&st->x, 0, NULL);
	pc = calloc((size_t)sch->ncols + 1, sizeof(ccol));
	used = calloc((size_t)n + 1, 1);
	if (!hold || !pc || !used) {
		rc = db_err(db, GPMDB_NOMEM, "out of memory");
		goto out;
	}
	/* backend=gpu: the matches may stay on the device, the values go
	 * there and the HCL kernels write them (batch_keys_gpu.c) */
	for (int c = 0; c < sch->ncols; c++)
		if (set[c].kind != BS_NONE)
			ucols[nset++] = (uint32_t)c;
	{
		char why[400];

		keep = db->backend == 2 &&
		       !bgpu_update_dev_declines(db, tid, sch, nset, ucols, why,
						 sizeof(why));
	}
	if ((rc = match_keys(&st->x, tid, sch, terms, nt, n, used, keep, &m)))
		goto out;
	/* the new values, by batch row; only rows that matched can fail */
	ph = wp_to(db, WP_BIND);
	for (int j = 0; j < nset; j++) {
		int c = (int)ucols[j];

		rc = conv_column(&st->x, hold, &set[c], &sch->cols[c],
				 sch->name, n, used, NULL, true, &pc[c], &e);
		if (rc && rc != e.rc)
			goto out;
	}
	if (e.rc) {
		rc = berr_raise(db, &e, "parameter row");
		goto out;
	}
	if (m.drowid) {
		/* the match stayed on the device: the values follow it */
		stg_col_batch dvals[64];

		for (int j = 0; j < nset && j < 64; j++) {
			dvals[j].values = pc[ucols[j]].values;
			dvals[j].nulls = pc[ucols[j]].nulls;
		}
		rc = bgpu_update_keys(db, tid, sch, nset, ucols, dvals,
				      (uint64_t)n, &m);
		if (rc)
			goto out;
		db->changes = m.changes;
		goto out;
	}
	if (m.n && nset) {
		/* gather each set column's values into matched-row order */
		vals = calloc((size_t)nset, sizeof(*vals));
		if (!vals) {
			rc = db_err(db, GPMDB_NOMEM, "out of memory");
			goto out;
		}
		for (int j = 0; j < nset && !rc; j++) {
			const ccol *c = &pc[ucols[j]];
			stg_type t = sch->cols[ucols[j]].type;
			size_t w = stg_width(t);
			char *d = malloc(m.n * w);
			uint32_t *nl = calloc(m.n / 32 + 1, 4);
			vals[j].values = d;
			vals[j].nulls = nl;
			if (!d || !nl) {
				rc = db_err(db, GPMDB_NOMEM, "out of memory");
				break;
			}
			/* a gather in random order (the parameter rows of
			 * rows in row id order), on every core, a NULL word
			 * per 32 rows (bench_batch's UPDATE b, 2.5M keys:
			 * the bind phase, mostly this, took 82-85 ms) */
#pragma omp parallel for schedule(static) if (m.n >= 65536)
			for (uint64_t wd = 0; wd < (m.n + 31) / 32; wd++) {
				uint64_t i1 =
				    wd * 32 + 32 < m.n ? wd * 32 + 32 : m.n;
				uint32_t bits = 0;

				for (uint64_t i = wd * 32; i < i1; i++) {
					int64_t k = m.prow[i];

					memcpy(d + i * w,
					       (const char *)c->values +
						   (size_t)k * w,
					       w);
					if (is_null(c->nulls, k))
						bits |= 1u << (i - wd * 32);
				}
				nl[wd] = bits;
			}
		}
		/* unique keys of the table as it will be (storage); a
		 * violation names the parameter row whose values the
		 * offending row gets */
		if (!rc) /* backend=gpu: batch_gpu.c */
			rc = wp_update(db, tid, sch, nset, ucols, m.rowid, m.n,
				       vals);
		if (rc == GPMDB_CONSTRAINT)
			rc = bkey_raise(db, &e, "parameter row", (int64_t)m.n,
					m.prow);
		if (rc)
			goto out;
	}
	db->changes = m.changes;
	rc = GPMDB_OK;
out:
	wp_to(db, ph);
	if (vals)
		for (int j = 0; j < nset; j++) {
			free((void *)vals[j].values);
			free((void *)vals[j].nulls);
		}
	free(vals);
	if (pc)
		for (int c = 0; c < sch->ncols; c++)
			ccol_free(&pc[c]);
	free(pc);
	free(used);
	bgpu_keymatch_free(&m);
	free(set);
	rel_free(hold);
	stg_schema_free(sch);
	*rcp = rc;
	return 1;
slow:
	free(set);
	stg_schema_free(sch);
	return 0;
}

/* ---- the per-row fallback ---- */

static int row_by_row(gpmdb_stmt *st, ast_stmt *s, int64_t n)
{
	gpmdb *db = st->db;
	stmt_batch *b = st->batch;
	long long total = 0;
	int rc = GPMDB_OK;

	b->in_loop = true;
	wp_path(db, "%lld rows one by one (the last one's plan)", (long long)n);
	for (int64_t k = 0; k < n; k++) {
		for (int i = 0; i < st->nparams; i++)
			if (b->arr[i].kind == BS_ARRAY)
				src_get(&b->arr[i], k, &st->params[i]);
		st->params_changed = true;
		/* a fresh plan arena per row: plans are built per execution */
		if ((rc = stmt_replan(st)) || (rc = dml_exec(st, s))) {
			char m[900];
			copy_msg(m, sizeof(m), db->errmsg);
			db_clear(db);
			rc = db_err(db, rc, "%s (parameter row %lld)", m,
				    (long long)k);
			break;
		}
		total += db->changes;
	}
	b->in_loop = false;
	db->changes = rc ? 0 : total;
	return rc;
}

int batch_exec(gpmdb_stmt *st, ast_stmt *s)
{
	int64_t n = 0;
	int rc;

	if ((rc = batch_rows(st, &n)))
		return rc;
	st->db->changes = 0;
	if (s->kind == AST_STMT_INSERT && fast_insert(st, s, n, &rc))
		return rc;
	if (s->kind == AST_STMT_UPDATE && fast_update(st, s, n, &rc))
		return rc;
	if (s->kind == AST_STMT_DELETE && fast_delete(st, s, n, &rc))
		return rc;
	db_clear(st->db);
	return row_by_row(st, s, n);
}

/* ---- columnar append ---- */

/* Which array types a column accepts in gpmdb_append_columns. */
static bool append_type_ok(int at, stg_type t)
{
	bool num = at == GPMDB_ARRAY_INT32 || at == GPMDB_ARRAY_INT64;

	switch (t) {
	case STG_T_INT:
	case STG_T_BIGINT:
	case STG_T_BOOLEAN:
		return num;
	case STG_T_DATE:
		return at == GPMDB_ARRAY_TEXT;
	case STG_T_FLOAT:
	case STG_T_DOUBLE:
	case STG_T_DECIMAL:
		return num || at == GPMDB_ARRAY_DOUBLE;
	case STG_T_TEXT:
		return at == GPMDB_ARRAY_TEXT;
	}
	return false;
}

static const char *col_type_name(const stg_column_info *c)
{
	return c->decl_type[0] ? c->decl_type : stg_type_name(c->type);
}

/* One row of defaults for the columns left out, through a statement of
 * our own (DEFAULT expressions are SQL). */
static int append_defaults(gpmdb *db, const stg_schema *sch, bsrc *srcs,
			   rel **hold, gpmdb_stmt **tmp)
{
	for (int c = 0; c < sch->ncols; c++) {
		if (srcs[c].kind != BS_NONE)
			continue;
		srcs[c].kind = BS_CONST;
		srcs[c].v.t = BC_T_NULL;
		if (!sch->cols[c].default_sql)
			continue;
		if (!*tmp) {
			int rc = gpmdb_prepare(db, "SELECT 1", -1, tmp, NULL);
			if (rc)
				return rc;
			*hold = rel_new(NULL, 0, NULL);
			if (!*hold)
				return db_err(db, GPMDB_NOMEM, "out of memory");
			stmt_exec_init(*tmp);
		}
		int rc =
		    dml_default_value(*tmp, &sch->cols[c], &srcs[c].v, *hold);
		if (rc)
			return rc;
	}
	return GPMDB_OK;
}

int gpmdb_append_columns(gpmdb *db, const char *table, int ncols,
			 const char *const *names,
			 const gpmdb_column_array *arrays, int64_t nrows)
{
	stg_schema *sch = NULL;
	uint32_t tid;
	bsrc *srcs = NULL;
	exec_ctx *x = NULL;
	gpmdb_stmt *tmp = NULL;
	rel *hold = NULL;
	stg_mark mark;
	bool own_txn = false;
	int rc;

	if (!db)
		return GPMDB_MISUSE;
	db_clear(db);
	if (!table || nrows < 0 || ncols < 0 || (ncols > 0 && !arrays))
		return db_err(db, GPMDB_MISUSE, "gpmdb_append_columns: %s",
			      !table	  ? "table is NULL"
			      : nrows < 0 ? "negative row count"
			      : ncols < 0 ? "negative column count"
					  : "arrays is NULL");
	if (stg_pool_readonly(db->pool))
		return db_err(db, GPMDB_READONLY,
			      "attempt to write a readonly database");
	if ((rc = dml_find_table(db, table, &tid, &sch)))
		return rc;
	if (!names && ncols != sch->ncols) {
		rc = db_err(db, GPMDB_MISUSE,
			    "gpmdb_append_columns: table %s has %d columns "
			    "but %d arrays were given (column_names NULL "
			    "means all columns in order)",
			    sch->name, sch->ncols, ncols);
		goto out;
	}
	srcs = calloc((size_t)sch->ncols + 1, sizeof(bsrc));
	x = calloc(1, sizeof(*x));
	if (!srcs || !x) {
		rc = db_err(db, GPMDB_NOMEM, "out of memory");
		goto out;
	}
	x->db = db;
	x->mem_limit = db->mem_limit;
	for (int i = 0; i < ncols; i++) {
		int c = i;
		const gpmdb_column_array *a = &arrays[i];
		if (names) {
			if (!names[i]) {
				rc = db_err(db, GPMDB_MISUSE,
					    "gpmdb_append_columns: column "
					    "name %d is NULL",
					    i);
				goto out;
			}
			for (c = 0; c < sch->ncols; c++)
				if (!strcasecmp(sch->cols[c].name, names[i]))
					break;
			if (c == sch->ncols) {
				rc = db_err(db, GPMDB_ERROR,
					    "table %s has no column named %s",
					    sch->name, names[i]);
				goto out;
			}
			if (srcs[c].kind != BS_NONE) {
				rc = db_err(db, GPMDB_MISUSE,
					    "gpmdb_append_columns: column %s "
					    "given twice",
					    sch->cols[c].name);
				goto out;
			}
		}
		if (a->type < GPMDB_ARRAY_INT32 || a->type > GPMDB_ARRAY_TEXT) {
			rc = db_err(db, GPMDB_MISUSE,
				    "gpmdb_append_columns: column %s.%s: "
				    "unknown array type %d",
				    sch->name, sch->cols[c].name, a->type);
			goto out;
		}
		if (nrows > 0 && !a->values) {
			rc = db_err(db, GPMDB_MISUSE,
				    "gpmdb_append_columns: column %s.%s: "
				    "values is NULL",
				    sch->name, sch->cols[c].name);
			goto out;
		}
		if (!append_type_ok(a->type, sch->cols[c].type)) {
			rc = db_err(db, GPMDB_MISMATCH,
				    "gpmdb_append_columns: column %s.%s is "
				    "%s, cannot append a %s array to it",
				    sch->name, sch->cols[c].name,
				    col_type_name(&sch->cols[c]),
				    array_type_name(a->type));
			goto out;
		}
		srcs[c] = (bsrc){.kind = BS_ARRAY,
				 .type = a->type,
				 .values = a->values,
				 .nulls = a->nulls,
				 .n = nrows};
	}
	if ((rc = append_defaults(db, sch, srcs, &hold, &tmp)))
		goto out;
	/* one transaction, or a savepoint inside the open one (as stmt.c
	 * runs a writing statement) */
	if (!db->explicit_txn) {
		if (stg_begin(db->pool)) {
			rc = db_err_stg(db);
			goto out;
		}
		own_txn = true;
	} else if ((!stg_in_txn(db->pool) && stg_begin(db->pool)) ||
		   stg_savepoint(db->pool, &mark)) {
		/* BEGIN (deferred): the first write takes the write lock */
		rc = db_err_stg(db);
		goto out;
	}
	db->changes = 0;
	wp_start(db, "INSERT"); /* its phases, as an INSERT's */
	rc = insert_batch(x, tid, sch, srcs, nrows, "row");
	if (own_txn) {
		if (!rc && wp_commit(db))
			rc = db_err_stg(db);
		if (rc)
			stg_rollback(db->pool);
	} else if (rc && stg_rollback_to(db->pool, &mark)) {
		stg_rollback(db->pool);
		db_txn_end(db);
	} else if (!rc) {
		wp_release(db, &mark);
	}
	if (rc)
		db->changes = 0;
	wp_finish(db, rc);
out:
	if (tmp) {
		/* keep our message: finalize of the helper must not */
		gpmdb_finalize(tmp);
	}
	rel_free(hold);
	free(x);
	free(srcs);
	stg_schema_free(sch);
	return rc;
}

void batch_stmt_free(gpmdb_stmt *st)
{
	if (!st->batch)
		return;
	batch_result_free(st);
	free(st->batch->arr);
	free(st->batch);
	st->batch = NULL;
}
