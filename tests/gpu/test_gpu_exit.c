/*
 * test_gpu_exit.c - a process that used the GPU hands CUDA's teardown to a
 * holder process when it exits (gpu/device.cu gpu_exit_at,
 * gpu/exit_handoff.c): with GPMDB_GPU_EXIT_HANDOFF=trace the exiting
 * process says it made one; once it is reaped its output has ended and the
 * database takes a writer at once; the holder outlives it and leaves by
 * its own exit once every thread of it is gone (its pidfd; this test is
 * its subreaper, so it reaps it);
 * GPMDB_GPU_EXIT_HANDOFF=0 makes none.  The mechanism without a GPU:
 * tests/unit/test_exit_handoff.c.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

#include "gpu/dml_util.h"

static char path[256];

static void make_db(void)
{
	gpmdb *db;

	snprintf(path, sizeof(path), "test_gpu_exit_%ld.db", (long)getpid());
	unlink(path);
	db = du_open(path, "cpu", 1);
	CHECK(db);
	if (!db)
		return;
	CHECK_RC(du_exec(db, "CREATE TABLE t (a INT, b DOUBLE)"), GPMDB_OK);
	CHECK_RC(du_exec(db, "INSERT INTO t VALUES (1, 0.5), (2, 1.0), "
			     "(3, 1.5)"),
		 GPMDB_OK);
	gpmdb_close(db);
}

/* The child (this program again): a GPU statement, then the exit. */
static int child(void)
{
	gpmdb *db = du_open(path, "gpu", 0);

	if (!db)
		return 10;
	(void)du_exec(db, "PRAGMA gpu_strict = 1");
	if (du_num(db, "SELECT count(*) FROM t WHERE a > 1") != 2)
		return 11;
	gpmdb_close(db);
	return 0; /* exit(): gpu_exit_at runs */
}

/* Runs the child with GPMDB_GPU_EXIT_HANDOFF=mode, its stderr read to the
 * end into err; returns its exit status (100+: did not end). */
static int run_child(const char *mode, char *err, size_t cap)
{
	int pfd[2], st = 0;
	size_t got = 0;
	pid_t pid;

	if (pipe(pfd))
		return 99;
	pid = fork();
	if (pid == 0) {
		dup2(pfd[1], 2);
		close(pfd[0]);
		close(pfd[1]);
		setenv("GPMDB_GPU_EXIT_HANDOFF", mode, 1);
		execl("/proc/self/exe", "test_gpu_exit", "child", path,
		      (char *)NULL);
		_exit(9);
	}
	close(pfd[1]);
	for (;;) {
		struct pollfd p = {pfd[0], POLLIN, 0};
		ssize_t k;
		if (poll(&p, 1, 60000) <= 0) {
			kill(pid, SIGKILL);
			break;
		}
		k = read(pfd[0], err + got, cap - 1 - got);
		if (k <= 0 || (got += (size_t)k) >= cap - 1)
			break;
	}
	err[got] = 0;
	close(pfd[0]);
	if (waitpid(pid, &st, 0) != pid)
		return 101;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 100;
}

/* Any child left to reap after a moment (a holder reparented here)? */
static pid_t other_child(int *st)
{
	usleep(300000);
	return waitpid(-1, st, WNOHANG);
}

static void test_exit(void)
{
	char err[8192];
	int rc, st = 0, holder = 0, lines = 0;
	const char *at;

	make_db();
	rc = run_child("trace", err, sizeof(err));
	CHECKF(rc == 0, "child status %d: %s", rc, err);
	for (at = err; (at = strstr(at, "exit handoff: holder ")); at++) {
		lines++;
		holder = atoi(at + strlen("exit handoff: holder "));
	}
	CHECKF(lines == 1 && holder > 0, "%d trace lines, holder %d: %s", lines,
	       holder, err);
	{
		/* the child is reaped: a writer gets the database at once */
		gpmdb *db = du_open(path, "cpu", 0);
		CHECK(db);
		if (db) {
			CHECK_RC(du_exec(db, "UPDATE t SET b = b + 1 WHERE "
					     "a = 1"),
				 GPMDB_OK);
			gpmdb_close(db);
		}
	}
	if (holder > 0) {
		CHECK(waitpid(holder, &st, 0) == holder);
		CHECKF(WIFEXITED(st) && WEXITSTATUS(st) == 0,
		       "holder status %#x (killed: no pidfd, or with the "
		       "thread that called exit)",
		       st);
	}
	/* off: no holder */
	rc = run_child("0", err, sizeof(err));
	CHECKF(rc == 0, "child status %d (handoff off): %s", rc, err);
	CHECK(!strstr(err, "exit handoff"));
	errno = 0;
	CHECKF(other_child(&st) <= 0 && errno == ECHILD,
	       "a holder was made with GPMDB_GPU_EXIT_HANDOFF=0");
	unlink(path);
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "child")) {
		snprintf(path, sizeof(path), "%s", argv[2]);
		return child();
	}
	if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)) {
		perror("test_gpu_exit: PR_SET_CHILD_SUBREAPER");
		return 1;
	}
	TEST_RUN(test_exit);
	TEST_MAIN_END();
}
