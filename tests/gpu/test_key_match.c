/*
 * test_key_match.c - UPDATE and DELETE ... WHERE k = ? with arrays of keys
 * bound, matched on the GPU in one pass over the cached key column
 * (engine/write/batch_keys_gpu.c, gpu/keymatch.cu), against the CPU
 * backend on an identical database: the same changes counted, the same
 * rows changed (a hash of the whole table), for INT and BIGINT keys,
 * tables with and without a unique index, deleted rows (the cache's row
 * ids), keys repeated in the batch (the last parameter row wins), NULL
 * keys and absent keys (they match nothing), keys repeated in the table,
 * and a batch where no key can match.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

#include "gpu/dml_util.h"

#define N  300000
#define NP 60000 /* above the pass's 16384-key threshold */

static char pg[256], pc[256];

/* Both databases get the same statement; their change counts must agree. */
static long long both(gpmdb *g, gpmdb *c, const char *sql)
{
	CHECK_RC(du_exec(g, sql), GPMDB_OK);
	CHECK_RC(du_exec(c, sql), GPMDB_OK);
	CHECKF(gpmdb_changes(g) == gpmdb_changes(c), "%s: changes %lld / %lld",
	       sql, gpmdb_changes(g), gpmdb_changes(c));
	return gpmdb_changes(g);
}

/* One bound-array statement (values pv, keys pk with NULL flags pn) on
 * db; its change count. */
static long long run_keys(gpmdb *db, const char *sql, int wide,
			  const int64_t *pv, const void *pk, const uint8_t *pn,
			  int64_t n)
{
	gpmdb_stmt *s = NULL;
	int i = 1;
	long long ch = -1;

	CHECK_RC(gpmdb_prepare(db, sql, -1, &s, NULL), GPMDB_OK);
	if (!s)
		return -1;
	if (pv)
		CHECK_RC(gpmdb_bind_array_int64(s, i++, pv, n, NULL), GPMDB_OK);
	if (wide)
		CHECK_RC(gpmdb_bind_array_int64(s, i, pk, n, pn), GPMDB_OK);
	else
		CHECK_RC(gpmdb_bind_array_int32(s, i, pk, n, pn), GPMDB_OK);
	CHECKF(gpmdb_step(s) == GPMDB_DONE, "%s: %s", sql, gpmdb_errmsg(db));
	ch = gpmdb_changes(db);
	gpmdb_finalize(s);
	return ch;
}

static void same_table(gpmdb *g, gpmdb *c, const char *when)
{
	const char *q = "SELECT k, v FROM t ORDER BY k, v";
	uint64_t rg, rc, hg = du_hash(g, q, &rg), hc = du_hash(c, q, &rc);

	CHECKF(hg == hc, "%s: the table differs between GPU and CPU", when);
	CHECKF(rg == rc && rg > 0, "%s: %llu rows on the GPU, %llu on the CPU",
	       when, (unsigned long long)rg, (unsigned long long)rc);
}

static void one_case(int wide, int unique)
{
	gpmdb *g, *c;
	int64_t *pv = malloc(8 * NP), *pk64 = malloc(8 * NP);
	int32_t *pk32 = malloc(4 * NP), *tk32 = malloc(4 * N);
	int64_t *tk = malloc(8 * N), *tv = malloc(8 * N);
	uint8_t *pn = calloc(NP, 1);
	const void *pk = wide ? (const void *)pk64 : (const void *)pk32;
	char sql[200];
	double b0, d0;

	snprintf(pg, sizeof(pg), "/dev/shm/gpmdb_km_g_%d.pool", (int)getpid());
	snprintf(pc, sizeof(pc), "/dev/shm/gpmdb_km_c_%d.pool", (int)getpid());
	unlink(pg);
	unlink(pc);
	g = du_open(pg, "gpu", 1);
	c = du_open(pc, "cpu", 1);
	CHECK(g && c && pv && pk64 && pk32 && pn && tk && tk32 && tv);
	if (!g || !c || !pv || !pk64 || !pk32 || !pn || !tk || !tk32 || !tv)
		goto out;
	snprintf(sql, sizeof(sql), "CREATE TABLE t (k %s, v BIGINT)",
		 wide ? "BIGINT" : "INT");
	both(g, c, sql);
	/* keys k = 3 * i - 1000 (some negative); without a unique index
	 * every 7th row repeats its neighbour's key */
	for (int64_t i = 0; i < N; i++) {
		int64_t k = 3 * i - 1000;

		if (!unique && i % 7 == 3)
			k -= 3;
		tk[i] = k;
		tk32[i] = (int32_t)k;
		tv[i] = i;
	}
	{
		gpmdb_column_array arr[2] = {
		    {wide ? GPMDB_ARRAY_INT64 : GPMDB_ARRAY_INT32,
		     wide ? (const void *)tk : (const void *)tk32, NULL},
		    {GPMDB_ARRAY_INT64, tv, NULL}};
		CHECK_RC(gpmdb_append_columns(g, "t", 2, NULL, arr, N),
			 GPMDB_OK);
		CHECK_RC(gpmdb_append_columns(c, "t", 2, NULL, arr, N),
			 GPMDB_OK);
	}
	if (unique)
		both(g, c, "CREATE UNIQUE INDEX tk ON t(k)");
	/* deleted rows: the cache holds live rows and their row ids */
	both(g, c, "DELETE FROM t WHERE v % 11 = 5");
	/* from here a CPU fallback of the GPU database fails the test */
	CHECK_RC(du_exec(g, "PRAGMA gpu_strict = 1"), GPMDB_OK);
	for (int64_t i = 0; i < NP; i++) {
		int64_t r = (i * 7919) % N;
		int64_t k = 3 * r - 1000;

		if (i % 10 == 3)
			k += 1; /* absent */
		if (i % 10 == 6 && i > 0)
			k = pk64[i - 1]; /* repeated: the later one wins */
		pk64[i] = k;
		pk32[i] = (int32_t)k;
		pv[i] = 1000000 + i;
		pn[i] = i % 97 == 0; /* a NULL key matches nothing */
	}
	b0 = du_stat(g, "gpu_write_stats", "key_match_batches");
	d0 = du_stat(g, "gpu_write_stats", "key_update_dev_batches");
	long long cg =
	    run_keys(g, "UPDATE t SET v = ? WHERE k = ?", wide, pv, pk, pn, NP);
	long long cc =
	    run_keys(c, "UPDATE t SET v = ? WHERE k = ?", wide, pv, pk, pn, NP);
	CHECKF(cg == cc && cg > NP / 2, "UPDATE changes %lld GPU, %lld CPU", cg,
	       cc);
	CHECKF(du_stat(g, "gpu_write_stats", "key_match_batches") == b0 + 1,
	       "the UPDATE's keys were not matched on the GPU (%s)",
	       du_text(g, "PRAGMA gpu_key_match", sql, sizeof(sql)));
	/* the matches stayed on the device and the values went there */
	CHECK(du_stat(g, "gpu_write_stats", "key_update_dev_batches") ==
	      d0 + 1);
	same_table(g, c, "after the UPDATE");
	/* the same keys again, the cached column reused */
	for (int64_t i = 0; i < NP; i++)
		pv[i] = -i;
	cg =
	    run_keys(g, "UPDATE t SET v = ? WHERE k = ?", wide, pv, pk, pn, NP);
	cc =
	    run_keys(c, "UPDATE t SET v = ? WHERE k = ?", wide, pv, pk, pn, NP);
	CHECKF(cg == cc, "second UPDATE changes %lld GPU, %lld CPU", cg, cc);
	same_table(g, c, "after the second UPDATE");
	/* no key can match: all NULL */
	memset(pn, 1, NP);
	cg =
	    run_keys(g, "UPDATE t SET v = ? WHERE k = ?", wide, pv, pk, pn, NP);
	CHECKF(cg == 0, "all-NULL keys changed %lld rows", cg);
	memset(pn, 0, NP);
	/* an index over the set column: its keys are the host path's, the
	 * matches come down from the device */
	/* (the index's build is not what this tests: the CPU may do it) */
	CHECK_RC(du_exec(g, "PRAGMA gpu_strict = 0"), GPMDB_OK);
	both(g, c, "CREATE INDEX tv ON t(v)");
	CHECK_RC(du_exec(g, "PRAGMA gpu_strict = 1"), GPMDB_OK);
	d0 = du_stat(g, "gpu_write_stats", "key_update_dev_batches");
	for (int64_t i = 0; i < NP; i++)
		pv[i] = 3 * i + 1;
	cg =
	    run_keys(g, "UPDATE t SET v = ? WHERE k = ?", wide, pv, pk, pn, NP);
	cc =
	    run_keys(c, "UPDATE t SET v = ? WHERE k = ?", wide, pv, pk, pn, NP);
	CHECKF(cg == cc && cg > 0,
	       "UPDATE of an indexed column: changes "
	       "%lld GPU, %lld CPU",
	       cg, cc);
	CHECK(du_stat(g, "gpu_write_stats", "key_update_dev_batches") == d0);
	same_table(g, c, "after the UPDATE of an indexed column");
	CHECK_RC(du_exec(g, "PRAGMA gpu_strict = 0"), GPMDB_OK);
	both(g, c, "DROP INDEX tv");
	CHECK_RC(du_exec(g, "PRAGMA gpu_strict = 1"), GPMDB_OK);
	/* the index path still there, and the same */
	CHECK_RC(du_exec(g, "PRAGMA gpu_key_match = probe"), GPMDB_OK);
	for (int64_t i = 0; i < NP; i++)
		pv[i] = 7 * i;
	b0 = du_stat(g, "gpu_write_stats", "key_match_batches");
	cg =
	    run_keys(g, "UPDATE t SET v = ? WHERE k = ?", wide, pv, pk, pn, NP);
	cc =
	    run_keys(c, "UPDATE t SET v = ? WHERE k = ?", wide, pv, pk, pn, NP);
	CHECKF(cg == cc && cg > 0, "index UPDATE changes %lld GPU, %lld CPU",
	       cg, cc);
	CHECK(du_stat(g, "gpu_write_stats", "key_match_batches") == b0);
	same_table(g, c, "after the UPDATE with gpu_key_match = probe");
	/* DELETE by keys (matched in one pass again) */
	CHECK_RC(du_exec(g, "PRAGMA gpu_key_match = pass"), GPMDB_OK);
	cg = run_keys(g, "DELETE FROM t WHERE k = ?", wide, NULL, pk, pn, NP);
	cc = run_keys(c, "DELETE FROM t WHERE k = ?", wide, NULL, pk, pn, NP);
	CHECKF(cg == cc && cg > 0, "DELETE changes %lld GPU, %lld CPU", cg, cc);
	same_table(g, c, "after the DELETE");
	CHECK(!strcmp(du_text(g, "PRAGMA integrity_check", sql, sizeof(sql)),
		      "ok"));
out:
	if (g)
		gpmdb_close(g);
	if (c)
		gpmdb_close(c);
	unlink(pg);
	unlink(pc);
	free(pv);
	free(pk64);
	free(pk32);
	free(pn);
	free(tk);
	free(tk32);
	free(tv);
}

static void test_bigint_unique(void)
{
	one_case(1, 1);
}

static void test_bigint_repeated(void)
{
	one_case(1, 0);
}

static void test_int_unique(void)
{
	one_case(0, 1);
}

static void test_bad_pragma(void)
{
	gpmdb *db;

	snprintf(pg, sizeof(pg), "/dev/shm/gpmdb_km_p_%d.pool", (int)getpid());
	unlink(pg);
	db = du_open(pg, "gpu", 1);
	CHECK(db);
	if (!db)
		return;
	CHECK_RC(du_exec(db, "PRAGMA gpu_key_match = sometimes"), GPMDB_ERROR);
	CHECK(strstr(gpmdb_errmsg(db), "gpu_key_match is pass or probe"));
	gpmdb_close(db);
	unlink(pg);
}

int main(void)
{
	TEST_RUN(test_bigint_unique);
	TEST_RUN(test_bigint_repeated);
	TEST_RUN(test_int_unique);
	TEST_RUN(test_bad_pragma);
	TEST_MAIN_END();
}
