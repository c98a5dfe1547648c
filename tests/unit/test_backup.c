/*
 * test_backup.c - incremental backups and checkpoints (storage/zones.c,
 * storage/backup.c, engine/backup.c), in pmem mode (/dev/shm) and msync
 * mode (a file system): an incremental copy equals a full copy byte for
 * byte after the superblock and in its tables; after updating 1% of the
 * rows it writes under 5% of the zones; a copy of another database, a
 * changed copy and a full-copy request get full copies, with the reason;
 * a file that is no gpmdb file, the database itself and a copy open
 * elsewhere are refused; a copy cut short is refused at open as
 * incomplete and the next backup completes it; a full disk (RLIMIT_FSIZE)
 * and an unwritable path fail with clear messages and leave the database
 * as it was; pmem-mode writers go on beside a backup's first passes and
 * once its last pass is written (before finish), the copy keeping the
 * last pass's state; an in-memory database changed between init and
 * finish (the copy's counter is the copied state's); the
 * checkpoint pragmas, on demand and from their thread; and a process
 * killed after a checkpoint whose pool is then deleted (power loss on
 * /dev/shm): the checkpoint file holds the last completed checkpoint.
 * A pool of format version 1 (an older gpmdb's) opens and works, never
 * gets a zone table (its backups are full, saying why), and its copy has
 * version 2 and takes incremental backups.
 * Line masks and deltas (zones.c, delta.c; test_lines_*): after updating
 * every 100th row the changed zones go into a delta by their lines, far
 * fewer bytes than the zones, in pmem and msync mode; two and three
 * incrementals in a row (a chain), one after an open applied them, the
 * masks restarted between backups; a copy with deltas opened read-only
 * (the file untouched) and by a user who cannot write it; masks a writer
 * did not mark (GPMDB_TEST_NO_LINES) not trusted; the chain dropped past
 * an eighth of the image; a writer between pmem-mode passes; the pool
 * growing between passes once the delta began (busy, then completed).
 * The copy always equals the database row for row and passes
 * integrity_check; with its deltas applied, a full copy byte for byte.
 */
#include "harness.h"
#include "sql_util.h"

#include "gpmdb.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include "../storage/layout.h"

static char path[300], copy[300], copy2[300], self[4096];

static const char *mode_s(int mode)
{
	return mode ? "msync" : "pmem";
}

/* The row of PRAGMA checkpoint (or _status): its columns as numbers in
 * v[0..n); false when it fails. */
static bool ck_row(gpmdb *db, const char *sql, long long *v, int n)
{
	gpmdb_stmt *st = NULL;
	bool ok = false;

	if (gpmdb_prepare(db, sql, -1, &st, NULL) == GPMDB_OK && st &&
	    gpmdb_step(st) == GPMDB_ROW) {
		for (int i = 0; i < n; i++)
			v[i] = gpmdb_column_int64(st, i);
		ok = true;
	}
	gpmdb_finalize(st);
	return ok;
}

static void rm_db(const char *p)
{
	char side[340];

	unlink(p);
	snprintf(side, sizeof(side), "%s-wal", p);
	unlink(side);
	snprintf(side, sizeof(side), "%s-shm", p);
	unlink(side);
}

static void set_paths(const char *tag, int mode)
{
	snprintf(path, sizeof(path), "%s/gpmdb_bk_%s_%d.db",
		 mode ? "/tmp" : "/dev/shm", tag, (int)getpid());
	snprintf(copy, sizeof(copy), "/tmp/gpmdb_bk_%s_%d.copy", tag,
		 (int)getpid());
	snprintf(copy2, sizeof(copy2), "/tmp/gpmdb_bk_%s_%d.copy2", tag,
		 (int)getpid());
	rm_db(path);
	rm_db(copy);
	rm_db(copy2);
}

static void rm_paths(void)
{
	rm_db(path);
	rm_db(copy);
	rm_db(copy2);
}

static gpmdb *open_db(const char *p, int mode)
{
	gpmdb *db = NULL;
	gpmdb_options o = {.durability = mode ? "msync" : "pmem"};
	int rc =
	    gpmdb_open_v2(p, &db, GPMDB_OPEN_READWRITE | GPMDB_OPEN_CREATE, &o);

	CHECKF(rc == GPMDB_OK, "open %s: %s", p, gpmdb_errmsg(db));
	if (rc) {
		gpmdb_close(db);
		return NULL;
	}
	gpmdb_busy_timeout(db, 5000);
	return db;
}

/* t(id, v, s) with 2^k rows. */
static void fill(gpmdb *db, int k)
{
	CHECK_RC(su_exec(db, "CREATE TABLE t(id INTEGER PRIMARY KEY, v INT, "
			     "s TEXT); INSERT INTO t VALUES (1, 1, 'a')"),
		 GPMDB_OK);
	for (int i = 0; i < k; i++)
		CHECK_RC(su_exec(db, "INSERT INTO t SELECT id + (SELECT "
				     "max(id) FROM t), v, s || 'x' FROM t"),
			 GPMDB_OK);
}

/* One backup through the API; *bs its status; the result code. */
static int backup(gpmdb *db, const char *dest, int flags, gpmdb_backup_stat *bs)
{
	gpmdb_backup *bk = gpmdb_backup_init_v2(dest, db, "main", flags);
	int rc;

	memset(bs, 0, sizeof(*bs));
	if (!bk)
		return gpmdb_errcode(db);
	rc = gpmdb_backup_step(bk, -1);
	gpmdb_backup_status(bk, bs);
	if (rc == GPMDB_DONE)
		return gpmdb_backup_finish(bk);
	(void)gpmdb_backup_finish(bk);
	return rc;
}

static const char *q(const char *p, const char *sql, char *buf, size_t n)
{
	gpmdb *db = NULL;

	buf[0] = '\0';
	if (gpmdb_open_v2(p, &db, GPMDB_OPEN_READONLY, NULL) == GPMDB_OK)
		snprintf(buf, n, "%s", su_scalar(db, sql));
	else
		snprintf(buf, n, "error: %s", gpmdb_errmsg(db));
	gpmdb_close(db);
	return buf;
}

/* Opens and closes copy f read-write: its pending deltas applied in the
 * file (delta.c). */
static void apply_deltas(const char *f)
{
	gpmdb *db = NULL;

	CHECKF(gpmdb_open_v2(f, &db, GPMDB_OPEN_READWRITE, NULL) == GPMDB_OK,
	       "open %s: %s", f, gpmdb_errmsg(db));
	gpmdb_close(db);
}

/* File f's bytes (malloc'd; *n of them), or NULL. */
static char *slurp(const char *f, size_t *n)
{
	FILE *fp = fopen(f, "rb");
	char *buf = NULL;
	long len;

	*n = 0;
	if (fp && fseek(fp, 0, SEEK_END) == 0 && (len = ftell(fp)) > 0 &&
	    fseek(fp, 0, SEEK_SET) == 0 && (buf = malloc((size_t)len)) &&
	    fread(buf, 1, (size_t)len, fp) == (size_t)len)
		*n = (size_t)len;
	if (fp)
		fclose(fp);
	if (*n == 0) {
		free(buf);
		buf = NULL;
	}
	return buf;
}

/* Files a and b equal from byte 4096 (their superblocks differ: uuid),
 * once their deltas are applied, but for the metadata log's region:
 * dead bytes there differ when a transaction of the backup's own
 * connection (making or growing the zone table and line masks) kept
 * its log writes out of the file (pmem mode beside readers). */
static bool same_after_sb(const char *a, const char *b)
{
	size_t na, nb;
	char *x, *y;
	bool same;

	apply_deltas(a);
	apply_deltas(b);
	x = slurp(a, &na);
	y = slurp(b, &nb);
	same = x && y && na == nb && na > STG_SB_SIZE;
	if (same) {
		const stg_superblock *sb = (const stg_superblock *)x;
		size_t lo = sb->log_off, hi = sb->log_off + sb->log_size;

		same = lo >= STG_SB_SIZE && hi <= na &&
		       !memcmp(x + STG_SB_SIZE, y + STG_SB_SIZE,
			       lo - STG_SB_SIZE) &&
		       !memcmp(x + hi, y + hi, na - hi);
	}
	free(x);
	free(y);
	return same;
}

static const char *SUM = "SELECT count(*) || ':' || sum(v) || ':' || "
			 "sum(length(s)) FROM t";

static void test_incremental_equals_full(void)
{
	for (int mode = 0; mode < 2; mode++) {
		char a[600], b[600], c[600];
		gpmdb_backup_stat bs;
		gpmdb *db;

		set_paths("eq", mode);
		if (!(db = open_db(path, mode)))
			continue;
		fill(db, 17); /* 131072 rows */
		CHECK_RC(backup(db, copy, 0, &bs), GPMDB_OK);
		CHECKF(!bs.incremental && strstr(bs.why_full, "new file"), "%s",
		       bs.why_full);
		CHECK(bs.zones_copied == bs.zones_total && bs.zones_total > 8);
		/* 1% of the rows, contiguous */
		CHECK_RC(su_exec(db, "UPDATE t SET v = v + 7 WHERE id <= 1310"),
			 GPMDB_OK);
		CHECK_RC(backup(db, copy, 0, &bs), GPMDB_OK);
		CHECKF(bs.incremental && bs.zones_copied > 0 &&
			   bs.zones_copied * 20 <= bs.zones_total,
		       "%s: incremental %d, %lld of %lld zones", mode_s(mode),
		       bs.incremental, bs.zones_copied, bs.zones_total);
		/* more kinds of change: text, deletes, appends, an index */
		CHECK_RC(su_exec(db, "UPDATE t SET s = 'yy' || s WHERE id % 97 "
				     "= 3; DELETE FROM t WHERE id % 1000 = 5; "
				     "CREATE INDEX tv ON t(v); INSERT INTO t "
				     "SELECT id + 200000, v, s FROM t WHERE id "
				     "< 5000"),
			 GPMDB_OK);
		CHECK_RC(backup(db, copy, 0, &bs), GPMDB_OK);
		CHECK(bs.incremental && bs.zones_copied < bs.zones_total);
		CHECK_RC(backup(db, copy2, 0, &bs), GPMDB_OK);
		CHECK(!bs.incremental);
		CHECKF(same_after_sb(copy, copy2),
		       "%s: incremental and full copies differ", mode_s(mode));
		snprintf(a, sizeof(a), "%s", su_scalar(db, SUM));
		CHECKF(!strcmp(a, q(copy, SUM, b, sizeof(b))) &&
			   !strcmp(a, q(copy2, SUM, c, sizeof(c))),
		       "%s %s %s", a, b, c);
		CHECK(!strcmp(q(copy, "PRAGMA integrity_check", b, sizeof(b)),
			      "ok"));
		/* nothing changed: only the table's and the root's zones */
		CHECK_RC(backup(db, copy, 0, &bs), GPMDB_OK);
		CHECKF(bs.incremental && bs.zones_copied <= 3, "%lld",
		       bs.zones_copied);
		/* a full copy asked for */
		CHECK_RC(backup(db, copy, GPMDB_BACKUP_FULL, &bs), GPMDB_OK);
		CHECK(!bs.incremental && strstr(bs.why_full, "asked"));
		CHECK(!strcmp(q(copy, SUM, b, sizeof(b)), a));
		CHECK_RC(gpmdb_close(db), GPMDB_OK);
		rm_paths();
	}
}

/* The superblock and root of file f (false when unreadable). */
static bool read_sb(const char *f, stg_superblock *sb, stg_root *r)
{
	int fd = open(f, O_RDONLY);
	bool ok = fd >= 0 &&
		  pread(fd, sb, sizeof(*sb), 0) == (ssize_t)sizeof(*sb) &&
		  pread(fd, r, sizeof(*r), (off_t)sb->root_off) ==
		      (ssize_t)sizeof(*r);

	if (fd >= 0)
		close(fd);
	return ok;
}

/* A pool of format version 1, as an older gpmdb made it: no zone table,
 * never given one; full backups with the reason; its copy is version 2
 * and is backed up incrementally. */
static void test_format_version1(void)
{
	char buf[600], want[600];
	gpmdb_backup_stat bs;
	stg_superblock sb;
	stg_root r;
	gpmdb *db;
	int fd;

	set_paths("v1", 0);
	if (!(db = open_db(path, 0)))
		return;
	fill(db, 10);
	CHECK_RC(gpmdb_close(db), GPMDB_OK);
	CHECK(read_sb(path, &sb, &r));
	CHECK(sb.version == STG_FORMAT_VERSION && r.zt_off == 0);
	/* version 1, as made by a build before the zone table */
	sb.version = 1;
	sb.crc = (uint32_t)crc32(0L, (const Bytef *)&sb, STG_SB_CRC_OFF);
	fd = open(path, O_WRONLY);
	CHECK(fd >= 0 && pwrite(fd, &sb, sizeof(sb), 0) == (ssize_t)sizeof(sb));
	if (fd >= 0)
		close(fd);
	if (!(db = open_db(path, 0)))
		return;
	CHECK_RC(su_exec(db, "UPDATE t SET v = v + 2 WHERE id <= 100"),
		 GPMDB_OK);
	CHECK_RC(backup(db, copy, 0, &bs), GPMDB_OK);
	CHECK(!bs.incremental);
	CHECK_RC(su_exec(db, "UPDATE t SET v = v + 1 WHERE id <= 10"),
		 GPMDB_OK);
	CHECK_RC(backup(db, copy, 0, &bs), GPMDB_OK);
	CHECKF(!bs.incremental && strstr(bs.why_full, "format version 1"),
	       "%d %s", bs.incremental, bs.why_full);
	snprintf(want, sizeof(want), "%s", su_scalar(db, SUM));
	CHECK(!strcmp(su_scalar(db, "PRAGMA integrity_check"), "ok"));
	CHECK_RC(gpmdb_close(db), GPMDB_OK);
	/* still version 1, still no table: an older build may write it */
	CHECK(read_sb(path, &sb, &r));
	CHECK(sb.version == 1 && r.zt_off == 0 && r.zt_zones == 0);
	/* the copy: version 2, the same rows, and incremental backups */
	CHECK(read_sb(copy, &sb, &r));
	CHECK(sb.version == STG_FORMAT_VERSION);
	CHECK(sb.crc ==
	      (uint32_t)crc32(0L, (const Bytef *)&sb, STG_SB_CRC_OFF));
	CHECK(!strcmp(q(copy, SUM, buf, sizeof(buf)), want));
	if (!(db = open_db(copy, 0)))
		return;
	CHECK_RC(backup(db, copy2, 0, &bs), GPMDB_OK);
	CHECK_RC(su_exec(db, "UPDATE t SET v = v + 1 WHERE id <= 10"),
		 GPMDB_OK);
	CHECK_RC(backup(db, copy2, 0, &bs), GPMDB_OK);
	CHECKF(bs.incremental && bs.zones_copied < bs.zones_total, "%d %s",
	       bs.incremental, bs.why_full);
	snprintf(want, sizeof(want), "%s", su_scalar(db, SUM));
	CHECK(!strcmp(q(copy2, SUM, buf, sizeof(buf)), want));
	gpmdb_close(db);
	rm_paths();
}

static void test_not_a_copy(void)
{
	char other[340], buf[200], msg[600];
	gpmdb_backup_stat bs;
	gpmdb *db, *db2, *c;
	struct stat st;
	FILE *f;

	set_paths("other", 0);
	snprintf(other, sizeof(other), "%s.other", path);
	rm_db(other);
	db = open_db(path, 0);
	db2 = db ? open_db(other, 0) : NULL;
	if (!db2) {
		gpmdb_close(db);
		return;
	}
	fill(db, 4);
	CHECK_RC(su_exec(db2, "CREATE TABLE u(a INT); INSERT INTO u VALUES "
			      "(42)"),
		 GPMDB_OK);
	CHECK_RC(backup(db2, copy, 0, &bs), GPMDB_OK);
	/* a copy of another database: overwritten by a full copy */
	CHECK_RC(backup(db, copy, 0, &bs), GPMDB_OK);
	CHECKF(!bs.incremental && strstr(bs.why_full, "not a copy of this"),
	       "%s", bs.why_full);
	CHECK(
	    !strcmp(q(copy, "SELECT count(*) FROM t", buf, sizeof(buf)), "16"));
	/* a copy changed since it was made */
	c = open_db(copy, 0);
	if (c) {
		CHECK_RC(su_exec(c, "INSERT INTO t VALUES (1000, 1, 'c')"),
			 GPMDB_OK);
		gpmdb_close(c);
	}
	CHECK_RC(backup(db, copy, 0, &bs), GPMDB_OK);
	CHECKF(!bs.incremental && strstr(bs.why_full, "changed since"), "%s",
	       bs.why_full);
	CHECK(
	    !strcmp(q(copy, "SELECT count(*) FROM t", buf, sizeof(buf)), "16"));
	/* a copy open elsewhere: not overwritten */
	c = NULL;
	CHECK_RC(gpmdb_open_v2(copy, &c, GPMDB_OPEN_READONLY, NULL), GPMDB_OK);
	CHECK_RC(backup(db, copy, 0, &bs), GPMDB_BUSY);
	CHECKF(strstr(gpmdb_errmsg(db), "open by another connection"), "%s",
	       gpmdb_errmsg(db));
	gpmdb_close(c);
	/* no gpmdb file: refused, untouched */
	f = fopen(copy2, "w");
	if (f) {
		fputs("not a database, a letter\n", f);
		fclose(f);
	}
	CHECK(backup(db, copy2, 0, &bs) != GPMDB_OK);
	snprintf(msg, sizeof(msg), "%s", gpmdb_errmsg(db));
	CHECKF(strstr(msg, "not a gpmdb database or copy"), "%s", msg);
	CHECK(stat(copy2, &st) == 0 && st.st_size == 25);
	/* itself */
	CHECK(backup(db, path, 0, &bs) != GPMDB_OK);
	CHECKF(strstr(gpmdb_errmsg(db), "onto itself"), "%s", gpmdb_errmsg(db));
	CHECK(!strcmp(su_scalar(db, "SELECT count(*) FROM t"), "16"));
	gpmdb_close(db);
	gpmdb_close(db2);
	rm_db(other);
	rm_paths();
}

static void test_incomplete(void)
{
	for (int mode = 0; mode < 2; mode++) {
		char buf[600], want[600];
		gpmdb_backup_stat bs;
		gpmdb_backup *bk;
		gpmdb *db, *c = NULL;
		int rc;

		set_paths("inc", mode);
		if (!(db = open_db(path, mode)))
			continue;
		fill(db, 15);
		CHECK_RC(backup(db, copy, 0, &bs), GPMDB_OK);
		CHECK_RC(su_exec(db, "UPDATE t SET v = v + 1"), GPMDB_OK);
		snprintf(want, sizeof(want), "%s", su_scalar(db, SUM));
		/* an incremental update stopped after one page */
		bk = gpmdb_backup_init(copy, db, NULL);
		CHECK(bk != NULL);
		if (bk) {
			CHECK_RC(gpmdb_backup_step(bk, 1), GPMDB_OK);
			CHECK_RC(gpmdb_backup_finish(bk), GPMDB_OK);
		}
		rc = gpmdb_open_v2(copy, &c, GPMDB_OPEN_READONLY, NULL);
		CHECKF(rc == GPMDB_NOTADB &&
			   strstr(gpmdb_errmsg(c), "incomplete backup copy"),
		       "%d %s", rc, gpmdb_errmsg(c));
		gpmdb_close(c);
		/* the next backup completes it, incrementally */
		CHECK_RC(backup(db, copy, 0, &bs), GPMDB_OK);
		CHECKF(bs.incremental, "%s", bs.why_full);
		CHECK(!strcmp(q(copy, SUM, buf, sizeof(buf)), want));
		/* a new file cut short: removed */
		bk = gpmdb_backup_init(copy2, db, NULL);
		CHECK(bk != NULL);
		if (bk) {
			CHECK_RC(gpmdb_backup_step(bk, 2), GPMDB_OK);
			CHECK_RC(gpmdb_backup_finish(bk), GPMDB_OK);
		}
		CHECK(access(copy2, F_OK) != 0);
		gpmdb_close(db);
		rm_paths();
	}
}

/* A full disk (the file size limit) and unwritable paths: errors with
 * their reason; the database as it was. */
static void test_full_disk(void)
{
	char before[600], buf[600];
	gpmdb_backup_stat bs;
	gpmdb *db;
	pid_t pid;
	int st = 0;

	set_paths("full", 1);
	if (!(db = open_db(path, 1)))
		return;
	fill(db, 16);
	snprintf(before, sizeof(before), "%s", su_scalar(db, SUM));
	/* a child of its own (a fork would inherit OpenMP's threads dead) */
	pid = fork();
	if (pid == 0) {
		execl(self, self, "--child-full", path, copy, (char *)NULL);
		_exit(5);
	}
	CHECK(pid > 0 && waitpid(pid, &st, 0) == pid);
	CHECKF(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child status %d", st);
	CHECK(backup(db, "/nonexistent-dir/x.db", 0, &bs) == GPMDB_CANTOPEN);
	snprintf(buf, sizeof(buf), "%s", gpmdb_errmsg(db));
	CHECKF(strstr(buf, "/nonexistent-dir/x.db") &&
		   strstr(buf, "No such file"),
	       "%s", buf);
	CHECK(backup(db, "/dev/full", 0, &bs) != GPMDB_OK);
	CHECKF(strstr(gpmdb_errmsg(db), "not a regular file"), "%s",
	       gpmdb_errmsg(db));
	CHECK(!strcmp(su_scalar(db, SUM), before));
	CHECK(!strcmp(su_scalar(db, "PRAGMA integrity_check"), "ok"));
	gpmdb_close(db);
	CHECK(!strcmp(q(path, SUM, buf, sizeof(buf)), before));
	rm_paths();
}

/* pmem mode: a writer commits between a big backup's steps (no
 * snapshot is held during the first pass); the copy holds its change. */
static void test_precopy(void)
{
	char want[600], buf[600];
	gpmdb_backup_stat bs;
	gpmdb_backup *bk;
	gpmdb *db, *w;

	set_paths("pre", 0);
	db = open_db(path, 0);
	w = db ? open_db(path, 0) : NULL;
	if (!w) {
		gpmdb_close(db);
		return;
	}
	fill(db, 18); /* 262144 rows: more than one pass */
	bk = gpmdb_backup_init(copy, db, NULL);
	CHECK(bk != NULL);
	if (bk) {
		CHECK_RC(gpmdb_backup_step(bk, 1), GPMDB_OK);
		gpmdb_busy_timeout(w, 0); /* not kept waiting */
		CHECK_RC(su_exec(w, "UPDATE t SET v = 5 WHERE id = 100000"),
			 GPMDB_OK);
		snprintf(want, sizeof(want), "%s", su_scalar(w, SUM));
		CHECK_RC(gpmdb_backup_step(bk, -1), GPMDB_DONE);
		gpmdb_backup_status(bk, &bs);
		CHECKF(bs.passes >= 2, "%d passes", bs.passes);
		/* every byte written: the snapshot is given back before
		 * finish's fdatasyncs, and the copy keeps its state */
		CHECK_RC(su_exec(w, "UPDATE t SET v = 7 WHERE id = 100001"),
			 GPMDB_OK);
		CHECK_RC(gpmdb_backup_finish(bk), GPMDB_OK);
		CHECK(!strcmp(q(copy, SUM, buf, sizeof(buf)), want));
		CHECK(strcmp(su_scalar(w, SUM), want) != 0);
	}
	gpmdb_close(w);
	gpmdb_close(db);
	rm_paths();
}

/* An in-memory database's copy is taken at init; a change made before
 * finish is not in it, and the copy's counter says so: the next backup
 * onto it (incremental) copies the change. */
static void test_memory_change_before_finish(void)
{
	char want[600], buf[600];
	gpmdb_backup_stat bs;
	gpmdb_backup *bk;
	gpmdb *db = NULL;

	set_paths("mem", 0);
	CHECK_RC(gpmdb_open_v2(":memory:", &db,
			       GPMDB_OPEN_READWRITE | GPMDB_OPEN_CREATE, NULL),
		 GPMDB_OK);
	if (!db)
		return;
	fill(db, 12);
	bk = gpmdb_backup_init(copy, db, NULL);
	CHECK(bk != NULL);
	if (bk) {
		CHECK_RC(su_exec(db, "UPDATE t SET v = 9 WHERE id = 77"),
			 GPMDB_OK);
		CHECK_RC(gpmdb_backup_step(bk, -1), GPMDB_DONE);
		CHECK_RC(gpmdb_backup_finish(bk), GPMDB_OK);
	}
	snprintf(want, sizeof(want), "%s", su_scalar(db, SUM));
	CHECK(strcmp(q(copy, SUM, buf, sizeof(buf)), want) != 0);
	CHECK_RC(backup(db, copy, 0, &bs), GPMDB_OK);
	CHECK(bs.incremental);
	CHECK(!strcmp(q(copy, SUM, buf, sizeof(buf)), want));
	gpmdb_close(db);
	rm_paths();
}

static void test_checkpoint_pragmas(void)
{
	char sql[600], buf[200];
	long long v[5] = {0};
	gpmdb *db;

	set_paths("ck", 0);
	if (!(db = open_db(path, 0)))
		return;
	fill(db, 12);
	CHECK(su_exec(db, "PRAGMA checkpoint") != GPMDB_OK);
	CHECK(strstr(gpmdb_errmsg(db), "no checkpoint_file"));
	CHECK(su_exec(db, "PRAGMA checkpoint_interval = 1") != GPMDB_OK);
	snprintf(sql, sizeof(sql), "PRAGMA checkpoint_file = '%s'", copy);
	CHECK_RC(su_exec(db, sql), GPMDB_OK);
	CHECK(!strcmp(su_scalar(db, "PRAGMA checkpoint_file"), copy));
	CHECK(ck_row(db, "PRAGMA checkpoint", v, 3));
	CHECKF(v[0] == v[1] && v[1] > 8 && v[2] == 0, "%lld %lld %lld", v[0],
	       v[1], v[2]);
	CHECK_RC(su_exec(db, "UPDATE t SET v = 9 WHERE id = 3"), GPMDB_OK);
	CHECK(ck_row(db, "PRAGMA checkpoint", v, 3));
	CHECKF(v[0] > 0 && v[0] <= 8 && v[2] == 1, "%lld %lld %lld", v[0], v[1],
	       v[2]);
	CHECK(!strcmp(q(copy, "SELECT v FROM t WHERE id = 3", buf, sizeof(buf)),
		      "9"));
	/* the thread */
	CHECK_RC(su_exec(db, "PRAGMA checkpoint_interval = 1"), GPMDB_OK);
	CHECK(!strcmp(su_scalar(db, "PRAGMA checkpoint_interval"), "1"));
	CHECK_RC(su_exec(db, "UPDATE t SET v = 11 WHERE id = 3"), GPMDB_OK);
	for (int i = 0; i < 50; i++) {
		usleep(100000);
		if (!strcmp(q(copy, "SELECT v FROM t WHERE id = 3", buf,
			      sizeof(buf)),
			    "11"))
			break;
	}
	CHECKF(!strcmp(buf, "11"), "%s", buf);
	CHECK(ck_row(db, "PRAGMA checkpoint_status", v, 4));
	CHECKF(v[0] >= 3 && v[3] == 1, "%lld checkpoints, incremental %lld",
	       v[0], v[3]);
	CHECK_RC(su_exec(db, "PRAGMA checkpoint_interval = 0"), GPMDB_OK);
	CHECK_RC(gpmdb_close(db), GPMDB_OK);
	rm_paths();
}

/* kill -9 after a checkpoint, the pool deleted (what a reboot does to
 * /dev/shm): the checkpoint file opens with the checkpointed rows. */
static void test_checkpoint_power_loss(void)
{
	char buf[200];
	pid_t pid;
	int st = 0;

	set_paths("pl", 0);
	pid = fork();
	if (pid == 0) {
		execl(self, self, "--child-pl", path, copy, (char *)NULL);
		_exit(5);
	}
	CHECK(pid > 0 && waitpid(pid, &st, 0) == pid);
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	rm_db(path);
	CHECK(!strcmp(q(copy, "SELECT sum(a) FROM k", buf, sizeof(buf)), "3"));
	CHECK(
	    !strcmp(q(copy, "PRAGMA integrity_check", buf, sizeof(buf)), "ok"));
	rm_paths();
}

/* ---- Line masks and deltas (zones.c, delta.c) ---------------------------- */

/* The rows of t in the copy c (opened read-only: its deltas applied in
 * its private mapping) are the database's, row for row. */
static bool rows_equal(gpmdb *db, const char *c)
{
	static const char *Q = "SELECT id, v, s FROM t ORDER BY id";
	gpmdb *cd = NULL;
	gpmdb_stmt *a = NULL, *b = NULL;
	bool same = false;
	long long n = 0;

	if (gpmdb_open_v2(c, &cd, GPMDB_OPEN_READONLY, NULL) != GPMDB_OK ||
	    gpmdb_prepare(db, Q, -1, &a, NULL) != GPMDB_OK ||
	    gpmdb_prepare(cd, Q, -1, &b, NULL) != GPMDB_OK) {
		CHECKF(0, "%s: %s %s", c, gpmdb_errmsg(db), gpmdb_errmsg(cd));
		goto out;
	}
	for (same = true; same; n++) {
		int ra = gpmdb_step(a), rb = gpmdb_step(b);

		if (ra != rb || (ra != GPMDB_ROW && ra != GPMDB_DONE)) {
			CHECKF(0, "row %lld: %d %d", n, ra, rb);
			same = false;
		}
		if (ra != GPMDB_ROW)
			break;
		for (int i = 0; i < 3 && same; i++) {
			const char *x = (const char *)gpmdb_column_text(a, i);
			const char *y = (const char *)gpmdb_column_text(b, i);

			if (!x || !y || strcmp(x, y)) {
				CHECKF(0, "row %lld column %d: %s, copy %s", n,
				       i, x ? x : "NULL", y ? y : "NULL");
				same = false;
			}
		}
	}
out:
	gpmdb_finalize(a);
	gpmdb_finalize(b);
	gpmdb_close(cd);
	return same;
}

/* The copy's superblock magic is m. */
static bool has_magic(const char *f, const char *m)
{
	stg_superblock sb;
	stg_root r;

	return read_sb(f, &sb, &r) && !memcmp(sb.magic, m, 8);
}

/* The bytes of file f, crc32 and length. */
static uint64_t file_sum(const char *f)
{
	size_t n;
	char *x = slurp(f, &n);
	uint64_t sum = x ? crc32(0L, (const Bytef *)x, (uInt)n) ^ (n << 32) : 0;

	free(x);
	return sum;
}

/* Updates every 100th row (a change every 800 bytes of v), then an
 * incremental backup: the zones of v go by their 64-byte lines into a
 * delta after the copy's image, far fewer bytes than the zones; two and
 * three incrementals in a row (a chain of deltas); an incremental after
 * an open applied them; the copy always equal to the database row for
 * row and, once applied, to a full copy byte for byte. */
static void test_lines_scattered(void)
{
	for (int mode = 0; mode < 2; mode++) {
		static const char *upd[] = {
		    "UPDATE t SET v = v + 1 WHERE id % 100 = 7",
		    "UPDATE t SET v = v + 2 WHERE id % 100 = 13",
		    "UPDATE t SET v = v + 3 WHERE id % 100 = 29; UPDATE t SET "
		    "s = s || 'z' WHERE id % 250 = 1",
		    "UPDATE t SET v = v - 4 WHERE id % 100 = 41"};
		char buf[600];
		gpmdb_backup_stat bs;
		stg_superblock sb;
		stg_root r;
		uint64_t chain = 0;
		long long first = 0;
		gpmdb *db, *c;

		set_paths("ln", mode);
		if (!(db = open_db(path, mode)))
			continue;
		fill(db, 17); /* 131072 rows */
		CHECK_RC(backup(db, copy, 0, &bs), GPMDB_OK);
		for (int i = 0; i < 4; i++) {
			if (i == 3) {
				/* an open (read-write) applies the deltas */
				c = open_db(copy, mode);
				CHECK(c != NULL);
				gpmdb_close(c);
				CHECK(has_magic(copy, STG_SB_MAGIC));
				CHECK(read_sb(copy, &sb, &r) &&
				      sb.copy_delta_len == 0 &&
				      file_sum(copy) >> 32 == r.pool_size);
				chain = 0;
			}
			CHECK_RC(su_exec(db, upd[i]), GPMDB_OK);
			CHECK_RC(backup(db, copy, 0, &bs), GPMDB_OK);
			CHECKF(
			    bs.incremental && bs.zones_lines > 0 &&
				bs.delta_bytes > 0,
			    "%s step %d: incremental %d, %lld zones by lines "
			    "(%s)",
			    mode_s(mode), i, bs.incremental, bs.zones_lines,
			    bs.why_full);
			/* far fewer bytes than the zones written */
			CHECKF(bs.bytes_written * 4 <
				   bs.zones_copied * bs.zone_size,
			       "%s step %d: %lld bytes for %lld zones",
			       mode_s(mode), i, bs.bytes_written,
			       bs.zones_copied);
			/* the masks restart at each backup: the second
			 * update's delta does not hold the first's lines */
			if (i == 0)
				first = bs.delta_bytes;
			if (i == 1)
				CHECKF(bs.delta_bytes * 2 < first * 3,
				       "%s: %lld bytes after %lld",
				       mode_s(mode), bs.delta_bytes, first);
			/* the chain grows, delta after delta */
			CHECK(has_magic(copy, STG_SB_MAGIC_DELTA));
			CHECK(read_sb(copy, &sb, &r) &&
			      sb.copy_delta_off == r.pool_size &&
			      sb.copy_delta_len > chain);
			chain = sb.copy_delta_len;
			CHECKF(rows_equal(db, copy), "%s step %d", mode_s(mode),
			       i);
			CHECK(!strcmp(
			    q(copy, "PRAGMA integrity_check", buf, sizeof(buf)),
			    "ok"));
		}
		/* a full copy holds the same bytes once the deltas are in */
		CHECK_RC(backup(db, copy2, 0, &bs), GPMDB_OK);
		CHECKF(same_after_sb(copy, copy2),
		       "%s: the copy with its deltas and a full copy differ",
		       mode_s(mode));
		CHECK_RC(gpmdb_close(db), GPMDB_OK);
		rm_paths();
	}
}

/* An incremental whose delta has hundreds of entries and more than a
 * MiB of lines: the entries are copied on several threads and their
 * checksum computed in parts (delta.c dw_add_many, dw_crc); the copy
 * reads the database's rows (read-only: the lines in its private
 * mapping), and once opened read-write it is a full copy's bytes. */
static void test_lines_many_zones(void)
{
	char buf[600];
	gpmdb_backup_stat bs;
	gpmdb *db;

	set_paths("lm", 0);
	if (!(db = open_db(path, 0)))
		return;
	fill(db, 21); /* 2097152 rows: 256 zones of v */
	CHECK_RC(backup(db, copy, 0, &bs), GPMDB_OK);
	CHECK_RC(su_exec(db, "UPDATE t SET v = v + 5 WHERE id % 100 = 3"),
		 GPMDB_OK);
	CHECK_RC(backup(db, copy, 0, &bs), GPMDB_OK);
	CHECKF(bs.incremental && bs.zones_lines >= 200 &&
		   bs.delta_bytes >= (1 << 20),
	       "incremental %d, %lld zones by lines, %lld bytes (%s)",
	       bs.incremental, bs.zones_lines, bs.delta_bytes, bs.why_full);
	CHECK(has_magic(copy, STG_SB_MAGIC_DELTA));
	CHECK(rows_equal(db, copy));
	CHECK_RC(backup(db, copy2, 0, &bs), GPMDB_OK);
	CHECK(same_after_sb(copy, copy2));
	CHECK(
	    !strcmp(q(copy, "PRAGMA integrity_check", buf, sizeof(buf)), "ok"));
	CHECK_RC(gpmdb_close(db), GPMDB_OK);
	rm_paths();
}

/* A copy with deltas opened read-only: the right rows, the file never
 * written (the deltas go into the connection's private mapping), and
 * so also where it cannot be written (another user, mode 0444). */
static void test_lines_readonly(void)
{
	char want[600], buf[600];
	gpmdb_backup_stat bs;
	uint64_t before;
	gpmdb *db;
	pid_t pid;
	int st = 0;

	set_paths("lro", 1);
	if (!(db = open_db(path, 1)))
		return;
	fill(db, 16);
	CHECK_RC(backup(db, copy, 0, &bs), GPMDB_OK);
	CHECK_RC(su_exec(db, "UPDATE t SET v = v * 3 WHERE id % 100 = 3"),
		 GPMDB_OK);
	CHECK_RC(backup(db, copy, 0, &bs), GPMDB_OK);
	CHECK(bs.zones_lines > 0 && has_magic(copy, STG_SB_MAGIC_DELTA));
	before = file_sum(copy);
	CHECK(rows_equal(db, copy));
	CHECK(
	    !strcmp(q(copy, "PRAGMA integrity_check", buf, sizeof(buf)), "ok"));
	CHECK(file_sum(copy) == before);
	CHECK(has_magic(copy, STG_SB_MAGIC_DELTA));
	snprintf(want, sizeof(want), "%s", su_scalar(db, SUM));
	CHECK_RC(gpmdb_close(db), GPMDB_OK);
	CHECK(chmod(copy, 0444) == 0);
	pid = fork();
	if (pid == 0) {
		execl(self, self, "--child-ro", copy, want, (char *)NULL);
		_exit(5);
	}
	CHECK(pid > 0 && waitpid(pid, &st, 0) == pid);
	CHECKF(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child status %d", st);
	CHECK(file_sum(copy) == before);
	rm_paths();
}

/* Masks a writer did not mark (a build before them: GPMDB_TEST_NO_LINES
 * stamps zones without marking lines) are not trusted: those zones go
 * whole, the copy is right, and the next marked writes restart them. */
static void test_lines_invalid(void)
{
	for (int mode = 0; mode < 2; mode++) {
		gpmdb_backup_stat bs;
		gpmdb *db, *w;

		set_paths("lin", mode);
		if (!(db = open_db(path, mode)))
			continue;
		fill(db, 17);
		CHECK_RC(backup(db, copy, 0, &bs), GPMDB_OK);
		setenv("GPMDB_TEST_NO_LINES", "1", 1);
		w = open_db(path, mode);
		unsetenv("GPMDB_TEST_NO_LINES");
		if (w) {
			CHECK_RC(su_exec(w, "UPDATE t SET v = v + 5 WHERE id "
					    "% 100 = 11"),
				 GPMDB_OK);
			gpmdb_close(w);
		}
		CHECK_RC(backup(db, copy, 0, &bs), GPMDB_OK);
		CHECKF(bs.incremental && bs.zones_lines == 0 &&
			   bs.zones_copied > 2,
		       "%s: %d %lld zones, %lld by lines", mode_s(mode),
		       bs.incremental, bs.zones_copied, bs.zones_lines);
		CHECK(rows_equal(db, copy));
		CHECK_RC(su_exec(db, "UPDATE t SET v = v + 6 WHERE id % 100 = "
				     "17"),
			 GPMDB_OK);
		CHECK_RC(backup(db, copy, 0, &bs), GPMDB_OK);
		CHECKF(bs.incremental && bs.zones_lines > 0, "%s: %lld",
		       mode_s(mode), bs.zones_lines);
		CHECK(rows_equal(db, copy));
		gpmdb_close(db);
		rm_paths();
	}
}

/* Deltas past an eighth of the image: the next incremental writes the
 * zones changed since the image whole and drops them. */
static void test_lines_chain_bound(void)
{
	gpmdb_backup_stat bs;
	stg_superblock sb;
	stg_root r;
	uint64_t most = 0;
	int dropped = 0, i;
	gpmdb *db;

	set_paths("lcb", 0);
	if (!(db = open_db(path, 0)))
		return;
	fill(db, 15);
	CHECK_RC(backup(db, copy, 0, &bs), GPMDB_OK);
	for (i = 0; i < 150 && !dropped; i++) {
		char sql[200];
		bool had;

		snprintf(sql, sizeof(sql),
			 "UPDATE t SET v = v + 1 WHERE id %% 100 = %d",
			 i % 100);
		CHECK_RC(su_exec(db, sql), GPMDB_OK);
		had = has_magic(copy, STG_SB_MAGIC_DELTA);
		CHECK_RC(backup(db, copy, 0, &bs), GPMDB_OK);
		CHECK(bs.incremental);
		if (!read_sb(copy, &sb, &r))
			break;
		if (sb.copy_delta_len > most)
			most = sb.copy_delta_len;
		if (had && sb.copy_delta_len == 0) {
			dropped++;
			CHECK(file_sum(copy) >> 32 == r.pool_size);
		}
		/* bounded: an eighth of the image and one backup's delta */
		CHECKF(sb.copy_delta_len <= r.pool_size / 8 + (1u << 20),
		       "%llu of %llu", (unsigned long long)sb.copy_delta_len,
		       (unsigned long long)r.pool_size);
		if (i % 10 == 0 || sb.copy_delta_len == 0)
			CHECK(rows_equal(db, copy));
	}
	CHECKF(dropped == 1 && most > r.pool_size / 8,
	       "after %d backups: dropped %d, longest chain %llu", i, dropped,
	       (unsigned long long)most);
	CHECK(rows_equal(db, copy));
	gpmdb_close(db);
	rm_paths();
}

/* pmem mode: a writer's scattered updates between a big backup's passes
 * go into the delta after the first pass's lines (later lines
 * supersede earlier ones). */
static void test_lines_precopy(void)
{
	gpmdb_backup_stat bs;
	gpmdb_backup *bk;
	gpmdb *db, *w;

	set_paths("lpre", 0);
	db = open_db(path, 0);
	w = db ? open_db(path, 0) : NULL;
	if (!w) {
		gpmdb_close(db);
		return;
	}
	fill(db, 19);
	CHECK_RC(backup(db, copy, 0, &bs), GPMDB_OK);
	/* more than a pass under a snapshot takes (whole zones of v and the
	 * UPDATE's log): the first pass goes without one */
	CHECK_RC(su_exec(db, "UPDATE t SET v = v + 1 WHERE id % 2 = 0"),
		 GPMDB_OK);
	bk = gpmdb_backup_init(copy, db, NULL);
	CHECK(bk != NULL);
	if (bk) {
		CHECK_RC(gpmdb_backup_step(bk, 1), GPMDB_OK);
		gpmdb_busy_timeout(w, 0);
		CHECK_RC(su_exec(w, "UPDATE t SET v = v * 2 WHERE id % 100 "
				    "IN (5, 23)"),
			 GPMDB_OK);
		CHECK_RC(gpmdb_backup_step(bk, -1), GPMDB_DONE);
		gpmdb_backup_status(bk, &bs);
		CHECKF(bs.passes >= 2 && bs.zones_lines > 0, "%d passes, %lld",
		       bs.passes, bs.zones_lines);
		CHECK_RC(gpmdb_backup_finish(bk), GPMDB_OK);
		CHECK(rows_equal(w, copy));
	}
	gpmdb_close(w);
	gpmdb_close(db);
	rm_paths();
}

/* pmem mode: the pool grows between the passes of a backup whose delta
 * has begun after the image: the backup fails (busy, "take the backup
 * again"), the copy stays an incomplete one, and the next backup
 * completes it with the database's rows. */
static void test_lines_grow_between_passes(void)
{
	gpmdb_backup_stat bs;
	gpmdb_backup *bk;
	gpmdb *db, *w;
	int left, rc;

	set_paths("lgrow", 0);
	db = open_db(path, 0);
	w = db ? open_db(path, 0) : NULL;
	if (!w) {
		gpmdb_close(db);
		return;
	}
	fill(db, 19);
	CHECK_RC(backup(db, copy, 0, &bs), GPMDB_OK);
	CHECK_RC(su_exec(db, "UPDATE t SET v = v + 1 WHERE id % 2 = 0; "
			     "UPDATE t SET v = v + 1 WHERE id % 100 = 3"),
		 GPMDB_OK);
	bk = gpmdb_backup_init(copy, db, NULL);
	CHECK(bk != NULL);
	if (!bk) {
		gpmdb_close(w);
		gpmdb_close(db);
		return;
	}
	/* the first pass's zones and some of its lines (the delta begun),
	 * not all */
	left = gpmdb_backup_remaining(bk);
	CHECK(left > 2);
	CHECK_RC(gpmdb_backup_step(bk, left - 2), GPMDB_OK);
	gpmdb_busy_timeout(w, 0);
	CHECK_RC(su_exec(w, "INSERT INTO t SELECT id + 1000000, v, s FROM t"),
		 GPMDB_OK);
	rc = gpmdb_backup_step(bk, -1);
	CHECKF(rc == GPMDB_BUSY && strstr(gpmdb_errmsg(db), "grew"), "%d %s",
	       rc, gpmdb_errmsg(db));
	gpmdb_backup_status(bk, &bs);
	CHECKF(bs.zones_lines > 0, "%lld", bs.zones_lines);
	(void)gpmdb_backup_finish(bk);
	CHECK(has_magic(copy, STG_SB_MAGIC_INCOMPLETE));
	CHECK_RC(backup(db, copy, 0, &bs), GPMDB_OK);
	CHECKF(bs.incremental, "%s", bs.why_full);
	CHECK(rows_equal(db, copy));
	gpmdb_close(w);
	gpmdb_close(db);
	rm_paths();
}

/* The children, run as this program with arguments. */
static int child_full(void)
{
	struct rlimit rl = {1 << 20, 1 << 20};
	gpmdb_backup_stat bs;
	gpmdb *db = open_db(path, 1);

	if (!db)
		return 2;
	signal(SIGXFSZ, SIG_IGN);
	setrlimit(RLIMIT_FSIZE, &rl);
	if (backup(db, copy, 0, &bs) != GPMDB_FULL)
		return 3;
	if (!strstr(gpmdb_errmsg(db), "database or disk is full"))
		return 4;
	gpmdb_close(db);
	return access(copy, F_OK) == 0 ? 5 : 0;
}

/* A user who cannot write the copy opens it read-only (root: nobody's
 * uid): its rows with the deltas applied. */
static int child_readonly(const char *want)
{
	gpmdb *db = NULL;
	int rc;

	if (geteuid() == 0 && setuid(65534) != 0)
		return 2;
	if (access(copy, W_OK) == 0)
		return 3; /* (not what this child is for) */
	rc = gpmdb_open_v2(copy, &db, GPMDB_OPEN_READONLY, NULL);
	if (rc != GPMDB_OK) {
		fprintf(stderr, "child: %s\n", gpmdb_errmsg(db));
		return 4;
	}
	rc = strcmp(su_scalar(db, SUM), want) ? 6 : 0;
	if (rc)
		fprintf(stderr, "child: %s, want %s\n", su_scalar(db, SUM),
			want);
	gpmdb_close(db);
	return rc;
}

static int child_power_loss(void)
{
	char sql[600];
	gpmdb *db = NULL;
	gpmdb_options o = {.durability = "pmem"};

	if (gpmdb_open_v2(path, &db, GPMDB_OPEN_READWRITE | GPMDB_OPEN_CREATE,
			  &o) != GPMDB_OK)
		return 2;
	snprintf(sql, sizeof(sql),
		 "PRAGMA checkpoint_file = '%s'; CREATE TABLE k(a INT); "
		 "INSERT INTO k VALUES (1), (2)",
		 copy);
	if (su_exec(db, sql) || su_exec(db, "PRAGMA checkpoint") ||
	    su_exec(db, "INSERT INTO k VALUES (100)"))
		return 3;
	kill(getpid(), SIGKILL);
	return 4;
}

int main(int argc, char **argv)
{
	snprintf(self, sizeof(self), "%s", argv[0]);
	if (argc == 4) {
		snprintf(path, sizeof(path), "%s", argv[2]);
		snprintf(copy, sizeof(copy), "%s", argv[3]);
		if (!strcmp(argv[1], "--child-ro"))
			snprintf(copy, sizeof(copy), "%s", argv[2]);
		if (!strcmp(argv[1], "--child-full"))
			return child_full();
		if (!strcmp(argv[1], "--child-pl"))
			return child_power_loss();
		if (!strcmp(argv[1], "--child-ro"))
			return child_readonly(argv[3]);
		return 9;
	}
	TEST_RUN(test_incremental_equals_full);
	TEST_RUN(test_format_version1);
	TEST_RUN(test_not_a_copy);
	TEST_RUN(test_incomplete);
	TEST_RUN(test_full_disk);
	TEST_RUN(test_precopy);
	TEST_RUN(test_memory_change_before_finish);
	TEST_RUN(test_checkpoint_pragmas);
	TEST_RUN(test_checkpoint_power_loss);
	TEST_RUN(test_lines_scattered);
	TEST_RUN(test_lines_many_zones);
	TEST_RUN(test_lines_readonly);
	TEST_RUN(test_lines_invalid);
	TEST_RUN(test_lines_chain_bound);
	TEST_RUN(test_lines_precopy);
	TEST_RUN(test_lines_grow_between_passes);
	TEST_MAIN_END();
}
