/*
 * crash_gpu_cap.c - kill -9 during CPU-assisted persistence (CAP) batches
 * (engine/write/batch_cap.c, docs/gpu.md "CPU-assisted persistence"):
 * a pool in msync mode (forced, on /dev/shm or the directory given),
 * backend = gpu and gpu_persist = cap, so each UPDATE's undo log is built
 * by the GPU from the column cache and persisted by the host, which then
 * writes the data.  After every kill the pool is reopened: the table is
 * its before- or after-image (row count and sum(v)), the updated rows
 * moved together (no torn batch), the others did not move, and PRAGMA
 * integrity_check (stg_check, the index against the table) says ok.
 *
 * Workloads: update (UPDATE u SET v = v + 1 WHERE id % 2 = 0), keys (the
 * same rows and values by bound arrays, UPDATE u SET v = ? WHERE id = ?).
 * Kills: every fourth child kills itself at a named crash point, in turn
 * hcl.entry (the GPU-built entries persisted, no tail), hcl.tail (tails
 * persisted, no data), update.data (data written, not committed),
 * commit.begin, wal.frame, wal.commit (the small msync commit), and
 * wal.big_undo, wal.big_data (the big commit, which writes the undo log
 * and the data in place before the commit record: GPMDB_TEST_WAL_BIG
 * makes every batch big; the HCL entries are then what recovery
 * undoes); the others are killed at a random moment, two in three of
 * them inside the batch's write (between the engine's launch notes
 * around the GPU log build, the log's persistence and the data, told
 * through GPMDB_TEST_LAUNCH_FD), half of all children with the big
 * commit.  Where each kill landed is counted and printed.
 *
 * Usage: crash_gpu_cap [update|keys ...] [--dir DIR] (default both, on
 * /dev/shm).  GPMDB_CRASH_KILLS=n kills per workload (default 50),
 * GPMDB_CRASH_ROWS=n rows per batch (default 512k; the table has twice).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

#include "gpu/dml_util.h"

static char path[512];
static int64_t batch = 1 << 19;
static int kills = 50;

/* The named crash points, in turn; big: with the big commit. */
static const struct {
	const char *name;
	int big;
} points[] = {{"hcl.entry", 0},	   {"hcl.tail", 1},	{"update.data", 0},
	      {"commit.begin", 1}, {"wal.frame", 0},	{"wal.commit", 0},
	      {"wal.big_undo", 1}, {"wal.big_data", 1}, {"hcl.entry", 1},
	      {"update.data", 1}};
#define NPOINTS (int)(sizeof(points) / sizeof(points[0]))

typedef struct {
	double rows, sv;
} image;

static gpmdb *open_pool(const char *backend, int create)
{
	return du_open_dur(path, backend, create, "msync");
}

static image img_read(gpmdb *db)
{
	image m;

	m.rows = du_num(db, "SELECT count(*) FROM u");
	m.sv = du_num(db, "SELECT coalesce(sum(v), 0) FROM u");
	return m;
}

/* Child: open, warm CUDA and the column cache, say ready (r), run one
 * batch, say done (d, or e on an error).  The engine writes k and K
 * around the batch's write on fd. */
static int child(const char *what, int fd)
{
	char c = 'r', fds[16];
	gpmdb *db;
	int rc;

	snprintf(fds, sizeof(fds), "%d", fd);
	setenv("GPMDB_TEST_LAUNCH_FD", fds, 1); /* read at open */
	db = open_pool("gpu", 0);
	if (!db)
		return 2;
	if (du_exec(db, "PRAGMA gpu_persist = cap") != GPMDB_OK)
		return 2;
	du_num(db, "PRAGMA gpu_info"); /* CUDA up before the window */
	if (!strcmp(what, "keys")) {
		/* every even row to its current value + 1 */
		double d = du_num(db, "SELECT v - id * 3 FROM u WHERE id = 0");
		int64_t m = batch, *id = malloc(8 * m), *v = malloc(8 * m);
		const int64_t *i64[2] = {v, id};

		if (!id || !v)
			return 2;
		for (int64_t i = 0; i < m; i++) {
			id[i] = 2 * ((i * 7919) % m); /* a permutation */
			v[i] = id[i] * 3 + (int64_t)d + 1;
		}
		if (write(fd, &c, 1) != 1)
			return 2;
		rc = du_batch(db, "UPDATE u SET v = ? WHERE id = ?", 2, i64,
			      NULL, NULL, m);
		free(id);
		free(v);
	} else {
		if (write(fd, &c, 1) != 1)
			return 2;
		rc = du_exec(db, "UPDATE u SET v = v + 1 WHERE id % 2 = 0");
	}
	if (rc == GPMDB_OK &&
	    du_stat(db, "gpu_write_stats", "cap_gpu_batches") < 1) {
		char fb[600];
		gpmdb_stmt *st = NULL;
		/* why it took another path (a flake seen in about one child
		 * of 60 on 2026-11-27, cause unknown): the fallback and the
		 * CAP path's own decline */
		fprintf(
		    stderr,
		    "child: the batch was not GPU-logged (last GPU write "
		    "fallback: %s)\n",
		    du_text(db, "PRAGMA gpu_write_fallback", fb, sizeof(fb)));
		if (gpmdb_prepare(db, "PRAGMA gpu_write_stats", -1, &st,
				  NULL) == GPMDB_OK)
			while (gpmdb_step(st) == GPMDB_ROW) {
				const char *nm =
				    (const char *)gpmdb_column_text(st, 0);
				if (nm && (!strncmp(nm, "cap_", 4) ||
					   strstr(nm, "because")))
					fprintf(stderr, "child:   %s %s\n", nm,
						(const char *)gpmdb_column_text(
						    st, 1));
			}
		gpmdb_finalize(st);
		rc = GPMDB_ERROR;
	}
	c = rc == GPMDB_OK ? 'd' : 'e';
	if (write(fd, &c, 1) != 1)
		return 2;
	gpmdb_close(db);
	return rc == GPMDB_OK ? 0 : 1;
}

enum { AT_BEFORE, AT_INSIDE, AT_AFTER };

typedef struct {
	double pre_ms, kern_ms, post_ms; /* r..k, k..K, K..d */
} timing;

static char rd(int fd)
{
	char c;

	return read(fd, &c, 1) == 1 ? c : 0;
}

/* As crash_gpu_dml's: delay_ms < 0 calibrates (fills *tm); aim 0 kills
 * delay_ms after ready, aim 1 delay_ms after k, aim 2 lets the child
 * kill itself (*self: it did).  Returns AT_*, -1 on an error. */
static int run_child(const char *what, double delay_ms, int aim, timing *tm,
		     int *self)
{
	int p[2], st, seen_k = 0, seen_K = 0;
	char c = 0;
	pid_t pid;
	double t0, tk = 0, tK = 0;

	if (pipe(p))
		return -1;
	pid = fork();
	if (pid == 0) {
		char fd[16];

		close(p[0]);
		snprintf(fd, sizeof(fd), "%d", p[1]);
		execl("/proc/self/exe", "crash_gpu_cap", "child", what, path,
		      fd, (char *)NULL);
		_exit(4);
	}
	close(p[1]);
	if (rd(p[0]) != 'r') {
		close(p[0]);
		waitpid(pid, &st, 0);
		return -1;
	}
	t0 = du_ms();
	if (delay_ms < 0) {
		while ((c = rd(p[0])) && c != 'd' && c != 'e') {
			if (c == 'k' && !seen_k++)
				tk = du_ms();
			if (c == 'K')
				seen_K++, tK = du_ms();
		}
		close(p[0]);
		waitpid(pid, &st, 0);
		if (c != 'd' || !seen_k || !seen_K || !WIFEXITED(st) ||
		    WEXITSTATUS(st) != 0) {
			fprintf(stderr,
				"calibration: child ended with '%c' (k %d, K "
				"%d), status %x\n",
				c ? c : '-', seen_k, seen_K, st);
			return -1;
		}
		tm->pre_ms = tk - t0;
		tm->kern_ms = tK - tk;
		tm->post_ms = du_ms() - tK;
		return AT_AFTER;
	}
	if (aim == 1) {
		c = rd(p[0]);
		if (c != 'k') {
			fprintf(stderr, "child wrote '%c' instead of k\n",
				c ? c : '-');
			kill(pid, SIGKILL);
			close(p[0]);
			waitpid(pid, &st, 0);
			return -1;
		}
		seen_k = 1;
	}
	if (aim != 2) {
		usleep((useconds_t)(delay_ms * 1000));
		kill(pid, SIGKILL);
	}
	while ((c = rd(p[0]))) {
		seen_k += c == 'k';
		seen_K += c == 'K' || c == 'd';
	}
	close(p[0]);
	waitpid(pid, &st, 0);
	if (self)
		*self = aim == 2 && WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL;
	return seen_K ? AT_AFTER : seen_k ? AT_INSIDE : AT_BEFORE;
}

static void workload(const char *what)
{
	gpmdb *db;
	image before, after;
	timing tm = {0, 0, 0};
	int where[3] = {0, 0, 0}, after_n = 0, before_n = 0, big_n = 0;
	int pt_tries[NPOINTS] = {0}, pt_hits[NPOINTS] = {0}, named = 0;
	double max_rec = 0;
	char ok[256];

	unlink(path);
	db = open_pool("gpu", 1);
	CHECK(db);
	if (!db)
		return;
	CHECK_RC(du_exec(db, "CREATE TABLE u (id BIGINT, v BIGINT); "
			     "CREATE INDEX u_id ON u(id)"),
		 GPMDB_OK);
	{
		int64_t n = batch * 2, *id = malloc(8 * n), *v = malloc(8 * n);
		gpmdb_column_array arr[2] = {{GPMDB_ARRAY_INT64, id, NULL},
					     {GPMDB_ARRAY_INT64, v, NULL}};

		for (int64_t i = 0; i < n; i++) {
			id[i] = i;
			v[i] = i * 3;
		}
		CHECK_RC(gpmdb_append_columns(db, "u", 2, NULL, arr, n),
			 GPMDB_OK);
		free(id);
		free(v);
	}
	gpmdb_close(db);
	if (run_child(what, -1, 0, &tm, NULL) != AT_AFTER) {
		CHECKF(0, "%s: the calibration batch failed", what);
		return;
	}
	printf("# cap %s: one batch of %lld rows: %.1f ms to its write, %.2f "
	       "ms in it (GPU log, its persistence, the data), %.1f ms to "
	       "the commit\n",
	       what, (long long)batch, tm.pre_ms, tm.kern_ms, tm.post_ms);
	srand(4242);
	for (int k = 0; k < kills; k++) {
		double u01 = (double)rand() / RAND_MAX, rec_ms;
		int aim = k % 4 == 0 ? 2 : k % 4 == 3 ? 0 : 1, at, self = 0;
		int big = (k / 2) % 2, pi = (k / 4) % NPOINTS;
		double delay =
		    aim == 1
			? tm.kern_ms * 0.95 * u01
			: (tm.pre_ms + tm.kern_ms + tm.post_ms) * 1.1 * u01;

		db = open_pool("cpu", 0);
		if (!db) {
			CHECK(db);
			return;
		}
		before = img_read(db);
		after = before;
		after.sv += (double)batch; /* batch even rows, each + 1 */
		gpmdb_close(db);
		if (aim == 2) {
			char cp[64];

			big = points[pi].big;
			snprintf(cp, sizeof(cp), "%s:1", points[pi].name);
			setenv("GPMDB_CRASH_AT", cp, 1);
		}
		if (big)
			setenv("GPMDB_TEST_WAL_BIG", "1048576", 1);
		at = run_child(what, delay, aim, &tm, &self);
		unsetenv("GPMDB_CRASH_AT");
		unsetenv("GPMDB_TEST_WAL_BIG");
		CHECK(at >= 0);
		if (aim == 2) {
			pt_tries[pi]++;
			pt_hits[pi] += self;
			named += self;
		} else if (at >= 0) {
			where[at]++;
		}
		big_n += big;
		db = open_pool("cpu", 0);
		if (!db) {
			CHECK(db);
			return;
		}
		rec_ms = du_stat(db, "recovery_stats", "recovery_ms");
		if (rec_ms > max_rec)
			max_rec = rec_ms;
		image now = img_read(db);
		int is_b = now.rows == before.rows && now.sv == before.sv;
		int is_a = now.rows == after.rows && now.sv == after.sv;
		double lo = du_num(db, "SELECT min(v - id * 3) FROM u WHERE "
				       "id % 2 = 0");
		double hi = du_num(db, "SELECT max(v - id * 3) FROM u WHERE "
				       "id % 2 = 0");
		double odd = du_num(db, "SELECT count(*) FROM u WHERE id % 2 = "
					"1 AND v <> id * 3");

		CHECKF(is_b || is_a,
		       "%s kill %d (aim %d, %.1f ms%s%s): rows %.0f sum(v) "
		       "%.0f; before %.0f/%.0f, after %.0f/%.0f",
		       what, k, aim, delay, aim == 2 ? ", at " : "",
		       aim == 2 ? points[pi].name : "", now.rows, now.sv,
		       before.rows, before.sv, after.rows, after.sv);
		CHECKF(lo == hi && odd == 0,
		       "%s kill %d: even rows moved %.0f..%.0f, odd rows "
		       "changed %.0f",
		       what, k, lo, hi, odd);
		after_n += is_a && !is_b;
		before_n += is_b;
		CHECKF(!strcmp(du_text(db, "PRAGMA integrity_check", ok,
				       sizeof(ok)),
			       "ok"),
		       "%s kill %d: integrity: %s", what, k, ok);
		gpmdb_close(db);
	}
	printf("# cap %s: %d kills, %d with the big commit; at named points "
	       "%d:",
	       what, kills, big_n, named);
	for (int i = 0; i < NPOINTS; i++)
		if (pt_tries[i])
			printf(" %s%s %d/%d", points[i].name,
			       points[i].big ? " (big)" : "", pt_hits[i],
			       pt_tries[i]);
	printf("; at random moments: %d before the batch's write, %d inside "
	       "it, %d after; %d before-images, %d after-images; longest "
	       "recovery %.2f ms\n",
	       where[AT_BEFORE], where[AT_INSIDE], where[AT_AFTER], before_n,
	       after_n, max_rec);
	/* every named point is on the CAP path: each one reached */
	for (int i = 0; i < NPOINTS; i++)
		CHECKF(pt_hits[i] == pt_tries[i],
		       "%s: %d of %d children reached %s%s", what, pt_hits[i],
		       pt_tries[i], points[i].name,
		       points[i].big ? " (big commit)" : "");
	CHECKF(where[AT_INSIDE] >= kills / 4,
	       "%s: only %d of %d kills landed inside the batch's write", what,
	       where[AT_INSIDE], kills);
}

static void t_update(void)
{
	workload("update");
}

static void t_keys(void)
{
	workload("keys");
}

int main(int argc, char **argv)
{
	const char *e, *dir = "/dev/shm";
	int w_update = 0, w_keys = 0;

	if ((e = getenv("GPMDB_CRASH_ROWS")))
		batch = atoll(e) > 1024 ? atoll(e) : 1024;
	if ((e = getenv("GPMDB_CRASH_KILLS")))
		kills = atoi(e) > 0 ? atoi(e) : 1;
	if (argc == 5 && !strcmp(argv[1], "child")) {
		snprintf(path, sizeof(path), "%s", argv[3]);
		return child(argv[2], atoi(argv[4]));
	}
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "update"))
			w_update = 1;
		else if (!strcmp(argv[i], "keys"))
			w_keys = 1;
		else if (!strcmp(argv[i], "--dir") && i + 1 < argc)
			dir = argv[++i];
		else {
			fprintf(stderr,
				"usage: %s [update|keys ...] [--dir DIR]\n",
				argv[0]);
			return 2;
		}
	}
	if (!w_update && !w_keys)
		w_update = w_keys = 1;
	snprintf(path, sizeof(path), "%s/gcap_crash_%d.db", dir, getpid());
	if (w_update)
		TEST_RUN(t_update);
	if (w_keys)
		TEST_RUN(t_keys);
	unlink(path);
	{
		char wal[600];

		snprintf(wal, sizeof(wal), "%s-wal", path);
		unlink(wal);
	}
	TEST_MAIN_END();
}
