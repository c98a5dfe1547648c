/*
 * test_batch_api.c - the batch C API (gpmdb.h): array binding of INSERT,
 * UPDATE and DELETE (fast paths and the row-wise path), NULLs, an error
 * at parameter row k undoing the whole batch (inside and outside BEGIN),
 * lengths that differ, columnar append and its type errors, columnar
 * results of each type, large batches checked by aggregates.
 */
#include "harness.h"
#include "sql_util.h"

#include "gpmdb.h"

#include <stdbool.h>
#include <stdint.h>
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

static gpmdb_stmt *prep(gpmdb *db, const char *sql)
{
	gpmdb_stmt *st = NULL;

	CHECK_RC(gpmdb_prepare(db, sql, -1, &st, NULL), GPMDB_OK);
	CHECK(st != NULL);
	return st;
}

static void test_insert_basic(void)
{
	gpmdb *db = su_open(path);
	int64_t id[5] = {1, 2, 3, 4, 5};
	double x[5] = {0.5, 1.5, 2.5, 3.5, 4.5};
	const char *name[5] = {"a", "bb", NULL, "dddd", "e"};
	uint8_t xnull[5] = {0, 0, 0, 1, 0};
	int32_t small[5] = {10, 20, 30, 40, 50};

	CHECK_RC(su_exec(db, "CREATE TABLE t(id INTEGER PRIMARY KEY, x REAL, "
			     "name TEXT, s INT, tag TEXT DEFAULT 'dflt')"),
		 GPMDB_OK);
	gpmdb_stmt *st = prep(db, "INSERT INTO t(id, x, name, s) VALUES "
				  "(?, ?, ?, ?)");
	CHECK_RC(gpmdb_bind_array_int64(st, 1, id, 5, NULL), GPMDB_OK);
	CHECK_RC(gpmdb_bind_array_double(st, 2, x, 5, xnull), GPMDB_OK);
	CHECK_RC(gpmdb_bind_array_text(st, 3, name, 5, NULL), GPMDB_OK);
	CHECK_RC(gpmdb_bind_array_int32(st, 4, small, 5, NULL), GPMDB_OK);
	CHECK_RC(gpmdb_step(st), GPMDB_DONE);
	CHECK(gpmdb_changes(db) == 5);
	CHECK_SCALAR(db, "SELECT count(*) FROM t", "5");
	CHECK_SCALAR(db, "SELECT sum(x) FROM t", "9.0");
	CHECK_SCALAR(db, "SELECT count(x) FROM t", "4");
	CHECK_SCALAR(db, "SELECT count(name) FROM t", "4");
	CHECK_SCALAR(db, "SELECT name FROM t WHERE id = 4", "dddd");
	CHECK_SCALAR(db, "SELECT sum(s) FROM t", "150");
	CHECK_SCALAR(db, "SELECT count(*) FROM t WHERE tag = 'dflt'", "5");
	/* again after reset, other keys: the binding stays */
	for (int i = 0; i < 5; i++)
		id[i] += 100;
	CHECK_RC(gpmdb_reset(st), GPMDB_OK);
	CHECK_RC(gpmdb_step(st), GPMDB_DONE);
	CHECK_SCALAR(db, "SELECT count(*) FROM t", "10");
	gpmdb_finalize(st);

	/* scalars broadcast; literals too; text that looks like a number */
	const char *nums[3] = {"7", "8", "9"};
	st = prep(db, "INSERT INTO t VALUES (?, ?, 'lit', -3, ?)");
	CHECK_RC(gpmdb_bind_array_text(st, 1, nums, 3, NULL), GPMDB_OK);
	CHECK_RC(gpmdb_bind_double(st, 2, 2.0), GPMDB_OK);
	CHECK_RC(gpmdb_step(st), GPMDB_DONE);
	CHECK(gpmdb_changes(db) == 3);
	CHECK_SCALAR(db, "SELECT sum(id) FROM t WHERE name = 'lit'", "24");
	CHECK_SCALAR(db, "SELECT sum(x) FROM t WHERE name = 'lit'", "6.0");
	CHECK_SCALAR(db, "SELECT count(tag) FROM t WHERE name = 'lit'", "0");
	gpmdb_finalize(st);

	/* an empty batch */
	st = prep(db, "INSERT INTO t(id) VALUES (?)");
	CHECK_RC(gpmdb_bind_array_int64(st, 1, id, 0, NULL), GPMDB_OK);
	CHECK_RC(gpmdb_step(st), GPMDB_DONE);
	CHECK(gpmdb_changes(db) == 0);
	gpmdb_finalize(st);
	CHECK_SCALAR(db, "SELECT count(*) FROM t", "13");
	gpmdb_close(db);
}

/* An error at row k undoes the batch; the message names k. */
static void test_insert_errors(void)
{
	gpmdb *db = su_open(path);
	enum { N = 40 };
	int64_t id[N];
	const char *v[N];
	uint8_t vn[N] = {0};

	CHECK_RC(su_exec(db, "CREATE TABLE t(id INTEGER PRIMARY KEY, "
			     "v TEXT NOT NULL, n INTEGER)"),
		 GPMDB_OK);
	CHECK_RC(su_exec(db, "INSERT INTO t VALUES (1000, 'old', 0)"),
		 GPMDB_OK);
	for (int i = 0; i < N; i++) {
		id[i] = i;
		v[i] = "x";
	}
	gpmdb_stmt *st = prep(db, "INSERT INTO t(id, v) VALUES (?, ?)");
	CHECK_RC(gpmdb_bind_array_int64(st, 1, id, N, NULL), GPMDB_OK);
	CHECK_RC(gpmdb_bind_array_text(st, 2, v, N, vn), GPMDB_OK);

	/* NOT NULL at row 17 (and 30: the lowest is named) */
	vn[17] = 1;
	vn[30] = 1;
	CHECK_RC(gpmdb_step(st), GPMDB_CONSTRAINT);
	CHECK_MSG(db, "NOT NULL constraint failed: t.v (parameter row 17)");
	CHECK_SCALAR(db, "SELECT count(*) FROM t", "1");
	vn[17] = vn[30] = 0;

	/* duplicate key inside the batch: the second one fails */
	gpmdb_reset(st);
	id[23] = 5;
	CHECK_RC(gpmdb_step(st), GPMDB_CONSTRAINT);
	CHECK_MSG(db, "UNIQUE constraint failed: t.id (t.id = 5) (parameter "
		      "row 23)");
	CHECK_SCALAR(db, "SELECT count(*) FROM t", "1");
	id[23] = 23;

	/* duplicate of a row already in the table */
	gpmdb_reset(st);
	id[31] = 1000;
	CHECK_RC(gpmdb_step(st), GPMDB_CONSTRAINT);
	CHECK_MSG(db, "UNIQUE constraint failed: t.id (t.id = 1000) (parameter "
		      "row 31)");
	CHECK_SCALAR(db, "SELECT count(*) FROM t", "1");
	id[31] = 31;
	gpmdb_finalize(st);

	/* type mismatch at row 12 */
	const char *nv[N];
	for (int i = 0; i < N; i++)
		nv[i] = "12";
	nv[12] = "abc";
	st = prep(db, "INSERT INTO t VALUES (?, 'x', ?)");
	CHECK_RC(gpmdb_bind_array_int64(st, 1, id, N, NULL), GPMDB_OK);
	CHECK_RC(gpmdb_bind_array_text(st, 2, nv, N, NULL), GPMDB_OK);
	CHECK_RC(gpmdb_step(st), GPMDB_MISMATCH);
	CHECK_MSG(db, "cannot store TEXT 'abc' in a INTEGER column");
	CHECK_MSG(db, "t.n");
	CHECK_MSG(db, "(parameter row 12)");
	CHECK_SCALAR(db, "SELECT count(*) FROM t", "1");

	/* inside BEGIN: the batch is undone, the transaction goes on */
	CHECK_RC(su_exec(db, "BEGIN"), GPMDB_OK);
	CHECK_RC(su_exec(db, "INSERT INTO t VALUES (2000, 'in txn', 1)"),
		 GPMDB_OK);
	gpmdb_reset(st);
	CHECK_RC(gpmdb_step(st), GPMDB_MISMATCH);
	CHECK_MSG(db, "(parameter row 12)");
	nv[12] = "13";
	gpmdb_reset(st);
	CHECK_RC(gpmdb_step(st), GPMDB_DONE);
	CHECK(gpmdb_changes(db) == N);
	CHECK_RC(su_exec(db, "COMMIT"), GPMDB_OK);
	CHECK_SCALAR(db, "SELECT count(*) FROM t", "42");
	CHECK_SCALAR(db, "SELECT sum(n) FROM t", "482");
	gpmdb_finalize(st);

	/* inside BEGIN, rolled back: neither the batch nor the rest stays */
	CHECK_RC(su_exec(db, "BEGIN"), GPMDB_OK);
	st = prep(db, "INSERT INTO t(id, v) VALUES (?, 'y')");
	for (int i = 0; i < N; i++)
		id[i] = 5000 + i;
	CHECK_RC(gpmdb_bind_array_int64(st, 1, id, N, NULL), GPMDB_OK);
	CHECK_RC(gpmdb_step(st), GPMDB_DONE);
	CHECK_SCALAR(db, "SELECT count(*) FROM t", "82");
	CHECK_RC(su_exec(db, "ROLLBACK"), GPMDB_OK);
	CHECK_SCALAR(db, "SELECT count(*) FROM t", "42");
	gpmdb_finalize(st);
	gpmdb_close(db);
}

static void test_misuse(void)
{
	gpmdb *db = su_open(path);
	int64_t a[3] = {1, 2, 3}, b[4] = {1, 2, 3, 4};

	CHECK_RC(su_exec(db, "CREATE TABLE t(a INTEGER, b INTEGER)"), GPMDB_OK);
	gpmdb_stmt *st = prep(db, "INSERT INTO t VALUES (?, ?)");
	CHECK_RC(gpmdb_bind_array_int64(st, 1, a, 3, NULL), GPMDB_OK);
	CHECK_RC(gpmdb_bind_array_int64(st, 2, b, 4, NULL), GPMDB_OK);
	CHECK_RC(gpmdb_step(st), GPMDB_MISUSE);
	CHECK_MSG(db, "array parameters have different lengths: parameter 1 "
		      "has 3 values, parameter 2 has 4");
	CHECK_SCALAR(db, "SELECT count(*) FROM t", "0");
	CHECK_RC(gpmdb_reset(st), GPMDB_OK);
	CHECK_RC(gpmdb_bind_array_int64(st, 3, a, 3, NULL), GPMDB_RANGE);
	CHECK_RC(gpmdb_bind_array_int64(st, 1, a, -1, NULL), GPMDB_MISUSE);
	CHECK_RC(gpmdb_bind_array_int64(st, 1, NULL, 3, NULL), GPMDB_MISUSE);
	/* a scalar ends the array binding of its parameter */
	CHECK_RC(gpmdb_bind_int(st, 2, 9), GPMDB_OK);
	CHECK_RC(gpmdb_step(st), GPMDB_DONE);
	CHECK(gpmdb_changes(db) == 3);
	CHECK_SCALAR(db, "SELECT sum(a) || ' ' || sum(b) FROM t", "6 27");
	/* clear: back to a one-row statement of NULLs */
	CHECK_RC(gpmdb_reset(st), GPMDB_OK);
	CHECK_RC(gpmdb_clear_bindings(st), GPMDB_OK);
	CHECK_RC(gpmdb_step(st), GPMDB_DONE);
	CHECK(gpmdb_changes(db) == 1);
	CHECK_SCALAR(db, "SELECT count(*) FROM t WHERE a IS NULL", "1");
	gpmdb_finalize(st);

	st = prep(db, "SELECT * FROM t WHERE a = ?");
	CHECK_RC(gpmdb_bind_array_int64(st, 1, a, 3, NULL), GPMDB_OK);
	CHECK_RC(gpmdb_step(st), GPMDB_MISUSE);
	CHECK_MSG(db, "array parameters are only for INSERT, UPDATE and "
		      "DELETE");
	gpmdb_finalize(st);
	gpmdb_close(db);
}

static void test_update_delete(void)
{
	gpmdb *db = su_open(path);
	enum { N = 1000 };
	int64_t id[N], k[4];
	double v[4];
	const char *s[4] = {"one", NULL, "three", "four"};

	CHECK_RC(su_exec(db, "CREATE TABLE t(id INTEGER PRIMARY KEY, "
			     "v REAL, s TEXT, g INTEGER)"),
		 GPMDB_OK);
	for (int i = 0; i < N; i++)
		id[i] = i;
	gpmdb_stmt *st = prep(db, "INSERT INTO t VALUES (?, 0.0, 'z', ?)");
	CHECK_RC(gpmdb_bind_array_int64(st, 1, id, N, NULL), GPMDB_OK);
	CHECK_RC(gpmdb_bind_array_int64(st, 2, id, N, NULL), GPMDB_OK);
	CHECK_RC(gpmdb_step(st), GPMDB_DONE);
	gpmdb_finalize(st);

	/* keyed update; key 5000 matches nothing; 7 twice: the last wins */
	k[0] = 3, k[1] = 7, k[2] = 5000, k[3] = 7;
	v[0] = 1.5, v[1] = 2.5, v[2] = 3.5, v[3] = 4.5;
	st = prep(db, "UPDATE t SET v = ?, s = ? WHERE id = ?");
	CHECK_RC(gpmdb_bind_array_double(st, 1, v, 4, NULL), GPMDB_OK);
	CHECK_RC(gpmdb_bind_array_text(st, 2, s, 4, NULL), GPMDB_OK);
	CHECK_RC(gpmdb_bind_array_int64(st, 3, k, 4, NULL), GPMDB_OK);
	CHECK_RC(gpmdb_step(st), GPMDB_DONE);
	CHECK(gpmdb_changes(db) == 3);
	CHECK_SCALAR(db, "SELECT v FROM t WHERE id = 3", "1.5");
	CHECK_SCALAR(db, "SELECT v || s FROM t WHERE id = 7", "4.5four");
	CHECK_SCALAR(db, "SELECT sum(v) FROM t", "6.0");
	gpmdb_finalize(st);

	/* NOT NULL / type error at a matched row undoes all */
	CHECK_RC(su_exec(db, "CREATE TABLE u(id INTEGER, n INTEGER NOT NULL)"),
		 GPMDB_OK);
	CHECK_RC(su_exec(db, "INSERT INTO u VALUES (1, 1), (2, 2), (3, 3)"),
		 GPMDB_OK);
	int64_t uk[3] = {1, 99, 3}, un[3] = {10, 0, 30};
	uint8_t unn[3] = {0, 1, 1};
	st = prep(db, "UPDATE u SET n = ? WHERE id = ?");
	CHECK_RC(gpmdb_bind_array_int64(st, 1, un, 3, unn), GPMDB_OK);
	CHECK_RC(gpmdb_bind_array_int64(st, 2, uk, 3, NULL), GPMDB_OK);
	/* row 1 has a NULL but matches nothing; row 2 matches */
	CHECK_RC(gpmdb_step(st), GPMDB_CONSTRAINT);
	CHECK_MSG(db, "NOT NULL constraint failed: u.n (parameter row 2)");
	CHECK_SCALAR(db, "SELECT sum(n) FROM u", "6");
	unn[2] = 0;
	gpmdb_reset(st);
	CHECK_RC(gpmdb_step(st), GPMDB_DONE);
	CHECK_SCALAR(db, "SELECT sum(n) FROM u", "42");
	gpmdb_finalize(st);

	/* an update that breaks a key names its parameter row */
	int64_t pk_new[2] = {500, 501}, g[2] = {10, 11};
	st = prep(db, "UPDATE t SET id = ? WHERE g = ?");
	CHECK_RC(gpmdb_bind_array_int64(st, 1, pk_new, 2, NULL), GPMDB_OK);
	CHECK_RC(gpmdb_bind_array_int64(st, 2, g, 2, NULL), GPMDB_OK);
	CHECK_RC(gpmdb_step(st), GPMDB_CONSTRAINT);
	CHECK_MSG(db, "UNIQUE constraint failed: t.id");
	CHECK_MSG(db, "(parameter row 0)");
	CHECK_SCALAR(db, "SELECT count(*) FROM t WHERE id = g", "1000");
	pk_new[0] = 2000;
	pk_new[1] = 2001;
	gpmdb_reset(st);
	CHECK_RC(gpmdb_step(st), GPMDB_DONE);
	CHECK(gpmdb_changes(db) == 2);
	CHECK_SCALAR(db, "SELECT sum(id) - sum(g) FROM t", "3980");
	gpmdb_finalize(st);

	/* delete by two-column key; a repeated key deletes once */
	int64_t dk[4] = {1, 2, 2, 4}, dg[4] = {1, 2, 2, 5};
	st = prep(db, "DELETE FROM t WHERE id = ? AND ? = g");
	CHECK_RC(gpmdb_bind_array_int64(st, 1, dk, 4, NULL), GPMDB_OK);
	CHECK_RC(gpmdb_bind_array_int64(st, 2, dg, 4, NULL), GPMDB_OK);
	CHECK_RC(gpmdb_step(st), GPMDB_DONE);
	CHECK(gpmdb_changes(db) == 2);
	CHECK_SCALAR(db, "SELECT count(*) FROM t", "998");
	gpmdb_finalize(st);

	/* row-wise path: an expression over parameters */
	int64_t inc[3] = {1, 2, 3}, ik[3] = {20, 21, 22};
	st = prep(db, "UPDATE t SET g = g + ? * 100 WHERE id = ?");
	CHECK_RC(gpmdb_bind_array_int64(st, 1, inc, 3, NULL), GPMDB_OK);
	CHECK_RC(gpmdb_bind_array_int64(st, 2, ik, 3, NULL), GPMDB_OK);
	CHECK_RC(gpmdb_step(st), GPMDB_DONE);
	CHECK(gpmdb_changes(db) == 3);
	CHECK_SCALAR(db, "SELECT sum(g) FROM t WHERE id BETWEEN 20 AND 22",
		     "663");
	gpmdb_finalize(st);
	st = prep(db, "INSERT INTO t(id, g) VALUES (? + 10000, ?)");
	CHECK_RC(gpmdb_bind_array_int64(st, 1, ik, 3, NULL), GPMDB_OK);
	CHECK_RC(gpmdb_bind_array_int64(st, 2, ik, 3, NULL), GPMDB_OK);
	ik[1] = 20; /* row 1 collides with row 0 */
	CHECK_RC(gpmdb_step(st), GPMDB_CONSTRAINT);
	CHECK_MSG(db, "UNIQUE constraint failed: t.id (parameter row 1)");
	CHECK_SCALAR(db, "SELECT count(*) FROM t", "998");
	gpmdb_finalize(st);
	gpmdb_close(db);
}

static void test_append_columns(void)
{
	gpmdb *db = su_open(path);
	int64_t id[4] = {1, 2, 3, 4};
	int32_t q[4] = {5, 6, 7, 8};
	double p[4] = {1.25, 2.5, 0, 10};
	uint8_t pn[4] = {0, 0, 1, 0};
	const char *d[4] = {"2024-01-01", "2024-02-29", "1999-12-31",
			    "2000-01-01"};
	const char *nm[4] = {"w", "x", "y", "z"};

	CHECK_RC(su_exec(db, "CREATE TABLE t(id INTEGER PRIMARY KEY, q INT, "
			     "p DECIMAL(10,2), d DATE, nm TEXT, "
			     "f REAL DEFAULT 1.5)"),
		 GPMDB_OK);
	gpmdb_column_array cols[5] = {
	    {GPMDB_ARRAY_INT64, id, NULL}, {GPMDB_ARRAY_INT32, q, NULL},
	    {GPMDB_ARRAY_DOUBLE, p, pn},   {GPMDB_ARRAY_TEXT, d, NULL},
	    {GPMDB_ARRAY_TEXT, nm, NULL},
	};
	const char *names[5] = {"id", "q", "p", "d", "nm"};
	CHECK_RC(gpmdb_append_columns(db, "t", 5, names, cols, 4), GPMDB_OK);
	CHECK(gpmdb_changes(db) == 4);
	CHECK_SCALAR(db, "SELECT sum(p) FROM t", "13.75");
	CHECK_SCALAR(db, "SELECT count(p) FROM t", "3");
	CHECK_SCALAR(db, "SELECT max(d) FROM t", "2024-02-29");
	CHECK_SCALAR(db, "SELECT sum(f) FROM t", "6.0");
	CHECK_SCALAR(db, "SELECT group_concat(nm, '') FROM t", "wxyz");

	/* a type mismatch names the column; nothing is written */
	gpmdb_column_array bad[5];
	memcpy(bad, cols, sizeof(bad));
	bad[1] = (gpmdb_column_array){GPMDB_ARRAY_TEXT, nm, NULL};
	CHECK_RC(gpmdb_append_columns(db, "t", 5, names, bad, 4),
		 GPMDB_MISMATCH);
	CHECK_MSG(db, "column t.q is INT, cannot append a TEXT array");
	memcpy(bad, cols, sizeof(bad));
	bad[0] = (gpmdb_column_array){GPMDB_ARRAY_DOUBLE, p, NULL};
	CHECK_RC(gpmdb_append_columns(db, "t", 5, names, bad, 4),
		 GPMDB_MISMATCH);
	CHECK_MSG(db, "column t.id is INTEGER, cannot append a DOUBLE array");
	/* all columns in order: 6 needed */
	CHECK_RC(gpmdb_append_columns(db, "t", 5, NULL, cols, 4), GPMDB_MISUSE);
	CHECK_MSG(db, "table t has 6 columns but 5 arrays");
	const char *badname[5] = {"id", "q", "p", "nope", "nm"};
	CHECK_RC(gpmdb_append_columns(db, "t", 5, badname, cols, 4),
		 GPMDB_ERROR);
	CHECK_MSG(db, "table t has no column named nope");
	CHECK_RC(gpmdb_append_columns(db, "nosuch", 5, names, cols, 4),
		 GPMDB_ERROR);
	CHECK_MSG(db, "no such table: nosuch");

	/* constraint at row 2: the key exists already */
	int64_t id2[4] = {10, 11, 3, 12};
	cols[0].values = id2;
	CHECK_RC(gpmdb_append_columns(db, "t", 5, names, cols, 4),
		 GPMDB_CONSTRAINT);
	CHECK_MSG(db, "UNIQUE constraint failed: t.id (t.id = 3) (row 2)");
	/* a bad date at row 1 */
	id2[2] = 13;
	d[1] = "2023-02-30";
	CHECK_RC(gpmdb_append_columns(db, "t", 5, names, cols, 4), GPMDB_ERROR);
	CHECK_MSG(db, "(row 1)");
	CHECK_SCALAR(db, "SELECT count(*) FROM t", "4");
	d[1] = "2023-02-28";
	/* inside a transaction that is rolled back */
	CHECK_RC(su_exec(db, "BEGIN"), GPMDB_OK);
	CHECK_RC(gpmdb_append_columns(db, "t", 5, names, cols, 4), GPMDB_OK);
	CHECK_SCALAR(db, "SELECT count(*) FROM t", "8");
	CHECK_RC(su_exec(db, "ROLLBACK"), GPMDB_OK);
	CHECK_SCALAR(db, "SELECT count(*) FROM t", "4");

	/* DOUBLE arrays into FLOAT columns: narrowed and scanned for NULLs
	 * (NaN, the flags) in one pass, on all threads past 65536 rows */
	{
		enum { N = 100003 };
		double *y = malloc(N * sizeof(*y)), *x = malloc(N * sizeof(*x));
		uint8_t *yn = calloc(N, 1);
		double sum = 0;
		long long nn = 0;
		char want[64];

		CHECK(y && x && yn);
		if (!y || !x || !yn)
			goto fdone;
		for (int i = 0; i < N; i++) {
			x[i] = i;
			y[i] = i % 97 == 0 ? 0.0 / 0.0 : i * 0.5;
			yn[i] = i % 89 == 0;
			if (i % 97 && i % 89) {
				sum += i * 0.5;
				nn++;
			}
		}
		CHECK_RC(su_exec(db, "CREATE TABLE g(x FLOAT NOT NULL, "
				     "y FLOAT)"),
			 GPMDB_OK);
		gpmdb_column_array g[2] = {{GPMDB_ARRAY_DOUBLE, x, NULL},
					   {GPMDB_ARRAY_DOUBLE, y, yn}};
		CHECK_RC(gpmdb_append_columns(db, "g", 2, NULL, g, N),
			 GPMDB_OK);
		snprintf(want, sizeof(want), "%lld", nn);
		CHECK_SCALAR(db, "SELECT count(y) FROM g", want);
		snprintf(want, sizeof(want), "%.1f", sum);
		CHECK_SCALAR(db, "SELECT sum(y) FROM g", want);
		/* a NaN in the NOT NULL column: its lowest row */
		x[70001] = 0.0 / 0.0;
		x[90001] = 0.0 / 0.0;
		CHECK_RC(gpmdb_append_columns(db, "g", 2, NULL, g, N),
			 GPMDB_CONSTRAINT);
		CHECK_MSG(db, "NOT NULL constraint failed: g.x");
		CHECK_MSG(db, "(row 70001)");
		snprintf(want, sizeof(want), "%d", N);
		CHECK_SCALAR(db, "SELECT count(*) FROM g", want);
	fdone:
		free(y), free(x), free(yn);
	}
	gpmdb_close(db);
}

static void test_result_columns(void)
{
	gpmdb *db = su_open(path);
	gpmdb_column_array c;
	int64_t n;

	CHECK_RC(su_exec(db, "CREATE TABLE t(i INTEGER, r REAL, s TEXT, "
			     "d DATE, m DECIMAL(8,3), b BOOLEAN)"),
		 GPMDB_OK);
	CHECK_RC(su_exec(db, "INSERT INTO t VALUES (1, 0.5, 'one', "
			     "'2020-05-17', 1.125, 1), (NULL, NULL, NULL, "
			     "NULL, NULL, NULL), (3, 2.5, 'three', "
			     "'1970-01-01', -2.5, 0)"),
		 GPMDB_OK);
	gpmdb_stmt *st = prep(db, "SELECT i, r, s, d, m, b, NULL FROM t");
	CHECK_RC(gpmdb_result_column(st, 0, &c, &n), GPMDB_MISUSE);
	CHECK_RC(gpmdb_step(st), GPMDB_ROW);
	CHECK_RC(gpmdb_result_column(st, 7, &c, &n), GPMDB_RANGE);

	CHECK_RC(gpmdb_result_column(st, 0, &c, &n), GPMDB_OK);
	CHECK(n == 3 && c.type == GPMDB_ARRAY_INT64);
	const int64_t *iv = c.values;
	CHECK(iv[0] == 1 && iv[2] == 3);
	CHECK(!c.nulls[0] && c.nulls[1] && !c.nulls[2]);

	CHECK_RC(gpmdb_result_column(st, 1, &c, &n), GPMDB_OK);
	CHECK(n == 3 && c.type == GPMDB_ARRAY_DOUBLE);
	const double *dv = c.values;
	CHECK(dv[0] == 0.5 && dv[2] == 2.5 && c.nulls[1]);

	CHECK_RC(gpmdb_result_column(st, 2, &c, &n), GPMDB_OK);
	CHECK(n == 3 && c.type == GPMDB_ARRAY_TEXT);
	const char *const *sv = c.values;
	CHECK(!strcmp(sv[0], "one") && sv[1] == NULL &&
	      !strcmp(sv[2], "three") && c.nulls[1]);

	CHECK_RC(gpmdb_result_column(st, 3, &c, &n), GPMDB_OK);
	sv = c.values;
	CHECK(c.type == GPMDB_ARRAY_TEXT && !strcmp(sv[0], "2020-05-17") &&
	      !sv[1] && !strcmp(sv[2], "1970-01-01"));

	CHECK_RC(gpmdb_result_column(st, 4, &c, &n), GPMDB_OK);
	dv = c.values;
	CHECK(c.type == GPMDB_ARRAY_DOUBLE && dv[0] == 1.125 && dv[2] == -2.5 &&
	      c.nulls[1]);

	CHECK_RC(gpmdb_result_column(st, 5, &c, &n), GPMDB_OK);
	iv = c.values;
	CHECK(c.type == GPMDB_ARRAY_INT64 && iv[0] == 1 && iv[2] == 0 &&
	      c.nulls[1]);

	CHECK_RC(gpmdb_result_column(st, 6, &c, &n), GPMDB_OK);
	CHECK(n == 3 && c.nulls[0] && c.nulls[1] && c.nulls[2]);

	/* after a step: the rows left */
	CHECK_RC(gpmdb_step(st), GPMDB_ROW);
	CHECK_RC(gpmdb_result_column(st, 2, &c, &n), GPMDB_OK);
	sv = c.values;
	CHECK(n == 2 && !sv[0] && !strcmp(sv[1], "three"));
	CHECK_RC(gpmdb_step(st), GPMDB_ROW);
	CHECK_RC(gpmdb_step(st), GPMDB_DONE);
	CHECK_RC(gpmdb_result_column(st, 0, &c, &n), GPMDB_OK);
	CHECK(n == 0);
	gpmdb_finalize(st);

	/* an empty result */
	st = prep(db, "SELECT s FROM t WHERE i > 100");
	CHECK_RC(gpmdb_step(st), GPMDB_DONE);
	CHECK_RC(gpmdb_result_column(st, 0, &c, &n), GPMDB_OK);
	CHECK(n == 0);
	gpmdb_finalize(st);
	gpmdb_close(db);
}

/* Text keys, a UNIQUE index, keys that cannot match, NULL keys. */
static void test_text_keys(void)
{
	gpmdb *db = su_open(path);
	const char *code[4] = {"aa", "bb", "cc", "dd"};
	int64_t qty[4] = {1, 2, 3, 4};

	CHECK_RC(su_exec(db, "CREATE TABLE t(code TEXT, qty INTEGER)"),
		 GPMDB_OK);
	CHECK_RC(su_exec(db, "CREATE UNIQUE INDEX t_code ON t(code)"),
		 GPMDB_OK);
	gpmdb_stmt *st = prep(db, "INSERT INTO t VALUES (?, ?)");
	CHECK_RC(gpmdb_bind_array_text(st, 1, code, 4, NULL), GPMDB_OK);
	CHECK_RC(gpmdb_bind_array_int64(st, 2, qty, 4, NULL), GPMDB_OK);
	CHECK_RC(gpmdb_step(st), GPMDB_DONE);
	code[2] = "bb";
	gpmdb_reset(st);
	CHECK_RC(gpmdb_step(st), GPMDB_CONSTRAINT);
	CHECK_MSG(db, "UNIQUE constraint failed: t.code (t.code = 'aa') "
		      "(parameter row 0)");
	gpmdb_finalize(st);

	/* update by text key; 'zz' and NULL match nothing */
	const char *k[4] = {"bb", "zz", NULL, "dd"};
	const char *q[4] = {"20", "x", "y", "40"};
	st = prep(db, "UPDATE t SET qty = ? WHERE code = ?");
	CHECK_RC(gpmdb_bind_array_text(st, 1, q, 4, NULL), GPMDB_OK);
	CHECK_RC(gpmdb_bind_array_text(st, 2, k, 4, NULL), GPMDB_OK);
	CHECK_RC(gpmdb_step(st), GPMDB_DONE);
	CHECK(gpmdb_changes(db) == 2);
	CHECK_SCALAR(db, "SELECT sum(qty) FROM t", "64");
	gpmdb_finalize(st);

	/* an integer key given as text that is not a number: no match */
	const char *ik[2] = {"abc", "3"};
	st = prep(db, "DELETE FROM t WHERE qty = ?");
	CHECK_RC(gpmdb_bind_array_text(st, 1, ik, 2, NULL), GPMDB_OK);
	CHECK_RC(gpmdb_step(st), GPMDB_DONE);
	CHECK(gpmdb_changes(db) == 1);
	CHECK_SCALAR(db, "SELECT group_concat(code, '') FROM t", "aabbdd");
	gpmdb_finalize(st);
	gpmdb_close(db);
}

/* Large batches, checked by aggregates. */
static void test_large(void)
{
	gpmdb *db = su_open(path);
	enum { N = 200000 };
	int64_t *id = malloc(sizeof(int64_t) * N);
	int64_t *a = malloc(sizeof(int64_t) * N);
	double *x = malloc(sizeof(double) * N);
	char(*txt)[16] = malloc(16 * (size_t)N);
	const char **tp = malloc(sizeof(char *) * N);
	uint8_t *xn = calloc(N, 1);

	long long sum_a = 0, sum_id = 0;
	for (int i = 0; i < N; i++) {
		id[i] = i;
		a[i] = (i * 7919) % 1000;
		x[i] = i * 0.5;
		xn[i] = i % 10 == 0;
		snprintf(txt[i], 16, "s%d", i % 97);
		tp[i] = txt[i];
		sum_a += a[i];
		sum_id += i;
	}
	CHECK_RC(su_exec(db, "CREATE TABLE t(id INTEGER PRIMARY KEY, "
			     "a INTEGER, x REAL, s TEXT)"),
		 GPMDB_OK);
	gpmdb_stmt *st = prep(db, "INSERT INTO t VALUES (?, ?, ?, ?)");
	CHECK_RC(gpmdb_bind_array_int64(st, 1, id, N, NULL), GPMDB_OK);
	CHECK_RC(gpmdb_bind_array_int64(st, 2, a, N, NULL), GPMDB_OK);
	CHECK_RC(gpmdb_bind_array_double(st, 3, x, N, xn), GPMDB_OK);
	CHECK_RC(gpmdb_bind_array_text(st, 4, tp, N, NULL), GPMDB_OK);
	CHECK_RC(gpmdb_step(st), GPMDB_DONE);
	CHECK(gpmdb_changes(db) == N);
	gpmdb_finalize(st);
	char want[64];
	snprintf(want, sizeof(want), "%lld", sum_a);
	CHECK_SCALAR(db, "SELECT sum(a) FROM t", want);
	snprintf(want, sizeof(want), "%d", N - N / 10);
	CHECK_SCALAR(db, "SELECT count(x) FROM t", want);
	CHECK_SCALAR(db, "SELECT count(DISTINCT s) FROM t", "97");

	/* keyed update of every other row: a = a + 1 via new values */
	int64_t m = N / 2;
	int64_t *k = malloc(sizeof(int64_t) * (size_t)m);
	int64_t *na = malloc(sizeof(int64_t) * (size_t)m);
	for (int64_t i = 0; i < m; i++) {
		k[i] = 2 * i;
		na[i] = a[2 * i] + 1;
	}
	st = prep(db, "UPDATE t SET a = ? WHERE id = ?");
	CHECK_RC(gpmdb_bind_array_int64(st, 1, na, m, NULL), GPMDB_OK);
	CHECK_RC(gpmdb_bind_array_int64(st, 2, k, m, NULL), GPMDB_OK);
	CHECK_RC(gpmdb_step(st), GPMDB_DONE);
	CHECK(gpmdb_changes(db) == m);
	gpmdb_finalize(st);
	snprintf(want, sizeof(want), "%lld", sum_a + m);
	CHECK_SCALAR(db, "SELECT sum(a) FROM t", want);

	/* again, keys in reverse order (the gather is random) and NULLs
	 * among the new values: the even rows get 5 or NULL */
	{
		uint8_t *nn = calloc((size_t)m, 1);
		long long s2 = 0, nulls = 0;

		for (int64_t i = 0; i < m; i++) {
			k[i] = 2 * (m - 1 - i);
			na[i] = 5;
			nn[i] = i % 3 == 0;
			nulls += nn[i];
		}
		for (int64_t i = 1; i < N; i += 2)
			s2 += a[i];
		s2 += 5 * (m - nulls);
		st = prep(db, "UPDATE t SET a = ? WHERE id = ?");
		CHECK_RC(gpmdb_bind_array_int64(st, 1, na, m, nn), GPMDB_OK);
		CHECK_RC(gpmdb_bind_array_int64(st, 2, k, m, NULL), GPMDB_OK);
		CHECK_RC(gpmdb_step(st), GPMDB_DONE);
		CHECK(gpmdb_changes(db) == m);
		gpmdb_finalize(st);
		snprintf(want, sizeof(want), "%lld", s2);
		CHECK_SCALAR(db, "SELECT sum(a) FROM t", want);
		snprintf(want, sizeof(want), "%lld", (long long)N - nulls);
		CHECK_SCALAR(db, "SELECT count(a) FROM t", want);
		/* row 2 (m - 1 - i = 1: i = m - 2) */
		snprintf(want, sizeof(want), "%s",
			 (m - 2) % 3 == 0 ? "NULL" : "5");
		CHECK_SCALAR(
		    db, "SELECT coalesce(a, 'NULL') FROM t WHERE id = 2", want);
		free(nn);
	}

	/* delete the odd rows by key */
	for (int64_t i = 0; i < m; i++)
		k[i] = 2 * i + 1;
	st = prep(db, "DELETE FROM t WHERE id = ?");
	CHECK_RC(gpmdb_bind_array_int64(st, 1, k, m, NULL), GPMDB_OK);
	CHECK_RC(gpmdb_step(st), GPMDB_DONE);
	CHECK(gpmdb_changes(db) == m);
	gpmdb_finalize(st);
	snprintf(want, sizeof(want), "%lld", (long long)m);
	CHECK_SCALAR(db, "SELECT count(*) FROM t", want);
	CHECK_SCALAR(db, "SELECT count(*) FROM t WHERE id % 2 = 1", "0");

	/* columnar append of another N rows, then read them back whole */
	for (int i = 0; i < N; i++)
		id[i] = N + i;
	gpmdb_column_array cols[4] = {{GPMDB_ARRAY_INT64, id, NULL},
				      {GPMDB_ARRAY_INT64, a, NULL},
				      {GPMDB_ARRAY_DOUBLE, x, xn},
				      {GPMDB_ARRAY_TEXT, tp, NULL}};
	CHECK_RC(gpmdb_append_columns(db, "t", 4, NULL, cols, N), GPMDB_OK);
	st = prep(db, "SELECT id, s FROM t WHERE id >= 200000");
	CHECK_RC(gpmdb_step(st), GPMDB_ROW);
	gpmdb_column_array c;
	int64_t n;
	CHECK_RC(gpmdb_result_column(st, 0, &c, &n), GPMDB_OK);
	CHECK(n == N);
	long long s = 0;
	for (int64_t i = 0; i < n; i++)
		s += ((const int64_t *)c.values)[i];
	CHECK(s == sum_id + (long long)N * N);
	CHECK_RC(gpmdb_result_column(st, 1, &c, &n), GPMDB_OK);
	CHECK(n == N &&
	      !strcmp(((const char *const *)c.values)[N - 1], tp[N - 1]));
	gpmdb_finalize(st);

	free(id);
	free(a);
	free(x);
	free(txt);
	free(tp);
	free(xn);
	free(k);
	free(na);
	gpmdb_close(db);
}

/* Appends one key column of n rows (INT from int32, else int64). */
static int app_keys(gpmdb *db, const char *t, bool i32, const void *k,
		    int64_t n)
{
	const char *nm[1] = {"id"};
	gpmdb_column_array c = {i32 ? GPMDB_ARRAY_INT32 : GPMDB_ARRAY_INT64, k,
				NULL};

	return gpmdb_append_columns(db, t, 1, nm, &c, n);
}

static uint64_t xs_next(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/*
 * Large batches of integer primary keys (storage's key check sorts them
 * itself, index.c int_recs): keys that rise (no sort), keys in random
 * order (radix sorted pairs: 32-bit INT, 64-bit keys spanning more than
 * 32 bits), duplicates inside the batch (the lowest later row named),
 * conflicts with the tree at its top edge and inside it, negative keys;
 * the index checked after each.
 */
static void test_large_keys(void)
{
	gpmdb *db = su_open(path);
	enum { N = 200000 };
	int32_t *k = malloc(sizeof(int32_t) * N);
	int64_t *w = malloc(sizeof(int64_t) * N);
	uint64_t s = 88172645463325252ull;
	char m[160];

	CHECK_RC(su_exec(db, "CREATE TABLE a(id INT PRIMARY KEY)"), GPMDB_OK);
	CHECK_RC(su_exec(db, "CREATE TABLE b(id BIGINT PRIMARY KEY)"),
		 GPMDB_OK);
	/* rising even keys into an empty tree */
	for (int i = 0; i < N; i++)
		k[i] = 2 * i;
	CHECK_RC(app_keys(db, "a", true, k, N), GPMDB_OK);
	/* rising, the first equal to the tree's last key */
	for (int i = 0; i < N; i++)
		k[i] = 2 * (N - 1) + i;
	CHECK_RC(app_keys(db, "a", true, k, N), GPMDB_CONSTRAINT);
	snprintf(m, sizeof(m),
		 "UNIQUE constraint failed: a.id (a.id = %d) (row 0)",
		 2 * (N - 1));
	CHECK_MSG(db, m);
	/* rising odd keys inside the tree's range: no conflict */
	for (int i = 0; i < N; i++)
		k[i] = 2 * i + 1;
	CHECK_RC(app_keys(db, "a", true, k, N), GPMDB_OK);
	/* rising above the tree */
	for (int i = 0; i < N; i++)
		k[i] = 2 * N + i;
	CHECK_RC(app_keys(db, "a", true, k, N), GPMDB_OK);
	CHECK_SCALAR(db, "SELECT count(*) FROM a", "600000");
	CHECK_SCALAR(db, "SELECT max(id) FROM a", "599999");
	/* random order with negative keys, one of them in the tree */
	for (int i = 0; i < N; i++)
		k[i] = -1 - i;
	for (int i = N - 1; i > 0; i--) {
		int j = (int)(xs_next(&s) % (uint64_t)(i + 1)), x = k[i];
		k[i] = k[j];
		k[j] = x;
	}
	k[N / 2] = INT32_MIN;
	k[N - 3] = 12345;
	CHECK_RC(app_keys(db, "a", true, k, N), GPMDB_CONSTRAINT);
	snprintf(m, sizeof(m), "(a.id = 12345) (row %d)", N - 3);
	CHECK_MSG(db, m);
	/* the same with two pairs inside the batch: the lower later row */
	k[N - 3] = INT32_MAX;
	k[70000] = k[10];
	k[50000] = k[60000];
	CHECK_RC(app_keys(db, "a", true, k, N), GPMDB_CONSTRAINT);
	snprintf(m, sizeof(m), "(a.id = %d) (row 60000)", k[50000]);
	CHECK_MSG(db, m);
	k[70000] = -1 - N;
	k[50000] = -2 - N;
	CHECK_RC(app_keys(db, "a", true, k, N), GPMDB_OK);
	CHECK_SCALAR(db, "SELECT count(*) FROM a", "800000");
	CHECK_SCALAR(db, "SELECT min(id) FROM a", "-2147483648");
	CHECK_SCALAR(db, "SELECT max(id) FROM a", "2147483647");
	CHECK_SCALAR(db, "SELECT count(*) FROM a WHERE id = 12346", "1");
	CHECK_SCALAR(db, "SELECT count(*) FROM a WHERE id = -2 - 200000", "1");
	CHECK_SCALAR(db, "PRAGMA integrity_check", "ok");

	/* 64-bit keys more than 32 bits apart, random order */
	for (int i = 0; i < N; i++)
		w[i] =
		    (int64_t)(xs_next(&s) >> 20) * (i % 2 ? -1 : 1) * 4 + i % 4;
	w[123] = INT64_MIN;
	w[124] = INT64_MAX;
	int64_t w8 = w[199998], w9 = w[199999];
	w[199999] = w[7];
	w[199998] = w[123];
	CHECK_RC(app_keys(db, "b", false, w, N), GPMDB_CONSTRAINT);
	CHECK_MSG(db, "(row 199998)");
	w[199998] = w8;
	w[199999] = w9;
	CHECK_RC(app_keys(db, "b", false, w, N), GPMDB_OK);
	CHECK_SCALAR(db, "SELECT count(*) FROM b", "200000");
	CHECK_SCALAR(db, "SELECT min(id) FROM b", "-9223372036854775808");
	/* all of them again: each conflicts with the tree */
	CHECK_RC(app_keys(db, "b", false, w, N), GPMDB_CONSTRAINT);
	CHECK_MSG(db, "(row 0)");
	snprintf(m, sizeof(m), "SELECT count(*) FROM b WHERE id = %lld",
		 (long long)w[5000]);
	CHECK_SCALAR(db, m, "1");
	CHECK_SCALAR(db, "PRAGMA integrity_check", "ok");

	/* INT32 arrays into a two-column unique key (the generic key
	 * encoder; the CPU path widens the arrays as storage writes them),
	 * and a one-column key with NULL flags */
	int32_t *x = malloc(sizeof(int32_t) * N),
		*y = malloc(sizeof(int32_t) * N);
	uint8_t *yn = calloc(N, 1);
	const char *nm[3] = {"a", "b", "c"};
	for (int i = 0; i < N; i++) {
		x[i] = i / 10;
		y[i] = -(i % 10);
	}
	CHECK_RC(su_exec(db, "CREATE TABLE m(a INT, b INT, c INT UNIQUE)"),
		 GPMDB_OK);
	CHECK_RC(su_exec(db, "CREATE UNIQUE INDEX m_ab ON m(a, b)"), GPMDB_OK);
	gpmdb_column_array mc[3] = {{GPMDB_ARRAY_INT32, x, NULL},
				    {GPMDB_ARRAY_INT32, y, NULL},
				    {GPMDB_ARRAY_INT32, k, yn}};
	for (int i = 0; i < N; i++) {
		k[i] = 3 * i;
		yn[i] = i % 3 == 0;
	}
	y[150001] = y[150000];
	CHECK_RC(gpmdb_append_columns(db, "m", 3, nm, mc, N), GPMDB_CONSTRAINT);
	CHECK_MSG(db, "UNIQUE constraint failed: m.a, m.b (m.a = 15000, m.b = "
		      "0) (row 150001)");
	y[150001] = -1;
	k[99999] = k[99998]; /* row 99999 NULL: no conflict */
	CHECK_RC(gpmdb_append_columns(db, "m", 3, nm, mc, N), GPMDB_OK);
	CHECK_SCALAR(db, "SELECT sum(b) FROM m", "-900000");
	CHECK_SCALAR(db, "SELECT count(c) FROM m", "133333");
	CHECK_SCALAR(db, "SELECT count(*) FROM m WHERE a = 19999 AND b = -9",
		     "1");
	k[1] = 3 * 7; /* row 7's key, not NULL there */
	for (int i = 0; i < N; i++)
		x[i] += N;
	CHECK_RC(gpmdb_append_columns(db, "m", 3, nm, mc, N), GPMDB_CONSTRAINT);
	CHECK_MSG(db, "(m.c = 21) (row 1)");
	CHECK_SCALAR(db, "PRAGMA integrity_check", "ok");
	free(x);
	free(y);
	free(yn);
	free(k);
	free(w);
	gpmdb_close(db);
}

int main(void)
{
	const char *base = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";

	snprintf(path, sizeof(path), "%s/test_batch_api.%d.db", base,
		 (int)getpid());
	TEST_RUN(test_insert_basic);
	TEST_RUN(test_insert_errors);
	TEST_RUN(test_misuse);
	TEST_RUN(test_update_delete);
	TEST_RUN(test_append_columns);
	TEST_RUN(test_result_columns);
	TEST_RUN(test_text_keys);
	TEST_RUN(test_large);
	TEST_RUN(test_large_keys);
	unlink(path);
	TEST_MAIN_END();
}
