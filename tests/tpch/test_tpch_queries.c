/*
 * test_tpch_queries.c - the 22 TPC-H queries on dbgen's SF 0.01 data,
 * gpmdb's answers against SQLite's (libsqlite3) computed in the same run.
 *
 * The data and the queries are ../shared/tpch (or $GPMDB_TPCH_DIR):
 * schema.sql, queries/q1.sql..q22.sql, sf0.01/<table>.tbl.gz.  Both
 * databases get schema.sql as it is and the same rows, inserted with
 * prepared INSERTs, one transaction per table, every field bound as text:
 * gpmdb converts it to the column's type (DECIMAL(15,2) exactly, DATE,
 * INTEGER), SQLite by affinity (DECIMAL is NUMERIC there, so money is an
 * integer or a double; dates stay 'YYYY-MM-DD' text, which sorts as dates
 * do).  SQLite also gets indexes on the join keys (no change to answers,
 * much faster); gpmdb has none.
 *
 * gpmdb runs each file exactly as written.  SQLite's copy is rewritten by
 * tpchq_sqlite_dialect(); the runners, each query's ORDER BY keys and the
 * comparison rule (decimals to the cent, text and counts exactly, rows in
 * ORDER BY order and equal as multisets) are tpc/tpch/tpch_query.c's,
 * shared with the benchmark (tpc/tpch/bench_tpch.c).
 *
 * GPU mode (GPMDB_TPCH_GPU=1, run by `make test-gpu`, docs/gpu.md "TPC-H on
 * the GPU"): each query also runs on gpmdb with PRAGMA backend=cpu (the
 * reference), backend=gpu (not strict: PRAGMA gpu_stats' gpu_operators
 * and cpu_fallbacks are read before and after), and, when nothing fell
 * back, backend=gpu with gpu_strict=on; every GPU result must match the
 * CPU one, which must match SQLite's.  EXPLAIN under backend=gpu gives the
 * planned operators per backend (operators with no GPU version yet run on
 * the CPU without counting as fallbacks: EXPLAIN shows them).  A line per
 * query and a table at the end say what ran where.
 */
#include "harness.h"

#include "../../tpc/tpch/tpch_query.h"
#include "gpmdb.h"
#include "gpu/xq.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

static const char *tq_dir; /* the TPC-H folder */
static char tq_path[512];  /* the gpmdb database file */
static gpmdb *tq_gdb;	   /* gpmdb, loaded */
static sqlite3 *tq_sdb;	   /* SQLite, in memory, loaded */
static bool tq_loaded;	   /* both loaded without error */
static bool tq_gpu;	   /* GPU mode (GPMDB_TPCH_GPU=1) */

/* GPU mode, per query: rows, gpu_stats deltas of the non-strict run,
 * EXPLAIN's operators per backend (-1: not explained), whether the strict
 * run was made and passed. */
typedef struct {
	bool ran;
	long rows;
	long long gpu_ops, fallbacks;
	int plan_gpu, plan_cpu;
	char strict[24];
	double cpu_ms, gpu_ms;
} tq_gpu_row;
static tq_gpu_row tq_grow[23];

/* ---- small helpers ---- */

/* A growing string. */
typedef struct {
	char *p;
	size_t len, cap;
} tq_str;

static void tq_put(tq_str *s, const char *p, size_t n)
{
	if (s->len + n + 1 > s->cap) {
		size_t cap = s->cap ? s->cap : 256;
		while (s->len + n + 1 > cap)
			cap *= 2;
		char *np = realloc(s->p, cap);
		if (!np) {
			fprintf(stderr, "out of memory\n");
			exit(2);
		}
		s->p = np;
		s->cap = cap;
	}
	memcpy(s->p + s->len, p, n);
	s->len += n;
	s->p[s->len] = 0;
}

static void tq_puts(tq_str *s, const char *p)
{
	tq_put(s, p, strlen(p));
}

static double tq_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* ---- loading ---- */

static const char *const tq_tables[] = {"region",   "nation",	"part",
					"supplier", "partsupp", "customer",
					"orders",   "lineitem"};
static const int tq_ncols[] = {3, 4, 9, 7, 5, 8, 9, 16};
static const long tq_nrows[] = {5, 25, 2000, 100, 8000, 1500, 15000, 60175};

/* gpmdb takes rows in multi-row INSERTs of this many rows: each
 * statement is one storage append, and the metadata log holds a bounded
 * number of appends per transaction. */
#define TQ_BATCH 200

/* Prepares "INSERT INTO t VALUES (?,...),..." for nrows rows. */
static gpmdb_stmt *tq_gpmdb_insert(int t, int nrows)
{
	tq_str sql = {0};
	gpmdb_stmt *st = NULL;

	tq_puts(&sql, "INSERT INTO ");
	tq_puts(&sql, tq_tables[t]);
	tq_puts(&sql, " VALUES ");
	for (int r = 0; r < nrows; r++) {
		tq_puts(&sql, r ? ", (" : "(");
		for (int c = 0; c < tq_ncols[t]; c++)
			tq_puts(&sql, c ? ", ?" : "?");
		tq_puts(&sql, ")");
	}
	if (gpmdb_prepare(tq_gdb, sql.p, -1, &st, NULL) || !st) {
		fprintf(stderr, "gpmdb prepare INSERT INTO %s: %s\n",
			tq_tables[t], gpmdb_errmsg(tq_gdb));
		st = NULL;
	}
	free(sql.p);
	return st;
}

/* Splits a .tbl line into nc fields (a trailing '|' allowed). */
static int tq_split(char *line, int nc, const char **f, int *len)
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

/* Loads one table's .tbl.gz into both databases, one transaction each,
 * every field bound as text. */
static int tq_load_table(int t)
{
	char path[600], sql[256], line[4096];
	const char *f[16];
	int flen[16];
	gpmdb_stmt *gs = NULL, *gpart = NULL;
	sqlite3_stmt *ss = NULL;
	int nc = tq_ncols[t], rc = 0, pending = 0;
	long rows = 0;
	char **batch = calloc(TQ_BATCH, sizeof(char *));
	gzFile gz;

	snprintf(path, sizeof(path), "%s/sf0.01/%s.tbl.gz", tq_dir,
		 tq_tables[t]);
	gz = gzopen(path, "rb");
	if (!gz || !batch) {
		fprintf(stderr, "cannot open %s: %s\n", path, strerror(errno));
		free(batch);
		if (gz)
			gzclose(gz);
		return -1;
	}
	int n =
	    snprintf(sql, sizeof(sql), "INSERT INTO %s VALUES (", tq_tables[t]);
	for (int c = 0; c < nc; c++)
		n += snprintf(sql + n, sizeof(sql) - (size_t)n, "%s?",
			      c ? ", " : "");
	snprintf(sql + n, sizeof(sql) - (size_t)n, ")");
	gs = tq_gpmdb_insert(t, TQ_BATCH);
	if (!gs || sqlite3_prepare_v2(tq_sdb, sql, -1, &ss, NULL) != SQLITE_OK)
		rc = -1;
	if (!rc && (gpmdb_exec(tq_gdb, "BEGIN", NULL, NULL, NULL) ||
		    sqlite3_exec(tq_sdb, "BEGIN", NULL, NULL, NULL)))
		rc = -1;
	for (bool eof = false; !rc && !eof;) {
		eof = !gzgets(gz, line, sizeof(line));
		if (!eof) {
			size_t len = strlen(line);
			while (len &&
			       (line[len - 1] == '\n' || line[len - 1] == '\r'))
				line[--len] = 0;
			if (!len)
				continue;
			rows++;
			batch[pending] = strdup(line);
			if (!batch[pending] || tq_split(line, nc, f, flen)) {
				fprintf(stderr, "%s:%ld: bad line\n", path,
					rows);
				rc = -1;
				pending++;
				break;
			}
			pending++;
			for (int c = 0; c < nc; c++)
				sqlite3_bind_text(ss, c + 1, f[c], flen[c],
						  SQLITE_TRANSIENT);
			if (sqlite3_step(ss) != SQLITE_DONE) {
				fprintf(stderr, "sqlite %s:%ld: %s\n", path,
					rows, sqlite3_errmsg(tq_sdb));
				rc = -1;
			}
			sqlite3_reset(ss);
		}
		if (rc || !pending || (!eof && pending < TQ_BATCH))
			continue;
		/* a full batch, or the rest at the end of the file */
		gpmdb_stmt *g = gs;
		if (pending < TQ_BATCH) {
			g = gpart = tq_gpmdb_insert(t, pending);
			if (!g) {
				rc = -1;
				break;
			}
		}
		for (int r = 0; r < pending; r++) {
			tq_split(batch[r], nc, f, flen);
			for (int c = 0; c < nc; c++)
				gpmdb_bind_text(g, r * nc + c + 1, f[c],
						flen[c]);
		}
		if (gpmdb_step(g) != GPMDB_DONE) {
			fprintf(stderr, "gpmdb %s:%ld: %s\n", path, rows,
				gpmdb_errmsg(tq_gdb));
			rc = -1;
		}
		gpmdb_reset(g);
		for (int r = 0; r < pending; r++)
			free(batch[r]);
		pending = 0;
	}
	for (int r = 0; r < pending; r++)
		free(batch[r]);
	free(batch);
	if (!rc && rows != tq_nrows[t]) {
		fprintf(stderr, "%s: %ld rows, want %ld\n", path, rows,
			tq_nrows[t]);
		rc = -1;
	}
	if (!rc && (gpmdb_exec(tq_gdb, "COMMIT", NULL, NULL, NULL) ||
		    sqlite3_exec(tq_sdb, "COMMIT", NULL, NULL, NULL))) {
		fprintf(stderr, "commit %s: %s\n", tq_tables[t],
			gpmdb_errmsg(tq_gdb));
		rc = -1;
	}
	if (rc) {
		gpmdb_exec(tq_gdb, "ROLLBACK", NULL, NULL, NULL);
		sqlite3_exec(tq_sdb, "ROLLBACK", NULL, NULL, NULL);
	}
	gpmdb_finalize(gs);
	gpmdb_finalize(gpart);
	sqlite3_finalize(ss);
	gzclose(gz);
	return rc;
}

/* The database file: on /dev/shm when there is one (fast, tmpfs), else in
 * $TMPDIR or /tmp. */
static void tq_make_path(void)
{
	const char *d = getenv("TMPDIR");
	struct stat sb;

	if (stat("/dev/shm", &sb) == 0 && S_ISDIR(sb.st_mode) &&
	    access("/dev/shm", W_OK) == 0)
		d = "/dev/shm";
	else if (!d || !*d)
		d = "/tmp";
	snprintf(tq_path, sizeof(tq_path), "%s/gpmdb_tpchq_%ld.db", d,
		 (long)getpid());
}

static void test_load(void)
{
	char schema_path[600], *schema, *err = NULL;
	gpmdb_options o = {.durability = "off"};

	snprintf(schema_path, sizeof(schema_path), "%s/schema.sql", tq_dir);
	schema = tpchq_read_file(schema_path);
	CHECKF(schema, "cannot read %s", schema_path);
	if (!schema)
		return;
	tq_make_path();
	unlink(tq_path);
	CHECK_RC(gpmdb_open_v2(tq_path, &tq_gdb,
			       GPMDB_OPEN_READWRITE | GPMDB_OPEN_CREATE, &o),
		 GPMDB_OK);
	CHECK_RC(sqlite3_open(":memory:", &tq_sdb), SQLITE_OK);
	if (th_case_failed) {
		free(schema);
		return;
	}
	if (gpmdb_exec(tq_gdb, schema, NULL, NULL, &err) != GPMDB_OK) {
		CHECKF(0, "gpmdb schema.sql: %s", err ? err : "?");
		gpmdb_free(err);
		free(schema);
		return;
	}
	if (sqlite3_exec(tq_sdb, schema, NULL, NULL, &err) != SQLITE_OK) {
		CHECKF(0, "sqlite schema.sql: %s", err ? err : "?");
		sqlite3_free(err);
		free(schema);
		return;
	}
	free(schema);
	double t0 = tq_now_ms();
	for (int t = 0; t < 8 && !th_case_failed; t++)
		CHECKF(tq_load_table(t) == 0, "loading %s", tq_tables[t]);
	/* SQLite gets the indexes a TPC-H run would have: without them its
	 * correlated subqueries (Q21: over two minutes) rescan lineitem.
	 * Indexes do not change answers; gpmdb runs without any. */
	if (!th_case_failed &&
	    sqlite3_exec(
		tq_sdb,
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
		NULL, NULL, &err) != SQLITE_OK) {
		CHECKF(0, "sqlite indexes: %s", err ? err : "?");
		sqlite3_free(err);
	}
	printf("# loaded in %.0f ms\n", tq_now_ms() - t0);
	tq_loaded = !th_case_failed;
}

/* Runs one statement without results (a PRAGMA) on gpmdb. */
static int tq_gexec(const char *sql)
{
	char *err = NULL;
	int rc = gpmdb_exec(tq_gdb, sql, NULL, NULL, &err);
	CHECKF(rc == GPMDB_OK, "%s: %s", sql, err ? err : "?");
	gpmdb_free(err);
	return rc;
}

/* PRAGMA gpu_stats' gpu_operators and cpu_fallbacks. */
static int tq_gpu_stats(long long *ops, long long *fb)
{
	gpmdb_stmt *st = NULL;
	int rc;

	*ops = *fb = -1;
	if (gpmdb_prepare(tq_gdb, "PRAGMA gpu_stats", -1, &st, NULL) || !st) {
		CHECKF(0, "PRAGMA gpu_stats: %s", gpmdb_errmsg(tq_gdb));
		return -1;
	}
	while ((rc = gpmdb_step(st)) == GPMDB_ROW) {
		const char *n = (const char *)gpmdb_column_text(st, 0);
		if (n && !strcmp(n, "gpu_operators"))
			*ops = gpmdb_column_int64(st, 1);
		else if (n && !strcmp(n, "cpu_fallbacks"))
			*fb = gpmdb_column_int64(st, 1);
	}
	CHECKF(rc == GPMDB_DONE, "PRAGMA gpu_stats: %s", gpmdb_errmsg(tq_gdb));
	gpmdb_finalize(st);
	return rc == GPMDB_DONE && *ops >= 0 && *fb >= 0 ? 0 : -1;
}

/* Counts EXPLAIN's operators per backend for a one-statement query (Q15,
 * a view, is not explained: -1). */
static void tq_explain(const char *sql, int *ngpu, int *ncpu)
{
	gpmdb_stmt *st = NULL;
	const char *tail = NULL;
	tq_str ex = {0};

	*ngpu = *ncpu = -1;
	tq_puts(&ex, "EXPLAIN ");
	tq_puts(&ex, sql);
	if (gpmdb_prepare(tq_gdb, ex.p, -1, &st, &tail) || !st) {
		free(ex.p);
		return;
	}
	for (const char *t = tail; t && *t; t++)
		if (!isspace((unsigned char)*t) && *t != ';') {
			gpmdb_finalize(st); /* more than one statement */
			free(ex.p);
			return;
		}
	*ngpu = *ncpu = 0;
	while (gpmdb_step(st) == GPMDB_ROW) {
		/* one operator a row: its backend in EXPLAIN's column */
		int g, c;
		xq_explain_backends((const char *)gpmdb_column_text(st, 0), &g,
				    &c);
		*ngpu += g;
		*ncpu += c;
	}
	gpmdb_finalize(st);
	free(ex.p);
}

/* GPU mode: the query on backend=gpu (not strict, then strict when
 * nothing fell back), each result compared with the CPU backend's. */
static void tq_query_gpu(int q, const char *sql, const tpchq_res *cpu)
{
	tq_gpu_row *gr = &tq_grow[q];
	tpchq_res g = {0};
	long long ops0, fb0, ops1, fb1;
	char msg[4096];

	if (tq_gexec("PRAGMA backend = gpu") ||
	    tq_gexec("PRAGMA gpu_strict = off"))
		return;
	tq_explain(sql, &gr->plan_gpu, &gr->plan_cpu);
	if (tq_gpu_stats(&ops0, &fb0))
		return;
	int rc = tpchq_run_gpmdb(tq_gdb, sql, &g);
	CHECKF(rc == 0, "q%d backend=gpu: %s", q, g.err);
	if (rc || tq_gpu_stats(&ops1, &fb1))
		goto out;
	gr->ran = true;
	gr->rows = g.nrows;
	gr->gpu_ops = ops1 - ops0;
	gr->fallbacks = fb1 - fb0;
	gr->gpu_ms = g.ms;
	CHECKF(tpchq_compare(q, "gpu", &g, "cpu", cpu, msg, sizeof(msg)) == 0,
	       "q%d backend=gpu vs cpu: %s", q, msg);
	snprintf(gr->strict, sizeof(gr->strict), "not run");
	if (gr->fallbacks == 0 && !th_case_failed) {
		/* everything the planner wanted on the GPU ran there: it
		 * must also run with fallbacks forbidden */
		tpchq_res_free(&g);
		memset(&g, 0, sizeof(g));
		if (tq_gexec("PRAGMA gpu_strict = on"))
			goto out;
		rc = tpchq_run_gpmdb(tq_gdb, sql, &g);
		CHECKF(rc == 0, "q%d backend=gpu, gpu_strict: %s", q, g.err);
		if (!rc)
			CHECKF(tpchq_compare(q, "gpu strict", &g, "cpu", cpu,
					     msg, sizeof(msg)) == 0,
			       "q%d gpu_strict vs cpu: %s", q, msg);
		snprintf(gr->strict, sizeof(gr->strict), "%s",
			 rc ? "FAILED" : "passed");
	}
	printf("# q%d gpu: %ld rows, %lld GPU operators, %lld CPU fallbacks, "
	       "EXPLAIN %d gpu / %d cpu (-1: several statements), strict %s; "
	       "cpu %.1f ms, gpu %.1f ms\n",
	       q, gr->rows, gr->gpu_ops, gr->fallbacks, gr->plan_gpu,
	       gr->plan_cpu, gr->strict, gr->cpu_ms, gr->gpu_ms);
out:
	tpchq_res_free(&g);
	tq_gexec("PRAGMA gpu_strict = off");
	tq_gexec("PRAGMA backend = cpu");
}

static void tq_query(int q)
{
	char path[600], msg[4096];
	char *sql, *lite;
	tpchq_res g = {0}, s = {0};

	CHECKF(tq_loaded, "the data were not loaded");
	if (!tq_loaded)
		return;
	snprintf(path, sizeof(path), "%s/queries/q%d.sql", tq_dir, q);
	sql = tpchq_read_file(path);
	CHECKF(sql, "cannot read %s", path);
	if (!sql)
		return;
	lite = tpchq_sqlite_dialect(q, sql);
	CHECKF(lite, "q%d: cannot rewrite for SQLite", q);
	if (!lite) {
		free(sql);
		return;
	}
	/* GPU mode: the reference is the CPU backend, named explicitly */
	if (tq_gpu && tq_gexec("PRAGMA backend = cpu"))
		goto out;
	int grc = tpchq_run_gpmdb(tq_gdb, sql, &g);
	int src = tpchq_run_sqlite(tq_sdb, lite, &s);
	CHECKF(grc == 0, "q%d gpmdb: %s", q, g.err);
	CHECKF(src == 0, "q%d sqlite: %s (rewritten: %s)", q, s.err, lite);
	if (grc || src)
		goto out;
	printf("# q%d: %ld rows; gpmdb %.0f ms, sqlite %.0f ms\n", q, g.nrows,
	       g.ms, s.ms);
	CHECKF(tpchq_compare(q, "gpmdb", &g, "sqlite", &s, msg, sizeof(msg)) ==
		   0,
	       "q%d: %s", q, msg);
	if (tq_gpu) {
		tq_grow[q].cpu_ms = g.ms;
		tq_query_gpu(q, sql, &g);
	}
out:
	tpchq_res_free(&g);
	tpchq_res_free(&s);
	free(lite);
	free(sql);
}

/* One case per query; the ORDER BY keys are tpchq_order_keys'. */
#define TQ(n)                                                                  \
	static void tpch_q##n(void)                                            \
	{                                                                      \
		tq_query(n);                                                   \
	}
TQ(1)
TQ(2)
TQ(3)
TQ(4)
TQ(5)
TQ(6)
TQ(7)
TQ(8)
TQ(9)
TQ(10)
TQ(11)
TQ(12)
TQ(13)
TQ(14)
TQ(15)
TQ(16)
TQ(17)
TQ(18)
TQ(19)
TQ(20)
TQ(21)
TQ(22)

/* The rewriting itself, on small cases. */
static void test_sqlite_dialect(void)
{
	char *r = tpchq_sqlite_dialect(
	    1, "x <= date '1998-12-01' - interval '90' day and y < date "
	       "'1994-01-01' + interval '1' year and z = date '1995-03-15' "
	       "and extract(year from o_orderdate) = substring(c_phone from "
	       "1 for 2) and update_date = 1");
	CHECK(r != NULL);
	if (r)
		CHECKF(!strcmp(r, "x <= date('1998-12-01', '-90 day') and y "
				  "< date('1994-01-01', '+1 year') and z = "
				  "'1995-03-15' and CAST(strftime('%Y', "
				  "o_orderdate) AS INTEGER) = substr(c_phone, "
				  "1, 2) and update_date = 1"),
		       "got %s", r);
	free(r);
}

static bool tq_wanted(int q);

/* GPU mode: the table of what ran where. */
static void tq_gpu_table(void)
{
	long long ops = 0, fb = 0;
	int full = 0;

	printf("#\n# | query | rows | GPU operators | CPU fallbacks | EXPLAIN "
	       "gpu/cpu | gpu_strict | cpu ms | gpu ms |\n"
	       "# | --- | ---: | ---: | ---: | ---: | --- | ---: | ---: |\n");
	for (int q = 1; q <= 22; q++) {
		const tq_gpu_row *r = &tq_grow[q];
		char plan[32];
		if (!r->ran) {
			printf("# | q%d | | | | | %s | | |\n", q,
			       tq_wanted(q) ? "FAILED" : "not run");
			continue;
		}
		if (r->plan_gpu < 0)
			snprintf(plan, sizeof(plan), "- (view)");
		else
			snprintf(plan, sizeof(plan), "%d/%d", r->plan_gpu,
				 r->plan_cpu);
		printf(
		    "# | q%d | %ld | %lld | %lld | %s | %s | %.1f | %.1f |\n",
		    q, r->rows, r->gpu_ops, r->fallbacks, plan, r->strict,
		    r->cpu_ms, r->gpu_ms);
		ops += r->gpu_ops;
		fb += r->fallbacks;
		full += !strcmp(r->strict, "passed");
	}
	printf("# total: %lld GPU operators, %lld CPU fallbacks; %d of 22 "
	       "queries passed under gpu_strict\n",
	       ops, fb, full);
}

static void tq_cleanup(void)
{
	if (tq_gdb)
		gpmdb_close(tq_gdb);
	if (tq_sdb)
		sqlite3_close(tq_sdb);
	if (tq_path[0])
		unlink(tq_path);
	tq_gdb = NULL;
	tq_sdb = NULL;
	tq_path[0] = 0;
}

/* Arguments: query numbers to run (all when none), for debugging. */
static int tq_argc;
static char **tq_argv;

static bool tq_wanted(int q)
{
	if (tq_argc < 2)
		return true;
	for (int i = 1; i < tq_argc; i++)
		if (atoi(tq_argv[i]) == q)
			return true;
	return false;
}

#define TQ_RUN(n)                                                              \
	do {                                                                   \
		if (tq_wanted(n))                                              \
			TEST_RUN(tpch_q##n);                                   \
	} while (0)

int main(int argc, char **argv)
{
	static char dirbuf[512];
	struct stat sb;
	char probe[600];

	tq_argc = argc;
	tq_argv = argv;
	tq_dir = getenv("GPMDB_TPCH_DIR");
	if (!tq_dir || !*tq_dir)
		tq_dir = "../shared/tpch";
	snprintf(dirbuf, sizeof(dirbuf), "%s", tq_dir);
	tq_dir = dirbuf;
	snprintf(probe, sizeof(probe), "%s/sf0.01/lineitem.tbl.gz", tq_dir);
	if (stat(probe, &sb) != 0) {
		printf("# TPC-H data not found: no %s (set GPMDB_TPCH_DIR to "
		       "the folder holding schema.sql, queries/ and sf0.01/; "
		       "the default is ../shared/tpch from the repository "
		       "root)\n",
		       probe);
		th_failed++;
		TEST_MAIN_END();
	}
	atexit(tq_cleanup); /* also on exit() after running out of memory */
	tq_gpu =
	    getenv("GPMDB_TPCH_GPU") && !strcmp(getenv("GPMDB_TPCH_GPU"), "1");
	TEST_RUN(test_sqlite_dialect);
	TEST_RUN(test_load);
	TQ_RUN(1);
	TQ_RUN(2);
	TQ_RUN(3);
	TQ_RUN(4);
	TQ_RUN(5);
	TQ_RUN(6);
	TQ_RUN(7);
	TQ_RUN(8);
	TQ_RUN(9);
	TQ_RUN(10);
	TQ_RUN(11);
	TQ_RUN(12);
	TQ_RUN(13);
	TQ_RUN(14);
	TQ_RUN(15);
	TQ_RUN(16);
	TQ_RUN(17);
	TQ_RUN(18);
	TQ_RUN(19);
	TQ_RUN(20);
	TQ_RUN(21);
	TQ_RUN(22);
	if (tq_gpu)
		tq_gpu_table();
	tq_cleanup();
	TEST_MAIN_END();
}
