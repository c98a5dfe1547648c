/*
 * parser.c - drives the lemon parser over the lexer's tokens, converts
 * token values for the grammar's actions and words the errors.
 */
#include "parser.h"

#include "parse.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* The lemon-generated entry points (build/gen/parse.c). */
void *parse_genAlloc(void *(*alloc)(size_t), parse_ctx *ctx);
void parse_gen(void *p, int major, lex_tok minor);
void parse_genFree(void *p, void (*dealloc)(void *));

/* Longest token text quoted in a message; longer ones end in "...". */
#define PARSE_MSG_TOKEN 96

/* ---- errors ---- */

void parse_error(parse_ctx *c, uint32_t off, int rc, const char *fmt, ...)
{
	parse_result *r = c->res;
	va_list ap;

	if (r->rc)
		return;
	r->rc = rc;
	r->err_off = off;
	va_start(ap, fmt);
	vsnprintf(r->errmsg, sizeof(r->errmsg), fmt, ap);
	va_end(ap);
}

/* The text of sql[off, off+n) for a message, cut short (at a UTF-8
 * character boundary) when long. */
static void parse_quote(parse_ctx *c, uint32_t off, uint32_t n, char *buf,
			size_t size)
{
	const char *s = c->sql + off;
	size_t k = n;
	bool cut = false;

	if (k > PARSE_MSG_TOKEN) {
		k = PARSE_MSG_TOKEN;
		while (k > 0 && ((unsigned char)s[k] & 0xc0) == 0x80)
			k--;
		cut = true;
	}
	snprintf(buf, size, "%.*s%s", (int)k, s, cut ? "..." : "");
}

void parse_syntax_error(parse_ctx *c, int major, lex_tok t)
{
	char tok[PARSE_MSG_TOKEN + 8];

	if (major == LEX_EOF) {
		parse_error(c, (uint32_t)c->len, GPMDB_ERROR,
			    "incomplete input");
		return;
	}
	parse_quote(c, t.off, t.n, tok, sizeof(tok));
	parse_error(c, t.off, GPMDB_ERROR, "near \"%s\": syntax error", tok);
}

void parse_stack_overflow(parse_ctx *c)
{
	parse_error(c, c->cur_off, GPMDB_ERROR, "parser stack overflow");
}

/* ---- token values ---- */

/* Removes the quotes around s[0..n) (which start with q) and undoes the
 * doubling of the closing quote. */
static char *parse_unquote(parse_ctx *c, const char *s, size_t n, char close,
			   size_t *outlen)
{
	char *d = ast_alloc(c->a, n);
	size_t k = 0;

	if (!d) {
		*outlen = 0;
		return (char *)"";
	}
	for (size_t i = 1; i + 1 < n; i++) {
		d[k++] = s[i];
		if (s[i] == close && close != ']')
			i++;
	}
	d[k] = 0;
	*outlen = k;
	return d;
}

char *parse_ident(parse_ctx *c, lex_tok t)
{
	const char *s = c->sql + t.off;
	size_t n;

	switch (s[0]) {
	case '"':
	case '`':
		return parse_unquote(c, s, t.n, s[0], &n);
	case '[':
		return parse_unquote(c, s, t.n, ']', &n);
	default:
		return ast_strndup(c->a, s, t.n);
	}
}

ast_expr *parse_string(parse_ctx *c, lex_tok t)
{
	ast_expr *e = ast_expr_new(c->a, AST_E_STRING, t.off, TOK_END(t));

	e->str = parse_unquote(c, c->sql + t.off, t.n, '\'', &e->slen);
	return e;
}

ast_expr *parse_number(parse_ctx *c, lex_tok t, bool is_float)
{
	const char *s = c->sql + t.off;
	ast_expr *e = ast_expr_new(c->a, AST_E_INT, t.off, TOK_END(t));
	uint64_t v = 0;
	bool big = false;

	if (!is_float && t.n > 2 && s[0] == '0' && (s[1] | 0x20) == 'x') {
		/* Hex: 64 bits at most, taken as two's complement. */
		size_t i = 2;
		while (i < t.n && s[i] == '0')
			i++;
		if (t.n - i > 16) {
			char tok[PARSE_MSG_TOKEN + 8];
			parse_quote(c, t.off, t.n, tok, sizeof(tok));
			parse_error(c, t.off, GPMDB_ERROR,
				    "hex literal too big: %s", tok);
			return e;
		}
		for (; i < t.n; i++) {
			int d = isdigit((unsigned char)s[i])
				    ? s[i] - '0'
				    : (s[i] | 0x20) - 'a' + 10;
			v = v << 4 | (uint64_t)d;
		}
		e->ival = (int64_t)v;
		return e;
	}
	if (!is_float) {
		for (size_t i = 0; i < t.n; i++) {
			uint64_t d = (uint64_t)(s[i] - '0');
			if (v > (UINT64_MAX - d) / 10) {
				big = true;
				break;
			}
			v = v * 10 + d;
		}
		if (!big && v <= (uint64_t)INT64_MAX) {
			e->ival = (int64_t)v;
			return e;
		}
	}
	/* A real, or an integer too big for 64 bits: a real, as SQLite. */
	char *copy = ast_strndup(c->a, s, t.n);
	e->kind = AST_E_REAL;
	e->rval = strtod_l(copy, NULL, lex_c_locale());
	/* the text as written (unsigned; the sign is rval's), so that a
	 * DECIMAL column can take the exact value (engine/exec/exec.c) */
	e->str = copy;
	e->slen = t.n;
	e->int_min_abs = !is_float && !big && v == (uint64_t)INT64_MAX + 1;
	return e;
}

ast_expr *parse_param(parse_ctx *c, lex_tok t)
{
	const char *s = c->sql + t.off;
	ast_expr *e = ast_expr_new(c->a, AST_E_PARAM, t.off, TOK_END(t));
	parse_result *r = c->res;
	int64_t idx = 0;
	char *name = NULL;

	if (s[0] == '?' && t.n > 1) {
		for (size_t i = 1; i < t.n && idx <= PARSE_MAX_PARAM; i++)
			idx = idx * 10 + (s[i] - '0');
		if (idx < 1 || idx > PARSE_MAX_PARAM) {
			parse_error(c, t.off, GPMDB_RANGE,
				    "variable number must be between ?1 and "
				    "?%d",
				    PARSE_MAX_PARAM);
			return e;
		}
	} else if (s[0] != '?') {
		name = ast_strndup(c->a, s, t.n);
		for (int i = 0; r->param_names && i < r->param_names->n; i++) {
			const char *pn = r->param_names->v[i];
			if (pn && strcmp(pn, name) == 0) {
				idx = i + 1;
				break;
			}
		}
	}
	if (idx == 0)
		idx = r->nparams + 1;
	if (idx > PARSE_MAX_PARAM) {
		parse_error(c, t.off, GPMDB_RANGE, "too many SQL variables");
		return e;
	}
	while (!c->a->err && (!r->param_names || r->param_names->n < idx))
		r->param_names = ast_name_list_add(c->a, r->param_names, NULL);
	if (name && !c->a->err)
		r->param_names->v[idx - 1] = name;
	if (idx > r->nparams)
		r->nparams = (int)idx;
	e->ival = idx;
	e->name = name;
	return e;
}

/* Days from 1970-01-01 to y-m-d in the proleptic Gregorian calendar:
 * count from a March-based year so that leap days fall at its end. */
static int64_t parse_days(int64_t y, int m, int d)
{
	y -= m <= 2;
	int64_t era = (y >= 0 ? y : y - 399) / 400;
	int64_t yoe = y - era * 400;
	int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;

	return era * 146097 + doe - 719468;
}

static bool parse_leap(int y)
{
	return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

/* Reads 1 to max digits at s[*i]; -1 if there are none. */
static int parse_digits(const char *s, size_t n, size_t *i, int max)
{
	int v = 0, k = 0;

	while (*i < n && k < max && isdigit((unsigned char)s[*i])) {
		v = v * 10 + (s[(*i)++] - '0');
		k++;
	}
	return k ? v : -1;
}

ast_expr *parse_date(parse_ctx *c, lex_tok kw, lex_tok t)
{
	ast_expr *e = ast_expr_new(c->a, AST_E_DATE, kw.off, TOK_END(t));
	ast_expr *s = parse_string(c, t);
	static const int mdays[] = {31, 28, 31, 30, 31, 30,
				    31, 31, 30, 31, 30, 31};
	size_t i = 0, n = s->slen;
	char buf[32];

	/* yyyy-m[m]-d[d], nothing else */
	int y = parse_digits(s->str, n, &i, 4);
	int m = i == 4 && i < n && s->str[i++] == '-'
		    ? parse_digits(s->str, n, &i, 2)
		    : -1;
	int d = m >= 0 && i < n && s->str[i++] == '-'
		    ? parse_digits(s->str, n, &i, 2)
		    : -1;
	if (y < 0 || i != n || m < 1 || m > 12 || d < 1 ||
	    d > mdays[m - 1] + (m == 2 && parse_leap(y))) {
		char tok[PARSE_MSG_TOKEN + 8];
		parse_quote(c, t.off, t.n, tok, sizeof(tok));
		parse_error(c, t.off, GPMDB_ERROR, "invalid date literal: %s",
			    tok);
		return e;
	}
	snprintf(buf, sizeof(buf), "%04d-%02d-%02d", y, m, d);
	e->str = ast_strndup(c->a, buf, strlen(buf));
	e->slen = strlen(buf);
	e->ival = parse_days(y, m, d);
	return e;
}

ast_unit parse_unit(parse_ctx *c, lex_tok t, const char *what)
{
	static const struct {
		const char *name;
		ast_unit unit;
	} units[] = {
	    {"DAY", AST_UNIT_DAY},     {"DAYS", AST_UNIT_DAY},
	    {"MONTH", AST_UNIT_MONTH}, {"MONTHS", AST_UNIT_MONTH},
	    {"YEAR", AST_UNIT_YEAR},   {"YEARS", AST_UNIT_YEAR},
	};
	const char *s = c->sql + t.off;

	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (strlen(units[i].name) == t.n &&
		    strncasecmp(s, units[i].name, t.n) == 0)
			return units[i].unit;
	char tok[PARSE_MSG_TOKEN + 8];
	parse_quote(c, t.off, t.n, tok, sizeof(tok));
	parse_error(c, t.off, GPMDB_ERROR,
		    "unknown %s: %s (expected DAY, MONTH or YEAR)", what, tok);
	return AST_UNIT_NONE;
}

ast_expr *parse_interval(parse_ctx *c, lex_tok kw, lex_tok val, lex_tok unit)
{
	ast_expr *e = ast_expr_new(c->a, AST_E_INTERVAL, kw.off, TOK_END(unit));
	const char *s;
	size_t n;

	if (c->sql[val.off] == '\'') {
		ast_expr *str = parse_string(c, val);
		s = str->str;
		n = str->slen;
	} else {
		s = c->sql + val.off;
		n = val.n;
	}
	size_t i = 0;
	bool neg = false;
	int64_t v = 0;

	while (i < n && s[i] == ' ')
		i++;
	if (i < n && (s[i] == '-' || s[i] == '+'))
		neg = s[i++] == '-';
	bool ok = i < n;
	for (; ok && i < n && s[i] != ' '; i++) {
		if (!isdigit((unsigned char)s[i]) || v > (INT32_MAX - 9) / 10)
			ok = false;
		else
			v = v * 10 + (s[i] - '0');
	}
	while (ok && i < n && s[i] == ' ')
		i++;
	if (!ok || i != n) {
		char tok[PARSE_MSG_TOKEN + 8];
		parse_quote(c, val.off, val.n, tok, sizeof(tok));
		parse_error(c, val.off, GPMDB_ERROR,
			    "invalid interval value: %s", tok);
		return e;
	}
	e->ival = neg ? -v : v;
	e->unit = parse_unit(c, unit, "interval unit");
	return e;
}

int64_t parse_signed(parse_ctx *c, lex_tok t, int sign)
{
	ast_expr *e = parse_number(c, t, false);

	if (e->kind != AST_E_INT) {
		char tok[PARSE_MSG_TOKEN + 8];
		parse_quote(c, t.off, t.n, tok, sizeof(tok));
		parse_error(c, t.off, GPMDB_ERROR, "integer out of range: %s",
			    tok);
		return 0;
	}
	return sign * e->ival;
}

ast_type *parse_type(parse_ctx *c, uint32_t off, uint32_t words_end,
		     uint32_t end, int nargs, int64_t p, int64_t s)
{
	ast_type *t = ast_node(c->a, sizeof(*t));
	char *name = ast_alloc(c->a, words_end - off + 1);
	size_t k = 0;
	lex_tok tok;

	t->text = ast_strndup(c->a, c->sql + off, end - off);
	t->nargs = nargs;
	t->p = p;
	t->s = s;
	if (!name) {
		t->name = (char *)"";
		return t;
	}
	/* The words, upper case, one space apart; quoted ones unquoted. */
	for (size_t pos = off; pos < words_end; pos += tok.n) {
		int type = lex_next(c->sql, words_end, pos, &tok);
		if (type == LEX_SPACE || tok.n == 0)
			continue;
		char *w = parse_ident(c, tok);
		if (k)
			name[k++] = ' ';
		for (; *w && k < words_end - off; w++)
			name[k++] = (char)toupper((unsigned char)*w);
	}
	name[k] = 0;
	t->name = name;
	ast_type_classify(t);
	return t;
}

ast_stmt *parse_stmt_new(parse_ctx *c, ast_stmt_kind kind)
{
	ast_stmt *s = ast_node(c->a, sizeof(*s));

	s->kind = kind;
	return s;
}

/* ---- the driver ---- */

/* The type of the next token after pos that is not white space. */
static int parse_peek(parse_ctx *c, size_t pos)
{
	lex_tok t;
	int type;

	while ((type = lex_next(c->sql, c->len, pos, &t)) == LEX_SPACE)
		pos += t.n;
	return type;
}

/* DATE, INTERVAL and EXTRACT are keywords only where they start a
 * literal or the EXTRACT form; elsewhere they are names (a column "date",
 * the function date('now')), which LALR(1) cannot tell by itself. */
static int parse_soft_keyword(parse_ctx *c, int type, lex_tok t)
{
	int next;

	switch (type) {
	case TK_DATE:
		next = parse_peek(c, TOK_END(t));
		return next == TK_STRING ? type : TK_ID;
	case TK_INTERVAL:
		next = parse_peek(c, TOK_END(t));
		return next == TK_STRING || next == TK_INTEGER ? type : TK_ID;
	case TK_EXTRACT:
		next = parse_peek(c, TOK_END(t));
		return next == TK_LP ? type : TK_ID;
	default:
		return type;
	}
}

static void parse_lex_error(parse_ctx *c, int type, lex_tok t)
{
	char tok[PARSE_MSG_TOKEN + 8];

	parse_quote(c, t.off, t.n, tok, sizeof(tok));
	switch (type) {
	case LEX_BAD_COMMENT:
		parse_error(c, t.off, GPMDB_ERROR, "unterminated /* comment");
		break;
	case LEX_BLOB:
		parse_error(c, t.off, GPMDB_UNSUPPORTED,
			    "blob literals are not supported: %s", tok);
		break;
	default:
		parse_error(c, t.off, GPMDB_ERROR, "unrecognized token: \"%s\"",
			    tok);
		break;
	}
}

static void parse_build_error(parse_ctx *c)
{
	ast_arena *a = c->a;

	switch (a->err) {
	case AST_ERR_NOMEM:
		parse_error(c, c->cur_off, GPMDB_NOMEM, "out of memory");
		break;
	case AST_ERR_DEPTH:
		parse_error(c, a->err_off, GPMDB_ERROR,
			    "expression tree is too large (maximum depth %d)",
			    AST_MAX_HEIGHT);
		break;
	case AST_ERR_COMPOUND:
		parse_error(c, a->err_off, GPMDB_ERROR,
			    "too many terms in compound SELECT");
		break;
	case AST_ERR_JOIN:
		parse_error(c, a->err_off, GPMDB_ERROR,
			    "too many tables in FROM clause");
		break;
	default:
		break;
	}
}

int parse_sql(const char *sql, size_t len, parse_result *out)
{
	parse_ctx ctx;
	lex_tok t;
	size_t pos = 0;
	int type;

	memset(out, 0, offsetof(parse_result, arena));
	ast_arena_init(&out->arena);
	if (!sql)
		len = 0;
	len = sql ? strnlen(sql, len) : 0;
	memset(&ctx, 0, sizeof(ctx));
	ctx.sql = sql;
	ctx.len = len;
	ctx.a = &out->arena;
	ctx.res = out;
	if (len >= UINT32_MAX) {
		parse_error(&ctx, 0, GPMDB_TOOBIG, "statement too long");
		return out->rc;
	}

	/* Empty statements before the first real one are skipped. */
	while ((type = lex_next(sql, len, pos, &t)) == LEX_SPACE ||
	       type == TK_SEMI)
		pos += t.n;
	if (type == LEX_EOF) {
		out->tail = len;
		return GPMDB_OK;
	}

	void *p = parse_genAlloc(malloc, &ctx);
	if (!p) {
		parse_error(&ctx, t.off, GPMDB_NOMEM, "out of memory");
		return out->rc;
	}
	uint32_t start = t.off, last_end = t.off;

	for (;;) {
		if (type == LEX_SPACE) {
			pos += t.n;
			type = lex_next(sql, len, pos, &t);
			continue;
		}
		if (type >= LEX_SPACE) {
			parse_lex_error(&ctx, type, t);
			pos += t.n;
			break;
		}
		type = parse_soft_keyword(&ctx, type, t);
		ctx.cur_off = t.off;
		parse_gen(p, type, t);
		if (!out->rc && out->arena.err)
			parse_build_error(&ctx);
		pos += t.n;
		if (out->rc || type == LEX_EOF)
			break;
		if (type == TK_SEMI) {
			/* The statement ends here: finish it. */
			lex_tok end = {(uint32_t)pos, 0};
			ctx.cur_off = end.off;
			parse_gen(p, LEX_EOF, end);
			if (!out->rc && out->arena.err)
				parse_build_error(&ctx);
			break;
		}
		last_end = TOK_END(t);
		type = lex_next(sql, len, pos, &t);
	}
	parse_genFree(p, free);

	out->tail = pos;
	if (!out->rc && !ctx.stmt)
		parse_error(&ctx, start, GPMDB_INTERNAL,
			    "internal error: statement not built");
	if (out->rc) {
		size_t line = 1;
		for (size_t i = 0; i < out->err_off && i < len; i++)
			line += sql[i] == '\n';
		out->err_line = (int)line;
		return out->rc;
	}
	out->stmt = ctx.stmt;
	out->stmt->off = start;
	out->stmt->end = last_end;
	return GPMDB_OK;
}

void parse_result_free(parse_result *r)
{
	ast_arena_free(&r->arena);
	r->stmt = NULL;
	r->param_names = NULL;
}
