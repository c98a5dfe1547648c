/*
 * bench_index.c - index bulk work, end to end through the C API: CREATE
 * UNIQUE INDEX over N rows and an UPDATE whose WHERE key = ? is bound to
 * an array of M keys (the probe of the batch write benchmark's UPDATE b),
 * on the CPU backend (all cores) and the GPU backend (gpu_strict, so the
 * GPU did the sort and the probe), beside SQLite and DuckDB on the same
 * rows (their own CREATE INDEX and prepared UPDATE), and the floor: the
 * tree's bytes written by memcpy.  docs/benchmarks.md "Index build and
 * probe".
 *
 * Usage: bench_index [--rows N] [--probe M] [--peer-rows P] [--dir D]
 *        [--backends cpu,gpu]
 */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../bench_util.h"
#include "gpmdb.h"

const char bench_prog[] = "bench_index";

static void gm_exec(gpmdb *db, const char *sql)
{
	char *msg = NULL;

	if (gpmdb_exec(db, sql, NULL, NULL, &msg) != GPMDB_OK)
		bench_die(sql, msg ? msg : gpmdb_errmsg(db));
	gpmdb_free(msg);
}

/* Key of row i: a permutation of [0, n) (so the sort has work to do). */
static int64_t key_of(uint64_t i, uint64_t n, uint64_t step)
{
	return (int64_t)(i * step % n);
}

typedef struct {
	double create_s, update_s, probe_ms;
	double init_ms, sort_ms; /* CUDA context creation, the index sort */
	int gpu_sort, gpu_probe;
	uint64_t changed;
	char note[160];
} res;

static void gm_run(const char *dir, const char *backend, uint64_t n, uint64_t m,
		   res *r, res *warm)
{
	char path[512];
	gpmdb *db = NULL;
	gpmdb_options o = {0};
	uint64_t step = bench_coprime_step(n);
	int64_t *k = bench_alloc(8 * n), *v = bench_alloc(8 * n);
	int64_t *pk = bench_alloc(8 * m), *pv = bench_alloc(8 * m);
	gpmdb_column_array arr[2] = {{GPMDB_ARRAY_INT64, k, NULL},
				     {GPMDB_ARRAY_INT64, v, NULL}};
	bool gpu = !strcmp(backend, "gpu");
	gpmdb_stmt *st = NULL;
	double t0;

	snprintf(path, sizeof(path), "%s/bench_index_%d.pool", dir,
		 (int)getpid());
	unlink(path);
	o.backend = "cpu"; /* the load is not what is measured */
	if (gpmdb_open_v2(path, &db, GPMDB_OPEN_READWRITE | GPMDB_OPEN_CREATE,
			  &o) != GPMDB_OK)
		bench_die("open", db ? gpmdb_errmsg(db) : path);
	gm_exec(db, "CREATE TABLE t (k BIGINT, v BIGINT)");
	for (uint64_t i = 0; i < n; i++) {
		k[i] = key_of(i, n, step);
		v[i] = (int64_t)i;
	}
	if (gpmdb_append_columns(db, "t", 2, NULL, arr, (int64_t)n))
		bench_die("append", gpmdb_errmsg(db));
	gm_exec(db, gpu ? "PRAGMA backend = gpu" : "PRAGMA backend = cpu");
	if (gpu)
		gm_exec(db, "PRAGMA gpu_strict = 1");
	for (int pass = 0; pass < (gpu ? 2 : 1); pass++) {
		res *x = pass ? warm : r;
		if (pass)
			gm_exec(db, "DROP INDEX tk");
		t0 = bench_now();
		gm_exec(db, "CREATE UNIQUE INDEX tk ON t(k)");
		x->create_s = bench_now() - t0;
		x->gpu_sort =
		    (int)bench_gpmdb_stat(db, "gpu_stats", "index_sort_gpu");
		x->sort_ms =
		    bench_gpmdb_stat(db, "gpu_stats", "index_sort_us") / 1e3;
		/* the context is made once: only the first pass pays it */
		x->init_ms =
		    pass ? 0
			 : bench_gpmdb_stat(db, "gpu_stats", "init_us") / 1e3;
	}
	/* UPDATE ... WHERE k = ? over m bound keys (every 7th key) */
	for (uint64_t i = 0; i < m; i++) {
		pk[i] = key_of((i * 7) % n, n, step);
		pv[i] = -(int64_t)i;
	}
	if (gpmdb_prepare(db, "UPDATE t SET v = ? WHERE k = ?", -1, &st,
			  NULL) != GPMDB_OK ||
	    gpmdb_bind_array_int64(st, 1, pv, (int64_t)m, NULL) ||
	    gpmdb_bind_array_int64(st, 2, pk, (int64_t)m, NULL))
		bench_die("prepare UPDATE", gpmdb_errmsg(db));
	for (int pass = 0; pass < 2; pass++) {
		res *x = pass ? warm : r;
		t0 = bench_now();
		if (gpmdb_step(st) != GPMDB_DONE)
			bench_die("UPDATE", gpmdb_errmsg(db));
		x->update_s = bench_now() - t0;
		x->changed = (uint64_t)gpmdb_changes(db);
		x->probe_ms =
		    bench_gpmdb_stat(db, "gpu_stats", "index_probe_us") / 1e3;
		x->gpu_probe =
		    (int)bench_gpmdb_stat(db, "gpu_stats", "index_probe_gpu");
		gpmdb_reset(st);
	}
	gpmdb_finalize(st);
	gpmdb_close(db);
	unlink(path);
	free(k);
	free(v);
	free(pk);
	free(pv);
}

static void sq_die(sqlite3 *db, const char *what)
{
	bench_die(what, sqlite3_errmsg(db));
}

/* SQLite on the same kind of rows (WAL, synchronous=FULL). */
static void sq_run(const char *dir, uint64_t n, uint64_t m, res *r)
{
	char path[512];
	sqlite3 *db;
	sqlite3_stmt *st;
	uint64_t step = bench_coprime_step(n);
	double t0;

	snprintf(path, sizeof(path), "%s/bench_index_%d.sqlite", dir,
		 (int)getpid());
	unlink(path);
	if (sqlite3_open(path, &db) != SQLITE_OK)
		sq_die(db, "open");
	sqlite3_exec(db,
		     "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL; "
		     "CREATE TABLE t (k BIGINT, v BIGINT); BEGIN",
		     NULL, NULL, NULL);
	if (sqlite3_prepare_v2(db, "INSERT INTO t VALUES (?, ?)", -1, &st,
			       NULL) != SQLITE_OK)
		sq_die(db, "prepare");
	for (uint64_t i = 0; i < n; i++) {
		sqlite3_bind_int64(st, 1, key_of(i, n, step));
		sqlite3_bind_int64(st, 2, (int64_t)i);
		sqlite3_step(st);
		sqlite3_reset(st);
	}
	sqlite3_finalize(st);
	sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
	t0 = bench_now();
	if (sqlite3_exec(db, "CREATE UNIQUE INDEX tk ON t(k)", NULL, NULL,
			 NULL) != SQLITE_OK)
		sq_die(db, "CREATE INDEX");
	r->create_s = bench_now() - t0;
	if (sqlite3_prepare_v2(db, "UPDATE t SET v = ? WHERE k = ?", -1, &st,
			       NULL) != SQLITE_OK)
		sq_die(db, "prepare UPDATE");
	t0 = bench_now();
	sqlite3_exec(db, "BEGIN", NULL, NULL, NULL);
	for (uint64_t i = 0; i < m; i++) {
		sqlite3_bind_int64(st, 1, -(int64_t)i);
		sqlite3_bind_int64(st, 2, key_of((i * 7) % n, n, step));
		sqlite3_step(st);
		r->changed += (uint64_t)sqlite3_changes(db);
		sqlite3_reset(st);
	}
	sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
	r->update_s = bench_now() - t0;
	sqlite3_finalize(st);
	sqlite3_close(db);
	unlink(path);
	snprintf(r->note, sizeof(r->note), "WAL, synchronous=FULL");
}

/* DuckDB (ART index) on the same rows, loaded with its appender. */
static void dk_run(uint64_t n, uint64_t m, res *r)
{
	duckdl d;
	duckdl_database db;
	duckdl_connection con;
	char err[512], sql[256];
	uint64_t step = bench_coprime_step(n);
	double t0;

	if (duckdl_load(&d, NULL, err, sizeof(err)) != 0) {
		snprintf(r->note, sizeof(r->note), "not installed");
		r->create_s = -1;
		return;
	}
	if (duckdl_open_mem(&d, 0, &db, &con, err, sizeof(err)) ||
	    duckdl_exec(&d, con, "CREATE TABLE t (k BIGINT, v BIGINT)", err,
			sizeof(err)))
		bench_die("duckdb", err);
	/* a range join makes the rows without a client loop */
	snprintf(sql, sizeof(sql),
		 "INSERT INTO t SELECT (i * %llu) %% %llu, i FROM range(%llu) "
		 "r(i)",
		 (unsigned long long)step, (unsigned long long)n,
		 (unsigned long long)n);
	if (duckdl_exec(&d, con, sql, err, sizeof(err)))
		bench_die("duckdb load", err);
	t0 = bench_now();
	if (duckdl_exec(&d, con, "CREATE UNIQUE INDEX tk ON t(k)", err,
			sizeof(err)))
		bench_die("duckdb CREATE INDEX", err);
	r->create_s = bench_now() - t0;
	/* the bound keys as a table joined in one UPDATE (DuckDB has no
	 * array binding; a loop of m prepared statements would measure its
	 * per-statement overhead instead) */
	snprintf(sql, sizeof(sql),
		 "CREATE TABLE p AS SELECT ((i * 7) %% %llu * %llu) %% %llu AS "
		 "k, -i AS nv FROM range(%llu) r(i)",
		 (unsigned long long)n, (unsigned long long)step,
		 (unsigned long long)n, (unsigned long long)m);
	if (duckdl_exec(&d, con, sql, err, sizeof(err)))
		bench_die("duckdb keys", err);
	t0 = bench_now();
	if (duckdl_exec(&d, con, "UPDATE t SET v = p.nv FROM p WHERE t.k = p.k",
			err, sizeof(err)))
		bench_die("duckdb UPDATE", err);
	r->update_s = bench_now() - t0;
	r->changed = m;
	snprintf(r->note, sizeof(r->note),
		 "in memory; UPDATE as a join with a key table");
	duckdl_close(&d, &db, &con);
	duckdl_unload(&d);
}

int main(int argc, char **argv)
{
	uint64_t n = 50000000, m = 2500000, pn = 5000000;
	const char *dir = "/dev/shm", *backends = "cpu,gpu";
	res cpu = {0}, gpu = {0}, gpuw = {0}, dummy = {0}, sq = {0}, dk = {0};
	double floor_s;

	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--rows"))
			n = strtoull(argv[i + 1], NULL, 10);
		else if (!strcmp(argv[i], "--probe"))
			m = strtoull(argv[i + 1], NULL, 10);
		else if (!strcmp(argv[i], "--peer-rows"))
			pn = strtoull(argv[i + 1], NULL, 10);
		else if (!strcmp(argv[i], "--dir"))
			dir = argv[i + 1];
		else if (!strcmp(argv[i], "--backends"))
			backends = argv[i + 1];
		else
			bench_die("usage", "bench_index [--rows N] [--probe M] "
					   "[--peer-rows P] [--dir D] "
					   "[--backends cpu,gpu]");
	}
	if (n == 0)
		bench_die("--rows", "at least one row");
	if (m > n)
		m = n;
	if (pn > n)
		pn = n;
	{
		/* floor: the leaves' bytes (17 per entry at 90%) by memcpy */
		size_t bytes = (size_t)(n * 17 / 0.9);
		char *a = bench_alloc(bytes), *b = bench_alloc(bytes);
		memset(a, 1, bytes);
		memset(b, 2, bytes);
		double t0 = bench_now();
		memcpy(b, a, bytes);
		floor_s = bench_now() - t0;
		free(a);
		free(b);
	}
	if (bench_in_list(backends, "cpu"))
		gm_run(dir, "cpu", n, m, &cpu, &dummy);
	if (bench_in_list(backends, "gpu"))
		gm_run(dir, "gpu", n, m, &gpu, &gpuw);
	if (pn > 0) { /* --peer-rows 0: gpmdb only */
		sq_run(dir, pn, m * pn / n, &sq);
		dk_run(pn, m * pn / n, &dk);
	} else {
		snprintf(sq.note, sizeof(sq.note), "not run");
		snprintf(dk.note, sizeof(dk.note), "not run");
		dk.create_s = -1;
	}

	printf("## CREATE UNIQUE INDEX over %llu BIGINT keys, UPDATE t SET v "
	       "= ? WHERE k = ? with %llu bound keys\n\n",
	       (unsigned long long)n, (unsigned long long)m);
	printf("| engine | rows | CREATE INDEX s | UPDATE by %llu keys s | "
	       "probe ms | rows changed | sorted / probed on |\n",
	       (unsigned long long)m);
	printf("| --- | --- | --- | --- | --- | --- | --- |\n");
	if (cpu.create_s > 0)
		printf("| gpmdb CPU (all cores) | %llu | %.3f | %.3f | %.1f | "
		       "%llu | CPU |\n",
		       (unsigned long long)n, cpu.create_s, cpu.update_s,
		       cpu.probe_ms, (unsigned long long)cpu.changed);
	if (gpu.create_s > 0) {
		printf("| gpmdb GPU, first in process | %llu | %.3f | %.3f | "
		       "%.1f | %llu | %s / %s |\n",
		       (unsigned long long)n, gpu.create_s, gpu.update_s,
		       gpu.probe_ms, (unsigned long long)gpu.changed,
		       gpu.gpu_sort ? "GPU" : "CPU",
		       gpu.gpu_probe ? "GPU" : "CPU");
		printf("| gpmdb GPU, warm | %llu | %.3f | %.3f | %.1f | %llu "
		       "| %s / %s |\n",
		       (unsigned long long)n, gpuw.create_s, gpuw.update_s,
		       gpuw.probe_ms, (unsigned long long)gpuw.changed,
		       gpuw.gpu_sort ? "GPU" : "CPU",
		       gpuw.gpu_probe ? "GPU" : "CPU");
	}
	printf("| SQLite (%s) | %llu | %.3f | %.3f | | %llu | |\n", sq.note,
	       (unsigned long long)pn, sq.create_s, sq.update_s,
	       (unsigned long long)sq.changed);
	if (dk.create_s >= 0)
		printf("| DuckDB (%s) | %llu | %.3f | %.3f | | %llu | |\n",
		       dk.note, (unsigned long long)pn, dk.create_s,
		       dk.update_s, (unsigned long long)dk.changed);
	else
		printf("| DuckDB | | %s | | | | |\n", dk.note);
	printf("| floor: the leaves' bytes by memcpy | %llu | %.3f | | | | "
	       "|\n\n",
	       (unsigned long long)n, floor_s);
	if (gpu.create_s > 0)
		printf("CREATE INDEX on the GPU, where the time goes: first in "
		       "process %.3f s = CUDA context %.1f ms + index sort "
		       "(transfers, kernels) %.1f ms + the rest (table scan, "
		       "keys, tree) %.1f ms; warm %.3f s = sort %.1f ms + the "
		       "rest %.1f ms\n\n",
		       gpu.create_s, gpu.init_ms, gpu.sort_ms,
		       gpu.create_s * 1e3 - gpu.init_ms - gpu.sort_ms,
		       gpuw.create_s, gpuw.sort_ms,
		       gpuw.create_s * 1e3 - gpuw.sort_ms);
	if (cpu.create_s > 0 && gpu.create_s > 0)
		printf("CREATE INDEX GPU/CPU: %.1fx first in process, %.1fx "
		       "warm; UPDATE by keys: %.1fx warm\n",
		       cpu.create_s / gpu.create_s,
		       cpu.create_s / gpuw.create_s,
		       cpu.update_s / gpuw.update_s);
	return 0;
}
