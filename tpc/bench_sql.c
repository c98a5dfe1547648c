/*
 * bench_sql - SQL query benchmark: gpmdb's CPU engine beside SQLite and
 * DuckDB in the same run (issue 3, "Benchmark").
 *
 * Generates N rows (default 10M) of
 *   fact(id BIGINT, k INT, d INT, v DOUBLE, q DECIMAL(12,2), txt TEXT)
 *   dim(d INT PRIMARY KEY, name TEXT, w DOUBLE)         (100k rows)
 * deterministically, loads the same data into each engine by its fastest
 * bulk path (gpmdb: gpmdb_append_columns; SQLite: prepared
 * INSERTs in one transaction, in memory; DuckDB: the Appender, in memory),
 * then runs the same queries on each: scan-filter-aggregate, group by,
 * join + group by, top-100 sort and a full sort consumed by the client.
 * Each query runs once to warm up and then --reps times; the table shows
 * the best and the median.  Results are compared across engines (counts
 * and integers exactly, reals to a relative 1e-9); a mismatch is printed
 * and the program exits with status 1.  A peer that cannot be loaded is
 * printed as "not installed".  Beside the queries, the memory read
 * bandwidth of this machine (a sum over an array as large as the columns
 * a query reads) is measured in the same run, on 1 thread and on all.
 *
 * Usage: bench_sql [--rows N] [--dim N] [--reps R] [--dir DIR]
 *                  [--engines gpmdb,sqlite,duckdb] [--queries 1,3,...]
 * (--engines and --queries choose a subset, for profiling one engine or one
 * query; what is left out is printed as "not run".)
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <omp.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench_util.h"
#include "gpmdb.h"
#include "peers/duckdb_dl.h"

const char bench_prog[] = "bench_sql";

/* ---- Data ------------------------------------------------------------ */

/* A counter-based generator: value = f(stream, row), so any row can be
 * made alone and the data is the same on every run. */
static uint64_t bench_mix(uint64_t stream, uint64_t i)
{
	uint64_t z = i * 0x9e3779b97f4a7c15ull + stream * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* A generated string: NUL-terminated, with its length. */
typedef struct {
	const char *ptr;
	uint32_t len;
} bench_str;

#define BENCH_NTXT   4096 /* distinct txt values */
#define BENCH_NGROUP 1000 /* distinct k, distinct dim.name */

typedef struct {
	uint64_t n, ndim;
	int64_t *id;
	int32_t *k, *d;
	double *v;
	int64_t *q; /* cents: DECIMAL(12,2) */
	bench_str *txt;
	int32_t *dd; /* dim */
	bench_str *name;
	double *w;
	char *pool; /* text of txt and name */
} bench_data;

static void bench_text(char **at, bench_str *t, const char *fmt, unsigned x)
{
	int len = sprintf(*at, fmt, x);
	t->ptr = *at;
	t->len = (uint32_t)len;
	*at += len + 1;
}

static void bench_generate(bench_data *b, uint64_t n, uint64_t ndim)
{
	bench_str txts[BENCH_NTXT];
	char *at;

	b->n = n;
	b->ndim = ndim;
	b->id = bench_alloc(n * sizeof(int64_t));
	b->k = bench_alloc(n * sizeof(int32_t));
	b->d = bench_alloc(n * sizeof(int32_t));
	b->v = bench_alloc(n * sizeof(double));
	b->q = bench_alloc(n * sizeof(int64_t));
	b->txt = bench_alloc(n * sizeof(bench_str));
	b->dd = bench_alloc(ndim * sizeof(int32_t));
	b->name = bench_alloc(ndim * sizeof(bench_str));
	b->w = bench_alloc(ndim * sizeof(double));
	b->pool = bench_alloc((BENCH_NTXT + ndim) * 16);
	at = b->pool;
	for (unsigned i = 0; i < BENCH_NTXT; i++)
		bench_text(&at, &txts[i], "tx%u", i * 7919u % 100000u);
	/* v: a permutation of (j + 0.5) / n, so that every v differs and
	 * ORDER BY v has exactly one answer; the multiplier near n / phi,
	 * coprime with n, scatters neighbours. */
	uint64_t step = bench_coprime_step(n);
#pragma omp parallel for schedule(static)
	for (uint64_t i = 0; i < n; i++) {
		b->id[i] = (int64_t)i;
		b->k[i] = (int32_t)(bench_mix(1, i) % BENCH_NGROUP);
		b->d[i] = (int32_t)(bench_mix(2, i) % ndim);
		unsigned __int128 pos = (unsigned __int128)i * step % n;
		b->v[i] = ((double)(uint64_t)pos + 0.5) / (double)n;
		b->q[i] =
		    (int64_t)(bench_mix(3, i) % 10000000); /* < 100000.00 */
		b->txt[i] = txts[bench_mix(4, i) % BENCH_NTXT];
	}
	for (uint64_t j = 0; j < ndim; j++) {
		b->dd[j] = (int32_t)j;
		bench_text(&at, &b->name[j], "name%04u",
			   (unsigned)(j % BENCH_NGROUP));
		b->w[j] = (double)(bench_mix(5, j) >> 11) * 0x1.0p-53;
	}
}

static void bench_data_free(bench_data *b)
{
	free(b->id);
	free(b->k);
	free(b->d);
	free(b->v);
	free(b->q);
	free(b->txt);
	free(b->dd);
	free(b->name);
	free(b->w);
	free(b->pool);
}

/* ---- Queries --------------------------------------------------------- */

typedef struct {
	const char *label;
	const char *sql;
	bool stream;   /* consumed as a stream into a digest of (id, v) */
	int row_bytes; /* bytes of fact's columns read per row (8 a value) */
} query;

static const query bench_queries[] = {
    {"scan-filter-aggregate",
     "SELECT sum(v), count(*) FROM fact WHERE k < 100 AND v > 0.5", false,
     8 + 8},
    {"group by (1000 groups)",
     "SELECT k, count(*), sum(v), avg(q) FROM fact GROUP BY k ORDER BY k",
     false, 8 + 8 + 8},
    {"join + group by",
     "SELECT dim.name, count(*), sum(fact.v) FROM fact JOIN dim "
     "ON fact.d = dim.d WHERE dim.w > 0.5 GROUP BY dim.name "
     "ORDER BY dim.name",
     false, 8 + 8},
    {"sort, top 100", "SELECT id, v FROM fact ORDER BY v DESC LIMIT 100", false,
     8 + 8},
    {"sort, all rows to the client", "SELECT id, v FROM fact ORDER BY v", true,
     8 + 8},
};
#define NQUERIES (int)(sizeof(bench_queries) / sizeof(bench_queries[0]))

/* ---- Engines --------------------------------------------------------- */

typedef enum { ENG_GPMDB, ENG_SQLITE, ENG_DUCKDB, NENGINES } engine_id;
static const char *const engine_names[NENGINES] = {"gpmdb CPU", "SQLite",
						   "DuckDB"};

typedef struct {
	bool wanted, ready;
	char why[512]; /* when not ready: "not installed: ..." */
	double load_s;
	char load_how[256];
	double ins_s; /* gpmdb: the fact table again by array-bound INSERT */
	/* gpmdb */
	gpmdb *gdb;
	char pool_path[4096];
	/* SQLite */
	sqlite3 *sdb;
	/* DuckDB */
	duckdl dl;
	duckdl_database ddb;
	duckdl_connection dcon;
} engine;

/* gpmdb: gpmdb_append_columns (whole columns per call, one transaction
 * each) into tables made by CREATE TABLE; INT columns are 64-bit there
 * (docs/engine.md, "Types").  q goes in as a double and is converted to
 * DECIMAL(12,2) as an INSERT would. */
static int gpmdb_load(engine *e, const bench_data *b, const char *dir,
		      char *err, size_t errlen)
{
	gpmdb_options go = {.backend = "cpu"};
	const char **txt = bench_alloc(b->n * sizeof(char *));
	const char **name = bench_alloc(b->ndim * sizeof(char *));
	double *q = bench_alloc(b->n * sizeof(double));
	char *msg = NULL;
	int rc = -1;

	snprintf(e->pool_path, sizeof(e->pool_path), "%s/bench_sql_%d.pool",
		 dir, (int)getpid());
	unlink(e->pool_path);
	/* The arrays of pointers and of doubles are the API's input format:
	 * made before the clock starts, as the peers' inputs are. */
	for (uint64_t i = 0; i < b->n; i++) {
		txt[i] = b->txt[i].ptr;
		q[i] = b->q[i] / 100.0;
	}
	for (uint64_t j = 0; j < b->ndim; j++)
		name[j] = b->name[j].ptr;
	const gpmdb_column_array fact[] = {
	    {GPMDB_ARRAY_INT64, b->id, NULL}, {GPMDB_ARRAY_INT32, b->k, NULL},
	    {GPMDB_ARRAY_INT32, b->d, NULL},  {GPMDB_ARRAY_DOUBLE, b->v, NULL},
	    {GPMDB_ARRAY_DOUBLE, q, NULL},    {GPMDB_ARRAY_TEXT, txt, NULL}};
	const gpmdb_column_array dim[] = {{GPMDB_ARRAY_INT32, b->dd, NULL},
					  {GPMDB_ARRAY_TEXT, name, NULL},
					  {GPMDB_ARRAY_DOUBLE, b->w, NULL}};

	double t0 = bench_now();
	if (gpmdb_open_v2(e->pool_path, &e->gdb,
			  GPMDB_OPEN_READWRITE | GPMDB_OPEN_CREATE,
			  &go) != GPMDB_OK) {
		snprintf(err, errlen, "gpmdb_open_v2: %s",
			 e->gdb ? gpmdb_errmsg(e->gdb) : "out of memory");
		goto out;
	}
	if (gpmdb_exec(e->gdb,
		       "CREATE TABLE fact(id BIGINT, k INT, d INT, "
		       "v DOUBLE, q DECIMAL(12,2), txt TEXT); CREATE TABLE "
		       "dim(d INT PRIMARY KEY, name TEXT, w DOUBLE)",
		       NULL, NULL, &msg) != GPMDB_OK) {
		snprintf(err, errlen, "create: %s", msg ? msg : "failed");
		gpmdb_free(msg);
		goto out;
	}
	if (gpmdb_append_columns(e->gdb, "fact", 6, NULL, fact,
				 (int64_t)b->n) != GPMDB_OK ||
	    gpmdb_append_columns(e->gdb, "dim", 3, NULL, dim,
				 (int64_t)b->ndim) != GPMDB_OK) {
		snprintf(err, errlen, "gpmdb_append_columns: %s",
			 gpmdb_errmsg(e->gdb));
		goto out;
	}
	e->load_s = bench_now() - t0;
	snprintf(e->load_how, sizeof(e->load_how),
		 "gpmdb_append_columns, 1 transaction per table, pool on %s "
		 "(durability auto)",
		 dir);
	/* The other batch path of the API: the same fact rows through one
	 * prepared INSERT with array-bound parameters (one step, one
	 * transaction), into a copy of the table that is dropped after. */
	if (gpmdb_exec(e->gdb,
		       "CREATE TABLE fact_ins(id BIGINT, k INT, d "
		       "INT, v DOUBLE, q DECIMAL(12,2), txt TEXT)",
		       NULL, NULL, NULL) != GPMDB_OK) {
		snprintf(err, errlen, "create fact_ins: %s",
			 gpmdb_errmsg(e->gdb));
		goto out;
	}
	gpmdb_stmt *ins = NULL;
	t0 = bench_now();
	if (gpmdb_prepare(e->gdb, "INSERT INTO fact_ins VALUES(?,?,?,?,?,?)",
			  -1, &ins, NULL) != GPMDB_OK ||
	    gpmdb_bind_array_int64(ins, 1, b->id, (int64_t)b->n, NULL) ||
	    gpmdb_bind_array_int32(ins, 2, b->k, (int64_t)b->n, NULL) ||
	    gpmdb_bind_array_int32(ins, 3, b->d, (int64_t)b->n, NULL) ||
	    gpmdb_bind_array_double(ins, 4, b->v, (int64_t)b->n, NULL) ||
	    gpmdb_bind_array_double(ins, 5, q, (int64_t)b->n, NULL) ||
	    gpmdb_bind_array_text(ins, 6, txt, (int64_t)b->n, NULL) ||
	    gpmdb_step(ins) != GPMDB_DONE) {
		snprintf(err, errlen, "array-bound INSERT: %s",
			 gpmdb_errmsg(e->gdb));
		gpmdb_finalize(ins);
		goto out;
	}
	e->ins_s = bench_now() - t0;
	gpmdb_finalize(ins);
	if (gpmdb_exec(e->gdb, "DROP TABLE fact_ins", NULL, NULL, NULL) !=
	    GPMDB_OK) {
		snprintf(err, errlen, "drop fact_ins: %s",
			 gpmdb_errmsg(e->gdb));
		goto out;
	}
	rc = 0;
out:
	free(txt);
	free(name);
	free(q);
	return rc;
}

static int gpmdb_query(engine *e, const query *qy, qres *out, char *err,
		       size_t errlen)
{
	gpmdb_stmt *s;
	const char *tail;
	bench_digest g = {0};
	int rc;

	if (gpmdb_prepare(e->gdb, qy->sql, -1, &s, &tail) != GPMDB_OK) {
		snprintf(err, errlen, "%s", gpmdb_errmsg(e->gdb));
		return -1;
	}
	out->ncols = gpmdb_column_count(s);
	if (qy->stream) {
		/* Columnar, as DuckDB's chunks are read: after the first step,
		 * each column from the current row to the last as one array. */
		gpmdb_column_array a, b;
		int64_t na, nb;
		rc = gpmdb_step(s);
		if (rc == GPMDB_ROW &&
		    (gpmdb_result_column(s, 0, &a, &na) != GPMDB_OK ||
		     gpmdb_result_column(s, 1, &b, &nb) != GPMDB_OK ||
		     a.type != GPMDB_ARRAY_INT64 ||
		     b.type != GPMDB_ARRAY_DOUBLE || na != nb)) {
			snprintf(err, errlen, "gpmdb_result_column: %s",
				 gpmdb_errmsg(e->gdb));
			gpmdb_finalize(s);
			return -1;
		}
		if (rc == GPMDB_ROW) {
			const int64_t *id = a.values;
			const double *v = b.values;
			for (int64_t i = 0; i < na; i++)
				bench_digest_add(&g, id[i], v[i]);
			rc = GPMDB_DONE;
		}
	}
	while (!qy->stream && (rc = gpmdb_step(s)) == GPMDB_ROW) {
		cell *c = qres_row(out);
		for (int i = 0; i < out->ncols; i++) {
			switch (gpmdb_column_type(s, i)) {
			case GPMDB_INTEGER:
				c[i] = (cell){.kind = CELL_INT,
					      .i = gpmdb_column_int64(s, i)};
				break;
			case GPMDB_FLOAT:
				c[i] = (cell){.kind = CELL_REAL,
					      .r = gpmdb_column_double(s, i)};
				break;
			case GPMDB_TEXT:
				c[i] = (cell){
				    .kind = CELL_TEXT,
				    .t = bench_strdup(
					(const char *)gpmdb_column_text(s, i))};
				break;
			default:
				c[i] = (cell){.kind = CELL_NULL};
			}
		}
	}
	if (rc != GPMDB_DONE) {
		snprintf(err, errlen, "%s", gpmdb_errmsg(e->gdb));
		gpmdb_finalize(s);
		return -1;
	}
	if (gpmdb_finalize(s) != GPMDB_OK) {
		snprintf(err, errlen, "finalize: %s", gpmdb_errmsg(e->gdb));
		return -1;
	}
	if (qy->stream)
		digest_result(&g, out);
	return 0;
}

static int sqlite_exec(sqlite3 *db, const char *sql, char *err, size_t errlen)
{
	char *m = NULL;
	if (sqlite3_exec(db, sql, NULL, NULL, &m) != SQLITE_OK) {
		snprintf(err, errlen, "%s: %s", sql, m ? m : "failed");
		sqlite3_free(m);
		return -1;
	}
	return 0;
}

/* SQLite: in memory, no journal, prepared INSERTs in one transaction.
 * DECIMAL(12,2) has NUMERIC affinity there: q is bound as a REAL. */
static int sqlite_load(engine *e, const bench_data *b, char *err, size_t errlen)
{
	sqlite3_stmt *f = NULL, *d = NULL;
	double t0 = bench_now();

	if (sqlite3_open(":memory:", &e->sdb) != SQLITE_OK) {
		snprintf(err, errlen, "sqlite3_open: %s",
			 e->sdb ? sqlite3_errmsg(e->sdb) : "out of memory");
		return -1;
	}
	if (sqlite_exec(e->sdb,
			"PRAGMA journal_mode=OFF; PRAGMA "
			"synchronous=OFF; PRAGMA temp_store=MEMORY; "
			"CREATE TABLE fact(id BIGINT, k INT, d INT, v DOUBLE, "
			"q DECIMAL(12,2), txt TEXT); CREATE TABLE dim(d "
			"INTEGER PRIMARY KEY, name TEXT, w DOUBLE); BEGIN",
			err, errlen))
		return -1;
	if (sqlite3_prepare_v2(e->sdb, "INSERT INTO fact VALUES(?,?,?,?,?,?)",
			       -1, &f, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(e->sdb, "INSERT INTO dim VALUES(?,?,?)", -1, &d,
			       NULL) != SQLITE_OK)
		goto fail;
	for (uint64_t i = 0; i < b->n; i++) {
		if (sqlite3_bind_int64(f, 1, b->id[i]) ||
		    sqlite3_bind_int(f, 2, b->k[i]) ||
		    sqlite3_bind_int(f, 3, b->d[i]) ||
		    sqlite3_bind_double(f, 4, b->v[i]) ||
		    sqlite3_bind_double(f, 5, b->q[i] / 100.0) ||
		    sqlite3_bind_text(f, 6, b->txt[i].ptr, (int)b->txt[i].len,
				      SQLITE_STATIC) ||
		    sqlite3_step(f) != SQLITE_DONE || sqlite3_reset(f))
			goto fail;
	}
	for (uint64_t j = 0; j < b->ndim; j++) {
		if (sqlite3_bind_int(d, 1, b->dd[j]) ||
		    sqlite3_bind_text(d, 2, b->name[j].ptr, (int)b->name[j].len,
				      SQLITE_STATIC) ||
		    sqlite3_bind_double(d, 3, b->w[j]) ||
		    sqlite3_step(d) != SQLITE_DONE || sqlite3_reset(d))
			goto fail;
	}
	sqlite3_finalize(f);
	sqlite3_finalize(d);
	if (sqlite_exec(e->sdb, "COMMIT", err, errlen))
		return -1;
	e->load_s = bench_now() - t0;
	snprintf(e->load_how, sizeof(e->load_how),
		 "prepared INSERTs, 1 transaction, :memory:, journal off");
	return 0;
fail:
	snprintf(err, errlen, "load: %s", sqlite3_errmsg(e->sdb));
	sqlite3_finalize(f);
	sqlite3_finalize(d);
	return -1;
}

static int sqlite_query(engine *e, const query *qy, qres *out, char *err,
			size_t errlen)
{
	sqlite3_stmt *s;
	bench_digest g = {0};
	int rc;

	if (sqlite3_prepare_v2(e->sdb, qy->sql, -1, &s, NULL) != SQLITE_OK) {
		snprintf(err, errlen, "%s", sqlite3_errmsg(e->sdb));
		return -1;
	}
	out->ncols = sqlite3_column_count(s);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		if (qy->stream) {
			bench_digest_add(&g, sqlite3_column_int64(s, 0),
					 sqlite3_column_double(s, 1));
			continue;
		}
		cell *c = qres_row(out);
		for (int i = 0; i < out->ncols; i++) {
			switch (sqlite3_column_type(s, i)) {
			case SQLITE_INTEGER:
				c[i] = (cell){.kind = CELL_INT,
					      .i = sqlite3_column_int64(s, i)};
				break;
			case SQLITE_FLOAT:
				c[i] = (cell){.kind = CELL_REAL,
					      .r = sqlite3_column_double(s, i)};
				break;
			case SQLITE_TEXT:
				c[i] = (cell){
				    .kind = CELL_TEXT,
				    .t = bench_strdup(
					(const char *)sqlite3_column_text(s,
									  i))};
				break;
			default:
				c[i] = (cell){.kind = CELL_NULL};
			}
		}
	}
	if (rc != SQLITE_DONE) {
		snprintf(err, errlen, "%s", sqlite3_errmsg(e->sdb));
		sqlite3_finalize(s);
		return -1;
	}
	sqlite3_finalize(s);
	if (qy->stream)
		digest_result(&g, out);
	return 0;
}

/* DuckDB: in memory, all cores, the Appender (row by row: its C API has
 * no column-at-a-time append of plain arrays).  q goes in as a double and
 * DuckDB casts it to DECIMAL(12,2). */
static int duckdb_load(engine *e, const bench_data *b, int nthreads, char *err,
		       size_t errlen)
{
	duckdl *dl = &e->dl;
	duckdl_appender a = NULL;
	double t0 = bench_now();

	if (duckdl_open_mem(dl, nthreads, &e->ddb, &e->dcon, err, errlen))
		return -1;
	if (duckdl_exec(dl, e->dcon,
			"CREATE TABLE fact(id BIGINT, k INT, "
			"d INT, v DOUBLE, q DECIMAL(12,2), txt TEXT)",
			err, errlen) ||
	    duckdl_exec(dl, e->dcon,
			"CREATE TABLE dim(d INT PRIMARY KEY, "
			"name TEXT, w DOUBLE)",
			err, errlen))
		return -1;
	if (dl->appender_create(e->dcon, NULL, "fact", &a) != DUCKDL_OK)
		goto fail;
	for (uint64_t i = 0; i < b->n; i++)
		if (dl->append_int64(a, b->id[i]) ||
		    dl->append_int32(a, b->k[i]) ||
		    dl->append_int32(a, b->d[i]) ||
		    dl->append_double(a, b->v[i]) ||
		    dl->append_double(a, b->q[i] / 100.0) ||
		    dl->append_varchar_length(a, b->txt[i].ptr,
					      b->txt[i].len) ||
		    dl->appender_end_row(a))
			goto fail;
	if (dl->appender_close(a) != DUCKDL_OK)
		goto fail;
	dl->appender_destroy(&a);
	if (dl->appender_create(e->dcon, NULL, "dim", &a) != DUCKDL_OK)
		goto fail;
	for (uint64_t j = 0; j < b->ndim; j++)
		if (dl->append_int32(a, b->dd[j]) ||
		    dl->append_varchar_length(a, b->name[j].ptr,
					      b->name[j].len) ||
		    dl->append_double(a, b->w[j]) || dl->appender_end_row(a))
			goto fail;
	if (dl->appender_close(a) != DUCKDL_OK)
		goto fail;
	dl->appender_destroy(&a);
	e->load_s = bench_now() - t0;
	snprintf(e->load_how, sizeof(e->load_how),
		 "Appender, in memory, %d threads", nthreads);
	return 0;
fail:
	snprintf(err, errlen, "load: %s",
		 a && dl->appender_error(a) ? dl->appender_error(a)
					    : "appender_create failed");
	if (a)
		dl->appender_destroy(&a);
	return -1;
}

static int duckdb_query(engine *e, const query *qy, qres *out, char *err,
			size_t errlen)
{
	return bench_duck_query(&e->dl, e->dcon, qy->sql, qy->stream, out, err,
				errlen);
}

static int engine_query(engine_id id, engine *e, const query *qy, qres *out,
			char *err, size_t errlen)
{
	qres_clear(out);
	switch (id) {
	case ENG_GPMDB:
		return gpmdb_query(e, qy, out, err, errlen);
	case ENG_SQLITE:
		return sqlite_query(e, qy, out, err, errlen);
	case ENG_DUCKDB:
		return duckdb_query(e, qy, out, err, errlen);
	default:
		return -1;
	}
}

static void engine_close(engine_id id, engine *e)
{
	if (id == ENG_GPMDB) {
		if (e->gdb && gpmdb_close(e->gdb) != GPMDB_OK)
			fprintf(stderr, "bench_sql: gpmdb_close failed\n");
		if (e->pool_path[0])
			unlink(e->pool_path);
	} else if (id == ENG_SQLITE) {
		if (e->sdb)
			sqlite3_close(e->sdb);
	} else if (e->dl.handle) {
		duckdl_close(&e->dl, &e->ddb, &e->dcon);
		duckdl_unload(&e->dl);
	}
}

/* ---- Hardware reference ---------------------------------------------- */

/* Memory read bandwidth: best of 5 sums over nbytes on nthreads threads,
 * in GB/s.  The array is written first so its pages exist. */
static double bench_membw(const uint64_t *a, uint64_t nwords, int nthreads)
{
	double best = 1e30;
	volatile uint64_t sink = 0;

	for (int r = 0; r < 5; r++) {
		uint64_t s = 0;
		double t0 = bench_now();
#pragma omp parallel for num_threads(nthreads) reduction(+ : s) schedule(static)
		for (uint64_t i = 0; i < nwords; i++)
			s += a[i];
		double t = bench_now() - t0;
		sink += s;
		if (t < best)
			best = t;
	}
	(void)sink;
	return (double)nwords * 8 / best / 1e9;
}

/* ---- Main ------------------------------------------------------------ */

static void fmt_ms(char *buf, size_t len, const double *t, int reps, bool ok)
{
	if (!ok) {
		snprintf(buf, len, "failed");
		return;
	}
	double s[64];
	memcpy(s, t, reps * sizeof(double));
	qsort(s, reps, sizeof(double), bench_cmp_double);
	snprintf(buf, len, "%.1f (%.1f)", s[0] * 1e3, s[reps / 2] * 1e3);
}

static double best_of(const double *t, int reps)
{
	double b = t[0];
	for (int i = 1; i < reps; i++)
		if (t[i] < b)
			b = t[i];
	return b;
}

int main(int argc, char **argv)
{
	uint64_t nrows = 10000000, ndim = 100000;
	int reps = 3;
	const char *dir = "/dev/shm", *engines = "gpmdb,sqlite,duckdb";
	const char *queries = NULL;
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
		else {
			fprintf(stderr, "usage: bench_sql [--rows N] [--dim N] "
					"[--reps R] [--dir DIR] [--engines "
					"gpmdb,sqlite,duckdb] [--queries "
					"1,2,...]\n");
			return 2;
		}
	}
	if (nrows == 0 || nrows > 2000000000ull || ndim == 0 ||
	    ndim > 2000000000ull || reps < 1 || reps > 64)
		bench_die("arguments", "need 0 < rows, dim <= 2e9 and "
				       "1 <= reps <= 64");

	int ncores = omp_get_num_procs();
	bench_data b;
	double t0 = bench_now();
	bench_generate(&b, nrows, ndim);
	double gen_s = bench_now() - t0;

	printf("## SQL queries: %" PRIu64 " rows in fact, %" PRIu64
	       " in dim\n\n",
	       nrows, ndim);
	/* gpmdb's operators use OpenMP where they have been parallelised
	 * (docs/engine.md); the others run on one thread. */
	printf("Threads: DuckDB %d (all cores); gpmdb CPU engine: OpenMP "
	       "with %d (scan, filter, projection, aggregate, join probe, "
	       "sort); SQLite 1.  "
	       "Data generated in %.1f s.\n\n",
	       ncores, omp_get_max_threads(), gen_s);

	/* The hardware reference, over as many bytes as the widest query
	 * reads,
	 * measured before the engines are loaded (DuckDB's idle threads
	 * and memory stay out of it). */
	int maxb = 0;
	for (int q = 0; q < NQUERIES; q++)
		if (bench_queries[q].row_bytes > maxb)
			maxb = bench_queries[q].row_bytes;
	uint64_t nwords = nrows * (uint64_t)maxb / 8;
	uint64_t *arr = bench_alloc(nwords * 8);
#pragma omp parallel for schedule(static)
	for (uint64_t i = 0; i < nwords; i++)
		arr[i] = i;
	double bw1 = bench_membw(arr, nwords, 1);
	double bwn = bench_membw(arr, nwords, ncores);
	free(arr);

	/* Load every engine. */
	engine eng[NENGINES];
	const char *const keys[NENGINES] = {"gpmdb", "sqlite", "duckdb"};
	memset(eng, 0, sizeof(eng));
	for (int e = 0; e < NENGINES; e++) {
		eng[e].wanted = bench_in_list(engines, keys[e]);
		if (!eng[e].wanted) {
			snprintf(eng[e].why, sizeof(eng[e].why),
				 "not run (--engines %s)", engines);
			continue;
		}
		int rc;
		err[0] = 0;
		if (e == ENG_GPMDB)
			rc = gpmdb_load(&eng[e], &b, dir, err, sizeof(err));
		else if (e == ENG_SQLITE)
			rc = sqlite_load(&eng[e], &b, err, sizeof(err));
		else if (duckdl_load(&eng[e].dl, NULL, err, sizeof(err))) {
			snprintf(eng[e].why, sizeof(eng[e].why),
				 "not installed (%s; run "
				 "tpc/peers/fetch_duckdb.sh)",
				 err);
			continue;
		} else
			rc = duckdb_load(&eng[e], &b, ncores, err, sizeof(err));
		if (rc) {
			snprintf(eng[e].why, sizeof(eng[e].why), "failed: %s",
				 err);
			fprintf(stderr, "bench_sql: %s: %s\n", engine_names[e],
				err);
			continue;
		}
		eng[e].ready = true;
	}
	bench_data_free(&b);

	printf("| engine | version | load s | M rows/s | how |\n");
	printf("| --- | --- | ---: | ---: | --- |\n");
	for (int e = 0; e < NENGINES; e++) {
		const char *ver = e == ENG_GPMDB    ? gpmdb_libversion()
				  : e == ENG_SQLITE ? sqlite3_libversion()
				  : eng[e].dl.handle
				      ? eng[e].dl.library_version()
				      : "";
		if (!eng[e].ready)
			printf("| %s | %s | | | %s |\n", engine_names[e], ver,
			       eng[e].why);
		else
			printf("| %s | %s | %.2f | %.2f | %s |\n",
			       engine_names[e], ver, eng[e].load_s,
			       (nrows + ndim) / eng[e].load_s / 1e6,
			       eng[e].load_how);
		if (e == ENG_GPMDB && eng[e].ready)
			printf("| %s | %s | %.2f | %.2f | fact only: one "
			       "prepared INSERT, array-bound parameters, one "
			       "step |\n",
			       engine_names[e], ver, eng[e].ins_s,
			       nrows / eng[e].ins_s / 1e6);
	}
	printf("\n");
	fflush(stdout);

	/* Queries: a warm-up run, then reps timed runs; the last result is
	 * checked against the first engine that ran (SQLite when present, the
	 * oracle of the project's tests). */
	bool mismatch = false;
	double times[NQUERIES][NENGINES][64];
	bool ok[NQUERIES][NENGINES];
	memset(ok, 0, sizeof(ok));
	const engine_id order[NENGINES] = {ENG_SQLITE, ENG_GPMDB, ENG_DUCKDB};
	bool qrun[NQUERIES];
	for (int q = 0; q < NQUERIES; q++) {
		char num[16];
		snprintf(num, sizeof(num), "%d", q + 1);
		qrun[q] = !queries || bench_in_list(queries, num);
	}
	for (int q = 0; q < NQUERIES; q++) {
		const query *qy = &bench_queries[q];
		qres ref = {0};
		if (!qrun[q])
			continue;
		const char *ref_name = NULL;
		for (int oi = 0; oi < NENGINES; oi++) {
			engine_id e = order[oi];
			qres res = {0};
			if (!eng[e].ready)
				continue;
			ok[q][e] = true;
			for (int r = -1; r < reps && ok[q][e]; r++) {
				double s = bench_now();
				if (engine_query(e, &eng[e], qy, &res, err,
						 sizeof(err))) {
					fprintf(stderr,
						"bench_sql: %s: %s: "
						"%s\n",
						engine_names[e], qy->label,
						err);
					printf("\n**FAILED** %s on %s: %s\n\n",
					       qy->label, engine_names[e], err);
					ok[q][e] = false;
					mismatch = true;
					break;
				}
				if (r >= 0)
					times[q][e][r] = bench_now() - s;
			}
			if (!ok[q][e]) {
				qres_clear(&res);
				continue;
			}
			if (!ref_name) {
				ref = res;
				ref_name = engine_names[e];
				continue;
			}
			if (!qres_check(qy->label, ref_name, &ref,
					engine_names[e], &res))
				mismatch = true;
			qres_clear(&res);
		}
		if (qy->stream && ref_name && ref.cells[3].i != 0) {
			printf("\n**MISMATCH** %s: %s returned %" PRId64
			       " rows out of order\n\n",
			       qy->label, ref_name, ref.cells[3].i);
			mismatch = true;
		}
		qres_clear(&ref);
		fprintf(stderr, "bench_sql: %s done\n", qy->label);
	}

	printf("Times in ms: best of %d (median), after one warm-up run; "
	       "each includes preparing the SQL and reading every result row "
	       "in the client.  Ratios are gpmdb's time over the peer's (< 1: "
	       "gpmdb is faster).  GB/s: bytes of fact's columns the query "
	       "reads, at 8 bytes a value (gpmdb's widths; DuckDB keeps INT "
	       "in 4), over the best time.\n\n",
	       reps);
	printf("| query | gpmdb CPU ms | SQLite ms | DuckDB ms | gpmdb/SQLite "
	       "| gpmdb/DuckDB | gpmdb GB/s | DuckDB GB/s |\n");
	printf("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
	for (int q = 0; q < NQUERIES; q++) {
		const query *qy = &bench_queries[q];
		char c[NENGINES][64], ra[2][32], gb[2][32];
		double bytes = (double)nrows * qy->row_bytes;
		for (int e = 0; e < NENGINES; e++) {
			if (!eng[e].wanted || !qrun[q])
				snprintf(c[e], sizeof(c[e]), "not run");
			else if (!eng[e].ready)
				snprintf(c[e], sizeof(c[e]), "%s",
					 eng[e].dl.handle || e != ENG_DUCKDB
					     ? "failed"
					     : "not installed");
			else
				fmt_ms(c[e], sizeof(c[e]), times[q][e], reps,
				       ok[q][e]);
		}
		for (int p = 0; p < 2; p++) {
			engine_id pe = p == 0 ? ENG_SQLITE : ENG_DUCKDB;
			engine_id ge = p == 0 ? ENG_GPMDB : ENG_DUCKDB;
			if (ok[q][ENG_GPMDB] && ok[q][pe])
				snprintf(ra[p], sizeof(ra[p]), "%.2f",
					 best_of(times[q][ENG_GPMDB], reps) /
					     best_of(times[q][pe], reps));
			else
				snprintf(ra[p], sizeof(ra[p]), "-");
			if (ok[q][ge])
				snprintf(gb[p], sizeof(gb[p]), "%.2f",
					 bytes / best_of(times[q][ge], reps) /
					     1e9);
			else
				snprintf(gb[p], sizeof(gb[p]), "-");
		}
		printf("| %s | %s | %s | %s | %s | %s | %s | %s |\n", qy->label,
		       c[ENG_GPMDB], c[ENG_SQLITE], c[ENG_DUCKDB], ra[0], ra[1],
		       gb[0], gb[1]);
	}
	printf("| limit: memory read, 1 thread | | | | | | %.2f | |\n", bw1);
	printf("| limit: memory read, %d threads | | | | | | | %.2f |\n",
	       ncores, bwn);
	printf("\nSQL of the queries:\n\n");
	for (int q = 0; q < NQUERIES; q++)
		printf("- %s: `%s`\n", bench_queries[q].label,
		       bench_queries[q].sql);
	printf("\nResults %s across the engines that ran (counts exact, "
	       "reals to 1e-9 relative; the full sort by a digest of every "
	       "row's id and position).\n",
	       mismatch ? "**DIFFER**" : "agree");
	for (int e = 0; e < NENGINES; e++)
		engine_close((engine_id)e, &eng[e]);
	return mismatch ? 1 : 0;
}
