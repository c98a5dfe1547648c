/*
 * test_shell_api.c - what the shell needs from the engine: gpmdb_interrupt
 * (from another thread, and a write's transaction rolled back), the
 * progress handler, the catalog pragmas (table_list, index_list,
 * table_bytes, the statistics), the sqlite_schema view, char(),
 * PRAGMA foreign_keys, and "already exists" at prepare.
 */
#include "harness.h"
#include "sql_util.h"

#include "gpmdb.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static char dir[256];
static char path[300];

/* Every row of a query, values joined by '|', rows by '\n'. */
static char *rows(gpmdb *db, const char *sql)
{
	static char buf[4096];

	return su_rows(db, sql, buf, sizeof(buf));
}

/* A table of 100k rows; big x big with a filter that keeps nothing is
 * 10^10 pairs: minutes of work, little memory. */
static void make_big(gpmdb *db)
{
	CHECK_RC(su_exec(db, "CREATE TABLE n(x INT);"
			     "INSERT INTO n VALUES (0),(1),(2),(3),(4),(5),"
			     "(6),(7),(8),(9);"
			     "CREATE TABLE big AS SELECT a.x*10000+b.x*1000+"
			     "c.x*100+d.x*10+e.x AS x FROM n a, n b, n c, n d, "
			     "n e"),
		 GPMDB_OK);
}

static const char *slow =
    "SELECT count(*) FROM big a, big b WHERE a.x + b.x < 0";

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void *interrupter(void *arg)
{
	usleep(200 * 1000);
	gpmdb_interrupt(arg);
	return NULL;
}

static void test_interrupt_thread(void)
{
	gpmdb *db = su_open(path);
	gpmdb_stmt *st = NULL;
	pthread_t th;
	double t0;

	make_big(db);
	CHECK_RC(gpmdb_prepare(db, slow, -1, &st, NULL), GPMDB_OK);
	t0 = now();
	pthread_create(&th, NULL, interrupter, db);
	CHECK_RC(gpmdb_step(st), GPMDB_INTERRUPT);
	pthread_join(th, NULL);
	CHECKF(now() - t0 < 5, "took %.1f s to stop", now() - t0);
	CHECK(!strcmp(gpmdb_errmsg(db), "interrupted"));
	gpmdb_finalize(st);
	/* the interrupt was for that statement only */
	CHECK(!strcmp(rows(db, "SELECT count(*) FROM big"), "100000\n"));
	/* one that came while nothing ran is forgotten */
	gpmdb_interrupt(db);
	CHECK(!strcmp(rows(db, "SELECT count(*) FROM n"), "10\n"));
	gpmdb_close(db);
}

static int calls;
static int stop_after(void *arg)
{
	return ++calls >= *(int *)arg;
}

static void test_progress_and_rollback(void)
{
	gpmdb *db = su_open(path);
	int limit = 1000000000;

	make_big(db);
	/* called while a statement runs; 0 lets it go on */
	calls = 0;
	gpmdb_progress_handler(db, 1, stop_after, &limit);
	CHECK(!strcmp(rows(db, "SELECT count(*) FROM big WHERE x % 7 = 0"),
		      "14286\n"));
	CHECKF(calls > 0, "%d calls", calls);
	/* non-zero stops it: an interrupted write inside BEGIN rolls the
	 * whole transaction back, as SQLite does */
	CHECK_RC(su_exec(db, "CREATE TABLE t(a INT, b INT);"
			     "BEGIN; INSERT INTO t VALUES (1, 1)"),
		 GPMDB_OK);
	calls = 0;
	limit = 50;
	char *err = NULL;
	CHECK_RC(
	    gpmdb_exec(db,
		       "INSERT INTO t SELECT count(*), 2 FROM big a, big b "
		       "WHERE a.x + b.x < 0",
		       NULL, NULL, &err),
	    GPMDB_INTERRUPT);
	CHECK(err && !strcmp(err, "interrupted"));
	gpmdb_free(err);
	CHECK_RC(calls, 50);
	gpmdb_progress_handler(db, 0, NULL, NULL);
	CHECK(!strcmp(rows(db, "COMMIT"),
		      "<error: cannot commit - no transaction is active>"));
	CHECK(!strcmp(rows(db, "SELECT count(*) FROM t"), "0\n"));
	/* outside BEGIN the statement's own transaction is rolled back */
	calls = 0;
	limit = 50;
	gpmdb_progress_handler(db, 1, stop_after, &limit);
	CHECK_RC(gpmdb_exec(db,
			    "INSERT INTO t SELECT a.x, b.x FROM big a, big b "
			    "WHERE a.x + b.x < 0 OR a.x < 3",
			    NULL, NULL, NULL),
		 GPMDB_INTERRUPT);
	gpmdb_progress_handler(db, 0, NULL, NULL);
	CHECK(!strcmp(rows(db, "SELECT count(*) FROM t"), "0\n"));
	CHECK(!strcmp(rows(db, "PRAGMA integrity_check"), "ok\n"));
	gpmdb_close(db);
}

static void test_catalog(void)
{
	gpmdb *db = su_open(path);

	CHECK(!strcmp(rows(db, "SELECT * FROM sqlite_schema"), ""));
	CHECK_RC(su_exec(db,
			 "CREATE TABLE t1(a INTEGER PRIMARY KEY, b TEXT);"
			 "CREATE UNIQUE INDEX i1 ON t1(b);"
			 "CREATE INDEX i2 ON t1(a, b);"
			 "CREATE VIEW v1 AS SELECT a, b, a + 1 AS c FROM t1;"
			 "CREATE TABLE \"it's\"(x);"
			 "INSERT INTO t1 VALUES (1, 'x'), (2, 'y'), (3, 'z')"),
		 GPMDB_OK);
	CHECK(!strcmp(rows(db, "PRAGMA table_list"),
		      "main|t1|table|2\nmain|v1|view|3\nmain|it's|table|1\n"));
	/* the PRIMARY KEY's index first; bytes are extents (positive) */
	CHECK(!strncmp(rows(db, "PRAGMA index_list(t1)"),
		       "0|sqlite_autoindex_t1_1|1|pk|0|", 31));
	CHECK(strstr(rows(db, "PRAGMA index_list(t1)"), "\n1|i1|1|c|0|") &&
	      strstr(rows(db, "PRAGMA index_list(t1)"), "\n2|i2|0|c|0|"));
	CHECK(!strcmp(rows(db, "PRAGMA index_list(v1)"), ""));
	CHECK(!strcmp(rows(db, "PRAGMA table_info(v1)"),
		      "0|a|INTEGER|0|NULL|0\n1|b|TEXT|0|NULL|0\n"
		      "2|c|INTEGER|0|NULL|0\n"));
	CHECK(!strcmp(rows(db, "PRAGMA table_info(t1)"),
		      "0|a|INTEGER|1|NULL|1\n1|b|TEXT|0|NULL|0\n"));
	CHECK(!strcmp(rows(db, "PRAGMA index_list(nosuch)"),
		      "<error: no such table: nosuch>"));
	CHECK(!strcmp(
	    rows(db, "SELECT type, name, tbl_name, sql FROM sqlite_master"),
	    "table|t1|t1|CREATE TABLE t1(a INTEGER PRIMARY KEY, b TEXT)\n"
	    /* the PRIMARY KEY's index, without SQL (NULL) as SQLite lists
	     * its automatic indexes (an INTEGER PRIMARY KEY has one here) */
	    "index|sqlite_autoindex_t1_1|t1|NULL\n"
	    "index|i1|t1|CREATE UNIQUE INDEX i1 ON t1(b)\n"
	    "index|i2|t1|CREATE INDEX i2 ON t1(a, b)\n"
	    "view|v1|v1|CREATE VIEW v1 AS SELECT a, b, a + 1 AS c FROM t1\n"
	    "table|it's|it's|CREATE TABLE \"it's\"(x)\n"));
	CHECK(!strcmp(rows(db, "SELECT count(*) FROM gpmdb_schema s "
			       "WHERE s.type = 'index'"),
		      "3\n"));
	/* a real table of that name comes first */
	CHECK_RC(su_exec(db, "CREATE TABLE sqlite_master(z)"), GPMDB_OK);
	CHECK(!strcmp(rows(db, "SELECT count(*) FROM sqlite_master"), "0\n"));

	/* statistics */
	long long bytes = atoll(rows(db, "PRAGMA table_bytes(t1)"));
	long long used = atoll(rows(db, "PRAGMA pool_used"));
	long long size = atoll(rows(db, "PRAGMA pool_size"));
	CHECKF(bytes > 0 && bytes < used && used <= size,
	       "table %lld, used %lld, size %lld", bytes, used, size);
	CHECK(!strcmp(rows(db, "PRAGMA table_bytes(v1)"),
		      "<error: no such table: v1>"));
	CHECK(!strcmp(rows(db, "SELECT a FROM t1 WHERE a > 1"), "2\n3\n"));
	CHECK(!strcmp(rows(db, "PRAGMA last_rows"), "2\n"));
	CHECK(!strcmp(rows(db, "PRAGMA last_rows"), "2\n")); /* not itself */
	CHECK_RC(su_exec(db, "UPDATE t1 SET b = b || '!'"), GPMDB_OK);
	CHECK(!strcmp(rows(db, "PRAGMA last_rows"), "3\n"));
	/* durability off persists nothing */
	CHECK(!strcmp(rows(db, "PRAGMA last_bytes_persisted"), "0\n"));
	CHECK(strlen(rows(db, "PRAGMA gpu")) > 1);
	CHECKF(atoll(rows(db, "PRAGMA gpu_memory")) >= 0, "%s",
	       rows(db, "PRAGMA gpu_memory"));
	CHECK(!strcmp(rows(db, "PRAGMA pool_size = 5"),
		      "<error: PRAGMA pool_size is read-only>"));
	gpmdb_close(db);

	/* msync persists every write: the last transaction's bytes */
	gpmdb_options o = {.durability = "msync"};
	unlink(path);
	CHECK_RC(gpmdb_open_v2(path, &db,
			       GPMDB_OPEN_READWRITE | GPMDB_OPEN_CREATE, &o),
		 GPMDB_OK);
	CHECK_RC(su_exec(db, "CREATE TABLE t(a TEXT);"
			     "INSERT INTO t VALUES ('x'), ('y')"),
		 GPMDB_OK);
	CHECKF(atoll(rows(db, "PRAGMA last_bytes_persisted")) > 0, "%s",
	       rows(db, "PRAGMA last_bytes_persisted"));
	CHECK(!strcmp(rows(db, "PRAGMA durability"), "msync\n"));
	gpmdb_close(db);
}

static void test_dump_support(void)
{
	gpmdb *db = su_open(path);

	/* what .dump writes for text with line breaks */
	CHECK(!strcmp(rows(db, "SELECT replace('a\\nb', '\\n', char(10)) = "
			       "'a' || char(10) || 'b', char(), char(72, 105),"
			       " length(char(233, 8364, 128512))"),
		      "1||Hi|3\n"));
	CHECK_RC(su_exec(db, "CREATE TABLE t(a INT)"), GPMDB_OK);
	CHECK(!strcmp(rows(db, "SELECT char(a) FROM t"),
		      "<error: char() of anything but integer literals is not "
		      "supported yet>"));
	/* .dump scripts start with it; there are no foreign keys */
	CHECK_RC(su_exec(db, "PRAGMA foreign_keys=OFF"), GPMDB_OK);
	CHECK(!strcmp(rows(db, "PRAGMA foreign_keys"), "0\n"));
	CHECK(!strcmp(rows(db, "PRAGMA foreign_keys = ON"),
		      "<error: foreign keys are not supported (PRAGMA "
		      "foreign_keys can only be OFF)>"));
	/* as in SQLite, CREATE of a taken name fails at prepare */
	gpmdb_stmt *st = NULL;
	CHECK_RC(gpmdb_prepare(db, "CREATE TABLE t(b INT)", -1, &st, NULL),
		 GPMDB_ERROR);
	CHECK(!strcmp(gpmdb_errmsg(db), "table t already exists"));
	CHECK_RC(gpmdb_prepare(db, "CREATE VIEW t AS SELECT 1", -1, &st, NULL),
		 GPMDB_ERROR);
	CHECK(!strcmp(gpmdb_errmsg(db), "there is already a table named t"));
	CHECK_RC(gpmdb_prepare(db, "CREATE TABLE IF NOT EXISTS t(b INT)", -1,
			       &st, NULL),
		 GPMDB_OK);
	gpmdb_finalize(st);
	gpmdb_close(db);
}

int main(void)
{
	if (su_tmp_make(dir, sizeof(dir), path, sizeof(path), "test_shell_api",
			"shell.gpmdb"))
		return 1;
	TEST_RUN(test_interrupt_thread);
	TEST_RUN(test_progress_and_rollback);
	TEST_RUN(test_catalog);
	TEST_RUN(test_dump_support);
	su_tmp_remove(dir, path);
	TEST_MAIN_END();
}
