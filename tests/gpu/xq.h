/*
 * xq.h - query helpers of the backend tests: a query's rows as text
 * ("a|b\n" per row) or its error, and a comparison that allows a relative
 * difference in REAL fields (floating-point sums: docs/gpu.md).
 */
#ifndef GPMDB_TEST_XQ_H
#define GPMDB_TEST_XQ_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpmdb.h"

/* Rows of sql, or "ERROR: message"; malloc'd. */
static inline char *xq(gpmdb *db, const char *sql)
{
	gpmdb_stmt *st = NULL;
	size_t cap = 256, n = 0;
	char *out = malloc(cap);
	int rc;

	out[0] = 0;
	rc = gpmdb_prepare(db, sql, -1, &st, NULL);
	while (rc == GPMDB_OK && st && (rc = gpmdb_step(st)) == GPMDB_ROW) {
		rc = GPMDB_OK;
		for (int i = 0; i < gpmdb_column_count(st); i++) {
			const char *t = (const char *)gpmdb_column_text(st, i);
			size_t l = strlen(t ? t : "NULL") + 2;
			while (n + l + 1 > cap)
				out = realloc(out, cap *= 2);
			n += (size_t)sprintf(out + n, "%s%s", i ? "|" : "",
					     t ? t : "NULL");
		}
		if (n + 2 > cap)
			out = realloc(out, cap *= 2);
		out[n++] = '\n';
		out[n] = 0;
	}
	if (rc != GPMDB_DONE && rc != GPMDB_OK) {
		free(out);
		const char *m = gpmdb_errmsg(db);
		out = malloc(strlen(m) + 16);
		sprintf(out, "ERROR: %s", m);
	}
	gpmdb_finalize(st);
	return out;
}

/* The rows of sql (or "ERROR: message") must be exactly want: a check
 * of harness.h (CHECKF) at the caller's line. */
#define XQ_WANT(db, sql, want)                                                 \
	do {                                                                   \
		char *xq_r_ = xq((db), (sql));                                 \
		CHECKF(!strcmp(xq_r_, (want)), "%s: %s", (sql), xq_r_);        \
		free(xq_r_);                                                   \
	} while (0)

static inline int xq_exec(gpmdb *db, const char *sql)
{
	char *r = xq(db, sql);
	int bad = !strncmp(r, "ERROR", 5);
	if (bad)
		fprintf(stderr, "# %s: %s\n", sql, r);
	free(r);
	return bad;
}

/*
 * EXPLAIN's column (docs/engine.md "EXPLAIN") of the first operator line
 * whose text ends with node just before the gap of two or more spaces:
 * what follows the gap ("cpu", "gpu (columns from the GPU cache)", "cpu
 * pipeline 2 source [rows=...]"), copied into buf; NULL when no line has
 * it.  For the head of a write's EXPLAIN ANALYZE too ("UPDATE").
 */
static inline const char *xq_explain_col(const char *text, const char *node,
					 char *buf, size_t len)
{
	size_t k = strlen(node);

	for (const char *p = text; p && *p;) {
		const char *nl = strchr(p, '\n');
		const char *end = nl ? nl : p + strlen(p);
		for (const char *q = p; (q = strstr(q, node)) && q + k < end;
		     q++)
			if (q[k] == ' ' && q[k + 1] == ' ') {
				const char *c = q + k;
				while (*c == ' ')
					c++;
				snprintf(buf, len, "%.*s", (int)(end - c), c);
				return buf;
			}
		p = nl ? nl + 1 : NULL;
	}
	return NULL;
}

/* xq_explain_col starts with want */
static inline int xq_explain_has(const char *text, const char *node,
				 const char *want)
{
	char b[1024];
	const char *c = xq_explain_col(text, node, b, sizeof(b));

	return c && !strncmp(c, want, strlen(want));
}

/* xq_explain_col is exactly want */
static inline int xq_explain_is(const char *text, const char *node,
				const char *want)
{
	char b[1024];
	const char *c = xq_explain_col(text, node, b, sizeof(b));

	return c && !strcmp(c, want);
}

/* The operator lines of EXPLAIN text on the GPU and on the CPU: those
 * whose column (after the indent, the text and a gap of two or more
 * spaces) starts with the word gpu or cpu. */
static inline void xq_explain_backends(const char *text, int *ngpu, int *ncpu)
{
	*ngpu = *ncpu = 0;
	for (const char *p = text; p && *p;) {
		const char *nl = strchr(p, '\n');
		const char *end = nl ? nl : p + strlen(p);
		const char *q = p + strspn(p, " ");
		while ((q = strstr(q, "  ")) && q < end) {
			q += strspn(q, " ");
			if (q + 3 <= end && (q[3] == ' ' || q + 3 == end)) {
				if (!strncmp(q, "gpu", 3)) {
					++*ngpu;
					break;
				}
				if (!strncmp(q, "cpu", 3)) {
					++*ncpu;
					break;
				}
			}
		}
		p = nl ? nl + 1 : NULL;
	}
}

/* Equal, or (tol > 0) equal but for numbers within a relative tol. */
static inline int xq_same(const char *a, const char *b, double tol)
{
	if (!strcmp(a, b))
		return 1;
	if (tol <= 0)
		return 0;
	while (*a && *b) {
		size_t la = strcspn(a, "|\n"), lb = strcspn(b, "|\n");
		if (la != lb || strncmp(a, b, la)) {
			char *ea, *eb;
			double x = strtod(a, &ea), y = strtod(b, &eb);
			if (ea != a + la || eb != b + lb ||
			    fabs(x - y) >
				tol * fmax(1.0, fmax(fabs(x), fabs(y))))
				return 0;
		}
		a += la;
		b += lb;
		if (*a != *b)
			return 0;
		if (*a) {
			a++;
			b++;
		}
	}
	return *a == *b;
}

#endif
