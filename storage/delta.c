/*
 * delta.c - the deltas of incremental copies: the 64-byte lines of
 * zones (zones.c's line masks) appended after a copy's image, applied
 * into the image when the copy is opened.
 *
 * Why: a change every 800 bytes (every 100th row of an 8-byte column)
 * dirties every 64 KiB zone of that column, and writing the changed
 * lines in place would still rewrite every 4 KiB page of the copy (the
 * unit of O_DIRECT and of the page cache).  So an incremental backup
 * (backup.c) writes a zone whose valid mask sets at most half its lines
 * as an entry of a delta, sequentially after the image; every other
 * changed zone goes whole into the image as before.
 *
 * Format (layout.h).  The copy's file: [0, size) the image, then from
 * copy_delta_off (= size) copy_delta_len bytes of deltas, each a 4 KiB
 * page with stg_delta_hdr (magic, from_gen: the copy's counter it was
 * written on, to_gen: the counter it brings the copy to, len, entries,
 * image_size, crc32 of the entries, crc32 of the header), then len bytes
 * of entries (stg_delta_ent: zone, its 16-word mask; then the bytes of
 * the lines the mask sets, in order), zeros to the next 4 KiB.  A
 * complete copy with deltas has the magic STG_SB_MAGIC_DELTA (a build
 * that knows no deltas refuses it: "bad magic", never a stale image).
 *
 * Invariants.
 *  1. The state of a complete copy is its image with its deltas applied
 *     in order.  Lines are whole contents, so applying is idempotent and
 *     a later delta's lines supersede an earlier one's (the pmem-mode
 *     passes of one backup append to one delta in pass order).
 *  2. A zone that has an entry in a pending delta is never written into
 *     the image again until the deltas are applied or dropped: a backup
 *     writes such a zone as an entry of its own delta (every line, when
 *     it has no valid mask), so that no older entry is applied over
 *     newer bytes.  Zone 0 (the superblock and the root) never goes into
 *     a delta, so the image's root is always current.
 *  3. Writes keep backup.c's order: the incomplete marker (holding the
 *     counter and the pending deltas it starts from) and fdatasync;
 *     image pieces and the new delta's entries; the delta's header page
 *     last; fdatasync; the real superblock (copy_delta_* naming the chain
 *     with the new delta); fdatasync.  A copy cut short keeps the marker
 *     and is refused; the next backup resumes from the marker's counter
 *     and chain (what the cut backup wrote past the chain is ignored and
 *     overwritten; zones it wrote into the image had no entry in the
 *     chain, invariant 2, and are stamped after the counter).
 *  4. Applying (at open, before anything reads the pool; with the CONN
 *     lock byte held so that two openers do not race): every delta's
 *     checksums are verified first, then the entries are written into
 *     the image, fdatasync, the superblock without deltas (magic
 *     STG_SB_MAGIC), fdatasync, the file cut to the image.  A kill before
 *     the superblock applies them again at the next open (invariant 1);
 *     after it, the bytes past the image are ignored.  A read-only open
 *     never writes the file: it applies the deltas in its private
 *     mapping once mapped, and again whenever it drops those pages
 *     (wal.c), until a read-write open applied them in the file.  Once
 *     the opener holds its lock (no backup can begin on the file), the
 *     superblock is read again: deltas a backup added in between are
 *     applied privately (read-only) or the open is refused as busy
 *     (read-write: open again).
 *  5. The chain stays bounded: a backup onto a copy whose deltas exceed
 *     an eighth of the image, or whose pool changed size, writes whole
 *     zones for everything changed since the image's own counter (the
 *     first delta's from_gen) and drops the deltas.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>
#include <zlib.h>

#include "internal.h"

#define DW_BUF	    (4ull << 20) /* one write of a delta's entries */
#define DL_LOCK	    (1ll << 62)	 /* lock.c's CONN byte */
#define DL_PAGE	    4096u
#define DL_ROUND(x) (((x) + DL_PAGE - 1) / DL_PAGE * DL_PAGE)

static uint32_t dl_hcrc(const stg_delta_hdr *h)
{
	stg_delta_hdr c = *h;

	c.hcrc = 0;
	return (uint32_t)crc32(0L, (const Bytef *)&c, sizeof(c));
}

unsigned delta_popcount(const uint64_t *mask)
{
	unsigned n = 0;

	for (unsigned w = 0; w < STG_LM_WORDS; w++)
		n += (unsigned)__builtin_popcountll(mask[w]);
	return n;
}

/* The next run of set lines from *l on: [*l, *l1); false at the end. */
static bool delta_next_run(const uint64_t *mask, unsigned *l, unsigned *l1)
{
	unsigned i = *l, j;
	uint64_t m;

	/* the first set bit at or after i */
	for (;;) {
		if (i >= STG_ZONE_LINES)
			return false;
		m = mask[i >> 6] >> (i & 63);
		if (m)
			break;
		i = (i | 63) + 1;
	}
	i += (unsigned)__builtin_ctzll(m);
	/* the first clear bit after it */
	for (j = i;;) {
		m = ~mask[j >> 6] >> (j & 63);
		if (m) {
			j += (unsigned)__builtin_ctzll(m);
			break;
		}
		j = (j | 63) + 1;
		if (j >= STG_ZONE_LINES)
			break;
	}
	*l = i;
	*l1 = j < STG_ZONE_LINES ? j : STG_ZONE_LINES;
	return true;
}

int dw_begin(delta_writer *w, uint64_t start, uint64_t from_gen,
	     uint64_t image_size, dw_out_fn out, void *ctx)
{
	void *buf = NULL, *spare = NULL;

	memset(w, 0, sizeof(*w));
	if (posix_memalign(&buf, DL_PAGE, DW_BUF) != 0)
		return ENOMEM;
	if (posix_memalign(&spare, DL_PAGE, DW_BUF) != 0) {
		free(buf);
		return ENOMEM;
	}
	w->buf = buf;
	w->spare = spare;
	w->start = start;
	w->pos = start + DL_PAGE;
	w->from_gen = from_gen;
	w->image_size = image_size;
	w->out = out;
	w->ctx = ctx;
	w->crc = (uint32_t)crc32(0L, Z_NULL, 0);
	return 0;
}

static void *dw_main(void *arg)
{
	delta_writer *w = arg;

	w->werr = w->out(w->ctx, (const char *)w->wbuf, w->wn, w->woff);
	return NULL;
}

/* The write in flight done; its error. */
static int dw_wait(delta_writer *w)
{
	if (w->busy) {
		pthread_join(w->th, NULL);
		w->busy = false;
	}
	return w->werr;
}

/*
 * Work items [0, n), chunk at a time, run by fn on up to threads threads
 * of the backup's own at the lowest priority (its writes, the delta's
 * copies and checksums): the copy needs little CPU, and a writer beside
 * it whose parallel loops spin on every core waited for each thread the
 * copy woke on one (it lost 11-31% of its statements on the 16-core
 * device machine with 1-4 such threads, none with its loops on 12 cores
 * or with these threads niced).  The caller waits for them, or runs the
 * items itself when there is one chunk or no thread is to be had.  The
 * first nonzero result of fn is returned; no item is taken after it.
 */
#define DW_THREADS_MAX 256
typedef struct {
	int (*fn)(void *ctx, size_t i);
	void *ctx;
	size_t n, chunk, next;
	int err;
} dw_job;

static void dw_job_loop(dw_job *j)
{
	for (;;) {
		size_t i =
		    __atomic_fetch_add(&j->next, j->chunk, __ATOMIC_RELAXED);
		size_t e;

		if (i >= j->n || __atomic_load_n(&j->err, __ATOMIC_RELAXED))
			return;
		e = j->n - i < j->chunk ? j->n : i + j->chunk;
		for (; i < e; i++) {
			int r = j->fn(j->ctx, i), none = 0;

			if (r) {
				__atomic_compare_exchange_n(
				    &j->err, &none, r, false, __ATOMIC_RELAXED,
				    __ATOMIC_RELAXED);
				return;
			}
		}
	}
}

static void *dw_job_main(void *arg)
{
	(void)setpriority(PRIO_PROCESS, (id_t)gettid(), 19);
	dw_job_loop(arg);
	return NULL;
}

int dw_run(int threads, size_t n, size_t chunk, int (*fn)(void *, size_t),
	   void *ctx)
{
	dw_job j = {fn, ctx, n, chunk, 0, 0};
	pthread_t th[DW_THREADS_MAX];
	int k = 0;

	while (n > chunk && k < threads && k < DW_THREADS_MAX &&
	       (size_t)k * chunk < n &&
	       pthread_create(&th[k], NULL, dw_job_main, &j) == 0)
		k++;
	if (k == 0)
		dw_job_loop(&j);
	for (int i = 0; i < k; i++)
		pthread_join(th[i], NULL);
	return j.err;
}

/* crc32 of n bytes at q after crc, in parts on threads, joined by zlib's
 * crc32_combine: over a single core it cost as much as a third of
 * copying the lines. */
#define DW_CRC_PARTS 16
typedef struct {
	const uint8_t *q;
	size_t n, step;
	uint32_t part[DW_CRC_PARTS];
} dw_crcs;

static size_t dw_crc_len(const dw_crcs *c, size_t i)
{
	size_t lo = i * c->step;

	return lo >= c->n ? 0 : c->n - lo < c->step ? c->n - lo : c->step;
}

static int dw_crc_part(void *ctx, size_t i)
{
	dw_crcs *c = ctx;

	c->part[i] = (uint32_t)crc32(0L, (const Bytef *)c->q + i * c->step,
				     (uInt)dw_crc_len(c, i));
	return 0;
}

static uint32_t dw_crc(uint32_t crc, const uint8_t *q, size_t n, int threads)
{
	dw_crcs c;
	size_t t = threads < DW_CRC_PARTS ? (size_t)threads : DW_CRC_PARTS;

	if (t <= 1 || n < (1u << 20))
		return (uint32_t)crc32(crc, (const Bytef *)q, (uInt)n);
	c.q = q;
	c.n = n;
	c.step = (n + t - 1) / t;
	(void)dw_run((int)t, t, 1, dw_crc_part, &c);
	for (size_t i = 0; i < t; i++)
		crc = (uint32_t)crc32_combine(crc, c.part[i],
					      (z_off_t)dw_crc_len(&c, i));
	return crc;
}

/* The whole pages of the buffer to the file, written by a thread while
 * the next buffer fills (the lines' copy from the pool, scattered, cost
 * about as much as the write); the rest kept. */
static int dw_flush(delta_writer *w, bool all)
{
	size_t n = all ? DL_ROUND(w->fill) : w->fill / DL_PAGE * DL_PAGE;
	uint8_t *t;
	int err;

	if (n == 0)
		return 0;
	/* the checksum over big pieces (per line it cost more than the
	 * copy) */
	w->crc = dw_crc(w->crc, w->buf, n < w->fill ? n : w->fill, w->threads);
	if (n > w->fill)
		memset(w->buf + w->fill, 0, n - w->fill);
	stg_crash_point("backup.delta");
	if ((err = dw_wait(w)) != 0)
		return err;
	w->wbuf = w->buf;
	w->wn = n;
	w->woff = w->pos;
	if (pthread_create(&w->th, NULL, dw_main, w) == 0)
		w->busy = true;
	else if ((err = w->out(w->ctx, (const char *)w->buf, n, w->pos)) != 0)
		return err; /* no thread to be had: this one writes */
	w->bytes += n;
	w->pos += n;
	/* the rest to the front of the other buffer */
	t = w->spare;
	w->spare = w->buf;
	w->buf = t;
	if (n < w->fill)
		memcpy(w->buf, w->spare + n, w->fill - n);
	w->fill = n < w->fill ? w->fill - n : 0;
	return 0;
}

/* An entry's bytes (header, then the runs of its lines) at d. */
static void dw_copy(uint8_t *d, const dw_src *s)
{
	stg_delta_ent e;

	e.zone = s->zone;
	memcpy(e.mask, s->mask, sizeof(e.mask));
	memcpy(d, &e, sizeof(e));
	d += sizeof(e);
	for (unsigned l = 0, l1; delta_next_run(s->mask, &l, &l1); l = l1) {
		size_t n = (size_t)(l1 - l) * STG_LINE_SIZE;

		memcpy(d, s->zbase + (uint64_t)l * STG_LINE_SIZE, n);
		d += n;
	}
}

/* Entries to copy: entry i goes to buf + at[i]. */
typedef struct {
	uint8_t *buf;
	const uint64_t *at;
	const dw_src *src;
} dw_copies;

static int dw_copy_one(void *ctx, size_t i)
{
	const dw_copies *c = ctx;

	dw_copy(c->buf + c->at[i], &c->src[i]);
	return 0;
}

/*
 * The lines' copy from the pool is most of an incremental backup's time
 * (scattered 64-byte runs, the first touch of each page of the backup's
 * own mapping): the entries that fit the buffer get their places first,
 * then are copied on threads.
 */
int dw_add_many(delta_writer *w, const dw_src *src, size_t n, int threads)
{
	uint64_t *at = malloc((n ? n : 1) * sizeof(*at));
	size_t i = 0;
	int err = 0;

	if (at == NULL)
		return ENOMEM;
	w->threads = threads;
	while (i < n && !err) {
		uint64_t f = w->fill;
		size_t j = i;

		for (; j < n; j++) {
			uint64_t sz = sizeof(stg_delta_ent) +
				      (uint64_t)delta_popcount(src[j].mask) *
					  STG_LINE_SIZE;

			if (f + sz > DW_BUF)
				break;
			at[j] = f;
			f += sz;
		}
		if (j > i) {
			dw_copies c = {w->buf, at + i, src + i};

			(void)dw_run(threads, j - i, 16, dw_copy_one, &c);
			w->len += f - w->fill;
			w->entries += j - i;
			w->fill = f;
			i = j;
		}
		/* full (an entry is at most a header and a zone, and a flush
		 * leaves less than a page) */
		if (i < n)
			err = dw_flush(w, false);
	}
	free(at);
	return err;
}

int dw_end(delta_writer *w, uint64_t to_gen, uint64_t *end)
{
	stg_delta_hdr *h;
	int err = dw_flush(w, true);

	if (!err)
		err = dw_wait(w);
	if (err)
		return err;
	/* the header page last (the buffer is empty now) */
	memset(w->buf, 0, DL_PAGE);
	h = (stg_delta_hdr *)w->buf;
	h->magic = STG_DELTA_MAGIC;
	h->from_gen = w->from_gen;
	h->to_gen = to_gen;
	h->len = w->len;
	h->entries = w->entries;
	h->image_size = w->image_size;
	h->crc = w->crc;
	h->hcrc = dl_hcrc(h);
	stg_crash_point("backup.delta");
	err = w->out(w->ctx, (const char *)w->buf, DL_PAGE, w->start);
	if (err)
		return err;
	w->bytes += DL_PAGE;
	*end = w->pos;
	return 0;
}

void dw_free(delta_writer *w)
{
	(void)dw_wait(w);
	free(w->buf);
	free(w->spare);
	w->buf = w->spare = NULL;
}

static int dl_pread(int fd, void *buf, size_t n, uint64_t off)
{
	size_t got = 0;

	if (pool_pread_full(fd, buf, n, (off_t)off, &got) != 0)
		return errno ? errno : EIO;
	return got == n ? 0 : EINVAL; /* cut short: not a delta */
}

int delta_scan(int fd, uint64_t off, uint64_t len, bool lines, bool verify,
	       delta_visit visit, void *ctx, stg_delta_hdr *first)
{
	uint64_t end = off + len;
	char *buf = NULL;
	int err = 0;

	if (lines && (buf = malloc(STG_ZONE_SIZE)) == NULL)
		return ENOMEM;
	for (int k = 0; off < end && !err; k++) {
		stg_delta_hdr h;
		uint64_t p, pe;
		uint32_t crc = (uint32_t)crc32(0L, Z_NULL, 0);

		if (end - off < DL_PAGE) {
			err = EINVAL;
			break;
		}
		if ((err = dl_pread(fd, &h, sizeof(h), off)) != 0)
			break;
		if (h.magic != STG_DELTA_MAGIC || h.hcrc != dl_hcrc(&h) ||
		    h.len > end - off - DL_PAGE ||
		    DL_ROUND(h.len) > end - off - DL_PAGE) {
			err = EINVAL;
			break;
		}
		if (k == 0 && first)
			*first = h;
		p = off + DL_PAGE;
		pe = p + h.len;
		for (uint64_t i = 0; i < h.entries && !err; i++) {
			stg_delta_ent e;
			uint64_t n;

			if (pe - p < sizeof(e) ||
			    (err = dl_pread(fd, &e, sizeof(e), p)) != 0) {
				err = err ? err : EINVAL;
				break;
			}
			n = (uint64_t)delta_popcount(e.mask) * STG_LINE_SIZE;
			p += sizeof(e);
			if (pe - p < n) {
				err = EINVAL;
				break;
			}
			if (lines && (err = dl_pread(fd, buf, n, p)) != 0)
				break;
			if (verify) {
				crc = (uint32_t)crc32(crc, (const Bytef *)&e,
						      sizeof(e));
				crc = (uint32_t)crc32(crc, (const Bytef *)buf,
						      (uInt)n);
			}
			p += n;
			if (visit && (err = visit(ctx, &e, buf)) != 0)
				break;
		}
		if (!err && (p != pe || (verify && crc != h.crc)))
			err = EINVAL;
		off += DL_PAGE + DL_ROUND(h.len);
	}
	free(buf);
	return err;
}

/*
 * Read-ahead of the image's pages that the lines will change, asked
 * while the checksums are verified: a line written into a page that is
 * not in the page cache makes the kernel read that page first, one
 * synchronous 4 KiB read each (an open of a copy with 77 MB of lines
 * spread over 550 MB of its pages took 7.4 s on the 2-core box).  The
 * pages of adjacent runs go in one request.
 */
typedef struct {
	int fd;
	uint64_t lo, hi; /* the pages not asked for yet */
} dl_ahead;

static void dl_ahead_flush(dl_ahead *a)
{
	if (a->hi > a->lo)
		(void)posix_fadvise(a->fd, (off_t)a->lo, (off_t)(a->hi - a->lo),
				    POSIX_FADV_WILLNEED);
	a->lo = a->hi = 0;
}

static int dl_ahead_ent(void *ctx, const stg_delta_ent *e, const char *buf)
{
	dl_ahead *a = ctx;
	uint64_t zoff = e->zone << STG_ZONE_SHIFT;

	(void)buf;
	for (unsigned l = 0, l1; delta_next_run(e->mask, &l, &l1); l = l1) {
		uint64_t lo = (zoff + (uint64_t)l * STG_LINE_SIZE) / DL_PAGE *
			      DL_PAGE,
			 hi = DL_ROUND(zoff + (uint64_t)l1 * STG_LINE_SIZE);

		if (a->hi > a->lo && lo <= a->hi && hi >= a->lo) {
			a->lo = lo < a->lo ? lo : a->lo;
			a->hi = hi > a->hi ? hi : a->hi;
			continue;
		}
		dl_ahead_flush(a);
		a->lo = lo;
		a->hi = hi;
	}
	return 0;
}

/* Verifies every checksum of the deltas at [off, off + len) of fd,
 * asking for the pages their lines change meanwhile. */
static int dl_verify(int fd, uint64_t off, uint64_t len)
{
	dl_ahead a = {fd, 0, 0};
	int err = delta_scan(fd, off, len, true, true, dl_ahead_ent, &a, NULL);

	dl_ahead_flush(&a);
	return err;
}

/* Writes an entry's lines into the image. */
static int dl_apply_ent(void *ctx, const stg_delta_ent *e, const char *buf)
{
	int fd = *(int *)ctx;
	uint64_t zoff = e->zone << STG_ZONE_SHIFT, src = 0;

	for (unsigned l = 0, l1; delta_next_run(e->mask, &l, &l1); l = l1) {
		size_t n = (size_t)(l1 - l) * STG_LINE_SIZE;

		if (pool_pwrite_full(
			fd, buf + src, n,
			(off_t)(zoff + (uint64_t)l * STG_LINE_SIZE)) != 0)
			return errno ? errno : EIO;
		src += n;
	}
	stg_crash_point("delta.apply");
	return 0;
}

/* A walk of the deltas that failed: damaged (EINVAL) or an I/O error. */
static int dl_scan_err(stg_pool *p, int err, const char *what)
{
	if (err == EINVAL)
		return pool_err(p, GPMDB_CORRUPT,
				"database disk image is malformed: %s: the "
				"deltas of this backup copy are damaged (take "
				"the backup again)",
				p->path);
	return pool_err_io(p, err, what, p->path);
}

static uint32_t dl_sb_crc(const stg_superblock *sb)
{
	return (uint32_t)crc32(0L, (const Bytef *)sb, STG_SB_CRC_OFF);
}

/* Applies the deltas of the copy open on fd (the CONN byte held). */
static int dl_apply(stg_pool *p, int fd)
{
	stg_superblock sb;
	const char *what = "reading";
	uint64_t end;
	int err;

	if ((err = dl_pread(fd, &sb, sizeof(sb), 0)) != 0)
		goto io;
	if (memcmp(sb.magic, STG_SB_MAGIC_DELTA, 8) != 0 ||
	    dl_sb_crc(&sb) != sb.crc)
		return GPMDB_OK; /* applied by another opener meanwhile */
	/* every checksum first: nothing is written from a damaged delta */
	err = dl_verify(fd, sb.copy_delta_off, sb.copy_delta_len);
	if (err)
		return dl_scan_err(p, err, "reading");
	what = "applying the deltas of";
	err = delta_scan(fd, sb.copy_delta_off, sb.copy_delta_len, true, false,
			 dl_apply_ent, &fd, NULL);
	if (!err && fdatasync(fd) != 0)
		err = errno;
	if (err)
		goto io;
	stg_crash_point("delta.applied");
	end = sb.copy_delta_off; /* the image's end: the first delta's */
	memcpy(sb.magic, STG_SB_MAGIC, 8);
	sb.copy_delta_off = sb.copy_delta_len = 0;
	sb.crc = dl_sb_crc(&sb);
	if (pool_pwrite_full(fd, &sb, sizeof(sb), 0) != 0 || fdatasync(fd) != 0)
		err = errno ? errno : EIO;
	if (err)
		goto io;
	stg_crash_point("delta.sb");
	(void)ftruncate(fd, (off_t)end);
	return GPMDB_OK;
io:
	return pool_err_io(p, err, what, p->path);
}

int delta_open_apply(stg_pool *p)
{
	stg_superblock sb;
	struct flock fl;
	int fd, rc;

	if (p->fd < 0 || dl_pread(p->fd, &sb, sizeof(sb), 0) != 0 ||
	    memcmp(sb.magic, STG_SB_MAGIC_DELTA, 8) != 0 ||
	    dl_sb_crc(&sb) != sb.crc)
		return GPMDB_OK; /* validate_file says what it is */
	if (p->readonly) {
		/* in the private mapping once it is made: the file as it is */
		p->delta_private = true;
		p->dl_off = sb.copy_delta_off;
		p->dl_len = sb.copy_delta_len;
		return GPMDB_OK;
	}
	fd = open(p->path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return pool_err_io(p, errno, "opening", p->path);
	/* one opener applies; the others wait for it, then find none */
	memset(&fl, 0, sizeof(fl));
	fl.l_type = F_WRLCK;
	fl.l_whence = SEEK_SET;
	fl.l_start = (off_t)DL_LOCK;
	fl.l_len = 1;
	for (int i = 0; fcntl(fd, F_OFD_SETLK, &fl) != 0; i++) {
		if (i == 5000) { /* 10 s: a backup writing it, or readers */
			close(fd);
			return pool_err(p, GPMDB_BUSY,
					"database is locked: %s (its deltas "
					"are being written, or read-only "
					"connections have it open)",
					p->path);
		}
		usleep(2000);
	}
	rc = dl_apply(p, fd);
	close(fd); /* its lock with it */
	return rc;
}

/* An entry's lines into the private mapping. */
static int dl_apply_mem(void *ctx, const stg_delta_ent *e, const char *buf)
{
	stg_pool *p = ctx;
	uint64_t zoff = e->zone << STG_ZONE_SHIFT, src = 0;

	if (zoff >= p->map_len || p->map_len - zoff < STG_ZONE_SIZE)
		return EINVAL;
	for (unsigned l = 0, l1; delta_next_run(e->mask, &l, &l1); l = l1) {
		size_t n = (size_t)(l1 - l) * STG_LINE_SIZE;

		memcpy((char *)p->base + zoff + (uint64_t)l * STG_LINE_SIZE,
		       buf + src, n);
		src += n;
	}
	return 0;
}

int delta_reapply_private(stg_pool *p)
{
	stg_superblock sb;
	int err;

	/* applied in the file meanwhile (a read-write open): the pages
	 * read it as it is now */
	if (memcmp(p->sb.magic, STG_SB_MAGIC, 8) == 0 &&
	    dl_pread(p->fd, &sb, sizeof(sb), 0) == 0 &&
	    memcmp(sb.magic, STG_SB_MAGIC_DELTA, 8) != 0) {
		p->delta_private = false;
		return GPMDB_OK;
	}

	/* every checksum first, then the lines */
	err = dl_verify(p->fd, p->dl_off, p->dl_len);
	if (!err)
		err = delta_scan(p->fd, p->dl_off, p->dl_len, true, false,
				 dl_apply_mem, p, NULL);
	if (err)
		return dl_scan_err(p, err, "reading");
	/* the superblock this connection sees (integrity_check compares) */
	if (!memcmp(p->sb.magic, STG_SB_MAGIC, 8))
		memcpy(p->base, &p->sb, sizeof(p->sb));
	return GPMDB_OK;
}

/* The message validate_file gives a copy cut short (pool.c). */
static int dl_incomplete(stg_pool *p)
{
	return pool_err(p, GPMDB_NOTADB,
			"%s is an incomplete backup copy (cut short, or being "
			"written now): not a database; take the backup again",
			p->path);
}

int delta_after_lock(stg_pool *p)
{
	stg_superblock now;

	if (p->delta_private)
		return delta_apply_private(p);
	if (p->fd < 0 || dl_pread(p->fd, &now, sizeof(now), 0) != 0 ||
	    dl_sb_crc(&now) != now.crc)
		return GPMDB_OK;
	if (!memcmp(now.magic, STG_SB_MAGIC_INCOMPLETE, 8))
		return dl_incomplete(p);
	if (memcmp(now.magic, STG_SB_MAGIC_DELTA, 8) != 0)
		return GPMDB_OK;
	/* a backup gave it deltas between the look before the lock and
	 * the lock */
	if (p->readonly) {
		p->delta_private = true;
		return delta_apply_private(p);
	}
	return pool_err(p, GPMDB_BUSY,
			"database is locked: %s: a backup wrote deltas into "
			"it while it was being opened; open it again",
			p->path);
}

int delta_apply_private(stg_pool *p)
{
	stg_superblock *sb = &p->sb, now;
	int rc;

	/* the superblock again, now that this connection holds its lock
	 * (lock_open waited for a backup writing the copy, which may have
	 * added a delta or applied none) */
	if (dl_pread(p->fd, &now, sizeof(now), 0) != 0 ||
	    dl_sb_crc(&now) != now.crc)
		return pool_err(p, GPMDB_CORRUPT,
				"database disk image is malformed: %s: "
				"superblock checksum mismatch",
				p->path);
	if (!memcmp(now.magic, STG_SB_MAGIC_INCOMPLETE, 8))
		return dl_incomplete(p);
	*sb = now;
	if (memcmp(now.magic, STG_SB_MAGIC_DELTA, 8) != 0) {
		p->delta_private = false; /* applied meanwhile */
		return GPMDB_OK;
	}
	p->dl_off = now.copy_delta_off;
	p->dl_len = now.copy_delta_len;
	rc = delta_reapply_private(p);
	if (rc != GPMDB_OK)
		return rc;
	/* this connection sees a copy without deltas */
	memcpy(sb->magic, STG_SB_MAGIC, 8);
	sb->copy_delta_off = sb->copy_delta_len = 0;
	sb->crc = dl_sb_crc(sb);
	memcpy(p->base, sb, sizeof(*sb));
	return GPMDB_OK;
}
