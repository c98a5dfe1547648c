/*
 * exec.h - the CPU executor's API (engine/exec/): relations
 * (materialised column batches, rel.c), compiled expressions (compile.c),
 * the operators over plan nodes (exec.c) and the index read
 * (engine/index/exec_index.c).  It depends on the planner (plan/plan.h),
 * never the other way.
 */
#ifndef GPMDB_EXEC_H
#define GPMDB_EXEC_H

#include "../plan/plan.h"

/* ---- relations: materialised column batches ---- */

typedef struct rcol {
	etype ty;
	void *data; /* i64 (INT, DEC, NULL), double, i32 (DATE), u8, vec_str */
	uint8_t *nulls; /* one byte a row, 1 = NULL */
} rcol;

typedef struct rel {
	int ncols;
	uint64_t nrows, cap;
	rcol *cols;
	vec_arena strs;	    /* text values owned by the relation */
	vec_chunk *adopted; /* text chunks taken over from others (rel_adopt) */
	size_t bytes;	    /* accounted against the query's memory limit */
	exec_ctx *x;
} rel;

size_t rel_width(int t);
rel *rel_new(exec_ctx *x, int ncols, const etype *types);
void rel_free(rel *r);
/* Room for n more rows. */
int rel_reserve(rel *r, uint64_t n);
/* dst takes over src's text (its arena and what it adopted), so that
 * dst's values may point at src's text after src is freed. */
void rel_adopt(rel *dst, rel *src);
/* Copies a string into the relation's arena. */
int rel_str(rel *r, const char *p, uint32_t len, vec_str *out);
/* Appends row i of src (all columns, same types) / row i of vec v to c. */
int rel_copy_row(rel *dst, const rel *src, uint64_t i);
void rel_get(const rel *r, int c, uint64_t i, sval *v);
int rel_set(rel *r, int c, uint64_t i, const sval *v);
/* A vec over rows [start, start+n) of column c. */
void rel_vec(const rel *r, int c, uint64_t start, vec *v);
/* Element i of v (through its selection) as an sval. */
void rel_vec_get(const vec *v, uint32_t i, sval *s);
/* The vec type (BC_COL_*) that holds values of etype t. */
int rel_vec_type(int t);
/* Appends n values of vec v (converted to column c's type) at row nrows+k;
 * the caller bumps nrows. */
int rel_put_vec(rel *r, int c, uint64_t at, const vec *v, uint32_t n);

/* SQLite's ordering of two values of the same static type; NULL first. */
int sval_cmp(const sval *a, const sval *b);
/* Converts v to type t: mode 0 = CAST rules, 1 = column affinity on
 * INSERT (fails on text that is not a number). */
int sval_convert(exec_ctx *x, sval *v, etype t, int mode, rel *arena);
/* Text of a value into buf (>= 48 bytes) unless it is TEXT. */
const char *sval_text(const sval *v, char *buf, uint32_t *len);

/* A node's run as EXPLAIN ANALYZE counts it: exec_node's, or that of a
 * node its parent runs itself (a top-N sort under LIMIT). */
typedef struct exec_span {
	uint64_t t0, kids;
} exec_span;

/* ---- compiler and evaluation ---- */

enum { IN_COL, IN_OUTER, IN_SUBQ, IN_EXPR };

typedef struct cinput {
	int kind;
	int col;     /* IN_COL: column of the input relation; IN_OUTER: g */
	int level;   /* IN_OUTER */
	ast_expr *e; /* IN_SUBQ */
	cexpr *lhs;  /* IN_SUBQ of IN_SELECT: the left operand */
	rel *hold;   /* IN_SUBQ, IN_EXPR: this batch's values */
	rel *lhold;  /* IN_SUBQ of IN_SELECT: the left operand's values */
	etype ty;
} cinput;

struct cexpr {
	bc_program *prog;
	int ninputs;
	cinput in[BC_MAX_INPUTS];
	etype ty;
	vm_scratch scratch;
	const pnode *node; /* input layout */
	bool post;
};

/* Compiles e against node's output layout (post: aggregate output). */
int cx_compile(exec_ctx *x, ast_expr *e, const pnode *node, bool post,
	       cexpr **out);
void cx_free(cexpr *c);
/* Evaluates over rows [start, start+n) of in; *out valid until the next
 * evaluation of c. */
int cx_eval(exec_ctx *x, cexpr *c, const rel *in, uint64_t start, uint32_t n,
	    vec *out);
/* True when c reads only columns of its input relation (no subquery, outer
 * row or nested program): its batches may then be evaluated by several
 * threads at once with cx_eval_pure, each with its own scratch. */
bool cx_pure(const cexpr *c);
/* True when input k of c has one value for the whole statement: an
 * uncorrelated scalar subquery or EXISTS (no left operand, no reference
 * to an outer query).  The GPU backend runs such programs with the value
 * as a constant. */
bool cx_input_const(const cexpr *c, int k);
/* The value of such an input, computed as the CPU computes it (once per
 * statement, by exec_subquery, converted to the input's type); text is
 * valid until c's next evaluation. */
int cx_input_value(exec_ctx *x, cexpr *c, int k, sval *v);
/* Thread-safe evaluation of a pure c; vm_run's codes, message in err. */
int cx_eval_pure(const cexpr *c, const rel *in, uint64_t start, uint32_t n,
		 vec *out, vm_scratch *s, char *err, size_t errlen);
/* As cx_eval_pure over the n rows sel[0..n) of in (the output is dense:
 * row k is in's row sel[k]). */
int cx_eval_pure_sel(const cexpr *c, const rel *in, const uint32_t *sel,
		     uint32_t n, vec *out, vm_scratch *s, char *err,
		     size_t errlen);
/* Per-thread VM scratch areas for parallel evaluation (n of them, kept by
 * the connection); NULL when out of memory. */
vm_scratch *db_par_scratch(gpmdb *db, int n);

/* ---- executor ---- */

/* The rows of a node that the operator above it wants, in the node's
 * order: those from skip up to keep (a LIMIT over a SORT: its OFFSET and
 * its LIMIT + OFFSET; every other consumer: all, EXEC_ALL).  Only a SORT
 * reads it (each of its implementations: the CPU's top-N, the GPU's, the
 * spilled merge); the other operators give all their rows. */
typedef struct exec_rows {
	uint64_t skip, keep;
} exec_rows;
#define EXEC_ALL ((exec_rows){0, UINT64_MAX})

/*
 * A batch of columns: the rows of a node as handed to the operator above
 * it, on the host (a relation) or on the device (struct xg_src of
 * gpu/exec/exec_gpu_int.h: columns in HBM, read through a device
 * selection or a join's pairs).  The consumer says where it wants them:
 * a CPU operator on the host, a GPU operator on the device, where the
 * node's kind can leave its rows there (exec_op.c's device-batch
 * implementations: a cached scan, a device join, a kept projection or
 * GROUP BY).  A node that cannot (no such implementation, the backend is
 * cpu, it declines or is too large for the device) gives its relation
 * instead and at becomes EXEC_AT_HOST: the GPU operator uploads it.
 */
typedef enum { EXEC_AT_HOST, EXEC_AT_DEVICE } exec_at;
struct xg_src;
struct xg_win;
typedef struct exec_batch {
	exec_at at;
	rel *host;	    /* EXEC_AT_HOST: the rows (the caller frees) */
	struct xg_src *dev; /* EXEC_AT_DEVICE: filled in place (the
			       consumer's, its ncols columns allocated) */
	const struct xg_win *win; /* a streamed scan's window, or NULL */
} exec_batch;

int exec_node(exec_ctx *x, pnode *n, rel **out);
/* exec_node for a consumer that wants only some of n's rows */
int exec_node_rows(exec_ctx *x, pnode *n, exec_rows want, rel **out);
/* exec_op.c: n's rows for consumer as batch b, where b->at asks (see
 * exec_batch); on the device GPMDB_OK, an error, or the GPU executor's
 * XG_STREAM (a table scan too large for the column cache) */
int exec_op_batch(exec_ctx *x, pnode *consumer, pnode *n, exec_rows want,
		  exec_batch *b);
/* exec_op.c: n's rows by its GPU implementation when chosen, else by its
 * CPU one, with one fallback path (gpu_strict, cpu_fallbacks) */
int exec_op_run(exec_ctx *x, pnode *n, exec_rows want, rel **out);
/* An operator wanted on the GPU runs on the CPU: gpu_strict's error, else
 * counted in gpu_stats' cpu_fallbacks (GPMDB_OK) */
int exec_op_fallback(gpmdb *db, const char *op, const char *why);
/* The name of a plan-node kind in EXPLAIN and messages ("FILTER") */
const char *exec_op_name(int kind);
/* The CPU's LIMIT (exec.c; the GPU's LIMIT is this one over a GPU input) */
int exec_limit(exec_ctx *x, pnode *n, rel **out);
/* exec_share.c: a view used twice in a statement runs once.  Plans a
 * and b compute the same rows (node for node, no outer reference). */
bool plan_same(const pnode *a, const pnode *b);
/* n is a view's use that may take or give its rows */
bool exec_share_ok(pnode *n);
/* the rows another use made in this execution, or GPMDB_NOTFOUND */
int exec_share_get(exec_ctx *x, pnode *n, rel **out);
/* keeps a copy of r, n's rows, for the other uses */
int exec_share_put(exec_ctx *x, pnode *n, const rel *r);
/* drops the kept rows of a statement's views */
void exec_share_free(vshare *list);
/* EXPLAIN: which nodes of the plan at root would run as CPU pipelines
 * (pnode.pl_*; exec/pipe_explain.c), decided as exec_node decides. */
void exec_pipes_annotate(gpmdb_stmt *st, pnode *root);
void exec_span_begin(exec_ctx *x, exec_span *sp);
void exec_span_drop(exec_ctx *x, const exec_span *sp);
uint64_t exec_span_end(exec_ctx *x, pnode *n, const exec_span *sp, int rc,
		       const rel *out);
/* The compiled program of expression e, slot i of node n (compiled on first
 * use against in's layout; post: over an aggregate's output).  One slot
 * array per node, shared by the CPU and GPU operators. */
int exec_node_cx(exec_ctx *x, pnode *n, int i, ast_expr *e, bool post,
		 const pnode *in, cexpr **out);
int exec_mem(exec_ctx *x, size_t add);
/* The directory of spill files (exec/spill.c): PRAGMA temp_directory,
 * else the pool file's, else (":memory:") $TMPDIR or /tmp. */
void spill_dir(const gpmdb *db, char *dir, size_t size);
/* A query's result past memory_limit (exec/spill.c): when rc, plan n's
 * error, is the limit's, n runs again as a pipeline whose rows go to a
 * temporary file in their order (*out; rc otherwise, or an error saying
 * why it cannot).  spill_result_rows: its rows (*chunks: its chunks, at
 * most a batch each); spill_result_read: chunk ci as a new relation (no
 * exec_ctx); spill_free closes the file. */
typedef struct spill spill;
int spill_result(exec_ctx *x, pnode *n, int rc, spill **out);
uint64_t spill_result_rows(spill *s, uint64_t *chunks);
int spill_result_read(spill *s, uint64_t ci, rel **out);
void spill_free(spill *s);
/* A join's key columns: keys[0..n->nkeys) (slots base.. of n, compiled
 * against side's layout) evaluated over in, one column per key. */
int exec_eval_keys(exec_ctx *x, pnode *n, int base, ast_expr **keys,
		   const pnode *side, const rel *in, rel **out);
/* Runs a subquery for the current frame. */
/* Fills hold (one column) with the values of subquery e for n rows; the
 * outer row frame is x->frames[x->nframes] (row = the first row). */
int exec_subquery(exec_ctx *x, ast_expr *e, const vec *lhs, uint32_t n,
		  rel *hold);
int exec_scalar(exec_ctx *x, ast_expr *e, sval *v, rel *hold);
/* LIMIT's or OFFSET's value: an integer (REAL truncated), else a
 * datatype mismatch (exec_limit; the GPU's LIMIT too). */
int exec_limit_value(exec_ctx *x, ast_expr *e, int64_t *v);
/* exec_index.c: an index read (PN_ISCAN) */
int exec_iscan(exec_ctx *x, pnode *n, rel **out);
/* LIMIT over PROJECT/FILTERs over an ordered index read: pulls chunks of
 * rows in key order until lim + off pass the filters; -1 when n is not
 * such a LIMIT. */
int exec_index_limit(exec_ctx *x, pnode *n, int64_t want, rel **out);
/* The outer row's value of column o (o->rel > 0) in a correlated
 * subquery's run; false when no frame holds it (exec.c). */
bool exec_outer_value(exec_ctx *x, const ast_expr *o, sval *v);
/* Scans the table of a SCAN or ISCAN node (exec.c). */
int exec_scan_table(exec_ctx *x, pnode *n, rel **out);
/* Appends rows idx[0..m) of src to dst (same column types; exec.c). */
int rel_gather_rows(rel *dst, const rel *src, const uint32_t *idx, uint64_t m);

#endif /* GPMDB_EXEC_H */
