/*
 * stmt.c - prepared statements: prepare, bind, step, result columns,
 * reset, finalize; and the transaction rule: a statement outside
 * BEGIN ... COMMIT is its own transaction; inside one, a failing
 * statement is undone alone (back to a savepoint taken before it).
 */
#include "engine.h"
#include "value.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int grow(void ***v, int *n, int *cap, void *p)
{
	if (*n == *cap) {
		int c = *cap ? *cap * 2 : 16;
		void **nv = realloc(*v, sizeof(void *) * (size_t)c);
		if (!nv)
			return -1;
		*v = nv;
		*cap = c;
	}
	(*v)[(*n)++] = p;
	return 0;
}

int stmt_add_cx(gpmdb_stmt *st, cexpr *c)
{
	return grow((void ***)&st->cxs, &st->ncxs, &st->cxs_cap, c);
}

int stmt_add_hold(gpmdb_stmt *st, rel *r)
{
	if (grow((void ***)&st->holds, &st->nholds, &st->holds_cap, r))
		return db_err(st->db, GPMDB_NOMEM, "out of memory");
	return GPMDB_OK;
}

int stmt_own(gpmdb_stmt *st, void *p)
{
	return grow(&st->owned, &st->nowned, &st->owned_cap, p);
}

parse_result *stmt_parse_extra(gpmdb_stmt *st, const char *sql)
{
	parse_result *pr = calloc(1, sizeof(*pr));
	int rc;

	if (!pr ||
	    grow((void ***)&st->extra, &st->nextra, &st->extra_cap, pr)) {
		free(pr);
		db_err(st->db, GPMDB_NOMEM, "out of memory");
		return NULL;
	}
	/* the text must outlive the tree: keep a copy in the arena */
	ast_arena_init(&pr->arena);
	rc = parse_sql(sql, strlen(sql), pr);
	if (rc) {
		db_err(st->db, rc, "%s", pr->errmsg);
		return NULL;
	}
	return pr;
}

static void free_holds(gpmdb_stmt *st)
{
	for (int i = 0; i < st->nholds; i++) {
		st->holds[i]->x = NULL;
		rel_free(st->holds[i]);
	}
	st->nholds = 0;
}

static void free_result(gpmdb_stmt *st)
{
	if (st->res) {
		st->res->x = NULL;
		rel_free(st->res);
		st->res = NULL;
	}
	spill_free(st->rsp);
	st->rsp = NULL;
	st->rchunk = st->rnchunks = 0;
	if (st->coltext)
		for (int i = 0; i < st->ncols; i++) {
			free(st->coltext[i]);
			st->coltext[i] = NULL;
		}
	free_holds(st);
	batch_result_free(st);
	exec_share_free(st->vshares);
	st->cur = 0;
	st->state = 0;
}

/* Drops the plan and everything compiled for it. */
static void free_plan(gpmdb_stmt *st)
{
	free_result(st);
	for (int i = 0; i < st->ncxs; i++)
		cx_free(st->cxs[i]);
	st->ncxs = 0;
	for (int i = 0; i < st->nowned; i++)
		free(st->owned[i]);
	st->nowned = 0;
	for (int i = 0; i < st->nextra; i++) {
		parse_result_free(st->extra[i]);
		free(st->extra[i]);
	}
	st->nextra = 0;
	st->vshares = NULL; /* in parena; their rows freed above */
	if (st->parena_init)
		ast_arena_free(&st->parena);
	ast_arena_init(&st->parena);
	st->parena_init = true;
	st->plan = NULL;
	st->planned = false;
}

static const char *explain_names[] = {"plan"};

/* The statements whose phases are measured (write_phases.h). */
static bool is_dml(int kind)
{
	return kind == AST_STMT_INSERT || kind == AST_STMT_UPDATE ||
	       kind == AST_STMT_DELETE;
}

static int plan_now(gpmdb_stmt *st)
{
	ast_stmt *s = st->pr.stmt;
	int rc;

	free_plan(st);
	/* EXPLAIN ANALYZE of INSERT/UPDATE/DELETE runs the write and shows
	 * its phases; other statements have no figures to show */
	if (s->explain == 3 && s->kind != AST_STMT_SELECT && !is_dml(s->kind))
		return db_err(st->db, GPMDB_ERROR,
			      "EXPLAIN ANALYZE supports SELECT, INSERT, UPDATE "
			      "and DELETE, not %s",
			      ast_stmt_kind_name(s->kind));
	if (s->kind == AST_STMT_SELECT) {
		if ((rc = plan_stmt_select(st)))
			return rc;
	} else if (s->kind == AST_STMT_PRAGMA) {
		st->ncols = pragma_columns(s, &st->names);
	} else {
		if ((rc = dml_prepare_check(st, s)))
			return rc;
		st->ncols = 0;
		/* EXPLAIN shows how an UPDATE/DELETE finds its rows */
		if (s->explain &&
		    (s->kind == AST_STMT_UPDATE ||
		     s->kind == AST_STMT_DELETE) &&
		    (rc = dml_explain_plan(st, s)))
			return rc;
	}
	if (s->explain) {
		st->ncols = 1;
		st->names = explain_names;
	}
	free(st->coltext);
	st->coltext = calloc((size_t)st->ncols + 1, sizeof(char *));
	if (!st->coltext)
		return db_err(st->db, GPMDB_NOMEM, "out of memory");
	st->planned = true;
	st->params_changed = false;
	st->dv = stg_data_version(st->db->pool);
	return GPMDB_OK;
}

int stmt_replan(gpmdb_stmt *st)
{
	return plan_now(st);
}

int gpmdb_prepare(gpmdb *db, const char *sql, int nbyte, gpmdb_stmt **out,
		  const char **tail)
{
	size_t len;
	gpmdb_stmt *st;
	int rc;

	if (out)
		*out = NULL;
	if (!db || !out)
		return GPMDB_MISUSE;
	db_clear(db);
	if (!sql) {
		if (tail)
			*tail = NULL;
		return GPMDB_OK;
	}
	len = nbyte < 0 ? strlen(sql) : strnlen(sql, (size_t)nbyte);
	st = calloc(1, sizeof(*st));
	if (!st)
		return db_err(db, GPMDB_NOMEM, "out of memory");
	st->db = db;
	rc = parse_sql(sql, len, &st->pr);
	if (tail)
		*tail = sql + (rc ? len : st->pr.tail);
	if (rc) {
		db_err(db, rc, "%s", st->pr.errmsg);
		gpmdb_finalize(st);
		db->errcode = rc;
		return rc;
	}
	if (!st->pr.stmt) {
		gpmdb_finalize(st);
		return GPMDB_OK;
	}
	/* names of result columns are slices of the text */
	st->sql = malloc(st->pr.tail + 1);
	if (!st->sql) {
		gpmdb_finalize(st);
		return db_err(db, GPMDB_NOMEM, "out of memory");
	}
	memcpy(st->sql, sql, st->pr.tail);
	st->sql[st->pr.tail] = 0;
	st->nparams = st->pr.nparams;
	if (st->nparams) {
		st->params = calloc((size_t)st->nparams, sizeof(sval));
		st->param_text = calloc((size_t)st->nparams, sizeof(char *));
		if (!st->params || !st->param_text) {
			gpmdb_finalize(st);
			return db_err(db, GPMDB_NOMEM, "out of memory");
		}
	}
	st->x.db = db;
	st->x.st = st;
	/* the catalog as committed (another connection may be writing) */
	bool snap = !stg_in_txn(db->pool) && !db->txn_snap;
	if (snap && stg_read_begin(db->pool)) {
		rc = db_err_stg(db);
		gpmdb_finalize(st);
		return rc;
	}
	rc = plan_now(st);
	if (snap)
		stg_read_end(db->pool);
	if (rc) {
		/* keep the message: finalize does not touch it */
		gpmdb_finalize(st);
		return rc;
	}
	*out = st;
	return GPMDB_OK;
}

int gpmdb_finalize(gpmdb_stmt *st)
{
	if (!st)
		return GPMDB_OK;
	free_plan(st);
	if (st->parena_init)
		ast_arena_free(&st->parena);
	free(st->cxs);
	free(st->owned);
	free(st->extra);
	free(st->holds);
	free(st->coltext);
	for (int i = 0; i < st->nparams; i++)
		free(st->param_text ? st->param_text[i] : NULL);
	free(st->param_text);
	free(st->params);
	free(st->explain);
	batch_stmt_free(st);
	free(st->sql);
	parse_result_free(&st->pr);
	free(st);
	return GPMDB_OK;
}

int gpmdb_reset(gpmdb_stmt *st)
{
	if (!st)
		return GPMDB_OK;
	free_result(st);
	return GPMDB_OK;
}

/* ---- parameters ---- */

static sval *param_slot(gpmdb_stmt *st, int i, int *rc)
{
	if (!st) {
		*rc = GPMDB_MISUSE;
		return NULL;
	}
	db_clear(st->db);
	if (st->state != 0) {
		*rc = db_err(st->db, GPMDB_MISUSE,
			     "bind on a running statement (call gpmdb_reset "
			     "first)");
		return NULL;
	}
	if (i < 1 || i > st->nparams) {
		*rc = db_err(st->db, GPMDB_RANGE,
			     "parameter index %d out of range (1..%d)", i,
			     st->nparams);
		return NULL;
	}
	free(st->param_text[i - 1]);
	st->param_text[i - 1] = NULL;
	st->params_changed = true;
	batch_unbind(st, i); /* a scalar replaces an array binding */
	*rc = GPMDB_OK;
	return &st->params[i - 1];
}

int gpmdb_bind_int64(gpmdb_stmt *st, int i, long long v)
{
	int rc;
	sval *p = param_slot(st, i, &rc);

	if (p) {
		memset(p, 0, sizeof(*p));
		p->t = BC_T_INT;
		p->u.i = v;
	}
	return rc;
}

int gpmdb_bind_int(gpmdb_stmt *st, int i, int v)
{
	return gpmdb_bind_int64(st, i, v);
}

int gpmdb_bind_double(gpmdb_stmt *st, int i, double v)
{
	int rc;
	sval *p = param_slot(st, i, &rc);

	if (p) {
		memset(p, 0, sizeof(*p));
		if (v != v) {
			p->t = BC_T_NULL; /* NaN is NULL, as in SQLite */
		} else {
			p->t = BC_T_REAL;
			p->u.r = v;
		}
	}
	return rc;
}

int gpmdb_bind_text(gpmdb_stmt *st, int i, const char *v, int n)
{
	int rc;
	sval *p = param_slot(st, i, &rc);
	size_t len;

	if (!p)
		return rc;
	memset(p, 0, sizeof(*p));
	if (!v) {
		p->t = BC_T_NULL;
		return GPMDB_OK;
	}
	len = n < 0 ? strlen(v) : (size_t)n;
	if (len > UINT32_MAX / 2)
		return db_err(st->db, GPMDB_TOOBIG, "string or blob too big");
	st->param_text[i - 1] = malloc(len + 1);
	if (!st->param_text[i - 1])
		return db_err(st->db, GPMDB_NOMEM, "out of memory");
	memcpy(st->param_text[i - 1], v, len);
	st->param_text[i - 1][len] = 0;
	p->t = BC_T_TEXT;
	p->u.s.ptr = st->param_text[i - 1];
	p->u.s.len = (uint32_t)len;
	return GPMDB_OK;
}

int gpmdb_bind_null(gpmdb_stmt *st, int i)
{
	int rc;
	sval *p = param_slot(st, i, &rc);

	if (p) {
		memset(p, 0, sizeof(*p));
		p->t = BC_T_NULL;
	}
	return rc;
}

int gpmdb_bind_parameter_count(gpmdb_stmt *st)
{
	return st ? st->nparams : 0;
}

/* ---- execution ---- */

static int is_write(int kind)
{
	switch (kind) {
	case AST_STMT_INSERT:
	case AST_STMT_UPDATE:
	case AST_STMT_DELETE:
	case AST_STMT_CREATE_TABLE:
	case AST_STMT_DROP_TABLE:
	case AST_STMT_CREATE_VIEW:
	case AST_STMT_DROP_VIEW:
	case AST_STMT_CREATE_INDEX:
	case AST_STMT_DROP_INDEX:
	case AST_STMT_REINDEX:
		return 1;
	}
	return 0;
}

/* Runs a writing statement as a transaction of its own, or inside the
 * open one behind a savepoint. */
static int run_write_txn(gpmdb_stmt *st, ast_stmt *s)
{
	gpmdb *db = st->db;
	stg_mark mark;
	int rc;

	if (stg_pool_readonly(db->pool))
		return db_err(db, GPMDB_READONLY,
			      "attempt to write a readonly database");
	if (!db->explicit_txn) {
		/* begun by view_begin, before the statement was planned */
		if (!stg_in_txn(db->pool) && stg_begin(db->pool))
			return db_err_stg(db);
		rc = dml_exec(st, s);
		if (rc) {
			stg_rollback(db->pool);
			return rc;
		}
		if (wp_commit(db)) {
			rc = db_err_stg(db);
			stg_rollback(db->pool);
			return rc;
		}
		return GPMDB_OK;
	}
	/* BEGIN (deferred): the first write takes the write lock */
	if (!stg_in_txn(db->pool) && stg_begin(db->pool))
		return db_err_stg(db);
	if (stg_savepoint(db->pool, &mark))
		return db_err_stg(db);
	rc = dml_exec(st, s);
	if (rc == GPMDB_INTERRUPT) {
		/* as SQLite: an interrupted write ends the whole transaction,
		 * the user meant to stop, not to go on without it */
		stg_rollback(db->pool);
		db_txn_end(db);
	} else if (rc && stg_rollback_to(db->pool, &mark)) {
		/* the statement could not be undone: give up the whole
		 * transaction rather than leave half of it */
		stg_rollback(db->pool);
		db_txn_end(db);
	} else if (!rc) {
		wp_release(db, &mark);
	}
	return rc;
}

/* INSERT, UPDATE and DELETE have their phases measured, the transaction
 * around them included. */
static int run_write(gpmdb_stmt *st, ast_stmt *s)
{
	int rc;

	if (!is_dml(s->kind))
		return run_write_txn(st, s);
	wp_start(st->db, ast_stmt_kind_name(s->kind));
	rc = run_write_txn(st, s);
	wp_finish(st->db, rc);
	return rc;
}

static int run_txn(gpmdb_stmt *st, ast_stmt *s)
{
	gpmdb *db = st->db;

	switch (s->kind) {
	case AST_STMT_BEGIN:
		if (db->explicit_txn)
			return db_err(db, GPMDB_ERROR,
				      "cannot start a transaction within a "
				      "transaction");
		/* deferred (SQLite's default): the write lock at the first
		 * write, the read snapshot at the first statement */
		if (s->immediate && !stg_pool_readonly(db->pool) &&
		    stg_begin(db->pool))
			return db_err_stg(db);
		db->explicit_txn = true;
		return GPMDB_OK;
	case AST_STMT_COMMIT:
		if (!db->explicit_txn)
			return db_err(db, GPMDB_ERROR,
				      "cannot commit - no transaction is "
				      "active");
		db_txn_end(db);
		if (stg_in_txn(db->pool) && stg_commit(db->pool)) {
			int rc = db_err_stg(db);
			stg_rollback(db->pool);
			return rc;
		}
		return GPMDB_OK;
	default:
		if (!db->explicit_txn)
			return db_err(db, GPMDB_ERROR,
				      "cannot rollback - no transaction is "
				      "active");
		db_txn_end(db);
		if (stg_in_txn(db->pool) && stg_rollback(db->pool))
			return db_err_stg(db);
		return GPMDB_OK;
	}
}

static int explain_rows(gpmdb_stmt *st)
{
	etype t = et_make(BC_T_TEXT);
	rel *r = rel_new(NULL, 1, &t);
	char *p = st->explain;

	if (!r)
		return db_err(st->db, GPMDB_NOMEM, "out of memory");
	r->x = NULL;
	while (p && *p) {
		char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		sval v = {.t = BC_T_TEXT};
		v.u.s.ptr = p;
		v.u.s.len = (uint32_t)n;
		if (rel_reserve(r, 1) || rel_set(r, 0, r->nrows, &v)) {
			rel_free(r);
			return db_err(st->db, GPMDB_NOMEM, "out of memory");
		}
		r->nrows++;
		p += n + (nl ? 1 : 0);
	}
	st->res = r;
	return GPMDB_OK;
}

void stmt_exec_init(gpmdb_stmt *st)
{
	st->x.gen = ++st->gen;
	st->x.mem = 0;
	st->x.mem_limit = st->db->mem_limit;
	st->x.over = false;
	st->x.nframes = 0;
	st->x.depth = 0;
	st->x.kid_ns = st->x.kid_ops = 0;
	st->x.an_kid_ns = 0;
	st->x.an_pipes = 0;
}

int stmt_run_select(gpmdb_stmt *st, rel **out)
{
	stmt_exec_init(st);
	exec_gpu_prefetch(&st->x, st->plan);
	return exec_node(&st->x, st->plan, out);
}

/* The spilled result's chunks from st->rchunk on into st->res, up to
 * the first that has rows (none left: st->res is NULL). */
static int result_chunk(gpmdb_stmt *st)
{
	int rc;

	rel_free(st->res);
	st->res = NULL;
	for (; st->rchunk < st->rnchunks; st->rchunk++) {
		if ((rc = spill_result_read(st->rsp, st->rchunk, &st->res)))
			return rc;
		if (st->res->nrows)
			return GPMDB_OK;
		rel_free(st->res);
		st->res = NULL;
	}
	return GPMDB_OK;
}

/* The SELECT's result passed memory_limit (rc, the limit's error): its
 * plan runs again into a temporary file (spill_result), read back a
 * chunk at a time as gpmdb_step goes. */
static int result_spill(gpmdb_stmt *st, int rc)
{
	if ((rc = spill_result(&st->x, st->plan, rc, &st->rsp)))
		return rc;
	spill_result_rows(st->rsp, &st->rnchunks);
	st->rchunk = 0;
	return result_chunk(st);
}

/* EXPLAIN ANALYZE: runs the SELECT to its end with each plan node's
 * figures recorded (explain_plan shows them); its rows are dropped (a
 * result past the limit spills, as it runs). */
static int stmt_run_analyze(gpmdb_stmt *st)
{
	rel *r = NULL;
	spill *sr = NULL;
	int rc;

	explain_analyze_reset(st->plan);
	stmt_exec_init(st);
	st->x.analyze = true;
	/* as the SELECT itself runs: a fresh process's first GPU statement
	 * maps its columns' pages while CUDA starts */
	exec_gpu_prefetch(&st->x, st->plan);
	rc = exec_node(&st->x, st->plan, &r);
	if (rc)
		rc = spill_result(&st->x, st->plan, rc, &sr);
	spill_free(sr);
	st->x.analyze = false;
	rel_free(r);
	return rc;
}

/* EXPLAIN ANALYZE INSERT/UPDATE/DELETE: the write runs (inside BEGIN it
 * can be rolled back), the plan it ran records its figures and becomes
 * st->plan (dml.c), and wp_explain shows it with the phases. */
static int stmt_run_analyze_write(gpmdb_stmt *st, ast_stmt *s)
{
	int rc;

	st->plan = NULL; /* a batch's set-at-a-time paths run no plan */
	st->x.analyze = true;
	rc = run_write(st, s);
	st->x.analyze = false;
	if (rc)
		return rc;
	if ((rc = wp_explain(st, ast_stmt_kind_name(s->kind))))
		return rc;
	return explain_rows(st);
}

/*
 * The view a statement runs on (storage/lock.c): a write statement takes
 * the write lock before it is planned (its view is then the last
 * commit); any other statement reads a snapshot, for itself in
 * autocommit (*snap: the caller ends it), or from the first statement
 * of BEGIN to COMMIT.  A plan made before commits of others came in is
 * made again.
 */
static int view_begin(gpmdb_stmt *st, ast_stmt *s, bool *snap)
{
	gpmdb *db = st->db;
	bool writes = is_write(s->kind) && (!s->explain || s->explain == 3);

	*snap = false;
	if (s->kind == AST_STMT_BEGIN || s->kind == AST_STMT_COMMIT ||
	    s->kind == AST_STMT_ROLLBACK)
		return GPMDB_OK;
	/* a checkpoint reads through a connection of its own, and a
	 * snapshot here would keep its zone-table transaction out */
	if (s->kind == AST_STMT_PRAGMA && ckpt_is_pragma(s->name))
		return GPMDB_OK;
	/* plain VACUUM takes its own views, a write transaction per tablet
	 * (storage/encode.c stg_vacuum): a snapshot held around them made
	 * each one fail with "another connection committed after this
	 * transaction began reading" once another process had committed,
	 * busy timeout or not (VACUUM INTO copies its statement's
	 * snapshot) */
	if (s->kind == AST_STMT_VACUUM && !s->pragma_value)
		return GPMDB_OK;
	if (stg_in_txn(db->pool)) {
		/* the writer's own view */
	} else if (writes && !stg_pool_readonly(db->pool)) {
		if (stg_begin(db->pool))
			return db_err_stg(db);
	} else if (db->explicit_txn) {
		if (!db->txn_snap) {
			if (stg_read_begin(db->pool))
				return db_err_stg(db);
			db->txn_snap = true;
		}
	} else {
		if (stg_read_begin(db->pool))
			return db_err_stg(db);
		*snap = true;
	}
	/* (GPU column copies follow storage's write stamps: cache.h) */
	if (st->planned && st->dv != stg_data_version(db->pool))
		st->planned = false;
	return GPMDB_OK;
}

static int start_run(gpmdb_stmt *st, ast_stmt *s);

static int start(gpmdb_stmt *st)
{
	ast_stmt *s = st->pr.stmt;
	gpmdb *db = st->db;
	bool snap = false;
	int rc;

	if ((rc = batch_check(st, s)))
		return rc;
	if ((rc = view_begin(st, s, &snap)))
		return rc;
	rc = start_run(st, s);
	if (snap)
		stg_read_end(db->pool);
	/* an autocommit write that failed before its transaction ran */
	if (!db->explicit_txn && stg_in_txn(db->pool))
		stg_rollback(db->pool);
	return rc;
}

static int start_run(gpmdb_stmt *st, ast_stmt *s)
{
	gpmdb *db = st->db;
	int rc;

	if (!st->planned || st->params_changed)
		if ((rc = plan_now(st)))
			return rc;
	if (s->explain == 3 && is_dml(s->kind))
		return stmt_run_analyze_write(st, s);
	if (s->explain) {
		const char *head = s->kind == AST_STMT_SELECT
				       ? NULL
				       : ast_stmt_kind_name(s->kind);
		if (s->explain == 3 && (rc = stmt_run_analyze(st)))
			return rc;
		if ((rc = explain_plan(st, st->plan, head, NULL,
				       s->explain == 3)))
			return rc;
		return explain_rows(st);
	}
	switch (s->kind) {
	case AST_STMT_SELECT:
		rc = stmt_run_select(st, &st->res);
		if (st->res)
			st->res->x = NULL;
		return rc && !st->res ? result_spill(st, rc) : rc;
	case AST_STMT_BEGIN:
	case AST_STMT_COMMIT:
	case AST_STMT_ROLLBACK:
		return run_txn(st, s);
	case AST_STMT_PRAGMA:
		return pragma_exec(st, s, &st->res);
	case AST_STMT_VACUUM:
		return vacuum_exec(st, s);
	default:
		if (is_write(s->kind))
			return run_write(st, s);
	}
	return db_err(db, GPMDB_UNSUPPORTED, "%s is not supported yet",
		      ast_stmt_kind_name(s->kind));
}

int gpmdb_step(gpmdb_stmt *st)
{
	int rc;

	if (!st)
		return GPMDB_MISUSE;
	db_clear(st->db);
	if (st->coltext)
		for (int i = 0; i < st->ncols; i++) {
			free(st->coltext[i]);
			st->coltext[i] = NULL;
		}
	if (st->state == 0) {
		/* an interrupt is for the statements running when it came */
		atomic_store(&st->db->interrupted, 0);
		st->db->progress_count = 0;
		rc = start(st);
		if (rc) {
			free_holds(st);
			if (st->res) {
				rel_free(st->res);
				st->res = NULL;
			}
			st->state = 2;
			return st->db->errcode ? st->db->errcode : rc;
		}
		free_holds(st);
		st->state = 1;
		st->cur = 0;
		uint64_t nc;
		if (st->pr.stmt->kind != AST_STMT_PRAGMA)
			st->db->last_rows =
			    st->rsp ? (long long)spill_result_rows(st->rsp, &nc)
			    : st->res ? (long long)st->res->nrows
			    : is_write(st->pr.stmt->kind) ? st->db->changes
							  : 0;
	} else if (st->state == 1) {
		st->cur++;
		/* a spilled result: its next chunk */
		if (st->rsp && st->res && st->cur >= st->res->nrows) {
			st->rchunk++;
			st->cur = 0;
			if ((rc = result_chunk(st))) {
				st->state = 2;
				return st->db->errcode ? st->db->errcode : rc;
			}
		}
	}
	if (st->state == 1 && st->res && st->cur < st->res->nrows)
		return GPMDB_ROW;
	st->state = 2;
	return GPMDB_DONE;
}

/* ---- result columns ---- */

static bool col_ok(gpmdb_stmt *st, int i)
{
	return st && st->res && st->state == 1 && i >= 0 && i < st->ncols &&
	       i < st->res->ncols && st->cur < st->res->nrows;
}

int gpmdb_column_count(gpmdb_stmt *st)
{
	return st ? st->ncols : 0;
}

const char *gpmdb_column_name(gpmdb_stmt *st, int i)
{
	if (!st || i < 0 || i >= st->ncols || !st->names)
		return NULL;
	return st->names[i];
}

static void cell(gpmdb_stmt *st, int i, sval *v)
{
	rel_get(st->res, i, st->cur, v);
}

int gpmdb_column_type(gpmdb_stmt *st, int i)
{
	sval v;

	if (!col_ok(st, i))
		return GPMDB_NULL;
	cell(st, i, &v);
	switch (v.t) {
	case BC_T_NULL:
		return GPMDB_NULL;
	case BC_T_INT:
	case BC_T_BOOL:
		return GPMDB_INTEGER;
	case BC_T_REAL:
	case BC_T_DEC:
		return GPMDB_FLOAT;
	default:
		return GPMDB_TEXT;
	}
}

long long gpmdb_column_int64(gpmdb_stmt *st, int i)
{
	sval v;
	char buf[48];
	uint32_t len;
	const char *t;

	if (!col_ok(st, i))
		return 0;
	cell(st, i, &v);
	switch (v.t) {
	case BC_T_NULL:
		return 0;
	case BC_T_REAL:
		return val_real_to_i64(v.u.r);
	case BC_T_DEC:
		return val_dec_to_i64(v.u.i, v.scale);
	case BC_T_TEXT:
	case BC_T_DATE:
		t = sval_text(&v, buf, &len);
		return val_text_to_i64(t, len);
	default:
		return v.u.i;
	}
}

int gpmdb_column_int(gpmdb_stmt *st, int i)
{
	return (int)gpmdb_column_int64(st, i);
}

double gpmdb_column_double(gpmdb_stmt *st, int i)
{
	sval v;
	char buf[48];
	uint32_t len;
	const char *t;

	if (!col_ok(st, i))
		return 0;
	cell(st, i, &v);
	switch (v.t) {
	case BC_T_NULL:
		return 0;
	case BC_T_REAL:
		return v.u.r;
	case BC_T_DEC:
		return val_dec_to_real(v.u.i, v.scale);
	case BC_T_TEXT:
	case BC_T_DATE:
		t = sval_text(&v, buf, &len);
		return val_text_to_real(t, len);
	default:
		return (double)v.u.i;
	}
}

const unsigned char *gpmdb_column_text(gpmdb_stmt *st, int i)
{
	sval v;
	char buf[48];
	uint32_t len;
	const char *t;

	if (!col_ok(st, i))
		return NULL;
	if (st->coltext[i])
		return (const unsigned char *)st->coltext[i];
	cell(st, i, &v);
	if (v.t == BC_T_NULL)
		return NULL;
	t = sval_text(&v, buf, &len);
	st->coltext[i] = malloc(len + 1);
	if (!st->coltext[i]) {
		db_err(st->db, GPMDB_NOMEM, "out of memory");
		return NULL;
	}
	memcpy(st->coltext[i], t, len);
	st->coltext[i][len] = 0;
	return (const unsigned char *)st->coltext[i];
}

int gpmdb_column_bytes(gpmdb_stmt *st, int i)
{
	const unsigned char *t = gpmdb_column_text(st, i);

	return t ? (int)strlen((const char *)t) : 0;
}
