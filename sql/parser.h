/*
 * parser.h - the SQL parser's entry point.
 *
 *	parse_result r;
 *	int rc = parse_sql(sql, len, &r);
 *	... r.stmt (NULL for empty input), r.tail, or r.errmsg ...
 *	parse_result_free(&r);
 *
 * parse_sql reads the first statement of sql[0..len) (stopping at a NUL
 * byte), up to and including its ';'.  r.tail is the offset just past
 * what was read, so that a caller can loop over a script.  Leading empty
 * statements (";", comments) are skipped; input with no statement gives
 * GPMDB_OK with r.stmt == NULL and r.tail == len.
 *
 * On error r.rc is the code (GPMDB_ERROR for syntax errors,
 * GPMDB_UNSUPPORTED for features gpmdb does not have, GPMDB_NOMEM,
 * GPMDB_TOOBIG), r.errmsg says what went wrong in SQLite's words where
 * SQLite has them (`near "FORM": syntax error`, `incomplete input`,
 * `unrecognized token: "#"`), and r.err_off / r.err_line (1-based) say
 * where.  parse_result_free is needed after errors too.
 */
#ifndef GPMDB_SQL_PARSER_H
#define GPMDB_SQL_PARSER_H

#include "ast.h"
#include "lexer.h"

#include "gpmdb.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Parameter numbers go up to this (SQLite's default limit). */
#define PARSE_MAX_PARAM 32766

typedef struct parse_result {
	ast_stmt *stmt;
	size_t tail;
	int rc;
	char errmsg[256];
	size_t err_off;
	int err_line;
	/* Parameters: the highest number used; param_names->v[i - 1] is the
	 * name of parameter i (":x", "@y", "$z") or NULL for ?, ?NNN. */
	int nparams;
	ast_name_list *param_names;
	ast_arena arena; /* owns the tree */
} parse_result;

int parse_sql(const char *sql, size_t len, parse_result *out);
void parse_result_free(parse_result *r);

/* ---- internal: for the grammar (parse.y) ---- */

typedef struct parse_ctx {
	const char *sql;
	size_t len;
	ast_arena *a;
	parse_result *res;
	ast_stmt *stmt;	  /* set when the grammar accepts */
	uint32_t cur_off; /* the token being fed, for errors */
} parse_ctx;

#define TOK_END(t) ((t).off + (t).n)

void parse_error(parse_ctx *c, uint32_t off, int rc, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void parse_syntax_error(parse_ctx *c, int major, lex_tok t);
void parse_stack_overflow(parse_ctx *c);

/* Values of tokens, copied into the arena. */
char *parse_ident(parse_ctx *c, lex_tok t);
ast_expr *parse_number(parse_ctx *c, lex_tok t, bool is_float);
ast_expr *parse_string(parse_ctx *c, lex_tok t);
ast_expr *parse_param(parse_ctx *c, lex_tok t);
ast_expr *parse_date(parse_ctx *c, lex_tok kw, lex_tok s);
ast_expr *parse_interval(parse_ctx *c, lex_tok kw, lex_tok val, lex_tok unit);
ast_unit parse_unit(parse_ctx *c, lex_tok t, const char *what);
int64_t parse_signed(parse_ctx *c, lex_tok t, int sign);
ast_type *parse_type(parse_ctx *c, uint32_t off, uint32_t words_end,
		     uint32_t end, int nargs, int64_t p, int64_t s);
ast_stmt *parse_stmt_new(parse_ctx *c, ast_stmt_kind kind);

#endif /* GPMDB_SQL_PARSER_H */
