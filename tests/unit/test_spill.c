/*
 * test_spill.c - spilling under PRAGMA memory_limit (engine/exec/spill.c):
 * GROUP BY with many groups (numbers, text, NULL keys, DISTINCT), hash
 * joins of each kind with NULL keys and ORDER BY (several keys, text,
 * NULLs, DESC, LIMIT/OFFSET) under a small limit give SQLite's rows and
 * those of the run without a limit, on 4 threads and on 1, and EXPLAIN
 * ANALYZE shows that they spilled; NOT IN with NULLs on either side; a
 * result larger than the limit read back from its file (reset and
 * finalize in its middle); a temporary file that cannot be made or
 * written fails the statement with a clear error, and what cannot spill
 * says so.
 */
#include "harness.h"
#include "lite_same.h"
#include "sql_util.h"

#include "gpmdb.h"

#include <omp.h>
#include <pthread.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define NROWS 90000
#define NDIM  120000

static char dir[300], path[400];
static gpmdb *db;
static sqlite3 *lite;

static void both(const char *sql)
{
	lite_both(db, lite, sql);
}

/* f: facts with NULL keys (kn) and text; d: a dimension larger than the
 * limit, its keys sparse, some NULL. */
static void load(void)
{
	char sql[600];

	db = su_open(path);
	CHECK(sqlite3_open(":memory:", &lite) == SQLITE_OK);
	lite_seq(db, lite, NDIM);
	snprintf(sql, sizeof(sql),
		 "CREATE TABLE f AS SELECT id, (id * 31) %% 1500 AS k, CASE "
		 "WHEN id %% 23 = 0 THEN NULL ELSE (id * 31) %% 1500 END AS "
		 "kn, 'g' || ((id * 7919) %% 211) || CASE WHEN id %% 3 <> 0 "
		 "THEN 'x' ELSE 'long text value' END AS g, CAST((id %% 400) "
		 "/ 4.0 AS DECIMAL(12,2)) AS v, CASE WHEN id %% 17 = 0 THEN "
		 "NULL ELSE id %% 100 - 50 END AS n FROM s WHERE id < %d",
		 NROWS);
	both(sql);
	snprintf(sql, sizeof(sql),
		 "CREATE TABLE d AS SELECT CASE WHEN id %% 50 = 7 THEN NULL "
		 "ELSE id * 7 %% 500000 END AS k, 'dimension row ' || id AS "
		 "name, id %% 10 AS w FROM s WHERE id < %d",
		 NDIM);
	both(sql);
	/* SQLite's correlated EXISTS would scan d per row */
	CHECK(sqlite3_exec(lite, "CREATE INDEX dk ON d(k)", NULL, NULL, NULL) ==
	      SQLITE_OK);
	CHECK(!strcmp(su_scalar(db, "SELECT count(*) FROM f"), "90000"));
}

/* EXPLAIN ANALYZE of sql says that a node spilled (loud: shown when
 * not). */
static bool spilled_how(const char *sql, bool loud)
{
	char q[2000], *buf = malloc(BUF);
	bool yes;

	snprintf(q, sizeof(q), "EXPLAIN ANALYZE %s", sql);
	su_rows(db, q, buf, BUF);
	yes = strstr(buf, "spilled") != NULL;
	if (!yes && loud)
		fprintf(stderr, "not spilled: %s\n%.3000s\n", sql, buf);
	free(buf);
	return yes;
}

static bool spilled(const char *sql)
{
	return spilled_how(sql, true);
}

static void limit(int mib)
{
	char sql[100];

	snprintf(sql, sizeof(sql), "PRAGMA memory_limit = %d", mib);
	CHECK(!su_exec(db, sql));
}

/* How spill_same compares: rows in SQLite's order (ORDER BY), rows as
 * sets with the unspilled run's order kept (GROUP BY: groups in the
 * order of their first row), rows as sets (joins: partition order). */
enum { SORTED, SAME_ORDER, ANY_ORDER };

/* sql (compared with lsql in SQLite; NULL: sql, "": not compared) under
 * a limit of mib MiB: it spills on 4 threads and on 1, gives the same
 * rows on both (in the same order) and those of the run without a
 * limit, which did not spill. */
static void spill_same(int mib, const char *sql, const char *lsql, int how)
{
	char *a = malloc(BUF), *b = malloc(BUF), *c = malloc(BUF);

	if (!a || !b || !c) {
		CHECK(0);
		goto out;
	}
	limit(0);
	su_rows(db, sql, a, BUF);
	CHECKF(a[0] && a[0] != '<' && !spilled_how(sql, false),
	       "%s: spilled without a limit: %.200s", sql, a);
	limit(mib);
	omp_set_num_threads(4);
	CHECKF(spilled(sql), "%s: did not spill under %d MiB", sql, mib);
	su_rows(db, sql, b, BUF);
	omp_set_num_threads(1);
	CHECKF(spilled(sql), "%s: did not spill on 1 thread", sql);
	su_rows(db, sql, c, BUF);
	omp_set_num_threads(4);
	CHECKF(!strcmp(b, c), "%s: 4 threads and 1 differ: %.200s / %.200s",
	       sql, b, c);
	if (how == ANY_ORDER) {
		sort_lines(a);
		sort_lines(b);
	}
	CHECKF(b[0] && b[0] != '<' && !strcmp(a, b),
	       "%s: spilled and unlimited differ: %.200s / %.200s", sql, a, b);
	if (!lsql || lsql[0])
		same_sql_in(db, lite, sql, lsql ? lsql : sql, how == SORTED);
	limit(0);
out:
	free(a);
	free(b);
	free(c);
}

static void t_agg(void)
{
	/* numbers and NULL keys; INT and text aggregates: the groups'
	 * states pass the limit, their rows do not */
	spill_same(6,
		   "SELECT id % 20000, count(*), sum(k), min(g), max(n), "
		   "sum(n), min(id), max(kn), count(kn) FROM f GROUP BY 1",
		   NULL, SAME_ORDER);
	spill_same(
	    6,
	    "SELECT CASE WHEN id % 13 = 0 THEN NULL ELSE (id * 7) % 9000 "
	    "END, kn % 3, count(*), sum(n), count(n), max(g), min(k) "
	    "FROM f GROUP BY 1, 2",
	    NULL, SAME_ORDER);
	/* text keys; DECIMAL sums and AVG (not compared with SQLite: its
	 * REAL sums print otherwise) */
	spill_same(6,
		   "SELECT 'key' || (id % 30000), count(*), min(k), max(g), "
		   "sum(n) FROM f GROUP BY 1",
		   NULL, SAME_ORDER);
	spill_same(6,
		   "SELECT id % 20000, sum(v), avg(n), max(v), count(*) FROM f "
		   "GROUP BY 1",
		   "", SAME_ORDER);
	/* the materialising aggregate: DISTINCT over two arguments and
	 * group_concat (its rows in input order: not SQLite's promise) */
	spill_same(
	    6,
	    "SELECT id % 40000, count(DISTINCT n), sum(DISTINCT k) FROM f "
	    "GROUP BY 1",
	    NULL, SAME_ORDER);
	spill_same(
	    6, "SELECT (id * 13) % 20000, group_concat(g) FROM f GROUP BY 1",
	    "", SAME_ORDER);
	/* spilled groups feeding an aggregate */
	spill_same(6,
		   "SELECT count(*), sum(c), sum(s1), sum(s2), sum(s3) FROM "
		   "(SELECT id % 20000, count(*) AS c, sum(k) AS s1, min(g), "
		   "max(n) AS s2, sum(n) AS s3, min(id), max(kn), count(kn) "
		   "FROM f GROUP BY 1) AS t",
		   NULL, SORTED);
}

static void t_join(void)
{
	/* the built side passes the limit; NULL keys on both sides; the
	 * joined rows stream from the file into the aggregate above */
	spill_same(
	    4,
	    "SELECT count(*), sum(f.id), max(d.name), min(d.name) FROM f "
	    "JOIN d ON f.kn = d.k",
	    NULL, SORTED);
	spill_same(4,
		   "SELECT count(*), count(d.name), sum(f.id), max(d.name), "
		   "count(f.kn) FROM f LEFT JOIN d ON f.kn = d.k",
		   NULL, SORTED);
	spill_same(6, "SELECT f.id, f.kn, d.name FROM f JOIN d ON f.kn = d.k",
		   NULL, ANY_ORDER);
	/* a spilled join's rows into a GROUP BY that spills too, whose
	 * partitions pass the limit and split again (spill.c agg_resplit);
	 * groups in the order of the spilled join's rows */
	spill_same(
	    4,
	    "SELECT a.id % 30000, count(*), sum(b.id), max(b.g) FROM f a "
	    "JOIN f b ON a.k = b.k WHERE a.id % 4 = 0 GROUP BY 1",
	    NULL, ANY_ORDER);
	spill_same(
	    6,
	    "SELECT f.id, f.g FROM f WHERE EXISTS (SELECT 1 FROM d WHERE "
	    "d.k = f.kn AND d.w <> f.id % 10)",
	    NULL, ANY_ORDER);
	spill_same(
	    4,
	    "SELECT count(*), sum(id), count(kn) FROM (SELECT id, kn FROM "
	    "f WHERE NOT EXISTS (SELECT 1 FROM d WHERE d.k = f.kn)) AS t",
	    NULL, SORTED);
}

/* A join's partition that alone passes the limit splits again: under
 * GPMDB_TEST_JOIN_ONEPART every row goes to partition 0 first. */
static void t_join_split(void)
{
	setenv("GPMDB_TEST_JOIN_ONEPART", "1", 1);
	t_join();
	spill_same(4,
		   "SELECT count(*), sum(id), count(kn) FROM f WHERE kn NOT IN "
		   "(SELECT k FROM d WHERE k IS NOT NULL AND w <> 3)",
		   NULL, SORTED);
	unsetenv("GPMDB_TEST_JOIN_ONEPART");
}

/* One join key's rows past the limit: splitting cannot part them; they
 * join in pieces when the join is INNER or its right side fits in one
 * piece, else the statement says why it cannot. */
static void t_join_onekey(void)
{
	char a[1000];

	/* INNER: 45000 left rows of one key, one right row */
	spill_same(2,
		   "SELECT count(*), sum(a.id), max(a.g), max(b.name) FROM f a "
		   "JOIN (SELECT k % 1 AS z, max(name) AS name FROM d GROUP BY "
		   "k % 1) b ON a.id % 1 = b.z WHERE a.id % 2 = 0",
		   NULL, SORTED);
	/* a residual predicate: the right side is one piece */
	spill_same(
	    2,
	    "SELECT count(*), sum(a.id), max(a.g) FROM f a JOIN (SELECT k "
	    "% 1 AS z, max(name) AS name FROM d GROUP BY k % 1) b ON a.id "
	    "% 1 = b.z AND a.id > length(b.name) WHERE a.id % 2 = 0",
	    NULL, SORTED);
	/* a SEMI join with a residual predicate whose right side (90000
	 * rows of one key) is more than a piece */
	limit(2);
	su_rows(
	    db,
	    "SELECT count(*), sum(a.id) FROM f a WHERE a.id % 2 = 0 AND "
	    "EXISTS (SELECT 1 FROM f b WHERE b.id % 1 = a.id % 1 AND b.g <> "
	    "a.g)",
	    a, sizeof(a));
	CHECKF(strstr(a, "memory limit of 2 MiB (PRAGMA memory_limit) and "
			 "cannot spill: 135000 rows share one join key (45000 "
			 "left, 90000 right"),
	       "%s", a);
	limit(0);
}

/* NOT IN (JOIN_ANTI_NULL): a NULL on the right keeps no row, an empty
 * right side keeps every row (NULL keys too), else a NULL left key is
 * never kept (the right side passes the limit; an empty right side
 * cannot: a built left side's output is no smaller than it). */
static void t_notin(void)
{
	spill_same(4,
		   "SELECT f.id, f.kn, f.g FROM f WHERE kn NOT IN (SELECT k "
		   "FROM d WHERE k IS NOT NULL)",
		   NULL, ANY_ORDER);
	spill_same(4,
		   "SELECT count(*), sum(id), count(kn) FROM f WHERE kn NOT IN "
		   "(SELECT k FROM d WHERE k IS NOT NULL AND w <> 3)",
		   NULL, SORTED);
	/* one NULL among d's keys: no row */
	spill_same(4,
		   "SELECT count(*), sum(id) FROM f WHERE kn NOT IN (SELECT k "
		   "FROM d)",
		   NULL, SORTED);
	spill_same(4,
		   "SELECT count(*), sum(id) FROM f WHERE kn NOT IN (SELECT k "
		   "FROM d WHERE k IS NULL OR w <> 1)",
		   NULL, SORTED);
	/* text keys; NULLs on the left only */
	spill_same(4,
		   "SELECT count(*), sum(id) FROM f WHERE CASE WHEN id % 7 = 0 "
		   "THEN NULL ELSE g || id END NOT IN (SELECT name FROM d "
		   "WHERE k IS NOT NULL)",
		   NULL, SORTED);
}

static void t_sort(void)
{
	/* ties keep the input order (id's): SQLite's order with id added */
	spill_same(3, "SELECT id, n FROM f ORDER BY n DESC",
		   "SELECT id, n FROM f ORDER BY n DESC, id", SORTED);
	/* text, NULLs first, DESC */
	spill_same(6, "SELECT id, kn, g FROM f ORDER BY kn, g DESC",
		   "SELECT id, kn, g FROM f ORDER BY kn, g DESC, id", SORTED);
	/* LIMIT/OFFSET: the rows before the offset are not kept */
	spill_same(2,
		   "SELECT g || ' and some more text', id, n FROM f ORDER BY 1 "
		   "DESC, n DESC, id LIMIT 5 OFFSET 60000",
		   NULL, SORTED);
	/* a top-N under LIMIT/OFFSET (the sort's candidates pass the
	 * limit; the OFFSET's rows are never gathered) */
	spill_same(2,
		   "SELECT g, id FROM f WHERE id % 3 < 2 ORDER BY g DESC LIMIT "
		   "10 OFFSET 50000",
		   "SELECT g, id FROM f WHERE id % 3 < 2 ORDER BY g DESC, id "
		   "LIMIT 10 OFFSET 50000",
		   SORTED);
}

/* A result several times the limit goes to a file and is read back
 * chunk by chunk: the rows of the run without a limit, in its order. */
static void t_result(void)
{
	static const struct {
		int mib, how;
		const char *sql, *lsql;
	} q[] = {
	    {1, SAME_ORDER, "SELECT * FROM d", NULL},
	    {1, SAME_ORDER, "SELECT id, g, n, v FROM f WHERE id % 3 <> 1", ""},
	    /* ORDER BY: its runs merged into the file */
	    {1, SORTED, "SELECT k, name FROM d ORDER BY name DESC", NULL},
	    {1, SORTED, "SELECT id, kn, g FROM f ORDER BY kn, g DESC",
	     "SELECT id, kn, g FROM f ORDER BY kn, g DESC, id"},
	    /* spilled joins whose rows pass the limit (partition order) */
	    {3, ANY_ORDER,
	     "SELECT f.id, f.g, d.name, d.w FROM f LEFT JOIN d ON f.kn = d.k "
	     "WHERE f.id % 2 = 0",
	     NULL},
	    {3, ANY_ORDER,
	     "SELECT a.id, b.name FROM f a JOIN d b ON a.id = b.w", NULL},
	    /* a LEFT JOIN that builds its left side in the pipeline: its
	     * unmatched rows come last, from their own thread states */
	    {6, SAME_ORDER,
	     "SELECT f.id, d.name, f.g || d.name || f.g FROM f LEFT JOIN d ON "
	     "f.kn = d.k WHERE f.id % 3 <> 0",
	     NULL},
	};
	char sql[300], *buf = malloc(BUF);

	for (size_t i = 0; i < sizeof(q) / sizeof(q[0]) && buf; i++) {
		spill_same(q[i].mib, q[i].sql, q[i].lsql, q[i].how);
		/* the result itself (the plan's top node) spilled */
		limit(q[i].mib);
		snprintf(sql, sizeof(sql), "EXPLAIN ANALYZE %s", q[i].sql);
		su_rows(db, sql, buf, BUF);
		char *nl = strchr(buf, '\n');
		if (nl)
			*nl = 0;
		CHECKF(strstr(buf, "[spilled "), "%s: %s", q[i].sql, buf);
		limit(0);
	}
	free(buf);
}

/* gpmdb_reset and gpmdb_finalize in the middle of a spilled result give
 * everything back (ASan); its rows again from the first after a reset,
 * the row count of the whole result. */
static void t_result_reset(void)
{
	gpmdb_stmt *st = NULL;
	char first[200] = "";

	limit(1);
	CHECK(!gpmdb_prepare(db, "SELECT name, k FROM d ORDER BY name", -1, &st,
			     NULL));
	for (int pass = 0; pass < 3 && st; pass++) {
		int n = 0;
		while (n < 5000 + 7000 * pass && gpmdb_step(st) == GPMDB_ROW) {
			const char *t = (const char *)gpmdb_column_text(st, 0);
			if (!n && !pass)
				snprintf(first, sizeof(first), "%s", t);
			else if (!n)
				CHECKF(!strcmp(first, t), "%s / %s", first, t);
			n++;
		}
		CHECKF(n == 5000 + 7000 * pass, "%d", n);
		CHECK(!gpmdb_reset(st));
	}
	CHECK(!strcmp(first, "dimension row 0"));
	/* to the end: every row, the last one's */
	int n = 0;
	char last[200] = "";
	while (gpmdb_step(st) == GPMDB_ROW) {
		snprintf(last, sizeof(last), "%s", gpmdb_column_text(st, 0));
		n++;
	}
	CHECKF(n == NDIM, "%d", n);
	CHECKF(!strcmp(last, "dimension row 99999"), "%s", last);
	CHECK(!gpmdb_reset(st));
	CHECK(gpmdb_step(st) == GPMDB_ROW);
	CHECK(gpmdb_step(st) == GPMDB_ROW);
	gpmdb_finalize(st); /* in the middle */
	CHECK(!gpmdb_prepare(db, "SELECT * FROM f", -1, &st, NULL));
	for (int i = 0; i < 70000; i++)
		CHECK(gpmdb_step(st) == GPMDB_ROW || (i = 70000, 0));
	gpmdb_finalize(st);
	limit(0);
}

static atomic_int query_done;

static void *interrupter(void *arg)
{
	struct timespec ts = {0, 50 * 1000000}, step = {0, 5 * 1000000};

	(void)arg;
	nanosleep(&ts, NULL);
	while (!atomic_load(&query_done)) {
		gpmdb_interrupt(db);
		nanosleep(&step, NULL);
	}
	return NULL;
}

/* gpmdb_interrupt while a join spills: "interrupted", the files and
 * memory given back (ASan), the statement works afterwards. */
static void t_interrupt(void)
{
	const char *q =
	    "SELECT count(*), sum(a.id + b.id) FROM f a JOIN f b ON "
	    "a.k = b.k";
	char want[200], r[200];
	pthread_t th;

	su_rows(db, q, want, sizeof(want));
	CHECK(!strcmp(want, "5400000|485994600000\n"));
	limit(2);
	CHECK(spilled(q));
	atomic_store(&query_done, 0);
	CHECK(!pthread_create(&th, NULL, interrupter, NULL));
	su_rows(db, q, r, sizeof(r));
	atomic_store(&query_done, 1);
	pthread_join(th, NULL);
	CHECKF(strstr(r, "interrupted"), "%s", r);
	su_rows(db, q, r, sizeof(r));
	CHECKF(!strcmp(r, want), "%s", r);
	limit(0);
}

/* A full disk, an unwritable directory: a clear error, nothing lost. */
static void t_errors(void)
{
	const char *q = "SELECT id % 40000, count(*), min(g) FROM f GROUP BY 1";
	char a[2000];
	struct rlimit old, small = {65536, 65536};

	limit(8);
	CHECK(!getrlimit(RLIMIT_FSIZE, &old));
	signal(SIGXFSZ, SIG_IGN);
	small.rlim_max = old.rlim_max;
	CHECK(!setrlimit(RLIMIT_FSIZE, &small));
	su_rows(db, q, a, sizeof(a));
	CHECK(!setrlimit(RLIMIT_FSIZE, &old));
	CHECKF(strstr(a, "cannot spill to temporary file in ") &&
		   strstr(a, dir) && strstr(a, "File too large"),
	       "%s", a);
	if (geteuid()) { /* root writes anywhere */
		CHECK(!chmod(dir, 0500));
		su_rows(db, q, a, sizeof(a));
		CHECK(!chmod(dir, 0700));
		CHECKF(strstr(a, "cannot spill to temporary file in ") &&
			   strstr(a, "Permission denied"),
		       "%s", a);
	}
	CHECK(spilled(q)); /* and it works again */
	/* PRAGMA temp_directory: the files go there, or fail there */
	CHECK(!strcmp(su_scalar(db, "PRAGMA temp_directory"), dir));
	snprintf(a, sizeof(a), "PRAGMA temp_directory = '%s/none'", dir);
	CHECK(!su_exec(db, a));
	su_rows(db, q, a, sizeof(a));
	CHECKF(strstr(a, "cannot spill to temporary file in ") &&
		   strstr(a, "/none: No such file or directory"),
	       "%s", a);
	snprintf(a, sizeof(a), "PRAGMA temp_directory = '/tmp'");
	CHECK(!su_exec(db, a));
	CHECK(!strcmp(su_scalar(db, "PRAGMA temp_directory"), "/tmp"));
	CHECK(spilled(q));
	CHECK(!su_exec(db, "PRAGMA temp_directory = ''"));
	/* a result larger than the limit whose last operator is not a
	 * pipeline cannot spill */
	limit(1);
	su_rows(db, "SELECT name FROM d UNION ALL SELECT g FROM f", a,
		sizeof(a));
	CHECKF(strstr(a, "memory limit of 1 MiB (PRAGMA memory_limit) and "
			 "its result cannot spill: its last operator (SET "
			 "OPERATION) is not a pipeline"),
	       "%s", a);
	limit(0);
	CHECK(!strcmp(su_scalar(db, "SELECT count(*) FROM d WHERE k IS NULL"),
		      "2400"));
}

int main(void)
{
	CHECK(!su_tmp_make(dir, sizeof(dir), path, sizeof(path), "test_spill",
			   "spill.db"));
	TEST_RUN(load);
	TEST_RUN(t_agg);
	TEST_RUN(t_join);
	TEST_RUN(t_notin);
	TEST_RUN(t_join_split);
	TEST_RUN(t_join_onekey);
	TEST_RUN(t_sort);
	TEST_RUN(t_result);
	TEST_RUN(t_result_reset);
	/* again with the parallel paths of large inputs (pipe_small) */
	setenv("GPMDB_TEST_PIPE_SMALL", "1", 1);
	TEST_RUN(t_agg);
	TEST_RUN(t_join);
	TEST_RUN(t_notin);
	unsetenv("GPMDB_TEST_PIPE_SMALL");
	TEST_RUN(t_interrupt);
	TEST_RUN(t_errors);
	gpmdb_close(db);
	sqlite3_close(lite);
	su_tmp_remove(dir, path);
	TEST_MAIN_END();
}
