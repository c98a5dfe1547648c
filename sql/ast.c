/*
 * ast.c - the arena, the node builders the grammar calls, and rendering
 * of a tree back to canonical SQL.
 */
#include "ast.h"

#include "lexer.h"

#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- arena ---- */

struct ast_chunk {
	ast_chunk *next;
	_Alignas(16) char data[];
};

#define AST_CHUNK_SIZE (32 * 1024)

void ast_arena_init(ast_arena *a)
{
	memset(a, 0, sizeof(*a));
}

void ast_arena_free(ast_arena *a)
{
	ast_chunk *c = a->head;

	while (c) {
		ast_chunk *next = c->next;
		free(c);
		c = next;
	}
	a->head = NULL;
	a->cur = a->lim = NULL;
}

static void ast_fail(ast_arena *a, int err, uint32_t off)
{
	if (!a->err) {
		a->err = err;
		a->err_off = off;
	}
}

void *ast_alloc(ast_arena *a, size_t n)
{
	n = (n + 15) & ~(size_t)15;
	if (n == 0)
		n = 16;
	if ((size_t)(a->lim - a->cur) < n) {
		/* Big requests get a chunk of their own, so that the current
		 * chunk's free space is not thrown away for them. */
		size_t sz = n > AST_CHUNK_SIZE / 4 ? n : AST_CHUNK_SIZE;

		/* Most statements are small: start with a small chunk. */
		if (!a->head && n <= AST_CHUNK_SIZE / 8)
			sz = AST_CHUNK_SIZE / 8;
		ast_chunk *c = malloc(sizeof(*c) + sz);

		if (!c) {
			ast_fail(a, AST_ERR_NOMEM, 0);
			return NULL;
		}
		if (sz == n && a->head) {
			c->next = a->head->next;
			a->head->next = c;
			memset(c->data, 0, n);
			return c->data;
		}
		c->next = a->head;
		a->head = c;
		a->cur = c->data;
		a->lim = c->data + sz;
	}
	void *p = a->cur;
	a->cur += n;
	memset(p, 0, n);
	return p;
}

void *ast_node(ast_arena *a, size_t n)
{
	void *p = ast_alloc(a, n);

	if (!p) {
		memset(a->scratch, 0, sizeof(a->scratch));
		p = a->scratch;
	}
	return p;
}

char *ast_strndup(ast_arena *a, const char *s, size_t n)
{
	char *p = ast_alloc(a, n + 1);

	if (!p)
		return (char *)"";
	memcpy(p, s, n);
	p[n] = 0;
	return p;
}

/* ---- lists ---- */

/* Grows an arena array of pointers to hold one more; false when out of
 * memory.  The old array stays in the arena (at most doubling waste). */
static bool ast_grow(ast_arena *a, void ***v, int n, int *cap)
{
	if (n < *cap)
		return true;
	int ncap = *cap ? *cap * 2 : 4;
	void **nv = ast_alloc(a, (size_t)ncap * sizeof(void *));

	if (!nv)
		return false;
	if (n)
		memcpy(nv, *v, (size_t)n * sizeof(void *));
	*v = nv;
	*cap = ncap;
	return true;
}

#define AST_LIST_ADD(a, l, item)                                               \
	do {                                                                   \
		if (!(l))                                                      \
			(l) = ast_node((a), sizeof(*(l)));                     \
		if ((a)->err)                                                  \
			return (l);                                            \
		if (!ast_grow((a), (void ***)&(l)->v, (l)->n, &(l)->cap))      \
			return (l);                                            \
		(l)->v[(l)->n++] = (item);                                     \
	} while (0)

ast_expr_list *ast_expr_list_add(ast_arena *a, ast_expr_list *l, ast_expr *e)
{
	AST_LIST_ADD(a, l, e);
	return l;
}

ast_name_list *ast_name_list_add(ast_arena *a, ast_name_list *l, char *name)
{
	AST_LIST_ADD(a, l, name);
	return l;
}

ast_result_list *ast_result_add(ast_arena *a, ast_result_list *l, ast_expr *e,
				char *alias)
{
	ast_result_col *c = ast_node(a, sizeof(*c));

	c->expr = e;
	c->alias = alias;
	AST_LIST_ADD(a, l, c);
	return l;
}

ast_order_list *ast_order_add(ast_arena *a, ast_order_list *l, ast_expr *e,
			      bool desc, int nulls)
{
	ast_order_term *t = ast_node(a, sizeof(*t));

	t->expr = e;
	t->desc = desc;
	t->nulls = nulls;
	AST_LIST_ADD(a, l, t);
	return l;
}

ast_values *ast_values_add(ast_arena *a, ast_values *v, ast_expr_list *row)
{
	AST_LIST_ADD(a, v, row);
	return v;
}

ast_with *ast_with_add(ast_arena *a, ast_with *w, ast_cte *cte)
{
	AST_LIST_ADD(a, w, cte);
	return w;
}

void ast_stmt_add_coldef(ast_arena *a, ast_stmt *s, ast_coldef *c)
{
	if (!a->err &&
	    ast_grow(a, (void ***)&s->coldefs, s->ncoldefs, &s->coldefs_cap))
		s->coldefs[s->ncoldefs++] = c;
}

void ast_stmt_add_tabcons(ast_arena *a, ast_stmt *s, ast_tabcons *t)
{
	if (!a->err &&
	    ast_grow(a, (void ***)&s->tabcons, s->ntabcons, &s->tabcons_cap))
		s->tabcons[s->ntabcons++] = t;
}

void ast_stmt_add_set(ast_arena *a, ast_stmt *s, char *col, ast_expr *e)
{
	ast_set_clause *c = ast_node(a, sizeof(*c));

	c->col = col;
	c->expr = e;
	if (!a->err && ast_grow(a, (void ***)&s->sets, s->nsets, &s->sets_cap))
		s->sets[s->nsets++] = c;
}

/* ---- types ---- */

static const struct {
	const char *name;
	ast_type_class cls;
	int bytes;
} ast_type_names[] = {
    {"INT", AST_TYPE_INT, 8},
    {"INTEGER", AST_TYPE_INT, 8},
    {"BIGINT", AST_TYPE_INT, 8},
    {"INT8", AST_TYPE_INT, 8},
    {"INT4", AST_TYPE_INT, 4},
    {"INT2", AST_TYPE_INT, 2},
    {"SMALLINT", AST_TYPE_INT, 2},
    {"TINYINT", AST_TYPE_INT, 1},
    {"MEDIUMINT", AST_TYPE_INT, 4},
    {"FLOAT", AST_TYPE_REAL, 0},
    {"REAL", AST_TYPE_REAL, 0},
    {"DOUBLE", AST_TYPE_REAL, 0},
    {"DOUBLE PRECISION", AST_TYPE_REAL, 0},
    {"DECIMAL", AST_TYPE_DECIMAL, 0},
    {"NUMERIC", AST_TYPE_DECIMAL, 0},
    {"DATE", AST_TYPE_DATE, 0},
    {"BOOLEAN", AST_TYPE_BOOLEAN, 0},
    {"BOOL", AST_TYPE_BOOLEAN, 0},
    {"TEXT", AST_TYPE_TEXT, 0},
    {"VARCHAR", AST_TYPE_TEXT, 0},
    {"CHAR", AST_TYPE_TEXT, 0},
    {"CHARACTER", AST_TYPE_TEXT, 0},
    {"CHARACTER VARYING", AST_TYPE_TEXT, 0},
    {"STRING", AST_TYPE_TEXT, 0},
    {"CLOB", AST_TYPE_TEXT, 0},
    {"NVARCHAR", AST_TYPE_TEXT, 0},
    {"NCHAR", AST_TYPE_TEXT, 0},
};

void ast_type_classify(ast_type *t)
{
	t->cls = AST_TYPE_OTHER;
	t->int_bytes = 0;
	for (size_t i = 0;
	     i < sizeof(ast_type_names) / sizeof(ast_type_names[0]); i++) {
		if (strcmp(t->name, ast_type_names[i].name) == 0) {
			t->cls = ast_type_names[i].cls;
			t->int_bytes = ast_type_names[i].bytes;
			return;
		}
	}
}

/* ---- builders ---- */

static int ast_max(int a, int b)
{
	return a > b ? a : b;
}

static int ast_eh(const ast_expr *e)
{
	return e ? e->height : 0;
}

static int ast_sh(const ast_select *s)
{
	return s ? s->height : 0;
}

static int ast_lh(const ast_expr_list *l)
{
	int h = 0;

	if (l)
		for (int i = 0; i < l->n; i++)
			h = ast_max(h, ast_eh(l->v[i]));
	return h;
}

ast_expr *ast_expr_new(ast_arena *a, ast_expr_kind kind, uint32_t off,
		       uint32_t end)
{
	ast_expr *e = ast_node(a, sizeof(*e));

	e->kind = kind;
	e->off = off;
	e->end = end;
	e->height = 1;
	return e;
}

ast_expr *ast_expr_fix(ast_arena *a, ast_expr *e)
{
	int h = ast_max(ast_eh(e->l), ast_eh(e->r));

	h = ast_max(h, ast_eh(e->x));
	h = ast_max(h, ast_lh(e->list));
	h = ast_max(h, ast_sh(e->sub));
	e->height = h + 1;
	if (e->height > AST_MAX_HEIGHT)
		ast_fail(a, AST_ERR_DEPTH, e->off);
	return e;
}

ast_expr *ast_unary(ast_arena *a, ast_op op, ast_expr *l, uint32_t off)
{
	/* A minus before a number makes a negative literal, so that -1
	 * is a constant for DEFAULT and renders back the same. */
	if (op == AST_OP_NEG && l->kind == AST_E_INT && l->ival != INT64_MIN) {
		l->ival = -l->ival;
		l->off = off;
		return l;
	}
	if (op == AST_OP_NEG && l->kind == AST_E_REAL && !l->int_min_abs) {
		l->rval = -l->rval;
		l->off = off;
		return l;
	}
	/* -9223372036854775808 is the one integer whose absolute value
	 * does not fit: fold it, as SQLite does. */
	if (op == AST_OP_NEG && l->kind == AST_E_REAL && l->int_min_abs) {
		ast_expr *e = ast_expr_new(a, AST_E_INT, off, l->end);
		e->ival = INT64_MIN;
		return e;
	}
	ast_expr *e = ast_expr_new(a, AST_E_UNARY, off, l->end);
	e->op = op;
	e->l = l;
	return ast_expr_fix(a, e);
}

ast_expr *ast_binary(ast_arena *a, ast_op op, ast_expr *l, ast_expr *r)
{
	ast_expr *e = ast_expr_new(a, AST_E_BINARY, l->off, r->end);

	e->op = op;
	e->l = l;
	e->r = r;
	return ast_expr_fix(a, e);
}

ast_select *ast_select_new(ast_arena *a, ast_select_kind kind, uint32_t off)
{
	ast_select *s = ast_node(a, sizeof(*s));

	s->kind = kind;
	s->off = off;
	s->height = 1;
	return s;
}

int ast_from_height(const ast_from *f)
{
	return f ? f->height : 0;
}

ast_select *ast_select_fix(ast_arena *a, ast_select *s)
{
	int h = 0;

	switch (s->kind) {
	case AST_SEL_CORE:
		if (s->cols)
			for (int i = 0; i < s->cols->n; i++)
				h = ast_max(h, ast_eh(s->cols->v[i]->expr));
		h = ast_max(h, ast_from_height(s->from));
		h = ast_max(h, ast_eh(s->where));
		h = ast_max(h, ast_lh(s->group_by));
		h = ast_max(h, ast_eh(s->having));
		break;
	case AST_SEL_VALUES:
		if (s->values)
			for (int i = 0; i < s->values->n; i++)
				h = ast_max(h, ast_lh(s->values->v[i]));
		break;
	case AST_SEL_COMPOUND:
		h = ast_max(ast_sh(s->left), ast_sh(s->right));
		break;
	}
	if (s->order_by)
		for (int i = 0; i < s->order_by->n; i++)
			h = ast_max(h, ast_eh(s->order_by->v[i]->expr));
	h = ast_max(h, ast_eh(s->limit));
	h = ast_max(h, ast_eh(s->offset));
	if (s->with)
		for (int i = 0; i < s->with->n; i++)
			h = ast_max(h, ast_sh(s->with->v[i]->select));
	s->height = h + 1;
	if (s->height > AST_MAX_HEIGHT)
		ast_fail(a,
			 s->kind == AST_SEL_COMPOUND ? AST_ERR_COMPOUND
						     : AST_ERR_DEPTH,
			 s->off);
	return s;
}

void ast_select_add_row(ast_arena *a, ast_select *s, ast_expr_list *row)
{
	/* Incremental: a fix per row would be quadratic in the rows. */
	s->values = ast_values_add(a, s->values, row);
	s->height = ast_max(s->height, ast_lh(row) + 1);
	if (s->height > AST_MAX_HEIGHT)
		ast_fail(a, AST_ERR_DEPTH, s->off);
}

ast_from *ast_from_join(ast_arena *a, ast_from *left, ast_join_type join,
			bool natural, ast_from *right, ast_expr *on,
			ast_name_list *using_cols)
{
	ast_from *f = ast_node(a, sizeof(*f));

	f->kind = AST_FROM_JOIN;
	f->off = left->off;
	f->join = join;
	f->natural = natural;
	f->left = left;
	f->right = right;
	f->on = on;
	f->using_cols = using_cols;
	f->height =
	    1 + ast_max(ast_max(left->height, right->height), ast_eh(on));
	if (f->height > AST_MAX_HEIGHT)
		ast_fail(a, AST_ERR_JOIN, right->off);
	return f;
}

/* ---- rendering ---- */

typedef struct sbuf {
	char *p;
	size_t n, cap;
	bool oom;
} sbuf;

static void sb_add(sbuf *b, const char *s, size_t n)
{
	if (b->oom)
		return;
	if (b->n + n + 1 > b->cap) {
		size_t ncap = b->cap ? b->cap : 128;
		while (ncap < b->n + n + 1)
			ncap *= 2;
		char *np = realloc(b->p, ncap);
		if (!np) {
			b->oom = true;
			return;
		}
		b->p = np;
		b->cap = ncap;
	}
	memcpy(b->p + b->n, s, n);
	b->n += n;
	b->p[b->n] = 0;
}

static void sb_puts(sbuf *b, const char *s)
{
	sb_add(b, s, strlen(s));
}

static void sb_printf(sbuf *b, const char *fmt, ...)
{
	char tmp[64];
	va_list ap;

	va_start(ap, fmt);
	int n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n > 0)
		sb_add(b, tmp,
		       (size_t)n < sizeof(tmp) ? (size_t)n : sizeof(tmp) - 1);
}

static char *sb_finish(sbuf *b)
{
	if (b->oom) {
		free(b->p);
		return NULL;
	}
	if (!b->p)
		return calloc(1, 1);
	return b->p;
}

/* An identifier, quoted when it is not a plain word or is a keyword. */
static void sb_ident(sbuf *b, const char *s)
{
	bool plain = (isalpha((unsigned char)s[0]) || s[0] == '_');

	for (const char *p = s; plain && *p; p++)
		if (!isalnum((unsigned char)*p) && *p != '_')
			plain = false;
	if (plain && !lex_is_keyword(s, strlen(s))) {
		sb_puts(b, s);
		return;
	}
	sb_add(b, "\"", 1);
	for (const char *p = s; *p; p++) {
		if (*p == '"')
			sb_add(b, "\"", 1);
		sb_add(b, p, 1);
	}
	sb_add(b, "\"", 1);
}

static void sb_string(sbuf *b, const char *s, size_t n)
{
	sb_add(b, "'", 1);
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '\'')
			sb_add(b, "'", 1);
		sb_add(b, s + i, 1);
	}
	sb_add(b, "'", 1);
}

/* The shortest %g form that reads back as the same double, with a
 * decimal point or exponent so it reads back as a real. */
static void sb_real(sbuf *b, double v)
{
	char tmp[40];

	if (isinf(v)) {
		sb_puts(b, v > 0 ? "1e999" : "-1e999");
		return;
	}
	for (int prec = 15; prec <= 17; prec++) {
		snprintf(tmp, sizeof(tmp), "%.*g", prec, v);
		if (strtod(tmp, NULL) == v)
			break;
	}
	sb_puts(b, tmp);
	if (!strpbrk(tmp, ".eEn"))
		sb_puts(b, ".0");
}

static void sb_names(sbuf *b, const ast_name_list *l)
{
	sb_add(b, "(", 1);
	for (int i = 0; l && i < l->n; i++) {
		if (i)
			sb_puts(b, ", ");
		sb_ident(b, l->v[i]);
	}
	sb_add(b, ")", 1);
}

/* Whether a type name reads back as the same words when written as it
 * is: plain words, none a keyword.  A quoted word may hold spaces, commas
 * or a keyword (`a "INTEGER, b" INT`), which written bare would read as
 * other columns or a syntax error. */
static bool sb_type_name_plain(const char *s)
{
	for (;;) {
		size_t n = strcspn(s, " ");
		if (n == 0 || !(isalpha((unsigned char)s[0]) || s[0] == '_'))
			return false;
		for (size_t i = 0; i < n; i++)
			if (!isalnum((unsigned char)s[i]) && s[i] != '_')
				return false;
		if (lex_is_keyword(s, n))
			return false;
		if (s[n] == 0)
			return true;
		s += n + 1;
	}
}

static void sb_type(sbuf *b, const ast_type *t)
{
	/* Otherwise the whole name as one quoted word, which parse_type
	 * reads back to the same name (it is upper case already). */
	if (sb_type_name_plain(t->name))
		sb_puts(b, t->name);
	else
		sb_ident(b, t->name);
	if (t->nargs == 1)
		sb_printf(b, "(%" PRId64 ")", t->p);
	else if (t->nargs == 2)
		sb_printf(b, "(%" PRId64 ",%" PRId64 ")", t->p, t->s);
}

static void sb_select(sbuf *b, const ast_select *s);
static void sb_expr(sbuf *b, const ast_expr *e);

static void sb_exprs(sbuf *b, const ast_expr_list *l)
{
	for (int i = 0; l && i < l->n; i++) {
		if (i)
			sb_puts(b, ", ");
		sb_expr(b, l->v[i]);
	}
}

const char *ast_op_name(ast_op op)
{
	switch (op) {
	case AST_OP_NONE:
		return "";
	case AST_OP_NEG:
		return "-";
	case AST_OP_PLUS:
		return "+";
	case AST_OP_NOT:
		return "NOT";
	case AST_OP_BITNOT:
		return "~";
	case AST_OP_OR:
		return "OR";
	case AST_OP_AND:
		return "AND";
	case AST_OP_EQ:
		return "=";
	case AST_OP_NE:
		return "!=";
	case AST_OP_LT:
		return "<";
	case AST_OP_LE:
		return "<=";
	case AST_OP_GT:
		return ">";
	case AST_OP_GE:
		return ">=";
	case AST_OP_IS:
		return "IS";
	case AST_OP_ISNOT:
		return "IS NOT";
	case AST_OP_BITAND:
		return "&";
	case AST_OP_BITOR:
		return "|";
	case AST_OP_LSHIFT:
		return "<<";
	case AST_OP_RSHIFT:
		return ">>";
	case AST_OP_ADD:
		return "+";
	case AST_OP_SUB:
		return "-";
	case AST_OP_MUL:
		return "*";
	case AST_OP_DIV:
		return "/";
	case AST_OP_MOD:
		return "%";
	case AST_OP_CONCAT:
		return "||";
	case AST_OP_LIKE:
		return "LIKE";
	case AST_OP_GLOB:
		return "GLOB";
	}
	return "?";
}

static const char *ast_unit_name(ast_unit u)
{
	switch (u) {
	case AST_UNIT_DAY:
		return "DAY";
	case AST_UNIT_MONTH:
		return "MONTH";
	case AST_UNIT_YEAR:
		return "YEAR";
	default:
		return "?";
	}
}

static void sb_expr(sbuf *b, const ast_expr *e)
{
	switch (e->kind) {
	case AST_E_INT:
		sb_printf(b, "%" PRId64, e->ival);
		break;
	case AST_E_REAL:
		sb_real(b, e->rval);
		break;
	case AST_E_STRING:
		sb_string(b, e->str, e->slen);
		break;
	case AST_E_NULL:
		sb_puts(b, "NULL");
		break;
	case AST_E_BOOL:
		sb_puts(b, e->ival ? "TRUE" : "FALSE");
		break;
	case AST_E_PARAM:
		if (e->name)
			sb_puts(b, e->name);
		else
			sb_printf(b, "?%" PRId64, e->ival);
		break;
	case AST_E_DATE:
		sb_puts(b, "DATE ");
		sb_string(b, e->str, e->slen);
		break;
	case AST_E_INTERVAL:
		sb_printf(b, "INTERVAL '%" PRId64 "' %s", e->ival,
			  ast_unit_name(e->unit));
		break;
	case AST_E_COLUMN:
		if (e->table) {
			sb_ident(b, e->table);
			sb_add(b, ".", 1);
		}
		sb_ident(b, e->name);
		break;
	case AST_E_STAR:
		if (e->table) {
			sb_ident(b, e->table);
			sb_add(b, ".", 1);
		}
		sb_add(b, "*", 1);
		break;
	case AST_E_UNARY:
		sb_add(b, "(", 1);
		sb_puts(b, ast_op_name(e->op));
		/* A space after NOT, and between a minus and a negative
		 * literal (- -9223372036854775808 is not folded): "--"
		 * would start a comment. */
		if (e->op == AST_OP_NOT ||
		    (e->op == AST_OP_NEG &&
		     ((e->l->kind == AST_E_INT && e->l->ival < 0) ||
		      (e->l->kind == AST_E_REAL && signbit(e->l->rval)))))
			sb_add(b, " ", 1);
		sb_expr(b, e->l);
		sb_add(b, ")", 1);
		break;
	case AST_E_BINARY:
		sb_add(b, "(", 1);
		sb_expr(b, e->l);
		sb_add(b, " ", 1);
		sb_puts(b, ast_op_name(e->op));
		sb_add(b, " ", 1);
		sb_expr(b, e->r);
		sb_add(b, ")", 1);
		break;
	case AST_E_ISNULL:
		sb_add(b, "(", 1);
		sb_expr(b, e->l);
		sb_puts(b, e->negated ? " IS NOT NULL)" : " IS NULL)");
		break;
	case AST_E_BETWEEN:
		sb_add(b, "(", 1);
		sb_expr(b, e->l);
		sb_puts(b, e->negated ? " NOT BETWEEN " : " BETWEEN ");
		sb_expr(b, e->r);
		sb_puts(b, " AND ");
		sb_expr(b, e->x);
		sb_add(b, ")", 1);
		break;
	case AST_E_LIKE:
		sb_add(b, "(", 1);
		sb_expr(b, e->l);
		sb_puts(b, e->negated ? " NOT " : " ");
		sb_puts(b, ast_op_name(e->op));
		sb_add(b, " ", 1);
		sb_expr(b, e->r);
		if (e->x) {
			sb_puts(b, " ESCAPE ");
			sb_expr(b, e->x);
		}
		sb_add(b, ")", 1);
		break;
	case AST_E_IN_LIST:
	case AST_E_IN_SELECT:
		sb_add(b, "(", 1);
		sb_expr(b, e->l);
		sb_puts(b, e->negated ? " NOT IN (" : " IN (");
		if (e->kind == AST_E_IN_LIST)
			sb_exprs(b, e->list);
		else
			sb_select(b, e->sub);
		sb_puts(b, "))");
		break;
	case AST_E_EXISTS:
		sb_puts(b, "EXISTS (");
		sb_select(b, e->sub);
		sb_add(b, ")", 1);
		break;
	case AST_E_SUBQUERY:
		sb_add(b, "(", 1);
		sb_select(b, e->sub);
		sb_add(b, ")", 1);
		break;
	case AST_E_CASE:
		sb_puts(b, "CASE");
		if (e->l) {
			sb_add(b, " ", 1);
			sb_expr(b, e->l);
		}
		for (int i = 0; e->list && i + 1 < e->list->n; i += 2) {
			sb_puts(b, " WHEN ");
			sb_expr(b, e->list->v[i]);
			sb_puts(b, " THEN ");
			sb_expr(b, e->list->v[i + 1]);
		}
		if (e->r) {
			sb_puts(b, " ELSE ");
			sb_expr(b, e->r);
		}
		sb_puts(b, " END");
		break;
	case AST_E_CAST:
		sb_puts(b, "CAST(");
		sb_expr(b, e->l);
		sb_puts(b, " AS ");
		sb_type(b, e->type);
		sb_add(b, ")", 1);
		break;
	case AST_E_FUNC:
		sb_ident(b, e->name);
		sb_add(b, "(", 1);
		if (e->star)
			sb_add(b, "*", 1);
		if (e->distinct)
			sb_puts(b, "DISTINCT ");
		sb_exprs(b, e->list);
		sb_add(b, ")", 1);
		break;
	case AST_E_EXTRACT:
		sb_printf(b, "EXTRACT(%s FROM ", ast_unit_name(e->unit));
		sb_expr(b, e->l);
		sb_add(b, ")", 1);
		break;
	case AST_E_COLLATE:
		sb_add(b, "(", 1);
		sb_expr(b, e->l);
		sb_puts(b, " COLLATE ");
		sb_ident(b, e->name);
		sb_add(b, ")", 1);
		break;
	}
}

static void sb_from(sbuf *b, const ast_from *f)
{
	switch (f->kind) {
	case AST_FROM_TABLE:
		sb_ident(b, f->name);
		break;
	case AST_FROM_SUBQUERY:
		sb_add(b, "(", 1);
		sb_select(b, f->sub);
		sb_add(b, ")", 1);
		break;
	case AST_FROM_JOIN:
		sb_from(b, f->left);
		if (f->join == AST_JOIN_COMMA) {
			sb_puts(b, ", ");
		} else {
			sb_puts(b, f->natural ? " NATURAL" : "");
			sb_puts(b, f->join == AST_JOIN_LEFT    ? " LEFT JOIN "
				   : f->join == AST_JOIN_CROSS ? " CROSS JOIN "
							       : " JOIN ");
		}
		/* A join on the right was parenthesized. */
		if (f->right->kind == AST_FROM_JOIN)
			sb_add(b, "(", 1);
		sb_from(b, f->right);
		if (f->right->kind == AST_FROM_JOIN)
			sb_add(b, ")", 1);
		if (f->on) {
			sb_puts(b, " ON ");
			sb_expr(b, f->on);
		}
		if (f->using_cols) {
			sb_puts(b, " USING ");
			sb_names(b, f->using_cols);
		}
		return;
	}
	if (f->alias) {
		sb_puts(b, " AS ");
		sb_ident(b, f->alias);
	}
	if (f->col_aliases)
		sb_names(b, f->col_aliases);
}

static const char *ast_compound_name(ast_compound_op op)
{
	switch (op) {
	case AST_UNION:
		return " UNION ";
	case AST_UNION_ALL:
		return " UNION ALL ";
	case AST_INTERSECT:
		return " INTERSECT ";
	case AST_EXCEPT:
		return " EXCEPT ";
	}
	return " ? ";
}

static void sb_select_body(sbuf *b, const ast_select *s)
{
	switch (s->kind) {
	case AST_SEL_CORE:
		sb_puts(b, s->distinct ? "SELECT DISTINCT " : "SELECT ");
		for (int i = 0; s->cols && i < s->cols->n; i++) {
			if (i)
				sb_puts(b, ", ");
			sb_expr(b, s->cols->v[i]->expr);
			if (s->cols->v[i]->alias) {
				sb_puts(b, " AS ");
				sb_ident(b, s->cols->v[i]->alias);
			}
		}
		if (s->from) {
			sb_puts(b, " FROM ");
			sb_from(b, s->from);
		}
		if (s->where) {
			sb_puts(b, " WHERE ");
			sb_expr(b, s->where);
		}
		if (s->group_by) {
			sb_puts(b, " GROUP BY ");
			sb_exprs(b, s->group_by);
		}
		if (s->having) {
			sb_puts(b, " HAVING ");
			sb_expr(b, s->having);
		}
		break;
	case AST_SEL_VALUES:
		sb_puts(b, "VALUES ");
		for (int i = 0; s->values && i < s->values->n; i++) {
			sb_puts(b, i ? ", (" : "(");
			sb_exprs(b, s->values->v[i]);
			sb_add(b, ")", 1);
		}
		break;
	case AST_SEL_COMPOUND:
		sb_select_body(b, s->left);
		sb_puts(b, ast_compound_name(s->op));
		sb_select_body(b, s->right);
		break;
	}
}

static void sb_order(sbuf *b, const ast_order_list *l)
{
	for (int i = 0; l && i < l->n; i++) {
		const ast_order_term *t = l->v[i];

		if (i)
			sb_puts(b, ", ");
		sb_expr(b, t->expr);
		if (t->desc)
			sb_puts(b, " DESC");
		if (t->nulls == AST_NULLS_FIRST)
			sb_puts(b, " NULLS FIRST");
		else if (t->nulls == AST_NULLS_LAST)
			sb_puts(b, " NULLS LAST");
	}
}

static void sb_select(sbuf *b, const ast_select *s)
{
	if (s->with) {
		sb_puts(b, "WITH ");
		for (int i = 0; i < s->with->n; i++) {
			const ast_cte *c = s->with->v[i];

			if (i)
				sb_puts(b, ", ");
			sb_ident(b, c->name);
			if (c->cols)
				sb_names(b, c->cols);
			sb_puts(b, " AS (");
			sb_select(b, c->select);
			sb_add(b, ")", 1);
		}
		sb_add(b, " ", 1);
	}
	sb_select_body(b, s);
	if (s->order_by) {
		sb_puts(b, " ORDER BY ");
		sb_order(b, s->order_by);
	}
	if (s->limit) {
		sb_puts(b, " LIMIT ");
		sb_expr(b, s->limit);
	}
	if (s->offset) {
		sb_puts(b, " OFFSET ");
		sb_expr(b, s->offset);
	}
}

static void sb_coldef(sbuf *b, const ast_coldef *c)
{
	sb_ident(b, c->name);
	if (c->type) {
		sb_add(b, " ", 1);
		sb_type(b, c->type);
	}
	if (c->not_null)
		sb_puts(b, " NOT NULL");
	if (c->dflt) {
		/* The grammar takes a literal or an expression in
		 * parentheses. */
		ast_expr_kind k = c->dflt->kind;
		bool lit = k == AST_E_INT || k == AST_E_REAL ||
			   k == AST_E_STRING || k == AST_E_NULL ||
			   k == AST_E_BOOL || k == AST_E_DATE ||
			   /* these render in parentheses already */
			   k == AST_E_UNARY || k == AST_E_BINARY ||
			   k == AST_E_ISNULL || k == AST_E_BETWEEN ||
			   k == AST_E_LIKE || k == AST_E_IN_LIST ||
			   k == AST_E_IN_SELECT || k == AST_E_SUBQUERY ||
			   k == AST_E_COLLATE;
		sb_puts(b, lit ? " DEFAULT " : " DEFAULT (");
		sb_expr(b, c->dflt);
		if (!lit)
			sb_add(b, ")", 1);
	}
	if (c->primary_key) {
		sb_puts(b, " PRIMARY KEY");
		if (c->pk_desc)
			sb_puts(b, " DESC");
		if (c->autoincrement)
			sb_puts(b, " AUTOINCREMENT");
	}
	if (c->unique)
		sb_puts(b, " UNIQUE");
	if (c->collate) {
		sb_puts(b, " COLLATE ");
		sb_ident(b, c->collate);
	}
}

static void sb_stmt(sbuf *b, const ast_stmt *s)
{
	if (s->explain == 1)
		sb_puts(b, "EXPLAIN ");
	else if (s->explain == 2)
		sb_puts(b, "EXPLAIN QUERY PLAN ");
	else if (s->explain == 3)
		sb_puts(b, "EXPLAIN ANALYZE ");
	switch (s->kind) {
	case AST_STMT_SELECT:
		sb_select(b, s->select);
		break;
	case AST_STMT_INSERT:
		sb_puts(b, "INSERT INTO ");
		sb_ident(b, s->name);
		if (s->cols) {
			sb_add(b, " ", 1);
			sb_names(b, s->cols);
		}
		if (s->default_values) {
			sb_puts(b, " DEFAULT VALUES");
		} else {
			sb_add(b, " ", 1);
			sb_select(b, s->select);
		}
		break;
	case AST_STMT_UPDATE:
		sb_puts(b, "UPDATE ");
		sb_ident(b, s->name);
		sb_puts(b, " SET ");
		for (int i = 0; i < s->nsets; i++) {
			if (i)
				sb_puts(b, ", ");
			sb_ident(b, s->sets[i]->col);
			sb_puts(b, " = ");
			sb_expr(b, s->sets[i]->expr);
		}
		if (s->where) {
			sb_puts(b, " WHERE ");
			sb_expr(b, s->where);
		}
		break;
	case AST_STMT_DELETE:
		sb_puts(b, "DELETE FROM ");
		sb_ident(b, s->name);
		if (s->where) {
			sb_puts(b, " WHERE ");
			sb_expr(b, s->where);
		}
		break;
	case AST_STMT_CREATE_TABLE:
		sb_puts(b, s->temp ? "CREATE TEMP TABLE " : "CREATE TABLE ");
		if (s->if_exists)
			sb_puts(b, "IF NOT EXISTS ");
		sb_ident(b, s->name);
		if (s->select) {
			sb_puts(b, " AS ");
			sb_select(b, s->select);
			break;
		}
		sb_puts(b, " (");
		for (int i = 0; i < s->ncoldefs; i++) {
			if (i)
				sb_puts(b, ", ");
			sb_coldef(b, s->coldefs[i]);
		}
		for (int i = 0; i < s->ntabcons; i++) {
			const ast_tabcons *t = s->tabcons[i];

			sb_puts(b, ", ");
			if (t->name) {
				sb_puts(b, "CONSTRAINT ");
				sb_ident(b, t->name);
				sb_add(b, " ", 1);
			}
			sb_puts(b, t->primary_key ? "PRIMARY KEY " : "UNIQUE ");
			sb_names(b, t->cols);
		}
		sb_add(b, ")", 1);
		break;
	case AST_STMT_CREATE_VIEW:
		sb_puts(b, s->temp ? "CREATE TEMP VIEW " : "CREATE VIEW ");
		if (s->if_exists)
			sb_puts(b, "IF NOT EXISTS ");
		sb_ident(b, s->name);
		if (s->cols) {
			sb_add(b, " ", 1);
			sb_names(b, s->cols);
		}
		sb_puts(b, " AS ");
		sb_select(b, s->select);
		break;
	case AST_STMT_CREATE_INDEX:
		sb_puts(b,
			s->unique ? "CREATE UNIQUE INDEX " : "CREATE INDEX ");
		if (s->if_exists)
			sb_puts(b, "IF NOT EXISTS ");
		sb_ident(b, s->name);
		sb_puts(b, " ON ");
		sb_ident(b, s->table);
		sb_puts(b, " (");
		sb_order(b, s->idx_cols);
		sb_add(b, ")", 1);
		break;
	case AST_STMT_DROP_TABLE:
	case AST_STMT_DROP_VIEW:
	case AST_STMT_DROP_INDEX:
		sb_puts(b, s->kind == AST_STMT_DROP_TABLE  ? "DROP TABLE "
			   : s->kind == AST_STMT_DROP_VIEW ? "DROP VIEW "
							   : "DROP INDEX ");
		if (s->if_exists)
			sb_puts(b, "IF EXISTS ");
		sb_ident(b, s->name);
		break;
	case AST_STMT_BEGIN:
		sb_puts(b, "BEGIN");
		break;
	case AST_STMT_COMMIT:
		sb_puts(b, "COMMIT");
		break;
	case AST_STMT_ROLLBACK:
		sb_puts(b, "ROLLBACK");
		break;
	case AST_STMT_PRAGMA:
		sb_puts(b, "PRAGMA ");
		if (s->schema) {
			sb_ident(b, s->schema);
			sb_add(b, ".", 1);
		}
		sb_ident(b, s->name);
		if (s->pragma_value) {
			sb_puts(b, s->pragma_call ? "(" : " = ");
			sb_expr(b, s->pragma_value);
			if (s->pragma_call)
				sb_add(b, ")", 1);
		}
		break;
	case AST_STMT_REINDEX:
		sb_puts(b, "REINDEX");
		if (s->schema) {
			sb_add(b, " ", 1);
			sb_ident(b, s->schema);
			sb_add(b, ".", 1);
		} else if (s->name) {
			sb_add(b, " ", 1);
		}
		if (s->name)
			sb_ident(b, s->name);
		break;
	case AST_STMT_VACUUM:
		sb_puts(b, "VACUUM");
		if (s->schema) {
			sb_add(b, " ", 1);
			sb_ident(b, s->schema);
		}
		if (s->pragma_value) {
			sb_puts(b, " INTO ");
			sb_expr(b, s->pragma_value);
		}
		break;
	}
}

char *ast_to_sql(const ast_stmt *s)
{
	sbuf b = {0};

	sb_stmt(&b, s);
	return sb_finish(&b);
}

char *ast_expr_to_sql(const ast_expr *e)
{
	sbuf b = {0};

	sb_expr(&b, e);
	return sb_finish(&b);
}

char *ast_select_to_sql(const ast_select *s)
{
	sbuf b = {0};

	sb_select(&b, s);
	return sb_finish(&b);
}

const char *ast_stmt_kind_name(ast_stmt_kind k)
{
	static const char *const names[] = {
	    [AST_STMT_SELECT] = "SELECT",
	    [AST_STMT_INSERT] = "INSERT",
	    [AST_STMT_UPDATE] = "UPDATE",
	    [AST_STMT_DELETE] = "DELETE",
	    [AST_STMT_CREATE_TABLE] = "CREATE TABLE",
	    [AST_STMT_DROP_TABLE] = "DROP TABLE",
	    [AST_STMT_CREATE_VIEW] = "CREATE VIEW",
	    [AST_STMT_DROP_VIEW] = "DROP VIEW",
	    [AST_STMT_CREATE_INDEX] = "CREATE INDEX",
	    [AST_STMT_DROP_INDEX] = "DROP INDEX",
	    [AST_STMT_BEGIN] = "BEGIN",
	    [AST_STMT_COMMIT] = "COMMIT",
	    [AST_STMT_ROLLBACK] = "ROLLBACK",
	    [AST_STMT_PRAGMA] = "PRAGMA",
	    [AST_STMT_REINDEX] = "REINDEX",
	    [AST_STMT_VACUUM] = "VACUUM",
	};

	if ((unsigned)k < sizeof(names) / sizeof(names[0]) && names[k])
		return names[k];
	return "?";
}
