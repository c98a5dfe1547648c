/*
 * backup.c - a copy of the pool's committed state in a new file (VACUUM
 * INTO, the shell's .backup).
 *
 * Outside a transaction the mapping holds exactly the committed state in
 * both durability modes (msync mode's private pages are committed pages
 * not yet dropped, and its log region an empty log), so the copy is the
 * mapping's bytes up to the pool size.  Everything but the superblock is
 * written and fdatasynced first, the superblock last: a copy cut short
 * has none and is refused at open ("file is not a gpmdb database"), never
 * misread.  The destination must not exist (as SQLite's VACUUM INTO); on
 * any error it is removed and the database is untouched.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

#define BK_CHUNK (64ull << 20)

/* A failed copy: closed, removed, the error said (pool_err_io). */
static int bk_fail(stg_pool *p, int fd, const char *dest, const char *what,
		   int err)
{
	if (fd >= 0)
		close(fd);
	unlink(dest);
	return pool_err_io(p, err, what, dest);
}

static int bk_write(int fd, const char *src, uint64_t n, uint64_t off)
{
	return pool_pwrite_full(fd, src, (size_t)n, (off_t)off) ? errno : 0;
}

int stg_backup_to(stg_pool *p, const char *dest, uint64_t *bytes)
{
	uint64_t size, off;
	int fd, err = 0;

	if (p == NULL || dest == NULL || !*dest)
		return GPMDB_MISUSE;
	pool_clear_err(p);
	if (bytes)
		*bytes = 0;
	if (p->broken)
		return pool_err(p, GPMDB_IOERR, "pool %s is no longer mapped",
				p->path);
	if (p->in_txn)
		return pool_err(p, GPMDB_ERROR,
				"cannot VACUUM from within a transaction");
	size = pool_root(p)->pool_size;
	if (size > p->map_len)
		size = p->map_len;
	fd = open(dest, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0) {
		err = errno;
		if (err == EEXIST)
			return pool_err(p, GPMDB_ERROR,
					"output file already exists: %s", dest);
		return pool_err(p, GPMDB_CANTOPEN,
				"unable to open the output file %s: %s", dest,
				strerror(err));
	}
	err = posix_fallocate(fd, 0, (off_t)size);
	if (err)
		return bk_fail(p, fd, dest, "allocating", err);
		/* everything but the superblock, on every core */
#pragma omp parallel for schedule(dynamic, 1) reduction(| : err)
	for (off = STG_SB_SIZE; off < size; off += BK_CHUNK) {
		uint64_t n = size - off < BK_CHUNK ? size - off : BK_CHUNK;
		err |= bk_write(fd, (const char *)pool_at(p, off), n, off);
	}
	if (err || fdatasync(fd) != 0)
		return bk_fail(p, fd, dest, "writing", err ? err : errno);
	/* the superblock last: from here on the copy is a database */
	err = bk_write(fd, (const char *)pool_at(p, 0), STG_SB_SIZE, 0);
	if (err || fdatasync(fd) != 0)
		return bk_fail(p, fd, dest, "writing", err ? err : errno);
	if (close(fd) != 0)
		return bk_fail(p, -1, dest, "closing", errno);
	if (pool_fsync_dir(dest) != 0)
		return bk_fail(p, -1, dest, "syncing the directory of", errno);
	if (bytes)
		*bytes = size;
	return GPMDB_OK;
}
