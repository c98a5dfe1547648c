/*
 * bench_gpu - the GPU benchmark (issue 5, "Benchmark"): gpmdb's GPU backend
 * beside gpmdb's CPU backend (all cores) and DuckDB (all cores) on the same
 * data, with the device-to-device copy bandwidth measured in the same run
 * and the peak from gpu_info (docs/benchmarks.md, docs/gpu.md "Benchmark").
 *
 * Data, N rows (default 100M) of
 *   fact(id BIGINT, k INT, d INT, v DOUBLE, q DECIMAL(12,2))
 *   dim(d INT PRIMARY KEY, name TEXT, w DOUBLE)           (100k rows)
 * made by formulas with no 64-bit overflow (a multiplicative hash modulo
 * 2^31 - 1, and for v a permutation of (j + 0.5) / N), so that DuckDB
 * builds the very same table with one INSERT ... SELECT over range(N) (its
 * fastest path, seconds instead of minutes through the Appender) and
 * gpmdb gets it through gpmdb_append_columns into a pool on /dev/shm.
 * Every query's results are compared across the engines; a difference is
 * printed as **MISMATCH** and the exit status is 1.
 *
 * gpmdb runs twice over one connection: PRAGMA backend = gpu (not strict:
 * what cannot run on the GPU yet runs on the CPU, and the table shows the
 * per-run gpu_operators and cpu_fallbacks of PRAGMA gpu_stats and the
 * operators EXPLAIN puts on the CPU), and backend = cpu.  GPU timings:
 * warm (the columns already in the HBM cache) and cold (the cache made
 * stale first by a write to a scratch table, so the run uploads the
 * columns from the pool; its cache_misses prove it).  Achieved bandwidth:
 * bytes of fact's columns the query reads (8 bytes a value: gpmdb's
 * widths) over the best warm time, beside the D2D copy (gpu_d2d_bandwidth)
 * and the peak.
 *
 * Without a GPU it prints that it was skipped and exits 0 (--cpu-only runs
 * the other engines anyway, to try the harness on a machine without one).
 *
 * Usage: bench_gpu [--rows N] [--dim N] [--reps R] [--dir DIR]
 *                  [--engines gpu,cpu,duckdb] [--queries 1,2,...]
 *                  [--cap S] [--slow S] [--cpu-only] [--probe]
 * --cap: a gpmdb run longer than S seconds (default 60) is stopped
 * (gpmdb_progress_handler) and shown as "> S s"; --slow: a warm-up longer
 * than S seconds (default 3) is the only run, and timed.
 * --probe prints the GPU's name in file-name form ("H100-80GB-HBM3") and
 * exits 0, or the reason there is none and exits 3 (tpc/run_bench.sh).
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <omp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../gpu/gpu.h"
#include "bench_util.h"
#include "explain_col.h"
#include "gpmdb.h"
#include "peers/duckdb_dl.h"

const char bench_prog[] = "bench_gpu";

/* ---- Data ------------------------------------------------------------ */

/* h(a, b, i) = (i * a + b) mod (2^31 - 1): i < 2^31 and a, b < 2^31 keep
 * every product below 2^62, so DuckDB's checked BIGINT arithmetic gives
 * the same numbers (the SQL in duck_load spells the same formulas). */
#define BG_P	  2147483647LL
#define BG_K_A	  1103515245LL /* k = h % 1000 */
#define BG_K_B	  12345LL
#define BG_D_A	  1664525013LL /* d = h % ndim */
#define BG_D_B	  1013904223LL
#define BG_Q_A	  1812433253LL /* q = h % 10^7, whole units */
#define BG_Q_B	  1LL
#define BG_W_A	  1566083941LL /* w = h / P */
#define BG_W_B	  3LL
#define BG_NGROUP 1000

static int64_t bg_h(int64_t a, int64_t b, int64_t i)
{
	return (i * a + b) % BG_P;
}

typedef struct {
	uint64_t n, ndim, step;
	int64_t *id;
	int32_t *k, *d;
	double *v;
	/* q: whole units, given as INT64 to the DECIMAL(12,2) column: a
	 * double goes through text (formatted and parsed per value) in
	 * gpmdb_append_columns, over half of the load time */
	int64_t *q;
	int32_t *dd;
	const char **name;
	double *w;
	char *names; /* text of name */
} bg_data;

static void bg_generate(bg_data *b, uint64_t n, uint64_t ndim)
{
	b->n = n;
	b->ndim = ndim;
	/* v: a permutation of (j + 0.5) / n (every v differs, so ORDER BY v
	 * has one answer); the step near n / phi, coprime with n */
	b->step = bench_coprime_step(n);
	b->id = bench_alloc(n * sizeof(int64_t));
	b->k = bench_alloc(n * sizeof(int32_t));
	b->d = bench_alloc(n * sizeof(int32_t));
	b->v = bench_alloc(n * sizeof(double));
	b->q = bench_alloc(n * sizeof(int64_t));
	b->dd = bench_alloc(ndim * sizeof(int32_t));
	b->name = bench_alloc(ndim * sizeof(char *));
	b->w = bench_alloc(ndim * sizeof(double));
	b->names = bench_alloc(ndim * 16);
#pragma omp parallel for schedule(static)
	for (uint64_t i = 0; i < n; i++) {
		int64_t x = (int64_t)i;
		b->id[i] = x;
		b->k[i] = (int32_t)(bg_h(BG_K_A, BG_K_B, x) % BG_NGROUP);
		b->d[i] = (int32_t)(bg_h(BG_D_A, BG_D_B, x) % (int64_t)ndim);
		b->v[i] = ((double)(x * (int64_t)b->step % (int64_t)n) + 0.5) /
			  (double)n;
		b->q[i] = bg_h(BG_Q_A, BG_Q_B, x) % 10000000;
	}
	for (uint64_t j = 0; j < ndim; j++) {
		char *at = b->names + j * 16;
		snprintf(at, 16, "name%04u", (unsigned)(j % BG_NGROUP));
		b->dd[j] = (int32_t)j;
		b->name[j] = at;
		b->w[j] =
		    (double)bg_h(BG_W_A, BG_W_B, (int64_t)j) / (double)BG_P;
	}
}

static void bg_data_free(bg_data *b)
{
	free(b->id);
	free(b->k);
	free(b->d);
	free(b->v);
	free(b->q);
	free(b->dd);
	free(b->name);
	free(b->w);
	free(b->names);
}

/* ---- Queries --------------------------------------------------------- */

typedef struct {
	const char *label;
	const char *sql;
	bool stream;   /* consumed as a stream into a digest of (id, v) */
	int row_bytes; /* bytes of fact's columns read per row (8 a value) */
	bool by_default;
} query;

static const query bg_queries[] = {
    {"scan-filter-aggregate",
     "SELECT sum(v), count(*) FROM fact WHERE k < 100 AND v > 0.5", false,
     8 + 8, true},
    {"group by (1000 groups)",
     "SELECT k, count(*), sum(v), avg(q) FROM fact GROUP BY k ORDER BY k",
     false, 8 + 8 + 8, true},
    {"join + group by",
     "SELECT dim.name, count(*), sum(fact.v) FROM fact JOIN dim "
     "ON fact.d = dim.d WHERE dim.w > 0.5 GROUP BY dim.name "
     "ORDER BY dim.name",
     false, 8 + 8, true},
    {"sort, top 100", "SELECT id, v FROM fact ORDER BY v DESC LIMIT 100", false,
     8 + 8, true},
    /* every row to the client: long on the CPU backend at 100M rows, so
     * only with --queries */
    {"sort, all rows to the client", "SELECT id, v FROM fact ORDER BY v", true,
     8 + 8, false},
};
#define NQ (int)(sizeof(bg_queries) / sizeof(bg_queries[0]))

/* ---- gpmdb ----------------------------------------------------------- */

typedef struct {
	gpmdb *db;
	char path[4096];
	double deadline; /* the progress handler stops a run after it */
	bool stopped;
} bg_gpmdb;

static int bg_progress(void *arg)
{
	bg_gpmdb *g = arg;
	if (bench_now() > g->deadline) {
		g->stopped = true;
		return 1;
	}
	return 0;
}

static int bg_gexec(bg_gpmdb *g, const char *sql, char *err, size_t errlen)
{
	char *m = NULL;
	if (gpmdb_exec(g->db, sql, NULL, NULL, &m) != GPMDB_OK) {
		snprintf(err, errlen, "%s: %s", sql, m ? m : "failed");
		gpmdb_free(m);
		return -1;
	}
	return 0;
}

static int bg_gpmdb_load(bg_gpmdb *g, const bg_data *b, const char *dir,
			 double *secs, char *err, size_t errlen)
{
	gpmdb_options go = {.backend = "cpu"};
	const gpmdb_column_array fact[] = {{GPMDB_ARRAY_INT64, b->id, NULL},
					   {GPMDB_ARRAY_INT32, b->k, NULL},
					   {GPMDB_ARRAY_INT32, b->d, NULL},
					   {GPMDB_ARRAY_DOUBLE, b->v, NULL},
					   {GPMDB_ARRAY_INT64, b->q, NULL}};
	const gpmdb_column_array dim[] = {{GPMDB_ARRAY_INT32, b->dd, NULL},
					  {GPMDB_ARRAY_TEXT, b->name, NULL},
					  {GPMDB_ARRAY_DOUBLE, b->w, NULL}};

	snprintf(g->path, sizeof(g->path), "%s/bench_gpu_%d.pool", dir,
		 (int)getpid());
	unlink(g->path);
	double t0 = bench_now();
	if (gpmdb_open_v2(g->path, &g->db,
			  GPMDB_OPEN_READWRITE | GPMDB_OPEN_CREATE,
			  &go) != GPMDB_OK) {
		snprintf(err, errlen, "gpmdb_open_v2: %s",
			 g->db ? gpmdb_errmsg(g->db) : "out of memory");
		return -1;
	}
	/* bench_scratch: a write there makes the GPU cache stale (cold runs) */
	if (bg_gexec(g,
		     "CREATE TABLE fact(id BIGINT, k INT, d INT, "
		     "v DOUBLE, q DECIMAL(12,2)); CREATE TABLE dim(d INT "
		     "PRIMARY KEY, name TEXT, w DOUBLE); CREATE TABLE "
		     "bench_scratch(x INT)",
		     err, errlen))
		return -1;
	if (gpmdb_append_columns(g->db, "fact", 5, NULL, fact, (int64_t)b->n) !=
		GPMDB_OK ||
	    gpmdb_append_columns(g->db, "dim", 3, NULL, dim,
				 (int64_t)b->ndim) != GPMDB_OK) {
		snprintf(err, errlen, "gpmdb_append_columns: %s",
			 gpmdb_errmsg(g->db));
		return -1;
	}
	*secs = bench_now() - t0;
	gpmdb_progress_handler(g->db, 64, bg_progress, g);
	return 0;
}

/* One run; 1 when the progress handler stopped it (past the cap). */
static int bg_gpmdb_query(bg_gpmdb *g, const query *qy, double cap, qres *out,
			  char *err, size_t errlen)
{
	gpmdb_stmt *s;
	bench_digest dg = {0};
	int rc;

	g->stopped = false;
	g->deadline = bench_now() + cap;
	if (gpmdb_prepare(g->db, qy->sql, -1, &s, NULL) != GPMDB_OK) {
		snprintf(err, errlen, "%s", gpmdb_errmsg(g->db));
		return -1;
	}
	out->ncols = gpmdb_column_count(s);
	if (qy->stream) {
		gpmdb_column_array a, b;
		int64_t na, nb;
		rc = gpmdb_step(s);
		if (rc == GPMDB_ROW &&
		    (gpmdb_result_column(s, 0, &a, &na) != GPMDB_OK ||
		     gpmdb_result_column(s, 1, &b, &nb) != GPMDB_OK ||
		     a.type != GPMDB_ARRAY_INT64 ||
		     b.type != GPMDB_ARRAY_DOUBLE || na != nb)) {
			snprintf(err, errlen, "gpmdb_result_column: %s",
				 gpmdb_errmsg(g->db));
			gpmdb_finalize(s);
			return -1;
		}
		if (rc == GPMDB_ROW) {
			for (int64_t i = 0; i < na; i++)
				bench_digest_add(&dg,
						 ((const int64_t *)a.values)[i],
						 ((const double *)b.values)[i]);
			rc = GPMDB_DONE;
		}
	}
	while (!qy->stream && (rc = gpmdb_step(s)) == GPMDB_ROW) {
		cell *c = qres_row(out);
		for (int i = 0; i < out->ncols; i++) {
			int t = gpmdb_column_type(s, i);
			if (t == GPMDB_INTEGER)
				c[i] = (cell){.kind = CELL_INT,
					      .i = gpmdb_column_int64(s, i)};
			else if (t == GPMDB_FLOAT)
				c[i] = (cell){.kind = CELL_REAL,
					      .r = gpmdb_column_double(s, i)};
			else if (t == GPMDB_TEXT) {
				c[i].kind = CELL_TEXT;
				c[i].t = bench_strdup(
				    (const char *)gpmdb_column_text(s, i));
			} else
				c[i].kind = CELL_NULL;
		}
	}
	if (rc != GPMDB_DONE) {
		snprintf(err, errlen, "%s", gpmdb_errmsg(g->db));
		gpmdb_finalize(s);
		return rc == GPMDB_INTERRUPT && g->stopped ? 1 : -1;
	}
	if (gpmdb_finalize(s) != GPMDB_OK) {
		snprintf(err, errlen, "finalize: %s", gpmdb_errmsg(g->db));
		return -1;
	}
	if (qy->stream)
		digest_result(&dg, out);
	return 0;
}

/* PRAGMA gpu_stats, the counters this benchmark reads. */
typedef struct {
	int64_t ops, fallbacks, hits, misses, uploaded;
} bg_stats;

static int bg_stats_get(bg_gpmdb *g, bg_stats *st, char *err, size_t errlen)
{
	gpmdb_stmt *s;
	int rc;

	memset(st, 0, sizeof(*st));
	if (gpmdb_prepare(g->db, "PRAGMA gpu_stats", -1, &s, NULL) !=
	    GPMDB_OK) {
		snprintf(err, errlen, "PRAGMA gpu_stats: %s",
			 gpmdb_errmsg(g->db));
		return -1;
	}
	while ((rc = gpmdb_step(s)) == GPMDB_ROW) {
		const char *n = (const char *)gpmdb_column_text(s, 0);
		int64_t v = gpmdb_column_int64(s, 1);
		if (!n)
			continue;
		if (!strcmp(n, "gpu_operators"))
			st->ops = v;
		else if (!strcmp(n, "cpu_fallbacks"))
			st->fallbacks = v;
		else if (!strcmp(n, "cache_hits"))
			st->hits = v;
		else if (!strcmp(n, "cache_misses"))
			st->misses = v;
		else if (!strcmp(n, "cache_uploaded_bytes"))
			st->uploaded = v;
	}
	gpmdb_finalize(s);
	if (rc != GPMDB_DONE) {
		snprintf(err, errlen, "PRAGMA gpu_stats: %s",
			 gpmdb_errmsg(g->db));
		return -1;
	}
	return 0;
}

/* EXPLAIN under the current backend: the plan's text (for the results
 * file) and its operators per backend. */
static int bg_explain(bg_gpmdb *g, const char *sql, char *plan, size_t len,
		      int *ngpu, int *ncpu)
{
	char ex[1024];
	gpmdb_stmt *s;
	size_t at = 0;
	int rc;

	*ngpu = *ncpu = 0;
	plan[0] = 0;
	snprintf(ex, sizeof(ex), "EXPLAIN %s", sql);
	if (gpmdb_prepare(g->db, ex, -1, &s, NULL) != GPMDB_OK) {
		snprintf(plan, len, "EXPLAIN failed: %s", gpmdb_errmsg(g->db));
		return -1;
	}
	while ((rc = gpmdb_step(s)) == GPMDB_ROW)
		for (int c = 0; c < gpmdb_column_count(s); c++) {
			const char *v = (const char *)gpmdb_column_text(s, c);
			if (!v)
				continue;
			if (at + 1 < len)
				at += (size_t)snprintf(plan + at, len - at,
						       "%s\n", v);
			if (at >= len)
				at = len - 1;
			char b = bench_explain_backend(v, NULL);
			*ngpu += b == 'g';
			*ncpu += b == 'c';
		}
	gpmdb_finalize(s);
	return rc == GPMDB_DONE ? 0 : -1;
}

/* ---- DuckDB ---------------------------------------------------------- */

typedef struct {
	duckdl dl;
	duckdl_database db;
	duckdl_connection con;
} bg_duck;

/* The generator's formulas in SQL (bg_generate); DOUBLE casts keep every
 * division a double one, as in C. */
static int duck_load(bg_duck *d, const bg_data *b, int nthreads, double *secs,
		     char *err, size_t errlen)
{
	char sql[2048];
	double t0 = bench_now();

	if (duckdl_open_mem(&d->dl, nthreads, &d->db, &d->con, err, errlen))
		return -1;
	snprintf(sql, sizeof(sql),
		 "CREATE TABLE fact(id BIGINT, k INT, d INT, v DOUBLE, "
		 "q DECIMAL(12,2)); INSERT INTO fact SELECT i, "
		 "CAST((i * %lld + %lld) %% %lld %% %d AS INTEGER), "
		 "CAST((i * %lld + %lld) %% %lld %% %" PRIu64 " AS INTEGER), "
		 "(CAST(i * %" PRIu64 " %% %" PRIu64 " AS DOUBLE) + "
		 "CAST(0.5 AS DOUBLE)) / CAST(%" PRIu64 " AS DOUBLE), "
		 "CAST((i * %lld + %lld) %% %lld %% 10000000 AS DECIMAL(12,2)) "
		 "FROM range(%" PRIu64 ") t(i)",
		 BG_K_A, BG_K_B, BG_P, BG_NGROUP, BG_D_A, BG_D_B, BG_P, b->ndim,
		 b->step, b->n, b->n, BG_Q_A, BG_Q_B, BG_P, b->n);
	if (duckdl_exec(&d->dl, d->con, sql, err, errlen))
		return -1;
	snprintf(sql, sizeof(sql),
		 "CREATE TABLE dim(d INT PRIMARY KEY, name TEXT, w DOUBLE); "
		 "INSERT INTO dim SELECT j, 'name' || lpad(CAST(j %% %d AS "
		 "VARCHAR), 4, '0'), CAST((j * %lld + %lld) %% %lld AS DOUBLE) "
		 "/ CAST(%lld AS DOUBLE) FROM range(%" PRIu64 ") t(j)",
		 BG_NGROUP, BG_W_A, BG_W_B, BG_P, BG_P, b->ndim);
	if (duckdl_exec(&d->dl, d->con, sql, err, errlen))
		return -1;
	*secs = bench_now() - t0;
	return 0;
}

static int duck_query(bg_duck *d, const query *qy, qres *out, char *err,
		      size_t errlen)
{
	return bench_duck_query(&d->dl, d->con, qy->sql, qy->stream, out, err,
				errlen);
}

/* ---- Timing ---------------------------------------------------------- */

enum { E_GPU, E_COLD, E_CPU, E_DUCK, NE };
static const char *const e_names[NE] = {"gpmdb GPU (warm)", "gpmdb GPU (cold)",
					"gpmdb CPU", "DuckDB"};

#define MAXREPS 16

/* One engine on one query: its timed runs, and what stopped it. */
typedef struct {
	bool ran, ok, capped;
	int n;
	double t[MAXREPS];
	char why[256];
} timing;

static double t_best(const timing *t)
{
	double b = t->t[0];
	for (int i = 1; i < t->n; i++)
		if (t->t[i] < b)
			b = t->t[i];
	return b;
}

static void t_fmt(const timing *t, double cap, char *buf, size_t len)
{
	double s[MAXREPS];

	if (!t->ran)
		snprintf(buf, len, "%s", t->why[0] ? t->why : "not run");
	else if (t->capped)
		snprintf(buf, len, "> %g s (stopped)", cap);
	else if (!t->ok || t->n == 0)
		snprintf(buf, len, "failed");
	else if (t->n == 1)
		snprintf(buf, len, "%.1f (1 run)", t->t[0] * 1e3);
	else {
		memcpy(s, t->t, t->n * sizeof(double));
		qsort(s, t->n, sizeof(double), bench_cmp_double);
		snprintf(buf, len, "%.1f (%.1f)", s[0] * 1e3,
			 s[t->n / 2] * 1e3);
	}
}

/* The GPU's name as a file-name word: "NVIDIA H100 80GB HBM3" ->
 * "H100-80GB-HBM3". */
static void gpu_word(const char *name, char *out, size_t len)
{
	size_t o = 0;
	if (!strncmp(name, "NVIDIA ", 7))
		name += 7;
	for (const char *p = name; *p && o + 1 < len; p++)
		out[o++] = isalnum((unsigned char)*p) ? *p : '-';
	out[o] = 0;
}

/* A timed gpmdb or DuckDB run into res; returns as bg_gpmdb_query. */
static int run_one(int e, bg_gpmdb *g, bg_duck *d, const query *qy, double cap,
		   qres *res, double *secs, char *err, size_t errlen)
{
	qres_clear(res);
	double t0 = bench_now();
	int rc = e == E_DUCK ? duck_query(d, qy, res, err, errlen)
			     : bg_gpmdb_query(g, qy, cap, res, err, errlen);
	*secs = bench_now() - t0;
	return rc;
}

int main(int argc, char **argv)
{
	uint64_t nrows = 100000000, ndim = 100000;
	int reps = 3;
	double cap = 60, slow = 3;
	const char *dir = "/dev/shm", *engines = "gpu,cpu,duckdb";
	const char *queries = NULL;
	bool cpu_only = false, probe = false;
	char err[1024];

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--rows") && i + 1 < argc)
			nrows = strtoull(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--dim") && i + 1 < argc)
			ndim = strtoull(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
			reps = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--dir") && i + 1 < argc)
			dir = argv[++i];
		else if (!strcmp(argv[i], "--engines") && i + 1 < argc)
			engines = argv[++i];
		else if (!strcmp(argv[i], "--queries") && i + 1 < argc)
			queries = argv[++i];
		else if (!strcmp(argv[i], "--cap") && i + 1 < argc)
			cap = atof(argv[++i]);
		else if (!strcmp(argv[i], "--slow") && i + 1 < argc)
			slow = atof(argv[++i]);
		else if (!strcmp(argv[i], "--cpu-only"))
			cpu_only = true;
		else if (!strcmp(argv[i], "--probe"))
			probe = true;
		else {
			fprintf(stderr,
				"usage: bench_gpu [--rows N] [--dim N] "
				"[--reps R] [--dir DIR] [--engines "
				"gpu,cpu,duckdb] [--queries 1,2,...] [--cap S] "
				"[--slow S] [--cpu-only] [--probe]\n");
			return 2;
		}
	}
	/* 2^31 - 1 bounds the generator's products (and the GPU's row ids) */
	if (nrows == 0 || nrows > 2000000000ull || ndim == 0 ||
	    ndim > 2000000000ull || reps < 1 || reps > MAXREPS || cap <= 0)
		bench_die("arguments",
			  "need 0 < rows, dim <= 2e9, 1 <= reps <= "
			  "16, cap > 0");

	gpu_info gi;
	char gerr[512] = "";
	int grc = gpu_get_info(&gi, gerr, sizeof(gerr));
	if (probe) {
		char w[256];
		if (grc) {
			printf("%s\n", gerr);
			return 3;
		}
		gpu_word(gi.name, w, sizeof(w));
		printf("%s\n", w);
		return 0;
	}
	if (grc && !cpu_only) {
		printf("## GPU benchmark: skipped: no GPU (%s)\n", gerr);
		return 0;
	}

	int ncores = omp_get_num_procs();
	bg_data b;
	double t0 = bench_now();
	bg_generate(&b, nrows, ndim);
	double gen_s = bench_now() - t0;

	printf("## GPU benchmark: %" PRIu64 " rows in fact, %" PRIu64
	       " in dim\n\n",
	       nrows, ndim);
	if (!grc)
		printf("GPU: %s, sm_%d%d, %d SMs, %.1f GiB, %d-bit bus at "
		       "%d MHz: peak %.0f GB/s (gpu_info); driver %d, runtime "
		       "%d.\n\n",
		       gi.name, gi.cc_major, gi.cc_minor, gi.sm_count,
		       gi.mem_total / 1073741824.0, gi.mem_bus_bits,
		       gi.mem_clock_khz / 1000, gi.bandwidth_gbs,
		       gi.driver_version, gi.runtime_version);
	else
		printf("GPU: none (%s): --cpu-only, the GPU columns are "
		       "empty.\n\n",
		       gerr);
	printf("Threads: DuckDB %d (all cores); gpmdb CPU backend: OpenMP "
	       "with %d (scan, filter, projection, aggregate, join probe, "
	       "sort).  Data "
	       "generated in %.1f s.\n\n",
	       ncores, omp_get_max_threads(), gen_s);

	/* The D2D copy over a buffer as large as the widest query's columns
	 * (at least 1 GiB), before anything else holds GPU memory. */
	double d2d = 0;
	char d2d_why[512] = "";
	if (!grc) {
		uint64_t bytes = nrows * 24;
		if (bytes < (1ull << 30))
			bytes = 1ull << 30;
		if (bytes > gi.mem_free / 4)
			bytes = gi.mem_free / 4;
		if (gpu_d2d_bandwidth(bytes, 10, &d2d, d2d_why,
				      sizeof(d2d_why)))
			fprintf(stderr, "bench_gpu: D2D copy: %s\n", d2d_why);
		else
			snprintf(d2d_why, sizeof(d2d_why),
				 "cudaMemcpy D2D of %.2f GB, best of 10",
				 bytes / 1e9);
	}

	/* Load. */
	bool want_gpu = bench_in_list(engines, "gpu") && !grc;
	bool want_cpu = bench_in_list(engines, "cpu");
	bool want_duck = bench_in_list(engines, "duckdb");
	bg_gpmdb g = {0};
	bg_duck d;
	bool g_ready = false, d_ready = false;
	char g_why[1200] = "not run", d_why[1200] = "not run";
	double g_load = 0, d_load = 0;
	memset(&d, 0, sizeof(d));
	if (want_gpu || want_cpu) {
		if (bg_gpmdb_load(&g, &b, dir, &g_load, err, sizeof(err)))
			snprintf(g_why, sizeof(g_why), "failed: %s", err);
		else
			g_ready = true;
	}
	if (want_duck) {
		if (duckdl_load(&d.dl, NULL, err, sizeof(err)))
			snprintf(d_why, sizeof(d_why),
				 "not installed (%s; run "
				 "tpc/peers/fetch_duckdb.sh)",
				 err);
		else if (duck_load(&d, &b, ncores, &d_load, err, sizeof(err)))
			snprintf(d_why, sizeof(d_why), "failed: %s", err);
		else
			d_ready = true;
	}
	bg_data_free(&b);

	printf("| engine | version | load s | M rows/s | how |\n");
	printf("| --- | --- | ---: | ---: | --- |\n");
	if (g_ready)
		printf("| gpmdb | %s | %.2f | %.1f | gpmdb_append_columns, 1 "
		       "transaction per table, pool on %s |\n",
		       gpmdb_libversion(), g_load,
		       (nrows + ndim) / g_load / 1e6, dir);
	else
		printf("| gpmdb | %s | | | %s |\n", gpmdb_libversion(), g_why);
	if (d_ready)
		printf("| DuckDB | %s | %.2f | %.1f | INSERT ... SELECT over "
		       "range(N), the same formulas, in memory, %d threads |\n",
		       d.dl.library_version(), d_load,
		       (nrows + ndim) / d_load / 1e6, ncores);
	else
		printf("| DuckDB | | | | %s |\n", d_why);
	printf("\n");
	fflush(stdout);

	/* Queries. */
	bool mismatch = false;
	static timing tm[NQ][NE];
	static bg_stats warm_st[NQ], cold_st[NQ];
	static int plan_gpu[NQ], plan_cpu[NQ];
	static char plans[NQ][4096];
	bool qrun[NQ];
	memset(tm, 0, sizeof(tm));
	for (int q = 0; q < NQ; q++) {
		char num[16];
		snprintf(num, sizeof(num), "%d", q + 1);
		qrun[q] = queries ? bench_in_list(queries, num)
				  : bg_queries[q].by_default;
	}
	for (int q = 0; q < NQ; q++) {
		const query *qy = &bg_queries[q];
		qres ref = {0}, res = {0};
		const char *ref_name = NULL;
		if (!qrun[q])
			continue;
		/* order: the CPU backend first, the reference */
		const int order[] = {E_CPU, E_COLD, E_GPU, E_DUCK};
		for (int oi = 0; oi < NE; oi++) {
			int e = order[oi];
			timing *t = &tm[q][e];
			bool ready = e == E_DUCK ? d_ready : g_ready;
			bool wanted = e == E_DUCK  ? want_duck
				      : e == E_CPU ? want_cpu
						   : want_gpu;
			bg_stats s0 = {0}, s1 = {0};
			char serr[512];
			double secs;
			int rc = 0, n = reps;
			if (!wanted) {
				snprintf(t->why, sizeof(t->why), "%s",
					 e != E_CPU && e != E_DUCK && grc
					     ? "no GPU"
					     : "not run");
				continue;
			}
			if (!ready) {
				snprintf(t->why, sizeof(t->why), "%s",
					 e == E_DUCK && !d.dl.handle
					     ? "not installed"
					     : "failed");
				continue;
			}
			if (e != E_DUCK &&
			    bg_gexec(&g,
				     e == E_CPU ? "PRAGMA backend = cpu"
						: "PRAGMA backend = gpu",
				     err, sizeof(err)))
				bench_die("pragma", err);
			if (e == E_COLD &&
			    bg_explain(&g, qy->sql, plans[q], sizeof(plans[q]),
				       &plan_gpu[q], &plan_cpu[q]))
				fprintf(stderr, "bench_gpu: %s\n", plans[q]);
			t->ran = t->ok = true;
			/* a warm-up run, except for the cold runs (each makes
			 * the cache stale first).  A warm-up slower than
			 * --slow is the only run, timed (the data are in
			 * memory or in HBM already; device time is scarce) */
			/* the statistics of the timed runs only */
			if (e == E_GPU &&
			    bg_stats_get(&g, &s0, serr, sizeof(serr)))
				bench_die("stats", serr);
			if (e != E_COLD) {
				rc = run_one(e, &g, &d, qy, cap, &res, &secs,
					     err, sizeof(err));
				if (!rc && secs > slow) {
					t->t[t->n++] = secs;
					n = 0;
				} else if (e == E_GPU &&
					   bg_stats_get(&g, &s0, serr,
							sizeof(serr)))
					bench_die("stats", serr);
			}
			for (int r = 0; r < n && !rc; r++) {
				if (e == E_COLD) {
					bg_stats a;
					if (bg_gexec(&g,
						     "INSERT INTO "
						     "bench_scratch VALUES (1)",
						     serr, sizeof(serr)) ||
					    bg_stats_get(&g, &a, serr,
							 sizeof(serr)))
						bench_die("cold", serr);
					if (r == 0)
						s0 = a;
				}
				rc = run_one(e, &g, &d, qy, cap, &res, &secs,
					     err, sizeof(err));
				if (!rc) {
					t->t[t->n++] = secs;
					if (e == E_COLD && secs > slow)
						break;
				}
			}
			if ((e == E_GPU || e == E_COLD) &&
			    bg_stats_get(&g, &s1, serr, sizeof(serr)))
				bench_die("stats", serr);
			if (e == E_GPU || e == E_COLD) {
				bg_stats *st =
				    e == E_GPU ? &warm_st[q] : &cold_st[q];
				/* per run (a run stopped at the cap counts:
				 * what it did before is in the counters);
				 * the cold runs' INSERTs count no GPU
				 * operator (a write of constants) */
				int nr = t->n + (rc == 1);
				if (nr < 1)
					nr = 1;
				st->ops = (s1.ops - s0.ops) / nr;
				st->fallbacks =
				    (s1.fallbacks - s0.fallbacks) / nr;
				st->hits = (s1.hits - s0.hits) / nr;
				st->misses = (s1.misses - s0.misses) / nr;
				st->uploaded = (s1.uploaded - s0.uploaded) / nr;
			}
			if (rc) {
				t->ok = false;
				t->capped = rc == 1;
				if (rc < 0) {
					fprintf(stderr,
						"bench_gpu: %s: %s: %s\n",
						e_names[e], qy->label, err);
					printf("\n**FAILED** %s on %s: %s\n\n",
					       qy->label, e_names[e], err);
					mismatch = true;
				}
				qres_clear(&res);
				continue;
			}
			if (!ref_name) {
				ref = res;
				memset(&res, 0, sizeof(res));
				ref_name = e_names[e];
				continue;
			}
			if (!qres_check(qy->label, ref_name, &ref, e_names[e],
					&res))
				mismatch = true;
		}
		if (qy->stream && ref_name && ref.cells[3].i != 0) {
			printf("\n**MISMATCH** %s: %s returned %" PRId64
			       " rows out of order\n\n",
			       qy->label, ref_name, ref.cells[3].i);
			mismatch = true;
		}
		qres_clear(&res);
		qres_clear(&ref);
		fprintf(stderr, "bench_gpu: %s done\n", qy->label);
	}

	/* Tables. */
	printf("Times in ms: best (median) of the timed runs after one "
	       "warm-up run (cold: each run after a write that makes the GPU "
	       "cache stale, so it uploads the columns again; no warm-up); "
	       "each includes preparing the SQL and reading every result row "
	       "in the client.  A warm-up longer than %.0f s is the only run "
	       "(\"1 run\").  x: the peer's best time over the GPU's warm "
	       "one (> 1: the GPU is faster).\n\n",
	       slow);
	printf("| query | GPU warm ms | GPU cold ms | CPU ms | DuckDB ms | "
	       "CPU/GPU x | DuckDB/GPU x |\n");
	printf("| --- | ---: | ---: | ---: | ---: | ---: | ---: |\n");
	for (int q = 0; q < NQ; q++) {
		char c[NE][96], x[2][32];
		if (!qrun[q])
			continue;
		for (int e = 0; e < NE; e++)
			t_fmt(&tm[q][e], cap, c[e], sizeof(c[e]));
		for (int p = 0; p < 2; p++) {
			const timing *o = &tm[q][p ? E_DUCK : E_CPU];
			const timing *w = &tm[q][E_GPU];
			if (w->ok && w->n && o->ok && o->n)
				snprintf(x[p], sizeof(x[p]), "%.1f",
					 t_best(o) / t_best(w));
			else
				snprintf(x[p], sizeof(x[p]), "-");
		}
		printf("| %s | %s | %s | %s | %s | %s | %s |\n",
		       bg_queries[q].label, c[E_GPU], c[E_COLD], c[E_CPU],
		       c[E_DUCK], x[0], x[1]);
	}

	printf("\nWhere gpmdb's GPU backend ran each query (PRAGMA gpu_stats "
	       "per run, backend=gpu, not strict): GPU operators, CPU "
	       "fallbacks (operators wanted on the GPU that ran on the CPU), "
	       "and EXPLAIN's operators by backend (operators with no GPU "
	       "version yet -- join, sort, limit -- run on the CPU without "
	       "counting as fallbacks).  Cache: warm runs' hits/misses, cold "
	       "runs' misses and the bytes each uploaded (the column cache's "
	       "uploads, cache_uploaded_bytes).\n\n");
	printf("| query | GPU operators | CPU fallbacks | EXPLAIN gpu / cpu | "
	       "warm cache hits/misses | cold misses | cold uploaded MB |\n");
	printf("| --- | ---: | ---: | ---: | ---: | ---: | ---: |\n");
	for (int q = 0; q < NQ; q++) {
		const bg_stats *w = &warm_st[q], *c = &cold_st[q];
		if (!qrun[q] || !tm[q][E_GPU].ran)
			continue;
		printf("| %s | %" PRId64 " | %" PRId64 " | %d / %d | %" PRId64
		       "/%" PRId64 " | %" PRId64 " | %.0f |\n",
		       bg_queries[q].label, w->ops, w->fallbacks, plan_gpu[q],
		       plan_cpu[q], w->hits, w->misses, c->misses,
		       c->uploaded / 1e6);
	}

	printf("\nBandwidth: bytes of fact's columns the query reads (8 "
	       "bytes a value, %" PRIu64 " rows) over the best warm GPU "
	       "time, beside the device-to-device copy measured in this run "
	       "(bytes copied per second; the copy reads and writes each "
	       "byte, so the memory moves twice that) and the peak.  Aim "
	       "(issue 5, reported, not asserted): scan-filter-aggregate at "
	       ">= 50%% of the D2D copy, >= 10x DuckDB.\n\n",
	       nrows);
	printf("| query | bytes read GB | GPU warm GB/s | %% of D2D copy | "
	       "%% of peak | DuckDB GB/s |\n");
	printf("| --- | ---: | ---: | ---: | ---: | ---: |\n");
	for (int q = 0; q < NQ; q++) {
		const timing *w = &tm[q][E_GPU], *dk = &tm[q][E_DUCK];
		double bytes = (double)nrows * bg_queries[q].row_bytes;
		char a[32] = "-", p1[32] = "-", p2[32] = "-", dd[32] = "-";
		if (!qrun[q])
			continue;
		if (w->ok && w->n) {
			double gbs = bytes / t_best(w) / 1e9;
			snprintf(a, sizeof(a), "%.1f", gbs);
			if (d2d > 0)
				snprintf(p1, sizeof(p1), "%.1f%%",
					 100 * gbs / d2d);
			if (gi.bandwidth_gbs > 0)
				snprintf(p2, sizeof(p2), "%.1f%%",
					 100 * gbs / gi.bandwidth_gbs);
		}
		if (dk->ok && dk->n)
			snprintf(dd, sizeof(dd), "%.1f",
				 bytes / t_best(dk) / 1e9);
		printf("| %s | %.2f | %s | %s | %s | %s |\n",
		       bg_queries[q].label, bytes / 1e9, a, p1, p2, dd);
	}
	if (d2d > 0)
		printf("| limit: D2D copy (%s) | | %.1f | 100%% | %.1f%% | |\n",
		       d2d_why, d2d,
		       gi.bandwidth_gbs > 0 ? 100 * d2d / gi.bandwidth_gbs : 0);
	else
		printf("| limit: D2D copy | | %s | | | |\n",
		       grc ? "no GPU" : d2d_why);
	if (!grc)
		printf("| limit: peak (gpu_info: 2 x memory clock x bus width) "
		       "| | %.0f | | 100%% | |\n",
		       gi.bandwidth_gbs);

	printf("\nSQL of the queries:\n\n");
	for (int q = 0; q < NQ; q++)
		if (qrun[q])
			printf("- %s: `%s`\n", bg_queries[q].label,
			       bg_queries[q].sql);
	printf("\nEXPLAIN under backend=gpu:\n");
	for (int q = 0; q < NQ; q++)
		if (qrun[q] && plans[q][0])
			printf("\n%s:\n\n```\n%s```\n", bg_queries[q].label,
			       plans[q]);
	printf("\nResults %s across the engines that ran (counts exact, "
	       "reals to 1e-9 relative; the full sort by a digest of every "
	       "row's id and position).\n",
	       mismatch ? "**DIFFER**" : "agree");

	if (g.db && gpmdb_close(g.db) != GPMDB_OK)
		fprintf(stderr, "bench_gpu: gpmdb_close failed\n");
	if (g.path[0])
		unlink(g.path);
	if (d.dl.handle) {
		duckdl_close(&d.dl, &d.db, &d.con);
		duckdl_unload(&d.dl);
	}
	return mismatch ? 1 : 0;
}
