/*
 * encode_text.c - compressed TEXT columns of encoded tablets (layout.h
 * "Encodings" STG_ENC_ZTEXT, docs/ARCHITECTURE.md "Encodings"): the
 * strings of a tablet's column in zstd blocks of at most STG_ZT_BLOCK
 * bytes that never cross STG_ZT_GROUP rows, each row's length bit-packed
 * (no per-row reference), the blocks' directory.
 *
 * Readers: a vector decompresses the blocks of its rows into the
 * caller's buffer (stg_tablet_text); a whole tablet column goes into the
 * copy of the heap stg_tablet_decode_all makes (zt_decode_all), so that
 * the stg_strref's of every column of the view resolve against one heap;
 * a point read (tab_cell) keeps the last blocks it decompressed per
 * thread.  A block that does not decompress to its directory's bytes
 * (zstd's content checksum, size) is GPMDB_CORRUPT, never misread.
 */
#include <stdlib.h>
#include <string.h>

#include <zstd.h>

#include "internal.h"

/* zstd's level for VACUUM: 3 (its default) leaves TPC-H's comments
 * 6% larger than level 1 and 11% larger than 9, at 0.8x level 1's speed
 * and 8x level 9's (tpc/results/2026-11-27-devbox-2core-ztext.md). */
#define ZT_LEVEL 3

static const stg_zt_blk *zt_dir(const stg_colenc *e)
{
	return (const stg_zt_blk *)e->blk;
}

/* The length of row i (lengths fit 32 bits: one unaligned load). */
static inline uint32_t zt_len(const stg_colenc *e, uint64_t i)
{
	const uint8_t *by = (const uint8_t *)e->words;
	uint64_t pos = i * e->bits, v;

	if (e->bits == 0)
		return (uint32_t)e->base;
	memcpy(&v, by + (pos >> 3), 8);
	return (uint32_t)(e->base +
			  ((v >> (pos & 7)) & ((1ull << e->bits) - 1)));
}

/* The block holding row r (its first row <= r < the next's). */
static uint64_t zt_block_of(const stg_colenc *e, uint64_t r)
{
	const stg_zt_blk *d = zt_dir(e);
	uint64_t lo = 0, hi = e->dict_n; /* d[lo].row0 <= r < d[hi].row0 */

	while (hi - lo > 1) {
		uint64_t m = (lo + hi) / 2;

		if (d[m].row0 <= r)
			lo = m;
		else
			hi = m;
	}
	return lo;
}

static __thread ZSTD_DCtx *zt_dctx;

/* Block b decompressed into dst (its raw bytes). */
static int zt_unpack(const stg_colenc *e, uint64_t b, char *dst)
{
	const stg_zt_blk *d = zt_dir(e);
	size_t got;

	if (b >= e->dict_n || d[b + 1].off < d[b].off ||
	    d[b + 1].off > d[e->dict_n].off)
		return GPMDB_CORRUPT;
	if (d[b].raw == 0)
		return GPMDB_OK;
	if (zt_dctx == NULL && (zt_dctx = ZSTD_createDCtx()) == NULL)
		return GPMDB_NOMEM;
	got = ZSTD_decompressDCtx(zt_dctx, dst, d[b].raw, e->z + d[b].off,
				  d[b + 1].off - d[b].off);
	if (ZSTD_isError(got) || got != d[b].raw)
		return GPMDB_CORRUPT;
	return GPMDB_OK;
}

/* Raw bytes of the blocks holding rows [from, from + n). */
static uint64_t zt_room(const stg_colenc *e, uint64_t from, uint64_t n)
{
	uint64_t b0, b1, s = 0;

	if (n == 0 || e->dict_n == 0)
		return 0;
	b0 = zt_block_of(e, from);
	b1 = zt_block_of(e, from + n - 1);
	for (uint64_t b = b0; b <= b1; b++)
		s += zt_dir(e)[b].raw;
	return s;
}

/* Rows [from, from + n) as stg_strref relative to dst - base: their
 * blocks decompressed into dst (zt_room bytes).  NULL and empty rows
 * get {0, 0}. */
static int zt_decode_in(const stg_colenc *e, uint64_t from, uint64_t n,
			stg_strref *out, char *dst, uint64_t base, bool have);

static int zt_decode(const stg_colenc *e, uint64_t from, uint64_t n,
		     stg_strref *out, char *dst, uint64_t base)
{
	return zt_decode_in(e, from, n, out, dst, base, false);
}

/* zt_decode; have: dst holds the (one) block already */
static int zt_decode_in(const stg_colenc *e, uint64_t from, uint64_t n,
			stg_strref *out, char *dst, uint64_t base, bool have)
{
	const stg_zt_blk *d = zt_dir(e);
	uint64_t b, r, end = from + n, at = base;
	int rc;

	if (n == 0)
		return GPMDB_OK;
	if (e->dict_n == 0)
		return GPMDB_CORRUPT;
	for (b = zt_block_of(e, from); b < e->dict_n && d[b].row0 < end; b++) {
		uint64_t r1 = d[b + 1].row0, pos = 0;

		if (r1 <= d[b].row0 ||
		    (!have && (rc = zt_unpack(e, b, dst)) != GPMDB_OK))
			return r1 <= d[b].row0 ? GPMDB_CORRUPT : rc;
		for (r = d[b].row0; r < r1; r++) {
			uint32_t len = zt_len(e, r);

			if (r >= from && r < end)
				out[r - from] =
				    len ? (stg_strref){(uint32_t)(at + pos),
						       len}
					: (stg_strref){0, 0};
			pos += len;
			if (pos > d[b].raw)
				return GPMDB_CORRUPT;
		}
		if (pos != d[b].raw)
			return GPMDB_CORRUPT;
		at += pos;
		dst += pos;
	}
	return GPMDB_OK;
}

/* ---- Blocks for readers that take them in parallel (the GPU cache) -- */

void stg_zt_block(const stg_colenc *e, uint64_t b, uint64_t *row0,
		  uint64_t *row1, uint32_t *raw)
{
	const stg_zt_blk *d = zt_dir(e);

	*row0 = d[b].row0;
	*row1 = d[b + 1].row0;
	*raw = d[b].raw;
}

uint32_t stg_zt_len(const stg_colenc *e, uint64_t r)
{
	return zt_len(e, r);
}

int stg_zt_unpack(const stg_colenc *e, uint64_t b, char *dst)
{
	return zt_unpack(e, b, dst);
}

int stg_tablet_text(const stg_tablet_view *v, int c, uint64_t from, uint64_t n,
		    stg_strref *out, const char **heap, stg_textbuf *tb)
{
	const stg_colenc *e = v->enc ? &v->enc[c] : NULL;
	const stg_zt_blk *d;
	uint64_t room, b;
	int rc;

	*heap = v->heap;
	if (v->data[c]) {
		memcpy(out, (const stg_strref *)v->data[c] + from,
		       n * sizeof(*out));
		return GPMDB_OK;
	}
	if (e->kind != STG_ENC_ZTEXT) {
		stg_colenc_decode(e, sizeof(stg_strref), from, n, out);
		return GPMDB_OK;
	}
	d = zt_dir(e);
	if (n == 0)
		return GPMDB_OK;
	/* rows of the one block tb holds (point reads one after another,
	 * an index scan's rows): no decompression */
	b = zt_block_of(e, from);
	if (b == zt_block_of(e, from + n - 1) && tb->frame &&
	    tb->frame == e->z + d[b].off &&
	    tb->zlen == d[b + 1].off - d[b].off) {
		*heap = tb->buf;
		return zt_decode_in(e, from, n, out, tb->buf, 0, true);
	}
	room = zt_room(e, from, n);
	if (tb->cap < room + 8) {
		char *nb = realloc(tb->buf, room + 8);

		if (nb == NULL)
			return GPMDB_NOMEM;
		tb->buf = nb;
		tb->cap = room + 8;
	}
	*heap = tb->buf;
	tb->frame = NULL;
	rc = zt_decode(e, from, n, out, tb->buf, 0);
	if (rc == GPMDB_OK && b == zt_block_of(e, from + n - 1)) {
		tb->frame = e->z + d[b].off;
		tb->zlen = d[b + 1].off - d[b].off;
	}
	return rc;
}

void stg_textbuf_free(stg_textbuf *tb)
{
	free(tb->buf);
	memset(tb, 0, sizeof(*tb));
}

int zt_decode_all(stg_tablet_view *v, const uint8_t *want, stg_plainbuf *pb)
{
	uint64_t used = 0, total, at;
	int c, rc;

	for (c = 0; c < v->ncols; c++)
		if (!v->data[c] && v->enc[c].kind == STG_ENC_ZTEXT)
			used = v->enc[c].heap_used;
	total = used;
	for (c = 0; c < v->ncols; c++)
		if (!v->data[c] && v->enc[c].kind == STG_ENC_ZTEXT &&
		    (!want || want[c]))
			total += zt_room(&v->enc[c], 0, v->nrows);
	if (total == used)
		return GPMDB_OK;
	if (total > UINT32_MAX)
		return GPMDB_TOOBIG;
	if ((pb->heap = malloc(total + 8)) == NULL)
		return GPMDB_NOMEM;
	if (used)
		memcpy(pb->heap, v->heap, used);
	at = used;
	for (c = 0; c < v->ncols; c++) {
		const stg_colenc *e = &v->enc[c];

		if (v->data[c] || e->kind != STG_ENC_ZTEXT ||
		    (want && !want[c]))
			continue;
		pb->arr[c] = malloc(sizeof(stg_strref) * v->nrows + 8);
		if (pb->arr[c] == NULL)
			return GPMDB_NOMEM;
		rc = zt_decode(e, 0, v->nrows, pb->arr[c], pb->heap + at, at);
		if (rc != GPMDB_OK)
			return rc;
		at += zt_room(e, 0, v->nrows);
		pb->data[c] = pb->arr[c];
	}
	v->heap = pb->heap;
	return GPMDB_OK;
}

/* ---- Point reads: the last blocks decompressed, per thread ---------- */

#define ZT_CACHE 4

static __thread struct zt_cached {
	const uint8_t *frame; /* its frame: the key, with */
	uint64_t zlen;	      /* its bytes, and */
	uint32_t sum;	      /* its last 4 (zstd's content checksum) */
	uint32_t raw;
	char *buf;
	uint64_t cap;
	uint64_t used; /* LRU stamp */
} zt_cache[ZT_CACHE];
static __thread uint64_t zt_clock;

/* Block b's bytes, from the cache or decompressed into it. */
static int zt_block_bytes(const stg_colenc *e, uint64_t b, const char **out)
{
	const stg_zt_blk *d = zt_dir(e);
	const uint8_t *f = e->z + d[b].off;
	uint64_t zlen = d[b + 1].off - d[b].off;
	uint32_t sum = 0;
	struct zt_cached *v = &zt_cache[0];
	int rc;

	if (d[b + 1].off < d[b].off)
		return GPMDB_CORRUPT;
	if (zlen >= 4)
		memcpy(&sum, f + zlen - 4, 4);
	for (int i = 0; i < ZT_CACHE; i++) {
		struct zt_cached *x = &zt_cache[i];

		if (x->frame == f && x->zlen == zlen && x->sum == sum &&
		    x->raw == d[b].raw && x->buf) {
			x->used = ++zt_clock;
			*out = x->buf;
			return GPMDB_OK;
		}
		if (x->used < v->used)
			v = x;
	}
	if (v->cap < (uint64_t)d[b].raw + 8) {
		char *nb = realloc(v->buf, (uint64_t)d[b].raw + 8);

		if (nb == NULL)
			return GPMDB_NOMEM;
		v->buf = nb;
		v->cap = (uint64_t)d[b].raw + 8;
	}
	v->frame = NULL;
	if ((rc = zt_unpack(e, b, v->buf)) != GPMDB_OK)
		return rc;
	v->frame = f;
	v->zlen = zlen;
	v->sum = sum;
	v->raw = d[b].raw;
	v->used = ++zt_clock;
	*out = v->buf;
	return GPMDB_OK;
}

int zt_cell(const stg_colenc *e, uint64_t r, const char **s, uint32_t *len)
{
	const stg_zt_blk *d = zt_dir(e);
	uint64_t b, pos = 0;
	const char *bytes;
	int rc;

	*s = "";
	*len = 0;
	if (e->dict_n == 0)
		return GPMDB_CORRUPT;
	b = zt_block_of(e, r);
	if (r < d[b].row0 || r >= d[b + 1].row0)
		return GPMDB_CORRUPT;
	for (uint64_t q = d[b].row0; q < r; q++)
		pos += zt_len(e, q);
	*len = zt_len(e, r);
	if (pos + *len > d[b].raw)
		return GPMDB_CORRUPT;
	if (*len == 0)
		return GPMDB_OK;
	if ((rc = zt_block_bytes(e, b, &bytes)) != GPMDB_OK)
		return rc;
	*s = bytes + pos;
	return GPMDB_OK;
}

/* ---- Encoding ------------------------------------------------------- */

void zt_plan_free(zt_plan *z)
{
	free(z->blk);
	free(z->frames);
	free(z->lens);
	memset(z, 0, sizeof(*z));
}

int zt_plan_make(const stg_strref *sr, const uint32_t *nb, const char *heap,
		 uint64_t n, uint64_t limit, bool force, zt_plan *z)
{
	uint64_t lo = UINT64_MAX, hi = 0, nblk = 0, cur = 0, i, b, bound = 0;
	uint64_t *zat = NULL;
	int rc = GPMDB_OK;

	memset(z, 0, sizeof(*z));
	if (n == 0)
		return GPMDB_OK;
	z->lens = malloc(n * sizeof(*z->lens));
	z->blk = malloc((n + 1) * sizeof(*z->blk));
	if (!z->lens || !z->blk) {
		zt_plan_free(z);
		return GPMDB_NOMEM;
	}
	/* the lengths and the blocks */
	for (i = 0; i < n; i++) {
		uint32_t len = bit_get(nb, i) ? 0 : sr[i].len;

		z->lens[i] = len;
		if (len < lo)
			lo = len;
		if (len > hi)
			hi = len;
		if (i == 0 || i % STG_ZT_GROUP == 0 ||
		    (cur && cur + len > STG_ZT_BLOCK)) {
			if (nblk)
				z->blk[nblk - 1].raw = (uint32_t)cur;
			z->blk[nblk].row0 = (uint32_t)i;
			z->blk[nblk].off = 0;
			nblk++;
			cur = 0;
		}
		cur += len;
	}
	z->blk[nblk - 1].raw = (uint32_t)cur;
	z->blk[nblk] = (stg_zt_blk){0, (uint32_t)n, 0};
	z->nblk = nblk;
	z->base = lo;
	z->bits = hi > lo ? 64u - (unsigned)__builtin_clzll(hi - lo) : 0u;
	z->len_bytes = enc_packed_bytes(n, z->bits);
	/* not worth compressing when the lengths and the directory alone
	 * come near the best so far */
	if (!force && z->len_bytes + (nblk + 1) * sizeof(stg_zt_blk) >= limit) {
		zt_plan_free(z);
		return GPMDB_OK;
	}
	zat = malloc((nblk + 1) * sizeof(*zat));
	if (zat == NULL) {
		zt_plan_free(z);
		return GPMDB_NOMEM;
	}
	for (b = 0; b < nblk; b++) {
		zat[b] = bound;
		bound += ZSTD_compressBound(z->blk[b].raw);
	}
	zat[nblk] = bound;
	z->frames = malloc(bound + 8);
	if (z->frames == NULL) {
		free(zat);
		zt_plan_free(z);
		return GPMDB_NOMEM;
	}
	/* each block compressed at its bound's place, in parallel */
#pragma omp parallel if (nblk > 8)
	{
		ZSTD_CCtx *cx = ZSTD_createCCtx();
		char *buf = malloc(STG_ZT_BLOCK + 8);
		uint64_t bcap = STG_ZT_BLOCK + 8;

		if (cx) {
			ZSTD_CCtx_setParameter(cx, ZSTD_c_compressionLevel,
					       ZT_LEVEL);
			ZSTD_CCtx_setParameter(cx, ZSTD_c_checksumFlag, 1);
			ZSTD_CCtx_setParameter(cx, ZSTD_c_contentSizeFlag, 1);
		}
#pragma omp for schedule(dynamic, 4)
		for (uint64_t k = 0; k < nblk; k++) {
			uint64_t at = 0, r1 = z->blk[k + 1].row0;
			size_t got;

			if (!cx || !buf) {
				zat[k] = UINT64_MAX;
				continue;
			}
			if (z->blk[k].raw + 8 > bcap) {
				char *nb2 = realloc(buf, z->blk[k].raw + 8);

				if (nb2 == NULL) {
					zat[k] = UINT64_MAX;
					continue;
				}
				buf = nb2;
				bcap = z->blk[k].raw + 8;
			}
			for (uint64_t r = z->blk[k].row0; r < r1; r++) {
				if (z->lens[r])
					memcpy(buf + at, heap + sr[r].off,
					       z->lens[r]);
				at += z->lens[r];
			}
			got = ZSTD_compress2(cx, z->frames + zat[k],
					     ZSTD_compressBound(z->blk[k].raw),
					     buf, at);
			/* the frame's size, in place of its place */
			z->blk[k].off = ZSTD_isError(got) ? UINT64_MAX : got;
		}
		ZSTD_freeCCtx(cx);
		free(buf);
	}
	/* packed: each frame moved down behind the one before it */
	for (b = 0; b < nblk && rc == GPMDB_OK; b++) {
		uint64_t got = z->blk[b].off;

		if (zat[b] == UINT64_MAX || got == UINT64_MAX) {
			rc = GPMDB_NOMEM;
			break;
		}
		memmove(z->frames + z->z_bytes, z->frames + zat[b], got);
		z->blk[b].off = z->z_bytes;
		z->z_bytes += got;
	}
	z->blk[nblk].off = z->z_bytes;
	free(zat);
	if (rc != GPMDB_OK) {
		zt_plan_free(z);
		return rc;
	}
	/* strings that do not compress by an eighth stay as they were: the
	 * references alone are not worth a decompression per read */
	for (b = 0, bound = 0; b < nblk; b++)
		bound += z->blk[b].raw;
	if (!force && z->z_bytes * 8 > bound * 7) {
		zt_plan_free(z);
		return GPMDB_OK;
	}
	z->bytes =
	    (z->len_bytes + (nblk + 1) * sizeof(stg_zt_blk) + z->z_bytes + 7) /
	    8 * 8;
	return GPMDB_OK;
}

void zt_plan_write(const zt_plan *z, char *tablet, uint64_t rel,
		   stg_col_enc *ce)
{
	char *dst = tablet + rel;
	uint64_t dir = z->len_bytes,
		 zr = dir + (z->nblk + 1) * sizeof(stg_zt_blk);
	uint64_t n = z->blk[z->nblk].row0;

	ENC_PACK_RUN((uint64_t *)dst, n, z->bits, z->lens[i] - z->base);
	memcpy(dst + dir, z->blk, (z->nblk + 1) * sizeof(stg_zt_blk));
	memcpy(dst + zr, z->frames, z->z_bytes);
	ce->kind = STG_ENC_ZTEXT;
	ce->bits = (uint8_t)z->bits;
	ce->base = z->base;
	ce->dict_n = z->nblk;
	ce->dict_rel = rel + dir;
	ce->z_rel = rel + zr;
	ce->z_bytes = z->z_bytes;
}

/* ---- Widening: the strings back into a heap ------------------------- */

int zt_widen_begin(stg_pool *p, stg_tablet_hdr *h, uint32_t ncols, zt_widen *zw)
{
	memset(zw, 0, sizeof(*zw));
	for (uint32_t c = 0; h && h->enc_rel && c < ncols; c++) {
		stg_colenc e;

		if (tab_encs(h)[c].kind != STG_ENC_ZTEXT)
			continue;
		enc_colenc(h, c, &e);
		for (uint64_t b = 0; b < e.dict_n; b++)
			zw->raw += zt_dir(&e)[b].raw;
	}
	if (zw->raw == 0)
		return GPMDB_OK;
	zw->used = h->heap_off ? h->heap_used : 0;
	if (zw->used + zw->raw > UINT32_MAX)
		return pool_err(p, GPMDB_TOOBIG,
				"string or blob too big: the string heap of "
				"tablet %u of a table would exceed 4 GiB",
				h->index);
	return alloc_extent(p, zw->used + zw->raw, &zw->off, &zw->ext);
}

int zt_widen_heap(stg_pool *p, zt_widen *zw, const char *table,
		  stg_tablet_hdr *h, stg_tablet_hdr *nh, uint64_t n)
{
	char *heap;

	if (zw->raw == 0)
		return GPMDB_OK;
	heap = pool_at(p, zw->off);
	if (zw->used)
		memcpy(heap, pool_at(p, h->heap_off), zw->used);
	for (uint32_t c = 0; c < nh->ncols; c++) {
		stg_strref *out =
		    (stg_strref *)((char *)nh + tab_colmap(nh)[2 * c]);
		stg_colenc e;
		int rc;

		if (tab_encs(h)[c].kind != STG_ENC_ZTEXT)
			continue;
		enc_colenc(h, c, &e);
		rc = zt_decode(&e, 0, n, out, heap + zw->used, zw->used);
		if (rc != GPMDB_OK)
			return pool_err(p, rc, "table %s: %s", table,
					stg_decode_errstr(rc));
		zw->used += zt_room(&e, 0, n);
		pool_flush(p, out, n * sizeof(*out));
	}
	nh->heap_off = zw->off;
	nh->heap_size = zw->ext;
	nh->heap_used = zw->used;
	pool_flush(p, heap, zw->used);
	pool_count_persisted(p, zw->used);
	/* the old heap goes at commit (a rollback keeps it) */
	return h->heap_off ? alloc_free_deferred(p, h->heap_off, h->heap_size)
			   : GPMDB_OK;
}

int zt_tab_cell(stg_pool *p, const char *table, stg_tablet_hdr *h, uint32_t c,
		uint64_t lr, tab_cellv *out)
{
	stg_colenc e;
	int rc;

	/* the string in its block, decompressed (no reference to give) */
	out->vbuf = 0;
	out->val = &out->vbuf;
	if (out->null)
		return GPMDB_OK;
	enc_colenc(h, c, &e);
	rc = zt_cell(&e, lr, &out->text, &out->tlen);
	if (rc != GPMDB_OK)
		return pool_err(p, rc, "table %s: %s", table,
				stg_decode_errstr(rc));
	return GPMDB_OK;
}

/* ---- stg_read ------------------------------------------------------- */

void zt_keep_free(stg_pool *p)
{
	for (size_t i = 0; i < p->nzt_keep; i++)
		free(p->zt_keep[i]);
	free(p->zt_keep);
	p->zt_keep = NULL;
	p->nzt_keep = 0;
}

int zt_read(stg_pool *p, stg_tablet_hdr *h, uint32_t c, uint64_t lr, uint64_t k,
	    stg_text *out, uint64_t done)
{
	const uint32_t *nb =
	    (const uint32_t *)((char *)h + tab_colmap(h)[2 * c + 1]);
	stg_colenc e;
	stg_strref *refs;
	char *buf, **nk;
	int rc;

	if (done == 0) /* a new stg_read: what the last one kept goes */
		zt_keep_free(p);
	enc_colenc(h, c, &e);
	refs = malloc((k ? k : 1) * sizeof(*refs));
	buf = malloc(zt_room(&e, lr, k) + 8);
	nk = realloc(p->zt_keep, (p->nzt_keep + 1) * sizeof(*nk));
	if (nk)
		p->zt_keep = nk;
	if (!refs || !buf || !nk) {
		free(refs);
		free(buf);
		return GPMDB_NOMEM;
	}
	p->zt_keep[p->nzt_keep++] = buf;
	rc = zt_decode(&e, lr, k, refs, buf, 0);
	for (uint64_t i = 0; rc == GPMDB_OK && i < k; i++) {
		bool isnull = bit_get(nb, lr + i);

		out[i].ptr = isnull ? NULL : buf + refs[i].off;
		out[i].len = isnull ? 0 : refs[i].len;
	}
	free(refs);
	return rc;
}

/* ---- gpmdb_check ---------------------------------------------------- */

const char *zt_check(stg_tablet_hdr *h, uint32_t col, uint64_t nrows)
{
	const stg_col_enc *ce = &tab_encs(h)[col];
	uint64_t drel = tab_colmap(h)[2 * col], lb, dir, sum = 0;
	const uint32_t *nb =
	    (const uint32_t *)((char *)h + tab_colmap(h)[2 * col + 1]);
	const stg_zt_blk *d;
	stg_colenc e;
	char *buf;

	if (ce->bits > 32 || ce->base > UINT32_MAX || ce->dict_n > nrows ||
	    (nrows && ce->dict_n == 0))
		return "compressed text: bad lengths or block count";
	lb = enc_packed_bytes(nrows, ce->bits);
	dir = (ce->dict_n + 1) * sizeof(stg_zt_blk);
	if (ce->dict_rel != drel + lb || ce->z_rel != drel + lb + dir ||
	    ce->bytes != (lb + dir + ce->z_bytes + 7) / 8 * 8 ||
	    drel > h->extent_size || ce->bytes > h->extent_size - drel)
		return "compressed text: layout inconsistent with its bytes";
	enc_colenc(h, col, &e);
	d = zt_dir(&e);
	if (d[0].row0 != 0 || d[ce->dict_n].row0 != nrows ||
	    d[ce->dict_n].off != ce->z_bytes)
		return "compressed text: block directory damaged";
	for (uint64_t b = 0; b < ce->dict_n; b++) {
		uint64_t r0 = d[b].row0, r1 = d[b + 1].row0, bytes = 0;

		if (r1 <= r0 || d[b + 1].off < d[b].off ||
		    r0 / STG_ZT_GROUP != (r1 - 1) / STG_ZT_GROUP ||
		    (d[b].raw > STG_ZT_BLOCK && r1 - r0 > 1))
			return "compressed text: block directory damaged";
		for (uint64_t r = r0; r < r1; r++) {
			uint32_t len = zt_len(&e, r);

			if (len && bit_get(nb, r))
				return "compressed text: a NULL row has a "
				       "length";
			bytes += len;
		}
		if (bytes != d[b].raw)
			return "compressed text: lengths inconsistent with "
			       "their block";
		sum += bytes;
	}
	/* every block decompresses to its bytes (zstd's checksum) */
	for (uint64_t b = 0; b < ce->dict_n; b++) {
		int rc;

		if ((buf = malloc((uint64_t)d[b].raw + 8)) == NULL)
			return "out of memory";
		rc = zt_unpack(&e, b, buf);
		free(buf);
		if (rc == GPMDB_NOMEM)
			return "out of memory";
		if (rc != GPMDB_OK)
			return "compressed text: a block does not decompress "
			       "(damaged)";
	}
	(void)sum;
	return NULL;
}

const char *stg_decode_errstr(int rc)
{
	switch (rc) {
	case GPMDB_NOMEM:
		return "out of memory";
	case GPMDB_TOOBIG:
		return "a tablet's strings decoded would exceed 4 GiB";
	default:
		return "a compressed block of the table is damaged "
		       "(gpmdb_check "
		       "says where)";
	}
}

int stg_tablet_vec(const stg_tablet_view *v, int c, uint64_t from, uint64_t n,
		   stg_vecbuf *vb, const void **data, const char **heap)
{
	const stg_colenc *e = &v->enc[c];

	_Static_assert(STG_VEC_ROWS == STG_ZT_GROUP, "a vector's blocks");
	if (n > STG_VEC_ROWS)
		return GPMDB_MISUSE;
	if (!vb->arr && !(vb->arr = malloc((size_t)STG_VEC_ROWS * 8)))
		return GPMDB_NOMEM;
	*data = vb->arr;
	*heap = v->heap;
	if (e->kind == STG_ENC_ZTEXT)
		return stg_tablet_text(v, c, from, n, vb->arr, heap, &vb->tb);
	stg_colenc_decode(e, e->width, from, n, vb->arr);
	return GPMDB_OK;
}

void stg_vecbuf_free(stg_vecbuf *vb)
{
	free(vb->arr);
	stg_textbuf_free(&vb->tb);
}
