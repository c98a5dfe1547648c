/*
 * bench_batch_peers.c - bench_batch's peers (docs/benchmarks.md,
 * bench_batch): SQLite, a prepared statement per row in one transaction,
 * and DuckDB with its fastest batch idiom (whole DataChunks appended),
 * each running the INSERT and the two UPDATEs and checksumming the table
 * as gpmdb's configurations do (bench_batch.c).
 */
#include <inttypes.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../bench_util.h"
#include "../peers/duckdb_dl.h"
#include "bench_batch.h"

/* ---- SQLite -------------------------------------------------------------- */

static int sq_exec(sqlite3 *db, const char *sql, char *err, size_t len)
{
	char *msg = NULL;
	int rc = sqlite3_exec(db, sql, NULL, NULL, &msg);

	if (rc != SQLITE_OK)
		snprintf(err, len, "%s: %s", sql, msg ? msg : "?");
	sqlite3_free(msg);
	return rc;
}

static int sq_ck(sqlite3 *db, bb_ck *c, char *err, size_t len)
{
	sqlite3_stmt *st = NULL;
	int rc = sqlite3_prepare_v2(db, bb_sql_ck, -1, &st, NULL);

	memset(c, 0, sizeof(*c));
	if (rc == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW) {
		for (int i = 0; i < 7; i++)
			c->v[i] = sqlite3_column_int64(st, i);
		c->f[0] = sqlite3_column_double(st, 7);
		c->f[1] = sqlite3_column_double(st, 8);
		rc = SQLITE_OK;
	} else {
		snprintf(err, len, "checksum: %s", sqlite3_errmsg(db));
		rc = SQLITE_ERROR;
	}
	sqlite3_finalize(st);
	return rc;
}

static int sq_insert(sqlite3 *db, const bb_data *d, uint64_t n, char *err,
		     size_t len)
{
	sqlite3_stmt *st = NULL;
	int rc = sq_exec(db, "BEGIN", err, len);

	if (rc == SQLITE_OK &&
	    (rc = sqlite3_prepare_v2(db,
				     "INSERT INTO test VALUES (?, ?, ?, ?, ?, "
				     "?, ?)",
				     -1, &st, NULL)) != SQLITE_OK)
		snprintf(err, len, "prepare: %s", sqlite3_errmsg(db));
	for (uint64_t i = 0; i < n && rc == SQLITE_OK; i++) {
		sqlite3_bind_int(st, 1, d->id[i]);
		sqlite3_bind_int(st, 2, d->ui[i]);
		sqlite3_bind_int(st, 3, d->n5[i]);
		sqlite3_bind_int(st, 4, d->n20[i]);
		sqlite3_bind_double(st, 5, d->uf[i]);
		sqlite3_bind_double(st, 6, d->f5[i]);
		sqlite3_bind_int(st, 7, d->nf20[i]);
		if (sqlite3_step(st) != SQLITE_DONE) {
			snprintf(err, len, "insert: %s", sqlite3_errmsg(db));
			rc = SQLITE_ERROR;
		}
		sqlite3_reset(st);
	}
	sqlite3_finalize(st);
	if (rc == SQLITE_OK)
		rc = sq_exec(db, "COMMIT", err, len);
	return rc;
}

static int sq_update_b(sqlite3 *db, const bb_keys *kk, char *err, size_t len)
{
	sqlite3_stmt *st = NULL;
	int rc = sq_exec(db, "BEGIN", err, len);

	if (rc == SQLITE_OK &&
	    (rc = sqlite3_prepare_v2(db, bb_sql_b, -1, &st, NULL)) != SQLITE_OK)
		snprintf(err, len, "prepare: %s", sqlite3_errmsg(db));
	for (uint64_t j = 0; j < kk->k && rc == SQLITE_OK; j++) {
		sqlite3_bind_int(st, 1, kk->vals[j]);
		sqlite3_bind_int(st, 2, kk->ids[j]);
		if (sqlite3_step(st) != SQLITE_DONE) {
			snprintf(err, len, "update: %s", sqlite3_errmsg(db));
			rc = SQLITE_ERROR;
		}
		sqlite3_reset(st);
	}
	sqlite3_finalize(st);
	if (rc == SQLITE_OK)
		rc = sq_exec(db, "COMMIT", err, len);
	return rc;
}

void sq_run(bb_res *r, int conf, const bb_data *d, uint64_t n, const char *dir)
{
	char path[512], side[600], err[1024] = "";
	sqlite3 *db = NULL;
	bb_keys kk = {0};
	bb_ck ck[3], got;
	uint64_t ka;

	snprintf(path, sizeof(path), "%s/bench_batch_%s_%d.sqlite", dir,
		 conf_keys[conf], (int)getpid());
	unlink(path);
	bb_make_keys(&kk, n);
	bb_expect(d, n, &kk, ck, &ka);
	r->n = n;
	if (sqlite3_open(path, &db) != SQLITE_OK ||
	    sq_exec(db, "PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL",
		    err, sizeof(err)) ||
	    sq_exec(db, bb_create, err, sizeof(err))) {
		snprintf(r->status, sizeof(r->status), "%s",
			 err[0] ? err : sqlite3_errmsg(db));
		goto out;
	}
	r->ran = true;
	r->rows[OP_INSERT] = (double)n;
	r->rows[OP_UPD_A] = (double)ka;
	r->rows[OP_UPD_B] = (double)kk.k;
	r->changed[OP_INSERT] = BB_ROW_BYTES * (double)n;
	r->changed[OP_UPD_A] = 4.0 * (double)ka;
	r->changed[OP_UPD_B] = 4.0 * (double)kk.k;
	for (int op = 0; op < NOPS; op++) {
		double w0 = bb_wchar(), t0 = bench_now();
		int rc;

		if (op == OP_INSERT)
			rc = sq_insert(db, d, n, err, sizeof(err));
		else if (op == OP_UPD_A)
			rc = sq_exec(db, bb_sql_a, err, sizeof(err));
		else
			rc = sq_update_b(db, &kk, err, sizeof(err));
		r->secs[op] = bench_now() - t0;
		r->bytes[op] = bb_wchar() - w0;
		r->rec_ms[op] = -1;
		if (rc || sq_ck(db, &got, err, sizeof(err))) {
			snprintf(r->err[op], sizeof(r->err[op]), "%s", err);
			printf("**ERROR** %s, %s: %s\n", conf_names[conf],
			       op_names[op], err);
			bb_mismatches++;
			goto out;
		}
		r->ck_ok[op] = 1;
		bb_check(r, op, &got, &ck[op], conf_names[conf], "");
		printf("# %s, %s: %.3f s (%" PRIu64 " rows)\n",
		       conf_names[conf], op_names[op], r->secs[op], n);
		fflush(stdout);
	}
out:
	sqlite3_close(db);
	unlink(path);
	snprintf(side, sizeof(side), "%s-wal", path);
	unlink(side);
	snprintf(side, sizeof(side), "%s-shm", path);
	unlink(side);
	bb_keys_free(&kk);
}

/* ---- DuckDB -------------------------------------------------------------- */

static int dk_ck(duckdl *dl, duckdl_connection con, bb_ck *c, char *err,
		 size_t len)
{
	duckdl_result res;
	int rc;

	memset(c, 0, sizeof(*c));
	memset(&res, 0, sizeof(res));
	if (dl->query(con, bb_sql_ck, &res) != DUCKDL_OK) {
		snprintf(err, len, "checksum: %s", dl->result_error(&res));
		rc = -1;
	} else {
		for (int i = 0; i < 7; i++)
			c->v[i] = dl->value_int64(&res, i, 0);
		c->f[0] = dl->value_double(&res, 7, 0);
		c->f[1] = dl->value_double(&res, 8, 0);
		rc = 0;
	}
	dl->destroy_result(&res);
	return rc;
}

/* DuckDB's append idiom (INSERT, and UPDATE b's keys): whole DataChunks,
 * its fastest through the C API (the default), or row by row
 * (duckdb_append_int32 ... end_row, the benchmark's idiom before issue 16;
 * --duck-appender rows, to measure the two again). */
bool dk_rowwise;

/* Row by row: one duckdb_append_* per value, end_row per row. */
static int dk_append_rows(duckdl *dl, duckdl_connection con, const char *table,
			  const bb_data *d, const bb_keys *kk, uint64_t n,
			  char *err, size_t len)
{
	duckdl_appender ap = NULL;
	int bad = 0;

	if (dl->appender_create(con, NULL, table, &ap) != DUCKDL_OK) {
		snprintf(err, len, "appender: %s",
			 ap ? dl->appender_error(ap) : "?");
		dl->appender_destroy(&ap);
		return -1;
	}
	if (kk) {
		for (uint64_t j = 0; j < kk->k && !bad; j++)
			bad = dl->append_int32(ap, kk->ids[j]) ||
			      dl->append_int32(ap, kk->vals[j]) ||
			      dl->appender_end_row(ap);
	} else {
		for (uint64_t i = 0; i < n && !bad; i++)
			bad = dl->append_int32(ap, d->id[i]) ||
			      dl->append_int32(ap, d->ui[i]) ||
			      dl->append_int32(ap, d->n5[i]) ||
			      dl->append_int32(ap, d->n20[i]) ||
			      dl->append_double(ap, d->uf[i]) ||
			      dl->append_double(ap, d->f5[i]) ||
			      dl->append_int32(ap, d->nf20[i]) ||
			      dl->appender_end_row(ap);
	}
	if (!bad)
		bad = dl->appender_close(ap) != DUCKDL_OK;
	if (bad)
		snprintf(err, len, "append: %s", dl->appender_error(ap));
	dl->appender_destroy(&ap);
	return bad ? -1 : 0;
}

/* A column of a chunk: DUCKDL_TYPE_INTEGER from int32_t values (copied
 * with memcpy) or DUCKDL_TYPE_FLOAT from doubles (each narrowed, exact:
 * the values are multiples of 1/1024). */
typedef struct {
	int type;
	const void *src;
} dk_col;

/* Whole DataChunks: duckdb_vector_size() rows (2048) a chunk, each column
 * filled from its array, the chunk appended with duckdb_append_data_chunk
 * and reused; appender_close flushes.  The bench has no NULLs, so the
 * validity masks stay all valid. */
static int dk_append_chunks(duckdl *dl, duckdl_connection con,
			    const char *table, int ncols, const dk_col *cols,
			    uint64_t n, char *err, size_t len)
{
	duckdl_logical_type lt[BB_NCOLS];
	duckdl_appender ap = NULL;
	duckdl_chunk ch = NULL;
	uint64_t cap = dl->vector_size();
	int bad = 0;

	if (dl->appender_create(con, NULL, table, &ap) != DUCKDL_OK) {
		snprintf(err, len, "appender: %s",
			 ap ? dl->appender_error(ap) : "?");
		dl->appender_destroy(&ap);
		return -1;
	}
	for (int c = 0; c < ncols; c++)
		lt[c] = dl->create_logical_type(cols[c].type);
	ch = dl->create_data_chunk(lt, (duckdl_idx)ncols);
	for (int c = 0; c < ncols; c++)
		dl->destroy_logical_type(&lt[c]);
	if (!ch) {
		snprintf(err, len, "duckdb_create_data_chunk failed");
		dl->appender_destroy(&ap);
		return -1;
	}
	for (uint64_t i0 = 0; i0 < n && !bad; i0 += cap) {
		uint64_t m = n - i0 < cap ? n - i0 : cap;

		dl->chunk_reset(ch);
		for (int c = 0; c < ncols; c++) {
			void *dst = dl->vector_data(dl->chunk_vector(ch, c));

			if (cols[c].type == DUCKDL_TYPE_INTEGER) {
				memcpy(dst, (const int32_t *)cols[c].src + i0,
				       4 * m);
			} else {
				const double *s =
				    (const double *)cols[c].src + i0;
				float *f = dst;

				for (uint64_t k = 0; k < m; k++)
					f[k] = (float)s[k];
			}
		}
		dl->chunk_set_size(ch, m);
		bad = dl->append_data_chunk(ap, ch) != DUCKDL_OK;
	}
	if (!bad)
		bad = dl->appender_close(ap) != DUCKDL_OK;
	if (bad)
		snprintf(err, len, "append chunk: %s", dl->appender_error(ap));
	dl->destroy_chunk(&ch);
	dl->appender_destroy(&ap);
	return bad ? -1 : 0;
}

/* The table's rows, or UPDATE b's keys (id, v), in the chosen idiom. */
static int dk_append(duckdl *dl, duckdl_connection con, const char *table,
		     const bb_data *d, const bb_keys *kk, uint64_t n, char *err,
		     size_t len)
{
	if (dk_rowwise)
		return dk_append_rows(dl, con, table, d, kk, n, err, len);
	if (kk) {
		dk_col kc[2] = {{DUCKDL_TYPE_INTEGER, kk->ids},
				{DUCKDL_TYPE_INTEGER, kk->vals}};

		return dk_append_chunks(dl, con, table, 2, kc, kk->k, err, len);
	}
	dk_col tc[BB_NCOLS] = {
	    {DUCKDL_TYPE_INTEGER, d->id},  {DUCKDL_TYPE_INTEGER, d->ui},
	    {DUCKDL_TYPE_INTEGER, d->n5},  {DUCKDL_TYPE_INTEGER, d->n20},
	    {DUCKDL_TYPE_FLOAT, d->uf},	   {DUCKDL_TYPE_FLOAT, d->f5},
	    {DUCKDL_TYPE_INTEGER, d->nf20}};

	return dk_append_chunks(dl, con, table, BB_NCOLS, tc, n, err, len);
}

void dk_run(bb_res *r, const bb_data *d, uint64_t n, const char *dir)
{
	char path[512], side[600], err[1024] = "";
	duckdl dl;
	duckdl_database db = NULL;
	duckdl_connection con = NULL;
	bb_keys kk = {0};
	bb_ck ck[3], got;
	uint64_t ka;

	if (duckdl_load(&dl, NULL, err, sizeof(err)) != 0) {
		snprintf(r->status, sizeof(r->status), "not installed (%s)",
			 err);
		return;
	}
	snprintf(path, sizeof(path), "%s/bench_batch_duck_%d.duckdb", dir,
		 (int)getpid());
	unlink(path);
	bb_make_keys(&kk, n);
	bb_expect(d, n, &kk, ck, &ka);
	r->n = n;
	if (duckdl_open(&dl, path, 0, &db, &con, err, sizeof(err)) ||
	    duckdl_exec(&dl, con, bb_create, err, sizeof(err))) {
		snprintf(r->status, sizeof(r->status), "%s", err);
		goto out;
	}
	r->ran = true;
	r->rows[OP_INSERT] = (double)n;
	r->rows[OP_UPD_A] = (double)ka;
	r->rows[OP_UPD_B] = (double)kk.k;
	r->changed[OP_INSERT] = BB_ROW_BYTES * (double)n;
	r->changed[OP_UPD_A] = 4.0 * (double)ka;
	r->changed[OP_UPD_B] = 4.0 * (double)kk.k;
	for (int op = 0; op < NOPS; op++) {
		double w0 = bb_wchar(), t0 = bench_now();
		int rc;

		if (op == OP_INSERT) {
			/* one transaction: without it each of the
			 * appender's flushes (every 100 chunks) commits on
			 * its own */
			rc = duckdl_exec(&dl, con, "BEGIN", err, sizeof(err));
			if (!rc)
				rc = dk_append(&dl, con, "test", d, NULL, n,
					       err, sizeof(err));
			if (!rc)
				rc = duckdl_exec(&dl, con, "COMMIT", err,
						 sizeof(err));
		} else if (op == OP_UPD_A) {
			rc = duckdl_exec(&dl, con, bb_sql_a, err, sizeof(err));
		} else {
			/* DuckDB's batch UPDATE: keys into a temporary
			 * table, one UPDATE ... FROM, one transaction */
			rc = duckdl_exec(&dl, con,
					 "BEGIN; CREATE TEMP TABLE keys (id "
					 "INTEGER, v INTEGER)",
					 err, sizeof(err));
			if (!rc)
				rc = dk_append(&dl, con, "keys", NULL, &kk, 0,
					       err, sizeof(err));
			if (!rc)
				rc = duckdl_exec(
				    &dl, con,
				    "UPDATE test SET uniformi = keys.v FROM "
				    "keys WHERE test.id = keys.id; "
				    "DROP TABLE keys; COMMIT",
				    err, sizeof(err));
		}
		r->secs[op] = bench_now() - t0;
		r->bytes[op] = bb_wchar() - w0;
		r->rec_ms[op] = -1;
		if (rc || dk_ck(&dl, con, &got, err, sizeof(err))) {
			snprintf(r->err[op], sizeof(r->err[op]), "%s", err);
			printf("**ERROR** DuckDB, %s: %s\n", op_names[op], err);
			bb_mismatches++;
			goto out;
		}
		r->ck_ok[op] = 1;
		bb_check(r, op, &got, &ck[op], conf_names[C_DUCK], "");
		printf("# %s, %s: %.3f s\n", conf_names[C_DUCK], op_names[op],
		       r->secs[op]);
		fflush(stdout);
	}
out:
	duckdl_close(&dl, &db, &con);
	duckdl_unload(&dl);
	unlink(path);
	snprintf(side, sizeof(side), "%s.wal", path);
	unlink(side);
	bb_keys_free(&kk);
}
