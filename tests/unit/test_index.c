/*
 * test_index.c - the index B+-tree in the pool (storage/btree.c, index.c)
 * through the storage API, against brute-force models: random inserts and
 * deletes (splits, emptied leaves, deletion to empty and refilling), many
 * duplicates of a non-unique key, TEXT keys past the stored prefix and
 * longer than a node, NULLs first, multi-column prefixes and ranges in
 * both directions, the bulk (rebuild) and entry-by-entry paths, unique
 * violations that change nothing, statement and transaction rollback,
 * reopen, appends of ascending keys at the tree's right edge (the pool
 * grows linearly with them), and gpmdb_check on every step (stg_check: order,
 * links, counts, every live row once).
 */
#include "test_storage_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng = 88172645463325252ull;
static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* A table t(a BIGINT, b TEXT, c DOUBLE) */
static uint32_t mk_table(stg_pool *p)
{
	stg_column_def cols[3] = {{.name = "a", .type = STG_T_BIGINT},
				  {.name = "b", .type = STG_T_TEXT},
				  {.name = "c", .type = STG_T_DOUBLE}};
	uint32_t tid = 0;

	CHECK_RC(stg_table_create(p, "t", cols, 3, "CREATE TABLE t(...)", &tid),
		 GPMDB_OK);
	return tid;
}

static char texts[64][6000];

/* Appends n rows: a from av (NULL where anull bit), b one of texts[], c. */
static int app(stg_pool *p, uint32_t tid, const int64_t *av,
	       const uint32_t *anull, const int *bi, const double *cv,
	       uint64_t n)
{
	stg_text *tv = malloc(sizeof(stg_text) * (n + 1));
	stg_col_batch b[3];
	int rc;

	for (uint64_t i = 0; i < n; i++)
		tv[i] =
		    (stg_text){texts[bi[i]], (uint32_t)strlen(texts[bi[i]])};
	b[0] = (stg_col_batch){av, anull};
	b[1] = (stg_col_batch){tv, NULL};
	b[2] = (stg_col_batch){cv, NULL};
	rc = stg_append(p, tid, b, n);
	free(tv);
	return rc;
}

/* Row ids of the range [lo, hi] on column a of index ix, via a cursor. */
static uint64_t scan(stg_pool *p, uint32_t ix, bool has_lo, int64_t lo,
		     bool lo_incl, bool has_hi, int64_t hi, bool hi_incl,
		     bool desc, uint64_t *out, uint64_t cap)
{
	stg_key_val l = {.i = lo}, h = {.i = hi};
	stg_ix_range r = {has_lo, has_hi, &l, &h, lo_incl, hi_incl, desc};
	stg_icur *c = NULL;
	uint64_t n = 0;
	uint32_t got;

	CHECK_RC(stg_icur_open(p, ix, &r, &c), GPMDB_OK);
	if (!c)
		return 0;
	do {
		CHECK_RC(stg_icur_next(c, out + n, (uint32_t)(cap - n), &got),
			 GPMDB_OK);
		n += got;
	} while (got && n < cap);
	stg_icur_close(c);
	return n;
}

static uint32_t ix_id(stg_pool *p, const char *name)
{
	stg_index_info ii;

	CHECK_RC(stg_index_find(p, name, &ii), GPMDB_OK);
	return ii.index_id;
}

/* Model: value of a per row, alive flags; checks range scans of index on
 * a (non-unique) against it. */
static void check_ranges(stg_pool *p, uint32_t ix, const int64_t *a,
			 const bool *alive, uint64_t rows, int trials)
{
	uint64_t *got = malloc(sizeof(uint64_t) * (rows + 1));

	for (int k = 0; k < trials; k++) {
		int64_t lo = (int64_t)(rnd() % 1200) - 100,
			hi = lo + (int64_t)(rnd() % 300);
		bool li = rnd() & 1, hi_i = rnd() & 1, desc = rnd() & 1;
		bool hl = rnd() % 8 != 0, hh = rnd() % 8 != 0;
		uint64_t n = scan(p, ix, hl, lo, li, hh, hi, hi_i, desc, got,
				  rows + 1),
			 want = 0;
		bool ordered = true;

		for (uint64_t r = 0; r < rows; r++)
			if (alive[r] &&
			    (!hl || a[r] > lo || (li && a[r] == lo)) &&
			    (!hh || a[r] < hi || (hi_i && a[r] == hi)))
				want++;
		CHECKF(n == want, "range [%lld %lld] got %llu want %llu",
		       (long long)lo, (long long)hi, (unsigned long long)n,
		       (unsigned long long)want);
		for (uint64_t i = 1; i < n; i++) {
			int64_t x = a[got[i - 1]], y = a[got[i]];
			if (desc ? (x < y || (x == y && got[i - 1] < got[i]))
				 : (x > y || (x == y && got[i - 1] > got[i])))
				ordered = false;
		}
		CHECK(ordered);
		for (uint64_t i = 0; i < n; i++)
			CHECK(got[i] < rows && alive[got[i]]);
	}
	free(got);
}

static void test_random_insert_delete(void)
{
	const char *path = tu_path("ixrand", 0);
	stg_pool *p = tu_open_ex(path, true, false, 8u << 20, 0);
	enum { N = 20000 };
	int64_t *a = malloc(sizeof(int64_t) * N);
	bool *alive = calloc(N, 1);
	int *bi = calloc(N, sizeof(int));
	double *cv = calloc(N, sizeof(double));
	uint32_t tid, ix, acol = 0;
	uint64_t rows = 0;

	if (!p)
		return;
	CHECK_RC(stg_begin(p), GPMDB_OK);
	tid = mk_table(p);
	CHECK_RC(stg_index_create(p, tid, "ia", &acol, 1, false, STG_IX_CREATED,
				  "CREATE INDEX ia ON t(a)", NULL),
		 GPMDB_OK);
	CHECK_RC(stg_commit(p), GPMDB_OK);
	ix = ix_id(p, "ia");
	/* batches of 1..300 rows (entry by entry), a few large (bulk) */
	while (rows < N) {
		uint64_t n = rnd() % 8 == 0 ? 2000 : 1 + rnd() % 300;
		if (rows + n > N)
			n = N - rows;
		for (uint64_t i = 0; i < n; i++) {
			a[rows + i] = (int64_t)(rnd() % 1000);
			alive[rows + i] = true;
		}
		CHECK_RC(stg_begin(p), GPMDB_OK);
		CHECK_RC(app(p, tid, a + rows, NULL, bi, cv, n), GPMDB_OK);
		CHECK_RC(stg_commit(p), GPMDB_OK);
		rows += n;
	}
	TU_CHECK_OK(p);
	check_ranges(p, ix, a, alive, rows, 200);
	/* delete half, in batches, then everything: leaves empty and go */
	for (int round = 0; round < 2; round++) {
		uint64_t *del = malloc(sizeof(uint64_t) * N), nd = 0;
		for (uint64_t r = 0; r < rows; r++)
			if (alive[r] && (round || rnd() % 2)) {
				del[nd++] = r;
				alive[r] = false;
			}
		for (uint64_t i = 0; i < nd;) {
			uint64_t k = rnd() % 4 == 0 ? 3000 : 1 + rnd() % 200;
			if (i + k > nd)
				k = nd - i;
			CHECK_RC(stg_begin(p), GPMDB_OK);
			CHECK_RC(stg_delete(p, tid, del + i, k), GPMDB_OK);
			CHECK_RC(stg_commit(p), GPMDB_OK);
			i += k;
		}
		free(del);
		TU_CHECK_OK(p);
		check_ranges(p, ix, a, alive, rows, 100);
	}
	{
		stg_index_info ii;
		CHECK_RC(stg_index_find(p, "ia", &ii), GPMDB_OK);
		CHECK(ii.entries == 0);
	}
	/* refill the emptied tree */
	for (uint64_t i = 0; i < 500; i++)
		a[i] = (int64_t)(rnd() % 1000);
	CHECK_RC(stg_begin(p), GPMDB_OK);
	for (uint64_t i = 0; i < 500; i += 50)
		CHECK_RC(app(p, tid, a + i, NULL, bi, cv, 50), GPMDB_OK);
	CHECK_RC(stg_commit(p), GPMDB_OK);
	{
		/* the model: rows' a values after the refill */
		int64_t *a2 = malloc(sizeof(int64_t) * (rows + 500));
		bool *al2 = calloc(rows + 500, 1);
		memcpy(a2, a, sizeof(int64_t) * rows);
		for (uint64_t i = 0; i < 500; i++) {
			a2[rows + i] = a[i];
			al2[rows + i] = true;
		}
		TU_CHECK_OK(p);
		check_ranges(p, ix, a2, al2, rows + 500, 100);
		free(a2);
		free(al2);
	}
	CHECK_RC(stg_close(p), GPMDB_OK);
	free(a);
	free(alive);
	free(bi);
	free(cv);
}

/* Unique index on TEXT b: long strings that share the stored prefix, one
 * longer than a node; equal keys refused, nothing written. */
static void test_text_unique(void)
{
	const char *path = tu_path("ixtext", 1);
	stg_pool *p = tu_open_ex(path, true, false, 8u << 20, 0);
	uint32_t tid, bcol = 1;
	int64_t av[64] = {0};
	double cv[64] = {0};
	int bi[64];

	if (!p)
		return;
	for (int i = 0; i < 64; i++) {
		/* 40 bytes shared, then a distinct tail; some very long */
		memset(texts[i], 'q', 40);
		snprintf(texts[i] + 40, 100, "%02d", 63 - i);
		if (i % 16 == 5) {
			memset(texts[i] + 42, 'z', 5500);
			texts[i][5542] = 0;
		}
		bi[i] = i;
		av[i] = i;
	}
	CHECK_RC(stg_begin(p), GPMDB_OK);
	tid = mk_table(p);
	CHECK_RC(stg_index_create(p, tid, "ib", &bcol, 1, true, STG_IX_UNIQUE,
				  NULL, NULL),
		 GPMDB_OK);
	CHECK_RC(app(p, tid, av, NULL, bi, cv, 32), GPMDB_OK);
	CHECK_RC(stg_commit(p), GPMDB_OK);
	TU_CHECK_OK(p);
	/* a batch repeating row 7's text at its position 3 */
	{
		int b2[5] = {40, 41, 42, 7, 43};
		CHECK_RC(stg_begin(p), GPMDB_OK);
		CHECK_RC(app(p, tid, av, NULL, b2, cv, 5), GPMDB_CONSTRAINT);
		CHECK(stg_constraint_row(p) == 3);
		CHECK(strstr(stg_errmsg(p), "UNIQUE constraint failed: t.b"));
		CHECK_RC(stg_rollback(p), GPMDB_OK);
		CHECK(stg_row_count(p, tid) == 32);
	}
	/* inside one batch: 50 and 50 */
	{
		int b3[4] = {48, 50, 49, 50};
		CHECK_RC(stg_begin(p), GPMDB_OK);
		CHECK_RC(app(p, tid, av, NULL, b3, cv, 4), GPMDB_CONSTRAINT);
		CHECK(stg_constraint_row(p) == 3);
		CHECK_RC(stg_rollback(p), GPMDB_OK);
	}
	TU_CHECK_OK(p);
	/* ordered read: the strings in byte order */
	{
		stg_ix_range r = {0, 0, NULL, NULL, true, true, false};
		stg_icur *c;
		uint64_t ids[64];
		uint32_t got;
		stg_index_info ii;
		CHECK_RC(stg_index_find(p, "ib", &ii), GPMDB_OK);
		CHECK_RC(stg_icur_open(p, ii.index_id, &r, &c), GPMDB_OK);
		CHECK_RC(stg_icur_next(c, ids, 64, &got), GPMDB_OK);
		CHECK(got == 32);
		for (uint32_t i = 1; i < got; i++)
			CHECK(strcmp(texts[ids[i - 1]], texts[ids[i]]) < 0);
		stg_icur_close(c);
		/* equality on a long key */
		stg_key_val k = {.s = texts[21],
				 .len = (uint32_t)strlen(texts[21])};
		r = (stg_ix_range){1, 1, &k, &k, true, true, false};
		CHECK_RC(stg_icur_open(p, ii.index_id, &r, &c), GPMDB_OK);
		CHECK_RC(stg_icur_next(c, ids, 64, &got), GPMDB_OK);
		CHECK(got == 1 && ids[0] == 21);
		stg_icur_close(c);
	}
	CHECK_RC(stg_close(p), GPMDB_OK);
	/* reopened: the tree is there, not rebuilt, and still checks */
	p = tu_open_ex(path, false, false, 0, 0);
	if (!p)
		return;
	TU_CHECK_OK(p);
	{
		stg_index_info ii;
		CHECK_RC(stg_index_find(p, "ib", &ii), GPMDB_OK);
		CHECK(ii.entries == 32 && ii.unique && ii.bytes > 0);
	}
	CHECK_RC(stg_close(p), GPMDB_OK);
}

/* Many equal keys of a non-unique index, NULLs first, multi-column
 * prefix ranges, updates of the key column, savepoint rollback. */
static void test_dups_nulls_update(void)
{
	const char *path = tu_path("ixdup", 0);
	stg_pool *p = tu_open_ex(path, true, false, 8u << 20, 0);
	enum { N = 3000 };
	int64_t a[N];
	uint32_t an[(N + 31) / 32] = {0}, tid, cols2[2] = {0, 2}, ix2;
	double cv[N];
	int bi[N] = {0};
	uint64_t ids[N + 1];

	if (!p)
		return;
	for (int i = 0; i < N; i++) {
		a[i] = i % 3; /* 1000 rows per key */
		cv[i] = (double)(N - i) / 7.0;
		if (i % 10 == 0)
			an[i / 32] |= 1u << (i % 32);
	}
	CHECK_RC(stg_begin(p), GPMDB_OK);
	tid = mk_table(p);
	CHECK_RC(app(p, tid, a, an, bi, cv, N), GPMDB_OK);
	CHECK_RC(stg_index_create(p, tid, "iac", cols2, 2, false,
				  STG_IX_CREATED, NULL, &ix2),
		 GPMDB_OK);
	CHECK_RC(stg_commit(p), GPMDB_OK);
	TU_CHECK_OK(p);
	{
		/* a = 1 and c < 100: a prefix equality plus a range */
		stg_key_val lo[2] = {{.i = 1}, {.d = 0}},
			    hi[2] = {{.i = 1}, {.d = 100}};
		stg_ix_range r = {1, 2, lo, hi, true, false, false};
		stg_icur *c;
		uint32_t got;
		uint64_t want = 0;
		for (int i = 0; i < N; i++)
			if (i % 10 && a[i] == 1 && cv[i] < 100)
				want++;
		CHECK_RC(stg_icur_open(p, ix2, &r, &c), GPMDB_OK);
		CHECK_RC(stg_icur_next(c, ids, N, &got), GPMDB_OK);
		CHECK(got == want);
		for (uint32_t i = 1; i < got; i++)
			CHECK(cv[ids[i - 1]] <= cv[ids[i]]);
		stg_icur_close(c);
		/* NULLs first: the first 300 entries are the NULL rows */
		r = (stg_ix_range){0, 0, NULL, NULL, true, true, false};
		CHECK_RC(stg_icur_open(p, ix2, &r, &c), GPMDB_OK);
		CHECK_RC(stg_icur_next(c, ids, N, &got), GPMDB_OK);
		CHECK(got == N);
		for (uint32_t i = 0; i < 300 && i < got; i++)
			CHECK(ids[i] % 10 == 0);
		stg_icur_close(c);
		/* IS NULL as an equality on a NULL */
		stg_key_val nul = {.null = true};
		r = (stg_ix_range){1, 1, &nul, &nul, true, true, true};
		CHECK_RC(stg_icur_open(p, ix2, &r, &c), GPMDB_OK);
		CHECK_RC(stg_icur_next(c, ids, N, &got), GPMDB_OK);
		CHECK(got == 300);
		stg_icur_close(c);
		double f = stg_index_estimate(
		    p, ix2, &(stg_ix_range){1, 1, lo, lo, true, true, false});
		CHECKF(f > 0.2 && f < 0.45, "estimate %f", f);
	}
	/* update a of rows 0..99 to 7, rolled back to a savepoint, then
	 * again and committed */
	{
		uint64_t rid[100];
		int64_t nv[100];
		uint32_t col0 = 0;
		stg_col_batch v = {nv, NULL};
		stg_mark m;
		for (int i = 0; i < 100; i++) {
			rid[i] = (uint64_t)i * 7;
			nv[i] = 7;
		}
		CHECK_RC(stg_begin(p), GPMDB_OK);
		CHECK_RC(stg_savepoint(p, &m), GPMDB_OK);
		CHECK_RC(stg_update(p, tid, 1, &col0, rid, 100, &v), GPMDB_OK);
		CHECK_RC(stg_rollback_to(p, &m), GPMDB_OK);
		TU_CHECK_OK(p);
		CHECK_RC(stg_savepoint(p, &m), GPMDB_OK);
		CHECK_RC(stg_update(p, tid, 1, &col0, rid, 100, &v), GPMDB_OK);
		CHECK_RC(stg_commit(p), GPMDB_OK);
		TU_CHECK_OK(p);
		stg_key_val k = {.i = 7};
		stg_ix_range r = {1, 1, &k, &k, true, true, false};
		stg_icur *c;
		uint32_t got;
		CHECK_RC(stg_icur_open(p, ix2, &r, &c), GPMDB_OK);
		CHECK_RC(stg_icur_next(c, ids, N, &got), GPMDB_OK);
		CHECK(got == 100);
		stg_icur_close(c);
	}
	/* bound probes */
	{
		int64_t keys[4] = {7, 1, 99, 0};
		int64_t out[4];
		stg_col_batch kb[2] = {{keys, NULL}, {cv, NULL}};
		uint32_t one = 0, iu;
		CHECK_RC(stg_begin(p), GPMDB_OK);
		int64_t ua[N];
		(void)ua;
		CHECK_RC(stg_index_create(p, tid, "iu", &one, 1, true,
					  STG_IX_UNIQUE, NULL, &iu),
			 GPMDB_CONSTRAINT);
		CHECK_RC(stg_rollback(p), GPMDB_OK);
		CHECK_RC(stg_index_probe(p, ix2, kb, 1, out), GPMDB_OK);
		(void)out;
	}
	CHECK_RC(stg_close(p), GPMDB_OK);
}

/* A transaction rolled back after many entry changes and a rebuild:
 * the tree is back as it was. */
static void test_txn_rollback(void)
{
	const char *path = tu_path("ixrb", 1);
	stg_pool *p = tu_open_ex(path, true, false, 8u << 20, 0);
	enum { N = 5000 };
	int64_t a[N];
	double cv[N] = {0};
	int bi[N] = {0};
	uint32_t tid, col0 = 0, ix;
	stg_index_info before, after;

	if (!p)
		return;
	for (int i = 0; i < N; i++)
		a[i] = (int64_t)(rnd() % 100000);
	CHECK_RC(stg_begin(p), GPMDB_OK);
	tid = mk_table(p);
	CHECK_RC(stg_index_create(p, tid, "ia", &col0, 1, false, STG_IX_CREATED,
				  NULL, &ix),
		 GPMDB_OK);
	CHECK_RC(app(p, tid, a, NULL, bi, cv, N), GPMDB_OK);
	CHECK_RC(stg_commit(p), GPMDB_OK);
	CHECK_RC(stg_index_find(p, "ia", &before), GPMDB_OK);
	CHECK_RC(stg_begin(p), GPMDB_OK);
	for (int i = 0; i < 40; i++)
		CHECK_RC(app(p, tid, a + i * 10, NULL, bi, cv, 10), GPMDB_OK);
	CHECK_RC(app(p, tid, a, NULL, bi, cv, N), GPMDB_OK); /* bulk */
	{
		uint64_t del[300];
		for (int i = 0; i < 300; i++)
			del[i] = (uint64_t)i * 3;
		CHECK_RC(stg_delete(p, tid, del, 300), GPMDB_OK);
	}
	CHECK_RC(stg_rollback(p), GPMDB_OK);
	TU_CHECK_OK(p);
	CHECK_RC(stg_index_find(p, "ia", &after), GPMDB_OK);
	CHECK(after.entries == before.entries && after.entries == N);
	CHECK_RC(stg_begin(p), GPMDB_OK);
	CHECK_RC(stg_index_rebuild(p, ix), GPMDB_OK);
	CHECK_RC(stg_commit(p), GPMDB_OK);
	TU_CHECK_OK(p);
	CHECK_RC(stg_begin(p), GPMDB_OK);
	CHECK_RC(stg_index_drop(p, "ia"), GPMDB_OK);
	CHECK_RC(stg_commit(p), GPMDB_OK);
	TU_CHECK_OK(p); /* its extents are free again: no leak */
	CHECK_RC(stg_close(p), GPMDB_OK);
}

/* Appends of equal batches of ascending keys to an indexed table: the
 * pool grows with the rows (a rebuild per append put the whole tree in a
 * new extent each time, and the smaller old ones were never reused: the
 * pool grew with the square of the appends), the tree takes the appended
 * entries at its right edge, and a batch below the tree's last key still
 * goes in (a rebuild).  Both modes. */
static void test_append_space(int mode)
{
	const char *path = tu_path("ixsp", mode);
	stg_pool *p = tu_open_ex(path, true, false, 8u << 20, 0);
	enum { B = 65536, K = 32 };
	stg_column_def col = {.name = "a", .type = STG_T_BIGINT};
	int64_t *a = malloc(sizeof(int64_t) * B);
	uint64_t *all = malloc(sizeof(uint64_t) * B);
	uint64_t size[K + 1], used = 0, got[4];
	uint32_t tid = 0, col0 = 0, ix = 0;
	stg_index_info ii;
	stg_stats st;

	if (!p || !a || !all) {
		free(a);
		free(all);
		return;
	}
	CHECK_RC(stg_begin(p), GPMDB_OK);
	CHECK_RC(stg_table_create(p, "t", &col, 1, "CREATE TABLE t(a)", &tid),
		 GPMDB_OK);
	CHECK_RC(stg_index_create(p, tid, "ia", &col0, 1, true, STG_IX_CREATED,
				  NULL, &ix),
		 GPMDB_OK);
	CHECK_RC(stg_commit(p), GPMDB_OK);
	for (int k = 0; k <= K; k++) {
		if (k > 0) {
			for (int i = 0; i < B; i++)
				a[i] = (int64_t)(k - 1) * B + i;
			CHECK_RC(stg_begin(p), GPMDB_OK);
			CHECK_RC(
			    stg_append(p, tid, &(stg_col_batch){a, NULL}, B),
			    GPMDB_OK);
			CHECK_RC(stg_commit(p), GPMDB_OK);
		}
		CHECK_RC(stg_get_stats(p, &st), GPMDB_OK);
		size[k] = st.pool_size;
		used = st.used_bytes;
	}
	if (getenv("TEST_SHOW_SIZES"))
		for (int k = 0; k <= K; k++)
			printf("# %d %llu\n", k, (unsigned long long)size[k]);
	/* linear: the second half of the appends grew the pool about as
	 * much as the first (the square: three times as much) */
	CHECKF(size[K] - size[K / 2] < 2 * (size[K / 2] - size[0]),
	       "pool %llu -> %llu -> %llu bytes over %d appends",
	       (unsigned long long)size[0], (unsigned long long)size[K / 2],
	       (unsigned long long)size[K], K);
	CHECKF(size[K] < 2 * used, "pool %llu bytes for %llu used",
	       (unsigned long long)size[K], (unsigned long long)used);
	TU_CHECK_OK(p);
	CHECK_RC(stg_index_find(p, "ia", &ii), GPMDB_OK);
	CHECK(ii.entries == (uint64_t)B * K);
	CHECK(scan(p, ix, true, (int64_t)B * K - 3, true, false, 0, false,
		   false, got, 4) == 3);
	CHECK(got[0] == (uint64_t)B * K - 3 && got[2] == (uint64_t)B * K - 1);
	/* keys below the first and above the last: rolled back, then
	 * taken (a rebuild) */
	for (int i = 0; i < B; i++)
		a[i] = i % 2 ? (int64_t)B * K + i : -1 - i;
	CHECK_RC(stg_begin(p), GPMDB_OK);
	CHECK_RC(stg_append(p, tid, &(stg_col_batch){a, NULL}, B), GPMDB_OK);
	CHECK_RC(stg_rollback(p), GPMDB_OK);
	TU_CHECK_OK(p);
	CHECK_RC(stg_begin(p), GPMDB_OK);
	CHECK_RC(stg_append(p, tid, &(stg_col_batch){a, NULL}, B), GPMDB_OK);
	CHECK_RC(stg_commit(p), GPMDB_OK);
	TU_CHECK_OK(p);
	CHECK(scan(p, ix, false, 0, false, true, 0, false, false, all, B) ==
	      B / 2);
	CHECK(scan(p, ix, true, (int64_t)B * K, true, false, 0, false, true,
		   all, B) == B / 2);
	CHECK(all[0] == (uint64_t)B * K + B - 1);
	CHECK_RC(stg_index_find(p, "ia", &ii), GPMDB_OK);
	CHECK(ii.entries == (uint64_t)B * (K + 1));
	CHECK_RC(stg_close(p), GPMDB_OK);
	free(a);
	free(all);
}

static void test_append_space_pmem(void)
{
	test_append_space(0);
}

static void test_append_space_msync(void)
{
	test_append_space(1);
}

/* A node damaged on purpose (an entry's key bytes changed in the file):
 * stg_check and gpmdb_check's report name the index. */
static void test_corrupt_detected(void)
{
	const char *path = tu_path("ixbad", 1);
	stg_pool *p = tu_open_ex(path, true, false, 8u << 20, 0);
	enum { N = 2000 };
	int64_t a[N];
	double cv[N] = {0};
	int bi[N] = {0};
	uint32_t tid, col0 = 0;
	char *rep = NULL;
	bool done = false;

	if (!p)
		return;
	for (int i = 0; i < N; i++)
		a[i] = i * 3;
	CHECK_RC(stg_begin(p), GPMDB_OK);
	tid = mk_table(p);
	CHECK_RC(app(p, tid, a, NULL, bi, cv, N), GPMDB_OK);
	CHECK_RC(stg_index_create(p, tid, "ia", &col0, 1, false, STG_IX_CREATED,
				  NULL, NULL),
		 GPMDB_OK);
	CHECK_RC(stg_commit(p), GPMDB_OK);
	TU_CHECK_OK(p);
	CHECK_RC(stg_close(p), GPMDB_OK);
	{
		/* the second leaf found: its 5th entry's value byte */
		FILE *f = fopen(path, "r+b");
		stg_ix_node n;
		int leaves = 0;
		for (long off = 0; f && !done; off += STG_IX_NODE) {
			if (fseek(f, off, SEEK_SET) ||
			    fread(&n, sizeof(n), 1, f) != 1)
				break;
			if (n.magic != STG_IXN_MAGIC || n.level != 0 ||
			    n.n < 10 || ++leaves < 2)
				continue;
			/* entry 4: 9 key bytes + 8 row id; byte 8 = low byte */
			unsigned char x = 0xee;
			CHECK(fseek(f, off + STG_IX_NODE_HDR + 4 * 17 + 8,
				    SEEK_SET) == 0);
			CHECK(fwrite(&x, 1, 1, f) == 1);
			done = true;
		}
		if (f)
			fclose(f);
	}
	CHECK(done);
	p = tu_open_ex(path, false, false, 0, 0);
	if (!p)
		return;
	CHECK_RC(stg_check(p, &rep), GPMDB_CORRUPT);
	CHECKF(rep && strstr(rep, "index ia"), "report: %s",
	       rep ? rep : "(none)");
	free(rep);
	CHECK_RC(stg_close(p), GPMDB_OK);
}

int main(void)
{
	TEST_RUN(test_random_insert_delete);
	TEST_RUN(test_text_unique);
	TEST_RUN(test_dups_nulls_update);
	TEST_RUN(test_txn_rollback);
	TEST_RUN(test_corrupt_detected);
	TEST_RUN(test_append_space_pmem);
	TEST_RUN(test_append_space_msync);
	tu_cleanup();
	TEST_MAIN_END();
}
