/*
 * write_phases.c - the phases of a write statement (write_phases.h): the
 * accumulator, the calls that hand rows to storage with their phase and
 * bytes (wp_append, wp_update, wp_delete, wp_commit, wp_release), the
 * EXPLAIN ANALYZE text of INSERT/UPDATE/DELETE and the phase rows of
 * PRAGMA gpu_write_stats (docs/engine.md "Write phases").
 */
#include "write_phases.h"
#include "../engine.h"
#include "batch_gpu.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *wp_names[WP_NPHASES] = {"bind_convert", "key_check",
					   "row_location", "reservation",
					   "upload",	   "log",
					   "data",	   "persist",
					   "commit",	   "index_maintenance",
					   "other"};

const char *wp_name(int ph)
{
	return ph >= 0 && ph < WP_NPHASES ? wp_names[ph] : "?";
}

static uint64_t wp_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

double wp_now_ms(void)
{
	return (double)wp_now() / 1e6;
}

static uint64_t wp_persisted(gpmdb *db)
{
	stg_stats s;

	if (stg_get_stats(db->pool, &s) != GPMDB_OK)
		return 0;
	return s.bytes_persisted;
}

void wp_start(gpmdb *db, const char *op)
{
	wp_acc *w = &db->wp;

	memset(w, 0, sizeof(*w));
	snprintf(w->op, sizeof(w->op), "%s", op);
	w->pers0 = wp_persisted(db);
	w->cur = WP_OTHER;
	w->on = true;
	w->t0 = w->last = wp_now();
}

int wp_to(gpmdb *db, int ph)
{
	wp_acc *w = &db->wp;
	uint64_t now;
	int prev;

	if (!w->on || ph < 0 || ph >= WP_NPHASES)
		return -1;
	now = wp_now();
	w->ns[w->cur] += now - w->last;
	w->last = now;
	prev = w->cur;
	w->cur = ph;
	return prev;
}

void wp_bytes(gpmdb *db, int ph, uint64_t n)
{
	if (db->wp.on && ph >= 0 && ph < WP_NPHASES)
		db->wp.bytes[ph] += n;
}

void wp_move(gpmdb *db, int from, int to, uint64_t ns)
{
	wp_acc *w = &db->wp;

	if (!w->on)
		return;
	/* what the phase holds: the current interval is not in it yet */
	if (from == w->cur)
		wp_to(db, from);
	if (ns > w->ns[from])
		ns = w->ns[from];
	w->ns[from] -= ns;
	w->ns[to] += ns;
}

void wp_note_gpu(gpmdb *db)
{
	if (db->wp.on)
		db->wp.gpu = true;
}

void wp_path(gpmdb *db, const char *fmt, ...)
{
	va_list ap;

	if (!db->wp.on)
		return;
	va_start(ap, fmt);
	vsnprintf(db->wp.path, sizeof(db->wp.path), fmt, ap);
	va_end(ap);
}

void wp_finish(gpmdb *db, int rc)
{
	wp_acc *w = &db->wp;
	uint64_t p;

	if (!w->on)
		return;
	wp_to(db, WP_OTHER);
	w->wall = w->last - w->t0;
	/* everything storage flushed for the statement: rows, log records,
	 * the commit record */
	p = wp_persisted(db);
	w->bytes[WP_PERSIST] = p > w->pers0 ? p - w->pers0 : 0;
	w->rows = rc ? 0 : db->changes;
	w->rc = rc;
	w->on = false;
	w->valid = true;
}

/* ---- rows to storage ---- */

/* Bytes of a storage batch of n rows (cols[k] the table column of batch
 * column k; NULL: k itself): the values at the columns' storage widths
 * (TEXT: its 8-byte reference and the text), with the NULL bitmaps when
 * bitmaps is set.  NULL values count their width, as storage keeps it. */
static uint64_t wp_batch_bytes(const stg_schema *sch, int ncols,
			       const uint32_t *cols, const stg_col_batch *b,
			       uint64_t n, bool bitmaps)
{
	uint64_t t = 0;

	for (int k = 0; k < ncols; k++) {
		const stg_column_info *c =
		    &sch->cols[cols ? cols[k] : (uint32_t)k];

		t += n * stg_type_width(c->type);
		if (bitmaps && b[k].nulls)
			t += (n + 31) / 32 * 4;
		if (c->type != STG_T_TEXT)
			continue;
		const stg_text *v = b[k].values;
		for (uint64_t i = 0; i < n; i++)
			if (!b[k].nulls ||
			    !((b[k].nulls[i / 32] >> (i % 32)) & 1))
				t += v[i].len;
	}
	return t;
}

/* Storage's own timers around a CPU write call: its key checks, index
 * entries and undo logging move out of "data" (the GPU path times its
 * storage calls itself). */
static int wp_storage_begin(gpmdb *db, stg_write_times *t0)
{
	if (db->wp.on)
		stg_get_write_times(db->pool, t0);
	return wp_to(db, WP_DATA);
}

static void wp_storage_end(gpmdb *db, int ph, const stg_write_times *t0)
{
	stg_write_times t1;

	wp_to(db, ph);
	if (!db->wp.on || db->wp.gpu)
		return;
	stg_get_write_times(db->pool, &t1);
	wp_move(db, WP_DATA, WP_KEYCHECK, t1.key_check_ns - t0->key_check_ns);
	wp_move(db, WP_DATA, WP_INDEX, t1.index_ns - t0->index_ns);
	wp_move(db, WP_DATA, WP_LOG, t1.log_ns - t0->log_ns);
}

int wp_append(gpmdb *db, uint32_t tid, const stg_schema *sch,
	      const stg_col_batch *b, uint64_t n)
{
	return wp_append_from(db, tid, sch, b, NULL, n);
}

int wp_append_from(gpmdb *db, uint32_t tid, const stg_schema *sch,
		   const stg_col_batch *b, const uint8_t *from, uint64_t n)
{
	stg_write_times t0;
	int ph, rc;

	if (db->wp.on) {
		wp_bytes(db, WP_BIND,
			 wp_batch_bytes(sch, sch->ncols, NULL, b, n, true));
		wp_bytes(db, WP_DATA,
			 wp_batch_bytes(sch, sch->ncols, NULL, b, n, false));
	}
	ph = wp_storage_begin(db, &t0);
	/* INT32 arrays of BIGINT columns (from) are widened as they are
	 * written: by storage on the CPU path, by the kernels on the GPU's
	 * (bgpu_append chooses) */
	if (from && db->backend != 2)
		rc = stg_append_from(db->pool, tid, b, from, n) ? db_err_stg(db)
								: GPMDB_OK;
	else
		rc = bgpu_append(db, tid, b, from, n);
	wp_storage_end(db, ph, &t0);
	return rc;
}

int wp_update(gpmdb *db, uint32_t tid, const stg_schema *sch, int ncols,
	      const uint32_t *cols, const uint64_t *rowids, uint64_t n,
	      const stg_col_batch *vals)
{
	stg_write_times t0;
	int ph, rc;

	if (db->wp.on) {
		wp_bytes(db, WP_LOCATE, 8 * n);
		wp_bytes(db, WP_BIND,
			 wp_batch_bytes(sch, ncols, cols, vals, n, true));
		wp_bytes(db, WP_DATA,
			 wp_batch_bytes(sch, ncols, cols, vals, n, false));
	}
	ph = wp_storage_begin(db, &t0);
	rc = bgpu_update(db, tid, ncols, cols, rowids, n, vals);
	wp_storage_end(db, ph, &t0);
	return rc;
}

int wp_delete(gpmdb *db, uint32_t tid, const uint64_t *rowids, uint64_t n)
{
	stg_write_times t0;
	int ph, rc;

	/* the row ids found; a deleted bit per row */
	wp_bytes(db, WP_LOCATE, 8 * n);
	wp_bytes(db, WP_DATA, (n + 7) / 8);
	ph = wp_storage_begin(db, &t0);
	rc = bgpu_delete(db, tid, rowids, n);
	wp_storage_end(db, ph, &t0);
	return rc;
}

int wp_commit(gpmdb *db)
{
	stg_write_times t0, t1;
	int ph, rc;

	if (db->wp.on)
		stg_get_write_times(db->pool, &t0);
	ph = wp_to(db, WP_COMMIT);
	rc = stg_commit(db->pool);
	wp_to(db, ph);
	if (db->wp.on) {
		/* the commit's disk writes and syncs are persistence */
		stg_get_write_times(db->pool, &t1);
		wp_move(db, WP_COMMIT, WP_PERSIST,
			t1.persist_ns - t0.persist_ns);
	}
	return rc;
}

int wp_release(gpmdb *db, const stg_mark *m)
{
	int ph = wp_to(db, WP_COMMIT);
	int rc = stg_release(db->pool, m);

	wp_to(db, ph);
	return rc;
}

/* ---- EXPLAIN ANALYZE and PRAGMA gpu_write_stats ---- */

static double wp_ms(uint64_t ns)
{
	return (double)ns / 1e6;
}

/*
 * The text of EXPLAIN ANALYZE INSERT/UPDATE/DELETE after the statement
 * ran: head with the backend that wrote, the rows written and the wall
 * time; the plan that ran (st->plan, NULL when none did) with its
 * figures; a batch's path; one line per phase.
 */
int wp_explain(gpmdb_stmt *st, const char *head)
{
	const wp_acc *w = &st->db->wp;
	char hr[128], *plan, *rest, *out;
	size_t cap, n = 0;
	int rc;

	snprintf(hr, sizeof(hr), "%s [rows=%lld time=%.3f ms]",
		 w->gpu ? "gpu" : "cpu", w->rows, wp_ms(w->wall));
	if ((rc = explain_plan(st, st->plan, head, hr, true)))
		return rc;
	plan = st->explain;
	rest = strchr(plan, '\n'); /* after the head line: the batch's path */
	rest = rest ? rest + 1 : plan + strlen(plan);
	cap = strlen(plan) + sizeof(w->path) + 512 + WP_NPHASES * 96;
	if (!(out = malloc(cap)))
		return db_err(st->db, GPMDB_NOMEM, "out of memory");
	n += (size_t)snprintf(out + n, cap - n, "%.*s", (int)(rest - plan),
			      plan);
	if (w->path[0])
		n +=
		    (size_t)snprintf(out + n, cap - n, "  BATCH %s\n", w->path);
	n += (size_t)snprintf(out + n, cap - n, "%s", rest);
	for (int p = 0; p < WP_NPHASES; p++)
		n += (size_t)snprintf(out + n, cap - n,
				      "PHASE %s [time=%.3f ms bytes=%llu]\n",
				      wp_names[p], wp_ms(w->ns[p]),
				      (unsigned long long)w->bytes[p]);
	free(plan);
	st->explain = out;
	return GPMDB_OK;
}

/* A row of gpu_write_stats (name, value, bytes): bytes < 0 is NULL. */
int wp_stat_row(gpmdb *db, rel *r, const char *name, double value,
		int64_t bytes)
{
	sval v[3] = {sval_of_text(name), {.t = BC_T_REAL}, sval_of_int(bytes)};

	v[1].u.r = value;
	if (bytes < 0)
		v[2].t = BC_T_NULL;
	if (rel_reserve(r, 1))
		return db_err(db, GPMDB_NOMEM, "out of memory");
	for (int k = 0; k < 3; k++)
		if (rel_set(r, k, r->nrows, &v[k]))
			return db_err(db, GPMDB_NOMEM, "out of memory");
	r->nrows++;
	return GPMDB_OK;
}

/* The last write statement's phases: phase_<name> (ms, bytes), then
 * phase_total (its wall time), last_write_rows, last_write_gpu. */
int wp_pragma_rows(gpmdb *db, rel *r)
{
	const wp_acc *w = &db->wp;
	char name[64];
	int rc = GPMDB_OK;

	for (int p = 0; p < WP_NPHASES && !rc; p++) {
		snprintf(name, sizeof(name), "phase_%s", wp_names[p]);
		rc = wp_stat_row(db, r, name, wp_ms(w->ns[p]),
				 (int64_t)w->bytes[p]);
	}
	if (!rc)
		rc = wp_stat_row(db, r, "phase_total", wp_ms(w->wall), -1);
	if (!rc)
		rc = wp_stat_row(db, r, "last_write_rows", (double)w->rows, -1);
	if (!rc)
		rc = wp_stat_row(db, r, "last_write_gpu", w->gpu ? 1 : 0, -1);
	return rc;
}
