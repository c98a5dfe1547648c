/*
 * bench_conc.c - what a live reader costs the writer (storage/lock.c).
 *
 * A writer runs point UPDATEs by key (autocommit, one row each) on a
 * table of N rows for a fixed time, alone, then beside a reader process
 * that runs point SELECTs by key in a loop (short snapshots), then beside
 * a reader that scans the whole table in a loop (long snapshots).  In
 * msync mode (a file system) readers never block the writer, but while
 * one is on the commits stay in <db>-wal instead of going into the file;
 * in pmem mode (/dev/shm) the writer goes beside a reader that reads
 * (storage/wal.c "Beside readers": the pool mapped privately, commits
 * through the log) and writes in place when alone.  Prints the writer's
 * and the reader's operations per second.
 *
 *   bench_conc [--rows N] [--secs S] [--disk DIR] [--shm DIR] [--gpu B]
 *
 * --gpu B: instead, the writer on backend = gpu runs UPDATEs of B rows by
 * key range on a pmem-mode table of N rows (appended): alone its kernels
 * write in place; beside a reader the GPU computes and the host writes
 * through the log (CAP).  Prints the GPU and CAP batches of each run.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_util.h"
#include "gpmdb.h"

const char bench_prog[] = "bench_conc";
static char self_exe[4096];
static int shm_fd = -1;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static gpmdb *open_db(const char *path, const char *dur, int ro)
{
	gpmdb *db = NULL;
	gpmdb_options o = {.durability = dur};

	if (gpmdb_open_v2(path, &db,
			  ro ? GPMDB_OPEN_READONLY
			     : GPMDB_OPEN_READWRITE | GPMDB_OPEN_CREATE,
			  ro ? NULL : &o)) {
		fprintf(stderr, "open %s: %s\n", path, gpmdb_errmsg(db));
		exit(1);
	}
	gpmdb_busy_timeout(db, 60000);
	return db;
}

static void must(gpmdb *db, const char *sql)
{
	char *err = NULL;

	if (gpmdb_exec(db, sql, NULL, NULL, &err)) {
		fprintf(stderr, "%s: %s\n", sql, err ? err : "?");
		exit(1);
	}
}

static void load(const char *path, const char *dur, long rows)
{
	gpmdb *db;
	gpmdb_stmt *st = NULL;
	char side[4400];

	unlink(path);
	snprintf(side, sizeof(side), "%s-wal", path);
	unlink(side);
	db = open_db(path, dur, 0);
	must(db, "CREATE TABLE kv(k INTEGER PRIMARY KEY, v INT, pad TEXT)");
	must(db, "BEGIN");
	if (gpmdb_prepare(db, "INSERT INTO kv VALUES (?, ?, 'padding text')",
			  -1, &st, NULL))
		exit(1);
	for (long i = 0; i < rows; i++) {
		gpmdb_bind_int64(st, 1, i);
		gpmdb_bind_int64(st, 2, i);
		if (gpmdb_step(st) != GPMDB_DONE)
			exit(1);
		gpmdb_reset(st);
	}
	gpmdb_finalize(st);
	must(db, "COMMIT");
	gpmdb_close(db);
}

/* Reader kind 1: point SELECTs; 2: full scans; until stop. */
static void reader(const char *path, int kind, long rows, volatile long *count,
		   volatile int *stop)
{
	gpmdb *db = open_db(path, NULL, 1);
	gpmdb_stmt *st = NULL;
	long i = 0;

	if (gpmdb_prepare(db,
			  kind == 1 ? "SELECT v FROM kv WHERE k = ?"
				    : "SELECT sum(v), count(*) FROM kv",
			  -1, &st, NULL))
		exit(1);
	while (!*stop) {
		if (kind == 1)
			gpmdb_bind_int64(st, 1, (i * 7919) % rows);
		if (gpmdb_step(st) != GPMDB_ROW) {
			fprintf(stderr, "reader: %s\n", gpmdb_errmsg(db));
			exit(1);
		}
		gpmdb_reset(st);
		(*count)++;
		i++;
	}
	gpmdb_finalize(st);
	gpmdb_close(db);
	exit(0);
}

/* The reader process of kind (0: none), exec'd: OpenMP's threads do
 * not survive a fork.  Its pid, or 0. */
static pid_t spawn_reader(const char *path, long rows, int kind)
{
	char k[16], r[32], fd[32];
	pid_t pid;

	if (!kind)
		return 0;
	snprintf(k, sizeof(k), "%d", kind);
	snprintf(r, sizeof(r), "%ld", rows);
	snprintf(fd, sizeof(fd), "%d", shm_fd);
	pid = fork();
	if (pid == 0) {
		execl(self_exe, self_exe, "--reader", k, r, path, fd,
		      (char *)NULL);
		_exit(127);
	}
	usleep(200000);
	return pid;
}

/* The writer's loop: st run for secs from now, bound to a key (batch 0:
 * `k = ?`, spread over rows) or a key range of batch rows (`k BETWEEN ?
 * AND ?`); the statements run, *end the time it stopped. */
static long step_for(gpmdb *db, gpmdb_stmt *st, double secs, long rows,
		     long batch, double *end)
{
	double t0 = now_s(), t;
	long n = 0;

	do {
		if (batch) {
			long lo = (n * 7919 * batch) % (rows - batch);

			gpmdb_bind_int64(st, 1, lo);
			gpmdb_bind_int64(st, 2, lo + batch - 1);
		} else {
			gpmdb_bind_int64(st, 1, (n * 104729) % rows);
		}
		if (gpmdb_step(st) != GPMDB_DONE) {
			fprintf(stderr, "writer: %s\n", gpmdb_errmsg(db));
			exit(1);
		}
		gpmdb_reset(st);
		n++;
		t = now_s();
	} while (t - t0 < secs);
	*end = t;
	return n;
}

static const char *kind_name(int kind)
{
	return kind == 0   ? "alone"
	       : kind == 1 ? "reader: point SELECTs"
			   : "reader: full scans";
}

static void run(const char *path, const char *dur, long rows, double secs,
		int kind, volatile long *shared)
{
	gpmdb *db;
	gpmdb_stmt *st = NULL;
	pid_t pid;
	long n = 0;
	double t0, t;

	shared[0] = 0;
	shared[1] = 0;
	pid = spawn_reader(path, rows, kind);
	db = open_db(path, dur, 0);
	if (gpmdb_prepare(db, "UPDATE kv SET v = v + 1 WHERE k = ?", -1, &st,
			  NULL))
		exit(1);
	long r0 = shared[0];
	t0 = now_s();
	n = step_for(db, st, secs, rows, 0, &t);
	long r1 = shared[0];
	gpmdb_finalize(st);
	gpmdb_close(db);
	if (pid) {
		shared[1] = 1;
		waitpid(pid, NULL, 0);
	}
	printf("| %-6s | %-22s | %9.0f | %9.1f | %10.0f |\n", dur,
	       kind_name(kind), n / (t - t0), (t - t0) / n * 1e6,
	       (r1 - r0) / (t - t0));
}

/* --gpu: kv(k INTEGER PRIMARY KEY, v BIGINT) of rows, appended. */
static void load_gpu(const char *path, long rows)
{
	const long batch = 1000000;
	int64_t *k = malloc(sizeof(int64_t) * batch);
	gpmdb_column_array ca[2];
	char side[4400];
	gpmdb *db;

	unlink(path);
	snprintf(side, sizeof(side), "%s-wal", path);
	unlink(side);
	db = open_db(path, "pmem", 0);
	must(db, "CREATE TABLE kv(k INTEGER PRIMARY KEY, v BIGINT)");
	for (int c = 0; c < 2 && k; c++) {
		ca[c].type = GPMDB_ARRAY_INT64;
		ca[c].values = k;
		ca[c].nulls = NULL;
	}
	for (long r = 0; k && r < rows; r += batch) {
		long n = rows - r < batch ? rows - r : batch;

		for (long i = 0; i < n; i++)
			k[i] = r + i;
		if (gpmdb_append_columns(db, "kv", 2, NULL, ca, n)) {
			fprintf(stderr, "append: %s\n", gpmdb_errmsg(db));
			exit(1);
		}
	}
	free(k);
	gpmdb_close(db);
}

/* A row of PRAGMA gpu_write_stats. */
static long long write_stat(gpmdb *db, const char *name)
{
	return (long long)bench_gpmdb_stat(db, "gpu_write_stats", name);
}

/* --gpu: the writer on backend = gpu, UPDATEs of batch rows by key
 * range in pmem mode: the kernels write in place alone, the GPU
 * computes and the host writes (CAP) beside readers. */
static void run_gpu(const char *path, long rows, long batch, double secs,
		    int kind, volatile long *shared)
{
	gpmdb *db;
	gpmdb_stmt *st = NULL;
	pid_t pid;
	long n = 0;
	long long g0, c0, b0;
	double t0, t;

	shared[0] = 0;
	shared[1] = 0;
	pid = spawn_reader(path, rows, kind);
	db = open_db(path, "pmem", 0);
	must(db, "PRAGMA backend = gpu");
	if (gpmdb_prepare(db, "UPDATE kv SET v = v + 1 WHERE k BETWEEN ? AND ?",
			  -1, &st, NULL))
		exit(1);
	g0 = write_stat(db, "gpu_batches");
	c0 = write_stat(db, "cap_batches");
	b0 = 0;
	{
		gpmdb_stmt *b = NULL;
		if (!gpmdb_prepare(db, "PRAGMA beside_readers", -1, &b, NULL) &&
		    gpmdb_step(b) == GPMDB_ROW)
			b0 = gpmdb_column_int64(b, 0);
		gpmdb_finalize(b);
	}
	long r0 = shared[0];
	t0 = now_s();
	n = step_for(db, st, secs, rows, batch, &t);
	long r1 = shared[0];
	gpmdb_finalize(st);
	printf("| gpu    | %-22s | %9.1f | %9.2f | %10.0f | %lld / %lld |\n",
	       kind_name(kind), n / (t - t0), (t - t0) / n * 1e3,
	       (r1 - r0) / (t - t0), write_stat(db, "gpu_batches") - g0,
	       write_stat(db, "cap_batches") - c0);
	(void)b0;
	gpmdb_close(db);
	if (pid) {
		shared[1] = 1;
		waitpid(pid, NULL, 0);
	}
}

int main(int argc, char **argv)
{
	long rows = 100000, gpu_batch = 0;
	double secs = 3;
	const char *disk = "/tmp", *shm = "/dev/shm";
	char path[4200];
	volatile long *shared;

	if (argc == 6 && !strcmp(argv[1], "--reader")) {
		/* the reader: kind, rows, path, the counters' memfd */
		shared = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED,
			      atoi(argv[5]), 0);
		if (shared == MAP_FAILED)
			return 1;
		reader(argv[4], atoi(argv[2]), atol(argv[3]), &shared[0],
		       (volatile int *)&shared[1]);
	}
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--rows") && i + 1 < argc)
			rows = atol(argv[++i]);
		else if (!strcmp(argv[i], "--secs") && i + 1 < argc)
			secs = atof(argv[++i]);
		else if (!strcmp(argv[i], "--disk") && i + 1 < argc)
			disk = argv[++i];
		else if (!strcmp(argv[i], "--shm") && i + 1 < argc)
			shm = argv[++i];
		else if (!strcmp(argv[i], "--gpu") && i + 1 < argc)
			gpu_batch = atol(argv[++i]);
		else {
			fprintf(stderr,
				"usage: bench_conc [--rows N] [--secs S] "
				"[--disk DIR] [--shm DIR] [--gpu BATCH]\n");
			return 2;
		}
	}
	shm_fd = memfd_create("bench_conc", 0);
	if (shm_fd < 0 || ftruncate(shm_fd, 4096) != 0)
		return 1;
	shared =
	    mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, shm_fd, 0);
	if (shared == MAP_FAILED)
		return 1;
	if (readlink("/proc/self/exe", self_exe, sizeof(self_exe) - 1) <= 0)
		return 1;
	if (gpu_batch > 0) {
		/* the GPU writer in pmem mode, alone and beside readers */
		snprintf(path, sizeof(path), "%s/gpmdb_bench_conc_gpu_%d.db",
			 shm, (int)getpid());
		load_gpu(path, rows);
		printf(
		    "writer: backend = gpu, UPDATE of %ld rows by key "
		    "range, autocommit, %ld rows, pmem mode, %.1f s each\n\n"
		    "| writer | beside                 | writer/s  | ms/update "
		    "| reader/s   | GPU / CAP batches |\n| --- | --- | ---: | "
		    "---: | ---: | --- |\n",
		    gpu_batch, rows, secs);
		for (int kind = 0; kind < 3; kind++)
			run_gpu(path, rows, gpu_batch, secs, kind, shared);
		unlink(path);
		return 0;
	}
	printf("writer: point UPDATE by key, autocommit, %ld rows, %.1f s "
	       "each\n\n",
	       rows, secs);
	printf("| mode   | beside                 | writer/s  | us/update | "
	       "reader/s   |\n");
	printf("| ---    | ---                    | ---       | ---       | "
	       "---        |\n");
	for (int m = 0; m < 2; m++) {
		const char *dur = m ? "pmem" : "msync";

		snprintf(path, sizeof(path), "%s/gpmdb_bench_conc_%d.db",
			 m ? shm : disk, (int)getpid());
		load(path, dur, rows);
		for (int kind = 0; kind < 3; kind++)
			run(path, dur, rows, secs, kind, shared);
		unlink(path);
	}
	return 0;
}
