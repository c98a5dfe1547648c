/*
 * tpch_query.h - the 22 TPC-H queries shared by the test
 * (tests/tpch/test_tpch_queries.c) and the benchmark (tpc/tpch/bench_tpch.c):
 * reading the query files, the rewriting into SQLite's dialect, running a
 * query on gpmdb or SQLite into a result of typed values, each query's
 * ORDER BY keys, and the comparison rule of two engines' results.  One
 * copy, so the test and the benchmark check answers the same way.
 *
 * SQLite's dialect (tpchq_sqlite_dialect): date 'D' [+-] interval 'N' unit
 * -> date('D', '+-N unit'); date 'D' -> 'D' (SQLite keeps dates as ISO
 * text, which sorts as dates do); extract(year from X) ->
 * CAST(strftime('%Y', X) AS INTEGER); substring(X from A for B) ->
 * substr(X, A, B); Q13's derived-table column list "c_orders (c_custkey,
 * c_count)", which SQLite does not read, becomes a column alias inside
 * the subquery.
 *
 * Comparison (tpchq_compare, docs/tpch.md): same column count, same number
 * of rows.  Text and integers must be equal exactly; NULL only matches
 * NULL; other numbers (exact DECIMALs, doubles) must agree to the cent:
 * rounded to 2 decimals they are equal, or they differ by less than 1e-6
 * (a value on a half-cent boundary that binary floating point puts on the
 * other side).  Order: each result must be sorted by the query's ORDER BY
 * keys, and the two results must be equal as multisets of rows; where the
 * keys determine the order fully, that is comparing the rows in order.
 */
#ifndef GPMDB_TPCH_QUERY_H
#define GPMDB_TPCH_QUERY_H

#include <sqlite3.h>
#include <stdbool.h>
#include <stddef.h>

#include "gpmdb.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TPCHQ_N 22

/* One value: type 'N' NULL, 'I' integer, 'F' other number, 'T' text (dates
 * too); d is the number as a double for 'I' and 'F'; text is the value's
 * text (malloc'd, "" for NULL). */
typedef struct {
	char type;
	long long i;
	double d;
	char *text;
} tpchq_val;

/* The rows of the statements of one query that returned columns. */
typedef struct {
	int ncols;
	long nrows, cap;
	tpchq_val *v;  /* row-major, nrows * ncols */
	int nselects;  /* statements that returned columns (want 1) */
	char err[512]; /* why running failed */
	double ms;     /* prepare, steps and reading every value */
} tpchq_res;

/* Reads a whole file into a NUL-terminated malloc'd buffer; NULL (errno
 * set) when it cannot be read. */
char *tpchq_read_file(const char *path);

/* SQL of one query rewritten into SQLite's dialect (malloc'd); NULL when a
 * construct was not understood.  q is the query number (Q13's rewrite). */
char *tpchq_sqlite_dialect(int q, const char *sql);

/* Query q's ORDER BY keys as result columns (1-based, negative = DESC),
 * ending with 0; queries without ORDER BY return one row (no keys). */
const int *tpchq_order_keys(int q);

/* Row i of r, a new row (NULL when out of memory), freeing. */
tpchq_val *tpchq_row(const tpchq_res *r, long i);
tpchq_val *tpchq_add_row(tpchq_res *r);
void tpchq_res_free(tpchq_res *r);

/* Runs every statement of sql (Q15: CREATE VIEW, SELECT, DROP VIEW); the
 * rows of those that return columns go into r, timed in r->ms.  Returns
 * 0, or -1 with the reason in r->err. */
int tpchq_run_gpmdb(gpmdb *db, const char *sql, tpchq_res *r);
int tpchq_run_sqlite(sqlite3 *db, const char *sql, tpchq_res *r);

/* Does a match b under the rule above (either side may be the exact one)? */
bool tpchq_match(const tpchq_val *a, const tpchq_val *b);

/*
 * Compares result a (of engine na) with result b (of engine nb) for query q
 * under the rule above (neither is changed).  Returns 0 when they match,
 * else the number of problems found (at least 1) with a description in
 * msg: the first few differing rows.
 */
int tpchq_compare(int q, const char *na, const tpchq_res *a, const char *nb,
		  const tpchq_res *b, char *msg, size_t msglen);

#ifdef __cplusplus
}
#endif
#endif /* GPMDB_TPCH_QUERY_H */
