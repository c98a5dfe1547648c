/*
 * bench_batch_gpu.c - bench_batch's measurements of the GPU write path
 * itself (docs/benchmarks.md "Batch"): --update-modes (scattered stores
 * against whole lines, behind PRAGMA gpu_update_mode = auto) and
 * --scopes (the persist barriers' scopes against no barriers).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../gpu/gpu.h"
#include "../bench_util.h"
#include "bench_batch.h"

/* A GPU connection to a new pool path (dir/bench_<tag>_<pid>.db) holding
 * table `create` (named name) filled with the 3 arrays arr of n rows;
 * gname: the GPU's description.  Dies with a message on any failure. */
static gpmdb *bg_table(const char *what, const char *dir, const char *tag,
		       const char *create, const char *name,
		       gpmdb_column_array *arr, uint64_t n, char *path,
		       size_t plen, char *gname, size_t glen)
{
	char err[800];
	gpmdb *db = NULL;

	if (gpu_init(err, sizeof(err)) != GPMDB_OK)
		bench_die(what, err);
	gpu_describe(gname, glen);
	snprintf(path, plen, "%s/bench_%s_%d.db", dir, tag, getpid());
	unlink(path);
	if (gm_open(C_GPU, path, true, &db, err, sizeof(err)) ||
	    gm_exec(db, create, err, sizeof(err)))
		bench_die(what, err);
	if (gpmdb_append_columns(db, name, 3, NULL, arr, n) != GPMDB_OK)
		bench_die("append", gpmdb_errmsg(db));
	return db;
}

/* PREFIX.md with its title, or NULL without a prefix. */
static FILE *bg_md(const char *prefix, const char *title)
{
	char path[600];
	FILE *md;

	if (!prefix)
		return NULL;
	snprintf(path, sizeof(path), "%s.md", prefix);
	if (!(md = fopen(path, "w")))
		bench_die(path, strerror(errno));
	fprintf(md, "# %s\n\n", title);
	return md;
}

/* Closes db and removes its pool. */
static void bg_done(gpmdb *db, const char *path)
{
	gpmdb_close(db);
	unlink(path);
}

/* ---- --update-modes: dense updates, scatter against lines -------------- */

/*
 * The measurement behind PRAGMA gpu_update_mode = auto (docs/gpu.md
 * "Dense updates"): table m(id BIGINT, v BIGINT, r INT) of n rows, r
 * uniform in [0, 1e6); for each density p (0.1%, 1%, 5%, 25%, 100% of
 * the rows, uniform random) UPDATE m SET v = v + 1 WHERE r < p * 1e6,
 * once per configuration:
 *   scatter/grid, lines/grid: the logging kernels and the data phase
 *     timed apart (gpu_persist_scope = grid), so data ms is the write of
 *     the values alone: scattered stores, or whole dirty lines;
 *   scatter/thread, lines/thread, auto/thread: the default scope, where
 *     scattered stores share the logging kernel, so log + data is what
 *     a user waits for; auto also counts the dirty lines (mark ms).
 * Every statement commits; at the end sum(v - 3 id) must equal the rows
 * updated, counted by the CPU (a mismatch is an error, exit 1).  Rates:
 * scattered values per second of data ms (grid) and dirty lines'
 * bytes per second of lines ms (grid); the rule's threshold follows
 * from where lines/thread and scatter/thread cross.
 */
int bb_modes(uint64_t n, const char *dir, const char *prefix)
{
	static const double dens[] = {0.001, 0.01, 0.05, 0.25, 1.0};
	static const struct {
		const char *mode, *scope;
	} cf[] = {{"scatter", "grid"},
		  {"lines", "grid"},
		  {"scatter", "thread"},
		  {"lines", "thread"},
		  {"auto", "thread"}};
	enum { ND = sizeof(dens) / sizeof(dens[0]) };
	enum { NC = sizeof(cf) / sizeof(cf[0]) };
	char pool[600], err[800], sql[200], gname[256] = "";
	int64_t *id = malloc(8 * n), *v = malloc(8 * n), *r = malloc(8 * n);
	double expect = 0, got, best[ND][2];
	gpmdb *db = NULL;
	FILE *md = NULL;
	int rc;

	if (!id || !v || !r)
		bench_die("--update-modes", "out of memory");
	for (uint64_t i = 0; i < n; i++) {
		id[i] = (int64_t)i;
		v[i] = 3 * (int64_t)i;
		r[i] = (int64_t)(bb_mix(BB_SEED * 7 + i) % 1000000);
	}
	{
		gpmdb_column_array arr[3] = {{GPMDB_ARRAY_INT64, id, NULL},
					     {GPMDB_ARRAY_INT64, v, NULL},
					     {GPMDB_ARRAY_INT64, r, NULL}};

		db =
		    bg_table("--update-modes needs a GPU", dir, "modes",
			     "CREATE TABLE m (id BIGINT, v BIGINT, r INT)", "m",
			     arr, n, pool, sizeof(pool), gname, sizeof(gname));
	}
	free(id), free(v), free(r);
	/* warm-up: CUDA, the filter's kernels, both write paths */
	for (int k = 0; k < 2; k++) {
		snprintf(sql, sizeof(sql),
			 "PRAGMA gpu_update_mode = %s; UPDATE m SET v = v + 1 "
			 "WHERE r < 1000",
			 k ? "lines" : "scatter");
		if ((rc = gm_exec(db, sql, err, sizeof(err))))
			bench_die("warm-up", err);
	}
	md = bg_md(prefix, "Dense updates: scattered stores against whole "
			   "lines (bench_batch --update-modes)");
	bb_out(stdout, md,
	       "- %" PRIu64 " rows, device: %s\n"
	       "- UPDATE m SET v = v + 1 WHERE r < p * 1e6 (v BIGINT: 16 "
	       "rows per 128-byte line), r uniform random\n\n"
	       "| density | rows | rows / dirty line | mode | scope | log ms "
	       "| data ms | of which lines ms | mark ms | log + data ms | "
	       "lines chosen |\n"
	       "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- "
	       "| --- |\n",
	       n, gname);
	for (int d = 0; d < ND; d++) {
		best[d][0] = best[d][1] = 0;
		for (int c = 0; c < NC; c++) {
			double lg, dt, ln, mk, rows, dl, lc;
			char rpl[32] = "-";

			snprintf(sql, sizeof(sql),
				 "PRAGMA gpu_update_mode = %s; PRAGMA "
				 "gpu_persist_scope = %s",
				 cf[c].mode, cf[c].scope);
			if ((rc = gm_exec(db, sql, err, sizeof(err))))
				bench_die("pragma", err);
			snprintf(sql, sizeof(sql),
				 "UPDATE m SET v = v + 1 WHERE r < %.0f",
				 dens[d] * 1e6);
			if ((rc = gm_exec(db, sql, err, sizeof(err))))
				bench_die("update", err);
			lg = bench_gpmdb_stat(db, "gpu_write_stats",
					      "last_log_ms");
			dt = bench_gpmdb_stat(db, "gpu_write_stats",
					      "last_data_ms");
			ln = bench_gpmdb_stat(db, "gpu_write_stats",
					      "last_lines_ms");
			mk = bench_gpmdb_stat(db, "gpu_write_stats",
					      "last_mark_ms");
			lc = bench_gpmdb_stat(db, "gpu_write_stats",
					      "last_line_cols");
			dl = bench_gpmdb_stat(db, "gpu_write_stats",
					      "last_dirty_lines");
			rows = (double)gpmdb_changes(db);
			if (dl > 0)
				snprintf(rpl, sizeof(rpl), "%.2f", rows / dl);
			if (c == 0) /* scattered values / s of data */
				best[d][0] = rows / (dt * 1e-3);
			if (c == 1) /* dirty line bytes / s of lines */
				best[d][1] = dl * 128 / (ln * 1e-3);
			bb_out(stdout, md,
			       "| %.1f%% | %.0f | %s | %s | %s | %.2f | %.2f | "
			       "%.2f | %.2f | %.2f | %s |\n",
			       dens[d] * 100, rows, rpl, cf[c].mode,
			       cf[c].scope, lg, dt, ln, mk, lg + dt + mk,
			       lc > 0 ? "yes" : "no");
			fflush(stdout);
		}
	}
	bb_out(stdout, md,
	       "\nRates (grid scope, data phase alone): scattered 8-byte "
	       "values per second and whole-line bytes per second:\n\n");
	for (int d = 0; d < ND; d++)
		bb_out(stdout, md,
		       "- %.1f%%: scatter %.1f M values/s, lines %.1f GB/s\n",
		       dens[d] * 100, best[d][0] / 1e6, best[d][1] / 1e9);
	/* every statement's work was done: the CPU counts it */
	if ((rc = gm_exec(db, "PRAGMA backend = cpu", err, sizeof(err))))
		bench_die("backend", err);
	for (int d = 0; d < ND; d++) {
		snprintf(sql, sizeof(sql),
			 "SELECT count(*) FROM m WHERE r < %.0f",
			 dens[d] * 1e6);
		expect += NC * gm_int(db, sql);
	}
	expect += 2 * gm_int(db, "SELECT count(*) FROM m WHERE r < 1000");
	got = gm_int(db, "SELECT sum(v - 3 * id) FROM m");
	bb_out(stdout, md, "\nchecksum: sum(v - 3 id) %.0f, expected %.0f%s\n",
	       got, expect, got == expect ? "" : " **CHECKSUM MISMATCH**");
	if (md)
		fclose(md);
	bg_done(db, pool);
	return got == expect ? 0 : 1;
}

/* ---- --scopes: persist barriers against none ----------------------------- */

/*
 * The scoped persist barriers (GPGPU'18: kernel scope about 25% over no
 * persistence, work-group scope 8-10%) measured on UPDATE a's shape: a
 * table test(id INT, uniformi INT, v INT) of n rows, uniformi uniform in
 * [0, 1e6) as in the main benchmark, and UPDATE test SET v = v + 1 WHERE
 * uniformi < 50000 (about 5% of the rows, spread uniformly; the
 * predicate's column is not the one written, so every run updates the
 * same rows).  For each scope of PRAGMA gpu_persist_scope (none: no
 * barriers; thread, the default; block; grid: three kernels) the
 * statement runs reps times, the scopes interleaved, HCL logging,
 * scattered stores (gpu_update_mode = scatter: the lines mode writes the
 * values in a kernel of its own whatever the scope); the best run of
 * each is shown: the kernels' time (log + data + mark, PRAGMA
 * gpu_write_stats) and the statement's wall time, and each against none.
 * At the end sum(v) must equal the rows updated, counted by the CPU.
 */
int bb_scopes(uint64_t n, int reps, const char *dir, const char *prefix)
{
	static const char *sc[] = {"none", "thread", "block", "grid"};
	enum { NS = sizeof(sc) / sizeof(sc[0]) };
	char pool[600], err[800], sql[200], gname[256] = "";
	int32_t *id = malloc(4 * n), *u = malloc(4 * n), *v = calloc(n, 4);
	double best_k[NS], best_s[NS], best_l[NS], best_d[NS], rows = 0;
	double expect = 0, got;
	gpmdb *db = NULL;
	FILE *md = NULL;
	int rc;

	if (!id || !u || !v)
		bench_die("--scopes", "out of memory");
	if (n > INT32_MAX)
		bench_die("--scopes", "at most 2^31 rows");
	for (uint64_t i = 0; i < n; i++) {
		id[i] = (int32_t)i;
		u[i] = (int32_t)(bb_mix(BB_SEED * 13 + i) % 1000000);
	}
	{
		gpmdb_column_array arr[3] = {{GPMDB_ARRAY_INT32, id, NULL},
					     {GPMDB_ARRAY_INT32, u, NULL},
					     {GPMDB_ARRAY_INT32, v, NULL}};

		db = bg_table("--scopes needs a GPU", dir, "scopes",
			      "CREATE TABLE test (id INT, uniformi INT, v INT)",
			      "test", arr, n, pool, sizeof(pool), gname,
			      sizeof(gname));
	}
	free(id), free(u), free(v);
	if ((rc = gm_exec(db, "PRAGMA gpu_update_mode = scatter", err,
			  sizeof(err))))
		bench_die("pragma", err);
	for (int s = 0; s < NS; s++)
		best_k[s] = best_s[s] = best_l[s] = best_d[s] = 1e300;
	/* one warm-up run (CUDA, the filter's kernels, the cache), then
	 * reps rounds of every scope */
	for (int r = -1; r < reps; r++) {
		for (int s = 0; s < NS; s++) {
			double t0, ts, k, l, d;

			snprintf(sql, sizeof(sql),
				 "PRAGMA gpu_persist_scope = %s", sc[s]);
			if ((rc = gm_exec(db, sql, err, sizeof(err))))
				bench_die("pragma", err);
			t0 = bench_now();
			if ((rc = gm_exec(db,
					  "UPDATE test SET v = v + 1 WHERE "
					  "uniformi < 50000",
					  err, sizeof(err))))
				bench_die("update", err);
			ts = (bench_now() - t0) * 1e3;
			rows = (double)gpmdb_changes(db);
			expect += rows;
			if (bench_gpmdb_stat(db, "gpu_write_stats",
					     "last_write_gpu") <= 0)
				bench_die("--scopes", "the UPDATE did not run "
						      "on the GPU");
			l = bench_gpmdb_stat(db, "gpu_write_stats",
					     "last_log_ms");
			d = bench_gpmdb_stat(db, "gpu_write_stats",
					     "last_data_ms");
			k = l + d +
			    bench_gpmdb_stat(db, "gpu_write_stats",
					     "last_mark_ms");
			if (r < 0)
				continue;
			if (k < best_k[s]) {
				best_k[s] = k;
				best_l[s] = l;
				best_d[s] = d;
			}
			if (ts < best_s[s])
				best_s[s] = ts;
		}
	}
	md =
	    bg_md(prefix,
		  "Persist barrier scopes against none (bench_batch --scopes)");
	bb_out(stdout, md,
	       "- %" PRIu64 " rows, device: %s, pool in %s\n"
	       "- UPDATE test SET v = v + 1 WHERE uniformi < 50000 (%.0f "
	       "rows, about 5%%), HCL, gpu_update_mode = scatter; best of "
	       "%d runs per scope, scopes interleaved\n\n"
	       "| scope | log ms | data ms | kernels ms | kernels vs none "
	       "| statement ms | statement vs none |\n"
	       "| --- | --- | --- | --- | --- | --- | --- |\n",
	       n, gname, dir, rows, reps);
	for (int s = 0; s < NS; s++)
		bb_out(stdout, md,
		       "| %s | %.2f | %.2f | %.2f | %+.1f%% | %.1f | %+.1f%% "
		       "|\n",
		       sc[s], best_l[s], best_d[s], best_k[s],
		       (best_k[s] / best_k[0] - 1) * 100, best_s[s],
		       (best_s[s] / best_s[0] - 1) * 100);
	bb_out(stdout, md,
	       "\nGrid scope runs the log, the tails and the data as three "
	       "kernels (its log ms holds the first two); none, thread and "
	       "block run one kernel, timed as data ms.\n");
	if ((rc = gm_exec(db, "PRAGMA backend = cpu", err, sizeof(err))))
		bench_die("backend", err);
	got = gm_int(db, "SELECT sum(v) FROM test");
	bb_out(stdout, md, "\nchecksum: sum(v) %.0f, expected %.0f%s\n", got,
	       expect, got == expect ? "" : " **CHECKSUM MISMATCH**");
	if (md)
		fclose(md);
	bg_done(db, pool);
	return got == expect ? 0 : 1;
}
