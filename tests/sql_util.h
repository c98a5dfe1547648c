/*
 * sql_util.h - SQL helpers shared by the C tests that go through the
 * public API (gpmdb.h): a temporary directory for the test's pool, opening
 * a fresh pool, running SQL that must succeed, and the single value of a
 * one-row query.  Include after harness.h (su_open checks with CHECK_RC).
 * The functions are static inline so that a test may use any subset.
 */
#ifndef GPMDB_TEST_SQL_UTIL_H
#define GPMDB_TEST_SQL_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpmdb.h"
#include "harness.h"

/* Makes the directory $TMPDIR/<name>.XXXXXX (TMPDIR unset or empty:
 * /tmp) into dir and sets path to dir/<file>, the test's pool.  0, or -1
 * when the directory cannot be made.  su_tmp_remove undoes it. */
static inline int su_tmp_make(char *dir, size_t dir_size, char *path,
			      size_t path_size, const char *name,
			      const char *file)
{
	const char *tmp = getenv("TMPDIR");

	snprintf(dir, dir_size, "%s/%s.XXXXXX", tmp && *tmp ? tmp : "/tmp",
		 name);
	if (!mkdtemp(dir))
		return -1;
	snprintf(path, path_size, "%s/%s", dir, file);
	return 0;
}

static inline void su_tmp_remove(const char *dir, const char *path)
{
	char side[4200];

	unlink(path);
	/* the side files a pool leaves while open elsewhere or after a
	 * crash: <db>-shm, <db>-wal */
	snprintf(side, sizeof(side), "%s-shm", path);
	unlink(side);
	snprintf(side, sizeof(side), "%s-wal", path);
	unlink(side);
	rmdir(dir);
}

/* Copies file from to file to (a pool template): 0, or -1 on an error. */
static inline int su_copy_file(const char *from, const char *to)
{
	FILE *a = fopen(from, "rb"), *b = fopen(to, "wb");
	char buf[1 << 16];
	size_t n;
	int rc = 0;

	if (!a || !b)
		rc = -1;
	while (!rc && (n = fread(buf, 1, sizeof(buf), a)) > 0)
		if (fwrite(buf, 1, n, b) != n)
			rc = -1;
	if (a)
		fclose(a);
	if (b && fclose(b))
		rc = -1;
	return rc;
}

/* A new, empty pool at path (a previous one is removed), durability off:
 * these tests are about SQL, durability is tested elsewhere. */
static inline gpmdb *su_open(const char *path)
{
	gpmdb *db = NULL;
	gpmdb_options o = {.durability = "off"};

	unlink(path);
	CHECK_RC(gpmdb_open_v2(path, &db,
			       GPMDB_OPEN_READWRITE | GPMDB_OPEN_CREATE, &o),
		 GPMDB_OK);
	return db;
}

/* gpmdb_exec of sql; the result code, with the message on stderr when it
 * is not GPMDB_OK. */
static inline int su_exec(gpmdb *db, const char *sql)
{
	char *err = NULL;
	int rc = gpmdb_exec(db, sql, NULL, NULL, &err);

	if (rc)
		fprintf(stderr, "exec %s: %s\n", sql, err ? err : "?");
	gpmdb_free(err);
	return rc;
}

/* The single value of a one-row query as text ("NULL" for NULL), or
 * "error: <message>" when it fails or gives no row.  The buffer is
 * static: copy the result before the next call. */
static inline const char *su_scalar(gpmdb *db, const char *sql)
{
	static char buf[512];
	gpmdb_stmt *st = NULL;

	if (gpmdb_prepare(db, sql, -1, &st, NULL) || !st) {
		snprintf(buf, sizeof(buf), "error: %s", gpmdb_errmsg(db));
		return buf;
	}
	if (gpmdb_step(st) == GPMDB_ROW) {
		const unsigned char *t = gpmdb_column_text(st, 0);
		snprintf(buf, sizeof(buf), "%s", t ? (const char *)t : "NULL");
	} else {
		snprintf(buf, sizeof(buf), "error: %s", gpmdb_errmsg(db));
	}
	gpmdb_finalize(st);
	return buf;
}

/* Every row of a query into buf, values joined by '|', rows by '\n';
 * "<error: message>" on an error. */
static inline char *su_rows(gpmdb *db, const char *sql, char *buf, size_t size)
{
	gpmdb_stmt *st = NULL;
	size_t n = 0;
	int rc;

	buf[0] = 0;
	if (gpmdb_prepare(db, sql, -1, &st, NULL) || !st) {
		snprintf(buf, size, "<error: %s>", gpmdb_errmsg(db));
		return buf;
	}
	while ((rc = gpmdb_step(st)) == GPMDB_ROW) {
		for (int i = 0; i < gpmdb_column_count(st); i++) {
			const unsigned char *t = gpmdb_column_text(st, i);
			n += (size_t)snprintf(buf + n, n < size ? size - n : 0,
					      "%s%s", i ? "|" : "",
					      t ? (const char *)t : "NULL");
		}
		n += (size_t)snprintf(buf + n, n < size ? size - n : 0, "\n");
	}
	if (rc != GPMDB_DONE)
		snprintf(buf, size, "<error: %s>", gpmdb_errmsg(db));
	gpmdb_finalize(st);
	return buf;
}

/* Field k of column col's row of PRAGMA storage_info(t)
 * (cid|name|type|encoding|...), "" when there is none; a static buffer. */
static inline const char *su_storage_info(gpmdb *db, const char *t, int col,
					  int k)
{
	static char buf[1 << 16], out[128];
	char q[128];
	const char *p;
	int line = 0;

	snprintf(q, sizeof(q), "PRAGMA storage_info(%s)", t);
	p = su_rows(db, q, buf, sizeof(buf));
	while (p && *p && line < col) {
		p = strchr(p, '\n');
		p = p ? p + 1 : NULL;
		line++;
	}
	for (int i = 0; p && i < k; i++) {
		p = strchr(p, '|');
		p = p ? p + 1 : NULL;
	}
	if (!p)
		return "";
	snprintf(out, sizeof(out), "%.*s", (int)strcspn(p, "|\n"), p);
	return out;
}

#endif /* GPMDB_TEST_SQL_UTIL_H */
