/*
 * bench_batch.h - between bench_batch's files: bench_batch.c (the batch
 * INSERT/UPDATE benchmark, gpmdb's configurations), bench_batch_peers.c
 * (SQLite and DuckDB) and bench_batch_gpu.c (the GPU write path's own
 * measurements: --update-modes, --scopes).
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

#define BB_UI_RANGE   1000000
#define BB_PRED_LIMIT 50000 /* uniformi < this: about 5% */
#define BB_NCOLS      7
#define BB_ROW_BYTES  28.0 /* 7 four-byte values */

/* The table, the two UPDATEs and the checksum query. */
extern const char *bb_create, *bb_sql_a, *bb_sql_b, *bb_sql_ck;

typedef struct {
	uint64_t n;
	int32_t *id, *ui, *n5, *n20, *nf20;
	double *uf, *f5; /* FLOAT values, exact as double */
} bb_data;

/* UPDATE b's batch for an n-row table: k = n / 20 distinct ids (a
 * multiplicative permutation's prefix) and their new values. */
typedef struct {
	uint64_t k;
	int32_t *ids, *vals;
} bb_keys;

/* Checksums of the table after each operation. */
typedef struct {
	int64_t v[7]; /* count, sum id, ui, n5, n20, nf20, (id % 1009) * ui */
	double f[2];  /* sum uniformf, normalf5 */
} bb_ck;

enum { OP_INSERT, OP_UPD_A, OP_UPD_B, NOPS };
extern const char *op_names[NOPS];
extern const char *conf_keys[NCONF], *conf_names[NCONF];

/* The write phases of PRAGMA gpu_write_stats (bench_batch.c). */
#define BB_NPH 11

/* One configuration's results. */
typedef struct {
	bool ran;
	char status[256]; /* why it did not run */
	uint64_t n;	  /* table rows it ran with */
	double secs[NOPS], rows[NOPS], bytes[NOPS], changed[NOPS];
	double rec_ms[NOPS];	/* < 0: not measured */
	double kernel_ms[NOPS]; /* gpu_write_stats last_total_ms */
	double up_bytes[NOPS];	/* bytes the GPU path uploads */
	/* the statement's phases (ms) and wall time; ph_ok: read */
	double ph_ms[NOPS][BB_NPH], ph_total[NOPS];
	bool ph_gpu[NOPS], ph_ok[NOPS];
	int ck_ok[NOPS]; /* 1 ok, 0 mismatch, -1 not run */
	bool rec_ok[NOPS];
	char err[NOPS][256];
	/* the operation again as a fresh process's first statement
	 * (gm_fresh): gpmdb_open, the statement, the process's CUDA setup
	 * (gpu_stats init_us) and rows changed; fresh_s < 0: not run */
	double fresh_open_s[NOPS], fresh_s[NOPS], fresh_init_ms[NOPS];
	double fresh_rows[NOPS];
} bb_res;

/* Checksum mismatches and errors so far (the exit status). */
extern int bb_mismatches;

void bb_make_keys(bb_keys *kk, uint64_t n);
void bb_keys_free(bb_keys *kk);
/* The checksums after INSERT, UPDATE a, UPDATE b; *kcount_a: rows UPDATE
 * a changes. */
void bb_expect(const bb_data *d, uint64_t n, const bb_keys *kk, bb_ck ck[3],
	       uint64_t *kcount_a);
/* Compares got with want (op's checksum), counting a mismatch. */
void bb_check(bb_res *r, int op, const bb_ck *got, const bb_ck *want,
	      const char *conf, const char *when);
/* Bytes this process handed to write(2) and friends so far. */
double bb_wchar(void);

/* bench_batch_peers.c: SQLite (conf C_SQLITE, C_SQLITE_DISK) and DuckDB
 * run the three operations on an n-row table, pools in dir. */
void sq_run(bb_res *r, int conf, const bb_data *d, uint64_t n, const char *dir);
void dk_run(bb_res *r, const bb_data *d, uint64_t n, const char *dir);
/* --duck-appender rows: DuckDB's Appender row by row (default: chunks). */
extern bool dk_rowwise;

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
