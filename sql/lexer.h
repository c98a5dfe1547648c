/*
 * lexer.h - the SQL tokenizer.
 *
 * lex_next reads one token and returns its type: one of the grammar's
 * TK_* codes (from the lemon-generated parse.h) or one of the LEX_* codes
 * below, which never reach the grammar.
 */
#ifndef GPMDB_SQL_LEXER_H
#define GPMDB_SQL_LEXER_H

#include <locale.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A token: where it is in the SQL text (the grammar's terminal type). */
typedef struct lex_tok {
	uint32_t off, n;
} lex_tok;

enum {
	LEX_EOF = 0,	   /* the end of input; lemon's end marker too */
	LEX_SPACE = 10000, /* white space or a comment */
	LEX_ILLEGAL,	   /* unrecognized token (unterminated string, "#") */
	LEX_BAD_COMMENT,   /* a slash-star comment without its end */
	LEX_BLOB,	   /* X'..': well-formed but unsupported */
};

/* Reads the token at sql[pos] (pos < len, or LEX_EOF); *t gets its span. */
int lex_next(const char *sql, size_t len, size_t pos, lex_tok *t);

/* Whether s[0..n) is a keyword, in any case. */
bool lex_is_keyword(const char *s, size_t n);

/* The keyword's token code, or 0. */
int lex_keyword_code(const char *s, size_t n);

/* The "C" locale, so that numbers read and print the same whatever
 * locale the application set. */
locale_t lex_c_locale(void);

#endif /* GPMDB_SQL_LEXER_H */
