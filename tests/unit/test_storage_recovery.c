/*
 * test_storage_recovery.c - a writer dies (in a forked child) with a
 * transaction open or at a crash point; reopening must give the last
 * committed state, pass stg_check, and do so again when recovery itself
 * is interrupted.  A reader of a pool that needs recovery sees the
 * committed state without changing the file.
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "test_storage_util.h"

static const char *g_path;

/* Base state: table t (tid 1) with 3000 committed rows, table u (tid 2)
 * with 10, an index on t. */
static void make_base(const char *path)
{
	stg_pool *p = tu_open(path);

	if (!p)
		return;
	CHECK_RC(stg_begin(p), GPMDB_OK);
	CHECK(tu_table(p, "t") == 1);
	CHECK(tu_table(p, "u") == 2);
	CHECK_RC(tu_append(p, 1, 0, 3000), GPMDB_OK);
	CHECK_RC(tu_append(p, 2, 0, 10), GPMDB_OK);
	CHECK_RC(stg_object_create(p, STG_OBJ_INDEX, "ti", "t", "CREATE..."),
		 GPMDB_OK);
	CHECK_RC(stg_commit(p), GPMDB_OK);
	stg_close(p);
}

static void check_base(const char *path, bool ro)
{
	stg_pool *p = tu_open_ex(path, false, ro, 0, 0);
	uint32_t tid;
	stg_object *o;
	int n;

	if (!p)
		return;
	CHECK_RC(stg_table_find(p, "t", &tid), GPMDB_OK);
	CHECK(tid == 1);
	CHECK(tu_verify(p, 1, 3000) == 0);
	CHECK(stg_deleted_count(p, 1) == 0);
	CHECK(tu_verify(p, 2, 10) == 0);
	CHECK_RC(stg_table_find(p, "x", &tid), GPMDB_NOTFOUND);
	CHECK_RC(stg_objects_list(p, &o, &n), GPMDB_OK);
	CHECK(n == 3);
	stg_objects_free(o, n);
	TU_CHECK_OK(p);
	stg_close(p);
}

/* Everything a transaction can do, then death without commit. */
static void work_child(void *arg)
{
	const char *crash = arg;
	stg_pool *p = tu_open_ex(g_path, false, false, 0, 0);
	uint64_t rows[4] = {0, 1, 1500, 2999};
	uint32_t cols[2] = {1, 2}, tid;
	int32_t nv[4] = {9, 8, 7, 6};
	stg_text ns[4] = {{"a", 1}, {"bb", 2}, {"ccc", 3}, {"dddd", 4}};
	stg_col_batch vb[2] = {{nv, NULL}, {ns, NULL}};
	stg_mark m;

	if (crash)
		setenv("GPMDB_CRASH_AT", crash, 1);
	if (!p)
		_exit(3);
	stg_begin(p);
	tu_append(p, 1, 3000, 5000);
	/* A savepoint before each statement, as the engine takes them: the
	 * targets they change again were logged once, at their first
	 * change, and recovery must still find the transaction-start
	 * images. */
	stg_savepoint(p, &m);
	stg_update(p, 1, 2, cols, rows, 4, vb);
	stg_savepoint(p, &m);
	stg_delete(p, 1, rows + 1, 2);
	stg_savepoint(p, &m);
	tid = tu_table(p, "x");
	stg_savepoint(p, &m);
	tu_append(p, tid, 0, 100);
	stg_savepoint(p, &m);
	tu_append(p, 1, 8000, 10);
	stg_rollback_to(p, &m);
	stg_savepoint(p, &m);
	stg_table_drop(p, 2);
	stg_savepoint(p, &m);
	stg_object_drop(p, STG_OBJ_INDEX, "ti");
	stg_savepoint(p, &m);
	tu_append(p, 1, 8000, 60000); /* grows the pool */
	if (crash)
		stg_commit(p); /* the crash point must come first */
	_exit(0);	       /* no commit: recovery rolls back */
}

static void test_uncommitted(void)
{
	int mode;

	for (mode = 0; mode < 2; mode++) {
		stg_stats st;
		stg_pool *p;
		tu_snap s;
		int status;

		g_path = tu_path("unc", mode);
		make_base(g_path);
		status = tu_child(work_child, NULL);
		CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
		/* A reader recovers privately: the file stays as it is. */
		tu_snap_take(g_path, &s);
		check_base(g_path, true);
		CHECK(tu_snap_same(g_path, &s));
		free(s.data);
		check_base(g_path, false);
		p = tu_open_ex(g_path, false, false, 0, 0);
		if (p) {
			stg_get_stats(p, &st);
			CHECK(st.recovered_entries == 0); /* already clean */
			stg_close(p);
		}
		unlink(g_path);
	}
}

static void test_recovery_stats(void)
{
	stg_pool *p;
	stg_stats st;

	g_path = tu_path("stats", 0);
	make_base(g_path);
	tu_child(work_child, NULL);
	p = tu_open_ex(g_path, false, false, 0, 0);
	if (!p)
		return;
	stg_get_stats(p, &st);
	CHECK(st.recovered_entries > 10);
	CHECK(st.recovery_ms >= 0);
	stg_close(p);
	check_base(g_path, false);
	unlink(g_path);
}

/* Killed at crash points inside the transaction and the commit. */
static void test_crash_points(void)
{
	static const char *const pts[] = {
	    "mlog.entry:7",   "mlog.persisted:20", "alloc.extent:3",
	    "grow.extend:1",  "grow.remap:1",	   "catalog.write:1",
	    "append.data:2",  "append.count:1",	   "hcl.entry:1",
	    "hcl.tail:2",     "update.data:1",	   "delete.data:1",
	    "commit.begin:1", "commit.record:1",   "commit.free:1"};
	size_t i;

	for (i = 0; i < sizeof(pts) / sizeof(pts[0]); i++) {
		int status;
		bool after;

		g_path = tu_path("cp", i % 5 == 1); /* msync is slow */
		make_base(g_path);
		status = tu_child(work_child, (void *)pts[i]);
		CHECKF(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
		       "%s: child status %x", pts[i], status);
		after = strncmp(pts[i], "commit.record", 13) == 0 ||
			strncmp(pts[i], "commit.free", 11) == 0;
		if (!after) {
			check_base(g_path, true);
			check_base(g_path, false);
		} else {
			stg_pool *p = tu_open_ex(g_path, false, false, 0, 0);
			uint32_t tid;

			if (p) {
				CHECK(stg_row_count(p, 1) == 68000);
				CHECK(stg_deleted_count(p, 1) == 2);
				CHECK_RC(stg_table_find(p, "u", &tid),
					 GPMDB_NOTFOUND);
				CHECK_RC(stg_table_find(p, "x", &tid),
					 GPMDB_OK);
				TU_CHECK_OK(p);
				stg_close(p);
			}
		}
		unlink(g_path);
	}
}

static void open_child(void *arg)
{
	stg_pool *p;

	setenv("GPMDB_CRASH_AT", (const char *)arg, 1);
	p = tu_open_ex(g_path, false, false, 0, 0);
	(void)p;
	_exit(0);
}

/* Recovery killed part way, then run again: same result.  (pmem mode: in
 * msync mode the file never holds an uncommitted transaction's small
 * changes, so there is nothing to undo; test_msync_log covers it.) */
static void test_recovery_idempotent(void)
{
	static const char *const pts[] = {"recovery.undo:1", "recovery.undo:9",
					  "recovery.hcl:1", "recovery.hcl:3"};
	size_t i;

	for (i = 0; i < sizeof(pts) / sizeof(pts[0]); i++) {
		int status;

		g_path = tu_path("idem", 0);
		make_base(g_path);
		tu_child(work_child, NULL);
		status = tu_child(open_child, (void *)pts[i]);
		CHECKF(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
		       "%s: status %x", pts[i], status);
		check_base(g_path, true);
		check_base(g_path, false);
		unlink(g_path);
	}
}

/* The committed state after work_child's transaction. */
static void check_after(const char *path, bool ro)
{
	stg_pool *p = tu_open_ex(path, false, ro, 0, 0);
	uint32_t tid;

	if (!p)
		return;
	CHECK(stg_row_count(p, 1) == 68000);
	CHECK(stg_deleted_count(p, 1) == 2);
	CHECK_RC(stg_table_find(p, "u", &tid), GPMDB_NOTFOUND);
	CHECK_RC(stg_table_find(p, "x", &tid), GPMDB_OK);
	TU_CHECK_OK(p);
	stg_close(p);
}

static bool exists(const char *path)
{
	return access(path, F_OK) == 0;
}

/*
 * msync mode's commit log (storage/wal.c): a writer killed after its
 * frame is durable and before a page is in place comes back committed,
 * also through a reader's private view and when the replay itself is
 * killed; a torn frame is no commit; a log of another database is
 * refused; a clean close leaves no log behind.
 */
static void test_msync_log(void)
{
	char wal[4200];
	int status, fd;
	tu_snap s;
	stg_pool *p;
	char err[512];
	stg_open_opts o = {0};

	g_path = tu_path("wal", 1);
	snprintf(wal, sizeof(wal), "%s-wal", g_path);
	make_base(g_path);
	CHECK(!exists(wal));
	status = tu_child(work_child, (void *)"wal.commit:1");
	CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	CHECK(exists(wal));
	/* the reader replays in memory: neither file changes */
	tu_snap_take(g_path, &s);
	check_after(g_path, true);
	CHECK(tu_snap_same(g_path, &s));
	free(s.data);
	CHECK(exists(wal));
	/* the replay killed after its fdatasync, then again in full */
	status = tu_child(open_child, (void *)"wal.replayed:1");
	CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	check_after(g_path, false);
	CHECK(!exists(wal));
	check_after(g_path, false);
	unlink(g_path);

	/* a torn frame: the commit never returned, the base state stays */
	g_path = tu_path("waltorn", 1);
	snprintf(wal, sizeof(wal), "%s-wal", g_path);
	make_base(g_path);
	status = tu_child(work_child, (void *)"wal.commit:1");
	CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	fd = open(wal, O_RDWR);
	CHECK(fd >= 0);
	if (fd >= 0) {
		char b = 0;

		CHECK(pread(fd, &b, 1, 8192 + 100) == 1);
		b ^= 0x5a;
		CHECK(pwrite(fd, &b, 1, 8192 + 100) == 1);
		close(fd);
	}
	check_base(g_path, false);
	CHECK(!exists(wal));

	/* another database's log next to this one: refused, nothing lost */
	status = tu_child(work_child, (void *)"wal.commit:1");
	CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	{
		const char *other = tu_path("walother", 1);
		char owal[4200];

		make_base(other);
		snprintf(owal, sizeof(owal), "%s-wal", other);
		CHECK(rename(wal, owal) == 0);
		o.create = false;
		CHECK_RC(stg_open(other, &o, &p, err, sizeof(err)),
			 GPMDB_CORRUPT);
		CHECKF(strstr(err, "belongs to another database") != NULL, "%s",
		       err);
		CHECK(exists(owal));
		CHECK(rename(owal, wal) == 0);
		unlink(other);
	}
	check_after(g_path, false);
	CHECK(!exists(wal));
	unlink(g_path);
}

/* A full disk under the commit log: the file size limit makes the log's
 * growth fail (EFBIG, as SQLite maps it: "database or disk is full"). */
static void full_child(void *arg)
{
	stg_pool *p = tu_open_ex(g_path, false, false, 0, 0);
	struct rlimit rl;
	int rc;

	(void)arg;
	if (!p)
		_exit(10);
	signal(SIGXFSZ, SIG_IGN);
	getrlimit(RLIMIT_FSIZE, &rl);
	rl.rlim_cur = 16384; /* the header and a frame of two pages */
	if (setrlimit(RLIMIT_FSIZE, &rl) != 0)
		_exit(11);
	if (stg_begin(p) != GPMDB_OK || tu_append(p, 1, 3000, 2000) != GPMDB_OK)
		_exit(12);
	rc = stg_commit(p);
	if (rc != GPMDB_FULL)
		_exit(13);
	if (!strstr(stg_errmsg(p), "database or disk is full") ||
	    !strstr(stg_errmsg(p), "rolled back"))
		_exit(14);
	/* rolled back: the rows before, and the connection goes on */
	if (stg_row_count(p, 1) != 3000 || tu_verify(p, 1, 3000) != 0)
		_exit(15);
	rl.rlim_cur = rl.rlim_max;
	setrlimit(RLIMIT_FSIZE, &rl);
	if (stg_begin(p) != GPMDB_OK ||
	    tu_append(p, 1, 3000, 2000) != GPMDB_OK ||
	    stg_commit(p) != GPMDB_OK)
		_exit(16);
	stg_close(p);
	_exit(0);
}

static void test_msync_full(void)
{
	int status;
	stg_pool *p;

	g_path = tu_path("walfull", 1);
	make_base(g_path);
	status = tu_child(full_child, NULL);
	CHECKF(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	       "child status %x (exit %d)", status,
	       WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	p = tu_open_ex(g_path, false, false, 0, 0);
	if (p) {
		CHECK(stg_row_count(p, 1) == 5000);
		CHECK(tu_verify(p, 1, 5000) == 0);
		TU_CHECK_OK(p);
		stg_close(p);
	}
	unlink(g_path);
}

/*
 * The undo on every core (tablet.c undo_par): a batch of 40,000 cells
 * (past UNDO_PAR_MIN) rolled back in the process, undone at open after a
 * kill at the commit, and undone again after a kill part way through
 * that recovery; and a batch naming a cell twice, which must leave the
 * oldest image (the serial undo's order).  Rows [0, 50000) of a
 * tu_table; the batches write v.
 */
#define PAR_ROWS 50000u
#define PAR_UPD	 40000u

static void par_update(stg_pool *p, bool twice)
{
	uint64_t *rows = malloc(sizeof(uint64_t) * (PAR_UPD + 1));
	int32_t *v = malloc(sizeof(int32_t) * (PAR_UPD + 1));
	uint32_t *vn = calloc(PAR_UPD / 32 + 2, 4), col = 1;
	stg_col_batch b = {v, vn};
	uint64_t n = PAR_UPD;

	for (uint64_t i = 0; i < PAR_UPD; i++) {
		rows[i] = i + (PAR_ROWS - PAR_UPD) / 2;
		v[i] = -(int32_t)i;
		if (i % 11 == 0) /* some NULLs where there were none */
			vn[i / 32] |= 1u << (i % 32);
	}
	if (twice) /* the first row again, a newer value */
		rows[n] = rows[0], v[n] = 12345, n++;
	CHECK_RC(stg_update(p, 1, 1, &col, rows, n, &b), GPMDB_OK);
	free(rows);
	free(v);
	free(vn);
}

static void par_child(void *arg)
{
	stg_pool *p = tu_open_ex(g_path, false, false, 0, 0);

	setenv("GPMDB_CRASH_AT", "commit.begin:1", 1);
	if (!p)
		_exit(3);
	stg_begin(p);
	par_update(p, arg != NULL);
	stg_commit(p); /* killed first */
	_exit(0);
}

/* The table, then a batch rolled back in the process.  In a child, as
 * every step before the last: libgomp's threads do not survive fork, so
 * the parent must not run a parallel region before it forks. */
static void par_base_child(void *arg)
{
	stg_pool *p = tu_open(g_path);
	bool wrote;

	(void)arg;
	if (!p || stg_begin(p) || tu_table(p, "t") != 1 ||
	    tu_append(p, 1, 0, PAR_ROWS) || stg_commit(p) || stg_begin(p))
		_exit(3);
	par_update(p, false);
	{
		int32_t v = 0;

		wrote =
		    stg_read(p, 1, 1, PAR_ROWS / 2, 1, &v, NULL) == GPMDB_OK &&
		    v == -(int32_t)(PAR_UPD / 2);
	}
	if (stg_rollback(p) || !wrote || tu_verify(p, 1, PAR_ROWS) != 0)
		_exit(4);
	stg_close(p);
	_exit(0);
}

/* Reopens after a kill: undone, every entry counted. */
static void par_check_child(void *arg)
{
	stg_pool *p = tu_open_ex(g_path, false, false, 0, 0);
	stg_stats st;
	char *rep = NULL;
	int rc;

	(void)arg;
	if (!p || stg_get_stats(p, &st))
		_exit(3);
	if (st.recovered_entries < PAR_UPD) {
		fprintf(stderr, "recovered %llu entries\n",
			(unsigned long long)st.recovered_entries);
		_exit(4);
	}
	if (tu_verify(p, 1, PAR_ROWS) != 0)
		_exit(5);
	rc = stg_check(p, &rep);
	if (rc != GPMDB_OK) {
		fprintf(stderr, "stg_check: %s\n", rep ? rep : "?");
		_exit(6);
	}
	free(rep);
	stg_close(p);
	_exit(0);
}

static void test_undo_every_core(void)
{
	stg_pool *p;
	int status;

	g_path = tu_path("par", 0);
	status = tu_child(par_base_child, NULL);
	CHECKF(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	       "base and rollback: status %x", status);
	/* killed at the commit, then the recovery killed part way through
	 * its cores' pass, then recovered */
	status = tu_child(par_child, NULL);
	CHECKF(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL, "status %x",
	       status);
	status = tu_child(open_child, (void *)"recovery.hcl:20000");
	CHECKF(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
	       "recovery killed: status %x", status);
	status = tu_child(par_check_child, NULL);
	CHECKF(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	       "recovered: status %x", status);
	/* a cell logged twice in one batch: the serial order decides */
	status = tu_child(par_child, (void *)"twice");
	CHECKF(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL, "status %x",
	       status);
	p = tu_open_ex(g_path, false, false, 0, 0);
	if (!p)
		return;
	CHECK(tu_verify(p, 1, PAR_ROWS) == 0);
	TU_CHECK_OK(p);
	stg_close(p);
	unlink(g_path);
}

int main(void)
{
	TEST_RUN(test_uncommitted);
	TEST_RUN(test_recovery_stats);
	TEST_RUN(test_crash_points);
	TEST_RUN(test_recovery_idempotent);
	TEST_RUN(test_msync_log);
	TEST_RUN(test_msync_full);
	TEST_RUN(test_undo_every_core);
	tu_cleanup();
	TEST_MAIN_END();
}
