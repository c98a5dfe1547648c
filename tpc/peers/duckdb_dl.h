/*
 * duckdb_dl.h - DuckDB (libduckdb.so, C API) loaded at run time with dlopen.
 *
 * Benchmarks compare gpmdb with DuckDB in the same run, but DuckDB is not a
 * build dependency: tpc/peers/fetch_duckdb.sh puts libduckdb.so under
 * .peers/duckdb/ (ignored by git) and this module loads it when a benchmark
 * starts.  When it cannot be loaded, the benchmark prints "not installed".
 *
 * Only the functions the benchmarks call are declared, with the signatures
 * of DuckDB's documented C API (duckdb.h, 1.x).  Handles are opaque
 * pointers; duckdl_result has the layout of duckdb_result, which callers
 * allocate and DuckDB fills.
 *
 * Usage:
 *   duckdl d;
 *   if (duckdl_load(&d, NULL, err, sizeof err) != 0) -> "not installed"
 *   duckdl_database db; duckdl_connection con;
 *   duckdl_open_mem(&d, nthreads, &db, &con, err, sizeof err);
 *   duckdl_exec(&d, con, "CREATE TABLE ...", err, sizeof err);
 *   ... d.query / d.appender_create / d.fetch_chunk ...
 *   duckdl_close(&d, &db, &con); duckdl_unload(&d);
 */
#ifndef GPMDB_DUCKDB_DL_H
#define GPMDB_DUCKDB_DL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Default place of the library, relative to the repository root; the
 * environment variable GPMDB_DUCKDB_LIB overrides it. */
#define DUCKDL_DEFAULT_PATH ".peers/duckdb/libduckdb.so"

typedef uint64_t duckdl_idx;
typedef void *duckdl_database;
typedef void *duckdl_connection;
typedef void *duckdl_config;
typedef void *duckdl_appender;
typedef void *duckdl_prepared;
typedef void *duckdl_chunk;
typedef void *duckdl_vector;
typedef void *duckdl_logical_type;

/* duckdb_state: DuckDBSuccess = 0, DuckDBError = 1. */
#define DUCKDL_OK 0

/* duckdb_type values the benchmarks read or build chunks of (duckdb.h's
 * DUCKDB_TYPE enum). */
#define DUCKDL_TYPE_INTEGER 4
#define DUCKDL_TYPE_BIGINT  5
#define DUCKDL_TYPE_FLOAT   10
#define DUCKDL_TYPE_DOUBLE  11
#define DUCKDL_TYPE_VARCHAR 17
#define DUCKDL_TYPE_DECIMAL 19

/* The layout of duckdb_result; fields are DuckDB's, read only through the
 * functions below. */
typedef struct {
	duckdl_idx column_count_;
	duckdl_idx row_count_;
	duckdl_idx rows_changed_;
	void *columns_;
	char *error_message_;
	void *internal_data_;
} duckdl_result;

typedef struct {
	void *handle;	 /* dlopen handle */
	char path[1024]; /* where it was loaded from */

	const char *(*library_version)(void);
	/* Configuration and connections. */
	int (*create_config)(duckdl_config *out);
	int (*set_config)(duckdl_config c, const char *name, const char *value);
	void (*destroy_config)(duckdl_config *c);
	int (*open_ext)(const char *path, duckdl_database *out, duckdl_config c,
			char **out_error);
	void (*close)(duckdl_database *db);
	int (*connect)(duckdl_database db, duckdl_connection *out);
	void (*disconnect)(duckdl_connection *con);
	void (*free)(void *p);
	/* Queries and materialised results. */
	int (*query)(duckdl_connection con, const char *sql,
		     duckdl_result *out);
	void (*destroy_result)(duckdl_result *r);
	const char *(*result_error)(duckdl_result *r);
	duckdl_idx (*row_count)(duckdl_result *r);
	duckdl_idx (*column_count)(duckdl_result *r);
	int (*column_type)(duckdl_result *r, duckdl_idx col);
	bool (*value_is_null)(duckdl_result *r, duckdl_idx col, duckdl_idx row);
	int64_t (*value_int64)(duckdl_result *r, duckdl_idx col,
			       duckdl_idx row);
	double (*value_double)(duckdl_result *r, duckdl_idx col,
			       duckdl_idx row);
	/* malloc'd by DuckDB: release with free above. */
	char *(*value_varchar)(duckdl_result *r, duckdl_idx col,
			       duckdl_idx row);
	/* Chunks: columnar access to a result (fetch until NULL). */
	duckdl_chunk (*fetch_chunk)(duckdl_result r);
	duckdl_idx (*chunk_size)(duckdl_chunk c);
	duckdl_vector (*chunk_vector)(duckdl_chunk c, duckdl_idx col);
	void *(*vector_data)(duckdl_vector v);
	uint64_t *(*vector_validity)(duckdl_vector v); /* NULL: all valid */
	void (*destroy_chunk)(duckdl_chunk *c);
	/* Chunks built by the caller (appended with append_data_chunk):
	 * columns of logical types, at most vector_size() rows; after
	 * chunk_reset the vectors' data pointers must be read again. */
	duckdl_idx (*vector_size)(void);
	duckdl_logical_type (*create_logical_type)(int duckdb_type);
	void (*destroy_logical_type)(duckdl_logical_type *t);
	duckdl_chunk (*create_data_chunk)(duckdl_logical_type *types,
					  duckdl_idx ncols);
	void (*chunk_reset)(duckdl_chunk c);
	void (*chunk_set_size)(duckdl_chunk c, duckdl_idx size);
	/* Prepared statements (parameters are numbered from 1). */
	int (*prepare)(duckdl_connection con, const char *sql,
		       duckdl_prepared *out);
	const char *(*prepare_error)(duckdl_prepared p);
	int (*bind_int32)(duckdl_prepared p, duckdl_idx i, int32_t v);
	int (*bind_int64)(duckdl_prepared p, duckdl_idx i, int64_t v);
	int (*bind_double)(duckdl_prepared p, duckdl_idx i, double v);
	int (*bind_varchar)(duckdl_prepared p, duckdl_idx i, const char *v);
	int (*bind_null)(duckdl_prepared p, duckdl_idx i);
	int (*execute_prepared)(duckdl_prepared p, duckdl_result *out);
	void (*destroy_prepare)(duckdl_prepared *p);
	/* Appender: row by row, one append_* per column, then end_row; or
	 * whole chunks whose column types are exactly the table's
	 * (append_data_chunk copies the chunk, which can then be reused). */
	int (*appender_create)(duckdl_connection con, const char *schema,
			       const char *table, duckdl_appender *out);
	const char *(*appender_error)(duckdl_appender a);
	int (*append_int32)(duckdl_appender a, int32_t v);
	int (*append_int64)(duckdl_appender a, int64_t v);
	int (*append_double)(duckdl_appender a, double v);
	int (*append_varchar_length)(duckdl_appender a, const char *s,
				     duckdl_idx len);
	int (*append_null)(duckdl_appender a);
	int (*appender_end_row)(duckdl_appender a);
	int (*append_data_chunk)(duckdl_appender a, duckdl_chunk c);
	int (*appender_flush)(duckdl_appender a);
	int (*appender_close)(duckdl_appender a);
	int (*appender_destroy)(duckdl_appender *a);
} duckdl;

/*
 * Loads the library from path (NULL: $GPMDB_DUCKDB_LIB, else
 * DUCKDL_DEFAULT_PATH) and resolves every function above.  Returns 0, or
 * -1 with the reason in err (no such file, a missing symbol).
 */
int duckdl_load(duckdl *d, const char *path, char *err, size_t errlen);
void duckdl_unload(duckdl *d);

/* Opens an in-memory database with nthreads worker threads (0: DuckDB's
 * default, all cores) and one connection.  Returns 0 or -1 with err. */
int duckdl_open_mem(duckdl *d, int nthreads, duckdl_database *db,
		    duckdl_connection *con, char *err, size_t errlen);
/* The same for a database file at path (created when missing; NULL: in
 * memory), so that it can be closed and opened again (cold runs). */
int duckdl_open(duckdl *d, const char *path, int nthreads, duckdl_database *db,
		duckdl_connection *con, char *err, size_t errlen);
void duckdl_close(duckdl *d, duckdl_database *db, duckdl_connection *con);

/* Runs sql, discarding any result.  Returns 0 or -1 with err. */
int duckdl_exec(duckdl *d, duckdl_connection con, const char *sql, char *err,
		size_t errlen);

#endif /* GPMDB_DUCKDB_DL_H */
