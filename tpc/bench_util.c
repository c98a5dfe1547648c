/*
 * bench_util.c - plumbing shared by the benchmarks (bench_util.h).
 */
#include "bench_util.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

double bench_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

void bench_die(const char *what, const char *why)
{
	fprintf(stderr, "%s: %s: %s\n", bench_prog, what, why);
	exit(2);
}

void *bench_alloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		bench_die("malloc", strerror(errno));
	return p;
}

uint64_t bench_gcd(uint64_t a, uint64_t b)
{
	while (b) {
		uint64_t t = a % b;
		a = b;
		b = t;
	}
	return a;
}

uint64_t bench_coprime_step(uint64_t n)
{
	uint64_t step = (uint64_t)(n * 0.6180339887498949);

	if (step == 0)
		step = 1;
	while (bench_gcd(step, n) != 1)
		step++;
	return step % n;
}

bool bench_in_list(const char *list, const char *word)
{
	size_t n = strlen(word);
	for (const char *p = list; *p;) {
		const char *q = strchr(p, ',');
		size_t len = q ? (size_t)(q - p) : strlen(p);
		if (len == n && !strncmp(p, word, n))
			return true;
		if (!q)
			break;
		p = q + 1;
	}
	return false;
}

int bench_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

void bench_digest_add(bench_digest *g, int64_t id, double v)
{
	if (g->n && v < g->prev)
		g->disorder++;
	g->prev = v;
	g->sum += (uint64_t)id;
	g->poshash += (uint64_t)id * (g->n * 2 + 1);
	g->n++;
}

int bench_duck_digest(duckdl *dl, duckdl_result *r, bench_digest *g, char *err,
		      size_t errlen)
{
	duckdl_chunk ch;

	if (dl->column_type(r, 0) != DUCKDL_TYPE_BIGINT ||
	    dl->column_type(r, 1) != DUCKDL_TYPE_DOUBLE) {
		snprintf(err, errlen, "unexpected column types");
		return -1;
	}
	while ((ch = dl->fetch_chunk(*r)) != NULL) {
		duckdl_idx n = dl->chunk_size(ch);
		const int64_t *id = dl->vector_data(dl->chunk_vector(ch, 0));
		const double *v = dl->vector_data(dl->chunk_vector(ch, 1));
		for (duckdl_idx i = 0; i < n; i++)
			bench_digest_add(g, id[i], v[i]);
		dl->destroy_chunk(&ch);
	}
	return 0;
}

void qres_clear(qres *q)
{
	for (uint64_t i = 0; i < q->nrows * (uint64_t)q->ncols; i++)
		free(q->cells[i].t);
	free(q->cells);
	memset(q, 0, sizeof(*q));
}

cell *qres_row(qres *q)
{
	if (q->nrows == q->cap) {
		q->cap = q->cap ? q->cap * 2 : 64;
		q->cells = realloc(q->cells, q->cap * q->ncols * sizeof(cell));
		if (!q->cells)
			bench_die("realloc", strerror(errno));
	}
	cell *c = &q->cells[q->nrows++ * q->ncols];
	memset(c, 0, q->ncols * sizeof(cell));
	return c;
}

char *bench_strdup(const char *s)
{
	char *t = bench_alloc(strlen(s) + 1);
	strcpy(t, s);
	return t;
}

void digest_result(const bench_digest *g, qres *q)
{
	q->ncols = 4;
	cell *c = qres_row(q);
	c[0] = (cell){.kind = CELL_INT, .i = (int64_t)g->n};
	c[1] = (cell){.kind = CELL_INT, .i = (int64_t)g->sum};
	c[2] = (cell){.kind = CELL_INT, .i = (int64_t)g->poshash};
	c[3] = (cell){.kind = CELL_INT, .i = (int64_t)g->disorder};
}

static void cell_print(const cell *c, char *buf, size_t len)
{
	switch (c->kind) {
	case CELL_NULL:
		snprintf(buf, len, "NULL");
		break;
	case CELL_INT:
		snprintf(buf, len, "%" PRId64, c->i);
		break;
	case CELL_REAL:
		snprintf(buf, len, "%.17g", c->r);
		break;
	case CELL_TEXT:
		snprintf(buf, len, "'%s'", c->t);
		break;
	}
}

static bool cell_eq(const cell *a, const cell *b)
{
	if (a->kind == CELL_INT && b->kind == CELL_INT)
		return a->i == b->i;
	if ((a->kind == CELL_INT || a->kind == CELL_REAL) &&
	    (b->kind == CELL_INT || b->kind == CELL_REAL)) {
		double x = a->kind == CELL_INT ? (double)a->i : a->r;
		double y = b->kind == CELL_INT ? (double)b->i : b->r;
		return fabs(x - y) <= 1e-9 * fmax(fabs(x), fabs(y));
	}
	if (a->kind == CELL_TEXT && b->kind == CELL_TEXT)
		return !strcmp(a->t, b->t);
	return a->kind == b->kind;
}

bool qres_check(const char *query, const char *ref_name, const qres *ref,
		const char *name, const qres *q)
{
	char x[128], y[128];
	int shown = 0;

	if (ref->ncols != q->ncols || ref->nrows != q->nrows) {
		printf("\n**MISMATCH** %s: %s gives %" PRIu64
		       " rows x %d columns, %s %" PRIu64 " x %d\n\n",
		       query, ref_name, ref->nrows, ref->ncols, name, q->nrows,
		       q->ncols);
		return false;
	}
	for (uint64_t r = 0; r < q->nrows && shown < 5; r++)
		for (int c = 0; c < q->ncols && shown < 5; c++) {
			const cell *a = &ref->cells[r * ref->ncols + c];
			const cell *b = &q->cells[r * q->ncols + c];
			if (cell_eq(a, b))
				continue;
			cell_print(a, x, sizeof(x));
			cell_print(b, y, sizeof(y));
			printf("\n**MISMATCH** %s: row %" PRIu64
			       " column %d: %s %s, %s %s\n",
			       query, r + 1, c + 1, ref_name, x, name, y);
			shown++;
		}
	if (shown)
		printf("\n");
	return shown == 0;
}

int bench_duck_query(duckdl *dl, duckdl_connection con, const char *sql,
		     bool stream, qres *out, char *err, size_t errlen)
{
	duckdl_result r;

	if (dl->query(con, sql, &r) != DUCKDL_OK) {
		const char *m = dl->result_error(&r);
		snprintf(err, errlen, "%s", m ? m : "query failed");
		dl->destroy_result(&r);
		return -1;
	}
	out->ncols = (int)dl->column_count(&r);
	if (stream) {
		/* Columnar: the rows of each chunk straight from its vectors.
		 */
		bench_digest g = {0};
		if (bench_duck_digest(dl, &r, &g, err, errlen)) {
			dl->destroy_result(&r);
			return -1;
		}
		digest_result(&g, out);
		dl->destroy_result(&r);
		return 0;
	}
	duckdl_idx nrows = dl->row_count(&r);
	for (duckdl_idx row = 0; row < nrows; row++) {
		cell *c = qres_row(out);
		for (int i = 0; i < out->ncols; i++) {
			if (dl->value_is_null(&r, i, row)) {
				c[i] = (cell){.kind = CELL_NULL};
				continue;
			}
			switch (dl->column_type(&r, i)) {
			case DUCKDL_TYPE_INTEGER:
			case DUCKDL_TYPE_BIGINT:
				c[i] = (cell){.kind = CELL_INT,
					      .i = dl->value_int64(&r, i, row)};
				break;
			case DUCKDL_TYPE_VARCHAR: {
				char *t = dl->value_varchar(&r, i, row);
				c[i] = (cell){.kind = CELL_TEXT,
					      .t = bench_strdup(t ? t : "")};
				dl->free(t);
				break;
			}
			default: /* DOUBLE, DECIMAL, HUGEINT sums */
				c[i] =
				    (cell){.kind = CELL_REAL,
					   .r = dl->value_double(&r, i, row)};
			}
		}
	}
	dl->destroy_result(&r);
	return 0;
}

double bench_gpmdb_stat(gpmdb *db, const char *pragma, const char *name)
{
	char sql[128];
	gpmdb_stmt *st = NULL;
	double v = -1;

	snprintf(sql, sizeof(sql), "PRAGMA %s", pragma);
	if (gpmdb_prepare(db, sql, -1, &st, NULL) != GPMDB_OK || !st)
		return -1;
	while (gpmdb_step(st) == GPMDB_ROW)
		if (!strcmp((const char *)gpmdb_column_text(st, 0), name))
			v = gpmdb_column_double(st, 1);
	gpmdb_finalize(st);
	return v;
}
