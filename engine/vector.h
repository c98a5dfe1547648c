/*
 * vector.h - the column batch that expression programs and operators work
 * on, and the per-batch string arena.
 *
 * A vec is one column of up to VEC_BATCH rows: a typed values array and a
 * NULL flag per row.  NULL flags are one byte per row (1 = NULL), not a
 * bitmap: byte loops vectorise without bit shuffling and the batch is
 * small (2 KiB of flags).  nulls == NULL means no row is NULL.  Values of
 * NULL rows are unspecified.
 *
 * A selection vector (sel != NULL) says that row i of the batch is element
 * sel[i] of the arrays; LOAD_COL applies it, so programs only ever see
 * dense registers.
 */
#ifndef GPMDB_VECTOR_H
#define GPMDB_VECTOR_H

#include <stddef.h>
#include <stdint.h>

#include "bytecode.h"

#define VEC_BATCH 2048

/* TEXT values: bytes (not NUL-terminated) and their length. */
typedef struct vec_str {
	const char *ptr;
	uint32_t len;
} vec_str;

/* Vector types: the input column types (BC_COL_*: INT32, INT64, FLOAT,
 * DOUBLE, DEC, DATE, BOOL, TEXT) plus VEC_NULL for an all-NULL column. */
#define VEC_NULL 0

typedef struct vec {
	uint8_t type;  /* BC_COL_* or VEC_NULL */
	uint8_t prec;  /* DEC */
	uint8_t scale; /* DEC */
	uint32_t count;
	union {
		void *data;
		int32_t *i32; /* INT32, DATE */
		int64_t *i64; /* INT64, DEC */
		float *f32;
		double *f64;
		uint8_t *u8; /* BOOL */
		vec_str *str;
	} v;
	uint8_t *nulls;	     /* 1 byte per row, 1 = NULL; NULL = none */
	const uint32_t *sel; /* optional selection vector */
} vec;

/*
 * String arena: TEXT results of functions (upper, substr, concat,
 * conversions) live here for one batch.  Memory is a list of chunks that
 * never move (results point into them); vec_arena_reset keeps the chunks,
 * so steady state allocates nothing.
 */
typedef struct vec_chunk {
	struct vec_chunk *next;
	size_t cap, used;
	char data[];
} vec_chunk;

typedef struct vec_arena {
	vec_chunk *first; /* all chunks, in order of use */
	vec_chunk *cur;	  /* the chunk being filled; NULL before any use */
} vec_arena;

void vec_arena_init(vec_arena *a);
/* n bytes that stay valid until the next reset; NULL when out of memory. */
char *vec_arena_alloc(vec_arena *a, size_t n);
void vec_arena_reset(vec_arena *a);
void vec_arena_free(vec_arena *a);

#endif /* GPMDB_VECTOR_H */
