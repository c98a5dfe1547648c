/*
 * driver_gpmdb.c - the sqllogictest runner over gpmdb (build/gpmdb_slt).
 *
 * Goes through the public API only (include/gpmdb.h), as an application
 * would.  Each test file gets a new database in a fresh temporary folder
 * (under $TMPDIR, else /tmp), removed with everything in it on close.
 * Durability defaults to "off": the runner tests SQL, and the crash tests
 * test durability.
 */
#include "slt.h"

#include "gpmdb.h"

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct slt_gpmdb {
	gpmdb *db;
	char dir[4096];
};

static char *slt_gpmdb_strdup(const char *s)
{
	char *d = malloc(strlen(s) + 1);

	if (d)
		strcpy(d, s);
	return d;
}

static char *slt_gpmdb_errdup(gpmdb *db)
{
	const char *m = db ? gpmdb_errmsg(db) : NULL;

	return slt_gpmdb_strdup(m ? m : "out of memory");
}

static int slt_gpmdb_rm(const char *path, const struct stat *st, int flag,
			struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	remove(path);
	return 0;
}

static void slt_gpmdb_rmdir(const char *dir)
{
	nftw(dir, slt_gpmdb_rm, 16, FTW_DEPTH | FTW_PHYS);
}

static int slt_gpmdb_open(const struct slt_options *opt, void **conn,
			  char **err)
{
	struct slt_gpmdb *c = calloc(1, sizeof(*c));
	const char *tmp = getenv("TMPDIR");
	gpmdb_options o = {0};
	char path[4200];
	int rc;

	if (!c)
		return -1;
	snprintf(c->dir, sizeof(c->dir), "%s/gpmdb_slt.XXXXXX",
		 tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(c->dir)) {
		if (err)
			*err =
			    slt_gpmdb_strdup("cannot make a temporary folder");
		free(c);
		return -1;
	}
	snprintf(path, sizeof(path), "%s/test.gpmdb", c->dir);
	/* --backend, else GPMDB_BACKEND (the GPU runs of make test-gpu) */
	o.backend = opt->backend ? opt->backend : getenv("GPMDB_BACKEND");
	o.durability = opt->durability ? opt->durability : "off";
	rc = gpmdb_open_v2(path, &c->db,
			   GPMDB_OPEN_READWRITE | GPMDB_OPEN_CREATE, &o);
	if (rc != GPMDB_OK) {
		if (err)
			*err = slt_gpmdb_errdup(c->db);
		gpmdb_close(c->db);
		slt_gpmdb_rmdir(c->dir);
		free(c);
		return -1;
	}
	*conn = c;
	return 0;
}

static void slt_gpmdb_close(void *conn)
{
	struct slt_gpmdb *c = conn;

	if (!c)
		return;
	gpmdb_close(c->db);
	slt_gpmdb_rmdir(c->dir);
	free(c);
}

static int slt_gpmdb_statement(void *conn, const char *sql, char **err)
{
	struct slt_gpmdb *c = conn;
	char *msg = NULL;
	int rc = gpmdb_exec(c->db, sql, NULL, NULL, &msg);

	if (rc != GPMDB_OK && err)
		*err = msg ? slt_gpmdb_strdup(msg) : slt_gpmdb_errdup(c->db);
	gpmdb_free(msg);
	return rc != GPMDB_OK;
}

static int slt_gpmdb_query(void *conn, const char *sql, struct slt_result *res,
			   char **err)
{
	struct slt_gpmdb *c = conn;
	const char *types = slt_result_types(res);
	struct slt_value *vals;
	gpmdb_stmt *st = NULL;
	int rc, ncols, i;

	rc = gpmdb_prepare(c->db, sql, -1, &st, NULL);
	if (rc != GPMDB_OK || !st) {
		if (err)
			*err = st || rc != GPMDB_OK
				   ? slt_gpmdb_errdup(c->db)
				   : slt_gpmdb_strdup("no statement");
		gpmdb_finalize(st);
		return -1;
	}
	ncols = gpmdb_column_count(st);
	if (slt_result_columns(res, ncols)) {
		gpmdb_finalize(st);
		return -1;
	}
	vals = calloc((size_t)ncols + 1, sizeof(*vals));
	if (!vals) {
		gpmdb_finalize(st);
		return -1;
	}
	while ((rc = gpmdb_step(st)) == GPMDB_ROW) {
		for (i = 0; i < ncols; i++) {
			struct slt_value *v = &vals[i];

			v->text = NULL;
			switch (gpmdb_column_type(st, i)) {
			case GPMDB_NULL:
				v->type = SLT_NULL;
				continue;
			case GPMDB_INTEGER:
				v->type = SLT_INTEGER;
				v->i = gpmdb_column_int64(st, i);
				break;
			case GPMDB_FLOAT:
				v->type = SLT_REAL;
				v->r = gpmdb_column_double(st, i);
				break;
			default:
				v->type = SLT_TEXT;
				break;
			}
			if (v->type == SLT_TEXT || types[i] == 'T')
				v->text =
				    (const char *)gpmdb_column_text(st, i);
		}
		slt_result_row(res, vals);
	}
	free(vals);
	if (rc != GPMDB_DONE) {
		if (err)
			*err = slt_gpmdb_errdup(c->db);
		gpmdb_finalize(st);
		return SLT_QUERY_ROWS_CUT;
	}
	gpmdb_finalize(st);
	return 0;
}

const struct slt_driver slt_driver = {
    .name = "gpmdb",
    .open = slt_gpmdb_open,
    .close = slt_gpmdb_close,
    .statement = slt_gpmdb_statement,
    .query = slt_gpmdb_query,
};
