/*
 * lite_same.h - comparing gpmdb's rows with SQLite's for the C tests:
 * the rows of a query in SQLite as text, lines sorted (rowsort), and one
 * query in gpmdb on 4 threads and on 1 against SQLite (test_pipe.c,
 * test_spill.c).  Include after harness.h and sql_util.h.
 */
#ifndef GPMDB_TEST_LITE_SAME_H
#define GPMDB_TEST_LITE_SAME_H

#include <omp.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpmdb.h"
#include "harness.h"
#include "sql_util.h"

/* Result buffers: large enough for the tests' rows. */
#define BUF (8u << 20)

/* sql succeeds in gpmdb and in SQLite. */
static inline void lite_both(gpmdb *db, sqlite3 *lite, const char *sql)
{
	char *err = NULL;

	CHECKF(!su_exec(db, sql), "gpmdb: %s", sql);
	CHECKF(sqlite3_exec(lite, sql, NULL, NULL, &err) == SQLITE_OK,
	       "sqlite: %s: %s", sql, err ? err : "?");
	sqlite3_free(err);
}

/* s(id BIGINT) with ids 0 .. 2^k - 1, the first power of two >= n, in
 * both databases, made by doubling (INSERT ... SELECT). */
static inline void lite_seq(gpmdb *db, sqlite3 *lite, long n)
{
	char sql[100];

	lite_both(db, lite, "CREATE TABLE s(id BIGINT)");
	lite_both(db, lite, "INSERT INTO s VALUES(0)");
	for (long k = 1; k < n; k *= 2) {
		snprintf(sql, sizeof(sql),
			 "INSERT INTO s SELECT id + %ld FROM s", k);
		lite_both(db, lite, sql);
	}
}

/* The rows of sql from SQLite, values joined by '|', rows by '\n'. */
static inline char *lite_rows(sqlite3 *lite, const char *sql, char *buf,
			      size_t size)
{
	sqlite3_stmt *st = NULL;
	size_t n = 0;
	int rc;

	buf[0] = 0;
	if (sqlite3_prepare_v2(lite, sql, -1, &st, NULL) != SQLITE_OK) {
		snprintf(buf, size, "<error: %s>", sqlite3_errmsg(lite));
		return buf;
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		for (int i = 0; i < sqlite3_column_count(st); i++) {
			const unsigned char *t = sqlite3_column_text(st, i);
			n += (size_t)snprintf(buf + n, n < size ? size - n : 0,
					      "%s%s", i ? "|" : "",
					      t ? (const char *)t : "NULL");
		}
		n += (size_t)snprintf(buf + n, n < size ? size - n : 0, "\n");
	}
	if (rc != SQLITE_DONE)
		snprintf(buf, size, "<error: %s>", sqlite3_errmsg(lite));
	sqlite3_finalize(st);
	return buf;
}

static inline int line_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* buf's lines sorted in place (rowsort). */
static inline void sort_lines(char *buf)
{
	size_t n = 0, cap = 1024, len = strlen(buf);
	char **v = malloc(cap * sizeof(char *)), *out = malloc(len + 1), *p;

	if (!v || !out) {
		free(v);
		free(out);
		return;
	}
	for (p = buf; *p;) {
		char *nl = strchr(p, '\n');
		if (n == cap) {
			char **nv = realloc(v, (cap *= 2) * sizeof(char *));
			if (!nv)
				break;
			v = nv;
		}
		v[n++] = p;
		if (!nl)
			break;
		*nl = 0;
		p = nl + 1;
	}
	qsort(v, n, sizeof(char *), line_cmp);
	size_t o = 0;
	for (size_t i = 0; i < n; i++)
		o += (size_t)sprintf(out + o, "%s\n", v[i]);
	out[o] = 0;
	memcpy(buf, out, o + 1);
	free(v);
	free(out);
}

/* gsql in gpmdb, on 4 threads and on 1, gives the same rows, and those
 * of lsql in SQLite (in the same order unless !ordered); a difference
 * is shown from its line. */
static inline void same_sql_in(gpmdb *db, sqlite3 *lite, const char *gsql,
			       const char *lsql, bool ordered)
{
	char *a = malloc(BUF), *b = malloc(BUF), *c = malloc(BUF);

	if (!a || !b || !c) {
		CHECK(0);
		goto out;
	}
	omp_set_num_threads(4);
	su_rows(db, gsql, a, BUF);
	omp_set_num_threads(1);
	su_rows(db, gsql, c, BUF);
	omp_set_num_threads(4);
	lite_rows(lite, lsql, b, BUF);
	CHECKF(!strcmp(a, c), "%s: 4 threads and 1 differ", gsql);
	CHECKF(a[0] && a[0] != '<', "%s: %.200s", gsql, a);
	if (!ordered) {
		sort_lines(a);
		sort_lines(b);
	}
	size_t d = 0; /* the first difference, from its line */
	while (a[d] && a[d] == b[d])
		d++;
	while (d && a[d - 1] != '\n')
		d--;
	CHECKF(!strcmp(a, b),
	       "%s: from line at %zu:\n gpmdb %.300s\n sqlite %.300s", gsql, d,
	       a + d, b + d);
out:
	free(a);
	free(b);
	free(c);
}

#endif /* GPMDB_TEST_LITE_SAME_H */
