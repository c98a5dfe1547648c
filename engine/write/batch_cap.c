/*
 * batch_cap.c - CPU-assisted persistence of UPDATE and DELETE batches
 * (GPM's CAP-mm; docs/gpu.md "CPU-assisted persistence", issue 16).
 *
 * Where: backend = gpu and PRAGMA gpu_persist = cap, or auto on a pool in
 * msync mode (an ordinary file system: CUDA cannot register a private
 * mapping of it, so kernels cannot store into the pool).  The GPU still
 * does the batch's reading work: the old value of every updated cell
 * comes from the HBM column cache (where the GPU filter that found the
 * rows read them), and the HCL undo entries and tails are built in HBM
 * in the segment's own striped layout (gpu/dml_cap.cu).  The host then
 *   1. copies the entries into the segment (pinned staging, every core)
 *      and persists them;                             crash point hcl.entry
 *   2. copies the tails and persists them;            crash point hcl.tail
 *   3. writes the new values (or deleted bits) in place on every core
 *      (stg_cap_update_apply / stg_cap_delete_apply) and persists them;
 *   4. ends the batch (stg_hcl_end: deleted count through the metadata
 *      log);                                          crash point update.data
 * and the statement's commit is the CPU path's (msync: the WAL frame and
 * its fdatasync; past 64 MiB of pages the undo log in place first).  The
 * segment is a CPU-written one in every byte, so recovery is unchanged.
 *
 * What the GPU cannot log (a TEXT column, more than 64 columns, no GPU,
 * the cache failing or missing a row) is written by the host alone
 * through stg_update/stg_delete (the CAP of before), counted with its
 * reason in gpu_write_stats (cap_host, cap_host_because).  PRAGMA
 * gpu_persist = host always takes that path, to compare.
 */
#include "batch_cap.h"
#include "write.h"
#include "write_phases.h"

#include "../../gpu/cache.h"
#include "../../gpu/dml_cap.h"
#include "../../gpu/gpu.h"
#include "../../storage/stg_gpu.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct {
	uint64_t batches, rows, host;
	double upload_ms, cache_ms, kernel_ms, fetch_ms, log_ms, data_ms,
	    total_ms;
	uint64_t log_bytes;
	uint64_t down_batches, down_rows; /* bcap_update_from_dev */
	char host_why[400];
} bc_stat;
static pthread_mutex_t bc_lock = PTHREAD_MUTEX_INITIALIZER;

bool bcap_wanted(gpmdb *db)
{
	if (db->backend != 2)
		return false;
	if (db->gpu_persist == BCAP_PERSIST_CAP)
		return true;
	return db->gpu_persist == BCAP_PERSIST_AUTO &&
	       stg_pool_writes_private(db->pool);
}

/* The host writes the batch (nothing was written yet): counted. */
static int bc_decline(const char *op, const char *why)
{
	pthread_mutex_lock(&bc_lock);
	bc_stat.host++;
	snprintf(bc_stat.host_why, sizeof(bc_stat.host_why), "%s: %.380s", op,
		 why);
	pthread_mutex_unlock(&bc_lock);
	return BCAP_DECLINED;
}

static void bc_done(uint64_t n, const gpu_cap_timing *t, double cache_ms,
		    double log_ms, double data_ms, double t0)
{
	pthread_mutex_lock(&bc_lock);
	bc_stat.batches++;
	bc_stat.rows += n;
	bc_stat.upload_ms = t->upload_ms;
	bc_stat.cache_ms = cache_ms;
	bc_stat.kernel_ms = t->kernel_ms;
	bc_stat.fetch_ms = t->fetch_ms;
	bc_stat.log_ms = log_ms;
	bc_stat.data_ms = data_ms;
	bc_stat.log_bytes = t->bytes;
	bc_stat.total_ms = wp_now_ms() - t0;
	pthread_mutex_unlock(&bc_lock);
}

/* Under gpu_persist = auto: whether column col (or GCACHE_ROWID) is in
 * the cache for this statement (its plan read it on the GPU).  Why: in
 * msync mode the cache loads a column from the private mapping through
 * pageable copies (about 1.5 GB/s measured: 137 ms for a 200 MB column
 * on the H200), far more than the host's gather of a batch's old values
 * (the CPU path's whole log phase: 28-34 ms for 2.5M rows), so auto
 * lets the GPU log only what it holds already.  GPMDB_NOTFOUND, why
 * set, otherwise. */
static int bc_held(gpmdb *db, uint32_t tid, int col, int stype,
		   const char *name, char *why, size_t wlen)
{
	uint64_t need = 0;
	int rc = gcache_need(db->pool, db->gpu_owner, tid, col, stype, &need,
			     why, wlen);

	if (rc)
		return rc;
	if (need == 0)
		return GPMDB_OK;
	snprintf(why, wlen,
		 "column %s is not in the GPU cache for this statement "
		 "(loading its %llu bytes from the private mapping costs more "
		 "than the host's gather of the old values; gpu_persist = "
		 "cap loads it)",
		 name, (unsigned long long)need);
	return GPMDB_NOTFOUND;
}

/* The rows' old values where the GPU can read them: the cached columns
 * (UPDATE), and the cache's row ids when the table has deleted rows
 * (the cache holds live rows only).  *live NULL: row r is index r.
 * load: columns not in the cache are loaded (gpu_persist = cap), else
 * they make GPMDB_NOTFOUND (auto, bc_held). */
static int bc_sources(gpmdb *db, uint32_t tid, const stg_schema *sch, int ncols,
		      const uint32_t *cols, gpu_cap_col *src,
		      const int64_t **live, uint64_t *nlive, uint64_t rows,
		      bool load, char *why, size_t wlen)
{
	gcache_colref ref;
	int rc;

	*live = NULL;
	*nlive = rows;
	for (int k = 0; k < ncols && !load; k++)
		if ((rc =
			 bc_held(db, tid, (int)cols[k], sch->cols[cols[k]].type,
				 sch->cols[cols[k]].name, why, wlen)))
			return rc;
	if (!load && stg_deleted_count(db->pool, tid) &&
	    (rc = bc_held(db, tid, GCACHE_ROWID, 0, "rowid", why, wlen)))
		return rc;
	for (int k = 0; k < ncols; k++) {
		const stg_column_info *ci = &sch->cols[cols[k]];

		rc = gcache_column(db->pool, db->gpu_owner, tid, (int)cols[k],
				   ci->type, &ref, why, wlen);
		if (rc)
			return rc;
		src[k].vals = ref.col.data;
		src[k].nulls = ref.col.nulls;
		src[k].col = cols[k];
		src[k].width = (uint32_t)stg_type_width(ci->type);
		*nlive = ref.nrows;
	}
	if (ncols == 0)
		*nlive = rows - stg_deleted_count(db->pool, tid);
	if (*nlive != rows) {
		rc = gcache_column(db->pool, db->gpu_owner, tid, GCACHE_ROWID,
				   0, &ref, why, wlen);
		if (rc)
			return rc;
		*live = (const int64_t *)ref.col.data;
		*nlive = ref.nrows;
	}
	return GPMDB_OK;
}

/* Steps 1 and 2: the entries, then the tails, each copied down and
 * persisted before the next. */
static int bc_log(gpmdb *db, const stg_hcl_seg *seg, gpu_cap_batch *b,
		  gpu_cap_timing *t)
{
	char *base = stg_hcl_seg_addr(db->pool, seg), err[400];
	uint64_t eoff = hcl_entries_offset(&seg->geom);
	uint64_t toff = hcl_tails_offset();
	int rc;

	if (!base)
		return db_err(db, GPMDB_INTERNAL,
			      "CAP: HCL segment at %llu outside the pool",
			      (unsigned long long)seg->seg_off);
	if ((rc = gpu_cap_fetch(b, 0, base + eoff, t, err, sizeof(err))))
		return db_err(db, rc, "CAP: the log entries: %s", err);
	if (stg_hcl_persist(db->pool, seg, eoff, gpu_cap_region_bytes(b, 0)))
		return db_err_stg(db);
	stg_crash_point("hcl.entry");
	if ((rc = gpu_cap_fetch(b, 1, base + toff, t, err, sizeof(err))))
		return db_err(db, rc, "CAP: the log tails: %s", err);
	if (stg_hcl_persist(db->pool, seg, toff, gpu_cap_region_bytes(b, 1)))
		return db_err_stg(db);
	stg_crash_point("hcl.tail");
	return GPMDB_OK;
}

/* The GPU's part of a batch, before anything is written: the sources,
 * then the log in HBM for the geometry storage will give the segment
 * (hcl_geom_for, checked against it).  BCAP_DECLINED with the reason
 * counted when the GPU cannot. */
static int bc_build(gpmdb *db, const char *op, uint32_t tid,
		    const stg_schema *sch, int ncols, const uint32_t *cols,
		    const uint64_t *rowids, uint64_t n, gpu_cap_batch **b,
		    uint64_t *added, gpu_cap_timing *t, double *cache_ms)
{
	gpu_cap_col src[64];
	const int64_t *live = NULL;
	uint64_t nlive = 0, rows = stg_row_count(db->pool, tid);
	hcl_geom g = hcl_geom_for(n, (uint32_t)(ncols ? ncols : 1));
	char why[600];
	double t0;
	int rc, ph;

	if (gpu_init(why, sizeof(why)) != GPMDB_OK)
		return bc_decline(op, why);
	/* the cache loads what the GPU filter did not (an upload) */
	ph = wp_to(db, WP_UPLOAD);
	t0 = wp_now_ms();
	rc = bc_sources(db, tid, sch, ncols, cols, src, &live, &nlive, rows,
			db->gpu_persist == BCAP_PERSIST_CAP, why, sizeof(why));
	*cache_ms = wp_now_ms() - t0;
	if (rc) {
		wp_to(db, ph);
		return bc_decline(op, why);
	}
	wp_to(db, WP_LOG);
	gpu_cap_note(0); /* the crash tests' window opens */
	rc = gpu_cap_build(&g, rowids, n, ncols, src, live, nlive, rows, added,
			   b, t, why, sizeof(why));
	wp_to(db, ph);
	/* a row the cache does not hold, device memory short, a CUDA
	 * error: nothing was written yet, so the host writes the batch */
	if (rc)
		return bc_decline(op, why);
	return GPMDB_OK;
}

static int bcap_check_rows(gpmdb *db, const stg_schema *sch, int ncols,
			   const uint32_t *cols, const uint64_t *rowids,
			   uint64_t n, const stg_col_batch *vals)
{
	uint64_t rows = stg_row_count(db->pool, sch->table_id);

	for (int k = 0; k < ncols; k++) {
		const stg_column_info *ci = &sch->cols[cols[k]];

		if (!(ci->flags & STG_COL_NOTNULL) || !vals[k].nulls)
			continue;
		for (uint64_t i = 0; i < n; i++)
			if ((vals[k].nulls[i >> 5] >> (i & 31)) & 1u)
				return db_err(db, GPMDB_CONSTRAINT,
					      "NOT NULL constraint failed: "
					      "%s.%s (updated row %llu)",
					      sch->name, ci->name,
					      (unsigned long long)i + 1);
	}
	/* on every core: 2.5M row ids took 6.5 ms on one */
	uint64_t bad = UINT64_MAX;
#pragma omp parallel for reduction(min : bad) if (n >= 65536)
	for (uint64_t i = 0; i < n; i++)
		if (rowids[i] >= rows && i < bad)
			bad = i;
	if (bad != UINT64_MAX)
		return db_err(db, GPMDB_RANGE,
			      "table %s: row %llu does not exist (%llu rows)",
			      sch->name, (unsigned long long)rowids[bad],
			      (unsigned long long)rows);
	return GPMDB_OK;
}

/* The segment for the built log; its geometry must be the one built. */
static int bc_segment(gpmdb *db, uint32_t tid, uint64_t n, int ncols,
		      const uint32_t *cols, stg_gpu_layout *lay,
		      stg_hcl_seg *seg)
{
	hcl_geom g = hcl_geom_for(n, (uint32_t)(ncols ? ncols : 1));

	/* cols: the columns' write stamps (stg_col_stamp); a DELETE's 0
	 * stamps the table */
	/* values written in place: encoded tablets widened first */
	if ((ncols > 0 && stg_table_widen(db->pool, tid, 0, UINT64_MAX)) ||
	    stg_gpu_layout_get(db->pool, tid, lay) ||
	    stg_hcl_begin_gpu(db->pool, tid, ncols, cols, n,
			      (uint32_t)(ncols ? ncols : 1), seg))
		return db_err_stg(db);
	if (memcmp(&g, &seg->geom, sizeof(g)))
		return db_err(db, GPMDB_INTERNAL,
			      "CAP: the segment's geometry (%u blocks of %u, "
			      "%u entries) is not the one built",
			      seg->geom.nblocks, seg->geom.threads_per_block,
			      seg->geom.entries_per_thread);
	return GPMDB_OK;
}

int bcap_update(gpmdb *db, uint32_t tid, const stg_schema *sch, int ncols,
		const uint32_t *cols, const uint64_t *rowids, uint64_t n,
		const stg_col_batch *vals)
{
	stg_gpu_layout lay = {0};
	stg_hcl_seg seg;
	gpu_cap_batch *b = NULL;
	gpu_cap_timing t = {0};
	uint64_t added = 0, bytes = 0;
	double t0 = wp_now_ms(), cache_ms = 0, log_ms, data_ms;
	int rc, ph = wp_to(db, WP_KEYCHECK);

	if (ncols < 1 || ncols > 64) {
		wp_to(db, ph);
		return bc_decline("UPDATE", "more than 64 columns");
	}
	for (int k = 0; k < ncols; k++)
		if (cols[k] >= (uint32_t)sch->ncols ||
		    sch->cols[cols[k]].type == STG_T_TEXT) {
			wp_to(db, ph);
			return bc_decline("UPDATE",
					  "TEXT columns are written by the "
					  "CPU (no device string heap yet)");
		}
	if ((rc = bcap_check_rows(db, sch, ncols, cols, rowids, n, vals)))
		goto out;
	if ((rc = bc_build(db, "UPDATE", tid, sch, ncols, cols, rowids, n, &b,
			   &added, &t, &cache_ms)))
		goto out;
	/* the indexes: new keys checked, the rows' entries out */
	wp_to(db, WP_INDEX);
	if (stg_index_update_begin(db->pool, tid, ncols, cols, rowids, n,
				   vals)) {
		rc = db_err_stg(db);
		goto out;
	}
	wp_to(db, WP_RESERVE);
	if ((rc = bc_segment(db, tid, n, ncols, cols, &lay, &seg)))
		goto out;
	wp_to(db, WP_LOG);
	log_ms = wp_now_ms();
	if ((rc = bc_log(db, &seg, b, &t)))
		goto out;
	log_ms = wp_now_ms() - log_ms;
	wp_to(db, WP_DATA);
	data_ms = wp_now_ms();
	if (stg_cap_update_apply(db->pool, &lay, ncols, cols, rowids, n, vals,
				 &bytes) ||
	    stg_hcl_end(db->pool, tid, &seg, bytes, false, 0)) {
		rc = db_err_stg(db);
		goto out;
	}
	gpu_cap_note(1);
	data_ms = wp_now_ms() - data_ms;
	wp_bytes(db, WP_LOG, t.bytes);
	wp_to(db, WP_INDEX);
	if (stg_index_update_end(db->pool, tid, ncols, cols, rowids, n)) {
		rc = db_err_stg(db);
		goto out;
	}
	bc_done(n, &t, cache_ms, log_ms, data_ms, t0);
	rc = GPMDB_OK;
out:
	wp_to(db, ph);
	gpu_cap_free(b);
	stg_gpu_layout_free(&lay);
	return rc;
}

int bcap_delete(gpmdb *db, uint32_t tid, const stg_schema *sch,
		const uint64_t *rowids, uint64_t n)
{
	stg_gpu_layout lay = {0};
	stg_hcl_seg seg;
	gpu_cap_batch *b = NULL;
	gpu_cap_timing t = {0};
	uint64_t added = 0, set = 0;
	double t0 = wp_now_ms(), cache_ms = 0, log_ms, data_ms;
	int rc, ph = wp_to(db, WP_KEYCHECK);

	if ((rc = bcap_check_rows(db, sch, 0, NULL, rowids, n, NULL)))
		goto out;
	if ((rc = bc_build(db, "DELETE", tid, sch, 0, NULL, rowids, n, &b,
			   &added, &t, &cache_ms)))
		goto out;
	wp_to(db, WP_INDEX);
	if (stg_index_delete_rows(db->pool, tid, rowids, n)) {
		rc = db_err_stg(db);
		goto out;
	}
	wp_to(db, WP_RESERVE);
	if ((rc = bc_segment(db, tid, n, 0, NULL, &lay, &seg)))
		goto out;
	wp_to(db, WP_LOG);
	log_ms = wp_now_ms();
	if ((rc = bc_log(db, &seg, b, &t)))
		goto out;
	log_ms = wp_now_ms() - log_ms;
	wp_to(db, WP_DATA);
	data_ms = wp_now_ms();
	if (stg_cap_delete_apply(db->pool, &lay, rowids, n, &set)) {
		rc = db_err_stg(db);
		goto out;
	}
	/* the GPU logged the live rows; the bits that went from 0 to 1
	 * are the same rows (a row twice in the batch: logged twice, its
	 * bit set once), so the deleted count uses the bits */
	if (stg_hcl_end(db->pool, tid, &seg, 0, true, set)) {
		rc = db_err_stg(db);
		goto out;
	}
	gpu_cap_note(1);
	data_ms = wp_now_ms() - data_ms;
	wp_bytes(db, WP_LOG, t.bytes);
	bc_done(n, &t, cache_ms, log_ms, data_ms, t0);
	rc = GPMDB_OK;
out:
	wp_to(db, ph);
	gpu_cap_free(b);
	stg_gpu_layout_free(&lay);
	return rc;
}

bool bcap_select_ok(gpmdb *db, const stg_schema *sch, int ncols,
		    const uint32_t *cols)
{
	if (!bcap_wanted(db) || db->gpu_log || ncols < 1 || ncols > 64)
		return false;
	for (int k = 0; k < ncols; k++)
		if (sch->cols[cols[k]].type == STG_T_TEXT)
			return false;
	return gpu_available();
}

/*
 * Why: the executor's host result of an UPDATE by predicate (a rel of
 * 2.5M rows, its NOT NULL checks and retyping value by value, then the
 * storage arrays) made CAP's locate 95-131 ms against the CPU path's
 * 50-55 ms (H200, 50M rows; tpc/results/2026-11-27f-H200-batch-cap-
 * scopes.md). The GPU already holds the rows and the converted values:
 * they come down as the arrays themselves.
 */
int bcap_update_from_dev(gpmdb *db, uint32_t tid, const stg_schema *sch,
			 int ncols, const uint32_t *cols,
			 const uint64_t *drowids, uint64_t n, void *const *dv,
			 const uint32_t *const *dnl, const uint32_t *widths)
{
	stg_col_batch vals[64];
	uint64_t *rowids = malloc(8 * n + 8);
	size_t nw = ((size_t)n + 31) / 32 * 4;
	int rc = GPMDB_OK, ph = wp_to(db, WP_LOCATE);
	char err[512] = "";

	memset(vals, 0, sizeof(vals));
	if (!rowids)
		rc = GPMDB_NOMEM;
	else
		rc = gpu_download(rowids, drowids, 8 * n, err, sizeof(err));
	for (int k = 0; k < ncols && !rc; k++) {
		char *v = malloc((size_t)n * widths[k] + 8);
		uint32_t *nl = dnl[k] ? malloc(nw + 4) : NULL;

		vals[k].values = v;
		vals[k].nulls = nl;
		if (!v || (dnl[k] && !nl))
			rc = GPMDB_NOMEM;
		else if (!(rc = gpu_download(v, dv[k], (size_t)n * widths[k],
					     err, sizeof(err))) &&
			 nl)
			rc = gpu_download(nl, dnl[k], nw, err, sizeof(err));
	}
	wp_to(db, ph);
	if (rc)
		rc = db_err(db, rc,
			    "GPU UPDATE (CAP): the rows and values "
			    "down: %s",
			    rc == GPMDB_NOMEM ? "out of memory" : err);
	else
		rc = wp_update(db, tid, sch, ncols, cols, rowids, n, vals);
	if (!rc) {
		pthread_mutex_lock(&bc_lock);
		bc_stat.down_batches++;
		bc_stat.down_rows += n;
		pthread_mutex_unlock(&bc_lock);
	}
	for (int k = 0; k < ncols; k++) {
		free((void *)vals[k].values);
		free((void *)vals[k].nulls);
	}
	free(rowids);
	return rc;
}

int bcap_stat_rows(int (*row)(void *ctx, const char *name, double v), void *ctx,
		   char *why, size_t wlen)
{
	int rc = GPMDB_OK;

	pthread_mutex_lock(&bc_lock);
	const struct {
		const char *n;
		double v;
	} rows[] = {
	    {"cap_gpu_batches", (double)bc_stat.batches},
	    {"cap_gpu_rows", (double)bc_stat.rows},
	    {"cap_host", (double)bc_stat.host},
	    /* UPDATEs by predicate whose rows and values the GPU found */
	    {"cap_select_down_batches", (double)bc_stat.down_batches},
	    {"cap_select_down_rows", (double)bc_stat.down_rows},
	    {"last_cap_upload_ms", bc_stat.upload_ms},
	    {"last_cap_cache_ms", bc_stat.cache_ms},
	    {"last_cap_kernel_ms", bc_stat.kernel_ms},
	    {"last_cap_fetch_ms", bc_stat.fetch_ms},
	    {"last_cap_log_ms", bc_stat.log_ms},
	    {"last_cap_data_ms", bc_stat.data_ms},
	    {"last_cap_total_ms", bc_stat.total_ms},
	    {"last_cap_log_bytes", (double)bc_stat.log_bytes},
	};
	snprintf(why, wlen, "%s", bc_stat.host_why);
	pthread_mutex_unlock(&bc_lock);
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]) && !rc; i++)
		rc = row(ctx, rows[i].n, rows[i].v);
	return rc;
}
