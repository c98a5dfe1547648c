/*
 * lock.c - several connections on one pool: the write lock per write
 * transaction, the busy timeout, read snapshots, and catching up with
 * what other connections committed.
 *
 * Locks are open-file-description (OFD) byte-range locks on the pool
 * file, at offsets far past any pool's end (no data lives there).  Unlike
 * flock they come in several independent bytes, and unlike classic fcntl
 * locks they belong to the open() of each connection, so two connections
 * of one process exclude each other, and closing one descriptor of the
 * file does not drop another connection's locks.  The OS releases them
 * when a process dies (kill -9 included).
 *
 *   CONN     every connection holds it shared for its lifetime; an opener
 *            that gets it exclusive is alone: it recovers a crashed
 *            writer's logs into the file and resets <pool>-shm; a closer
 *            that gets it exclusive is the last: it checkpoints.
 *   WRITER   exclusive from the first write of a transaction to its end.
 *   PENDING  the queue: a writer that must wait for readers takes it
 *            exclusive, so that new readers queue behind it instead of
 *            starving it, and a reader that found READ taken for a
 *            millisecond does the same, so that the next write
 *            transaction waits behind it.  <pool>-shm counts both, and
 *            whoever finds no count skips PENDING: a reader then pays
 *            two system calls a statement, a pmem writer two a
 *            transaction (WRITER and READ, adjacent, in one call).
 *   READ     shared by a connection while a read snapshot is live; taken
 *            exclusive by a writer that changes bytes readers see: pmem
 *            mode for the whole write transaction when it writes in place
 *            (no reader about at its start), msync mode and pmem mode
 *            beside readers (wal.c "Beside readers": the pool mapped
 *            privately, commits through the log) only while it writes
 *            committed pages into the file or checkpoints (snapshots read
 *            the file plus the frames of <pool>-wal that were complete
 *            when they began).
 *
 * <pool>-shm is a page mapped shared by every connection: a change
 * counter bumped whenever a writer takes the lock, before it writes the
 * file with readers out (bump_own) and when it commits, so
 * that a connection whose counter is behind catches up (catch_up) before
 * it reads or writes: it drops its stale private pages, applies the new
 * frames of the log (msync mode; pmem mode when a writer beside readers
 * left frames: the pool mapped privately first), remaps a grown file,
 * recovers a dead
 * writer's transaction, and resets the caches derived from the pool.  It
 * is not durable state: the first opener resets it and the last closer
 * removes it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

#define LK_BASE	   (1ll << 62)
#define LK_CONN	   0
#define LK_PENDING 1
#define LK_WRITER  2 /* WRITER and READ adjacent: one call takes both */
#define LK_READ	   3

#define SHM_MAGIC 0x314d485342445047ull /* "GPDBSHM1" little-endian */
#define SHM_BYTES 4096
/* Readers of msync mode wait for a checkpoint at least this long, whatever
 * the busy timeout: it holds them out only while it writes. */
#define LK_READ_MIN_MS 30000
/* pmem mode: a reader that finds a write transaction writing in place
 * (one that began with no reader about) waits at least this long. */
#define LK_READ_PMEM_MIN_MS 2000
/* pmem mode: a write transaction writes beside readers through the log
 * while another connection began a read this recently (or one holds a
 * snapshot, or waits for one); else in place. */
#define LK_READERS_RECENT_NS (1000ull * 1000 * 1000)
#define LK_READER_SLOTS	     8

/* The shared page (<pool>-shm). */
typedef struct {
	uint64_t magic;
	uint64_t counter;  /* bumped by every writer at lock and commit */
	uint64_t commits;  /* bumped by every commit */
	uint64_t ip_salt;  /* the frames of this salt ... */
	uint64_t ip_seq;   /* ... up to this seq are written in place */
	uint32_t mode;	   /* stg_durability of the connections (0: unset) */
	uint32_t waiters;  /* writers waiting in PENDING for readers to go */
	uint32_t queued;   /* readers waiting in PENDING for a writer to go */
	uint64_t wal_salt; /* the log's last committed frame: salt ... */
	uint64_t wal_seq;  /* ... and seq (0: none since its header) */
	/* the last readers: their lk.id and when they began a read
	 * (pool_now_ns), one slot each */
	struct {
		uint64_t id, ns;
	} readers[LK_READER_SLOTS];
	/* the line masks' reset point R (zones.c): moved by backups, read
	 * by writers at their transaction's start; only when masks restart
	 * hangs on it, never what they hold (0 after a restart: none) */
	uint64_t lines_reset;
} lk_shm;

static lk_shm *shm(const stg_pool *p)
{
	return (lk_shm *)p->lk.shm;
}

/* Bumps the counter before this writer writes the file where readers
 * read it (readers are out): a reader that caught up before must look
 * again when it comes back, and find the log of a writer that died
 * here (a big commit's undo log and data, a recovery half done).  The
 * writer stays current when nobody bumped since its own catch-up. */
static void bump_own(stg_pool *p)
{
	uint64_t before =
	    __atomic_fetch_add(&shm(p)->counter, 1, __ATOMIC_SEQ_CST);

	if (before == p->lk.seen)
		p->lk.seen = before + 1;
}

/* The line masks' reset point (zones.c): in the shared page where other
 * connections may write, else this connection's. */
uint64_t lock_lines_reset(const stg_pool *p)
{
	if (p->lk.on && p->lk.shm)
		return __atomic_load_n(&shm(p)->lines_reset, __ATOMIC_RELAXED);
	return p->lm_reset_local;
}

/* Moves it up to r (never back; a read-only page: left). */
void lock_lines_reset_move(stg_pool *p, uint64_t r)
{
	uint64_t *w, cur;

	if (!(p->lk.on && p->lk.shm)) {
		if (r > p->lm_reset_local)
			p->lm_reset_local = r;
		return;
	}
	if (!p->lk.shm_rw)
		return;
	w = &shm(p)->lines_reset;
	cur = __atomic_load_n(w, __ATOMIC_RELAXED);
	while (cur < r &&
	       !__atomic_compare_exchange_n(w, &cur, r, false, __ATOMIC_RELAXED,
					    __ATOMIC_RELAXED))
		;
}

/* ---- Byte locks --------------------------------------------------------- */

/* Bytes [first, last] in one call (all or none). */
static int ofd_range(int fd, int cmd, short type, int first, int last)
{
	struct flock fl;

	memset(&fl, 0, sizeof(fl));
	fl.l_type = type;
	fl.l_whence = SEEK_SET;
	fl.l_start = (off_t)(LK_BASE + first);
	fl.l_len = last - first + 1;
	return fcntl(fd, cmd, &fl);
}

static int ofd(int fd, int cmd, short type, int byte)
{
	return ofd_range(fd, cmd, type, byte, byte);
}

/* One non-blocking try: GPMDB_OK, GPMDB_BUSY, or an I/O error. */
static int lk_try(stg_pool *p, int byte, short type)
{
	int err;

	if (ofd(p->lk.fd, F_OFD_SETLK, type, byte) == 0)
		return GPMDB_OK;
	err = errno;
	if (err == EAGAIN || err == EACCES)
		return GPMDB_BUSY;
	return pool_err(p, GPMDB_IOERR, "cannot lock %s: %s", p->path,
			strerror(err));
}

static void lk_unlock(stg_pool *p, int byte)
{
	(void)ofd(p->lk.fd, F_OFD_SETLK, F_UNLCK, byte);
}

/* Tries until ms have passed, sleeping between tries from 10 us (a pmem
 * write transaction of one row takes about that) doubling to 20 ms. */
static int lk_wait(stg_pool *p, int byte, short type, int ms)
{
	uint64_t end = pool_now_ns() + (uint64_t)(ms > 0 ? ms : 0) * 1000000;
	long nap = 10000;
	int rc;

	for (;;) {
		rc = lk_try(p, byte, type);
		if (rc != GPMDB_BUSY || pool_now_ns() >= end)
			return rc;
		struct timespec ts = {0, nap};
		nanosleep(&ts, NULL);
		if (nap < 20000000)
			nap *= 2;
	}
}

static int busy(stg_pool *p, const char *why)
{
	return pool_err(p, GPMDB_BUSY, "database is locked: %s: %s", p->path,
			why);
}

/* ---- Open and close ----------------------------------------------------- */

static void shm_path(const stg_pool *p, char *buf, size_t n)
{
	snprintf(buf, n, "%s-shm", p->path);
}

int lock_open(stg_pool *p, bool *alone)
{
	char path[4200];
	struct stat st;
	int fd, err, rc;
	bool rw = true;
	void *m;

	*alone = false;
	p->lk.shm_fd = -1;
	p->lk.fd = p->fd;
	if (p->memory)
		return GPMDB_OK; /* nobody else can see it */
	/* a read-only descriptor takes no write lock: a read-only open
	 * locks through a read-write one where the file lets it (so that
	 * the last to close, read-only or not, removes <pool>-shm); else it
	 * is never alone (it recovers nothing into the file anyway) */
	if (p->readonly) {
		int wfd = open(p->path, O_RDWR | O_CLOEXEC);

		if (wfd >= 0)
			p->lk.fd = p->lk.own_fd = wfd;
	}
	rc = p->lk.fd == p->fd && p->readonly ? GPMDB_BUSY
					      : lk_try(p, LK_CONN, F_WRLCK);
	if (rc == GPMDB_OK) {
		*alone = true;
	} else if (rc == GPMDB_BUSY) {
		/* an opener recovering or a closer checkpointing holds it
		 * exclusive for a moment */
		if (ofd(p->lk.fd, F_OFD_SETLKW, F_RDLCK, LK_CONN) != 0) {
			err = errno;
			return pool_err(p, GPMDB_IOERR, "cannot lock %s: %s",
					p->path, strerror(err));
		}
	} else {
		return rc;
	}
	shm_path(p, path, sizeof(path));
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0 && p->readonly) {
		rw = false;
		fd = open(path, O_RDONLY | O_CLOEXEC);
	}
	if (fd < 0) {
		err = errno;
		if (p->readonly && err != ENOMEM) {
			/* a read-only directory: nobody can write beside us
			 * (a writer needs <pool>-shm); one snapshot at open */
			return GPMDB_OK;
		}
		return pool_err(p, GPMDB_CANTOPEN,
				"unable to open %s (the connections' shared "
				"state): %s",
				path, strerror(err));
	}
	if (fstat(fd, &st) != 0 || (st.st_size < SHM_BYTES &&
				    (!rw || ftruncate(fd, SHM_BYTES) != 0))) {
		err = errno;
		close(fd);
		return pool_err(p, GPMDB_IOERR, "cannot size %s: %s", path,
				err ? strerror(err) : "too short");
	}
	m = mmap(NULL, SHM_BYTES, PROT_READ | (rw ? PROT_WRITE : 0), MAP_SHARED,
		 fd, 0);
	if (m == MAP_FAILED) {
		err = errno;
		close(fd);
		return pool_err(p, GPMDB_IOERR, "cannot map %s: %s", path,
				strerror(err));
	}
	p->lk.shm_fd = fd;
	p->lk.shm = m;
	if (getrandom(&p->lk.id, sizeof(p->lk.id), GRND_NONBLOCK) !=
	    sizeof(p->lk.id))
		p->lk.id = pool_now_ns() ^ ((uint64_t)getpid() << 32);
	p->lk.id |= 1; /* never 0, shm's "none" */
	p->lk.shm_rw = rw;
	p->lk.on = true;
	if (*alone && rw) {
		lk_shm *s = shm(p);

		/* a dead process's state: start over (the counter moves on,
		 * so that nothing matches a stale value) */
		s->magic = SHM_MAGIC;
		s->ip_salt = 0;
		s->ip_seq = 0;
		s->mode = 0;
		s->waiters = 0;
		s->queued = 0;
		s->wal_salt = 0;
		s->wal_seq = 0; /* the opener replays the log (wal_recover) */
		memset(s->readers, 0, sizeof(s->readers));
		__atomic_add_fetch(&s->counter, 1, __ATOMIC_SEQ_CST);
	}
	p->lk.force = true;
	return GPMDB_OK;
}

int lock_set_mode(stg_pool *p, stg_durability dur)
{
	lk_shm *s;
	uint32_t want = (uint32_t)dur, cur = 0;

	if (!p->lk.on)
		return GPMDB_OK;
	s = shm(p);
	if (p->lk.shm_rw &&
	    __atomic_compare_exchange_n(&s->mode, &cur, want, false,
					__ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
		return GPMDB_OK;
	cur = __atomic_load_n(&s->mode, __ATOMIC_SEQ_CST);
	/* pmem and off both write the shared mapping in place; an msync
	 * connection reads the log that they never write */
	if (cur == 0 || (cur == STG_DUR_MSYNC) == (want == STG_DUR_MSYNC))
		return GPMDB_OK;
	return pool_err(p, GPMDB_BUSY,
			"database is locked: %s is open in %s mode by another "
			"connection; open it in the same mode",
			p->path, stg_durability_name((stg_durability)cur));
}

stg_durability lock_mode(const stg_pool *p)
{
	return p->lk.on ? (stg_durability)shm(p)->mode : STG_DUR_AUTO;
}

void lock_open_done(stg_pool *p)
{
	if (p->lk.fd >= 0)
		(void)ofd(p->lk.fd, F_OFD_SETLK, F_RDLCK, LK_CONN);
	if (p->lk.on)
		p->lk.seen =
		    __atomic_load_n(&shm(p)->counter, __ATOMIC_SEQ_CST);
}

bool lock_last(stg_pool *p)
{
	if (p->memory)
		return true;
	if (p->lk.fd < 0 || (p->readonly && p->lk.fd == p->fd))
		return false;
	return lk_try(p, LK_CONN, F_WRLCK) == GPMDB_OK;
}

void lock_close(stg_pool *p, bool last)
{
	char path[4200];

	if (p->lk.shm) {
		if (last) {
			shm_path(p, path, sizeof(path));
			(void)unlink(path);
		}
		munmap(p->lk.shm, SHM_BYTES);
		p->lk.shm = NULL;
	}
	if (p->lk.shm_fd >= 0)
		close(p->lk.shm_fd);
	p->lk.shm_fd = -1;
	if (p->lk.own_fd > 0)
		close(p->lk.own_fd); /* a read-only open's locks go */
	p->lk.own_fd = -1;
	p->lk.on = false;
}

bool lock_current(const stg_pool *p)
{
	return !p->lk.on || __atomic_load_n(&shm(p)->counter,
					    __ATOMIC_SEQ_CST) == p->lk.seen;
}

void stg_busy_timeout(stg_pool *p, int ms)
{
	if (p)
		p->lk.busy_ms = ms < 0 ? 0 : ms;
}

int stg_get_busy_timeout(const stg_pool *p)
{
	return p ? p->lk.busy_ms : 0;
}

uint64_t stg_data_version(const stg_pool *p)
{
	return p ? p->lk.data_version : 0;
}

/* ---- Catching up -------------------------------------------------------- */

static bool shared_map(const stg_pool *p)
{
	return !p->wal.on && !p->private_map;
}

/* pmem mode: can this connection map the pool privately to write (or
 * read) beside other connections' snapshots?  A pool in a reservation
 * only (wal_shadow_begin), and not when asked to write in place. */
static bool can_shadow(const stg_pool *p)
{
	return p->pm_resv && !p->memory && !p->readonly && !p->in_place_only;
}

/* pmem mode: has another connection begun a read lately?  Then a write
 * transaction goes beside readers even when none is on at its start:
 * readers coming while a transaction writes in place wait for its end.
 * The last LK_READER_SLOTS readers are known (a racy table: a lost
 * update only changes where the next transaction writes). */
static bool readers_recent(const stg_pool *p)
{
	uint64_t now = pool_now_ns();

	for (int i = 0; i < LK_READER_SLOTS; i++) {
		uint64_t id = __atomic_load_n(&shm(p)->readers[i].id,
					      __ATOMIC_RELAXED),
			 t = __atomic_load_n(&shm(p)->readers[i].ns,
					     __ATOMIC_RELAXED);

		if (id && id != p->lk.id && now - t < LK_READERS_RECENT_NS)
			return true;
	}
	return false;
}

/* pmem mode: readers about: one began a read lately, or one waits for
 * READ (queued in PENDING).  A write transaction then goes beside them,
 * and a private writer stays private. */
static bool readers_about(const stg_pool *p)
{
	return __atomic_load_n(&shm(p)->queued, __ATOMIC_SEQ_CST) > 0 ||
	       readers_recent(p);
}

/* A read begins: this connection's slot (or the oldest) gets the time. */
static void reader_note(stg_pool *p)
{
	int slot = 0;
	uint64_t oldest = UINT64_MAX;

	for (int i = 0; i < LK_READER_SLOTS; i++) {
		uint64_t id = __atomic_load_n(&shm(p)->readers[i].id,
					      __ATOMIC_RELAXED),
			 t = __atomic_load_n(&shm(p)->readers[i].ns,
					     __ATOMIC_RELAXED);

		if (id == p->lk.id) {
			slot = i;
			break;
		}
		if (t < oldest) {
			oldest = t;
			slot = i;
		}
	}
	__atomic_store_n(&shm(p)->readers[slot].id, p->lk.id, __ATOMIC_RELAXED);
	__atomic_store_n(&shm(p)->readers[slot].ns, pool_now_ns(),
			 __ATOMIC_RELAXED);
}

/* The file grew under us: map the new range. */
static int refit(stg_pool *p)
{
	struct stat st;
	int err;

	if (fstat(p->fd, &st) != 0) {
		err = errno;
		return pool_err(p, GPMDB_IOERR, "cannot stat %s: %s", p->path,
				strerror(err));
	}
	if ((uint64_t)st.st_size <= p->map_len)
		return GPMDB_OK;
	if (p->wal.on)
		return wal_grow(p, (uint64_t)st.st_size);
	if (p->private_map)
		return pool_ro_grow(p, (uint64_t)st.st_size);
	return pool_remap(p);
}

/*
 * Brings this connection's view up to the last commit (writer: with the
 * lock held; reader: with READ held).  *recover: a pmem reader found a
 * dead writer's log, which only the write lock may undo.
 */
static int catch_up(stg_pool *p, bool writer, bool *recover)
{
	uint64_t c = __atomic_load_n(&shm(p)->counter, __ATOMIC_SEQ_CST);
	bool full = p->lk.force, rec = false, changed = false, undone = false;
	int rc;

	*recover = false;
	if (c == p->lk.seen && !p->lk.force) {
		if (!writer || !p->lk.wstale)
			return GPMDB_OK;
	} else {
		changed = true;
		if ((rc = refit(p)) != GPMDB_OK)
			return rc;
		/* pmem mode: frames that a writer beside readers committed
		 * and nobody wrote into the file yet: a private view with
		 * them applied, or (no reservation to map privately in)
		 * into the file under the write lock */
		if (!writer && shared_map(p) && !lock_frames_in_file(p)) {
			if (!can_shadow(p)) {
				*recover = true;
				return GPMDB_OK;
			}
			if ((rc = wal_shadow_begin(p)) != GPMDB_OK)
				return rc;
		}
		if (p->wal.on || p->private_map) {
			rc = wal_catch_up(p, p->lk.force, &full);
			if (rc != GPMDB_OK)
				return rc;
		}
		p->lk.force = false;
		idx_presorted_clear(p);
		p->ix_epoch++;
		p->lk.data_version++;
		stamp_all(p);
		p->lk.wstale = true;
	}
	/* (a private log region of a read-write msync connection hides
	 * the file's, but a dead big writer changed the salt: full) */
	if (full || changed || (writer && p->lk.wstale)) {
		/* the log: empty unless a writer died in it */
		if (writer) {
			rc = mlog_open(p, &rec);
			if (rc == GPMDB_OK && rec && p->wal.on)
				rc = lock_flush_recovery(p);
			if (rc != GPMDB_OK)
				return rc;
			p->alloc_hint = 0;
			if ((rc = alloc_open(p)) != GPMDB_OK)
				return rc;
			p->lk.wstale = false;
		} else if (mlog_busy(p)) {
			if (shared_map(p)) {
				*recover = true;
				return GPMDB_OK;
			}
			/* undo it in this connection's private pages; the
			 * next catch-up drops them */
			p->lk.no_track = true;
			rc = mlog_open(p, &rec);
			p->lk.no_track = false;
			p->lk.force = true;
			p->lk.wstale = true;
			undone = true;
			if (rc != GPMDB_OK)
				return rc;
		}
	}
	/* a reader's private view once the log is empty again: shared;
	 * not when it has just undone a dead writer's transaction in its
	 * private pages: the file keeps those stores until a writer
	 * recovers it (the next catch-up looks again) */
	if (!writer && !undone && wal_shadow_can_end(p) &&
	    (rc = wal_shadow_end(p)) != GPMDB_OK)
		return rc;
	p->lk.seen = c;
	return GPMDB_OK;
}

/* ---- Readers ------------------------------------------------------------ */

/* A pmem reader that finds a dead writer's transaction undoes it under
 * the write lock and looks again, at most this many times. */
#define LK_RECOVER_TRIES 8

void (*stg_test_after_recover)(void);

static int read_wait_ms(const stg_pool *p)
{
	if ((p->wal.on && !p->wal.shadow) ||
	    (p->private_map && p->dur == STG_DUR_MSYNC))
		return p->lk.busy_ms > LK_READ_MIN_MS ? p->lk.busy_ms
						      : LK_READ_MIN_MS;
	return p->lk.busy_ms > LK_READ_PMEM_MIN_MS ? p->lk.busy_ms
						   : LK_READ_PMEM_MIN_MS;
}

static int take_read(stg_pool *p)
{
	int rc, ms = read_wait_ms(p);

	/* no writer waits for readers to go: READ alone, a few tries (a
	 * writer that starts waiting now waits for us, briefly) */
	rc = GPMDB_BUSY;
	if (__atomic_load_n(&shm(p)->waiters, __ATOMIC_SEQ_CST) == 0)
		rc = lk_wait(p, LK_READ, F_RDLCK, ms < 1 ? ms : 1);
	if (rc == GPMDB_BUSY) {
		/* queue in PENDING, exclusive: the next write transaction
		 * waits there behind us (a writer that loops would starve
		 * readers that only nap), and behind a writer queued first */
		pool_clear_err(p);
		__atomic_add_fetch(&shm(p)->queued, 1, __ATOMIC_SEQ_CST);
		rc = lk_wait(p, LK_PENDING, F_WRLCK, ms);
		if (rc == GPMDB_OK) {
			rc = lk_wait(p, LK_READ, F_RDLCK, ms);
			lk_unlock(p, LK_PENDING);
		}
		__atomic_sub_fetch(&shm(p)->queued, 1, __ATOMIC_SEQ_CST);
	}
	if (rc == GPMDB_BUSY)
		return busy(p, "a write transaction is running (PRAGMA "
			       "busy_timeout sets how long to wait)");
	return rc;
}

int stg_read_begin(stg_pool *p)
{
	bool recover = false;
	int rc;

	if (p == NULL)
		return GPMDB_MISUSE;
	if (!p->lk.on || p->lk.reading++ > 0 || p->lk.writer)
		return GPMDB_OK;
	pool_clear_err(p);
	/* pmem mode: writers go beside readers for a while (lock_write) */
	if (p->lk.shm_rw && !p->lk.quiet &&
	    (p->dur != STG_DUR_MSYNC || p->wal.shadow))
		reader_note(p);
	for (int tries = 0;; tries++) {
		if ((rc = take_read(p)) != GPMDB_OK)
			break;
		p->lk.read_held = true;
		rc = catch_up(p, false, &recover);
		if (rc != GPMDB_OK || !recover)
			break;
		/* another writer died in a transaction after this one's
		 * recovery (until the twenty-eighth session the second find
		 * was read as it was: that writer's stores); a few times,
		 * then busy, never a dead writer's stores */
		if (tries == LK_RECOVER_TRIES) {
			rc = busy(p, "writers keep dying in their "
				     "transactions; their stores are undone "
				     "before a read");
			break;
		}
		/* a dead pmem writer's transaction: undo it in place under
		 * the write lock, then read */
		lk_unlock(p, LK_READ);
		p->lk.read_held = false;
		p->lk.reading = 0; /* no snapshot yet to keep */
		rc = lock_write(p);
		if (rc == GPMDB_OK)
			lock_write_end(p, false);
		p->lk.reading = 1;
		if (rc == GPMDB_OK && stg_test_after_recover)
			stg_test_after_recover();
		if (rc != GPMDB_OK)
			break;
	}
	if (rc != GPMDB_OK) {
		if (p->lk.read_held)
			lk_unlock(p, LK_READ);
		p->lk.read_held = false;
		p->lk.reading = 0;
		return rc;
	}
	p->lk.snap_commits =
	    __atomic_load_n(&shm(p)->commits, __ATOMIC_SEQ_CST);
	return GPMDB_OK;
}

void stg_read_end(stg_pool *p)
{
	if (p == NULL || !p->lk.on || p->lk.reading == 0)
		return;
	if (--p->lk.reading == 0 && p->lk.read_held && !p->lk.writer) {
		lk_unlock(p, LK_READ);
		p->lk.read_held = false;
	}
}

/* ---- Writers ------------------------------------------------------------ */

/* READ exclusive: at once, or waiting up to ms in PENDING, which new
 * readers then queue behind (shm waiters tells them to look). */
static int readers_out(stg_pool *p, int ms)
{
	int rc;

	/* PENDING first: a reader queued there (take_read) goes first */
	if (ms <= 0) {
		rc = lk_try(p, LK_PENDING, F_WRLCK);
		if (rc == GPMDB_OK) {
			rc = lk_try(p, LK_READ, F_WRLCK);
			lk_unlock(p, LK_PENDING);
		}
		return rc;
	}
	__atomic_add_fetch(&shm(p)->waiters, 1, __ATOMIC_SEQ_CST);
	rc = lk_wait(p, LK_PENDING, F_WRLCK, ms);
	if (rc == GPMDB_OK) {
		rc = lk_wait(p, LK_READ, F_WRLCK, ms);
		lk_unlock(p, LK_PENDING);
	}
	__atomic_sub_fetch(&shm(p)->waiters, 1, __ATOMIC_SEQ_CST);
	return rc;
}

int lock_write(stg_pool *p)
{
	bool recover = false, pmem, beside;
	int rc;

	if (!p->lk.on || p->lk.writer)
		return GPMDB_OK;
	if (!p->lk.shm_rw)
		return pool_err(p, GPMDB_READONLY,
				"attempt to write a readonly database: %s "
				"(its -shm file is not writable)",
				p->path);
	pmem = shared_map(p);
	beside = pmem && can_shadow(p);
	if (pmem && p->lk.reading == 0 &&
	    __atomic_load_n(&shm(p)->queued, __ATOMIC_SEQ_CST) == 0 &&
	    !(beside && readers_recent(p)) &&
	    ofd_range(p->lk.fd, F_OFD_SETLK, F_WRLCK, LK_WRITER, LK_READ) ==
		0) {
		/* no writer, no reader, none queued: WRITER and READ in one
		 * call (lock_write_end gives them back in one) */
		p->lk.read_ex = true;
		p->lk.writer = true;
		goto locked;
	}
	rc = lk_wait(p, LK_WRITER, F_WRLCK, p->lk.busy_ms);
	if (rc == GPMDB_BUSY)
		return busy(p, "another connection is writing (PRAGMA "
			       "busy_timeout sets how long to wait)");
	if (rc != GPMDB_OK)
		return rc;
	if (p->lk.reading > 0 &&
	    __atomic_load_n(&shm(p)->commits, __ATOMIC_SEQ_CST) !=
		p->lk.snap_commits) {
		lk_unlock(p, LK_WRITER);
		return busy(p, "another connection committed after this "
			       "transaction began reading; roll back and "
			       "retry");
	}
	if (pmem && beside) {
		/* readers about: beside them through the log (wal.c "Beside
		 * readers"); else in place, readers out for the transaction */
		rc = readers_about(p) ? GPMDB_BUSY : readers_out(p, 0);
		if (rc == GPMDB_OK) {
			p->lk.read_ex = true;
		} else if (rc == GPMDB_BUSY) {
			pool_clear_err(p);
			rc = wal_shadow_begin(p);
			p->lk.wstale = true; /* the log and allocator again */
		}
		if (rc != GPMDB_OK) {
			if (p->lk.read_held)
				(void)ofd(p->lk.fd, F_OFD_SETLK, F_RDLCK,
					  LK_READ);
			lk_unlock(p, LK_WRITER);
			return rc;
		}
	} else if (pmem) {
		/* it writes in place: readers out for the whole transaction */
		rc = readers_out(p, p->lk.busy_ms);
		if (rc != GPMDB_OK) {
			if (p->lk.read_held)
				(void)ofd(p->lk.fd, F_OFD_SETLK, F_RDLCK,
					  LK_READ);
			lk_unlock(p, LK_WRITER);
			return rc == GPMDB_BUSY
				   ? busy(p, "readers are reading (PRAGMA "
					     "busy_timeout sets how long to "
					     "wait)")
				   : rc;
		}
		p->lk.read_ex = true;
	} else if (p->lk.read_held) {
		/* the writer's own view is current: checkpoints may go */
		lk_unlock(p, LK_READ);
		p->lk.read_held = false;
	}
	p->lk.writer = true;
locked:
	/* from here on others must look again, even if we die: the counter
	 * moves before anything is written (the catch-up below may recover
	 * a dead writer's transaction in place) */
	bump_own(p);
	/* in place: the frames that writers beside readers left go into
	 * the file first (the catch-up then reads the log and allocator) */
	if (p->lk.read_ex && shared_map(p) && lock_frames_live(p)) {
		rc = wal_settle_file(p);
		p->lk.wstale = true;
		if (rc != GPMDB_OK) {
			lock_write_end(p, false);
			return rc;
		}
	}
	rc = catch_up(p, true, &recover);
	/* beside readers no longer: the frames in place, shared again */
	if (rc == GPMDB_OK && p->wal.shadow) {
		bool out;

		/* asked to write in place: wait for the readers to go */
		if (p->in_place_only)
			out = lock_readers_out_wait(p, p->lk.busy_ms);
		else
			out = !readers_about(p) && lock_readers_out(p);
		if (out) {
			rc = wal_shadow_settle(p);
			if (rc == GPMDB_OK && !p->wal.shadow) {
				p->lk.read_out = false; /* for the txn */
				p->lk.read_ex = true;
			} else {
				lock_readers_back(p);
			}
		} else if (p->in_place_only) {
			rc = busy(p, "readers are reading (PRAGMA "
				     "busy_timeout sets how long to wait)");
		}
	}
	if (rc == GPMDB_OK)
		return GPMDB_OK;
	lock_write_end(p, false);
	return rc;
}

void lock_write_end(stg_pool *p, bool committed)
{
	if (!p->lk.on || !p->lk.writer)
		return;
	if (committed)
		__atomic_add_fetch(&shm(p)->commits, 1, __ATOMIC_SEQ_CST);
	p->lk.seen = __atomic_add_fetch(&shm(p)->counter, 1, __ATOMIC_SEQ_CST);
	if (p->lk.read_ex && p->lk.reading == 0) {
		/* WRITER and READ at once */
		(void)ofd_range(p->lk.fd, F_OFD_SETLK, F_UNLCK, LK_WRITER,
				LK_READ);
		p->lk.read_ex = false;
		p->lk.read_held = false;
		p->lk.writer = false;
		return;
	}
	if (p->lk.read_ex) {
		(void)ofd(p->lk.fd, F_OFD_SETLK, F_RDLCK, LK_READ);
		p->lk.read_held = true;
		p->lk.read_ex = false;
	}
	if (p->lk.reading > 0) {
		p->lk.snap_commits =
		    __atomic_load_n(&shm(p)->commits, __ATOMIC_SEQ_CST);
		if (!p->lk.read_held &&
		    ofd(p->lk.fd, F_OFD_SETLK, F_RDLCK, LK_READ) == 0)
			p->lk.read_held = true;
	}
	lk_unlock(p, LK_WRITER);
	p->lk.writer = false;
}

/* msync mode: may the writer put committed pages into the file now?
 * Holds READ exclusive until lock_readers_back. */
bool lock_readers_out(stg_pool *p)
{
	if (!p->lk.on || p->lk.read_ex)
		return true;
	if (lk_try(p, LK_READ, F_WRLCK) != GPMDB_OK) {
		pool_clear_err(p);
		return false;
	}
	p->lk.read_out = true;
	bump_own(p);
	return true;
}

/* As lock_readers_out, but waits up to ms, ahead of new readers. */
bool lock_readers_out_wait(stg_pool *p, int ms)
{
	int rc;

	if (!p->lk.on || p->lk.read_ex)
		return true;
	rc = readers_out(p, ms);
	if (rc != GPMDB_OK) {
		pool_clear_err(p);
		return false;
	}
	p->lk.read_out = true;
	bump_own(p);
	return true;
}

void lock_readers_back(stg_pool *p)
{
	if (!p->lk.read_out)
		return;
	lk_unlock(p, LK_READ);
	p->lk.read_out = false;
}

void lock_published_in_place(stg_pool *p, uint64_t salt, uint64_t seq)
{
	if (!p->lk.on)
		return;
	shm(p)->ip_salt = salt;
	shm(p)->ip_seq = seq;
}

void lock_published_frame(stg_pool *p, uint64_t salt, uint64_t seq)
{
	if (!p->lk.on || !p->lk.shm_rw)
		return;
	/* salt first: a reader that sees the new seq with the old salt
	 * finds the frames not in place, which is only cautious */
	__atomic_store_n(&shm(p)->wal_salt, salt, __ATOMIC_SEQ_CST);
	__atomic_store_n(&shm(p)->wal_seq, seq, __ATOMIC_SEQ_CST);
}

bool lock_frames_live(const stg_pool *p)
{
	return p->lk.on &&
	       __atomic_load_n(&shm(p)->wal_seq, __ATOMIC_SEQ_CST) != 0;
}

bool lock_frames_in_file(const stg_pool *p)
{
	uint64_t salt, seq;

	if (!p->lk.on)
		return true;
	salt = __atomic_load_n(&shm(p)->wal_salt, __ATOMIC_SEQ_CST);
	seq = __atomic_load_n(&shm(p)->wal_seq, __ATOMIC_SEQ_CST);
	return seq == 0 || lock_in_place(p, salt, seq);
}

bool lock_in_place(const stg_pool *p, uint64_t salt, uint64_t seq)
{
	if (!p->lk.on)
		return false;
	return shm(p)->ip_salt == salt && shm(p)->ip_seq >= seq;
}

/* A dead msync writer's big transaction, undone in this connection's
 * pages: into the file, readers out (they undo it in memory meanwhile). */
int lock_flush_recovery(stg_pool *p)
{
	int rc;

	if (!lock_readers_out_wait(p,
				   p->lk.busy_ms > 1000 ? p->lk.busy_ms : 1000))
		return busy(p, "readers hold the file while a dead "
			       "writer's transaction must be undone");
	rc = wal_flush_recovery(p);
	lock_readers_back(p);
	return rc;
}
