/*
 * test_dict_pred.c - filters on dictionary-encoded TEXT tested on the
 * codes (engine/exec/pipe_dict.c): a table whose tablets hold different
 * strings (a literal in some dictionaries and not others, in none, only
 * in deleted rows; NULLs, '', letters of both cases), a tablet whose
 * dictionary is too large for the codes, tablets made plain again by an
 * UPDATE and by an INSERT after VACUUM, and deleted rows; every query
 * (=, <>, IN and NOT IN with duplicates and NULL, LIKE, ranges, IS NULL,
 * NOT, OR, several filters, projected or not, grouped, joined) gives
 * SQLite's rows and those of the string path (GPMDB_DICT_PRED=0), and
 * the codes were used where a dictionary tablet was scanned.
 */
#include "harness.h"
#include "lite_same.h"
#include "sql_util.h"

#include "gpmdb.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* engine/exec/pipe_int.h (whose pipe type meets unistd.h's pipe()) */
uint64_t pipe_dict_rows(void);

static char path[300];
static gpmdb *db;
static sqlite3 *lite;

/* Tablets (1024, 2048, 4096, ... rows, storage/tablet.c): 0 'a' 'b' ''
 * NULL; 1 'b' 'c' 'A' (then made plain by an UPDATE); 2 'c' 'd' 'ab'
 * NULL '' and 'zz' (whose rows are then deleted); 3 3000 strings and 'a'
 * (a dictionary too large for the codes); 4 'b' 'e' NULL; 5 'a' 'c' 'E'
 * ''; then a plain tablet, past pipe.c's PIPE_PAR_MIN_ROWS in all (the
 * threads take part). */
static void load(void)
{
	db = su_open(path);
	CHECK(sqlite3_open(":memory:", &lite) == SQLITE_OK);
	lite_seq(db, lite, 64512);
	lite_both(db, lite, "CREATE TABLE t(id BIGINT, s TEXT, k TEXT, v INT)");
	lite_both(
	    db, lite,
	    "INSERT INTO t SELECT id, CASE WHEN id < 1024 THEN CASE id % 4 "
	    "WHEN 0 THEN 'a' WHEN 1 THEN 'b' WHEN 2 THEN '' ELSE NULL END "
	    "WHEN id < 3072 THEN CASE id % 3 WHEN 0 THEN 'b' WHEN 1 THEN 'c' "
	    "ELSE 'A' END WHEN id < 7168 THEN CASE WHEN id % 997 = 5 THEN "
	    "'zz' ELSE CASE id % 5 WHEN 0 THEN 'c' WHEN 1 THEN 'd' WHEN 2 "
	    "THEN 'ab' WHEN 3 THEN NULL ELSE '' END END ELSE CASE WHEN id % "
	    "50 = 0 THEN 'a' ELSE 'h' || (id % 3000) END END, CASE WHEN id "
	    "% 7 = 0 THEN NULL ELSE 'x' || (id % 3) END, id % 100 FROM s "
	    "WHERE id < 15360");
	lite_both(
	    db, lite,
	    "INSERT INTO t SELECT id, CASE WHEN id < 31744 THEN CASE id % 3 "
	    "WHEN 0 THEN 'b' WHEN 1 THEN 'e' ELSE NULL END ELSE CASE id % 4 "
	    "WHEN 0 THEN 'a' WHEN 1 THEN 'c' WHEN 2 THEN 'E' ELSE '' END "
	    "END, 'x' || (id % 5), id % 100 FROM s WHERE id >= 15360 AND id "
	    "< 64512");
	CHECK_RC(su_exec(db, "VACUUM"), GPMDB_OK);
	CHECKF(!strncmp(su_storage_info(db, "t", 1, 3), "dict ", 5), "s: %s",
	       su_storage_info(db, "t", 1, 3));
	/* deleted rows in dictionary tablets: every 'zz' (its string stays
	 * in tablet 2's dictionary) and some of every other string */
	lite_both(
	    db, lite,
	    "DELETE FROM t WHERE s = 'zz' OR (id % 13 = 0 AND id < 7168)");
	lite_both(db, lite, "UPDATE t SET s = 'q' WHERE id = 2000");
	lite_both(
	    db, lite,
	    "INSERT INTO t SELECT id + 20000, CASE id % 4 WHEN 0 THEN 'a' "
	    "WHEN 1 THEN 'c' WHEN 2 THEN '' ELSE NULL END, 'x1', id % 100 "
	    "FROM s WHERE id < 2000");
	lite_both(db, lite, "CREATE TABLE u(s TEXT, w INT)");
	lite_both(db, lite,
		  "INSERT INTO u VALUES ('a', 1), ('b', 2), ('c', 3), ('', 4), "
		  "(NULL, 5), ('zz', 6)");
}

/* sql's rows in gpmdb on 4 threads and on 1 (in order unless !ordered)
 * are SQLite's and the string path's (GPMDB_DICT_PRED=0), none of them
 * an error (no rows is a result here); codes: whether the scans must
 * have used dictionary codes. */
static void same(const char *sql, bool ordered, bool codes)
{
	char *a = malloc(BUF), *b = malloc(BUF), *c = malloc(BUF),
	     *l = malloc(BUF);
	uint64_t r0 = pipe_dict_rows();

	if (!a || !b || !c || !l) {
		CHECK(0);
		goto out;
	}
	omp_set_num_threads(4);
	su_rows(db, sql, a, BUF);
	uint64_t r1 = pipe_dict_rows();
	omp_set_num_threads(1);
	su_rows(db, sql, c, BUF);
	omp_set_num_threads(4);
	CHECKF(codes ? r1 > r0 : r1 == r0, "%s: %llu rows on codes", sql,
	       (unsigned long long)(r1 - r0));
	CHECKF(pipe_dict_rows() == r1 + (r1 - r0),
	       "%s: other rows on codes on one thread", sql);
	setenv("GPMDB_DICT_PRED", "0", 1);
	su_rows(db, sql, b, BUF);
	unsetenv("GPMDB_DICT_PRED");
	CHECKF(pipe_dict_rows() == r1 + (r1 - r0),
	       "%s: codes under GPMDB_DICT_PRED=0", sql);
	lite_rows(lite, sql, l, BUF);
	CHECKF(a[0] != '<' && l[0] != '<', "%s: %.200s / %.200s", sql, a, l);
	CHECKF(!strcmp(a, c), "%s: 4 threads and 1 differ", sql);
	CHECKF(!strcmp(a, b), "%s: codes %.300s strings %.300s", sql, a, b);
	if (!ordered) {
		sort_lines(a);
		sort_lines(l);
	}
	CHECKF(!strcmp(a, l), "%s:\n gpmdb %.300s\n sqlite %.300s", sql, a, l);
out:
	free(a);
	free(b);
	free(c);
	free(l);
}

static void t_compare(void)
{
	static const char *const preds[] = {
	    "s = 'a'", /* tablets 0, 3 (strings) and the plain one */
	    "s = 'c'",
	    "s = 'zz'", /* only in deleted rows */
	    "s = 'nope'",
	    "s = 'q'", /* only in the plain tablet 1 */
	    "s = ''",
	    "s = 'A'",
	    "'b' = s",
	    "s <> 'b'",
	    "s <> ''",
	    "s IN ('a', 'c', 'a')",
	    "s IN ('a', NULL)",
	    "s IN ('zz', 'a', 'a', NULL, 'd', '')",
	    "s IN ('nope', 'none')",
	    "s NOT IN ('a', 'b')",
	    "s NOT IN ('a', NULL)",
	    "s NOT IN ('', 'c', 'c')",
	    "s LIKE 'a%'",
	    "s LIKE 'A%'",
	    "s LIKE '%b'",
	    "s LIKE '_'",
	    "s > 'b'",
	    "s BETWEEN 'b' AND 'c'",
	    "s IS NULL",
	    "s IS NOT NULL",
	    "NOT (s = 'a')",
	    "s = 'a' OR s IS NULL",
	    "s = 'c' AND v < 50",
	    "v < 50 AND s IN ('c', 'd')",
	    "s IN ('b', 'c') AND k = 'x1'",
	    "k = 'x2' AND s <> 'd'",
	};
	char q[400];

	for (size_t i = 0; i < sizeof(preds) / sizeof(*preds); i++) {
		snprintf(q, sizeof(q), "SELECT count(*) FROM t WHERE %s",
			 preds[i]);
		same(q, true, true);
		/* the column projected: its strings made for the rows kept */
		snprintf(q, sizeof(q),
			 "SELECT id, s, k FROM t WHERE %s ORDER BY id",
			 preds[i]);
		same(q, true, true);
		snprintf(q, sizeof(q),
			 "SELECT s, count(*), sum(v) FROM t WHERE %s GROUP BY "
			 "s",
			 preds[i]);
		same(q, false, true);
	}
	same("SELECT k, count(*) FROM t WHERE s IN ('a', 'b', '') GROUP BY k",
	     false, true);
	same("SELECT t.s, u.w, count(*) FROM t JOIN u ON t.s = u.s WHERE t.s "
	     "<> 'c' GROUP BY t.s, u.w",
	     false, true);
	/* no filter on one TEXT column alone: the strings */
	same("SELECT count(*) FROM t WHERE s = k", true, false);
	same("SELECT count(*) FROM t WHERE v = 3", true, false);
	same("SELECT count(*) FROM t WHERE s || 'x' = 'ax'", true, false);
}

int main(void)
{
	const char *tmp = getenv("TMPDIR");

	snprintf(path, sizeof(path), "%s/gpmdb_test_dict_pred_%d.db",
		 tmp ? tmp : "/tmp", (int)getpid());
	unsetenv("GPMDB_DICT_PRED");
	TEST_RUN(load);
	TEST_RUN(t_compare);
	gpmdb_close(db);
	sqlite3_close(lite);
	unlink(path);
	TEST_MAIN_END();
}
