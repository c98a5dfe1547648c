/*
 * bench_util.h - plumbing shared by the benchmarks (tpc/bench_sql.c,
 * tpc/bench_gpu.c, tpc/batch/bench_batch.c): the clock, dying with a
 * message, allocation that cannot fail, the coprime step of the
 * generators' permutations, comma lists of names, the digest of a
 * streamed (id, v) result with DuckDB's columnar reading of it, and a
 * query's result as a client saw it with the comparison of two.
 *
 * Each benchmark defines bench_prog, its name, for bench_die's messages.
 */
#ifndef GPMDB_BENCH_UTIL_H
#define GPMDB_BENCH_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../include/gpmdb.h"
#include "peers/duckdb_dl.h"

/* The benchmark's name ("bench_sql"), defined by each benchmark. */
extern const char bench_prog[];

/* Monotonic time in seconds. */
double bench_now(void);

/* Prints "<bench_prog>: what: why" on stderr and exits with status 2. */
void bench_die(const char *what, const char *why);

/* malloc of n bytes (at least one); dies when there is no memory. */
void *bench_alloc(size_t n);

uint64_t bench_gcd(uint64_t a, uint64_t b);

/* The step of the permutation i -> i * step % n of the generators: near
 * n / phi (so neighbours scatter) and coprime with n (so every value
 * occurs once); n > 0. */
uint64_t bench_coprime_step(uint64_t n);

/* Whether word is one of the comma-separated items of list. */
bool bench_in_list(const char *list, const char *word);

/* qsort comparison of doubles, ascending. */
int bench_cmp_double(const void *a, const void *b);

/* A full sort's rows (id, v) streamed through: count, sum of ids, a
 * position-weighted hash of the ids (the order) and the number of rows
 * out of order. */
typedef struct {
	uint64_t n, sum, poshash, disorder;
	double prev;
} bench_digest;

void bench_digest_add(bench_digest *g, int64_t id, double v);

/* Adds DuckDB result r's rows (BIGINT id, DOUBLE v) to g chunk by chunk,
 * straight from the vectors.  0, or -1 with err set when the columns are
 * of other types; r stays the caller's to destroy. */
int bench_duck_digest(duckdl *dl, duckdl_result *r, bench_digest *g, char *err,
		      size_t errlen);

/* A query's result as the client saw it: rows of cells (texts owned,
 * freed by qres_clear), or for a query consumed as a stream (the full
 * sort), one row digesting it. */
typedef enum { CELL_NULL, CELL_INT, CELL_REAL, CELL_TEXT } cell_kind;

typedef struct {
	cell_kind kind;
	int64_t i;
	double r;
	char *t;
} cell;

typedef struct {
	int ncols;
	uint64_t nrows, cap;
	cell *cells;
} qres;

void qres_clear(qres *q);

/* Appends a row of q->ncols zeroed cells; dies when there is no memory. */
cell *qres_row(qres *q);

/* A copy of s that cannot fail (bench_alloc). */
char *bench_strdup(const char *s);

/* q as the one row (count, sum, poshash, disorder) of digest g. */
void digest_result(const bench_digest *g, qres *q);

/* Runs sql on DuckDB's connection con into out (out->ncols set, rows
 * appended; stream: the (BIGINT id, DOUBLE v) rows as one digest row).
 * INTEGER/BIGINT are integers, VARCHAR text, the rest (DOUBLE, DECIMAL,
 * HUGEINT sums) reals.  0, or -1 with err set. */
int bench_duck_query(duckdl *dl, duckdl_connection con, const char *sql,
		     bool stream, qres *out, char *err, size_t errlen);

/* Compares q (engine name) with ref (engine ref_name): integers exactly,
 * reals (or an integer beside a real) to a relative 1e-9 (engines add
 * doubles in their own orders), text exactly.  Prints the shape's
 * difference or the first five differing cells as **MISMATCH** lines;
 * true when equal. */
bool qres_check(const char *query, const char *ref_name, const qres *ref,
		const char *name, const qres *q);

/* One value of a name/value PRAGMA (gpu_stats, gpu_write_stats,
 * recovery_stats) as a number, -1 when the row is not there. */
double bench_gpmdb_stat(gpmdb *db, const char *pragma, const char *name);

#endif /* GPMDB_BENCH_UTIL_H */
