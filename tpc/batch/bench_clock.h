/*
 * bench_clock.h - the clock of the measurement tools built by hand beside
 * bench_batch (bench_grow.c, bench_register.cu, bench_cuda_exit.cu):
 * CLOCK_MONOTONIC in milliseconds.
 */
#ifndef GPMDB_BENCH_CLOCK_H
#define GPMDB_BENCH_CLOCK_H

#include <time.h>

static inline double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

#endif
