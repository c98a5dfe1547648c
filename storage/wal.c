/*
 * wal.c - msync mode: a private mapping written back through a commit log.
 *
 * On an ordinary file system every persist barrier is a disk flush, and an
 * undo log on a shared mapping needs one before each change (the kernel
 * may write a dirty page back at any time).  A one-row UPDATE cost a dozen
 * msyncs.  So in msync mode the pool is mapped MAP_PRIVATE: stores stay in
 * this process's copy-on-write pages until the commit decides where they
 * go, and the undo log in the mapping only serves rollback.  The persist
 * helpers (pool_flush and friends) only mark pages dirty.
 *
 * Commit (small transactions): the dirty pages, as they are after the
 * commit record and the log's truncation, go to "<pool>-wal" as one frame
 * (header, page offsets, page images, crc); one fdatasync of that file is
 * the commit point.  The pages are then written in place with pwrite (not
 * synced).  When the log passes WAL_CKPT_BYTES, a checkpoint fdatasyncs
 * the pool file, drops the private copies written since the last one
 * (MADV_DONTNEED: the mapping reads the file again; dropping at every
 * commit cost a third of a one-row UPDATE in faults) and starts the log
 * over under a new salt.  Opening replays the frames of the current salt
 * in order (page images: idempotent), fdatasyncs the pool and removes the
 * log.
 *
 * Two kinds of pages never go to the file in a small commit: the undo
 * log's region (the file keeps an empty log; the undo entries serve only
 * rollback in this process) and extents the commit frees again (the HCL
 * segment of an UPDATE).  A one-row UPDATE writes the data page and the
 * allocator's bitmap page.
 *
 * Space the transaction allocated ("fresh": nothing committed lives
 * there) may reach the file at any time.  Extents of WAL_SHARED_MIN bytes
 * or more (tablets, HCL segments of big batches, index builds) are mapped
 * MAP_SHARED while the transaction runs, so bulk writes go straight to the
 * page cache; one fdatasync of the pool before the frame makes them
 * durable, and they go back to MAP_PRIVATE after the commit.
 *
 * Big transactions (more than WAL_BIG_BYTES of committed pages changed)
 * do not double their writes through the log: after a checkpoint, the
 * undo log and the fresh pages go in place and are fdatasynced, then the
 * changed pages, then the commit record, the frees and the emptied log -
 * the undo protocol of pmem mode with five barriers, recovered by
 * mlog_open.
 *
 * Before the commit point nothing of the transaction is in the file
 * except fresh space, so a failed write rolls back by dropping the
 * private pages.
 *
 * The mapping is a reservation of max_size bytes, so growing the pool
 * maps the new range in place: the base never moves.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "crashpoints.h"
#include "internal.h"

#define WAL_PAGE	4096ull
#define WAL_MAGIC	0x4c41574244504d47ull /* "GMPDBWAL" little-endian */
#define WAL_FRAME_MAGIC 0x454d4152u	      /* "RAME" */
#define WAL_VERSION	1u
#define WAL_HDR_BYTES	WAL_PAGE
/* Start the log over once it holds this much (then the next commit
 * writes from the front again: no file growth, cheaper fdatasync). */
#define WAL_CKPT_BYTES (16ull << 20)
/* Transactions changing more committed bytes than this use the undo
 * protocol in place instead of a log frame. */
#define WAL_BIG_BYTES (64ull << 20)
/* Fresh extents this large are mapped shared while the transaction runs. */
#define WAL_SHARED_MIN (1ull << 20)
/* The crash tests shrink the three (GPMDB_TEST_WAL_CKPT, _BIG, _SHARED,
 * in bytes) so that small workloads take every path. */
static uint64_t env_bytes(const char *name, uint64_t dflt)
{
	const char *v = getenv(name);
	unsigned long long x;

	if (v == NULL || sscanf(v, "%llu", &x) != 1 || x == 0)
		return dflt;
	return (uint64_t)x;
}
/* Private fresh pages up to this much go in the frame, not in place. */
#define WAL_FRESH_INLINE (1ull << 20)
/* Dirty pages listed as well as marked, up to this many. */
#define WAL_DLIST 256

typedef struct {
	uint64_t magic;
	uint32_t version;
	uint32_t page;
	uint8_t uuid[16];
	uint64_t salt;
	uint32_t pad;
	uint32_t crc; /* of the bytes before it */
} wal_hdr;

typedef struct {
	uint32_t magic;
	uint32_t npages;
	uint64_t salt;
	uint64_t seq;
	uint32_t pad;
	uint32_t crc; /* of this header (crc 0), the offsets and the pages */
} wal_frame;

/* ---- Small helpers ------------------------------------------------------ */

static int wal_pwrite(int fd, const void *buf, size_t n, off_t off)
{
	return pool_pwrite_full(fd, buf, n, off);
}

/* A short read is an error here (errno 0: "short read"). */
static int wal_pread(int fd, void *buf, size_t n, off_t off)
{
	size_t got = 0;

	if (pool_pread_full(fd, buf, n, off, &got) != 0)
		return -1;
	if (got != n) {
		errno = 0;
		return -1;
	}
	return 0;
}

static uint32_t hdr_crc(const wal_hdr *h)
{
	return (uint32_t)crc32(0L, (const Bytef *)h, offsetof(wal_hdr, crc));
}

static uint64_t frame_head_bytes(uint64_t npages)
{
	uint64_t b = sizeof(wal_frame) + 8 * npages;

	return (b + WAL_PAGE - 1) / WAL_PAGE * WAL_PAGE;
}

static int io_err(stg_pool *p, const char *what, const char *path)
{
	return pool_err_io(p, errno, what, path);
}

bool wal_active(const stg_pool *p)
{
	return p->wal.on;
}

/* ---- The mapping -------------------------------------------------------- */

int wal_map(stg_pool *p, uint64_t file_len)
{
	uint64_t resv = p->sb.max_size > file_len ? p->sb.max_size : file_len;
	void *r, *m;
	int err;

	r = mmap(NULL, (size_t)resv, PROT_NONE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (r == MAP_FAILED) {
		err = errno;
		return pool_err(p, GPMDB_IOERR,
				"cannot reserve %llu bytes of address space "
				"for %s: %s",
				(unsigned long long)resv, p->path,
				strerror(err));
	}
	m = mmap(r, (size_t)file_len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_FIXED | MAP_NORESERVE, p->fd, 0);
	if (m == MAP_FAILED) {
		err = errno;
		munmap(r, (size_t)resv);
		return pool_err(p, GPMDB_IOERR, "cannot map %s: %s", p->path,
				strerror(err));
	}
	p->wal.dwords = (resv / WAL_PAGE + 63) / 64;
	p->wal.dbits = calloc(p->wal.dwords, 8);
	p->wal.wbits = calloc(p->wal.dwords, 8);
	if (p->wal.dbits == NULL || p->wal.wbits == NULL) {
		free(p->wal.dbits);
		free(p->wal.wbits);
		munmap(r, (size_t)resv);
		return pool_err(p, GPMDB_NOMEM, "out of memory");
	}
	p->base = r;
	p->map_len = (size_t)file_len;
	p->wal.resv = (size_t)resv;
	p->wal.on = true;
	p->wal.fd = -1;
	p->wal.dlo = UINT64_MAX;
	p->wal.wlo = UINT64_MAX;
	p->wal.ckpt_bytes = env_bytes("GPMDB_TEST_WAL_CKPT", WAL_CKPT_BYTES);
	p->wal.big_bytes = env_bytes("GPMDB_TEST_WAL_BIG", WAL_BIG_BYTES);
	p->wal.shared_min = env_bytes("GPMDB_TEST_WAL_SHARED", WAL_SHARED_MIN);
	p->is_pmem = false;
	return GPMDB_OK;
}

int wal_grow(stg_pool *p, uint64_t new_size)
{
	void *m;
	int err;

	if (new_size > p->wal.resv)
		return pool_err(p, GPMDB_FULL,
				"database or disk is full: %s cannot grow "
				"past its maximum size",
				p->path);
	m = mmap(p->base + p->map_len, (size_t)(new_size - p->map_len),
		 PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_FIXED | MAP_NORESERVE, p->fd,
		 (off_t)p->map_len);
	if (m == MAP_FAILED) {
		err = errno;
		return pool_err(p, GPMDB_IOERR, "cannot map %s: %s", p->path,
				strerror(err));
	}
	p->map_len = (size_t)new_size;
	return GPMDB_OK;
}

void wal_unmap(stg_pool *p)
{
	if (p->base)
		munmap(p->base, p->wal.resv);
	p->base = NULL;
	free(p->wal.dbits);
	free(p->wal.wbits);
	p->wal.wbits = NULL;
	free(p->wal.fresh);
	free(p->wal.pages);
	free(p->wal.runs);
	p->wal.runs = NULL;
	p->wal.dbits = NULL;
	p->wal.fresh = NULL;
	p->wal.pages = NULL;
	if (p->wal.fd >= 0)
		close(p->wal.fd);
	p->wal.fd = -1;
}

/* ---- Dirty pages -------------------------------------------------------- */

void wal_track(stg_pool *p, uint64_t off, uint64_t len)
{
	uint64_t pg, last;

	if (len == 0)
		return;
	last = (off + len - 1) / WAL_PAGE;
	for (pg = off / WAL_PAGE; pg <= last; pg++) {
		uint64_t bit = 1ull << (pg & 63), w = pg >> 6, old, lo, hi;

		if (__atomic_load_n(&p->wal.dbits[w], __ATOMIC_RELAXED) & bit)
			continue;
		old =
		    __atomic_fetch_or(&p->wal.dbits[w], bit, __ATOMIC_RELAXED);
		if (old & bit)
			continue;
		lo = __atomic_load_n(&p->wal.dlo, __ATOMIC_RELAXED);
		while (w < lo && !__atomic_compare_exchange_n(
				     &p->wal.dlo, &lo, w, false,
				     __ATOMIC_RELAXED, __ATOMIC_RELAXED))
			;
		hi = __atomic_load_n(&p->wal.dhi, __ATOMIC_RELAXED);
		while (w > hi && !__atomic_compare_exchange_n(
				     &p->wal.dhi, &hi, w, false,
				     __ATOMIC_RELAXED, __ATOMIC_RELAXED))
			;
		__atomic_add_fetch(&p->wal.ndirty, 1, __ATOMIC_RELAXED);
		/* a short list too: a commit of a few pages in a big pool
		 * then reads no bitmap */
		uint64_t k =
		    __atomic_fetch_add(&p->wal.dlist_n, 1, __ATOMIC_RELAXED);
		if (k < WAL_DLIST)
			p->wal.dlist[k] = pg;
	}
}

/* The dirty pages, ascending, into p->wal.pages; clears nothing. */
static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int collect_dirty(stg_pool *p, size_t *n)
{
	size_t k = 0, need = p->wal.ndirty;

	*n = 0;
	if (need == 0)
		return GPMDB_OK;
	if (need > p->wal.cap_pages) {
		uint64_t *np = realloc(p->wal.pages, need * sizeof(*np));

		if (np == NULL)
			return pool_err(p, GPMDB_NOMEM, "out of memory");
		p->wal.pages = np;
		p->wal.cap_pages = need;
	}
	if (need <= WAL_DLIST && p->wal.dlist_n == need) {
		memcpy(p->wal.pages, p->wal.dlist, need * sizeof(uint64_t));
		qsort(p->wal.pages, need, sizeof(uint64_t), cmp_u64);
		*n = need;
		return GPMDB_OK;
	}
	for (uint64_t w = p->wal.dlo; w <= p->wal.dhi && k < need; w++) {
		uint64_t b = p->wal.dbits[w];

		while (b && k < need) {
			p->wal.pages[k++] =
			    w * 64 + (uint64_t)__builtin_ctzll(b);
			b &= b - 1;
		}
	}
	*n = k;
	return GPMDB_OK;
}

/* Clears a page bitmap's words [*lo, *hi] when *n bits are set. */
static void bits_clear(uint64_t *bits, uint64_t *lo, uint64_t *hi, uint64_t *n)
{
	if (*n)
		memset(bits + *lo, 0, (*hi - *lo + 1) * 8);
	*n = 0;
	*lo = UINT64_MAX;
	*hi = 0;
}

static void clear_dirty(stg_pool *p)
{
	if (p->wal.ndirty <= WAL_DLIST && p->wal.dlist_n == p->wal.ndirty) {
		for (uint64_t i = 0; i < p->wal.ndirty; i++)
			p->wal.dbits[p->wal.dlist[i] >> 6] = 0;
		p->wal.ndirty = 0;
		p->wal.dlo = UINT64_MAX;
		p->wal.dhi = 0;
	} else {
		bits_clear(p->wal.dbits, &p->wal.dlo, &p->wal.dhi,
			   &p->wal.ndirty);
	}
	p->wal.dlist_n = 0;
}

/* ---- Fresh extents ------------------------------------------------------ */

/* Does the log hold a page of [off, off + len)?  Such a page must not be
 * written in place outside a frame until a checkpoint: replaying the
 * log after a crash would put the frame's older image over it. */
static bool in_frames(const stg_pool *p, uint64_t off, uint64_t len)
{
	uint64_t pg = off / WAL_PAGE,
		 end = (off + len + WAL_PAGE - 1) / WAL_PAGE;

	if (p->wal.wn == 0)
		return false;
	for (; pg < end; pg++)
		if (p->wal.wbits[pg >> 6] & (1ull << (pg & 63)))
			return true;
	return false;
}

static int checkpoint(stg_pool *p, const char *crash_point);

int wal_fresh(stg_pool *p, uint64_t off, uint64_t len)
{
	wal_extent *x;

	if (p->wal.nfresh == p->wal.cap_fresh) {
		size_t nc = p->wal.cap_fresh ? p->wal.cap_fresh * 2 : 16;
		wal_extent *nf = realloc(p->wal.fresh, nc * sizeof(*nf));

		if (nf == NULL)
			return pool_err(p, GPMDB_NOMEM, "out of memory");
		p->wal.fresh = nf;
		p->wal.cap_fresh = nc;
	}
	x = &p->wal.fresh[p->wal.nfresh];
	x->off = off;
	x->len = len;
	x->shared = false;
	x->dead = false;
	/* Readers out for a moment: a snapshot older than the commit that
	 * freed this space may still read it; later ones never do. */
	if (len >= p->wal.shared_min && off % WAL_PAGE == 0 &&
	    len % WAL_PAGE == 0 && lock_readers_out(p)) {
		bool ok = !in_frames(p, off, len) ||
			  (!p->wal.pend && checkpoint(p, NULL) == GPMDB_OK);

		lock_readers_back(p);
		pool_clear_err(p);
		/* Nothing committed lives here: let the stores go to the
		 * page cache (and the kernel write them back) directly. */
		if (ok && mmap(pool_at(p, off), (size_t)len,
			       PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
			       p->fd, (off_t)off) != MAP_FAILED) {
			x->shared = true;
			p->wal.shared_used = true;
		}
	}
	p->wal.nfresh++;
	p->wal.fresh_sorted = false;
	return GPMDB_OK;
}

void wal_freed(stg_pool *p, uint64_t off, uint64_t len)
{
	for (size_t i = 0; i < p->wal.nfresh; i++) {
		wal_extent *x = &p->wal.fresh[i];

		if (x->off >= off && x->off + x->len <= off + len)
			x->dead = true;
	}
}

static int cmp_ext(const void *a, const void *b)
{
	const wal_extent *x = a, *y = b;

	return x->off < y->off ? -1 : x->off > y->off;
}

/* The fresh extent holding page pg, or NULL. */
static const wal_extent *fresh_of(stg_pool *p, uint64_t pg)
{
	uint64_t off = pg * WAL_PAGE;
	size_t lo = 0, hi = p->wal.nfresh;

	if (p->wal.nfresh == 0)
		return NULL;
	if (!p->wal.fresh_sorted) {
		qsort(p->wal.fresh, p->wal.nfresh, sizeof(wal_extent), cmp_ext);
		p->wal.fresh_sorted = true;
	}
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		const wal_extent *x = &p->wal.fresh[mid];

		if (off < x->off)
			hi = mid;
		else if (off >= x->off + x->len)
			lo = mid + 1;
		else
			return x;
	}
	return NULL;
}

/* Fresh extents go back to private mappings (their bytes are in the page
 * cache, so the mapping reads the same). */
static void end_fresh(stg_pool *p)
{
	for (size_t i = 0; i < p->wal.nfresh; i++) {
		wal_extent *x = &p->wal.fresh[i];

		if (x->shared && mmap(pool_at(p, x->off), (size_t)x->len,
				      PROT_READ | PROT_WRITE,
				      MAP_PRIVATE | MAP_FIXED | MAP_NORESERVE,
				      p->fd, (off_t)x->off) == MAP_FAILED)
			p->broken = true; /* cannot happen short of ENOMEM */
	}
	p->wal.nfresh = 0;
	p->wal.shared_used = false;
}

/* ---- Writing pages ------------------------------------------------------ */

typedef bool (*page_pick)(stg_pool *p, uint64_t pg);

/* A run written in place whose private copy the next checkpoint drops. */
static int remember_run(stg_pool *p, uint64_t off, uint64_t len)
{
	if (p->wal.nruns == p->wal.cap_runs) {
		size_t nc = p->wal.cap_runs ? p->wal.cap_runs * 2 : 256;
		wal_extent *nr = realloc(p->wal.runs, nc * sizeof(*nr));

		if (nr == NULL)
			return GPMDB_NOMEM;
		p->wal.runs = nr;
		p->wal.cap_runs = nc;
	}
	p->wal.runs[p->wal.nruns++] = (wal_extent){off, len, false, false};
	return GPMDB_OK;
}

static bool in_log(const stg_pool *p, uint64_t pg);

/* Drops the private copies of the runs, except pages the running
 * transaction changed again (the big path checkpoints before it writes)
 * and the log's (the file's log is older than the mapping's). */
static void drop_runs(stg_pool *p)
{
	for (size_t i = 0; i < p->wal.nruns; i++) {
		uint64_t pg = p->wal.runs[i].off / WAL_PAGE,
			 end = pg + p->wal.runs[i].len / WAL_PAGE;

		while (pg < end) {
			uint64_t q = pg;

			while (q < end && !in_log(p, q) &&
			       !(p->wal.dbits[q >> 6] & (1ull << (q & 63))))
				q++;
			if (q > pg)
				(void)madvise(pool_at(p, pg * WAL_PAGE),
					      (q - pg) * WAL_PAGE,
					      MADV_DONTNEED);
			pg = q + 1;
		}
	}
	p->wal.nruns = 0;
}

/* pwrites the picked pages of list[0..n) in place, runs coalesced, and
 * (drop) drops their private copies. */
static int write_in_place(stg_pool *p, const uint64_t *list, size_t n,
			  page_pick pick, bool drop)
{
	size_t i = 0;

	while (i < n) {
		size_t j;

		if (pick && !pick(p, list[i])) {
			i++;
			continue;
		}
		for (j = i + 1; j < n && list[j] == list[j - 1] + 1 &&
				(!pick || pick(p, list[j]));
		     j++)
			;
		uint64_t off = list[i] * WAL_PAGE, len = (j - i) * WAL_PAGE;

		if (off + len > p->map_len)
			len = off < p->map_len ? p->map_len - off : 0;
		if (len && wal_pwrite(p->fd, pool_at(p, off), len, (off_t)off))
			return io_err(p, "writing", p->path);
		if (len && drop)
			(void)madvise(pool_at(p, off), len, MADV_DONTNEED);
		else if (len && !drop && remember_run(p, off, len) != GPMDB_OK)
			(void)madvise(pool_at(p, off), len, MADV_DONTNEED);
		i = j;
	}
	return GPMDB_OK;
}

static bool pick_shared(stg_pool *p, uint64_t pg)
{
	const wal_extent *x = fresh_of(p, pg);

	return x && x->shared;
}

static bool pick_fresh_private(stg_pool *p, uint64_t pg)
{
	const wal_extent *x = fresh_of(p, pg);

	return x && !x->shared;
}

static bool in_log(const stg_pool *p, uint64_t pg)
{
	uint64_t off = pg * WAL_PAGE;

	return off + WAL_PAGE > p->sb.log_off &&
	       off < p->sb.log_off + p->sb.log_size;
}

/* What a small commit writes: not the undo log, not shared fresh space
 * (durable already), not space the commit freed. */
static bool pick_commit(stg_pool *p, uint64_t pg)
{
	const wal_extent *x;

	if (in_log(p, pg))
		return false;
	x = fresh_of(p, pg);
	return !x || (!x->shared && !x->dead);
}

static bool pick_undo(stg_pool *p, uint64_t pg)
{
	return pick_fresh_private(p, pg) || in_log(p, pg);
}

static bool pick_rest(stg_pool *p, uint64_t pg)
{
	return !pick_undo(p, pg) && !pick_shared(p, pg);
}

static int sync_pool(stg_pool *p)
{
	if (fdatasync(p->fd) != 0)
		return io_err(p, "flushing", p->path);
	return GPMDB_OK;
}

/* ---- The log file ------------------------------------------------------- */

static void wal_path(const stg_pool *p, char *buf, size_t n)
{
	snprintf(buf, n, "%s-wal", p->path);
}

static int write_hdr(stg_pool *p, int fd, uint64_t salt)
{
	char page[WAL_HDR_BYTES];
	wal_hdr h;

	memset(page, 0, sizeof(page));
	memset(&h, 0, sizeof(h));
	h.magic = WAL_MAGIC;
	h.version = WAL_VERSION;
	h.page = (uint32_t)WAL_PAGE;
	memcpy(h.uuid, p->sb.uuid, 16);
	h.salt = salt;
	h.crc = hdr_crc(&h);
	memcpy(page, &h, sizeof(h));
	return wal_pwrite(fd, page, sizeof(page), 0);
}

static uint64_t new_salt(void)
{
	uint64_t s = 0;

	if (getrandom(&s, sizeof(s), GRND_NONBLOCK) != sizeof(s))
		s = (uint64_t)time(NULL) * 2654435761u ^ (uint64_t)getpid();
	return s ? s : 1;
}

/* Opens (creating) the log file with a fresh header, durable with its
 * directory entry before any frame counts on it. */
static int open_log(stg_pool *p)
{
	char path[4200];
	int fd;

	wal_path(p, path, sizeof(path));
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return io_err(p, "creating", path);
	p->wal.salt = new_salt();
	if (write_hdr(p, fd, p->wal.salt) != 0 || fdatasync(fd) != 0) {
		int rc = io_err(p, "writing", path);

		close(fd);
		return rc;
	}
	if (pool_fsync_dir(path) != 0) {
		int rc = io_err(p, "syncing the directory of", path);

		close(fd);
		return rc;
	}
	p->wal.fd = fd;
	p->wal.tail = WAL_HDR_BYTES;
	p->wal.seq = 1;
	p->wal.pend = false;
	lock_published_in_place(p, p->wal.salt, 0);
	lock_published_frame(p, p->wal.salt, 0);
	return GPMDB_OK;
}

/* The pool is durable in place: the frames are dead (a new salt).  The
 * caller keeps readers out (lock_readers_out) and has every frame in
 * place (not pend).  always: a new salt even with no frame, so that
 * readers drop their pages (the big path writes the file in place). */
static int checkpoint_x(stg_pool *p, const char *crash_point, bool always)
{
	char path[4200];

	if (p->wal.pend)
		return pool_err(p, GPMDB_INTERNAL,
				"checkpoint of %s with frames not in place",
				p->path);
	if (p->wal.fd < 0 && always)
		return open_log(p);
	if (p->wal.fd < 0 || (p->wal.tail == WAL_HDR_BYTES && !always))
		return GPMDB_OK;
	if (sync_pool(p) != GPMDB_OK)
		return p->errcode;
	drop_runs(p);
	if (crash_point)
		stg_crash_point(crash_point);
	wal_path(p, path, sizeof(path));
	p->wal.salt = new_salt();
	if (write_hdr(p, p->wal.fd, p->wal.salt) != 0 ||
	    fdatasync(p->wal.fd) != 0)
		return io_err(p, "writing", path);
	p->wal.tail = WAL_HDR_BYTES;
	p->wal.seq = 1;
	p->wal.checkpoints++;
	bits_clear(p->wal.wbits, &p->wal.wlo, &p->wal.whi, &p->wal.wn);
	lock_published_in_place(p, p->wal.salt, 0);
	lock_published_frame(p, p->wal.salt, 0);
	return GPMDB_OK;
}

static int checkpoint(stg_pool *p, const char *crash_point)
{
	return checkpoint_x(p, crash_point, false);
}

/* Every page of the frames since the checkpoint, in place from this
 * connection's view (current: called right after a commit or a
 * catch-up), with readers out. */
static int flush_pending(stg_pool *p)
{
	size_t k = 0;
	int rc;

	if (!p->wal.pend)
		return GPMDB_OK;
	if (p->wal.wn > p->wal.cap_pages) {
		uint64_t *np = realloc(p->wal.pages, p->wal.wn * sizeof(*np));

		if (np == NULL)
			return pool_err(p, GPMDB_NOMEM, "out of memory");
		p->wal.pages = np;
		p->wal.cap_pages = p->wal.wn;
	}
	for (uint64_t w = p->wal.wlo; p->wal.wn && w <= p->wal.whi; w++)
		for (uint64_t b = p->wal.wbits[w]; b; b &= b - 1)
			p->wal.pages[k++] =
			    w * 64 + (uint64_t)__builtin_ctzll(b);
	rc = write_in_place(p, p->wal.pages, k, NULL, false);
	if (rc == GPMDB_OK) {
		p->wal.pend = false;
		lock_published_in_place(p, p->wal.salt, p->wal.seq - 1);
	}
	return rc;
}

/* Appends list[0..n) as one frame and makes it durable: the commit. */
static int write_frame(stg_pool *p, const uint64_t *list, size_t n)
{
	char path[4200];
	uint64_t hb = frame_head_bytes(n), *offs;
	wal_frame f = {WAL_FRAME_MAGIC, (uint32_t)n, p->wal.salt,
		       p->wal.seq,	0,	     0};
	char *head = calloc(1, hb);
	uLong c;
	size_t i;
	int rc = GPMDB_OK;

	wal_path(p, path, sizeof(path));
	if (head == NULL)
		return pool_err(p, GPMDB_NOMEM, "out of memory");
	offs = (uint64_t *)(head + sizeof(f));
	for (i = 0; i < n; i++)
		offs[i] = list[i] * WAL_PAGE;
	c = crc32(0L, (const Bytef *)&f, sizeof(f));
	c = crc32(c, (const Bytef *)offs, (uInt)(8 * n));
	for (i = 0; i < n; i++)
		c = crc32(c, (const Bytef *)pool_at(p, offs[i]),
			  (uInt)WAL_PAGE);
	f.crc = (uint32_t)c;
	memcpy(head, &f, sizeof(f));
	/* head and pages in one writev where it takes them all */
	for (i = 0; i <= n;) {
		struct iovec iov[512];
		int k = 0;
		size_t bytes = 0;
		off_t at =
		    (off_t)(p->wal.tail + (i ? hb + (i - 1) * WAL_PAGE : 0));

		if (i == 0) {
			iov[k].iov_base = head;
			iov[k++].iov_len = hb;
			bytes += hb;
		}
		for (size_t q = i ? i - 1 : 0; q < n && k < 512; q++, k++) {
			iov[k].iov_base = pool_at(p, offs[q]);
			iov[k].iov_len = WAL_PAGE;
			bytes += WAL_PAGE;
		}
		ssize_t w = pwritev(p->wal.fd, iov, k, at);

		if (w < 0 || (size_t)w != bytes) {
			/* short or interrupted: finish it piece by piece */
			size_t done = w > 0 ? (size_t)w : 0, po = 0;

			if (w < 0 && errno != EINTR) {
				rc = io_err(p, "writing", path);
				goto out;
			}
			for (int q = 0; q < k; q++) {
				size_t l = iov[q].iov_len;

				if (po + l > done &&
				    wal_pwrite(
					p->wal.fd,
					(char *)iov[q].iov_base +
					    (done > po ? done - po : 0),
					l - (done > po ? done - po : 0),
					at + (off_t)(po + (done > po ? done - po
								     : 0)))) {
					rc = io_err(p, "writing", path);
					goto out;
				}
				po += l;
			}
		}
		i = i == 0 ? (size_t)k : i + (size_t)k;
	}
	stg_crash_point("wal.frame");
	if (fdatasync(p->wal.fd) != 0) {
		rc = io_err(p, "flushing", path);
		goto out;
	}
	stg_crash_point("wal.commit");
	for (i = 0; i < n; i++) {
		uint64_t pg = list[i], w = pg >> 6;

		if (!(p->wal.wbits[w] & (1ull << (pg & 63)))) {
			p->wal.wbits[w] |= 1ull << (pg & 63);
			p->wal.wn++;
			if (w < p->wal.wlo)
				p->wal.wlo = w;
			if (w > p->wal.whi)
				p->wal.whi = w;
		}
	}
	p->wal.tail += hb + n * WAL_PAGE;
	lock_published_frame(p, p->wal.salt, p->wal.seq);
	p->wal.seq++;
	p->wal.frames++;
out:
	if (rc != GPMDB_OK) {
		/* the caller rolls back: a frame that did reach the file must
		 * not replay after a crash (the next frame overwrites it) */
		uint32_t zero = 0;

		(void)wal_pwrite(p->wal.fd, &zero, sizeof(zero),
				 (off_t)p->wal.tail);
	}
	free(head);
	return rc;
}

/* ---- Commit and rollback ------------------------------------------------ */

/* Drops the private copies of the pages list[0..n) (ascending), a run of
 * consecutive pages per call (keep_log: not the log's): one call per
 * page (a scattered UPDATE dirties every page of its column) made a
 * system call and a TLB shootdown of every thread each. */
static void drop_pages(stg_pool *p, const uint64_t *list, size_t n,
		       bool keep_log)
{
	for (size_t i = 0; i < n;) {
		size_t j = i;

		while (j < n && list[j] * WAL_PAGE < p->map_len &&
		       !(keep_log && in_log(p, list[j])) &&
		       (j == i || list[j] == list[j - 1] + 1))
			j++;
		if (j > i)
			(void)madvise(pool_at(p, list[i] * WAL_PAGE),
				      (j - i) * WAL_PAGE, MADV_DONTNEED);
		i = j > i ? j : i + 1;
	}
}

/* Before the commit point: forget the transaction by dropping the private
 * pages (the file still holds the state before it), and reload what DRAM
 * keeps of the log and the allocator. */
static void discard(stg_pool *p, size_t n)
{
	/* the log's pages stay: the file's log is empty and mlog_reload
	 * starts a new generation over them */
	drop_pages(p, p->wal.pages, n, true);
	clear_dirty(p);
	end_fresh(p);
	mlog_reload(p);
}

static int fail(stg_pool *p, int rc)
{
	size_t n = 0;
	char msg[sizeof(p->errmsg)];

	snprintf(msg, sizeof(msg), "%s", p->errmsg);
	if (collect_dirty(p, &n) != GPMDB_OK)
		n = 0; /* out of memory: the pages stay; reopen recovers */
	discard(p, n);
	return pool_err(p, rc, "%s; the transaction was rolled back", msg);
}

static int commit_small(stg_pool *p, size_t n)
{
	uint64_t fresh_bytes = 0;
	size_t i, k = 0;
	bool inline_fresh;
	int rc;

	for (i = 0; i < n; i++)
		if (pick_commit(p, p->wal.pages[i]) &&
		    fresh_of(p, p->wal.pages[i]))
			fresh_bytes += WAL_PAGE;
	inline_fresh = fresh_bytes <= WAL_FRESH_INLINE;
	/* in place only with no reader on an older snapshot and every
	 * frame in the file (the checkpoint); else in the frame */
	if (!inline_fresh && (p->wal.pend || !lock_readers_out(p)))
		inline_fresh = true;
	if (p->wal.shared_used || !inline_fresh) {
		/* fresh space first, durable before the frame names it */
		rc = GPMDB_OK;
		if (!inline_fresh && p->wal.wn)
			rc = checkpoint(p, NULL);
		if (rc == GPMDB_OK && !inline_fresh)
			rc = write_in_place(p, p->wal.pages, n,
					    pick_fresh_private, false);
		if (!inline_fresh)
			lock_readers_back(p);
		if (rc == GPMDB_OK)
			rc = sync_pool(p);
		if (rc != GPMDB_OK)
			return rc;
		stg_crash_point("wal.fresh");
	}
	/* the frame: the rest */
	for (i = 0; i < n; i++) {
		uint64_t pg = p->wal.pages[i];

		if (!pick_commit(p, pg) || (!inline_fresh && fresh_of(p, pg)))
			continue;
		p->wal.pages[k++] = pg;
	}
	if (p->wal.fd < 0 && (rc = open_log(p)) != GPMDB_OK)
		return rc;
	if (k && (rc = write_frame(p, p->wal.pages, k)) != GPMDB_OK)
		return rc;
	/* committed: in place (kept in p->wal.pages[0..k)) */
	p->wal.nframe = k;
	return GPMDB_OK;
}

/* Starts the log over once it is long: at once when no reader is on;
 * past four times the length, new readers wait a moment behind PENDING
 * so that the log cannot grow for ever under readers that overlap. */
static void ckpt_maybe(stg_pool *p)
{
	bool out;

	if (p->wal.stuck || p->wal.tail < p->wal.ckpt_bytes)
		return;
	out = lock_readers_out(p) || (p->wal.tail >= 4 * p->wal.ckpt_bytes &&
				      lock_readers_out_wait(p, 200));
	if (!out)
		return;
	if (flush_pending(p) != GPMDB_OK ||
	    checkpoint(p, "wal.checkpoint") != GPMDB_OK) {
		p->wal.stuck = true;
		pool_clear_err(p);
	}
	lock_readers_back(p);
}

/* The picked pages of the n collected (collect_dirty), in place and
 * durable. */
static int write_picked_synced(stg_pool *p, size_t n, page_pick pick)
{
	int rc = write_in_place(p, p->wal.pages, n, pick, true);

	return rc == GPMDB_OK ? sync_pool(p) : rc;
}

/* The pages changed since the last write, in place and durable. */
static int write_dirty_synced(stg_pool *p)
{
	size_t n = 0;
	int rc = collect_dirty(p, &n);

	if (rc == GPMDB_OK)
		rc = write_picked_synced(p, n, NULL);
	clear_dirty(p);
	return rc;
}

/* The undo protocol in place (readers out, a new salt written). */
static int big_commit(stg_pool *p, size_t n)
{
	int rc;

	if ((rc = write_in_place(p, p->wal.pages, n, pick_undo, false)) !=
		GPMDB_OK ||
	    (rc = sync_pool(p)) != GPMDB_OK)
		return fail(p, rc);
	stg_crash_point("wal.big_undo");
	if ((rc = write_in_place(p, p->wal.pages, n, pick_rest, false)) !=
		GPMDB_OK ||
	    (rc = sync_pool(p)) != GPMDB_OK)
		return fail(p, rc);
	stg_crash_point("wal.big_data");
	/* past this point the undo log in the file would bring the old
	 * rows back after a crash: the commit record decides */
	drop_pages(p, p->wal.pages, n, false);
	clear_dirty(p);
	/* The commit record, the frees, the log's truncation: each durable
	 * before the next is written.  Written together, a kill between
	 * their pages could leave the log emptied (its header comes first
	 * in the file) with the frees not applied, the HCL segment leaked,
	 * or the frees applied without the record, extents in use freed. */
	rc = mlog_commit_record(p);
	if (rc == GPMDB_OK)
		rc = write_dirty_synced(p);
	if (rc == GPMDB_OK) {
		stg_crash_point("wal.big_record");
		rc = mlog_commit_frees(p);
	}
	if (rc == GPMDB_OK)
		rc = write_dirty_synced(p);
	if (rc == GPMDB_OK) {
		stg_crash_point("wal.big_free");
		mlog_commit_end(p);
		rc = write_dirty_synced(p);
	}
	end_fresh(p);
	/* a failure here leaves a durable undo log and the data (the next
	 * open rolls the transaction back) or the commit record (the next
	 * open applies the frees) */
	if (rc != GPMDB_OK)
		p->broken = true;
	p->wal.big_commits++;
	return rc;
}

int wal_commit(stg_pool *p)
{
	size_t n = 0, i;
	uint64_t big = 0;
	int rc;

	rc = collect_dirty(p, &n);
	if (rc != GPMDB_OK)
		return fail(p, rc);
	for (i = 0; i < n; i++)
		if (!fresh_of(p, p->wal.pages[i]))
			big += WAL_PAGE;
	/* the big path writes the file in place: no reader may be on, and
	 * every frame must be in the file already */
	if (big > p->wal.big_bytes && !p->wal.pend && lock_readers_out(p)) {
		/* undo log and fresh space, then the data, then the commit
		 * record: each durable before the next is written; a new
		 * salt first, so that readers drop their pages after */
		rc = checkpoint_x(p, "wal.big_ckpt", true);
		rc = rc == GPMDB_OK ? big_commit(p, n) : fail(p, rc);
		lock_readers_back(p);
		return rc;
	}
	rc = mlog_commit_mem(p);
	if (rc == GPMDB_OK)
		rc = collect_dirty(p, &n);
	if (rc == GPMDB_OK)
		rc = commit_small(p, n);
	if (rc != GPMDB_OK)
		return fail(p, rc);
	/* Committed.  In place (readers out), and the private copies go at
	 * the checkpoint.  A failure now leaves the frames as the only
	 * durable copy: stop checkpointing, the next open replays them. */
	if (!p->wal.stuck && lock_readers_out(p)) {
		rc = p->wal.pend ? flush_pending(p)
				 : write_in_place(p, p->wal.pages,
						  p->wal.nframe, NULL, false);
		if (rc == GPMDB_OK)
			lock_published_in_place(p, p->wal.salt, p->wal.seq - 1);
		stg_crash_point("wal.inplace");
		lock_readers_back(p);
	} else {
		rc = GPMDB_OK;
		p->wal.pend = true; /* readers: the frames carry it */
	}
	if (rc != GPMDB_OK) {
		p->wal.stuck = true;
		pool_clear_err(p);
	}
	clear_dirty(p);
	end_fresh(p);
	ckpt_maybe(p);
	return GPMDB_OK;
}

void wal_rollback_done(stg_pool *p)
{
	size_t n = 0;

	/* Fresh space is free again: its private pages can go.  The other
	 * pages hold the committed bytes again and ride with the next
	 * commit. */
	if (collect_dirty(p, &n) == GPMDB_OK) {
		for (size_t i = 0; i < n; i++) {
			uint64_t pg = p->wal.pages[i];

			if (!fresh_of(p, pg))
				continue;
			(void)madvise(pool_at(p, pg * WAL_PAGE), WAL_PAGE,
				      MADV_DONTNEED);
			p->wal.dbits[pg >> 6] &= ~(1ull << (pg & 63));
			p->wal.ndirty--;
		}
		if (p->wal.ndirty == 0) {
			clear_dirty(p);
		} else if (p->wal.ndirty <= WAL_DLIST) {
			/* the list again, of the pages left */
			p->wal.dlist_n = 0;
			for (size_t i = 0; i < n; i++) {
				uint64_t pg = p->wal.pages[i];
				if (p->wal.dbits[pg >> 6] >> (pg & 63) & 1)
					p->wal.dlist[p->wal.dlist_n++] = pg;
			}
		}
	}
	end_fresh(p);
}

/* ---- Open and close ----------------------------------------------------- */

/* Reads and checks the log's header through fd: *salt, or 0 when it was
 * never completed (no frame counts). */
static int read_hdr(stg_pool *p, int fd, const char *path, uint64_t *salt)
{
	struct stat st;
	wal_hdr h;

	*salt = 0;
	if (fstat(fd, &st) != 0 || st.st_size < (off_t)WAL_HDR_BYTES ||
	    wal_pread(fd, &h, sizeof(h), 0) != 0 || h.magic != WAL_MAGIC ||
	    h.version != WAL_VERSION || h.page != WAL_PAGE ||
	    hdr_crc(&h) != h.crc)
		return GPMDB_OK;
	if (memcmp(h.uuid, p->sb.uuid, 16) != 0)
		return pool_err(p, GPMDB_CORRUPT,
				"database disk image is malformed: %s belongs "
				"to another database than %s; move it away",
				path, p->path);
	*salt = h.salt;
	return GPMDB_OK;
}

/*
 * Applies the frames of salt from *pos (numbered from *seq) into the file
 * through pfd (mem == NULL) or into mem; a frame counts while the salt
 * matches, seq follows and the crc holds.  bits: pages applied are marked
 * there (wbits).  *pos, *seq and *frames advance.
 */
static int apply_frames(stg_pool *p, int fd, const char *path, uint64_t salt,
			uint64_t *pos, uint64_t *seq, int pfd, char *mem,
			uint64_t mem_len, uint64_t file_len, uint64_t *frames)
{
	struct stat st;
	int rc = GPMDB_OK;

	if (fstat(fd, &st) != 0)
		return io_err(p, "reading", path);
	for (;;) {
		wal_frame f;
		uint64_t hb, body;
		char *buf;
		uLong c;

		if (*pos + sizeof(f) > (uint64_t)st.st_size ||
		    wal_pread(fd, &f, sizeof(f), (off_t)*pos) != 0 ||
		    f.magic != WAL_FRAME_MAGIC || f.salt != salt ||
		    f.seq != *seq || f.npages == 0)
			break;
		hb = frame_head_bytes(f.npages);
		body = hb + (uint64_t)f.npages * WAL_PAGE;
		if (*pos + body > (uint64_t)st.st_size)
			break;
		buf = malloc(body);
		if (buf == NULL) {
			rc = pool_err(p, GPMDB_NOMEM,
				      "out of memory replaying %s", path);
			break;
		}
		if (wal_pread(fd, buf, body, (off_t)*pos) != 0) {
			free(buf);
			break;
		}
		uint32_t want = f.crc;
		wal_frame z = f;
		const uint64_t *offs = (const uint64_t *)(buf + sizeof(f));

		z.crc = 0;
		c = crc32(0L, (const Bytef *)&z, sizeof(z));
		c = crc32(c, (const Bytef *)offs, (uInt)(8ull * f.npages));
		for (uint32_t i = 0; i < f.npages; i++)
			c = crc32(c, (const Bytef *)(buf + hb + i * WAL_PAGE),
				  (uInt)WAL_PAGE);
		if ((uint32_t)c != want) {
			free(buf);
			break; /* torn: the commit never returned */
		}
		for (uint32_t i = 0; i < f.npages && rc == GPMDB_OK; i++) {
			uint64_t o = offs[i], pg = o / WAL_PAGE;
			const char *src = buf + hb + i * WAL_PAGE;

			if (o % WAL_PAGE || o + WAL_PAGE > file_len) {
				rc = pool_err(p, GPMDB_CORRUPT,
					      "database disk image is "
					      "malformed: %s names page "
					      "0x%llx outside %s",
					      path, (unsigned long long)o,
					      p->path);
			} else if (mem) {
				if (o + WAL_PAGE <= mem_len)
					memcpy(mem + o, src, WAL_PAGE);
				if (p->wal.wbits && !(p->wal.wbits[pg >> 6] &
						      (1ull << (pg & 63)))) {
					p->wal.wbits[pg >> 6] |= 1ull
								 << (pg & 63);
					p->wal.wn++;
					if (pg >> 6 < p->wal.wlo)
						p->wal.wlo = pg >> 6;
					if (pg >> 6 > p->wal.whi)
						p->wal.whi = pg >> 6;
				}
			} else if (wal_pwrite(pfd, src, WAL_PAGE, (off_t)o)) {
				rc = io_err(p, "writing", p->path);
			}
		}
		free(buf);
		if (rc != GPMDB_OK)
			break;
		(*frames)++;
		*pos += body;
		(*seq)++;
	}
	return rc;
}

/*
 * Replays "<pool>-wal" into the file through pfd (before the pool is
 * mapped; mem == NULL) or into a private mapping (mem: a reader's view).
 */
static int replay_fd(stg_pool *p, int fd, const char *path, int pfd, char *mem,
		     uint64_t mem_len, uint64_t file_len, uint64_t *frames)
{
	uint64_t pos = WAL_HDR_BYTES, seq = 1, salt = 0;
	int rc;

	*frames = 0;
	rc = read_hdr(p, fd, path, &salt);
	if (rc == GPMDB_OK && salt)
		rc = apply_frames(p, fd, path, salt, &pos, &seq, pfd, mem,
				  mem_len, file_len, frames);
	return rc;
}

static int replay(stg_pool *p, int pfd, char *mem, uint64_t mem_len,
		  uint64_t file_len, uint64_t *frames)
{
	char path[4200];
	int fd, rc;

	*frames = 0;
	wal_path(p, path, sizeof(path));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? GPMDB_OK : io_err(p, "opening", path);
	rc = replay_fd(p, fd, path, pfd, mem, mem_len, file_len, frames);
	close(fd);
	return rc;
}

int wal_catch_up(stg_pool *p, bool force, bool *full)
{
	char path[4200];
	uint64_t salt = 0, frames = 0, pos, seq;
	int rc;

	*full = force;
	wal_path(p, path, sizeof(path));
	if (p->wal.fd < 0) {
		p->wal.fd =
		    open(path, (p->wal.on ? O_RDWR : O_RDONLY) | O_CLOEXEC);
		if (p->wal.fd < 0 && errno != ENOENT)
			return io_err(p, "opening", path);
	}
	if (p->wal.fd >= 0 &&
	    (rc = read_hdr(p, p->wal.fd, path, &salt)) != GPMDB_OK)
		return rc;
	if (salt != p->wal.salt || force) {
		/* a checkpoint put every frame into the file: drop the
		 * private copies, the frames of the new salt come again */
		*full = true;
		(void)madvise(p->base, p->map_len, MADV_DONTNEED);
		if (p->wal.wbits)
			bits_clear(p->wal.wbits, &p->wal.wlo, &p->wal.whi,
				   &p->wal.wn);
		p->wal.nruns = 0;
		p->wal.salt = salt;
		p->wal.seq = 1;
		p->wal.tail = WAL_HDR_BYTES;
		p->wal.pend = false;
		/* a read-only copy's deltas (delta.c) are in those pages */
		if (p->delta_private && (rc = delta_reapply_private(p)) != 0)
			return rc;
	}
	if (salt == 0)
		return GPMDB_OK;
	pos = p->wal.tail;
	seq = p->wal.seq;
	rc = apply_frames(p, p->wal.fd, path, salt, &pos, &seq, -1, p->base,
			  p->map_len, p->map_len, &frames);
	if (rc != GPMDB_OK)
		return rc;
	p->wal.tail = pos;
	p->wal.seq = seq;
	if (frames && p->wal.on && !lock_in_place(p, salt, seq - 1))
		p->wal.pend = true;
	return GPMDB_OK;
}

int wal_recover(stg_pool *p, uint64_t file_len, bool *recovered)
{
	char path[4200];
	uint64_t frames = 0;
	int rc, fd;

	*recovered = false;
	rc = replay(p, p->fd, NULL, 0, file_len, &frames);
	if (rc != GPMDB_OK)
		return rc;
	wal_path(p, path, sizeof(path));
	if (access(path, F_OK) != 0)
		return GPMDB_OK;
	if (frames) {
		if (fdatasync(p->fd) != 0)
			return io_err(p, "flushing", p->path);
		*recovered = true;
		p->wal.replayed = frames;
		stg_crash_point("wal.replayed");
	}
	/* Dead now; emptied before it goes, so that a removal lost to a
	 * power cut cannot bring old frames back. */
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0 || ftruncate(fd, 0) != 0 || fdatasync(fd) != 0) {
		rc = io_err(p, "clearing", path);
		if (fd >= 0)
			close(fd);
		return rc;
	}
	close(fd);
	if (unlink(path) != 0)
		return io_err(p, "removing", path);
	return GPMDB_OK;
}

int wal_apply_readonly(stg_pool *p)
{
	uint64_t frames = 0;

	/* every complete frame is committed (a live writer's too) */
	return replay(p, -1, p->base, p->map_len, p->map_len, &frames);
}

int wal_close(stg_pool *p, bool last)
{
	char path[4200];
	bool rec = false;
	int rc = GPMDB_OK;

	if (!last || p->wal.stuck || p->broken) {
		/* others go on with it, or the next open replays it */
		if (p->wal.fd >= 0)
			close(p->wal.fd);
		p->wal.fd = -1;
		return GPMDB_OK;
	}
	if (p->wal.fd >= 0 && (p->wal.pend || !lock_current(p))) {
		/* frames of others or not in place: from the log itself */
		close(p->wal.fd);
		p->wal.fd = -1;
	}
	if (p->wal.fd < 0) {
		struct stat st;

		if (fstat(p->fd, &st) != 0)
			return io_err(p, "reading", p->path);
		return wal_recover(p, (uint64_t)st.st_size, &rec);
	}
	wal_path(p, path, sizeof(path));
	if (p->wal.tail > WAL_HDR_BYTES && (rc = sync_pool(p)) != GPMDB_OK) {
		close(p->wal.fd);
		p->wal.fd = -1;
		return rc;
	}
	if (ftruncate(p->wal.fd, 0) != 0 || fdatasync(p->wal.fd) != 0)
		rc = io_err(p, "clearing", path);
	close(p->wal.fd);
	p->wal.fd = -1;
	if (rc == GPMDB_OK && unlink(path) != 0)
		rc = io_err(p, "removing", path);
	return rc;
}

void wal_stats(const stg_pool *p, uint64_t *frames, uint64_t *checkpoints,
	       uint64_t *big)
{
	*frames = p->wal.frames;
	*checkpoints = p->wal.checkpoints;
	*big = p->wal.big_commits;
}

static bool pick_not_log(stg_pool *p, uint64_t pg)
{
	return !in_log(p, pg);
}

static bool pick_log(stg_pool *p, uint64_t pg)
{
	return in_log(p, pg);
}

/* The undone rows first, durable, then the emptied log.  Written
 * together (ascending, the log region comes first in the file), a kill
 * between the pwrites left an empty log over the dead writer's stores. */
int wal_flush_recovery(stg_pool *p)
{
	size_t n = 0;
	int rc = collect_dirty(p, &n);

	if (rc == GPMDB_OK)
		rc = write_picked_synced(p, n, pick_not_log);
	if (rc == GPMDB_OK) {
		stg_crash_point("recovery.flush");
		rc = write_picked_synced(p, n, pick_log);
	}
	clear_dirty(p);
	return rc;
}

/* ---- Beside readers (pmem mode) ------------------------------------------
 *
 * A pmem-mode writer stores in place into the shared mapping that other
 * connections read, GPU kernels included.  When readers hold snapshots
 * (lock.c decides), the connection maps the pool privately over the same
 * addresses (MAP_FIXED: every pointer into the pool stays good) and works
 * as msync mode does: private pages, a frame in <pool>-wal at commit (on
 * tmpfs its fdatasync costs little), the file written in place only while
 * no reader is on.  A reader of the shared mapping that finds frames not
 * in the file does the same and applies them.  Registrations of the
 * base's shared pages go first (the driver pins pages, not addresses);
 * GPU kernels store through a second mapping that stays shared
 * (stg_pool_gpu_base), so theirs stay, and the GPU writers, seeing
 * stg_pool_writes_private, take the CPU-assisted path meanwhile.  Only a
 * pool in a reservation (pm_resv: shmem) does this: the private mapping
 * grows in place there.
 */
int wal_shadow_begin(stg_pool *p)
{
	size_t words = (p->pm_resv / WAL_PAGE + 63) / 64;
	bool full = false;
	int err;

	if (p->wal.on)
		return GPMDB_OK;
	if (!p->pm_resv)
		return pool_err(p, GPMDB_INTERNAL,
				"%s: only a pool mapped in a reservation can "
				"be mapped privately beside readers",
				p->path);
	p->wal.dbits = calloc(words, 8);
	p->wal.wbits = calloc(words, 8);
	if (p->wal.dbits == NULL || p->wal.wbits == NULL) {
		free(p->wal.dbits);
		free(p->wal.wbits);
		p->wal.dbits = p->wal.wbits = NULL;
		return pool_err(p, GPMDB_NOMEM, "out of memory");
	}
	pool_gpu_forget(p);
	if (mmap(p->base, p->map_len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_FIXED | MAP_NORESERVE, p->fd,
		 0) == MAP_FAILED) {
		err = errno;
		/* MAP_FIXED may have taken the old range away */
		if (pool_map_shared_at(p, p->base, p->map_len, 0) == MAP_FAILED)
			p->broken = true;
		free(p->wal.dbits);
		free(p->wal.wbits);
		p->wal.dbits = p->wal.wbits = NULL;
		return pool_err(p, GPMDB_IOERR, "cannot map %s privately: %s",
				p->path, strerror(err));
	}
	p->wal.dwords = words;
	p->wal.resv = p->pm_resv;
	p->wal.on = true;
	p->wal.shadow = true;
	p->wal.shadows++;
	p->wal.stuck = false;
	p->wal.pend = false;
	p->wal.dlo = p->wal.wlo = UINT64_MAX;
	p->wal.dhi = p->wal.whi = 0;
	p->wal.ndirty = p->wal.dlist_n = p->wal.wn = 0;
	p->wal.nfresh = p->wal.nruns = p->wal.nframe = 0;
	p->wal.shared_used = false;
	p->wal.ckpt_bytes = env_bytes("GPMDB_TEST_WAL_CKPT", WAL_CKPT_BYTES);
	p->wal.big_bytes = env_bytes("GPMDB_TEST_WAL_BIG", WAL_BIG_BYTES);
	p->wal.shared_min = env_bytes("GPMDB_TEST_WAL_SHARED", WAL_SHARED_MIN);
	if (p->wal.fd >= 0)
		close(p->wal.fd);
	p->wal.fd = -1;
	p->wal.salt = 0; /* the log's frames, all of them, come in below */
	p->wal.seq = 1;
	p->wal.tail = WAL_HDR_BYTES;
	p->wal.shadow_dur = p->dur;
	p->dur = STG_DUR_MSYNC;
	return wal_catch_up(p, false, &full);
}

/* Can the private mapping go?  Nothing of a transaction in it, and no
 * frame in the log (every frame in the file, and the log started over:
 * the private copies of frames hold nothing the file lacks). */
bool wal_shadow_can_end(const stg_pool *p)
{
	return p->wal.shadow && !p->in_txn && !p->wal.stuck &&
	       p->wal.ndirty == 0 && p->wal.nfresh == 0 && !p->wal.pend &&
	       !lock_frames_live(p);
}

int wal_shadow_end(stg_pool *p)
{
	int err;

	if (!p->wal.shadow)
		return GPMDB_OK;
	if (pool_map_shared_at(p, p->base, p->map_len, 0) == MAP_FAILED) {
		err = errno;
		p->broken = true;
		return pool_err(p, GPMDB_IOERR, "cannot map %s shared: %s",
				p->path, strerror(err));
	}
	free(p->wal.dbits);
	free(p->wal.wbits);
	free(p->wal.pages);
	free(p->wal.fresh);
	free(p->wal.runs);
	p->wal.dbits = p->wal.wbits = p->wal.pages = NULL;
	p->wal.fresh = p->wal.runs = NULL;
	p->wal.cap_pages = p->wal.cap_fresh = p->wal.cap_runs = 0;
	p->wal.nfresh = p->wal.nruns = 0;
	if (p->wal.fd >= 0)
		close(p->wal.fd);
	p->wal.fd = -1;
	p->wal.on = false;
	p->wal.shadow = false;
	p->dur = p->wal.shadow_dur;
	return GPMDB_OK;
}

/* A private writer whose readers are out (the caller holds READ
 * exclusive, its view caught up): the frames in place, the log started
 * over (readers drop their private copies), the shared mapping again. */
int wal_shadow_settle(stg_pool *p)
{
	int rc = GPMDB_OK;

	if (!p->wal.shadow || p->wal.stuck)
		return GPMDB_OK; /* stuck: the next open replays the log */
	if (p->wal.pend)
		rc = flush_pending(p);
	if (rc == GPMDB_OK && p->wal.fd >= 0)
		rc = checkpoint_x(p, "wal.settle", true);
	if (rc == GPMDB_OK)
		rc = wal_shadow_end(p);
	return rc;
}

/* A shared writer whose readers are out: the frames that writers beside
 * readers left go into the file (page images: idempotent), durable, then
 * a new header: the log holds nothing more, and connections with private
 * copies of its pages drop them at their next catch-up. */
int wal_settle_file(stg_pool *p)
{
	char path[4200];
	uint64_t frames = 0;
	struct stat st;
	int fd, rc;

	wal_path(p, path, sizeof(path));
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? GPMDB_OK : io_err(p, "opening", path);
	if (fstat(p->fd, &st) != 0)
		rc = io_err(p, "reading", p->path);
	else
		rc = replay_fd(p, fd, path, p->fd, NULL, 0,
			       (uint64_t)st.st_size, &frames);
	if (rc == GPMDB_OK && frames && (rc = sync_pool(p)) == GPMDB_OK)
		stg_crash_point("wal.settle_file");
	if (rc == GPMDB_OK) {
		uint64_t ns = new_salt();

		if (write_hdr(p, fd, ns) != 0 || fdatasync(fd) != 0) {
			rc = io_err(p, "writing", path);
		} else {
			lock_published_in_place(p, ns, 0);
			lock_published_frame(p, ns, 0);
			p->wal.checkpoints++;
		}
	}
	close(fd);
	return rc;
}
