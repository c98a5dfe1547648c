/*
 * index_gpu.h - bulk sort and probe of index entries on the GPU
 * (gpu/index_ops.cu; storage.h stg_ix_sort_hook and stg_ix_probe_hook;
 * docs/gpu.md "Index sort and probe on the GPU").
 *
 * Records are fixed-width byte strings: a key compared with memcmp, then
 * (when at least 8 bytes follow the compared part) a row id in the last 8
 * bytes, uint64_t little-endian.  Both operations turn the bytes that
 * vary between records into big-endian 64-bit (or 32-bit) words on the
 * device: bytes, and bits inside a byte, that are equal in every record
 * are left out, so an INT key (a tag byte and 8 value bytes) over a
 * million rows is one word of 40 bits.
 *
 * In a build without CUDA (GPU=0) every function returns
 * GPMDB_UNSUPPORTED with gpu_host.c's message.  Like the rest of gpu/,
 * not thread-safe: the engine serialises GPU work.
 */
#ifndef GPMDB_GPU_INDEX_GPU_H
#define GPMDB_GPU_INDEX_GPU_H

#include <stddef.h>
#include <stdint.h>

#include "../storage/storage.h"

#ifdef __cplusplus
extern "C" {
#endif

/* How records travel between the host and the device (measured in
 * docs/gpu.md): AUTO is the measured best. */
typedef enum {
	GPU_IX_XFER_AUTO = 0,
	GPU_IX_XFER_PAGEABLE = 1, /* cudaMemcpyAsync from the caller's memory */
	GPU_IX_XFER_REGISTER = 2, /* cudaHostRegister of the caller's buffer */
	GPU_IX_XFER_STAGED = 3	  /* pinned chunks, CPU copies on all cores */
} gpu_ix_xfer;

/* Where the time of the last gpu_ix_sort went (milliseconds). */
typedef struct {
	double upload_ms, plan_ms, sort_ms, gather_ms, download_ms, total_ms;
	uint32_t words;	   /* key words after leaving constant bits out */
	uint32_t key_bits; /* bits sorted on, all words */
	uint32_t passes;   /* CUB radix sorts */
	int xfer;	   /* gpu_ix_xfer used */
	/* with row ids (width >= cmp + 8): the lowest row id of a record
	 * whose first cmp bytes equal its predecessor's, -1 when none; -2
	 * when not looked for */
	int64_t dup_rowid;
} gpu_ix_sort_stats;

/*
 * Sorts n records of width bytes in place: by memcmp over the first cmp
 * bytes, then, when width >= cmp + 8, by the last 8 bytes as a
 * little-endian uint64_t (the row id); records equal in both keep their
 * order (LSD radix passes are stable).  Bytes between cmp and width - 8
 * do not take part.  GPMDB_OK when recs is sorted; otherwise recs is
 * unchanged and err says why (GPMDB_NOMEM "not enough device memory ...",
 * GPMDB_UNSUPPORTED without a GPU or for more than INT_MAX records).
 * st may be NULL.
 */
int gpu_ix_sort(void *recs, uint64_t n, uint32_t width, uint32_t cmp,
		gpu_ix_sort_stats *st, char *err, size_t errlen);

/* Where the time of the last gpu_ix_probe went (milliseconds). */
typedef struct {
	int hit;	      /* 1: the records came from the cache */
	double fill_ms;	      /* job->fill on a miss */
	double rec_upload_ms; /* a miss: the records to the device */
	double build_ms;      /* a miss: upload, words, row ids, checks */
	double upload_ms, kernel_ms, download_ms, total_ms; /* the probes */
} gpu_ix_probe_stats;

/*
 * The bulk probe of storage.h stg_ix_probe_job: rowids[i] is the row id
 * of the first record whose first kw bytes equal probe i, -1 when none.
 * The records are cached on the device by (pool, index_id, version): a
 * miss calls job->fill into a host buffer, uploads the records and keeps
 * their key words and row ids (an older version of the same index is
 * freed).  Records not in key order are refused (GPMDB_CORRUPT, nothing
 * cached).  st may be NULL.
 */
int gpu_ix_probe(const stg_ix_probe_job *job, int64_t *rowids,
		 gpu_ix_probe_stats *st, char *err, size_t errlen);

/* The hooks given to stg_set_index_sort_hook / stg_set_index_probe_hook
 * (engine/write/batch_gpu.c): gpu_ix_sort and gpu_ix_probe with the hooks'
 * signatures. */
/* stg_ix_prewarm_hook: a thread creates the CUDA context, grows the
 * device memory pool by what a sort of n records of width bytes takes,
 * allocates the pinned staging and loads the sort's kernels, while the
 * host makes the records; gpu_ix_sort and the probe wait for it. */
void gpu_ix_prewarm_hook(uint64_t n, uint32_t width);
int gpu_ix_sort_hook(void *recs, uint64_t n, uint32_t width, uint32_t cmp,
		     int64_t *dup, char *why, size_t whylen);
int gpu_ix_probe_hook(const stg_ix_probe_job *job, int64_t *rowids, char *why,
		      size_t whylen);

/* The index cache: entries, device bytes, limit (0: the default, a
 * quarter of the GPU's memory), hits, misses, evictions (least recently
 * used first, for the limit or a new entry; oom_evictions of them asked
 * by gpu_alloc), stale (an older version freed), bytes uploaded. */
typedef struct {
	uint64_t entries, bytes, limit;
	uint64_t hits, misses, evictions, stale, oom_evictions;
	uint64_t uploaded;
} gpu_ix_cache_stats;
void gpu_ix_cache_get_stats(gpu_ix_cache_stats *s);
/* 0 = the default (a quarter of the GPU's memory). */
void gpu_ix_cache_set_limit(uint64_t bytes);
/* Frees every entry of pool (its connection closes; NULL: all). */
void gpu_ix_cache_drop(const void *pool);
/* gpu_alloc out of memory: frees the least recently used entry not in
 * use; 1 when one was freed, else 0. */
int gpu_ix_cache_reclaim(void);
/* gpu_shutdown: forgets every entry (their memory goes with the pool). */
void gpu_ix_cache_forget(void);

/* Tests and measurements: the transfer mode (gpu_ix_xfer), and whether
 * the probe kernel searches a sampled upper level in shared memory
 * first (1, the default) or the whole array (0). */
void gpu_ix_set_xfer(int mode);
void gpu_ix_set_probe_samples(int on);

#ifdef __cplusplus
}
#endif

#endif /* GPMDB_GPU_INDEX_GPU_H */
