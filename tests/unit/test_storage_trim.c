/*
 * test_storage_trim.c - heaps sized for a bulk append and trimmed at
 * commit (tablet.c ensure_heap, tab_trim_heaps), tablets made by a
 * transaction laid out for their rows at commit (tablet_compact) and
 * moved to a full extent when appends go past them (tablet_move): the
 * unused room given back, nothing of it before the commit or after a
 * rollback, appends, UPDATEs and DELETEs on trimmed tablets, rollbacks of
 * a regrowth, no trimmed tablet in a pool of format version 2, stg_check
 * clean after every step, in pmem and msync mode, and across a reopen.
 */
#include <stdlib.h>
#include <zlib.h>

#include "test_storage_util.h"

/* bytes of storage_info's row name */
static uint64_t info_bytes(stg_pool *p, uint32_t tid, const char *name)
{
	stg_storage_row *r = NULL;
	uint64_t v = UINT64_MAX;
	int n = 0;

	CHECK_RC(stg_storage_info(p, tid, &r, &n), GPMDB_OK);
	for (int i = 0; i < n; i++)
		if (!strcmp(r[i].name, name))
			v = r[i].bytes;
	free(r);
	return v;
}

/* The sum of storage_info's rows against stg_table_bytes. */
static void check_sums(stg_pool *p, uint32_t tid)
{
	stg_storage_row *r = NULL;
	uint64_t sum = 0, tb = 0;
	int n = 0;

	CHECK_RC(stg_storage_info(p, tid, &r, &n), GPMDB_OK);
	for (int i = 0; i < n; i++)
		sum += r[i].bytes;
	free(r);
	CHECK_RC(stg_table_bytes(p, tid, &tb), GPMDB_OK);
	CHECKF(sum == tb, "storage_info %llu, table_bytes %llu",
	       (unsigned long long)sum, (unsigned long long)tb);
}

/* Sets s of rows ids to "long<id>xxxxxxxx...". */
static int update_text(stg_pool *p, uint32_t tid, const uint64_t *ids,
		       uint64_t n, char *buf)
{
	stg_text *t = malloc(n * sizeof(*t));
	static const uint32_t col[] = {2};
	stg_col_batch b;
	size_t at = 0;
	int rc;

	for (uint64_t i = 0; i < n; i++) {
		t[i].ptr = buf + at;
		t[i].len = (uint32_t)sprintf(buf + at, "long%llu%040d",
					     (unsigned long long)ids[i], 7);
		at += t[i].len;
	}
	b = (stg_col_batch){t, NULL};
	rc = stg_update(p, tid, 1, col, ids, n, &b);
	free(t);
	return rc;
}

static void run(int mode)
{
	const char *path = tu_path("trim", mode);
	/* at most 256 MiB: 4 KiB chunks */
	stg_pool *p = tu_open_ex(path, true, false, 1u << 20, 256u << 20);
	uint64_t before, after, size0, rows = 0, ids[300], room0, room1;
	char *buf = malloc(300 * 64);
	uint32_t tid;

	if (!p)
		return;
	/* 3072 + 300 rows: tablets 0 and 1 full, tablet 2 (4096 rows)
	 * holds 300: its heap sized for 4096 rows of the batch's bytes */
	CHECK_RC(stg_begin(p), GPMDB_OK);
	tid = tu_table(p, "t");
	CHECK_RC(tu_append(p, tid, 0, 3372), GPMDB_OK);
	rows = 3372;
	before = info_bytes(p, tid, "(heap unused)");
	CHECKF(before >= 8192, "heap unused before commit %llu",
	       (unsigned long long)before);
	room0 = info_bytes(p, tid, "(unused capacity)");
	CHECK_RC(stg_commit(p), GPMDB_OK);
	/* tablet 2: room for 1024 rows, not 4096 (28 bytes a row) */
	room1 = info_bytes(p, tid, "(unused capacity)");
	CHECKF(room1 + 3072 * 28 <= room0 + 4096,
	       "unused capacity %llu, was %llu", (unsigned long long)room1,
	       (unsigned long long)room0);
	after = info_bytes(p, tid, "(heap unused)");
	/* each of the three heaps keeps less than a 4 KiB chunk */
	CHECKF(after < 3 * 4096 && after < before, "heap unused %llu, was %llu",
	       (unsigned long long)after, (unsigned long long)before);
	TU_CHECK_OK(p);
	CHECK(tu_verify(p, tid, rows) == 0);
	check_sums(p, tid);

	/* a rolled back bulk append leaves the sizes as they were */
	size0 = info_bytes(p, tid, "(heap unused)");
	CHECK_RC(stg_begin(p), GPMDB_OK);
	CHECK_RC(tu_append(p, tid, rows, 600), GPMDB_OK);
	CHECK_RC(stg_rollback(p), GPMDB_OK);
	CHECK(info_bytes(p, tid, "(heap unused)") == size0);
	CHECK(tu_verify(p, tid, rows) == 0);
	TU_CHECK_OK(p);

	/* row-at-a-time appends to the trimmed tablet 2: its heap grows
	 * again (doubling), one transaction, then one each */
	CHECK_RC(stg_begin(p), GPMDB_OK);
	for (int i = 0; i < 200; i++, rows++)
		CHECK_RC(tu_append(p, tid, rows, 1), GPMDB_OK);
	CHECK_RC(stg_commit(p), GPMDB_OK);
	for (int i = 0; i < 20; i++, rows++) {
		CHECK_RC(stg_begin(p), GPMDB_OK);
		CHECK_RC(tu_append(p, tid, rows, 1), GPMDB_OK);
		CHECK_RC(stg_commit(p), GPMDB_OK);
	}
	TU_CHECK_OK(p);
	CHECK(tu_verify(p, tid, rows) == 0);

	/* a bulk append fills tablet 2 and starts tablet 3 */
	CHECK_RC(stg_begin(p), GPMDB_OK);
	CHECK_RC(tu_append(p, tid, rows, 7168 + 900 - rows), GPMDB_OK);
	rows = 7168 + 900;
	CHECK_RC(stg_commit(p), GPMDB_OK);
	TU_CHECK_OK(p);
	CHECK(tu_verify(p, tid, rows) == 0);
	CHECKF(info_bytes(p, tid, "(heap unused)") < 4 * 4096,
	       "heap unused %llu",
	       (unsigned long long)info_bytes(p, tid, "(heap unused)"));
	check_sums(p, tid);

	/* UPDATEs of TEXT in trimmed full tablets (0, 1, 2) need more heap:
	 * 300 rows of 45 bytes, then rolled back once */
	for (int i = 0; i < 300; i++)
		ids[i] = (uint64_t)i * 23 % 7168;
	CHECK_RC(stg_begin(p), GPMDB_OK);
	CHECK_RC(update_text(p, tid, ids, 300, buf), GPMDB_OK);
	CHECK_RC(stg_rollback(p), GPMDB_OK);
	TU_CHECK_OK(p);
	CHECK(tu_verify(p, tid, rows) == 0);
	CHECK_RC(stg_begin(p), GPMDB_OK);
	CHECK_RC(update_text(p, tid, ids, 300, buf), GPMDB_OK);
	CHECK_RC(stg_commit(p), GPMDB_OK);
	TU_CHECK_OK(p);
	{
		stg_text s[1];
		uint32_t nb[1];
		char want[64];
		int wl = sprintf(want, "long%llu%040d",
				 (unsigned long long)ids[299], 7);

		CHECK_RC(stg_read(p, tid, 2, ids[299], 1, s, nb), GPMDB_OK);
		CHECK(s[0].len == (uint32_t)wl &&
		      !memcmp(s[0].ptr, want, (size_t)wl));
	}
	check_sums(p, tid);

	/* tablet 3 (8192 rows, 900 in use) was trimmed: a regrowth rolled
	 * back with an UPDATE and a DELETE of its rows after it, then one
	 * committed */
	{
		uint64_t u[3] = {7168, 7500, 8067};

		CHECK_RC(stg_begin(p), GPMDB_OK);
		CHECK_RC(tu_append(p, tid, rows, 2000), GPMDB_OK);
		CHECK_RC(update_text(p, tid, u, 3, buf), GPMDB_OK);
		CHECK_RC(stg_delete(p, tid, u, 3), GPMDB_OK);
		CHECK_RC(stg_rollback(p), GPMDB_OK);
		TU_CHECK_OK(p);
		CHECK(stg_row_count(p, tid) == rows);
		CHECK(stg_deleted_count(p, tid) == 0);
		CHECK_RC(stg_begin(p), GPMDB_OK);
		CHECK_RC(stg_delete(p, tid, u, 3), GPMDB_OK);
		CHECK_RC(tu_append(p, tid, rows, 2000), GPMDB_OK);
		CHECK_RC(update_text(p, tid, u, 2, buf), GPMDB_OK);
		CHECK_RC(stg_commit(p), GPMDB_OK);
		rows += 2000;
		TU_CHECK_OK(p);
		CHECK(stg_deleted_count(p, tid) == 3);
		CHECK(stg_row_count(p, tid) == rows);
		check_sums(p, tid);
	}

	/* a drop after a bulk append in one transaction: nothing to trim */
	CHECK_RC(stg_begin(p), GPMDB_OK);
	{
		uint32_t t2 = tu_table(p, "t2");

		CHECK_RC(tu_append(p, t2, 0, 1500), GPMDB_OK);
		CHECK_RC(stg_table_drop(p, t2), GPMDB_OK);
	}
	CHECK_RC(stg_commit(p), GPMDB_OK);
	TU_CHECK_OK(p);

	stg_close(p);
	p = tu_open_ex(path, false, false, 0, 0);
	if (p) {
		TU_CHECK_OK(p);
		CHECK(stg_row_count(p, tid) == rows);
		stg_close(p);
	}
	free(buf);
}

/* A pool of format version 2: heaps are trimmed (older builds grow
 * them as ever), tablets keep their room (older builds would append
 * past it). */
static void test_version2(void)
{
	const char *path = tu_path("trim2", 0);
	stg_pool *p = tu_open_ex(path, true, false, 1u << 20, 256u << 20);
	stg_superblock sb;
	uint32_t tid;
	int fd;

	if (!p)
		return;
	stg_close(p);
	fd = open(path, O_RDWR);
	CHECK(fd >= 0 && pread(fd, &sb, sizeof(sb), 0) == (ssize_t)sizeof(sb));
	sb.version = 2;
	sb.crc = (uint32_t)crc32(0L, (const Bytef *)&sb, STG_SB_CRC_OFF);
	CHECK(fd >= 0 && pwrite(fd, &sb, sizeof(sb), 0) == (ssize_t)sizeof(sb));
	if (fd >= 0)
		close(fd);
	p = tu_open_ex(path, false, false, 0, 0);
	if (!p)
		return;
	CHECK_RC(stg_begin(p), GPMDB_OK);
	tid = tu_table(p, "t");
	CHECK_RC(tu_append(p, tid, 0, 3372), GPMDB_OK);
	CHECK_RC(stg_commit(p), GPMDB_OK);
	/* tablet 2 keeps room for 4096 rows, 3796 of them unused */
	CHECKF(info_bytes(p, tid, "(unused capacity)") >= 3796 * 28,
	       "unused capacity %llu",
	       (unsigned long long)info_bytes(p, tid, "(unused capacity)"));
	CHECK(info_bytes(p, tid, "(heap unused)") < 3 * 4096);
	TU_CHECK_OK(p);
	CHECK(tu_verify(p, tid, 3372) == 0);
	stg_close(p);
}

static uint64_t file_size(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 ? (uint64_t)st.st_size : 0;
}

/* A new pool (max bytes at most) with a free tail: t (keep rows) kept,
 * t2 (drop rows, made after it) dropped; *before: the file's size before
 * the close (which may cut it). */
static void make_tail_of(const char *path, uint64_t max, uint64_t keep,
			 uint64_t drop, uint32_t *tid, uint64_t *used,
			 uint64_t *before)
{
	stg_pool *p = tu_open_ex(path, true, false, 1u << 20, max);
	uint32_t t2;

	if (!p)
		return;
	CHECK_RC(stg_begin(p), GPMDB_OK);
	*tid = tu_table(p, "t");
	CHECK_RC(tu_append(p, *tid, 0, keep), GPMDB_OK);
	CHECK_RC(stg_commit(p), GPMDB_OK);
	CHECK_RC(stg_begin(p), GPMDB_OK);
	t2 = tu_table(p, "t2");
	CHECK_RC(tu_append(p, t2, 0, drop), GPMDB_OK);
	CHECK_RC(stg_commit(p), GPMDB_OK);
	CHECK_RC(stg_begin(p), GPMDB_OK);
	CHECK_RC(stg_table_drop(p, t2), GPMDB_OK);
	CHECK_RC(stg_commit(p), GPMDB_OK);
	*used = tu_used(p);
	*before = file_size(path);
	stg_close(p);
}

/* A pool with a free tail of about 3 MiB: t (5000 rows) kept, t2 (60000
 * rows, made after it) dropped. */
static void make_tail(const char *path, uint32_t *tid, uint64_t *used)
{
	uint64_t before;

	make_tail_of(path, 256u << 20, 5000, 60000, tid, used, &before);
}

static void close_killed(void *arg)
{
	stg_pool *p = tu_open_ex(arg, false, false, 0, 0);

	uint32_t t3;

	if (!p)
		_exit(3);
	/* a free tail: t3 made and dropped (appends of fewer than 8192
	 * rows: one thread, OpenMP's pool does not survive the fork) */
	if (stg_begin(p) || (t3 = tu_table(p, "t3")) == 0)
		_exit(5);
	for (int i = 0; i < 10; i++)
		if (tu_append(p, t3, (uint64_t)i * 6000, 6000))
			_exit(5);
	if (stg_table_drop(p, t3) || stg_commit(p))
		_exit(5);
	setenv("GPMDB_CRASH_AT", "shrink.commit:1", 1);
	stg_close(p); /* killed here */
	_exit(4);
}

/* The last close cuts the free tail of the file (pool.c shrink_tail);
 * killed between the smaller size's commit and the cut, the file stays
 * longer, opens, and the next last close cuts it. */
static void shrink(int mode)
{
	const char *path = tu_path("shrink", mode);
	uint64_t used = 0, size;
	stg_stats st;
	uint32_t tid = 0;
	stg_pool *p;
	int status;

	make_tail(path, &tid, &used);
	size = file_size(path);
	CHECKF(size >= used && size - used < (1u << 20) + (1u << 20) / 8,
	       "file %llu, used %llu", (unsigned long long)size,
	       (unsigned long long)used);
	p = tu_open_ex(path, false, false, 0, 0);
	if (!p)
		return;
	TU_CHECK_OK(p);
	CHECK(tu_verify(p, tid, 5000) == 0);
	stg_get_stats(p, &st);
	CHECK(st.pool_size == size);
	/* the pool grows again past the cut */
	CHECK_RC(stg_begin(p), GPMDB_OK);
	CHECK_RC(tu_append(p, tid, 5000, 40000), GPMDB_OK);
	CHECK_RC(stg_commit(p), GPMDB_OK);
	TU_CHECK_OK(p);
	CHECK(tu_verify(p, tid, 45000) == 0);
	stg_close(p);
	unlink(path);

	/* a copy opened and closed keeps its size (a shrink would stamp
	 * it, and the next backup into it would be full) */
	{
		char copy[300];
		uint64_t bytes = 0, csize;

		snprintf(copy, sizeof(copy), "%s.copy", path);
		unlink(copy);
		make_tail(path, &tid, &used);
		p = tu_open_ex(path, false, false, 0, 0);
		CHECK(p != NULL);
		if (p) {
			uint32_t t3;

			/* a free tail in the pool copied */
			CHECK_RC(stg_begin(p), GPMDB_OK);
			t3 = tu_table(p, "t3");
			CHECK_RC(tu_append(p, t3, 0, 60000), GPMDB_OK);
			CHECK_RC(stg_table_drop(p, t3), GPMDB_OK);
			CHECK_RC(stg_commit(p), GPMDB_OK);
			CHECK_RC(stg_backup_to(p, copy, &bytes), GPMDB_OK);
			stg_close(p);
			CHECK(file_size(path) < file_size(copy));
		}
		csize = file_size(copy);
		p = tu_open_ex(copy, false, false, 0, 0);
		if (p) {
			CHECK(tu_verify(p, tid, 5000) == 0);
			stg_close(p);
		}
		CHECKF(file_size(copy) == csize && csize > 0,
		       "copy %llu, was %llu",
		       (unsigned long long)file_size(copy),
		       (unsigned long long)csize);
		unlink(copy);
		unlink(path);
	}

	/* killed after the commit, before the cut */
	path = tu_path("shrink_kill", mode);
	make_tail(path, &tid, &used);
	status = tu_child(close_killed, (void *)path);
	CHECKF(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL, "status %x",
	       status);
	size = file_size(path);
	p = tu_open_ex(path, false, false, 0, 0);
	if (!p)
		return;
	stg_get_stats(p, &st);
	CHECKF(st.pool_size < size, "pool %llu, file %llu",
	       (unsigned long long)st.pool_size, (unsigned long long)size);
	TU_CHECK_OK(p);
	CHECK(tu_verify(p, tid, 5000) == 0);
	size = st.pool_size;
	stg_close(p);
	CHECKF(file_size(path) == size, "file %llu, pool %llu",
	       (unsigned long long)file_size(path), (unsigned long long)size);
	unlink(path);
}

/* The end of the last chunk in use of the pool file at path (its
 * superblock and bitmap read from the file), 0 when unreadable. */
static uint64_t used_end(const char *path)
{
	stg_superblock sb;
	uint64_t end = 0;
	uint8_t *bm = NULL;
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		return 0;
	if (pread(fd, &sb, sizeof(sb), 0) == (ssize_t)sizeof(sb) &&
	    sb.nchunks && (bm = malloc((sb.nchunks + 7) / 8)) &&
	    pread(fd, bm, (sb.nchunks + 7) / 8, (off_t)sb.bitmap_off) ==
		(ssize_t)((sb.nchunks + 7) / 8))
		for (uint64_t i = sb.nchunks; i-- > 0;)
			if ((bm[i >> 3] >> (i & 7)) & 1u) {
				end = sb.data_off + (i + 1) * sb.chunk_size;
				break;
			}
	free(bm);
	close(fd);
	return end;
}

/* The cut keeps an eighth of what is in use free at the end (one
 * growth's worth): the next process's first allocations that fit in it
 * do not grow the pool again (pool.c shrink_tail). */
static void test_shrink_keeps_slack(void)
{
	const char *path = tu_path("slack", 0);
	uint64_t used = 0, size, before = 0, c = 64u << 10;
	stg_write_times w0, w1;
	uint32_t tid = 0, t2;
	stg_pool *p;

	make_tail_of(path, 1ull << 30, 400000, 800000, &tid, &used, &before);
	size = file_size(path);
	/* cut, but an eighth of what is in use kept free past its end */
	{
		uint64_t end = used_end(path);
		CHECKF(end > 0 && size < before &&
			   size + c >= end + (end - c) / 8,
		       "file %llu (was %llu), in use up to %llu (%llu "
		       "bytes)",
		       (unsigned long long)size, (unsigned long long)before,
		       (unsigned long long)end, (unsigned long long)used);
	}
	/* a new process's first allocation of a sixteenth: no growth */
	p = tu_open_ex(path, false, false, 0, 0);
	if (!p)
		return;
	stg_get_write_times(p, &w0);
	CHECK_RC(stg_begin(p), GPMDB_OK);
	t2 = tu_table(p, "t3");
	CHECK_RC(tu_append(p, t2, 0, 400000 / 16), GPMDB_OK);
	CHECK_RC(stg_commit(p), GPMDB_OK);
	stg_get_write_times(p, &w1);
	CHECKF(w1.grows == w0.grows, "%llu growths",
	       (unsigned long long)(w1.grows - w0.grows));
	TU_CHECK_OK(p);
	CHECK(tu_verify(p, tid, 400000) == 0);
	stg_close(p);
	unlink(path);
}

/* A pool in pmem mode on tmpfs grows in place (pool.c pmem_reserve,
 * pool_refit_resv): the base stays through growths, and another table's
 * stamps too (nothing of it moved, so the GPU cache keeps its copies);
 * the rows are all there after reopening. */
static void test_grow_in_place(void)
{
	const char *path = tu_path("inplace", 0);
	stg_pool *p = tu_open_ex(path, true, false, 1u << 20, 1ull << 30);
	stg_write_times w0, w1;
	uint64_t len0, len1, s0;
	uint32_t t1, t2;
	char *b0;

	if (!p)
		return;
	CHECK_RC(stg_begin(p), GPMDB_OK);
	t1 = tu_table(p, "t1");
	CHECK_RC(tu_append(p, t1, 0, 5000), GPMDB_OK);
	t2 = tu_table(p, "t2");
	CHECK_RC(stg_commit(p), GPMDB_OK);
	b0 = stg_pool_base(p, &len0);
	s0 = stg_col_stamp(p, t1, 0);
	stg_get_write_times(p, &w0);
	for (int i = 0; i < 8; i++) {
		CHECK_RC(stg_begin(p), GPMDB_OK);
		CHECK_RC(tu_append(p, t2, (uint64_t)i * 200000, 200000),
			 GPMDB_OK);
		CHECK_RC(stg_commit(p), GPMDB_OK);
	}
	stg_get_write_times(p, &w1);
	CHECKF(w1.grows > w0.grows, "%llu growths",
	       (unsigned long long)(w1.grows - w0.grows));
	CHECK((char *)stg_pool_base(p, &len1) == b0);
	CHECK(len1 > len0);
	CHECKF(stg_col_stamp(p, t1, 0) == s0, "t1's stamp %llu -> %llu",
	       (unsigned long long)s0,
	       (unsigned long long)stg_col_stamp(p, t1, 0));
	TU_CHECK_OK(p);
	stg_close(p);
	p = tu_open_ex(path, false, false, 0, 0);
	if (!p)
		return;
	CHECK(tu_verify(p, t1, 5000) == 0);
	CHECK(tu_verify(p, t2, 1600000) == 0);
	TU_CHECK_OK(p);
	stg_close(p);
	unlink(path);
}

static void test_shrink_pmem(void)
{
	shrink(0);
}

static void test_shrink_msync(void)
{
	shrink(1);
}

static void test_trim_pmem(void)
{
	run(0);
}

static void test_trim_msync(void)
{
	run(1);
}

int main(void)
{
	TEST_RUN(test_trim_pmem);
	TEST_RUN(test_trim_msync);
	TEST_RUN(test_version2);
	TEST_RUN(test_shrink_pmem);
	TEST_RUN(test_shrink_msync);
	TEST_RUN(test_shrink_keeps_slack);
	TEST_RUN(test_grow_in_place);
	tu_cleanup();
	TEST_MAIN_END();
}
