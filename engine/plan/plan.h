/*
 * plan.h - the planner's API (engine/plan, engine/index/plan_index.c):
 * bound SELECTs and DML targets -> trees of plan nodes (pnode), the binder
 * (bind.c), index access paths (ixpath).  The planner depends on core.h and
 * types.h only, never on an executor's header: the executors (engine/exec,
 * gpu/exec, engine/index/exec_index.c) read its nodes and run them
 * (docs/engine.md "Layout").
 */
#ifndef GPMDB_PLAN_H
#define GPMDB_PLAN_H

#include "../core.h"

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

/* An aggregate's SQL name (AGG_*): "count(*)", "sum", ... */
const char *plan_agg_name(int fn);

/* Column references: g is a column's id in its query's FROM layout. */
#define G_ROWID (-2)

typedef struct aggdef {
	int fn;
	bool distinct;
	ast_expr *arg; /* NULL for count(*) */
	ast_expr *sep; /* group_concat separator; NULL for ',' */
	etype res;
} aggdef;

/* The uses of one view in a statement (plan_view): the first use that
 * runs keeps its rows for the others whose plans are the same
 * (exec/exec_share.c). */
struct vshare {
	const char *name, *sql;
	pnode *first; /* the first use's plan */
	int uses;
	rel *res; /* runtime: the rows of execution gen */
	uint64_t gen;
	vshare *next;
};

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
	/* FILTER: per output column, true when the parent never reads it
	 * (plan_prune; a column only the predicate reads).  The GPU's
	 * filter output leaves those NULL instead of fetching them (TPC-H
	 * Q13's o_comment, 2.2 GB at SF30).  NULL: every column is read */
	bool *unread;
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
	/* runtime of an AGG on a join's built side: the join's other keys,
	 * set while it runs; groups without such a key are skipped
	 * (exec/pipe.c) */
	struct pgroups *keyfilter;
	/* runtime of an AGG whose aggregates are all DISTINCT over one
	 * argument: dagg, the inner AGG grouping by its keys and that
	 * argument (exec/pipe.c, made once); on that inner node, dof: the
	 * AGG it serves */
	pnode *dagg, *dof;
	/* EXPLAIN ANALYZE: runs of this node (exec_span_end), summed;
	 * an_calls 0: never run on its own */
	uint64_t an_calls, an_rows, an_ns, an_self_ns;
	uint64_t an_shared; /* runs that took another use's rows */
	uint64_t an_spill;  /* bytes written to temporary files */
	/* runtime: the execution (exec_ctx.gen) in which this join passed
	 * the memory limit and runs by partitions (exec/spill.c) */
	uint64_t spill_gen;
	/* EXPLAIN: the CPU pipeline the node is part of (exec/pipe_explain.c):
	 * an increasing number (0: none; explain.c numbers a plan's
	 * pipelines 1, 2, ... in this order), its role (PL_*) and, for a
	 * join stage, which input is built (PL_BUILD_*).  EXPLAIN ANALYZE:
	 * the pipeline it ran in. */
	uint32_t pl_id;
	int8_t pl_role, pl_build;
	/* the root of a view's use: its view's uses, and (runtime) whether
	 * its plan is the same as the first use's (1), not (-1), unknown */
	vshare *vsh;
	int8_t vsame;
};

/* pnode.pl_role, pl_build */
enum { PL_STAGE, PL_SOURCE, PL_SINK };
enum { PL_BUILD_NONE, PL_BUILD_LEFT, PL_BUILD_RIGHT };

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
/* What only the executor knows of a key while the node runs: an outer
 * query's column in a correlated subquery (AST_E_COLUMN, rel > 0), a value
 * computed from literals, parameters and uncorrelated scalar subqueries,
 * and, for an index nested loop, the outer rows' keys (ix->jrel).
 * exec_index.c gives one to plan_index_ranges; the planner gives NULL, and
 * such values are then IXV_UNKNOWN.  The planner thus never calls the
 * executor: the executor calls it with its own callbacks. */
typedef struct ixlate {
	/* e's value now (IXV_*); computed text is kept in *hold, made on
	 * first use and freed by the executor (it owns ixranges.hold) */
	int (*value)(void *arg, const ast_expr *e, sval *v, rel **hold);
	/* the outer rows of ix->jrel, and key column c of row i */
	uint64_t (*join_rows)(void *arg, const ixpath *ix);
	void (*join_key)(void *arg, const ixpath *ix, uint64_t i, int c,
			 sval *v);
	void *arg;
} ixlate;
/* The value of a key expression: a literal, a parameter's current value,
 * or (late not NULL: at run time) an outer query's column in a correlated
 * subquery or a value computed from literals, parameters and
 * uncorrelated scalar subqueries (`id = ? + 1`, `id = (SELECT max(a)
 * FROM t)`; hold keeps its text).  IXV_UNKNOWN: one of the last two
 * while planning; IXV_ERROR: computing it failed (the message is the
 * connection's). */
enum { IXV_NONE = 0, IXV_VALUE, IXV_UNKNOWN, IXV_ERROR };
int plan_index_value(const gpmdb_stmt *st, const ixlate *late,
		     const ast_expr *e, sval *v, rel **hold);
/* The ranges of an access path for the current values: GPMDB_OK (n may
 * be 0: nothing can match), 1 when a value cannot be a key (scan the
 * table instead), an error code.  ranges and keys are malloc'd. */
typedef struct ixranges {
	int n, cap;
	stg_ix_range *r;
	stg_key_val *keys; /* 2 * nkey per range: its lo, then its hi */
	rel *hold;	   /* text of computed key values (ixlate) */
} ixranges;
int plan_index_ranges(gpmdb *db, const gpmdb_stmt *st, const ixlate *late,
		      const ixpath *ix, ixranges *out);
/* Frees the ranges and keys; hold, the late values' text, is the
 * executor's to free first (late->value made it). */
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

#endif /* GPMDB_PLAN_H */
