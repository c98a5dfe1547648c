/*
 * batch_insert.c - the batch API: an INSERT executed once for a whole set
 * of array-bound parameter rows, a keyed UPDATE the same way, a columnar
 * append, and a query read back as whole result columns.
 *
 * Usage: batch_insert [ROWS [DATABASE]]
 *   ROWS      rows per batch (default 100000)
 *   DATABASE  the pool file (default: /dev/shm, else /tmp; removed at the
 *             end).  On /dev/shm the durability mode is pmem.
 * Prints the time and rate of each step and, last, "batch_insert: ok"
 * when every check passed.
 */
#include "gpmdb.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int fail(gpmdb *db, const char *what)
{
	fprintf(stderr, "batch_insert: %s: %s\n", what, gpmdb_errmsg(db));
	return 1;
}

static void report(const char *what, int64_t rows, double secs)
{
	printf("%-36s %10lld rows %8.3f s %12.0f rows/s\n", what,
	       (long long)rows, secs, rows / (secs > 0 ? secs : 1e-9));
}

/* One integer from a query. */
static long long query_int(gpmdb *db, const char *sql)
{
	gpmdb_stmt *st;
	long long v = -1;

	if (gpmdb_prepare(db, sql, -1, &st, NULL) == GPMDB_OK) {
		if (gpmdb_step(st) == GPMDB_ROW)
			v = gpmdb_column_int64(st, 0);
		gpmdb_finalize(st);
	}
	return v;
}

int main(int argc, char **argv)
{
	int64_t n = argc > 1 ? atoll(argv[1]) : 100000;
	char path[256];
	static const char *colors[4] = {"red", "green", "blue", "black"};
	gpmdb *db = NULL;
	gpmdb_stmt *st;
	double t;
	int rc = 1;

	if (n <= 0) {
		fprintf(stderr, "usage: batch_insert [ROWS [DATABASE]]\n");
		return 2;
	}
	if (argc > 2)
		snprintf(path, sizeof(path), "%s", argv[2]);
	else
		snprintf(path, sizeof(path), "%s/gpmdb_batch.%d.db",
			 access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp",
			 (int)getpid());
	unlink(path);

	/* the caller's columns: ids, groups, prices (some NULL), colours */
	int64_t *id = malloc(sizeof(int64_t) * (size_t)n);
	int32_t *grp = malloc(sizeof(int32_t) * (size_t)n);
	double *price = malloc(sizeof(double) * (size_t)n);
	uint8_t *price_null = calloc((size_t)n, 1);
	const char **color = malloc(sizeof(char *) * (size_t)n);
	if (!id || !grp || !price || !price_null || !color) {
		fprintf(stderr, "batch_insert: out of memory\n");
		return 1;
	}
	long long nonnull = 0;
	for (int64_t i = 0; i < n; i++) {
		id[i] = i;
		grp[i] = (int32_t)(i % 10);
		price[i] = (double)(i % 1000) / 4;
		price_null[i] = i % 100 == 99; /* every 100th price is NULL */
		nonnull += !price_null[i];
		color[i] = colors[i % 4];
	}

	if (gpmdb_open_v2(path, &db, GPMDB_OPEN_READWRITE | GPMDB_OPEN_CREATE,
			  NULL)) {
		fail(db, "open");
		goto out;
	}
	if (gpmdb_exec(
		db,
		"CREATE TABLE sales(id INTEGER PRIMARY KEY, grp INTEGER, "
		"price DOUBLE, color TEXT);"
		"CREATE TABLE sales2(id INTEGER PRIMARY KEY, grp INTEGER, "
		"price DOUBLE, color TEXT)",
		NULL, NULL, NULL)) {
		fail(db, "create");
		goto out;
	}

	/* 1. array binding: one step inserts all n rows, one transaction */
	if (gpmdb_prepare(db, "INSERT INTO sales VALUES (?, ?, ?, ?)", -1, &st,
			  NULL)) {
		fail(db, "prepare insert");
		goto out;
	}
	gpmdb_bind_array_int64(st, 1, id, n, NULL);
	gpmdb_bind_array_int32(st, 2, grp, n, NULL);
	gpmdb_bind_array_double(st, 3, price, n, price_null);
	gpmdb_bind_array_text(st, 4, color, n, NULL);
	t = now();
	if (gpmdb_step(st) != GPMDB_DONE) {
		fail(db, "array-bound insert");
		goto out;
	}
	report("array-bound INSERT", n, now() - t);
	gpmdb_finalize(st);
	if (gpmdb_changes(db) != n) {
		fprintf(stderr, "batch_insert: %lld changes, expected %lld\n",
			gpmdb_changes(db), (long long)n);
		goto out;
	}

	/* 2. the same rows again as whole columns, no SQL */
	gpmdb_column_array cols[4] = {
	    {GPMDB_ARRAY_INT64, id, NULL},
	    {GPMDB_ARRAY_INT32, grp, NULL},
	    {GPMDB_ARRAY_DOUBLE, price, price_null},
	    {GPMDB_ARRAY_TEXT, color, NULL},
	};
	t = now();
	if (gpmdb_append_columns(db, "sales2", 4, NULL, cols, n)) {
		fail(db, "append");
		goto out;
	}
	report("gpmdb_append_columns", n, now() - t);

	/* 3. keyed update of every 4th row: one hash of the keys, one pass */
	int64_t m = (n + 3) / 4;
	int64_t *keys = malloc(sizeof(int64_t) * (size_t)m);
	double *newp = malloc(sizeof(double) * (size_t)m);
	for (int64_t i = 0; i < m; i++) {
		keys[i] = 4 * i;
		newp[i] = 1.0;
	}
	if (gpmdb_prepare(db, "UPDATE sales SET price = ? WHERE id = ?", -1,
			  &st, NULL)) {
		fail(db, "prepare update");
		goto out;
	}
	gpmdb_bind_array_double(st, 1, newp, m, NULL);
	gpmdb_bind_array_int64(st, 2, keys, m, NULL);
	t = now();
	if (gpmdb_step(st) != GPMDB_DONE) {
		fail(db, "keyed update");
		goto out;
	}
	report("keyed UPDATE (array-bound)", m, now() - t);
	gpmdb_finalize(st);
	free(keys);
	free(newp);

	/* 4. a query read back as whole columns */
	if (gpmdb_prepare(db,
			  "SELECT grp, count(*), count(price), max(color) "
			  "FROM sales2 GROUP BY grp ORDER BY grp",
			  -1, &st, NULL)) {
		fail(db, "prepare select");
		goto out;
	}
	t = now();
	if (gpmdb_step(st) != GPMDB_ROW) {
		fail(db, "select");
		goto out;
	}
	gpmdb_column_array g, c, cp, mc;
	int64_t rows;
	gpmdb_result_column(st, 0, &g, &rows);
	gpmdb_result_column(st, 1, &c, &rows);
	gpmdb_result_column(st, 2, &cp, &rows);
	gpmdb_result_column(st, 3, &mc, &rows);
	report("GROUP BY + gpmdb_result_column", n, now() - t);
	long long total = 0, total_nonnull = 0;
	for (int64_t i = 0; i < rows; i++) {
		const int64_t *gv = g.values, *cv = c.values, *pv = cp.values;
		const char *const *tv = mc.values;
		printf("  grp %lld: %lld rows, %lld prices, max color %s\n",
		       (long long)gv[i], (long long)cv[i], (long long)pv[i],
		       tv[i] ? tv[i] : "NULL");
		total += cv[i];
		total_nonnull += pv[i];
	}
	gpmdb_finalize(st);

	long long ones = query_int(db, "SELECT count(*) FROM sales WHERE "
				       "price = 1.0");
	if (total != n || total_nonnull != nonnull ||
	    query_int(db, "SELECT count(*) FROM sales") != n || ones < m) {
		fprintf(stderr,
			"batch_insert: wrong totals: %lld rows, %lld prices, "
			"%lld updated\n",
			total, total_nonnull, ones);
		goto out;
	}
	rc = 0;
	printf("batch_insert: ok\n");
out:
	gpmdb_close(db);
	if (argc <= 2)
		unlink(path);
	free(id);
	free(grp);
	free(price);
	free(price_null);
	free(color);
	return rc;
}
