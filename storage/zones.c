/*
 * zones.c - the dirty-zone table: which 64 KiB zones of the pool changed
 * since a given transaction (incremental backups and checkpoints), and
 * which 64-byte lines of them (line masks).
 *
 * The table is an extent of the pool (root.zt_off): a counter, then one
 * uint64_t stamp per zone.  Every write transaction (and every recovery)
 * takes the next value of the counter as its stamp, and stamps the zones
 * it writes with it.  The counter only grows (pmem mode never undoes it;
 * an msync transaction rolled back takes its stamps with it), so
 * "changed since a copy of the state whose counter was G" is "stamp > G"
 * for any number of copies, without clearing anything.  (The metadata
 * log's generation cannot serve: msync mode never writes the log region
 * to the file, so other connections do not see it move.)  The table lives
 * in the pool so that it is exactly as durable as the data it describes:
 * pmem mode persists a stamp with the write it describes, msync mode
 * commits the stamp's page in the same frame as the data, and a
 * transaction rolled back in msync mode takes its stamps with it.
 *
 * Writers mark in pool_flush and pool_memcpy_nodrain, which every CPU
 * write of the pool goes through (tablets, B+-trees, catalog, metadata
 * log, allocator, recovery); GPU kernels that store into the mapping are
 * marked by the host (hcl_gpu.c: the rows reserved before an INSERT's
 * kernels, the rows named by an UPDATE/DELETE's HCL entries after its
 * kernels, before the commit).  A stamp is written only when it changes
 * (once per zone per transaction), so marking costs a load per flush.
 *
 * The table is made by the first backup (stg_zones_ensure, a small
 * transaction of the backup's source connection) and grown by later
 * ones when the pool outgrew it; zones past its end count as changed.
 * zt_since is its counter when made: a copy made before is copied
 * in full.  zt_id is random per table: a copy names the table whose
 * stamps describe it.
 *
 * Line masks.  Beside the table, an extent of its own (root.lm_off)
 * holds per zone the 64-byte lines changed (stg_lm_zone: 1024 bits,
 * since, last), so that a zone changed in a few lines is copied by its
 * lines (delta.c) instead of whole.  zone_mark ORs the lines into the
 * mask as it stamps the zone, persisted the same way.  The mask holds
 * every change of stamp >= since; it is valid while the zone's stamp
 * equals last, the stamp of the last transaction that marked it (a
 * writer that stamps without marking, an older build, leaves them
 * unequal, and the zone is copied whole).  A copy of counter G uses it
 * when since <= G + 1.  The first mark of a transaction (stamp S)
 * restarts the mask when last < R or last != stamp: cleared, since =
 * the zone's stamp before S plus one (nothing changed the zone in
 * between, so this holds whatever R is).  R, the reset point, only
 * says when masks restart: each backup moves it past the counter at its
 * start (zone_lines_restart), so that masks describe the changes since
 * about the last backup instead of filling up; it lives in the
 * connections' shared page (lock.c), not in the pool, and needs no
 * transaction (a transaction per backup moved the counter and cost
 * each backup its commit); lost with the page, masks merely restart
 * later.  Masks are not undo-logged: a rolled-back change leaves its
 * bits, a superset.
 *
 * Only pools of format version 2 or later have a table (layout.h): a
 * build of version 1 can write a pool of version 1 and stamps nothing,
 * so a table there could say "unchanged" of a zone it changed.  In a
 * pool of version 1 the table is never made, a table found there (made by
 * a build that did not yet bump the version) is ignored, and every copy
 * is full.
 */
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include <libpmem.h>

#include "internal.h"

/* Zones of a pool of size bytes. */
uint64_t zone_count(uint64_t size)
{
	return (size + STG_ZONE_SIZE - 1) >> STG_ZONE_SHIFT;
}

/* The table in this mapping (t[0] the counter, t[1 + z] zone z's
 * stamp), or NULL (none, or out of range: every zone counts as changed). */
uint64_t *zone_table(const stg_pool *p, uint64_t *nzones)
{
	const stg_root *r = pool_root(p);
	uint64_t off = r->zt_off, n = r->zt_zones;

	*nzones = 0;
	if (p->sb.version < STG_FORMAT_ZONES || off == 0 || n == 0 ||
	    off < p->sb.data_off || off > p->map_len ||
	    n >= (p->map_len - off) / 8)
		return NULL;
	*nzones = n;
	return (uint64_t *)pool_at(p, off);
}

static void zone_flush(stg_pool *p, void *w, size_t n)
{
	if (p->dur == STG_DUR_PMEM)
		pmem_flush(w, n);
	else if (p->wal.on)
		wal_track(p, pool_off(p, w), n);
}

/* Bytes of a line-mask extent covering n zones. */
uint64_t zone_lm_bytes(uint64_t n)
{
	return (n + STG_LM_PER_PAGE - 1) / STG_LM_PER_PAGE * 4096;
}

/* The line masks in this mapping (NULL: none, or out of range: every
 * mask counts as invalid); *nzones zones covered. */
char *zone_lines(const stg_pool *p, uint64_t *nzones)
{
	const stg_root *r = pool_root(p);
	uint64_t off = r->lm_off, n = r->lm_zones;

	*nzones = 0;
	if (p->sb.version < STG_FORMAT_ZONES || off == 0 || n == 0 ||
	    off < p->sb.data_off || off > p->map_len ||
	    zone_lm_bytes(n) > p->map_len - off)
		return NULL;
	*nzones = n;
	return (char *)pool_at(p, off);
}

stg_lm_zone *zone_lm_rec(char *lm, uint64_t z)
{
	return (stg_lm_zone *)(lm + z / STG_LM_PER_PAGE * 4096 +
			       z % STG_LM_PER_PAGE * sizeof(stg_lm_zone));
}

/* Lines [a, b] of a zone changed by the transaction of stamp g (its
 * stamp st before this mark, R the reset point).  The first mark of a
 * transaction restarts the mask when the last marking transaction came
 * before R or was not the zone's last writer (stamp != last): cleared,
 * covering every change from st + 1 on (none came between st and g).
 * Threads of one batch race: the first takes `last` to g | BUSY with a
 * CAS, the others wait for it to say g before they OR their bits (a
 * clear after their OR would lose them). */
static void lm_mark(stg_pool *p, stg_lm_zone *m, uint64_t st, uint64_t g,
		    uint64_t R, unsigned a, unsigned b)
{
	uint64_t l = __atomic_load_n(&m->last, __ATOMIC_ACQUIRE);

	while (l != g) {
		if (l == (g | STG_LM_BUSY)) { /* another thread restarts it */
#if defined(__x86_64__) || defined(__i386__)
			__builtin_ia32_pause();
#endif
			l = __atomic_load_n(&m->last, __ATOMIC_ACQUIRE);
			continue;
		}
		if (!__atomic_compare_exchange_n(&m->last, &l, g | STG_LM_BUSY,
						 false, __ATOMIC_ACQ_REL,
						 __ATOMIC_ACQUIRE))
			continue;
		if (l < R || l != st) {
			for (unsigned w = 0; w < STG_LM_WORDS; w++)
				__atomic_store_n(&m->mask[w], 0,
						 __ATOMIC_RELAXED);
			__atomic_store_n(&m->since, st + 1, __ATOMIC_RELAXED);
		}
		__atomic_store_n(&m->last, g, __ATOMIC_RELEASE);
		zone_flush(p, m, sizeof(*m));
		l = g;
	}
	/* the words changed, flushed once (an append sets all 16) */
	unsigned w0 = STG_LM_WORDS, w1 = 0;

	for (unsigned w = a >> 6; w <= b >> 6; w++) {
		unsigned lo = w == a >> 6 ? a & 63 : 0;
		unsigned hi = w == b >> 6 ? b & 63 : 63;
		uint64_t bits = (hi == 63 ? ~0ull : (1ull << (hi + 1)) - 1) &
				~((1ull << lo) - 1);

		if ((__atomic_load_n(&m->mask[w], __ATOMIC_RELAXED) & bits) ==
		    bits)
			continue;
		__atomic_fetch_or(&m->mask[w], bits, __ATOMIC_RELAXED);
		if (w < w0)
			w0 = w;
		w1 = w;
	}
	if (w0 <= w1)
		zone_flush(p, &m->mask[w0], (w1 - w0 + 1) * sizeof(m->mask[0]));
}

/* The masks' place for zone_mark, looked up once per transaction (and
 * again when lm_ensure moves them): the validity checks of zone_lines
 * on every mark cost the writers of batch UPDATEs a few percent. */
static void zone_lines_cache(stg_pool *p)
{
	char *lm = p->no_lines ? NULL : zone_lines(p, &p->lm_c_n);

	p->lm_c_off = lm ? pool_off(p, lm) : 0;
	p->lm_c_R = lm ? lock_lines_reset(p) : 0;
}

void zone_txn_begin(stg_pool *p)
{
	uint64_t n, *t;

	p->zt_stamp = 0;
	p->lm_c_off = 0;
	if (p->private_map || p->lk.no_track || p->readonly)
		return;
	t = zone_table(p, &n);
	if (t == NULL)
		return;
	p->zt_stamp = t[0] + 1;
	t[0] = p->zt_stamp;
	zone_flush(p, &t[0], sizeof(t[0]));
	zone_lines_cache(p);
}

void zone_mark(stg_pool *p, uint64_t off, uint64_t len)
{
	uint64_t n, ln = 0, z, z0, z1, zend, g = p->zt_stamp, R = 0, *zt;
	char *lm;

	if (g == 0 || len == 0 || off >= p->map_len || len > p->map_len - off)
		return; /* no table, or not the pool's bytes */
	zt = zone_table(p, &n);
	if (zt == NULL)
		return;
	if (p->lm_c_off) {
		lm = (char *)pool_at(p, p->lm_c_off);
		ln = p->lm_c_n;
		R = p->lm_c_R;
	} else {
		lm = NULL;
	}
	zt++; /* the stamps */
	z0 = z = off >> STG_ZONE_SHIFT;
	zend = z1 = (off + len - 1) >> STG_ZONE_SHIFT;
	if (z1 >= n)
		z1 = n - 1;
	for (; z <= z1; z++) {
		uint64_t st = __atomic_load_n(&zt[z], __ATOMIC_RELAXED);

		/* the lines first: the mask is restarted against the stamp
		 * as it was before this transaction */
		if (z < ln)
			lm_mark(p, zone_lm_rec(lm, z), st, g, R,
				z == z0 ? (unsigned)(off >> STG_LINE_SHIFT) &
					      (STG_ZONE_LINES - 1)
					: 0,
				z == zend ? (unsigned)((off + len - 1) >>
						       STG_LINE_SHIFT) &
						(STG_ZONE_LINES - 1)
					  : STG_ZONE_LINES - 1);
		/* threads of one batch race to the same value: harmless */
		if (st == g)
			continue;
		__atomic_store_n(&zt[z], g, __ATOMIC_RELAXED);
		zone_flush(p, &zt[z], sizeof(zt[z]));
	}
}

void zone_lines_restart(stg_pool *p)
{
	uint64_t n, *t = zone_table(p, &n);

	if (t)
		lock_lines_reset_move(
		    p, __atomic_load_n(&t[0], __ATOMIC_RELAXED) + 1);
}

void stg_zone_mark(stg_pool *p, uint64_t off, uint64_t len)
{
	if (p && !p->private_map && !p->lk.no_track)
		zone_mark(p, off, len);
}

static uint64_t zone_random_id(void)
{
	uint64_t id = 0;

	if (getrandom(&id, sizeof(id), GRND_NONBLOCK) != (ssize_t)sizeof(id))
		id = (uint64_t)time(NULL) * 2654435761u ^ (uint64_t)getpid();
	return id ? id : 1;
}

/* The line masks made or grown to cover the zone table's zones (inside
 * the transaction of stg_zones_ensure). */
static int lm_ensure(stg_pool *p)
{
	stg_root *r = pool_root(p);
	uint64_t n, old_n = 0, off = r->lm_off, ext, f[2];
	char *old, *nl;
	int rc;

	(void)zone_table(p, &n);
	old = zone_lines(p, &old_n);
	if (!old || old_n < n) {
		rc = alloc_extent(p, zone_lm_bytes(n), &off, &ext);
		if (rc != GPMDB_OK)
			return rc;
		mlog_fresh(p, off, ext);
		r = pool_root(p); /* the allocation may have remapped */
		old = zone_lines(p, &old_n);
		nl = (char *)pool_at(p, off);
		memset(nl, 0, zone_lm_bytes(n));
		/* records of zones the old masks did not cover: never
		 * marked (last BUSY: invalid until a marked write) */
		for (uint64_t z = 0; z < n; z++)
			zone_lm_rec(nl, z)->last = STG_LM_BUSY;
		if (old) {
			memcpy(nl, old, zone_lm_bytes(old_n));
			for (uint64_t z = old_n; z < n; z++)
				zone_lm_rec(nl, z)->last = STG_LM_BUSY;
		}
		/* this transaction's marks from here on go to the new
		 * masks: a mark into the old ones after the copy would be
		 * missing from a record the copy left valid */
		p->lm_c_off = p->no_lines ? 0 : off;
		p->lm_c_n = n;
		if (old) {
			rc = alloc_free_deferred(p, r->lm_off,
						 zone_lm_bytes(old_n));
			if (rc != GPMDB_OK)
				return rc;
		}
		pool_persist(p, nl, zone_lm_bytes(n));
	} else {
		return GPMDB_OK;
	}
	f[0] = off;
	f[1] = n;
	rc = mlog_write(p, p->sb.root_off + offsetof(stg_root, lm_off), f,
			sizeof(f));
	if (rc == GPMDB_OK)
		zone_lines_cache(p);
	return rc;
}

int stg_zones_ensure(stg_pool *p)
{
	stg_root *r;
	uint64_t need, cover, max, off, ext, old_n = 0, *old, *nt, f[4];
	int rc;

	rc = pool_check_writable(p);
	if (rc != GPMDB_OK)
		return rc;
	if (p->sb.version < STG_FORMAT_ZONES)
		return pool_err(p, GPMDB_ERROR,
				"%s has format version %u (made by an older "
				"gpmdb, which does not track changed zones): "
				"it gets no zone table, so its backups are "
				"full; a copy of it (.backup, VACUUM INTO) has "
				"version %u and tracks them",
				p->path, p->sb.version, STG_FORMAT_VERSION);
	r = pool_root(p);
	need = zone_count(r->pool_size);
	old = zone_table(p, &old_n);
	if (old && old_n >= need)
		return lm_ensure(p);
	/* room to grow to twice the size before the next table */
	max = zone_count(p->sb.max_size);
	cover = need * 2 < max ? need * 2 : max;
	if (cover < need)
		cover = need;
	rc = alloc_extent(p, (cover + 1) * 8, &off, &ext);
	if (rc != GPMDB_OK)
		return rc;
	mlog_fresh(p, off, ext);
	cover = ext / 8 - 1 < max ? ext / 8 - 1 : max;
	r = pool_root(p); /* the allocation may have remapped */
	old = zone_table(p, &old_n);
	nt = (uint64_t *)pool_at(p, off);
	if (old) {
		/* zones the old table did not cover changed at some time up
		 * to now: stamped by this transaction, so that every copy
		 * takes them */
		memcpy(nt, old, (old_n + 1) * 8);
		for (uint64_t z = old_n; z < cover; z++)
			nt[1 + z] = p->zt_stamp ? p->zt_stamp : nt[0] + 1;
		f[2] = r->zt_id;
		f[3] = r->zt_since;
		rc = alloc_free_deferred(p, r->zt_off, (r->zt_zones + 1) * 8);
		if (rc != GPMDB_OK)
			return rc;
	} else {
		/* counter 1: copies of any later state know every change */
		memset(nt, 0, (cover + 1) * 8);
		nt[0] = 1;
		f[2] = zone_random_id();
		f[3] = 1;
	}
	pool_persist(p, nt, (cover + 1) * 8);
	f[0] = off;
	f[1] = cover;
	rc = mlog_write(p, p->sb.root_off + offsetof(stg_root, zt_off), f,
			sizeof(f));
	/* the rest of this transaction stamps as it goes */
	if (rc == GPMDB_OK && !old)
		zone_txn_begin(p);
	return rc == GPMDB_OK ? lm_ensure(p) : rc;
}

void stg_zones_info(stg_pool *p, stg_zones *out)
{
	const stg_root *r = pool_root(p);
	const uint64_t *t;
	uint64_t n;

	memset(out, 0, sizeof(*out));
	out->tracked = p->sb.version >= STG_FORMAT_ZONES;
	out->version = p->sb.version;
	out->zone_size = STG_ZONE_SIZE;
	out->zones = zone_count(r->pool_size);
	if ((t = zone_table(p, &n)) != NULL) {
		out->table = true;
		out->covered = n;
		out->id = r->zt_id;
		out->since = r->zt_since;
		out->gen = __atomic_load_n(&t[0], __ATOMIC_RELAXED);
		(void)zone_lines(p, &out->lines);
	}
}

uint64_t stg_zones_changed(stg_pool *p, uint64_t since)
{
	const stg_root *r = pool_root(p);
	uint64_t n, cnt = 0, zones = zone_count(r->pool_size);
	const uint64_t *zt = zone_table(p, &n);

	for (uint64_t z = 0; z < zones; z++)
		if (zt == NULL || z >= n ||
		    __atomic_load_n(&zt[1 + z], __ATOMIC_RELAXED) > since)
			cnt++;
	return cnt;
}
