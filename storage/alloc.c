/*
 * alloc.c - the extent allocator: a bitmap of fixed-size chunks.
 *
 * Bit i (LSB first within byte i / 8) set means chunk i, at data_off +
 * i * chunk_size, is in use.  The bitmap covers max_size, so growing the
 * pool only moves root.pool_size.  Allocation is first fit starting at a
 * hint (the end of the last allocation) and wraps once; bitmap bytes
 * change only after an UNDO entry for them, so a rollback or a crash
 * gives back what the transaction allocated.  Frees are deferred to commit
 * (FREE entries, applied by mlog.c), so freed space is never reused by
 * the transaction that freed it.
 *
 * When nothing fits the pool grows by an eighth of its size (at least
 * 1 MiB) or by what the request needs (counting free chunks at the
 * end), capped at max_size.  Doubling left pools up to twice what they
 * hold (TPC-H SF1 loaded from .tbl files: 3.1 GB for 1.4 GB of tables),
 * and on tmpfs every byte the file grows by is memory.  Should the
 * larger size not fit on the disk, the exact size is tried.
 * A batch that does not fit grows the pool once, to what it will
 * allocate and an eighth more (alloc_prepare), instead of extent by
 * extent: each growth maps the pool again (and drops what the GPU had
 * registered), and on tmpfs every byte the file grows by is a page the
 * kernel allocates and zeroes, one thread at a time.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "crashpoints.h"
#include "internal.h"

static uint8_t *bitmap(const stg_pool *p)
{
	return (uint8_t *)pool_at(p, p->sb.bitmap_off);
}

bool alloc_bit(const stg_pool *p, uint64_t chunk)
{
	return (bitmap(p)[chunk >> 3] >> (chunk & 7)) & 1u;
}

static uint64_t limit_chunks(const stg_pool *p)
{
	return (pool_root(p)->pool_size - p->sb.data_off) / p->sb.chunk_size;
}

int alloc_open(stg_pool *p)
{
	const uint8_t *b = bitmap(p);
	uint64_t i, n = 0, full = p->sb.nchunks / 8;

	for (i = 0; i < full; i++)
		n += (uint64_t)__builtin_popcount(b[i]);
	for (i = full * 8; i < p->sb.nchunks; i++)
		n += alloc_bit(p, i);
	p->used_chunks = n;
	return GPMDB_OK;
}

uint64_t alloc_round(const stg_pool *p, uint64_t bytes)
{
	uint64_t c = p->sb.chunk_size;

	if (bytes == 0)
		bytes = 1;
	return (bytes + c - 1) / c * c;
}

/* First run of n free chunks in [from, to); UINT64_MAX if none. */
static uint64_t find_run(const stg_pool *p, uint64_t n, uint64_t from,
			 uint64_t to)
{
	const uint8_t *b = bitmap(p);
	uint64_t i = from, run = 0;

	while (i < to) {
		if (run == 0 && (i & 7) == 0 && i + 8 <= to &&
		    b[i >> 3] == 0xff) {
			i += 8;
			continue;
		}
		if (alloc_bit(p, i)) {
			run = 0;
		} else if (++run == n) {
			return i + 1 - n;
		}
		i++;
	}
	return UINT64_MAX;
}

/* Grows the pool so that n chunks fit at its end (*start: the first):
 * by an eighth of its size or what the run needs; exact: what the run
 * needs. */
/* The chunks of free space at the end of the pool, at most n. */
static uint64_t free_tail(const stg_pool *p, uint64_t limit, uint64_t n)
{
	uint64_t tail = 0;

	while (tail < limit && !alloc_bit(p, limit - 1 - tail) && tail < n)
		tail++;
	return tail;
}

/* The chunk count grow_for grows the pool to for need more chunks. */
static uint64_t grow_target(const stg_pool *p, uint64_t limit, uint64_t need,
			    bool exact)
{
	uint64_t step = limit / 8 > (1u << 20) / p->sb.chunk_size
			    ? limit / 8
			    : (1u << 20) / p->sb.chunk_size;
	uint64_t target;

	/* GPMDB_TEST_GROW_EXACT: every growth exactly what is needed, so
	 * that the pool is mapped again at almost every allocation past its
	 * end (tests: a pointer into the pool kept across one is stale) */
	if (getenv("GPMDB_TEST_GROW_EXACT"))
		exact = true;
	target = limit + (exact || need > step ? need : step);
	return target > p->sb.nchunks ? p->sb.nchunks : target;
}

static int grow_for(stg_pool *p, uint64_t n, uint64_t *start, bool exact)
{
	uint64_t limit = limit_chunks(p), tail, need, target, size;
	int rc;

	tail = free_tail(p, limit, n);
	need = n - tail;
	if (need > p->sb.nchunks - limit)
		return pool_err(p, GPMDB_FULL,
				"database or disk is full: %s reached its "
				"maximum size of %llu bytes",
				p->path, (unsigned long long)p->sb.max_size);
	target = grow_target(p, limit, need, exact);
	size = p->sb.data_off + target * p->sb.chunk_size;
	rc = pool_extend(p, size);
	if (rc == GPMDB_FULL && target > limit + need) {
		target = limit + need;
		size = p->sb.data_off + target * p->sb.chunk_size;
		rc = pool_extend(p, size);
	}
	if (rc != GPMDB_OK)
		return rc;
	rc = mlog_set_u64(p, p->sb.root_off + offsetof(stg_root, pool_size),
			  size);
	if (rc != GPMDB_OK)
		return rc;
	*start = limit - tail;
	return GPMDB_OK;
}

static void set_bit(uint8_t *b, uint64_t i, bool on)
{
	if (on)
		b[i >> 3] |= (uint8_t)(1u << (i & 7));
	else
		b[i >> 3] &= (uint8_t) ~(1u << (i & 7));
}

static void set_bits(uint8_t *b, uint64_t s, uint64_t n, bool on)
{
	uint64_t i = s, e = s + n;

	for (; i < e && (i & 7); i++)
		set_bit(b, i, on);
	if (e - i >= 8) {
		memset(b + (i >> 3), on ? 0xff : 0, (e - i) >> 3);
		i += (e - i) & ~7ull;
	}
	for (; i < e; i++)
		set_bit(b, i, on);
}

bool alloc_fits_below(const stg_pool *p, uint64_t bytes, uint64_t off)
{
	uint64_t n = alloc_round(p, bytes) / p->sb.chunk_size, s;

	if (off <= p->sb.data_off)
		return false;
	s = find_run(p, n, 0, limit_chunks(p));
	return s != UINT64_MAX &&
	       p->sb.data_off + (s + n) * p->sb.chunk_size <= off;
}

int alloc_extent(stg_pool *p, uint64_t bytes, uint64_t *off,
		 uint64_t *ext_bytes)
{
	uint64_t c = p->sb.chunk_size, n, limit, s, b0, b1;
	int rc;

	if (bytes > p->sb.max_size)
		return pool_err(
		    p, GPMDB_FULL,
		    "database or disk is full: %llu bytes requested "
		    "from %s (maximum size %llu)",
		    (unsigned long long)bytes, p->path,
		    (unsigned long long)p->sb.max_size);
	n = alloc_round(p, bytes) / c;
	limit = limit_chunks(p);
	if (p->alloc_hint > limit)
		p->alloc_hint = 0;
	s = find_run(p, n, p->alloc_hint, limit);
	if (s == UINT64_MAX && p->alloc_hint)
		s = find_run(p, n, 0, limit);
	if (s == UINT64_MAX) {
		rc = grow_for(p, n, &s, false);
		if (rc != GPMDB_OK)
			return rc;
	}
	b0 = s >> 3;
	b1 = (s + n - 1) >> 3;
	rc = mlog_undo(p, p->sb.bitmap_off + b0, b1 - b0 + 1);
	if (rc != GPMDB_OK)
		return rc;
	set_bits(bitmap(p), s, n, true);
	pool_persist(p, bitmap(p) + b0, b1 - b0 + 1);
	stg_crash_point("alloc.extent");
	p->used_chunks += n;
	p->alloc_hint = s + n;
	*off = p->sb.data_off + s * c;
	if (ext_bytes)
		*ext_bytes = n * c;
	/* msync mode: nothing committed lives here, it may reach the file
	 * before the commit */
	if (p->wal.on)
		return wal_fresh(p, *off, n * c);
	return GPMDB_OK;
}

/* The chunks alloc_prepare grows the pool by for n chunks (its slack
 * included), 0 when it does not grow it. */
static uint64_t prepare_chunks(const stg_pool *p, uint64_t n)
{
	uint64_t limit = limit_chunks(p), slack;

	/* no more than one ordinary growth: the extents' own, as ever */
	if (n <= limit / 8 || find_run(p, n, 0, limit) != UINT64_MAX)
		return 0;
	/* an eighth more, as an ordinary growth gives, for what comes next
	 * (an UPDATE's log segment, the next small appends): without it the
	 * first of them grows the pool again */
	slack = (limit + n) / 8;
	if (limit + n + slack > p->sb.nchunks)
		slack =
		    p->sb.nchunks > limit + n ? p->sb.nchunks - limit - n : 0;
	return n + slack;
}

int alloc_prepare(stg_pool *p, uint64_t bytes)
{
	uint64_t n, s;

	if (bytes == 0)
		return GPMDB_OK;
	n = alloc_round(p, bytes) / p->sb.chunk_size;
	if (n > p->sb.nchunks)
		return pool_err(p, GPMDB_FULL,
				"database or disk is full: %llu bytes "
				"requested from %s (maximum size %llu)",
				(unsigned long long)bytes, p->path,
				(unsigned long long)p->sb.max_size);
	if ((n = prepare_chunks(p, n)) == 0)
		return GPMDB_OK;
	return grow_for(p, n, &s, true);
}

uint64_t alloc_prepare_size(const stg_pool *p, uint64_t bytes)
{
	uint64_t n, limit = limit_chunks(p), need;

	if (bytes == 0)
		return 0;
	n = alloc_round(p, bytes) / p->sb.chunk_size;
	if (n > p->sb.nchunks || (n = prepare_chunks(p, n)) == 0)
		return 0;
	need = n - free_tail(p, limit, n);
	if (need > p->sb.nchunks - limit)
		return 0;
	return p->sb.data_off +
	       grow_target(p, limit, need, true) * p->sb.chunk_size;
}

int alloc_free_deferred(stg_pool *p, uint64_t off, uint64_t bytes)
{
	stg_log_extent e = {off, alloc_round(p, bytes)};

	return mlog_append(p, STG_LOG_FREE, &e, sizeof(e), NULL);
}

void alloc_free_now(stg_pool *p, uint64_t off, uint64_t bytes)
{
	uint64_t c = p->sb.chunk_size, s = (off - p->sb.data_off) / c;
	uint64_t n = alloc_round(p, bytes) / c, i, was = 0, b0, b1;

	if (n == 0 || s + n > p->sb.nchunks)
		return;
	for (i = s; i < s + n; i++)
		was += alloc_bit(p, i);
	set_bits(bitmap(p), s, n, false);
	if (p->wal.on)
		wal_freed(p, off, n * c);
	b0 = s >> 3;
	b1 = (s + n - 1) >> 3;
	pool_persist(p, bitmap(p) + b0, b1 - b0 + 1);
	p->used_chunks -= was;
	if (s < p->alloc_hint)
		p->alloc_hint = s;
}
