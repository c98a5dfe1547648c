/*
 * test_insert_crash.c - a columnar append of integer primary keys killed
 * part way (kill -9 at the crash points of the append and of the index
 * build, and at random times): after reopening, the table is its before-
 * or after-image, its unique index agrees with it (every key found once,
 * none of the lost rows found, and the same batch appends again without a
 * UNIQUE error), and PRAGMA integrity_check is clean.  Both shapes of the
 * key check's fast path (index.c): keys that rise above the tree (no
 * records: the entries built from the column, into an empty tree or at
 * its right edge) and keys in random order (radix-sorted pairs).
 *
 * Every step runs in a child: libgomp's threads do not survive fork, so
 * the parent never runs a parallel region.
 */
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "sql_util.h"

enum { BASE = 70000, N = 150000 };

static char path[300];

/* The keys of batch `which`: 0 the base (rising from 0), 1 rising above
 * it, 2 a permutation of [BASE, BASE + N) (random order).  The loop of
 * the random kills deletes the batch's rows and appends them again. */
static int32_t *keys(int which)
{
	int n = which ? N : BASE;
	int32_t *k = malloc(sizeof(int32_t) * (size_t)n);
	uint64_t s = 0x9e3779b97f4a7c15ull;

	for (int i = 0; i < n; i++)
		k[i] = which ? BASE + i : i;
	for (int i = n - 1; which == 2 && i > 0; i--) {
		s ^= s << 13;
		s ^= s >> 7;
		s ^= s << 17;
		int j = (int)(s % (uint64_t)(i + 1));
		int32_t x = k[i];
		k[i] = k[j];
		k[j] = x;
	}
	return k;
}

static int append(gpmdb *db, int which)
{
	int n = which ? N : BASE;
	int32_t *k = keys(which), *v = malloc(sizeof(int32_t) * (size_t)n);
	const char *nm[2] = {"id", "v"};

	for (int i = 0; i < n; i++)
		v[i] = k[i] % 1000;
	gpmdb_column_array c[2] = {{GPMDB_ARRAY_INT32, k, NULL},
				   {GPMDB_ARRAY_INT32, v, NULL}};
	int rc = gpmdb_append_columns(db, "t", 2, nm, c, n);
	free(k);
	free(v);
	return rc;
}

static gpmdb *open_db(void)
{
	gpmdb *db = NULL;
	gpmdb_options o = {0}; /* durable: pmem mode on /dev/shm */

	if (gpmdb_open_v2(path, &db, GPMDB_OPEN_READWRITE | GPMDB_OPEN_CREATE,
			  &o) != GPMDB_OK)
		_exit(10);
	return db;
}

static long long scalar(gpmdb *db, const char *sql)
{
	gpmdb_stmt *st = NULL;
	long long v = -1;

	if (gpmdb_prepare(db, sql, -1, &st, NULL) == GPMDB_OK &&
	    gpmdb_step(st) == GPMDB_ROW)
		v = gpmdb_column_int64(st, 0);
	gpmdb_finalize(st);
	return v;
}

static pid_t spawn(const char *crash, int which, bool loop)
{
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid != 0)
		return pid;
	if (crash)
		setenv("GPMDB_CRASH_AT", crash, 1);
	gpmdb *db = open_db();
	if (append(db, which) != GPMDB_OK)
		_exit(11);
	/* the random kills: it goes on appending and deleting until killed */
	while (loop) {
		if (gpmdb_exec(db, "DELETE FROM t WHERE id >= 70000", NULL,
			       NULL, NULL) != GPMDB_OK ||
		    append(db, which) != GPMDB_OK)
			_exit(12);
	}
	gpmdb_close(db);
	_exit(0);
}

static int wait_for(pid_t pid)
{
	int st = 0;

	if (pid < 0)
		return -1;
	waitpid(pid, &st, 0);
	return st;
}

/* The table, and (with rows) the base rows, in a child. */
static void make_base(bool rows)
{
	pid_t pid;

	unlink(path);
	fflush(NULL);
	if ((pid = fork()) == 0) {
		gpmdb *db = open_db();
		if (gpmdb_exec(db, "CREATE TABLE t(id INT PRIMARY KEY, v INT)",
			       NULL, NULL, NULL) != GPMDB_OK ||
		    (rows && append(db, 0) != GPMDB_OK))
			_exit(11);
		gpmdb_close(db);
		_exit(0);
	}
	int st = wait_for(pid);
	CHECKF(WIFEXITED(st) && WEXITSTATUS(st) == 0, "base: status %x", st);
}

/*
 * The check, in a child: the table holds the rows before batch `which`
 * or after it, the batch's keys (every 7919th) are found once or not at
 * all accordingly and the rows before it once, the index and table pass
 * integrity_check, and the batch appends again where it was lost (a
 * stale index entry would fail it).  Exit codes name the fault.
 */
static void check_child(int which)
{
	gpmdb *db = open_db();
	long long lo = which ? BASE : 0, hi = which ? BASE + N : BASE;
	long long n = scalar(db, "SELECT count(*) FROM t");
	bool after = n == hi;
	char q[200];

	if (n != lo && !after)
		_exit(20);
	for (long long k = 0; k < hi; k += 7919) {
		snprintf(q, sizeof(q), "SELECT count(*) FROM t WHERE id = %lld",
			 k);
		if (scalar(db, q) != (k < lo || after ? 1 : 0))
			_exit(22);
	}
	const char *ic = su_scalar(db, "PRAGMA integrity_check");
	if (strcmp(ic, "ok")) {
		fprintf(stderr, "integrity_check: %s\n", ic);
		_exit(23);
	}
	if (!after && append(db, which) != GPMDB_OK) {
		fprintf(stderr, "append again: %s\n", gpmdb_errmsg(db));
		_exit(24);
	}
	if (scalar(db, "SELECT count(*) FROM t") != hi ||
	    scalar(db, "SELECT sum(id) FROM t") != hi * (hi - 1) / 2)
		_exit(25);
	gpmdb_close(db);
	_exit(0);
}

static void check(int which, const char *what)
{
	pid_t pid;

	fflush(NULL);
	if ((pid = fork()) == 0)
		check_child(which);
	int st = wait_for(pid);
	CHECKF(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s: check status %x",
	       what, st);
}

static void crash_points(int which)
{
	static const char *const pts[] = {"append.data:1",  "append.count:1",
					  "index.build:1",  "index.append:1",
					  "commit.begin:1", "commit.record:1"};

	for (size_t i = 0; i < sizeof(pts) / sizeof(pts[0]); i++) {
		make_base(which != 0);
		int st = wait_for(spawn(pts[i], which, false));
		/* a point the path does not pass: it completed */
		CHECKF((WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL) ||
			   (WIFEXITED(st) && WEXITSTATUS(st) == 0),
		       "%s: child status %x", pts[i], st);
		printf("# batch %d, %s: %s\n", which, pts[i],
		       WIFSIGNALED(st) ? "killed there" : "not reached");
		check(which, pts[i]);
	}
}

static void random_kills(int which, int kills)
{
	struct timespec ts;

	srand(12345u + (unsigned)which);
	for (int i = 0; i < kills; i++) {
		make_base(true);
		pid_t pid = spawn(NULL, which, true);
		long us = 20000 + rand() % 400000;
		ts.tv_sec = us / 1000000;
		ts.tv_nsec = (us % 1000000) * 1000;
		nanosleep(&ts, NULL);
		kill(pid, SIGKILL);
		int st = wait_for(pid);
		CHECKF(WIFSIGNALED(st) || (WIFEXITED(st) && !WEXITSTATUS(st)),
		       "kill %d after %ld us: status %x", i, us, st);
		char what[80];
		snprintf(what, sizeof(what), "kill %d after %ld us", i, us);
		check(which, what);
	}
}

/* into an empty tree: its entries built from the column */
static void test_empty_crash_points(void)
{
	crash_points(0);
}

/* above the tree: at its right edge */
static void test_rising_crash_points(void)
{
	crash_points(1);
}

static void test_random_order_crash_points(void)
{
	crash_points(2);
}

static void test_rising_kills(void)
{
	random_kills(1, 12);
}

static void test_random_order_kills(void)
{
	random_kills(2, 12);
}

int main(void)
{
	const char *base = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";

	/* /dev/shm: the pool in pmem mode, as the benchmark's */
	if (access("/dev/shm", W_OK) == 0)
		base = "/dev/shm";
	snprintf(path, sizeof(path), "%s/test_insert_crash.%d.db", base,
		 (int)getpid());
	TEST_RUN(test_empty_crash_points);
	TEST_RUN(test_rising_crash_points);
	TEST_RUN(test_random_order_crash_points);
	TEST_RUN(test_rising_kills);
	TEST_RUN(test_random_order_kills);
	unlink(path);
	TEST_MAIN_END();
}
