/*
 * bench_register.cu - how fast CUDA pins a range of a pool-like file
 * mapping on tmpfs (cudaHostRegister), as one call or as pieces
 * registered from several threads at once (issue 16: a 50M-row GPU
 * INSERT spent 163-171 ms registering its 2.8 GB of tablets, a first GPU
 * UPDATE 10-13 ms registering its 70 MB log segment; gpu/persist.cu
 * pr_add registers one range per call).
 *
 * Usage: bench_register [DIR [MB [THREADS...]]]  (default /dev/shm 1024
 *        1 2 4 8 16)
 *
 * A file of MB MiB is allocated (posix_fallocate), mapped shared and its
 * pages faulted in on every core (MADV_POPULATE_WRITE: what pr_populate
 * does first); then, for each T, the range is registered as T pieces from
 * T threads (one piece each), timed, and unregistered (timed too).
 * Built by hand: nvcc -O2 -arch=sm_90 -Xcompiler -fopenmp
 *                -o bench_register bench_register.cu
 */
#include <errno.h>
#include <fcntl.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <cuda_runtime.h>

#include "bench_clock.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

static int fail(const char *what, cudaError_t e)
{
	fprintf(stderr, "bench_register: %s: %s\n", what,
		cudaGetErrorString(e));
	return 1;
}

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : "/dev/shm";
	uint64_t mb = argc > 2 ? strtoull(argv[2], NULL, 10) : 1024;
	int def[] = {1, 2, 4, 8, 16}, nt = argc > 3 ? argc - 3 : 5;
	uint64_t len = mb << 20, piece_min = 2ull << 20;
	char path[4200];
	cudaError_t e;
	char *m;
	int fd;

	snprintf(path, sizeof(path), "%s/bench_register_%d", dir,
		 (int)getpid());
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || posix_fallocate(fd, 0, (off_t)len) != 0) {
		fprintf(stderr, "bench_register: %s: %s\n", path,
			strerror(errno));
		return 1;
	}
	unlink(path);
	m = (char *)mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED) {
		fprintf(stderr, "bench_register: mmap: %s\n", strerror(errno));
		return 1;
	}
	if ((e = cudaFree(0)) != cudaSuccess)
		return fail("cudaFree(0)", e);
	double tp = now_ms();
#pragma omp parallel for schedule(dynamic)
	for (long i = 0; i < (long)(len / piece_min); i++)
		(void)madvise(m + i * piece_min, piece_min,
			      MADV_POPULATE_WRITE);
	tp = now_ms() - tp;
	printf("# %s: %llu MiB, populated on %d threads in %.1f ms\n\n", dir,
	       (unsigned long long)mb, omp_get_max_threads(), tp);
	printf("| threads (pieces) | register ms | GB/s | unregister ms |\n");
	printf("|---:|---:|---:|---:|\n");
	for (int k = 0; k < nt; k++) {
		int t = argc > 3 ? atoi(argv[3 + k]) : def[k];
		uint64_t per = (len / (uint64_t)t + 4095) / 4096 * 4096;
		int bad = 0;
		double t0, t1, t2;

		if (t < 1)
			continue;
		t0 = now_ms();
#pragma omp parallel for num_threads(t) schedule(static, 1) reduction(+ : bad)
		for (int i = 0; i < t; i++) {
			uint64_t o = (uint64_t)i * per;
			uint64_t l =
			    o >= len ? 0 : (len - o < per ? len - o : per);
			if (l &&
			    cudaHostRegister(m + o, l,
					     cudaHostRegisterMapped |
						 cudaHostRegisterPortable) !=
				cudaSuccess)
				bad++;
		}
		t1 = now_ms();
#pragma omp parallel for num_threads(t) schedule(static, 1)
		for (int i = 0; i < t; i++) {
			uint64_t o = (uint64_t)i * per;
			if (o < len)
				(void)cudaHostUnregister(m + o);
		}
		t2 = now_ms();
		if (bad) {
			fprintf(stderr,
				"bench_register: %d of %d pieces "
				"failed to register\n",
				bad, t);
			return 1;
		}
		printf("| %d | %.1f | %.2f | %.1f |\n", t, t1 - t0,
		       len / 1e6 / (t1 - t0), t2 - t1);
	}
	munmap(m, len);
	close(fd);
	return 0;
}
