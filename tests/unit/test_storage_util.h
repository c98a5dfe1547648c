/*
 * test_storage_util.h - helpers shared by the storage unit tests: pool
 * paths (pmem mode under /dev/shm, msync mode under /tmp), opening,
 * checking, file snapshots.
 */
#ifndef GPMDB_TEST_STORAGE_UTIL_H
#define GPMDB_TEST_STORAGE_UTIL_H

#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

#include "../storage/layout.h"
#include "../storage/storage.h"

static char tu_paths[16][256];
static int tu_npaths;

/* A fresh pool path; mode 0 = /dev/shm (pmem), 1 = /tmp (msync). */
static __attribute__((unused)) const char *tu_path(const char *tag, int mode)
{
	char *p = tu_paths[tu_npaths++ % 16];

	snprintf(p, 256, "%s/gpmdb_%s_%d_%d.pool", mode ? "/tmp" : "/dev/shm",
		 tag, (int)getpid(), tu_npaths);
	unlink(p);
	return p;
}

static __attribute__((unused)) void tu_cleanup(void)
{
	int i;

	for (i = 0; i < 16; i++)
		if (tu_paths[i][0]) {
			char w[4200];

			snprintf(w, sizeof(w), "%s-wal", tu_paths[i]);
			unlink(tu_paths[i]);
			unlink(w); /* msync mode's commit log, if left */
		}
}

static __attribute__((unused)) stg_pool *
tu_open_ex(const char *path, bool create, bool ro, uint64_t init, uint64_t max)
{
	stg_open_opts o = {0};
	char err[512] = "";
	stg_pool *p = NULL;
	int rc;

	o.create = create;
	o.readonly = ro;
	o.initial_size = init;
	o.max_size = max;
	/* tu_path's mode 1 means msync mode, also where /tmp is a tmpfs */
	if (!ro && strncmp(path, "/tmp/", 5) == 0)
		o.durability = STG_DUR_MSYNC;
	rc = stg_open(path, &o, &p, err, sizeof(err));
	CHECKF(rc == GPMDB_OK, "open %s: rc %d: %s", path, rc, err);
	return rc == GPMDB_OK ? p : NULL;
}

static __attribute__((unused)) stg_pool *tu_open(const char *path)
{
	return tu_open_ex(path, true, false, 1u << 20, 0);
}

/* stg_check must say ok. */
#define TU_CHECK_OK(p)                                                         \
	do {                                                                   \
		char *rep_ = NULL;                                             \
		int rc_ = stg_check((p), &rep_);                               \
		CHECKF(rc_ == GPMDB_OK, "stg_check: %d: %s", rc_,              \
		       rep_ ? rep_ : "(no report)");                           \
		free(rep_);                                                    \
	} while (0)

static __attribute__((unused)) uint64_t tu_used(stg_pool *p)
{
	stg_stats s;

	stg_get_stats(p, &s);
	return s.used_bytes;
}

/* A table (id BIGINT NOT NULL, v INT, s TEXT, d DOUBLE). */
static __attribute__((unused)) uint32_t tu_table(stg_pool *p, const char *name)
{
	stg_column_def c[4] = {
	    {.name = "id", .type = STG_T_BIGINT, .flags = STG_COL_NOTNULL},
	    {.name = "v", .type = STG_T_INT},
	    {.name = "s", .type = STG_T_TEXT},
	    {.name = "d", .type = STG_T_DOUBLE}};
	uint32_t tid = 0;

	CHECK_RC(stg_table_create(p, name, c, 4, "CREATE TABLE ...", &tid),
		 GPMDB_OK);
	return tid;
}

/* Appends n rows to a tu_table: id = base + i, v = 2 * id (NULL when id %
 * 7 == 3), s = "s<id>" (NULL when id % 5 == 4), d = id / 2. */
static __attribute__((unused)) int tu_append(stg_pool *p, uint32_t tid,
					     uint64_t base, uint64_t n)
{
	int64_t *id = malloc(n * 8 + 8);
	int32_t *v = malloc(n * 4 + 4);
	stg_text *s = malloc(n * sizeof(stg_text) + 8);
	double *d = malloc(n * 8 + 8);
	uint32_t *vn = calloc(n / 32 + 2, 4), *sn = calloc(n / 32 + 2, 4);
	char *buf = malloc(n * 24 + 8);
	stg_col_batch b[4];
	uint64_t i;
	size_t at = 0;
	int rc;

	for (i = 0; i < n; i++) {
		uint64_t k = base + i;

		id[i] = (int64_t)k;
		v[i] = (int32_t)(2 * k);
		if (k % 7 == 3)
			vn[i / 32] |= 1u << (i % 32);
		s[i].ptr = buf + at;
		s[i].len =
		    (uint32_t)sprintf(buf + at, "s%llu", (unsigned long long)k);
		at += s[i].len;
		if (k % 5 == 4)
			sn[i / 32] |= 1u << (i % 32);
		d[i] = (double)k / 2;
	}
	b[0] = (stg_col_batch){id, NULL};
	b[1] = (stg_col_batch){v, vn};
	b[2] = (stg_col_batch){s, sn};
	b[3] = (stg_col_batch){d, NULL};
	rc = stg_append(p, tid, b, n);
	free(id);
	free(v);
	free(s);
	free(d);
	free(vn);
	free(sn);
	free(buf);
	return rc;
}

/* Checks rows [0, n) of a tu_table hold id = i (base 0, as tu_append with
 * consecutive bases makes them); returns the number of bad rows. */
static __attribute__((unused)) uint64_t tu_verify(stg_pool *p, uint32_t tid,
						  uint64_t n)
{
	int64_t *id = malloc(n * 8 + 8);
	int32_t *v = malloc(n * 4 + 4);
	stg_text *s = malloc(n * sizeof(stg_text) + 8);
	double *d = malloc(n * 8 + 8);
	uint32_t *vn = calloc(n / 32 + 2, 4), *sn = calloc(n / 32 + 2, 4);
	uint64_t i, bad = 0;

	CHECK(stg_row_count(p, tid) == n);
	CHECK_RC(stg_read(p, tid, 0, 0, n, id, NULL), GPMDB_OK);
	CHECK_RC(stg_read(p, tid, 1, 0, n, v, vn), GPMDB_OK);
	CHECK_RC(stg_read(p, tid, 2, 0, n, s, sn), GPMDB_OK);
	CHECK_RC(stg_read(p, tid, 3, 0, n, d, NULL), GPMDB_OK);
	for (i = 0; i < n; i++) {
		char want[32];
		bool vnull = (vn[i / 32] >> (i % 32)) & 1;
		bool snull = (sn[i / 32] >> (i % 32)) & 1;
		int wl = sprintf(want, "s%llu", (unsigned long long)i);

		if (id[i] != (int64_t)i || vnull != (i % 7 == 3) ||
		    (!vnull && v[i] != (int32_t)(2 * i)) ||
		    snull != (i % 5 == 4) ||
		    (!snull && (s[i].len != (uint32_t)wl ||
				memcmp(s[i].ptr, want, (size_t)wl) != 0)) ||
		    d[i] != (double)i / 2) {
			if (bad < 5)
				fprintf(stderr, "row %llu wrong\n",
					(unsigned long long)i);
			bad++;
		}
	}
	free(id);
	free(v);
	free(s);
	free(d);
	free(vn);
	free(sn);
	return bad;
}

static __attribute__((unused)) bool bit_get_test(const uint32_t *w, uint64_t i)
{
	return (w[i / 32] >> (i % 32)) & 1u;
}

/* Whole-file snapshot, for "nothing changed" checks. */
typedef struct {
	struct stat st;
	char *data;
} tu_snap;

static __attribute__((unused)) void tu_snap_take(const char *path, tu_snap *s)
{
	int fd = open(path, O_RDONLY);

	memset(s, 0, sizeof(*s));
	if (fd < 0)
		return;
	fstat(fd, &s->st);
	s->data = malloc((size_t)s->st.st_size + 1);
	if (pread(fd, s->data, (size_t)s->st.st_size, 0) != s->st.st_size) {
		free(s->data);
		s->data = NULL;
	}
	close(fd);
}

static __attribute__((unused)) bool tu_snap_same(const char *path,
						 const tu_snap *s)
{
	tu_snap now;
	bool same;

	tu_snap_take(path, &now);
	same = now.data && s->data && now.st.st_size == s->st.st_size &&
	       now.st.st_mtim.tv_sec == s->st.st_mtim.tv_sec &&
	       now.st.st_mtim.tv_nsec == s->st.st_mtim.tv_nsec &&
	       memcmp(now.data, s->data, (size_t)s->st.st_size) == 0;
	free(now.data);
	return same;
}

/* Runs fn in a child process; returns its wait status. */
static __attribute__((unused)) int tu_child(void (*fn)(void *), void *arg)
{
	int st = 0;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		fn(arg);
		_exit(0);
	}
	if (pid < 0)
		return -1;
	waitpid(pid, &st, 0);
	return st;
}

#endif /* GPMDB_TEST_STORAGE_UTIL_H */
