/*
 * hcl.c - host side of Hierarchical Coalesced Logging (see hcl.h).
 *
 * The CPU writer pretends to be the GPU grid the same batch would have
 * used, so that recovery reads one format whoever wrote the segment.
 * Nothing here persists: the caller knows the durability mode and finds
 * the words to flush with hcl_word_ptr.
 */
#include "hcl.h"

#include <stdbool.h>
#include <string.h>
#include <zlib.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "../include/gpmdb.h"

/* The GPU writer launches 256-thread blocks; a CPU batch mimics it. */
#define HCL_TPB 256u
/* The most threads per block CUDA allows; anything larger is garbage. */
#define HCL_MAX_TPB 1024u

_Static_assert(sizeof(hcl_header) == HCL_LINE_BYTES,
	       "the header fills exactly one line before the tails");
_Static_assert(offsetof(hcl_header, crc) == 32,
	       "no padding may sit inside the crc'd bytes");

hcl_geom hcl_geom_for(uint64_t nthreads_needed, uint32_t entries_per_thread)
{
	hcl_geom g;
	uint64_t nb = (nthreads_needed + HCL_TPB - 1) / HCL_TPB;

	/* An empty batch still gets a well-formed (one-block) segment, so
	 * recovery never has to special-case a zero-sized grid. */
	if (nb == 0)
		nb = 1;
	g.nblocks = (uint32_t)nb;
	g.threads_per_block = HCL_TPB;
	g.entries_per_thread = entries_per_thread;
	return g;
}

static uint32_t header_crc(const hcl_header *h)
{
	return (uint32_t)crc32(0L, (const Bytef *)h, offsetof(hcl_header, crc));
}

void hcl_header_init(void *seg, const hcl_geom *g, uint32_t table_id,
		     uint64_t batch_seq)
{
	hcl_header h;

	/* Build it in a local zeroed copy so padding bytes are defined and
	 * the segment sees one memcpy rather than a field-by-field dribble. */
	memset(&h, 0, sizeof(h));
	h.magic = HCL_MAGIC;
	h.entry_words = HCL_ENTRY_WORDS;
	h.geom = *g;
	h.table_id = table_id;
	h.batch_seq = batch_seq;
	h.crc = header_crc(&h);
	memcpy(seg, &h, sizeof(h));
}

/*
 * Segment size for geometry g, or 0 when the geometry is not one a writer
 * could have produced or its size overflows 64 bits.  Validating here means
 * a torn or garbage header can never make the reader index outside
 * seg_bytes, even if its crc happened to match.
 */
static uint64_t checked_segment_bytes(const hcl_geom *g)
{
	uint64_t t, per_entry_bytes;

	if (g->nblocks == 0 || g->entries_per_thread == 0)
		return 0;
	if (g->threads_per_block == 0 || g->threads_per_block % HCL_WARP != 0 ||
	    g->threads_per_block > HCL_MAX_TPB)
		return 0;
	t = hcl_threads(g); /* < 2^42: cannot overflow */
	per_entry_bytes = 4ull * HCL_ENTRY_WORDS * t;
	if (g->entries_per_thread >
	    (UINT64_MAX - hcl_entries_offset(g)) / per_entry_bytes)
		return 0;
	return hcl_segment_bytes(g);
}

int hcl_header_check(const void *seg, uint64_t seg_bytes)
{
	hcl_header h;
	uint64_t need;

	if (seg == NULL || seg_bytes < sizeof(h))
		return GPMDB_CORRUPT;
	memcpy(&h, seg, sizeof(h));
	if (h.magic != HCL_MAGIC || h.entry_words != HCL_ENTRY_WORDS)
		return GPMDB_CORRUPT;
	if (h.crc != header_crc(&h))
		return GPMDB_CORRUPT;
	need = checked_segment_bytes(&h.geom);
	if (need == 0 || need > seg_bytes)
		return GPMDB_CORRUPT;
	return GPMDB_OK;
}

/* Splits a flat thread number into the (block, warp, lane) that places it. */
static inline void thread_coords(const hcl_geom *g, uint64_t thread,
				 uint32_t *block, uint32_t *warp,
				 uint32_t *lane)
{
	uint32_t tid = (uint32_t)(thread % g->threads_per_block);

	*block = (uint32_t)(thread / g->threads_per_block);
	*warp = tid / HCL_WARP;
	*lane = tid % HCL_WARP;
}

static inline uint32_t *tails_of(void *seg)
{
	return (uint32_t *)((char *)seg + hcl_tails_offset());
}

static inline uint32_t *entries_of(void *seg, const hcl_geom *g)
{
	return (uint32_t *)((char *)seg + hcl_entries_offset(g));
}

uint32_t *hcl_word_ptr(void *seg, const hcl_geom *g, uint64_t thread,
		       uint32_t e, uint32_t k)
{
	uint32_t b, w, l;

	thread_coords(g, thread, &b, &w, &l);
	return entries_of(seg, g) + hcl_word_index(g, b, w, l, e, k);
}

void hcl_cpu_put(void *seg, const hcl_geom *g, uint64_t thread, uint32_t e,
		 const hcl_entry *en)
{
	uint32_t words[HCL_ENTRY_WORDS];
	uint32_t *w0 = hcl_word_ptr(seg, g, thread, e, 0);
	uint32_t k;

	hcl_encode(en, words);
	/* Consecutive words of one entry are a warp apart (the striping that
	 * makes the GPU's stores coalesce), so step by HCL_WARP. */
	for (k = 0; k < HCL_ENTRY_WORDS; k++)
		w0[(uint64_t)k * HCL_WARP] = words[k];
}

void hcl_cpu_set_tail(void *seg, const hcl_geom *g, uint64_t thread,
		      uint32_t tail)
{
	uint32_t b, w, l;

	thread_coords(g, thread, &b, &w, &l);
	tails_of(seg)[hcl_tail_index(g, b, w, l)] = tail;
}

uint32_t hcl_get_tail(const void *seg, const hcl_geom *g, uint64_t thread)
{
	uint32_t b, w, l;

	thread_coords(g, thread, &b, &w, &l);
	return tails_of((void *)seg)[hcl_tail_index(g, b, w, l)];
}

/* A segment's header, tails and entries, every tail checked before
 * anything is visited: recovery must not apply half a segment and then
 * discover it is corrupt.  *n: the valid entries. */
static int seg_open(const void *seg, uint64_t seg_bytes, hcl_header *h,
		    const uint32_t **tails, const uint32_t **ent, uint64_t *n)
{
	uint64_t nthreads;
	int rc = hcl_header_check(seg, seg_bytes);

	if (rc != GPMDB_OK)
		return rc;
	memcpy(h, seg, sizeof(*h));
	nthreads = hcl_threads(&h->geom);
	*tails = tails_of((void *)seg);
	*ent = entries_of((void *)seg, &h->geom);
	*n = 0;
	for (uint64_t t = 0; t < nthreads; t++) {
		if ((*tails)[t] > h->geom.entries_per_thread)
			return GPMDB_CORRUPT;
		*n += (*tails)[t];
	}
	return GPMDB_OK;
}

int hcl_foreach(const void *seg, uint64_t seg_bytes, hcl_visit_fn fn, void *ctx)
{
	hcl_header h;
	const uint32_t *tails, *ent;
	uint64_t t, nthreads, nent;
	uint32_t words[HCL_ENTRY_WORDS];
	hcl_entry en;
	int rc = seg_open(seg, seg_bytes, &h, &tails, &ent, &nent);

	if (rc != GPMDB_OK)
		return rc;
	nthreads = hcl_threads(&h.geom);

	/* Undo runs newest first so that, should a row have been logged
	 * twice, its oldest image is the one left standing. */
	for (t = nthreads; t-- > 0;) {
		uint32_t b, w, l, e;

		thread_coords(&h.geom, t, &b, &w, &l);
		for (e = tails[hcl_tail_index(&h.geom, b, w, l)]; e-- > 0;) {
			const uint32_t *w0 =
			    ent + hcl_word_index(&h.geom, b, w, l, e, 0);
			uint32_t k;

			for (k = 0; k < HCL_ENTRY_WORDS; k++)
				words[k] = w0[(uint64_t)k * HCL_WARP];
			hcl_decode(words, &en);
			rc = fn(ctx, &en);
			if (rc != 0)
				return rc;
		}
	}
	return GPMDB_OK;
}

uint64_t hcl_entry_count(const void *seg, uint64_t seg_bytes)
{
	hcl_header h;
	const uint32_t *tails, *ent;
	uint64_t n;

	return seg_open(seg, seg_bytes, &h, &tails, &ent, &n) == GPMDB_OK ? n
									  : 0;
}

int hcl_foreach_par(const void *seg, uint64_t seg_bytes, hcl_visit_par_fn fn,
		    void *ctx, uint64_t sum[2])
{
	hcl_header h;
	const uint32_t *tails, *ent;
	uint64_t nthreads, s0 = 0, s1 = 0, nent;
	int rc;

	sum[0] = sum[1] = 0;
	rc = seg_open(seg, seg_bytes, &h, &tails, &ent, &nent);
	if (rc != GPMDB_OK)
		return rc;
	nthreads = hcl_threads(&h.geom);
#pragma omp parallel for schedule(dynamic, 256) reduction(+ : s0, s1)
	for (uint64_t t = 0; t < nthreads; t++) {
		uint32_t b, w, l, e, words[HCL_ENTRY_WORDS];
		uint64_t acc[2] = {0, 0};
		hcl_entry en;

		if (__atomic_load_n(&rc, __ATOMIC_RELAXED) != GPMDB_OK)
			continue;
		thread_coords(&h.geom, t, &b, &w, &l);
		for (e = tails[hcl_tail_index(&h.geom, b, w, l)]; e-- > 0;) {
			const uint32_t *w0 =
			    ent + hcl_word_index(&h.geom, b, w, l, e, 0);
			int r;

			for (uint32_t k = 0; k < HCL_ENTRY_WORDS; k++)
				words[k] = w0[(uint64_t)k * HCL_WARP];
			hcl_decode(words, &en);
			if ((r = fn(ctx, &en, acc)) != 0) {
				int ok = GPMDB_OK;

				__atomic_compare_exchange_n(&rc, &ok, r, false,
							    __ATOMIC_RELAXED,
							    __ATOMIC_RELAXED);
				break;
			}
		}
		s0 += acc[0];
		s1 += acc[1];
	}
	sum[0] = s0;
	sum[1] = s1;
	return rc;
}
