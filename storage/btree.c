/*
 * btree.c - the B+-tree of an index (btree.h; docs/ARCHITECTURE.md
 * "Indexes").
 *
 * Nodes are 4 KiB, cut from arenas (extents of the allocator that grow by
 * doubling, listed in the index header) or taken back from the free list.
 * A node is undo-logged whole (mlog_undo of its 4 KiB) the first time a
 * transaction changes it, and again as a DRAM image after a savepoint, so
 * the tree rolls back with the rows: statement, savepoint, transaction
 * and crash alike.  A node cut from an arena since the last savepoint is
 * "fresh" (mlog_fresh): nothing reaches it after a rollback, so it is not
 * logged.  A node taken from the free list is: its free-list link must
 * come back.  A node freed in this transaction goes to the free list but
 * is not reused before the log generation changes (commit), so a rollback
 * finds it as it was.
 *
 * Leaves split in half, except the last leaf of the tree receiving the
 * greatest entry (ascending keys, the common case of INSERT): it stays
 * full and the new leaf starts with that entry.  Nodes never merge; an
 * emptied leaf leaves the tree and an emptied inner node follows it, so a
 * table deleted to empty has an empty root leaf.  Large batches do not
 * walk the tree entry by entry: index.c merges them into a sorted run and
 * ix_build writes a new tree into one fresh arena (the old nodes are
 * freed at commit), which is also how CREATE INDEX and REINDEX build.
 */
#include <omp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "btree.h"

#define P     STG_IX_TEXT_PREFIX
#define NHDR  STG_IX_NODE_HDR
#define NSIZE STG_IX_NODE
#define MAXH  32

static stg_ix_node *nd(const ixt *t, uint64_t off)
{
	return (stg_ix_node *)pool_at(t->p, off);
}

static uint8_t *leaf_ent(const ixt *t, stg_ix_node *n, uint32_t i)
{
	return (uint8_t *)n + NHDR + (size_t)i * t->ew;
}

static uint8_t *inner_slot(const ixt *t, stg_ix_node *n, uint32_t i)
{
	return (uint8_t *)n + NHDR + (size_t)i * (t->ew + 8);
}

static uint64_t slot_child(const ixt *t, stg_ix_node *n, uint32_t i)
{
	uint64_t c;

	memcpy(&c, inner_slot(t, n, i), 8);
	return c;
}

static const uint8_t *slot_sep(const ixt *t, stg_ix_node *n, uint32_t i)
{
	return inner_slot(t, n, i) + 8;
}

/* Makes a changed range of a node durable (its undo image is already). */
static void dirty(const ixt *t, const void *addr, size_t len)
{
	pool_persist(t->p, addr, len);
}

/* dirty() for a whole new tree: flushed by all cores in pmem mode. */
static void dirty_big(const ixt *t, void *addr, size_t len)
{
	stg_pool *p = t->p;
	const size_t chunk = 4u << 20;
	long nc = (long)((len + chunk - 1) / chunk);

	if (p->dur != STG_DUR_PMEM || len < 2 * chunk) {
		dirty(t, addr, len);
		return;
	}
#pragma omp parallel for schedule(static)
	for (long i = 0; i < nc; i++) {
		size_t o = (size_t)i * chunk;
		pool_flush(p, (char *)addr + o,
			   len - o < chunk ? len - o : chunk);
	}
	pool_drain(p);
	pool_count_persisted(p, len);
}

/* ---- geometry and keys ---------------------------------------------- */

int ix_geometry(stg_pool *p, const uint8_t *types, int ncols, uint8_t *segw,
		uint32_t *kw)
{
	uint32_t w = 0;

	for (int c = 0; c < ncols; c++) {
		segw[c] = types[c] == STG_T_TEXT ? P + 2 : 9;
		w += segw[c];
	}
	if (w > STG_IX_MAX_KEY)
		return pool_err(p, GPMDB_RANGE,
				"index key too wide: %u bytes encoded, at most "
				"%u (each TEXT column takes %u, others 9)",
				w, STG_IX_MAX_KEY, P + 2);
	*kw = w;
	return GPMDB_OK;
}

int ix_open(stg_pool *p, uint64_t hoff, uint64_t tcat, uint32_t index_id,
	    const char *name, ixt *t)
{
	stg_ix_hdr *h;
	uint64_t cat;
	uint32_t kw, off = 0;

	memset(t, 0, sizeof(*t));
	if (!pool_range_ok(p, hoff, sizeof(stg_ix_hdr)))
		return pool_err(p, GPMDB_CORRUPT,
				"index %s: header outside the pool", name);
	h = (stg_ix_hdr *)pool_at(p, hoff);
	if (h->magic != STG_IX_MAGIC || h->ncols == 0 || h->ncols > 32 ||
	    h->node_size != NSIZE)
		return pool_err(p, GPMDB_CORRUPT,
				"index %s: damaged header (magic, columns)",
				name);
	t->p = p;
	t->hoff = hoff;
	t->tid = h->table_id;
	t->index_id = index_id;
	t->ncols = (int)h->ncols;
	snprintf(t->name, sizeof(t->name), "%s", name);
	memcpy(t->cols, h->cols, sizeof(t->cols));
	memcpy(t->types, h->types, sizeof(t->types));
	if (ix_geometry(p, t->types, t->ncols, t->segw, &kw) != GPMDB_OK ||
	    kw != h->kw || h->ew != kw + 8 ||
	    memcmp(t->segw, h->segw, (size_t)t->ncols))
		return pool_err(p, GPMDB_CORRUPT,
				"index %s: damaged header (key geometry)",
				name);
	for (int c = 0; c < t->ncols; c++) {
		t->soff[c] = (uint16_t)off;
		off += t->segw[c];
		if (t->types[c] == STG_T_TEXT)
			t->has_text = true;
	}
	t->kw = kw;
	t->ew = kw + 8;
	t->unique = h->flags & 1;
	t->leaf_cap = (NSIZE - NHDR) / t->ew;
	t->inner_cap = (NSIZE - NHDR) / (t->ew + 8);
	if (!tcat && cat_find_table(p, t->tid, &cat) != GPMDB_OK)
		return pool_err(p, GPMDB_CORRUPT,
				"index %s: its table (id %u) does not exist",
				name, t->tid);
	t->tcat = tcat ? tcat : cat;
	return GPMDB_OK;
}

static void put_be64(uint8_t *o, uint64_t u)
{
	for (int i = 0; i < 8; i++)
		o[i] = (uint8_t)(u >> (56 - 8 * i));
}

void ix_enc_int(uint8_t *o, int64_t v)
{
	o[0] = 1;
	put_be64(o + 1, (uint64_t)v ^ (1ull << 63));
}

void ix_enc_real(uint8_t *o, double d)
{
	uint64_t u;

	o[0] = 1;
	if (d != d) { /* NaN after every number */
		memset(o + 1, 0xff, 8);
		return;
	}
	if (d == 0)
		d = 0; /* -0.0 equals 0.0 */
	memcpy(&u, &d, 8);
	u = (u >> 63) ? ~u : u | (1ull << 63);
	put_be64(o + 1, u);
}

void ix_enc_text(uint8_t *o, const char *s, uint32_t len)
{
	o[0] = 1;
	memset(o + 1, 0, P);
	memcpy(o + 1, s, len < P ? len : P);
	o[P + 1] = (uint8_t)(len > P ? P + 1 : len);
}

void ix_enc_stored(uint8_t *o, stg_type ty, const void *v, const char *s,
		   uint32_t len)
{
	switch (ty) {
	case STG_T_INT:
	case STG_T_DATE:
		ix_enc_int(o, *(const int32_t *)v);
		break;
	case STG_T_BOOLEAN:
		ix_enc_int(o, *(const uint8_t *)v);
		break;
	case STG_T_FLOAT:
		ix_enc_real(o, *(const float *)v);
		break;
	case STG_T_DOUBLE:
		ix_enc_real(o, *(const double *)v);
		break;
	case STG_T_TEXT:
		ix_enc_text(o, s, len);
		break;
	default:
		ix_enc_int(o, *(const int64_t *)v);
		break;
	}
}

void ix_enc_vals(const ixt *t, const stg_key_val *vals, int n, uint8_t *out)
{
	for (int c = 0; c < n && c < t->ncols; c++) {
		uint8_t *o = out + t->soff[c];
		stg_type ty = (stg_type)t->types[c];

		if (vals[c].null)
			memset(o, 0, t->segw[c]);
		else if (ty == STG_T_TEXT)
			ix_enc_text(o, vals[c].s, vals[c].len);
		else if (ty == STG_T_FLOAT || ty == STG_T_DOUBLE)
			ix_enc_real(o, vals[c].d);
		else
			ix_enc_int(o, vals[c].i);
	}
}

static bool bit_at(const uint32_t *b, uint64_t i)
{
	return b && (b[i / 32] >> (i % 32) & 1);
}

int ix_enc_row(const ixt *t, uint64_t rowid, uint8_t *out)
{
	for (int c = 0; c < t->ncols; c++) {
		tab_cellv v;
		int rc = tab_cell(t->p, t->tcat, t->cols[c], rowid, &v);

		if (rc != GPMDB_OK)
			return rc;
		if (v.null)
			memset(out + t->soff[c], 0, t->segw[c]);
		else
			ix_enc_stored(out + t->soff[c], v.type, v.val, v.text,
				      v.tlen);
	}
	return GPMDB_OK;
}

int ix_enc_batch(const ixt *t, const stg_col_batch *b, const int *cols_of,
		 uint64_t i, uint64_t rowid, uint8_t *out)
{
	for (int c = 0; c < t->ncols; c++) {
		uint8_t *o = out + t->soff[c];
		stg_type ty = (stg_type)t->types[c];
		int bc = cols_of[c];

		if (bc < 0) {
			tab_cellv v;
			int rc = tab_cell(t->p, t->tcat, t->cols[c], rowid, &v);

			if (rc != GPMDB_OK)
				return rc;
			if (v.null)
				memset(o, 0, t->segw[c]);
			else
				ix_enc_stored(o, ty, v.val, v.text, v.tlen);
			continue;
		}
		if (bit_at(b[bc].nulls, i)) {
			memset(o, 0, t->segw[c]);
		} else if (ty == STG_T_TEXT) {
			const stg_text *x = (const stg_text *)b[bc].values + i;
			ix_enc_text(o, x->ptr, x->len);
		} else {
			ix_enc_stored(o, ty,
				      (const char *)b[bc].values +
					  i * stg_type_width(ty),
				      NULL, 0);
		}
	}
	return GPMDB_OK;
}

bool ix_key_has_null(const ixt *t, const uint8_t *k)
{
	for (int c = 0; c < t->ncols; c++)
		if (k[t->soff[c]] == 0)
			return true;
	return false;
}

/* ---- comparison ------------------------------------------------------ */

static void full_text(const ixt *t, const ixsrc *s, uint64_t id, int c,
		      const char **ptr, uint32_t *len)
{
	*ptr = "";
	*len = 0;
	if (s && s->kind == IXS_VALS) {
		*ptr = s->vals[c].s;
		*len = s->vals[c].len;
	} else if (s && s->kind == IXS_BATCH && s->batch[c].values) {
		const stg_text *x = (const stg_text *)s->batch[c].values + id;
		*ptr = x->ptr;
		*len = x->len;
	} else {
		if (s && s->kind == IXS_BATCH)
			id = s->rowids[id]; /* the column is not in the batch */
		tab_cellv v;

		if (tab_cell(t->p, t->tcat, t->cols[c], id, &v) == GPMDB_OK &&
		    !v.null) {
			*ptr = v.text;
			*len = v.tlen;
		}
	}
}

int ix_cmp(const ixt *t, const uint8_t *a, const ixsrc *sa, uint64_t ida,
	   const uint8_t *b, const ixsrc *sb, uint64_t idb, int npre)
{
	if (!t->has_text) {
		uint32_t w = npre >= t->ncols ? t->kw : t->soff[npre];
		int d = memcmp(a, b, w);
		return d < 0 ? -1 : d > 0;
	}
	for (int c = 0; c < npre && c < t->ncols; c++) {
		const uint8_t *x = a + t->soff[c], *y = b + t->soff[c];
		int d = memcmp(x, y, t->segw[c]);
		if (d)
			return d < 0 ? -1 : 1;
		if (t->types[c] == STG_T_TEXT && x[0] && x[P + 1] == P + 1) {
			const char *s1, *s2;
			uint32_t l1, l2;

			full_text(t, sa, ida, c, &s1, &l1);
			full_text(t, sb, idb, c, &s2, &l2);
			d = memcmp(s1, s2, l1 < l2 ? l1 : l2);
			if (!d)
				d = l1 < l2 ? -1 : l1 > l2;
			if (d)
				return d < 0 ? -1 : 1;
		}
	}
	return 0;
}

int ix_cmp_entry(const ixt *t, const uint8_t *a, const uint8_t *b)
{
	uint64_t ra = ix_rowid(t, a), rb = ix_rowid(t, b);
	int d = ix_cmp(t, a, NULL, ra, b, NULL, rb, t->ncols);

	if (d)
		return d;
	return ra < rb ? -1 : ra > rb;
}

/* ---- node allocation -------------------------------------------------- */

static int log_node(const ixt *t, uint64_t off)
{
	return mlog_undo(t->p, off, NSIZE);
}

static int log_state(const ixt *t)
{
	return mlog_undo(t->p, t->hoff + offsetof(stg_ix_hdr, root), 64);
}

static void persist_state(const ixt *t)
{
	dirty(t, &ix_hdr(t)->root, 64);
}

/* A new arena of at least need bytes (doubling from 64 KiB, at most
 * 64 MiB unless need is larger). */
static int new_arena(ixt *t, uint64_t need)
{
	stg_ix_hdr *h = ix_hdr(t);
	uint64_t want = h->arena_size ? h->arena_size * 2 : 65536, off, ext;
	int rc;

	if (want > (64ull << 20))
		want = 64ull << 20;
	if (want < need)
		want = need;
	if (h->narenas >= STG_IX_MAX_ARENAS)
		return pool_err(t->p, GPMDB_FULL,
				"index %s has %u arenas, its most: REINDEX %s "
				"makes it one",
				t->name, STG_IX_MAX_ARENAS, t->name);
	if ((rc = log_state(t)) != GPMDB_OK)
		return rc;
	if ((rc = alloc_extent(t->p, want, &off, &ext)) != GPMDB_OK)
		return rc;
	h = ix_hdr(t); /* the pool may have moved */
	/* the slot past narenas is reached only through narenas */
	h->arenas[h->narenas][0] = off;
	h->arenas[h->narenas][1] = ext;
	dirty(t, h->arenas[h->narenas], 16);
	h->narenas++;
	h->arena_off = off;
	h->arena_size = ext;
	h->arena_used = 0;
	persist_state(t);
	return GPMDB_OK;
}

static int node_alloc(ixt *t, uint16_t level, uint64_t *out)
{
	stg_ix_hdr *h = ix_hdr(t);
	uint64_t off;
	stg_ix_node *n;
	int rc;

	if ((rc = log_state(t)) != GPMDB_OK)
		return rc;
	h = ix_hdr(t);
	if (h->free_head && nd(t, h->free_head)->free_gen != t->p->log_gen) {
		off = h->free_head;
		n = nd(t, off);
		/* the link comes back on a rollback */
		rc = mlog_undo(t->p, off + offsetof(stg_ix_node, free_gen), 16);
		if (rc != GPMDB_OK)
			return rc;
		h = ix_hdr(t);
		n = nd(t, off);
		h->free_head = n->free_next;
	} else {
		if (h->arena_used + NSIZE > h->arena_size) {
			if ((rc = new_arena(t, NSIZE)) != GPMDB_OK)
				return rc;
			h = ix_hdr(t);
		}
		off = h->arena_off + h->arena_used;
		h->arena_used += NSIZE;
	}
	persist_state(t);
	mlog_fresh(t->p, off, NSIZE);
	n = nd(t, off);
	memset(n, 0, NHDR);
	n->magic = STG_IXN_MAGIC;
	n->level = level;
	*out = off;
	return GPMDB_OK;
}

/* The node at off leaves the tree; reused after this transaction. */
static int node_free(ixt *t, uint64_t off)
{
	stg_ix_hdr *h;
	stg_ix_node *n;
	int rc;

	if ((rc = log_node(t, off)) != GPMDB_OK ||
	    (rc = log_state(t)) != GPMDB_OK)
		return rc;
	h = ix_hdr(t);
	n = nd(t, off);
	n->free_gen = t->p->log_gen;
	n->free_next = h->free_head;
	n->n = 0;
	dirty(t, n, NHDR);
	h->free_head = off;
	persist_state(t);
	return GPMDB_OK;
}

/* ---- search ----------------------------------------------------------- */

/* In an inner node: the last slot i >= 1 whose separator is below the
 * target (cmp < 0; with le, cmp <= 0), else slot 0.  Full entries compare
 * with ix_cmp_entry (npre < 0). */
static uint32_t inner_find(const ixt *t, stg_ix_node *n, const uint8_t *key,
			   const ixsrc *src, uint64_t kid, int npre, bool le)
{
	uint32_t lo = 1, hi = n->n; /* answer in [0, n) */

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		const uint8_t *s = slot_sep(t, n, mid);
		int d = npre < 0 ? ix_cmp_entry(t, s, key)
				 : ix_cmp(t, s, NULL, ix_rowid(t, s), key, src,
					  kid, npre);
		if (d < 0 || (le && d == 0))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo - 1;
}

/* In a leaf: the first entry >= the target (with gt: > the target). */
static uint32_t leaf_find(const ixt *t, stg_ix_node *n, const uint8_t *key,
			  const ixsrc *src, uint64_t kid, int npre, bool gt)
{
	uint32_t lo = 0, hi = n->n;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		const uint8_t *e = leaf_ent(t, n, mid);
		int d = npre < 0 ? ix_cmp_entry(t, e, key)
				 : ix_cmp(t, e, NULL, ix_rowid(t, e), key, src,
					  kid, npre);
		if (d < 0 || (gt && d == 0))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Descends to the leaf for a whole entry, recording the path. */
static int descend(const ixt *t, const uint8_t *ent, uint64_t *path,
		   uint32_t *slot, int *depth)
{
	stg_ix_hdr *h = ix_hdr(t);
	uint64_t off = h->root;
	int d = 0;

	for (;;) {
		stg_ix_node *n;

		if (!pool_range_ok(t->p, off, NSIZE) || d >= MAXH ||
		    (n = nd(t, off))->magic != STG_IXN_MAGIC)
			return pool_err(t->p, GPMDB_CORRUPT,
					"index %s: damaged node at 0x%llx",
					t->name, (unsigned long long)off);
		path[d] = off;
		if (n->level == 0)
			break;
		if (n->n == 0)
			return pool_err(t->p, GPMDB_CORRUPT,
					"index %s: empty inner node", t->name);
		slot[d] = inner_find(t, n, ent, NULL, 0, -1, true);
		off = slot_child(t, n, slot[d]);
		d++;
	}
	*depth = d;
	return GPMDB_OK;
}

int ix_seek(const ixt *t, const uint8_t *key, const ixsrc *src, uint64_t kid,
	    int npre, bool strict, ixpos *out)
{
	uint64_t off = ix_hdr(t)->root;
	int d = 0;
	stg_ix_node *n;

	out->leaf = 0;
	out->pos = 0;
	if (!off)
		return GPMDB_OK;
	for (;;) {
		if (!pool_range_ok(t->p, off, NSIZE) || d++ >= MAXH ||
		    (n = nd(t, off))->magic != STG_IXN_MAGIC)
			return pool_err(t->p, GPMDB_CORRUPT,
					"index %s: damaged node at 0x%llx",
					t->name, (unsigned long long)off);
		if (n->level == 0)
			break;
		off = slot_child(t, n,
				 inner_find(t, n, key, src, kid, npre, strict));
	}
	out->leaf = off;
	out->pos = leaf_find(t, n, key, src, kid, npre, strict);
	if (out->pos >= n->n) { /* from the next leaf on */
		if (n->n == 0) {
			out->leaf = 0; /* an empty leaf is a lone root */
		} else {
			out->pos = n->n - 1;
			ix_next(t, out);
		}
	}
	return GPMDB_OK;
}

void ix_next(const ixt *t, ixpos *c)
{
	stg_ix_node *n = nd(t, c->leaf);

	if (c->pos + 1 < n->n) {
		c->pos++;
		return;
	}
	c->leaf = n->next;
	c->pos = 0;
	while (c->leaf && nd(t, c->leaf)->n == 0)
		c->leaf = nd(t, c->leaf)->next;
}

void ix_prev(const ixt *t, ixpos *c)
{
	stg_ix_node *n;

	if (c->pos > 0) {
		c->pos--;
		return;
	}
	c->leaf = nd(t, c->leaf)->prev;
	while (c->leaf && (n = nd(t, c->leaf))->n == 0)
		c->leaf = n->prev;
	if (c->leaf)
		c->pos = nd(t, c->leaf)->n - 1;
}

static void edge(const ixt *t, ixpos *out, bool last)
{
	uint64_t off = ix_hdr(t)->root;
	stg_ix_node *n;
	int d = 0;

	out->leaf = 0;
	out->pos = 0;
	if (!off)
		return;
	while ((n = nd(t, off))->level > 0 && n->n && d++ < MAXH)
		off = slot_child(t, n, last ? n->n - 1 : 0);
	if (n->level > 0 || n->n == 0)
		return;
	out->leaf = off;
	out->pos = last ? n->n - 1 : 0;
}

void ix_first(const ixt *t, ixpos *out)
{
	edge(t, out, false);
}

void ix_last(const ixt *t, ixpos *out)
{
	edge(t, out, true);
}

double ix_rank(const ixt *t, const uint8_t *key, const ixsrc *src, int npre,
	       bool strict)
{
	uint64_t off = ix_hdr(t)->root;
	double r = 0, w = 1;
	stg_ix_node *n;
	int d = 0;

	if (!off)
		return 0;
	while ((n = nd(t, off))->level > 0 && n->n && d++ < MAXH) {
		uint32_t i = inner_find(t, n, key, src, 0, npre, strict);
		r += w * i / n->n;
		w /= n->n;
		off = slot_child(t, n, i);
	}
	if (n->level == 0 && n->n)
		r += w * leaf_find(t, n, key, src, 0, npre, strict) / n->n;
	return r;
}

/*
 * Every entry in order into out (room for cap entries), *count of them:
 * the leaf chain walked once for the leaves and their places, then the
 * leaves' entries (contiguous in each leaf) copied on every core.  An
 * entry at a time on one core took about half a second for 50M entries
 * (the GPU probe's records, stg_index_probe).
 */
int ix_copy_all(const ixt *t, uint8_t *out, uint64_t cap, uint64_t *count)
{
	uint64_t nl = 0, lcap = 1024, k = 0, *lf = malloc(lcap * 16);
	ixpos c;
	int rc = GPMDB_OK;

	*count = 0;
	if (!lf)
		return pool_err(t->p, GPMDB_NOMEM, "out of memory");
	/* (leaf offset, first entry's place) of each leaf in order */
	for (ix_first(t, &c); c.leaf; c.leaf = nd(t, c.leaf)->next) {
		uint32_t n = nd(t, c.leaf)->n;

		if (n == 0)
			continue;
		if (k + n > cap) {
			rc = pool_err(t->p, GPMDB_CORRUPT,
				      "index %s: more entries than its count",
				      t->name);
			goto out;
		}
		if (nl == lcap) {
			uint64_t *g = realloc(lf, (lcap *= 2) * 16);
			if (!g) {
				rc = pool_err(t->p, GPMDB_NOMEM,
					      "out of memory");
				goto out;
			}
			lf = g;
		}
		lf[2 * nl] = c.leaf;
		lf[2 * nl + 1] = k;
		nl++;
		k += n;
	}
#pragma omp parallel for schedule(static) if (nl > 64)
	for (uint64_t i = 0; i < nl; i++) {
		ixpos p = {lf[2 * i], 0};
		memcpy(out + lf[2 * i + 1] * t->ew, ix_at(t, &p),
		       (size_t)nd(t, lf[2 * i])->n * t->ew);
	}
	*count = k;
out:
	free(lf);
	return rc;
}

int ix_collect(const ixt *t, uint8_t **out, uint64_t *count)
{
	uint64_t cap = ix_hdr(t)->entries + 1;
	uint8_t *v = malloc((size_t)cap * t->ew);
	int rc;

	*out = NULL;
	*count = 0;
	if (!v)
		return pool_err(t->p, GPMDB_NOMEM, "out of memory");
	if ((rc = ix_copy_all(t, v, cap, count)) != GPMDB_OK) {
		free(v);
		return rc;
	}
	*out = v;
	return GPMDB_OK;
}

/* ---- insert ------------------------------------------------------------ */

/* Inserts (sep, child) at slot i of the inner node at path[d], splitting
 * upwards as needed. */
static int inner_insert(ixt *t, uint64_t *path, uint32_t *slot, int d,
			uint32_t i, const uint8_t *sep, uint64_t child);

static int new_root(ixt *t, uint64_t left, uint64_t right, const uint8_t *sep)
{
	stg_ix_hdr *h;
	stg_ix_node *n;
	uint64_t off;
	int rc;

	if ((rc = node_alloc(t, (uint16_t)(nd(t, left)->level + 1), &off)))
		return rc;
	n = nd(t, off);
	memcpy(inner_slot(t, n, 0), &left, 8);
	memset(inner_slot(t, n, 0) + 8, 0, t->ew);
	memcpy(inner_slot(t, n, 1), &right, 8);
	memcpy(inner_slot(t, n, 1) + 8, sep, t->ew);
	n->n = 2;
	dirty(t, n, NHDR + 2 * (t->ew + 8));
	if ((rc = log_state(t)) != GPMDB_OK)
		return rc;
	h = ix_hdr(t);
	h->root = off;
	h->height++;
	persist_state(t);
	return GPMDB_OK;
}

static int inner_insert(ixt *t, uint64_t *path, uint32_t *slot, int d,
			uint32_t i, const uint8_t *sep, uint64_t child)
{
	uint64_t off = path[d], roff;
	uint32_t sw = t->ew + 8, cap = t->inner_cap, s;
	stg_ix_node *n, *r;
	uint8_t *tmp;
	int rc;

	if ((rc = log_node(t, off)) != GPMDB_OK)
		return rc;
	n = nd(t, off);
	if (n->n < cap) {
		uint8_t *at = inner_slot(t, n, i);
		memmove(at + sw, at, (size_t)(n->n - i) * sw);
		memcpy(at, &child, 8);
		memcpy(at + 8, sep, t->ew);
		n->n++;
		dirty(t, at, (size_t)(n->n - i) * sw);
		dirty(t, n, NHDR);
		return GPMDB_OK;
	}
	/* split: cap + 1 slots, the left keeps s */
	if (!(tmp = malloc((size_t)(cap + 1) * sw)))
		return pool_err(t->p, GPMDB_NOMEM, "out of memory");
	memcpy(tmp, inner_slot(t, n, 0), (size_t)i * sw);
	memcpy(tmp + (size_t)i * sw, &child, 8);
	memcpy(tmp + (size_t)i * sw + 8, sep, t->ew);
	memcpy(tmp + (size_t)(i + 1) * sw, inner_slot(t, n, i),
	       (size_t)(cap - i) * sw);
	s = i == cap ? cap : (cap + 1) / 2;
	if ((rc = node_alloc(t, nd(t, off)->level, &roff)) != GPMDB_OK) {
		free(tmp);
		return rc;
	}
	n = nd(t, off);
	r = nd(t, roff);
	memcpy(inner_slot(t, n, 0), tmp, (size_t)s * sw);
	n->n = s;
	memcpy(inner_slot(t, r, 0), tmp + (size_t)s * sw,
	       (size_t)(cap + 1 - s) * sw);
	r->n = cap + 1 - s;
	free(tmp);
	dirty(t, n, NHDR + (size_t)n->n * sw);
	dirty(t, r, NHDR + (size_t)r->n * sw);
	{
		uint8_t up[STG_IX_MAX_KEY + 8];
		memcpy(up, slot_sep(t, r, 0), t->ew);
		if (d == 0)
			return new_root(t, off, roff, up);
		return inner_insert(t, path, slot, d - 1, slot[d - 1] + 1, up,
				    roff);
	}
}

int ix_insert(ixt *t, const uint8_t *ent)
{
	uint64_t path[MAXH], off, roff;
	uint32_t slot[MAXH], pos, cap = t->leaf_cap, s, ew = t->ew;
	stg_ix_node *n, *r;
	stg_ix_hdr *h = ix_hdr(t);
	int depth, rc;
	uint8_t *tmp;

	t->p->ix_epoch++;
	if (!h->root) {
		if ((rc = node_alloc(t, 0, &off)) != GPMDB_OK ||
		    (rc = log_state(t)) != GPMDB_OK)
			return rc;
		h = ix_hdr(t);
		h->root = off;
		h->height = 1;
		persist_state(t);
	}
	if ((rc = descend(t, ent, path, slot, &depth)) != GPMDB_OK)
		return rc;
	off = path[depth];
	n = nd(t, off);
	pos = leaf_find(t, n, ent, NULL, 0, -1, false);
	if (pos < n->n && ix_cmp_entry(t, leaf_ent(t, n, pos), ent) == 0)
		return pool_err(t->p, GPMDB_CORRUPT,
				"index %s: row %llu has an entry already",
				t->name, (unsigned long long)ix_rowid(t, ent));
	if ((rc = log_state(t)) != GPMDB_OK || (rc = log_node(t, off)))
		return rc;
	h = ix_hdr(t);
	h->entries++;
	persist_state(t);
	n = nd(t, off);
	if (n->n < cap) {
		uint8_t *at = leaf_ent(t, n, pos);
		memmove(at + ew, at, (size_t)(n->n - pos) * ew);
		memcpy(at, ent, ew);
		n->n++;
		dirty(t, at, (size_t)(n->n - pos) * ew);
		dirty(t, n, NHDR);
		return GPMDB_OK;
	}
	/* split; ascending inserts at the tree's end keep leaves full */
	if (!(tmp = malloc((size_t)(cap + 1) * ew)))
		return pool_err(t->p, GPMDB_NOMEM, "out of memory");
	memcpy(tmp, leaf_ent(t, n, 0), (size_t)pos * ew);
	memcpy(tmp + (size_t)pos * ew, ent, ew);
	memcpy(tmp + (size_t)(pos + 1) * ew, leaf_ent(t, n, pos),
	       (size_t)(cap - pos) * ew);
	s = pos == cap && n->next == 0 ? cap : (cap + 1) / 2;
	if ((rc = node_alloc(t, 0, &roff)) != GPMDB_OK) {
		free(tmp);
		return rc;
	}
	n = nd(t, off);
	if (n->next) {
		if ((rc = log_node(t, n->next)) != GPMDB_OK) {
			free(tmp);
			return rc;
		}
		n = nd(t, off);
		nd(t, n->next)->prev = roff;
		dirty(t, nd(t, n->next), NHDR);
	}
	r = nd(t, roff);
	r->prev = off;
	r->next = n->next;
	n->next = roff;
	memcpy(leaf_ent(t, n, 0), tmp, (size_t)s * ew);
	n->n = s;
	memcpy(leaf_ent(t, r, 0), tmp + (size_t)s * ew,
	       (size_t)(cap + 1 - s) * ew);
	r->n = cap + 1 - s;
	free(tmp);
	dirty(t, n, NHDR + (size_t)n->n * ew);
	dirty(t, r, NHDR + (size_t)r->n * ew);
	stg_crash_point("index.split");
	{
		uint8_t up[STG_IX_MAX_KEY + 8];
		memcpy(up, leaf_ent(t, r, 0), ew);
		if (depth == 0)
			return new_root(t, off, roff, up);
		return inner_insert(t, path, slot, depth - 1,
				    slot[depth - 1] + 1, up, roff);
	}
}

/* ---- append at the right edge ------------------------------------------ */

bool ix_append_fits(const ixt *t, uint64_t n)
{
	/* new arenas are 64 MiB at most (new_arena); past half the most a
	 * tree may have, a rebuild makes it one arena again */
	uint64_t need = ix_build_bytes(t, n) / (64ull << 20) + 2;

	return ix_hdr(t)->narenas + need <= STG_IX_MAX_ARENAS / 2;
}

bool ix_above_last(const ixt *t, const uint8_t *ent)
{
	ixpos c;

	ix_last(t, &c);
	return c.leaf == 0 ||
	       ix_cmp_entry(t, leaf_ent(t, nd(t, c.leaf), c.pos), ent) < 0;
}

int ix_append_right(ixt *t, const uint8_t *ents, uint64_t n)
{
	uint64_t path[MAXH], off, roff, i = 0;
	uint32_t slot[MAXH], cap = t->leaf_cap, ew = t->ew, k;
	stg_ix_hdr *h;
	stg_ix_node *l, *r;
	int depth, rc;

	while (i < n) {
		h = ix_hdr(t);
		if (!h->root) {
			if ((rc = ix_insert(t, ents)) != GPMDB_OK)
				return rc;
			i++;
			continue;
		}
		t->p->ix_epoch++;
		/* the last leaf: the path of the entry (above every other) */
		if ((rc = descend(t, ents + i * ew, path, slot, &depth)))
			return rc;
		off = path[depth];
		if (nd(t, off)->next != 0)
			return pool_err(t->p, GPMDB_CORRUPT,
					"index %s: the last leaf has a next",
					t->name);
		if ((rc = log_state(t)) != GPMDB_OK ||
		    (rc = log_node(t, off)) != GPMDB_OK)
			return rc;
		l = nd(t, off);
		if (l->n < cap) {
			/* room in the last leaf: fill it */
			k = (uint32_t)(n - i < cap - l->n ? n - i : cap - l->n);
			memcpy(leaf_ent(t, l, l->n), ents + i * ew,
			       (size_t)k * ew);
			dirty(t, leaf_ent(t, l, l->n), (size_t)k * ew);
			l->n += k;
			dirty(t, l, NHDR);
		} else {
			/* a new full leaf after it, its first entry the
			 * separator above it (leaves stay full, as ascending
			 * inserts keep them) */
			if ((rc = node_alloc(t, 0, &roff)) != GPMDB_OK)
				return rc;
			k = (uint32_t)(n - i < cap ? n - i : cap);
			l = nd(t, off);
			r = nd(t, roff);
			memcpy(leaf_ent(t, r, 0), ents + i * ew,
			       (size_t)k * ew);
			r->n = k;
			r->prev = off;
			r->next = 0;
			dirty(t, r, NHDR + (size_t)k * ew);
			l->next = roff;
			dirty(t, l, NHDR);
			h = ix_hdr(t);
			h->entries += k;
			persist_state(t);
			stg_crash_point("index.append");
			{
				uint8_t up[STG_IX_MAX_KEY + 8];

				memcpy(up, leaf_ent(t, r, 0), ew);
				rc = depth == 0
					 ? new_root(t, off, roff, up)
					 : inner_insert(
					       t, path, slot, depth - 1,
					       slot[depth - 1] + 1, up, roff);
				if (rc != GPMDB_OK)
					return rc;
			}
			i += k;
			continue;
		}
		h = ix_hdr(t);
		h->entries += k;
		persist_state(t);
		i += k;
	}
	return GPMDB_OK;
}

/* ---- remove ------------------------------------------------------------ */

int ix_remove(ixt *t, const uint8_t *ent)
{
	uint64_t path[MAXH], off;
	uint32_t slot[MAXH], pos, ew = t->ew;
	stg_ix_node *n;
	stg_ix_hdr *h = ix_hdr(t);
	int depth, rc;

	t->p->ix_epoch++;
	if (!h->root)
		return pool_err(t->p, GPMDB_CORRUPT,
				"index %s: no entry for row %llu", t->name,
				(unsigned long long)ix_rowid(t, ent));
	if ((rc = descend(t, ent, path, slot, &depth)) != GPMDB_OK)
		return rc;
	off = path[depth];
	n = nd(t, off);
	pos = leaf_find(t, n, ent, NULL, 0, -1, false);
	if (pos >= n->n || ix_cmp_entry(t, leaf_ent(t, n, pos), ent) != 0)
		return pool_err(t->p, GPMDB_CORRUPT,
				"index %s: no entry for row %llu", t->name,
				(unsigned long long)ix_rowid(t, ent));
	if ((rc = log_state(t)) != GPMDB_OK || (rc = log_node(t, off)))
		return rc;
	h = ix_hdr(t);
	h->entries--;
	persist_state(t);
	n = nd(t, off);
	{
		uint8_t *at = leaf_ent(t, n, pos);
		memmove(at, at + ew, (size_t)(n->n - pos - 1) * ew);
		n->n--;
		if (n->n > pos)
			dirty(t, at, (size_t)(n->n - pos) * ew);
		dirty(t, n, NHDR);
	}
	if (n->n > 0 || depth == 0)
		return GPMDB_OK;
	/* the leaf is empty: unlink it from its neighbours */
	{
		uint64_t pv = n->prev, nx = n->next;
		if (pv) {
			if ((rc = log_node(t, pv)) != GPMDB_OK)
				return rc;
			nd(t, pv)->next = nx;
			dirty(t, nd(t, pv), NHDR);
		}
		if (nx) {
			if ((rc = log_node(t, nx)) != GPMDB_OK)
				return rc;
			nd(t, nx)->prev = pv;
			dirty(t, nd(t, nx), NHDR);
		}
	}
	/* and from its parents, as far as they empty */
	for (int d = depth; d > 0; d--) {
		uint64_t par = path[d - 1];
		stg_ix_node *pn;
		uint32_t i = slot[d - 1];

		if ((rc = node_free(t, path[d])) != GPMDB_OK ||
		    (rc = log_node(t, par)) != GPMDB_OK)
			return rc;
		pn = nd(t, par);
		memmove(inner_slot(t, pn, i), inner_slot(t, pn, i + 1),
			(size_t)(pn->n - i - 1) * (ew + 8));
		pn->n--;
		dirty(t, pn, NHDR + (size_t)pn->n * (ew + 8));
		if (pn->n > 0)
			break;
		if (d - 1 == 0) { /* the root emptied: an empty leaf */
			pn->level = 0;
			pn->prev = pn->next = 0;
			dirty(t, pn, NHDR);
			if ((rc = log_state(t)) != GPMDB_OK)
				return rc;
			h = ix_hdr(t);
			h->height = 1;
			persist_state(t);
			return GPMDB_OK;
		}
	}
	/* a root with one child hands the root down */
	for (;;) {
		h = ix_hdr(t);
		n = nd(t, h->root);
		if (n->level == 0 || n->n != 1)
			break;
		uint64_t old = h->root, child = slot_child(t, n, 0);
		if ((rc = log_state(t)) != GPMDB_OK)
			return rc;
		h = ix_hdr(t);
		h->root = child;
		h->height--;
		persist_state(t);
		if ((rc = node_free(t, old)) != GPMDB_OK)
			return rc;
	}
	return GPMDB_OK;
}

/* ---- bulk build -------------------------------------------------------- */

int ix_free_all(stg_pool *p, uint64_t hoff)
{
	stg_ix_hdr *h = (stg_ix_hdr *)pool_at(p, hoff);
	int rc;

	for (uint64_t i = 0; i < h->narenas && i < STG_IX_MAX_ARENAS; i++)
		if ((rc = alloc_free_deferred(p, h->arenas[i][0],
					      h->arenas[i][1])) != GPMDB_OK)
			return rc;
	return GPMDB_OK;
}

uint64_t ix_build_bytes(const ixt *t, uint64_t n)
{
	uint32_t lf = t->leaf_cap - t->leaf_cap / 10, inf = t->inner_cap;
	uint64_t nodes = 0, cnt;

	if (lf < 2)
		lf = 2;
	cnt = n ? (n + lf - 1) / lf : 1;
	for (int levels = 1;; levels++) {
		nodes += cnt;
		if (cnt == 1 || levels == MAXH)
			break;
		cnt = (cnt + inf - 1) / inf;
	}
	return nodes * NSIZE;
}

static void copy_gen(void *ctx, uint64_t a, uint64_t b, uint8_t *out,
		     uint32_t ew)
{
	memcpy(out, (const uint8_t *)ctx + a * ew, (size_t)(b - a) * ew);
}

int ix_build(ixt *t, const uint8_t *ents, uint64_t n)
{
	return ix_build_gen(t, copy_gen, (void *)ents, n);
}

int ix_build_gen(ixt *t, ix_gen_fn gen, void *ctx, uint64_t n)
{
	uint32_t ew = t->ew;
	/* leaves about 90% full leave room for inserts between keys */
	uint32_t lf = t->leaf_cap - t->leaf_cap / 10, inf = t->inner_cap;
	uint64_t nodes = 0, cnt = n ? (n + lf - 1) / lf : 1, lv[MAXH];
	uint64_t off, ext, first, base;
	int levels = 0, rc;
	stg_ix_hdr *h;

	t->p->ix_epoch++;
	if (lf < 2)
		lf = 2;
	/* nodes per level, bottom up */
	for (;;) {
		lv[levels++] = cnt;
		nodes += cnt;
		if (cnt == 1 || levels == MAXH)
			break;
		cnt = (cnt + inf - 1) / inf;
		if (cnt < 1)
			cnt = 1;
	}
	h = ix_hdr(t);
	/* arenas[0] changes below: its old value comes back on a rollback */
	if ((rc = log_state(t)) != GPMDB_OK ||
	    (rc = mlog_undo(t->p, t->hoff + offsetof(stg_ix_hdr, arenas),
			    16)) != GPMDB_OK ||
	    (rc = ix_free_all(t->p, t->hoff)) != GPMDB_OK ||
	    (rc = alloc_extent(t->p, nodes * NSIZE, &off, &ext)) != GPMDB_OK)
		return rc;
	base = off;
	/* leaves, on all cores */
#pragma omp parallel for schedule(static) if (lv[0] > 64)
	for (uint64_t l = 0; l < lv[0]; l++) {
		stg_ix_node *x = nd(t, base + l * NSIZE);
		uint64_t a = l * n / lv[0], b = (l + 1) * n / lv[0];

		memset(x, 0, NHDR);
		x->magic = STG_IXN_MAGIC;
		x->n = (uint32_t)(b - a);
		x->prev = l ? base + (l - 1) * NSIZE : 0;
		x->next = l + 1 < lv[0] ? base + (l + 1) * NSIZE : 0;
		gen(ctx, a, b, leaf_ent(t, x, 0), ew);
	}
	/* inner levels: each node's slots are its children's first entries */
	first = base;
	for (int L = 1; L < levels; L++) {
		uint64_t lvl = first + lv[L - 1] * NSIZE;
		for (uint64_t k = 0; k < lv[L]; k++) {
			stg_ix_node *x = nd(t, lvl + k * NSIZE);
			uint64_t a = k * lv[L - 1] / lv[L],
				 b = (k + 1) * lv[L - 1] / lv[L];

			memset(x, 0, NHDR);
			x->magic = STG_IXN_MAGIC;
			x->level = (uint16_t)L;
			x->n = (uint32_t)(b - a);
			for (uint64_t j = a; j < b; j++) {
				uint64_t c = first + j * NSIZE;
				stg_ix_node *cn = nd(t, c);
				uint8_t *s =
				    inner_slot(t, x, (uint32_t)(j - a));
				memcpy(s, &c, 8);
				if (cn->level == 0)
					memcpy(s + 8,
					       cn->n ? leaf_ent(t, cn, 0)
						     : (uint8_t *)s + 8,
					       ew);
				else
					memcpy(s + 8, slot_sep(t, cn, 0), ew);
			}
		}
		first = lvl;
	}
	dirty_big(t, nd(t, base), nodes * NSIZE);
	stg_crash_point("index.build");
	h = ix_hdr(t);
	h->root = first; /* the single node of the top level */
	h->height = (uint64_t)levels;
	h->entries = n;
	h->free_head = 0;
	h->arena_off = base;
	h->arena_size = ext;
	h->arena_used = nodes * NSIZE;
	h->arenas[0][0] = base;
	h->arenas[0][1] = ext;
	dirty(t, h->arenas[0], 16);
	h->narenas = 1;
	persist_state(t);
	return GPMDB_OK;
}

/* ---- sort -------------------------------------------------------------- */

typedef struct {
	const ixt *t;
	const ixsrc *src;
	uint32_t w;
} sortctx;

static int rec_cmp(const void *a, const void *b, void *arg)
{
	const sortctx *s = arg;
	const ixt *t = s->t;
	const uint8_t *x = a, *y = b;
	uint64_t ia, ib;
	int d;

	memcpy(&ia, x + t->kw, 8);
	memcpy(&ib, y + t->kw, 8);
	d = ix_cmp(t, x, s->src, ia, y, s->src, ib, t->ncols);
	if (d)
		return d;
	return ia < ib ? -1 : ia > ib;
}

static stg_ix_sort_hook sort_hook;
static uint64_t sort_min = UINT64_MAX;
static __thread stg_ix_hook_stats hstats;

static stg_ix_prewarm_hook prewarm_hook;

void stg_set_index_prewarm_hook(stg_ix_prewarm_hook fn)
{
	prewarm_hook = fn;
}

void ix_prewarm(const ixt *t, uint64_t n)
{
	if (prewarm_hook && sort_hook && n >= sort_min)
		prewarm_hook(n, t->ew);
}

void stg_set_index_sort_hook(stg_ix_sort_hook fn, uint64_t min_rows)
{
	sort_hook = fn;
	sort_min = fn ? min_rows : UINT64_MAX;
}

bool ix_sort_gpu(uint64_t n)
{
	return sort_hook && n >= sort_min;
}

stg_ix_hook_stats *ix_hook_stats(void)
{
	return &hstats;
}

/* Merges sorted runs a and b (na, nb records) into out. */
static void merge_runs(const sortctx *s, const uint8_t *a, uint64_t na,
		       const uint8_t *b, uint64_t nb, uint8_t *out)
{
	uint32_t w = s->w;

	while (na && nb) {
		if (rec_cmp(a, b, (void *)s) <= 0) {
			memcpy(out, a, w);
			a += w;
			na--;
		} else {
			memcpy(out, b, w);
			b += w;
			nb--;
		}
		out += w;
	}
	memcpy(out, a, (size_t)na * w);
	out += (size_t)na * w;
	memcpy(out, b, (size_t)nb * w);
}

/* After a byte sort: runs whose keys are equal bytes but have TEXT
 * longer than the prefix are ordered again by the full strings. */
static void fix_ties(const sortctx *s, uint8_t *recs, uint64_t n)
{
	const ixt *t = s->t;
	uint32_t w = s->w;
	uint64_t i = 0;

	if (!t->has_text)
		return;
	while (i < n) {
		uint64_t j = i + 1;
		while (j < n && memcmp(recs + i * w, recs + j * w, t->kw) == 0)
			j++;
		if (j - i > 1)
			qsort_r(recs + i * w, j - i, w, rec_cmp, (void *)s);
		i = j;
	}
}

uint64_t ix_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

static int sort_cpu(const ixt *t, uint8_t *recs, uint64_t n, const ixsrc *src,
		    int64_t *dup);

int ix_sort(const ixt *t, uint8_t *recs, uint64_t n, const ixsrc *src)
{
	return ix_sort_dup(t, recs, n, src, NULL);
}

int ix_sort_dup(const ixt *t, uint8_t *recs, uint64_t n, const ixsrc *src,
		int64_t *dup)
{
	uint64_t t0 = ix_now_us();
	int rc;

	if (dup)
		*dup = -2;
	if (n < 2)
		return GPMDB_OK;
	hstats.sort_gpu = false;
	hstats.sort_rows = n;
	hstats.sort_why[0] = 0;
	hstats.sort_new = true;
	rc = sort_cpu(t, recs, n, src, dup);
	hstats.sort_us = ix_now_us() - t0;
	return rc;
}

/*
 * CPU sort of fixed-width records by memcmp of their first kw bytes, then
 * row id (rec_cmp's order): a stable LSD radix sort of (64-bit key, index)
 * pairs, the key packing the first eight key bytes that differ anywhere in
 * the batch (constant bytes do not order anything), digits that are the
 * same everywhere skipped; the records gathered into that order; then runs
 * of equal packed keys that may still be out of rec_cmp's order (more than
 * eight varying bytes, TEXT ties, row ids not ascending) sorted by
 * rec_cmp.  On 5M BIGINT keys it replaced a merge of qsort runs that took
 * about 0.4 s a sort on two cores.
 */
typedef struct {
	uint64_t k;
	uint64_t i;
} rxpair;

static int sort_radix(const sortctx *s, uint8_t *recs, uint64_t n)
{
	const ixt *t = s->t;
	uint32_t w = s->w, kw = t->kw;
	uint8_t vary[64] = {0};
	int pos[8], npos = 0, nvary = 0;
	rxpair *a = NULL, *b = NULL;
	uint8_t *tmp = NULL;
	int nt = omp_get_max_threads() > 0 ? omp_get_max_threads() : 1;
	uint64_t(*hist)[256] = NULL;

	if (kw > 64)
		return GPMDB_UNSUPPORTED;
		/* which key bytes differ from the first record's somewhere */
#pragma omp parallel
	{
		uint8_t v[64] = {0};
#pragma omp for schedule(static)
		for (uint64_t i = 1; i < n; i++)
			for (uint32_t j = 0; j < kw; j++)
				v[j] |= recs[i * w + j] ^ recs[j];
#pragma omp critical(ix_radix_vary)
		for (uint32_t j = 0; j < kw; j++)
			vary[j] |= v[j];
	}
	for (uint32_t j = 0; j < kw; j++)
		if (vary[j]) {
			if (npos < 8)
				pos[npos++] = (int)j;
			nvary++;
		}
	a = malloc((size_t)n * sizeof(*a));
	b = malloc((size_t)n * sizeof(*b));
	tmp = malloc((size_t)n * w);
	hist = calloc((size_t)nt, sizeof(*hist));
	if (!a || !b || !tmp || !hist) {
		free(a);
		free(b);
		free(tmp);
		free(hist);
		return pool_err(t->p, GPMDB_NOMEM, "out of memory");
	}
#pragma omp parallel for schedule(static)
	for (uint64_t i = 0; i < n; i++) {
		uint64_t k = 0;
		for (int q = 0; q < 8; q++)
			k = (k << 8) | (q < npos ? recs[i * w + pos[q]] : 0);
		a[i].k = k;
		a[i].i = i;
	}
	/* LSD passes over the bytes of k that vary */
	for (int d = 0; d < 8; d++) {
		int sh = 8 * d;

		if (8 - 1 - d >= npos)
			continue; /* a padding byte: zero everywhere */
		if (!vary[pos[8 - 1 - d]])
			continue;
		memset(hist, 0, (size_t)nt * sizeof(*hist));
#pragma omp parallel num_threads(nt)
		{
			int me = omp_get_thread_num(),
			    all = omp_get_num_threads();
			uint64_t lo = n * (uint64_t)me / (uint64_t)all,
				 hi = n * (uint64_t)(me + 1) / (uint64_t)all;
			for (uint64_t i = lo; i < hi; i++)
				hist[me][(a[i].k >> sh) & 255]++;
#pragma omp barrier
#pragma omp single
			{
				uint64_t sum = 0;
				for (int v = 0; v < 256; v++)
					for (int th = 0; th < all; th++) {
						uint64_t c = hist[th][v];
						hist[th][v] = sum;
						sum += c;
					}
			}
			for (uint64_t i = lo; i < hi; i++)
				b[hist[me][(a[i].k >> sh) & 255]++] = a[i];
		}
		rxpair *x = a;
		a = b;
		b = x;
	}
	free(hist);
#pragma omp parallel for schedule(static)
	for (uint64_t i = 0; i < n; i++)
		memcpy(tmp + i * w, recs + a[i].i * w, w);
	memcpy(recs, tmp, (size_t)n * w);
	/* runs of equal packed keys: rec_cmp's order where it may differ */
	{
		bool all_in = nvary <= 8 && !t->has_text;
		uint64_t i = 0;

		while (i < n) {
			uint64_t j = i + 1;
			while (j < n && a[j].k == a[i].k)
				j++;
			if (j - i > 1) {
				bool ok = all_in;
				for (uint64_t q = i + 1; ok && q < j; q++)
					ok = ix_rowid(t, recs + (q - 1) * w) <
					     ix_rowid(t, recs + q * w);
				if (!ok)
					qsort_r(recs + i * w, j - i, w, rec_cmp,
						(void *)s);
			}
			i = j;
		}
	}
	free(a);
	free(b);
	free(tmp);
	return GPMDB_OK;
}

/* The hook, else the CPU (the name says the fallback, not the rule). */
static int sort_cpu(const ixt *t, uint8_t *recs, uint64_t n, const ixsrc *src,
		    int64_t *dup)
{
	sortctx s = {t, src, t->ew};
	int nt = 1;
	uint8_t *tmp;

	if (sort_hook && n >= sort_min) {
		int64_t d = -2;

		if (sort_hook(recs, n, t->ew, t->kw, t->has_text ? NULL : &d,
			      hstats.sort_why,
			      sizeof(hstats.sort_why)) == GPMDB_OK) {
			hstats.sort_gpu = true;
			fix_ties(&s, recs, n);
			if (dup)
				*dup = d;
			return GPMDB_OK;
		}
	} else if (sort_hook) {
		snprintf(hstats.sort_why, sizeof(hstats.sort_why),
			 "%llu rows, under the GPU's %llu",
			 (unsigned long long)n, (unsigned long long)sort_min);
	}
	if (n < 65536) {
		qsort_r(recs, n, t->ew, rec_cmp, &s);
		return GPMDB_OK;
	}
	if (n < UINT32_MAX && !getenv("GPMDB_IX_MERGESORT")) {
		int rc = sort_radix(&s, recs, n);
		if (rc != GPMDB_UNSUPPORTED)
			return rc;
	}
	/* runs sorted in parallel, then merged pairwise in parallel */
	nt = omp_get_max_threads();
	if (nt < 1)
		nt = 1;
	if (!(tmp = malloc((size_t)n * t->ew)))
		return pool_err(t->p, GPMDB_NOMEM, "out of memory");
	{
		int runs = nt * 2;
		uint64_t *bd = malloc(sizeof(uint64_t) * (size_t)(runs + 1));
		uint8_t *src_b = recs, *dst_b = tmp;

		if (!bd) {
			free(tmp);
			return pool_err(t->p, GPMDB_NOMEM, "out of memory");
		}
		for (int r = 0; r <= runs; r++)
			bd[r] = (uint64_t)r * n / (uint64_t)runs;
#pragma omp parallel for schedule(dynamic, 1)
		for (int r = 0; r < runs; r++)
			qsort_r(recs + bd[r] * t->ew, bd[r + 1] - bd[r], t->ew,
				rec_cmp, &s);
		for (int width = 1; width < runs; width *= 2) {
#pragma omp parallel for schedule(dynamic, 1)
			for (int r = 0; r < runs; r += 2 * width) {
				int m = r + width < runs ? r + width : runs;
				int e =
				    r + 2 * width < runs ? r + 2 * width : runs;
				merge_runs(&s, src_b + bd[r] * t->ew,
					   bd[m] - bd[r], src_b + bd[m] * t->ew,
					   bd[e] - bd[m],
					   dst_b + bd[r] * t->ew);
			}
			uint8_t *x = src_b;
			src_b = dst_b;
			dst_b = x;
		}
		if (src_b != recs)
			memcpy(recs, src_b, (size_t)n * t->ew);
		free(bd);
	}
	free(tmp);
	return GPMDB_OK;
}

/* ---- verification ------------------------------------------------------ */

typedef struct {
	const ixt *t;
	void (*rep)(void *, const char *);
	void *ctx;
	int nprob;
	uint64_t leaves_seen;
} vctx;

static void vrep(vctx *v, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void vrep(vctx *v, const char *fmt, ...)
{
	char line[400];
	va_list ap;

	if (++v->nprob > 20)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	v->rep(v->ctx, line);
}

/* Checks the subtree at off (level lvl): node shape, separators as
 * bounds (lo: every entry >= lo; hi: every entry < hi). */
static void vnode(vctx *v, uint64_t off, int lvl, const uint8_t *lo,
		  const uint8_t *hi, int depth)
{
	const ixt *t = v->t;
	stg_ix_node *n;

	if (v->nprob > 20)
		return;
	if (depth > MAXH || !pool_range_ok(t->p, off, NSIZE) ||
	    (n = nd(t, off))->magic != STG_IXN_MAGIC) {
		vrep(v, "index %s: node at 0x%llx is damaged", t->name,
		     (unsigned long long)off);
		return;
	}
	if (n->level != lvl) {
		vrep(v, "index %s: node at 0x%llx has level %u, expected %d",
		     t->name, (unsigned long long)off, n->level, lvl);
		return;
	}
	if (lvl == 0) {
		if (n->n > t->leaf_cap) {
			vrep(v, "index %s: leaf at 0x%llx holds %u entries",
			     t->name, (unsigned long long)off, n->n);
			return;
		}
		for (uint32_t i = 0; i < n->n; i++) {
			const uint8_t *e = leaf_ent(t, n, i);
			if ((i &&
			     ix_cmp_entry(t, leaf_ent(t, n, i - 1), e) >= 0) ||
			    (lo && ix_cmp_entry(t, e, lo) < 0) ||
			    (hi && ix_cmp_entry(t, e, hi) >= 0)) {
				vrep(v,
				     "index %s: entry %u of leaf 0x%llx is "
				     "out of order",
				     t->name, i, (unsigned long long)off);
				return;
			}
		}
		v->leaves_seen++;
		return;
	}
	if (n->n == 0 || n->n > t->inner_cap) {
		vrep(v, "index %s: inner node at 0x%llx holds %u slots",
		     t->name, (unsigned long long)off, n->n);
		return;
	}
	for (uint32_t i = 0; i < n->n; i++) {
		const uint8_t *s = i ? slot_sep(t, n, i) : lo;
		const uint8_t *e = i + 1 < n->n ? slot_sep(t, n, i + 1) : hi;
		if (i && e && ix_cmp_entry(t, s, e) >= 0) {
			vrep(v,
			     "index %s: separators of node 0x%llx out of "
			     "order",
			     t->name, (unsigned long long)off);
			return;
		}
		vnode(v, slot_child(t, n, i), lvl - 1, s, e, depth + 1);
	}
}

static int row_key_cmp(const void *a, const void *b, void *arg)
{
	return ix_cmp_entry(arg, a, b);
}

void ix_verify(stg_pool *p, uint64_t hoff, const char *name,
	       void (*rep)(void *ctx, const char *msg), void *ctx)
{
	vctx v = {0};
	ixt t;
	stg_ix_hdr *h;
	stg_cat_entry *e;
	uint8_t *ents = NULL, *rows = NULL;
	uint64_t n = 0, nr = 0, live;

	if (ix_open(p, hoff, 0, 0, name, &t) != GPMDB_OK) {
		rep(ctx, stg_errmsg(p));
		return;
	}
	v.t = &t;
	v.rep = rep;
	v.ctx = ctx;
	h = ix_hdr(&t);
	if (!h->root) {
		if (h->entries)
			vrep(&v, "index %s: no root but %llu entries", name,
			     (unsigned long long)h->entries);
	} else {
		vnode(&v, h->root, (int)h->height - 1, NULL, NULL, 0);
	}
	if (v.nprob)
		return;
	if (ix_collect(&t, &ents, &n) != GPMDB_OK) {
		vrep(&v, "%s", stg_errmsg(p));
		return;
	}
	if (n != h->entries)
		vrep(&v, "index %s: %llu entries in its leaves, %llu counted",
		     name, (unsigned long long)n,
		     (unsigned long long)h->entries);
	/* the table's live rows, each once */
	e = cat_entry(p, t.tcat);
	live = e->row_count >= e->deleted_count
		   ? e->row_count - e->deleted_count
		   : 0;
	rows = malloc((size_t)(live + 1) * t.ew);
	if (!rows) {
		vrep(&v, "index %s: out of memory for the check", name);
		free(ents);
		return;
	}
	for (uint64_t r = 0; r < e->row_count && nr <= live; r++) {
		tab_cellv c;
		if (tab_cell(p, t.tcat, t.cols[0], r, &c) != GPMDB_OK) {
			vrep(&v, "%s", stg_errmsg(p));
			break;
		}
		if (c.deleted)
			continue;
		if (nr == live) {
			nr++;
			break;
		}
		if (ix_enc_row(&t, r, rows + nr * t.ew) != GPMDB_OK)
			break;
		memcpy(rows + nr * t.ew + t.kw, &r, 8);
		nr++;
	}
	if (nr != n) {
		vrep(&v,
		     "index %s: %llu entries for %llu live rows of table %s",
		     name, (unsigned long long)n, (unsigned long long)nr,
		     e->name);
	} else {
		qsort_r(rows, nr, t.ew, row_key_cmp, &t);
		for (uint64_t i = 0; i < n; i++)
			if (memcmp(rows + i * t.ew, ents + i * t.ew, t.ew)) {
				vrep(&v,
				     "index %s: entry %llu (row %llu) does "
				     "not match the table",
				     name, (unsigned long long)i,
				     (unsigned long long)ix_rowid(
					 &t, ents + i * t.ew));
				break;
			}
		if (t.unique)
			for (uint64_t i = 1; i < n; i++)
				if (!ix_key_has_null(&t, ents + i * t.ew) &&
				    ix_cmp(&t, ents + (i - 1) * t.ew, NULL,
					   ix_rowid(&t, ents + (i - 1) * t.ew),
					   ents + i * t.ew, NULL,
					   ix_rowid(&t, ents + i * t.ew),
					   t.ncols) == 0) {
					vrep(&v,
					     "index %s: unique key repeated "
					     "(rows %llu and %llu)",
					     name,
					     (unsigned long long)ix_rowid(
						 &t, ents + (i - 1) * t.ew),
					     (unsigned long long)ix_rowid(
						 &t, ents + i * t.ew));
					break;
				}
	}
	free(rows);
	free(ents);
}
