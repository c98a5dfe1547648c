/*
 * internal.h - the storage engine's private state and its modules'
 * internal functions (pool_, mlog_, alloc_, cat_, tab_).
 *
 * Code that can allocate (and so grow and remap the pool) keeps offsets
 * across the call and turns them into pointers afterwards with pool_at().
 */
#ifndef GPMDB_STORAGE_INTERNAL_H
#define GPMDB_STORAGE_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "hcl.h"
#include "layout.h"
#include "storage.h"

typedef struct tab_vslot tab_vslot;
/* A tablet an append of this transaction filled or wrote much of, or
 * made (tab_trim_heaps); regrown: it was moved to a full-capacity extent
 * by this transaction, which does not trim it again; fresh: this
 * transaction made it, so no committed row lives there. */
struct tab_note {
	uint32_t table_id, idx;
	bool regrown, fresh;
};

/* An undo target (pool offset and length). */
typedef struct {
	uint64_t off;
	uint64_t len;
} mlog_key;

/* An open-addressing set of undo targets. */
typedef struct {
	mlog_key *k;
	size_t n, cap;
} mlog_set;

/* A DRAM before-image of a target taken for statement-level rollback:
 * the target was logged earlier in the transaction, so the log holds its
 * transaction-start image, not its image at the savepoint.  ent is the
 * number of log entries when it was taken (its place in time). */
typedef struct {
	uint64_t off;
	uint64_t len;
	size_t ent;
	unsigned char *img;
} mlog_spimg;

/* An extent allocated by the running transaction (wal.c). */
typedef struct {
	uint64_t off, len;
	bool shared; /* mapped MAP_SHARED until the transaction ends */
	bool dead;   /* freed again by the commit: its bytes matter to nobody */
} wal_extent;

/* msync mode's private mapping and commit log (wal.c). */
typedef struct {
	bool on;	     /* the pool is mapped privately through wal.c */
	bool stuck;	     /* an in-place write failed: never checkpoint */
	int fd;		     /* "<pool>-wal", -1 until the first commit */
	size_t resv;	     /* bytes of address space reserved at base */
	uint64_t salt;	     /* of the current header */
	uint64_t seq;	     /* of the next frame */
	uint64_t tail;	     /* file offset of the next frame */
	uint64_t *dbits;     /* one bit per page: changed since the commit */
	size_t dwords;	     /* words of dbits */
	uint64_t dlo, dhi;   /* first and last word with a bit */
	uint64_t ndirty;     /* bits set */
	uint64_t dlist[256]; /* the first pages marked (WAL_DLIST) */
	uint64_t dlist_n;    /* pages marked, listed or not */
	uint64_t *wbits; /* one bit per page: in a frame since the checkpoint */
	uint64_t wlo, whi, wn;
	uint64_t *pages; /* scratch: dirty page numbers */
	size_t cap_pages;
	wal_extent *fresh; /* this transaction's allocations */
	size_t nfresh, cap_fresh;
	bool fresh_sorted, shared_used;
	size_t nframe;	  /* pages[0..nframe): the last frame's, for in place */
	wal_extent *runs; /* written in place since the checkpoint: private */
	size_t nruns, cap_runs; /* copies the checkpoint drops */
	bool pend; /* frames not all written in place yet (readers were on) */
	/* pmem mode beside readers (lock.c): the pool mapped privately
	 * over its shared mapping and written through the log, as msync
	 * mode; dur reads STG_DUR_MSYNC meanwhile */
	bool shadow;
	stg_durability shadow_dur; /* the mode to go back to (pmem, off) */
	uint64_t shadows; /* statistics: times this connection went private */
	uint64_t shadow_commits; /* statistics: commits made private */
	uint64_t ckpt_bytes, big_bytes, shared_min;	     /* thresholds */
	uint64_t frames, checkpoints, big_commits, replayed; /* statistics */
} wal_state;

/* Sharing the pool with other connections (lock.c). */
typedef struct {
	bool on;     /* <pool>-shm is mapped: others may be around */
	bool shm_rw; /* it is writable (read-only directories: not) */
	int fd;	     /* the locks' descriptor: the pool's, or own_fd */
	int own_fd;  /* a read-only open's read-write descriptor, or -1 */
	int shm_fd;
	void *shm;
	uint64_t seen;	       /* shm counter at the last catch-up */
	bool force;	       /* the next catch-up drops every private page */
	bool wstale;	       /* log and allocator state to reload to write */
	bool writer;	       /* holds WRITER */
	bool read_held;	       /* holds READ shared */
	bool read_ex;	       /* holds READ exclusive (pmem writer) */
	bool read_out;	       /* holds READ exclusive for a moment (msync) */
	bool no_track;	       /* pool_flush marks nothing (reader's undo) */
	int reading;	       /* nesting of stg_read_begin */
	int busy_ms;	       /* busy timeout */
	uint64_t snap_commits; /* shm commits when the snapshot began */
	uint64_t data_version; /* bumped when others' changes came in */
	uint64_t id;	       /* this connection's, random: shm readers */
	bool quiet;	       /* its reads are not noted (stg_open_opts) */
} lk_state;

struct stg_pool {
	char *path;
	char map_path[64]; /* :memory: maps its memfd as /proc/self/fd/N */
	bool memory;	   /* ":memory:" or "": an anonymous pool */
	int fd;
	bool readonly;
	bool private_map; /* readonly: MAP_PRIVATE copy, recovery in memory */
	/* a read-only copy with deltas: applied in the private mapping
	 * (delta.c), again whenever its pages are dropped (wal.c) */
	bool delta_private;
	uint64_t dl_off, dl_len;
	bool broken; /* a remap failed: nothing is mapped any more */
	char *base;
	size_t map_len;
	bool is_pmem;
	stg_durability dur;
	stg_superblock sb; /* a copy; the superblock never changes */

	int errcode;
	char errmsg[1024];

	/* Transaction and metadata log state. */
	bool in_txn;
	uint64_t log_gen;
	uint64_t log_tail;     /* pool offset of the next entry */
	uint64_t log_last_seq; /* seq of the chain's last entry, 0 = empty */
	uint64_t log_next_seq; /* never reused within a generation */
	uint64_t *ents;	       /* pool offsets of the chain's entries */
	size_t nents, cap_ents;
	mlog_set dd; /* targets logged in this transaction */
	/* Savepoints: DRAM images of targets changed since the savepoint
	 * that dd already held, and the set of those taken since it. */
	bool sp_active;
	mlog_spimg *spi;
	size_t spi_n, spi_cap;
	mlog_set spd;

	/* zones.c: the stamp of the running transaction (0: no table) */
	uint64_t zt_stamp;
	/* zones.c: the line masks' extent, zones and reset point, as this
	 * transaction found them (zone_lines_cache; off 0: none); the
	 * reset point of a connection without a shared page (lock.c) */
	uint64_t lm_c_off, lm_c_n, lm_c_R, lm_reset_local;
	/* tests (GPMDB_TEST_NO_LINES=1 at open): stamps zones without
	 * marking their lines, as a build before line masks does */
	bool no_lines;

	/* Allocator. */
	uint64_t alloc_hint; /* chunk to start the next search at */
	uint64_t used_chunks;

	wal_state wal;
	lk_state lk;
	size_t ro_resv; /* read-only: bytes reserved at base (growth) */
	/* pmem mode on shmem (tmpfs, :memory:): bytes of address space
	 * reserved at base, the file mapped shared at its start; a growth
	 * maps the new range in place (pool_remap_to), so the base never
	 * moves.  0: libpmem's mapping (real PM), mapped again whole */
	size_t pm_resv;
	/* pm_resv pools: a second shared mapping of the file for GPU kernels
	 * to store into (stg_pool_gpu_base), in a reservation of pm_resv
	 * bytes, gpu_alias_len of them mapped; never remapped while open */
	char *gpu_alias;
	size_t gpu_alias_len;
	/* pmem mode: writers wait for readers instead of writing beside
	 * them through the log (gpu_persist = kernel asks for it) */
	bool in_place_only;
	stg_write_times wt; /* stg_get_write_times */
	/* stg_grow_ahead: a thread allocating the file's next range
	 * [from, to) while the caller converts and checks an append's rows;
	 * joined by pool_extend (which then skips what it allocated), commit,
	 * rollback and close */
	struct {
		pthread_t th;
		bool on;   /* running or not joined yet */
		bool done; /* joined, its result not used yet */
		uint64_t from, to;
		int err;      /* its posix_fallocate's result */
		int omp_prev; /* the caller's OpenMP threads before */
	} ahead;

	/* Statistics. */
	uint64_t bytes_persisted;
	uint64_t txn_bytes_persisted;
	double recovery_ms;
	uint64_t recovered_entries;

	/* Tablet view arrays handed out by stg_tablet_get, by (table, idx). */
	tab_vslot **vslots;
	size_t vcap;
	/* Tablets whose heap this transaction may leave larger than it
	 * needs (table id << 32 | tablet index): trimmed at commit
	 * (tab_trim_heaps). */
	struct tab_note *trim;
	size_t ntrim, cap_trim;
	/* Encodings (encode.c): auto_encode's setting, and the tables this
	 * transaction appended to or widened, encoded at its commit. */
	bool auto_encode;
	bool in_encode; /* encode.c's own commits encode nothing more */
	bool zt_always; /* GPMDB_ZTEXT_ALWAYS=1: compress TEXT regardless */
	uint32_t *enc_tids;
	size_t nenc, cap_enc;
	/* stg_read's strings of compressed TEXT (encode_text.c), kept
	 * until its next call or the close */
	char **zt_keep;
	size_t nzt_keep;

	/* Indexes: the offending batch row of the last unique violation,
	 * and a counter that changes with every index change (GPU caches). */
	int64_t cons_row;
	char cons_key[256];
	uint64_t ix_epoch;
	uint64_t ix_bulk_mask; /* idx_before_update's choice, per index */
	/* An append's unique check sorted its batch's records: kept for the
	 * idx_after_append of the same rows, which then neither encodes nor
	 * sorts them again (index.c presorted_*). */
	struct {
		uint32_t index_id;
		uint64_t tcat, n;
		uint8_t *recs;
		/* no recs: a one-column integer key that rises, above the
		 * tree, read again from the append's column (int32 or not) */
		const void *ivals;
		bool i32;
	} ixpre[4];
	int nixpre;

	/* stamp.c: write stamps of columns (stg_col_stamp) */
	uint64_t wst_all; /* set at open: no two handles share stamps */
	struct stg_wstamp *wst;
	size_t nwst, cap_wst;
};

/* ---- stamp.c: write stamps (stg_col_stamp) ------------------------------ */

/* What a write may change, stamped before or as it changes it. */
void stamp_cols(stg_pool *p, uint32_t table_id, int ncols,
		const uint32_t *cols);
void stamp_table(stg_pool *p, uint32_t table_id);
void stamp_cat(stg_pool *p, uint64_t cat_off); /* the entry's table */
void stamp_all(stg_pool *p);
void stamp_free(stg_pool *p);

/* ---- pool.c ------------------------------------------------------------- */

/* pread/pwrite of all n bytes at off, EINTR retried: 0, or -1 with
 * errno (pread: *got bytes before the end of the file). */
int pool_pread_full(int fd, void *buf, size_t n, off_t off, size_t *got);
int pool_pwrite_full(int fd, const void *buf, size_t n, off_t off);
/* The error of a failed file operation (errno err): GPMDB_FULL "database
 * or disk is full: WHAT PATH" for a full disk or file size limit, else
 * GPMDB_IOERR "disk I/O error: WHAT PATH: <strerror>". */
int pool_err_io(stg_pool *p, int err, const char *what, const char *path);
/* fsync of the directory holding path (a new name made durable). */
int pool_fsync_dir(const char *path);
/* CLOCK_MONOTONIC in nanoseconds (the write timers). */
uint64_t pool_now_ns(void);

static inline void *pool_at(const stg_pool *p, uint64_t off)
{
	return p->base + off;
}

static inline uint64_t pool_off(const stg_pool *p, const void *addr)
{
	return (uint64_t)((const char *)addr - p->base);
}

static inline stg_root *pool_root(const stg_pool *p)
{
	return (stg_root *)pool_at(p, p->sb.root_off);
}

/* Sets the pool's error (rc and a printf-style message); returns rc. */
int pool_err(stg_pool *p, int rc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Clears the error state at the start of an API call. */
void pool_clear_err(stg_pool *p);

/* Makes [addr, addr + len) durable as the durability mode says, and
 * counts the bytes. */
void pool_persist(stg_pool *p, const void *addr, size_t len);
/* Flush without the final fence (PMEM); in msync mode marks the pages
 * for the commit (wal.c).  Thread-safe, counts nothing.  pool_drain
 * completes earlier flushes. */
void pool_flush(stg_pool *p, const void *addr, size_t len);
void pool_drain(stg_pool *p);
/* Reads GPMDB_CRASH_AT (stg_crash_point does at each call) so that cores
 * calling stg_crash_point together do not parse it at once. */
void crash_points_load(void);
void pool_count_persisted(stg_pool *p, uint64_t bytes);
/* Bulk copy into the pool (PMEM: non-temporal, no drain; msync mode:
 * the pages marked for the commit). */
void pool_memcpy_nodrain(stg_pool *p, void *dst, const void *src, size_t n);

/* Extends the file and the mapping to new_size (not the root's size). */
int pool_extend(stg_pool *p, uint64_t new_size);

/* Checks the calling state of a modifying API call. */
int pool_check_writable(stg_pool *p);

/* True when [off, off + len) lies inside the allocator's range. */
bool pool_range_ok(const stg_pool *p, uint64_t off, uint64_t len);

/* ---- zones.c ------------------------------------------------------------ */

/* Stamps the zones of [off, off + len) with the transaction's stamp
 * (every write of the pool calls it through pool_flush and
 * pool_memcpy_nodrain). */
void zone_mark(stg_pool *p, uint64_t off, uint64_t len);
/* A write transaction or a recovery begins: its stamp, the table's
 * counter plus one (stg_begin, mlog_open). */
void zone_txn_begin(stg_pool *p);
/* The table: counter, then stamps (NULL: none); *nzones zones covered. */
uint64_t *zone_table(const stg_pool *p, uint64_t *nzones);
uint64_t zone_count(uint64_t size);
/* The line masks (NULL: none); *nzones zones covered; a zone's record;
 * the bytes of an extent covering n zones. */
char *zone_lines(const stg_pool *p, uint64_t *nzones);
stg_lm_zone *zone_lm_rec(char *lm, uint64_t z);
/* A backup begins: masks restart at their zone's next write (the reset
 * point moved past the counter in this view). */
void zone_lines_restart(stg_pool *p);
uint64_t zone_lm_bytes(uint64_t n);

/* ---- delta.c ------------------------------------------------------------ */

/* A delta being written after a copy's image (backup.c): entries go
 * through a 4 KiB-aligned buffer to out (0 or an errno). */
typedef int (*dw_out_fn)(void *ctx, const char *buf, uint64_t n, uint64_t off);
typedef struct {
	dw_out_fn out;
	void *ctx;
	uint8_t *buf, *spare; /* filled; written by the thread meanwhile */
	size_t fill;
	uint64_t start, pos; /* its header page; where buf[0] goes */
	uint64_t len, entries, bytes, from_gen, image_size;
	uint32_t crc;
	/* the write in flight (a thread of its own) */
	pthread_t th;
	bool busy;
	const uint8_t *wbuf;
	uint64_t wn, woff;
	int werr;
	int threads; /* the copies and checksums of dw_add_many */
} delta_writer;
int dw_begin(delta_writer *w, uint64_t start, uint64_t from_gen,
	     uint64_t image_size, dw_out_fn out, void *ctx);
/* Entries of n zones in order: each zone's lines that its mask sets,
 * from zbase (the zone's bytes), copied and their checksum computed on
 * up to threads threads. */
typedef struct {
	uint64_t zone;
	const uint64_t *mask;
	const char *zbase;
} dw_src;
int dw_add_many(delta_writer *w, const dw_src *src, size_t n, int threads);
/* fn(ctx, i) for i in [0, n), chunk at a time, on up to threads threads
 * at nice 19 (a backup's writes and copies); the first nonzero result. */
int dw_run(int threads, size_t n, size_t chunk, int (*fn)(void *, size_t),
	   void *ctx);
/* The rest and the header page; *end: the delta's end in the file. */
int dw_end(delta_writer *w, uint64_t to_gen, uint64_t *end);
void dw_free(delta_writer *w);
unsigned delta_popcount(const uint64_t *mask);
/* Walks the deltas in [off, off + len) of fd: visit gets each entry
 * (and its lines' bytes when lines); verify checks the checksums.  0, an
 * errno, EINVAL for a damaged chain; *first the first delta's header. */
typedef int (*delta_visit)(void *ctx, const stg_delta_ent *e,
			   const char *lines);
int delta_scan(int fd, uint64_t off, uint64_t len, bool lines, bool verify,
	       delta_visit visit, void *ctx, stg_delta_hdr *first);
/* Opening: a copy with pending deltas gets them applied first, in the
 * file (read-write), or, read-only, in the private mapping once it is
 * made (delta_private, then delta_apply_private: the file is never
 * written). */
int delta_open_apply(stg_pool *p);
int delta_apply_private(stg_pool *p);
/* Once the connection holds its lock (no backup can begin on the file):
 * deltas that came since the first look, applied privately (read-only)
 * or refused (read-write: open again); an incomplete copy refused. */
int delta_after_lock(stg_pool *p);
/* The deltas into the private mapping again (its pages were dropped). */
int delta_reapply_private(stg_pool *p);

/* The line masks' reset point R (lock.c: the shared page), and a move of
 * it up to r (a backup's start). */
uint64_t lock_lines_reset(const stg_pool *p);
void lock_lines_reset_move(stg_pool *p, uint64_t r);

/* ---- wal.c -------------------------------------------------------------- */

/* msync mode (see wal.c): maps the file privately in a reservation of
 * max_size; grows the mapping in place; unmaps and closes the log. */
int wal_map(stg_pool *p, uint64_t file_len);
int wal_grow(stg_pool *p, uint64_t new_size);
void wal_unmap(stg_pool *p);
bool wal_active(const stg_pool *p);
/* Marks the pages of [off, off + len) changed (thread-safe). */
void wal_track(stg_pool *p, uint64_t off, uint64_t len);
/* An extent the transaction allocated (its old bytes matter to nobody). */
int wal_fresh(stg_pool *p, uint64_t off, uint64_t len);
/* An extent the committing transaction frees (apply_frees). */
void wal_freed(stg_pool *p, uint64_t off, uint64_t len);
/* The commit of a transaction (calls mlog_commit_mem); on an error the
 * transaction is rolled back and the message says so. */
int wal_commit(stg_pool *p);
/* After an in-memory rollback: fresh space's private pages go. */
void wal_rollback_done(stg_pool *p);
/* Before mapping: replays the commit log of a crashed writer into the
 * file and removes the log. */
int wal_recover(stg_pool *p, uint64_t file_len, bool *recovered);
/* A reader's private mapping: the frames of a crashed writer, in memory. */
int wal_apply_readonly(stg_pool *p);
/* After mlog_open recovered in the private mapping: its writes in place. */
int wal_flush_recovery(stg_pool *p);
/* Close: the last connection (last) makes the pool durable in place and
 * empties and removes the log; others leave it to the rest. */
int wal_close(stg_pool *p, bool last);

/* Brings a connection's private pages up to the log's last complete
 * frame (lock.c's catch-up): all of them again after a checkpoint or
 * when force (*full), else the frames after the last seen. */
int wal_catch_up(stg_pool *p, bool force, bool *full);
/* pmem mode beside readers (wal.c "Beside readers"): the shared mapping
 * swapped for a private one of the same addresses and the log's frames
 * applied; back, once every frame is in the file and nothing is dirty;
 * a private writer with readers out puts the frames in place, starts the
 * log over and maps shared again; a shared writer with readers out puts
 * the log's frames into the file and starts it over. */
int wal_shadow_begin(stg_pool *p);
int wal_shadow_end(stg_pool *p);
bool wal_shadow_can_end(const stg_pool *p);
int wal_shadow_settle(stg_pool *p);
int wal_settle_file(stg_pool *p);

/* ---- lock.c ------------------------------------------------------------- */

/* Takes CONN (exclusive when alone: *alone) and maps <pool>-shm. */
int lock_open(stg_pool *p, bool *alone);
/* All connections of a file share one durability mode. */
int lock_set_mode(stg_pool *p, stg_durability dur);
stg_durability lock_mode(const stg_pool *p);
/* Opening done: CONN shared. */
void lock_open_done(stg_pool *p);
/* Closing: true when no other connection is open (CONN exclusive). */
bool lock_last(stg_pool *p);
void lock_close(stg_pool *p, bool last);
/* No other connection wrote since this one last looked. */
bool lock_current(const stg_pool *p);
/* The write lock (stg_begin) and its end (commit, rollback). */
int lock_write(stg_pool *p);
void lock_write_end(stg_pool *p, bool committed);
/* msync writers: readers out while committed pages go into the file. */
bool lock_readers_out(stg_pool *p);
bool lock_readers_out_wait(stg_pool *p, int ms);
void lock_readers_back(stg_pool *p);
/* Which frames are in the file already (shared between writers). */
void lock_published_in_place(stg_pool *p, uint64_t salt, uint64_t seq);
bool lock_in_place(const stg_pool *p, uint64_t salt, uint64_t seq);
/* The log's last committed frame (salt, seq; seq 0: none since its
 * header), published by every commit and checkpoint. */
void lock_published_frame(stg_pool *p, uint64_t salt, uint64_t seq);
/* Does the log hold frames (of its current salt)?  Are they all in the
 * file? */
bool lock_frames_live(const stg_pool *p);
bool lock_frames_in_file(const stg_pool *p);
/* A dead writer's transaction undone in msync pages: into the file. */
int lock_flush_recovery(stg_pool *p);

/* pool.c: map a grown file (pmem: remapped; read-only: in place). */
int pool_remap(stg_pool *p);
int pool_ro_grow(stg_pool *p, uint64_t new_size);
/* A shared mapping of the pool file at `at` (MAP_FIXED), through a
 * descriptor of its own; MAP_FAILED with errno on failure. */
void *pool_map_shared_at(stg_pool *p, void *at, size_t len, off_t off);
/* The GPU's registrations of this mapping go (the unmap hook), before
 * pages under them are replaced. */
void pool_gpu_forget(stg_pool *p);
void pool_gpu_forget_at(void *base, uint64_t len);

/* ---- mlog.c ------------------------------------------------------------- */

/* True when the log holds a chain: a writer died inside a transaction. */
bool mlog_busy(stg_pool *p);

/* The in-memory part of a commit: commit record, frees, truncation. */
int mlog_commit_mem(stg_pool *p);
/* Its three steps, for a caller that makes each durable before the
 * next: the commit record, the deferred frees, the truncation. */
int mlog_commit_record(stg_pool *p);
int mlog_commit_frees(stg_pool *p);
void mlog_commit_end(stg_pool *p);
/* Re-reads the log's state from the mapping (after wal.c dropped a
 * transaction's pages) and recounts the allocator. */
void mlog_reload(stg_pool *p);

/* Opens the log: recovers (undo, or finish a commit) when it is not
 * empty; the crash points of recovery are live there. */
int mlog_open(stg_pool *p, bool *recovered);
/* Appends an UNDO entry holding the current bytes of [off, off + len),
 * unless that target was logged since the last savepoint. */
int mlog_undo(stg_pool *p, uint64_t off, uint64_t len);
/* mlog_undo, then copy src over the target and persist it. */
int mlog_write(stg_pool *p, uint64_t off, const void *src, uint64_t len);
int mlog_set_u64(stg_pool *p, uint64_t off, uint64_t v);
int mlog_append(stg_pool *p, uint32_t type, const void *payload, uint32_t len,
		uint64_t *seq);
int mlog_commit(stg_pool *p);
int mlog_rollback(stg_pool *p);
int mlog_rollback_to(stg_pool *p, const stg_mark *m);
void mlog_mark(stg_pool *p, stg_mark *m);
/* Drops the savepoint images (transaction end). */
void mlog_sp_reset(stg_pool *p);
/* Pool offsets of the chain's entries in order, from the log itself. */
int mlog_scan(stg_pool *p, uint64_t **offs, size_t *n);
static inline stg_log_rec *mlog_rec(stg_pool *p, uint64_t off)
{
	return (stg_log_rec *)pool_at(p, off);
}

/* ---- alloc.c ------------------------------------------------------------ */

int alloc_open(stg_pool *p);
uint64_t alloc_round(const stg_pool *p, uint64_t bytes);
/* Whether first fit finds bytes wholly below pool offset off (VACUUM's
 * compaction). */
bool alloc_fits_below(const stg_pool *p, uint64_t bytes, uint64_t off);
/* Allocates at least bytes (whole chunks; *ext_bytes gets the size),
 * growing the pool when needed.  The allocation is undo-logged. */
int alloc_extent(stg_pool *p, uint64_t bytes, uint64_t *off,
		 uint64_t *ext_bytes);
/* Makes room for bytes more in one run when they are more than an
 * ordinary growth gives (one growth of the pool to what is missing and
 * an eighth more; nothing when a run is free or an eighth of the pool
 * holds them), so that the extents a batch allocates next need no growth
 * of their own. */
int alloc_prepare(stg_pool *p, uint64_t bytes);
/* The size alloc_prepare(p, bytes) would grow the pool file to, 0 when it
 * would not grow it (stg_grow_ahead). */
uint64_t alloc_prepare_size(const stg_pool *p, uint64_t bytes);
/* Frees an extent when the transaction commits. */
int alloc_free_deferred(stg_pool *p, uint64_t off, uint64_t bytes);
/* Clears the bits now (commit and recovery only: not undo-logged). */
void alloc_free_now(stg_pool *p, uint64_t off, uint64_t bytes);
bool alloc_bit(const stg_pool *p, uint64_t chunk);

/* ---- catalog.c ---------------------------------------------------------- */

static inline stg_cat_entry *cat_entry(const stg_pool *p, uint64_t off)
{
	return (stg_cat_entry *)pool_at(p, off);
}

static inline stg_cat_column *cat_cols(stg_cat_entry *e)
{
	return (stg_cat_column *)(e + 1);
}

/* An index's catalog entry for the header at hoff (index.c makes the
 * tree first); *index_id its object sequence number. */
int cat_index_add(stg_pool *p, const char *name, uint64_t tcat, const char *sql,
		  uint64_t hoff, uint32_t *index_id);
/* The entry after prev (0: the first), 0 at the end. */
uint64_t cat_walk(stg_pool *p, uint64_t prev);
/* Unlinks an entry, freeing its extents (an index's tree) at commit. */
int cat_unlink_entry(stg_pool *p, uint64_t off);
/* btree.c: frees every arena of the index at hoff (deferred). */
int ix_free_all(stg_pool *p, uint64_t hoff);
/* Finds a table by id (GPMDB_NOTFOUND with a message when absent). */
int cat_find_table(stg_pool *p, uint32_t table_id, uint64_t *off);

/* ---- tablet.c ----------------------------------------------------------- */

/* A table's catalog offset by id: GPMDB_IOERR when the pool is no longer
 * mapped, GPMDB_NOTFOUND when there is no such table. */
int tab_find_table(stg_pool *p, uint32_t table_id, uint64_t *off);
/* The same before a write to the table: pool_check_writable first. */
int tab_find_writable(stg_pool *p, uint32_t table_id, uint64_t *off);
uint64_t tab_capacity(uint64_t idx);
uint64_t tab_first_row(uint64_t idx);
uint64_t tab_index_of(uint64_t row);
/* Bytes of a tablet extent for the table's columns and a capacity. */
uint64_t tab_layout(const stg_cat_column *cols, uint32_t ncols, uint64_t cap,
		    uint64_t *colmap, uint64_t *deleted_rel);
static inline stg_tdir *tab_dir(const stg_pool *p, uint64_t off)
{
	return (stg_tdir *)pool_at(p, off);
}
static inline uint64_t *tab_dir_slots(stg_tdir *d)
{
	return (uint64_t *)(d + 1);
}
static inline stg_tablet_hdr *tab_hdr(const stg_pool *p, uint64_t off)
{
	return (stg_tablet_hdr *)pool_at(p, off);
}
/* Rows a tablet's arrays have room for (layout.h rows_alloc). */
static inline uint64_t tab_room(const stg_tablet_hdr *h)
{
	return h->rows_alloc ? h->rows_alloc : h->capacity;
}
/* Notes the tablets that rows [start, end) of an append fill or of
 * which they are at least 1/16, for tab_trim_heaps. */
int tab_note_append(stg_pool *p, uint32_t table_id, uint64_t start,
		    uint64_t end);
static inline uint64_t *tab_colmap(stg_tablet_hdr *h)
{
	return (uint64_t *)(h + 1);
}
/* A tablet's column c array, its NULL bitmap, its deleted-row bitmap. */
static inline void *tab_col_data(stg_tablet_hdr *h, uint32_t c)
{
	return (char *)h + tab_colmap(h)[2 * c];
}
static inline uint32_t *tab_col_nulls(stg_tablet_hdr *h, uint32_t c)
{
	return (uint32_t *)((char *)h + tab_colmap(h)[2 * c + 1]);
}
static inline uint32_t *tab_deleted_bits(stg_tablet_hdr *h)
{
	return (uint32_t *)((char *)h + h->deleted_rel);
}
/* Sets or clears bit i of w; rows of one word may be written by several
 * threads. */
static inline void tab_bit_set_atomic(uint32_t *w, uint64_t i, bool on)
{
	uint32_t m = 1u << (i & 31);

	if (on)
		__atomic_fetch_or(&w[i >> 5], m, __ATOMIC_RELAXED);
	else
		__atomic_fetch_and(&w[i >> 5], ~m, __ATOMIC_RELAXED);
}
/* Room for need more bytes in the string heap of the tablet at toff
 * (moved to a bigger extent when full; fill, rows: an append's rows so
 * far and its size, to size a bulk load's heap once). */
int tab_ensure_heap(stg_pool *p, uint64_t toff, uint64_t need, uint64_t fill,
		    uint64_t rows);
/* Undo of one HCL segment (rollback and recovery). */
int tab_hcl_undo(stg_pool *p, const stg_log_hcl *h, uint64_t batch_seq,
		 bool in_recovery);
void tab_views_free(stg_pool *p);
/* Before the commit record: the heaps of the tablets the transaction
 * noted (p->trim) lose their unused chunks (heap_size undo-logged, the
 * tail freed at commit), and such a tablet not full moves to an extent
 * for its rows (format version 3); the list is emptied. */
int tab_trim_heaps(stg_pool *p);
/* Shared with hcl_gpu.c (the GPU write path's storage API). */
int tab_ensure_tablets(stg_pool *p, uint64_t cat_off, uint64_t rows);
/* An append of nrows rows up to row end: the room its tablets and index
 * rebuilds take, made in one growth of the pool (alloc_prepare). */
uint64_t tab_append_bytes(stg_pool *p, uint64_t cat_off, uint64_t nrows,
			  uint64_t end);
/* stg_grow_ahead's thread: started for the file to reach size, joined
 * (pool_ahead_join: restores the caller's OpenMP threads). */
void pool_ahead_start(stg_pool *p, uint64_t size);
void pool_ahead_join(stg_pool *p);
/* ... joined and its range forgotten (commit, rollback, close: the next
 * statement's growth allocates for itself). */
void pool_ahead_end(stg_pool *p);
int tab_append_prepare(stg_pool *p, uint64_t cat_off, uint64_t nrows,
		       uint64_t end);
int tab_check_not_null(stg_pool *p, stg_cat_entry *e, uint32_t c,
		       const uint32_t *nulls, uint64_t n, const char *what);
/* Allocates and starts an HCL segment for n threads of epp entries:
 * HCL_BATCH log entry, deferred free, zeroed tails, header, persisted. */
int tab_hcl_begin(stg_pool *p, uint32_t table_id, uint64_t n, uint32_t epp,
		  hcl_geom *g, uint64_t *seg_off);
/* hcl_gpu.c: undo of a segment by the recovery hook (a GPU kernel);
 * GPMDB_OK when it did it all, anything else means "do it on the CPU". */
int tab_hcl_undo_gpu(stg_pool *p, uint64_t cat_off, const stg_log_hcl *lh);
/* zones.c for GPU kernels' writes: the cells a segment's entries name,
 * rows [first, first + n) of every column. */
int tab_zone_mark_hcl(stg_pool *p, uint64_t cat_off, uint64_t seg_off,
		      uint64_t seg_size);
void tab_zone_mark_rows(stg_pool *p, uint64_t cat_off, uint64_t first,
			uint64_t n);
/* Frees (deferred) every extent of a table: tablets, heaps, directory. */
int tab_free_all(stg_pool *p, uint64_t cat_off);

/* ---- encode.c ----------------------------------------------------------- */

/* The column encodings of a tablet, NULL when every column is plain. */
static inline stg_col_enc *tab_encs(stg_tablet_hdr *h)
{
	return h->enc_rel ? (stg_col_enc *)((char *)h + h->enc_rel) : NULL;
}
/* Bit-packing of VACUUM's encodings (encode.c, encode_text.c): the
 * bytes n fields of bits take (a spare word: readers load 8 bytes at
 * once), and field i of wd set to v (wd zeroed first). */
uint64_t enc_packed_bytes(uint64_t n, unsigned bits);
void enc_pack(uint64_t *wd, uint64_t i, unsigned bits, uint64_t v);
/* Packs values 0..n-1 (EXPR, of i, each below 2^bits) into the zeroed
 * words at wd as enc_pack would, a word at a time (enc_pack's read,
 * or and write per value made the writing of an encoded tablet slow). */
#define ENC_PACK_RUN(wd, n, bits, EXPR)                                        \
	do {                                                                   \
		uint64_t *o_ = (wd), acc_ = 0, n_ = (n);                       \
		unsigned b_ = (bits), f_ = 0;                                  \
		if (b_ == 0)                                                   \
			break;                                                 \
		for (uint64_t i = 0; i < n_; i++) {                            \
			uint64_t v_ = (EXPR);                                  \
			acc_ |= v_ << f_;                                      \
			f_ += b_;                                              \
			if (f_ >= 64) {                                        \
				*o_++ = acc_;                                  \
				f_ -= 64;                                      \
				acc_ = f_ ? v_ >> (b_ - f_) : 0;               \
			}                                                      \
		}                                                              \
		if (f_)                                                        \
			*o_ = acc_;                                            \
	} while (0)
/* A public descriptor of column c of tablet h (heap: its heap). */
void enc_colenc(stg_tablet_hdr *h, uint32_t c, stg_colenc *out);
/* Rows [from, from + n) of column c of h, plain, into out (w bytes per
 * value; TEXT: stg_strref into h's heap). */
void enc_decode(stg_tablet_hdr *h, uint32_t c, size_t w, uint64_t from,
		uint64_t n, void *out);
/* Tablet idx of the table at cat_off rewritten encoded (when it holds
 * rows and is plain).  Allocates. */
int enc_tablet(stg_pool *p, uint64_t cat_off, uint64_t idx);
/* stg_read of k rows from lr of an encoded column (TEXT: stg_text),
 * into out from value done on. */
int enc_read(stg_pool *p, stg_tablet_hdr *h, uint32_t col, stg_type t,
	     uint64_t lr, uint64_t k, void *out, uint64_t done);
/* encode_text.c: compressed TEXT (STG_ENC_ZTEXT).  A column's plan:
 * the lengths, the directory, the frames; bytes 0 when not made. */
typedef struct {
	uint32_t *lens;
	stg_zt_blk *blk; /* nblk + 1 */
	char *frames;
	uint64_t nblk, base, len_bytes, z_bytes, bytes;
	unsigned bits;
} zt_plan;
/* Rows [0, n) of a plain TEXT column (refs sr into heap, NULL bits nb)
 * compressed; left unmade (bytes 0) when it could not be smaller than
 * limit bytes or does not compress by an eighth (force: made anyway).
 * GPMDB_NOMEM. */
int zt_plan_make(const stg_strref *sr, const uint32_t *nb, const char *heap,
		 uint64_t n, uint64_t limit, bool force, zt_plan *z);
void zt_plan_free(zt_plan *z);
/* The plan written at tablet + rel (zeroed, z->bytes) and described in
 * *ce (kind, bits, base, dict_n, dict_rel, z_rel, z_bytes). */
void zt_plan_write(const zt_plan *z, char *tablet, uint64_t rel,
		   stg_col_enc *ce);
/* stg_tablet_decode_all's part: the wanted ZTEXT columns into pb and a
 * copy of the heap (pb->heap, v->heap). */
int zt_decode_all(stg_tablet_view *v, const uint8_t *want, stg_plainbuf *pb);
/* Row r's string (thread-local cache of the last blocks: valid until
 * a few more blocks are read on this thread). */
int zt_cell(const stg_colenc *e, uint64_t r, const char **s, uint32_t *len);
/* Widening (tablet.c's tablet_move) of a tablet h with ZTEXT columns:
 * begin allocates the new heap (raw 0: none, nothing to do; allocates,
 * before the new extent); heap, once nh is laid out, copies the old
 * heap into it, decompresses the ZTEXT columns' n rows after (their
 * refs in nh's arrays; enc_decode leaves them alone), points nh at it
 * and frees the old heap at commit. */
typedef struct {
	uint64_t raw, off, ext, used;
} zt_widen;
int zt_widen_begin(stg_pool *p, stg_tablet_hdr *h, uint32_t ncols,
		   zt_widen *zw);
int zt_widen_heap(stg_pool *p, zt_widen *zw, const char *table,
		  stg_tablet_hdr *h, stg_tablet_hdr *nh, uint64_t n);

/* stg_read of compressed TEXT: rows [lr, lr + k) of column c of h as
 * stg_text (out) into a buffer the pool keeps (p->zt_keep) until
 * zt_keep_free (the next stg_read: done 0, its first piece; the close). */
int zt_read(stg_pool *p, stg_tablet_hdr *h, uint32_t c, uint64_t lr, uint64_t k,
	    stg_text *out, uint64_t done);
void zt_keep_free(stg_pool *p);
/* gpmdb_check of ZTEXT column col of h (nrows rows): NULL when sound,
 * else what is wrong (every block decompressed and its checksum
 * verified). */
const char *zt_check(stg_tablet_hdr *h, uint32_t col, uint64_t nrows);
/* Notes a table written by this transaction for auto_encode. */
int enc_note(stg_pool *p, uint32_t table_id);
/* At commit (before tab_trim_heaps): auto_encode's work. */
int enc_commit(stg_pool *p);
/* tablet.c: tablet idx, NULL when missing; tab_widen: an encoded one
 * made plain (a move to a full-capacity plain extent). */
stg_tablet_hdr *tab_at(stg_pool *p, stg_cat_entry *e, uint64_t idx);
int tab_widen(stg_pool *p, uint64_t cat_off, uint64_t idx);

/* One cell of a table (index keys, checks). */
typedef struct {
	stg_type type;
	bool null, deleted;
	uint64_t vbuf; /* an encoded cell's value, decoded (val points here) */
	const void *val;  /* the column array's element */
	const char *text; /* TEXT: the string in the heap */
	uint32_t tlen;
} tab_cellv;
int tab_cell(stg_pool *p, uint64_t cat_off, uint32_t c, uint64_t row,
	     tab_cellv *out);
/* tab_cell of a ZTEXT cell (row lr of column c of h; encode_text.c). */
int zt_tab_cell(stg_pool *p, const char *table, stg_tablet_hdr *h, uint32_t c,
		uint64_t lr, tab_cellv *out);

/* ---- widen.c ------------------------------------------------------------ */

/* stg_append's check of a batch column: values given, a known `from` that
 * fits column c (GPMDB_MISUSE otherwise). */
int tab_batch_col_ok(stg_pool *p, const stg_cat_column *c,
		     const stg_col_batch *b, int from);
/* Copies n values of batch column b from row r0 to dst, a column of width
 * w in the pool (pool_memcpy_nodrain; STG_FROM_I32: widened on the way). */
void tab_copy_col(stg_pool *p, void *dst, const stg_col_batch *b, int from,
		  uint64_t r0, uint64_t n, size_t w);

/* ---- index.c ------------------------------------------------------------ */

/* Keeps the table's indexes exact around the CPU write paths (and the
 * GPU INSERT's reserve/finish): checks before anything is written, entry
 * changes after.  cols stay as they are until idx_after_append
 * (stg_append, stg_append_reserve/finish; from: stg_append_from's): keys
 * that rise above the tree are not copied into records. */
int idx_check_append_live(stg_pool *p, uint64_t cat_off,
			  const stg_col_batch *cols, const uint8_t *from,
			  uint64_t n);
int idx_after_append(stg_pool *p, uint64_t cat_off, uint64_t first, uint64_t n);
/* Bytes the index rebuilds of an append of n rows will allocate (their
 * new arenas), an estimate for alloc_prepare. */
uint64_t idx_append_bytes(stg_pool *p, uint64_t cat_off, uint64_t n);
int idx_before_update(stg_pool *p, uint64_t cat_off, int ncols,
		      const uint32_t *cols, const uint64_t *rowids, uint64_t n,
		      const stg_col_batch *vals);
int idx_after_update(stg_pool *p, uint64_t cat_off, int ncols,
		     const uint32_t *cols, const uint64_t *rowids, uint64_t n);
int idx_before_delete(stg_pool *p, uint64_t cat_off, const uint64_t *rowids,
		      uint64_t n);

/* mlog.c: a target allocated since the last savepoint needs no undo image
 * (nothing reaches it after a rollback): later mlog_undo calls for it
 * log nothing until the next savepoint. */
void mlog_fresh(stg_pool *p, uint64_t off, uint64_t len);
/* Bytes left in the metadata log. */
uint64_t mlog_space(const stg_pool *p);
/* Drops the sorted batches an append's check kept (index.c). */
void idx_presorted_clear(stg_pool *p);

/* ---- bits --------------------------------------------------------------- */

static inline bool bit_get(const uint32_t *w, uint64_t i)
{
	return (w[i >> 5] >> (i & 31)) & 1u;
}

#endif /* GPMDB_STORAGE_INTERNAL_H */
