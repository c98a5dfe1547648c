/*
 * test_storage_tablet.c - row data: every type with NULLs across a
 * reopen, tablet boundaries, views, NOT NULL, updates and deletes.
 */
#include <stdlib.h>

#include "test_storage_util.h"

static void test_all_types(void)
{
	int mode;

	for (mode = 0; mode < 2; mode++) {
		const char *path = tu_path("types", mode);
		stg_column_def c[8] = {
		    {.name = "i", .type = STG_T_INT},
		    {.name = "b", .type = STG_T_BIGINT},
		    {.name = "f", .type = STG_T_FLOAT},
		    {.name = "d", .type = STG_T_DOUBLE},
		    {.name = "m",
		     .type = STG_T_DECIMAL,
		     .precision = 10,
		     .scale = 2},
		    {.name = "dt", .type = STG_T_DATE},
		    {.name = "bo", .type = STG_T_BOOLEAN},
		    {.name = "t", .type = STG_T_TEXT, .length = 3}};
		int32_t i32[5] = {1, -2, 2147483647, 0, 5};
		int64_t i64[5] = {1, -2, INT64_MAX, INT64_MIN, 7};
		float f[5] = {1.5f, -2.25f, 0, 3, 4};
		double d[5] = {1e300, -0.5, 0, 3, 4};
		int64_t m[5] = {12345, -1, 0, 99, 100};
		int32_t dt[5] = {0, 19000, -1, 3, 4};
		uint8_t bo[5] = {1, 0, 1, 0, 1};
		stg_text t[5] = {{"hello", 5},
				 {"", 0},
				 {"a longer text", 13},
				 {NULL, 0},
				 {"x", 1}};
		uint32_t nulls = 1u << 3; /* row 3 NULL everywhere */
		stg_col_batch b[8] = {
		    {i32, &nulls}, {i64, &nulls}, {f, &nulls},	{d, &nulls},
		    {m, &nulls},   {dt, &nulls},  {bo, &nulls}, {t, &nulls}};
		stg_pool *p = tu_open(path);
		uint32_t tid, nb;
		stg_text out[5];
		int64_t o64[5];
		uint8_t obo[5];
		float of[5];
		stg_schema *s;

		if (!p)
			return;
		CHECK_RC(stg_begin(p), GPMDB_OK);
		CHECK_RC(
		    stg_table_create(p, "all", c, 8, "CREATE TABLE all", &tid),
		    GPMDB_OK);
		CHECK_RC(stg_append(p, tid, b, 5), GPMDB_OK);
		CHECK_RC(stg_commit(p), GPMDB_OK);
		stg_close(p);
		p = tu_open_ex(path, false, false, 0, 0);
		if (!p)
			return;
		CHECK(stg_row_count(p, tid) == 5);
		CHECK_RC(stg_read(p, tid, 1, 0, 5, o64, &nb), GPMDB_OK);
		CHECK(o64[0] == 1 && o64[2] == INT64_MAX && o64[4] == 7);
		CHECK(nb == 1u << 3);
		CHECK_RC(stg_read(p, tid, 2, 0, 5, of, &nb), GPMDB_OK);
		CHECK(of[1] == -2.25f);
		CHECK_RC(stg_read(p, tid, 4, 1, 4, o64, &nb), GPMDB_OK);
		CHECK(o64[0] == -1 && o64[3] == 100 && nb == 1u << 2);
		CHECK_RC(stg_read(p, tid, 6, 0, 5, obo, NULL), GPMDB_OK);
		CHECK(memcmp(obo, bo, 3) == 0 && obo[4] == 1);
		CHECK_RC(stg_read(p, tid, 7, 0, 5, out, &nb), GPMDB_OK);
		CHECK(out[0].len == 5 && memcmp(out[0].ptr, "hello", 5) == 0);
		CHECK(out[1].len == 0);
		/* Longer than VARCHAR(3): kept whole, like SQLite. */
		CHECK(out[2].len == 13 &&
		      memcmp(out[2].ptr, "a longer text", 13) == 0);
		CHECK(out[3].ptr == NULL && nb == 1u << 3);
		CHECK_RC(stg_read(p, tid, 0, 4, 2, o64, NULL), GPMDB_RANGE);
		CHECK_RC(stg_read(p, tid, 8, 0, 1, o64, NULL), GPMDB_RANGE);
		CHECK_RC(stg_table_schema(p, tid, &s), GPMDB_OK);
		if (s) {
			CHECK(s->ncols == 8);
			CHECK(s->cols[4].type == STG_T_DECIMAL &&
			      s->cols[4].precision == 10 &&
			      s->cols[4].scale == 2);
			CHECK(s->cols[7].length == 3);
			stg_schema_free(s);
		}
		TU_CHECK_OK(p);
		stg_close(p);
		unlink(path);
	}
}

static void test_boundaries(void)
{
	const char *path = tu_path("bound", 0);
	stg_pool *p = tu_open(path);
	static const uint64_t steps[] = {1,    1000, 23,   1, 2047,
					 2048, 3,    5000, 1, 10000};
	uint64_t rows = 0;
	uint32_t tid, nt, i;
	size_t k;

	if (!p)
		return;
	CHECK_RC(stg_begin(p), GPMDB_OK);
	tid = tu_table(p, "t");
	for (k = 0; k < sizeof(steps) / sizeof(steps[0]); k++) {
		CHECK_RC(tu_append(p, tid, rows, steps[k]), GPMDB_OK);
		rows += steps[k];
	}
	/* Many small appends in one transaction. */
	for (k = 0; k < 300; k++) {
		CHECK_RC(tu_append(p, tid, rows, 3), GPMDB_OK);
		rows += 3;
	}
	CHECK_RC(stg_commit(p), GPMDB_OK);
	CHECK(tu_verify(p, tid, rows) == 0);
	CHECK_RC(stg_tablet_count(p, tid, &nt), GPMDB_OK);
	/* 21024 rows: tablets of 1024, 2048, 4096, 8192, 16384 rows. */
	CHECK(rows == 21024);
	CHECK(nt == 5);
	{
		uint64_t total = 0;
		stg_tablet_view v0, v;

		CHECK_RC(stg_tablet_get(p, tid, 0, &v0), GPMDB_OK);
		for (i = 0; i < nt; i++) {
			CHECK_RC(stg_tablet_get(p, tid, i, &v), GPMDB_OK);
			CHECK(v.first_row == total);
			CHECK(v.capacity == 1024u << i);
			CHECK(v.ncols == 4);
			CHECK(((uintptr_t)v.data[1] & 255) == 0);
			CHECK(((const int64_t *)v.data[0])[0] ==
			      (int64_t)v.first_row);
			CHECK(((const int64_t *)v.data[0])[v.nrows - 1] ==
			      (int64_t)(v.first_row + v.nrows - 1));
			if (v.nrows > 3) {
				const stg_strref *sr = v.data[2];

				CHECK(v.heap != NULL);
				CHECK(memcmp(v.heap + sr[0].off, "s", 1) == 0);
			}
			total += v.nrows;
		}
		CHECK(total == rows);
		/* Two views at once stay intact. */
		CHECK(((const int64_t *)v0.data[0])[5] == 5);
		CHECK_RC(stg_tablet_get(p, tid, nt, &v), GPMDB_RANGE);
	}
	TU_CHECK_OK(p);
	stg_close(p);
	p = tu_open_ex(path, false, false, 0, 0);
	if (p) {
		CHECK(tu_verify(p, tid, rows) == 0);
		stg_close(p);
	}
	unlink(path);
}

static void test_big_append(void)
{
	const char *path = tu_path("big", 0);
	stg_pool *p = tu_open(path);
	uint64_t n = 1100000, i;
	int32_t *a = malloc(n * 4), *o = malloc(n * 4);
	stg_column_def c[2] = {{.name = "a", .type = STG_T_INT},
			       {.name = "b", .type = STG_T_INT}};
	stg_col_batch b[2] = {{a, NULL}, {a, NULL}};
	stg_write_times w0, w1;
	stg_stats s0, s1;
	uint32_t tid, nt;

	if (!p)
		return;
	for (i = 0; i < n; i++)
		a[i] = (int32_t)(i * 3);
	CHECK_RC(stg_begin(p), GPMDB_OK);
	CHECK_RC(stg_table_create(p, "big", c, 2, "", &tid), GPMDB_OK);
	stg_get_write_times(p, &w0);
	stg_get_stats(p, &s0);
	CHECK_RC(stg_append(p, tid, b, n), GPMDB_OK);
	stg_get_write_times(p, &w1);
	stg_get_stats(p, &s1);
	/* 1 MiB of pool, about 17 MiB of tablets: one growth to them and
	 * an eighth more (alloc_prepare), not one growth per tablet */
	CHECKF(w1.grows - w0.grows == 1 && s1.pool_size > (16u << 20) &&
		   s1.pool_size < (24u << 20),
	       "growths %llu, pool %llu -> %llu bytes",
	       (unsigned long long)(w1.grows - w0.grows),
	       (unsigned long long)s0.pool_size,
	       (unsigned long long)s1.pool_size);
	CHECK_RC(stg_commit(p), GPMDB_OK);
	CHECK_RC(stg_tablet_count(p, tid, &nt), GPMDB_OK);
	CHECK(nt == 11); /* tablets 0-9 hold 1047552 rows, tablet 10 1M */
	CHECK_RC(stg_read(p, tid, 1, 0, n, o, NULL), GPMDB_OK);
	CHECK(memcmp(a, o, n * 4) == 0);
	TU_CHECK_OK(p);
	stg_close(p);
	free(a);
	free(o);
	unlink(path);
}

/* An INT32 array appended to a BIGINT column as it is (stg_append_from,
 * STG_FROM_I32): widened as it is written, across tablets; refused for
 * other types and unknown kinds. */
static void test_widen_append(void)
{
	const char *path = tu_path("widen", 0);
	stg_pool *p = tu_open(path);
	uint64_t n = 1100000, i;
	int32_t *a = malloc(n * 4);
	int64_t *o = malloc(n * 8);
	stg_column_def c[2] = {{.name = "a", .type = STG_T_BIGINT},
			       {.name = "b", .type = STG_T_INT}};
	uint32_t nl[2] = {1u << 3, 0}; /* row 3 NULL */
	stg_col_batch b[2] = {{a, nl}, {a, NULL}};
	uint8_t from[2] = {STG_FROM_I32, STG_FROM_I32};
	uint32_t tid;
	bool same = true;

	if (!p)
		return;
	for (i = 0; i < n; i++)
		a[i] = (int32_t)(i * 2654435761u);
	CHECK_RC(stg_begin(p), GPMDB_OK);
	CHECK_RC(stg_table_create(p, "w", c, 2, "", &tid), GPMDB_OK);
	/* an INT column: nothing to widen */
	CHECK_RC(stg_append_from(p, tid, b, from, n), GPMDB_MISUSE);
	from[1] = 7;
	CHECK_RC(stg_append_from(p, tid, b, from, n), GPMDB_MISUSE);
	CHECK(stg_row_count(p, tid) == 0);
	from[1] = STG_FROM_SAME;
	CHECK_RC(stg_append_from(p, tid, b, from, 40), GPMDB_OK);
	b[0].nulls = NULL;
	CHECK_RC(stg_append_from(p, tid, b, from, n), GPMDB_OK);
	CHECK_RC(stg_commit(p), GPMDB_OK);
	CHECK_RC(stg_read(p, tid, 0, 40, n, o, NULL), GPMDB_OK);
	for (i = 0; i < n && same; i++)
		same = o[i] == a[i];
	CHECKF(same, "row %llu: %lld, want %d", (unsigned long long)i - 1,
	       (long long)o[i - 1], a[i - 1]);
	uint32_t rn[2] = {0};
	CHECK_RC(stg_read(p, tid, 0, 0, 40, o, rn), GPMDB_OK);
	CHECK(o[39] == a[39] && o[2] == a[2] && (rn[0] >> 3 & 1));
	TU_CHECK_OK(p);
	stg_close(p);
	free(a);
	free(o);
	unlink(path);
}

static void test_not_null(void)
{
	const char *path = tu_path("nn", 1);
	stg_pool *p = tu_open(path);
	stg_column_def c[2] = {
	    {.name = "a", .type = STG_T_INT},
	    {.name = "b", .type = STG_T_INT, .flags = STG_COL_NOTNULL}};
	int32_t v[40] = {0};
	uint32_t nulls[2] = {0, 1u << 5}; /* row 37 */
	stg_col_batch b[2] = {{v, NULL}, {v, nulls}};
	uint32_t tid;
	uint64_t used;

	if (!p)
		return;
	CHECK_RC(stg_begin(p), GPMDB_OK);
	CHECK_RC(stg_table_create(p, "t", c, 2, "", &tid), GPMDB_OK);
	used = tu_used(p);
	CHECK_RC(stg_append(p, tid, b, 40), GPMDB_CONSTRAINT);
	CHECKF(strstr(stg_errmsg(p), "NOT NULL constraint failed: t.b") &&
		   strstr(stg_errmsg(p), "38"),
	       "%s", stg_errmsg(p));
	CHECK(stg_row_count(p, tid) == 0);
	CHECK(tu_used(p) == used); /* nothing was written or allocated */
	/* Only the first 37 rows: no NULL among them. */
	CHECK_RC(stg_append(p, tid, b, 37), GPMDB_OK);
	CHECK(stg_row_count(p, tid) == 37);
	/* NULL in a nullable column is fine. */
	b[0].nulls = nulls;
	b[1].nulls = NULL;
	CHECK_RC(stg_append(p, tid, b, 40), GPMDB_OK);
	CHECK_RC(stg_commit(p), GPMDB_OK);
	CHECK(stg_row_count(p, tid) == 77);
	TU_CHECK_OK(p);
	stg_close(p);
	unlink(path);
}

static void test_update_delete(void)
{
	int mode;

	for (mode = 0; mode < 2; mode++) {
		const char *path = tu_path("upd", mode);
		stg_pool *p = tu_open(path);
		uint64_t n = 5000, rows[3] = {0, 1500, 4999}, i;
		int32_t nv[3] = {-1, -2, -3}, v[3];
		stg_text nt[3] = {
		    {"new0", 4}, {"a much longer new value", 23}, {NULL, 0}};
		uint32_t nnull = 1u << 2, cols[2] = {1, 2}, vn, sn;
		stg_col_batch vals[2] = {{nv, NULL}, {nt, &nnull}};
		stg_text s[3];
		uint64_t *many;

		if (!p)
			return;
		CHECK_RC(stg_begin(p), GPMDB_OK);
		CHECK(tu_table(p, "t") == 1);
		CHECK_RC(tu_append(p, 1, 0, n), GPMDB_OK);
		CHECK_RC(stg_commit(p), GPMDB_OK);

		CHECK_RC(stg_begin(p), GPMDB_OK);
		CHECK_RC(stg_update(p, 1, 2, cols, rows, 3, vals), GPMDB_OK);
		CHECK_RC(stg_commit(p), GPMDB_OK);
		for (i = 0; i < 3; i++) {
			CHECK_RC(stg_read(p, 1, 1, rows[i], 1, &v[i], &vn),
				 GPMDB_OK);
			CHECK(v[i] == nv[i] && vn == 0);
			CHECK_RC(stg_read(p, 1, 2, rows[i], 1, &s[i], &sn),
				 GPMDB_OK);
			CHECK(sn == (i == 2));
		}
		CHECK(s[1].len == 23 && memcmp(s[1].ptr, nt[1].ptr, 23) == 0);
		CHECK(s[0].len == 4 && memcmp(s[0].ptr, "new0", 4) == 0);
		TU_CHECK_OK(p);

		/* Out of range rows and NOT NULL. */
		CHECK_RC(stg_begin(p), GPMDB_OK);
		rows[0] = n;
		CHECK_RC(stg_update(p, 1, 2, cols, rows, 1, vals), GPMDB_RANGE);
		CHECK_RC(stg_delete(p, 1, rows, 1), GPMDB_RANGE);
		{
			uint32_t c0 = 0, nl = 1;
			int64_t x = 5;
			stg_col_batch vb = {&x, &nl};

			rows[0] = 1;
			CHECK_RC(stg_update(p, 1, 1, &c0, rows, 1, &vb),
				 GPMDB_CONSTRAINT);
		}
		CHECK_RC(stg_rollback(p), GPMDB_OK);

		/* Deletes, with a repeat and a parallel-sized batch. */
		many = malloc(n * sizeof(*many));
		for (i = 0; i < n; i++)
			many[i] = (i * 7919) % n;
		CHECK_RC(stg_begin(p), GPMDB_OK);
		rows[0] = 10;
		rows[1] = 11;
		CHECK_RC(stg_delete(p, 1, rows, 2), GPMDB_OK);
		CHECK(stg_deleted_count(p, 1) == 2);
		CHECK_RC(stg_delete(p, 1, rows, 1), GPMDB_OK); /* no-op */
		CHECK(stg_deleted_count(p, 1) == 2);
		CHECK_RC(stg_commit(p), GPMDB_OK);
		TU_CHECK_OK(p);
		CHECK_RC(stg_begin(p), GPMDB_OK);
		CHECK_RC(stg_delete(p, 1, many, n / 2), GPMDB_OK);
		CHECK_RC(stg_commit(p), GPMDB_OK);
		{
			stg_tablet_view tv;
			uint32_t k, ntab;
			uint64_t cnt = 0, r;

			stg_tablet_count(p, 1, &ntab);
			for (k = 0; k < ntab; k++) {
				stg_tablet_get(p, 1, k, &tv);
				for (r = 0; r < tv.nrows; r++)
					cnt += bit_get_test(tv.deleted, r);
			}
			CHECK(cnt == stg_deleted_count(p, 1));
			CHECK(cnt >= n / 2 && cnt <= n / 2 + 2);
		}
		TU_CHECK_OK(p);
		free(many);
		stg_close(p);
		unlink(path);
	}
}

/* Write stamps (stamp.c): a column's changes when a write may change it,
 * and only then; both modes. */
static void test_write_stamps(void)
{
	for (int mode = 0; mode < 2; mode++) {
		const char *path = tu_path("stamps", mode);
		stg_column_def c[3] = {{.name = "a", .type = STG_T_INT},
				       {.name = "b", .type = STG_T_BIGINT},
				       {.name = "t", .type = STG_T_TEXT}};
		int32_t a[4] = {1, 2, 3, 4}, a2[1] = {9};
		int64_t b[4] = {5, 6, 7, 8};
		stg_text t[4] = {{"w", 1}, {"x", 1}, {"y", 1}, {"z", 1}};
		stg_text t2[1] = {{"longer text", 11}};
		stg_col_batch rows[3] = {{a, NULL}, {b, NULL}, {t, NULL}};
		stg_col_batch va[1] = {{a2, NULL}}, vt[1] = {{t2, NULL}};
		uint64_t id1[1] = {1}, sa, sb, st, sr, s2;
		uint32_t ca[1] = {0}, ct[1] = {2}, tid, t2id;
		stg_pool *p = tu_open(path);

		if (!p)
			return;
		CHECK_RC(stg_begin(p), GPMDB_OK);
		CHECK_RC(stg_table_create(p, "s", c, 3, "CREATE TABLE s", &tid),
			 GPMDB_OK);
		CHECK_RC(
		    stg_table_create(p, "o", c, 2, "CREATE TABLE o", &t2id),
		    GPMDB_OK);
		CHECK_RC(stg_append(p, tid, rows, 4), GPMDB_OK);
		CHECK_RC(stg_append(p, t2id, rows, 4), GPMDB_OK);
		CHECK_RC(stg_commit(p), GPMDB_OK);
		sa = stg_col_stamp(p, tid, 0);
		sb = stg_col_stamp(p, tid, 1);
		st = stg_col_stamp(p, tid, 2);
		sr = stg_col_stamp(p, tid, -1);
		s2 = stg_col_stamp(p, t2id, 0);
		/* reads and commits of nothing change nothing */
		CHECK(stg_col_stamp(p, tid, 0) == sa);
		/* a number column's update: that column alone */
		CHECK_RC(stg_begin(p), GPMDB_OK);
		CHECK_RC(stg_update(p, tid, 1, ca, id1, 1, va), GPMDB_OK);
		CHECK_RC(stg_commit(p), GPMDB_OK);
		CHECK(stg_col_stamp(p, tid, 0) != sa);
		CHECK(stg_col_stamp(p, tid, 1) == sb);
		CHECK(stg_col_stamp(p, tid, 2) == st);
		CHECK(stg_col_stamp(p, tid, -1) == sr);
		CHECK(stg_col_stamp(p, t2id, 0) == s2);
		sa = stg_col_stamp(p, tid, 0);
		/* a TEXT update: the table (its heap is shared) */
		CHECK_RC(stg_begin(p), GPMDB_OK);
		CHECK_RC(stg_update(p, tid, 1, ct, id1, 1, vt), GPMDB_OK);
		CHECK_RC(stg_commit(p), GPMDB_OK);
		CHECK(stg_col_stamp(p, tid, 1) != sb);
		CHECK(stg_col_stamp(p, tid, 2) != st);
		CHECK(stg_col_stamp(p, t2id, 0) == s2);
		sb = stg_col_stamp(p, tid, 1);
		/* an append and a delete: every column and the row ids */
		CHECK_RC(stg_begin(p), GPMDB_OK);
		CHECK_RC(stg_append(p, tid, rows, 1), GPMDB_OK);
		CHECK_RC(stg_commit(p), GPMDB_OK);
		CHECK(stg_col_stamp(p, tid, 1) != sb);
		CHECK(stg_col_stamp(p, tid, -1) != sr);
		sb = stg_col_stamp(p, tid, 1);
		CHECK_RC(stg_begin(p), GPMDB_OK);
		CHECK_RC(stg_delete(p, tid, id1, 1), GPMDB_OK);
		CHECK_RC(stg_commit(p), GPMDB_OK);
		CHECK(stg_col_stamp(p, tid, 1) != sb);
		CHECK(stg_col_stamp(p, t2id, 0) == s2);
		sb = stg_col_stamp(p, tid, 1);
		/* a bulk append's commit (its last tablet trimmed to its
		 * rows, its heap's tail given back) stamps nothing more: a
		 * copy taken before the commit stays current */
		{
			enum { NB = 300000 };
			int32_t *ba = calloc(NB, 4);
			int64_t *bb = calloc(NB, 8);
			stg_text *bt = calloc(NB, sizeof(stg_text));
			stg_col_batch br[3] = {
			    {ba, NULL}, {bb, NULL}, {bt, NULL}};
			uint64_t s1, s3;

			CHECK(ba && bb && bt);
			for (int i = 0; bt && i < NB; i++)
				bt[i] = (stg_text){"v", 1};
			CHECK_RC(stg_begin(p), GPMDB_OK);
			if (ba && bb && bt)
				CHECK_RC(stg_append(p, t2id, br, NB), GPMDB_OK);
			s1 = stg_col_stamp(p, t2id, 1);
			s3 = stg_col_stamp(p, t2id, -1);
			CHECK_RC(stg_commit(p), GPMDB_OK);
			CHECK(stg_col_stamp(p, t2id, 1) == s1);
			CHECK(stg_col_stamp(p, t2id, -1) == s3);
			s2 = stg_col_stamp(p, t2id, 0);
			free(ba);
			free(bb);
			free(bt);
		}
		/* a rollback: everything (undo may restore any bytes) */
		CHECK_RC(stg_begin(p), GPMDB_OK);
		CHECK_RC(stg_update(p, tid, 1, ca, id1, 1, va), GPMDB_OK);
		CHECK_RC(stg_rollback(p), GPMDB_OK);
		CHECK(stg_col_stamp(p, tid, 1) != sb);
		CHECK(stg_col_stamp(p, t2id, 0) != s2);
		TU_CHECK_OK(p);
		stg_close(p);
		/* another handle of the same file: stamps of its own */
		p = tu_open_ex(path, false, false, 0, 0);
		if (!p)
			return;
		CHECK(stg_col_stamp(p, t2id, 0) != s2);
		stg_close(p);
		unlink(path);
	}
}

int main(void)
{
	TEST_RUN(test_all_types);
	TEST_RUN(test_boundaries);
	TEST_RUN(test_big_append);
	TEST_RUN(test_widen_append);
	TEST_RUN(test_not_null);
	TEST_RUN(test_update_delete);
	TEST_RUN(test_write_stamps);
	tu_cleanup();
	TEST_MAIN_END();
}
