/*
 * exec_int.h - what the CPU executor's files share: hashing and equality
 * of relation rows, the chained hash table, a tablet's part of a scan,
 * the aggregate's states and per-thread groups, the join's emit.  Private
 * to exec*.c and pipe.c.
 */
#ifndef GPMDB_EXEC_INT_H
#define GPMDB_EXEC_INT_H

#include "../engine.h"

/* ---- rows: hashing and equality ---- */

uint64_t exec_hash_mix(uint64_t h, uint64_t v);
uint64_t exec_hash_val(const rcol *c, uint64_t i);
uint64_t exec_hash_row(const rel *r, int ncols, uint64_t i);
void exec_hash_batch(const rel *r, int ncols, uint32_t m, uint64_t *out,
		     bool nulls0);
/* Row equality, NULLs equal (GROUP BY, DISTINCT, set operations). */
bool exec_rows_eq(const rel *a, uint64_t i, const rel *b, uint64_t j,
		  int ncols);
/* Key equality of row i of k and row j of k2 (same column types). */
bool exec_keys_eq(const rel *k, uint64_t i, const rel *k2, uint64_t j);
bool exec_key_has_null(const rel *k, uint64_t i);

/* A chained hash table over row numbers. */
typedef struct htab {
	int64_t *head;
	int64_t *next;
	uint64_t *hash;
	uint64_t nb, n, cap;
} htab;

int exec_ht_init(exec_ctx *x, htab *h, uint64_t expect);
void exec_ht_free(exec_ctx *x, htab *h);
int exec_ht_add(exec_ctx *x, htab *h, uint64_t hash);
int64_t exec_ht_first(const htab *h, uint64_t hash);

/* ---- relations ---- */

rel *exec_rel_like(exec_ctx *x, const pnode *n);
/* *out = rows idx[0..m) of in, shaped as n's output; frees idx (not in). */
int exec_gather_out(exec_ctx *x, const pnode *n, const rel *in, uint32_t *idx,
		    uint64_t m, rel **out);
/* dst gets rows idx[0..m) of src appended (same column types), on all
 * threads for many rows; text copied into dst (exec_sort.c). */
int exec_gather_rows(rel *dst, const rel *src, const uint32_t *idx, uint64_t m);

/* One sort key of an INT, DEC or REAL column as an unsigned number in the
 * wanted order (NULLs by rank), with its row. */
typedef struct exec_sortkey {
	uint64_t key;
	uint32_t rank; /* 0 NULLs first, 1 values, 2 NULLs last */
	uint32_t row;
} exec_sortkey;

/* a[0..n) by (rank, key), equal ones in their order, on all threads
 * (exec_sort.c); false: out of memory, a unchanged. */
bool exec_radix_sort(exec_sortkey *a, uint64_t n);

/* Appends to dst the row numbers s + i of the n rows of v that are true;
 * returns how many. */
uint32_t exec_filter_true(const vec *v, uint32_t n, uint64_t s, uint32_t *dst);
/* Appends the pairs (li[k], ri[k]) (ri < 0: NULLs) to out; text is
 * referenced, not copied.  live: the output columns to write (others
 * keep what they held: nobody reads them), or NULL for all. */
int exec_join_emit(rel *out, const rel *l, const rel *r, const int64_t *li,
		   const int64_t *ri, uint64_t m, const uint8_t *live);

/* Evaluates c over every row of in into column col of dst (room
 * reserved), on all threads when c is pure and stores no text. */
int exec_eval_into(exec_ctx *x, cexpr *c, const rel *in, rel *dst, int col);

/* The input column that expression e of PROJECT n copies as it is, or
 * -1. */
int exec_plain_col(const pnode *n, const ast_expr *e, bool post);

/* ---- scan ---- */

/* One tablet's part of a scan: its view, its live rows (keep == NULL:
 * rows 0..m-1, none deleted) and where they go in the output. */
typedef struct scan_part {
	stg_tablet_view v;
	uint32_t *keep;
	uint64_t m, base;
	stg_plainbuf pb; /* v's encoded columns, decoded (exec_scan) */
} scan_part;

/* Copies column c (table column tc) of sp's rows into d at sp->base: not
 * TEXT.  scan_fill_text copies TEXT into r's arena. */
void scan_fill(const pnode *n, const scan_part *sp, int tc, rcol *d);
int scan_fill_text(rel *r, const scan_part *sp, int tc, rcol *d);

/* ---- operators ---- */

/* The CPU implementations of the physical operators (exec_op.c's
 * table): exec.c, exec_join.c, exec_agg.c, index/exec_index.c */
int exec_scan(exec_ctx *x, pnode *n, rel **out);
int exec_values(exec_ctx *x, pnode *n, rel **out);
int exec_filter(exec_ctx *x, pnode *n, rel **out);
int exec_project(exec_ctx *x, pnode *n, rel **out);
int exec_join(exec_ctx *x, pnode *n, rel **out);
int exec_agg(exec_ctx *x, pnode *n, rel **out);
/* exec_join over inputs l and r (freed); with drain, the joined rows
 * go to drain(arg, rows) a batch at a time instead of *out. */
int exec_join_rels(exec_ctx *x, pnode *n, rel *l, rel *r,
		   int (*drain)(void *arg, rel *out), void *arg, rel **out);
/* exec_agg over input in. */
/* frow: NULL, or *frow = the first row in in of each group (malloc). */
int exec_agg_in(exec_ctx *x, pnode *n, rel *in, rel **out, uint64_t **frow);

/* ---- spilling (spill.c) ---- */

/* rc is the error of the memory limit (x->over): the node may spill. */
bool spill_over(exec_ctx *x, int rc);
/* Forgets the statement's error before a node runs again spilling. */
void spill_clear(exec_ctx *x);
/* Join n runs as a grace hash join in this execution (x->gen; an
 * execution without a number, 0, never marks). */
static inline bool spill_marked(const exec_ctx *x, const pnode *n)
{
	return x->gen && n->spill_gen == x->gen;
}
/* Join n can run as a grace hash join (in execution x). */
bool spill_join_ok(const exec_ctx *x, const pnode *n);
/* Join n by partitions in a temporary file (n marked for this
 * execution: pnode.spill_gen); an error saying why when it cannot. */
int spill_join(exec_ctx *x, pnode *n, rel **out);
/* AGG n over relation in (freed), which passed the limit: by
 * partitions of in by the group keys' hash. */
int spill_agg_rel(exec_ctx *x, pnode *n, rel *in, rel **out);
/* ORDER BY n's rows [want.skip, want.keep) by sorted runs in a
 * temporary file. */
int spill_sort(exec_ctx *x, pnode *n, exec_rows want, rel **out);
/* ORDER BY; its rows [want.skip, want.keep) (a LIMIT above it) */
int exec_sort_top(exec_ctx *x, pnode *n, exec_rows want, rel **out);
int exec_distinct(exec_ctx *x, pnode *n, rel **out);
int exec_setop(exec_ctx *x, pnode *n, rel **out);
int exec_convert(exec_ctx *x, pnode *n, rel **out);

/* pipe.c: runs n (FILTER, PROJECT, JOIN or AGG) with the chain of
 * streaming nodes below it as one pipeline; PIPE_DECLINE: not such a
 * chain (run the node's operator).  A SEMI/ANTI join with a much larger
 * right input hashes its left rows and streams the right one into marks. */
#define PIPE_DECLINE (-1)
int pipe_run(exec_ctx *x, pnode *n, rel **out);
/* The input of SORT node n as a pipeline whose threads keep only their
 * first keep rows in n's order: *out holds them in input order (a stable
 * sort of it gives the first keep rows of the whole input). */
int pipe_run_topn(exec_ctx *x, pnode *n, uint64_t keep, rel **out);
/* What pipe_run (n a SORT: pipe_run_topn keeping keep rows) would run,
 * without running it (EXPLAIN, pipe_explain.c): the pipeline's nodes
 * with their roles (pnode.pl_role, pl_build), and the nodes that run
 * before it, in the executor's order (a SEMI/ANTI join's built left
 * input, the source relation, the joins' built inputs).  GPMDB_OK,
 * PIPE_DECLINE or an error. */
#define PIPE_SHAPE_MAX 32
typedef struct pipe_shape {
	int n, ndeps;
	pnode *node[PIPE_SHAPE_MAX];
	int8_t role[PIPE_SHAPE_MAX], build[PIPE_SHAPE_MAX];
	pnode *deps[PIPE_SHAPE_MAX];
} pipe_shape;
int pipe_plan(exec_ctx *x, pnode *n, uint64_t keep, pipe_shape *sh);
/* idx[0..m) = rows of in in SORT n's order (stable), the first keep of
 * them; returns m.  idx has room for in->nrows. */
uint64_t exec_sort_idx(const rel *in, const pnode *n, uint64_t keep,
		       uint32_t *idx);

/* ---- aggregate states ---- */

#define AGG_DECLINE (-1)

typedef struct aggst {
	int64_t cnt;
	int64_t i;
	long double r;
	sval v;
	bool has;
	char *gc;
	size_t gclen, gccap;
	int64_t plo, phi; /* agg_par: least and greatest prefix of an INT sum */
} aggst;

int agg_step(exec_ctx *x, const aggdef *a, aggst *s, const sval *v,
	     const sval *sep);
int agg_final(exec_ctx *x, const aggdef *a, aggst *s, rel *r, int c,
	      uint64_t row);
/* Adds the later partial state l into g (rows of g come first). */
bool agg_merge(const aggdef *a, aggst *g, const aggst *l);
/* agg_merge of a group's na states; false when an INT sum's prefix
 * check fails. */
bool agg_merge_all(const aggdef *aggs, int na, aggst *g, const aggst *l);
/* An INT or DECIMAL sum (checked for overflow, prefixes kept). */
bool agg_isum(const aggdef *a);

/* s->i += add for such a sum, keeping the least and greatest prefix (so
 * that a merge can tell whether the serial order overflowed); false on
 * an overflow. */
static inline bool agg_isum_add(aggst *s, int64_t add)
{
	int64_t t;

	if (__builtin_add_overflow(s->i, add, &t))
		return false;
	s->i = t;
	s->cnt++;
	if (t < s->plo)
		s->plo = t;
	if (t > s->phi)
		s->phi = t;
	return true;
}

/* One thread's groups: open addressing on the key hash, each group known
 * by its first row in keys (compared there). */
typedef struct agg_local {
	uint64_t lo, hi;
	uint64_t n, cap, nslot;
	uint64_t *hash, *frow;
	int64_t *slot;
	aggst *st;
	int err; /* GPMDB_*: the work is given up (serial path or error) */
} agg_local;

int agg_local_init(agg_local *l, int na);
void agg_local_free(agg_local *l);
/* The group of row i (hash hv) in l, added when new; -1 out of memory. */
int64_t agg_local_group(agg_local *l, const rel *keys, int na, uint64_t hv,
			uint64_t i);

#endif /* GPMDB_EXEC_INT_H */
