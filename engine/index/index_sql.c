/*
 * index_sql.c - the SQL surface of the persistent indexes (storage.h,
 * "Indexes"): PRAGMA index_list(t), PRAGMA index_info(i), PRAGMA
 * index_xinfo(i) and REINDEX, answered as SQLite answers them, with the
 * index's size in bytes and entries beside SQLite's columns of
 * index_list.  pragma.c and dml.c dispatch here.
 */
#include "../engine.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* A column of an index as declared: DESC and its collation.  Indexes of
 * PRIMARY KEY and UNIQUE constraints have no CREATE INDEX text and are
 * ascending and BINARY. */
typedef struct {
	bool desc;
	char coll[32];
} ixsql_decl;

static const char *ixsql_origin(stg_ix_origin o)
{
	switch (o) {
	case STG_IX_PRIMARY:
		return "pk";
	case STG_IX_UNIQUE:
		return "u";
	default:
		return "c";
	}
}

/* Whether the catalog has a view of that name (a view has no indexes:
 * index_list of a view is empty and REINDEX of one does nothing, as in
 * SQLite). */
static int ixsql_is_view(gpmdb *db, const char *name, bool *yes)
{
	stg_object *objs;
	int n;

	*yes = false;
	if (stg_objects_list(db->pool, &objs, &n))
		return db_err_stg(db);
	for (int i = 0; i < n; i++)
		if (objs[i].kind == STG_OBJ_VIEW &&
		    !strcasecmp(objs[i].name, name))
			*yes = true;
	stg_objects_free(objs, n);
	return GPMDB_OK;
}

/* The declared order and collation of index ix's columns, from its
 * CREATE INDEX text in the catalog (defaults when it has none). */
static int ixsql_declared(gpmdb *db, const stg_index_info *ix, ixsql_decl *d)
{
	stg_object *objs;
	int n;

	for (int j = 0; j < ix->ncols; j++) {
		d[j].desc = false;
		snprintf(d[j].coll, sizeof(d[j].coll), "BINARY");
	}
	if (ix->origin != STG_IX_CREATED)
		return GPMDB_OK;
	if (stg_objects_list(db->pool, &objs, &n))
		return db_err_stg(db);
	for (int i = 0; i < n; i++) {
		parse_result pr;
		if (objs[i].kind != STG_OBJ_INDEX || !objs[i].sql ||
		    strcasecmp(objs[i].name, ix->name))
			continue;
		if (!parse_sql(objs[i].sql, strlen(objs[i].sql), &pr) &&
		    pr.stmt && pr.stmt->kind == AST_STMT_CREATE_INDEX &&
		    pr.stmt->idx_cols) {
			ast_order_list *l = pr.stmt->idx_cols;
			for (int j = 0; j < l->n && j < ix->ncols; j++) {
				ast_expr *e = l->v[j]->expr;
				d[j].desc = l->v[j]->desc;
				if (e->kind == AST_E_COLLATE && e->name)
					snprintf(d[j].coll, sizeof(d[j].coll),
						 "%s", e->name);
				for (char *c = d[j].coll; *c; c++)
					if (*c >= 'a' && *c <= 'z')
						*c = (char)(*c - 'a' + 'A');
			}
		}
		parse_result_free(&pr);
		break;
	}
	stg_objects_free(objs, n);
	return GPMDB_OK;
}

int ixsql_index_list(gpmdb *db, rel *r, const char *table)
{
	stg_index_info *ix = NULL;
	uint32_t tid;
	bool view;
	int n = 0, rc;

	if (!table)
		return db_err(db, GPMDB_ERROR,
			      "PRAGMA index_list needs a table name");
	if (stg_table_find(db->pool, table, &tid)) {
		if ((rc = ixsql_is_view(db, table, &view)))
			return rc;
		return view ? GPMDB_OK
			    : db_err(db, GPMDB_ERROR, "no such table: %s",
				     table);
	}
	if (stg_index_list(db->pool, tid, &ix, &n))
		return db_err_stg(db);
	rc = GPMDB_OK;
	for (int i = 0; i < n && !rc; i++) {
		sval row[7] = {sval_of_int(i),
			       sval_of_text(ix[i].name),
			       sval_of_int(ix[i].unique),
			       sval_of_text(ixsql_origin(ix[i].origin)),
			       sval_of_int(0),
			       sval_of_int((int64_t)ix[i].bytes),
			       sval_of_int((int64_t)ix[i].entries)};
		rc = pragma_put_row(db, r, row);
	}
	free(ix);
	return rc;
}

int ixsql_index_info(gpmdb *db, rel *r, const char *index, bool xinfo)
{
	stg_index_info ix;
	stg_schema *sch;
	ixsql_decl d[STG_INDEX_MAX_COLS];
	int rc, frc;

	if (!index)
		return db_err(db, GPMDB_ERROR, "PRAGMA %s needs an index name",
			      xinfo ? "index_xinfo" : "index_info");
	frc = stg_index_find(db->pool, index, &ix);
	if (frc == GPMDB_NOTFOUND)
		return db_err(db, GPMDB_ERROR, "no such index: %s", index);
	if (frc)
		return db_err_stg(db);
	if (stg_table_schema(db->pool, ix.table_id, &sch))
		return db_err_stg(db);
	rc = ixsql_declared(db, &ix, d);
	for (int j = 0; j < ix.ncols && !rc; j++) {
		uint32_t c = ix.cols[j];
		const char *name =
		    c < (uint32_t)sch->ncols ? sch->cols[c].name : "";
		sval row[6] = {sval_of_int(j),		sval_of_int(c),
			       sval_of_text(name),	sval_of_int(d[j].desc),
			       sval_of_text(d[j].coll), sval_of_int(1)};
		rc = pragma_put_row(db, r, row);
	}
	/* the entries' last part: the row id (SQLite's rowid column) */
	if (!rc && xinfo) {
		sval row[6] = {sval_of_int(ix.ncols),  sval_of_int(-1),
			       (sval){.t = BC_T_NULL}, sval_of_int(0),
			       sval_of_text("BINARY"), sval_of_int(0)};
		rc = pragma_put_row(db, r, row);
	}
	stg_schema_free(sch);
	return rc;
}

/* Rebuilds the indexes of list whose keep flag is set. */
static int ixsql_rebuild(gpmdb *db, const stg_index_info *ix, int n,
			 const bool *keep)
{
	for (int i = 0; i < n; i++) {
		int rc;
		if (keep && !keep[i])
			continue;
		if ((rc = db_check_interrupt(db)))
			return rc;
		if (stg_index_rebuild(db->pool, ix[i].index_id))
			return db_err_stg(db);
	}
	return GPMDB_OK;
}

/* SQLite's built-in collations, the ones gpmdb knows. */
static bool ixsql_is_collation(const char *name)
{
	return !strcasecmp(name, "binary") || !strcasecmp(name, "nocase") ||
	       !strcasecmp(name, "rtrim");
}

/* REINDEX BINARY|NOCASE|RTRIM: the indexes with a column of that
 * collation. */
static int ixsql_reindex_collation(gpmdb *db, const char *name)
{
	stg_index_info *ix = NULL;
	bool *keep;
	int n = 0, rc;

	if (stg_index_list(db->pool, 0, &ix, &n))
		return db_err_stg(db);
	if (!(keep = calloc((size_t)n + 1, sizeof(bool)))) {
		free(ix);
		return db_err(db, GPMDB_NOMEM, "out of memory");
	}
	rc = GPMDB_OK;
	for (int i = 0; i < n && !rc; i++) {
		ixsql_decl d[STG_INDEX_MAX_COLS];
		rc = ixsql_declared(db, &ix[i], d);
		for (int j = 0; j < ix[i].ncols && !rc; j++)
			keep[i] |= !strcasecmp(d[j].coll, name);
	}
	if (!rc)
		rc = ixsql_rebuild(db, ix, n, keep);
	free(keep);
	free(ix);
	return rc;
}

/*
 * REINDEX as SQLite reads it: no name, every index; a collation's name
 * (unqualified), the indexes using it; a table's (or a view's, nothing),
 * the table's indexes; an index's, that index; otherwise "unable to
 * identify the object to be reindexed".  The rebuilt entries are the same
 * entries: changes stays 0.  check_only (at prepare, as SQLite reports
 * these errors) resolves the name and rebuilds nothing.
 */
int ixsql_reindex(gpmdb_stmt *st, ast_stmt *s, bool check_only)
{
	gpmdb *db = st->db;
	stg_index_info *ix = NULL, one;
	uint32_t tid;
	bool view;
	int n = 0, rc;

	if (s->schema && strcasecmp(s->schema, "main"))
		return db_err(db, GPMDB_ERROR, "unknown database %s",
			      s->schema);
	if (!s->name) {
		if (check_only)
			return GPMDB_OK;
		if (stg_index_list(db->pool, 0, &ix, &n))
			return db_err_stg(db);
		rc = ixsql_rebuild(db, ix, n, NULL);
		free(ix);
		return rc;
	}
	if (!s->schema && ixsql_is_collation(s->name))
		return check_only ? GPMDB_OK
				  : ixsql_reindex_collation(db, s->name);
	if (!stg_table_find(db->pool, s->name, &tid)) {
		if (check_only)
			return GPMDB_OK;
		if (stg_index_list(db->pool, tid, &ix, &n))
			return db_err_stg(db);
		rc = ixsql_rebuild(db, ix, n, NULL);
		free(ix);
		return rc;
	}
	if ((rc = ixsql_is_view(db, s->name, &view)) || view)
		return rc;
	rc = stg_index_find(db->pool, s->name, &one);
	if (rc == GPMDB_NOTFOUND)
		return db_err(db, GPMDB_ERROR,
			      "unable to identify the object to be reindexed");
	if (rc)
		return db_err_stg(db);
	return check_only ? GPMDB_OK : ixsql_rebuild(db, &one, 1, NULL);
}
