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
 *
 * gcache_column_range packs the live rows of a range of physical rows
 * the same way into memory the caller owns (streamed scans: tables whose
 * columns do not fit the cache; exec_gpu.c, docs/gpu.md).
 *
 * Encoded tablets (VACUUM): a frame of reference or dictionary column is
 * uploaded as stored (packed fields, codes, bitmaps, each dictionary's
 * strings once) and expanded in HBM by cache_dec.cu (gc_dec_column); any
 * other encoding is decoded on the host, on every core, and packed like
 * a plain tablet.
 */
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gpmdb.h"

#include "../storage/layout.h"
#include "cache.h"
#include "cache_dec.h"
#include "gpu_dml.h"

_Static_assert(GC_DEC_FOR == STG_ENC_FOR && GC_DEC_DICT == STG_ENC_DICT,
	       "decode kinds");

typedef struct gc_entry {
	uint64_t owner;
	uint32_t table_id;
	int col;
	uint64_t stamp, rows, deleted; /* stg_col_stamp, counts at the load */
	gcache_colref ref;
	void *dev; /* one allocation: data, NULL bytes, text */
	uint64_t bytes;
	uint64_t used;	 /* LRU clock */
	uint64_t pin;	 /* query tick of the last use */
	uint64_t pinseq; /* when this tick's pin was taken (gcache_pin_mark) */
	gcache_seg *seg;
} gc_entry;

static gc_entry *gc_ents;
static int gc_n, gc_cap;
static uint64_t gc_clock, gc_tick = 1, gc_bytes, gc_limit, gc_pinseq;
static _Atomic uint64_t gc_owner_next = 1;
static gcache_stats gc_st;

void gcache_begin(void)
{
	gc_tick++;
}

uint64_t gcache_pin_mark(void)
{
	return gc_pinseq;
}

void gcache_unpin_since(uint64_t mark)
{
	for (int i = 0; i < gc_n; i++)
		if (gc_ents[i].pin == gc_tick && gc_ents[i].pinseq > mark)
			gc_ents[i].pin = 0;
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
	static uint64_t half; /* the GPU's memory does not change: asked once */
	gpu_info gi;

	if (gc_limit)
		return gc_limit;
	if (!half && gpu_get_info(&gi, NULL, 0) == GPMDB_OK && gi.mem_total)
		half = gi.mem_total / 2;
	/* half of gpu_memory_limit, which may be set later */
	if (half && gpu_memory_limit() && gpu_memory_limit() / 2 < half)
		return gpu_memory_limit() / 2;
	return half ? half : UINT64_MAX;
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

int gcache_reclaim(void)
{
	if (!gc_evict_one())
		return 0;
	gc_st.oom_evictions++;
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

/* Word w of a bitmap, bits outside [lo, hi) cleared. */
static uint32_t gc_word_in(const uint32_t *bm, uint32_t w, uint32_t lo,
			   uint32_t hi)
{
	uint32_t v = gc_word(bm, w, hi);
	if (w == lo / 32 && lo % 32)
		v &= ~((1u << (lo % 32)) - 1);
	return v;
}

/* Bits set among bits [lo, hi) of bm. */
static uint32_t gc_count(const uint32_t *bm, uint32_t lo, uint32_t hi)
{
	uint32_t c = 0;
	for (uint32_t w = lo / 32; bm && w < (hi + 31) / 32; w++)
		c += (uint32_t)__builtin_popcount(gc_word_in(bm, w, lo, hi));
	return c;
}

/* A bit of a set among bits [lo, hi) whose bit in del is clear. */
static bool gc_any_live(const uint32_t *a, const uint32_t *del, uint32_t lo,
			uint32_t hi)
{
	for (uint32_t w = lo / 32; a && w < (hi + 31) / 32; w++)
		if (gc_word_in(a, w, lo, hi) & ~gc_word(del, w, hi))
			return true;
	return false;
}

/* The registered range of the pool mapping (NULL when not registered). */
static const char *gc_reg_base;
static uint64_t gc_reg_len;
/* the pool mapping as it is now (gc_note_base): registered ranges of it
 * (gpu_pm_ensure) are DMA'd from as well */
static const void *gc_map_base;
static uint64_t gc_map_len;
/* the pool's GPU mapping while the mapping is shared too
 * (stg_pool_gpu_alias), or NULL */
static const void *gc_alias;

/* Where host bytes [src, src + n) can be DMA'd from, or NULL: src when
 * registered with CUDA (the whole mapping, or the range: the tablets a
 * GPU write registered, gpu_pm_ensure), or the same bytes in the pool's
 * GPU mapping (storage's second shared mapping, where GPU writes register
 * their tablets) while the mapping is shared too. */
static const void *gc_dma_src(const void *src, size_t n)
{
	const char *c = src;

	if ((gc_reg_base && c >= gc_reg_base &&
	     c + n <= gc_reg_base + gc_reg_len) ||
	    (gc_map_base &&
	     gpu_pm_range_registered(gc_map_base, gc_map_len, src, n)))
		return src;
	if (gc_alias && c >= (const char *)gc_map_base &&
	    c + n <= (const char *)gc_map_base + gc_map_len) {
		const char *a =
		    (const char *)gc_alias + (c - (const char *)gc_map_base);

		if (gpu_pm_range_registered(gc_alias, gc_map_len, a, n))
			return a;
	}
	return NULL;
}

static bool gc_registered(const void *src, size_t n)
{
	return gc_dma_src(src, n) != NULL;
}

/* Host bytes to the device: DMA from the registered mapping, else through
 * pinned staging. */
static int gc_put(void *dst, const void *src, size_t n, char *err,
		  size_t errlen)
{
	const void *d = gc_dma_src(src, n);

	/* registered: DMA from the pool itself */
	if (d) {
		gc_st.up_direct += n;
		return gpu_upload(dst, d, n, err, errlen);
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

static uint64_t gc_ns_since(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (uint64_t)((t1.tv_sec - t0->tv_sec) * 1000000000LL +
			  (t1.tv_nsec - t0->tv_nsec));
}

/* What a column of physical rows [row0, row0 + nrows) takes on the
 * device (gc_measure), and the live part of tablet view v in it. */
typedef struct gc_size {
	uint64_t live, ntext, bytes;
	uint64_t hcopy; /* compacted text bytes (gc_compact) */
	bool has_null;
} gc_size;

static void gc_clip(const stg_tablet_view *v, uint64_t row0, uint64_t nrows,
		    uint32_t *lo, uint32_t *hi)
{
	uint64_t a = row0 > v->first_row ? row0 - v->first_row : 0;
	uint64_t end = nrows > UINT64_MAX - row0 ? UINT64_MAX : row0 + nrows;
	uint64_t b = end > v->first_row ? end - v->first_row : 0;
	if (b > v->nrows)
		b = v->nrows;
	if (a > b)
		a = b;
	*lo = (uint32_t)a;
	*hi = (uint32_t)b;
}

/* The text bytes [*tmin, *tend) of the heap that live, non-NULL rows
 * [lo, hi) of a TEXT column reference (rows one by one: TEXT is rare);
 * 0, 0 when none. */
static void gc_text_span(const stg_tablet_view *v, int col, uint32_t lo,
			 uint32_t hi, uint64_t *tmin, uint64_t *tend,
			 uint64_t *bytes)
{
	const uint32_t *nb = v->nulls ? v->nulls[col] : NULL;
	uint64_t mn = UINT64_MAX, end = 0, sum = 0;
	for (uint32_t i = lo; i < hi; i++) {
		stg_strref s = ((const stg_strref *)v->data[col])[i];
		if (gc_bit(v->deleted, i) || gc_bit(nb, i))
			continue;
		if (s.off < mn)
			mn = s.off;
		if (s.off + (uint64_t)s.len > end)
			end = s.off + (uint64_t)s.len;
		sum += s.len;
	}
	*tmin = end ? mn : 0;
	*tend = end;
	*bytes = sum;
}

/* The string bytes of the live rows [lo, hi) of a compressed TEXT
 * column (its lengths: no block decompressed; NULL rows have 0). */
static uint64_t gc_zt_bytes(const stg_tablet_view *v, int col, uint32_t lo,
			    uint32_t hi)
{
	uint64_t sum = 0;

	for (uint32_t i = lo; i < hi; i++)
		if (!gc_bit(v->deleted, i))
			sum += stg_zt_len(&v->enc[col], i);
	return sum;
}

/* The same for a dictionary column expanded on the device: the heap bytes
 * of its dictionary's strings (each uploaded once for the tablet). */
static void gc_dict_span(const stg_colenc *e, uint64_t *tmin, uint64_t *tend,
			 uint64_t *bytes)
{
	uint64_t mn = UINT64_MAX, end = 0, sum = 0;
	for (uint64_t d = 0; d < e->dict_n; d++) {
		stg_strref s = e->dict[d];
		if (s.off < mn)
			mn = s.off;
		if (s.off + (uint64_t)s.len > end)
			end = s.off + (uint64_t)s.len;
		sum += s.len;
	}
	*tmin = end ? mn : 0;
	*tend = end;
	*bytes = sum;
}

/*
 * Whether a tablet's strings of one column are copied together (compact)
 * instead of uploading the heap bytes they span.  Why: rows appended one
 * at a time (the .tbl loader, INSERT) interleave every TEXT column of a
 * row in the heap, so one column's span is the whole heap: lineitem's
 * l_shipmode at SF10 spanned 2.9 GB (all its TEXT columns) for 0.3 GB of
 * its own, over the 2 GiB a GPU run addresses, and TPC-H Q12 and Q19 fell
 * back to the CPU.  The compacted bytes live on the host too (after the
 * column's segments, one allocation), for reading results back.
 */
static bool gc_compact(uint64_t span, uint64_t bytes)
{
	return span > 2 * bytes + 4096;
}

/* A tablet's part of a load: its view, its rows [lo, hi) in the range
 * (m of them live), and where they go: values at row off of the column,
 * text at toff of its buffer, compacted text at hoff (gc_compact), seg:
 * its text segment's index. */
typedef struct gc_part {
	stg_tablet_view v;
	uint32_t lo, hi, m, seg;
	uint64_t off, toff, hoff;
	uint64_t tmin, tb, sum; /* TEXT: span start, bytes sent, bytes used */
	bool cp, has_null;
	bool dk;	 /* expanded by the decode kernel (gc_dev_kind) */
	bool zt;	 /* compressed TEXT: blocks unpacked by gc_zt_pack */
	int drc;	 /* the host decode's code */
	stg_plainbuf pb; /* the column of an encoded tablet, decoded */
} gc_part;

/* Whether column col of tablet view v is one the decode kernel expands:
 * frame of reference of the column's own width, or a dictionary of a
 * TEXT column.  Other encodings (a kind added later) are decoded on the
 * host. */
static bool gc_dev_kind(const stg_tablet_view *v, int col, int stype)
{
	const stg_colenc *e;

	if (col < 0 || !v->enc || v->data[col])
		return false;
	e = &v->enc[col];
	if (e->kind == STG_ENC_FOR)
		return stype != STG_T_TEXT && e->width == gc_width(stype) &&
		       (e->width == 1 || e->width == 2 || e->width == 4 ||
			e->width == 8);
	return e->kind == STG_ENC_DICT && stype == STG_T_TEXT &&
	       e->dict_n <= UINT32_MAX;
}

/* GPMDB_GPU_HOST_DECODE=1: every encoded column decoded on the host (the
 * path before the decode kernel; for comparing the two). */
static bool gc_host_decode_forced(void)
{
	const char *s = getenv("GPMDB_GPU_HOST_DECODE");
	return s && !strcmp(s, "1");
}

static void gc_parts_free(gc_part *pt, uint32_t n)
{
	for (uint32_t t = 0; pt && t < n; t++)
		stg_plainbuf_free(&pt[t].pb);
	free(pt);
}

/* The tablets of the range [row0, row0 + nrows) of a column, measured on
 * every core (the per-row passes over TEXT references and NULL bits are
 * what a cold query waited for: 0.5-1.2 s per TEXT column of lineitem at
 * SF10 on one core), their places assigned in tablet order.  Encoded
 * columns the kernel does not expand are decoded on the host there too,
 * when decode is set (the packing pass) or the column is TEXT (measuring
 * needs its references).  *out malloc'd (n of them), z filled. */
static int gc_parts(stg_pool *p, uint32_t table_id, int col, int stype,
		    uint64_t row0, uint64_t nrows, bool decode, gc_size *z,
		    gc_part **out, uint32_t *n, char *err, size_t errlen)
{
	uint32_t nt;
	gc_part *pt;
	size_t w = gc_width(stype);
	bool host_only = gc_host_decode_forced();

	memset(z, 0, sizeof(*z));
	*out = NULL;
	*n = 0;
	if (stg_tablet_count(p, table_id, &nt)) {
		snprintf(err, errlen, "%s", stg_errmsg(p));
		return stg_errcode(p);
	}
	if (!(pt = calloc((size_t)nt + 1, sizeof(*pt)))) {
		snprintf(err, errlen, "out of memory");
		return GPMDB_NOMEM;
	}
	for (uint32_t t = 0; t < nt; t++) {
		if (stg_tablet_get(p, table_id, t, &pt[t].v)) {
			snprintf(err, errlen, "%s", stg_errmsg(p));
			gc_parts_free(pt, t);
			return stg_errcode(p);
		}
		gc_clip(&pt[t].v, row0, nrows, &pt[t].lo, &pt[t].hi);
	}
#pragma omp parallel for schedule(dynamic, 1) if (nt > 1)
	for (uint32_t t = 0; t < nt; t++) {
		gc_part *q = &pt[t];
		const uint32_t *nb =
		    col >= 0 && q->v.nulls ? q->v.nulls[col] : NULL;
		if (q->lo == q->hi)
			continue;
		if (col >= 0 && q->v.enc && !q->v.data[col]) {
			q->zt = stype == STG_T_TEXT &&
				q->v.enc[col].kind == STG_ENC_ZTEXT;
			q->dk = !q->zt && !host_only &&
				gc_dev_kind(&q->v, col, stype);
			/* any other encoding: this tablet's column decoded
			 * here, on this core (the tablets in parallel) */
			if (!q->dk && !q->zt &&
			    (decode || stype == STG_T_TEXT)) {
				uint8_t *want =
				    calloc((size_t)q->v.ncols + 1, 1);
				q->drc = GPMDB_NOMEM;
				if (!want)
					continue;
				want[col] = 1;
				q->drc =
				    stg_tablet_decode_all(&q->v, want, &q->pb);
				free(want);
				if (q->drc)
					continue;
			}
		}
		q->m = (q->hi - q->lo) - gc_count(q->v.deleted, q->lo, q->hi);
		q->has_null = gc_any_live(nb, q->v.deleted, q->lo, q->hi);
		if (stype == STG_T_TEXT) {
			uint64_t tend;
			if (q->dk)
				gc_dict_span(&q->v.enc[col], &q->tmin, &tend,
					     &q->sum);
			else if (q->zt)
				q->tmin = 0,
				tend = q->sum =
				    gc_zt_bytes(&q->v, col, q->lo, q->hi);
			else
				gc_text_span(&q->v, col, q->lo, q->hi, &q->tmin,
					     &tend, &q->sum);
			/* compressed TEXT is unpacked into the entry's own
			 * bytes, which stay on the host for reading results
			 * back */
			q->cp = q->zt || q->pb.heap != NULL ||
				gc_compact(tend - q->tmin, q->sum);
			q->tb = q->cp ? q->sum : tend - q->tmin;
		}
	}
	for (uint32_t t = 0; t < nt; t++)
		if (pt[t].drc) {
			int drc = pt[t].drc;

			snprintf(
			    err, errlen,
			    "tablet %u of a column, decoded for the GPU: %s", t,
			    stg_decode_errstr(drc));
			gc_parts_free(pt, nt);
			return drc;
		}
	for (uint32_t t = 0, seg = 0; t < nt; t++) {
		gc_part *q = &pt[t];
		if (q->lo == q->hi)
			continue;
		q->off = z->live;
		q->toff = z->ntext;
		q->hoff = z->hcopy;
		q->seg = seg++;
		z->live += q->m;
		z->has_null |= q->has_null;
		z->ntext += q->tb;
		z->hcopy += q->cp ? q->sum : 0;
	}
	uint64_t dbytes = (z->live * w + 255) & ~255ull;
	uint64_t nbytes = z->has_null ? (z->live + 256) & ~255ull : 0;
	z->bytes = dbytes + nbytes + z->ntext + 16;
	*out = pt;
	*n = nt;
	return GPMDB_OK;
}

/* Pass 1: live rows, NULLs, text bytes and device bytes of the range. */
static int gc_measure(stg_pool *p, uint32_t table_id, int col, int stype,
		      uint64_t row0, uint64_t nrows, gc_size *z, char *err,
		      size_t errlen)
{
	gc_part *pt;
	uint32_t nt;
	int rc = gc_parts(p, table_id, col, stype, row0, nrows, false, z, &pt,
			  &nt, err, errlen);

	gc_parts_free(pt, rc ? 0 : nt);
	return rc;
}

/* Tablet q's rows packed on the host: values (TEXT: gpu_str into the
 * column's text buffer; the row id; a tablet with deleted rows) at vals,
 * NULL bytes at nul (or NULL), compacted strings at hc + q->hoff. */
static void gc_pack_part(const gc_part *q, int col, int stype, size_t w,
			 char *vals, uint8_t *nul, char *hc)
{
	const stg_tablet_view *v = &q->v;
	const uint32_t *nb = col >= 0 && v->nulls ? v->nulls[col] : NULL;
	uint32_t k = 0;
	uint64_t at = 0;

	for (uint32_t i = q->lo; i < q->hi; i++) {
		if (gc_bit(v->deleted, i))
			continue;
		if (nul)
			nul[k] = (uint8_t)gc_bit(nb, i);
		if (stype == STG_T_TEXT) {
			gpu_str *o = (gpu_str *)vals + k;
			stg_strref s = ((const stg_strref *)v->data[col])[i];
			if (gc_bit(nb, i)) {
				o->off = (uint32_t)q->toff;
				o->len = 0;
			} else if (q->cp) {
				memcpy(hc + q->hoff + at, v->heap + s.off,
				       s.len);
				o->off = (uint32_t)(q->toff + at);
				o->len = s.len;
				at += s.len;
			} else {
				o->off = (uint32_t)(q->toff + s.off - q->tmin);
				o->len = s.len;
			}
		} else if (col == GCACHE_ROWID) {
			((int64_t *)vals)[k] = (int64_t)(v->first_row + i);
		} else if (vals) {
			memcpy(vals + (size_t)k * w,
			       (const char *)v->data[col] + (size_t)i * w, w);
		}
		k++;
	}
}

/* One block of a compressed TEXT tablet in gc_zt_pack: tablet q's block
 * b, whose first live row in the range is the tablet's k0-th and whose
 * strings start a0 bytes into the tablet's compacted text; whole: all its
 * rows live and in the range, their lengths adding up to the block's raw
 * bytes (it decompresses straight into the compacted text). */
typedef struct gc_zt_job {
	const gc_part *q;
	uint64_t b, k0, a0;
	bool whole;
} gc_zt_job;

/* The blocks of tablet q overlapping its rows [lo, hi): into jobs (NULL:
 * counted only), with their live rows' and bytes' offsets. */
static size_t gc_zt_jobs(const gc_part *q, int col, gc_zt_job *jobs)
{
	const stg_colenc *e = &q->v.enc[col];
	uint64_t k = 0, a = 0;
	size_t n = 0;

	for (uint64_t b = 0; b < e->dict_n; b++) {
		uint64_t r0, r1;
		uint32_t raw;

		stg_zt_block(e, b, &r0, &r1, &raw);
		if (r1 <= q->lo || r0 >= q->hi)
			continue;
		if (jobs) {
			uint64_t a0 = a, live = 0;
			jobs[n] = (gc_zt_job){q, b, k, a, false};
			for (uint64_t r = r0 > q->lo ? r0 : q->lo;
			     r < r1 && r < q->hi; r++)
				if (!gc_bit(q->v.deleted, (uint32_t)r)) {
					k++;
					live++;
					a += stg_zt_len(e, r);
				}
			jobs[n].whole = r0 >= q->lo && r1 <= q->hi &&
					live == r1 - r0 && a - a0 == raw;
		}
		n++;
	}
	return n;
}

/* Job j unpacked: its block decompressed (straight into the compacted
 * text when all its rows are live and in the range, else into *buf,
 * grown to fit), its rows' gpu_str at vals, NULL bytes at nul. */
static int gc_zt_unpack(const gc_zt_job *j, int col, gpu_str *vals,
			uint8_t *nul, char *hc, char **buf, size_t *cap)
{
	const gc_part *q = j->q;
	const stg_colenc *e = &q->v.enc[col];
	const uint32_t *nb = q->v.nulls ? q->v.nulls[col] : NULL;
	uint64_t r0, r1, pos = 0, at = j->a0, k = j->k0;
	uint32_t raw;
	char *txt = hc + q->hoff;
	int rc;

	stg_zt_block(e, j->b, &r0, &r1, &raw);
	bool whole = j->whole;
	if (!whole && *cap < (size_t)raw + 8) {
		char *nb2 = realloc(*buf, (size_t)raw + 8);
		if (!nb2)
			return GPMDB_NOMEM;
		*buf = nb2;
		*cap = (size_t)raw + 8;
	}
	char *src = whole ? txt + j->a0 : *buf;
	if ((rc = stg_zt_unpack(e, j->b, src)))
		return rc;
	for (uint64_t r = r0; r < r1; r++) {
		uint32_t len = stg_zt_len(e, r);
		if (pos + len > raw)
			return GPMDB_CORRUPT;
		if (r >= q->lo && r < q->hi &&
		    !gc_bit(q->v.deleted, (uint32_t)r)) {
			gpu_str *o = vals + k;
			int null = gc_bit(nb, (uint32_t)r);
			if (nul)
				nul[k] = (uint8_t)null;
			/* a live row's bytes are counted as gc_zt_jobs and
			 * gc_zt_bytes count them (a NULL row's length is 0) */
			o->off = (uint32_t)(q->toff + (null ? 0 : at));
			o->len = null ? 0 : len;
			if (!whole && len)
				memcpy(txt + at, src + pos, len);
			at += len;
			k++;
		}
		pos += len;
	}
	return pos == raw ? GPMDB_OK : GPMDB_CORRUPT;
}

/*
 * The compressed TEXT tablets of group [g0, g1) unpacked, every block a
 * job on any core.  Why: the tablets decoded whole, one per core, twice
 * (the measuring pass, then the packing pass) and their strings copied
 * once more took 418 ms of a fresh process's TPC-H Q13 at SF10 (15
 * tablets of o_comment), and customer's two tablets kept 14 cores idle.
 * vals and nul: the group's (row base at its first).
 */
static int gc_zt_pack(gc_part *pt, uint32_t g0, uint32_t g1, int col,
		      uint64_t base, gpu_str *vals, uint8_t *nul, char *hc,
		      char *err, size_t errlen)
{
	size_t nj = 0, *first;
	gc_zt_job *jobs;
	int bad = GPMDB_OK;

	if (!(first = calloc((size_t)(g1 - g0) + 1, sizeof(size_t)))) {
		snprintf(err, errlen, "out of memory");
		return GPMDB_NOMEM;
	}
	for (uint32_t t = g0; t < g1; t++) {
		first[t - g0] = nj;
		if (pt[t].zt && pt[t].lo != pt[t].hi)
			nj += gc_zt_jobs(&pt[t], col, NULL);
	}
	first[g1 - g0] = nj;
	if (nj == 0) {
		free(first);
		return GPMDB_OK;
	}
	if (!(jobs = malloc(nj * sizeof(*jobs)))) {
		free(first);
		snprintf(err, errlen, "out of memory");
		return GPMDB_NOMEM;
	}
#pragma omp parallel for schedule(dynamic, 1) if (g1 - g0 > 1)
	for (uint32_t t = g0; t < g1; t++)
		if (pt[t].zt && pt[t].lo != pt[t].hi)
			(void)gc_zt_jobs(&pt[t], col, jobs + first[t - g0]);
#pragma omp parallel if (nj > 1)
	{
		char *buf = NULL;
		size_t cap = 0;
#pragma omp for schedule(dynamic, 4)
		for (size_t i = 0; i < nj; i++) {
			const gc_part *q = jobs[i].q;
			uint64_t r = q->off - base;
			int rc =
			    gc_zt_unpack(&jobs[i], col, vals + r,
					 nul ? nul + r : NULL, hc, &buf, &cap);
			if (rc) {
#pragma omp critical(gc_zt_bad)
				bad = rc;
			}
		}
		free(buf);
	}
	free(jobs);
	free(first);
	gc_st.zt_blocks += bad ? 0 : nj;
	if (bad)
		snprintf(err, errlen,
			 "a compressed TEXT column, unpacked for the GPU: %s",
			 stg_decode_errstr(bad));
	return bad;
}

/* A dictionary column's tablet strings, compacted (gc_compact) at
 * hc + q->hoff in dictionary order (gc_dec_fill places them the same). */
static void gc_dict_compact(const gc_part *q, int col, char *hc)
{
	const stg_colenc *e = &q->v.enc[col];
	uint64_t at = 0;

	for (uint64_t d = 0; d < e->dict_n; d++) {
		memcpy(hc + q->hoff + at, q->v.heap + e->dict[d].off,
		       e->dict[d].len);
		at += e->dict[d].len;
	}
}

/* Scratch bytes one batch of decode jobs takes at most (one tablet more
 * if it needs more): bounds the device memory a load needs beyond the
 * column itself. */
#define GC_DEC_BATCH (256ull << 20)

static uint64_t gc_al8(uint64_t x)
{
	return (x + 7) & ~7ull;
}

/* Where a decode job's pieces come from (gc_dec_plan). */
typedef struct gc_dec_src {
	const gc_part *q;
	const void *words; /* the packed words in the mapping */
	uint64_t nwords;   /* their bytes */
	uint32_t nbm;	   /* bitmap words */
	bool direct;	   /* words DMA'd from the mapping (registered) */
} gc_dec_src;

/* Rows of word wi of a bitmap inside [lo, hi). */
static uint32_t gc_range_mask(uint32_t wi, uint32_t lo, uint32_t hi)
{
	uint64_t w0 = (uint64_t)wi * 32;
	uint32_t m = 0xffffffffu;
	if (w0 < lo)
		m &= lo - w0 >= 32 ? 0 : 0xffffffffu << (lo - w0);
	if (w0 + 32 > hi)
		m &= hi <= w0 ? 0 : (1u << (uint32_t)(hi - w0)) - 1;
	return m;
}

/* Job j's pieces copied into the host blob: the words unless DMA'd
 * directly, the bitmaps, the live rows before each bitmap word, the
 * dictionary's references into the column's text buffer. */
static void gc_dec_fill(const gc_dec_job *j, const gc_dec_src *s, int col,
			char *blob)
{
	const gc_part *q = s->q;
	uint32_t b0 = q->lo / 32;

	if (!s->direct && s->nwords)
		memcpy(blob + j->words, s->words, s->nwords);
	if (j->nul != GC_DEC_NONE)
		memcpy(blob + j->nul, q->v.nulls[col] + b0, s->nbm * 4ull);
	if (j->del != GC_DEC_NONE) {
		uint32_t *pre = (uint32_t *)(blob + j->pre), c = 0;
		memcpy(blob + j->del, q->v.deleted + b0, s->nbm * 4ull);
		for (uint32_t x = 0; x < s->nbm; x++) {
			pre[x] = c;
			c += (uint32_t)__builtin_popcount(
			    gc_range_mask(b0 + x, q->lo, q->hi) &
			    ~q->v.deleted[b0 + x]);
		}
	}
	if (j->kind == GC_DEC_DICT) {
		const stg_colenc *e = &q->v.enc[col];
		gpu_str *o = (gpu_str *)(blob + j->dict);
		uint64_t at = 0;
		for (uint64_t d = 0; d < e->dict_n; d++) {
			stg_strref r = e->dict[d];
			o[d].len = r.len;
			o[d].off = (uint32_t)(q->toff +
					      (q->cp ? at : r.off - q->tmin));
			if (!r.len)
				o[d].off = (uint32_t)q->toff;
			at += r.len;
		}
	}
}

/*
 * The parts expanded on the device (q->dk) of a column being loaded into
 * values dd (w bytes a row) and NULL bytes dn: in batches of up to
 * GC_DEC_BATCH scratch bytes, each batch's jobs, bitmaps and (unless the
 * mapping is registered: DMA'd from it) packed words gathered into one
 * host blob on every core and uploaded at once, then one kernel launch.
 * Ordered on gpmdb's stream after the column's other uploads.
 */
static int gc_dec_column(const gc_part *pt, uint32_t nt, int col, size_t w,
			 char *dd, uint8_t *dn, char *err, size_t errlen)
{
	gc_dec_job *jobs = NULL;
	gc_dec_src *src = NULL;
	char *blob = NULL;
	int rc = GPMDB_OK;
	bool any = false;

	for (uint32_t t = 0; t < nt; t++)
		any |= pt[t].dk && pt[t].lo != pt[t].hi;
	if (!any)
		return GPMDB_OK;
	if (!(jobs = malloc(sizeof(*jobs) * (nt + 1))) ||
	    !(src = malloc(sizeof(*src) * (nt + 1)))) {
		free(jobs);
		snprintf(err, errlen, "out of memory");
		return GPMDB_NOMEM;
	}
	/* batches that fit a pinned staging buffer are built in it (no
	 * malloc'd blob to fault in, copy again and unmap: 65 of Q6's 80 ms
	 * of loading at TPC-H SF10 in a fresh process, 398 MB through the
	 * blob and the staging copy); a tablet larger than that still goes
	 * through a blob of its own */
	uint64_t stage = gpu_stage_size();
	uint64_t lim = stage && stage < GC_DEC_BATCH ? stage : GC_DEC_BATCH;
	for (uint32_t t0 = 0, t1; t0 < nt && !rc; t0 = t1) {
		uint32_t n = 0, most = 0;
		uint64_t hb, db = 0, packed = 0;
		void *scr = NULL;

		/* the batch: jobs first in the blob, then their pieces */
		for (t1 = t0; t1 < nt; t1++)
			n += pt[t1].dk && pt[t1].lo != pt[t1].hi;
		n = n < 65535 ? n : 65535;
		hb = gc_al8(sizeof(gc_dec_job) * (uint64_t)n);
		n = 0;
		for (t1 = t0; t1 < nt && n < 65535; t1++) {
			const gc_part *q = &pt[t1];
			const stg_colenc *e;
			gc_dec_job *j = &jobs[n];
			gc_dec_src *s = &src[n];
			uint64_t wf, wl, need;
			if (!q->dk || q->lo == q->hi)
				continue;
			e = &q->v.enc[col];
			wf = ((uint64_t)q->lo * e->bits) >> 6;
			wl = ((uint64_t)q->hi * e->bits + 63) >> 6;
			memset(j, 0, sizeof(*j));
			memset(s, 0, sizeof(*s));
			s->q = q;
			s->words = e->words + wf;
			s->nwords = e->bits ? (wl - wf) * 8 : 0;
			s->nbm = (q->hi + 31) / 32 - q->lo / 32;
			s->direct =
			    s->nwords && gc_registered(s->words, s->nwords);
			need = s->nwords + 3 * gc_al8(s->nbm * 4ull) +
			       (e->kind == STG_ENC_DICT ? e->dict_n * 8 : 0);
			if (n && hb + db + need > lim)
				break;
			j->kind = e->kind;
			j->bits = e->bits;
			j->base = e->base;
			j->bitsub = wf * 64;
			j->lo = q->lo;
			j->hi = q->hi;
			j->out = q->off;
			j->toff = (uint32_t)q->toff;
			j->del = j->nul = j->pre = j->dict = GC_DEC_NONE;
			if (s->direct) {
				j->words = GC_DEC_NONE; /* placed below */
				db += s->nwords;
			} else {
				j->words = hb;
				hb += gc_al8(s->nwords);
			}
			if (q->has_null) {
				j->nul = hb;
				hb += gc_al8(s->nbm * 4ull);
			}
			if (q->m != q->hi - q->lo) {
				j->del = hb;
				hb += gc_al8(s->nbm * 4ull);
				j->pre = hb;
				hb += gc_al8(s->nbm * 4ull);
			}
			if (e->kind == STG_ENC_DICT) {
				j->dict_n = (uint32_t)e->dict_n;
				j->dict = hb;
				hb += gc_al8(e->dict_n * sizeof(gpu_str));
			}
			most = q->hi - q->lo > most ? q->hi - q->lo : most;
			packed += s->nwords;
			n++;
		}
		if (!n)
			break;
		/* the directly DMA'd words after the blob */
		{
			uint64_t at = hb;
			for (uint32_t i = 0; i < n; i++)
				if (src[i].direct) {
					jobs[i].words = at;
					at += gc_al8(src[i].nwords);
				}
			db = at - hb;
		}
		for (;;) {
			rc = gpu_alloc(&scr, hb + db, err, errlen);
			if (rc != GPMDB_NOMEM || !gc_evict_one())
				break;
		}
		bool staged = hb <= stage;
		if (!rc && staged)
			rc = gpu_stage_take(&blob, err, errlen);
		else if (!rc && !(blob = malloc(hb))) {
			snprintf(err, errlen, "out of memory");
			rc = GPMDB_NOMEM;
		}
		if (!rc) {
			memcpy(blob, jobs, sizeof(gc_dec_job) * n);
#pragma omp parallel for schedule(dynamic, 1) if (n > 1)
			for (uint32_t i = 0; i < n; i++)
				gc_dec_fill(&jobs[i], &src[i], col, blob);
			if (staged) {
				rc = gpu_stage_send(scr, hb, err, errlen);
				gc_st.up_staged += hb;
			} else {
				rc = gc_put(scr, blob, hb, err, errlen);
			}
		}
		for (uint32_t i = 0; i < n && !rc; i++)
			if (src[i].direct)
				rc = gc_put((char *)scr + jobs[i].words,
					    src[i].words, src[i].nwords, err,
					    errlen);
		if (!rc)
			rc = gpu_cache_decode((const gc_dec_job *)scr, n, most,
					      scr, dd, dn, (uint32_t)w, err,
					      errlen);
		if (scr)
			gpu_free(scr, NULL, 0); /* stream-ordered */
		if (!staged)
			free(blob);
		blob = NULL;
		if (!rc) {
			gc_st.dec_dev_tablets += n;
			gc_st.dec_dev_bytes += packed;
		}
	}
	free(jobs);
	free(src);
	return rc;
}

/* Rows of a group of tablets packed on the host at once, then uploaded
 * together: at most this many (bounds the host buffer). */
#define GC_GROUP_ROWS (4u << 20)

/* Pass 2: packs and uploads the range measured as z into dev (z->bytes);
 * ref filled, *segp (TEXT: one per tablet) malloc'd.  Tablets are packed
 * on every core a group at a time and each group's values and NULL
 * bytes go up in one copy; a column's values that need no change
 * (numbers, no deleted row) are copied from the mapping itself.  A GPMDB
 * code. */
static int gc_pack(stg_pool *p, uint32_t table_id, int col, int stype,
		   uint64_t row0, uint64_t nrows, const gc_size *z, void *dev,
		   gcache_colref *ref, gcache_seg **segp, char *err,
		   size_t errlen)
{
	size_t w = gc_width(stype);
	gc_part *pt = NULL;
	gc_size now;
	uint32_t nt = 0;
	gcache_seg *seg = NULL;
	char *vals = NULL, *hc = NULL;
	uint8_t *nul = NULL;
	int rc;
	uint64_t dbytes = (z->live * w + 255) & ~255ull;
	uint64_t nbytes = z->has_null ? (z->live + 256) & ~255ull : 0;
	char *dd = dev, *dn = z->has_null ? dd + dbytes : NULL,
	     *dt = dd + dbytes + nbytes;

	memset(ref, 0, sizeof(*ref));
	*segp = NULL;
	if ((rc = gc_parts(p, table_id, col, stype, row0, nrows, true, &now,
			   &pt, &nt, err, errlen)))
		return rc;
	if (now.live != z->live || now.ntext != z->ntext ||
	    now.hcopy != z->hcopy || now.has_null != z->has_null) {
		snprintf(err, errlen,
			 "GPU column cache: table changed while loading");
		rc = GPMDB_INTERNAL;
		goto out;
	}
	/* the segments, then the compacted text (gc_compact): one
	 * allocation, freed with the segments */
	if (stype == STG_T_TEXT &&
	    !(seg = calloc(1, sizeof(gcache_seg) * (nt + 1) + z->hcopy))) {
		rc = GPMDB_NOMEM;
		goto nomem;
	}
	hc = seg ? (char *)(seg + nt + 1) : NULL;
	{
		/* a group's rows: GC_GROUP_ROWS, or one tablet's if more */
		uint64_t total = 0, most = 0;
		for (uint32_t t = 0; t < nt; t++) {
			uint64_t r = (uint64_t)pt[t].hi - pt[t].lo;
			total += r;
			most = r > most ? r : most;
		}
		if (most < GC_GROUP_ROWS)
			most = total < GC_GROUP_ROWS ? total : GC_GROUP_ROWS;
		if (!(vals = malloc((size_t)most * w + 16)) ||
		    (dn && !(nul = malloc((size_t)most + 16)))) {
			rc = GPMDB_NOMEM;
			goto nomem;
		}
	}
	for (uint32_t g0 = 0, g1; g0 < nt && !rc; g0 = g1) {
		uint64_t rows = 0, base = pt[g0].off;
		/* a group: tablets up to GC_GROUP_ROWS rows (one at least) */
		for (g1 = g0; g1 < nt; g1++) {
			uint64_t r = (uint64_t)pt[g1].hi - pt[g1].lo;
			if (g1 > g0 && rows + r > GC_GROUP_ROWS)
				break;
			rows += r;
		}
		/* a number column's tablet without deleted rows: from the
		 * mapping (direct DMA when it is registered) */
		if (stype == STG_T_TEXT &&
		    (rc = gc_zt_pack(pt, g0, g1, col, base, (gpu_str *)vals,
				     nul, hc, err, errlen)))
			break;
#pragma omp parallel for schedule(dynamic, 1) if (g1 - g0 > 1)
		for (uint32_t t = g0; t < g1; t++) {
			gc_part *q = &pt[t];
			bool whole = q->m == q->hi - q->lo,
			     direct = stype != STG_T_TEXT && whole && !q->dk;
			/* expanded on the device (gc_dec_column): only a
			 * dictionary's strings, when compacted */
			if (q->dk) {
				if (q->cp && q->lo != q->hi)
					gc_dict_compact(q, col, hc);
				continue;
			}
			/* nothing to pack: no per-row pass (60M rows of a
			 * number column took 150 ms on a core for nothing);
			 * row ids of a whole tablet are made on the device */
			if (q->lo == q->hi || (direct && !nul) || q->zt)
				continue;
			gc_pack_part(q, col, stype, w,
				     direct ? NULL : vals + (q->off - base) * w,
				     nul ? nul + (q->off - base) : NULL, hc);
		}
		/* the group's live rows end where its last tablet's do */
		uint64_t end = base;
		for (uint32_t t = g0; t < g1; t++)
			if (pt[t].lo != pt[t].hi)
				end = pt[t].off + pt[t].m;
		/* uploads in tablet order: each run of packed values (and
		 * NULL bytes) at once, a tablet taken from the mapping by
		 * itself; a tablet expanded on the device ends both runs */
		uint64_t run = base, nrun = base;
		for (uint32_t t = g0; t <= g1 && !rc; t++) {
			gc_part *q = t < g1 ? &pt[t] : NULL;
			bool dk = q && q->dk;
			bool direct = q && !dk && stype != STG_T_TEXT &&
				      q->m == q->hi - q->lo;
			if (q && q->lo == q->hi)
				continue;
			uint64_t at = q ? q->off : end;
			if ((!q || direct || dk) && at > run)
				rc = gc_put(
				    dd + run * w, vals + (run - base) * w,
				    (size_t)(at - run) * w, err, errlen);
			if (!rc && nul && (!q || dk) && at > nrun)
				rc = gc_put(dn + nrun, nul + (nrun - base),
					    (size_t)(at - nrun), err, errlen);
			if (!q || rc)
				break;
			if (dk) {
				run = nrun = q->off + q->m;
			} else if (direct && col == GCACHE_ROWID) {
				/* 8 bytes a row not uploaded (400 MB for 50M
				 * rows, most of a first GPU UPDATE's time) */
				rc = gpu_fill_seq(
				    (int64_t *)(dd + q->off * w),
				    (int64_t)(q->v.first_row + q->lo), q->m,
				    err, errlen);
				run = q->off + q->m;
			} else if (direct) {
				rc = gc_put(dd + q->off * w,
					    (const char *)q->v.data[col] +
						(size_t)q->lo * w,
					    (size_t)q->m * w, err, errlen);
				run = q->off + q->m;
			}
			if (!rc && stype == STG_T_TEXT) {
				const char *h =
				    q->cp ? hc + q->hoff : q->v.heap + q->tmin;
				seg[q->seg].dev_off = q->toff;
				seg[q->seg].host = h;
				ref->nseg = q->seg + 1;
				rc =
				    gc_put(dt + q->toff, h, q->tb, err, errlen);
			}
		}
	}
	/* the encoded parts, after the uploads above on the stream */
	if (!rc) {
		struct timespec t0;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		rc = gc_dec_column(pt, nt, col, w, dd, (uint8_t *)dn, err,
				   errlen);
		gc_st.expand_ns += gc_ns_since(&t0);
	}
	if (!rc)
		for (uint32_t t = 0; t < nt; t++)
			gc_st.dec_host_tablets += pt[t].pb.n != 0;
	goto out;
nomem:
	snprintf(err, errlen, "out of memory");
out:
	free(vals);
	free(nul);
	gc_parts_free(pt, nt);
	if (rc) {
		free(seg);
		return rc;
	}
	ref->col.data = dd;
	ref->col.nulls = (uint8_t *)dn;
	ref->col.type = (uint8_t)gc_coltype(stype);
	ref->nrows = z->live;
	if (stype == STG_T_TEXT) {
		ref->text = dt;
		ref->ntext = z->ntext;
		ref->seg = seg;
	}
	*segp = seg;
	return GPMDB_OK;
}

/* Notes whether the pool mapping is registered (gc_put DMAs from it). */
static void gc_note_base(stg_pool *p)
{
	uint64_t maplen = 0;
	const char *mb = stg_pool_base(p, &maplen);

	gc_reg_base = mb && gpu_pm_is_registered(mb, maplen) ? mb : NULL;
	gc_reg_len = gc_reg_base ? maplen : 0;
	gc_map_base = mb;
	gc_map_len = mb ? maplen : 0;
	gc_alias = mb ? stg_pool_gpu_alias(p) : NULL;
}

uint64_t gcache_text_limit(void)
{
	/* GPMDB_TEST_GPU_TEXT_LIMIT: a smaller limit, for tests at small
	 * scale */
	const char *e = getenv("GPMDB_TEST_GPU_TEXT_LIMIT");
	long long v = e ? atoll(e) : 0;

	return v > 0 && v < 0x80000000ll ? (uint64_t)v : 0x80000000ull;
}

static int gc_limits(const gc_size *z, char *err, size_t errlen)
{
	if (z->live > UINT32_MAX || z->ntext >= gcache_text_limit()) {
		snprintf(err, errlen,
			 "table too large for one GPU run (%llu rows, %llu "
			 "text bytes; the limits are 2^32 rows and %llu "
			 "bytes)",
			 (unsigned long long)z->live,
			 (unsigned long long)z->ntext,
			 (unsigned long long)gcache_text_limit());
		return GPMDB_UNSUPPORTED;
	}
	return GPMDB_OK;
}

/*
 * The last whole-column measures (gcache_need), so that the load that
 * follows a size check does not scan the column again.  Valid for the
 * same pool, table, column, write stamp and counts.
 */
#define GC_MEMO 32
typedef struct gc_memo {
	const stg_pool *p;
	uint32_t table_id;
	int col;
	uint64_t stamp, rows, deleted;
	gc_size z;
} gc_memo;
static gc_memo gc_memos[GC_MEMO];
static int gc_memo_next;

static gc_memo *gc_memo_find(const stg_pool *p, const gc_entry *e)
{
	for (int i = 0; i < GC_MEMO; i++) {
		gc_memo *m = &gc_memos[i];
		if (m->p == p && m->table_id == e->table_id &&
		    m->col == e->col && m->stamp == e->stamp &&
		    m->rows == e->rows && m->deleted == e->deleted)
			return m;
	}
	return NULL;
}

/* The whole column's measure, memoised. */
static int gc_measure_entry(stg_pool *p, const gc_entry *e, int stype,
			    gc_size *z, char *err, size_t errlen)
{
	gc_memo *m = gc_memo_find(p, e);
	int rc;

	if (m) {
		*z = m->z;
		return GPMDB_OK;
	}
	struct timespec t0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	rc = gc_measure(p, e->table_id, e->col, stype, 0, UINT64_MAX, z, err,
			errlen);
	gc_st.measure_ns += gc_ns_since(&t0);
	if (rc)
		return rc;
	m = &gc_memos[gc_memo_next];
	gc_memo_next = (gc_memo_next + 1) % GC_MEMO;
	m->p = p;
	m->table_id = e->table_id;
	m->col = e->col;
	m->stamp = e->stamp;
	m->rows = e->rows;
	m->deleted = e->deleted;
	m->z = *z;
	return GPMDB_OK;
}

/* Packs and uploads the whole column; e->ref filled.  A GPMDB code. */
static int gc_load(stg_pool *p, gc_entry *e, int stype, char *err,
		   size_t errlen)
{
	gc_size z;
	struct timespec t0, t1;
	int rc;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	gc_note_base(p);
	if ((rc = gc_measure_entry(p, e, stype, &z, err, errlen)) ||
	    (rc = gc_limits(&z, err, errlen)))
		return rc;
	e->bytes = z.bytes;
	if ((rc = gc_alloc(&e->dev, e->bytes, err, errlen)))
		return rc;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	rc = gc_pack(p, e->table_id, e->col, stype, 0, UINT64_MAX, &z, e->dev,
		     &e->ref, &e->seg, err, errlen);
	gc_st.pack_ns += gc_ns_since(&t1);
	if (rc) {
		gpu_free(e->dev, NULL, 0);
		e->dev = NULL;
		return rc;
	}
	gc_st.uploaded += e->bytes;
	gc_st.load_ns += gc_ns_since(&t0);
	return GPMDB_OK;
}

/* The entry of (owner, table, col) in e's key; -1 when none.  *stale: a
 * stale one's index (to free), else -1. */
static int gc_find(const gc_entry *k, int *stale)
{
	*stale = -1;
	for (int i = 0; i < gc_n; i++) {
		gc_entry *x = &gc_ents[i];
		if (x->owner != k->owner || x->table_id != k->table_id ||
		    x->col != k->col)
			continue;
		if (x->stamp == k->stamp && x->rows == k->rows &&
		    x->deleted == k->deleted)
			return i;
		*stale = i;
		return -1;
	}
	return -1;
}

/* The key of column col of table_id as it is now. */
static void gc_key(stg_pool *p, uint64_t owner, uint32_t table_id, int col,
		   gc_entry *e)
{
	memset(e, 0, sizeof(*e));
	e->owner = owner;
	e->table_id = table_id;
	e->col = col;
	e->stamp = stg_col_stamp(p, table_id, col < 0 ? -1 : col);
	e->rows = stg_row_count(p, table_id);
	e->deleted = stg_deleted_count(p, table_id);
}

int gcache_column(stg_pool *p, uint64_t owner, uint32_t table_id, int col,
		  int stype, gcache_colref *out, char *err, size_t errlen)
{
	gc_entry e;
	int rc, i, stale;

	memset(out, 0, sizeof(*out));
	if ((rc = gpu_init(err, errlen)))
		return rc;
	gc_key(p, owner, table_id, col, &e);
	if ((i = gc_find(&e, &stale)) >= 0) {
		gc_entry *x = &gc_ents[i];
		x->used = ++gc_clock;
		if (x->pin != gc_tick)
			x->pinseq = ++gc_pinseq;
		x->pin = gc_tick;
		gc_st.hits++;
		*out = x->ref;
		out->hit = 1;
		return GPMDB_OK;
	}
	if (stale >= 0) {
		gc_free_at(stale); /* stale: a write came after it */
		gc_st.stale++;
	}
	gc_st.misses++;
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
	e.pinseq = ++gc_pinseq;
	gc_ents[gc_n++] = e;
	gc_bytes += e.bytes;
	*out = e.ref;
	return GPMDB_OK;
}

int gcache_holds(uint64_t owner, uint32_t table_id)
{
	for (int i = 0; i < gc_n; i++)
		if (gc_ents[i].owner == owner &&
		    gc_ents[i].table_id == table_id)
			return 1;
	return 0;
}

/* Any of the n bits set? */
static bool gc_any_bit(const uint32_t *bits, uint64_t n)
{
	for (uint64_t w = 0; bits && w < n / 32; w++)
		if (bits[w])
			return true;
	return bits && (n & 31) && (bits[n / 32] & ((1u << (n & 31)) - 1u));
}

int gcache_write_through(stg_pool *p, uint64_t owner, uint32_t table_id,
			 int col, uint64_t before, const uint64_t *rowids,
			 uint64_t n, const void *vals, const uint32_t *nulls,
			 uint32_t width, int on_dev)
{
	char err[256];
	gc_entry k, *x;
	int i;

	for (i = 0; i < gc_n; i++)
		if (gc_ents[i].owner == owner &&
		    gc_ents[i].table_id == table_id && gc_ents[i].col == col)
			break;
	if (i == gc_n || n == 0)
		return 0;
	x = &gc_ents[i];
	gc_key(p, owner, table_id, col, &k);
	/* the copy was current when the UPDATE began, and row i is at
	 * position i (no deleted rows left out, no rows added since) */
	if (x->stamp != before || x->rows != k.rows || x->deleted != 0 ||
	    k.deleted != 0 || x->ref.nrows != k.rows)
		return 0;
	/* strictly increasing (the caller's check): the last is the
	 * largest, and must be in the copy */
	if (!on_dev && rowids[n - 1] >= k.rows)
		return 0;
	/* a NULL where the copy keeps no NULL bytes: load it again */
	if (!x->ref.col.nulls &&
	    (on_dev ? nulls != NULL : gc_any_bit(nulls, n)))
		return 0;
	if ((on_dev ? gpu_scatter_rows_dev : gpu_scatter_rows)(
		x->ref.col.data, x->ref.col.nulls, width, rowids, vals, nulls,
		n, err, sizeof(err)) != GPMDB_OK) {
		gc_free_at(i); /* half written: never serve it */
		return 0;
	}
	x->stamp = k.stamp;
	gc_st.write_through++;
	return 1;
}

int gcache_need(stg_pool *p, uint64_t owner, uint32_t table_id, int col,
		int stype, uint64_t *bytes, char *err, size_t errlen)
{
	gc_entry e;
	gc_size z;
	int rc, i, stale;

	*bytes = 0;
	gc_key(p, owner, table_id, col, &e);
	if ((i = gc_find(&e, &stale)) >= 0) {
		/* pinned: already outside gcache_room */
		*bytes = gc_ents[i].pin == gc_tick ? 0 : gc_ents[i].bytes;
		return GPMDB_OK;
	}
	if ((rc = gc_measure_entry(p, &e,
				   col == GCACHE_ROWID ? GCACHE_ROWID : stype,
				   &z, err, errlen)))
		return rc;
	/* past what one entry addresses (2^32 rows, gcache_text_limit
	 * bytes of text): never fits, so the caller streams it in windows
	 * (TPC-H Q13's o_comment at SF30, 2.2 GB, fell back to the CPU) */
	*bytes = gc_limits(&z, NULL, 0) ? UINT64_MAX : z.bytes;
	return GPMDB_OK;
}

uint64_t gcache_room(void)
{
	uint64_t lim = gc_limit_now(), pinned = 0;

	for (int i = 0; i < gc_n; i++)
		if (gc_ents[i].pin == gc_tick)
			pinned += gc_ents[i].bytes;
	return lim > pinned ? lim - pinned : 0;
}

int gcache_range_size(stg_pool *p, uint32_t table_id, int col, int stype,
		      uint64_t row0, uint64_t nrows, uint64_t *live,
		      uint64_t *bytes, char *err, size_t errlen)
{
	gc_size z;
	int rc = gc_measure(p, table_id, col,
			    col == GCACHE_ROWID ? GCACHE_ROWID : stype, row0,
			    nrows, &z, err, errlen);

	*live = rc ? 0 : z.live;
	*bytes = rc ? 0 : z.bytes;
	return rc;
}

int gcache_column_range(stg_pool *p, uint32_t table_id, int col, int stype,
			uint64_t row0, uint64_t nrows, gcache_colref *out,
			void **dev, gcache_seg **seg, char *err, size_t errlen)
{
	gc_size z;
	struct timespec t0;
	int rc;

	memset(out, 0, sizeof(*out));
	*dev = NULL;
	*seg = NULL;
	if ((rc = gpu_init(err, errlen)))
		return rc;
	if (col == GCACHE_ROWID)
		stype = GCACHE_ROWID;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	gc_note_base(p);
	if ((rc = gc_measure(p, table_id, col, stype, row0, nrows, &z, err,
			     errlen)) ||
	    (rc = gc_limits(&z, err, errlen)))
		return rc;
	/* outside the cache's accounting (the caller frees it); cached
	 * entries this query does not use make room if memory runs out */
	for (;;) {
		rc = gpu_alloc(dev, z.bytes, err, errlen);
		if (rc != GPMDB_NOMEM || !gc_evict_one())
			break;
	}
	if (rc)
		return rc;
	if ((rc = gc_pack(p, table_id, col, stype, row0, nrows, &z, *dev, out,
			  seg, err, errlen))) {
		gpu_free(*dev, NULL, 0);
		*dev = NULL;
		return rc;
	}
	gc_st.range_loads++;
	gc_st.range_bytes += z.bytes;
	gc_st.load_ns += gc_ns_since(&t0);
	return GPMDB_OK;
}

/* ---- copies an INSERT left on the device (gcache_adopt) ------------- */

int gcache_adopt_alloc(int stype, uint64_t nrows, int with_nulls, void **dev,
		       uint8_t **nulls, uint64_t *bytes, char *err,
		       size_t errlen)
{
	size_t w = gc_width(stype);
	uint64_t dbytes = (nrows * w + 255) & ~255ull;
	uint64_t nbytes = with_nulls ? (nrows + 256) & ~255ull : 0;
	int rc;

	*dev = NULL;
	*nulls = NULL;
	*bytes = dbytes + nbytes + 16;
	if (stype == STG_T_TEXT || nrows > UINT32_MAX) {
		snprintf(err, errlen,
			 "the column cache adopts no TEXT column "
			 "and at most 2^32 rows");
		return GPMDB_UNSUPPORTED;
	}
	if ((rc = gc_alloc(dev, *bytes, err, errlen)))
		return rc;
	if (with_nulls)
		*nulls = (uint8_t *)*dev + dbytes;
	return GPMDB_OK;
}

int gcache_adopt(stg_pool *p, uint64_t owner, uint32_t table_id, int col,
		 int stype, void *dev, uint64_t bytes, uint64_t nrows,
		 int with_nulls)
{
	gc_entry e;
	int i, stale;

	gc_key(p, owner, table_id, col, &e);
	/* the copy is the whole column only while nothing else is there */
	if (e.deleted != 0 || e.rows != nrows || nrows == 0) {
		gpu_free(dev, NULL, 0);
		return 0;
	}
	if ((i = gc_find(&e, &stale)) >= 0)
		stale = i;
	if (stale >= 0)
		gc_free_at(stale);
	if (gc_n == gc_cap) {
		int cap = gc_cap ? gc_cap * 2 : 16;
		gc_entry *n = realloc(gc_ents, sizeof(*n) * (size_t)cap);
		if (!n) {
			gpu_free(dev, NULL, 0);
			return 0;
		}
		gc_ents = n;
		gc_cap = cap;
	}
	e.dev = dev;
	e.bytes = bytes;
	e.ref.col.data = dev;
	e.ref.col.nulls =
	    with_nulls
		? (uint8_t *)dev + ((nrows * gc_width(stype) + 255) & ~255ull)
		: NULL;
	e.ref.col.type = (uint8_t)gc_coltype(stype);
	e.ref.nrows = nrows;
	e.used = ++gc_clock;
	e.pin = 0;
	gc_ents[gc_n++] = e;
	gc_bytes += bytes;
	gc_st.adopted++;
	return 1;
}
