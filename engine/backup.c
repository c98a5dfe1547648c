/*
 * backup.c - VACUUM INTO 'file': a copy of the database in a new file
 * (storage/backup.c writes it); the backup API (gpmdb_backup_*).  Plain VACUUM,
 * which in SQLite rebuilds the file to give free space back, is refused with a
 * message: the pool has no compaction yet.
 */
#include "engine.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int vacuum_exec(gpmdb_stmt *st, ast_stmt *s)
{
	gpmdb *db = st->db;
	const ast_expr *e = s->pragma_value;
	uint64_t bytes = 0;

	if (s->schema && strcasecmp(s->schema, "main"))
		return db_err(db, GPMDB_ERROR, "unknown database %s",
			      s->schema);
	if (!e)
		return db_err(db, GPMDB_UNSUPPORTED,
			      "VACUUM is not supported: gpmdb does not compact "
			      "a pool yet; VACUUM INTO 'file' writes a copy");
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

struct gpmdb_backup {
	gpmdb *src;
	stg_pool *pool; /* a read-only connection of its own, or src's */
	bool own;
	stg_backup *b;
};

gpmdb_backup *gpmdb_backup_init(const char *dest_file, gpmdb *src,
				const char *src_name)
{
	stg_open_opts o = {.readonly = true};
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
	bk = calloc(1, sizeof(*bk));
	if (!bk) {
		db_err(src, GPMDB_NOMEM, "out of memory");
		return NULL;
	}
	bk->src = src;
	if (!strcmp(src->path, ":memory:") || !src->path[0]) {
		/* nobody else sees it: the copy is taken at once, before
		 * this connection can change it */
		bk->pool = src->pool;
	} else {
		/* a snapshot of its own, whatever src does meanwhile */
		rc = stg_open(src->path, &o, &bk->pool, msg, sizeof(msg));
		if (rc) {
			db_err(src, rc, "backup of %s: %s", src->path, msg);
			free(bk);
			return NULL;
		}
		bk->own = true;
		stg_busy_timeout(bk->pool, stg_get_busy_timeout(src->pool));
	}
	rc = bk->own ? stg_read_begin(bk->pool) : GPMDB_OK;
	if (rc == GPMDB_OK)
		rc = stg_backup_begin(bk->pool, dest_file, &bk->b);
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
	if (bk->own) {
		stg_read_end(bk->pool);
		stg_close(bk->pool);
	}
	free(bk);
	return rc;
}
