/*
 * test_storage_encode.c - encoded tablets (storage/encode.c): frame of
 * reference at the int64 boundaries, 0-bit all-equal columns, a 64-bit
 * field decoded, NULLs, all-NULL columns, empty strings, dictionaries,
 * deleted rows, widening by UPDATE and INSERT (and its rollback),
 * auto_encode, PRAGMA storage_info's encodings and a pool of format
 * version 3 that VACUUM refuses.  Every table is compared before and
 * after encoding, and PRAGMA integrity_check (gpmdb_check's checks) is
 * clean after each step.
 */
#include "harness.h"
#include "sql_util.h"

#include "../storage/layout.h"
#include "../storage/stg_gpu.h"
#include "../storage/storage.h"
#include "gpmdb.h"

#include <fcntl.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

static char dir[256];
static char path[300], plain[320];

static char *rows(gpmdb *db, const char *sql)
{
	static char buf[1 << 16];

	return su_rows(db, sql, buf, sizeof(buf));
}

static void check_ok(gpmdb *db)
{
	CHECKF(!strcmp(su_scalar(db, "PRAGMA integrity_check"), "ok"), "%s",
	       rows(db, "PRAGMA integrity_check"));
}

/* The whole table in order, copied. */
static char *dump(gpmdb *db, const char *t)
{
	char q[128];

	snprintf(q, sizeof(q), "SELECT * FROM %s ORDER BY rowid", t);
	return strdup(rows(db, q));
}

/* n rows of t(a BIGINT, b INT, s TEXT, k TEXT, e INT, z INT) by a
 * recursive doubling of INSERT ... SELECT. */
static void fill(gpmdb *db, const char *base_a)
{
	char q[512];

	CHECK_RC(su_exec(db, "CREATE TABLE t(a BIGINT, b INT, s TEXT, "
			     "k TEXT, e INT, z INT)"),
		 GPMDB_OK);
	snprintf(q, sizeof(q),
		 "INSERT INTO t VALUES (%s, 0, 'x0', 'key0', 7, NULL)", base_a);
	CHECK_RC(su_exec(db, q), GPMDB_OK);
	/* 2^13 = 8192 rows: tablets 0..3 full (1024+2048+4096 = 7168)
	 * and 1024 rows of tablet 3 (8192 capacity) */
	for (int i = 0; i < 13; i++)
		CHECK_RC(su_exec(db,
				 "INSERT INTO t SELECT a + (SELECT count(*) "
				 "FROM t), b + (SELECT count(*) FROM t) % "
				 "100, CASE WHEN b % 3 = 0 THEN 'x' || (b "
				 "% 4) WHEN b % 3 = 1 THEN '' ELSE NULL "
				 "END, k || 'y', 7, NULL FROM t"),
			 GPMDB_OK);
}

/* stg_read of every column of t in the pools at a (plain) and b
 * (encoded): the same values, NULLs and strings. */
static void same_reads(const char *a, const char *b)
{
	stg_open_opts o = {.readonly = true};
	stg_pool *pa = NULL, *pb = NULL;
	char err[256];
	uint32_t ta, tb;
	uint64_t n;

	CHECK_RC(stg_open(a, &o, &pa, err, sizeof(err)), GPMDB_OK);
	CHECK_RC(stg_open(b, &o, &pb, err, sizeof(err)), GPMDB_OK);
	if (!pa || !pb)
		goto out;
	CHECK_RC(stg_table_find(pa, "t", &ta), GPMDB_OK);
	CHECK_RC(stg_table_find(pb, "t", &tb), GPMDB_OK);
	n = stg_row_count(pa, ta);
	CHECK(n > 0 && n == stg_row_count(pb, tb));
	for (uint32_t c = 0; c < 6; c++) {
		uint64_t *va = calloc(n + 1, 16), *vb = calloc(n + 1, 16);
		uint32_t *na = calloc(n / 32 + 2, 4),
			 *nb = calloc(n / 32 + 2, 4);
		bool text = c == 2 || c == 3, same = true;

		/* from row 100: a start inside a tablet */
		CHECK_RC(stg_read(pa, ta, c, 100, n - 100, va, na), GPMDB_OK);
		CHECK_RC(stg_read(pb, tb, c, 100, n - 100, vb, nb), GPMDB_OK);
		same = !memcmp(na, nb, (n - 100 + 31) / 32 * 4);
		for (uint64_t i = 0; same && i < n - 100; i++) {
			if (na[i / 32] >> (i % 32) & 1)
				continue;
			if (text) {
				stg_text x = ((stg_text *)va)[i];
				stg_text y = ((stg_text *)vb)[i];

				same = x.len == y.len &&
				       !memcmp(x.ptr, y.ptr, x.len);
			} else if (c == 1 || c == 4 || c == 5) {
				same =
				    ((uint32_t *)va)[i] == ((uint32_t *)vb)[i];
			} else {
				same = va[i] == vb[i];
			}
		}
		CHECKF(same, "column %u reads differently", c);
		free(va);
		free(vb);
		free(na);
		free(nb);
	}
out:
	stg_close(pa);
	stg_close(pb);
}

static void test_for_dict_roundtrip(void)
{
	gpmdb *db = su_open(path);
	char *before, *after;

	fill(db, "-9223372036854775807");
	CHECK_RC(su_exec(db, "DELETE FROM t WHERE b = 17"), GPMDB_OK);
	before = dump(db, "t");
	gpmdb_close(db);
	CHECK(su_copy_file(path, plain) == 0);
	CHECK_RC(gpmdb_open_v2(path, &db, GPMDB_OPEN_READWRITE, NULL),
		 GPMDB_OK);
	CHECK_RC(su_exec(db, "VACUUM"), GPMDB_OK);
	after = dump(db, "t");
	CHECK(before && after && !strcmp(before, after));
	/* a: INT64_MIN + 1 .. + 8191: a frame at the bottom of int64 */
	CHECKF(!strncmp(su_storage_info(db, "t", 0, 3), "for ", 4), "a: %s",
	       su_storage_info(db, "t", 0, 3));
	CHECKF(!strncmp(su_storage_info(db, "t", 2, 3), "dict ", 5), "s: %s",
	       su_storage_info(db, "t", 2, 3));
	/* all equal: 0 bits; all NULL: 0 bits with its NULL bitmap */
	CHECKF(!strcmp(su_storage_info(db, "t", 4, 3), "for 0 bits"), "e: %s",
	       su_storage_info(db, "t", 4, 3));
	CHECKF(!strcmp(su_storage_info(db, "t", 4, 5), "0"), "e nulls: %s",
	       su_storage_info(db, "t", 4, 5));
	CHECKF(!strcmp(su_storage_info(db, "t", 5, 3), "for 0 bits"), "z: %s",
	       su_storage_info(db, "t", 5, 3));
	CHECKF(strcmp(su_storage_info(db, "t", 5, 5), "0"), "z nulls: %s",
	       su_storage_info(db, "t", 5, 5));
	/* k: 14 strings ('key0', 'key0y', ...): codes of 4 bits */
	CHECKF(!strcmp(su_storage_info(db, "t", 3, 3), "dict 4 bits"), "k: %s",
	       su_storage_info(db, "t", 3, 3));
	CHECK(!strcmp(su_scalar(db, "SELECT count(*) FROM t WHERE s = ''"),
		      su_scalar(db, "SELECT count(*) FROM t WHERE b % 3 = 1")));
	CHECK(
	    !strcmp(su_scalar(db, "SELECT count(*) FROM t WHERE b = 17"), "0"));
	CHECK(!strcmp(su_scalar(db, "SELECT min(a) FROM t"),
		      "-9223372036854775807"));
	check_ok(db);
	free(before);
	free(after);
	gpmdb_close(db);
	same_reads(plain, path);
	unlink(plain);
}

/* The top of int64, and both ends at once (plain: 64 bits is no gain). */
static void test_int64_max(void)
{
	gpmdb *db = su_open(path);
	char *before, *after;

	fill(db, "9223372036854767615"); /* + 8191 = INT64_MAX - 1 */
	CHECK_RC(su_exec(db, "INSERT INTO t VALUES (-9223372036854775807 - "
			     "1, 1, 'q', 'k', 7, NULL)"),
		 GPMDB_OK);
	before = dump(db, "t");
	CHECK_RC(su_exec(db, "VACUUM"), GPMDB_OK);
	after = dump(db, "t");
	CHECK(before && after && !strcmp(before, after));
	CHECK(!strcmp(su_scalar(db, "SELECT max(a) FROM t"),
		      "9223372036854775806"));
	CHECK(!strcmp(su_scalar(db, "SELECT min(a) FROM t"),
		      "-9223372036854775808"));
	/* the last tablet spans all of int64: kept plain */
	CHECKF(strstr(su_storage_info(db, "t", 0, 3), "plain") != NULL, "a: %s",
	       su_storage_info(db, "t", 0, 3));
	check_ok(db);
	free(before);
	free(after);
	gpmdb_close(db);
}

/* A 64-bit field and one across a word boundary, decoded by hand-made
 * descriptors. */
static void test_decode_fields(void)
{
	uint64_t w[4] = {0}, out[3];
	uint32_t o32[3];
	stg_colenc e = {.kind = STG_ENC_FOR, .bits = 64, .base = 5};

	w[0] = UINT64_MAX - 5;
	w[1] = 0;
	w[2] = 7;
	e.words = w;
	stg_colenc_decode(&e, 8, 0, 3, out);
	CHECK(out[0] == UINT64_MAX && out[1] == 5 && out[2] == 12);
	/* 40-bit fields: field 1 spans words 0 and 1 */
	memset(w, 0, sizeof(w));
	e.bits = 40;
	e.base = (uint64_t)INT64_MIN;
	w[0] = 0xffffffffffull | (0x123456789aull << 40);
	w[1] = 0x123456789aull >> 24;
	stg_colenc_decode(&e, 8, 0, 2, out);
	CHECK(out[0] == (uint64_t)INT64_MIN + 0xffffffffffull);
	CHECK(out[1] == (uint64_t)INT64_MIN + 0x123456789aull);
	/* 0 bits: every value the base, 4-byte values */
	e.bits = 0;
	e.base = (uint64_t)(int64_t)-3;
	stg_colenc_decode(&e, 4, 0, 3, o32);
	CHECK((int32_t)o32[0] == -3 && (int32_t)o32[2] == -3);
}

/* UPDATE and INSERT widen what they write; DELETE does not; a rollback
 * gives back the encoded tablet; VACUUM encodes again. */
static void test_widen(void)
{
	gpmdb *db = su_open(path);
	char *before, *after;

	fill(db, "1");
	CHECK_RC(su_exec(db, "CREATE INDEX ib ON t(b)"), GPMDB_OK);
	CHECK_RC(su_exec(db, "VACUUM"), GPMDB_OK);
	before = dump(db, "t");
	CHECK_RC(su_exec(db, "BEGIN; UPDATE t SET b = 1000 WHERE a = 5; "
			     "INSERT INTO t VALUES (1, 2, 'n', 'n', 7, 1); "
			     "DELETE FROM t WHERE a = 3000; ROLLBACK"),
		 GPMDB_OK);
	after = dump(db, "t");
	CHECK(before && after && !strcmp(before, after));
	CHECKF(!strncmp(su_storage_info(db, "t", 1, 3), "for ", 4) &&
		   !strstr(su_storage_info(db, "t", 1, 3), "plain"),
	       "b: %s", su_storage_info(db, "t", 1, 3));
	check_ok(db);
	/* an UPDATE of every row rolled back: 8192 HCL entries, the undo
	 * on every core (tablet.c par_visit), then the encoded tablets
	 * back in their slots */
	CHECK_RC(su_exec(db, "BEGIN; UPDATE t SET b = b + 1, e = 9; ROLLBACK"),
		 GPMDB_OK);
	free(after);
	after = dump(db, "t");
	CHECK(before && after && !strcmp(before, after));
	CHECKF(!strstr(su_storage_info(db, "t", 1, 3), "plain"), "b: %s",
	       su_storage_info(db, "t", 1, 3));
	check_ok(db);
	CHECK_RC(su_exec(db, "DELETE FROM t WHERE a = 3000"), GPMDB_OK);
	CHECKF(!strstr(su_storage_info(db, "t", 1, 3), "plain"), "b: %s",
	       su_storage_info(db, "t", 1, 3));
	CHECK_RC(su_exec(db, "UPDATE t SET b = 1000, s = 'new' WHERE a = 5"),
		 GPMDB_OK);
	/* tablet 0 (rows 0..1023) widened */
	CHECKF(strstr(su_storage_info(db, "t", 1, 3), "plain 1 tablet") != NULL,
	       "b: %s", su_storage_info(db, "t", 1, 3));
	CHECK_RC(su_exec(db, "INSERT INTO t VALUES (1, 2, 'n', 'n', 7, 1)"),
		 GPMDB_OK);
	CHECKF(strstr(su_storage_info(db, "t", 1, 3), "plain 2 tablets") !=
		   NULL,
	       "b: %s", su_storage_info(db, "t", 1, 3));
	CHECK(!strcmp(su_scalar(db, "SELECT b FROM t WHERE a = 5"), "1000"));
	CHECK(!strcmp(su_scalar(db, "SELECT s FROM t WHERE a = 5"), "new"));
	CHECK(!strcmp(su_scalar(db, "SELECT count(*) FROM t WHERE b = 1000"),
		      "1"));
	CHECK(!strcmp(su_scalar(db, "SELECT count(*) FROM t"), "8192"));
	check_ok(db);
	free(before);
	before = dump(db, "t");
	CHECK_RC(su_exec(db, "VACUUM"), GPMDB_OK);
	free(after);
	after = dump(db, "t");
	CHECK(before && after && !strcmp(before, after));
	CHECKF(!strstr(su_storage_info(db, "t", 1, 3), "plain"), "b: %s",
	       su_storage_info(db, "t", 1, 3));
	/* the index agrees with the rows */
	CHECK(!strcmp(su_scalar(db, "SELECT count(*) FROM t WHERE b = 1000"),
		      "1"));
	check_ok(db);
	CHECK_RC(su_exec(db, "BEGIN"), GPMDB_OK);
	CHECK(su_exec(db, "VACUUM") != GPMDB_OK);
	CHECK_RC(su_exec(db, "ROLLBACK"), GPMDB_OK);
	free(before);
	free(after);
	gpmdb_close(db);
}

static void test_auto_encode(void)
{
	gpmdb *db = su_open(path);

	CHECK_RC(su_exec(db, "PRAGMA auto_encode = ON"), GPMDB_OK);
	CHECK(!strcmp(su_scalar(db, "PRAGMA auto_encode"), "1"));
	CHECK_RC(su_exec(db, "CREATE TABLE u(a INT, s TEXT);"
			     "INSERT INTO u VALUES (1, 'a'), (2, 'a'), (3, "
			     "'b'), (4, 'a'), (5, 'b'), (6, 'a')"),
		 GPMDB_OK);
	CHECKF(!strcmp(su_storage_info(db, "u", 0, 3), "for 3 bits"), "a: %s",
	       su_storage_info(db, "u", 0, 3));
	CHECK_RC(su_exec(db, "UPDATE u SET a = 100 WHERE s = 'b'"), GPMDB_OK);
	CHECKF(!strcmp(su_storage_info(db, "u", 0, 3), "for 7 bits"), "a: %s",
	       su_storage_info(db, "u", 0, 3));
	CHECK(!strcmp(su_scalar(db, "SELECT sum(a) FROM u"), "213"));
	CHECK(su_exec(db, "PRAGMA auto_encode = maybe") != GPMDB_OK);
	CHECK_RC(su_exec(db, "PRAGMA auto_encode = OFF"), GPMDB_OK);
	CHECK_RC(su_exec(db, "INSERT INTO u VALUES (7, 'c')"), GPMDB_OK);
	CHECKF(!strcmp(su_storage_info(db, "u", 0, 3), "plain"), "a: %s",
	       su_storage_info(db, "u", 0, 3));
	check_ok(db);
	gpmdb_close(db);
}

/* A dictionary code out of range, written into the file: gpmdb_check's
 * checks (PRAGMA integrity_check) name it. */
static void test_check_codes(void)
{
	gpmdb *db = su_open(path);
	stg_open_opts o = {.readonly = true};
	stg_pool *p = NULL;
	stg_tablet_view v;
	char err[256];
	uint64_t len = 0, off = 0, ones = ~0ull;
	uint32_t tid;
	int fd;

	fill(db, "1");
	CHECK_RC(su_exec(db, "VACUUM"), GPMDB_OK);
	check_ok(db);
	gpmdb_close(db);
	CHECK_RC(stg_open(path, &o, &p, err, sizeof(err)), GPMDB_OK);
	if (!p)
		return;
	/* tablet 0's column s: a dictionary of 3 strings ('x0'-'x3' and
	 * '' for b < 1024 give 5), 3-bit codes: all ones is 7 */
	CHECK_RC(stg_table_find(p, "t", &tid), GPMDB_OK);
	CHECK_RC(stg_tablet_get(p, tid, 0, &v), GPMDB_OK);
	CHECK(v.enc && v.enc[2].kind == 2 && v.enc[2].dict_n < 8 &&
	      v.enc[2].bits == 3);
	if (v.enc)
		off = (uint64_t)((const char *)v.enc[2].words -
				 (const char *)stg_pool_base(p, &len));
	stg_close(p);
	fd = open(path, O_RDWR);
	CHECK(fd >= 0 && off > 0 &&
	      pwrite(fd, &ones, 8, (off_t)off) == (ssize_t)sizeof(ones));
	if (fd >= 0)
		close(fd);
	CHECK_RC(gpmdb_open_v2(path, &db, GPMDB_OPEN_READWRITE, NULL),
		 GPMDB_OK);
	CHECKF(strstr(rows(db, "PRAGMA integrity_check"),
		      "column s: dictionary code out of range") != NULL,
	       "%s", rows(db, "PRAGMA integrity_check"));
	/* the reads stay inside the pool: a bad code reads as '' */
	CHECK(!strcmp(su_scalar(db, "SELECT count(*) FROM t WHERE length(s) "
				    ">= 0 OR s IS NULL"),
		      "8192"));
	gpmdb_close(db);
}

/* The GPU write protocol's storage side (no GPU needed): an UPDATE
 * batch's segment is refused on encoded tablets until stg_table_widen
 * made them plain, a DELETE's is not; a rollback gives back the encoded
 * tablets. */
static void test_gpu_widen(void)
{
	gpmdb *db = su_open(path);
	stg_open_opts o = {0};
	stg_pool *p = NULL;
	stg_gpu_layout lay;
	stg_hcl_seg seg;
	uint32_t tid, col = 1, enc;
	char err[256];

	fill(db, "1");
	CHECK_RC(su_exec(db, "VACUUM"), GPMDB_OK);
	gpmdb_close(db);
	CHECK_RC(stg_open(path, &o, &p, err, sizeof(err)), GPMDB_OK);
	if (!p)
		return;
	CHECK_RC(stg_table_find(p, "t", &tid), GPMDB_OK);
	enc = stg_table_encoded(p, tid);
	CHECK(enc == 4); /* 8192 rows: tablets 0..3 */
	CHECK_RC(stg_begin(p), GPMDB_OK);
	CHECK(stg_hcl_begin_gpu(p, tid, 1, &col, 10, 1, &seg) ==
	      GPMDB_INTERNAL);
	CHECKF(strstr(stg_errmsg(p), "encoded") != NULL, "%s", stg_errmsg(p));
	/* a DELETE's segment: deleted bits only, no widening */
	CHECK_RC(stg_hcl_begin_gpu(p, tid, 0, NULL, 10, 1, &seg), GPMDB_OK);
	CHECK(stg_table_encoded(p, tid) == enc);
	CHECK_RC(stg_table_widen(p, tid, 0, UINT64_MAX), GPMDB_OK);
	CHECK(stg_table_encoded(p, tid) == 0);
	CHECK_RC(stg_gpu_layout_get(p, tid, &lay), GPMDB_OK);
	stg_gpu_layout_free(&lay);
	CHECK_RC(stg_hcl_begin_gpu(p, tid, 1, &col, 10, 1, &seg), GPMDB_OK);
	CHECK_RC(stg_rollback(p), GPMDB_OK);
	CHECK(stg_table_encoded(p, tid) == enc);
	/* outside a transaction: refused */
	CHECK(stg_table_widen(p, tid, 0, 1) != GPMDB_OK);
	stg_close(p);
	CHECK_RC(gpmdb_open_v2(path, &db, GPMDB_OPEN_READWRITE, NULL),
		 GPMDB_OK);
	check_ok(db);
	CHECK(!strcmp(su_scalar(db, "SELECT count(*) FROM t"), "8192"));
	gpmdb_close(db);
}

/* Format version 3: opens, reads, writes; VACUUM says how to upgrade. */
static void test_version3(void)
{
	gpmdb *db = su_open(path);
	stg_superblock sb;
	char *err = NULL;
	int fd;

	CHECK_RC(su_exec(db, "CREATE TABLE v(a INT); INSERT INTO v VALUES "
			     "(1), (2), (3)"),
		 GPMDB_OK);
	gpmdb_close(db);
	fd = open(path, O_RDWR);
	CHECK(fd >= 0 && pread(fd, &sb, sizeof(sb), 0) == (ssize_t)sizeof(sb));
	CHECK(sb.version == STG_FORMAT_VERSION && STG_FORMAT_VERSION == 5);
	sb.version = 3;
	sb.crc = (uint32_t)crc32(0L, (const Bytef *)&sb, STG_SB_CRC_OFF);
	CHECK(fd >= 0 && pwrite(fd, &sb, sizeof(sb), 0) == (ssize_t)sizeof(sb));
	if (fd >= 0)
		close(fd);
	CHECK_RC(gpmdb_open_v2(path, &db, GPMDB_OPEN_READWRITE, NULL),
		 GPMDB_OK);
	CHECK_RC(su_exec(db, "PRAGMA auto_encode = ON; INSERT INTO v VALUES "
			     "(4)"),
		 GPMDB_OK);
	CHECK(!strcmp(su_storage_info(db, "v", 0, 3), "plain"));
	CHECK(gpmdb_exec(db, "VACUUM", NULL, NULL, &err) == GPMDB_UNSUPPORTED);
	CHECKF(err && strstr(err, "format version 3") &&
		   strstr(err, "VACUUM INTO"),
	       "%s", err ? err : "(none)");
	gpmdb_free(err);
	CHECK(!strcmp(su_scalar(db, "SELECT sum(a) FROM v"), "10"));
	check_ok(db);
	gpmdb_close(db);
}

/* VACUUM plans a group of tablets at once, as many as the cores: the
 * table encoded in groups of 3 tablets (7 tablets, 65536 rows) has the
 * encodings and bytes (PRAGMA storage_info) and values of the one
 * encoded a tablet at a time (groups of 1). */
static void test_vacuum_groups(void)
{
	gpmdb *db = su_open(path);
	char *before, *one = NULL, *three = NULL, *d1 = NULL, *d3 = NULL;
	int was = omp_get_max_threads();

	fill(db, "1000");
	/* 2^16 rows: tablets 0..5 full and 2048 rows of tablet 6 */
	for (int i = 0; i < 3; i++)
		CHECK_RC(su_exec(db, "INSERT INTO t SELECT a + (SELECT "
				     "count(*) FROM t), b + 1, s || 'z', k, "
				     "e, z FROM t"),
			 GPMDB_OK);
	CHECK(!strcmp(su_scalar(db, "SELECT count(*) FROM t"), "65536"));
	before = dump(db, "t");
	gpmdb_close(db);
	CHECK(su_copy_file(path, plain) == 0);
	for (int k = 0; k < 2; k++) {
		omp_set_num_threads(k ? 3 : 1);
		CHECK_RC(gpmdb_open_v2(k ? path : plain, &db,
				       GPMDB_OPEN_READWRITE, NULL),
			 GPMDB_OK);
		CHECK_RC(su_exec(db, "VACUUM"), GPMDB_OK);
		*(k ? &three : &one) =
		    strdup(rows(db, "PRAGMA storage_info(t)"));
		*(k ? &d3 : &d1) = dump(db, "t");
		check_ok(db);
		gpmdb_close(db);
	}
	omp_set_num_threads(was);
	CHECK(one && three && strstr(one, "dict") && strstr(one, "for"));
	CHECKF(one && three && !strcmp(one, three), "alone:\n%s\ngroups:\n%s",
	       one, three);
	CHECK(before && d1 && d3 && !strcmp(before, d1) && !strcmp(d1, d3));
	same_reads(plain, path);
	unlink(plain);
	free(before);
	free(one);
	free(three);
	free(d1);
	free(d3);
}

int main(void)
{
	if (su_tmp_make(dir, sizeof(dir), path, sizeof(path),
			"test_storage_encode", "enc.gpmdb"))
		return 1;
	snprintf(plain, sizeof(plain), "%s.plain", path);
	TEST_RUN(test_for_dict_roundtrip);
	TEST_RUN(test_int64_max);
	TEST_RUN(test_decode_fields);
	TEST_RUN(test_widen);
	TEST_RUN(test_auto_encode);
	TEST_RUN(test_check_codes);
	TEST_RUN(test_gpu_widen);
	TEST_RUN(test_version3);
	TEST_RUN(test_vacuum_groups);
	su_tmp_remove(dir, path);
	TEST_MAIN_END();
}
