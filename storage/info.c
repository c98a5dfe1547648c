/*
 * info.c - where a table's bytes in the pool go (PRAGMA storage_info).
 *
 * One row per column: its encoding (plain today), the bytes of its
 * values and NULL bits for the rows in use and, for TEXT, the heap bytes
 * its rows' strings take.  Then rows for what no column owns: the
 * catalog entry and tablet directory, the tablets' headers and column
 * maps, their deleted bitmaps (rows in use), the tablets' room past the
 * rows in use (unused capacity, 256-byte alignment and chunk rounding of
 * the extents), heap bytes reserved and not handed out, heap bytes handed
 * out that no row refers to (strings replaced by UPDATE, appends rolled
 * back), and each index of the table (its header and node arenas; its
 * catalog entry).  The bytes of all rows add up to what the table and its
 * indexes hold in the pool: stg_table_bytes plus the indexes' extents.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static int add_row(stg_storage_row **v, int *n, int *cap, const char *name,
		   int col)
{
	stg_storage_row *r;

	if (*n == *cap) {
		int nc = *cap ? *cap * 2 : 32;
		stg_storage_row *nv = realloc(*v, (size_t)nc * sizeof(*nv));

		if (nv == NULL)
			return GPMDB_NOMEM;
		*v = nv;
		*cap = nc;
	}
	r = &(*v)[(*n)++];
	memset(r, 0, sizeof(*r));
	snprintf(r->name, sizeof(r->name), "%s", name);
	r->col = col;
	return GPMDB_OK;
}

/* Bytes of a bitmap of n bits as the tablet stores them (32-bit words). */
static uint64_t bitmap_bytes(uint64_t n)
{
	return (n + 31) / 32 * 4;
}

/* The index at catalog offset ioff: its catalog entry, header, arenas. */
static uint64_t index_bytes(stg_pool *p, uint64_t ioff)
{
	stg_cat_entry *e = cat_entry(p, ioff);
	stg_ix_hdr *h;
	uint64_t n = e->extent_size;

	if (e->tdir == 0 || !pool_range_ok(p, e->tdir, sizeof(stg_ix_hdr)))
		return n;
	h = (stg_ix_hdr *)pool_at(p, e->tdir);
	n += h->extent_size;
	for (uint64_t i = 0; i < h->narenas && i < STG_IX_MAX_ARENAS; i++)
		n += h->arenas[i][1];
	return n;
}

enum {
	R_CATALOG,
	R_HEADERS,
	R_DELETED,
	R_UNUSED,
	R_HEAP_FREE,
	R_HEAP_DEAD,
	R_NOVER
};

static const char *const over_names[R_NOVER] = {
    "(catalog)",	 "(tablet headers)", "(deleted bitmaps)",
    "(unused capacity)", "(heap unused)",    "(heap dead)"};

/* The heap bytes a plain TEXT column c of tablet h refers to (its first
 * rows rows, NULLs refer to none). */
static uint64_t info_text_bytes(stg_tablet_hdr *h, uint32_t c, uint64_t rows)
{
	const stg_strref *sr =
	    (const stg_strref *)((char *)h + tab_colmap(h)[2 * c]);
	const uint32_t *nb =
	    (const uint32_t *)((char *)h + tab_colmap(h)[2 * c + 1]);
	uint64_t hb = 0;

	for (uint64_t k = 0; k < rows; k++)
		if (!bit_get(nb, k))
			hb += sr[k].len;
	return hb;
}

/* The rows of the columns of an encoded tablet h with rows rows in use
 * (layout.h "Encodings"): packed bytes, dictionaries (entries as values,
 * strings as heap), NULL bitmaps only where a column has NULLs (the
 * shared zero bitmap counts with the deleted bitmaps). */
static void info_encoded(stg_tablet_hdr *h, const stg_cat_column *cc,
			 uint32_t ncols, uint64_t rows, stg_storage_row *v,
			 uint64_t *over, uint64_t *inuse, uint64_t *refd)
{
	const stg_col_enc *ce = tab_encs(h);
	bool zero = false;

	for (uint32_t c = 0; c < ncols; c++) {
		stg_storage_row *r = &v[c];
		uint64_t vals = ce[c].bytes;

		if (ce[c].kind <= STG_ENC_ZTEXT)
			r->ntab[ce[c].kind]++;
		if (ce[c].kind == STG_ENC_FOR || ce[c].kind == STG_ENC_DICT) {
			bool first = r->ntab[1] + r->ntab[2] == 1;

			if (first || ce[c].bits < r->bits_min)
				r->bits_min = ce[c].bits;
			if (first || ce[c].bits > r->bits_max)
				r->bits_max = ce[c].bits;
		}
		if (ce[c].has_nulls)
			r->nulls += bitmap_bytes(rows);
		else
			zero = true;
		if (ce[c].kind == STG_ENC_DICT) {
			const stg_strref *d =
			    (const stg_strref *)((char *)h + ce[c].dict_rel);
			uint64_t hb = 0;

			vals += ce[c].dict_n * sizeof(stg_strref);
			for (uint64_t k = 0; k < ce[c].dict_n; k++)
				hb += d[k].len;
			r->heap += hb;
			*refd += hb;
		} else if (cc[c].type == STG_T_TEXT && h->heap_off &&
			   ce[c].kind != STG_ENC_ZTEXT) {
			uint64_t hb = info_text_bytes(h, c, rows);

			r->heap += hb;
			*refd += hb;
		}
		r->values += vals;
		*inuse += vals + (ce[c].has_nulls ? bitmap_bytes(rows) : 0);
	}
	if (zero) {
		over[R_DELETED] += bitmap_bytes(rows);
		*inuse += bitmap_bytes(rows);
	}
}

int stg_storage_info(stg_pool *p, uint32_t table_id, stg_storage_row **out,
		     int *nout)
{
	stg_storage_row *v = NULL;
	stg_cat_entry *e;
	stg_cat_column *cc;
	uint64_t cat_off, over[R_NOVER] = {0}, ioff = 0, steps = 0;
	int n = 0, cap = 0, rc;
	uint32_t c, ncols;

	if (p == NULL || out == NULL || nout == NULL)
		return GPMDB_MISUSE;
	*out = NULL;
	*nout = 0;
	pool_clear_err(p);
	if ((rc = tab_find_table(p, table_id, &cat_off)) != GPMDB_OK)
		return rc;
	e = cat_entry(p, cat_off);
	ncols = e->ncols;
	cc = cat_cols(e);
	for (c = 0; c < ncols; c++)
		if (add_row(&v, &n, &cap, cc[c].name, (int)c) != GPMDB_OK)
			goto nomem;
	over[R_CATALOG] = e->extent_size;
	if (e->tdir) {
		stg_tdir *d;

		if (!pool_range_ok(p, e->tdir, sizeof(stg_tdir))) {
			free(v);
			return pool_err(p, GPMDB_CORRUPT,
					"table %s: tablet directory outside "
					"the pool",
					e->name);
		}
		d = tab_dir(p, e->tdir);
		over[R_CATALOG] += d->extent_size;
		for (uint64_t i = 0; i < d->count && i < d->capacity; i++) {
			uint64_t off = tab_dir_slots(d)[i], rows = 0, inuse;
			uint64_t refd = 0;
			stg_tablet_hdr *h;

			if (!pool_range_ok(p, off, sizeof(stg_tablet_hdr)))
				goto corrupt;
			h = tab_hdr(p, off);
			if (h->magic != STG_TABLET_MAGIC || h->ncols != ncols)
				goto corrupt;
			if (e->row_count > h->first_row)
				rows = e->row_count - h->first_row;
			if (rows > tab_room(h))
				rows = tab_room(h);
			/* the header and column map: up to the first array */
			inuse = ncols ? tab_colmap(h)[0] : h->deleted_rel;
			over[R_HEADERS] += inuse;
			over[R_DELETED] += bitmap_bytes(rows);
			inuse += bitmap_bytes(rows);
			if (rows && h->enc_rel) {
				info_encoded(h, cc, ncols, rows, v, over,
					     &inuse, &refd);
				goto tablet_done;
			}
			for (c = 0; c < ncols; c++) {
				uint64_t w =
				    stg_type_width((stg_type)cc[c].type);
				stg_storage_row *r = &v[c];

				if (rows)
					r->ntab[0]++;
				r->values += w * rows;
				r->nulls += bitmap_bytes(rows);
				inuse += w * rows + bitmap_bytes(rows);
				if (cc[c].type == STG_T_TEXT && h->heap_off) {
					uint64_t hb =
					    info_text_bytes(h, c, rows);

					r->heap += hb;
					refd += hb;
				}
			}
		tablet_done:
			over[R_UNUSED] +=
			    h->extent_size > inuse ? h->extent_size - inuse : 0;
			if (h->heap_off) {
				uint64_t used = h->heap_used < h->heap_size
						    ? h->heap_used
						    : h->heap_size;

				over[R_HEAP_FREE] += h->heap_size - used;
				/* strings may share bytes (none do today) */
				over[R_HEAP_DEAD] +=
				    used > refd ? used - refd : 0;
			}
		}
	}
	for (int k = 0; k < R_NOVER; k++) {
		if (add_row(&v, &n, &cap, over_names[k], -1) != GPMDB_OK)
			goto nomem;
		v[n - 1].bytes = over[k];
	}
	/* the table's indexes, in creation order */
	while ((ioff = cat_walk(p, ioff)) != 0 && ++steps < (1u << 24)) {
		stg_cat_entry *ie = cat_entry(p, ioff);
		char name[STG_NAME_MAX + 16];

		if (ie->kind != STG_OBJ_INDEX || ie->table_id != table_id)
			continue;
		snprintf(name, sizeof(name), "(index %s)", ie->name);
		if (add_row(&v, &n, &cap, name, -1) != GPMDB_OK)
			goto nomem;
		v[n - 1].bytes = index_bytes(p, ioff);
	}
	for (c = 0; c < ncols; c++)
		v[c].bytes = v[c].values + v[c].nulls + v[c].heap;
	*out = v;
	*nout = n;
	return GPMDB_OK;
nomem:
	free(v);
	return pool_err(p, GPMDB_NOMEM, "out of memory");
corrupt:
	free(v);
	return pool_err(p, GPMDB_CORRUPT, "table %s: a tablet is damaged",
			e->name);
}
