/*
 * rel.c - materialised relations (typed column arrays with byte NULL
 * flags), scalar values and their conversions.
 */
#include "../engine.h"
#include "../value.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

size_t rel_width(int t)
{
	switch (t) {
	case BC_T_BOOL:
		return 1;
	case BC_T_DATE:
		return 4;
	case BC_T_TEXT:
		return sizeof(vec_str);
	default:
		return 8;
	}
}

int exec_mem(exec_ctx *x, size_t add)
{
	if (!x)
		return GPMDB_OK;
	x->mem += add;
	if (x->mem_limit && x->mem > x->mem_limit) {
		x->over = true;
		return db_err(x->db, GPMDB_NOMEM,
			      "query needs more than the memory limit of %zu "
			      "MiB (PRAGMA memory_limit)",
			      x->mem_limit >> 20);
	}
	return GPMDB_OK;
}

rel *rel_new(exec_ctx *x, int ncols, const etype *types)
{
	rel *r = calloc(1, sizeof(*r));

	if (!r)
		goto nomem;
	r->x = x;
	r->ncols = ncols;
	r->cols = calloc((size_t)(ncols ? ncols : 1), sizeof(rcol));
	if (!r->cols) {
		free(r);
		goto nomem;
	}
	for (int i = 0; i < ncols; i++)
		r->cols[i].ty = types[i];
	vec_arena_init(&r->strs);
	return r;
nomem:
	if (x)
		db_err(x->db, GPMDB_NOMEM, "out of memory");
	return NULL;
}

void rel_free(rel *r)
{
	if (!r)
		return;
	for (int i = 0; i < r->ncols; i++) {
		free(r->cols[i].data);
		free(r->cols[i].nulls);
	}
	if (r->x) /* never below 0, never skipped (spill.c runs again) */
		r->x->mem -= r->bytes <= r->x->mem ? r->bytes : r->x->mem;
	free(r->cols);
	vec_arena_free(&r->strs);
	for (vec_chunk *c = r->adopted, *nx; c; c = nx) {
		nx = c->next;
		free(c);
	}
	free(r);
}

void rel_adopt(rel *dst, rel *src)
{
	vec_chunk *lists[2] = {src->strs.first, src->adopted};
	size_t moved = 0;

	for (int k = 0; k < 2; k++) {
		vec_chunk *c = lists[k];
		if (!c)
			continue;
		for (;; c = c->next) {
			moved += c->used;
			if (!c->next)
				break;
		}
		c->next = dst->adopted;
		dst->adopted = lists[k];
	}
	src->strs.first = src->strs.cur = NULL;
	src->adopted = NULL;
	/* the bytes stay counted, now by dst; a thread's uncounted batch
	 * text (pipe.c merge_rel) is counted from now on, so that freeing
	 * dst gives back what was added */
	if (moved > src->bytes)
		moved = src->bytes;
	src->bytes -= moved;
	dst->bytes += moved;
	if (!src->x && dst->x)
		dst->x->mem += moved;
}

int rel_reserve(rel *r, uint64_t n)
{
	uint64_t need = r->nrows + n, cap = r->cap ? r->cap : 16;
	size_t add = 0;

	if (need <= r->cap)
		return GPMDB_OK;
	while (cap < need)
		cap *= 2;
	for (int i = 0; i < r->ncols; i++) {
		size_t w = rel_width(r->cols[i].ty.t);
		void *d = realloc(r->cols[i].data, cap * w);
		uint8_t *nl = d ? realloc(r->cols[i].nulls, cap) : NULL;

		if (d)
			r->cols[i].data = d;
		if (!d || !nl)
			return db_err(r->x ? r->x->db : NULL, GPMDB_NOMEM,
				      "out of memory");
		r->cols[i].nulls = nl;
		add += (cap - r->cap) * (w + 1);
	}
	r->cap = cap;
	r->bytes += add;
	return exec_mem(r->x, add);
}

int rel_str(rel *r, const char *p, uint32_t len, vec_str *out)
{
	char *d = vec_arena_alloc(&r->strs, len ? len : 1);

	if (!d)
		return db_err(r->x ? r->x->db : NULL, GPMDB_NOMEM,
			      "out of memory");
	if (len)
		memcpy(d, p, len);
	out->ptr = d;
	out->len = len;
	r->bytes += len;
	return exec_mem(r->x, len);
}

void rel_get(const rel *r, int c, uint64_t i, sval *v)
{
	const rcol *col = &r->cols[c];

	memset(v, 0, sizeof(*v));
	if (col->nulls[i] || col->ty.t == BC_T_NULL) {
		v->t = BC_T_NULL;
		return;
	}
	v->t = col->ty.t;
	v->scale = col->ty.scale;
	switch (col->ty.t) {
	case BC_T_BOOL:
		v->u.i = ((uint8_t *)col->data)[i];
		break;
	case BC_T_DATE:
		v->u.i = ((int32_t *)col->data)[i];
		break;
	case BC_T_REAL:
		v->u.r = ((double *)col->data)[i];
		break;
	case BC_T_TEXT:
		v->u.s = ((vec_str *)col->data)[i];
		break;
	default:
		v->u.i = ((int64_t *)col->data)[i];
	}
}

/* Stores v (already of the column's type, or NULL); text is copied. */
int rel_set(rel *r, int c, uint64_t i, const sval *v)
{
	rcol *col = &r->cols[c];

	if (v->t == BC_T_NULL || col->ty.t == BC_T_NULL) {
		col->nulls[i] = 1;
		memset((char *)col->data + i * rel_width(col->ty.t), 0,
		       rel_width(col->ty.t));
		return GPMDB_OK;
	}
	col->nulls[i] = 0;
	switch (col->ty.t) {
	case BC_T_BOOL:
		((uint8_t *)col->data)[i] = (uint8_t)v->u.i;
		break;
	case BC_T_DATE:
		((int32_t *)col->data)[i] = (int32_t)v->u.i;
		break;
	case BC_T_REAL:
		((double *)col->data)[i] = v->u.r;
		break;
	case BC_T_TEXT:
		return rel_str(r, v->u.s.ptr, v->u.s.len,
			       &((vec_str *)col->data)[i]);
	default:
		((int64_t *)col->data)[i] = v->u.i;
	}
	return GPMDB_OK;
}

int rel_copy_row(rel *dst, const rel *src, uint64_t i)
{
	sval v;
	int rc;

	if ((rc = rel_reserve(dst, 1)))
		return rc;
	for (int c = 0; c < dst->ncols; c++) {
		rel_get(src, c, i, &v);
		if ((rc = rel_set(dst, c, dst->nrows, &v)))
			return rc;
	}
	dst->nrows++;
	return GPMDB_OK;
}

int rel_vec_type(int t)
{
	switch (t) {
	case BC_T_BOOL:
		return BC_COL_BOOL;
	case BC_T_INT:
		return BC_COL_INT64;
	case BC_T_REAL:
		return BC_COL_DOUBLE;
	case BC_T_DEC:
		return BC_COL_DEC;
	case BC_T_DATE:
		return BC_COL_DATE;
	case BC_T_TEXT:
		return BC_COL_TEXT;
	}
	return VEC_NULL;
}

void rel_vec(const rel *r, int c, uint64_t start, vec *v)
{
	const rcol *col = &r->cols[c];

	memset(v, 0, sizeof(*v));
	v->type = (uint8_t)rel_vec_type(col->ty.t);
	v->prec = col->ty.prec;
	v->scale = col->ty.scale;
	if (v->type == VEC_NULL)
		return;
	v->v.data = (char *)col->data + start * rel_width(col->ty.t);
	v->nulls = col->nulls + start;
}

void rel_vec_get(const vec *v, uint32_t i, sval *s)
{
	uint32_t k = v->sel ? v->sel[i] : i;

	memset(s, 0, sizeof(*s));
	if (v->type == VEC_NULL || (v->nulls && v->nulls[k])) {
		s->t = BC_T_NULL;
		return;
	}
	s->scale = v->scale;
	switch (v->type) {
	case BC_COL_INT32:
		s->t = BC_T_INT;
		s->u.i = v->v.i32[k];
		break;
	case BC_COL_INT64:
		s->t = BC_T_INT;
		s->u.i = v->v.i64[k];
		break;
	case BC_COL_DEC:
		s->t = BC_T_DEC;
		s->u.i = v->v.i64[k];
		break;
	case BC_COL_FLOAT:
		s->t = BC_T_REAL;
		s->u.r = v->v.f32[k];
		break;
	case BC_COL_DOUBLE:
		s->t = BC_T_REAL;
		s->u.r = v->v.f64[k];
		break;
	case BC_COL_DATE:
		s->t = BC_T_DATE;
		s->u.i = v->v.i32[k];
		break;
	case BC_COL_BOOL:
		s->t = BC_T_BOOL;
		s->u.i = v->v.u8[k];
		break;
	case BC_COL_TEXT:
		s->t = BC_T_TEXT;
		s->u.s = v->v.str[k];
		break;
	}
}

int rel_put_vec(rel *r, int c, uint64_t at, const vec *v, uint32_t n)
{
	rcol *col = &r->cols[c];
	int vt = rel_vec_type(col->ty.t);
	sval s;
	int rc;

	/* The common case: same type, no selection: copy the arrays. */
	if (!n)
		return GPMDB_OK;
	if (v->type == vt && !v->sel && vt != BC_COL_TEXT &&
	    (vt != BC_COL_DEC || v->scale == col->ty.scale)) {
		size_t w = rel_width(col->ty.t);
		memcpy((char *)col->data + at * w, v->v.data, n * w);
		if (v->nulls)
			memcpy(col->nulls + at, v->nulls, n);
		else
			memset(col->nulls + at, 0, n);
		return GPMDB_OK;
	}
	for (uint32_t i = 0; i < n; i++) {
		rel_vec_get(v, i, &s);
		if (((s.t != BC_T_NULL && s.t != col->ty.t) ||
		     (s.t == BC_T_DEC && s.scale != col->ty.scale)) &&
		    (rc = sval_convert(r->x, &s, col->ty, 0, r)))
			return rc;
		if ((rc = rel_set(r, c, at + i, &s)))
			return rc;
	}
	return GPMDB_OK;
}

static double sval_real(const sval *v)
{
	switch (v->t) {
	case BC_T_REAL:
		return v->u.r;
	case BC_T_DEC:
		return val_dec_to_real(v->u.i, v->scale);
	default:
		return (double)v->u.i;
	}
}

int sval_cmp(const sval *a, const sval *b)
{
	bool an = a->t == BC_T_NULL, bn = b->t == BC_T_NULL;

	if (an || bn)
		return an && bn ? 0 : an ? -1 : 1;
	if (a->t == BC_T_TEXT || b->t == BC_T_TEXT) {
		if (a->t != b->t) /* numbers sort before text */
			return a->t == BC_T_TEXT ? 1 : -1;
		return val_text_cmp(a->u.s.ptr, a->u.s.len, b->u.s.ptr,
				    b->u.s.len);
	}
	if ((a->t == BC_T_INT || a->t == BC_T_BOOL || a->t == BC_T_DATE) &&
	    (b->t == BC_T_INT || b->t == BC_T_BOOL || b->t == BC_T_DATE))
		return a->u.i < b->u.i ? -1 : a->u.i > b->u.i;
	if (a->t == BC_T_DEC && b->t == BC_T_DEC && a->scale == b->scale)
		return a->u.i < b->u.i ? -1 : a->u.i > b->u.i;
	if (a->t == BC_T_INT && b->t == BC_T_REAL) {
		/* exact for large integers */
		double y = b->u.r;
		if (y != y)
			return 1;
		if (y >= 9223372036854775808.0)
			return -1;
		if (y < -9223372036854775808.0)
			return 1;
		int64_t yi = (int64_t)y;
		if (a->u.i != yi)
			return a->u.i < yi ? -1 : 1;
		double f = y - (double)yi;
		return f > 0 ? -1 : f < 0 ? 1 : 0;
	}
	if (a->t == BC_T_REAL && b->t == BC_T_INT)
		return -sval_cmp(b, a);
	double x = sval_real(a), y = sval_real(b);
	return x < y ? -1 : x > y;
}

const char *sval_text(const sval *v, char *buf, uint32_t *len)
{
	int n = 0;

	switch (v->t) {
	case BC_T_NULL:
		buf[0] = 0;
		break;
	case BC_T_TEXT:
		*len = v->u.s.len;
		return v->u.s.ptr;
	case BC_T_REAL:
		n = val_real_format(v->u.r, buf);
		break;
	case BC_T_DEC:
		n = val_dec_format(v->u.i, v->scale, buf);
		break;
	case BC_T_DATE:
		n = val_date_format((int32_t)v->u.i, buf);
		break;
	default:
		n = val_i64_format(v->u.i, buf);
	}
	*len = (uint32_t)n;
	return buf;
}

/* Whether a real, or the integer text s[0..len), is an int64: storing
 * 1e20 or '99999999999999999999' in an integer column must fail rather
 * than saturate to 9223372036854775807 (CAST saturates, as SQLite). */
static bool rel_real_fits_i64(double d)
{
	return d >= -9223372036854775808.0 && d < 9223372036854775808.0;
}

static bool rel_text_fits_i64(const char *s, uint32_t len)
{
	uint32_t i = 0;
	bool neg = false;
	uint64_t u = 0;

	while (i < len && val_isspace(s[i]))
		i++;
	if (i < len && (s[i] == '-' || s[i] == '+'))
		neg = s[i++] == '-';
	for (; i < len && val_isdigit(s[i]); i++) {
		unsigned d = (unsigned)(s[i] - '0');
		if (u > (UINT64_MAX - d) / 10)
			return false;
		u = u * 10 + d;
	}
	return u <= (uint64_t)VAL_I64_MAX + neg;
}

static int conv_fail(exec_ctx *x, const sval *v, etype t)
{
	char buf[64];
	uint32_t len;
	const char *s = sval_text(v, buf, &len);

	return db_err(x ? x->db : NULL, GPMDB_MISMATCH,
		      "datatype mismatch: cannot store %s '%.*s' in a %s "
		      "column",
		      et_name(et_make(v->t)), (int)(len > 40 ? 40 : len), s,
		      et_name(t));
}

int sval_convert(exec_ctx *x, sval *v, etype t, int mode, rel *arena)
{
	gpmdb *db = x ? x->db : NULL;
	char buf[64];
	uint32_t len;
	const char *s;
	sval o;
	int isint, st;

	if (v->t == BC_T_NULL)
		return GPMDB_OK;
	if (v->t == t.t && (t.t != BC_T_DEC || v->scale == t.scale))
		return GPMDB_OK;
	memset(&o, 0, sizeof(o));
	o.t = t.t;
	o.scale = t.scale;
	switch (t.t) {
	case BC_T_NULL:
		o.t = BC_T_NULL;
		break;
	case BC_T_INT:
	case BC_T_BOOL:
		switch (v->t) {
		case BC_T_BOOL:
		case BC_T_INT:
			o.u.i = v->u.i;
			break;
		case BC_T_REAL:
			if (mode == 1 && (v->u.r != floor(v->u.r) ||
					  !rel_real_fits_i64(v->u.r)))
				return conv_fail(x, v, t);
			o.u.i = val_real_to_i64(v->u.r);
			break;
		case BC_T_DEC:
			if (mode == 1 && v->u.i % val_pow10(v->scale) != 0)
				return conv_fail(x, v, t);
			o.u.i = val_dec_to_i64(v->u.i, v->scale);
			break;
		case BC_T_TEXT:
			if (mode == 1) {
				if (!val_text_is_numeric(v->u.s.ptr, v->u.s.len,
							 &isint))
					return conv_fail(x, v, t);
				if (!isint) {
					double d = val_text_to_real(v->u.s.ptr,
								    v->u.s.len);
					if (d != floor(d) ||
					    !rel_real_fits_i64(d))
						return conv_fail(x, v, t);
					o.u.i = val_real_to_i64(d);
					break;
				}
				if (!rel_text_fits_i64(v->u.s.ptr, v->u.s.len))
					return conv_fail(x, v, t);
			}
			o.u.i = val_text_to_i64(v->u.s.ptr, v->u.s.len);
			break;
		default:
			return conv_fail(x, v, t);
		}
		if (t.t == BC_T_BOOL)
			o.u.i = o.u.i != 0;
		break;
	case BC_T_REAL:
		switch (v->t) {
		case BC_T_TEXT:
			if (mode == 1 && !val_text_is_numeric(
					     v->u.s.ptr, v->u.s.len, &isint))
				return conv_fail(x, v, t);
			o.u.r = val_text_to_real(v->u.s.ptr, v->u.s.len);
			break;
		case BC_T_DATE:
			return conv_fail(x, v, t);
		default:
			o.u.r = sval_real(v);
		}
		break;
	case BC_T_DEC:
		switch (v->t) {
		case BC_T_INT:
		case BC_T_BOOL:
			st = val_i64_to_dec(v->u.i, t.scale, &o.u.i);
			break;
		case BC_T_DEC:
			st = val_dec_rescale(v->u.i, v->scale, t.scale, &o.u.i);
			break;
		case BC_T_REAL:
			st = val_real_to_dec(v->u.r, t.scale, &o.u.i);
			break;
		case BC_T_TEXT:
			st = val_dec_parse_strict(v->u.s.ptr, v->u.s.len,
						  t.prec, t.scale, &o.u.i);
			if (st == VAL_INVALID && mode == 1)
				return conv_fail(x, v, t);
			if (st == VAL_INVALID) {
				st = val_real_to_dec(
				    val_text_to_real(v->u.s.ptr, v->u.s.len),
				    t.scale, &o.u.i);
			}
			break;
		default:
			return conv_fail(x, v, t);
		}
		if (st == VAL_OK && t.prec && !val_dec_fits(o.u.i, t.prec))
			st = VAL_OVERFLOW;
		if (st != VAL_OK)
			return db_err(db, GPMDB_ERROR,
				      "numeric value out of range for "
				      "DECIMAL(%d,%d)",
				      t.prec, t.scale);
		break;
	case BC_T_DATE: {
		int32_t d;
		if (v->t != BC_T_TEXT)
			return conv_fail(x, v, t);
		if (val_date_parse(v->u.s.ptr, v->u.s.len, &d) != VAL_OK)
			return db_err(db, GPMDB_ERROR, "invalid date: '%.*s'",
				      (int)(v->u.s.len > 40 ? 40 : v->u.s.len),
				      v->u.s.ptr);
		o.u.i = d;
		break;
	}
	case BC_T_TEXT:
		s = sval_text(v, buf, &len);
		if (!arena)
			return db_err(db, GPMDB_INTERNAL,
				      "text conversion without storage");
		if ((st = rel_str(arena, s, len, &o.u.s)))
			return st;
		break;
	default:
		return conv_fail(x, v, t);
	}
	*v = o;
	return GPMDB_OK;
}
