/*
 * prefetch.c - the pages of the columns a statement is about to read,
 * mapped on every core before it reads them (stg_prefetch_cols).
 *
 * Why: a process maps the pool without touching it, and its first reads
 * fault each 4 KiB page in, one at a time, on the core that reads it.  A
 * fresh process's first GPU statement copies its columns into pinned
 * staging that way, and waits for CUDA's setup (120-170 ms on the H200)
 * before it can start; the GPU executor calls this during that wait,
 * when the host has nothing else to do (gpu/exec/exec_gpu_prefetch.c).
 *
 * Only the pages are mapped (MADV_POPULATE_READ, or one read per page on
 * a kernel without it): nothing is copied and nothing is kept.  Ranges
 * come from tablet views, clamped to the mapping, so a view read beside
 * another process's writer can at worst map pages nobody reads.
 */
#include <sys/mman.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#endif

#define PF_PAGE	 4096ull
#define PF_PIECE (2ull << 20) /* one madvise: a core's share */

typedef struct {
	uint64_t lo, hi; /* offsets into the mapping, page aligned */
} pf_range;

typedef struct {
	const char *base;
	uint64_t len;
	pf_range *r;
	size_t n, cap;
	bool nomem;
} pf_list;

/* Bytes [at, at + n) of the mapping, if they lie in it. */
static void pf_add(pf_list *l, const void *at, uint64_t n)
{
	const char *a = at;
	uint64_t lo, hi;

	if (!a || n == 0 || a < l->base || a >= l->base + l->len)
		return;
	lo = (uint64_t)(a - l->base) & ~(PF_PAGE - 1);
	hi = (uint64_t)(a - l->base) + n;
	if (hi > l->len)
		hi = l->len;
	hi = (hi + PF_PAGE - 1) & ~(PF_PAGE - 1);
	if (hi > l->len)
		hi = l->len;
	for (uint64_t o = lo; o < hi; o += PF_PIECE) {
		if (l->n == l->cap) {
			size_t c = l->cap ? l->cap * 2 : 256;
			pf_range *nr = realloc(l->r, c * sizeof(*nr));
			if (!nr) {
				l->nomem = true;
				return;
			}
			l->r = nr;
			l->cap = c;
		}
		l->r[l->n].lo = o;
		l->r[l->n].hi = hi - o < PF_PIECE ? hi : o + PF_PIECE;
		l->n++;
	}
}

static uint64_t pf_bits(uint64_t rows)
{
	return (rows + 31) / 32 * 4;
}

/* The bytes of column c of tablet view v (type t): its values or
 * encoded fields, its strings, its NULL bitmap. */
static void pf_column(pf_list *l, const stg_tablet_view *v, int c, int t)
{
	uint64_t rows = v->nrows;

	if (v->nulls[c])
		pf_add(l, v->nulls[c], pf_bits(rows));
	if (v->data[c]) {
		pf_add(l, v->data[c], rows * stg_type_width((stg_type)t));
		if (t == STG_T_TEXT)
			pf_add(l, v->heap, v->heap_used);
		return;
	}
	if (!v->enc)
		return;
	const stg_colenc *e = &v->enc[c];
	pf_add(l, e->words, (rows * e->bits + 7) / 8 + 8);
	if (e->kind == STG_ENC_DICT) {
		pf_add(l, e->dict, e->dict_n * sizeof(stg_strref));
		pf_add(l, v->heap, v->heap_used);
	} else if (e->kind == STG_ENC_ZTEXT && e->blk) {
		const stg_zt_blk *d = e->blk;
		pf_add(l, d, (e->dict_n + 1) * sizeof(*d));
		pf_add(l, e->z, d[e->dict_n].off);
	}
}

int stg_prefetch_cols(stg_pool *p, uint32_t table_id, const int *types,
		      int ncols, uint64_t *bytes)
{
	pf_list l;
	uint32_t nt;
	int rc;

	memset(&l, 0, sizeof(l));
	*bytes = 0;
	l.base = stg_pool_base(p, &l.len);
	if (!l.base)
		return GPMDB_OK;
	if ((rc = stg_tablet_count(p, table_id, &nt)))
		return rc;
	for (uint32_t t = 0; t < nt && !l.nomem; t++) {
		stg_tablet_view v;

		if ((rc = stg_tablet_get(p, table_id, t, &v))) {
			free(l.r);
			return rc;
		}
		if (v.deleted)
			pf_add(&l, v.deleted, pf_bits(v.nrows));
		for (int c = 0; c < v.ncols && c < ncols; c++)
			if (types[c] >= 0)
				pf_column(&l, &v, c, types[c]);
	}
	if (l.nomem) {
		free(l.r);
		return pool_err(p, GPMDB_NOMEM, "out of memory");
	}
	/* a kernel before 5.14 has no MADV_POPULATE_READ: one read a page
	 * maps it as well (every range lies inside the file) */
	bool touch =
	    madvise((void *)l.base, PF_PAGE, MADV_POPULATE_READ) != 0 &&
	    errno == EINVAL;
	uint64_t sum = 0;
#pragma omp parallel for schedule(dynamic, 1) reduction(+ : sum)
	for (size_t i = 0; i < l.n; i++) {
		const char *a = l.base + l.r[i].lo;
		size_t n = (size_t)(l.r[i].hi - l.r[i].lo);

		if (!touch)
			(void)madvise((void *)a, n, MADV_POPULATE_READ);
		else
			for (size_t o = 0; o < n; o += PF_PAGE)
				(void)*(volatile const char *)(a + o);
		sum += n;
	}
	free(l.r);
	*bytes = sum;
	return GPMDB_OK;
}
