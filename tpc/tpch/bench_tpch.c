/*
 * bench_tpch - the TPC-H benchmark (issue 8): the 22 queries, cold and
 * warm, on gpmdb's CPU backend, gpmdb's GPU backend (when the build and the
 * machine have a GPU), DuckDB (libduckdb loaded with dlopen) and SQLite
 * (at SF <= 1), all loaded from the same .tbl files; load times; the
 * geometric means; the answers checked equal across engines.
 *
 * Usage: bench_tpch --data DIR [--sf SF] [--queries DIR] [--dir DIR]
 *                   [--engines cpu,gpu,duckdb,sqlite] [--only 1,6,...]
 *                   [--reps 3] [--warm-budget S] [--timeout S]
 *                   [--sqlite-max-sf 1] [--plot FILE] [--partial FILE]
 *
 * DIR holds <table>.tbl (or .tbl.gz) for the 8 tables, as tpchgen -o or
 * dbgen write them (trailing '|').  --queries is the folder of q1.sql ..
 * q22.sql (default $GPMDB_TPCH_DIR/queries, else ../shared/tpch/queries).
 * The databases are files in --dir (default /dev/shm), removed at the end.
 *
 * Loading, timed per engine from nothing to a closed database file:
 *   gpmdb   tpch_pool_load (tbl reader -> stg_append), one transaction a
 *           table, durability auto (pmem on /dev/shm).
 *   DuckDB  CREATE TABLE (tpch_table_sql), COPY ... FROM the file with
 *           DELIMITER '|' (it takes the trailing '|'), into a database
 *           file, CHECKPOINT; all cores.
 *   SQLite  prepared INSERTs of text fields (affinity converts), one
 *           transaction a table, journal and sync off, then the test's
 *           indexes on the join keys and ANALYZE (without them its
 *           correlated subqueries rescan lineitem per row).
 * Every engine gets tpch_table_sql's CREATE TABLE text (schema.sql in lower
 * case, o_orderkey and l_orderkey BIGINT).
 *
 * Timing: per query, the database is opened, the query runs once (cold:
 * first run after opening; for the GPU backend the HBM column cache is
 * empty, since closing the database drops its entries), then up to --reps
 * more times (warm: the best of them); warm runs stop early once they have
 * taken --warm-budget seconds (at least one runs; the table marks fewer
 * than --reps).  A run covers prepare, execution and reading every value
 * into the client (tpch_query.c's runners).  A run over --timeout seconds
 * is interrupted (gpmdb, SQLite: progress handlers) and shown as timeout.
 *
 * Checking: each query's last result of every engine is compared with a
 * reference (DuckDB's, else SQLite's, else gpmdb CPU's) by tpchq_compare,
 * the rule of tests/tpch/test_tpch_queries.c: decimals to the cent, text
 * and counts exactly, ORDER BY order.  A difference or a failed run is
 * printed as **MISMATCH** / **FAILED** and the exit status is 1.
 *
 * GPU: PRAGMA backend=gpu; when EXPLAIN shows no operator on the GPU (no
 * GPU in the build or on the machine) the column says "n/a (no GPU)".
 * Otherwise, per query, the CPU fallbacks of the cold run (PRAGMA
 * gpu_stats' cpu_fallbacks) and the operators EXPLAIN puts on the CPU.
 */
#include <dirent.h>
#include <errno.h>
#include <malloc.h>
#include <math.h>
#include <omp.h>
#include <poll.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "../explain_col.h"
#include "../peers/duckdb_dl.h"
#include "gpmdb.h"
#include "tpch_pool.h"
#include "tpch_query.h"

enum { E_CPU, E_GPU, E_DUCK, E_LITE, E_N };
static const char *const bt_names[E_N] = {"gpmdb CPU", "gpmdb GPU", "DuckDB",
					  "SQLite"};
static const char *const bt_keys[E_N] = {"cpu", "gpu", "duckdb", "sqlite"};

/* An engine's state for the table: run, or why not. */
enum { ST_RUN, ST_NOT_RUN, ST_NOT_INSTALLED, ST_NO_GPU, ST_SF, ST_FAILED };

typedef struct {
	bool ok;      /* the cold run and the warm runs succeeded */
	bool ran;     /* tried */
	bool timeout; /* interrupted after --timeout */
	double cold_ms, warm_ms;
	int nwarm;
	double heap_mb; /* peak heap during the runs, beyond the start */
	char err[1024];
	tpchq_res res; /* the last run's rows */
	char gpu[160]; /* GPU: fallbacks and CPU operators */
	/* --fresh: the query as the first statement of a new process:
	 * wall from fork to exit; of it the open and the query */
	double fresh_ms, fresh_open_ms, fresh_query_ms;
	bool fresh_ok;
} bt_cell;

typedef struct {
	int state;
	char why[1024]; /* not installed / failed: the reason */
	double load_s;
	char note[300]; /* beside the load time */
	bt_cell q[TPCHQ_N + 1];
} bt_engine;

static struct {
	const char *data, *qdir, *dir, *plot, *partial;
	double sf;
	bool engines[E_N];
	bool only[TPCHQ_N + 1];
	int reps;
	double warm_budget, timeout, sqlite_max_sf;
	bool fresh;	   /* --fresh on: every query again in a new process */
	const char *child; /* --fresh-child E:Q:PATH (internal) */
} bt_opt;
static int bt_argc;
static char **bt_argv;

static bt_engine bt_eng[E_N];
static char *bt_sql[TPCHQ_N + 1];
static char bt_pool[512], bt_duck[512], bt_lite[512];
static duckdl bt_dl;

static double bt_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* When main started (a fresh child reports its start-up) */
static double bt_main_t;

static void bt_die(const char *fmt, const char *a, const char *b)
{
	fprintf(stderr, "bench_tpch: ");
	fprintf(stderr, fmt, a, b);
	fputc('\n', stderr);
	exit(2);
}

/* The data file of table t: DIR/t.tbl, else DIR/t.tbl.gz. */
static int bt_tbl_path(int t, char *out, size_t len)
{
	struct stat sb;

	snprintf(out, len, "%s/%s.tbl", bt_opt.data,
		 tpch_table_name((tpch_table)t));
	if (stat(out, &sb) == 0)
		return 0;
	snprintf(out, len, "%s/%s.tbl.gz", bt_opt.data,
		 tpch_table_name((tpch_table)t));
	return stat(out, &sb) == 0 ? 0 : -1;
}

/* ---- deadlines: --timeout through the engines' progress handlers ---- */

static double bt_deadline;

static int bt_progress(void *arg)
{
	(void)arg;
	return bt_opt.timeout > 0 && bt_now() > bt_deadline;
}

/* ---- gpmdb ---------------------------------------------------------- */

static int gpm_load(bt_engine *e)
{
	stg_open_opts oo = {.create = true, .durability = STG_DUR_AUTO};
	char err[480], path[512];
	stg_pool *p = NULL;
	uint64_t rows, total = 0, bytes = 0;
	struct stat sb;

	for (int t = 0; t < TPCH_NTABLES; t++)
		if (bt_tbl_path(t, path, sizeof(path)) == 0 &&
		    stat(path, &sb) == 0)
			bytes += (uint64_t)sb.st_size;
	/* room for the larger scale factors (the pool grows up to this) */
	oo.max_size =
	    bytes * 3 > STG_DEFAULT_MAX_SIZE ? bytes * 3 : STG_DEFAULT_MAX_SIZE;
	unlink(bt_pool);
	double t0 = bt_now();
	if (stg_open(bt_pool, &oo, &p, err, sizeof(err)) != GPMDB_OK) {
		snprintf(e->why, sizeof(e->why), "%s: %s", bt_pool, err);
		return -1;
	}
	for (int t = 0; t < TPCH_NTABLES; t++) {
		if (bt_tbl_path(t, path, sizeof(path))) {
			snprintf(e->why, sizeof(e->why), "no %s/%s.tbl",
				 bt_opt.data, tpch_table_name((tpch_table)t));
			stg_close(p);
			return -1;
		}
		if (tpch_pool_load(p, (tpch_table)t, path, 262144, &rows, err,
				   sizeof(err)) != GPMDB_OK) {
			snprintf(e->why, sizeof(e->why), "%s", err);
			stg_close(p);
			return -1;
		}
		total += rows;
	}
	/* the tables encoded, in the load's time (GPMDB_TPCH_PLAIN=1:
	 * left plain) */
	const char *plain = getenv("GPMDB_TPCH_PLAIN");
	if (!(plain && !strcmp(plain, "1")) &&
	    stg_vacuum(p, NULL, NULL) != GPMDB_OK) {
		snprintf(e->why, sizeof(e->why), "VACUUM: %s", stg_errmsg(p));
		stg_close(p);
		return -1;
	}
	const char *dur = stg_durability_name(stg_pool_durability(p));
	if (stg_close(p) != GPMDB_OK) {
		snprintf(e->why, sizeof(e->why), "%s: close failed", bt_pool);
		return -1;
	}
	e->load_s = bt_now() - t0;
	if (stat(bt_pool, &sb) == 0)
		snprintf(e->note, sizeof(e->note),
			 "%llu rows, pool %.0f MiB in %s, durability %s",
			 (unsigned long long)total,
			 (double)sb.st_size / 1048576.0, bt_opt.dir, dur);
	return 0;
}

static int gpm_open(gpmdb **db, bool gpu, char *err, size_t len)
{
	if (gpmdb_open_v2(bt_pool, db, GPMDB_OPEN_READWRITE, NULL) !=
	    GPMDB_OK) {
		snprintf(err, len, "open %s: %s", bt_pool,
			 *db ? gpmdb_errmsg(*db) : "failed");
		if (*db)
			gpmdb_close(*db);
		*db = NULL;
		return -1;
	}
	gpmdb_progress_handler(*db, 64, bt_progress, NULL);
	/* explicit: the default (auto) puts large scans on a GPU when the
	 * machine has one, which would make "gpmdb CPU" partly GPU */
	const char *pragma = gpu ? "PRAGMA backend=gpu" : "PRAGMA backend=cpu";
	if (gpmdb_exec(*db, pragma, NULL, NULL, NULL) != GPMDB_OK) {
		snprintf(err, len, "%s: %s", pragma, gpmdb_errmsg(*db));
		gpmdb_close(*db);
		*db = NULL;
		return -1;
	}
	return 0;
}

/* gpmdb_exec callback: appends each EXPLAIN line (all columns) to a
 * string. */
typedef struct {
	char buf[8192];
	size_t len;
} bt_text;

static int bt_collect(void *arg, int n, char **vals, char **names)
{
	bt_text *t = arg;
	(void)names;
	for (int i = 0; i < n; i++)
		if (t->len + 2 < sizeof(t->buf))
			t->len += (size_t)snprintf(
			    t->buf + t->len, sizeof(t->buf) - t->len, "%s%s",
			    vals[i] ? vals[i] : "", i + 1 < n ? " " : "\n");
	return 0;
}

/* Does this GPU build on this machine run operators on the GPU?  why gets
 * EXPLAIN's reason when not. */
static bool gpm_gpu_works(char *why, size_t len)
{
	gpmdb *db = NULL;
	bt_text t = {.len = 0};
	char err[600];

	t.buf[0] = 0;
	if (gpm_open(&db, true, err, sizeof(err))) {
		snprintf(why, len, "%s", err);
		return false;
	}
	int rc = gpmdb_exec(db,
			    "EXPLAIN SELECT sum(l_quantity) FROM lineitem "
			    "WHERE l_quantity > 1",
			    bt_collect, &t, NULL);
	if (rc != GPMDB_OK)
		snprintf(why, len, "EXPLAIN: %s", gpmdb_errmsg(db));
	gpmdb_close(db);
	if (rc != GPMDB_OK)
		return false;
	for (const char *l = t.buf; *l;
	     l += strcspn(l, "\n") + (l[strcspn(l, "\n")] != 0))
		if (bench_explain_backend(l, NULL) == 'g')
			return true;
	/* the reason, from "no GPU" to the end of its line, without the
	 * parenthesis that closes it on EXPLAIN's "backend: cpu (...)" */
	const char *r = strstr(t.buf, "no GPU");
	int n = (int)strcspn(r ? r : t.buf, "\n");
	if (r && n > 0 && r[n - 1] == ')')
		n--;
	snprintf(why, len, "%.*s", n, r ? r : t.buf);
	return false;
}

/* PRAGMA gpu_stats' value of name; -1 when there is none. */
static long long gpm_stat(gpmdb *db, const char *name)
{
	gpmdb_stmt *st = NULL;
	long long v = -1;

	if (gpmdb_prepare(db, "PRAGMA gpu_stats", -1, &st, NULL) != GPMDB_OK ||
	    !st)
		return -1;
	while (gpmdb_step(st) == GPMDB_ROW) {
		const char *n = (const char *)gpmdb_column_text(st, 0);
		if (n && !strcmp(n, name))
			v = gpmdb_column_int64(st, 1);
	}
	gpmdb_finalize(st);
	return v;
}

/* Skips blanks and -- comments. */
static const char *bt_skip(const char *p)
{
	for (;;) {
		while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
			p++;
		if (p[0] == '-' && p[1] == '-') {
			p += strcspn(p, "\n");
			continue;
		}
		return p;
	}
}

/* Splits sql into statements at ';' outside quotes: malloc'd copies in
 * out (at most max), returns the count. */
static int bt_split(const char *sql, char **out, int max)
{
	int n = 0;
	const char *p = bt_skip(sql);

	while (*p && n < max) {
		const char *s = p;
		bool quote = false;
		for (; *p && (quote || *p != ';'); p++) {
			if (*p == '\'')
				quote = !quote;
			else if (!quote && p[0] == '-' && p[1] == '-')
				p += strcspn(p, "\n") - 1;
		}
		if (!(out[n] = strndup(s, (size_t)(p - s))))
			bt_die("%s%s", "out of memory", "");
		n++;
		if (*p == ';')
			p++;
		p = bt_skip(p);
	}
	return n;
}

/* A statement that returns the query's rows (the others are Q15's
 * CREATE VIEW / DROP VIEW). */
static bool bt_is_select(const char *s)
{
	s = bt_skip(s);
	return !strncasecmp(s, "select", 6) || !strncasecmp(s, "with", 4);
}

/* After the runs on the GPU backend: the cold run's CPU fallbacks and the
 * operators EXPLAIN puts on the CPU (no GPU version yet), e.g. "0
 * fallbacks; CPU: 3 JOIN, 1 SORT". */
static void gpm_gpu_report(gpmdb *db, int q, long long fallbacks, bt_cell *c)
{
	char *st[8];
	int n = bt_split(bt_sql[q], st, 8);
	bt_text t = {.len = 0};
	static const char *kinds[] = {"JOIN",	  "AGGREGATE", "SORT",
				      "DISTINCT", "LIMIT",     "SET OPERATION",
				      "FILTER",	  "PROJECT",   "VALUES"};
	int counts[9] = {0}, other = 0;

	t.buf[0] = 0;
	for (int i = 0; i < n; i++) {
		if (bt_is_select(st[i])) {
			size_t l = strlen(st[i]) + 16;
			char *ex = malloc(l);
			if (ex) {
				snprintf(ex, l, "EXPLAIN %s", st[i]);
				if (gpmdb_exec(db, ex, bt_collect, &t, NULL) !=
				    GPMDB_OK)
					t.len += (size_t)snprintf(
					    t.buf + t.len,
					    sizeof(t.buf) - t.len,
					    "EXPLAIN failed\n");
				free(ex);
			}
		} else if (gpmdb_exec(db, st[i], NULL, NULL, NULL) != GPMDB_OK)
			fprintf(stderr, "bench_tpch: q%d: %s\n", q,
				gpmdb_errmsg(db));
		free(st[i]);
	}
	/* count the EXPLAIN lines on the CPU, by operator */
	for (char *line = t.buf; *line;) {
		char *end = strchr(line, '\n');
		if (end)
			*end = 0;
		size_t tl = 0;
		if (bench_explain_backend(line, &tl) == 'c') {
			/* the operator is in the first words of the line
			 * ("HASH INNER JOIN ON", "SORT BY") */
			char head[40];
			const char *h = line + strspn(line, " ");
			snprintf(head, sizeof(head), "%.*s",
				 (int)(tl - (size_t)(h - line)), h);
			int k;
			for (k = 0; k < 9; k++)
				if (strstr(head, kinds[k]))
					break;
			if (k < 9)
				counts[k]++;
			else if (strncmp(head, "SCAN", 4) &&
				 strncmp(head, "ONE ROW", 7))
				other++; /* scans feed the GPU's operators */
		}
		if (!end)
			break;
		line = end + 1;
	}
	size_t at = (size_t)snprintf(c->gpu, sizeof(c->gpu),
				     fallbacks < 0    ? "? fallbacks"
				     : fallbacks == 0 ? "no fallback"
				     : fallbacks == 1 ? "**%lld fallback**"
						      : "**%lld fallbacks**",
				     fallbacks);
	bool any = false;
	for (int k = 0; k < 9 && at < sizeof(c->gpu); k++)
		if (counts[k]) {
			at += (size_t)snprintf(
			    c->gpu + at, sizeof(c->gpu) - at, "%s%d %s",
			    any ? ", " : "; CPU: ", counts[k], kinds[k]);
			any = true;
		}
	if (other && at < sizeof(c->gpu))
		snprintf(c->gpu + at, sizeof(c->gpu) - at, "%s%d other",
			 any ? ", " : "; CPU: ", other);
}

/* ---- DuckDB ---------------------------------------------------------- */

static int duck_open(duckdl_database *db, duckdl_connection *con, char *err,
		     size_t len)
{
	return duckdl_open(&bt_dl, bt_duck, 0, db, con, err, len);
}

static int duck_load(bt_engine *e)
{
	duckdl_database db;
	duckdl_connection con;
	char sql[2048], path[512];
	struct stat sb;

	unlink(bt_duck);
	snprintf(sql, sizeof(sql), "%s.wal", bt_duck);
	unlink(sql);
	double t0 = bt_now();
	if (duck_open(&db, &con, e->why, sizeof(e->why)))
		return -1;
	for (int t = 0; t < TPCH_NTABLES && !e->why[0]; t++) {
		const char *name = tpch_table_name((tpch_table)t);
		if (bt_tbl_path(t, path, sizeof(path))) {
			snprintf(e->why, sizeof(e->why), "no %s/%s.tbl",
				 bt_opt.data, name);
			break;
		}
		/* COPY takes the trailing '|' of dbgen's lines (and lines
		 * without one); no quoting in .tbl text. */
		if (duckdl_exec(&bt_dl, con, tpch_table_sql((tpch_table)t),
				e->why, sizeof(e->why)))
			break;
		snprintf(sql, sizeof(sql),
			 "COPY %s FROM '%s' (DELIMITER '|', HEADER false, "
			 "QUOTE '', ESCAPE '')",
			 name, path);
		duckdl_exec(&bt_dl, con, sql, e->why, sizeof(e->why));
	}
	if (!e->why[0])
		duckdl_exec(&bt_dl, con, "CHECKPOINT", e->why, sizeof(e->why));
	duckdl_close(&bt_dl, &db, &con);
	if (e->why[0])
		return -1;
	e->load_s = bt_now() - t0;
	if (stat(bt_duck, &sb) == 0)
		snprintf(e->note, sizeof(e->note),
			 "database file %.0f MiB in %s, DuckDB %s, %d threads",
			 (double)sb.st_size / 1048576.0, bt_opt.dir,
			 bt_dl.library_version(),
			 (int)sysconf(_SC_NPROCESSORS_ONLN));
	return 0;
}

/* duckdb_type values: integers, floating/decimal, the rest read as text
 * (VARCHAR, DATE). */
static char duck_kind(int t)
{
	if ((t >= 1 && t <= 9) || t == 16 || t == 32)
		return 'I';
	if (t == 10 || t == DUCKDL_TYPE_DOUBLE || t == DUCKDL_TYPE_DECIMAL)
		return 'F';
	return 'T';
}

static int duck_run(duckdl_connection con, const char *sql, tpchq_res *r)
{
	char *st[8];
	int n = bt_split(sql, st, 8), rc = 0;
	double t0 = bt_now();

	for (int s = 0; s < n; s++) {
		duckdl_result res;
		if (rc) {
			free(st[s]);
			continue;
		}
		if (bt_dl.query(con, st[s], &res) != DUCKDL_OK) {
			const char *m = bt_dl.result_error(&res);
			snprintf(r->err, sizeof(r->err), "%s",
				 m ? m : "query failed");
			bt_dl.destroy_result(&res);
			rc = -1;
			free(st[s]);
			continue;
		}
		if (bt_is_select(st[s])) {
			int nc = (int)bt_dl.column_count(&res);
			duckdl_idx nrows = bt_dl.row_count(&res);
			r->nselects++;
			r->ncols = nc;
			for (duckdl_idx i = 0; i < nrows && !rc; i++) {
				tpchq_val *row = tpchq_add_row(r);
				if (!row) {
					snprintf(r->err, sizeof(r->err),
						 "out of memory");
					rc = -1;
					break;
				}
				for (int c = 0; c < nc; c++) {
					tpchq_val *v = &row[c];
					if (bt_dl.value_is_null(&res, c, i)) {
						v->type = 'N';
						v->text = strdup("");
					} else {
						char *t = bt_dl.value_varchar(
						    &res, c, i);
						v->type = duck_kind(
						    bt_dl.column_type(&res, c));
						v->text = strdup(t ? t : "");
						bt_dl.free(t);
						v->i = bt_dl.value_int64(&res,
									 c, i);
						v->d = v->type == 'F'
							   ? bt_dl.value_double(
								 &res, c, i)
							   : (double)v->i;
					}
					if (!v->text) {
						snprintf(r->err, sizeof(r->err),
							 "out of memory");
						rc = -1;
						break;
					}
				}
			}
		}
		bt_dl.destroy_result(&res);
		free(st[s]);
	}
	r->ms = (bt_now() - t0) * 1e3;
	return rc;
}

/* ---- SQLite ---------------------------------------------------------- */

/* Splits a .tbl line into nc fields (a trailing '|' allowed). */
static int lite_split(char *line, int nc, const char **f, int *len)
{
	char *p = line;

	for (int c = 0; c < nc; c++) {
		char *bar = strchr(p, '|');
		if (!bar && c < nc - 1)
			return -1;
		f[c] = p;
		len[c] = bar ? (int)(bar - p) : (int)strlen(p);
		p += len[c] + (bar ? 1 : 0);
	}
	return *p ? -1 : 0;
}

static int lite_exec(sqlite3 *db, const char *sql, char *why, size_t len)
{
	char *err = NULL;

	if (sqlite3_exec(db, sql, NULL, NULL, &err) == SQLITE_OK)
		return 0;
	snprintf(why, len, "%s: %s", sql, err ? err : sqlite3_errmsg(db));
	sqlite3_free(err);
	return -1;
}

static int lite_load_table(sqlite3 *db, int t, char *why, size_t wlen)
{
	char path[512], sql[512], line[8192];
	const char *f[TPCH_MAX_COLS];
	int flen[TPCH_MAX_COLS], nc = tpch_table_ncols((tpch_table)t), rc = 0;
	sqlite3_stmt *st = NULL;
	gzFile gz;
	long lineno = 0;

	if (bt_tbl_path(t, path, sizeof(path))) {
		snprintf(why, wlen, "no %s/%s.tbl", bt_opt.data,
			 tpch_table_name((tpch_table)t));
		return -1;
	}
	int n = snprintf(sql, sizeof(sql), "INSERT INTO %s VALUES (",
			 tpch_table_name((tpch_table)t));
	for (int c = 0; c < nc; c++)
		n += snprintf(sql + n, sizeof(sql) - (size_t)n, "%s?",
			      c ? ", " : "");
	snprintf(sql + n, sizeof(sql) - (size_t)n, ")");
	if (lite_exec(db, tpch_table_sql((tpch_table)t), why, wlen) ||
	    lite_exec(db, "BEGIN", why, wlen))
		return -1;
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
		snprintf(why, wlen, "%s: %s", sql, sqlite3_errmsg(db));
		return -1;
	}
	if (!(gz = gzopen(path, "rb"))) {
		snprintf(why, wlen, "%s: %s", path, strerror(errno));
		sqlite3_finalize(st);
		return -1;
	}
	gzbuffer(gz, 1 << 20);
	while (!rc && gzgets(gz, line, sizeof(line))) {
		size_t len = strlen(line);
		lineno++;
		while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
			line[--len] = 0;
		if (!len)
			continue;
		if (lite_split(line, nc, f, flen)) {
			snprintf(why, wlen, "%s:%ld: bad line", path, lineno);
			rc = -1;
			break;
		}
		for (int c = 0; c < nc; c++)
			sqlite3_bind_text(st, c + 1, f[c], flen[c],
					  SQLITE_STATIC);
		if (sqlite3_step(st) != SQLITE_DONE) {
			snprintf(why, wlen, "%s:%ld: %s", path, lineno,
				 sqlite3_errmsg(db));
			rc = -1;
		}
		sqlite3_reset(st);
	}
	gzclose(gz);
	sqlite3_finalize(st);
	if (!rc)
		rc = lite_exec(db, "COMMIT", why, wlen);
	return rc;
}

static int lite_open(sqlite3 **db, char *err, size_t len)
{
	if (sqlite3_open_v2(bt_lite, db, SQLITE_OPEN_READWRITE, NULL) !=
	    SQLITE_OK) {
		snprintf(err, len, "open %s: %s", bt_lite,
			 *db ? sqlite3_errmsg(*db) : "failed");
		sqlite3_close(*db);
		*db = NULL;
		return -1;
	}
	/* a page cache that holds the whole database (2 GiB) */
	if (lite_exec(*db,
		      "PRAGMA cache_size=-2097152; PRAGMA temp_store=MEMORY",
		      err, len)) {
		sqlite3_close(*db);
		*db = NULL;
		return -1;
	}
	sqlite3_progress_handler(*db, 100000, bt_progress, NULL);
	return 0;
}

static int lite_load(bt_engine *e)
{
	sqlite3 *db = NULL;
	struct stat sb;

	unlink(bt_lite);
	double t0 = bt_now();
	if (sqlite3_open(bt_lite, &db) != SQLITE_OK) {
		snprintf(e->why, sizeof(e->why), "open %s: %s", bt_lite,
			 db ? sqlite3_errmsg(db) : "failed");
		sqlite3_close(db);
		return -1;
	}
	int rc = lite_exec(db,
			   "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; "
			   "PRAGMA cache_size=-2097152",
			   e->why, sizeof(e->why));
	for (int t = 0; t < TPCH_NTABLES && !rc; t++)
		rc = lite_load_table(db, t, e->why, sizeof(e->why));
	/* The test's indexes (tests/tpch/test_tpch_queries.c). */
	if (!rc)
		rc = lite_exec(
		    db,
		    "CREATE INDEX l_ok ON lineitem(l_orderkey);"
		    "CREATE INDEX l_ps ON lineitem(l_partkey, l_suppkey);"
		    "CREATE INDEX o_ok ON orders(o_orderkey);"
		    "CREATE INDEX o_ck ON orders(o_custkey);"
		    "CREATE INDEX p_pk ON part(p_partkey);"
		    "CREATE INDEX ps_ps ON partsupp(ps_partkey, ps_suppkey);"
		    "CREATE INDEX s_sk ON supplier(s_suppkey);"
		    "CREATE INDEX c_ck ON customer(c_custkey);"
		    "CREATE INDEX n_nk ON nation(n_nationkey);"
		    "CREATE INDEX r_rk ON region(r_regionkey);"
		    "ANALYZE;",
		    e->why, sizeof(e->why));
	if (sqlite3_close(db) != SQLITE_OK && !rc) {
		snprintf(e->why, sizeof(e->why), "close %s failed", bt_lite);
		rc = -1;
	}
	if (rc)
		return -1;
	e->load_s = bt_now() - t0;
	if (stat(bt_lite, &sb) == 0)
		snprintf(e->note, sizeof(e->note),
			 "database file %.0f MiB in %s, indexes on the join "
			 "keys included, SQLite %s",
			 (double)sb.st_size / 1048576.0, bt_opt.dir,
			 sqlite3_libversion());
	return 0;
}

/* ---- running the queries --------------------------------------------- */

/* One engine's open database. */
typedef struct {
	gpmdb *g;
	sqlite3 *s;
	duckdl_database ddb;
	duckdl_connection dcon;
} bt_conn;

static int bt_open(int e, bt_conn *c, char *err, size_t len)
{
	memset(c, 0, sizeof(*c));
	switch (e) {
	case E_CPU:
	case E_GPU:
		return gpm_open(&c->g, e == E_GPU, err, len);
	case E_DUCK:
		return duck_open(&c->ddb, &c->dcon, err, len);
	default:
		return lite_open(&c->s, err, len);
	}
}

static void bt_close(int e, bt_conn *c)
{
	if (e == E_CPU || e == E_GPU) {
		if (c->g && gpmdb_close(c->g) != GPMDB_OK)
			fprintf(stderr, "bench_tpch: gpmdb_close failed\n");
	} else if (e == E_DUCK) {
		duckdl_close(&bt_dl, &c->ddb, &c->dcon);
	} else if (c->s && sqlite3_close(c->s) != SQLITE_OK) {
		fprintf(stderr, "bench_tpch: sqlite3_close failed\n");
	}
	memset(c, 0, sizeof(*c));
}

/* One run of query q; the rows replace r's. */
static int bt_run(int e, bt_conn *c, int q, char *lite_sql, tpchq_res *r)
{
	tpchq_res_free(r);
	bt_deadline = bt_now() + bt_opt.timeout;
	switch (e) {
	case E_CPU:
	case E_GPU:
		return tpchq_run_gpmdb(c->g, bt_sql[q], r);
	case E_DUCK:
		return duck_run(c->dcon, bt_sql[q], r);
	default:
		return tpchq_run_sqlite(c->s, lite_sql, r);
	}
}

static void bt_partial(void);

/* ---- memory: the heap's peak during a query ---------------------------- */

/* A thread samples the process's anonymous resident memory (RssAnon:
 * the heap, not the pool's mapped pages or the databases' files) every
 * 2 ms while a query runs; its peak less the value before the query is
 * the query's working memory (DuckDB's buffer pool counts there). */
static long bt_anon_kb(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long kb = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "RssAnon:", 8)) {
			kb = strtol(line + 8, NULL, 10);
			break;
		}
	fclose(f);
	return kb;
}

static pthread_mutex_t bt_mem_lock = PTHREAD_MUTEX_INITIALIZER;
static long bt_mem_peak = -1; /* < 0: not sampling */

static void *bt_mem_thread(void *arg)
{
	struct timespec ts = {0, 2000000};

	(void)arg;
	for (;;) {
		long kb = bt_anon_kb();
		pthread_mutex_lock(&bt_mem_lock);
		if (bt_mem_peak >= 0 && kb > bt_mem_peak)
			bt_mem_peak = kb;
		pthread_mutex_unlock(&bt_mem_lock);
		nanosleep(&ts, NULL);
	}
	return NULL;
}

static long bt_mem_start(void)
{
	long kb;

	/* free memory the previous query left in the allocator goes back to
	 * the system, so that this query's growth shows */
	malloc_trim(0);
	kb = bt_anon_kb();

	pthread_mutex_lock(&bt_mem_lock);
	bt_mem_peak = kb < 0 ? 0 : kb;
	pthread_mutex_unlock(&bt_mem_lock);
	return kb;
}

static double bt_mem_stop(long base)
{
	long kb = bt_anon_kb(), peak;

	pthread_mutex_lock(&bt_mem_lock);
	peak = bt_mem_peak > kb ? bt_mem_peak : kb;
	bt_mem_peak = -1;
	pthread_mutex_unlock(&bt_mem_lock);
	return base < 0 || peak < base ? 0 : (double)(peak - base) / 1024;
}

/*
 * --fresh: query q once more as the first statement of a new process
 * (this program again, `--fresh-child E:Q:PATH`): the user's shell or
 * short-lived program.  Its wall time, fork to exit, covers exec, the
 * libraries' loading, the open (gpmdb: CUDA's setup; DuckDB: its file's
 * catalog), the query and the close; the child reports the open and the
 * query apart.  Issue 17's cold measure.
 */
static int bt_watched_status; /* bt_fresh_watch reaped the child */
static void bt_fresh_watch(int q, pid_t pid, int fd, char *out, size_t cap,
			   size_t *got);

static void bt_fresh(int e, int q, const char *path)
{
	bt_cell *cell = &bt_eng[e].q[q];
	char spec[700], out[512] = "";
	char **av = calloc((size_t)bt_argc + 3, sizeof(char *));
	int pfd[2], st = 0;
	size_t got = 0;
	ssize_t k;
	double t0;
	pid_t pid;

	if (!av || pipe(pfd)) {
		free(av);
		return;
	}
	snprintf(spec, sizeof(spec), "%d:%d:%s", e, q, path);
	for (int i = 0; i < bt_argc; i++)
		av[i] = bt_argv[i];
	av[bt_argc] = (char *)"--fresh-child";
	av[bt_argc + 1] = spec;
	fflush(stdout);
	fflush(stderr);
	t0 = bt_now();
	{
		char t0s[64];
		snprintf(t0s, sizeof(t0s), "%.9f", t0);
		setenv("BT_FORK_T0", t0s, 1);
	}
	pid = fork();
	if (pid == 0) {
		dup2(pfd[1], 1);
		close(pfd[0]);
		close(pfd[1]);
		execv("/proc/self/exe", av);
		_exit(127);
	}
	close(pfd[1]);
	bt_watched_status = -1;
	if (pid > 0 && getenv("BT_FRESH_STATS"))
		bt_fresh_watch(q, pid, pfd[0], out, sizeof(out), &got);
	while (pid > 0 && got < sizeof(out) - 1 &&
	       (k = read(pfd[0], out + got, sizeof(out) - 1 - got)) > 0)
		got += (size_t)k;
	out[got] = 0;
	close(pfd[0]);
	if (pid > 0 && bt_watched_status != -1)
		st = bt_watched_status;
	else if (pid > 0)
		waitpid(pid, &st, 0);
	cell->fresh_ms = (bt_now() - t0) * 1e3;
	free(av);
	double pre = 0, done = 0;
	cell->fresh_ok =
	    pid > 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0 &&
	    sscanf(out, "FRESH %lf %lf %lf %lf", &cell->fresh_open_ms,
		   &cell->fresh_query_ms, &pre, &done) >= 2;
	/* pre: fork to the child's main; done: fork to its close's end (the
	 * rest is the exit) */
	fprintf(stderr,
		"bench_tpch: %-9s q%-2d fresh process %9.1f ms%s (to main "
		"%.1f, after close %.1f)\n",
		bt_names[e], q, cell->fresh_ms,
		cell->fresh_ok ? "" : " (failed)", pre,
		done > 0 ? cell->fresh_ms - done : 0);
}

/* BT_FRESH_STATS=1: where a fresh child's GPU query spent its time
 * (PRAGMA gpu_stats' times and upload counters), one line on stderr. */
static void bt_fresh_stats(gpmdb *db, int q)
{
	static const char *keep[] = {"init_us",
				     "init_prestart_us",
				     "init_wait_us",
				     "gpu_time_us",
				     "cache_load_us",
				     "cache_measure_us",
				     "cache_pack_us",
				     "cache_expand_us",
				     "cache_register_us",
				     "cache_uploaded_bytes",
				     "cache_upload_direct_bytes",
				     "cache_upload_staged_bytes",
				     "cache_decode_host_tablets",
				     "cache_decode_device_tablets",
				     "cache_ztext_blocks",
				     "prefetch_bytes",
				     "prefetch_us",
				     "cpu_fallbacks"};
	gpmdb_stmt *st = NULL;
	char line[2048];
	size_t at = 0;

	if (gpmdb_prepare(db, "PRAGMA gpu_stats", -1, &st, NULL) != GPMDB_OK ||
	    !st)
		return;
	at += (size_t)snprintf(line, sizeof(line), "FRESHSTATS q%d", q);
	while (gpmdb_step(st) == GPMDB_ROW && at < sizeof(line) - 80) {
		const char *n = (const char *)gpmdb_column_text(st, 0);
		for (size_t i = 0; n && i < sizeof(keep) / sizeof(keep[0]); i++)
			if (!strcmp(n, keep[i]))
				at += (size_t)snprintf(
				    line + at, sizeof(line) - at, " %s=%lld", n,
				    gpmdb_column_int64(st, 1));
	}
	gpmdb_finalize(st);
	fprintf(stderr, "%s\n", line);
}

/* " name:state:wchan" of each thread of process pid ("self" or a
 * number), appended to line[*at..cap). */
static void bt_threads_of(const char *pid, char *line, size_t cap, size_t *at)
{
	char dir[64];
	DIR *d;
	struct dirent *de;

	snprintf(dir, sizeof(dir), "/proc/%s/task", pid);
	if (!(d = opendir(dir)))
		return;
	while ((de = readdir(d)) && *at + 200 < cap) {
		char f[400], comm[64] = "?", wchan[64] = "?", st[512] = "";
		char state = '?';
		FILE *fp;

		if (de->d_name[0] == '.')
			continue;
		snprintf(f, sizeof(f), "%s/%s/comm", dir, de->d_name);
		if ((fp = fopen(f, "r"))) {
			if (fgets(comm, sizeof(comm), fp))
				comm[strcspn(comm, "\n")] = 0;
			fclose(fp);
		}
		snprintf(f, sizeof(f), "%s/%s/stat", dir, de->d_name);
		if ((fp = fopen(f, "r"))) {
			/* the state follows the command's closing parenthesis
			 */
			if (fgets(st, sizeof(st), fp)) {
				char *r = strrchr(st, ')');
				if (r && r[1] == ' ')
					state = r[2];
			}
			fclose(fp);
		}
		snprintf(f, sizeof(f), "%s/%s/wchan", dir, de->d_name);
		if ((fp = fopen(f, "r"))) {
			if (!fgets(wchan, sizeof(wchan), fp))
				snprintf(wchan, sizeof(wchan), "?");
			fclose(fp);
		}
		*at += (size_t)snprintf(line + *at, cap - *at, " %s:%c:%s",
					comm, state, wchan);
	}
	closedir(d);
}

/* BT_FRESH_STATS=1: the threads a fresh child has as it exits (name,
 * state, kernel wait channel), one line on stderr: an exit that still
 * takes tens of milliseconds after gpmdb's handoff waits for one of them
 * (tpc/results/tpch-sf10-fresh-2026-11-27c-H100-H200.md). */
static void bt_fresh_threads(int q)
{
	char line[4096];
	size_t at = 0;

	at += (size_t)snprintf(line, sizeof(line), "FRESHTHREADS q%d", q);
	bt_threads_of("self", line, sizeof(line), &at);
	fprintf(stderr, "%s\n", line);
}

/* BT_FRESH_STATS=1, in the parent: from the child's FRESH line (its
 * close done) to its reaping, its threads every millisecond; each
 * change is printed with its time (FRESHEXIT): what an exit that takes
 * tens of milliseconds waits for.  Returns with the pipe at its end. */
static void bt_fresh_watch(int q, pid_t pid, int fd, char *out, size_t cap,
			   size_t *got)
{
	char prev[4096] = "", cur[4096], ps[32];
	double t_line = 0, t_eof = 0, t0 = bt_now();
	bool eof = false;
	int changes = 0;

	snprintf(ps, sizeof(ps), "%d", (int)pid);
	for (;;) {
		struct pollfd pf = {fd, POLLIN, 0};
		int st = 0;

		if (!eof && poll(&pf, 1, t_line > 0 ? 1 : 100) > 0) {
			ssize_t k = read(fd, out + *got, cap - 1 - *got);
			if (k <= 0) {
				eof = true;
				t_eof = bt_now();
			} else {
				*got += (size_t)k;
				out[*got] = 0;
				if (t_line == 0 && strchr(out, '\n'))
					t_line = bt_now();
			}
		}
		if (t_line > 0 || eof) {
			size_t at = 0;
			bt_threads_of(ps, cur, sizeof(cur), &at);
			if (strcmp(cur, prev) && changes++ < 24) {
				fprintf(
				    stderr, "FRESHEXIT q%d +%.1f ms%s\n", q,
				    (bt_now() - (t_line > 0 ? t_line : t0)) *
					1e3,
				    at ? cur : " (no threads)");
				snprintf(prev, sizeof(prev), "%s", cur);
			}
		}
		if (eof && waitpid(pid, &st, WNOHANG) == pid) {
			double t = bt_now();
			fprintf(stderr,
				"FRESHEXIT q%d line to end of pipe %.1f ms, "
				"to reaped %.1f ms\n",
				q, t_line > 0 ? (t_eof - t_line) * 1e3 : -1,
				t_line > 0 ? (t - t_line) * 1e3 : -1);
			/* bt_fresh's waitpid finds it reaped: put it back */
			bt_watched_status = st;
			return;
		}
		if (eof)
			usleep(200);
	}
}

/* The child of bt_fresh: opens PATH, runs the query once, prints
 * "FRESH open_ms query_ms" and exits (exit(), not the parent's cleanup). */
static void bt_fresh_child(void)
{
	char path[600] = "", err[1024] = "";
	int e = -1, q = 0, rc;
	bt_conn c;
	tpchq_res r;
	double t0, t1, t2;

	if (sscanf(bt_opt.child, "%d:%d:%599[^\n]", &e, &q, path) != 3 ||
	    e < 0 || e > E_DUCK || q < 1 || q > TPCHQ_N || !bt_sql[q])
		_exit(2);
	if (e == E_DUCK) {
		snprintf(bt_duck, sizeof(bt_duck), "%s", path);
		if (duckdl_load(&bt_dl, NULL, err, sizeof(err)))
			_exit(3);
	} else {
		snprintf(bt_pool, sizeof(bt_pool), "%s", path);
	}
	memset(&r, 0, sizeof(r));
	t0 = bt_now();
	if (bt_open(e, &c, err, sizeof(err))) {
		fprintf(stderr, "bench_tpch: fresh child: %s\n", err);
		_exit(4);
	}
	t1 = bt_now();
	bt_deadline = t1 + bt_opt.timeout;
	rc = bt_run(e, &c, q, NULL, &r);
	t2 = bt_now();
	if (!rc && e == E_GPU && getenv("BT_FRESH_STATS"))
		bt_fresh_stats(c.g, q);
	bt_close(e, &c);
	if (getenv("BT_FRESH_STATS"))
		bt_fresh_threads(q);
	double t3 = bt_now();
	if (rc) {
		fprintf(stderr, "bench_tpch: fresh child: %s\n", r.err);
		_exit(5);
	}
	const char *f0 = getenv("BT_FORK_T0");
	double tf = f0 ? atof(f0) : 0;
	printf("FRESH %.3f %.3f %.3f %.3f\n", (t1 - t0) * 1e3, (t2 - t1) * 1e3,
	       tf > 0 ? (bt_main_t - tf) * 1e3 : 0,
	       tf > 0 ? (t3 - tf) * 1e3 : 0);
	fflush(stdout);
	/* as a program ends: the libraries' exit handlers run (gpmdb's hands
	 * the GPU driver's teardown to a holder, gpu/exit_handoff.c) */
	exit(0);
}

static void bt_query(int e, int q)
{
	bt_cell *cell = &bt_eng[e].q[q];
	char *lite = NULL;
	bt_conn c;
	long long fb0 = -1;

	cell->ran = true;
	if (e == E_LITE && !(lite = tpchq_sqlite_dialect(q, bt_sql[q]))) {
		snprintf(cell->err, sizeof(cell->err),
			 "cannot rewrite for SQLite");
		return;
	}
	long mem0 = bt_mem_start();
	if (bt_open(e, &c, cell->err, sizeof(cell->err))) {
		bt_mem_stop(mem0);
		free(lite);
		return;
	}
	if (e == E_GPU)
		fb0 = gpm_stat(c.g, "cpu_fallbacks");
	int rc = bt_run(e, &c, q, lite, &cell->res);
	cell->cold_ms = cell->res.ms;
	if (!rc && e == E_GPU) {
		long long fb1 = gpm_stat(c.g, "cpu_fallbacks");
		fb0 = fb0 < 0 || fb1 < 0 ? -1 : fb1 - fb0;
	}
	double spent = 0;
	for (int k = 0; k < bt_opt.reps && !rc; k++) {
		if (k > 0 && spent > bt_opt.warm_budget)
			break;
		rc = bt_run(e, &c, q, lite, &cell->res);
		if (!rc) {
			if (!cell->nwarm || cell->res.ms < cell->warm_ms)
				cell->warm_ms = cell->res.ms;
			cell->nwarm++;
			spent += cell->res.ms / 1e3;
		}
	}
	if (rc) {
		/* not snprintf: gcc takes the two fields for overlapping */
		size_t l = strnlen(cell->res.err, sizeof(cell->err) - 1);
		memmove(cell->err, cell->res.err, l);
		cell->err[l] = 0;
		cell->timeout = bt_opt.timeout > 0 && bt_now() > bt_deadline;
	} else {
		cell->ok = true;
	}
	cell->heap_mb = bt_mem_stop(mem0);
	if (!rc && e == E_GPU)
		gpm_gpu_report(c.g, q, fb0, cell);
	bt_close(e, &c);
	free(lite);
	fprintf(stderr,
		"bench_tpch: %-9s q%-2d cold %9.1f ms  warm %9.1f ms%s%s\n",
		bt_names[e], q, cell->cold_ms, cell->warm_ms,
		rc ? "  FAILED: " : "", rc ? cell->err : "");
	bt_partial();
}

/* ---- the report -------------------------------------------------------- */

static void bt_report(FILE *o, bool final, int *status);

/* --partial FILE: the report so far, after every query, so that a run cut
 * short (a machine's command limit) leaves its table (written to FILE.tmp,
 * then renamed: FILE is always whole). */
static void bt_partial(void)
{
	char tmp[4200];
	int st = 0;
	FILE *f;

	if (!bt_opt.partial)
		return;
	snprintf(tmp, sizeof(tmp), "%s.tmp", bt_opt.partial);
	if (!(f = fopen(tmp, "w"))) {
		fprintf(stderr, "bench_tpch: %s: %s\n", tmp, strerror(errno));
		return;
	}
	fprintf(f, "(partial: written after each query; the run goes on)\n\n");
	bt_report(f, false, &st);
	if (fclose(f) || rename(tmp, bt_opt.partial))
		fprintf(stderr, "bench_tpch: %s: %s\n", bt_opt.partial,
			strerror(errno));
}

/* A time in ms: 3 significant digits or so. */
static void bt_fmt_ms(char *out, size_t len, double ms)
{
	if (ms < 10)
		snprintf(out, len, "%.2f", ms);
	else if (ms < 100)
		snprintf(out, len, "%.1f", ms);
	else
		snprintf(out, len, "%.0f", ms);
}

static const char *bt_state_text(int e)
{
	switch (bt_eng[e].state) {
	case ST_NOT_RUN:
		return "not run";
	case ST_NOT_INSTALLED:
		return "not installed";
	case ST_NO_GPU:
		return "n/a (no GPU)";
	case ST_SF:
		return "not run (SF > 1)";
	case ST_FAILED:
		return "**FAILED**";
	default:
		return "";
	}
}

static void bt_cell_text(int e, int q, bool warm, char *out, size_t len)
{
	const bt_cell *c = &bt_eng[e].q[q];

	if (bt_eng[e].state != ST_RUN) {
		snprintf(out, len, "%s", bt_state_text(e));
		return;
	}
	if (!c->ran) {
		snprintf(out, len, "-");
		return;
	}
	if (!c->ok) {
		if (c->timeout)
			snprintf(out, len, "timeout (>%.0f s)", bt_opt.timeout);
		else
			snprintf(out, len, "**FAILED**");
		return;
	}
	bt_fmt_ms(out, len, warm ? c->warm_ms : c->cold_ms);
	if (warm && c->nwarm < bt_opt.reps)
		snprintf(out + strlen(out), len - strlen(out), " (%d run%s)",
			 c->nwarm, c->nwarm == 1 ? "" : "s");
}

/* Geometric mean of the engine's times over the queries run; *n gets how
 * many had a time. */
static double bt_geomean(int e, bool warm, int *n)
{
	double s = 0;

	*n = 0;
	for (int q = 1; q <= TPCHQ_N; q++) {
		const bt_cell *c = &bt_eng[e].q[q];
		if (!c->ok)
			continue;
		double ms = warm ? c->warm_ms : c->cold_ms;
		s += log(ms > 1e-3 ? ms : 1e-3);
		(*n)++;
	}
	return *n ? exp(s / *n) : 0;
}

/* --fresh: each query as the first statement of a new process (bt_fresh),
 * per engine, with the geometric means over the queries every fresh
 * engine ran (so that they compare). */
static void bt_fresh_report(FILE *o)
{
	double s[E_N][3] = {{0}};
	int n = 0, any = 0;
	char a[32], b[32], c[32];

	for (int e = 0; e < E_N; e++)
		for (int q = 1; q <= TPCHQ_N; q++)
			any |= bt_eng[e].q[q].fresh_ok;
	if (!any)
		return;
	fprintf(o, "\n## Fresh processes (ms; each query as the first "
		   "statement of a new process: wall from fork to exit, "
		   "then the open and the query inside it)\n\n| query |");
	for (int e = 0; e < E_N; e++)
		if (bt_eng[e].state == ST_RUN)
			fprintf(o, " %s wall | open | query |", bt_names[e]);
	fprintf(o, "\n| --- |");
	for (int e = 0; e < E_N; e++)
		if (bt_eng[e].state == ST_RUN)
			fprintf(o, " ---: | ---: | ---: |");
	fprintf(o, "\n");
	for (int q = 1; q <= TPCHQ_N; q++) {
		bool all = true;
		if (!bt_opt.only[q])
			continue;
		fprintf(o, "| Q%d |", q);
		for (int e = 0; e < E_N; e++) {
			const bt_cell *x = &bt_eng[e].q[q];
			if (bt_eng[e].state != ST_RUN)
				continue;
			if (!x->fresh_ok) {
				fprintf(o, " %s | | |",
					x->fresh_ms > 0 ? "**FAILED**" : "-");
				all = false;
				continue;
			}
			bt_fmt_ms(a, sizeof(a), x->fresh_ms);
			bt_fmt_ms(b, sizeof(b), x->fresh_open_ms);
			bt_fmt_ms(c, sizeof(c), x->fresh_query_ms);
			fprintf(o, " %s | %s | %s |", a, b, c);
		}
		fprintf(o, "\n");
		if (!all)
			continue;
		n++;
		for (int e = 0; e < E_N; e++) {
			const bt_cell *x = &bt_eng[e].q[q];
			if (bt_eng[e].state != ST_RUN)
				continue;
			s[e][0] += log(x->fresh_ms > 1e-3 ? x->fresh_ms : 1e-3);
			s[e][1] += log(
			    x->fresh_open_ms > 1e-3 ? x->fresh_open_ms : 1e-3);
			s[e][2] +=
			    log(x->fresh_query_ms > 1e-3 ? x->fresh_query_ms
							 : 1e-3);
		}
	}
	fprintf(o, "| geometric mean (%d queries) |", n);
	for (int e = 0; e < E_N; e++) {
		if (bt_eng[e].state != ST_RUN)
			continue;
		if (!n) {
			fprintf(o, " - | - | - |");
			continue;
		}
		bt_fmt_ms(a, sizeof(a), exp(s[e][0] / n));
		bt_fmt_ms(b, sizeof(b), exp(s[e][1] / n));
		bt_fmt_ms(c, sizeof(c), exp(s[e][2] / n));
		fprintf(o, " **%s** | %s | %s |", a, b, c);
	}
	fprintf(o, "\n");
}

/* Checks every query's answers against the reference engine; returns the
 * number of mismatches, printed in full after the table. */
static int bt_check(char check[][200], char **details)
{
	static const int ref_order[] = {E_DUCK, E_LITE, E_CPU, E_GPU};
	size_t dlen = 0, dcap = 0;
	int bad = 0;

	*details = NULL;
	for (int q = 1; q <= TPCHQ_N; q++) {
		int ref = -1, n = 0, qbad = 0;
		if (!bt_opt.only[q]) {
			snprintf(check[q], 200, "-");
			continue;
		}
		for (int k = 0; k < E_N && ref < 0; k++)
			if (bt_eng[ref_order[k]].q[q].ok)
				ref = ref_order[k];
		check[q][0] = 0;
		for (int e = 0; e < E_N; e++) {
			const bt_cell *c = &bt_eng[e].q[q];
			if (!c->ran)
				continue;
			n++;
			if (!c->ok) {
				qbad++;
				snprintf(check[q] + strlen(check[q]),
					 200 - strlen(check[q]), "%s**%s** %s",
					 qbad > 1 ? "; " : "",
					 c->timeout ? "TIMEOUT" : "FAILED",
					 bt_names[e]);
				char line[1200];
				int l =
				    snprintf(line, sizeof(line),
					     "**%s** q%d on %s: %s\n\n",
					     c->timeout ? "TIMEOUT" : "FAILED",
					     q, bt_names[e], c->err);
				if (l < 0)
					l = 0;
				if ((size_t)l >= sizeof(line))
					l = (int)sizeof(line) - 1;
				if (dlen + (size_t)l + 1 > dcap) {
					dcap = (dcap + (size_t)l + 1) * 2;
					char *nd = realloc(*details, dcap);
					if (!nd)
						bt_die("%s%s", "out of memory",
						       "");
					*details = nd;
				}
				memcpy(*details + dlen, line, (size_t)l + 1);
				dlen += (size_t)l;
				continue;
			}
			if (e == ref)
				continue;
			char msg[4096];
			if (!tpchq_compare(q, bt_names[ref],
					   &bt_eng[ref].q[q].res, bt_names[e],
					   &c->res, msg, sizeof(msg)))
				continue;
			qbad++;
			snprintf(
			    check[q] + strlen(check[q]), 200 - strlen(check[q]),
			    "%s**MISMATCH** %s vs %s", qbad > 1 ? "; " : "",
			    bt_names[e], bt_names[ref]);
			size_t l = strlen(msg) + 200;
			if (dlen + l + 1 > dcap) {
				dcap = (dcap + l + 1) * 2;
				char *nd = realloc(*details, dcap);
				if (!nd)
					bt_die("%s%s", "out of memory", "");
				*details = nd;
			}
			dlen += (size_t)snprintf(
			    *details + dlen, dcap - dlen,
			    "**MISMATCH** q%d: %s differs from %s:\n```\n%s\n"
			    "```\n\n",
			    q, bt_names[e], bt_names[ref], msg);
		}
		if (!qbad)
			snprintf(check[q], 200,
				 n > 1 ? "ok (%d engines)"
				       : "%d engine, not compared",
				 n);
		bad += qbad;
	}
	return bad;
}

static void bt_report(FILE *o, bool final, int *status)
{
	char a[64], b[64], check[TPCHQ_N + 1][200], *details;
	int bad = bt_check(check, &details);

	fprintf(
	    o,
	    "## Load\n\n| engine | seconds | notes |\n| --- | --- | --- |\n");
	for (int e = 0; e < E_N; e++) {
		/* gpmdb's pool is loaded once for both of its engines: its
		 * time and size show whichever of them ran */
		bool loaded = bt_eng[E_CPU].load_s > 0 && bt_eng[E_CPU].note[0];
		if ((e == E_CPU || e == E_GPU) && loaded) {
			fprintf(o, "| %s | %.2f | %s%s |\n", bt_names[e],
				bt_eng[E_CPU].load_s, bt_eng[E_CPU].note,
				e == E_GPU
				    ? "; the same pool, PRAGMA backend=gpu"
				: bt_eng[e].state == ST_RUN
				    ? ""
				    : "; its queries not run");
			continue;
		}
		if (e == E_GPU) {
			fprintf(o, "| %s | %s | %s |\n", bt_names[e],
				bt_state_text(e), bt_eng[e].why);
			continue;
		}
		if (bt_eng[e].state == ST_RUN)
			fprintf(o, "| %s | %.2f | %s |\n", bt_names[e],
				bt_eng[e].load_s, bt_eng[e].note);
		else
			fprintf(o, "| %s | %s | %s |\n", bt_names[e],
				bt_state_text(e), bt_eng[e].why);
	}
	fprintf(o,
		"\n## Queries (milliseconds; cold: first run after opening the "
		"database; warm: best of the next %d)\n\n",
		bt_opt.reps);
	fprintf(o, "| query | rows |");
	for (int e = 0; e < E_N; e++)
		fprintf(o, " %s cold | %s warm |%s", bt_names[e], bt_names[e],
			e == E_GPU ? " GPU: CPU fallback |" : "");
	fprintf(o, " answers |\n| --- | --- |");
	for (int e = 0; e < E_N; e++)
		fprintf(o, " --- | --- |%s", e == E_GPU ? " --- |" : "");
	fprintf(o, " --- |\n");
	for (int q = 1; q <= TPCHQ_N; q++) {
		if (!bt_opt.only[q])
			continue;
		long rows = -1;
		for (int e = 0; e < E_N && rows < 0; e++)
			if (bt_eng[e].q[q].ok)
				rows = bt_eng[e].q[q].res.nrows;
		fprintf(o, "| Q%d | %ld |", q, rows);
		for (int e = 0; e < E_N; e++) {
			bt_cell_text(e, q, false, a, sizeof(a));
			bt_cell_text(e, q, true, b, sizeof(b));
			fprintf(o, " %s | %s |", a, b);
			if (e == E_GPU)
				fprintf(o, " %s |",
					bt_eng[e].state != ST_RUN
					    ? bt_state_text(e)
					: bt_eng[e].q[q].ok ? bt_eng[e].q[q].gpu
							    : "-");
		}
		fprintf(o, " %s |\n", check[q]);
	}
	int nq = 0;
	for (int q = 1; q <= TPCHQ_N; q++)
		nq += bt_opt.only[q];
	fprintf(o, "| geometric mean | |");
	for (int e = 0; e < E_N; e++) {
		for (int w = 0; w < 2; w++) {
			int n;
			double g = bt_geomean(e, w, &n);
			if (bt_eng[e].state != ST_RUN)
				snprintf(a, sizeof(a), "%s", bt_state_text(e));
			else if (!n)
				snprintf(a, sizeof(a), "-");
			else {
				bt_fmt_ms(a, sizeof(a), g);
				if (n < nq)
					snprintf(a + strlen(a),
						 sizeof(a) - strlen(a),
						 " (%d of %d queries)", n, nq);
			}
			fprintf(o, " **%s** |", a);
		}
		if (e == E_GPU)
			fprintf(o, " |");
	}
	fprintf(o, " %s |\n\n", bad ? "**MISMATCHES**" : "");
	/* gpmdb against the peers, warm, over the queries all of them ran */
	for (int e = 0; e < E_N; e++) {
		if ((e != E_CPU && e != E_GPU) || bt_eng[e].state != ST_RUN)
			continue;
		for (int p = E_DUCK; p < E_N; p++) {
			double s = 0;
			int n = 0;
			if (bt_eng[p].state != ST_RUN)
				continue;
			for (int q = 1; q <= TPCHQ_N; q++)
				if (bt_eng[e].q[q].ok && bt_eng[p].q[q].ok) {
					s += log(bt_eng[e].q[q].warm_ms /
						 bt_eng[p].q[q].warm_ms);
					n++;
				}
			if (n)
				fprintf(
				    o,
				    "- %s / %s, warm, geometric mean of the "
				    "per-query ratios over %d queries: "
				    "%.2f (below 1: gpmdb is faster)\n",
				    bt_names[e], bt_names[p], n, exp(s / n));
		}
	}
	fprintf(o, "- threads: gpmdb up to %d (OpenMP), DuckDB %ld, SQLite 1\n",
		omp_get_max_threads(), sysconf(_SC_NPROCESSORS_ONLN));
	fprintf(o,
		"- answers: each engine's result compared with DuckDB's (else "
		"SQLite's, else gpmdb CPU's): decimals to the cent, text and "
		"counts exactly, ORDER BY order (tpc/tpch/tpch_query.c)\n\n");
	/* memory */
	fprintf(o, "## Memory (MiB: peak heap of the process during each "
		   "query's runs, beyond the heap before it opened the "
		   "database; the pool's pages and the databases' files are "
		   "not heap)\n\n| query |");
	for (int e = 0; e < E_N; e++)
		if (bt_eng[e].state == ST_RUN)
			fprintf(o, " %s |", bt_names[e]);
	fprintf(o, "\n| --- |");
	for (int e = 0; e < E_N; e++)
		if (bt_eng[e].state == ST_RUN)
			fprintf(o, " --- |");
	fprintf(o, "\n");
	for (int q = 1; q <= TPCHQ_N; q++) {
		if (!bt_opt.only[q])
			continue;
		fprintf(o, "| Q%d |", q);
		for (int e = 0; e < E_N; e++)
			if (bt_eng[e].state == ST_RUN) {
				if (bt_eng[e].q[q].ok)
					fprintf(o, " %.0f |",
						bt_eng[e].q[q].heap_mb);
				else
					fprintf(o, " - |");
			}
		fprintf(o, "\n");
	}
	fprintf(o, "\n");
	if (bad)
		fprintf(o, "%s", details ? details : "");
	if (bad && final) {
		fprintf(stderr,
			"bench_tpch: %d MISMATCHES/FAILURES: see the "
			"table\n",
			bad);
		*status = 1;
	}
	free(details);
}

/* Warm times for gnuplot: query, then one column per engine that ran
 * ("-" for a query without a time). */
static void bt_write_plot(void)
{
	FILE *f = fopen(bt_opt.plot, "w");

	if (!f)
		bt_die("%s: %s", bt_opt.plot, strerror(errno));
	fprintf(f, "query");
	for (int e = 0; e < E_N; e++)
		if (bt_eng[e].state == ST_RUN)
			fprintf(f, "\t\"%s\"", bt_names[e]);
	fputc('\n', f);
	for (int q = 1; q <= TPCHQ_N; q++) {
		if (!bt_opt.only[q])
			continue;
		fprintf(f, "Q%d", q);
		for (int e = 0; e < E_N; e++) {
			if (bt_eng[e].state != ST_RUN)
				continue;
			if (bt_eng[e].q[q].ok)
				fprintf(f, "\t%.3f", bt_eng[e].q[q].warm_ms);
			else
				fprintf(f, "\t-");
		}
		fputc('\n', f);
	}
	if (fclose(f) != 0)
		bt_die("%s: %s", bt_opt.plot, strerror(errno));
}

/* ---- main -------------------------------------------------------------- */

static void bt_usage(void)
{
	fprintf(stderr,
		"usage: bench_tpch --data DIR [--sf SF] [--queries DIR] "
		"[--dir DIR]\n"
		"         [--engines cpu,gpu,duckdb,sqlite] [--only 1,6,...] "
		"[--reps N]\n"
		"         [--warm-budget S] [--timeout S] [--sqlite-max-sf SF] "
		"[--plot FILE]\n         [--partial FILE] [--fresh on]\n");
	exit(2);
}

static void bt_list(const char *arg, bool is_engines)
{
	char buf[256], *save = NULL;

	snprintf(buf, sizeof(buf), "%s", arg);
	if (is_engines)
		memset(bt_opt.engines, 0, sizeof(bt_opt.engines));
	else
		memset(bt_opt.only, 0, sizeof(bt_opt.only));
	for (char *t = strtok_r(buf, ",", &save); t;
	     t = strtok_r(NULL, ",", &save)) {
		if (is_engines) {
			int e;
			for (e = 0; e < E_N; e++)
				if (!strcasecmp(t, bt_keys[e]))
					break;
			if (e == E_N)
				bt_die("unknown engine '%s'%s (cpu, gpu, "
				       "duckdb, sqlite)",
				       t, "");
			bt_opt.engines[e] = true;
		} else {
			int q = atoi(t[0] == 'q' || t[0] == 'Q' ? t + 1 : t);
			if (q < 1 || q > TPCHQ_N)
				bt_die("no query '%s'%s", t, "");
			bt_opt.only[q] = true;
		}
	}
}

static void bt_cleanup(void)
{
	char wal[600];

	if (bt_pool[0])
		unlink(bt_pool);
	if (bt_duck[0]) {
		unlink(bt_duck);
		snprintf(wal, sizeof(wal), "%s.wal", bt_duck);
		unlink(wal);
	}
	if (bt_lite[0])
		unlink(bt_lite);
}

int main(int argc, char **argv)
{
	static char qdir[400];

	bt_main_t = bt_now();
	int status = 0;

	pthread_t mem_thr;
	if (pthread_create(&mem_thr, NULL, bt_mem_thread, NULL) ||
	    pthread_detach(mem_thr))
		bt_die("cannot start the memory sampler%s%s", "", "");
	bt_opt.sf = 1;
	bt_opt.dir = "/dev/shm";
	bt_opt.reps = 3;
	bt_opt.warm_budget = 60;
	bt_opt.timeout = 600;
	bt_opt.sqlite_max_sf = 1;
	for (int e = 0; e < E_N; e++)
		bt_opt.engines[e] = true;
	for (int q = 1; q <= TPCHQ_N; q++)
		bt_opt.only[q] = true;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!v)
			bt_usage();
		i++;
		if (!strcmp(a, "--data"))
			bt_opt.data = v;
		else if (!strcmp(a, "--sf"))
			bt_opt.sf = atof(v);
		else if (!strcmp(a, "--queries"))
			bt_opt.qdir = v;
		else if (!strcmp(a, "--dir"))
			bt_opt.dir = v;
		else if (!strcmp(a, "--engines"))
			bt_list(v, true);
		else if (!strcmp(a, "--only"))
			bt_list(v, false);
		else if (!strcmp(a, "--reps"))
			bt_opt.reps = atoi(v);
		else if (!strcmp(a, "--warm-budget"))
			bt_opt.warm_budget = atof(v);
		else if (!strcmp(a, "--timeout"))
			bt_opt.timeout = atof(v);
		else if (!strcmp(a, "--sqlite-max-sf"))
			bt_opt.sqlite_max_sf = atof(v);
		else if (!strcmp(a, "--plot"))
			bt_opt.plot = v;
		else if (!strcmp(a, "--partial"))
			bt_opt.partial = v;
		else if (!strcmp(a, "--fresh"))
			bt_opt.fresh = !strcmp(v, "on") || !strcmp(v, "1");
		else if (!strcmp(a, "--fresh-child"))
			bt_opt.child = v;
		else
			bt_usage();
	}
	if (!bt_opt.data || bt_opt.reps < 1 || bt_opt.sf <= 0)
		bt_usage();
	if (!bt_opt.qdir) {
		const char *d = getenv("GPMDB_TPCH_DIR");
		snprintf(qdir, sizeof(qdir), "%s/queries",
			 d && *d ? d : "../shared/tpch");
		bt_opt.qdir = qdir;
	}
	for (int q = 1; q <= TPCHQ_N; q++) {
		char path[600];
		snprintf(path, sizeof(path), "%s/q%d.sql", bt_opt.qdir, q);
		if (bt_opt.only[q] && !(bt_sql[q] = tpchq_read_file(path)))
			bt_die("cannot read %s: %s", path, strerror(errno));
	}
	if (bt_opt.child)
		bt_fresh_child(); /* does not return */
	bt_argc = argc;
	bt_argv = argv;
	snprintf(bt_pool, sizeof(bt_pool), "%s/bench_tpch_%ld.pool", bt_opt.dir,
		 (long)getpid());
	snprintf(bt_duck, sizeof(bt_duck), "%s/bench_tpch_%ld.duckdb",
		 bt_opt.dir, (long)getpid());
	snprintf(bt_lite, sizeof(bt_lite), "%s/bench_tpch_%ld.sqlite",
		 bt_opt.dir, (long)getpid());
	atexit(bt_cleanup);

	printf("TPC-H SF %g, data %s, queries %s, databases in %s.\n\n",
	       bt_opt.sf, bt_opt.data, bt_opt.qdir, bt_opt.dir);
	for (int e = 0; e < E_N; e++)
		bt_eng[e].state = bt_opt.engines[e] ? ST_RUN : ST_NOT_RUN;

	/* gpmdb: CPU, then GPU on the same pool */
	if (bt_opt.engines[E_CPU] || bt_opt.engines[E_GPU]) {
		fprintf(stderr, "bench_tpch: loading gpmdb\n");
		if (gpm_load(&bt_eng[E_CPU])) {
			for (int e = E_CPU; e <= E_GPU; e++)
				if (bt_opt.engines[e]) {
					bt_eng[e].state = ST_FAILED;
					if (e != E_CPU)
						snprintf(bt_eng[e].why,
							 sizeof(bt_eng[e].why),
							 "%s",
							 bt_eng[E_CPU].why);
				}
			status = 1;
		}
		if (bt_eng[E_GPU].state == ST_RUN &&
		    !gpm_gpu_works(bt_eng[E_GPU].why,
				   sizeof(bt_eng[E_GPU].why)))
			bt_eng[E_GPU].state = ST_NO_GPU;
		for (int e = E_CPU; e <= E_GPU; e++)
			for (int q = 1; q <= TPCHQ_N; q++)
				if (bt_eng[e].state == ST_RUN && bt_opt.only[q])
					bt_query(e, q);
		for (int e = E_CPU; e <= E_GPU && bt_opt.fresh; e++)
			for (int q = 1; q <= TPCHQ_N; q++)
				if (bt_eng[e].state == ST_RUN && bt_opt.only[q])
					bt_fresh(e, q, bt_pool);
		/* BT_KEEP_POOL=PATH: the loaded pool kept there (same file
		 * system) for runs of the shell against it */
		const char *keep = getenv("BT_KEEP_POOL");
		if (!keep || rename(bt_pool, keep))
			unlink(bt_pool);
	}
	/* DuckDB */
	if (bt_opt.engines[E_DUCK]) {
		char err[600];
		if (duckdl_load(&bt_dl, NULL, err, sizeof(err))) {
			bt_eng[E_DUCK].state = ST_NOT_INSTALLED;
			snprintf(bt_eng[E_DUCK].why, sizeof(bt_eng[E_DUCK].why),
				 "%s", err);
		} else {
			fprintf(stderr, "bench_tpch: loading DuckDB\n");
			if (duck_load(&bt_eng[E_DUCK])) {
				bt_eng[E_DUCK].state = ST_FAILED;
				status = 1;
			}
			for (int q = 1; q <= TPCHQ_N; q++)
				if (bt_eng[E_DUCK].state == ST_RUN &&
				    bt_opt.only[q])
					bt_query(E_DUCK, q);
			for (int q = 1; q <= TPCHQ_N && bt_opt.fresh; q++)
				if (bt_eng[E_DUCK].state == ST_RUN &&
				    bt_opt.only[q])
					bt_fresh(E_DUCK, q, bt_duck);
			unlink(bt_duck);
		}
	}
	/* SQLite, at small scale factors only */
	if (bt_opt.engines[E_LITE] && bt_opt.sf > bt_opt.sqlite_max_sf) {
		bt_eng[E_LITE].state = ST_SF;
		snprintf(bt_eng[E_LITE].why, sizeof(bt_eng[E_LITE].why),
			 "SQLite runs at SF <= %g (--sqlite-max-sf)",
			 bt_opt.sqlite_max_sf);
	} else if (bt_opt.engines[E_LITE]) {
		fprintf(stderr, "bench_tpch: loading SQLite\n");
		if (lite_load(&bt_eng[E_LITE])) {
			bt_eng[E_LITE].state = ST_FAILED;
			status = 1;
		}
		for (int q = 1; q <= TPCHQ_N; q++)
			if (bt_eng[E_LITE].state == ST_RUN && bt_opt.only[q])
				bt_query(E_LITE, q);
		unlink(bt_lite);
	}
	if (bt_eng[E_DUCK].state == ST_NOT_INSTALLED)
		fprintf(stderr, "bench_tpch: DuckDB not installed: %s\n",
			bt_eng[E_DUCK].why);
	bt_report(stdout, true, &status);
	bt_fresh_report(stdout);
	if (bt_opt.plot)
		bt_write_plot();
	for (int e = 0; e < E_N; e++)
		for (int q = 1; q <= TPCHQ_N; q++)
			tpchq_res_free(&bt_eng[e].q[q].res);
	for (int q = 1; q <= TPCHQ_N; q++)
		free(bt_sql[q]);
	if (bt_dl.handle)
		duckdl_unload(&bt_dl);
	return status;
}
