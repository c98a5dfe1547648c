/*
 * btree.h - the index B+-tree's private interface (btree.c), used by
 * index.c (catalog, maintenance by the write paths, the public API) and
 * check.c.
 *
 * An entry is the encoded key (kw bytes, memcmp order) followed by the
 * row id (8 bytes, little-endian): entries are unique, so a non-unique
 * index needs no duplicate chains and deleting a row's entry finds exactly
 * it.  Each column's key segment is fixed-width: a tag byte (0 NULL, 1 a
 * value) and 8 big-endian order-preserving bytes for numbers; for TEXT a
 * tag, the first STG_IX_TEXT_PREFIX bytes zero-padded and a length byte
 * (the length, or PREFIX + 1 when longer).  Two TEXT segments that are
 * equal and both longer than the prefix are ordered by the full strings,
 * read from the table through the row id ("ties"); every other segment
 * compares exactly with memcmp.
 */
#ifndef GPMDB_BTREE_H
#define GPMDB_BTREE_H

#include <string.h>

#include "internal.h"

/* An index opened for work: the header's constants and the offsets the
 * tree needs.  Pointers into the pool are recomputed after anything that
 * allocates. */
typedef struct {
	stg_pool *p;
	uint64_t hoff; /* stg_ix_hdr */
	uint64_t tcat; /* the table's catalog entry */
	uint32_t tid, index_id;
	int ncols;
	uint32_t cols[32];
	uint8_t types[32];
	uint16_t soff[32]; /* segment offsets in the key */
	uint8_t segw[32];
	uint32_t kw, ew;
	bool unique, has_text;
	bool sorted_all; /* index.c: the last unique check sorted all keys */
	uint32_t leaf_cap, inner_cap;
	char name[STG_NAME_MAX];
} ixt;

/* Where the full TEXT of a key comes from when two prefixes tie. */
typedef struct {
	int kind; /* IXS_TABLE: id is a row id; IXS_BATCH: a batch row;
		     IXS_VALS: vals */
	const stg_col_batch *batch; /* one per key column (IXS_BATCH);
				       values NULL: the table's row */
	const uint64_t *rowids;	    /* IXS_BATCH: each batch row's row id */
	const stg_key_val *vals;    /* one per key column (IXS_VALS) */
} ixsrc;
enum { IXS_TABLE = 0, IXS_BATCH = 1, IXS_VALS = 2 };

static inline stg_ix_hdr *ix_hdr(const ixt *t)
{
	return (stg_ix_hdr *)pool_at(t->p, t->hoff);
}

static inline uint64_t ix_rowid(const ixt *t, const uint8_t *e)
{
	uint64_t r;

	memcpy(&r, e + t->kw, 8);
	return r;
}

/* Fills t from the header at hoff (GPMDB_CORRUPT when it is damaged);
 * tcat is the table's catalog entry when the caller knows it, else 0. */
int ix_open(stg_pool *p, uint64_t hoff, uint64_t tcat, uint32_t index_id,
	    const char *name, ixt *t);
/* Segment widths, kw and ew for ncols columns of these types; GPMDB_RANGE
 * (with a message) when the key is wider than STG_IX_MAX_KEY. */
int ix_geometry(stg_pool *p, const uint8_t *types, int ncols, uint8_t *segw,
		uint32_t *kw);

/* Key encoding: one column's segment. */
void ix_enc_int(uint8_t *o, int64_t v);
void ix_enc_real(uint8_t *o, double d);
void ix_enc_text(uint8_t *o, const char *s, uint32_t len);
/* One column's segment from a stored value (the column's array element,
 * or the text for TEXT). */
void ix_enc_stored(uint8_t *o, stg_type ty, const void *v, const char *s,
		   uint32_t len);
/* The key of values vals[0..n) (a prefix of the key columns). */
void ix_enc_vals(const ixt *t, const stg_key_val *vals, int n, uint8_t *out);
/* The key of row i of a batch (one stg_col_batch per table column, as
 * stg_append/stg_update take them); cols_of[k] is the batch index of key
 * column k, or -1 to read the table's row rowid instead. */
int ix_enc_batch(const ixt *t, const stg_col_batch *b, const int *cols_of,
		 uint64_t i, uint64_t rowid, uint8_t *out);
/* The key of a table row (its current values). */
int ix_enc_row(const ixt *t, uint64_t rowid, uint8_t *out);
/* True when the key has a NULL in one of its columns (unique keys with a
 * NULL never conflict). */
bool ix_key_has_null(const ixt *t, const uint8_t *k);

/* Compares the first npre columns of two keys (TEXT ties resolved from
 * their sources: ida/idb are row ids or batch rows). */
int ix_cmp(const ixt *t, const uint8_t *a, const ixsrc *sa, uint64_t ida,
	   const uint8_t *b, const ixsrc *sb, uint64_t idb, int npre);
/* Whole entries: the key, then the row id. */
int ix_cmp_entry(const ixt *t, const uint8_t *a, const uint8_t *b);

/* Tree changes (undo-logged; the caller is inside a transaction). */
int ix_insert(ixt *t, const uint8_t *entry);
int ix_remove(ixt *t, const uint8_t *entry);
/* Whether n entries can go in by ix_append_right and leave the tree
 * within half of STG_IX_MAX_ARENAS (else a rebuild: one arena). */
bool ix_append_fits(const ixt *t, uint64_t n);
/* Whether ent sorts after every entry of the tree (an empty one too). */
bool ix_above_last(const ixt *t, const uint8_t *ent);
/* Adds n sorted entries that all sort after the tree's last: the last
 * leaf filled, then full new leaves, a separator each (an append's time
 * and space do not grow with the tree, where a rebuild's do). */
int ix_append_right(ixt *t, const uint8_t *ents, uint64_t n);
/* Replaces the tree by one built from n sorted entries (ew bytes each);
 * the old nodes are freed at commit. */
int ix_build(ixt *t, const uint8_t *ents, uint64_t n);
/* ix_build of entries that gen writes: entries [a, b) of the n, in
 * order, to out (ew bytes each; called on every core, a leaf a call). */
typedef void (*ix_gen_fn)(void *ctx, uint64_t a, uint64_t b, uint8_t *out,
			  uint32_t ew);
int ix_build_gen(ixt *t, ix_gen_fn gen, void *ctx, uint64_t n);
/* The bytes of the arena ix_build allocates for n entries. */
uint64_t ix_build_bytes(const ixt *t, uint64_t n);
/* Frees every extent of the index (deferred to commit). */
int ix_free_all(stg_pool *p, uint64_t hoff);

/* Positions: leaf offset and entry index. */
typedef struct {
	uint64_t leaf;
	uint32_t pos;
} ixpos;
/* The first entry whose first npre columns are >= key (strict: > key);
 * leaf 0 when there is none.  kid: the key's row in src (TEXT ties). */
int ix_seek(const ixt *t, const uint8_t *key, const ixsrc *src, uint64_t kid,
	    int npre, bool strict, ixpos *out);
/* The first / last entry of the tree. */
void ix_first(const ixt *t, ixpos *out);
void ix_last(const ixt *t, ixpos *out);
/* Steps forward / backward; leaf 0 past the end. */
void ix_next(const ixt *t, ixpos *c);
void ix_prev(const ixt *t, ixpos *c);
static inline const uint8_t *ix_at(const ixt *t, const ixpos *c)
{
	return (const uint8_t *)pool_at(t->p, c->leaf) + STG_IX_NODE_HDR +
	       (size_t)c->pos * t->ew;
}
/* Estimated rank (0..1) of the first entry >= key (strict: > key). */
double ix_rank(const ixt *t, const uint8_t *key, const ixsrc *src, int npre,
	       bool strict);
/* Every entry in order into a malloc'd array (*n of them). */
int ix_collect(const ixt *t, uint8_t **out, uint64_t *n);
/* The same into out, which has room for cap entries. */
int ix_copy_all(const ixt *t, uint8_t *out, uint64_t cap, uint64_t *n);

/* Sorts n records of width bytes: memcmp over the first kw bytes, then
 * the little-endian uint64 at kw (row id or batch row); ties of TEXT
 * prefixes resolved from src.  May use the sort hook. */
int ix_sort(const ixt *t, uint8_t *recs, uint64_t n, const ixsrc *src);
/* Whether ix_sort hands n records to the GPU's sort hook. */
bool ix_sort_gpu(uint64_t n);
/* ix_sort, and *dup as the sort hook's (storage.h stg_ix_sort_hook): the
 * lowest row id of a record whose key bytes equal its predecessor's, -1
 * none, -2 unknown (the CPU sorted, or TEXT keys, whose prefixes may be
 * equal while the strings differ). */
int ix_sort_dup(const ixt *t, uint8_t *recs, uint64_t n, const ixsrc *src,
		int64_t *dup);
/* A sort of n records of t is coming (stg_set_index_prewarm_hook). */
void ix_prewarm(const ixt *t, uint64_t n);
/* Microseconds of a monotonic clock. */
uint64_t ix_now_us(void);
/* This thread's record of the last sort and probe (stg_index_hook_stats). */
stg_ix_hook_stats *ix_hook_stats(void);

/* Structure check for stg_check: order, links, separators, counts; the
 * entries against the table's live rows.  rep is called per problem;
 * claim for each extent the index holds. */
void ix_verify(stg_pool *p, uint64_t hoff, const char *name,
	       void (*rep)(void *ctx, const char *msg), void *ctx);

#endif /* GPMDB_BTREE_H */
