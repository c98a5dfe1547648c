/*
 * test_storage_check.c - stg_check finds deliberate damage: a leaked
 * chunk, an extent in use but free in the bitmap, a wrong deleted count,
 * a catalog loop; and is clean after ordinary work.
 */
#include <stdlib.h>

#include "test_storage_util.h"

static char *check_report(stg_pool *p, int *rc)
{
	char *rep = NULL;

	*rc = stg_check(p, &rep);
	return rep ? rep : strdup("");
}

static stg_pool *make_pool(const char *path, uint32_t *tid)
{
	stg_pool *p = tu_open(path);

	if (!p)
		return NULL;
	CHECK_RC(stg_begin(p), GPMDB_OK);
	*tid = tu_table(p, "t");
	CHECK_RC(tu_append(p, *tid, 0, 2000), GPMDB_OK);
	CHECK_RC(stg_commit(p), GPMDB_OK);
	TU_CHECK_OK(p);
	return p;
}

static void test_leak_and_unmarked(void)
{
	const char *path = tu_path("chk", 0);
	uint32_t tid;
	stg_pool *p = make_pool(path, &tid);
	const stg_superblock *sb;
	const stg_root *root;
	uint8_t *bm, saved;
	uint64_t last, first_used = UINT64_MAX, i;
	char *rep;
	int rc;

	if (!p)
		return;
	sb = stg_pool_base(p, NULL);
	root = (const stg_root *)((const char *)sb + sb->root_off);
	bm = (uint8_t *)sb + sb->bitmap_off;
	last = (root->pool_size - sb->data_off) / sb->chunk_size - 1;
	for (i = 0; i <= last && first_used == UINT64_MAX; i++)
		if (bm[i / 8] & (1u << (i % 8)))
			first_used = i;
	CHECK(first_used != UINT64_MAX);

	/* A leaked chunk: the last one of the pool marked in use. */
	CHECK(!(bm[last / 8] & (1u << (last % 8))));
	bm[last / 8] |= (uint8_t)(1u << (last % 8));
	rep = check_report(p, &rc);
	CHECK(rc == GPMDB_CORRUPT);
	CHECKF(strstr(rep, "leaked extent") != NULL, "report: %s", rep);
	CHECK(strstr(stg_errmsg(p), "leaked") != NULL);
	free(rep);
	bm[last / 8] &= (uint8_t) ~(1u << (last % 8));
	TU_CHECK_OK(p);

	/* A used chunk marked free. */
	saved = bm[first_used / 8];
	bm[first_used / 8] &= (uint8_t) ~(1u << (first_used % 8));
	rep = check_report(p, &rc);
	CHECK(rc == GPMDB_CORRUPT);
	CHECKF(strstr(rep, "not marked allocated") != NULL, "report: %s", rep);
	free(rep);
	bm[first_used / 8] = saved;
	TU_CHECK_OK(p);
	stg_close(p);
	unlink(path);
}

static void test_counts_and_catalog(void)
{
	const char *path = tu_path("chk2", 0);
	uint32_t tid;
	stg_pool *p = make_pool(path, &tid);
	const stg_superblock *sb;
	stg_root *root;
	stg_cat_entry *e;
	uint64_t saved;
	char *rep;
	int rc;

	if (!p)
		return;
	sb = stg_pool_base(p, NULL);
	root = (stg_root *)((char *)sb + sb->root_off);
	e = (stg_cat_entry *)((char *)sb + root->cat_head);
	CHECK(e->magic == STG_CAT_MAGIC);

	saved = e->deleted_count;
	e->deleted_count = 5;
	rep = check_report(p, &rc);
	CHECK(rc == GPMDB_CORRUPT);
	CHECKF(strstr(rep, "deleted count") != NULL, "report: %s", rep);
	free(rep);
	e->deleted_count = saved;

	saved = e->row_count;
	e->row_count = 1u << 30;
	rep = check_report(p, &rc);
	CHECK(rc == GPMDB_CORRUPT);
	CHECKF(strstr(rep, "exceeds the capacity") != NULL, "report: %s", rep);
	free(rep);
	e->row_count = saved;

	/* A catalog entry that points at itself. */
	e->next = root->cat_head;
	rep = check_report(p, &rc);
	CHECK(rc == GPMDB_CORRUPT);
	CHECKF(strstr(rep, "overlaps") != NULL || strstr(rep, "loops") != NULL,
	       "report: %s", rep);
	free(rep);
	e->next = 0;

	/* Two tables sharing an extent. */
	{
		uint32_t t2;
		stg_cat_entry *e2;
		uint64_t tdir;

		CHECK_RC(stg_begin(p), GPMDB_OK);
		t2 = tu_table(p, "u");
		CHECK_RC(tu_append(p, t2, 0, 10), GPMDB_OK);
		CHECK_RC(stg_commit(p), GPMDB_OK);
		TU_CHECK_OK(p);
		/* the append may have grown (and remapped) the pool */
		sb = stg_pool_base(p, NULL);
		root = (stg_root *)((char *)sb + sb->root_off);
		e = (stg_cat_entry *)((char *)sb + root->cat_head);
		e2 = (stg_cat_entry *)((char *)sb + root->cat_tail);
		tdir = e2->tdir;
		e2->tdir = e->tdir;
		rep = check_report(p, &rc);
		CHECK(rc == GPMDB_CORRUPT);
		CHECKF(strstr(rep, "table u: tablet directory: extent at") &&
			   strstr(rep, "overlaps table t"),
		       "report: %s", rep);
		free(rep);
		e2->tdir = tdir;
	}
	TU_CHECK_OK(p);
	stg_close(p);
	unlink(path);
}

/* Clean inside an open transaction too (pending frees, HCL segments). */
static void test_in_txn(void)
{
	const char *path = tu_path("chk3", 0);
	uint32_t tid, col = 1;
	stg_pool *p = make_pool(path, &tid);
	uint64_t rows[2] = {1, 2};
	int32_t nv[2] = {5, 6};
	stg_col_batch vb = {nv, NULL};

	if (!p)
		return;
	CHECK_RC(stg_begin(p), GPMDB_OK);
	CHECK_RC(stg_update(p, tid, 1, &col, rows, 2, &vb), GPMDB_OK);
	TU_CHECK_OK(p);
	CHECK_RC(stg_delete(p, tid, rows, 2), GPMDB_OK);
	TU_CHECK_OK(p);
	CHECK_RC(stg_table_drop(p, tid), GPMDB_OK);
	TU_CHECK_OK(p);
	CHECK_RC(stg_commit(p), GPMDB_OK);
	TU_CHECK_OK(p);
	CHECK(tu_used(p) == 0);
	stg_close(p);
	unlink(path);
}

int main(void)
{
	TEST_RUN(test_leak_and_unmarked);
	TEST_RUN(test_counts_and_catalog);
	TEST_RUN(test_in_txn);
	tu_cleanup();
	TEST_MAIN_END();
}
