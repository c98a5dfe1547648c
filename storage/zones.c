/*
 * zones.c - the dirty-zone table: which 64 KiB zones of the pool changed
 * since a given transaction (incremental backups and checkpoints).
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

static void zone_flush(stg_pool *p, uint64_t *w)
{
	if (p->dur == STG_DUR_PMEM)
		pmem_flush(w, sizeof(*w));
	else if (p->wal.on)
		wal_track(p, pool_off(p, w), sizeof(*w));
}

void zone_txn_begin(stg_pool *p)
{
	uint64_t n, *t;

	p->zt_stamp = 0;
	if (p->private_map || p->lk.no_track || p->readonly)
		return;
	t = zone_table(p, &n);
	if (t == NULL)
		return;
	p->zt_stamp = t[0] + 1;
	t[0] = p->zt_stamp;
	zone_flush(p, &t[0]);
}

void zone_mark(stg_pool *p, uint64_t off, uint64_t len)
{
	uint64_t n, z, z1, g = p->zt_stamp, *zt;

	if (g == 0 || len == 0 || off >= p->map_len || len > p->map_len - off)
		return; /* no table, or not the pool's bytes */
	zt = zone_table(p, &n);
	if (zt == NULL)
		return;
	zt++; /* the stamps */
	z = off >> STG_ZONE_SHIFT;
	z1 = (off + len - 1) >> STG_ZONE_SHIFT;
	if (z1 >= n)
		z1 = n - 1;
	for (; z <= z1; z++) {
		/* threads of one batch race to the same value: harmless */
		if (__atomic_load_n(&zt[z], __ATOMIC_RELAXED) == g)
			continue;
		__atomic_store_n(&zt[z], g, __ATOMIC_RELAXED);
		zone_flush(p, &zt[z]);
	}
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
		return GPMDB_OK;
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
	return rc;
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
