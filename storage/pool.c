/*
 * pool.c - opening, creating and closing pool files; durability; the
 * writer lock; growing the file; persist helpers; statistics; crash points.
 *
 * Opening validates everything it reads (superblock magic, version,
 * checksum, region table, root block, file size) with pread before the
 * file is mapped or anything is written, so a rejected file is never
 * modified.  Only a path that does not exist is created (O_EXCL): an empty
 * or foreign file is an error even with create set.
 *
 * Any number of connections may open a pool (lock.c): the first to open
 * recovers a crashed writer's logs into the file, a writer takes the
 * write lock per transaction, readers read snapshots.  Read-only opens
 * map the file MAP_PRIVATE, so that recovering an interrupted
 * transaction for their own view never touches the file.
 *
 * Durability AUTO means PMEM when libpmem says the mapping is real PM or
 * the file lives on tmpfs (stores survive a process crash once they leave
 * the CPU caches), else MSYNC.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <libpmem.h>
#include <omp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "crashpoints.h"
#include "internal.h"
#include "stg_gpu.h"

#ifndef TMPFS_MAGIC
#define TMPFS_MAGIC 0x01021994
#endif

/* ---- Errors ---------------------------------------------------------------
 */

int pool_err(stg_pool *p, int rc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(p->errmsg, sizeof(p->errmsg), fmt, ap);
	va_end(ap);
	p->errcode = rc;
	return rc;
}

void pool_clear_err(stg_pool *p)
{
	p->errcode = GPMDB_OK;
	p->errmsg[0] = '\0';
}

const char *stg_errmsg(const stg_pool *p)
{
	if (p == NULL)
		return "out of memory";
	return p->errmsg[0] ? p->errmsg : gpmdb_errstr(p->errcode);
}

int stg_errcode(const stg_pool *p)
{
	return p ? p->errcode : GPMDB_NOMEM;
}

/* ---- Types and names -------------------------------------------------- */

const char *stg_durability_name(stg_durability d)
{
	switch (d) {
	case STG_DUR_AUTO:
		return "auto";
	case STG_DUR_PMEM:
		return "pmem";
	case STG_DUR_MSYNC:
		return "msync";
	case STG_DUR_OFF:
		return "off";
	}
	return "unknown";
}

int stg_durability_parse(const char *s, stg_durability *out)
{
	static const stg_durability all[] = {STG_DUR_AUTO, STG_DUR_PMEM,
					     STG_DUR_MSYNC, STG_DUR_OFF};
	size_t i;

	if (s == NULL || out == NULL)
		return GPMDB_MISUSE;
	for (i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
		if (strcasecmp(s, stg_durability_name(all[i])) == 0) {
			*out = all[i];
			return GPMDB_OK;
		}
	}
	return GPMDB_ERROR;
}

size_t stg_type_width(stg_type t)
{
	switch (t) {
	case STG_T_BOOLEAN:
		return 1;
	case STG_T_INT:
	case STG_T_FLOAT:
	case STG_T_DATE:
		return 4;
	case STG_T_BIGINT:
	case STG_T_DOUBLE:
	case STG_T_DECIMAL:
	case STG_T_TEXT:
		return 8;
	}
	return 0;
}

const char *stg_type_name(stg_type t)
{
	switch (t) {
	case STG_T_INT:
		return "INT";
	case STG_T_BIGINT:
		return "BIGINT";
	case STG_T_FLOAT:
		return "FLOAT";
	case STG_T_DOUBLE:
		return "DOUBLE";
	case STG_T_DECIMAL:
		return "DECIMAL";
	case STG_T_DATE:
		return "DATE";
	case STG_T_BOOLEAN:
		return "BOOLEAN";
	case STG_T_TEXT:
		return "TEXT";
	}
	return "UNKNOWN";
}

/* ---- Persisting -----------------------------------------------------------
 */

void pool_flush(stg_pool *p, const void *addr, size_t len)
{
	if (len == 0 || p->private_map || p->lk.no_track)
		return;
	zone_mark(p, pool_off(p, addr), len);
	if (p->dur == STG_DUR_PMEM)
		pmem_flush(addr, len);
	else if (p->wal.on) /* msync mode: the commit writes the page */
		wal_track(p, pool_off(p, addr), len);
}

void pool_drain(stg_pool *p)
{
	if (p->dur == STG_DUR_PMEM && !p->private_map)
		pmem_drain();
}

void pool_count_persisted(stg_pool *p, uint64_t bytes)
{
	if (p->dur == STG_DUR_OFF || p->private_map)
		return;
	p->bytes_persisted += bytes;
	p->txn_bytes_persisted += bytes;
}

void pool_persist(stg_pool *p, const void *addr, size_t len)
{
	if (len == 0)
		return;
	pool_flush(p, addr, len);
	pool_drain(p);
	pool_count_persisted(p, len);
}

void pool_memcpy_nodrain(stg_pool *p, void *dst, const void *src, size_t n)
{
	if (!p->private_map && !p->lk.no_track)
		zone_mark(p, pool_off(p, dst), n);
	if (p->dur == STG_DUR_PMEM && !p->private_map) {
		pmem_memcpy_nodrain(dst, src, n);
		return;
	}
	memcpy(dst, src, n);
	if (p->wal.on)
		wal_track(p, pool_off(p, dst), n);
}

bool pool_range_ok(const stg_pool *p, uint64_t off, uint64_t len)
{
	uint64_t end = pool_root(p)->pool_size;

	if (end > p->map_len)
		end = p->map_len;
	return off >= p->sb.data_off && off <= end && len <= end - off;
}

int pool_check_writable(stg_pool *p)
{
	if (p == NULL)
		return GPMDB_MISUSE;
	pool_clear_err(p);
	if (p->readonly)
		return pool_err(p, GPMDB_READONLY,
				"attempt to write a readonly database: %s",
				p->path);
	if (p->broken)
		return pool_err(p, GPMDB_IOERR,
				"pool %s is no longer mapped after a failed "
				"remap; reopen it",
				p->path);
	if (!p->in_txn)
		return pool_err(p, GPMDB_MISUSE,
				"storage call outside a transaction");
	return GPMDB_OK;
}

/* ---- Growing --------------------------------------------------------------
 */

static int pool_remap_to(stg_pool *p, uint64_t min_size);
static bool on_tmpfs(int fd);

/* pool_extend's work, timed (stg_write_times grow_ns, extend_ns). */
static int pool_extend_untimed(stg_pool *p, uint64_t new_size, uint64_t t0);

int pool_extend(stg_pool *p, uint64_t new_size)
{
	uint64_t t0 = pool_now_ns();
	int rc = pool_extend_untimed(p, new_size, t0);

	p->wt.grow_ns += pool_now_ns() - t0;
	p->wt.grows++;
	return rc;
}

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

/* Growths of at least this many bytes on tmpfs go in parallel (below it
 * one fallocate costs less than starting the threads). */
#define GROW_PAR_MIN (64ull << 20)
#define GROW_PIECE   (2ull << 20)

/*
 * How a large growth of a pool on tmpfs is done (GPMDB_GROW: "fallocate",
 * "pfalloc", "populate"; tpc/batch/bench_grow.c measures them):
 *  - fallocate: one posix_fallocate of the new range.  tmpfs allocates
 *    and zeroes every page under the inode's lock, one thread: 470-940 ms
 *    for the 2.7 GB of a 50M-row INSERT on the H200 (issue 16);
 *  - pfalloc: the same range in disjoint pieces, one fallocate per thread;
 *  - populate: ftruncate, the pool mapped again, then the new range's
 *    pages faulted in on every core (MADV_POPULATE_WRITE, which says
 *    EFAULT where a full tmpfs would raise SIGBUS on a store).  Its pages
 *    are then in this process's page tables too, which the GPU path's
 *    registration would otherwise populate again.
 * Neither parallel way scales on tmpfs (H200, 16 cores, 2.7 GB, kernel
 * 6.18: fallocate 215-241 ms; pfalloc 235-262 ms from 1, 4 or 16 threads,
 * the inode's lock serialises them; populate 847 / 349 / 451 ms from 1 /
 * 4 / 16 threads, page by page under the mapping's locks), so fallocate
 * stays the default and the time is hidden instead: stg_grow_ahead
 * allocates the range on a thread while the rows are converted and
 * checked.  The others stay as measurement switches.
 */
enum { GROW_FALLOCATE, GROW_PFALLOC, GROW_POPULATE };

static int grow_way(void)
{
	/* read at each large growth (tests change it), a getenv beside a
	 * growth of 64 MiB or more */
	const char *e = getenv("GPMDB_GROW");

	return e && !strcmp(e, "pfalloc")    ? GROW_PFALLOC
	       : e && !strcmp(e, "populate") ? GROW_POPULATE
					     : GROW_FALLOCATE;
}

static bool full_errno(int err)
{
	return err == ENOSPC || err == EFBIG || err == EFAULT ||
	       err == ENOMEM || err == EDQUOT;
}

/* [from, to) of the file allocated by one fallocate per thread; 0 or the
 * first error's errno. */
static int grow_pfalloc(int fd, uint64_t from, uint64_t to)
{
	long np = (long)((to - from + GROW_PIECE - 1) / GROW_PIECE);
	long nt = omp_get_max_threads() > 0 ? omp_get_max_threads() : 1;
	uint64_t per = (uint64_t)((np + nt - 1) / nt) * GROW_PIECE;
	int why = 0;

#pragma omp parallel for schedule(static, 1)
	for (long i = 0; i < nt; i++) {
		uint64_t o = from + (uint64_t)i * per;
		uint64_t l = o >= to ? 0 : (to - o < per ? to - o : per);
		if (l && fallocate(fd, 0, (off_t)o, (off_t)l) != 0)
			__atomic_store_n(&why, errno, __ATOMIC_RELAXED);
	}
	return why;
}

/* The pages of [m, m + len) of a shared mapping allocated on every core;
 * 0 or the first error's errno (EINVAL: a kernel without it). */
static int grow_populate(char *m, uint64_t len)
{
	long np = (long)((len + GROW_PIECE - 1) / GROW_PIECE);
	int why = 0;

#pragma omp parallel for schedule(dynamic, 4)
	for (long i = 0; i < np; i++) {
		uint64_t o = (uint64_t)i * GROW_PIECE;
		uint64_t l = len - o < GROW_PIECE ? len - o : GROW_PIECE;
		if (__atomic_load_n(&why, __ATOMIC_RELAXED) == 0 &&
		    madvise(m + o, (size_t)l, MADV_POPULATE_WRITE) != 0)
			__atomic_store_n(&why, errno, __ATOMIC_RELAXED);
	}
	return why;
}

static int grow_full(stg_pool *p, uint64_t new_size, int err)
{
	if (full_errno(err))
		return pool_err(p, GPMDB_FULL,
				"database or disk is full: cannot grow %s to "
				"%llu bytes: %s",
				p->path, (unsigned long long)new_size,
				strerror(err));
	return pool_err(p, GPMDB_IOERR, "cannot grow %s to %llu bytes: %s",
			p->path, (unsigned long long)new_size, strerror(err));
}

/*
 * The parallel growth of a pmem-mode pool on tmpfs to new_size (way:
 * GROW_PFALLOC or GROW_POPULATE).  Nothing the pool holds is touched
 * before the new range is allocated whole: on any failure the file goes
 * back to its old size (the pages allocated meanwhile are given back)
 * and the pool is mapped as before, so a full tmpfs is GPMDB_FULL and
 * loses nothing; the caller has not recorded the new size yet.
 */
static int grow_parallel(stg_pool *p, uint64_t new_size, int way, uint64_t t0)
{
	uint64_t old = p->map_len;
	int err = 0, rc;

	if (ftruncate(p->fd, (off_t)new_size) != 0)
		err = errno;
	else if (way == GROW_PFALLOC)
		err = grow_pfalloc(p->fd, old, new_size);
	if (err == 0) {
		stg_crash_point("grow.extend");
		if ((rc = pool_remap_to(p, new_size)) != GPMDB_OK)
			return rc;
		if (way == GROW_POPULATE)
			err = grow_populate(p->base + old, new_size - old);
		if (err == EINVAL) /* no MADV_POPULATE_WRITE: allocate */
			err = posix_fallocate(p->fd, (off_t)old,
					      (off_t)(new_size - old));
	}
	p->wt.extend_ns += pool_now_ns() - t0;
	if (err == 0) {
		stg_crash_point("grow.remap");
		return GPMDB_OK;
	}
	/* back to the old size: tmpfs frees the pages past it */
	if (ftruncate(p->fd, (off_t)old) != 0) {
		int e2 = errno;
		p->broken = true;
		return pool_err(p, GPMDB_IOERR,
				"cannot grow %s to %llu bytes (%s), nor "
				"truncate it back to %llu bytes: %s",
				p->path, (unsigned long long)new_size,
				strerror(err), (unsigned long long)old,
				strerror(e2));
	}
	if (p->map_len != old && (rc = pool_remap_to(p, old)) != GPMDB_OK)
		return rc;
	return grow_full(p, new_size, err);
}

/* ---- Growing ahead (stg_grow_ahead) --------------------------------------
 */

/* Growths this large are started ahead; below, a thread costs more than
 * the fallocate it would hide. */
#define GROW_AHEAD_MIN (64ull << 20)

static void *ahead_main(void *arg)
{
	stg_pool *p = arg;

	p->ahead.err = posix_fallocate(p->fd, (off_t)p->ahead.from,
				       (off_t)(p->ahead.to - p->ahead.from));
	return NULL;
}

void pool_ahead_start(stg_pool *p, uint64_t size)
{
	if (p->ahead.on || p->ahead.done || p->wal.on || p->private_map ||
	    p->dur != STG_DUR_PMEM || size <= p->map_len ||
	    size - p->map_len < GROW_AHEAD_MIN || getenv("GPMDB_NO_GROW_AHEAD"))
		return;
	p->ahead.from = p->map_len;
	p->ahead.to = size;
	p->ahead.err = 0;
	if (pthread_create(&p->ahead.th, NULL, ahead_main, p) != 0)
		return; /* the growth allocates it itself */
	p->ahead.on = true;
	/* the thread keeps a core busy: loops over all of them would wait
	 * for the one that shares it (a static schedule) */
	p->ahead.omp_prev = omp_get_max_threads();
	if (p->ahead.omp_prev > 2)
		omp_set_num_threads(p->ahead.omp_prev - 1);
}

void pool_ahead_join(stg_pool *p)
{
	if (!p->ahead.on)
		return;
	pthread_join(p->ahead.th, NULL);
	p->ahead.on = false;
	p->ahead.done = true;
	if (p->ahead.omp_prev > 2)
		omp_set_num_threads(p->ahead.omp_prev);
}

void pool_ahead_end(stg_pool *p)
{
	pool_ahead_join(p);
	/* what it allocated is for the growth of its own statement: past
	 * it nothing says the range is still allocated */
	p->ahead.done = false;
}

/* The first byte from which the growth to new_size must still allocate
 * the file: past what the thread allocated, when it did. */
static uint64_t ahead_used(stg_pool *p, uint64_t new_size)
{
	uint64_t from = p->map_len;

	pool_ahead_join(p);
	if (p->ahead.done && p->ahead.err == 0 && p->ahead.from <= from &&
	    p->ahead.to > from)
		from = p->ahead.to < new_size ? p->ahead.to : new_size;
	p->ahead.done = false;
	return from;
}

static int pool_extend_untimed(stg_pool *p, uint64_t new_size, uint64_t t0)
{
	uint64_t from = ahead_used(p, new_size);
	int err;

	if (new_size > p->map_len && new_size - p->map_len >= GROW_PAR_MIN &&
	    !p->wal.on && !p->private_map && grow_way() != GROW_FALLOCATE &&
	    on_tmpfs(p->fd))
		return grow_parallel(p, new_size, grow_way(), t0);
	/* only the new range: from 0 the call walks every page of the file
	 * (tmpfs), 100-200 ms at 10M rows for one INSERT that grows it */
	err =
	    new_size <= p->map_len ? posix_fallocate(p->fd, 0, (off_t)new_size)
	    : from < new_size
		? posix_fallocate(p->fd, (off_t)from, (off_t)(new_size - from))
		: 0;
	p->wt.extend_ns += pool_now_ns() - t0;
	if (err == ENOSPC || err == EFBIG)
		return pool_err(p, GPMDB_FULL,
				"database or disk is full: cannot grow %s to "
				"%llu bytes",
				p->path, (unsigned long long)new_size);
	if (err != 0)
		return pool_err(p, GPMDB_IOERR,
				"cannot grow %s to %llu bytes: %s", p->path,
				(unsigned long long)new_size, strerror(err));
	stg_crash_point("grow.extend");
	if (new_size <= p->map_len)
		return GPMDB_OK;
	if (p->wal.on) {
		/* the reservation has room: the base stays */
		int rc = wal_grow(p, new_size);

		if (rc == GPMDB_OK)
			stg_crash_point("grow.remap");
		return rc;
	}
	if ((err = pool_remap_to(p, new_size)) == GPMDB_OK)
		stg_crash_point("grow.remap");
	return err;
}

static stg_unmap_hook unmap_hook;

void stg_set_unmap_hook(stg_unmap_hook fn)
{
	__atomic_store_n(&unmap_hook, fn, __ATOMIC_RELEASE);
}

/*
 * A descriptor of its own for a shared mapping of the pool file (closed
 * once mapped): the mapping holds its open file description until it is
 * unmapped, and p->fd's carries the connection's OFD locks (lock.c). A
 * mapping of p->fd kept those locks alive past the process's death while
 * the GPU driver still held the registered pages: after kill -9 of a GPU
 * writer the next opener found "a write transaction is running"
 * (crash_gpu_dml, device run 8). libpmem's mapping opens its own too.
 */
void *pool_map_shared_at(stg_pool *p, void *at, size_t len, off_t off)
{
	int fd = open(p->memory ? p->map_path : p->path, O_RDWR | O_CLOEXEC);
	void *m;
	int err;

	if (fd < 0)
		return MAP_FAILED;
	m = mmap(at, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd,
		 off);
	err = errno;
	close(fd);
	errno = err;
	return m;
}

void pool_gpu_forget_at(void *base, uint64_t len)
{
	stg_unmap_hook hook = __atomic_load_n(&unmap_hook, __ATOMIC_ACQUIRE);

	if (hook && base)
		hook(base, len);
}

void pool_gpu_forget(stg_pool *p)
{
	pool_gpu_forget_at(p->base, p->map_len);
}

/* pmem mode in a reservation (pm_resv): the file's length now mapped at
 * base, its new range shared in place (or a shrunk tail given back to
 * the reservation); the base stays, and with it every pointer into the
 * pool, the GPU's registrations and the GPU cache's copies. */
static int pool_refit_resv(stg_pool *p, uint64_t min_size)
{
	struct stat st;
	uint64_t len;
	void *r;
	int err;

	if (fstat(p->fd, &st) != 0) {
		err = errno;
		return pool_err(p, GPMDB_IOERR, "cannot stat %s: %s", p->path,
				strerror(err));
	}
	len = (uint64_t)st.st_size;
	if (len < min_size || len > p->pm_resv)
		return pool_err(p, GPMDB_IOERR,
				"cannot map %s: %llu bytes, expected %llu to "
				"%llu",
				p->path, (unsigned long long)len,
				(unsigned long long)min_size,
				(unsigned long long)p->pm_resv);
	if (len > p->map_len)
		r = pool_map_shared_at(p, p->base + p->map_len,
				       (size_t)(len - p->map_len),
				       (off_t)p->map_len);
	else if (len < p->map_len)
		r = mmap(p->base + len, (size_t)(p->map_len - len), PROT_NONE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE |
			     MAP_FIXED,
			 -1, 0);
	else
		return GPMDB_OK;
	if (r == MAP_FAILED) {
		err = errno;
		return pool_err(p, GPMDB_IOERR,
				"cannot map %s to %llu bytes: %s", p->path,
				(unsigned long long)len, strerror(err));
	}
	p->map_len = (size_t)len;
	return GPMDB_OK;
}

/* pmem mode: the whole file mapped again (the base may move), or in
 * place in the reservation (pool_refit_resv). */
static int pool_remap_to(stg_pool *p, uint64_t min_size)
{
	size_t len = 0;
	int is_pmem = 0, err;
	void *base;

	if (p->pm_resv)
		return pool_refit_resv(p, min_size);

	if (!p->private_map)
		pool_gpu_forget(p); /* the GPU's registrations go */
	if (pmem_unmap(p->base, p->map_len) != 0) {
		err = errno;
		return pool_err(p, GPMDB_IOERR, "cannot unmap %s: %s", p->path,
				strerror(err));
	}
	p->base = NULL;
	base = pmem_map_file(p->memory ? p->map_path : p->path, 0, 0, 0, &len,
			     &is_pmem);
	if (base == NULL || len < min_size) {
		if (base)
			pmem_unmap(base, len);
		p->broken = true;
		p->map_len = 0;
		return pool_err(p, GPMDB_IOERR, "cannot remap %s: %s", p->path,
				pmem_errormsg());
	}
	p->base = base;
	p->map_len = len;
	p->is_pmem = is_pmem != 0;
	stamp_all(p); /* pointers into the old mapping are stale */
	return GPMDB_OK;
}

int pool_remap(stg_pool *p)
{
	return pool_remap_to(p, p->map_len);
}

int pool_ro_grow(stg_pool *p, uint64_t new_size)
{
	int err;

	if (new_size > p->ro_resv)
		return pool_err(p, GPMDB_CORRUPT,
				"database disk image is malformed: %s grew "
				"past its maximum size",
				p->path);
	if (mmap(p->base + p->map_len, (size_t)(new_size - p->map_len),
		 PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_FIXED | MAP_NORESERVE, p->fd,
		 (off_t)p->map_len) == MAP_FAILED) {
		err = errno;
		return pool_err(p, GPMDB_IOERR, "cannot map %s: %s", p->path,
				strerror(err));
	}
	p->map_len = (size_t)new_size;
	return GPMDB_OK;
}

/* ---- Opening --------------------------------------------------------------
 */

static uint32_t sb_crc(const stg_superblock *sb)
{
	return (uint32_t)crc32(0L, (const Bytef *)sb, STG_SB_CRC_OFF);
}

int pool_pread_full(int fd, void *buf, size_t n, off_t off, size_t *got)
{
	size_t done = 0;

	while (done < n) {
		ssize_t r =
		    pread(fd, (char *)buf + done, n - done, off + (off_t)done);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (r == 0)
			break;
		done += (size_t)r;
	}
	*got = done;
	return 0;
}

int pool_pwrite_full(int fd, const void *buf, size_t n, off_t off)
{
	size_t done = 0;

	while (done < n) {
		ssize_t r = pwrite(fd, (const char *)buf + done, n - done,
				   off + (off_t)done);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		done += (size_t)r;
	}
	return 0;
}

static bool is_pow2(uint64_t x)
{
	return x && !(x & (x - 1));
}

/* Checks the region table of a superblock whose crc matched. */
static bool sb_sane(const stg_superblock *sb)
{
	if (sb->sb_size != STG_SB_SIZE || !is_pow2(sb->chunk_size) ||
	    sb->chunk_size < STG_MIN_CHUNK || sb->chunk_size > (1ull << 30))
		return false;
	if (sb->root_off != STG_SB_SIZE || sb->root_size != STG_ROOT_SIZE)
		return false;
	if (sb->log_off != sb->root_off + sb->root_size ||
	    sb->log_size < 4096 || sb->log_size > (1ull << 32))
		return false;
	if (sb->bitmap_off != sb->log_off + sb->log_size ||
	    sb->bitmap_size * 8 < sb->nchunks || sb->bitmap_size > (1u << 24))
		return false;
	if (sb->data_off < sb->bitmap_off + sb->bitmap_size ||
	    sb->data_off % sb->chunk_size != 0)
		return false;
	if (sb->max_size < sb->data_off ||
	    sb->nchunks != (sb->max_size - sb->data_off) / sb->chunk_size)
		return false;
	return true;
}

/* Validates an existing file through fd; nothing is written. */
static int validate_file(stg_pool *p, int fd)
{
	struct stat st;
	stg_root root;
	size_t got;
	int err;

	if (fstat(fd, &st) != 0) {
		err = errno;
		return pool_err(p, GPMDB_CANTOPEN,
				"unable to open database file: %s: %s", p->path,
				strerror(err));
	}
	if (S_ISDIR(st.st_mode))
		return pool_err(p, GPMDB_CANTOPEN,
				"unable to open database file: %s: Is a "
				"directory",
				p->path);
	if (!S_ISREG(st.st_mode))
		return pool_err(p, GPMDB_CANTOPEN,
				"unable to open database file: %s: not a "
				"regular file",
				p->path);
	if (st.st_size < (off_t)STG_SB_SIZE)
		return pool_err(p, GPMDB_NOTADB,
				"file is not a gpmdb database: %s (%lld bytes, "
				"too small)",
				p->path, (long long)st.st_size);
	if (pool_pread_full(fd, &p->sb, sizeof(p->sb), 0, &got) != 0 ||
	    got != sizeof(p->sb)) {
		err = errno;
		return pool_err(p, GPMDB_IOERR, "cannot read %s: %s", p->path,
				strerror(err));
	}
	if (memcmp(p->sb.magic, STG_SB_MAGIC_INCOMPLETE, 8) == 0)
		return pool_err(p, GPMDB_NOTADB,
				"%s is an incomplete backup copy (cut short, "
				"or being written now): not a database; take "
				"the backup again",
				p->path);
	if (memcmp(p->sb.magic, STG_SB_MAGIC, 8) != 0 &&
	    !(p->delta_private &&
	      memcmp(p->sb.magic, STG_SB_MAGIC_DELTA, 8) == 0))
		return pool_err(p, GPMDB_NOTADB,
				"file is not a gpmdb database: %s (bad magic)",
				p->path);
	if (p->sb.version < STG_FORMAT_VERSION_MIN ||
	    p->sb.version > STG_FORMAT_VERSION)
		return pool_err(p, GPMDB_NOTADB,
				"file is not a gpmdb database this build can "
				"read: %s: format version %u is not supported "
				"(this build reads versions %u to %u)",
				p->path, p->sb.version, STG_FORMAT_VERSION_MIN,
				STG_FORMAT_VERSION);
	if (sb_crc(&p->sb) != p->sb.crc)
		return pool_err(p, GPMDB_CORRUPT,
				"database disk image is malformed: %s: "
				"superblock checksum mismatch",
				p->path);
	if (!sb_sane(&p->sb))
		return pool_err(p, GPMDB_CORRUPT,
				"database disk image is malformed: %s: "
				"superblock region table out of range",
				p->path);
	if ((uint64_t)st.st_size < p->sb.data_off)
		return pool_err(p, GPMDB_CORRUPT,
				"database disk image is malformed: pool file "
				"is truncated: %s: %lld bytes, expected at "
				"least %llu",
				p->path, (long long)st.st_size,
				(unsigned long long)p->sb.data_off);
	if (pool_pread_full(fd, &root, sizeof(root), (off_t)p->sb.root_off,
			    &got) != 0 ||
	    got != sizeof(root)) {
		err = errno;
		return pool_err(p, GPMDB_IOERR, "cannot read %s: %s", p->path,
				strerror(err));
	}
	if (root.magic != STG_ROOT_MAGIC || root.pool_size < p->sb.data_off ||
	    root.pool_size > p->sb.max_size ||
	    (root.pool_size - p->sb.data_off) % p->sb.chunk_size != 0)
		return pool_err(p, GPMDB_CORRUPT,
				"database disk image is malformed: %s: root "
				"block is damaged",
				p->path);
	if ((uint64_t)st.st_size < root.pool_size)
		return pool_err(p, GPMDB_CORRUPT,
				"database disk image is malformed: pool file "
				"is truncated: %s: %lld bytes, expected %llu",
				p->path, (long long)st.st_size,
				(unsigned long long)root.pool_size);
	return GPMDB_OK;
}

static uint64_t round_up(uint64_t x, uint64_t a)
{
	return (x + a - 1) / a * a;
}

static void fill_uuid(uint8_t uuid[16])
{
	ssize_t n = getrandom(uuid, 16, GRND_NONBLOCK);

	if (n != 16) {
		/* Not worth failing creation over: time and pid still make
		 * pools distinguishable. */
		uint64_t t = (uint64_t)time(NULL), pid = (uint64_t)getpid();

		memcpy(uuid, &t, 8);
		memcpy(uuid + 8, &pid, 8);
	}
	uuid[6] = (uint8_t)((uuid[6] & 0x0f) | 0x40); /* version 4 */
	uuid[8] = (uint8_t)((uuid[8] & 0x3f) | 0x80);
}

/* Lays out and writes a new pool through fd (created by us). */
static int create_file(stg_pool *p, int fd, const stg_open_opts *o)
{
	uint64_t max = o->max_size ? o->max_size : STG_DEFAULT_MAX_SIZE;
	uint64_t init =
	    o->initial_size ? o->initial_size : STG_DEFAULT_INITIAL_SIZE;
	uint64_t chunk = STG_MIN_CHUNK, log, bm, data_off, min_init;
	stg_superblock *sb = &p->sb;
	stg_root *root;
	stg_log_hdr lh;
	int err;

	if (max < init)
		max = init;
	while (max / chunk > STG_MAX_CHUNKS)
		chunk *= 2;
	/* The log holds one transaction's metadata undo (about 64 bytes per
	 * statement of a long transaction); a quarter of the initial size
	 * keeps small pools small. */
	log = round_up(init / 4, 4096);
	if (log < (256u << 10))
		log = 256u << 10;
	if (log > (64u << 20))
		log = 64u << 20;
	bm = round_up((max / chunk + 7) / 8, 4096);
	data_off = round_up(STG_SB_SIZE + STG_ROOT_SIZE + log + bm, chunk);
	min_init = data_off + 8 * chunk;
	if (init < min_init)
		init = min_init;
	init = data_off + round_up(init - data_off, chunk);
	if (max < init)
		max = init;

	memset(sb, 0, sizeof(*sb));
	memcpy(sb->magic, STG_SB_MAGIC, 8);
	sb->version = STG_FORMAT_VERSION;
	sb->sb_size = STG_SB_SIZE;
	fill_uuid(sb->uuid);
	sb->ctime = (uint64_t)time(NULL);
	sb->chunk_size = chunk;
	sb->root_off = STG_SB_SIZE;
	sb->root_size = STG_ROOT_SIZE;
	sb->log_off = sb->root_off + sb->root_size;
	sb->log_size = log;
	sb->bitmap_off = sb->log_off + log;
	sb->bitmap_size = bm;
	sb->data_off = data_off;
	sb->nchunks = (max - data_off) / chunk;
	sb->max_size = max;
	sb->initial_size = init;
	sb->crc = sb_crc(sb);

	err = posix_fallocate(fd, 0, (off_t)init);
	if (err == ENOSPC || err == EFBIG)
		return pool_err(
		    p, GPMDB_FULL,
		    "database or disk is full: cannot allocate %llu "
		    "bytes for %s",
		    (unsigned long long)init, p->path);
	if (err != 0)
		return pool_err(
		    p, GPMDB_IOERR, "cannot allocate %llu bytes for %s: %s",
		    (unsigned long long)init, p->path, strerror(err));
	/* The file is zero-filled: an all-clear bitmap already. */
	root = calloc(1, sizeof(*root));
	if (root == NULL)
		return pool_err(p, GPMDB_NOMEM, "out of memory");
	root->magic = STG_ROOT_MAGIC;
	root->pool_size = init;
	root->next_obj_seq = 1;
	root->next_table_id = 1;
	memset(&lh, 0, sizeof(lh));
	lh.magic = STG_LOG_MAGIC;
	lh.gen = 1;
	if (pool_pwrite_full(fd, root, sizeof(*root), (off_t)sb->root_off) !=
		0 ||
	    pool_pwrite_full(fd, &lh, sizeof(lh), (off_t)sb->log_off) != 0 ||
	    fdatasync(fd) != 0 ||
	    /* The superblock last: a file without one is not a pool. */
	    pool_pwrite_full(fd, sb, sizeof(*sb), 0) != 0 ||
	    fdatasync(fd) != 0) {
		err = errno;
		free(root);
		return pool_err(p, err == ENOSPC ? GPMDB_FULL : GPMDB_IOERR,
				"cannot write %s: %s", p->path, strerror(err));
	}
	free(root);
	return GPMDB_OK;
}

static bool on_tmpfs(int fd)
{
	struct statfs fs;

	return fstatfs(fd, &fs) == 0 && fs.f_type == TMPFS_MAGIC;
}

static off_t pool_file_size(stg_pool *p)
{
	struct stat st;

	return fstat(p->fd, &st) == 0 ? st.st_size : 0;
}

static void pmem_reserve(stg_pool *p);

static int map_file(stg_pool *p, stg_durability dur)
{
	struct stat st;
	size_t len = 0;
	int is_pmem = 0, err;
	void *base;

	if (p->readonly) {
		if (fstat(p->fd, &st) != 0) {
			err = errno;
			return pool_err(p, GPMDB_IOERR, "cannot stat %s: %s",
					p->path, strerror(err));
		}
		/* Private: recovery of a crashed writer's transaction for
		 * this reader's view stays in memory.  A reservation of
		 * max_size, so that a file grown by a writer maps in place
		 * (the base never moves).  NORESERVE: a pool larger than
		 * memory plus swap maps. */
		p->ro_resv = p->sb.max_size > (uint64_t)st.st_size
				 ? p->sb.max_size
				 : (size_t)st.st_size;
		base = mmap(NULL, p->ro_resv, PROT_NONE,
			    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (base != MAP_FAILED &&
		    mmap(base, (size_t)st.st_size, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_FIXED | MAP_NORESERVE, p->fd,
			 0) == MAP_FAILED) {
			err = errno;
			munmap(base, p->ro_resv);
			errno = err;
			base = MAP_FAILED;
		}
		if (base == MAP_FAILED) {
			err = errno;
			return pool_err(p, GPMDB_IOERR, "cannot map %s: %s",
					p->path, strerror(err));
		}
		p->base = base;
		p->map_len = (size_t)st.st_size;
		p->private_map = true;
		p->is_pmem = false;
		return GPMDB_OK;
	}
	if (dur == STG_DUR_MSYNC) {
		if (fstat(p->fd, &st) != 0) {
			err = errno;
			return pool_err(p, GPMDB_IOERR, "cannot stat %s: %s",
					p->path, strerror(err));
		}
		len = (size_t)st.st_size;
		if ((err = wal_map(p, len)) != GPMDB_OK)
			return err;
	} else {
		base = pmem_map_file(p->memory ? p->map_path : p->path, 0, 0, 0,
				     &len, &is_pmem);
		if (base == NULL)
			return pool_err(p, GPMDB_IOERR, "cannot map %s: %s",
					p->path, pmem_errormsg());
		if (dur == STG_DUR_AUTO && !is_pmem && !on_tmpfs(p->fd)) {
			/* an ordinary file system: msync mode (wal.c) */
			pmem_unmap(base, len);
			return map_file(p, STG_DUR_MSYNC);
		}
		p->base = base;
		p->map_len = len;
		p->is_pmem = is_pmem != 0;
		if (!is_pmem && (p->memory || on_tmpfs(p->fd)))
			pmem_reserve(p);
	}
	p->dur = dur == STG_DUR_AUTO ? STG_DUR_PMEM : dur;
	if (len < pool_root(p)->pool_size)
		return pool_err(p, GPMDB_CORRUPT,
				"database disk image is malformed: pool file "
				"is truncated: %s: %zu bytes mapped, expected "
				"%llu",
				p->path, len,
				(unsigned long long)pool_root(p)->pool_size);
	return GPMDB_OK;
}

/*
 * Why: a growth mapped the whole pool again, and the base could move:
 * every pointer into the pool went stale (stamp_all: the GPU column
 * cache dropped every table's copies), the GPU's registrations went with
 * the old mapping (a 70 MB HCL segment registered again, 13-43 ms of the
 * next UPDATE), and munmap/mmap of a pool of GBs walked its page tables.
 * On shmem (tmpfs, :memory:), where libpmem's mapping is an ordinary
 * shared one (is_pmem 0), the pool is mapped shared at the start of a
 * reservation of max_size and grows in place.  Real PM keeps libpmem's
 * mapping (MAP_SYNC, its is_pmem).  GPMDB_TEST_GROW_EXACT keeps the
 * moving mapping too: that test hunts pointers kept across a remap,
 * which real PM still does.  Failing, libpmem's mapping stays.
 */
static void pmem_reserve(stg_pool *p)
{
	size_t resv =
	    p->sb.max_size > p->map_len ? (size_t)p->sb.max_size : p->map_len;
	void *r, *m;

	if (getenv("GPMDB_TEST_GROW_EXACT"))
		return;
	r = mmap(NULL, resv, PROT_NONE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (r == MAP_FAILED)
		return;
	m = pool_map_shared_at(p, r, p->map_len, 0);
	if (m == MAP_FAILED) {
		munmap(r, resv);
		return;
	}
	pmem_unmap(p->base, p->map_len);
	p->base = r;
	p->pm_resv = resv;
}

static void pool_free(stg_pool *p)
{
	if (p == NULL)
		return;
	tab_views_free(p);
	stamp_free(p);
	free(p->trim);
	p->trim = NULL;
	free(p->enc_tids);
	p->enc_tids = NULL;
	zt_keep_free(p);
	idx_presorted_clear(p);
	if (p->gpu_alias) {
		pool_gpu_forget_at(p->gpu_alias, p->gpu_alias_len);
		munmap(p->gpu_alias, p->pm_resv);
		p->gpu_alias = NULL;
	}
	if (p->wal.on) {
		wal_unmap(p);
	} else if (p->base) {
		if (p->private_map)
			munmap(p->base, p->ro_resv);
		else if (p->pm_resv)
			munmap(p->base, p->pm_resv);
		else
			pmem_unmap(p->base, p->map_len);
	}
	if (!p->wal.on && p->wal.fd >= 0)
		close(p->wal.fd); /* a reader's view of the log */
	lock_close(p, false);
	if (p->fd >= 0)
		close(p->fd); /* drops the locks */
	free(p->ents);
	mlog_sp_reset(p);
	free(p->dd.k);
	free(p->spd.k);
	free(p->spi);
	free(p->path);
	free(p);
}

static int open_fd(stg_pool *p, const stg_open_opts *o, bool *created)
{
	int flags = (o->readonly ? O_RDONLY : O_RDWR) | O_CLOEXEC;
	int fd, err;

	*created = false;
	fd = open(p->path, flags);
	if (fd < 0 && errno == ENOENT && o->create && !o->readonly) {
		fd = open(p->path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		if (fd >= 0)
			*created = true;
	}
	if (fd < 0) {
		err = errno;
		return pool_err(p, GPMDB_CANTOPEN,
				"unable to open database file: %s: %s", p->path,
				strerror(err));
	}
	p->fd = fd;
	return GPMDB_OK;
}

/* ":memory:" and "": a pool in an anonymous memfd (shmem, so the GPU can
 * register it like /dev/shm) that ends with the connection; durability
 * off, since nothing outlives the process. */
static int open_memory(stg_pool *p, stg_open_opts *o, bool *created)
{
	int fd, err;

	if (o->readonly)
		return pool_err(p, GPMDB_CANTOPEN,
				"unable to open database file: an in-memory "
				"database (%s) cannot be opened read-only",
				p->path[0] ? p->path : "\"\"");
	fd = memfd_create("gpmdb-memory", MFD_CLOEXEC);
	if (fd < 0) {
		err = errno;
		return pool_err(p, GPMDB_CANTOPEN,
				"unable to open an in-memory database: "
				"memfd_create: %s",
				strerror(err));
	}
	p->fd = fd;
	p->memory = true;
	snprintf(p->map_path, sizeof(p->map_path), "/proc/self/fd/%d", fd);
	o->durability = STG_DUR_OFF;
	*created = true;
	return GPMDB_OK;
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

int stg_open(const char *path, const stg_open_opts *opts, stg_pool **out,
	     char *errmsg, size_t errmsg_len)
{
	stg_open_opts o = {0};
	stg_pool *p;
	bool created = false, recovered = false, wal_rec = false, alone = false;
	double t0;
	int rc;

	if (out)
		*out = NULL;
	if (errmsg && errmsg_len)
		errmsg[0] = '\0';
	if (path == NULL || out == NULL) {
		if (errmsg && errmsg_len)
			snprintf(errmsg, errmsg_len,
				 "stg_open: path and out are required");
		return GPMDB_MISUSE;
	}
	if (opts)
		o = *opts;
	p = calloc(1, sizeof(*p));
	if (p == NULL || (p->path = strdup(path)) == NULL) {
		free(p);
		if (errmsg && errmsg_len)
			snprintf(errmsg, errmsg_len, "out of memory");
		return GPMDB_NOMEM;
	}
	p->fd = -1;
	p->wal.fd = -1;
	/* the test suites' encoded pass (tests/README, docs/testing.md) */
	p->auto_encode = getenv("GPMDB_AUTO_ENCODE") &&
			 !strcmp(getenv("GPMDB_AUTO_ENCODE"), "1");
	/* tests: every TEXT column that can be compressed is, smaller or
	 * not (the readers of compressed TEXT on every statement) */
	p->zt_always = getenv("GPMDB_ZTEXT_ALWAYS") &&
		       !strcmp(getenv("GPMDB_ZTEXT_ALWAYS"), "1");
	stamp_all(p); /* this handle's first stamp, unlike any other's */
	p->no_lines = getenv("GPMDB_TEST_NO_LINES") &&
		      !strcmp(getenv("GPMDB_TEST_NO_LINES"), "1");
	p->lk.shm_fd = -1;
	p->lk.fd = -1;
	p->lk.own_fd = -1;
	p->readonly = o.readonly;
	p->lk.quiet = o.quiet_reader;

	rc = path[0] == '\0' || strcmp(path, ":memory:") == 0
		 ? open_memory(p, &o, &created)
		 : open_fd(p, &o, &created);
	/* a file that is no pool gets no <pool>-shm beside it */
	/* a copy's pending deltas (delta.c), before anything reads it */
	if (rc == GPMDB_OK && !created && !p->memory)
		rc = delta_open_apply(p);
	if (rc == GPMDB_OK)
		rc = created ? create_file(p, p->fd, &o)
			     : validate_file(p, p->fd);
	if (rc == GPMDB_OK)
		rc = lock_open(p, &alone);
	t0 = now_ms();
	/* a crashed msync-mode writer's commit log, into the file first
	 * (only when alone: others' logs are live) */
	if (rc == GPMDB_OK && !o.readonly && !created && alone)
		rc = wal_recover(p, (uint64_t)pool_file_size(p), &wal_rec);
	if (rc == GPMDB_OK && o.readonly && p->lk.on &&
	    o.durability == STG_DUR_AUTO && lock_mode(p) != STG_DUR_AUTO)
		o.durability = lock_mode(p); /* as the writers see it */
	if (rc == GPMDB_OK)
		rc = map_file(p, o.readonly ? STG_DUR_AUTO : o.durability);
	if (rc == GPMDB_OK && !created && !p->memory)
		rc = delta_after_lock(p);
	if (rc == GPMDB_OK && o.readonly) {
		p->dur = o.durability;
		if (p->dur == STG_DUR_AUTO)
			p->dur = on_tmpfs(p->fd) ? STG_DUR_PMEM : STG_DUR_MSYNC;
	}
	if (rc == GPMDB_OK && !o.readonly)
		rc = lock_set_mode(p, p->dur);
	if (rc == GPMDB_OK && ((alone && !o.readonly) || !p->lk.on)) {
		if (o.readonly)
			rc = wal_apply_readonly(p);
		if (rc == GPMDB_OK)
			rc = mlog_open(p, &recovered);
		/* recovery's writes, in place now (it is idempotent) */
		if (rc == GPMDB_OK && recovered && p->wal.on)
			rc = wal_flush_recovery(p);
		if (recovered || wal_rec)
			p->recovery_ms = now_ms() - t0;
	} else if (rc == GPMDB_OK) {
		/* others may be writing: this view catches up as a reader
		 * (a dead writer's transaction undone in memory, or under the
		 * write lock in pmem mode); to write it reloads the log */
		rc = stg_read_begin(p);
		if (rc == GPMDB_OK)
			stg_read_end(p);
		else if (rc == GPMDB_BUSY)
			rc = GPMDB_OK; /* a pmem writer: the first read waits */
		p->lk.wstale = true;
	}
	if (rc == GPMDB_OK)
		rc = alloc_open(p);
	if (rc != GPMDB_OK) {
		if (errmsg && errmsg_len)
			snprintf(errmsg, errmsg_len, "%s", stg_errmsg(p));
		if (created && !p->memory)
			unlink(p->path); /* ours, never complete */
		lock_close(p, alone);	 /* alone: <pool>-shm goes too */
		pool_free(p);
		return rc;
	}
	lock_open_done(p);
	p->bytes_persisted = 0;
	p->txn_bytes_persisted = 0;
	pool_clear_err(p);
	*out = p;
	return GPMDB_OK;
}

/* The last connection to close a pool gives the free chunks at its end
 * back to the file system: growth adds an eighth of the pool for what
 * comes next (a TPC-H SF1 load left 158 MB of it), and a trim at commit
 * frees the ends of extents.  An eighth of what is in use stays free at
 * the end (what one growth adds): cut to nothing, every next process's
 * first write that allocates grew the pool again (a fresh process's GPU
 * UPDATE of a 50M-row table spent 163-172 ms of its 0.48 s growing for
 * its log segment, H200), and each growth maps the pool again.  Only a
 * cut of at least 1 MiB and 1/32 of the pool, never below the initial
 * size.  The smaller root.pool_size
 * is a transaction of its own; the file is cut after the log is in
 * place (stg_close), and a crash between the two leaves a file longer
 * than its pool, which opens as after a growth rolled back (and is cut at
 * the next last close).  Not in a copy made by a backup.  The size the
 * file should have, 0 for none. */
static uint64_t shrink_tail(stg_pool *p)
{
	uint64_t size = pool_root(p)->pool_size, c = p->sb.chunk_size;
	uint64_t limit = (size - p->sb.data_off) / c, tail = 0, keep, min;
	int rc;

	if (p->readonly || p->broken || p->memory || p->in_txn)
		return 0;
	/* a copy (backup.c) is left as it is: the transaction would stamp
	 * it, and the next backup into it would be full */
	if (p->sb.copy_magic == STG_COPY_MAGIC)
		return 0;
	if (limit == 0)
		return size;
	while (tail < limit && !alloc_bit(p, limit - 1 - tail))
		tail++;
	min = p->sb.initial_size > p->sb.data_off
		  ? (p->sb.initial_size - p->sb.data_off + c - 1) / c
		  : 0;
	keep = limit - tail +
	       ((limit - tail) / 8 < tail ? (limit - tail) / 8 : tail);
	if (keep < min)
		keep = min;
	if (keep >= limit || (limit - keep) * c < (1u << 20) ||
	    (limit - keep) * 32 < limit)
		return size;
	if (stg_begin(p) != GPMDB_OK) {
		pool_clear_err(p);
		return 0;
	}
	rc = mlog_set_u64(p, p->sb.root_off + offsetof(stg_root, pool_size),
			  p->sb.data_off + keep * c);
	if (rc == GPMDB_OK)
		rc = stg_commit(p);
	if (rc != GPMDB_OK) {
		if (p->in_txn)
			stg_rollback(p);
		pool_clear_err(p);
		return 0;
	}
	stg_crash_point("shrink.commit");
	return p->sb.data_off + keep * c;
}

int stg_close(stg_pool *p)
{
	int rc = GPMDB_OK;
	uint64_t shrink = 0;
	bool last;

	if (p == NULL)
		return GPMDB_OK;
	pool_ahead_end(p);
	if (p->in_txn && !p->broken)
		rc = stg_rollback(p); /* like SQLite: close rolls back */
	p->lk.reading = 0;
	last = lock_last(p);
	if (last && rc == GPMDB_OK)
		shrink = shrink_tail(p);
	if (p->wal.on) {
		int rc2 = wal_close(p, last && !p->readonly);

		if (rc == GPMDB_OK)
			rc = rc2;
	} else if (last && p->pm_resv && !p->readonly && !p->memory &&
		   !p->broken && rc == GPMDB_OK) {
		/* pmem mode: frames that writers beside readers left go into
		 * the file, and the log goes */
		struct stat st;
		bool rec = false;

		if (fstat(p->fd, &st) == 0)
			rc = wal_recover(p, (uint64_t)st.st_size, &rec);
	}
	/* the log in place (msync: a checkpoint may write pages of the
	 * tail freed since), the file cut; failing, it stays longer */
	if (shrink && rc == GPMDB_OK) {
		struct stat st;

		if (fstat(p->fd, &st) == 0 && (uint64_t)st.st_size > shrink &&
		    ftruncate(p->fd, (off_t)shrink) != 0)
			shrink = 0;
	}
	lock_close(p, last);
	pool_free(p);
	return rc;
}

int pool_err_io(stg_pool *p, int err, const char *what, const char *path)
{
	if (err == ENOSPC || err == EDQUOT || err == EFBIG)
		return pool_err(p, GPMDB_FULL,
				"database or disk is full: %s %s", what, path);
	return pool_err(p, GPMDB_IOERR, "disk I/O error: %s %s: %s", what, path,
			err ? strerror(err) : "short read");
}

int pool_fsync_dir(const char *path)
{
	char dir[4200];
	int dfd, rc;

	snprintf(dir, sizeof(dir), "%s", path);
	dfd = open(dirname(dir), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -1;
	rc = fsync(dfd);
	close(dfd);
	return rc;
}

uint64_t pool_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void stg_get_write_times(const stg_pool *p, stg_write_times *out)
{
	*out = p->wt;
}

stg_durability stg_pool_durability(const stg_pool *p)
{
	return p->wal.shadow ? p->wal.shadow_dur : p->dur;
}

bool stg_pool_writes_private(const stg_pool *p)
{
	return p->dur == STG_DUR_MSYNC && !p->readonly;
}

void stg_pool_set_in_place_only(stg_pool *p, bool on)
{
	if (p)
		p->in_place_only = on;
}

bool stg_pool_readonly(const stg_pool *p)
{
	return p->readonly;
}

int stg_get_stats(stg_pool *p, stg_stats *out)
{
	if (p == NULL || out == NULL)
		return GPMDB_MISUSE;
	memset(out, 0, sizeof(*out));
	out->pool_size = p->broken ? 0 : pool_root(p)->pool_size;
	out->max_size = p->sb.max_size;
	out->used_bytes = p->used_chunks * p->sb.chunk_size;
	out->bytes_persisted = p->bytes_persisted;
	out->last_txn_bytes_persisted = p->txn_bytes_persisted;
	out->recovery_ms = p->recovery_ms;
	out->recovered_entries = p->recovered_entries;
	out->durability = stg_pool_durability(p);
	out->is_pmem = p->is_pmem;
	out->beside_readers = p->wal.shadows;
	out->beside_commits = p->wal.shadow_commits;
	return GPMDB_OK;
}

void *stg_pool_base(stg_pool *p, uint64_t *len)
{
	if (len)
		*len = p->map_len;
	return p->base;
}

/*
 * Why a second mapping: a connection that goes beside readers (a backup's
 * or a reader's snapshot) maps the pool privately over its base, which
 * takes the GPU's registrations of those pages with it (the driver pins
 * pages, not addresses); registering the written tablets again after each
 * such flip cost the GPU writer beside backups 7% of its time and the
 * unregistering 100 ms a flip
 * (tpc/results/backup-20gb-gpu-alias-2026-11-29-H200.md). Kernels store through
 * this mapping instead: the same file pages, shared always, so its
 * registrations live as long as the connection.  The GPU writers take the
 * CPU-assisted path while the base is private (stg_pool_writes_private), so
 * nothing stores through it then.
 */
static int pool_alias_fit(stg_pool *p)
{
	void *r;

	if (p->gpu_alias == NULL) {
		r = mmap(NULL, p->pm_resv, PROT_NONE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (r == MAP_FAILED)
			return -1;
		p->gpu_alias = r;
		p->gpu_alias_len = 0;
	}
	if (p->gpu_alias_len > p->map_len) {
		/* the file shrank: the registrations go first (some lie
		 * past its end now) */
		pool_gpu_forget_at(p->gpu_alias, p->gpu_alias_len);
		r = mmap(p->gpu_alias + p->map_len,
			 p->gpu_alias_len - p->map_len, PROT_NONE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE |
			     MAP_FIXED,
			 -1, 0);
		if (r == MAP_FAILED)
			return -1;
		p->gpu_alias_len = p->map_len;
	} else if (p->gpu_alias_len < p->map_len) {
		r = pool_map_shared_at(p, p->gpu_alias + p->gpu_alias_len,
				       p->map_len - p->gpu_alias_len,
				       (off_t)p->gpu_alias_len);
		if (r == MAP_FAILED)
			return -1;
		p->gpu_alias_len = p->map_len;
	}
	return 0;
}

void *stg_pool_gpu_base(stg_pool *p, uint64_t *len)
{
	/* read once: every GPU write asks */
	static int no_alias = -1;
	int na = __atomic_load_n(&no_alias, __ATOMIC_RELAXED);

	if (na < 0) {
		na = getenv("GPMDB_GPU_NO_ALIAS") != NULL;
		__atomic_store_n(&no_alias, na, __ATOMIC_RELAXED);
	}
	if (p->pm_resv && !p->memory && !p->readonly && !p->broken && !na &&
	    pool_alias_fit(p) == 0) {
		if (len)
			*len = p->gpu_alias_len;
		return p->gpu_alias;
	}
	return stg_pool_base(p, len);
}

const void *stg_pool_gpu_alias(const stg_pool *p)
{
	return p->gpu_alias && !p->wal.on && !p->private_map &&
		       p->gpu_alias_len == p->map_len
		   ? p->gpu_alias
		   : NULL;
}

/* ---- Crash points ---------------------------------------------------------
 */

#define CP_MAX 32

/* The variable is read again whenever it changes, so that a test can set
 * it in a forked child after the parent has reached crash points. */
static struct {
	char name[64];
	long target;
	long hits;
} cp_tab[CP_MAX];
static int cp_n;
static char cp_env[1024];

static void cp_parse(const char *env)
{
	char buf[sizeof(cp_env)], *save = NULL, *tok;

	snprintf(cp_env, sizeof(cp_env), "%s", env);
	snprintf(buf, sizeof(buf), "%s", env);
	cp_n = 0;
	for (tok = strtok_r(buf, ",", &save); tok && cp_n < CP_MAX;
	     tok = strtok_r(NULL, ",", &save)) {
		char *colon = strrchr(tok, ':');
		long n = 1;

		if (colon) {
			*colon = '\0';
			n = strtol(colon + 1, NULL, 10);
		}
		snprintf(cp_tab[cp_n].name, sizeof(cp_tab[cp_n].name), "%s",
			 tok);
		cp_tab[cp_n].target = n > 0 ? n : 1;
		cp_tab[cp_n].hits = 0;
		cp_n++;
	}
}

void crash_points_load(void)
{
	const char *env = getenv("GPMDB_CRASH_AT");

	if (env == NULL)
		env = "";
	if (strcmp(env, cp_env) != 0)
		cp_parse(env);
}

void stg_crash_point(const char *name)
{
	const char *env = getenv("GPMDB_CRASH_AT");
	int i;

	if (env == NULL)
		env = "";
	if (strcmp(env, cp_env) != 0)
		cp_parse(env);
	for (i = 0; i < cp_n; i++) {
		if (strcmp(cp_tab[i].name, name) != 0)
			continue;
		if (__atomic_add_fetch(&cp_tab[i].hits, 1, __ATOMIC_RELAXED) ==
		    cp_tab[i].target)
			raise(SIGKILL);
	}
}
