/*
 * hcl.h - Hierarchical Coalesced Logging: the undo-log format for row data.
 *
 * A batch (one UPDATE or DELETE, on the GPU or the CPU) gets one HCL
 * segment in the pool.  Every thread of the (real or pretended) grid owns a
 * slot of entries_per_thread entries, placed by (block, warp, lane) so no
 * two threads share a word and no locks are needed.  Entries are striped in
 * 4-byte words: word k of entry e of the 32 lanes of one warp are 32
 * consecutive words, i.e. one 128-byte line, so a warp writing its k-th
 * words issues one coalesced line write.
 *
 * Segment layout (all offsets from the segment start, in bytes):
 *   [0, 128)            hcl_header
 *   [128, 128 + 4*T)    tails: one uint32 per thread, at index
 *                       warp_global * 32 + lane (a warp's tails: one line)
 *   then (256-aligned)  entries: word k of entry e of thread (b, w, l) at
 *                       word index ((warp_global * E + e) * W + k) * 32 + l
 * where warp_global = b * (threads_per_block / 32) + w, T = total threads,
 * E = entries_per_thread, W = HCL_ENTRY_WORDS.
 *
 * A thread's tail is the sentinel: entries [0, tail) are valid.  Writer
 * protocol per entry: write the entry words, persist them, then store
 * tail = e + 1 and persist it, and only then overwrite the row data.  A
 * crash between the steps leaves either no entry (data untouched) or an
 * entry whose undo restores the value that is still there (harmless).
 *
 * This header is plain C included by host code and by CUDA kernels.
 */
#ifndef GPMDB_HCL_H
#define GPMDB_HCL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __CUDACC__
#define HCL_FN __host__ __device__ static inline
#else
#define HCL_FN static inline
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define HCL_MAGIC	0x48434c31u /* "HCL1" */
#define HCL_ENTRY_WORDS 6u
#define HCL_LINE_BYTES	128u
#define HCL_WARP	32u

/* Entry kinds (low 8 bits of word 0; column index in the high 24). */
#define HCL_K_VALUE  1u /* restore old value and old NULL bit of a column */
#define HCL_K_DELETE 2u /* clear the deleted bit of the row */

/* Entry words: 0 kind|col<<8, 1-2 row id (lo, hi), 3-4 old value (lo, hi,
 * the raw bits of the column's type zero-extended to 8 bytes), 5 flags
 * (bit 0: old value was NULL). */
typedef struct {
	uint32_t kind;
	uint32_t col;
	uint64_t row;
	uint64_t old_value;
	uint32_t old_null;
} hcl_entry;

typedef struct {
	uint32_t nblocks;
	uint32_t threads_per_block; /* a multiple of 32 */
	uint32_t entries_per_thread;
} hcl_geom;

/* Segment header, persisted before any entry is written. */
typedef struct {
	uint32_t magic;
	uint32_t entry_words; /* HCL_ENTRY_WORDS */
	hcl_geom geom;
	uint32_t table_id;
	uint64_t batch_seq; /* the mlog record that owns this segment */
	uint32_t crc;	    /* zlib crc32 of the bytes before this field */
	uint8_t pad[128 - 40];
} hcl_header;

HCL_FN uint64_t hcl_threads(const hcl_geom *g)
{
	return (uint64_t)g->nblocks * g->threads_per_block;
}

HCL_FN uint64_t hcl_tails_offset(void)
{
	return sizeof(hcl_header);
}

HCL_FN uint64_t hcl_entries_offset(const hcl_geom *g)
{
	uint64_t end = hcl_tails_offset() + 4 * hcl_threads(g);
	return (end + 255) & ~(uint64_t)255;
}

HCL_FN uint64_t hcl_segment_bytes(const hcl_geom *g)
{
	return hcl_entries_offset(g) +
	       4ull * HCL_ENTRY_WORDS * g->entries_per_thread * hcl_threads(g);
}

/* Index of a thread's tail word among the tails. */
HCL_FN uint64_t hcl_tail_index(const hcl_geom *g, uint32_t block, uint32_t warp,
			       uint32_t lane)
{
	uint64_t wg =
	    (uint64_t)block * (g->threads_per_block / HCL_WARP) + warp;
	return wg * HCL_WARP + lane;
}

/* Index (in 4-byte words, from the entries offset) of word k of entry e. */
HCL_FN uint64_t hcl_word_index(const hcl_geom *g, uint32_t block, uint32_t warp,
			       uint32_t lane, uint32_t e, uint32_t k)
{
	uint64_t wg =
	    (uint64_t)block * (g->threads_per_block / HCL_WARP) + warp;
	return ((wg * g->entries_per_thread + e) * HCL_ENTRY_WORDS + k) *
		   HCL_WARP +
	       lane;
}

/* Encodes an entry into its HCL_ENTRY_WORDS words. */
HCL_FN void hcl_encode(const hcl_entry *en, uint32_t w[HCL_ENTRY_WORDS])
{
	w[0] = (en->kind & 0xffu) | (en->col << 8);
	w[1] = (uint32_t)en->row;
	w[2] = (uint32_t)(en->row >> 32);
	w[3] = (uint32_t)en->old_value;
	w[4] = (uint32_t)(en->old_value >> 32);
	w[5] = en->old_null & 1u;
}

HCL_FN void hcl_decode(const uint32_t w[HCL_ENTRY_WORDS], hcl_entry *en)
{
	en->kind = w[0] & 0xffu;
	en->col = w[0] >> 8;
	en->row = (uint64_t)w[1] | ((uint64_t)w[2] << 32);
	en->old_value = (uint64_t)w[3] | ((uint64_t)w[4] << 32);
	en->old_null = w[5] & 1u;
}

/* ---- Host side (hcl.c) ------------------------------------------------ */

/* Chooses the pretended grid for a CPU batch of nthreads_needed threads,
 * each writing entries_per_thread entries: 256 threads per block, as the
 * GPU writer launches. */
hcl_geom hcl_geom_for(uint64_t nthreads_needed, uint32_t entries_per_thread);

/* Writes a valid header for a new segment (not persisted). */
void hcl_header_init(void *seg, const hcl_geom *g, uint32_t table_id,
		     uint64_t batch_seq);
/* GPMDB_OK when the header is valid (magic, entry words, crc). */
int hcl_header_check(const void *seg, uint64_t seg_bytes);

/* CPU writer: thread t of the pretended grid (t = block * tpb + threadIdx)
 * stores entry e.  Returns the byte ranges to persist through the
 * callback (one per 4-byte word; the caller may coalesce).  */
void hcl_cpu_put(void *seg, const hcl_geom *g, uint64_t thread, uint32_t e,
		 const hcl_entry *en);
void hcl_cpu_set_tail(void *seg, const hcl_geom *g, uint64_t thread,
		      uint32_t tail);
uint32_t hcl_get_tail(const void *seg, const hcl_geom *g, uint64_t thread);
/* Address of word k of entry e of thread t (for persisting). */
uint32_t *hcl_word_ptr(void *seg, const hcl_geom *g, uint64_t thread,
		       uint32_t e, uint32_t k);

/* Reader: calls fn for every valid entry (e < tail of its thread), threads
 * in descending order and each thread's entries newest first.  Returns
 * GPMDB_CORRUPT when a tail exceeds the slot capacity or the header is
 * bad, else fn's first non-zero return, else GPMDB_OK. */
typedef int (*hcl_visit_fn)(void *ctx, const hcl_entry *en);
int hcl_foreach(const void *seg, uint64_t seg_bytes, hcl_visit_fn fn,
		void *ctx);

/* As hcl_foreach, with the segment's threads spread over every core
 * (OpenMP): each thread's entries still newest first, threads in no
 * order, so only for visits whose order does not matter (a cell logged
 * once).  fn may run on several threads at once; acc[0..1] are the
 * calling core's two accumulators, added up into sum[0..1].  Stops at
 * fn's first non-zero return (returned). */
typedef int (*hcl_visit_par_fn)(void *ctx, const hcl_entry *en,
				uint64_t acc[2]);
int hcl_foreach_par(const void *seg, uint64_t seg_bytes, hcl_visit_par_fn fn,
		    void *ctx, uint64_t sum[2]);
/* The entries of a segment whose header and tails hcl_foreach accepts
 * (0 otherwise). */
uint64_t hcl_entry_count(const void *seg, uint64_t seg_bytes);

#ifdef __cplusplus
}
#endif
#endif /* GPMDB_HCL_H */
