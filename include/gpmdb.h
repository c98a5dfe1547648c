/*
 * gpmdb.h - the public C API of gpmdb, an embedded GPU-accelerated
 * transactional SQL database.
 *
 * Result codes follow SQLite's where the meaning is the same, so that code
 * written against sqlite3 reads naturally.  Every function that can fail
 * returns one of these codes; the message that goes with it (naming the
 * problem and its context) is available from the object that failed.
 */
#ifndef GPMDB_H
#define GPMDB_H

#ifdef __cplusplus
extern "C" {
#endif

#define GPMDB_VERSION "0.1.0"
#define GPMDB_VERSION_NUMBER 1000

/* Result codes. */
#define GPMDB_OK 0          /* success */
#define GPMDB_ERROR 1       /* generic error (SQL error, missing object) */
#define GPMDB_INTERNAL 2    /* an internal invariant failed */
#define GPMDB_PERM 3        /* access permission denied */
#define GPMDB_ABORT 4       /* operation aborted */
#define GPMDB_BUSY 5        /* the database is locked by another writer */
#define GPMDB_NOMEM 7       /* out of memory (host or GPU) */
#define GPMDB_READONLY 8    /* write to a database opened read-only */
#define GPMDB_INTERRUPT 9   /* interrupted (Ctrl-C) */
#define GPMDB_IOERR 10      /* an operating-system I/O call failed */
#define GPMDB_CORRUPT 11    /* the pool file is damaged */
#define GPMDB_NOTFOUND 12   /* no such object */
#define GPMDB_FULL 13       /* database or disk is full */
#define GPMDB_CANTOPEN 14   /* unable to open the file */
#define GPMDB_PROTOCOL 15   /* locking protocol error */
#define GPMDB_SCHEMA 17     /* the schema changed */
#define GPMDB_TOOBIG 18     /* string or blob too big */
#define GPMDB_CONSTRAINT 19 /* constraint violation */
#define GPMDB_MISMATCH 20   /* data type mismatch */
#define GPMDB_MISUSE 21     /* library used incorrectly */
#define GPMDB_RANGE 25      /* parameter index out of range */
#define GPMDB_NOTADB 26     /* file is not a gpmdb database (or another version) */
#define GPMDB_GPU 30        /* a CUDA call failed */
#define GPMDB_UNSUPPORTED 31 /* the feature is not supported (message says which) */
#define GPMDB_ROW 100       /* gpmdb_step() has another row ready */
#define GPMDB_DONE 101      /* gpmdb_step() has finished executing */

/* The library's version string, e.g. "0.1.0". */
const char *gpmdb_libversion(void);

/* A short English description of a result code ("database is locked"). */
const char *gpmdb_errstr(int rc);


/*
 * Threading: a gpmdb connection and its statements may be used by one
 * thread at a time (like SQLite's "multi-thread" mode).  Different
 * connections may be used from different threads.  One process (and one
 * connection) may write a database file at a time; another writer gets
 * GPMDB_BUSY ("database is locked"); readers open with GPMDB_OPEN_READONLY.
 */
typedef struct gpmdb gpmdb;
typedef struct gpmdb_stmt gpmdb_stmt;

/* gpmdb_open_v2 flags. */
#define GPMDB_OPEN_READONLY 0x01
#define GPMDB_OPEN_READWRITE 0x02
#define GPMDB_OPEN_CREATE 0x04

/* Options for gpmdb_open_v2; NULL or zeroed fields mean the defaults. */
typedef struct {
	const char *durability; /* "auto" (default), "pmem", "msync", "off" */
	const char *backend; /* "auto" (default), "cpu", "gpu" */
	unsigned long long max_size; /* pool size limit, bytes; 0 = default */
} gpmdb_options;

/* Opens (and with GPMDB_OPEN_CREATE creates) a database.  *db is set even
 * on failure (unless out of memory) so that gpmdb_errmsg can say why; close
 * it with gpmdb_close. */
int gpmdb_open_v2(const char *path, gpmdb **db, int flags,
		  const gpmdb_options *opts);
int gpmdb_close(gpmdb *db);

/* Runs every statement of sql; calls cb for each result row (column values
 * as text, NULL as a NULL pointer).  On error *errmsg (when not NULL) gets
 * a message to free with gpmdb_free. */
typedef int (*gpmdb_callback)(void *arg, int ncols, char **values,
			      char **names);
int gpmdb_exec(gpmdb *db, const char *sql, gpmdb_callback cb, void *arg,
	       char **errmsg);
void gpmdb_free(void *p);

/* Compiles the first statement of sql (nbyte < 0: up to the NUL); *tail
 * points after it.  An empty statement gives *stmt == NULL and GPMDB_OK. */
int gpmdb_prepare(gpmdb *db, const char *sql, int nbyte, gpmdb_stmt **stmt,
		  const char **tail);

/* Parameters are numbered from 1 (?, ?NNN). */
int gpmdb_bind_int(gpmdb_stmt *s, int i, int v);
int gpmdb_bind_int64(gpmdb_stmt *s, int i, long long v);
int gpmdb_bind_double(gpmdb_stmt *s, int i, double v);
/* n < 0: up to the NUL.  The text is copied. */
int gpmdb_bind_text(gpmdb_stmt *s, int i, const char *v, int n);
int gpmdb_bind_null(gpmdb_stmt *s, int i);
int gpmdb_bind_parameter_count(gpmdb_stmt *s);

/* GPMDB_ROW: a row is ready; GPMDB_DONE: finished; else an error code. */
int gpmdb_step(gpmdb_stmt *s);

/* Value types of result columns, as in SQLite. */
#define GPMDB_INTEGER 1
#define GPMDB_FLOAT 2
#define GPMDB_TEXT 3
#define GPMDB_NULL 5

int gpmdb_column_count(gpmdb_stmt *s);
const char *gpmdb_column_name(gpmdb_stmt *s, int i);
int gpmdb_column_type(gpmdb_stmt *s, int i);
int gpmdb_column_int(gpmdb_stmt *s, int i);
long long gpmdb_column_int64(gpmdb_stmt *s, int i);
double gpmdb_column_double(gpmdb_stmt *s, int i);
/* Valid until the next step, reset or finalize. */
const unsigned char *gpmdb_column_text(gpmdb_stmt *s, int i);
int gpmdb_column_bytes(gpmdb_stmt *s, int i);

int gpmdb_reset(gpmdb_stmt *s);
int gpmdb_finalize(gpmdb_stmt *s);

/* Rows changed by the last INSERT, UPDATE or DELETE. */
long long gpmdb_changes(gpmdb *db);
int gpmdb_errcode(gpmdb *db);
const char *gpmdb_errmsg(gpmdb *db);

#ifdef __cplusplus
}
#endif
#endif /* GPMDB_H */
