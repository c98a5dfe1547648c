/*
 * crash_backup.c - kill -9 of a process taking incremental backups or
 * checkpoints (storage/backup.c, engine/backup.c), at random moments.
 *
 * A pmem-mode pool on /dev/shm holds t(id, v) whose sum(v) never
 * changes: the child process moves amounts between rows in transactions
 * and, between them, takes an incremental backup onto an earlier copy
 * (case "backup") or runs PRAGMA checkpoint (case "checkpoint"); the
 * parent kills it with SIGKILL after a random delay, 60 times per case.
 * A first complete copy is made before the kills.  After each kill: the
 * database reopens, passes its integrity check and
 * keeps its sum; the copy either opens (integrity check ok, the same sum
 * and row count: a committed state) or is refused as an incomplete copy
 * with that message; after the kills the next backup completes it.  The
 * landings are counted: copies complete, copies refused.  A transfer
 * keeps the total at the ends of the id range too (test_transfer_ends).
 *
 * The deltas (storage/delta.c), KILLS kills each: case "delta write": a
 * child updates every 100th row (adding 1 to the ids up to 32700 of one
 * residue modulo 100, taking 1 from another: 327 rows each, a change
 * every 800 bytes of v, so the zones go into deltas by their lines) and
 * backs up incrementally, killed at a crash point of the delta's writes
 * (backup.delta: a buffer or the header page) or at a random moment; the
 * copy then opens with a committed state or is refused as incomplete,
 * and the next backup completes it.  Case "delta apply": the parent
 * updates and backs up (the copy holds deltas, a chain of one or more),
 * noting the state; a child opens the copy read-write and is killed
 * while applying them (delta.apply after the n-th zone, delta.applied,
 * delta.sb, or a random moment); the copy must then open, read-only (in
 * its private mapping) and read-write, with exactly that state.
 */
#include "../harness.h"
#include "../sql_util.h"

#include "gpmdb.h"

#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define ROWS  32768
#define KILLS 60

static char path[300], copy[300], self[4096];

static void rm_db(const char *p)
{
	char side[340];

	unlink(p);
	snprintf(side, sizeof(side), "%s-wal", p);
	unlink(side);
	snprintf(side, sizeof(side), "%s-shm", p);
	unlink(side);
}

static gpmdb *open_db(const char *p, bool create)
{
	gpmdb *db = NULL;
	gpmdb_options o = {.durability = "pmem"};

	if (gpmdb_open_v2(
		p, &db, GPMDB_OPEN_READWRITE | (create ? GPMDB_OPEN_CREATE : 0),
		&o) != GPMDB_OK) {
		gpmdb_close(db);
		return NULL;
	}
	gpmdb_busy_timeout(db, 5000);
	return db;
}

/* One transfer, for ids a and b in [1, ROWS]: +3 on a and -3 on b, then
 * +1 and -1 on 301 rows each from 1 + a / 2 and 1 + b / 2 (ending at
 * most at 16685 <= ROWS).  Every range names 301 existing rows, so a
 * committed transfer keeps the total.  (The first version of this test
 * began the ranges at a / 2: for a = 1 or b = 1 a range began at id 0,
 * which no row has, and that transaction changed the total by 1 with no
 * crash at all; test_transfer_ends checks the ends.) */
static void transfer_sql(char *sql, size_t n, int a, int b)
{
	int la = 1 + a / 2, lb = 1 + b / 2;

	snprintf(sql, n,
		 "BEGIN; UPDATE t SET v = v + 3 WHERE id = %d; UPDATE t SET "
		 "v = v - 3 WHERE id = %d; UPDATE t SET v = v + 1 WHERE id "
		 "BETWEEN %d AND %d; UPDATE t SET v = v - 1 WHERE id BETWEEN "
		 "%d AND %d; COMMIT",
		 a, b, la, la + 300, lb, lb + 300);
}

/* The child: transfers and backups until killed. */
static int child(bool ckpt)
{
	gpmdb *db = open_db(path, false);
	char sql[600];
	unsigned seed = (unsigned)getpid();

	if (!db)
		return 2;
	if (ckpt) {
		snprintf(sql, sizeof(sql), "PRAGMA checkpoint_file = '%s'",
			 copy);
		if (su_exec(db, sql))
			return 3;
	}
	for (;;) {
		for (int i = 0; i < 4; i++) {
			int a = 1 + (int)(rand_r(&seed) % ROWS);
			int b = 1 + (int)(rand_r(&seed) % ROWS);

			transfer_sql(sql, sizeof(sql), a, b);
			if (su_exec(db, sql))
				return 4;
		}
		if (ckpt) {
			if (su_exec(db, "PRAGMA checkpoint"))
				return 5;
		} else {
			gpmdb_backup *bk = gpmdb_backup_init(copy, db, NULL);

			if (!bk)
				return 6;
			while (gpmdb_backup_step(bk, 64) == GPMDB_OK)
				;
			if (gpmdb_backup_finish(bk))
				return 7;
		}
	}
}

static const char *SUMQ = "SELECT count(*) || ':' || sum(v) FROM t";
/* moves when any row's value moves */
static const char *HASHQ =
    "SELECT count(*) || ':' || sum(v) || ':' || "
    "sum(id * v) || ':' || sum((id % 97) * v * v) FROM t";

/* One update keeping the total: +1 on residue a, -1 on residue b. */
static int move(gpmdb *db, unsigned *seed)
{
	char sql[300];
	int a = (int)(rand_r(seed) % 100), b = (int)(rand_r(seed) % 100);

	snprintf(sql, sizeof(sql),
		 "BEGIN; UPDATE t SET v = v + 1 WHERE id %% 100 = %d AND id "
		 "<= 32700; UPDATE t SET v = v - 1 WHERE id %% 100 = %d AND "
		 "id <= 32700; COMMIT",
		 a, b);
	return su_exec(db, sql);
}

static int backup_once(gpmdb *db, gpmdb_backup_stat *bs)
{
	gpmdb_backup *bk = gpmdb_backup_init(copy, db, NULL);
	int rc;

	memset(bs, 0, sizeof(*bs));
	if (!bk)
		return gpmdb_errcode(db);
	while ((rc = gpmdb_backup_step(bk, 64)) == GPMDB_OK)
		;
	gpmdb_backup_status(bk, bs);
	if (rc != GPMDB_DONE) {
		(void)gpmdb_backup_finish(bk);
		return rc;
	}
	return gpmdb_backup_finish(bk);
}

/* Children of the delta cases: "--write": an update, then backups
 * until killed;
 * "--apply": opens the copy read-write (GPMDB_CRASH_AT set by the
 * parent), and exits 0 if it lives. */
static int child_lines(bool write)
{
	unsigned seed = (unsigned)getpid();
	gpmdb_backup_stat bs;
	gpmdb *db;

	if (!write) {
		db = NULL;
		if (gpmdb_open_v2(copy, &db, GPMDB_OPEN_READWRITE, NULL))
			return 2;
		gpmdb_close(db);
		return 0;
	}
	if (!(db = open_db(path, false)))
		return 2;
	/* a crash point never reached (no delta written) ends it */
	for (int i = 0; i < 500; i++) {
		if (move(db, &seed))
			return 3;
		if (backup_once(db, &bs))
			return 4;
	}
	return 8;
}

/* A new database at path holding t: ids 1..ROWS, v = 100 each; its
 * count and total in want. */
static gpmdb *make_table(char *want, size_t n)
{
	gpmdb *db;

	rm_db(path);
	rm_db(copy);
	db = open_db(path, true);
	CHECK(db != NULL);
	if (!db)
		return NULL;
	CHECK_RC(su_exec(db, "CREATE TABLE t(id INTEGER PRIMARY KEY, v INT); "
			     "INSERT INTO t VALUES (1, 100)"),
		 GPMDB_OK);
	for (int i = 0; i < 15; i++)
		CHECK_RC(su_exec(db, "INSERT INTO t SELECT id + (SELECT "
				     "max(id) FROM t), 100 FROM t"),
			 GPMDB_OK);
	snprintf(want, n, "%s", su_scalar(db, SUMQ));
	CHECK(!strcmp(want, "32768:3276800"));
	return db;
}

/* After a kill: the database reopens, recovered and whole (its total
 * want, its integrity check). */
static void db_whole(const char *want)
{
	gpmdb *db = open_db(path, false);

	CHECK(db != NULL);
	if (db) {
		CHECKF(!strcmp(su_scalar(db, SUMQ), want), "db %s",
		       su_scalar(db, SUMQ));
		CHECK(!strcmp(su_scalar(db, "PRAGMA integrity_check"), "ok"));
		gpmdb_close(db);
	}
}

/* The children's transfers keep the total at the ends of the id range
 * too, with no crash: the invariant the kills check is the test's own. */
static void test_transfer_ends(void)
{
	static const int ends[][2] = {{1, ROWS},     {ROWS, 1},	   {1, 1},
				      {2, ROWS - 1}, {ROWS, ROWS}, {3, 2}};
	char want[600], sql[600];
	gpmdb *db = make_table(want, sizeof(want));

	if (!db)
		return;
	for (size_t i = 0; i < sizeof(ends) / sizeof(ends[0]); i++) {
		transfer_sql(sql, sizeof(sql), ends[i][0], ends[i][1]);
		CHECK_RC(su_exec(db, sql), GPMDB_OK);
		CHECKF(!strcmp(su_scalar(db, SUMQ), want),
		       "a=%d b=%d: total %s, want %s", ends[i][0], ends[i][1],
		       su_scalar(db, SUMQ), want);
	}
	gpmdb_close(db);
	rm_db(path);
}

static void run_case(bool ckpt)
{
	int complete = 0, refused = 0, early = 0;
	char want[600];
	gpmdb *db = make_table(want, sizeof(want));

	if (!db)
		return;
	/* a first complete copy: the children update it incrementally */
	{
		gpmdb_backup *bk = gpmdb_backup_init(copy, db, NULL);

		CHECK(bk != NULL);
		if (bk) {
			CHECK_RC(gpmdb_backup_step(bk, -1), GPMDB_DONE);
			CHECK_RC(gpmdb_backup_finish(bk), GPMDB_OK);
		}
	}
	gpmdb_close(db);
	for (int k = 0; k < KILLS; k++) {
		pid_t pid = fork();
		gpmdb *c = NULL;
		int st = 0, rc;

		if (pid == 0) {
			execl(self, self, ckpt ? "--ckpt" : "--backup", path,
			      copy, (char *)NULL);
			_exit(9);
		}
		usleep(1000 + (useconds_t)(rand() % 150000));
		kill(pid, SIGKILL);
		CHECK(waitpid(pid, &st, 0) == pid);
		if (!(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL)) {
			CHECKF(0, "child ended by itself: status %d", st);
			early++;
		}
		db_whole(want);
		/* the copy: a committed state, or refused as incomplete */
		rc = gpmdb_open_v2(copy, &c, GPMDB_OPEN_READONLY, NULL);
		if (rc == GPMDB_OK) {
			complete++;
			CHECKF(!strcmp(su_scalar(c, SUMQ), want), "copy %s",
			       su_scalar(c, SUMQ));
			CHECK(!strcmp(su_scalar(c, "PRAGMA integrity_check"),
				      "ok"));
		} else if (rc == GPMDB_CANTOPEN) {
			/* killed before the first copy was begun */
		} else {
			refused++;
			CHECKF(
			    strstr(gpmdb_errmsg(c), "incomplete backup copy"),
			    "%d %s", rc, gpmdb_errmsg(c));
		}
		gpmdb_close(c);
	}
	printf("# %s: %d kills: copy complete %d, incomplete (refused) %d, "
	       "early exits %d\n",
	       ckpt ? "checkpoint" : "backup", KILLS, complete, refused, early);
	/* whatever the last kill left, the next backup completes the copy
	 * (incrementally where the marker allows) and it holds the state */
	db = open_db(path, false);
	CHECK(db != NULL);
	if (db) {
		gpmdb_backup *bk = gpmdb_backup_init(copy, db, NULL);
		gpmdb *c = NULL;

		CHECK(bk != NULL);
		if (bk) {
			CHECK_RC(gpmdb_backup_step(bk, -1), GPMDB_DONE);
			CHECK_RC(gpmdb_backup_finish(bk), GPMDB_OK);
		}
		CHECK_RC(gpmdb_open_v2(copy, &c, GPMDB_OPEN_READONLY, NULL),
			 GPMDB_OK);
		CHECK(!strcmp(su_scalar(c, SUMQ), want));
		CHECK(!strcmp(su_scalar(c, "PRAGMA integrity_check"), "ok"));
		gpmdb_close(c);
		gpmdb_close(db);
	}
	rm_db(path);
	rm_db(copy);
}

static void test_kill_backup(void)
{
	run_case(false);
}

static void test_kill_checkpoint(void)
{
	run_case(true);
}

/* The copy opens (read-only) with the state h (its HASHQ), or, when h is
 * NULL, the total; false when it is refused as incomplete. */
static bool copy_ok(const char *h, const char *want, int *refused)
{
	gpmdb *c = NULL;
	int rc = gpmdb_open_v2(copy, &c, GPMDB_OPEN_READONLY, NULL);

	if (rc != GPMDB_OK) {
		CHECKF(strstr(gpmdb_errmsg(c), "incomplete backup copy"),
		       "%d %s", rc, gpmdb_errmsg(c));
		(*refused)++;
		gpmdb_close(c);
		return false;
	}
	if (h)
		CHECKF(!strcmp(su_scalar(c, HASHQ), h), "copy %s, want %s",
		       su_scalar(c, HASHQ), h);
	else
		CHECKF(!strcmp(su_scalar(c, SUMQ), want), "copy %s",
		       su_scalar(c, SUMQ));
	CHECK(!strcmp(su_scalar(c, "PRAGMA integrity_check"), "ok"));
	gpmdb_close(c);
	return true;
}

/* Runs this program as a child with GPMDB_CRASH_AT=at (or none and a kill
 * after a random delay); its wait status. */
static int run_child(const char *mode, const char *at, bool killer)
{
	pid_t pid = fork();
	int st = 0;

	if (pid == 0) {
		if (at)
			setenv("GPMDB_CRASH_AT", at, 1);
		execl(self, self, mode, path, copy, (char *)NULL);
		_exit(9);
	}
	if (killer) {
		usleep(1000 + (useconds_t)(rand() % 60000));
		kill(pid, SIGKILL);
	}
	CHECK(waitpid(pid, &st, 0) == pid);
	return st;
}

static void test_kill_delta_write(void)
{
	int complete = 0, refused = 0, pointed = 0;
	char want[600];
	gpmdb_backup_stat bs;
	gpmdb *db = make_table(want, sizeof(want));

	if (!db)
		return;
	CHECK_RC(backup_once(db, &bs), GPMDB_OK);
	gpmdb_close(db);
	for (int k = 0; k < KILLS; k++) {
		char at[64];
		int st;

		/* half at the delta's writes (a buffer or its header page),
		 * half at random moments */
		snprintf(at, sizeof(at), "backup.delta:%d", 1 + rand() % 3);
		st = run_child("--write", k % 2 ? NULL : at, k % 2 != 0);
		CHECKF(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL,
		       "child status %d", st);
		if (k % 2 == 0)
			pointed++;
		db_whole(want);
		if (copy_ok(NULL, want, &refused))
			complete++;
	}
	printf("# delta write: %d kills (%d at backup.delta): copy complete "
	       "%d, incomplete (refused) %d\n",
	       KILLS, pointed, complete, refused);
	CHECK(refused > 0 && complete > 0);
	/* the next backup completes it, and it holds the database's rows */
	db = open_db(path, false);
	CHECK(db != NULL);
	if (db) {
		char h[600];
		int none = 0;

		CHECK_RC(backup_once(db, &bs), GPMDB_OK);
		snprintf(h, sizeof(h), "%s", su_scalar(db, HASHQ));
		CHECK(copy_ok(h, want, &none) && none == 0);
		gpmdb_close(db);
	}
	rm_db(path);
	rm_db(copy);
}

static void test_kill_delta_apply(void)
{
	int lived = 0, chains = 0, pointed = 0;
	unsigned seed = 7;
	char want[600], h[600];
	gpmdb_backup_stat bs;
	gpmdb *db = make_table(want, sizeof(want));

	if (!db)
		return;
	CHECK_RC(backup_once(db, &bs), GPMDB_OK);
	for (int k = 0; k < KILLS; k++) {
		static const char *pts[] = {"delta.applied", "delta.sb"};
		char at[64];
		int st, refused = 0;

		/* a delta (onto a chain when the last apply was cut before
		 * its superblock) */
		CHECK_RC(move(db, &seed), GPMDB_OK);
		CHECK_RC(backup_once(db, &bs), GPMDB_OK);
		CHECKF(bs.incremental && bs.zones_lines > 0, "%d %lld",
		       bs.incremental, bs.zones_lines);
		snprintf(h, sizeof(h), "%s", su_scalar(db, HASHQ));
		if (k % 5 == 4)
			snprintf(at, sizeof(at), "%s", pts[(k / 5) % 2]);
		else
			snprintf(at, sizeof(at), "delta.apply:%d",
				 1 + rand() % (int)bs.zones_lines);
		st = run_child("--apply", k % 5 == 3 ? NULL : at, k % 5 == 3);
		if (k % 5 == 3 && WIFEXITED(st) && WEXITSTATUS(st) == 0)
			lived++; /* the random kill came after it */
		else
			CHECKF(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL,
			       "child status %d (%s)", st, at);
		if (k % 5 != 3)
			pointed++;
		/* the state noted, read-only (private) and read-write */
		CHECK(copy_ok(h, want, &refused) && refused == 0);
		if (k % 3 == 0) {
			gpmdb *c = NULL;

			CHECK_RC(
			    gpmdb_open_v2(copy, &c, GPMDB_OPEN_READWRITE, NULL),
			    GPMDB_OK);
			if (c)
				CHECKF(!strcmp(su_scalar(c, HASHQ), h),
				       "copy %s, want %s", su_scalar(c, HASHQ),
				       h);
			gpmdb_close(c);
		} else {
			chains++;
		}
	}
	printf("# delta apply: %d kills (%d at crash points, %d lived), "
	       "%d left the copy's deltas for the next backup\n",
	       KILLS, pointed, lived, chains);
	gpmdb_close(db);
	rm_db(path);
	rm_db(copy);
}

int main(int argc, char **argv)
{
	snprintf(self, sizeof(self), "%s", argv[0]);
	if (argc == 4) {
		snprintf(path, sizeof(path), "%s", argv[2]);
		snprintf(copy, sizeof(copy), "%s", argv[3]);
		if (!strcmp(argv[1], "--write") || !strcmp(argv[1], "--apply"))
			return child_lines(!strcmp(argv[1], "--write"));
		return child(!strcmp(argv[1], "--ckpt"));
	}
	srand((unsigned)time(NULL));
	snprintf(path, sizeof(path), "/dev/shm/gpmdb_crash_bk_%d.db",
		 (int)getpid());
	snprintf(copy, sizeof(copy), "/tmp/gpmdb_crash_bk_%d.copy",
		 (int)getpid());
	TEST_RUN(test_transfer_ends);
	TEST_RUN(test_kill_backup);
	TEST_RUN(test_kill_checkpoint);
	TEST_RUN(test_kill_delta_write);
	TEST_RUN(test_kill_delta_apply);
	TEST_MAIN_END();
}
