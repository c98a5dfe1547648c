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

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GPMDB_VERSION	     "0.1.0"
#define GPMDB_VERSION_NUMBER 1000

/* Result codes. */
#define GPMDB_OK	 0  /* success */
#define GPMDB_ERROR	 1  /* generic error (SQL error, missing object) */
#define GPMDB_INTERNAL	 2  /* an internal invariant failed */
#define GPMDB_PERM	 3  /* access permission denied */
#define GPMDB_ABORT	 4  /* operation aborted */
#define GPMDB_BUSY	 5  /* the database is locked by another writer */
#define GPMDB_NOMEM	 7  /* out of memory (host or GPU) */
#define GPMDB_READONLY	 8  /* write to a database opened read-only */
#define GPMDB_INTERRUPT	 9  /* interrupted (Ctrl-C) */
#define GPMDB_IOERR	 10 /* an operating-system I/O call failed */
#define GPMDB_CORRUPT	 11 /* the pool file is damaged */
#define GPMDB_NOTFOUND	 12 /* no such object */
#define GPMDB_FULL	 13 /* database or disk is full */
#define GPMDB_CANTOPEN	 14 /* unable to open the file */
#define GPMDB_PROTOCOL	 15 /* locking protocol error */
#define GPMDB_SCHEMA	 17 /* the schema changed */
#define GPMDB_TOOBIG	 18 /* string or blob too big */
#define GPMDB_CONSTRAINT 19 /* constraint violation */
#define GPMDB_MISMATCH	 20 /* data type mismatch */
#define GPMDB_MISUSE	 21 /* library used incorrectly */
#define GPMDB_RANGE	 25 /* parameter index out of range */
#define GPMDB_NOTADB                                                           \
	26	     /* file is not a gpmdb database (or another version)      \
		      */
#define GPMDB_GPU 30 /* a CUDA call failed */
#define GPMDB_UNSUPPORTED                                                      \
	31	       /* the feature is not supported (message says which) */
#define GPMDB_ROW  100 /* gpmdb_step() has another row ready */
#define GPMDB_DONE 101 /* gpmdb_step() has finished executing */

/* The library's version string, e.g. "0.1.0". */
const char *gpmdb_libversion(void);

/* A short English description of a result code ("database is locked"). */
const char *gpmdb_errstr(int rc);

/*
 * Threading: a gpmdb connection and its statements may be used by one
 * thread at a time (like SQLite's "multi-thread" mode).  Different
 * connections may be used from different threads.  Any number of
 * connections, in this process or others, may open a database file
 * read-write or read-only; one at a time writes: a write transaction takes
 * the write lock at its first write and gives it back at its end, and
 * another writer waits up to the busy timeout (gpmdb_busy_timeout), then
 * gets GPMDB_BUSY ("database is locked").  Reads see committed states
 * only (README "Concurrency").
 */
typedef struct gpmdb gpmdb;
typedef struct gpmdb_stmt gpmdb_stmt;

/* gpmdb_open_v2 flags. */
#define GPMDB_OPEN_READONLY  0x01
#define GPMDB_OPEN_READWRITE 0x02
#define GPMDB_OPEN_CREATE    0x04

/* Options for gpmdb_open_v2; NULL or zeroed fields mean the defaults. */
typedef struct {
	const char *durability; /* "auto" (default), "pmem", "msync", "off" */
	const char *backend;	/* "auto" (default), "cpu", "gpu" */
	unsigned long long max_size; /* pool size limit, bytes; 0 = default */
} gpmdb_options;

/* Opens (and with GPMDB_OPEN_CREATE creates) a database.  *db is set even
 * on failure (unless out of memory) so that gpmdb_errmsg can say why; close
 * it with gpmdb_close.  path ":memory:" or "": a new in-memory database
 * that lives until gpmdb_close and leaves no file (each open its own;
 * durability off; not GPMDB_OPEN_READONLY). */
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
#define GPMDB_FLOAT   2
#define GPMDB_TEXT    3
#define GPMDB_NULL    5

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

/*
 * Stops the statement running on db as soon as the executor next checks
 * (between batches of rows and between operators): its gpmdb_step returns
 * GPMDB_INTERRUPT with the message "interrupted", and a writing statement
 * is rolled back (inside BEGIN ... COMMIT, the whole transaction is, as
 * SQLite does).  Safe to call from another thread or a signal handler.
 * A call while no statement runs is forgotten when the next one starts.
 */
void gpmdb_interrupt(gpmdb *db);

/*
 * Online backup in the shape of SQLite's: a copy of src (schema "main" or
 * NULL) in dest_file, taken in steps through a connection of its own.
 * The copy is one committed state of src: in msync mode the state when
 * gpmdb_backup_init ran (other connections keep writing meanwhile); in
 * pmem mode the steps copy while writers go on and the last step copies
 * the zones they changed meanwhile under a snapshot, so the copy is the
 * state at that last step and writers wait only for it.
 *
 * dest_file may be new (created), an earlier copy of this database made
 * by a backup, VACUUM INTO or a checkpoint and unchanged since (then only
 * the 64 KiB zones changed since that copy are written: an incremental
 * backup), or another gpmdb database or incomplete copy (overwritten by
 * a full copy); anything else is refused.  GPMDB_BACKUP_FULL asks for a
 * full copy in any case; gpmdb_backup_status says which it is and why.
 *
 * gpmdb_backup_step copies npages pages (npages < 0: all) and returns
 * GPMDB_OK while pages are left, GPMDB_DONE once all are copied, or an
 * error.  gpmdb_backup_finish makes a complete copy durable with its
 * header written last (a copy cut short is refused at open as an
 * incomplete copy), removes an incomplete one that it created (an old
 * copy rewritten in part stays, marked incomplete, and the next backup
 * to it completes it), frees the handle and returns the backup's first
 * error or GPMDB_OK.  init returns NULL on an error, with the message in
 * src (gpmdb_errmsg).
 */
typedef struct gpmdb_backup gpmdb_backup;
#define GPMDB_BACKUP_FULL 1 /* gpmdb_backup_init_v2: never incremental */
gpmdb_backup *gpmdb_backup_init(const char *dest_file, gpmdb *src,
				const char *src_name);
gpmdb_backup *gpmdb_backup_init_v2(const char *dest_file, gpmdb *src,
				   const char *src_name, int flags);
typedef struct {
	int incremental;	 /* 1: only zones changed since the copy */
	long long zones_total;	 /* zones of the source */
	long long zones_copied;	 /* distinct zones written so far */
	long long bytes_written; /* all passes */
	long long zone_size;	 /* bytes (65536) */
	int passes;		 /* passes over the changed zones */
	char why_full[300];	 /* a full copy: why not incremental */
	/* zones whose changed 64-byte lines went to the copy's delta,
	 * and those entries' bytes (in bytes_written) */
	long long zones_lines;
	long long delta_bytes;
} gpmdb_backup_stat;
int gpmdb_backup_status(gpmdb_backup *b, gpmdb_backup_stat *out);
int gpmdb_backup_step(gpmdb_backup *b, int npages);
int gpmdb_backup_remaining(gpmdb_backup *b);
int gpmdb_backup_pagecount(gpmdb_backup *b);
int gpmdb_backup_finish(gpmdb_backup *b);

/*
 * How long a statement that must write waits for another connection's
 * write transaction (in this process or another) before it fails with
 * GPMDB_BUSY "database is locked", in ms; also how long a reader of a
 * pmem-mode pool waits for a writer.  0 (the default, as SQLite's) fails
 * at once.  PRAGMA busy_timeout reads and sets the same value.
 */
int gpmdb_busy_timeout(gpmdb *db, int ms);

/*
 * Calls cb(arg) about every n units of work of a running statement (a
 * unit is one batch of up to 2048 rows through an operator); a non-zero
 * return interrupts the statement as gpmdb_interrupt does.  n <= 0 or cb
 * NULL removes the handler.  cb runs on the thread that steps.
 */
void gpmdb_progress_handler(gpmdb *db, int n, int (*cb)(void *), void *arg);

/*
 * ---- Batch API: array binding, columnar append, columnar results ----
 * (docs/engine.md, "Batch API"; examples/batch_insert.c)
 *
 * Arrays are described by an element type and, for NULLs, an optional
 * array of NULL flags: ONE BYTE PER VALUE, nonzero = NULL (not a bitmap);
 * a NULL flags pointer means no value is NULL.  Besides the flags, a NaN
 * double and a NULL char pointer are NULL too (as gpmdb_bind_double and
 * gpmdb_bind_text treat them).  Parameter and result rows are counted
 * from 0: "parameter row 17" in a message is values[17].
 */
#define GPMDB_ARRAY_INT32  1 /* int32_t[n] */
#define GPMDB_ARRAY_INT64  2 /* int64_t[n] */
#define GPMDB_ARRAY_DOUBLE 3 /* double[n] */
#define GPMDB_ARRAY_TEXT   4 /* const char *[n], NUL-terminated UTF-8 */

/* One column as a contiguous array. */
typedef struct gpmdb_column_array {
	int type;	      /* GPMDB_ARRAY_* */
	const void *values;   /* n elements of the type */
	const uint8_t *nulls; /* n flags, nonzero = NULL; NULL = none */
} gpmdb_column_array;

/*
 * Array binding: binds n values to parameter i (1-based).  After arrays
 * are bound, ONE gpmdb_step runs a prepared INSERT, UPDATE or DELETE for
 * all n parameter rows as one batch: one transaction (inside BEGIN ...
 * COMMIT: part of it, behind a savepoint), all or nothing.  The step
 * returns GPMDB_DONE, and gpmdb_changes gives the total for the batch.
 *
 * - Every array-bound parameter must have the same n; otherwise the step
 *   fails with GPMDB_MISUSE ("array parameters have different lengths:
 *   ...").  A parameter bound with a scalar (gpmdb_bind_int64 ...) or
 *   left unbound (NULL) has that value in every parameter row.  Binding a
 *   scalar to a parameter ends its array binding; gpmdb_clear_bindings
 *   ends all.  n = 0 is an empty batch (nothing changes).
 * - Arrays are NOT copied: values and nulls must stay valid and unchanged
 *   until the last gpmdb_step that uses the binding has returned.
 * - An error at parameter row k (NOT NULL, UNIQUE/PRIMARY KEY, datatype
 *   mismatch) undoes the whole batch, and the message ends with
 *   "(parameter row k)" for the lowest such k.
 * - Values convert to column types as in an INSERT (SQLite's affinity
 *   rules: text '12' into an INTEGER column is 12; 'abc' is a mismatch).
 * - Array parameters are for INSERT, UPDATE and DELETE only; a SELECT (or
 *   EXPLAIN) with arrays bound fails with GPMDB_MISUSE.
 * - Fast paths (no parsing or planning per row, one pass over the table):
 *   INSERT INTO t [(cols)] VALUES (...) whose values are parameters or
 *   literals; UPDATE t SET c = ?|literal, ... WHERE k1 = ? [AND k2 = ? ...]
 *   and DELETE FROM t WHERE k1 = ? [AND ...] (the parameter keys are
 *   hashed, the table is read once).  Other statements (expressions over
 *   parameters, INSERT ... SELECT, other WHERE clauses, an UPDATE that
 *   sets a WHERE column) run once per parameter row in the same
 *   transaction: the same result, at the speed of n statements.
 * - Results are those of running the statement once per parameter row in
 *   order: parameter rows of an UPDATE that repeat a key apply the last
 *   row's values, and each counts in gpmdb_changes.
 */
int gpmdb_bind_array_int32(gpmdb_stmt *s, int i, const int32_t *values,
			   int64_t n, const uint8_t *nulls);
int gpmdb_bind_array_int64(gpmdb_stmt *s, int i, const int64_t *values,
			   int64_t n, const uint8_t *nulls);
int gpmdb_bind_array_double(gpmdb_stmt *s, int i, const double *values,
			    int64_t n, const uint8_t *nulls);
int gpmdb_bind_array_text(gpmdb_stmt *s, int i, const char *const *values,
			  int64_t n, const uint8_t *nulls);
/* Every parameter back to NULL, array bindings ended. */
int gpmdb_clear_bindings(gpmdb_stmt *s);

/*
 * Columnar append: appends nrows rows to table, whole columns at a time
 * (like DuckDB's Appender, without a call per value).  arrays[j] is the
 * column named column_names[j] (case-insensitive); column_names NULL
 * means ncols == the table's column count, in table order.  Columns left
 * out get their DEFAULT (or NULL).  One transaction (inside BEGIN: part of
 * it, behind a savepoint), all or nothing; gpmdb_changes gives nrows.
 *
 * Types are checked per column before anything is written, and a
 * mismatch fails with GPMDB_MISMATCH naming the column ("column t.b is
 * INTEGER, cannot append a TEXT array to it").  Accepted:
 *   INTEGER/BIGINT/INT/BOOLEAN columns   INT32, INT64
 *   REAL/DOUBLE/FLOAT/DECIMAL columns    INT32, INT64, DOUBLE
 *   TEXT columns                         TEXT
 *   DATE columns                         TEXT ('YYYY-MM-DD')
 * Constraints (NOT NULL, PRIMARY KEY, UNIQUE) and per-value problems
 * (a DECIMAL out of range, a bad date) fail with the message ending in
 * "(row k)".  The arrays are read during the call only.
 */
int gpmdb_append_columns(gpmdb *db, const char *table, int ncols,
			 const char *const *column_names,
			 const gpmdb_column_array *arrays, int64_t nrows);

/*
 * Columnar results: result column i (0-based) of a SELECT as one array,
 * after gpmdb_step returned GPMDB_ROW: *n values, from the current row to
 * the last one (all rows right after the first step; a result larger
 * than PRAGMA memory_limit, read back from a temporary file a chunk at a
 * time: to the chunk's last row, step past it for the next).  Types:
 *   INTEGER, BOOLEAN         GPMDB_ARRAY_INT64
 *   REAL, DECIMAL            GPMDB_ARRAY_DOUBLE
 *   TEXT, DATE ('Y-M-D')     GPMDB_ARRAY_TEXT (char *; NULL entry = NULL)
 *   a column of only NULLs   GPMDB_ARRAY_INT64, every flag set
 * out->nulls is never NULL when *n > 0.  After GPMDB_DONE: *n = 0.
 * Before the first step: GPMDB_MISUSE.  The arrays belong to the
 * statement: valid until the next gpmdb_step, gpmdb_reset or
 * gpmdb_finalize on it (do not free or modify them).
 */
int gpmdb_result_column(gpmdb_stmt *s, int i, gpmdb_column_array *out,
			int64_t *n);

/* Rows changed by the last INSERT, UPDATE or DELETE. */
long long gpmdb_changes(gpmdb *db);
int gpmdb_errcode(gpmdb *db);
const char *gpmdb_errmsg(gpmdb *db);

#ifdef __cplusplus
}
#endif
#endif /* GPMDB_H */
