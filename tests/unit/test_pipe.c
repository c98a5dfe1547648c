/*
 * test_pipe.c - pipelined execution (engine/exec/pipe.c): scans, filters,
 * projections, hash-join probes (INNER, LEFT, SEMI, ANTI, NOT IN) and
 * aggregates over tables large enough for several threads, compared with
 * SQLite over the same rows; the same rows in the same order on one
 * thread and on four; full sorts of one number; errors, the memory
 * limit and EXPLAIN ANALYZE's figures of pipelined nodes.
 */
#include "harness.h"
#include "lite_same.h"
#include "sql_util.h"

#include "../engine/exec/exec.h"
#include "../engine/exec/exec_int.h"
#include "gpmdb.h"

#include <omp.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* more than pipe.c's PIPE_PAR_MIN_ROWS: the threads take part */
#define NROWS 90000
#define NDIM  1200

static char path[300];
static gpmdb *db;
static sqlite3 *lite;

static void both(const char *sql)
{
	lite_both(db, lite, sql);
}

/* f: the fact table, made by doubling a sequence (INSERT ... SELECT runs
 * through pipelines too); d: a dimension with duplicate keys, NULL keys
 * and keys that f never has. */
static void load(void)
{
	char sql[400];

	db = su_open(path);
	CHECK(sqlite3_open(":memory:", &lite) == SQLITE_OK);
	lite_seq(db, lite, NROWS);
	both("CREATE TABLE f(id BIGINT, k INT, g TEXT, v DECIMAL(12,2), "
	     "n INT)");
	snprintf(sql, sizeof(sql),
		 "INSERT INTO f SELECT id, (id * 31) %% 1500, 'g' || ((id * "
		 "7919) %% 211) || CASE WHEN id %% 3 <> 0 THEN 'x' ELSE "
		 "'long text value' END, (id %% 400) / 4.0, CASE WHEN id %% 17 "
		 "= 0 THEN NULL ELSE id %% 100 - 50 END FROM s WHERE id < %d",
		 NROWS);
	both(sql);
	/* texts long enough for LIKE's 16 starts at a time */
	both("CREATE TABLE lk(s TEXT)");
	both("INSERT INTO lk SELECT substr('Pending `requests` @ Special "
	     "deposits {sleep}; furiously special REQUESTS haggle [carefully] "
	     "among the sPeCiAl requests of x', 1 + id % 41, id % 113) FROM s "
	     "WHERE id < 6000");
	both("CREATE TABLE d(k INT, name TEXT, w INT)");
	both("BEGIN");
	for (int i = 0; i < NDIM; i++) {
		if (i % 50 == 7)
			snprintf(sql, sizeof(sql),
				 "INSERT INTO d VALUES(NULL, 'none%d', %d)", i,
				 i % 10);
		else
			snprintf(sql, sizeof(sql),
				 "INSERT INTO d VALUES(%d, 'name%d', %d)",
				 (i * 3) % 1700, i, i % 10);
		both(sql);
	}
	both("COMMIT");
	CHECK(!strcmp(su_scalar(db, "SELECT count(*) FROM f"), "90000"));
}

static void same_sql(const char *gsql, const char *lsql, bool ordered)
{
	same_sql_in(db, lite, gsql, lsql, ordered);
}

/* sql gives the same rows in gpmdb (4 threads and 1) and in SQLite. */
static void same(const char *sql, bool ordered)
{
	same_sql(sql, sql, ordered);
}

/* sql gives the same rows in the same order on 4 threads and on 1. */
static void same_threads(const char *sql)
{
	char *a = malloc(BUF), *c = malloc(BUF);

	if (a && c) {
		omp_set_num_threads(4);
		su_rows(db, sql, a, BUF);
		omp_set_num_threads(1);
		su_rows(db, sql, c, BUF);
		omp_set_num_threads(4);
		CHECKF(a[0] && a[0] != '<' && !strcmp(a, c),
		       "%s: 4 threads and 1 differ: %.200s", sql, a);
	} else {
		CHECK(0);
	}
	free(a);
	free(c);
}

static void t_filter_project_agg(void)
{
	same("SELECT count(*), sum(k), min(g), max(g), sum(n), count(n) "
	     "FROM f WHERE k % 7 <> 3 AND id > 100",
	     true);
	same("SELECT g, count(*), sum(k), CAST(sum(v) * 100 AS INTEGER), "
	     "min(id), max(n), count(n) FROM f WHERE n IS NULL OR n < 20 "
	     "GROUP BY g ORDER BY g",
	     true);
	/* groups in the order of their first row, on any thread count */
	same("SELECT g, count(*) FROM f GROUP BY g", false);
	/* enough groups for the parallel merge (MERGE_PAR_MIN): numbers,
	 * then text keys and text aggregates (their rows come out on one
	 * thread) */
	same_threads("SELECT id % 70001, count(*), sum(k), min(n), avg(v) FROM "
		     "f GROUP BY id % 70001");
	same("SELECT id % 70001, count(*), sum(k), min(n) FROM f GROUP BY id % "
	     "70001",
	     false);
	same_threads("SELECT g || (id % 70001), max(g), count(*) FROM f GROUP "
		     "BY 1");
	/* one key in scan order: each thread's groups a range of its own
	 * (merged by concatenation), with a NULL key (merged by hash) */
	same("SELECT id / 2, count(*), sum(k), min(g), avg(v) FROM f GROUP BY "
	     "id / 2",
	     false);
	same_threads("SELECT id / 2, count(*), sum(k), min(g) FROM f GROUP BY "
		     "id / 2");
	same("SELECT CASE WHEN id % 1000 = 5 THEN NULL ELSE id / 2 END, "
	     "count(*), sum(k) FROM f GROUP BY 1",
	     false);
	/* a group split by a morsel boundary between two threads */
	same("SELECT id / 3, count(*), sum(k), max(g) FROM f GROUP BY id / 3",
	     false);
	same_threads("SELECT CAST(id / 3 AS DECIMAL(10,2)), count(*) FROM f "
		     "GROUP BY 1");
	same("SELECT k % 10, min(g || id), max(g || id) FROM f GROUP BY k % 10 "
	     "ORDER BY 1",
	     true);
	same("SELECT id + k, upper(g) FROM f WHERE id % 1000 = 1", false);
	same("SELECT count(*) FROM (SELECT id * 2 AS a FROM f WHERE k < 10) "
	     "WHERE a % 3 = 0",
	     true);
	/* few groups (summed a group at a time, in row order), keys whose
	 * hashes collide (a NULL key hashes as the number 74565) */
	same("SELECT CASE WHEN n IS NULL THEN NULL ELSE 74565 END, g > 'g5', "
	     "count(*), sum(k), avg(v), sum(v * 1.5e0), count(n), avg(n), "
	     "total(k) FROM f GROUP BY 1, 2 ORDER BY 1, 2",
	     true);
	same("SELECT g > 'g3', k % 3, sum(n), avg(v), min(g) FROM f WHERE id "
	     "% 5 <> 2 GROUP BY 1, 2",
	     false);
	/* consecutive filters that cannot fail run in the order their
	 * figures favour (reordered after 32 batches of a thread: the run
	 * on 1 thread reorders); rows keep their order */
	same("SELECT id, k, g FROM f WHERE g LIKE 'g1%' AND k > 100 AND n IS "
	     "NOT NULL AND v BETWEEN 10 AND 90 AND g <> 'g17x' AND id <> 7",
	     true);
	/* one that can fail keeps the written order, and a pipeline's error
	 * is reported by the plain operators in row order anyway: the bad
	 * cast is never reached for the rows the first filter drops */
	const char *bad = "SELECT count(*) FROM f WHERE g NOT LIKE '%long%' "
			  "AND CASE WHEN id % 3 = 0 THEN CAST(g AS DATE) ELSE "
			  "DATE '2020-01-01' END < DATE '2000-01-01'";
	for (int nt = 1; nt <= 4; nt += 3) {
		omp_set_num_threads(nt);
		CHECKF(!strcmp(su_scalar(db, bad), "0"), "%s: %s", bad,
		       su_scalar(db, bad));
	}
	omp_set_num_threads(4);
	/* LIKE patterns of literal runs between '%' (matched without the
	 * general matcher), letters of either case, and others */
	static const char *pats[] = {
	    "%LONG%",	   "%1%x",    "G1%", "%x",	  "g1_%",
	    "%text%value", "%ext v%", "%%",  "%",	  "g12long text value",
	    "G%%X",	   "%lo%ng%", "g",   "%value%v%", "%e"};
	for (size_t q = 0; q < sizeof(pats) / sizeof(pats[0]); q++) {
		char sql[200];
		snprintf(sql, sizeof(sql),
			 "SELECT count(*), sum(id) FROM f WHERE g LIKE '%s'",
			 pats[q]);
		same(sql, true);
	}
	/* the same over texts long enough for 16 starts at a time
	 * (like_find): letters of either case, bytes that differ from a
	 * letter only in bit 0x20 ('@' and '`', '[' and '{'), runs at
	 * either end and across the 16-byte steps */
	static const char *lpats[] = {"%special%requests%",
				      "%SPECIAL%",
				      "%s%",
				      "%ts%",
				      "%@%",
				      "%`%",
				      "%{%",
				      "%[c%",
				      "%requests",
				      "pending%",
				      "%x",
				      "%carefully] among%",
				      "%special requests%",
				      "%e%e%e%e%",
				      "%ly%of%x",
				      "%sPecial%reQuests%x"};
	for (size_t q = 0; q < sizeof(lpats) / sizeof(lpats[0]); q++) {
		char sql[200];
		snprintf(sql, sizeof(sql),
			 "SELECT count(*), sum(length(s)) FROM lk WHERE s LIKE "
			 "'%s'",
			 lpats[q]);
		same(sql, true);
	}
	/* aggregates all DISTINCT over one argument: two phases (the
	 * distinct pairs, then the groups); NULL arguments, no rows, no
	 * GROUP BY, enough pairs for the parallel merge; mixed ones
	 * decline to the plain operator */
	same("SELECT g, count(DISTINCT n), sum(DISTINCT n), avg(DISTINCT n), "
	     "min(DISTINCT n), max(DISTINCT n) FROM f GROUP BY g",
	     false);
	same("SELECT count(DISTINCT k), sum(DISTINCT k) FROM f WHERE id > 7",
	     true);
	same("SELECT count(DISTINCT k), total(DISTINCT v) FROM f WHERE id < 0",
	     true);
	same("SELECT k % 7, count(DISTINCT g) FROM f GROUP BY 1 ORDER BY 1",
	     true);
	same("SELECT id % 3000, count(DISTINCT id % 97) FROM f GROUP BY 1",
	     false);
	same_threads(
	    "SELECT id % 3000, count(DISTINCT id % 97) FROM f GROUP BY "
	    "1");
	same("SELECT k % 5, count(DISTINCT n), count(*) FROM f GROUP BY 1",
	     false);
	/* HAVING: a filter over the aggregate's rows */
	same("SELECT k, count(*) FROM f GROUP BY k HAVING count(*) >= 60 AND "
	     "k % 7 = 1",
	     false);
}

static void t_joins(void)
{
	/* duplicate built keys: every match */
	same("SELECT f.id, d.name FROM f JOIN d ON f.k = d.k WHERE f.id % 11 = "
	     "0",
	     false);
	/* the larger input on the right: it streams, the left is built */
	same("SELECT d.name, f.id FROM d JOIN f ON d.k = f.k WHERE d.w = 3",
	     false);
	same("SELECT d.w, count(*), sum(f.k) FROM f JOIN d ON f.k = d.k "
	     "GROUP BY d.w ORDER BY 1",
	     true);
	/* a residual */
	same("SELECT count(*) FROM f JOIN d ON f.k = d.k AND f.n > d.w", true);
	same("SELECT f.id, d.name FROM f LEFT JOIN d ON f.k = d.k AND d.w > 5 "
	     "WHERE f.id % 13 = 0",
	     false);
	same("SELECT count(*), count(d.name) FROM f LEFT JOIN d ON f.k = d.k",
	     true);
	/* LEFT joins whose right input is the larger: the left rows are
	 * built and marked, those never met come out with NULLs after the
	 * stream (NULL keys, residuals over both sides, chains, under an
	 * aggregate, a top-N and TPC-H Q13's shape) */
	same("SELECT d.name, count(f.id), sum(f.n) FROM d LEFT JOIN f ON d.k = "
	     "f.k GROUP BY d.name",
	     false);
	same(
	    "SELECT d.name, f.id FROM d LEFT JOIN f ON d.k = f.k AND f.id % 97 "
	    "= 0",
	    false);
	same("SELECT count(*), count(f.id), sum(d.w) FROM d LEFT JOIN f ON d.k "
	     "= f.k AND f.n > d.w * 9",
	     true);
	same("SELECT count(*), count(f.id), count(e.id) FROM d LEFT JOIN f ON "
	     "d.k = f.k AND f.id % 5 = 0 LEFT JOIN f e ON d.k = e.k AND e.id "
	     "% 7 = 1",
	     true);
	same(
	    "SELECT d.name, f.id, d.w FROM d LEFT JOIN f ON d.k = f.k AND f.id "
	    "% 3 = 0 ORDER BY f.id, d.name LIMIT 30",
	    true);
	same("SELECT c, count(*) FROM (SELECT d.name, count(f.id) AS c FROM d "
	     "LEFT JOIN f ON d.k = f.k AND f.g NOT LIKE '%long%' GROUP BY "
	     "d.name) GROUP BY c ORDER BY 2 DESC, 1 DESC",
	     true);
	same("SELECT count(*) FROM f WHERE k IN (SELECT k FROM d WHERE w < 3)",
	     true);
	same("SELECT count(*) FROM f WHERE EXISTS (SELECT 1 FROM d WHERE d.k = "
	     "f.k AND d.w = 4)",
	     true);
	same("SELECT count(*) FROM f WHERE NOT EXISTS (SELECT 1 FROM d WHERE "
	     "d.k = f.k)",
	     true);
	/* NOT IN over a set with a NULL: no row; without: the others */
	same("SELECT count(*) FROM f WHERE k NOT IN (SELECT k FROM d)", true);
	same("SELECT count(*) FROM f WHERE k NOT IN (SELECT k FROM d WHERE k "
	     "IS NOT NULL)",
	     true);
	/* SEMI/ANTI joins whose right input is much the larger: the left
	 * rows are hashed, the right ones stream and mark them */
	same("SELECT d.name FROM d WHERE EXISTS (SELECT 1 FROM f WHERE f.k = "
	     "d.k AND f.n > d.w)",
	     false);
	same("SELECT count(*) FROM d WHERE NOT EXISTS (SELECT 1 FROM f WHERE "
	     "f.k = d.k)",
	     true);
	same("SELECT count(*), sum(d.w) FROM d WHERE d.k IN (SELECT k FROM f "
	     "WHERE id % 3 = 0)",
	     true);
	same("SELECT count(*) FROM d WHERE d.w NOT IN (SELECT n FROM f)", true);
	same("SELECT count(*) FROM d WHERE d.w + 45 NOT IN (SELECT n FROM f "
	     "WHERE n IS NOT NULL)",
	     true);
	same("SELECT count(*) FROM d WHERE d.k NOT IN (SELECT k FROM f WHERE "
	     "id < 0)",
	     true);
	/* a decorrelated scalar subquery: the outer keys keep its GROUP BY
	 * to the groups they look up */
	same("SELECT d.name, d.w FROM d WHERE d.w * 10 < (SELECT avg(f.n) + 10 "
	     "FROM f WHERE f.k = d.k)",
	     false);
	same("SELECT count(*), sum(d.w) FROM d WHERE d.k > (SELECT min(f.id) % "
	     "1700 FROM f WHERE f.k = d.k AND f.n = d.w - 50)",
	     true);
	/* joins in a chain, each built side its own breaker */
	same("SELECT a.name, count(*) FROM f JOIN d a ON f.k = a.k JOIN d b ON "
	     "f.k + 3 = b.k WHERE a.w = 1 GROUP BY a.name",
	     false);
}

/* ORDER BY ... LIMIT over a pipeline: each thread keeps its first rows
 * only; ties come out in input order as with one thread. */
static void t_topn(void)
{
	same("SELECT id, g FROM f WHERE k < 700 ORDER BY g DESC, id LIMIT 50",
	     true);
	same("SELECT k FROM f ORDER BY k LIMIT 100 OFFSET 30", true);
	same("SELECT f.id, d.name FROM f JOIN d ON f.k = d.k ORDER BY d.name, "
	     "f.id DESC LIMIT 40000",
	     true);
	same_threads("SELECT id, k FROM f ORDER BY k LIMIT 70000");
	same_threads("SELECT id, n FROM f ORDER BY n DESC LIMIT 333");
}

/* gsql in gpmdb (4 threads, then 1) gives lsql's rows in SQLite, in
 * order. */
static void same_as(const char *gsql, const char *lsql)
{
	same_sql(gsql, lsql, true);
}

/* A full ORDER BY of one number (exec_sort.c's radix sort, on all threads
 * from 65536 rows): equal keys in input order (ids ascending), NULLs
 * first or last, DESC, negatives, INT, DECIMAL and REAL. */
static void t_sort(void)
{
	static const char *const q[][2] = {
	    {"SELECT id, k FROM f ORDER BY k", "SELECT id, k FROM f ORDER BY "
					       "k, id"},
	    {"SELECT id, n FROM f ORDER BY n DESC",
	     "SELECT id, n FROM f ORDER BY n DESC, id"},
	    {"SELECT id, n FROM f ORDER BY n NULLS LAST",
	     "SELECT id, n FROM f ORDER BY n NULLS LAST, id"},
	    {"SELECT id, n FROM f ORDER BY n DESC NULLS FIRST",
	     "SELECT id, n FROM f ORDER BY n DESC NULLS FIRST, id"},
	    {"SELECT id FROM f ORDER BY v DESC", /* SQLite: 99.5, not 99.50 */
	     "SELECT id FROM f ORDER BY v DESC, id"},
	    {"SELECT id, n * 0.5 - 3 AS r FROM f ORDER BY r",
	     "SELECT id, n * 0.5 - 3 AS r FROM f ORDER BY r, id"},
	    {"SELECT id, id * -7919 + 100000 AS x FROM f ORDER BY x",
	     "SELECT id, id * -7919 + 100000 AS x FROM f ORDER BY x, id"},
	    {"SELECT id, n FROM f WHERE id < 3000 ORDER BY n",
	     "SELECT id, n FROM f WHERE id < 3000 ORDER BY n, id"},
	    {"SELECT id, n FROM f WHERE n IS NULL ORDER BY n",
	     "SELECT id, n FROM f WHERE n IS NULL ORDER BY n, id"},
	};
	for (size_t i = 0; i < sizeof(q) / sizeof(q[0]); i++)
		same_as(q[i][0], q[i][1]);
}

/* Joins on one INT, DECIMAL or DATE key whose built values span a narrow
 * range look the keys up directly (pipe_probe.c): negative keys, NULLs,
 * duplicates, stream keys outside the span, inner, LEFT and SEMI. */
static void t_direct(void)
{
	char sql[200];

	both("CREATE TABLE ea(id INT, day DATE)");
	both("CREATE TABLE eb(day DATE, w INT)");
	both("BEGIN");
	for (int i = 0; i < 600; i++) {
		if (i % 37 == 5)
			snprintf(sql, sizeof(sql),
				 "INSERT INTO ea VALUES(%d, NULL)", i);
		else
			snprintf(sql, sizeof(sql),
				 "INSERT INTO ea VALUES(%d, '2021-%02d-%02d')",
				 i, 1 + i % 12, 1 + i % 28);
		both(sql);
	}
	for (int i = 0; i < 60; i++) {
		if (i % 13 == 4)
			snprintf(sql, sizeof(sql),
				 "INSERT INTO eb VALUES(NULL, %d)", i);
		else
			snprintf(sql, sizeof(sql),
				 "INSERT INTO eb VALUES('%d-%02d-%02d', %d)",
				 2021 + i % 5 / 4, 1 + i % 3, 1 + i % 20, i);
		both(sql);
	}
	both("COMMIT");
	same("SELECT ea.id, eb.w FROM ea JOIN eb ON ea.day = eb.day", false);
	same("SELECT ea.id, eb.w FROM ea LEFT JOIN eb ON ea.day = eb.day",
	     false);
	same("SELECT f.id, d.name FROM f JOIN d ON f.n = d.k - 40 WHERE f.id "
	     "% 7 = 0",
	     false);
	same("SELECT count(*), sum(f.id) FROM f JOIN d ON f.v = CAST(d.w AS "
	     "DECIMAL(12,2))",
	     true);
	same("SELECT count(*) FROM f WHERE f.n IN (SELECT k - 40 FROM d)",
	     true);
}

/* GROUP BY one INT or DECIMAL key through pipe_agg.c's direct map: NULL
 * and negative keys, keys beyond the range of a thread's first batch,
 * ranges too wide for a map, ranges at both ends of BIGINT, 90,000
 * groups (merged in parallel). */
static void t_group_keys(void)
{
	static const char *const q[] = {
	    "SELECT n, count(*), sum(k) FROM f GROUP BY n",
	    "SELECT id, count(*), sum(k) FROM f GROUP BY id", /* merged */
	    "SELECT id / 100 AS g, count(*), sum(k) FROM f GROUP BY g",
	    "SELECT count(*), sum(id) FROM f GROUP BY v", /* 99.50: 99.5 */
	    "SELECT k * 1000003 AS g, count(*) FROM f GROUP BY g",
	    "SELECT -9223372036854775807 + k % 10 AS g, count(*) FROM f "
	    "GROUP BY g",
	    "SELECT 9223372036854775807 - k % 10 AS g, count(*), sum(n) FROM f "
	    "GROUP BY g",
	    "SELECT CASE WHEN id % 2 = 0 THEN 9223372036854775807 - k ELSE "
	    "-9223372036854775807 + k END AS g, count(*) FROM f GROUP BY g",
	};
	for (size_t i = 0; i < sizeof(q) / sizeof(q[0]); i++)
		same(q[i], false);
	same("SELECT n, count(*), min(id) FROM f GROUP BY n ORDER BY n", true);
}

/* Filters  column OP constant  over INT, REAL and DATE run
 * their own loop (pipe_filter.c): every op, the constant on either side,
 * NULLs, a second filter over the rows the first kept. */
static void t_fast_filter(void)
{
	static const char *const ops[] = {"=", "<>", "<", "<=", ">", ">="};
	char sql[300], lsql[300];

	both("CREATE TABLE fr(id BIGINT, x DOUBLE)");
	both("INSERT INTO fr SELECT id, CASE WHEN id % 11 = 0 THEN NULL ELSE "
	     "(id % 1000) / 8.0 - 50 END FROM f");
	for (int o = 0; o < 6; o++) {
		const char *op = ops[o];
		const char *q[] = {
		    "SELECT count(*), sum(id) FROM f WHERE n %s 7",
		    "SELECT count(*), sum(id) FROM f WHERE -7 %s n",
		    "SELECT count(*), sum(id) FROM f WHERE v %s 50.25",
		    "SELECT count(*), sum(id) FROM fr WHERE x %s 3.5",
		    "SELECT count(*), sum(id) FROM fr WHERE -12.125 %s x",
		    "SELECT count(*), sum(id) FROM f WHERE k > 100 AND n %s -3",
		};
		for (size_t i = 0; i < sizeof(q) / sizeof(q[0]); i++) {
			snprintf(sql, sizeof(sql), q[i], op);
			same(sql, true);
		}
		/* SQLite: dates are text */
		snprintf(sql, sizeof(sql),
			 "SELECT count(*), sum(id) FROM ea WHERE day %s DATE "
			 "'2021-06-15'",
			 op);
		snprintf(lsql, sizeof(lsql),
			 "SELECT count(*), sum(id) FROM ea WHERE day %s "
			 "'2021-06-15'",
			 op);
		same_as(sql, lsql);
	}
}

/* REAL keys whose mantissas end in zero bits (0.5 * k + 1e10), and
 * integers that end in zero bits (k * 65536), spread over the low bits
 * of their row hashes, which the CPU's hash tables index by (exec.c
 * exec_ht_first, joins, pipes): hashed as their bits, they fell into one
 * bucket, and count(DISTINCT d) or SELECT DISTINCT d over 650k REALs
 * took minutes, SELECT DISTINCT i * 65536 over 524k rows 40 s. */
static void t_hash_spread(void)
{
	enum { N = 4096, BITS = 12, K = 4 };
	static uint8_t seen[K][1 << BITS];
	static double dv[N];
	static int64_t iv[N], mv[N];
	static uint8_t nl[N];
	static uint64_t bh[N];
	rcol c[3] = {{et_make(BC_T_INT), iv, nl},
		     {et_make(BC_T_REAL), dv, nl},
		     {et_make(BC_T_INT), mv, nl}};
	rel one = {.ncols = 1, .cols = &c[1]}, two = {.ncols = 2, .cols = c},
	    mul = {.ncols = 1, .cols = &c[2]};
	int used[K] = {0};
	const char *what[K] = {"REAL", "INT, REAL", "INT k * 65536",
			       "INT k * 65536, a batch"};

	for (int k = 0; k < N; k++) {
		dv[k] = 0.5 * k + 1e10;
		iv[k] = 7;
		/* integers ending in 16 zero bits (SELECT DISTINCT i * 65536
		 * took 40 s over 524k rows, UNION as long) */
		mv[k] = (int64_t)k * 65536;
	}
	exec_hash_batch(&mul, 1, N, bh, false);
	for (uint64_t k = 0; k < N; k++) {
		uint64_t v[K] = {exec_hash_row(&one, 1, k),
				 exec_hash_row(&two, 2, k),
				 exec_hash_row(&mul, 1, k), bh[k]};
		for (int j = 0; j < K; j++) {
			uint64_t b = v[j] & ((1u << BITS) - 1);
			used[j] += !seen[j][b];
			seen[j][b] = 1;
		}
	}
	/* the batch hashes as the rows do */
	CHECK(bh[N - 1] == exec_hash_row(&mul, 1, N - 1));
	/* N keys into N buckets at random fill about 63% of them */
	for (int j = 0; j < K; j++)
		CHECKF(used[j] > N / 2, "%s: %d of %d buckets", what[j],
		       used[j], N);
	same("SELECT DISTINCT id * 65536 FROM f", false);
	same("SELECT id * 1048576 FROM f UNION SELECT k * 1048576 FROM f",
	     false);
}

/* Text keys of every length from 0 to 19 (exec_hash.c hashes 8 bytes a
 * step, then the bytes left): groups, DISTINCT and a join on them. */
static void t_text_keys(void)
{
	same("SELECT substr(g || '-abcdefghijklmnop', 1, id % 20) AS p, "
	     "count(*), sum(k) FROM f GROUP BY p",
	     false);
	same("SELECT DISTINCT substr(g || g, 2, id % 17) FROM f", false);
	same("SELECT count(*), sum(f.k) FROM f JOIN d ON substr(f.g, 1, "
	     "f.id % 9) = substr(d.name, 1, d.w)",
	     false);
}

/* An error inside the pipeline is reported once, as one thread reports
 * it; the statement leaves nothing behind. */
static void t_errors(void)
{
	char a[512], b[512];

	omp_set_num_threads(4);
	su_rows(db, "SELECT sum(id * 4611686018427387904) FROM f WHERE k > 3",
		a, sizeof(a));
	omp_set_num_threads(1);
	su_rows(db, "SELECT sum(id * 4611686018427387904) FROM f WHERE k > 3",
		b, sizeof(b));
	omp_set_num_threads(4);
	CHECKF(strstr(a, "integer overflow") && !strcmp(a, b), "%s / %s", a, b);
	/* an INT sum that overflows on the way */
	both("CREATE TABLE big(x BIGINT)");
	both("INSERT INTO big VALUES(9223372036854775000)");
	both("INSERT INTO big SELECT 1000 FROM f WHERE id < 70000");
	su_rows(db, "SELECT sum(x) FROM big", a, sizeof(a));
	CHECKF(strstr(a, "integer overflow"), "%s", a);
	CHECK(!strcmp(su_scalar(db, "SELECT count(*) FROM big"), "70001"));
	su_rows(db, "SELECT x > 5, sum(x) FROM big GROUP BY 1", a, sizeof(a));
	CHECKF(strstr(a, "integer overflow"), "%s", a);
	/* the memory limit: a clear error, then the statement works (a
	 * result whose top is a pipeline or a sort would spill) */
	CHECK(!su_exec(db, "PRAGMA memory_limit = 1"));
	su_rows(db,
		"SELECT f.id, f.g, d.name FROM f JOIN d ON f.k = d.k UNION ALL "
		"SELECT 1, 'a', 'b'",
		a, sizeof(a));
	CHECKF(strstr(a, "memory limit"), "%s", a);
	CHECK(!su_exec(db, "PRAGMA memory_limit = 0"));
	same("SELECT count(*) FROM f JOIN d ON f.k = d.k WHERE d.w = 2", true);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static double interrupted_at;

static void *interrupter(void *arg)
{
	struct timespec ts = {0, 200 * 1000000};

	(void)arg;
	nanosleep(&ts, NULL);
	interrupted_at = now_s();
	gpmdb_interrupt(db);
	return NULL;
}

/* gpmdb_interrupt stops a pipeline on every thread: a join of 800
 * million pairs ends with "interrupted" soon after the call. */
static void t_interrupt(void)
{
	pthread_t th;
	char r[256];

	omp_set_num_threads(4);
	CHECK(!pthread_create(&th, NULL, interrupter, NULL));
	su_rows(db,
		"SELECT count(*), sum(a.id + b.id) FROM f a JOIN f b ON a.k % "
		"10 = b.k % 10",
		r, sizeof(r));
	double late = now_s() - interrupted_at;
	pthread_join(th, NULL);
	CHECKF(strstr(r, "interrupted"), "%s", r);
	/* not a speed figure: a pipeline that ignored the interrupt would
	 * run for minutes */
	CHECKF(late < 5, "stopped %.3f s after the interrupt", late);
	printf("# stopped %.1f ms after gpmdb_interrupt\n", late * 1e3);
	CHECK(!strcmp(su_scalar(db, "SELECT count(*) FROM d"), "1200"));
}

/* EXPLAIN ANALYZE: the nodes inside a pipeline show their rows. */
static void t_analyze(void)
{
	char *r = malloc(1 << 16), want[64];

	if (!r) {
		CHECK(0);
		return;
	}
	su_rows(db,
		"EXPLAIN ANALYZE SELECT count(*) FROM f JOIN d ON f.k = d.k "
		"WHERE f.id < 50000",
		r, 1 << 16);
	/* the scan is its pipeline's source */
	const char *sl = strstr(r, "SCAN f  ");
	snprintf(want, sizeof(want), " source [rows=%d ", NROWS);
	CHECKF(sl && strstr(sl, "  cpu  pipeline ") &&
		   strstr(sl, "  cpu  pipeline ") < strchr(sl, '\n') &&
		   strstr(sl, want) && strstr(sl, want) < strchr(sl, '\n'),
	       "%s", r);
	const char *fl = strstr(r, "FILTER (f.id < 50000)");
	CHECKF(fl && strstr(fl, "[rows=50000 ") &&
		   strstr(fl, "[rows=50000 ") < strchr(fl, '\n'),
	       "%s", r);
	CHECKF(!strstr(r, "run inside"), "%s", r);
	free(r);
}

/* A view used twice in a statement runs once when its uses' plans are
 * the same (engine/exec/exec_share.c); uses that differ, correlated
 * ones and a statement run again after a change each compute their own
 * rows. */
static void t_views(void)
{
	char *r = malloc(1 << 16);
	gpmdb_stmt *st = NULL;

	both("CREATE VIEW vk AS SELECT k, count(*) AS c, sum(n) AS s FROM f "
	     "WHERE id % 3 <> 1 GROUP BY k");
	both("CREATE VIEW vj AS SELECT d.name, d.w, vk.c FROM d JOIN vk ON "
	     "d.k = vk.k");
	/* TPC-H Q15's shape: the rows with the greatest value */
	same("SELECT k, c, s FROM vk WHERE s = (SELECT max(s) FROM vk) ORDER "
	     "BY k",
	     true);
	same("SELECT a.k, a.c, b.c FROM vk a JOIN vk b ON a.k = b.k + 1 ORDER "
	     "BY 1 LIMIT 20",
	     true);
	/* a view of views, itself used twice */
	same(
	    "SELECT count(*), sum(c) FROM vj WHERE c > (SELECT avg(c) FROM vj)",
	    true);
	/* filters over some of the uses (above the view's rows) */
	same("SELECT (SELECT count(*) FROM vk WHERE k < 100), (SELECT count(*) "
	     "FROM vk), (SELECT sum(c) FROM vk WHERE s > 0)",
	     true);
	/* a correlated use: its rows depend on the outer row */
	same("SELECT d.name, (SELECT count(*) FROM vk WHERE vk.k = d.k), "
	     "(SELECT max(c) FROM vk) FROM d WHERE d.w = 2 ORDER BY 1",
	     true);
	same("SELECT count(*) FROM d WHERE d.w < (SELECT count(*) FROM vk "
	     "WHERE vk.k > d.k) AND d.k IN (SELECT k FROM vk)",
	     true);
	su_rows(db,
		"EXPLAIN ANALYZE SELECT k FROM vk WHERE s = (SELECT max(s) "
		"FROM vk)",
		r, 1 << 16);
	CHECKF(strstr(r, "[the rows of view vk's earlier use]"), "%s", r);
	su_rows(db,
		"EXPLAIN ANALYZE SELECT (SELECT count(*) FROM vk WHERE k < "
		"100), (SELECT count(*) FROM vk)",
		r, 1 << 16);
	CHECKF(strstr(r, "FILTER (k < 100)") && strstr(r, "earlier use"), "%s",
	       r);
	/* used once: nothing kept */
	su_rows(db, "EXPLAIN ANALYZE SELECT count(*) FROM vk", r, 1 << 16);
	CHECKF(!strstr(r, "earlier use"), "%s", r);
	/* run again after the table changed: new rows, not the kept ones */
	const char *q = "SELECT sum(c) FROM vk WHERE c >= (SELECT max(c) FROM "
			"vk)";
	CHECK(!gpmdb_prepare(db, q, -1, &st, NULL) && st);
	for (int round = 0; st && round < 2; round++) {
		char want[64];
		lite_rows(lite, q, want, sizeof(want));
		CHECK(gpmdb_step(st) == GPMDB_ROW);
		CHECKF(gpmdb_column_int64(st, 0) == atoll(want),
		       "round %d: %lld, sqlite %s", round,
		       gpmdb_column_int64(st, 0), want);
		CHECK(gpmdb_step(st) == GPMDB_DONE);
		CHECK(!gpmdb_reset(st));
		both("INSERT INTO f SELECT id + 1000000, 7, 'g', 1, 1 FROM f "
		     "WHERE id < 500");
	}
	gpmdb_finalize(st);
	both("DELETE FROM f WHERE id >= 1000000");
	both("DROP VIEW vj");
	both("DROP VIEW vk");
	free(r);
}

/* A LEFT join into a GROUP BY on its right keys (a decorrelated scalar
 * subquery) with a large right input still streams its few left rows,
 * whose keys keep the aggregate to their groups (it read all 90,000
 * when the left rows were built instead). */
static void t_kf_left(void)
{
	char *r = malloc(1 << 16);

	if (!r) {
		CHECK(0);
		return;
	}
	const char *kq = "SELECT count(*), sum(w) FROM d WHERE d.w < (SELECT "
			 "count(*) + 3 FROM f WHERE f.id = d.k)";
	same(kq, true);
	char eq[200];
	snprintf(eq, sizeof(eq), "EXPLAIN ANALYZE %s", kq);
	su_rows(db, eq, r, 1 << 16);
	const char *al = strstr(r, "HASH AGGREGATE GROUP BY f.id");
	const char *rw = al ? strstr(al, "[rows=") : NULL;
	CHECKF(rw && atol(rw + 6) > 0 && atol(rw + 6) <= NDIM, "%s", r);
	free(r);
}

int main(void)
{
	const char *tmp = getenv("TMPDIR");

	snprintf(path, sizeof(path), "%s/gpmdb_test_pipe_%d.db",
		 tmp ? tmp : "/tmp", (int)getpid());
	TEST_RUN(load);
	TEST_RUN(t_filter_project_agg);
	TEST_RUN(t_joins);
	TEST_RUN(t_kf_left);
	/* again with the parallel table builds and group merges that large
	 * inputs take (engine/exec/pipe.c pipe_small) */
	setenv("GPMDB_TEST_PIPE_SMALL", "1", 1);
	TEST_RUN(t_filter_project_agg);
	TEST_RUN(t_joins);
	TEST_RUN(t_kf_left);
	unsetenv("GPMDB_TEST_PIPE_SMALL");
	TEST_RUN(t_topn);
	TEST_RUN(t_views);
	TEST_RUN(t_sort);
	TEST_RUN(t_hash_spread);
	TEST_RUN(t_text_keys);
	TEST_RUN(t_direct);
	TEST_RUN(t_group_keys);
	TEST_RUN(t_fast_filter);
	TEST_RUN(t_errors);
	TEST_RUN(t_analyze);
	TEST_RUN(t_interrupt);
	gpmdb_close(db);
	sqlite3_close(lite);
	unlink(path);
	TEST_MAIN_END();
}
