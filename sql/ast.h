/*
 * ast.h - the abstract syntax tree of one SQL statement.
 *
 * Everything a parse builds lives in one arena (ast_arena): freeing the
 * parse frees the tree with one call, and nodes never own each other.
 *
 * Node families and kinds:
 *
 *   ast_stmt      one statement; kind is an ast_stmt_kind (SELECT, INSERT,
 *                 UPDATE, DELETE, CREATE/DROP TABLE|VIEW|INDEX, BEGIN,
 *                 COMMIT, ROLLBACK, PRAGMA).  EXPLAIN is a flag on it.
 *   ast_select    a query.  AST_SEL_CORE is SELECT ... FROM ... WHERE ...
 *                 GROUP BY ... HAVING; AST_SEL_VALUES is VALUES (..),(..);
 *                 AST_SEL_COMPOUND joins left and right with UNION [ALL],
 *                 INTERSECT or EXCEPT (left-deep: a UNION b EXCEPT c is
 *                 (a UNION b) EXCEPT c).  WITH, ORDER BY and LIMIT/OFFSET
 *                 sit on the outermost node and apply to all of it.
 *   ast_from      a FROM item: AST_FROM_TABLE (a named table or view, or
 *                 a CTE name), AST_FROM_SUBQUERY ((SELECT ...) AS x(cols)),
 *                 AST_FROM_JOIN (left-deep: left JOIN right ON/USING; comma
 *                 joins are AST_JOIN_COMMA).
 *   ast_expr      an expression; kind is an ast_expr_kind, operator kinds
 *                 carry an ast_op.  Operands are l, r, x (third operand)
 *                 and list; subqueries hang on sub.  NOT IN, NOT LIKE,
 *                 NOT BETWEEN, IS NOT NULL are the positive kind with
 *                 `negated` set.  `*` and `t.*` in a select list are
 *                 AST_E_STAR.
 *   ast_type      a declared type: the text as written, the canonical
 *                 name (upper case, words joined by one space), up to two
 *                 numeric arguments and a coarse class.
 *   ast_coldef    a CREATE TABLE column with its constraints;
 *                 ast_tabcons a table constraint (PRIMARY KEY / UNIQUE).
 *
 * A minus before a number literal is folded into it (-1 is AST_E_INT -1),
 * so negative constants are literals (DEFAULT -1).
 *
 * Every node has `off`, the byte offset of its first token in the SQL
 * text, for error messages; expressions also have `end` (one past their
 * last byte) so that a result column can be named by its text.
 *
 * Binder slots: ast_expr has rtype (resolved type), rel and col (which
 * input relation and column a reference resolved to), agg (aggregate
 * slot) and bind (anything else); ast_select, ast_from and ast_stmt have
 * a `bind` pointer.  The parser leaves them zero.
 *
 * Depth: every node records its height; the builders refuse trees deeper
 * than AST_MAX_HEIGHT, so recursive walkers (ast_to_sql, the binder) may
 * recurse without blowing the C stack.
 */
#ifndef GPMDB_SQL_AST_H
#define GPMDB_SQL_AST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Deepest tree the builders accept (SQLite's default expression limit). */
#define AST_MAX_HEIGHT 1000

/* ---- arena ---- */

typedef struct ast_chunk ast_chunk;

/* Building errors the arena records; the parser turns them into text. */
enum ast_build_err {
	AST_OK = 0,
	AST_ERR_NOMEM,
	AST_ERR_DEPTH,	  /* expression tree too deep */
	AST_ERR_COMPOUND, /* compound SELECT too deep */
	AST_ERR_JOIN,	  /* join chain too deep */
};

typedef struct ast_arena {
	ast_chunk *head;
	char *cur, *lim;
	int err;	  /* enum ast_build_err; first one wins */
	uint32_t err_off; /* source offset of the node that failed */
	/* Handed out when malloc fails so builders need not test for NULL;
	 * the parse is then discarded without being walked. */
	_Alignas(16) char scratch[512];
} ast_arena;

void ast_arena_init(ast_arena *a);
void ast_arena_free(ast_arena *a);
/* Zeroed memory; on failure sets a->err and returns NULL. */
void *ast_alloc(ast_arena *a, size_t n);
/* A zeroed node of at most sizeof(scratch) bytes; never NULL. */
void *ast_node(ast_arena *a, size_t n);
/* NUL-terminated copy of n bytes; "" (never NULL) on failure. */
char *ast_strndup(ast_arena *a, const char *s, size_t n);

/* ---- lists ---- */

typedef struct ast_expr ast_expr;
typedef struct ast_select ast_select;
typedef struct ast_from ast_from;

typedef struct ast_expr_list {
	int n, cap;
	ast_expr **v;
} ast_expr_list;

typedef struct ast_name_list {
	int n, cap;
	char **v;
} ast_name_list;

ast_expr_list *ast_expr_list_add(ast_arena *a, ast_expr_list *l, ast_expr *e);
ast_name_list *ast_name_list_add(ast_arena *a, ast_name_list *l, char *name);

/* ---- types ---- */

typedef enum ast_type_class {
	AST_TYPE_OTHER = 0, /* a name we do not know; kept as written */
	AST_TYPE_INT,	    /* INT, INTEGER, BIGINT, SMALLINT, TINYINT */
	AST_TYPE_REAL,	    /* FLOAT, REAL, DOUBLE [PRECISION] */
	AST_TYPE_DECIMAL,   /* DECIMAL(p,s), NUMERIC(p,s) */
	AST_TYPE_DATE,
	AST_TYPE_BOOLEAN,
	AST_TYPE_TEXT, /* TEXT, VARCHAR(n), CHAR(n), CHARACTER(n), ... */
} ast_type_class;

typedef struct ast_type {
	char *text;   /* as written, e.g. "decimal( 15, 2 )" */
	char *name;   /* canonical: "DECIMAL", "DOUBLE PRECISION" */
	int nargs;    /* 0, 1 or 2 */
	int64_t p, s; /* the arguments: precision/length, scale */
	ast_type_class cls;
	int int_bytes; /* AST_TYPE_INT: 1, 2, 4 or 8 */
} ast_type;

/* Fills name's class (and int_bytes) from its canonical name. */
void ast_type_classify(ast_type *t);

/* ---- expressions ---- */

typedef enum ast_expr_kind {
	AST_E_INT,    /* ival */
	AST_E_REAL,   /* rval */
	AST_E_STRING, /* str, slen (quotes removed, '' unescaped) */
	AST_E_NULL,
	AST_E_BOOL,	 /* ival 0 or 1 */
	AST_E_PARAM,	 /* ival = parameter number (1-based); name or NULL */
	AST_E_DATE,	 /* DATE 'y-m-d': ival = days since 1970-01-01; str */
	AST_E_INTERVAL,	 /* INTERVAL 'n' unit: ival = n, unit */
	AST_E_COLUMN,	 /* [table.]name */
	AST_E_STAR,	 /* * or table.* in a select list */
	AST_E_UNARY,	 /* op l */
	AST_E_BINARY,	 /* l op r (arithmetic, comparison, AND/OR, IS) */
	AST_E_ISNULL,	 /* l IS [NOT] NULL, ISNULL, NOTNULL */
	AST_E_BETWEEN,	 /* l [NOT] BETWEEN r AND x */
	AST_E_LIKE,	 /* l [NOT] LIKE|GLOB r [ESCAPE x]; op says which */
	AST_E_IN_LIST,	 /* l [NOT] IN (list) */
	AST_E_IN_SELECT, /* l [NOT] IN (sub) */
	AST_E_EXISTS,	 /* EXISTS (sub) */
	AST_E_SUBQUERY,	 /* (sub), a scalar subquery */
	AST_E_CASE,    /* CASE [l] WHEN list[0] THEN list[1] ... [ELSE r] END */
	AST_E_CAST,    /* CAST(l AS type) */
	AST_E_FUNC,    /* name(list), name(DISTINCT list), name(*) */
	AST_E_EXTRACT, /* EXTRACT(unit FROM l) */
	AST_E_COLLATE, /* l COLLATE name */
} ast_expr_kind;

typedef enum ast_op {
	AST_OP_NONE = 0,
	/* unary */
	AST_OP_NEG,
	AST_OP_PLUS,
	AST_OP_NOT,
	AST_OP_BITNOT,
	/* binary */
	AST_OP_OR,
	AST_OP_AND,
	AST_OP_EQ,
	AST_OP_NE,
	AST_OP_LT,
	AST_OP_LE,
	AST_OP_GT,
	AST_OP_GE,
	AST_OP_IS,
	AST_OP_ISNOT,
	AST_OP_BITAND,
	AST_OP_BITOR,
	AST_OP_LSHIFT,
	AST_OP_RSHIFT,
	AST_OP_ADD,
	AST_OP_SUB,
	AST_OP_MUL,
	AST_OP_DIV,
	AST_OP_MOD,
	AST_OP_CONCAT,
	/* AST_E_LIKE */
	AST_OP_LIKE,
	AST_OP_GLOB,
} ast_op;

/* Units of INTERVAL and fields of EXTRACT. */
typedef enum ast_unit {
	AST_UNIT_NONE = 0,
	AST_UNIT_DAY,
	AST_UNIT_MONTH,
	AST_UNIT_YEAR,
} ast_unit;

struct ast_expr {
	ast_expr_kind kind;
	ast_op op;
	bool negated;	   /* NOT IN, NOT LIKE, NOT BETWEEN, IS NOT NULL */
	bool distinct;	   /* f(DISTINCT ...) */
	bool star;	   /* f(*) */
	ast_unit unit;	   /* INTERVAL, EXTRACT */
	int height;	   /* 1 for leaves */
	uint32_t off, end; /* source span [off, end) */

	ast_expr *l, *r, *x; /* operands, see the kinds */
	ast_expr_list *list; /* IN list, arguments, CASE WHEN/THEN pairs */
	ast_select *sub;     /* IN, EXISTS, scalar subquery */
	ast_type *type;	     /* CAST */

	char *name;  /* column, function, parameter or collation name */
	char *table; /* qualifier of a column or star; NULL if none */
	char *str;   /* string literal (may hold NUL bytes: see slen) */
	size_t slen;
	int64_t ival;
	double rval;
	/* The literal was 9223372036854775808: negating it gives INT64_MIN. */
	bool int_min_abs;

	/* binder slots */
	int rtype;    /* resolved type, the binder's enum; 0 = unresolved */
	int rel, col; /* input relation and column of a reference */
	int agg;      /* aggregate slot */
	void *bind;
};

/* ---- SELECT ---- */

typedef struct ast_result_col {
	ast_expr *expr; /* AST_E_STAR for * and t.* */
	char *alias;	/* NULL if none */
} ast_result_col;

typedef struct ast_result_list {
	int n, cap;
	ast_result_col **v;
} ast_result_list;

enum { AST_NULLS_DEFAULT = 0, AST_NULLS_FIRST, AST_NULLS_LAST };

typedef struct ast_order_term {
	ast_expr *expr;
	bool desc;
	int nulls; /* AST_NULLS_* */
} ast_order_term;

typedef struct ast_order_list {
	int n, cap;
	ast_order_term **v;
} ast_order_list;

typedef enum ast_join_type {
	AST_JOIN_COMMA = 0, /* a, b */
	AST_JOIN_INNER,	    /* a [INNER] JOIN b */
	AST_JOIN_LEFT,	    /* a LEFT [OUTER] JOIN b */
	AST_JOIN_CROSS,	    /* a CROSS JOIN b */
} ast_join_type;

typedef enum ast_from_kind {
	AST_FROM_TABLE,
	AST_FROM_SUBQUERY,
	AST_FROM_JOIN,
} ast_from_kind;

struct ast_from {
	ast_from_kind kind;
	int height;
	uint32_t off;
	char *name;		    /* TABLE */
	ast_select *sub;	    /* SUBQUERY */
	char *alias;		    /* TABLE, SUBQUERY; NULL if none */
	ast_name_list *col_aliases; /* AS x(a, b); NULL if none */
	/* JOIN */
	ast_join_type join;
	bool natural;
	ast_from *left, *right;
	ast_expr *on;		   /* NULL if none */
	ast_name_list *using_cols; /* NULL if none */
	void *bind;
};

typedef struct ast_cte {
	char *name;
	ast_name_list *cols; /* NULL if none */
	ast_select *select;
	uint32_t off;
} ast_cte;

typedef struct ast_with {
	int n, cap;
	ast_cte **v;
} ast_with;

typedef enum ast_select_kind {
	AST_SEL_CORE,
	AST_SEL_VALUES,
	AST_SEL_COMPOUND,
} ast_select_kind;

typedef enum ast_compound_op {
	AST_UNION = 1,
	AST_UNION_ALL,
	AST_INTERSECT,
	AST_EXCEPT,
} ast_compound_op;

typedef struct ast_values {
	int n, cap;
	ast_expr_list **v; /* rows */
} ast_values;

struct ast_select {
	ast_select_kind kind;
	int height;
	uint32_t off;
	/* CORE */
	bool distinct;
	ast_result_list *cols;
	ast_from *from; /* NULL if none */
	ast_expr *where;
	ast_expr_list *group_by;
	ast_expr *having;
	/* VALUES */
	ast_values *values;
	/* COMPOUND */
	ast_compound_op op;
	ast_select *left, *right;
	/* the whole query (outermost node only) */
	ast_with *with;
	ast_order_list *order_by;
	ast_expr *limit, *offset;
	void *bind;
};

/* ---- DDL ---- */

typedef struct ast_coldef {
	char *name;
	ast_type *type; /* NULL: no type written */
	bool not_null;
	bool primary_key, pk_desc, autoincrement;
	bool unique;
	ast_expr *dflt; /* DEFAULT; NULL if none */
	char *collate;	/* NULL if none */
	uint32_t off;
} ast_coldef;

typedef struct ast_tabcons {
	bool primary_key; /* else UNIQUE */
	char *name;	  /* CONSTRAINT name; NULL if none */
	ast_name_list *cols;
	uint32_t off;
} ast_tabcons;

/* ---- statements ---- */

typedef enum ast_stmt_kind {
	AST_STMT_SELECT = 1,
	AST_STMT_INSERT,
	AST_STMT_UPDATE,
	AST_STMT_DELETE,
	AST_STMT_CREATE_TABLE,
	AST_STMT_DROP_TABLE,
	AST_STMT_CREATE_VIEW,
	AST_STMT_DROP_VIEW,
	AST_STMT_CREATE_INDEX,
	AST_STMT_DROP_INDEX,
	AST_STMT_BEGIN,
	AST_STMT_COMMIT,
	AST_STMT_ROLLBACK,
	AST_STMT_PRAGMA,
	AST_STMT_REINDEX, /* name NULL: every index; schema as PRAGMA's */
	AST_STMT_VACUUM,  /* INTO pragma_value (NULL: plain VACUUM) */
} ast_stmt_kind;

typedef struct ast_set_clause {
	char *col;
	ast_expr *expr;
} ast_set_clause;

typedef struct ast_stmt {
	ast_stmt_kind kind;
	int explain; /* 0, 1 EXPLAIN, 2 EXPLAIN QUERY PLAN, 3 EXPLAIN ANALYZE */
	uint32_t off, end; /* the statement's text, without the ';' */

	char *name;	/* table, view, index or pragma name */
	char *schema;	/* PRAGMA/REINDEX schema.name; NULL if none */
	bool if_exists; /* DROP ... IF EXISTS; CREATE ... IF NOT EXISTS */
	bool unique;	/* CREATE UNIQUE INDEX */
	bool temp;	/* CREATE TEMP TABLE|VIEW */
	bool immediate; /* BEGIN IMMEDIATE|EXCLUSIVE: the write lock now */

	ast_select *select;  /* SELECT, CREATE VIEW, INSERT source (NULL
			      * with default_values) */
	bool default_values; /* INSERT ... DEFAULT VALUES */
	ast_name_list *cols; /* INSERT (cols), CREATE VIEW v(cols) */

	/* CREATE TABLE */
	int ncoldefs, coldefs_cap;
	ast_coldef **coldefs;
	int ntabcons, tabcons_cap;
	ast_tabcons **tabcons;

	/* CREATE INDEX */
	char *table;		  /* the indexed table */
	ast_order_list *idx_cols; /* AST_E_COLUMN terms with ASC/DESC */

	/* UPDATE */
	int nsets, sets_cap;
	ast_set_clause **sets;
	ast_expr *where; /* UPDATE, DELETE */

	/* PRAGMA */
	ast_expr *pragma_value; /* NULL if none */
	bool pragma_call;	/* PRAGMA x(v) rather than PRAGMA x = v */

	void *bind;
} ast_stmt;

/* ---- builders (used by the grammar) ---- */

ast_expr *ast_expr_new(ast_arena *a, ast_expr_kind kind, uint32_t off,
		       uint32_t end);
/* Computes e->height from its operands; records AST_ERR_DEPTH. */
ast_expr *ast_expr_fix(ast_arena *a, ast_expr *e);
ast_expr *ast_unary(ast_arena *a, ast_op op, ast_expr *l, uint32_t off);
ast_expr *ast_binary(ast_arena *a, ast_op op, ast_expr *l, ast_expr *r);

ast_select *ast_select_new(ast_arena *a, ast_select_kind kind, uint32_t off);
/* Computes s->height (after its parts are set); records depth errors. */
ast_select *ast_select_fix(ast_arena *a, ast_select *s);
/* Appends a row to a VALUES select, keeping its height. */
void ast_select_add_row(ast_arena *a, ast_select *s, ast_expr_list *row);
ast_from *ast_from_join(ast_arena *a, ast_from *left, ast_join_type join,
			bool natural, ast_from *right, ast_expr *on,
			ast_name_list *using_cols);
int ast_from_height(const ast_from *f);

ast_result_list *ast_result_add(ast_arena *a, ast_result_list *l, ast_expr *e,
				char *alias);
ast_order_list *ast_order_add(ast_arena *a, ast_order_list *l, ast_expr *e,
			      bool desc, int nulls);
ast_values *ast_values_add(ast_arena *a, ast_values *v, ast_expr_list *row);
ast_with *ast_with_add(ast_arena *a, ast_with *w, ast_cte *cte);
void ast_stmt_add_coldef(ast_arena *a, ast_stmt *s, ast_coldef *c);
void ast_stmt_add_tabcons(ast_arena *a, ast_stmt *s, ast_tabcons *t);
void ast_stmt_add_set(ast_arena *a, ast_stmt *s, char *col, ast_expr *e);

/* ---- rendering ---- */

/*
 * Renders canonical SQL: keywords in upper case, identifiers as written
 * (double-quoted when they need it), every operator expression in
 * parentheses so that precedence is explicit, `==` as `=`, `<>` as `!=`,
 * ISNULL/NOTNULL as IS [NOT] NULL, LIMIT a, b as LIMIT b OFFSET a.
 * Returns a malloc'd string (free with free()), NULL if out of memory.
 */
char *ast_to_sql(const ast_stmt *s);
char *ast_expr_to_sql(const ast_expr *e);
char *ast_select_to_sql(const ast_select *s);

/* Names for messages and debugging. */
const char *ast_op_name(ast_op op);
const char *ast_stmt_kind_name(ast_stmt_kind k);

#endif /* GPMDB_SQL_AST_H */
