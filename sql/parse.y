/*
 * parse.y - gpmdb's SQL grammar, for the lemon parser generator.
 *
 * One statement per parse: the driver (parser.c) feeds tokens up to and
 * including the ';', then the end marker.  Actions build the AST in the
 * parse's arena (see ast.h); errors go to the context (parser.c), whose
 * first error wins.  Operator precedence is SQLite's.
 */

%name parse_gen
%token_prefix TK_
%token_type {lex_tok}
%extra_context {parse_ctx *ctx}
%start_symbol input

/* A bounded stack: nesting too deep is an error, not a C stack overflow. */
%stack_size 8000
%stack_overflow { parse_stack_overflow(ctx); }
%syntax_error { parse_syntax_error(ctx, yymajor, TOKEN); }

%include {
#include "parser.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

/* The lemon template fetches %extra_context in functions that do not
 * use it. */
#pragma GCC diagnostic ignored "-Wunused-variable"


#define A_ (ctx->a)

/* Join operators: an ast_join_type, plus this flag for NATURAL. */
#define JOIN_NATURAL 0x100

typedef struct limit_clause {
	ast_expr *limit, *offset;
} limit_clause;

/* A CREATE TABLE element: a column or a table constraint. */
typedef struct ct_item {
	ast_coldef *col;
	ast_tabcons *cons;
} ct_item;

/* ON / USING of a join. */
typedef struct join_cons {
	ast_expr *on;
	ast_name_list *using_cols;
} join_cons;

/* A span of the text (type names). */
typedef struct span {
	uint32_t off, end;
} span;

static ast_expr *mk_leaf(parse_ctx *ctx, ast_expr_kind k, lex_tok t)
{
	return ast_expr_new(ctx->a, k, t.off, TOK_END(t));
}

static ast_expr *mk_like(parse_ctx *ctx, ast_expr *l, int op, ast_expr *r,
			 ast_expr *esc)
{
	ast_expr *e = ast_expr_new(ctx->a, AST_E_LIKE, l->off,
				   esc ? esc->end : r->end);
	e->op = (ast_op)(op & 0xff);
	e->negated = (op & 0x100) != 0;
	e->l = l;
	e->r = r;
	e->x = esc;
	return ast_expr_fix(ctx->a, e);
}

static ast_expr *mk_isnull(parse_ctx *ctx, ast_expr *l, bool neg, uint32_t end)
{
	ast_expr *e = ast_expr_new(ctx->a, AST_E_ISNULL, l->off, end);
	e->negated = neg;
	e->l = l;
	return ast_expr_fix(ctx->a, e);
}

/* a IS b; a IS NULL becomes the IS NULL test. */
static ast_expr *mk_is(parse_ctx *ctx, ast_expr *l, bool neg, ast_expr *r)
{
	if (r->kind == AST_E_NULL)
		return mk_isnull(ctx, l, neg, r->end);
	return ast_binary(ctx->a, neg ? AST_OP_ISNOT : AST_OP_IS, l, r);
}

static ast_expr *mk_in(parse_ctx *ctx, ast_expr *l, bool neg,
		       ast_expr_list *list, ast_select *sub, lex_tok rp)
{
	ast_expr *e = ast_expr_new(ctx->a,
				   sub ? AST_E_IN_SELECT : AST_E_IN_LIST,
				   l->off, TOK_END(rp));
	e->negated = neg;
	e->l = l;
	e->list = list;
	e->sub = sub;
	return ast_expr_fix(ctx->a, e);
}

static ast_expr *mk_sub(parse_ctx *ctx, ast_expr_kind k, ast_select *s,
			lex_tok first, lex_tok rp)
{
	ast_expr *e = ast_expr_new(ctx->a, k, first.off, TOK_END(rp));
	e->sub = s;
	return ast_expr_fix(ctx->a, e);
}

static ast_expr *mk_func(parse_ctx *ctx, lex_tok name, ast_expr_list *args,
			 bool distinct, bool star, lex_tok rp)
{
	ast_expr *e = ast_expr_new(ctx->a, AST_E_FUNC, name.off, TOK_END(rp));
	e->name = parse_ident(ctx, name);
	e->list = args;
	e->distinct = distinct;
	e->star = star;
	return ast_expr_fix(ctx->a, e);
}

static ast_from *mk_from(parse_ctx *ctx, ast_from_kind k, uint32_t off,
			 char *name, ast_select *sub, char *alias,
			 ast_name_list *cols)
{
	ast_from *f = ast_node(ctx->a, sizeof(*f));
	f->kind = k;
	f->off = off;
	f->name = name;
	f->sub = sub;
	f->alias = alias;
	f->col_aliases = cols;
	f->height = 1 + (sub ? sub->height : 0);
	return f;
}

static ast_select *mk_compound(parse_ctx *ctx, ast_select *l, int op,
			       ast_select *r)
{
	ast_select *s = ast_select_new(ctx->a, AST_SEL_COMPOUND, l->off);
	s->op = (ast_compound_op)op;
	s->left = l;
	s->right = r;
	return ast_select_fix(ctx->a, s);
}
}

/* Keywords that may also be names (a column called "key" or "date"). */
%fallback ID ASC DESC FIRST LAST NULLS KEY TEMP REPLACE IF PLAN QUERY ANALYZE
	RECURSIVE DEFERRED IMMEDIATE EXCLUSIVE TRANSACTION AUTOINCREMENT
	OFFSET DATE INTERVAL EXTRACT TRUE FALSE FOR REINDEX VACUUM.

/* LEFT, RIGHT, FULL, INNER, CROSS, NATURAL and OUTER are reserved: lemon
 * tries a fallback before a default reduction, so "FROM t LEFT JOIN u"
 * would read LEFT as an alias of t. */

/* Precedence, lowest first (SQLite's levels). */
%left OR.
%left AND.
%right NOT.
%left IS LIKE GLOB BETWEEN IN ISNULL NOTNULL NE EQ.
%left GT LE LT GE.
%right ESCAPE.
%left BITAND BITOR LSHIFT RSHIFT.
%left PLUS MINUS.
%left STAR SLASH REM.
%left CONCAT.
%left COLLATE.
%right BITNOT.

input ::= cmdx SEMI.
input ::= cmdx.

cmdx ::= cmd(S). { ctx->stmt = S; }
cmdx ::= EXPLAIN cmd(S). { S->explain = 1; ctx->stmt = S; }
cmdx ::= EXPLAIN QUERY PLAN cmd(S). { S->explain = 2; ctx->stmt = S; }
cmdx ::= EXPLAIN ANALYZE cmd(S). { S->explain = 3; ctx->stmt = S; }

%type cmd {ast_stmt *}

/* ---- names ---- */

%type nm {char *}
nm(A) ::= ID(X). { A = parse_ident(ctx, X); }

%type nmlist {ast_name_list *}
nmlist(A) ::= nm(X). { A = ast_name_list_add(A_, NULL, X); }
nmlist(A) ::= nmlist(A) COMMA nm(X). { A = ast_name_list_add(A_, A, X); }

%type collist_opt {ast_name_list *}
collist_opt(A) ::= . { A = NULL; }
collist_opt(A) ::= LP nmlist(X) RP. { A = X; }

%type ifexists {bool}
ifexists(A) ::= . { A = false; }
ifexists(A) ::= IF EXISTS. { A = true; }

%type ifnotexists {bool}
ifnotexists(A) ::= . { A = false; }
ifnotexists(A) ::= IF NOT EXISTS. { A = true; }

%type temp {bool}
temp(A) ::= . { A = false; }
temp(A) ::= TEMP. { A = true; }

/* ---- transactions, PRAGMA ---- */

cmd(A) ::= BEGIN trans_kind(K) trans_opt. { A = parse_stmt_new(ctx, AST_STMT_BEGIN); if (A) A->immediate = K; }
cmd(A) ::= COMMIT trans_opt. { A = parse_stmt_new(ctx, AST_STMT_COMMIT); }
cmd(A) ::= END trans_opt. { A = parse_stmt_new(ctx, AST_STMT_COMMIT); }
cmd(A) ::= ROLLBACK trans_opt. { A = parse_stmt_new(ctx, AST_STMT_ROLLBACK); }
%type trans_kind {bool}
trans_kind(A) ::= . { A = false; }
trans_kind(A) ::= DEFERRED. { A = false; }
trans_kind(A) ::= IMMEDIATE. { A = true; }
trans_kind(A) ::= EXCLUSIVE. { A = true; }
trans_opt ::= .
trans_opt ::= TRANSACTION.
trans_opt ::= TRANSACTION nm.

%type pragma_head {ast_stmt *}
pragma_head(A) ::= PRAGMA nm(N). {
	A = parse_stmt_new(ctx, AST_STMT_PRAGMA);
	A->name = N;
}
pragma_head(A) ::= PRAGMA nm(S) DOT nm(N). {
	A = parse_stmt_new(ctx, AST_STMT_PRAGMA);
	A->schema = S;
	A->name = N;
}
cmd(A) ::= pragma_head(A).
cmd(A) ::= pragma_head(A) EQ pragma_value(V). { A->pragma_value = V; }
cmd(A) ::= pragma_head(A) LP pragma_value(V) RP. {
	A->pragma_value = V;
	A->pragma_call = true;
}

%type pragma_value {ast_expr *}
pragma_value(A) ::= signed_number(A).
pragma_value(A) ::= STRING(X). { A = parse_string(ctx, X); }
pragma_value(A) ::= ID(X). {
	A = mk_leaf(ctx, AST_E_COLUMN, X);
	A->name = parse_ident(ctx, X);
}
pragma_value(A) ::= ON(X). {
	A = mk_leaf(ctx, AST_E_BOOL, X);
	A->ival = 1;
}
pragma_value(A) ::= TRUE(X). {
	A = mk_leaf(ctx, AST_E_BOOL, X);
	A->ival = 1;
}
pragma_value(A) ::= FALSE(X). { A = mk_leaf(ctx, AST_E_BOOL, X); }

%type signed_number {ast_expr *}
signed_number(A) ::= INTEGER(X). { A = parse_number(ctx, X, false); }
signed_number(A) ::= FLOAT(X). { A = parse_number(ctx, X, true); }
signed_number(A) ::= PLUS INTEGER(X). { A = parse_number(ctx, X, false); }
signed_number(A) ::= PLUS FLOAT(X). { A = parse_number(ctx, X, true); }
signed_number(A) ::= MINUS(M) INTEGER(X). {
	A = ast_unary(A_, AST_OP_NEG, parse_number(ctx, X, false), M.off);
}
signed_number(A) ::= MINUS(M) FLOAT(X). {
	A = ast_unary(A_, AST_OP_NEG, parse_number(ctx, X, true), M.off);
}

/* ---- CREATE TABLE ---- */

%type ct_head {ast_stmt *}
ct_head(A) ::= CREATE temp(T) TABLE ifnotexists(E) nm(N). {
	A = parse_stmt_new(ctx, AST_STMT_CREATE_TABLE);
	A->temp = T;
	A->if_exists = E;
	A->name = N;
}

%type ct_items {ast_stmt *}
ct_items(A) ::= ct_head(A) LP ct_item(I). {
	if (I.col)
		ast_stmt_add_coldef(A_, A, I.col);
	else
		ast_stmt_add_tabcons(A_, A, I.cons);
}
ct_items(A) ::= ct_items(A) COMMA ct_item(I). {
	if (I.col)
		ast_stmt_add_coldef(A_, A, I.col);
	else
		ast_stmt_add_tabcons(A_, A, I.cons);
}
cmd(A) ::= ct_items(A) RP.
cmd(A) ::= ct_head(A) AS select(S). { A->select = S; }

%type ct_item {ct_item}
ct_item(A) ::= coldef(C). { A.col = C; A.cons = NULL; }
ct_item(A) ::= tcons(T). { A.col = NULL; A.cons = T; }

%type coldef {ast_coldef *}
coldef(A) ::= ID(N) typetoken_opt(T). {
	A = ast_node(A_, sizeof(*A));
	A->name = parse_ident(ctx, N);
	A->type = T;
	A->off = N.off;
}
coldef(A) ::= coldef(A) CONSTRAINT nm.
coldef(A) ::= coldef(A) NOT NULL. { A->not_null = true; }
coldef(A) ::= coldef(A) NULL.
coldef(A) ::= coldef(A) DEFAULT dflt(E). { A->dflt = E; }
coldef(A) ::= coldef(A) PRIMARY KEY sortorder(D) autoinc(I). {
	A->primary_key = true;
	A->pk_desc = D;
	A->autoincrement = I;
}
coldef(A) ::= coldef(A) UNIQUE. { A->unique = true; }
coldef(A) ::= coldef(A) COLLATE nm(C). { A->collate = C; }

%type autoinc {bool}
autoinc(A) ::= . { A = false; }
autoinc(A) ::= AUTOINCREMENT. { A = true; }

/* DEFAULT takes a term, or any expression in parentheses: a bare
 * expression would swallow the NOT of a following NOT NULL. */
%type dflt {ast_expr *}
dflt(A) ::= literal(A).
dflt(A) ::= PLUS INTEGER(X). { A = parse_number(ctx, X, false); }
dflt(A) ::= PLUS FLOAT(X). { A = parse_number(ctx, X, true); }
dflt(A) ::= MINUS(M) INTEGER(X). {
	A = ast_unary(A_, AST_OP_NEG, parse_number(ctx, X, false), M.off);
}
dflt(A) ::= MINUS(M) FLOAT(X). {
	A = ast_unary(A_, AST_OP_NEG, parse_number(ctx, X, true), M.off);
}
dflt(A) ::= LP(L) expr(X) RP(R). { A = X; A->off = L.off; A->end = TOK_END(R); }

%type tcons {ast_tabcons *}
tcons(A) ::= cname(N) PRIMARY(P) KEY LP nmlist(L) RP. {
	A = ast_node(A_, sizeof(*A));
	A->primary_key = true;
	A->name = N;
	A->cols = L;
	A->off = P.off;
}
tcons(A) ::= cname(N) UNIQUE(P) LP nmlist(L) RP. {
	A = ast_node(A_, sizeof(*A));
	A->name = N;
	A->cols = L;
	A->off = P.off;
}
%type cname {char *}
cname(A) ::= . { A = NULL; }
cname(A) ::= CONSTRAINT nm(N). { A = N; }

/* A type: one or more words, then (n) or (p, s). */
%type typetoken_opt {ast_type *}
typetoken_opt(A) ::= . { A = NULL; }
typetoken_opt(A) ::= typetoken(A).

%type typetoken {ast_type *}
typetoken(A) ::= typename(N). {
	A = parse_type(ctx, N.off, N.end, N.end, 0, 0, 0);
}
typetoken(A) ::= typename(N) LP signed(P) RP(R). {
	A = parse_type(ctx, N.off, N.end, TOK_END(R), 1, P, 0);
}
typetoken(A) ::= typename(N) LP signed(P) COMMA signed(S) RP(R). {
	A = parse_type(ctx, N.off, N.end, TOK_END(R), 2, P, S);
}
%type typename {span}
typename(A) ::= ID(X). { A.off = X.off; A.end = TOK_END(X); }
typename(A) ::= typename(A) ID(X). { A.end = TOK_END(X); }

%type signed {int64_t}
signed(A) ::= INTEGER(X). { A = parse_signed(ctx, X, 1); }
signed(A) ::= PLUS INTEGER(X). { A = parse_signed(ctx, X, 1); }
signed(A) ::= MINUS INTEGER(X). { A = parse_signed(ctx, X, -1); }

cmd(A) ::= DROP TABLE ifexists(E) nm(N). {
	A = parse_stmt_new(ctx, AST_STMT_DROP_TABLE);
	A->if_exists = E;
	A->name = N;
}

/* ---- views and indexes ---- */

cmd(A) ::= CREATE temp(T) VIEW ifnotexists(E) nm(N) collist_opt(C) AS select(S). {
	A = parse_stmt_new(ctx, AST_STMT_CREATE_VIEW);
	A->temp = T;
	A->if_exists = E;
	A->name = N;
	A->cols = C;
	A->select = S;
}
cmd(A) ::= DROP VIEW ifexists(E) nm(N). {
	A = parse_stmt_new(ctx, AST_STMT_DROP_VIEW);
	A->if_exists = E;
	A->name = N;
}
cmd(A) ::= CREATE uniq(U) INDEX ifnotexists(E) nm(N) ON nm(T) LP idxlist(L) RP. {
	A = parse_stmt_new(ctx, AST_STMT_CREATE_INDEX);
	A->unique = U;
	A->if_exists = E;
	A->name = N;
	A->table = T;
	A->idx_cols = L;
}
cmd(A) ::= DROP INDEX ifexists(E) nm(N). {
	A = parse_stmt_new(ctx, AST_STMT_DROP_INDEX);
	A->if_exists = E;
	A->name = N;
}
/* REINDEX [[schema.]name]: every index, a collation's, a table's or one
 * (engine/reindex.c) */
cmd(A) ::= REINDEX. { A = parse_stmt_new(ctx, AST_STMT_REINDEX); }
cmd(A) ::= REINDEX nm(N). {
	A = parse_stmt_new(ctx, AST_STMT_REINDEX);
	A->name = N;
}
cmd(A) ::= REINDEX nm(S) DOT nm(N). {
	A = parse_stmt_new(ctx, AST_STMT_REINDEX);
	A->schema = S;
	A->name = N;
}
/* VACUUM [schema] [INTO file]: INTO writes a copy of the database
 * (engine/backup.c); plain VACUUM encodes every table in place */
cmd(A) ::= VACUUM. { A = parse_stmt_new(ctx, AST_STMT_VACUUM); }
cmd(A) ::= VACUUM nm(S). {
	A = parse_stmt_new(ctx, AST_STMT_VACUUM);
	A->schema = S;
}
cmd(A) ::= VACUUM INTO expr(E). {
	A = parse_stmt_new(ctx, AST_STMT_VACUUM);
	A->pragma_value = E;
}
cmd(A) ::= VACUUM nm(S) INTO expr(E). {
	A = parse_stmt_new(ctx, AST_STMT_VACUUM);
	A->schema = S;
	A->pragma_value = E;
}
%type uniq {bool}
uniq(A) ::= . { A = false; }
uniq(A) ::= UNIQUE. { A = true; }

%type idxlist {ast_order_list *}
idxlist(A) ::= idxcol(X) sortorder(D). { A = ast_order_add(A_, NULL, X, D, 0); }
idxlist(A) ::= idxlist(A) COMMA idxcol(X) sortorder(D). {
	A = ast_order_add(A_, A, X, D, 0);
}
%type idxcol {ast_expr *}
idxcol(A) ::= ID(X). {
	A = mk_leaf(ctx, AST_E_COLUMN, X);
	A->name = parse_ident(ctx, X);
}
idxcol(A) ::= ID(X) COLLATE nm(C). {
	ast_expr *e = mk_leaf(ctx, AST_E_COLUMN, X);
	e->name = parse_ident(ctx, X);
	A = ast_expr_new(A_, AST_E_COLLATE, X.off, TOK_END(X));
	A->l = e;
	A->name = C;
	ast_expr_fix(A_, A);
}

/* ---- INSERT, UPDATE, DELETE ---- */

insert_head ::= INSERT INTO.
insert_head ::= INSERT OR(O) nm(X) INTO. {
	parse_error(ctx, O.off, GPMDB_UNSUPPORTED,
		    "INSERT OR %s is not supported", X);
}
insert_head ::= INSERT OR(O) ROLLBACK INTO. {
	parse_error(ctx, O.off, GPMDB_UNSUPPORTED,
		    "INSERT OR ROLLBACK is not supported");
}
insert_head ::= REPLACE(R) INTO. {
	parse_error(ctx, R.off, GPMDB_UNSUPPORTED,
		    "REPLACE is not supported (use DELETE and INSERT)");
}

cmd(A) ::= insert_head nm(T) collist_opt(C) select(S). {
	A = parse_stmt_new(ctx, AST_STMT_INSERT);
	A->name = T;
	A->cols = C;
	A->select = S;
}
cmd(A) ::= insert_head nm(T) collist_opt(C) DEFAULT VALUES. {
	A = parse_stmt_new(ctx, AST_STMT_INSERT);
	A->name = T;
	A->cols = C;
	A->default_values = true;
}

%type update_head {ast_stmt *}
update_head(A) ::= UPDATE orconf nm(T) SET nm(C) EQ expr(E). {
	A = parse_stmt_new(ctx, AST_STMT_UPDATE);
	A->name = T;
	ast_stmt_add_set(A_, A, C, E);
}
orconf ::= .
orconf ::= OR(O) nm(X). {
	parse_error(ctx, O.off, GPMDB_UNSUPPORTED,
		    "UPDATE OR %s is not supported", X);
}
update_head(A) ::= update_head(A) COMMA nm(C) EQ expr(E). {
	ast_stmt_add_set(A_, A, C, E);
}
cmd(A) ::= update_head(A) where_opt(W). { A->where = W; }

cmd(A) ::= DELETE FROM nm(T) where_opt(W). {
	A = parse_stmt_new(ctx, AST_STMT_DELETE);
	A->name = T;
	A->where = W;
}

%type where_opt {ast_expr *}
where_opt(A) ::= . { A = NULL; }
where_opt(A) ::= WHERE expr(X). { A = X; }

/* ---- SELECT ---- */

cmd(A) ::= select(S). {
	A = parse_stmt_new(ctx, AST_STMT_SELECT);
	A->select = S;
}

%type select {ast_select *}
select(A) ::= selectnowith(A) orderby_opt(O) limit_opt(L). {
	A->order_by = O;
	A->limit = L.limit;
	A->offset = L.offset;
	ast_select_fix(A_, A);
}
select(A) ::= WITH(W) ctelist(C) selectnowith(S) orderby_opt(O) limit_opt(L). {
	A = S;
	A->with = C;
	A->off = W.off;
	A->order_by = O;
	A->limit = L.limit;
	A->offset = L.offset;
	ast_select_fix(A_, A);
}
select(A) ::= WITH(W) RECURSIVE ctelist selectnowith(S) orderby_opt limit_opt. {
	A = S;
	parse_error(ctx, W.off, GPMDB_UNSUPPORTED,
		    "WITH RECURSIVE is not supported");
}

%type ctelist {ast_with *}
ctelist(A) ::= cte(X). { A = ast_with_add(A_, NULL, X); }
ctelist(A) ::= ctelist(A) COMMA cte(X). { A = ast_with_add(A_, A, X); }
%type cte {ast_cte *}
cte(A) ::= ID(N) collist_opt(C) AS LP select(S) RP. {
	A = ast_node(A_, sizeof(*A));
	A->name = parse_ident(ctx, N);
	A->cols = C;
	A->select = S;
	A->off = N.off;
}

%type selectnowith {ast_select *}
selectnowith(A) ::= oneselect(A).
selectnowith(A) ::= selectnowith(L) multiop(O) oneselect(R). {
	A = mk_compound(ctx, L, O, R);
}
%type multiop {int}
multiop(A) ::= UNION. { A = AST_UNION; }
multiop(A) ::= UNION ALL. { A = AST_UNION_ALL; }
multiop(A) ::= INTERSECT. { A = AST_INTERSECT; }
multiop(A) ::= EXCEPT. { A = AST_EXCEPT; }

%type oneselect {ast_select *}
oneselect(A) ::= SELECT(S) distinct(D) selcollist(C) from(F) where_opt(W)
		 groupby_opt(G) having_opt(H). {
	A = ast_select_new(A_, AST_SEL_CORE, S.off);
	A->distinct = D;
	A->cols = C;
	A->from = F;
	A->where = W;
	A->group_by = G;
	A->having = H;
	ast_select_fix(A_, A);
}
oneselect(A) ::= values(A).

%type values {ast_select *}
values(A) ::= VALUES(V) LP nexprlist(L) RP. {
	A = ast_select_new(A_, AST_SEL_VALUES, V.off);
	ast_select_add_row(A_, A, L);
}
values(A) ::= values(A) COMMA LP nexprlist(L) RP. {
	ast_select_add_row(A_, A, L);
}

%type distinct {bool}
distinct(A) ::= . { A = false; }
distinct(A) ::= ALL. { A = false; }
distinct(A) ::= DISTINCT. { A = true; }

%type sclp {ast_result_list *}
sclp(A) ::= . { A = NULL; }
sclp(A) ::= selcollist(A) COMMA.

%type selcollist {ast_result_list *}
selcollist(A) ::= sclp(L) expr(X) alias(N). { A = ast_result_add(A_, L, X, N); }
selcollist(A) ::= sclp(L) STAR(S). {
	A = ast_result_add(A_, L, mk_leaf(ctx, AST_E_STAR, S), NULL);
}
selcollist(A) ::= sclp(L) ID(T) DOT STAR(S). {
	ast_expr *e = ast_expr_new(A_, AST_E_STAR, T.off, TOK_END(S));
	e->table = parse_ident(ctx, T);
	A = ast_result_add(A_, L, e, NULL);
}

%type alias {char *}
alias(A) ::= . { A = NULL; }
alias(A) ::= AS nm(X). { A = X; }
alias(A) ::= AS STRING(X). {
	ast_expr *s = parse_string(ctx, X);
	A = s->str;
}
alias(A) ::= ID(X). { A = parse_ident(ctx, X); }

%type from {ast_from *}
from(A) ::= . { A = NULL; }
from(A) ::= FROM seltablist(X). { A = X; }

%type seltablist {ast_from *}
seltablist(A) ::= tableref(A).
seltablist(A) ::= seltablist(L) joinop(J) tableref(R) joincons(C). {
	int jt = J & 0xff;
	/* "a, b ON x" is an inner join, as in SQLite. */
	if (jt == AST_JOIN_COMMA && (C.on || C.using_cols))
		jt = AST_JOIN_INNER;
	A = ast_from_join(A_, L, (ast_join_type)jt, (J & JOIN_NATURAL) != 0,
			  R, C.on, C.using_cols);
}

%type tableref {ast_from *}
tableref(A) ::= ID(N) alias(Y) collist_opt(C). {
	A = mk_from(ctx, AST_FROM_TABLE, N.off, parse_ident(ctx, N), NULL,
		    Y, C);
}
tableref(A) ::= LP(L) select(S) RP alias(Y) collist_opt(C). {
	A = mk_from(ctx, AST_FROM_SUBQUERY, L.off, NULL, S, Y, C);
}
tableref(A) ::= LP seltablist(X) RP. { A = X; }

%type joinop {int}
joinop(A) ::= COMMA. { A = AST_JOIN_COMMA; }
joinop(A) ::= JOIN. { A = AST_JOIN_INNER; }
joinop(A) ::= INNER JOIN. { A = AST_JOIN_INNER; }
joinop(A) ::= CROSS JOIN. { A = AST_JOIN_CROSS; }
joinop(A) ::= LEFT JOIN. { A = AST_JOIN_LEFT; }
joinop(A) ::= LEFT OUTER JOIN. { A = AST_JOIN_LEFT; }
joinop(A) ::= NATURAL JOIN. { A = AST_JOIN_INNER | JOIN_NATURAL; }
joinop(A) ::= NATURAL INNER JOIN. { A = AST_JOIN_INNER | JOIN_NATURAL; }
joinop(A) ::= NATURAL LEFT JOIN. { A = AST_JOIN_LEFT | JOIN_NATURAL; }
joinop(A) ::= NATURAL LEFT OUTER JOIN. { A = AST_JOIN_LEFT | JOIN_NATURAL; }
joinop(A) ::= NATURAL CROSS JOIN. { A = AST_JOIN_CROSS | JOIN_NATURAL; }
joinop(A) ::= RIGHT(X) outer_opt JOIN. {
	A = AST_JOIN_INNER;
	parse_error(ctx, X.off, GPMDB_UNSUPPORTED, "RIGHT JOIN is not supported");
}
joinop(A) ::= FULL(X) outer_opt JOIN. {
	A = AST_JOIN_INNER;
	parse_error(ctx, X.off, GPMDB_UNSUPPORTED, "FULL JOIN is not supported");
}
outer_opt ::= .
outer_opt ::= OUTER.

%type joincons {join_cons}
joincons(A) ::= . { A.on = NULL; A.using_cols = NULL; }
joincons(A) ::= ON expr(X). { A.on = X; A.using_cols = NULL; }
joincons(A) ::= USING LP nmlist(L) RP. { A.on = NULL; A.using_cols = L; }

%type groupby_opt {ast_expr_list *}
groupby_opt(A) ::= . { A = NULL; }
groupby_opt(A) ::= GROUP BY nexprlist(X). { A = X; }

%type having_opt {ast_expr *}
having_opt(A) ::= . { A = NULL; }
having_opt(A) ::= HAVING expr(X). { A = X; }

%type orderby_opt {ast_order_list *}
orderby_opt(A) ::= . { A = NULL; }
orderby_opt(A) ::= ORDER BY sortlist(X). { A = X; }

%type sortlist {ast_order_list *}
sortlist(A) ::= expr(X) sortorder(D) nulls(N). { A = ast_order_add(A_, NULL, X, D, N); }
sortlist(A) ::= sortlist(A) COMMA expr(X) sortorder(D) nulls(N). {
	A = ast_order_add(A_, A, X, D, N);
}
%type sortorder {bool}
sortorder(A) ::= . { A = false; }
sortorder(A) ::= ASC. { A = false; }
sortorder(A) ::= DESC. { A = true; }
%type nulls {int}
nulls(A) ::= . { A = AST_NULLS_DEFAULT; }
nulls(A) ::= NULLS FIRST. { A = AST_NULLS_FIRST; }
nulls(A) ::= NULLS LAST. { A = AST_NULLS_LAST; }

%type limit_opt {limit_clause}
limit_opt(A) ::= . { A.limit = NULL; A.offset = NULL; }
limit_opt(A) ::= LIMIT expr(X). { A.limit = X; A.offset = NULL; }
limit_opt(A) ::= LIMIT expr(X) OFFSET expr(Y). { A.limit = X; A.offset = Y; }
limit_opt(A) ::= LIMIT expr(Y) COMMA expr(X). { A.limit = X; A.offset = Y; }

/* ---- expressions ---- */

%type nexprlist {ast_expr_list *}
nexprlist(A) ::= expr(X). { A = ast_expr_list_add(A_, NULL, X); }
nexprlist(A) ::= nexprlist(A) COMMA expr(X). { A = ast_expr_list_add(A_, A, X); }

%type literal {ast_expr *}
literal(A) ::= NULL(X). { A = mk_leaf(ctx, AST_E_NULL, X); }
literal(A) ::= TRUE(X). { A = mk_leaf(ctx, AST_E_BOOL, X); A->ival = 1; }
literal(A) ::= FALSE(X). { A = mk_leaf(ctx, AST_E_BOOL, X); }
literal(A) ::= INTEGER(X). { A = parse_number(ctx, X, false); }
literal(A) ::= FLOAT(X). { A = parse_number(ctx, X, true); }
literal(A) ::= STRING(X). { A = parse_string(ctx, X); }
literal(A) ::= DATE(D) STRING(X). { A = parse_date(ctx, D, X); }
literal(A) ::= INTERVAL(I) STRING(X) ID(U). { A = parse_interval(ctx, I, X, U); }
literal(A) ::= INTERVAL(I) INTEGER(X) ID(U). { A = parse_interval(ctx, I, X, U); }

%type expr {ast_expr *}
expr(A) ::= literal(A).
expr(A) ::= VARIABLE(X). { A = parse_param(ctx, X); }
expr(A) ::= ID(X). {
	A = mk_leaf(ctx, AST_E_COLUMN, X);
	A->name = parse_ident(ctx, X);
}
expr(A) ::= ID(T) DOT ID(X). {
	A = ast_expr_new(A_, AST_E_COLUMN, T.off, TOK_END(X));
	A->table = parse_ident(ctx, T);
	A->name = parse_ident(ctx, X);
}
expr(A) ::= LP(L) expr(X) RP(R). { A = X; A->off = L.off; A->end = TOK_END(R); }
expr(A) ::= LP(L) select(S) RP(R). { A = mk_sub(ctx, AST_E_SUBQUERY, S, L, R); }
expr(A) ::= EXISTS(E) LP select(S) RP(R). { A = mk_sub(ctx, AST_E_EXISTS, S, E, R); }

expr(A) ::= ID(N) LP distinct(D) nexprlist(L) RP(R). { A = mk_func(ctx, N, L, D, false, R); }
/* SQL's substring(s FROM a [FOR b]) is substring(s, a[, b]). */
expr(A) ::= ID(N) LP distinct(D) expr(X) FROM expr(F) RP(R). {
	ast_expr_list *l = ast_expr_list_add(A_, NULL, X);
	A = mk_func(ctx, N, ast_expr_list_add(A_, l, F), D, false, R);
}
expr(A) ::= ID(N) LP distinct(D) expr(X) FROM expr(F) FOR expr(L) RP(R). {
	ast_expr_list *l = ast_expr_list_add(A_, NULL, X);
	l = ast_expr_list_add(A_, l, F);
	A = mk_func(ctx, N, ast_expr_list_add(A_, l, L), D, false, R);
}
expr(A) ::= ID(N) LP RP(R). { A = mk_func(ctx, N, NULL, false, false, R); }
expr(A) ::= ID(N) LP STAR RP(R). { A = mk_func(ctx, N, NULL, false, true, R); }

expr(A) ::= CAST(C) LP expr(X) AS typetoken(T) RP(R). {
	A = ast_expr_new(A_, AST_E_CAST, C.off, TOK_END(R));
	A->l = X;
	A->type = T;
	ast_expr_fix(A_, A);
}
expr(A) ::= EXTRACT(E) LP ID(U) FROM expr(X) RP(R). {
	A = ast_expr_new(A_, AST_E_EXTRACT, E.off, TOK_END(R));
	A->unit = parse_unit(ctx, U, "EXTRACT field");
	A->l = X;
	ast_expr_fix(A_, A);
}
expr(A) ::= CASE(C) case_operand(O) case_list(L) case_else(E) END(R). {
	A = ast_expr_new(A_, AST_E_CASE, C.off, TOK_END(R));
	A->l = O;
	A->list = L;
	A->r = E;
	ast_expr_fix(A_, A);
}
%type case_operand {ast_expr *}
case_operand(A) ::= . { A = NULL; }
case_operand(A) ::= expr(A).
%type case_list {ast_expr_list *}
case_list(A) ::= WHEN expr(W) THEN expr(T). {
	A = ast_expr_list_add(A_, NULL, W);
	A = ast_expr_list_add(A_, A, T);
}
case_list(A) ::= case_list(A) WHEN expr(W) THEN expr(T). {
	A = ast_expr_list_add(A_, A, W);
	A = ast_expr_list_add(A_, A, T);
}
%type case_else {ast_expr *}
case_else(A) ::= . { A = NULL; }
case_else(A) ::= ELSE expr(X). { A = X; }

expr(A) ::= expr(L) OR expr(R). { A = ast_binary(A_, AST_OP_OR, L, R); }
expr(A) ::= expr(L) AND expr(R). { A = ast_binary(A_, AST_OP_AND, L, R); }
expr(A) ::= expr(L) EQ expr(R). { A = ast_binary(A_, AST_OP_EQ, L, R); }
expr(A) ::= expr(L) NE expr(R). { A = ast_binary(A_, AST_OP_NE, L, R); }
expr(A) ::= expr(L) LT expr(R). { A = ast_binary(A_, AST_OP_LT, L, R); }
expr(A) ::= expr(L) LE expr(R). { A = ast_binary(A_, AST_OP_LE, L, R); }
expr(A) ::= expr(L) GT expr(R). { A = ast_binary(A_, AST_OP_GT, L, R); }
expr(A) ::= expr(L) GE expr(R). { A = ast_binary(A_, AST_OP_GE, L, R); }
expr(A) ::= expr(L) BITAND expr(R). { A = ast_binary(A_, AST_OP_BITAND, L, R); }
expr(A) ::= expr(L) BITOR expr(R). { A = ast_binary(A_, AST_OP_BITOR, L, R); }
expr(A) ::= expr(L) LSHIFT expr(R). { A = ast_binary(A_, AST_OP_LSHIFT, L, R); }
expr(A) ::= expr(L) RSHIFT expr(R). { A = ast_binary(A_, AST_OP_RSHIFT, L, R); }
expr(A) ::= expr(L) PLUS expr(R). { A = ast_binary(A_, AST_OP_ADD, L, R); }
expr(A) ::= expr(L) MINUS expr(R). { A = ast_binary(A_, AST_OP_SUB, L, R); }
expr(A) ::= expr(L) STAR expr(R). { A = ast_binary(A_, AST_OP_MUL, L, R); }
expr(A) ::= expr(L) SLASH expr(R). { A = ast_binary(A_, AST_OP_DIV, L, R); }
expr(A) ::= expr(L) REM expr(R). { A = ast_binary(A_, AST_OP_MOD, L, R); }
expr(A) ::= expr(L) CONCAT expr(R). { A = ast_binary(A_, AST_OP_CONCAT, L, R); }

expr(A) ::= expr(L) IS expr(R). { A = mk_is(ctx, L, false, R); }
expr(A) ::= expr(L) IS NOT expr(R). { A = mk_is(ctx, L, true, R); }
expr(A) ::= expr(L) ISNULL(X). { A = mk_isnull(ctx, L, false, TOK_END(X)); }
expr(A) ::= expr(L) NOTNULL(X). { A = mk_isnull(ctx, L, true, TOK_END(X)); }
expr(A) ::= expr(L) NOT NULL(X). { A = mk_isnull(ctx, L, true, TOK_END(X)); }

%type likeop {int}
likeop(A) ::= LIKE. { A = AST_OP_LIKE; }
likeop(A) ::= NOT LIKE. { A = AST_OP_LIKE | 0x100; }
likeop(A) ::= GLOB. { A = AST_OP_GLOB; }
likeop(A) ::= NOT GLOB. { A = AST_OP_GLOB | 0x100; }
expr(A) ::= expr(L) likeop(O) expr(R). [LIKE] { A = mk_like(ctx, L, O, R, NULL); }
expr(A) ::= expr(L) likeop(O) expr(R) ESCAPE expr(E). [LIKE] {
	A = mk_like(ctx, L, O, R, E);
}

%type between_op {bool}
between_op(A) ::= BETWEEN. { A = false; }
between_op(A) ::= NOT BETWEEN. { A = true; }
expr(A) ::= expr(L) between_op(N) expr(X) AND expr(Y). [BETWEEN] {
	A = ast_expr_new(A_, AST_E_BETWEEN, L->off, Y->end);
	A->negated = N;
	A->l = L;
	A->r = X;
	A->x = Y;
	ast_expr_fix(A_, A);
}

%type in_op {bool}
in_op(A) ::= IN. { A = false; }
in_op(A) ::= NOT IN. { A = true; }
expr(A) ::= expr(L) in_op(N) LP nexprlist(X) RP(R). [IN] {
	A = mk_in(ctx, L, N, X, NULL, R);
}
expr(A) ::= expr(L) in_op(N) LP RP(R). [IN] {
	A = mk_in(ctx, L, N, NULL, NULL, R);
}
expr(A) ::= expr(L) in_op(N) LP select(S) RP(R). [IN] {
	A = mk_in(ctx, L, N, NULL, S, R);
}
/* SQLite's "x IN t" means x IN (SELECT * FROM t). */
expr(A) ::= expr(L) in_op(N) ID(T). [IN] {
	ast_select *s = ast_select_new(A_, AST_SEL_CORE, T.off);
	s->cols = ast_result_add(A_, NULL, mk_leaf(ctx, AST_E_STAR, T), NULL);
	s->from = mk_from(ctx, AST_FROM_TABLE, T.off, parse_ident(ctx, T),
			  NULL, NULL, NULL);
	ast_select_fix(A_, s);
	A = mk_in(ctx, L, N, NULL, s, T);
}

expr(A) ::= NOT(O) expr(X). { A = ast_unary(A_, AST_OP_NOT, X, O.off); }
expr(A) ::= BITNOT(O) expr(X). { A = ast_unary(A_, AST_OP_BITNOT, X, O.off); }
expr(A) ::= MINUS(O) expr(X). [BITNOT] { A = ast_unary(A_, AST_OP_NEG, X, O.off); }
expr(A) ::= PLUS(O) expr(X). [BITNOT] { A = ast_unary(A_, AST_OP_PLUS, X, O.off); }

expr(A) ::= expr(L) COLLATE ID(C). {
	A = ast_expr_new(A_, AST_E_COLLATE, L->off, TOK_END(C));
	A->l = L;
	A->name = parse_ident(ctx, C);
	ast_expr_fix(A_, A);
}
