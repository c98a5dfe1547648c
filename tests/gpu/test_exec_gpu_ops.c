/*
 * test_exec_gpu_ops.c - ORDER BY / top-N, joins, DISTINCT and set
 * operations on the GPU backend (make test-gpu, on the GPU machine): each
 * query runs with backend=cpu and with backend=gpu under gpu_strict; the
 * rows must be the same in the same order (no ORDER BY needed: the GPU
 * reproduces the CPU's order of joins and DISTINCT).  Data: NULLs,
 * duplicates, ties, negative numbers, -0.0 and 0.0, dates, decimals.
 * GPMDB_TEST_ROWS=n sets the big table's size (default 300000).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

#include "../gpu/gpu.h"
#include "gpu/xq.h"

static gpmdb *db;
static char path[256];
static int nq, nmis;

static void both(const char *sql)
{
	char *c, *g;

	xq_exec(db, "PRAGMA backend = cpu");
	c = xq(db, sql);
	xq_exec(db, "PRAGMA backend = gpu");
	g = xq(db, sql);
	nq++;
	if (strcmp(c, g)) {
		nmis++;
		CHECKF(0, "%s\n  cpu: %.300s\n  gpu: %.300s", sql, c, g);
	}
	CHECKF(strncmp(c, "ERROR", 5), "%s: %s", sql, c);
	CHECKF(strncmp(g, "ERROR", 5), "%s: %s", sql, g);
	free(c);
	free(g);
}

static void setup(void)
{
	long rows = getenv("GPMDB_TEST_ROWS") ? atol(getenv("GPMDB_TEST_ROWS"))
					      : 300000;
	char sql[1024];

	snprintf(path, sizeof(path), "/dev/shm/gpmdb_test_gpu_ops_%d.pool",
		 (int)getpid());
	unlink(path);
	CHECK_RC(gpmdb_open_v2(path, &db,
			       GPMDB_OPEN_READWRITE | GPMDB_OPEN_CREATE, NULL),
		 GPMDB_OK);
	CHECK(!xq_exec(db, "CREATE TABLE t(i BIGINT, k BIGINT, d DOUBLE, "
			   "m DECIMAL(10,2), dt DATE, bo BOOLEAN, s TEXT)"));
	CHECK(!xq_exec(db, "CREATE TABLE u(k BIGINT, y BIGINT, d DOUBLE, "
			   "dt DATE, m DECIMAL(10,2), name TEXT)"));
	CHECK(!xq_exec(db, "INSERT INTO t VALUES (0, 0, 0.0, 0, DATE "
			   "'2000-01-01', true, 'a'), (1, NULL, -0.0, NULL, "
			   "NULL, NULL, NULL), (2, -3, NULL, -1.50, DATE "
			   "'1969-12-31', false, 'b')"));
	/* doubling with variation: keys with many ties, NULLs every few
	 * rows, negative values, -0.0 (from 0 * -1.0) */
	for (long n = 3, r = 1; n < rows; n *= 2, r++) {
		snprintf(
		    sql, sizeof(sql),
		    "INSERT INTO t SELECT i + %ld, CASE WHEN (i + %ld) %% "
		    "11 = 0 THEN NULL ELSE (i * 7 + %ld) %% 1000 - 500 END, "
		    "CASE WHEN i %% 13 = 5 THEN NULL ELSE ((i + %ld) %% 200 "
		    "- 100) * -0.5 END, CASE WHEN i %% 17 = 3 THEN NULL "
		    "ELSE ((i * 3) %% 500 - 250) * 1.25 END, dt + INTERVAL "
		    "'%ld' DAY, NOT bo, s FROM t",
		    n, n, r, r, r % 40);
		CHECK(!xq_exec(db, sql));
	}
	CHECK(!xq_exec(db, "DELETE FROM t WHERE i % 97 = 13"));
	/* u: 3 rows per key of -600..600 (duplicates on the build side),
	 * some NULL keys */
	CHECK(!xq_exec(db, "INSERT INTO u SELECT k, i, d, dt, m, 'n' FROM t "
			   "WHERE i < 4000"));
	CHECK(!xq_exec(db, "INSERT INTO u SELECT k + 1, y + 5, d, dt, m, 'p' "
			   "FROM u"));
	CHECK(!xq_exec(db, "PRAGMA gpu_strict = on"));
}

static void t_explain(void)
{
	char *e;

	xq_exec(db, "PRAGMA backend = gpu");
	e = xq(db, "EXPLAIN SELECT i, k FROM t ORDER BY k DESC, i");
	printf("# %s", e);
	CHECKF(strstr(e, "SORT BY #2 DESC, #1 (backend=gpu)"), "%s", e);
	free(e);
	e = xq(db, "EXPLAIN SELECT t.i, u.y FROM t LEFT JOIN u ON t.k = u.k");
	printf("# %s", e);
	CHECKF(strstr(e, "LEFT JOIN") && strstr(e, "t.k = u.k (backend=gpu)"),
	       "%s", e);
	free(e);
	e = xq(db, "EXPLAIN SELECT DISTINCT k FROM t");
	CHECKF(strstr(e, "DISTINCT (backend=gpu)"), "%s", e);
	free(e);
	e = xq(db, "EXPLAIN SELECT k FROM t UNION SELECT y FROM u");
	CHECKF(strstr(e, "UNION (backend=gpu)"), "%s", e);
	free(e);
	/* text keys stay on the CPU: strict says so */
	e = xq(db, "EXPLAIN SELECT s FROM t ORDER BY s");
	CHECKF(strstr(e, "backend=cpu (ORDER BY a TEXT key"), "%s", e);
	free(e);
	e = xq(db, "SELECT s FROM t ORDER BY s LIMIT 3");
	CHECKF(strstr(e, "gpu_strict: SORT cannot run on the GPU: ORDER BY a "
			 "TEXT key"),
	       "%s", e);
	free(e);
	/* auto: the estimate decides */
	xq_exec(db, "PRAGMA backend = auto");
	e = xq(db, "EXPLAIN SELECT i FROM t ORDER BY i");
	CHECKF(strstr(e, "SORT BY #1 (backend=gpu)"), "%s", e);
	free(e);
	e = xq(db, "EXPLAIN SELECT k FROM u ORDER BY k");
	CHECKF(strstr(e, "SORT BY #1 (backend=cpu (input estimated at"), "%s",
	       e);
	free(e);
}

static void t_sort(void)
{
	static const char *q[] = {
	    "SELECT i, k FROM t ORDER BY k",
	    "SELECT i, k FROM t ORDER BY k DESC",
	    "SELECT i, k FROM t ORDER BY k NULLS LAST",
	    "SELECT i, k FROM t ORDER BY k DESC NULLS FIRST",
	    "SELECT i, d FROM t ORDER BY d",
	    "SELECT i, d FROM t ORDER BY d DESC",
	    "SELECT i, m FROM t ORDER BY m, i DESC",
	    "SELECT i, dt FROM t ORDER BY dt DESC NULLS LAST",
	    "SELECT i, bo FROM t ORDER BY bo",
	    "SELECT i, bo FROM t ORDER BY bo DESC",
	    "SELECT i, k, d, bo FROM t ORDER BY bo, k DESC, d NULLS LAST",
	    "SELECT * FROM t ORDER BY dt, m DESC, k",
	    "SELECT i, s FROM t ORDER BY k % 5, d LIMIT 100",
	    "SELECT i, k FROM t ORDER BY k LIMIT 10",
	    "SELECT i, k FROM t ORDER BY k DESC LIMIT 25 OFFSET 1000",
	    "SELECT i, d FROM t ORDER BY d LIMIT 1",
	    "SELECT i, d FROM t ORDER BY d DESC NULLS FIRST LIMIT 0",
	    "SELECT i FROM t WHERE i < 0 ORDER BY i",
	    "SELECT k, count(*) FROM t GROUP BY k ORDER BY 2 DESC, 1",
	    "SELECT i, NULL FROM t ORDER BY 2, i DESC LIMIT 50",
	    "SELECT i, k FROM t WHERE k > 100 ORDER BY k, i LIMIT 5000",
	};
	for (size_t k = 0; k < sizeof(q) / sizeof(q[0]); k++)
		both(q[k]);
}

static void t_join(void)
{
	static const char *q[] = {
	    "SELECT t.i, u.y FROM t JOIN u ON t.k = u.k",
	    "SELECT t.i, u.y, u.name FROM t, u WHERE u.k = t.k AND t.i < "
	    "100000",
	    "SELECT t.i, u.y FROM t LEFT JOIN u ON t.k = u.k",
	    "SELECT u.y, t.i FROM u LEFT JOIN t ON t.k = u.k WHERE u.y < 50",
	    "SELECT t.i, u.y FROM t JOIN u ON t.k = u.k AND t.i > u.y",
	    "SELECT t.i, u.y FROM t LEFT JOIN u ON t.k = u.k AND u.y % 3 = 0",
	    "SELECT t.i, u.y FROM t JOIN u ON t.k = u.k AND t.dt = u.dt",
	    "SELECT t.i, u.y FROM t JOIN u ON t.d = u.d WHERE t.i < 20000",
	    "SELECT t.i, u.y FROM t JOIN u ON t.m = u.m WHERE t.i < 50000",
	    "SELECT t.i, u.y FROM t JOIN u ON t.dt = u.dt WHERE t.i < 20000",
	    "SELECT count(*), sum(t.i), sum(u.y) FROM t JOIN u ON t.k = u.k",
	    "SELECT a.i, b.i FROM t a JOIN t b ON a.i = b.i + 1 WHERE a.i < "
	    "200000",
	    "SELECT t.i, u.y FROM t JOIN u ON t.k = u.k ORDER BY u.y, t.i "
	    "LIMIT 100",
	};
	for (size_t k = 0; k < sizeof(q) / sizeof(q[0]); k++)
		both(q[k]);
}

static void t_distinct_setops(void)
{
	static const char *q[] = {
	    "SELECT DISTINCT k FROM t",
	    "SELECT DISTINCT d FROM t",
	    "SELECT DISTINCT bo, dt FROM t",
	    "SELECT DISTINCT k, m FROM t WHERE i % 3 = 0",
	    "SELECT DISTINCT k FROM t ORDER BY i",
	    "SELECT k FROM t UNION SELECT y FROM u",
	    "SELECT k, dt FROM t UNION SELECT k, dt FROM u",
	    "SELECT k FROM t INTERSECT SELECT y FROM u",
	    "SELECT k FROM t EXCEPT SELECT y FROM u",
	    "SELECT d FROM t EXCEPT SELECT d FROM u",
	    "SELECT k FROM t UNION ALL SELECT y FROM u",
	    "SELECT count(*) FROM (SELECT DISTINCT k, bo FROM t)",
	};
	for (size_t k = 0; k < sizeof(q) / sizeof(q[0]); k++)
		both(q[k]);
}

/* gpu_stats' value of name. */
static long gstat_of(const char *name)
{
	char *s = xq(db, "PRAGMA gpu_stats"), *p = strstr(s, name);
	long v = p ? atol(p + strlen(name) + 1) : -1;

	free(s);
	return v;
}

static long fallbacks0;

static void t_stats(void)
{
	char *s;

	s = xq(db, "PRAGMA gpu_stats");
	printf("# %s", s);
	free(s);
	/* everything above ran under gpu_strict: no fallback */
	CHECK(gstat_of("cpu_fallbacks") == fallbacks0);
	CHECK(gstat_of("gpu_operators") > 40);
	/* not strict: a TEXT sort runs on the CPU, counted */
	CHECK(!xq_exec(db, "PRAGMA gpu_strict = off"));
	both("SELECT s, i FROM t WHERE i < 1000 ORDER BY s, i");
	CHECK(gstat_of("cpu_fallbacks") == fallbacks0 + 1);
	CHECK(!xq_exec(db, "PRAGMA gpu_strict = on"));
}

int main(void)
{
	char info[512];

	gpu_describe(info, sizeof(info));
	printf("# device: %s\n", info);
	setup();
	fallbacks0 = gstat_of("cpu_fallbacks");
	TEST_RUN(t_explain);
	TEST_RUN(t_sort);
	TEST_RUN(t_join);
	TEST_RUN(t_distinct_setops);
	TEST_RUN(t_stats);
	printf("# %d queries compared, %d differ\n", nq, nmis);
	gpmdb_close(db);
	unlink(path);
	TEST_MAIN_END();
}
