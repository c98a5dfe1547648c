/*
 * batch_keys_gpu.c - the rows of a batch of bound keys found on the GPU
 * (batch_keys_gpu.h; gpu/keymatch.h; docs/gpu.md "Key batches").
 *
 * UPDATE ... WHERE id = ? with 2.5M keys bound (bench_batch's UPDATE b)
 * spent 190 ms of its 240 finding the rows through the unique index's
 * GPU probe, most of it copying the index's records to the device.  The
 * key column is what the column cache already holds (or uploads straight
 * from the registered pool at bus speed), so under backend=gpu a batch of
 * keys of one integer-like column is matched in one pass over the cached
 * column instead.  The result is the hash pass's (batch.c match_keys):
 * row ids ascending, each with the last parameter row of its key.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "batch_gpu.h"
#include "batch_keys_gpu.h"
#include "write_phases.h"

#include "../../gpu/cache.h"
#include "../../gpu/exec/exec_gpu_ops.h"
#include "../../gpu/gpu.h"
#include "../../gpu/keymatch.h"

/* Below this many keys the index's probe is cheap and the pass over a
 * whole column not worth its first upload. */
#define BK_MIN_KEYS 16384

static pthread_mutex_t bk_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
	uint64_t batches, keys, rows, declined;
	/* UPDATEs written from matches kept on the device */
	uint64_t dev_updates, dev_rows;
	double load_ms, upload_ms, sort_ms, probe_ms, download_ms, total_ms;
	char why[400];
} bk_stat;

static int bk_decline(const char *why)
{
	pthread_mutex_lock(&bk_lock);
	bk_stat.declined++;
	snprintf(bk_stat.why, sizeof(bk_stat.why), "%.399s", why);
	pthread_mutex_unlock(&bk_lock);
	return 0;
}

int bgpu_match_keys(gpmdb *db, uint32_t tid, const stg_column_info *ci, int col,
		    const void *keys, const uint32_t *nulls,
		    const uint8_t *skip, uint64_t n, uint8_t *used, bool keep,
		    bgpu_keymatch *m, int *rc)
{
	gcache_colref kc, rc_rows;
	gpu_keymatch_in in;
	char why[600];
	double t0 = wp_now_ms(), t1;
	int r;

	memset(m, 0, sizeof(*m));
	*rc = GPMDB_OK;
	if (db->backend != 2 || n < BK_MIN_KEYS || db->gpu_key_match)
		return 0;
	if (ci->type != STG_T_INT && ci->type != STG_T_BIGINT &&
	    ci->type != STG_T_DATE && ci->type != STG_T_DECIMAL) {
		snprintf(why, sizeof(why),
			 "key column %s is not an integer, DATE or DECIMAL",
			 ci->name);
		return bk_decline(why);
	}
	if (!gpu_available())
		return bk_decline("no GPU");
	/* the pool registered: the column goes up at bus speed */
	if (bgpu_register(db, why, sizeof(why)))
		return bk_decline(why);
	memset(&in, 0, sizeof(in));
	in.keys = keys;
	in.nulls = nulls;
	in.skip = skip;
	in.n = n;
	in.width = (uint32_t)stg_type_width(ci->type);
	in.keep = keep;
	exec_gpu_lock();
	gcache_begin();
	r = gcache_column(db->pool, db->gpu_owner, tid, col, ci->type, &kc, why,
			  sizeof(why));
	if (r == GPMDB_OK && stg_deleted_count(db->pool, tid)) {
		/* the cache holds live rows: their row ids beside them */
		r = gcache_column(db->pool, db->gpu_owner, tid, GCACHE_ROWID, 0,
				  &rc_rows, why, sizeof(why));
		in.rowids = r == GPMDB_OK ? rc_rows.col.data : NULL;
	}
	t1 = wp_now_ms();
	if (r != GPMDB_OK) {
		/* a column the cache cannot hold: the index's probe, which
		 * needs no copy of the whole column */
		exec_gpu_unlock();
		if (r == GPMDB_NOMEM || r == GPMDB_TOOBIG)
			return bk_decline(why);
		*rc = db_err(db, r, "GPU key match: column %s: %s", ci->name,
			     why);
		return 1;
	}
	in.col = kc.col;
	in.nrows = kc.nrows;
	r = gpu_key_match(&in, used, m, why, sizeof(why));
	exec_gpu_unlock();
	if (r != GPMDB_OK) {
		*rc = db_err(db, r, "GPU key match: %s", why);
		return 1;
	}
	wp_bytes(db, WP_LOCATE, n * in.width + m->n * 16);
	wp_path(db,
		"%llu keys matched on the GPU in one pass over column %s "
		"(%llu rows%s)",
		(unsigned long long)n, ci->name, (unsigned long long)in.nrows,
		kc.hit ? ", cached" : ", loaded");
	pthread_mutex_lock(&bk_lock);
	bk_stat.batches++;
	bk_stat.keys += n;
	bk_stat.rows += m->n;
	bk_stat.load_ms = t1 - t0;
	bk_stat.upload_ms = m->upload_ms;
	bk_stat.sort_ms = m->sort_ms;
	bk_stat.probe_ms = m->probe_ms;
	bk_stat.download_ms = m->download_ms;
	bk_stat.total_ms = wp_now_ms() - t0;
	pthread_mutex_unlock(&bk_lock);
	return 1;
}

void bgpu_keymatch_free(bgpu_keymatch *m)
{
	free(m->rowid);
	free(m->prow);
	if (m->drowid || m->dprow) {
		exec_gpu_lock();
		gpu_free(m->drowid, NULL, 0);
		gpu_free(m->dprow, NULL, 0);
		exec_gpu_unlock();
	}
	memset(m, 0, sizeof(*m));
}

int bgpu_update_keys(gpmdb *db, uint32_t tid, const stg_schema *sch, int ncols,
		     const uint32_t *cols, const stg_col_batch *vals,
		     uint64_t n, const bgpu_keymatch *m)
{
	void *dv[64] = {0};
	uint32_t *dnl[64] = {0}, widths[64];
	char err[600];
	int rc = GPMDB_OK, ph;

	if (ncols < 1 || ncols > 64)
		return db_err(db, GPMDB_INTERNAL,
			      "GPU UPDATE by keys: %d columns", ncols);
	if (m->n == 0)
		return GPMDB_OK;
	/* the values up and into the matched rows' order */
	ph = wp_to(db, WP_BIND);
	exec_gpu_lock();
	for (int k = 0; k < ncols && rc == GPMDB_OK; k++) {
		widths[k] = (uint32_t)stg_type_width(sch->cols[cols[k]].type);
		rc = gpu_key_gather(vals[k].values, vals[k].nulls, n, widths[k],
				    m->dprow, m->n, &dv[k], &dnl[k], err,
				    sizeof(err));
		if (rc)
			rc = db_err(db, rc, "GPU UPDATE by keys: column %s: %s",
				    sch->cols[cols[k]].name, err);
	}
	exec_gpu_unlock();
	wp_to(db, ph);
	if (rc == GPMDB_OK)
		rc = bgpu_update_dev(db, tid, ncols, cols, m->drowid, m->n,
				     m->rng, dv, (const uint32_t *const *)dnl,
				     widths);
	if (rc == GPMDB_OK) {
		pthread_mutex_lock(&bk_lock);
		bk_stat.dev_updates++;
		bk_stat.dev_rows += m->n;
		pthread_mutex_unlock(&bk_lock);
	}
	exec_gpu_lock();
	for (int k = 0; k < ncols; k++) {
		gpu_free(dv[k], NULL, 0);
		gpu_free(dnl[k], NULL, 0);
	}
	exec_gpu_unlock();
	return rc;
}

int bgpu_keys_stat_rows(int (*row)(void *ctx, const char *name, double v),
			void *ctx, char *why, size_t wlen)
{
	int rc = GPMDB_OK;

	pthread_mutex_lock(&bk_lock);
	const struct {
		const char *n;
		double v;
	} rows[] = {
	    {"key_match_batches", (double)bk_stat.batches},
	    {"key_match_keys", (double)bk_stat.keys},
	    {"key_match_rows", (double)bk_stat.rows},
	    {"key_match_declined", (double)bk_stat.declined},
	    {"key_update_dev_batches", (double)bk_stat.dev_updates},
	    {"key_update_dev_rows", (double)bk_stat.dev_rows},
	    {"last_key_match_load_ms", bk_stat.load_ms},
	    {"last_key_match_upload_ms", bk_stat.upload_ms},
	    {"last_key_match_sort_ms", bk_stat.sort_ms},
	    {"last_key_match_probe_ms", bk_stat.probe_ms},
	    {"last_key_match_download_ms", bk_stat.download_ms},
	    {"last_key_match_total_ms", bk_stat.total_ms},
	};
	snprintf(why, wlen, "%s", bk_stat.why);
	pthread_mutex_unlock(&bk_lock);
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]) && !rc; i++)
		rc = row(ctx, rows[i].n, rows[i].v);
	return rc;
}
