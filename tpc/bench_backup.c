/*
 * bench_backup.c - full and incremental backups (storage/backup.c) of a
 * pmem-mode pool on /dev/shm to a disk directory.
 *
 * t(id INTEGER PRIMARY KEY, a, b, c BIGINT) with N rows.  Measures the
 * disk's direct write rate (O_DIRECT, 64 MiB writes), `cp` of the pool
 * plus an fsync, a full backup (gpmdb_backup_*, fdatasynced), an
 * incremental backup after updating 1% of the rows as one contiguous
 * range and after updating 1% of the rows at random, and the batch
 * UPDATE throughput of a writer (10,000 rows per statement by key range)
 * alone and beside a process taking full backups back to back (from the
 * phase's start until the backup under way after S seconds is done: the
 * writer runs beside whole backups; the process and its connection stay
 * open through every phase, so that the alone and beside phases differ
 * only by the backups), and the open of the copy that applies its
 * deltas (storage/delta.c).  Prints a Markdown table.
 *
 *   bench_backup [--rows N] [--secs S] [--rounds R] [--shm DIR]
 *		  [--disk DIR] [--backend cpu|gpu|auto] [--keep] [--reuse]
 *		  [--phases]
 *
 * --backend sets the writer connection's PRAGMA backend after the load
 * (its UPDATEs, the incremental copies' ones too; gpu with gpu_strict):
 * gpu measures the GPU write kernels alone and beside backups and
 * readers (beside readers the GPU computes and the host writes into the
 * connection's private pages, docs/ARCHITECTURE.md).
 *
 * --rounds R (default 3) repeats the backups (full, then the two
 * incremental ones) and the writer's three phases (alone, beside the
 * backups, beside a reader process that holds read transactions,
 * alternated) R times and reports medians: one run of each
 * varied about 15% from run to run on the GPU machine's host, as much as
 * the aims' margins.
 *
 * --phases adds, per writer phase, the milliseconds a statement spent in
 * each write phase (PRAGMA gpu_write_stats phase_*, read after every
 * statement: the pragma's own time goes to the next statement, in every
 * phase alike), to find what a backup beside the writer slows.
 *
 * --keep leaves the pool in place at the end, --reuse takes such a pool
 * (of the same --rows) instead of loading one: several runs, with
 * GPMDB_BACKUP_* settings, on one pool.
 */
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_util.h"
#include "gpmdb.h"

const char bench_prog[] = "bench_backup";

static char pool[4096], dest[4096], self[4096];

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static gpmdb *open_db(const char *path, bool create)
{
	gpmdb *db = NULL;
	gpmdb_options o = {.durability = "pmem"};

	if (gpmdb_open_v2(
		path, &db,
		GPMDB_OPEN_READWRITE | (create ? GPMDB_OPEN_CREATE : 0), &o)) {
		fprintf(stderr, "open %s: %s\n", path, gpmdb_errmsg(db));
		exit(1);
	}
	gpmdb_busy_timeout(db, 600000);
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

static void rm_db(const char *p)
{
	char side[4200];

	unlink(p);
	snprintf(side, sizeof(side), "%s-wal", p);
	unlink(side);
	snprintf(side, sizeof(side), "%s-shm", p);
	unlink(side);
}

/* One backup; seconds, *st its status. */
static double backup(gpmdb *db, const char *to, int flags,
		     gpmdb_backup_stat *st)
{
	double t0 = now_s();
	gpmdb_backup *bk = gpmdb_backup_init_v2(to, db, "main", flags);

	if (!bk || gpmdb_backup_step(bk, -1) != GPMDB_DONE) {
		fprintf(stderr, "backup to %s: %s\n", to, gpmdb_errmsg(db));
		exit(1);
	}
	gpmdb_backup_status(bk, st);
	if (gpmdb_backup_finish(bk)) {
		fprintf(stderr, "backup to %s: %s\n", to, gpmdb_errmsg(db));
		exit(1);
	}
	return now_s() - t0;
}

/* The disk's direct write rate, MB/s (1 GiB in 64 MiB writes). */
static double dd_rate(const char *dir)
{
	char path[4200];
	size_t n = 64u << 20;
	void *buf = NULL;
	double t0, t;
	int fd;

	snprintf(path, sizeof(path), "%s/gpmdb_bench_dd.tmp", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_DIRECT, 0644);
	if (fd < 0 || posix_memalign(&buf, 4096, n)) {
		perror(path);
		exit(1);
	}
	memset(buf, 7, n);
	t0 = now_s();
	for (int i = 0; i < 16; i++)
		if (write(fd, buf, n) != (ssize_t)n) {
			perror(path);
			exit(1);
		}
	if (fdatasync(fd)) {
		perror(path);
		exit(1);
	}
	t = now_s() - t0;
	close(fd);
	unlink(path);
	free(buf);
	return 16.0 * 64 * 1048576 / 1e6 / t;
}

/* An integer pragma: beside_readers (the times the writer's connection
 * went beside readers: pmem mode, through the log), beside_commits (its
 * commits made so). */
static long long pragma_int(gpmdb *db, const char *sql)
{
	gpmdb_stmt *st = NULL;
	long long v = -1;

	if (gpmdb_prepare(db, sql, -1, &st, NULL) == GPMDB_OK &&
	    gpmdb_step(st) == GPMDB_ROW)
		v = gpmdb_column_int64(st, 0);
	gpmdb_finalize(st);
	return v;
}

static long long beside_readers(gpmdb *db)
{
	return pragma_int(db, "PRAGMA beside_readers");
}

/* The backup process's pipes (--loop): the parent writes a byte to go[1]
 * to start backups and one more to stop them; the process answers on
 * done[0] once the backup it was in has finished. */
static int bk_go = -1, bk_done = -1;

/* Whether fd has a byte to read now. */
static bool readable(int fd)
{
	struct pollfd pf = {fd, POLLIN, 0};

	return poll(&pf, 1, 0) > 0;
}

#define BENCH_MAX_ROUNDS 15

/* PRAGMA gpu_write_stats's write phases (engine/write/write_phases.c) */
#define WPH_N 12
static const char *const wph_name[WPH_N] = {"bind_convert", "key_check",
					    "row_location", "reservation",
					    "upload",	    "log",
					    "data",	    "persist",
					    "commit",	    "index_maintenance",
					    "other",	    "total"};

/* A writer's phase over the rounds: statements per second each round;
 * the longest statement (a wait for a backup's snapshot shows there);
 * averages over the rounds of the share of its commits made beside
 * readers (through the log), of the share of its time in statements of
 * more than 10 ms (waits and stalls, against a slowdown of every
 * statement), of the process's CPU time per statement (every thread:
 * OpenMP's spinning too) and of its minor page faults per statement. */
typedef struct {
	double rate[BENCH_MAX_ROUNDS], longest, priv, slow, cpu_ms, faults;
	/* over the rounds: statements that went beside readers (a flip),
	 * their seconds, the seconds and number of the 100 statements after
	 * each, and the GPU registration's milliseconds (PRAGMA
	 * gpu_write_stats populate_ms + register_ms) */
	double flips, flip_s, after_s, after_n, reg_ms;
	/* --phases: each write phase's milliseconds, summed over the
	 * statements of the rounds, and those statements */
	double pms[WPH_N], pn;
} wphase;

static bool phases; /* --phases */

/* The last statement's write phases into ph (--phases). */
static void add_phases(gpmdb *db, wphase *ph)
{
	gpmdb_stmt *st = NULL;

	if (gpmdb_prepare(db, "PRAGMA gpu_write_stats", -1, &st, NULL))
		return;
	while (gpmdb_step(st) == GPMDB_ROW) {
		const char *n = (const char *)gpmdb_column_text(st, 0);
		if (strncmp(n, "phase_", 6))
			continue;
		for (int k = 0; k < WPH_N; k++)
			if (!strcmp(n + 6, wph_name[k]))
				ph->pms[k] += gpmdb_column_double(st, 1);
	}
	gpmdb_finalize(st);
	ph->pn++;
}

static double reg_ms(gpmdb *db)
{
	return bench_gpmdb_stat(db, "gpu_write_stats", "populate_ms") +
	       bench_gpmdb_stat(db, "gpu_write_stats", "register_ms");
}

static double cpu_s(const struct rusage *u)
{
	return (double)u->ru_utime.tv_sec + (double)u->ru_utime.tv_usec / 1e6 +
	       (double)u->ru_stime.tv_sec + (double)u->ru_stime.tv_usec / 1e6;
}

/* The writer: batch UPDATEs of 10,000 rows by key range for secs (with
 * backups: they start with it, are asked to stop after secs, and it
 * writes on until the last one has finished, so that it runs beside
 * whole backups); round r of ph. */
static void writer(gpmdb *db, long long rows, double secs, bool backups,
		   wphase *ph, int r, int rounds)
{
	double ts = 0, longest = 0;
	bool asked = false;
	char c = 1;
	char sql[200];
	long long k = 0, n = 0, c0 = pragma_int(db, "PRAGMA beside_commits");
	long long bs = beside_readers(db), after = 0;
	struct rusage u0, u1;
	double r0 = reg_ms(db), t0 = now_s(), t = t0;

	getrusage(RUSAGE_SELF, &u0);
	if (backups && write(bk_go, &c, 1) != 1) {
		perror("backup process");
		exit(1);
	}
	while (backups ? !readable(bk_done) : t - t0 < secs) {
		long long lo = 1 + (k * 10000) % (rows - 10000);
		double t1;

		snprintf(sql, sizeof(sql),
			 "UPDATE t SET a = a + 1 WHERE id BETWEEN %lld AND "
			 "%lld",
			 lo, lo + 9999);
		must(db, sql);
		t1 = now_s();
		{
			/* (the pragma's time goes to the next statement) */
			long long b = beside_readers(db);

			if (b != bs) {
				ph->flips += (double)(b - bs);
				ph->flip_s += t1 - t;
				after = 100;
				bs = b;
			} else if (after > 0) {
				after--;
				ph->after_s += t1 - t;
				ph->after_n++;
			}
		}
		if (phases)
			add_phases(db, ph);
		if (t1 - t > longest)
			longest = t1 - t;
		if (t1 - t > 0.010)
			ts += t1 - t;
		t = t1;
		k += 37;
		n++;
		if (backups && !asked && t - t0 >= secs) {
			asked = true;
			if (write(bk_go, &c, 1) != 1) {
				perror("backup process");
				exit(1);
			}
		}
	}
	if (backups && read(bk_done, &c, 1) != 1) {
		perror("backup process");
		exit(1);
	}
	getrusage(RUSAGE_SELF, &u1);
	ph->reg_ms += reg_ms(db) - r0;
	/* the phase's bounds on CLOCK_MONOTONIC, for a profiler's time
	 * slices (perf record -k CLOCK_MONOTONIC; perf report --time) */
	if (getenv("BENCH_PHASES"))
		fprintf(stderr, "phase %s round %d: %.6f %.6f\n",
			backups ? "backups" : "other", r + 1, t0, t);
	ph->rate[r] = (double)n / (t - t0);
	ph->longest = longest > ph->longest ? longest : ph->longest;
	ph->priv += (double)(pragma_int(db, "PRAGMA beside_commits") - c0) /
		    (double)n / rounds;
	ph->slow += ts / (t - t0) / rounds;
	ph->cpu_ms += 1e3 * (cpu_s(&u1) - cpu_s(&u0)) / (double)n / rounds;
	ph->faults +=
	    (double)(u1.ru_minflt - u0.ru_minflt) / (double)n / rounds;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The median of v[0..n) (v left as it was). */
static double median(const double *v, int n)
{
	double s[BENCH_MAX_ROUNDS];

	memcpy(s, v, sizeof(double) * (size_t)n);
	qsort(s, (size_t)n, sizeof(double), cmp_double);
	return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

/* The reader process beside the writer: read transactions of 200 ms
 * until killed (a snapshot held most of the time, little work: the cost
 * of writing beside readers, storage/wal.c "Beside readers", without a
 * copy's traffic). */
static __attribute__((noreturn)) void reader_loop(void)
{
	gpmdb *db = NULL;
	gpmdb_options o = {.durability = "pmem"};

	if (gpmdb_open_v2(pool, &db, GPMDB_OPEN_READONLY, &o)) {
		fprintf(stderr, "open %s: %s\n", pool, gpmdb_errmsg(db));
		exit(1);
	}
	for (;;) {
		must(db, "BEGIN");
		must(db, "SELECT count(*) FROM t WHERE id < 10");
		usleep(200000);
		must(db, "COMMIT");
	}
}

/* A process running self with mode ("--loop": backups, "--reader"). */
static pid_t beside(const char *mode)
{
	pid_t pid = fork();

	if (pid == 0) {
		execl(self, self, mode, pool, dest, (char *)NULL);
		_exit(1);
	}
	sleep(1);
	return pid;
}

/* The backup process beside the writer (its connection open in every
 * phase): on a byte from the parent (fd 3), full backups back to back
 * until the next byte, then a byte back (fd 4) once the last is done;
 * until fd 3 closes. */
static __attribute__((noreturn)) void backup_loop(void)
{
	gpmdb *db = open_db(pool, false);
	gpmdb_backup_stat st;
	char to[4200], c;

	snprintf(to, sizeof(to), "%s.loop", dest);
	while (read(3, &c, 1) == 1) {
		do
			backup(db, to, GPMDB_BACKUP_FULL, &st);
		while (!readable(3));
		if (read(3, &c, 1) != 1 || write(4, &c, 1) != 1)
			break;
	}
	gpmdb_close(db);
	exit(0);
}

/* The backup process, its pipes as fds 3 and 4 (bk_go, bk_done here). */
static pid_t backup_process(void)
{
	int go[2], done[2];
	pid_t pid;

	if (pipe(go) || pipe(done)) {
		perror("pipe");
		exit(1);
	}
	pid = fork();
	if (pid == 0) {
		if (dup2(go[0], 3) < 0 || dup2(done[1], 4) < 0)
			_exit(1);
		for (int i = 0; i < 2; i++) {
			if (go[i] > 4)
				close(go[i]);
			if (done[i] > 4)
				close(done[i]);
		}
		execl(self, self, "--loop", pool, dest, (char *)NULL);
		_exit(1);
	}
	close(go[0]);
	close(done[1]);
	bk_go = go[1];
	bk_done = done[0];
	return pid;
}

int main(int argc, char **argv)
{
	long long rows = 32000000;
	double secs = 10, t, tcp, tfull, tinc, tinc_r, topen, dd, w[3];
	long long b0 = 0, b1 = 0, b2 = 0, b3 = 0;
	int rounds = 3;
	double vfull[BENCH_MAX_ROUNDS], vinc[BENCH_MAX_ROUNDS],
	    vinc_r[BENCH_MAX_ROUNDS];
	wphase ph[3]; /* alone, beside backups, beside a reader */
	bool keep = false, reuse = false;
	const char *shm = "/dev/shm", *disk = "/var/tmp", *backend = NULL;
	gpmdb_backup_stat sf, si, sr;
	char cmd[13000];
	struct stat stp;
	gpmdb *db;
	pid_t pid;

	snprintf(self, sizeof(self), "%s", argv[0]);
	for (int i = 1; i < argc; i += 2) {
		if (!strcmp(argv[i], "--keep") || !strcmp(argv[i], "--reuse")) {
			*(argv[i][2] == 'k' ? &keep : &reuse) = true;
			i--;
			continue;
		}
		if (!strcmp(argv[i], "--phases")) {
			phases = true;
			i--;
			continue;
		}
		if (i + 1 >= argc ||
		    (strcmp(argv[i], "--rows") && strcmp(argv[i], "--secs") &&
		     strcmp(argv[i], "--rounds") && strcmp(argv[i], "--shm") &&
		     strcmp(argv[i], "--disk") && strcmp(argv[i], "--loop") &&
		     strcmp(argv[i], "--reader") &&
		     strcmp(argv[i], "--backend"))) {
			fprintf(stderr, "usage: bench_backup [--rows N] "
					"[--secs S] [--rounds R] [--shm DIR] "
					"[--disk DIR] [--backend cpu|gpu|auto] "
					"[--keep] [--reuse] [--phases]\n");
			return 2;
		}
		if (!strcmp(argv[i], "--rows"))
			rows = atoll(argv[i + 1]);
		else if (!strcmp(argv[i], "--secs"))
			secs = atof(argv[i + 1]);
		else if (!strcmp(argv[i], "--rounds"))
			rounds = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--shm"))
			shm = argv[i + 1];
		else if (!strcmp(argv[i], "--disk"))
			disk = argv[i + 1];
		else if (!strcmp(argv[i], "--backend"))
			backend = argv[i + 1];
		else if (!strcmp(argv[i], "--loop") ||
			 !strcmp(argv[i], "--reader")) {
			if (i + 2 >= argc)
				return 2;
			snprintf(pool, sizeof(pool), "%s", argv[i + 1]);
			snprintf(dest, sizeof(dest), "%s", argv[i + 2]);
			if (argv[i][2] == 'l')
				backup_loop();
			reader_loop();
		}
	}
	if (rounds < 1 || rounds > BENCH_MAX_ROUNDS) {
		fprintf(stderr, "bench_backup: --rounds is 1 to %d\n",
			BENCH_MAX_ROUNDS);
		return 2;
	}
	snprintf(pool, sizeof(pool), "%s/gpmdb_bench_backup.db", shm);
	snprintf(dest, sizeof(dest), "%s/gpmdb_bench_backup.copy", disk);
	if (!reuse || stat(pool, &stp) != 0)
		reuse = false;
	if (!reuse)
		rm_db(pool);
	rm_db(dest);
	db = open_db(pool, !reuse);
	if (!reuse)
		must(db, "CREATE TABLE t(id INTEGER PRIMARY KEY, a BIGINT, "
			 "b BIGINT, c BIGINT)");
	if (!reuse) {
		const long long batch = 1000000;
		int64_t *id = malloc(sizeof(int64_t) * batch);
		gpmdb_column_array ca[4];

		if (!id) {
			fprintf(stderr, "out of memory\n");
			return 1;
		}
		for (int c = 0; c < 4; c++) {
			ca[c].type = GPMDB_ARRAY_INT64;
			ca[c].values = id;
			ca[c].nulls = NULL;
		}
		for (long long r = 0; r < rows; r += batch) {
			long long n = rows - r < batch ? rows - r : batch;

			for (long long i = 0; i < n; i++)
				id[i] = r + i + 1;
			if (gpmdb_append_columns(db, "t", 4, NULL, ca, n)) {
				fprintf(stderr, "append: %s\n",
					gpmdb_errmsg(db));
				return 1;
			}
		}
		free(id);
	}
	if (backend) {
		char pr[64];

		snprintf(pr, sizeof(pr), "PRAGMA backend = %.20s", backend);
		must(db, pr);
		/* a statement the GPU cannot write fails rather than run on
		 * the CPU unnoticed */
		if (!strcmp(backend, "gpu"))
			must(db, "PRAGMA gpu_strict = on");
	}
	if (stat(pool, &stp)) {
		perror(pool);
		return 1;
	}
	dd = dd_rate(disk);
	snprintf(cmd, sizeof(cmd), "cp %s %s.cp && sync %s.cp", pool, dest,
		 dest);
	t = now_s();
	if (system(cmd) != 0) {
		fprintf(stderr, "%s failed\n", cmd);
		return 1;
	}
	tcp = now_s() - t;
	snprintf(cmd, sizeof(cmd), "%s.cp", dest);
	unlink(cmd);
	for (int r = 0; r < rounds; r++) {
		/* a full copy: the new file each round */
		rm_db(dest);
		vfull[r] = backup(db, dest, 0, &sf);
		/* 1% of the rows, one contiguous range (another each
		 * round) */
		long long lo = rows / 2 + (long long)r * (rows / 100);
		snprintf(cmd, sizeof(cmd),
			 "UPDATE t SET a = a + 1 WHERE id BETWEEN %lld AND "
			 "%lld",
			 lo, lo + rows / 100 - 1);
		must(db, cmd);
		vinc[r] = backup(db, dest, 0, &si);
		/* 1% of the rows at random (every 100th: one per 800
		 * bytes; other rows each round) */
		snprintf(cmd, sizeof(cmd),
			 "UPDATE t SET b = b + 1 WHERE id %% 100 = %d", 7 + r);
		must(db, cmd);
		vinc_r[r] = backup(db, dest, 0, &sr);
	}
	tfull = median(vfull, rounds);
	tinc = median(vinc, rounds);
	tinc_r = median(vinc_r, rounds);
	/* the copy opened: its deltas (storage/delta.c) applied */
	t = now_s();
	{
		gpmdb *c = NULL;

		if (gpmdb_open_v2(dest, &c, GPMDB_OPEN_READWRITE, NULL)) {
			fprintf(stderr, "open %s: %s\n", dest, gpmdb_errmsg(c));
			return 1;
		}
		gpmdb_close(c);
	}
	topen = now_s() - t;
	/* the writer alone, then beside full backups, rounds times (the
	 * writer's rate drifts: alternating cancels it); the backup
	 * process's connection is open in every phase */
	memset(ph, 0, sizeof(ph));
	pid_t bpid = backup_process();
	sleep(1);
	for (int r = 0; r < rounds; r++) {
		long long a = beside_readers(db), b, c;
		writer(db, rows, secs, false, &ph[0], r, rounds);
		b = beside_readers(db);
		writer(db, rows, secs, true, &ph[1], r, rounds);
		c = beside_readers(db);
		b0 += r ? 0 : a;
		b1 += b - a;
		b2 += c - b;
		pid = beside("--reader");
		writer(db, rows, secs, false, &ph[2], r, rounds);
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		b3 += beside_readers(db) - c;
		/* the writer goes back in place once readers have been quiet
		 * for a second (lock.c): the next alone phase without them */
		usleep(1200000);
	}
	close(bk_go);
	waitpid(bpid, NULL, 0);
	for (int k = 0; k < 3; k++)
		w[k] = median(ph[k].rate, rounds);

	printf("Pool: %s, %lld rows, %.0f MB; copies to %s; medians of %d "
	       "rounds (the writer %.0f s per phase%s%s).\n\n",
	       pool, rows, (double)stp.st_size / 1e6, disk, rounds, secs,
	       backend ? ", PRAGMA backend = " : "", backend ? backend : "");
	printf("| measure | seconds | MB/s | zones copied (by lines) | MB "
	       "written | vs full |\n");
	printf("| --- | ---: | ---: | ---: | ---: | ---: |\n");
	printf("| disk direct write (O_DIRECT, 1 GiB) | %.2f | %.0f | | | "
	       "|\n",
	       1073.741824 / dd, dd);
	printf("| cp + sync of the pool | %.2f | %.0f | | | |\n", tcp,
	       (double)stp.st_size / 1e6 / tcp);
	printf("| full backup | %.2f | %.0f | %lld of %lld | %.1f | 100%% |\n",
	       tfull, (double)stp.st_size / 1e6 / tfull, sf.zones_copied,
	       sf.zones_total, (double)sf.bytes_written / 1e6);
	printf("| incremental, 1%% of rows (one range) | %.3f | | %lld of "
	       "%lld (%lld) | %.1f | %.1f%% |\n",
	       tinc, si.zones_copied, si.zones_total, si.zones_lines,
	       (double)si.bytes_written / 1e6, 100 * tinc / tfull);
	printf("| incremental, 1%% of rows (every 100th) | %.3f | | %lld of "
	       "%lld (%lld) | %.1f | %.1f%% |\n",
	       tinc_r, sr.zones_copied, sr.zones_total, sr.zones_lines,
	       (double)sr.bytes_written / 1e6, 100 * tinc_r / tfull);
	printf("| open of the copy (its deltas applied) | %.3f | | | | |\n",
	       topen);
	printf("\nFull backup at %.0f%% of cp's throughput.\n\n",
	       100 * tcp / tfull);
	printf("| writer (UPDATE of 10,000 rows by key range) | statements/s "
	       "| longest statement, ms | commits beside readers | time in "
	       "statements over 10 ms | CPU ms a statement (all threads) | "
	       "minor faults a statement |\n| --- | ---: | ---: | ---: | ---: "
	       "| ---: | ---: |\n");
	for (int k = 0; k < 3; k++) {
		static const char *const name[3] = {
		    "alone", "beside full backups (whole ones)",
		    "beside a reader (read transactions of 200 ms)"};
		char share[32] = "";
		if (k)
			snprintf(share, sizeof(share), " (%.0f%%)",
				 100 * w[k] / w[0]);
		printf("| %s | %.1f%s | %.1f | %.0f%% | %.1f%% | %.2f | %.1f "
		       "|\n",
		       name[k], w[k], share, 1e3 * ph[k].longest,
		       100 * ph[k].priv, 100 * ph[k].slow, ph[k].cpu_ms,
		       ph[k].faults);
	}
	printf("\n| writer phase (all rounds) | statements that went beside "
	       "readers | their ms each | ms a statement in the 100 after "
	       "one | GPU registration ms |\n| --- | ---: | ---: | ---: | "
	       "---: |\n");
	for (int k = 0; k < 3; k++) {
		static const char *const name[3] = {"alone", "beside backups",
						    "beside a reader"};
		printf("| %s | %.0f | %.2f | %.3f | %.1f |\n", name[k],
		       ph[k].flips,
		       ph[k].flips ? 1e3 * ph[k].flip_s / ph[k].flips : 0,
		       ph[k].after_n ? 1e3 * ph[k].after_s / ph[k].after_n : 0,
		       ph[k].reg_ms);
	}
	if (phases) {
		printf("\n| write phase, ms a statement | alone | beside "
		       "backups | beside a reader |\n| --- | ---: | ---: | "
		       "---: |\n");
		for (int q = 0; q < WPH_N; q++) {
			printf("| %s |", wph_name[q]);
			for (int k = 0; k < 3; k++)
				printf(" %.3f |",
				       ph[k].pn ? ph[k].pms[q] / ph[k].pn : 0);
			printf("\n");
		}
	}
	printf("\nThe writer's connection went beside readers (PRAGMA "
	       "beside_readers) %lld times before it ran alone, %lld while "
	       "alone, %lld beside the backups, %lld beside the reader (all "
	       "rounds).\n",
	       b0, b1, b2, b3);
	printf("\nRounds (seconds; statements/s):\n\n| round | full | "
	       "incremental, range | incremental, every 100th | writer "
	       "alone | beside backups | beside a reader |\n| ---: | ---: | "
	       "---: | ---: | ---: | ---: | ---: |\n");
	for (int r = 0; r < rounds; r++)
		printf("| %d | %.3f | %.4f | %.4f | %.1f | %.1f | %.1f |\n",
		       r + 1, vfull[r], vinc[r], vinc_r[r], ph[0].rate[r],
		       ph[1].rate[r], ph[2].rate[r]);
	gpmdb_close(db);
	if (!keep)
		rm_db(pool);
	rm_db(dest);
	snprintf(cmd, sizeof(cmd), "%s.loop", dest);
	rm_db(cmd);
	return 0;
}
