/*
 * test_storage_pool.c - pool files: create/reopen, superblock fields,
 * durability detection, names, readonly opens, the writer lock, growth and
 * the size limit, crash-point parsing.
 */
#include <signal.h>
#include <stdlib.h>
#include <sys/file.h>
#include <zlib.h>

#include "test_storage_util.h"

static void test_names(void)
{
	stg_durability d;

	CHECK(strcmp(gpmdb_errstr(GPMDB_BUSY), "database is locked") == 0);
	CHECK(strcmp(gpmdb_errstr(GPMDB_FULL), "database or disk is full") ==
	      0);
	CHECK(strcmp(gpmdb_errstr(GPMDB_NOTADB), "file is not a database") ==
	      0);
	CHECK(strcmp(gpmdb_errstr(GPMDB_CORRUPT),
		     "database disk image is malformed") == 0);
	CHECK(strcmp(gpmdb_errstr(12345), "unknown error") == 0);
	CHECK(strcmp(gpmdb_libversion(), GPMDB_VERSION) == 0);
	CHECK_RC(stg_durability_parse("PMEM", &d), GPMDB_OK);
	CHECK(d == STG_DUR_PMEM);
	CHECK_RC(stg_durability_parse("msync", &d), GPMDB_OK);
	CHECK(d == STG_DUR_MSYNC);
	CHECK_RC(stg_durability_parse("off", &d), GPMDB_OK);
	CHECK(d == STG_DUR_OFF);
	CHECK_RC(stg_durability_parse("auto", &d), GPMDB_OK);
	CHECK(d == STG_DUR_AUTO);
	CHECK(stg_durability_parse("fast", &d) != GPMDB_OK);
	CHECK(strcmp(stg_durability_name(STG_DUR_MSYNC), "msync") == 0);
	CHECK(stg_type_width(STG_T_INT) == 4);
	CHECK(stg_type_width(STG_T_BIGINT) == 8);
	CHECK(stg_type_width(STG_T_FLOAT) == 4);
	CHECK(stg_type_width(STG_T_DOUBLE) == 8);
	CHECK(stg_type_width(STG_T_DECIMAL) == 8);
	CHECK(stg_type_width(STG_T_DATE) == 4);
	CHECK(stg_type_width(STG_T_BOOLEAN) == 1);
	CHECK(stg_type_width(STG_T_TEXT) == sizeof(stg_strref));
	CHECK(strcmp(stg_type_name(STG_T_TEXT), "TEXT") == 0);
}

static void test_create_reopen(void)
{
	int mode;

	for (mode = 0; mode < 2; mode++) {
		const char *path = tu_path("create", mode);
		stg_superblock sb;
		stg_stats st;
		stg_pool *p;
		uint32_t tid, t2;
		int fd;

		p = tu_open(path);
		if (!p)
			return;
		CHECK(stg_pool_durability(p) ==
		      (mode ? STG_DUR_MSYNC : STG_DUR_PMEM));
		CHECK(!stg_pool_readonly(p));
		CHECK_RC(stg_get_stats(p, &st), GPMDB_OK);
		CHECK(st.pool_size == 1u << 20);
		CHECK(st.max_size == STG_DEFAULT_MAX_SIZE);
		CHECK(st.used_bytes == 0);
		CHECK(!stg_in_txn(p));
		CHECK_RC(stg_begin(p), GPMDB_OK);
		CHECK(stg_in_txn(p));
		CHECK_RC(stg_begin(p), GPMDB_MISUSE);
		tid = tu_table(p, "t");
		CHECK_RC(tu_append(p, tid, 0, 100), GPMDB_OK);
		CHECK_RC(stg_commit(p), GPMDB_OK);
		CHECK_RC(stg_get_stats(p, &st), GPMDB_OK);
		CHECK(st.bytes_persisted > 0);
		CHECK(st.used_bytes > 0);
		TU_CHECK_OK(p);
		CHECK_RC(stg_close(p), GPMDB_OK);

		/* The superblock as other tools read it. */
		fd = open(path, O_RDONLY);
		CHECK(fd >= 0);
		CHECK(pread(fd, &sb, sizeof(sb), 0) == (ssize_t)sizeof(sb));
		close(fd);
		CHECK(memcmp(sb.magic, "GPMDBPL1", 8) == 0);
		CHECK(sb.version == STG_FORMAT_VERSION && sb.version == 5);
		CHECK(sb.sb_size == 4096);
		CHECK(sb.crc == (uint32_t)crc32(0, (const Bytef *)&sb, 4092));
		CHECK(sb.data_off % sb.chunk_size == 0);

		p = tu_open_ex(path, false, false, 0, 0);
		if (!p)
			return;
		CHECK_RC(stg_table_find(p, "T", &t2), GPMDB_OK);
		CHECK(t2 == tid);
		CHECK(tu_verify(p, tid, 100) == 0);
		TU_CHECK_OK(p);
		stg_close(p);
		unlink(path);
	}
}

static void test_durability_opt(void)
{
	const char *path = tu_path("dur", 0);
	stg_open_opts o = {.create = true, .durability = STG_DUR_OFF};
	stg_stats st;
	char err[256];
	stg_pool *p;
	uint32_t tid;

	CHECK_RC(stg_open(path, &o, &p, err, sizeof(err)), GPMDB_OK);
	if (!p)
		return;
	CHECK(stg_pool_durability(p) == STG_DUR_OFF);
	CHECK_RC(stg_begin(p), GPMDB_OK);
	tid = tu_table(p, "t");
	CHECK_RC(tu_append(p, tid, 0, 10), GPMDB_OK);
	CHECK_RC(stg_commit(p), GPMDB_OK);
	stg_get_stats(p, &st);
	CHECK(st.bytes_persisted == 0);
	stg_close(p);
	o.durability = STG_DUR_MSYNC;
	CHECK_RC(stg_open(path, &o, &p, err, sizeof(err)), GPMDB_OK);
	if (!p)
		return;
	CHECK(stg_pool_durability(p) == STG_DUR_MSYNC);
	CHECK(tu_verify(p, tid, 10) == 0);
	stg_close(p);
	unlink(path);
}

static void test_readonly(void)
{
	const char *path = tu_path("ro", 1);
	stg_pool *p, *r;
	tu_snap s;
	uint32_t tid;
	char *rep = NULL;

	p = tu_open(path);
	if (!p)
		return;
	CHECK_RC(stg_begin(p), GPMDB_OK);
	tid = tu_table(p, "t");
	CHECK_RC(tu_append(p, tid, 0, 50), GPMDB_OK);
	CHECK_RC(stg_commit(p), GPMDB_OK);
	stg_close(p);
	tu_snap_take(path, &s);
	r = tu_open_ex(path, false, true, 0, 0);
	if (!r)
		return;
	CHECK(stg_pool_readonly(r));
	CHECK(tu_verify(r, tid, 50) == 0);
	CHECK_RC(stg_begin(r), GPMDB_READONLY);
	CHECK(strstr(stg_errmsg(r), "readonly") != NULL);
	CHECK_RC(stg_append(r, tid, NULL, 1), GPMDB_READONLY);
	CHECK_RC(stg_check(r, &rep), GPMDB_OK);
	CHECK(rep && strcmp(rep, "ok") == 0);
	free(rep);
	stg_close(r);
	CHECK(tu_snap_same(path, &s));
	free(s.data);
	unlink(path);
}

/* Two connections open for writing; the write lock is per transaction:
 * a second stg_begin fails (busy timeout 0) or waits (storage/lock.c). */
static void test_lock(void)
{
	const char *path = tu_path("lock", 0);
	stg_open_opts o = {0}, ro = {.readonly = true};
	stg_pool *p, *q = NULL, *r = NULL;
	char err[256];

	p = tu_open(path);
	if (!p)
		return;
	CHECK_RC(stg_open(path, &o, &q, err, sizeof(err)), GPMDB_OK);
	CHECK_RC(stg_begin(p), GPMDB_OK);
	if (q) {
		CHECK_RC(stg_begin(q), GPMDB_BUSY);
		CHECK(strstr(stg_errmsg(q), "database is locked") != NULL);
		stg_busy_timeout(q, 100);
		CHECK_RC(stg_begin(q), GPMDB_BUSY);
	}
	CHECK_RC(stg_open(path, &ro, &r, err, sizeof(err)), GPMDB_OK);
	stg_close(r);
	CHECK_RC(stg_commit(p), GPMDB_OK);
	if (q) {
		CHECK_RC(stg_begin(q), GPMDB_OK);
		CHECK_RC(stg_begin(p), GPMDB_BUSY);
		CHECK_RC(stg_rollback(q), GPMDB_OK);
		stg_close(q);
	}
	CHECK_RC(stg_begin(p), GPMDB_OK);
	CHECK_RC(stg_rollback(p), GPMDB_OK);
	stg_close(p);
	CHECK_RC(stg_open(path, &o, &q, err, sizeof(err)), GPMDB_OK);
	stg_close(q);
	unlink(path);
}

static void test_growth_and_full(void)
{
	int mode;

	for (mode = 0; mode < 2; mode++) {
		const char *path = tu_path("grow", mode);
		stg_pool *p;
		stg_stats st;
		uint32_t tid;
		uint64_t rows = 0;
		int rc = GPMDB_OK, i;
		struct stat fst;

		/* 1 MiB to start, 6 MiB at most. */
		p = tu_open_ex(path, true, false, 1u << 20, 6u << 20);
		if (!p)
			return;
		CHECK_RC(stg_begin(p), GPMDB_OK);
		tid = tu_table(p, "t");
		CHECK_RC(stg_commit(p), GPMDB_OK);
		for (i = 0; i < 100 && rc == GPMDB_OK; i++) {
			CHECK_RC(stg_begin(p), GPMDB_OK);
			rc = tu_append(p, tid, rows, 20000);
			if (rc == GPMDB_OK) {
				CHECK_RC(stg_commit(p), GPMDB_OK);
				rows += 20000;
			} else {
				CHECK_RC(stg_rollback(p), GPMDB_OK);
			}
		}
		CHECKF(rc == GPMDB_FULL, "rc %d: %s", rc, stg_errmsg(p));
		CHECK(rows > 20000);
		stg_get_stats(p, &st);
		CHECK(st.pool_size > (1u << 20));
		CHECK(st.pool_size <= st.max_size);
		CHECK(tu_verify(p, tid, rows) == 0);
		TU_CHECK_OK(p);
		stg_close(p);
		CHECK(stat(path, &fst) == 0 && fst.st_size > (1 << 20));
		p = tu_open_ex(path, false, false, 0, 0);
		if (!p)
			return;
		CHECK(tu_verify(p, tid, rows) == 0);
		TU_CHECK_OK(p);
		stg_close(p);
		unlink(path);
	}
}

static void crash_child(void *arg)
{
	const char *path = arg;
	stg_pool *p = tu_open_ex(path, false, false, 0, 0);

	setenv("GPMDB_CRASH_AT", "append.count:2", 1);
	if (!p)
		_exit(3);
	stg_begin(p);
	tu_append(p, 1, 0, 10);
	stg_commit(p);
	stg_begin(p);
	tu_append(p, 1, 10, 10); /* killed here */
	_exit(4);
}

static void test_crash_point(void)
{
	const char *path = tu_path("cp", 0);
	stg_pool *p = tu_open(path);
	uint32_t tid;
	int st;

	if (!p)
		return;
	CHECK_RC(stg_begin(p), GPMDB_OK);
	tid = tu_table(p, "t");
	CHECK_RC(stg_commit(p), GPMDB_OK);
	CHECK(tid == 1);
	stg_close(p);
	st = tu_child(crash_child, (void *)path);
	CHECKF(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL, "status %x", st);
	p = tu_open_ex(path, false, false, 0, 0);
	if (!p)
		return;
	CHECK(tu_verify(p, tid, 10) == 0);
	TU_CHECK_OK(p);
	stg_close(p);
	unlink(path);
}

/* ":memory:" and "": anonymous pools that grow, roll back, stay apart
 * and leave no file behind; not read-only. */
static void test_memory(void)
{
	const char *names[] = {":memory:", ""};

	for (int k = 0; k < 2; k++) {
		stg_pool *p = tu_open_ex(names[k], true, false, 1u << 20, 0);
		stg_pool *q = tu_open_ex(names[k], true, false, 0, 0);
		stg_stats st;
		uint32_t tid, tq;

		if (!p || !q)
			return;
		stg_get_stats(p, &st);
		CHECK(st.durability == STG_DUR_OFF);
		CHECK_RC(stg_begin(p), GPMDB_OK);
		tid = tu_table(p, "t");
		CHECK_RC(tu_append(p, tid, 0, 50000), GPMDB_OK); /* grows */
		CHECK_RC(stg_commit(p), GPMDB_OK);
		CHECK_RC(stg_begin(p), GPMDB_OK);
		CHECK_RC(tu_append(p, tid, 50000, 10), GPMDB_OK);
		CHECK_RC(stg_rollback(p), GPMDB_OK);
		CHECK(tu_verify(p, tid, 50000) == 0);
		stg_get_stats(p, &st);
		CHECK(st.pool_size > (1u << 20));
		TU_CHECK_OK(p);
		/* a second open is another database */
		CHECK_RC(stg_table_find(q, "t", &tq), GPMDB_NOTFOUND);
		stg_close(q);
		stg_close(p);
		CHECK(access(":memory:", F_OK) != 0);
	}
	{
		stg_open_opts o = {0};
		stg_pool *p = NULL;
		char err[512] = "";

		o.readonly = true;
		CHECK_RC(stg_open(":memory:", &o, &p, err, sizeof(err)),
			 GPMDB_CANTOPEN);
		CHECKF(strstr(err, "cannot be opened read-only") != NULL, "%s",
		       err);
	}
}

int main(void)
{
	TEST_RUN(test_names);
	TEST_RUN(test_create_reopen);
	TEST_RUN(test_durability_opt);
	TEST_RUN(test_readonly);
	TEST_RUN(test_lock);
	TEST_RUN(test_growth_and_full);
	TEST_RUN(test_crash_point);
	TEST_RUN(test_memory);
	tu_cleanup();
	TEST_MAIN_END();
}
