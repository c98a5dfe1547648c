/*
 * test_explain_analyze.c - EXPLAIN ANALYZE (make test, CPU backend): the
 * statement runs and its rows are dropped, each operator line carries the
 * run's rows and times (rows exact, times only in shape), a correlated
 * subquery's plan shows its calls, errors stay errors, statements other
 * than SELECT and INSERT/UPDATE/DELETE (test_write_phases.c) are
 * refused, a prepared statement re-runs with fresh figures, and a table
 * named analyze still works.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

#include "gpu/xq.h"

static gpmdb *db;
static char path[256];

static void open_db(void)
{
	snprintf(path, sizeof(path), "/dev/shm/gpmdb_test_xa_%d.pool",
		 (int)getpid());
	unlink(path);
	CHECK_RC(gpmdb_open_v2(path, &db,
			       GPMDB_OPEN_READWRITE | GPMDB_OPEN_CREATE, NULL),
		 GPMDB_OK);
	CHECK(!xq_exec(db, "PRAGMA backend = cpu"));
	CHECK(!xq_exec(db, "CREATE TABLE e(name TEXT, sal INTEGER, dept "
			   "INTEGER)"));
	CHECK(!xq_exec(db, "INSERT INTO e VALUES ('a', 50, 1), ('b', 150, 1), "
			   "('c', 250, 2), ('d', 300, NULL), ('f', 80, 2)"));
	CHECK(!xq_exec(db, "CREATE TABLE d(id INTEGER, dname TEXT)"));
	CHECK(
	    !xq_exec(db, "INSERT INTO d VALUES (1, 'x'), (2, 'y'), (3, 'z')"));
}

/* The line of text that starts (after its indent) with op, or NULL. */
static const char *find_line(const char *text, const char *op, char *line,
			     size_t len)
{
	for (const char *p = text; p && *p;) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		const char *q = p;
		while (*q == ' ')
			q++;
		if (!strncmp(q, op, strlen(op))) {
			snprintf(line, len, "%.*s", (int)n, p);
			return line;
		}
		p = nl ? nl + 1 : NULL;
	}
	return NULL;
}

static bool ends_with(const char *line, const char *end)
{
	size_t n = line ? strlen(line) : 0, k = strlen(end);

	return line && n >= k && !strcmp(line + n - k, end);
}

/* The annotation of line: "[calls=C ]rows=R time=T ms self=S ms]", with
 * T and S numbers and S <= T (both rounded alike).  Returns the rows, or
 * -1 when the shape is wrong; *calls is 1 when not shown. */
static long long figures(const char *line, long long *calls)
{
	const char *b = line ? strrchr(line, '[') : NULL;
	long long c = 1, rows;
	double t, self;
	int k = 0;

	if (!b)
		return -1;
	if (!strncmp(b, "[calls=", 7)) {
		if (sscanf(b, "[calls=%lld %n", &c, &k) != 1 || c < 2)
			return -1;
		b += k - 1;
	}
	k = 0;
	if (sscanf(b + 1, "rows=%lld time=%lf ms self=%lf ms]%n", &rows, &t,
		   &self, &k) != 3 ||
	    k == 0 || b[1 + k] != 0 || t < 0 || self < 0 || self > t + 0.0015)
		return -1;
	/* three decimals: the shape "12.345 ms" */
	const char *tm = strstr(b, "time=");
	const char *dot = tm ? strchr(tm, '.') : NULL;
	if (!dot || strncmp(dot + 4, " ms", 3))
		return -1;
	if (calls)
		*calls = c;
	return rows;
}

static void t_operators(void)
{
	char l[1024];
	long long c;
	char *r = xq(db, "EXPLAIN ANALYZE SELECT dname, count(*), sum(sal) "
			 "FROM e JOIN d ON e.dept = d.id WHERE sal > 60 "
			 "GROUP BY dname ORDER BY 2 DESC, 1 LIMIT 1");

	/* one column, the plan; the query's own row is not among them */
	CHECKF(!strstr(r, "|") && !strstr(r, "y|2"), "%s", r);
	/* every line is an operator with figures */
	int lines = 0;
	for (const char *p = r; *p; p = strchr(p, '\n') + 1) {
		const char *nl = strchr(p, '\n');
		char one[1024];
		snprintf(one, sizeof(one), "%.*s", (int)(nl - p), p);
		CHECKF(figures(one, &c) >= 0 && c == 1, "%s", one);
		lines++;
	}
	CHECKF(lines == 8, "%s", r);
	/* rows: 5 e rows, 3 d rows; sal > 60 keeps 4 (d's NULL dept
	 * included), 3 of them join, 2 groups, the LIMIT keeps 1 (the
	 * sort under it keeps only those) */
	CHECKF(figures(find_line(r, "LIMIT 1", l, sizeof(l)), NULL) == 1, "%s",
	       r);
	CHECKF(figures(find_line(r, "SORT", l, sizeof(l)), NULL) == 1, "%s", r);
	CHECKF(figures(find_line(r, "PROJECT", l, sizeof(l)), NULL) == 2, "%s",
	       r);
	CHECKF(figures(find_line(r, "HASH AGGREGATE", l, sizeof(l)), NULL) == 2,
	       "%s", r);
	CHECKF(figures(find_line(r, "HASH INNER JOIN", l, sizeof(l)), NULL) ==
		   3,
	       "%s", r);
	CHECKF(figures(find_line(r, "FILTER", l, sizeof(l)), NULL) == 4, "%s",
	       r);
	CHECKF(figures(find_line(r, "SCAN e", l, sizeof(l)), NULL) == 5, "%s",
	       r);
	CHECKF(figures(find_line(r, "SCAN d", l, sizeof(l)), NULL) == 3, "%s",
	       r);
	/* the root's time is the whole run's: no child took longer */
	double root = 0, kid = 0;
	CHECK(sscanf(strstr(r, "time="), "time=%lf", &root) == 1);
	CHECK(sscanf(strstr(strchr(r, '\n'), "time="), "time=%lf", &kid) == 1);
	CHECKF(kid <= root, "%s", r);
	free(r);
	/* under LIMIT 2 OFFSET 2 the sort gives only the LIMIT's rows: the
	 * OFFSET's are never gathered (exec_rows) */
	r = xq(db, "EXPLAIN ANALYZE SELECT name FROM e ORDER BY sal DESC "
		   "LIMIT 2 OFFSET 2");
	CHECKF(figures(find_line(r, "LIMIT 2", l, sizeof(l)), NULL) == 2, "%s",
	       r);
	CHECKF(figures(find_line(r, "SORT", l, sizeof(l)), NULL) == 2, "%s", r);
	CHECKF(figures(find_line(r, "SCAN e", l, sizeof(l)), NULL) == 5, "%s",
	       r);
	free(r);
	r = xq(db, "EXPLAIN ANALYZE SELECT name FROM e ORDER BY sal DESC "
		   "LIMIT 2 OFFSET 4");
	CHECKF(figures(find_line(r, "SORT", l, sizeof(l)), NULL) == 1, "%s", r);
	free(r);
	XQ_WANT(db, "SELECT name FROM e ORDER BY sal DESC LIMIT 2 OFFSET 1",
		"c\nb\n");
	XQ_WANT(db, "SELECT name FROM e ORDER BY sal DESC LIMIT -1 OFFSET 3",
		"f\na\n");
	XQ_WANT(db, "SELECT name FROM e ORDER BY sal DESC LIMIT 3 OFFSET 9",
		"");
	/* plain EXPLAIN is unchanged: no figures, nothing run */
	XQ_WANT(db, "EXPLAIN SELECT name FROM e WHERE sal > 100",
		"PROJECT name          cpu  pipeline 1\n"
		"  FILTER (sal > 100)  cpu  pipeline 1\n"
		"    SCAN e            cpu  pipeline 1 source\n");
}

static void t_subquery(void)
{
	char l[1024];
	long long c = 0;
	char *r = xq(db, "EXPLAIN ANALYZE SELECT name, (SELECT dname FROM d "
			 "WHERE d.id = e.dept) FROM e");

	/* the subquery's plan under the PROJECT evaluating it, run once per
	 * row of e: 5 calls, 4 rows found (dept NULL finds none); the scan
	 * of d is kept across the calls */
	CHECKF(strstr(r, "\n  SUBQUERY (correlated: run per row)\n"), "%s", r);
	CHECKF(figures(find_line(r, "FILTER (d.id = e.dept)", l, sizeof(l)),
		       &c) == 4 &&
		   c == 5,
	       "%s", r);
	CHECKF(figures(find_line(r, "SCAN d", l, sizeof(l)), &c) == 3 && c == 1,
	       "%s", r);
	CHECKF(figures(find_line(r, "SCAN e", l, sizeof(l)), &c) == 5, "%s", r);
	free(r);
	/* no row asked: the subquery's operators never ran, and say so */
	r = xq(db, "EXPLAIN ANALYZE SELECT name, (SELECT dname FROM d WHERE "
		   "d.id = e.dept) FROM e WHERE sal > 1000");
	CHECKF(figures(find_line(r, "PROJECT name", l, sizeof(l)), &c) == 0,
	       "%s", r);
	CHECKF(strstr(r, "\n    PROJECT dname ") &&
		   strstr(r, "\n      FILTER (d.id = e.dept) ") &&
		   strstr(r, "\n        SCAN d "),
	       "%s", r);
	/* a correlated subquery's operators run no pipeline */
	CHECKF(ends_with(find_line(r, "PROJECT dname", l, sizeof(l)),
			 "  cpu [not run]") &&
		   ends_with(find_line(r, "FILTER (d.id", l, sizeof(l)),
			     "  cpu [not run]") &&
		   ends_with(find_line(r, "SCAN d", l, sizeof(l)),
			     "  cpu [not run]"),
	       "%s", r);
	free(r);
	/* uncorrelated: run once */
	r = xq(db, "EXPLAIN ANALYZE SELECT name FROM e WHERE sal > (SELECT "
		   "avg(sal) FROM e)");
	CHECKF(strstr(r, "\n    SUBQUERY\n"), "%s", r);
	CHECKF(figures(find_line(r, "FILTER", l, sizeof(l)), &c) == 2 && c == 1,
	       "%s", r);
	free(r);
}

static void t_errors(void)
{
	char *r;

	XQ_WANT(db, "EXPLAIN ANALYZE SELECT nosuch FROM e",
		"ERROR: no such column: nosuch");
	/* an error of the run is the statement's error */
	XQ_WANT(db, "EXPLAIN ANALYZE SELECT abs(-9223372036854775807 - 1)",
		"ERROR: integer overflow");
	r = xq(db, "EXPLAIN ANALYZE SELECT CAST(name AS INTEGER) FROM e "
		   "LIMIT 'x'");
	CHECKF(!strncmp(r, "ERROR: datatype mismatch", 24), "%s", r);
	free(r);
	/* statements without rows to measure are refused, and run not */
	XQ_WANT(db, "EXPLAIN ANALYZE CREATE TABLE d2(a INTEGER)",
		"ERROR: EXPLAIN ANALYZE supports SELECT, INSERT, UPDATE and "
		"DELETE, not CREATE TABLE");
	XQ_WANT(db, "EXPLAIN ANALYZE DROP TABLE d",
		"ERROR: EXPLAIN ANALYZE supports SELECT, INSERT, UPDATE and "
		"DELETE, not DROP TABLE");
	XQ_WANT(db, "SELECT count(*) FROM d", "3\n");
	XQ_WANT(db, "SELECT count(*) FROM sqlite_schema WHERE name = 'd2'",
		"0\n");
}

/* A prepared EXPLAIN ANALYZE re-run (a new parameter): the figures are
 * the new run's, not added to the last. */
static void t_prepared(void)
{
	gpmdb_stmt *st = NULL;
	char l[1024];

	CHECK_RC(gpmdb_prepare(
		     db, "EXPLAIN ANALYZE SELECT name FROM e WHERE sal > ?", -1,
		     &st, NULL),
		 GPMDB_OK);
	for (int run = 0; run < 3; run++) {
		int want = run == 1 ? 4 : 3; /* sal > 100, > 60, > 100 */
		char text[4096] = "";
		size_t n = 0;
		CHECK_RC(gpmdb_bind_int64(st, 1, run == 1 ? 60 : 100),
			 GPMDB_OK);
		while (gpmdb_step(st) == GPMDB_ROW)
			n += (size_t)snprintf(text + n, sizeof(text) - n,
					      "%s\n", gpmdb_column_text(st, 0));
		CHECKF(figures(find_line(text, "FILTER", l, sizeof(l)), NULL) ==
			   want,
		       "run %d: %s", run, text);
		CHECKF(figures(find_line(text, "SCAN e", l, sizeof(l)), NULL) ==
			   5,
		       "run %d: %s", run, text);
		CHECK_RC(gpmdb_reset(st), GPMDB_OK);
	}
	gpmdb_finalize(st);
}

/* ANALYZE stays a name, as in SQLite */
static void t_named_analyze(void)
{
	char l[1024];
	char *r;

	CHECK(!xq_exec(db, "CREATE TABLE analyze(analyze INTEGER)"));
	CHECK(!xq_exec(db, "INSERT INTO analyze VALUES (1), (2), (3)"));
	XQ_WANT(db,
		"SELECT analyze.analyze AS analyze FROM analyze WHERE "
		"analyze > 1",
		"2\n3\n");
	r = xq(db, "EXPLAIN ANALYZE SELECT analyze FROM analyze WHERE analyze "
		   "> 1");
	CHECKF(figures(find_line(r, "FILTER (analyze > 1)", l, sizeof(l)),
		       NULL) == 2,
	       "%s", r);
	free(r);
	XQ_WANT(db, "EXPLAIN SELECT analyze FROM analyze",
		"PROJECT analyze  cpu  pipeline 1\n"
		"  SCAN analyze   cpu  pipeline 1 source\n");
}

int main(void)
{
	open_db();
	TEST_RUN(t_operators);
	TEST_RUN(t_subquery);
	TEST_RUN(t_errors);
	TEST_RUN(t_prepared);
	TEST_RUN(t_named_analyze);
	gpmdb_close(db);
	unlink(path);
	TEST_MAIN_END();
}
