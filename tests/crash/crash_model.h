/*
 * crash_model.h - crash_storage.c's deterministic values, tables and
 * batches, and the in-memory model of the pool's committed states (the
 * images recovery must restore).  Static functions: only crash_storage.c
 * includes it.
 */
#ifndef GPMDB_CRASH_MODEL_H
#define GPMDB_CRASH_MODEL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../storage/storage.h"

#define MAXC 4
#define MAXT 8

/* ---- Deterministic values --------------------------------------------- */

static uint64_t g_seed = 20240607;

static uint64_t mix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

typedef struct {
	uint64_t s;
} rng;

static uint64_t rng_next(rng *r)
{
	r->s += 0x9e3779b97f4a7c15ull;
	return mix64(r->s);
}

static uint64_t fnv64(const void *p, size_t n)
{
	const uint8_t *b = p;
	uint64_t h = 0xcbf29ce484222325ull;

	while (n--)
		h = (h ^ *b++) * 0x100000001b3ull;
	return h;
}

static uint64_t text_hash(const char *p, uint32_t len)
{
	return fnv64(p, len) ^ ((uint64_t)len << 56);
}

/* ---- Tables and batches ----------------------------------------------- */

typedef struct {
	char name[32];
	int ncols;
	stg_column_def cols[MAXC];
	const char *sql;
} tdef;

static tdef tdef_wide(const char *name)
{
	tdef t = {.ncols = 4,
		  .sql = "CREATE TABLE t(id BIGINT NOT NULL, "
			 "v INT, s TEXT, d DOUBLE)"};

	snprintf(t.name, sizeof(t.name), "%s", name);
	t.cols[0] = (stg_column_def){
	    .name = "id", .type = STG_T_BIGINT, .flags = STG_COL_NOTNULL};
	t.cols[1] = (stg_column_def){.name = "v", .type = STG_T_INT};
	t.cols[2] = (stg_column_def){.name = "s", .type = STG_T_TEXT};
	t.cols[3] = (stg_column_def){.name = "d", .type = STG_T_DOUBLE};
	return t;
}

static tdef tdef_pair(const char *name, stg_type a, stg_type b)
{
	tdef t = {.ncols = 2, .sql = "CREATE TABLE t(x, y)"};

	snprintf(t.name, sizeof(t.name), "%s", name);
	t.cols[0] = (stg_column_def){.name = "x", .type = a};
	t.cols[1] = (stg_column_def){.name = "y", .type = b};
	return t;
}

typedef struct {
	int ncols;
	stg_col_batch cb[MAXC];
	void *vals[MAXC];
	uint32_t *nulls[MAXC];
	char *strbuf;
} batch;

#define TEXT_MAX 40

/*
 * n rows for columns of the given types; the value of (row, column) is a
 * function of (key, row0 + row, col) only, so the model and the child
 * compute the same rows.  Columns in notnull_mask never get NULLs.
 */
static void batch_make(batch *b, const stg_type *types, const uint32_t *colno,
		       int ncols, uint64_t n, uint64_t key, uint64_t row0,
		       uint32_t notnull_mask)
{
	char *sp;
	int c;

	memset(b, 0, sizeof(*b));
	b->ncols = ncols;
	b->strbuf = malloc(n * TEXT_MAX + 1);
	sp = b->strbuf;
	for (c = 0; c < ncols; c++) {
		uint32_t cn = colno ? colno[c] : (uint32_t)c;
		size_t w = stg_type_width(types[c]);
		bool any_null = false;
		uint64_t r;

		if (types[c] == STG_T_TEXT)
			w = sizeof(stg_text);
		b->vals[c] = calloc(n ? n : 1, w);
		b->nulls[c] = calloc((n + 31) / 32 + 1, 4);
		for (r = 0; r < n; r++) {
			uint64_t v =
			    mix64(g_seed ^
				  mix64(key * 1000003 + (row0 + r) * 131 + cn));
			bool isnull =
			    !((notnull_mask >> cn) & 1) && (v >> 40) % 7 == 0;

			if (isnull) {
				b->nulls[c][r / 32] |= 1u << (r % 32);
				any_null = true;
			}
			switch (types[c]) {
			case STG_T_INT:
				((int32_t *)b->vals[c])[r] = (int32_t)v;
				break;
			case STG_T_DOUBLE: {
				double d = (double)(int64_t)v / 1e9;

				((double *)b->vals[c])[r] = d;
				break;
			}
			case STG_T_TEXT: {
				uint32_t len = (uint32_t)(v % (TEXT_MAX + 1)),
					 i;
				stg_text *t = &((stg_text *)b->vals[c])[r];

				for (i = 0; i < len; i++)
					sp[i] =
					    (char)('a' +
						   (v >> (i % 13 * 4)) % 26);
				t->ptr = sp;
				t->len = len;
				sp += len;
				break;
			}
			default: /* BIGINT */
				((int64_t *)b->vals[c])[r] = (int64_t)v;
				break;
			}
		}
		b->cb[c].values = b->vals[c];
		/* Batches without NULLs pass no bitmap at all, as callers may.
		 */
		b->cb[c].nulls = any_null ? b->nulls[c] : NULL;
	}
}

static void batch_free(batch *b)
{
	int c;

	for (c = 0; c < b->ncols; c++) {
		free(b->vals[c]);
		free(b->nulls[c]);
	}
	free(b->strbuf);
	memset(b, 0, sizeof(*b));
}

/* The model's form of a value: raw bits zero-extended, TEXT hashed. */
static uint64_t value_of(stg_type t, const void *arr, uint64_t i)
{
	switch (t) {
	case STG_T_INT:
	case STG_T_DATE:
	case STG_T_FLOAT:
		return ((const uint32_t *)arr)[i];
	case STG_T_BOOLEAN:
		return ((const uint8_t *)arr)[i];
	case STG_T_TEXT: {
		const stg_text *x = &((const stg_text *)arr)[i];

		return text_hash(x->ptr, x->len);
	}
	default:
		return ((const uint64_t *)arr)[i];
	}
}

/* ---- The model -------------------------------------------------------- */

typedef struct {
	char name[STG_NAME_MAX];
	int ncols;
	stg_type types[MAXC];
	uint64_t nrows, cap;
	uint64_t *vals[MAXC];
	uint8_t *nulls[MAXC];
	uint8_t *del;
} mtable;

typedef struct {
	int n;
	mtable t[MAXT];
} mstate;

static void mtable_free(mtable *t)
{
	int c;

	for (c = 0; c < MAXC; c++) {
		free(t->vals[c]);
		free(t->nulls[c]);
	}
	free(t->del);
	memset(t, 0, sizeof(*t));
}

static void mstate_free(mstate *s)
{
	int i;

	for (i = 0; i < s->n; i++)
		mtable_free(&s->t[i]);
	s->n = 0;
}

static void mtable_reserve(mtable *t, uint64_t n)
{
	int c;

	if (n <= t->cap)
		return;
	if (n < 2 * t->cap)
		n = 2 * t->cap;
	for (c = 0; c < t->ncols; c++) {
		t->vals[c] = realloc(t->vals[c], n * sizeof(uint64_t));
		t->nulls[c] = realloc(t->nulls[c], n);
	}
	t->del = realloc(t->del, n);
	t->cap = n;
}

static void mstate_copy(mstate *dst, const mstate *src)
{
	int i, c;

	memset(dst, 0, sizeof(*dst));
	dst->n = src->n;
	for (i = 0; i < src->n; i++) {
		const mtable *s = &src->t[i];
		mtable *d = &dst->t[i];
		uint64_t n = s->nrows ? s->nrows : 1;

		*d = *s;
		d->cap = n;
		for (c = 0; c < MAXC; c++) {
			d->vals[c] = NULL;
			d->nulls[c] = NULL;
		}
		for (c = 0; c < s->ncols; c++) {
			d->vals[c] = malloc(n * sizeof(uint64_t));
			d->nulls[c] = malloc(n);
			memcpy(d->vals[c], s->vals[c],
			       s->nrows * sizeof(uint64_t));
			memcpy(d->nulls[c], s->nulls[c], s->nrows);
		}
		d->del = malloc(n);
		memcpy(d->del, s->del, s->nrows);
	}
}

static int mstate_find(const mstate *s, const char *name)
{
	int i;

	for (i = 0; i < s->n; i++)
		if (strcmp(s->t[i].name, name) == 0)
			return i;
	return -1;
}

static int cmp_tables(const void *a, const void *b)
{
	return strcmp(((const mtable *)a)->name, ((const mtable *)b)->name);
}

/*
 * Describes the first difference between the actual state a and the model
 * image m into buf; returns false when they are equal.  Values of NULLs are
 * not compared (they are unspecified).
 */
static bool mstate_diff(const mstate *a, const mstate *m, char *buf, size_t len)
{
	int i, c;

	if (a->n != m->n) {
		size_t o = (size_t)snprintf(buf, len, "%d tables (", a->n);

		for (i = 0; i < a->n && o < len; i++)
			o += (size_t)snprintf(buf + o, len - o, " %s",
					      a->t[i].name);
		if (o < len)
			o += (size_t)snprintf(buf + o, len - o, " ), want %d (",
					      m->n);
		for (i = 0; i < m->n && o < len; i++)
			o += (size_t)snprintf(buf + o, len - o, " %s",
					      m->t[i].name);
		if (o < len)
			snprintf(buf + o, len - o, " )");
		return true;
	}
	for (i = 0; i < a->n; i++) {
		const mtable *x = &a->t[i], *y = &m->t[i];
		uint64_t r;

		if (strcmp(x->name, y->name) != 0) {
			snprintf(buf, len, "table %s, want %s", x->name,
				 y->name);
			return true;
		}
		if (x->ncols != y->ncols) {
			snprintf(buf, len, "table %s: %d columns, want %d",
				 x->name, x->ncols, y->ncols);
			return true;
		}
		for (c = 0; c < x->ncols; c++)
			if (x->types[c] != y->types[c]) {
				snprintf(buf, len,
					 "table %s col %d: type %d, want %d",
					 x->name, c, x->types[c], y->types[c]);
				return true;
			}
		if (x->nrows != y->nrows) {
			snprintf(buf, len, "table %s: %llu rows, want %llu",
				 x->name, (unsigned long long)x->nrows,
				 (unsigned long long)y->nrows);
			return true;
		}
		for (r = 0; r < x->nrows; r++) {
			if (x->del[r] != y->del[r]) {
				snprintf(buf, len,
					 "table %s row %llu: deleted %d, want "
					 "%d",
					 x->name, (unsigned long long)r,
					 x->del[r], y->del[r]);
				return true;
			}
			for (c = 0; c < x->ncols; c++) {
				if (x->nulls[c][r] != y->nulls[c][r]) {
					snprintf(buf, len,
						 "table %s row %llu col %d: "
						 "NULL %d, want %d",
						 x->name, (unsigned long long)r,
						 c, x->nulls[c][r],
						 y->nulls[c][r]);
					return true;
				}
				if (!x->nulls[c][r] &&
				    x->vals[c][r] != y->vals[c][r]) {
					snprintf(
					    buf, len,
					    "table %s row %llu col %d: "
					    "%#llx, want %#llx",
					    x->name, (unsigned long long)r, c,
					    (unsigned long long)x->vals[c][r],
					    (unsigned long long)y->vals[c][r]);
					return true;
				}
			}
		}
	}
	return false;
}

#endif /* GPMDB_CRASH_MODEL_H */
