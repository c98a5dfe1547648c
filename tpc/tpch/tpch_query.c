/*
 * tpch_query.c - the TPC-H queries' dialect, runners and comparison rule
 * shared by the test and the benchmark (see tpch_query.h).
 */
#include "tpch_query.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

/* ---- small helpers ---- */

char *tpchq_read_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t len = 0, cap = 0, n;

	if (!f)
		return NULL;
	for (;;) {
		if (cap - len < 4096) {
			cap = cap ? cap * 2 : 8192;
			char *nb = realloc(buf, cap);
			if (!nb) {
				free(buf);
				fclose(f);
				return NULL;
			}
			buf = nb;
		}
		n = fread(buf + len, 1, cap - len - 1, f);
		if (n == 0)
			break;
		len += n;
	}
	if (ferror(f)) {
		free(buf);
		fclose(f);
		return NULL;
	}
	fclose(f);
	buf[len] = 0;
	return buf;
}

/* A growing string; oom is set (and appends stop) when memory runs out. */
typedef struct {
	char *p;
	size_t len, cap;
	bool oom;
} tpchq_str;

static void tpchq_put(tpchq_str *s, const char *p, size_t n)
{
	if (s->oom)
		return;
	if (s->len + n + 1 > s->cap) {
		size_t cap = s->cap ? s->cap : 256;
		while (s->len + n + 1 > cap)
			cap *= 2;
		char *np = realloc(s->p, cap);
		if (!np) {
			s->oom = true;
			return;
		}
		s->p = np;
		s->cap = cap;
	}
	memcpy(s->p + s->len, p, n);
	s->len += n;
	s->p[s->len] = 0;
}

static void tpchq_puts(tpchq_str *s, const char *p)
{
	tpchq_put(s, p, strlen(p));
}

static double tpchq_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* ---- SQLite's dialect ---- */

static bool tpchq_word(const char *p, const char *w)
{
	size_t n = strlen(w);
	return !strncasecmp(p, w, n) &&
	       !(isalnum((unsigned char)p[n]) || p[n] == '_');
}

static const char *tpchq_skip_ws(const char *p)
{
	while (isspace((unsigned char)*p))
		p++;
	return p;
}

/* A quoted literal at p ('...' without doubled quotes, as in the
 * queries): its contents into out, the end into *end. */
static bool tpchq_quoted(const char *p, char *out, size_t outlen,
			 const char **end)
{
	const char *q;

	if (*p != '\'')
		return false;
	q = strchr(p + 1, '\'');
	if (!q || (size_t)(q - p - 1) >= outlen)
		return false;
	memcpy(out, p + 1, (size_t)(q - p - 1));
	out[q - p - 1] = 0;
	*end = q + 1;
	return true;
}

/* Copies the text up to the matching close parenthesis or to the word
 * stop at depth 0 (whichever comes first) into out; returns where it
 * stopped. */
static const char *tpchq_until(const char *p, const char *stop, tpchq_str *out)
{
	int depth = 0;
	const char *s = p;

	for (; *p; p++) {
		if (*p == '(')
			depth++;
		else if (*p == ')') {
			if (depth == 0)
				break;
			depth--;
		} else if (depth == 0 && stop && tpchq_word(p, stop) &&
			   (p == s || !isalnum((unsigned char)p[-1])))
			break;
	}
	/* without the blanks around it, for readable rewritten SQL */
	const char *e = p;
	while (s < e && isspace((unsigned char)*s))
		s++;
	while (e > s && isspace((unsigned char)e[-1]))
		e--;
	tpchq_put(out, s, (size_t)(e - s));
	return p;
}

/* A decimal literal at p ("0.06", ".06", "7"): its value times 10^*scale
 * in *v and the end in *end; false when p is not one. */
static bool tpchq_declit(const char *p, long long *v, int *scale,
			 const char **end)
{
	bool digits = false, frac = false;

	*v = 0;
	*scale = 0;
	for (; isdigit((unsigned char)*p) || (*p == '.' && !frac); p++) {
		if (*p == '.') {
			frac = true;
			continue;
		}
		if (*v > 99999999999999LL)
			return false;
		*v = *v * 10 + (*p - '0');
		*scale += frac;
		digits = true;
	}
	*end = p;
	return digits && !isalnum((unsigned char)*p) && *p != '_';
}

/*
 * `A + B` / `A - B` of two decimal literals (Q6's `.06 - 0.01` and
 * `.06 + 0.01`), folded exactly: SQLite computes them in binary
 * (0.06 + 0.01 = 0.06999999999999999) and would drop the rows whose
 * DECIMAL discount is exactly 0.07, which gpmdb (engine/exec/compile.c, exact
 * literal folding) and DuckDB keep.  Only where the previous token is not
 * an arithmetic operator and the next is not * or /, so that precedence
 * cannot change the meaning.
 */
static bool tpchq_fold(const char *sql, const char *p, tpchq_str *o,
		       const char **next)
{
	long long a, b, r;
	int sa, sb, sc;
	const char *e, *q;
	char op, buf[64];

	if (p > sql &&
	    (isalnum((unsigned char)p[-1]) || p[-1] == '_' || p[-1] == '.'))
		return false;
	for (q = p; q > sql && isspace((unsigned char)q[-1]); q--)
		;
	if (q > sql && strchr("+-*/%", q[-1]))
		return false;
	if (!tpchq_declit(p, &a, &sa, &e))
		return false;
	q = tpchq_skip_ws(e);
	if (*q != '+' && *q != '-')
		return false;
	op = *q;
	if (!tpchq_declit(tpchq_skip_ws(q + 1), &b, &sb, &e) || (!sa && !sb))
		return false;
	q = tpchq_skip_ws(e);
	if (*q == '*' || *q == '/' || *q == '%')
		return false;
	sc = sa > sb ? sa : sb;
	for (; sa < sc; sa++)
		a *= 10;
	for (; sb < sc; sb++)
		b *= 10;
	r = op == '+' ? a + b : a - b;
	long long ip = (r < 0 ? -r : r), pw = 1;
	for (int i = 0; i < sc; i++)
		pw *= 10;
	snprintf(buf, sizeof(buf), "%s%lld.%0*lld", r < 0 ? "-" : "", ip / pw,
		 sc, ip % pw);
	tpchq_puts(o, buf);
	*next = e;
	return true;
}

char *tpchq_sqlite_dialect(int q, const char *sql)
{
	tpchq_str o = {0};
	const char *p = sql;
	char lit[64], num[32], unit[16];

	while (*p) {
		const char *e, *a;
		/* date 'D' [+|- interval 'N' unit] */
		if (tpchq_word(p, "date") &&
		    (p == sql || !isalnum((unsigned char)p[-1])) &&
		    tpchq_quoted(tpchq_skip_ws(p + 4), lit, sizeof(lit), &e)) {
			a = tpchq_skip_ws(e);
			if ((*a == '+' || *a == '-') &&
			    tpchq_word(tpchq_skip_ws(a + 1), "interval")) {
				char sign = *a;
				const char *b = tpchq_skip_ws(a + 1) + 8;
				if (!tpchq_quoted(tpchq_skip_ws(b), num,
						  sizeof(num), &b))
					goto fail;
				b = tpchq_skip_ws(b);
				size_t ul = 0;
				while (isalpha((unsigned char)b[ul]) &&
				       ul < sizeof(unit) - 1) {
					unit[ul] = b[ul];
					ul++;
				}
				unit[ul] = 0;
				if (!ul)
					goto fail;
				char buf[160];
				snprintf(buf, sizeof(buf),
					 "date('%s', '%c%s %s')", lit, sign,
					 num, unit);
				tpchq_puts(&o, buf);
				p = b + ul;
			} else {
				tpchq_puts(&o, "'");
				tpchq_puts(&o, lit);
				tpchq_puts(&o, "'");
				p = e;
			}
			continue;
		}
		/* extract(year from X) */
		if (tpchq_word(p, "extract") && *tpchq_skip_ws(p + 7) == '(') {
			a = tpchq_skip_ws(tpchq_skip_ws(p + 7) + 1);
			if (!tpchq_word(a, "year"))
				goto fail;
			a = tpchq_skip_ws(a + 4);
			if (!tpchq_word(a, "from"))
				goto fail;
			tpchq_puts(&o, "CAST(strftime('%Y', ");
			a = tpchq_until(a + 4, NULL, &o);
			if (*a != ')')
				goto fail;
			tpchq_puts(&o, ") AS INTEGER)");
			p = a + 1;
			continue;
		}
		/* substring(X from A for B) */
		if (tpchq_word(p, "substring") &&
		    *tpchq_skip_ws(p + 9) == '(') {
			a = tpchq_skip_ws(p + 9) + 1;
			tpchq_puts(&o, "substr(");
			a = tpchq_until(a, "from", &o);
			if (!tpchq_word(a, "from"))
				goto fail;
			tpchq_puts(&o, ", ");
			a = tpchq_until(a + 4, "for", &o);
			if (!tpchq_word(a, "for"))
				goto fail;
			tpchq_puts(&o, ", ");
			a = tpchq_until(a + 3, NULL, &o);
			if (*a != ')')
				goto fail;
			tpchq_puts(&o, ")");
			p = a + 1;
			continue;
		}
		if ((isdigit((unsigned char)*p) || *p == '.') &&
		    tpchq_fold(sql, p, &o, &e)) {
			p = e;
			continue;
		}
		/* Q13: SQLite has no derived-table column lists. */
		if (q == 13 && !strncmp(p, "count(o_orderkey)", 17)) {
			tpchq_puts(&o, "count(o_orderkey) AS c_count");
			p += 17;
			continue;
		}
		if (q == 13 &&
		    !strncmp(p, "c_orders (c_custkey, c_count)", 29)) {
			tpchq_puts(&o, "c_orders");
			p += 29;
			continue;
		}
		tpchq_put(&o, p, 1);
		p++;
	}
	if (o.oom || !o.p)
		goto fail;
	if (q == 13 && !strstr(o.p, "AS c_count"))
		goto fail;
	return o.p;
fail:
	free(o.p);
	return NULL;
}

/* ---- ORDER BY keys ---- */

const int *tpchq_order_keys(int q)
{
	static const int keys[TPCHQ_N + 1][8] = {
	    [1] = {1, 2, 0},	[2] = {-1, 3, 2, 4, 0},
	    [3] = {-2, 3, 0},	[4] = {1, 0},
	    [5] = {-2, 0},	[6] = {0},
	    [7] = {1, 2, 3, 0}, [8] = {1, 0},
	    [9] = {1, -2, 0},	[10] = {-3, 0},
	    [11] = {-2, 0},	[12] = {1, 0},
	    [13] = {-2, -1, 0}, [14] = {0},
	    [15] = {1, 0},	[16] = {-4, 1, 2, 3, 0},
	    [17] = {0},		[18] = {-5, 4, 0},
	    [19] = {0},		[20] = {1, 0},
	    [21] = {-2, 1, 0},	[22] = {1, 0},
	};
	return keys[q >= 1 && q <= TPCHQ_N ? q : 0];
}

/* ---- results ---- */

tpchq_val *tpchq_row(const tpchq_res *r, long i)
{
	return r->v + i * r->ncols;
}

tpchq_val *tpchq_add_row(tpchq_res *r)
{
	if (r->nrows == r->cap) {
		long cap = r->cap ? r->cap * 2 : 64;
		tpchq_val *nv = realloc(
		    r->v, (size_t)cap * (size_t)(r->ncols ? r->ncols : 1) *
			      sizeof(*nv));
		if (!nv)
			return NULL;
		r->v = nv;
		r->cap = cap;
	}
	tpchq_val *row = tpchq_row(r, r->nrows++);
	memset(row, 0, sizeof(*row) * (size_t)r->ncols);
	return row;
}

void tpchq_res_free(tpchq_res *r)
{
	for (long i = 0; i < r->nrows * r->ncols; i++)
		free(r->v[i].text);
	free(r->v);
	memset(r, 0, sizeof(*r));
}

/* Starts the rows of a statement with nc columns: a second statement
 * with columns replaces the first's (there is only one in TPC-H; more is
 * reported by nselects). */
static void tpchq_new_select(tpchq_res *r, int nc)
{
	if (nc <= 0)
		return;
	r->nselects++;
	if (r->v) {
		char err[sizeof(r->err)];
		memcpy(err, r->err, sizeof(err));
		int ns = r->nselects;
		tpchq_res_free(r);
		r->nselects = ns;
		memcpy(r->err, err, sizeof(err));
	}
	r->ncols = nc;
}

int tpchq_run_gpmdb(gpmdb *db, const char *sql, tpchq_res *r)
{
	const char *tail = sql;
	double t0 = tpchq_now_ms();

	while (*tail) {
		gpmdb_stmt *st = NULL;
		const char *next = NULL;
		int rc = gpmdb_prepare(db, tail, -1, &st, &next);
		if (rc != GPMDB_OK) {
			snprintf(r->err, sizeof(r->err), "prepare: %s",
				 gpmdb_errmsg(db));
			return -1;
		}
		if (!st)
			break;
		tail = next;
		int nc = gpmdb_column_count(st);
		tpchq_new_select(r, nc);
		while ((rc = gpmdb_step(st)) == GPMDB_ROW) {
			tpchq_val *row = tpchq_add_row(r);
			if (!row) {
				snprintf(r->err, sizeof(r->err),
					 "out of memory");
				gpmdb_finalize(st);
				return -1;
			}
			for (int c = 0; c < nc; c++) {
				tpchq_val *v = &row[c];
				int t = gpmdb_column_type(st, c);
				const char *txt =
				    (const char *)gpmdb_column_text(st, c);
				v->type = t == GPMDB_NULL      ? 'N'
					  : t == GPMDB_INTEGER ? 'I'
					  : t == GPMDB_FLOAT   ? 'F'
							       : 'T';
				v->text = strdup(txt ? txt : "");
				if (!v->text) {
					snprintf(r->err, sizeof(r->err),
						 "out of memory");
					gpmdb_finalize(st);
					return -1;
				}
				v->i = gpmdb_column_int64(st, c);
				/* the exact decimal text read as a double */
				v->d = t == GPMDB_FLOAT ? strtod(v->text, NULL)
							: (double)v->i;
			}
		}
		if (rc != GPMDB_DONE) {
			snprintf(r->err, sizeof(r->err), "step: %s",
				 gpmdb_errmsg(db));
			gpmdb_finalize(st);
			return -1;
		}
		gpmdb_finalize(st);
	}
	r->ms = tpchq_now_ms() - t0;
	return 0;
}

int tpchq_run_sqlite(sqlite3 *db, const char *sql, tpchq_res *r)
{
	const char *tail = sql;
	double t0 = tpchq_now_ms();

	while (*tail) {
		sqlite3_stmt *st = NULL;
		const char *next = NULL;
		int rc = sqlite3_prepare_v2(db, tail, -1, &st, &next);
		if (rc != SQLITE_OK) {
			snprintf(r->err, sizeof(r->err), "prepare: %s",
				 sqlite3_errmsg(db));
			return -1;
		}
		if (!st)
			break;
		tail = next;
		int nc = sqlite3_column_count(st);
		tpchq_new_select(r, nc);
		while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
			tpchq_val *row = tpchq_add_row(r);
			if (!row) {
				snprintf(r->err, sizeof(r->err),
					 "out of memory");
				sqlite3_finalize(st);
				return -1;
			}
			for (int c = 0; c < nc; c++) {
				tpchq_val *v = &row[c];
				int t = sqlite3_column_type(st, c);
				const char *txt =
				    (const char *)sqlite3_column_text(st, c);
				v->type = t == SQLITE_NULL	? 'N'
					  : t == SQLITE_INTEGER ? 'I'
					  : t == SQLITE_FLOAT	? 'F'
								: 'T';
				v->text = strdup(txt ? txt : "");
				if (!v->text) {
					snprintf(r->err, sizeof(r->err),
						 "out of memory");
					sqlite3_finalize(st);
					return -1;
				}
				v->i = sqlite3_column_int64(st, c);
				v->d = sqlite3_column_double(st, c);
			}
		}
		if (rc != SQLITE_DONE) {
			snprintf(r->err, sizeof(r->err), "step: %s",
				 sqlite3_errmsg(db));
			sqlite3_finalize(st);
			return -1;
		}
		sqlite3_finalize(st);
	}
	r->ms = tpchq_now_ms() - t0;
	return 0;
}

/* ---- comparison ---- */

/* Order of two values of one engine (NULL first, numbers before text,
 * text by bytes as BINARY collation). */
static int tpchq_cmp_val(const tpchq_val *a, const tpchq_val *b)
{
	int ra = a->type == 'N' ? 0 : a->type == 'T' ? 2 : 1;
	int rb = b->type == 'N' ? 0 : b->type == 'T' ? 2 : 1;

	if (ra != rb)
		return ra < rb ? -1 : 1;
	if (ra == 0)
		return 0;
	if (ra == 2)
		return strcmp(a->text, b->text);
	if (a->type == 'I' && b->type == 'I')
		return a->i < b->i ? -1 : a->i > b->i;
	return a->d < b->d ? -1 : a->d > b->d;
}

/* qsort_r comparison of two rows of the result arg, given by index. */
static int tpchq_cmp_row(const void *x, const void *y, void *arg)
{
	const tpchq_res *r = arg;
	const tpchq_val *a = tpchq_row(r, *(const long *)x),
			*b = tpchq_row(r, *(const long *)y);

	for (int c = 0; c < r->ncols; c++) {
		int k = tpchq_cmp_val(&a[c], &b[c]);
		if (k)
			return k;
	}
	return 0;
}

/* The row indexes of r sorted by all columns (malloc'd; NULL when out of
 * memory): the results are compared as multisets without being changed,
 * so one result can be compared with several others. */
static long *tpchq_sorted(const tpchq_res *r)
{
	long *ix = malloc(sizeof(long) * (size_t)(r->nrows ? r->nrows : 1));

	if (!ix)
		return NULL;
	for (long i = 0; i < r->nrows; i++)
		ix[i] = i;
	if (r->nrows > 1)
		qsort_r(ix, (size_t)r->nrows, sizeof(long), tpchq_cmp_row,
			(void *)r);
	return ix;
}

/* The first row (1-based index of the later one) out of keys' order, or
 * -1 when r is sorted by keys. */
static long tpchq_unsorted_at(const tpchq_res *r, const int *keys)
{
	for (long i = 1; i < r->nrows; i++) {
		const tpchq_val *a = tpchq_row(r, i - 1), *b = tpchq_row(r, i);
		for (int k = 0; keys[k]; k++) {
			int c = abs(keys[k]) - 1;
			if (c >= r->ncols)
				break;
			int d = tpchq_cmp_val(&a[c], &b[c]);
			if (keys[k] < 0)
				d = -d;
			if (d < 0)
				break;
			if (d > 0)
				return i;
		}
	}
	return -1;
}

bool tpchq_match(const tpchq_val *a, const tpchq_val *b)
{
	if (a->type == 'N' || b->type == 'N')
		return a->type == b->type;
	if (a->type == 'T' || b->type == 'T')
		return a->type == b->type && !strcmp(a->text, b->text);
	if (a->type == 'I' && b->type == 'I')
		return a->i == b->i;
	if (round(a->d * 100) == round(b->d * 100))
		return true;
	return fabs(a->d - b->d) < 1e-6;
}

/* Appends to msg (kept NUL-terminated, truncated when full). */
static void tpchq_say(char *msg, size_t len, const char *fmt, ...)
{
	size_t at = strlen(msg);
	va_list ap;

	if (at + 1 >= len)
		return;
	va_start(ap, fmt);
	vsnprintf(msg + at, len - at, fmt, ap);
	va_end(ap);
}

static void tpchq_say_row(char *msg, size_t len, const char *who,
			  const tpchq_res *r, long i)
{
	const tpchq_val *row = tpchq_row(r, i);

	tpchq_say(msg, len, "\n  %s row %ld:", who, i + 1);
	for (int c = 0; c < r->ncols; c++)
		tpchq_say(msg, len, "%s%c:%s", c ? " | " : " ", row[c].type,
			  row[c].type == 'N' ? "NULL" : row[c].text);
}

int tpchq_compare(int q, const char *na, const tpchq_res *a, const char *nb,
		  const tpchq_res *b, char *msg, size_t msglen)
{
	const int *keys = tpchq_order_keys(q);
	int bad = 0;

	msg[0] = 0;
	if (a->nselects != 1 || b->nselects != 1) {
		tpchq_say(msg, msglen,
			  "%d and %d statements returned rows, want 1; ",
			  a->nselects, b->nselects);
		bad++;
	}
	if (a->ncols != b->ncols) {
		tpchq_say(msg, msglen, "%s has %d columns, %s %d; ", na,
			  a->ncols, nb, b->ncols);
		bad++;
	}
	if (a->nrows != b->nrows) {
		tpchq_say(msg, msglen, "%s has %ld rows, %s %ld; ", na,
			  a->nrows, nb, b->nrows);
		bad++;
	}
	if (bad)
		return bad;
	for (int k = 0; k < 2; k++) {
		const char *who = k ? nb : na;
		const tpchq_res *r = k ? b : a;
		long at = tpchq_unsorted_at(r, keys);
		if (at < 0)
			continue;
		tpchq_say(msg, msglen,
			  "%s's rows %ld and %ld are out of ORDER BY order",
			  who, at, at + 1);
		tpchq_say_row(msg, msglen, who, r, at - 1);
		tpchq_say_row(msg, msglen, who, r, at);
		bad++;
	}
	long *ia = tpchq_sorted(a), *ib = tpchq_sorted(b);
	if (!ia || !ib) {
		tpchq_say(msg, msglen, "out of memory");
		free(ia);
		free(ib);
		return bad + 1;
	}
	for (long i = 0; i < a->nrows; i++) {
		const tpchq_val *ar = tpchq_row(a, ia[i]),
				*br = tpchq_row(b, ib[i]);
		for (int c = 0; c < a->ncols; c++) {
			if (tpchq_match(&ar[c], &br[c]))
				continue;
			if (bad++ < 5) {
				tpchq_say(msg, msglen,
					  "%scolumn %d differs (rows sorted):",
					  msg[0] ? "\n" : "", c + 1);
				tpchq_say_row(msg, msglen, na, a, ia[i]);
				tpchq_say_row(msg, msglen, nb, b, ib[i]);
			}
			break;
		}
	}
	free(ia);
	free(ib);
	if (bad > 5)
		tpchq_say(msg, msglen, "\n  ... %d differences in all", bad);
	return bad;
}
