/*
 * catalog.c - tables, views and indexes.
 *
 * Each object lives in its own extent (stg_cat_entry, then the columns,
 * then the SQL text and default expressions) and the entries form a list
 * in creation order, from root.cat_head to root.cat_tail.  A new entry is
 * written and persisted in fresh space before it is linked, and linking
 * and unlinking change only undo-logged words, so CREATE and DROP are
 * atomic under a crash.  A dropped object's extents are freed at commit.
 *
 * Names compare case-insensitively (ASCII), like SQL identifiers.  Tables
 * and views share one namespace, indexes have their own.  The catalog is
 * small, so lookups walk the list; a walk stops after as many steps as
 * the pool has chunks, so a damaged (cyclic) list cannot hang it.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "crashpoints.h"
#include "internal.h"

static const char *kind_name(uint32_t k)
{
	switch (k) {
	case STG_OBJ_TABLE:
		return "table";
	case STG_OBJ_VIEW:
		return "view";
	case STG_OBJ_INDEX:
		return "index";
	}
	return "object";
}

/* Next entry of the list, 0 at the end or when the link is damaged. */
static uint64_t cat_next(const stg_pool *p, uint64_t off)
{
	uint64_t nx = cat_entry(p, off)->next;

	if (nx && (!pool_range_ok(p, nx, sizeof(stg_cat_entry)) ||
		   cat_entry(p, nx)->magic != STG_CAT_MAGIC))
		return 0;
	return nx;
}

static uint64_t cat_first(const stg_pool *p)
{
	uint64_t h = pool_root(p)->cat_head;

	if (h && (!pool_range_ok(p, h, sizeof(stg_cat_entry)) ||
		  cat_entry(p, h)->magic != STG_CAT_MAGIC))
		return 0;
	return h;
}

#define CAT_FOREACH(p, off, steps)                                             \
	for ((off) = cat_first(p), (steps) = 0;                                \
	     (off) && (steps) <= (p)->sb.nchunks;                              \
	     (off) = cat_next((p), (off)), (steps)++)

int cat_find_table(stg_pool *p, uint32_t table_id, uint64_t *out)
{
	uint64_t off, steps;

	CAT_FOREACH(p, off, steps)
	{
		stg_cat_entry *e = cat_entry(p, off);

		if (e->kind == STG_OBJ_TABLE && e->table_id == table_id) {
			*out = off;
			return GPMDB_OK;
		}
	}
	return pool_err(p, GPMDB_NOTFOUND, "no such table (id %u)", table_id);
}

/* Finds an object by name among the kinds in mask (1 << kind). */
static uint64_t cat_find_name(stg_pool *p, const char *name, unsigned mask)
{
	uint64_t off, steps;

	CAT_FOREACH(p, off, steps)
	{
		stg_cat_entry *e = cat_entry(p, off);

		if ((mask & (1u << e->kind)) &&
		    strncasecmp(e->name, name, STG_CAT_NAME) == 0)
			return off;
	}
	return 0;
}

int stg_table_find(stg_pool *p, const char *name, uint32_t *table_id)
{
	uint64_t off;

	if (p == NULL || name == NULL)
		return GPMDB_MISUSE;
	if (p->broken)
		return GPMDB_IOERR;
	off = cat_find_name(p, name, 1u << STG_OBJ_TABLE);
	if (off == 0)
		return GPMDB_NOTFOUND;
	if (table_id)
		*table_id = cat_entry(p, off)->table_id;
	return GPMDB_OK;
}

static bool name_ok(const char *n)
{
	return n && n[0] && strlen(n) < STG_CAT_NAME;
}

static bool type_ok(stg_type t)
{
	return t >= STG_T_INT && t <= STG_T_TEXT;
}

static uint64_t align8(uint64_t x)
{
	return (x + 7) & ~7ull;
}

/* Links a written entry at the end of the list, allotting its sequence
 * number (and table id when want_id). */
static int cat_link(stg_pool *p, uint64_t off, bool want_id, uint32_t *tid)
{
	stg_root r = *pool_root(p);
	stg_cat_entry *e = cat_entry(p, off);
	int rc;

	e->obj_seq = r.next_obj_seq++;
	if (want_id) {
		e->table_id = r.next_table_id++;
		if (tid)
			*tid = e->table_id;
	}
	pool_persist(p, e, sizeof(*e));
	if (r.cat_tail) {
		rc = mlog_set_u64(p, r.cat_tail + offsetof(stg_cat_entry, next),
				  off);
		if (rc != GPMDB_OK)
			return rc;
	} else {
		r.cat_head = off;
	}
	r.cat_tail = off;
	/* The root's counters and list ends: one undo entry. */
	rc = mlog_write(p, p->sb.root_off, &r, offsetof(stg_root, pad0));
	if (rc != GPMDB_OK)
		return rc;
	stg_crash_point("catalog.write");
	return GPMDB_OK;
}

/* Unlinks the entry at off and frees its extent (and a table's data) at
 * commit. */
static int cat_unlink(stg_pool *p, uint64_t off)
{
	uint64_t cur, prev = 0, steps, next;
	stg_root r;
	int rc;

	CAT_FOREACH(p, cur, steps)
	{
		if (cur == off)
			break;
		prev = cur;
	}
	if (cur != off)
		return pool_err(p, GPMDB_CORRUPT,
				"catalog entry 0x%llx is not in the catalog",
				(unsigned long long)off);
	next = cat_entry(p, off)->next;
	r = *pool_root(p);
	if (prev) {
		rc =
		    mlog_set_u64(p, prev + offsetof(stg_cat_entry, next), next);
		if (rc != GPMDB_OK)
			return rc;
	} else {
		r.cat_head = next;
	}
	if (r.cat_tail == off)
		r.cat_tail = prev;
	rc = mlog_write(p, p->sb.root_off, &r, offsetof(stg_root, pad0));
	if (rc != GPMDB_OK)
		return rc;
	stg_crash_point("catalog.write");
	if (cat_entry(p, off)->kind == STG_OBJ_TABLE) {
		rc = tab_free_all(p, off);
		if (rc != GPMDB_OK)
			return rc;
	}
	if (cat_entry(p, off)->kind == STG_OBJ_INDEX &&
	    cat_entry(p, off)->tdir) { /* the tree and its header */
		uint64_t h = cat_entry(p, off)->tdir;
		if (pool_range_ok(p, h, sizeof(stg_ix_hdr))) {
			rc = ix_free_all(p, h);
			if (rc == GPMDB_OK)
				rc = alloc_free_deferred(
				    p, h,
				    ((stg_ix_hdr *)pool_at(p, h))->extent_size);
			if (rc != GPMDB_OK)
				return rc;
		}
	}
	return alloc_free_deferred(p, off, cat_entry(p, off)->extent_size);
}

static int check_name_free(stg_pool *p, stg_objkind kind, const char *name)
{
	unsigned mask = kind == STG_OBJ_INDEX
			    ? 1u << STG_OBJ_INDEX
			    : (1u << STG_OBJ_TABLE) | (1u << STG_OBJ_VIEW);
	uint64_t off = cat_find_name(p, name, mask);

	if (off)
		return pool_err(p, GPMDB_ERROR, "%s %s already exists",
				kind_name(cat_entry(p, off)->kind), name);
	return GPMDB_OK;
}

int stg_table_create(stg_pool *p, const char *name, const stg_column_def *cols,
		     int ncols, const char *sql, uint32_t *table_id)
{
	uint64_t size, off, ext, pos, sql_len;
	stg_cat_entry *e;
	stg_cat_column *cc;
	int rc, i, j;

	rc = pool_check_writable(p);
	if (rc != GPMDB_OK)
		return rc;
	if (!name_ok(name))
		return pool_err(p, GPMDB_MISUSE, "bad table name");
	if (cols == NULL || ncols < 1 || ncols > STG_MAX_COLUMNS)
		return pool_err(p, GPMDB_ERROR,
				"table %s: %d columns (1 to %d allowed)", name,
				ncols, STG_MAX_COLUMNS);
	sql_len = sql ? strlen(sql) : 0;
	size = sizeof(stg_cat_entry) +
	       (uint64_t)ncols * sizeof(stg_cat_column) + align8(sql_len + 1);
	for (i = 0; i < ncols; i++) {
		if (!name_ok(cols[i].name))
			return pool_err(p, GPMDB_ERROR,
					"table %s: column %d has a bad name",
					name, i + 1);
		if (!type_ok(cols[i].type))
			return pool_err(p, GPMDB_ERROR,
					"table %s: column %s has an unknown "
					"type (%d)",
					name, cols[i].name, (int)cols[i].type);
		for (j = 0; j < i; j++)
			if (strcasecmp(cols[i].name, cols[j].name) == 0)
				return pool_err(p, GPMDB_ERROR,
						"duplicate column name: %s",
						cols[i].name);
		if (cols[i].default_sql)
			size += align8(strlen(cols[i].default_sql) + 1);
	}
	rc = check_name_free(p, STG_OBJ_TABLE, name);
	if (rc != GPMDB_OK)
		return rc;

	rc = alloc_extent(p, size, &off, &ext);
	if (rc != GPMDB_OK)
		return rc;
	e = cat_entry(p, off);
	memset(e, 0, size);
	e->magic = STG_CAT_MAGIC;
	e->kind = STG_OBJ_TABLE;
	e->extent_size = ext;
	e->ncols = (uint32_t)ncols;
	snprintf(e->name, sizeof(e->name), "%s", name);
	snprintf(e->tbl_name, sizeof(e->tbl_name), "%s", name);
	cc = cat_cols(e);
	pos = sizeof(*e) + (uint64_t)ncols * sizeof(*cc);
	e->sql_rel = pos;
	e->sql_len = sql_len;
	if (sql_len)
		memcpy((char *)e + pos, sql, sql_len);
	pos += align8(sql_len + 1);
	for (i = 0; i < ncols; i++) {
		const stg_column_def *d = &cols[i];

		snprintf(cc[i].name, sizeof(cc[i].name), "%s", d->name);
		snprintf(cc[i].decl_type, sizeof(cc[i].decl_type), "%s",
			 d->decl_type ? d->decl_type : stg_type_name(d->type));
		cc[i].type = (uint32_t)d->type;
		cc[i].flags = d->flags;
		cc[i].length = d->length;
		cc[i].precision = d->precision;
		cc[i].scale = d->scale;
		if (d->default_sql) {
			uint64_t n = strlen(d->default_sql);

			cc[i].default_rel = pos;
			cc[i].default_len = n;
			memcpy((char *)e + pos, d->default_sql, n);
			pos += align8(n + 1);
		}
	}
	pool_persist(p, e, size);
	return cat_link(p, off, true, table_id);
}

/* Bytes of a view's or index's entry in use: header and SQL. */
static uint64_t entry_used(const stg_cat_entry *e)
{
	return e->sql_rel + align8(e->sql_len + 1);
}

/* A view's or index's entry in a fresh extent (not persisted, not linked):
 * name, table name and SQL. */
static int entry_new(stg_pool *p, stg_objkind kind, const char *name,
		     const char *tbl_name, const char *sql, uint64_t *out)
{
	uint64_t size, off, ext, sql_len = sql ? strlen(sql) : 0;
	stg_cat_entry *e;
	int rc;

	size = sizeof(*e) + align8(sql_len + 1);
	rc = alloc_extent(p, size, &off, &ext);
	if (rc != GPMDB_OK)
		return rc;
	e = cat_entry(p, off);
	memset(e, 0, size);
	e->magic = STG_CAT_MAGIC;
	e->kind = kind;
	e->extent_size = ext;
	snprintf(e->name, sizeof(e->name), "%s", name);
	snprintf(e->tbl_name, sizeof(e->tbl_name), "%s", tbl_name);
	e->sql_rel = sizeof(*e);
	e->sql_len = sql_len;
	if (sql_len)
		memcpy(e + 1, sql, sql_len);
	*out = off;
	return GPMDB_OK;
}

int stg_object_create(stg_pool *p, stg_objkind kind, const char *name,
		      const char *tbl_name, const char *sql)
{
	uint64_t off;
	int rc;

	rc = pool_check_writable(p);
	if (rc != GPMDB_OK)
		return rc;
	if (kind != STG_OBJ_VIEW && kind != STG_OBJ_INDEX)
		return pool_err(p, GPMDB_MISUSE,
				"stg_object_create makes views and indexes");
	if (!name_ok(name))
		return pool_err(p, GPMDB_MISUSE, "bad %s name",
				kind_name(kind));
	if (tbl_name == NULL || !tbl_name[0])
		tbl_name = name;
	if (strlen(tbl_name) >= STG_CAT_NAME)
		return pool_err(p, GPMDB_MISUSE, "bad table name");
	if (kind == STG_OBJ_INDEX &&
	    !cat_find_name(p, tbl_name, 1u << STG_OBJ_TABLE))
		return pool_err(p, GPMDB_ERROR, "no such table: %s", tbl_name);
	rc = check_name_free(p, kind, name);
	if (rc != GPMDB_OK)
		return rc;
	rc = entry_new(p, kind, name, tbl_name, sql, &off);
	if (rc != GPMDB_OK)
		return rc;
	pool_persist(p, cat_entry(p, off), entry_used(cat_entry(p, off)));
	return cat_link(p, off, false, NULL);
}

int cat_index_add(stg_pool *p, const char *name, uint64_t tcat, const char *sql,
		  uint64_t hoff, uint32_t *index_id)
{
	char tname[STG_CAT_NAME];
	stg_cat_entry *e;
	uint64_t off;
	int rc;

	if (!name_ok(name))
		return pool_err(p, GPMDB_MISUSE, "bad index name");
	/* a copy: entry_new may grow the pool, which moves its mapping */
	snprintf(tname, sizeof(tname), "%s", cat_entry(p, tcat)->name);
	rc = check_name_free(p, STG_OBJ_INDEX, name);
	if (rc == GPMDB_OK)
		rc = entry_new(p, STG_OBJ_INDEX, name, tname, sql, &off);
	if (rc != GPMDB_OK)
		return rc;
	e = cat_entry(p, off);
	e->table_id = cat_entry(p, tcat)->table_id;
	e->ncols = ((stg_ix_hdr *)pool_at(p, hoff))->ncols;
	e->tdir = hoff;
	pool_persist(p, e, entry_used(e));
	rc = cat_link(p, off, false, NULL);
	if (rc == GPMDB_OK && index_id)
		*index_id = (uint32_t)cat_entry(p, off)->obj_seq;
	return rc;
}

uint64_t cat_walk(stg_pool *p, uint64_t prev)
{
	uint64_t off = prev ? cat_next(p, prev) : cat_first(p);

	return off;
}

int cat_unlink_entry(stg_pool *p, uint64_t off)
{
	return cat_unlink(p, off);
}

int stg_table_drop(stg_pool *p, uint32_t table_id)
{
	char tname[STG_CAT_NAME];
	uint64_t off, idx;
	int rc;

	rc = pool_check_writable(p);
	if (rc != GPMDB_OK)
		return rc;
	rc = cat_find_table(p, table_id, &off);
	if (rc != GPMDB_OK)
		return rc;
	memcpy(tname, cat_entry(p, off)->name, sizeof(tname));
	tname[sizeof(tname) - 1] = '\0';
	/* The table's indexes go with it. */
	for (;;) {
		uint64_t steps;

		idx = 0;
		CAT_FOREACH(p, off, steps)
		{
			stg_cat_entry *e = cat_entry(p, off);

			if (e->kind == STG_OBJ_INDEX &&
			    strncasecmp(e->tbl_name, tname, STG_CAT_NAME) ==
				0) {
				idx = off;
				break;
			}
		}
		if (idx == 0)
			break;
		rc = cat_unlink(p, idx);
		if (rc != GPMDB_OK)
			return rc;
	}
	rc = cat_find_table(p, table_id, &off);
	if (rc != GPMDB_OK)
		return rc;
	tab_views_free(p);
	return cat_unlink(p, off);
}

int stg_object_drop(stg_pool *p, stg_objkind kind, const char *name)
{
	uint64_t off;
	int rc;

	rc = pool_check_writable(p);
	if (rc != GPMDB_OK)
		return rc;
	if (kind == STG_OBJ_TABLE) {
		uint32_t tid;

		if (stg_table_find(p, name, &tid) != GPMDB_OK)
			return pool_err(p, GPMDB_NOTFOUND, "no such table: %s",
					name ? name : "");
		return stg_table_drop(p, tid);
	}
	if (name == NULL ||
	    (off = cat_find_name(p, name, 1u << (unsigned)kind)) == 0)
		return pool_err(p, GPMDB_NOTFOUND, "no such %s: %s",
				kind_name(kind), name ? name : "");
	return cat_unlink(p, off);
}

int stg_objects_list(stg_pool *p, stg_object **out, int *n)
{
	uint64_t off, steps;
	stg_object *v = NULL;
	int nv = 0, cap = 0;

	if (p == NULL || out == NULL || n == NULL)
		return GPMDB_MISUSE;
	*out = NULL;
	*n = 0;
	if (p->broken)
		return pool_err(p, GPMDB_IOERR, "pool %s is no longer mapped",
				p->path);
	CAT_FOREACH(p, off, steps)
	{
		stg_cat_entry *e = cat_entry(p, off);
		stg_object *o;

		if (nv == cap) {
			stg_object *nvp;

			cap = cap ? cap * 2 : 16;
			nvp = realloc(v, (size_t)cap * sizeof(*v));
			if (nvp == NULL)
				goto nomem;
			v = nvp;
		}
		o = &v[nv];
		memset(o, 0, sizeof(*o));
		o->kind = (stg_objkind)e->kind;
		memcpy(o->name, e->name, STG_NAME_MAX);
		o->name[STG_NAME_MAX - 1] = '\0';
		memcpy(o->tbl_name, e->tbl_name, STG_NAME_MAX);
		o->tbl_name[STG_NAME_MAX - 1] = '\0';
		o->table_id = e->kind == STG_OBJ_TABLE ? e->table_id : 0;
		o->sql = strndup((char *)e + e->sql_rel, e->sql_len);
		nv++;
		if (o->sql == NULL)
			goto nomem;
	}
	*out = v;
	*n = nv;
	return GPMDB_OK;
nomem:
	stg_objects_free(v, nv);
	return pool_err(p, GPMDB_NOMEM, "out of memory");
}

void stg_objects_free(stg_object *objs, int n)
{
	int i;

	for (i = 0; objs && i < n; i++)
		free(objs[i].sql);
	free(objs);
}

int stg_table_schema(stg_pool *p, uint32_t table_id, stg_schema **out)
{
	stg_cat_entry *e;
	stg_cat_column *cc;
	stg_schema *s;
	uint64_t off;
	uint32_t i;
	int rc;

	if (p == NULL || out == NULL)
		return GPMDB_MISUSE;
	*out = NULL;
	pool_clear_err(p);
	rc = cat_find_table(p, table_id, &off);
	if (rc != GPMDB_OK)
		return rc;
	e = cat_entry(p, off);
	cc = cat_cols(e);
	s = calloc(1, sizeof(*s));
	if (s == NULL ||
	    (s->cols = calloc(e->ncols, sizeof(*s->cols))) == NULL) {
		free(s);
		return pool_err(p, GPMDB_NOMEM, "out of memory");
	}
	s->table_id = table_id;
	memcpy(s->name, e->name, STG_NAME_MAX);
	s->name[STG_NAME_MAX - 1] = '\0';
	s->ncols = (int)e->ncols;
	for (i = 0; i < e->ncols; i++) {
		stg_column_info *ci = &s->cols[i];

		memcpy(ci->name, cc[i].name, STG_NAME_MAX);
		ci->name[STG_NAME_MAX - 1] = '\0';
		ci->type = (stg_type)cc[i].type;
		ci->flags = cc[i].flags;
		ci->precision = cc[i].precision;
		ci->scale = cc[i].scale;
		ci->length = cc[i].length;
		memcpy(ci->decl_type, cc[i].decl_type, sizeof(ci->decl_type));
		ci->decl_type[sizeof(ci->decl_type) - 1] = '\0';
		if (cc[i].default_rel) {
			ci->default_sql = strndup((char *)e + cc[i].default_rel,
						  cc[i].default_len);
			if (ci->default_sql == NULL) {
				stg_schema_free(s);
				return pool_err(p, GPMDB_NOMEM,
						"out of memory");
			}
		}
	}
	*out = s;
	return GPMDB_OK;
}

void stg_schema_free(stg_schema *s)
{
	int i;

	if (s == NULL)
		return;
	for (i = 0; s->cols && i < s->ncols; i++)
		free(s->cols[i].default_sql);
	free(s->cols);
	free(s);
}
