/*
 * tpch_pool.c - TPC-H tables into a gpmdb pool (see tpch_pool.h).
 */
#include <stdio.h>

#include "tbl.h"
#include "tpch_pool.h"

/* Fails the transaction: the message, a rollback, the code. */
static int pool_fail(stg_pool *p, int rc, const char *what, const char *msg,
		     char *err, size_t errlen)
{
	snprintf(err, errlen, "%s: %s", what, msg);
	if (stg_in_txn(p))
		stg_rollback(p);
	return rc;
}

static int pool_create(stg_pool *p, tpch_table t, uint32_t *id, char *err,
		       size_t errlen)
{
	const char *name = tpch_table_name(t);
	int rc = stg_begin(p);

	if (rc == GPMDB_OK)
		rc = stg_table_create(p, name, tpch_table_columns(t),
				      tpch_table_ncols(t), tpch_table_sql(t),
				      id);
	if (rc != GPMDB_OK)
		return pool_fail(p, rc, name, stg_errmsg(p), err, errlen);
	return GPMDB_OK;
}

static int pool_append(stg_pool *p, uint32_t id, const tpch_batch *b)
{
	stg_col_batch cols[TPCH_MAX_COLS];

	if (b->nrows == 0)
		return GPMDB_OK;
	tpch_batch_stg(b, cols);
	return stg_append(p, id, cols, b->nrows);
}

int tpch_pool_generate(stg_pool *p, tpch_table t, double sf, uint64_t chunk,
		       int nthreads, uint64_t *rows, char *err, size_t errlen)
{
	const char *name = tpch_table_name(t);
	uint64_t units = tpch_units(t, sf);
	uint32_t id;
	tpch_batch b;
	int rc;

	*rows = 0;
	if (!name || tpch_sf_check(sf, err, errlen) != GPMDB_OK || !chunk)
		return GPMDB_RANGE;
	if ((rc = tpch_batch_init_table(&b, t, chunk)) != GPMDB_OK)
		return pool_fail(p, rc, name, "out of memory", err, errlen);
	if ((rc = pool_create(p, t, &id, err, errlen)) != GPMDB_OK)
		goto out;
	for (uint64_t lo = 0; lo < units; lo += chunk) {
		uint64_t hi = lo + chunk < units ? lo + chunk : units;
		rc = tpch_generate(t, sf, lo, hi, nthreads, &b);
		if (rc != GPMDB_OK) {
			rc = pool_fail(p, rc, name, "generation failed", err,
				       errlen);
			goto out;
		}
		if ((rc = pool_append(p, id, &b)) != GPMDB_OK) {
			rc = pool_fail(p, rc, name, stg_errmsg(p), err, errlen);
			goto out;
		}
		*rows += b.nrows;
	}
	if ((rc = stg_commit(p)) != GPMDB_OK)
		rc = pool_fail(p, rc, name, stg_errmsg(p), err, errlen);
out:
	tpch_batch_free(&b);
	return rc;
}

int tpch_pool_load(stg_pool *p, tpch_table t, const char *path, uint64_t chunk,
		   uint64_t *rows, char *err, size_t errlen)
{
	const char *name = tpch_table_name(t);
	tbl_reader *r;
	uint32_t id;
	tpch_batch b;
	int rc;

	*rows = 0;
	if (!name || !chunk)
		return GPMDB_RANGE;
	rc = tbl_open(path, tpch_table_ncols(t), tpch_table_columns(t), &r, err,
		      errlen);
	if (rc != GPMDB_OK)
		return rc;
	if ((rc = tpch_batch_init_table(&b, t, chunk)) != GPMDB_OK) {
		tbl_close(r);
		return pool_fail(p, rc, name, "out of memory", err, errlen);
	}
	if ((rc = pool_create(p, t, &id, err, errlen)) != GPMDB_OK)
		goto out;
	for (;;) {
		/* the file grown for the next rows' tablets on a thread while
		 * they are parsed */
		(void)stg_grow_ahead(p, id, chunk);
		if ((rc = tbl_read(r, &b, chunk)) != GPMDB_OK) {
			/* The message names file:line already. */
			snprintf(err, errlen, "%s", tbl_errmsg(r));
			stg_rollback(p);
			goto out;
		}
		if (b.nrows == 0)
			break;
		if ((rc = pool_append(p, id, &b)) != GPMDB_OK) {
			rc = pool_fail(p, rc, name, stg_errmsg(p), err, errlen);
			goto out;
		}
		*rows += b.nrows;
	}
	if ((rc = stg_commit(p)) != GPMDB_OK)
		rc = pool_fail(p, rc, name, stg_errmsg(p), err, errlen);
out:
	tpch_batch_free(&b);
	tbl_close(r);
	return rc;
}
