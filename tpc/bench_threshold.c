/*
 * bench_threshold - measures PRAGMA gpu_threshold (issue 5, "Planning"):
 * at which input size does an operator on the GPU beat the CPU backend?
 *
 * For each table size in --sizes (rows), a fresh pool on --dir gets
 *   t(id BIGINT, k INT, v DOUBLE, q DECIMAL(12,2))   (n rows)
 *   d(k INT PRIMARY KEY, w DOUBLE)                    (1000 rows)
 * through gpmdb_append_columns, and four queries run with
 * PRAGMA backend = cpu (all cores), and backend = gpu cold (the HBM cache
 * made stale by a write to a scratch table first, so the run uploads the
 * columns from the pool) and warm (columns cached): best of --reps runs.
 * Every GPU result is compared with the CPU's (a difference is printed as
 * **MISMATCH**, exit status 1).  The table shows each time and the
 * crossovers: the smallest size from which the GPU (warm; cold) is faster
 * than the CPU at that size and every larger one.  docs/gpu.md says how
 * the default threshold follows from them.
 *
 * Usage: bench_threshold [--sizes 1000,10000,...] [--reps R] [--dir DIR]
 * Without a GPU it says so and exits 0.
 */
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../gpu/gpu.h"
#include "bench_util.h"
#include "gpmdb.h"

const char bench_prog[] = "bench_threshold";

#define BT_MAXSIZES 32
#define BT_NDIM	    1000

static const char *const bt_names[] = {"filter + aggregate", "group by",
				       "top-100", "join + aggregate"};
static const char *const bt_sql[] = {
    "SELECT count(*), sum(q), min(v) FROM t WHERE v < 0.5 AND k <> 7",
    "SELECT k, count(*), sum(q) FROM t GROUP BY k",
    "SELECT id, v FROM t ORDER BY v DESC, id LIMIT 100",
    "SELECT count(*), sum(t.q) FROM t JOIN d ON t.k = d.k WHERE d.w < 0.5"};
#define BT_NQ ((int)(sizeof(bt_sql) / sizeof(bt_sql[0])))

static void bt_exec(gpmdb *db, const char *sql)
{
	char *m = NULL;
	if (gpmdb_exec(db, sql, NULL, NULL, &m) != GPMDB_OK)
		bench_die(sql, m ? m : "failed");
}

/* Runs sql and returns its rows as one string (the comparison), its
 * time in *secs. */
static char *bt_query(gpmdb *db, const char *sql, double *secs)
{
	gpmdb_stmt *s;
	size_t cap = 1 << 16, len = 0;
	char *out = bench_alloc(cap);
	int rc;

	out[0] = 0;
	double t0 = bench_now();
	if (gpmdb_prepare(db, sql, -1, &s, NULL) != GPMDB_OK)
		bench_die(sql, gpmdb_errmsg(db));
	int nc = gpmdb_column_count(s);
	while ((rc = gpmdb_step(s)) == GPMDB_ROW)
		for (int i = 0; i < nc; i++) {
			char cellbuf[64];
			const char *txt = cellbuf;
			if (gpmdb_column_type(s, i) == GPMDB_FLOAT)
				/* engines add doubles in their own orders */
				snprintf(cellbuf, sizeof(cellbuf), "%.9g",
					 gpmdb_column_double(s, i));
			else
				txt = (const char *)gpmdb_column_text(s, i);
			size_t k = strlen(txt ? txt : "NULL") + 2;
			if (len + k + 1 > cap) {
				char *o = bench_alloc(cap * 2 + k);
				memcpy(o, out, len + 1);
				free(out);
				out = o;
				cap = cap * 2 + k;
			}
			len += (size_t)snprintf(out + len, cap - len, "%s%c",
						txt ? txt : "NULL",
						i + 1 < nc ? '|' : '\n');
		}
	if (rc != GPMDB_DONE)
		bench_die(sql, gpmdb_errmsg(db));
	gpmdb_finalize(s);
	*secs = bench_now() - t0;
	return out;
}

static void bt_load(gpmdb *db, uint64_t n)
{
	int64_t *id = bench_alloc(n * 8), *q = bench_alloc(n * 8);
	int32_t *k = bench_alloc(n * 4), dk[BT_NDIM];
	double *v = bench_alloc(n * 8), dw[BT_NDIM];
	uint64_t step = bench_coprime_step(n);

	for (uint64_t i = 0; i < n; i++) {
		id[i] = (int64_t)i;
		k[i] = (int32_t)((i * 2654435761u) % BT_NDIM);
		v[i] = ((double)((i * step) % n) + 0.5) / (double)n;
		q[i] = (int64_t)((i * 40503u) % 1000000u);
	}
	for (int j = 0; j < BT_NDIM; j++) {
		dk[j] = j;
		dw[j] = (double)((j * 7919) % BT_NDIM) / BT_NDIM;
	}
	const gpmdb_column_array tc[] = {{GPMDB_ARRAY_INT64, id, NULL},
					 {GPMDB_ARRAY_INT32, k, NULL},
					 {GPMDB_ARRAY_DOUBLE, v, NULL},
					 {GPMDB_ARRAY_INT64, q, NULL}};
	const gpmdb_column_array dc[] = {{GPMDB_ARRAY_INT32, dk, NULL},
					 {GPMDB_ARRAY_DOUBLE, dw, NULL}};
	bt_exec(db, "CREATE TABLE t(id BIGINT, k INT, v DOUBLE, "
		    "q DECIMAL(12,2)); CREATE TABLE d(k INT PRIMARY KEY, "
		    "w DOUBLE); CREATE TABLE scratch(x INT)");
	if (gpmdb_append_columns(db, "t", 4, NULL, tc, (int64_t)n) !=
		GPMDB_OK ||
	    gpmdb_append_columns(db, "d", 2, NULL, dc, BT_NDIM) != GPMDB_OK)
		bench_die("gpmdb_append_columns", gpmdb_errmsg(db));
	free(id);
	free(q);
	free(k);
	free(v);
}

/* The smallest size index from which a < b holds to the end; n when
 * never. */
static int bt_cross(const double *a, const double *b, int n)
{
	int from = n;
	for (int i = n - 1; i >= 0 && a[i] < b[i]; i--)
		from = i;
	return from;
}

int main(int argc, char **argv)
{
	const char *dir = "/dev/shm", *sizes =
					  "1000,10000,30000,100000,"
					  "300000,1000000,3000000,10000000";
	int reps = 3, nsz = 0, bad = 0;
	uint64_t sz[BT_MAXSIZES];
	char err[300];

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--sizes") && i + 1 < argc)
			sizes = argv[++i];
		else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
			reps = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--dir") && i + 1 < argc)
			dir = argv[++i];
		else {
			fprintf(stderr, "usage: bench_threshold [--sizes "
					"N,N,...] [--reps R] [--dir DIR]\n");
			return 2;
		}
	}
	for (const char *p = sizes; *p && nsz < BT_MAXSIZES;) {
		sz[nsz++] = strtoull(p, NULL, 10);
		p = strchr(p, ',');
		if (!p)
			break;
		p++;
	}
	if (reps < 1)
		reps = 1;
	if (gpu_init(err, sizeof(err))) {
		printf("bench_threshold: skipped, no GPU: %s\n", err);
		return 0;
	}
	char desc[300];
	gpu_describe(desc, sizeof(desc));
	printf("GPU: %s\n\n", desc);

	static double cpu[BT_NQ][BT_MAXSIZES], cold[BT_NQ][BT_MAXSIZES],
	    warm[BT_NQ][BT_MAXSIZES];
	for (int z = 0; z < nsz; z++) {
		char path[4200];
		gpmdb *db = NULL;
		gpmdb_options go = {.backend = "cpu"};
		snprintf(path, sizeof(path), "%s/bench_threshold_%d.pool", dir,
			 (int)getpid());
		unlink(path);
		if (gpmdb_open_v2(path, &db,
				  GPMDB_OPEN_READWRITE | GPMDB_OPEN_CREATE,
				  &go) != GPMDB_OK)
			bench_die(path, db ? gpmdb_errmsg(db) : "open failed");
		bt_load(db, sz[z]);
		for (int q = 0; q < BT_NQ; q++) {
			double t, best;
			bt_exec(db, "PRAGMA backend = cpu");
			char *ref = bt_query(db, bt_sql[q], &t);
			best = t;
			for (int r = 1; r < reps; r++) {
				free(bt_query(db, bt_sql[q], &t));
				best = fmin(best, t);
			}
			cpu[q][z] = best;
			bt_exec(db, "PRAGMA backend = gpu");
			/* cold: a write makes every cached column stale */
			cold[q][z] = INFINITY;
			warm[q][z] = INFINITY;
			for (int r = 0; r < reps; r++) {
				bt_exec(db, "INSERT INTO scratch VALUES (1)");
				char *g = bt_query(db, bt_sql[q], &t);
				cold[q][z] = fmin(cold[q][z], t);
				char *w = bt_query(db, bt_sql[q], &t);
				warm[q][z] = fmin(warm[q][z], t);
				for (int c = 0; c < 2; c++) {
					const char *o = c ? w : g;
					if (strcmp(o, ref)) {
						printf("**MISMATCH** %s at "
						       "%" PRIu64
						       " rows: GPU %s differs "
						       "from the CPU\n",
						       bt_names[q], sz[z],
						       c ? "warm" : "cold");
						bad = 1;
					}
				}
				free(g);
				free(w);
			}
			free(ref);
		}
		gpmdb_close(db);
		unlink(path);
		fprintf(stderr, "%" PRIu64 " rows done\n", sz[z]);
	}

	printf("Times in ms, best of %d (CPU backend: all cores; GPU cold: "
	       "columns uploaded from the pool; warm: cached).\n\n",
	       reps);
	for (int q = 0; q < BT_NQ; q++) {
		printf("%s: `%s`\n\n| rows | CPU | GPU cold | GPU warm | "
		       "faster |\n| ---: | ---: | ---: | ---: | --- |\n",
		       bt_names[q], bt_sql[q]);
		for (int z = 0; z < nsz; z++)
			printf(
			    "| %" PRIu64 " | %.3f | %.3f | %.3f | %s |\n",
			    sz[z], cpu[q][z] * 1e3, cold[q][z] * 1e3,
			    warm[q][z] * 1e3,
			    warm[q][z] < cpu[q][z]
				? (cold[q][z] < cpu[q][z] ? "GPU" : "GPU warm")
				: "CPU");
		int cw = bt_cross(warm[q], cpu[q], nsz),
		    cc = bt_cross(cold[q], cpu[q], nsz);
		printf("\ncrossover: warm from ");
		if (cw < nsz)
			printf("%" PRIu64, sz[cw]);
		else
			printf("never");
		printf(" rows, cold from ");
		if (cc < nsz)
			printf("%" PRIu64, sz[cc]);
		else
			printf("never");
		printf(" rows\n\n");
	}
	return bad;
}
