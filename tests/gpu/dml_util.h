/*
 * dml_util.h - helpers of the GPU write tests (test_gpu_dml.c,
 * crash_gpu_dml.c): opening, running SQL, hashing a table's contents.
 */
#ifndef GPMDB_TEST_DML_UTIL_H
#define GPMDB_TEST_DML_UTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gpmdb.h"

static __attribute__((unused)) double du_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* durability: NULL for the file system's default (pmem on tmpfs). */
static __attribute__((unused)) gpmdb *du_open_dur(const char *path,
						  const char *backend,
						  int create,
						  const char *durability)
{
	gpmdb_options o;
	gpmdb *db = NULL;

	memset(&o, 0, sizeof(o));
	o.backend = backend;
	o.durability = durability;
	if (gpmdb_open_v2(path, &db,
			  GPMDB_OPEN_READWRITE |
			      (create ? GPMDB_OPEN_CREATE : 0),
			  &o) != GPMDB_OK) {
		fprintf(stderr, "open %s: %s\n", path, gpmdb_errmsg(db));
		gpmdb_close(db);
		return NULL;
	}
	return db;
}

static __attribute__((unused)) gpmdb *du_open(const char *path,
					      const char *backend, int create)
{
	return du_open_dur(path, backend, create, NULL);
}

static __attribute__((unused)) int du_exec(gpmdb *db, const char *sql)
{
	int rc = gpmdb_exec(db, sql, NULL, NULL, NULL);

	if (rc != GPMDB_OK)
		fprintf(stderr, "%s: %s\n", sql, gpmdb_errmsg(db));
	return rc;
}

/* The first column of the first row of a query as a double (-1 on error). */
static __attribute__((unused)) double du_num(gpmdb *db, const char *sql)
{
	gpmdb_stmt *st = NULL;
	double v = -1;

	if (gpmdb_prepare(db, sql, -1, &st, NULL) == GPMDB_OK &&
	    gpmdb_step(st) == GPMDB_ROW)
		v = gpmdb_column_double(st, 0);
	else
		fprintf(stderr, "%s: %s\n", sql, gpmdb_errmsg(db));
	gpmdb_finalize(st);
	return v;
}

/* The first column of the first row as text, into buf. */
static __attribute__((unused)) const char *du_text(gpmdb *db, const char *sql,
						   char *buf, size_t n)
{
	gpmdb_stmt *st = NULL;

	snprintf(buf, n, "(error)");
	if (gpmdb_prepare(db, sql, -1, &st, NULL) == GPMDB_OK &&
	    gpmdb_step(st) == GPMDB_ROW && gpmdb_column_text(st, 0))
		snprintf(buf, n, "%s", (const char *)gpmdb_column_text(st, 0));
	gpmdb_finalize(st);
	return buf;
}

/* A value of a name/value pragma (gpu_write_stats, recovery_stats). */
static __attribute__((unused)) double du_stat(gpmdb *db, const char *pragma,
					      const char *name)
{
	char sql[128];
	gpmdb_stmt *st = NULL;
	double v = -1;

	snprintf(sql, sizeof(sql), "PRAGMA %s", pragma);
	if (gpmdb_prepare(db, sql, -1, &st, NULL) != GPMDB_OK)
		return -1;
	while (gpmdb_step(st) == GPMDB_ROW)
		if (!strcmp((const char *)gpmdb_column_text(st, 0), name))
			v = gpmdb_column_double(st, 1);
	gpmdb_finalize(st);
	return v;
}

/* FNV-1a over the text of every column of every row of a query, in order. */
static __attribute__((unused)) uint64_t du_hash(gpmdb *db, const char *sql,
						uint64_t *rows)
{
	gpmdb_stmt *st = NULL;
	uint64_t h = 1469598103934665603ull;
	int rc;

	*rows = 0;
	if (gpmdb_prepare(db, sql, -1, &st, NULL) != GPMDB_OK) {
		fprintf(stderr, "%s: %s\n", sql, gpmdb_errmsg(db));
		return 0;
	}
	while ((rc = gpmdb_step(st)) == GPMDB_ROW) {
		int nc = gpmdb_column_count(st);

		for (int c = 0; c < nc; c++) {
			const unsigned char *t = gpmdb_column_text(st, c);
			const char *s = t ? (const char *)t : "\x01NULL";

			for (; *s; s++)
				h = (h ^ (unsigned char)*s) * 1099511628211ull;
			h = (h ^ 0xff) * 1099511628211ull;
		}
		(*rows)++;
	}
	if (rc != GPMDB_DONE)
		fprintf(stderr, "%s: %s\n", sql, gpmdb_errmsg(db));
	gpmdb_finalize(st);
	return h;
}

/* Runs a prepared statement once with the arrays bound (1-based params). */
static __attribute__((unused)) int
du_batch(gpmdb *db, const char *sql, int np, const int64_t *const *i64,
	 const double *const *dbl, const uint8_t *const *nulls, int64_t n)
{
	gpmdb_stmt *st = NULL;
	int rc = gpmdb_prepare(db, sql, -1, &st, NULL);

	for (int i = 0; i < np && rc == GPMDB_OK; i++)
		rc = i64[i] ? gpmdb_bind_array_int64(st, i + 1, i64[i], n,
						     nulls ? nulls[i] : NULL)
			    : gpmdb_bind_array_double(st, i + 1, dbl[i], n,
						      nulls ? nulls[i] : NULL);
	if (rc == GPMDB_OK)
		rc =
		    gpmdb_step(st) == GPMDB_DONE ? GPMDB_OK : gpmdb_errcode(db);
	if (rc != GPMDB_OK)
		fprintf(stderr, "%s: %s\n", sql, gpmdb_errmsg(db));
	gpmdb_finalize(st);
	return rc;
}

#endif
