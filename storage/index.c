/*
 * index.c - indexes in the pool: the public API of storage.h's "Indexes"
 * and their upkeep by the write paths (internal.h idx_*).
 *
 * Every write keeps every index of its table exact, inside the same
 * storage transaction, so the indexes roll back and recover with the rows
 * (the tree's nodes are mlog targets, btree.c):
 *   - INSERT: the new rows' unique keys are checked before anything is
 *     written (against the tree and each other), entries added after;
 *   - UPDATE: the new keys are checked against the table as it will be
 *     (rows being updated do not conflict with their old keys), the rows'
 *     entries of indexes on changed columns removed before the write and
 *     added back from the table after it;
 *   - DELETE: the rows' entries are removed before.
 * A small batch changes the tree entry by entry; a batch that would log
 * too many nodes (or is large against the index) collects the entries,
 * merges the change in sorted order and builds a new tree (ix_build),
 * which costs one sequential pass and logs only the header.
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "btree.h"

#define MAX_IX 64

static bool bit_at_(const uint32_t *b, uint64_t i);

/* ---- finding indexes ---------------------------------------------------- */

/* A table's indexes, opened; t has room for exactly n (malloc'd). */
typedef struct {
	int n;
	ixt *t;
} ixset;

static void ixset_free(ixset *s)
{
	if (s) {
		free(s->t);
		free(s);
	}
}

/* The indexes of the table at tcat (those with a tree). */
static int ix_of_table(stg_pool *p, uint64_t tcat, ixset *s)
{
	uint32_t tid = cat_entry(p, tcat)->table_id;
	uint64_t off = 0, steps = 0;
	int rc, cnt = 0;

	s->n = 0;
	s->t = NULL;
	while ((off = cat_walk(p, off)) && steps++ <= p->sb.nchunks) {
		stg_cat_entry *e = cat_entry(p, off);
		cnt +=
		    e->kind == STG_OBJ_INDEX && e->tdir && e->table_id == tid;
	}
	if (cnt > MAX_IX)
		return pool_err(p, GPMDB_UNSUPPORTED,
				"table %s has more than %d indexes",
				cat_entry(p, tcat)->name, MAX_IX);
	if (cnt == 0)
		return GPMDB_OK;
	if (!(s->t = malloc(sizeof(ixt) * (size_t)cnt)))
		return pool_err(p, GPMDB_NOMEM, "out of memory");
	off = 0;
	steps = 0;
	while ((off = cat_walk(p, off)) && steps++ <= p->sb.nchunks &&
	       s->n < cnt) {
		stg_cat_entry *e = cat_entry(p, off);

		if (e->kind != STG_OBJ_INDEX || !e->tdir || e->table_id != tid)
			continue;
		rc = ix_open(p, e->tdir, tcat, (uint32_t)e->obj_seq, e->name,
			     &s->t[s->n]);
		if (rc != GPMDB_OK)
			return rc;
		s->n++;
	}
	return GPMDB_OK;
}

/* The table's indexes for a write of n rows: *out NULL when there is
 * nothing to do (no rows, no index). */
static int ixset_open(stg_pool *p, uint64_t tcat, uint64_t n, ixset **out)
{
	ixset *s;
	int rc;

	*out = NULL;
	if (n == 0)
		return GPMDB_OK;
	if (!(s = calloc(1, sizeof(*s))))
		return pool_err(p, GPMDB_NOMEM, "out of memory");
	/* one walk counts the table's indexes: none, nothing to do */
	if ((rc = ix_of_table(p, tcat, s)) != GPMDB_OK || s->n == 0) {
		ixset_free(s);
		return rc;
	}
	*out = s;
	return GPMDB_OK;
}

/* A bitmap over the table's row ids with rowids[0..n) set (*nb bits). */
static uint8_t *drop_bitmap(const ixt *t, const uint64_t *rowids, uint64_t n,
			    uint64_t *nb)
{
	uint8_t *drop;

	*nb = cat_entry(t->p, t->tcat)->row_count;
	if (!(drop = calloc((size_t)(*nb / 8 + 1), 1)))
		return NULL;
	for (uint64_t i = 0; i < n; i++)
		if (rowids[i] < *nb)
			drop[rowids[i] / 8] |= (uint8_t)(1u << (rowids[i] % 8));
	return drop;
}

/* The catalog entry of index id (its object sequence number). */
static uint64_t find_index_entry(stg_pool *p, uint32_t id)
{
	uint64_t off = 0, steps = 0;

	while ((off = cat_walk(p, off)) && steps++ <= p->sb.nchunks) {
		stg_cat_entry *e = cat_entry(p, off);
		if (e->kind == STG_OBJ_INDEX && (uint32_t)e->obj_seq == id)
			return off;
	}
	return 0;
}

static int open_by_id(stg_pool *p, uint32_t id, ixt *t)
{
	uint64_t off = find_index_entry(p, id);
	stg_cat_entry *e;

	if (!off)
		return pool_err(p, GPMDB_NOTFOUND, "no such index (id %u)", id);
	e = cat_entry(p, off);
	if (!e->tdir)
		return pool_err(p, GPMDB_CORRUPT,
				"index %s has no tree (an older format): "
				"REINDEX %s builds it",
				e->name, e->name);
	return ix_open(p, e->tdir, 0, id, e->name, t);
}

/* "t.a, t.b" for a unique violation. */
static int fail_unique(stg_pool *p, const ixt *t, int64_t row)
{
	stg_cat_entry *e = cat_entry(p, t->tcat);
	stg_cat_column *cc = cat_cols(e);
	char names[600];
	size_t len = 0;

	names[0] = 0;
	for (int c = 0; c < t->ncols && len < sizeof(names); c++)
		len += (size_t)snprintf(names + len, sizeof(names) - len,
					"%s%s.%s", c ? ", " : "", e->name,
					cc[t->cols[c]].name);
	p->cons_row = row;
	return pool_err(p, GPMDB_CONSTRAINT, "UNIQUE constraint failed: %s",
			names);
}

int64_t stg_constraint_row(const stg_pool *p)
{
	return p ? p->cons_row : -1;
}

const char *stg_constraint_key(const stg_pool *p)
{
	return p ? p->cons_key : "";
}

/* "t.a = 5, t.b = 'x'" of batch row i (new values from b, through
 * cols_of as ix_enc_batch takes them, the table's row for the rest). */
static void key_text(stg_pool *p, const ixt *t, const stg_col_batch *b,
		     const uint8_t *from, const int *cols_of, uint64_t i,
		     uint64_t rowid)
{
	stg_cat_entry *e = cat_entry(p, t->tcat);
	size_t len = 0, cap = sizeof(p->cons_key);

	p->cons_key[0] = 0;
	for (int c = 0; c < t->ncols && len < cap; c++) {
		stg_type ty = (stg_type)t->types[c];
		const char *name = cat_cols(e)[t->cols[c]].name;
		const void *v = NULL;
		const char *s = NULL;
		uint32_t sl = 0;
		bool null = false;
		char val[120];
		int64_t wide;

		if (cols_of[c] >= 0) {
			const stg_col_batch *x = &b[cols_of[c]];
			null = bit_at_(x->nulls, i);
			if (ty == STG_T_TEXT) {
				s = ((const stg_text *)x->values)[i].ptr;
				sl = ((const stg_text *)x->values)[i].len;
			} else if (from && from[cols_of[c]] == STG_FROM_I32) {
				wide = ((const int32_t *)x->values)[i];
				v = &wide;
			} else {
				v = (const char *)x->values +
				    i * stg_type_width(ty);
			}
		} else {
			tab_cellv cv;
			if (tab_cell(p, t->tcat, t->cols[c], rowid, &cv))
				return;
			null = cv.null;
			v = cv.val;
			s = cv.text;
			sl = cv.tlen;
		}
		if (null)
			snprintf(val, sizeof(val), "NULL");
		else if (ty == STG_T_TEXT)
			snprintf(val, sizeof(val), "'%.*s'",
				 (int)(sl > 100 ? 100 : sl), s);
		else if (ty == STG_T_FLOAT)
			snprintf(val, sizeof(val), "%.9g", *(const float *)v);
		else if (ty == STG_T_DOUBLE)
			snprintf(val, sizeof(val), "%.17g", *(const double *)v);
		else if (ty == STG_T_INT || ty == STG_T_DATE)
			snprintf(val, sizeof(val), "%d", *(const int32_t *)v);
		else if (ty == STG_T_BOOLEAN)
			snprintf(val, sizeof(val), "%u", *(const uint8_t *)v);
		else
			snprintf(val, sizeof(val), "%lld",
				 (long long)*(const int64_t *)v);
		len += (size_t)snprintf(p->cons_key + len, cap - len,
					"%s%s.%s = %s", c ? ", " : "", e->name,
					name, val);
	}
}

/* ---- an append's sorted batch ------------------------------------------ */

void idx_presorted_clear(stg_pool *p)
{
	for (int i = 0; i < p->nixpre; i++)
		free(p->ixpre[i].recs);
	p->nixpre = 0;
}

static void presorted_put(const ixt *t, uint8_t *recs, uint64_t n)
{
	stg_pool *p = t->p;

	if (p->nixpre == (int)(sizeof(p->ixpre) / sizeof(p->ixpre[0]))) {
		free(recs); /* more unique indexes than slots: sort again */
		return;
	}
	p->ixpre[p->nixpre].index_id = t->index_id;
	p->ixpre[p->nixpre].tcat = t->tcat;
	p->ixpre[p->nixpre].n = n;
	p->ixpre[p->nixpre].recs = recs;
	p->ixpre[p->nixpre].ivals = NULL;
	p->ixpre[p->nixpre].i32 = false;
	p->nixpre++;
}

/* An append's integer keys that rise above the tree: no records, the
 * column is read again by idx_after_append (false: no slot left). */
static bool presorted_put_int(const ixt *t, const void *v, bool i32, uint64_t n)
{
	stg_pool *p = t->p;

	if (p->nixpre == (int)(sizeof(p->ixpre) / sizeof(p->ixpre[0])))
		return false;
	presorted_put(t, NULL, n);
	p->ixpre[p->nixpre - 1].ivals = v;
	p->ixpre[p->nixpre - 1].i32 = i32;
	return true;
}

/* The records (key, batch row) t's check sorted for these n rows, now
 * (key, first + batch row): the same order, since the row ids grow with
 * the batch rows.  NULL when there are none. */
static uint8_t *presorted_take(const ixt *t, uint64_t first, uint64_t n)
{
	stg_pool *p = t->p;

	for (int i = 0; i < p->nixpre; i++) {
		uint8_t *recs = p->ixpre[i].recs;

		if (p->ixpre[i].index_id != t->index_id ||
		    p->ixpre[i].tcat != t->tcat || p->ixpre[i].n != n || !recs)
			continue;
		p->ixpre[i] = p->ixpre[--p->nixpre];
#pragma omp parallel for if (n > 65536) schedule(static)
		for (uint64_t j = 0; j < n; j++) {
			uint8_t *r = recs + j * t->ew + t->kw;
			uint64_t id;

			memcpy(&id, r, 8);
			id += first;
			memcpy(r, &id, 8);
		}
		return recs;
	}
	return NULL;
}

/* presorted_put_int's column for these n rows of t: true and *v, *i32
 * (the slot taken), else false. */
static bool presorted_take_int(const ixt *t, uint64_t n, const void **v,
			       bool *i32)
{
	stg_pool *p = t->p;

	for (int i = 0; i < p->nixpre; i++) {
		if (p->ixpre[i].index_id != t->index_id ||
		    p->ixpre[i].tcat != t->tcat || p->ixpre[i].n != n ||
		    !p->ixpre[i].ivals)
			continue;
		*v = p->ixpre[i].ivals;
		*i32 = p->ixpre[i].i32;
		p->ixpre[i] = p->ixpre[--p->nixpre];
		return true;
	}
	return false;
}

/* ---- unique checks ------------------------------------------------------ */

static bool bit_at_(const uint32_t *b, uint64_t i)
{
	return b && (b[i / 32] >> (i % 32) & 1);
}

/* Sorted row ids, for "is this row one of those being updated". */
static bool in_sorted(const uint64_t *v, uint64_t n, uint64_t x)
{
	uint64_t lo = 0, hi = n;

	while (lo < hi) {
		uint64_t m = lo + (hi - lo) / 2;
		if (v[m] < x)
			lo = m + 1;
		else
			hi = m;
	}
	return lo < n && v[lo] == x;
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Whether key rec is above every key of t's tree (memcmp of the key
 * bytes: the order of integer keys only). */
static bool above_tree(const ixt *t, const uint8_t *rec)
{
	ixpos c;

	ix_last(t, &c);
	return c.leaf == 0 || memcmp(ix_at(t, &c), rec, t->kw) < 0;
}

/*
 * Checks n new keys of a unique index: recs holds n records (key, batch
 * row), src resolves their TEXT ties; a key equal to an entry of the tree
 * conflicts unless the entry's row is in skip[0..nskip) (sorted: rows
 * being updated).  *bad is the lowest batch row at fault (the later row of
 * a pair inside the batch), -1 when none.  any_null: some key has a NULL
 * (the encoding loop saw it).
 */
static int check_keys(ixt *t, uint8_t *recs, uint64_t n, const ixsrc *src,
		      const uint64_t *skip, uint64_t nskip, int64_t *bad,
		      bool any_null, int64_t sorted, uint64_t *tv)
{
	uint32_t w = t->ew;
	uint64_t k = 0, t0;
	int64_t dup = sorted;
	int rc = GPMDB_OK;
	bool near = true; /* neighbours compared in the loop */

	int64_t first_bad = INT64_MAX;
	int err = GPMDB_OK;

	*bad = -1;
	/* keys with a NULL never conflict: drop them */
	if (any_null) {
		for (uint64_t i = 0; i < n; i++)
			if (!ix_key_has_null(t, recs + i * w)) {
				if (k != i)
					memcpy(recs + k * w, recs + i * w, w);
				k++;
			}
		n = k;
	}
	if (n == 0)
		return GPMDB_OK;
	t0 = pool_now_ns();
	t->p->wt.key_enc_ns += t0 - *tv;
	/* sorted >= -1: the records came sorted with their duplicates
	 * known (int_recs), no sort */
	if (sorted < -1 && n > 1)
		rc = ix_sort_dup(t, recs, n, src, &dup);
	*tv = pool_now_ns();
	t->p->wt.key_sort_ns += *tv - t0;
	if (rc != GPMDB_OK)
		return rc;
	/* the sort compared the neighbours already (dup): with an empty
	 * tree nothing is left to do (a pass over the records, 34-41 ms at
	 * 50M rows on 16 cores), nor when the lowest key of a sorted batch
	 * is above the tree's highest (keys counting up: memcmp is the key
	 * order of the integer keys int_recs sorts) */
	if (dup >= -1) {
		if (dup >= 0)
			first_bad = dup;
		near = sorted < -1;
		if (ix_hdr(t)->entries == 0 ||
		    (sorted >= -1 && above_tree(t, recs)))
			n = 0;
	}
	/* each key against its neighbour and the tree: read-only, on all
	 * cores; the lowest batch row at fault wins */
#pragma omp parallel for reduction(min                                         \
				   : first_bad) if (n > 65536)                 \
    schedule(static)
	for (uint64_t i = 0; i < n; i++) {
		const uint8_t *r = recs + i * w;
		uint64_t id = ix_rowid(t, r);
		ixpos c;
		int src_rc;

		if (near && i > 0 &&
		    ix_cmp(t, r - w, src, ix_rowid(t, r - w), r, src, id,
			   t->ncols) == 0) {
			/* sorted by batch row within a key: r is later */
			if ((int64_t)id < first_bad)
				first_bad = (int64_t)id;
			continue;
		}
		if (ix_hdr(t)->entries == 0)
			continue;
		if ((src_rc = ix_seek(t, r, src, id, t->ncols, false, &c)) !=
		    GPMDB_OK) {
			__atomic_store_n(&err, src_rc, __ATOMIC_RELAXED);
			continue;
		}
		while (c.leaf) {
			const uint8_t *e = ix_at(t, &c);
			if (ix_cmp(t, e, NULL, ix_rowid(t, e), r, src, id,
				   t->ncols) != 0)
				break;
			if (!in_sorted(skip, nskip, ix_rowid(t, e))) {
				if ((int64_t)id < first_bad)
					first_bad = (int64_t)id;
				break;
			}
			ix_next(t, &c);
		}
	}
	t0 = pool_now_ns();
	t->p->wt.key_probe_ns += t0 - *tv;
	*tv = t0;
	if (err != GPMDB_OK)
		return err;
	if (first_bad != INT64_MAX)
		*bad = first_bad;
	/* the whole batch, sorted: an append's entries come from it */
	t->sorted_all = !any_null;
	return GPMDB_OK;
}

/* A one-column integer key without NULLs (the usual primary key): its
 * records are written without ix_enc_batch's per-value dispatch (tag 1,
 * the value with its sign bit flipped, big-endian as ix_enc_int, then the
 * batch row).  At 50M keys the generic loop took 82-101 ms on 15 cores of
 * the H200.  NULL for any other key. */
static const stg_col_batch *int_key(const ixt *t, const stg_col_batch *b,
				    const int *cols_of)
{
	stg_type ty = (stg_type)t->types[0];
	const stg_col_batch *x;

	if (t->ncols != 1 || cols_of[0] < 0 || t->soff[0] != 0 || t->kw != 9 ||
	    t->ew != 17 ||
	    (ty != STG_T_INT && ty != STG_T_DATE && ty != STG_T_BIGINT &&
	     ty != STG_T_DECIMAL))
		return NULL;
	x = &b[cols_of[0]];
	return x->nulls == NULL && x->values != NULL ? x : NULL;
}

/* The key of row i as an unsigned number in the key's order. */
static inline uint64_t int_ord(bool i32, const void *v, uint64_t i)
{
	int64_t x = i32 ? ((const int32_t *)v)[i] : ((const int64_t *)v)[i];
	return (uint64_t)x ^ (1ull << 63);
}

/* Whether int_key's column x holds int32_t values (INT and DATE keys, a
 * BIGINT key appended from INT32 values, STG_FROM_I32). */
static bool int_i32(const ixt *t, const uint8_t *from, const int *cols_of)
{
	stg_type ty = (stg_type)t->types[0];

	return ty == STG_T_INT || ty == STG_T_DATE ||
	       (from && from[cols_of[0]] == STG_FROM_I32);
}

static inline void int_rec(uint8_t *r, uint64_t ord, uint64_t row)
{
	uint64_t u = __builtin_bswap64(ord);

	r[0] = 1;
	memcpy(r + 1, &u, 8);
	memcpy(r + 9, &row, 8);
}

/* ix_gen_fn of an integer column: rows [a, b) as entries with row ids
 * from first. */
typedef struct {
	const void *v;
	bool i32;
	uint64_t first;
} int_src;

static void int_gen(void *ctx, uint64_t a, uint64_t b, uint8_t *out,
		    uint32_t ew)
{
	const int_src *x = ctx;

	for (uint64_t i = a; i < b; i++, out += ew)
		int_rec(out, int_ord(x->i32, x->v, i), x->first + i);
}

/* Whether the keys rise strictly (a key counting up: sorted and unique
 * as they come), one read-only pass on every core. */
static bool int_rising(bool i32, const void *v, uint64_t n)
{
	bool down = false;

#pragma omp parallel for reduction(|| : down) if (n > 65536) schedule(static)
	for (uint64_t i = 1; i < n; i++)
		if (int_ord(i32, v, i) <= int_ord(i32, v, i - 1))
			down = true;
	return !down;
}

/*
 * The records of keys that do not rise, in key order (then batch row),
 * without sorting the records: (key bits that vary, batch row) pairs of
 * 8 bytes (16 past 32 bits of either) are radix sorted, least significant
 * digit first, digits of 8-11 bits over the bits that vary only, and the
 * records written from them in order; a key equal to its neighbour is a
 * duplicate (*dup: the lowest later row of such a pair, else -1).  The
 * generic path encoded the records, sorted (key, index) pairs of 16
 * bytes, gathered the 17-byte records at random and compared neighbours
 * through ix_cmp.
 */
static int int_sorted_recs(const ixt *t, bool i32, const void *v, uint8_t *recs,
			   uint64_t n, int64_t *dup)
{
	uint64_t lo = UINT64_MAX, hi = 0, vb, base;
	int nt = omp_get_max_threads() > 0 ? omp_get_max_threads() : 1;
	int64_t first = INT64_MAX;

#pragma omp parallel for reduction(min                                         \
				   : lo) reduction(max                         \
						   : hi) schedule(static)
	for (uint64_t i = 0; i < n; i++) {
		uint64_t o = int_ord(i32, v, i);
		lo = o < lo ? o : lo;
		hi = o > hi ? o : hi;
	}
	base = lo;
	vb = hi - lo ? 64 - (unsigned)__builtin_clzll(hi - lo) : 0;
	bool narrow = vb <= 32 && n <= UINT32_MAX;
	size_t pw = narrow ? 8 : 16;
	uint8_t *a = malloc(n * pw), *b = malloc(n * pw);
	int passes = vb ? (int)((vb + 10) / 11) : 0;
	int db =
	    passes ? (int)((vb + (unsigned)passes - 1) / (unsigned)passes) : 0;
	uint64_t nb = 1ull << db, *hist = calloc((size_t)nt * nb, 8);

	if (!a || !b || !hist) {
		free(a);
		free(b);
		free(hist);
		return pool_err(t->p, GPMDB_NOMEM, "out of memory");
	}
	/* pairs: narrow (key - lo) << 32 | row, else {key - lo, row} */
#pragma omp parallel for schedule(static)
	for (uint64_t i = 0; i < n; i++) {
		uint64_t k = int_ord(i32, v, i) - base;
		if (narrow)
			((uint64_t *)a)[i] = k << 32 | i;
		else {
			((uint64_t *)a)[2 * i] = k;
			((uint64_t *)a)[2 * i + 1] = i;
		}
	}
	for (int d = 0; d < passes; d++) {
		int sh = d * db + (narrow ? 32 : 0);
		uint64_t mask = nb - 1;

		memset(hist, 0, (size_t)nt * nb * 8);
#pragma omp parallel num_threads(nt)
		{
			int me = omp_get_thread_num(),
			    all = omp_get_num_threads();
			uint64_t r0 = n * (uint64_t)me / (uint64_t)all,
				 r1 = n * (uint64_t)(me + 1) / (uint64_t)all;
			uint64_t *h = hist + (size_t)me * nb;
			const uint64_t *pa = (const uint64_t *)a;
			uint64_t *pb = (uint64_t *)b;

			if (narrow)
				for (uint64_t i = r0; i < r1; i++)
					h[(pa[i] >> sh) & mask]++;
			else
				for (uint64_t i = r0; i < r1; i++)
					h[(pa[2 * i] >> sh) & mask]++;
#pragma omp barrier
#pragma omp single
			{
				uint64_t sum = 0;
				for (uint64_t q = 0; q < nb; q++)
					for (int th = 0; th < all; th++) {
						uint64_t c = hist[th * nb + q];
						hist[th * nb + q] = sum;
						sum += c;
					}
			}
			if (narrow)
				for (uint64_t i = r0; i < r1; i++)
					pb[h[(pa[i] >> sh) & mask]++] = pa[i];
			else
				for (uint64_t i = r0; i < r1; i++) {
					uint64_t at =
					    h[(pa[2 * i] >> sh) & mask]++;
					pb[2 * at] = pa[2 * i];
					pb[2 * at + 1] = pa[2 * i + 1];
				}
		}
		uint8_t *x = a;
		a = b;
		b = x;
	}
	free(hist);
	free(b);
	/* the records in order, and equal neighbours (stable: the later
	 * row of a pair comes second) */
#pragma omp parallel for reduction(min : first) schedule(static)
	for (uint64_t i = 0; i < n; i++) {
		const uint64_t *pa = (const uint64_t *)a;
		uint64_t k, row, pk;

		if (narrow) {
			k = pa[i] >> 32;
			row = pa[i] & 0xffffffffu;
			pk = i ? pa[i - 1] >> 32 : ~0ull;
		} else {
			k = pa[2 * i];
			row = pa[2 * i + 1];
			pk = i ? pa[2 * i - 2] : ~0ull;
		}
		if (i && k == pk && (int64_t)row < first)
			first = (int64_t)row;
		int_rec(recs + i * 17, k + base, row);
	}
	free(a);
	*dup = first == INT64_MAX ? -1 : first;
	return GPMDB_OK;
}

/*
 * The records of a one-column integer key (int_key; rise: whether its
 * keys rise, -1 not known yet).  Where the GPU
 * sorts this many records they are written in batch order for it (*dup
 * -2: not sorted).  Else keys that rise are written as they come, sorted
 * and unique (*dup -1), and others of a large batch through
 * int_sorted_recs; a small one is left to ix_sort_dup's qsort (*dup -2).
 */
static int int_recs(const ixt *t, const stg_col_batch *x, bool i32,
		    uint8_t *recs, uint64_t n, int rise, int64_t *dup)
{
	bool gpu = ix_sort_gpu(n);

	*dup = -2;
	if (!gpu && (rise < 0 ? int_rising(i32, x->values, n) : rise))
		*dup = -1;
	else if (!gpu && n >= 65536)
		return int_sorted_recs(t, i32, x->values, recs, n, dup);
#pragma omp parallel for if (n > 65536) schedule(static)
	for (uint64_t i = 0; i < n; i++)
		int_rec(recs + i * 17, int_ord(i32, x->values, i), i);
	return GPMDB_OK;
}

/* Key columns appended from INT32 values (STG_FROM_I32) widened for the
 * generic encoder: *b and *cols_of then name wb and wmap, whose widened
 * columns are wide[c] (the caller frees them). */
static int widen_keys(const ixt *t, const stg_col_batch **b,
		      const uint8_t *from, const int **cols_of, uint64_t n,
		      stg_col_batch *wb, int *wmap, int64_t **wide)
{
	bool any = false;

	for (int c = 0; c < t->ncols; c++) {
		int k = (*cols_of)[c];

		wmap[c] = k < 0 ? -1 : c;
		wb[c] = k < 0 ? (stg_col_batch){NULL, NULL} : (*b)[k];
		if (k < 0 || !from || from[k] != STG_FROM_I32)
			continue;
		if (!(wide[c] = malloc((size_t)n * 8 + 8)))
			return pool_err(t->p, GPMDB_NOMEM, "out of memory");
		const int32_t *v = wb[c].values;
		int64_t *w = wide[c];
#pragma omp parallel for if (n > 65536) schedule(static)
		for (uint64_t i = 0; i < n; i++)
			w[i] = v[i];
		wb[c].values = w;
		any = true;
	}
	if (any) {
		*b = wb;
		*cols_of = wmap;
	}
	return GPMDB_OK;
}

/*
 * Checks the new keys of unique index t: batch row i's key takes key
 * column c from b[cols_of[c]], or from the table's row rowids[i] where
 * cols_of[c] < 0; rows in skip (sorted) do not conflict.  *bad as for
 * check_keys.
 */
static int check_batch(ixt *t, const stg_col_batch *b, const uint8_t *from,
		       const int *cols_of, const uint64_t *rowids, uint64_t n,
		       const uint64_t *skip, uint64_t nskip, int64_t *bad,
		       bool keep, bool live)
{
	stg_col_batch kb[32];
	ixsrc src = {IXS_BATCH, kb, rowids, NULL};
	uint8_t *recs;
	int rc = GPMDB_OK;
	uint64_t tv = pool_now_ns(); /* the parts' clock (stg_write_times) */
	bool any_null = false;
	const stg_col_batch *ik;
	int64_t dup = -2; /* int_recs: the records are sorted, dup known */
	int rise = -1;	  /* whether the integer keys rise (-1: not known) */
	stg_col_batch wb[32];
	int wmap[32];
	int64_t *wide[32] = {NULL};

	for (int c = 0; c < t->ncols; c++)
		kb[c] = cols_of[c] >= 0 ? b[cols_of[c]]
					: (stg_col_batch){NULL, NULL};
	*bad = -1;
	/* an append's integer keys that rise above the tree (counting up):
	 * unique, nothing to sort or look up; their entries are made from
	 * the column by idx_after_append, no records here.  Also where the
	 * GPU would sort them: one read-only pass costs less than the sort
	 * (50M keys: 125-250 ms of the GPU INSERT's key check, H200) */
	ik = int_key(t, b, cols_of);
	if (ik && keep && live && !rowids && n > 0) {
		bool i32 = int_i32(t, from, cols_of);
		uint8_t r0[17];

		int_rec(r0, int_ord(i32, ik->values, 0), 0);
		t->sorted_all = false;
		if ((ix_hdr(t)->entries == 0 || above_tree(t, r0)) &&
		    (rise = int_rising(i32, ik->values, n)) &&
		    presorted_put_int(t, ik->values, i32, n)) {
			t->p->wt.key_probe_ns += pool_now_ns() - tv;
			return GPMDB_OK;
		}
	}
	ix_prewarm(t, n); /* the GPU readies itself while we encode */
	if (!(recs = malloc((size_t)n * t->ew)))
		return pool_err(t->p, GPMDB_NOMEM, "out of memory");
	if ((uint64_t)n * t->ew >= (64u << 20)) {
		/* the fresh buffer's pages faulted in on every core first,
		 * timed apart (key_alloc_ns): at 50M rows 850 MB of them */
		uint64_t np = ((uint64_t)n * t->ew + 4095) / 4096;
#pragma omp parallel for schedule(static)
		for (uint64_t q = 0; q < np; q++)
			recs[q * 4096] = 0;
		t->p->wt.key_alloc_ns += pool_now_ns() - tv;
		tv = pool_now_ns();
	}
	if (ik) {
		rc = int_recs(t, ik, int_i32(t, from, cols_of), recs, n, rise,
			      &dup);
		goto encoded;
	}
	if ((rc = widen_keys(t, &b, from, &cols_of, n, wb, wmap, wide)) !=
	    GPMDB_OK) {
		free(recs);
		return rc;
	}
	for (int c = 0; c < t->ncols; c++)
		if (wide[c])
			kb[c] = wb[c];
			/* the NULL keys noted in the same pass (they are
			 * dropped) */
#pragma omp parallel for reduction(||                                          \
				   : any_null) if (n > 65536) schedule(static)
	for (uint64_t i = 0; i < n; i++) {
		uint8_t *r = recs + i * t->ew;
		int erc =
		    ix_enc_batch(t, b, cols_of, i, rowids ? rowids[i] : 0, r);
		if (erc != GPMDB_OK)
			__atomic_store_n(&rc, erc, __ATOMIC_RELAXED);
		memcpy(r + t->kw, &i, 8);
		if (ix_key_has_null(t, r))
			any_null = true;
	}
encoded:
	t->sorted_all = false;
	if (rc == GPMDB_OK)
		rc = check_keys(t, recs, n, &src, skip, nskip, bad, any_null,
				dup, &tv);
	for (int c = 0; c < t->ncols; c++)
		free(wide[c]);
	/* an append keeps its sorted batch for idx_after_append */
	if (rc == GPMDB_OK && keep && t->sorted_all && *bad < 0) {
		presorted_put(t, recs, n);
		return rc;
	}
	free(recs);
	return rc;
}

/* Where key column c of t is in a batch of columns cols[0..ncols) (an
 * UPDATE's), -1 when the batch does not change it. */
static void batch_map(const ixt *t, int ncols, const uint32_t *cols,
		      int *cols_of)
{
	for (int c = 0; c < t->ncols; c++) {
		cols_of[c] = -1;
		for (int j = 0; j < ncols; j++)
			if (cols[j] == t->cols[c])
				cols_of[c] = j;
	}
}

static int check_append(stg_pool *p, uint64_t tcat, const stg_col_batch *cols,
			const uint8_t *from, uint64_t n, bool live)
{
	ixset *s;
	int rc = GPMDB_OK;
	int64_t worst = -1;
	int worst_ix = -1;

	p->cons_row = -1;
	p->cons_key[0] = 0;
	idx_presorted_clear(p);
	if ((rc = ixset_open(p, tcat, n, &s)) != GPMDB_OK || !s)
		return rc;
	for (int x = 0; x < s->n && rc == GPMDB_OK; x++) {
		ixt *t = &s->t[x];
		int cols_of[32];
		int64_t bad;

		if (!t->unique)
			continue;
		for (int c = 0; c < t->ncols; c++)
			cols_of[c] = (int)t->cols[c];
		rc = check_batch(t, cols, from, cols_of, NULL, n, NULL, 0, &bad,
				 true, live);
		if (rc == GPMDB_OK && bad >= 0 && (worst < 0 || bad < worst)) {
			worst = bad;
			worst_ix = x;
		}
	}
	if (rc != GPMDB_OK || worst >= 0)
		idx_presorted_clear(p);
	if (rc == GPMDB_OK && worst >= 0) {
		ixt *t = &s->t[worst_ix];
		int cols_of[32];
		for (int c = 0; c < t->ncols; c++)
			cols_of[c] = (int)t->cols[c];
		key_text(p, t, cols, from, cols_of, (uint64_t)worst, 0);
		rc = fail_unique(p, t, worst);
	}
	ixset_free(s);
	return rc;
}

int idx_check_append_live(stg_pool *p, uint64_t tcat, const stg_col_batch *cols,
			  const uint8_t *from, uint64_t n)
{
	return check_append(p, tcat, cols, from, n, true);
}

/* ---- entry changes ------------------------------------------------------ */

/* Whether a change of n entries goes entry by entry (false) or through a
 * rebuild: each entry may log two nodes, and the log must keep room. */
static bool go_bulk(const ixt *t, uint64_t n)
{
	uint64_t entries = ix_hdr(t)->entries;

	uint64_t half = t->leaf_cap / 2 ? t->leaf_cap / 2 : 1;
	/* nodes the batch may log: a leaf per entry at most as many as
	 * there are leaves, the leaves its splits make, and a path */
	uint64_t leaves = entries / half + 1;
	uint64_t touched =
	    (n < leaves ? n : leaves) + 2 * (n / half) + ix_hdr(t)->height + 2;

	if (touched * (STG_IX_NODE + 64) > mlog_space(t->p) / 2)
		return true;
	/* a rebuild costs a pass over the tree (tens of ns an entry), an
	 * entry about a microsecond: large batches against the tree */
	return n >= 1024 && n * 8 > entries;
}

/* Records (key, row id) of rows, from the table. */
static int enc_rows(const ixt *t, const uint64_t *rowids, uint64_t first,
		    uint64_t n, uint8_t *recs)
{
	int rc = GPMDB_OK;

#pragma omp parallel for if (n > 65536) schedule(static)
	for (uint64_t i = 0; i < n; i++) {
		uint64_t r = rowids ? rowids[i] : first + i;
		if (ix_enc_row(t, r, recs + i * t->ew) != GPMDB_OK)
			rc = GPMDB_CORRUPT;
		memcpy(recs + i * t->ew + t->kw, &r, 8);
	}
	if (rc != GPMDB_OK && stg_errcode(t->p) == GPMDB_OK)
		return pool_err(t->p, rc, "index %s: a row could not be read",
				t->name);
	return rc;
}

/* The tree again from its entries minus rows in drop (a bitmap over row
 * ids, may be NULL) plus n sorted new records. */
static int rebuild_merge(ixt *t, const uint8_t *drop, uint64_t dropn,
			 const uint8_t *add, uint64_t n)
{
	uint8_t *old = NULL, *all;
	uint64_t no = 0, k = 0, i = 0, j = 0;
	uint32_t w = t->ew;
	int rc;

	if (ix_hdr(t)->entries == 0 && !drop)
		return ix_build(t, add, n); /* nothing to merge with */
	if ((rc = ix_collect(t, &old, &no)) != GPMDB_OK)
		return rc;
	if (!(all = malloc((size_t)(no + n + 1) * w))) {
		free(old);
		return pool_err(t->p, GPMDB_NOMEM, "out of memory");
	}
	while (i < no || j < n) {
		const uint8_t *a = i < no ? old + i * w : NULL;
		if (a && drop) {
			uint64_t r = ix_rowid(t, a);
			if (r < dropn && (drop[r / 8] >> (r % 8) & 1)) {
				i++;
				continue;
			}
		}
		if (a && (j >= n || ix_cmp_entry(t, a, add + j * w) < 0)) {
			memcpy(all + k * w, a, w);
			i++;
		} else {
			memcpy(all + k * w, add + j * w, w);
			j++;
		}
		k++;
	}
	free(old);
	rc = ix_build(t, all, k);
	free(all);
	return rc;
}

uint64_t idx_append_bytes(stg_pool *p, uint64_t tcat, uint64_t n)
{
	ixset *s;
	uint64_t b = 0;

	if (ixset_open(p, tcat, n, &s) != GPMDB_OK || !s) {
		pool_clear_err(p); /* an estimate: the append reports it */
		return 0;
	}
	/* a tree with entries most likely takes the rows at its right edge
	 * (keys counting up): their nodes, not a rebuild's (a rebuild that
	 * comes grows the pool itself) */
	for (int x = 0; x < s->n; x++)
		if (go_bulk(&s->t[x], n))
			b += alloc_round(p, ix_build_bytes(&s->t[x], n));
	ixset_free(s);
	return b;
}

int idx_after_append(stg_pool *p, uint64_t tcat, uint64_t first, uint64_t n)
{
	ixset *s;
	int rc = GPMDB_OK;

	if ((rc = ixset_open(p, tcat, n, &s)) != GPMDB_OK || !s)
		return rc;
	for (int x = 0; x < s->n && rc == GPMDB_OK; x++) {
		ixt *t = &s->t[x];
		/* sorted already by the unique check of these rows */
		uint8_t *recs = presorted_take(t, first, n);
		bool sorted = recs != NULL;
		int_src is = {NULL, false, first};

		/* rising integer keys: an empty tree built from the column
		 * straight into its leaves, else their records made here */
		if (!recs && presorted_take_int(t, n, &is.v, &is.i32)) {
			if (ix_hdr(t)->entries == 0) {
				rc = ix_build_gen(t, int_gen, &is, n);
				continue;
			}
			if (!(recs = malloc((size_t)n * t->ew))) {
				rc = pool_err(p, GPMDB_NOMEM, "out of memory");
				break;
			}
#pragma omp parallel for if (n > 65536) schedule(static)
			for (uint64_t b = 0; b < n; b += 4096)
				int_gen(&is, b, b + 4096 < n ? b + 4096 : n,
					recs + b * t->ew, t->ew);
			sorted = true;
		}

		if (!recs && !(recs = malloc((size_t)n * t->ew))) {
			rc = pool_err(p, GPMDB_NOMEM, "out of memory");
			break;
		}
		if (!sorted && go_bulk(t, n))
			ix_prewarm(t, n);
		if (!sorted)
			rc = enc_rows(t, NULL, first, n, recs);
		if (rc == GPMDB_OK && go_bulk(t, n)) {
			if (!sorted)
				rc = ix_sort(t, recs, n, NULL);
			/* keys past the tree's last (ids counting up): added
			 * at its right edge; a rebuild would take a new
			 * extent for the whole tree every time, and the old
			 * ones, smaller, were never reused (a pool loaded in
			 * 1M-row appends grew with their square) */
			if (rc == GPMDB_OK && ix_hdr(t)->entries > 0 &&
			    ix_append_fits(t, n) && ix_above_last(t, recs))
				rc = ix_append_right(t, recs, n);
			else if (rc == GPMDB_OK)
				rc = rebuild_merge(t, NULL, 0, recs, n);
		} else {
			for (uint64_t i = 0; i < n && rc == GPMDB_OK; i++)
				rc = ix_insert(t, recs + i * t->ew);
		}
		free(recs);
	}
	ixset_free(s);
	idx_presorted_clear(p);
	return rc;
}

/* Does index t have a column among cols? */
static bool touches(const ixt *t, int ncols, const uint32_t *cols)
{
	for (int c = 0; c < t->ncols; c++)
		for (int j = 0; j < ncols; j++)
			if (t->cols[c] == cols[j])
				return true;
	return false;
}

/* Removes the entries of rows (their current keys) from t, or marks them
 * in a bitmap for a rebuild (*bulk). */
static int remove_rows(ixt *t, const uint64_t *rowids, uint64_t n, bool bulk)
{
	uint8_t *recs;
	int rc = GPMDB_OK;
	uint64_t k = 0;

	if (bulk) {
		uint64_t nb;
		uint8_t *drop = drop_bitmap(t, rowids, n, &nb);
		if (!drop)
			return pool_err(t->p, GPMDB_NOMEM, "out of memory");
		rc = rebuild_merge(t, drop, nb, NULL, 0);
		free(drop);
		return rc;
	}
	if (!(recs = malloc((size_t)(n ? n : 1) * t->ew)))
		return pool_err(t->p, GPMDB_NOMEM, "out of memory");
	for (uint64_t i = 0; i < n && rc == GPMDB_OK; i++) {
		tab_cellv v;
		/* deleting a deleted row is a no-op: it has no entry */
		rc = tab_cell(t->p, t->tcat, t->cols[0], rowids[i], &v);
		if (rc != GPMDB_OK || v.deleted)
			continue;
		rc = ix_enc_row(t, rowids[i], recs + k * t->ew);
		memcpy(recs + k * t->ew + t->kw, &rowids[i], 8);
		k++;
	}
	for (uint64_t i = 0; i < k && rc == GPMDB_OK; i++)
		rc = ix_remove(t, recs + i * t->ew);
	free(recs);
	return rc;
}

int idx_before_delete(stg_pool *p, uint64_t tcat, const uint64_t *rowids,
		      uint64_t n)
{
	ixset *s;
	int rc = GPMDB_OK;

	if ((rc = ixset_open(p, tcat, n, &s)) != GPMDB_OK || !s)
		return rc;
	for (int x = 0; x < s->n && rc == GPMDB_OK; x++)
		rc = remove_rows(&s->t[x], rowids, n, go_bulk(&s->t[x], n));
	ixset_free(s);
	return rc;
}

int idx_before_update(stg_pool *p, uint64_t tcat, int ncols,
		      const uint32_t *cols, const uint64_t *rowids, uint64_t n,
		      const stg_col_batch *vals)
{
	ixset *s;
	int rc = GPMDB_OK, worst_ix = -1;
	uint64_t *sorted = NULL;
	int64_t worst = -1;

	p->cons_row = -1;
	p->cons_key[0] = 0;
	p->ix_bulk_mask = 0;
	if ((rc = ixset_open(p, tcat, n, &s)) != GPMDB_OK || !s)
		return rc;
	/* the new keys, against the table as it will be */
	for (int x = 0; x < s->n && rc == GPMDB_OK; x++) {
		ixt *t = &s->t[x];
		int cols_of[32];
		int64_t bad;

		if (!t->unique || !touches(t, ncols, cols))
			continue;
		if (!sorted) {
			if (!(sorted = malloc(sizeof(uint64_t) * n))) {
				rc = pool_err(p, GPMDB_NOMEM, "out of memory");
				break;
			}
			memcpy(sorted, rowids, sizeof(uint64_t) * n);
			qsort(sorted, n, sizeof(uint64_t), u64_cmp);
		}
		batch_map(t, ncols, cols, cols_of);
		rc = check_batch(t, vals, NULL, cols_of, rowids, n, sorted, n,
				 &bad, false, false);
		if (rc == GPMDB_OK && bad >= 0 && (worst < 0 || bad < worst)) {
			worst = bad;
			worst_ix = x;
		}
	}
	if (rc == GPMDB_OK && worst >= 0) {
		ixt *t = &s->t[worst_ix];
		int cols_of[32];
		batch_map(t, ncols, cols, cols_of);
		key_text(p, t, vals, NULL, cols_of, (uint64_t)worst,
			 rowids[worst]);
		rc = fail_unique(p, t, worst);
	}
	/* the old entries go; after the write they come back from the
	 * table (a rebuild does both then) */
	for (int x = 0; x < s->n && rc == GPMDB_OK; x++) {
		ixt *t = &s->t[x];
		if (!touches(t, ncols, cols))
			continue;
		if (go_bulk(t, n))
			p->ix_bulk_mask |= 1ull << x;
		else
			rc = remove_rows(t, rowids, n, false);
	}
	free(sorted);
	ixset_free(s);
	return rc;
}

int idx_after_update(stg_pool *p, uint64_t tcat, int ncols,
		     const uint32_t *cols, const uint64_t *rowids, uint64_t n)
{
	ixset *s;
	int rc = GPMDB_OK;

	if ((rc = ixset_open(p, tcat, n, &s)) != GPMDB_OK || !s)
		return rc;
	for (int x = 0; x < s->n && rc == GPMDB_OK; x++) {
		ixt *t = &s->t[x];
		uint8_t *recs;

		if (!touches(t, ncols, cols))
			continue;
		if (!(recs = malloc((size_t)n * t->ew))) {
			rc = pool_err(p, GPMDB_NOMEM, "out of memory");
			break;
		}
		rc = enc_rows(t, rowids, 0, n, recs);
		if (rc == GPMDB_OK && (p->ix_bulk_mask >> x & 1)) {
			uint64_t nb;
			uint8_t *drop = drop_bitmap(t, rowids, n, &nb);
			if (!drop) {
				rc = pool_err(p, GPMDB_NOMEM, "out of memory");
			} else {
				rc = ix_sort(t, recs, n, NULL);
				if (rc == GPMDB_OK)
					rc =
					    rebuild_merge(t, drop, nb, recs, n);
				free(drop);
			}
		} else {
			for (uint64_t i = 0; i < n && rc == GPMDB_OK; i++)
				rc = ix_insert(t, recs + i * t->ew);
		}
		free(recs);
	}
	p->ix_bulk_mask = 0;
	ixset_free(s);
	return rc;
}

/* ---- the public API ----------------------------------------------------- */

static int writable_table(stg_pool *p, uint32_t tid, uint64_t *tcat)
{
	int rc;

	if (p == NULL)
		return GPMDB_MISUSE;
	pool_clear_err(p);
	if ((rc = tab_find_writable(p, tid, tcat)) != GPMDB_OK)
		return rc;
	return GPMDB_OK;
}

int stg_index_update_begin(stg_pool *p, uint32_t table_id, int ncols,
			   const uint32_t *cols, const uint64_t *rowids,
			   uint64_t n, const stg_col_batch *vals)
{
	uint64_t tcat;
	int rc = writable_table(p, table_id, &tcat);

	return rc ? rc
		  : idx_before_update(p, tcat, ncols, cols, rowids, n, vals);
}

int stg_index_update_end(stg_pool *p, uint32_t table_id, int ncols,
			 const uint32_t *cols, const uint64_t *rowids,
			 uint64_t n)
{
	uint64_t tcat;
	int rc = writable_table(p, table_id, &tcat);

	return rc ? rc : idx_after_update(p, tcat, ncols, cols, rowids, n);
}

int stg_index_delete_rows(stg_pool *p, uint32_t table_id,
			  const uint64_t *rowids, uint64_t n)
{
	uint64_t tcat;
	int rc = writable_table(p, table_id, &tcat);

	return rc ? rc : idx_before_delete(p, tcat, rowids, n);
}

/* The records (key, row id) of every live row, read from the tablets:
 * live rows counted per tablet, then encoded on all cores. */
/* Rows of a piece of enc_table's work (a multiple of 32: whole words of
 * the deleted bitmap).  Tablets hold up to 1M rows: a tablet a thread left
 * 50M rows on 16 threads unbalanced (4 tablets against 3). */
#define ENC_PIECE 65536u

/* Live rows of rows [r0, r1) of tablet view x (r0 a multiple of 32). */
static uint64_t live_rows(const stg_tablet_view *x, uint32_t r0, uint32_t r1)
{
	uint64_t live = r1 - r0;

	for (uint32_t w = r0 / 32; w < (r1 + 31) / 32; w++) {
		uint32_t bits = x->deleted[w];
		if (w == r1 / 32 && r1 % 32)
			bits &= (1u << (r1 % 32)) - 1;
		live -= (uint64_t)__builtin_popcount(bits);
	}
	return live;
}

/* Records of rows [r0, r1) of tablet view x from o on. */
static void enc_piece(const ixt *t, const stg_tablet_view *x, uint32_t r0,
		      uint32_t r1, uint8_t *o)
{
	for (uint32_t r = r0; r < r1; r++) {
		uint64_t rid = x->first_row + r;
		if (x->deleted[r / 32] >> (r % 32) & 1)
			continue;
		for (int c = 0; c < t->ncols; c++) {
			uint32_t col = t->cols[c];
			stg_type ty = (stg_type)t->types[c];
			uint8_t *seg = o + t->soff[c];
			const char *d = x->data[col];
			if (x->nulls[col][r / 32] >> (r % 32) & 1) {
				memset(seg, 0, t->segw[c]);
			} else if (ty == STG_T_TEXT) {
				const stg_strref *sr =
				    (const stg_strref *)d + r;
				ix_enc_stored(seg, ty, NULL, x->heap + sr->off,
					      sr->len);
			} else {
				ix_enc_stored(
				    seg, ty, d + (size_t)r * stg_type_width(ty),
				    NULL, 0);
			}
		}
		memcpy(o + t->kw, &rid, 8);
		o += t->ew;
	}
}

/* Every live row's record (key, row id), in row order, on every core in
 * pieces of ENC_PIECE rows. */
static int enc_table(const ixt *t, uint8_t **out, uint64_t *count)
{
	stg_pool *p = t->p;
	uint32_t nt = 0;
	stg_tablet_view *v = NULL;
	stg_plainbuf *pb = NULL;
	uint64_t *base = NULL, total = 0, np = 0, q;
	uint32_t *pk = NULL, *pr = NULL; /* each piece's tablet, first row */
	uint8_t *recs = NULL;
	int rc;

	*out = NULL;
	*count = 0;
	if ((rc = stg_tablet_count(p, t->tid, &nt)) != GPMDB_OK)
		return rc;
	if (!(v = calloc((size_t)nt + 1, sizeof(*v))) ||
	    !(pb = calloc((size_t)nt + 1, sizeof(*pb)))) {
		free(v);
		return pool_err(p, GPMDB_NOMEM, "out of memory");
	}
	for (uint32_t k = 0; k < nt && rc == GPMDB_OK; k++) {
		rc = stg_tablet_get(p, t->tid, k, &v[k]);
		/* the records are cut from whole arrays: encoded decoded */
		if (rc == GPMDB_OK && (rc = stg_tablet_decode_all(
					   &v[k], NULL, &pb[k])) != GPMDB_OK)
			rc = pool_err(p, rc, "%s", stg_decode_errstr(rc));
	}
	for (uint32_t k = 0; k < nt && rc == GPMDB_OK; k++)
		np += (v[k].nrows + ENC_PIECE - 1) / ENC_PIECE;
	if (rc == GPMDB_OK &&
	    (!(base = calloc((size_t)np + 1, sizeof(*base))) ||
	     !(pk = calloc((size_t)np + 1, sizeof(*pk))) ||
	     !(pr = calloc((size_t)np + 1, sizeof(*pr)))))
		rc = pool_err(p, GPMDB_NOMEM, "out of memory");
	q = 0;
	for (uint32_t k = 0; k < nt && rc == GPMDB_OK; k++)
		for (uint32_t r = 0; r < v[k].nrows; r += ENC_PIECE) {
			pk[q] = k;
			pr[q++] = r;
		}
		/* live rows per piece, then where each piece's records start */
#pragma omp parallel for schedule(static) if (np > 4)
	for (uint64_t i = 0; i < np; i++) {
		const stg_tablet_view *x = &v[pk[i]];
		uint32_t r1 =
		    pr[i] + ENC_PIECE < x->nrows ? pr[i] + ENC_PIECE : x->nrows;
		base[i] = live_rows(x, pr[i], r1);
	}
	for (uint64_t i = 0; i < np; i++) {
		uint64_t live = base[i];
		base[i] = total;
		total += live;
	}
	if (rc == GPMDB_OK)
		ix_prewarm(t, total); /* the GPU readies itself meanwhile */
	if (rc == GPMDB_OK && !(recs = malloc((size_t)(total + 1) * t->ew)))
		rc = pool_err(p, GPMDB_NOMEM, "out of memory");
	if (rc == GPMDB_OK) {
#pragma omp parallel for schedule(dynamic, 4)
		for (uint64_t i = 0; i < np; i++) {
			const stg_tablet_view *x = &v[pk[i]];
			uint32_t r1 = pr[i] + ENC_PIECE < x->nrows
					  ? pr[i] + ENC_PIECE
					  : x->nrows;
			enc_piece(t, x, pr[i], r1, recs + base[i] * t->ew);
		}
	}
	for (uint32_t k = 0; k < nt; k++)
		stg_plainbuf_free(&pb[k]);
	free(pb);
	free(v);
	free(base);
	free(pk);
	free(pr);
	if (rc != GPMDB_OK) {
		free(recs);
		return rc;
	}
	*out = recs;
	*count = total;
	return GPMDB_OK;
}

/* Every live row's record (key, row id), sorted; a unique index over a
 * repeated key fails with GPMDB_CONSTRAINT. */
static int build_from_table(ixt *t)
{
	uint64_t k = 0;
	uint8_t *recs = NULL;
	int rc = enc_table(t, &recs, &k);

	if (rc == GPMDB_OK)
		rc = ix_sort(t, recs, k, NULL);
	if (rc == GPMDB_OK && t->unique) {
		uint64_t dup = 0; /* 1 + the later of a repeated pair */
#pragma omp parallel for if (k > 65536) schedule(static) reduction(max : dup)
		for (uint64_t i = 1; i < k; i++) {
			const uint8_t *a = recs + (i - 1) * t->ew,
				      *b = recs + i * t->ew;
			if (!ix_key_has_null(t, b) &&
			    ix_cmp(t, a, NULL, ix_rowid(t, a), b, NULL,
				   ix_rowid(t, b), t->ncols) == 0)
				dup = i + 1;
		}
		if (dup)
			rc = fail_unique(t->p, t, -1);
	}
	if (rc == GPMDB_OK)
		rc = ix_build(t, recs, k);
	free(recs);
	return rc;
}

int stg_index_create(stg_pool *p, uint32_t table_id, const char *name,
		     const uint32_t *cols, int ncols, bool unique,
		     stg_ix_origin origin, const char *sql, uint32_t *index_id)
{
	uint64_t tcat, hoff, ext;
	stg_cat_entry *e;
	stg_ix_hdr *h;
	uint8_t types[32], segw[32];
	uint32_t kw, id;
	ixt t;
	int rc;

	if ((rc = writable_table(p, table_id, &tcat)) != GPMDB_OK)
		return rc;
	if (!name || !name[0] || strlen(name) >= STG_NAME_MAX)
		return pool_err(p, GPMDB_MISUSE, "bad index name");
	if (ncols < 1 || ncols > 32)
		return pool_err(p, GPMDB_RANGE,
				"an index has 1 to 32 columns, not %d", ncols);
	e = cat_entry(p, tcat);
	for (int c = 0; c < ncols; c++) {
		if (cols[c] >= e->ncols)
			return pool_err(p, GPMDB_RANGE,
					"table %s has no column %u", e->name,
					cols[c]);
		types[c] = (uint8_t)cat_cols(e)[cols[c]].type;
	}
	if ((rc = ix_geometry(p, types, ncols, segw, &kw)) != GPMDB_OK)
		return rc;
	if ((rc = alloc_extent(p, sizeof(stg_ix_hdr), &hoff, &ext)))
		return rc;
	h = (stg_ix_hdr *)pool_at(p, hoff);
	memset(h, 0, sizeof(*h));
	h->magic = STG_IX_MAGIC;
	h->version = 1;
	h->table_id = table_id;
	h->ncols = (uint32_t)ncols;
	h->flags = (unique ? 1u : 0u) | ((uint32_t)origin << 8);
	h->kw = kw;
	h->ew = kw + 8;
	h->node_size = STG_IX_NODE;
	h->extent_size = ext;
	memcpy(h->cols, cols, sizeof(uint32_t) * (size_t)ncols);
	memcpy(h->types, types, (size_t)ncols);
	memcpy(h->segw, segw, (size_t)ncols);
	pool_persist(p, h, sizeof(*h));
	/* nothing reaches the header before the catalog links it */
	mlog_fresh(p, hoff + offsetof(stg_ix_hdr, root), 64);
	mlog_fresh(p, hoff + offsetof(stg_ix_hdr, arenas), 16);
	if ((rc = ix_open(p, hoff, tcat, 0, name, &t)) != GPMDB_OK ||
	    (rc = build_from_table(&t)) != GPMDB_OK)
		return rc;
	if ((rc = cat_index_add(p, name, tcat, sql, hoff, &id)) != GPMDB_OK)
		return rc;
	if (index_id)
		*index_id = id;
	p->ix_epoch++;
	return GPMDB_OK;
}

int stg_index_drop(stg_pool *p, const char *name)
{
	uint64_t off = 0, steps = 0;
	int rc;

	if (p == NULL || name == NULL)
		return GPMDB_MISUSE;
	pool_clear_err(p);
	if ((rc = pool_check_writable(p)) != GPMDB_OK)
		return rc;
	while ((off = cat_walk(p, off)) && steps++ <= p->sb.nchunks) {
		stg_cat_entry *e = cat_entry(p, off);
		if (e->kind == STG_OBJ_INDEX &&
		    strncasecmp(e->name, name, STG_CAT_NAME) == 0) {
			p->ix_epoch++;
			return cat_unlink_entry(p, off);
		}
	}
	return pool_err(p, GPMDB_NOTFOUND, "no such index: %s", name);
}

int stg_index_rebuild(stg_pool *p, uint32_t index_id)
{
	uint64_t tcat;
	ixt t;
	int rc;

	if (p == NULL)
		return GPMDB_MISUSE;
	pool_clear_err(p);
	if ((rc = pool_check_writable(p)) != GPMDB_OK ||
	    (rc = open_by_id(p, index_id, &t)) != GPMDB_OK ||
	    (rc = tab_find_writable(p, t.tid, &tcat)) != GPMDB_OK)
		return rc;
	return build_from_table(&t);
}

static void fill_info(stg_pool *p, uint64_t off, stg_index_info *o)
{
	stg_cat_entry *e = cat_entry(p, off);
	stg_ix_hdr *h = (stg_ix_hdr *)pool_at(p, e->tdir);

	memset(o, 0, sizeof(*o));
	o->index_id = (uint32_t)e->obj_seq;
	o->table_id = e->table_id;
	snprintf(o->name, sizeof(o->name), "%s", e->name);
	snprintf(o->tbl_name, sizeof(o->tbl_name), "%s", e->tbl_name);
	o->unique = h->flags & 1;
	o->origin = (stg_ix_origin)(h->flags >> 8 & 0xff);
	o->ncols = (int)h->ncols;
	memcpy(o->cols, h->cols, sizeof(o->cols));
	o->entries = h->entries;
	o->bytes = h->extent_size;
	for (uint64_t i = 0; i < h->narenas && i < STG_IX_MAX_ARENAS; i++)
		o->bytes += h->arenas[i][1];
	o->height = (uint32_t)h->height;
}

int stg_index_list(stg_pool *p, uint32_t table_id, stg_index_info **out, int *n)
{
	uint64_t off = 0, steps = 0;
	stg_index_info *v = NULL;
	int nv = 0;

	if (p == NULL || out == NULL || n == NULL)
		return GPMDB_MISUSE;
	pool_clear_err(p);
	*out = NULL;
	*n = 0;
	if (p->broken)
		return GPMDB_IOERR;
	while ((off = cat_walk(p, off)) && steps++ <= p->sb.nchunks) {
		stg_cat_entry *e = cat_entry(p, off);
		stg_index_info *nvv;

		if (e->kind != STG_OBJ_INDEX || !e->tdir ||
		    (table_id && e->table_id != table_id) ||
		    !pool_range_ok(p, e->tdir, sizeof(stg_ix_hdr)))
			continue;
		if (!(nvv = realloc(v, sizeof(*v) * (size_t)(nv + 1)))) {
			free(v);
			return pool_err(p, GPMDB_NOMEM, "out of memory");
		}
		v = nvv;
		fill_info(p, off, &v[nv++]);
	}
	*out = v;
	*n = nv;
	return GPMDB_OK;
}

int stg_index_find(stg_pool *p, const char *name, stg_index_info *out)
{
	uint64_t off = 0, steps = 0;

	if (p == NULL || name == NULL)
		return GPMDB_MISUSE;
	while ((off = cat_walk(p, off)) && steps++ <= p->sb.nchunks) {
		stg_cat_entry *e = cat_entry(p, off);
		if (e->kind == STG_OBJ_INDEX && e->tdir &&
		    strncasecmp(e->name, name, STG_CAT_NAME) == 0) {
			if (out)
				fill_info(p, off, out);
			return GPMDB_OK;
		}
	}
	return GPMDB_NOTFOUND;
}

/* ---- cursors ------------------------------------------------------------ */

struct stg_icur {
	ixt t;
	ixpos c;
	bool desc, done, lo_incl, hi_incl;
	int nlo, nhi;
	uint8_t lo[STG_IX_MAX_KEY], hi[STG_IX_MAX_KEY];
	stg_key_val lov[32], hiv[32]; /* TEXT copied into strs */
	ixsrc slo, shi;
	char *strs;
	uint64_t epoch;
};

/* Copies a bound's values (TEXT too) so the caller's may go away. */
static int copy_bound(stg_icur *c, const stg_key_val *in, int n,
		      stg_key_val *out, size_t *used)
{
	for (int i = 0; i < n; i++) {
		out[i] = in[i];
		if (c->t.types[i] == STG_T_TEXT && !in[i].null) {
			memcpy(c->strs + *used, in[i].s, in[i].len);
			out[i].s = c->strs + *used;
			*used += in[i].len;
		}
	}
	return GPMDB_OK;
}

int stg_icur_open(stg_pool *p, uint32_t index_id, const stg_ix_range *r,
		  stg_icur **out)
{
	stg_icur *c;
	size_t slen = 1, used = 0;
	int rc;

	*out = NULL;
	if (p == NULL || r == NULL)
		return GPMDB_MISUSE;
	pool_clear_err(p);
	if (!(c = calloc(1, sizeof(*c))))
		return pool_err(p, GPMDB_NOMEM, "out of memory");
	if ((rc = open_by_id(p, index_id, &c->t)) != GPMDB_OK) {
		free(c);
		return rc;
	}
	if (r->nlo < 0 || r->nlo > c->t.ncols || r->nhi < 0 ||
	    r->nhi > c->t.ncols) {
		rc = pool_err(p, GPMDB_RANGE,
			      "index %s: a bound of %d/%d columns, it has %d",
			      c->t.name, r->nlo, r->nhi, c->t.ncols);
		free(c);
		return rc;
	}
	for (int i = 0; i < r->nlo; i++)
		slen += r->lo[i].null ? 0 : r->lo[i].len;
	for (int i = 0; i < r->nhi; i++)
		slen += r->hi[i].null ? 0 : r->hi[i].len;
	if (!(c->strs = malloc(slen))) {
		free(c);
		return pool_err(p, GPMDB_NOMEM, "out of memory");
	}
	c->desc = r->desc;
	c->nlo = r->nlo;
	c->nhi = r->nhi;
	c->lo_incl = r->lo_incl;
	c->hi_incl = r->hi_incl;
	copy_bound(c, r->lo, r->nlo, c->lov, &used);
	copy_bound(c, r->hi, r->nhi, c->hiv, &used);
	ix_enc_vals(&c->t, c->lov, c->nlo, c->lo);
	ix_enc_vals(&c->t, c->hiv, c->nhi, c->hi);
	c->slo = (ixsrc){IXS_VALS, NULL, NULL, c->lov};
	c->shi = (ixsrc){IXS_VALS, NULL, NULL, c->hiv};
	c->epoch = p->ix_epoch;
	if (!c->desc) {
		if (c->nlo)
			rc = ix_seek(&c->t, c->lo, &c->slo, 0, c->nlo,
				     !c->lo_incl, &c->c);
		else
			ix_first(&c->t, &c->c);
	} else {
		if (c->nhi) {
			rc = ix_seek(&c->t, c->hi, &c->shi, 0, c->nhi,
				     c->hi_incl, &c->c);
			if (rc == GPMDB_OK && c->c.leaf)
				ix_prev(&c->t, &c->c);
			else if (rc == GPMDB_OK)
				ix_last(&c->t, &c->c);
		} else {
			ix_last(&c->t, &c->c);
		}
	}
	if (rc != GPMDB_OK) {
		stg_icur_close(c);
		return rc;
	}
	*out = c;
	return GPMDB_OK;
}

int stg_icur_next(stg_icur *c, uint64_t *rowids, uint32_t max, uint32_t *got)
{
	ixt *t = &c->t;
	uint32_t k = 0;

	*got = 0;
	if (c->t.p->ix_epoch != c->epoch)
		return pool_err(t->p, GPMDB_MISUSE,
				"index %s changed under an open cursor",
				t->name);
	while (!c->done && k < max && c->c.leaf) {
		const uint8_t *e = ix_at(t, &c->c);
		uint64_t r = ix_rowid(t, e);
		int d;

		if (!c->desc && c->nhi) {
			d = ix_cmp(t, e, NULL, r, c->hi, &c->shi, 0, c->nhi);
			if (d > 0 || (d == 0 && !c->hi_incl)) {
				c->done = true;
				break;
			}
		}
		if (c->desc && c->nlo) {
			d = ix_cmp(t, e, NULL, r, c->lo, &c->slo, 0, c->nlo);
			if (d < 0 || (d == 0 && !c->lo_incl)) {
				c->done = true;
				break;
			}
		}
		rowids[k++] = r;
		if (c->desc)
			ix_prev(t, &c->c);
		else
			ix_next(t, &c->c);
	}
	*got = k;
	return GPMDB_OK;
}

void stg_icur_close(stg_icur *c)
{
	if (!c)
		return;
	free(c->strs);
	free(c);
}

double stg_index_estimate(stg_pool *p, uint32_t index_id, const stg_ix_range *r)
{
	stg_icur *c;
	double lo = 0, hi = 1;

	if (stg_icur_open(p, index_id,
			  &(stg_ix_range){r->nlo, r->nhi, r->lo, r->hi,
					  r->lo_incl, r->hi_incl, false},
			  &c) != GPMDB_OK)
		return 1;
	if (c->nlo)
		lo = ix_rank(&c->t, c->lo, &c->slo, c->nlo, !c->lo_incl);
	if (c->nhi)
		hi = ix_rank(&c->t, c->hi, &c->shi, c->nhi, c->hi_incl);
	stg_icur_close(c);
	return hi > lo ? hi - lo : 0;
}

/* ---- bulk probe --------------------------------------------------------- */

static stg_ix_probe_hook probe_hook;
static uint64_t probe_min = UINT64_MAX;

void stg_set_index_probe_hook(stg_ix_probe_hook fn, uint64_t min_keys)
{
	probe_hook = fn;
	probe_min = fn ? min_keys : UINT64_MAX;
}

void stg_index_hook_stats(stg_ix_hook_stats *out)
{
	*out = *ix_hook_stats();
}

void stg_index_hook_stats_reset(void)
{
	ix_hook_stats()->sort_new = false;
	ix_hook_stats()->probe_new = false;
}

static int probe_fill(void *ctx, void *recs)
{
	ixt *t = ctx;
	uint64_t k = 0, n = ix_hdr(t)->entries;
	int rc = ix_copy_all(t, recs, n, &k);

	return rc != GPMDB_OK ? rc : k == n ? GPMDB_OK : GPMDB_CORRUPT;
}

/* Row id of the first entry equal to key i (IXS_BATCH source), -1. */
static int probe_one(ixt *t, const uint8_t *key, const ixsrc *src, uint64_t i,
		     int64_t *out)
{
	ixpos c;
	int rc;

	*out = -1;
	if (ix_key_has_null(t, key))
		return GPMDB_OK;
	if ((rc = ix_seek(t, key, src, i, t->ncols, false, &c)) != GPMDB_OK)
		return rc;
	if (c.leaf) {
		const uint8_t *e = ix_at(t, &c);
		if (ix_cmp(t, e, NULL, ix_rowid(t, e), key, src, i, t->ncols) ==
		    0)
			*out = (int64_t)ix_rowid(t, e);
	}
	return GPMDB_OK;
}

int stg_index_probe(stg_pool *p, uint32_t index_id, const stg_col_batch *keys,
		    uint64_t n, int64_t *rowids)
{
	stg_ix_hook_stats *hs = ix_hook_stats();
	uint64_t t0;
	int cols_of[32], rc;
	uint8_t *enc;
	ixsrc src;
	ixt t;

	if (p == NULL || (n && (keys == NULL || rowids == NULL)))
		return GPMDB_MISUSE;
	pool_clear_err(p);
	if ((rc = open_by_id(p, index_id, &t)) != GPMDB_OK)
		return rc;
	src = (ixsrc){IXS_BATCH, keys, NULL, NULL};
	for (int c = 0; c < t.ncols; c++)
		cols_of[c] = c;
	hs->probe_gpu = false;
	hs->probe_keys = n;
	hs->probe_why[0] = 0;
	hs->probe_new = n > 1;
	t0 = ix_now_us();
	if (!(enc = malloc((size_t)(n ? n : 1) * t.kw)))
		return pool_err(p, GPMDB_NOMEM, "out of memory");
		/* the keys' bytes on all cores (the batch's columns hold every
		 * key column: nothing is read from the table) */
#pragma omp parallel for if (n > 65536) schedule(static)
	for (uint64_t i = 0; i < n; i++) {
		uint8_t k[STG_IX_MAX_KEY + 8];
		(void)ix_enc_batch(&t, keys, cols_of, i, 0, k);
		memcpy(enc + i * t.kw, k, t.kw);
	}
	if (rc == GPMDB_OK && probe_hook && n >= probe_min) {
		stg_ix_probe_job job = {
		    p,	  index_id, p->ix_epoch, ix_hdr(&t)->entries,
		    t.kw, t.ew,	    probe_fill,	 &t,
		    enc,  n};
		if (probe_hook(&job, rowids, hs->probe_why,
			       sizeof(hs->probe_why)) == GPMDB_OK) {
			hs->probe_gpu = true;
			/* NULL keys match nothing; TEXT ties are checked
			 * on the host (the device saw prefixes only) */
#pragma omp parallel for if (n > 65536) schedule(static)
			for (uint64_t i = 0; i < n; i++) {
				const uint8_t *k = enc + i * t.kw;
				if (ix_key_has_null(&t, k))
					rowids[i] = -1;
				else if (t.has_text && rowids[i] >= 0 &&
					 probe_one(&t, k, &src, i,
						   &rowids[i]) != GPMDB_OK)
					rowids[i] = INT64_MIN;
			}
			for (uint64_t i = 0; i < n && t.has_text; i++)
				if (rowids[i] == INT64_MIN)
					rc = pool_err(p, GPMDB_CORRUPT,
						      "index %s: damaged",
						      t.name);
			free(enc);
			hs->probe_us = ix_now_us() - t0;
			return rc;
		}
	} else if (probe_hook) {
		snprintf(hs->probe_why, sizeof(hs->probe_why),
			 "%llu keys, under the GPU's %llu",
			 (unsigned long long)n, (unsigned long long)probe_min);
	}
	/* the CPU: one descent a key, on all cores (reads only) */
#pragma omp parallel for if (n > 4096) schedule(static)
	for (uint64_t i = 0; i < n; i++)
		if (probe_one(&t, enc + i * t.kw, &src, i, &rowids[i]) !=
		    GPMDB_OK)
			rowids[i] = INT64_MIN;
	for (uint64_t i = 0; i < n && rc == GPMDB_OK; i++)
		if (rowids[i] == INT64_MIN)
			rc = pool_err(p, GPMDB_CORRUPT, "index %s: damaged",
				      t.name);
	free(enc);
	hs->probe_us = ix_now_us() - t0;
	return rc;
}
