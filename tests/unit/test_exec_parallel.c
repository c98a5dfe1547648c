/*
 * test_exec_parallel.c - the OpenMP paths of the executor (filter and
 * projection over inputs of many batches) give the same rows, values and
 * errors as a serial run.  The table is large enough for the parallel
 * path (engine/exec/exec.c, PAR_MIN_BATCHES) and the thread count is forced
 * above one so that the test means the same on a one-core machine.
 */
#include "harness.h"
#include "sql_util.h"

#include "gpmdb.h"

#include <omp.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NROWS 60000

static char path[300];

static gpmdb *db;

/* One transaction of NROWS single-row INSERTs (each statement behind a
 * savepoint: the metadata log must not fill up).  Row i: a = i, b = i % 1000 -
 * 500 (NULL when i % 97 == 0), c = i / 8.0, d = 'k' || (i % 13). */
static void load(void)
{
	gpmdb_stmt *st = NULL;

	db = su_open(path);
	CHECK(!su_exec(db, "CREATE TABLE t(a BIGINT, b INT, c DOUBLE, "
			   "d TEXT, e DECIMAL(12,2))"));
	CHECK(!su_exec(db, "BEGIN"));
	CHECK_RC(
	    gpmdb_prepare(db, "INSERT INTO t VALUES(?,?,?,?,?)", -1, &st, NULL),
	    GPMDB_OK);
	for (int i = 0; i < NROWS; i++) {
		char d[16];
		snprintf(d, sizeof(d), "k%d", i % 13);
		gpmdb_bind_int64(st, 1, i);
		if (i % 97 == 0)
			gpmdb_bind_null(st, 2);
		else
			gpmdb_bind_int(st, 2, i % 1000 - 500);
		gpmdb_bind_double(st, 3, i / 8.0);
		gpmdb_bind_text(st, 4, d, -1);
		gpmdb_bind_double(st, 5, (i % 500) / 4.0);
		if (gpmdb_step(st) != GPMDB_DONE) {
			CHECKF(0, "insert row %d: %s", i, gpmdb_errmsg(db));
			break;
		}
		gpmdb_reset(st);
	}
	gpmdb_finalize(st);
	CHECK(!su_exec(db, "COMMIT"));
}

static void test_filter_counts(void)
{
	long long n = 0, sb = 0, n2 = 0;
	char want[64];

	for (int i = 0; i < NROWS; i++) {
		int b = i % 1000 - 500;
		if (i % 97 != 0 && b > 100 && i % 7 != 3) {
			n++;
			sb += b;
		}
		if (i % 13 == 5 && i / 8.0 < 4000)
			n2++;
	}
	snprintf(want, sizeof(want), "%lld", n);
	CHECK(!strcmp(su_scalar(db, "SELECT count(*) FROM t WHERE b > 100 AND "
				    "a % 7 <> 3"),
		      want));
	snprintf(want, sizeof(want), "%lld", sb);
	CHECK(!strcmp(su_scalar(db, "SELECT sum(b) FROM t WHERE b > 100 AND "
				    "a % 7 <> 3"),
		      want));
	snprintf(want, sizeof(want), "%lld", n2);
	CHECK(!strcmp(su_scalar(db, "SELECT count(*) FROM t WHERE d = 'k5' AND "
				    "c < 4000"),
		      want));
	/* NULLs are not true: b IS NULL rows drop out of both. */
	CHECK(!strcmp(su_scalar(db, "SELECT count(*) FROM t WHERE b = b"),
		      "59381"));
}

/* The order of rows after a parallel filter is the input order. */
static void test_filter_order(void)
{
	gpmdb_stmt *st = NULL;
	long long prev = -1, rows = 0;
	bool sorted = true;

	CHECK_RC(
	    gpmdb_prepare(db, "SELECT a FROM t WHERE a % 3 = 1", -1, &st, NULL),
	    GPMDB_OK);
	while (gpmdb_step(st) == GPMDB_ROW) {
		long long a = gpmdb_column_int64(st, 0);
		if (a <= prev || a % 3 != 1)
			sorted = false;
		prev = a;
		rows++;
	}
	gpmdb_finalize(st);
	CHECK(sorted);
	CHECK(rows == NROWS / 3);
}

static void test_projection(void)
{
	long long s = 0;
	double sc = 0;
	char want[64];

	for (long long i = 0; i < NROWS; i++) {
		s += i * 3 - 7;
		sc += (i / 8.0) * 2;
	}
	snprintf(want, sizeof(want), "%lld", s);
	CHECK(!strcmp(su_scalar(db, "SELECT sum(x) FROM (SELECT a * 3 - 7 AS x "
				    "FROM t)"),
		      want));
	snprintf(want, sizeof(want), "%.1f", sc);
	CHECK(!strcmp(su_scalar(db, "SELECT sum(y) FROM (SELECT c * 2 AS y "
				    "FROM t)"),
		      want));
	/* A DECIMAL result of another scale goes through the converting
	 * path; exact. */
	{
		/* su_scalar returns a static buffer: keep the first. */
		char *a = strdup(su_scalar(db, "SELECT sum(z) FROM (SELECT "
					       "e * 2 AS z FROM t)"));
		double se = 0;
		char w[64];
		for (int i = 0; i < NROWS; i++)
			se += (i % 500) / 4.0 * 2;
		snprintf(w, sizeof(w), "%.2f", se);
		CHECKF(a && !strcmp(a, w), "%s, wanted %s", a ? a : "?", w);
		CHECK(a &&
		      !strcmp(a, su_scalar(db, "SELECT sum(e) * 2 FROM t")));
		free(a);
	}
}

/* Expected order of ORDER BY d DESC, b NULLS FIRST..., a: computed here. */
static int par_cmp_rows(const void *x, const void *y)
{
	int i = *(const int *)x, j = *(const int *)y;
	char di[16], dj[16];
	int c;

	snprintf(di, sizeof(di), "k%d", i % 13);
	snprintf(dj, sizeof(dj), "k%d", j % 13);
	if ((c = strcmp(dj, di))) /* d DESC */
		return c;
	/* b ASC, NULLs first (SQLite's default) */
	bool ni = i % 97 == 0, nj = j % 97 == 0;
	if (ni != nj)
		return ni ? -1 : 1;
	if (!ni && (i % 1000 - 500) != (j % 1000 - 500))
		return (i % 1000 - 500) < (j % 1000 - 500) ? -1 : 1;
	return i < j ? -1 : i > j; /* a */
}

/* Sorts of more than PAR_SORT_MIN rows run on several threads and merge
 * runs: the order must be the serial one, ties included (the sort is
 * stable: equal keys keep input order). */
static void test_sort(void)
{
	static int want[NROWS];
	gpmdb_stmt *st = NULL;
	long long i = 0, bad = -1;

	for (int k = 0; k < NROWS; k++)
		want[k] = k;
	qsort(want, NROWS, sizeof(int), par_cmp_rows);
	/* general path: several keys, text first */
	CHECK_RC(gpmdb_prepare(db, "SELECT a FROM t ORDER BY d DESC, b", -1,
			       &st, NULL),
		 GPMDB_OK);
	while (gpmdb_step(st) == GPMDB_ROW) {
		if (i < NROWS && gpmdb_column_int64(st, 0) != want[i] &&
		    bad < 0)
			bad = i;
		i++;
	}
	gpmdb_finalize(st);
	CHECKF(i == NROWS && bad < 0, "rows %lld, first wrong at %lld", i, bad);
	/* one numeric key (sortkey path), DESC, many ties: a keeps input
	 * order within equal c / 1000 */
	CHECK_RC(
	    gpmdb_prepare(db, "SELECT a FROM t ORDER BY b DESC", -1, &st, NULL),
	    GPMDB_OK);
	i = 0;
	bad = -1;
	long long pa = -1, pb = 1000;
	while (gpmdb_step(st) == GPMDB_ROW) {
		long long a = gpmdb_column_int64(st, 0);
		long long b = a % 97 == 0 ? -1000 : a % 1000 - 500;
		/* b DESC with NULLs last, ties by a */
		if (bad < 0 && (b > pb || (b == pb && a <= pa)))
			bad = i;
		pa = a;
		pb = b;
		i++;
	}
	gpmdb_finalize(st);
	CHECKF(i == NROWS && bad < 0, "rows %lld, first wrong at %lld", i, bad);
}

/* The error of the first failing row in input order is the one reported,
 * whichever thread meets an error first. */
static void test_first_error(void)
{
	const char *r;

	r = su_scalar(db, "SELECT count(*) FROM t WHERE "
			  "CASE WHEN a >= 50000 THEN a * 9223372036854775 "
			  "ELSE 0 END > 0");
	CHECKF(strstr(r, "integer overflow") != NULL, "got %s", r);
	r = su_scalar(db,
		      "SELECT sum(x) FROM (SELECT CASE WHEN a = 59999 "
		      "THEN 9223372036854775807 + a ELSE a END AS x FROM t)");
	CHECKF(strstr(r, "integer overflow") != NULL, "got %s", r);
	/* The connection still works after a failed parallel run. */
	CHECK(!strcmp(su_scalar(db, "SELECT count(*) FROM t WHERE a < 10"),
		      "10"));
}

/* A hash join probes in blocks of 256k rows, each split over the
 * threads; a last block under 16384 rows runs on one thread.  The pairs
 * the other threads found in the previous block were emitted again there
 * (TPC-H Q9 at SF 1 summed 1.3x too much on 16 threads): a 1:1 join of
 * two tables of 256k + 5000 rows must give each row once. */
static void test_join_blocks(void)
{
	enum { N = 262144 + 5000 };
	int64_t *k = malloc(sizeof(int64_t) * N);
	char want[32];

	CHECK(k != NULL);
	if (!k)
		return;
	for (int64_t i = 0; i < N; i++)
		k[i] = i;
	gpmdb_column_array col = {GPMDB_ARRAY_INT64, k, NULL};
	CHECK(!su_exec(db, "CREATE TABLE jp(k BIGINT); CREATE TABLE jq(k "
			   "BIGINT)"));
	CHECK_RC(gpmdb_append_columns(db, "jp", 1, NULL, &col, N), GPMDB_OK);
	CHECK_RC(gpmdb_append_columns(db, "jq", 1, NULL, &col, N), GPMDB_OK);
	free(k);
	snprintf(want, sizeof(want), "%d", N);
	const char *r =
	    su_scalar(db, "SELECT count(*) FROM jp JOIN jq ON jp.k = jq.k");
	CHECKF(!strcmp(r, want), "count %s, want %s", r, want);
	r = su_scalar(db, "SELECT count(*) FROM jq JOIN jp ON jp.k = jq.k");
	CHECKF(!strcmp(r, want), "count %s, want %s", r, want);
}

/* ORDER BY one number with LIMIT keeps a heap per thread past 65536
 * rows: the merged heaps must give the serial answer, ties in row order
 * (jp from test_join_blocks: k = 0 .. 267143). */
static void test_topn_threads(void)
{
	gpmdb_stmt *st = NULL;
	int i = 0, bad = -1;

	CHECK_RC(gpmdb_prepare(db,
			       "SELECT k % 1000 AS g, k FROM jp ORDER BY g "
			       "DESC LIMIT 300",
			       -1, &st, NULL),
		 GPMDB_OK);
	while (st && gpmdb_step(st) == GPMDB_ROW) {
		/* 267 rows of g = 999 (k = 999, 1999, ...), then g = 998 */
		long long g = 999 - i / 267, k = g + 1000LL * (i % 267);
		if (bad < 0 && (gpmdb_column_int64(st, 0) != g ||
				gpmdb_column_int64(st, 1) != k))
			bad = i;
		i++;
	}
	gpmdb_finalize(st);
	CHECKF(i == 300 && bad < 0, "rows %d, first wrong at %d", i, bad);
}

int main(void)
{
	const char *tmp = getenv("TMPDIR");

	snprintf(path, sizeof(path), "%s/gpmdb_test_par_%d.db",
		 tmp ? tmp : "/tmp", (int)getpid());
	omp_set_num_threads(4);
	TEST_RUN(load);
	TEST_RUN(test_filter_counts);
	TEST_RUN(test_filter_order);
	TEST_RUN(test_projection);
	TEST_RUN(test_sort);
	TEST_RUN(test_first_error);
	TEST_RUN(test_join_blocks);
	TEST_RUN(test_topn_threads);
	gpmdb_close(db);
	unlink(path);
	TEST_MAIN_END();
}
