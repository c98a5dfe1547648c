/*
 * test_grow.c - large growths of a pool on tmpfs (storage/pool.c
 * "Growing", issue 16): gpmdb_append_columns of enough rows that the pool
 * file grows by more than 64 MiB at once, the range allocated ahead on a
 * thread (stg_grow_ahead) or not (GPMDB_NO_GROW_AHEAD), and by each way
 * GPMDB_GROW names (fallocate, pfalloc, populate).  The rows are all
 * there, before and after reopening, and integrity_check is clean.  On a
 * tmpfs too small for the growth: "database or disk is full", the table
 * as before, the file no longer than before, the connection goes on with
 * a smaller append.  The full cases mount a tmpfs of their own (root);
 * without one they are skipped, saying so.
 */
#include "harness.h"
#include "sql_util.h"

#include "gpmdb.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#define CHECK_SCALAR(db, sql, want)                                            \
	do {                                                                   \
		const char *got_ = su_scalar(db, sql);                         \
		CHECKF(!strcmp(got_, want), "%s: got '%s', want '%s'", sql,    \
		       got_, want);                                            \
	} while (0)

/* pmem durability: the mode the growth ahead is for (tmpfs) */
static gpmdb *open_pool(const char *path)
{
	gpmdb *db = NULL;

	CHECK_RC(gpmdb_open_v2(path, &db,
			       GPMDB_OPEN_READWRITE | GPMDB_OPEN_CREATE, NULL),
		 GPMDB_OK);
	return db;
}

/* Rows [from, from + n) of t(id BIGINT PRIMARY KEY, v BIGINT): v = 3 id. */
static int append(gpmdb *db, int64_t from, int64_t n)
{
	int64_t *id = malloc(sizeof(int64_t) * (size_t)n);
	int64_t *v = malloc(sizeof(int64_t) * (size_t)n);
	gpmdb_column_array a[2];
	int rc;

	if (!id || !v) {
		free(id);
		free(v);
		return GPMDB_NOMEM;
	}
	for (int64_t i = 0; i < n; i++) {
		id[i] = from + i;
		v[i] = 3 * (from + i);
	}
	a[0] = (gpmdb_column_array){GPMDB_ARRAY_INT64, id, NULL};
	a[1] = (gpmdb_column_array){GPMDB_ARRAY_INT64, v, NULL};
	rc = gpmdb_append_columns(db, "t", 2, NULL, a, n);
	free(id);
	free(v);
	return rc;
}

/* The table holds rows [0, n) and the pool checks clean. */
static void check_rows(gpmdb *db, int64_t n)
{
	char want[64];

	snprintf(want, sizeof(want), "%lld", (long long)n);
	CHECK_SCALAR(db, "SELECT count(*) FROM t", want);
	snprintf(want, sizeof(want), "%lld",
		 (long long)(3 * (n * (n - 1) / 2)));
	CHECK_SCALAR(db, "SELECT sum(v) FROM t", want);
	snprintf(want, sizeof(want), "%lld", (long long)(n - 1));
	CHECK_SCALAR(db, "SELECT max(id) FROM t", want);
	if (n > 5) {
		CHECK_SCALAR(db, "SELECT v FROM t WHERE id = 5", "15");
	}
	CHECK_SCALAR(db, "PRAGMA integrity_check", "ok");
}

static off_t file_size(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 ? st.st_size : -1;
}

/* 6M rows at once (about 250 MB of tablets and index) into the pool at
 * path, then reopened. */
static void grow_ok(const char *path, const char *way, bool ahead)
{
	const int64_t n = 6000000;
	gpmdb *db;

	setenv("GPMDB_GROW", way, 1);
	if (ahead)
		unsetenv("GPMDB_NO_GROW_AHEAD");
	else
		setenv("GPMDB_NO_GROW_AHEAD", "1", 1);
	unlink(path);
	db = open_pool(path);
	if (!db)
		return;
	CHECK_RC(su_exec(db, "CREATE TABLE t(id BIGINT PRIMARY KEY, "
			     "v BIGINT)"),
		 GPMDB_OK);
	CHECK_RC(append(db, 0, 1000), GPMDB_OK);
	CHECKF(append(db, 1000, n - 1000) == GPMDB_OK, "%s: %s", way,
	       gpmdb_errmsg(db));
	check_rows(db, n);
	gpmdb_close(db);
	db = open_pool(path);
	if (db) {
		check_rows(db, n);
		gpmdb_close(db);
	}
	unlink(path);
	unsetenv("GPMDB_GROW");
	unsetenv("GPMDB_NO_GROW_AHEAD");
}

static void test_grow_ways(void)
{
	char dir[300], path[400];
	static const char *const ways[] = {"fallocate", "pfalloc", "populate"};

	/* tmpfs where there is one: the ways differ only there */
	setenv("TMPDIR", access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp",
	       1);
	if (su_tmp_make(dir, sizeof(dir), path, sizeof(path), "grow", "g.db") !=
	    0) {
		CHECK(!"cannot make a directory");
		return;
	}
	for (size_t w = 0; w < sizeof(ways) / sizeof(ways[0]); w++)
		grow_ok(path, ways[w], w == 0);
	grow_ok(path, "fallocate", false);
	su_tmp_remove(dir, path);
}

/* On a 96 MiB tmpfs: 100k rows fit, 6M do not. */
static void grow_full(const char *dir, const char *way, bool ahead)
{
	char path[400];
	gpmdb *db;
	off_t before;
	int rc;

	snprintf(path, sizeof(path), "%s/full.db", dir);
	setenv("GPMDB_GROW", way, 1);
	if (ahead)
		unsetenv("GPMDB_NO_GROW_AHEAD");
	else
		setenv("GPMDB_NO_GROW_AHEAD", "1", 1);
	unlink(path);
	db = open_pool(path);
	if (!db)
		return;
	CHECK_RC(su_exec(db, "CREATE TABLE t(id BIGINT PRIMARY KEY, "
			     "v BIGINT)"),
		 GPMDB_OK);
	CHECK_RC(append(db, 0, 100000), GPMDB_OK);
	before = file_size(path);
	rc = append(db, 100000, 6000000);
	CHECKF(rc == GPMDB_FULL, "%s%s: rc %d: %s", way, ahead ? ", ahead" : "",
	       rc, gpmdb_errmsg(db));
	CHECKF(strstr(gpmdb_errmsg(db), "database or disk is full") != NULL,
	       "%s: %s", way, gpmdb_errmsg(db));
	/* the pages of the failed growth given back */
	CHECKF(file_size(path) <= before, "%s: %lld bytes, %lld before", way,
	       (long long)file_size(path), (long long)before);
	check_rows(db, 100000);
	/* the connection goes on */
	CHECKF(append(db, 100000, 50000) == GPMDB_OK, "%s: %s", way,
	       gpmdb_errmsg(db));
	check_rows(db, 150000);
	gpmdb_close(db);
	db = open_pool(path);
	if (db) {
		check_rows(db, 150000);
		gpmdb_close(db);
	}
	unlink(path);
	unsetenv("GPMDB_GROW");
	unsetenv("GPMDB_NO_GROW_AHEAD");
}

static void test_grow_full(void)
{
	char dir[] = "/tmp/gpmdb_grow_full.XXXXXX";

	if (!mkdtemp(dir)) {
		CHECK(!"cannot make a directory");
		return;
	}
	if (mount("tmpfs", dir, "tmpfs", 0, "size=96m") != 0) {
		printf("# skipped test_grow_full: cannot mount a tmpfs on %s "
		       "(%s; needs root)\n",
		       dir, strerror(errno));
		rmdir(dir);
		return;
	}
	grow_full(dir, "fallocate", true);
	grow_full(dir, "fallocate", false);
	grow_full(dir, "pfalloc", false);
	grow_full(dir, "populate", false);
	CHECK(umount(dir) == 0);
	rmdir(dir);
}

int main(void)
{
	TEST_RUN(test_grow_ways);
	TEST_RUN(test_grow_full);
	TEST_MAIN_END();
}
