/*
 * mlog.c - the metadata log (an undo log) and transactions.
 *
 * Every change to the root block, the catalog, tablet headers and
 * directories, the allocator bitmap and row counts is preceded by an UNDO
 * entry holding the old bytes, persisted before the target changes.  An
 * UPDATE or DELETE batch is preceded by an HCL_BATCH entry naming its HCL
 * segment (whose entries hold the old row data).  Frees wait for commit as
 * FREE entries, so space freed by a transaction is never reused before it
 * commits and a rollback has nothing to give back.
 *
 * Commit: (all data already persisted by the operations) append and
 * persist a COMMIT entry - the commit point - apply the FREE entries, then
 * truncate the log by bumping its generation.  Recovery (on open) walks
 * the chain of the current generation: with a COMMIT it redoes the frees
 * (idempotent), else it undoes every entry newest first; then truncates.
 * Both are idempotent, so a crash during recovery is recovered again.
 *
 * The chain: an entry counts when its gen matches the header, its
 * prev_seq is the previous entry's seq and its crc matches.  seq never
 * repeats within a generation, so after a savepoint rollback (which
 * invalidates the entry at the mark) no stale entry beyond the new tail
 * can link onto the chain.
 *
 * Each target is logged once per transaction (a DRAM set of the
 * (offset, length) pairs logged): the first before-image is the one a
 * crash needs.  Statement-level rollback (savepoints) needs the image at
 * the savepoint instead: a target logged before the savepoint gets a DRAM
 * copy when it first changes after it (sp_save), and rolling back merges
 * those copies with the log's entries newest first.  So a transaction of
 * many small INSERTs does not fill the log with row-count images.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "crashpoints.h"
#include "internal.h"

#define REC_BYTES ((uint64_t)sizeof(stg_log_rec))

static uint64_t align8(uint64_t x)
{
	return (x + 7) & ~7ull;
}

static stg_log_hdr *log_hdr(stg_pool *p)
{
	return (stg_log_hdr *)pool_at(p, p->sb.log_off);
}

static uint64_t log_start(const stg_pool *p)
{
	return p->sb.log_off + STG_LOG_HDR_SIZE;
}

static uint64_t log_end(const stg_pool *p)
{
	return p->sb.log_off + p->sb.log_size;
}

static uint32_t rec_crc(const stg_log_rec *r)
{
	stg_log_rec h = *r;
	uLong c;

	h.crc = 0;
	c = crc32(0L, (const Bytef *)&h, sizeof(h));
	return (uint32_t)crc32(c, (const Bytef *)(r + 1), r->len);
}

/* ---- Target sets ------------------------------------------------------ */

static void set_clear(mlog_set *s)
{
	if (s->n)
		memset(s->k, 0, s->cap * sizeof(*s->k));
	s->n = 0;
}

static size_t set_hash(uint64_t off, uint64_t len, size_t cap)
{
	uint64_t h =
	    (off * 0x9e3779b97f4a7c15ull) ^ (len * 0xc2b2ae3d27d4eb4full);

	return (size_t)(h ^ (h >> 29)) & (cap - 1);
}

static bool set_has(const mlog_set *s, uint64_t off, uint64_t len)
{
	size_t i;

	if (s->cap == 0)
		return false;
	for (i = set_hash(off, len, s->cap); s->k[i].off;
	     i = (i + 1) & (s->cap - 1))
		if (s->k[i].off == off && s->k[i].len == len)
			return true;
	return false;
}

static bool set_add(mlog_set *s, uint64_t off, uint64_t len)
{
	size_t i;

	if (s->n * 2 >= s->cap) {
		size_t ncap = s->cap ? s->cap * 2 : 256, j;
		mlog_key *nk = calloc(ncap, sizeof(*nk));

		if (nk == NULL)
			return false;
		for (j = 0; j < s->cap; j++) {
			if (!s->k[j].off)
				continue;
			for (i = set_hash(s->k[j].off, s->k[j].len, ncap);
			     nk[i].off; i = (i + 1) & (ncap - 1))
				;
			nk[i] = s->k[j];
		}
		free(s->k);
		s->k = nk;
		s->cap = ncap;
	}
	for (i = set_hash(off, len, s->cap); s->k[i].off;
	     i = (i + 1) & (s->cap - 1))
		;
	s->k[i].off = off;
	s->k[i].len = len;
	s->n++;
	return true;
}

/* The log set: failure to remember only costs log space. */
static void dd_clear(stg_pool *p)
{
	set_clear(&p->dd);
}

static bool dd_has(const stg_pool *p, uint64_t off, uint64_t len)
{
	return set_has(&p->dd, off, len);
}

static void dd_add(stg_pool *p, uint64_t off, uint64_t len)
{
	(void)set_add(&p->dd, off, len);
}

void mlog_fresh(stg_pool *p, uint64_t off, uint64_t len)
{
	dd_add(p, off, len);
	if (p->sp_active)
		(void)set_add(&p->spd, off, len);
}

uint64_t mlog_space(const stg_pool *p)
{
	uint64_t end = p->sb.log_off + p->sb.log_size;

	return p->log_tail < end ? end - p->log_tail : 0;
}

void mlog_sp_reset(stg_pool *p)
{
	for (size_t i = 0; i < p->spi_n; i++)
		free(p->spi[i].img);
	p->spi_n = 0;
	p->sp_active = false;
	set_clear(&p->spd);
}

/*
 * A target the log already holds (from earlier in the transaction) is
 * about to change after a savepoint: keep its current bytes in DRAM so
 * that a rollback to the savepoint can restore them.  A crash needs only
 * the log's older image, so statement-level rollback costs no log space
 * and a transaction of many statements is bounded by memory, not by the
 * log's size.
 */
static int sp_save(stg_pool *p, uint64_t off, uint64_t len)
{
	mlog_spimg *im;

	if (!p->sp_active || set_has(&p->spd, off, len))
		return GPMDB_OK;
	if (p->spi_n == p->spi_cap) {
		size_t ncap = p->spi_cap ? p->spi_cap * 2 : 64;
		mlog_spimg *n = realloc(p->spi, ncap * sizeof(*n));

		if (n == NULL)
			return pool_err(p, GPMDB_NOMEM,
					"out of memory for a savepoint image");
		p->spi = n;
		p->spi_cap = ncap;
	}
	im = &p->spi[p->spi_n];
	im->img = malloc(len);
	if (im->img == NULL || !set_add(&p->spd, off, len)) {
		free(im->img);
		return pool_err(p, GPMDB_NOMEM,
				"out of memory for a savepoint image");
	}
	im->off = off;
	im->len = len;
	im->ent = p->nents;
	memcpy(im->img, pool_at(p, off), len);
	p->spi_n++;
	return GPMDB_OK;
}

/* ---- Scanning ----------------------------------------------------------- */

int mlog_scan(stg_pool *p, uint64_t **offs, size_t *n)
{
	uint64_t pos = log_start(p), end = log_end(p), prev = 0, gen;
	uint64_t *v = NULL;
	size_t nv = 0, cap = 0;

	gen = log_hdr(p)->gen;
	while (pos + REC_BYTES <= end) {
		stg_log_rec *r = mlog_rec(p, pos);

		if (r->gen != gen || r->prev_seq != prev || r->seq <= prev ||
		    r->type < STG_LOG_UNDO || r->type > STG_LOG_COMMIT ||
		    r->len > end - pos - REC_BYTES || rec_crc(r) != r->crc)
			break;
		if (nv == cap) {
			uint64_t *nvp;

			cap = cap ? cap * 2 : 64;
			nvp = realloc(v, cap * sizeof(*v));
			if (nvp == NULL) {
				free(v);
				return pool_err(p, GPMDB_NOMEM,
						"out of memory");
			}
			v = nvp;
		}
		v[nv++] = pos;
		prev = r->seq;
		pos += align8(REC_BYTES + r->len);
	}
	*offs = v;
	*n = nv;
	return GPMDB_OK;
}

/* ---- Appending ---------------------------------------------------------- */

static int ents_push(stg_pool *p, uint64_t off)
{
	if (p->nents == p->cap_ents) {
		size_t ncap = p->cap_ents ? p->cap_ents * 2 : 64;
		uint64_t *ne = realloc(p->ents, ncap * sizeof(*ne));

		if (ne == NULL)
			return pool_err(p, GPMDB_NOMEM, "out of memory");
		p->ents = ne;
		p->cap_ents = ncap;
	}
	p->ents[p->nents++] = off;
	return GPMDB_OK;
}

/* Reserves room for an entry of len payload bytes; the header is filled
 * by finish_rec once the payload is in place. */
static int reserve_rec(stg_pool *p, uint32_t type, uint64_t len,
		       stg_log_rec **out)
{
	uint64_t need = align8(REC_BYTES + len);
	/* A COMMIT entry must always fit, or nothing could ever commit. */
	uint64_t keep = type == STG_LOG_COMMIT ? 0 : REC_BYTES;

	if (p->nents == p->cap_ents && ents_push(p, 0) == GPMDB_OK)
		p->nents--; /* grow now: finish_rec must not fail */
	if (p->nents == p->cap_ents)
		return pool_err(p, GPMDB_NOMEM, "out of memory");
	if (len > UINT32_MAX || p->log_tail + need + keep > log_end(p))
		return pool_err(p, GPMDB_FULL,
				"database or disk is full: the metadata log "
				"(%llu bytes) cannot hold this transaction; "
				"commit more often",
				(unsigned long long)p->sb.log_size);
	*out = mlog_rec(p, p->log_tail);
	(*out)->len = (uint32_t)len;
	return GPMDB_OK;
}

static void finish_rec(stg_pool *p, stg_log_rec *r, uint32_t type,
		       uint64_t *seq)
{
	uint64_t off = pool_off(p, r);

	r->type = type;
	r->gen = p->log_gen;
	r->seq = p->log_next_seq++;
	r->prev_seq = p->log_last_seq;
	r->pad = 0;
	r->crc = rec_crc(r);
	stg_crash_point("mlog.entry");
	pool_persist(p, r, REC_BYTES + r->len);
	stg_crash_point("mlog.persisted");
	p->log_last_seq = r->seq;
	p->log_tail += align8(REC_BYTES + r->len);
	p->ents[p->nents++] = off;
	if (seq)
		*seq = r->seq;
}

int mlog_append(stg_pool *p, uint32_t type, const void *payload, uint32_t len,
		uint64_t *seq)
{
	stg_log_rec *r;
	int rc = reserve_rec(p, type, len, &r);

	if (rc != GPMDB_OK)
		return rc;
	if (len)
		memcpy(r + 1, payload, len);
	finish_rec(p, r, type, seq);
	return GPMDB_OK;
}

int mlog_undo(stg_pool *p, uint64_t off, uint64_t len)
{
	stg_log_undo u = {off, len};
	stg_log_rec *r;
	int rc;

	if (len == 0)
		return GPMDB_OK;
	if (dd_has(p, off, len))
		return sp_save(p, off, len);
	if (off < p->sb.root_off || off + len > p->map_len)
		return pool_err(p, GPMDB_INTERNAL,
				"undo target 0x%llx+%llu outside the pool",
				(unsigned long long)off,
				(unsigned long long)len);
	rc = reserve_rec(p, STG_LOG_UNDO, sizeof(u) + len, &r);
	if (rc != GPMDB_OK)
		return rc;
	memcpy(r + 1, &u, sizeof(u));
	memcpy((char *)(r + 1) + sizeof(u), pool_at(p, off), len);
	finish_rec(p, r, STG_LOG_UNDO, NULL);
	dd_add(p, off, len);
	/* The entry is this target's image at the savepoint: no DRAM
	 * image is needed until the next savepoint. */
	if (p->sp_active)
		(void)set_add(&p->spd, off, len);
	return GPMDB_OK;
}

int mlog_write(stg_pool *p, uint64_t off, const void *src, uint64_t len)
{
	int rc = mlog_undo(p, off, len);

	if (rc != GPMDB_OK)
		return rc;
	memmove(pool_at(p, off), src, len);
	pool_persist(p, pool_at(p, off), len);
	return GPMDB_OK;
}

int mlog_set_u64(stg_pool *p, uint64_t off, uint64_t v)
{
	return mlog_write(p, off, &v, sizeof(v));
}

/* ---- Undo, truncation, recovery -------------------------------------- */

/*
 * Undoes entries [from, to) of offs: first every UNDO entry, newest
 * first, which brings the metadata back to its state at entry from (each
 * target's oldest image in the range wins); then the HCL batches, newest
 * first, against that metadata.  Two passes because a target is logged
 * once per transaction, so the metadata a batch saw may only come back
 * with an older entry.  DRAM savepoint images after nimg (taken when the
 * log held the entries before their ent) join the first pass in time
 * order.  Rows an HCL entry names that no longer exist
 * then (appended or created after from) need no undo.
 */
static int undo_range(stg_pool *p, const uint64_t *offs, size_t from, size_t to,
		      bool recovery, size_t nimg)
{
	size_t i, d = p->spi_n;
	int rc;

	stamp_all(p); /* bytes of any table may go back */
	for (i = to; i-- > from;) {
		stg_log_rec *r = mlog_rec(p, offs[i]);
		stg_log_undo u;

		/* DRAM savepoint images taken after entry i, newest first
		 * with the log's, so that each target ends at its oldest
		 * image after the mark. */
		for (; d > nimg && p->spi[d - 1].ent > i; d--) {
			mlog_spimg *im = &p->spi[d - 1];
			memcpy(pool_at(p, im->off), im->img, im->len);
			pool_persist(p, pool_at(p, im->off), im->len);
		}
		if (r->type != STG_LOG_UNDO)
			continue;
		if (r->len < sizeof(u))
			return pool_err(p, GPMDB_CORRUPT,
					"metadata log entry %llu is malformed",
					(unsigned long long)r->seq);
		memcpy(&u, r + 1, sizeof(u));
		if (u.len != r->len - sizeof(u) || u.off < p->sb.root_off ||
		    u.off > p->map_len || u.len > p->map_len - u.off)
			return pool_err(p, GPMDB_CORRUPT,
					"metadata log entry %llu targets "
					"0x%llx+%llu outside the pool",
					(unsigned long long)r->seq,
					(unsigned long long)u.off,
					(unsigned long long)u.len);
		memcpy(pool_at(p, u.off), (char *)(r + 1) + sizeof(u), u.len);
		pool_persist(p, pool_at(p, u.off), u.len);
		if (recovery) {
			p->recovered_entries++;
			stg_crash_point("recovery.undo");
		}
	}
	for (; d > nimg; d--) {
		mlog_spimg *im = &p->spi[d - 1];
		memcpy(pool_at(p, im->off), im->img, im->len);
		pool_persist(p, pool_at(p, im->off), im->len);
	}
	for (i = to; i-- > from;) {
		stg_log_rec *r = mlog_rec(p, offs[i]);
		stg_log_hcl h;

		if (r->type != STG_LOG_HCL_BATCH)
			continue;
		if (r->len != sizeof(h))
			return pool_err(p, GPMDB_CORRUPT,
					"metadata log entry %llu is malformed",
					(unsigned long long)r->seq);
		memcpy(&h, r + 1, sizeof(h));
		rc = tab_hcl_undo(p, &h, r->seq, recovery);
		if (rc != GPMDB_OK)
			return rc;
	}
	return GPMDB_OK;
}

/* Applies the FREE entries of a committed transaction (idempotent). */
static int apply_frees(stg_pool *p, const uint64_t *offs, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		stg_log_rec *r = mlog_rec(p, offs[i]);
		stg_log_extent e;

		if (r->type != STG_LOG_FREE)
			continue;
		if (r->len != sizeof(e))
			return pool_err(p, GPMDB_CORRUPT,
					"metadata log entry %llu is malformed",
					(unsigned long long)r->seq);
		memcpy(&e, r + 1, sizeof(e));
		if (!pool_range_ok(p, e.off, e.len))
			return pool_err(p, GPMDB_CORRUPT,
					"metadata log frees 0x%llx+%llu "
					"outside the pool",
					(unsigned long long)e.off,
					(unsigned long long)e.len);
		alloc_free_now(p, e.off, e.len);
	}
	return GPMDB_OK;
}

/* Empties the log: entries of the old generation are dead at once. */
static void truncate_log(stg_pool *p)
{
	stg_log_hdr *h = log_hdr(p);

	h->gen = p->log_gen + 1;
	pool_persist(p, &h->gen, sizeof(h->gen));
	p->log_gen = h->gen;
	p->log_tail = log_start(p);
	p->log_last_seq = 0;
	p->log_next_seq = 1;
	p->nents = 0;
	dd_clear(p);
}

int mlog_open(stg_pool *p, bool *recovered)
{
	stg_log_hdr *h = log_hdr(p);
	uint64_t *offs = NULL;
	size_t n = 0;
	bool committed = false;
	size_t i;
	int rc;

	*recovered = false;
	if (h->magic != STG_LOG_MAGIC || h->gen == 0)
		return pool_err(p, GPMDB_CORRUPT,
				"database disk image is malformed: %s: "
				"metadata log header is damaged",
				p->path);
	p->log_gen = h->gen;
	p->log_tail = log_start(p);
	p->log_last_seq = 0;
	p->log_next_seq = 1;
	rc = mlog_scan(p, &offs, &n);
	if (rc != GPMDB_OK || n == 0) {
		free(offs);
		return rc;
	}
	*recovered = true;
	zone_txn_begin(p); /* recovery's writes are changes too */
	for (i = 0; i < n; i++)
		if (mlog_rec(p, offs[i])->type == STG_LOG_COMMIT)
			committed = true;
	if (committed)
		rc = apply_frees(p, offs, n);
	else
		rc = undo_range(p, offs, 0, n, true, p->spi_n);
	free(offs);
	if (rc != GPMDB_OK)
		return rc;
	truncate_log(p);
	return GPMDB_OK;
}

bool mlog_busy(stg_pool *p)
{
	uint64_t *offs = NULL;
	size_t n = 0;
	stg_log_hdr *h = log_hdr(p);
	uint64_t gen = p->log_gen;
	bool busy;

	if (h->magic != STG_LOG_MAGIC)
		return true; /* damaged: mlog_open says so */
	p->log_gen = h->gen;
	busy = mlog_scan(p, &offs, &n) != GPMDB_OK || n > 0;
	p->log_gen = gen;
	free(offs);
	return busy;
}

/* ---- Transactions -------------------------------------------------------- */

int stg_begin(stg_pool *p)
{
	int rc;

	if (p == NULL)
		return GPMDB_MISUSE;
	pool_clear_err(p);
	if (p->readonly)
		return pool_err(p, GPMDB_READONLY,
				"attempt to write a readonly database: %s",
				p->path);
	if (p->broken)
		return pool_err(p, GPMDB_IOERR, "pool %s is no longer mapped",
				p->path);
	if (p->in_txn)
		return pool_err(p, GPMDB_MISUSE,
				"cannot start a transaction within a "
				"transaction");
	/* the write lock, and the commits of others since we looked */
	if ((rc = lock_write(p)) != GPMDB_OK)
		return rc;
	zone_txn_begin(p); /* its stamp (zones.c) */
	p->in_txn = true;
	idx_presorted_clear(p);
	p->ntrim = 0;
	p->nenc = 0;
	p->txn_bytes_persisted = 0;
	dd_clear(p);
	mlog_sp_reset(p);
	return GPMDB_OK;
}

bool stg_in_txn(const stg_pool *p)
{
	return p && p->in_txn;
}

static int finish_undo(stg_pool *p)
{
	p->alloc_hint = 0;
	return alloc_open(p); /* the bitmap went back: recount */
}

int stg_rollback(stg_pool *p)
{
	int rc;

	if (p == NULL)
		return GPMDB_MISUSE;
	pool_ahead_end(p); /* stg_grow_ahead's thread, if any */
	pool_clear_err(p);
	if (!p->in_txn)
		return pool_err(p, GPMDB_MISUSE,
				"cannot rollback - no transaction is active");
	if (p->broken)
		return pool_err(p, GPMDB_IOERR, "pool %s is no longer mapped",
				p->path);
	idx_presorted_clear(p);
	rc = undo_range(p, p->ents, 0, p->nents, false, p->spi_n);
	if (rc != GPMDB_OK)
		return rc;
	truncate_log(p);
	p->in_txn = false;
	mlog_sp_reset(p);
	if (wal_active(p))
		wal_rollback_done(p);
	rc = finish_undo(p);
	lock_write_end(p, false);
	return rc;
}

/* The commit in its three steps, each of which a caller may make durable
 * before the next (wal.c's big commit: a kill between its page writes
 * must not find the log emptied with the frees not applied, a leak, nor
 * the frees applied without the commit record, a freed extent in use). */
int mlog_commit_record(stg_pool *p)
{
	idx_presorted_clear(p);
	stg_crash_point("commit.begin");
	if (p->nents == 0)
		return GPMDB_OK;
	/* Every operation persisted its data before logging its metadata
	 * change, so the commit record is the only thing left. */
	return mlog_append(p, STG_LOG_COMMIT, NULL, 0, NULL);
}

int mlog_commit_frees(stg_pool *p)
{
	return apply_frees(p, p->ents, p->nents);
}

void mlog_commit_end(stg_pool *p)
{
	if (p->nents)
		truncate_log(p);
	p->in_txn = false;
	mlog_sp_reset(p);
}

/* (The crash points between the steps are here: wal.c's big commit has
 * its own, after each step is durable.) */
int mlog_commit_mem(stg_pool *p)
{
	int rc = mlog_commit_record(p);

	if (rc != GPMDB_OK)
		return rc;
	if (p->nents)
		stg_crash_point("commit.record");
	if ((rc = mlog_commit_frees(p)) != GPMDB_OK)
		return rc;
	if (p->nents)
		stg_crash_point("commit.free");
	mlog_commit_end(p);
	return GPMDB_OK;
}

void mlog_reload(stg_pool *p)
{
	stg_log_hdr *h = log_hdr(p);

	/* a new generation past both: entries left in the region never
	 * chain on */
	if (h->gen > p->log_gen)
		p->log_gen = h->gen;
	truncate_log(p);
	p->in_txn = false;
	mlog_sp_reset(p);
	(void)finish_undo(p);
}

int stg_commit(stg_pool *p)
{
	int rc;

	if (p == NULL)
		return GPMDB_MISUSE;
	pool_ahead_end(p); /* stg_grow_ahead's thread, if any */
	pool_clear_err(p);
	if (!p->in_txn)
		return pool_err(p, GPMDB_MISUSE,
				"cannot commit - no transaction is active");
	if (p->broken)
		return pool_err(p, GPMDB_IOERR, "pool %s is no longer mapped",
				p->path);
	/* heaps reserved past what they hold give their tail back: part of
	 * the transaction, so a failure here fails the commit */
	if ((rc = tab_trim_heaps(p)) != GPMDB_OK)
		return rc;
	/* auto_encode: the tables written, encoded (after the trim, which
	 * leaves encoded tablets alone) */
	if (p->nenc && !p->in_encode && (rc = enc_commit(p)) != GPMDB_OK)
		return rc;
	if (wal_active(p)) {
		/* msync mode: the commit is its writes to the disk */
		uint64_t t0 = pool_now_ns();

		rc = wal_commit(p);
		p->wt.persist_ns += pool_now_ns() - t0;
		if (rc == GPMDB_OK && p->wal.shadow)
			p->wal.shadow_commits++;
	} else {
		/* pmem and off: every operation persisted its data already */
		rc = mlog_commit_mem(p);
	}
	/* ended (committed, or rolled back by a failed commit): others may
	 * write; a commit that failed in place keeps the lock for
	 * stg_rollback */
	if (!p->in_txn)
		lock_write_end(p, rc == GPMDB_OK);
	return rc;
}

void mlog_mark(stg_pool *p, stg_mark *m)
{
	m->mlog_pos = p->log_tail;
	m->seq = p->log_last_seq;
}

int stg_savepoint(stg_pool *p, stg_mark *m)
{
	if (p == NULL || m == NULL)
		return GPMDB_MISUSE;
	pool_clear_err(p);
	if (!p->in_txn)
		return pool_err(p, GPMDB_MISUSE,
				"savepoint outside a transaction");
	mlog_mark(p, m);
	/* Targets changed from here on need their image at this point:
	 * in the log for those not logged yet, in DRAM for the others. */
	m->nimg = p->spi_n;
	set_clear(&p->spd);
	p->sp_active = true;
	return GPMDB_OK;
}

int stg_release(stg_pool *p, const stg_mark *m)
{
	if (p == NULL || m == NULL)
		return GPMDB_MISUSE;
	if (!p->in_txn || m->nimg > p->spi_n)
		return pool_err(p, GPMDB_MISUSE,
				"release of a savepoint outside a "
				"transaction");
	/* The images since the mark serve only a rollback to it. */
	for (size_t k = m->nimg; k < p->spi_n; k++)
		free(p->spi[k].img);
	p->spi_n = m->nimg;
	p->sp_active = false;
	set_clear(&p->spd);
	return GPMDB_OK;
}

int stg_rollback_to(stg_pool *p, const stg_mark *m)
{
	size_t i;
	int rc;

	if (p == NULL || m == NULL)
		return GPMDB_MISUSE;
	pool_clear_err(p);
	if (!p->in_txn)
		return pool_err(p, GPMDB_MISUSE,
				"rollback to a savepoint outside a "
				"transaction");
	pool_ahead_end(p);
	idx_presorted_clear(p);
	for (i = 0; i < p->nents && p->ents[i] < m->mlog_pos; i++)
		;
	if ((i < p->nents && p->ents[i] != m->mlog_pos) ||
	    (i == p->nents && m->mlog_pos != p->log_tail) ||
	    (i == 0 ? m->seq != 0 : mlog_rec(p, p->ents[i - 1])->seq != m->seq))
		return pool_err(p, GPMDB_MISUSE,
				"no such savepoint in this transaction");
	rc = undo_range(p, p->ents, i, p->nents, false, m->nimg);
	if (rc != GPMDB_OK)
		return rc;
	if (i < p->nents) {
		/* The entry at the mark would link onto the shortened
		 * chain (its prev_seq is the mark's seq): kill it. */
		stg_log_rec *r = mlog_rec(p, m->mlog_pos);

		r->gen = 0;
		pool_persist(p, &r->gen, sizeof(r->gen));
	}
	p->nents = i;
	p->log_tail = m->mlog_pos;
	p->log_last_seq = m->seq;
	/* Targets first logged after the mark lost their entries: forget
	 * them all (re-logging one costs only log space).  Images after the
	 * mark are spent; a further statement takes images again. */
	dd_clear(p);
	for (size_t k = m->nimg; k < p->spi_n; k++)
		free(p->spi[k].img);
	p->spi_n = m->nimg;
	set_clear(&p->spd);
	return finish_undo(p);
}
