/*
 * bench_kv.c - a key-value workload in the spirit of YCSB (issue 15):
 * gpmdb beside SQLite (WAL, synchronous=FULL) and DuckDB (its ART index),
 * each on /dev/shm and on disk, in the same run, through each engine's C
 * API with prepared statements in autocommit mode (one transaction per
 * statement).
 *
 * The table k(id INTEGER PRIMARY KEY, v INT) holds ids 1..N (v = id * 7
 * mod 1000), loaded by each engine's bulk path.  Workloads, each of
 * --ops operations on keys drawn uniformly from 1..N by the same seeded
 * generator for every engine:
 *   read    SELECT v FROM k WHERE id = ?
 *   update  UPDATE k SET v = v + 1 WHERE id = ?
 *   mix     50% read, 50% update
 *   scan    SELECT id, v FROM k WHERE id BETWEEN ? AND ?  (lo, lo + 99:
 *           100 keys, every row read by the client)
 *   insert  INSERT INTO k VALUES (?, ?) of new keys N + 1, N + 2, ...
 * Each operation is timed (bind, execute, read every row, reset): the
 * table gives operations per second, p50, p99 and the largest latency,
 * and the time per operation against SQLite on /dev/shm.  Every engine must see
 * the same values: a checksum of the rows read and changed per workload, and
 * count(*) and sum(v) at the end, are compared with SQLite's.
 *
 * Then the fresh-process INSERT: the program runs itself (fork + exec,
 * --insert-one) to open the database, insert one new key and close, five
 * times into the N-key table and five times into the empty table of a new
 * database; the median wall times and their ratio (issue 15's aim: within
 * 2x).
 *
 * Usage: bench_kv [--rows N[,N...]] [--ops N] [--shm DIR] [--disk DIR]
 *                 [--engines LIST] [--workloads LIST] [--dat FILE]
 * Environment: KV_ROWS, KV_OPS (defaults of --rows and --ops).
 * docs/benchmarks.md describes it; tpc/run_bench.sh runs it
 * (BENCH_ONLY=kv) and tpc/kv/plot_kv.sh draws the chart.
 */
#include "../bench_util.h"
#include "../peers/duckdb_dl.h"
#include "gpmdb.h"

#include <errno.h>
#include <inttypes.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

const char bench_prog[] = "bench_kv";

enum { KV_GPMDB, KV_SQLITE, KV_DUCKDB };
enum { ST_GET, ST_UPD, ST_INS, ST_SCAN, ST_N };
enum { W_READ, W_UPDATE, W_MIX, W_SCAN, W_INSERT, W_N };

static const char *const kv_sql[ST_N] = {
    "SELECT v FROM k WHERE id = ?",
    "UPDATE k SET v = v + 1 WHERE id = ?",
    "INSERT INTO k VALUES (?, ?)",
    "SELECT id, v FROM k WHERE id BETWEEN ? AND ?",
};
static const char *const kv_wname[W_N] = {"read", "update", "mix", "scan",
					  "insert"};
static const char *const kv_wdesc[W_N] = {
    "point SELECT by key", "UPDATE by key", "50/50 read/update",
    "100-key range scan", "INSERT of new keys"};

#define KV_NENG 6
static const struct {
	const char *name;
	int kind;
	int disk; /* 0: the --shm folder, 1: the --disk folder */
} kv_engines[KV_NENG] = {
    {"gpmdb-shm", KV_GPMDB, 0},	  {"gpmdb-disk", KV_GPMDB, 1},
    {"sqlite-shm", KV_SQLITE, 0}, {"sqlite-disk", KV_SQLITE, 1},
    {"duckdb-shm", KV_DUCKDB, 0}, {"duckdb-disk", KV_DUCKDB, 1},
};
#define KV_REF 2 /* sqlite-shm: the reference of ratios and checks */

typedef struct {
	int kind;
	char path[1024];
	gpmdb *g;
	gpmdb_stmt *gs[ST_N];
	sqlite3 *s;
	sqlite3_stmt *ss[ST_N];
	duckdl *dl;
	duckdl_database ddb;
	duckdl_connection dcon;
	duckdl_prepared dp[ST_N];
} kv_db;

typedef struct {
	bool run, failed;
	char err[512];
	uint64_t ops;
	double secs, p50_us, p99_us, max_us;
	uint64_t check;
} kv_res;

/* ---- engines ---------------------------------------------------------- */

static void kv_paths_remove(const char *path)
{
	static const char *const sfx[] = {"", "-wal", "-shm", "-journal",
					  ".wal"};
	char p[1100];
	for (size_t i = 0; i < sizeof(sfx) / sizeof(sfx[0]); i++) {
		snprintf(p, sizeof(p), "%s%s", path, sfx[i]);
		unlink(p);
	}
}

static int kv_gexec(kv_db *d, const char *sql, char *err, size_t errlen)
{
	char *msg = NULL;
	if (gpmdb_exec(d->g, sql, NULL, NULL, &msg) != GPMDB_OK) {
		snprintf(err, errlen, "%s: %s", sql, msg ? msg : "failed");
		gpmdb_free(msg);
		return -1;
	}
	return 0;
}

static int kv_sexec(kv_db *d, const char *sql, char *err, size_t errlen)
{
	char *msg = NULL;
	if (sqlite3_exec(d->s, sql, NULL, NULL, &msg) != SQLITE_OK) {
		snprintf(err, errlen, "%s: %s", sql, msg ? msg : "failed");
		sqlite3_free(msg);
		return -1;
	}
	return 0;
}

/* Opens the database at d->path (created when missing). */
static int kv_open(kv_db *d, char *err, size_t errlen)
{
	switch (d->kind) {
	case KV_GPMDB:
		if (gpmdb_open_v2(d->path, &d->g,
				  GPMDB_OPEN_READWRITE | GPMDB_OPEN_CREATE,
				  NULL) != GPMDB_OK) {
			snprintf(err, errlen, "gpmdb_open_v2 %.200s: %s",
				 d->path,
				 d->g ? gpmdb_errmsg(d->g) : "out of memory");
			gpmdb_close(d->g);
			d->g = NULL;
			return -1;
		}
		return 0;
	case KV_SQLITE:
		if (sqlite3_open(d->path, &d->s) != SQLITE_OK) {
			snprintf(err, errlen, "sqlite3_open %.200s: %s",
				 d->path, sqlite3_errmsg(d->s));
			sqlite3_close(d->s);
			d->s = NULL;
			return -1;
		}
		return kv_sexec(d,
				"PRAGMA journal_mode=WAL; "
				"PRAGMA synchronous=FULL",
				err, errlen);
	default:
		return duckdl_open(d->dl, d->path, 0, &d->ddb, &d->dcon, err,
				   errlen);
	}
}

static void kv_close(kv_db *d)
{
	for (int i = 0; i < ST_N; i++) {
		if (d->gs[i])
			gpmdb_finalize(d->gs[i]);
		if (d->ss[i])
			sqlite3_finalize(d->ss[i]);
		if (d->dp[i])
			d->dl->destroy_prepare(&d->dp[i]);
		d->gs[i] = NULL;
		d->ss[i] = NULL;
		d->dp[i] = NULL;
	}
	if (d->g)
		gpmdb_close(d->g);
	if (d->s)
		sqlite3_close(d->s);
	if (d->ddb)
		duckdl_close(d->dl, &d->ddb, &d->dcon);
	d->g = NULL;
	d->s = NULL;
	d->ddb = NULL;
	d->dcon = NULL;
}

static int kv_exec(kv_db *d, const char *sql, char *err, size_t errlen)
{
	switch (d->kind) {
	case KV_GPMDB:
		return kv_gexec(d, sql, err, errlen);
	case KV_SQLITE:
		return kv_sexec(d, sql, err, errlen);
	default:
		return duckdl_exec(d->dl, d->dcon, sql, err, errlen);
	}
}

static const char *kv_create_sql(int kind)
{
	/* INT is 64-bit in gpmdb; DuckDB's INTEGER is 32-bit */
	return kind == KV_DUCKDB
		   ? "CREATE TABLE k(id BIGINT PRIMARY KEY, v BIGINT)"
		   : "CREATE TABLE k(id INTEGER PRIMARY KEY, v INT)";
}

/* Creates k with ids 1..n by the engine's bulk path. */
static int kv_load(kv_db *d, uint64_t n, char *err, size_t errlen)
{
	char sql[512];

	if (kv_exec(d, kv_create_sql(d->kind), err, errlen))
		return -1;
	if (!n)
		return 0;
	if (d->kind == KV_GPMDB) {
		int64_t *id = bench_alloc(n * sizeof(int64_t));
		int64_t *v = bench_alloc(n * sizeof(int64_t));
		for (uint64_t i = 0; i < n; i++) {
			id[i] = (int64_t)i + 1;
			v[i] = (int64_t)((i + 1) * 7 % 1000);
		}
		gpmdb_column_array cols[2] = {
		    {GPMDB_ARRAY_INT64, id, NULL},
		    {GPMDB_ARRAY_INT64, v, NULL},
		};
		int rc =
		    gpmdb_append_columns(d->g, "k", 2, NULL, cols, (int64_t)n);
		if (rc != GPMDB_OK)
			snprintf(err, errlen, "gpmdb_append_columns: %s",
				 gpmdb_errmsg(d->g));
		free(id);
		free(v);
		return rc == GPMDB_OK ? 0 : -1;
	}
	if (d->kind == KV_SQLITE) {
		snprintf(sql, sizeof(sql),
			 "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT "
			 "x + 1 FROM c WHERE x < %" PRIu64
			 ") INSERT INTO k SELECT x, x * 7 %% 1000 FROM c",
			 n);
		return kv_sexec(d, sql, err, errlen);
	}
	snprintf(sql, sizeof(sql),
		 "INSERT INTO k SELECT r + 1, (r + 1) * 7 %% 1000 FROM "
		 "range(%" PRIu64 ") t(r)",
		 n);
	return duckdl_exec(d->dl, d->dcon, sql, err, errlen);
}

static int kv_prepare(kv_db *d, char *err, size_t errlen)
{
	for (int i = 0; i < ST_N; i++) {
		int bad;
		if (d->kind == KV_GPMDB) {
			bad = gpmdb_prepare(d->g, kv_sql[i], -1, &d->gs[i],
					    NULL) != GPMDB_OK;
			if (bad)
				snprintf(err, errlen, "prepare %s: %s",
					 kv_sql[i], gpmdb_errmsg(d->g));
		} else if (d->kind == KV_SQLITE) {
			bad = sqlite3_prepare_v2(d->s, kv_sql[i], -1, &d->ss[i],
						 NULL) != SQLITE_OK;
			if (bad)
				snprintf(err, errlen, "prepare %s: %s",
					 kv_sql[i], sqlite3_errmsg(d->s));
		} else {
			bad = d->dl->prepare(d->dcon, kv_sql[i], &d->dp[i]) !=
			      DUCKDL_OK;
			if (bad)
				snprintf(err, errlen, "prepare %s: %s",
					 kv_sql[i],
					 d->dl->prepare_error(d->dp[i]));
		}
		if (bad)
			return -1;
	}
	return 0;
}

/* Runs prepared statement st with parameters a (and b for INSERT and the
 * scan); adds the rows read (id + v, or v) and the rows changed to *sum. */
static int kv_op(kv_db *d, int st, int64_t a, int64_t b, uint64_t *sum,
		 char *err, size_t errlen)
{
	int two = st == ST_INS || st == ST_SCAN;

	if (d->kind == KV_GPMDB) {
		gpmdb_stmt *s = d->gs[st];
		int rc;
		gpmdb_bind_int64(s, 1, a);
		if (two)
			gpmdb_bind_int64(s, 2, b);
		while ((rc = gpmdb_step(s)) == GPMDB_ROW) {
			*sum += (uint64_t)gpmdb_column_int64(s, 0);
			if (st == ST_SCAN)
				*sum += (uint64_t)gpmdb_column_int64(s, 1);
		}
		if (rc != GPMDB_DONE) {
			snprintf(err, errlen, "%s: %s", kv_sql[st],
				 gpmdb_errmsg(d->g));
			gpmdb_reset(s);
			return -1;
		}
		if (st == ST_UPD || st == ST_INS)
			*sum += (uint64_t)gpmdb_changes(d->g);
		gpmdb_reset(s);
		return 0;
	}
	if (d->kind == KV_SQLITE) {
		sqlite3_stmt *s = d->ss[st];
		int rc;
		sqlite3_bind_int64(s, 1, a);
		if (two)
			sqlite3_bind_int64(s, 2, b);
		while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
			*sum += (uint64_t)sqlite3_column_int64(s, 0);
			if (st == ST_SCAN)
				*sum += (uint64_t)sqlite3_column_int64(s, 1);
		}
		if (rc != SQLITE_DONE) {
			snprintf(err, errlen, "%s: %s", kv_sql[st],
				 sqlite3_errmsg(d->s));
			sqlite3_reset(s);
			return -1;
		}
		if (st == ST_UPD || st == ST_INS)
			*sum += (uint64_t)sqlite3_changes(d->s);
		sqlite3_reset(s);
		return 0;
	}
	duckdl *dl = d->dl;
	duckdl_result r;
	dl->bind_int64(d->dp[st], 1, a);
	if (two)
		dl->bind_int64(d->dp[st], 2, b);
	if (dl->execute_prepared(d->dp[st], &r) != DUCKDL_OK) {
		snprintf(err, errlen, "%s: %s", kv_sql[st],
			 dl->result_error(&r) ? dl->result_error(&r)
					      : "failed");
		dl->destroy_result(&r);
		return -1;
	}
	/* DML answers one row, the count of rows changed */
	duckdl_idx n = dl->row_count(&r);
	for (duckdl_idx i = 0; i < n; i++) {
		*sum += (uint64_t)dl->value_int64(&r, 0, i);
		if (st == ST_SCAN)
			*sum += (uint64_t)dl->value_int64(&r, 1, i);
	}
	dl->destroy_result(&r);
	return 0;
}

/* count(*) * 2^32 + sum(v) of k. */
static int kv_final(kv_db *d, uint64_t *out, char *err, size_t errlen)
{
	const char *sql = "SELECT count(*), sum(v) FROM k";
	int64_t c = -1, s = -1;

	if (d->kind == KV_GPMDB) {
		gpmdb_stmt *st = NULL;
		if (gpmdb_prepare(d->g, sql, -1, &st, NULL) != GPMDB_OK ||
		    gpmdb_step(st) != GPMDB_ROW) {
			snprintf(err, errlen, "%s: %s", sql,
				 gpmdb_errmsg(d->g));
			gpmdb_finalize(st);
			return -1;
		}
		c = gpmdb_column_int64(st, 0);
		s = gpmdb_column_int64(st, 1);
		gpmdb_finalize(st);
	} else if (d->kind == KV_SQLITE) {
		sqlite3_stmt *st = NULL;
		if (sqlite3_prepare_v2(d->s, sql, -1, &st, NULL) != SQLITE_OK ||
		    sqlite3_step(st) != SQLITE_ROW) {
			snprintf(err, errlen, "%s: %s", sql,
				 sqlite3_errmsg(d->s));
			sqlite3_finalize(st);
			return -1;
		}
		c = sqlite3_column_int64(st, 0);
		s = sqlite3_column_int64(st, 1);
		sqlite3_finalize(st);
	} else {
		duckdl_result r;
		if (d->dl->query(d->dcon, sql, &r) != DUCKDL_OK) {
			snprintf(err, errlen, "%s: %s", sql,
				 d->dl->result_error(&r));
			d->dl->destroy_result(&r);
			return -1;
		}
		c = d->dl->value_int64(&r, 0, 0);
		s = d->dl->value_int64(&r, 1, 0);
		d->dl->destroy_result(&r);
	}
	*out = ((uint64_t)c << 32) + (uint64_t)s;
	return 0;
}

/* ---- workloads -------------------------------------------------------- */

static uint64_t kv_rng(uint64_t *s)
{
	/* splitmix64 */
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static double kv_pct(const double *sorted, uint64_t n, double p)
{
	uint64_t i = (uint64_t)(p * (double)(n - 1) + 0.5);
	return sorted[i < n ? i : n - 1];
}

/* Untimed operations before the timed ones of each workload. */
static uint64_t kv_warmup(uint64_t ops)
{
	return ops / 20 < 1000 ? ops / 20 : 1000;
}

/* Runs workload w: kv_warmup(ops) operations, then ops timed ones (their
 * latencies into lat); the inserted keys follow nkeys. */
static void kv_run(kv_db *d, int w, uint64_t ops, uint64_t nkeys, double *lat,
		   kv_res *out)
{
	uint64_t seed = 0x5eed0000ull + (uint64_t)w, sum = 0;
	uint64_t warm = kv_warmup(ops), total = warm + ops;
	double t0 = bench_now();

	memset(out, 0, sizeof(*out));
	out->run = true;
	for (uint64_t i = 0; i < total; i++) {
		uint64_t r = kv_rng(&seed);
		int64_t key = (int64_t)(r % nkeys) + 1, b = 0;
		int st;
		switch (w) {
		case W_READ:
			st = ST_GET;
			break;
		case W_UPDATE:
			st = ST_UPD;
			break;
		case W_MIX:
			st = (r >> 63) ? ST_UPD : ST_GET;
			break;
		case W_SCAN:
			st = ST_SCAN;
			key = (int64_t)(r % (nkeys > 99 ? nkeys - 99 : 1)) + 1;
			b = key + 99;
			break;
		default:
			st = ST_INS;
			key = (int64_t)(nkeys + i + 1);
			b = key * 7 % 1000;
		}
		if (i == warm)
			t0 = bench_now();
		double a = bench_now();
		if (kv_op(d, st, key, b, &sum, out->err, sizeof(out->err))) {
			out->failed = true;
			out->ops = i;
			return;
		}
		if (i >= warm)
			lat[i - warm] = bench_now() - a;
	}
	out->secs = bench_now() - t0;
	out->ops = ops;
	out->check = sum;
	qsort(lat, ops, sizeof(double), bench_cmp_double);
	out->p50_us = kv_pct(lat, ops, 0.50) * 1e6;
	out->p99_us = kv_pct(lat, ops, 0.99) * 1e6;
	out->max_us = lat[ops - 1] * 1e6;
}

/* ---- the fresh-process INSERT ----------------------------------------- */

/* The child: open, INSERT one row, close.  Exit status 0 when it worked. */
static int kv_insert_one(const char *kind, const char *path, long long key)
{
	kv_db d = {0};
	duckdl dl;
	char err[1024], sql[128];

	d.kind = !strcmp(kind, "gpmdb")	   ? KV_GPMDB
		 : !strcmp(kind, "sqlite") ? KV_SQLITE
					   : KV_DUCKDB;
	snprintf(d.path, sizeof(d.path), "%s", path);
	if (d.kind == KV_DUCKDB) {
		if (duckdl_load(&dl, NULL, err, sizeof(err))) {
			fprintf(stderr, "bench_kv: %s\n", err);
			return 1;
		}
		d.dl = &dl;
	}
	snprintf(sql, sizeof(sql), "INSERT INTO k VALUES (%lld, 0)", key);
	int rc =
	    kv_open(&d, err, sizeof(err)) || kv_exec(&d, sql, err, sizeof(err));
	if (rc)
		fprintf(stderr, "bench_kv --insert-one: %s\n", err);
	kv_close(&d);
	return rc ? 1 : 0;
}

/* Median wall time in ms of 5 runs of the child inserting into path;
 * -1 when one failed. */
static double kv_fresh_insert(int kind, const char *path, long long key)
{
	static const char *const kinds[] = {"gpmdb", "sqlite", "duckdb"};
	double t[5];

	for (int i = 0; i < 5; i++) {
		char k[32];
		int status;
		snprintf(k, sizeof(k), "%lld", key + i);
		double a = bench_now();
		pid_t pid = fork();
		if (pid < 0)
			return -1;
		if (pid == 0) {
			execl("/proc/self/exe", "bench_kv", "--insert-one",
			      kinds[kind], path, k, (char *)NULL);
			_exit(127);
		}
		if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
		    WEXITSTATUS(status) != 0)
			return -1;
		t[i] = (bench_now() - a) * 1e3;
	}
	qsort(t, 5, sizeof(double), bench_cmp_double);
	return t[2];
}

/* ---- the run ---------------------------------------------------------- */

typedef struct {
	bool run;
	char err[512];
	double load_s;
	kv_res w[W_N];
	bool final_ok;
	uint64_t final;
	double fresh_full_ms, fresh_empty_ms;
} kv_eng_res;

static void kv_engine_run(int e, uint64_t nrows, uint64_t ops, const char *dir,
			  const char *workloads, duckdl *dl, double *lat,
			  kv_eng_res *res)
{
	kv_db d = {0};
	char empty[sizeof(d.path) + 8];

	memset(res, 0, sizeof(*res));
	res->run = true;
	d.kind = kv_engines[e].kind;
	d.dl = dl;
	snprintf(d.path, sizeof(d.path), "%.900s/bench_kv_%d_%s.db", dir,
		 (int)getpid(), kv_engines[e].name);
	snprintf(empty, sizeof(empty), "%s-empty", d.path);
	kv_paths_remove(d.path);
	kv_paths_remove(empty);
	fprintf(stderr, "bench_kv: %s, %" PRIu64 " rows: loading\n",
		kv_engines[e].name, nrows);
	double t0 = bench_now();
	if (kv_open(&d, res->err, sizeof(res->err)) ||
	    kv_load(&d, nrows, res->err, sizeof(res->err)) ||
	    kv_prepare(&d, res->err, sizeof(res->err))) {
		kv_close(&d);
		kv_paths_remove(d.path);
		return;
	}
	res->load_s = bench_now() - t0;
	for (int w = 0; w < W_N; w++) {
		if (workloads && !bench_in_list(workloads, kv_wname[w]))
			continue;
		fprintf(stderr, "bench_kv: %s, %" PRIu64 " rows: %s\n",
			kv_engines[e].name, nrows, kv_wname[w]);
		kv_run(&d, w, ops, nrows, lat, &res->w[w]);
	}
	res->final_ok = !kv_final(&d, &res->final, res->err, sizeof(res->err));
	kv_close(&d);

	/* an empty database with the same table, then the fresh processes */
	kv_db z = {0};
	z.kind = d.kind;
	z.dl = dl;
	snprintf(z.path, sizeof(z.path), "%.1000s", empty);
	if (kv_open(&z, res->err, sizeof(res->err)) ||
	    kv_load(&z, 0, res->err, sizeof(res->err))) {
		res->fresh_full_ms = res->fresh_empty_ms = -1;
	} else {
		kv_close(&z);
		long long key =
		    (long long)(nrows + ops + kv_warmup(ops)) + 1000;
		fprintf(stderr,
			"bench_kv: %s, %" PRIu64 " rows: fresh INSERT\n",
			kv_engines[e].name, nrows);
		res->fresh_full_ms = kv_fresh_insert(d.kind, d.path, key);
		res->fresh_empty_ms = kv_fresh_insert(d.kind, empty, key);
	}
	kv_close(&z);
	kv_paths_remove(d.path);
	kv_paths_remove(empty);
}

/* Prints the tables of one table size; returns true when a check
 * against SQLite failed. */
static bool kv_print(uint64_t nrows, uint64_t ops, const char *shm,
		     const char *disk, const char *duck_status,
		     const kv_eng_res *r, FILE *dat)
{
	bool mismatch = false;

	printf("## %" PRIu64 " rows, %" PRIu64 " operations per workload\n\n",
	       nrows, ops);
	printf("Pools and database files: `-shm` in %s, `-disk` in %s. "
	       "DuckDB: %s.\n\n",
	       shm, disk, duck_status);
	printf("| engine | load s | count, sum(v) at the end |\n");
	printf("| --- | ---: | --- |\n");
	for (int e = 0; e < KV_NENG; e++) {
		if (!r[e].run) {
			printf("| %s | not run | |\n", kv_engines[e].name);
			continue;
		}
		if (r[e].load_s == 0 && r[e].err[0]) {
			printf("| %s | **FAILED**: %s | |\n",
			       kv_engines[e].name, r[e].err);
			continue;
		}
		const char *chk =
		    !r[e].final_ok			    ? "**FAILED**"
		    : !r[KV_REF].run || !r[KV_REF].final_ok ? "(no reference)"
		    : r[e].final == r[KV_REF].final	    ? "same as SQLite"
							    : "**MISMATCH**";
		mismatch |= chk[0] == '*' && chk[2] == 'M';
		printf("| %s | %.2f | %" PRIu64 ", %" PRIu64 " %s |\n",
		       kv_engines[e].name, r[e].load_s, r[e].final >> 32,
		       (uint64_t)(r[e].final & 0xffffffffu), chk);
	}
	printf("\n| workload | engine | ops/s | p50 us | p99 us | max us | "
	       "time per op / sqlite-shm | check |\n");
	printf("| --- | --- | ---: | ---: | ---: | ---: | ---: | --- |\n");
	for (int w = 0; w < W_N; w++) {
		const kv_res *ref = &r[KV_REF].w[w];
		for (int e = 0; e < KV_NENG; e++) {
			const kv_res *x = &r[e].w[w];
			if (!x->run)
				continue;
			if (x->failed) {
				printf("| %s | %s | **FAILED** after %" PRIu64
				       " ops: %s | | | | | |\n",
				       kv_wname[w], kv_engines[e].name, x->ops,
				       x->err);
				continue;
			}
			double ops_s = (double)x->ops / x->secs;
			char ratio[32] = "";
			if (ref->run && !ref->failed && ref->secs > 0)
				snprintf(ratio, sizeof(ratio), "%.2fx",
					 x->secs / ref->secs);
			const char *chk = !ref->run || ref->failed ? ""
					  : x->check == ref->check
					      ? "ok"
					      : "**MISMATCH**";
			mismatch |= chk[0] == '*';
			printf(
			    "| %s | %s | %.0f | %.1f | %.1f | %.0f | %s | %s "
			    "|\n",
			    kv_wname[w], kv_engines[e].name, ops_s, x->p50_us,
			    x->p99_us, x->max_us, ratio, chk);
		}
	}
	printf("\n| engine | one INSERT, fresh process, into %" PRIu64
	       " keys ms | into an empty table ms | ratio |\n",
	       nrows);
	printf("| --- | ---: | ---: | ---: |\n");
	for (int e = 0; e < KV_NENG; e++) {
		if (!r[e].run || r[e].load_s == 0)
			continue;
		if (r[e].fresh_full_ms < 0 || r[e].fresh_empty_ms < 0) {
			printf("| %s | **FAILED** | | |\n", kv_engines[e].name);
			continue;
		}
		printf("| %s | %.1f | %.1f | %.2fx |\n", kv_engines[e].name,
		       r[e].fresh_full_ms, r[e].fresh_empty_ms,
		       r[e].fresh_full_ms / r[e].fresh_empty_ms);
	}
	printf("\n");
	if (!dat)
		return mismatch;
	/* one block per table size: workload, then ops/s per engine */
	fprintf(dat, "# rows=%" PRIu64 "\nworkload", nrows);
	for (int e = 0; e < KV_NENG; e++)
		fprintf(dat, " %s", kv_engines[e].name);
	fprintf(dat, "\n");
	for (int w = 0; w < W_N; w++) {
		fprintf(dat, "%s", kv_wname[w]);
		for (int e = 0; e < KV_NENG; e++) {
			const kv_res *x = &r[e].w[w];
			if (x->run && !x->failed && x->secs > 0)
				fprintf(dat, " %.1f", (double)x->ops / x->secs);
			else
				fprintf(dat, " NaN");
		}
		fprintf(dat, "\n");
	}
	fprintf(dat, "\n\n");
	return mismatch;
}

static uint64_t kv_env_u64(const char *name, uint64_t dflt)
{
	const char *v = getenv(name);
	return v && *v ? strtoull(v, NULL, 10) : dflt;
}

int main(int argc, char **argv)
{
	const char *rows = getenv("KV_ROWS");
	uint64_t ops = kv_env_u64("KV_OPS", 10000);
	const char *shm = "/dev/shm", *disk = "/var/tmp";
	const char *engines = NULL, *workloads = NULL, *datpath = NULL;
	char err[1024], duck_status[1200];

	if (argc == 5 && !strcmp(argv[1], "--insert-one"))
		return kv_insert_one(argv[2], argv[3], atoll(argv[4]));
	if (!rows || !*rows)
		rows = "1000000,10000000";
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--rows") && i + 1 < argc)
			rows = argv[++i];
		else if (!strcmp(argv[i], "--ops") && i + 1 < argc)
			ops = strtoull(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--shm") && i + 1 < argc)
			shm = argv[++i];
		else if (!strcmp(argv[i], "--disk") && i + 1 < argc)
			disk = argv[++i];
		else if (!strcmp(argv[i], "--engines") && i + 1 < argc)
			engines = argv[++i];
		else if (!strcmp(argv[i], "--workloads") && i + 1 < argc)
			workloads = argv[++i];
		else if (!strcmp(argv[i], "--dat") && i + 1 < argc)
			datpath = argv[++i];
		else {
			fprintf(stderr,
				"usage: bench_kv [--rows N[,N...]] [--ops N] "
				"[--shm DIR] [--disk DIR] [--engines "
				"gpmdb-shm,gpmdb-disk,sqlite-shm,sqlite-disk,"
				"duckdb-shm,duckdb-disk] [--workloads "
				"read,update,mix,scan,insert] [--dat FILE]\n");
			return 2;
		}
	}
	if (ops == 0 || ops > 100000000ull)
		bench_die("arguments", "need 0 < ops <= 1e8 (--ops, KV_OPS)");

	duckdl dl;
	bool have_duck = duckdl_load(&dl, NULL, err, sizeof(err)) == 0;
	if (have_duck)
		snprintf(duck_status, sizeof(duck_status), "%s (%s)",
			 dl.library_version(), dl.path);
	else
		snprintf(duck_status, sizeof(duck_status), "not installed (%s)",
			 err);
	FILE *dat = datpath ? fopen(datpath, "w") : NULL;
	if (datpath && !dat)
		bench_die(datpath, strerror(errno));

	printf("Key-value workload (tpc/kv/bench_kv.c): prepared statements "
	       "in autocommit mode, keys uniform over 1..N, one client "
	       "thread. gpmdb %s (durability auto: pmem on /dev/shm, msync "
	       "on disk); SQLite %s, journal_mode=WAL, synchronous=FULL; "
	       "DuckDB with a PRIMARY KEY (ART index), default threads.\n\n",
	       gpmdb_libversion(), sqlite3_libversion());
	for (int w = 0; w < W_N; w++) {
		int st = w == W_READ	 ? ST_GET
			 : w == W_UPDATE ? ST_UPD
			 : w == W_SCAN	 ? ST_SCAN
					 : ST_INS;
		if (w == W_MIX)
			printf("- %s: %s (the two statements above)\n",
			       kv_wname[w], kv_wdesc[w]);
		else
			printf("- %s: %s, `%s`%s\n", kv_wname[w], kv_wdesc[w],
			       kv_sql[st], w == W_SCAN ? " (lo, lo + 99)" : "");
	}
	printf("\nEach workload runs %" PRIu64 " untimed operations first "
	       "(a warm-up: statement caches, the first page faults), then "
	       "the timed ones; the checks cover both.\n",
	       kv_warmup(ops));
	printf("\n");

	int status = 0;
	double *lat = bench_alloc(ops * sizeof(double));
	for (const char *p = rows; *p;) {
		uint64_t nrows = strtoull(p, NULL, 10);
		kv_eng_res res[KV_NENG];
		if (nrows < 100)
			bench_die("arguments", "need at least 100 rows");
		for (int e = 0; e < KV_NENG; e++) {
			memset(&res[e], 0, sizeof(res[e]));
			if (engines &&
			    !bench_in_list(engines, kv_engines[e].name))
				continue;
			if (kv_engines[e].kind == KV_DUCKDB && !have_duck)
				continue;
			kv_engine_run(
			    e, nrows, ops, kv_engines[e].disk ? disk : shm,
			    workloads, have_duck ? &dl : NULL, lat, &res[e]);
		}
		if (kv_print(nrows, ops, shm, disk, duck_status, res, dat))
			status = 1;
		fflush(stdout);
		for (int e = 0; e < KV_NENG; e++) {
			bool bad = res[e].run &&
				   (res[e].load_s == 0 || !res[e].final_ok);
			for (int w = 0; w < W_N; w++)
				bad |= res[e].w[w].failed;
			if (bad)
				status = 1;
		}
		p = strchr(p, ',');
		if (!p)
			break;
		p++;
	}
	free(lat);
	if (dat)
		fclose(dat);
	if (have_duck)
		duckdl_unload(&dl);
	return status;
}
