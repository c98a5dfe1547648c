/*
 * test_badinput.c - stg_open on files that are not (intact) gpmdb pools,
 * and the one-writer lock.
 *
 * Each bad file must give a specific result code, a message that names the
 * problem, *out == NULL, and leave the file byte-for-byte unchanged (size,
 * contents and mtime) whether or not create was asked for: creating must
 * never overwrite an existing file.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

#include "../storage/layout.h"
#include "../storage/storage.h"

#define POOL_SIZE (2ull << 20)

static char dir[256];
static char good_path[300];

typedef struct {
	bool exists;
	struct stat st;
	uint8_t *data; /* regular files only */
} file_snap;

static void snap_take(const char *path, file_snap *s)
{
	int fd;

	memset(s, 0, sizeof(*s));
	if (stat(path, &s->st) != 0)
		return;
	s->exists = true;
	if (!S_ISREG(s->st.st_mode))
		return;
	s->data = malloc(s->st.st_size ? (size_t)s->st.st_size : 1);
	fd = open(path, O_RDONLY);
	if (fd >= 0) {
		off_t got = 0;

		while (got < s->st.st_size) {
			ssize_t n = pread(fd, s->data + got,
					  (size_t)(s->st.st_size - got), got);

			if (n <= 0)
				break;
			got += n;
		}
		close(fd);
	}
}

/* Compares the file at path with the snapshot; reports what differs. */
static void snap_check(const char *what, const char *path, const file_snap *s)
{
	struct stat st;

	if (!s->exists) {
		CHECKF(stat(path, &st) != 0 && errno == ENOENT,
		       "%s: %s was created", what, path);
		return;
	}
	if (stat(path, &st) != 0) {
		CHECKF(0, "%s: %s vanished", what, path);
		return;
	}
	CHECKF((st.st_mode & S_IFMT) == (s->st.st_mode & S_IFMT),
	       "%s: file type changed", what);
	CHECKF(st.st_size == s->st.st_size, "%s: size %lld, was %lld", what,
	       (long long)st.st_size, (long long)s->st.st_size);
	CHECKF(st.st_mtim.tv_sec == s->st.st_mtim.tv_sec &&
		   st.st_mtim.tv_nsec == s->st.st_mtim.tv_nsec,
	       "%s: mtime changed", what);
	if (S_ISREG(st.st_mode) && st.st_size == s->st.st_size) {
		file_snap now;

		snap_take(path, &now);
		CHECKF(now.data &&
			   memcmp(now.data, s->data, (size_t)st.st_size) == 0,
		       "%s: contents changed", what);
		free(now.data);
	}
}

static void snap_free(file_snap *s)
{
	free(s->data);
	s->data = NULL;
}

static bool msg_has_any(const char *msg, const char *const *subs)
{
	for (; *subs; subs++)
		if (strcasestr(msg, *subs))
			return true;
	return false;
}

typedef enum { M_PLAIN, M_CREATE, M_READONLY, M_NMODES } open_mode;
static const char *const mode_names[] = {"create=false", "create=true",
					 "readonly"};

/*
 * Opens path in every mode and checks the failure: code want, a message
 * containing one of subs, no handle, the file untouched.
 */
static void expect_open_fails(const char *what, const char *path, int want,
			      const char *const *subs)
{
	int m;

	for (m = 0; m < M_NMODES; m++) {
		stg_open_opts o = {0};
		stg_pool *p = (stg_pool *)(uintptr_t)0x1;
		char err[512];
		file_snap before;
		int rc;

		o.create = m == M_CREATE;
		o.readonly = m == M_READONLY;
		o.initial_size = POOL_SIZE;
		memset(err, 0, sizeof(err));
		snap_take(path, &before);
		rc = stg_open(path, &o, &p, err, sizeof(err));
		CHECKF(rc == want, "%s (%s): rc %d (%s), want %d", what,
		       mode_names[m], rc, err, want);
		CHECKF(p == NULL, "%s (%s): *out not NULL", what,
		       mode_names[m]);
		if (rc == GPMDB_OK && p && p != (stg_pool *)(uintptr_t)0x1)
			stg_close(p);
		CHECKF(err[0] != '\0', "%s (%s): empty message", what,
		       mode_names[m]);
		CHECKF(msg_has_any(err, subs),
		       "%s (%s): message \"%s\" does not name the problem "
		       "(wanted e.g. \"%s\")",
		       what, mode_names[m], err, subs[0]);
		snap_check(what, path, &before);
		snap_free(&before);
	}
}

static int write_file(const char *path, const void *data, size_t n)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	const uint8_t *b = data;
	size_t off = 0;

	if (fd < 0)
		return -1;
	while (off < n) {
		ssize_t w = write(fd, b + off, n - off);

		if (w <= 0) {
			close(fd);
			return -1;
		}
		off += (size_t)w;
	}
	return close(fd);
}

/* A copy of the good pool, optionally truncated, at path. */
static int copy_good(const char *path, uint64_t truncate_to)
{
	file_snap g;
	int rc;

	snap_take(good_path, &g);
	if (!g.data)
		return -1;
	rc = write_file(path, g.data, (size_t)g.st.st_size);
	if (rc == 0 && truncate_to)
		rc = truncate(path, (off_t)truncate_to);
	snap_free(&g);
	return rc;
}

static int patch_file(const char *path, off_t off, const void *b, size_t n)
{
	int fd = open(path, O_WRONLY);
	ssize_t w;

	if (fd < 0)
		return -1;
	w = pwrite(fd, b, n, off);
	close(fd);
	return w == (ssize_t)n ? 0 : -1;
}

static void make_good_pool(void)
{
	stg_open_opts o = {0};
	stg_column_def c = {0};
	char err[256] = "";
	stg_pool *p = NULL;
	uint32_t tid;
	int64_t v[3] = {1, 2, 3};
	stg_col_batch b = {v, NULL};
	int rc;

	o.create = true;
	o.initial_size = POOL_SIZE;
	c.name = "x";
	c.type = STG_T_BIGINT;
	rc = stg_open(good_path, &o, &p, err, sizeof(err));
	CHECKF(rc == GPMDB_OK, "creating %s: %s", good_path, err);
	if (rc != GPMDB_OK)
		return;
	CHECK_RC(stg_begin(p), GPMDB_OK);
	CHECK_RC(
	    stg_table_create(p, "t", &c, 1, "CREATE TABLE t(x BIGINT)", &tid),
	    GPMDB_OK);
	CHECK_RC(stg_append(p, tid, &b, 3), GPMDB_OK);
	CHECK_RC(stg_commit(p), GPMDB_OK);
	CHECK_RC(stg_close(p), GPMDB_OK);
}

static void test_good_pool_opens(void)
{
	stg_open_opts o = {0};
	char err[256] = "";
	stg_pool *p = NULL;
	file_snap before;
	uint32_t tid;
	int rc;

	make_good_pool();
	/* The copies below are only meaningful if the original opens. */
	o.readonly = true;
	snap_take(good_path, &before);
	rc = stg_open(good_path, &o, &p, err, sizeof(err));
	CHECKF(rc == GPMDB_OK, "readonly open of a good pool: %s", err);
	if (rc == GPMDB_OK) {
		CHECK_RC(stg_table_find(p, "t", &tid), GPMDB_OK);
		CHECK(stg_row_count(p, tid) == 3);
		CHECK(stg_pool_readonly(p));
		CHECK_RC(stg_begin(p), GPMDB_READONLY);
		stg_close(p);
	}
	snap_check("readonly open of a good pool", good_path, &before);
	snap_free(&before);
	/* create=true on an existing pool opens it, it does not re-create. */
	o.readonly = false;
	o.create = true;
	p = NULL;
	rc = stg_open(good_path, &o, &p, err, sizeof(err));
	CHECKF(rc == GPMDB_OK, "create=true on a good pool: %s", err);
	if (rc == GPMDB_OK) {
		CHECK_RC(stg_table_find(p, "t", &tid), GPMDB_OK);
		CHECK(stg_row_count(p, tid) == 3);
		stg_close(p);
	}
}

static void test_missing(void)
{
	static const char *const subs[] = {
	    "No such file",   "not exist",   "not found", "missing",
	    "unable to open", "cannot open", NULL};
	stg_open_opts o = {0};
	char path[300], err[256];
	stg_pool *p = (stg_pool *)(uintptr_t)0x1;
	file_snap s;
	int rc;

	snprintf(path, sizeof(path), "%s/missing.pool", dir);
	snap_take(path, &s);
	memset(err, 0, sizeof(err));
	rc = stg_open(path, &o, &p, err, sizeof(err));
	CHECKF(rc == GPMDB_CANTOPEN, "rc %d (%s)", rc, err);
	CHECK(p == NULL);
	CHECKF(msg_has_any(err, subs), "message \"%s\"", err);
	snap_check("missing, create=false", path, &s);
	o.readonly = true;
	p = (stg_pool *)(uintptr_t)0x1;
	memset(err, 0, sizeof(err));
	rc = stg_open(path, &o, &p, err, sizeof(err));
	CHECKF(rc == GPMDB_CANTOPEN, "readonly: rc %d (%s)", rc, err);
	CHECK(p == NULL);
	CHECK(err[0] != '\0');
	snap_check("missing, readonly", path, &s);
	/* A missing directory in the path: create cannot help either. */
	snprintf(path, sizeof(path), "%s/nodir/x.pool", dir);
	o.readonly = false;
	o.create = true;
	p = (stg_pool *)(uintptr_t)0x1;
	memset(err, 0, sizeof(err));
	rc = stg_open(path, &o, &p, err, sizeof(err));
	CHECKF(rc == GPMDB_CANTOPEN, "missing dir, create: rc %d (%s)", rc,
	       err);
	CHECK(p == NULL);
	CHECK(err[0] != '\0');
}

static void test_directory(void)
{
	static const char *const subs[] = {"directory", "unable to open",
					   "cannot open", NULL};
	char path[300];

	snprintf(path, sizeof(path), "%s/adir", dir);
	mkdir(path, 0755);
	expect_open_fails("directory", path, GPMDB_CANTOPEN, subs);
}

static void test_empty(void)
{
	static const char *const subs[] = {"empty", "not a gpmdb", "too small",
					   "truncated", NULL};
	char path[300];

	snprintf(path, sizeof(path), "%s/empty.pool", dir);
	CHECK(write_file(path, "", 0) == 0);
	expect_open_fails("empty file", path, GPMDB_NOTADB, subs);
}

static void test_truncated(void)
{
	static const char *const small[] = {"too small", "truncated",
					    "not a gpmdb", "short", NULL};
	static const char *const trunc[] = {"truncated", NULL};
	char path[300];
	struct stat st;

	snprintf(path, sizeof(path), "%s/trunc3000.pool", dir);
	CHECK(copy_good(path, 3000) == 0);
	expect_open_fails("pool truncated to 3000 bytes", path, GPMDB_NOTADB,
			  small);
	CHECK(stat(good_path, &st) == 0);
	snprintf(path, sizeof(path), "%s/trunchalf.pool", dir);
	CHECK(copy_good(path, (uint64_t)st.st_size / 2) == 0);
	expect_open_fails("pool truncated to half", path, GPMDB_CORRUPT, trunc);
	snprintf(path, sizeof(path), "%s/trunc4096.pool", dir);
	CHECK(copy_good(path, 4096) == 0);
	expect_open_fails("pool truncated to its superblock", path,
			  GPMDB_CORRUPT, trunc);
}

static void test_random_bytes(void)
{
	static const char *const subs[] = {"not a gpmdb", "magic", NULL};
	size_t n = 1u << 20, i;
	uint8_t *b = malloc(n);
	uint64_t x = 0x243f6a8885a308d3ull;
	char path[300];

	for (i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		b[i] = (uint8_t)(x >> 24);
	}
	snprintf(path, sizeof(path), "%s/random.pool", dir);
	CHECK(write_file(path, b, n) == 0);
	expect_open_fails("1 MiB of random bytes", path, GPMDB_NOTADB, subs);
	free(b);
}

/* Versions 1 to STG_FORMAT_VERSION open (test_backup.c: test_format_version1,
 * test_storage_encode.c, test_storage_ztext.c); 0, the next and far off do
 * not. */
static void test_bad_version(void)
{
	static const char *const subs[] = {"version", NULL};
	static const uint32_t bad[] = {0, STG_FORMAT_VERSION + 1, 99};
	char path[300], what[64];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		uint32_t v = bad[i];

		snprintf(path, sizeof(path), "%s/version.pool", dir);
		snprintf(what, sizeof(what), "format version %u", v);
		CHECK(copy_good(path, 0) == 0);
		CHECK(patch_file(path, 8, &v, 4) == 0);
		expect_open_fails(what, path, GPMDB_NOTADB, subs);
	}
}

static void test_bad_checksum(void)
{
	static const char *const subs[] = {"checksum", NULL};
	static const off_t where[] = {16, 17, 40, 300, 2048, 4091};
	char path[300], what[64];
	size_t i;

	for (i = 0; i < sizeof(where) / sizeof(where[0]); i++) {
		file_snap s;
		uint8_t b;

		snprintf(path, sizeof(path), "%s/crc%lld.pool", dir,
			 (long long)where[i]);
		CHECK(copy_good(path, 0) == 0);
		snap_take(path, &s);
		b = s.data ? (uint8_t)(s.data[where[i]] ^ 0x5a) : 0;
		snap_free(&s);
		CHECK(patch_file(path, where[i], &b, 1) == 0);
		snprintf(what, sizeof(what), "byte %lld flipped",
			 (long long)where[i]);
		expect_open_fails(what, path, GPMDB_CORRUPT, subs);
	}
	/* The stored checksum itself damaged. */
	snprintf(path, sizeof(path), "%s/crcfield.pool", dir);
	CHECK(copy_good(path, 0) == 0);
	{
		uint8_t b = 0;
		file_snap s;

		snap_take(path, &s);
		if (s.data)
			b = (uint8_t)(s.data[4093] ^ 0x01);
		snap_free(&s);
		CHECK(patch_file(path, 4093, &b, 1) == 0);
	}
	expect_open_fails("stored checksum damaged", path, GPMDB_CORRUPT, subs);
}

static void test_bad_magic(void)
{
	static const char *const subs[] = {"not a gpmdb", "magic", NULL};
	static const char *const small[] = {"not a gpmdb", "magic", "too small",
					    NULL};
	static const off_t where[] = {0, 3, 7};
	char path[300], what[64];
	size_t i;

	for (i = 0; i < sizeof(where) / sizeof(where[0]); i++) {
		uint8_t b = 0xee;

		snprintf(path, sizeof(path), "%s/magic%d.pool", dir, (int)i);
		CHECK(copy_good(path, 0) == 0);
		CHECK(patch_file(path, where[i], &b, 1) == 0);
		snprintf(what, sizeof(what), "magic byte %lld changed",
			 (long long)where[i]);
		expect_open_fails(what, path, GPMDB_NOTADB, subs);
	}
	/* Another database's small file. */
	snprintf(path, sizeof(path), "%s/text.pool", dir);
	CHECK(write_file(path, "SQLite format 3\0 and more text here\n", 36) ==
	      0);
	expect_open_fails("an SQLite-looking header", path, GPMDB_NOTADB,
			  small);
}

/* Two writers in one process: flock locks belong to the open file
 * description, so the second open() conflicts with the first. */
static void test_lock_in_process(void)
{
	stg_open_opts o = {0}, ro = {0};
	char err[256] = "";
	stg_pool *p1 = NULL, *p2 = (stg_pool *)(uintptr_t)0x1, *p3 = NULL;
	int rc;

	rc = stg_open(good_path, &o, &p1, err, sizeof(err));
	CHECKF(rc == GPMDB_OK, "first writer: %s", err);
	if (rc != GPMDB_OK)
		return;
	memset(err, 0, sizeof(err));
	/* both open; the second cannot begin a write while the first has
	 * one (the write lock is per transaction: storage/lock.c) */
	rc = stg_open(good_path, &o, &p2, err, sizeof(err));
	CHECKF(rc == GPMDB_OK, "second writer: rc %d (%s)", rc, err);
	if (rc == GPMDB_OK) {
		CHECK_RC(stg_begin(p1), GPMDB_OK);
		rc = stg_begin(p2);
		CHECKF(rc == GPMDB_BUSY, "second writer: rc %d (%s)", rc,
		       stg_errmsg(p2));
		CHECKF(strstr(stg_errmsg(p2), "database is locked") != NULL,
		       "message \"%s\"", stg_errmsg(p2));
		CHECK_RC(stg_rollback(p1), GPMDB_OK);
		stg_close(p2);
	}
	ro.readonly = true;
	rc = stg_open(good_path, &ro, &p3, err, sizeof(err));
	CHECKF(rc == GPMDB_OK, "reader beside a writer: rc %d (%s)", rc, err);
	if (rc == GPMDB_OK)
		stg_close(p3);
	CHECK_RC(stg_close(p1), GPMDB_OK);
	/* The lock goes with the handle. */
	p2 = NULL;
	rc = stg_open(good_path, &o, &p2, err, sizeof(err));
	CHECKF(rc == GPMDB_OK, "writer after close: rc %d (%s)", rc, err);
	if (rc == GPMDB_OK)
		stg_close(p2);
}

/* A writer in another process, then killed: its lock dies with it. */
static void test_lock_other_process(void)
{
	stg_open_opts o = {0}, ro = {0};
	int fds[2], st;
	char err[256] = "", c = 0;
	stg_pool *p = (stg_pool *)(uintptr_t)0x1;
	file_snap before;
	pid_t pid;
	int rc;

	CHECK(pipe(fds) == 0);
	pid = fork();
	if (pid == 0) {
		stg_pool *cp = NULL;
		char cerr[256];

		close(fds[0]);
		/* a writer holding the write lock in a transaction */
		c = stg_open(good_path, &o, &cp, cerr, sizeof(cerr)) ==
				GPMDB_OK &&
			    stg_begin(cp) == GPMDB_OK
			? 'y'
			: 'n';
		if (write(fds[1], &c, 1) != 1)
			_exit(2);
		for (;;)
			pause();
	}
	close(fds[1]);
	CHECK(pid > 0);
	CHECK(read(fds[0], &c, 1) == 1);
	CHECKF(c == 'y', "child could not open the pool");
	close(fds[0]);
	snap_take(good_path, &before);
	rc = stg_open(good_path, &o, &p, err, sizeof(err));
	CHECKF(rc == GPMDB_OK,
	       "open beside another process's writer: rc %d "
	       "(%s)",
	       rc, err);
	if (rc == GPMDB_OK) {
		rc = stg_begin(p);
		CHECKF(rc == GPMDB_BUSY,
		       "write beside another process's writer: rc %d (%s)", rc,
		       stg_errmsg(p));
		CHECKF(strstr(stg_errmsg(p), "database is locked") != NULL,
		       "message \"%s\"", stg_errmsg(p));
		stg_close(p);
	}
	snap_check("BUSY open", good_path, &before);
	snap_free(&before);
	ro.readonly = true;
	p = NULL;
	rc = stg_open(good_path, &ro, &p, err, sizeof(err));
	CHECKF(rc == GPMDB_OK,
	       "reader beside another process's writer: "
	       "rc %d (%s)",
	       rc, err);
	if (rc == GPMDB_OK)
		stg_close(p);
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, &st, 0);
	}
	p = NULL;
	rc = stg_open(good_path, &o, &p, err, sizeof(err));
	CHECKF(rc == GPMDB_OK, "writer after the holder died: rc %d (%s)", rc,
	       err);
	if (rc == GPMDB_OK)
		stg_close(p);
}

static void rm_dir(const char *d)
{
	DIR *dp = opendir(d);
	struct dirent *de;
	char path[600];

	if (!dp)
		return;
	while ((de = readdir(dp)) != NULL) {
		struct stat st;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		snprintf(path, sizeof(path), "%s/%s", d, de->d_name);
		if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode))
			rm_dir(path);
		else
			unlink(path);
	}
	closedir(dp);
	rmdir(d);
}

int main(void)
{
	snprintf(dir, sizeof(dir), "/tmp/gpmdb_badinput_%d", (int)getpid());
	rm_dir(dir);
	if (mkdir(dir, 0755) != 0) {
		perror(dir);
		return 1;
	}
	snprintf(good_path, sizeof(good_path), "%s/good.pool", dir);

	TEST_RUN(test_good_pool_opens);
	TEST_RUN(test_missing);
	TEST_RUN(test_directory);
	TEST_RUN(test_empty);
	TEST_RUN(test_truncated);
	TEST_RUN(test_random_bytes);
	TEST_RUN(test_bad_version);
	TEST_RUN(test_bad_checksum);
	TEST_RUN(test_bad_magic);
	TEST_RUN(test_lock_in_process);
	TEST_RUN(test_lock_other_process);
	rm_dir(dir);
	TEST_MAIN_END();
}
