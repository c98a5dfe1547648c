/*
 * tpchgen - TPC-H data: generate .tbl files, generate into a gpmdb pool,
 * or load dbgen's .tbl[.gz] files into a pool.  See docs/tpch.md.
 *
 *   tpchgen -s SF [-T TABLE]... [-o DIR]          .tbl files in DIR
 *   tpchgen -s SF --pool FILE [-T TABLE]...       generate into a pool
 *   tpchgen --load DIR --pool FILE [-T TABLE]...  load DIR/T.tbl[.gz]
 *   tpchgen -s SF --null                          generate, keep nothing
 *
 * Options: -j N threads (default: all), --chunk N units per batch,
 * --durability auto|pmem|msync|off (pool), -q quiet.
 */
#include <errno.h>
#include <getopt.h>
#include <omp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "tbl.h"
#include "tpch_pool.h"
#include "tpchgen.h"

static const char *prog = "tpchgen";

typedef struct {
	double sf;
	bool have_sf;
	const char *outdir;
	const char *pool;
	const char *load;
	bool null_out;
	bool quiet;
	int nthreads;
	uint64_t chunk;
	stg_durability durability;
	bool tables[TPCH_NTABLES];
	bool some_tables;
} options;

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void usage(int status)
{
	FILE *f = status ? stderr : stdout;
	fprintf(f,
		"usage: %s -s SF [-T TABLE]... [-o DIR]\n"
		"       %s -s SF --pool FILE [-T TABLE]...\n"
		"       %s --load DIR --pool FILE [-T TABLE]...\n"
		"       %s -s SF --null [-T TABLE]...\n"
		"options: -j THREADS, --chunk UNITS, --durability "
		"auto|pmem|msync|off, -q\n"
		"tables: region nation part supplier partsupp customer orders "
		"lineitem\n",
		prog, prog, prog, prog);
	exit(status);
}

static void die(const char *fmt, const char *a, const char *b)
{
	fprintf(stderr, "%s: ", prog);
	fprintf(stderr, fmt, a, b);
	fputc('\n', stderr);
	exit(1);
}

static void report(const options *o, const char *table, uint64_t rows,
		   double secs)
{
	if (!o->quiet)
		fprintf(stderr, "%-9s %10llu rows %8.2f s %8.2f M rows/s\n",
			table, (unsigned long long)rows, secs,
			secs > 0 ? rows / secs / 1e6 : 0.0);
}

/* ---- Generation to .tbl files or nowhere ------------------------------ */

static int gen_files(const options *o)
{
	uint64_t total = 0;
	double t_all = now_s();
	tpch_batch b;

	if (!o->null_out && mkdir(o->outdir, 0777) != 0 && errno != EEXIST)
		die("%s: %s", o->outdir, strerror(errno));
	for (int t = 0; t < TPCH_NTABLES; t++) {
		if (!o->tables[t])
			continue;
		const char *name = tpch_table_name(t);
		FILE *f = NULL;
		char path[4096];
		if (!o->null_out) {
			snprintf(path, sizeof(path), "%s/%s.tbl", o->outdir,
				 name);
			if (!(f = fopen(path, "w")))
				die("%s: %s", path, strerror(errno));
		}
		if (tpch_batch_init_table(&b, t, o->chunk) != GPMDB_OK)
			die("%s%s: out of memory", name, "");
		double t0 = now_s();
		uint64_t units = tpch_units(t, o->sf), rows = 0;
		for (uint64_t lo = 0; lo < units; lo += o->chunk) {
			uint64_t hi =
			    lo + o->chunk < units ? lo + o->chunk : units;
			int rc =
			    tpch_generate(t, o->sf, lo, hi, o->nthreads, &b);
			if (rc != GPMDB_OK)
				die("%s: generation failed (%s)", name,
				    rc == GPMDB_NOMEM ? "out of memory"
						      : "bad range");
			if (f && tbl_write(f, &b, o->nthreads) != GPMDB_OK)
				die("%s: %s", path, strerror(errno));
			rows += b.nrows;
		}
		if (f && fclose(f) != 0)
			die("%s: %s", path, strerror(errno));
		tpch_batch_free(&b);
		report(o, name, rows, now_s() - t0);
		total += rows;
	}
	report(o, "total", total, now_s() - t_all);
	return 0;
}

/* ---- Pools ------------------------------------------------------------ */

static stg_pool *pool_open(const options *o)
{
	stg_open_opts oo = {.create = true, .durability = o->durability};
	char err[512];
	stg_pool *p;

	if (stg_open(o->pool, &oo, &p, err, sizeof(err)) != GPMDB_OK)
		die("%s: %s", o->pool, err);
	return p;
}

/* The pool's tables encoded (VACUUM, storage/encode.c), part of the
 * load's time; GPMDB_TPCH_PLAIN=1 leaves them plain. */
static void tg_vacuum(const options *o, stg_pool *p)
{
	const char *plain = getenv("GPMDB_TPCH_PLAIN");
	double t0 = now_s();

	if (plain && !strcmp(plain, "1"))
		return;
	if (stg_vacuum(p, NULL, NULL) != GPMDB_OK) {
		char msg[600];

		snprintf(msg, sizeof(msg), "%s", stg_errmsg(p));
		stg_close(p);
		die("%s: VACUUM: %s", o->pool, msg);
	}
	report(o, "vacuum", 0, now_s() - t0);
}

static int gen_pool(const options *o)
{
	stg_pool *p = pool_open(o);
	uint64_t total = 0, rows;
	double t_all = now_s();
	char err[1024];

	for (int t = 0; t < TPCH_NTABLES; t++) {
		if (!o->tables[t])
			continue;
		double t0 = now_s();
		if (tpch_pool_generate(p, t, o->sf, o->chunk, o->nthreads,
				       &rows, err, sizeof(err)) != GPMDB_OK) {
			stg_close(p);
			die("%s: %s", o->pool, err);
		}
		report(o, tpch_table_name(t), rows, now_s() - t0);
		total += rows;
	}
	tg_vacuum(o, p);
	report(o, "total", total, now_s() - t_all);
	if (stg_close(p) != GPMDB_OK)
		die("%s: close failed%s", o->pool, "");
	return 0;
}

static int load_pool(const options *o)
{
	stg_pool *p = NULL;
	uint64_t total = 0, rows;
	int found = 0;
	double t_all = now_s();
	char err[1024];

	for (int t = 0; t < TPCH_NTABLES; t++) {
		if (!o->tables[t])
			continue;
		const char *name = tpch_table_name(t);
		char path[4096];
		struct stat st;
		snprintf(path, sizeof(path), "%s/%s.tbl", o->load, name);
		if (stat(path, &st) != 0) {
			strcat(path, ".gz");
			if (stat(path, &st) != 0) {
				if (o->some_tables)
					die("%s: no %s.tbl or .tbl.gz", o->load,
					    name);
				if (!o->quiet)
					fprintf(stderr,
						"%s: %s: no file, skipped\n",
						prog, name);
				continue;
			}
		}
		found++;
		if (!p)
			p = pool_open(o);
		double t0 = now_s();
		if (tpch_pool_load(p, t, path, o->chunk, &rows, err,
				   sizeof(err)) != GPMDB_OK) {
			stg_close(p);
			die("%s%s", err, "");
		}
		report(o, name, rows, now_s() - t0);
		total += rows;
	}
	if (!found)
		die("%s: no .tbl or .tbl.gz files%s", o->load, "");
	tg_vacuum(o, p);
	report(o, "total", total, now_s() - t_all);
	if (stg_close(p) != GPMDB_OK)
		die("%s: close failed%s", o->pool, "");
	return 0;
}

/* ---- Options ---------------------------------------------------------- */

static void add_tables(options *o, const char *list)
{
	char *copy = strdup(list), *save = NULL;
	for (char *s = strtok_r(copy, ",", &save); s;
	     s = strtok_r(NULL, ",", &save)) {
		int t = tpch_table_find(s);
		if (t < 0)
			die("unknown table '%s'%s", s, "");
		o->tables[t] = true;
	}
	o->some_tables = true;
	free(copy);
}

int main(int argc, char **argv)
{
	enum { OPT_POOL = 256, OPT_LOAD, OPT_NULL, OPT_CHUNK, OPT_DUR };
	static const struct option longopts[] = {
	    {"scale", required_argument, NULL, 's'},
	    {"table", required_argument, NULL, 'T'},
	    {"output", required_argument, NULL, 'o'},
	    {"threads", required_argument, NULL, 'j'},
	    {"quiet", no_argument, NULL, 'q'},
	    {"help", no_argument, NULL, 'h'},
	    {"pool", required_argument, NULL, OPT_POOL},
	    {"load", required_argument, NULL, OPT_LOAD},
	    {"null", no_argument, NULL, OPT_NULL},
	    {"chunk", required_argument, NULL, OPT_CHUNK},
	    {"durability", required_argument, NULL, OPT_DUR},
	    {NULL, 0, NULL, 0},
	};
	options o = {.outdir = ".", .chunk = 1 << 18};
	char *end;
	int c;

	while ((c = getopt_long(argc, argv, "s:T:o:j:qh", longopts, NULL)) !=
	       -1) {
		switch (c) {
		case 's':
			o.sf = strtod(optarg, &end);
			if (*end || end == optarg)
				die("bad scale factor '%s'%s", optarg, "");
			o.have_sf = true;
			break;
		case 'T':
			add_tables(&o, optarg);
			break;
		case 'o':
			o.outdir = optarg;
			break;
		case 'j':
			o.nthreads = atoi(optarg);
			break;
		case 'q':
			o.quiet = true;
			break;
		case 'h':
			usage(0);
			break;
		case OPT_POOL:
			o.pool = optarg;
			break;
		case OPT_LOAD:
			o.load = optarg;
			break;
		case OPT_NULL:
			o.null_out = true;
			break;
		case OPT_CHUNK:
			o.chunk = strtoull(optarg, &end, 10);
			if (*end || o.chunk == 0)
				die("bad chunk '%s'%s", optarg, "");
			break;
		case OPT_DUR:
			if (stg_durability_parse(optarg, &o.durability) !=
			    GPMDB_OK)
				die("bad durability '%s'%s", optarg, "");
			break;
		default:
			usage(2);
		}
	}
	if (optind != argc)
		usage(2);
	if (!o.some_tables)
		for (int t = 0; t < TPCH_NTABLES; t++)
			o.tables[t] = true;
	if (o.nthreads <= 0)
		o.nthreads = omp_get_max_threads();

	if (o.load) {
		if (!o.pool || o.have_sf)
			usage(2);
		return load_pool(&o);
	}
	if (!o.have_sf)
		usage(2);
	char err[128];
	if (tpch_sf_check(o.sf, err, sizeof(err)) != GPMDB_OK)
		die("%s%s", err, "");
	if (o.pool)
		return gen_pool(&o);
	return gen_files(&o);
}
