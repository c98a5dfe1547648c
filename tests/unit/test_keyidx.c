/*
 * test_keyidx.c - the PRIMARY KEY / UNIQUE checks through the indexes in
 * the pool (storage/index.c): duplicates inside one statement or batch and
 * against existing rows, keys freed by DELETE and UPDATE, keys swapped by one
 * UPDATE, transactions and statements rolled back (the index must forget
 * what they did), NULLs, composite and TEXT keys, unique indexes created
 * and dropped, a reopened database, and a long loop of single-row
 * INSERTs (the case the index exists for).
 */
#include "harness.h"
#include "sql_util.h"

#include "gpmdb.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char path[300];

#define CHECK_SCALAR(db, sql, want)                                            \
	do {                                                                   \
		const char *got_ = su_scalar(db, sql);                         \
		CHECKF(!strcmp(got_, want), "%s: got '%s', want '%s'", sql,    \
		       got_, want);                                            \
	} while (0)

#define CHECK_MSG(db, part)                                                    \
	CHECKF(strstr(gpmdb_errmsg(db), part), "message '%s' lacks '%s'",      \
	       gpmdb_errmsg(db), part)

#define OK(db, sql)                                                            \
	CHECKF(su_exec(db, sql) == GPMDB_OK, "%s: %s", sql, gpmdb_errmsg(db))

/* sql fails with a UNIQUE violation naming part. */
#define DUP(db, sql, part)                                                     \
	do {                                                                   \
		CHECKF(su_exec(db, sql) == GPMDB_CONSTRAINT,                   \
		       "%s: should fail (%s)", sql, gpmdb_errmsg(db));         \
		CHECK_MSG(db, part);                                           \
	} while (0)

static gpmdb *fresh(void)
{
	return su_open(path); /* removes the old pool */
}

static gpmdb *reopen(void)
{
	gpmdb *db = NULL;
	gpmdb_options o = {.durability = "off"};

	CHECK_RC(gpmdb_open_v2(path, &db, GPMDB_OPEN_READWRITE, &o), GPMDB_OK);
	return db;
}

static gpmdb_stmt *prep(gpmdb *db, const char *sql)
{
	gpmdb_stmt *st = NULL;

	CHECK_RC(gpmdb_prepare(db, sql, -1, &st, NULL), GPMDB_OK);
	return st;
}

static void test_duplicates(void)
{
	gpmdb *db = fresh();

	OK(db, "CREATE TABLE t(id INTEGER PRIMARY KEY, u TEXT UNIQUE, v INT)");
	OK(db, "INSERT INTO t VALUES (1, 'a', 10), (2, 'b', 20)");
	/* within one statement, against existing rows, on either key */
	DUP(db, "INSERT INTO t VALUES (3, 'c', 0), (3, 'd', 0)",
	    "UNIQUE constraint failed: t.id");
	DUP(db, "INSERT INTO t VALUES (4, 'a', 0)",
	    "UNIQUE constraint failed: t.u");
	DUP(db, "INSERT INTO t VALUES (2, 'z', 0)",
	    "UNIQUE constraint failed: t.id");
	CHECK_SCALAR(db, "SELECT count(*) FROM t", "2");
	/* the failed statements left nothing in the index either */
	OK(db, "INSERT INTO t VALUES (3, 'c', 30)");
	OK(db, "INSERT INTO t VALUES (4, 'd', 40)");
	/* a batch: the lowest offending parameter row is named */
	int64_t id[6] = {10, 11, 12, 13, 14, 15};
	const char *u[6] = {"k", "l", "m", "n", "o", "p"};
	gpmdb_stmt *st = prep(db, "INSERT INTO t VALUES (?, ?, 0)");
	CHECK_RC(gpmdb_bind_array_int64(st, 1, id, 6, NULL), GPMDB_OK);
	CHECK_RC(gpmdb_bind_array_text(st, 2, u, 6, NULL), GPMDB_OK);
	id[4] = 11; /* id: row 4 */
	u[3] = "a"; /* u: row 3, lower */
	CHECK_RC(gpmdb_step(st), GPMDB_CONSTRAINT);
	CHECK_MSG(
	    db, "UNIQUE constraint failed: t.u (t.u = 'a') (parameter row 3)");
	u[3] = "n";
	gpmdb_reset(st);
	CHECK_RC(gpmdb_step(st), GPMDB_CONSTRAINT);
	CHECK_MSG(
	    db, "UNIQUE constraint failed: t.id (t.id = 11) (parameter row 4)");
	id[4] = 14;
	gpmdb_reset(st);
	CHECK_RC(gpmdb_step(st), GPMDB_DONE);
	gpmdb_finalize(st);
	CHECK_SCALAR(db, "SELECT count(*) FROM t", "10");
	DUP(db, "INSERT INTO t VALUES (15, 'q', 0)", "t.id");
	DUP(db, "INSERT INTO t VALUES (16, 'p', 0)", "t.u");
	gpmdb_close(db);
}

static void test_delete_update(void)
{
	gpmdb *db = fresh();

	OK(db, "CREATE TABLE t(id INTEGER PRIMARY KEY, u INT UNIQUE)");
	OK(db, "INSERT INTO t VALUES (1, 100), (2, 200), (3, 300)");
	DUP(db, "INSERT INTO t VALUES (2, 0)", "t.id");
	/* a deleted row's keys are free again, once */
	OK(db, "DELETE FROM t WHERE id = 2");
	OK(db, "INSERT INTO t VALUES (2, 200)");
	DUP(db, "INSERT INTO t VALUES (2, 201)", "t.id");
	DUP(db, "INSERT INTO t VALUES (9, 200)", "t.u");
	/* an UPDATE frees the old key and takes the new one */
	OK(db, "UPDATE t SET id = 20 WHERE id = 2");
	OK(db, "INSERT INTO t VALUES (2, 222)");
	DUP(db, "INSERT INTO t VALUES (20, 0)", "t.id");
	/* onto an existing key: fails, nothing changes */
	DUP(db, "UPDATE t SET u = 100 WHERE id = 3",
	    "UNIQUE constraint failed: t.u");
	CHECK_SCALAR(db, "SELECT u FROM t WHERE id = 3", "300");
	DUP(db, "INSERT INTO t VALUES (30, 300)", "t.u");
	OK(db, "INSERT INTO t VALUES (30, 301)");
	/* two rows swap keys in one statement: the table as it will be is
	 * unique (docs/engine.md) */
	OK(db, "UPDATE t SET id = 4 - id WHERE id IN (1, 3)");
	CHECK_SCALAR(db, "SELECT u FROM t WHERE id = 1", "300");
	CHECK_SCALAR(db, "SELECT u FROM t WHERE id = 3", "100");
	DUP(db, "INSERT INTO t VALUES (1, 0)", "t.id");
	DUP(db, "INSERT INTO t VALUES (3, 0)", "t.id");
	/* a key moved to a value another updated row leaves */
	OK(db, "UPDATE t SET u = u + 1 WHERE id IN (20, 2)");
	CHECK_SCALAR(db, "SELECT u FROM t WHERE id = 20", "201");
	/* two updated rows onto one key */
	DUP(db, "UPDATE t SET u = 5 WHERE id IN (1, 3)", "t.u");
	/* a batch UPDATE that swaps unique values between rows by key */
	int64_t ids[2] = {1, 3};
	int64_t us[2] = {100, 300};
	gpmdb_stmt *st = prep(db, "UPDATE t SET u = ? WHERE id = ?");
	CHECK_RC(gpmdb_bind_array_int64(st, 1, us, 2, NULL), GPMDB_OK);
	CHECK_RC(gpmdb_bind_array_int64(st, 2, ids, 2, NULL), GPMDB_OK);
	CHECK_RC(gpmdb_step(st), GPMDB_DONE);
	CHECK_SCALAR(db, "SELECT u FROM t WHERE id = 3", "300");
	DUP(db, "INSERT INTO t VALUES (99, 100)", "t.u");
	/* and one that collides: the parameter row is named */
	us[0] = 223; /* row 2 has it */
	gpmdb_reset(st);
	CHECK_RC(gpmdb_step(st), GPMDB_CONSTRAINT);
	CHECK_MSG(
	    db, "UNIQUE constraint failed: t.u (t.u = 223) (parameter row 0)");
	gpmdb_finalize(st);
	CHECK_SCALAR(db, "SELECT u FROM t WHERE id = 1", "100");
	/* a batch DELETE frees keys too */
	st = prep(db, "DELETE FROM t WHERE id = ?");
	CHECK_RC(gpmdb_bind_array_int64(st, 1, ids, 2, NULL), GPMDB_OK);
	CHECK_RC(gpmdb_step(st), GPMDB_DONE);
	gpmdb_finalize(st);
	OK(db, "INSERT INTO t VALUES (1, 100), (3, 300)");
	CHECK_SCALAR(db, "SELECT count(*) FROM t", "5");
	gpmdb_close(db);
}

static void test_rollback(void)
{
	gpmdb *db = fresh();

	OK(db, "CREATE TABLE t(id INTEGER PRIMARY KEY, u INT UNIQUE)");
	OK(db, "INSERT INTO t VALUES (1, 10), (2, 20), (3, 30)");
	/* inserted, rolled back: the key is free */
	OK(db, "BEGIN");
	OK(db, "INSERT INTO t VALUES (4, 40)");
	DUP(db, "INSERT INTO t VALUES (4, 41)", "t.id");
	OK(db, "ROLLBACK");
	OK(db, "INSERT INTO t VALUES (4, 40)");
	/* deleted, rolled back: taken again */
	OK(db, "BEGIN");
	OK(db, "DELETE FROM t WHERE id = 2");
	OK(db, "INSERT INTO t VALUES (2, 20)");
	OK(db, "ROLLBACK");
	DUP(db, "INSERT INTO t VALUES (2, 21)", "t.id");
	DUP(db, "INSERT INTO t VALUES (5, 20)", "t.u");
	/* updated, rolled back: the old key is taken, the new one free */
	OK(db, "BEGIN");
	OK(db, "UPDATE t SET u = 99 WHERE id = 3");
	OK(db, "INSERT INTO t VALUES (5, 30)");
	OK(db, "ROLLBACK");
	DUP(db, "INSERT INTO t VALUES (5, 30)", "t.u");
	OK(db, "INSERT INTO t VALUES (5, 99)");
	/* statement-level rollback inside BEGIN: the failed statement's
	 * rows are gone, the earlier statement's stay */
	OK(db, "BEGIN");
	OK(db, "INSERT INTO t VALUES (6, 60)");
	DUP(db, "INSERT INTO t VALUES (7, 70), (6, 61)", "t.id");
	OK(db, "INSERT INTO t VALUES (7, 70)");
	DUP(db, "INSERT INTO t VALUES (8, 60)", "t.u");
	OK(db, "COMMIT");
	CHECK_SCALAR(db, "SELECT count(*) FROM t", "7");
	/* a row-wise batch that fails at row 2 after rows 0 and 1 went in
	 * (an expression over a parameter runs row by row) */
	int64_t id[3] = {10, 11, 10};
	gpmdb_stmt *st = prep(db, "INSERT INTO t VALUES (? + 0, NULL)");
	CHECK_RC(gpmdb_bind_array_int64(st, 1, id, 3, NULL), GPMDB_OK);
	CHECK_RC(gpmdb_step(st), GPMDB_CONSTRAINT);
	CHECK_MSG(db, "(parameter row 2)");
	CHECK_SCALAR(db, "SELECT count(*) FROM t", "7");
	OK(db, "INSERT INTO t VALUES (10, 100), (11, 110)");
	/* the same inside BEGIN, then the whole transaction rolled back */
	OK(db, "BEGIN");
	id[0] = 12;
	id[1] = 13;
	id[2] = 12;
	gpmdb_reset(st);
	CHECK_RC(gpmdb_step(st), GPMDB_CONSTRAINT);
	id[2] = 14;
	gpmdb_reset(st);
	CHECK_RC(gpmdb_step(st), GPMDB_DONE);
	DUP(db, "INSERT INTO t VALUES (14, NULL)", "t.id");
	OK(db, "ROLLBACK");
	gpmdb_reset(st);
	CHECK_RC(gpmdb_step(st), GPMDB_DONE);
	gpmdb_finalize(st);
	CHECK_SCALAR(db, "SELECT count(*) FROM t", "12");
	/* columnar append: a duplicate fails whole, inside BEGIN too */
	int64_t a[3] = {20, 21, 1};
	gpmdb_column_array col = {GPMDB_ARRAY_INT64, a, NULL};
	const char *names[1] = {"id"};
	CHECK_RC(gpmdb_append_columns(db, "t", 1, names, &col, 3),
		 GPMDB_CONSTRAINT);
	CHECK_MSG(db, "UNIQUE constraint failed: t.id (t.id = 1) (row 2)");
	OK(db, "BEGIN");
	a[2] = 22;
	CHECK_RC(gpmdb_append_columns(db, "t", 1, names, &col, 3), GPMDB_OK);
	CHECK_RC(gpmdb_append_columns(db, "t", 1, names, &col, 3),
		 GPMDB_CONSTRAINT);
	OK(db, "ROLLBACK");
	CHECK_RC(gpmdb_append_columns(db, "t", 1, names, &col, 3), GPMDB_OK);
	CHECK_SCALAR(db, "SELECT count(*) FROM t", "15");
	/* after reopening, the index is built from the table */
	gpmdb_close(db);
	db = reopen();
	/* the first use builds the index after this transaction's DELETE:
	 * its rollback must not leave the key free */
	OK(db, "BEGIN");
	OK(db, "DELETE FROM t WHERE id = 22");
	OK(db, "INSERT INTO t VALUES (22, NULL)");
	OK(db, "ROLLBACK");
	DUP(db, "INSERT INTO t VALUES (22, NULL)", "t.id");
	gpmdb_close(db);
	db = reopen();
	OK(db, "BEGIN");
	OK(db, "UPDATE t SET u = 77 WHERE id = 5");
	OK(db, "INSERT INTO t VALUES (24, 99)"); /* 5's old value */
	OK(db, "ROLLBACK");
	DUP(db, "INSERT INTO t VALUES (24, 99)", "t.u");
	gpmdb_close(db);
	db = reopen();
	DUP(db, "INSERT INTO t VALUES (22, NULL)", "t.id");
	DUP(db, "INSERT INTO t VALUES (50, 99)", "t.u");
	OK(db, "INSERT INTO t VALUES (23, NULL)");
	gpmdb_close(db);
}

static void test_nulls_composite_text(void)
{
	gpmdb *db = fresh();

	/* NULLs never conflict, in a column or a part of a composite key */
	OK(db, "CREATE TABLE n(a INT UNIQUE, b TEXT, c INT, UNIQUE(b, c))");
	OK(db, "INSERT INTO n VALUES (NULL, 'x', NULL), (NULL, 'x', NULL)");
	OK(db, "INSERT INTO n VALUES (NULL, NULL, 1), (NULL, NULL, 1)");
	OK(db, "INSERT INTO n VALUES (1, 'x', 1), (2, 'x', 2), (3, 'y', 1)");
	DUP(db, "INSERT INTO n VALUES (4, 'x', 2)",
	    "UNIQUE constraint failed: n.b, n.c");
	DUP(db, "INSERT INTO n VALUES (1, 'z', 9)", "n.a");
	OK(db, "UPDATE n SET a = NULL WHERE a = 1");
	OK(db, "INSERT INTO n VALUES (1, 'z', 9)");
	CHECK_SCALAR(db, "SELECT count(*) FROM n", "8");
	/* composite PRIMARY KEY of INT and TEXT */
	OK(db, "CREATE TABLE c(k INT, s TEXT, v REAL, PRIMARY KEY(k, s))");
	OK(db, "INSERT INTO c VALUES (1, 'a', 0.5), (1, 'b', 1), (2, 'a', 2)");
	DUP(db, "INSERT INTO c VALUES (1, 'a', 9)",
	    "UNIQUE constraint failed: c.k, c.s");
	OK(db, "INSERT INTO c VALUES (1, 'ab', 9), (11, 'b', 9)");
	OK(db, "UPDATE c SET s = 'c' WHERE k = 1 AND s = 'a'");
	OK(db, "INSERT INTO c VALUES (1, 'a', 3)");
	DUP(db, "UPDATE c SET k = 2 WHERE s = 'a' AND k = 1", "c.k, c.s");
	/* TEXT keys: case and length matter, '' is a value */
	OK(db, "CREATE TABLE s(name TEXT PRIMARY KEY)");
	OK(db, "INSERT INTO s VALUES ('abc'), ('ABC'), ('abc '), ('')");
	DUP(db, "INSERT INTO s VALUES ('')", "s.name");
	DUP(db, "INSERT INTO s VALUES ('ABC')", "s.name");
	OK(db, "DELETE FROM s WHERE name = 'ABC'");
	OK(db, "INSERT INTO s VALUES ('ABC')");
	/* REAL keys: -0.0 equals 0.0; integer text converts */
	OK(db, "CREATE TABLE r(x REAL UNIQUE, i INT UNIQUE)");
	OK(db, "INSERT INTO r VALUES (0.0, 1)");
	DUP(db, "INSERT INTO r VALUES (-0.0, 2)", "r.x");
	DUP(db, "INSERT INTO r VALUES (2.5, '1')", "r.i");
	gpmdb_close(db);
}

static void test_schema_changes(void)
{
	gpmdb *db = fresh();

	OK(db, "CREATE TABLE t(a INT, b INT)");
	OK(db, "INSERT INTO t VALUES (1, 1), (2, 1)");
	OK(db, "INSERT INTO t VALUES (1, 2)"); /* no key yet */
	DUP(db, "CREATE UNIQUE INDEX ia ON t(a)", "t.a");
	OK(db, "CREATE UNIQUE INDEX ib ON t(b, a)");
	DUP(db, "INSERT INTO t VALUES (2, 1)", "t.b, t.a");
	OK(db, "DROP INDEX ib");
	OK(db, "INSERT INTO t VALUES (2, 1)");
	/* an index created in a transaction that rolls back */
	OK(db, "CREATE TABLE u(a INT)");
	OK(db, "INSERT INTO u VALUES (1)");
	OK(db, "BEGIN");
	OK(db, "CREATE UNIQUE INDEX iu ON u(a)");
	DUP(db, "INSERT INTO u VALUES (1)", "u.a");
	OK(db, "ROLLBACK");
	OK(db, "INSERT INTO u VALUES (1)");
	/* a table dropped and made again with other keys */
	OK(db, "CREATE TABLE v(a INT PRIMARY KEY)");
	OK(db, "INSERT INTO v VALUES (1)");
	DUP(db, "INSERT INTO v VALUES (1)", "v.a");
	OK(db, "DROP TABLE v");
	OK(db, "CREATE TABLE v(a INT, b INT UNIQUE)");
	OK(db, "INSERT INTO v VALUES (1, 1), (1, 2)");
	DUP(db, "INSERT INTO v VALUES (3, 2)", "v.b");
	/* a transaction that creates a table, fills it and commits */
	OK(db, "BEGIN");
	OK(db, "CREATE TABLE w(a INT PRIMARY KEY)");
	OK(db, "INSERT INTO w VALUES (1)");
	DUP(db, "INSERT INTO w VALUES (1)", "w.a");
	OK(db, "INSERT INTO w VALUES (2)");
	OK(db, "COMMIT");
	DUP(db, "INSERT INTO w VALUES (2)", "w.a");
	gpmdb_close(db);
}

/* The loop SQLite's users write: one prepared single-row INSERT per row
 * (each its own transaction), then errors and rollbacks near the end. */
static void test_loop(void)
{
	gpmdb *db = fresh();
	enum { N = 200000 };
	gpmdb_stmt *st;
	long long sum = 0;

	OK(db, "CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT UNIQUE, "
	       "v INT)");
	st = prep(db, "INSERT INTO t VALUES (?, ?, ?)");
	for (int i = 0; i < N; i++) {
		char name[32];
		long long id = (long long)((i * 7919LL) % N);
		snprintf(name, sizeof(name), "n%lld", id);
		gpmdb_bind_int64(st, 1, id);
		gpmdb_bind_text(st, 2, name, -1);
		gpmdb_bind_int64(st, 3, i);
		int rc = gpmdb_step(st);
		gpmdb_reset(st);
		if (rc != GPMDB_DONE) {
			CHECKF(0, "row %d: %s", i, gpmdb_errmsg(db));
			break;
		}
		sum += id;
		/* now and then a duplicate, which must fail and change
		 * nothing */
		if (i % 20000 == 19999) {
			gpmdb_bind_int64(st, 1, id);
			gpmdb_bind_text(st, 2, "fresh", -1);
			CHECK_RC(gpmdb_step(st), GPMDB_CONSTRAINT);
			gpmdb_reset(st);
		}
	}
	gpmdb_finalize(st);
	CHECK_SCALAR(db, "SELECT count(*) FROM t", "200000");
	char want[32];
	snprintf(want, sizeof(want), "%lld", sum);
	CHECK_SCALAR(db, "SELECT sum(id) FROM t", want);
	DUP(db, "INSERT INTO t VALUES (123, 'x', 0)", "t.id");
	DUP(db, "INSERT INTO t VALUES (-1, 'n77', 0)", "t.name");
	OK(db, "INSERT INTO t VALUES (-1, 'fresh', 0)");
	gpmdb_close(db);
}

int main(void)
{
	const char *base = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";

	snprintf(path, sizeof(path), "%s/test_keyidx.%d.db", base,
		 (int)getpid());
	TEST_RUN(test_duplicates);
	TEST_RUN(test_delete_update);
	TEST_RUN(test_rollback);
	TEST_RUN(test_nulls_composite_text);
	TEST_RUN(test_schema_changes);
	TEST_RUN(test_loop);
	unlink(path);
	TEST_MAIN_END();
}
