/*
 * engine.h - internals of the SQL engine shared by its modules.
 *
 *   db.c       connections, error state, gpmdb_exec
 *   stmt.c     statements: prepare, bind, step, columns
 *   bind.c     name resolution and static types of expressions
 *   plan.c     SELECT -> physical operator tree (plan nodes), EXPLAIN
 *   compile.c  bound expressions -> bytecode programs (bytecode.h)
 *   rel.c      materialised relations (column batches), scalar values
 *   exec.c     the CPU operators over relations
 *   dml.c      CREATE/DROP, INSERT, UPDATE, DELETE
 *   pragma.c   PRAGMA
 *
 * Types: every expression has a static type (etype): a bytecode register
 * type (BC_T_*) plus DECIMAL precision/scale and an affinity that only
 * steers SQLite's comparison rules (a column compared with text).
 */
#ifndef GPMDB_ENGINE_H
#define GPMDB_ENGINE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "../include/gpmdb.h"
#include "../sql/ast.h"
#include "../sql/parser.h"
#include "../storage/storage.h"
#include "bytecode.h"
#include "vector.h"
#include "vm.h"
#include "write_phases.h"

/* ---- types and scalar values ---- */

enum { AFF_NONE = 0, AFF_NUM, AFF_TEXT };
/* Pseudo type of an INTERVAL literal (only an operand of date +/-). */
#define ET_INTERVAL 15

typedef struct etype {
	uint8_t t; /* BC_T_* or ET_INTERVAL */
	uint8_t prec, scale, aff;
} etype;

static inline etype et_make(int t)
{
	etype e = {(uint8_t)t, 0, 0, AFF_NONE};
	return e;
}
/* Packed into ast_expr.rtype (0 = unresolved). */
static inline int et_pack(etype e)
{
	return 1 + e.t + (e.prec << 8) + (e.scale << 16) + (e.aff << 24);
}
static inline etype et_unpack(int v)
{
	etype e;
	v -= 1;
	e.t = v & 255;
	e.prec = (v >> 8) & 255;
	e.scale = (v >> 16) & 255;
	e.aff = (v >> 24) & 255;
	return e;
}
static inline bool et_numeric(int t)
{
	return t == BC_T_INT || t == BC_T_REAL || t == BC_T_DEC ||
	       t == BC_T_BOOL;
}
/* The common type of two (CASE branches, UNION columns). */
etype et_unify(etype a, etype b);
const char *et_name(etype e);

typedef struct sval {
	uint8_t t; /* BC_T_*; BC_T_NULL = NULL */
	uint8_t scale;
	union {
		int64_t i; /* INT, DEC, DATE, BOOL */
		double r;
		vec_str s;
	} u;
} sval;

/* A TEXT value over s (not copied) and an INT value: the rows that
 * PRAGMAs build. */
static inline sval sval_of_text(const char *s)
{
	sval v = {.t = BC_T_TEXT};
	v.u.s.ptr = s;
	v.u.s.len = (uint32_t)strlen(s);
	return v;
}

static inline sval sval_of_int(int64_t i)
{
	sval v = {.t = BC_T_INT};
	v.u.i = i;
	return v;
}

/* ---- relations: materialised column batches ---- */

typedef struct exec_ctx exec_ctx;

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

/* ---- plan ---- */

enum pn_kind {
	PN_SCAN,
	PN_ONE, /* one row, no columns: SELECT without FROM */
	PN_VALUES,
	PN_FILTER,
	PN_PROJECT,
	PN_JOIN,
	PN_AGG,
	PN_SORT,
	PN_DISTINCT,
	PN_LIMIT,
	PN_SETOP,
	PN_CONVERT, /* column types changed (UNION of different types) */
	PN_ISCAN,   /* a table read through an index (ixpath: plan_index.c) */
};

/* SEMI/ANTI: the left rows with / without a matching right row (EXISTS,
 * IN, NOT EXISTS after decorrelation; output = the left columns);
 * ANTI_NULL: NOT IN's rule (no row when the right side holds a NULL key,
 * every row when it is empty, a NULL left key never passes otherwise). */
enum {
	JOIN_INNER,
	JOIN_LEFT,
	JOIN_CROSS,
	JOIN_SEMI,
	JOIN_ANTI,
	JOIN_ANTI_NULL
};
enum {
	AGG_COUNT_STAR,
	AGG_COUNT,
	AGG_SUM,
	AGG_AVG,
	AGG_MIN,
	AGG_MAX,
	AGG_TOTAL,
	AGG_GROUP_CONCAT,
	AGG_ANY
};

/* Column references: g is a column's id in its query's FROM layout. */
#define G_ROWID (-2)

typedef struct cexpr cexpr;

typedef struct aggdef {
	int fn;
	bool distinct;
	ast_expr *arg; /* NULL for count(*) */
	ast_expr *sep; /* group_concat separator; NULL for ',' */
	etype res;
} aggdef;

typedef struct pnode pnode;
typedef struct ixpath ixpath;
struct pnode {
	int kind;
	pnode *l, *r;
	int ncols; /* output columns (first nvis are the visible ones) */
	int nvis;
	etype *ty;
	int *g;		    /* per output column: FROM id or -1 */
	const char **names; /* per output column */
	double est;	    /* estimated rows */

	/* SCAN */
	uint32_t table_id;
	const char *tname;
	int ntcols; /* table columns */
	int *stype; /* their storage types */
	bool rowid; /* last column is the row id */
	/* the table column of each output column (ntcols: the row id) once
	 * plan_prune dropped columns nobody reads; NULL: column i is i */
	int *tcol;
	/* ISCAN (a SCAN whose rows come from an index): the access path */
	ixpath *ix;
	bool ix_tried; /* plan_index looked at this scan already */
	/* FILTER, JOIN residual */
	ast_expr *pred;
	bool post; /* expressions use the aggregate output (post_col) */
	/* PROJECT, VALUES (one row list per row) */
	int nexprs;
	ast_expr **exprs;
	int nrows;
	ast_expr_list **rows;
	/* JOIN */
	int jtype, nkeys;
	ast_expr **lkeys, **rkeys;
	/* SEMI/ANTI (set for them only): the layout (left, right) of the
	 * pairs the residual pred is compiled against; the node's own
	 * output is the left columns */
	pnode *pair;
	/* AGG */
	int ngroup, naggs;
	ast_expr **group;
	aggdef *aggs;
	/* SORT */
	int nsort;
	int *sort_col;
	bool *desc;
	bool *nulls_first;
	/* LIMIT */
	ast_expr *limit, *offset;
	/* SETOP */
	int op; /* ast_compound_op */

	/* runtime: compiled expressions, allocated on first execution */
	cexpr **cx;
	int ncx;
	/* EXPLAIN: backend chosen by exec_gpu_annotate and why */
	int8_t xg_mode;
	const char *xg_why;
	/* runtime of a FILTER over a SCAN run by a correlated subquery: the
	 * scan and a hash on its key, kept for one execution (exec.c) */
	struct corr_cache *corr;
	/* EXPLAIN ANALYZE: runs of this node (exec_span_end), summed;
	 * an_calls 0: never run on its own */
	uint64_t an_calls, an_rows, an_ns, an_self_ns;
};

/* Per expression node (ast_expr.bind). */
typedef struct einfo {
	int post_col; /* >= 0: after aggregation, input column post_col */
	pnode *sub;   /* SUBQUERY, EXISTS, IN_SELECT */
	bool correlated;
	/* uncorrelated subquery result, valid when gen == the statement's */
	uint64_t gen;
	sval val;
	sval *set;
	uint64_t nset;
	bool set_null;
	rel *hold; /* owns the set's text */
} einfo;

/* ---- connection and statement ---- */

struct gpmdb {
	stg_pool *pool;
	int errcode;
	char errmsg[1024];
	long long changes;
	bool explicit_txn; /* BEGIN ... COMMIT */
	/* BEGIN's read snapshot, taken at its first statement and held to
	 * COMMIT/ROLLBACK (storage/lock.c) */
	bool txn_snap;
	int backend; /* 0 auto, 1 cpu, 2 gpu */
	uint64_t mem_limit;
	char path[4096];
	/* VM scratch per cx_eval nesting level, kept for the connection's
	 * life: growing one costs more than most queries */
	vm_scratch scratch[64];
	int nscratch;
	/* GPU backend (exec_gpu.c): PRAGMA gpu_strict, gpu_threshold, the
	 * column cache's owner id, gpu_stats counters */
	bool gpu_strict;
	uint64_t gpu_threshold;
	uint64_t gpu_owner;
	struct {
		uint64_t gpu_ops, cpu_fallbacks, bytes_uploaded,
		    bytes_downloaded, cache_hits, cache_misses;
		/* wall time of operators and write batches that ran on the
		 * GPU, without the CPU-run inputs of those operators */
		uint64_t gpu_ns;
	} gstat;
	/* GPU writes (batch_gpu.c): PRAGMA gpu_persist (0 auto, 1 kernel,
	 * 2 cap), gpu_persist_scope (GPU_SCOPE_*), the registered range */
	int gpu_persist, gpu_scope;
	/* PRAGMA gpu_log (0 hcl, 1 conventional) and gpu_log_partitions
	 * (conventional logging's partitions; 0 = BG_CONV_PARTS) */
	int gpu_log;
	uint32_t gpu_log_parts;
	/* PRAGMA gpu_update_mode (GPU_UPD_*: 0 auto, 1 scatter, 2 lines) and
	 * gpu_lines_min_density (auto's rows per dirty line; 0 = default) */
	int gpu_upd_mode;
	double gpu_lines_density;
	void *gpu_reg_base;
	uint64_t gpu_reg_len;
	/* one scratch per OpenMP thread for parallel evaluation */
	vm_scratch *pscratch;
	int npscratch;
	/* PRAGMA last_rows: rows returned or changed by the last statement
	 * that was not a PRAGMA (so that .stats reports the user's) */
	long long last_rows;
	/* gpmdb_interrupt: set from any thread or a signal handler, read by
	 * the executor between batches (db_check_interrupt) */
	atomic_int interrupted;
	/* gpmdb_progress_handler: progress(progress_arg) every progress_n
	 * units of work (batches of up to VEC_BATCH rows) */
	int (*progress)(void *);
	void *progress_arg;
	int progress_n;
	int progress_count;
	/* the phases of the last INSERT/UPDATE/DELETE (write_phases.c) */
	wp_acc wp;
};

/* Evaluation frame of an outer query row, for correlated subqueries. */
typedef struct frame {
	const pnode *node; /* layout of r (node->g) */
	const rel *r;
	uint64_t row;
	bool post;
} frame;

#define MAX_FRAMES 256

struct exec_ctx {
	gpmdb *db;
	gpmdb_stmt *st;
	uint64_t gen;
	size_t mem, mem_limit;
	frame frames[MAX_FRAMES];
	int nframes;
	int depth; /* nesting of cx_eval: each level has its VM scratch */
	int corr;  /* nesting of correlated subqueries run once per row */
	/* exec_node's accounting of GPU time: time and GPU operators of the
	 * nodes below the one running (see exec_node) */
	uint64_t kid_ns, kid_ops;
	/* EXPLAIN ANALYZE: record runs in the plan nodes; an_kid_ns is the
	 * time of the plan nodes below the one running, subqueries left
	 * out (their time stays in the self time of the operator that
	 * evaluates them, shown with their plans under it) */
	bool analyze;
	uint64_t an_kid_ns;
};

/* A node's run as EXPLAIN ANALYZE counts it: exec_node's, or that of a
 * node its parent runs itself (a top-N sort under LIMIT). */
typedef struct exec_span {
	uint64_t t0, kids;
} exec_span;

struct gpmdb_stmt {
	gpmdb *db;
	char *sql; /* this statement's text (NUL-terminated copy) */
	parse_result pr;
	/* extra parses (views, repeated CTEs) kept alive with the plan */
	parse_result **extra;
	int nextra, extra_cap;
	int nparams;
	sval *params;
	char **param_text;
	bool params_changed;
	bool planned;
	uint64_t dv; /* stg_data_version the plan was made at */
	pnode *plan; /* SELECT */
	int ncols;
	const char **names;
	etype *types;
	/* compiled expressions to free */
	cexpr **cxs;
	int ncxs, cxs_cap;
	/* running */
	int state; /* 0 ready, 1 rows, 2 done */
	exec_ctx x;
	rel *res;
	uint64_t cur;
	char **coltext; /* text of the current row's values */
	uint64_t gen;
	rel **holds; /* subquery results kept for one execution */
	int nholds, holds_cap;
	void **owned; /* malloc'd blocks of the plan (compiled-expr arrays) */
	int nowned, owned_cap;
	ast_arena parena; /* plan nodes and binder info */
	bool parena_init;
	char *explain;		  /* EXPLAIN text: one row per line */
	struct stmt_batch *batch; /* array bindings, result-column caches
				   * (batch.c); NULL when never used */
};

/* ---- errors ---- */

int db_err(gpmdb *db, int rc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int db_err_stg(gpmdb *db);
void db_clear(gpmdb *db);
/* The end of BEGIN ... COMMIT (committed, rolled back or abandoned): its
 * read snapshot goes. */
void db_txn_end(gpmdb *db);
/* Called by the executor between batches and operators: GPMDB_INTERRUPT
 * ("interrupted") after gpmdb_interrupt or when the progress handler asks
 * to stop, else GPMDB_OK.  Not from inside OpenMP parallel regions. */
int db_check_interrupt(gpmdb *db);
/* The name of a catalog view (sqlite_schema, sqlite_master,
 * gpmdb_schema): *sql gets (malloc'd) a CREATE VIEW listing the catalog;
 * GPMDB_NOTFOUND for other names. */
int pragma_schema_view(gpmdb *db, const char *name, char **sql);

/* ---- binder and planner ---- */

typedef struct scope scope;

typedef struct bctx {
	gpmdb_stmt *st;
	gpmdb *db;
	ast_arena *a;
	const char *sql; /* text of the parse being bound (for names) */
	int depth;
	ast_with *with[64]; /* CTEs in scope, innermost last */
	const char *with_sql[64];
	int nwith;
	int view_depth;
} bctx;

/* A binding context for statement st, allocating in its plan arena. */
bctx plan_bctx(gpmdb_stmt *st);
int plan_stmt_select(gpmdb_stmt *st);
/* Plans a SELECT; up is the scope of the enclosing query for correlated
 * subqueries (NULL for none). */
pnode *plan_select(bctx *b, ast_select *s, scope *up);
/* Binds an expression in scope sc (aggregates allowed when agg_ok). */
int bind_expr(bctx *b, scope *sc, ast_expr *e, bool agg_ok);
etype expr_type(const ast_expr *e);
einfo *einfo_get(bctx *b, ast_expr *e);
bool expr_equal(const ast_expr *a, const ast_expr *b);
bool expr_is_agg_call(const ast_expr *e, int *fn);
/* A table's columns as scope entries. */
etype stg_to_etype(const stg_column_info *c);
pnode *plan_dml(bctx *b, uint32_t tid, const char *tname, ast_expr *where,
		ast_expr **exprs, int n);
pnode *plan_table_scan(bctx *b, uint32_t tid, bool rowid);
int explain_plan(gpmdb_stmt *st, pnode *root, const char *head, bool analyze);
void explain_analyze_reset(pnode *n);

/*
 * An index access path (plan_index.c chooses it, exec_index.c runs it).
 * The key is an equality prefix (key columns 0..neq-1: a constant, or
 * IS NULL) and, on key column neq, an interval (lo/hi) or an IN list
 * (one interval per value).  Values are literals or parameters, read
 * when the node runs and converted to the column's storage
 * representation so that the range only ever widens the rows the
 * predicate can accept: the predicate stays as a FILTER above, which
 * gives the exact result.  ordered: the rows come in key order (desc:
 * reversed) for an ORDER BY that plan_index removed; the LIMIT above
 * pulls them a chunk at a time (exec_index_limit).
 */
struct ixpath {
	uint32_t index_id;
	const char *iname;
	bool unique;
	int nkey;	    /* key columns of the index */
	int *ktcol;	    /* their table columns */
	int *kstype;	    /* their storage types (stg_type) */
	uint8_t *kscale;    /* DECIMAL scales */
	const char **kname; /* names, for EXPLAIN */
	int neq;	    /* equality prefix */
	ast_expr **eq;	    /* neq values (NULL where is_null) */
	bool *is_null;	    /* key column i: IS NULL */
	bool icol;	    /* an interval on key column neq */
	ast_expr_list *in;  /* ... given as an IN list */
	ast_expr *lo, *hi;  /* ... or as bounds (NULL: open) */
	bool lo_incl, hi_incl;
	bool ordered, desc;
	/* a join's inner side (index nested loop): key columns 0..njk-1
	 * take the values of the join's keys jkey[0..njk) of each outer row
	 * (jrel: the outer rows' keys, set by exec_join while the inner side
	 * runs) instead of eq/icol */
	int njk;
	int *jkey;
	const rel *jrel;
	/* runtime, exec_index.c */
	struct ixrun *run;
	/* EXPLAIN ANALYZE: row ids the index gave, runs that scanned the
	 * table because a bound value could not be a key */
	uint64_t an_index_rows, an_fallback;
};

/* plan_index.c: turns table scans under filters (and ORDER BY ... LIMIT
 * over one table) into index reads where the cost rule says so. */
int plan_index(bctx *b, pnode *root);
/* The SQL-style description of an access path: "SEARCH t USING INDEX i
 * (a=? AND b>?)" or "SCAN t USING INDEX i". */
void plan_index_explain(const pnode *n, char *buf, size_t len);
/* The value of a key expression: a literal, a parameter's current value,
 * or (x not NULL: at run time) an outer query's column in a correlated
 * subquery or a value computed from literals, parameters and
 * uncorrelated scalar subqueries (`id = ? + 1`, `id = (SELECT max(a)
 * FROM t)`; hold keeps its text).  IXV_UNKNOWN: one of the last two
 * while planning; IXV_ERROR: computing it failed (the message is the
 * connection's). */
enum { IXV_NONE = 0, IXV_VALUE, IXV_UNKNOWN, IXV_ERROR };
int plan_index_value(const gpmdb_stmt *st, exec_ctx *x, const ast_expr *e,
		     sval *v, rel **hold);
/* The ranges of an access path for the current values: GPMDB_OK (n may
 * be 0: nothing can match), 1 when a value cannot be a key (scan the
 * table instead), an error code.  ranges and keys are malloc'd. */
typedef struct ixranges {
	int n, cap;
	stg_ix_range *r;
	stg_key_val *keys; /* 2 * nkey per range: its lo, then its hi */
	rel *hold;	   /* text of computed key values */
} ixranges;
int plan_index_ranges(gpmdb *db, const gpmdb_stmt *st, exec_ctx *x,
		      const ixpath *ix, ixranges *out);
void plan_index_ranges_free(ixranges *r);
/* Converts v to the key of a column of storage type stype (DECIMAL:
 * scale): *lo and *hi bound the stored values that may compare equal to
 * v (equal and *exact when the conversion is exact); false when no key
 * can stand for v (the table must be scanned). */
bool plan_index_key(const sval *v, int stype, int scale, stg_key_val *lo,
		    stg_key_val *hi, bool *exact);

/* scope internals used by plan.c and bind.c */
typedef struct scol {
	const char *name;
	const char *tab;
	etype ty;
	bool hidden; /* right column of USING/NATURAL */
	int g;
} scol;

typedef struct ssrc {
	const char *name;
	int first, n;
	pnode *node;
	bool left; /* joined with LEFT JOIN */
	ast_expr *on;
	ast_name_list *using_cols;
	bool natural;
	int jtype;
} ssrc;

struct scope {
	scope *up;
	int ncols, cap;
	scol *cols;
	int nsrc, srccap;
	ssrc *src;
	/* aggregate query state */
	bool has_agg;
	/* level-0 columns used by inner correlated subqueries */
	int *orefs;
	int norefs, orefcap;
};

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
/* Per-thread VM scratch areas for parallel evaluation (n of them, kept by
 * the connection); NULL when out of memory. */
vm_scratch *db_par_scratch(gpmdb *db, int n);

/* ---- executor ---- */

int exec_node(exec_ctx *x, pnode *n, rel **out);
void exec_span_begin(exec_ctx *x, exec_span *sp);
void exec_span_drop(exec_ctx *x, const exec_span *sp);
uint64_t exec_span_end(exec_ctx *x, pnode *n, const exec_span *sp, int rc,
		       const rel *out);
/* The compiled program of expression e, slot i of node n (compiled on first
 * use against in's layout; post: over an aggregate's output).  One slot
 * array per node, shared by the CPU and GPU operators. */
int exec_node_cx(exec_ctx *x, pnode *n, int i, ast_expr *e, bool post,
		 const pnode *in, cexpr **out);
/* A PRAGMA result row appended to r: name (when not NULL), then txt, or
 * num when txt is NULL (pragma.c; the GPU pragmas use it too). */
int pragma_row(gpmdb *db, rel *r, const char *name, const char *txt, sval num);
int exec_mem(exec_ctx *x, size_t add);
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
/* The value of a parameter-free literal (text points into the AST); false
 * when e is not one. */
bool exec_literal(const ast_expr *e, sval *v);
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

/* ---- statements ---- */

/* exec_gpu.c: the GPU backend.  exec_gpu_node runs n on the GPU when
 * the backend choice says so: GPMDB_OK (*out set), an error, or -1 "run
 * it on the CPU". */
int exec_gpu_node(exec_ctx *x, pnode *n, rel **out);
/* exec_gpu_ops.c: ORDER BY n on the GPU keeping its first keep rows
 * (top-N under LIMIT): as exec_gpu_node, -1 means "on the CPU". */
int exec_gpu_sort(exec_ctx *x, pnode *n, uint64_t keep, rel **out);
void exec_gpu_annotate(gpmdb_stmt *st, pnode *root);
const char *exec_gpu_explain(const pnode *n, char *buf, size_t len);
bool exec_gpu_is_pragma(const char *name);
int exec_gpu_pragma_columns(ast_stmt *s, const char ***names);
int exec_gpu_pragma(gpmdb_stmt *st, ast_stmt *s, const char *v, rel **out);
int exec_gpu_set_backend(gpmdb *db, const char *v);
void exec_gpu_open(gpmdb *db);
void exec_gpu_close(gpmdb *db);
/* After a writing statement or a transaction's end: the GPU column
 * cache's entries become stale.  Returns rc. */
int exec_gpu_after_write(int rc);

int dml_exec(gpmdb_stmt *st, ast_stmt *s);
/* What SQLite reports at prepare rather than step: CREATE of a name that
 * is taken ("table t already exists"); checked again when it runs. */
int dml_prepare_check(gpmdb_stmt *st, ast_stmt *s);
/* EXPLAIN UPDATE/DELETE: st->plan is the plan that finds the rows. */
int dml_explain_plan(gpmdb_stmt *st, ast_stmt *s);
int pragma_exec(gpmdb_stmt *st, ast_stmt *s, rel **out);
/* The indexes' SQL surface (index_sql.c): PRAGMA index_list(t) (SQLite's
 * columns, then bytes and entries), PRAGMA index_info(i) / index_xinfo(i)
 * into r (its columns made by pragma_exec), and REINDEX [[main.]name]
 * (check_only: resolve the name, as at prepare, and rebuild nothing). */
int ixsql_index_list(gpmdb *db, rel *r, const char *table);
int ixsql_index_info(gpmdb *db, rel *r, const char *index, bool xinfo);
int ixsql_reindex(gpmdb_stmt *st, ast_stmt *s, bool check_only);
/* backup.c: VACUUM [main] INTO 'file' (plain VACUUM: an error saying so). */
int vacuum_exec(gpmdb_stmt *st, ast_stmt *s);
int stmt_add_cx(gpmdb_stmt *st, cexpr *c);
int stmt_add_hold(gpmdb_stmt *st, rel *r);
int stmt_own(gpmdb_stmt *st, void *p);
int pragma_columns(ast_stmt *s, const char ***names);
parse_result *stmt_parse_extra(gpmdb_stmt *st, const char *sql);
/* Readies st->x for one execution (a new generation, no memory used). */
void stmt_exec_init(gpmdb_stmt *st);
int stmt_run_select(gpmdb_stmt *st, rel **out);
/* Drops the plan and plans again (the row-wise batch path needs a fresh
 * plan arena per parameter row). */
int stmt_replan(gpmdb_stmt *st);

/* ---- batch API (batch.c): array binding, columnar results ---- */

typedef struct stmt_batch stmt_batch;
/* True when arrays are bound and the statement is not running row-wise. */
bool batch_active(gpmdb_stmt *st);
/* Before a statement runs: MISUSE for arrays on other than INSERT, UPDATE,
 * DELETE, or arrays of different lengths. */
int batch_check(gpmdb_stmt *st, ast_stmt *s);
/* Runs an INSERT/UPDATE/DELETE once for all parameter rows (dml_exec
 * calls it inside the statement's transaction or savepoint). */
int batch_exec(gpmdb_stmt *st, ast_stmt *s);
/* Parameter i (1-based) got a scalar: its array binding ends. */
void batch_unbind(gpmdb_stmt *st, int i);
void batch_result_free(gpmdb_stmt *st);
void batch_stmt_free(gpmdb_stmt *st);

/* write_phases.c: rows to storage (bgpu_*) with their phase and bytes;
 * the commit and a savepoint's release as the commit phase */
int wp_append(gpmdb *db, uint32_t tid, const stg_schema *sch,
	      const stg_col_batch *b, uint64_t n);
int wp_update(gpmdb *db, uint32_t tid, const stg_schema *sch, int ncols,
	      const uint32_t *cols, const uint64_t *rowids, uint64_t n,
	      const stg_col_batch *vals);
int wp_delete(gpmdb *db, uint32_t tid, const uint64_t *rowids, uint64_t n);
int wp_commit(gpmdb *db);
int wp_release(gpmdb *db, const stg_mark *m);
/* EXPLAIN ANALYZE INSERT/UPDATE/DELETE after the run: st->explain gets
 * head, the plan that ran (st->plan), the batch path and the phases. */
int wp_explain(gpmdb_stmt *st, const char *head);
/* PRAGMA gpu_write_stats rows (name, value, bytes; bytes < 0: NULL) and
 * the phase rows of the last write. */
int wp_stat_row(gpmdb *db, rel *r, const char *name, double value,
		int64_t bytes);
int wp_pragma_rows(gpmdb *db, rel *r);

/* dml.c services for batch.c */
typedef struct dml_key {
	int n;
	int cols[32];
} dml_key;
/* Every set of columns that must be unique (PRIMARY KEY, UNIQUE, unique
 * indexes); *keys malloc'd. */
int dml_unique_keys(gpmdb *db, const stg_schema *sch, dml_key **keys, int *nk);
/* Table by name (views and missing tables get SQLite's messages). */
int dml_find_table(gpmdb *db, const char *name, uint32_t *tid,
		   stg_schema **sch);
/* A column's DEFAULT value (NULL when none); text lives in hold. */
int dml_default_value(gpmdb_stmt *st, const stg_column_info *c, sval *v,
		      rel *hold);

#endif /* GPMDB_ENGINE_H */
