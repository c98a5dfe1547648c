/*
 * shell_dot.c - dot-commands and the catalog queries behind them.
 *
 * The catalog is read through SQL the engine answers: PRAGMA table_list,
 * PRAGMA table_info(t), PRAGMA index_list(t).  The original CREATE text
 * comes from sqlite_schema when the database has it; otherwise .schema and
 * .dump rebuild a CREATE TABLE from table_info.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "shell.h"

#define MAX_ARGS 50

/* Help text: one line per command, also the usage message. */
static const struct dot_help {
	const char *name;
	const char *usage;
	const char *text;
} dot_help[] = {
    {"backend", ".backend [auto|cpu|gpu]", "Show or set the backend"},
    {"backup", ".backup [--full] [main] FILE",
     "Copy the database to FILE (only the changes when FILE is an earlier "
     "copy)"},
    {"bail", ".bail on|off", "Stop after hitting an error"},
    {"changes", ".changes on|off", "Show number of rows changed by SQL"},
    {"dump", ".dump [TABLE]", "Render database content as SQL"},
    {"durability", ".durability [MODE]", "Show or set the durability mode"},
    {"echo", ".echo on|off", "Turn command echo on or off"},
    {"exit", ".exit [CODE]", "Exit this program with return-code CODE"},
    {"explain", ".explain [on|off|auto]", "Show EXPLAIN output in column mode"},
    {"headers", ".headers on|off", "Turn display of headers on or off"},
    {"help", ".help", "Show this message"},
    {"import", ".import [--csv] [--skip N] FILE TABLE",
     "Import data from FILE into TABLE"},
    {"indexes", ".indexes [--bytes] [TABLE]",
     "Show names of indexes (--bytes: with entries and size)"},
    {"mode", ".mode MODE [TABLE]",
     "Set output mode: box column csv insert json line list markdown "
     "quote table tabs"},
    {"nullvalue", ".nullvalue STRING", "Use STRING in place of NULL values"},
    {"once", ".once FILE", "Output for the next SQL command only to FILE"},
    {"open", ".open [--new] [--readonly] [FILE]",
     "Close existing database and reopen FILE"},
    {"output", ".output [FILE]", "Send output to FILE or stdout if omitted"},
    {"quit", ".quit", "Exit this program"},
    {"read", ".read FILE", "Read input from FILE"},
    {"schema", ".schema [TABLE]", "Show the CREATE statements"},
    {"separator", ".separator COL [ROW]",
     "Change the column and row separators"},
    {"show", ".show", "Show the current values for various settings"},
    {"stats", ".stats", "Show pool, table, backend and GPU statistics"},
    {"tables", ".tables [PATTERN]", "List names of tables matching PATTERN"},
    {"timeout", ".timeout MS",
     "Wait up to MS milliseconds for a locked database (default 5000)"},
    {"timer", ".timer on|off", "Turn SQL timer on or off"},
    {"width", ".width NUM1 NUM2 ...", "Set minimum column widths"},
};

static void usage_error(struct shell *sh, const char *name)
{
	for (size_t i = 0; i < sizeof(dot_help) / sizeof(dot_help[0]); i++)
		if (!strcmp(dot_help[i].name, name))
			shell_error(sh, "Usage: %s", dot_help[i].usage);
}

/*
 * Splits a dot-command into words: whitespace separates, '...' is
 * literal, "..." takes C escapes.  The words point into line.
 */
static int split_args(char *line, char **argv)
{
	int argc = 0;
	char *p = line;
	while (*p && argc < MAX_ARGS) {
		while (isspace((unsigned char)*p))
			p++;
		if (!*p)
			break;
		if (*p == '\'' || *p == '"') {
			char q = *p++;
			char *o = p;
			argv[argc++] = p;
			while (*p && *p != q) {
				if (q == '"' && *p == '\\' && p[1]) {
					p++;
					switch (*p) {
					case 'n':
						*o++ = '\n';
						break;
					case 't':
						*o++ = '\t';
						break;
					case 'r':
						*o++ = '\r';
						break;
					default:
						*o++ = *p;
					}
					p++;
				} else {
					*o++ = *p++;
				}
			}
			if (*p)
				p++;
			*o = 0;
			if (*p && !isspace((unsigned char)*p)) {
				/* 'a'b: keep going as one word is rare;
				 * treat the rest as a new word. */
				continue;
			}
		} else {
			argv[argc++] = p;
			while (*p && !isspace((unsigned char)*p))
				p++;
		}
		if (*p)
			*p++ = 0;
	}
	return argc;
}

/* Backslash escapes in separators and the null value: \t \n \r \\. */
static void unescape(char *dst, size_t len, const char *s)
{
	size_t o = 0;
	for (; *s && o + 1 < len; s++) {
		if (*s == '\\' && s[1]) {
			s++;
			dst[o++] = *s == 't'   ? '\t'
				   : *s == 'n' ? '\n'
				   : *s == 'r' ? '\r'
					       : *s;
		} else {
			dst[o++] = *s;
		}
	}
	dst[o] = 0;
}

/* on/off and friends; anything else is "no", with a warning. */
static int boolean(struct shell *sh, const char *s)
{
	if (!strcasecmp(s, "on") || !strcasecmp(s, "yes") ||
	    !strcasecmp(s, "true") || !strcmp(s, "1"))
		return 1;
	if (!strcasecmp(s, "off") || !strcasecmp(s, "no") ||
	    !strcasecmp(s, "false") || !strcmp(s, "0"))
		return 0;
	shell_error(sh, "ERROR: Not a boolean value: \"%s\". Assuming \"no\".",
		    s);
	return 0;
}

/* SQL LIKE: % any run, _ one character, ASCII case ignored. */
static int like(const char *pat, const char *s)
{
	for (; *pat; pat++, s++) {
		if (*pat == '%') {
			for (;; s++) {
				if (like(pat + 1, s))
					return 1;
				if (!*s)
					return 0;
			}
		}
		if (!*s)
			return 0;
		if (*pat != '_' &&
		    tolower((unsigned char)*pat) != tolower((unsigned char)*s))
			return 0;
	}
	return !*s;
}

/* A list of strings collected by gpmdb_exec callbacks. */
struct list {
	char **v;
	int n, cap;
	const char *col; /* the column to collect */
	const char *like;
	int tables;	 /* PRAGMA table_list: tables and views of main only */
	int only_tables; /* ... and not the views */
};

static void list_add(struct list *l, const char *s)
{
	if (l->n + 2 > l->cap) {
		l->cap = l->cap ? l->cap * 2 : 16;
		l->v = realloc(l->v, (size_t)l->cap * sizeof(char *));
	}
	l->v[l->n++] = strdup(s);
	l->v[l->n] = NULL;
}

static int collect_cb(void *arg, int ncol, char **vals, char **names)
{
	struct list *l = arg;
	int name = 0, type = -1, schema = -1;
	for (int i = 0; i < ncol; i++) {
		if (!strcasecmp(names[i], l->col))
			name = i;
		else if (!strcasecmp(names[i], "type"))
			type = i;
		else if (!strcasecmp(names[i], "schema"))
			schema = i;
	}
	if (!vals[name])
		return 0;
	/* Internal objects and other schemas (temp) are not listed. */
	if (l->tables && !strncmp(vals[name], "sqlite_", 7))
		return 0;
	if (l->tables && schema >= 0 && vals[schema] &&
	    strcmp(vals[schema], "main"))
		return 0;
	if (l->tables && type >= 0 && vals[type] &&
	    strcmp(vals[type], "table") &&
	    (l->only_tables || strcmp(vals[type], "view")))
		return 0;
	if (l->like && !like(l->like, vals[name]))
		return 0;
	list_add(l, vals[name]);
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void shell_free_list(char **list)
{
	if (!list)
		return;
	for (char **p = list; *p; p++)
		free(*p);
	free(list);
}

static char **list_done(struct list *l)
{
	if (!l->v)
		l->v = calloc(1, sizeof(char *));
	qsort(l->v, (size_t)l->n, sizeof(char *), cmp_str);
	return l->v;
}

static char **catalog_list(struct shell *sh, const char *pattern,
			   int only_tables)
{
	struct list l = {.col = "name",
			 .like = pattern,
			 .tables = 1,
			 .only_tables = only_tables};
	gpmdb_exec(sh->db, "PRAGMA table_list", collect_cb, &l, NULL);
	return list_done(&l);
}

char **shell_catalog_tables(struct shell *sh, const char *pattern)
{
	return catalog_list(sh, pattern, 0);
}

char **shell_catalog_columns(struct shell *sh, const char *table)
{
	struct list l = {.col = "name"};
	char *q = shell_quote_ident(table);
	char *sql;
	if (asprintf(&sql, "PRAGMA table_info(%s)", q) >= 0) {
		gpmdb_exec(sh->db, sql, collect_cb, &l, NULL);
		free(sql);
	}
	free(q);
	return l.v ? l.v : calloc(1, sizeof(char *)); /* keep table order */
}

/* Names in columns across an 80-character line, as .tables prints them. */
static void print_columns(struct shell *sh, char **names)
{
	int n = 0, w = 0;
	for (; names[n]; n++)
		if ((int)strlen(names[n]) > w)
			w = (int)strlen(names[n]);
	if (!n)
		return;
	int ncol = 80 / (w + 2);
	if (ncol < 1)
		ncol = 1;
	int nrow = (n + ncol - 1) / ncol;
	for (int r = 0; r < nrow; r++) {
		for (int j = r; j < n; j += nrow)
			fprintf(sh->out, "%s%-*s", j < nrow ? "" : "  ", w,
				names[j]);
		fputc('\n', sh->out);
	}
}

/* The CREATE statements from sqlite_schema, when the database has it. */
struct schema_rows {
	struct list sql, type, name, tbl;
};

static int schema_cb(void *arg, int ncol, char **vals, char **names)
{
	struct schema_rows *s = arg;
	(void)ncol;
	(void)names;
	list_add(&s->type, vals[0] ? vals[0] : "");
	list_add(&s->name, vals[1] ? vals[1] : "");
	list_add(&s->tbl, vals[2] ? vals[2] : "");
	list_add(&s->sql, vals[3] ? vals[3] : "");
	return 0;
}

static int schema_query(struct shell *sh, struct schema_rows *s)
{
	memset(s, 0, sizeof(*s));
	/* No ORDER BY rowid: gpmdb's sqlite_schema is a view (no rowid);
	 * both it and SQLite's table list objects in creation order. */
	return gpmdb_exec(sh->db,
			  "SELECT type, name, tbl_name, sql FROM sqlite_schema "
			  "WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite_%'",
			  schema_cb, s, NULL);
}

static void schema_free(struct schema_rows *s)
{
	shell_free_list(s->sql.v);
	shell_free_list(s->type.v);
	shell_free_list(s->name.v);
	shell_free_list(s->tbl.v);
}

/* CREATE TABLE rebuilt from PRAGMA table_info, for engines without text. */
struct rebuild {
	char *sql;
	size_t len;
	FILE *f;
	int ncol;
	char pk[1024];
};

static int rebuild_cb(void *arg, int ncol, char **vals, char **names)
{
	struct rebuild *r = arg;
	const char *name = NULL, *type = NULL, *notnull = NULL, *dflt = NULL,
		   *pk = NULL;
	for (int i = 0; i < ncol; i++) {
		if (!strcasecmp(names[i], "name"))
			name = vals[i];
		else if (!strcasecmp(names[i], "type"))
			type = vals[i];
		else if (!strcasecmp(names[i], "notnull"))
			notnull = vals[i];
		else if (!strcasecmp(names[i], "dflt_value"))
			dflt = vals[i];
		else if (!strcasecmp(names[i], "pk"))
			pk = vals[i];
	}
	if (!name)
		return 0;
	char *q = shell_quote_ident(name);
	fprintf(r->f, "%s%s", r->ncol++ ? ", " : "", q);
	if (type && *type)
		fprintf(r->f, " %s", type);
	if (notnull && strcmp(notnull, "0"))
		fputs(" NOT NULL", r->f);
	if (dflt)
		fprintf(r->f, " DEFAULT %s", dflt);
	if (pk && strcmp(pk, "0")) {
		size_t n = strlen(r->pk);
		snprintf(r->pk + n, sizeof(r->pk) - n, "%s%s", n ? "," : "", q);
	}
	free(q);
	return 0;
}

static char *rebuild_create(struct shell *sh, const char *table)
{
	struct rebuild r = {0};
	char *qt = shell_quote_ident(table), *sql;
	r.f = open_memstream(&r.sql, &r.len);
	fprintf(r.f, "CREATE TABLE %s(", qt);
	if (asprintf(&sql, "PRAGMA table_info(%s)", qt) >= 0) {
		gpmdb_exec(sh->db, sql, rebuild_cb, &r, NULL);
		free(sql);
	}
	if (r.pk[0])
		fprintf(r.f, ", PRIMARY KEY(%s)", r.pk);
	fputc(')', r.f);
	fclose(r.f);
	free(qt);
	return r.sql;
}

static int dot_schema(struct shell *sh, const char *pattern)
{
	struct schema_rows s;
	if (schema_query(sh, &s) == GPMDB_OK) {
		for (int i = 0; i < s.sql.n; i++)
			if (!pattern || like(pattern, s.tbl.v[i]))
				fprintf(sh->out, "%s;\n", s.sql.v[i]);
		schema_free(&s);
		return 0;
	}
	schema_free(&s);
	char **t = shell_catalog_tables(sh, pattern);
	for (char **p = t; *p; p++) {
		char *c = rebuild_create(sh, *p);
		fprintf(sh->out, "%s;\n", c);
		free(c);
	}
	shell_free_list(t);
	return 0;
}

/* The indexes of the tables matching a pattern, with their size (PRAGMA
 * index_list's bytes and entries), sorted by name. */
struct ixrow {
	char *name, *table, *origin, *bytes, *entries;
};

struct ixrows {
	struct ixrow *v;
	int n, cap;
	const char *table;
};

static int ixrows_cb(void *arg, int ncol, char **vals, char **names)
{
	struct ixrows *l = arg;
	struct ixrow r = {0};
	if (l->n == l->cap) {
		int cap = l->cap ? l->cap * 2 : 8;
		struct ixrow *v = realloc(l->v, (size_t)cap * sizeof(*v));
		if (!v)
			return 1; /* out of memory: stop the listing */
		l->v = v;
		l->cap = cap;
	}
	for (int i = 0; i < ncol; i++) {
		char **to = !strcasecmp(names[i], "name")      ? &r.name
			    : !strcasecmp(names[i], "origin")  ? &r.origin
			    : !strcasecmp(names[i], "bytes")   ? &r.bytes
			    : !strcasecmp(names[i], "entries") ? &r.entries
							       : NULL;
		if (to)
			*to = strdup(vals[i] ? vals[i] : "");
	}
	if (!r.name)
		r.name = strdup("");
	r.table = strdup(l->table);
	l->v[l->n++] = r;
	return 0;
}

static int cmp_ixrow(const void *a, const void *b)
{
	return strcmp(((const struct ixrow *)a)->name,
		      ((const struct ixrow *)b)->name);
}

static void ixrows_load(struct shell *sh, const char *pattern, int only_tables,
			struct ixrows *l)
{
	char **t = catalog_list(sh, pattern, only_tables);
	memset(l, 0, sizeof(*l));
	for (char **p = t; *p; p++) {
		char *q = shell_quote_ident(*p), *sql;
		l->table = *p;
		if (asprintf(&sql, "PRAGMA index_list(%s)", q) >= 0) {
			gpmdb_exec(sh->db, sql, ixrows_cb, l, NULL);
			free(sql);
		}
		free(q);
	}
	shell_free_list(t);
	if (l->n)
		qsort(l->v, (size_t)l->n, sizeof(*l->v), cmp_ixrow);
}

static void ixrows_free(struct ixrows *l)
{
	for (int i = 0; i < l->n; i++) {
		free(l->v[i].name);
		free(l->v[i].table);
		free(l->v[i].origin);
		free(l->v[i].bytes);
		free(l->v[i].entries);
	}
	free(l->v);
}

/* .indexes [TABLE]: the names, as sqlite3 prints them; .indexes --bytes
 * [TABLE]: one line per index with its table, origin (c, u, pk), entries
 * and size in bytes. */
/* .backup [--full] [main] FILE and .save FILE: the backup API.  Onto an
 * earlier copy of this database only the zones changed since are copied
 * (says "incremental: N of M zones copied"); else a full copy, and why. */
static int dot_backup(struct shell *sh, int argc, char **argv)
{
	int full = argc > 1 && !strcmp(argv[1], "--full");
	int n = argc - full;
	const char *file = n == 2   ? argv[1 + full]
			   : n == 3 ? argv[2 + full]
				    : NULL;
	gpmdb_backup_stat bs;
	gpmdb_backup *bk;
	int rc;

	if (!file || (n == 3 && strcmp(argv[1 + full], "main"))) {
		usage_error(sh, "backup");
		return 1;
	}
	bk = gpmdb_backup_init_v2(file, sh->db, "main",
				  full ? GPMDB_BACKUP_FULL : 0);
	if (!bk) {
		shell_error(sh, "Error: %s", gpmdb_errmsg(sh->db));
		return 1;
	}
	rc = gpmdb_backup_step(bk, -1);
	memset(&bs, 0, sizeof(bs));
	gpmdb_backup_status(bk, &bs);
	if (rc == GPMDB_DONE)
		rc = gpmdb_backup_finish(bk);
	else
		(void)gpmdb_backup_finish(bk);
	if (rc != GPMDB_OK && rc != GPMDB_DONE) {
		shell_error(sh, "Error: %s", gpmdb_errmsg(sh->db));
		return 1;
	}
	if (bs.incremental)
		fprintf(sh->out, "incremental: %lld of %lld zones copied\n",
			bs.zones_copied, bs.zones_total);
	else
		fprintf(sh->out, "full copy: %lld zones (%s)\n",
			bs.zones_copied, bs.why_full);
	return 0;
}

static int dot_indexes(struct shell *sh, int argc, char **argv)
{
	struct ixrows l;
	int bytes = argc > 1 && !strcmp(argv[1], "--bytes");
	const char *pattern = argc > 1 + bytes ? argv[1 + bytes] : NULL;
	if (argc > 2 + bytes) {
		usage_error(sh, "indexes");
		return 1;
	}
	ixrows_load(sh, pattern, 0, &l);
	if (!bytes) {
		char **names = calloc((size_t)l.n + 1, sizeof(char *));
		for (int i = 0; names && i < l.n; i++)
			names[i] = l.v[i].name;
		if (names)
			print_columns(sh, names);
		free(names);
		ixrows_free(&l);
		return 0;
	}
	int w[5] = {5, 5, 6, 7, 5};
	for (int i = 0; i < l.n; i++) {
		const char *c[5] = {l.v[i].name, l.v[i].table, l.v[i].origin,
				    l.v[i].entries, l.v[i].bytes};
		for (int j = 0; j < 5; j++)
			if (c[j] && (int)strlen(c[j]) > w[j])
				w[j] = (int)strlen(c[j]);
	}
	if (l.n)
		fprintf(sh->out, "%-*s  %-*s  %-*s  %*s  %*s\n", w[0], "index",
			w[1], "table", w[2], "origin", w[3], "entries", w[4],
			"bytes");
	for (int i = 0; i < l.n; i++) {
		struct ixrow *r = &l.v[i];
		fprintf(sh->out, "%-*s  %-*s  %-*s  %*s  %*s\n", w[0], r->name,
			w[1], r->table, w[2], r->origin ? r->origin : "?", w[3],
			r->entries ? r->entries : "?", w[4],
			r->bytes ? r->bytes : "?");
	}
	ixrows_free(&l);
	return 0;
}

/* INSERT statements for every row of table. */
static int dump_rows(struct shell *sh, const char *table)
{
	char *q = shell_quote_ident(table), *sql;
	gpmdb_stmt *st = NULL;
	int rc = 0;
	if (asprintf(&sql, "SELECT * FROM %s", q) < 0) {
		free(q);
		return 1;
	}
	if (gpmdb_prepare(sh->db, sql, -1, &st, NULL) != GPMDB_OK || !st) {
		shell_error(sh, "Error: %s", gpmdb_errmsg(sh->db));
		rc = 1;
	} else {
		int ncol = gpmdb_column_count(st), src;
		while ((src = gpmdb_step(st)) == GPMDB_ROW) {
			fprintf(sh->out, "INSERT INTO %s VALUES(", q);
			for (int i = 0; i < ncol; i++) {
				if (i)
					fputc(',', sh->out);
				shell_output_insert_value(sh->out, st, i);
			}
			fputs(");\n", sh->out);
		}
		if (src != GPMDB_DONE) {
			shell_error(sh, "Error: %s", gpmdb_errmsg(sh->db));
			rc = 1;
		}
		gpmdb_finalize(st);
	}
	free(sql);
	free(q);
	return rc;
}

/* A CREATE TABLE for .dump: a quoted name gets IF NOT EXISTS, as sqlite3
 * writes it, so that reading a dump twice does not fail on those. */
static void dump_create(struct shell *sh, const char *sql)
{
	const char *pre = "CREATE TABLE ";
	size_t n = strlen(pre);
	if (!strncmp(sql, pre, n) && (sql[n] == '"' || sql[n] == '\''))
		fprintf(sh->out, "CREATE TABLE IF NOT EXISTS %s;\n", sql + n);
	else
		fprintf(sh->out, "%s;\n", sql);
}

static int dot_dump(struct shell *sh, const char *pattern)
{
	struct schema_rows s;
	int rc = 0;
	fputs("PRAGMA foreign_keys=OFF;\nBEGIN TRANSACTION;\n", sh->out);
	if (schema_query(sh, &s) == GPMDB_OK) {
		for (int i = 0; i < s.sql.n; i++) {
			if (strcmp(s.type.v[i], "table") ||
			    (pattern && !like(pattern, s.name.v[i])))
				continue;
			dump_create(sh, s.sql.v[i]);
			rc |= dump_rows(sh, s.name.v[i]);
		}
		/* Indexes and views with the whole database only, as
		 * sqlite3 does. */
		for (int i = 0; i < s.sql.n && !pattern; i++) {
			if (!strcmp(s.type.v[i], "table"))
				continue;
			fprintf(sh->out, "%s;\n", s.sql.v[i]);
		}
	} else {
		char **t = shell_catalog_tables(sh, pattern);
		for (char **p = t; *p; p++) {
			char *c = rebuild_create(sh, *p);
			dump_create(sh, c);
			free(c);
			rc |= dump_rows(sh, *p);
		}
		shell_free_list(t);
	}
	schema_free(&s);
	fputs(rc ? "ROLLBACK; -- due to errors\n" : "COMMIT;\n", sh->out);
	return rc;
}

/* The first value of the first row of a query, or NULL. */
static int first_cb(void *arg, int ncol, char **vals, char **names)
{
	char **out = arg;
	(void)names;
	if (!*out && ncol > 0)
		*out = strdup(vals[0] ? vals[0] : "NULL");
	return 0;
}

static char *query_value(struct shell *sh, const char *sql)
{
	char *v = NULL;
	if (gpmdb_exec(sh->db, sql, first_cb, &v, NULL) != GPMDB_OK) {
		free(v);
		return NULL;
	}
	return v;
}

/* PRAGMA name [= value], then its value; for .backend and .durability. */
static int pragma_setting(struct shell *sh, const char *name, int argc,
			  char **argv, const char *const *allowed)
{
	char *sql, *err = NULL;
	if (argc > 2) {
		usage_error(sh, name);
		return 1;
	}
	if (argc == 2) {
		int ok = !allowed;
		for (int i = 0; allowed && allowed[i]; i++)
			ok |= !strcmp(argv[1], allowed[i]);
		if (!ok) {
			usage_error(sh, name);
			return 1;
		}
		if (asprintf(&sql, "PRAGMA %s = %s", name, argv[1]) < 0)
			return 1;
		int rc = gpmdb_exec(sh->db, sql, NULL, NULL, &err);
		free(sql);
		if (rc != GPMDB_OK) {
			shell_error(sh, "Error: %s",
				    err ? err : gpmdb_errstr(rc));
			gpmdb_free(err);
			return 1;
		}
	}
	if (asprintf(&sql, "PRAGMA %s", name) < 0)
		return 1;
	char *v = query_value(sh, sql);
	free(sql);
	fprintf(sh->out, "%s: %s\n", name, v ? v : "not available yet");
	free(v);
	return 0;
}

/* Engine statistics: each item from a PRAGMA; missing ones are named. */
static int dot_stats(struct shell *sh)
{
	static const struct {
		const char *label, *pragma;
	} items[] = {
	    {"backend", "backend"},
	    {"durability", "durability"},
	    {"memory limit (MiB)", "memory_limit"},
	    {"pool size", "pool_size"},
	    {"pool used", "pool_used"},
	    {"GPU", "gpu"},
	    {"GPU memory", "gpu_memory"},
	    {"HBM cache used", "hbm_cache"},
	    {"last statement rows", "last_rows"},
	    {"last statement bytes persisted", "last_bytes_persisted"},
	};
	FILE *out = sh->out;
	for (size_t i = 0; i < sizeof(items) / sizeof(items[0]); i++) {
		char sql[128];
		snprintf(sql, sizeof(sql), "PRAGMA %s", items[i].pragma);
		char *v = query_value(sh, sql);
		if (v)
			fprintf(out, "%-32s %s\n", items[i].label, v);
		else
			fprintf(out, "%-32s not available yet (PRAGMA %s)\n",
				items[i].label, items[i].pragma);
		free(v);
	}
	/* tables only: a view has no rows or bytes of its own */
	char **t = catalog_list(sh, NULL, 1);
	for (char **p = t; *p; p++) {
		char *q = shell_quote_ident(*p), *sql, *rows = NULL, *bytes;
		if (asprintf(&sql, "SELECT count(*) FROM %s", q) >= 0) {
			rows = query_value(sh, sql);
			free(sql);
		}
		if (asprintf(&sql, "PRAGMA table_bytes(%s)", q) >= 0) {
			bytes = query_value(sh, sql);
			free(sql);
		} else {
			bytes = NULL;
		}
		fprintf(out, "table %-26s rows %s, bytes %s\n", *p,
			rows ? rows : "?",
			bytes ? bytes
			      : "not available yet (PRAGMA table_bytes)");
		free(rows);
		free(bytes);
		free(q);
	}
	shell_free_list(t);
	struct ixrows ix;
	ixrows_load(sh, NULL, 1, &ix);
	for (int i = 0; i < ix.n; i++)
		fprintf(out, "index %-26s on %s, entries %s, bytes %s\n",
			ix.v[i].name, ix.v[i].table,
			ix.v[i].entries ? ix.v[i].entries : "?",
			ix.v[i].bytes ? ix.v[i].bytes : "?");
	ixrows_free(&ix);
	return 0;
}

static int dot_show(struct shell *sh)
{
	FILE *out = sh->out;
	static const char *const ex[] = {"off", "on", "auto"};
	fprintf(out, "%12s: %s\n", "echo", sh->echo ? "on" : "off");
	fprintf(out, "%12s: %s\n", "explain", ex[sh->explain]);
	fprintf(out, "%12s: %s\n", "headers", sh->headers ? "on" : "off");
	fprintf(out, "%12s: %s\n", "mode", shell_mode_name(sh->mode));
	fprintf(out, "%12s: ", "nullvalue");
	shell_output_c_string(out, sh->nullvalue);
	fprintf(out, "\n%12s: %s\n", "output",
		sh->out_name ? sh->out_name : "stdout");
	fprintf(out, "%12s: ", "colseparator");
	shell_output_c_string(out, sh->colsep);
	fprintf(out, "\n%12s: ", "rowseparator");
	shell_output_c_string(out, sh->rowsep);
	fprintf(out, "\n%12s: ", "width");
	for (int i = 0; i < sh->nwidths; i++)
		fprintf(out, "%d ", sh->widths[i]);
	fprintf(out, "\n%12s: %s\n", "bail", sh->bail ? "on" : "off");
	fprintf(out, "%12s: %s\n", "timer", sh->timer ? "on" : "off");
	fprintf(out, "%12s: %s\n", "changes", sh->show_changes ? "on" : "off");
	fprintf(out, "%12s: %s\n", "filename", sh->db_path);
	return 0;
}

static int dot_mode(struct shell *sh, int argc, char **argv)
{
	enum shell_mode m;
	if (argc == 1) {
		fprintf(sh->out, "current output mode: %s\n",
			shell_mode_name(sh->mode));
		return 0;
	}
	if (shell_mode_parse(argv[1], &m)) {
		shell_error(sh, "Error: mode should be one of: box column csv "
				"insert json line list markdown quote table "
				"tabs");
		return 1;
	}
	sh->mode = m;
	switch (m) {
	case SHELL_MODE_LIST:
		strcpy(sh->colsep, "|");
		strcpy(sh->rowsep, "\n");
		break;
	case SHELL_MODE_CSV:
		strcpy(sh->colsep, ",");
		strcpy(sh->rowsep, "\r\n");
		break;
	case SHELL_MODE_TABS:
		strcpy(sh->colsep, "\t"); /* the row separator stays */
		break;
	case SHELL_MODE_QUOTE:
		strcpy(sh->colsep, ",");
		strcpy(sh->rowsep, "\n");
		break;
	case SHELL_MODE_LINE:
		strcpy(sh->rowsep, "\n");
		break;
	case SHELL_MODE_COLUMN:
		/* Headers on unless the user has chosen. */
		if (!sh->headers_set)
			sh->headers = 1;
		break;
	case SHELL_MODE_INSERT:
		free(sh->insert_table);
		sh->insert_table = argc > 2 ? strdup(argv[2]) : NULL;
		break;
	default:
		break;
	}
	return 0;
}

static int dot_read(struct shell *sh, const char *name)
{
	FILE *f = fopen(name, "r");
	if (!f) {
		shell_error(sh, "Error: cannot open \"%s\"", name);
		return 1;
	}
	int saved = sh->interactive;
	sh->interactive = 0;
	int errors = shell_process_file(sh, f, name);
	sh->interactive = saved;
	fclose(f);
	return errors > 0;
}

static int dot_open(struct shell *sh, int argc, char **argv)
{
	const char *file = NULL;
	int fresh = 0, readonly = 0;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--new")) {
			fresh = 1;
		} else if (!strcmp(argv[i], "--readonly")) {
			readonly = 1;
		} else if (argv[i][0] == '-' || file) {
			usage_error(sh, "open");
			return 1;
		} else {
			file = argv[i];
		}
	}
	return shell_open(sh, file, readonly, fresh);
}

static int dot_help_cmd(struct shell *sh)
{
	for (size_t i = 0; i < sizeof(dot_help) / sizeof(dot_help[0]); i++)
		fprintf(sh->out, "%-40s %s\n", dot_help[i].usage,
			dot_help[i].text);
	return 0;
}

static int set_flag(struct shell *sh, int *flag, int argc, char **argv,
		    const char *name)
{
	if (argc != 2) {
		usage_error(sh, name);
		return 1;
	}
	*flag = boolean(sh, argv[1]);
	return 0;
}

/*
 * Runs one dot-command line.  Returns 0, or 1 after an error (reported).
 * .quit and .exit set sh->quit.
 */
int shell_dot_command(struct shell *sh, const char *line)
{
	char *copy = strdup(line + 1), *argv[MAX_ARGS + 1];
	int argc = split_args(copy, argv), rc = 0;
	argv[argc] = NULL;
	if (argc == 0) {
		free(copy);
		return 0;
	}
	const char *c = argv[0];
	if (!strcmp(c, "quit") || !strcmp(c, "q")) {
		sh->quit = 1;
	} else if (!strcmp(c, "exit")) {
		sh->quit = 1;
		if (argc > 1) {
			fflush(sh->out);
			shell_close_db(sh);
			exit(atoi(argv[1]));
		}
	} else if (!strcmp(c, "help")) {
		rc = dot_help_cmd(sh);
	} else if (!strcmp(c, "tables") && argc <= 2) {
		char **t = shell_catalog_tables(sh, argc > 1 ? argv[1] : NULL);
		print_columns(sh, t);
		shell_free_list(t);
	} else if (!strcmp(c, "schema") && argc <= 2) {
		rc = dot_schema(sh, argc > 1 ? argv[1] : NULL);
	} else if (!strcmp(c, "indexes") || !strcmp(c, "indices")) {
		rc = dot_indexes(sh, argc, argv);
	} else if (!strcmp(c, "backup") || !strcmp(c, "save")) {
		rc = dot_backup(sh, argc, argv);
	} else if (!strcmp(c, "mode") && argc <= 3) {
		rc = dot_mode(sh, argc, argv);
	} else if (!strcmp(c, "headers") || !strcmp(c, "header")) {
		rc = set_flag(sh, &sh->headers, argc, argv, "headers");
		sh->headers_set = 1;
	} else if (!strcmp(c, "nullvalue") && argc == 2) {
		unescape(sh->nullvalue, sizeof(sh->nullvalue), argv[1]);
	} else if (!strcmp(c, "separator") && (argc == 2 || argc == 3)) {
		unescape(sh->colsep, sizeof(sh->colsep), argv[1]);
		if (argc == 3)
			unescape(sh->rowsep, sizeof(sh->rowsep), argv[2]);
	} else if (!strcmp(c, "width")) {
		sh->nwidths = 0;
		for (int i = 1; i < argc && i <= SHELL_MAX_WIDTHS; i++)
			sh->widths[sh->nwidths++] = atoi(argv[i]);
	} else if (!strcmp(c, "output") && argc <= 2) {
		shell_set_output(sh, argc > 1 ? argv[1] : NULL, 0);
	} else if (!strcmp(c, "once") && argc == 2) {
		shell_set_output(sh, argv[1], 1);
	} else if (!strcmp(c, "read") && argc == 2) {
		rc = dot_read(sh, argv[1]);
	} else if (!strcmp(c, "import")) {
		rc = shell_import(sh, argc, argv);
	} else if (!strcmp(c, "dump") && argc <= 2) {
		rc = dot_dump(sh, argc > 1 ? argv[1] : NULL);
	} else if (!strcmp(c, "timeout") && argc == 2) {
		char *end = NULL;
		long ms = strtol(argv[1], &end, 10);
		if (!end || end == argv[1] || *end || ms < 0 ||
		    ms > 2147483647L) {
			shell_error(sh,
				    "Error: .timeout takes milliseconds, "
				    "not \"%s\"",
				    argv[1]);
			rc = 1;
		} else {
			sh->busy_ms = (int)ms;
			if (sh->db)
				gpmdb_busy_timeout(sh->db, sh->busy_ms);
		}
	} else if (!strcmp(c, "timer")) {
		rc = set_flag(sh, &sh->timer, argc, argv, "timer");
	} else if (!strcmp(c, "changes")) {
		rc = set_flag(sh, &sh->show_changes, argc, argv, "changes");
	} else if (!strcmp(c, "bail")) {
		rc = set_flag(sh, &sh->bail, argc, argv, "bail");
	} else if (!strcmp(c, "echo")) {
		rc = set_flag(sh, &sh->echo, argc, argv, "echo");
	} else if (!strcmp(c, "explain") && argc <= 2) {
		if (argc == 1 || !strcmp(argv[1], "auto"))
			sh->explain = argc == 1 ? 1 : 2;
		else
			sh->explain = boolean(sh, argv[1]);
	} else if (!strcmp(c, "show") && argc == 1) {
		rc = dot_show(sh);
	} else if (!strcmp(c, "stats") && argc == 1) {
		rc = dot_stats(sh);
	} else if (!strcmp(c, "backend")) {
		static const char *const ok[] = {"auto", "cpu", "gpu", NULL};
		rc = pragma_setting(sh, "backend", argc, argv, ok);
	} else if (!strcmp(c, "durability")) {
		static const char *const ok[] = {"auto", "pmem", "msync", "off",
						 NULL};
		rc = pragma_setting(sh, "durability", argc, argv, ok);
	} else if (!strcmp(c, "open")) {
		rc = dot_open(sh, argc, argv);
	} else {
		shell_error(sh,
			    "Error: unknown command or invalid arguments:  "
			    "\"%s\". Enter \".help\" for help",
			    c);
		rc = 1;
	}
	fflush(sh->out);
	free(copy);
	return rc;
}
