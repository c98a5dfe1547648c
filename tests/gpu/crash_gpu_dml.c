/*
 * crash_gpu_dml.c - kill -9 at random moments during large GPU INSERT
 * and UPDATE batches (backend=gpu, kernels storing into the pool on
 * /dev/shm), then reopen: the table equals its before- or after-image
 * (row count and checksums), the integrity check is clean.  Reopens
 * alternate between the GPU recovery kernel and the CPU recovery.
 *
 * GPMDB_CRASH_KILLS=n kills per workload (default 50), GPMDB_CRASH_ROWS=n
 * rows per batch (default 1M).
 */
#include <signal.h>
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

/* Child: open with backend=gpu, warm CUDA, say "ready" on fd, run one
 * batch, commit, say "done". */
static int child(const char *what, int fd)
{
	gpmdb *db = du_open(path, "gpu", 0);
	char c = 'r';
	int rc;

	if (!db)
		return 2;
	du_exec(db, "PRAGMA gpu_persist = kernel");
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
	} else {
		if (write(fd, &c, 1) != 1)
			return 2;
		rc = du_exec(db, "UPDATE u SET v = v + 1 WHERE id % 2 = 0");
	}
	c = rc == GPMDB_OK ? 'd' : 'e';
	if (write(fd, &c, 1) != 1)
		return 2;
	gpmdb_close(db);
	return rc == GPMDB_OK ? 0 : 1;
}

/* Runs a child; kills it delay_ms after it said ready (delay < 0: lets
 * it finish).  Returns 1 when it finished, 0 when killed first; *op_ms
 * its ready-to-done time when it finished. */
static int run_child(const char *what, double delay_ms, double *op_ms)
{
	int p[2];
	char c = 0;
	pid_t pid;
	int st, done = 0;
	double t0;

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
	if (read(p[0], &c, 1) != 1 || c != 'r') {
		close(p[0]);
		waitpid(pid, &st, 0);
		return -1;
	}
	t0 = du_ms();
	if (delay_ms >= 0) {
		usleep((useconds_t)(delay_ms * 1000));
		kill(pid, SIGKILL);
	}
	if (read(p[0], &c, 1) == 1 && c == 'd') {
		done = 1;
		*op_ms = du_ms() - t0;
	}
	close(p[0]);
	waitpid(pid, &st, 0);
	if (delay_ms < 0 && !(WIFEXITED(st) && WEXITSTATUS(st) == 0))
		return -1;
	return done;
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
	const char *tbl = !strcmp(what, "insert") ? "t" : "u";
	gpmdb *db;
	image before, after;
	double op_ms = 0, rec_ms, gseg, max_rec = 0;
	int killed_mid = 0, after_n = 0, before_n = 0, gpu_recs = 0;
	int cpu_recs = 0;
	char ok[256];

	unlink(path);
	db = du_open(path, "gpu", 1);
	CHECK(db);
	if (!db)
		return;
	CHECK_RC(du_exec(db, "CREATE TABLE t (id BIGINT, v BIGINT, a INT); "
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
	/* calibration: one batch to the end */
	CHECK(run_child(what, -1, &op_ms) == 1);
	printf("# %s: one batch of %lld rows takes %.1f ms (ready to "
	       "commit)\n",
	       what, (long long)batch, op_ms);
	srand(12345);
	for (int k = 0; k < kills; k++) {
		/* odd kills aim at the end of the statement, where the
		 * kernels write (the filter comes first) */
		double u01 = (double)rand() / RAND_MAX, dummy;
		double delay =
		    k % 2 ? op_ms * (0.85 + 0.2 * u01) : op_ms * 1.2 * u01;
		int done;

		db = du_open(path, "cpu", 0);
		if (!db) {
			CHECK(db);
			return;
		}
		before = img_read(db, tbl);
		if (!strcmp(what, "insert") && before.rows > 8.0 * batch) {
			/* keep the table small: start again */
			du_exec(db, "DROP TABLE t; CREATE TABLE t (id BIGINT, "
				    "v BIGINT, a INT)");
			before = img_read(db, tbl);
		}
		if (!strcmp(what, "insert")) {
			after = ins_after(before, (int64_t)before.rows);
		} else {
			after = before;
			after.sv +=
			    (double)batch; /* 2 * batch rows, half even */
		}
		gpmdb_close(db);
		done = run_child(what, delay, &dummy);
		CHECK(done >= 0);
		killed_mid += done == 0;
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
		if (!strcmp(what, "update")) {
			/* no torn rows: every even row moved together */
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
	printf("# %s: %d kills (%d before the commit), %d before-images, %d "
	       "after-images; HCL batches undone: %d by the GPU kernel, %d "
	       "by the CPU; longest recovery %.2f ms\n",
	       what, kills, killed_mid, before_n, after_n, gpu_recs, cpu_recs,
	       max_rec);
}

static void t_insert(void)
{
	workload("insert");
}

static void t_update(void)
{
	workload("update");
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
	TEST_RUN(t_insert);
	TEST_RUN(t_update);
	unlink(path);
	TEST_MAIN_END();
}
