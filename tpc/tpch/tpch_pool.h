/*
 * tpch_pool.h - TPC-H tables into a gpmdb pool through the storage API:
 * generated (tpchgen.h) or read from dbgen's .tbl[.gz] files (tbl.h).
 *
 * Each call creates one table (its CREATE TABLE text from
 * tpch_table_sql) and appends all its rows in batches of chunk units,
 * in one transaction: on failure the transaction is rolled back and the
 * pool is as before.  The pool must have no transaction open.
 */
#ifndef GPMDB_TPCH_POOL_H
#define GPMDB_TPCH_POOL_H

#include "tpchgen.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Generates table t at scale factor sf into the pool.  *rows gets the
 * number of rows appended; err the reason of a failure. */
int tpch_pool_generate(stg_pool *p, tpch_table t, double sf, uint64_t chunk,
		       int nthreads, uint64_t *rows, char *err, size_t errlen);

/* Loads table t from the .tbl or .tbl.gz file at path. */
int tpch_pool_load(stg_pool *p, tpch_table t, const char *path, uint64_t chunk,
		   uint64_t *rows, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif
#endif /* GPMDB_TPCH_POOL_H */
