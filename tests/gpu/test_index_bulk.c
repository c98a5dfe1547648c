/*
 * test_index_bulk.c - indexes' bulk work on the GPU through SQL and the
 * batch API (backend = gpu, gpu_strict = 1, so a CPU fallback fails the
 * test): CREATE INDEX sorted on the GPU equal to the table (the integrity
 * check compares every entry with its row), a UNIQUE index over repeated
 * keys refused, the uniqueness check of a large batch INSERT (its keys
 * sorted on the GPU; the duplicate named by row and key, nothing written),
 * and UPDATE ... WHERE k = ? bound to an array of keys probed on the GPU,
 * with the same rows changed as the CPU backend changes.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

#include "gpu/dml_util.h"

#define N    400000 /* above the GPU sort's 256k threshold */
#define NNEW 300000
#define NP   100000 /* above the GPU probe's 64k threshold */

static char path[256];

static uint64_t step_of(uint64_t n)
{
	uint64_t s = (uint64_t)(n * 0.618) | 1;

	for (;; s += 2) {
		uint64_t a = s, b = n;
		while (b) {
			uint64_t t = a % b;
			a = b;
			b = t;
		}
		if (a == 1)
			return s;
	}
}

static int append(gpmdb *db, const int64_t *k, const int64_t *v, int64_t n)
{
	gpmdb_column_array arr[2] = {{GPMDB_ARRAY_INT64, k, NULL},
				     {GPMDB_ARRAY_INT64, v, NULL}};

	return gpmdb_append_columns(db, "t", 2, NULL, arr, n);
}

static void check_ok(gpmdb *db, const char *when)
{
	char ok[512];

	CHECKF(!strcmp(du_text(db, "PRAGMA integrity_check", ok, sizeof(ok)),
		       "ok"),
	       "%s: integrity: %s", when, ok);
}

static void test_build_check_probe(void)
{
	gpmdb *db;
	int64_t *k = malloc(8 * (N + NNEW)), *v = malloc(8 * (N + NNEW));
	int64_t *pk = malloc(8 * NP), *pv = malloc(8 * NP);
	uint64_t st = step_of(N);
	double sum_gpu, sum_cpu;

	snprintf(path, sizeof(path), "/dev/shm/gpmdb_ixsql_%d.pool",
		 (int)getpid());
	unlink(path);
	db = du_open(path, "gpu", 1);
	CHECK(db);
	if (!db)
		return;
	CHECK_RC(du_exec(db, "PRAGMA gpu_strict = 1"), GPMDB_OK);
	CHECK_RC(du_exec(db, "CREATE TABLE t (k BIGINT, v BIGINT)"), GPMDB_OK);
	for (uint64_t i = 0; i < N; i++) {
		k[i] = (int64_t)(i * st % N) * 2; /* even keys, shuffled */
		v[i] = (int64_t)(i % 1000);	  /* repeated */
	}
	CHECK_RC(append(db, k, v, N), GPMDB_OK);
	/* the build: sorted on the GPU (gpu_strict), equal to the table */
	CHECK_RC(du_exec(db, "CREATE UNIQUE INDEX tk ON t(k)"), GPMDB_OK);
	CHECK(du_stat(db, "gpu_stats", "index_sort_gpu") == 1);
	CHECK(du_stat(db, "gpu_stats", "index_sort_rows") == N);
	CHECK_RC(du_exec(db, "CREATE INDEX tvk ON t(v, k)"), GPMDB_OK);
	check_ok(db, "after CREATE INDEX");
	/* repeated keys: refused, no index left */
	CHECK_RC(du_exec(db, "CREATE UNIQUE INDEX tv ON t(v)"),
		 GPMDB_CONSTRAINT);
	CHECK(strstr(gpmdb_errmsg(db), "UNIQUE constraint failed: t.v"));
	CHECK(du_num(db, "SELECT count(*) FROM sqlite_master WHERE name = "
			 "'tv'") == 0);
	/* a large batch with one key already there, at row 200001 */
	for (uint64_t i = 0; i < NNEW; i++) {
		k[N + i] = 2 * N + 1 + 2 * (int64_t)i; /* new odd keys */
		v[N + i] = 7;
	}
	k[N + 200000] = k[12345];
	CHECK_RC(append(db, k + N, v + N, NNEW), GPMDB_CONSTRAINT);
	/* rows count from 0 in the batch API's messages */
	CHECKF(strstr(gpmdb_errmsg(db), "UNIQUE constraint failed: t.k") &&
		   strstr(gpmdb_errmsg(db), "row 200000") &&
		   strstr(gpmdb_errmsg(db), "(t.k = "),
	       "message: %s", gpmdb_errmsg(db));
	CHECK(du_stat(db, "gpu_stats", "index_sort_gpu") == 1);
	CHECK(du_num(db, "SELECT count(*) FROM t") == N);
	k[N + 200000] = 2 * N + 1 + 2 * 200000;
	CHECK_RC(append(db, k + N, v + N, NNEW), GPMDB_OK);
	check_ok(db, "after the batch INSERT");
	/* UPDATE by bound keys: probed in the index on the GPU (the pass
	 * over the cached column, the default, is test_key_match's); every
	 * 3rd key absent */
	CHECK_RC(du_exec(db, "PRAGMA gpu_key_match = probe"), GPMDB_OK);
	for (int64_t i = 0; i < NP; i++) {
		pk[i] = i % 3 == 2 ? -1 - i : k[(i * 7) % (N + NNEW)];
		pv[i] = 1000000 + i;
	}
	{
		gpmdb_stmt *s = NULL;
		CHECK_RC(gpmdb_prepare(db, "UPDATE t SET v = ? WHERE k = ?", -1,
				       &s, NULL),
			 GPMDB_OK);
		CHECK_RC(gpmdb_bind_array_int64(s, 1, pv, NP, NULL), GPMDB_OK);
		CHECK_RC(gpmdb_bind_array_int64(s, 2, pk, NP, NULL), GPMDB_OK);
		CHECK_RC(gpmdb_step(s), GPMDB_DONE);
		CHECKF(gpmdb_changes(db) == NP - NP / 3, "changes %lld",
		       gpmdb_changes(db));
		gpmdb_finalize(s);
	}
	CHECK(du_stat(db, "gpu_stats", "index_probe_gpu") == 1);
	CHECK(du_stat(db, "gpu_stats", "index_probe_keys") == NP);
	sum_gpu = du_num(db, "SELECT sum(v) FROM t");
	check_ok(db, "after the UPDATE");
	gpmdb_close(db);
	/* the same UPDATE on the CPU backend over the same keys: the sum
	 * must not change (the values are the same) */
	db = du_open(path, "cpu", 0);
	CHECK(db);
	if (db) {
		gpmdb_stmt *s = NULL;
		CHECK_RC(gpmdb_prepare(db, "UPDATE t SET v = ? WHERE k = ?", -1,
				       &s, NULL),
			 GPMDB_OK);
		CHECK_RC(gpmdb_bind_array_int64(s, 1, pv, NP, NULL), GPMDB_OK);
		CHECK_RC(gpmdb_bind_array_int64(s, 2, pk, NP, NULL), GPMDB_OK);
		CHECK_RC(gpmdb_step(s), GPMDB_DONE);
		CHECK(gpmdb_changes(db) == NP - NP / 3);
		gpmdb_finalize(s);
		sum_cpu = du_num(db, "SELECT sum(v) FROM t");
		CHECKF(sum_cpu == sum_gpu, "sum %f on the CPU, %f on the GPU",
		       sum_cpu, sum_gpu);
		gpmdb_close(db);
	}
	unlink(path);
	free(k);
	free(v);
	free(pk);
	free(pv);
}

/* A batch into an empty table with a unique key: the GPU's sort reports
 * the batch's duplicates itself (storage/index.c check_keys, no host pass
 * over the sorted keys): the later row of the first pair, by the lowest
 * such row, named; nothing written; then the batch without them. */
static void test_empty_dup(void)
{
	gpmdb *db;
	int64_t *k = malloc(8 * N), *v = malloc(8 * N);
	uint64_t st = step_of(N);

	snprintf(path, sizeof(path), "/dev/shm/gpmdb_ixdup_%d.pool",
		 (int)getpid());
	unlink(path);
	db = du_open(path, "gpu", 1);
	CHECK(db && k && v);
	if (!db || !k || !v) {
		free(k);
		free(v);
		return;
	}
	CHECK_RC(du_exec(db, "PRAGMA gpu_strict = 1"), GPMDB_OK);
	CHECK_RC(du_exec(db, "CREATE TABLE t (k BIGINT PRIMARY KEY, "
			     "v BIGINT)"),
		 GPMDB_OK);
	for (uint64_t i = 0; i < N; i++) {
		k[i] = (int64_t)(i * st % N) - 1000; /* shuffled, some < 0 */
		v[i] = (int64_t)i;
	}
	/* two pairs: row 390000 repeats row 17's key, row 300000 row
	 * 250000's; the lower later row (300000) is named */
	k[390000] = k[17];
	k[300000] = k[250000];
	CHECK_RC(append(db, k, v, N), GPMDB_CONSTRAINT);
	CHECKF(strstr(gpmdb_errmsg(db), "UNIQUE constraint failed: t.k") &&
		   strstr(gpmdb_errmsg(db), "row 300000"),
	       "message: %s", gpmdb_errmsg(db));
	CHECK(du_stat(db, "gpu_stats", "index_sort_gpu") == 1);
	CHECK(du_num(db, "SELECT count(*) FROM t") == 0);
	/* only the first pair left: row 390000 */
	k[300000] = (int64_t)(300000 * st % N) - 1000;
	CHECK_RC(append(db, k, v, N), GPMDB_CONSTRAINT);
	CHECKF(strstr(gpmdb_errmsg(db), "row 390000"), "message: %s",
	       gpmdb_errmsg(db));
	k[390000] = (int64_t)(390000 * st % N) - 1000;
	CHECK_RC(append(db, k, v, N), GPMDB_OK);
	CHECK(du_num(db, "SELECT count(*) FROM t") == N);
	CHECK(du_num(db, "SELECT v FROM t WHERE k = -1000") == 0);
	check_ok(db, "after the batch into the empty table");
	gpmdb_close(db);
	unlink(path);
	free(k);
	free(v);
}

int main(void)
{
	TEST_RUN(test_build_check_probe);
	TEST_RUN(test_empty_dup);
	TEST_MAIN_END();
}
