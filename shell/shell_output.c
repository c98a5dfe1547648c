/*
 * shell_output.c - result rows in the output modes of the sqlite3 shell.
 *
 * The formats follow sqlite3 3.40 byte for byte (tests/shell/golden holds
 * cases whose expected output came from sqlite3 itself), so that its users
 * and their scripts feel at home.  Row-at-a-time modes stream; the columnar
 * modes (column, box, table, markdown) need every row to size the columns.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "shell.h"

static const char *const mode_names[] = {
    [SHELL_MODE_LIST] = "list",		[SHELL_MODE_CSV] = "csv",
    [SHELL_MODE_TABS] = "tabs",		[SHELL_MODE_COLUMN] = "column",
    [SHELL_MODE_BOX] = "box",		[SHELL_MODE_TABLE] = "table",
    [SHELL_MODE_MARKDOWN] = "markdown", [SHELL_MODE_JSON] = "json",
    [SHELL_MODE_LINE] = "line",		[SHELL_MODE_INSERT] = "insert",
    [SHELL_MODE_QUOTE] = "quote",
};

const char *shell_mode_name(enum shell_mode m)
{
	return mode_names[m];
}

int shell_mode_parse(const char *name, enum shell_mode *m)
{
	for (size_t i = 0; i < sizeof(mode_names) / sizeof(mode_names[0]);
	     i++) {
		if (!strcmp(name, mode_names[i])) {
			*m = (enum shell_mode)i;
			return 0;
		}
	}
	return -1;
}

/* A growable string for the columnar modes' cells. */
struct buf {
	char *p;
	size_t len, cap;
};

static void buf_add(struct buf *b, const char *s, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		b->cap = (b->len + n + 1) * 2;
		b->p = realloc(b->p, b->cap);
		if (!b->p) {
			fputs("out of memory\n", stderr);
			exit(1);
		}
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = 0;
}

/* Characters on screen: UTF-8 continuation bytes take no column. */
static int display_width(const char *s)
{
	int n = 0;
	for (; *s; s++)
		if (((unsigned char)*s & 0xc0) != 0x80)
			n++;
	return n;
}

/*
 * Doubles in insert and json output: enough digits to read the same value
 * back ("%.20g"), and always a decimal point so the value stays REAL when
 * the SQL is read again.
 */
static void format_double(char *out, size_t len, double r)
{
	if (isinf(r)) {
		snprintf(out, len, r > 0 ? "1e999" : "-1e999");
		return;
	}
	if (isnan(r)) {
		snprintf(out, len, "NULL");
		return;
	}
	if (r == floor(r) && fabs(r) < 9.2e18) {
		snprintf(out, len, "%lld.0", (long long)r);
		return;
	}
	char tmp[64];
	snprintf(tmp, sizeof(tmp), "%.20g", r);
	char *e = strchr(tmp, 'e');
	if (e && !memchr(tmp, '.', (size_t)(e - tmp)))
		snprintf(out, len, "%.*s.0%s", (int)(e - tmp), tmp, e);
	else
		snprintf(out, len, "%s", tmp);
}

/* 'text' with quotes doubled. */
void shell_output_sql_string(FILE *out, const char *s)
{
	fputc('\'', out);
	for (; *s; s++) {
		if (*s == '\'')
			fputc('\'', out);
		fputc(*s, out);
	}
	fputc('\'', out);
}

/*
 * A string literal that survives line-oriented tools: newlines and
 * carriage returns are written as an escape that replace() undoes, the
 * escape being one the text does not already contain.
 */
static void output_escaped_string(FILE *out, const char *s)
{
	int has_nl = strchr(s, '\n') != NULL, has_cr = strchr(s, '\r') != NULL;
	if (!has_nl && !has_cr) {
		shell_output_sql_string(out, s);
		return;
	}
	const char *nl = strstr(s, "\\n") ? "\\012" : "\\n";
	const char *cr = strstr(s, "\\r") ? "\\015" : "\\r";
	if (has_nl)
		fputs("replace(", out);
	if (has_cr)
		fputs("replace(", out);
	fputc('\'', out);
	for (; *s; s++) {
		if (*s == '\n')
			fputs(nl, out);
		else if (*s == '\r')
			fputs(cr, out);
		else if (*s == '\'')
			fputs("''", out);
		else
			fputc(*s, out);
	}
	fputc('\'', out);
	if (has_cr)
		fprintf(out, ",'%s',char(13))", cr);
	if (has_nl)
		fprintf(out, ",'%s',char(10))", nl);
}

/* "text" with JSON escapes. */
static void output_json_string(FILE *out, const char *s)
{
	fputc('"', out);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		switch (c) {
		case '"':
			fputs("\\\"", out);
			break;
		case '\\':
			fputs("\\\\", out);
			break;
		case '\b':
			fputs("\\b", out);
			break;
		case '\f':
			fputs("\\f", out);
			break;
		case '\n':
			fputs("\\n", out);
			break;
		case '\r':
			fputs("\\r", out);
			break;
		case '\t':
			fputs("\\t", out);
			break;
		default:
			if (c < 0x20)
				fprintf(out, "\\u%04x", c);
			else
				fputc(c, out);
		}
	}
	fputc('"', out);
}

/* "text" for C-like display in .show: escapes for control characters. */
void shell_output_c_string(FILE *out, const char *s)
{
	fputc('"', out);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '\\' || c == '"')
			fprintf(out, "\\%c", c);
		else if (c == '\n')
			fputs("\\n", out);
		else if (c == '\r')
			fputs("\\r", out);
		else if (c == '\t')
			fputs("\\t", out);
		else if (c < 0x20)
			fprintf(out, "\\%03o", c);
		else
			fputc(c, out);
	}
	fputc('"', out);
}

/* CSV quoting: spaces, quotes, control and non-ASCII bytes, the separator. */
static void output_csv(struct shell *sh, const char *s, int is_null)
{
	FILE *out = sh->out;
	if (is_null) {
		fputs(sh->nullvalue, out);
		return;
	}
	int quote = !*s || strstr(s, sh->colsep) != NULL;
	for (const unsigned char *p = (const unsigned char *)s; *p && !quote;
	     p++)
		quote = *p <= ' ' || *p == '"' || *p == '\'' || *p >= 0x7f;
	if (!quote) {
		fputs(s, out);
		return;
	}
	fputc('"', out);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', out);
		fputc(*s, out);
	}
	fputc('"', out);
}

/* A value as SQL: for insert mode and .dump. */
void shell_output_insert_value(FILE *out, gpmdb_stmt *st, int i)
{
	char num[64];
	switch (gpmdb_column_type(st, i)) {
	case GPMDB_NULL:
		fputs("NULL", out);
		break;
	case GPMDB_INTEGER:
		fprintf(out, "%lld", gpmdb_column_int64(st, i));
		break;
	case GPMDB_FLOAT: {
		/* A DECIMAL value of 16 to 18 digits: its exact text (a
		 * double would lose the last digits; INSERT ... VALUES reads
		 * a decimal literal into a DECIMAL column exactly). */
		const char *t = (const char *)gpmdb_column_text(st, i);
		int digits = 0, dots = 0;
		const char *c = t && *t == '-' ? t + 1 : t;
		for (; c && *c; c++) {
			if (*c == '.')
				dots++;
			else if (*c >= '0' && *c <= '9')
				digits++;
			else
				break;
		}
		if (t && c && !*c && dots == 1 && digits >= 16) {
			fputs(t, out);
			break;
		}
		format_double(num, sizeof(num), gpmdb_column_double(st, i));
		fputs(num, out);
		break;
	}
	default:
		output_escaped_string(out,
				      (const char *)gpmdb_column_text(st, i));
	}
}

static const char *cell_text(struct shell *sh, gpmdb_stmt *st, int i)
{
	if (gpmdb_column_type(st, i) == GPMDB_NULL)
		return sh->nullvalue;
	const char *t = (const char *)gpmdb_column_text(st, i);
	return t ? t : sh->nullvalue;
}

/* One row in a row-at-a-time mode; row is the 0-based row number. */
static void output_row(struct shell *sh, gpmdb_stmt *st, int ncol, long row)
{
	FILE *out = sh->out;
	char num[64];

	switch (sh->mode) {
	case SHELL_MODE_LINE: {
		int w = 5;
		for (int i = 0; i < ncol; i++) {
			int n = display_width(gpmdb_column_name(st, i));
			if (n > w)
				w = n;
		}
		if (row > 0)
			fputs(sh->rowsep, out);
		for (int i = 0; i < ncol; i++)
			fprintf(out, "%*s = %s\n", w, gpmdb_column_name(st, i),
				cell_text(sh, st, i));
		break;
	}
	case SHELL_MODE_JSON:
		fputs(row == 0 ? "[{" : ",\n{", out);
		for (int i = 0; i < ncol; i++) {
			if (i)
				fputc(',', out);
			output_json_string(out, gpmdb_column_name(st, i));
			fputc(':', out);
			switch (gpmdb_column_type(st, i)) {
			case GPMDB_NULL:
				fputs("null", out);
				break;
			case GPMDB_INTEGER:
				fprintf(out, "%lld", gpmdb_column_int64(st, i));
				break;
			case GPMDB_FLOAT:
				format_double(num, sizeof(num),
					      gpmdb_column_double(st, i));
				fputs(num, out);
				break;
			default:
				output_json_string(
				    out,
				    (const char *)gpmdb_column_text(st, i));
			}
		}
		fputc('}', out);
		break;
	case SHELL_MODE_INSERT: {
		char *t = shell_quote_ident(sh->insert_table ? sh->insert_table
							     : "table");
		fprintf(out, "INSERT INTO %s", t);
		free(t);
		if (sh->headers) {
			fputc('(', out);
			for (int i = 0; i < ncol; i++) {
				char *c =
				    shell_quote_ident(gpmdb_column_name(st, i));
				fprintf(out, "%s%s", i ? "," : "", c);
				free(c);
			}
			fputc(')', out);
		}
		fputs(" VALUES(", out);
		for (int i = 0; i < ncol; i++) {
			if (i)
				fputc(',', out);
			shell_output_insert_value(out, st, i);
		}
		fputs(");\n", out);
		break;
	}
	case SHELL_MODE_QUOTE:
		if (row == 0 && sh->headers) {
			for (int i = 0; i < ncol; i++) {
				if (i)
					fputs(sh->colsep, out);
				shell_output_sql_string(
				    out, gpmdb_column_name(st, i));
			}
			fputs(sh->rowsep, out);
		}
		for (int i = 0; i < ncol; i++) {
			if (i)
				fputs(sh->colsep, out);
			int type = gpmdb_column_type(st, i);
			if (type == GPMDB_NULL)
				fputs("NULL", out);
			else if (type == GPMDB_TEXT)
				shell_output_sql_string(
				    out,
				    (const char *)gpmdb_column_text(st, i));
			else if (type == GPMDB_FLOAT)
				shell_output_insert_value(out, st, i);
			else
				fputs((const char *)gpmdb_column_text(st, i),
				      out);
		}
		fputs(sh->rowsep, out);
		break;
	case SHELL_MODE_CSV:
		if (row == 0 && sh->headers) {
			for (int i = 0; i < ncol; i++) {
				if (i)
					fputs(sh->colsep, out);
				output_csv(sh, gpmdb_column_name(st, i), 0);
			}
			fputs(sh->rowsep, out);
		}
		for (int i = 0; i < ncol; i++) {
			if (i)
				fputs(sh->colsep, out);
			int null = gpmdb_column_type(st, i) == GPMDB_NULL;
			output_csv(
			    sh,
			    null ? "" : (const char *)gpmdb_column_text(st, i),
			    null);
		}
		fputs(sh->rowsep, out);
		break;
	default: /* list, tabs */
		if (row == 0 && sh->headers) {
			for (int i = 0; i < ncol; i++)
				fprintf(out, "%s%s", i ? sh->colsep : "",
					gpmdb_column_name(st, i));
			fputs(sh->rowsep, out);
		}
		for (int i = 0; i < ncol; i++)
			fprintf(out, "%s%s", i ? sh->colsep : "",
				cell_text(sh, st, i));
		fputs(sh->rowsep, out);
	}
}

/*
 * The part of s that fits on one display line of at most maxw characters
 * (0: no limit): a tab moves to the next multiple of 8, any other control
 * character ends the line.  Appends the piece to b; returns where the next
 * line starts, or NULL when s is used up.
 */
static const char *cell_line(const char *s, int maxw, struct buf *b)
{
	int n = 0;
	const unsigned char *p = (const unsigned char *)s;
	b->len = 0;
	buf_add(b, "", 0);
	while (*p) {
		if (maxw > 0 && n >= maxw)
			return (const char *)p;
		if (*p == '\t') {
			do {
				buf_add(b, " ", 1);
				n++;
			} while ((n & 7) && (maxw <= 0 || n < maxw));
			p++;
			continue;
		}
		if (*p < ' ') {
			if (p[0] == '\r' && p[1] == '\n')
				p++;
			p++;
			return *p ? (const char *)p : NULL;
		}
		const unsigned char *q = p + 1;
		while ((*q & 0xc0) == 0x80)
			q++;
		buf_add(b, (const char *)p, (size_t)(q - p));
		n++;
		p = q;
	}
	return NULL;
}

/* Cells of a columnar result: one string per display line. */
struct grid {
	char **cell;	 /* [row][col], row 0 the header */
	int *row_start;	 /* first display row of each logical row */
	long nrows, cap; /* display rows */
	long nlogical;
	int ncol;
	int multiline;
};

static void grid_add_row(struct grid *g, const char *const *vals,
			 const int *maxw)
{
	const char **rest = calloc((size_t)g->ncol, sizeof(*rest));
	struct buf b = {0};
	int first = 1;
	for (int i = 0; i < g->ncol; i++)
		rest[i] = vals[i];
	g->row_start =
	    realloc(g->row_start, (size_t)(g->nlogical + 2) * sizeof(int));
	g->row_start[g->nlogical++] = (int)g->nrows;
	for (;;) {
		int more = 0;
		for (int i = 0; i < g->ncol; i++)
			more |= rest[i] != NULL;
		if (!more && !first)
			break;
		if (!first)
			g->multiline = 1;
		if (g->nrows == g->cap) {
			g->cap = g->cap ? g->cap * 2 : 64;
			g->cell =
			    realloc(g->cell, (size_t)g->cap * (size_t)g->ncol *
						 sizeof(char *));
		}
		for (int i = 0; i < g->ncol; i++) {
			if (rest[i]) {
				rest[i] = cell_line(rest[i], maxw[i], &b);
				g->cell[g->nrows * g->ncol + i] = strdup(b.p);
			} else {
				g->cell[g->nrows * g->ncol + i] = strdup("");
			}
		}
		g->nrows++;
		first = 0;
	}
	g->row_start[g->nlogical] = (int)g->nrows;
	free(b.p);
	free(rest);
}

static void put_n(FILE *out, const char *s, int n)
{
	for (int i = 0; i < n; i++)
		fputs(s, out);
}

/* A border line of box or table mode. */
static void grid_rule(FILE *out, const int *w, int ncol, const char *left,
		      const char *mid, const char *right, const char *h)
{
	fputs(left, out);
	for (int i = 0; i < ncol; i++) {
		if (i)
			fputs(mid, out);
		put_n(out, h, w[i] + 2);
	}
	fputs(right, out);
	fputc('\n', out);
}

/* align: -1 right, 0 centre, 1 left. */
static void put_cell(FILE *out, const char *s, int w, int align)
{
	int pad = w - display_width(s);
	if (pad < 0)
		pad = 0;
	int left = align < 0 ? pad : align == 0 ? pad / 2 : 0;
	put_n(out, " ", left);
	fputs(s, out);
	put_n(out, " ", pad - left);
}

static void grid_line(struct shell *sh, struct grid *g, long r, const int *w,
		      int header)
{
	FILE *out = sh->out;
	int box = sh->mode == SHELL_MODE_BOX;
	int col = sh->mode == SHELL_MODE_COLUMN;
	const char *bar = box ? "\u2502" : "|";
	if (!col)
		fprintf(out, "%s ", bar);
	for (int i = 0; i < g->ncol; i++) {
		int right = i < sh->nwidths && sh->widths[i] < 0;
		int align = right ? -1 : 1;
		if (header && !col)
			align = 0;
		if (i)
			fprintf(out, col ? "  " : " %s ", bar);
		put_cell(out, g->cell[r * g->ncol + i], w[i], align);
	}
	if (!col)
		fprintf(out, " %s", bar);
	fputc('\n', out);
}

static void grid_print(struct shell *sh, struct grid *g)
{
	FILE *out = sh->out;
	int ncol = g->ncol;
	int *w = calloc((size_t)ncol, sizeof(int));
	for (int i = 0; i < ncol; i++) {
		w[i] = i < sh->nwidths ? abs(sh->widths[i]) : 0;
		for (long r = 0; r < g->nrows; r++) {
			int n = display_width(g->cell[r * ncol + i]);
			if (n > w[i])
				w[i] = n;
		}
	}
	int hdr_rows = g->row_start[1];
	int show_header = sh->mode != SHELL_MODE_COLUMN || sh->headers;
	switch (sh->mode) {
	case SHELL_MODE_BOX:
		grid_rule(out, w, ncol, "\u250c", "\u252c", "\u2510", "\u2500");
		break;
	case SHELL_MODE_TABLE:
		grid_rule(out, w, ncol, "+", "+", "+", "-");
		break;
	default:
		break;
	}
	if (show_header) {
		for (long r = 0; r < hdr_rows; r++)
			grid_line(sh, g, r, w, 1);
		switch (sh->mode) {
		case SHELL_MODE_BOX:
			grid_rule(out, w, ncol, "\u251c", "\u253c", "\u2524",
				  "\u2500");
			break;
		case SHELL_MODE_TABLE:
			grid_rule(out, w, ncol, "+", "+", "+", "-");
			break;
		case SHELL_MODE_MARKDOWN:
			grid_rule(out, w, ncol, "|", "|", "|", "-");
			break;
		default:
			for (int i = 0; i < ncol; i++) {
				if (i)
					fputs("  ", out);
				put_n(out, "-", w[i]);
			}
			fputc('\n', out);
		}
	}
	for (long l = 1; l < g->nlogical; l++) {
		if (l > 1 && g->multiline) {
			if (sh->mode == SHELL_MODE_BOX)
				grid_rule(out, w, ncol, "\u251c", "\u253c",
					  "\u2524", "\u2500");
			else if (sh->mode == SHELL_MODE_TABLE)
				grid_rule(out, w, ncol, "+", "+", "+", "-");
			else if (sh->mode == SHELL_MODE_COLUMN)
				fputc('\n', out);
		}
		for (long r = g->row_start[l]; r < g->row_start[l + 1]; r++)
			grid_line(sh, g, r, w, 0);
	}
	if (sh->mode == SHELL_MODE_BOX)
		grid_rule(out, w, ncol, "\u2514", "\u2534", "\u2518", "\u2500");
	else if (sh->mode == SHELL_MODE_TABLE)
		grid_rule(out, w, ncol, "+", "+", "+", "-");
	free(w);
}

static int is_columnar(enum shell_mode m)
{
	return m == SHELL_MODE_COLUMN || m == SHELL_MODE_BOX ||
	       m == SHELL_MODE_TABLE || m == SHELL_MODE_MARKDOWN;
}

/*
 * Steps st to the end, writing its rows.  Returns GPMDB_DONE, an error
 * code from gpmdb_step, or GPMDB_INTERRUPT after Ctrl-C.
 */
int shell_output_stmt(struct shell *sh, gpmdb_stmt *st)
{
	int ncol = gpmdb_column_count(st);
	int rc;
	long row = 0;
	struct grid g = {0};
	int *maxw = NULL;
	const char **vals = NULL;

	int columnar = is_columnar(sh->mode) && ncol > 0;
	if (columnar) {
		g.ncol = ncol;
		maxw = calloc((size_t)ncol, sizeof(int));
		vals = calloc((size_t)ncol, sizeof(*vals));
		for (int i = 0; i < ncol && i < sh->nwidths; i++)
			maxw[i] = abs(sh->widths[i]);
		for (int i = 0; i < ncol; i++)
			vals[i] = gpmdb_column_name(st, i);
		grid_add_row(&g, vals, maxw);
	}
	while ((rc = gpmdb_step(st)) == GPMDB_ROW) {
		if (shell_interrupted) {
			rc = GPMDB_INTERRUPT;
			break;
		}
		if (!sh->stmt_rows++)
			shell_progress_busy_end(sh); /* rows take the screen */
		if (columnar) {
			for (int i = 0; i < ncol; i++)
				vals[i] = cell_text(sh, st, i);
			grid_add_row(&g, vals, maxw);
		} else {
			output_row(sh, st, ncol, row);
		}
		row++;
	}
	if (sh->mode == SHELL_MODE_JSON && row > 0)
		fputs("]\n", sh->out);
	if (columnar) {
		if (g.nlogical > 1 && rc == GPMDB_DONE)
			grid_print(sh, &g);
		for (long i = 0; i < g.nrows * ncol; i++)
			free(g.cell[i]);
		free(g.cell);
		free(g.row_start);
		free(maxw);
		free(vals);
	}
	return rc;
}
