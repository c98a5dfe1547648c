/*
 * fuzz_sql.c - libFuzzer target for the whole engine: the input is a SQL
 * script run statement by statement (gpmdb_prepare, gpmdb_step to the
 * end, the columns read) against a small database made afresh for each
 * input, so that every finding reproduces from its input alone.
 *
 * The pool is a file in /dev/shm (TMPDIR when /dev/shm is missing) with
 * durability "off"; each query may use FUZZ_SQL_MEMORY_MIB of memory
 * (PRAGMA memory_limit, which inputs may not change), so that cross
 * joins end with an error rather than an OOM.  Errors are expected; a
 * crash, leak, UB, an error without a message or a failed integrity check
 * after the script is a finding.  See docs/testing.md.
 */
#include "gpmdb.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#define FUZZ_SQL_MEMORY_MIB 64
#define FUZZ_SQL_MAX_STMTS  32	  /* statements run per input */
#define FUZZ_SQL_MAX_ROWS   10000 /* rows stepped per statement */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char fuzz_sql_schema[] =
    "CREATE TABLE t1(a INTEGER PRIMARY KEY, b TEXT NOT NULL, c REAL, "
    "d DECIMAL(10,2), e DATE, f BOOLEAN);"
    "CREATE TABLE t2(x INTEGER, y TEXT UNIQUE, z INTEGER DEFAULT 7);"
    "INSERT INTO t1 VALUES (1, 'one', 1.5, 10.25, DATE '1998-12-01', 1),"
    " (2, 'two', NULL, -3.10, DATE '2000-02-29', 0),"
    " (3, '', 0.0, NULL, NULL, NULL), (4, '12', -2.5e10, 0.01, "
    " DATE '1970-01-01', 1);"
    "INSERT INTO t2 VALUES (1, 'a', 1), (NULL, 'b', NULL), (3, NULL, 3),"
    " (1, 'd', 4);"
    "CREATE VIEW v1 AS SELECT a, b, x FROM t1 LEFT JOIN t2 ON a = x;"
    "PRAGMA memory_limit = 64;";

static char fuzz_sql_path[256];

static void fuzz_sql_fail(const char *what, const char *detail)
{
	fprintf(stderr, "fuzz_sql: %s: %s\n", what, detail ? detail : "");
	abort();
}

/* Steps st to the end, reading every column as a caller would. */
static int fuzz_sql_step_all(gpmdb_stmt *st)
{
	int rc, rows = 0;

	while ((rc = gpmdb_step(st)) == GPMDB_ROW &&
	       rows++ < FUZZ_SQL_MAX_ROWS) {
		int n = gpmdb_column_count(st);
		for (int i = 0; i < n; i++) {
			(void)gpmdb_column_name(st, i);
			switch (gpmdb_column_type(st, i)) {
			case GPMDB_INTEGER:
				(void)gpmdb_column_int64(st, i);
				break;
			case GPMDB_FLOAT:
				(void)gpmdb_column_double(st, i);
				break;
			default:
				(void)gpmdb_column_text(st, i);
				(void)gpmdb_column_bytes(st, i);
				break;
			}
		}
	}
	return rc == GPMDB_ROW ? GPMDB_DONE : rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	gpmdb_options o = {.durability = "off", .backend = "cpu"};
	gpmdb *db = NULL;
	char *sql, *err = NULL;

	/* The memory limit bounds what a query may build; inputs that would
	 * lift it are not run (an OOM is not a finding). */
	sql = malloc(size + 1);
	if (!sql)
		return 0;
	memcpy(sql, data, size);
	sql[size] = 0;
	if (strcasestr(sql, "memory_limit")) {
		free(sql);
		return 0;
	}
	if (!fuzz_sql_path[0]) {
		const char *dir = access("/dev/shm", W_OK) == 0
				      ? "/dev/shm"
				      : getenv("TMPDIR");
		snprintf(fuzz_sql_path, sizeof(fuzz_sql_path),
			 "%s/gpmdb_fuzz_sql_%d.db", dir ? dir : "/tmp",
			 (int)getpid());
	}
	unlink(fuzz_sql_path);
	if (gpmdb_open_v2(fuzz_sql_path, &db,
			  GPMDB_OPEN_READWRITE | GPMDB_OPEN_CREATE,
			  &o) != GPMDB_OK)
		fuzz_sql_fail("open", db ? gpmdb_errmsg(db) : "no memory");
	if (gpmdb_exec(db, fuzz_sql_schema, NULL, NULL, &err) != GPMDB_OK)
		fuzz_sql_fail("schema", err);

	const char *pos = sql;
	for (int k = 0; k < FUZZ_SQL_MAX_STMTS && *pos; k++) {
		gpmdb_stmt *st = NULL;
		const char *tail = NULL;
		int rc = gpmdb_prepare(db, pos, -1, &st, &tail);

		if (rc != GPMDB_OK && !gpmdb_errmsg(db)[0])
			fuzz_sql_fail("prepare error without a message", pos);
		if (st) {
			rc = fuzz_sql_step_all(st);
			if (rc != GPMDB_DONE && !gpmdb_errmsg(db)[0])
				fuzz_sql_fail("step error without a message",
					      pos);
			gpmdb_finalize(st);
		}
		if (!tail || tail <= pos)
			break;
		pos = tail;
	}

	/* Whatever the script did, the file must still be consistent. */
	gpmdb_stmt *st = NULL;
	gpmdb_exec(db, "ROLLBACK", NULL, NULL, NULL);
	if (gpmdb_prepare(db, "PRAGMA integrity_check", -1, &st, NULL) ==
		GPMDB_OK &&
	    gpmdb_step(st) == GPMDB_ROW) {
		const char *r = (const char *)gpmdb_column_text(st, 0);
		if (!r || strcmp(r, "ok") != 0)
			fuzz_sql_fail("integrity_check", r);
	}
	gpmdb_finalize(st);
	gpmdb_free(err);
	gpmdb_close(db);
	unlink(fuzz_sql_path);
	free(sql);
	return 0;
}
