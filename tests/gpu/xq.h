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
