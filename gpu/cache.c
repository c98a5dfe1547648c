/*
 * cache.c - the HBM column cache (cache.h).  Plain C over gpu_alloc and
 * gpu_upload, so it builds without CUDA too (every load then fails with
 * gpu_init's message and nothing is cached).
 *
 * A column is packed tablet by tablet: a tablet without deleted rows is
 * uploaded straight from the pool mapping; one with deleted rows, and
 * NULL bitmaps (to one byte a row) and TEXT references (rebased onto the
 * column's text buffer), go through a host staging buffer.
 *
 * Upload speed: when the engine registered the pool mapping with CUDA
 * (exec_gpu.c; works for MAP_SHARED mappings of /dev/shm files), ranges
 * of the mapping are DMA'd directly at bus speed; otherwise (ext4: CUDA
 * refuses to register) everything goes through gpu_upload_staged's
 * pinned double buffers.  Deleted and NULL bitmaps are scanned a word at
 * a time (a per-row loop over 100M rows cost more than the copy).
 */
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gpmdb.h"

#include "cache.h"
#include "gpu_dml.h"

typedef struct gc_entry {
	uint64_t owner;
	uint32_t table_id;
	int col;
	uint64_t version, rows, deleted, persisted;
	gcache_colref ref;
	void *dev; /* one allocation: data, NULL bytes, text */
	uint64_t bytes;
	uint64_t used; /* LRU clock */
	uint64_t pin;  /* query tick of the last use */
	gcache_seg *seg;
} gc_entry;

static gc_entry *gc_ents;
static int gc_n, gc_cap;
static uint64_t gc_clock, gc_tick = 1, gc_bytes, gc_limit;
static _Atomic uint64_t gc_version = 1, gc_owner_next = 1;
static gcache_stats gc_st;

void gcache_begin(void)
{
	gc_tick++;
}

void gcache_bump(void)
{
	atomic_fetch_add(&gc_version, 1);
}

uint64_t gcache_new_owner(void)
{
	return atomic_fetch_add(&gc_owner_next, 1);
}

static void gc_free_at(int i)
{
	gc_entry *e = &gc_ents[i];

	gpu_free(e->dev, NULL, 0);
	free(e->seg);
	gc_bytes -= e->bytes;
	gc_ents[i] = gc_ents[--gc_n];
}

void gcache_drop_owner(uint64_t owner)
{
	for (int i = gc_n - 1; i >= 0; i--)
		if (gc_ents[i].owner == owner)
			gc_free_at(i);
}

void gcache_clear(void)
{
	while (gc_n)
		gc_free_at(gc_n - 1);
}

void gcache_set_limit(uint64_t bytes)
{
	gc_limit = bytes;
}

static uint64_t gc_limit_now(void)
{
	gpu_info gi;

	if (gc_limit)
		return gc_limit;
	if (gpu_get_info(&gi, NULL, 0) == GPMDB_OK && gi.mem_total)
		return gi.mem_total / 2;
	return UINT64_MAX;
}

uint64_t gcache_get_limit(void)
{
	return gc_limit;
}

void gcache_get_stats(gcache_stats *s)
{
	*s = gc_st;
	s->entries = (uint64_t)gc_n;
	s->bytes = gc_bytes;
	s->limit = gc_limit;
}

/* Evicts the least recently used entry not pinned by this query; 0 when
 * there is none. */
static int gc_evict_one(void)
{
	int best = -1;

	for (int i = 0; i < gc_n; i++)
		if (gc_ents[i].pin != gc_tick &&
		    (best < 0 || gc_ents[i].used < gc_ents[best].used))
			best = i;
	if (best < 0)
		return 0;
	gc_free_at(best);
	gc_st.evictions++;
	return 1;
}

static int gc_alloc(void **dev, uint64_t bytes, char *err, size_t errlen)
{
	uint64_t lim = gc_limit_now();
	int rc;

	while (gc_bytes + bytes > lim && gc_evict_one())
		;
	if (gc_bytes + bytes > lim) {
		snprintf(err, errlen,
			 "column needs %.1f MiB, the GPU column cache holds "
			 "%.1f of its %.1f MiB for this query",
			 bytes / 1048576.0, gc_bytes / 1048576.0,
			 lim / 1048576.0);
		return GPMDB_NOMEM;
	}
	for (;;) {
		rc = gpu_alloc(dev, bytes, err, errlen);
		if (rc != GPMDB_NOMEM || !gc_evict_one())
			return rc;
	}
}

static size_t gc_width(int stype)
{
	return stype == GCACHE_ROWID ? 8
	       : stype == STG_T_TEXT ? sizeof(gpu_str)
				     : stg_type_width((stg_type)stype);
}

static int gc_coltype(int stype)
{
	switch (stype) {
	case STG_T_INT:
		return BC_COL_INT32;
	case STG_T_BIGINT:
		return BC_COL_INT64;
	case STG_T_FLOAT:
		return BC_COL_FLOAT;
	case STG_T_DOUBLE:
		return BC_COL_DOUBLE;
	case STG_T_DECIMAL:
		return BC_COL_DEC;
	case STG_T_DATE:
		return BC_COL_DATE;
	case STG_T_BOOLEAN:
		return BC_COL_BOOL;
	case STG_T_TEXT:
		return BC_COL_TEXT;
	default: /* the row id */
		return BC_COL_INT64;
	}
}

static int gc_bit(const uint32_t *bm, uint32_t i)
{
	return bm && (bm[i / 32] >> (i % 32) & 1);
}

/* Word w of a bitmap of n bits, bits past n cleared. */
static uint32_t gc_word(const uint32_t *bm, uint32_t w, uint32_t n)
{
	uint32_t v = bm ? bm[w] : 0;
	if ((uint64_t)(w + 1) * 32 > n)
		v &= n % 32 ? (1u << (n % 32)) - 1 : 0xffffffffu;
	return v;
}

/* Bits set among the first n of bm. */
static uint32_t gc_count(const uint32_t *bm, uint32_t n)
{
	uint32_t c = 0;
	for (uint32_t w = 0; bm && w < (n + 31) / 32; w++)
		c += (uint32_t)__builtin_popcount(gc_word(bm, w, n));
	return c;
}

/* A bit of a set among the first n whose bit in del is clear. */
static bool gc_any_live(const uint32_t *a, const uint32_t *del, uint32_t n)
{
	for (uint32_t w = 0; a && w < (n + 31) / 32; w++)
		if (gc_word(a, w, n) & ~gc_word(del, w, n))
			return true;
	return false;
}

/* The registered range of the pool mapping (NULL when not registered). */
static const char *gc_reg_base;
static uint64_t gc_reg_len;

/* Host bytes to the device: DMA from the registered mapping, else through
 * pinned staging. */
static int gc_put(void *dst, const void *src, size_t n, char *err,
		  size_t errlen)
{
	const char *c = src;
	if (gc_reg_base && c >= gc_reg_base &&
	    c + n <= gc_reg_base + gc_reg_len) {
		gc_st.up_direct += n;
		return gpu_upload(dst, src, n, err, errlen);
	}
	gc_st.up_staged += n;
	return gpu_upload_staged(dst, src, n, err, errlen);
}

void gcache_note_register(int ok, uint64_t ns, const char *msg)
{
	gc_st.reg_ok = ok ? 1 : 0;
	gc_st.reg_fail += ok ? 0 : 1;
	gc_st.reg_ns += ns;
	snprintf(gc_st.reg_msg, sizeof(gc_st.reg_msg), "%s", msg ? msg : "");
}

/* Packs and uploads; e->ref filled.  Returns a GPMDB code. */
static int gc_load(stg_pool *p, gc_entry *e, int stype, char *err,
		   size_t errlen)
{
	uint32_t nt;
	uint64_t live = 0, ntext = 0, off;
	size_t w = gc_width(stype);
	bool has_null = false;
	char *stage = NULL;
	size_t stage_cap = 0;
	int rc = GPMDB_OK, col = e->col;

	uint64_t maplen = 0;
	const char *mb = stg_pool_base(p, &maplen);
	struct timespec t0, t1;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	gc_reg_base = mb && gpu_pm_is_registered(mb, maplen) ? mb : NULL;
	gc_reg_len = gc_reg_base ? maplen : 0;
	if (stg_tablet_count(p, e->table_id, &nt)) {
		snprintf(err, errlen, "%s", stg_errmsg(p));
		return stg_errcode(p);
	}
	/* pass 1: sizes */
	for (uint32_t t = 0; t < nt; t++) {
		stg_tablet_view v;
		if (stg_tablet_get(p, e->table_id, t, &v)) {
			snprintf(err, errlen, "%s", stg_errmsg(p));
			return stg_errcode(p);
		}
		live += v.nrows - gc_count(v.deleted, v.nrows);
		if (col >= 0 && v.nulls && !has_null &&
		    gc_any_live(v.nulls[col], v.deleted, v.nrows))
			has_null = true;
		if (stype == STG_T_TEXT) {
			uint64_t end = 0; /* rows one by one: TEXT is rare */
			for (uint32_t i = 0; i < v.nrows; i++) {
				stg_strref s =
				    ((const stg_strref *)v.data[col])[i];
				if (!gc_bit(v.deleted, i) &&
				    !gc_bit(v.nulls ? v.nulls[col] : NULL, i) &&
				    s.off + (uint64_t)s.len > end)
					end = s.off + (uint64_t)s.len;
			}
			ntext += end;
		}
	}
	if (live > UINT32_MAX || ntext >= 0x80000000ull) {
		snprintf(err, errlen,
			 "table too large for one GPU run (%llu rows, %llu "
			 "text bytes; the limits are 2^32 rows and 2 GiB)",
			 (unsigned long long)live, (unsigned long long)ntext);
		return GPMDB_UNSUPPORTED;
	}
	uint64_t dbytes = (live * w + 255) & ~255ull;
	uint64_t nbytes = has_null ? (live + 256) & ~255ull : 0;
	e->bytes = dbytes + nbytes + ntext + 16;
	if ((rc = gc_alloc(&e->dev, e->bytes, err, errlen)))
		return rc;
	char *dd = e->dev, *dn = has_null ? dd + dbytes : NULL,
	     *dt = dd + dbytes + nbytes;
	if (stype == STG_T_TEXT &&
	    !(e->seg = calloc(nt + 1, sizeof(gcache_seg)))) {
		rc = GPMDB_NOMEM;
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	/* pass 2: pack and upload */
	off = 0;
	uint64_t toff = 0;
	for (uint32_t t = 0; t < nt && !rc; t++) {
		stg_tablet_view v;
		uint32_t m = 0;
		bool dense = true;
		if (stg_tablet_get(p, e->table_id, t, &v)) {
			snprintf(err, errlen, "%s", stg_errmsg(p));
			rc = stg_errcode(p);
			break;
		}
		m = v.nrows - gc_count(v.deleted, v.nrows);
		dense = m == v.nrows;
		size_t need = (size_t)v.nrows * (w > 1 ? w : 1) + v.nrows + 16;
		if (need > stage_cap) {
			free(stage);
			stage_cap = need;
			if (!(stage = malloc(stage_cap))) {
				rc = GPMDB_NOMEM;
				snprintf(err, errlen, "out of memory");
				break;
			}
		}
		const uint32_t *nb = col >= 0 && v.nulls ? v.nulls[col] : NULL;
		uint64_t tend = 0;
		if (stype == STG_T_TEXT) {
			gpu_str *o = (gpu_str *)stage;
			uint32_t k = 0;
			for (uint32_t i = 0; i < v.nrows; i++) {
				if (gc_bit(v.deleted, i))
					continue;
				stg_strref s =
				    ((const stg_strref *)v.data[col])[i];
				if (gc_bit(nb, i)) {
					o[k].off = (uint32_t)toff;
					o[k].len = 0;
				} else {
					o[k].off = (uint32_t)(toff + s.off);
					o[k].len = s.len;
					if (s.off + (uint64_t)s.len > tend)
						tend = s.off + (uint64_t)s.len;
				}
				k++;
			}
			e->seg[e->ref.nseg].dev_off = toff;
			e->seg[e->ref.nseg].host = v.heap;
			e->ref.nseg++;
			if ((rc = gc_put(dt + toff, v.heap, tend, err, errlen)))
				break;
			toff += tend;
		} else if (col == GCACHE_ROWID) {
			int64_t *o = (int64_t *)stage;
			uint32_t k = 0;
			for (uint32_t i = 0; i < v.nrows; i++)
				if (!gc_bit(v.deleted, i))
					o[k++] = (int64_t)(v.first_row + i);
		} else if (!dense) {
			uint32_t k = 0;
			for (uint32_t i = 0; i < v.nrows; i++)
				if (!gc_bit(v.deleted, i))
					memcpy(stage + (size_t)k++ * w,
					       (const char *)v.data[col] +
						   (size_t)i * w,
					       w);
		}
		/* values: from the mapping when nothing had to change */
		const void *src =
		    stype != STG_T_TEXT && col != GCACHE_ROWID && dense
			? v.data[col]
			: stage;
		if ((rc =
			 gc_put(dd + off * w, src, (size_t)m * w, err, errlen)))
			break;
		if (dn) {
			uint8_t *o = (uint8_t *)stage;
			uint32_t k = 0;
			for (uint32_t i = 0; i < v.nrows; i++)
				if (!gc_bit(v.deleted, i))
					o[k++] = (uint8_t)gc_bit(nb, i);
			if ((rc = gc_put(dn + off, stage, m, err, errlen)))
				break;
		}
		off += m;
	}
	free(stage);
	if (rc)
		goto fail;
	gc_st.uploaded += e->bytes;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	gc_st.load_ns += (uint64_t)((t1.tv_sec - t0.tv_sec) * 1000000000LL +
				    (t1.tv_nsec - t0.tv_nsec));
	e->ref.col.data = dd;
	e->ref.col.nulls = (uint8_t *)dn;
	e->ref.col.type = (uint8_t)gc_coltype(stype);
	e->ref.nrows = live;
	if (stype == STG_T_TEXT) {
		e->ref.text = dt;
		e->ref.ntext = toff;
		e->ref.seg = e->seg;
	}
	return GPMDB_OK;
fail:
	gpu_free(e->dev, NULL, 0);
	e->dev = NULL;
	free(e->seg);
	e->seg = NULL;
	return rc;
}

int gcache_column(stg_pool *p, uint64_t owner, uint32_t table_id, int col,
		  int stype, gcache_colref *out, char *err, size_t errlen)
{
	uint64_t ver = atomic_load(&gc_version);
	uint64_t rows = stg_row_count(p, table_id);
	uint64_t del = stg_deleted_count(p, table_id);
	stg_stats ss;
	gc_entry e;
	int rc;

	memset(out, 0, sizeof(*out));
	if ((rc = gpu_init(err, errlen)))
		return rc;
	memset(&ss, 0, sizeof(ss));
	stg_get_stats(p, &ss);
	for (int i = 0; i < gc_n; i++) {
		gc_entry *x = &gc_ents[i];
		if (x->owner != owner || x->table_id != table_id ||
		    x->col != col)
			continue;
		if (x->version == ver && x->rows == rows && x->deleted == del &&
		    x->persisted == ss.bytes_persisted) {
			x->used = ++gc_clock;
			x->pin = gc_tick;
			gc_st.hits++;
			*out = x->ref;
			out->hit = 1;
			return GPMDB_OK;
		}
		gc_free_at(i); /* stale: a write came after it */
		gc_st.stale++;
		break;
	}
	gc_st.misses++;
	memset(&e, 0, sizeof(e));
	e.owner = owner;
	e.table_id = table_id;
	e.col = col;
	e.version = ver;
	e.rows = rows;
	e.deleted = del;
	e.persisted = ss.bytes_persisted;
	if ((rc = gc_load(p, &e, col == GCACHE_ROWID ? GCACHE_ROWID : stype,
			  err, errlen)))
		return rc;
	if (gc_n == gc_cap) {
		int cap = gc_cap ? gc_cap * 2 : 16;
		gc_entry *n = realloc(gc_ents, sizeof(*n) * (size_t)cap);
		if (!n) {
			gpu_free(e.dev, NULL, 0);
			free(e.seg);
			snprintf(err, errlen, "out of memory");
			return GPMDB_NOMEM;
		}
		gc_ents = n;
		gc_cap = cap;
	}
	e.used = ++gc_clock;
	e.pin = gc_tick;
	gc_ents[gc_n++] = e;
	gc_bytes += e.bytes;
	*out = e.ref;
	return GPMDB_OK;
}
