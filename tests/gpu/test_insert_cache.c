/*
 * test_insert_cache.c - a GPU INSERT (gpmdb_append_columns) into an empty
 * table leaves its columns in the GPU column cache (batch_gpu.c
 * bg_keep_*, gpu_append_keep, gcache_adopt): cache_adopted counts them,
 * the next GPU statements find them (no new cache miss), and every result
 * equals the CPU backend's, NULLs included; an UPDATE after it writes
 * through; a rolled-back INSERT's copies are never served; an INSERT into
 * a table that has rows keeps nothing; INT32 arrays widened by the
 * kernels (test_widen).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

#include "gpu/dml_util.h"

#define N 300000

static char path[256];
static gpmdb *db;

/* The query on the GPU and on the CPU: the same rows. */
static void same(const char *q)
{
	uint64_t rg, rc, hg, hc;

	CHECK_RC(du_exec(db, "PRAGMA backend = gpu"), GPMDB_OK);
	hg = du_hash(db, q, &rg);
	CHECK_RC(du_exec(db, "PRAGMA backend = cpu"), GPMDB_OK);
	hc = du_hash(db, q, &rc);
	CHECK_RC(du_exec(db, "PRAGMA backend = gpu"), GPMDB_OK);
	CHECKF(hg == hc && rg == rc, "%s: GPU and CPU differ", q);
}

/* A fresh pool /dev/shm/gpmdb_<tag>_<pid>.pool on the GPU backend under
 * gpu_strict, with the table create makes; NULL when it cannot. */
static gpmdb *open_strict(const char *tag, const char *create)
{
	snprintf(path, sizeof(path), "/dev/shm/gpmdb_%s_%d.pool", tag,
		 (int)getpid());
	unlink(path);
	db = du_open(path, "gpu", 1);
	CHECK(db);
	if (!db)
		return NULL;
	CHECK_RC(du_exec(db, "PRAGMA gpu_strict = 1"), GPMDB_OK);
	CHECK_RC(du_exec(db, create), GPMDB_OK);
	return db;
}

/* integrity_check says ok; the pool closed and removed. */
static void close_checked(void)
{
	char ok[256];

	CHECK(!strcmp(du_text(db, "PRAGMA integrity_check", ok, sizeof(ok)),
		      "ok"));
	gpmdb_close(db);
	db = NULL;
	unlink(path);
}

static int append(const char *t, const int64_t *a, const int32_t *b,
		  const uint8_t *bn, const double *c, int64_t n)
{
	gpmdb_column_array arr[3] = {{GPMDB_ARRAY_INT64, a, NULL},
				     {GPMDB_ARRAY_INT32, b, bn},
				     {GPMDB_ARRAY_DOUBLE, c, NULL}};

	return gpmdb_append_columns(db, t, 3, NULL, arr, n);
}

static void test_adopt(void)
{
	int64_t *a = malloc(8 * N);
	int32_t *b = malloc(4 * N);
	uint8_t *bn = malloc(N);
	double *c = malloc(8 * N);
	const char *q = "SELECT count(*), sum(a), count(b), sum(b), sum(c) "
			"FROM t WHERE b < 500 OR b IS NULL";
	double ad, miss;

	CHECK(a && b && bn && c);
	if (!a || !b || !bn || !c)
		goto out;
	for (int64_t i = 0; i < N; i++) {
		a[i] = i * 3 - 7;
		b[i] = (int32_t)(i % 1000);
		bn[i] = i % 7 == 2;
		c[i] = (double)i * 0.5;
	}
	if (!open_strict("inscache",
			 "CREATE TABLE t (a BIGINT, b INT, c DOUBLE)"))
		goto out;
	ad = du_stat(db, "gpu_stats", "cache_adopted");
	CHECK_RC(append("t", a, b, bn, c, N), GPMDB_OK);
	CHECKF(du_stat(db, "gpu_stats", "cache_adopted") == ad + 3,
	       "adopted %.0f columns",
	       du_stat(db, "gpu_stats", "cache_adopted") - ad);
	/* the GPU reads the INSERT's copies: no load */
	miss = du_stat(db, "gpu_stats", "cache_misses");
	CHECK_RC(du_exec(db, "PRAGMA backend = gpu"), GPMDB_OK);
	uint64_t rows;
	(void)du_hash(db, q, &rows);
	CHECKF(du_stat(db, "gpu_stats", "cache_misses") == miss,
	       "%.0f misses after the INSERT",
	       du_stat(db, "gpu_stats", "cache_misses") - miss);
	same(q);
	/* an UPDATE after it (written through), results still equal */
	CHECK_RC(du_exec(db, "UPDATE t SET b = b + 1 WHERE a < 3000"),
		 GPMDB_OK);
	same(q);
	/* more rows: nothing kept (the copy would not be the column) */
	ad = du_stat(db, "gpu_stats", "cache_adopted");
	CHECK_RC(append("t", a, b, bn, c, 1000), GPMDB_OK);
	CHECK(du_stat(db, "gpu_stats", "cache_adopted") == ad);
	same(q);
	/* rolled back: the copies are never served */
	CHECK_RC(du_exec(db, "CREATE TABLE u (a BIGINT, b INT, c DOUBLE)"),
		 GPMDB_OK);
	CHECK_RC(du_exec(db, "BEGIN"), GPMDB_OK);
	ad = du_stat(db, "gpu_stats", "cache_adopted");
	CHECK_RC(append("u", a, b, bn, c, N), GPMDB_OK);
	CHECK(du_stat(db, "gpu_stats", "cache_adopted") == ad + 3);
	same("SELECT count(*), sum(a), count(b), sum(c) FROM u WHERE a > 5");
	CHECK_RC(du_exec(db, "ROLLBACK"), GPMDB_OK);
	same("SELECT count(*), sum(a), count(b), sum(c) FROM u WHERE a > 5");
	CHECK(du_num(db, "SELECT count(*) FROM u") == 0);
	close_checked();
out:
	free(a);
	free(b);
	free(bn);
	free(c);
}

/*
 * INT32 arrays into INT (8-byte) columns go up as 4-byte values and the
 * kernels sign-extend them (bgpu_append's srcw, dml_k_widen): the values
 * at the INT32 extremes read back exactly on both backends and from the
 * cache's copies, only 4 bytes a value crossed the bus, and the unique
 * key checks read the INT32 keys (rising, falling, a duplicate).
 */
static void test_widen(void)
{
	enum { M = 200000 };
	int32_t *id = malloc(4 * M), *v = malloc(4 * M);
	int64_t sum = 0, sumid = 0;
	double up, batches;
	char q[200];

	CHECK(id && v);
	if (!id || !v)
		goto out;
	for (int64_t i = 0; i < M; i++) {
		id[i] = (int32_t)(i - M / 2); /* negative keys too */
		v[i] = i % 3 == 0   ? INT32_MIN + (int32_t)(i % 5)
		       : i % 3 == 1 ? INT32_MAX - (int32_t)(i % 7)
				    : -(int32_t)i;
		sum += v[i];
		sumid += id[i];
	}
	if (!open_strict("inswiden",
			 "CREATE TABLE w (id INT PRIMARY KEY, v INT)"))
		goto out;
	gpmdb_column_array arr[2] = {{GPMDB_ARRAY_INT32, id, NULL},
				     {GPMDB_ARRAY_INT32, v, NULL}};
	up = du_stat(db, "gpu_stats", "bytes_uploaded");
	batches = du_stat(db, "gpu_write_stats", "gpu_batches");
	CHECK_RC(gpmdb_append_columns(db, "w", 2, NULL, arr, M), GPMDB_OK);
	CHECKF(du_stat(db, "gpu_write_stats", "gpu_batches") == batches + 1,
	       "the INSERT did not run on the GPU");
	/* 4 bytes a value went up, not the 8 of a widened host copy */
	CHECKF(du_stat(db, "gpu_stats", "bytes_uploaded") - up == 8.0 * M,
	       "uploaded %.0f bytes for %d rows",
	       du_stat(db, "gpu_stats", "bytes_uploaded") - up, M);
	snprintf(q, sizeof(q),
		 "SELECT count(*) FROM w WHERE v = %d OR v = %d OR id = %d",
		 INT32_MIN, INT32_MAX, -M / 2);
	CHECK(du_num(db, q) > 0);
	same("SELECT sum(v), min(v), max(v), sum(id), min(id) FROM w");
	same("SELECT id, v FROM w WHERE v < -2000000000 ORDER BY id LIMIT 7");
	CHECK_RC(du_exec(db, "PRAGMA backend = cpu"), GPMDB_OK);
	CHECK(du_num(db, "SELECT min(v) FROM w") == (double)INT32_MIN);
	CHECK(du_num(db, "SELECT max(v) FROM w") == (double)INT32_MAX);
	CHECK(du_num(db, "SELECT sum(id) FROM w") == (double)sumid);
	CHECK(du_num(db, "SELECT sum(v) FROM w") == (double)sum);
	CHECK_RC(du_exec(db, "PRAGMA backend = gpu"), GPMDB_OK);
	/* falling keys above the others: the sorted check, then a batch
	 * whose last key is taken: refused whole */
	for (int64_t i = 0; i < 1000; i++) {
		id[i] = (int32_t)(M + 1000 - i);
		v[i] = -7;
	}
	CHECK_RC(gpmdb_append_columns(db, "w", 2, NULL, arr, 1000), GPMDB_OK);
	id[999] = 5; /* an existing key */
	for (int64_t i = 0; i < 999; i++)
		id[i] = (int32_t)(2 * M + i);
	CHECK_RC(gpmdb_append_columns(db, "w", 2, NULL, arr, 1000),
		 GPMDB_CONSTRAINT);
	CHECK(du_num(db, "SELECT count(*) FROM w") == M + 1000);
	CHECK(du_num(db, "SELECT count(*) FROM w WHERE v = -7") == 1000);
	close_checked();
out:
	free(id);
	free(v);
}

int main(void)
{
	TEST_RUN(test_adopt);
	TEST_RUN(test_widen);
	TEST_MAIN_END();
}
