/*
 * db.c - connections: open/close, the error state, gpmdb_exec.
 */
#include "../gpu/gpu.h"
#include "engine.h"
#include "write/batch_gpu.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

/* Default per-query memory limit: 80% of the machine's memory (DuckDB's
 * default), at least 1 GiB: big enough for TPC-H SF 10 on the CPU
 * backend (Q1 holds about 20 GB of intermediate relations there, over
 * the fixed 16 GiB this was), small enough to fail with a message before
 * the machine swaps.  16 GiB when the size cannot be read. */
static uint64_t db_default_mem_limit(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGE_SIZE);
	uint64_t lim;

	if (pages <= 0 || psz <= 0)
		return 16ull << 30;
	lim = (uint64_t)pages * (uint64_t)psz / 10 * 8;
	return lim < (1ull << 30) ? 1ull << 30 : lim;
}

int db_err(gpmdb *db, int rc, const char *fmt, ...)
{
	va_list ap;

	if (!db)
		return rc;
	/* the first error of a statement names the problem */
	if (db->errcode)
		return db->errcode;
	db->errcode = rc;
	va_start(ap, fmt);
	vsnprintf(db->errmsg, sizeof(db->errmsg), fmt, ap);
	va_end(ap);
	return rc;
}

int db_err_stg(gpmdb *db)
{
	int rc = stg_errcode(db->pool);

	if (rc == GPMDB_OK)
		rc = GPMDB_ERROR;
	return db_err(db, rc, "%s", stg_errmsg(db->pool));
}

void db_txn_end(gpmdb *db)
{
	db->explicit_txn = false;
	if (db->txn_snap)
		stg_read_end(db->pool);
	db->txn_snap = false;
}

int gpmdb_busy_timeout(gpmdb *db, int ms)
{
	if (!db || !db->pool)
		return GPMDB_MISUSE;
	stg_busy_timeout(db->pool, ms);
	return GPMDB_OK;
}

void db_clear(gpmdb *db)
{
	if (db) {
		db->errcode = GPMDB_OK;
		db->errmsg[0] = 0;
	}
}

int gpmdb_open_v2(const char *path, gpmdb **out, int flags,
		  const gpmdb_options *opts)
{
	gpmdb *db = calloc(1, sizeof(*db));
	stg_open_opts so = {0};
	char msg[512] = "";
	int rc;

	if (!out)
		return GPMDB_MISUSE;
	*out = db;
	if (!db)
		return GPMDB_NOMEM;
	db->mem_limit = db_default_mem_limit();
	exec_gpu_open(db);
	if (!path)
		return db_err(db, GPMDB_MISUSE, "no database path given");
	snprintf(db->path, sizeof(db->path), "%s", path);
	so.readonly = (flags & GPMDB_OPEN_READONLY) != 0;
	so.create = (flags & GPMDB_OPEN_CREATE) != 0 && !so.readonly;
	if (so.readonly && (flags & GPMDB_OPEN_READWRITE))
		return db_err(db, GPMDB_MISUSE,
			      "GPMDB_OPEN_READONLY and GPMDB_OPEN_READWRITE "
			      "together");
	if (opts && opts->durability &&
	    stg_durability_parse(opts->durability, &so.durability))
		return db_err(db, GPMDB_MISUSE,
			      "unknown durability \"%s\" (expected auto, pmem, "
			      "msync or off)",
			      opts->durability);
	if (opts && opts->backend) {
		if (!strcasecmp(opts->backend, "auto") ||
		    !strcasecmp(opts->backend, "cpu"))
			db->backend = !strcasecmp(opts->backend, "cpu");
		else if (!strcasecmp(opts->backend, "gpu"))
			db->backend = 2; /* without a GPU: exec_gpu.c */
		else
			return db_err(db, GPMDB_MISUSE,
				      "unknown backend \"%s\" (expected auto, "
				      "cpu or gpu)",
				      opts->backend);
	}
	if (opts)
		so.max_size = opts->max_size;
	bgpu_before_open(db); /* GPU recovery hook */
	if (db->backend == 2)
		gpu_init_async(); /* CUDA's setup beside the pool's open */
	rc = stg_open(path, &so, &db->pool, msg, sizeof(msg));
	if (rc)
		return db_err(db, rc, "%s", msg[0] ? msg : gpmdb_errstr(rc));
	return GPMDB_OK;
}

int gpmdb_close(gpmdb *db)
{
	int rc = GPMDB_OK;

	if (!db)
		return GPMDB_OK;
	ckpt_close(db); /* its thread reads the file through its own pool */
	if (db->pool) {
		if (stg_in_txn(db->pool))
			stg_rollback(db->pool);
		db_txn_end(db);
		bgpu_before_close(db); /* the CUDA registration */
		rc = stg_close(db->pool);
	}
	exec_gpu_close(db); /* its GPU column cache entries */
	for (int i = 0; i < db->nscratch; i++)
		vm_scratch_free(&db->scratch[i]);
	for (int i = 0; i < db->npscratch; i++)
		vm_scratch_free(&db->pscratch[i]);
	free(db->pscratch);
	free(db);
	return rc;
}

vm_scratch *db_par_scratch(gpmdb *db, int n)
{
	if (db->npscratch < n) {
		vm_scratch *p = realloc(db->pscratch, sizeof(*p) * (size_t)n);
		if (!p)
			return NULL;
		db->pscratch = p;
		while (db->npscratch < n)
			vm_scratch_init(&db->pscratch[db->npscratch++]);
	}
	return db->pscratch;
}

void gpmdb_interrupt(gpmdb *db)
{
	if (db)
		atomic_store(&db->interrupted, 1);
}

void gpmdb_progress_handler(gpmdb *db, int n, int (*cb)(void *), void *arg)
{
	if (!db)
		return;
	db->progress = n > 0 ? cb : NULL;
	db->progress_arg = arg;
	db->progress_n = n > 0 ? n : 0;
	db->progress_count = 0;
}

int db_check_interrupt(gpmdb *db)
{
	if (db->progress && ++db->progress_count >= db->progress_n) {
		db->progress_count = 0;
		if (db->progress(db->progress_arg))
			atomic_store(&db->interrupted, 1);
	}
	if (atomic_load(&db->interrupted))
		return db_err(db, GPMDB_INTERRUPT, "interrupted");
	return GPMDB_OK;
}

int gpmdb_errcode(gpmdb *db)
{
	return db ? db->errcode : GPMDB_NOMEM;
}

const char *gpmdb_errmsg(gpmdb *db)
{
	if (!db)
		return "out of memory";
	if (!db->errcode)
		return "not an error";
	return db->errmsg[0] ? db->errmsg : gpmdb_errstr(db->errcode);
}

long long gpmdb_changes(gpmdb *db)
{
	return db ? db->changes : 0;
}

void gpmdb_free(void *p)
{
	free(p);
}

static char *text_of(gpmdb_stmt *st, int i)
{
	const unsigned char *t = gpmdb_column_text(st, i);

	return (char *)t;
}

int gpmdb_exec(gpmdb *db, const char *sql, gpmdb_callback cb, void *arg,
	       char **errmsg)
{
	const char *tail = sql;
	int rc = GPMDB_OK;

	if (errmsg)
		*errmsg = NULL;
	if (!db)
		return GPMDB_MISUSE;
	if (!sql)
		return GPMDB_OK;
	while (tail && *tail) {
		gpmdb_stmt *st = NULL;
		rc = gpmdb_prepare(db, tail, -1, &st, &tail);
		if (rc)
			break;
		if (!st)
			break;
		int nc = gpmdb_column_count(st);
		char **vals =
		    cb ? calloc((size_t)nc * 2 + 1, sizeof(char *)) : NULL;
		if (cb && !vals) {
			gpmdb_finalize(st);
			rc = db_err(db, GPMDB_NOMEM, "out of memory");
			break;
		}
		while ((rc = gpmdb_step(st)) == GPMDB_ROW) {
			if (!cb)
				continue;
			for (int i = 0; i < nc; i++) {
				vals[i] = text_of(st, i);
				vals[nc + i] = (char *)gpmdb_column_name(st, i);
			}
			if (cb(arg, nc, vals, vals + nc)) {
				free(vals);
				gpmdb_finalize(st);
				db_clear(db);
				rc = db_err(db, GPMDB_ABORT,
					    "query aborted by the callback");
				goto out;
			}
		}
		free(vals);
		if (rc == GPMDB_DONE) {
			rc = GPMDB_OK;
			gpmdb_finalize(st);
		} else {
			/* keep the step's message past finalize */
			int code = db->errcode ? db->errcode : rc;
			char msg[sizeof(db->errmsg)];
			snprintf(msg, sizeof(msg), "%s", gpmdb_errmsg(db));
			gpmdb_finalize(st);
			db_clear(db);
			db_err(db, code, "%s", msg);
			rc = code;
			break;
		}
	}
out:
	if (rc && errmsg) {
		const char *m = gpmdb_errmsg(db);
		*errmsg = malloc(strlen(m) + 1);
		if (*errmsg)
			strcpy(*errmsg, m);
	}
	return rc;
}
