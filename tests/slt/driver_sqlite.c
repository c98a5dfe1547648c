/*
 * driver_sqlite.c - the sqllogictest runner over SQLite (build/sqlite_slt).
 *
 * The corpus was produced by SQLite, so running it here must pass every
 * record that applies to SQLite: this driver is how the runner core is
 * tested before the gpmdb engine exists.
 */
#include "slt.h"

#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

static char *slt_sqlite_errdup(sqlite3 *db)
{
	const char *m = sqlite3_errmsg(db);
	char *s = malloc(strlen(m) + 1);

	if (s)
		strcpy(s, m);
	return s;
}

static int slt_sqlite_open(const struct slt_options *opt, void **conn,
			   char **err)
{
	sqlite3 *db;

	(void)opt;
	/* In memory: each file gets a fresh database and nothing to clean. */
	if (sqlite3_open(":memory:", &db) != SQLITE_OK) {
		if (err)
			*err = slt_sqlite_errdup(db);
		sqlite3_close(db);
		return -1;
	}
	*conn = db;
	return 0;
}

static void slt_sqlite_close(void *conn)
{
	sqlite3_close(conn);
}

static int slt_sqlite_statement(void *conn, const char *sql, char **err)
{
	char *msg = NULL;
	int rc = sqlite3_exec(conn, sql, NULL, NULL, &msg);

	if (rc != SQLITE_OK && err) {
		*err = NULL;
		if (msg) {
			*err = malloc(strlen(msg) + 1);
			if (*err)
				strcpy(*err, msg);
		}
	}
	sqlite3_free(msg);
	return rc != SQLITE_OK;
}

static int slt_sqlite_query(void *conn, const char *sql, struct slt_result *res,
			    char **err)
{
	const char *types = slt_result_types(res);
	struct slt_value *vals = NULL;
	sqlite3_stmt *st = NULL;
	int rc, ncols, i;

	rc = sqlite3_prepare_v2(conn, sql, -1, &st, NULL);
	if (rc != SQLITE_OK || !st) {
		if (err)
			*err = slt_sqlite_errdup(conn);
		sqlite3_finalize(st);
		return -1;
	}
	ncols = sqlite3_column_count(st);
	if (slt_result_columns(res, ncols)) {
		sqlite3_finalize(st);
		return -1;
	}
	vals = calloc((size_t)ncols + 1, sizeof(*vals));
	if (!vals) {
		sqlite3_finalize(st);
		return -1;
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		for (i = 0; i < ncols; i++) {
			struct slt_value *v = &vals[i];

			v->text = NULL;
			switch (sqlite3_column_type(st, i)) {
			case SQLITE_NULL:
				v->type = SLT_NULL;
				continue;
			case SQLITE_INTEGER:
				v->type = SLT_INTEGER;
				v->i = sqlite3_column_int64(st, i);
				break;
			case SQLITE_FLOAT:
				v->type = SLT_REAL;
				v->r = sqlite3_column_double(st, i);
				break;
			default: /* text, and blobs shown as their bytes */
				v->type = SLT_TEXT;
				break;
			}
			/* Numbers need their text only in 'T' columns; after
			 * the numeric read, so that it is not converted. */
			if (v->type == SLT_TEXT || types[i] == 'T')
				v->text =
				    (const char *)sqlite3_column_text(st, i);
		}
		slt_result_row(res, vals);
	}
	free(vals);
	if (rc != SQLITE_DONE) {
		if (err)
			*err = slt_sqlite_errdup(conn);
		sqlite3_finalize(st);
		return SLT_QUERY_ROWS_CUT;
	}
	sqlite3_finalize(st);
	return 0;
}

const struct slt_driver slt_driver = {
    .name = "sqlite",
    .open = slt_sqlite_open,
    .close = slt_sqlite_close,
    .statement = slt_sqlite_statement,
    .query = slt_sqlite_query,
};
