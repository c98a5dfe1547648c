/*
 * keyidx.h - in-memory hash indexes of a connection's PRIMARY KEY and
 * UNIQUE constraints (docs/engine.md, "Key index").
 *
 * One index per (table, unique key), built on first use from the table's
 * columns and then kept up to date by this connection's INSERT, UPDATE
 * and DELETE, so that a statement's check costs O(rows it writes) instead
 * of a pass over the table.  The index always mirrors storage: a
 * statement that fails after changing it drops what it changed
 * (keyidx_stmt_end), a transaction that rolls back drops what it changed
 * (keyidx_txn_end), and any schema change drops everything.  Each index
 * also remembers the table's row and deleted counts and is rebuilt when
 * they are not what it expects (a change made by another path).
 *
 * The checks take storage-layout columns (stg_col_batch: values of the
 * column's width, stg_text for TEXT, a NULL bitmap), the arrays that are
 * then handed to stg_append / stg_update.
 */
#ifndef GPMDB_KEYIDX_H
#define GPMDB_KEYIDX_H

#include "engine.h"

#include <string.h>

/* Which violation a failed check reports: the first key (in the table's
 * key order) that has one, or the lowest offending row over all keys
 * (ties: the first key), the batch API's rule. */
enum { KX_FIRST_KEY = 0, KX_LOWEST_ROW = 1 };

/* The table's unique keys (cached per table until a schema change);
 * *keys stays valid until the next schema change or keyidx_free. */
int keyidx_keys(gpmdb *db, const stg_schema *sch, const dml_key **keys,
		int *nk);

/*
 * Checks n new rows (cols: one storage array per table column) against
 * the table's live rows and each other, and on success adds them to the
 * indexes with the row ids they will get (stg_row_count onwards): the
 * caller must append them next, in the same statement.  On a violation
 * nothing is changed, the message is "UNIQUE constraint failed: t.a[,
 * t.b]" and *bad_row the offending new row (-1: the table itself already
 * has duplicates); returns GPMDB_CONSTRAINT.
 */
int keyidx_insert(gpmdb *db, uint32_t tid, const stg_schema *sch,
		  const stg_col_batch *cols, uint64_t n, int mode,
		  int64_t *bad_row);

/*
 * Checks that setting columns cols[0..ncols) of rows rowids[0..n) to vals
 * keeps every key unique, and on success moves those rows' entries; the
 * caller must apply the update next.  A violation is blamed on the
 * updated row of the offending pair (the later of the pair in row id
 * order when both are updated), *bad_row = blame[i] for that row i (i
 * when blame is NULL).  Row ids must be distinct.
 */
int keyidx_update(gpmdb *db, uint32_t tid, const stg_schema *sch, int ncols,
		  const uint32_t *cols, const uint64_t *rowids, uint64_t n,
		  const stg_col_batch *vals, const int64_t *blame, int mode,
		  int64_t *bad_row);

/* Rows rowids[0..n) (distinct, live) are about to be deleted. */
int keyidx_delete(gpmdb *db, uint32_t tid, const uint64_t *rowids, uint64_t n);

/* Around every writing statement (nested calls of the row-wise batch
 * fallback are counted): ddl for CREATE/DROP, which drop every cached
 * index and key list.  stmt_end with rc != GPMDB_OK drops the indexes
 * the statement changed: storage undoes the statement. */
void keyidx_stmt_begin(gpmdb *db, bool ddl);
void keyidx_stmt_end(gpmdb *db, int rc);
/* The storage transaction ended: committed keeps everything, a rollback
 * drops the indexes it changed (everything after DDL). */
void keyidx_txn_end(gpmdb *db, bool committed);
/* Drops every index and key list (schema changes, close). */
void keyidx_reset(gpmdb *db);
void keyidx_free(gpmdb *db);

/* A non-TEXT key value's bits, so that equal SQL values are equal bits:
 * integers as int64, reals as double bits with -0.0 as 0.0.  Shared by
 * the indexes and batch.c's key matching, which must agree. */
static inline uint64_t keyidx_num_bits(stg_type t, const void *arr, uint64_t i)
{
	double d;
	uint64_t u;

	switch (t) {
	case STG_T_INT:
	case STG_T_DATE:
		return (uint64_t)(int64_t)((const int32_t *)arr)[i];
	case STG_T_BOOLEAN:
		return ((const uint8_t *)arr)[i];
	case STG_T_FLOAT:
		d = ((const float *)arr)[i];
		break;
	case STG_T_DOUBLE:
		d = ((const double *)arr)[i];
		break;
	default:
		return (uint64_t)((const int64_t *)arr)[i];
	}
	if (d == 0)
		d = 0; /* -0.0 equals 0.0 */
	memcpy(&u, &d, 8);
	return u;
}

/* The 64-bit finaliser both key hashes mix with. */
static inline uint64_t keyidx_mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	x ^= x >> 33;
	return x;
}

#endif /* GPMDB_KEYIDX_H */
