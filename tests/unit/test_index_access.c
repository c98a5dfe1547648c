/*
 * test_index_access.c - index access paths through the C API
 * (engine/index/plan_index.c, exec_index.c): a prepared point query re-run with
 * new bindings reads the new key (integers, integral and fractional
 * doubles, text that is no key, NULL), ranges and ORDER BY ... LIMIT with
 * parameters, EXPLAIN of a bound statement, EXPLAIN ANALYZE's index
 * rows, correlated and computed keys, UPDATE/DELETE by key, the batch
 * UPDATE/DELETE matching bound keys
 * through the unique index, and the time of a point query on a 200k-row
 * table (a scan would cost a millisecond; the index microseconds).
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"

#include "gpu/xq.h"

static gpmdb *db;
static char path[256];

#define NROWS 200000

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* k(id INTEGER PRIMARY KEY, v INT, t TEXT): id 0..NROWS-1, v = id % 1000,
 * t = 'k' || id (NULL where id % 100000 == 7). */
static void open_db(void)
{
	gpmdb_options o = {0};
	gpmdb_stmt *st = NULL;
	int64_t *ids = malloc(sizeof(int64_t) * NROWS);
	int32_t *vs = malloc(sizeof(int32_t) * NROWS);
	char **ts = malloc(sizeof(char *) * NROWS);

	snprintf(path, sizeof(path), "/dev/shm/gpmdb_test_ixa_%d.pool",
		 (int)getpid());
	unlink(path);
	o.durability = "off";
	CHECK_RC(gpmdb_open_v2(path, &db,
			       GPMDB_OPEN_READWRITE | GPMDB_OPEN_CREATE, &o),
		 GPMDB_OK);
	CHECK(!xq_exec(db, "PRAGMA backend = cpu"));
	CHECK(!xq_exec(db, "CREATE TABLE k(id INTEGER PRIMARY KEY, v INT, "
			   "t TEXT)"));
	for (int i = 0; i < NROWS; i++) {
		ids[i] = i;
		vs[i] = i % 1000;
		ts[i] = NULL;
		if (i % 100000 != 7) {
			ts[i] = malloc(16);
			snprintf(ts[i], 16, "k%d", i);
		}
	}
	CHECK_RC(
	    gpmdb_prepare(db, "INSERT INTO k VALUES (?, ?, ?)", -1, &st, NULL),
	    GPMDB_OK);
	CHECK_RC(gpmdb_bind_array_int64(st, 1, ids, NROWS, NULL), GPMDB_OK);
	CHECK_RC(gpmdb_bind_array_int32(st, 2, vs, NROWS, NULL), GPMDB_OK);
	CHECK_RC(
	    gpmdb_bind_array_text(st, 3, (const char *const *)ts, NROWS, NULL),
	    GPMDB_OK);
	CHECK_RC(gpmdb_step(st), GPMDB_DONE);
	gpmdb_finalize(st);
	CHECK(!xq_exec(db, "CREATE INDEX kt ON k(t)"));
	CHECK(!xq_exec(db, "CREATE INDEX kv ON k(v)"));
	for (int i = 0; i < NROWS; i++)
		free(ts[i]);
	free(ts);
	free(ids);
	free(vs);
}

static void close_db(void)
{
	gpmdb_close(db);
	unlink(path);
}

/* The rows of the prepared statement st (bound already), as xq gives them. */
static char *rows_of(gpmdb_stmt *st)
{
	size_t cap = 256, n = 0;
	char *out = malloc(cap);
	int rc;

	out[0] = 0;
	while ((rc = gpmdb_step(st)) == GPMDB_ROW) {
		for (int i = 0; i < gpmdb_column_count(st); i++) {
			const char *t = (const char *)gpmdb_column_text(st, i);
			size_t l = strlen(t ? t : "NULL") + 3;
			while (n + l + 1 > cap)
				out = realloc(out, cap *= 2);
			n += (size_t)sprintf(out + n, "%s%s", i ? "|" : "",
					     t ? t : "NULL");
		}
		out[n++] = '\n';
		out[n] = 0;
	}
	if (rc != GPMDB_DONE) {
		free(out);
		out = malloc(strlen(gpmdb_errmsg(db)) + 16);
		sprintf(out, "ERROR: %s", gpmdb_errmsg(db));
	}
	gpmdb_reset(st);
	return out;
}

#define ROWS_WANT(st, want)                                                    \
	do {                                                                   \
		char *r_ = rows_of(st);                                        \
		CHECKF(!strcmp(r_, (want)), "got %s, wanted %s", r_, (want));  \
		free(r_);                                                      \
	} while (0)

/* The EXPLAIN text of sql holds what. */
static void explain_has(const char *sql, const char *what)
{
	char q[512];
	char *r;

	snprintf(q, sizeof(q), "EXPLAIN %s", sql);
	r = xq(db, q);
	CHECKF(strstr(r, what) != NULL, "EXPLAIN %s:\n%s\nwanted %s", sql, r,
	       what);
	free(r);
}

static void test_point_bindings(void)
{
	gpmdb_stmt *st = NULL;

	CHECK_RC(
	    gpmdb_prepare(db, "SELECT v, t FROM k WHERE id = ?", -1, &st, NULL),
	    GPMDB_OK);
	CHECK_RC(gpmdb_bind_int(st, 1, 1234), GPMDB_OK);
	ROWS_WANT(st, "234|k1234\n");
	CHECK_RC(gpmdb_bind_int64(st, 1, 199999), GPMDB_OK);
	ROWS_WANT(st, "999|k199999\n");
	/* the same binding again: the plan is reused */
	ROWS_WANT(st, "999|k199999\n");
	CHECK_RC(gpmdb_bind_int64(st, 1, 200000), GPMDB_OK);
	ROWS_WANT(st, "");
	CHECK_RC(gpmdb_bind_double(st, 1, 77.0), GPMDB_OK);
	ROWS_WANT(st, "77|k77\n");
	CHECK_RC(gpmdb_bind_double(st, 1, 77.5), GPMDB_OK);
	ROWS_WANT(st, "");
	/* text that looks like a number: no key, the scan and the filter */
	CHECK_RC(gpmdb_bind_text(st, 1, "78", -1), GPMDB_OK);
	ROWS_WANT(st, "78|k78\n");
	CHECK_RC(gpmdb_bind_null(st, 1), GPMDB_OK);
	ROWS_WANT(st, "");
	CHECK_RC(gpmdb_bind_int(st, 1, 7), GPMDB_OK);
	ROWS_WANT(st, "7|NULL\n");
	gpmdb_finalize(st);

	/* `IS ?` bound to NULL is IS NULL: no key */
	CHECK_RC(gpmdb_prepare(db, "SELECT id FROM k WHERE t IS ? AND id < 10",
			       -1, &st, NULL),
		 GPMDB_OK);
	CHECK_RC(gpmdb_bind_null(st, 1), GPMDB_OK);
	ROWS_WANT(st, "7\n");
	CHECK_RC(gpmdb_bind_text(st, 1, "k3", -1), GPMDB_OK);
	ROWS_WANT(st, "3\n");
	gpmdb_finalize(st);

	/* a TEXT key bound */
	CHECK_RC(
	    gpmdb_prepare(db, "SELECT id FROM k WHERE t = ?", -1, &st, NULL),
	    GPMDB_OK);
	CHECK_RC(gpmdb_bind_text(st, 1, "k4242", -1), GPMDB_OK);
	ROWS_WANT(st, "4242\n");
	CHECK_RC(gpmdb_bind_text(st, 1, "nope", -1), GPMDB_OK);
	ROWS_WANT(st, "");
	gpmdb_finalize(st);

	/* EXPLAIN of a bound statement */
	CHECK_RC(gpmdb_prepare(db, "EXPLAIN SELECT v FROM k WHERE id = ?", -1,
			       &st, NULL),
		 GPMDB_OK);
	CHECK_RC(gpmdb_bind_int(st, 1, 5), GPMDB_OK);
	{
		char *r = rows_of(st);
		CHECKF(strstr(r, "SEARCH k USING INDEX") && strstr(r, "(id=?)"),
		       "%s", r);
		free(r);
	}
	gpmdb_finalize(st);
}

static void test_ranges_and_order(void)
{
	gpmdb_stmt *st = NULL;

	CHECK_RC(gpmdb_prepare(db,
			       "SELECT id FROM k WHERE id BETWEEN ? AND ? AND "
			       "v % 2 = 0",
			       -1, &st, NULL),
		 GPMDB_OK);
	CHECK_RC(gpmdb_bind_int(st, 1, 100), GPMDB_OK);
	CHECK_RC(gpmdb_bind_int(st, 2, 105), GPMDB_OK);
	ROWS_WANT(st, "100\n102\n104\n");
	CHECK_RC(gpmdb_bind_double(st, 1, 198.5), GPMDB_OK);
	CHECK_RC(gpmdb_bind_double(st, 2, 202.5), GPMDB_OK);
	ROWS_WANT(st, "200\n202\n");
	gpmdb_finalize(st);

	CHECK_RC(gpmdb_prepare(db,
			       "SELECT id FROM k WHERE v = ? ORDER BY id DESC "
			       "LIMIT ? OFFSET ?",
			       -1, &st, NULL),
		 GPMDB_OK);
	CHECK_RC(gpmdb_bind_int(st, 1, 5), GPMDB_OK);
	CHECK_RC(gpmdb_bind_int(st, 2, 3), GPMDB_OK);
	CHECK_RC(gpmdb_bind_int(st, 3, 1), GPMDB_OK);
	ROWS_WANT(st, "198005\n197005\n196005\n");
	gpmdb_finalize(st);

	/* in order and stopping early: the first rows of a 200k-row table */
	explain_has("SELECT id FROM k ORDER BY id LIMIT 2",
		    "SCAN k USING INDEX");
	XQ_WANT(db, "SELECT id, t FROM k ORDER BY id DESC LIMIT 2",
		"199999|k199999\n199998|k199998\n");
	/* NULLs first ascending, as SQLite */
	XQ_WANT(db, "SELECT t FROM k ORDER BY t LIMIT 3", "NULL\nNULL\nk0\n");
	/* a filter that keeps few rows: the chunks grow until enough */
	XQ_WANT(db,
		"SELECT id FROM k WHERE v = 999 AND t LIKE '%99' ORDER BY id "
		"LIMIT 2",
		"999\n1999\n");
	XQ_WANT(db, "SELECT id FROM k WHERE t > 'k99998' ORDER BY t LIMIT 5",
		"99999\n");
	explain_has("SELECT id FROM k WHERE t IN ('k5', 'k6', 'k5')",
		    "SEARCH k USING INDEX kt (t=?)");
	XQ_WANT(db, "SELECT id FROM k WHERE t IN ('k5', 'k6', 'k5')", "5\n6\n");
	explain_has("SELECT count(*) FROM k WHERE v < 500", "SCAN k  ");
}

static void test_explain_analyze_rows(void)
{
	char *r = xq(db, "EXPLAIN ANALYZE SELECT id FROM k WHERE v = 17 AND "
			 "id > 100000");

	/* kv gives 200 row ids, the filter keeps 100 */
	CHECKF(strstr(r, "SEARCH k USING INDEX kv (v=?)") &&
		   strstr(r, "[index rows=200]"),
	       "%s", r);
	free(r);
}

/* A correlated subquery's key from the outer row: one search per outer
 * row (calls=5), not a scan kept and filtered per row. */
static void test_correlated_key(void)
{
	const char *q = "SELECT v, (SELECT t FROM k AS k2 WHERE k2.id = k.v + "
			"0 * 0 OR k2.id = -1) FROM k WHERE id < 3";
	char *r;

	XQ_WANT(db,
		"SELECT v, (SELECT t FROM k AS k2 WHERE k2.id = k.v) FROM k "
		"WHERE id < 5",
		"0|k0\n1|k1\n2|k2\n3|k3\n4|k4\n");
	r = xq(db, "EXPLAIN ANALYZE SELECT v, (SELECT t FROM k AS k2 WHERE "
		   "k2.id = k.v) FROM k WHERE id < 5");
	CHECKF(strstr(r, "SEARCH k USING INDEX sqlite_autoindex_k_1 (id=?)") &&
		   strstr(r, "calls=5") && strstr(r, "[index rows=5]"),
	       "%s", r);
	free(r);
	/* no key in an OR: the scan, kept across the outer rows */
	XQ_WANT(db, q, "0|k0\n1|k1\n2|k2\n");
	/* a constant key beside a correlated term: the scan is kept across
	 * the rows (filter_corr) rather than searched again per row */
	r = xq(db, "EXPLAIN ANALYZE SELECT id, (SELECT count(*) FROM k AS k2 "
		   "WHERE k2.v = 5 AND k2.t > k.t) FROM k WHERE id < 3");
	CHECKF(!strstr(r, "USING INDEX kv"), "%s", r);
	free(r);
	/* ORDER BY ... LIMIT under a correlated filter: no ordered read
	 * (it could go through the whole index for every outer row) */
	r = xq(db,
	       "EXPLAIN ANALYZE SELECT id, (SELECT k2.t FROM k AS k2 WHERE "
	       "k2.v = k.v ORDER BY k2.id DESC LIMIT 1) FROM k WHERE id < 3");
	CHECKF(!strstr(r, "SCAN k USING INDEX"), "%s", r);
	free(r);
	XQ_WANT(
	    db,
	    "SELECT id, (SELECT k2.t FROM k AS k2 WHERE k2.v = k.v ORDER BY "
	    "k2.id DESC LIMIT 1) FROM k WHERE id < 3",
	    "0|k199000\n1|k199001\n2|k199002\n");
	XQ_WANT(db,
		"SELECT id, (SELECT count(*) FROM k AS k2 WHERE k2.v = 5 AND "
		"k2.t > k.t) FROM k WHERE id < 3",
		"0|200\n1|200\n2|89\n");
}

/* Keys computed when the read runs: arithmetic over parameters, an
 * uncorrelated scalar subquery (checked under the sanitizers: the text
 * they hold is freed). */
static void test_computed_keys(void)
{
	gpmdb_stmt *st = NULL;

	CHECK_RC(gpmdb_prepare(db, "SELECT v, t FROM k WHERE id = ? + 1", -1,
			       &st, NULL),
		 GPMDB_OK);
	CHECK_RC(gpmdb_bind_int(st, 1, 41), GPMDB_OK);
	ROWS_WANT(st, "42|k42\n");
	CHECK_RC(gpmdb_bind_int(st, 1, 1233), GPMDB_OK);
	ROWS_WANT(st, "234|k1234\n");
	gpmdb_finalize(st);
	CHECK_RC(gpmdb_prepare(db, "SELECT id FROM k WHERE t = 'k' || ?", -1,
			       &st, NULL),
		 GPMDB_OK);
	CHECK_RC(gpmdb_bind_int(st, 1, 777), GPMDB_OK);
	ROWS_WANT(st, "777\n");
	gpmdb_finalize(st);
	explain_has("SELECT id FROM k WHERE id = (SELECT max(v) FROM k WHERE "
		    "id < 10)",
		    "SEARCH k USING INDEX sqlite_autoindex_k_1 (id=?)");
	XQ_WANT(db,
		"SELECT id FROM k WHERE id = (SELECT max(v) FROM k WHERE id < "
		"10)",
		"9\n");
	XQ_WANT(db,
		"SELECT id FROM k WHERE id = (SELECT v FROM k WHERE id < 0)",
		"");
}

static void test_dml_by_key(void)
{
	gpmdb_stmt *st = NULL;

	CHECK(!xq_exec(db, "BEGIN"));
	CHECK_RC(gpmdb_prepare(db, "UPDATE k SET v = v + ? WHERE id = ?", -1,
			       &st, NULL),
		 GPMDB_OK);
	for (int i = 0; i < 50; i++) {
		CHECK_RC(gpmdb_bind_int(st, 1, 1000000), GPMDB_OK);
		CHECK_RC(gpmdb_bind_int(st, 2, i * 1000 + 3), GPMDB_OK);
		CHECK_RC(gpmdb_step(st), GPMDB_DONE);
		gpmdb_reset(st);
	}
	gpmdb_finalize(st);
	XQ_WANT(db,
		"SELECT count(*), min(id), max(id) FROM k WHERE v >= 1000000",
		"50|3|49003\n");
	CHECK(!xq_exec(db, "DELETE FROM k WHERE id BETWEEN 10 AND 19"));
	XQ_WANT(db, "SELECT count(*) FROM k WHERE id < 30", "20\n");
	CHECK(!xq_exec(db, "ROLLBACK"));
	XQ_WANT(db, "SELECT count(*) FROM k WHERE id < 30", "30\n");
	XQ_WANT(db, "SELECT v FROM k WHERE id = 3", "3\n");

	/* the batch path: bound keys matched through the primary key (a
	 * key twice: the last row wins, both count; missing keys count 0) */
	int64_t keys[4] = {5, 6, 5, 900000};
	int32_t vals[4] = {-1, -2, -3, -4};
	CHECK(!xq_exec(db, "BEGIN"));
	CHECK_RC(
	    gpmdb_prepare(db, "UPDATE k SET v = ? WHERE id = ?", -1, &st, NULL),
	    GPMDB_OK);
	CHECK_RC(gpmdb_bind_array_int32(st, 1, vals, 4, NULL), GPMDB_OK);
	CHECK_RC(gpmdb_bind_array_int64(st, 2, keys, 4, NULL), GPMDB_OK);
	CHECK_RC(gpmdb_step(st), GPMDB_DONE);
	CHECK(gpmdb_changes(db) == 3);
	gpmdb_finalize(st);
	XQ_WANT(db, "SELECT id, v FROM k WHERE id IN (5, 6)", "5|-3\n6|-2\n");
	CHECK_RC(gpmdb_prepare(db, "DELETE FROM k WHERE id = ?", -1, &st, NULL),
		 GPMDB_OK);
	CHECK_RC(gpmdb_bind_array_int64(st, 1, keys, 4, NULL), GPMDB_OK);
	CHECK_RC(gpmdb_step(st), GPMDB_DONE);
	gpmdb_finalize(st);
	XQ_WANT(db, "SELECT count(*) FROM k WHERE id < 10", "8\n");
	CHECK(!xq_exec(db, "ROLLBACK"));
	XQ_WANT(db, "SELECT count(*) FROM k WHERE id < 10", "10\n");
}

/* A prepared point query: microseconds, not a scan of 200k rows. */
static void test_point_speed(void)
{
	gpmdb_stmt *st = NULL;
	long long sum = 0, want = 0;
	int n = 20000;
	double t0, dt;

	CHECK_RC(
	    gpmdb_prepare(db, "SELECT v FROM k WHERE id = ?", -1, &st, NULL),
	    GPMDB_OK);
	t0 = now_s();
	for (int i = 0; i < n; i++) {
		int64_t id = (int64_t)((uint64_t)i * 2654435761u % NROWS);
		gpmdb_bind_int64(st, 1, id);
		if (gpmdb_step(st) == GPMDB_ROW)
			sum += gpmdb_column_int(st, 0);
		want += id % 1000;
		gpmdb_reset(st);
	}
	dt = now_s() - t0;
	gpmdb_finalize(st);
	CHECK(sum == want);
	printf("# point SELECT by key on %d rows: %.2f us each\n", NROWS,
	       dt / n * 1e6);
	/* generous (a loaded machine): a scan is ~1000 us, several times
	 * that under the sanitizers, which slow the statement's mallocs */
#ifdef __SANITIZE_ADDRESS__
	double limit = 1500e-6;
#else
	double limit = 200e-6;
#endif
	CHECKF(dt / n < limit, "%.1f us per point query", dt / n * 1e6);
}

int main(void)
{
	open_db();
	TEST_RUN(test_point_bindings);
	TEST_RUN(test_ranges_and_order);
	TEST_RUN(test_explain_analyze_rows);
	TEST_RUN(test_correlated_key);
	TEST_RUN(test_computed_keys);
	TEST_RUN(test_dml_by_key);
	TEST_RUN(test_point_speed);
	close_db();
	TEST_MAIN_END();
}
