/*
 * lexer.c - splits SQL text into tokens for the lemon grammar.
 *
 * The lexer only finds token boundaries and types; converting values
 * (unquoting, numbers) is the parser's business, so that the lexer never
 * allocates.  Bytes >= 0x80 are identifier characters, and string
 * literals are taken byte for byte (invalid UTF-8 included).
 */
#include "lexer.h"

#include "parse.h"

#include <ctype.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* Sorted by name, for bsearch. */
static const struct lex_kw {
	const char *name;
	int code;
} lex_keywords[] = {
    {"ALL", TK_ALL},
    {"ANALYZE", TK_ANALYZE},
    {"AND", TK_AND},
    {"AS", TK_AS},
    {"ASC", TK_ASC},
    {"AUTOINCREMENT", TK_AUTOINCREMENT},
    {"BEGIN", TK_BEGIN},
    {"BETWEEN", TK_BETWEEN},
    {"BY", TK_BY},
    {"CASE", TK_CASE},
    {"CAST", TK_CAST},
    {"COLLATE", TK_COLLATE},
    {"COMMIT", TK_COMMIT},
    {"CONSTRAINT", TK_CONSTRAINT},
    {"CREATE", TK_CREATE},
    {"CROSS", TK_CROSS},
    {"DATE", TK_DATE},
    {"DEFAULT", TK_DEFAULT},
    {"DEFERRED", TK_DEFERRED},
    {"DELETE", TK_DELETE},
    {"DESC", TK_DESC},
    {"DISTINCT", TK_DISTINCT},
    {"DROP", TK_DROP},
    {"ELSE", TK_ELSE},
    {"END", TK_END},
    {"ESCAPE", TK_ESCAPE},
    {"EXCEPT", TK_EXCEPT},
    {"EXCLUSIVE", TK_EXCLUSIVE},
    {"EXISTS", TK_EXISTS},
    {"EXPLAIN", TK_EXPLAIN},
    {"EXTRACT", TK_EXTRACT},
    {"FALSE", TK_FALSE},
    {"FIRST", TK_FIRST},
    {"FOR", TK_FOR},
    {"FROM", TK_FROM},
    {"FULL", TK_FULL},
    {"GLOB", TK_GLOB},
    {"GROUP", TK_GROUP},
    {"HAVING", TK_HAVING},
    {"IF", TK_IF},
    {"IMMEDIATE", TK_IMMEDIATE},
    {"IN", TK_IN},
    {"INDEX", TK_INDEX},
    {"INNER", TK_INNER},
    {"INSERT", TK_INSERT},
    {"INTERSECT", TK_INTERSECT},
    {"INTERVAL", TK_INTERVAL},
    {"INTO", TK_INTO},
    {"IS", TK_IS},
    {"ISNULL", TK_ISNULL},
    {"JOIN", TK_JOIN},
    {"KEY", TK_KEY},
    {"LAST", TK_LAST},
    {"LEFT", TK_LEFT},
    {"LIKE", TK_LIKE},
    {"LIMIT", TK_LIMIT},
    {"NATURAL", TK_NATURAL},
    {"NOT", TK_NOT},
    {"NOTNULL", TK_NOTNULL},
    {"NULL", TK_NULL},
    {"NULLS", TK_NULLS},
    {"OFFSET", TK_OFFSET},
    {"ON", TK_ON},
    {"OR", TK_OR},
    {"ORDER", TK_ORDER},
    {"OUTER", TK_OUTER},
    {"PLAN", TK_PLAN},
    {"PRAGMA", TK_PRAGMA},
    {"PRIMARY", TK_PRIMARY},
    {"QUERY", TK_QUERY},
    {"RECURSIVE", TK_RECURSIVE},
    {"REINDEX", TK_REINDEX},
    {"REPLACE", TK_REPLACE},
    {"RIGHT", TK_RIGHT},
    {"ROLLBACK", TK_ROLLBACK},
    {"SELECT", TK_SELECT},
    {"SET", TK_SET},
    {"TABLE", TK_TABLE},
    {"TEMP", TK_TEMP},
    {"TEMPORARY", TK_TEMP},
    {"THEN", TK_THEN},
    {"TRANSACTION", TK_TRANSACTION},
    {"TRUE", TK_TRUE},
    {"UNION", TK_UNION},
    {"UNIQUE", TK_UNIQUE},
    {"UPDATE", TK_UPDATE},
    {"USING", TK_USING},
    {"VACUUM", TK_VACUUM},
    {"VALUES", TK_VALUES},
    {"VIEW", TK_VIEW},
    {"WHEN", TK_WHEN},
    {"WHERE", TK_WHERE},
    {"WITH", TK_WITH},
};

#define LEX_NKW	   (sizeof(lex_keywords) / sizeof(lex_keywords[0]))
#define LEX_KW_MAX 16 /* longer words are never keywords */

static int lex_kw_cmp(const void *key, const void *elem)
{
	return strcmp(key, ((const struct lex_kw *)elem)->name);
}

int lex_keyword_code(const char *s, size_t n)
{
	char up[LEX_KW_MAX + 1];

	if (n == 0 || n > LEX_KW_MAX)
		return 0;
	for (size_t i = 0; i < n; i++)
		up[i] = (char)toupper((unsigned char)s[i]);
	up[n] = 0;
	const struct lex_kw *k = bsearch(up, lex_keywords, LEX_NKW,
					 sizeof(lex_keywords[0]), lex_kw_cmp);
	return k ? k->code : 0;
}

bool lex_is_keyword(const char *s, size_t n)
{
	int code = lex_keyword_code(s, n);

	/* DATE and INTERVAL are keywords only before a literal, which no
	 * name is ever followed by, and ANALYZE only after EXPLAIN, where
	 * no name goes: names spelled so need no quotes. */
	return code != 0 && code != TK_DATE && code != TK_INTERVAL &&
	       code != TK_ANALYZE;
}

static bool lex_idchar(unsigned char c)
{
	return isalnum(c) || c == '_' || c == '$' || c >= 0x80;
}

static bool lex_idstart(unsigned char c)
{
	return isalpha(c) || c == '_' || c >= 0x80;
}

/* Scans a quoted run starting at sql[pos] (the opening quote); doubled
 * closing quotes stand for one.  Returns the length including both
 * quotes, or 0 when the closing quote is missing. */
static size_t lex_quoted(const char *sql, size_t len, size_t pos, char close)
{
	size_t i = pos + 1;

	while (i < len) {
		if (sql[i] == close) {
			if (close != ']' && i + 1 < len &&
			    sql[i + 1] == close) {
				i += 2;
				continue;
			}
			return i + 1 - pos;
		}
		i++;
	}
	return 0;
}

/* A number at sql[pos]; sets *type to TK_INTEGER or TK_FLOAT and returns
 * its length.  A number running into identifier characters ("12ab") is
 * one illegal token, as in SQLite. */
static size_t lex_number(const char *sql, size_t len, size_t pos, int *type)
{
	size_t i = pos;

	*type = TK_INTEGER;
	if (sql[i] == '0' && i + 2 < len && (sql[i + 1] | 0x20) == 'x' &&
	    isxdigit((unsigned char)sql[i + 2])) {
		i += 2;
		while (i < len && isxdigit((unsigned char)sql[i]))
			i++;
	} else {
		while (i < len && isdigit((unsigned char)sql[i]))
			i++;
		if (i < len && sql[i] == '.') {
			*type = TK_FLOAT;
			i++;
			while (i < len && isdigit((unsigned char)sql[i]))
				i++;
		}
		if (i < len && (sql[i] | 0x20) == 'e') {
			size_t j = i + 1;
			if (j < len && (sql[j] == '+' || sql[j] == '-'))
				j++;
			if (j < len && isdigit((unsigned char)sql[j])) {
				*type = TK_FLOAT;
				i = j;
				while (i < len &&
				       isdigit((unsigned char)sql[i]))
					i++;
			}
		}
	}
	if (i < len && lex_idchar((unsigned char)sql[i])) {
		while (i < len && lex_idchar((unsigned char)sql[i]))
			i++;
		*type = LEX_ILLEGAL;
	}
	return i - pos;
}

int lex_next(const char *sql, size_t len, size_t pos, lex_tok *t)
{
	size_t n = 1;
	int type;

	t->off = (uint32_t)pos;
	t->n = 0;
	if (pos >= len)
		return LEX_EOF;
	unsigned char c = (unsigned char)sql[pos];

	switch (c) {
	case ' ':
	case '\t':
	case '\n':
	case '\r':
	case '\f':
	case '\v':
		while (pos + n < len && isspace((unsigned char)sql[pos + n]))
			n++;
		type = LEX_SPACE;
		break;
	case '-':
		if (pos + 1 < len && sql[pos + 1] == '-') {
			while (pos + n < len && sql[pos + n] != '\n')
				n++;
			type = LEX_SPACE;
		} else {
			type = TK_MINUS;
		}
		break;
	case '/':
		if (pos + 1 < len && sql[pos + 1] == '*') {
			const char *end = NULL;
			for (size_t i = pos + 2; i + 1 < len; i++) {
				if (sql[i] == '*' && sql[i + 1] == '/') {
					end = sql + i + 2;
					break;
				}
			}
			if (end) {
				n = (size_t)(end - (sql + pos));
				type = LEX_SPACE;
			} else {
				n = len - pos;
				type = LEX_BAD_COMMENT;
			}
		} else {
			type = TK_SLASH;
		}
		break;
	case '(':
		type = TK_LP;
		break;
	case ')':
		type = TK_RP;
		break;
	case ',':
		type = TK_COMMA;
		break;
	case ';':
		type = TK_SEMI;
		break;
	case '+':
		type = TK_PLUS;
		break;
	case '*':
		type = TK_STAR;
		break;
	case '%':
		type = TK_REM;
		break;
	case '~':
		type = TK_BITNOT;
		break;
	case '&':
		type = TK_BITAND;
		break;
	case '|':
		if (pos + 1 < len && sql[pos + 1] == '|') {
			n = 2;
			type = TK_CONCAT;
		} else {
			type = TK_BITOR;
		}
		break;
	case '=':
		n = (pos + 1 < len && sql[pos + 1] == '=') ? 2 : 1;
		type = TK_EQ;
		break;
	case '<':
		type = TK_LT;
		if (pos + 1 < len) {
			n = 2;
			if (sql[pos + 1] == '=')
				type = TK_LE;
			else if (sql[pos + 1] == '>')
				type = TK_NE;
			else if (sql[pos + 1] == '<')
				type = TK_LSHIFT;
			else
				n = 1;
		}
		break;
	case '>':
		type = TK_GT;
		if (pos + 1 < len) {
			n = 2;
			if (sql[pos + 1] == '=')
				type = TK_GE;
			else if (sql[pos + 1] == '>')
				type = TK_RSHIFT;
			else
				n = 1;
		}
		break;
	case '!':
		if (pos + 1 < len && sql[pos + 1] == '=') {
			n = 2;
			type = TK_NE;
		} else {
			type = LEX_ILLEGAL;
		}
		break;
	case '\'':
		n = lex_quoted(sql, len, pos, '\'');
		type = TK_STRING;
		if (!n) {
			n = len - pos;
			type = LEX_ILLEGAL;
		}
		break;
	case '"':
	case '`':
	case '[':
		n = lex_quoted(sql, len, pos, c == '[' ? ']' : (char)c);
		type = TK_ID;
		if (!n) {
			n = len - pos;
			type = LEX_ILLEGAL;
		}
		break;
	case '.':
		if (pos + 1 < len && isdigit((unsigned char)sql[pos + 1]))
			n = lex_number(sql, len, pos, &type);
		else
			type = TK_DOT;
		break;
	case '?':
		while (pos + n < len && isdigit((unsigned char)sql[pos + n]))
			n++;
		type = TK_VARIABLE;
		break;
	case ':':
	case '@':
	case '$':
		while (pos + n < len && lex_idchar((unsigned char)sql[pos + n]))
			n++;
		type = n > 1 ? TK_VARIABLE : LEX_ILLEGAL;
		break;
	default:
		if (isdigit(c)) {
			n = lex_number(sql, len, pos, &type);
		} else if ((c == 'x' || c == 'X') && pos + 1 < len &&
			   sql[pos + 1] == '\'') {
			/* A blob: well-formed means an even number of hex
			 * digits, as in SQLite; anything else is illegal. */
			size_t q = lex_quoted(sql, len, pos + 1, '\'');
			bool ok = q != 0 && (q - 2) % 2 == 0;
			for (size_t i = pos + 2; ok && i < pos + q; i++)
				ok = isxdigit((unsigned char)sql[i]);
			if (q) {
				n = q + 1;
				type = ok ? LEX_BLOB : LEX_ILLEGAL;
			} else {
				n = len - pos;
				type = LEX_ILLEGAL;
			}
		} else if (lex_idstart(c)) {
			while (pos + n < len &&
			       lex_idchar((unsigned char)sql[pos + n]))
				n++;
			type = lex_keyword_code(sql + pos, n);
			if (!type)
				type = TK_ID;
		} else {
			type = LEX_ILLEGAL;
		}
		break;
	}
	t->n = (uint32_t)n;
	return type;
}

static locale_t lex_c_loc;
static pthread_once_t lex_c_once = PTHREAD_ONCE_INIT;

static void lex_c_init(void)
{
	lex_c_loc = newlocale(LC_ALL_MASK, "C", (locale_t)0);
}

locale_t lex_c_locale(void)
{
	pthread_once(&lex_c_once, lex_c_init);
	return lex_c_loc;
}
