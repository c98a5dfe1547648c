/*
 * test_dict_group.c - GROUP BY on dictionary-encoded TEXT keys grouped
 * by their dictionary references (engine/exec/pipe_dict.c
 * pipe_dict_groups): a table whose tablets hold different strings
 * (groups in some tablets only, NULLs, '', 'a' and 'A'), a tablet whose
 * dictionary is too large, tablets made plain again by an UPDATE and by
 * an INSERT after VACUUM, deleted rows; every query (one key, two keys,
 * a key of another type or one computed, HAVING, ORDER BY of the
 * groups, filters, text aggregates, a join) gives SQLite's rows and
 * those of the string path (GPMDB_DICT_GROUP=0) on 4 threads and on 1,
 * and the references were used exactly where the keys qualify.
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
uint64_t pipe_dict_group_rows(void);

static char path[300];
static gpmdb *db;
static sqlite3 *lite;

/* Tablets (1024, 2048, 4096, ... rows, storage/tablet.c) of s: 0 'a' 'b'
 * '' NULL; 1 'b' 'c' 'A' (then made plain by an UPDATE); 2 'c' 'd' 'ab'
 * NULL '' and 'zz' (whose rows are then deleted); 3 3000 strings and 'a'
 * (a dictionary too large); 4 'b' 'e' NULL; 5 'a' 'c' 'E' ''; then a
 * plain tablet, past pipe.c's PIPE_PAR_MIN_ROWS in all (the threads take
 * part).  k: a few strings and NULLs; w: too many strings a tablet. */
static void load(void)
{
	db = su_open(path);
	CHECK(sqlite3_open(":memory:", &lite) == SQLITE_OK);
	lite_seq(db, lite, 64512);
	lite_both(db, lite,
		  "CREATE TABLE t(id BIGINT, s TEXT, k TEXT, v INT, w TEXT)");
	lite_both(
	    db, lite,
	    "INSERT INTO t SELECT id, CASE WHEN id < 1024 THEN CASE id % 4 "
	    "WHEN 0 THEN 'a' WHEN 1 THEN 'b' WHEN 2 THEN '' ELSE NULL END "
	    "WHEN id < 3072 THEN CASE id % 3 WHEN 0 THEN 'b' WHEN 1 THEN 'c' "
	    "ELSE 'A' END WHEN id < 7168 THEN CASE WHEN id % 997 = 5 THEN "
	    "'zz' ELSE CASE id % 5 WHEN 0 THEN 'c' WHEN 1 THEN 'd' WHEN 2 "
	    "THEN 'ab' WHEN 3 THEN NULL ELSE '' END END ELSE CASE WHEN id % "
	    "50 = 0 THEN 'a' ELSE 'h' || (id % 3000) END END, CASE WHEN id "
	    "% 7 = 0 THEN NULL ELSE 'x' || (id % 3) END, id % 100, 'w' || "
	    "(id % 1500) FROM s WHERE id < 15360");
	lite_both(
	    db, lite,
	    "INSERT INTO t SELECT id, CASE WHEN id < 31744 THEN CASE id % 3 "
	    "WHEN 0 THEN 'b' WHEN 1 THEN 'e' ELSE NULL END ELSE CASE id % 4 "
	    "WHEN 0 THEN 'a' WHEN 1 THEN 'c' WHEN 2 THEN 'E' ELSE '' END "
	    "END, 'x' || (id % 5), id % 100, 'w' || (id % 1500) FROM s "
	    "WHERE id >= 15360 AND id < 64512");
	CHECK_RC(su_exec(db, "VACUUM"), GPMDB_OK);
	CHECKF(!strncmp(su_storage_info(db, "t", 1, 3), "dict ", 5), "s: %s",
	       su_storage_info(db, "t", 1, 3));
	CHECKF(!strncmp(su_storage_info(db, "t", 2, 3), "dict ", 5), "k: %s",
	       su_storage_info(db, "t", 2, 3));
	/* deleted rows in dictionary tablets: every 'zz' (its string stays
	 * in tablet 2's dictionary) and some of every other string */
	lite_both(
	    db, lite,
	    "DELETE FROM t WHERE s = 'zz' OR (id % 13 = 0 AND id < 7168)");
	lite_both(db, lite, "UPDATE t SET s = 'q' WHERE id = 2000");
	lite_both(
	    db, lite,
	    "INSERT INTO t SELECT id + 20000, CASE id % 4 WHEN 0 THEN 'a' "
	    "WHEN 1 THEN 'c' WHEN 2 THEN '' ELSE NULL END, 'x1', id % 100, "
	    "'w1' FROM s WHERE id < 2000");
	lite_both(db, lite, "CREATE TABLE u(s TEXT, w INT)");
	lite_both(db, lite,
		  "INSERT INTO u VALUES ('a', 1), ('b', 2), ('c', 3), ('', 4), "
		  "(NULL, 5), ('zz', 6)");
}

/* sql's rows in gpmdb on 4 threads and on 1 (in order unless !ordered)
 * are SQLite's and the string path's (GPMDB_DICT_GROUP=0), none of them
 * an error; refs: whether the groups must have been found by dictionary
 * references (else none may be). */
static void same(const char *sql, bool ordered, bool refs)
{
	char *a = malloc(BUF), *b = malloc(BUF), *c = malloc(BUF),
	     *l = malloc(BUF);
	uint64_t r0 = pipe_dict_group_rows();

	if (!a || !b || !c || !l) {
		CHECK(0);
		goto out;
	}
	omp_set_num_threads(4);
	su_rows(db, sql, a, BUF);
	uint64_t r1 = pipe_dict_group_rows();
	omp_set_num_threads(1);
	su_rows(db, sql, c, BUF);
	uint64_t r2 = pipe_dict_group_rows();
	omp_set_num_threads(4);
	CHECKF(refs ? r1 > r0 : r1 == r0, "%s: %llu rows by references", sql,
	       (unsigned long long)(r1 - r0));
	CHECKF(r2 - r1 == r1 - r0, "%s: other rows by references on 1 thread",
	       sql);
	setenv("GPMDB_DICT_GROUP", "0", 1);
	su_rows(db, sql, b, BUF);
	unsetenv("GPMDB_DICT_GROUP");
	CHECKF(pipe_dict_group_rows() == r2,
	       "%s: references under GPMDB_DICT_GROUP=0", sql);
	lite_rows(lite, sql, l, BUF);
	CHECKF(a[0] != '<' && l[0] != '<', "%s: %.200s / %.200s", sql, a, l);
	CHECKF(!strcmp(a, c), "%s: 4 threads and 1 differ", sql);
	/* the groups come out in the string path's order, sorted or not */
	CHECKF(!strcmp(a, b), "%s: refs %.300s strings %.300s", sql, a, b);
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
	/* keys of the scan's TEXT columns: by references */
	same("SELECT s, count(*), sum(v) FROM t GROUP BY s", false, true);
	same("SELECT s, count(*) FROM t GROUP BY 1 ORDER BY 1", true, true);
	same("SELECT count(*), max(v) FROM t GROUP BY s", false, true);
	same("SELECT s, k, count(*), sum(v) FROM t GROUP BY s, k", false, true);
	same("SELECT k, s, count(*) FROM t GROUP BY k, s ORDER BY k, s", true,
	     true);
	same("SELECT s, count(*) FROM t GROUP BY s HAVING count(*) > 3000",
	     false, true);
	same("SELECT s, count(*) AS c FROM t GROUP BY s ORDER BY c DESC, s",
	     true, true);
	same("SELECT s, count(*) FROM t GROUP BY s ORDER BY s LIMIT 3", true,
	     true);
	same("SELECT s, min(k), max(k), count(k), avg(v) FROM t GROUP BY s",
	     false, true);
	same("SELECT s, count(*) FROM t WHERE v < 50 GROUP BY s", false, true);
	same("SELECT s, count(*) FROM t WHERE s <> 'b' GROUP BY s", false,
	     true);
	same("SELECT s, count(*) FROM t WHERE s IN ('a', 'A', '') GROUP BY s",
	     false, true);
	same("SELECT s, count(*) FROM t WHERE id >= 7168 AND id < 15360 GROUP "
	     "BY s",
	     false, false); /* only the large dictionary's rows */
	same("SELECT s, sum(v) FROM (SELECT s, v FROM t WHERE v > 10) GROUP "
	     "BY s",
	     false, true);
	/* a key that is not such a column, a dictionary too large for the
	 * pair, a join: the string path */
	same("SELECT s, v, count(*) FROM t GROUP BY s, v", false, false);
	same("SELECT s, w, count(*) FROM t GROUP BY s, w", false, false);
	same("SELECT lower(s), count(*) FROM t GROUP BY 1", false, false);
	same("SELECT s || 'x', count(*) FROM t GROUP BY 1", false, false);
	same("SELECT v, count(*) FROM t GROUP BY v", false, false);
	same("SELECT t.s, count(*) FROM t JOIN u ON t.s = u.s GROUP BY t.s",
	     false, false);
	same("SELECT count(*) FROM t", false, false);
	same("SELECT DISTINCT s FROM t", false, false); /* not an AGG sink */
}

int main(void)
{
	const char *tmp = getenv("TMPDIR");

	snprintf(path, sizeof(path), "%s/gpmdb_test_dict_group_%d.db",
		 tmp ? tmp : "/tmp", (int)getpid());
	unsetenv("GPMDB_DICT_GROUP");
	TEST_RUN(load);
	TEST_RUN(t_compare);
	gpmdb_close(db);
	sqlite3_close(lite);
	unlink(path);
	TEST_MAIN_END();
}
