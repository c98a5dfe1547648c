/*
 * hcl_gpu.c - the storage side of GPU writes (stg_gpu.h): table layouts
 * as offsets, HCL segments begun for a GPU grid, appends reserved and
 * finished around a kernel, and the recovery hook through which a GPU
 * kernel may undo an interrupted batch at open.
 *
 * Nothing here touches row data: the kernels do.  Everything that must
 * be undone is logged here exactly as the CPU path logs it (the same
 * HCL_BATCH entries, row counts and deleted counts through the metadata
 * log), so the CPU recovery in mlog.c/tablet.c serves both.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "crashpoints.h"
#include "internal.h"
#include "stg_gpu.h"

uint64_t stg_tab_index_of(uint64_t row)
{
	return tab_index_of(row);
}

uint64_t stg_tab_first_row(uint64_t idx)
{
	return tab_first_row(idx);
}

uint64_t stg_tab_capacity(uint64_t idx)
{
	return tab_capacity(idx);
}

/* The layout of the table at cat_off (no API checks: recovery uses it). */
static int layout_build(stg_pool *p, uint64_t cat_off, stg_gpu_layout *out)
{
	stg_cat_entry *e = cat_entry(p, cat_off);
	stg_cat_column *cc = cat_cols(e);
	uint64_t i, cnt = 0;
	uint32_t c;

	memset(out, 0, sizeof(*out));
	out->table_id = e->table_id;
	out->ncols = e->ncols;
	out->row_count = e->row_count;
	out->stride = 2 * e->ncols + 1;
	if (e->tdir) {
		stg_tdir *d;

		if (!pool_range_ok(p, e->tdir, sizeof(stg_tdir)))
			return pool_err(p, GPMDB_CORRUPT,
					"table %s: tablet directory outside "
					"the pool",
					e->name);
		d = tab_dir(p, e->tdir);
		cnt = d->count < d->capacity ? d->count : d->capacity;
	}
	out->ntab = (uint32_t)cnt;
	out->types = calloc(e->ncols + 1, sizeof(uint32_t));
	out->widths = calloc(e->ncols + 1, sizeof(uint32_t));
	out->tab = calloc(cnt * out->stride + 1, sizeof(uint64_t));
	if (!out->types || !out->widths || !out->tab) {
		stg_gpu_layout_free(out);
		return pool_err(p, GPMDB_NOMEM, "out of memory");
	}
	for (c = 0; c < e->ncols; c++) {
		out->types[c] = cc[c].type;
		out->widths[c] = (uint32_t)stg_type_width((stg_type)cc[c].type);
	}
	for (i = 0; i < cnt; i++) {
		uint64_t toff = tab_dir_slots(tab_dir(p, e->tdir))[i];
		uint64_t *row = out->tab + i * out->stride;
		stg_tablet_hdr *h;

		if (!pool_range_ok(p, toff, sizeof(stg_tablet_hdr))) {
			stg_gpu_layout_free(out);
			return pool_err(p, GPMDB_CORRUPT,
					"table %s: tablet %llu is damaged",
					e->name, (unsigned long long)i);
		}
		h = tab_hdr(p, toff);
		for (c = 0; c < e->ncols; c++) {
			row[2 * c] = toff + tab_colmap(h)[2 * c];
			row[2 * c + 1] = toff + tab_colmap(h)[2 * c + 1];
		}
		row[2 * e->ncols] = toff + h->deleted_rel;
	}
	return GPMDB_OK;
}

int stg_gpu_layout_get(stg_pool *p, uint32_t table_id, stg_gpu_layout *out)
{
	uint64_t cat_off;
	int rc;

	if (p == NULL || out == NULL)
		return GPMDB_MISUSE;
	pool_clear_err(p);
	rc = tab_find_table(p, table_id, &cat_off);
	if (rc != GPMDB_OK)
		return rc;
	return layout_build(p, cat_off, out);
}

void stg_gpu_layout_free(stg_gpu_layout *l)
{
	if (l == NULL)
		return;
	free(l->types);
	free(l->widths);
	free(l->tab);
	l->types = l->widths = NULL;
	l->tab = NULL;
}

int stg_hcl_begin_gpu(stg_pool *p, uint32_t table_id, int ncols,
		      const uint32_t *cols, uint64_t nthreads, uint32_t epp,
		      stg_hcl_seg *out)
{
	uint64_t cat_off;
	int rc;

	rc = tab_find_writable(p, table_id, &cat_off);
	if (rc != GPMDB_OK)
		return rc;
	/* what the kernels will change (an UPDATE's number columns; a
	 * DELETE's deleted bits: the table's rows) */
	if (ncols > 0 && cols)
		stamp_cols(p, table_id, ncols, cols);
	else
		stamp_table(p, table_id);
	/* kernels that write values must never meet packed arrays: the
	 * caller widens (stg_table_widen) before taking the layout */
	if (ncols > 0 && stg_table_encoded(p, table_id))
		return pool_err(p, GPMDB_INTERNAL,
				"GPU UPDATE of table %u: its tablets are "
				"encoded (stg_table_widen was not called)",
				table_id);
	if (out == NULL || epp == 0 || nthreads == 0 ||
	    nthreads > (uint64_t)UINT32_MAX * 256)
		return pool_err(p, GPMDB_MISUSE,
				"stg_hcl_begin_gpu: bad arguments");
	rc = tab_hcl_begin(p, table_id, nthreads, epp, &out->geom,
			   &out->seg_off);
	if (rc != GPMDB_OK)
		return rc;
	out->seg_size = hcl_segment_bytes(&out->geom);
	/* the kernels write its entries and tails: zones.c */
	zone_mark(p, out->seg_off, out->seg_size);
	return GPMDB_OK;
}

int stg_hcl_end(stg_pool *p, uint32_t table_id, const stg_hcl_seg *s,
		uint64_t bytes, bool is_delete, uint64_t deleted_added)
{
	uint64_t cat_off;
	int rc;

	rc = tab_find_writable(p, table_id, &cat_off);
	if (rc != GPMDB_OK)
		return rc;
	if (s == NULL)
		return pool_err(p, GPMDB_MISUSE, "stg_hcl_end: no segment");
	/* the cells the kernels changed, before the commit (zones.c) */
	rc = tab_zone_mark_hcl(p, cat_off, s->seg_off, s->seg_size);
	if (rc != GPMDB_OK)
		return rc;
	pool_count_persisted(p, bytes);
	if (!is_delete) {
		stg_crash_point("update.data");
		return GPMDB_OK;
	}
	rc = mlog_set_u64(p, cat_off + offsetof(stg_cat_entry, deleted_count),
			  cat_entry(p, cat_off)->deleted_count + deleted_added);
	if (rc == GPMDB_OK)
		stg_crash_point("delete.data");
	return rc;
}

int stg_append_reserve(stg_pool *p, uint32_t table_id,
		       const stg_col_batch *cols, uint64_t nrows,
		       uint64_t *start)
{
	return stg_append_reserve_from(p, table_id, cols, NULL, nrows, start);
}

int stg_append_reserve_from(stg_pool *p, uint32_t table_id,
			    const stg_col_batch *cols, const uint8_t *from,
			    uint64_t nrows, uint64_t *start)
{
	uint64_t cat_off, end, t0, t1;
	stg_cat_entry *e;
	uint32_t c;
	int rc;

	rc = tab_find_writable(p, table_id, &cat_off);
	if (rc != GPMDB_OK)
		return rc;
	stamp_table(p, table_id);
	if (cols == NULL || start == NULL)
		return pool_err(p, GPMDB_MISUSE,
				"stg_append_reserve: bad arguments");
	e = cat_entry(p, cat_off);
	for (c = 0; c < e->ncols; c++) {
		if (cat_cols(e)[c].type == STG_T_TEXT)
			return pool_err(p, GPMDB_UNSUPPORTED,
					"table %s: TEXT column %s is appended "
					"by the CPU",
					e->name, cat_cols(e)[c].name);
		/* values given, a widening that fits (stg_append's check) */
		if (nrows && (rc = tab_batch_col_ok(
				  p, &cat_cols(e)[c], &cols[c],
				  from ? from[c] : STG_FROM_SAME)) != GPMDB_OK)
			return rc;
		rc = tab_check_not_null(p, e, c, cols[c].nulls, nrows, "row");
		if (rc != GPMDB_OK)
			return rc;
	}
	*start = e->row_count;
	end = *start + nrows;
	if (end < *start || end > (1ull << 48))
		return pool_err(p, GPMDB_TOOBIG, "table %s: too many rows",
				e->name);
	/* unique keys (of the key columns' values) before the kernels; the
	 * arrays live on to stg_append_finish (both GPU callers), so keys
	 * that rise are checked in one pass, their entries made from them */
	t0 = pool_now_ns();
	rc = idx_check_append_live(p, cat_off, cols, from, nrows);
	t1 = pool_now_ns();
	p->wt.key_check_ns += t1 - t0;
	/* the pool grown once for the tablets and the index rebuilds */
	if (rc == GPMDB_OK)
		rc = tab_append_prepare(p, cat_off, nrows, end);
	if (rc == GPMDB_OK)
		rc = tab_ensure_tablets(p, cat_off, end);
	if (rc == GPMDB_OK)
		rc = tab_note_append(p, table_id, *start, end);
	p->wt.tablets_ns += pool_now_ns() - t1;
	/* the rows the kernels will write, before they do (zones.c) */
	if (rc == GPMDB_OK)
		tab_zone_mark_rows(p, cat_off, *start, nrows);
	return rc;
}

int stg_append_finish(stg_pool *p, uint32_t table_id, uint64_t start,
		      uint64_t nrows, uint64_t bytes)
{
	uint64_t cat_off;
	int rc;

	rc = tab_find_writable(p, table_id, &cat_off);
	if (rc != GPMDB_OK)
		return rc;
	stamp_table(p, table_id);
	/* The rows were written past this very count: anything else means
	 * another append ran in between and they overlap. */
	if (cat_entry(p, cat_off)->row_count != start)
		return pool_err(
		    p, GPMDB_MISUSE,
		    "stg_append_finish: the table has %llu rows, "
		    "the reserve started at %llu",
		    (unsigned long long)cat_entry(p, cat_off)->row_count,
		    (unsigned long long)start);
	pool_count_persisted(p, bytes);
	stg_crash_point("append.data");
	rc = mlog_set_u64(p, cat_off + offsetof(stg_cat_entry, row_count),
			  start + nrows);
	if (rc == GPMDB_OK)
		stg_crash_point("append.count");
	if (rc == GPMDB_OK) /* the new rows' index entries, from the pool */
		rc = idx_after_append(p, cat_off, start, nrows);
	return rc;
}

/* ---- recovery by a GPU -------------------------------------------------- */

static _Thread_local stg_hcl_undo_hook undo_hook;
static _Thread_local stg_gpu_recovery_stats rec_stats;

void stg_set_hcl_undo_hook(stg_hcl_undo_hook fn)
{
	undo_hook = fn;
}

void stg_gpu_recovery_last(stg_gpu_recovery_stats *out)
{
	*out = rec_stats;
}

void stg_gpu_recovery_reset(void)
{
	memset(&rec_stats, 0, sizeof(rec_stats));
}

static double mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

int tab_hcl_undo_gpu(stg_pool *p, uint64_t cat_off, const stg_log_hcl *lh)
{
	stg_hcl_undo_job job;
	stg_gpu_layout l;
	uint64_t applied = 0;
	double t0;
	int rc;

	/* A private (read-only) mapping is recovered in memory by the CPU:
	 * registering a copy-on-write mapping with CUDA buys nothing. */
	if (undo_hook == NULL || p->private_map || p->readonly) {
		rec_stats.cpu_segments++;
		return GPMDB_UNSUPPORTED;
	}
	/* value entries on encoded tablets are skipped (tablet.c
	 * hcl_visit): the CPU does those segments */
	if (stg_table_encoded(p, cat_entry(p, cat_off)->table_id)) {
		rec_stats.cpu_segments++;
		return GPMDB_UNSUPPORTED;
	}
	if (layout_build(p, cat_off, &l) != GPMDB_OK) {
		pool_clear_err(p);
		rec_stats.cpu_segments++;
		return GPMDB_UNSUPPORTED;
	}
	job.base = p->base;
	job.map_len = p->map_len;
	job.dur = p->dur;
	job.seg_off = lh->seg_off;
	job.seg_size = lh->seg_size;
	job.layout = &l;
	t0 = mono_ms();
	rc = undo_hook(&job, &applied);
	rec_stats.ms += mono_ms() - t0;
	stg_gpu_layout_free(&l);
	if (rc != GPMDB_OK) {
		rec_stats.cpu_segments++;
		return rc == GPMDB_OK ? GPMDB_ERROR : rc;
	}
	rec_stats.segments++;
	rec_stats.entries += applied;
	p->recovered_entries += applied;
	return GPMDB_OK;
}

/* ---- CPU-assisted persistence (engine/write/batch_cap.c) -------------
 * The GPU built a batch's entries and tails; the host copies them into
 * the segment, persists them (entries, then tails), then writes the
 * data here with every core, as stg_update's and stg_delete's third
 * phase do.  The layout gives the cells' offsets, so this needs no
 * tablet internals. */

void *stg_hcl_seg_addr(stg_pool *p, const stg_hcl_seg *s)
{
	if (p == NULL || s == NULL ||
	    !pool_range_ok(p, s->seg_off, s->seg_size))
		return NULL;
	return pool_at(p, s->seg_off);
}

int stg_hcl_persist(stg_pool *p, const stg_hcl_seg *s, uint64_t off,
		    uint64_t len)
{
	if (p == NULL || s == NULL || off > s->seg_size ||
	    len > s->seg_size - off)
		return p ? pool_err(p, GPMDB_MISUSE,
				    "stg_hcl_persist: [%llu, +%llu) outside "
				    "the segment of %llu bytes",
				    (unsigned long long)off,
				    (unsigned long long)len,
				    (unsigned long long)(s ? s->seg_size : 0))
			 : GPMDB_MISUSE;
	pool_persist(p, (char *)pool_at(p, s->seg_off) + off, len);
	return GPMDB_OK;
}

/* The cell of row r in column c (c == ncols: the deleted bitmap's word
 * base, *lr its local row); NULL when the row has no tablet. */
static char *cap_cell(stg_pool *p, const stg_gpu_layout *l, uint64_t r,
		      uint32_t slot, uint64_t *lr)
{
	uint64_t ti = tab_index_of(r);

	if (ti >= l->ntab)
		return NULL;
	*lr = r - tab_first_row(ti);
	return pool_at(p, l->tab[ti * l->stride + slot]);
}

int stg_cap_update_apply(stg_pool *p, const stg_gpu_layout *l, int ncols,
			 const uint32_t *cols, const uint64_t *rowids,
			 uint64_t n, const stg_col_batch *vals, uint64_t *bytes)
{
	uint64_t total = 0, bad = 0;

	for (int k = 0; k < ncols; k++)
		if (cols[k] >= l->ncols || l->types[cols[k]] == STG_T_TEXT)
			return pool_err(p, GPMDB_MISUSE,
					"stg_cap_update_apply: column %u",
					cols[k]);
#pragma omp parallel for reduction(+ : total, bad) if (n >= 8192)
	for (uint64_t i = 0; i < n; i++) {
		for (int k = 0; k < ncols; k++) {
			uint32_t c = cols[k], w = l->widths[c];
			uint64_t lr = 0;
			char *col = cap_cell(p, l, rowids[i], 2 * c, &lr);
			uint32_t *nb = (uint32_t *)cap_cell(p, l, rowids[i],
							    2 * c + 1, &lr);
			bool isnull =
			    vals[k].nulls && bit_get(vals[k].nulls, i);
			uint32_t m = 1u << (lr & 31);

			if (!col || !nb) {
				bad++;
				continue;
			}
			if (isnull)
				memset(col + lr * w, 0, w);
			else
				memcpy(col + lr * w,
				       (const char *)vals[k].values + i * w, w);
			if (isnull)
				__atomic_fetch_or(&nb[lr >> 5], m,
						  __ATOMIC_RELAXED);
			else
				__atomic_fetch_and(&nb[lr >> 5], ~m,
						   __ATOMIC_RELAXED);
			pool_flush(p, col + lr * w, w);
			pool_flush(p, &nb[lr >> 5], 4);
			total += w + 4;
		}
	}
	pool_drain(p);
	if (bad)
		return pool_err(p, GPMDB_CORRUPT,
				"stg_cap_update_apply: %llu rows without a "
				"tablet",
				(unsigned long long)bad);
	if (bytes)
		*bytes = total;
	return GPMDB_OK;
}

int stg_cap_delete_apply(stg_pool *p, const stg_gpu_layout *l,
			 const uint64_t *rowids, uint64_t n, uint64_t *added)
{
	uint64_t cnt = 0, bad = 0;

#pragma omp parallel for reduction(+ : cnt, bad) if (n >= 8192)
	for (uint64_t i = 0; i < n; i++) {
		uint64_t lr = 0;
		uint32_t *db =
		    (uint32_t *)cap_cell(p, l, rowids[i], 2 * l->ncols, &lr);
		uint32_t m = 1u << (lr & 31);

		if (!db) {
			bad++;
			continue;
		}
		if (!(__atomic_fetch_or(&db[lr >> 5], m, __ATOMIC_RELAXED) & m))
			cnt++;
		pool_flush(p, &db[lr >> 5], 4);
	}
	pool_drain(p);
	pool_count_persisted(p, 4 * n);
	if (bad)
		return pool_err(p, GPMDB_CORRUPT,
				"stg_cap_delete_apply: %llu rows without a "
				"tablet",
				(unsigned long long)bad);
	*added = cnt;
	return GPMDB_OK;
}
