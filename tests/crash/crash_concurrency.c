/*
 * crash_concurrency.c - the invariant under concurrency: a writer process
 * moves amounts between the rows of a table (the total never changes) in
 * many transactions, while reader processes check the total again and
 * again: a read-only open, a read-write connection reading in autocommit
 * and a read-write connection reading twice inside BEGIN ... COMMIT (both
 * reads must agree).  Not one read may see another total; the second
 * reader is killed with SIGKILL 50 times and started again.  Then the
 * writer is killed with SIGKILL at random moments (while the readers keep
 * reading) and restarted: still no reader sees a wrong total, and the
 * pool passes its integrity check.  Both durability modes: msync (a file
 * in /tmp) and pmem (/dev/shm).  GPMDB_CONC_SEED overrides the seed.
 * pmem mode: the writers go beside the readers through the log (storage/
 * wal.c "Beside readers"; each reports PRAGMA beside_readers), every third
 * killed writer and the last one write in place (gpu_persist = kernel),
 * so that the two kinds follow each other; test_beside_crash_points
 * kills writers beside a snapshot at named crash points.
 *
 * The writer's transactions: two rows (a transfer), every row (half up,
 * half down) and a new row with 0 (appends, the pool grows); msync mode's
 * thresholds are small (GPMDB_TEST_WAL_*) so that checkpoints and the
 * big-commit path run beside the readers.
 *
 * tests/gpu/crash_gpu_concurrency.c builds this file with CONC_GPU: the
 * writer and the autocommit reader on backend = gpu (GPU write kernels,
 * HCL, the GPU column cache caught up after others' commits), pmem mode
 * only (the GPU writes a mapping in place; msync pools take the CPU
 * path), and the writer checks that its batches ran on the GPU (beside
 * readers: the GPU computes and the host writes, CAP; in place: the
 * kernels write).
 */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "sql_util.h"

#include "../../storage/storage.h" /* stg_test_after_recover */
#include "gpmdb.h"

#define ROWS  200
#define TOTAL (ROWS * 1000)
#define NREAD 3
#define KILLS 50 /* of the writer, at random moments */

static char path[300];
static uint64_t g_seed = 20261126;

typedef struct {
	long checks, bad, errors;
	long long last_bad;
	int bad_phase; /* g_phase at the last wrong total */
	/* then: the reader's PRAGMA beside_readers (times it mapped the
	 * pool privately) and a read made again at once */
	long long bad_beside, bad_again;
	char last_err[200];
} reader_stats;

#ifdef CONC_GPU
static const bool g_gpu = true;
#else
static const bool g_gpu = false;
#endif

static reader_stats *g_stats; /* shared with the readers */
static volatile int *g_stop;
/* run_mode's phase (1: readers killed, 2: writers killed, 3: the last
 * writers), so that a wrong total says when it was read */
static volatile int *g_phase;
/* Each writer's transaction in flight (1-based; slot g_slot: phase 2's
 * k, then KILLS for phase 1, KILLS + 1 and + 2 for phase 3), so that a
 * failure names the killed writers' transactions. */
static volatile long *g_prog;
static int g_slot;

static void set_path(int mode)
{
	char side[340];

	snprintf(path, sizeof(path), "%s/gpmdb_conc_inv_%d.db",
		 mode ? "/tmp" : "/dev/shm", (int)getpid());
	unlink(path);
	snprintf(side, sizeof(side), "%s-wal", path);
	unlink(side);
	snprintf(side, sizeof(side), "%s-shm", path);
	unlink(side);
}

static gpmdb *open_db(int mode, bool ro)
{
	gpmdb *db = NULL;
	gpmdb_options o = {.durability = mode ? "msync" : "pmem"};

	if (gpmdb_open_v2(path, &db,
			  ro ? GPMDB_OPEN_READONLY
			     : GPMDB_OPEN_READWRITE | GPMDB_OPEN_CREATE,
			  ro ? NULL : &o)) {
		fprintf(stderr, "open %s: %s\n", path, gpmdb_errmsg(db));
		gpmdb_close(db);
		return NULL;
	}
	gpmdb_busy_timeout(db, 20000);
	return db;
}

/* Under CONC_GPU: db on the GPU backend (a writer's batches, a reader's
 * scans); false when that fails. */
static bool use_gpu(gpmdb *db)
{
	if (!g_gpu || !gpmdb_exec(db, "PRAGMA backend = gpu", NULL, NULL, NULL))
		return true;
	fprintf(stderr, "backend = gpu: %s\n", gpmdb_errmsg(db));
	return false;
}

/* A row of PRAGMA gpu_write_stats (gpu_batches: the GPU kernels wrote;
 * cap_batches: the GPU computed, the host wrote), or -1. */
static long long gpu_stat(gpmdb *db, const char *name)
{
	gpmdb_stmt *s = NULL;
	long long v = -1;

	if (gpmdb_prepare(db, "PRAGMA gpu_write_stats", -1, &s, NULL))
		return -1;
	while (gpmdb_step(s) == GPMDB_ROW)
		if (!strcmp((const char *)gpmdb_column_text(s, 0), name))
			v = gpmdb_column_int64(s, 1);
	gpmdb_finalize(s);
	return v;
}

/* A one-value query as a number (0 on an error: su_scalar's text). */
static long long scalar(gpmdb *db, const char *sql)
{
	return atoll(su_scalar(db, sql));
}

/* sum(bal), or -1 with the message in st. */
static long long total(gpmdb *db, reader_stats *st)
{
	gpmdb_stmt *s = NULL;
	long long v = -1;

	if (gpmdb_prepare(db, "SELECT sum(bal), count(*) FROM acct", -1, &s,
			  NULL) == GPMDB_OK &&
	    gpmdb_step(s) == GPMDB_ROW)
		v = gpmdb_column_int64(s, 0);
	else
		snprintf(st->last_err, sizeof(st->last_err), "%s",
			 gpmdb_errmsg(db));
	gpmdb_finalize(s);
	return v;
}

static void note(reader_stats *st, long long v)
{
	st->checks++;
	if (v < 0) {
		st->errors++;
	} else if (v != TOTAL) {
		st->bad++;
		st->last_bad = v;
		st->bad_phase = *g_phase;
	}
}

/* Every row as id:bal (bal 1000 left out) on stderr, tagged: a reader's
 * first wrong total is dumped with the state it read (inside its read
 * transaction) and the next state, so that the rows it saw wrong show. */
static void dump_rows(gpmdb *db, int kind, const char *tag)
{
	gpmdb_stmt *s = NULL;
	char line[8192];
	size_t n = 0;

	n += (size_t)snprintf(line, sizeof(line),
			      "# reader %d %s (phase %d, beside_readers "
			      "%lld):",
			      kind, tag, *g_phase,
			      scalar(db, "PRAGMA beside_readers"));
	if (gpmdb_prepare(db,
			  "SELECT id, bal FROM acct WHERE bal <> 1000 OR id > "
			  "200 ORDER BY id",
			  -1, &s, NULL) == GPMDB_OK)
		while (gpmdb_step(s) == GPMDB_ROW && n + 32 < sizeof(line))
			n += (size_t)snprintf(
			    line + n, sizeof(line) - n, " %lld:%lld",
			    (long long)gpmdb_column_int64(s, 0),
			    (long long)gpmdb_column_int64(s, 1));
	else
		snprintf(line + n, sizeof(line) - n, " %s", gpmdb_errmsg(db));
	gpmdb_finalize(s);
	fprintf(stderr, "%s\n", line);
}

/* Reader kind 0: read-only open; 1: read-write, autocommit; 2:
 * read-write, two reads in BEGIN ... COMMIT. */
static int reader_main(int mode, int kind, reader_stats *st)
{
	gpmdb *db = open_db(mode, kind == 0);

	if (!db)
		return 2;
	if (kind == 1 && !use_gpu(db)) {
		gpmdb_close(db);
		return 2;
	}
	while (!*g_stop) {
		long bad0 = st->bad;

		if (kind < 2) {
			note(st, total(db, st));
		} else {
			long long a, b;
			if (gpmdb_exec(db, "BEGIN", NULL, NULL, NULL)) {
				st->errors++;
				continue;
			}
			a = total(db, st);
			b = total(db, st);
			note(st, a);
			note(st, b);
			if (a != b && a >= 0 && b >= 0) {
				st->bad++;
				st->last_bad = b;
				st->bad_phase = *g_phase;
			}
			/* the first wrong total: what it read, in the same
			 * read transaction */
			bool dump = st->bad != bad0 && bad0 == 0;
			if (dump)
				dump_rows(db, kind, "wrong");
			if (gpmdb_exec(db, "COMMIT", NULL, NULL, NULL))
				st->errors++;
			if (dump)
				dump_rows(db, kind, "next");
		}
		if (st->bad != bad0) {
			st->bad_beside = scalar(db, "PRAGMA beside_readers");
			st->bad_again = total(db, st);
		}
	}
	gpmdb_close(db);
	return 0;
}

static uint64_t mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/* Transaction i of the writer of seed: one of all rows (+1 even, -1
 * odd), a new row, or a transfer of d between two rows; the total stays. */
static int txn_decode(uint64_t seed, long i, int *a, int *b, int *d)
{
	uint64_t r = mix(seed + (uint64_t)i);

	*a = (int)(r % ROWS) + 1;
	*b = (int)((r >> 20) % ROWS) + 1;
	*d = (int)((r >> 40) % 50) + 1;
	return (int)(r >> 60);
}

static void writer_txn(uint64_t seed, long i, char *sql, size_t len)
{
	int a, b, d;

	switch (txn_decode(seed, i, &a, &b, &d)) {
	case 0:
		snprintf(sql, len,
			 "BEGIN; UPDATE acct SET bal = bal + 1 WHERE id %% 2 = "
			 "0 AND id <= %d; UPDATE acct SET bal = bal - 1 WHERE "
			 "id %% 2 = 1 AND id <= %d; COMMIT",
			 ROWS, ROWS);
		break;
	case 1:
		snprintf(sql, len,
			 "INSERT INTO acct SELECT max(id) + 1, 0 FROM acct");
		break;
	default:
		snprintf(sql, len,
			 "BEGIN; UPDATE acct SET bal = bal - %d WHERE id = %d; "
			 "UPDATE acct SET bal = bal + %d WHERE id = %d; COMMIT",
			 d, a, d, b);
	}
}

/* Phase 2's writer k (run_mode). */
static uint64_t phase2_seed(int k)
{
	return g_seed + 1000003u * (uint64_t)k;
}

/* The writer: n transactions (n < 0: until killed).  in_place (pmem
 * mode): PRAGMA gpu_persist = kernel, so that it writes in place and
 * readers wait for it; else, readers reading, it writes beside them
 * through the log (storage/wal.c "Beside readers"). */
static int writer_main(int mode, long n, uint64_t seed, bool in_place)
{
	gpmdb *db = open_db(mode, false);
	char sql[512];
	long i;

	if (!db)
		return 2;
	if (!use_gpu(db) ||
	    (in_place &&
	     gpmdb_exec(db, "PRAGMA gpu_persist = kernel", NULL, NULL, NULL))) {
		gpmdb_close(db);
		return 2;
	}
	/* (its open may have gone private to apply others' frames) */
	long long bs0 = scalar(db, "PRAGMA beside_readers");
	for (i = 0; n < 0 || i < n; i++) {
		g_prog[g_slot] = i + 1;
		writer_txn(seed, i, sql, sizeof(sql));
		if (gpmdb_exec(db, sql, NULL, NULL, NULL)) {
			fprintf(stderr, "writer: %s: %s\n", sql,
				gpmdb_errmsg(db));
			gpmdb_exec(db, "ROLLBACK", NULL, NULL, NULL);
			gpmdb_close(db);
			return 3;
		}
	}
	/* a pmem writer beside readers that read all along went beside
	 * them; one asked to write in place never did */
	long long bs = scalar(db, "PRAGMA beside_readers");
	printf("# writer (%s%s): %ld transactions, %lld beside readers\n",
	       mode ? "msync" : "pmem", in_place ? ", in place" : "", i, bs);
	if (mode == 0 && (in_place ? bs != bs0 : bs <= 0)) {
		fprintf(stderr, "writer: beside_readers %lld\n", bs);
		gpmdb_close(db);
		return 6;
	}
	/* a GPU writer that ran to its end: its UPDATEs were GPU batches
	 * (the kernels wrote in place, or beside readers the GPU computed
	 * and the host wrote: CAP) */
	if (g_gpu) {
		long long b = gpu_stat(db, "gpu_batches"),
			  c = gpu_stat(db, "cap_batches");
		printf("# writer: %lld GPU batches, %lld CAP batches\n", b, c);
		if (b + c <= 0 || (in_place && b <= 0)) {
			fprintf(stderr, "writer: no GPU batch ran\n");
			gpmdb_close(db);
			return 5;
		}
	}
	fflush(stdout); /* the child leaves by _exit */
	return gpmdb_close(db) ? 4 : 0;
}

static pid_t spawn_writer(int mode, long n, uint64_t seed, bool in_place)
{
	pid_t pid = fork();

	if (pid == 0)
		_exit(writer_main(mode, n, seed, in_place));
	return pid;
}

/* PRAGMA integrity_check in a child (the parent runs no SQL, above):
 * after each phase, so that a problem names the phase that made it. */
static void check_between(int mode, const char *after)
{
	int st = 0;
	pid_t pid = fork();

	if (pid == 0) {
		gpmdb *db = open_db(mode, false);
		gpmdb_stmt *s = NULL;
		const char *ic = NULL;

		if (db &&
		    gpmdb_prepare(db, "PRAGMA integrity_check", -1, &s, NULL) ==
			GPMDB_OK &&
		    gpmdb_step(s) == GPMDB_ROW)
			ic = (const char *)gpmdb_column_text(s, 0);
		if (!ic || strcmp(ic, "ok"))
			fprintf(stderr, "integrity_check after %s: %s\n", after,
				ic ? ic : gpmdb_errmsg(db));
		_exit(ic && !strcmp(ic, "ok") ? 0 : 1);
	}
	CHECKF(pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) &&
		   WEXITSTATUS(st) == 0,
	       "%s: integrity_check after %s failed", mode ? "msync" : "pmem",
	       after);
}

/* The transaction each killed writer of phase 2 was in: a wrong total
 * off by d points at the transfers of d among them. */
static void describe_kills(int mode)
{
	char sql[512];

	for (int k = 0; k < KILLS; k++) {
		long i = g_prog[k] - 1;

		if (i < 0)
			continue;
		writer_txn(phase2_seed(k), i, sql, sizeof(sql));
		printf("# killed writer %d%s in transaction %ld: %s\n", k,
		       mode == 0 && k % 3 == 2 ? " (in place)" : "", i, sql);
	}
}

/* Transactions [0, n) of the writer of seed applied to bal. */
static void replay(long long *bal, uint64_t seed, long n)
{
	for (long i = 0; i < n; i++) {
		int a, b, d;

		switch (txn_decode(seed, i, &a, &b, &d)) {
		case 0:
			for (int r = 1; r <= ROWS; r++)
				bal[r] += r % 2 == 0 ? 1 : -1;
			break;
		case 1:
			break; /* a new row of 0 */
		default:
			bal[a] -= d;
			bal[b] += d;
		}
	}
}

/* The rows as the writers' committed transactions left them (each killed
 * writer's transaction in flight taken as not committed) against the
 * table: those that differ, so that a wrong total names its rows. */
static void replay_diff(gpmdb *db)
{
	static long long bal[ROWS + 1];
	gpmdb_stmt *s = NULL;

	for (int r = 1; r <= ROWS; r++)
		bal[r] = 1000;
	replay(bal, g_seed, 400);
	for (int k = 0; k < KILLS; k++)
		if (g_prog[k] > 0)
			replay(bal, phase2_seed(k), g_prog[k] - 1);
	replay(bal, g_seed + 77, 50);
	replay(bal, g_seed + 78, 50);
	if (gpmdb_prepare(db, "SELECT id, bal FROM acct WHERE id <= 200", -1,
			  &s, NULL) != GPMDB_OK)
		return;
	while (gpmdb_step(s) == GPMDB_ROW) {
		long long id = gpmdb_column_int64(s, 0),
			  v = gpmdb_column_int64(s, 1);
		if (id >= 1 && id <= ROWS && v != bal[id])
			printf("# row %lld: %lld, replayed %lld (%+lld)\n", id,
			       v, bal[id], v - bal[id]);
	}
	gpmdb_finalize(s);
}

static void run_mode(int mode)
{
	pid_t readers[NREAD], w;
	gpmdb *db;
	int st = 0;
	char sql[128];
	long checks = 0;

	set_path(mode);
	/* the parent runs no SQL before it forks: OpenMP's threads do not
	 * survive a fork, a child would hang in its first parallel loop */
	w = fork();
	if (w == 0) {
		int bad = 0;

		db = open_db(mode, false);
		if (!db)
			_exit(2);
		bad |= gpmdb_exec(db,
				  "CREATE TABLE acct(id INTEGER PRIMARY KEY, "
				  "bal INT)",
				  NULL, NULL, NULL);
		bad |= gpmdb_exec(db, "BEGIN", NULL, NULL, NULL);
		for (int i = 1; i <= ROWS; i++) {
			snprintf(sql, sizeof(sql),
				 "INSERT INTO acct VALUES (%d, 1000)", i);
			bad |= gpmdb_exec(db, sql, NULL, NULL, NULL);
		}
		bad |= gpmdb_exec(db, "COMMIT", NULL, NULL, NULL);
		bad |= gpmdb_close(db);
		_exit(bad ? 3 : 0);
	}
	CHECK(waitpid(w, &st, 0) == w && WIFEXITED(st) && WEXITSTATUS(st) == 0);

	memset(g_stats, 0, sizeof(*g_stats) * NREAD);
	memset((void *)g_prog, 0, sizeof(long) * (KILLS + 3));
	*g_stop = 0;
	for (int k = 0; k < NREAD; k++) {
		readers[k] = fork();
		if (readers[k] == 0)
			_exit(reader_main(mode, k, &g_stats[k]));
	}
	*g_phase = 1;
	/* phase 1: transactions to the end; meanwhile the autocommit
	 * reader is killed at random moments and started again (a dead
	 * reader's lock goes with it) */
	g_slot = KILLS;
	w = spawn_writer(mode, 400, g_seed, false);
	for (int k = 0; k < KILLS; k++) {
		struct timespec ts = {
		    0, (long)(mix(g_seed ^ (uint64_t)(k + 99)) % 16 + 2) *
			   1000000};

		nanosleep(&ts, NULL);
		kill(readers[1], SIGKILL);
		CHECK(waitpid(readers[1], &st, 0) == readers[1]);
		readers[1] = fork();
		if (readers[1] == 0)
			_exit(reader_main(mode, 1, &g_stats[1]));
	}
	CHECK(waitpid(w, &st, 0) == w);
	CHECKF(WIFEXITED(st) && WEXITSTATUS(st) == 0,
	       "%s: writer ended with status %d", mode ? "msync" : "pmem", st);
	check_between(mode, "phase 1 (readers killed beside a writer)");
	*g_phase = 2;
	/* phase 2: the writer killed at random moments, then again */
	for (int k = 0; k < KILLS; k++) {
		/* a GPU writer first creates its CUDA context (0.3-0.5 s):
		 * its kills land after that, among its batches */
		long ms =
		    (long)(mix(g_seed ^ (uint64_t)k) % (g_gpu ? 800 : 120)) +
		    (g_gpu ? 500 : 5);
		struct timespec ts = {ms / 1000, ms % 1000 * 1000000};

		/* pmem: every third writer in place, so that in-place writers
		 * and writers beside readers follow each other, killed */
		g_slot = k;
		w = spawn_writer(mode, -1, phase2_seed(k),
				 mode == 0 && k % 3 == 2);
		nanosleep(&ts, NULL);
		kill(w, SIGKILL);
		CHECK(waitpid(w, &st, 0) == w);
		/* still writing when killed (not ended by an error) */
		CHECKF(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL,
		       "%s: writer %d ended with status %d before its kill",
		       mode ? "msync" : "pmem", k, st);
	}
	check_between(mode, "phase 2 (writers killed)");
	*g_phase = 3;
	g_slot = KILLS + 1;
	w = spawn_writer(mode, 50, g_seed + 77, false);
	CHECK(waitpid(w, &st, 0) == w);
	CHECKF(WIFEXITED(st) && WEXITSTATUS(st) == 0,
	       "%s: writer after kills ended with status %d",
	       mode ? "msync" : "pmem", st);
	g_slot = KILLS + 2;
	w = spawn_writer(mode, 50, g_seed + 78, mode == 0);
	CHECK(waitpid(w, &st, 0) == w);
	CHECKF(WIFEXITED(st) && WEXITSTATUS(st) == 0,
	       "%s: writer after kills ended with status %d",
	       mode ? "msync" : "pmem", st);
	*g_stop = 1;
	for (int k = 0; k < NREAD; k++) {
		CHECK(waitpid(readers[k], &st, 0) == readers[k]);
		CHECKF(WIFEXITED(st) && WEXITSTATUS(st) == 0,
		       "reader %d ended with status %d", k, st);
		CHECKF(g_stats[k].bad == 0,
		       "%s reader %d: %ld of %ld reads saw a wrong total "
		       "(last %lld, in phase %d; then beside_readers %lld, "
		       "read again %lld)",
		       mode ? "msync" : "pmem", k, g_stats[k].bad,
		       g_stats[k].checks, g_stats[k].last_bad,
		       g_stats[k].bad_phase, g_stats[k].bad_beside,
		       g_stats[k].bad_again);
		CHECKF(g_stats[k].errors == 0,
		       "%s reader %d: %ld errors (last: %s)",
		       mode ? "msync" : "pmem", k, g_stats[k].errors,
		       g_stats[k].last_err);
		checks += g_stats[k].checks;
		printf("# %s reader %d: %ld reads, %ld wrong, %ld errors\n",
		       mode ? "msync" : "pmem", k, g_stats[k].checks,
		       g_stats[k].bad, g_stats[k].errors);
	}
	CHECKF(checks >= 1000, "only %ld reads", checks);
	check_between(mode, "the last writers");
	db = open_db(mode, false);
	CHECK(db != NULL);
	if (db) {
		reader_stats one = {0};
		long long t = total(db, &one);
		bool bad = t != TOTAL;
		for (int k = 0; k < NREAD; k++)
			bad |= g_stats[k].bad != 0;
		CHECKF(t == TOTAL, "%s: final total %lld",
		       mode ? "msync" : "pmem", t);
		if (bad) {
			describe_kills(mode);
			replay_diff(db);
		} else if (getenv("CONC_REPLAY")) {
			replay_diff(db); /* (the killed writers' last ones) */
		}
		CHECK(gpmdb_close(db) == GPMDB_OK);
	}
	set_path(mode);
}

/* ---- pmem mode beside readers, killed at named crash points ----------
 *
 * A reader holds a snapshot (BEGIN, a read) while writer processes commit
 * transfers beside it through the log (storage/wal.c "Beside readers");
 * each is killed at a named crash point: while writing a frame, after
 * the frame's fdatasync, while a private writer whose readers went quiet
 * puts the frames in place (wal.settle), while a shared writer puts
 * frames that another left into the file (wal.settle_file).  After each
 * kill the reader's snapshot reads what it read before; then the next
 * opener recovers: the integrity check passes, the total holds and the
 * transactions counted are those whose COMMIT returned (plus, for a kill
 * before the commit point, perhaps the one in flight). */

static volatile long *g_done; /* COMMITs that returned, in the writer */

/* Transfers until killed (or n of them): each bumps meta.n. */
static int cp_writer(long n, const char *crash_at, int go_fd, int wait_fd)
{
	gpmdb *db = open_db(0, false);
	char sql[300], c;

	if (!db)
		return 2;
	/* wal.settle_file: a writer asked to write in place cannot map the
	 * pool privately; the frames others left go into the file first */
	if (crash_at && !strncmp(crash_at, "wal.settle_file", 15) &&
	    gpmdb_exec(db, "PRAGMA gpu_persist = kernel", NULL, NULL, NULL))
		return 2;
	if (go_fd >= 0 && write(go_fd, "o", 1) != 1)
		return 2;
	if (wait_fd >= 0 && read(wait_fd, &c, 1) != 1)
		return 2;
	if (crash_at)
		setenv("GPMDB_CRASH_AT", crash_at, 1);
	for (long i = 0; n < 0 || i < n; i++) {
		uint64_t r = mix(g_seed + 7 * (uint64_t)i);
		int a = (int)(r % ROWS) + 1, b = (int)((r >> 20) % ROWS) + 1;

		snprintf(sql, sizeof(sql),
			 "BEGIN; UPDATE acct SET bal = bal - 3 WHERE id = %d; "
			 "UPDATE acct SET bal = bal + 3 WHERE id = %d; UPDATE "
			 "meta SET n = n + 1; COMMIT",
			 a, b);
		if (gpmdb_exec(db, sql, NULL, NULL, NULL)) {
			fprintf(stderr, "cp writer: %s\n", gpmdb_errmsg(db));
			return 3;
		}
		(*g_done)++;
	}
	return gpmdb_close(db) ? 4 : 0;
}

static pid_t cp_spawn(long n, const char *crash_at, int go_fd, int wait_fd)
{
	pid_t pid = fork();

	if (pid == 0)
		_exit(cp_writer(n, crash_at, go_fd, wait_fd));
	return pid;
}

/* One case: writers beside the snapshot of `rd`, the last one killed at
 * point (settle_file: a process that opened before the frames);
 * in_flight: 1 when the killed transaction must be found committed. */
static void cp_case(const char *point, int in_flight)
{
	gpmdb *rd, *db;
	pid_t w, w2 = -1;
	int st = 0, go[2] = {-1, -1}, hold[2] = {-1, -1};
	long long t0, n0, n;
	bool settle = !strncmp(point, "wal.settle", 10);
	bool sfile = !strncmp(point, "wal.settle_file", 15);
	char c;

	rd = open_db(0, false);
	CHECK(rd != NULL);
	if (!rd)
		return;
	CHECK_RC(gpmdb_exec(rd, "BEGIN", NULL, NULL, NULL), GPMDB_OK);
	t0 = scalar(rd, "SELECT sum(bal) FROM acct");
	n0 = scalar(rd, "SELECT n FROM meta");
	CHECK(t0 == TOTAL);
	*g_done = n0;
	if (sfile) {
		/* opened now (no frame yet), in place only: it puts the
		 * frames into the file later */
		CHECK(pipe(go) == 0 && pipe(hold) == 0);
		w2 = cp_spawn(3, point, go[1], hold[0]);
		CHECK(read(go[0], &c, 1) == 1);
	}
	/* frames beside the snapshot */
	w = cp_spawn(settle ? 20 : -1, settle ? NULL : point, -1, -1);
	CHECK(waitpid(w, &st, 0) == w);
	if (!settle) {
		CHECKF(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL,
		       "%s: writer ended with status %d", point, st);
	} else {
		CHECKF(WIFEXITED(st) && WEXITSTATUS(st) == 0,
		       "%s: writer ended with status %d", point, st);
	}
	/* the snapshot is what it was */
	CHECK(scalar(rd, "SELECT sum(bal) FROM acct") == t0);
	CHECK(scalar(rd, "SELECT n FROM meta") == n0);
	CHECK_RC(gpmdb_exec(rd, "COMMIT", NULL, NULL, NULL), GPMDB_OK);
	if (settle) {
		/* readers quiet for a second (rd stays open, so that the
		 * next opener is not alone and recovers nothing): the next
		 * writer settles */
		struct timespec ts = {1, 200000000};

		nanosleep(&ts, NULL);
		if (sfile) {
			CHECK(write(hold[1], "g", 1) == 1);
			w = w2;
		} else {
			w = cp_spawn(-1, point, -1, -1);
		}
		CHECK(waitpid(w, &st, 0) == w);
		CHECKF(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL,
		       "%s: settling writer ended with status %d", point, st);
	}
	for (int i = 0; i < 2; i++) {
		if (go[i] >= 0)
			close(go[i]);
		if (hold[i] >= 0)
			close(hold[i]);
	}
	gpmdb_close(rd);
	/* recovery by the next opener (alone: the log replayed) */
	db = open_db(0, false);
	CHECK(db != NULL);
	if (!db)
		return;
	CHECK(scalar(db, "SELECT sum(bal) FROM acct") == TOTAL);
	n = scalar(db, "SELECT n FROM meta");
	CHECKF(n == *g_done + in_flight,
	       "%s: %lld transactions after recovery, %ld returned", point, n,
	       (long)*g_done);
	gpmdb_stmt *s = NULL;
	CHECK(gpmdb_prepare(db, "PRAGMA integrity_check", -1, &s, NULL) ==
		  GPMDB_OK &&
	      gpmdb_step(s) == GPMDB_ROW &&
	      strcmp((const char *)gpmdb_column_text(s, 0), "ok") == 0);
	gpmdb_finalize(s);
	CHECK_RC(gpmdb_close(db), GPMDB_OK);
}

/* A new pmem pool with acct (ROWS rows of 1000) and meta(n = 0). */
static bool cp_setup(void)
{
	gpmdb *db;
	char sql[128];

	set_path(0);
	db = open_db(0, false);
	CHECK(db != NULL);
	if (!db)
		return false;
	CHECK_RC(gpmdb_exec(db,
			    "CREATE TABLE acct(id INTEGER PRIMARY KEY, bal "
			    "INT); CREATE TABLE meta(n INT); INSERT INTO meta "
			    "VALUES (0); BEGIN",
			    NULL, NULL, NULL),
		 GPMDB_OK);
	for (int i = 1; i <= ROWS; i++) {
		snprintf(sql, sizeof(sql), "INSERT INTO acct VALUES (%d, 1000)",
			 i);
		CHECK_RC(gpmdb_exec(db, sql, NULL, NULL, NULL), GPMDB_OK);
	}
	CHECK_RC(gpmdb_exec(db, "COMMIT", NULL, NULL, NULL), GPMDB_OK);
	CHECK_RC(gpmdb_close(db), GPMDB_OK);
	return true;
}

static void test_beside_crash_points(void)
{
	static const struct {
		const char *point;
		int in_flight; /* the killed transaction is committed (a
				  kill keeps a frame written before its
				  fdatasync) */
	} cases[] = {
	    {"wal.frame:1", 1},	   {"wal.frame:7", 1},
	    {"wal.commit:1", 1},   {"wal.commit:9", 1},
	    {"wal.settle:1", 0},   {"wal.settle_file:1", 0},
	    {"commit.begin:5", 0},
	};

	if (!cp_setup())
		return;
	for (int round = 0; round < 8; round++)
		for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++)
			cp_case(cases[k].point, cases[k].in_flight);
	set_path(0);
}

/* ---- a private reader after an in-place writer died ------------------
 *
 * pmem mode: a read-write connection that went private (it read beside
 * frames of a writer beside its snapshot) reads again after a writer in
 * place put those frames into the file (a new salt: the reader drops its
 * private pages) and died inside its transaction, its stores in the
 * file.  The reader undoes the dead transaction in its private pages;
 * it must keep reading them, not map the file shared again because the
 * log holds no frame (the dead writer's stores are in the file until
 * the next writer recovers them). */
static int pd_writer(int go_fd, int wait_fd)
{
	gpmdb *db = open_db(0, false);
	char c;

	if (!db ||
	    gpmdb_exec(db, "PRAGMA gpu_persist = kernel", NULL, NULL, NULL) ||
	    gpmdb_exec(db, "BEGIN; UPDATE acct SET bal = bal - 7 WHERE id = 1",
		       NULL, NULL, NULL)) {
		fprintf(stderr, "pd writer: %s\n", gpmdb_errmsg(db));
		return 2;
	}
	/* the transaction stays open: killed here */
	if (write(go_fd, "o", 1) != 1 || read(wait_fd, &c, 1) != 1)
		return 3;
	return 4;
}

/* An in-place writer killed inside its open transaction (pd_writer);
 * quiet: then a second without readers (below). */
static void pd_kill_one(bool quiet)
{
	int st = 0, go[2], hold[2];
	pid_t w;
	char c;

	CHECK(pipe(go) == 0 && pipe(hold) == 0);
	w = fork();
	if (w == 0)
		_exit(pd_writer(go[1], hold[0]));
	CHECK(read(go[0], &c, 1) == 1);
	kill(w, SIGKILL);
	CHECK(waitpid(w, &st, 0) == w && WIFSIGNALED(st));
	for (int i = 0; i < 2; i++) {
		close(go[i]);
		close(hold[i]);
	}
	/* the writer's open read, and a read in the last second sends the
	 * reader's recovery beside readers (private pages): past it, the
	 * reader undoes the next death in place, on the shared mapping */
	struct timespec ts = {1, 100000000};
	if (quiet)
		nanosleep(&ts, NULL);
}

static int g_more_deaths;
static void another_death(void)
{
	if (g_more_deaths > 0) {
		g_more_deaths--;
		pd_kill_one(true);
	}
}

/*
 * A reader of the shared mapping finds a dead writer's transaction, undoes
 * it under the write lock and looks again; meanwhile another writer died in
 * its transaction (stg_test_after_recover kills one in that window).  The
 * reader undoes that one too before it reads: until the twenty-eighth
 * session it read the second writer's stores (crash_concurrency's rare
 * wrong total was looked for there).  Writers that keep dying past the
 * reader's tries give "database is locked", never their stores.
 */
static void test_reader_dead_writers(void)
{
	gpmdb *rd;
	const char *e;

	if (!cp_setup())
		return;
	rd = open_db(0, false);
	CHECK(rd != NULL);
	if (!rd)
		return;
	CHECK(scalar(rd, "SELECT sum(bal) FROM acct") == TOTAL);
	pd_kill_one(true);
	g_more_deaths = 2;
	stg_test_after_recover = another_death;
	long long t = scalar(rd, "SELECT sum(bal) FROM acct");
	CHECKF(t == TOTAL, "read after three dead writers: %lld", t);
	CHECKF(g_more_deaths == 0, "%d deaths left: no recovery ran",
	       g_more_deaths);
	/* more deaths than the reader's tries */
	pd_kill_one(true);
	g_more_deaths = 100;
	e = su_scalar(rd, "SELECT sum(bal) FROM acct");
	CHECKF(strstr(e, "writers keep dying"), "%s", e);
	stg_test_after_recover = NULL;
	g_more_deaths = 0;
	CHECK(scalar(rd, "SELECT sum(bal) FROM acct") == TOTAL);
	CHECK_RC(gpmdb_close(rd), GPMDB_OK);
	set_path(0);
}

static void test_private_reader_dead_writer(void)
{
	gpmdb *rd, *db;
	pid_t w;
	int st = 0;

	if (!cp_setup())
		return;
	for (int round = 0; round < 4; round++) {
		rd = open_db(0, false);
		CHECK(rd != NULL);
		if (!rd)
			return;
		/* frames beside rd's snapshot; rd then reads them privately */
		CHECK_RC(gpmdb_exec(rd, "BEGIN", NULL, NULL, NULL), GPMDB_OK);
		CHECK(scalar(rd, "SELECT sum(bal) FROM acct") == TOTAL);
		w = cp_spawn(3, NULL, -1, -1);
		CHECK(waitpid(w, &st, 0) == w && WIFEXITED(st) &&
		      WEXITSTATUS(st) == 0);
		CHECK_RC(gpmdb_exec(rd, "COMMIT", NULL, NULL, NULL), GPMDB_OK);
		CHECK(scalar(rd, "SELECT sum(bal) FROM acct") == TOTAL);
		CHECK(scalar(rd, "PRAGMA beside_readers") > 0);
		/* prepared now, so that the first read after the death is
		 * the step's own catch-up (a prepare catches up too) */
		gpmdb_stmt *s = NULL;
		CHECK_RC(gpmdb_prepare(rd, "SELECT sum(bal) FROM acct", -1, &s,
				       NULL),
			 GPMDB_OK);
		/* an in-place writer settles the frames, writes, dies */
		pd_kill_one(false);
		CHECK(s && gpmdb_step(s) == GPMDB_ROW);
		CHECKF(s && gpmdb_column_int64(s, 0) == TOTAL,
		       "round %d, prepared read: %lld", round,
		       s ? (long long)gpmdb_column_int64(s, 0) : -1LL);
		gpmdb_finalize(s);
		/* and again, in new statements */
		for (int i = 0; i < 2; i++) {
			long long t = scalar(rd, "SELECT sum(bal) FROM acct");
			CHECKF(t == TOTAL, "round %d, read %d: %lld", round, i,
			       t);
		}
		CHECK_RC(gpmdb_close(rd), GPMDB_OK);
	}
	db = open_db(0, false);
	CHECK(db != NULL);
	if (db) {
		CHECK(scalar(db, "SELECT sum(bal) FROM acct") == TOTAL);
		CHECK_RC(gpmdb_close(db), GPMDB_OK);
	}
	set_path(0);
}

static void test_invariant_msync(void)
{
	run_mode(1);
}

static void test_invariant_pmem(void)
{
	run_mode(0);
}

int main(void)
{
	const char *s = getenv("GPMDB_CONC_SEED");
	void *m;

	if (s && *s)
		g_seed = strtoull(s, NULL, 0);
	printf("# seed %llu\n", (unsigned long long)g_seed);
	fflush(stdout); /* not again from every child */
	/* small msync thresholds: checkpoints and big commits beside the
	 * readers (storage/wal.c) */
	setenv("GPMDB_TEST_WAL_CKPT", "262144", 0);
	setenv("GPMDB_TEST_WAL_BIG", "8192", 0);
	setenv("GPMDB_TEST_WAL_SHARED", "65536", 0);
	m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		 -1, 0);
	if (m == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	g_stop = m;
	g_done = (volatile long *)((char *)m + 8);
	g_phase = (volatile int *)((char *)m + 16);
	g_stats = (reader_stats *)((char *)m + 64);
	g_prog = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (g_prog == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	if (!g_gpu)
		TEST_RUN(test_invariant_msync);
	TEST_RUN(test_invariant_pmem);
	TEST_RUN(test_reader_dead_writers);
	TEST_RUN(test_beside_crash_points);
	TEST_RUN(test_private_reader_dead_writer);
	TEST_MAIN_END();
}
