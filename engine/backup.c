/*
 * backup.c - VACUUM INTO 'file' (a new file, storage/backup.c writes it),
 * the backup API (gpmdb_backup_*: full or incremental onto an earlier
 * copy) and checkpoints (PRAGMA checkpoint_file, checkpoint_interval,
 * checkpoint, checkpoint_status): a copy kept up to date incrementally,
 * on demand or by a thread of the connection.  Plain VACUUM rewrites
 * every table's tablets encoded and compacted (stg_vacuum, storage/
 * encode.c); the file gives its free tail back at the last close.
 *
 * A backup of a database file reads through a connection of its own, so
 * that whatever the source connection does meanwhile (a transaction, a
 * statement) neither disturbs the copy nor waits for it.  That connection
 * is read-write where the file allows, to make the zone table or grow it
 * to the pool's size first (a small transaction): without a table a copy
 * can only be full.  An in-memory database is copied at init through its
 * own connection (nobody else sees it).
 *
 * The checkpoint settings belong to the connection and are not kept in
 * the pool, as most of SQLite's pragmas: an application sets them after
 * opening, and a copy of the pool opened elsewhere starts no thread.
 */
#include "engine.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

int vacuum_exec(gpmdb_stmt *st, ast_stmt *s)
{
	gpmdb *db = st->db;
	const ast_expr *e = s->pragma_value;
	uint64_t bytes = 0;

	if (s->schema && strcasecmp(s->schema, "main"))
		return db_err(db, GPMDB_ERROR, "unknown database %s",
			      s->schema);
	if (!e) {
		/* plain VACUUM: every table encoded (storage/encode.c) */
		if (db->explicit_txn)
			return db_err(db, GPMDB_ERROR,
				      "cannot VACUUM from within a "
				      "transaction");
		if (stg_vacuum(db->pool, NULL, NULL))
			return db_err_stg(db);
		return GPMDB_OK;
	}
	if (e->kind != AST_E_STRING || !e->str || !*e->str)
		return db_err(db, GPMDB_ERROR,
			      "VACUUM INTO takes the output file's name as a "
			      "string literal");
	if (db->explicit_txn)
		return db_err(db, GPMDB_ERROR,
			      "cannot VACUUM from within a transaction");
	if (stg_backup_to(db->pool, e->str, &bytes))
		return db_err_stg(db);
	return GPMDB_OK;
}

static bool bk_is_memory(const gpmdb *db)
{
	return !strcmp(db->path, ":memory:") || !db->path[0];
}

/* The zone table and line masks made or grown to the pool's size, when
 * a transaction can be had; else the backup copies what it cannot prove
 * unchanged. */
static void bk_ensure(stg_pool *p)
{
	stg_zones z;

	if (stg_pool_readonly(p) || stg_in_txn(p))
		return;
	/* a look first: a transaction for nothing would still move the
	 * table's counter (a change every backup would copy) */
	if (stg_read_begin(p) == GPMDB_OK) {
		stg_zones_info(p, &z);
		stg_read_end(p);
		/* format version 1: no table, ever (storage/layout.h) */
		if (!z.tracked ||
		    (z.table && z.covered >= z.zones && z.lines >= z.covered))
			return;
	}
	if (stg_begin(p) != GPMDB_OK)
		return;
	if (stg_zones_ensure(p) != GPMDB_OK || stg_commit(p) != GPMDB_OK) {
		if (stg_in_txn(p))
			(void)stg_rollback(p);
	}
}

/* A connection of the backup's own to the file at path, read-write where
 * the file allows (in the source's durability mode). */
static int bk_open_own(const char *path, stg_durability dur, bool readonly,
		       int busy_ms, stg_pool **out, char *msg, size_t n)
{
	stg_open_opts o = {0};
	int rc = GPMDB_CANTOPEN;

	o.durability = dur;
	/* pmem mode: its passes do not send writers beside readers */
	o.quiet_reader = true;
	if (!readonly)
		rc = stg_open(path, &o, out, msg, n);
	if (rc != GPMDB_OK) {
		o.readonly = true;
		o.durability = STG_DUR_AUTO;
		rc = stg_open(path, &o, out, msg, n);
	}
	if (rc == GPMDB_OK)
		stg_busy_timeout(*out, busy_ms);
	return rc;
}

struct gpmdb_backup {
	gpmdb *src;
	stg_pool *pool; /* a connection of its own, or src's (memory) */
	bool own;
	stg_backup *b;
};

gpmdb_backup *gpmdb_backup_init_v2(const char *dest_file, gpmdb *src,
				   const char *src_name, int flags)
{
	stg_backup_opts bo = {0};
	char msg[512] = "";
	gpmdb_backup *bk;
	int rc;

	if (!src || !src->pool)
		return NULL;
	db_clear(src);
	if (!dest_file || !*dest_file) {
		db_err(src, GPMDB_MISUSE, "gpmdb_backup_init: no destination");
		return NULL;
	}
	if (src_name && strcasecmp(src_name, "main")) {
		db_err(src, GPMDB_ERROR, "unknown database %s", src_name);
		return NULL;
	}
	if (flags & ~GPMDB_BACKUP_FULL) {
		db_err(src, GPMDB_MISUSE, "gpmdb_backup_init_v2: bad flags");
		return NULL;
	}
	bk = calloc(1, sizeof(*bk));
	if (!bk) {
		db_err(src, GPMDB_NOMEM, "out of memory");
		return NULL;
	}
	bk->src = src;
	bo.full = (flags & GPMDB_BACKUP_FULL) != 0;
	if (bk_is_memory(src)) {
		/* nobody else sees it: the copy is taken at once, before
		 * this connection can change it */
		bk->pool = src->pool;
		bo.held = true;
		bk_ensure(bk->pool);
	} else {
		rc = bk_open_own(src->path, stg_pool_durability(src->pool),
				 stg_pool_readonly(src->pool),
				 stg_get_busy_timeout(src->pool), &bk->pool,
				 msg, sizeof(msg));
		if (rc) {
			db_err(src, rc, "backup of %s: %s", src->path, msg);
			free(bk);
			return NULL;
		}
		bk->own = true;
		bk_ensure(bk->pool);
	}
	rc = stg_backup_begin(bk->pool, dest_file, &bo, &bk->b);
	if (rc == GPMDB_OK && !bk->own) {
		rc = stg_backup_step(bk->b, -1);
		rc = rc == GPMDB_DONE ? GPMDB_OK : rc;
	}
	if (rc) {
		db_err(src, rc, "%s", stg_errmsg(bk->pool));
		if (bk->b)
			(void)stg_backup_finish(bk->b);
		if (bk->own)
			stg_close(bk->pool);
		free(bk);
		return NULL;
	}
	return bk;
}

gpmdb_backup *gpmdb_backup_init(const char *dest_file, gpmdb *src,
				const char *src_name)
{
	return gpmdb_backup_init_v2(dest_file, src, src_name, 0);
}

int gpmdb_backup_step(gpmdb_backup *bk, int npages)
{
	int rc;

	if (!bk)
		return GPMDB_MISUSE;
	rc = stg_backup_step(bk->b, npages);
	if (rc != GPMDB_OK && rc != GPMDB_DONE) {
		db_clear(bk->src);
		db_err(bk->src, rc, "%s", stg_errmsg(bk->pool));
	}
	return rc;
}

int gpmdb_backup_remaining(gpmdb_backup *bk)
{
	return bk ? (int)stg_backup_remaining(bk->b) : 0;
}

int gpmdb_backup_pagecount(gpmdb_backup *bk)
{
	return bk ? (int)stg_backup_pagecount(bk->b) : 0;
}

int gpmdb_backup_status(gpmdb_backup *bk, gpmdb_backup_stat *out)
{
	stg_backup_info in;

	if (!bk || !out)
		return GPMDB_MISUSE;
	stg_backup_get_info(bk->b, &in);
	memset(out, 0, sizeof(*out));
	out->incremental = in.incremental;
	out->zones_total = (long long)in.zones;
	out->zones_copied = (long long)in.zones_copied;
	out->bytes_written = (long long)in.bytes_written;
	out->zones_lines = (long long)in.zones_lines;
	out->delta_bytes = (long long)in.delta_bytes;
	out->zone_size = (long long)in.zone_size;
	out->passes = in.passes;
	snprintf(out->why_full, sizeof(out->why_full), "%s", in.why_full);
	return GPMDB_OK;
}

int gpmdb_backup_finish(gpmdb_backup *bk)
{
	int rc;

	if (!bk)
		return GPMDB_OK;
	rc = stg_backup_finish(bk->b);
	if (rc) {
		db_clear(bk->src);
		db_err(bk->src, rc, "%s", stg_errmsg(bk->pool));
	}
	if (bk->own)
		stg_close(bk->pool);
	free(bk);
	return rc;
}

/* ---- Checkpoints ---------------------------------------------------------
 */

struct db_ckpt {
	pthread_mutex_t mu;  /* the fields below */
	pthread_mutex_t run; /* one checkpoint at a time */
	pthread_cond_t cv;
	pthread_t th;
	bool thread, stop;
	char file[4096];
	int interval; /* seconds, 0 = no thread */
	char path[4096];
	stg_durability dur;
	bool readonly;
	stg_pool *own; /* the thread's connection */
	/* the last checkpoint */
	long long count, copied, total;
	bool incremental;
	char err[600];
};

static db_ckpt *ck_get(gpmdb *db)
{
	db_ckpt *c = db->ckpt;

	if (c)
		return c;
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	pthread_mutex_init(&c->mu, NULL);
	pthread_mutex_init(&c->run, NULL);
	pthread_cond_init(&c->cv, NULL);
	snprintf(c->path, sizeof(c->path), "%s", db->path);
	c->dur = stg_pool_durability(db->pool);
	c->readonly = stg_pool_readonly(db->pool);
	db->ckpt = c;
	return c;
}

/* One checkpoint of a database file through *own (opened when NULL,
 * kept for the next): 0 or an error with msg. */
static int ck_copy(db_ckpt *c, stg_pool **own, const char *file,
		   stg_backup_info *info, char *msg, size_t n)
{
	stg_backup *b = NULL;
	int rc;

	msg[0] = '\0';
	if (*own == NULL) {
		rc = bk_open_own(c->path, c->dur, c->readonly, 5000, own, msg,
				 n);
		if (rc)
			return rc;
	}
	bk_ensure(*own);
	rc = stg_backup_begin(*own, file, NULL, &b);
	if (rc == GPMDB_OK) {
		rc = stg_backup_step(b, -1);
		rc = rc == GPMDB_DONE ? GPMDB_OK : rc;
		stg_backup_get_info(b, info);
		if (rc == GPMDB_OK)
			rc = stg_backup_finish(b);
		else
			(void)stg_backup_finish(b);
	}
	if (rc)
		snprintf(msg, n, "checkpoint of %.200s to %.200s: %.150s",
			 c->path, file, stg_errmsg(*own));
	return rc;
}

static void ck_record(db_ckpt *c, int rc, const stg_backup_info *in,
		      const char *msg)
{
	pthread_mutex_lock(&c->mu);
	if (rc == GPMDB_OK) {
		c->count++;
		c->copied = (long long)in->zones_copied;
		c->total = (long long)in->zones;
		c->incremental = in->incremental;
		c->err[0] = '\0';
	} else {
		snprintf(c->err, sizeof(c->err), "%s", msg);
	}
	pthread_mutex_unlock(&c->mu);
}

static void *ck_thread(void *arg)
{
	db_ckpt *c = arg;
	char file[4096], msg[600];
	stg_backup_info in;
	struct timespec ts;
	int rc;

	pthread_mutex_lock(&c->mu);
	while (!c->stop) {
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += c->interval > 0 ? c->interval : 1;
		rc = 0;
		while (!c->stop && rc == 0)
			rc = pthread_cond_timedwait(&c->cv, &c->mu, &ts);
		if (c->stop)
			break;
		if (c->interval <= 0 || !c->file[0])
			continue;
		snprintf(file, sizeof(file), "%s", c->file);
		pthread_mutex_unlock(&c->mu);
		pthread_mutex_lock(&c->run);
		memset(&in, 0, sizeof(in));
		rc = ck_copy(c, &c->own, file, &in, msg, sizeof(msg));
		pthread_mutex_unlock(&c->run);
		ck_record(c, rc, &in, msg);
		pthread_mutex_lock(&c->mu);
	}
	pthread_mutex_unlock(&c->mu);
	if (c->own)
		stg_close(c->own);
	c->own = NULL;
	return NULL;
}

static void ck_stop_thread(db_ckpt *c)
{
	pthread_mutex_lock(&c->mu);
	if (!c->thread) {
		pthread_mutex_unlock(&c->mu);
		return;
	}
	c->stop = true;
	pthread_cond_signal(&c->cv);
	pthread_mutex_unlock(&c->mu);
	pthread_join(c->th, NULL);
	c->thread = false;
	c->stop = false;
}

void ckpt_close(gpmdb *db)
{
	db_ckpt *c = db->ckpt;

	if (!c)
		return;
	ck_stop_thread(c);
	pthread_mutex_destroy(&c->mu);
	pthread_mutex_destroy(&c->run);
	pthread_cond_destroy(&c->cv);
	free(c);
	db->ckpt = NULL;
}

bool ckpt_is_pragma(const char *name)
{
	return !strcasecmp(name, "checkpoint") ||
	       !strcasecmp(name, "checkpoint_file") ||
	       !strcasecmp(name, "checkpoint_interval") ||
	       !strcasecmp(name, "checkpoint_status");
}

static const char *ck_cols[] = {"zones_copied", "zones_total", "incremental"};
static const char *cs_cols[] = {"checkpoints", "zones_copied", "zones_total",
				"incremental", "error"};
static const char *cv_cols[] = {"value"};

int ckpt_pragma_columns(ast_stmt *s, const char ***names)
{
	if (!strcasecmp(s->name, "checkpoint")) {
		*names = ck_cols;
		return 3;
	}
	if (!strcasecmp(s->name, "checkpoint_status")) {
		*names = cs_cols;
		return 5;
	}
	*names = cv_cols;
	return 1;
}

/* PRAGMA checkpoint: one now, on this thread. */
static int ck_now(gpmdb *db, db_ckpt *c, rel *r)
{
	stg_backup_info in;
	stg_pool *own = NULL;
	char file[4096], msg[600];
	sval row[3];
	int rc;

	pthread_mutex_lock(&c->mu);
	snprintf(file, sizeof(file), "%s", c->file);
	pthread_mutex_unlock(&c->mu);
	if (!file[0])
		return db_err(db, GPMDB_ERROR,
			      "PRAGMA checkpoint: no checkpoint_file is set");
	memset(&in, 0, sizeof(in));
	if (bk_is_memory(db)) {
		stg_backup_opts bo = {.held = true};
		stg_backup *b = NULL;

		bk_ensure(db->pool);
		rc = stg_backup_begin(db->pool, file, &bo, &b);
		if (rc == GPMDB_OK) {
			rc = stg_backup_step(b, -1);
			rc = rc == GPMDB_DONE ? GPMDB_OK : rc;
			stg_backup_get_info(b, &in);
			rc = rc == GPMDB_OK ? stg_backup_finish(b)
					    : (stg_backup_finish(b), rc);
		}
		snprintf(msg, sizeof(msg), "checkpoint to %.300s: %.250s", file,
			 rc ? stg_errmsg(db->pool) : "");
	} else {
		pthread_mutex_lock(&c->run);
		rc = ck_copy(c, &own, file, &in, msg, sizeof(msg));
		pthread_mutex_unlock(&c->run);
		if (own)
			stg_close(own);
	}
	ck_record(c, rc, &in, msg);
	if (rc)
		return db_err(db, rc, "%s", msg);
	row[0] = sval_of_int((int64_t)in.zones_copied);
	row[1] = sval_of_int((int64_t)in.zones);
	row[2] = sval_of_int(in.incremental);
	return pragma_put_row(db, r, row);
}

static int ck_set_interval(gpmdb *db, db_ckpt *c, const char *v)
{
	char *end = NULL;
	long long s = strtoll(v, &end, 10);

	if (!end || end == v || *end || s < 0 || s > 86400 * 365)
		return db_err(db, GPMDB_ERROR,
			      "checkpoint_interval is in seconds, 0 (off) to "
			      "31536000, not \"%s\"",
			      v);
	if (s > 0 && bk_is_memory(db))
		return db_err(db, GPMDB_ERROR,
			      "checkpoint_interval: an in-memory database has "
			      "no other connection to copy it from; use "
			      "PRAGMA checkpoint");
	if (s > 0 && !c->file[0])
		return db_err(db, GPMDB_ERROR,
			      "checkpoint_interval: set checkpoint_file first");
	pthread_mutex_lock(&c->mu);
	c->interval = (int)s;
	pthread_cond_signal(&c->cv); /* the thread waits anew */
	pthread_mutex_unlock(&c->mu);
	if (s == 0) {
		ck_stop_thread(c);
		return GPMDB_OK;
	}
	if (!c->thread) {
		if (pthread_create(&c->th, NULL, ck_thread, c) != 0)
			return db_err(db, GPMDB_NOMEM,
				      "checkpoint_interval: cannot start the "
				      "checkpoint thread");
		c->thread = true;
	}
	return GPMDB_OK;
}

int ckpt_pragma(gpmdb_stmt *st, ast_stmt *s, const char *v, rel **out)
{
	gpmdb *db = st->db;
	db_ckpt *c = ck_get(db);
	etype tt[5];
	bool set = v && !s->pragma_call;
	rel *r;
	int rc = GPMDB_OK;

	if (!c)
		return db_err(db, GPMDB_NOMEM, "out of memory");
	for (int i = 0; i < 5; i++)
		tt[i] = et_make(BC_T_INT);
	if (!strcasecmp(s->name, "checkpoint_file") ||
	    !strcasecmp(s->name, "checkpoint_status"))
		tt[0] = et_make(BC_T_TEXT);
	if (!strcasecmp(s->name, "checkpoint_status")) {
		tt[0] = et_make(BC_T_INT);
		tt[4] = et_make(BC_T_TEXT);
	}
	if (!(r = rel_new(NULL, st->ncols, tt)))
		return db_err(db, GPMDB_NOMEM, "out of memory");
	if (!strcasecmp(s->name, "checkpoint")) {
		rc = ck_now(db, c, r);
	} else if (!strcasecmp(s->name, "checkpoint_file")) {
		if (set) {
			if (strlen(v) >= sizeof(c->file))
				rc = db_err(db, GPMDB_ERROR,
					    "checkpoint_file: name too long");
			pthread_mutex_lock(&c->mu);
			if (!rc)
				snprintf(c->file, sizeof(c->file), "%s", v);
			pthread_mutex_unlock(&c->mu);
		}
		if (!rc) {
			sval x = sval_of_text(c->file);
			rc = pragma_put_row(db, r, &x);
		}
	} else if (!strcasecmp(s->name, "checkpoint_interval")) {
		if (set)
			rc = ck_set_interval(db, c, v);
		if (!rc) {
			sval x = sval_of_int(c->interval);
			rc = pragma_put_row(db, r, &x);
		}
	} else {
		sval row[5];

		pthread_mutex_lock(&c->mu);
		row[0] = sval_of_int(c->count);
		row[1] = sval_of_int(c->copied);
		row[2] = sval_of_int(c->total);
		row[3] = sval_of_int(c->incremental);
		row[4] = sval_of_text(c->err);
		rc = pragma_put_row(db, r, row);
		pthread_mutex_unlock(&c->mu);
	}
	if (rc) {
		rel_free(r);
		return rc;
	}
	*out = r;
	return GPMDB_OK;
}
