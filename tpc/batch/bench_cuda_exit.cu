// bench_cuda_exit.cu - what a short-lived process pays for CUDA at its
// start and at its exit: a child sets CUDA up, holds what a gpmdb process
// holds after its first GPU query (device memory from a stream-ordered
// pool, pinned staging, registered host memory), then exits; the parent
// times the exit from the child's last instruction to waitpid's return
// (the driver's teardown runs in the exiting process).  Issue 17's fresh
// process measure: the exit of a gpmdb GPU process took about 60 ms where
// DuckDB's took 2 (bench_tpch --fresh on, H200).
//
// all+exit leaves by exit() (the runtime's atexit handlers run) instead of
// _exit(); all+handoff and all+handoff+exit first hand the teardown to a
// holder process (gpu/exit_handoff.c, what gpmdb does at exit).
//
// Build (by hand, like bench_register.cu):
//   nvcc -O2 -arch=sm_90 -Igpu -o bench_cuda_exit \
//       tpc/batch/bench_cuda_exit.cu gpu/exit_handoff.c
// Run: bench_cuda_exit [reps]   (one table row per variant)
#include <cuda_runtime.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_clock.h"

#include "exit_handoff.h"

#define TRY(x)                                                                 \
	do {                                                                   \
		cudaError_t e_ = (x);                                          \
		if (e_ != cudaSuccess) {                                       \
			fprintf(stderr, "%s: %s\n", #x,                        \
				cudaGetErrorString(e_));                       \
			_exit(3);                                              \
		}                                                              \
	} while (0)

// The child's part of variant v: times written to fd as
// "init setup teardown last" (ms; last: CLOCK_MONOTONIC before _exit).
static void child(const char *v, int fd)
{
	double t0 = now_ms(), t1, t2, t3;
	char out[200];
	cudaStream_t s;

	TRY(cudaSetDevice(0));
	TRY(cudaFree(0));
	TRY(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	t1 = now_ms();
	bool all = !strcmp(v, "all") || !strncmp(v, "all+", 4);
	if (all || !strcmp(v, "dev2g")) {
		void *d;
		TRY(cudaMallocAsync(&d, 2ull << 30, s));
		TRY(cudaMemsetAsync(d, 1, 2ull << 30, s));
		TRY(cudaStreamSynchronize(s));
		TRY(cudaFreeAsync(d, s)); // kept by the pool, as gpmdb's
		uint64_t keep = UINT64_MAX;
		cudaMemPool_t p;
		TRY(cudaDeviceGetDefaultMemPool(&p, 0));
		TRY(cudaMemPoolSetAttribute(p, cudaMemPoolAttrReleaseThreshold,
					    &keep));
		TRY(cudaStreamSynchronize(s));
	}
	if (all || !strcmp(v, "pin32")) {
		void *h;
		TRY(cudaHostAlloc(&h, 32u << 20, cudaHostAllocDefault));
	}
	if (all || !strcmp(v, "reg512")) {
		size_t n = 512u << 20;
		void *m =
		    mmap(NULL, n, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
		if (m == MAP_FAILED)
			_exit(4);
		TRY(cudaHostRegister(m, n, cudaHostRegisterDefault));
	}
	t2 = now_ms();
	if (!strcmp(v, "all+reset"))
		TRY(cudaDeviceReset());
	if (!strcmp(v, "all+trim")) {
		cudaMemPool_t p;
		TRY(cudaDeviceGetDefaultMemPool(&p, 0));
		TRY(cudaMemPoolTrimTo(p, 0));
		TRY(cudaDeviceSynchronize());
	}
	if (!strncmp(v, "all+handoff", 11)) {
		static const char *const keep[] = {"/dev/nvidia", NULL};
		if (gpu_exit_handoff(keep) <= 0)
			_exit(6);
	}
	t3 = now_ms();
	snprintf(out, sizeof(out), "%.3f %.3f %.3f %.3f\n", t1 - t0, t2 - t1,
		 t3 - t2, now_ms());
	if (write(fd, out, strlen(out)) < 0)
		_exit(5);
	if (strstr(v, "+exit"))
		exit(0);
	_exit(0);
}

int main(int argc, char **argv)
{
	static const char *vars[] = {
	    "none",	"ctx",	       "dev2g",		  "pin32",
	    "reg512",	"all",	       "all+trim",	  "all+reset",
	    "all+exit", "all+handoff", "all+handoff+exit"};
	int reps = argc > 1 ? atoi(argv[1]) : 3;

	printf("| variant | init ms | setup ms | before exit ms | exit ms | "
	       "fork to reaped ms |\n| --- | ---: | ---: | ---: | ---: | "
	       "---: |\n");
	for (size_t k = 0; k < sizeof(vars) / sizeof(vars[0]); k++)
		for (int r = 0; r < reps; r++) {
			int pfd[2];
			char buf[200] = "";
			double a = 0, b = 0, c = 0, last = 0, t0, t1;
			if (pipe(pfd))
				return 1;
			t0 = now_ms();
			pid_t pid = fork();
			if (pid == 0) {
				close(pfd[0]);
				if (!strcmp(vars[k], "none")) {
					char o[100];
					snprintf(o, sizeof(o), "0 0 0 %.3f\n",
						 now_ms());
					if (write(pfd[1], o, strlen(o)) < 0)
						_exit(5);
					_exit(0);
				}
				child(vars[k], pfd[1]);
			}
			close(pfd[1]);
			ssize_t got = read(pfd[0], buf, sizeof(buf) - 1);
			buf[got > 0 ? got : 0] = 0;
			close(pfd[0]);
			int st;
			waitpid(pid, &st, 0);
			t1 = now_ms();
			sscanf(buf, "%lf %lf %lf %lf", &a, &b, &c, &last);
			printf("| %s | %.1f | %.1f | %.1f | %.1f | %.1f |%s\n",
			       vars[k], a, b, c, t1 - last, t1 - t0,
			       WIFEXITED(st) && !WEXITSTATUS(st) ? ""
								 : " failed");
			fflush(stdout);
		}
	return 0;
}
