/*
 * crash_gpu_dml.c - kill -9 at random moments during large GPU INSERT
 * and UPDATE batches (backend=gpu, kernels storing into the pool on
 * /dev/shm), then reopen: the table equals its before- or after-image
 * (row count and checksums), the integrity check is clean (it compares
 * t's two indexes, which every batch changes too, with the table; an
 * UPDATE of v is an UPDATE of a key column).  Reopens
 * alternate between the GPU recovery kernel and the CPU recovery.
 *
 * Workloads: insert (gpmdb_append_columns), inssel (the same rows by an
 * INSERT ... SELECT over table u, written from the SELECT's device
 * result: insert_select_dev checked in the child), update (a predicate UPDATE
 * of every other row, values scattered: gpu_update_mode = scatter; its
 * rows and values computed and kept on the device, bgpu_update_select,
 * checked in the child),
 * lines (the same UPDATE written as whole dirty lines: gpu_update_mode =
 * lines).  The write kernels are a few ms of a statement that takes
 * ~100 ms, so random kills rarely land in them: the child tells the
 * parent through a pipe when they start and end (GPMDB_TEST_LAUNCH_FD,
 * engine/write/batch_gpu.c), and two kills in three wait for the start and
 * then sleep a random part of the kernels' duration measured in a
 * calibration run; the third kill is at a random moment of the whole
 * statement.  The INSERT workloads also kill every fifth child at the
 * GPU-only crash point append.chunk (storage/crashpoints.h
 * STG_GPU_CRASH_POINTS: between two chunks of the INSERT pipeline,
 * earlier chunks stored or in flight), at its first or second hit.  What the
 * child wrote before it died says where each kill landed: before the kernels,
 * inside them, or after them; the test fails when fewer than a third landed
 * inside, or (UPDATE) when no recovery ran the GPU undo kernel or none the
 * CPU's.
 *
 * Usage: crash_gpu_dml [insert|inssel|update|lines ...] (default all).
 * GPMDB_CRASH_KILLS=n kills per workload (default 50), GPMDB_CRASH_ROWS=n
 * rows per batch (default 1M, 4M for update and lines).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

#include "gpu/dml_util.h"

static char path[256];
static int64_t batch = 1 << 20;
static int kills = 50;

typedef struct {
	double rows, sv, sa, na; /* count(*), sum(v), sum(a), count(a) */
} image;

static image img_read(gpmdb *db, const char *t)
{
	char sql[256];
	image m;

	snprintf(sql, sizeof(sql), "SELECT count(*) FROM %s", t);
	m.rows = du_num(db, sql);
	snprintf(sql, sizeof(sql), "SELECT coalesce(sum(v), 0) FROM %s", t);
	m.sv = du_num(db, sql);
	m.sa = m.na = 0;
	if (strcmp(t, "t")) /* u has no column a */
		return m;
	snprintf(sql, sizeof(sql), "SELECT coalesce(sum(a), 0) FROM %s", t);
	m.sa = du_num(db, sql);
	snprintf(sql, sizeof(sql), "SELECT count(a) FROM %s", t);
	m.na = du_num(db, sql);
	return m;
}

static int img_eq(image x, image y)
{
	return x.rows == y.rows && x.sv == y.sv && x.sa == y.sa && x.na == y.na;
}

/* The rows INSERT batch k appends: ids [first, first + batch). */
static void ins_rows(int64_t first, int64_t *id, int64_t *v, int64_t *a,
		     uint8_t *an)
{
	for (int64_t i = 0; i < batch; i++) {
		id[i] = first + i;
		v[i] = (first + i) * 2;
		a[i] = (first + i) % 1000;
		an[i] = (first + i) % 7 == 0;
	}
}

static image ins_after(image b, int64_t first)
{
	for (int64_t i = 0; i < batch; i++) {
		int64_t x = first + i;
		b.sv += (double)(x * 2);
		if (x % 7) {
			b.sa += (double)(x % 1000);
			b.na += 1;
		}
	}
	b.rows += (double)batch;
	return b;
}

/* Child: open with backend=gpu, warm CUDA, say "ready" (r) on fd, run
 * one batch (the engine says k and K around its write kernels), commit,
 * say "done" (d, or e on an error). */
static int child(const char *what, int fd)
{
	char c = 'r', fds[16];
	gpmdb *db;
	int rc;

	snprintf(fds, sizeof(fds), "%d", fd);
	setenv("GPMDB_TEST_LAUNCH_FD", fds, 1); /* read at open */
	db = du_open(path, "gpu", 0);
	if (!db)
		return 2;
	du_exec(db, "PRAGMA gpu_persist = kernel");
	if (du_exec(db, strcmp(what, "lines")
			    ? "PRAGMA gpu_update_mode = scatter"
			    : "PRAGMA gpu_update_mode = lines") != GPMDB_OK)
		return 2;
	du_num(db, "PRAGMA gpu_info"); /* CUDA up before the window */
	if (!strcmp(what, "insert")) {
		int64_t first = (int64_t)du_num(db, "SELECT count(*) FROM t");
		int64_t *id = malloc(8 * batch), *v = malloc(8 * batch),
			*a = malloc(8 * batch);
		uint8_t *an = malloc(batch);
		gpmdb_column_array arr[3] = {{GPMDB_ARRAY_INT64, id, NULL},
					     {GPMDB_ARRAY_INT64, v, NULL},
					     {GPMDB_ARRAY_INT64, a, an}};

		ins_rows(first, id, v, a, an);
		if (write(fd, &c, 1) != 1)
			return 2;
		rc = gpmdb_append_columns(db, "t", 3, NULL, arr, batch);
	} else if (!strcmp(what, "inssel")) {
		/* ins_rows' rows, from u (ids 0 .. 2 batch - 1) */
		int64_t first = (int64_t)du_num(db, "SELECT count(*) FROM t");
		double d0 = du_stat(db, "gpu_write_stats", "insert_select_dev");
		char sql[512];

		snprintf(
		    sql, sizeof(sql),
		    "INSERT INTO t SELECT id + %lld, (id + %lld) * 2, CASE "
		    "WHEN (id + %lld) %% 7 = 0 THEN NULL ELSE (id + %lld) "
		    "%% 1000 END FROM u WHERE id < %lld",
		    (long long)first, (long long)first, (long long)first,
		    (long long)first, (long long)batch);
		if (write(fd, &c, 1) != 1)
			return 2;
		rc = du_exec(db, sql);
		if (rc == GPMDB_OK &&
		    du_stat(db, "gpu_write_stats", "insert_select_dev") !=
			d0 + (double)batch) {
			fprintf(stderr, "INSERT ... SELECT did not write from "
					"the device\n");
			rc = GPMDB_ERROR;
		}
	} else {
		double u0 =
		    du_stat(db, "gpu_write_stats", "update_select_dev_batches");

		if (write(fd, &c, 1) != 1)
			return 2;
		rc = du_exec(db, "UPDATE u SET v = v + 1 WHERE id % 2 = 0");
		/* u has no index: rows and values stay on the device */
		if (rc == GPMDB_OK &&
		    du_stat(db, "gpu_write_stats",
			    "update_select_dev_batches") != u0 + 1) {
			fprintf(stderr, "the UPDATE did not write from the "
					"device\n");
			rc = GPMDB_ERROR;
		}
	}
	c = rc == GPMDB_OK ? 'd' : 'e';
	if (write(fd, &c, 1) != 1)
		return 2;
	gpmdb_close(db);
	return rc == GPMDB_OK ? 0 : 1;
}

/* Where a kill landed, from the bytes the child wrote before it died. */
enum { AT_BEFORE, AT_INSIDE, AT_AFTER };

typedef struct {
	double pre_ms, kern_ms, post_ms; /* r..k, k..K, K..d */
} timing;

/* Reads one byte (0 at EOF). */
static char rd(int fd)
{
	char c;

	return read(fd, &c, 1) == 1 ? c : 0;
}

/*
 * Runs a child.  delay_ms < 0: lets it finish and fills *tm.  Otherwise
 * kills it delay_ms after it said ready (aim 0) or after its write
 * kernels started (aim 1; a child that finishes without them is an
 * error); aim 2: the child kills itself at a crash point (its
 * GPMDB_CRASH_AT), *self set when it did.  Returns AT_* (where the kill
 * landed; AT_AFTER when it committed), -1 on an error.
 */
static int run_child(const char *what, double delay_ms, int aim, timing *tm,
		     int *self)
{
	int p[2], st, at, seen_k = 0, seen_K = 0;
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
		execl("/proc/self/exe", "crash_gpu_dml", "child", what, path,
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
		/* calibration: time every step */
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
	if (aim) {
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
	/* what it wrote before it died */
	while ((c = rd(p[0]))) {
		seen_k += c == 'k';
		seen_K += c == 'K';
		if (c == 'd')
			seen_K++;
	}
	close(p[0]);
	waitpid(pid, &st, 0);
	at = seen_K ? AT_AFTER : seen_k ? AT_INSIDE : AT_BEFORE;
	if (self)
		*self = aim == 2 && WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL;
	return at;
}

static double cseg_last;

static gpmdb *reopen(int k, double *rec_ms, double *gseg)
{
	gpmdb *db;

	/* alternate: the GPU recovery kernel, the CPU */
	setenv("GPMDB_GPU_RECOVERY", k % 2 ? "0" : "1", 1);
	db = du_open(path, "gpu", 0);
	unsetenv("GPMDB_GPU_RECOVERY");
	if (db) {
		*rec_ms = du_stat(db, "recovery_stats", "recovery_ms");
		*gseg = du_stat(db, "recovery_stats", "gpu_segments");
		cseg_last = du_stat(db, "recovery_stats", "cpu_segments");
	}
	return db;
}

static void workload(const char *what)
{
	int ins = !strcmp(what, "insert") || !strcmp(what, "inssel");
	const char *tbl = ins ? "t" : "u";
	gpmdb *db;
	image before, after;
	timing tm = {0, 0, 0};
	double rec_ms, gseg, max_rec = 0;
	int where[3] = {0, 0, 0}, after_n = 0, before_n = 0, gpu_recs = 0;
	int cpu_recs = 0, aimed = 0, chunk_tries = 0, chunk_kills = 0;
	double kern_est;
	char ok[256];

	unlink(path);
	db = du_open(path, "gpu", 1);
	CHECK(db);
	if (!db)
		return;
	CHECK_RC(du_exec(db, "CREATE TABLE t (id BIGINT, v BIGINT, a INT); "
			     "CREATE INDEX t_id ON t(id); "
			     "CREATE INDEX t_va ON t(v, a); "
			     "CREATE TABLE u (id BIGINT, v BIGINT)"),
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
	/* calibration: one batch to the end, each step timed */
	if (run_child(what, -1, 0, &tm, NULL) != AT_AFTER) {
		CHECKF(0, "%s: the calibration batch failed", what);
		return;
	}
	printf("# %s: one batch of %lld rows: %.1f ms to its write kernels, "
	       "%.2f ms in them, %.1f ms to the commit\n",
	       what, (long long)batch, tm.pre_ms, tm.kern_ms, tm.post_ms);
	srand(12345);
	/* the kernels' time as the aimed kills find it: one calibration
	 * run is noisy (a busy machine, the GPU suite's programs run side
	 * by side), so an aimed kill that lands after the kernels shortens
	 * it, one inside lets it grow back towards the calibration */
	kern_est = tm.kern_ms;
	for (int k = 0; k < kills; k++) {
		/* two in three wait for the kernels and kill inside them;
		 * the third at a random moment of the whole statement */
		double u01 = (double)rand() / RAND_MAX;
		int aim = k % 3 != 0;
		double delay =
		    aim ? kern_est * 0.9 * u01
			: (tm.pre_ms + tm.kern_ms + tm.post_ms) * 1.1 * u01;
		int at;

		db = du_open(path, "cpu", 0);
		if (!db) {
			CHECK(db);
			return;
		}
		before = img_read(db, tbl);
		if (ins && before.rows > 8.0 * batch) {
			/* keep the table small: start again */
			du_exec(db, "DROP TABLE t; CREATE TABLE t (id BIGINT, "
				    "v BIGINT, a INT); "
				    "CREATE INDEX t_id ON t(id); "
				    "CREATE INDEX t_va ON t(v, a)");
			before = img_read(db, tbl);
		}
		if (ins) {
			after = ins_after(before, (int64_t)before.rows);
		} else {
			after = before;
			after.sv +=
			    (double)batch; /* 2 * batch rows, half even */
		}
		gpmdb_close(db);
		if (ins && k % 5 == 4) {
			/* the pipeline's crash point, at hit 1 or 2 */
			char cp[64];
			int self = 0;

			snprintf(cp, sizeof(cp), "append.chunk:%d",
				 1 + (k / 5) % 2);
			setenv("GPMDB_CRASH_AT", cp, 1);
			at = run_child(what, 0, 2, &tm, &self);
			unsetenv("GPMDB_CRASH_AT");
			chunk_tries++;
			chunk_kills += self;
			aim = 0;
		} else {
			at = run_child(what, delay, aim, &tm, NULL);
		}
		CHECK(at >= 0);
		if (at >= 0)
			where[at]++;
		if (aim && at == AT_AFTER)
			kern_est *= 0.7;
		else if (aim && at == AT_INSIDE)
			kern_est = kern_est * 1.1 < tm.kern_ms ? kern_est * 1.1
							       : tm.kern_ms;
		aimed += aim;
		db = reopen(k, &rec_ms, &gseg);
		if (!db) {
			CHECK(db);
			return;
		}
		gpu_recs += gseg > 0;
		cpu_recs += cseg_last > 0;
		if (rec_ms > max_rec)
			max_rec = rec_ms;
		image now = img_read(db, tbl);
		int is_b = img_eq(now, before), is_a = img_eq(now, after);
		CHECKF(
		    is_b || is_a,
		    "%s kill %d (%.1f ms): rows %.0f sum(v) %.0f sum(a) %.0f "
		    "count(a) %.0f; before %.0f/%.0f, after %.0f/%.0f",
		    what, k, delay, now.rows, now.sv, now.sa, now.na,
		    before.rows, before.sv, after.rows, after.sv);
		if (!ins) {
			/* no torn rows (lines: nor a neighbour changed): every
			 * even row moved together */
			double lo = du_num(db, "SELECT min(v - id * 3) FROM u "
					       "WHERE id % 2 = 0");
			double hi = du_num(db, "SELECT max(v - id * 3) FROM u "
					       "WHERE id % 2 = 0");
			double odd = du_num(db, "SELECT count(*) FROM u WHERE "
						"id % 2 = 1 AND v <> id * 3");
			CHECKF(lo == hi && odd == 0,
			       "kill %d: even rows moved %.0f..%.0f, odd rows "
			       "changed %.0f",
			       k, lo, hi, odd);
		}
		after_n += is_a && !is_b;
		before_n += is_b;
		CHECKF(!strcmp(du_text(db, "PRAGMA integrity_check", ok,
				       sizeof(ok)),
			       "ok"),
		       "kill %d: integrity: %s", k, ok);
		gpmdb_close(db);
	}
	printf("# %s: %d kills (%d aimed at the kernels): %d before the write "
	       "kernels, %d inside, %d after; %d before-images, %d "
	       "after-images; HCL batches undone: %d by the GPU kernel, %d "
	       "by the CPU; longest recovery %.2f ms\n",
	       what, kills, aimed, where[AT_BEFORE], where[AT_INSIDE],
	       where[AT_AFTER], before_n, after_n, gpu_recs, cpu_recs, max_rec);
	printf("# %s: the aimed kills' estimate of the kernels' time ended at "
	       "%.2f ms (calibration %.2f ms)\n",
	       what, kern_est, tm.kern_ms);
	if (ins) {
		printf("# %s: %d of %d children killed at append.chunk\n", what,
		       chunk_kills, chunk_tries);
		/* a batch has two chunks or more: hit 1 is always reached */
		CHECKF(chunk_kills * 2 >= chunk_tries && chunk_kills > 0,
		       "%s: only %d of %d children reached append.chunk", what,
		       chunk_kills, chunk_tries);
	}
	/* the point of aiming: kills inside the kernels, recovered */
	CHECKF(where[AT_INSIDE] * 3 >= kills,
	       "%s: only %d of %d kills landed inside the write kernels", what,
	       where[AT_INSIDE], kills);
	if (!ins && where[AT_INSIDE] >= 4)
		CHECKF(gpu_recs > 0 && cpu_recs > 0,
		       "%s: HCL batches undone by the GPU %d, by the CPU %d",
		       what, gpu_recs, cpu_recs);
}

static void t_insert(void)
{
	workload("insert");
}

static void t_inssel(void)
{
	workload("inssel");
}

/* The UPDATE workloads with 4M-row batches unless GPMDB_CRASH_ROWS says
 * otherwise: with rows and values kept on the device the kernels of a 1M
 * batch took 1.7 ms on the H200, too short for aimed kills to land in
 * them (3 of 20 did); the children read the size from the environment. */
static void update_workload(const char *what)
{
	int64_t b0 = batch;
	int own = getenv("GPMDB_CRASH_ROWS") == NULL;

	if (own) {
		batch = 4 << 20;
		setenv("GPMDB_CRASH_ROWS", "4194304", 1);
	}
	workload(what);
	if (own) {
		batch = b0;
		unsetenv("GPMDB_CRASH_ROWS");
	}
}

static void t_update(void)
{
	update_workload("update");
}

static void t_lines(void)
{
	update_workload("lines");
}

/* No workload named on the command line: all of them. */
static int want(int argc, char **argv, const char *name)
{
	int on = argc < 2;

	for (int i = 1; i < argc; i++)
		on = on || !strcmp(argv[i], name);
	return on;
}

int main(int argc, char **argv)
{
	const char *e;

	snprintf(path, sizeof(path), "/dev/shm/gdml_crash_%d.db", getpid());
	if ((e = getenv("GPMDB_CRASH_ROWS")))
		batch = atoll(e) > 1024 ? atoll(e) : 1024;
	if ((e = getenv("GPMDB_CRASH_KILLS")))
		kills = atoi(e) > 0 ? atoi(e) : 1;
	if (argc == 5 && !strcmp(argv[1], "child")) {
		snprintf(path, sizeof(path), "%s", argv[3]);
		return child(argv[2], atoi(argv[4]));
	}
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "insert") && strcmp(argv[i], "inssel") &&
		    strcmp(argv[i], "update") && strcmp(argv[i], "lines")) {
			fprintf(stderr,
				"usage: %s [insert|inssel|update|lines ...]\n",
				argv[0]);
			return 2;
		}
	if (want(argc, argv, "insert"))
		TEST_RUN(t_insert);
	if (want(argc, argv, "inssel"))
		TEST_RUN(t_inssel);
	if (want(argc, argv, "update"))
		TEST_RUN(t_update);
	if (want(argc, argv, "lines"))
		TEST_RUN(t_lines);
	unlink(path);
	TEST_MAIN_END();
}
