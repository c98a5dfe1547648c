/*
 * hello.c - the smallest gpmdb program: open a database, run SQL with
 * gpmdb_exec, insert with a prepared statement and bound parameters, read
 * rows back with gpmdb_step and the gpmdb_column_* functions.
 *
 * Usage: hello [DATABASE]   (default: a file in /tmp, removed at the end)
 * Prints the rows and, last, "hello: ok".
 */
#include "gpmdb.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int fail(gpmdb *db, const char *what)
{
	fprintf(stderr, "hello: %s: %s\n", what, gpmdb_errmsg(db));
	gpmdb_close(db);
	return 1;
}

int main(int argc, char **argv)
{
	char path[256];
	gpmdb *db;
	gpmdb_stmt *st;
	const char *names[] = {"ada", "grace", "edsger"};
	int rc;

	if (argc > 1)
		snprintf(path, sizeof(path), "%s", argv[1]);
	else
		snprintf(path, sizeof(path), "/tmp/gpmdb_hello.%d.db",
			 (int)getpid());
	if (gpmdb_open_v2(path, &db, GPMDB_OPEN_READWRITE | GPMDB_OPEN_CREATE,
			  NULL))
		return fail(db, "open");
	if (gpmdb_exec(db,
		       "DROP TABLE IF EXISTS people;"
		       "CREATE TABLE people(id INTEGER PRIMARY KEY, "
		       "name TEXT NOT NULL, born INTEGER)",
		       NULL, NULL, NULL))
		return fail(db, "create");

	/* one prepared INSERT, executed once per row */
	if (gpmdb_prepare(db, "INSERT INTO people VALUES (?, ?, ?)", -1, &st,
			  NULL))
		return fail(db, "prepare insert");
	for (int i = 0; i < 3; i++) {
		gpmdb_bind_int(st, 1, i + 1);
		gpmdb_bind_text(st, 2, names[i], -1);
		gpmdb_bind_int(st, 3, 1815 + 91 * i);
		if (gpmdb_step(st) != GPMDB_DONE)
			return fail(db, "insert");
		gpmdb_reset(st);
	}
	gpmdb_finalize(st);

	if (gpmdb_prepare(db,
			  "SELECT name, born FROM people WHERE born > ? "
			  "ORDER BY born",
			  -1, &st, NULL))
		return fail(db, "prepare select");
	gpmdb_bind_int(st, 1, 1800);
	int rows = 0;
	while ((rc = gpmdb_step(st)) == GPMDB_ROW) {
		printf("%s %d\n", (const char *)gpmdb_column_text(st, 0),
		       gpmdb_column_int(st, 1));
		rows++;
	}
	gpmdb_finalize(st);
	if (rc != GPMDB_DONE)
		return fail(db, "select");
	gpmdb_close(db);
	if (argc <= 1)
		unlink(path);
	if (rows != 3) {
		fprintf(stderr, "hello: %d rows, expected 3\n", rows);
		return 1;
	}
	printf("hello: ok\n");
	return 0;
}
