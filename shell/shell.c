/*
 * shell.c - the gpmdb shell: options, the input loop and running SQL.
 *
 * gpmdb [OPTIONS] [FILENAME [SQL...]]
 *
 * Behaviour and messages follow the sqlite3 shell (3.40) so that its
 * users feel at home; docs/shell.md describes the differences.  The shell
 * uses the database only through include/gpmdb.h.
 */
#include <errno.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <unistd.h>

#include "shell.h"

volatile sig_atomic_t shell_interrupted;

static struct shell *the_shell; /* for the signal handler */

static void on_sigint(int sig)
{
	(void)sig;
	shell_interrupted = 1;
	/* gpmdb_interrupt only sets an atomic flag: signal-safe */
	if (the_shell && the_shell->db)
		gpmdb_interrupt(the_shell->db);
}

void shell_error(struct shell *sh, const char *fmt, ...)
{
	va_list ap;
	/* Keep errors in order with the output when both go to one file. */
	fflush(sh->out);
	fflush(stdout);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	fflush(stderr);
}

int shell_is_keyword(const char *word, int n)
{
	return sqlite3_keyword_check(word, n);
}

/* name, or "name" with quotes doubled when it is not a plain identifier. */
char *shell_quote_ident(const char *name)
{
	int plain = (*name >= 'a' && *name <= 'z') ||
		    (*name >= 'A' && *name <= 'Z') || *name == '_';
	for (const char *p = name; *p && plain; p++)
		plain = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
			(*p >= '0' && *p <= '9') || *p == '_';
	if (plain && !shell_is_keyword(name, (int)strlen(name)))
		return strdup(name);
	char *q = malloc(strlen(name) * 2 + 3), *o = q;
	*o++ = '"';
	for (const char *p = name; *p; p++) {
		if (*p == '"')
			*o++ = '"';
		*o++ = *p;
	}
	*o++ = '"';
	*o = 0;
	return q;
}

void shell_close_db(struct shell *sh)
{
	if (sh->db)
		gpmdb_close(sh->db);
	sh->db = NULL;
	free(sh->db_path);
	sh->db_path = NULL;
}

/*
 * Opens path (NULL: an in-memory database, ":memory:").  fresh: delete
 * an existing file first.
 */
int shell_open(struct shell *sh, const char *path, int readonly, int fresh)
{
	char *p;
	shell_close_db(sh);
	/* no file: an in-memory database (storage's ":memory:") */
	p = strdup(path ? path : ":memory:");
	if (!p)
		return 1;
	if (fresh && path)
		unlink(p);
	sh->db_path = p;
	int flags = readonly ? GPMDB_OPEN_READONLY
			     : GPMDB_OPEN_READWRITE | GPMDB_OPEN_CREATE;
	gpmdb_options o = {.backend = sh->backend};
	int rc = gpmdb_open_v2(p, &sh->db, flags, &o);
	if (rc == GPMDB_OK)
		rc = gpmdb_busy_timeout(sh->db, sh->busy_ms);
	if (rc != GPMDB_OK) {
		shell_error(sh, "Error: unable to open database \"%s\": %s",
			    path ? path : p,
			    sh->db ? gpmdb_errmsg(sh->db) : gpmdb_errstr(rc));
		shell_close_db(sh);
		return 1;
	}
	return 0;
}

void shell_set_output(struct shell *sh, const char *name, int once)
{
	fflush(sh->out);
	if (sh->out != stdout)
		fclose(sh->out);
	sh->out = stdout;
	free(sh->out_name);
	sh->out_name = NULL;
	sh->out_once = 0;
	if (!name || !strcmp(name, "stdout"))
		return;
	FILE *f = fopen(name, "w");
	if (!f) {
		shell_error(sh, "Error: cannot open \"%s\"", name);
		return;
	}
	sh->out = f;
	sh->out_name = strdup(name);
	sh->out_once = once;
}

static double now_real(void)
{
	struct timeval tv;
	gettimeofday(&tv, NULL);
	return (double)tv.tv_sec + (double)tv.tv_usec * 1e-6;
}

static void rusage_times(double *user, double *sys)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	*user = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6;
	*sys = (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
}

/* Statements whose gpmdb_changes() adds to the total of .changes. */
static int is_dml(const char *sql)
{
	static const char *const kw[] = {"insert", "update", "delete",
					 "replace"};
	while (*sql == ' ' || *sql == '\t' || *sql == '\n' || *sql == '\r')
		sql++;
	for (size_t i = 0; i < sizeof(kw) / sizeof(kw[0]); i++)
		if (!strncasecmp(sql, kw[i], strlen(kw[i])))
			return 1;
	return 0;
}

static void report_sql_error(struct shell *sh, int prepare, int startline,
			     const char *msg)
{
	if (sh->in_args)
		shell_error(sh, "Error: %s, %s",
			    prepare ? "in prepare" : "stepping", msg);
	else if (sh->interactive)
		shell_error(sh, "%s error: %s", prepare ? "Parse" : "Runtime",
			    msg);
	else
		shell_error(sh, "%s error near line %d: %s",
			    prepare ? "Parse" : "Runtime", startline, msg);
}

/* Progress handler: after a second, a busy bar until rows come. */
static int stmt_progress(void *arg)
{
	struct shell *sh = arg;
	double t = now_real() - sh->stmt_t0;
	if (!sh->stmt_rows && t >= 1.0)
		shell_progress_busy(sh, t);
	return shell_interrupted != 0;
}

/* The connection's GPU time so far in seconds (PRAGMA gpu_stats,
 * gpu_time_us), or -1 when the library has none to tell (no GPU backend
 * built, or another library behind gpmdb.h). */
static double gpu_seconds(struct shell *sh)
{
	gpmdb_stmt *st = NULL;
	double v = -1;

	if (!sh->timer ||
	    gpmdb_prepare(sh->db, "PRAGMA gpu_stats", -1, &st, NULL) !=
		GPMDB_OK ||
	    !st) {
		gpmdb_finalize(st);
		return -1;
	}
	while (gpmdb_step(st) == GPMDB_ROW)
		if (gpmdb_column_count(st) >= 2 && gpmdb_column_text(st, 0) &&
		    !strcmp((const char *)gpmdb_column_text(st, 0),
			    "gpu_time_us"))
			v = gpmdb_column_double(st, 1) / 1e6;
	gpmdb_finalize(st);
	return v;
}

/*
 * Runs every statement of sql, stopping at the first error.  Returns 0, or
 * 1 after an error (already reported).
 */
int shell_run_sql(struct shell *sh, const char *sql, int startline)
{
	const char *p = sql;
	int err = 0;

	shell_interrupted = 0;
	while (p && *p) {
		gpmdb_stmt *st = NULL;
		const char *tail = NULL;
		double t0 = now_real(), u0, s0, g0 = gpu_seconds(sh);
		rusage_times(&u0, &s0);

		int rc = gpmdb_prepare(sh->db, p, -1, &st, &tail);
		if (rc != GPMDB_OK) {
			report_sql_error(sh, 1, startline,
					 gpmdb_errmsg(sh->db));
			err = 1;
			break;
		}
		if (!st) {
			if (!tail || tail == p)
				break;
			p = tail;
			continue;
		}
		/* the progress bar (stderr, terminal only) for statements
		 * that run longer than a second; the handler also sees a
		 * Ctrl-C that came before the statement started */
		sh->stmt_t0 = t0;
		sh->stmt_rows = 0;
		gpmdb_progress_handler(sh->db, 256, stmt_progress, sh);
		rc = shell_output_stmt(sh, st);
		gpmdb_progress_handler(sh->db, 0, NULL, NULL);
		shell_progress_busy_end(sh);
		if (rc != GPMDB_DONE) {
			const char *msg = rc == GPMDB_INTERRUPT
					      ? "interrupted"
					      : gpmdb_errmsg(sh->db);
			report_sql_error(sh, 0, startline, msg);
			gpmdb_finalize(st);
			err = 1;
			break;
		}
		gpmdb_finalize(st);
		if (is_dml(p))
			sh->total_changes += gpmdb_changes(sh->db);
		if (sh->show_changes)
			fprintf(sh->out,
				"changes: %lld   total_changes: %lld\n",
				gpmdb_changes(sh->db), sh->total_changes);
		if (sh->timer) {
			double u1, s1;
			rusage_times(&u1, &s1);
			fflush(sh->out);
			double g1 = g0 >= 0 ? gpu_seconds(sh) : -1;
			/* sqlite3's line; GPU time added when the GPU ran */
			if (g1 > g0 && g0 >= 0)
				printf("Run Time: real %.3f user %f sys %f "
				       "gpu %f\n",
				       now_real() - t0, u1 - u0, s1 - s0,
				       g1 - g0);
			else
				printf("Run Time: real %.3f user %f sys %f\n",
				       now_real() - t0, u1 - u0, s1 - s0);
		}
		p = tail;
	}
	if (sh->out_once)
		shell_set_output(sh, NULL, 0);
	fflush(sh->out);
	return err;
}

static int all_space(const char *s)
{
	for (; *s; s++)
		if (*s != ' ' && *s != '\t' && *s != '\r' && *s != '\n' &&
		    *s != '\f' && *s != '\v')
			return 0;
	return 1;
}

/* One line from a non-terminal input, without its newline. */
static char *read_line(FILE *in)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t n = getline(&line, &cap, in);
	if (n < 0) {
		free(line);
		return NULL;
	}
	if (n > 0 && line[n - 1] == '\n')
		line[--n] = 0;
	/* NUL bytes (binary input) end the line as the SQL text would. */
	return line;
}

/*
 * Reads SQL and dot-commands from in (or the terminal when the shell is
 * interactive and in is stdin) until the end or .quit.  Returns the
 * number of errors.
 */
int shell_process_file(struct shell *sh, FILE *in, const char *name)
{
	const char *saved_name = sh->input_name;
	int saved_line = sh->lineno;
	int interactive = sh->interactive && in == stdin;
	char *sql = NULL;
	size_t len = 0, cap = 0;
	int startline = 0, errors = 0;

	sh->input_name = name;
	sh->lineno = 0;
	while (!sh->quit) {
		char *line;
		if (interactive) {
			line = shell_edit_readline(sh, len ? "   ...> "
							   : "gpmdb> ");
			if (!line && shell_interrupted) {
				/* Ctrl-C at the prompt drops the input. */
				shell_interrupted = 0;
				len = 0;
				continue;
			}
		} else {
			line = read_line(in);
		}
		if (!line)
			break;
		sh->lineno++;
		if (len == 0) {
			if (all_space(line)) {
				free(line);
				continue;
			}
			if (line[0] == '.' || line[0] == '#') {
				if (interactive)
					shell_edit_add_history(line);
				if (sh->echo)
					fprintf(sh->out, "%s\n", line);
				int rc = line[0] == '#'
					     ? 0
					     : shell_dot_command(sh, line);
				free(line);
				if (rc) {
					errors++;
					if (sh->bail)
						break;
				}
				continue;
			}
			startline = sh->lineno;
		}
		if (interactive)
			shell_edit_add_history(line);
		size_t n = strlen(line);
		if (len + n + 2 > cap) {
			cap = (len + n + 2) * 2;
			sql = realloc(sql, cap);
		}
		memcpy(sql + len, line, n);
		len += n;
		sql[len++] = '\n';
		sql[len] = 0;
		free(line);
		if (sqlite3_complete(sql)) {
			if (sh->echo)
				fprintf(sh->out, "%.*s\n", (int)len - 1, sql);
			int rc = shell_run_sql(sh, sql, startline);
			len = 0;
			if (rc) {
				errors++;
				if (sh->bail)
					break;
			}
		}
	}
	if (len && !all_space(sql) && !(sh->bail && errors)) {
		if (sh->echo)
			fprintf(sh->out, "%.*s\n", (int)len - 1, sql);
		if (shell_run_sql(sh, sql, startline))
			errors++;
	}
	free(sql);
	sh->input_name = saved_name;
	sh->lineno = saved_line;
	sh->nerrors += errors;
	return errors;
}

static void usage(FILE *f)
{
	fputs("Usage: gpmdb [OPTIONS] [FILENAME [SQL...]]\n"
	      "FILENAME is the name of a gpmdb database.  A new database is "
	      "created\nif the file does not exist; without FILENAME a "
	      "temporary database\nis used and removed at exit.\n"
	      "OPTIONS include:\n"
	      "   -backend auto|cpu|gpu  execution backend\n"
	      "   -bail                stop after hitting an error\n"
	      "   -batch               force batch I/O\n"
	      "   -box                 set output mode to 'box'\n"
	      "   -cmd COMMAND         run \"COMMAND\" before reading stdin\n"
	      "   -column              set output mode to 'column'\n"
	      "   -csv                 set output mode to 'csv'\n"
	      "   -echo                print inputs before execution\n"
	      "   -header              turn headers on\n"
	      "   -help                show this message\n"
	      "   -interactive         force interactive I/O\n"
	      "   -json                set output mode to 'json'\n"
	      "   -noheader            turn headers off\n"
	      "   -readonly            open the database read-only\n"
	      "   -version             show the gpmdb version\n",
	      f);
}

static void shell_init(struct shell *sh)
{
	memset(sh, 0, sizeof(*sh));
	sh->out = stdout;
	sh->mode = SHELL_MODE_LIST;
	/* wait for another connection's write rather than fail at once (an
	 * interactive user would retry by hand anyway) */
	sh->busy_ms = SHELL_BUSY_MS;
	strcpy(sh->colsep, "|");
	strcpy(sh->rowsep, "\n");
	sh->explain = 2; /* auto */
}

/* Runs a -cmd or argument: a dot-command or SQL.  Returns 0 or 1. */
static int run_command(struct shell *sh, const char *cmd)
{
	if (cmd[0] == '.')
		return shell_dot_command(sh, cmd) != 0;
	sh->in_args = 1;
	int rc = shell_run_sql(sh, cmd, 1);
	sh->in_args = 0;
	return rc;
}

int main(int argc, char **argv)
{
	struct shell shell, *sh = &shell;
	const char *file = NULL;
	const char **cmds = calloc((size_t)argc + 1, sizeof(char *));
	int ncmds = 0, first_sql = 0, batch = 0, force_interactive = 0;

	shell_init(sh);
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (a[0] != '-' || !a[1]) {
			file = a;
			first_sql = i + 1;
			break;
		}
		if (a[1] == '-')
			a++; /* --opt as -opt */
		if (!strcmp(a, "-csv")) {
			sh->mode = SHELL_MODE_CSV;
			strcpy(sh->colsep, ",");
			strcpy(sh->rowsep, "\r\n");
		} else if (!strcmp(a, "-json")) {
			sh->mode = SHELL_MODE_JSON;
		} else if (!strcmp(a, "-box")) {
			sh->mode = SHELL_MODE_BOX;
		} else if (!strcmp(a, "-column")) {
			sh->mode = SHELL_MODE_COLUMN;
		} else if (!strcmp(a, "-header")) {
			sh->headers = sh->headers_set = 1;
		} else if (!strcmp(a, "-noheader")) {
			sh->headers = 0;
			sh->headers_set = 1;
		} else if (!strcmp(a, "-bail")) {
			sh->bail = 1;
		} else if (!strcmp(a, "-batch")) {
			batch = 1;
		} else if (!strcmp(a, "-interactive")) {
			force_interactive = 1;
		} else if (!strcmp(a, "-echo")) {
			sh->echo = 1;
		} else if (!strcmp(a, "-readonly")) {
			sh->readonly = 1;
		} else if (!strcmp(a, "-version")) {
			printf("%s\n", gpmdb_libversion());
			free(cmds);
			return 0;
		} else if (!strcmp(a, "-help")) {
			usage(stdout);
			free(cmds);
			return 0;
		} else if (!strcmp(a, "-cmd") || !strcmp(a, "-backend")) {
			if (i + 1 >= argc) {
				fprintf(stderr,
					"Error: missing argument to %s\n", a);
				free(cmds);
				return 1;
			}
			if (a[1] == 'c') {
				cmds[ncmds++] = argv[++i];
			} else {
				sh->backend = argv[++i];
				if (strcmp(sh->backend, "cpu") &&
				    strcmp(sh->backend, "gpu") &&
				    strcmp(sh->backend, "auto")) {
					fprintf(stderr,
						"Error: -backend wants auto, "
						"cpu or gpu\n");
					free(cmds);
					return 1;
				}
			}
		} else {
			fprintf(stderr,
				"Error: unknown option: %s\n"
				"Use -help for a list of options.\n",
				argv[i]);
			free(cmds);
			return 1;
		}
	}
	if (sh->mode == SHELL_MODE_COLUMN && !sh->headers_set)
		sh->headers = 1;
	sh->interactive =
	    !first_sql || first_sql >= argc
		? (force_interactive || (!batch && isatty(STDIN_FILENO)))
		: 0;

	the_shell = sh;
	struct sigaction sa = {.sa_handler = on_sigint};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);

	if (shell_open(sh, file, sh->readonly, 0)) {
		free(cmds);
		return 1;
	}
	int status = 0;
	for (int i = 0; i < ncmds && !status; i++)
		if (run_command(sh, cmds[i]) && sh->bail)
			status = 1;
	if (!status && first_sql && first_sql < argc) {
		for (int i = first_sql; i < argc && !sh->quit; i++) {
			if (run_command(sh, argv[i])) {
				status = 1;
				break;
			}
		}
	} else if (!status) {
		if (sh->interactive) {
			printf("gpmdb version %s\n"
			       "Enter \".help\" for usage hints.\n",
			       gpmdb_libversion());
			if (!file)
				printf("Connected to a transient in-memory "
				       "database.\n"
				       "Use \".open FILENAME\" to reopen on a "
				       "persistent database.\n");
			shell_edit_init(sh);
		}
		int errors = shell_process_file(sh, stdin, "stdin");
		if (sh->interactive)
			shell_edit_end();
		if (errors && !sh->interactive)
			status = 1;
	}
	shell_set_output(sh, NULL, 0);
	shell_close_db(sh);
	free(sh->insert_table);
	free(cmds);
	return status;
}
