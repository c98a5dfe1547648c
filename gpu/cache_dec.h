/*
 * cache_dec.h - encoded tablets expanded in HBM for the column cache
 * (gpu/cache.c, gpu/cache_dec.cu, docs/gpu.md "Encoded tablets").
 *
 * The cache uploads what a tablet stores (the packed fields of a frame of
 * reference column, the codes of a dictionary column, the deleted and
 * NULL bitmaps of the rows loaded) into a scratch allocation, and one
 * kernel per batch of tablets writes the cache's own column format: the
 * live rows' values of the column width (or gpu_str references into the
 * column's text buffer, where the cache put each tablet's dictionary
 * strings once) and one NULL byte per row.
 */
#ifndef GPMDB_GPU_CACHE_DEC_H
#define GPMDB_GPU_CACHE_DEC_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The kinds decoded here: storage's STG_ENC_FOR and STG_ENC_DICT
 * (cache.c asserts they are equal). */
#define GC_DEC_FOR  1
#define GC_DEC_DICT 2

/* An offset into the scratch that is not there. */
#define GC_DEC_NONE UINT64_MAX

/* One tablet's rows [lo, hi) of one column.  Byte offsets (8-aligned)
 * into the scratch: words, the packed fields from the word holding row
 * lo's (a field of row i starts at bit i * bits - bitsub of them); del
 * and nul, the bitmap words from lo / 32 on; pre (with del), per bitmap
 * word the live rows of [lo, its first row); dict, DICT: dict_n gpu_str
 * already placed in the column's text buffer. */
typedef struct gc_dec_job {
	uint64_t words, bitsub, base;
	uint64_t out; /* the part's first row in the column (live rows) */
	uint64_t del, nul, pre, dict;
	uint32_t lo, hi;
	uint32_t dict_n;
	uint32_t toff; /* DICT: where a NULL row's empty string points */
	uint8_t kind;  /* GC_DEC_FOR or GC_DEC_DICT */
	uint8_t bits;
	uint8_t pad[6];
} gc_dec_job;

/*
 * Runs the jobs (device array, n of them) over the scratch scr (device):
 * values (w bytes each: 1, 2, 4 or 8, or gpu_str for DICT) into out, NULL
 * bytes into nul (NULL: the column has none), on gpmdb's stream (ordered
 * after the uploads that filled scr).  A GPMDB code, err says which call
 * failed.
 */
int gpu_cache_decode(const gc_dec_job *jobs, uint32_t n, uint32_t most_rows,
		     const void *scr, void *out, uint8_t *nul, uint32_t w,
		     char *err, size_t errlen);

#ifdef __cplusplus
}
#endif

#endif /* GPMDB_GPU_CACHE_DEC_H */
