/*
 * test_storage_info.c - PRAGMA storage_info(t) (storage/info.c): known
 * sizes of a small table, the sums against table_bytes, index_list and
 * pool_used, strings replaced by UPDATE as heap dead, errors.
 */
#include "harness.h"
#include "sql_util.h"

#include "gpmdb.h"

#include <stdlib.h>
#include <string.h>

static char dir[256];
static char path[300];

static char *rows(gpmdb *db, const char *sql)
{
	static char buf[8192];

	return su_rows(db, sql, buf, sizeof(buf));
}

/* The row of storage_info(t) named name: its line, copied. */
static const char *row_of(gpmdb *db, const char *t, const char *name)
{
	static char line[512];
	char q[256];
	const char *r, *p;

	snprintf(q, sizeof(q), "PRAGMA storage_info(%s)", t);
	r = rows(db, q);
	for (p = r; p && *p;) {
		const char *nl = strchr(p, '\n'), *f = strchr(p, '|');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);

		if (f && (size_t)(f - p) < n &&
		    !strncmp(f + 1, name, strlen(name)) &&
		    f[1 + strlen(name)] == '|') {
			snprintf(line, sizeof(line), "%.*s", (int)n, p);
			return line;
		}
		p += n + (nl ? 1 : 0);
	}
	return "";
}

/* Field k (0-based) of a '|'-separated row as a number. */
static long long field(const char *row, int k)
{
	const char *p = row;

	for (int i = 0; i < k && p; i++) {
		p = strchr(p, '|');
		if (p)
			p++;
	}
	return p ? atoll(p) : -1;
}

/* Sum of the bytes column; *idx: of the index rows only. */
static long long sum_bytes(gpmdb *db, const char *t, long long *idx)
{
	char q[256];
	const char *p;
	long long s = 0;

	snprintf(q, sizeof(q), "PRAGMA storage_info(%s)", t);
	p = rows(db, q);
	*idx = 0;
	while (p && *p) {
		const char *nl = strchr(p, '\n');
		long long b = field(p, 7);

		s += b;
		if (strstr(p, "|(index ") && strstr(p, "|(index ") < nl)
			*idx += b;
		p = nl ? nl + 1 : p + strlen(p);
	}
	return s;
}

static void test_known_sizes(void)
{
	gpmdb *db = su_open(path);
	long long idx, sum, tb;

	CHECK_RC(su_exec(db, "CREATE TABLE t(a INT, b BIGINT, s TEXT, "
			     "d DOUBLE);"
			     "INSERT INTO t VALUES (1, 10, 'ab', 1.5), "
			     "(2, 20, NULL, 2.5), (3, 30, 'xyz', NULL)"),
		 GPMDB_OK);
	/* cid|name|type|encoding|values|nulls|heap|bytes; NULL bitmaps
	 * in 32-bit words */
	CHECKF(!strcmp(row_of(db, "t", "a"), "0|a|INT|plain|24|4|0|28"), "%s",
	       row_of(db, "t", "a"));
	CHECKF(!strcmp(row_of(db, "t", "b"), "1|b|BIGINT|plain|24|4|0|28"),
	       "%s", row_of(db, "t", "b"));
	CHECKF(!strcmp(row_of(db, "t", "s"), "2|s|TEXT|plain|24|4|5|33"), "%s",
	       row_of(db, "t", "s"));
	CHECKF(!strcmp(row_of(db, "t", "d"), "3|d|DOUBLE|plain|24|4|0|28"),
	       "%s", row_of(db, "t", "d"));
	CHECKF(!strcmp(row_of(db, "t", "(deleted bitmaps)"),
		       "-1|(deleted bitmaps)|NULL|NULL|0|0|0|4"),
	       "%s", row_of(db, "t", "(deleted bitmaps)"));
	/* a 128-byte header and 4 columns' map, 256-aligned */
	CHECK(field(row_of(db, "t", "(tablet headers)"), 7) == 256);
	CHECK(field(row_of(db, "t", "(heap dead)"), 7) == 0);
	CHECK(field(row_of(db, "t", "(unused capacity)"), 7) > 0);
	sum = sum_bytes(db, "t", &idx);
	tb = atoll(rows(db, "PRAGMA table_bytes(t)"));
	CHECKF(sum == tb && idx == 0, "sum %lld, table_bytes %lld", sum, tb);
	/* the only object: everything the pool hands out */
	CHECKF(sum == atoll(rows(db, "PRAGMA pool_used")), "sum %lld, used %s",
	       sum, rows(db, "PRAGMA pool_used"));

	/* 'ab' replaced: 2 bytes no row refers to */
	CHECK_RC(su_exec(db, "UPDATE t SET s = 'hello' WHERE a = 1"), GPMDB_OK);
	CHECK(field(row_of(db, "t", "(heap dead)"), 7) == 2);
	CHECK(field(row_of(db, "t", "s"), 6) == 8);
	sum = sum_bytes(db, "t", &idx);
	CHECKF(sum == atoll(rows(db, "PRAGMA table_bytes(t)")), "sum %lld",
	       sum);

	/* an index: its row holds index_list's bytes and its catalog
	 * entry */
	CHECK_RC(su_exec(db, "CREATE INDEX ia ON t(a)"), GPMDB_OK);
	sum = sum_bytes(db, "t", &idx);
	tb = atoll(rows(db, "PRAGMA table_bytes(t)"));
	CHECKF(idx > 0 && sum == tb + idx, "sum %lld, table %lld, index %lld",
	       sum, tb, idx);
	CHECKF(idx > field(rows(db, "PRAGMA index_list(t)"), 5),
	       "index %lld: %s", idx, rows(db, "PRAGMA index_list(t)"));
	CHECKF(sum == atoll(rows(db, "PRAGMA pool_used")), "sum %lld, used %s",
	       sum, rows(db, "PRAGMA pool_used"));

	/* 3000 rows: tablets 0 and 1 (1024 + 2048 rows) */
	CHECK_RC(su_exec(db, "CREATE TABLE u(x BIGINT);"
			     "CREATE TABLE n(d INT);"
			     "INSERT INTO n VALUES (0),(1),(2),(3),(4),(5),(6),"
			     "(7),(8),(9);"
			     "INSERT INTO u SELECT a.d*1000+b.d*100+c.d*10+1 "
			     "FROM n a, n b, n c, n e WHERE e.d < 3"),
		 GPMDB_OK);
	CHECKF(!strcmp(row_of(db, "u", "x"), "0|x|BIGINT|plain|24000|376|0|"
					     "24376"),
	       "%s", row_of(db, "u", "x"));
	CHECK(field(row_of(db, "u", "(tablet headers)"), 7) == 512);
	CHECK(field(row_of(db, "u", "(deleted bitmaps)"), 7) == 376);
	sum = sum_bytes(db, "u", &idx);
	CHECKF(sum == atoll(rows(db, "PRAGMA table_bytes(u)")), "sum %lld",
	       sum);

	CHECK(!strcmp(rows(db, "PRAGMA storage_info(nope)"),
		      "<error: no such table: nope>"));
	CHECK(!strcmp(rows(db, "PRAGMA storage_info"),
		      "<error: PRAGMA storage_info needs a table name>"));
	gpmdb_close(db);
}

int main(void)
{
	if (su_tmp_make(dir, sizeof(dir), path, sizeof(path),
			"test_storage_info", "info.gpmdb"))
		return 1;
	TEST_RUN(test_known_sizes);
	su_tmp_remove(dir, path);
	TEST_MAIN_END();
}
