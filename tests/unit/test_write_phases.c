/*
 * test_write_phases.c - the phases of a write (issue 16, docs/engine.md
 * "Write phases"), CPU backend: EXPLAIN ANALYZE of INSERT, UPDATE (by a
 * predicate and by key through an index), DELETE and of array-bound
 * batches runs the write and shows its plan with figures and one line
 * per phase; the phases are all there, in order, not negative, and add up
 * to the statement's wall time, which lies inside the time the test
 * measured around it; the data phase's bytes are what the rows hold; the
 * rows really are written, and not when the transaction rolls back;
 * PRAGMA gpu_write_stats gives the same phases (gpmdb_append_columns
 * too).  Times are only checked for shape and sums, never for speed.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"

#include "gpu/xq.h"

#define NPH 11
static const char *ph_names[NPH] = {"bind_convert", "key_check",
				    "row_location", "reservation",
				    "upload",	    "log",
				    "data",	    "persist",
				    "commit",	    "index_maintenance",
				    "other"};
enum { P_BIND, P_KEY, P_LOC, P_RES, P_UP, P_LOG, P_DATA, P_PERS, P_COMMIT };

static gpmdb *db;
static char path[256];

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* What EXPLAIN ANALYZE of a write said. */
typedef struct {
	char head[256];
	long long rows;
	double ms; /* the head's wall time */
	double ph_ms[NPH];
	long long ph_bytes[NPH];
	int nph;
	char *text;
} xa;

/*
 * Runs sql (an EXPLAIN ANALYZE of a write) and parses its text: the head
 * line "OP  cpu [rows=R time=T ms]", plan lines, then exactly the
 * NPH phase lines "PHASE name [time=X ms bytes=N]" in order.  Checks the
 * shape, the times (not negative; their sum is T within the rounding of
 * three decimals; T within the time measured around the call), and that
 * gpmdb_changes says R.  Returns 0 when the shape is right.
 */
static int run_xa(const char *sql, const char *op, xa *o)
{
	double t0 = now_ms(), wall, sum = 0;
	const char *p;
	int k = 0, bad = 0;

	memset(o, 0, sizeof(*o));
	o->text = xq(db, sql);
	wall = now_ms() - t0;
	if (!strncmp(o->text, "ERROR", 5)) {
		fprintf(stderr, "# %s: %s\n", sql, o->text);
		return -1;
	}
	p = o->text;
	const char *nl = strchr(p, '\n');
	snprintf(o->head, sizeof(o->head), "%.*s", nl ? (int)(nl - p) : 0, p);
	/* the head's column: the backend that wrote, its figures */
	char col[256];
	if (strncmp(o->head, op, strlen(op)) ||
	    !xq_explain_col(o->head, op, col, sizeof(col)) ||
	    sscanf(col, "cpu [rows=%lld time=%lf ms]", &o->rows, &o->ms) != 2)
		bad = 1;
	for (p = nl ? nl + 1 : ""; *p; p = strchr(p, '\n') + 1) {
		char name[64];
		double ms;
		long long b;
		int n = 0;

		if (strncmp(p, "PHASE ", 6)) {
			if (k) /* no plan line after the phases */
				bad = 1;
			continue;
		}
		if (sscanf(p, "PHASE %63s [time=%lf ms bytes=%lld]%n", name,
			   &ms, &b, &n) != 3 ||
		    p[n] != '\n' || k >= NPH || strcmp(name, ph_names[k]) ||
		    ms < 0 || b < 0) {
			bad = 1;
			break;
		}
		o->ph_ms[k] = ms;
		o->ph_bytes[k++] = b;
		sum += ms;
	}
	o->nph = k;
	/* each figure is rounded to 0.001 ms; the head's time is the
	 * statement's, inside what the test measured */
	if (k != NPH || sum > o->ms + NPH * 0.0005 + 1e-9 ||
	    sum < o->ms - NPH * 0.0005 - 1e-9 || o->ms < 0 ||
	    o->ms > wall + 0.001 || gpmdb_changes(db) != o->rows)
		bad = 1;
	if (bad)
		fprintf(stderr,
			"# bad EXPLAIN ANALYZE (wall %.3f ms, sum %.3f "
			"ms):\n%s",
			wall, sum, o->text);
	return bad;
}

/* PRAGMA gpu_write_stats' value and bytes of a row (-1: none). */
static double stat_of(const char *name, long long *bytes)
{
	gpmdb_stmt *st = NULL;
	double v = -1;

	if (bytes)
		*bytes = -1;
	CHECK_RC(gpmdb_prepare(db, "PRAGMA gpu_write_stats", -1, &st, NULL),
		 GPMDB_OK);
	CHECK(gpmdb_column_count(st) == 3);
	CHECK(!strcmp(gpmdb_column_name(st, 2), "bytes"));
	while (gpmdb_step(st) == GPMDB_ROW)
		if (!strcmp((const char *)gpmdb_column_text(st, 0), name)) {
			v = gpmdb_column_double(st, 1);
			if (bytes && gpmdb_column_type(st, 2) != GPMDB_NULL)
				*bytes = gpmdb_column_int64(st, 2);
		}
	gpmdb_finalize(st);
	return v;
}

/* The pragma shows what the EXPLAIN ANALYZE just run showed. */
static void check_pragma(const xa *o)
{
	char name[64];
	long long b;

	for (int k = 0; k < NPH; k++) {
		snprintf(name, sizeof(name), "phase_%s", ph_names[k]);
		double ms = stat_of(name, &b);
		CHECKF(b == o->ph_bytes[k] && ms >= 0 &&
			   ms - o->ph_ms[k] < 0.0006 &&
			   o->ph_ms[k] - ms < 0.0006,
		       "%s: %.6f ms %lld bytes, EXPLAIN %.3f ms %lld", name, ms,
		       b, o->ph_ms[k], o->ph_bytes[k]);
	}
	double tot = stat_of("phase_total", &b);
	CHECKF(b == -1 && tot - o->ms < 0.0006 && o->ms - tot < 0.0006,
	       "total %.6f, EXPLAIN %.3f", tot, o->ms);
	CHECK(stat_of("last_write_rows", NULL) == (double)o->rows);
	CHECK(stat_of("last_write_gpu", NULL) == 0);
	/* the GPU counters are still there, without bytes */
	CHECK(stat_of("gpu_batches", &b) >= 0 && b == -1);
}

static void open_db(void)
{
	snprintf(path, sizeof(path), "/dev/shm/gpmdb_test_wp_%d.pool",
		 (int)getpid());
	unlink(path);
	CHECK_RC(gpmdb_open_v2(path, &db,
			       GPMDB_OPEN_READWRITE | GPMDB_OPEN_CREATE, NULL),
		 GPMDB_OK);
	CHECK(!xq_exec(db, "PRAGMA backend = cpu"));
	CHECK(!xq_exec(db, "CREATE TABLE t(id INTEGER PRIMARY KEY, v DOUBLE, "
			   "s TEXT)"));
}

static void t_insert(void)
{
	xa o;

	CHECK(!run_xa("EXPLAIN ANALYZE INSERT INTO t VALUES (1, 1.5, 'abc'), "
		      "(2, 2.5, 'de'), (3, NULL, NULL)",
		      "INSERT", &o));
	CHECK(o.rows == 3);
	/* the VALUES that ran, with its figures */
	CHECKF(xq_explain_has(o.text, "  VALUES (3 rows)", "cpu [rows=3 time="),
	       "%s", o.text);
	/* 3 rows x (8 + 8 + 8-byte text reference) + "abc" + "de"; the
	 * conversion adds the NULL bitmaps of v and s */
	CHECKF(o.ph_bytes[P_DATA] == 77, "%s", o.text);
	CHECKF(o.ph_bytes[P_BIND] == 77 + 4 + 4, "%s", o.text);
	CHECKF(o.ph_bytes[P_LOC] == 0 && o.ph_bytes[P_UP] == 0, "%s", o.text);
	/* a pool on /dev/shm is in pmem mode: storage flushes */
	CHECKF(o.ph_bytes[P_PERS] > 0, "%s", o.text);
	check_pragma(&o);
	free(o.text);
	XQ_WANT(db, "SELECT * FROM t ORDER BY id",
		"1|1.5|abc\n2|2.5|de\n3|NULL|NULL\n");
}

static void t_update_predicate(void)
{
	xa o;

	CHECK(!run_xa("EXPLAIN ANALYZE UPDATE t SET v = v * 2 WHERE v > 2",
		      "UPDATE", &o));
	CHECK(o.rows == 1);
	/* the row search ran as a pipeline */
	CHECKF(xq_explain_has(o.text, "FILTER (v > 2)", "cpu  pipeline 1 [") &&
		   xq_explain_has(o.text, "SCAN t",
				  "cpu  pipeline 1 source [rows=3 "),
	       "%s", o.text);
	/* one row id found, one DOUBLE written */
	CHECKF(o.ph_bytes[P_LOC] == 8 && o.ph_bytes[P_DATA] == 8, "%s", o.text);
	check_pragma(&o);
	free(o.text);
	XQ_WANT(db, "SELECT v FROM t WHERE id = 2", "5.0\n");
}

static void t_update_key(void)
{
	xa o;

	CHECK(!run_xa("EXPLAIN ANALYZE UPDATE t SET s = 'xyz' WHERE id = 1",
		      "UPDATE", &o));
	CHECK(o.rows == 1);
	CHECKF(xq_explain_has(o.text,
			      "SEARCH t USING INDEX sqlite_autoindex_t_1 "
			      "(id=?)",
			      "cpu [rows=1 "),
	       "%s", o.text);
	/* the text's reference and its 3 bytes */
	CHECKF(o.ph_bytes[P_LOC] == 8 && o.ph_bytes[P_DATA] == 11, "%s",
	       o.text);
	check_pragma(&o);
	free(o.text);
	/* no row: nothing located, nothing written */
	CHECK(!run_xa("EXPLAIN ANALYZE UPDATE t SET s = 'q' WHERE id = 99",
		      "UPDATE", &o));
	CHECK(o.rows == 0 && o.ph_bytes[P_DATA] == 0 && o.ph_bytes[P_LOC] == 0);
	free(o.text);
	XQ_WANT(db, "SELECT s FROM t WHERE id = 1", "xyz\n");
}

static void t_delete(void)
{
	xa o;

	CHECK(!run_xa("EXPLAIN ANALYZE DELETE FROM t WHERE id = 3", "DELETE",
		      &o));
	CHECK(o.rows == 1);
	/* a row id, a deleted bit (a byte) */
	CHECKF(o.ph_bytes[P_LOC] == 8 && o.ph_bytes[P_DATA] == 1, "%s", o.text);
	check_pragma(&o);
	free(o.text);
	XQ_WANT(db, "SELECT count(*) FROM t", "2\n");
}

/* The text of EXPLAIN ANALYZE sql with two rows of arrays bound: vals
 * (DOUBLE) to ?1, keys to ?2. */
static void explain_arrays(gpmdb *d, const char *sql, const double *vals,
			   const int64_t *keys, char *text, size_t size)
{
	gpmdb_stmt *st = NULL;
	size_t n = 0;

	text[0] = 0;
	CHECK_RC(gpmdb_prepare(d, sql, -1, &st, NULL), GPMDB_OK);
	if (!st)
		return;
	CHECK_RC(gpmdb_bind_array_double(st, 1, vals, 2, NULL), GPMDB_OK);
	CHECK_RC(gpmdb_bind_array_int64(st, 2, keys, 2, NULL), GPMDB_OK);
	while (gpmdb_step(st) == GPMDB_ROW && n < size)
		n += (size_t)snprintf(text + n, size - n, "%s\n",
				      gpmdb_column_text(st, 0));
	gpmdb_finalize(st);
}

/* EXPLAIN ANALYZE of array-bound statements: the set-at-a-time paths
 * run no plan and say which path ran; gpmdb_append_columns' phases are
 * in the pragma. */
static void t_batch(void)
{
	static const int64_t ids[4] = {10, 11, 12, 13};
	static const double vs[4] = {1, 2, 3, 4};
	static const char *const ss[4] = {"a", "bb", NULL, "dddd"};
	gpmdb_stmt *st = NULL;
	char text[4096] = "", *r;
	size_t n = 0;

	CHECK_RC(gpmdb_prepare(db,
			       "EXPLAIN ANALYZE INSERT INTO t VALUES (?, "
			       "?, ?)",
			       -1, &st, NULL),
		 GPMDB_OK);
	CHECK_RC(gpmdb_bind_array_int64(st, 1, ids, 4, NULL), GPMDB_OK);
	CHECK_RC(gpmdb_bind_array_double(st, 2, vs, 4, NULL), GPMDB_OK);
	CHECK_RC(gpmdb_bind_array_text(st, 3, ss, 4, NULL), GPMDB_OK);
	while (gpmdb_step(st) == GPMDB_ROW)
		n += (size_t)snprintf(text + n, sizeof(text) - n, "%s\n",
				      gpmdb_column_text(st, 0));
	gpmdb_finalize(st);
	CHECKF(!strncmp(text, "INSERT  ", 8) &&
		   xq_explain_has(text, "INSERT", "cpu [rows=4 time=") &&
		   strstr(text, "\n  BATCH 4 parameter rows converted in one "
				"pass\nPHASE bind_convert [time="),
	       "%s", text);
	/* 4 x 24 bytes and 1 + 2 + 4 bytes of text */
	CHECKF(strstr(text, "\nPHASE data [time=") &&
		   strstr(strstr(text, "\nPHASE data [time="), " bytes=103]\n"),
	       "%s", text);
	XQ_WANT(db, "SELECT id, v, s FROM t WHERE id >= 10 ORDER BY id",
		"10|1.0|a\n11|2.0|bb\n12|3.0|NULL\n13|4.0|dddd\n");
	/* an UPDATE by array-bound keys */
	static const int64_t keys[2] = {11, 13};
	static const double nv[2] = {20, 40};
	explain_arrays(db, "EXPLAIN ANALYZE UPDATE t SET v = ? WHERE id = ?",
		       nv, keys, text, sizeof(text));
	CHECKF(!strncmp(text, "UPDATE  ", 8) &&
		   xq_explain_has(text, "UPDATE", "cpu [rows=2 time=") &&
		   strstr(text, "\n  BATCH 2 keys ") &&
		   strstr(text, "\nPHASE row_location [time=") &&
		   strstr(strstr(text, "\nPHASE row_location [time="),
			  " bytes=16]\n") &&
		   strstr(strstr(text, "\nPHASE data [time="), " bytes=16]\n"),
	       "%s", text);
	XQ_WANT(db, "SELECT sum(v) FROM t WHERE id >= 10", "64.0\n");
	/* an expression over a parameter: row by row, each row planned */
	static const double inc[2] = {1, 2};
	explain_arrays(db,
		       "EXPLAIN ANALYZE UPDATE t SET v = v + ? WHERE id = ?",
		       inc, keys, text, sizeof(text));
	CHECKF(!strncmp(text, "UPDATE  ", 8) &&
		   xq_explain_has(text, "UPDATE", "cpu [rows=2 time=") &&
		   strstr(text, "\n  BATCH 2 rows one by one (the last one's "
				"plan)\n") &&
		   xq_explain_has(text,
				  "SEARCH t USING INDEX sqlite_autoindex_t_1 "
				  "(id=?)",
				  "cpu [rows=1 ") &&
		   strstr(strstr(text, "\nPHASE data [time="), " bytes=16]\n"),
	       "%s", text);
	XQ_WANT(db, "SELECT sum(v) FROM t WHERE id >= 10", "67.0\n");
	/* plain EXPLAIN with arrays: still refused */
	CHECK_RC(gpmdb_prepare(db, "EXPLAIN INSERT INTO t VALUES (?, 0, '')",
			       -1, &st, NULL),
		 GPMDB_OK);
	CHECK_RC(gpmdb_bind_array_int64(st, 1, ids, 4, NULL), GPMDB_OK);
	CHECK_RC(gpmdb_step(st), GPMDB_MISUSE);
	CHECKF(strstr(gpmdb_errmsg(db), "not EXPLAIN INSERT"), "%s",
	       gpmdb_errmsg(db));
	gpmdb_finalize(st);
	/* columnar append: an INSERT's phases, in the pragma */
	static const int64_t aid[3] = {20, 21, 22};
	static const double av[3] = {0.5, 0.25, 0.125};
	static const char *const as[3] = {"x", "yy", "zzz"};
	gpmdb_column_array arr[3] = {{GPMDB_ARRAY_INT64, aid, NULL},
				     {GPMDB_ARRAY_DOUBLE, av, NULL},
				     {GPMDB_ARRAY_TEXT, as, NULL}};
	long long b;
	CHECK_RC(gpmdb_append_columns(db, "t", 3, NULL, arr, 3), GPMDB_OK);
	CHECK(stat_of("last_write_rows", NULL) == 3);
	CHECK(stat_of("phase_data", &b) >= 0 && b == 3 * 24 + 6);
	CHECK(stat_of("phase_bind_convert", &b) >= 0 && b == 3 * 24 + 6);
	CHECK(stat_of("phase_commit", &b) >= 0 && b == 0);
	double sum = 0, tot = stat_of("phase_total", NULL);
	char name[64];
	for (int k = 0; k < NPH; k++) {
		snprintf(name, sizeof(name), "phase_%s", ph_names[k]);
		sum += stat_of(name, NULL);
	}
	CHECKF(tot > 0 && sum > tot - 1e-6 && sum < tot + 1e-6,
	       "phases %.6f ms, total %.6f ms", sum, tot);
	r = xq(db, "SELECT count(*) FROM t WHERE id >= 20");
	CHECKF(!strcmp(r, "3\n"), "%s", r);
	free(r);
}

/* Inside BEGIN the write is a savepoint's: ROLLBACK undoes it. */
static void t_rollback(void)
{
	xa o;
	char *before = xq(db, "SELECT * FROM t ORDER BY id");

	CHECK(!xq_exec(db, "BEGIN"));
	CHECK(!run_xa("EXPLAIN ANALYZE INSERT INTO t VALUES (30, 3.0, 'r')",
		      "INSERT", &o));
	CHECK(o.rows == 1 && o.ph_bytes[P_DATA] == 25);
	free(o.text);
	CHECK(!run_xa("EXPLAIN ANALYZE DELETE FROM t", "DELETE", &o));
	CHECK(o.rows == 10);
	free(o.text);
	XQ_WANT(db, "SELECT count(*) FROM t", "0\n");
	CHECK(!xq_exec(db, "ROLLBACK"));
	char *after = xq(db, "SELECT * FROM t ORDER BY id");
	CHECKF(!strcmp(before, after), "before:\n%safter:\n%s", before, after);
	free(before);
	free(after);
}

static void t_errors(void)
{
	xa o;

	/* an error of the write is the statement's, and nothing is written */
	XQ_WANT(db, "EXPLAIN ANALYZE INSERT INTO t VALUES (1, 0, 'dup')",
		"ERROR: UNIQUE constraint failed: t.id");
	CHECK(stat_of("last_write_rows", NULL) == 0);
	XQ_WANT(db, "SELECT s FROM t WHERE id = 1", "xyz\n");
	XQ_WANT(db, "EXPLAIN ANALYZE UPDATE nosuch SET a = 1",
		"ERROR: no such table: nosuch");
	/* statements that write no rows have no phases */
	XQ_WANT(db, "EXPLAIN ANALYZE CREATE TABLE z(a INTEGER)",
		"ERROR: EXPLAIN ANALYZE supports SELECT, INSERT, UPDATE and "
		"DELETE, not CREATE TABLE");
	/* nor do they touch the last write's */
	CHECK(!run_xa("EXPLAIN ANALYZE UPDATE t SET v = 1 WHERE id = 2",
		      "UPDATE", &o));
	free(o.text);
	CHECK(!xq_exec(db, "CREATE TABLE z(a INTEGER)"));
	CHECK(!xq_exec(db, "SELECT count(*) FROM t"));
	CHECK(stat_of("last_write_rows", NULL) == 1);
}

/* A prepared EXPLAIN ANALYZE runs the write again at each step after a
 * reset, with fresh figures. */
static void t_prepared(void)
{
	gpmdb_stmt *st = NULL;

	CHECK_RC(gpmdb_prepare(db,
			       "EXPLAIN ANALYZE UPDATE t SET v = v + 1 "
			       "WHERE id <= ?",
			       -1, &st, NULL),
		 GPMDB_OK);
	for (int run = 0; run < 3; run++) {
		char want[64];
		int lim = run == 1 ? 2 : 11; /* rows 1, 2 or 1, 2, 10, 11 */
		snprintf(want, sizeof(want), "cpu [rows=%d ", run == 1 ? 2 : 4);
		CHECK_RC(gpmdb_bind_int64(st, 1, lim), GPMDB_OK);
		CHECK_RC(gpmdb_step(st), GPMDB_ROW);
		CHECKF(xq_explain_has((const char *)gpmdb_column_text(st, 0),
				      "UPDATE", want),
		       "run %d: %s", run, gpmdb_column_text(st, 0));
		while (gpmdb_step(st) == GPMDB_ROW)
			;
		CHECK_RC(gpmdb_reset(st), GPMDB_OK);
	}
	gpmdb_finalize(st);
	XQ_WANT(db, "SELECT v FROM t WHERE id = 2", "4.0\n");
}

/* backend=gpu without a GPU: a batch of bound keys large enough for the
 * GPU's pass over the key column is declined with its reason and found on
 * the CPU, the same rows as with backend=cpu; PRAGMA gpu_key_match. */
static void t_key_match_no_gpu(void)
{
	enum { NK = 20000 };
	int64_t *k = malloc(8 * NK), *v = malloc(8 * NK);
	gpmdb_stmt *st = NULL;
	char *r;

	CHECK(k && v);
	if (!k || !v)
		goto out;
	CHECK(!xq_exec(db, "CREATE TABLE km (k BIGINT, v BIGINT)"));
	{
		int64_t *tk = malloc(8 * 30000), *tv = calloc(30000, 8);

		CHECK(tk && tv);
		for (int i = 0; tk && i < 30000; i++)
			tk[i] = i + 1;
		gpmdb_column_array arr[2] = {{GPMDB_ARRAY_INT64, tk, NULL},
					     {GPMDB_ARRAY_INT64, tv, NULL}};
		if (tk && tv)
			CHECK_RC(
			    gpmdb_append_columns(db, "km", 2, NULL, arr, 30000),
			    GPMDB_OK);
		free(tk);
		free(tv);
	}
	for (int i = 0; i < NK; i++) {
		k[i] = i % 4 == 1 ? -i : 2 * i + 1; /* a quarter absent */
		v[i] = i;
	}
	CHECK(!xq_exec(db, "PRAGMA backend = gpu"));
	double d0 = stat_of("key_match_declined", NULL);
	CHECK_RC(
	    gpmdb_prepare(db, "UPDATE km SET v = ? WHERE k = ?", -1, &st, NULL),
	    GPMDB_OK);
	CHECK_RC(gpmdb_bind_array_int64(st, 1, v, NK, NULL), GPMDB_OK);
	CHECK_RC(gpmdb_bind_array_int64(st, 2, k, NK, NULL), GPMDB_OK);
	CHECK_RC(gpmdb_step(st), GPMDB_DONE);
	gpmdb_finalize(st);
	/* keys 2i+1 < 30001 (i < 15000), three quarters of them */
	CHECKF(gpmdb_changes(db) == 11250, "changes %lld", gpmdb_changes(db));
	CHECK(stat_of("key_match_declined", NULL) == d0 + 1);
	CHECK(stat_of("key_match_batches", NULL) == 0);
	CHECK(stat_of("key_match_declined_because: no GPU", NULL) == 0);
	CHECK(!xq_exec(db, "PRAGMA backend = cpu"));
	XQ_WANT(db, "SELECT count(*), sum(v) FROM km WHERE v > 0",
		"11249|84371250\n");
	XQ_WANT(db, "PRAGMA gpu_key_match", "pass\n");
	CHECK(!xq_exec(db, "PRAGMA gpu_key_match = probe"));
	XQ_WANT(db, "PRAGMA gpu_key_match", "probe\n");
	r = xq(db, "PRAGMA gpu_key_match = always");
	CHECKF(strstr(r, "gpu_key_match is pass or probe"), "%s", r);
	free(r);
	CHECK(!xq_exec(db, "PRAGMA gpu_key_match = pass"));
out:
	free(k);
	free(v);
}

int main(void)
{
	open_db();
	TEST_RUN(t_insert);
	TEST_RUN(t_update_predicate);
	TEST_RUN(t_update_key);
	TEST_RUN(t_delete);
	TEST_RUN(t_batch);
	TEST_RUN(t_rollback);
	TEST_RUN(t_errors);
	TEST_RUN(t_prepared);
	TEST_RUN(t_key_match_no_gpu);
	gpmdb_close(db);
	unlink(path);
	TEST_MAIN_END();
}
