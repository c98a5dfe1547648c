/*
 * batch_int.h - what batch.c (array binding, columnar append) and
 * batch_result.c (columnar results) share: a statement's batch state.
 */
#ifndef GPMDB_BATCH_INT_H
#define GPMDB_BATCH_INT_H

#include "../engine.h"

/* A result column converted for gpmdb_result_column (batch_result.c). */
typedef struct rcache {
	bool valid;
	uint64_t start; /* first row (the statement's current row) */
	int type;
	void *values;
	uint8_t *nulls;
	char *text; /* TEXT: the strings, NUL-terminated, back to back */
} rcache;

struct bsrc; /* batch.c: a bound array or a constant */

struct stmt_batch {
	struct bsrc *arr; /* per parameter; kind BS_ARRAY or BS_NONE */
	int narrays;
	bool in_loop; /* running the per-row fallback: dml_exec as usual */
	rcache *rc;
	int nrc;
};

/* The statement's batch state, made on first use (NULL: out of memory). */
stmt_batch *batch_get(gpmdb_stmt *st);

#endif /* GPMDB_BATCH_INT_H */
