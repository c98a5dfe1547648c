/*
 * test_badsql.c - bad SQL through the C API (issue 3, "Bad input"):
 * unterminated strings and comments, deep nesting in the parser and in
 * the engine, a 1 MB statement, invalid UTF-8, huge integer literals,
 * unknown functions, wrong argument counts, type errors, NULL into NOT
 * NULL and duplicate keys.
 *
 * Each must fail with its result code and a message that names the
 * problem, and leave the table exactly as it was (compared row by row),
 * in autocommit and inside BEGIN ... COMMIT.  The storage-level bad input
 * (files that are not pools) is test_badinput.c.
 */
#include "harness.h"
#include "sql_util.h"

#include "gpmdb.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char dir[256];
static char path[300];

static gpmdb *open_db(void)
{
	gpmdb *db = su_open(path);
	char *err = NULL;

	CHECK_RC(gpmdb_exec(db,
			    "CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT NOT "
			    "NULL, c INTEGER UNIQUE, d DATE);"
			    "INSERT INTO t VALUES (1, 'x', 1, DATE "
			    "'2000-01-01'), (2, 'y', 2, NULL)",
			    NULL, NULL, &err),
		 GPMDB_OK);
	gpmdb_free(err);
	return db;
}

/* The whole table as text, one line per row, in key order. */
static char *dump(gpmdb *db)
{
	gpmdb_stmt *st = NULL;
	size_t cap = 256, n = 0;
	char *out = malloc(cap);

	out[0] = 0;
	if (gpmdb_prepare(db, "SELECT a, b, c, d FROM t ORDER BY a", -1, &st,
			  NULL) != GPMDB_OK) {
		snprintf(out, cap, "<error %s>", gpmdb_errmsg(db));
		return out;
	}
	while (gpmdb_step(st) == GPMDB_ROW) {
		for (int i = 0; i < 4; i++) {
			const char *v = (const char *)gpmdb_column_text(st, i);
			size_t k = strlen(v ? v : "NULL") + 2;
			if (n + k + 1 > cap) {
				cap = 2 * (n + k + 1);
				out = realloc(out, cap);
			}
			n += (size_t)snprintf(out + n, cap - n, "%s%c",
					      v ? v : "NULL",
					      i < 3 ? '|' : '\n');
		}
	}
	gpmdb_finalize(st);
	return out;
}

/* Runs sql, which must fail with want_rc and a message containing
 * want_msg, and leave t as it was. */
static void bad_at(gpmdb *db, const char *sql, int want_rc,
		   const char *want_msg, int line)
{
	char *before = dump(db), *err = NULL, *after;
	int rc = gpmdb_exec(db, sql, NULL, NULL, &err);

	if (rc != want_rc || !err || !strstr(err, want_msg)) {
		fprintf(stderr,
			"line %d: [%.120s]\n  want: %d ...%s...\n  got:  %d "
			"%s\n",
			line, sql, want_rc, want_msg, rc, err ? err : "(none)");
		th_case_failed = 1;
	}
	if (rc == GPMDB_OK || strcmp(gpmdb_errmsg(db), err ? err : "") != 0) {
		fprintf(stderr, "line %d: gpmdb_errmsg differs: %s\n", line,
			gpmdb_errmsg(db));
		th_case_failed = 1;
	}
	after = dump(db);
	if (strcmp(before, after) != 0) {
		fprintf(stderr,
			"line %d: [%.120s] changed the table\nbefore:\n%s"
			"after:\n%s",
			line, sql, before, after);
		th_case_failed = 1;
	}
	gpmdb_free(err);
	free(before);
	free(after);
}
#define bad(db, sql, rc, msg) bad_at((db), (sql), (rc), (msg), __LINE__)

static char *repeat(const char *head, const char *unit, size_t n,
		    const char *mid, const char *unit2, const char *tail)
{
	size_t len = strlen(head) + n * (strlen(unit) + strlen(unit2)) +
		     strlen(mid) + strlen(tail) + 1;
	char *s = malloc(len), *p = s;

	p = stpcpy(p, head);
	for (size_t i = 0; i < n; i++)
		p = stpcpy(p, unit);
	p = stpcpy(p, mid);
	for (size_t i = 0; i < n; i++)
		p = stpcpy(p, unit2);
	stpcpy(p, tail);
	return s;
}

static void test_unterminated(void)
{
	gpmdb *db = open_db();

	bad(db, "INSERT INTO t VALUES (3, 'abc", GPMDB_ERROR,
	    "unrecognized token: \"'abc\"");
	bad(db, "INSERT INTO t VALUES (3, 'it''s", GPMDB_ERROR,
	    "unrecognized token: \"'it''s\"");
	bad(db, "UPDATE t SET \"b = 'z'", GPMDB_ERROR,
	    "unrecognized token: \"\"b = 'z'\"");
	/* The comment follows a whole statement without its ';': the
	 * statement is not run. */
	bad(db, "INSERT INTO t VALUES (3, 'abc') /* never closed", GPMDB_ERROR,
	    "unterminated /* comment");
	bad(db, "DELETE FROM t /* never closed", GPMDB_ERROR,
	    "unterminated /* comment");
	gpmdb_close(db);
}

/* Nesting beyond the limits is an error from the parser (its stack, or
 * the tree depth of 1000); nesting the parser takes must give a result
 * or an error from the engine, never a C stack overflow. */
static void test_deep_nesting(void)
{
	gpmdb *db = open_db();
	char *s;

	s = repeat("SELECT ", "(", 10000, "1", ")", "");
	bad(db, s, GPMDB_ERROR, "parser stack overflow");
	free(s);
	s = repeat("INSERT INTO t VALUES (3, 'z', ", "(", 10000, "3", ")",
		   ", NULL)");
	bad(db, s, GPMDB_ERROR, "parser stack overflow");
	free(s);
	s = repeat("DELETE FROM t WHERE ", "(", 10000, "a = 1", ")", "");
	bad(db, s, GPMDB_ERROR, "parser stack overflow");
	free(s);
	s = repeat("DELETE FROM t WHERE a IN ", "(SELECT a FROM t WHERE a IN ",
		   10000, "(1)", ")", "");
	bad(db, s, GPMDB_ERROR, "parser stack overflow");
	free(s);
	s = repeat("UPDATE t SET c = ", "CASE WHEN a = 1 THEN ", 10000, "c",
		   " END", "");
	bad(db, s, GPMDB_ERROR, "parser stack overflow");
	free(s);
	s = repeat("UPDATE t SET c = ", "abs(", 10000, "c", ")", "");
	bad(db, s, GPMDB_ERROR, "parser stack overflow");
	free(s);
	s = repeat("DELETE FROM t WHERE a = 0", " OR a = 0", 10000, "", "", "");
	bad(db, s, GPMDB_ERROR,
	    "expression tree is too large (maximum depth 1000)");
	free(s);

	/* Parentheses make no tree nodes: 5000 of them are fine. */
	s = repeat("SELECT ", "(", 5000, "41 + 1", ")", "");
	CHECK(strcmp(su_scalar(db, s), "42") == 0);
	free(s);

	/* Within the parser's limits, the binder, planner, compiler and
	 * executor either run the statement or say it is too deep or too
	 * complex. */
	static const struct {
		const char *head, *unit, *mid, *unit2, *tail;
	} forms[] = {
	    {"UPDATE t SET c = ", "CASE WHEN a = 1 THEN ", "c", " END", ""},
	    {"UPDATE t SET c = ", "CASE WHEN a = 0 THEN 0 ELSE ", "c", " END",
	     ""},
	    {"UPDATE t SET c = ", "abs(", "c", ")", ""},
	    {"UPDATE t SET c = ", "coalesce(NULL, ", "c", ")", ""},
	    {"UPDATE t SET c = ", "- ", "c", "", ""},
	    {"UPDATE t SET c = c", " + 0", "", "", ""},
	    {"UPDATE t SET c = ", "(SELECT ", "c", ")", ""},
	    {"DELETE FROM t WHERE a IN ", "(SELECT a FROM t WHERE a IN ", "(1)",
	     ")", ""},
	    {"DELETE FROM t WHERE ", "EXISTS (SELECT 1 FROM t WHERE ", "a = 1",
	     ")", ""},
	    {"INSERT INTO t SELECT * FROM ", "(SELECT * FROM ", "t", ")", ""},
	};
	static const size_t depths[] = {50, 200, 499, 998};
	for (size_t f = 0; f < sizeof(forms) / sizeof(forms[0]); f++) {
		for (size_t k = 0; k < sizeof(depths) / sizeof(depths[0]);
		     k++) {
			char *before = dump(db), *err = NULL;
			s = repeat(forms[f].head, forms[f].unit, depths[k],
				   forms[f].mid, forms[f].unit2, forms[f].tail);
			int rc = gpmdb_exec(db, "BEGIN", NULL, NULL, NULL);
			rc = gpmdb_exec(db, s, NULL, NULL, &err);
			if (rc != GPMDB_OK) {
				/* "too deep", "too large", "too complex",
				 * the parser's stack, or a constraint
				 * (INSERT of existing keys) */
				CHECKF(err && (strstr(err, "too") ||
					       strstr(err, "stack overflow") ||
					       strstr(err, "constraint")),
				       "form %zu depth %zu: %d %s", f,
				       depths[k], rc, err ? err : "");
				char *after = dump(db);
				CHECKF(strcmp(before, after) == 0,
				       "form %zu depth %zu changed t", f,
				       depths[k]);
				free(after);
			}
			gpmdb_exec(db, "ROLLBACK", NULL, NULL, NULL);
			gpmdb_free(err);
			free(before);
			free(s);
		}
	}

	/* Views nested in views and CTEs referring to each other expand at
	 * bind time, outside the parser's limits. */
	char *err = NULL;
	CHECK_RC(gpmdb_exec(db, "CREATE VIEW v0 AS SELECT * FROM t", NULL, NULL,
			    NULL),
		 GPMDB_OK);
	int made = 0;
	for (int i = 1; i <= 200; i++) {
		char sql[128];
		snprintf(sql, sizeof(sql),
			 "CREATE VIEW v%d AS SELECT * FROM v%d", i, i - 1);
		if (gpmdb_exec(db, sql, NULL, NULL, &err) != GPMDB_OK) {
			CHECKF(err && strstr(err, "nested too deep"), "%s",
			       err ? err : "");
			gpmdb_free(err);
			err = NULL;
			break;
		}
		made = i;
	}
	CHECK(made >= 16);
	size_t cap = 40 * 5000 + 100;
	char *w = malloc(cap), *p = w;
	p += sprintf(p, "WITH c0 AS (SELECT 1 AS x)");
	for (int i = 1; i <= 5000; i++)
		p += sprintf(p, ", c%d AS (SELECT x FROM c%d)", i, i - 1);
	sprintf(p, " SELECT * FROM c5000");
	CHECK_RC(gpmdb_exec(db, w, NULL, NULL, &err), GPMDB_ERROR);
	CHECKF(err && strstr(err, "too deep"), "%s", err ? err : "");
	gpmdb_free(err);
	free(w);
	gpmdb_close(db);
}

static void test_big_statement(void)
{
	gpmdb *db = open_db();
	/* About 1.2 MB: 30,000 rows, the last one bad, so nothing goes in. */
	size_t n = 30000, cap = n * 64 + 200;
	char *s = malloc(cap), *p = s;

	p += sprintf(p, "INSERT INTO t VALUES ");
	for (size_t i = 0; i < n; i++)
		p += sprintf(p, "(%zu, 'row number %zu', %zu, NULL), ", i + 10,
			     i, i + 10);
	char *good_end = p;
	sprintf(p, "(5, NULL, 5, NULL)");
	CHECK(strlen(s) > 1000000);
	bad(db, s, GPMDB_CONSTRAINT, "NOT NULL constraint failed: t.b");
	/* A syntax error at the very end of it. */
	sprintf(good_end, "(5, 'x', 5, NULL");
	bad(db, s, GPMDB_ERROR, "incomplete input");
	/* And the same statement without the error goes in whole. */
	strcpy(good_end - 2, "");
	CHECK_RC(gpmdb_exec(db, s, NULL, NULL, NULL), GPMDB_OK);
	CHECK(gpmdb_changes(db) == (int)n);
	CHECK(strcmp(su_scalar(db, "SELECT count(*) FROM t"), "30002") == 0);
	free(s);

	/* A 1 MB string literal. */
	s = repeat("INSERT INTO t VALUES (99999, '", "x", 1 << 20, "", "",
		   "', NULL, NULL)");
	CHECK_RC(gpmdb_exec(db, s, NULL, NULL, NULL), GPMDB_OK);
	CHECK(strcmp(su_scalar(db, "SELECT length(b) FROM t WHERE a = 99999"),
		     "1048576") == 0);
	free(s);
	gpmdb_close(db);
}

static void test_invalid_utf8(void)
{
	gpmdb *db = open_db();

	/* Bytes >= 0x80 are name characters, so bad UTF-8 outside a string
	 * is an unknown name, quoted as it is. */
	bad(db, "UPDATE t SET b = \xff\xfe", GPMDB_ERROR,
	    "no such column: \xff\xfe");
	bad(db, "DELETE FROM \xc3", GPMDB_ERROR, "no such table: \xc3");
	bad(db, "INSERT INTO t VALUES (3, 'a', 3, NULL) \x80", GPMDB_ERROR,
	    "near \"\x80\": syntax error");
	/* Inside a string the bytes are kept as they are (as SQLite does),
	 * and read back unchanged. */
	CHECK_RC(gpmdb_exec(db,
			    "INSERT INTO t VALUES (3, '\xff\xc3(\x80', 3, "
			    "NULL)",
			    NULL, NULL, NULL),
		 GPMDB_OK);
	CHECK(strcmp(su_scalar(db, "SELECT b FROM t WHERE a = 3"),
		     "\xff\xc3(\x80") == 0);
	/* An unterminated string of bad bytes is quoted in part. */
	char *s = repeat("SELECT '", "\xe2\x82", 200, "", "", "");
	bad(db, s, GPMDB_ERROR, "unrecognized token: \"'\xe2\x82");
	free(s);
	gpmdb_close(db);
}

static void test_huge_integers(void)
{
	gpmdb *db = open_db();

	/* A decimal literal past 64 bits is a real, as in SQLite; it does
	 * not fit an INTEGER column, and is not stored saturated. */
	CHECK(strcmp(su_scalar(db, "SELECT 99999999999999999999"), "1.0e+20") ==
	      0);
	bad(db, "INSERT INTO t VALUES (99999999999999999999, 'z', 3, NULL)",
	    GPMDB_MISMATCH,
	    "datatype mismatch: cannot store REAL '1.0e+20' in a INTEGER "
	    "column");
	bad(db, "INSERT INTO t VALUES (9223372036854775808, 'z', 3, NULL)",
	    GPMDB_MISMATCH, "cannot store REAL");
	bad(db, "UPDATE t SET c = 1e300 WHERE a = 2", GPMDB_MISMATCH,
	    "cannot store REAL '1.0e+300' in a INTEGER column");
	bad(db, "UPDATE t SET c = '99999999999999999999' WHERE a = 2",
	    GPMDB_MISMATCH,
	    "cannot store TEXT '99999999999999999999' in a INTEGER column");
	bad(db, "UPDATE t SET c = '-9223372036854775809' WHERE a = 2",
	    GPMDB_MISMATCH, "cannot store TEXT");
	bad(db, "INSERT INTO t VALUES (3, 'z', 0x1FFFFFFFFFFFFFFFF, NULL)",
	    GPMDB_ERROR, "hex literal too big: 0x1FFFFFFFFFFFFFFFF");
	bad(db, "UPDATE t SET c = 9223372036854775807 + c", GPMDB_ERROR,
	    "integer overflow");
	bad(db, "UPDATE t SET c = -9223372036854775808 - c", GPMDB_ERROR,
	    "integer overflow");
	bad(db, "CREATE TABLE u (a VARCHAR(99999999999999999999))", GPMDB_ERROR,
	    "integer out of range: 99999999999999999999");
	/* The extremes themselves fit. */
	CHECK_RC(gpmdb_exec(db,
			    "INSERT INTO t VALUES (3, 'z', "
			    "-9223372036854775808, NULL), (4, 'w', "
			    "'9223372036854775807', NULL)",
			    NULL, NULL, NULL),
		 GPMDB_OK);
	CHECK(strcmp(su_scalar(db, "SELECT c FROM t WHERE a = 4"),
		     "9223372036854775807") == 0);
	CHECK(strcmp(su_scalar(db, "SELECT c FROM t WHERE a = 3"),
		     "-9223372036854775808") == 0);
	gpmdb_close(db);
}

static void test_functions(void)
{
	gpmdb *db = open_db();

	bad(db, "UPDATE t SET c = nosuch(c)", GPMDB_ERROR,
	    "no such function: nosuch");
	bad(db, "INSERT INTO t SELECT a + 10, b, frobnicate(c), d FROM t",
	    GPMDB_ERROR, "no such function: frobnicate");
	bad(db, "UPDATE t SET c = abs(c, 1)", GPMDB_ERROR,
	    "wrong number of arguments to function abs()");
	bad(db, "UPDATE t SET b = substr(b)", GPMDB_ERROR,
	    "wrong number of arguments to function substr()");
	bad(db, "DELETE FROM t WHERE a IN (SELECT count(a, b) FROM t)",
	    GPMDB_ERROR, "wrong number of arguments to function count()");
	bad(db, "UPDATE t SET c = round()", GPMDB_ERROR,
	    "wrong number of arguments to function round()");
	/* collations other than BINARY: refused, never compared binary
	 * (SQLite's RTRIM ignores trailing spaces) */
	bad(db, "DELETE FROM t WHERE b = 'z ' COLLATE RTRIM", GPMDB_UNSUPPORTED,
	    "COLLATE RTRIM is not supported yet");
	bad(db, "UPDATE t SET c = 1 WHERE b COLLATE nocase = 'Z'",
	    GPMDB_UNSUPPORTED, "COLLATE nocase is not supported yet");
	char *r = NULL;
	CHECK_RC(
	    gpmdb_exec(db, "SELECT 'a ' = 'a' COLLATE binary", NULL, NULL, &r),
	    GPMDB_OK);
	gpmdb_free(r);
	gpmdb_close(db);
}

static void test_type_errors(void)
{
	gpmdb *db = open_db();

	bad(db, "INSERT INTO t VALUES (3, 'z', 'abc', NULL)", GPMDB_MISMATCH,
	    "datatype mismatch: cannot store TEXT 'abc' in a INTEGER column");
	bad(db, "UPDATE t SET c = 'abc' WHERE a = 2", GPMDB_MISMATCH,
	    "cannot store TEXT 'abc' in a INTEGER column");
	bad(db, "UPDATE t SET c = 2.5", GPMDB_MISMATCH,
	    "cannot store REAL '2.5' in a INTEGER column");
	bad(db, "UPDATE t SET d = 'notadate' WHERE a = 2", GPMDB_ERROR,
	    "invalid date: 'notadate'");
	bad(db, "UPDATE t SET d = d + 'x'", GPMDB_ERROR,
	    "cannot apply + to DATE and TEXT");
	bad(db, "UPDATE t SET c = d * 2", GPMDB_ERROR,
	    "cannot apply * to DATE and INTEGER");
	bad(db, "DELETE FROM t LIMIT 'abc'", GPMDB_ERROR, "near \"LIMIT\"");
	bad(db, "INSERT INTO t SELECT * FROM t LIMIT 'abc'", GPMDB_MISMATCH,
	    "datatype mismatch: LIMIT and OFFSET take integers");
	bad(db, "INSERT INTO t VALUES (3, 'z', 3)", GPMDB_ERROR,
	    "table t has 4 columns but 3 values were supplied");
	bad(db, "INSERT INTO t(a, nosuchcol) VALUES (3, 'x')", GPMDB_ERROR,
	    "table t has no column named nosuchcol");
	gpmdb_close(db);
}

static void test_constraints(void)
{
	gpmdb *db = open_db();

	/* NULL into NOT NULL, from each kind of writing statement; the bad
	 * row comes last so that the good ones before it would show. */
	bad(db, "INSERT INTO t VALUES (6, 'r', 6, NULL), (7, NULL, 7, NULL)",
	    GPMDB_CONSTRAINT, "NOT NULL constraint failed: t.b");
	bad(db, "INSERT INTO t(a, c) VALUES (8, 8)", GPMDB_CONSTRAINT,
	    "NOT NULL constraint failed: t.b");
	bad(db, "INSERT INTO t VALUES (NULL, 'n', 11, NULL)", GPMDB_CONSTRAINT,
	    "NOT NULL constraint failed: t.a");
	bad(db, "UPDATE t SET b = NULL WHERE a = 2", GPMDB_CONSTRAINT,
	    "NOT NULL constraint failed: t.b");
	bad(db, "INSERT INTO t SELECT a + 10, NULL, c + 10, d FROM t",
	    GPMDB_CONSTRAINT, "NOT NULL constraint failed: t.b");
	/* Duplicate keys: within the statement, against the table, and
	 * made by an UPDATE. */
	bad(db, "INSERT INTO t VALUES (9, 's', 9, NULL), (9, 't', 10, NULL)",
	    GPMDB_CONSTRAINT, "UNIQUE constraint failed: t.a");
	bad(db, "INSERT INTO t VALUES (10, 's', 1, NULL)", GPMDB_CONSTRAINT,
	    "UNIQUE constraint failed: t.c");
	bad(db, "UPDATE t SET c = 5", GPMDB_CONSTRAINT,
	    "UNIQUE constraint failed: t.c");
	bad(db, "UPDATE t SET a = 1", GPMDB_CONSTRAINT,
	    "UNIQUE constraint failed: t.a");
	bad(db, "INSERT INTO t SELECT * FROM t", GPMDB_CONSTRAINT,
	    "UNIQUE constraint failed: t.a");

	/* Inside a transaction a failing statement undoes only itself. */
	CHECK_RC(gpmdb_exec(db,
			    "BEGIN; INSERT INTO t VALUES (3, 'z', 3, "
			    "NULL)",
			    NULL, NULL, NULL),
		 GPMDB_OK);
	bad(db, "INSERT INTO t VALUES (4, 'w', 4, NULL), (5, 'v', 3, NULL)",
	    GPMDB_CONSTRAINT, "UNIQUE constraint failed: t.c");
	bad(db, "UPDATE t SET b = NULL", GPMDB_CONSTRAINT,
	    "NOT NULL constraint failed: t.b");
	bad(db, "INSERT INTO t VALUES (4, 'w', 4, ((((((((((1", GPMDB_ERROR,
	    "incomplete input");
	CHECK_RC(gpmdb_exec(db, "COMMIT", NULL, NULL, NULL), GPMDB_OK);
	CHECK(strcmp(su_scalar(db, "SELECT count(*) FROM t"), "3") == 0);
	gpmdb_close(db);
}

int main(void)
{
	if (su_tmp_make(dir, sizeof(dir), path, sizeof(path), "test_badsql",
			"badsql.gpmdb"))
		return 1;
	TEST_RUN(test_unterminated);
	TEST_RUN(test_deep_nesting);
	TEST_RUN(test_big_statement);
	TEST_RUN(test_invalid_utf8);
	TEST_RUN(test_huge_integers);
	TEST_RUN(test_functions);
	TEST_RUN(test_type_errors);
	TEST_RUN(test_constraints);
	su_tmp_remove(dir, path);
	TEST_MAIN_END();
}
