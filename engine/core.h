/*
 * core.h - a connection and a statement as every group of the engine sees
 * them (struct gpmdb, struct gpmdb_stmt, the running statement's context
 * exec_ctx) and the connection's errors.  The planner (plan/plan.h) builds
 * on this and types.h only; engine.h gathers every group's header.
 */
#ifndef GPMDB_CORE_H
#define GPMDB_CORE_H

#include <stdatomic.h>

#include "../sql/parser.h"
#include "../storage/storage.h"
#include "types.h"
#include "vm.h"
#include "write/write_phases.h"

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
	/* PRAGMA temp_directory: where queries spill (exec/spill.c); empty:
	 * the pool file's directory */
	char temp_dir[1024];
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
	 * 2 cap, 3 host: batch_cap.h), gpu_persist_scope (GPU_SCOPE_*), the
	 * registered range */
	int gpu_persist, gpu_scope;
	/* PRAGMA gpu_log (0 hcl, 1 conventional) and gpu_log_partitions
	 * (conventional logging's partitions; 0 = BG_CONV_PARTS) */
	int gpu_log;
	uint32_t gpu_log_parts;
	/* PRAGMA gpu_update_mode (GPU_UPD_*: 0 auto, 1 scatter, 2 lines) and
	 * gpu_lines_min_density (auto's rows per dirty line; 0 = default) */
	int gpu_upd_mode;
	double gpu_lines_density;
	/* PRAGMA gpu_key_match (0 pass: a batch of bound keys matched in one
	 * pass over the cached key column; 1 probe: probed in a unique index)
	 */
	int gpu_key_match;
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
	/* PRAGMA checkpoint_* (backup.c): settings, thread, last result */
	struct db_ckpt *ckpt;
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
	bool over; /* the last memory error was the limit (spill.c) */
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
	/* pipelines run so far (EXPLAIN ANALYZE numbers them: pnode.pl_id) */
	uint32_t an_pipes;
};

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
	/* a result past memory_limit (spill_result): res is chunk rchunk
	 * of rnchunks read back, cur its row */
	struct spill *rsp;
	uint64_t rchunk, rnchunks;
	char **coltext; /* text of the current row's values */
	uint64_t gen;
	rel **holds; /* subquery results kept for one execution */
	int nholds, holds_cap;
	void **owned; /* malloc'd blocks of the plan (compiled-expr arrays) */
	int nowned, owned_cap;
	ast_arena parena; /* plan nodes and binder info */
	bool parena_init;
	vshare *vshares;	  /* the views the plan uses (plan_view) */
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
/* A view's or a CTE's SQL parsed and kept alive with the statement's plan
 * (stmt.c). */
parse_result *stmt_parse_extra(gpmdb_stmt *st, const char *sql);

#endif /* GPMDB_CORE_H */
