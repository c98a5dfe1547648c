/*
 * tablet.c - row data: tablets, appends, reads, tablet views.
 *
 * Tablet i of a table holds min(1024 << i, 1M) rows, so small tables stay
 * small and large ones use 1M-row tablets; tablet i's first row follows
 * from i alone.  A tablet is one extent: header, column map, then each
 * column's array, each column's NULL bitmap and the deleted-row bitmap,
 * all 256-byte aligned.  Strings live in a per-tablet heap extent that is
 * replaced by a bigger copy when full (pointer change undo-logged, old
 * heap freed at commit).
 *
 * Rows in use are not stored per tablet: they follow from the table's row
 * count.  An append writes the new rows (values, NULL bits, cleared
 * deleted bits, heap strings) past the count, persists them, then changes
 * heap_used and the row count through the metadata log, so a crash before
 * that leaves the rows invisible.  Bits past the row count are garbage
 * and never read.
 *
 * UPDATE, DELETE and their undo are in tablet_hcl.c.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "crashpoints.h"
#include "internal.h"

#define FIRST_BIG_ROW (1024ull * 1023) /* first row of tablet 10 */
#define PAR_MIN_ROWS  8192	       /* below this, one thread */
#define COPY_PIECE    (4u << 20)       /* bytes of one copy task */

/* ---- Geometry -------------------------------------------------------------
 */

uint64_t tab_capacity(uint64_t idx)
{
	return idx >= 10 ? STG_TABLET_MAX_ROWS
			 : (uint64_t)STG_TABLET_MIN_ROWS << idx;
}

uint64_t tab_first_row(uint64_t idx)
{
	if (idx <= 10)
		return 1024ull * ((1ull << idx) - 1);
	return FIRST_BIG_ROW + (idx - 10) * STG_TABLET_MAX_ROWS;
}

uint64_t tab_index_of(uint64_t row)
{
	uint64_t i = 0;

	if (row >= FIRST_BIG_ROW)
		return 10 + (row - FIRST_BIG_ROW) / STG_TABLET_MAX_ROWS;
	while (tab_first_row(i + 1) <= row)
		i++;
	return i;
}

static uint64_t al256(uint64_t x)
{
	return (x + STG_TABLET_ALIGN - 1) & ~(uint64_t)(STG_TABLET_ALIGN - 1);
}

uint64_t tab_layout(const stg_cat_column *cols, uint32_t ncols, uint64_t cap,
		    uint64_t *colmap, uint64_t *deleted_rel)
{
	uint64_t pos = al256(sizeof(stg_tablet_hdr) + 16ull * ncols);
	uint32_t c;

	for (c = 0; c < ncols; c++) {
		if (colmap)
			colmap[2 * c] = pos;
		pos = al256(pos + stg_type_width((stg_type)cols[c].type) * cap);
	}
	for (c = 0; c < ncols; c++) {
		if (colmap)
			colmap[2 * c + 1] = pos;
		pos = al256(pos + cap / 8);
	}
	if (deleted_rel)
		*deleted_rel = pos;
	return al256(pos + cap / 8);
}

/* ---- Bits ------------------------------------------------------------------
 */

static uint32_t get_bits(const uint32_t *s, uint64_t pos, unsigned n)
{
	uint64_t w = pos >> 5;
	unsigned sh = (unsigned)(pos & 31);
	uint64_t v = s[w] >> sh;

	if (sh + n > 32)
		v |= (uint64_t)s[w + 1] << (32 - sh);
	return n == 32 ? (uint32_t)v : (uint32_t)v & ((1u << n) - 1);
}

/* Copies n bits from s (from bit spos) to d (from bit dpos); s NULL means
 * zeros. */
static void bits_copy(uint32_t *d, uint64_t dpos, const uint32_t *s,
		      uint64_t spos, uint64_t n)
{
	while (n) {
		unsigned dsh = (unsigned)(dpos & 31);
		unsigned take = 32 - dsh < n ? 32 - dsh : (unsigned)n;
		uint32_t mask = (take == 32 ? ~0u : (1u << take) - 1) << dsh;
		uint32_t v = s ? get_bits(s, spos, take) : 0;

		if (take == 32 && s == NULL) {
			uint64_t words = n / 32;

			memset(&d[dpos >> 5], 0, words * 4);
			dpos += words * 32;
			n -= words * 32;
			continue;
		}
		d[dpos >> 5] = (d[dpos >> 5] & ~mask) | ((v << dsh) & mask);
		dpos += take;
		spos += take;
		n -= take;
	}
}

static bool any_bit(const uint32_t *s, uint64_t n, uint64_t *first)
{
	uint64_t w, nw = (n + 31) / 32;

	for (w = 0; w < nw; w++) {
		uint32_t v = s[w];

		if (w == nw - 1 && (n & 31))
			v &= (1u << (n & 31)) - 1;
		if (v) {
			*first = w * 32 + (uint64_t)__builtin_ctz(v);
			return true;
		}
	}
	return false;
}

/* ---- Table and tablet access ---------------------------------------- */

int tab_find_table(stg_pool *p, uint32_t tid, uint64_t *off)
{
	if (p->broken)
		return pool_err(p, GPMDB_IOERR, "pool %s is no longer mapped",
				p->path);
	return cat_find_table(p, tid, off);
}

int tab_find_writable(stg_pool *p, uint32_t tid, uint64_t *off)
{
	int rc = pool_check_writable(p);

	return rc != GPMDB_OK ? rc : tab_find_table(p, tid, off);
}

/* Tablet idx of a table, or NULL when it does not exist (or is bad). */
stg_tablet_hdr *tab_at(stg_pool *p, stg_cat_entry *e, uint64_t idx)
{
	stg_tdir *d;
	uint64_t off;

	if (e->tdir == 0 || !pool_range_ok(p, e->tdir, sizeof(stg_tdir)))
		return NULL;
	d = tab_dir(p, e->tdir);
	if (idx >= d->count || idx >= d->capacity)
		return NULL;
	off = tab_dir_slots(d)[idx];
	if (!pool_range_ok(p, off, sizeof(stg_tablet_hdr)))
		return NULL;
	return tab_hdr(p, off);
}

int tab_cell(stg_pool *p, uint64_t cat_off, uint32_t c, uint64_t row,
	     tab_cellv *out)
{
	stg_cat_entry *e = cat_entry(p, cat_off);
	uint64_t ti = tab_index_of(row), lr = row - tab_first_row(ti);
	stg_tablet_hdr *h;
	const uint32_t *nb;

	if (row >= e->row_count || c >= e->ncols ||
	    (h = tab_at(p, e, ti)) == NULL)
		return pool_err(p, GPMDB_CORRUPT,
				"table %s: row %llu column %u not found",
				e->name, (unsigned long long)row, c);
	nb = tab_col_nulls(h, c);
	out->null = nb[lr / 32] >> (lr % 32) & 1;
	out->deleted = tab_deleted_bits(h)[lr / 32] >> (lr % 32) & 1;
	out->type = (stg_type)cat_cols(e)[c].type;
	out->val =
	    (const char *)tab_col_data(h, c) + lr * stg_type_width(out->type);
	out->text = NULL;
	out->tlen = 0;
	if (h->enc_rel && tab_encs(h)[c].kind == STG_ENC_ZTEXT)
		return zt_tab_cell(p, e->name, h, c, lr, out);
	if (h->enc_rel && tab_encs(h)[c].kind != STG_ENC_PLAIN) {
		out->vbuf = 0;
		enc_decode(h, c, stg_type_width(out->type), lr, 1, &out->vbuf);
		out->val = &out->vbuf;
	}
	if (out->type == STG_T_TEXT && !out->null) {
		const stg_strref *sr = out->val;
		/* an empty string needs no heap (a tablet of '' has none) */
		if (!sr->len) {
			out->text = "";
			return GPMDB_OK;
		}
		if (!h->heap_off || sr->off + (uint64_t)sr->len > h->heap_size)
			return pool_err(p, GPMDB_CORRUPT,
					"table %s: row %llu: string outside "
					"its heap",
					e->name, (unsigned long long)row);
		out->text = (const char *)pool_at(p, h->heap_off) + sr->off;
		out->tlen = sr->len;
	}
	return GPMDB_OK;
}

/* The note of tablet idx of table tid (added when absent), or NULL. */
static struct tab_note *trim_note(stg_pool *p, uint32_t tid, uint32_t idx)
{
	for (size_t i = 0; i < p->ntrim; i++)
		if (p->trim[i].table_id == tid && p->trim[i].idx == idx)
			return &p->trim[i];
	if (p->ntrim == p->cap_trim) {
		size_t nc = p->cap_trim ? p->cap_trim * 2 : 16;
		struct tab_note *nt = realloc(p->trim, nc * sizeof(*nt));

		if (nt == NULL) {
			pool_err(p, GPMDB_NOMEM, "out of memory");
			return NULL;
		}
		p->trim = nt;
		p->cap_trim = nc;
	}
	p->trim[p->ntrim] = (struct tab_note){tid, idx, false, false};
	return &p->trim[p->ntrim++];
}

int tab_note_append(stg_pool *p, uint32_t table_id, uint64_t start,
		    uint64_t end)
{
	uint64_t ti;

	if (end <= start)
		return GPMDB_OK;
	for (ti = tab_index_of(start); ti <= tab_index_of(end - 1); ti++) {
		uint64_t f = tab_first_row(ti), cap = tab_capacity(ti);
		uint64_t r0 = start > f ? start : f;
		uint64_t r1 = end < f + cap ? end : f + cap;

		if ((r1 - r0) * 16 < cap && r1 != f + cap)
			continue;
		if (trim_note(p, table_id, (uint32_t)ti) == NULL)
			return GPMDB_NOMEM;
	}
	return GPMDB_OK;
}

/* Moves tablet idx of the table at cat_off to a new extent whose arrays
 * hold room rows (its capacity: a full one again), copying the rows in
 * use; the directory slot changes through the log and the old extent is
 * freed at commit, so a rollback or a crash finds the old one, intact
 * (an HCL undo of this transaction writes the old extent then: the rows
 * it restores were copied, and are the same there).  Allocates. */
static int tablet_move(stg_pool *p, uint64_t cat_off, uint64_t idx,
		       uint64_t room)
{
	stg_cat_entry *e = cat_entry(p, cat_off);
	stg_tablet_hdr *h, *nh;
	uint64_t size, noff, ext, ooff, osize, n, total = 0;
	zt_widen zw;
	int rc;

	stamp_cat(p, cat_off); /* its bytes move or go */
	size = tab_layout(cat_cols(e), e->ncols, room, NULL, NULL);
	if ((rc = zt_widen_begin(p, tab_at(p, e, idx), e->ncols, &zw)))
		return rc;
	rc = alloc_extent(p, size, &noff, &ext);
	if (rc != GPMDB_OK)
		return rc;
	e = cat_entry(p, cat_off); /* the pool may have moved */
	h = tab_at(p, e, idx);
	if (h == NULL)
		return pool_err(p, GPMDB_CORRUPT,
				"table %s: tablet %llu missing", e->name,
				(unsigned long long)idx);
	n = e->row_count > h->first_row ? e->row_count - h->first_row : 0;
	if (n > tab_room(h))
		n = tab_room(h);
	if (n > room)
		return pool_err(p, GPMDB_INTERNAL,
				"table %s: tablet %llu: %llu rows do not fit "
				"%llu",
				e->name, (unsigned long long)idx,
				(unsigned long long)n,
				(unsigned long long)room);
	nh = tab_hdr(p, noff);
	*nh = *h;
	nh->extent_size = ext;
	nh->rows_alloc = room == h->capacity ? 0 : room;
	nh->enc_rel = 0; /* an encoded tablet is decoded: widened */
	tab_layout(cat_cols(e), e->ncols, room, tab_colmap(nh),
		   &nh->deleted_rel);
	if ((rc = zt_widen_heap(p, &zw, e->name, h, nh, n)) != GPMDB_OK)
		return rc;
	for (uint32_t c = 0; c < e->ncols; c++) {
		uint64_t w = stg_type_width((stg_type)cat_cols(e)[c].type);
		uint64_t nb = (n + 31) / 32 * 4;

		if (h->enc_rel && tab_encs(h)[c].kind != STG_ENC_PLAIN) {
			enc_decode(h, c, w, 0, n, tab_col_data(nh, c));
			pool_flush(p, tab_col_data(nh, c), n * w);
		} else {
			pool_memcpy_nodrain(p, tab_col_data(nh, c),
					    tab_col_data(h, c), n * w);
		}
		pool_memcpy_nodrain(p, tab_col_nulls(nh, c),
				    tab_col_nulls(h, c), nb);
		total += n * w + nb;
	}
	pool_memcpy_nodrain(p, tab_deleted_bits(nh), tab_deleted_bits(h),
			    (n + 31) / 32 * 4);
	pool_flush(p, nh, sizeof(*nh) + 16ull * e->ncols);
	pool_drain(p);
	pool_count_persisted(p, total);
	ooff = pool_off(p, h);
	osize = h->extent_size;
	rc = mlog_set_u64(p, e->tdir + sizeof(stg_tdir) + 8 * idx, noff);
	if (rc == GPMDB_OK)
		rc = alloc_free_deferred(p, ooff, osize);
	return rc;
}

int tab_widen(stg_pool *p, uint64_t cat_off, uint64_t idx)
{
	stg_cat_entry *e = cat_entry(p, cat_off);
	stg_tablet_hdr *h = tab_at(p, e, idx);
	struct tab_note *nt;
	int rc;

	if (h == NULL)
		return pool_err(p, GPMDB_CORRUPT,
				"table %s: tablet %llu is damaged", e->name,
				(unsigned long long)idx);
	if (!h->enc_rel)
		return GPMDB_OK;
	/* to its full capacity: appends fit, and the commit's trim (which
	 * would move it in place) leaves it alone */
	if ((nt = trim_note(p, e->table_id, (uint32_t)idx)) == NULL)
		return GPMDB_NOMEM;
	nt->regrown = true;
	rc = enc_note(p, e->table_id);
	if (rc == GPMDB_OK)
		rc = tablet_move(p, cat_off, idx, h->capacity);
	if (rc == GPMDB_OK)
		stg_crash_point("widen.tablet");
	return rc;
}

/* Makes the directory of the table at cat_off hold tablets covering rows
 * [0, rows).  Allocates, so pointers die. */
int tab_ensure_tablets(stg_pool *p, uint64_t cat_off, uint64_t rows)
{
	uint64_t need = rows ? tab_index_of(rows - 1) + 1 : 0;
	uint64_t doff, ext, toff, size, cnt;
	stg_cat_entry *e = cat_entry(p, cat_off);
	stg_tdir *d;
	int rc;

	if (need == 0)
		return GPMDB_OK;
	if ((rc = enc_note(p, e->table_id)) != GPMDB_OK)
		return rc;
	if (e->tdir == 0 || tab_dir(p, e->tdir)->capacity < need) {
		uint64_t old = e->tdir, cap = need < 64 ? 64 : need * 2;

		rc = alloc_extent(p, sizeof(stg_tdir) + 8 * cap, &doff, &ext);
		if (rc != GPMDB_OK)
			return rc;
		e = cat_entry(p, cat_off);
		d = tab_dir(p, doff);
		memset(d, 0, sizeof(*d));
		d->magic = STG_TDIR_MAGIC;
		d->table_id = e->table_id;
		d->extent_size = ext;
		d->capacity = (ext - sizeof(stg_tdir)) / 8;
		if (old) {
			stg_tdir *od = tab_dir(p, old);

			d->count = od->count;
			memcpy(tab_dir_slots(d), tab_dir_slots(od),
			       od->count * 8);
		}
		pool_persist(p, d, sizeof(*d) + d->count * 8);
		rc = mlog_set_u64(p, cat_off + offsetof(stg_cat_entry, tdir),
				  doff);
		if (rc == GPMDB_OK && old)
			rc = alloc_free_deferred(p, old,
						 tab_dir(p, old)->extent_size);
		if (rc != GPMDB_OK)
			return rc;
	}
	/* a tablet trimmed at commit that these rows go past grows to its
	 * capacity again */
	e = cat_entry(p, cat_off);
	cnt = tab_dir(p, e->tdir)->count;
	for (uint64_t i = 0; i < cnt && i < need; i++) {
		stg_tablet_hdr *h = tab_at(p, e, i);
		struct tab_note *nt;

		if (h == NULL)
			return pool_err(p, GPMDB_CORRUPT,
					"table %s: tablet %llu is damaged",
					e->name, (unsigned long long)i);
		/* an encoded tablet the append writes into: widened */
		if (h->enc_rel && rows > e->row_count &&
		    e->row_count < h->first_row + h->capacity) {
			rc = tab_widen(p, cat_off, i);
			if (rc != GPMDB_OK)
				return rc;
			e = cat_entry(p, cat_off);
			continue;
		}
		if (!h->rows_alloc || rows - h->first_row <= tab_room(h))
			continue;
		if ((nt = trim_note(p, e->table_id, (uint32_t)i)) == NULL)
			return GPMDB_NOMEM;
		nt->regrown = true;
		rc = tablet_move(p, cat_off, i, h->capacity);
		if (rc != GPMDB_OK)
			return rc;
		stg_crash_point("grow.tablet");
		e = cat_entry(p, cat_off);
	}
	for (;;) {
		stg_tablet_hdr *h;
		uint64_t *slots;
		struct tab_note *nt;

		e = cat_entry(p, cat_off);
		cnt = tab_dir(p, e->tdir)->count;
		if (cnt >= need)
			break;
		size = tab_layout(cat_cols(e), e->ncols, tab_capacity(cnt),
				  NULL, NULL);
		rc = alloc_extent(p, size, &toff, &ext);
		if (rc != GPMDB_OK)
			return rc;
		e = cat_entry(p, cat_off);
		h = tab_hdr(p, toff);
		memset(h, 0, sizeof(*h));
		h->magic = STG_TABLET_MAGIC;
		h->ncols = e->ncols;
		h->table_id = e->table_id;
		h->index = (uint32_t)cnt;
		h->extent_size = ext;
		h->first_row = tab_first_row(cnt);
		h->capacity = tab_capacity(cnt);
		tab_layout(cat_cols(e), e->ncols, h->capacity, tab_colmap(h),
			   &h->deleted_rel);
		pool_persist(p, h, sizeof(*h) + 16ull * e->ncols);
		/* A slot past the count means nothing: no undo needed. */
		d = tab_dir(p, e->tdir);
		slots = tab_dir_slots(d);
		slots[cnt] = toff;
		pool_persist(p, &slots[cnt], 8);
		rc = mlog_set_u64(p, e->tdir + offsetof(stg_tdir, count),
				  cnt + 1);
		if (rc != GPMDB_OK)
			return rc;
		/* made by this transaction: trimmed in place at commit */
		if ((nt = trim_note(p, e->table_id, (uint32_t)cnt)) == NULL)
			return GPMDB_NOMEM;
		nt->fresh = true;
	}
	return GPMDB_OK;
}

int tab_append_prepare(stg_pool *p, uint64_t cat_off, uint64_t nrows,
		       uint64_t end)
{
	return alloc_prepare(p, tab_append_bytes(p, cat_off, nrows, end));
}

int stg_grow_ahead(stg_pool *p, uint32_t table_id, uint64_t nrows)
{
	uint64_t cat_off, end, size;
	int rc = tab_find_writable(p, table_id, &cat_off);

	if (rc != GPMDB_OK || nrows == 0)
		return rc;
	end = cat_entry(p, cat_off)->row_count + nrows;
	if (end > (1ull << 48))
		return GPMDB_OK; /* the append itself says why */
	size = alloc_prepare_size(p, tab_append_bytes(p, cat_off, nrows, end));
	pool_ahead_start(p, size);
	return GPMDB_OK;
}

uint64_t tab_append_bytes(stg_pool *p, uint64_t cat_off, uint64_t nrows,
			  uint64_t end)
{
	stg_cat_entry *e = cat_entry(p, cat_off);
	uint64_t need = end ? tab_index_of(end - 1) + 1 : 0, bytes = 0, cnt;

	cnt = e->tdir ? tab_dir(p, e->tdir)->count : 0;
	for (uint64_t i = cnt; i < need; i++)
		bytes +=
		    alloc_round(p, tab_layout(cat_cols(e), e->ncols,
					      tab_capacity(i), NULL, NULL));
	if (need > cnt) /* a directory with room for them */
		bytes += alloc_round(p, sizeof(stg_tdir) + 16 * need);
	bytes += idx_append_bytes(p, cat_off, nrows);
	return bytes;
}

/* Makes the heap of the tablet at toff hold need more bytes.  fill: the
 * rows the tablet holds once an append of rows rows is done (0: an
 * UPDATE).  A heap that is full is replaced by a bigger copy: twice the
 * size, or, for an append of at least 1/16 of the tablet's capacity (a
 * bulk load, INSERT ... SELECT), the bytes per row so far times the
 * capacity and 1/32 more, so that a tablet filled by a few big appends
 * is copied about once instead of at every doubling (a load from .tbl
 * files left the old copies as free space in the file: 312 MB of 1745 at
 * TPC-H SF1).  Such an append notes the tablet (tab_note_append) for
 * tab_trim_heaps, which gives the unused tail back at commit. */
int tab_ensure_heap(stg_pool *p, uint64_t toff, uint64_t need, uint64_t fill,
		    uint64_t rows)
{
	stg_tablet_hdr *h = tab_hdr(p, toff);
	uint64_t want, size, noff, ext, old, old_size, used;
	uint64_t pair[2];
	bool bulk;
	int rc;

	stamp_table(p, h->table_id); /* the heap may move */

	if (h->heap_used + need <= h->heap_size)
		return GPMDB_OK;
	if (h->heap_used + need > UINT32_MAX)
		return pool_err(p, GPMDB_TOOBIG,
				"string or blob too big: the string heap of "
				"tablet %u of a table would exceed 4 GiB",
				h->index);
	want = h->heap_used + need;
	bulk = fill && rows * 16 >= h->capacity && fill < h->capacity;
	if (bulk) {
		size = (uint64_t)((double)want * (double)h->capacity /
				  (double)fill);
		size += size / 32;
	} else {
		size = h->heap_size * 2;
	}
	if (size < want)
		size = want;
	if (size > UINT32_MAX)
		size = UINT32_MAX;
	rc = alloc_extent(p, size, &noff, &ext);
	if (rc != GPMDB_OK)
		return rc;
	h = tab_hdr(p, toff);
	old = h->heap_off;
	old_size = h->heap_size;
	used = h->heap_used;
	if (used) {
		pool_memcpy_nodrain(p, pool_at(p, noff), pool_at(p, old), used);
		pool_flush(p, pool_at(p, noff), used);
		pool_drain(p);
		pool_count_persisted(p, used);
	}
	pair[0] = noff;
	pair[1] = ext;
	rc = mlog_write(p, toff + offsetof(stg_tablet_hdr, heap_off), pair,
			sizeof(pair));
	if (rc == GPMDB_OK && old)
		rc = alloc_free_deferred(p, old, old_size);
	return rc;
}

/* Tablet idx of the table at cat_off, made by this transaction, laid out
 * in place for room rows (room <= its room), the rest of its extent
 * freed at commit.  No committed row lives there (a rollback or a crash
 * leaves the rows past the row count, and the extent free), so nothing
 * is logged; the arrays move towards the front, each column's new place
 * before the old places of the columns after it. */
static int tablet_compact(stg_pool *p, uint64_t cat_off, uint64_t idx,
			  uint64_t room)
{
	stg_cat_entry *e = cat_entry(p, cat_off);
	stg_tablet_hdr *h = tab_at(p, e, idx);
	uint64_t *cm, del, size, n, nb, ext, off;
	char *b = (char *)h;
	uint32_t c;

	/* no stamp: no value moves out of reach (tablet_trim) */
	if (h == NULL)
		return GPMDB_OK;
	n = e->row_count - h->first_row;
	if (n > room)
		n = room;
	nb = (n + 31) / 32 * 4;
	cm = malloc(16ull * e->ncols + 16);
	if (cm == NULL)
		return pool_err(p, GPMDB_NOMEM, "out of memory");
	size = tab_layout(cat_cols(e), e->ncols, room, cm, &del);
	for (c = 0; c < e->ncols; c++) {
		uint64_t w = stg_type_width((stg_type)cat_cols(e)[c].type);

		memmove(b + cm[2 * c], tab_col_data(h, c), n * w);
		pool_flush(p, b + cm[2 * c], n * w);
	}
	for (c = 0; c < e->ncols; c++) {
		memmove(b + cm[2 * c + 1], tab_col_nulls(h, c), nb);
		pool_flush(p, b + cm[2 * c + 1], nb);
	}
	memmove(b + del, tab_deleted_bits(h), nb);
	pool_flush(p, b + del, nb);
	memcpy(tab_colmap(h), cm, 16ull * e->ncols);
	free(cm);
	h->deleted_rel = del;
	h->rows_alloc = room;
	ext = h->extent_size;
	h->extent_size = alloc_round(p, size);
	pool_flush(p, h, sizeof(*h) + 16ull * e->ncols);
	pool_drain(p);
	off = pool_off(p, h);
	if (h->extent_size >= ext)
		return GPMDB_OK;
	return alloc_free_deferred(p, off + h->extent_size,
				   ext - h->extent_size);
}

/* Tablet idx of the table at cat_off, made by this transaction and not
 * full, laid out in place for its rows (rounded up to 1024) when that
 * saves at least a chunk and 1/32 of its extent: the last tablet of a
 * table loaded in bulk held up to 1M rows of room (TPC-H SF1: 88 MB of
 * the 1.38 GB in use).  A tablet made earlier is never moved at commit:
 * that would allocate (a commit must not fail for want of room), and a
 * table that grows by a bulk transaction at a time would have its last
 * tablet copied twice per transaction (trimmed, regrown). */
static int tablet_trim(stg_pool *p, uint64_t cat_off, uint64_t idx)
{
	stg_cat_entry *e = cat_entry(p, cat_off);
	stg_tablet_hdr *h = tab_at(p, e, idx);
	uint64_t rows, room, now, after;
	int rc;

	/* No stamp (stamp.c): a compaction moves arrays, not values; the
	 * heap stays.  One here dropped the copies a GPU INSERT left. */
	if (h == NULL || p->sb.version < STG_FORMAT_TRIM ||
	    e->row_count <= h->first_row || h->enc_rel)
		return GPMDB_OK;
	rows = e->row_count - h->first_row;
	room = (rows + 1023) / 1024 * 1024;
	if (room >= tab_room(h))
		return GPMDB_OK;
	now = alloc_round(p, h->extent_size);
	after =
	    alloc_round(p, tab_layout(cat_cols(e), e->ncols, room, NULL, NULL));
	if (now - after < p->sb.chunk_size || (now - after) * 32 < now)
		return GPMDB_OK;
	rc = tablet_compact(p, cat_off, idx, room);
	if (rc == GPMDB_OK)
		stg_crash_point("trim.tablet");
	return rc;
}

int tab_trim_heaps(stg_pool *p)
{
	int rc = GPMDB_OK;

	for (size_t i = 0; i < p->ntrim && rc == GPMDB_OK; i++) {
		uint32_t tid = p->trim[i].table_id, idx = p->trim[i].idx;
		uint64_t cat_off, toff, keep, size;
		stg_tablet_hdr *h;

		/* a table dropped since (or made by a statement rolled
		 * back): nothing to trim */
		if (cat_find_table(p, tid, &cat_off) != GPMDB_OK) {
			pool_clear_err(p);
			continue;
		}
		h = tab_at(p, cat_entry(p, cat_off), idx);
		if (h == NULL || h->enc_rel) /* sealed, its heap exact */
			continue;
		keep = alloc_round(p, h->heap_used ? h->heap_used : 1);
		size = h->heap_size;
		if (h->heap_off && keep < size) {
			toff = pool_off(p, h);
			rc = mlog_set_u64(
			    p, toff + offsetof(stg_tablet_hdr, heap_size),
			    keep);
			if (rc == GPMDB_OK)
				rc = alloc_free_deferred(p, h->heap_off + keep,
							 size - keep);
			if (rc == GPMDB_OK)
				stg_crash_point("trim.heap");
		}
		if (rc == GPMDB_OK && p->trim[i].fresh && !p->trim[i].regrown)
			rc = tablet_trim(p, cat_off, idx);
	}
	p->ntrim = 0;
	return rc;
}

int tab_free_all(stg_pool *p, uint64_t cat_off)
{
	stg_cat_entry *e = cat_entry(p, cat_off);
	stg_tdir *d;
	uint64_t i;
	int rc;

	stamp_cat(p, cat_off); /* its bytes move or go */

	if (e->tdir == 0)
		return GPMDB_OK;
	if (!pool_range_ok(p, e->tdir, sizeof(stg_tdir)))
		return pool_err(p, GPMDB_CORRUPT,
				"table %s: tablet directory outside the pool",
				e->name);
	d = tab_dir(p, e->tdir);
	for (i = 0; i < d->count; i++) {
		stg_tablet_hdr *h = tab_at(p, e, i);

		if (h == NULL)
			return pool_err(p, GPMDB_CORRUPT,
					"table %s: tablet %llu is damaged",
					e->name, (unsigned long long)i);
		if (h->heap_off) {
			rc = alloc_free_deferred(p, h->heap_off, h->heap_size);
			if (rc != GPMDB_OK)
				return rc;
		}
		rc = alloc_free_deferred(p, pool_off(p, h), h->extent_size);
		if (rc != GPMDB_OK)
			return rc;
	}
	return alloc_free_deferred(p, e->tdir, d->extent_size);
}

/* ---- Counts ------------------------------------------------------------ */

uint64_t stg_row_count(stg_pool *p, uint32_t table_id)
{
	uint64_t off;

	if (p == NULL || tab_find_table(p, table_id, &off) != GPMDB_OK)
		return 0;
	return cat_entry(p, off)->row_count;
}

uint64_t stg_deleted_count(stg_pool *p, uint32_t table_id)
{
	uint64_t off;

	if (p == NULL || tab_find_table(p, table_id, &off) != GPMDB_OK)
		return 0;
	return cat_entry(p, off)->deleted_count;
}

int stg_table_bytes(stg_pool *p, uint32_t table_id, uint64_t *bytes)
{
	stg_cat_entry *e;
	stg_tdir *d;
	uint64_t off, n;
	int rc;

	*bytes = 0;
	if ((rc = tab_find_table(p, table_id, &off)) != GPMDB_OK)
		return rc;
	e = cat_entry(p, off);
	n = e->extent_size;
	if (e->tdir) {
		if (!pool_range_ok(p, e->tdir, sizeof(stg_tdir)))
			return pool_err(p, GPMDB_CORRUPT,
					"table %s: tablet directory outside "
					"the pool",
					e->name);
		d = tab_dir(p, e->tdir);
		n += d->extent_size;
		for (uint64_t i = 0; i < d->count; i++) {
			stg_tablet_hdr *h = tab_at(p, e, i);
			if (h == NULL)
				return pool_err(p, GPMDB_CORRUPT,
						"table %s: tablet %llu is "
						"damaged",
						e->name, (unsigned long long)i);
			n += h->extent_size + (h->heap_off ? h->heap_size : 0);
		}
	}
	*bytes = n;
	return GPMDB_OK;
}

/* ---- Append ------------------------------------------------------------ */

typedef struct {
	stg_tablet_hdr *h;
	uint64_t b0, b1;    /* batch rows [b0, b1) */
	uint64_t local0;    /* tablet row of batch row b0 */
	uint64_t heap_base; /* heap offset where this segment's strings go */
	uint64_t heap_need;
} app_seg;

typedef struct {
	uint32_t seg;
	int col;	  /* -1: deleted bits */
	int kind;	  /* 0: values, 1: NULL bits, 2: TEXT, 3: deleted */
	uint64_t r0, r1;  /* batch rows */
	uint64_t heap_at; /* TEXT: where this column's strings start */
} app_task;

static uint64_t text_bytes(const stg_col_batch *cb, uint64_t r0, uint64_t r1)
{
	const stg_text *t = cb->values;
	uint64_t r, n = 0;

	for (r = r0; r < r1; r++)
		if (!(cb->nulls && bit_get(cb->nulls, r)))
			n += t[r].len;
	return n;
}

static uint64_t run_task(stg_pool *p, const app_task *t, const app_seg *sg,
			 const stg_cat_column *cc, const stg_col_batch *cols,
			 const uint8_t *from)
{
	stg_tablet_hdr *h = sg->h;
	uint64_t lr = sg->local0 + (t->r0 - sg->b0), n = t->r1 - t->r0;

	switch (t->kind) {
	case 0: {
		size_t w = stg_type_width((stg_type)cc[t->col].type);
		char *dst = (char *)tab_col_data(h, (uint32_t)t->col) + lr * w;

		tab_copy_col(p, dst, &cols[t->col], from ? from[t->col] : 0,
			     t->r0, n, w);
		return n * w;
	}
	case 1: {
		uint32_t *nb = tab_col_nulls(h, (uint32_t)t->col);

		bits_copy(nb, lr, cols[t->col].nulls, t->r0, n);
		pool_flush(p, &nb[lr >> 5],
			   ((lr + n + 31) >> 5) * 4 - (lr >> 5) * 4);
		return n / 8;
	}
	case 2: {
		const stg_text *src = cols[t->col].values;
		const uint32_t *sn = cols[t->col].nulls;
		stg_strref *dst =
		    (stg_strref *)tab_col_data(h, (uint32_t)t->col);
		char *heap = pool_at(p, h->heap_off);
		uint64_t at = t->heap_at, r;
		uint32_t *nb = tab_col_nulls(h, (uint32_t)t->col);

		for (r = t->r0; r < t->r1; r++) {
			stg_strref *d = &dst[lr + (r - t->r0)];

			if (sn && bit_get(sn, r)) {
				d->off = 0;
				d->len = 0;
				continue;
			}
			if (src[r].len)
				memcpy(heap + at, src[r].ptr, src[r].len);
			d->off = (uint32_t)at;
			d->len = src[r].len;
			at += src[r].len;
		}
		pool_flush(p, heap + t->heap_at, at - t->heap_at);
		pool_flush(p, &dst[lr], n * sizeof(stg_strref));
		bits_copy(nb, lr, sn, t->r0, n);
		pool_flush(p, &nb[lr >> 5],
			   ((lr + n + 31) >> 5) * 4 - (lr >> 5) * 4);
		return (at - t->heap_at) + n * sizeof(stg_strref) + n / 8;
	}
	default: {
		uint32_t *db = tab_deleted_bits(h);

		bits_copy(db, lr, NULL, 0, n);
		pool_flush(p, &db[lr >> 5],
			   ((lr + n + 31) >> 5) * 4 - (lr >> 5) * 4);
		return n / 8;
	}
	}
}

int tab_check_not_null(stg_pool *p, stg_cat_entry *e, uint32_t c,
		       const uint32_t *nulls, uint64_t n, const char *what)
{
	stg_cat_column *cc = cat_cols(e);
	uint64_t first;

	if (!(cc[c].flags & STG_COL_NOTNULL) || nulls == NULL ||
	    !any_bit(nulls, n, &first))
		return GPMDB_OK;
	return pool_err(p, GPMDB_CONSTRAINT,
			"NOT NULL constraint failed: %s.%s (%s %llu)", e->name,
			cc[c].name, what, (unsigned long long)first + 1);
}

int stg_append_from(stg_pool *p, uint32_t table_id, const stg_col_batch *cols,
		    const uint8_t *from, uint64_t nrows)
{
	uint64_t cat_off, start, end, nseg, s, i, total = 0, t0;
	app_seg *segs = NULL;
	app_task *tasks = NULL;
	size_t ntask = 0, captask;
	stg_cat_entry *e;
	stg_cat_column *cc;
	uint32_t ncols, c;
	bool has_text = false;
	int rc;

	rc = tab_find_writable(p, table_id, &cat_off);
	if (rc != GPMDB_OK)
		return rc;
	stamp_table(p, table_id);
	if (nrows == 0)
		return GPMDB_OK;
	if (cols == NULL)
		return pool_err(p, GPMDB_MISUSE, "stg_append: no columns");
	e = cat_entry(p, cat_off);
	ncols = e->ncols;
	cc = cat_cols(e);
	for (c = 0; c < ncols; c++) {
		rc = tab_batch_col_ok(p, &cc[c], &cols[c], from ? from[c] : 0);
		if (rc == GPMDB_OK)
			rc = tab_check_not_null(p, e, c, cols[c].nulls, nrows,
						"row");
		if (rc != GPMDB_OK)
			return rc;
		if (cc[c].type == STG_T_TEXT)
			has_text = true;
	}
	start = e->row_count;
	end = start + nrows;
	if (end < start || end > (1ull << 48))
		return pool_err(p, GPMDB_TOOBIG, "table %s: too many rows",
				e->name);

	/* unique keys before anything is written */
	t0 = pool_now_ns();
	rc = idx_check_append_live(p, cat_off, cols, from, nrows);
	p->wt.key_check_ns += pool_now_ns() - t0;
	/* the pool grown once for the tablets and the index rebuilds */
	if (rc == GPMDB_OK)
		rc = tab_append_prepare(p, cat_off, nrows, end);
	if (rc != GPMDB_OK)
		return rc;
	rc = tab_ensure_tablets(p, cat_off, end);
	if (rc == GPMDB_OK)
		rc = tab_note_append(p, table_id, start, end);
	if (rc != GPMDB_OK)
		return rc;
	e = cat_entry(p, cat_off); /* the pool may have moved */
	cc = cat_cols(e);
	nseg = tab_index_of(end - 1) - tab_index_of(start) + 1;
	segs = calloc(nseg, sizeof(*segs));
	if (segs == NULL)
		return pool_err(p, GPMDB_NOMEM, "out of memory");
	for (s = 0; s < nseg; s++) {
		uint64_t ti = tab_index_of(start) + s;
		uint64_t f = tab_first_row(ti), cap = tab_capacity(ti);
		uint64_t r0 = start > f ? start : f;
		uint64_t r1 = end < f + cap ? end : f + cap;

		segs[s].b0 = r0 - start;
		segs[s].b1 = r1 - start;
		segs[s].local0 = r0 - f;
		if (has_text) {
			for (c = 0; c < ncols; c++)
				if (cc[c].type == STG_T_TEXT)
					segs[s].heap_need += text_bytes(
					    &cols[c], segs[s].b0, segs[s].b1);
		}
	}
	/* Every allocation before any pointer is kept. */
	for (s = 0; has_text && s < nseg; s++) {
		uint64_t ti = tab_index_of(start) + s;
		stg_tablet_hdr *h = tab_at(p, cat_entry(p, cat_off), ti);

		if (h == NULL) {
			rc = pool_err(p, GPMDB_CORRUPT, "tablet %llu missing",
				      (unsigned long long)ti);
			goto out;
		}
		if (segs[s].heap_need) {
			rc = tab_ensure_heap(
			    p, pool_off(p, h), segs[s].heap_need,
			    segs[s].local0 + segs[s].b1 - segs[s].b0,
			    segs[s].b1 - segs[s].b0);
			if (rc != GPMDB_OK)
				goto out;
		}
	}
	e = cat_entry(p, cat_off);
	cc = cat_cols(e);
	captask = nseg * (2 * (size_t)ncols + 1) + 16;
	for (s = 0; s < nseg; s++) {
		segs[s].h = tab_at(p, e, tab_index_of(start) + s);
		if (segs[s].h == NULL) {
			rc = pool_err(p, GPMDB_CORRUPT, "tablet missing");
			goto out;
		}
		segs[s].heap_base = segs[s].h->heap_used;
		for (c = 0; c < ncols; c++) {
			uint64_t w = stg_type_width((stg_type)cc[c].type);

			if (cc[c].type != STG_T_TEXT)
				captask +=
				    (segs[s].b1 - segs[s].b0) * w / COPY_PIECE;
		}
	}
	tasks = calloc(captask, sizeof(*tasks));
	if (tasks == NULL) {
		rc = pool_err(p, GPMDB_NOMEM, "out of memory");
		goto out;
	}
	for (s = 0; s < nseg; s++) {
		uint64_t heap_at = segs[s].heap_base;

		for (c = 0; c < ncols; c++) {
			uint64_t w = stg_type_width((stg_type)cc[c].type);
			uint64_t piece = COPY_PIECE / w, r;
			app_task t = {(uint32_t)s, (int)c, 0, 0, 0, 0};

			if (cc[c].type == STG_T_TEXT) {
				t.kind = 2;
				t.r0 = segs[s].b0;
				t.r1 = segs[s].b1;
				t.heap_at = heap_at;
				heap_at += text_bytes(&cols[c], t.r0, t.r1);
				tasks[ntask++] = t;
				continue;
			}
			for (r = segs[s].b0; r < segs[s].b1; r += piece) {
				t.r0 = r;
				t.r1 = r + piece < segs[s].b1 ? r + piece
							      : segs[s].b1;
				tasks[ntask++] = t;
			}
			t.kind = 1;
			t.r0 = segs[s].b0;
			t.r1 = segs[s].b1;
			tasks[ntask++] = t;
		}
		tasks[ntask++] =
		    (app_task){(uint32_t)s, -1, 3, segs[s].b0, segs[s].b1, 0};
	}

#pragma omp parallel for schedule(dynamic, 1) reduction(+ : total) if (nrows >= PAR_MIN_ROWS)
	for (i = 0; i < ntask; i++)
		total +=
		    run_task(p, &tasks[i], &segs[tasks[i].seg], cc, cols, from);
	pool_drain(p);
	pool_count_persisted(p, total);
	stg_crash_point("append.data");

	for (s = 0; has_text && s < nseg; s++) {
		stg_tablet_hdr *h = segs[s].h;

		if (segs[s].heap_need == 0)
			continue;
		rc = mlog_set_u64(
		    p, pool_off(p, h) + offsetof(stg_tablet_hdr, heap_used),
		    segs[s].heap_base + segs[s].heap_need);
		if (rc != GPMDB_OK)
			goto out;
	}
	rc = mlog_set_u64(p, cat_off + offsetof(stg_cat_entry, row_count), end);
	if (rc == GPMDB_OK)
		stg_crash_point("append.count");
	if (rc == GPMDB_OK) {
		t0 = pool_now_ns();
		rc = idx_after_append(p, cat_off, start, nrows);
		p->wt.index_ns += pool_now_ns() - t0;
	}
out:
	free(tasks);
	free(segs);
	return rc;
}

/* ---- Read ---------------------------------------------------------------- */

int stg_read(stg_pool *p, uint32_t table_id, uint32_t col, uint64_t first_row,
	     uint64_t n, void *out, uint32_t *nulls)
{
	uint64_t cat_off, r, done = 0;
	stg_cat_entry *e;
	stg_cat_column *cc;
	size_t w;
	int rc;

	if (p == NULL)
		return GPMDB_MISUSE;
	pool_clear_err(p);
	rc = tab_find_table(p, table_id, &cat_off);
	if (rc != GPMDB_OK)
		return rc;
	e = cat_entry(p, cat_off);
	if (col >= e->ncols)
		return pool_err(p, GPMDB_RANGE, "table %s has no column %u",
				e->name, col);
	if (first_row > e->row_count || n > e->row_count - first_row)
		return pool_err(p, GPMDB_RANGE,
				"table %s: rows %llu..%llu past its %llu rows",
				e->name, (unsigned long long)first_row,
				(unsigned long long)(first_row + n),
				(unsigned long long)e->row_count);
	if (n == 0)
		return GPMDB_OK;
	if (out == NULL)
		return pool_err(p, GPMDB_MISUSE, "stg_read: no output buffer");
	cc = cat_cols(e);
	w = stg_type_width((stg_type)cc[col].type);
	if (nulls)
		memset(nulls, 0, (n + 31) / 32 * 4);
	while (done < n) {
		uint64_t row = first_row + done, ti = tab_index_of(row);
		uint64_t lr = row - tab_first_row(ti);
		uint64_t k = tab_capacity(ti) - lr;
		stg_tablet_hdr *h = tab_at(p, e, ti);
		const uint32_t *nb;

		if (k > n - done)
			k = n - done;
		if (h == NULL)
			return pool_err(p, GPMDB_CORRUPT,
					"table %s: tablet %llu missing",
					e->name, (unsigned long long)ti);
		nb = tab_col_nulls(h, col);
		if (h->enc_rel && tab_encs(h)[col].kind != STG_ENC_PLAIN) {
			rc = enc_read(p, h, col, (stg_type)cc[col].type, lr, k,
				      out, done);
			if (rc != GPMDB_OK)
				return pool_err(p, rc, "table %s: %s", e->name,
						stg_decode_errstr(rc));
		} else if (cc[col].type == STG_T_TEXT) {
			const stg_strref *sr = tab_col_data(h, col);
			const char *heap =
			    h->heap_off ? (const char *)pool_at(p, h->heap_off)
					: "";
			stg_text *t = (stg_text *)out + done;

			for (r = 0; r < k; r++) {
				bool isnull = bit_get(nb, lr + r);

				t[r].ptr =
				    isnull ? NULL : heap + sr[lr + r].off;
				t[r].len = isnull ? 0 : sr[lr + r].len;
			}
		} else {
			memcpy((char *)out + done * w,
			       (const char *)tab_col_data(h, col) + lr * w,
			       k * w);
		}
		if (nulls)
			bits_copy(nulls, done, nb, lr, k);
		done += k;
	}
	return GPMDB_OK;
}

/* ---- Views -------------------------------------------------------------- */

#define VSLOTS 256

struct tab_vslot {
	uint32_t table_id;
	uint32_t idx;
	int ncols;
	const void **data;
	const uint32_t **nulls;
	stg_colenc *enc;
	tab_vslot *next;
};

void tab_views_free(stg_pool *p)
{
	size_t i;

	for (i = 0; p->vslots && i < p->vcap; i++) {
		tab_vslot *v = p->vslots[i], *nx;

		for (; v; v = nx) {
			nx = v->next;
			free(v->data);
			free(v->nulls);
			free(v->enc);
			free(v);
		}
	}
	free(p->vslots);
	p->vslots = NULL;
	p->vcap = 0;
}

static tab_vslot *vslot_get(stg_pool *p, uint32_t tid, uint32_t idx, int ncols)
{
	size_t b;
	tab_vslot *v;

	if (p->vslots == NULL) {
		p->vslots = calloc(VSLOTS, sizeof(*p->vslots));
		if (p->vslots == NULL)
			return NULL;
		p->vcap = VSLOTS;
	}
	b = (tid * 2654435761u + idx) % p->vcap;
	for (v = p->vslots[b]; v; v = v->next)
		if (v->table_id == tid && v->idx == idx && v->ncols == ncols)
			return v;
	v = calloc(1, sizeof(*v));
	if (v == NULL)
		return NULL;
	v->data = calloc((size_t)ncols, sizeof(*v->data));
	v->nulls = calloc((size_t)ncols, sizeof(*v->nulls));
	v->enc = calloc((size_t)ncols, sizeof(*v->enc));
	if (v->data == NULL || v->nulls == NULL || v->enc == NULL) {
		free(v->data);
		free(v->nulls);
		free(v->enc);
		free(v);
		return NULL;
	}
	v->table_id = tid;
	v->idx = idx;
	v->ncols = ncols;
	v->next = p->vslots[b];
	p->vslots[b] = v;
	return v;
}

int stg_tablet_count(stg_pool *p, uint32_t table_id, uint32_t *n)
{
	uint64_t cat_off, rc_rows;
	int rc;

	if (p == NULL || n == NULL)
		return GPMDB_MISUSE;
	pool_clear_err(p);
	rc = tab_find_table(p, table_id, &cat_off);
	if (rc != GPMDB_OK)
		return rc;
	rc_rows = cat_entry(p, cat_off)->row_count;
	*n = rc_rows ? (uint32_t)(tab_index_of(rc_rows - 1) + 1) : 0;
	return GPMDB_OK;
}

int stg_tablet_get(stg_pool *p, uint32_t table_id, uint32_t idx,
		   stg_tablet_view *view)
{
	uint64_t cat_off, rows;
	stg_cat_entry *e;
	stg_tablet_hdr *h;
	tab_vslot *v;
	uint32_t c, cnt;
	int rc;

	if (p == NULL || view == NULL)
		return GPMDB_MISUSE;
	rc = stg_tablet_count(p, table_id, &cnt);
	if (rc != GPMDB_OK)
		return rc;
	if (idx >= cnt)
		return pool_err(p, GPMDB_RANGE,
				"tablet %u of table %u does not exist (%u "
				"tablets)",
				idx, table_id, cnt);
	cat_find_table(p, table_id, &cat_off);
	e = cat_entry(p, cat_off);
	h = tab_at(p, e, idx);
	if (h == NULL)
		return pool_err(p, GPMDB_CORRUPT,
				"table %s: tablet %u is damaged", e->name, idx);
	v = vslot_get(p, table_id, idx, (int)e->ncols);
	if (v == NULL)
		return pool_err(p, GPMDB_NOMEM, "out of memory");
	for (c = 0; c < e->ncols; c++) {
		v->data[c] = tab_col_data(h, c);
		v->nulls[c] = tab_col_nulls(h, c);
		if (h->enc_rel) {
			enc_colenc(h, c, &v->enc[c]);
			v->enc[c].width = (uint8_t)stg_type_width(
			    (stg_type)cat_cols(e)[c].type);
			if (v->enc[c].kind != STG_ENC_PLAIN)
				v->data[c] = NULL; /* stg_tablet_col reads it */
		}
	}
	rows = e->row_count - h->first_row;
	view->first_row = h->first_row;
	view->nrows = (uint32_t)(rows < h->capacity ? rows : h->capacity);
	view->capacity = (uint32_t)h->capacity;
	view->ncols = (int)e->ncols;
	view->data = v->data;
	view->nulls = v->nulls;
	view->deleted = tab_deleted_bits(h);
	view->heap = h->heap_off ? (const char *)pool_at(p, h->heap_off) : NULL;
	view->heap_used = h->heap_off ? h->heap_used : 0;
	view->enc = h->enc_rel ? v->enc : NULL;
	return GPMDB_OK;
}
