/*
 * bench_zone_marks.c - what a writer pays for change tracking (zones.c:
 * zone stamps and 64-byte line masks) once a backup has made the zone
 * table: batch writes of a pmem-mode pool on /dev/shm after one backup.
 *
 * t(id INTEGER PRIMARY KEY, a, b, c BIGINT) with N rows (appended in
 * batches of 1M), one backup (the zone table and line masks made; the
 * copy removed), then for S seconds each, statements per second of:
 *   UPDATE range     UPDATE t SET a = a + 1 WHERE id BETWEEN k AND k+9999
 *   UPDATE scattered UPDATE t SET b = b + 1 WHERE id BETWEEN k AND
 *                    k+999999 AND id % 100 = 7 (10,000 rows, one per 800
 *                    bytes of b: a line of every zone's mask)
 *   append           gpmdb_append_columns of 100,000 rows
 * Only the public API: the same source builds against any library
 * version (the comparison before and after line masks).
 *
 *   bench_zone_marks [--rows N] [--secs S] [--shm DIR]
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gpmdb.h"

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void must(gpmdb *db, const char *sql)
{
	char *err = NULL;

	if (gpmdb_exec(db, sql, NULL, NULL, &err)) {
		fprintf(stderr, "%s: %s\n", sql, err ? err : "?");
		exit(1);
	}
}

/* Appends n rows from first + 1 on. */
static void append(gpmdb *db, long long first, long long n, int64_t *id)
{
	gpmdb_column_array ca[4];

	for (long long i = 0; i < n; i++)
		id[i] = first + i + 1;
	for (int c = 0; c < 4; c++) {
		ca[c].type = GPMDB_ARRAY_INT64;
		ca[c].values = id;
		ca[c].nulls = NULL;
	}
	if (gpmdb_append_columns(db, "t", 4, NULL, ca, n)) {
		fprintf(stderr, "append: %s\n", gpmdb_errmsg(db));
		exit(1);
	}
}

int main(int argc, char **argv)
{
	long long rows = 16000000, n, k;
	double secs = 4, t0, t;
	const char *shm = "/dev/shm";
	char pool[4200], copy[4300], sql[300];
	gpmdb_options o = {.durability = "pmem"};
	gpmdb_backup *bk;
	int64_t *id;
	gpmdb *db = NULL;

	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--rows"))
			rows = atoll(argv[i + 1]);
		else if (!strcmp(argv[i], "--secs"))
			secs = atof(argv[i + 1]);
		else if (!strcmp(argv[i], "--shm"))
			shm = argv[i + 1];
	}
	snprintf(pool, sizeof(pool), "%s/gpmdb_bench_marks.db", shm);
	snprintf(copy, sizeof(copy), "%s.copy", pool);
	unlink(pool);
	if (gpmdb_open_v2(pool, &db, GPMDB_OPEN_READWRITE | GPMDB_OPEN_CREATE,
			  &o)) {
		fprintf(stderr, "open %s: %s\n", pool, gpmdb_errmsg(db));
		return 1;
	}
	if (!(id = malloc(sizeof(*id) * 1000000)))
		return 1;
	must(db, "CREATE TABLE t(id INTEGER PRIMARY KEY, a BIGINT, b BIGINT, "
		 "c BIGINT)");
	for (n = 0; n < rows; n += 1000000)
		append(db, n, rows - n < 1000000 ? rows - n : 1000000, id);
	/* the zone table and the masks: made by a backup */
	bk = gpmdb_backup_init(copy, db, NULL);
	if (!bk || gpmdb_backup_step(bk, -1) != GPMDB_DONE ||
	    gpmdb_backup_finish(bk)) {
		fprintf(stderr, "backup: %s\n", gpmdb_errmsg(db));
		return 1;
	}
	unlink(copy);
	printf("| writer, %lld rows, after a backup | statements/s | rows/s "
	       "|\n| --- | ---: | ---: |\n",
	       rows);
	for (int w = 0; w < 3; w++) {
		static const char *name[] = {"UPDATE range (10,000 rows)",
					     "UPDATE scattered (10,000 rows, "
					     "every 100th)",
					     "append (100,000 rows)"};
		long long per = w == 2 ? 100000 : 10000;

		n = k = 0;
		t0 = t = now_s();
		while (t - t0 < secs) {
			long long lo = 1 + (k * 1000003) % (rows - 1000000);

			if (w == 0)
				snprintf(sql, sizeof(sql),
					 "UPDATE t SET a = a + 1 WHERE id "
					 "BETWEEN %lld AND %lld",
					 lo, lo + 9999);
			else if (w == 1)
				snprintf(sql, sizeof(sql),
					 "UPDATE t SET b = b + 1 WHERE id "
					 "BETWEEN %lld AND %lld AND id %% 100 "
					 "= 7",
					 lo, lo + 999999);
			if (w < 2)
				must(db, sql);
			else
				append(db, rows, per, id);
			if (w == 2)
				rows += per;
			k++;
			n++;
			t = now_s();
		}
		printf("| %s | %.1f | %.0f |\n", name[w], n / (t - t0),
		       n * per / (t - t0));
	}
	free(id);
	gpmdb_close(db);
	unlink(pool);
	snprintf(copy, sizeof(copy), "%s-shm", pool);
	unlink(copy);
	return 0;
}
