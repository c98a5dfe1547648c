/*
 * test_vacuum_into.c - VACUUM INTO 'file' (engine/backup.c,
 * storage/backup.c): a copy of the committed state that opens as a
 * database with the same rows and indexes, from a pool in pmem mode
 * (/dev/shm), in msync mode (a file system) and in memory; and the
 * refusals: an existing output file, inside a transaction, an unwritable
 * path, a full disk (no file left behind), plain VACUUM inside a transaction, a
 * name that is not a string.  A copy whose superblock never came is refused at
 * open.
 */
#include "harness.h"
#include "sql_util.h"

#include "gpmdb.h"

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char dir[256], path[300], copy[320];

static gpmdb *open_mode(const char *p, const char *durability)
{
	gpmdb *db = NULL;
	gpmdb_options o = {.durability = durability};

	CHECK_RC(
	    gpmdb_open_v2(p, &db, GPMDB_OPEN_READWRITE | GPMDB_OPEN_CREATE, &o),
	    GPMDB_OK);
	return db;
}

static void fill(gpmdb *db)
{
	CHECK_RC(su_exec(db, "CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT, "
			     "d DOUBLE)"),
		 GPMDB_OK);
	CHECK_RC(su_exec(db, "CREATE INDEX tv ON t(v)"), GPMDB_OK);
	for (int i = 0; i < 50; i++) {
		char sql[200];
		snprintf(sql, sizeof(sql),
			 "INSERT INTO t VALUES (%d, 'value %d', %d.5)", i,
			 (i * 7) % 50, i);
		CHECK_RC(su_exec(db, sql), GPMDB_OK);
	}
	CHECK_RC(su_exec(db, "DELETE FROM t WHERE id % 10 = 3"), GPMDB_OK);
}

/* The test's database made again and filled. */
static gpmdb *fresh_filled(void)
{
	gpmdb *db;

	unlink(path);
	db = open_mode(path, NULL);
	if (db)
		fill(db);
	return db;
}

static void check_copy(const char *p)
{
	gpmdb *db = NULL;

	CHECK_RC(gpmdb_open_v2(p, &db, GPMDB_OPEN_READONLY, NULL), GPMDB_OK);
	CHECK(!strcmp(su_scalar(db, "SELECT count(*) FROM t"), "45"));
	CHECK(!strcmp(su_scalar(db, "SELECT sum(id) FROM t"), "1110"));
	CHECK(!strcmp(su_scalar(db, "SELECT id FROM t WHERE v = 'value 14'"),
		      "2"));
	CHECK(!strcmp(su_scalar(db, "PRAGMA integrity_check"), "ok"));
	gpmdb_close(db);
}

static void test_copies(void)
{
	static const struct {
		const char *where, *durability;
	} modes[] = {{"/dev/shm", "pmem"}, {NULL, "msync"}, {NULL, NULL}};

	for (size_t m = 0; m < sizeof(modes) / sizeof(modes[0]); m++) {
		char p[300];
		gpmdb *db;

		if (modes[m].where)
			snprintf(p, sizeof(p), "%s/test_vacuum_%d.db",
				 modes[m].where, (int)getpid());
		else if (modes[m].durability)
			snprintf(p, sizeof(p), "%s", path);
		else
			snprintf(p, sizeof(p), ":memory:");
		unlink(p);
		unlink(copy);
		db = modes[m].durability ? open_mode(p, modes[m].durability)
					 : open_mode(p, NULL);
		if (!db)
			return;
		fill(db);
		char sql[400];
		snprintf(sql, sizeof(sql), "VACUUM INTO '%s'", copy);
		CHECK_RC(su_exec(db, sql), GPMDB_OK);
		gpmdb_close(db);
		check_copy(copy);
		/* the copy is a database of its own: writable, apart */
		db = open_mode(copy, NULL);
		if (db) {
			CHECK_RC(su_exec(db, "INSERT INTO t VALUES (100, 'x', "
					     "0)"),
				 GPMDB_OK);
			gpmdb_close(db);
		}
		if (strcmp(p, ":memory:")) {
			gpmdb *o = NULL;
			CHECK_RC(
			    gpmdb_open_v2(p, &o, GPMDB_OPEN_READONLY, NULL),
			    GPMDB_OK);
			CHECK(!strcmp(su_scalar(o, "SELECT count(*) FROM t"),
				      "45"));
			gpmdb_close(o);
			unlink(p);
		}
		unlink(copy);
	}
}

static const char *exec_err(gpmdb *db, const char *sql)
{
	static char buf[600];
	char *err = NULL;

	buf[0] = 0;
	if (gpmdb_exec(db, sql, NULL, NULL, &err) != GPMDB_OK)
		snprintf(buf, sizeof(buf), "%s", err ? err : "?");
	gpmdb_free(err);
	return buf;
}

static void test_refusals(void)
{
	gpmdb *db;
	char sql[400];
	struct stat st;
	int fd;

	if (!(db = fresh_filled()))
		return;
	/* an existing file stays as it was */
	fd = open(copy, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0 && write(fd, "keep", 4) == 4);
	close(fd);
	snprintf(sql, sizeof(sql), "VACUUM INTO '%s'", copy);
	CHECKF(strstr(exec_err(db, sql), "output file already exists"), "%s",
	       exec_err(db, sql));
	CHECK(stat(copy, &st) == 0 && st.st_size == 4);
	unlink(copy);
	/* not inside a transaction */
	CHECK_RC(su_exec(db, "BEGIN"), GPMDB_OK);
	CHECK(strstr(exec_err(db, sql), "within a transaction") != NULL);
	CHECK_RC(su_exec(db, "ROLLBACK"), GPMDB_OK);
	CHECK(access(copy, F_OK) != 0);
	/* a path that cannot be written */
	CHECK(strstr(exec_err(db, "VACUUM INTO '/nonexistent-dir/x.db'"),
		     "/nonexistent-dir/x.db") != NULL);
	/* plain VACUUM (it encodes, storage/encode.c) not inside a
	 * transaction, and a name that is not a string */
	CHECK_RC(su_exec(db, "BEGIN"), GPMDB_OK);
	CHECK(strstr(exec_err(db, "VACUUM"), "within a transaction") != NULL);
	CHECK_RC(su_exec(db, "ROLLBACK"), GPMDB_OK);
	CHECK(strstr(exec_err(db, "VACUUM INTO 42"), "string literal") != NULL);
	CHECK(strstr(exec_err(db, "VACUUM other INTO 'x'"),
		     "unknown database") != NULL);
	/* the database is as it was */
	CHECK(!strcmp(su_scalar(db, "SELECT count(*) FROM t"), "45"));
	gpmdb_close(db);
}

/* A full disk: the file size limit stops the copy, which is removed. */
static void test_full(void)
{
	gpmdb *db;
	pid_t pid;
	int status = -1;

	if (!(db = fresh_filled()))
		return;
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		struct rlimit rl;
		char sql[400], *err = NULL;
		int rc;

		signal(SIGXFSZ, SIG_IGN);
		getrlimit(RLIMIT_FSIZE, &rl);
		rl.rlim_cur = 65536;
		setrlimit(RLIMIT_FSIZE, &rl);
		snprintf(sql, sizeof(sql), "VACUUM INTO '%s'", copy);
		rc = gpmdb_exec(db, sql, NULL, NULL, &err);
		_exit(rc == GPMDB_FULL && err &&
			      strstr(err, "database or disk is full") &&
			      access(copy, F_OK) != 0
			  ? 0
			  : 1);
	}
	waitpid(pid, &status, 0);
	CHECKF(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %x",
	       status);
	CHECK(access(copy, F_OK) != 0);
	gpmdb_close(db);
}

/* A copy cut short before its superblock never opens as a database. */
static void test_cut_short(void)
{
	gpmdb *db, *c = NULL;
	char sql[400], zero[4096] = {0};
	int fd;

	if (!(db = fresh_filled()))
		return;
	unlink(copy);
	snprintf(sql, sizeof(sql), "VACUUM INTO '%s'", copy);
	CHECK_RC(su_exec(db, sql), GPMDB_OK);
	gpmdb_close(db);
	fd = open(copy, O_WRONLY);
	CHECK(fd >= 0 && pwrite(fd, zero, sizeof(zero), 0) == sizeof(zero));
	close(fd);
	CHECK(gpmdb_open_v2(copy, &c, GPMDB_OPEN_READWRITE, NULL) != GPMDB_OK);
	CHECK(c && strstr(gpmdb_errmsg(c), "not a gpmdb database") != NULL);
	gpmdb_close(c);
	unlink(copy);
}

int main(void)
{
	if (su_tmp_make(dir, sizeof(dir), path, sizeof(path), "test_vacuum",
			"v.gpmdb"))
		return 1;
	snprintf(copy, sizeof(copy), "%s/copy.gpmdb", dir);
	TEST_RUN(test_copies);
	TEST_RUN(test_refusals);
	TEST_RUN(test_full);
	TEST_RUN(test_cut_short);
	unlink(copy);
	su_tmp_remove(dir, path);
	TEST_MAIN_END();
}
