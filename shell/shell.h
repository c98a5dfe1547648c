/*
 * shell.h - state and module interfaces of the gpmdb shell.
 *
 * The shell talks to the database only through include/gpmdb.h, so that
 * the same sources build against the real engine (build/gpmdb) and against
 * the SQLite test double (build/tests/shell/gpmdb_sqlite).
 *
 * Modules: shell.c (options, input loop, running SQL), shell_output.c
 * (output modes), shell_dot.c (dot-commands), shell_import.c (CSV import),
 * shell_edit.c (libedit: line editing, history, completion, Ctrl-C).
 */
#ifndef GPMDB_SHELL_H
#define GPMDB_SHELL_H

#include <signal.h>
#include <stdio.h>

#include "gpmdb.h"

enum shell_mode {
	SHELL_MODE_LIST,
	SHELL_MODE_CSV,
	SHELL_MODE_TABS,
	SHELL_MODE_COLUMN,
	SHELL_MODE_BOX,
	SHELL_MODE_TABLE,
	SHELL_MODE_MARKDOWN,
	SHELL_MODE_JSON,
	SHELL_MODE_LINE,
	SHELL_MODE_INSERT,
	SHELL_MODE_QUOTE,
};

#define SHELL_MAX_WIDTHS 100

/* The shell's busy timeout until .timeout changes it (ms). */
#define SHELL_BUSY_MS 5000

struct shell {
	gpmdb *db;
	char *db_path;	     /* as given, or the temporary file */
	int readonly;	     /* -readonly or .open --readonly */
	const char *backend; /* -backend, passed to gpmdb_open_v2 */
	int busy_ms;	     /* .timeout: the busy timeout of every open */

	FILE *out;	/* stdout or .output/.once file */
	char *out_name; /* NULL for stdout */
	int out_once;	/* .once: back to stdout after the next statement */

	enum shell_mode mode;
	int headers;	 /* .headers */
	int headers_set; /* the user chose; .mode column then keeps it */
	char colsep[32];
	char rowsep[32];
	char nullvalue[64];
	char *insert_table; /* .mode insert TABLE */
	int widths[SHELL_MAX_WIDTHS];
	int nwidths;

	int bail, echo, timer, show_changes, explain;
	long long total_changes;

	int interactive; /* reading a terminal through libedit */
	int in_args;	 /* running SQL from the command line */
	const char *input_name;
	int lineno;
	int nerrors;
	int quit;

	double stmt_t0; /* when the running statement started */
	long stmt_rows; /* rows it has output (the bar stops at the first) */
	int progress_shown; /* the busy bar is on stderr */
};

/* Set by the SIGINT handler; statements check it between rows. */
extern volatile sig_atomic_t shell_interrupted;

/* shell.c */
int shell_open(struct shell *sh, const char *path, int flags_readonly,
	       int fresh);
void shell_close_db(struct shell *sh);
int shell_run_sql(struct shell *sh, const char *sql, int startline);
int shell_process_file(struct shell *sh, FILE *in, const char *name);
void shell_error(struct shell *sh, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void shell_set_output(struct shell *sh, const char *name, int once);
char *shell_quote_ident(const char *name);
int shell_is_keyword(const char *word, int n);

/* shell_output.c */
int shell_output_stmt(struct shell *sh, gpmdb_stmt *st);
const char *shell_mode_name(enum shell_mode m);
int shell_mode_parse(const char *name, enum shell_mode *m);
void shell_output_insert_value(FILE *out, gpmdb_stmt *st, int i);
void shell_output_sql_string(FILE *out, const char *s);
void shell_output_c_string(FILE *out, const char *s);

/* shell_dot.c */
int shell_dot_command(struct shell *sh, const char *line);
/* Table names (sorted, NULL-terminated) and a table's column names. */
char **shell_catalog_tables(struct shell *sh, const char *like);
char **shell_catalog_columns(struct shell *sh, const char *table);
void shell_free_list(char **list);

/* shell_import.c */
int shell_import(struct shell *sh, int argc, char **argv);

/* shell_edit.c */
int shell_edit_init(struct shell *sh);
/* One line without its newline, malloc'd; NULL at end of input. */
char *shell_edit_readline(struct shell *sh, const char *prompt);
void shell_edit_add_history(const char *line);
void shell_edit_end(void);
/* A progress bar on stderr when it is a terminal; done >= total ends it. */
void shell_progress(const char *what, long long done, long long total);
/* A bar without a total for a running statement (seconds so far), and its
 * removal (a no-op when it is not shown). */
void shell_progress_busy(struct shell *sh, double seconds);
void shell_progress_busy_end(struct shell *sh);

#endif /* GPMDB_SHELL_H */
