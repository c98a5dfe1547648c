/*
 * test_diff_sqlite.c - differential test of gpmdb against SQLite.
 *
 * Random tables (INTEGER, REAL/DOUBLE and TEXT columns with NULLs,
 * duplicates, negative numbers, 0 to 250 rows, now and then 2500 or 20000
 * to cross vector batches and the parallel threshold) are loaded into
 * gpmdb (a temporary pool under /dev/shm or $TMPDIR) and into an in-memory
 * SQLite; random queries run on both and the results must agree.  Each
 * round makes a new schema (t0, t1, t2) and runs DIFF_PER_ROUND statements:
 * SELECTs (projections, WHERE, joins, GROUP BY + HAVING, DISTINCT, ORDER BY
 * + LIMIT, subqueries, compounds) and writes (UPDATE, DELETE, INSERT ...
 * SELECT / VALUES) after which the written table is compared whole.
 * Most tables get one or two indexes (CREATE INDEX on one or two random
 * columns, after the load, so the build and the writes' maintenance are
 * exercised) and a share of the queries is shaped for them (diff_q_index:
 * equalities, IN, IS NULL, ranges, ORDER BY the key with LIMIT).
 *
 * Determinism: everything comes from one seed (DIFF_SEED, default fixed);
 * DIFF_N is the number of statements.  Each round has its own seed, so
 * DIFF_ROUND=r reruns round r alone.  A disagreement prints the seed, the
 * round, the schema, the writes made so far in the round, the statement and
 * both results; DIFF_DUMP=1 also prints the rows loaded, DIFF_TRACE=file
 * writes every statement run, DIFF_SHOW=n prints n disagreements in full.
 *
 * Comparison, as the sqllogictest runner does it: rows are sorted unless the
 * ORDER BY covers every output column (then they are compared in order);
 * integers exactly, reals to 1e-9 relative (summation order differs),
 * text bytewise, NULL as NULL.  An INTEGER on one side against a REAL on
 * the other is a disagreement (but see the SQLite quirks below).
 *
 * The generator stays inside the semantics both engines share.  The
 * deliberate differences of docs/engine.md "Types" it steers around:
 *  - integer overflow is an error in gpmdb (SQLite goes to REAL): data are
 *    within +-1000, literals within +-20, expressions at most 3 deep, and
 *    written integers are reduced % 1000, so no int64 ever overflows;
 *  - CASE/COALESCE/IFNULL/NULLIF, multi-argument min/max and compound
 *    columns of INT and REAL take the common type (REAL) in gpmdb but keep
 *    each row's type in SQLite: every such expression is built with
 *    branches of one type;
 *  - comparisons mixing numbers and text follow affinity rules gpmdb can
 *    only approximate statically: comparisons, BETWEEN and IN only mix
 *    INTEGER with REAL, never a number with TEXT;
 *  - values stored into columns: an INTEGER column gets only integer
 *    expressions (SQLite would store 2.5 in it, gpmdb refuses), a TEXT
 *    column only text;
 *  - `x % y` with a REAL operand (SQLite converts to integers) is not made.
 *  - sums: gpmdb adds in long double, SQLite in double, so sums of
 *    inexact reals differ in the last bits (harmless to the 1e-9 compare,
 *    but enough to reorder ties under ORDER BY ... LIMIT or flip
 *    avg(x) > 13.2): reals are multiples of 1/4 and aggregate arguments
 *    divide no REALs, so every sum is exact.
 * And SQLite behaviours that are not determined by the SQL at all: bare
 * columns in aggregate queries, LIMIT without an ORDER BY fixing every
 * output column, scalar subqueries returning several rows, group_concat
 * order; and the documented limitations of docs/engine.md (correlated
 * subqueries only outside aggregate queries' select list and HAVING;
 * aggregates in a subquery take its own columns).
 * SQLite quirks found on the way, steered around too: its UPDATE lets a
 * subquery on the table being written see rows already changed (subqueries
 * of writes read other tables); 3.40 rejects HAVING without an aggregate
 * in the select list; a REAL column's 0.0 can come back as INTEGER 0 after
 * its sorter (diff_val_same accepts an equal REAL).
 */
#include "harness.h"

#include "gpmdb.h"

#include <math.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#include "diff_gen.h"

/* ---- results ---- */

struct diff_val {
	int type; /* GPMDB_INTEGER, _FLOAT, _TEXT, _NULL */
	long long i;
	double r;
	char *s;
};

struct diff_res {
	int err; /* 1: the statement failed; msg says why */
	char msg[512];
	int ncol;
	long nrow;
	struct diff_val *v; /* nrow * ncol */
	long long changes;
};

static void diff_res_free(struct diff_res *r)
{
	long i;

	for (i = 0; i < r->nrow * r->ncol; i++)
		free(r->v[i].s);
	free(r->v);
	memset(r, 0, sizeof(*r));
}

static struct diff_val *diff_res_row(struct diff_res *r)
{
	if ((r->nrow & (r->nrow - 1)) == 0) {
		size_t cap = r->nrow ? (size_t)r->nrow * 2 : 1;

		r->v = realloc(r->v, cap * (size_t)(r->ncol ? r->ncol : 1) *
					 sizeof(*r->v));
		if (!r->v)
			abort();
	}
	return &r->v[r->nrow++ * r->ncol];
}

/* DIFF_TRACE=file: every statement run, as a script for either engine. */
static FILE *diff_trace;
/* Seconds spent in each engine; the slowest statement of each. */
static double diff_secs[2], diff_worst[2];
static char diff_worst_sql[2][200];

static double diff_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void diff_timed(int e, const char *sql, double t0)
{
	double d = diff_now() - t0;

	diff_secs[e] += d;
	if (d > diff_worst[e]) {
		diff_worst[e] = d;
		snprintf(diff_worst_sql[e], sizeof(diff_worst_sql[e]), "%s",
			 sql);
	}
}

static void diff_run_gpmdb(gpmdb *db, const char *sql, struct diff_res *r)
{
	gpmdb_stmt *st = NULL;
	int rc, i;

	if (diff_trace)
		fprintf(diff_trace, "%s;\n", sql);

	memset(r, 0, sizeof(*r));
	rc = gpmdb_prepare(db, sql, -1, &st, NULL);
	if (rc != GPMDB_OK || !st) {
		r->err = 1;
		snprintf(r->msg, sizeof(r->msg), "%s", gpmdb_errmsg(db));
		gpmdb_finalize(st);
		return;
	}
	r->ncol = gpmdb_column_count(st);
	while ((rc = gpmdb_step(st)) == GPMDB_ROW) {
		struct diff_val *row = diff_res_row(r);

		for (i = 0; i < r->ncol; i++) {
			struct diff_val *v = &row[i];

			memset(v, 0, sizeof(*v));
			v->type = gpmdb_column_type(st, i);
			if (v->type == GPMDB_INTEGER)
				v->i = gpmdb_column_int64(st, i);
			else if (v->type == GPMDB_FLOAT)
				v->r = gpmdb_column_double(st, i);
			else if (v->type == GPMDB_TEXT)
				v->s = strdup(
				    (const char *)gpmdb_column_text(st, i));
		}
	}
	if (rc != GPMDB_DONE) {
		r->err = 1;
		snprintf(r->msg, sizeof(r->msg), "%s", gpmdb_errmsg(db));
	}
	gpmdb_finalize(st);
	r->changes = gpmdb_changes(db);
}

static void diff_run_sqlite(sqlite3 *db, const char *sql, struct diff_res *r)
{
	sqlite3_stmt *st = NULL;
	int rc, i;

	memset(r, 0, sizeof(*r));
	rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
	if (rc != SQLITE_OK || !st) {
		r->err = 1;
		snprintf(r->msg, sizeof(r->msg), "%s", sqlite3_errmsg(db));
		sqlite3_finalize(st);
		return;
	}
	r->ncol = sqlite3_column_count(st);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct diff_val *row = diff_res_row(r);

		for (i = 0; i < r->ncol; i++) {
			struct diff_val *v = &row[i];

			memset(v, 0, sizeof(*v));
			switch (sqlite3_column_type(st, i)) {
			case SQLITE_INTEGER:
				v->type = GPMDB_INTEGER;
				v->i = sqlite3_column_int64(st, i);
				break;
			case SQLITE_FLOAT:
				v->type = GPMDB_FLOAT;
				v->r = sqlite3_column_double(st, i);
				break;
			case SQLITE_NULL:
				v->type = GPMDB_NULL;
				break;
			default:
				v->type = GPMDB_TEXT;
				v->s = strdup(
				    (const char *)sqlite3_column_text(st, i));
				break;
			}
		}
	}
	if (rc != SQLITE_DONE) {
		r->err = 1;
		snprintf(r->msg, sizeof(r->msg), "%s", sqlite3_errmsg(db));
	}
	sqlite3_finalize(st);
	r->changes = sqlite3_changes(db);
}

/* Order of values for sorting: NULL, numbers (by value), text (bytes). */
static int diff_val_cmp(const struct diff_val *a, const struct diff_val *b)
{
	int ca = a->type == GPMDB_NULL ? 0 : a->type == GPMDB_TEXT ? 2 : 1;
	int cb = b->type == GPMDB_NULL ? 0 : b->type == GPMDB_TEXT ? 2 : 1;

	if (ca != cb)
		return ca - cb;
	if (ca == 1) {
		double x = a->type == GPMDB_INTEGER ? (double)a->i : a->r;
		double y = b->type == GPMDB_INTEGER ? (double)b->i : b->r;

		return x < y ? -1 : x > y;
	}
	if (ca == 2)
		return strcmp(a->s, b->s);
	return 0;
}

static int diff_sort_ncol;

static int diff_row_cmp(const void *pa, const void *pb)
{
	const struct diff_val *a = pa, *b = pb;
	int i, c;

	for (i = 0; i < diff_sort_ncol; i++)
		if ((c = diff_val_cmp(&a[i], &b[i])) != 0)
			return c;
	return 0;
}

/* Rows as blocks of ncol values, sorted in place. */
static void diff_rowsort(struct diff_res *r)
{
	if (r->nrow < 2 || r->ncol == 0)
		return;
	diff_sort_ncol = r->ncol;
	/* qsort moves whole rows: an element is ncol values. */
	qsort(r->v, (size_t)r->nrow, sizeof(*r->v) * (size_t)r->ncol,
	      diff_row_cmp);
}

/* a from gpmdb, b from SQLite. */
static int diff_val_same(const struct diff_val *a, const struct diff_val *b)
{
	/* SQLite keeps integral reals as integers in records, and some plans
	 * (a GROUP BY then ORDER BY through its sorter) return a REAL
	 * column's 0.0 as INTEGER 0: an equal REAL from gpmdb agrees. */
	if (a->type == GPMDB_FLOAT && b->type == GPMDB_INTEGER)
		return a->r == (double)b->i;
	if (a->type != b->type)
		return 0;
	switch (a->type) {
	case GPMDB_INTEGER:
		return a->i == b->i;
	case GPMDB_FLOAT: {
		double m = fmax(1.0, fmax(fabs(a->r), fabs(b->r)));

		return fabs(a->r - b->r) <= 1e-9 * m;
	}
	case GPMDB_TEXT:
		return !strcmp(a->s, b->s);
	default:
		return 1;
	}
}

static void diff_print_val(FILE *f, const struct diff_val *v)
{
	switch (v->type) {
	case GPMDB_INTEGER:
		fprintf(f, "%lld", v->i);
		break;
	case GPMDB_FLOAT:
		fprintf(f, "%.15gR", v->r);
		break;
	case GPMDB_TEXT:
		fprintf(f, "'%s'", v->s);
		break;
	default:
		fprintf(f, "NULL");
		break;
	}
}

static void diff_print_res(FILE *f, const char *who, const struct diff_res *r)
{
	long i, shown = r->nrow < 40 ? r->nrow : 40;
	int j;

	if (r->err) {
		fprintf(f, "  %s: error: %s\n", who, r->msg);
		return;
	}
	fprintf(f, "  %s: %ld rows, %d columns, changes %lld\n", who, r->nrow,
		r->ncol, r->changes);
	for (i = 0; i < shown; i++) {
		fprintf(f, "    ");
		for (j = 0; j < r->ncol; j++) {
			fprintf(f, j ? " | " : "");
			diff_print_val(f, &r->v[i * r->ncol + j]);
		}
		fprintf(f, "\n");
	}
	if (shown < r->nrow)
		fprintf(f, "    ... %ld more\n", r->nrow - shown);
}

/* ---- the test ---- */

static gpmdb *diff_gdb;
static sqlite3 *diff_sdb;
static unsigned long long diff_seed;
static int diff_round;
static struct diff_buf diff_schema, diff_writes, diff_loads;
static long diff_agreed, diff_disagreed;
static long diff_nonempty; /* agreeing queries that returned rows */
static int diff_shown;	   /* disagreements printed in full */
/* After a write disagreed the tables differ: the round's other statements
 * would only repeat it, so the round ends there (counted once). */
static int diff_diverged;

/* Rows of the two results equal (after sorting unless ordered)? */
static int diff_same(struct diff_res *a, struct diff_res *b, int ordered)
{
	long i;

	if (a->err || b->err)
		return 0;
	if (a->ncol != b->ncol || a->nrow != b->nrow)
		return 0;
	if (!ordered) {
		diff_rowsort(a);
		diff_rowsort(b);
	}
	for (i = 0; i < a->nrow * a->ncol; i++)
		if (!diff_val_same(&a->v[i], &b->v[i]))
			return 0;
	return 1;
}

static void diff_report(const char *sql, const char *what,
			const struct diff_res *g, const struct diff_res *s)
{
	diff_disagreed++;
	/* The first few in full (DIFF_SHOW=n: n); the count says the rest. */
	if (++diff_shown >
	    (getenv("DIFF_SHOW") ? atoi(getenv("DIFF_SHOW")) : 5))
		return;
	fprintf(stderr,
		"\n==== DISAGREEMENT (%s): DIFF_SEED=%llu round %d "
		"(DIFF_SEED=%llu DIFF_ROUND=%d DIFF_N=%d reruns it)\n",
		what, diff_seed, diff_round, diff_seed, diff_round,
		(diff_round + 1) * DIFF_PER_ROUND);
	fprintf(stderr, "schema:\n%s", diff_schema.p);
	if (getenv("DIFF_DUMP"))
		fprintf(stderr, "data:\n%s", diff_loads.p);
	if (diff_writes.n)
		fprintf(stderr, "writes before it in this round:\n%s",
			diff_writes.p);
	fprintf(stderr, "statement:\n  %s;\n", sql);
	diff_print_res(stderr, "gpmdb", g);
	diff_print_res(stderr, "sqlite", s);
}

/* Runs sql on both; compares rows (ordered: in order). */
static void diff_query(const char *sql, int ordered)
{
	struct diff_res g, s;

	double t0 = diff_now();

	diff_run_gpmdb(diff_gdb, sql, &g);
	diff_timed(0, sql, t0);
	t0 = diff_now();
	diff_run_sqlite(diff_sdb, sql, &s);
	diff_timed(1, sql, t0);
	if (diff_same(&g, &s, ordered)) {
		diff_agreed++;
		diff_nonempty += g.nrow > 0;
	} else
		diff_report(sql, "results", &g, &s);
	diff_res_free(&g);
	diff_res_free(&s);
}

/* Runs a write on both, then compares the changes and the table. */
static void diff_write(const char *sql, int t)
{
	struct diff_res g, s;
	char q[64];

	double t0 = diff_now();

	diff_run_gpmdb(diff_gdb, sql, &g);
	diff_timed(0, sql, t0);
	t0 = diff_now();
	diff_run_sqlite(diff_sdb, sql, &s);
	diff_timed(1, sql, t0);
	if (g.err || s.err || g.changes != s.changes) {
		diff_report(sql, "write", &g, &s);
		diff_diverged = 1;
		diff_res_free(&g);
		diff_res_free(&s);
		diff_add(&diff_writes, "  %s;\n", sql);
		return;
	}
	diff_res_free(&g);
	diff_res_free(&s);
	diff_add(&diff_writes, "  %s;\n", sql);
	snprintf(q, sizeof(q), "SELECT * FROM %s", diff_tabs[t].name);
	diff_run_gpmdb(diff_gdb, q, &g);
	diff_run_sqlite(diff_sdb, q, &s);
	if (diff_same(&g, &s, 0))
		diff_agreed++;
	else {
		diff_report(q, "table after the write", &g, &s);
		diff_diverged = 1;
	}
	diff_tabs[t].nrows = (int)s.nrow;
	diff_res_free(&g);
	diff_res_free(&s);
}

/* A statement both must accept (schema, loading). */
static int diff_setup(const char *sql)
{
	char *gerr = NULL, *serr = NULL;
	int ok = 1;

	if (diff_trace)
		fprintf(diff_trace, "%s;\n", sql);
	if (gpmdb_exec(diff_gdb, sql, NULL, NULL, &gerr) != GPMDB_OK ||
	    sqlite3_exec(diff_sdb, sql, NULL, NULL, &serr) != SQLITE_OK) {
		fprintf(stderr,
			"setup failed (DIFF_SEED=%llu round %d): %s\n"
			"  gpmdb: %s\n  sqlite: %s\n",
			diff_seed, diff_round, sql, gerr ? gerr : "ok",
			serr ? serr : "ok");
		ok = 0;
	}
	gpmdb_free(gerr);
	sqlite3_free(serr);
	return ok;
}

/* A new schema of three tables and their rows. */
static int diff_make_tables(void)
{
	static const int sizes[] = {0, 1, 2, 4, 10, 30, 60, 100, 250};
	struct diff_buf b = {0};
	int t, i, r, k, ok = 1;

	diff_clear(&diff_schema);
	diff_clear(&diff_loads);
	for (t = 0; t < DIFF_NTAB && ok; t++) {
		struct diff_tab *tab = &diff_tabs[t];
		int nullpct = diff_pct(30) ? 0 : diff_range(5, 30);

		snprintf(tab->name, sizeof(tab->name), "t%d", t);
		tab->ncol = diff_range(2, DIFF_MAXCOL);
		diff_clear(&b);
		diff_add(&b, "DROP TABLE IF EXISTS %s", tab->name);
		ok = diff_setup(b.p);
		diff_clear(&b);
		diff_add(&b, "CREATE TABLE %s(", tab->name);
		for (i = 0; i < tab->ncol; i++) {
			/* One column of each type in most tables. */
			tab->col[i].type =
			    i < 3 && diff_pct(80) ? i : diff_rand(3);
			snprintf(tab->col[i].name, sizeof(tab->col[i].name),
				 "%c%d", "irs"[tab->col[i].type], i);
			diff_add(&b, "%s%s %s", i ? ", " : "", tab->col[i].name,
				 diff_typename(tab->col[i].type));
		}
		diff_add(&b, ")");
		ok = ok && diff_setup(b.p);
		diff_add(&diff_schema, "  %s;\n", b.p);
		/* Now and then more rows than a vector batch (2048) or than
		 * the operators' parallel threshold (8 batches). */
		k = diff_rand(100);
		tab->nrows =
		    k < 3 ? 20000
		    : k < 10
			? 2500
			: sizes[diff_rand(sizeof(sizes) / sizeof(sizes[0]))];
		if (!tab->nrows || !ok)
			continue;
		diff_clear(&b);
		diff_add(&b, "INSERT INTO %s VALUES ", tab->name);
		for (r = 0; r < tab->nrows; r++) {
			diff_add(&b, "%s(", r ? ", " : "");
			for (i = 0; i < tab->ncol; i++) {
				diff_add(&b, i ? ", " : "");
				diff_add_value(&b, tab->col[i].type, nullpct);
			}
			diff_add(&b, ")");
		}
		ok = diff_setup(b.p);
		diff_add(&diff_loads, "  %s;\n", b.p);
	}
	/* indexes (on loaded tables: the index build; later writes keep
	 * them), one or two columns each, for diff_q_index */
	for (t = 0; t < DIFF_NTAB && ok; t++) {
		struct diff_tab *tab = &diff_tabs[t];
		tab->nix = diff_pct(60) ? diff_range(1, 2) : 0;
		for (k = 0; k < tab->nix && ok; k++) {
			tab->nixc[k] = tab->ncol > 1 && diff_pct(40) ? 2 : 1;
			tab->ixc[k][0] = diff_rand(tab->ncol);
			tab->ixc[k][1] =
			    (tab->ixc[k][0] + 1 + diff_rand(tab->ncol - 1)) %
			    tab->ncol;
			diff_clear(&b);
			diff_add(&b, "CREATE INDEX %s_ix%d ON %s(%s", tab->name,
				 k, tab->name, tab->col[tab->ixc[k][0]].name);
			if (tab->nixc[k] == 2)
				diff_add(&b, ", %s",
					 tab->col[tab->ixc[k][1]].name);
			diff_add(&b, ")");
			ok = diff_setup(b.p);
			diff_add(&diff_schema, "  %s;\n", b.p);
		}
	}
	free(b.p);
	return ok;
}

/* Adds table t under alias a to the scope. */
static void diff_scope_add(struct diff_scope *s, int t, const char *a)
{
	int i;

	for (i = 0; i < diff_tabs[t].ncol; i++) {
		struct diff_ref *r = &s->ref[s->n++];

		snprintf(r->alias, sizeof(r->alias), "%s", a);
		memcpy(r->name, diff_tabs[t].col[i].name, sizeof(r->name));
		r->type = diff_tabs[t].col[i].type;
	}
}

/* An equality between a column of the newest table (from index first)
 * and an earlier one, of one class; 0 if none. */
static int diff_join_eq(struct diff_buf *b, const struct diff_scope *s,
			int first)
{
	int tries;

	for (tries = 0; tries < 20; tries++) {
		const struct diff_ref *x =
		    &s->ref[first + diff_rand(s->n - first)];
		const struct diff_ref *y = &s->ref[diff_rand(first)];

		if ((x->type == DT_TEXT) == (y->type == DT_TEXT)) {
			diff_add(b, "%s.%s = %s.%s", x->alias, x->name,
				 y->alias, y->name);
			return 1;
		}
	}
	return 0;
}

/* One FROM item over table t under alias al: the table, or now and then
 * a derived table of the same columns (filtered, maybe DISTINCT). */
static void diff_from_item(struct diff_gen *g, struct diff_buf *b, int t,
			   const char *al)
{
	const struct diff_tab *tab = &diff_tabs[t];
	struct diff_scope in;
	const struct diff_scope *old = g->scope;
	char q[8];
	int i;

	if (diff_pct(85)) {
		diff_add(b, "%s AS %s", tab->name, al);
		return;
	}
	snprintf(q, sizeof(q), "q%s", al);
	memset(&in, 0, sizeof(in));
	diff_scope_add(&in, t, q);
	in.rows = tab->nrows;
	diff_add(b, "(SELECT %s", diff_pct(30) ? "DISTINCT " : "");
	for (i = 0; i < tab->ncol; i++)
		diff_add(b, "%s%s.%s", i ? ", " : "", q, tab->col[i].name);
	diff_add(b, " FROM %s AS %s", tab->name, q);
	if (diff_pct(70)) {
		diff_add(b, " WHERE ");
		g->scope = &in;
		g->nosubq++;
		diff_bool(g, b, 1);
		g->nosubq--;
		g->scope = old;
	}
	diff_add(b, ") AS %s", al);
}

/* FROM of 1 to 3 tables (joins kept to about 30000 combined rows). */
static void diff_from(struct diff_gen *g, struct diff_buf *b,
		      struct diff_scope *s, int maxtabs)
{
	int n = diff_pct(50) ? 1 : diff_pct(70) ? 2 : 3, i;
	static const char *al[] = {"a", "b", "c"};

	if (n > maxtabs)
		n = maxtabs;
	memset(s, 0, sizeof(*s));
	s->rows = 1;
	diff_add(b, " FROM ");
	for (i = 0; i < n; i++) {
		int t = diff_rand(DIFF_NTAB), first = s->n;
		long rows = diff_tabs[t].nrows ? diff_tabs[t].nrows : 1;
		int kind;

		if (i && s->rows * rows > 30000)
			break;
		s->rows *= rows;
		if (i == 0) {
			diff_from_item(g, b, t, al[i]);
			diff_scope_add(s, t, al[i]);
			continue;
		}
		kind = diff_rand(5);
		diff_add(b, "%s",
			 kind == 0   ? ", "
			 : kind == 1 ? " CROSS JOIN "
			 : kind == 2 ? " LEFT JOIN "
			 : kind == 3 ? " INNER JOIN "
				     : " JOIN ");
		diff_from_item(g, b, t, al[i]);
		diff_scope_add(s, t, al[i]);
		switch (kind) {
		case 0:
		case 1:
			break;
		default:
			diff_add(b, " ON ");
			if (!diff_join_eq(b, s, first) || diff_pct(25)) {
				if (b->p[b->n - 1] != ' ')
					diff_add(b, " AND ");
				g->scope = s;
				diff_bool(g, b, 1);
			}
			break;
		}
	}
}

/* ORDER BY every output column (ordinals, mixed directions), so that the
 * order and any LIMIT are fully determined. */
static void diff_order_all(struct diff_buf *b, int ncol)
{
	int i, start = diff_rand(ncol);

	diff_add(b, " ORDER BY ");
	for (i = 0; i < ncol; i++) {
		diff_add(b, "%s%d", i ? ", " : "", (start + i) % ncol + 1);
		if (diff_pct(40))
			diff_add(b, " DESC");
		if (diff_pct(15))
			diff_add(b,
				 diff_pct(50) ? " NULLS FIRST" : " NULLS LAST");
	}
	if (diff_pct(50)) {
		diff_add(b, " LIMIT %d", diff_range(0, 12));
		if (diff_pct(40))
			diff_add(b, " OFFSET %d", diff_range(0, 6));
	}
}

/* SELECT [DISTINCT] exprs FROM ... [WHERE] [ORDER BY ... LIMIT]. */
static void diff_q_select(struct diff_gen *g, struct diff_buf *b)
{
	struct diff_scope s;
	struct diff_buf from = {0};
	int n = diff_range(1, 4), i, ordered = 0;

	diff_from(g, &from, &s, 3);
	g->scope = &s;
	diff_add(b, "SELECT %s", diff_pct(20) ? "DISTINCT " : "");
	for (i = 0; i < n; i++) {
		diff_add(b, i ? ", " : "");
		diff_expr(g, b, diff_rand(4), diff_range(0, 3));
	}
	diff_add(b, "%s", from.p);
	if (diff_pct(70)) {
		diff_add(b, " WHERE ");
		diff_bool(g, b, 2);
	}
	if (diff_pct(35)) {
		diff_order_all(b, n);
		ordered = 1;
	}
	free(from.p);
	diff_query(b->p, ordered);
}

/* A GROUP BY key of type t over a column of the scope; its type (the
 * scope always has some column, the first one's type serves). */
static int diff_key(struct diff_gen *g, struct diff_buf *k, int t)
{
	size_t mark;

	if (t == DT_BOOL) {
		int c = diff_rand(3);

		if (!diff_colref(g, k, c)) {
			c = g->scope->ref[0].type;
			diff_colref(g, k, c);
		}
		mark = k->n;
		if (c == DT_TEXT && diff_pct(50))
			diff_add(k, " LIKE 'a%%'");
		else if (c != DT_TEXT && diff_pct(50))
			diff_add(k, " > 0");
		else
			diff_add(k, diff_pct(50) ? " IS NULL" : " IS NOT NULL");
		(void)mark;
		return DT_BOOL;
	}
	if (!diff_colref(g, k, t)) {
		t = g->scope->ref[0].type;
		diff_colref(g, k, t);
	}
	if (diff_pct(70))
		return t;
	mark = k->n;
	{
		char col[64];

		snprintf(col, sizeof(col), "%s", k->p);
		diff_trunc(k, 0);
		(void)mark;
		switch (t) {
		case DT_INT:
			diff_add(k, diff_pct(50) ? "(%s %% 3)" : "abs(%s)",
				 col);
			break;
		case DT_REAL:
			diff_add(k, diff_pct(50) ? "(%s * 2)" : "-(%s)", col);
			break;
		default:
			diff_add(
			    k, diff_pct(50) ? "upper(%s)" : "substr(%s, 1, 1)",
			    col);
			break;
		}
	}
	return t;
}

/* SELECT keys, aggregates FROM ... [WHERE] [GROUP BY ... [HAVING]]. */
static void diff_q_aggregate(struct diff_gen *g, struct diff_buf *b)
{
	struct diff_scope s;
	struct diff_buf from = {0}, where = {0};
	int grouped = diff_pct(75), n, i, ordered = 0;

	diff_from(g, &from, &s, 3);
	g->scope = &s;
	if (diff_pct(60)) {
		diff_add(&where, " WHERE ");
		diff_bool(g, &where, 2);
	}
	g->nkey = grouped ? diff_range(1, 2) : 0;
	g->nosubq++;
	for (i = 0; i < g->nkey; i++) {
		struct diff_buf k = {0};
		int t = diff_rand(4);

		/* A column, or an expression of one, never a constant (an
		 * integer constant would be an ordinal). */
		g->key[i].type = diff_key(g, &k, t);
		snprintf(g->key[i].text, sizeof(g->key[i].text), "%s", k.p);
		free(k.p);
	}
	g->agg = 1;
	n = g->nkey + diff_range(1, 3);
	diff_add(b, "SELECT ");
	for (i = 0; i < n; i++) {
		diff_add(b, i ? ", " : "");
		if (i < g->nkey && diff_pct(80))
			diff_add(b, "%s", g->key[i].text);
		else
			diff_expr(g, b, diff_rand(4), diff_range(0, 2));
	}
	diff_add(b, "%s%s", from.p, where.p ? where.p : "");
	if (grouped) {
		diff_add(b, " GROUP BY ");
		for (i = 0; i < g->nkey; i++)
			diff_add(b, "%s%s", i ? ", " : "", g->key[i].text);
		if (diff_pct(40)) {
			diff_add(b, " HAVING ");
			diff_bool(g, b, 1);
		}
	} else if (g->naggs && diff_pct(15)) {
		/* HAVING over the one group of the whole input; SQLite 3.40
		 * wants an aggregate in the select list for it. */
		diff_add(b, " HAVING ");
		diff_bool(g, b, 1);
	}
	if (diff_pct(30)) {
		diff_order_all(b, n);
		ordered = 1;
	}
	g->agg = 0;
	g->nkey = 0;
	g->nosubq--;
	free(from.p);
	free(where.p);
	diff_query(b->p, ordered);
}

/* s1 UNION/UNION ALL/INTERSECT/EXCEPT s2 [...], columns of one type. */
static void diff_q_compound(struct diff_gen *g, struct diff_buf *b)
{
	static const char *ops[] = {" UNION ", " UNION ALL ", " INTERSECT ",
				    " EXCEPT "};
	int types[3], n = diff_range(1, 3), arms = diff_pct(75) ? 2 : 3;
	int a, i, ordered = 0;

	for (i = 0; i < n; i++)
		types[i] = diff_rand(3);
	for (a = 0; a < arms; a++) {
		struct diff_scope s;
		struct diff_buf from = {0};

		if (a)
			diff_add(b, "%s", ops[diff_rand(4)]);
		diff_from(g, &from, &s, 2);
		g->scope = &s;
		diff_add(b, "SELECT ");
		for (i = 0; i < n; i++) {
			diff_add(b, i ? ", " : "");
			diff_expr(g, b, types[i], diff_range(0, 2));
		}
		diff_add(b, "%s", from.p);
		if (diff_pct(60)) {
			diff_add(b, " WHERE ");
			diff_bool(g, b, 1);
		}
		free(from.p);
	}
	if (diff_pct(30)) {
		diff_order_all(b, n);
		ordered = 1;
	}
	diff_query(b->p, ordered);
}

/* UPDATE, DELETE or INSERT on one table, then the table is compared. */
static void diff_q_write(struct diff_gen *g, struct diff_buf *b)
{
	int t = diff_rand(DIFF_NTAB), i, k = diff_rand(10);
	const struct diff_tab *tab = &diff_tabs[t];
	struct diff_scope s;

	/* Written rows grow: past the cap, only delete. */
	if (tab->nrows > DIFF_MAXROWS)
		k = 0;
	memset(&s, 0, sizeof(s));
	diff_scope_add(&s, t, tab->name);
	s.rows = tab->nrows ? tab->nrows : 1;
	g->scope = &s;
	g->avoid = t + 1;
	if (k < 2) {
		diff_add(b, "DELETE FROM %s", tab->name);
		if (diff_pct(90)) {
			diff_add(b, " WHERE ");
			diff_bool(g, b, 2);
		}
	} else if (k < 6) {
		int c = diff_rand(tab->ncol), n = diff_range(1, 2);

		diff_add(b, "UPDATE %s SET ", tab->name);
		for (i = 0; i < n; i++) {
			const struct diff_col *col =
			    &tab->col[(c + i) % tab->ncol];

			if (i && col == &tab->col[c])
				break;
			diff_add(b, "%s%s = ", i ? ", " : "", col->name);
			/* Bounded values, so repeated writes cannot
			 * overflow or grow text without end; subqueries
			 * read other tables (g->avoid). */
			g->nosubq += diff_pct(70);
			switch (col->type) {
			case DT_INT:
				diff_add(b, "(");
				diff_expr(g, b, DT_INT, 2);
				diff_add(b, ") %% 1000");
				break;
			case DT_REAL:
				/* A leaf moved a little: no growth. */
				diff_expr(g, b, diff_numtype(), 0);
				if (diff_pct(50))
					diff_add(b, " %s ",
						 diff_pct(50) ? "+" : "*");
				if (b->p[b->n - 1] == ' ')
					diff_add(b, "%.2f",
						 diff_range(-8, 8) / 4.0);
				break;
			default:
				diff_add(b, "substr(");
				diff_expr(g, b, DT_TEXT, 2);
				diff_add(b, ", 1, 8)");
				break;
			}
			g->nosubq = 0;
		}
		if (diff_pct(80)) {
			diff_add(b, " WHERE ");
			diff_bool(g, b, 2);
		}
	} else if (k < 8) {
		/* INSERT ... VALUES */
		int n = diff_range(1, 4), r;

		diff_add(b, "INSERT INTO %s VALUES ", tab->name);
		for (r = 0; r < n; r++) {
			diff_add(b, "%s(", r ? ", " : "");
			for (i = 0; i < tab->ncol; i++) {
				diff_add(b, i ? ", " : "");
				diff_add_value(b, tab->col[i].type, 15);
			}
			diff_add(b, ")");
		}
	} else {
		/* INSERT ... SELECT from any table, types matching the
		 * target columns, a fully ordered LIMIT keeps it small. */
		struct diff_scope src;
		struct diff_buf from = {0};

		int cols[DIFF_MAXCOL], nc = 0, start = diff_rand(tab->ncol);

		/* All columns in order, or some in another order (the rest
		 * get NULL). */
		if (diff_pct(60)) {
			for (i = 0; i < tab->ncol; i++)
				cols[nc++] = i;
			diff_add(b, "INSERT INTO %s SELECT ", tab->name);
		} else {
			diff_add(b, "INSERT INTO %s (", tab->name);
			for (i = 0; i < tab->ncol; i++)
				if (i == 0 || diff_pct(60)) {
					cols[nc] = (start + i) % tab->ncol;
					diff_add(b, "%s%s", nc ? ", " : "",
						 tab->col[cols[nc]].name);
					nc++;
				}
			diff_add(b, ") SELECT ");
		}
		diff_from(g, &from, &src, 2);
		g->scope = &src;
		g->nosubq++;
		for (i = 0; i < nc; i++) {
			diff_add(b, i ? ", " : "");
			if (tab->col[cols[i]].type == DT_INT) {
				diff_add(b, "(");
				diff_expr(g, b, DT_INT, 1);
				diff_add(b, ") %% 1000");
			} else {
				diff_expr(g, b, tab->col[cols[i]].type, 1);
			}
		}
		g->nosubq--;
		diff_add(b, "%s", from.p);
		if (diff_pct(60)) {
			diff_add(b, " WHERE ");
			diff_bool(g, b, 1);
		}
		diff_add(b, " ORDER BY ");
		for (i = 0; i < nc; i++)
			diff_add(b, "%s%d", i ? ", " : "", i + 1);
		diff_add(b, " LIMIT %d", diff_range(0, 20));
		free(from.p);
	}
	diff_write(b->p, t);
}

/* A value compared with a key column of type t: mostly of its type,
 * INTEGER and REAL mixed now and then (never number and text), values
 * that are in the data often. */
static void diff_key_literal(struct diff_buf *b, int t)
{
	if (t == DT_TEXT) {
		diff_literal(b, DT_TEXT);
		return;
	}
	switch (diff_rand(5)) {
	case 0:
		diff_add(b, "%d", diff_range(-1000, 1000));
		break;
	case 1:
		diff_add(b, "%.2f", diff_range(-24, 24) / 4.0);
		break;
	case 2:
		diff_add(b, "%d.0", diff_range(-5, 5));
		break;
	default:
		diff_add(b, "%d", diff_range(-6, 6));
		break;
	}
}

/* A condition on key column c that an index can use. */
static void diff_key_term(struct diff_buf *b, const struct diff_col *c, int eq)
{
	int k = diff_rand(10), i, n;

	if (eq) {
		if (k < 6) {
			diff_add(b, "%s = ", c->name);
			diff_key_literal(b, c->type);
		} else if (k < 7) {
			diff_add(b, "%s IS NULL", c->name);
		} else {
			n = diff_range(1, 4);
			diff_add(b, "%s IN (", c->name);
			for (i = 0; i < n; i++) {
				diff_add(b, i ? ", " : "");
				diff_key_literal(b, c->type);
			}
			diff_add(b, ")");
		}
		return;
	}
	if (k < 3) {
		diff_add(b, "%s BETWEEN ", c->name);
		diff_key_literal(b, c->type);
		diff_add(b, " AND ");
		diff_key_literal(b, c->type);
	} else if (k < 5) {
		diff_key_literal(b, c->type);
		diff_add(b, " %s %s", diff_pct(50) ? "<" : ">=", c->name);
	} else {
		static const char *ops[] = {"<", "<=", ">", ">="};
		diff_add(b, "%s %s ", c->name, ops[diff_rand(4)]);
		diff_key_literal(b, c->type);
		if (diff_pct(40)) {
			diff_add(b, " AND %s %s ", c->name, ops[diff_rand(4)]);
			diff_key_literal(b, c->type);
		}
	}
}

/* A query over one indexed table shaped for its index: equalities, IN
 * lists, IS NULL and ranges on the index's columns (with other
 * conditions beside them now and then), or ORDER BY the index's columns
 * with LIMIT, selecting only those columns so that the ORDER BY fixes
 * every output column. */
static void diff_q_index(struct diff_gen *g, struct diff_buf *b)
{
	struct diff_scope s;
	int t, k, i, cand[DIFF_NTAB], nc = 0, order;
	const struct diff_tab *tab;
	const struct diff_col *c0, *c1 = NULL;

	for (t = 0; t < DIFF_NTAB; t++)
		if (diff_tabs[t].nix)
			cand[nc++] = t;
	if (!nc) {
		diff_q_select(g, b);
		return;
	}
	t = cand[diff_rand(nc)];
	tab = &diff_tabs[t];
	k = diff_rand(tab->nix);
	c0 = &tab->col[tab->ixc[k][0]];
	if (tab->nixc[k] == 2)
		c1 = &tab->col[tab->ixc[k][1]];
	memset(&s, 0, sizeof(s));
	diff_scope_add(&s, t, tab->name);
	s.rows = tab->nrows;
	g->scope = &s;
	order = diff_pct(40);
	if (order)
		diff_add(b, "SELECT %s%s%s FROM %s", c0->name, c1 ? ", " : "",
			 c1 ? c1->name : "", tab->name);
	else
		diff_add(b, "SELECT * FROM %s", tab->name);
	i = diff_rand(4);
	if (i == 0 && !order) {
		/* no condition on the key: the scan */
		diff_add(b, " WHERE ");
		diff_bool(g, b, 1);
	} else if (i == 1 && c1) {
		diff_add(b, " WHERE ");
		diff_key_term(b, c0, 1);
		diff_add(b, " AND ");
		diff_key_term(b, c1, diff_pct(50));
	} else if (i >= 1 || diff_pct(50)) {
		diff_add(b, " WHERE ");
		diff_key_term(b, c0, diff_pct(50));
	}
	if (i && !order && diff_pct(30)) {
		diff_add(b, " AND ");
		diff_bool(g, b, 1);
	}
	if (order) {
		int desc = diff_pct(40);
		diff_add(b, " ORDER BY %s%s", c0->name, desc ? " DESC" : "");
		if (diff_pct(10))
			diff_add(b,
				 diff_pct(50) ? " NULLS FIRST" : " NULLS LAST");
		if (c1)
			diff_add(b, ", %s%s", c1->name,
				 desc != diff_pct(10) ? " DESC" : "");
		diff_add(b, " LIMIT %d", diff_range(0, 30));
		if (diff_pct(30))
			diff_add(b, " OFFSET %d", diff_range(0, 10));
	}
	diff_query(b->p, order);
}

static void diff_statement(void)
{
	struct diff_gen g;
	struct diff_buf b = {0};
	int k = diff_rand(100);

	memset(&g, 0, sizeof(g));
	diff_add(&b, "%s", "");
	if (k < 30)
		diff_q_select(&g, &b);
	else if (k < 45)
		diff_q_index(&g, &b);
	else if (k < 70)
		diff_q_aggregate(&g, &b);
	else if (k < 85)
		diff_q_compound(&g, &b);
	else
		diff_q_write(&g, &b);
	free(b.p);
}

static char diff_dir[256];

static void test_diff_sqlite(void)
{
	const char *e = getenv("DIFF_SEED");
	const char *tmp = getenv("TMPDIR");
	int n = getenv("DIFF_N") ? atoi(getenv("DIFF_N")) : 6000, i;
	gpmdb_options o = {0};
	char path[300];

	diff_seed = e ? strtoull(e, NULL, 0) : 20240601ull;
	snprintf(diff_dir, sizeof(diff_dir), "%s/gpmdb_diff.XXXXXX",
		 access("/dev/shm", W_OK) == 0 ? "/dev/shm"
		 : tmp && *tmp		       ? tmp
					       : "/tmp");
	if (!mkdtemp(diff_dir)) {
		CHECKF(0, "cannot make %s", diff_dir);
		return;
	}
	snprintf(path, sizeof(path), "%s/diff.gpmdb", diff_dir);
	o.durability = "off"; /* SQL is tested here, durability elsewhere */
	CHECK_RC(gpmdb_open_v2(path, &diff_gdb,
			       GPMDB_OPEN_READWRITE | GPMDB_OPEN_CREATE, &o),
		 GPMDB_OK);
	CHECK_RC(sqlite3_open(":memory:", &diff_sdb), SQLITE_OK);
	if (getenv("DIFF_TRACE"))
		diff_trace = fopen(getenv("DIFF_TRACE"), "w");
	/* DIFF_ROUND=r starts at round r (each round stands alone). */
	i = getenv("DIFF_ROUND") ? atoi(getenv("DIFF_ROUND")) * DIFF_PER_ROUND
				 : 0;
	for (; i < n && diff_gdb && diff_sdb; i++) {
		if (i % DIFF_PER_ROUND == 0) {
			diff_round = i / DIFF_PER_ROUND;
			/* Each round from its own seed, so that a round can be
			 * rerun alone: the seed and the round say it all. */
			diff_state =
			    diff_seed * 0x100000001B3ull + (uint64_t)diff_round;
			diff_clear(&diff_writes);
			diff_diverged = 0;
			if (!diff_make_tables()) {
				CHECKF(0, "could not load the tables");
				break;
			}
		}
		if (!diff_diverged)
			diff_statement();
	}
	printf("# diff: seed %llu, %d statements, %ld agreed (%ld queries "
	       "with rows), %ld disagreed\n",
	       diff_seed, n, diff_agreed, diff_nonempty, diff_disagreed);
	printf("# diff: %.1f s in gpmdb (slowest %.2f s: %.80s), %.1f s in "
	       "SQLite (slowest %.2f s: %.80s)\n",
	       diff_secs[0], diff_worst[0], diff_worst_sql[0], diff_secs[1],
	       diff_worst[1], diff_worst_sql[1]);
	CHECKF(diff_disagreed == 0,
	       "%ld disagreements with SQLite (DIFF_SEED=%llu)", diff_disagreed,
	       diff_seed);
	if (diff_trace)
		fclose(diff_trace);
	gpmdb_close(diff_gdb);
	sqlite3_close(diff_sdb);
	unlink(path);
	rmdir(diff_dir);
	free(diff_schema.p);
	free(diff_writes.p);
	free(diff_loads.p);
}

int main(void)
{
	TEST_RUN(test_diff_sqlite);
	TEST_MAIN_END();
}
