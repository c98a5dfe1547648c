/*
 * cache.h - the HBM column cache (gpu/cache.c, docs/gpu.md).
 *
 * A table column is loaded into device memory on first use, as one array
 * of the table's live rows (deleted rows left out, tablets concatenated in
 * row order), in the form gpu_vm_run reads: the storage type's values
 * (INT32, INT64, FLOAT, DOUBLE, DEC, DATE, BOOL; TEXT as gpu_str into the
 * column's own text buffer, which holds the used part of each tablet's
 * string heap), one NULL byte per row (none when the column has no NULL).
 *
 * Coherence: an entry is keyed by (owner, table, column) and records the
 * column's write stamp (stg_col_stamp, storage/stamp.c) and the table's
 * row and deleted counts when it was loaded; a lookup that finds any of
 * them changed is a miss and frees the stale entry.  Storage stamps a
 * column when a write may change it (a table's columns all when its rows
 * change, everything after a rollback, a moved mapping or another
 * connection's commit), so a write to one table or column leaves the
 * other columns cached, and the cache never serves data older than the
 * last write.  owner is the connection's id; closing it drops its
 * entries.
 *
 * Eviction: least recently used first, when an allocation fails or the
 * cache would pass its limit (default half the GPU's memory, PRAGMA
 * gpu_cache_limit).  Entries used by the running query (since the last
 * gcache_begin) are never evicted.
 *
 * Like the rest of gpu/, not thread-safe: the engine serialises GPU work.
 */
#ifndef GPMDB_GPU_CACHE_H
#define GPMDB_GPU_CACHE_H

#include <stdint.h>

#include "../storage/storage.h"
#include "gpu.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The row id pseudo column. */
#define GCACHE_ROWID (-1)

/* Where device text offsets of a column came from: text bytes
 * [dev_off, ...) of the buffer are host bytes host + (off - dev_off). */
typedef struct gcache_seg {
	uint64_t dev_off;
	const char *host;
} gcache_seg;

typedef struct gcache_colref {
	gpu_col col;	  /* device data and NULL bytes; type BC_COL_* */
	uint64_t nrows;	  /* live rows */
	const char *text; /* TEXT: the column's device text buffer */
	uint64_t ntext;
	const gcache_seg *seg; /* TEXT: one per tablet, by dev_off */
	uint32_t nseg;
	int hit; /* 1 when it came from the cache */
} gcache_colref;

typedef struct gcache_stats {
	uint64_t entries, bytes, limit;
	uint64_t hits, misses, uploaded, evictions, stale;
	uint64_t write_through; /* UPDATEs applied to cached copies */
	uint64_t adopted;	/* columns an INSERT left (gcache_adopt) */
	/* evictions asked by gpu_alloc when the device was out of memory */
	uint64_t oom_evictions;
	/* uploads: bytes DMA'd from the registered pool mapping, bytes
	 * through pinned staging; time in loads (host side: queueing the
	 * DMAs, packing); the pool's registration: 1 when registered, failed
	 * attempts, time spent registering, the last failure's words */
	uint64_t up_direct, up_staged, load_ns;
	/* of load_ns: the measuring pass (gc_measure) and the packing and
	 * uploading pass (gc_pack), host decoding of encoded tablets in both */
	uint64_t measure_ns, pack_ns;
	/* of pack_ns: the encoded tablets' decode jobs built, sent and
	 * launched (gc_dec_column) */
	uint64_t expand_ns;
	/* gcache_column_range: row ranges loaded (streamed scans), bytes */
	uint64_t range_loads, range_bytes;
	uint64_t reg_ok, reg_fail, reg_ns;
	/* encoded tablets (format 4): parts expanded by the decode kernel
	 * and the packed bytes they uploaded; parts decoded on the host (an
	 * encoding the kernel does not expand, or GPMDB_GPU_HOST_DECODE=1) */
	uint64_t dec_dev_tablets, dec_dev_bytes, dec_host_tablets;
	/* compressed TEXT blocks unpacked for loads (gc_zt_pack) */
	uint64_t zt_blocks;
	char reg_msg[200];
} gcache_stats;

/* Frees the least recently used column that no query in progress pins:
 * 1, or 0 when there is none.  gpu_alloc calls it when the device is out
 * of memory, so working memory (hash tables, sort buffers) comes before
 * columns cached for earlier queries. */
int gcache_reclaim(void);

/* A new query: pins what it uses until the next call. */
void gcache_begin(void);
/* Where the query's pins stand now, and the unpinning of the columns it
 * first used after that mark (a nested GPU call's failed try: its loads
 * may be evicted for the next try; the outer calls' columns stay). */
uint64_t gcache_pin_mark(void);
void gcache_unpin_since(uint64_t mark);
/* Column col (or GCACHE_ROWID) of table table_id; stype is its storage
 * type (stg_type).  The reference stays valid until the next
 * gcache_begin. */
int gcache_column(stg_pool *p, uint64_t owner, uint32_t table_id, int col,
		  int stype, gcache_colref *out, char *err, size_t errlen);
/* The text bytes one entry or window addresses (gpu_str's 32-bit
 * offsets): 2 GiB.  gcache_need gives UINT64_MAX for a column past it or
 * past 2^32 rows (it never fits: stream it). */
uint64_t gcache_text_limit(void);
/*
 * Streaming (tables whose columns do not fit, docs/gpu.md):
 * gcache_need: the device bytes column col would take in the cache (what
 * gcache_column would allocate: values of the live rows, NULL bytes,
 * TEXT references and heap bytes); a valid entry's own size, 0 when this
 * query pins it already.  gcache_room: what the cache can give the
 * running query (its limit less the entries this query pins).
 * gcache_range_size: live rows and device bytes of physical rows [row0,
 * row0 + nrows).  gcache_column_range: loads the live rows of that range
 * in gcache_column's layout into a new device allocation *dev (the
 * caller gpu_frees it; out points into it) and *seg (TEXT: the
 * segments, the caller frees them; NULL otherwise); not cached.
 */
int gcache_need(stg_pool *p, uint64_t owner, uint32_t table_id, int col,
		int stype, uint64_t *bytes, char *err, size_t errlen);
uint64_t gcache_room(void);
int gcache_range_size(stg_pool *p, uint32_t table_id, int col, int stype,
		      uint64_t row0, uint64_t nrows, uint64_t *live,
		      uint64_t *bytes, char *err, size_t errlen);
int gcache_column_range(stg_pool *p, uint32_t table_id, int col, int stype,
			uint64_t row0, uint64_t nrows, gcache_colref *out,
			void **dev, gcache_seg **seg, char *err, size_t errlen);
/* The engine's attempt to register the pool mapping (ok, its time, the
 * failure's message): gpu_stats reports it. */
void gcache_note_register(int ok, uint64_t ns, const char *msg);
/*
 * Write-through of an UPDATE of number column col (engine/write/
 * batch_gpu.c): rows rowids (strictly increasing: the caller checks it
 * once for all its columns) got vals (width bytes each, the storage
 * array's form) and the NULL bits nulls (NULL: none).
 * on_dev: the three are device arrays, the row ids known to be strictly
 * increasing and in the table, nulls NULL unless a bit is set.
 * A cached copy of owner's that was current at the column's write stamp
 * `before`, taken when the UPDATE began, over a table with no deleted
 * rows, is changed on the device the same way and takes the column's
 * stamp now, so the next statement finds it; otherwise nothing is done
 * and the copy goes stale as before.  1 when applied, else 0 (a failed
 * scatter frees the copy).
 */
/* 1 when owner has a copy of a column of table_id (any stamp). */
int gcache_holds(uint64_t owner, uint32_t table_id);
int gcache_write_through(stg_pool *p, uint64_t owner, uint32_t table_id,
			 int col, uint64_t before, const uint64_t *rowids,
			 uint64_t n, const void *vals, const uint32_t *nulls,
			 uint32_t width, int on_dev);
/*
 * A GPU INSERT into an empty table leaves the columns it wrote in the
 * cache (engine/write/batch_gpu.c, gpu_append_keep): gcache_adopt_alloc
 * gives device memory for nrows values of storage type stype laid out as
 * a cache entry (*nulls: its NULL bytes when with_nulls, else NULL;
 * *bytes its size; other entries evicted for it as for a load), which
 * the INSERT fills; gcache_adopt then makes it owner's copy of column
 * col, current at the column's write stamp now (the INSERT's own),
 * when the table holds exactly those nrows rows and no deleted row:
 * 1, else 0 and the memory is freed (as it is for every failure).  An
 * older entry of the column goes.  Not for TEXT columns.
 */
int gcache_adopt_alloc(int stype, uint64_t nrows, int with_nulls, void **dev,
		       uint8_t **nulls, uint64_t *bytes, char *err,
		       size_t errlen);
int gcache_adopt(stg_pool *p, uint64_t owner, uint32_t table_id, int col,
		 int stype, void *dev, uint64_t bytes, uint64_t nrows,
		 int with_nulls);
/* A new owner id (one per connection). */
uint64_t gcache_new_owner(void);
void gcache_drop_owner(uint64_t owner);
/* 0 = the default (half the GPU's memory). */
void gcache_set_limit(uint64_t bytes);
uint64_t gcache_get_limit(void);
void gcache_get_stats(gcache_stats *s);
/* Frees every entry (gpu_shutdown, tests). */
void gcache_clear(void);

#ifdef __cplusplus
}
#endif

#endif /* GPMDB_GPU_CACHE_H */
