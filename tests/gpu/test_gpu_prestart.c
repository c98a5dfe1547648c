/*
 * test_gpu_prestart.c - a connection opened with backend=gpu begins
 * CUDA's setup and the staging buffers' allocation on a thread of its own
 * (gpu/device.cu gpu_init_async): the GPU statement after it finds them
 * made (gpu_stats init_prestart_us, init_us), a close right after the
 * open waits for the thread instead of leaving it running into exit(), a
 * fork() while it runs gives a child that can use gpmdb (the thread's
 * lock is not inherited taken), a first SELECT issued while the thread
 * runs maps its columns' pages ahead (gpu_stats prefetch_bytes) and gives
 * the CPU's rows, and GPMDB_GPU_PRESTART=0 starts nothing.
 * Each case runs in a new process of its own (one CUDA setup a process).
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"

#include "gpu/dml_util.h"

static char path[256];

static void make_db(void)
{
	gpmdb *db;

	snprintf(path, sizeof(path), "test_gpu_prestart_%ld.db",
		 (long)getpid());
	unlink(path);
	db = du_open(path, "cpu", 1);
	CHECK(db);
	if (!db)
		return;
	CHECK_RC(du_exec(db, "CREATE TABLE t (a INT, b DOUBLE)"), GPMDB_OK);
	{
		int32_t *a = malloc(4 * 200000);
		double *b = malloc(8 * 200000);
		CHECK(a && b);
		if (a && b) {
			for (int i = 0; i < 200000; i++)
				a[i] = i + 1, b[i] = (i + 1) * 0.5;
			gpmdb_column_array arr[2] = {
			    {GPMDB_ARRAY_INT32, a, NULL},
			    {GPMDB_ARRAY_DOUBLE, b, NULL}};
			CHECK_RC(
			    gpmdb_append_columns(db, "t", 2, NULL, arr, 200000),
			    GPMDB_OK);
		}
		free(a);
		free(b);
	}
	gpmdb_close(db);
}

/* The child cases (this program again, argv[1]); exit status 0: passed. */
static int child(const char *what)
{
	gpmdb *db = du_open(path, "gpu", 0);
	char q[] = "SELECT count(*), sum(b) FROM t WHERE a % 7 = 3";

	if (!db)
		return 10;
	if (!strcmp(what, "prefetch")) {
		/* the first SELECT, issued while the setup runs, maps the
		 * pages of the columns it reads first (exec_gpu_prefetch):
		 * a and b, 2.4 MB */
		uint64_t rows;
		(void)du_exec(db, "PRAGMA gpu_strict = 1");
		uint64_t h = du_hash(db, q, &rows);
		double pb = du_stat(db, "gpu_stats", "prefetch_bytes");
		double wait = du_stat(db, "gpu_stats", "init_wait_us");
		printf("prefetch: %.0f bytes mapped, waited %.0f us\n", pb,
		       wait);
		if (rows != 1)
			return 16;
		/* the same rows on the CPU */
		(void)du_exec(db, "PRAGMA backend = cpu");
		if (du_hash(db, q, &rows) != h || rows != 1)
			return 17;
		/* a setup finished before the statement began leaves
		 * nothing to overlap (not expected: it takes 100 ms; the
		 * waits of later gpu_init calls are microseconds) */
		if (wait > 20000 && pb < 2.0e6)
			return 18;
		gpmdb_close(db);
		return 0;
	}
	if (!strcmp(what, "close")) {
		/* closed while the thread may still run: close waits */
		gpmdb_close(db);
		return 0;
	}
	if (!strcmp(what, "fork")) {
		/* forked at once, likely while the thread sets up CUDA */
		pid_t pid = fork();
		if (pid == 0) {
			gpmdb *c = du_open(path, "cpu", 0);
			_exit(c && du_num(c, "SELECT count(*) FROM t") == 200000
				  ? 0
				  : 1);
		}
		int st = 0;
		if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) ||
		    WEXITSTATUS(st) != 0)
			return 11;
	}
	(void)du_exec(db, "PRAGMA gpu_strict = 1");
	if (du_num(db, "SELECT count(*) FROM t WHERE a % 7 = 3") != 28572)
		return 12;
	{
		uint64_t rows;
		(void)du_hash(db, q, &rows);
		if (rows != 1)
			return 13;
	}
	double pre = du_stat(db, "gpu_stats", "init_prestart_us");
	double init = du_stat(db, "gpu_stats", "init_us");
	printf("%s: init_us %.0f, init_prestart_us %.0f\n", what, init, pre);
	if (init <= 0)
		return 14;
	if (!strcmp(what, "off") ? pre != 0 : pre < init)
		return 15; /* the thread ran the setup, or none ran */
	gpmdb_close(db);
	return 0;
}

static int run_child(const char *self, const char *what, int off)
{
	int st = 0;
	pid_t pid = fork();

	if (pid == 0) {
		if (off)
			setenv("GPMDB_GPU_PRESTART", "0", 1);
		execl(self, self, what, path, (char *)NULL);
		_exit(9);
	}
	/* a hang (a lock inherited taken) is what the alarm catches */
	for (int i = 0; i < 600; i++) {
		pid_t w = waitpid(pid, &st, WNOHANG);
		if (w == pid)
			return WIFEXITED(st) ? WEXITSTATUS(st) : 100;
		usleep(100000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	return 101;
}

static void test_prestart(void)
{
	static const char *cases[] = {"stats", "close", "fork", "prefetch",
				      "off"};

	make_db();
	for (int i = 0; i < 5; i++) {
		int rc = run_child("/proc/self/exe", cases[i], i == 4);
		CHECKF(rc == 0, "case %s: child status %d", cases[i], rc);
	}
	unlink(path);
}

int main(int argc, char **argv)
{
	if (argc == 3) {
		snprintf(path, sizeof(path), "%s", argv[2]);
		return child(argv[1]);
	}
	TEST_RUN(test_prestart);
	TEST_MAIN_END();
}
