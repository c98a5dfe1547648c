/*
 * test_storage_prefetch.c - stg_prefetch_cols (storage/prefetch.c): the
 * pages of the wanted columns of a table get mapped, those of the others
 * stay unmapped, in plain tablets and in encoded ones (frame of
 * reference, dictionary, compressed TEXT), with deleted rows; an unknown
 * table is an error; what is read afterwards is unchanged.  The mapping's
 * resident size is read from /proc/self/smaps, in a pool opened afresh
 * (nothing of it mapped yet).
 */
#include "harness.h"
#include "sql_util.h"

#include "../storage/storage.h"
#include "gpmdb.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[256], path[300];

#define ROWS 300000

/* Resident bytes of this process's mappings of the pool file. */
static uint64_t rss_of_pool(void)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[1024];
	bool in = false;
	uint64_t kb = 0;

	CHECK(f != NULL);
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long v;
		size_t t = strcspn(line, " ");
		/* a mapping's first line: "start-end perms off dev inode
		 * path"; the others "Name: value" */
		if (memchr(line, '-', t) && !memchr(line, ':', t)) {
			in = strstr(line, path) != NULL;
			continue;
		}
		if (in && sscanf(line, "Rss: %llu kB", &v) == 1)
			kb += v;
	}
	fclose(f);
	return kb << 10;
}

static void make_pool(void)
{
	gpmdb *db = su_open(path);
	char sql[1024];

	CHECK(db != NULL);
	CHECK_RC(su_exec(db, "CREATE TABLE g(i BIGINT); INSERT INTO g VALUES "
			     "(0)"),
		 GPMDB_OK);
	for (long n = 1; n < ROWS; n *= 2) {
		snprintf(sql, sizeof(sql),
			 "INSERT INTO g SELECT i + %ld FROM g WHERE i + %ld < "
			 "%d",
			 n, n, ROWS);
		CHECK_RC(su_exec(db, sql), GPMDB_OK);
	}
	/* e: encoded by VACUUM; p: appended after it, plain */
	CHECK_RC(su_exec(db,
			 "CREATE TABLE e(a BIGINT, b BIGINT, d TEXT, z TEXT);"
			 "INSERT INTO e SELECT i, i * 7919 % 1000003, 'k' || "
			 "(i % 5), 'the quick brown fox ' || i || ' jumps "
			 "over the lazy dog ' || (i * 31 % 977) FROM g;"
			 "DELETE FROM e WHERE a % 11 = 3; VACUUM;"
			 "CREATE TABLE p(a BIGINT, b BIGINT, d TEXT, z TEXT);"
			 "INSERT INTO p SELECT * FROM e"),
		 GPMDB_OK);
	CHECKF(strstr(su_storage_info(db, "e", 3, 3), "zstd") != NULL,
	       "z not compressed: %s", su_storage_info(db, "e", 3, 3));
	gpmdb_close(db);
}

static uint64_t pool_bytes(void)
{
	struct stat st;

	return stat(path, &st) ? 0 : (uint64_t)st.st_size;
}

/* Opens the pool afresh and maps the columns of table t with want[c]. */
static void one(const char *t, const int *want, uint64_t *got, uint64_t *grew)
{
	stg_open_opts o = {.readonly = true};
	stg_pool *p = NULL;
	char err[256];
	uint32_t id = 0;
	uint64_t r0;
	static const int types[4] = {STG_T_BIGINT, STG_T_BIGINT, STG_T_TEXT,
				     STG_T_TEXT};
	int ty[4];

	CHECK_RC(stg_open(path, &o, &p, err, sizeof(err)), GPMDB_OK);
	if (!p)
		return;
	CHECK_RC(stg_table_find(p, t, &id), GPMDB_OK);
	for (int c = 0; c < 4; c++)
		ty[c] = want[c] ? types[c] : -1;
	r0 = rss_of_pool();
	CHECK_RC(stg_prefetch_cols(p, id, ty, 4, got), GPMDB_OK);
	*grew = rss_of_pool() - r0;
	printf("# %s want %d%d%d%d: %llu bytes asked, %llu KiB mapped\n", t,
	       want[0], want[1], want[2], want[3], (unsigned long long)*got,
	       (unsigned long long)(*grew >> 10));
	stg_close(p);
}

static void t_columns(void)
{
	static const int a[4] = {1, 0, 0, 0}, z[4] = {0, 0, 0, 1},
			 all[4] = {1, 1, 1, 1};
	const char *tabs[2] = {"p", "e"};

	make_pool();
	for (int k = 0; k < 2; k++) {
		uint64_t ga, ra, gz, rz, gall, rall;
		one(tabs[k], a, &ga, &ra);
		one(tabs[k], z, &gz, &rz);
		one(tabs[k], all, &gall, &rall);
		/* the plain a is 8 bytes a row; encoded, fewer bits */
		CHECKF(ra >= (k ? 100000ull : 2000000ull), "%s: a mapped %llu",
		       tabs[k], (unsigned long long)ra);
		CHECKF(rz > 0 && rall > ra && rall > rz, "%s: z %llu, all %llu",
		       tabs[k], (unsigned long long)rz,
		       (unsigned long long)rall);
		/* one column maps well under the table */
		CHECKF(ra * 2 < rall, "%s: a %llu of all %llu", tabs[k],
		       (unsigned long long)ra, (unsigned long long)rall);
		/* (reading the catalog and the tablets' headers maps some
		 * pages too) */
		CHECK(gall >= ga && gall >= gz && rall <= pool_bytes());
	}
}

static void t_errors(void)
{
	stg_open_opts o = {.readonly = true};
	stg_pool *p = NULL;
	char err[256];
	int ty[1] = {STG_T_BIGINT};
	uint64_t got = 1;

	CHECK_RC(stg_open(path, &o, &p, err, sizeof(err)), GPMDB_OK);
	if (!p)
		return;
	CHECK(stg_prefetch_cols(p, 987654, ty, 1, &got) != GPMDB_OK);
	CHECK(got == 0);
	stg_close(p);
	/* the rows read afterwards are the rows */
	gpmdb *db = NULL;
	CHECK_RC(gpmdb_open_v2(path, &db, GPMDB_OPEN_READWRITE, NULL),
		 GPMDB_OK);
	CHECKF(!strcmp(su_scalar(db, "SELECT count(*) FROM e"), "272727"), "%s",
	       su_scalar(db, "SELECT count(*) FROM e"));
	CHECK(!strcmp(su_scalar(db,
				"SELECT count(*) FROM e, p WHERE e.a = p.a AND "
				"e.z = p.z AND e.d = p.d AND e.b = p.b"),
		      "272727"));
	CHECK(!strcmp(su_scalar(db, "PRAGMA integrity_check"), "ok"));
	gpmdb_close(db);
}

int main(void)
{
	CHECK(su_tmp_make(dir, sizeof(dir), path, sizeof(path),
			  "gpmdb_prefetch", "pf.pool") == 0);
	TEST_RUN(t_columns);
	TEST_RUN(t_errors);
	su_tmp_remove(dir, path);
	TEST_MAIN_END();
}
