/*
 * backup.c - a copy of the pool's committed state in a new file (VACUUM
 * INTO, the shell's .backup, gpmdb_backup_*: in steps of pages).
 *
 * Outside a transaction the mapping holds exactly the committed state in
 * both durability modes (msync mode's private pages are committed pages
 * not yet dropped, and its log region an empty log), so the copy is the
 * mapping's bytes up to the pool size.  Everything but the superblock is
 * written and fdatasynced first, the superblock last: a copy cut short
 * has none and is refused at open ("file is not a gpmdb database"), never
 * misread.  The destination must not exist (as SQLite's VACUUM INTO); on
 * any error it is removed and the database is untouched.  The caller
 * holds a read snapshot from begin to finish (lock.c), so that the
 * mapping is one committed state while writers go on.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

#define BK_CHUNK (64ull << 20)

struct stg_backup {
	stg_pool *p;
	char *dest;
	int fd;
	uint64_t size; /* bytes to copy: the pool's size */
	uint64_t next; /* the next byte to copy ([0, STG_SB_SIZE) last) */
	int rc;	       /* the first error (the copy is removed at finish) */
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

int stg_backup_begin(stg_pool *p, const char *dest, stg_backup **out)
{
	stg_backup *b;
	int fd, err;

	if (out)
		*out = NULL;
	if (p == NULL || dest == NULL || !*dest || out == NULL)
		return GPMDB_MISUSE;
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
	b->size = pool_root(p)->pool_size;
	if (b->size > p->map_len)
		b->size = p->map_len;
	b->next = STG_SB_SIZE;
	fd = open(dest, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
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
	err = posix_fallocate(fd, 0, (off_t)b->size);
	if (err) {
		bk_fail(b, "allocating", err);
		return stg_backup_finish(b);
	}
	*out = b;
	return GPMDB_OK;
}

int stg_backup_step(stg_backup *b, long long npages)
{
	uint64_t end, off;
	int err = 0;

	if (b == NULL)
		return GPMDB_MISUSE;
	if (b->rc != GPMDB_OK)
		return b->rc;
	if (b->next >= b->size)
		return GPMDB_DONE;
	end = npages < 0 ||
		      (uint64_t)npages >= (b->size - b->next) / STG_BACKUP_PAGE
		  ? b->size
		  : b->next + (uint64_t)npages * STG_BACKUP_PAGE;
	/* everything but the superblock, on every core */
#pragma omp parallel for schedule(dynamic, 1) reduction(| : err)
	for (off = b->next; off < end; off += BK_CHUNK) {
		uint64_t n = end - off < BK_CHUNK ? end - off : BK_CHUNK;
		err |=
		    bk_write(b->fd, (const char *)pool_at(b->p, off), n, off);
	}
	if (err)
		return bk_fail(b, "writing", err);
	b->next = end;
	return b->next >= b->size ? GPMDB_DONE : GPMDB_OK;
}

uint64_t stg_backup_remaining(const stg_backup *b)
{
	return b && b->next < b->size
		   ? (b->size - b->next + STG_BACKUP_PAGE - 1) / STG_BACKUP_PAGE
		   : 0;
}

uint64_t stg_backup_pagecount(const stg_backup *b)
{
	return b ? (b->size + STG_BACKUP_PAGE - 1) / STG_BACKUP_PAGE : 0;
}

int stg_backup_finish(stg_backup *b)
{
	int rc, err = 0;

	if (b == NULL)
		return GPMDB_OK;
	if (b->rc == GPMDB_OK && b->next >= b->size) {
		/* the superblock last: from here on the copy is a database */
		if (fdatasync(b->fd) != 0)
			err = errno;
		if (!err)
			err = bk_write(b->fd, (const char *)pool_at(b->p, 0),
				       STG_SB_SIZE, 0);
		if (!err && fdatasync(b->fd) != 0)
			err = errno;
		if (err)
			bk_fail(b, "writing", err);
	}
	if (close(b->fd) != 0 && b->rc == GPMDB_OK && b->next >= b->size)
		bk_fail(b, "closing", errno);
	if (b->rc == GPMDB_OK && b->next >= b->size &&
	    pool_fsync_dir(b->dest) != 0)
		bk_fail(b, "syncing the directory of", errno);
	if (b->rc != GPMDB_OK || b->next < b->size)
		unlink(b->dest); /* never a database: gone */
	rc = b->rc;
	free(b->dest);
	free(b);
	return rc;
}

int stg_backup_to(stg_pool *p, const char *dest, uint64_t *bytes)
{
	stg_backup *b = NULL;
	uint64_t size;
	int rc;

	if (bytes)
		*bytes = 0;
	rc = stg_backup_begin(p, dest, &b);
	if (rc != GPMDB_OK)
		return rc;
	size = b->size;
	rc = stg_backup_step(b, -1);
	if (rc == GPMDB_DONE)
		rc = GPMDB_OK;
	else
		b->next = 0; /* stopped: finish removes it */
	if (rc == GPMDB_OK)
		rc = stg_backup_finish(b);
	else
		(void)stg_backup_finish(b);
	if (rc == GPMDB_OK && bytes)
		*bytes = size;
	return rc;
}
