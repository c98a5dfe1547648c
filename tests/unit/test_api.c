/*
 * test_api.c - the public C API (gpmdb.h): open/close, exec, prepare with
 * tails, parameters, step and column access, result codes and messages,
 * transactions and statement-level rollback.
 */
#include "harness.h"
#include "sql_util.h"

#include "gpmdb.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char dir[256];
static char path[300];

static void test_open_errors(void)
{
	gpmdb *db = NULL;

	CHECK_RC(gpmdb_open_v2("/nonexistent/dir/x.db", &db,
			       GPMDB_OPEN_READWRITE, NULL),
		 GPMDB_CANTOPEN);
	CHECK(db != NULL);
	CHECK(strlen(gpmdb_errmsg(db)) > 0);
	gpmdb_close(db);
	db = NULL;
	gpmdb_options o = {.durability = "bogus"};
	CHECK(gpmdb_open_v2(path, &db, GPMDB_OPEN_CREATE, &o) == GPMDB_MISUSE);
	CHECK(strstr(gpmdb_errmsg(db), "bogus") != NULL);
	gpmdb_close(db);
	CHECK(strcmp(gpmdb_libversion(), GPMDB_VERSION) == 0);
}

static void test_basic(void)
{
	gpmdb *db = su_open(path);
	gpmdb_stmt *st = NULL;

	CHECK_RC(su_exec(db, "CREATE TABLE t(a INTEGER, b TEXT, c REAL);"
			     "INSERT INTO t VALUES (1, 'one', 1.5), "
			     "(2, 'two', NULL), (3, NULL, 3.25)"),
		 GPMDB_OK);
	CHECK(gpmdb_changes(db) == 3);
	CHECK_RC(gpmdb_prepare(db,
			       "SELECT a, b, c, a * 2 AS d FROM t "
			       "WHERE a >= 2 ORDER BY a",
			       -1, &st, NULL),
		 GPMDB_OK);
	CHECK(gpmdb_column_count(st) == 4);
	CHECK(strcmp(gpmdb_column_name(st, 3), "d") == 0);
	CHECK_RC(gpmdb_step(st), GPMDB_ROW);
	CHECK(gpmdb_column_type(st, 0) == GPMDB_INTEGER);
	CHECK(gpmdb_column_int(st, 0) == 2);
	CHECK(strcmp((const char *)gpmdb_column_text(st, 1), "two") == 0);
	CHECK(gpmdb_column_bytes(st, 1) == 3);
	CHECK(gpmdb_column_type(st, 2) == GPMDB_NULL);
	CHECK(gpmdb_column_int64(st, 3) == 4);
	CHECK_RC(gpmdb_step(st), GPMDB_ROW);
	CHECK(gpmdb_column_type(st, 1) == GPMDB_NULL);
	CHECK(gpmdb_column_type(st, 2) == GPMDB_FLOAT);
	CHECK(gpmdb_column_double(st, 2) == 3.25);
	CHECK_RC(gpmdb_step(st), GPMDB_DONE);
	CHECK_RC(gpmdb_reset(st), GPMDB_OK);
	CHECK_RC(gpmdb_step(st), GPMDB_ROW);
	CHECK_RC(gpmdb_finalize(st), GPMDB_OK);
	CHECK(strcmp(su_scalar(db, "SELECT 7 / 2"), "3") == 0);
	CHECK(strcmp(su_scalar(db, "SELECT 1 / 0"), "NULL") == 0);
	CHECK(strcmp(su_scalar(db, "SELECT 7.0 / 2"), "3.5") == 0);
	gpmdb_close(db);
}

static void test_prepare_tail(void)
{
	gpmdb *db = su_open(path);
	gpmdb_stmt *st = NULL;
	const char *sql = "SELECT 1; SELECT 2;  ", *tail = NULL;

	CHECK_RC(gpmdb_prepare(db, sql, -1, &st, &tail), GPMDB_OK);
	CHECK(tail && strncmp(tail, " SELECT 2", 9) == 0);
	gpmdb_finalize(st);
	CHECK_RC(gpmdb_prepare(db, "  -- nothing\n", -1, &st, &tail), GPMDB_OK);
	CHECK(st == NULL);
	gpmdb_close(db);
}

static void test_params(void)
{
	gpmdb *db = su_open(path);
	gpmdb_stmt *st = NULL;

	CHECK_RC(su_exec(db, "CREATE TABLE p(a INTEGER, b TEXT)"), GPMDB_OK);
	CHECK_RC(
	    gpmdb_prepare(db, "INSERT INTO p VALUES (?, ?)", -1, &st, NULL),
	    GPMDB_OK);
	CHECK(gpmdb_bind_parameter_count(st) == 2);
	for (int i = 0; i < 5; i++) {
		char t[16];
		snprintf(t, sizeof(t), "row%d", i);
		CHECK_RC(gpmdb_bind_int(st, 1, i), GPMDB_OK);
		CHECK_RC(gpmdb_bind_text(st, 2, t, -1), GPMDB_OK);
		CHECK_RC(gpmdb_step(st), GPMDB_DONE);
		CHECK_RC(gpmdb_reset(st), GPMDB_OK);
	}
	CHECK_RC(gpmdb_bind_null(st, 1), GPMDB_OK);
	CHECK_RC(gpmdb_bind_double(st, 2, 2.5), GPMDB_OK);
	CHECK_RC(gpmdb_step(st), GPMDB_DONE);
	gpmdb_reset(st);
	CHECK_RC(gpmdb_bind_int(st, 3, 1), GPMDB_RANGE);
	gpmdb_finalize(st);
	CHECK(strcmp(su_scalar(db, "SELECT count(*) FROM p"), "6") == 0);
	CHECK(strcmp(su_scalar(db, "SELECT b FROM p WHERE a IS NULL"), "2.5") ==
	      0);
	CHECK_RC(
	    gpmdb_prepare(db, "SELECT b FROM p WHERE a = ?", -1, &st, NULL),
	    GPMDB_OK);
	CHECK_RC(gpmdb_bind_int64(st, 1, 3), GPMDB_OK);
	CHECK_RC(gpmdb_step(st), GPMDB_ROW);
	CHECK(strcmp((const char *)gpmdb_column_text(st, 0), "row3") == 0);
	gpmdb_finalize(st);
	gpmdb_close(db);
}

static void test_errors(void)
{
	gpmdb *db = su_open(path);
	gpmdb_stmt *st = NULL;
	char *err = NULL;

	CHECK_RC(gpmdb_prepare(db, "SELECT * FORM t", -1, &st, NULL),
		 GPMDB_ERROR);
	CHECK(strcmp(gpmdb_errmsg(db), "near \"FORM\": syntax error") == 0);
	CHECK_RC(gpmdb_prepare(db, "SELECT * FROM t9", -1, &st, NULL),
		 GPMDB_ERROR);
	CHECK(strcmp(gpmdb_errmsg(db), "no such table: t9") == 0);
	CHECK_RC(su_exec(db, "CREATE TABLE t(a INTEGER NOT NULL, b "
			     "INTEGER UNIQUE)"),
		 GPMDB_OK);
	CHECK_RC(gpmdb_prepare(db, "SELECT x FROM t", -1, &st, NULL),
		 GPMDB_ERROR);
	CHECK(strcmp(gpmdb_errmsg(db), "no such column: x") == 0);
	CHECK_RC(gpmdb_prepare(db, "SELECT a FROM t, t AS u", -1, &st, NULL),
		 GPMDB_ERROR);
	CHECK(strcmp(gpmdb_errmsg(db), "ambiguous column name: a") == 0);
	CHECK_RC(gpmdb_prepare(db, "SELECT a FROM t WHERE count(*) > 1", -1,
			       &st, NULL),
		 GPMDB_ERROR);
	CHECK(strcmp(gpmdb_errmsg(db), "misuse of aggregate: count()") == 0);
	CHECK_RC(gpmdb_prepare(db, "SELECT nosuch(1)", -1, &st, NULL),
		 GPMDB_ERROR);
	CHECK(strcmp(gpmdb_errmsg(db), "no such function: nosuch") == 0);
	CHECK_RC(
	    gpmdb_exec(db, "INSERT INTO t VALUES (NULL, 1)", NULL, NULL, &err),
	    GPMDB_CONSTRAINT);
	CHECK(err && strcmp(err, "NOT NULL constraint failed: t.a") == 0);
	gpmdb_free(err);
	CHECK_RC(su_exec(db, "INSERT INTO t VALUES (1, 1)"), GPMDB_OK);
	CHECK_RC(gpmdb_exec(db, "INSERT INTO t VALUES (2, 5), (3, 1)", NULL,
			    NULL, NULL),
		 GPMDB_CONSTRAINT);
	CHECK(strcmp(gpmdb_errmsg(db), "UNIQUE constraint failed: t.b") == 0);
	/* the failing statement applied nothing */
	CHECK(strcmp(su_scalar(db, "SELECT count(*) FROM t"), "1") == 0);
	CHECK_RC(
	    gpmdb_exec(db, "INSERT INTO t VALUES ('abc', 2)", NULL, NULL, NULL),
	    GPMDB_MISMATCH);
	CHECK_RC(su_exec(db, "INSERT INTO t VALUES ('12', 2)"), GPMDB_OK);
	CHECK(strcmp(su_scalar(db, "SELECT a + 1 FROM t WHERE b = 2"), "13") ==
	      0);
	gpmdb_close(db);
}

static void test_txn(void)
{
	gpmdb *db = su_open(path);

	CHECK_RC(su_exec(db, "CREATE TABLE t(a INTEGER PRIMARY KEY)"),
		 GPMDB_OK);
	CHECK_RC(su_exec(db, "BEGIN; INSERT INTO t VALUES (1); INSERT INTO t "
			     "VALUES (2)"),
		 GPMDB_OK);
	/* fails alone: the transaction goes on */
	CHECK_RC(
	    gpmdb_exec(db, "INSERT INTO t VALUES (3), (1)", NULL, NULL, NULL),
	    GPMDB_CONSTRAINT);
	CHECK(strcmp(su_scalar(db, "SELECT count(*) FROM t"), "2") == 0);
	CHECK_RC(su_exec(db, "UPDATE t SET a = a + 10 WHERE a = 2"), GPMDB_OK);
	CHECK(gpmdb_changes(db) == 1);
	CHECK_RC(su_exec(db, "ROLLBACK"), GPMDB_OK);
	CHECK(strcmp(su_scalar(db, "SELECT count(*) FROM t"), "0") == 0);
	CHECK_RC(su_exec(db, "BEGIN; INSERT INTO t VALUES (5); COMMIT"),
		 GPMDB_OK);
	CHECK(strcmp(su_scalar(db, "SELECT sum(a) FROM t"), "5") == 0);
	CHECK_RC(gpmdb_exec(db, "COMMIT", NULL, NULL, NULL), GPMDB_ERROR);
	CHECK(strcmp(gpmdb_errmsg(db),
		     "cannot commit - no transaction is active") == 0);
	CHECK_RC(su_exec(db, "DELETE FROM t"), GPMDB_OK);
	CHECK(gpmdb_changes(db) == 1);
	gpmdb_close(db);
}

static int count_rows(void *arg, int n, char **v, char **names)
{
	(void)n;
	(void)v;
	(void)names;
	(*(int *)arg)++;
	return 0;
}

static void test_exec_callback(void)
{
	gpmdb *db = su_open(path);
	int rows = 0;

	CHECK_RC(gpmdb_exec(db, "SELECT 1 UNION ALL SELECT 2; SELECT 3",
			    count_rows, &rows, NULL),
		 GPMDB_OK);
	CHECK(rows == 3);
	gpmdb_close(db);
}

int main(void)
{
	if (su_tmp_make(dir, sizeof(dir), path, sizeof(path), "test_api",
			"api.gpmdb"))
		return 1;
	TEST_RUN(test_open_errors);
	TEST_RUN(test_basic);
	TEST_RUN(test_prepare_tail);
	TEST_RUN(test_params);
	TEST_RUN(test_errors);
	TEST_RUN(test_txn);
	TEST_RUN(test_exec_callback);
	su_tmp_remove(dir, path);
	TEST_MAIN_END();
}
