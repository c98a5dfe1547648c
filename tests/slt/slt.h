/*
 * slt.h - the sqllogictest runner's driver interface.
 *
 * The runner core (slt.c) reads test files, decides which records run,
 * formats, sorts, hashes and compares results; a driver only executes SQL
 * on one engine.  Each driver file defines slt_driver, and the program
 * is the core linked with exactly one driver (build/gpmdb_slt,
 * build/sqlite_slt), so the core can be proved against SQLite before the
 * gpmdb engine exists.
 */
#ifndef SLT_H
#define SLT_H

/* A result value as the engine returned it, before formatting. */
enum slt_vtype { SLT_NULL, SLT_INTEGER, SLT_REAL, SLT_TEXT };

struct slt_value {
	enum slt_vtype type;
	long long i;	  /* SLT_INTEGER */
	double r;	  /* SLT_REAL */
	const char *text; /* SLT_TEXT; for numbers only in 'T' columns */
};

/* Settings from the command line that a driver may use. */
struct slt_options {
	const char *backend;	/* --backend: "cpu", "gpu" or NULL */
	const char *durability; /* --durability or NULL */
	int verbose;
};

/* The result of one query, filled by the driver (opaque to it). */
struct slt_result;

/*
 * Called by the driver once the statement is compiled, with its column
 * count.  Returns 0, or -1 when the count differs from the record's type
 * string: the driver then stops and returns an error (the core has the
 * message).
 */
int slt_result_columns(struct slt_result *res, int ncols);

/* The record's type string ("ITR"), one character a column, so that a
 * driver fetches the text of numbers only for 'T' columns. */
const char *slt_result_types(const struct slt_result *res);

/* Appends one row of slt_result_columns() values. */
void slt_result_row(struct slt_result *res, const struct slt_value *vals);

/*
 * The engine.  Every function returns 0 on success; on failure nonzero and,
 * when err is not NULL, *err set to a message from malloc (or left NULL).
 */
struct slt_driver {
	const char *name; /* engine name for skipif/onlyif by default */
	/* A new, empty database; one per test file. */
	int (*open)(const struct slt_options *opt, void **conn, char **err);
	void (*close)(void *conn);
	/* Runs every statement of sql. */
	int (*statement)(void *conn, const char *sql, char **err);
	/*
	 * Runs the first statement of sql and reports it to res.  An error
	 * once rows have started to come returns SLT_QUERY_ROWS_CUT, not a
	 * plain failure: the reference runner ends the result there and the
	 * corpus expects that (e.g. sum() overflowing gives no rows).
	 */
	int (*query)(void *conn, const char *sql, struct slt_result *res,
		     char **err);
};

#define SLT_QUERY_ROWS_CUT 1 /* query(): stepping failed; rows so far count */

extern const struct slt_driver slt_driver;

#endif /* SLT_H */
