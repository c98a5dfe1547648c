/*
 * crash_encode.c - kill -9 of processes writing encoded tablets
 * (storage/encode.c, docs/ARCHITECTURE.md "Encodings").  Three
 * workloads, each run by a child process (this program run again,
 * "child W POOL") on a fresh copy of a template pool on /dev/shm (pmem
 * mode), killed at a crash point (GPMDB_CRASH_AT, a different point and
 * hit count each time) or after a random delay:
 *   vacuum: VACUUM of t (plain, 20000 rows in five tablets, some deleted;
 *           its column c becomes compressed TEXT);
 *   update: UPDATE of every 7th row of the encoded t (widens the tablets
 *           it writes, then HCL-logs the values);
 *   insert: INSERT of 3000 rows into the encoded t (its last tablet is
 *           widened, new tablets follow).
 * After each kill the pool reopens with t's before- or after-image: the
 * same rows and values (sums and a checksum over every column, the
 * primary key and the index on g answering point queries as a scan
 * does), and PRAGMA integrity_check (gpmdb_check's checks, encoded
 * tablets included) clean.  It reports, per workload, where the kills
 * landed (which crash point, or timed) and how many left each image.
 * GPMDB_CRASH_KILLS sets the kills per workload (default 54).
 */
#include "../harness.h"
#include "../sql_util.h"

#include "gpmdb.h"

#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define ROWS 20000
#define INS  3000

static char tmpl_plain[256], tmpl_enc[256], path[256];
static const char *self;

static int scalar_cb(void *arg, int n, char **v, char **c)
{
	(void)n;
	(void)c;
	snprintf((char *)arg, 256, "%s", v[0] ? v[0] : "NULL");
	return 0;
}

static void scalar(gpmdb *db, const char *sql, char *out)
{
	strcpy(out, "(error)");
	gpmdb_exec(db, sql, scalar_cb, out, NULL);
}

/* The encoding column of storage_info's row for column v. */
static int enc_cb(void *arg, int n, char **v, char **c)
{
	(void)c;
	if (n > 3 && v[1] && !strcmp(v[1], "v"))
		snprintf((char *)arg, 256, "%s", v[3] ? v[3] : "NULL");
	return 0;
}

/* The encoding column of storage_info's row for column c. */
static int encc_cb(void *arg, int n, char **v, char **c)
{
	(void)c;
	if (n > 3 && v[1] && !strcmp(v[1], "c"))
		snprintf((char *)arg, 256, "%s", v[3] ? v[3] : "NULL");
	return 0;
}

/* t's rows: id 0..ROWS-1; g a few values; s a dictionary's worth of
 * strings with NULLs and ''; v wide; d a date; c a comment (compressed). */
static int make_templates(void)
{
	gpmdb *db = NULL;
	char sql[512];

	unlink(tmpl_plain);
	if (gpmdb_open_v2(tmpl_plain, &db,
			  GPMDB_OPEN_READWRITE | GPMDB_OPEN_CREATE, NULL))
		return -1;
	if (gpmdb_exec(db,
		       "CREATE TABLE t(id BIGINT PRIMARY KEY, g INT, s TEXT, "
		       "v BIGINT, d DATE, c TEXT); CREATE INDEX tg ON t(g);"
		       "INSERT INTO t VALUES (0, 0, 'a', 1000000007, DATE "
		       "'2000-01-01', 'note 0 of the final deposits')",
		       NULL, NULL, NULL))
		return -1;
	for (int k = 1; k < ROWS; k *= 2) {
		snprintf(
		    sql, sizeof(sql),
		    "INSERT INTO t SELECT id + %d, (id + %d) %% 13, CASE "
		    "WHEN id %% 5 = 0 THEN NULL WHEN id %% 5 = 1 THEN '' "
		    "ELSE 's' || (id %% 9) END, v * 3 + id, d + id %% 400, "
		    "CASE WHEN id %% 11 = 4 THEN NULL ELSE 'note ' || (id "
		    "+ %d) || ' of the quickly final deposits ' || (id %% "
		    "89) END FROM t WHERE id + %d < %d",
		    k, k, k, k, ROWS);
		if (gpmdb_exec(db, sql, NULL, NULL, NULL))
			return -1;
	}
	if (gpmdb_exec(db, "DELETE FROM t WHERE id % 97 = 3", NULL, NULL, NULL))
		return -1;
	gpmdb_close(db);
	if (su_copy_file(tmpl_plain, tmpl_enc) ||
	    gpmdb_open_v2(tmpl_enc, &db, GPMDB_OPEN_READWRITE, NULL) ||
	    gpmdb_exec(db, "VACUUM", NULL, NULL, NULL))
		return -1;
	/* c compressed in every tablet (the kills land in its encoding
	 * and widening) */
	strcpy(sql, "?");
	gpmdb_exec(db, "PRAGMA storage_info(t)", encc_cb, sql, NULL);
	gpmdb_close(db);
	if (strcmp(sql, "zstd")) {
		printf("# column c of the encoded template: %s\n", sql);
		return -1;
	}
	return 0;
}

/* A fingerprint of t: row count and sums over every column, and the
 * indexes answering as scans do. */
static void image(gpmdb *db, char *out, size_t n)
{
	char c[256], sv[256], ss[256], sd[256], ig[256], sg[256], pk[256],
	    sc[256];

	scalar(db, "SELECT count(*) FROM t", c);
	scalar(db,
	       "SELECT sum(v % 1000003) + 7 * sum(g) + sum(d - DATE "
	       "'2000-01-01') FROM t",
	       sv);
	scalar(db,
	       "SELECT sum(length(s)) * 1000 + count(s) + sum(CASE WHEN s "
	       "LIKE 'u%' THEN 1 ELSE 0 END) * 100000000 FROM t",
	       ss);
	scalar(db, "SELECT sum(id) FROM t", sd);
	/* c: compressed TEXT after VACUUM */
	scalar(db,
	       "SELECT sum(length(c)) * 1000 + count(c) + sum(CASE WHEN c "
	       "LIKE '%!' THEN 1 ELSE 0 END) * 100000000 + sum(CASE WHEN c "
	       "LIKE '%7 of%' THEN 1 ELSE 0 END) * 10000000000 FROM t",
	       sc);
	/* the index on g and the primary key against the rows */
	scalar(db, "SELECT count(*) FROM t WHERE g = 5", ig);
	scalar(db, "SELECT count(*) FROM t WHERE g + 0 = 5", sg);
	scalar(db, "SELECT count(*) FROM t WHERE id = 4097 OR id = 19998", pk);
	snprintf(out, n,
		 "%s rows, v/g/d %s, s %s, c %s, id %s, g=5 %s/%s, pk %s", c,
		 sv, ss, sc, sd, ig, sg, pk);
	if (strcmp(ig, sg))
		strcat(out, " INDEX MISMATCH");
}

static int child(const char *w)
{
	gpmdb *db = NULL;
	const char *sql =
	    !strcmp(w, "vacuum") ? "VACUUM"
	    : !strcmp(w, "update")
		? "UPDATE t SET v = v + 1, s = 'u' || g, c = c || '!' WHERE "
		  "id % 7 = 0"
		: "INSERT INTO t SELECT id + 100000, g, s, v, d, c FROM t "
		  "WHERE id < 3100 ORDER BY id LIMIT 3000";

	if (gpmdb_open_v2(path, &db, GPMDB_OPEN_READWRITE, NULL))
		return 3;
	if (gpmdb_exec(db, sql, NULL, NULL, NULL)) {
		fprintf(stderr, "child %s: %s\n", w, gpmdb_errmsg(db));
		return 4;
	}
	gpmdb_close(db);
	return 0;
}

/* The images before and after a workload, from an uninterrupted run. */
static int reference(const char *w, const char *tmpl, char *before, char *after,
		     size_t n)
{
	gpmdb *db = NULL;
	int st;
	pid_t pid;

	if (su_copy_file(tmpl, path) ||
	    gpmdb_open_v2(path, &db, GPMDB_OPEN_READWRITE, NULL))
		return -1;
	image(db, before, n);
	gpmdb_close(db);
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		execl(self, self, "child", w, path, (char *)NULL);
		_exit(9);
	}
	waitpid(pid, &st, 0);
	if (!WIFEXITED(st) || WEXITSTATUS(st) ||
	    gpmdb_open_v2(path, &db, GPMDB_OPEN_READWRITE, NULL))
		return -1;
	image(db, after, n);
	gpmdb_close(db);
	return 0;
}

typedef struct {
	const char *point;
	int hits, landed;
} landing;

static void workload(const char *w, const char *tmpl, const char *points[],
		     int npoints)
{
	const char *e = getenv("GPMDB_CRASH_KILLS");
	int kills = e ? atoi(e) : 54, nb = 0, na = 0, timed = 0, survived = 0;
	char before[1024], after[1024], now[1024], ok[256], enc[256];
	int nenc = 0, nplain = 0, nmixed = 0;
	landing land[16] = {{0}};
	gpmdb *db = NULL;

	if (reference(w, tmpl, before, after, sizeof(before))) {
		CHECKF(0, "%s: the uninterrupted run failed", w);
		return;
	}
	CHECKF(strcmp(before, after) || !strcmp(w, "vacuum"),
	       "%s: the workload changes nothing", w);
	for (int k = 0; k < npoints && k < 16; k++)
		land[k].point = points[k];
	for (int k = 0; k < kills; k++) {
		/* two of three kills at a point (hit 1..3), one timed */
		int pi = k % 3 == 2 ? -1 : (k / 3 * 2 + k % 3) % npoints;
		int hit = (k / (3 * npoints)) % 3 == 2 ? 2 : 1, ms = rand() % 8,
		    st;
		char cp[128];
		pid_t pid;

		if (su_copy_file(tmpl, path)) {
			CHECKF(0, "%s kill %d: cannot copy the template", w, k);
			return;
		}
		if (pi >= 0)
			snprintf(cp, sizeof(cp), "%s:%d", points[pi], hit);
		fflush(stdout);
		pid = fork();
		if (pid == 0) {
			if (pi >= 0)
				setenv("GPMDB_CRASH_AT", cp, 1);
			execl(self, self, "child", w, path, (char *)NULL);
			_exit(9);
		}
		if (pi < 0) {
			struct timespec ts = {0, (long)ms * 1000000L};

			nanosleep(&ts, NULL);
			kill(pid, SIGKILL);
		}
		waitpid(pid, &st, 0);
		CHECKF(!WIFEXITED(st) || WEXITSTATUS(st) == 0,
		       "%s kill %d: the child exited with %d", w, k,
		       WEXITSTATUS(st));
		if (WIFSIGNALED(st)) {
			if (pi >= 0) {
				land[pi].landed++;
			} else {
				timed++;
			}
		} else {
			survived++;
		}
		if (pi >= 0)
			land[pi].hits++;
		if (gpmdb_open_v2(path, &db, GPMDB_OPEN_READWRITE, NULL)) {
			CHECKF(0, "%s kill %d: cannot reopen", w, k);
			return;
		}
		image(db, now, sizeof(now));
		/* v's encodings: all tablets encoded, none, or some */
		strcpy(enc, "?");
		gpmdb_exec(db, "PRAGMA storage_info(t)", enc_cb, enc, NULL);
		nenc += !strncmp(enc, "for", 3) && !strstr(enc, "plain");
		nplain += !strcmp(enc, "plain");
		nmixed += strstr(enc, "plain") && strcmp(enc, "plain");
		scalar(db, "PRAGMA integrity_check", ok);
		CHECKF((!strcmp(now, before) || !strcmp(now, after)) &&
			   !strcmp(ok, "ok"),
		       "%s kill %d (%s): %s\n  before %s\n  after  %s\n  "
		       "integrity %s",
		       w, k, pi >= 0 ? cp : "timed", now, before, after, ok);
		nb += !strcmp(now, before);
		na += strcmp(now, before) != 0;
		gpmdb_close(db);
	}
	printf("# %s: %d kills: %d before-images, %d after-images (%d timed "
	       "kills, %d children finished first); column v encoded in "
	       "every tablet %d times, in none %d, in some %d\n",
	       w, kills, nb, na, timed, survived, nenc, nplain, nmixed);
	for (int k = 0; k < npoints; k++) {
		printf("#   %-16s %d of %d children killed there\n",
		       land[k].point, land[k].landed, land[k].hits);
		CHECKF(land[k].landed > 0, "%s: no kill landed at %s", w,
		       land[k].point);
	}
}

static void test_vacuum(void)
{
	const char *pts[] = {"encode.write",   "encode.tablet", "alloc.extent",
			     "mlog.persisted", "commit.record", "commit.free"};

	workload("vacuum", tmpl_plain, pts, 6);
}

static void test_update(void)
{
	const char *pts[] = {"widen.tablet", "alloc.extent", "hcl.entry",
			     "hcl.tail",     "update.data",  "commit.record"};

	workload("update", tmpl_enc, pts, 6);
}

static void test_insert(void)
{
	const char *pts[] = {"widen.tablet", "alloc.extent", "append.data",
			     "append.count", "commit.free",  "commit.record"};

	workload("insert", tmpl_enc, pts, 6);
}

int main(int argc, char **argv)
{
	int rc;

	self = argv[0];
	if (argc > 3 && !strcmp(argv[1], "child")) {
		snprintf(path, sizeof(path), "%s", argv[3]);
		return child(argv[2]);
	}
	srand(17);
	snprintf(path, sizeof(path), "/dev/shm/gpmdb_crash_enc_%d.db",
		 (int)getpid());
	snprintf(tmpl_plain, sizeof(tmpl_plain),
		 "/dev/shm/gpmdb_crash_enc_%d.plain", (int)getpid());
	snprintf(tmpl_enc, sizeof(tmpl_enc), "/dev/shm/gpmdb_crash_enc_%d.enc",
		 (int)getpid());
	if (make_templates()) {
		printf("not ok - templates\n# passed 0 failed 1\n");
		rc = 1;
	} else {
		TEST_RUN(test_vacuum);
		TEST_RUN(test_update);
		TEST_RUN(test_insert);
		rc = -1;
	}
	unlink(path);
	unlink(tmpl_plain);
	unlink(tmpl_enc);
	if (rc >= 0)
		return rc;
	TEST_MAIN_END();
}
