/*
 * duckdb_dl.c - loads libduckdb.so with dlopen (see duckdb_dl.h).
 *
 * The symbols are resolved by name into the function-pointer fields of
 * duckdl; a missing one fails the load with its name, so a library of an
 * unexpected version is reported rather than called.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "duckdb_dl.h"

/* Field of duckdl and the C API symbol it holds. */
typedef struct {
	const char *name;
	size_t off;
} duckdl_sym;

#define DUCKDL_SYM(field, sym)                                                 \
	{                                                                      \
#sym, offsetof(duckdl, field)                                  \
	}

static const duckdl_sym duckdl_syms[] = {
    DUCKDL_SYM(library_version, duckdb_library_version),
    DUCKDL_SYM(create_config, duckdb_create_config),
    DUCKDL_SYM(set_config, duckdb_set_config),
    DUCKDL_SYM(destroy_config, duckdb_destroy_config),
    DUCKDL_SYM(open_ext, duckdb_open_ext),
    DUCKDL_SYM(close, duckdb_close),
    DUCKDL_SYM(connect, duckdb_connect),
    DUCKDL_SYM(disconnect, duckdb_disconnect),
    DUCKDL_SYM(free, duckdb_free),
    DUCKDL_SYM(query, duckdb_query),
    DUCKDL_SYM(destroy_result, duckdb_destroy_result),
    DUCKDL_SYM(result_error, duckdb_result_error),
    DUCKDL_SYM(row_count, duckdb_row_count),
    DUCKDL_SYM(column_count, duckdb_column_count),
    DUCKDL_SYM(column_type, duckdb_column_type),
    DUCKDL_SYM(value_is_null, duckdb_value_is_null),
    DUCKDL_SYM(value_int64, duckdb_value_int64),
    DUCKDL_SYM(value_double, duckdb_value_double),
    DUCKDL_SYM(value_varchar, duckdb_value_varchar),
    DUCKDL_SYM(fetch_chunk, duckdb_fetch_chunk),
    DUCKDL_SYM(chunk_size, duckdb_data_chunk_get_size),
    DUCKDL_SYM(chunk_vector, duckdb_data_chunk_get_vector),
    DUCKDL_SYM(vector_data, duckdb_vector_get_data),
    DUCKDL_SYM(vector_validity, duckdb_vector_get_validity),
    DUCKDL_SYM(destroy_chunk, duckdb_destroy_data_chunk),
    DUCKDL_SYM(vector_size, duckdb_vector_size),
    DUCKDL_SYM(create_logical_type, duckdb_create_logical_type),
    DUCKDL_SYM(destroy_logical_type, duckdb_destroy_logical_type),
    DUCKDL_SYM(create_data_chunk, duckdb_create_data_chunk),
    DUCKDL_SYM(chunk_reset, duckdb_data_chunk_reset),
    DUCKDL_SYM(chunk_set_size, duckdb_data_chunk_set_size),
    DUCKDL_SYM(prepare, duckdb_prepare),
    DUCKDL_SYM(prepare_error, duckdb_prepare_error),
    DUCKDL_SYM(bind_int32, duckdb_bind_int32),
    DUCKDL_SYM(bind_int64, duckdb_bind_int64),
    DUCKDL_SYM(bind_double, duckdb_bind_double),
    DUCKDL_SYM(bind_varchar, duckdb_bind_varchar),
    DUCKDL_SYM(bind_null, duckdb_bind_null),
    DUCKDL_SYM(execute_prepared, duckdb_execute_prepared),
    DUCKDL_SYM(destroy_prepare, duckdb_destroy_prepare),
    DUCKDL_SYM(appender_create, duckdb_appender_create),
    DUCKDL_SYM(appender_error, duckdb_appender_error),
    DUCKDL_SYM(append_int32, duckdb_append_int32),
    DUCKDL_SYM(append_int64, duckdb_append_int64),
    DUCKDL_SYM(append_double, duckdb_append_double),
    DUCKDL_SYM(append_varchar_length, duckdb_append_varchar_length),
    DUCKDL_SYM(append_null, duckdb_append_null),
    DUCKDL_SYM(appender_end_row, duckdb_appender_end_row),
    DUCKDL_SYM(append_data_chunk, duckdb_append_data_chunk),
    DUCKDL_SYM(appender_flush, duckdb_appender_flush),
    DUCKDL_SYM(appender_close, duckdb_appender_close),
    DUCKDL_SYM(appender_destroy, duckdb_appender_destroy),
};

int duckdl_load(duckdl *d, const char *path, char *err, size_t errlen)
{
	memset(d, 0, sizeof(*d));
	if (!path)
		path = getenv("GPMDB_DUCKDB_LIB");
	if (!path || !*path)
		path = DUCKDL_DEFAULT_PATH;
	snprintf(d->path, sizeof(d->path), "%s", path);
	/* RTLD_LOCAL: DuckDB's many symbols stay out of the global scope. */
	d->handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!d->handle) {
		snprintf(err, errlen, "%s", dlerror());
		return -1;
	}
	for (size_t i = 0; i < sizeof(duckdl_syms) / sizeof(duckdl_syms[0]);
	     i++) {
		void *f = dlsym(d->handle, duckdl_syms[i].name);
		if (!f) {
			snprintf(err, errlen, "%s: no symbol %s", path,
				 duckdl_syms[i].name);
			duckdl_unload(d);
			return -1;
		}
		/* POSIX: a function pointer has the size and representation
		 * of void *, which is how dlsym returns it. */
		memcpy((char *)d + duckdl_syms[i].off, &f, sizeof(f));
	}
	return 0;
}

void duckdl_unload(duckdl *d)
{
	if (d->handle)
		dlclose(d->handle);
	memset(d, 0, sizeof(*d));
}

int duckdl_open_mem(duckdl *d, int nthreads, duckdl_database *db,
		    duckdl_connection *con, char *err, size_t errlen)
{
	return duckdl_open(d, NULL, nthreads, db, con, err, errlen);
}

int duckdl_open(duckdl *d, const char *path, int nthreads, duckdl_database *db,
		duckdl_connection *con, char *err, size_t errlen)
{
	duckdl_config cfg = NULL;
	char *oerr = NULL, num[32];

	*db = NULL;
	*con = NULL;
	if (d->create_config(&cfg) != DUCKDL_OK) {
		snprintf(err, errlen, "duckdb_create_config failed");
		return -1;
	}
	if (nthreads > 0) {
		snprintf(num, sizeof(num), "%d", nthreads);
		if (d->set_config(cfg, "threads", num) != DUCKDL_OK) {
			snprintf(err, errlen,
				 "duckdb_set_config threads=%s "
				 "failed",
				 num);
			d->destroy_config(&cfg);
			return -1;
		}
	}
	int rc = d->open_ext(path, db, cfg, &oerr);
	d->destroy_config(&cfg);
	if (rc != DUCKDL_OK) {
		snprintf(err, errlen, "duckdb_open_ext: %s",
			 oerr ? oerr : "failed");
		if (oerr)
			d->free(oerr);
		*db = NULL;
		return -1;
	}
	if (d->connect(*db, con) != DUCKDL_OK) {
		snprintf(err, errlen, "duckdb_connect failed");
		d->close(db);
		*db = NULL;
		*con = NULL;
		return -1;
	}
	return 0;
}

void duckdl_close(duckdl *d, duckdl_database *db, duckdl_connection *con)
{
	if (con && *con)
		d->disconnect(con);
	if (db && *db)
		d->close(db);
}

int duckdl_exec(duckdl *d, duckdl_connection con, const char *sql, char *err,
		size_t errlen)
{
	duckdl_result r;
	int rc = d->query(con, sql, &r);

	/* The result must be destroyed even when the query failed. */
	if (rc != DUCKDL_OK) {
		const char *m = d->result_error(&r);
		snprintf(err, errlen, "%s: %s", sql, m ? m : "failed");
	}
	d->destroy_result(&r);
	return rc == DUCKDL_OK ? 0 : -1;
}
