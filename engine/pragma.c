/*
 * pragma.c - PRAGMA durability, table_info, table_list, index_list,
 * index_info, index_xinfo (index_sql.c), table_bytes, integrity_check,
 * storage_info, busy_timeout, auto_encode, memory_limit, temp_directory,
 * pool_size, pool_used, gpu, gpu_memory, hbm_cache, last_rows,
 * last_bytes_persisted, foreign_keys (backend and gpu_*:
 * gpu/exec/exec_gpu_pragma.c); and the catalog view sqlite_schema. Unknown
 * pragmas are errors (SQLite ignores them; a typo should not pass silently).
 */
#include "../gpu/gpu.h"
#include "engine.h"
#include "write/batch_gpu.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *one_col[] = {"value"};
static const char *ti_cols[] = {"cid",	   "name",	 "type",
				"notnull", "dflt_value", "pk"};
static const char *ic_cols[] = {"integrity_check"};
/* table_list and index_list: SQLite's columns (less table_list's wr and
 * strict, which have no meaning here); index_list adds the index's size
 * in bytes and its entries */
static const char *tl_cols[] = {"schema", "name", "type", "ncol"};
static const char *il_cols[] = {"seq",	   "name",  "unique", "origin",
				"partial", "bytes", "entries"};
/* index_info and index_xinfo (its first three columns) */
static const char *ii_cols[] = {"seqno", "cid", "name", "desc", "coll", "key"};
/* storage_info: a row per column, then the table's other bytes
 * (stg_storage_info) */
static const char *si_cols[] = {"cid",	  "name",  "type", "encoding",
				"values", "nulls", "heap", "bytes"};

int pragma_columns(ast_stmt *s, const char ***names)
{
	int gc = exec_gpu_pragma_columns(s, names); /* backend, gpu_* */

	if (gc < 0) /* gpu_persist*, gpu_write_*, recovery_stats */
		gc = bgpu_pragma_columns(s, names);

	if (gc < 0 && ckpt_is_pragma(s->name)) /* checkpoint*: backup.c */
		gc = ckpt_pragma_columns(s, names);
	if (gc >= 0)
		return gc;
	if (!strcasecmp(s->name, "table_info")) {
		*names = ti_cols;
		return 6;
	}
	if (!strcasecmp(s->name, "table_list")) {
		*names = tl_cols;
		return 4;
	}
	if (!strcasecmp(s->name, "index_list")) {
		*names = il_cols;
		return 7;
	}
	if (!strcasecmp(s->name, "index_info")) {
		*names = ii_cols;
		return 3;
	}
	if (!strcasecmp(s->name, "index_xinfo")) {
		*names = ii_cols;
		return 6;
	}
	if (!strcasecmp(s->name, "storage_info")) {
		*names = si_cols;
		return 8;
	}
	if (!strcasecmp(s->name, "integrity_check")) {
		*names = ic_cols;
		return 1;
	}
	/* as SQLite, setting busy_timeout answers the new value */
	if (s->pragma_value && !s->pragma_call &&
	    strcasecmp(s->name, "busy_timeout")) {
		*names = NULL;
		return 0;
	}
	*names = one_col;
	return 1;
}

int pragma_put_row(gpmdb *db, rel *r, const sval *v)
{
	if (rel_reserve(r, 1))
		return db_err(db, GPMDB_NOMEM, "out of memory");
	for (int c = 0; c < r->ncols; c++)
		if (rel_set(r, c, r->nrows, &v[c]))
			return db_err(db, GPMDB_NOMEM, "out of memory");
	r->nrows++;
	return GPMDB_OK;
}

int pragma_row(gpmdb *db, rel *r, const char *name, const char *txt, sval num)
{
	sval v[2];
	int c = 0;

	memset(v, 0, sizeof(v));
	if (name) {
		v[c].t = BC_T_TEXT;
		v[c].u.s.ptr = name;
		v[c++].u.s.len = (uint32_t)strlen(name);
	}
	if (txt) {
		v[c].t = BC_T_TEXT;
		v[c].u.s.ptr = txt;
		v[c].u.s.len = (uint32_t)strlen(txt);
	} else {
		v[c] = num;
	}
	if (rel_reserve(r, 1))
		return db_err(db, GPMDB_NOMEM, "out of memory");
	for (int k = 0; k <= c; k++)
		if (rel_set(r, k, r->nrows, &v[k]))
			return db_err(db, GPMDB_NOMEM, "out of memory");
	r->nrows++;
	return GPMDB_OK;
}

static bool o_is(const stg_object *o, stg_objkind k, const char *name)
{
	return o->kind == k && !strcasecmp(o->name, name);
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

/* Pragmas whose value is one integer, read-only. */
static bool is_int_pragma(const char *name)
{
	static const char *const names[] = {
	    "pool_size",    "pool_used",      "gpu_memory",
	    "hbm_cache",    "last_rows",      "last_bytes_persisted",
	    "busy_timeout", "beside_readers", "beside_commits"};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcasecmp(name, names[i]))
			return true;
	return false;
}

/* PRAGMA hbm_cache: bytes of table columns held in the GPU's HBM column
 * cache, the cache_bytes row of PRAGMA gpu_stats (read there, under the
 * lock that serialises GPU calls); 0 without a GPU. */
static int hbm_cache(gpmdb_stmt *st, ast_stmt *s, rel **out)
{
	ast_stmt alias = *s;
	etype t = et_make(BC_T_INT);
	rel *stats = NULL, *r;
	int rc;

	alias.name = "gpu_stats";
	if ((rc = exec_gpu_pragma(st, &alias, NULL, &stats)))
		return rc;
	for (uint64_t i = 0; stats && i < stats->nrows; i++) {
		sval n, x;
		rel_get(stats, 0, i, &n);
		rel_get(stats, 1, i, &x);
		if (n.t != BC_T_TEXT || n.u.s.len != 11 ||
		    memcmp(n.u.s.ptr, "cache_bytes", 11))
			continue;
		if (!(r = rel_new(NULL, 1, &t))) {
			rc = db_err(st->db, GPMDB_NOMEM, "out of memory");
		} else if ((rc = pragma_put_row(st->db, r, &x))) {
			rel_free(r);
		} else {
			*out = r;
		}
		rel_free(stats);
		return rc;
	}
	rel_free(stats);
	return db_err(st->db, GPMDB_INTERNAL,
		      "PRAGMA gpu_stats has no cache_bytes row");
}

/* The statistics pragmas: pool_size, pool_used, gpu_memory,
 * last_rows, last_bytes_persisted. */
static int read_only_pragma(gpmdb *db, ast_stmt *s, const char *v, rel *r)
{
	stg_stats ss;
	sval x;

	if (v)
		return db_err(db, GPMDB_ERROR, "PRAGMA %s is read-only",
			      s->name);
	if (stg_get_stats(db->pool, &ss))
		return db_err_stg(db);
	if (!strcasecmp(s->name, "pool_size")) {
		x = sval_of_int((int64_t)ss.pool_size);
	} else if (!strcasecmp(s->name, "pool_used")) {
		x = sval_of_int((int64_t)ss.used_bytes);
	} else if (!strcasecmp(s->name, "last_rows")) {
		x = sval_of_int(db->last_rows);
	} else if (!strcasecmp(s->name, "last_bytes_persisted")) {
		x = sval_of_int((int64_t)ss.last_txn_bytes_persisted);
	} else if (!strcasecmp(s->name, "beside_readers")) {
		/* pmem mode: times this connection mapped the pool privately
		 * to work beside other connections' snapshots */
		x = sval_of_int((int64_t)ss.beside_readers);
	} else if (!strcasecmp(s->name, "beside_commits")) {
		/* of its commits, those made privately beside readers */
		x = sval_of_int((int64_t)ss.beside_commits);
	} else {
		/* gpu_memory: device memory in bytes, 0 without a usable GPU
		 * (PRAGMA gpu says why) */
		gpu_info gi;
		char err[256];
		if (gpu_get_info(&gi, err, sizeof(err)) != GPMDB_OK)
			memset(&gi, 0, sizeof(gi));
		x = sval_of_int((int64_t)gi.mem_total);
	}
	return pragma_put_row(db, r, &x);
}

/* A column's encodings: "plain", "for 3-7 bits", "dict 2 bits", "zstd"
 * (compressed TEXT), or each kind's tablets ("for 5 tablets 3-7 bits,
 * plain 1 tablet"). */
static const char *si_encoding(const stg_storage_row *x, char *b, size_t n)
{
	static const char *const kn[4] = {"plain", "for", "dict", "zstd"};
	int kinds = !!x->ntab[0] + !!x->ntab[1] + !!x->ntab[2] + !!x->ntab[3];
	size_t at = 0;

	if (kinds == 0)
		return "plain";
	b[0] = 0;
	for (int k = 1; k <= 4; k++) {
		int i = k % 4; /* for, dict, zstd, then plain */
		char bits[32] = "";

		if (!x->ntab[i])
			continue;
		if (i == 3)
			; /* no field width */
		else if (i && x->bits_min == x->bits_max)
			snprintf(bits, sizeof(bits), " %u bits", x->bits_min);
		else if (i)
			snprintf(bits, sizeof(bits), " %u-%u bits", x->bits_min,
				 x->bits_max);
		if (kinds == 1)
			at += (size_t)snprintf(b + at, n - at, "%s%s", kn[i],
					       bits);
		else
			at += (size_t)snprintf(
			    b + at, n - at, "%s%s %u tablet%s%s",
			    at ? ", " : "", kn[i], x->ntab[i],
			    x->ntab[i] == 1 ? "" : "s", bits);
		if (at >= n)
			break;
	}
	return b;
}

/* PRAGMA storage_info(t): where the table's bytes go, a row per column
 * (values, NULL bits, TEXT heap bytes of the rows in use) and a row for
 * each of the table's other bytes (type and encoding NULL, cid -1). */
static int storage_info(gpmdb *db, rel *r, const char *name)
{
	stg_storage_row *rows = NULL;
	stg_schema *sch = NULL;
	uint32_t tid;
	int n = 0, rc = GPMDB_OK;

	if (!name)
		return db_err(db, GPMDB_ERROR,
			      "PRAGMA storage_info needs a table name");
	if (stg_table_find(db->pool, name, &tid))
		return db_err(db, GPMDB_ERROR, "no such table: %s", name);
	if (stg_table_schema(db->pool, tid, &sch) ||
	    stg_storage_info(db->pool, tid, &rows, &n)) {
		stg_schema_free(sch);
		return db_err_stg(db);
	}
	for (int i = 0; i < n && !rc; i++) {
		const stg_storage_row *x = &rows[i];
		char enc[96];
		bool col = x->col >= 0 && x->col < sch->ncols;
		const stg_column_info *ci = col ? &sch->cols[x->col] : NULL;
		sval nul = {.t = BC_T_NULL};
		sval row[8] = {
		    sval_of_int(col ? x->col : -1),
		    sval_of_text(x->name),
		    ci ? sval_of_text(ci->decl_type[0]
					  ? ci->decl_type
					  : stg_type_name(ci->type))
		       : nul,
		    ci ? sval_of_text(si_encoding(x, enc, sizeof(enc))) : nul,
		    sval_of_int((int64_t)x->values),
		    sval_of_int((int64_t)x->nulls),
		    sval_of_int((int64_t)x->heap),
		    sval_of_int((int64_t)x->bytes)};
		rc = pragma_put_row(db, r, row);
	}
	free(rows);
	stg_schema_free(sch);
	return rc;
}

/* SELECT * FROM "name", prepared on db (the caller finalizes). */
static gpmdb_stmt *prepare_all(gpmdb *db, const char *name)
{
	char *q = malloc(strlen(name) * 2 + 32), *o;
	gpmdb_stmt *st = NULL;

	if (!q) {
		db_err(db, GPMDB_NOMEM, "out of memory");
		return NULL;
	}
	o = q + sprintf(q, "SELECT * FROM \"");
	for (const char *p = name; *p; p++) {
		if (*p == '"')
			*o++ = '"';
		*o++ = *p;
	}
	strcpy(o, "\"");
	if (gpmdb_prepare(db, q, -1, &st, NULL) != GPMDB_OK) {
		gpmdb_finalize(st);
		st = NULL;
	}
	free(q);
	return st;
}

/* PRAGMA table_info of a view, as SQLite answers it: its result columns
 * with their static types; else "no such table". */
static int view_info(gpmdb *db, rel *r, const char *name)
{
	stg_object *objs;
	int n, found = 0, rc = GPMDB_OK;
	gpmdb_stmt *st;

	if (stg_objects_list(db->pool, &objs, &n))
		return db_err_stg(db);
	for (int i = 0; i < n; i++)
		found |= o_is(&objs[i], STG_OBJ_VIEW, name);
	stg_objects_free(objs, n);
	if (!found)
		return db_err(db, GPMDB_ERROR, "no such table: %s", name);
	/* a view that no longer compiles says why (no such table: ...) */
	if (!(st = prepare_all(db, name)))
		return db->errcode ? db->errcode : GPMDB_ERROR;
	for (int i = 0; i < st->ncols && !rc; i++) {
		sval row[6] = {
		    sval_of_int(i),
		    sval_of_text(st->names[i]),
		    sval_of_text(st->types ? et_name(st->types[i]) : ""),
		    sval_of_int(0),
		    (sval){.t = BC_T_NULL},
		    sval_of_int(0)};
		rc = pragma_put_row(db, r, row);
	}
	gpmdb_finalize(st);
	return rc;
}

/* Number of result columns of a view, or -1 (error cleared) when it no
 * longer compiles (a table it reads was dropped). */
static int view_ncols(gpmdb *db, const char *name)
{
	gpmdb_stmt *st = prepare_all(db, name);
	int n = st ? gpmdb_column_count(st) : -1;

	gpmdb_finalize(st);
	db_clear(db);
	return n;
}

/* PRAGMA table_list: tables and views of main, in creation order. */
static int table_list(gpmdb *db, rel *r)
{
	stg_object *objs;
	int n, rc = GPMDB_OK;

	if (stg_objects_list(db->pool, &objs, &n))
		return db_err_stg(db);
	for (int i = 0; i < n && !rc; i++) {
		stg_object *o = &objs[i];
		stg_schema *sch;
		int nc;
		if (o->kind == STG_OBJ_TABLE) {
			if (stg_table_schema(db->pool, o->table_id, &sch)) {
				rc = db_err_stg(db);
				break;
			}
			nc = sch->ncols;
			stg_schema_free(sch);
		} else if (o->kind == STG_OBJ_VIEW) {
			nc = view_ncols(db, o->name);
		} else {
			continue;
		}
		sval row[4] = {
		    sval_of_text("main"), sval_of_text(o->name),
		    sval_of_text(o->kind == STG_OBJ_TABLE ? "table" : "view"),
		    nc < 0 ? (sval){.t = BC_T_NULL} : sval_of_int(nc)};
		rc = pragma_put_row(db, r, row);
	}
	stg_objects_free(objs, n);
	return rc;
}

/* Appends s as an SQL string literal. */
static int put_literal(FILE *f, const char *s)
{
	if (!s)
		return fputs("NULL", f) < 0;
	fputc('\'', f);
	for (; *s; s++) {
		if (*s == '\'')
			fputc('\'', f);
		fputc(*s, f);
	}
	return fputc('\'', f) < 0;
}

/* sqlite_schema as a view over the catalog's listing (type, name,
 * tbl_name, sql), rebuilt at each use as views are, in creation order. */
int pragma_schema_view(gpmdb *db, const char *name, char **sql)
{
	stg_object *objs;
	int n, bad = 0;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	*sql = NULL;
	if (strcasecmp(name, "sqlite_schema") &&
	    strcasecmp(name, "sqlite_master") &&
	    strcasecmp(name, "gpmdb_schema"))
		return GPMDB_NOTFOUND;
	if (stg_objects_list(db->pool, &objs, &n))
		return db_err_stg(db);
	if (!(f = open_memstream(&buf, &len))) {
		stg_objects_free(objs, n);
		return db_err(db, GPMDB_NOMEM, "out of memory");
	}
	fputs("CREATE VIEW sqlite_schema(type, name, tbl_name, sql) AS ", f);
	if (n == 0)
		fputs("SELECT '', '', '', '' WHERE 0", f);
	else
		fputs("VALUES ", f);
	for (int i = 0; i < n; i++) {
		stg_object *o = &objs[i];
		const char *kind = o->kind == STG_OBJ_TABLE  ? "table"
				   : o->kind == STG_OBJ_VIEW ? "view"
							     : "index";
		fprintf(f, "%s('%s', ", i ? ", " : "", kind);
		bad |= put_literal(f, o->name);
		fputs(", ", f);
		bad |= put_literal(f, o->kind == STG_OBJ_INDEX ? o->tbl_name
							       : o->name);
		fputs(", ", f);
		/* a constraint's index has no CREATE text: NULL, as SQLite's
		 * sqlite_autoindex_* rows */
		bad |= put_literal(f, o->sql && *o->sql ? o->sql : NULL);
		fputc(')', f);
	}
	bad |= fclose(f) != 0;
	stg_objects_free(objs, n);
	if (bad || !buf) {
		free(buf);
		return db_err(db, GPMDB_NOMEM, "out of memory");
	}
	*sql = buf;
	return GPMDB_OK;
}

int pragma_exec(gpmdb_stmt *st, ast_stmt *s, rel **out)
{
	gpmdb *db = st->db;
	char buf[256];
	const char *v = pvalue(s, buf, sizeof(buf));
	etype tt[8];
	rel *r = NULL;
	int rc = GPMDB_OK, nc = st->ncols;

	if (exec_gpu_is_pragma(s->name)) /* backend, gpu_*: exec_gpu_pragma.c */
		return exec_gpu_pragma(st, s, v, out);
	if (bgpu_is_pragma(s->name)) /* GPU writes: batch_gpu.c */
		return bgpu_pragma(st, s, v, out);
	if (ckpt_is_pragma(s->name)) /* checkpoints: backup.c */
		return ckpt_pragma(st, s, v, out);
	if (!strcasecmp(s->name, "gpu")) {
		/* .stats's name for gpu_info: the device, or why there is
		 * none (exec_gpu.c serialises GPU calls) */
		ast_stmt alias = *s;
		alias.name = "gpu_info";
		return exec_gpu_pragma(st, &alias, v, out);
	}
	if (!strcasecmp(s->name, "hbm_cache") && !v)
		return hbm_cache(st, s, out);
	for (int i = 0; i < 8; i++)
		tt[i] = et_make(BC_T_TEXT);
	if (!strcasecmp(s->name, "table_info")) {
		tt[0] = tt[3] = tt[5] = et_make(BC_T_INT);
	} else if (!strcasecmp(s->name, "table_list")) {
		tt[3] = et_make(BC_T_INT);
	} else if (!strcasecmp(s->name, "index_list")) {
		tt[0] = tt[2] = tt[4] = tt[5] = tt[6] = et_make(BC_T_INT);
	} else if (!strcasecmp(s->name, "index_info") ||
		   !strcasecmp(s->name, "index_xinfo")) {
		tt[0] = tt[1] = tt[3] = tt[5] = et_make(BC_T_INT);
	} else if (!strcasecmp(s->name, "storage_info")) {
		tt[0] = tt[4] = tt[5] = tt[6] = tt[7] = et_make(BC_T_INT);
	} else if (is_int_pragma(s->name) ||
		   !strcasecmp(s->name, "table_bytes")) {
		tt[0] = et_make(BC_T_INT);
	}
	if (nc && !(r = rel_new(NULL, nc, tt)))
		return db_err(db, GPMDB_NOMEM, "out of memory");
	/* backend: exec_gpu_pragma.c, above */
	if (!strcasecmp(s->name, "durability")) {
		if (v && !s->pragma_call) {
			rc = db_err(db, GPMDB_UNSUPPORTED,
				    "changing the durability of an open "
				    "database is not supported yet (use "
				    "gpmdb_open_v2 options)");
		} else {
			sval x = sval_of_text(
			    stg_durability_name(stg_pool_durability(db->pool)));
			rc = pragma_put_row(db, r, &x);
		}
	} else if (!strcasecmp(s->name, "busy_timeout")) {
		/* ms a writer waits for another (storage/lock.c) */
		if (v && !s->pragma_call) {
			char *end = NULL;
			long long ms = strtoll(v, &end, 10);
			if (!end || end == v || *end || ms < 0 ||
			    ms > INT32_MAX)
				rc = db_err(db, GPMDB_ERROR,
					    "busy_timeout is in ms, 0 to %d, "
					    "not \"%s\"",
					    INT32_MAX, v);
			else
				stg_busy_timeout(db->pool, (int)ms);
		}
		if (!rc) {
			sval x = sval_of_int(stg_get_busy_timeout(db->pool));
			rc = pragma_put_row(db, r, &x);
		}
	} else if (!strcasecmp(s->name, "auto_encode")) {
		/* per connection: the tables each commit wrote are encoded
		 * at that commit (storage/encode.c) */
		if (v && !s->pragma_call) {
			if (!strcasecmp(v, "on") || !strcmp(v, "1") ||
			    !strcasecmp(v, "true"))
				stg_set_auto_encode(db->pool, true);
			else if (!strcasecmp(v, "off") || !strcmp(v, "0") ||
				 !strcasecmp(v, "false"))
				stg_set_auto_encode(db->pool, false);
			else
				rc = db_err(db, GPMDB_ERROR,
					    "auto_encode is ON or OFF, not "
					    "\"%s\"",
					    v);
		} else {
			sval x = sval_of_int(stg_auto_encode(db->pool));
			r->cols[0].ty = et_make(BC_T_INT);
			rc = pragma_put_row(db, r, &x);
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
			sval x = sval_of_int((int64_t)(db->mem_limit >> 20));
			r->cols[0].ty = et_make(BC_T_INT);
			rc = pragma_put_row(db, r, &x);
		}
	} else if (!strcasecmp(s->name, "temp_directory")) {
		/* where hash aggregates, joins and sorts spill (spill.c);
		 * '' is the default again */
		if (v && !s->pragma_call) {
			if (strlen(v) >= sizeof(db->temp_dir))
				rc = db_err(db, GPMDB_ERROR,
					    "temp_directory is longer than %zu "
					    "bytes",
					    sizeof(db->temp_dir) - 1);
			else
				snprintf(db->temp_dir, sizeof(db->temp_dir),
					 "%s", v);
		} else {
			char d[1100];
			sval x = {.t = BC_T_TEXT};
			spill_dir(db, d, sizeof(d));
			x.u.s.ptr = d;
			x.u.s.len = (uint32_t)strlen(d);
			r->cols[0].ty = et_make(BC_T_TEXT);
			rc = pragma_put_row(db, r, &x);
		}
	} else if (!strcasecmp(s->name, "table_info")) {
		uint32_t tid;
		stg_schema *sch;
		if (!v) {
			rc = db_err(db, GPMDB_ERROR,
				    "PRAGMA table_info needs a table name");
		} else if (stg_table_find(db->pool, v, &tid)) {
			rc = view_info(db, r, v);
		} else if (stg_table_schema(db->pool, tid, &sch)) {
			rc = db_err_stg(db);
		} else {
			for (int i = 0; i < sch->ncols && !rc; i++) {
				stg_column_info *c = &sch->cols[i];
				sval row[6] = {
				    sval_of_int(i),
				    sval_of_text(c->name),
				    sval_of_text(c->decl_type[0]
						     ? c->decl_type
						     : stg_type_name(c->type)),
				    sval_of_int(!!(c->flags & STG_COL_NOTNULL)),
				    c->default_sql
					? sval_of_text(c->default_sql)
					: (sval){.t = BC_T_NULL},
				    sval_of_int(
					!!(c->flags & STG_COL_PRIMARY_KEY))};
				rc = pragma_put_row(db, r, row);
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
			rc = pragma_put_row(db, r, &x);
			p += n + (nl ? 1 : 0);
		}
		free(rep);
	} else if (!strcasecmp(s->name, "table_list")) {
		rc = table_list(db, r);
	} else if (!strcasecmp(s->name, "index_list")) {
		rc = ixsql_index_list(db, r, v);
	} else if (!strcasecmp(s->name, "index_info") ||
		   !strcasecmp(s->name, "index_xinfo")) {
		rc = ixsql_index_info(db, r, v,
				      !strcasecmp(s->name, "index_xinfo"));
	} else if (!strcasecmp(s->name, "table_bytes")) {
		uint32_t tid;
		uint64_t n;
		if (!v) {
			rc = db_err(db, GPMDB_ERROR,
				    "PRAGMA table_bytes needs a table name");
		} else if (stg_table_find(db->pool, v, &tid)) {
			rc = db_err(db, GPMDB_ERROR, "no such table: %s", v);
		} else if (stg_table_bytes(db->pool, tid, &n)) {
			rc = db_err_stg(db);
		} else {
			sval x = sval_of_int((int64_t)n);
			rc = pragma_put_row(db, r, &x);
		}
	} else if (!strcasecmp(s->name, "storage_info")) {
		rc = storage_info(db, r, v);
	} else if (is_int_pragma(s->name)) {
		rc = read_only_pragma(db, s, v, r);
	} else if (!strcasecmp(s->name, "foreign_keys")) {
		/* .dump scripts (ours and sqlite3's) start with PRAGMA
		 * foreign_keys=OFF; gpmdb has no foreign keys, so OFF is
		 * what it always is, and ON cannot be honoured */
		if (v && !s->pragma_call) {
			if (strcasecmp(v, "off") && strcasecmp(v, "0") &&
			    strcasecmp(v, "false") && strcasecmp(v, "no"))
				rc = db_err(db, GPMDB_UNSUPPORTED,
					    "foreign keys are not supported "
					    "(PRAGMA foreign_keys can only be "
					    "OFF)");
		} else {
			sval x = sval_of_int(0);
			r->cols[0].ty = et_make(BC_T_INT);
			rc = pragma_put_row(db, r, &x);
		}
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
