/*
 * encode.c - encoded tablets (layout.h "Encodings", docs/ARCHITECTURE.md
 * "Encodings"): frame of reference with bit-packing for the integer-like
 * types, dictionaries for TEXT, the decoding every reader goes through,
 * VACUUM and auto_encode.
 *
 * A tablet is encoded whole, into a new extent and a new heap holding
 * only the strings its rows refer to; the directory slot changes through
 * the metadata log and the old extent and heap are freed at commit, as
 * in tablet.c's moves, so a crash or a rollback finds the plain tablet.
 * Encoded tablets are sealed: a write widens them first (tab_widen).
 */
#include <omp.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "crashpoints.h"
#include "internal.h"

static uint64_t al256(uint64_t x)
{
	return (x + STG_TABLET_ALIGN - 1) & ~(uint64_t)(STG_TABLET_ALIGN - 1);
}

/* ---- Decoding --------------------------------------------------------- */

static inline uint64_t field(const uint64_t *wd, uint64_t pos, unsigned bits)
{
	uint64_t i = pos >> 6, v;
	unsigned sh = (unsigned)(pos & 63);

	v = wd[i] >> sh;
	if (sh && sh + bits > 64)
		v |= wd[i + 1] << (64 - sh);
	return bits == 64 ? v : v & ((1ull << bits) - 1);
}

void stg_colenc_decode(const stg_colenc *e, size_t w, uint64_t from, uint64_t n,
		       void *out)
{
	unsigned b = e->bits;
	uint64_t i, pos = from * b;

	if (e->kind == STG_ENC_ZTEXT) { /* stg_tablet_text reads it */
		memset(out, 0, n * sizeof(stg_strref));
		return;
	}
	if (e->kind == STG_ENC_DICT) {
		stg_strref *o = out;

		const uint8_t *by = (const uint8_t *)e->words;
		uint64_t m = b < 64 ? (1ull << b) - 1 : ~0ull, v;

		for (i = 0; i < n; i++, pos += b) {
			uint64_t k = 0;

			if (b && b <= 57) {
				memcpy(&v, by + (pos >> 3), 8);
				k = (v >> (pos & 7)) & m;
			} else if (b) {
				k = field(e->words, pos, b);
			}

			/* gpmdb_check proves codes in range; a bad one
			 * reads as '' rather than outside the pool */
			o[i] = k < e->dict_n ? e->dict[k] : (stg_strref){0, 0};
		}
		return;
	}
	if (b == 0) {
		for (i = 0; i < n; i++)
			memcpy((char *)out + i * w, &e->base, w);
		return;
	}
	/* up to 57 bits a field lies within the 8 bytes from its first
	 * byte: one unaligned load, no branch (the spare word keeps the
	 * load inside the array) */
	if (b <= 57 && (w == 8 || w == 4)) {
		const uint8_t *by = (const uint8_t *)e->words;
		uint64_t m = (1ull << b) - 1, v;

		if (w == 8) {
			uint64_t *o = out;

			for (i = 0; i < n; i++, pos += b) {
				memcpy(&v, by + (pos >> 3), 8);
				o[i] = e->base + ((v >> (pos & 7)) & m);
			}
		} else {
			uint32_t *o = out;

			for (i = 0; i < n; i++, pos += b) {
				memcpy(&v, by + (pos >> 3), 8);
				o[i] = (uint32_t)(e->base +
						  ((v >> (pos & 7)) & m));
			}
		}
		return;
	}
	switch (w) {
	case 8: {
		uint64_t *o = out;

		for (i = 0; i < n; i++, pos += b)
			o[i] = e->base + field(e->words, pos, b);
		break;
	}
	case 4: {
		uint32_t *o = out;

		for (i = 0; i < n; i++, pos += b)
			o[i] = (uint32_t)(e->base + field(e->words, pos, b));
		break;
	}
	default:
		for (i = 0; i < n; i++, pos += b) {
			uint64_t v = e->base + field(e->words, pos, b);

			memcpy((char *)out + i * w, &v, w); /* little-endian */
		}
	}
}

void stg_dict_codes(const stg_colenc *e, uint64_t from, uint64_t n,
		    uint32_t *out)
{
	unsigned b = e->bits;
	uint64_t pos = from * b, m = b < 64 ? (1ull << b) - 1 : ~0ull, v;
	const uint8_t *by = (const uint8_t *)e->words;

	for (uint64_t i = 0; i < n; i++, pos += b) {
		uint64_t k = 0;

		if (b && b <= 57) { /* as stg_colenc_decode */
			memcpy(&v, by + (pos >> 3), 8);
			k = (v >> (pos & 7)) & m;
		} else if (b) {
			k = field(e->words, pos, b);
		}
		out[i] = k < e->dict_n ? (uint32_t)k : (uint32_t)e->dict_n;
	}
}

const void *stg_tablet_col(const stg_tablet_view *v, int c, size_t w,
			   uint64_t from, uint64_t n, void *buf)
{
	if (v->data[c])
		return (const char *)v->data[c] + from * w;
	stg_colenc_decode(&v->enc[c], w, from, n, buf);
	return buf;
}

int stg_tablet_decode_all(stg_tablet_view *v, const uint8_t *want,
			  stg_plainbuf *pb)
{
	int rc;

	memset(pb, 0, sizeof(*pb));
	if (v->enc == NULL)
		return GPMDB_OK;
	pb->n = v->ncols;
	pb->arr = calloc((size_t)v->ncols + 1, sizeof(*pb->arr));
	pb->data = calloc((size_t)v->ncols + 1, sizeof(*pb->data));
	if (!pb->arr || !pb->data) {
		stg_plainbuf_free(pb);
		return GPMDB_NOMEM;
	}
	for (int c = 0; c < v->ncols; c++)
		pb->data[c] = v->data[c];
	/* compressed TEXT first: into a copy of the heap */
	if ((rc = zt_decode_all(v, want, pb)) != GPMDB_OK) {
		stg_plainbuf_free(pb);
		return rc;
	}
	for (int c = 0; c < v->ncols; c++) {
		const stg_colenc *e = &v->enc[c];

		if (v->data[c] || (want && !want[c]) ||
		    e->kind == STG_ENC_ZTEXT)
			continue;
		pb->arr[c] = malloc((size_t)e->width * v->nrows + 8);
		if (pb->arr[c] == NULL) {
			stg_plainbuf_free(pb);
			return GPMDB_NOMEM;
		}
		stg_colenc_decode(e, e->width, 0, v->nrows, pb->arr[c]);
		pb->data[c] = pb->arr[c];
	}
	v->data = pb->data;
	v->enc = NULL;
	return GPMDB_OK;
}

void stg_plainbuf_free(stg_plainbuf *pb)
{
	for (int c = 0; pb->arr && c < pb->n; c++)
		free(pb->arr[c]);
	free(pb->arr);
	free(pb->data);
	free(pb->heap);
	memset(pb, 0, sizeof(*pb));
}

void enc_colenc(stg_tablet_hdr *h, uint32_t c, stg_colenc *out)
{
	const stg_col_enc *ce = &tab_encs(h)[c];
	char *b = (char *)h;

	memset(out, 0, sizeof(*out));
	out->kind = ce->kind;
	out->bits = ce->bits;
	out->base = ce->base;
	out->words = (const uint64_t *)(b + tab_colmap(h)[2 * c]);
	if (ce->kind == STG_ENC_DICT) {
		out->dict = (const stg_strref *)(b + ce->dict_rel);
		out->dict_n = ce->dict_n;
	}
	if (ce->kind == STG_ENC_ZTEXT) {
		out->blk = b + ce->dict_rel;
		out->dict_n = ce->dict_n;
		out->z = (const uint8_t *)b + ce->z_rel;
		out->heap_used = h->heap_off ? h->heap_used : 0;
	}
}

void enc_decode(stg_tablet_hdr *h, uint32_t c, size_t w, uint64_t from,
		uint64_t n, void *out)
{
	stg_colenc e;

	if (!h->enc_rel || tab_encs(h)[c].kind == STG_ENC_PLAIN) {
		memcpy(out, (char *)h + tab_colmap(h)[2 * c] + from * w, n * w);
		return;
	}
	if (tab_encs(h)[c].kind == STG_ENC_ZTEXT)
		return; /* out left as it is: zt_widen_heap, zt_read read it */
	enc_colenc(h, c, &e);
	stg_colenc_decode(&e, w, from, n, out);
}

/* ---- Encoding --------------------------------------------------------- */

static bool enc_for_type(stg_type t)
{
	return t == STG_T_INT || t == STG_T_BIGINT || t == STG_T_DECIMAL ||
	       t == STG_T_DATE || t == STG_T_BOOLEAN;
}

/* Value i of a plain array of type t, sign-extended to 64 bits. */
static uint64_t plain_val(const void *a, stg_type t, uint64_t i)
{
	switch (t) {
	case STG_T_INT:
	case STG_T_DATE:
		return (uint64_t)(int64_t)((const int32_t *)a)[i];
	case STG_T_BOOLEAN:
		return ((const uint8_t *)a)[i];
	default:
		return ((const uint64_t *)a)[i];
	}
}

static unsigned bits_for(uint64_t range)
{
	return range ? 64u - (unsigned)__builtin_clzll(range) : 0u;
}

uint64_t enc_packed_bytes(uint64_t n, unsigned bits)
{
	return ((n * bits + 63) / 64 + 1) * 8; /* a spare word */
}

void enc_pack(uint64_t *wd, uint64_t i, unsigned bits, uint64_t v)
{
	uint64_t pos = i * bits;
	unsigned sh = (unsigned)(pos & 63);

	if (bits == 0)
		return;
	wd[pos >> 6] |= v << sh;
	if (sh && sh + bits > 64)
		wd[(pos >> 6) + 1] |= v >> (64 - sh);
}

/* One column's plan. */
typedef struct {
	stg_col_enc ce;
	uint64_t data_bytes; /* at colmap[2c] */
	uint32_t *codes;     /* DICT: each row's code */
	uint64_t *dict;	     /* DICT: a row holding each entry's string */
	uint64_t heap_bytes; /* strings the new heap keeps for it */
	uint64_t heap_at;    /* where in the new heap they go */
	zt_plan zt;	     /* ZTEXT: the compressed strings */
} col_plan;

/* A string of the old tablet. */
static const char *old_str(stg_pool *p, uint64_t heap_off, stg_strref r)
{
	return r.len ? (const char *)pool_at(p, heap_off) + r.off : "";
}

/* A string's hash, 8 bytes at a time (its top half is the slot's tag,
 * its bottom half the slot). */
static uint64_t str_hash(const char *s, uint32_t n)
{
	uint64_t h = 0x9e3779b97f4a7c15ull ^ n, v;
	uint32_t i = 0;

	for (; i + 8 <= n; i += 8) {
		memcpy(&v, s + i, 8);
		h = (h ^ v) * 0xff51afd7ed558ccdull;
		h ^= h >> 32;
	}
	if (i < n) {
		v = 0;
		memcpy(&v, s + i, n - i);
		h = (h ^ v) * 0xc4ceb9fe1a85ec53ull;
	}
	h ^= h >> 29;
	h *= 0xbf58476d1ce4e5b9ull;
	return h ^ (h >> 32);
}

#define PF 16 /* plan_text's rows hashed ahead */

/* TEXT column c: a dictionary when it is smaller than the plain array
 * and the strings (plan_ztext then tries compression).  The table's
 * slots hold an entry's code + 1 and its hash's top half, so that a
 * probe reads one slot and compares strings only of equal hashes (the
 * dictionary of a column of distinct strings, l_comment's, was most of
 * VACUUM's time in cache misses).  Fails only for memory. */
static int plan_text(stg_pool *p, stg_tablet_hdr *h, uint32_t c, uint64_t n,
		     col_plan *pl)
{
	const stg_strref *sr =
	    (const stg_strref *)((char *)h + tab_colmap(h)[2 * c]);
	const uint32_t *nb =
	    (const uint32_t *)((char *)h + tab_colmap(h)[2 * c + 1]);
	uint64_t cap = 16, mask, nd = 0, dstr = 0, all = 0, i;
	uint64_t *slot; /* tag << 32 | code + 1, 0 = empty */
	uint64_t hs[PF];

	while (cap < n * 2)
		cap <<= 1;
	mask = cap - 1;
	slot = calloc(cap, sizeof(*slot));
	pl->codes = malloc((n ? n : 1) * sizeof(*pl->codes));
	pl->dict = malloc((n ? n : 1) * sizeof(*pl->dict));
	if (!slot || !pl->codes || !pl->dict) {
		free(slot);
		return GPMDB_NOMEM; /* enc_tablet says so (columns planned in
				     * parallel: no pool_err here) */
	}
	/* the hashes PF rows ahead, their slots prefetched */
	for (i = 0; i < n && i < PF; i++) {
		hs[i] =
		    bit_get(nb, i)
			? 0
			: str_hash(old_str(p, h->heap_off, sr[i]), sr[i].len);
		__builtin_prefetch(&slot[hs[i] & mask]);
	}
	for (i = 0; i < n; i++) {
		uint64_t hv = hs[i % PF], tag = hv >> 32, k, j = i + PF;
		const char *s;
		uint32_t code;

		if (j < n) {
			hs[j % PF] =
			    bit_get(nb, j)
				? 0
				: str_hash(old_str(p, h->heap_off, sr[j]),
					   sr[j].len);
			__builtin_prefetch(&slot[hs[j % PF] & mask]);
		}
		if (bit_get(nb, i)) {
			pl->codes[i] = 0;
			continue;
		}
		all += sr[i].len;
		s = old_str(p, h->heap_off, sr[i]);
		for (k = hv & mask;; k = (k + 1) & mask) {
			uint64_t sl = slot[k];
			stg_strref o;

			if (sl == 0) {
				slot[k] = tag << 32 | (nd + 1);
				code = (uint32_t)nd;
				pl->dict[nd++] = i;
				dstr += sr[i].len;
				break;
			}
			if (sl >> 32 != tag)
				continue;
			code = (uint32_t)sl - 1;
			o = sr[pl->dict[code]];
			if (o.len == sr[i].len &&
			    !memcmp(old_str(p, h->heap_off, o), s, o.len))
				break;
		}
		pl->codes[i] = code;
	}
	free(slot);
	pl->ce.bits = (uint8_t)bits_for(nd > 1 ? nd - 1 : 0);
	if (nd &&
	    enc_packed_bytes(n, pl->ce.bits) + nd * 8 + dstr < n * 8 + all) {
		pl->ce.kind = STG_ENC_DICT;
		pl->ce.dict_n = nd;
		pl->data_bytes = enc_packed_bytes(n, pl->ce.bits);
		pl->heap_bytes = dstr;
		return GPMDB_OK;
	}
	free(pl->codes);
	free(pl->dict);
	pl->codes = NULL;
	pl->dict = NULL;
	pl->ce.bits = 0;
	pl->data_bytes = n * sizeof(stg_strref);
	pl->heap_bytes = all;
	return GPMDB_OK;
}

/* TEXT column c compressed (format version 5) when that is smaller than
 * what plan_text chose: worth trying only past 2 bytes a row (a
 * dictionary of a few codes stays one). */
static int plan_ztext(stg_pool *p, stg_tablet_hdr *h, uint32_t c, uint64_t n,
		      col_plan *pl)
{
	const stg_strref *sr =
	    (const stg_strref *)((char *)h + tab_colmap(h)[2 * c]);
	const uint32_t *nb =
	    (const uint32_t *)((char *)h + tab_colmap(h)[2 * c + 1]);
	uint64_t best = pl->data_bytes + pl->heap_bytes +
			(pl->ce.kind == STG_ENC_DICT ? pl->ce.dict_n * 8 : 0);
	int rc;

	if (p->sb.version < STG_FORMAT_ZTEXT || n == 0 ||
	    (best < 2 * n && !p->zt_always))
		return GPMDB_OK;
	rc = zt_plan_make(
	    sr, nb, h->heap_off ? (const char *)pool_at(p, h->heap_off) : NULL,
	    n, best, p->zt_always, &pl->zt);
	if (rc != GPMDB_OK)
		return rc; /* enc_tablet says why */
	if (pl->zt.bytes == 0 || (pl->zt.bytes >= best && !p->zt_always)) {
		zt_plan_free(&pl->zt);
		return GPMDB_OK;
	}
	free(pl->codes);
	free(pl->dict);
	pl->codes = NULL;
	pl->dict = NULL;
	pl->ce.kind = STG_ENC_ZTEXT;
	pl->ce.bits = 0;
	pl->ce.dict_n = 0;
	pl->data_bytes = pl->zt.bytes;
	pl->heap_bytes = 0;
	return GPMDB_OK;
}

static void plan_for(stg_tablet_hdr *h, uint32_t c, stg_type t, uint64_t n,
		     col_plan *pl)
{
	const void *a = (const char *)h + tab_colmap(h)[2 * c];
	size_t w = stg_type_width(t);
	uint64_t lo, hi;
	unsigned bits;

	pl->data_bytes = n * w;
	if (!enc_for_type(t) || n == 0)
		return;
	lo = hi = plain_val(a, t, 0);
	for (uint64_t i = 1; i < n; i++) {
		int64_t v = (int64_t)plain_val(a, t, i);

		if (v < (int64_t)lo)
			lo = (uint64_t)v;
		if (v > (int64_t)hi)
			hi = (uint64_t)v;
	}
	bits = bits_for(hi - lo); /* the difference fits 64 bits unsigned */
	if (enc_packed_bytes(n, bits) >= n * w)
		return;
	pl->ce.kind = STG_ENC_FOR;
	pl->ce.bits = (uint8_t)bits;
	pl->ce.base = lo;
	pl->data_bytes = enc_packed_bytes(n, bits);
}

static void plans_free(col_plan *pl, uint32_t ncols)
{
	for (uint32_t c = 0; pl && c < ncols; c++) {
		free(pl[c].codes);
		free(pl[c].dict);
		zt_plan_free(&pl[c].zt);
	}
	free(pl);
}

/* One tablet's plan (enc_plan_tablets): the columns' encodings chosen
 * from the tablet as it was at toff with n rows. */
typedef struct {
	uint64_t toff, n;
	col_plan *pl;
} tab_plan;

/* Column k of the tablet at h: its NULLs seen, then a frame of reference
 * or a dictionary planned (compressed TEXT is plan_ztext's). */
static int plan_col(stg_pool *p, stg_tablet_hdr *h, stg_type t, uint32_t k,
		    uint64_t n, col_plan *pl)
{
	const uint32_t *nb =
	    (const uint32_t *)((char *)h + tab_colmap(h)[2 * k + 1]);

	for (uint64_t w = 0; w < n / 32 && !pl->ce.has_nulls; w++)
		pl->ce.has_nulls = nb[w] != 0;
	for (uint64_t i = n / 32 * 32; i < n; i++)
		pl->ce.has_nulls |= bit_get(nb, i);
	if (t == STG_T_TEXT)
		return plan_text(p, h, k, n, pl);
	plan_for(h, k, t, n, pl);
	return GPMDB_OK;
}

/* The rows of tablet idx to encode (0: none). */
static uint64_t enc_rows(const stg_cat_entry *e, const stg_tablet_hdr *h)
{
	uint64_t n;

	if (h == NULL || h->enc_rel || e->row_count <= h->first_row)
		return 0;
	n = e->row_count - h->first_row;
	return n > tab_room(h) ? tab_room(h) : n;
}

/*
 * Plans tablets [i0, i0 + k) of the table at cat_off, each as enc_tablet
 * would, the work of all of them spread over the cores: first each
 * (tablet, column)'s frame or dictionary, then each TEXT column's
 * compression (a tablet at a time, VACUUM's plan of a tablet's columns
 * ran on about one core: l_comment's dictionary alone took most of the
 * time).  Only reads the tablets.  tp[j].pl NULL: nothing to encode
 * there (or no memory: enc_tablet plans it again and says so).
 */
static int enc_plan_tablets(stg_pool *p, uint64_t cat_off, uint64_t i0,
			    uint64_t k, tab_plan *tp)
{
	stg_cat_entry *e = cat_entry(p, cat_off);
	stg_cat_column *cc = cat_cols(e);
	uint32_t ncols = e->ncols;
	uint64_t ntask = 0, nzt = 0, rows = 0, *task, j, q;
	int *prc, rc = GPMDB_OK;

	memset(tp, 0, k * sizeof(*tp));
	for (j = 0; j < k; j++) {
		stg_tablet_hdr *h = tab_at(p, e, i0 + j);

		tp[j].n = enc_rows(e, h);
		if (tp[j].n == 0)
			continue;
		rows += tp[j].n;
		tp[j].toff = pool_off(p, h);
		tp[j].pl = calloc(ncols, sizeof(col_plan));
		if (tp[j].pl == NULL)
			tp[j].n = 0;
	}
	task = malloc(k * ncols * sizeof(*task));
	prc = calloc(k * ncols, sizeof(*prc));
	if (task == NULL || prc == NULL) {
		rc = GPMDB_NOMEM;
		goto out;
	}
	/* TEXT first: the longest tasks */
	for (int text = 1; text >= 0; text--)
		for (j = 0; j < k; j++)
			for (uint32_t c = 0; tp[j].n && c < ncols; c++)
				if ((cc[c].type == STG_T_TEXT) == text)
					task[ntask++] = j * ncols + c;
#pragma omp parallel for schedule(dynamic, 1) if (ntask > 1 && rows >= 65536)
	for (q = 0; q < ntask; q++) {
		uint64_t tj = task[q] / ncols;
		uint32_t c = (uint32_t)(task[q] % ncols);

		prc[task[q]] =
		    plan_col(p, tab_hdr(p, tp[tj].toff), (stg_type)cc[c].type,
			     c, tp[tj].n, &tp[tj].pl[c]);
	}
	/* compression: with enough columns for the cores, a column each
	 * (its blocks on one core); else a column at a time, its blocks on
	 * every core */
	for (q = 0; q < ntask; q++)
		if (cc[task[q] % ncols].type == STG_T_TEXT &&
		    prc[task[q]] == GPMDB_OK)
			task[nzt++] = task[q];
	bool wide = nzt >= 2 * (uint64_t)omp_get_max_threads();
#pragma omp parallel for schedule(dynamic, 1) if (wide)
	for (q = 0; q < nzt; q++) {
		uint64_t tj = task[q] / ncols;
		uint32_t c = (uint32_t)(task[q] % ncols);

		prc[task[q]] = plan_ztext(p, tab_hdr(p, tp[tj].toff), c,
					  tp[tj].n, &tp[tj].pl[c]);
	}
	for (q = 0; q < k * ncols; q++)
		if (prc[q] != GPMDB_OK && tp[q / ncols].pl) {
			/* enc_tablet plans it again and reports */
			plans_free(tp[q / ncols].pl, ncols);
			tp[q / ncols].pl = NULL;
		}
out:
	free(task);
	free(prc);
	for (j = 0; rc != GPMDB_OK && j < k; j++) {
		plans_free(tp[j].pl, ncols);
		tp[j].pl = NULL;
	}
	return rc;
}

/* Column c of the plain tablet h written into the encoded tablet nh as
 * its plan pl says (its arrays at nh's colmap, its strings at heap_at of
 * the heap at hoff, its descriptor). */
static void enc_write_col(stg_pool *p, stg_tablet_hdr *h, stg_tablet_hdr *nh,
			  uint32_t c, stg_type t, uint64_t n, uint64_t hoff,
			  col_plan *pl)
{
	char *b = (char *)nh;
	size_t w = stg_type_width(t);
	char *dst = b + tab_colmap(nh)[2 * c];
	const char *src = (char *)h + tab_colmap(h)[2 * c];
	char *hp = hoff ? (char *)pool_at(p, hoff) : NULL;
	uint64_t hused = pl->heap_at;

	if (pl->ce.kind == STG_ENC_ZTEXT) {
		zt_plan_write(&pl->zt, b, tab_colmap(nh)[2 * c], &pl->ce);
	} else if (pl->ce.kind == STG_ENC_DICT) {
		stg_strref *d = (stg_strref *)(b + pl->ce.dict_rel);
		const stg_strref *sr = (const stg_strref *)src;
		const uint32_t *codes = pl->codes;

		for (uint64_t k = 0; k < pl->ce.dict_n; k++) {
			stg_strref o = sr[pl->dict[k]];

			if (o.len) /* a heap of only '' is none */
				memcpy(hp + hused, old_str(p, h->heap_off, o),
				       o.len);
			d[k] = (stg_strref){(uint32_t)hused, o.len};
			hused += o.len;
		}
		ENC_PACK_RUN((uint64_t *)dst, n, pl->ce.bits, codes[i]);
	} else if (t == STG_T_TEXT) {
		const stg_strref *sr = (const stg_strref *)src;
		stg_strref *d = (stg_strref *)dst;
		const uint32_t *nb =
		    (const uint32_t *)((char *)h + tab_colmap(h)[2 * c + 1]);

		for (uint64_t i = 0; i < n; i++) {
			if (bit_get(nb, i) || !sr[i].len) {
				d[i] = (stg_strref){0, 0};
				continue;
			}
			memcpy(hp + hused, old_str(p, h->heap_off, sr[i]),
			       sr[i].len);
			d[i] = (stg_strref){(uint32_t)hused, sr[i].len};
			hused += sr[i].len;
		}
	} else if (pl->ce.kind == STG_ENC_FOR) {
		uint64_t base = pl->ce.base;

		switch (t) {
		case STG_T_INT:
		case STG_T_DATE: {
			const int32_t *a = (const int32_t *)src;

			ENC_PACK_RUN((uint64_t *)dst, n, pl->ce.bits,
				     (uint64_t)(int64_t)a[i] - base);
			break;
		}
		case STG_T_BOOLEAN: {
			const uint8_t *a = (const uint8_t *)src;

			ENC_PACK_RUN((uint64_t *)dst, n, pl->ce.bits,
				     (uint64_t)a[i] - base);
			break;
		}
		default: {
			const uint64_t *a = (const uint64_t *)src;

			ENC_PACK_RUN((uint64_t *)dst, n, pl->ce.bits,
				     a[i] - base);
			break;
		}
		}
	} else {
		memcpy(dst, src, n * w);
	}
	pl->ce.bytes = pl->data_bytes;
	memcpy(&tab_encs(nh)[c], &pl->ce, sizeof(stg_col_enc));
}

/* Tablet idx encoded, with the plan tp when it is one of this tablet as
 * it is now (else planned here); the plan is freed either way. */
static int enc_tablet_planned(stg_pool *p, uint64_t cat_off, uint64_t idx,
			      tab_plan *tp)
{
	stg_cat_entry *e = cat_entry(p, cat_off);
	stg_tablet_hdr *h = tab_at(p, e, idx), *nh;
	uint64_t n, room, pos, zero_rel = 0, del_rel, size, heap = 0;
	uint64_t noff = 0, next = 0, hoff = 0, hext = 0, ooff, oext, oheap,
		 oheap_size, hused = 0, toff;
	uint32_t ncols = e->ncols, c;
	stg_cat_column *cc;
	col_plan *pl = NULL;
	bool any_plain_nulls = false;
	char *b;
	int rc = GPMDB_OK;

	if (tp && tp->pl) {
		if (h && pool_off(p, h) == tp->toff && enc_rows(e, h) == tp->n)
			pl = tp->pl;
		else
			plans_free(tp->pl, ncols);
		tp->pl = NULL;
	}
	if (h == NULL) {
		plans_free(pl, ncols);
		return pool_err(p, GPMDB_CORRUPT,
				"table %s: tablet %llu is damaged", e->name,
				(unsigned long long)idx);
	}
	if ((n = enc_rows(e, h)) == 0) {
		plans_free(pl, ncols);
		return GPMDB_OK;
	}
	stamp_cat(p, cat_off); /* its bytes move */
	room = (n + 1023) / 1024 * 1024;
	cc = cat_cols(e);
	if (pl == NULL) {
		tab_plan one;

		/* the columns planned on every core (they only read the
		 * tablet) */
		if ((rc = enc_plan_tablets(p, cat_off, idx, 1, &one)) ==
			GPMDB_OK &&
		    (pl = one.pl) == NULL)
			rc = GPMDB_NOMEM;
		if (rc != GPMDB_OK)
			return pool_err(p, rc, "out of memory");
	}
	for (c = 0; c < ncols; c++) {
		if (!pl[c].ce.has_nulls)
			any_plain_nulls = true;
		heap += pl[c].heap_bytes;
	}
	/* the layout: layout.h "Encodings" */
	pos = al256(sizeof(stg_tablet_hdr) + 16ull * ncols);
	pos = al256(pos + sizeof(stg_col_enc) * ncols);
	for (c = 0; c < ncols; c++)
		pos = al256(pos + pl[c].data_bytes);
	if (any_plain_nulls) {
		zero_rel = pos;
		pos = al256(pos + room / 8);
	}
	for (c = 0; c < ncols; c++)
		if (pl[c].ce.has_nulls)
			pos = al256(pos + room / 8);
	del_rel = pos;
	pos = al256(pos + room / 8);
	for (c = 0; c < ncols; c++)
		if (pl[c].ce.kind == STG_ENC_DICT)
			pos = al256(pos + pl[c].ce.dict_n * sizeof(stg_strref));
	size = pos;

	toff = pool_off(p, h);
	rc = alloc_extent(p, size, &noff, &next);
	if (rc == GPMDB_OK && heap)
		rc = alloc_extent(p, heap, &hoff, &hext);
	if (rc != GPMDB_OK) {
		plans_free(pl, ncols);
		if (noff)
			(void)alloc_free_deferred(p, noff, next);
		return rc;
	}
	/* the pool may have moved */
	e = cat_entry(p, cat_off);
	cc = cat_cols(e);
	h = tab_hdr(p, toff);
	nh = tab_hdr(p, noff);
	b = (char *)nh;
	memset(nh, 0, size);
	*nh = *h;
	nh->extent_size = next;
	nh->rows_alloc = room == h->capacity ? 0 : room;
	nh->heap_off = hoff;
	nh->heap_size = heap ? hext : 0;
	pos = al256(sizeof(stg_tablet_hdr) + 16ull * ncols);
	nh->enc_rel = pos;
	pos = al256(pos + sizeof(stg_col_enc) * ncols);
	for (c = 0; c < ncols; c++) {
		tab_colmap(nh)[2 * c] = pos;
		pos = al256(pos + pl[c].data_bytes);
	}
	if (any_plain_nulls)
		pos = al256(pos + room / 8); /* zero_rel, zeroed above */
	for (c = 0; c < ncols; c++) {
		if (!pl[c].ce.has_nulls) {
			tab_colmap(nh)[2 * c + 1] = zero_rel;
			continue;
		}
		tab_colmap(nh)[2 * c + 1] = pos;
		memcpy(b + pos, (char *)h + tab_colmap(h)[2 * c + 1],
		       (n + 31) / 32 * 4);
		pos = al256(pos + room / 8);
	}
	nh->deleted_rel = del_rel;
	memcpy(b + del_rel, (char *)h + h->deleted_rel, (n + 31) / 32 * 4);
	/* each column's dictionary and heap bytes placed, then the columns
	 * written on every core, each into its own arrays and bytes */
	pos = al256(del_rel + room / 8);
	for (c = 0; c < ncols; c++) {
		pl[c].heap_at = hused;
		hused += pl[c].heap_bytes;
		if (pl[c].ce.kind == STG_ENC_DICT) {
			pl[c].ce.dict_rel = pos;
			pos = al256(pos + pl[c].ce.dict_n * sizeof(stg_strref));
		}
	}
#pragma omp parallel for schedule(dynamic, 1) if (ncols > 1 && n >= 65536)
	for (c = 0; c < ncols; c++)
		enc_write_col(p, h, nh, c, (stg_type)cc[c].type, n, hoff,
			      &pl[c]);
	nh->heap_used = hused;
	plans_free(pl, ncols);
	pool_flush(p, nh, size);
	if (hused)
		pool_flush(p, pool_at(p, hoff), hused);
	pool_drain(p);
	pool_count_persisted(p, size + hused);
	stg_crash_point("encode.write");
	ooff = toff;
	oext = h->extent_size;
	oheap = h->heap_off;
	oheap_size = h->heap_size;
	rc = mlog_set_u64(p, e->tdir + sizeof(stg_tdir) + 8 * idx, noff);
	if (rc == GPMDB_OK)
		rc = alloc_free_deferred(p, ooff, oext);
	if (rc == GPMDB_OK && oheap)
		rc = alloc_free_deferred(p, oheap, oheap_size);
	if (rc == GPMDB_OK)
		stg_crash_point("encode.tablet");
	return rc;
}

int enc_tablet(stg_pool *p, uint64_t cat_off, uint64_t idx)
{
	return enc_tablet_planned(p, cat_off, idx, NULL);
}

/* ---- Widening (tablet.c's tab_widen does one tablet) ---------------- */

int stg_table_widen(stg_pool *p, uint32_t table_id, uint64_t first, uint64_t n)
{
	uint64_t cat_off, rows, last;
	int rc = tab_find_writable(p, table_id, &cat_off);

	if (rc != GPMDB_OK)
		return rc;
	if (!p->in_txn)
		return pool_err(p, GPMDB_MISUSE,
				"stg_table_widen: no transaction is active");
	rows = cat_entry(p, cat_off)->row_count;
	if (n == 0 || first >= rows)
		return GPMDB_OK;
	last = n > rows - first ? rows - 1 : first + n - 1;
	for (uint64_t i = tab_index_of(first); i <= tab_index_of(last); i++)
		if ((rc = tab_widen(p, cat_off, i)) != GPMDB_OK)
			return rc;
	return GPMDB_OK;
}

uint32_t stg_table_encoded(stg_pool *p, uint32_t table_id)
{
	uint64_t cat_off, rows;
	stg_cat_entry *e;
	uint32_t k = 0;

	if (p == NULL || tab_find_table(p, table_id, &cat_off) != GPMDB_OK) {
		if (p)
			pool_clear_err(p);
		return 0;
	}
	e = cat_entry(p, cat_off);
	rows = e->row_count;
	for (uint64_t i = 0; rows && i <= tab_index_of(rows - 1); i++) {
		stg_tablet_hdr *h = tab_at(p, e, i);

		k += h && h->enc_rel;
	}
	return k;
}

int enc_read(stg_pool *p, stg_tablet_hdr *h, uint32_t col, stg_type t,
	     uint64_t lr, uint64_t k, void *out, uint64_t done)
{
	const uint32_t *nb =
	    (const uint32_t *)((char *)h + tab_colmap(h)[2 * col + 1]);
	size_t w = stg_type_width(t);
	stg_strref tmp[1024];

	if (t != STG_T_TEXT) {
		enc_decode(h, col, w, lr, k, (char *)out + done * w);
		return GPMDB_OK;
	}
	if (tab_encs(h)[col].kind == STG_ENC_ZTEXT)
		return zt_read(p, h, col, lr, k, (stg_text *)out + done, done);
	/* TEXT: stg_text into the heap, decoded in pieces */
	for (uint64_t r = 0; r < k; r += 1024) {
		uint64_t m = k - r < 1024 ? k - r : 1024;

		enc_decode(h, col, sizeof(stg_strref), lr + r, m, tmp);
		for (uint64_t q = 0; q < m; q++) {
			stg_text *x = (stg_text *)out + done + r + q;
			bool isnull = bit_get(nb, lr + r + q);

			x->ptr = isnull
				     ? NULL
				     : (const char *)pool_at(p, h->heap_off) +
					   tmp[q].off;
			x->len = isnull ? 0 : tmp[q].len;
		}
	}
	return GPMDB_OK;
}

/* ---- VACUUM and auto_encode ----------------------------------------- */

void stg_set_auto_encode(stg_pool *p, bool on)
{
	if (p)
		p->auto_encode = on;
}

bool stg_auto_encode(const stg_pool *p)
{
	return p && p->auto_encode;
}

int enc_note(stg_pool *p, uint32_t table_id)
{
	uint32_t *nt;

	if (!p->auto_encode || p->in_encode || p->sb.version < STG_FORMAT_ENC)
		return GPMDB_OK;
	for (size_t i = 0; i < p->nenc; i++)
		if (p->enc_tids[i] == table_id)
			return GPMDB_OK;
	if (p->nenc == p->cap_enc) {
		size_t nc = p->cap_enc ? p->cap_enc * 2 : 8;

		nt = realloc(p->enc_tids, nc * sizeof(*nt));
		if (nt == NULL)
			return pool_err(p, GPMDB_NOMEM, "out of memory");
		p->enc_tids = nt;
		p->cap_enc = nc;
	}
	p->enc_tids[p->nenc++] = table_id;
	return GPMDB_OK;
}

/* Every plain tablet holding rows of the table at cat_off encoded. */
static int enc_table(stg_pool *p, uint64_t cat_off)
{
	uint64_t rows = cat_entry(p, cat_off)->row_count;
	int rc = GPMDB_OK;

	for (uint64_t i = 0; rows && i <= tab_index_of(rows - 1); i++)
		if ((rc = enc_tablet(p, cat_off, i)) != GPMDB_OK)
			break;
	return rc;
}

int enc_commit(stg_pool *p)
{
	int rc = GPMDB_OK;

	for (size_t i = 0; i < p->nenc && rc == GPMDB_OK; i++) {
		uint64_t cat_off;

		/* dropped since: nothing to encode */
		if (cat_find_table(p, p->enc_tids[i], &cat_off) != GPMDB_OK) {
			pool_clear_err(p);
			continue;
		}
		rc = enc_table(p, cat_off);
	}
	p->nenc = 0;
	return rc;
}

/* Begins VACUUM's transaction for tablet i of table tid: 1 with
 * *cat_off set, GPMDB_OK (nothing begun) when the table was dropped
 * meanwhile or has no tablet i, else an error. */
static int vac_tablet_begin(stg_pool *p, uint32_t tid, uint64_t i,
			    uint64_t *cat_off)
{
	uint64_t rows;
	int rc = stg_begin(p);

	if (rc != GPMDB_OK)
		return rc;
	p->in_encode = true;
	if (tab_find_writable(p, tid, cat_off) != GPMDB_OK) {
		pool_clear_err(p); /* dropped meanwhile */
		return stg_rollback(p);
	}
	rows = cat_entry(p, *cat_off)->row_count;
	if (rows == 0 || i > tab_index_of(rows - 1))
		return stg_rollback(p);
	return 1;
}

/* Tablet idx of the table at cat_off (its extent, then its heap) moved
 * to the first free run when that lies wholly below it: VACUUM's last
 * pass, so that the file's tail empties (an extent encoded early, before
 * the holes below it were freed, was put at the end).  A move as in
 * tablet.c: copy persisted, then the pointer through the log, the old
 * extent freed at commit.  *moved: whether anything moved. */
static int enc_relocate(stg_pool *p, uint64_t cat_off, uint64_t idx,
			bool *moved)
{
	stg_tablet_hdr *h = tab_at(p, cat_entry(p, cat_off), idx);
	uint64_t toff, noff, next, size;
	int rc;

	*moved = false;
	if (h == NULL)
		return GPMDB_OK;
	toff = pool_off(p, h);
	size = h->extent_size;
	if (alloc_fits_below(p, size, toff)) {
		stamp_cat(p, cat_off);
		p->alloc_hint = 0;
		if ((rc = alloc_extent(p, size, &noff, &next)) != GPMDB_OK)
			return rc;
		h = tab_hdr(p, toff);
		pool_memcpy_nodrain(p, pool_at(p, noff), h, size);
		pool_drain(p);
		pool_count_persisted(p, size);
		rc = mlog_set_u64(
		    p, cat_entry(p, cat_off)->tdir + sizeof(stg_tdir) + 8 * idx,
		    noff);
		if (rc == GPMDB_OK)
			rc = alloc_free_deferred(p, toff, size);
		if (rc != GPMDB_OK)
			return rc;
		*moved = true;
		toff = noff;
		h = tab_hdr(p, toff);
	}
	if (h->heap_off && alloc_fits_below(p, h->heap_size, h->heap_off)) {
		uint64_t old = h->heap_off, osize = h->heap_size, used, pair[2];

		stamp_cat(p, cat_off);
		p->alloc_hint = 0;
		if ((rc = alloc_extent(p, osize, &noff, &next)) != GPMDB_OK)
			return rc;
		h = tab_hdr(p, toff);
		used = h->heap_used < osize ? h->heap_used : osize;
		pool_memcpy_nodrain(p, pool_at(p, noff), pool_at(p, old), used);
		pool_drain(p);
		pool_count_persisted(p, used);
		pair[0] = noff;
		pair[1] = next;
		rc = mlog_write(p, toff + offsetof(stg_tablet_hdr, heap_off),
				pair, sizeof(pair));
		if (rc == GPMDB_OK)
			rc = alloc_free_deferred(p, old, osize);
		if (rc != GPMDB_OK)
			return rc;
		*moved = true;
	}
	if (*moved)
		stg_crash_point("vacuum.move");
	return GPMDB_OK;
}

static int vac_tables(stg_pool *p, uint32_t **tids, size_t *n)
{
	size_t cap = 0;
	uint64_t off = 0;

	*tids = NULL;
	*n = 0;
	while ((off = cat_walk(p, off)) != 0) {
		stg_cat_entry *e = cat_entry(p, off);

		if (e->kind != STG_OBJ_TABLE)
			continue;
		if (*n == cap) {
			uint32_t *nt;

			cap = cap ? cap * 2 : 16;
			nt = realloc(*tids, cap * sizeof(*nt));
			if (nt == NULL) {
				free(*tids);
				*tids = NULL;
				return pool_err(p, GPMDB_NOMEM,
						"out of memory");
			}
			*tids = nt;
		}
		(*tids)[(*n)++] = e->table_id;
	}
	return GPMDB_OK;
}

static uint64_t vac_bytes(stg_pool *p, const uint32_t *tids, size_t n)
{
	uint64_t sum = 0, b;

	for (size_t i = 0; i < n; i++)
		if (stg_table_bytes(p, tids[i], &b) == GPMDB_OK)
			sum += b;
	pool_clear_err(p);
	return sum;
}

/* Frees the plans of tablets [from, k) of a group. */
static void vac_plans_free(tab_plan *tp, uint64_t from, uint64_t k,
			   uint32_t ncols)
{
	for (uint64_t j = from; tp && j < k; j++) {
		plans_free(tp[j].pl, ncols);
		tp[j].pl = NULL;
	}
}

/*
 * One pass of VACUUM over table tid, a transaction per tablet: pass 0
 * encodes (first fit from the front: the holes the tablets encoded
 * before left, so that the file's tail empties, given back at the last
 * close), pass 1 moves down what the tail holds.  Pass 0 plans a group
 * of tablets (as many as the cores) at the start of the group's first
 * transaction, on every core; a later tablet of the group takes its
 * plan while no other connection has committed since (stg_data_version)
 * and the tablet is where and as long as it was (else enc_tablet's own
 * plan).
 */
static int vac_table(stg_pool *p, uint32_t tid, int pass)
{
	uint64_t gk = (uint64_t)omp_get_max_threads(), g0 = 0, ng = 0, dv = 0;
	uint32_t ncols = 0;
	tab_plan *tp = NULL;
	int rc = GPMDB_OK;

	if (gk < 1)
		gk = 1;
	if (pass == 0 && (tp = calloc(gk, sizeof(*tp))) == NULL)
		return pool_err(p, GPMDB_NOMEM, "out of memory");
	for (uint64_t i = 0;; i++) {
		uint64_t cat_off;
		bool moved = true;

		if ((rc = vac_tablet_begin(p, tid, i, &cat_off)) != 1)
			break;
		if (pass == 0) {
			p->alloc_hint = 0;
			ncols = cat_entry(p, cat_off)->ncols;
			if (i >= g0 + ng || stg_data_version(p) != dv) {
				vac_plans_free(tp, 0, ng, ncols);
				g0 = i;
				ng = gk;
				dv = stg_data_version(p);
				rc = enc_plan_tablets(p, cat_off, g0, ng, tp);
				if (rc != GPMDB_OK)
					ng = 0; /* enc_tablet plans */
			}
			rc = enc_tablet_planned(
			    p, cat_off, i, i - g0 < ng ? &tp[i - g0] : NULL);
		} else {
			rc = enc_relocate(p, cat_off, i, &moved);
		}
		rc = rc == GPMDB_OK ? (moved ? stg_commit(p) : stg_rollback(p))
				    : rc;
		if (rc != GPMDB_OK) {
			if (p->in_txn)
				(void)stg_rollback(p);
			break;
		}
	}
	vac_plans_free(tp, 0, ng, ncols);
	free(tp);
	return rc;
}

int stg_vacuum(stg_pool *p, uint64_t *bytes_before, uint64_t *bytes_after)
{
	uint32_t *tids = NULL;
	size_t n = 0;
	int rc;

	if (p == NULL)
		return GPMDB_MISUSE;
	pool_clear_err(p);
	if (p->in_txn)
		return pool_err(p, GPMDB_ERROR,
				"cannot VACUUM from within a transaction");
	if (p->sb.version < STG_FORMAT_ENC)
		return pool_err(p, GPMDB_UNSUPPORTED,
				"VACUUM: %s has format version %u, which "
				"cannot hold encoded tablets; VACUUM INTO "
				"'file' writes a copy of version %u that can",
				p->path, p->sb.version, STG_FORMAT_VERSION);
	if ((rc = stg_read_begin(p)) != GPMDB_OK)
		return rc;
	rc = vac_tables(p, &tids, &n);
	if (rc == GPMDB_OK && bytes_before)
		*bytes_before = vac_bytes(p, tids, n);
	stg_read_end(p);
	/* a transaction per tablet: what one frees, the next may reuse;
	 * then the extents the tail holds moved down, a transaction each */
	for (int pass = 0; pass < 2; pass++)
		for (size_t t = 0; t < n && rc == GPMDB_OK; t++) {
			rc = vac_table(p, tids[t], pass);
			p->in_encode = false;
		}
	p->in_encode = false;
	if (rc == GPMDB_OK && bytes_after && stg_read_begin(p) == GPMDB_OK) {
		*bytes_after = vac_bytes(p, tids, n);
		stg_read_end(p);
	}
	free(tids);
	return rc;
}
