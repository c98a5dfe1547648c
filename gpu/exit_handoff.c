/*
 * exit_handoff.c - a process's exit without waiting for the GPU driver's
 * teardown.
 *
 * Why: when a process that used CUDA exits, the kernel releases its GPU
 * context as the last references to the driver's files (/dev/nvidia*)
 * and to the address space go, inside the exit: 84-177 ms on the
 * H100/H200 (tpc/batch/bench_cuda_exit.cu, docs/gpu.md "A fresh
 * process"), while the parent (the user's shell, a script, a benchmark)
 * still waits for the process to end.
 *
 * gpu_exit_handoff, called as the process exits, starts a holder: a
 * process that shares the address space (CLONE_VM: nothing is copied)
 * and keeps copies of the driver's file descriptors only.  The exiting
 * process then drops its references without being the last one, so its
 * exit is quick and it is reaped at once; the holder waits until the
 * process is gone, every thread of it (a pidfd: readable once the thread
 * group is empty), then exits, and the teardown runs in its exit, in the
 * background.  Not PR_SET_PDEATHSIG alone: it fires when the thread that
 * made the holder ends, and with exit_group that thread (the one that
 * called exit) is often gone before the others (OpenMP's, CUDA's event
 * thread in the driver): the holder died first, the process's last
 * thread paid the teardown, and 4 to 10 of 22 fresh TPC-H processes
 * still took 58-89 ms to be reaped (bench_tpch's FRESHEXIT lines,
 * 2026-11-28).  Where pidfd_open is missing (Linux before 5.3) the
 * signal is the way out.  Every other descriptor
 * (pipes, the terminal, the pool's file and its lock) is closed in the
 * holder before the call returns, so a reader of the process's output
 * sees end-of-file and the database is free when the process is reaped,
 * exactly as without the holder.
 *
 * The holder runs on a stack of its own, with every signal blocked (it
 * shares the memory, so it must never run the program's handlers), and
 * makes raw system calls only: no libc state is touched.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* clone; the Makefile defines it */
#endif
#include <dirent.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "exit_handoff.h"

#define EH_STACK (64u << 10)
#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434 /* the same number on every architecture */
#endif

/* What the holder needs; static: it lives in the shared memory, and the
 * handoff runs once, at exit. */
static struct {
	pid_t parent;
	int pidfd;   /* the parent's, or -1 */
	int n;	     /* descriptors to close */
	int *fds;    /* malloc'd by the parent */
	int started; /* a holder was made */
	int closed;  /* the holder has closed eh.fds (set by the holder) */
} eh;

static int eh_holder(void *arg)
{
	(void)arg;
	/* the way out if the pidfd cannot serve (and for a parent that is
	 * killed before it is made) */
	if (eh.pidfd < 0)
		syscall(SYS_prctl, PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
	/* the parent may have gone between clone and the prctl */
	if ((pid_t)syscall(SYS_getppid) != eh.parent && eh.pidfd < 0)
		syscall(SYS_exit_group, 0);
	for (int i = 0; i < eh.n; i++)
		syscall(SYS_close, eh.fds[i]);
	__atomic_store_n(&eh.closed, 1, __ATOMIC_RELEASE);
	if (eh.pidfd >= 0) {
		/* readable once every thread of the parent has exited (its
		 * memory and files dropped): this exit is then the last */
		struct pollfd pf = {eh.pidfd, POLLIN, 0};

		/* no timeout, signals blocked: it returns when readable (or
		 * on an error: then the process's last thread pays the
		 * teardown, as without a holder) */
		while (syscall(SYS_ppoll, &pf, 1, NULL, NULL, 0) == 0)
			;
		syscall(SYS_exit_group, 0);
	}
	/* SIGKILL (the parent's death) is the only way out: every other
	 * signal is blocked */
	for (;;)
		syscall(SYS_pause);
	return 0;
}

/* Does descriptor fd's file start with one of the prefixes? */
static int eh_keep(int fd, const char *const *keep)
{
	char link[64], path[512];
	ssize_t k;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	k = readlink(link, path, sizeof(path) - 1);
	if (k <= 0)
		return 0;
	path[k] = 0;
	for (int i = 0; keep[i]; i++)
		if (!strncmp(path, keep[i], strlen(keep[i])))
			return 1;
	return 0;
}

/* No holder: the list goes, rc is returned. */
static pid_t eh_drop(pid_t rc)
{
	free(eh.fds);
	eh.fds = NULL;
	eh.n = 0;
	return rc;
}

pid_t gpu_exit_handoff(const char *const *keep)
{
	DIR *d;
	struct dirent *de;
	int cap = 64, kept = 0, dfd;
	sigset_t all, old;
	char *stack;
	pid_t pid;

	if (eh.started)
		return 0;
	eh.fds = malloc((size_t)cap * sizeof(int));
	d = opendir("/proc/self/fd");
	if (!eh.fds || !d) {
		if (d)
			closedir(d);
		free(eh.fds);
		eh.fds = NULL;
		return -1;
	}
	dfd = dirfd(d);
	eh.n = 0;
	while ((de = readdir(d))) {
		char *end;
		long fd = strtol(de->d_name, &end, 10);

		if (*end || end == de->d_name || fd == dfd)
			continue;
		if (eh_keep((int)fd, keep)) {
			kept++;
			continue;
		}
		if (eh.n == cap) {
			int *g = realloc(eh.fds, (size_t)cap * 2 * sizeof(int));
			if (!g) {
				closedir(d);
				return eh_drop(-1);
			}
			eh.fds = g;
			cap *= 2;
		}
		eh.fds[eh.n++] = (int)fd;
	}
	closedir(d); /* before the clone: the holder never has it */
	if (!kept)
		return eh_drop(0); /* nothing of the driver's to hand over */
	stack = mmap(NULL, EH_STACK, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	if (stack == MAP_FAILED)
		return eh_drop(-1);
	eh.parent = getpid();
	/* opened after the list was made: the holder keeps it */
	eh.pidfd = (int)syscall(SYS_pidfd_open, eh.parent, 0);
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	pid = clone(eh_holder, stack + EH_STACK, CLONE_VM | SIGCHLD, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (pid < 0) {
		munmap(stack, EH_STACK);
		if (eh.pidfd >= 0)
			close(eh.pidfd);
		return eh_drop(-1);
	}
	eh.started = 1;
	/* Return once the holder has closed the other descriptors (a few
	 * microseconds), so the pipes' end and the lock's release come with
	 * this process's exit, not with the holder's.  Bounded: a holder not
	 * scheduled for 100 ms still closes them before it exits. */
	for (int i = 0;
	     i < 2000 && !__atomic_load_n(&eh.closed, __ATOMIC_ACQUIRE); i++) {
		struct timespec ts = {0, 50000};
		nanosleep(&ts, NULL);
	}
	return pid;
}
