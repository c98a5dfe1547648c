/*
 * backup.c - copies of the pool's committed state in a file: VACUUM INTO,
 * the shell's .backup, gpmdb_backup_*, checkpoints; full or incremental.
 *
 * A copy is the pool's bytes up to its size, taken from a committed
 * state.  Its superblock is the source's with an identity of its own: a
 * new uuid, and the source's uuid, zone table id and zone counter that
 * it holds (copy_* in layout.h).  A backup onto a file that is such a
 * copy of this database, unchanged since (its zone table's counter is
 * the one copied, no <copy>-wal), made while this zone table existed,
 * copies only the zones stamped after the counter it holds (zones.c):
 * the incremental backup.  Anything else that is a gpmdb file is overwritten
 * by a full copy, and the reason is kept (stg_backup_get_info).
 *
 * Deltas (delta.c, whose comment holds their invariants): an
 * incremental backup writes a changed zone whose line mask is valid for
 * the copy's counter and sets at most half its lines as an entry of a
 * delta after the image (the lines, not the zone), and a zone that has
 * an entry in a pending delta always into the new delta; the superblock
 * names the chain.  Onto a copy whose chain outgrew an eighth of the
 * image or whose pool changed size, the zones changed since the image's
 * own counter go whole and the chain is dropped.
 *
 * Order of writes: the destination's superblock first becomes an
 * "incomplete copy" marker (STG_SB_MAGIC_INCOMPLETE, refused at open with
 * its own message) and is fdatasynced; then the zones; fdatasync; then
 * the real superblock; fdatasync.  A copy cut short, by an error or a
 * kill, never opens as a database.  An incomplete incremental copy keeps
 * the counter it was updating from, so the next backup resumes it
 * incrementally (every zone it had begun to rewrite is stamped after
 * that counter, so it is rewritten again).
 *
 * Snapshots.  With the caller holding a read snapshot (VACUUM INTO, an
 * in-memory pool), one pass copies it.  Otherwise the backup takes them
 * itself: in msync mode one snapshot from begin to finish (writers go on
 * beside it); in pmem mode, where a snapshot keeps writers out, passes
 * copy without one (fuzzy: writers go on) and each next pass copies the
 * zones stamped since the previous pass began, until few remain; the
 * last pass runs under a snapshot, so the copy is that snapshot's state
 * and writers wait only for that pass (pre-copy, as live migrations do).
 * Writers wait for nothing else: the destination is allocated, marked
 * and fdatasynced outside snapshots, what the passes wrote is fdatasynced
 * before the last pass's snapshot is taken, and that snapshot is given
 * back as soon as the last pass's bytes are written, before the final
 * fdatasyncs (which held it for the whole copy's writeback before).
 *
 * Writes.  The pieces go to the destination with O_DIRECT where the file
 * system takes it (ext4, xfs): the disk reads them from the pool's
 * mapping, so a copy neither passes its bytes through the page cache (a
 * copy as large as the pool, written back only at the fdatasync) nor
 * spends CPU and memory bandwidth copying them.  A few threads of the
 * backup's own (4) keep a few writes in flight, at the lowest CPU
 * priority; more only contend (buffered writes to one file serialise on
 * its inode lock).  Where O_DIRECT is refused (tmpfs, unaligned sizes)
 * the pieces go through the page cache, each one's writeback started at
 * once (sync_file_range), so that the disk works while the copy runs.
 * GPMDB_BACKUP_IO=buffered forces the latter (tests), and
 * GPMDB_BACKUP_THREADS=n sets the threads (benchmarks).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "internal.h"

#define BK_PIECE       (16ull << 20) /* one pwrite */
#define BK_MAX_PASSES  4	     /* fuzzy passes before the last */
#define BK_FINAL_BYTES (8ull << 20)  /* few enough to copy under a snapshot */
#define BK_LOCK_CONN   (1ll << 62)   /* lock.c's CONN byte */
#define BK_THREADS     4	     /* writes in flight (above) */
#define BK_ALIGN       4096u	     /* O_DIRECT: offsets, sizes, addresses */

typedef struct {
	uint64_t off, end;
} bk_run;

/* A zone that goes to the delta: the lines to write */
typedef struct {
	uint64_t z;
	uint64_t mask[STG_LM_WORDS];
} bk_dz;

struct stg_backup {
	stg_pool *p;
	char *dest;
	int fd;
	int dfd;	  /* the same file with O_DIRECT, or -1 */
	bool direct;	  /* dfd takes the pieces (until it refuses one) */
	int threads;	  /* writes in flight */
	bool created;	  /* the file is ours: removed unless complete */
	bool held;	  /* the caller holds the snapshot */
	bool snap;	  /* this backup holds a snapshot now */
	bool precopy;	  /* passes without a snapshot first (pmem mode) */
	bool final;	  /* the current pass is the snapshot's */
	bool done;	  /* every pass done */
	bool incremental; /* zones since base_gen only */
	uint64_t base_gen;
	uint8_t uuid[16];  /* the copy's own */
	uint64_t size;	   /* the pool's size (this pass) */
	uint64_t dsize;	   /* bytes the destination holds */
	uint64_t pass_gen; /* the zone counter when this pass began */
	uint64_t copy_gen; /* the counter of the state copied (last pass) */
	uint64_t zt_id;	   /* the source's zone table */
	bk_run *runs;	   /* this pass: byte ranges to copy */
	size_t nruns, cap_runs, ri;
	uint64_t roff; /* progress in runs[ri] */
	uint64_t pass_bytes, pass_done, prev_bytes;
	uint8_t *copied; /* a bit per zone written */
	uint64_t copied_cap, copied_n, bytes_written; /* zones the bits hold */
	int passes;
	/* deltas (delta.c) */
	bool lines; /* zones may go to a delta by their lines */
	uint64_t chain_off, chain_len; /* the copy's pending deltas */
	uint64_t force_zone; /* zones from here on are written whole */
	uint8_t *inchain;    /* a bit per zone: an entry in a delta */
	uint64_t inchain_cap;
	bk_dz *dz; /* this pass: zones by their lines */
	size_t ndz, cap_dz, di;
	delta_writer dw;
	bool dw_on;
	uint64_t delta_bytes, zones_lines;
	char why[300]; /* why a full copy */
	int rc;	       /* the first error */
};

/* A failed copy: the error said (pool_err_io); finish removes it. */
static int bk_fail(stg_backup *b, const char *what, int err)
{
	if (b->rc == GPMDB_OK)
		b->rc = pool_err_io(b->p, err, what, b->dest);
	return b->rc;
}

static int bk_write(int fd, const char *src, uint64_t n, uint64_t off)
{
	return pool_pwrite_full(fd, src, (size_t)n, (off_t)off) ? errno : 0;
}

static uint32_t bk_crc(const stg_superblock *sb)
{
	return (uint32_t)crc32(0L, (const Bytef *)sb, STG_SB_CRC_OFF);
}

/* The zone table's counter in this view: the stamp of the last
 * transaction the state holds (0: no table). */
static uint64_t bk_gen(stg_pool *p)
{
	stg_zones z;

	stg_zones_info(p, &z);
	return z.gen;
}

/* The destination's superblock: complete (a database) or the marker. */
static int bk_write_sb(stg_backup *b, bool complete)
{
	stg_superblock sb = b->p->sb;

	memcpy(sb.magic, complete ? STG_SB_MAGIC : STG_SB_MAGIC_INCOMPLETE, 8);
	/* a copy of a version 1 pool is a version 2 pool without a zone
	 * table yet (layout.h): the upgrade */
	sb.version = STG_FORMAT_VERSION;
	memcpy(sb.uuid, b->uuid, 16);
	sb.copy_magic = STG_COPY_MAGIC;
	memcpy(sb.copy_src, b->p->sb.uuid, 16);
	sb.copy_zt_id = b->zt_id;
	sb.copy_gen =
	    complete ? b->copy_gen : (b->incremental ? b->base_gen : 0);
	sb.copy_time = (uint64_t)time(NULL);
	/* the marker: the chain it starts from; complete: with ours */
	sb.copy_delta_off = b->chain_len ? b->chain_off : 0;
	sb.copy_delta_len = b->chain_len;
	if (complete && b->chain_len)
		memcpy(sb.magic, STG_SB_MAGIC_DELTA, 8);
	sb.crc = bk_crc(&sb);
	return bk_write(b->fd, (const char *)&sb, sizeof(sb), 0);
}

/* A bit per zone in *bm (cap zones), grown to hold zones. */
static bool bk_bits_grow(uint8_t **bm, uint64_t *cap, uint64_t zones)
{
	uint64_t c = (zones + 8) * 2;
	uint8_t *n;

	if (zones + 8 <= *cap)
		return true;
	if ((n = realloc(*bm, c / 8)) == NULL)
		return false;
	memset(n + *cap / 8, 0, (c - *cap) / 8);
	*bm = n;
	*cap = c;
	return true;
}

static bool bk_bit(const uint8_t *bm, uint64_t cap, uint64_t z)
{
	return z < cap && (bm[z >> 3] >> (z & 7) & 1);
}

static int bk_chain_visit(void *ctx, const stg_delta_ent *e, const char *l)
{
	stg_backup *b = ctx;

	(void)l;
	if (!bk_bits_grow(&b->inchain, &b->inchain_cap, e->zone + 1))
		return ENOMEM;
	b->inchain[e->zone >> 3] |= (uint8_t)(1u << (e->zone & 7));
	return 0;
}

/* dest holds deltas (delta.c): kept, with the zones they name, or
 * dropped (too many, or the pool's size changed: the zones changed
 * since the image's own counter are written whole).  GPMDB_OK with
 * b->why set when the copy must be full. */
static int bk_chain(stg_backup *b, const stg_superblock *sb, uint64_t fsize,
		    const stg_zones *z)
{
	uint64_t off = sb->copy_delta_off, len = sb->copy_delta_len;
	uint64_t psize = pool_root(b->p)->pool_size;
	stg_delta_hdr h;
	int err;

	if (off == 0 || off > fsize || len > fsize - off)
		err = EINVAL;
	else
		err = delta_scan(b->fd, off, len, false, false, bk_chain_visit,
				 b, &h);
	if (err == EINVAL || (!err && h.image_size != off)) {
		snprintf(b->why, sizeof(b->why), "the deltas of %s are damaged",
			 b->dest);
		return GPMDB_OK;
	}
	if (err == ENOMEM)
		return pool_err(b->p, GPMDB_NOMEM, "out of memory");
	if (err)
		return bk_fail(b, "reading", err);
	if (len <= off / 8 && psize == off) {
		b->chain_off = off;
		b->chain_len = len;
		return GPMDB_OK;
	}
	/* dropped: from the image's own state, every zone whole */
	if (h.from_gen < z->since) {
		snprintf(b->why, sizeof(b->why),
			 "the changes since the image of %s are not tracked",
			 b->dest);
		return GPMDB_OK;
	}
	memset(b->inchain, 0, b->inchain_cap / 8);
	b->base_gen = h.from_gen;
	b->force_zone = off >> STG_ZONE_SHIFT; /* the deltas' bytes */
	b->lines = false;
	return GPMDB_OK;
}

/* Decides full or incremental from what dest holds (size bytes, its
 * superblock in *sb).  GPMDB_OK, or an error when it is no gpmdb file. */
static int bk_classify(stg_backup *b, uint64_t size)
{
	stg_pool *p = b->p;
	stg_superblock sb;
	stg_zones z;
	char wal[4200];
	struct stat st;
	size_t got;
	bool inc_marker, db, dl;
	int rc;

	if (size == 0) {
		snprintf(b->why, sizeof(b->why), "%s is a new file", b->dest);
		return GPMDB_OK;
	}
	if (size < STG_SB_SIZE ||
	    pool_pread_full(b->fd, &sb, sizeof(sb), 0, &got) != 0 ||
	    got != sizeof(sb))
		goto foreign;
	inc_marker = !memcmp(sb.magic, STG_SB_MAGIC_INCOMPLETE, 8);
	db = !memcmp(sb.magic, STG_SB_MAGIC, 8);
	dl = !memcmp(sb.magic, STG_SB_MAGIC_DELTA, 8);
	if ((!inc_marker && !db && !dl) || bk_crc(&sb) != sb.crc)
		goto foreign;
	memcpy(b->uuid, sb.uuid, 16); /* kept when incremental */
	stg_zones_info(p, &z);
	if (sb.copy_magic != STG_COPY_MAGIC ||
	    memcmp(sb.copy_src, p->sb.uuid, 16) != 0) {
		snprintf(b->why, sizeof(b->why),
			 "%s is not a copy of this database", b->dest);
		return GPMDB_OK;
	}
	if (inc_marker && sb.copy_gen == 0) {
		snprintf(b->why, sizeof(b->why),
			 "%s is a full copy that was cut short", b->dest);
		return GPMDB_OK;
	}
	if (!z.tracked) {
		snprintf(b->why, sizeof(b->why),
			 "the changes since %s was made are not tracked "
			 "(this database has format version %u, made by an "
			 "older gpmdb; a copy of it has version %u and "
			 "tracks them)",
			 b->dest, z.version, STG_FORMAT_VERSION);
		return GPMDB_OK;
	}
	if (!z.table || sb.copy_zt_id != z.id || sb.copy_gen < z.since) {
		snprintf(b->why, sizeof(b->why),
			 "the changes since %s was made are not tracked (the "
			 "zone table %s)",
			 b->dest,
			 !z.table		 ? "does not exist"
			 : sb.copy_zt_id != z.id ? "was made again since"
						 : "was made after it");
		return GPMDB_OK;
	}
	if (sb.copy_gen > z.gen || sb.version != p->sb.version ||
	    sb.root_off != p->sb.root_off || sb.log_off != p->sb.log_off ||
	    sb.data_off != p->sb.data_off ||
	    sb.chunk_size != p->sb.chunk_size) {
		snprintf(b->why, sizeof(b->why),
			 "%s is not an earlier state of this database",
			 b->dest);
		return GPMDB_OK;
	}
	if (dl) {
		/* deltas pending: never opened since (opening applies
		 * them), and its image's table may be stale (delta.c) */
		snprintf(wal, sizeof(wal), "%s-wal", b->dest);
		if (stat(wal, &st) == 0 && st.st_size > 0) {
			snprintf(b->why, sizeof(b->why),
				 "%s was changed since it was copied", b->dest);
			return GPMDB_OK;
		}
	}
	if (db) {
		/* its own table's counter moves when it is written to */
		stg_root r;
		uint64_t cnt = 0;

		snprintf(wal, sizeof(wal), "%s-wal", b->dest);
		if (pool_pread_full(b->fd, &r, sizeof(r), (off_t)sb.root_off,
				    &got) != 0 ||
		    got != sizeof(r) || r.zt_off == 0 ||
		    pool_pread_full(b->fd, &cnt, sizeof(cnt), (off_t)r.zt_off,
				    &got) != 0 ||
		    got != sizeof(cnt) || cnt != sb.copy_gen ||
		    (stat(wal, &st) == 0 && st.st_size > 0)) {
			snprintf(b->why, sizeof(b->why),
				 "%s was changed since it was copied", b->dest);
			return GPMDB_OK;
		}
	}
	b->incremental = true;
	b->base_gen = sb.copy_gen;
	b->lines = true;
	b->why[0] = '\0';
	if ((dl || inc_marker) && sb.copy_delta_len) {
		rc = bk_chain(b, &sb, size, &z);
		if (rc != GPMDB_OK || b->why[0]) {
			b->incremental = b->lines = false;
			b->chain_off = b->chain_len = 0;
			return rc;
		}
	}
	return GPMDB_OK;
foreign:
	return pool_err(p, GPMDB_ERROR,
			"%s exists and is not a gpmdb database or copy: not "
			"overwritten",
			b->dest);
}

static int bk_add_run(stg_backup *b, uint64_t off, uint64_t end)
{
	if (b->nruns && b->runs[b->nruns - 1].end == off) {
		b->runs[b->nruns - 1].end = end;
		return GPMDB_OK;
	}
	if (b->nruns == b->cap_runs) {
		size_t cap = b->cap_runs ? b->cap_runs * 2 : 64;
		bk_run *r = realloc(b->runs, cap * sizeof(*r));

		if (r == NULL)
			return pool_err(b->p, GPMDB_NOMEM, "out of memory");
		b->runs = r;
		b->cap_runs = cap;
	}
	b->runs[b->nruns].off = off;
	b->runs[b->nruns].end = end;
	b->nruns++;
	return GPMDB_OK;
}

static int bk_add_dz(stg_backup *b, uint64_t z, const uint64_t *mask)
{
	if (b->ndz == b->cap_dz) {
		size_t cap = b->cap_dz ? b->cap_dz * 2 : 64;
		bk_dz *d = realloc(b->dz, cap * sizeof(*d));

		if (d == NULL)
			return pool_err(b->p, GPMDB_NOMEM, "out of memory");
		b->dz = d;
		b->cap_dz = cap;
	}
	b->dz[b->ndz].z = z;
	memcpy(b->dz[b->ndz].mask, mask, sizeof(b->dz[0].mask));
	b->ndz++;
	b->pass_bytes += sizeof(stg_delta_ent) +
			 (uint64_t)delta_popcount(mask) * STG_LINE_SIZE;
	return GPMDB_OK;
}

/* Zone z goes to the delta by its lines when its mask is valid for
 * changes after since (zones.c: restarted at since + 1 or before, and
 * its stamp is the last marker's) and sets at most half of them. */
static bool bk_lines_of(char *lm, uint64_t ln, const uint64_t *zt, uint64_t z,
			uint64_t since, uint64_t *mask)
{
	const stg_lm_zone *m;

	if (lm == NULL || z >= ln)
		return false;
	m = zone_lm_rec(lm, z);
	if (__atomic_load_n(&m->last, __ATOMIC_ACQUIRE) !=
		__atomic_load_n(&zt[z], __ATOMIC_RELAXED) ||
	    __atomic_load_n(&m->since, __ATOMIC_RELAXED) > since + 1)
		return false;
	for (unsigned w = 0; w < STG_LM_WORDS; w++)
		mask[w] = __atomic_load_n(&m->mask[w], __ATOMIC_RELAXED);
	return delta_popcount(mask) * 2 <= STG_ZONE_LINES;
}

/* The next pass: zones stamped at or after since (all: every zone),
 * from the state the pool is in now (the caller looked under a
 * snapshot); the destination grown to the pool's size.  A zone goes
 * whole into the image, or by its lines (or whole, if it has an entry
 * in a delta already: delta.c, invariant 2) into the delta. */
static int bk_plan(stg_backup *b, bool all, uint64_t since)
{
	stg_pool *p = b->p;
	const stg_root *r = pool_root(p);
	uint64_t n, ln = 0, zones, tlo = 0, thi = 0, llo = 1, lhi = 0, *zt;
	uint64_t mask[STG_LM_WORDS];
	char *lm = NULL;
	int rc = GPMDB_OK;

	b->size = r->pool_size < p->map_len ? r->pool_size : p->map_len;
	zones = zone_count(b->size);
	zt = zone_table(p, &n);
	if (zt) {
		/* the table's own zones: its stamps describe the copy */
		tlo = r->zt_off >> STG_ZONE_SHIFT;
		thi = (r->zt_off + (n + 1) * 8 - 1) >> STG_ZONE_SHIFT;
		b->zt_id = r->zt_id;
		zt++; /* the stamps */
		/* so are the line masks' (their writes stamp nothing) */
		if ((lm = zone_lines(p, &ln)) != NULL) {
			/* the records of the pool's zones: those of zones
			 * past its end are as made until it grows */
			llo = r->lm_off >> STG_ZONE_SHIFT;
			lhi = (r->lm_off +
			       zone_lm_bytes(ln < zones ? ln : zones) - 1) >>
			      STG_ZONE_SHIFT;
		}
	} else {
		b->zt_id = 0;
	}
	if (!b->lines)
		lm = NULL;
	/* the deltas lie past the image: a pool that grows into them
	 * (pmem mode, between passes) cannot be copied this way */
	if ((b->chain_len && b->size != b->chain_off) ||
	    (b->dw_on && b->size > b->dw.start))
		return pool_err(p, GPMDB_BUSY,
				"the database grew while it was copied onto "
				"%s, whose deltas follow the image: take the "
				"backup again (it writes the changed zones "
				"whole)",
				b->dest);
	if (!bk_bits_grow(&b->copied, &b->copied_cap, zones) ||
	    !bk_bits_grow(&b->inchain, &b->inchain_cap, zones))
		return pool_err(p, GPMDB_NOMEM, "out of memory");
	b->nruns = b->ri = 0;
	b->ndz = b->di = 0;
	b->roff = 0;
	b->prev_bytes = b->pass_bytes;
	b->pass_bytes = b->pass_done = 0;
	/* a later pass after no transaction at all (the counter moves at
	 * every one's start): the last pass's bytes are the state, and the
	 * zones copied every pass (zone 0, the table's and the masks': 2.4
	 * MB of a 1 GB pool) need not go again */
	if (!all && b->passes > 0 && bk_gen(p) == since)
		zones = 0;
	for (uint64_t z = 0; z < zones && rc == GPMDB_OK; z++) {
		uint64_t lo = z << STG_ZONE_SHIFT, hi = lo + STG_ZONE_SIZE;
		bool forced = all || zt == NULL || z >= n || z == 0 ||
			      (z >= tlo && z <= thi) ||
			      (z >= llo && z <= lhi) || z >= b->force_zone;

		if (!forced &&
		    __atomic_load_n(&zt[z], __ATOMIC_RELAXED) <= since)
			continue;
		if (hi > b->size)
			hi = b->size;
		if (!forced && hi == lo + STG_ZONE_SIZE &&
		    bk_lines_of(lm, ln, zt, z, since, mask)) {
			rc = bk_add_dz(b, z, mask);
			continue;
		}
		if (bk_bit(b->inchain, b->inchain_cap, z)) {
			/* every line, after the older entries */
			uint64_t nl = (hi - lo) >> STG_LINE_SHIFT;

			memset(mask, 0, sizeof(mask));
			for (uint64_t l = 0; l < nl; l++)
				mask[l >> 6] |= 1ull << (l & 63);
			rc = bk_add_dz(b, z, mask);
			continue;
		}
		if (lo < STG_SB_SIZE)
			lo = STG_SB_SIZE; /* the superblock last */
		if (lo < hi) {
			rc = bk_add_run(b, lo, hi);
			b->pass_bytes += hi - lo;
		}
	}
	if (rc != GPMDB_OK)
		return rc;
	b->pass_gen = b->copy_gen = bk_gen(p);
	b->passes++;
	return GPMDB_OK;
}

/* The destination grown to the pool's size: a full disk is found here,
 * before any zone is written (no snapshot needed: writers go on). */
static int bk_alloc(stg_backup *b)
{
	int err;

	if (b->dsize < b->size) {
		err = posix_fallocate(b->fd, (off_t)b->dsize,
				      (off_t)(b->size - b->dsize));
		if (err)
			return bk_fail(b, "allocating", err);
		b->dsize = b->size;
	}
	return GPMDB_OK;
}

/* One piece of the pool to the destination: O_DIRECT when it is aligned
 * and the file system takes it, else through the page cache with its
 * writeback started now.  0 or an errno. */
static int bk_out(stg_backup *b, const char *src, uint64_t n, uint64_t off)
{
	int err;

	if (__atomic_load_n(&b->direct, __ATOMIC_RELAXED) &&
	    off % BK_ALIGN == 0 && n % BK_ALIGN == 0 &&
	    (uintptr_t)src % BK_ALIGN == 0) {
		err = bk_write(b->dfd, src, n, off);
		if (err != EINVAL)
			return err;
		/* refused after all (an alignment the file system wants):
		 * the page cache from here on */
		__atomic_store_n(&b->direct, false, __ATOMIC_RELAXED);
	}
	err = bk_write(b->fd, src, n, off);
	if (err == 0)
		(void)sync_file_range(b->fd, (off_t)off, (off_t)n,
				      SYNC_FILE_RANGE_WRITE);
	return err;
}

static int bk_piece(stg_backup *b, uint64_t off, uint64_t n)
{
	return bk_out(b, (const char *)pool_at(b->p, off), n, off);
}

/* The delta's buffer to the destination (delta.c's writer). */
static int bk_dw_out(void *ctx, const char *buf, uint64_t n, uint64_t off)
{
	return bk_out(ctx, buf, n, off);
}

/* This pass's zones by their lines, up to want bytes, into the delta
 * (begun after the image, or after the copy's pending deltas). */
static int bk_step_lines(stg_backup *b, uint64_t want, uint64_t *got)
{
	int err;

	if (!b->dw_on) {
		uint64_t start =
		    b->chain_len ? b->chain_off + b->chain_len : b->size;

		err =
		    dw_begin(&b->dw, start, b->base_gen, b->size, bk_dw_out, b);
		if (err)
			return bk_fail(b, "writing", err);
		b->dw_on = true;
	}
	/* this step's zones, written as one batch */
	size_t i0 = b->di, ns = 0;
	uint64_t sum = *got;
	while (i0 + ns < b->ndz && sum < want)
		sum += sizeof(stg_delta_ent) +
		       (uint64_t)delta_popcount(b->dz[i0 + ns++].mask) *
			   STG_LINE_SIZE;
	dw_src *src = malloc((ns ? ns : 1) * sizeof(*src));
	if (src == NULL)
		return b->rc = pool_err(b->p, GPMDB_NOMEM, "out of memory");
	for (size_t k = 0; k < ns; k++) {
		const bk_dz *d = &b->dz[i0 + k];

		src[k].zone = d->z;
		src[k].mask = d->mask;
		src[k].zbase =
		    (const char *)pool_at(b->p, d->z << STG_ZONE_SHIFT);
	}
	err = dw_add_many(&b->dw, src, ns, b->threads);
	free(src);
	if (err)
		return bk_fail(b, "writing", err);
	while (b->di < i0 + ns) {
		const bk_dz *d = &b->dz[b->di++];
		uint64_t n = sizeof(stg_delta_ent) +
			     (uint64_t)delta_popcount(d->mask) * STG_LINE_SIZE;

		b->inchain[d->z >> 3] |= (uint8_t)(1u << (d->z & 7));
		if (!bk_bit(b->copied, b->copied_cap, d->z)) {
			b->copied[d->z >> 3] |= (uint8_t)(1u << (d->z & 7));
			b->copied_n++;
		}
		b->zones_lines++;
		b->delta_bytes += n;
		b->bytes_written += n;
		b->pass_done += n;
		*got += n;
	}
	return GPMDB_OK;
}

/* The descriptor for O_DIRECT writes (the file fd has open), or -1 where
 * it cannot be had: the pieces then go through the page cache. */
static int bk_open_direct(int fd)
{
	const char *io = getenv("GPMDB_BACKUP_IO");
	char self[64];

	if (io && !strcmp(io, "buffered"))
		return -1;
	snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
	return open(self, O_WRONLY | O_DIRECT | O_CLOEXEC);
}

/* One step's pieces, written by threads of the backup's own (dw_run). */
typedef struct {
	stg_backup *b;
	const uint64_t *po, *pn;
} bk_io;

static int bk_io_piece(void *ctx, size_t i)
{
	const bk_io *io = ctx;

	return bk_piece(io->b, io->po[i], io->pn[i]);
}

/* Writes np pieces on b->threads threads; 0 or the first errno. */
static int bk_write_pieces(stg_backup *b, const uint64_t *po,
			   const uint64_t *pn, size_t np)
{
	bk_io io = {b, po, pn};

	return dw_run(b->threads, np, 1, bk_io_piece, &io);
}

static int bk_threads(void)
{
	const char *e = getenv("GPMDB_BACKUP_THREADS");
	int n = e ? atoi(e) : BK_THREADS;

	return n < 1 ? 1 : n > 256 ? 256 : n;
}

static int bk_snap(stg_backup *b)
{
	int rc;

	if (b->held || b->snap)
		return GPMDB_OK;
	rc = stg_read_begin(b->p);
	if (rc == GPMDB_OK)
		b->snap = true;
	return rc;
}

static void bk_unsnap(stg_backup *b)
{
	if (b->snap)
		stg_read_end(b->p);
	b->snap = false;
}

/* The last pass written: the copy holds the snapshot's state, so
 * writers need not wait for the fdatasyncs of finish. */
static void bk_last_written(stg_backup *b)
{
	b->done = true;
	bk_unsnap(b);
}

/* After a pass: the next one, or done. */
static int bk_next_pass(stg_backup *b)
{
	uint64_t since = b->pass_gen;
	int rc;

	if (b->final) {
		bk_last_written(b);
		return GPMDB_OK;
	}
	/* what the passes wrote reaches the disk before a snapshot is
	 * taken, so that the last pass's writers wait for little; after no
	 * transaction at all the last pass copies nothing (bk_plan), and
	 * finish's fdatasync is enough (a transaction that begins before
	 * the snapshot only makes its writers wait for more) */
	if (bk_gen(b->p) != since && fdatasync(b->fd) != 0)
		return bk_fail(b, "writing", errno);
	rc = bk_snap(b);
	if (rc == GPMDB_OK)
		rc = bk_plan(b, false, since);
	if (rc != GPMDB_OK)
		return b->rc = rc;
	/* few zones left, or passes that do not shrink: under the snapshot */
	if (b->pass_bytes <= BK_FINAL_BYTES || b->passes > BK_MAX_PASSES ||
	    b->pass_bytes * 2 > b->prev_bytes) {
		b->final = true;
		return bk_alloc(b);
	}
	bk_unsnap(b);
	return bk_alloc(b);
}

int stg_backup_begin(stg_pool *p, const char *dest, const stg_backup_opts *o,
		     stg_backup **out)
{
	stg_backup_opts none = {0};
	stg_backup *b;
	struct stat st, pst;
	struct flock fl;
	int fd, err, rc;

	if (out)
		*out = NULL;
	if (p == NULL || dest == NULL || !*dest || out == NULL)
		return GPMDB_MISUSE;
	if (o == NULL)
		o = &none;
	pool_clear_err(p);
	if (p->broken)
		return pool_err(p, GPMDB_IOERR, "pool %s is no longer mapped",
				p->path);
	if (p->in_txn)
		return pool_err(p, GPMDB_ERROR,
				"cannot VACUUM from within a transaction");
	b = calloc(1, sizeof(*b));
	if (b == NULL || (b->dest = strdup(dest)) == NULL) {
		free(b);
		return pool_err(p, GPMDB_NOMEM, "out of memory");
	}
	b->p = p;
	b->fd = b->dfd = -1;
	b->force_zone = UINT64_MAX;
	b->threads = bk_threads();
	b->held = o->held || !p->lk.on;
	fd = open(dest,
		  O_RDWR | O_CREAT | O_CLOEXEC | (o->create_only ? O_EXCL : 0),
		  0644);
	if (fd < 0) {
		err = errno;
		free(b->dest);
		free(b);
		if (err == EEXIST)
			return pool_err(p, GPMDB_ERROR,
					"output file already exists: %s", dest);
		return pool_err(p, GPMDB_CANTOPEN,
				"unable to open the output file %s: %s", dest,
				strerror(err));
	}
	b->fd = fd;
	if (fstat(fd, &st) != 0) {
		bk_fail(b, "reading", errno);
		return stg_backup_finish(b);
	}
	b->created = st.st_size == 0;
	if (!S_ISREG(st.st_mode)) {
		b->created = false;
		pool_err(p, GPMDB_CANTOPEN,
			 "unable to write the output file %s: not a regular "
			 "file",
			 dest);
		b->rc = p->errcode;
		return stg_backup_finish(b);
	}
	if (p->fd >= 0 && fstat(p->fd, &pst) == 0 && pst.st_dev == st.st_dev &&
	    pst.st_ino == st.st_ino) {
		b->created = false;
		b->rc = pool_err(p, GPMDB_ERROR,
				 "cannot back up %s onto itself", p->path);
		return stg_backup_finish(b);
	}
	/* nobody may have it open while it is rewritten: its openers wait */
	memset(&fl, 0, sizeof(fl));
	fl.l_type = F_WRLCK;
	fl.l_whence = SEEK_SET;
	fl.l_start = (off_t)BK_LOCK_CONN;
	fl.l_len = 1;
	if (fcntl(fd, F_OFD_SETLK, &fl) != 0) {
		b->created = false;
		b->rc = pool_err(p, GPMDB_BUSY,
				 "database is locked: %s is open by another "
				 "connection; not overwritten",
				 dest);
		return stg_backup_finish(b);
	}
	b->dsize = (uint64_t)st.st_size;
	rc = bk_snap(b);
	if (rc == GPMDB_OK)
		rc = bk_classify(b, b->dsize);
	if (rc == GPMDB_OK && o->full && b->incremental) {
		b->incremental = b->lines = false;
		b->chain_off = b->chain_len = 0;
		snprintf(b->why, sizeof(b->why), "a full copy was asked for");
	}
	if (rc != GPMDB_OK) {
		b->created = false;
		b->rc = rc;
		return stg_backup_finish(b);
	}
	if (!b->incremental) {
		ssize_t n = getrandom(b->uuid, 16, GRND_NONBLOCK);

		if (n != 16) { /* time and address still tell copies apart */
			uint64_t t = (uint64_t)time(NULL), a = (uint64_t)b;

			memcpy(b->uuid, &t, 8);
			memcpy(b->uuid + 8, &a, 8);
		}
		b->uuid[6] = (uint8_t)((b->uuid[6] & 0x0f) | 0x40);
		b->uuid[8] = (uint8_t)((b->uuid[8] & 0x3f) | 0x80);
		if (!b->created) {
			char wal[4200];

			/* the old database's log would replay onto the copy */
			snprintf(wal, sizeof(wal), "%s-wal", dest);
			if (unlink(wal) != 0 && errno != ENOENT) {
				bk_fail(b, "removing the old log of", errno);
				return stg_backup_finish(b);
			}
		}
	}
	rc = bk_plan(b, !b->incremental, b->base_gen);
	if (rc != GPMDB_OK) {
		b->rc = rc;
		return stg_backup_finish(b);
	}
	/* the masks describe the changes from here on (zones.c) */
	zone_lines_restart(p);
	/* pmem mode: the first passes without a snapshot (writers go on),
	 * and the destination made ready without one too */
	b->precopy = !b->held && stg_pool_durability(p) != STG_DUR_MSYNC;
	if (b->precopy && b->pass_bytes > BK_FINAL_BYTES)
		bk_unsnap(b);
	else
		b->final = true;
	err = 0;
	rc = bk_alloc(b);
	if (rc == GPMDB_OK && (err = bk_write_sb(b, false)) == 0 &&
	    fdatasync(fd) != 0)
		err = errno;
	if (rc == GPMDB_OK && err)
		rc = bk_fail(b, "writing", err);
	if (rc != GPMDB_OK) {
		b->rc = rc;
		return stg_backup_finish(b);
	}
	b->dfd = bk_open_direct(fd);
	b->direct = b->dfd >= 0;
	*out = b;
	return GPMDB_OK;
}

int stg_backup_step(stg_backup *b, long long npages)
{
	uint64_t want, got = 0, *po, *pn;
	size_t np = 0, cap = 0;
	int err = 0, rc;

	if (b == NULL)
		return GPMDB_MISUSE;
	if (b->rc != GPMDB_OK)
		return b->rc;
	want = npages < 0 ? UINT64_MAX : (uint64_t)npages * STG_BACKUP_PAGE;
	while (!b->done && got < want) {
		if (b->ri >= b->nruns && b->di >= b->ndz) {
			rc = bk_next_pass(b);
			if (rc != GPMDB_OK)
				return rc;
			continue;
		}
		if (b->ri >= b->nruns) {
			rc = bk_step_lines(b, want, &got);
			if (rc != GPMDB_OK)
				return rc;
			continue;
		}
		/* this pass's pieces up to want, then written on all cores */
		np = 0;
		po = pn = NULL;
		cap = 0;
		while (b->ri < b->nruns && got < want) {
			bk_run *r = &b->runs[b->ri];
			uint64_t off = r->off + b->roff, n = r->end - off;

			if (n > BK_PIECE)
				n = BK_PIECE;
			if (n > want - got)
				n = want - got;
			if (np == cap) {
				cap = cap ? cap * 2 : 64;
				po = realloc(po, cap * 8);
				pn = realloc(pn, cap * 8);
				if (po == NULL || pn == NULL) {
					free(po);
					free(pn);
					return b->rc =
						   pool_err(b->p, GPMDB_NOMEM,
							    "out of memory");
				}
			}
			po[np] = off;
			pn[np++] = n;
			got += n;
			b->roff += n;
			if (r->off + b->roff >= r->end) {
				b->ri++;
				b->roff = 0;
			}
		}
		err = bk_write_pieces(b, po, pn, np);
		for (size_t i = 0; i < np && !err; i++) {
			uint64_t z = po[i] >> STG_ZONE_SHIFT,
				 z1 = (po[i] + pn[i] - 1) >> STG_ZONE_SHIFT;

			for (; z <= z1; z++)
				if (!(b->copied[z >> 3] & (1u << (z & 7)))) {
					b->copied[z >> 3] |=
					    (uint8_t)(1u << (z & 7));
					b->copied_n++;
				}
			b->bytes_written += pn[i];
			b->pass_done += pn[i];
		}
		free(po);
		free(pn);
		if (err)
			return bk_fail(b, "writing", err);
	}
	if (!b->done && b->ri >= b->nruns && b->di >= b->ndz && b->final)
		bk_last_written(b);
	return b->done ? GPMDB_DONE : GPMDB_OK;
}

uint64_t stg_backup_remaining(const stg_backup *b)
{
	if (b == NULL || b->done)
		return 0;
	return (b->pass_bytes - b->pass_done + STG_BACKUP_PAGE - 1) /
	       STG_BACKUP_PAGE;
}

uint64_t stg_backup_pagecount(const stg_backup *b)
{
	return b ? (b->size + STG_BACKUP_PAGE - 1) / STG_BACKUP_PAGE : 0;
}

void stg_backup_get_info(const stg_backup *b, stg_backup_info *out)
{
	memset(out, 0, sizeof(*out));
	if (b == NULL)
		return;
	out->incremental = b->incremental;
	out->zones = zone_count(b->size);
	out->zones_copied = b->copied_n;
	out->bytes_written = b->bytes_written;
	out->passes = b->passes;
	out->zone_size = STG_ZONE_SIZE;
	out->zones_lines = b->zones_lines;
	out->delta_bytes = b->delta_bytes;
	snprintf(out->why_full, sizeof(out->why_full), "%s", b->why);
}

int stg_backup_finish(stg_backup *b)
{
	bool complete;
	int rc, err = 0;

	if (b == NULL)
		return GPMDB_OK;
	complete = b->rc == GPMDB_OK && b->done;
	if (complete && b->dw_on && b->dw.entries) {
		/* the delta's rest and its header page (delta.c) */
		uint64_t end = 0;

		err = dw_end(&b->dw, b->copy_gen, &end);
		if (!err) {
			b->bytes_written += b->dw.bytes - b->dw.len;
			b->chain_off =
			    b->chain_len ? b->chain_off : b->dw.start;
			b->chain_len = end - b->chain_off;
		}
	}
	if (complete) {
		/* the file's end: the image's, or the deltas' */
		uint64_t fend =
		    b->chain_len ? b->chain_off + b->chain_len : b->size;
		struct stat st;

		/* the superblock last: from here on the copy is a database */
		if (!err && fdatasync(b->fd) != 0)
			err = errno;
		if (!err && fstat(b->fd, &st) == 0 &&
		    (uint64_t)st.st_size > fend &&
		    ftruncate(b->fd, (off_t)fend) != 0)
			err = errno;
		if (!err)
			err = bk_write_sb(b, true);
		if (!err && fdatasync(b->fd) != 0)
			err = errno;
		if (err)
			bk_fail(b, "writing", err);
	}
	bk_unsnap(b);
	if (b->dfd >= 0)
		close(b->dfd);
	if (b->fd >= 0 && close(b->fd) != 0 && complete && b->rc == GPMDB_OK)
		bk_fail(b, "closing", errno);
	if (complete && b->rc == GPMDB_OK && b->created &&
	    pool_fsync_dir(b->dest) != 0)
		bk_fail(b, "syncing the directory of", errno);
	/* a file we made that is no copy: gone; an old copy overwritten in
	 * part keeps its "incomplete" superblock (refused at open; the next
	 * backup rewrites it) */
	if ((b->rc != GPMDB_OK || !b->done) && b->created)
		unlink(b->dest);
	rc = b->rc;
	if (b->dw_on)
		dw_free(&b->dw);
	free(b->runs);
	free(b->dz);
	free(b->inchain);
	free(b->copied);
	free(b->dest);
	free(b);
	return rc;
}

int stg_backup_to(stg_pool *p, const char *dest, uint64_t *bytes)
{
	stg_backup_opts o = {.create_only = true, .held = true};
	stg_backup *b = NULL;
	uint64_t size;
	int rc;

	if (bytes)
		*bytes = 0;
	rc = stg_backup_begin(p, dest, &o, &b);
	if (rc != GPMDB_OK)
		return rc;
	size = b->size;
	rc = stg_backup_step(b, -1);
	if (rc == GPMDB_DONE)
		rc = GPMDB_OK;
	if (rc == GPMDB_OK)
		rc = stg_backup_finish(b);
	else
		(void)stg_backup_finish(b);
	if (rc == GPMDB_OK && bytes)
		*bytes = size;
	return rc;
}
