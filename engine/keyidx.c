/*
 * keyidx.c - per-connection hash indexes of unique keys (keyidx.h).
 *
 * An index maps a key (the normalised values of its columns) to the row
 * id holding it; rows with a NULL in the key are not in it (NULLs never
 * conflict).  Open addressing with linear probing over 16-byte slots:
 * a key of one non-TEXT column is stored in the slot (its value bits:
 * integers as int64, reals as double bits with -0.0 as 0.0, the batch
 * check's rule); other keys are encoded ([u32 len] bytes per TEXT column,
 * 8 bytes per other column) into an arena record [u64 hash][u32 len]
 * [bytes] and the slot holds its offset.  Deleted entries are
 * tombstones; the table is rebuilt when they and the live entries fill
 * 70% of it, and the arena is compacted then when half of it is garbage.
 */
#include "keyidx.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KX_EMPTY UINT64_MAX
#define KX_AHEAD 16 /* rows whose slots are prefetched ahead */
#define KX_TOMB	 (UINT64_MAX - 1)

typedef struct kx_slot {
	uint64_t k;   /* key bits (inline) or arena offset */
	uint64_t rid; /* row id, KX_EMPTY or KX_TOMB */
} kx_slot;

typedef struct kx_index {
	struct kx_index *next;
	uint32_t tid;
	dml_key key;
	stg_type ty[32];
	bool inl; /* one non-TEXT column: key bits in the slot */
	kx_slot *slot;
	uint64_t mask, nlive, nused; /* nused: live + tombstones */
	uint8_t *arena;
	uint64_t alen, acap, agarb;
	/* the table as the index mirrors it */
	uint64_t rows, dels;
	bool sdirty, tdirty; /* changed by this statement / transaction */
} kx_index;

typedef struct kx_table {
	struct kx_table *next;
	uint32_t tid;
	dml_key *keys;
	int nk;
} kx_table;

struct keyidx_db {
	kx_index *idx;
	kx_table *tabs;
	int depth;     /* nesting of keyidx_stmt_begin */
	bool ddl_stmt; /* the running statement is CREATE/DROP */
	bool ddl_txn;  /* a schema change in the open transaction */
	int txn_stmts; /* writing statements begun in it */
};

/* A key column's value, normalised. */
typedef struct kx_val {
	bool null, text;
	uint64_t bits;
	const char *p;
	uint32_t len;
} kx_val;

/* A key being looked up: inline bits or encoded bytes, and its hash. */
typedef struct kx_key {
	bool null;
	uint64_t h, bits;
	uint8_t *b;
	uint32_t len;
	uint64_t cap;
} kx_key;

static struct keyidx_db *kdb(gpmdb *db)
{
	if (!db->kidx)
		db->kidx = calloc(1, sizeof(*db->kidx));
	return db->kidx;
}

/* ---- values and keys ---- */

static uint64_t hash_bytes(const uint8_t *p, uint32_t n)
{
	uint64_t h = 0x9e3779b97f4a7c15ull ^ n, w;
	uint32_t i = 0;

	for (; i + 8 <= n; i += 8) {
		memcpy(&w, p + i, 8);
		h = keyidx_mix64(h ^ w) * 0x100000001b3ull;
	}
	w = 0;
	memcpy(&w, p + i, n - i);
	return keyidx_mix64(h ^ w ^ ((uint64_t)(n - i) << 56));
}

static bool bit_on(const uint32_t *w, uint64_t i)
{
	return w && (w[i / 32] >> (i % 32) & 1);
}

/* Row i of a batch column (storage layout, TEXT as stg_text). */
static void val_batch(stg_type t, const stg_col_batch *b, uint64_t i, kx_val *v)
{
	v->null = bit_on(b->nulls, i);
	v->text = t == STG_T_TEXT;
	if (v->null)
		return;
	if (v->text) {
		stg_text s = ((const stg_text *)b->values)[i];
		v->p = s.ptr;
		v->len = s.len;
	} else {
		v->bits = keyidx_num_bits(t, b->values, i);
	}
}

/* Row r of a tablet's column c (TEXT as stg_strref into its heap). */
static void val_view(stg_type t, const stg_tablet_view *tv, int c, uint32_t r,
		     kx_val *v)
{
	v->null = bit_on(tv->nulls[c], r);
	v->text = t == STG_T_TEXT;
	if (v->null)
		return;
	if (v->text) {
		stg_strref s = ((const stg_strref *)tv->data[c])[r];
		v->p = tv->heap + s.off;
		v->len = s.len;
	} else {
		v->bits = keyidx_num_bits(t, tv->data[c], r);
	}
}

/* Grows the buffer *b of *cap bytes to hold need, doubling from first
 * (a key's encoding, the arena): 0, or -1 when out of memory. */
static int buf_room(uint8_t **b, uint64_t *cap, uint64_t need, uint64_t first)
{
	if (need <= *cap)
		return 0;
	uint64_t c = *cap ? *cap : first;
	while (c < need)
		c *= 2;
	uint8_t *nb = realloc(*b, c);
	if (!nb)
		return -1;
	*b = nb;
	*cap = c;
	return 0;
}

/* Encodes the values of one row's key columns into k (k->null when one
 * is NULL). */
static int key_make(const kx_index *x, const kx_val *v, kx_key *k)
{
	uint32_t len = 0;

	k->null = false;
	for (int c = 0; c < x->key.n; c++)
		if (v[c].null) {
			k->null = true;
			return 0;
		}
	if (x->inl) {
		k->bits = v[0].bits;
		k->h = keyidx_mix64(v[0].bits ^ 0x9e3779b97f4a7c15ull);
		return 0;
	}
	for (int c = 0; c < x->key.n; c++)
		len += v[c].text ? 4 + v[c].len : 8;
	if (buf_room(&k->b, &k->cap, len, 64))
		return -1;
	len = 0;
	for (int c = 0; c < x->key.n; c++) {
		if (v[c].text) {
			memcpy(k->b + len, &v[c].len, 4);
			if (v[c].len)
				memcpy(k->b + len + 4, v[c].p, v[c].len);
			len += 4 + v[c].len;
		} else {
			memcpy(k->b + len, &v[c].bits, 8);
			len += 8;
		}
	}
	k->len = len;
	k->h = hash_bytes(k->b, len);
	return 0;
}

/* ---- the hash table ---- */

static uint64_t rec_hash(const kx_index *x, uint64_t off)
{
	uint64_t h;
	memcpy(&h, x->arena + off, 8);
	return h;
}

static uint32_t rec_len(const kx_index *x, uint64_t off)
{
	uint32_t n;
	memcpy(&n, x->arena + off + 8, 4);
	return n;
}

static uint64_t slot_hash(const kx_index *x, const kx_slot *s)
{
	return x->inl ? keyidx_mix64(s->k ^ 0x9e3779b97f4a7c15ull)
		      : rec_hash(x, s->k);
}

static bool slot_eq(const kx_index *x, const kx_slot *s, const kx_key *k)
{
	if (x->inl)
		return s->k == k->bits;
	return rec_hash(x, s->k) == k->h && rec_len(x, s->k) == k->len &&
	       !memcmp(x->arena + s->k + 12, k->b, k->len);
}

/* The slot holding k (*found), else where it would go (the first
 * tombstone on the way, or the empty slot). */
static uint64_t kx_find(const kx_index *x, const kx_key *k, bool *found)
{
	uint64_t s = k->h & x->mask, tomb = KX_EMPTY;

	for (;; s = (s + 1) & x->mask) {
		const kx_slot *e = &x->slot[s];
		if (e->rid == KX_EMPTY)
			break;
		if (e->rid == KX_TOMB) {
			if (tomb == KX_EMPTY)
				tomb = s;
			continue;
		}
		if (slot_eq(x, e, k)) {
			*found = true;
			return s;
		}
	}
	*found = false;
	return tomb != KX_EMPTY ? tomb : s;
}

/* Rebuilds the table with room for want live entries (compacting the
 * arena when half of it is garbage). */
static int kx_resize(kx_index *x, uint64_t want)
{
	uint64_t cap = 16;
	kx_slot *ns;
	uint8_t *na = NULL;
	uint64_t nalen = 0;
	bool compact = !x->inl && x->agarb > x->alen / 2;

	while (cap * 7 / 10 < want + 1)
		cap *= 2;
	ns = malloc(sizeof(kx_slot) * cap);
	if (!ns)
		return -1;
	if (compact && !(na = malloc(x->alen - x->agarb + 1))) {
		free(ns);
		return -1;
	}
	memset(ns, 0xff, sizeof(kx_slot) * cap);
	for (uint64_t i = 0; x->slot && i <= x->mask; i++) {
		kx_slot e = x->slot[i];
		if (e.rid >= KX_TOMB)
			continue;
		uint64_t h = slot_hash(x, &e);
		if (compact) {
			uint64_t n = 12 + rec_len(x, e.k);
			memcpy(na + nalen, x->arena + e.k, n);
			e.k = nalen;
			nalen += n;
		}
		uint64_t s = h & (cap - 1);
		while (ns[s].rid != KX_EMPTY)
			s = (s + 1) & (cap - 1);
		ns[s] = e;
	}
	free(x->slot);
	x->slot = ns;
	x->mask = cap - 1;
	x->nused = x->nlive;
	if (compact) {
		free(x->arena);
		x->arena = na;
		x->alen = x->acap = nalen;
		x->agarb = 0;
	}
	return 0;
}

/* Puts k -> rid at slot s (from kx_find, not found). */
static int kx_put(kx_index *x, uint64_t s, const kx_key *k, uint64_t rid)
{
	kx_slot *e;
	bool found;

	if (x->nused + 1 > (x->mask + 1) * 7 / 10) {
		if (kx_resize(x, x->nlive + 1 > x->nlive * 2 ? x->nlive + 1
							     : x->nlive * 2))
			return -1;
		s = kx_find(x, k, &found);
	}
	e = &x->slot[s];
	if (x->inl) {
		e->k = k->bits;
	} else {
		uint64_t need = x->alen + 12 + k->len;
		if (buf_room(&x->arena, &x->acap, need, 4096))
			return -1;
		memcpy(x->arena + x->alen, &k->h, 8);
		memcpy(x->arena + x->alen + 8, &k->len, 4);
		memcpy(x->arena + x->alen + 12, k->b, k->len);
		e->k = x->alen;
		x->alen = need;
	}
	if (e->rid == KX_EMPTY)
		x->nused++;
	e->rid = rid;
	x->nlive++;
	return 0;
}

static void kx_del_slot(kx_index *x, uint64_t s)
{
	if (!x->inl)
		x->agarb += 12 + rec_len(x, x->slot[s].k);
	x->slot[s].rid = KX_TOMB;
	x->nlive--;
}

/* Removes k if row rid holds it. */
static void kx_remove(kx_index *x, const kx_key *k, uint64_t rid)
{
	bool found;
	uint64_t s = kx_find(x, k, &found);

	if (found && x->slot[s].rid == rid)
		kx_del_slot(x, s);
}

static void kx_index_free(kx_index *x)
{
	if (!x)
		return;
	free(x->slot);
	free(x->arena);
	free(x);
}

static kx_index *kx_new(uint32_t tid, const dml_key *key, const stg_type *ty,
			uint64_t want)
{
	kx_index *x = calloc(1, sizeof(*x));

	if (!x)
		return NULL;
	x->tid = tid;
	x->key = *key;
	memcpy(x->ty, ty, sizeof(stg_type) * (size_t)key->n);
	x->inl = key->n == 1 && x->ty[0] != STG_T_TEXT;
	if (kx_resize(x, want)) {
		kx_index_free(x);
		return NULL;
	}
	return x;
}

/* ---- reading rows of the table ---- */

/* A cursor over the table's tablets for row ids in any order (cheap when
 * ascending). */
typedef struct kx_cur {
	stg_pool *p;
	uint32_t tid, nt, t;
	bool have;
	stg_tablet_view v;
} kx_cur;

static int cur_init(gpmdb *db, kx_cur *c, uint32_t tid)
{
	memset(c, 0, sizeof(*c));
	c->p = db->pool;
	c->tid = tid;
	if (stg_tablet_count(db->pool, tid, &c->nt))
		return db_err_stg(db);
	return GPMDB_OK;
}

/* Row rid's tablet view and row within it. */
static int cur_seek(gpmdb *db, kx_cur *c, uint64_t rid, uint32_t *r)
{
	if (c->have && rid < c->v.first_row) {
		c->t = 0;
		c->have = false;
	}
	while (!c->have || rid >= c->v.first_row + c->v.capacity) {
		if (c->have)
			c->t++;
		if (c->t >= c->nt)
			return db_err(db, GPMDB_INTERNAL,
				      "key index: row %llu is past the table's "
				      "end",
				      (unsigned long long)rid);
		if (stg_tablet_get(c->p, c->tid, c->t, &c->v))
			return db_err_stg(db);
		c->have = true;
	}
	*r = (uint32_t)(rid - c->v.first_row);
	return GPMDB_OK;
}

static bool view_deleted(const stg_tablet_view *v, uint32_t r)
{
	return v->deleted && (v->deleted[r / 32] >> (r % 32) & 1);
}

static void names_of(const stg_schema *sch, const dml_key *key, char *buf,
		     size_t size)
{
	size_t len = 0;

	buf[0] = 0;
	for (int c = 0; c < key->n && len < size; c++)
		len += (size_t)snprintf(buf + len, size - len, "%s%s.%s",
					c ? ", " : "", sch->name,
					sch->cols[key->cols[c]].name);
}

static int fail_unique(gpmdb *db, const stg_schema *sch, const dml_key *key)
{
	char names[400];

	names_of(sch, key, names, sizeof(names));
	return db_err(db, GPMDB_CONSTRAINT, "UNIQUE constraint failed: %s",
		      names);
}

/* Builds the index of key from the table's live rows; *dup when two of
 * them already share a key (then no index is kept: *out NULL). */
static int kx_build(gpmdb *db, uint32_t tid, const stg_schema *sch,
		    const dml_key *key, kx_index **out, bool *dup)
{
	uint64_t rows = stg_row_count(db->pool, tid);
	uint64_t dels = stg_deleted_count(db->pool, tid);
	stg_type ty[32];
	kx_index *x;
	kx_key k = {0};
	kx_val v[32];
	uint32_t nt;
	stg_tablet_view tv;
	int rc = GPMDB_OK;

	*out = NULL;
	*dup = false;
	for (int c = 0; c < key->n; c++)
		ty[c] = sch->cols[key->cols[c]].type;
	if (!(x = kx_new(tid, key, ty, rows - dels)))
		return db_err(db, GPMDB_NOMEM, "out of memory");
	if (stg_tablet_count(db->pool, tid, &nt)) {
		rc = db_err_stg(db);
		goto out;
	}
	for (uint32_t t = 0; t < nt && !*dup; t++) {
		if (stg_tablet_get(db->pool, tid, t, &tv)) {
			rc = db_err_stg(db);
			goto out;
		}
		for (uint32_t r = 0; r < tv.nrows; r++) {
			bool found;
			if (view_deleted(&tv, r))
				continue;
			for (int c = 0; c < key->n; c++)
				val_view(x->ty[c], &tv, key->cols[c], r, &v[c]);
			if (key_make(x, v, &k)) {
				rc = db_err(db, GPMDB_NOMEM, "out of memory");
				goto out;
			}
			if (k.null)
				continue;
			uint64_t s = kx_find(x, &k, &found);
			if (found) {
				*dup = true;
				break;
			}
			if (kx_put(x, s, &k, tv.first_row + r)) {
				rc = db_err(db, GPMDB_NOMEM, "out of memory");
				goto out;
			}
		}
	}
	x->rows = rows;
	x->dels = dels;
out:
	free(k.b);
	if (rc || *dup)
		kx_index_free(x);
	else
		*out = x;
	return rc;
}

/* The cached index of key (rebuilt when the table's counts are not those
 * it mirrors); *dup as kx_build. */
static int kx_get(gpmdb *db, uint32_t tid, const stg_schema *sch,
		  const dml_key *key, kx_index **out, bool *dup)
{
	struct keyidx_db *d = kdb(db);
	kx_index **pp;
	int rc;

	*out = NULL;
	*dup = false;
	if (!d)
		return db_err(db, GPMDB_NOMEM, "out of memory");
	for (pp = &d->idx; *pp; pp = &(*pp)->next) {
		kx_index *x = *pp;
		if (x->tid != tid || x->key.n != key->n ||
		    memcmp(x->key.cols, key->cols,
			   sizeof(int) * (size_t)key->n))
			continue;
		if (x->rows == stg_row_count(db->pool, tid) &&
		    x->dels == stg_deleted_count(db->pool, tid)) {
			*out = x;
			return GPMDB_OK;
		}
		*pp = x->next; /* changed behind our back: rebuild */
		kx_index_free(x);
		break;
	}
	if ((rc = kx_build(db, tid, sch, key, out, dup)))
		return rc;
	if (*out) {
		/* built after earlier statements of the transaction: it may
		 * hold their changes, so a rollback must drop it (not the
		 * running statement's: every write that moves a key comes
		 * through this module first) */
		(*out)->tdirty = d->txn_stmts > 1;
		(*out)->next = d->idx;
		d->idx = *out;
	}
	return GPMDB_OK;
}

static void mark_dirty(kx_index *x)
{
	x->sdirty = x->tdirty = true;
}

/* ---- key lists ---- */

int keyidx_keys(gpmdb *db, const stg_schema *sch, const dml_key **keys, int *nk)
{
	struct keyidx_db *d = kdb(db);
	kx_table *t;
	int rc;

	*keys = NULL;
	*nk = 0;
	if (!d)
		return db_err(db, GPMDB_NOMEM, "out of memory");
	for (t = d->tabs; t; t = t->next)
		if (t->tid == sch->table_id) {
			*keys = t->keys;
			*nk = t->nk;
			return GPMDB_OK;
		}
	if (!(t = calloc(1, sizeof(*t))))
		return db_err(db, GPMDB_NOMEM, "out of memory");
	if ((rc = dml_unique_keys(db, sch, &t->keys, &t->nk))) {
		free(t);
		return rc;
	}
	t->tid = sch->table_id;
	t->next = d->tabs;
	d->tabs = t;
	*keys = t->keys;
	*nk = t->nk;
	return GPMDB_OK;
}

/* ---- INSERT ---- */

/* keyidx_keys for a batch: at most 64 keys (its per-key arrays). */
static int kx_keys64(gpmdb *db, const stg_schema *sch, const dml_key **keys,
		     int *nk)
{
	int rc = keyidx_keys(db, sch, keys, nk);

	if (!rc && *nk > 64)
		return db_err(db, GPMDB_UNSUPPORTED,
			      "table %s has more than 64 unique keys",
			      sch->name);
	return rc;
}

int keyidx_insert(gpmdb *db, uint32_t tid, const stg_schema *sch,
		  const stg_col_batch *cols, uint64_t n, int mode,
		  int64_t *bad_row)
{
	const dml_key *keys;
	kx_index *xs[64] = {0};
	uint64_t done[64] = {0};
	int nk, rc, bad_key = -1;
	int64_t best = INT64_MAX;
	uint64_t first = stg_row_count(db->pool, tid);
	kx_key k = {0};
	kx_val v[32];

	*bad_row = -1;
	if ((rc = kx_keys64(db, sch, &keys, &nk)) || !nk || !n)
		return rc;
	for (int q = 0; q < nk; q++) {
		const dml_key *key = &keys[q];
		kx_index *x;
		bool dup;
		if ((rc = kx_get(db, tid, sch, key, &x, &dup)))
			goto undo;
		if (dup) { /* the table already breaks it: every row fails */
			if (bad_key < 0 || best > -1) {
				bad_key = q;
				best = -1;
			}
			if (mode == KX_FIRST_KEY)
				break;
			continue;
		}
		xs[q] = x;
		uint64_t lim = mode == KX_LOWEST_ROW && best < (int64_t)n
				   ? (uint64_t)(best < 0 ? 0 : best)
				   : n;
		uint64_t i;
		/* room for them all at once, rather than doubling on the way */
		if (x->nused + lim + 1 > (x->mask + 1) * 7 / 10 &&
		    kx_resize(x, x->nlive + lim)) {
			rc = db_err(db, GPMDB_NOMEM, "out of memory");
			goto undo;
		}
		/* the new rows go in as they are checked: a later row of the
		 * batch finds an earlier one */
		const stg_col_batch *c0 = &cols[key->cols[0]];
		for (i = 0; i < lim; i++) {
			bool found;
			/* a large table: each lookup is a cache miss, so the
			 * slot of a row KX_AHEAD rows on is fetched now */
			if (x->inl && i + KX_AHEAD < lim &&
			    !bit_on(c0->nulls, i + KX_AHEAD))
				__builtin_prefetch(
				    &x->slot[keyidx_mix64(
						 keyidx_num_bits(x->ty[0],
								 c0->values,
								 i + KX_AHEAD) ^
						 0x9e3779b97f4a7c15ull) &
					     x->mask]);
			for (int c = 0; c < key->n; c++)
				val_batch(x->ty[c], &cols[key->cols[c]], i,
					  &v[c]);
			if (key_make(x, v, &k)) {
				rc = db_err(db, GPMDB_NOMEM, "out of memory");
				done[q] = i;
				goto undo;
			}
			if (k.null)
				continue;
			uint64_t s = kx_find(x, &k, &found);
			if (found) {
				if ((int64_t)i < best) {
					best = (int64_t)i;
					bad_key = q;
				}
				break;
			}
			if (kx_put(x, s, &k, first + i)) {
				rc = db_err(db, GPMDB_NOMEM, "out of memory");
				done[q] = i;
				goto undo;
			}
		}
		done[q] = i;
		if (bad_key >= 0 && mode == KX_FIRST_KEY)
			break;
	}
	if (bad_key < 0) {
		for (int q = 0; q < nk; q++) {
			xs[q]->rows = first + n;
			mark_dirty(xs[q]);
		}
		free(k.b);
		return GPMDB_OK;
	}
	rc = fail_unique(db, sch, &keys[bad_key]);
	*bad_row = best;
undo:
	/* take the rows added so far out again */
	for (int q = 0; q < nk; q++) {
		kx_index *x = xs[q];
		if (!x)
			continue;
		for (uint64_t i = 0; i < done[q]; i++) {
			for (int c = 0; c < keys[q].n; c++)
				val_batch(x->ty[c], &cols[keys[q].cols[c]], i,
					  &v[c]);
			if (key_make(x, v, &k)) {
				/* cannot undo: forget the index */
				x->rows = UINT64_MAX;
				break;
			}
			if (!k.null)
				kx_remove(x, &k, first + i);
		}
	}
	free(k.b);
	return rc;
}

/* ---- UPDATE ---- */

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Row i's key after the update: set columns from vals, the others from
 * storage. */
static int new_key(gpmdb *db, kx_cur *cur, const kx_index *x, int ncols,
		   const uint32_t *cols, const stg_col_batch *vals,
		   uint64_t rid, uint64_t i, kx_key *k)
{
	kx_val v[32];
	uint32_t r = 0;
	bool have = false;
	int rc;

	for (int c = 0; c < x->key.n; c++) {
		int j;
		for (j = 0; j < ncols; j++)
			if ((int)cols[j] == x->key.cols[c])
				break;
		if (j < ncols) {
			val_batch(x->ty[c], &vals[j], i, &v[c]);
			continue;
		}
		if (!have && (rc = cur_seek(db, cur, rid, &r)))
			return rc;
		have = true;
		val_view(x->ty[c], &cur->v, x->key.cols[c], r, &v[c]);
	}
	if (key_make(x, v, k))
		return db_err(db, GPMDB_NOMEM, "out of memory");
	return GPMDB_OK;
}

/* Row rid's key as storage has it. */
static int old_key(gpmdb *db, kx_cur *cur, const kx_index *x, uint64_t rid,
		   kx_key *k)
{
	kx_val v[32];
	uint32_t r;
	int rc;

	if ((rc = cur_seek(db, cur, rid, &r)))
		return rc;
	for (int c = 0; c < x->key.n; c++)
		val_view(x->ty[c], &cur->v, x->key.cols[c], r, &v[c]);
	if (key_make(x, v, k))
		return db_err(db, GPMDB_NOMEM, "out of memory");
	return GPMDB_OK;
}

static bool touches(const dml_key *key, int ncols, const uint32_t *cols)
{
	for (int c = 0; c < key->n; c++)
		for (int j = 0; j < ncols; j++)
			if ((int)cols[j] == key->cols[c])
				return true;
	return false;
}

/* Checks one key: *pos the offending row id position (UINT64_MAX: none)
 * and *blamed its batch row. */
static int upd_check(gpmdb *db, kx_index *x, uint32_t tid, int ncols,
		     const uint32_t *cols, const uint64_t *rowids,
		     const uint64_t *sorted, const uint64_t *ord, uint64_t n,
		     const stg_col_batch *vals, const int64_t *blame,
		     uint64_t *pos, int64_t *blamed)
{
	kx_index *tmp = kx_new(tid, &x->key, x->ty, n);
	kx_cur cur;
	kx_key k = {0};
	int rc;

	*pos = UINT64_MAX;
	if (!tmp)
		return db_err(db, GPMDB_NOMEM, "out of memory");
	if ((rc = cur_init(db, &cur, tid)))
		goto out;
	/* in row id order: a key's holders are the row keeping it (if any)
	 * and the updated rows getting it; the pair found first by a pass
	 * in row id order ends at the second smallest of them */
	for (uint64_t o = 0; o < n; o++) {
		uint64_t i = ord ? ord[o] : o, rid = rowids[i];
		bool found;
		if ((rc = new_key(db, &cur, x, ncols, cols, vals, rid, i, &k)))
			goto out;
		if (k.null)
			continue;
		uint64_t p = UINT64_MAX;
		uint64_t s = kx_find(x, &k, &found);
		if (found) {
			uint64_t h = x->slot[s].rid;
			/* a row being updated gives its key up */
			if (!bsearch(&h, sorted, n, sizeof(uint64_t), cmp_u64))
				p = h > rid ? h : rid;
		}
		s = kx_find(tmp, &k, &found);
		if (found)
			p = rid;
		else if (kx_put(tmp, s, &k, rid)) {
			rc = db_err(db, GPMDB_NOMEM, "out of memory");
			goto out;
		}
		if (p < *pos) {
			*pos = p;
			*blamed = blame ? blame[i] : (int64_t)i;
		}
	}
out:
	free(k.b);
	kx_index_free(tmp);
	return rc;
}

int keyidx_update(gpmdb *db, uint32_t tid, const stg_schema *sch, int ncols,
		  const uint32_t *cols, const uint64_t *rowids, uint64_t n,
		  const stg_col_batch *vals, const int64_t *blame, int mode,
		  int64_t *bad_row)
{
	const dml_key *keys;
	kx_index *xs[64] = {0};
	uint64_t *sorted = NULL, *ord = NULL;
	int nk, rc, bad_key = -1;
	int64_t best = INT64_MAX;
	kx_key k = {0};
	kx_cur cur;

	*bad_row = -1;
	if ((rc = kx_keys64(db, sch, &keys, &nk)) || !nk || !n)
		return rc;
	for (int q = 0; q < nk && !rc; q++) {
		kx_index *x;
		bool dup;
		uint64_t pos;
		int64_t blamed = -1;
		if (!touches(&keys[q], ncols, cols))
			continue;
		if ((rc = kx_get(db, tid, sch, &keys[q], &x, &dup)))
			break;
		if (dup) {
			pos = 0;
			blamed = -1;
		} else {
			xs[q] = x;
			if (!sorted) {
				bool asc = true;
				sorted = malloc(sizeof(uint64_t) * (n + 1));
				if (!sorted) {
					rc = db_err(db, GPMDB_NOMEM,
						    "out of memory");
					break;
				}
				memcpy(sorted, rowids, sizeof(uint64_t) * n);
				for (uint64_t i = 1; i < n; i++)
					asc = asc && rowids[i - 1] < rowids[i];
				if (!asc) {
					/* (row id, position) pairs: the pass
					 * goes in row id order */
					uint64_t *pr =
					    malloc(sizeof(uint64_t) * 2 * n);
					ord = malloc(sizeof(uint64_t) * n);
					if (!pr || !ord) {
						free(pr);
						rc = db_err(db, GPMDB_NOMEM,
							    "out of memory");
						break;
					}
					for (uint64_t i = 0; i < n; i++) {
						pr[2 * i] = rowids[i];
						pr[2 * i + 1] = i;
					}
					qsort(pr, n, 2 * sizeof(uint64_t),
					      cmp_u64);
					for (uint64_t i = 0; i < n; i++) {
						sorted[i] = pr[2 * i];
						ord[i] = pr[2 * i + 1];
					}
					free(pr);
				}
			}
			if ((rc = upd_check(db, x, tid, ncols, cols, rowids,
					    sorted, ord, n, vals, blame, &pos,
					    &blamed)))
				break;
		}
		if (pos == UINT64_MAX)
			continue;
		if (bad_key < 0 || (mode == KX_LOWEST_ROW && blamed < best)) {
			bad_key = q;
			best = blamed;
		}
		if (mode == KX_FIRST_KEY)
			break;
	}
	if (rc)
		goto out;
	if (bad_key >= 0) {
		rc = fail_unique(db, sch, &keys[bad_key]);
		*bad_row = best;
		goto out;
	}
	/* no violation: move the entries (all old keys out first, so that
	 * keys swapped between rows do not collide on the way) */
	if ((rc = cur_init(db, &cur, tid)))
		goto out;
	for (int q = 0; q < nk; q++) {
		kx_index *x = xs[q];
		if (!x)
			continue;
		mark_dirty(x);
		for (uint64_t o = 0; o < n && !rc; o++) {
			uint64_t i = ord ? ord[o] : o;
			if (!(rc = old_key(db, &cur, x, rowids[i], &k)) &&
			    !k.null)
				kx_remove(x, &k, rowids[i]);
		}
		for (uint64_t o = 0; o < n && !rc; o++) {
			uint64_t i = ord ? ord[o] : o;
			bool found;
			if ((rc = new_key(db, &cur, x, ncols, cols, vals,
					  rowids[i], i, &k)) ||
			    k.null)
				continue;
			uint64_t s = kx_find(x, &k, &found);
			if (kx_put(x, s, &k, rowids[i]))
				rc = db_err(db, GPMDB_NOMEM, "out of memory");
		}
		if (rc) /* half moved: forget it (the statement fails) */
			x->rows = UINT64_MAX;
	}
out:
	free(k.b);
	free(sorted);
	free(ord);
	return rc;
}

/* ---- DELETE ---- */

int keyidx_delete(gpmdb *db, uint32_t tid, const uint64_t *rowids, uint64_t n)
{
	struct keyidx_db *d = db->kidx;
	kx_key k = {0};
	kx_cur cur;
	int rc = GPMDB_OK;

	if (!d || !n)
		return GPMDB_OK;
	for (kx_index *x = d->idx; x && !rc; x = x->next) {
		if (x->tid != tid)
			continue;
		if (x->rows != stg_row_count(db->pool, tid) ||
		    x->dels != stg_deleted_count(db->pool, tid)) {
			x->rows = UINT64_MAX; /* stale: rebuilt on next use */
			continue;
		}
		mark_dirty(x);
		if ((rc = cur_init(db, &cur, tid)))
			break;
		for (uint64_t i = 0; i < n && !rc; i++)
			if (!(rc = old_key(db, &cur, x, rowids[i], &k)) &&
			    !k.null)
				kx_remove(x, &k, rowids[i]);
		x->dels += n;
	}
	free(k.b);
	return rc;
}

/* ---- statements and transactions ---- */

static void drop_where(gpmdb *db, bool stmt)
{
	struct keyidx_db *d = db->kidx;

	if (!d)
		return;
	for (kx_index **pp = &d->idx; *pp;) {
		kx_index *x = *pp;
		if (stmt ? x->sdirty : x->tdirty) {
			*pp = x->next;
			kx_index_free(x);
		} else {
			pp = &x->next;
		}
	}
}

void keyidx_reset(gpmdb *db)
{
	struct keyidx_db *d = db->kidx;

	if (!d)
		return;
	while (d->idx) {
		kx_index *x = d->idx;
		d->idx = x->next;
		kx_index_free(x);
	}
	while (d->tabs) {
		kx_table *t = d->tabs;
		d->tabs = t->next;
		free(t->keys);
		free(t);
	}
}

void keyidx_stmt_begin(gpmdb *db, bool ddl)
{
	struct keyidx_db *d = kdb(db);

	if (!d)
		return; /* out of memory: the next use reports it */
	if (ddl) {
		keyidx_reset(db);
		d->ddl_txn = d->ddl_stmt = true;
	}
	if (d->depth++ == 0) {
		d->txn_stmts++;
		for (kx_index *x = d->idx; x; x = x->next)
			x->sdirty = false;
	}
}

void keyidx_stmt_end(gpmdb *db, int rc)
{
	struct keyidx_db *d = db->kidx;

	if (!d)
		return;
	if (d->depth > 0)
		d->depth--;
	if (rc != GPMDB_OK)
		drop_where(db, true);
	if (d->ddl_stmt && d->depth == 0) {
		keyidx_reset(db); /* what the DDL statement cached */
		d->ddl_stmt = false;
	}
}

void keyidx_txn_end(gpmdb *db, bool committed)
{
	struct keyidx_db *d = db->kidx;

	if (!d)
		return;
	if (!committed) {
		if (d->ddl_txn)
			keyidx_reset(db);
		else
			drop_where(db, false);
	}
	for (kx_index *x = d->idx; x; x = x->next)
		x->tdirty = x->sdirty = false;
	d->ddl_txn = false;
	d->txn_stmts = 0;
}

void keyidx_free(gpmdb *db)
{
	keyidx_reset(db);
	free(db->kidx);
	db->kidx = NULL;
}
