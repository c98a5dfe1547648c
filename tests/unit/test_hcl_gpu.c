/*
 * test_hcl_gpu.c - the storage API of GPU writes (storage/stg_gpu.h)
 * without a GPU: a CPU stands in for the kernels, storing through the
 * offsets the API hands out, in the kernels' order.  Layout offsets,
 * rollback and crash recovery of such a batch, the recovery hook, and
 * appends reserved and finished around the writes.
 */
#include <signal.h>
#include <stdint.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

#include "../storage/stg_gpu.h"
#include "unit/test_storage_util.h"

static stg_pool *setup(const char *path, uint64_t n, uint32_t *tid)
{
	stg_pool *p = tu_open(path);

	if (!p)
		return NULL;
	CHECK_RC(stg_begin(p), GPMDB_OK);
	*tid = tu_table(p, "t");
	CHECK_RC(tu_append(p, *tid, 0, n), GPMDB_OK);
	CHECK_RC(stg_commit(p), GPMDB_OK);
	return p;
}

static void t_layout(void)
{
	uint32_t tid, cnt = 0;
	stg_pool *p = setup(tu_path("hg_lay", 0), 5000, &tid);
	stg_gpu_layout l;
	uint64_t len;
	char *base;

	if (!p)
		return;
	base = stg_pool_base(p, &len);
	CHECK_RC(stg_gpu_layout_get(p, tid, &l), GPMDB_OK);
	CHECK_RC(stg_tablet_count(p, tid, &cnt), GPMDB_OK);
	CHECK(l.ntab == cnt && l.ncols == 4 && l.stride == 9);
	CHECK(l.row_count == 5000 && l.widths[0] == 8 && l.widths[1] == 4);
	for (uint32_t i = 0; i < cnt; i++) {
		stg_tablet_view v;

		CHECK_RC(stg_tablet_get(p, tid, i, &v), GPMDB_OK);
		CHECK(v.first_row == stg_tab_first_row(i));
		CHECK(v.capacity == stg_tab_capacity(i));
		for (int c = 0; c < 4; c++) {
			CHECK(base + l.tab[i * l.stride + 2 * c] == v.data[c]);
			CHECK(base + l.tab[i * l.stride + 2 * c + 1] ==
			      (const char *)v.nulls[c]);
		}
		CHECK(base + l.tab[i * l.stride + 8] ==
		      (const char *)v.deleted);
	}
	for (uint64_t r = 0; r < 5000; r += 97)
		CHECK(stg_tab_index_of(r) < cnt &&
		      r >= stg_tab_first_row(stg_tab_index_of(r)) &&
		      r < stg_tab_first_row(stg_tab_index_of(r)) +
			      stg_tab_capacity(stg_tab_index_of(r)));
	stg_gpu_layout_free(&l);
	stg_close(p);
}

/* What a GPU UPDATE of column v (1) to 7 does for rows [0, k) of n
 * (entry, tail, data: the kernels' order), without persisting. */
static void fake_update(stg_pool *p, uint32_t tid, uint64_t n, uint64_t k,
			stg_hcl_seg *seg)
{
	stg_gpu_layout l;
	uint64_t len;
	char *base;

	CHECK_RC(stg_gpu_layout_get(p, tid, &l), GPMDB_OK);
	CHECK_RC(stg_hcl_begin_gpu(p, tid, 0, NULL, n, 1, seg), GPMDB_OK);
	base = stg_pool_base(p, &len); /* after the segment's allocation */
	for (uint64_t r = 0; r < k; r++) {
		uint64_t ti = stg_tab_index_of(r),
			 lr = r - stg_tab_first_row(ti);
		int32_t *v = (int32_t *)(base + l.tab[ti * l.stride + 2]);
		uint32_t *nl = (uint32_t *)(base + l.tab[ti * l.stride + 3]);
		hcl_entry en = {HCL_K_VALUE, 1, r, (uint32_t)v[lr],
				(nl[lr >> 5] >> (lr & 31)) & 1u};

		hcl_cpu_put(base + seg->seg_off, &seg->geom, r, 0, &en);
		hcl_cpu_set_tail(base + seg->seg_off, &seg->geom, r, 1);
		v[lr] = 7;
		nl[lr >> 5] &= ~(1u << (lr & 31));
	}
	stg_gpu_layout_free(&l);
}

static void t_update_rollback_commit(void)
{
	uint32_t tid;
	const char *path = tu_path("hg_upd", 0);
	stg_pool *p = setup(path, 3000, &tid);
	stg_hcl_seg seg;
	int32_t v[3000];

	if (!p)
		return;
	CHECK_RC(stg_begin(p), GPMDB_OK);
	fake_update(p, tid, 3000, 3000, &seg);
	CHECK(seg.seg_size == hcl_segment_bytes(&seg.geom));
	CHECK(seg.geom.threads_per_block == 256 && seg.geom.nblocks == 12);
	CHECK_RC(stg_hcl_end(p, tid, &seg, 3000 * 8, false, 0), GPMDB_OK);
	CHECK_RC(stg_rollback(p), GPMDB_OK);
	CHECK(tu_verify(p, tid, 3000) == 0);
	TU_CHECK_OK(p);
	CHECK_RC(stg_begin(p), GPMDB_OK);
	fake_update(p, tid, 3000, 3000, &seg);
	CHECK_RC(stg_hcl_end(p, tid, &seg, 0, false, 0), GPMDB_OK);
	CHECK_RC(stg_commit(p), GPMDB_OK);
	CHECK_RC(stg_read(p, tid, 1, 0, 3000, v, NULL), GPMDB_OK);
	CHECK(v[0] == 7 && v[2999] == 7);
	TU_CHECK_OK(p);
	/* bad arguments */
	CHECK_RC(stg_hcl_begin_gpu(p, tid, 0, NULL, 10, 1, &seg), GPMDB_MISUSE);
	CHECK_RC(stg_begin(p), GPMDB_OK);
	CHECK_RC(stg_hcl_begin_gpu(p, tid, 0, NULL, 0, 1, &seg), GPMDB_MISUSE);
	CHECK_RC(stg_hcl_begin_gpu(p, 999, 0, NULL, 10, 1, &seg),
		 GPMDB_NOTFOUND);
	CHECK_RC(stg_rollback(p), GPMDB_OK);
	stg_close(p);
}

static int hook_calls;
static uint64_t hook_seg;

static int decline_hook(const stg_hcl_undo_job *job, uint64_t *applied)
{
	hook_calls++;
	hook_seg = job->seg_off;
	*applied = 0;
	CHECK(job->layout && job->layout->ncols == 4 &&
	      job->layout->row_count == 3000 && job->base && job->map_len);
	return GPMDB_UNSUPPORTED;
}

/* The hook's own undo, done with hcl_foreach on the CPU: what a GPU
 * recovery kernel does (only VALUE entries of column 1 here). */
static int undo_visit(void *ctx, const hcl_entry *en)
{
	const stg_hcl_undo_job *job = ctx;
	const stg_gpu_layout *l = job->layout;
	uint64_t ti = stg_tab_index_of(en->row), lr;

	if (en->row >= l->row_count)
		return 0;
	lr = en->row - stg_tab_first_row(ti);
	((int32_t *)(job->base + l->tab[ti * l->stride + 2 * en->col]))[lr] =
	    (int32_t)en->old_value;
	uint32_t *nl =
	    (uint32_t *)(job->base + l->tab[ti * l->stride + 2 * en->col + 1]);
	if (en->old_null)
		nl[lr >> 5] |= 1u << (lr & 31);
	else
		nl[lr >> 5] &= ~(1u << (lr & 31));
	return 0;
}

static int apply_hook(const stg_hcl_undo_job *job, uint64_t *applied)
{
	hook_calls++;
	*applied = 1;
	return hcl_foreach(job->base + job->seg_off, job->seg_size, undo_visit,
			   (void *)job);
}

/* A child dies half way through a fake GPU update; recovery (by the CPU,
 * a declining hook, or a hook that undoes) restores the table. */
static void crash_case(stg_hcl_undo_hook hook, const char *tag)
{
	uint32_t tid;
	const char *path = tu_path(tag, 0);
	stg_pool *p = setup(path, 3000, &tid);
	stg_gpu_recovery_stats rs;
	stg_stats st;
	pid_t pid;
	int wst;

	if (!p)
		return;
	stg_close(p);
	pid = fork();
	if (pid == 0) {
		stg_hcl_seg seg;
		stg_pool *c = tu_open_ex(path, false, false, 0, 0);

		if (c && stg_begin(c) == GPMDB_OK)
			fake_update(c, tid, 3000, 1700, &seg);
		raise(SIGKILL);
		_exit(1);
	}
	waitpid(pid, &wst, 0);
	CHECK(WIFSIGNALED(wst));
	hook_calls = 0;
	stg_gpu_recovery_reset();
	stg_set_hcl_undo_hook(hook);
	p = tu_open_ex(path, false, false, 0, 0);
	stg_set_hcl_undo_hook(NULL);
	if (!p)
		return;
	stg_gpu_recovery_last(&rs);
	stg_get_stats(p, &st);
	CHECK(tu_verify(p, tid, 3000) == 0);
	TU_CHECK_OK(p);
	CHECK(hook_calls == (hook ? 1 : 0));
	CHECK(rs.segments == (hook == apply_hook ? 1u : 0u));
	CHECK(rs.cpu_segments == (hook == apply_hook ? 0u : 1u));
	CHECK(hook != apply_hook || rs.entries == 1);
	CHECK(st.recovered_entries > 0);
	stg_close(p);
}

static void t_crash_cpu(void)
{
	crash_case(NULL, "hg_c1");
}

static void t_crash_hook_declines(void)
{
	crash_case(decline_hook, "hg_c2");
	CHECK(hook_seg != 0);
}

static void t_crash_hook_applies(void)
{
	crash_case(apply_hook, "hg_c3");
}

/* INSERT: reserve, write through the layout, finish. */
static void t_append(void)
{
	const char *path = tu_path("hg_app", 0);
	stg_pool *p = tu_open(path);
	stg_column_def c[2] = {
	    {.name = "id", .type = STG_T_BIGINT, .flags = STG_COL_NOTNULL},
	    {.name = "b", .type = STG_T_BOOLEAN}};
	uint32_t tid = 0, tt = 0;
	int64_t ids[6000];
	uint8_t bs[6000];
	uint32_t bn[200] = {0};
	stg_col_batch cols[2] = {{ids, NULL}, {bs, bn}};
	uint64_t start = 99, len;
	stg_gpu_layout l;

	if (!p)
		return;
	for (int i = 0; i < 6000; i++) {
		ids[i] = i;
		bs[i] = i & 1;
		if (i % 5 == 0)
			bn[i / 32] |= 1u << (i % 32);
	}
	CHECK_RC(stg_begin(p), GPMDB_OK);
	CHECK_RC(stg_table_create(p, "a", c, 2, "CREATE TABLE a", &tid),
		 GPMDB_OK);
	CHECK_RC(stg_append(p, tid, cols, 1000), GPMDB_OK);
	CHECK_RC(stg_append_reserve(p, tid, cols, 5000, &start), GPMDB_OK);
	CHECK(start == 1000);
	CHECK_RC(stg_gpu_layout_get(p, tid, &l), GPMDB_OK);
	char *base = stg_pool_base(p, &len);
	for (uint64_t r = start; r < start + 5000; r++) {
		uint64_t ti = stg_tab_index_of(r),
			 lr = r - stg_tab_first_row(ti);
		uint64_t *t = l.tab + ti * l.stride;
		uint32_t *nb = (uint32_t *)(base + t[3]);
		uint32_t *db = (uint32_t *)(base + t[4]);
		bool isn = (bn[r / 32] >> (r % 32)) & 1;

		((int64_t *)(base + t[0]))[lr] = ids[r];
		((uint8_t *)(base + t[2]))[lr] = bs[r];
		if (isn)
			nb[lr >> 5] |= 1u << (lr & 31);
		else
			nb[lr >> 5] &= ~(1u << (lr & 31));
		db[lr >> 5] &= ~(1u << (lr & 31));
	}
	stg_gpu_layout_free(&l);
	CHECK_RC(stg_append_finish(p, tid, start, 4999, 0), GPMDB_OK);
	CHECK(stg_row_count(p, tid) == 5999);
	CHECK_RC(stg_commit(p), GPMDB_OK);
	{
		int64_t got[5999];
		uint8_t gb[5999];
		uint32_t gn[200] = {0};

		CHECK_RC(stg_read(p, tid, 0, 0, 5999, got, NULL), GPMDB_OK);
		CHECK_RC(stg_read(p, tid, 1, 0, 5999, gb, gn), GPMDB_OK);
		for (int i = 0; i < 5999; i++) {
			bool isn = (gn[i / 32] >> (i % 32)) & 1;
			if (got[i] != i || isn != (i % 5 == 0) ||
			    (!isn && gb[i] != (i & 1))) {
				CHECKF(0, "row %d", i);
				break;
			}
		}
	}
	TU_CHECK_OK(p);
	/* reserved, then rolled back: nothing changed, nothing leaked */
	CHECK_RC(stg_begin(p), GPMDB_OK);
	CHECK_RC(stg_append_reserve(p, tid, cols, 6000, &start), GPMDB_OK);
	CHECK_RC(stg_rollback(p), GPMDB_OK);
	CHECK(stg_row_count(p, tid) == 5999);
	TU_CHECK_OK(p);
	/* NOT NULL, TEXT, a finish at the wrong start */
	CHECK_RC(stg_begin(p), GPMDB_OK);
	cols[0].nulls = bn;
	CHECK_RC(stg_append_reserve(p, tid, cols, 10, &start),
		 GPMDB_CONSTRAINT);
	cols[0].nulls = NULL;
	CHECK_RC(stg_append_finish(p, tid, 5, 10, 0), GPMDB_MISUSE);
	tt = tu_table(p, "withtext");
	CHECK_RC(stg_append_reserve(p, tt, cols, 10, &start),
		 GPMDB_UNSUPPORTED);
	CHECK_RC(stg_rollback(p), GPMDB_OK);
	stg_close(p);
}

/*
 * INSERT from INT32 arrays (stg_append_reserve_from, STG_FROM_I32): the
 * unique index's check reads the int32 keys as they are (rising keys
 * past the tree, falling keys sorted, a duplicate refused whole, its row
 * named), the entries stg_append_finish makes find the rows, and a
 * widening that does not fit the column is refused.
 */
static void t_append_from(void)
{
	enum { M = 100000 };
	const char *path = tu_path("hg_from", 0);
	stg_pool *p = tu_open(path);
	stg_column_def c[2] = {
	    {.name = "id", .type = STG_T_BIGINT, .flags = STG_COL_NOTNULL},
	    {.name = "b", .type = STG_T_INT}};
	int32_t *id = malloc(4 * M), *b = malloc(4 * M);
	uint8_t from[2] = {STG_FROM_I32, STG_FROM_SAME};
	stg_col_batch cols[2] = {{id, NULL}, {b, NULL}};
	uint32_t tid = 0, col0 = 0, ix = 0;
	uint64_t start = 0, len;
	stg_gpu_layout l;

	CHECK(p && id && b);
	if (!p || !id || !b)
		goto out;
	for (int i = 0; i < M; i++) {
		id[i] = i - M / 2; /* negative keys: sign-extended order */
		b[i] = i;
	}
	CHECK_RC(stg_begin(p), GPMDB_OK);
	CHECK_RC(stg_table_create(p, "f", c, 2, "CREATE TABLE f", &tid),
		 GPMDB_OK);
	CHECK_RC(stg_index_create(p, tid, "f_id", &col0, 1, true, STG_IX_UNIQUE,
				  NULL, &ix),
		 GPMDB_OK);
	/* rising keys; the kernels' stores done here, widened */
	CHECK_RC(stg_append_reserve_from(p, tid, cols, from, M, &start),
		 GPMDB_OK);
	CHECK_RC(stg_gpu_layout_get(p, tid, &l), GPMDB_OK);
	char *base = stg_pool_base(p, &len);
	for (uint64_t r = start; r < start + M; r++) {
		uint64_t ti = stg_tab_index_of(r),
			 lr = r - stg_tab_first_row(ti);
		uint64_t *t = l.tab + ti * l.stride;

		((int64_t *)(base + t[0]))[lr] = id[r - start];
		((int32_t *)(base + t[2]))[lr] = b[r - start];
	}
	stg_gpu_layout_free(&l);
	CHECK_RC(stg_append_finish(p, tid, start, M, 0), GPMDB_OK);
	CHECK_RC(stg_commit(p), GPMDB_OK);
	TU_CHECK_OK(p);
	{
		int64_t k[2] = {-M / 2 + 17, M}, got[2] = {0, 0};
		stg_col_batch kb = {k, NULL};

		CHECK_RC(stg_index_probe(p, ix, &kb, 2, got), GPMDB_OK);
		CHECKF(got[0] == 17 && got[1] == -1, "probe: %lld %lld",
		       (long long)got[0], (long long)got[1]);
	}
	/* falling keys above them, then a batch whose key 3 is taken */
	for (int i = 0; i < 1000; i++)
		id[i] = M + 1000 - i;
	CHECK_RC(stg_begin(p), GPMDB_OK);
	CHECK_RC(stg_append_reserve_from(p, tid, cols, from, 1000, &start),
		 GPMDB_OK);
	CHECK_RC(stg_rollback(p), GPMDB_OK);
	id[3] = -5;
	CHECK_RC(stg_begin(p), GPMDB_OK);
	CHECK_RC(stg_append_reserve_from(p, tid, cols, from, 1000, &start),
		 GPMDB_CONSTRAINT);
	CHECKF(strstr(stg_errmsg(p), "UNIQUE") != NULL, "%s", stg_errmsg(p));
	/* INT32 values widened into an INT column: refused */
	from[0] = STG_FROM_SAME;
	from[1] = STG_FROM_I32;
	id[3] = 2 * M;
	CHECK_RC(stg_append_reserve_from(p, tid, cols, from, 1000, &start),
		 GPMDB_MISUSE);
	CHECK_RC(stg_rollback(p), GPMDB_OK);
	CHECK(stg_row_count(p, tid) == M);
	TU_CHECK_OK(p);
	stg_close(p);
out:
	free(id);
	free(b);
}

int main(void)
{
	TEST_RUN(t_layout);
	TEST_RUN(t_update_rollback_commit);
	TEST_RUN(t_crash_cpu);
	TEST_RUN(t_crash_hook_declines);
	TEST_RUN(t_crash_hook_applies);
	TEST_RUN(t_append);
	TEST_RUN(t_append_from);
	tu_cleanup();
	TEST_MAIN_END();
}
