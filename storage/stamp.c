/*
 * stamp.c - write stamps of columns (stg_col_stamp), for caches of
 * column copies outside the pool (the GPU column cache, gpu/cache.c).
 *
 * Every write through this connection stamps what it may change, from
 * one counter of the pool handle:
 *   a column:   stg_update, a GPU UPDATE batch (stg_hcl_begin_gpu) of
 *               number columns;
 *   a table:    appends, deletes, TEXT updates (a tablet's string heap is
 *               shared by its TEXT columns), tablets or heaps moved or
 *               freed, a table made or dropped (not a commit's trim of
 *               a bulk load's last tablet: no value moves out of reach);
 *   everything: a rollback or recovery (undo restores bytes anywhere), a
 *               mapping that moved (pointers into the pool are stale),
 *               another process's commit seen (lock.c's catch-up).
 * A column's stamp is the largest of the three that apply, so a copy
 * taken at stamp S is current while stg_col_stamp still says S.  This
 * replaced one version for the whole process, which made any write to
 * any table reload every cached column of every table.
 *
 * The counter is the process's, not the handle's: stamps of two handles
 * never meet, so a cache keyed by a connection whose pool was opened
 * again (.restore) cannot take an old stamp for a new one.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

struct stg_wstamp {
	uint32_t table_id;
	uint32_t ncols;
	uint64_t table;
	uint64_t *col; /* ncols stamps */
};

static struct stg_wstamp *stamp_find(stg_pool *p, uint32_t tid)
{
	for (size_t i = 0; i < p->nwst; i++)
		if (p->wst[i].table_id == tid)
			return &p->wst[i];
	return NULL;
}

/* The table's record, made when missing; NULL when out of memory (the
 * caller then stamps everything: never too little). */
static struct stg_wstamp *stamp_get(stg_pool *p, uint32_t tid)
{
	struct stg_wstamp *w = stamp_find(p, tid);

	if (w)
		return w;
	if (p->nwst == p->cap_wst) {
		size_t cap = p->cap_wst ? 2 * p->cap_wst : 8;
		struct stg_wstamp *n = realloc(p->wst, cap * sizeof(*n));

		if (n == NULL)
			return NULL;
		p->wst = n;
		p->cap_wst = cap;
	}
	w = &p->wst[p->nwst++];
	memset(w, 0, sizeof(*w));
	w->table_id = tid;
	return w;
}

static _Atomic uint64_t stamp_clock;

static uint64_t stamp_next(void)
{
	return atomic_fetch_add(&stamp_clock, 1) + 1;
}

void stamp_all(stg_pool *p)
{
	p->wst_all = stamp_next();
}

void stamp_table(stg_pool *p, uint32_t tid)
{
	struct stg_wstamp *w = stamp_get(p, tid);

	if (w == NULL) {
		stamp_all(p);
		return;
	}
	w->table = stamp_next();
}

void stamp_cols(stg_pool *p, uint32_t tid, int ncols, const uint32_t *cols)
{
	struct stg_wstamp *w = stamp_get(p, tid);
	uint64_t s = stamp_next();

	if (w == NULL) {
		stamp_all(p);
		return;
	}
	for (int k = 0; k < ncols; k++) {
		if (cols[k] >= w->ncols) {
			uint32_t n = cols[k] + 1 > 16 ? cols[k] + 1 : 16;
			uint64_t *c = realloc(w->col, n * sizeof(*c));

			if (c == NULL) {
				w->table = s;
				return;
			}
			memset(c + w->ncols, 0, (n - w->ncols) * sizeof(*c));
			w->col = c;
			w->ncols = n;
		}
		w->col[cols[k]] = s;
	}
}

void stamp_cat(stg_pool *p, uint64_t cat_off)
{
	stamp_table(p, cat_entry(p, cat_off)->table_id);
}

uint64_t stg_col_stamp(stg_pool *p, uint32_t table_id, int col)
{
	const struct stg_wstamp *w = stamp_find(p, table_id);
	uint64_t s = p->wst_all;

	if (w == NULL)
		return s;
	if (w->table > s)
		s = w->table;
	if (col >= 0 && (uint32_t)col < w->ncols && w->col[col] > s)
		s = w->col[col];
	return s;
}

void stamp_free(stg_pool *p)
{
	for (size_t i = 0; i < p->nwst; i++)
		free(p->wst[i].col);
	free(p->wst);
	p->wst = NULL;
	p->nwst = p->cap_wst = 0;
}
