/*
 * gpmdb_on_sqlite.c - a test double: the part of gpmdb.h the shell uses,
 * implemented on libsqlite3.
 *
 * Linked only into build/tests/shell/gpmdb_sqlite, so that the shell's own
 * behaviour (output modes, dot-commands, import, editing) is tested with
 * outputs that the sqlite3 shell itself produced, independently of the
 * gpmdb engine.  Never linked into build/gpmdb.
 *
 * A gpmdb handle is the sqlite3 handle and a gpmdb_stmt the sqlite3_stmt;
 * result codes are SQLite's primary codes, which gpmdb.h shares.
 */
#include <sqlite3.h>
#include <string.h>

#include "gpmdb.h"

#define DB(p) ((sqlite3 *)(void *)(p))
#define ST(p) ((sqlite3_stmt *)(void *)(p))

const char *gpmdb_libversion(void)
{
	return GPMDB_VERSION " (sqlite test double)";
}

const char *gpmdb_errstr(int rc)
{
	return sqlite3_errstr(rc);
}

int gpmdb_open_v2(const char *path, gpmdb **db, int flags,
		  const gpmdb_options *opts)
{
	int f = 0;
	sqlite3 *s = NULL;
	(void)opts;
	if (flags & GPMDB_OPEN_READONLY)
		f |= SQLITE_OPEN_READONLY;
	if (flags & GPMDB_OPEN_READWRITE)
		f |= SQLITE_OPEN_READWRITE;
	if (flags & GPMDB_OPEN_CREATE)
		f |= SQLITE_OPEN_CREATE;
	int rc = sqlite3_open_v2(path, &s, f, NULL);
	*db = (gpmdb *)(void *)s;
	return rc & 0xff;
}

int gpmdb_busy_timeout(gpmdb *db, int ms)
{
	return sqlite3_busy_timeout(DB(db), ms) & 0xff;
}

int gpmdb_close(gpmdb *db)
{
	return sqlite3_close(DB(db));
}

int gpmdb_exec(gpmdb *db, const char *sql, gpmdb_callback cb, void *arg,
	       char **errmsg)
{
	return sqlite3_exec(DB(db), sql, cb, arg, errmsg) & 0xff;
}

void gpmdb_free(void *p)
{
	sqlite3_free(p);
}

void gpmdb_interrupt(gpmdb *db)
{
	sqlite3_interrupt(DB(db));
}

void gpmdb_progress_handler(gpmdb *db, int n, int (*cb)(void *), void *arg)
{
	/* SQLite counts VM instructions where gpmdb counts batches */
	sqlite3_progress_handler(DB(db), n, cb, arg);
}

int gpmdb_prepare(gpmdb *db, const char *sql, int nbyte, gpmdb_stmt **stmt,
		  const char **tail)
{
	sqlite3_stmt *s = NULL;
	int rc = sqlite3_prepare_v2(DB(db), sql, nbyte, &s, tail);
	*stmt = (gpmdb_stmt *)(void *)s;
	return rc & 0xff;
}

int gpmdb_bind_int(gpmdb_stmt *s, int i, int v)
{
	return sqlite3_bind_int(ST(s), i, v);
}

int gpmdb_bind_int64(gpmdb_stmt *s, int i, long long v)
{
	return sqlite3_bind_int64(ST(s), i, v);
}

int gpmdb_bind_double(gpmdb_stmt *s, int i, double v)
{
	return sqlite3_bind_double(ST(s), i, v);
}

int gpmdb_bind_text(gpmdb_stmt *s, int i, const char *v, int n)
{
	return sqlite3_bind_text(ST(s), i, v, n, SQLITE_TRANSIENT);
}

int gpmdb_bind_null(gpmdb_stmt *s, int i)
{
	return sqlite3_bind_null(ST(s), i);
}

int gpmdb_bind_parameter_count(gpmdb_stmt *s)
{
	return sqlite3_bind_parameter_count(ST(s));
}

int gpmdb_step(gpmdb_stmt *s)
{
	int rc = sqlite3_step(ST(s));
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? rc : rc & 0xff;
}

int gpmdb_column_count(gpmdb_stmt *s)
{
	return sqlite3_column_count(ST(s));
}

const char *gpmdb_column_name(gpmdb_stmt *s, int i)
{
	return sqlite3_column_name(ST(s), i);
}

int gpmdb_column_type(gpmdb_stmt *s, int i)
{
	switch (sqlite3_column_type(ST(s), i)) {
	case SQLITE_INTEGER:
		return GPMDB_INTEGER;
	case SQLITE_FLOAT:
		return GPMDB_FLOAT;
	case SQLITE_NULL:
		return GPMDB_NULL;
	default: /* gpmdb has no BLOB; text is the nearest */
		return GPMDB_TEXT;
	}
}

int gpmdb_column_int(gpmdb_stmt *s, int i)
{
	return sqlite3_column_int(ST(s), i);
}

long long gpmdb_column_int64(gpmdb_stmt *s, int i)
{
	return sqlite3_column_int64(ST(s), i);
}

double gpmdb_column_double(gpmdb_stmt *s, int i)
{
	return sqlite3_column_double(ST(s), i);
}

const unsigned char *gpmdb_column_text(gpmdb_stmt *s, int i)
{
	return sqlite3_column_text(ST(s), i);
}

int gpmdb_column_bytes(gpmdb_stmt *s, int i)
{
	return sqlite3_column_bytes(ST(s), i);
}

int gpmdb_reset(gpmdb_stmt *s)
{
	return sqlite3_reset(ST(s)) & 0xff;
}

int gpmdb_finalize(gpmdb_stmt *s)
{
	return sqlite3_finalize(ST(s)) & 0xff;
}

long long gpmdb_changes(gpmdb *db)
{
	return sqlite3_changes64(DB(db));
}

int gpmdb_errcode(gpmdb *db)
{
	return sqlite3_errcode(DB(db)) & 0xff;
}

const char *gpmdb_errmsg(gpmdb *db)
{
	return sqlite3_errmsg(DB(db));
}

/* .backup: sqlite3's backup API onto the file (always a full copy). */
struct gpmdb_backup {
	sqlite3 *dest;
	sqlite3_backup *b;
	sqlite3 *src;
	long long pages;
};

gpmdb_backup *gpmdb_backup_init_v2(const char *dest_file, gpmdb *src,
				   const char *src_name, int flags)
{
	struct gpmdb_backup *bk = sqlite3_malloc(sizeof(*bk));

	(void)flags;
	if (!bk)
		return NULL;
	memset(bk, 0, sizeof(*bk));
	bk->src = DB(src);
	if (sqlite3_open(dest_file, &bk->dest) != SQLITE_OK) {
		sqlite3_close(bk->dest);
		sqlite3_free(bk);
		return NULL;
	}
	bk->b = sqlite3_backup_init(bk->dest, "main", DB(src),
				    src_name ? src_name : "main");
	if (!bk->b) {
		sqlite3_close(bk->dest);
		sqlite3_free(bk);
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
	int rc = sqlite3_backup_step(bk->b, npages);

	bk->pages = sqlite3_backup_pagecount(bk->b);
	return rc == SQLITE_DONE ? GPMDB_DONE : rc;
}

int gpmdb_backup_status(gpmdb_backup *bk, gpmdb_backup_stat *out)
{
	memset(out, 0, sizeof(*out));
	out->zones_total = out->zones_copied = bk->pages;
	strcpy(out->why_full, "sqlite3 test double");
	return GPMDB_OK;
}

int gpmdb_backup_finish(gpmdb_backup *bk)
{
	int rc = sqlite3_backup_finish(bk->b);

	sqlite3_close(bk->dest);
	sqlite3_free(bk);
	return rc;
}
