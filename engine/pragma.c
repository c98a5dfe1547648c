/*
 * pragma.c - PRAGMA backend, durability, table_info, integrity_check,
 * memory_limit.  Unknown pragmas are errors (SQLite ignores them; a typo
 * should not pass silently).
 */
#include "engine.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *one_col[] = {"value"};
static const char *ti_cols[] = {"cid",	   "name",	 "type",
				"notnull", "dflt_value", "pk"};
static const char *ic_cols[] = {"integrity_check"};

int pragma_columns(ast_stmt *s, const char ***names)
{
	if (!strcasecmp(s->name, "table_info")) {
		*names = ti_cols;
		return 6;
	}
	if (!strcasecmp(s->name, "integrity_check")) {
		*names = ic_cols;
		return 1;
	}
	if (s->pragma_value && !s->pragma_call) {
		*names = NULL;
		return 0;
	}
	*names = one_col;
	return 1;
}

static int put_row(gpmdb *db, rel *r, const sval *v)
{
	if (rel_reserve(r, 1))
		return db_err(db, GPMDB_NOMEM, "out of memory");
	for (int c = 0; c < r->ncols; c++)
		if (rel_set(r, c, r->nrows, &v[c]))
			return db_err(db, GPMDB_NOMEM, "out of memory");
	r->nrows++;
	return GPMDB_OK;
}

static sval text(const char *s)
{
	sval v = {.t = BC_T_TEXT};
	v.u.s.ptr = s;
	v.u.s.len = (uint32_t)strlen(s);
	return v;
}

static sval integer(int64_t i)
{
	sval v = {.t = BC_T_INT};
	v.u.i = i;
	return v;
}

/* The pragma's value as text (a name, string or number). */
static const char *pvalue(ast_stmt *s, char *buf, size_t len)
{
	ast_expr *e = s->pragma_value;

	if (!e)
		return NULL;
	switch (e->kind) {
	case AST_E_STRING:
		snprintf(buf, len, "%.*s", (int)e->slen, e->str);
		break;
	case AST_E_INT:
	case AST_E_BOOL:
		snprintf(buf, len, "%lld", (long long)e->ival);
		break;
	case AST_E_COLUMN:
		snprintf(buf, len, "%s", e->name);
		break;
	default: {
		char *t = ast_expr_to_sql(e);
		snprintf(buf, len, "%s", t ? t : "");
		free(t);
	}
	}
	return buf;
}

int pragma_exec(gpmdb_stmt *st, ast_stmt *s, rel **out)
{
	gpmdb *db = st->db;
	char buf[256];
	const char *v = pvalue(s, buf, sizeof(buf));
	etype tt[6];
	rel *r = NULL;
	int rc = GPMDB_OK, nc = st->ncols;

	for (int i = 0; i < 6; i++)
		tt[i] = et_make(BC_T_TEXT);
	if (!strcasecmp(s->name, "table_info")) {
		tt[0] = tt[3] = tt[5] = et_make(BC_T_INT);
	}
	if (nc && !(r = rel_new(NULL, nc, tt)))
		return db_err(db, GPMDB_NOMEM, "out of memory");
	if (!strcasecmp(s->name, "backend")) {
		if (v && s->pragma_value && !s->pragma_call) {
			if (!strcasecmp(v, "cpu") || !strcasecmp(v, "auto"))
				db->backend = !strcasecmp(v, "cpu");
			else if (!strcasecmp(v, "gpu"))
				rc = db_err(db, GPMDB_UNSUPPORTED,
					    "the GPU backend is not available "
					    "in this build");
			else
				rc = db_err(db, GPMDB_ERROR,
					    "unknown backend \"%s\" (expected "
					    "auto, cpu or gpu)",
					    v);
		} else {
			sval x = text("cpu");
			rc = put_row(db, r, &x);
		}
	} else if (!strcasecmp(s->name, "durability")) {
		if (v && !s->pragma_call) {
			rc = db_err(db, GPMDB_UNSUPPORTED,
				    "changing the durability of an open "
				    "database is not supported yet (use "
				    "gpmdb_open_v2 options)");
		} else {
			sval x = text(
			    stg_durability_name(stg_pool_durability(db->pool)));
			rc = put_row(db, r, &x);
		}
	} else if (!strcasecmp(s->name, "memory_limit")) {
		if (v && !s->pragma_call) {
			long long mb = atoll(v);
			if (mb < 0)
				rc = db_err(db, GPMDB_ERROR,
					    "memory_limit is in MiB, >= 0");
			else
				db->mem_limit = (uint64_t)mb << 20;
		} else {
			sval x = integer((int64_t)(db->mem_limit >> 20));
			r->cols[0].ty = et_make(BC_T_INT);
			rc = put_row(db, r, &x);
		}
	} else if (!strcasecmp(s->name, "table_info")) {
		uint32_t tid;
		stg_schema *sch;
		if (!v) {
			rc = db_err(db, GPMDB_ERROR,
				    "PRAGMA table_info needs a table name");
		} else if (stg_table_find(db->pool, v, &tid)) {
			rc = db_err(db, GPMDB_ERROR, "no such table: %s", v);
		} else if (stg_table_schema(db->pool, tid, &sch)) {
			rc = db_err_stg(db);
		} else {
			for (int i = 0; i < sch->ncols && !rc; i++) {
				stg_column_info *c = &sch->cols[i];
				sval row[6] = {
				    integer(i),
				    text(c->name),
				    text(c->decl_type[0]
					     ? c->decl_type
					     : stg_type_name(c->type)),
				    integer(!!(c->flags & STG_COL_NOTNULL)),
				    c->default_sql ? text(c->default_sql)
						   : (sval){.t = BC_T_NULL},
				    integer(
					!!(c->flags & STG_COL_PRIMARY_KEY))};
				rc = put_row(db, r, row);
			}
			stg_schema_free(sch);
		}
	} else if (!strcasecmp(s->name, "integrity_check")) {
		char *rep = NULL;
		int crc = stg_check(db->pool, &rep);
		char *p = rep ? rep : (char *)(crc ? "damaged" : "ok");
		while (!rc && p && *p) {
			char *nl = strchr(p, '\n');
			size_t n = nl ? (size_t)(nl - p) : strlen(p);
			sval x = {.t = BC_T_TEXT};
			x.u.s.ptr = p;
			x.u.s.len = (uint32_t)n;
			rc = put_row(db, r, &x);
			p += n + (nl ? 1 : 0);
		}
		free(rep);
	} else {
		rc = db_err(db, GPMDB_UNSUPPORTED, "unknown pragma: %s",
			    s->name);
	}
	if (rc) {
		rel_free(r);
		return rc;
	}
	*out = r;
	return GPMDB_OK;
}
