/*
 * test_index_sql.c - the SQL surface of the persistent indexes
 * (engine/index/index_sql.c): PRAGMA index_list (SQLite's columns, bytes and
 * entries following the table's rows), PRAGMA index_info and index_xinfo,
 * and REINDEX in all its forms: every index, a collation's, a table's, an
 * index's, qualified by main, of a view, inside a transaction rolled back,
 * its errors at prepare, and the indexes still answering lookups and
 * passing the integrity check afterwards.
 */
#include "harness.h"
#include "sql_util.h"

#include "gpmdb.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char dir[256];
static char path[300];

/* Every row of a query, values joined by '|', rows by '\n'. */
static char *rows(gpmdb *db, const char *sql)
{
	static char buf[8192];

	return su_rows(db, sql, buf, sizeof(buf));
}

#define WANT(db, sql, want)                                                    \
	do {                                                                   \
		const char *got_ = rows(db, sql);                              \
		CHECKF(!strcmp(got_, want), "%s:\n got  %s\n want %s", sql,    \
		       got_, want);                                            \
	} while (0)

/* index_list's columns of one index, by name: the first five as text
 * ("seq|name|unique|origin|partial"), bytes and entries. */
typedef struct {
	char head[256];
	long long bytes, entries;
	bool found;
} ixrow;

static ixrow index_row(gpmdb *db, const char *table, const char *index)
{
	ixrow r = {0};
	char sql[256];
	gpmdb_stmt *st = NULL;

	snprintf(sql, sizeof(sql), "PRAGMA index_list(%s)", table);
	CHECK_RC(gpmdb_prepare(db, sql, -1, &st, NULL), GPMDB_OK);
	while (st && gpmdb_step(st) == GPMDB_ROW) {
		if (strcmp((const char *)gpmdb_column_text(st, 1), index))
			continue;
		snprintf(r.head, sizeof(r.head), "%lld|%s|%lld|%s|%lld",
			 gpmdb_column_int64(st, 0),
			 (const char *)gpmdb_column_text(st, 1),
			 gpmdb_column_int64(st, 2),
			 (const char *)gpmdb_column_text(st, 3),
			 gpmdb_column_int64(st, 4));
		r.bytes = gpmdb_column_int64(st, 5);
		r.entries = gpmdb_column_int64(st, 6);
		r.found = true;
	}
	gpmdb_finalize(st);
	return r;
}

static void make_tables(gpmdb *db)
{
	CHECK_RC(
	    su_exec(db, "CREATE TABLE t1(a INTEGER PRIMARY KEY, b TEXT UNIQUE, "
			"c INT);"
			"CREATE INDEX i1 ON t1(c, b DESC);"
			"CREATE UNIQUE INDEX i2 ON t1(c);"
			"CREATE TABLE t2(x INT, y TEXT);"
			"CREATE INDEX i3 ON t2(y);"
			"CREATE VIEW v1 AS SELECT a FROM t1"),
	    GPMDB_OK);
	/* 1000 rows in t1, 500 in t2 */
	CHECK_RC(su_exec(db, "CREATE TABLE n(x INT);"
			     "INSERT INTO n VALUES (0),(1),(2),(3),(4),(5),"
			     "(6),(7),(8),(9);"
			     "INSERT INTO t1 SELECT a.x*100+b.x*10+c.x, "
			     "'k' || (a.x*100+b.x*10+c.x), a.x*100+b.x*10+c.x "
			     "FROM n a, n b, n c;"
			     "INSERT INTO t2 SELECT a, 'y' || a FROM t1 "
			     "WHERE a < 500"),
		 GPMDB_OK);
}

static void test_index_list(void)
{
	gpmdb *db = su_open(path);
	gpmdb_stmt *st = NULL;
	static const char *const cols[] = {
	    "seq", "name", "unique", "origin", "partial", "bytes", "entries"};

	make_tables(db);
	CHECK_RC(gpmdb_prepare(db, "PRAGMA index_list(t1)", -1, &st, NULL),
		 GPMDB_OK);
	CHECK(gpmdb_column_count(st) == 7);
	for (int i = 0; i < 7 && i < gpmdb_column_count(st); i++)
		CHECKF(!strcmp(gpmdb_column_name(st, i), cols[i]),
		       "column %d is %s", i, gpmdb_column_name(st, i));
	gpmdb_finalize(st);

	/* the constraint indexes, then the created ones, in creation order */
	ixrow pk = index_row(db, "t1", "sqlite_autoindex_t1_1");
	ixrow uq = index_row(db, "t1", "sqlite_autoindex_t1_2");
	ixrow i1 = index_row(db, "t1", "i1");
	ixrow i2 = index_row(db, "t1", "i2");
	CHECKF(pk.found && !strcmp(pk.head, "0|sqlite_autoindex_t1_1|1|pk|0"),
	       "%s", pk.head);
	CHECKF(uq.found && !strcmp(uq.head, "1|sqlite_autoindex_t1_2|1|u|0"),
	       "%s", uq.head);
	CHECKF(!strcmp(i1.head, "2|i1|0|c|0"), "%s", i1.head);
	CHECKF(!strcmp(i2.head, "3|i2|1|c|0"), "%s", i2.head);
	CHECK(pk.entries == 1000 && uq.entries == 1000 && i1.entries == 1000 &&
	      i2.entries == 1000);
	CHECK(pk.bytes > 0 && i1.bytes > 0 && i2.bytes > 0);
	/* a wider key takes more room */
	CHECKF(i1.bytes >= pk.bytes, "i1 %lld bytes, pk %lld", i1.bytes,
	       pk.bytes);
	ixrow i3 = index_row(db, "t2", "i3");
	CHECKF(!strcmp(i3.head, "0|i3|0|c|0") && i3.entries == 500, "%s %lld",
	       i3.head, i3.entries);

	/* entries follow the rows; bytes grow with them */
	CHECK_RC(su_exec(db, "INSERT INTO t2 SELECT x + 500, 'z' || x FROM "
			     "t2; INSERT INTO t2 SELECT x + 1000, 'w' || x "
			     "FROM t2; INSERT INTO t2 SELECT x + 2000, 'v' || "
			     "x FROM t2"),
		 GPMDB_OK);
	ixrow big = index_row(db, "t2", "i3");
	CHECKF(big.entries == 4000 && big.bytes >= i3.bytes, "%lld %lld",
	       big.entries, big.bytes);
	CHECK_RC(su_exec(db, "DELETE FROM t2 WHERE x >= 100"), GPMDB_OK);
	CHECK(index_row(db, "t2", "i3").entries == 100);
	CHECK_RC(su_exec(db, "DELETE FROM t2"), GPMDB_OK);
	CHECK(index_row(db, "t2", "i3").entries == 0);

	/* a view has none, an unknown table is an error */
	WANT(db, "PRAGMA index_list(v1)", "");
	WANT(db, "PRAGMA index_list(nosuch)", "<error: no such table: nosuch>");
	WANT(db, "PRAGMA index_list",
	     "<error: PRAGMA index_list needs a "
	     "table name>");
	/* DROP INDEX removes it from the list */
	CHECK_RC(su_exec(db, "DROP INDEX i3"), GPMDB_OK);
	WANT(db, "PRAGMA index_list(t2)", "");
	gpmdb_close(db);
}

static void test_index_info(void)
{
	gpmdb *db = su_open(path);

	make_tables(db);
	WANT(db, "PRAGMA index_info(i1)", "0|2|c\n1|1|b\n");
	WANT(db, "PRAGMA index_xinfo(i1)",
	     "0|2|c|0|BINARY|1\n1|1|b|1|BINARY|1\n2|-1|NULL|0|BINARY|0\n");
	WANT(db, "PRAGMA index_xinfo(i2)",
	     "0|2|c|0|BINARY|1\n1|-1|NULL|0|BINARY|0\n");
	WANT(db, "PRAGMA index_info(sqlite_autoindex_t1_1)", "0|0|a\n");
	WANT(db, "PRAGMA index_info(sqlite_autoindex_t1_2)", "0|1|b\n");
	WANT(db, "PRAGMA index_info('I3')", "0|1|y\n");
	WANT(db, "PRAGMA index_info(nosuch)", "<error: no such index: nosuch>");
	WANT(db, "PRAGMA index_info(t1)", "<error: no such index: t1>");
	WANT(db, "PRAGMA index_xinfo",
	     "<error: PRAGMA index_xinfo needs an "
	     "index name>");
	gpmdb_stmt *st = NULL;
	CHECK_RC(gpmdb_prepare(db, "PRAGMA index_xinfo(i1)", -1, &st, NULL),
		 GPMDB_OK);
	CHECK(gpmdb_column_count(st) == 6 &&
	      !strcmp(gpmdb_column_name(st, 0), "seqno") &&
	      !strcmp(gpmdb_column_name(st, 5), "key"));
	gpmdb_finalize(st);
	gpmdb_close(db);
}

/* The lookups the indexes answer, the same before and after a REINDEX. */
static void check_lookups(gpmdb *db)
{
	WANT(db, "SELECT a, b FROM t1 WHERE a = 417", "417|k417\n");
	WANT(db, "SELECT a FROM t1 WHERE b = 'k99'", "99\n");
	WANT(db, "SELECT count(*) FROM t1 WHERE c BETWEEN 100 AND 199",
	     "100\n");
	WANT(db, "SELECT x FROM t2 WHERE y = 'y42'", "42\n");
	WANT(db, "PRAGMA integrity_check", "ok\n");
}

static void test_reindex(void)
{
	gpmdb *db = su_open(path);
	gpmdb_stmt *st = NULL;

	make_tables(db);
	check_lookups(db);
	long long bytes = index_row(db, "t1", "i1").bytes;
	static const char *const ok[] = {"REINDEX",
					 "REINDEX t1",
					 "REINDEX i1",
					 "REINDEX main.i3",
					 "REINDEX main.t2",
					 "REINDEX binary",
					 "REINDEX NOCASE",
					 "REINDEX rtrim",
					 "REINDEX v1",
					 "REINDEX \"T1\"",
					 "REINDEX sqlite_autoindex_t1_1"};
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		CHECK_RC(su_exec(db, ok[i]), GPMDB_OK);
		CHECKF(gpmdb_changes(db) == 0, "%s: changes %lld", ok[i],
		       gpmdb_changes(db));
	}
	check_lookups(db);
	CHECK(index_row(db, "t1", "i1").entries == 1000);
	CHECKF(index_row(db, "t1", "i1").bytes <= bytes * 2, "%lld after, %lld",
	       index_row(db, "t1", "i1").bytes, bytes);

	/* errors at prepare, as SQLite gives them */
	CHECK_RC(gpmdb_prepare(db, "REINDEX nosuch", -1, &st, NULL),
		 GPMDB_ERROR);
	CHECK(!strcmp(gpmdb_errmsg(db),
		      "unable to identify the object to be reindexed"));
	gpmdb_finalize(st);
	st = NULL;
	CHECK_RC(gpmdb_prepare(db, "REINDEX main.nocase", -1, &st, NULL),
		 GPMDB_ERROR);
	gpmdb_finalize(st);
	st = NULL;
	CHECK_RC(gpmdb_prepare(db, "REINDEX aux.t1", -1, &st, NULL),
		 GPMDB_ERROR);
	CHECK(!strcmp(gpmdb_errmsg(db), "unknown database aux"));
	gpmdb_finalize(st);
	/* an index dropped after the prepare: the error at step */
	st = NULL;
	CHECK_RC(gpmdb_prepare(db, "REINDEX i3", -1, &st, NULL), GPMDB_OK);
	CHECK_RC(su_exec(db, "DROP INDEX i3"), GPMDB_OK);
	CHECK(gpmdb_step(st) == GPMDB_ERROR &&
	      !strcmp(gpmdb_errmsg(db),
		      "unable to identify the object to be reindexed"));
	gpmdb_finalize(st);

	/* inside a transaction: rolled back with it, the index intact */
	CHECK_RC(su_exec(db, "BEGIN; INSERT INTO t1 VALUES (5000, 'new', "
			     "5000); REINDEX t1; ROLLBACK"),
		 GPMDB_OK);
	CHECK(index_row(db, "t1", "i1").entries == 1000);
	WANT(db, "SELECT count(*) FROM t1 WHERE a = 5000", "0\n");
	CHECK_RC(su_exec(db, "BEGIN; REINDEX; INSERT INTO t1 VALUES (5000, "
			     "'new', 5000); COMMIT"),
		 GPMDB_OK);
	WANT(db, "SELECT b FROM t1 WHERE a = 5000", "new\n");
	check_lookups(db);
	/* the statement is rendered and explained like the others */
	WANT(db,
	     "SELECT count(*) FROM sqlite_schema WHERE sql LIKE "
	     "'%REINDEX%'",
	     "0\n");
	gpmdb_close(db);

	/* after reopening, the rebuilt indexes are there */
	CHECK_RC(gpmdb_open_v2(path, &db, GPMDB_OPEN_READWRITE, NULL),
		 GPMDB_OK);
	CHECK(index_row(db, "t1", "i1").entries == 1001);
	check_lookups(db);
	gpmdb_close(db);
}

/* Appends the rows [lo, hi) of test_big_sorts' data to table tab. */
static int big_rows(gpmdb *db, const char *tab, int64_t lo, int64_t hi,
		    bool only_u, int64_t dup_at)
{
	int64_t n = hi - lo;
	int64_t *k = calloc((size_t)n, 8), *x = calloc((size_t)n, 8),
		*u = calloc((size_t)n, 8);
	double *y = calloc((size_t)n, 8);
	char **t = calloc((size_t)n, sizeof(char *));
	char *tb = calloc((size_t)n, 64);
	uint8_t *kn = calloc((size_t)n, 1);
	int rc = GPMDB_NOMEM;

	if (k && x && u && y && t && tb && kn) {
		for (int64_t r = 0; r < n; r++) {
			int64_t i = lo + r;
			kn[r] = i % 97 == 0;
			k[r] = (i * 7919) % 50000 - 25000;
			snprintf(tb + 64 * r, 64,
				 "common-prefix-of-forty-bytes-0123456789-%lld",
				 (long long)((i * 104729) % 150000 + lo));
			t[r] = tb + 64 * r;
			x[r] = (i * 31) % 1000 - 500;
			y[r] = (double)((i * 13) % 977) * 1.5 - 300.25;
			u[r] = i == dup_at ? 5 : (i * 1000003) % n + lo;
		}
		gpmdb_column_array a[5] = {{GPMDB_ARRAY_INT64, k, kn},
					   {GPMDB_ARRAY_TEXT, t, NULL},
					   {GPMDB_ARRAY_INT64, x, NULL},
					   {GPMDB_ARRAY_DOUBLE, y, NULL},
					   {GPMDB_ARRAY_INT64, u, NULL}};
		static const char *const names[] = {"k", "t", "x", "y", "u"};
		rc = only_u
			 ? gpmdb_append_columns(db, tab, 1, names + 4, a + 4, n)
			 : gpmdb_append_columns(db, tab, 5, names, a, n);
	}
	free(k);
	free(x);
	free(u);
	free(y);
	free(t);
	free(tb);
	free(kn);
	return rc;
}

/*
 * Indexes over 150k rows take the CPU's radix sort (storage/btree.c
 * sort_radix, from 65536 records): BIGINT keys with duplicates and NULLs
 * in a non-unique index, TEXT keys sharing 40 bytes (ties past the
 * 30-byte prefix), two-column keys with more than eight varying bytes, a
 * unique key appended in one batch after its check sorted it.  The
 * integrity check verifies every tree's order and entries; lookups and
 * ordered reads through each index equal the same queries over a copy of
 * the rows without indexes.
 */
static void test_big_sorts(void)
{
	gpmdb *db = su_open(path);
	char *a, *b;

	CHECK_RC(su_exec(db, "CREATE TABLE big(k BIGINT, t TEXT, x INT, "
			     "y DOUBLE, u BIGINT)"),
		 GPMDB_OK);
	CHECK_RC(su_exec(db, "CREATE TABLE plain(k BIGINT, t TEXT, x INT, "
			     "y DOUBLE, u BIGINT)"),
		 GPMDB_OK);
	CHECK_RC(big_rows(db, "big", 0, 150000, false, -1), GPMDB_OK);
	CHECK_RC(big_rows(db, "plain", 0, 150000, false, -1), GPMDB_OK);
	CHECK_RC(su_exec(db, "CREATE INDEX bk ON big(k)"), GPMDB_OK);
	CHECK_RC(su_exec(db, "CREATE UNIQUE INDEX bt ON big(t)"), GPMDB_OK);
	CHECK_RC(su_exec(db, "CREATE INDEX bxy ON big(x, y)"), GPMDB_OK);
	CHECK_RC(su_exec(db, "CREATE UNIQUE INDEX bu ON big(u)"), GPMDB_OK);
	WANT(db, "PRAGMA integrity_check", "ok\n");
	static const char *const q[] = {
	    "SELECT k, count(*) FROM %s WHERE k BETWEEN -300 AND 300 GROUP BY "
	    "k ORDER BY k",
	    "SELECT t FROM %s WHERE t > "
	    "'common-prefix-of-forty-bytes-0123456789-14' ORDER BY t LIMIT 40",
	    "SELECT x, y FROM %s WHERE x = 7 ORDER BY x, y",
	    "SELECT u FROM %s WHERE u < 30 ORDER BY u",
	    "SELECT count(*) FROM %s WHERE k IS NULL"};
	for (size_t i = 0; i < sizeof(q) / sizeof(q[0]); i++) {
		char qa[300], qb[300];
		snprintf(qa, sizeof(qa), q[i], "big");
		snprintf(qb, sizeof(qb), q[i], "plain");
		a = strdup(rows(db, qa));
		b = strdup(rows(db, qb));
		CHECKF(a && b && !strcmp(a, b) && strlen(a) > 1,
		       "%s:\n got  %.200s\n want %.200s", qa, a, b);
		free(a);
		free(b);
	}
	/* 100k new unique keys in one batch, checked and entered from one
	 * sort; then a batch with one duplicate fails and applies nothing */
	CHECK_RC(big_rows(db, "big", 150000, 250000, true, -1), GPMDB_OK);
	WANT(db, "SELECT count(*), min(u), max(u) FROM big",
	     "250000|0|249999\n");
	CHECK_RC(big_rows(db, "big", 250000, 350000, true, 327777),
		 GPMDB_CONSTRAINT);
	WANT(db, "SELECT count(*) FROM big", "250000\n");
	WANT(db, "SELECT u FROM big WHERE u = 249999", "249999\n");
	WANT(db, "PRAGMA integrity_check", "ok\n");
	gpmdb_close(db);
}

int main(void)
{
	if (su_tmp_make(dir, sizeof(dir), path, sizeof(path), "test_index_sql",
			"index.gpmdb"))
		return 1;
	TEST_RUN(test_index_list);
	TEST_RUN(test_index_info);
	TEST_RUN(test_reindex);
	TEST_RUN(test_big_sorts);
	su_tmp_remove(dir, path);
	TEST_MAIN_END();
}
