/*
 * dict_fixture.h - the table and the comparison that test_dict_pred.c
 * and test_dict_group.c share: a table t whose TEXT columns are
 * dictionary-encoded tablet by tablet with different strings (and a
 * plain tablet, deleted rows, a dictionary too large), loaded into gpmdb
 * and SQLite alike, and dict_same, which runs a query on 4 threads, on 1
 * and with the dictionary path switched off, against SQLite.
 */
#ifndef GPMDB_TESTS_DICT_FIXTURE_H
#define GPMDB_TESTS_DICT_FIXTURE_H

#include "harness.h"
#include "lite_same.h"
#include "sql_util.h"

#include "gpmdb.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char path[300];
static gpmdb *db;
static sqlite3 *lite;

/* Tablets (1024, 2048, 4096, ... rows, storage/tablet.c) of s: 0 'a' 'b'
 * '' NULL; 1 'b' 'c' 'A' (then made plain by an UPDATE); 2 'c' 'd' 'ab'
 * NULL '' and 'zz' (whose rows are then deleted); 3 3000 strings and 'a'
 * (a dictionary too large); 4 'b' 'e' NULL; 5 'a' 'c' 'E' ''; then a
 * plain tablet, past pipe.c's PIPE_PAR_MIN_ROWS in all (the threads take
 * part).  k: a few strings and NULLs; w: too many strings a tablet. */
static void dict_load(void)
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
 * are SQLite's and the string path's (env=0), none of them an error;
 * used: whether the dictionary path must have counted rows (counter),
 * else none may be counted, and as many on 1 thread as on 4. */
static void dict_same(const char *sql, bool ordered, bool used,
		      uint64_t (*counter)(void), const char *env)
{
	char *a = malloc(BUF), *b = malloc(BUF), *c = malloc(BUF),
	     *l = malloc(BUF);
	uint64_t r0 = counter();

	if (!a || !b || !c || !l) {
		CHECK(0);
		goto out;
	}
	omp_set_num_threads(4);
	su_rows(db, sql, a, BUF);
	uint64_t r1 = counter();
	omp_set_num_threads(1);
	su_rows(db, sql, c, BUF);
	uint64_t r2 = counter();
	omp_set_num_threads(4);
	CHECKF(used ? r1 > r0 : r1 == r0, "%s: %llu rows by dictionary", sql,
	       (unsigned long long)(r1 - r0));
	CHECKF(r2 - r1 == r1 - r0, "%s: other rows by dictionary on 1 thread",
	       sql);
	setenv(env, "0", 1);
	su_rows(db, sql, b, BUF);
	unsetenv(env);
	CHECKF(counter() == r2, "%s: dictionary path under %s=0", sql, env);
	lite_rows(lite, sql, l, BUF);
	CHECKF(a[0] != '<' && l[0] != '<', "%s: %.200s / %.200s", sql, a, l);
	CHECKF(!strcmp(a, c), "%s: 4 threads and 1 differ", sql);
	/* the rows come out in the string path's order, sorted or not */
	CHECKF(!strcmp(a, b), "%s: dictionary %.300s strings %.300s", sql, a,
	       b);
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

/* The test's main: the table in a pool of its own (name), env unset so
 * that the dictionary path runs, then t_compare. */
static int dict_main(const char *name, const char *env, void (*t_compare)(void))
{
	const char *tmp = getenv("TMPDIR");

	snprintf(path, sizeof(path), "%s/gpmdb_test_%s_%d.db",
		 tmp ? tmp : "/tmp", name, (int)getpid());
	unsetenv(env);
	TEST_RUN(dict_load);
	TEST_RUN(t_compare);
	gpmdb_close(db);
	sqlite3_close(lite);
	unlink(path);
	TEST_MAIN_END();
}

#endif
