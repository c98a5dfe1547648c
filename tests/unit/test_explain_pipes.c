/*
 * test_explain_pipes.c - EXPLAIN's backend and pipeline column and its
 * reasons for the CPU (docs/engine.md "EXPLAIN"): the layout of a plan
 * with a build, a probe, an aggregate and a sort; the pipelines EXPLAIN
 * predicts (engine/exec/pipe_explain.c, walking the plan with pipe.c's
 * own decision) against those EXPLAIN ANALYZE saw run, for plans of every
 * kind of source, stage and sink; each reason for the CPU said once.
 */
#include "harness.h"
#include "sql_util.h"

#include "gpu/xq.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* more than pipe.c's PIPE_PAR_MIN_ROWS: the pipelines over f run on
 * several threads */
#define NROWS 70000

static char path[300];
static gpmdb *db;

static void load(void)
{
	char sql[300];

	db = su_open(path);
	CHECK(!xq_exec(db, "PRAGMA backend = cpu"));
	CHECK(!xq_exec(db, "CREATE TABLE s(id BIGINT)"));
	CHECK(!xq_exec(db, "INSERT INTO s VALUES(0)"));
	for (long n = 1; n < NROWS; n *= 2) {
		snprintf(sql, sizeof(sql),
			 "INSERT INTO s SELECT id + %ld FROM s", n);
		CHECK(!xq_exec(db, sql));
	}
	CHECK(!xq_exec(db, "CREATE TABLE f(id BIGINT, k INT, v INT, g TEXT)"));
	snprintf(sql, sizeof(sql),
		 "INSERT INTO f SELECT id, (id * 31) %% 1500, id %% 100, 'g' "
		 "|| (id %% 7) FROM s WHERE id < %d",
		 NROWS);
	CHECK(!xq_exec(db, sql));
	CHECK(!xq_exec(db, "CREATE TABLE d(k INT, name TEXT, w INT)"));
	CHECK(!xq_exec(db, "INSERT INTO d SELECT (id * 3) % 1700, 'n' || id, "
			   "id % 10 FROM s WHERE id < 1200"));
	CHECK(!xq_exec(db, "CREATE TABLE u(id INTEGER PRIMARY KEY, x INT)"));
	CHECK(!xq_exec(db, "INSERT INTO u SELECT id, id % 97 FROM s WHERE id "
			   "< 1000"));
}

/* The layout: the node's text, the backend and pipeline in a column,
 * the sink and source named, the built input of a join; the executor's
 * order (the built side is pipeline 1); backend=cpu gives no reason. */
static void t_layout(void)
{
	XQ_WANT(db,
		"EXPLAIN SELECT g, count(*) FROM f, d WHERE f.k = d.k AND d.w "
		"< 5 GROUP BY g ORDER BY 1",
		"SORT BY #1                                      cpu\n"
		"  PROJECT g, count(*)                           cpu  pipeline "
		"3\n"
		"    HASH AGGREGATE GROUP BY g COMPUTE count(*)  cpu  pipeline "
		"2 sink\n"
		"      HASH INNER JOIN ON d.k = f.k              cpu  pipeline "
		"2 (build: left)\n"
		"        FILTER (d.w < 5)                        cpu  pipeline "
		"1\n"
		"          SCAN d                                cpu  pipeline "
		"1 source\n"
		"        SCAN f                                  cpu  pipeline "
		"2 source\n");
}

/* Lines longer than the column (80) do not move it. */
static void t_long_line(void)
{
	char *r = xq(db, "EXPLAIN SELECT id + 1111111111, id + 2222222222, "
			 "id + 3333333333, id + 4444444444 FROM f");

	CHECKF(!strcmp(r, "PROJECT (id + 1111111111), (id + 2222222222), (id "
			  "+ 3333333333), (id + 4444444444)  cpu  pipeline 1\n"
			  "  SCAN f  cpu  pipeline 1 source\n"),
	       "%s", r);
	free(r);
}

/* text with the EXPLAIN ANALYZE parts taken out: the figures ("[...]"
 * at a line's end), the subqueries' plans (SUBQUERY lines and those
 * indented under them); the gap before the column made two spaces (the
 * column moves with the lines shown). */
static char *plain(const char *text)
{
	char *out = malloc(strlen(text) + 2), *o = out;
	int skip = -1; /* indent of the SUBQUERY line being skipped */

	for (const char *p = text; *p;) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		int ind = (int)strspn(p, " ");
		if (skip >= 0 && ind > skip) {
			p += n + (nl != NULL);
			continue;
		}
		skip = -1;
		if (!strncmp(p + ind, "SUBQUERY", 8)) {
			skip = ind;
			p += n + (nl != NULL);
			continue;
		}
		/* drop " [...]" groups at the end */
		while (n && p[n - 1] == ']') {
			size_t b = n;
			while (b && p[b - 1] != '[')
				b--;
			if (!b)
				break;
			n = b - 1;
			while (n && p[n - 1] == ' ')
				n--;
		}
		for (size_t i = 0; i < n; i++) {
			if (i && p[i] == ' ' && p[i + 1] == ' ' &&
			    p[i - 1] != ' ' && i >= (size_t)ind) {
				size_t j = i;
				while (j < n && p[j] == ' ')
					j++;
				*o++ = ' ';
				*o++ = ' ';
				i = j - 1;
				continue;
			}
			*o++ = p[i];
		}
		*o++ = '\n';
		p += n;
		p = strchr(p, '\n') ? strchr(p, '\n') + 1 : p + strlen(p);
	}
	*o = 0;
	return out;
}

/* The highest pipeline number in text. */
static int pipelines(const char *text)
{
	int hi = 0, k;

	for (const char *p = text; (p = strstr(p, "  pipeline ")); p += 11)
		if (sscanf(p + 11, "%d", &k) == 1 && k > hi)
			hi = k;
	return hi;
}

/* EXPLAIN's pipelines are those EXPLAIN ANALYZE saw run: the same nodes
 * in the same pipelines, numbered alike, with the same roles. */
static void t_agree(void)
{
	static const struct {
		const char *sql;
		int npipes; /* pipelines in the plan (subqueries' left out) */
	} q[] = {
	    /* a probe into an aggregate sink, a pipeline over its groups */
	    {"SELECT g, count(*), sum(v) FROM f JOIN d ON f.k = d.k WHERE "
	     "f.v > 10 GROUP BY g ORDER BY 2 DESC",
	     2},
	    /* top-N sink */
	    {"SELECT id, v FROM f WHERE k < 5 ORDER BY v DESC, id LIMIT 10", 1},
	    /* SEMI with a much larger right side: the mark sink */
	    {"SELECT count(*) FROM d WHERE d.k IN (SELECT k FROM f)", 2},
	    /* NOT IN: the probe of an ANTI (NOT IN) join */
	    {"SELECT count(*) FROM f WHERE f.k NOT IN (SELECT k FROM d "
	     "WHERE k IS NOT NULL)",
	     3},
	    /* LEFT join: its left input streams, the right is built */
	    {"SELECT d.name, f.id FROM d LEFT JOIN f ON f.k = d.k AND f.id "
	     "< 100",
	     2},
	    /* a large right input streams: the left rows (a plain scan)
	     * are built */
	    {"SELECT d.name, f.id FROM d LEFT JOIN f ON f.k = d.k", 1},
	    /* a correlated subquery decorrelated into a join whose left
	     * rows (a source relation) filter the aggregate built */
	    {"SELECT name FROM d WHERE w > (SELECT avg(v) FROM f WHERE f.k = "
	     "d.k)",
	     2},
	    /* an uncorrelated subquery: the filter is not pure (no
	     * pipeline), the subquery's plan runs its own */
	    {"SELECT count(*) FROM f WHERE v > (SELECT avg(v) + 40 FROM f)", 1},
	    /* materialising operators between pipelines */
	    {"SELECT DISTINCT k FROM f WHERE v < 3 UNION SELECT k FROM d", 2},
	    /* a pipeline over an index search's rows */
	    {"SELECT x FROM u WHERE id = 7", 1},
	    /* an aggregate over an aggregate */
	    {"SELECT c, count(*) FROM (SELECT k, count(*) AS c FROM f GROUP "
	     "BY k) GROUP BY c ORDER BY 1",
	     3},
	    /* joins in a row, one pipeline probing two */
	    {"SELECT f.id FROM f JOIN d ON f.k = d.k JOIN u ON u.id = d.w "
	     "WHERE u.x < 50",
	     3},
	};
	char sql[600];

	for (size_t i = 0; i < sizeof(q) / sizeof(q[0]); i++) {
		snprintf(sql, sizeof(sql), "EXPLAIN %s", q[i].sql);
		char *e = xq(db, sql);
		snprintf(sql, sizeof(sql), "EXPLAIN ANALYZE %s", q[i].sql);
		char *a = xq(db, sql);
		char *pe = plain(e), *pa = plain(a);
		CHECKF(!strcmp(pe, pa),
		       "%s\nEXPLAIN:\n%s\nEXPLAIN ANALYZE:\n%s", q[i].sql, e,
		       a);
		CHECKF(pipelines(pe) == q[i].npipes, "%s: %d pipelines\n%s",
		       q[i].sql, pipelines(pe), e);
		free(pe);
		free(pa);
		free(e);
		free(a);
	}
}

/* Each reason for the CPU is said once, on a line of its own after the
 * plan ("backend: cpu [for OP, ...] (why)"), never on the operators'
 * lines; none under backend=cpu. */
static void check_reasons(const char *what, const char *text)
{
	int nreasons = 0;

	for (const char *p = text; *p;) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		if (!strncmp(p, "backend: cpu ", 13)) {
			const char *why = memchr(p, '(', n);
			char w[512];
			CHECKF(why, "%s: %s", what, text);
			if (!why)
				break;
			snprintf(w, sizeof(w), "%.*s", (int)(p + n - why), why);
			/* once in the whole text */
			const char *first = strstr(text, w);
			CHECKF(first == why && !strstr(why + 1, w),
			       "%s: %s twice\n%s", what, w, text);
			nreasons++;
		} else {
			CHECKF(!nreasons,
			       "%s: a plan line after the reasons\n%s", what,
			       text);
		}
		p += n + (nl != NULL);
	}
	CHECKF(nreasons >= 1, "%s: no reason\n%s", what, text);
}

static void t_reasons_once(void)
{
	const char *sql =
	    "SELECT g, count(*) FROM f JOIN d ON f.k = d.k WHERE d.w < 5 "
	    "GROUP BY g ORDER BY 1 LIMIT 3";
	char buf[600];
	char *r;

	CHECK(!xq_exec(db, "PRAGMA backend = auto"));
	/* tiny inputs: every operator on the CPU (a GPU or not) */
	CHECK(!xq_exec(db, "PRAGMA gpu_threshold = 1000000"));
	snprintf(buf, sizeof(buf), "EXPLAIN %s", sql);
	r = xq(db, buf);
	check_reasons("EXPLAIN", r);
#ifndef GPMDB_HAVE_GPU
	/* no GPU at all: that is the one reason */
	CHECKF(strstr(r, "\nbackend: cpu (no GPU: gpmdb was built without "
			 "CUDA (make GPU=0))\n"),
	       "%s", r);
#endif
	/* the pipelines do not depend on why the CPU runs them */
	CHECKF(pipelines(r) == 3, "%s", r);
	free(r);
	snprintf(buf, sizeof(buf), "EXPLAIN ANALYZE %s", sql);
	r = xq(db, buf);
	check_reasons("EXPLAIN ANALYZE", r);
	free(r);
	CHECK(!xq_exec(db, "PRAGMA backend = cpu"));
	snprintf(buf, sizeof(buf), "EXPLAIN %s", sql);
	r = xq(db, buf);
	CHECKF(!strstr(r, "backend:") && pipelines(r) == 3, "%s", r);
	free(r);
}

int main(void)
{
	const char *tmp = getenv("TMPDIR");

	snprintf(path, sizeof(path), "%s/gpmdb_test_explain_pipes_%d.db",
		 tmp ? tmp : "/tmp", (int)getpid());
	TEST_RUN(load);
	TEST_RUN(t_layout);
	TEST_RUN(t_long_line);
	TEST_RUN(t_agree);
	TEST_RUN(t_reasons_once);
	gpmdb_close(db);
	unlink(path);
	TEST_MAIN_END();
}
