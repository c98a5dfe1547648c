/*
 * bench_append - the storage engine's bulk-append benchmark.
 *
 * Appends R rows x C INT columns (default 50M x 7, gpDB's table shape)
 * through the storage API in one transaction to a fresh pool, and beside
 * it measures the limit: copying the same bytes into a fresh libpmem
 * mapping with memcpy + pmem_persist on 1, 2, 4 ... N threads.  Both write
 * into newly allocated file pages, so both pay the same page-fault cost.
 * Prints a markdown table; tpc/run_bench.sh saves it under tpc/results/.
 *
 * Usage: bench_append [--rows R] [--cols C] [--dir DIR] [--reps K]
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libpmem.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../storage/storage.h"

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void die(const char *what, const char *why)
{
	fprintf(stderr, "bench_append: %s: %s\n", what, why);
	exit(1);
}

/* Copies ncols columns of nrows int32 into a fresh mapping of the same
 * layout as one column array after another, on nthreads threads; returns
 * seconds (best of reps).  Each thread copies one contiguous slice of
 * every column and persists it, as a parallel append would. */
static double bench_limit(const char *dir, int32_t **cols, int ncols,
			  uint64_t nrows, int nthreads, int reps)
{
	double best = 1e30;
	size_t colbytes = nrows * sizeof(int32_t);
	size_t len = colbytes * ncols;
	char path[4096];

	for (int r = 0; r < reps; r++) {
		size_t mapped;
		int is_pmem;
		snprintf(path, sizeof(path), "%s/bench_limit_%d.pool", dir,
			 (int)getpid());
		unlink(path);
		char *dst = pmem_map_file(path, len, PMEM_FILE_CREATE, 0600,
					  &mapped, &is_pmem);
		if (!dst)
			die(path, pmem_errormsg());
		double t0 = now_s();
#pragma omp parallel num_threads(nthreads)
		{
			int t = omp_get_thread_num(), n = omp_get_num_threads();
			uint64_t lo = nrows * t / n, hi = nrows * (t + 1) / n;
			for (int c = 0; c < ncols; c++) {
				char *d = dst + c * colbytes + lo * 4;
				memcpy(d, cols[c] + lo, (hi - lo) * 4);
				pmem_persist(d, (hi - lo) * 4);
			}
		}
		double t = now_s() - t0;
		if (t < best)
			best = t;
		if (pmem_unmap(dst, mapped) != 0)
			die("pmem_unmap", strerror(errno));
		unlink(path);
	}
	return best;
}

/* One transaction: begin, append all rows, commit.  Returns seconds. */
static double bench_append(const char *dir, int32_t **cols, int ncols,
			   uint64_t nrows, int nthreads, uint64_t *persisted)
{
	char path[4096], err[512];
	stg_pool *p;
	stg_open_opts o = {.create = true, .durability = STG_DUR_PMEM};
	stg_column_def defs[64];
	char names[64][16];
	stg_col_batch batch[64];
	uint32_t tid;

	snprintf(path, sizeof(path), "%s/bench_append_%d.pool", dir,
		 (int)getpid());
	unlink(path);
	if (stg_open(path, &o, &p, err, sizeof(err)) != GPMDB_OK)
		die(path, err);
	for (int c = 0; c < ncols; c++) {
		snprintf(names[c], sizeof(names[c]), "c%d", c);
		defs[c] = (stg_column_def){.name = names[c], .type = STG_T_INT};
		batch[c] = (stg_col_batch){.values = cols[c], .nulls = NULL};
	}
	if (stg_begin(p) || stg_table_create(p, "t", defs, ncols, "", &tid) ||
	    stg_commit(p))
		die("create table", stg_errmsg(p));

	omp_set_num_threads(nthreads);
	double t0 = now_s();
	if (stg_begin(p) || stg_append(p, tid, batch, nrows) || stg_commit(p))
		die("append", stg_errmsg(p));
	double t = now_s() - t0;

	stg_stats st;
	stg_get_stats(p, &st);
	*persisted = st.last_txn_bytes_persisted;
	if (stg_row_count(p, tid) != nrows)
		die("append", "row count after commit is wrong");
	stg_close(p);
	unlink(path);
	return t;
}

int main(int argc, char **argv)
{
	uint64_t nrows = 50000000;
	int ncols = 7, reps = 2;
	const char *dir = "/dev/shm";

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--rows") && i + 1 < argc)
			nrows = strtoull(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--cols") && i + 1 < argc)
			ncols = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--dir") && i + 1 < argc)
			dir = argv[++i];
		else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
			reps = atoi(argv[++i]);
		else {
			fprintf(stderr, "usage: bench_append [--rows R] "
					"[--cols C] [--dir DIR] [--reps K]\n");
			return 2;
		}
	}
	if (ncols < 1 || ncols > 64 || nrows == 0 || reps < 1)
		die("arguments", "need 1 <= cols <= 64, rows > 0, reps > 0");

	/* gpDB-like values: a key column and pseudo-random others. */
	int32_t *cols[64];
	uint64_t x = 88172645463325252ull;
	for (int c = 0; c < ncols; c++) {
		cols[c] = malloc(nrows * sizeof(int32_t));
		if (!cols[c])
			die("malloc", strerror(errno));
		for (uint64_t r = 0; r < nrows; r++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			cols[c][r] = c == 0 ? (int32_t)r : (int32_t)x;
		}
	}

	int maxt = omp_get_num_procs();
	double bytes = (double)nrows * ncols * 4;
	printf("## Bulk append: %" PRIu64 " rows x %d INT columns (%.2f GB) "
	       "into %s\n\n",
	       nrows, ncols, bytes / 1e9, dir);
	printf(
	    "| what | threads | seconds | M rows/s | GB/s | %% of limit |\n");
	printf("| --- | ---: | ---: | ---: | ---: | ---: |\n");

	double limit_best = 0;
	for (int t = 1;; t = t * 2 > maxt && t < maxt ? maxt : t * 2) {
		double s = bench_limit(dir, cols, ncols, nrows, t, reps);
		double gbs = bytes / s / 1e9;
		if (gbs > limit_best)
			limit_best = gbs;
		printf("| limit: memcpy + pmem_persist | %d | %.3f | %.1f | "
		       "%.2f | |\n",
		       t, s, nrows / s / 1e6, gbs);
		fflush(stdout);
		if (t >= maxt)
			break;
	}
	int tlist[2] = {1, maxt};
	for (int i = 0; i < (maxt > 1 ? 2 : 1); i++) {
		double best = 1e30;
		uint64_t persisted = 0;
		for (int r = 0; r < reps; r++) {
			double s = bench_append(dir, cols, ncols, nrows,
						tlist[i], &persisted);
			if (s < best)
				best = s;
		}
		double gbs = bytes / best / 1e9;
		printf("| gpmdb stg_append (1 txn, pmem) | %d | %.3f | %.1f | "
		       "%.2f | %.0f%% |\n",
		       tlist[i], best, nrows / best / 1e6, gbs,
		       100 * gbs / limit_best);
		printf("<!-- bytes persisted by the append: %" PRIu64
		       " (%.3fx the data) -->\n",
		       persisted, persisted / bytes);
		fflush(stdout);
	}
	for (int c = 0; c < ncols; c++)
		free(cols[c]);
	return 0;
}
