/*
 * test_exit_handoff.c - gpu/exit_handoff.c without a GPU: a child process
 * keeps a FIFO as "the driver's file", holds a pipe to this test and a
 * lock, hands off and exits.  The holder must keep the FIFO only (its
 * /proc fd list), the pipe must reach end-of-file and the lock be free
 * once the child is reaped, and the holder must outlive the child and end
 * after it (this test is its subreaper, so it reaps it).  A handoff made
 * by a thread that ends before the process: the holder lives on and
 * leaves by its own exit (status 0) once the process is gone; with
 * PR_SET_PDEATHSIG alone it was killed (status SIGKILL) as the process
 * went, and on the GPU machine often before the process's last thread
 * (bench_tpch's FRESHEXIT lines, 2026-11-28).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

#include "../../gpu/exit_handoff.h"

static char eh_dir[256], eh_fifo[300], eh_lock[300];

/* Read fd until end-of-file or ms pass; returns bytes read or -1 when it
 * timed out. */
static int eh_read_all(int fd, char *buf, size_t cap, int ms)
{
	size_t got = 0;

	for (;;) {
		struct pollfd p = {fd, POLLIN, 0};
		ssize_t k;

		if (poll(&p, 1, ms) <= 0)
			return -1;
		k = read(fd, buf + got, cap - 1 - got);
		if (k <= 0)
			break;
		got += (size_t)k;
		if (got >= cap - 1)
			break;
	}
	buf[got] = 0;
	return (int)got;
}

/* In the parent: the child's line on pipe out, read to its end. */
static void eh_child_says(int out[2], char *buf, size_t cap)
{
	close(out[1]);
	CHECKF(eh_read_all(out[0], buf, cap, 10000) > 0,
	       "no end-of-file on the child's pipe within 10 s");
	close(out[0]);
}

/* In the child: which of the holder's descriptors name path, and how many
 * it has besides those and its pidfd (0 expected). */
static void eh_holder_fds(pid_t h, const char *path, int *kept, int *others)
{
	char dir[64], link[128], to[512];
	*kept = *others = 0;
	snprintf(dir, sizeof(dir), "/proc/%d/fd", (int)h);
	for (int fd = 0; fd < 1024; fd++) {
		ssize_t k;
		snprintf(link, sizeof(link), "%s/%d", dir, fd);
		k = readlink(link, to, sizeof(to) - 1);
		if (k <= 0)
			continue;
		to[k] = 0;
		if (!strcmp(to, path))
			(*kept)++;
		else if (strcmp(to, "anon_inode:[pidfd]"))
			(*others)++; /* its wait for the child's end */
	}
}

static void t_handoff(void)
{
	int out[2], rfifo, st = 0;
	char buf[256];
	pid_t pid, holder = 0;
	int kept = -1, others = -1;

	CHECK(pipe(out) == 0);
	rfifo = open(eh_fifo, O_RDONLY | O_NONBLOCK);
	CHECK(rfifo >= 0);
	pid = fork();
	if (pid == 0) {
		const char *const keep[] = {eh_fifo, NULL};
		int w = open(eh_fifo, O_WRONLY);
		int l = open(eh_lock, O_RDWR | O_CREAT, 0600);
		pid_t h;

		close(out[0]);
		close(rfifo); /* the FIFO's one open file here is w */
		if (w < 0 || l < 0 || flock(l, LOCK_EX))
			_exit(10);
		h = gpu_exit_handoff(keep);
		if (h > 0)
			eh_holder_fds(h, eh_fifo, &kept, &others);
		dprintf(out[1], "%d %d %d %d\n", (int)h, kept, others,
			(int)gpu_exit_handoff(keep));
		exit(0);
	}
	CHECK(pid > 0);
	eh_child_says(out, buf, sizeof(buf));
	{
		int h = 0, again = -2;
		CHECK(sscanf(buf, "%d %d %d %d", &h, &kept, &others, &again) ==
		      4);
		holder = (pid_t)h;
		CHECKF(holder > 0, "handoff returned %d", h);
		CHECKF(kept == 1 && others == 0,
		       "holder kept %d of the FIFO and %d other files", kept,
		       others);
		CHECKF(again == 0, "a second handoff returned %d", again);
	}
	CHECK(waitpid(pid, &st, 0) == pid);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	/* the child is reaped: its lock is free (the holder closed its copy) */
	{
		int l = open(eh_lock, O_RDWR);
		CHECK(l >= 0);
		CHECKF(flock(l, LOCK_EX | LOCK_NB) == 0,
		       "lock still held after the child was reaped: %s",
		       strerror(errno));
		close(l);
	}
	/* the holder outlived the child and ended once it was gone (its
	 * pidfd; the kernel's signal where there is none); with it the FIFO's
	 * last writer went */
	if (holder > 0) {
		CHECK(waitpid(holder, &st, 0) == holder);
		CHECKF((WIFEXITED(st) && WEXITSTATUS(st) == 0) ||
			   (WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL),
		       "holder status %#x", st);
	}
	CHECKF(eh_read_all(rfifo, buf, sizeof(buf), 10000) == 0,
	       "the FIFO did not reach end-of-file");
	close(rfifo);
}

static pid_t eh_thread_holder;

static void *eh_thread(void *arg)
{
	const char *const keep[] = {eh_fifo, NULL};

	(void)arg;
	eh_thread_holder = gpu_exit_handoff(keep);
	return NULL;
}

/* The holder's state letter ('?' when it is gone). */
static char eh_state(pid_t h)
{
	char f[64], st[512] = "", *r;
	FILE *fp;

	snprintf(f, sizeof(f), "/proc/%d/stat", (int)h);
	if (!(fp = fopen(f, "r")))
		return '?';
	if (!fgets(st, sizeof(st), fp))
		st[0] = 0;
	fclose(fp);
	r = strrchr(st, ')');
	return r && r[1] == ' ' ? r[2] : '?';
}

/* The handoff made by a thread that ends while the process goes on: the
 * holder is alive 100 ms later, and ends by its own exit after the
 * process (its pidfd), not by the kernel's signal. */
static void t_thread_ends(void)
{
	int out[2], rfifo, st = 0, h = 0;
	char buf[128], state = '?';
	pid_t pid;

	CHECK(pipe(out) == 0);
	rfifo = open(eh_fifo, O_RDONLY | O_NONBLOCK);
	CHECK(rfifo >= 0);
	pid = fork();
	if (pid == 0) {
		pthread_t t;
		int w = open(eh_fifo, O_WRONLY);
		struct timespec ts = {0, 100000000};

		close(out[0]);
		close(rfifo);
		if (w < 0 || pthread_create(&t, NULL, eh_thread, NULL) ||
		    pthread_join(t, NULL))
			_exit(10);
		nanosleep(&ts, NULL);
		dprintf(out[1], "%d %c\n", (int)eh_thread_holder,
			eh_thread_holder > 0 ? eh_state(eh_thread_holder)
					     : '?');
		exit(0);
	}
	CHECK(pid > 0);
	eh_child_says(out, buf, sizeof(buf));
	CHECK(sscanf(buf, "%d %c", &h, &state) == 2);
	CHECKF(h > 0, "handoff returned %d", h);
	CHECKF(state == 'S' || state == 'R',
	       "the holder, its thread gone, is in state %c (killed with "
	       "the thread that made it?)",
	       state);
	CHECK(waitpid(pid, &st, 0) == pid);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	if (h > 0) {
		CHECK(waitpid(h, &st, 0) == h);
		CHECKF(WIFEXITED(st) && WEXITSTATUS(st) == 0,
		       "holder status %#x", st);
	}
	CHECKF(eh_read_all(rfifo, buf, sizeof(buf), 10000) == 0,
	       "the FIFO did not reach end-of-file");
	close(rfifo);
}

/* Nothing to keep: no holder, and the descriptors stay as they were. */
static void t_nothing(void)
{
	int st = 0;
	pid_t pid = fork();

	if (pid == 0) {
		const char *const keep[] = {"/no/such/prefix/", NULL};
		_exit(gpu_exit_handoff(keep) == 0 ? 0 : 1);
	}
	CHECK(pid > 0 && waitpid(pid, &st, 0) == pid);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

int main(void)
{
	const char *base = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";

	snprintf(eh_dir, sizeof(eh_dir), "%s/gpmdb-eh-XXXXXX", base);
	if (!mkdtemp(eh_dir) ||
	    prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0) {
		perror("test_exit_handoff setup");
		return 1;
	}
	snprintf(eh_fifo, sizeof(eh_fifo), "%s/fifo", eh_dir);
	snprintf(eh_lock, sizeof(eh_lock), "%s/lock", eh_dir);
	if (mkfifo(eh_fifo, 0600)) {
		perror("mkfifo");
		return 1;
	}
	TEST_RUN(t_handoff);
	TEST_RUN(t_thread_ends);
	TEST_RUN(t_nothing);
	unlink(eh_fifo);
	unlink(eh_lock);
	rmdir(eh_dir);
	TEST_MAIN_END();
}
