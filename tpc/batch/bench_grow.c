/*
 * bench_grow.c - how fast a pool file on tmpfs grows by a large range, by
 * each way the pool could grow it (issue 16: the 50M-row GPU INSERT spent
 * 470-940 ms in one posix_fallocate of 2.7 GB on /dev/shm).
 *
 * Usage: bench_grow [DIR [GB [THREADS...]]]   (default /dev/shm 2.7 1 2 4 8 16)
 *
 * Each way starts from a fresh file of 64 MiB (allocated) and grows it by
 * GB, timed:
 *   fallocate      posix_fallocate of the new range, one thread (what
 *                  pool.c did), then the mapping's pages populated on T
 *                  threads (what the GPU path does before registering)
 *   pfalloc T      ftruncate, then T threads fallocate disjoint pieces
 *   populate T     ftruncate, mmap, T threads MADV_POPULATE_WRITE over
 *                  2 MiB pieces of the new range (allocating the pages)
 *   hugepop T      the same after MADV_HUGEPAGE (only helps where tmpfs
 *                  gives huge pages: shmem_enabled / huge= mount option)
 * Built by hand (no library): gcc -O2 -fopenmp -o bench_grow bench_grow.c
 */
#define _GNU_SOURCE
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

#include "bench_clock.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

static const uint64_t base = 64ull << 20, piece = 2ull << 20;

static int fresh(const char *dir, char *path, size_t cap)
{
	int fd;

	snprintf(path, cap, "%s/bench_grow_%d", dir, (int)getpid());
	unlink(path);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || posix_fallocate(fd, 0, (off_t)base) != 0) {
		fprintf(stderr, "bench_grow: cannot make %s: %s\n", path,
			strerror(errno));
		exit(1);
	}
	return fd;
}

/* MADV_POPULATE_WRITE over [base, base + len) of m on t threads. */
static int populate(char *m, uint64_t len, int t)
{
	long np = (long)((len + piece - 1) / piece);
	int bad = 0;

#pragma omp parallel for num_threads(t) schedule(dynamic) reduction(+ : bad)
	for (long i = 0; i < np; i++) {
		uint64_t o = (uint64_t)i * piece;
		uint64_t l = len - o < piece ? len - o : piece;
		if (madvise(m + base + o, l, MADV_POPULATE_WRITE) != 0)
			bad++;
	}
	return bad;
}

static void one(const char *dir, const char *how, int t, uint64_t len)
{
	char path[512];
	int fd = fresh(dir, path, sizeof(path)), bad = 0;
	double t0 = now_ms(), t1, t2 = 0;
	char *m = NULL;

	if (!strcmp(how, "fallocate")) {
		bad = posix_fallocate(fd, (off_t)base, (off_t)len) != 0;
		t1 = now_ms();
		m = mmap(NULL, base + len, PROT_READ | PROT_WRITE, MAP_SHARED,
			 fd, 0);
		if (m != MAP_FAILED)
			bad += populate(m, len, t);
		t2 = now_ms() - t1;
		t1 -= t0;
	} else {
		bad = ftruncate(fd, (off_t)(base + len)) != 0;
		if (!strcmp(how, "pfalloc")) {
			long np = t;
			uint64_t per =
			    (len / (uint64_t)np + piece - 1) / piece * piece;
#pragma omp parallel for num_threads(t) reduction(+ : bad)
			for (long i = 0; i < np; i++) {
				uint64_t o = (uint64_t)i * per;
				if (o < len)
					bad +=
					    fallocate(fd, 0, (off_t)(base + o),
						      (off_t)(len - o < per
								  ? len - o
								  : per)) != 0;
			}
		} else {
			m = mmap(NULL, base + len, PROT_READ | PROT_WRITE,
				 MAP_SHARED, fd, 0);
			if (m == MAP_FAILED) {
				bad = 1;
				m = NULL;
			} else {
				if (!strcmp(how, "hugepop"))
					madvise(m, base + len, MADV_HUGEPAGE);
				bad += populate(m, len, t);
			}
		}
		t1 = now_ms() - t0;
	}
	printf("| %s | %d | %.1f | %.1f | %.1f | %.2f | %s |\n", how, t, t1, t2,
	       t1 + t2, (double)len / 1e6 / (t1 + t2), bad ? "FAILED" : "ok");
	fflush(stdout);
	if (m && m != MAP_FAILED)
		munmap(m, base + len);
	close(fd);
	unlink(path);
}

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : "/dev/shm";
	double gb = argc > 2 ? atof(argv[2]) : 2.7;
	int th[16] = {1, 2, 4, 8, 16}, nth = 5;
	uint64_t len = (uint64_t)(gb * 1e9) / piece * piece;
	static const char *const how[] = {"fallocate", "pfalloc", "populate",
					  "hugepop"};

	if (argc > 3) {
		nth = 0;
		for (int i = 3; i < argc && nth < 16; i++)
			th[nth++] = atoi(argv[i]);
	}
	printf("bench_grow: %s, %.2f GB grown, %d cores\n\n", dir,
	       (double)len / 1e9, omp_get_num_procs());
	printf("| way | threads | grow ms | then populate ms | total ms | GB/s "
	       "| |\n|---|---:|---:|---:|---:|---:|---|\n");
	for (size_t h = 0; h < sizeof(how) / sizeof(how[0]); h++)
		for (int i = 0; i < nth; i++)
			one(dir, how[h], th[i], len);
	return 0;
}
