/*
 * check.c - stg_check: a read-only consistency check of a pool.
 *
 * It re-validates the superblock and the root block, checks that the log
 * is empty outside a transaction, walks the catalog, every table's tablet
 * directory, tablets and heaps, and claims each extent's chunks for its
 * owner in a DRAM map, reporting extents outside the pool, extents used
 * twice, extents in use but not allocated, and allocated chunks nothing
 * uses (leaks).  Extents that an active transaction will free at commit
 * (FREE entries) and its HCL segments count as used.  Per table: row
 * count within the tablets' capacity, deleted bits (below the row count)
 * adding up to the deleted count, strings inside their heap.
 *
 * NULL bits past the row count are not checked: an append that was rolled
 * back leaves them behind, and nothing reads them.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "btree.h"

#define MAX_LINES 200

typedef struct {
	stg_pool *p;
	char *buf;
	size_t len, cap;
	int nprob;
	uint32_t *owner; /* per chunk below the pool size: 0 = nobody */
	uint64_t nown;
	char **names;
	size_t nnames, capn;
	bool oom;
} chk;

static void report(chk *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void report(chk *c, const char *fmt, ...)
{
	va_list ap;
	char line[512];
	size_t n;

	c->nprob++;
	if (c->nprob > MAX_LINES)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (c->nprob == 1)
		pool_err(c->p, GPMDB_CORRUPT,
			 "database disk image is "
			 "malformed: %s",
			 line);
	n = strlen(line);
	if (c->len + n + 2 > c->cap) {
		size_t ncap = (c->cap + n + 2) * 2;
		char *nb = realloc(c->buf, ncap);

		if (nb == NULL) {
			c->oom = true;
			return;
		}
		c->buf = nb;
		c->cap = ncap;
	}
	memcpy(c->buf + c->len, line, n);
	c->len += n;
	c->buf[c->len++] = '\n';
	c->buf[c->len] = '\0';
}

static uint32_t owner_new(chk *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static uint32_t owner_new(chk *c, const char *fmt, ...)
{
	va_list ap;
	char name[256];

	va_start(ap, fmt);
	vsnprintf(name, sizeof(name), fmt, ap);
	va_end(ap);
	if (c->nnames == c->capn) {
		size_t ncap = c->capn ? c->capn * 2 : 64;
		char **nn = realloc(c->names, ncap * sizeof(*nn));

		if (nn == NULL) {
			c->oom = true;
			return 0;
		}
		c->names = nn;
		c->capn = ncap;
	}
	c->names[c->nnames] = strdup(name);
	if (c->names[c->nnames] == NULL) {
		c->oom = true;
		return 0;
	}
	return (uint32_t)++c->nnames;
}

/* Claims the chunks of [off, off + bytes) for owner id; false when the
 * extent is unusable (outside the pool). */
static bool claim(chk *c, uint64_t off, uint64_t bytes, uint32_t id,
		  bool quiet_overlap)
{
	stg_pool *p = c->p;
	uint64_t cs = p->sb.chunk_size, s, n, i;
	bool reported = false;

	if (id == 0)
		return false;
	if (!pool_range_ok(p, off, bytes) || (off - p->sb.data_off) % cs) {
		report(c,
		       "%s: extent at 0x%llx (%llu bytes) is outside the "
		       "pool or misaligned",
		       c->names[id - 1], (unsigned long long)off,
		       (unsigned long long)bytes);
		return false;
	}
	s = (off - p->sb.data_off) / cs;
	n = alloc_round(p, bytes) / cs;
	for (i = s; i < s + n && i < c->nown; i++) {
		uint32_t o = c->owner[i];

		if (o == 0 || o == id) {
			c->owner[i] = id;
		} else if (!quiet_overlap && !reported) {
			report(c, "%s: extent at 0x%llx overlaps %s",
			       c->names[id - 1], (unsigned long long)off,
			       c->names[o - 1]);
			reported = true;
		}
	}
	return true;
}

static bool nul_terminated(const char *s, size_t n)
{
	return memchr(s, '\0', n) != NULL;
}

static void check_superblock(chk *c)
{
	stg_pool *p = c->p;
	const stg_superblock *sb = pool_at(p, 0);
	stg_root *r = pool_root(p);

	if (memcmp(sb->magic, STG_SB_MAGIC, 8) != 0)
		report(c, "superblock: bad magic");
	if (sb->version < STG_FORMAT_VERSION_MIN ||
	    sb->version > STG_FORMAT_VERSION)
		report(c, "superblock: format version %u", sb->version);
	if ((uint32_t)crc32(0L, (const Bytef *)sb, STG_SB_CRC_OFF) != sb->crc)
		report(c, "superblock: checksum mismatch");
	if (memcmp(sb, &p->sb, sizeof(*sb)) != 0)
		report(c, "superblock: changed since the pool was opened");
	if (r->magic != STG_ROOT_MAGIC)
		report(c, "root block: bad magic");
	if (r->pool_size < p->sb.data_off || r->pool_size > p->sb.max_size ||
	    r->pool_size > p->map_len ||
	    (r->pool_size - p->sb.data_off) % p->sb.chunk_size)
		report(c, "root block: pool size %llu out of range",
		       (unsigned long long)r->pool_size);
	if (r->next_table_id == 0)
		report(c, "root block: next table id is 0");
}

static void check_log(chk *c)
{
	stg_pool *p = c->p;
	uint64_t *offs = NULL;
	size_t n = 0, i;
	uint32_t hcl_id;

	if (mlog_scan(p, &offs, &n) != GPMDB_OK) {
		c->oom = true;
		return;
	}
	if (!p->in_txn && n)
		report(c, "metadata log: %zu entries outside a transaction", n);
	if (p->in_txn && n != p->nents)
		report(c, "metadata log: %zu entries on the pool, %zu expected",
		       n, p->nents);
	hcl_id = owner_new(c, "HCL segment of the active transaction");
	for (i = 0; i < n; i++) {
		stg_log_rec *r = mlog_rec(p, offs[i]);
		stg_log_hcl h;

		if (r->type != STG_LOG_HCL_BATCH || r->len != sizeof(h))
			continue;
		memcpy(&h, r + 1, sizeof(h));
		claim(c, h.seg_off, h.seg_size, hcl_id, true);
	}
	free(offs);
}

/* Extents the active transaction frees at commit: used until then.  Done
 * last, so that they never count as overlaps. */
static void check_pending_frees(chk *c)
{
	stg_pool *p = c->p;
	uint64_t *offs = NULL;
	size_t n = 0, i;
	uint32_t id;

	if (!p->in_txn || mlog_scan(p, &offs, &n) != GPMDB_OK)
		return;
	id = owner_new(c, "extent freed at commit");
	for (i = 0; i < n; i++) {
		stg_log_rec *r = mlog_rec(p, offs[i]);
		stg_log_extent e;

		if (r->type != STG_LOG_FREE || r->len != sizeof(e))
			continue;
		memcpy(&e, r + 1, sizeof(e));
		claim(c, e.off, e.len, id, true);
	}
	free(offs);
}

/* Whether [rel, rel + bytes) lies inside the tablet's extent. */
static bool in_ext(const stg_tablet_hdr *h, uint64_t rel, uint64_t bytes)
{
	return rel <= h->extent_size && bytes <= h->extent_size - rel;
}

/* One encoded column of tablet h (layout.h "Encodings"), nrows rows. */
static bool check_enc_col(chk *c, stg_cat_entry *e, uint64_t idx,
			  stg_tablet_hdr *h, uint32_t col, uint64_t nrows)
{
	const stg_col_enc *ce = &tab_encs(h)[col];
	stg_type t = (stg_type)cat_cols(e)[col].type;
	uint64_t room = tab_room(h), bytes, drel = tab_colmap(h)[2 * col];
	const char *bad = NULL;

	if (ce->kind > STG_ENC_ZTEXT || ce->bits > 64 ||
	    (ce->kind == STG_ENC_ZTEXT &&
	     (t != STG_T_TEXT || c->p->sb.version < STG_FORMAT_ZTEXT)) ||
	    (ce->kind == STG_ENC_DICT && t != STG_T_TEXT) ||
	    (ce->kind == STG_ENC_FOR &&
	     (t == STG_T_TEXT || t == STG_T_DOUBLE || t == STG_T_FLOAT)))
		bad = "bad encoding";
	bytes = ce->kind == STG_ENC_PLAIN
		    ? nrows * stg_type_width(t)
		    : ((nrows * ce->bits + 63) / 64 + 1) * 8;
	if (!bad && ce->kind == STG_ENC_ZTEXT) {
		bad = zt_check(h, col, nrows);
		if (bad && !strcmp(bad, "out of memory")) {
			c->oom = true;
			bad = NULL;
		}
		if (!bad && !in_ext(h, tab_colmap(h)[2 * col + 1], room / 8))
			bad = "NULL bitmap outside the tablet";
		goto out;
	}
	if (!bad && (ce->bytes != bytes || !in_ext(h, drel, bytes)))
		bad = "width inconsistent with its bytes";
	if (!bad && !in_ext(h, tab_colmap(h)[2 * col + 1], room / 8))
		bad = "NULL bitmap outside the tablet";
	if (!bad && ce->kind == STG_ENC_DICT) {
		const stg_strref *d;
		stg_colenc de;

		if ((ce->dict_n > 1 &&
		     ce->bits <
			 64u - (unsigned)__builtin_clzll(ce->dict_n - 1)) ||
		    ce->dict_n > nrows ||
		    !in_ext(h, ce->dict_rel, ce->dict_n * sizeof(stg_strref)))
			bad = "dictionary damaged";
		d = (const stg_strref *)((char *)h + ce->dict_rel);
		for (uint64_t k = 0; !bad && k < ce->dict_n; k++)
			if ((uint64_t)d[k].off + d[k].len > h->heap_used)
				bad = "dictionary string outside the heap";
		enc_colenc(h, col, &de);
		for (uint64_t r = 0; !bad && r < nrows; r++) {
			uint64_t pos = r * ce->bits, v;
			unsigned sh = (unsigned)(pos & 63);

			if (!ce->bits)
				break;
			v = de.words[pos >> 6] >> sh;
			if (sh && sh + ce->bits > 64)
				v |= de.words[(pos >> 6) + 1] << (64 - sh);
			if (ce->bits < 64)
				v &= (1ull << ce->bits) - 1;
			if (v >= ce->dict_n)
				bad = "dictionary code out of range";
		}
	}
	if (!bad && ce->kind == STG_ENC_PLAIN && t == STG_T_TEXT) {
		const stg_strref *sr = (const stg_strref *)((char *)h + drel);
		const uint32_t *nb =
		    (const uint32_t *)((char *)h + tab_colmap(h)[2 * col + 1]);

		for (uint64_t r = 0; !bad && r < nrows; r++)
			if (!bit_get(nb, r) && sr[r].len &&
			    (uint64_t)sr[r].off + sr[r].len > h->heap_used)
				bad = "string outside the heap";
	}
out:
	if (bad)
		report(c, "table %s: tablet %llu: column %s: %s", e->name,
		       (unsigned long long)idx, cat_cols(e)[col].name, bad);
	return bad == NULL;
}

static int span_cmp(const void *a, const void *b)
{
	const stg_strref *x = a, *y = b;

	return x->off < y->off ? -1 : x->off > y->off;
}

/* The heap of an encoded tablet (written whole by encode.c): every
 * byte handed out referred to exactly once, by a dictionary entry or a
 * plain TEXT row.  Called once its columns passed check_enc_col. */
static void check_enc_heap(chk *c, stg_cat_entry *e, uint64_t idx,
			   stg_tablet_hdr *h, uint64_t nrows)
{
	const stg_col_enc *ce = tab_encs(h);
	stg_strref *sp;
	uint64_t n = 0, cap = 0, sum = 0;
	const char *bad = NULL;

	for (uint32_t col = 0; col < e->ncols; col++)
		if (cat_cols(e)[col].type == STG_T_TEXT &&
		    ce[col].kind != STG_ENC_ZTEXT)
			cap += ce[col].kind == STG_ENC_DICT ? ce[col].dict_n
							    : nrows;
	if (cap == 0)
		return;
	if ((sp = malloc(cap * sizeof(*sp))) == NULL) {
		c->oom = true;
		return;
	}
	for (uint32_t col = 0; col < e->ncols; col++) {
		const stg_strref *r =
		    (const stg_strref *)((char *)h + tab_colmap(h)[2 * col]);
		const uint32_t *nb =
		    (const uint32_t *)((char *)h + tab_colmap(h)[2 * col + 1]);

		if (cat_cols(e)[col].type != STG_T_TEXT ||
		    ce[col].kind == STG_ENC_ZTEXT)
			continue;
		if (ce[col].kind == STG_ENC_DICT) {
			r = (const stg_strref *)((char *)h + ce[col].dict_rel);
			for (uint64_t k = 0; k < ce[col].dict_n; k++)
				if (r[k].len)
					sp[n++] = r[k];
			continue;
		}
		for (uint64_t k = 0; k < nrows; k++)
			if (!bit_get(nb, k) && r[k].len)
				sp[n++] = r[k];
	}
	qsort(sp, n, sizeof(*sp), span_cmp);
	for (uint64_t k = 0; k < n && !bad; k++) {
		if (k && sp[k].off < (uint64_t)sp[k - 1].off + sp[k - 1].len)
			bad =
			    "heap strings overlap (a string referred to twice)";
		sum += sp[k].len;
	}
	if (!bad && sum != h->heap_used)
		bad = "heap bytes that no row refers to";
	if (bad)
		report(c, "table %s: tablet %llu: %s", e->name,
		       (unsigned long long)idx, bad);
	free(sp);
}

/* An encoded tablet: its descriptors, arrays and dictionaries inside
 * its extent and heap, its codes inside their dictionaries. */
static void check_encoded(chk *c, stg_cat_entry *e, uint64_t idx,
			  stg_tablet_hdr *h, uint32_t id, uint64_t *deleted)
{
	stg_pool *p = c->p;
	uint64_t nrows = 0, room = tab_room(h);

	if (p->sb.version < STG_FORMAT_ENC ||
	    !in_ext(h, h->enc_rel, sizeof(stg_col_enc) * e->ncols) ||
	    !in_ext(h, h->deleted_rel, room / 8) ||
	    h->extent_size > p->map_len) {
		report(c, "table %s: tablet %llu: bad encoded layout", e->name,
		       (unsigned long long)idx);
		return;
	}
	claim(c, pool_off(p, h), h->extent_size, id, false);
	if (h->heap_off) {
		uint32_t hid = owner_new(c, "table %s: tablet %llu heap",
					 e->name, (unsigned long long)idx);

		claim(c, h->heap_off, h->heap_size, hid, false);
	}
	if (h->heap_used > h->heap_size) {
		report(c, "table %s: tablet %llu: heap used %llu > size %llu",
		       e->name, (unsigned long long)idx,
		       (unsigned long long)h->heap_used,
		       (unsigned long long)h->heap_size);
		return;
	}
	if (e->row_count > h->first_row)
		nrows = e->row_count - h->first_row;
	if (nrows > h->capacity)
		nrows = h->capacity;
	if (nrows > room) {
		report(c, "table %s: tablet %llu: %llu rows past its room %llu",
		       e->name, (unsigned long long)idx,
		       (unsigned long long)nrows, (unsigned long long)room);
		return;
	}
	for (uint64_t r = 0; r < nrows; r++)
		*deleted +=
		    bit_get((uint32_t *)((char *)h + h->deleted_rel), r);
	for (uint32_t col = 0; col < e->ncols; col++)
		if (!check_enc_col(c, e, idx, h, col, nrows))
			return;
	check_enc_heap(c, e, idx, h, nrows);
}

static void check_tablet(chk *c, stg_cat_entry *e, uint64_t idx, uint64_t off,
			 uint64_t *deleted)
{
	stg_pool *p = c->p;
	stg_tablet_hdr *h = tab_hdr(p, off);
	stg_cat_column *cc = cat_cols(e);
	uint64_t *cm, size, del_rel, nrows = 0, r;
	uint32_t id, col;

	id = owner_new(c, "table %s: tablet %llu", e->name,
		       (unsigned long long)idx);
	if (!claim(c, off, sizeof(*h), id, false))
		return;
	if (h->magic != STG_TABLET_MAGIC || h->ncols != e->ncols ||
	    h->index != idx || h->table_id != e->table_id ||
	    h->capacity != tab_capacity(idx) ||
	    h->first_row != tab_first_row(idx)) {
		report(c, "table %s: tablet %llu: bad header", e->name,
		       (unsigned long long)idx);
		return;
	}
	/* a trimmed tablet (format 3): arrays for rows_alloc rows, a
	 * multiple of 1024 below the capacity */
	if (h->rows_alloc &&
	    (c->p->sb.version < STG_FORMAT_TRIM ||
	     h->rows_alloc >= h->capacity || h->rows_alloc % 1024)) {
		report(c, "table %s: tablet %llu: bad room %llu", e->name,
		       (unsigned long long)idx,
		       (unsigned long long)h->rows_alloc);
		return;
	}
	if (h->enc_rel) {
		check_encoded(c, e, idx, h, id, deleted);
		return;
	}
	size = tab_layout(cc, e->ncols, tab_room(h), NULL, &del_rel);
	if (h->extent_size < size || h->deleted_rel != del_rel) {
		report(c,
		       "table %s: tablet %llu: extent too small for its "
		       "layout",
		       e->name, (unsigned long long)idx);
		return;
	}
	claim(c, off, h->extent_size, id, false);
	cm = malloc(16ull * e->ncols);
	if (cm == NULL) {
		c->oom = true;
		return;
	}
	tab_layout(cc, e->ncols, tab_room(h), cm, NULL);
	if (memcmp(cm, tab_colmap(h), 16ull * e->ncols) != 0)
		report(c, "table %s: tablet %llu: column map damaged", e->name,
		       (unsigned long long)idx);
	free(cm);
	if (h->heap_off) {
		uint32_t hid = owner_new(c, "table %s: tablet %llu heap",
					 e->name, (unsigned long long)idx);

		claim(c, h->heap_off, h->heap_size, hid, false);
		if (h->heap_used > h->heap_size)
			report(c,
			       "table %s: tablet %llu: heap used %llu > "
			       "size %llu",
			       e->name, (unsigned long long)idx,
			       (unsigned long long)h->heap_used,
			       (unsigned long long)h->heap_size);
	}
	if (e->row_count > h->first_row)
		nrows = e->row_count - h->first_row;
	if (nrows > h->capacity)
		nrows = h->capacity;
	if (nrows > tab_room(h)) {
		report(c, "table %s: tablet %llu: %llu rows past its room %llu",
		       e->name, (unsigned long long)idx,
		       (unsigned long long)nrows,
		       (unsigned long long)tab_room(h));
		nrows = tab_room(h);
	}
	for (r = 0; r < nrows; r++)
		*deleted +=
		    bit_get((uint32_t *)((char *)h + h->deleted_rel), r);
	for (col = 0; col < e->ncols; col++) {
		const stg_strref *sr;
		const uint32_t *nb;

		if (cc[col].type != STG_T_TEXT)
			continue;
		sr = (const stg_strref *)((char *)h + tab_colmap(h)[2 * col]);
		nb = (const uint32_t *)((char *)h + tab_colmap(h)[2 * col + 1]);
		for (r = 0; r < nrows; r++) {
			if (bit_get(nb, r) || sr[r].len == 0)
				continue;
			if ((uint64_t)sr[r].off + sr[r].len > h->heap_used) {
				report(c,
				       "table %s: tablet %llu: column %s "
				       "row %llu: string outside the heap",
				       e->name, (unsigned long long)idx,
				       cc[col].name,
				       (unsigned long long)(h->first_row + r));
				break;
			}
		}
	}
}

static void check_table(chk *c, stg_cat_entry *e)
{
	stg_pool *p = c->p;
	stg_tdir *d;
	uint64_t i, capsum = 0, deleted = 0;
	uint32_t id;

	if (e->ncols < 1 || e->ncols > STG_MAX_COLUMNS ||
	    sizeof(*e) + (uint64_t)e->ncols * sizeof(stg_cat_column) >
		e->extent_size) {
		report(c, "table %s: %u columns", e->name, e->ncols);
		return;
	}
	for (i = 0; i < e->ncols; i++) {
		stg_cat_column *col = &cat_cols(e)[i];

		if (!nul_terminated(col->name, sizeof(col->name)) ||
		    col->type < STG_T_INT || col->type > STG_T_TEXT) {
			report(c, "table %s: column %llu damaged", e->name,
			       (unsigned long long)i);
			return;
		}
	}
	if (e->tdir == 0) {
		if (e->row_count)
			report(c, "table %s: %llu rows but no tablets", e->name,
			       (unsigned long long)e->row_count);
		return;
	}
	id = owner_new(c, "table %s: tablet directory", e->name);
	if (!claim(c, e->tdir, sizeof(stg_tdir), id, false))
		return;
	d = tab_dir(p, e->tdir);
	if (d->magic != STG_TDIR_MAGIC || d->count > d->capacity ||
	    sizeof(*d) + 8 * d->capacity > d->extent_size) {
		report(c, "table %s: tablet directory damaged", e->name);
		return;
	}
	claim(c, e->tdir, d->extent_size, id, false);
	for (i = 0; i < d->count; i++) {
		capsum += tab_capacity(i);
		check_tablet(c, e, i, tab_dir_slots(d)[i], &deleted);
	}
	if (e->row_count > capsum)
		report(c,
		       "table %s: row count %llu exceeds the capacity %llu "
		       "of its tablets",
		       e->name, (unsigned long long)e->row_count,
		       (unsigned long long)capsum);
	if (deleted != e->deleted_count)
		report(c,
		       "table %s: %llu rows marked deleted, deleted count "
		       "says %llu",
		       e->name, (unsigned long long)deleted,
		       (unsigned long long)e->deleted_count);
}

static void index_problem(void *ctx, const char *msg)
{
	report(ctx, "%s", msg);
}

/* An index: its header and arenas are its extents; the tree is ordered,
 * linked and counted right and holds each live row of its table once
 * (btree.c ix_verify). */
static void check_index(chk *c, stg_cat_entry *e, uint32_t id)
{
	stg_pool *p = c->p;
	stg_ix_hdr *h;

	if (!pool_range_ok(p, e->tdir, sizeof(stg_ix_hdr)) ||
	    (h = pool_at(p, e->tdir))->magic != STG_IX_MAGIC ||
	    h->narenas > STG_IX_MAX_ARENAS) {
		report(c, "index %s: damaged header at 0x%llx", e->name,
		       (unsigned long long)e->tdir);
		return;
	}
	claim(c, e->tdir, h->extent_size, id, false);
	for (uint64_t i = 0; i < h->narenas; i++)
		claim(c, h->arenas[i][0], h->arenas[i][1], id, false);
	ix_verify(p, e->tdir, e->name, index_problem, c);
}

static void check_catalog(chk *c)
{
	stg_pool *p = c->p;
	stg_root *r = pool_root(p);
	uint64_t off = r->cat_head, last = 0, steps = 0;

	while (off) {
		stg_cat_entry *e;
		uint32_t id;

		if (++steps > c->nown + 1) {
			report(c, "catalog: the list loops");
			return;
		}
		if (!pool_range_ok(p, off, sizeof(*e))) {
			report(c, "catalog: entry at 0x%llx outside the pool",
			       (unsigned long long)off);
			return;
		}
		e = cat_entry(p, off);
		if (e->magic != STG_CAT_MAGIC) {
			report(c, "catalog: entry at 0x%llx has a bad magic",
			       (unsigned long long)off);
			return;
		}
		if (!nul_terminated(e->name, sizeof(e->name)) ||
		    !nul_terminated(e->tbl_name, sizeof(e->tbl_name)) ||
		    e->kind < STG_OBJ_TABLE || e->kind > STG_OBJ_INDEX ||
		    e->sql_rel + e->sql_len > e->extent_size) {
			report(c, "catalog: entry at 0x%llx is damaged",
			       (unsigned long long)off);
			return;
		}
		id = owner_new(c, "%s %s",
			       e->kind == STG_OBJ_TABLE	 ? "table"
			       : e->kind == STG_OBJ_VIEW ? "view"
							 : "index",
			       e->name);
		claim(c, off, e->extent_size, id, false);
		if (e->kind == STG_OBJ_TABLE) {
			if (e->table_id == 0 || e->table_id >= r->next_table_id)
				report(c, "table %s: id %u out of range",
				       e->name, e->table_id);
			check_table(c, e);
		}
		if (e->kind == STG_OBJ_INDEX && e->tdir)
			check_index(c, e, id);
		last = off;
		off = e->next;
	}
	if (r->cat_tail != last)
		report(c, "catalog: tail 0x%llx is not the last entry 0x%llx",
		       (unsigned long long)r->cat_tail,
		       (unsigned long long)last);
}

/* The zone table (zones.c): an extent of its own. */
static void check_zones(chk *c)
{
	stg_pool *p = c->p;
	stg_root *r = pool_root(p);

	/* also in a pool of version 1 that holds one (zones.c ignores
	 * it there): its extent is allocated */
	if (r->zt_off == 0 && r->zt_zones == 0)
		return;
	/* fewer zones than the pool's is fine: the pool grew since, and
	 * zones past the table count as changed */
	(void)p;
	claim(c, r->zt_off, (r->zt_zones + 1) * 8, owner_new(c, "zone table"),
	      false);
	if (r->lm_off != 0 || r->lm_zones != 0)
		claim(c, r->lm_off, zone_lm_bytes(r->lm_zones),
		      owner_new(c, "line masks"), false);
}

static void check_bitmap(chk *c)
{
	stg_pool *p = c->p;
	uint64_t i, cs = p->sb.chunk_size;

	for (i = 0; i < c->nown;) {
		bool set = alloc_bit(p, i);
		uint64_t j = i + 1;

		if (set && c->owner[i] == 0) {
			while (j < c->nown && alloc_bit(p, j) && !c->owner[j])
				j++;
			report(c,
			       "leaked extent at 0x%llx (%llu chunks): "
			       "allocated but used by nothing",
			       (unsigned long long)(p->sb.data_off + i * cs),
			       (unsigned long long)(j - i));
		} else if (!set && c->owner[i]) {
			uint32_t o = c->owner[i];

			while (j < c->nown && !alloc_bit(p, j) &&
			       c->owner[j] == o)
				j++;
			report(c,
			       "%s: extent at 0x%llx is in use but not "
			       "marked allocated",
			       c->names[o - 1],
			       (unsigned long long)(p->sb.data_off + i * cs));
		}
		i = j;
	}
	for (i = c->nown; i < p->sb.nchunks; i++) {
		if (alloc_bit(p, i)) {
			report(c,
			       "chunk %llu beyond the pool size is marked "
			       "allocated",
			       (unsigned long long)i);
			break;
		}
	}
}

int stg_check(stg_pool *p, char **out)
{
	chk c;
	size_t i;
	uint64_t ps;

	if (out)
		*out = NULL;
	if (p == NULL)
		return GPMDB_MISUSE;
	pool_clear_err(p);
	if (p->broken)
		return pool_err(p, GPMDB_IOERR, "pool %s is no longer mapped",
				p->path);
	memset(&c, 0, sizeof(c));
	c.p = p;
	check_superblock(&c);
	ps = pool_root(p)->pool_size;
	if (ps > p->map_len)
		ps = p->map_len;
	c.nown =
	    ps > p->sb.data_off ? (ps - p->sb.data_off) / p->sb.chunk_size : 0;
	c.owner = calloc(c.nown ? c.nown : 1, sizeof(*c.owner));
	if (c.owner == NULL)
		c.oom = true;
	if (c.nprob == 0 && !c.oom) {
		check_log(&c);
		check_catalog(&c);
		check_zones(&c);
		check_pending_frees(&c);
		check_bitmap(&c);
	}
	if (c.nprob > MAX_LINES) {
		char more[64];

		snprintf(more, sizeof(more), "... and %d more problems",
			 c.nprob - MAX_LINES);
		c.nprob = MAX_LINES; /* let report() append this line */
		report(&c, "%s", more);
	}
	for (i = 0; i < c.nnames; i++)
		free(c.names[i]);
	free(c.names);
	free(c.owner);
	if (c.oom) {
		free(c.buf);
		return pool_err(p, GPMDB_NOMEM, "out of memory");
	}
	if (c.nprob == 0) {
		free(c.buf);
		if (out)
			*out = strdup("ok");
		return GPMDB_OK;
	}
	if (out)
		*out = c.buf;
	else
		free(c.buf);
	return GPMDB_CORRUPT;
}
