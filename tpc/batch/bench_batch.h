/*
 * bench_batch.h - between bench_batch's files: bench_batch.c (the batch
 * INSERT/UPDATE benchmark and its peers) and bench_batch_gpu.c (the GPU
 * write path's own measurements: --update-modes, --scopes).
 */
#ifndef GPMDB_BENCH_BATCH_H
#define GPMDB_BENCH_BATCH_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "gpmdb.h"

#define BB_SEED 20261122ull

/* The configurations (bench_batch.c's conf_keys, conf_names): the GPU
 * write paths (through C_CAP_HOST), gpmdb's CPU path (through
 * C_CPU_DISK), the peers.  CAP and the CPU path beside it run in msync
 * mode: on --dir forced (durability msync) and on --disk-dir. */
enum {
	C_GPU,
	C_CONV,
	C_CAP,	    /* GPU logs, host persists; --dir, msync */
	C_CAP_DISK, /* the same on --disk-dir */
	C_CAP_HOST, /* gpu_persist = host: the CAP before issue 16 */
	C_CPU,
	C_CPU_MSYNC, /* --dir, msync */
	C_CPU_DISK,
	C_SQLITE,
	C_SQLITE_DISK,
	C_DUCK,
	NCONF
};

static inline bool bb_gpu_conf(int c)
{
	return c <= C_CAP_HOST;
}

static inline bool bb_cpu_conf(int c)
{
	return c >= C_CPU && c <= C_CPU_DISK;
}

/* CAP configurations and the CPU path in msync mode */
static inline bool bb_msync_conf(int c)
{
	return (c >= C_CAP && c <= C_CAP_HOST) || c == C_CPU_MSYNC ||
	       c == C_CPU_DISK;
}

static inline bool bb_disk_conf(int c)
{
	return c == C_CAP_DISK || c == C_CPU_DISK;
}

/* A 64-bit mix of x (the data's generator). */
uint64_t bb_mix(uint64_t x);
/* Prints to every non-NULL stream. */
void bb_out(FILE *a, FILE *b, const char *fmt, ...);
/* gpmdb_exec with the statement and message in err on failure. */
int gm_exec(gpmdb *db, const char *sql, char *err, size_t len);
/* The first column of the first row of sql as a number, or -1. */
double gm_int(gpmdb *db, const char *sql);
/* Opens path with configuration conf's backend and write path. */
int gm_open(int conf, const char *path, bool create, gpmdb **out, char *err,
	    size_t len);

/* bench_batch_gpu.c: --update-modes and --scopes (n rows, pools in dir,
 * PREFIX.md when prefix); the exit status. */
int bb_modes(uint64_t n, const char *dir, const char *prefix);
int bb_scopes(uint64_t n, int reps, const char *dir, const char *prefix);

#endif /* GPMDB_BENCH_BATCH_H */
