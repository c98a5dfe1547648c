/*
 * tablet_hcl.c - UPDATE and DELETE of rows in tablets, and their undo
 * (rollback and recovery), logged with HCL (hcl.h); tablet.c has the
 * tablets themselves.
 *
 * UPDATE and DELETE log old values with HCL, in three phases like a GPU
 * batch with kernel-scope persist barriers: every thread (row i of the
 * batch is thread i) writes its entries, all entries are persisted; all
 * tails are set and persisted; then the new data is written in place and
 * persisted.  Entries never share words (HCL's slots), NULL and deleted
 * bits of different rows may share a word and are set with atomic
 * operations.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "crashpoints.h"
#include "internal.h"

#define PAR_MIN_ROWS 8192 /* below this, one thread */

/* ---- HCL batches: update, delete, undo ------------------------------- */

typedef struct {
	stg_pool *p;
	uint64_t cat_off;
	bool recovery;
	int rc;
} undo_ctx;

/* Restores what one HCL entry logged (e: its table's catalog entry): a
 * cell's old value and NULL bit, or a row's deleted bit, flushed, not
 * drained.  Returns the bytes flushed; 0 for an entry past the row count
 * (appended after the point rolled back to) or in an encoded tablet; -1
 * for a damaged entry. */
static int64_t undo_entry(stg_pool *p, stg_cat_entry *e, const hcl_entry *en)
{
	uint64_t lr;
	stg_tablet_hdr *h;

	if (en->row >= e->row_count)
		return 0;
	h = tab_at(p, e, tab_index_of(en->row));
	if (h == NULL || (en->kind == HCL_K_VALUE && en->col >= e->ncols) ||
	    (en->kind != HCL_K_VALUE && en->kind != HCL_K_DELETE))
		return -1;
	lr = en->row - h->first_row;
	/* An encoded tablet is never written in place: the value was
	 * written in a widened copy the log's undo dropped (encode.c). */
	if (en->kind == HCL_K_VALUE && h->enc_rel &&
	    tab_encs(h)[en->col].kind != STG_ENC_PLAIN)
		return 0;
	if (en->kind == HCL_K_VALUE) {
		size_t w = stg_type_width((stg_type)cat_cols(e)[en->col].type);
		char *dst = (char *)tab_col_data(h, en->col) + lr * w;
		uint32_t *nb = tab_col_nulls(h, en->col);

		memcpy(dst, &en->old_value, w); /* little-endian low bytes */
		tab_bit_set_atomic(nb, lr, en->old_null != 0);
		pool_flush(p, dst, w);
		pool_flush(p, &nb[lr >> 5], 4);
		return (int64_t)w + 4;
	}
	tab_bit_set_atomic(tab_deleted_bits(h), lr, false);
	pool_flush(p, &tab_deleted_bits(h)[lr >> 5], 4);
	return 4;
}

static int hcl_visit(void *vctx, const hcl_entry *en)
{
	undo_ctx *u = vctx;
	stg_pool *p = u->p;
	stg_cat_entry *e = cat_entry(p, u->cat_off);
	int64_t b = undo_entry(p, e, en);

	if (b < 0) {
		u->rc = pool_err(p, GPMDB_CORRUPT,
				 "HCL entry for table %s row %llu is damaged",
				 e->name, (unsigned long long)en->row);
		return u->rc;
	}
	if (b == 0)
		return 0;
	pool_drain(p);
	pool_count_persisted(p, (uint64_t)b);
	if (u->recovery) {
		p->recovered_entries++;
		stg_crash_point("recovery.hcl");
	}
	return 0;
}

/* ---- The undo on every core ------------------------------------------
 * hcl_foreach visits a segment in one order so that a cell logged twice
 * gets its oldest image last.  A batch names each cell once (an UPDATE
 * or DELETE names a row once), and then the entries may be applied in
 * any order: a 2.5M-row UPDATE's undo took 1.4 s on one core, flushing
 * and draining every entry (bench_batch's recovery, issue 16).  A first
 * pass marks every cell in a bitmap per column (and one for the deleted
 * bits); a cell seen twice, or a bitmap that cannot be had, sends the
 * segment to the serial undo.  The second pass restores the cells on
 * every core, flushes each and drains once at the end. */
#define UNDO_PAR_MIN 8192u /* entries: below, one core is as quick */

typedef struct {
	uint64_t rows;	 /* the table's row count: later rows are skipped */
	uint32_t nslots; /* its columns, then one for the deleted bits */
	uint64_t **seen; /* per slot, a bit per row, made on first use */
} undo_dups;

static int dup_visit(void *vctx, const hcl_entry *en, uint64_t acc[2])
{
	undo_dups *d = vctx;
	uint32_t slot = en->kind == HCL_K_VALUE ? en->col : d->nslots - 1;
	uint64_t *bm, *fresh = NULL, m = 1ull << (en->row & 63);

	(void)acc;
	/* rows past the count are skipped by the undo; a damaged entry
	 * is reported by it */
	if (en->row >= d->rows || slot >= d->nslots)
		return 0;
	bm = __atomic_load_n(&d->seen[slot], __ATOMIC_ACQUIRE);
	if (bm == NULL) {
		fresh = calloc((d->rows + 63) / 64, sizeof(uint64_t));
		if (fresh == NULL)
			return GPMDB_NOMEM;
		if (__atomic_compare_exchange_n(&d->seen[slot], &bm, fresh,
						false, __ATOMIC_ACQ_REL,
						__ATOMIC_ACQUIRE))
			bm = fresh;
		else
			free(fresh); /* another core's came first: bm */
	}
	return __atomic_fetch_or(&bm[en->row >> 6], m, __ATOMIC_RELAXED) & m
		   ? 1 /* logged twice */
		   : 0;
}

/* hcl_visit on every core: flushed, drained once by the caller; acc:
 * bytes flushed, entries applied. */
static int par_visit(void *vctx, const hcl_entry *en, uint64_t acc[2])
{
	undo_ctx *u = vctx;
	int64_t b = undo_entry(u->p, cat_entry(u->p, u->cat_off), en);

	if (b < 0)
		return GPMDB_CORRUPT; /* the caller reports it */
	if (b == 0)
		return 0;
	acc[0] += (uint64_t)b;
	acc[1]++;
	if (u->recovery)
		stg_crash_point("recovery.hcl");
	return 0;
}

/* The undo of segment seg on every core: GPMDB_OK done, 1 left to the
 * serial undo (a small segment, a cell logged twice, msync mode's page
 * tracking, no memory), else an error. */
static int undo_par(undo_ctx *u, const void *seg, uint64_t seg_size)
{
	stg_pool *p = u->p;
	stg_cat_entry *e = cat_entry(p, u->cat_off);
	undo_dups d = {e->row_count, e->ncols + 1, NULL};
	uint64_t n = hcl_entry_count(seg, seg_size), sum[2];
	int rc;

	/* msync mode tracks dirty pages in bitmaps no core shares */
	if (n < UNDO_PAR_MIN || (p->dur == STG_DUR_MSYNC && !p->private_map))
		return 1;
	d.seen = calloc(d.nslots, sizeof(*d.seen));
	if (d.seen == NULL)
		return 1;
	rc = hcl_foreach_par(seg, seg_size, dup_visit, &d, sum);
	for (uint32_t i = 0; i < d.nslots; i++)
		free(d.seen[i]);
	free(d.seen);
	if (rc != GPMDB_OK)
		return 1;
	crash_points_load(); /* before the cores read the table */
	rc = hcl_foreach_par(seg, seg_size, par_visit, u, sum);
	pool_drain(p);
	pool_count_persisted(p, sum[0]);
	if (u->recovery)
		p->recovered_entries += sum[1];
	if (rc != GPMDB_OK)
		return pool_err(p, GPMDB_CORRUPT,
				"HCL segment at 0x%llx of table %s is damaged",
				(unsigned long long)pool_off(p, seg), e->name);
	return GPMDB_OK;
}

static uint64_t batch_id(uint64_t gen, uint64_t seq)
{
	return (gen << 32) | (seq & 0xffffffffu);
}

int tab_hcl_undo(stg_pool *p, const stg_log_hcl *lh, uint64_t batch_seq,
		 bool in_recovery)
{
	undo_ctx u = {p, 0, in_recovery, GPMDB_OK};
	hcl_header hh;
	void *seg;
	int rc;

	/* Against the mapping: the first undo pass may have shrunk the
	 * root's pool size below a segment allocated after growing. */
	if (lh->seg_off < p->sb.data_off || lh->seg_off > p->map_len ||
	    lh->seg_size > p->map_len - lh->seg_off)
		return pool_err(p, GPMDB_CORRUPT,
				"HCL segment 0x%llx+%llu outside the pool",
				(unsigned long long)lh->seg_off,
				(unsigned long long)lh->seg_size);
	seg = pool_at(p, lh->seg_off);
	/* No valid header of this batch: the writer stopped before its
	 * first entry, so there is nothing to undo. */
	if (hcl_header_check(seg, lh->seg_size) != GPMDB_OK)
		return GPMDB_OK;
	memcpy(&hh, seg, sizeof(hh));
	if (hh.batch_seq != batch_id(p->log_gen, batch_seq) ||
	    hh.table_id != lh->table_id)
		return GPMDB_OK;
	/* A table created after the point we roll back to is gone now,
	 * and its rows need no undo. */
	if (cat_find_table(p, lh->table_id, &u.cat_off) != GPMDB_OK) {
		pool_clear_err(p);
		return GPMDB_OK;
	}
	/* At open, a GPU recovery kernel may apply the segment (hcl_gpu.c);
	 * whatever it cannot do, the CPU does below (undo is idempotent). */
	if (in_recovery && tab_hcl_undo_gpu(p, u.cat_off, lh) == GPMDB_OK)
		return GPMDB_OK;
	if ((rc = undo_par(&u, seg, lh->seg_size)) != 1)
		return rc;
	rc = hcl_foreach(seg, lh->seg_size, hcl_visit, &u);
	if (u.rc != GPMDB_OK)
		return u.rc;
	if (rc != GPMDB_OK)
		return pool_err(p, GPMDB_CORRUPT,
				"HCL segment at 0x%llx is damaged",
				(unsigned long long)lh->seg_off);
	return GPMDB_OK;
}

/* The zones of the cells an HCL entry names (a GPU batch's kernels
 * wrote them: zones.c). */
static int mark_visit(void *vctx, const hcl_entry *en)
{
	undo_ctx *u = vctx;
	stg_pool *p = u->p;
	stg_cat_entry *e = cat_entry(p, u->cat_off);
	stg_tablet_hdr *h = tab_at(p, e, tab_index_of(en->row));
	uint64_t lr;

	if (h == NULL || (en->kind == HCL_K_VALUE && en->col >= e->ncols))
		return 0; /* nothing written there */
	lr = en->row - h->first_row;
	if (en->kind == HCL_K_VALUE) {
		size_t w = stg_type_width((stg_type)cat_cols(e)[en->col].type);

		zone_mark(p, pool_off(p, tab_col_data(h, en->col)) + lr * w, w);
		zone_mark(p, pool_off(p, &tab_col_nulls(h, en->col)[lr >> 5]),
			  4);
	} else {
		zone_mark(p, pool_off(p, &tab_deleted_bits(h)[lr >> 5]), 4);
	}
	return 0;
}

int tab_zone_mark_hcl(stg_pool *p, uint64_t cat_off, uint64_t seg_off,
		      uint64_t seg_size)
{
	undo_ctx u = {p, cat_off, false, GPMDB_OK};
	void *seg = pool_at(p, seg_off);

	if (zone_table(p, &(uint64_t){0}) == NULL ||
	    hcl_header_check(seg, seg_size) != GPMDB_OK)
		return GPMDB_OK;
	if (hcl_foreach(seg, seg_size, mark_visit, &u) != GPMDB_OK)
		return pool_err(p, GPMDB_CORRUPT,
				"HCL segment at 0x%llx is damaged",
				(unsigned long long)seg_off);
	return GPMDB_OK;
}

void tab_zone_mark_rows(stg_pool *p, uint64_t cat_off, uint64_t first,
			uint64_t n)
{
	stg_cat_entry *e = cat_entry(p, cat_off);
	uint64_t row = first, end = first + n;

	if (n == 0 || zone_table(p, &(uint64_t){0}) == NULL)
		return;
	while (row < end) {
		uint64_t ti = tab_index_of(row), lo, hi;
		stg_tablet_hdr *h = tab_at(p, e, ti);

		if (h == NULL)
			return;
		lo = row - h->first_row;
		hi = end - h->first_row < h->capacity ? end - h->first_row
						      : h->capacity;
		for (uint32_t c = 0; c < e->ncols; c++) {
			size_t w =
			    stg_type_width((stg_type)cat_cols(e)[c].type);

			zone_mark(p, pool_off(p, tab_col_data(h, c)) + lo * w,
				  (hi - lo) * w);
			zone_mark(p, pool_off(p, &tab_col_nulls(h, c)[lo >> 5]),
				  ((hi - 1) / 32 - lo / 32 + 1) * 4);
		}
		zone_mark(p, pool_off(p, &tab_deleted_bits(h)[lo >> 5]),
			  ((hi - 1) / 32 - lo / 32 + 1) * 4);
		row = h->first_row + hi;
	}
}

/* Allocates and starts an HCL segment: log entry, deferred free, zeroed
 * tails, header.  *seg_off and *g describe it. */
int tab_hcl_begin(stg_pool *p, uint32_t table_id, uint64_t n, uint32_t epp,
		  hcl_geom *g, uint64_t *seg_off)
{
	stg_log_hcl lh;
	uint64_t size, ext, seq;
	char *seg;
	int rc;

	*g = hcl_geom_for(n, epp);
	size = hcl_segment_bytes(g);
	rc = alloc_extent(p, size, seg_off, &ext);
	if (rc != GPMDB_OK)
		return rc;
	memset(&lh, 0, sizeof(lh));
	lh.seg_off = *seg_off;
	lh.seg_size = size;
	lh.table_id = table_id;
	rc = mlog_append(p, STG_LOG_HCL_BATCH, &lh, sizeof(lh), &seq);
	if (rc == GPMDB_OK)
		rc = alloc_free_deferred(p, *seg_off, ext);
	if (rc != GPMDB_OK)
		return rc;
	seg = pool_at(p, *seg_off);
	/* Tails first: the header makes them count. */
	memset(seg + hcl_tails_offset(), 0, 4 * hcl_threads(g));
	pool_persist(p, seg + hcl_tails_offset(), 4 * hcl_threads(g));
	hcl_header_init(seg, g, table_id, batch_id(p->log_gen, seq));
	pool_persist(p, seg, sizeof(hcl_header));
	return GPMDB_OK;
}

/* Persists the entry words of threads [0, n) of a segment. */
static void hcl_persist_entries(stg_pool *p, char *seg, const hcl_geom *g,
				uint64_t n)
{
	uint64_t warps = (n + HCL_WARP - 1) / HCL_WARP;
	uint64_t bytes =
	    warps * g->entries_per_thread * HCL_ENTRY_WORDS * HCL_LINE_BYTES;

	pool_persist(p, seg + hcl_entries_offset(g), bytes);
}

int stg_update(stg_pool *p, uint32_t table_id, int ncols, const uint32_t *cols,
	       const uint64_t *rowids, uint64_t n, const stg_col_batch *vals)
{
	uint64_t cat_off, i, seg_off, rows, ntab, total = 0, t0;
	uint64_t *need = NULL, *at = NULL;
	stg_strref *refs = NULL;
	stg_cat_entry *e;
	stg_cat_column *cc;
	hcl_geom g;
	char *seg;
	int rc, j, ntext = 0;

	rc = tab_find_writable(p, table_id, &cat_off);
	if (rc != GPMDB_OK)
		return rc;
	if (n == 0)
		return GPMDB_OK;
	e = cat_entry(p, cat_off);
	cc = cat_cols(e);
	rows = e->row_count;
	if (ncols < 1 || ncols > (int)e->ncols || cols == NULL ||
	    vals == NULL || rowids == NULL)
		return pool_err(p, GPMDB_MISUSE, "stg_update: bad arguments");
	for (j = 0; j < ncols; j++) {
		int k;

		if (cols[j] >= e->ncols || vals[j].values == NULL)
			return pool_err(p, GPMDB_MISUSE,
					"stg_update: bad column %u", cols[j]);
		for (k = 0; k < j; k++)
			if (cols[k] == cols[j])
				return pool_err(p, GPMDB_MISUSE,
						"stg_update: column %u twice",
						cols[j]);
		rc = tab_check_not_null(p, e, cols[j], vals[j].nulls, n,
					"updated row");
		if (rc != GPMDB_OK)
			return rc;
		if (cc[cols[j]].type == STG_T_TEXT)
			ntext++;
	}
	for (i = 0; i < n; i++)
		if (rowids[i] >= rows)
			return pool_err(p, GPMDB_RANGE,
					"table %s: row %llu does not exist "
					"(%llu rows)",
					e->name, (unsigned long long)rowids[i],
					(unsigned long long)rows);
	ntab = tab_index_of(rows - 1) + 1;
	/* encoded tablets the rows live in are widened before any write */
	for (i = 0; i < n; i++) {
		uint64_t ti = tab_index_of(rowids[i]);
		stg_tablet_hdr *h = tab_at(p, cat_entry(p, cat_off), ti);

		if (h && h->enc_rel && (rc = tab_widen(p, cat_off, ti)))
			return rc;
	}
	e = cat_entry(p, cat_off);
	cc = cat_cols(e);
	/* TEXT values share their tablet's heap with the other TEXT columns */
	if (ntext)
		stamp_table(p, table_id);
	else
		stamp_cols(p, table_id, ncols, cols);
	/* the new keys checked, the rows' old entries removed */
	t0 = pool_now_ns();
	rc = idx_before_update(p, cat_off, ncols, cols, rowids, n, vals);
	p->wt.index_ns += pool_now_ns() - t0;
	if (rc != GPMDB_OK)
		return rc;
	e = cat_entry(p, cat_off);
	cc = cat_cols(e);

	/* New strings go to the heaps of their rows' tablets. */
	if (ntext) {
		need = calloc(ntab, sizeof(*need));
		at = calloc(ntab, sizeof(*at));
		refs = calloc(n * (uint64_t)ntext, sizeof(*refs));
		if (need == NULL || at == NULL || refs == NULL) {
			rc = pool_err(p, GPMDB_NOMEM, "out of memory");
			goto out;
		}
		for (j = 0; j < ncols; j++) {
			const stg_text *t = vals[j].values;

			if (cc[cols[j]].type != STG_T_TEXT)
				continue;
			for (i = 0; i < n; i++)
				if (!(vals[j].nulls &&
				      bit_get(vals[j].nulls, i)))
					need[tab_index_of(rowids[i])] +=
					    t[i].len;
		}
		for (i = 0; i < ntab; i++) {
			stg_tablet_hdr *h;

			if (need[i] == 0)
				continue;
			h = tab_at(p, cat_entry(p, cat_off), i);
			if (h == NULL) {
				rc = pool_err(p, GPMDB_CORRUPT,
					      "tablet %llu missing",
					      (unsigned long long)i);
				goto out;
			}
			rc = tab_ensure_heap(p, pool_off(p, h), need[i], 0, 0);
			if (rc != GPMDB_OK)
				goto out;
		}
	}
	t0 = pool_now_ns();
	rc = tab_hcl_begin(p, table_id, n, (uint32_t)ncols, &g, &seg_off);
	if (rc != GPMDB_OK)
		goto out;
	/* No allocation from here on: pointers stay valid. */
	e = cat_entry(p, cat_off);
	cc = cat_cols(e);
	seg = pool_at(p, seg_off);
	if (ntext) {
		int tj = 0;

		for (i = 0; i < ntab; i++) {
			stg_tablet_hdr *h = tab_at(p, e, i);

			at[i] = h->heap_used;
		}
		for (j = 0; j < ncols; j++) {
			const stg_text *t = vals[j].values;

			if (cc[cols[j]].type != STG_T_TEXT)
				continue;
			for (i = 0; i < n; i++) {
				uint64_t ti = tab_index_of(rowids[i]);
				stg_tablet_hdr *h = tab_at(p, e, ti);
				stg_strref *r = &refs[i * ntext + tj];

				if (vals[j].nulls && bit_get(vals[j].nulls, i))
					continue;
				memcpy((char *)pool_at(p, h->heap_off) + at[ti],
				       t[i].ptr, t[i].len);
				r->off = (uint32_t)at[ti];
				r->len = t[i].len;
				at[ti] += t[i].len;
			}
			tj++;
		}
		for (i = 0; i < ntab; i++) {
			stg_tablet_hdr *h = tab_at(p, e, i);

			if (need[i] == 0)
				continue;
			pool_persist(
			    p, (char *)pool_at(p, h->heap_off) + h->heap_used,
			    need[i]);
			rc = mlog_set_u64(
			    p,
			    pool_off(p, h) +
				offsetof(stg_tablet_hdr, heap_used),
			    at[i]);
			if (rc != GPMDB_OK)
				goto out;
		}
	}

	/* Phase 1: every row's undo entries. */
#pragma omp parallel for if (n >= PAR_MIN_ROWS)
	for (i = 0; i < n; i++) {
		uint64_t ti = tab_index_of(rowids[i]);
		stg_tablet_hdr *h = tab_at(p, e, ti);
		uint64_t lr = rowids[i] - h->first_row;
		uint32_t k;

		for (k = 0; k < (uint32_t)ncols; k++) {
			uint32_t c = cols[k];
			size_t w = stg_type_width((stg_type)cc[c].type);
			hcl_entry en = {HCL_K_VALUE, c, rowids[i], 0, 0};

			memcpy(&en.old_value,
			       (char *)tab_col_data(h, c) + lr * w, w);
			en.old_null = bit_get(tab_col_nulls(h, c), lr);
			hcl_cpu_put(seg, &g, i, k, &en);
		}
	}
	hcl_persist_entries(p, seg, &g, n);
	stg_crash_point("hcl.entry");
	/* Phase 2: tails. */
	for (i = 0; i < n; i++)
		hcl_cpu_set_tail(seg, &g, i, (uint32_t)ncols);
	pool_persist(p, seg + hcl_tails_offset(), 4 * n);
	p->wt.log_ns += pool_now_ns() - t0;
	stg_crash_point("hcl.tail");
	/* Phase 3: the new values in place. */
#pragma omp parallel for reduction(+ : total) if (n >= PAR_MIN_ROWS)
	for (i = 0; i < n; i++) {
		uint64_t ti = tab_index_of(rowids[i]);
		stg_tablet_hdr *h = tab_at(p, e, ti);
		uint64_t lr = rowids[i] - h->first_row;
		int k, tj = 0;

		for (k = 0; k < ncols; k++) {
			uint32_t c = cols[k];
			size_t w = stg_type_width((stg_type)cc[c].type);
			char *dst = (char *)tab_col_data(h, c) + lr * w;
			uint32_t *nb = tab_col_nulls(h, c);
			bool isnull =
			    vals[k].nulls && bit_get(vals[k].nulls, i);

			if (cc[c].type == STG_T_TEXT) {
				stg_strref r = refs[i * ntext + tj++];

				memcpy(dst, &r, sizeof(r));
			} else if (isnull) {
				memset(dst, 0, w);
			} else {
				memcpy(dst,
				       (const char *)vals[k].values + i * w, w);
			}
			tab_bit_set_atomic(nb, lr, isnull);
			pool_flush(p, dst, w);
			pool_flush(p, &nb[lr >> 5], 4);
			total += w + 4;
		}
	}
	pool_drain(p);
	pool_count_persisted(p, total);
	stg_crash_point("update.data");
	t0 = pool_now_ns();
	rc = idx_after_update(p, cat_off, ncols, cols, rowids, n);
	p->wt.index_ns += pool_now_ns() - t0;
out:
	free(need);
	free(at);
	free(refs);
	return rc;
}

int stg_delete(stg_pool *p, uint32_t table_id, const uint64_t *rowids,
	       uint64_t n)
{
	uint64_t cat_off, i, seg_off, rows, added = 0, t0;
	stg_cat_entry *e;
	hcl_geom g;
	char *seg;
	int rc;

	rc = tab_find_writable(p, table_id, &cat_off);
	if (rc != GPMDB_OK)
		return rc;
	stamp_table(p, table_id);
	if (n == 0)
		return GPMDB_OK;
	if (rowids == NULL)
		return pool_err(p, GPMDB_MISUSE, "stg_delete: no row ids");
	e = cat_entry(p, cat_off);
	rows = e->row_count;
	for (i = 0; i < n; i++)
		if (rowids[i] >= rows)
			return pool_err(p, GPMDB_RANGE,
					"table %s: row %llu does not exist "
					"(%llu rows)",
					e->name, (unsigned long long)rowids[i],
					(unsigned long long)rows);
	t0 = pool_now_ns();
	rc = idx_before_delete(p, cat_off, rowids, n);
	p->wt.index_ns += pool_now_ns() - t0;
	if (rc != GPMDB_OK)
		return rc;
	t0 = pool_now_ns();
	rc = tab_hcl_begin(p, table_id, n, 1, &g, &seg_off);
	if (rc != GPMDB_OK)
		return rc;
	e = cat_entry(p, cat_off);
	seg = pool_at(p, seg_off);

	/* Phase 1: an entry for each row not deleted yet. */
#pragma omp parallel for if (n >= PAR_MIN_ROWS)
	for (i = 0; i < n; i++) {
		uint64_t ti = tab_index_of(rowids[i]);
		stg_tablet_hdr *h = tab_at(p, e, ti);
		hcl_entry en = {HCL_K_DELETE, 0, rowids[i], 0, 0};

		if (!bit_get(tab_deleted_bits(h), rowids[i] - h->first_row))
			hcl_cpu_put(seg, &g, i, 0, &en);
	}
	hcl_persist_entries(p, seg, &g, n);
	stg_crash_point("hcl.entry");
	for (i = 0; i < n; i++) {
		uint64_t ti = tab_index_of(rowids[i]);
		stg_tablet_hdr *h = tab_at(p, e, ti);

		if (!bit_get(tab_deleted_bits(h), rowids[i] - h->first_row))
			hcl_cpu_set_tail(seg, &g, i, 1);
	}
	pool_persist(p, seg + hcl_tails_offset(), 4 * n);
	p->wt.log_ns += pool_now_ns() - t0;
	stg_crash_point("hcl.tail");
	/* Phase 3: set the bits; count the ones that were clear. */
#pragma omp parallel for reduction(+ : added) if (n >= PAR_MIN_ROWS)
	for (i = 0; i < n; i++) {
		uint64_t ti = tab_index_of(rowids[i]);
		stg_tablet_hdr *h = tab_at(p, e, ti);
		uint64_t lr = rowids[i] - h->first_row;
		uint32_t *db = tab_deleted_bits(h);
		uint32_t m = 1u << (lr & 31);

		if (!(__atomic_fetch_or(&db[lr >> 5], m, __ATOMIC_RELAXED) & m))
			added++;
		pool_flush(p, &db[lr >> 5], 4);
	}
	pool_drain(p);
	pool_count_persisted(p, 4 * n);
	rc = mlog_set_u64(p, cat_off + offsetof(stg_cat_entry, deleted_count),
			  e->deleted_count + added);
	if (rc == GPMDB_OK)
		stg_crash_point("delete.data");
	return rc;
}
