/*
 * test_parse.c - the SQL front end: lexer, grammar, AST and ast_to_sql.
 *
 * Statements are parsed and rendered back to canonical SQL (operators
 * fully parenthesized, so precedence mistakes show), bad input must give
 * its exact message, and two corpora are parsed: the TPC-H queries and
 * the sqllogictest files (a measurement; see test_slt_corpus).
 */

#include "harness.h"

#include "../../sql/ast.h"
#include "../../sql/parser.h"

#include <dirent.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

/* Parses sql, renders it and compares with want. */
static void check_sql_at(const char *sql, const char *want, int line)
{
	parse_result r;
	int rc = parse_sql(sql, strlen(sql), &r);

	if (rc != GPMDB_OK) {
		fprintf(stderr, "line %d: parse of [%s] failed: %s\n", line,
			sql, r.errmsg);
		th_case_failed = 1;
	} else if (!r.stmt) {
		fprintf(stderr, "line %d: [%s] gave no statement\n", line, sql);
		th_case_failed = 1;
	} else {
		char *got = ast_to_sql(r.stmt);
		if (!got || strcmp(got, want) != 0) {
			fprintf(stderr,
				"line %d: [%s]\n  want: %s\n  got:  %s\n", line,
				sql, want, got ? got : "(null)");
			th_case_failed = 1;
		} else {
			/* The canonical text must itself parse to the same
			 * text: the renderer writes valid SQL. */
			parse_result r2;
			if (parse_sql(got, strlen(got), &r2) != GPMDB_OK) {
				fprintf(stderr,
					"line %d: re-parse of [%s] failed: "
					"%s\n",
					line, got, r2.errmsg);
				th_case_failed = 1;
			} else {
				char *again = ast_to_sql(r2.stmt);
				if (!again || strcmp(again, got) != 0) {
					fprintf(stderr,
						"line %d: not a fixed point: "
						"[%s] -> [%s]\n",
						line, got,
						again ? again : "(null)");
					th_case_failed = 1;
				}
				free(again);
			}
			parse_result_free(&r2);
		}
		free(got);
	}
	parse_result_free(&r);
}
#define check_sql(sql, want) check_sql_at((sql), (want), __LINE__)
/* Statements whose canonical form is themselves. */
#define check_same(sql) check_sql_at((sql), (sql), __LINE__)

static void check_err_at(const char *sql, int want_rc, const char *want_msg,
			 int line)
{
	parse_result r;
	int rc = parse_sql(sql, strlen(sql), &r);

	if (rc != want_rc || strcmp(r.errmsg, want_msg) != 0) {
		fprintf(stderr,
			"line %d: [%.200s]\n  want: %d %s\n  got:  %d %s\n",
			line, sql, want_rc, want_msg, rc, r.errmsg);
		th_case_failed = 1;
	}
	if (rc != GPMDB_OK && r.stmt) {
		fprintf(stderr, "line %d: an error with a statement\n", line);
		th_case_failed = 1;
	}
	parse_result_free(&r);
}
#define check_err(sql, msg) check_err_at((sql), GPMDB_ERROR, (msg), __LINE__)
#define check_unsup(sql, msg)                                                  \
	check_err_at((sql), GPMDB_UNSUPPORTED, (msg), __LINE__)

/* Parses one statement for tests that look at the tree. */
static ast_stmt *parse1(parse_result *r, const char *sql)
{
	int rc = parse_sql(sql, strlen(sql), r);

	CHECKF(rc == GPMDB_OK, "%s: %s", sql, r->errmsg);
	return rc == GPMDB_OK ? r->stmt : NULL;
}

/* ---- SELECT ---- */

static void test_select_basic(void)
{
	check_same("SELECT 1");
	check_sql("select 1", "SELECT 1");
	check_sql("SELECT ALL a FROM t", "SELECT a FROM t");
	check_same("SELECT DISTINCT a, b FROM t");
	check_same("SELECT * FROM t");
	check_same("SELECT t.*, u.* FROM t, u");
	check_sql("SELECT *, a FROM t", "SELECT *, a FROM t");
	check_sql("SELECT a AS x, b y, c AS \"z z\" FROM t",
		  "SELECT a AS x, b AS y, c AS \"z z\" FROM t");
	check_sql("SELECT a AS 'lit' FROM t", "SELECT a AS lit FROM t");
	check_sql("SELECT a FROM t AS x", "SELECT a FROM t AS x");
	check_sql("SELECT a FROM t x", "SELECT a FROM t AS x");
	check_sql("SELECT x.a FROM t x WHERE x.b = 1",
		  "SELECT x.a FROM t AS x WHERE (x.b = 1)");
	check_sql("SELECT a FROM t WHERE a > 1 GROUP BY a HAVING count(*) > 2",
		  "SELECT a FROM t WHERE (a > 1) GROUP BY a HAVING "
		  "(count(*) > 2)");
	check_sql("SELECT a, b FROM t GROUP BY a, b",
		  "SELECT a, b FROM t GROUP BY a, b");
	check_sql("SELECT a FROM t ORDER BY a", "SELECT a FROM t ORDER BY a");
	check_sql("SELECT a FROM t ORDER BY a ASC, b DESC",
		  "SELECT a FROM t ORDER BY a, b DESC");
	check_sql("SELECT a FROM t ORDER BY 1 DESC NULLS FIRST, 2 NULLS LAST",
		  "SELECT a FROM t ORDER BY 1 DESC NULLS FIRST, 2 NULLS LAST");
	check_sql("SELECT a FROM t ORDER BY a + 1",
		  "SELECT a FROM t ORDER BY (a + 1)");
	check_same("SELECT a FROM t LIMIT 10");
	check_same("SELECT a FROM t LIMIT 10 OFFSET 5");
	check_sql("SELECT a FROM t LIMIT 5, 10",
		  "SELECT a FROM t LIMIT 10 OFFSET 5");
	check_sql("SELECT a FROM t LIMIT ? OFFSET ?",
		  "SELECT a FROM t LIMIT ?1 OFFSET ?2");
	check_sql("SELECT a FROM t WHERE a = 1 ORDER BY a DESC LIMIT 1",
		  "SELECT a FROM t WHERE (a = 1) ORDER BY a DESC LIMIT 1");
	check_sql("SELECT count(*), count(DISTINCT a), sum(ALL b), f() FROM t",
		  "SELECT count(*), count(DISTINCT a), sum(b), f() FROM t");
	check_sql("SELECT COUNT(*) FROM t", "SELECT COUNT(*) FROM t");
	check_sql("SELECT coalesce(a, b, 0), nullif(a, 1), abs(-a) FROM t",
		  "SELECT coalesce(a, b, 0), nullif(a, 1), abs((-a)) FROM t");
	check_sql("SeLeCt A fRoM T wHeRe A iS nUlL",
		  "SELECT A FROM T WHERE (A IS NULL)");
	check_sql("SELECT 1 FROM t WHERE a = 1 -- comment\n AND b = 2",
		  "SELECT 1 FROM t WHERE ((a = 1) AND (b = 2))");
	check_sql("SELECT /* c1 */ 1 /* c2 */ + /**/ 2", "SELECT (1 + 2)");
	check_sql("SELECT\t1\r\n,\f2", "SELECT 1, 2");
	check_sql("SELECT 1;", "SELECT 1");
	check_sql("  SELECT 1  ;  ", "SELECT 1");
}

static void test_select_from(void)
{
	check_same("SELECT * FROM a, b, c");
	check_same("SELECT * FROM a JOIN b ON (a.x = b.x)");
	check_sql("SELECT * FROM a INNER JOIN b ON a.x = b.x",
		  "SELECT * FROM a JOIN b ON (a.x = b.x)");
	check_sql("SELECT * FROM a LEFT JOIN b ON a.x = b.x",
		  "SELECT * FROM a LEFT JOIN b ON (a.x = b.x)");
	check_sql("SELECT * FROM a LEFT OUTER JOIN b ON a.x = b.x",
		  "SELECT * FROM a LEFT JOIN b ON (a.x = b.x)");
	check_same("SELECT * FROM a CROSS JOIN b");
	check_same("SELECT * FROM a JOIN b USING (x, y)");
	check_same("SELECT * FROM a LEFT JOIN b USING (x)");
	check_same("SELECT * FROM a NATURAL JOIN b");
	check_sql("SELECT * FROM a NATURAL LEFT OUTER JOIN b",
		  "SELECT * FROM a NATURAL LEFT JOIN b");
	check_sql("SELECT * FROM a NATURAL INNER JOIN b",
		  "SELECT * FROM a NATURAL JOIN b");
	check_sql("SELECT * FROM a AS x JOIN b AS y ON x.i = y.i "
		  "LEFT JOIN c z ON z.i = y.i, d",
		  "SELECT * FROM a AS x JOIN b AS y ON (x.i = y.i) LEFT JOIN "
		  "c AS z ON (z.i = y.i), d");
	check_sql("SELECT * FROM a, b ON a.x = b.x",
		  "SELECT * FROM a JOIN b ON (a.x = b.x)");
	check_sql("SELECT * FROM (SELECT 1 AS x) AS s",
		  "SELECT * FROM (SELECT 1 AS x) AS s");
	check_sql("SELECT * FROM (SELECT 1 AS x) s",
		  "SELECT * FROM (SELECT 1 AS x) AS s");
	check_sql("SELECT * FROM (SELECT 1, 2) AS s (a, b)",
		  "SELECT * FROM (SELECT 1, 2) AS s(a, b)");
	check_sql("SELECT * FROM (SELECT a FROM t)",
		  "SELECT * FROM (SELECT a FROM t)");
	check_sql(
	    "SELECT * FROM (SELECT a FROM t) JOIN (VALUES (1)) v ON 1",
	    "SELECT * FROM (SELECT a FROM t) JOIN (VALUES (1)) AS v ON 1");
	check_sql("SELECT * FROM a JOIN (b JOIN c ON b.i = c.i) ON a.i = b.i",
		  "SELECT * FROM a JOIN (b JOIN c ON (b.i = c.i)) ON "
		  "(a.i = b.i)");
	check_sql("SELECT * FROM (a JOIN b ON 1)",
		  "SELECT * FROM a JOIN b ON 1");
	check_sql("SELECT * FROM a AS x(p, q)", "SELECT * FROM a AS x(p, q)");
	check_sql("SELECT * FROM t AS cor0 CROSS JOIN t AS cor1",
		  "SELECT * FROM t AS cor0 CROSS JOIN t AS cor1");
}

static void test_select_compound(void)
{
	check_same("SELECT 1 UNION SELECT 2");
	check_same("SELECT 1 UNION ALL SELECT 2");
	check_same("SELECT 1 INTERSECT SELECT 2");
	check_same("SELECT 1 EXCEPT SELECT 2");
	check_same("SELECT a FROM t UNION SELECT b FROM u ORDER BY 1 LIMIT 3");
	check_same("SELECT 1 UNION SELECT 2 EXCEPT SELECT 3 INTERSECT "
		   "SELECT 4");
	check_same("VALUES (1, 2), (3, 4)");
	check_same("VALUES (1) UNION ALL SELECT 2");
	check_same("SELECT * FROM (VALUES (1, 'a'), (2, 'b')) AS v(n, s)");
	check_same("WITH x AS (SELECT 1) SELECT * FROM x");
	check_same("WITH x(a, b) AS (SELECT 1, 2), y AS (SELECT a FROM x) "
		   "SELECT * FROM x, y");
	check_same("WITH x AS (SELECT 1) SELECT 1 UNION SELECT 2 ORDER BY 1");
	check_same("SELECT * FROM (WITH q AS (SELECT 1) SELECT * FROM q)");

	/* Compounds are left-deep and ORDER BY/LIMIT belong to the whole. */
	parse_result r;
	ast_stmt *s = parse1(&r, "SELECT 1 UNION SELECT 2 EXCEPT SELECT 3 "
				 "ORDER BY 1 LIMIT 2");
	if (s) {
		ast_select *q = s->select;
		CHECK(q->kind == AST_SEL_COMPOUND && q->op == AST_EXCEPT);
		CHECK(q->order_by && q->order_by->n == 1 && q->limit);
		CHECK(q->left->kind == AST_SEL_COMPOUND &&
		      q->left->op == AST_UNION);
		CHECK(q->right->kind == AST_SEL_CORE && !q->right->order_by);
		CHECK(q->left->left->kind == AST_SEL_CORE);
	}
	parse_result_free(&r);
}

/* ---- expressions ---- */

static void test_expr_precedence(void)
{
	check_sql("SELECT 1 + 2 * 3", "SELECT (1 + (2 * 3))");
	check_sql("SELECT (1 + 2) * 3", "SELECT ((1 + 2) * 3)");
	check_sql("SELECT 1 - 2 - 3", "SELECT ((1 - 2) - 3)");
	check_sql("SELECT 1 - (2 - 3)", "SELECT (1 - (2 - 3))");
	check_sql("SELECT 8 / 4 / 2", "SELECT ((8 / 4) / 2)");
	check_sql("SELECT 7 % 3 * 2", "SELECT ((7 % 3) * 2)");
	check_sql("SELECT a || b || c", "SELECT ((a || b) || c)");
	check_sql("SELECT a || b * c", "SELECT ((a || b) * c)");
	check_sql("SELECT a * b || c", "SELECT (a * (b || c))");
	check_sql("SELECT a + b << 2", "SELECT ((a + b) << 2)");
	check_sql("SELECT a << 2 + b", "SELECT (a << (2 + b))");
	check_sql("SELECT a & b | c", "SELECT ((a & b) | c)");
	check_sql("SELECT a | b & c", "SELECT ((a | b) & c)");
	check_sql("SELECT a >> 1 & 3", "SELECT ((a >> 1) & 3)");
	check_sql("SELECT a < b = c", "SELECT ((a < b) = c)");
	check_sql("SELECT a = b < c", "SELECT (a = (b < c))");
	check_sql("SELECT a & b < c", "SELECT ((a & b) < c)");
	check_sql("SELECT a = b AND c = d OR e",
		  "SELECT (((a = b) AND (c = d)) OR e)");
	check_sql("SELECT a OR b AND c", "SELECT (a OR (b AND c))");
	check_sql("SELECT NOT a AND b", "SELECT ((NOT a) AND b)");
	check_sql("SELECT NOT a = b", "SELECT (NOT (a = b))");
	check_sql("SELECT NOT NOT a", "SELECT (NOT (NOT a))");
	check_sql("SELECT -a * b", "SELECT ((-a) * b)");
	check_sql("SELECT - - a", "SELECT (-(-a))");
	check_sql("SELECT +a", "SELECT (+a)");
	check_sql("SELECT ~a + 1", "SELECT ((~a) + 1)");
	check_sql("SELECT -a || b", "SELECT ((-a) || b)");
	check_sql("SELECT a == b, a != b, a <> b, a <= b, a >= b",
		  "SELECT (a = b), (a != b), (a != b), (a <= b), (a >= b)");
	check_sql("SELECT a IS b, a IS NOT b", "SELECT (a IS b), (a IS NOT b)");
	check_sql("SELECT a IS NULL, a IS NOT NULL, a ISNULL, a NOTNULL, "
		  "a NOT NULL",
		  "SELECT (a IS NULL), (a IS NOT NULL), (a IS NULL), "
		  "(a IS NOT NULL), (a IS NOT NULL)");
	check_sql("SELECT a = b IS c", "SELECT ((a = b) IS c)");
	check_sql("SELECT a + 1 IS NULL", "SELECT ((a + 1) IS NULL)");
	check_sql("SELECT NOT a IS NULL", "SELECT (NOT (a IS NULL))");
	check_sql("SELECT a < b IS NOT NULL", "SELECT ((a < b) IS NOT NULL)");
	check_sql("SELECT 1 + 2 BETWEEN 1 AND 5 AND x",
		  "SELECT (((1 + 2) BETWEEN 1 AND 5) AND x)");
	check_sql("SELECT a NOT BETWEEN b + 1 AND c * 2",
		  "SELECT (a NOT BETWEEN (b + 1) AND (c * 2))");
	check_sql("SELECT a BETWEEN 1 AND 2 OR a BETWEEN 3 AND 4",
		  "SELECT ((a BETWEEN 1 AND 2) OR (a BETWEEN 3 AND 4))");
	check_sql("SELECT NOT a BETWEEN 1 AND 2",
		  "SELECT (NOT (a BETWEEN 1 AND 2))");
	check_sql("SELECT a LIKE 'x%' AND b NOT LIKE '_y' ESCAPE '\\'",
		  "SELECT ((a LIKE 'x%') AND (b NOT LIKE '_y' ESCAPE '\\'))");
	check_sql("SELECT a GLOB 'x*', a NOT GLOB 'y'",
		  "SELECT (a GLOB 'x*'), (a NOT GLOB 'y')");
	check_sql("SELECT a || 'x' LIKE b", "SELECT ((a || 'x') LIKE b)");
	check_sql("SELECT a IN (1, 2, 3)", "SELECT (a IN (1, 2, 3))");
	check_sql("SELECT a NOT IN (1)", "SELECT (a NOT IN (1))");
	check_sql("SELECT a IN ()", "SELECT (a IN ())");
	check_sql("SELECT a IN (SELECT b FROM t)",
		  "SELECT (a IN (SELECT b FROM t))");
	check_sql("SELECT a + 1 NOT IN (SELECT b FROM t WHERE c)",
		  "SELECT ((a + 1) NOT IN (SELECT b FROM t WHERE c))");
	check_sql("SELECT a IN (1) = b", "SELECT ((a IN (1)) = b)");
	check_sql("SELECT a COLLATE nocase = b",
		  "SELECT ((a COLLATE nocase) = b)");
	check_sql("SELECT -a COLLATE x", "SELECT ((-a) COLLATE x)");
	check_sql("SELECT ((((a))))", "SELECT a");
	check_sql("SELECT (a + b) * (c - d) / e",
		  "SELECT (((a + b) * (c - d)) / e)");
	check_sql("SELECT - 9 * - + 3", "SELECT (-9 * (-(+3)))");
	check_sql("SELECT 2 - -1, -1.5, - -1", "SELECT (2 - -1), -1.5, 1");
}

static void test_expr_forms(void)
{
	check_sql("SELECT (SELECT max(a) FROM t)",
		  "SELECT (SELECT max(a) FROM t)");
	check_sql("SELECT EXISTS (SELECT 1), NOT EXISTS (SELECT 2)",
		  "SELECT EXISTS (SELECT 1), (NOT EXISTS (SELECT 2))");
	check_sql("SELECT (SELECT 1) + 1", "SELECT ((SELECT 1) + 1)");
	check_sql("SELECT CASE a WHEN 1 THEN 'one' WHEN 2 THEN 'two' END",
		  "SELECT CASE a WHEN 1 THEN 'one' WHEN 2 THEN 'two' END");
	check_sql("SELECT CASE WHEN a > 1 THEN 1 ELSE 0 END",
		  "SELECT CASE WHEN (a > 1) THEN 1 ELSE 0 END");
	check_sql("SELECT CASE WHEN a THEN CASE WHEN b THEN 1 END END",
		  "SELECT CASE WHEN a THEN CASE WHEN b THEN 1 END END");
	check_sql("SELECT CAST(a AS INTEGER), CAST(b AS varchar(10)), "
		  "CAST(c AS decimal(15, 2)), cast(d as double precision)",
		  "SELECT CAST(a AS INTEGER), CAST(b AS VARCHAR(10)), "
		  "CAST(c AS DECIMAL(15,2)), CAST(d AS DOUBLE PRECISION)");
	check_sql("SELECT CAST(-a + 1 AS REAL)",
		  "SELECT CAST(((-a) + 1) AS REAL)");
	check_sql("SELECT date '1998-12-01' - interval '90' day",
		  "SELECT (DATE '1998-12-01' - INTERVAL '90' DAY)");
	check_sql("SELECT DATE '1996-1-1' + INTERVAL '3' MONTH",
		  "SELECT (DATE '1996-01-01' + INTERVAL '3' MONTH)");
	check_sql("SELECT interval '1' year, INTERVAL 2 days",
		  "SELECT INTERVAL '1' YEAR, INTERVAL '2' DAY");
	check_sql("SELECT extract(year from o_orderdate) FROM orders",
		  "SELECT EXTRACT(YEAR FROM o_orderdate) FROM orders");
	check_sql("SELECT date, interval, extract FROM t",
		  "SELECT date, interval, \"extract\" FROM t");
	check_sql("SELECT date('now'), extract + 1",
		  "SELECT date('now'), (\"extract\" + 1)");
	check_sql("SELECT f(a, b + 1, (SELECT 1))",
		  "SELECT f(a, (b + 1), (SELECT 1))");
	check_sql("SELECT replace(a, 'x', 'y'), substr(a, 1)",
		  "SELECT \"replace\"(a, 'x', 'y'), substr(a, 1)");
	check_sql("SELECT substring(a from 1 for 2), substring(b from 3)",
		  "SELECT substring(a, 1, 2), substring(b, 3)");
	check_sql(
	    "SELECT 1 IN t, 2 NOT IN t",
	    "SELECT (1 IN (SELECT * FROM t)), (2 NOT IN (SELECT * FROM t))");
	check_sql("SELECT t.a, \"t\".\"b c\", [x].[y], `q`.`r`",
		  "SELECT t.a, t.\"b c\", x.y, q.r");
	check_sql("SELECT \"select\", \"a\"\"b\", `a``b`",
		  "SELECT \"select\", \"a\"\"b\", \"a`b\"");
	check_sql("SELECT key, first, last, asc, desc, temp FROM t",
		  "SELECT \"key\", \"first\", \"last\", \"asc\", \"desc\", "
		  "\"temp\" FROM t");
	check_sql("SELECT a FROM t WHERE a IN (SELECT a FROM t "
		  "WHERE EXISTS (SELECT 1 FROM u WHERE u.a = t.a))",
		  "SELECT a FROM t WHERE (a IN (SELECT a FROM t WHERE "
		  "EXISTS (SELECT 1 FROM u WHERE (u.a = t.a))))");
}

static void test_literals(void)
{
	check_sql("SELECT 0, 42, 9223372036854775807",
		  "SELECT 0, 42, 9223372036854775807");
	check_sql("SELECT 9223372036854775808", "SELECT 9.223372036854776e+18");
	check_sql("SELECT -9223372036854775808", "SELECT -9223372036854775808");
	check_sql("SELECT 99999999999999999999999", "SELECT 1e+23");
	check_sql("SELECT 0x10, 0XfF, 0xFFFFFFFFFFFFFFFF, 0x7fffffffffffffff",
		  "SELECT 16, 255, -1, 9223372036854775807");
	check_sql("SELECT 0x0000000000000000001", "SELECT 1");
	check_sql("SELECT 1.5, .5, 1e10, 1.5E-3, 2., 0.1",
		  "SELECT 1.5, 0.5, 10000000000.0, 0.0015, 2.0, 0.1");
	check_sql("SELECT 1e999", "SELECT 1e999");
	check_sql("SELECT 'abc', 'it''s', '', ''''",
		  "SELECT 'abc', 'it''s', '', ''''");
	check_same("SELECT NULL, TRUE, FALSE");
	check_sql("SELECT true, false, null", "SELECT TRUE, FALSE, NULL");
	check_sql("SELECT 'h\xc3\xa9llo', '\xff\xfe'",
		  "SELECT 'h\xc3\xa9llo', '\xff\xfe'");

	parse_result r;
	ast_stmt *s = parse1(&r, "SELECT 9223372036854775808, 1.0, 'a''b', "
				 "0x8000000000000000, DATE '2000-03-01'");
	if (s) {
		ast_result_list *c = s->select->cols;
		CHECK(c->v[0]->expr->kind == AST_E_REAL);
		CHECK(c->v[0]->expr->rval == 9223372036854775808.0);
		CHECK(c->v[1]->expr->kind == AST_E_REAL);
		CHECK(c->v[2]->expr->kind == AST_E_STRING &&
		      c->v[2]->expr->slen == 3 &&
		      memcmp(c->v[2]->expr->str, "a'b", 3) == 0);
		CHECK(c->v[3]->expr->kind == AST_E_INT &&
		      c->v[3]->expr->ival == INT64_MIN);
		CHECK(c->v[4]->expr->kind == AST_E_DATE &&
		      c->v[4]->expr->ival == 11017);
	}
	parse_result_free(&r);
	s = parse1(&r, "SELECT DATE '1970-01-01', DATE '1969-12-31', "
		       "DATE '1998-12-01', DATE '2000-02-29'");
	if (s) {
		ast_result_list *c = s->select->cols;
		CHECK(c->v[0]->expr->ival == 0);
		CHECK(c->v[1]->expr->ival == -1);
		CHECK(c->v[2]->expr->ival == 10561);
		CHECK(c->v[3]->expr->ival == 11016);
	}
	parse_result_free(&r);
}

static void test_params(void)
{
	parse_result r;
	ast_stmt *s = parse1(&r, "SELECT ?, ?, ?5, :a, @b, $c, :a, ?");

	if (s) {
		ast_result_list *c = s->select->cols;
		int want[] = {1, 2, 5, 6, 7, 8, 6, 9};
		for (int i = 0; i < 8; i++)
			CHECKF(c->v[i]->expr->kind == AST_E_PARAM &&
				   c->v[i]->expr->ival == want[i],
			       "param %d is %lld", i,
			       (long long)c->v[i]->expr->ival);
		CHECK(r.nparams == 9);
		CHECK(r.param_names && r.param_names->n == 9);
		CHECK(r.param_names->v[0] == NULL);
		CHECK(strcmp(r.param_names->v[5], ":a") == 0);
		CHECK(strcmp(r.param_names->v[7], "$c") == 0);
	}
	parse_result_free(&r);
	check_sql("SELECT ?, :x, ?3, @y", "SELECT ?1, :x, ?3, @y");
	check_err_at("SELECT ?0", GPMDB_RANGE,
		     "variable number must be between ?1 and ?32766", __LINE__);
	check_err_at("SELECT ?99999", GPMDB_RANGE,
		     "variable number must be between ?1 and ?32766", __LINE__);
}

/* A batch of mixed statements, many in the corpus's style, with their
 * canonical forms (checked by hand against SQLite's precedence). */
static const char *const batch[][2] = {
    {"SELECT a + b - c * d / e % f", "SELECT ((a + b) - (((c * d) / e) % f))"},
    {"SELECT a * b + c * d", "SELECT ((a * b) + (c * d))"},
    {"SELECT a - b + c", "SELECT ((a - b) + c)"},
    {"SELECT a OR b OR c AND d", "SELECT ((a OR b) OR (c AND d))"},
    {"SELECT NOT a OR NOT b", "SELECT ((NOT a) OR (NOT b))"},
    {"SELECT a AND NOT b = c", "SELECT (a AND (NOT (b = c)))"},
    {"SELECT a = b = c", "SELECT ((a = b) = c)"},
    {"SELECT a < b < c", "SELECT ((a < b) < c)"},
    {"SELECT a <= b >= c", "SELECT ((a <= b) >= c)"},
    {"SELECT a IS b IS c", "SELECT ((a IS b) IS c)"},
    {"SELECT a IS NOT NULL AND b ISNULL",
     "SELECT ((a IS NOT NULL) AND (b IS NULL))"},
    {"SELECT a BETWEEN b AND c BETWEEN d AND e",
     "SELECT ((a BETWEEN b AND c) BETWEEN d AND e)"},
    {"SELECT a NOT LIKE b OR c GLOB d",
     "SELECT ((a NOT LIKE b) OR (c GLOB d))"},
    {"SELECT a LIKE b ESCAPE c || d", "SELECT (a LIKE b ESCAPE (c || d))"},
    {"SELECT a + b IN (c, d + e)", "SELECT ((a + b) IN (c, (d + e)))"},
    {"SELECT a IN (1) IN (2)", "SELECT ((a IN (1)) IN (2))"},
    {"SELECT ~a & ~b", "SELECT ((~a) & (~b))"},
    {"SELECT -a - -b", "SELECT ((-a) - (-b))"},
    {"SELECT a || b + c || d", "SELECT ((a || b) + (c || d))"},
    {"SELECT (a OR b) AND c", "SELECT ((a OR b) AND c)"},
    {"SELECT a & b = c | d", "SELECT ((a & b) = (c | d))"},
    {"SELECT a < b AND b < c OR d", "SELECT (((a < b) AND (b < c)) OR d)"},
    {"SELECT CASE WHEN a = 1 OR b = 2 THEN a + 1 WHEN NOT c THEN -1 ELSE a * 2 "
     "END",
     "SELECT CASE WHEN ((a = 1) OR (b = 2)) THEN (a + 1) WHEN (NOT c) THEN -1 "
     "ELSE (a * 2) END"},
    {"SELECT CASE a + 1 WHEN b THEN c END",
     "SELECT CASE (a + 1) WHEN b THEN c END"},
    {"SELECT CAST(a + b AS TEXT) || 'x'",
     "SELECT (CAST((a + b) AS TEXT) || 'x')"},
    {"SELECT count(*) + 1, max(a) - min(a)",
     "SELECT (count(*) + 1), (max(a) - min(a))"},
    {"SELECT sum(a * (1 - b)) FROM t GROUP BY c HAVING sum(a) > 10 AND "
     "count(*) < 5",
     "SELECT sum((a * (1 - b))) FROM t GROUP BY c HAVING ((sum(a) > 10) AND "
     "(count(*) < 5))"},
    {"SELECT * FROM t WHERE a NOT IN (SELECT b FROM u) AND NOT EXISTS (SELECT "
     "1 FROM v WHERE v.x = t.x)",
     "SELECT * FROM t WHERE ((a NOT IN (SELECT b FROM u)) AND (NOT EXISTS "
     "(SELECT 1 FROM v WHERE (v.x = t.x))))"},
    {"SELECT * FROM t WHERE a IS NOT b", "SELECT * FROM t WHERE (a IS NOT b)"},
    {"SELECT * FROM t WHERE a BETWEEN 1 + 1 AND 2 * 3",
     "SELECT * FROM t WHERE (a BETWEEN (1 + 1) AND (2 * 3))"},
    {"SELECT col0 FROM tab0 WHERE + col1 * - col0 NOT BETWEEN NULL AND + 66",
     "SELECT col0 FROM tab0 WHERE (((+col1) * (-col0)) NOT BETWEEN NULL AND "
     "(+66))"},
    {"SELECT DISTINCT - 5 / + 35 AS col1 FROM tab2 AS cor0 WHERE NOT + col0 IN "
     "( col2 )",
     "SELECT DISTINCT (-5 / (+35)) AS col1 FROM tab2 AS cor0 WHERE (NOT "
     "((+col0) IN (col2)))"},
    {"SELECT ALL - 62 * - CAST ( NULL AS INTEGER ) + + COUNT ( * ) FROM tab1",
     "SELECT ((-62 * (-CAST(NULL AS INTEGER))) + (+COUNT(*))) FROM tab1"},
    {"SELECT + col2 AS col0, - col1 col1 FROM tab0 WHERE col0 > - 30 OR NOT "
     "col1 <= col2",
     "SELECT (+col2) AS col0, (-col1) AS col1 FROM tab0 WHERE ((col0 > -30) OR "
     "(NOT (col1 <= col2)))"},
    {"SELECT * FROM tab0 AS cor0 CROSS JOIN tab1 AS cor1 WHERE cor0.col0 = "
     "cor1.col1",
     "SELECT * FROM tab0 AS cor0 CROSS JOIN tab1 AS cor1 WHERE (cor0.col0 = "
     "cor1.col1)"},
    {"SELECT pk FROM tab0 WHERE col3 > 5 AND (col0 < 10 OR col4 IS NULL) ORDER "
     "BY 1 DESC",
     "SELECT pk FROM tab0 WHERE ((col3 > 5) AND ((col0 < 10) OR (col4 IS "
     "NULL))) ORDER BY 1 DESC"},
    {"SELECT x FROM t1 WHERE x IN (SELECT x FROM t2 UNION SELECT y FROM t3)",
     "SELECT x FROM t1 WHERE (x IN (SELECT x FROM t2 UNION SELECT y FROM t3))"},
    {"SELECT a FROM t1 UNION ALL SELECT b FROM t2 UNION ALL SELECT c FROM t3 "
     "ORDER BY 1 LIMIT 10 OFFSET 2",
     "SELECT a FROM t1 UNION ALL SELECT b FROM t2 UNION ALL SELECT c FROM t3 "
     "ORDER BY 1 LIMIT 10 OFFSET 2"},
    {"SELECT a FROM t1 EXCEPT SELECT a FROM t2 INTERSECT SELECT a FROM t3",
     "SELECT a FROM t1 EXCEPT SELECT a FROM t2 INTERSECT SELECT a FROM t3"},
    {"SELECT t1.a, t2.b FROM t1 LEFT JOIN t2 ON t1.id = t2.id AND t2.c > 0 "
     "WHERE t2.id IS NULL",
     "SELECT t1.a, t2.b FROM t1 LEFT JOIN t2 ON ((t1.id = t2.id) AND (t2.c > "
     "0)) WHERE (t2.id IS NULL)"},
    {"SELECT * FROM t1 JOIN t2 USING (id) JOIN t3 USING (id)",
     "SELECT * FROM t1 JOIN t2 USING (id) JOIN t3 USING (id)"},
    {"SELECT * FROM t1 NATURAL CROSS JOIN t2",
     "SELECT * FROM t1 NATURAL CROSS JOIN t2"},
    {"SELECT (SELECT count(*) FROM t2 WHERE t2.a = t1.a) AS n FROM t1",
     "SELECT (SELECT count(*) FROM t2 WHERE (t2.a = t1.a)) AS n FROM t1"},
    {"SELECT a FROM t WHERE EXISTS (SELECT * FROM u WHERE u.a = t.a LIMIT 1)",
     "SELECT a FROM t WHERE EXISTS (SELECT * FROM u WHERE (u.a = t.a) LIMIT "
     "1)"},
    {"SELECT a FROM (SELECT a, b FROM t WHERE b > 0) AS s WHERE s.a < 10",
     "SELECT a FROM (SELECT a, b FROM t WHERE (b > 0)) AS s WHERE (s.a < 10)"},
    {"SELECT -0.0, 1.0e-10, 123456789012345678, 0.30000000000000004",
     "SELECT -0.0, 1e-10, 123456789012345678, 0.30000000000000004"},
    {"SELECT 'a' || 'b' || 'c'", "SELECT (('a' || 'b') || 'c')"},
    {"SELECT nullif(a, 0), ifnull(b, 1), coalesce(NULL, 2)",
     "SELECT nullif(a, 0), ifnull(b, 1), coalesce(NULL, 2)"},
    {"SELECT abs(-9223372036854775808)", "SELECT abs(-9223372036854775808)"},
    {"SELECT a FROM t ORDER BY a COLLATE nocase DESC",
     "SELECT a FROM t ORDER BY (a COLLATE nocase) DESC"},
    {"SELECT a FROM t WHERE b = :p1 OR c = @p2 OR d = $p3 OR e = ?",
     "SELECT a FROM t WHERE ((((b = :p1) OR (c = @p2)) OR (d = $p3)) OR (e = "
     "?4))"},
    {"SELECT 1 WHERE 1", "SELECT 1 WHERE 1"},
    {"SELECT * FROM t LIMIT 1 + 1", "SELECT * FROM t LIMIT (1 + 1)"},
    {"WITH a AS (SELECT 1 AS x), b AS (SELECT x + 1 AS y FROM a) SELECT * FROM "
     "a, b",
     "WITH a AS (SELECT 1 AS x), b AS (SELECT (x + 1) AS y FROM a) SELECT * "
     "FROM a, b"},
    {"INSERT INTO t1(a, b, c) SELECT a, b, c FROM t2 WHERE a > 0 ORDER BY a "
     "LIMIT 5",
     "INSERT INTO t1 (a, b, c) SELECT a, b, c FROM t2 WHERE (a > 0) ORDER BY a "
     "LIMIT 5"},
    {"INSERT INTO t VALUES (-1, +2, 3 * 4, 'x' || 'y', NULL, (SELECT 1))",
     "INSERT INTO t VALUES (-1, (+2), (3 * 4), ('x' || 'y'), NULL, (SELECT "
     "1))"},
    {"UPDATE t1 SET a = CASE WHEN b > 0 THEN 1 ELSE 0 END, c = NULL",
     "UPDATE t1 SET a = CASE WHEN (b > 0) THEN 1 ELSE 0 END, c = NULL"},
    {"DELETE FROM t1 WHERE a IN (SELECT a FROM t2) OR b BETWEEN 1 AND 2",
     "DELETE FROM t1 WHERE ((a IN (SELECT a FROM t2)) OR (b BETWEEN 1 AND 2))"},
    {"CREATE TABLE tab0(pk INTEGER PRIMARY KEY, col0 INTEGER, col1 FLOAT, col2 "
     "TEXT, col3 INTEGER, col4 FLOAT, col5 TEXT)",
     "CREATE TABLE tab0 (pk INTEGER PRIMARY KEY, col0 INTEGER, col1 FLOAT, "
     "col2 TEXT, col3 INTEGER, col4 FLOAT, col5 TEXT)"},
    {"CREATE TABLE t1( x INTEGER, y VARCHAR(8) )",
     "CREATE TABLE t1 (x INTEGER, y VARCHAR(8))"},
    {"CREATE INDEX idx_tab1_0 ON tab1 (col0 DESC, col1)",
     "CREATE INDEX idx_tab1_0 ON tab1 (col0 DESC, col1)"},
    {"CREATE VIEW view_1 AS SELECT pk, col0 FROM tab0 WHERE col0 = 49",
     "CREATE VIEW view_1 AS SELECT pk, col0 FROM tab0 WHERE (col0 = 49)"},
    {"CREATE TABLE lineitem (l_orderkey BIGINT NOT NULL, l_extendedprice "
     "DECIMAL(15,2) NOT NULL, l_shipdate DATE NOT NULL, l_comment VARCHAR(44) "
     "NOT NULL, PRIMARY KEY (l_orderkey))",
     "CREATE TABLE lineitem (l_orderkey BIGINT NOT NULL, l_extendedprice "
     "DECIMAL(15,2) NOT NULL, l_shipdate DATE NOT NULL, l_comment VARCHAR(44) "
     "NOT NULL, PRIMARY KEY (l_orderkey))"},
    {"SELECT l_returnflag, sum(l_extendedprice * (1 - l_discount) * (1 + "
     "l_tax)) FROM lineitem WHERE l_shipdate <= date '1998-12-01' - interval "
     "'90' day GROUP BY l_returnflag",
     "SELECT l_returnflag, sum(((l_extendedprice * (1 - l_discount)) * (1 + "
     "l_tax))) FROM lineitem WHERE (l_shipdate <= (DATE '1998-12-01' - "
     "INTERVAL '90' DAY)) GROUP BY l_returnflag"},
    {"SELECT extract(year from l_shipdate) AS l_year FROM lineitem",
     "SELECT EXTRACT(YEAR FROM l_shipdate) AS l_year FROM lineitem"},
    {"SELECT a FROM t WHERE a LIKE '%x%' ESCAPE '!' AND b NOT GLOB '*'",
     "SELECT a FROM t WHERE ((a LIKE '%x%' ESCAPE '!') AND (b NOT GLOB '*'))"},
    {"SELECT \"from\", [order], `group` FROM \"select\"",
     "SELECT \"from\", \"order\", \"group\" FROM \"select\""},
    {"SELECT a AS \"x\"\"y\" FROM t AS \"t t\"",
     "SELECT a AS \"x\"\"y\" FROM t AS \"t t\""},
};

static void test_batch(void)
{
	for (size_t i = 0; i < sizeof(batch) / sizeof(batch[0]); i++)
		check_sql_at(batch[i][0], batch[i][1], (int)i);
}

/* ---- DML ---- */

static void test_dml(void)
{
	check_same("INSERT INTO t VALUES (1, 'a', NULL)");
	check_same("INSERT INTO t VALUES (1), (2), (3)");
	check_same("INSERT INTO t (a, b) VALUES (1, 2)");
	check_sql("insert into t(a,b) values(1,2),(3,4)",
		  "INSERT INTO t (a, b) VALUES (1, 2), (3, 4)");
	check_same("INSERT INTO t SELECT * FROM u");
	check_same("INSERT INTO t (a) SELECT x FROM u WHERE (x > 1)");
	check_same("INSERT INTO t WITH q AS (SELECT 1) SELECT * FROM q");
	check_same("INSERT INTO t DEFAULT VALUES");
	check_same("INSERT INTO t VALUES (?1, ?2)");
	check_same("UPDATE t SET a = 1");
	check_sql("UPDATE t SET a = a + 1, b = 'x' WHERE c = 2",
		  "UPDATE t SET a = (a + 1), b = 'x' WHERE (c = 2)");
	check_sql("UPDATE t SET a = (SELECT max(b) FROM u) WHERE a IN (1,2)",
		  "UPDATE t SET a = (SELECT max(b) FROM u) WHERE "
		  "(a IN (1, 2))");
	check_same("DELETE FROM t");
	check_sql("DELETE FROM t WHERE a = 1 OR b IS NULL",
		  "DELETE FROM t WHERE ((a = 1) OR (b IS NULL))");
}

/* ---- DDL and the rest ---- */

static void test_ddl(void)
{
	check_sql("CREATE TABLE t (a INT, b INTEGER NOT NULL, c BIGINT, "
		  "d SMALLINT, e TINYINT)",
		  "CREATE TABLE t (a INT, b INTEGER NOT NULL, c BIGINT, "
		  "d SMALLINT, e TINYINT)");
	check_sql("create table if not exists t(a float, b real, "
		  "c double, d double precision, e decimal(15,2), "
		  "f numeric(10, 0), g date, h boolean)",
		  "CREATE TABLE IF NOT EXISTS t (a FLOAT, b REAL, c DOUBLE, "
		  "d DOUBLE PRECISION, e DECIMAL(15,2), f NUMERIC(10,0), "
		  "g DATE, h BOOLEAN)");
	check_sql("CREATE TABLE t (a text, b varchar(10), c char(1), "
		  "d character(25), e varchar, f)",
		  "CREATE TABLE t (a TEXT, b VARCHAR(10), c CHAR(1), "
		  "d CHARACTER(25), e VARCHAR, f)");
	check_sql("CREATE TABLE t (a INTEGER PRIMARY KEY, b TEXT UNIQUE "
		  "NOT NULL DEFAULT 'x', c INT DEFAULT -1, d REAL DEFAULT "
		  "(1 + 2), e INT NULL DEFAULT NULL, f DATE DEFAULT DATE "
		  "'2000-01-01', g BOOLEAN DEFAULT TRUE)",
		  "CREATE TABLE t (a INTEGER PRIMARY KEY, b TEXT NOT NULL "
		  "DEFAULT 'x' UNIQUE, c INT DEFAULT -1, d REAL DEFAULT "
		  "(1 + 2), e INT DEFAULT NULL, f DATE DEFAULT DATE "
		  "'2000-01-01', g BOOLEAN DEFAULT TRUE)");
	check_sql("CREATE TABLE t (a INT, b INT, c INT, PRIMARY KEY (a, b), "
		  "UNIQUE (c), CONSTRAINT u2 UNIQUE (b, c))",
		  "CREATE TABLE t (a INT, b INT, c INT, PRIMARY KEY (a, b), "
		  "UNIQUE (c), CONSTRAINT u2 UNIQUE (b, c))");
	check_sql("CREATE TABLE t (a INTEGER CONSTRAINT pk PRIMARY KEY DESC "
		  "AUTOINCREMENT, b TEXT COLLATE nocase)",
		  "CREATE TABLE t (a INTEGER PRIMARY KEY DESC AUTOINCREMENT, "
		  "b TEXT COLLATE nocase)");
	check_same("CREATE TEMP TABLE t (a INT)");
	check_same("CREATE TABLE t AS SELECT * FROM u");
	check_sql("CREATE TABLE \"my table\" ([my col] INT, key INT, "
		  "date DATE)",
		  "CREATE TABLE \"my table\" (\"my col\" INT, \"key\" INT, "
		  "date DATE)");
	check_sql("CREATE TABLE t (a INT DEFAULT (abs(-1)), b DEFAULT +2)",
		  "CREATE TABLE t (a INT DEFAULT (abs(-1)), b DEFAULT 2)");
	check_same("DROP TABLE t");
	check_same("DROP TABLE IF EXISTS t");
	check_same("CREATE VIEW v AS SELECT 1");
	check_same("CREATE VIEW IF NOT EXISTS v (a, b) AS SELECT 1, 2");
	check_same("DROP VIEW v");
	check_same("DROP VIEW IF EXISTS v");
	check_same("CREATE INDEX i ON t (a)");
	check_sql("create unique index if not exists i on t(a asc, b desc)",
		  "CREATE UNIQUE INDEX IF NOT EXISTS i ON t (a, b DESC)");
	check_same("DROP INDEX i");
	check_same("DROP INDEX IF EXISTS i");

	parse_result r;
	ast_stmt *s = parse1(&r, "CREATE TABLE t (a decimal( 15 , 2 ) NOT "
				 "NULL, b VARCHAR(40), c double precision, "
				 "d mytype, e INTEGER)");
	if (s) {
		CHECK(s->kind == AST_STMT_CREATE_TABLE && s->ncoldefs == 5);
		ast_type *t = s->coldefs[0]->type;
		CHECK(strcmp(t->text, "decimal( 15 , 2 )") == 0);
		CHECK(strcmp(t->name, "DECIMAL") == 0);
		CHECK(t->nargs == 2 && t->p == 15 && t->s == 2);
		CHECK(t->cls == AST_TYPE_DECIMAL);
		CHECK(s->coldefs[0]->not_null);
		t = s->coldefs[1]->type;
		CHECK(t->cls == AST_TYPE_TEXT && t->nargs == 1 && t->p == 40);
		CHECK(s->coldefs[2]->type->cls == AST_TYPE_REAL);
		CHECK(s->coldefs[3]->type->cls == AST_TYPE_OTHER);
		CHECK(strcmp(s->coldefs[3]->type->name, "MYTYPE") == 0);
		CHECK(s->coldefs[4]->type->cls == AST_TYPE_INT &&
		      s->coldefs[4]->type->int_bytes == 8);
	}
	parse_result_free(&r);
}

static void test_misc_stmts(void)
{
	check_same("BEGIN");
	check_sql("BEGIN TRANSACTION", "BEGIN");
	check_sql("begin immediate transaction", "BEGIN");
	check_same("COMMIT");
	check_sql("END TRANSACTION", "COMMIT");
	check_sql("END", "COMMIT");
	check_same("ROLLBACK");
	check_sql("ROLLBACK TRANSACTION", "ROLLBACK");
	check_same("PRAGMA backend");
	check_sql("PRAGMA backend = gpu", "PRAGMA backend = gpu");
	check_sql("PRAGMA backend = 'cpu'", "PRAGMA backend = 'cpu'");
	check_sql("PRAGMA cache_size = -2000", "PRAGMA cache_size = -2000");
	check_sql("PRAGMA table_info(t)", "PRAGMA table_info(t)");
	check_sql("PRAGMA main.x = 1", "PRAGMA main.x = 1");
	check_sql("PRAGMA foreign_keys = ON", "PRAGMA foreign_keys = TRUE");
	check_sql("EXPLAIN SELECT 1", "EXPLAIN SELECT 1");
	check_sql("EXPLAIN QUERY PLAN SELECT a FROM t WHERE a = 1",
		  "EXPLAIN QUERY PLAN SELECT a FROM t WHERE (a = 1)");
	check_sql("explain insert into t values (1)",
		  "EXPLAIN INSERT INTO t VALUES (1)");
	check_sql("explain analyze select 1", "EXPLAIN ANALYZE SELECT 1");
	/* ANALYZE stays a name (as in SQLite), unquoted when rendered */
	check_sql("EXPLAIN ANALYZE SELECT analyze FROM analyze analyze",
		  "EXPLAIN ANALYZE SELECT analyze FROM analyze AS analyze");
	check_sql("SELECT analyze.analyze AS analyze FROM analyze",
		  "SELECT analyze.analyze AS analyze FROM analyze");
	check_same("REINDEX");
	check_sql("reindex t1", "REINDEX t1");
	check_sql("REINDEX main.\"my idx\";", "REINDEX main.\"my idx\"");
	/* REINDEX stays a name, quoted when rendered */
	check_sql("SELECT reindex FROM reindex",
		  "SELECT \"reindex\" FROM \"reindex\"");
}

/* ---- errors ---- */

static void test_errors(void)
{
	check_err("SELECT * FORM t", "near \"FORM\": syntax error");
	check_err("SELECT a FROM t WHERE", "incomplete input");
	check_err("SELECT 1 +", "incomplete input");
	check_err("SELECT 1 +;", "near \";\": syntax error");
	check_err("SELECT (1", "incomplete input");
	check_err("SELECT 1)", "near \")\": syntax error");
	check_err("SELEC 1", "near \"SELEC\": syntax error");
	check_err("SELECT 'abc", "unrecognized token: \"'abc\"");
	check_err("SELECT 'it''s", "unrecognized token: \"'it''s\"");
	check_err("SELECT \"abc", "unrecognized token: \"\"abc\"");
	check_err("SELECT [abc", "unrecognized token: \"[abc\"");
	check_err("SELECT # FROM t", "unrecognized token: \"#\"");
	check_err("SELECT 1 ! 2", "unrecognized token: \"!\"");
	check_err("SELECT 12abc", "unrecognized token: \"12abc\"");
	check_err("SELECT 1.5e", "unrecognized token: \"1.5e\"");
	check_err("SELECT 0x", "unrecognized token: \"0x\"");
	check_err("SELECT :", "unrecognized token: \":\"");
	check_err("SELECT X'0'", "unrecognized token: \"X'0'\"");
	check_err("SELECT X'0g'", "unrecognized token: \"X'0g'\"");
	check_err("SELECT 1 /* never closed", "unterminated /* comment");
	check_err("SELECT 0x10000000000000000",
		  "hex literal too big: 0x10000000000000000");
	check_unsup("SELECT X'01ab'",
		    "blob literals are not supported: X'01ab'");
	check_unsup("SELECT x''", "blob literals are not supported: x''");
	check_unsup("INSERT OR REPLACE INTO t VALUES (1)",
		    "INSERT OR REPLACE is not supported");
	check_unsup("INSERT OR IGNORE INTO t VALUES (1)",
		    "INSERT OR IGNORE is not supported");
	check_unsup("REPLACE INTO t VALUES (1)",
		    "REPLACE is not supported (use DELETE and INSERT)");
	check_unsup("UPDATE OR REPLACE t SET a = 1",
		    "UPDATE OR REPLACE is not supported");
	check_unsup("SELECT * FROM a RIGHT JOIN b ON 1",
		    "RIGHT JOIN is not supported");
	check_unsup("SELECT * FROM a FULL OUTER JOIN b ON 1",
		    "FULL JOIN is not supported");
	check_unsup("WITH RECURSIVE x AS (SELECT 1) SELECT * FROM x",
		    "WITH RECURSIVE is not supported");
	check_err("SELECT DATE '1998-13-01'",
		  "invalid date literal: '1998-13-01'");
	check_err("SELECT DATE '1999-02-29'",
		  "invalid date literal: '1999-02-29'");
	check_err("SELECT DATE 'x'", "invalid date literal: 'x'");
	check_err("SELECT DATE '2000-01-01x'",
		  "invalid date literal: '2000-01-01x'");
	check_err("SELECT INTERVAL 'x' DAY", "invalid interval value: 'x'");
	check_err("SELECT INTERVAL '1' WEEK",
		  "unknown interval unit: WEEK (expected DAY, MONTH or YEAR)");
	check_err("SELECT EXTRACT(hour FROM d)",
		  "unknown EXTRACT field: hour (expected DAY, MONTH or YEAR)");
	check_err("CREATE TABLE t (a VARCHAR(99999999999999999999))",
		  "integer out of range: 99999999999999999999");
	check_err("CREATE TRIGGER tr AFTER INSERT ON t BEGIN SELECT 1; END",
		  "near \"TRIGGER\": syntax error");
	check_err("SELECT * FROM t WHERE a = 1 GROUP a",
		  "near \"a\": syntax error");
	check_err("CREATE TABLE t (a INT", "incomplete input");
	check_err("DROP TABLE", "incomplete input");
	check_err("INSERT INTO t VALUES (1,)", "near \")\": syntax error");
	check_err("SELECT CASE END", "near \"END\": syntax error");

	/* Errors give their place. */
	parse_result r;
	const char *sql = "SELECT 1,\n  2\n  FROM t GROUP a";
	CHECK(parse_sql(sql, strlen(sql), &r) == GPMDB_ERROR);
	CHECK(r.err_line == 3);
	CHECK(r.err_off == (size_t)(strstr(sql, " a") + 1 - sql));
	CHECK(strcmp(r.errmsg, "near \"a\": syntax error") == 0);
	parse_result_free(&r);

	/* A very long bad token is quoted in part. */
	size_t n = 5000;
	char *big = malloc(n + 16);
	strcpy(big, "SELECT '");
	memset(big + 8, 'x', n);
	big[n + 8] = 0;
	CHECK(parse_sql(big, strlen(big), &r) == GPMDB_ERROR);
	CHECK(strncmp(r.errmsg, "unrecognized token: \"'xxx", 25) == 0);
	CHECK(strstr(r.errmsg, "...\"") != NULL);
	parse_result_free(&r);
	free(big);
}

/* ---- several statements, empty input ---- */

static void test_tail(void)
{
	const char *sql = "  SELECT 1; INSERT INTO t VALUES (';'); ;; "
			  "-- c\n DELETE FROM t ; /* end */ ";
	const char *want[] = {"SELECT 1", "INSERT INTO t VALUES (';')",
			      "DELETE FROM t"};
	size_t pos = 0, len = strlen(sql);
	int n = 0;

	for (;;) {
		parse_result r;
		int rc = parse_sql(sql + pos, len - pos, &r);
		CHECK(rc == GPMDB_OK);
		if (rc != GPMDB_OK || !r.stmt) {
			CHECK(r.tail == len - pos);
			parse_result_free(&r);
			break;
		}
		char *got = ast_to_sql(r.stmt);
		CHECKF(n < 3 && strcmp(got, want[n]) == 0, "stmt %d: %s", n,
		       got);
		/* The statement's own text, without the ';'. */
		if (n == 1)
			CHECK(r.stmt->end - r.stmt->off == 26);
		free(got);
		pos += r.tail;
		n++;
		parse_result_free(&r);
	}
	CHECK(n == 3);

	parse_result r;
	const char *empty[] = {"", ";", " ; ;", "-- only a comment",
			       "/* c */ ; -- x\n"};
	for (size_t i = 0; i < sizeof(empty) / sizeof(empty[0]); i++) {
		CHECK(parse_sql(empty[i], strlen(empty[i]), &r) == GPMDB_OK);
		CHECK(r.stmt == NULL && r.tail == strlen(empty[i]));
		parse_result_free(&r);
	}
	CHECK(parse_sql(NULL, 0, &r) == GPMDB_OK && r.stmt == NULL);
	parse_result_free(&r);

	/* Length limits the text, and so does a NUL. */
	CHECK(parse_sql("SELECT 12345", 8, &r) == GPMDB_OK);
	CHECK(r.stmt && r.stmt->select->cols->v[0]->expr->ival == 1);
	CHECK(r.tail == 8);
	parse_result_free(&r);
	CHECK(parse_sql("SELECT 1\0garbage", 16, &r) == GPMDB_OK);
	CHECK(r.stmt && r.tail == 8);
	parse_result_free(&r);

	/* The tail after a statement is where it stopped. */
	sql = "SELECT 1;SELECT 2";
	CHECK(parse_sql(sql, strlen(sql), &r) == GPMDB_OK && r.tail == 9);
	parse_result_free(&r);
	/* Expression spans name result columns. */
	sql = "SELECT a  +  1, (b), count(*) FROM t";
	if (parse1(&r, sql)) {
		ast_result_list *c = r.stmt->select->cols;
		ast_expr *e = c->v[0]->expr;
		CHECK(e->end - e->off == 7 &&
		      strncmp(sql + e->off, "a  +  1", 7) == 0);
		e = c->v[1]->expr;
		CHECK(strncmp(sql + e->off, "(b)", e->end - e->off) == 0);
		e = c->v[2]->expr;
		CHECK(strncmp(sql + e->off, "count(*)", e->end - e->off) == 0);
	}
	parse_result_free(&r);
}

/* ---- limits ---- */

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

static void test_deep_nesting(void)
{
	parse_result r;
	char *s = repeat("SELECT ", "(", 10000, "1", ")", "");

	CHECK(parse_sql(s, strlen(s), &r) == GPMDB_ERROR);
	CHECKF(strcmp(r.errmsg, "parser stack overflow") == 0, "%s", r.errmsg);
	parse_result_free(&r);
	free(s);

	/* Subqueries nest through the parser stack too. */
	s = repeat("SELECT ", "(SELECT ", 10000, "1", ")", "");
	CHECK(parse_sql(s, strlen(s), &r) == GPMDB_ERROR);
	CHECKF(strcmp(r.errmsg, "parser stack overflow") == 0, "%s", r.errmsg);
	parse_result_free(&r);
	free(s);

	s = repeat("SELECT ", "NOT ", 10000, "1", "", "");
	CHECK(parse_sql(s, strlen(s), &r) == GPMDB_ERROR);
	CHECKF(strcmp(r.errmsg, "parser stack overflow") == 0, "%s", r.errmsg);
	parse_result_free(&r);
	free(s);

	/* Left-deep chains do not use the parser stack, the depth limit
	 * stops them. */
	s = repeat("SELECT 1", "+1", 5000, "", "", "");
	CHECK(parse_sql(s, strlen(s), &r) == GPMDB_ERROR);
	CHECKF(strcmp(r.errmsg,
		      "expression tree is too large (maximum depth 1000)") == 0,
	       "%s", r.errmsg);
	parse_result_free(&r);
	free(s);

	s = repeat("SELECT 1", " UNION SELECT 1", 5000, "", "", "");
	CHECK(parse_sql(s, strlen(s), &r) == GPMDB_ERROR);
	CHECKF(strcmp(r.errmsg, "too many terms in compound SELECT") == 0, "%s",
	       r.errmsg);
	parse_result_free(&r);
	free(s);

	s = repeat("SELECT * FROM t", " JOIN t", 5000, "", "", "");
	CHECK(parse_sql(s, strlen(s), &r) == GPMDB_ERROR);
	CHECKF(strcmp(r.errmsg, "too many tables in FROM clause") == 0, "%s",
	       r.errmsg);
	parse_result_free(&r);
	free(s);

	/* Nesting within the limits works, and renders. */
	s = repeat("SELECT ", "(", 200, "1", ")", "");
	CHECK(parse_sql(s, strlen(s), &r) == GPMDB_OK);
	parse_result_free(&r);
	free(s);
	s = repeat("SELECT ", "1+(", 150, "1", ")", "");
	CHECK(parse_sql(s, strlen(s), &r) == GPMDB_OK);
	if (r.stmt) {
		char *t = ast_to_sql(r.stmt);
		CHECK(t && strlen(t) > 150 * 5);
		free(t);
	}
	parse_result_free(&r);
	free(s);
	s = repeat("SELECT 1", "+1", 900, "", "", "");
	CHECK(parse_sql(s, strlen(s), &r) == GPMDB_OK);
	parse_result_free(&r);
	free(s);
}

/* Inputs libFuzzer found (tests/fuzz/fuzz_parse.c, docs/testing.md):
 * each rendering must parse back to itself. */
static void test_fuzz_regressions(void)
{
	/* A quoted type word holding a comma and a space was written bare,
	 * so the rendering read as two columns. */
	check_sql("CREATE TABLE e(id INTEGER, dept `INTEGER, pt `INTEGER, "
		  "n TEXT)",
		  "CREATE TABLE e (id INTEGER, dept \"INTEGER, PT  INTEGER\", "
		  "n TEXT)");
	check_sql("CREATE TABLE t (a \"select\")",
		  "CREATE TABLE t (a \"SELECT\")");
	check_sql("SELECT CAST(a AS \"extract\"(5))",
		  "SELECT CAST(a AS \"EXTRACT\"(5))");
	check_same("CREATE TABLE t (a DOUBLE PRECISION, b DECIMAL(10,2), c "
		   "DATE)");
	/* Minus before the one negative literal that is not folded was
	 * written "--", which starts a comment. */
	check_sql("SELECT - -9223372036854775808",
		  "SELECT (- -9223372036854775808)");
	check_sql("SELECT 1 - -9223372036854775808",
		  "SELECT (1 - -9223372036854775808)");

	/* A tree within the depth limit whose rendering (one pair of
	 * parentheses per operator) overflowed the parser's stack: 600
	 * unary pluses, and subqueries nested to the depth limit. */
	char *s = repeat("SELECT ", "+", 600, "n", "", "");
	parse_result r;
	if (parse1(&r, s)) {
		char *t = ast_to_sql(r.stmt);
		check_sql_at(s, t, __LINE__);
		free(t);
	}
	parse_result_free(&r);
	free(s);
	s = repeat("SELECT * FROM t WHERE ", "a IN (SELECT a FROM t WHERE ",
		   499, "1", ")", "");
	if (parse1(&r, s)) {
		char *t = ast_to_sql(r.stmt);
		check_sql_at(s, t, __LINE__);
		free(t);
	}
	parse_result_free(&r);
	free(s);
}

static void test_big_statement(void)
{
	/* About 1 MB: many rows and a long string. */
	size_t rows = 45000;
	char *s = repeat("INSERT INTO t VALUES ", "(12345, 'abcdefghij'),",
			 rows, "(0, '", "x", "')");
	size_t len = strlen(s);
	parse_result r;

	CHECK(len > 1000000);
	CHECK(parse_sql(s, len, &r) == GPMDB_OK);
	if (r.stmt) {
		ast_values *v = r.stmt->select->values;
		CHECK(v->n == (int)rows + 1);
		CHECK(v->v[rows]->v[1]->slen == rows);
		CHECK(r.tail == len);
	}
	parse_result_free(&r);
	free(s);

	/* A wide select list and IN list. */
	s = repeat("SELECT a FROM t WHERE a IN (0", ",1", 100000, ")", "", "");
	CHECK(parse_sql(s, strlen(s), &r) == GPMDB_OK);
	if (r.stmt)
		CHECK(r.stmt->select->where->list->n == 100001);
	parse_result_free(&r);
	free(s);
}

/* ---- TPC-H ---- */

/* Parses every statement of a script; returns how many, -1 on error. */
static int parse_script(const char *sql, size_t len, const char *what)
{
	size_t pos = 0;
	int n = 0;

	while (pos < len) {
		parse_result r;
		int rc = parse_sql(sql + pos, len - pos, &r);
		if (rc != GPMDB_OK) {
			fprintf(stderr, "%s: %s (line %d)\n", what, r.errmsg,
				r.err_line);
			parse_result_free(&r);
			return -1;
		}
		if (r.stmt) {
			char *t = ast_to_sql(r.stmt);
			parse_result r2;
			/* The rendering must parse again. */
			if (!t || parse_sql(t, strlen(t), &r2) != GPMDB_OK) {
				fprintf(stderr, "%s: re-parse failed: %s\n",
					what, t ? r2.errmsg : "no memory");
				n = -1000;
			}
			if (t)
				parse_result_free(&r2);
			free(t);
			n++;
		}
		pos += r.tail;
		parse_result_free(&r);
		if (r.tail == 0)
			break;
	}
	return n;
}

static char *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0) {
		long n = ftell(f);
		rewind(f);
		buf = malloc((size_t)n + 1);
		if (buf && fread(buf, 1, (size_t)n, f) == (size_t)n) {
			buf[n] = 0;
			*len = (size_t)n;
		} else {
			free(buf);
			buf = NULL;
		}
	}
	fclose(f);
	return buf;
}

static void test_tpch(void)
{
	const char *dir = getenv("GPMDB_TPCH_DIR");
	char path[4096];
	int total = 0;

	if (!dir)
		dir = "../shared/tpch";
	snprintf(path, sizeof(path), "%s/queries/q1.sql", dir);
	if (access(path, R_OK) != 0) {
		printf("# skipped: no TPC-H queries at %s (set "
		       "GPMDB_TPCH_DIR)\n",
		       dir);
		return;
	}
	for (int q = 1; q <= 22; q++) {
		size_t len;
		snprintf(path, sizeof(path), "%s/queries/q%d.sql", dir, q);
		char *sql = read_file(path, &len);
		CHECKF(sql != NULL, "cannot read %s", path);
		if (!sql)
			continue;
		int n = parse_script(sql, len, path);
		CHECKF(n >= 1, "%s: %d statements", path, n);
		/* Q15 creates a view, queries it and drops it. */
		if (q == 15)
			CHECKF(n == 3, "q15 has %d statements", n);
		total += n > 0 ? n : 0;
		free(sql);
	}
	snprintf(path, sizeof(path), "%s/schema.sql", dir);
	size_t len;
	char *sql = read_file(path, &len);
	if (sql) {
		int n = parse_script(sql, len, path);
		CHECKF(n == 8, "schema: %d statements", n);
		free(sql);
	}
	printf("# TPC-H: %d query statements parsed\n", total);
}

/* ---- sqllogictest corpus ---- */

typedef struct slt_stats {
	long files, records, parsed, failed, skipped;
	int shown;
} slt_stats;

static bool slt_onlyif_other(const char *line)
{
	char eng[64];

	if (sscanf(line, "onlyif %63s", eng) != 1)
		return false;
	return strcmp(eng, "sqlite") != 0 && strcmp(eng, "gpmdb") != 0;
}

static bool slt_skipif_us(const char *line)
{
	char eng[64];

	if (sscanf(line, "skipif %63s", eng) != 1)
		return false;
	return strcmp(eng, "sqlite") == 0 || strcmp(eng, "gpmdb") == 0;
}

static void slt_record(slt_stats *st, const char *file, long lineno,
		       const char *sql, size_t len)
{
	parse_result r;
	int rc = parse_sql(sql, len, &r);

	st->records++;
	if (rc == GPMDB_OK && r.stmt) {
		/* Render too, as the engine's EXPLAIN would. */
		free(ast_to_sql(r.stmt));
		st->parsed++;
	} else {
		st->failed++;
		if (st->shown < 40) {
			st->shown++;
			printf("# slt fail %s:%ld: %s: %.120s\n", file, lineno,
			       rc == GPMDB_OK ? "no statement" : r.errmsg, sql);
		}
	}
	parse_result_free(&r);
}

/* Reads one .test.gz: blank-line separated records; SQL follows a
 * "statement ok" or "query" line up to "----" or the record's end. */
static void slt_file(slt_stats *st, const char *path)
{
	gzFile f = gzopen(path, "rb");
	char line[65536];
	char *sql = NULL;
	size_t slen = 0, scap = 0;
	int state = 0; /* 0 between, 1 header seen, 2 in SQL, 3 rest */
	bool skip = false, want = false;
	long lineno = 0, start = 0;

	if (!f)
		return;
	st->files++;
	for (;;) {
		char *got = gzgets(f, line, sizeof(line));
		size_t n = got ? strlen(line) : 0;
		while (n && (line[n - 1] == '\n' || line[n - 1] == '\r'))
			line[--n] = 0;
		lineno++;
		if (!got || n == 0) {
			if (state == 2 && want && !skip)
				slt_record(st, path, start, sql, slen);
			else if (state == 2 && want)
				st->skipped++;
			state = 0;
			skip = want = false;
			slen = 0;
			if (!got)
				break;
			continue;
		}
		if (state == 0 || state == 1) {
			if (line[0] == '#')
				continue;
			if (strncmp(line, "onlyif ", 7) == 0) {
				skip |= slt_onlyif_other(line);
				state = 1;
			} else if (strncmp(line, "skipif ", 7) == 0) {
				skip |= slt_skipif_us(line);
				state = 1;
			} else if (strcmp(line, "halt") == 0) {
				if (!skip)
					break;
				state = 3;
			} else if (strncmp(line, "statement ok", 12) == 0 ||
				   strncmp(line, "query ", 6) == 0) {
				want = true;
				state = 2;
				start = lineno + 1;
			} else if (strncmp(line, "statement", 9) == 0) {
				want = false; /* statement error: skip */
				state = 2;
			} else {
				state = 3;
			}
			continue;
		}
		if (state == 2) {
			if (strcmp(line, "----") == 0) {
				if (want && !skip)
					slt_record(st, path, start, sql, slen);
				else if (want)
					st->skipped++;
				want = false;
				state = 3;
				continue;
			}
			if (slen + n + 2 > scap) {
				scap = (slen + n + 2) * 2;
				sql = realloc(sql, scap);
			}
			if (slen)
				sql[slen++] = '\n';
			memcpy(sql + slen, line, n);
			slen += n;
			sql[slen] = 0;
		}
	}
	free(sql);
	gzclose(f);
}

static void slt_walk(slt_stats *st, const char *dir, int depth)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	if (!d || depth > 16) {
		if (d)
			closedir(d);
		return;
	}
	while ((e = readdir(d)) != NULL) {
		char path[4096];
		struct stat sb;
		size_t n = strlen(e->d_name);

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (stat(path, &sb) != 0)
			continue;
		if (S_ISDIR(sb.st_mode))
			slt_walk(st, path, depth + 1);
		else if (n > 8 && strcmp(e->d_name + n - 8, ".test.gz") == 0)
			slt_file(st, path);
	}
	closedir(d);
}

static void test_slt_corpus(void)
{
	const char *dir = getenv("GPMDB_SLT_DIR");
	slt_stats st = {0};
	struct stat sb;

	if (!dir)
		dir = "../shared/sqllogictest";
	if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
		printf("# skipped: no sqllogictest corpus at %s (set "
		       "GPMDB_SLT_DIR)\n",
		       dir);
		return;
	}
	slt_walk(&st, dir, 0);
	double rate =
	    st.records ? 100.0 * (double)st.parsed / (double)st.records : 100.0;
	printf("# sqllogictest: %ld files, %ld records, %ld parsed, %ld "
	       "failed (%.3f%%), %ld skipped by onlyif/skipif\n",
	       st.files, st.records, st.parsed, st.failed, rate, st.skipped);
	CHECK(st.files > 0);
	CHECKF(rate >= 99.5, "parse rate %.3f%%", rate);
}

int main(void)
{
	TEST_RUN(test_select_basic);
	TEST_RUN(test_select_from);
	TEST_RUN(test_select_compound);
	TEST_RUN(test_expr_precedence);
	TEST_RUN(test_expr_forms);
	TEST_RUN(test_literals);
	TEST_RUN(test_params);
	TEST_RUN(test_batch);
	TEST_RUN(test_dml);
	TEST_RUN(test_ddl);
	TEST_RUN(test_misc_stmts);
	TEST_RUN(test_errors);
	TEST_RUN(test_tail);
	TEST_RUN(test_deep_nesting);
	TEST_RUN(test_big_statement);
	TEST_RUN(test_fuzz_regressions);
	TEST_RUN(test_tpch);
	TEST_RUN(test_slt_corpus);
	TEST_MAIN_END();
}
