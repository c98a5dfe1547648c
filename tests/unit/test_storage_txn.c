/*
 * test_storage_txn.c - transactions: rollback of every kind of change,
 * savepoints, misuse, long transactions of small statements.
 */
#include <stdlib.h>

#include "test_storage_util.h"

static void test_misuse(void)
{
	const char *path = tu_path("misuse", 0);
	stg_pool *p = tu_open(path);
	stg_mark m;
	uint32_t tid;

	if (!p)
		return;
	CHECK_RC(stg_commit(p), GPMDB_MISUSE);
	CHECK_RC(stg_rollback(p), GPMDB_MISUSE);
	CHECK_RC(stg_savepoint(p, &m), GPMDB_MISUSE);
	CHECK_RC(stg_table_create(p, "t", NULL, 0, "", &tid), GPMDB_MISUSE);
	CHECK(strstr(stg_errmsg(p), "transaction") != NULL);
	CHECK_RC(stg_delete(p, 1, NULL, 0), GPMDB_MISUSE);
	CHECK_RC(stg_begin(p), GPMDB_OK);
	CHECK_RC(stg_table_find(p, "nope", &tid), GPMDB_NOTFOUND);
	CHECK_RC(tu_append(p, 77, 0, 1), GPMDB_NOTFOUND);
	CHECK_RC(stg_commit(p), GPMDB_OK); /* an empty transaction */
	stg_close(p);
	unlink(path);
}

static void test_rollback_all(void)
{
	int mode;

	for (mode = 0; mode < 2; mode++) {
		const char *path = tu_path("rb", mode);
		stg_pool *p = tu_open(path);
		uint64_t used, rows[2] = {3, 40};
		uint32_t t1, t2, col = 1, nt;
		int32_t nv[2] = {100, 200};
		stg_col_batch vb = {nv, NULL};
		int32_t v;

		if (!p)
			return;
		CHECK_RC(stg_begin(p), GPMDB_OK);
		t1 = tu_table(p, "t1");
		CHECK_RC(tu_append(p, t1, 0, 50), GPMDB_OK);
		CHECK_RC(stg_commit(p), GPMDB_OK);
		used = tu_used(p);

		/* Append (crossing into a new tablet), create, update,
		 * delete, drop: all rolled back. */
		CHECK_RC(stg_begin(p), GPMDB_OK);
		CHECK_RC(tu_append(p, t1, 50, 3000), GPMDB_OK);
		t2 = tu_table(p, "t2");
		CHECK_RC(tu_append(p, t2, 0, 10), GPMDB_OK);
		CHECK_RC(stg_object_create(p, STG_OBJ_INDEX, "i1", "t1",
					   "CREATE INDEX i1 ON t1(v)"),
			 GPMDB_OK);
		CHECK_RC(stg_update(p, t1, 1, &col, rows, 2, &vb), GPMDB_OK);
		CHECK_RC(stg_delete(p, t1, rows, 2), GPMDB_OK);
		CHECK(stg_deleted_count(p, t1) == 2);
		CHECK_RC(stg_table_drop(p, t1), GPMDB_OK);
		CHECK_RC(stg_table_find(p, "t1", &nt), GPMDB_NOTFOUND);
		TU_CHECK_OK(p);
		CHECK_RC(stg_rollback(p), GPMDB_OK);

		CHECK_RC(stg_table_find(p, "t1", &nt), GPMDB_OK);
		CHECK(nt == t1);
		CHECK_RC(stg_table_find(p, "t2", &nt), GPMDB_NOTFOUND);
		CHECK(tu_verify(p, t1, 50) == 0);
		CHECK(stg_deleted_count(p, t1) == 0);
		CHECK_RC(stg_tablet_count(p, t1, &nt), GPMDB_OK);
		CHECK(nt == 1);
		CHECK(tu_used(p) == used);
		TU_CHECK_OK(p);

		/* Same again, committed, then reopened. */
		CHECK_RC(stg_begin(p), GPMDB_OK);
		CHECK_RC(stg_update(p, t1, 1, &col, rows, 2, &vb), GPMDB_OK);
		CHECK_RC(stg_commit(p), GPMDB_OK);
		CHECK_RC(stg_read(p, t1, 1, 40, 1, &v, NULL), GPMDB_OK);
		CHECK(v == 200);
		TU_CHECK_OK(p);
		stg_close(p);
		unlink(path);
	}
}

static void test_drop_frees(void)
{
	const char *path = tu_path("drop", 0);
	stg_pool *p = tu_open(path);
	uint64_t used0, used1;
	uint32_t tid;

	if (!p)
		return;
	used0 = tu_used(p);
	CHECK_RC(stg_begin(p), GPMDB_OK);
	tid = tu_table(p, "t");
	CHECK_RC(tu_append(p, tid, 0, 20000), GPMDB_OK);
	CHECK_RC(stg_object_create(p, STG_OBJ_INDEX, "ix", "t", "CREATE..."),
		 GPMDB_OK);
	CHECK_RC(stg_commit(p), GPMDB_OK);
	used1 = tu_used(p);
	CHECK(used1 > used0);
	CHECK_RC(stg_begin(p), GPMDB_OK);
	CHECK_RC(stg_table_drop(p, tid), GPMDB_OK);
	/* Freed at commit, not before. */
	CHECK(tu_used(p) == used1);
	TU_CHECK_OK(p);
	CHECK_RC(stg_commit(p), GPMDB_OK);
	CHECK(tu_used(p) == used0);
	{
		stg_object *o;
		int n;

		CHECK_RC(stg_objects_list(p, &o, &n), GPMDB_OK);
		CHECK(n == 0); /* the index went with the table */
		stg_objects_free(o, n);
	}
	TU_CHECK_OK(p);
	stg_close(p);
	unlink(path);
}

static void test_savepoints(void)
{
	const char *path = tu_path("sp", 1);
	stg_pool *p = tu_open(path);
	stg_mark m1, m2, m3;
	uint32_t tid, t2, col = 1;
	uint64_t row = 5;
	int32_t nv = -5, v;
	stg_col_batch vb = {&nv, NULL};

	if (!p)
		return;
	CHECK_RC(stg_begin(p), GPMDB_OK);
	tid = tu_table(p, "t");
	CHECK_RC(stg_savepoint(p, &m1), GPMDB_OK);
	CHECK_RC(tu_append(p, tid, 0, 100), GPMDB_OK);
	CHECK_RC(stg_savepoint(p, &m2), GPMDB_OK);
	CHECK_RC(tu_append(p, tid, 100, 2000), GPMDB_OK);
	CHECK_RC(stg_update(p, tid, 1, &col, &row, 1, &vb), GPMDB_OK);
	t2 = tu_table(p, "t2");
	CHECK_RC(stg_rollback_to(p, &m2), GPMDB_OK);
	CHECK(tu_verify(p, tid, 100) == 0);
	CHECK_RC(stg_table_find(p, "t2", &t2), GPMDB_NOTFOUND);
	TU_CHECK_OK(p);
	/* The same mark again, after more work. */
	CHECK_RC(tu_append(p, tid, 100, 7), GPMDB_OK);
	CHECK_RC(stg_rollback_to(p, &m2), GPMDB_OK);
	CHECK(stg_row_count(p, tid) == 100);
	/* Work after a rollback_to commits normally. */
	CHECK_RC(tu_append(p, tid, 100, 50), GPMDB_OK);
	CHECK_RC(stg_savepoint(p, &m3), GPMDB_OK);
	CHECK_RC(stg_update(p, tid, 1, &col, &row, 1, &vb), GPMDB_OK);
	CHECK_RC(stg_rollback_to(p, &m3), GPMDB_OK);
	CHECK_RC(stg_update(p, tid, 1, &col, &row, 1, &vb), GPMDB_OK);
	/* An earlier mark undoes everything after it. */
	CHECK_RC(stg_rollback_to(p, &m1), GPMDB_OK);
	CHECK(stg_row_count(p, tid) == 0);
	CHECK_RC(tu_append(p, tid, 0, 150), GPMDB_OK);
	CHECK_RC(stg_update(p, tid, 1, &col, &row, 1, &vb), GPMDB_OK);
	CHECK_RC(stg_commit(p), GPMDB_OK);
	TU_CHECK_OK(p);
	stg_close(p);

	p = tu_open_ex(path, false, false, 0, 0);
	if (!p)
		return;
	CHECK(stg_row_count(p, tid) == 150);
	CHECK_RC(stg_read(p, tid, 1, 5, 1, &v, NULL), GPMDB_OK);
	CHECK(v == -5);
	CHECK_RC(stg_table_find(p, "t2", &t2), GPMDB_NOTFOUND);
	TU_CHECK_OK(p);
	stg_close(p);
	unlink(path);
}

/* 100k single-row statements in one transaction, each behind a
 * savepoint as the engine does, some rolled back (across tablet
 * boundaries too): the log must not fill up (a target is logged once per
 * transaction, savepoint images live in DRAM) and each rollback must
 * restore the state at its savepoint. */
static void test_long_txn(void)
{
	const char *path = tu_path("long", 0);
	stg_pool *p = tu_open_ex(path, true, false, 0, 0); /* 8 MiB */
	uint32_t tid;
	stg_mark m;
	int i;

	if (!p)
		return;
	CHECK_RC(stg_begin(p), GPMDB_OK);
	tid = tu_table(p, "t");
	for (i = 0; i < 100000; i++) {
		int rc;

		CHECK_RC(stg_savepoint(p, &m), GPMDB_OK);
		if (i % 997 == 0 || i % 1024 == 1023) {
			/* a failing statement: two rows, then undone */
			rc = tu_append(p, tid, (uint64_t)i, 2);
			CHECK_RC(rc, GPMDB_OK);
			CHECK_RC(stg_rollback_to(p, &m), GPMDB_OK);
			CHECK(stg_row_count(p, tid) == (uint64_t)i);
			CHECK_RC(stg_savepoint(p, &m), GPMDB_OK);
		}
		rc = tu_append(p, tid, (uint64_t)i, 1);
		if (rc != GPMDB_OK) {
			CHECKF(0, "row %d: %s", i, stg_errmsg(p));
			break;
		}
	}
	CHECK_RC(stg_commit(p), GPMDB_OK);
	CHECK(tu_verify(p, tid, 100000) == 0);
	TU_CHECK_OK(p);
	stg_close(p);
	unlink(path);
}

int main(void)
{
	TEST_RUN(test_misuse);
	TEST_RUN(test_rollback_all);
	TEST_RUN(test_drop_frees);
	TEST_RUN(test_savepoints);
	TEST_RUN(test_long_txn);
	tu_cleanup();
	TEST_MAIN_END();
}
