/*
 * write_phases.h - where a write's time goes (issue 16; docs/engine.md
 * "Write phases"): a per-connection accumulator of wall time and bytes per
 * phase of the last INSERT, UPDATE or DELETE (SQL, array-bound, or
 * gpmdb_append_columns), filled by the CPU write paths (dml.c, batch.c,
 * stmt.c) and the GPU write path (batch_gpu.c), shown by EXPLAIN ANALYZE
 * of those statements and by PRAGMA gpu_write_stats.
 *
 * Time goes to one phase at a time: wp_to makes ph the current phase and
 * returns the one it replaced, which the caller gives back to wp_to when
 * its part ends, so nested parts never count an interval twice.  Time in
 * no phase is WP_OTHER: the phases add up to the statement's wall time.
 * Outside a measured statement every call is a no-op (no clock read).
 */
#ifndef GPMDB_WRITE_PHASES_H
#define GPMDB_WRITE_PHASES_H

#include <stdbool.h>
#include <stdint.h>

#include "../../include/gpmdb.h"

enum wp_phase {
	WP_BIND,     /* values evaluated and converted to storage arrays */
	WP_KEYCHECK, /* NOT NULL and row checks made apart from the write */
	WP_LOCATE,   /* the rows: predicate plan, key probe or hash pass */
	WP_RESERVE,  /* GPU: tablets, HCL segment, the pool's registration */
	WP_UPLOAD,   /* GPU: row ids, values and layout to the device */
	WP_LOG,	     /* GPU: undo entries and tails, the log's records */
	WP_DATA,    /* the rows written (CPU: storage's call less its timers) */
	WP_PERSIST, /* bytes flushed; msync mode: the commit's disk writes */
	WP_COMMIT,  /* the commit (or a savepoint's release in BEGIN) */
	WP_INDEX,   /* GPU: index entries out, in, and their key checks */
	WP_OTHER,   /* planning, catalog, allocation, everything else */
	WP_NPHASES
};

typedef struct wp_acc {
	bool on;	/* a statement is being measured */
	bool valid;	/* a statement was measured */
	bool gpu;	/* GPU kernels wrote rows */
	int cur;	/* the phase time goes to now */
	uint64_t last;	/* when cur began (ns, CLOCK_MONOTONIC) */
	uint64_t t0;	/* the statement's start */
	uint64_t wall;	/* its wall time (ns) */
	uint64_t pers0; /* storage's bytes_persisted at the start */
	long long rows; /* rows written (gpmdb_changes) */
	int rc;		/* its result */
	char op[16];	/* INSERT, UPDATE, DELETE */
	char path[200]; /* how a batch found and wrote its rows */
	uint64_t ns[WP_NPHASES], bytes[WP_NPHASES];
} wp_acc;

/* "bind_convert", "key_check", ... "other". */
const char *wp_name(int ph);
/* A write statement starts: everything cleared, time goes to other. */
void wp_start(gpmdb *db, const char *op);
/* Makes ph the current phase; returns the previous one (-1, and nothing
 * done, when no statement is measured or ph < 0). */
int wp_to(gpmdb *db, int ph);
void wp_bytes(gpmdb *db, int ph, uint64_t n);
/* Moves up to ns of time from phase from to phase to (a GPU call's own
 * timing splits the wall time its caller charged to one phase). */
void wp_move(gpmdb *db, int from, int to, uint64_t ns);
void wp_note_gpu(gpmdb *db);
/* CLOCK_MONOTONIC in milliseconds (the write paths' own timings). */
double wp_now_ms(void);
/* The batch path's description (EXPLAIN ANALYZE shows it). */
void wp_path(gpmdb *db, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* The statement ended with rc: its wall time and rows are kept. */
void wp_finish(gpmdb *db, int rc);

#endif /* GPMDB_WRITE_PHASES_H */
