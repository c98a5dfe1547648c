/*
 * dml.c - CREATE/DROP TABLE, VIEW, INDEX; INSERT, UPDATE, DELETE.
 *
 * Every statement checks everything before it writes: values are
 * converted to the column types (SQLite's affinity: text that looks like
 * a number goes into a numeric column, other text is a datatype
 * mismatch), NOT NULL, PRIMARY KEY and UNIQUE (column and table
 * constraints and unique indexes) are checked against the table as it
 * will be (storage checks the unique keys through the table's indexes in
 * the pool, storage/index.c, before it writes), and only then is storage
 * called.  The caller (stmt.c) runs
 * the statement inside a transaction or behind a savepoint, so a storage
 * failure half way is undone too.
 */
#include "../engine.h"
#include "../value.h"
#include "batch_gpu.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- catalog helpers ---- */

static int object_exists(gpmdb *db, const char *name, stg_objkind *kind)
{
	stg_object *objs;
	int n, found = 0;

	if (stg_objects_list(db->pool, &objs, &n))
		return -db_err_stg(db);
	for (int i = 0; i < n; i++)
		if (!strcasecmp(objs[i].name, name)) {
			found = 1;
			*kind = objs[i].kind;
			break;
		}
	stg_objects_free(objs, n);
	return found;
}

static const char *kind_name(stg_objkind k)
{
	return k == STG_OBJ_TABLE  ? "table"
	       : k == STG_OBJ_VIEW ? "view"
				   : "index";
}

static int name_free(gpmdb *db, const char *name, stg_objkind want,
		     bool if_not_exists, bool *skip)
{
	stg_objkind k;
	int r = object_exists(db, name, &k);

	*skip = false;
	if (r < 0)
		return -r;
	if (!r)
		return GPMDB_OK;
	if (if_not_exists && k == want) {
		*skip = true;
		return GPMDB_OK;
	}
	if (k == want)
		return db_err(db, GPMDB_ERROR, "%s %s already exists",
			      kind_name(k), name);
	return db_err(db, GPMDB_ERROR, "there is already a %s named %s",
		      kind_name(k), name);
}

/* ---- CREATE TABLE ---- */

static int col_type(gpmdb *db, ast_coldef *c, stg_column_def *d)
{
	ast_type *t = c->type;

	d->decl_type = t ? t->text : NULL;
	if (!t) {
		d->type =
		    STG_T_TEXT; /* see docs/engine.md: no dynamic typing */
		return GPMDB_OK;
	}
	switch (t->cls) {
	case AST_TYPE_INT:
		d->type = STG_T_BIGINT;
		return GPMDB_OK;
	case AST_TYPE_REAL:
		d->type =
		    !strcasecmp(t->name, "FLOAT") && t->nargs == 1 && t->p <= 24
			? STG_T_FLOAT
			: STG_T_DOUBLE;
		return GPMDB_OK;
	case AST_TYPE_DECIMAL:
		d->type = STG_T_DECIMAL;
		d->precision = (uint8_t)(t->nargs >= 1 ? t->p : 18);
		d->scale = (uint8_t)(t->nargs >= 2 ? t->s : 0);
		if (t->p > 18 || t->p < 0 || t->s < 0 || t->s > t->p)
			return db_err(db, GPMDB_UNSUPPORTED,
				      "%s: DECIMAL precision above 18 is not "
				      "supported yet",
				      t->text);
		return GPMDB_OK;
	case AST_TYPE_DATE:
		d->type = STG_T_DATE;
		return GPMDB_OK;
	case AST_TYPE_BOOLEAN:
		d->type = STG_T_BOOLEAN;
		return GPMDB_OK;
	case AST_TYPE_TEXT:
		d->type = STG_T_TEXT;
		d->length = t->nargs ? (uint32_t)t->p : 0;
		return GPMDB_OK;
	default:
		break;
	}
	/* SQLite's affinity rules for other names */
	if (strcasestr(t->name, "INT"))
		d->type = STG_T_BIGINT;
	else if (strcasestr(t->name, "CHAR") || strcasestr(t->name, "CLOB") ||
		 strcasestr(t->name, "TEXT"))
		d->type = STG_T_TEXT;
	else if (strcasestr(t->name, "REAL") || strcasestr(t->name, "FLOA") ||
		 strcasestr(t->name, "DOUB"))
		d->type = STG_T_DOUBLE;
	else if (strcasestr(t->name, "BLOB"))
		return db_err(db, GPMDB_UNSUPPORTED,
			      "column %s: BLOB columns are not supported yet",
			      c->name);
	else
		d->type = STG_T_DOUBLE;
	return GPMDB_OK;
}

static int insert_rel(gpmdb_stmt *st, uint32_t tid, stg_schema *sch,
		      const char *tname, rel *src, const int *map);

/* Adds ukey cols[0..m) (unless the same set is there) to the list. */
static int key_add_unique(int (*keys)[33], int *nk, const int *cols, int m,
			  bool pk)
{
	for (int k = 0; k < *nk; k++)
		if (keys[k][0] == m &&
		    !memcmp(&keys[k][1], cols, sizeof(int) * (size_t)m))
			return 0;
	if (*nk == 64)
		return -1;
	keys[*nk][0] = m;
	memcpy(&keys[*nk][1], cols, sizeof(int) * (size_t)m);
	keys[*nk][32] = pk;
	(*nk)++;
	return 0;
}

/* An index in the pool for every PRIMARY KEY and UNIQUE constraint, named
 * as SQLite names them (sqlite_autoindex_TABLE_N), in the order the
 * constraints appear. */
static int create_key_indexes(gpmdb *db, ast_stmt *s,
			      const stg_column_def *defs, int n, uint32_t tid)
{
	int keys[64][33], nk = 0;

	for (int i = 0; i < n && !s->select; i++) {
		ast_coldef *c = s->coldefs[i];
		if ((c->primary_key &&
		     key_add_unique(keys, &nk, &i, 1, true)) ||
		    (c->unique && key_add_unique(keys, &nk, &i, 1, false)))
			return db_err(db, GPMDB_UNSUPPORTED,
				      "table %s has more than 64 unique keys",
				      s->name);
	}
	for (int k = 0; k < s->ntabcons; k++) {
		ast_tabcons *tc = s->tabcons[k];
		int cols[32], m = 0;
		for (int j = 0; j < tc->cols->n && m < 32; j++)
			for (int i = 0; i < n; i++)
				if (!strcasecmp(defs[i].name, tc->cols->v[j])) {
					cols[m++] = i;
					break;
				}
		if (m && key_add_unique(keys, &nk, cols, m, tc->primary_key))
			return db_err(db, GPMDB_UNSUPPORTED,
				      "table %s has more than 64 unique keys",
				      s->name);
	}
	for (int k = 0; k < nk; k++) {
		char name[STG_NAME_MAX];
		uint32_t cols[32];
		for (int j = 0; j < keys[k][0]; j++)
			cols[j] = (uint32_t)keys[k][1 + j];
		snprintf(name, sizeof(name), "sqlite_autoindex_%.80s_%d",
			 s->name, k + 1);
		if (stg_index_create(
			db->pool, tid, name, cols, keys[k][0], true,
			keys[k][32] ? STG_IX_PRIMARY : STG_IX_UNIQUE, NULL,
			NULL))
			return db_err_stg(db);
	}
	return GPMDB_OK;
}

static int create_table(gpmdb_stmt *st, ast_stmt *s)
{
	gpmdb *db = st->db;
	stg_column_def *defs = NULL;
	char **dflt = NULL;
	int n = s->ncoldefs, rc;
	bool skip;
	uint32_t tid;
	pnode *src = NULL;
	char *sql = NULL;

	if ((rc = name_free(db, s->name, STG_OBJ_TABLE, s->if_exists, &skip)))
		return rc;
	if (skip)
		return GPMDB_OK;
	if (s->select) { /* CREATE TABLE AS SELECT */
		bctx b = plan_bctx(st);
		src = plan_select(&b, s->select, NULL);
		if (!src)
			return db->errcode;
		n = src->nvis;
	}
	if (n > STG_MAX_COLUMNS)
		return db_err(db, GPMDB_ERROR, "too many columns on %s",
			      s->name);
	defs = calloc((size_t)n + 1, sizeof(*defs));
	dflt = calloc((size_t)n + 1, sizeof(char *));
	if (!defs || !dflt) {
		rc = db_err(db, GPMDB_NOMEM, "out of memory");
		goto out;
	}
	for (int i = 0; i < n; i++) {
		if (src) {
			etype t = src->ty[i];
			defs[i].name = src->names[i];
			defs[i].type = t.t == BC_T_INT	  ? STG_T_BIGINT
				       : t.t == BC_T_REAL ? STG_T_DOUBLE
				       : t.t == BC_T_DEC  ? STG_T_DECIMAL
				       : t.t == BC_T_DATE ? STG_T_DATE
				       : t.t == BC_T_BOOL ? STG_T_BOOLEAN
							  : STG_T_TEXT;
			defs[i].precision = t.prec ? t.prec : 18;
			defs[i].scale = t.scale;
			continue;
		}
		ast_coldef *c = s->coldefs[i];
		for (int j = 0; j < i; j++)
			if (!strcasecmp(defs[j].name, c->name)) {
				rc = db_err(db, GPMDB_ERROR,
					    "duplicate column name: %s",
					    c->name);
				goto out;
			}
		defs[i].name = c->name;
		if ((rc = col_type(db, c, &defs[i])))
			goto out;
		if (c->collate && strcasecmp(c->collate, "binary")) {
			rc = db_err(db, GPMDB_UNSUPPORTED,
				    "COLLATE %s is not supported yet",
				    c->collate);
			goto out;
		}
		if (c->not_null)
			defs[i].flags |= STG_COL_NOTNULL;
		if (c->primary_key)
			defs[i].flags |= STG_COL_PRIMARY_KEY | STG_COL_NOTNULL;
		if (c->unique)
			defs[i].flags |= STG_COL_UNIQUE;
		if (c->dflt) {
			dflt[i] = ast_expr_to_sql(c->dflt);
			if (!dflt[i]) {
				rc = db_err(db, GPMDB_NOMEM, "out of memory");
				goto out;
			}
			defs[i].default_sql = dflt[i];
			defs[i].flags |= STG_COL_HAS_DEFAULT;
		}
	}
	for (int k = 0; k < s->ntabcons; k++) {
		ast_tabcons *tc = s->tabcons[k];
		for (int j = 0; j < tc->cols->n; j++) {
			int i;
			for (i = 0; i < n; i++)
				if (!strcasecmp(defs[i].name, tc->cols->v[j]))
					break;
			if (i == n) {
				rc = db_err(db, GPMDB_ERROR,
					    "no such column: %s",
					    tc->cols->v[j]);
				goto out;
			}
			if (tc->primary_key)
				defs[i].flags |= STG_COL_NOTNULL;
			if (tc->cols->n == 1)
				defs[i].flags |= tc->primary_key
						     ? STG_COL_PRIMARY_KEY
						     : STG_COL_UNIQUE;
		}
	}
	sql = ast_strndup(&st->parena, st->sql + s->off, s->end - s->off);
	if (stg_table_create(db->pool, s->name, defs, n, sql, &tid)) {
		rc = db_err_stg(db);
		goto out;
	}
	if ((rc = create_key_indexes(db, s, defs, n, tid)))
		goto out;
	if (src) {
		stg_schema *sch;
		rel *r;
		stmt_exec_init(st);
		if ((rc = exec_node(&st->x, src, &r)))
			goto out;
		if (stg_table_schema(db->pool, tid, &sch)) {
			rel_free(r);
			rc = db_err_stg(db);
			goto out;
		}
		rc = insert_rel(st, tid, sch, s->name, r, NULL);
		stg_schema_free(sch);
		rel_free(r);
		db->changes = 0;
	}
out:
	if (dflt)
		for (int i = 0; i < n; i++)
			free(dflt[i]);
	free(dflt);
	free(defs);
	return rc;
}

/* ---- unique keys ---- */

typedef dml_key ukey; /* engine.h: batch.c uses the same keys */

static int add_key(ukey **keys, int *nk, const int *cols, int n)
{
	ukey *k;

	for (int i = 0; i < *nk; i++)
		if ((*keys)[i].n == n &&
		    !memcmp((*keys)[i].cols, cols, sizeof(int) * (size_t)n))
			return 0;
	k = realloc(*keys, sizeof(ukey) * (size_t)(*nk + 1));
	if (!k)
		return -1;
	*keys = k;
	k[*nk].n = n;
	memcpy(k[*nk].cols, cols, sizeof(int) * (size_t)n);
	(*nk)++;
	return 0;
}

static int col_index(const stg_schema *sch, const char *name)
{
	for (int i = 0; i < sch->ncols; i++)
		if (!strcasecmp(sch->cols[i].name, name))
			return i;
	return -1;
}

/* Every set of columns that must be unique: column flags, table
 * constraints (from the stored CREATE TABLE) and unique indexes. */
static int load_keys(gpmdb *db, const stg_schema *sch, ukey **keys, int *nk)
{
	stg_object *objs;
	int n, rc = GPMDB_OK;

	*keys = NULL;
	*nk = 0;
	for (int i = 0; i < sch->ncols; i++)
		if (sch->cols[i].flags & (STG_COL_PRIMARY_KEY | STG_COL_UNIQUE))
			if (add_key(keys, nk, &i, 1))
				return db_err(db, GPMDB_NOMEM, "out of memory");
	if (stg_objects_list(db->pool, &objs, &n))
		return db_err_stg(db);
	for (int o = 0; o < n && !rc; o++) {
		bool tab = objs[o].kind == STG_OBJ_TABLE &&
			   objs[o].table_id == sch->table_id;
		bool idx = objs[o].kind == STG_OBJ_INDEX &&
			   !strcasecmp(objs[o].tbl_name, sch->name);
		parse_result pr;
		if ((!tab && !idx) || !objs[o].sql)
			continue;
		if (parse_sql(objs[o].sql, strlen(objs[o].sql), &pr) ||
		    !pr.stmt) {
			parse_result_free(&pr);
			continue;
		}
		ast_stmt *s = pr.stmt;
		int cols[32], m = 0;
		if (tab) {
			for (int k = 0; k < s->ntabcons && !rc; k++) {
				ast_tabcons *tc = s->tabcons[k];
				m = 0;
				for (int j = 0; j < tc->cols->n && m < 32;
				     j++) {
					int c = col_index(sch, tc->cols->v[j]);
					if (c >= 0)
						cols[m++] = c;
				}
				if (m && add_key(keys, nk, cols, m))
					rc = db_err(db, GPMDB_NOMEM,
						    "out of memory");
			}
		} else if (s->kind == AST_STMT_CREATE_INDEX && s->unique &&
			   s->idx_cols) {
			for (int j = 0; j < s->idx_cols->n && m < 32; j++) {
				ast_expr *e = s->idx_cols->v[j]->expr;
				int c = e->kind == AST_E_COLUMN
					    ? col_index(sch, e->name)
					    : -1;
				if (c >= 0)
					cols[m++] = c;
			}
			if (m && add_key(keys, nk, cols, m))
				rc = db_err(db, GPMDB_NOMEM, "out of memory");
		}
		parse_result_free(&pr);
	}
	stg_objects_free(objs, n);
	return rc;
}

/* ---- writing ---- */

static etype col_etype(const stg_column_info *c)
{
	return stg_to_etype(c);
}

/* Column s of n rows (already column type t's etype) as a storage array
 * (out->nulls NULL when there are none); TEXT points into s's strings. */
static int rcol_to_storage(gpmdb *db, const rcol *s, stg_type t, uint64_t n,
			   stg_col_batch *out)
{
	size_t w = t == STG_T_TEXT ? sizeof(stg_text) : stg_type_width(t);
	char *v = calloc(n + 1, w);
	uint32_t *nl = calloc(n / 32 + 1, sizeof(uint32_t));
	bool any = false;

	if (!v || !nl) {
		free(v);
		free(nl);
		return db_err(db, GPMDB_NOMEM, "out of memory");
	}
	/* on all threads for large batches: one bitmap word per iteration,
	 * so that threads never write the same word */
	uint64_t nw = n / 32 + 1;
#pragma omp parallel for schedule(static) reduction(|| : any) if (n >= 65536)
	for (uint64_t wd = 0; wd < nw; wd++) {
		uint64_t e = (wd + 1) * 32 < n ? (wd + 1) * 32 : n;
		for (uint64_t i = wd * 32; i < e; i++) {
			if (s->nulls[i]) {
				nl[i / 32] |= 1u << (i % 32);
				any = true;
				continue;
			}
			switch (t) {
			case STG_T_INT:
				((int32_t *)v)[i] =
				    (int32_t)((int64_t *)s->data)[i];
				break;
			case STG_T_BIGINT:
			case STG_T_DECIMAL:
				((int64_t *)v)[i] = ((int64_t *)s->data)[i];
				break;
			case STG_T_FLOAT:
				((float *)v)[i] = (float)((double *)s->data)[i];
				break;
			case STG_T_DOUBLE:
				((double *)v)[i] = ((double *)s->data)[i];
				break;
			case STG_T_DATE:
				((int32_t *)v)[i] = ((int32_t *)s->data)[i];
				break;
			case STG_T_BOOLEAN:
				((uint8_t *)v)[i] = ((uint8_t *)s->data)[i];
				break;
			case STG_T_TEXT: {
				vec_str x = ((vec_str *)s->data)[i];
				((stg_text *)v)[i] = (stg_text){x.ptr, x.len};
				break;
			}
			}
		}
	}
	out->values = v;
	out->nulls = any ? nl : NULL;
	if (!any)
		free(nl);
	return GPMDB_OK;
}

/* Converts r's columns (already the table's etypes) into storage arrays,
 * checks the unique keys and appends them. */
static int append_rel(gpmdb *db, uint32_t tid, const stg_schema *sch,
		      const rel *r)
{
	stg_col_batch *b = calloc((size_t)sch->ncols, sizeof(*b));
	int rc = GPMDB_OK, ph;
	uint64_t n = r->nrows;

	if (!b)
		return db_err(db, GPMDB_NOMEM, "out of memory");
	ph = wp_to(db, WP_BIND);
	for (int c = 0; c < sch->ncols && !rc; c++)
		rc = rcol_to_storage(db, &r->cols[c], sch->cols[c].type, n,
				     &b[c]);
	if (!rc) /* backend=gpu: batch_gpu.c; unique keys: storage */
		rc = wp_append(db, tid, sch, b, n);
	wp_to(db, ph);
	for (int c = 0; c < sch->ncols; c++) {
		free((void *)b[c].values);
		free((void *)b[c].nulls);
	}
	free(b);
	return rc;
}

static int check_not_null(gpmdb *db, const stg_schema *sch, const rel *r, int c,
			  const char *tname)
{
	if (!(sch->cols[c].flags & STG_COL_NOTNULL))
		return GPMDB_OK;
	for (uint64_t i = 0; i < r->nrows; i++)
		if (r->cols[c].nulls[i])
			return db_err(db, GPMDB_CONSTRAINT,
				      "NOT NULL constraint failed: %s.%s",
				      tname, sch->cols[c].name);
	return GPMDB_OK;
}

/* Value of a column's DEFAULT (NULL when none). */
static int default_value(gpmdb_stmt *st, const stg_column_info *c, sval *v,
			 rel *hold)
{
	char *sql;
	parse_result *pr;
	scope empty = {0};
	bctx b = plan_bctx(st);

	memset(v, 0, sizeof(*v));
	v->t = BC_T_NULL;
	if (!c->default_sql)
		return GPMDB_OK;
	sql = malloc(strlen(c->default_sql) + 8);
	if (!sql)
		return db_err(st->db, GPMDB_NOMEM, "out of memory");
	sprintf(sql, "SELECT %s", c->default_sql);
	pr = stmt_parse_extra(st, sql);
	free(sql);
	if (!pr)
		return st->db->errcode;
	ast_expr *e = pr->stmt->select->cols->v[0]->expr;
	b.a = &pr->arena;
	if (bind_expr(&b, &empty, e, false))
		return st->db->errcode;
	return exec_scalar(&st->x, e, v, hold);
}

/* Inserts src (map[k] = source column of table column k, -1 = default;
 * NULL map = the same order). */
static int insert_rel(gpmdb_stmt *st, uint32_t tid, stg_schema *sch,
		      const char *tname, rel *src, const int *map)
{
	gpmdb *db = st->db;
	etype ty[STG_MAX_COLUMNS];
	rel *r;
	int rc, ph;

	for (int c = 0; c < sch->ncols; c++)
		ty[c] = col_etype(&sch->cols[c]);
	if (!(r = rel_new(&st->x, sch->ncols, ty)))
		return db->errcode;
	ph = wp_to(db, WP_BIND);
	if ((rc = rel_reserve(r, src->nrows)))
		goto out;
	for (int c = 0; c < sch->ncols; c++) {
		int k = map ? map[c] : c;
		sval dv;
		if (k < 0 && (rc = default_value(st, &sch->cols[c], &dv, r)))
			goto out;
		if (k < 0 && (rc = sval_convert(&st->x, &dv, ty[c], 1, r)))
			goto out;
		for (uint64_t i = 0; i < src->nrows; i++) {
			sval v = dv;
			if (k >= 0) {
				rel_get(src, k, i, &v);
				if ((rc =
					 sval_convert(&st->x, &v, ty[c], 1, r)))
					goto out;
			}
			if ((rc = rel_set(r, c, i, &v)))
				goto out;
		}
	}
	r->nrows = src->nrows;
	wp_to(db, WP_KEYCHECK);
	for (int c = 0; c < sch->ncols; c++)
		if ((rc = check_not_null(db, sch, r, c, tname)))
			goto out;
	if ((rc = append_rel(db, tid, sch, r)))
		goto out;
	db->changes = (long long)r->nrows;
out:
	wp_to(db, ph);
	rel_free(r);
	return rc;
}

static int find_table(gpmdb *db, const char *name, uint32_t *tid,
		      stg_schema **sch)
{
	stg_objkind k;

	if (stg_table_find(db->pool, name, tid) != GPMDB_OK) {
		if (object_exists(db, name, &k) > 0 && k == STG_OBJ_VIEW)
			return db_err(db, GPMDB_ERROR,
				      "cannot modify %s because it is a view",
				      name);
		return db_err(db, GPMDB_ERROR, "no such table: %s", name);
	}
	if (stg_table_schema(db->pool, *tid, sch))
		return db_err_stg(db);
	return GPMDB_OK;
}

static int do_insert(gpmdb_stmt *st, ast_stmt *s)
{
	gpmdb *db = st->db;
	bctx b = plan_bctx(st);
	stg_schema *sch;
	uint32_t tid;
	int *map = NULL, rc, nsrc, ph;
	rel *src = NULL;
	pnode *node = NULL;

	if ((rc = find_table(db, s->name, &tid, &sch)))
		return rc;
	map = malloc(sizeof(int) * (size_t)(sch->ncols + 1));
	if (!map) {
		rc = db_err(db, GPMDB_NOMEM, "out of memory");
		goto out;
	}
	for (int c = 0; c < sch->ncols; c++)
		map[c] = s->cols ? -1 : c;
	nsrc = s->cols ? s->cols->n : sch->ncols;
	if (s->cols)
		for (int k = 0; k < s->cols->n; k++) {
			int c = col_index(sch, s->cols->v[k]);
			if (c < 0) {
				rc = db_err(db, GPMDB_ERROR,
					    "table %s has no column named %s",
					    s->name, s->cols->v[k]);
				goto out;
			}
			map[c] = k;
		}
	stmt_exec_init(st);
	if (s->default_values || !s->select) {
		for (int c = 0; c < sch->ncols; c++)
			map[c] = -1;
		src = rel_new(&st->x, 0, NULL);
		if (!src) {
			rc = db->errcode;
			goto out;
		}
		src->nrows = 1;
	} else {
		node = plan_select(&b, s->select, NULL);
		if (!node) {
			rc = db->errcode;
			goto out;
		}
		/* VALUES into DECIMAL columns: typed as the column, so that
		 * a literal like 1234567890123456.78 goes in from its text,
		 * exactly, instead of through a REAL (exec_values) */
		if (node->kind == PN_VALUES && node->nvis == nsrc)
			for (int c = 0; c < sch->ncols; c++) {
				int k = map[c];
				if (k >= 0 && node->ty[k].t == BC_T_REAL &&
				    col_etype(&sch->cols[c]).t == BC_T_DEC)
					node->ty[k] = col_etype(&sch->cols[c]);
			}
		if (node->nvis != nsrc) {
			if (s->cols)
				rc = db_err(db, GPMDB_ERROR,
					    "%d values for %d columns",
					    node->nvis, nsrc);
			else
				rc = db_err(db, GPMDB_ERROR,
					    "table %s has %d columns but %d "
					    "values were supplied",
					    s->name, nsrc, node->nvis);
			goto out;
		}
		if (st->x.analyze) /* EXPLAIN ANALYZE shows what ran */
			st->plan = node;
		/* backend=gpu: a SELECT the GPU runs over a table goes from
		 * the device into the table (batch_gpu.c) */
		if (node->kind != PN_VALUES && db->backend == 2) {
			bool done = false;
			if ((rc = bgpu_insert_select(st, tid, sch, s->name,
						     node, map, &done)) ||
			    done)
				goto out;
		}
		/* VALUES are the values; a SELECT finds the rows */
		ph = wp_to(db, node->kind == PN_VALUES ? WP_BIND : WP_LOCATE);
		rc = exec_node(&st->x, node, &src);
		wp_to(db, ph);
		if (rc)
			goto out;
	}
	rc = insert_rel(st, tid, sch, s->name, src, map);
out:
	rel_free(src);
	free(map);
	stg_schema_free(sch);
	return rc;
}

static int do_update(gpmdb_stmt *st, ast_stmt *s)
{
	gpmdb *db = st->db;
	bctx b = plan_bctx(st);
	stg_schema *sch;
	uint32_t tid, *cols = NULL;
	ast_expr **exprs = NULL;
	rel *r = NULL;
	stg_col_batch *vals = NULL;
	uint64_t *rowids = NULL;
	int n = 0, rc, ph = -1;
	pnode *node;

	if ((rc = find_table(db, s->name, &tid, &sch)))
		return rc;
	cols = malloc(sizeof(uint32_t) * (size_t)(s->nsets + 1));
	exprs = malloc(sizeof(ast_expr *) * (size_t)(s->nsets + 1));
	if (!cols || !exprs) {
		rc = db_err(db, GPMDB_NOMEM, "out of memory");
		goto out;
	}
	/* the last assignment of a column wins */
	for (int k = 0; k < s->nsets; k++) {
		int c = col_index(sch, s->sets[k]->col), j;
		if (c < 0) {
			rc = db_err(db, GPMDB_ERROR, "no such column: %s",
				    s->sets[k]->col);
			goto out;
		}
		for (j = 0; j < n; j++)
			if (cols[j] == (uint32_t)c)
				break;
		cols[j] = (uint32_t)c;
		exprs[j] = s->sets[k]->expr;
		if (j == n)
			n++;
	}
	/* the rows and their new values (the PROJECT computes them) */
	ph = wp_to(db, WP_LOCATE);
	node = plan_dml(&b, tid, s->name, s->where, exprs, n);
	if (!node) {
		rc = db->errcode;
		goto out;
	}
	if (st->x.analyze) /* EXPLAIN ANALYZE shows what ran */
		st->plan = node;
	stmt_exec_init(st);
	{
		bool done = false;

		/* backend=gpu: rows and values stay on the device */
		if ((rc = bgpu_update_select(st, tid, sch, s->name, node, n,
					     cols, &done)) ||
		    done)
			goto out;
		wp_to(db, WP_LOCATE);
	}
	if ((rc = exec_node(&st->x, node, &r)))
		goto out;
	wp_to(db, WP_BIND);
	for (int j = 0; j < n; j++) {
		etype t = col_etype(&sch->cols[cols[j]]);
		for (uint64_t i = 0; i < r->nrows; i++) {
			sval v;
			rel_get(r, j + 1, i, &v);
			if (v.t == BC_T_NULL &&
			    (sch->cols[cols[j]].flags & STG_COL_NOTNULL)) {
				rc = db_err(db, GPMDB_CONSTRAINT,
					    "NOT NULL constraint failed: %s.%s",
					    s->name, sch->cols[cols[j]].name);
				goto out;
			}
		}
		/* retype the column in place */
		etype old = r->cols[j + 1].ty;
		if (old.t != t.t || old.scale != t.scale) {
			rel *tmp = rel_new(&st->x, 1, &t);
			if (!tmp || (rc = rel_reserve(tmp, r->nrows))) {
				rel_free(tmp);
				rc = rc ? rc : db->errcode;
				goto out;
			}
			for (uint64_t i = 0; i < r->nrows && !rc; i++) {
				sval v;
				rel_get(r, j + 1, i, &v);
				if (!(rc = sval_convert(&st->x, &v, t, 1, tmp)))
					rc = rel_set(tmp, 0, i, &v);
			}
			tmp->nrows = r->nrows;
			if (rc) {
				rel_free(tmp);
				goto out;
			}
			/* swap the column and keep tmp's strings alive in r */
			rcol sw = r->cols[j + 1];
			r->cols[j + 1] = tmp->cols[0];
			tmp->cols[0] = sw;
			vec_arena sa = r->strs;
			/* strings of tmp must outlive it: move them */
			r->strs = tmp->strs;
			tmp->strs = sa;
			/* r's own texts (other columns) were in sa: copy
			 * them again into the moved arena */
			for (int c2 = 0; c2 < r->ncols; c2++) {
				if (c2 == j + 1 ||
				    r->cols[c2].ty.t != BC_T_TEXT)
					continue;
				for (uint64_t i = 0; i < r->nrows && !rc; i++)
					if (!r->cols[c2].nulls[i]) {
						vec_str *x =
						    &((vec_str *)r->cols[c2]
							  .data)[i];
						rc = rel_str(r, x->ptr, x->len,
							     x);
					}
			}
			rel_free(tmp);
			if (rc)
				goto out;
		}
	}
	if (r->nrows) {
		vals = calloc((size_t)n + 1, sizeof(*vals));
		rowids = malloc(sizeof(uint64_t) * r->nrows);
		if (!vals || !rowids) {
			rc = db_err(db, GPMDB_NOMEM, "out of memory");
			goto out;
		}
		for (uint64_t i = 0; i < r->nrows; i++)
			rowids[i] = (uint64_t)((int64_t *)r->cols[0].data)[i];
		/* storage arrays: append's conversion per column */
		for (int j = 0; j < n && !rc; j++)
			rc = rcol_to_storage(db, &r->cols[j + 1],
					     sch->cols[cols[j]].type, r->nrows,
					     &vals[j]);
		/* unique keys of the table as it will be: storage */
		if (!rc) /* backend=gpu: batch_gpu.c */
			rc = wp_update(db, tid, sch, n, cols, rowids, r->nrows,
				       vals);
	}
	if (!rc)
		db->changes = (long long)r->nrows;
out:
	wp_to(db, ph);
	if (vals)
		for (int j = 0; j < n; j++) {
			free((void *)vals[j].values);
			free((void *)vals[j].nulls);
		}
	free(vals);
	free(rowids);
	rel_free(r);
	free(cols);
	free(exprs);
	stg_schema_free(sch);
	return rc;
}

static int do_delete(gpmdb_stmt *st, ast_stmt *s)
{
	gpmdb *db = st->db;
	bctx b = plan_bctx(st);
	stg_schema *sch;
	uint32_t tid;
	rel *r = NULL;
	uint64_t *rowids = NULL;
	pnode *node;
	int rc, ph;

	if ((rc = find_table(db, s->name, &tid, &sch)))
		return rc;
	ph = wp_to(db, WP_LOCATE);
	node = plan_dml(&b, tid, s->name, s->where, NULL, 0);
	if (!node) {
		rc = db->errcode;
		goto out;
	}
	if (st->x.analyze) /* EXPLAIN ANALYZE shows what ran */
		st->plan = node;
	stmt_exec_init(st);
	if ((rc = exec_node(&st->x, node, &r)))
		goto out;
	if (r->nrows) {
		rowids = malloc(sizeof(uint64_t) * r->nrows);
		if (!rowids) {
			rc = db_err(db, GPMDB_NOMEM, "out of memory");
			goto out;
		}
		for (uint64_t i = 0; i < r->nrows; i++)
			rowids[i] = (uint64_t)((int64_t *)r->cols[0].data)[i];
		if ((rc = wp_delete(db, tid, rowids, r->nrows)))
			goto out; /* backend=gpu: batch_gpu.c */
	}
	db->changes = (long long)r->nrows;
out:
	wp_to(db, ph);
	free(rowids);
	rel_free(r);
	stg_schema_free(sch);
	return rc;
}

/* EXPLAIN UPDATE/DELETE: the plan that finds the rows (plan_dml, the
 * access path included), without running it. */
int dml_explain_plan(gpmdb_stmt *st, ast_stmt *s)
{
	bctx b = plan_bctx(st);
	stg_schema *sch;
	uint32_t tid;
	int rc;

	if ((rc = find_table(st->db, s->name, &tid, &sch)))
		return rc;
	st->plan = plan_dml(&b, tid, s->name, s->where, NULL, 0);
	stg_schema_free(sch);
	return st->plan ? GPMDB_OK : st->db->errcode;
}

/* ---- views and indexes ---- */

static int create_view(gpmdb_stmt *st, ast_stmt *s)
{
	gpmdb *db = st->db;
	bctx b = plan_bctx(st);
	bool skip;
	int rc;
	pnode *n;

	if ((rc = name_free(db, s->name, STG_OBJ_VIEW, s->if_exists, &skip)))
		return rc;
	if (skip)
		return GPMDB_OK;
	n = plan_select(&b, s->select, NULL); /* the view must be valid */
	if (!n)
		return db->errcode;
	if (s->cols && s->cols->n != n->nvis)
		return db_err(db, GPMDB_ERROR,
			      "expected %d columns for '%s' but got %d",
			      s->cols->n, s->name, n->nvis);
	char *sql = ast_strndup(&st->parena, st->sql + s->off, s->end - s->off);
	if (stg_object_create(db->pool, STG_OBJ_VIEW, s->name, "", sql))
		return db_err_stg(db);
	return GPMDB_OK;
}

static int create_index(gpmdb_stmt *st, ast_stmt *s)
{
	gpmdb *db = st->db;
	stg_schema *sch;
	uint32_t tid;
	bool skip;
	int rc;

	if ((rc = name_free(db, s->name, STG_OBJ_INDEX, s->if_exists, &skip)))
		return rc;
	if (skip)
		return GPMDB_OK;
	if ((rc = find_table(db, s->table, &tid, &sch)))
		return rc;
	ukey key = {0};
	for (int i = 0; i < s->idx_cols->n; i++) {
		ast_expr *e = s->idx_cols->v[i]->expr;
		int c = e->kind == AST_E_COLUMN ? col_index(sch, e->name) : -1;
		if (e->kind != AST_E_COLUMN) {
			rc = db_err(db, GPMDB_UNSUPPORTED,
				    "indexes on expressions are not supported "
				    "yet");
			goto out;
		}
		if (c < 0) {
			rc = db_err(db, GPMDB_ERROR, "no such column: %s",
				    e->name);
			goto out;
		}
		if (key.n == 32) {
			rc = db_err(db, GPMDB_ERROR,
				    "an index has at most 32 columns");
			goto out;
		}
		key.cols[key.n++] = c;
	}
	{
		char *sql =
		    ast_strndup(&st->parena, st->sql + s->off, s->end - s->off);
		uint32_t cols[32];
		for (int i = 0; i < key.n; i++)
			cols[i] = (uint32_t)key.cols[i];
		/* the tree is built from the table now; a UNIQUE index over
		 * repeated keys fails and leaves nothing */
		stg_index_hook_stats_reset();
		if (stg_index_create(db->pool, tid, s->name, cols, key.n,
				     s->unique, STG_IX_CREATED, sql, NULL))
			rc = db_err_stg(db);
		else /* the GPU's bulk sort, or a counted fallback */
			rc = bgpu_index_check(db, "CREATE INDEX");
	}
out:
	stg_schema_free(sch);
	return rc;
}

static int drop_object(gpmdb_stmt *st, ast_stmt *s, stg_objkind want)
{
	gpmdb *db = st->db;
	stg_objkind k;
	int r = object_exists(db, s->name, &k);

	if (r < 0)
		return -r;
	if (!r || k != want) {
		if (s->if_exists && !r)
			return GPMDB_OK;
		if (r && want == STG_OBJ_TABLE && k == STG_OBJ_VIEW)
			return db_err(db, GPMDB_ERROR,
				      "use DROP VIEW to delete view %s",
				      s->name);
		if (r && want == STG_OBJ_VIEW && k == STG_OBJ_TABLE)
			return db_err(db, GPMDB_ERROR,
				      "use DROP TABLE to delete table %s",
				      s->name);
		return db_err(db, GPMDB_ERROR, "no such %s: %s",
			      kind_name(want), s->name);
	}
	if (want == STG_OBJ_TABLE) {
		uint32_t tid;
		if (stg_table_find(db->pool, s->name, &tid) ||
		    stg_table_drop(db->pool, tid))
			return db_err_stg(db);
		return GPMDB_OK;
	}
	if (want == STG_OBJ_INDEX) {
		stg_index_info ii;
		if (stg_index_find(db->pool, s->name, &ii) == GPMDB_OK &&
		    ii.origin != STG_IX_CREATED)
			return db_err(db, GPMDB_ERROR,
				      "index associated with UNIQUE or "
				      "PRIMARY KEY constraint cannot be "
				      "dropped");
	}
	if (stg_object_drop(db->pool, want, s->name))
		return db_err_stg(db);
	return GPMDB_OK;
}

int dml_prepare_check(gpmdb_stmt *st, ast_stmt *s)
{
	bool skip;

	switch (s->kind) {
	case AST_STMT_CREATE_TABLE:
		return name_free(st->db, s->name, STG_OBJ_TABLE, s->if_exists,
				 &skip);
	case AST_STMT_CREATE_VIEW:
		return name_free(st->db, s->name, STG_OBJ_VIEW, s->if_exists,
				 &skip);
	case AST_STMT_CREATE_INDEX:
		return name_free(st->db, s->name, STG_OBJ_INDEX, s->if_exists,
				 &skip);
	case AST_STMT_REINDEX:
		return ixsql_reindex(st, s, true);
	default:
		return GPMDB_OK;
	}
}

static int dml_run(gpmdb_stmt *st, ast_stmt *s);

/* Indexes live in the pool and change with the rows (storage/index.c):
 * a failed statement's rollback undoes both. */
int dml_exec(gpmdb_stmt *st, ast_stmt *s)
{
	return dml_run(st, s);
}

static int dml_run(gpmdb_stmt *st, ast_stmt *s)
{
	st->db->changes = 0;
	/* array-bound parameters: one batch for all parameter rows */
	if (batch_active(st) &&
	    (s->kind == AST_STMT_INSERT || s->kind == AST_STMT_UPDATE ||
	     s->kind == AST_STMT_DELETE))
		return batch_exec(st, s);
	switch (s->kind) {
	case AST_STMT_INSERT:
		return do_insert(st, s);
	case AST_STMT_UPDATE:
		return do_update(st, s);
	case AST_STMT_DELETE:
		return do_delete(st, s);
	case AST_STMT_CREATE_TABLE:
		return create_table(st, s);
	case AST_STMT_DROP_TABLE:
		return drop_object(st, s, STG_OBJ_TABLE);
	case AST_STMT_CREATE_VIEW:
		return create_view(st, s);
	case AST_STMT_DROP_VIEW:
		return drop_object(st, s, STG_OBJ_VIEW);
	case AST_STMT_CREATE_INDEX:
		return create_index(st, s);
	case AST_STMT_DROP_INDEX:
		return drop_object(st, s, STG_OBJ_INDEX);
	case AST_STMT_REINDEX:
		return ixsql_reindex(st, s, false);
	default:
		return db_err(st->db, GPMDB_INTERNAL, "not a write statement");
	}
}

/* ---- services for the batch API (batch.c) ---- */

int dml_unique_keys(gpmdb *db, const stg_schema *sch, dml_key **keys, int *nk)
{
	ukey *k = NULL;
	int rc = load_keys(db, sch, &k, nk);

	*keys = k;
	return rc;
}

int dml_find_table(gpmdb *db, const char *name, uint32_t *tid, stg_schema **sch)
{
	return find_table(db, name, tid, sch);
}

int dml_default_value(gpmdb_stmt *st, const stg_column_info *c, sval *v,
		      rel *hold)
{
	return default_value(st, c, v, hold);
}
