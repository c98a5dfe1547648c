/*
 * diff_gen.h - test_diff_sqlite.c's random schema, values and expressions:
 * the seeded random numbers, a growable string, the tables' columns and
 * the expression generator (scalar, boolean, subqueries) over a scope of
 * FROM items.  Static functions: only test_diff_sqlite.c includes it.
 */
#ifndef GPMDB_DIFF_GEN_H
#define GPMDB_DIFF_GEN_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DIFF_NTAB      3
#define DIFF_MAXCOL    5
#define DIFF_PER_ROUND 100
#define DIFF_MAXROWS   400 /* writes stop growing a table beyond this */

enum { DT_INT, DT_REAL, DT_TEXT, DT_BOOL };

/* ---- random numbers (splitmix64: tiny, seedable, good enough) ---- */

static uint64_t diff_state;

static uint64_t diff_next(void)
{
	uint64_t z = (diff_state += 0x9E3779B97F4A7C15ull);

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

/* Uniform in [0, n). */
static int diff_rand(int n)
{
	return n <= 1 ? 0 : (int)(diff_next() % (uint64_t)n);
}

/* Uniform in [lo, hi]. */
static int diff_range(int lo, int hi)
{
	return lo + diff_rand(hi - lo + 1);
}

/* True with probability pct/100. */
static int diff_pct(int pct)
{
	return diff_rand(100) < pct;
}

/* ---- a growable string ---- */

struct diff_buf {
	char *p;
	size_t n, cap;
};

static void diff_add(struct diff_buf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void diff_add(struct diff_buf *b, const char *fmt, ...)
{
	va_list ap;
	int k;

	for (;;) {
		size_t room = b->cap - b->n;

		va_start(ap, fmt);
		k = vsnprintf(b->p ? b->p + b->n : NULL, b->p ? room : 0, fmt,
			      ap);
		va_end(ap);
		if (k < 0)
			abort();
		if (b->p && (size_t)k < room) {
			b->n += (size_t)k;
			return;
		}
		b->cap = (b->cap + (size_t)k + 64) * 2;
		b->p = realloc(b->p, b->cap);
		if (!b->p)
			abort();
	}
}

/* Cuts b back to its first n bytes. */
static void diff_trunc(struct diff_buf *b, size_t n)
{
	b->n = n;
	if (b->p)
		b->p[n] = 0;
}

static void diff_clear(struct diff_buf *b)
{
	diff_trunc(b, 0);
}

/* ---- schema ---- */

struct diff_col {
	char name[8];
	int type; /* DT_INT, DT_REAL, DT_TEXT */
};

struct diff_tab {
	char name[8];
	int ncol;
	struct diff_col col[DIFF_MAXCOL];
	int nrows; /* as last counted: bounds join sizes */
	/* indexes made by CREATE INDEX: nixc[k] columns ixc[k][..] */
	int nix;
	int nixc[2];
	int ixc[2][2];
};

static struct diff_tab diff_tabs[DIFF_NTAB];

/* A column visible in a scope: alias.name of a type. */
struct diff_ref {
	char alias[8];
	char name[8];
	int type;
};

struct diff_scope {
	struct diff_ref ref[DIFF_NTAB * DIFF_MAXCOL * 2];
	int n;
	const struct diff_scope *outer; /* correlated references */
	long rows; /* upper bound of rows the expressions run over */
};

/* An expression the aggregate mode may use as a leaf (a GROUP BY key). */
struct diff_key {
	char text[256];
	int type;
};

/* The generator's state for one statement. */
struct diff_gen {
	const struct diff_scope *scope;
	int agg; /* 1: build over keys and aggregates */
	struct diff_key key[4];
	int nkey;
	int subq;      /* subquery nesting depth */
	int alias;     /* next subquery alias number */
	int nosubq;    /* no subqueries (DML SET, aggregate context) */
	int noagg_sub; /* inside an aggregate's argument */
	int naggs;     /* aggregate calls made */
	int exact;     /* no REAL division: an aggregate's argument */
	int avoid;     /* 1 + the table subqueries must not read (writes) */
};

static const char *diff_words[] = {
    "",	  "a",	   "A",	    "ab",	    "abc",  "Abc", "ABC", "b",
    "ba", "bab",   "x y",   "10",	    "-3",   "2.5", "a%",  "_b",
    "zz", "hello", "HELLO", "h\xc3\xa9llo", "it's", " a",  "a ",  "aa"};

static const char *diff_typename(int t)
{
	switch (t) {
	case DT_INT:
		return diff_pct(40)   ? "INTEGER"
		       : diff_pct(70) ? "INT"
				      : "BIGINT";
	case DT_REAL:
		return diff_pct(50) ? "REAL" : "DOUBLE";
	default:
		return diff_pct(80) ? "TEXT" : "VARCHAR(20)";
	}
}

/* A text literal with its quotes doubled. */
static void diff_add_text(struct diff_buf *b, const char *s)
{
	diff_add(b, "'");
	for (; *s; s++)
		diff_add(b, *s == '\'' ? "''" : "%c", *s);
	diff_add(b, "'");
}

/* Reals are multiples of 1/4 (and zeros, so that -0.0 appears in
 * products): sums of them are exact in binary.  gpmdb sums in long double,
 * SQLite in double, so sums of inexact values differ in the last bits,
 * enough to reorder ties of ORDER BY ... LIMIT or flip avg(x) > lit. */
static void diff_add_real_value(struct diff_buf *b)
{
	switch (diff_rand(4)) {
	case 0:
		diff_add(b, "%.2f", diff_range(-40, 40) / 4.0);
		break;
	case 1:
		diff_add(b, "%.2f", diff_range(-4000, 4000) / 4.0);
		break;
	case 2:
		diff_add(b, "0.0");
		break;
	default:
		diff_add(b, "%d.0", diff_range(-5, 5));
		break;
	}
}

static void diff_add_value(struct diff_buf *b, int type, int nullpct)
{
	if (diff_pct(nullpct)) {
		diff_add(b, "NULL");
		return;
	}
	switch (type) {
	case DT_INT:
		if (diff_pct(60))
			diff_add(b, "%d", diff_range(-5, 5));
		else
			diff_add(b, "%d", diff_range(-1000, 1000));
		break;
	case DT_REAL:
		diff_add_real_value(b);
		break;
	default:
		if (diff_pct(80)) {
			diff_add_text(
			    b, diff_words[diff_rand(sizeof(diff_words) /
						    sizeof(diff_words[0]))]);
		} else {
			char s[8];
			int k = diff_range(0, 6), i;

			for (i = 0; i < k; i++)
				s[i] = "abcAB xz%_"[diff_rand(10)];
			s[k] = 0;
			diff_add_text(b, s);
		}
		break;
	}
}

/* ---- the expression generator ---- */

static void diff_expr(struct diff_gen *g, struct diff_buf *b, int type,
		      int depth);
static void diff_bool(struct diff_gen *g, struct diff_buf *b, int depth);

static void diff_literal(struct diff_buf *b, int type)
{
	switch (type) {
	case DT_INT:
		diff_add(b, "%d", diff_range(-20, 20));
		break;
	case DT_REAL:
		/* Quarters: exact in binary (see diff_add_real_value). */
		diff_add(b, "%.2f", diff_range(-80, 80) / 4.0);
		break;
	case DT_TEXT:
		diff_add_text(b, diff_words[diff_rand(sizeof(diff_words) /
						      sizeof(diff_words[0]))]);
		break;
	default:
		diff_add(b, diff_pct(50) ? "(1 = 1)" : "(1 = 0)");
		break;
	}
}

/* A column of the wanted type from the scope, or from an outer scope
 * (correlated) now and then.  0 when there is none. */
static int diff_colref(struct diff_gen *g, struct diff_buf *b, int type)
{
	const struct diff_scope *s = g->scope;
	int pick[64], n = 0, i;

	if (s->outer && diff_pct(30) && !g->noagg_sub) {
		for (i = 0; i < s->outer->n && n < 64; i++)
			if (s->outer->ref[i].type == type)
				pick[n++] = i;
		if (n) {
			const struct diff_ref *r =
			    &s->outer->ref[pick[diff_rand(n)]];

			diff_add(b, "%s.%s", r->alias, r->name);
			return 1;
		}
	}
	for (i = 0; i < s->n && n < 64; i++)
		if (s->ref[i].type == type)
			pick[n++] = i;
	if (!n)
		return 0;
	i = pick[diff_rand(n)];
	diff_add(b, "%s.%s", s->ref[i].alias, s->ref[i].name);
	return 1;
}

/* A number (INT or REAL) expression: the numeric class compares freely. */
static int diff_numtype(void)
{
	return diff_pct(55) ? DT_INT : DT_REAL;
}

/* A subquery's FROM: one table under a fresh alias, its scope. */
static void diff_sub_from(struct diff_gen *g, struct diff_buf *b,
			  struct diff_scope *in, int need_type)
{
	int t = diff_rand(DIFF_NTAB), i, tries;
	const struct diff_tab *tab;

	/* SQLite's UPDATE lets a subquery on the table being written see
	 * the rows it has already changed (gpmdb evaluates WHERE first, as
	 * the standard says): subqueries of writes read other tables. */
	while (t == g->avoid - 1)
		t = diff_rand(DIFF_NTAB);

	/* Prefer a table with a column of need_type. */
	for (tries = 0; need_type >= 0 && tries < 6; tries++) {
		for (i = 0; i < diff_tabs[t].ncol; i++)
			if (diff_tabs[t].col[i].type == need_type)
				break;
		if (i < diff_tabs[t].ncol)
			break;
		do
			t = diff_rand(DIFF_NTAB);
		while (t == g->avoid - 1);
	}
	tab = &diff_tabs[t];
	memset(in, 0, sizeof(*in));
	for (i = 0; i < tab->ncol; i++) {
		snprintf(in->ref[i].alias, sizeof(in->ref[i].alias), "s%d",
			 g->alias);
		memcpy(in->ref[i].name, tab->col[i].name,
		       sizeof(in->ref[i].name));
		in->ref[i].type = tab->col[i].type;
	}
	in->n = tab->ncol;
	/* A correlated subquery runs once per outer row: keep outer rows
	 * times its rows (what a nested one multiplies again) small. */
	in->rows = tab->nrows ? tab->nrows : 1;
	in->outer = g->scope->rows * in->rows <= 100000 ? g->scope : NULL;
	if (in->outer)
		in->rows *= g->scope->rows;
	diff_add(b, " FROM %s AS s%d", tab->name, g->alias);
	g->alias++;
}

/* Runs body with g's scope switched to in, then restores it. */
static const struct diff_scope *
diff_enter(struct diff_gen *g, const struct diff_scope *in, int *agg)
{
	const struct diff_scope *old = g->scope;

	*agg = g->agg;
	g->agg = 0;
	g->scope = in;
	g->subq++;
	return old;
}

static void diff_leave(struct diff_gen *g, const struct diff_scope *old,
		       int agg)
{
	g->scope = old;
	g->agg = agg;
	g->subq--;
}

/* A subquery's WHERE, maybe correlated. */
static void diff_sub_where(struct diff_gen *g, struct diff_buf *b)
{
	if (diff_pct(70)) {
		diff_add(b, " WHERE ");
		diff_bool(g, b, 2);
	}
}

/* (SELECT agg(col) FROM t WHERE ...): exactly one row, of type type. */
static int diff_scalar_subq(struct diff_gen *g, struct diff_buf *b, int type)
{
	struct diff_scope in;
	struct diff_buf arg = {0};
	const struct diff_scope *old;
	int agg, ok = 1;

	diff_add(b, "(SELECT ");
	{
		/* The FROM is written after the select list: build it aside. */
		struct diff_buf from = {0};

		diff_sub_from(g, &from, &in, type == DT_INT ? -1 : type);
		old = diff_enter(g, &in, &agg);
		g->noagg_sub++; /* the aggregate's argument: inner columns */
		switch (type) {
		case DT_INT:
			if (diff_pct(40)) {
				diff_add(b, "count(*)");
			} else if (diff_colref(g, &arg, DT_INT)) {
				diff_add(b, "%s(%s)",
					 diff_pct(50) ? "max" : "min", arg.p);
			} else {
				diff_add(b, "count(*)");
			}
			break;
		case DT_REAL:
			if (diff_colref(g, &arg, DT_REAL) ||
			    diff_colref(g, &arg, DT_INT)) {
				static const char *f[] = {"max", "min", "avg",
							  "total"};
				diff_add(b, "%s(%s)", f[diff_rand(4)], arg.p);
			} else {
				ok = 0;
			}
			break;
		default:
			if (diff_colref(g, &arg, DT_TEXT))
				diff_add(b, "%s(%s)",
					 diff_pct(50) ? "max" : "min", arg.p);
			else
				ok = 0;
			break;
		}
		g->noagg_sub--;
		diff_add(b, "%s", from.p);
		diff_sub_where(g, b);
		diff_leave(g, old, agg);
		free(from.p);
	}
	diff_add(b, ")");
	free(arg.p);
	return ok;
}

/* (SELECT col FROM t WHERE ... ORDER BY 1 LIMIT 1): one row or none. */
static int diff_first_subq(struct diff_gen *g, struct diff_buf *b, int type)
{
	struct diff_scope in;
	struct diff_buf from = {0}, col = {0};
	const struct diff_scope *old;
	int agg, ok;

	diff_sub_from(g, &from, &in, type);
	old = diff_enter(g, &in, &agg);
	g->noagg_sub++;
	ok = diff_colref(g, &col, type);
	g->noagg_sub--;
	if (ok) {
		diff_add(b, "(SELECT %s%s", col.p, from.p);
		diff_sub_where(g, b);
		diff_add(b, " ORDER BY 1%s LIMIT 1)",
			 diff_pct(50) ? " DESC" : "");
	}
	diff_leave(g, old, agg);
	free(from.p);
	free(col.p);
	return ok;
}

/* An aggregate call over the scope's rows, of type type. */
static void diff_aggcall(struct diff_gen *g, struct diff_buf *b, int type)
{
	int agg = g->agg;
	const char *dist = diff_pct(15) ? "DISTINCT " : "";

	g->agg = 0;
	g->nosubq++;
	g->exact++;
	g->naggs++;
	switch (type) {
	case DT_INT:
		switch (diff_rand(4)) {
		case 0:
			diff_add(b, "count(*)");
			break;
		case 1:
			diff_add(b, "count(%s", dist);
			diff_expr(g, b, diff_rand(3), 1);
			diff_add(b, ")");
			break;
		case 2:
			diff_add(b, "sum(%s", dist);
			diff_expr(g, b, DT_INT, 1);
			diff_add(b, ")");
			break;
		default:
			diff_add(b, "%s(", diff_pct(50) ? "min" : "max");
			diff_expr(g, b, DT_INT, 1);
			diff_add(b, ")");
			break;
		}
		break;
	case DT_REAL: {
		static const char *f[] = {"avg", "total", "sum", "min", "max"};
		int k = diff_rand(5);

		diff_add(b, "%s(%s", f[k], k < 3 ? dist : "");
		/* avg and total of integers are REAL too. */
		diff_expr(g, b, k < 2 ? diff_numtype() : DT_REAL, 1);
		diff_add(b, ")");
		break;
	}
	default:
		diff_add(b, "%s(", diff_pct(50) ? "min" : "max");
		diff_expr(g, b, DT_TEXT, 1);
		diff_add(b, ")");
		break;
	}
	g->exact--;
	g->nosubq--;
	g->agg = agg;
}

/* A leaf of type type: a column (a GROUP BY key or an aggregate in
 * aggregate mode), a literal, now and then a NULL. */
static void diff_leaf(struct diff_gen *g, struct diff_buf *b, int type)
{
	if (g->agg) {
		int pick[4], n = 0, i;

		for (i = 0; i < g->nkey; i++)
			if (g->key[i].type == type)
				pick[n++] = i;
		if (n && diff_pct(50)) {
			diff_add(b, "%s", g->key[pick[diff_rand(n)]].text);
			return;
		}
		if (type != DT_BOOL && diff_pct(70)) {
			diff_aggcall(g, b, type);
			return;
		}
		diff_literal(b, type);
		return;
	}
	if (type == DT_BOOL) {
		diff_bool(g, b, 0);
		return;
	}
	if (diff_pct(75) && diff_colref(g, b, type))
		return;
	if (diff_pct(5)) {
		diff_add(b, "NULL");
		return;
	}
	diff_literal(b, type);
}

static void diff_int(struct diff_gen *g, struct diff_buf *b, int depth)
{
	int k = depth <= 0 ? 0 : diff_rand(16);

	switch (k) {
	case 0:
	case 1:
	case 2:
		diff_leaf(g, b, DT_INT);
		break;
	case 3:
	case 4: {
		static const char *ops[] = {"+", "-", "*", "/", "%"};

		diff_add(b, "(");
		diff_int(g, b, depth - 1);
		diff_add(b, " %s ", ops[diff_rand(5)]);
		diff_int(g, b, depth - 1);
		diff_add(b, ")");
		break;
	}
	case 5:
		diff_add(b, diff_pct(50) ? "abs(" : "-(");
		diff_int(g, b, depth - 1);
		diff_add(b, ")");
		break;
	case 6:
		diff_add(b, "length(");
		diff_expr(g, b, DT_TEXT, depth - 1);
		diff_add(b, ")");
		break;
	default:
		diff_expr(g, b, DT_INT, depth);
		break;
	}
}

/* CASE, COALESCE, IFNULL, NULLIF, min/max: every branch of type type. */
static int diff_generic(struct diff_gen *g, struct diff_buf *b, int type,
			int depth)
{
	int i, n;

	switch (diff_rand(7)) {
	case 0:
		diff_add(b, "CASE");
		n = diff_range(1, 3);
		for (i = 0; i < n; i++) {
			diff_add(b, " WHEN ");
			diff_bool(g, b, depth - 1);
			diff_add(b, " THEN ");
			diff_expr(g, b, type, depth - 1);
		}
		if (diff_pct(70)) {
			diff_add(b, " ELSE ");
			diff_expr(g, b, type, depth - 1);
		}
		diff_add(b, " END");
		return 1;
	case 1: {
		int t = diff_rand(3);

		diff_add(b, "CASE ");
		diff_expr(g, b, t, depth - 1);
		n = diff_range(1, 3);
		for (i = 0; i < n; i++) {
			diff_add(b, " WHEN ");
			diff_expr(g, b, t, 0);
			diff_add(b, " THEN ");
			diff_expr(g, b, type, depth - 1);
		}
		if (diff_pct(60)) {
			diff_add(b, " ELSE ");
			diff_expr(g, b, type, depth - 1);
		}
		diff_add(b, " END");
		return 1;
	}
	case 2:
		diff_add(b, "coalesce(");
		n = diff_range(2, 3);
		for (i = 0; i < n; i++) {
			diff_add(b, i ? ", " : "");
			diff_expr(g, b, type, depth - 1);
		}
		diff_add(b, ")");
		return 1;
	case 3:
	case 4:
		diff_add(b, diff_pct(50) ? "ifnull(" : "nullif(");
		diff_expr(g, b, type, depth - 1);
		diff_add(b, ", ");
		diff_expr(g, b, type, depth - 1);
		diff_add(b, ")");
		return 1;
	case 5:
		diff_add(b, diff_pct(50) ? "min(" : "max(");
		diff_expr(g, b, type, depth - 1);
		diff_add(b, ", ");
		diff_expr(g, b, type, depth - 1);
		diff_add(b, ")");
		return 1;
	default:
		if (g->nosubq || g->agg || g->subq >= 2)
			return 0;
		return diff_pct(60) ? diff_scalar_subq(g, b, type)
				    : diff_first_subq(g, b, type);
	}
}

static void diff_expr(struct diff_gen *g, struct diff_buf *b, int type,
		      int depth)
{
	size_t mark = b->n;

	if (type == DT_BOOL) {
		diff_bool(g, b, depth);
		return;
	}
	if (depth <= 0 || diff_pct(30)) {
		diff_leaf(g, b, type);
		return;
	}
	switch (type) {
	case DT_INT:
		if (diff_pct(8)) {
			/* CAST of a REAL truncates, of TEXT takes the
			 * leading number (0 if none). */
			diff_add(b, "CAST(");
			diff_expr(g, b, diff_pct(50) ? DT_REAL : DT_TEXT,
				  depth - 1);
			diff_add(b, " AS INTEGER)");
			return;
		}
		if (diff_pct(5)) {
			diff_add(b, "instr(");
			diff_expr(g, b, DT_TEXT, depth - 1);
			diff_add(b, ", ");
			diff_expr(g, b, DT_TEXT, 0);
			diff_add(b, ")");
			return;
		}
		if (diff_pct(50)) {
			diff_int(g, b, depth);
			return;
		}
		break;
	case DT_REAL:
		switch (diff_rand(6)) {
		case 0:
		case 1: {
			static const char *ops[] = {"+", "-", "*", "/"};
			int l = diff_rand(3);

			/* At least one REAL operand. */
			diff_add(b, "(");
			diff_expr(g, b, l == 1 ? DT_INT : DT_REAL, depth - 1);
			/* Sums of quotients would differ in the last bits. */
			diff_add(b, " %s ", ops[diff_rand(g->exact ? 3 : 4)]);
			diff_expr(g, b, l == 2 ? DT_INT : DT_REAL, depth - 1);
			diff_add(b, ")");
			return;
		}
		case 2:
			diff_add(b, diff_pct(50) ? "abs(" : "-(");
			diff_expr(g, b, DT_REAL, depth - 1);
			diff_add(b, ")");
			return;
		case 3:
			if (diff_pct(60))
				break;
			diff_add(b, "CAST(");
			diff_expr(g, b, diff_pct(70) ? DT_INT : DT_TEXT,
				  depth - 1);
			diff_add(b, " AS %s)",
				 diff_pct(50) ? "REAL" : "DOUBLE");
			return;
		default:
			break;
		}
		break;
	default:
		switch (diff_rand(7)) {
		case 0:
			diff_add(b, diff_pct(50) ? "upper(" : "lower(");
			diff_expr(g, b, DT_TEXT, depth - 1);
			diff_add(b, ")");
			return;
		case 1:
			diff_add(b, "substr(");
			diff_expr(g, b, DT_TEXT, depth - 1);
			diff_add(b, ", %d", diff_range(-4, 5));
			if (diff_pct(60))
				diff_add(b, ", %d", diff_range(-2, 5));
			diff_add(b, ")");
			return;
		case 2:
			diff_add(b, "(");
			diff_expr(g, b, diff_pct(80) ? DT_TEXT : DT_INT,
				  depth - 1);
			diff_add(b, " || ");
			diff_expr(g, b, DT_TEXT, depth - 1);
			diff_add(b, ")");
			return;
		case 3:
			if (diff_pct(50)) {
				diff_add(b, "CAST(");
				diff_expr(g, b, DT_INT, depth - 1);
				diff_add(b, " AS TEXT)");
			} else {
				diff_add(b, "%s(",
					 diff_pct(50) ? "trim" : "ltrim");
				diff_expr(g, b, DT_TEXT, depth - 1);
				diff_add(b, ")");
			}
			return;
		case 4:
			if (diff_pct(50))
				break;
			diff_add(b, "replace(");
			diff_expr(g, b, DT_TEXT, depth - 1);
			diff_add(b, ", ");
			diff_literal(b, DT_TEXT);
			diff_add(b, ", ");
			diff_expr(g, b, DT_TEXT, 0);
			diff_add(b, ")");
			return;
		default:
			break;
		}
		break;
	}
	if (!diff_generic(g, b, type, depth)) {
		diff_trunc(b, mark);
		diff_leaf(g, b, type);
	}
}

/* An IN list of literals (and a column now and then) of class type. */
static void diff_inlist(struct diff_gen *g, struct diff_buf *b, int type)
{
	int n = diff_range(1, 4), i;

	diff_add(b, "(");
	for (i = 0; i < n; i++) {
		diff_add(b, i ? ", " : "");
		if (diff_pct(10))
			diff_add(b, "NULL");
		else if (diff_pct(15))
			diff_expr(g, b,
				  type == DT_TEXT ? DT_TEXT : diff_numtype(),
				  0);
		else
			diff_literal(b, type == DT_TEXT ? DT_TEXT
							: diff_numtype());
	}
	diff_add(b, ")");
}

/* x [NOT] IN (SELECT col FROM t WHERE ...) or [NOT] EXISTS (...). */
static int diff_subq_bool(struct diff_gen *g, struct diff_buf *b)
{
	struct diff_scope in;
	struct diff_buf from = {0}, col = {0};
	const struct diff_scope *old;
	int agg, ok = 1, type = diff_rand(3);

	if (diff_pct(50)) {
		diff_add(b, "%sEXISTS (SELECT 1", diff_pct(30) ? "NOT " : "");
		diff_sub_from(g, &from, &in, -1);
		old = diff_enter(g, &in, &agg);
		diff_add(b, "%s", from.p);
		diff_sub_where(g, b);
		diff_leave(g, old, agg);
		diff_add(b, ")");
	} else {
		diff_expr(g, b, type, 1);
		diff_add(b, "%s IN (SELECT ", diff_pct(30) ? " NOT" : "");
		diff_sub_from(g, &from, &in, type);
		old = diff_enter(g, &in, &agg);
		g->noagg_sub++;
		if (!diff_colref(g, &col, type) &&
		    !(type != DT_TEXT &&
		      diff_colref(g, &col, type == DT_INT ? DT_REAL : DT_INT)))
			ok = 0;
		g->noagg_sub--;
		if (ok) {
			diff_add(b, "%s%s", col.p, from.p);
			diff_sub_where(g, b);
		}
		diff_leave(g, old, agg);
		if (ok && diff_pct(20)) {
			/* A compound inside IN: another arm, same type. */
			diff_clear(&from);
			diff_clear(&col);
			diff_sub_from(g, &from, &in, type);
			old = diff_enter(g, &in, &agg);
			g->noagg_sub++;
			if (diff_colref(g, &col, type)) {
				diff_add(b, " %s SELECT %s%s",
					 diff_pct(50) ? "UNION" : "EXCEPT",
					 col.p, from.p);
				diff_sub_where(g, b);
			}
			g->noagg_sub--;
			diff_leave(g, old, agg);
		}
		diff_add(b, ")");
	}
	free(from.p);
	free(col.p);
	return ok;
}

static void diff_bool(struct diff_gen *g, struct diff_buf *b, int depth)
{
	size_t mark = b->n;
	int k = depth <= 0 ? diff_rand(8) : diff_rand(15);
	int t = diff_rand(3) == 2 ? DT_TEXT : diff_numtype();
	static const char *cmp[] = {"=",  "<>", "<",  "<=", ">",
				    ">=", "!=", "==", "IS", "IS NOT"};

	if (depth < 0)
		depth = 0;
	switch (k) {
	case 0:
	case 1:
	case 2:
	case 8:
		/* A comparison within one class (number or text). */
		diff_expr(g, b, t, depth);
		diff_add(b, " %s ", cmp[diff_rand(10)]);
		diff_expr(g, b, t == DT_TEXT ? DT_TEXT : diff_numtype(), depth);
		break;
	case 3:
		diff_expr(g, b, t, depth);
		diff_add(b, diff_pct(50) ? " IS NULL" : " IS NOT NULL");
		break;
	case 4:
		diff_expr(g, b, t, depth);
		diff_add(b, "%s BETWEEN ", diff_pct(25) ? " NOT" : "");
		diff_expr(g, b, t == DT_TEXT ? DT_TEXT : diff_numtype(), 0);
		diff_add(b, " AND ");
		diff_expr(g, b, t == DT_TEXT ? DT_TEXT : diff_numtype(), 0);
		break;
	case 5:
		diff_expr(g, b, t, depth);
		diff_add(b, "%s IN ", diff_pct(30) ? " NOT" : "");
		diff_inlist(g, b, t);
		break;
	case 6: {
		static const char *pat[] = {"a%", "%a",	 "%b%", "_",   "__%",
					    "A_", "%",	 "",	"h%o", "%y",
					    "1%", "x_y", "%_b", "AB%"};

		diff_expr(g, b, DT_TEXT, depth);
		diff_add(b, "%s LIKE ", diff_pct(25) ? " NOT" : "");
		diff_add_text(b, pat[diff_rand(sizeof(pat) / sizeof(pat[0]))]);
		break;
	}
	case 7:
		if (g->agg) {
			/* HAVING count(*), HAVING NOT sum(x), a key. */
			if (diff_pct(50)) {
				diff_add(b, "%s", diff_pct(30) ? "NOT " : "");
				diff_leaf(g, b, diff_numtype());
			} else {
				diff_literal(b, DT_BOOL);
			}
			break;
		}
		/* A number as a truth value (non-zero is true). */
		if (diff_pct(50)) {
			diff_add(b, "%s", diff_pct(30) ? "NOT " : "");
			diff_expr(g, b, diff_numtype(), 0);
		} else {
			diff_expr(g, b, DT_INT, 0);
			diff_add(b, " > %d", diff_range(-3, 3));
		}
		break;
	case 9:
	case 10:
		diff_add(b, "(");
		diff_bool(g, b, depth - 1);
		diff_add(b, diff_pct(50) ? " AND " : " OR ");
		diff_bool(g, b, depth - 1);
		diff_add(b, ")");
		break;
	case 11:
		diff_add(b, "NOT (");
		diff_bool(g, b, depth - 1);
		diff_add(b, ")");
		break;
	default:
		if (g->nosubq || g->agg || g->subq >= 2 ||
		    !diff_subq_bool(g, b)) {
			diff_trunc(b, mark);
			diff_expr(g, b, t, 0);
			diff_add(b, " IS NOT NULL");
		}
		break;
	}
}

#endif /* GPMDB_DIFF_GEN_H */
