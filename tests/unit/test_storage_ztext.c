/*
 * test_storage_ztext.c - compressed TEXT in encoded tablets (layout.h
 * "Encodings" STG_ENC_ZTEXT, storage/encode_text.c): a round trip
 * through VACUUM and reopen with NULLs, empty strings and rows across
 * block and group boundaries; one row; strings larger than a block;
 * incompressible random bytes (stay plain); point reads through
 * indexes (also the long-key comparisons that read the table); widening
 * by UPDATE and INSERT and a rolled back widening; a damaged block
 * reported by gpmdb_check and refused by reads; a pool of format
 * version 4 (no compressed TEXT).  PRAGMA integrity_check after each.
 */
#include "harness.h"
#include "sql_util.h"

#include "../storage/layout.h"
#include "../storage/storage.h"
#include "gpmdb.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

static char dir[256];
static char path[300];

static char *rows(gpmdb *db, const char *sql)
{
	static char buf[1 << 20];

	return su_rows(db, sql, buf, sizeof(buf));
}

static void check_ok(gpmdb *db)
{
	CHECKF(!strcmp(su_scalar(db, "PRAGMA integrity_check"), "ok"), "%s",
	       rows(db, "PRAGMA integrity_check"));
}

/* A digest of the table in rowid order (the whole dump is large). */
static unsigned long digest(gpmdb *db, const char *sql)
{
	gpmdb_stmt *s = NULL;
	unsigned long h = crc32(0L, Z_NULL, 0);
	int rc;

	CHECK_RC(gpmdb_prepare(db, sql, -1, &s, NULL), GPMDB_OK);
	if (!s)
		return 0;
	while ((rc = gpmdb_step(s)) == GPMDB_ROW)
		for (int c = 0; c < gpmdb_column_count(s); c++) {
			const unsigned char *t = gpmdb_column_text(s, c);
			int n = gpmdb_column_bytes(s, c);

			h = crc32(h, t ? t : (const unsigned char *)"\1N",
				  t ? (unsigned)n : 2);
			h = crc32(h, (const unsigned char *)"|", 1);
		}
	CHECK_RC(rc, GPMDB_DONE);
	gpmdb_finalize(s);
	return h;
}

#define DUMP "SELECT a, c, n FROM t ORDER BY a"

/* t(a INT, c TEXT, n TEXT): n rows, c a comment of 10-70 bytes (every
 * 7th NULL, every 11th empty; few repeat), n NULL but every 1000th. */
static void fill(gpmdb *db, int n)
{
	static const char *w[] = {"quickly",   "final",	  "deposits", "sleep",
				  "furiously", "ironic",  "requests", "haggle",
				  "carefully", "express", "packages", "along"};
	gpmdb_stmt *s = NULL;
	char buf[128];

	CHECK_RC(su_exec(db, "CREATE TABLE t(a INT, c TEXT, n TEXT); BEGIN"),
		 GPMDB_OK);
	CHECK_RC(
	    gpmdb_prepare(db, "INSERT INTO t VALUES (?, ?, ?)", -1, &s, NULL),
	    GPMDB_OK);
	for (int i = 0; s && i < n; i++) {
		int len = 0, k = 2 + i % 9;

		for (int j = 0; j < k; j++)
			len += snprintf(buf + len, sizeof(buf) - (size_t)len,
					"%s%s", j ? " " : "",
					w[(i * 7 + j * 5 + i / 13) % 12]);
		len += snprintf(buf + len, sizeof(buf) - (size_t)len, " %d",
				i * 37 % 1000);
		gpmdb_bind_int(s, 1, i);
		if (i % 7 == 3)
			gpmdb_bind_null(s, 2);
		else
			gpmdb_bind_text(s, 2, buf, i % 11 == 5 ? 0 : len);
		if (i % 1000 == 0)
			gpmdb_bind_text(s, 3, "rare", 4);
		else
			gpmdb_bind_null(s, 3);
		CHECK_RC(gpmdb_step(s), GPMDB_DONE);
		gpmdb_reset(s);
	}
	gpmdb_finalize(s);
	CHECK_RC(su_exec(db, "COMMIT"), GPMDB_OK);
}

static void reopen(gpmdb **db)
{
	gpmdb_close(*db);
	CHECK_RC(gpmdb_open_v2(path, db, GPMDB_OPEN_READWRITE, NULL), GPMDB_OK);
}

static void test_roundtrip(void)
{
	gpmdb *db = su_open(path);
	unsigned long before, after;
	char want[512];

	/* 20000 rows: tablets of 1024, 2048, 4096, 8192 and a part one */
	fill(db, 20000);
	before = digest(db, DUMP);
	snprintf(want, sizeof(want), "%s",
		 su_scalar(db, "SELECT sum(length(c)) || ',' || count(c) || "
			       "',' || count(n) FROM t"));
	CHECK_RC(su_exec(db, "VACUUM"), GPMDB_OK);
	CHECKF(!strncmp(su_storage_info(db, "t", 1, 3), "zstd", 4), "c: %s",
	       su_storage_info(db, "t", 1, 3));
	CHECK(digest(db, DUMP) == before);
	check_ok(db);
	reopen(&db);
	after = digest(db, DUMP);
	CHECK(after == before);
	CHECK(!strcmp(su_scalar(db, "SELECT sum(length(c)) || ',' || "
				    "count(c) || ',' || count(n) FROM t"),
		      want));
	/* the rows at block and group boundaries, by scan and by index */
	CHECK(!strcmp(su_scalar(db, "SELECT c FROM t WHERE a = 2047"),
		      su_scalar(db, "SELECT c FROM t WHERE a + 0 = 2047")));
	CHECK_RC(su_exec(db, "CREATE INDEX ia ON t(a); CREATE INDEX ic ON "
			     "t(c)"),
		 GPMDB_OK);
	for (int a = 0; a < 20000; a += 997) {
		char q[160], x[512];

		snprintf(q, sizeof(q),
			 "SELECT coalesce(c, 'NULL') FROM t WHERE a = %d", a);
		snprintf(x, sizeof(x), "%s", su_scalar(db, q));
		snprintf(q, sizeof(q),
			 "SELECT coalesce(c, 'NULL') FROM t WHERE a + 0 = %d",
			 a);
		CHECKF(!strcmp(x, su_scalar(db, q)), "row %d: %s", a, x);
	}
	/* a range through the index: rows of one block after another (the
	 * block kept between them) and across blocks */
	for (int lo = 1500; lo <= 3000; lo += 1500) { /* 3000: tablets 1, 2 */
		char q[256];

		snprintf(q, sizeof(q),
			 "SELECT sum(length(c)) || ',' || count(c) || ',' || "
			 "max(c) FROM t WHERE a + 0 BETWEEN %d AND %d",
			 lo, lo + 200);
		snprintf(want, sizeof(want), "%s", su_scalar(db, q));
		snprintf(q, sizeof(q),
			 "SELECT sum(length(c)) || ',' || count(c) || ',' || "
			 "max(c) FROM t WHERE a BETWEEN %d AND %d",
			 lo, lo + 200);
		CHECKF(!strcmp(su_scalar(db, q), want), "%d: %s", lo, want);
		snprintf(q, sizeof(q),
			 "EXPLAIN SELECT c FROM t WHERE a BETWEEN %d AND %d",
			 lo, lo + 200);
		CHECKF(strstr(rows(db, q), "USING INDEX") != NULL, "%s",
		       rows(db, q));
	}
	/* the index on c orders equal 30-byte prefixes by the table's
	 * strings: as many rows found through it as by a scan */
	CHECK(!strcmp(
	    su_scalar(db, "SELECT count(*) FROM t WHERE c >= 'furiously'"),
	    su_scalar(db, "SELECT count(*) FROM t WHERE c || '' >= "
			  "'furiously'")));
	check_ok(db);
	gpmdb_close(db);
}

static void test_small_and_empty(void)
{
	gpmdb *db = su_open(path);

	CHECK_RC(su_exec(db, "CREATE TABLE o(c TEXT); INSERT INTO o VALUES "
			     "('just one row of text that is not short'); "
			     "CREATE TABLE e(c TEXT, d TEXT); INSERT INTO e "
			     "VALUES ('', NULL), (NULL, ''), ('', '')"),
		 GPMDB_OK);
	CHECK_RC(su_exec(db, "VACUUM"), GPMDB_OK);
	CHECK(!strcmp(su_scalar(db, "SELECT c FROM o"),
		      "just one row of text that is not short"));
	CHECK(!strcmp(rows(db, "SELECT coalesce(c, 'N'), coalesce(d, 'N') "
			       "FROM e"),
		      "|N\nN|\n|\n"));
	check_ok(db);
	gpmdb_close(db);
}

/* Strings larger than a block: each alone in its block. */
static void test_huge(void)
{
	gpmdb *db = su_open(path);
	gpmdb_stmt *s = NULL;
	size_t big = 3 * STG_ZT_BLOCK + 123;
	char *buf = malloc(big);
	unsigned long before;

	CHECK_RC(su_exec(db, "CREATE TABLE t(a INT, c TEXT)"), GPMDB_OK);
	CHECK_RC(gpmdb_prepare(db, "INSERT INTO t VALUES (?, ?)", -1, &s, NULL),
		 GPMDB_OK);
	for (int i = 0; s && buf && i < 40; i++) {
		size_t n = i % 4 == 0 ? big - (size_t)i : 20 + (size_t)i;

		for (size_t k = 0; k < n; k++)
			buf[k] = (char)('a' + (k * 7 + (size_t)i) % 26);
		gpmdb_bind_int(s, 1, i);
		gpmdb_bind_text(s, 2, buf, (int)n);
		CHECK_RC(gpmdb_step(s), GPMDB_DONE);
		gpmdb_reset(s);
	}
	gpmdb_finalize(s);
	before = digest(db, "SELECT a, c FROM t ORDER BY a");
	CHECK_RC(su_exec(db, "VACUUM"), GPMDB_OK);
	CHECKF(!strcmp(su_storage_info(db, "t", 1, 3), "zstd"), "c: %s",
	       su_storage_info(db, "t", 1, 3));
	CHECK(digest(db, "SELECT a, c FROM t ORDER BY a") == before);
	CHECK(!strcmp(su_scalar(db, "SELECT length(c) || substr(c, 70000, 5) "
				    "FROM t WHERE a = 8"),
		      "196723fmtah"));
	check_ok(db);
	reopen(&db);
	CHECK(digest(db, "SELECT a, c FROM t ORDER BY a") == before);
	free(buf);
	gpmdb_close(db);
}

/* Random bytes do not compress: the column stays plain. */
static void test_incompressible(void)
{
	gpmdb *db = su_open(path);
	gpmdb_stmt *s = NULL;
	unsigned long before;
	char buf[200];
	uint64_t x = 88172645463325252ull;

	CHECK_RC(su_exec(db, "CREATE TABLE t(a INT, c TEXT); BEGIN"), GPMDB_OK);
	CHECK_RC(gpmdb_prepare(db, "INSERT INTO t VALUES (?, ?)", -1, &s, NULL),
		 GPMDB_OK);
	for (int i = 0; s && i < 5000; i++) {
		int n = 50 + i % 100;

		for (int k = 0; k < n; k++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			buf[k] = (char)(1 + x % 255);
		}
		gpmdb_bind_int(s, 1, i);
		gpmdb_bind_text(s, 2, buf, n);
		CHECK_RC(gpmdb_step(s), GPMDB_DONE);
		gpmdb_reset(s);
	}
	gpmdb_finalize(s);
	CHECK_RC(su_exec(db, "COMMIT"), GPMDB_OK);
	before = digest(db, "SELECT a, c FROM t ORDER BY a");
	CHECK_RC(su_exec(db, "VACUUM"), GPMDB_OK);
	CHECKF(!strcmp(su_storage_info(db, "t", 1, 3), "plain"), "c: %s",
	       su_storage_info(db, "t", 1, 3));
	CHECK(digest(db, "SELECT a, c FROM t ORDER BY a") == before);
	check_ok(db);
	gpmdb_close(db);
}

/* Writes widen compressed tablets (the strings back into a heap); a
 * rolled back widening leaves the compressed tablet. */
static void test_widen(void)
{
	gpmdb *db = su_open(path);
	unsigned long before;

	fill(db, 9000);
	CHECK_RC(su_exec(db, "VACUUM"), GPMDB_OK);
	before = digest(db, DUMP);
	CHECK_RC(su_exec(db, "BEGIN; UPDATE t SET a = a + 1 WHERE a = 5000; "
			     "ROLLBACK"),
		 GPMDB_OK);
	CHECKF(!strcmp(su_storage_info(db, "t", 1, 3), "zstd"), "c: %s",
	       su_storage_info(db, "t", 1, 3));
	CHECK(digest(db, DUMP) == before);
	check_ok(db);
	CHECK_RC(su_exec(db, "UPDATE t SET n = 'changed' WHERE a = 5000"),
		 GPMDB_OK);
	CHECKF(strstr(su_storage_info(db, "t", 1, 3), "plain 1 tablet") != NULL,
	       "c: %s", su_storage_info(db, "t", 1, 3));
	CHECK_RC(su_exec(db, "UPDATE t SET n = 'rare' WHERE a = 5000"),
		 GPMDB_OK);
	CHECK(digest(db, DUMP) == before);
	check_ok(db);
	/* an UPDATE of the compressed column itself, and an INSERT into
	 * the last tablet */
	CHECK_RC(su_exec(db, "UPDATE t SET c = c || '!' WHERE a % 1000 = 1; "
			     "INSERT INTO t VALUES (-1, 'appended', NULL)"),
		 GPMDB_OK);
	CHECK(!strcmp(su_scalar(db, "SELECT count(*) FROM t WHERE c LIKE "
				    "'%!'"),
		      su_scalar(db, "SELECT count(*) FROM t WHERE a % 1000 = 1 "
				    "AND c IS NOT NULL")));
	before = digest(db, DUMP);
	check_ok(db);
	CHECK_RC(su_exec(db, "VACUUM"), GPMDB_OK);
	CHECKF(!strcmp(su_storage_info(db, "t", 1, 3), "zstd"), "c: %s",
	       su_storage_info(db, "t", 1, 3));
	CHECK(digest(db, DUMP) == before);
	check_ok(db);
	reopen(&db);
	CHECK(digest(db, DUMP) == before);
	gpmdb_close(db);
}

/* A damaged frame: gpmdb_check says so, a read of the column fails
 * (never a wrong string), other columns read. */
static void test_damaged(void)
{
	gpmdb *db = su_open(path);
	stg_open_opts o = {.readonly = true};
	stg_pool *p = NULL;
	stg_tablet_view v;
	char err[256], *msg = NULL;
	uint64_t len = 0, off = 0, junk = 0x5a5a5a5a5a5a5a5aull;
	uint32_t tid;
	int fd;

	fill(db, 3000);
	CHECK_RC(su_exec(db, "VACUUM"), GPMDB_OK);
	gpmdb_close(db);
	CHECK_RC(stg_open(path, &o, &p, err, sizeof(err)), GPMDB_OK);
	if (!p)
		return;
	CHECK_RC(stg_table_find(p, "t", &tid), GPMDB_OK);
	CHECK_RC(stg_tablet_get(p, tid, 1, &v), GPMDB_OK);
	CHECK(v.enc && v.enc[1].kind == STG_ENC_ZTEXT && v.enc[1].dict_n > 0);
	if (v.enc)
		off = (uint64_t)((const char *)v.enc[1].z + 20 -
				 (const char *)stg_pool_base(p, &len));
	stg_close(p);
	fd = open(path, O_RDWR);
	CHECK(fd >= 0 && off > 0 &&
	      pwrite(fd, &junk, 8, (off_t)off) == (ssize_t)sizeof(junk));
	if (fd >= 0)
		close(fd);
	CHECK_RC(gpmdb_open_v2(path, &db, GPMDB_OPEN_READWRITE, NULL),
		 GPMDB_OK);
	CHECKF(
	    strstr(rows(db, "PRAGMA integrity_check"),
		   "column c: compressed text: a block does not decompress") !=
		NULL,
	    "%s", rows(db, "PRAGMA integrity_check"));
	CHECK(!strcmp(su_scalar(db, "SELECT count(*) FROM t WHERE a >= 0"),
		      "3000"));
	CHECK(gpmdb_exec(db, "SELECT max(c) FROM t", NULL, NULL, &msg) ==
	      GPMDB_CORRUPT);
	CHECKF(msg && strstr(msg, "damaged"), "%s", msg ? msg : "(none)");
	gpmdb_free(msg);
	gpmdb_close(db);
}

/* Format version 4: encodes as before, never compressed TEXT. */
static void test_version4(void)
{
	gpmdb *db = su_open(path);
	stg_superblock sb;
	int fd;

	fill(db, 3000);
	gpmdb_close(db);
	fd = open(path, O_RDWR);
	CHECK(fd >= 0 && pread(fd, &sb, sizeof(sb), 0) == (ssize_t)sizeof(sb));
	CHECK(sb.version == STG_FORMAT_VERSION && STG_FORMAT_VERSION == 5);
	sb.version = 4;
	sb.crc = (uint32_t)crc32(0L, (const Bytef *)&sb, STG_SB_CRC_OFF);
	CHECK(fd >= 0 && pwrite(fd, &sb, sizeof(sb), 0) == (ssize_t)sizeof(sb));
	if (fd >= 0)
		close(fd);
	CHECK_RC(gpmdb_open_v2(path, &db, GPMDB_OPEN_READWRITE, NULL),
		 GPMDB_OK);
	CHECK_RC(su_exec(db, "VACUUM"), GPMDB_OK);
	CHECKF(!strstr(su_storage_info(db, "t", 1, 3), "zstd"), "c: %s",
	       su_storage_info(db, "t", 1, 3));
	CHECKF(!strncmp(su_storage_info(db, "t", 0, 3), "for", 3), "a: %s",
	       su_storage_info(db, "t", 0, 3));
	check_ok(db);
	gpmdb_close(db);
}

static void fresh(void)
{
	su_tmp_remove(dir, path);
	if (su_tmp_make(dir, sizeof(dir), path, sizeof(path),
			"test_storage_ztext", "zt.gpmdb"))
		exit(1);
}

int main(void)
{
	fresh();
	TEST_RUN(test_roundtrip);
	fresh();
	TEST_RUN(test_small_and_empty);
	fresh();
	TEST_RUN(test_huge);
	fresh();
	TEST_RUN(test_incompressible);
	fresh();
	TEST_RUN(test_widen);
	fresh();
	TEST_RUN(test_damaged);
	fresh();
	TEST_RUN(test_version4);
	su_tmp_remove(dir, path);
	TEST_MAIN_END();
}
