/*
 * test_cache_decode.c - encoded tablets in the GPU column cache (make
 * test-gpu, on the GPU machine): frame of reference columns of every bit
 * width 0..64 (BIGINT, negative frames, the int64 limits), INT at its
 * boundaries, DECIMAL, DATE, BOOLEAN, all-equal tablets, NULLs, deleted
 * rows (before VACUUM, after it, a whole tablet), dictionaries of one and
 * many strings with NULLs and empty strings beside a plain TEXT column,
 * whole-column loads and streamed row ranges (a 1 MB cache), each query
 * run on the CPU and on the GPU under gpu_strict with the rows compared.
 * The kernel's expansion (gpu/cache_dec.cu) is counted in gpu_stats; the
 * host decode (GPMDB_GPU_HOST_DECODE=1) is checked against it too.  A
 * compressed TEXT column (zstd blocks) is unpacked on the host, block by
 * block on every core (gpu_stats cache_ztext_blocks).
 * GPMDB_TEST_ROWS=n: rows (default 40000: tablets of 1024 to 32768
 * rows); GPMDB_TEST_POOL_DIR: where the pool goes (default /dev/shm; run
 * it with GPMDB_GPU_PIN_POOL=1 too for the registered mapping's DMA).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

#include "../gpu/cache.h"
#include "../gpu/gpu.h"
#include "gpu/xq.h"

static gpmdb *db;
static char path[512];
static int nq, nmis;
/* GPMDB_GPU_HOST_DECODE=1 for the whole run: the host path everywhere,
 * the kernel's counts not expected */
static int host_run;

static void both(const char *sql)
{
	char *c, *g;

	xq_exec(db, "PRAGMA backend = cpu");
	c = xq(db, sql);
	xq_exec(db, "PRAGMA backend = gpu");
	g = xq(db, sql);
	nq++;
	if (!xq_same(c, g, 0)) {
		nmis++;
		CHECKF(0, "%s\n  cpu: %.400s\n  gpu: %.400s", sql, c, g);
	}
	CHECKF(strncmp(c, "ERROR", 5), "%s: %s", sql, c);
	CHECKF(strncmp(g, "ERROR", 5), "%s: %s", sql, g);
	free(c);
	free(g);
}

static unsigned long long stat_of(const char *name)
{
	char key[96], *s = xq(db, "PRAGMA gpu_stats"), *at;
	unsigned long long v = 0;

	snprintf(key, sizeof(key), "\n%s|", name);
	at = strstr(s, key);
	if (!at && !strncmp(s, key + 1, strlen(key) - 1))
		at = s - 1;
	CHECKF(at != NULL, "no %s in gpu_stats", name);
	if (at)
		v = strtoull(at + strlen(key), NULL, 10);
	free(s);
	return v;
}

/* The INT widths tested (INT's range is 32 bits). */
static const int iw[] = {0, 1, 7, 8, 9, 16, 17, 31, 32};
#define NIW ((int)(sizeof(iw) / sizeof(iw[0])))

/* An expression of row number i whose values in every tablet span exactly
 * k bits (min and max both present: i % 3 is 0 and 1 in any 3 rows),
 * around a negative frame. */
static void expr_bits(char *o, size_t n, int k, int is32)
{
	if (k == 0) {
		snprintf(o, n, "-12345");
	} else if (k == 64) {
		snprintf(o, n,
			 "CASE i %% 3 WHEN 0 THEN -9223372036854775807 - 1 "
			 "WHEN 1 THEN 9223372036854775807 ELSE i * 7919 - 5 "
			 "END");
	} else if (is32 && k == 32) {
		snprintf(o, n,
			 "CASE i %% 3 WHEN 0 THEN -2147483647 - 1 WHEN 1 THEN "
			 "2147483647 ELSE i * 79 - 5 END");
	} else {
		long long lo = -(1ll << (k - 1)),
			  span = (long long)((1ull << k) - 1);
		snprintf(o, n,
			 "CASE i %% 3 WHEN 0 THEN %lld WHEN 1 THEN %lld ELSE "
			 "%lld + (i * 7919) %% %llu END",
			 lo, lo + span, lo, (unsigned long long)span + 1);
	}
}

static void setup(void)
{
	long rows =
	    getenv("GPMDB_TEST_ROWS") ? atol(getenv("GPMDB_TEST_ROWS")) : 40000;
	const char *dir = getenv("GPMDB_TEST_POOL_DIR");
	static char ddl[16384], ins[65536];
	char e[512];
	size_t o;

	snprintf(path, sizeof(path), "%s/gpmdb_test_cache_decode_%d.pool",
		 dir ? dir : "/dev/shm", (int)getpid());
	unlink(path);
	CHECK_RC(gpmdb_open_v2(path, &db,
			       GPMDB_OPEN_READWRITE | GPMDB_OPEN_CREATE, NULL),
		 GPMDB_OK);
	CHECK(!xq_exec(db, "CREATE TABLE g(i BIGINT)"));
	CHECK(!xq_exec(db, "INSERT INTO g VALUES (0)"));
	for (long n = 1; n < rows; n *= 2) {
		snprintf(e, sizeof(e),
			 "INSERT INTO g SELECT i + %ld FROM g WHERE i + %ld < "
			 "%ld",
			 n, n, rows);
		CHECK(!xq_exec(db, e));
	}
	o = (size_t)snprintf(ddl, sizeof(ddl), "CREATE TABLE e(i BIGINT");
	for (int k = 0; k <= 64; k++)
		o += (size_t)snprintf(ddl + o, sizeof(ddl) - o, ", b%d BIGINT",
				      k);
	for (int k = 0; k < NIW; k++)
		o += (size_t)snprintf(ddl + o, sizeof(ddl) - o, ", n%d INTEGER",
				      iw[k]);
	snprintf(ddl + o, sizeof(ddl) - o,
		 ", m DECIMAL(12,2), dt DATE, bo BOOLEAN, bc BOOLEAN, nn "
		 "BIGINT, ce BIGINT, an INTEGER, s1 TEXT, sm TEXT, sn TEXT, "
		 "sp TEXT, zc TEXT)");
	CHECK(!xq_exec(db, ddl));
	o = (size_t)snprintf(ins, sizeof(ins), "INSERT INTO e SELECT i");
	for (int k = 0; k <= 64; k++) {
		expr_bits(e, sizeof(e), k, 0);
		o += (size_t)snprintf(ins + o, sizeof(ins) - o, ", %s", e);
	}
	for (int k = 0; k < NIW; k++) {
		expr_bits(e, sizeof(e), iw[k], 1);
		o += (size_t)snprintf(ins + o, sizeof(ins) - o, ", %s", e);
	}
	snprintf(
	    ins + o, sizeof(ins) - o,
	    ", (i %% 2003) * 1.37 - 1000.5, DATE '1992-01-01' + "
	    "CAST(i %% 2500 AS INTEGER), i %% 5 = 1, true, CASE WHEN i %% 11 "
	    "= 0 THEN NULL ELSE i * 3 - 70000 END, CASE WHEN i %% 7 = 0 "
	    "THEN NULL ELSE 42 END, NULL, 'only', 'v' || (i %% 1000), CASE "
	    "i %% 9 WHEN 0 THEN NULL WHEN 1 THEN '' ELSE 'w' || (i %% 5) "
	    "END, 'p' || i, CASE i %% 19 WHEN 0 THEN NULL WHEN 1 THEN '' "
	    "ELSE 'the quick brown fox ' || i || ' jumps over the lazy dog "
	    "' || (i * 7919 %% 10007) || ' and runs away again' END FROM g");
	CHECK(!xq_exec(db, ins));
	CHECK(!xq_exec(db, "DELETE FROM e WHERE i % 13 = 5"));
	CHECK(!xq_exec(db, "VACUUM"));
	/* deleted bits on encoded tablets, and a whole tablet (rows
	 * 1024..2047) */
	CHECK(!xq_exec(db, "DELETE FROM e WHERE i % 17 = 3"));
	CHECK(!xq_exec(db, "DELETE FROM e WHERE i >= 1024 AND i < 2048"));
	{
		char *si = xq(db, "PRAGMA storage_info(e)");
		printf("# storage_info(e):\n%.3000s\n", si);
		CHECKF(strstr(si, "for ") && strstr(si, "dict ") &&
			   strstr(si, "zstd"),
		       "not encoded: %.500s", si);
		free(si);
	}
	CHECK(!xq_exec(db, "PRAGMA gpu_strict = on"));
}

/* The compressed TEXT column zc (NULLs, empty strings, deleted rows):
 * its blocks unpacked for the load (gpu_stats cache_ztext_blocks). */
static void t_ztext(int ranges)
{
	unsigned long long z0 = stat_of("cache_ztext_blocks");

	both("SELECT count(zc), sum(length(zc)), sum(CASE WHEN zc LIKE "
	     "'%dog 1%' THEN i ELSE 0 END) FROM e");
	both("SELECT i, zc FROM e WHERE i % 37 = 3 ORDER BY i");
	both("SELECT count(*) FROM e WHERE zc LIKE '%fox 1%lazy dog 7%'");
	both("SELECT zc IS NULL, zc = '', count(*) FROM e GROUP BY 1, 2");
	if (!ranges)
		both("SELECT length(zc) % 7, count(*), sum(i) FROM e GROUP BY "
		     "1");
	both("SELECT zc, count(*) FROM e WHERE i % 101 = 7 GROUP BY zc");
	CHECKF(stat_of("cache_ztext_blocks") > z0,
	       "no compressed TEXT block unpacked");
}

/* Every row of each column through aggregates, and sampled rows whole. */
static void t_columns(void)
{
	char q[4096];
	unsigned long long d0 = stat_of("cache_decode_device_tablets");

	for (int k = 0; k <= 64; k++) {
		snprintf(q, sizeof(q),
			 "SELECT count(b%d), min(b%d), max(b%d), sum(b%d %% "
			 "1009), sum((b%d %% 1009) * (i %% 101)) FROM e",
			 k, k, k, k, k);
		both(q);
	}
	for (int k = 0; k < NIW; k++) {
		snprintf(q, sizeof(q),
			 "SELECT count(n%d), min(n%d), max(n%d), sum(n%d), "
			 "sum((n%d %% 1009) * (i %% 101)) FROM e",
			 iw[k], iw[k], iw[k], iw[k], iw[k]);
		both(q);
	}
	both("SELECT count(m), min(m), max(m), sum(m), min(dt), max(dt), "
	     "count(dt), sum(CASE WHEN bo THEN 1 ELSE 0 END), count(bc), "
	     "count(nn), sum(nn), min(nn), count(ce), sum(ce), count(an), "
	     "sum(an) FROM e");
	both("SELECT i, b0, b1, b2, b7, b8, b9, b15, b16, b17, b31, b32, b33, "
	     "b56, b57, b58, b63, b64 FROM e WHERE i % 97 = 1 ORDER BY i");
	both("SELECT i, n0, n1, n7, n8, n9, n16, n17, n31, n32, m, dt, bo, bc, "
	     "nn, ce, an FROM e WHERE i % 89 = 2 ORDER BY i");
	both("SELECT i, s1, sm, sn, sp FROM e WHERE i % 53 = 2 ORDER BY i");
	both("SELECT count(*), count(sn), sum(length(sm)), sum(length(sn)), "
	     "sum(length(sp)) FROM e");
	both("SELECT sm, count(*), min(i), max(b64) FROM e GROUP BY sm");
	both("SELECT sn, s1, count(*), sum(nn) FROM e GROUP BY 1, 2");
	both("SELECT count(*) FROM e WHERE sn = '' OR s1 <> 'only' OR sm = "
	     "'v999'");
	both("SELECT i, sm FROM e WHERE b64 = 9223372036854775807 AND i < 3000 "
	     "ORDER BY i");
	both("SELECT nn % 10, count(*), sum(b33), min(dt) FROM e WHERE nn IS "
	     "NOT NULL GROUP BY 1");
	both("SELECT count(*), sum(i) FROM e WHERE ce IS NULL");
	t_ztext(0);
	printf("# device decode: %llu tablets, %llu packed bytes; host: %llu "
	       "tablets; uploads direct %llu, staged %llu bytes\n",
	       stat_of("cache_decode_device_tablets") - d0,
	       stat_of("cache_decode_device_bytes"),
	       stat_of("cache_decode_host_tablets"),
	       stat_of("cache_upload_direct_bytes"),
	       stat_of("cache_upload_staged_bytes"));
	CHECK(host_run ? stat_of("cache_decode_host_tablets") > 0
		       : stat_of("cache_decode_device_tablets") > d0);
}

/* Row ranges (streamed scans: a 1 MB cache), tablets cut at windows. */
static void t_ranges(void)
{
	unsigned long long w0 = stat_of("stream_windows");
	unsigned long long d0 = stat_of("cache_decode_device_tablets");

	gcache_clear();
	CHECK(!xq_exec(db, "PRAGMA gpu_cache_limit = 1"));
	both("SELECT count(*), sum(b13), min(b64), max(b64), sum(n17), "
	     "count(nn), sum(m) FROM e");
	both("SELECT i, b5, b40, n9, sm, sn FROM e WHERE i % 71 = 4");
	both("SELECT sm, count(*), sum(b20) FROM e GROUP BY sm");
	both("SELECT sn, count(*) FROM e GROUP BY 1");
	both("SELECT bo, sm, count(*) FROM e GROUP BY 1, 2");
	both("SELECT bo, sn, count(*) FROM e GROUP BY 1, 2");
	both("SELECT bo, sn, count(*), max(dt) FROM e GROUP BY 1, 2");
	both("SELECT i, b64, sp FROM e WHERE b64 > 0 AND i % 61 = 0");
	t_ztext(1);
	CHECK(!xq_exec(db, "PRAGMA gpu_cache_limit = 0"));
	printf("# ranges: %llu windows, %llu tablets expanded\n",
	       stat_of("stream_windows") - w0,
	       stat_of("cache_decode_device_tablets") - d0);
	CHECKF(stat_of("stream_windows") > w0, "nothing was streamed");
	CHECK(host_run || stat_of("cache_decode_device_tablets") > d0);
}

/* TEXT past what one load addresses (gcache_text_limit: 2 GiB, here
 * lowered to 200 kB) is streamed in windows that stay under it, also
 * when the cache could hold the column and under a join (TPC-H Q13 at
 * SF30: o_comment's 2.2 GB fell back to the CPU). */
static void t_text_limit(void)
{
	unsigned long long w0 = stat_of("stream_windows"),
			   s0 = stat_of("stream_selections");

	gcache_clear();
	setenv("GPMDB_TEST_GPU_TEXT_LIMIT", "200000", 1);
	CHECK(gcache_text_limit() == 200000);
	both("SELECT count(*), sum(length(zc)), sum(length(sp)) FROM e WHERE "
	     "zc LIKE '%dog 1%'");
	both("SELECT i, zc, sp FROM e WHERE i % 97 = 5 ORDER BY i");
	both("SELECT count(*), sum(g.i) FROM e JOIN g ON e.i = g.i WHERE "
	     "e.zc NOT LIKE '%lazy dog 3%'");
	both("SELECT count(*), count(e.i) FROM g LEFT JOIN e ON e.i = g.i AND "
	     "e.zc NOT LIKE '%fox 2%'");
	/* the operator above reads columns that fit and the filters' TEXT
	 * does not: the filters in windows into a selection of the cached
	 * scan (stream_selections; e's deleted rows and whole deleted
	 * tablet shift the windows' row numbers), the operator above on the
	 * device over it */
	both("SELECT i, b3 FROM e WHERE zc LIKE '%dog 2%' ORDER BY i");
	both("SELECT i % 7, count(*), sum(b5), min(b1) FROM e WHERE zc NOT "
	     "LIKE '%fox 1%' AND i > 40 GROUP BY 1");
	both("SELECT count(DISTINCT i % 1000), count(*) FROM e WHERE zc LIKE "
	     "'%lazy%'");
	both("SELECT count(*), sum(i) FROM e WHERE zc LIKE '%no such words%'");
	both("SELECT c, count(*) FROM (SELECT g.i % 50 AS k, count(e.i) AS c "
	     "FROM g LEFT JOIN e ON e.i = g.i AND e.zc NOT LIKE '%dog 1%' "
	     "GROUP BY 1) GROUP BY c ORDER BY 2 DESC, 1 DESC");
	unsetenv("GPMDB_TEST_GPU_TEXT_LIMIT");
	printf("# text limit: %llu windows, %llu selections\n",
	       stat_of("stream_windows") - w0,
	       stat_of("stream_selections") - s0);
	CHECKF(stat_of("stream_windows") > w0, "nothing was streamed");
	CHECKF(stat_of("stream_selections") >= s0 + 6, "%llu selections",
	       stat_of("stream_selections") - s0);
	gcache_clear();
}

/* The host decode (forced) gives the same rows, counted as such. */
static void t_host_decode(void)
{
	unsigned long long h0 = stat_of("cache_decode_host_tablets");

	gcache_clear();
	setenv("GPMDB_GPU_HOST_DECODE", "1", 1);
	both("SELECT count(b33), sum(b33 % 1009), min(b64), max(n32) FROM e");
	both("SELECT i, s1, sm, sn FROM e WHERE i % 53 = 2 ORDER BY i");
	if (!host_run)
		unsetenv("GPMDB_GPU_HOST_DECODE");
	CHECK(stat_of("cache_decode_host_tablets") > h0);
	gcache_clear();
}

/* An UPDATE widens the tablets (docs/ARCHITECTURE.md "Encodings"); the
 * cache then reads them plain, and VACUUM encodes them again. */
static void t_after_write(void)
{
	both("SELECT count(*), sum(b10), count(sn) FROM e");
	CHECK(!xq_exec(db, "PRAGMA backend = cpu"));
	CHECK(!xq_exec(db, "UPDATE e SET b10 = b10 + 1, sn = 'u' WHERE i % "
			   "5 = 0 AND i < 5000"));
	both("SELECT count(*), sum(b10), count(sn), sum(length(sn)) FROM e");
	both("SELECT sn, count(*) FROM e GROUP BY 1");
	CHECK(!xq_exec(db, "VACUUM"));
	both("SELECT count(*), sum(b10), count(sn), sum(length(sn)) FROM e");
	both("SELECT i, b10, sn FROM e WHERE i % 97 = 0 ORDER BY i");
}

int main(void)
{
	char info[512];

	gpu_describe(info, sizeof(info));
	printf("# device: %s\n", info);
	host_run = getenv("GPMDB_GPU_HOST_DECODE") &&
		   !strcmp(getenv("GPMDB_GPU_HOST_DECODE"), "1");
	setup();
	TEST_RUN(t_columns);
	TEST_RUN(t_ranges);
	TEST_RUN(t_text_limit);
	TEST_RUN(t_host_decode);
	TEST_RUN(t_after_write);
	printf("# %d queries compared, %d differ\n", nq, nmis);
	gpmdb_close(db);
	unlink(path);
	TEST_MAIN_END();
}
