/*
 * crash_grow.c - kill -9 of a process whose batch INSERT grows the pool
 * file by more than 64 MiB at once (storage/pool.c "Growing ahead"): the
 * growth's fallocate runs on a thread (stg_grow_ahead) beside the
 * conversion and the key check, and the growth itself only maps the file
 * again.  A pmem-mode pool on /dev/shm holds t(id BIGINT PRIMARY KEY, v
 * BIGINT) with an index on v; a child process (this program run again,
 * "child FROM", so that it starts without the parent's OpenMP threads)
 * appends 2.5M rows with gpmdb_append_columns; the parent kills it after
 * a random delay, or the child kills itself at the crash points
 * grow.extend and grow.remap.  After each kill the pool reopens with the
 * rows before or after the batch, sum(v) = 3 sum(id), and a clean
 * integrity check (its indexes agree with the table).  GPMDB_CRASH_KILLS
 * sets the number of kills (default 12).
 */
#include "../harness.h"

#include "gpmdb.h"

#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define M 2500000

static char path[256];
static const char *self;

static int scalar_cb(void *arg, int n, char **v, char **c)
{
	(void)n;
	(void)c;
	snprintf((char *)arg, 64, "%s", v[0] ? v[0] : "NULL");
	return 0;
}

static void scalar(gpmdb *db, const char *sql, char *out)
{
	out[0] = 0;
	gpmdb_exec(db, sql, scalar_cb, out, NULL);
}

static const char *const schema =
    "CREATE TABLE t (id BIGINT PRIMARY KEY, v BIGINT); "
    "CREATE INDEX tv ON t(v)";

/* The child: rows [from, from + M), v = 3 id, one batch. */
static int child(int64_t from)
{
	gpmdb *db = NULL;
	int64_t *id = malloc(8 * (size_t)M), *v = malloc(8 * (size_t)M);
	gpmdb_column_array a[2];

	if (!id || !v || gpmdb_open_v2(path, &db, GPMDB_OPEN_READWRITE, NULL))
		return 3;
	for (int64_t i = 0; i < M; i++) {
		id[i] = from + i;
		v[i] = 3 * (from + i);
	}
	a[0] = (gpmdb_column_array){GPMDB_ARRAY_INT64, id, NULL};
	a[1] = (gpmdb_column_array){GPMDB_ARRAY_INT64, v, NULL};
	if (gpmdb_append_columns(db, "t", 2, NULL, a, M)) {
		fprintf(stderr, "child: %s\n", gpmdb_errmsg(db));
		return 4;
	}
	gpmdb_close(db);
	return 0;
}

static void test_kills(void)
{
	const char *e = getenv("GPMDB_CRASH_KILLS");
	int kills = e ? atoi(e) : 12, nb = 0, na = 0, points = 0;
	gpmdb *db = NULL;

	srand(42);
	unlink(path);
	CHECK_RC(gpmdb_open_v2(path, &db,
			       GPMDB_OPEN_READWRITE | GPMDB_OPEN_CREATE, NULL),
		 GPMDB_OK);
	if (!db)
		return;
	CHECK_RC(gpmdb_exec(db, schema, NULL, NULL, NULL), GPMDB_OK);
	gpmdb_close(db);
	for (int k = 0; k < kills; k++) {
		char c[64], ok[64], s[64], from[32];
		const char *cp = k % 4 == 1   ? "grow.extend:1"
				 : k % 4 == 3 ? "grow.remap:1"
					      : NULL;
		int64_t before, now;
		int ms = rand() % 1500, st;
		pid_t pid;

		if (gpmdb_open_v2(path, &db, GPMDB_OPEN_READWRITE, NULL)) {
			CHECKF(0, "kill %d: cannot reopen", k);
			return;
		}
		scalar(db, "SELECT count(*) FROM t", c);
		before = atoll(c);
		if (before >= 3 * M) { /* keep it small: start again */
			CHECK_RC(
			    gpmdb_exec(db, "DROP TABLE t", NULL, NULL, NULL),
			    GPMDB_OK);
			CHECK_RC(gpmdb_exec(db, schema, NULL, NULL, NULL),
				 GPMDB_OK);
			before = 0;
		}
		gpmdb_close(db);
		snprintf(from, sizeof(from), "%lld", (long long)before);
		fflush(stdout);
		pid = fork();
		if (pid == 0) {
			if (cp)
				setenv("GPMDB_CRASH_AT", cp, 1);
			execl(self, self, "child", from, path, (char *)NULL);
			_exit(9);
		}
		if (!cp) {
			struct timespec ts = {ms / 1000,
					      (long)(ms % 1000) * 1000000L};
			nanosleep(&ts, NULL);
			kill(pid, SIGKILL);
		}
		waitpid(pid, &st, 0);
		CHECKF(!WIFEXITED(st) || WEXITSTATUS(st) == 0,
		       "kill %d: the child exited with %d", k, WEXITSTATUS(st));
		if (cp)
			points += WIFSIGNALED(st);
		if (gpmdb_open_v2(path, &db, GPMDB_OPEN_READWRITE, NULL)) {
			CHECKF(0, "kill %d: cannot reopen", k);
			return;
		}
		scalar(db, "SELECT count(*) FROM t", c);
		now = atoll(c);
		scalar(db, "PRAGMA integrity_check", ok);
		scalar(db, "SELECT coalesce(sum(v) - 3 * sum(id), 0) FROM t",
		       s);
		CHECKF((now == before || now == before + M) &&
			   !strcmp(ok, "ok") && !strcmp(s, "0"),
		       "kill %d (%s, %d ms): %lld rows, %lld before; "
		       "integrity %s; sum(v) - 3 sum(id) %s",
		       k, cp ? cp : "timed", ms, (long long)now,
		       (long long)before, ok, s);
		nb += now == before;
		na += now != before;
		gpmdb_close(db);
	}
	printf("# %d kills: %d before-images, %d after-images; %d children "
	       "killed at grow.extend / grow.remap\n",
	       kills, nb, na, points);
	/* the crash points are reached: every batch grows the pool */
	CHECKF(points * 2 >= kills / 2,
	       "only %d children reached the "
	       "growth's crash points",
	       points);
	unlink(path);
}

int main(int argc, char **argv)
{
	self = argv[0];
	if (argc > 3 && !strcmp(argv[1], "child")) {
		snprintf(path, sizeof(path), "%s", argv[3]);
		return child(atoll(argv[2]));
	}
	snprintf(path, sizeof(path), "/dev/shm/gpmdb_crash_grow_%d.db",
		 (int)getpid());
	TEST_RUN(test_kills);
	TEST_MAIN_END();
}
