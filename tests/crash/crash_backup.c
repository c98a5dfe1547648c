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
		/* the database: recovered, whole */
		db = open_db(path, false);
		CHECK(db != NULL);
		if (db) {
			CHECKF(!strcmp(su_scalar(db, SUMQ), want), "db %s",
			       su_scalar(db, SUMQ));
			CHECK(!strcmp(su_scalar(db, "PRAGMA integrity_check"),
				      "ok"));
			gpmdb_close(db);
		}
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

int main(int argc, char **argv)
{
	snprintf(self, sizeof(self), "%s", argv[0]);
	if (argc == 4) {
		snprintf(path, sizeof(path), "%s", argv[2]);
		snprintf(copy, sizeof(copy), "%s", argv[3]);
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
	TEST_MAIN_END();
}
