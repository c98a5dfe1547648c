/*
 * shell_import.c - .import: CSV (RFC 4180) into a table, in one
 * transaction.
 *
 * Quoting: a field in "..." may hold separators, newlines and "" for a
 * quote.  An unquoted empty field is NULL and a quoted one ("") the empty
 * string, so that a table written with .mode csv reads back with its NULLs
 * (sqlite3 reads both as ''; this is the one difference).  Bad input (a
 * ragged row, broken quoting, a value the column refuses) names the line
 * and imports nothing.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shell.h"

struct field {
	char *p;
	size_t len, cap;
	int quoted;
};

struct csv {
	FILE *f;
	const char *name;
	int sep;
	long line;     /* current line, 1-based */
	long long pos; /* bytes read, for the progress bar */
	struct field *fld;
	int nfld, cap;
	char err[256];
};

static void field_add(struct field *f, int c)
{
	if (f->len + 2 > f->cap) {
		f->cap = f->cap ? f->cap * 2 : 64;
		f->p = realloc(f->p, f->cap);
	}
	f->p[f->len++] = (char)c;
	f->p[f->len] = 0;
}

static int csv_getc(struct csv *c)
{
	int ch = getc_unlocked(c->f);
	if (ch != EOF)
		c->pos++;
	if (ch == '\n')
		c->line++;
	return ch;
}

static struct field *new_field(struct csv *c)
{
	if (c->nfld == c->cap) {
		c->cap = c->cap ? c->cap * 2 : 16;
		c->fld = realloc(c->fld, (size_t)c->cap * sizeof(*c->fld));
		memset(c->fld + c->nfld, 0,
		       (size_t)(c->cap - c->nfld) * sizeof(*c->fld));
	}
	struct field *f = &c->fld[c->nfld++];
	f->len = 0;
	f->quoted = 0;
	field_add(f, 0);
	f->len = 0;
	return f;
}

/*
 * Reads one record into c->fld.  Returns 1 for a record, 0 at the end of
 * the file, -1 on broken quoting (c->err says where).
 */
static int csv_record(struct csv *c)
{
	int ch = csv_getc(c);
	c->nfld = 0;
	if (ch == EOF)
		return 0;
	for (;;) {
		struct field *f = new_field(c);
		if (ch == '"') {
			long start = c->line;
			f->quoted = 1;
			for (;;) {
				ch = csv_getc(c);
				if (ch == EOF) {
					snprintf(c->err, sizeof(c->err),
						 "%s:%ld: unterminated quoted "
						 "field in column %d",
						 c->name, start, c->nfld);
					return -1;
				}
				if (ch == '"') {
					ch = csv_getc(c);
					if (ch != '"')
						break;
				}
				field_add(f, ch);
			}
			if (ch == '\r') {
				ch = csv_getc(c);
				if (ch != '\n') {
					ch = '?';
				}
			}
			if (ch != c->sep && ch != '\n' && ch != EOF) {
				snprintf(c->err, sizeof(c->err),
					 "%s:%ld: unescaped \" character in "
					 "column %d",
					 c->name, c->line, c->nfld);
				return -1;
			}
		} else {
			while (ch != c->sep && ch != '\n' && ch != EOF) {
				field_add(f, ch);
				ch = csv_getc(c);
			}
			if (f->len && f->p[f->len - 1] == '\r' && ch != c->sep)
				f->p[--f->len] = 0;
		}
		if (ch != c->sep)
			return 1;
		ch = csv_getc(c);
	}
}

static int exec_simple(struct shell *sh, const char *sql)
{
	char *err = NULL;
	int rc = gpmdb_exec(sh->db, sql, NULL, NULL, &err);
	gpmdb_free(err);
	return rc;
}

/* The column names of a new table: the header, empty ones as cN. */
static int create_table(struct shell *sh, struct csv *c, const char *table)
{
	char *sql = NULL, *qt = shell_quote_ident(table);
	size_t len = 0;
	FILE *m = open_memstream(&sql, &len);
	fprintf(m, "CREATE TABLE %s(", qt);
	for (int i = 0; i < c->nfld; i++) {
		char name[32];
		const char *n = c->fld[i].p;
		if (!*n) {
			snprintf(name, sizeof(name), "c%d", i + 1);
			n = name;
		}
		char *q = shell_quote_ident(n);
		fprintf(m, "%s%s TEXT", i ? ", " : "", q);
		free(q);
	}
	fputc(')', m);
	fclose(m);
	char *err = NULL;
	int rc = gpmdb_exec(sh->db, sql, NULL, NULL, &err);
	if (rc != GPMDB_OK)
		shell_error(sh, "Error: %s: %s", sql,
			    err ? err : gpmdb_errmsg(sh->db));
	gpmdb_free(err);
	free(sql);
	free(qt);
	return rc != GPMDB_OK;
}

static int import_usage(struct shell *sh)
{
	shell_error(sh, "Usage: .import [--csv] [--skip N] FILE TABLE");
	return 1;
}

int shell_import(struct shell *sh, int argc, char **argv)
{
	const char *file = NULL, *table = NULL;
	int csv_mode = sh->mode == SHELL_MODE_CSV, skip = 0;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--csv")) {
			csv_mode = 1;
		} else if (!strcmp(argv[i], "--skip") && i + 1 < argc) {
			skip = atoi(argv[++i]);
		} else if (argv[i][0] == '-' && argv[i][1]) {
			return import_usage(sh);
		} else if (!file) {
			file = argv[i];
		} else if (!table) {
			table = argv[i];
		} else {
			return import_usage(sh);
		}
	}
	if (!file || !table)
		return import_usage(sh);

	struct csv c = {.name = file, .line = 1};
	c.sep = csv_mode ? ',' : (unsigned char)sh->colsep[0];
	c.f = !strcmp(file, "-") ? stdin : fopen(file, "r");
	if (!c.f) {
		shell_error(sh, "Error: cannot open \"%s\"", file);
		return 1;
	}
	struct stat stb;
	long long size = 0;
	if (!fstat(fileno(c.f), &stb) && S_ISREG(stb.st_mode))
		size = stb.st_size;
	int progress = size > (1 << 20) && isatty(STDERR_FILENO);

	int rc = 0, r = 1, began = 0;
	gpmdb_stmt *st = NULL;
	char **cols = NULL;
	long rows = 0;

	while (skip-- > 0 && (r = csv_record(&c)) > 0)
		;
	began = exec_simple(sh, "BEGIN") == GPMDB_OK;
	cols = shell_catalog_columns(sh, table);
	if (!cols[0] && r > 0) {
		long line = c.line;
		r = csv_record(&c);
		if (r == 0) {
			shell_error(sh, "Error: %s: empty file", file);
			rc = 1;
			goto out;
		}
		if (r < 0) {
			shell_error(sh, "Error: %s", c.err);
			rc = 1;
			goto out;
		}
		(void)line;
		if (create_table(sh, &c, table)) {
			rc = 1;
			goto out;
		}
		shell_free_list(cols);
		cols = shell_catalog_columns(sh, table);
	}
	int ncol = 0;
	while (cols[ncol])
		ncol++;
	if (!ncol) {
		shell_error(sh, "Error: no such table: %s", table);
		rc = 1;
		goto out;
	}

	char *sql = NULL, *qt = shell_quote_ident(table);
	size_t len = 0;
	FILE *m = open_memstream(&sql, &len);
	fprintf(m, "INSERT INTO %s VALUES(", qt);
	for (int i = 0; i < ncol; i++)
		fputs(i ? ",?" : "?", m);
	fputc(')', m);
	fclose(m);
	free(qt);
	if (gpmdb_prepare(sh->db, sql, -1, &st, NULL) != GPMDB_OK) {
		shell_error(sh, "Error: %s", gpmdb_errmsg(sh->db));
		free(sql);
		rc = 1;
		goto out;
	}
	free(sql);

	for (;;) {
		long line = c.line;
		r = csv_record(&c);
		if (r == 0)
			break;
		if (r < 0) {
			shell_error(sh, "Error: %s", c.err);
			rc = 1;
			break;
		}
		if (shell_interrupted) {
			shell_error(sh, "Error: %s:%ld: interrupted", file,
				    line);
			rc = 1;
			break;
		}
		/* A blank line is not a row. */
		if (c.nfld == 1 && !c.fld[0].len && !c.fld[0].quoted)
			continue;
		if (c.nfld != ncol) {
			shell_error(sh,
				    "Error: %s:%ld: expected %d columns but "
				    "found %d",
				    file, line, ncol, c.nfld);
			rc = 1;
			break;
		}
		for (int i = 0; i < ncol; i++) {
			struct field *f = &c.fld[i];
			if (!f->len && !f->quoted)
				gpmdb_bind_null(st, i + 1);
			else
				gpmdb_bind_text(st, i + 1, f->p, (int)f->len);
		}
		int src = gpmdb_step(st);
		if (src != GPMDB_DONE && src != GPMDB_ROW) {
			shell_error(sh, "Error: %s:%ld: %s", file, line,
				    gpmdb_errmsg(sh->db));
			rc = 1;
			break;
		}
		gpmdb_reset(st);
		rows++;
		if (progress && (rows & 1023) == 0)
			shell_progress("import", c.pos, size);
	}
	if (progress)
		shell_progress("import", size, size);
out:
	if (st)
		gpmdb_finalize(st);
	shell_free_list(cols);
	if (began)
		exec_simple(sh, rc ? "ROLLBACK" : "COMMIT");
	for (int i = 0; i < c.cap; i++)
		free(c.fld[i].p);
	free(c.fld);
	if (c.f != stdin)
		fclose(c.f);
	return rc;
}
