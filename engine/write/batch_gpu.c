/*
 * batch_gpu.c - GPU INSERT/UPDATE/DELETE batches (docs/gpu.md "GPU
 * writes").
 *
 * Under PRAGMA backend = gpu, the rows that batch.c and dml.c would hand
 * to stg_append/stg_update/stg_delete are written by kernels straight
 * into the pool mapping, registered with CUDA (gpu/persist.cu):
 *   UPDATE/DELETE: storage allocates and logs an HCL segment
 *     (stg_hcl_begin_gpu), the kernels write each row's undo entries,
 *     tail and new value, each persisted before the next (gpu/dml.cu),
 *     storage logs the deleted count (stg_hcl_end);
 *   INSERT: storage checks NOT NULL and reserves the tablets
 *     (stg_append_reserve), the kernels write the rows past the count,
 *     storage logs the new count (stg_append_finish);
 *   INSERT ... SELECT over a table (bgpu_insert_select): the same, from
 *     the SELECT's result left on the device by the GPU projection,
 *     converted there to the table's storage arrays.
 * The commit record is the transaction's, as on the CPU.  The HCL format
 * is the CPU's, so recovery needs no GPU; when one is there it may do it
 * (bgpu_recovery_hook).
 *
 * PRAGMA gpu_log: hcl (default) or conventional (UPDATE entries appended
 * to gpu_log_partitions locked log partitions, the benchmark's baseline;
 * DELETE keeps HCL).  The segment format is HCL's either way.
 *
 * PRAGMA gpu_update_mode: auto (default), scatter or lines: how an HCL
 * UPDATE stores its new values, per row or as whole dirty 128-byte lines
 * (gpu/gpu_dml.h gpu_update_opts); auto chooses per column of the batch
 * by updated rows per dirty line against gpu_lines_min_density.
 *
 * PRAGMA gpu_persist: auto (kernels in pmem mode, the CPU-assisted path
 * in msync mode, where CUDA cannot register the file), kernel (kernels or
 * an error), cap (the CPU-assisted path: UPDATE/DELETE logged by the GPU
 * from the column cache and persisted by the host, batch_cap.c; INSERT
 * through the storage API), host (the host writes CAP batches alone, the
 * CAP before issue 16, kept to compare).  What cannot run on the GPU (TEXT
 * columns, no GPU, a mapping CUDA refuses) runs on the CPU, counted in
 * gpu_write_stats and the connection's cpu_fallbacks, or fails under
 * gpu_strict.
 *
 * GPU work of one connection is serialised here; the gpu_* layer has one
 * stream (docs/gpu.md).
 */
#include "batch_gpu.h"
#include "../../gpu/exec/exec_gpu_dev.h"
#include "batch_cap.h"
#include "batch_keep.h"
#include "batch_keys_gpu.h"

#include "../../gpu/cache.h"
#include "../../gpu/exec/exec_gpu_ops.h"
#include "../../gpu/gpu.h"
#include "../../gpu/gpu_dml.h"
#include "../../gpu/index_gpu.h"
#include "../../storage/stg_gpu.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

/* PRAGMA gpu_persist (batch_cap.h): host is the CAP of before issue 16 */
enum { BG_AUTO = 0, BG_KERNEL = 1, BG_CAP = 2, BG_HOST = 3 };
/* Conventional logging's default partition count: about one per SM of
 * an H100 (132), as a distributed log has about one per worker. */
#define BG_CONV_PARTS 128u
/* PRAGMA gpu_lines_min_density's default: auto writes a column's dirty
 * lines whole when the batch has at least this many updated rows per
 * dirty line.  17: more than an 8-byte column can have (16), because on
 * the H100 whole lines never beat the fused scattered stores in total
 * time at 0.1% .. 100% density (docs/gpu.md "Dense updates"). */
#define BG_LINES_DENSITY 17.0

/* Process-wide counters (PRAGMA gpu_write_stats). */
static struct {
	uint64_t gpu_batches, gpu_rows, gpu_bytes, cap_batches, fallbacks,
	    registrations, unregister_errors, conv_batches, line_batches,
	    registered_bytes;
	double last_upload_ms, last_log_ms, last_data_ms, last_total_ms;
	/* the last UPDATE's write of its values (gpu_dml_timing) */
	double last_mark_ms, last_lines_ms;
	uint64_t last_line_cols, last_dirty_lines, last_line_rows;
	char last_fallback[512];
	char last_op[16];
	/* INSERT ... SELECT (bgpu_insert_select): rows and statements
	 * written from device-resident SELECT results, statements whose
	 * rows went through the host instead and the last one's reason */
	uint64_t is_dev_rows, is_dev_batches, is_host;
	char is_host_why[400];
	/* UPDATE by predicate (bgpu_update_select): the same */
	uint64_t us_dev_rows, us_dev_batches, us_host;
	char us_host_why[400];
	/* the last GPU INSERT's reservation and pipeline (bg_ins_note):
	 * the GPU's setup (bg_choose), the unique-key check, the tablets,
	 * of which the pool's growth and the file's extension, and in the
	 * chunk hook the registration's populate and cudaHostRegister */
	double ins_setup_ms, ins_keycheck_ms, ins_tablets_ms, ins_grow_ms,
	    ins_extend_ms, ins_populate_ms, ins_register_ms;
	/* the key check's parts: encode, sort, neighbour and tree probe */
	double ins_key_alloc_ms, ins_key_enc_ms, ins_key_sort_ms,
	    ins_key_probe_ms;
	uint64_t ins_chunks;
	/* the last GPU UPDATE/DELETE's reservation (bg_upd_segment): log
	 * segment (widen, layout, allocation, of it growth), registration */
	/* UPDATE by predicate on the device: the values' conversion and
	 * the row ids' range (its bind phase) */
	double sel_convert_ms, sel_range_ms;
	double upd_segment_ms, upd_populate_ms, upd_register_ms, upd_widen_ms,
	    upd_layout_ms, upd_begin_ms, upd_grow_ms;
} bg_stat;
static pthread_mutex_t bg_lock = PTHREAD_MUTEX_INITIALIZER;

/* The CPU instead of the GPU: an error under gpu_strict, else counted. */
static int bg_fallback(gpmdb *db, const char *op, const char *why)
{
	int rc = exec_op_fallback(db, op, why);

	if (rc)
		return rc;
	pthread_mutex_lock(&bg_lock);
	bg_stat.fallbacks++;
	snprintf(bg_stat.last_fallback, sizeof(bg_stat.last_fallback), "%s: %s",
		 op, why);
	pthread_mutex_unlock(&bg_lock);
	return GPMDB_OK;
}

/* Whether kernels can store into the pool's GPU mapping: registers its
 * first page (CUDA refuses a mapping of an ext4 file).  The write
 * paths then register what their kernels touch (bg_register_write), not
 * the whole pool: pinning a pool of a few GB took about a second, paid
 * again after each growth. */
static int bg_register(gpmdb *db, char *why, size_t wlen)
{
	uint64_t len = 0, r[2] = {0, 4096};
	void *base = stg_pool_base(db->pool, &len);
	int rc;

	/* kernels store through the pool's GPU mapping (storage's second
	 * shared mapping on shmem: its registrations outlive the base's
	 * flips to private), unless the base is pinned whole
	 * (GPMDB_GPU_PIN_POOL, exec_gpu_src.c xg_register) */
	if (!gpu_pm_is_registered(base, len))
		base = stg_pool_gpu_base(db->pool, &len);

	if (db->gpu_reg_base && db->gpu_reg_base != base)
		gpu_pm_ranges_drop(db->gpu_reg_base); /* remapped */
	rc = gpu_pm_ensure(base, len, r, 1, NULL, why, wlen);
	if (rc != GPMDB_OK)
		return rc;
	if (db->gpu_reg_base != base || db->gpu_reg_len != len)
		bg_stat.registrations++;
	db->gpu_reg_base = base;
	db->gpu_reg_len = len;
	return GPMDB_OK;
}

int bgpu_register(gpmdb *db, char *why, size_t wlen)
{
	return bg_register(db, why, wlen);
}

/* Registers what a write's kernels touch: the tablets of rows [row_lo,
 * row_end) (the columns in cmask, their NULL bitmaps, the deleted
 * bitmaps) and the log segment [seg_off, seg_off + seg_size); what was
 * registered stays for the next writes.  Only the tablets of the rows
 * written: a connection that went beside readers (a backup's snapshot)
 * lost its registrations, and registering whole columns of a big table
 * again took the next 10,000-row UPDATE half a second
 * (tpc/results/backup-20gb-gpu-writer-2026-11-29-H200.md). */
static int bg_register_write(gpmdb *db, const gpu_tab_layout *gl,
			     uint64_t seg_off, uint64_t seg_size,
			     uint64_t row_lo, uint64_t row_end,
			     unsigned long long cmask, char *err, size_t errlen)
{
	uint64_t *r, nr, added = 0;
	int rc = bg_register(db, err, errlen);

	if (rc != GPMDB_OK)
		return rc;
	r = malloc(16 * ((size_t)gl->ntab * (2 * gl->ncols + 1) + 4));
	if (!r) {
		snprintf(err, errlen, "out of memory");
		return GPMDB_NOMEM;
	}
	nr = gpu_write_ranges(db->gpu_reg_len, seg_off, seg_off + seg_size, gl,
			      row_lo, row_end, cmask, 1, r);
	rc = gpu_pm_ensure(db->gpu_reg_base, db->gpu_reg_len, r, (uint32_t)nr,
			   &added, err, errlen);
	free(r);
	pthread_mutex_lock(&bg_lock);
	bg_stat.registered_bytes += added;
	pthread_mutex_unlock(&bg_lock);
	return rc;
}

/*
 * Which path: 1 kernels (the pool registered), 0 the CPU (counted when
 * the GPU was wanted), -1 an error set on db.
 */
static int bg_choose(gpmdb *db, const char *op, bool has_text)
{
	char why[600];

	if (db->backend != 2)
		return 0;
	if (db->gpu_persist == BG_CAP || db->gpu_persist == BG_HOST) {
		pthread_mutex_lock(&bg_lock);
		bg_stat.cap_batches++;
		pthread_mutex_unlock(&bg_lock);
		return 0;
	}
	if (has_text)
		return bg_fallback(db, op,
				   "TEXT columns are written by the CPU (no "
				   "device string heap yet)")
			   ? -1
			   : 0;
	if (stg_pool_writes_private(db->pool)) {
		if (db->gpu_persist == BG_KERNEL) {
			db_err(db, GPMDB_UNSUPPORTED,
			       "PRAGMA gpu_persist = kernel: the pool is in "
			       "msync mode (an ordinary file system), which "
			       "CUDA cannot map for kernels to store into; "
			       "use gpu_persist = cap or auto");
			return -1;
		}
		/* auto: msync mode is what the CPU-assisted path is for */
		pthread_mutex_lock(&bg_lock);
		bg_stat.cap_batches++;
		pthread_mutex_unlock(&bg_lock);
		return 0;
	}
	if (gpu_init(why, sizeof(why)) != GPMDB_OK)
		return bg_fallback(db, op, why) ? -1 : 0;
	if (bg_register(db, why, sizeof(why)) != GPMDB_OK) {
		if (db->gpu_persist == BG_KERNEL) {
			db_err(db, GPMDB_UNSUPPORTED,
			       "PRAGMA gpu_persist = kernel: %s", why);
			return -1;
		}
		return bg_fallback(db, op, why) ? -1 : 0;
	}
	return 1;
}

static void bg_done(gpmdb *db, const char *op, uint64_t rows,
		    const gpu_dml_timing *t)
{
	/* the shell's .timer shows it as GPU time */
	db->gstat.gpu_ns += (uint64_t)(t->total_ms * 1e6);
	pthread_mutex_lock(&bg_lock);
	bg_stat.gpu_batches++;
	bg_stat.gpu_rows += rows;
	bg_stat.gpu_bytes += t->bytes;
	bg_stat.last_upload_ms = t->upload_ms;
	bg_stat.last_log_ms = t->log_ms;
	bg_stat.last_data_ms = t->data_ms;
	bg_stat.last_total_ms = t->total_ms;
	if (!strcmp(op, "UPDATE")) {
		bg_stat.last_mark_ms = t->mark_ms;
		bg_stat.last_lines_ms = t->lines_ms;
		bg_stat.last_line_cols = t->line_cols;
		bg_stat.last_dirty_lines = t->dirty_lines;
		bg_stat.last_line_rows = t->line_rows;
		bg_stat.line_batches += t->line_cols > 0;
	}
	snprintf(bg_stat.last_op, sizeof(bg_stat.last_op), "%s", op);
	pthread_mutex_unlock(&bg_lock);
}

/* The write phases (write_phases.h) of a batch's kernels: the caller
 * charged their wall time to data; their own timing moves the upload and
 * the logging kernels' parts, and up counts the bytes sent (row ids,
 * values, NULL bitmaps, the tablet layout). */
static void bg_phases(gpmdb *db, const gpu_dml_timing *t, uint64_t up,
		      uint64_t log)
{
	wp_move(db, WP_DATA, WP_UPLOAD, (uint64_t)(t->upload_ms * 1e6));
	wp_move(db, WP_DATA, WP_LOG, (uint64_t)(t->log_ms * 1e6));
	wp_bytes(db, WP_UPLOAD, up);
	wp_bytes(db, WP_LOG, log);
	wp_note_gpu(db);
}

/* The HCL entries and tails the UPDATE/DELETE kernels store (gpu/dml.cu)
 * for n rows of ncols values. */
static uint64_t bg_log_bytes(uint64_t n, int ncols)
{
	return 4ull * HCL_ENTRY_WORDS * (uint64_t)ncols * n + 4 * n;
}

static void bg_glay(const stg_gpu_layout *l, gpu_tab_layout *g)
{
	g->tab = l->tab;
	g->ntab = l->ntab;
	g->stride = l->stride;
	g->widths = l->widths;
	g->ncols = l->ncols;
}

/* Where a GPU INSERT's host time went, kept for PRAGMA gpu_write_stats
 * (docs/gpu.md "INSERT pipeline"): storage's and the registration's
 * cumulative timers read before (b) and after (a). */
typedef struct {
	stg_write_times w;
	uint64_t pop_ns, reg_ns;
} bg_ins_times;

static void bg_ins_times_get(gpmdb *db, bg_ins_times *t)
{
	stg_get_write_times(db->pool, &t->w);
	gpu_pm_range_times(&t->pop_ns, &t->reg_ns);
}

static void bg_ins_note(const bg_ins_times *b, const bg_ins_times *a,
			double setup_ms, uint64_t chunks)
{
	pthread_mutex_lock(&bg_lock);
	bg_stat.ins_setup_ms = setup_ms;
	bg_stat.ins_keycheck_ms = (a->w.key_check_ns - b->w.key_check_ns) / 1e6;
	bg_stat.ins_key_alloc_ms =
	    (a->w.key_alloc_ns - b->w.key_alloc_ns) / 1e6;
	bg_stat.ins_key_enc_ms = (a->w.key_enc_ns - b->w.key_enc_ns) / 1e6;
	bg_stat.ins_key_sort_ms = (a->w.key_sort_ns - b->w.key_sort_ns) / 1e6;
	bg_stat.ins_key_probe_ms =
	    (a->w.key_probe_ns - b->w.key_probe_ns) / 1e6;
	bg_stat.ins_tablets_ms = (a->w.tablets_ns - b->w.tablets_ns) / 1e6;
	bg_stat.ins_grow_ms = (a->w.grow_ns - b->w.grow_ns) / 1e6;
	bg_stat.ins_extend_ms = (a->w.extend_ns - b->w.extend_ns) / 1e6;
	bg_stat.ins_populate_ms = (a->pop_ns - b->pop_ns) / 1e6;
	bg_stat.ins_register_ms = (a->reg_ns - b->reg_ns) / 1e6;
	bg_stat.ins_chunks = chunks;
	pthread_mutex_unlock(&bg_lock);
}

/* INSERT's rows [*start, *start + n) reserved in table tid, in the
 * WP_RESERVE phase: tablets (reserving may grow and remap the pool; the
 * unique keys are checked there too, their time moved to WP_KEYCHECK),
 * then the pool's layout (*lay, the caller frees it) and the mapping's
 * base brought up to date (db->gpu_reg_base: a growth maps the pool
 * again).  The tablets themselves are registered chunk by chunk by the
 * INSERT pipeline (bg_chunk). */
static int bg_reserve(gpmdb *db, uint32_t tid, const stg_col_batch *cols,
		      const uint8_t *from, uint64_t n, uint64_t *start,
		      stg_gpu_layout *lay, gpu_tab_layout *gl)
{
	stg_write_times w0, w1;
	char err[600];

	wp_to(db, WP_RESERVE);
	stg_get_write_times(db->pool, &w0);
	if (stg_append_reserve_from(db->pool, tid, cols, from, n, start) ||
	    stg_gpu_layout_get(db->pool, tid, lay))
		return db_err_stg(db);
	stg_get_write_times(db->pool, &w1);
	wp_move(db, WP_RESERVE, WP_KEYCHECK, w1.key_check_ns - w0.key_check_ns);
	bg_glay(lay, gl);
	if (bg_register(db, err, sizeof(err)))
		return db_err(db, GPMDB_GPU, "%s", err);
	return GPMDB_OK;
}

/* Bytes of tablets the INSERT pipeline registers at a time: a
 * cudaHostRegister call costs about a millisecond of its own, and the
 * chunks are a tablet (about 29 MB for 28-byte rows) or less. */
#define BG_REG_AHEAD (128ull << 20)

/* The INSERT pipeline's chunk hook (gpu_append_chunk_fn): registers the
 * tablets up to the chunk's end and about BG_REG_AHEAD bytes of rows
 * past it (rows up to end), in WP_RESERVE, while the earlier chunks go
 * up and are stored. */
typedef struct {
	gpmdb *db;
	const gpu_tab_layout *gl;
	uint64_t chunks, end, reg_end, start; /* rows [start, end) */
} bg_chunk_ctx;

static int bg_chunk(void *ctx, uint64_t r0, uint64_t r1, char *err,
		    size_t errlen)
{
	bg_chunk_ctx *c = ctx;
	uint64_t rowb = 0, to;
	int ph, rc = GPMDB_OK;

	(void)r0;
	/* a kill here finds earlier chunks stored or in flight, past the
	 * row count: the table is its before-image (crash_gpu_dml) */
	if (c->chunks++)
		stg_crash_point("append.chunk");
	if (r1 <= c->reg_end)
		return GPMDB_OK;
	ph = wp_to(c->db, WP_RESERVE);
	for (uint32_t k = 0; k < c->gl->ncols; k++)
		rowb += c->gl->widths[k];
	to = r1 + BG_REG_AHEAD / (rowb ? rowb : 1);
	if (to > c->end || to < r1)
		to = c->end;
	rc = bg_register_write(c->db, c->gl, 0, 0, c->start, to, ~0ull, err,
			       errlen);
	if (rc == GPMDB_OK)
		c->reg_end = to;
	wp_to(c->db, ph);
	return rc;
}

static bool bg_table_has_text(gpmdb *db, uint32_t tid, stg_schema **out)
{
	stg_schema *sch = NULL;
	bool t = false;

	*out = NULL;
	if (stg_table_schema(db->pool, tid, &sch) != GPMDB_OK)
		return false; /* the CPU path reports it */
	for (int c = 0; c < sch->ncols; c++)
		if (sch->cols[c].type == STG_T_TEXT)
			t = true;
	*out = sch;
	return t;
}

static int bg_cpu_append(gpmdb *db, uint32_t tid, const stg_col_batch *cols,
			 const uint8_t *from, uint64_t n)
{
	return stg_append_from(db->pool, tid, cols, from, n) ? db_err_stg(db)
							     : GPMDB_OK;
}

int bgpu_append(gpmdb *db, uint32_t tid, const stg_col_batch *cols,
		const uint8_t *from, uint64_t nrows)
{
	stg_schema *sch = NULL;
	stg_gpu_layout lay = {0};
	gpu_tab_layout gl;
	gpu_dml_timing t = {0};
	const void **vals = NULL;
	const uint32_t **nls = NULL;
	uint32_t *srcw = NULL;
	uint64_t start = 0, up;
	bg_ins_times tb, ta;
	bg_chunk_ctx cc = {db, &gl, 0, 0, 0};
	double setup_ms;
	char err[600];
	int want, rc, ph;
	bgk_keep kc;
	bool keep = false;

	if (db->backend != 2 || nrows == 0)
		return bg_cpu_append(db, tid, cols, from, nrows);
	/* the GPU's setup and the pool's registration */
	bg_ins_times_get(db, &tb);
	setup_ms = wp_now_ms();
	ph = wp_to(db, WP_RESERVE);
	want = bg_choose(db, "INSERT", bg_table_has_text(db, tid, &sch));
	wp_to(db, ph);
	setup_ms = wp_now_ms() - setup_ms;
	if (want <= 0 || !sch) {
		stg_schema_free(sch);
		return want < 0 ? db->errcode
				: bg_cpu_append(db, tid, cols, from, nrows);
	}
	vals = calloc((size_t)sch->ncols + 1, sizeof(*vals));
	nls = calloc((size_t)sch->ncols + 1, sizeof(*nls));
	srcw = calloc((size_t)sch->ncols + 1, sizeof(*srcw));
	if (!vals || !nls || !srcw) {
		rc = db_err(db, GPMDB_NOMEM, "out of memory");
		goto out;
	}
	for (int c = 0; c < sch->ncols; c++) {
		vals[c] = cols[c].values;
		nls[c] = cols[c].nulls;
		/* INT32 arrays of BIGINT columns go up as they are and are
		 * widened by the kernels (bind makes no 8-byte copy) */
		srcw[c] = from && from[c] == STG_FROM_I32
			      ? 4
			      : (uint32_t)stg_type_width(sch->cols[c].type);
	}
	if ((rc = bg_reserve(db, tid, cols, from, nrows, &start, &lay, &gl)))
		goto out;
	cc.start = start;
	cc.end = start + nrows;
	wp_to(db, WP_DATA);
	keep = bgk_alloc(db, tid, sch, start, nrows, nls, &kc);
	rc = gpu_append_keep(db->gpu_reg_base, &gl, start, nrows, vals, nls,
			     srcw, bg_chunk, &cc, keep ? &kc.copies : NULL, &t,
			     err, sizeof(err));
	bg_ins_times_get(db, &ta);
	bg_ins_note(&tb, &ta, setup_ms, cc.chunks);
	if (rc) {
		/* the rows past the count are invisible: the statement's
		 * rollback leaves the table as it was */
		rc = db_err(db, rc, "GPU INSERT: %s", err);
		goto out;
	}
	/* the new count through the log, and the rows' index entries
	 * (storage adds them in the same call: most of its time) */
	wp_to(db, WP_INDEX);
	if (stg_append_finish(db->pool, tid, start, nrows, t.bytes)) {
		rc = db_err_stg(db);
		goto out;
	}
	if (keep)
		bgk_adopt(db, tid, sch, nrows, &kc);
	/* the rows went up from the host: PRAGMA gpu_stats shows it, as it
	 * shows the uploads of query inputs */
	up = (uint64_t)lay.ntab * lay.stride * 8;
	for (uint32_t c = 0; c < gl.ncols; c++)
		up += nrows * srcw[c] + (nls[c] ? (nrows + 31) / 32 * 4 : 0);
	db->gstat.bytes_uploaded += up - (uint64_t)lay.ntab * lay.stride * 8;
	bg_phases(db, &t, up, 0);
	bg_done(db, "INSERT", nrows, &t);
	rc = GPMDB_OK;
out:
	wp_to(db, ph);
	if (keep)
		bgk_free(sch, &kc);
	free(vals);
	free(nls);
	free(srcw);
	stg_gpu_layout_free(&lay);
	stg_schema_free(sch);
	return rc;
}

/* Checks of stg_update that the GPU path does itself, with its words;
 * in the same pass the rows [span[0], span[1]) that rowids[0..n) fall in
 * (n > 0): the tablets a write of them registers (bg_register_write). */
static int bg_check_rows(gpmdb *db, const stg_schema *sch, uint64_t rows,
			 const uint64_t *rowids, uint64_t n, uint64_t span[2])
{
	uint64_t lo = UINT64_MAX, hi = 0;

	for (uint64_t i = 0; i < n; i++) {
		lo = rowids[i] < lo ? rowids[i] : lo;
		hi = rowids[i] > hi ? rowids[i] : hi;
	}
	span[0] = lo;
	span[1] = hi + 1;
	for (uint64_t i = 0; hi >= rows && i < n; i++)
		if (rowids[i] >= rows) /* the first one, as stg_update says */
			return db_err(db, GPMDB_RANGE,
				      "table %s: row %llu does not exist "
				      "(%llu rows)",
				      sch->name, (unsigned long long)rowids[i],
				      (unsigned long long)rows);
	return GPMDB_OK;
}

/* An UPDATE batch's HCL segment of nthreads threads, epp entries each
 * (storage stamps cols), the table's layout, and the registration of
 * what the kernels write; the connection's error set on failure. */
static int bg_upd_segment(gpmdb *db, uint32_t tid, int ncols,
			  const uint32_t *cols, uint64_t nthreads, uint32_t epp,
			  const uint64_t rows[2], stg_gpu_layout *lay,
			  gpu_tab_layout *gl, stg_hcl_seg *seg)
{
	unsigned long long cm = 0;
	char err[600];
	double t0 = wp_now_ms(), t1, tw, tl;
	uint64_t p0, r0, p1, r1;
	stg_write_times w0, w1;
	int rc;

	stg_get_write_times(db->pool, &w0);
	/* the kernels write values in place: encoded tablets widened
	 * first, on the host (GPU UPDATE of encoded values: not built) */
	if (ncols > 0 && stg_table_widen(db->pool, tid, 0, UINT64_MAX))
		return db_err_stg(db);
	tw = wp_now_ms();
	if (stg_gpu_layout_get(db->pool, tid, lay))
		return db_err_stg(db);
	tl = wp_now_ms();
	if (stg_hcl_begin_gpu(db->pool, tid, ncols, cols, nthreads, epp, seg))
		return db_err_stg(db);
	stg_get_write_times(db->pool, &w1);
	/* after the segment's allocation: the mapping is final now */
	bg_glay(lay, gl);
	for (int k = 0; k < ncols; k++)
		cm |= 1ull << (cols[k] < 63 ? cols[k] : 63);
	t1 = wp_now_ms();
	gpu_pm_range_times(&p0, &r0);
	rc = bg_register_write(db, gl, seg->seg_off, seg->seg_size, rows[0],
			       rows[1] < lay->row_count ? rows[1]
							: lay->row_count,
			       cm, err, sizeof(err));
	gpu_pm_range_times(&p1, &r1);
	pthread_mutex_lock(&bg_lock);
	bg_stat.upd_segment_ms = t1 - t0;
	bg_stat.upd_widen_ms = tw - t0;
	bg_stat.upd_layout_ms = tl - tw;
	bg_stat.upd_begin_ms = t1 - tl;
	bg_stat.upd_grow_ms = (w1.grow_ns - w0.grow_ns) / 1e6;
	bg_stat.upd_populate_ms = (p1 - p0) / 1e6;
	bg_stat.upd_register_ms = (r1 - r0) / 1e6;
	pthread_mutex_unlock(&bg_lock);
	if (rc)
		return db_err(db, GPMDB_GPU, "%s", err);
	return GPMDB_OK;
}

/* gpu_update_mode and gpu_lines_min_density as the kernels take them */
static gpu_update_opts bg_upd_opts(const gpmdb *db)
{
	gpu_update_opts uo = {db->gpu_upd_mode, db->gpu_lines_density > 0
						    ? db->gpu_lines_density
						    : BG_LINES_DENSITY};
	return uo;
}

static int bg_update(gpmdb *db, uint32_t tid, int ncols, const uint32_t *cols,
		     const uint64_t *rowids, uint64_t n,
		     const stg_col_batch *vals)
{
	stg_schema *sch = NULL;
	stg_gpu_layout lay = {0};
	stg_hcl_seg seg;
	gpu_tab_layout gl;
	gpu_dml_timing t = {0};
	const void *v[64];
	const uint32_t *nl[64];
	bool text = false;
	char err[600];
	uint64_t epp, up, span[2];
	uint32_t nparts;
	int want, rc, ph = -1;

	if (db->backend != 2 || n == 0)
		goto cpu;
	if (stg_table_schema(db->pool, tid, &sch) != GPMDB_OK)
		goto cpu; /* the CPU path reports it */
	for (int k = 0; k < ncols; k++) {
		if (cols[k] >= (uint32_t)sch->ncols)
			goto cpu;
		if (sch->cols[cols[k]].type == STG_T_TEXT)
			text = true;
	}
	if (ncols > 64) {
		if ((rc = bg_fallback(db, "UPDATE", "more than 64 columns")))
			goto out;
		goto cpu;
	}
	ph = wp_to(db, WP_RESERVE); /* the GPU's setup, the registration */
	want = bg_choose(db, "UPDATE", text);
	if (want < 0) {
		rc = db->errcode;
		goto out;
	}
	if (want == 0 && bcap_wanted(db)) {
		/* msync mode or gpu_persist = cap: the GPU logs, the host
		 * persists (batch_cap.c); declined: the host alone */
		rc = bcap_update(db, tid, sch, ncols, cols, rowids, n, vals);
		if (rc != BCAP_DECLINED)
			goto out;
	}
	if (want == 0) {
		wp_to(db, ph);
		goto cpu;
	}
	wp_to(db, WP_KEYCHECK); /* stg_update's checks, made here */
	for (int k = 0; k < ncols; k++) {
		const stg_column_info *ci = &sch->cols[cols[k]];

		v[k] = vals[k].values;
		nl[k] = vals[k].nulls;
		if ((ci->flags & STG_COL_NOTNULL) && nl[k])
			for (uint64_t i = 0; i < n; i++)
				if ((nl[k][i >> 5] >> (i & 31)) & 1u) {
					rc = db_err(db, GPMDB_CONSTRAINT,
						    "NOT NULL constraint "
						    "failed: %s.%s (updated "
						    "row %llu)",
						    sch->name, ci->name,
						    (unsigned long long)i + 1);
					goto out;
				}
	}
	if ((rc = bg_check_rows(db, sch, stg_row_count(db->pool, tid), rowids,
				n, span)))
		goto out;
	/* the indexes: new keys checked, the rows' entries out (storage) */
	wp_to(db, WP_INDEX);
	if (stg_index_update_begin(db->pool, tid, ncols, cols, rowids, n,
				   vals)) {
		rc = db_err_stg(db);
		goto out;
	}
	/* conventional logging: partition p is HCL thread p of a segment
	 * of nparts threads holding ceil(n / nparts) rows' entries each */
	nparts = db->gpu_log_parts ? db->gpu_log_parts : BG_CONV_PARTS;
	epp = db->gpu_log ? ((n + nparts - 1) / nparts) * (uint64_t)ncols
			  : (uint64_t)ncols;
	if (epp > UINT32_MAX) {
		rc = db_err(db, GPMDB_TOOBIG,
			    "GPU UPDATE: %llu log entries per partition",
			    (unsigned long long)epp);
		goto out;
	}
	wp_to(db, WP_RESERVE); /* the log segment, the registration */
	if ((rc = bg_upd_segment(db, tid, ncols, cols, db->gpu_log ? nparts : n,
				 (uint32_t)epp, span, &lay, &gl, &seg)))
		goto out;
	wp_to(db, WP_DATA);
	if (db->gpu_log)
		rc = gpu_conv_update(db->gpu_reg_base, seg.seg_off, &seg.geom,
				     &gl, rowids, n, ncols, cols, v, nl, nparts,
				     &t, err, sizeof(err));
	else {
		gpu_update_opts uo = bg_upd_opts(db);

		rc = gpu_hcl_update(db->gpu_reg_base, seg.seg_off, &seg.geom,
				    &gl, rowids, n, ncols, cols, v, nl,
				    db->gpu_scope, &uo, &t, err, sizeof(err));
	}
	if (rc) {
		/* the statement's rollback undoes what the log holds */
		rc = db_err(db, rc, "GPU UPDATE: %s", err);
		goto out;
	}
	up = (uint64_t)lay.ntab * lay.stride * 8 + 8 * n;
	for (int k = 0; k < ncols; k++)
		up += n * lay.widths[cols[k]] + (nl[k] ? (n + 31) / 32 * 4 : 0);
	bg_phases(db, &t, up, bg_log_bytes(n, ncols));
	wp_to(db, WP_LOG); /* the batch's end through the log */
	if (stg_hcl_end(db->pool, tid, &seg, t.bytes, false, 0)) {
		rc = db_err_stg(db);
		goto out;
	}
	wp_to(db, WP_INDEX);
	if (stg_index_update_end(db->pool, tid, ncols, cols, rowids, n)) {
		rc = db_err_stg(db);
		goto out;
	}
	bg_done(db, "UPDATE", n, &t);
	if (db->gpu_log) {
		pthread_mutex_lock(&bg_lock);
		bg_stat.conv_batches++;
		pthread_mutex_unlock(&bg_lock);
	}
	rc = GPMDB_OK;
out:
	wp_to(db, ph);
	stg_gpu_layout_free(&lay);
	stg_schema_free(sch);
	return rc;
cpu:
	stg_schema_free(sch);
	return stg_update(db->pool, tid, ncols, cols, rowids, n, vals)
		   ? db_err_stg(db)
		   : GPMDB_OK;
}

/*
 * The updated number columns' copies in the GPU column cache get the new
 * values too (gcache_write_through), so the statement after an UPDATE
 * finds its columns in HBM instead of loading them again from the pool
 * (a 50M-row column: the most of a 2.5M-row UPDATE's time).  before[k]:
 * column k's write stamp before the UPDATE.
 */
static void bg_write_through(gpmdb *db, uint32_t tid, int ncols,
			     const uint32_t *cols, const uint64_t *before,
			     const uint64_t *rowids, uint64_t n,
			     const stg_col_batch *vals)
{
	stg_schema *sch = NULL;

	if (!gcache_holds(db->gpu_owner, tid))
		return;
	/* one value a row: strictly increasing row ids (an UPDATE names a
	 * row once; a batch that does not say so leaves the copies to go
	 * stale), checked once for all the columns */
	for (uint64_t j = 1; j < n; j++)
		if (rowids[j] <= rowids[j - 1])
			return;
	if (stg_table_schema(db->pool, tid, &sch) != GPMDB_OK)
		return;
	exec_gpu_lock();
	for (int k = 0; k < ncols; k++) {
		stg_type t = sch->cols[cols[k]].type;

		if (t != STG_T_TEXT)
			gcache_write_through(db->pool, db->gpu_owner, tid,
					     (int)cols[k], before[k], rowids, n,
					     vals[k].values, vals[k].nulls,
					     (uint32_t)stg_type_width(t), 0);
	}
	exec_gpu_unlock();
	stg_schema_free(sch);
}

int bgpu_update(gpmdb *db, uint32_t tid, int ncols, const uint32_t *cols,
		const uint64_t *rowids, uint64_t n, const stg_col_batch *vals)
{
	uint64_t before[64];
	int rc;

	for (int k = 0; k < ncols && k < 64; k++)
		before[k] = stg_col_stamp(db->pool, tid, (int)cols[k]);
	rc = bg_update(db, tid, ncols, cols, rowids, n, vals);
	if (rc == GPMDB_OK && ncols <= 64 && n)
		bg_write_through(db, tid, ncols, cols, before, rowids, n, vals);
	return rc;
}

int bgpu_delete(gpmdb *db, uint32_t tid, const uint64_t *rowids, uint64_t n)
{
	stg_schema *sch = NULL;
	stg_gpu_layout lay = {0};
	stg_hcl_seg seg;
	gpu_tab_layout gl;
	gpu_dml_timing t = {0};
	uint64_t added = 0, span[2];
	char err[600];
	int want, rc, ph = -1;

	if (db->backend != 2 || n == 0 ||
	    stg_table_schema(db->pool, tid, &sch) != GPMDB_OK)
		goto cpu;
	ph = wp_to(db, WP_RESERVE); /* the GPU's setup, the registration */
	want = bg_choose(db, "DELETE", false);
	if (want < 0) {
		rc = db->errcode;
		goto out;
	}
	if (want == 0 && bcap_wanted(db)) {
		rc = bcap_delete(db, tid, sch, rowids, n); /* batch_cap.c */
		if (rc != BCAP_DECLINED)
			goto out;
	}
	if (want == 0) {
		wp_to(db, ph);
		goto cpu;
	}
	wp_to(db, WP_KEYCHECK);
	if ((rc = bg_check_rows(db, sch, stg_row_count(db->pool, tid), rowids,
				n, span)))
		goto out;
	wp_to(db, WP_INDEX);
	if (stg_index_delete_rows(db->pool, tid, rowids, n)) {
		rc = db_err_stg(db);
		goto out;
	}
	wp_to(db, WP_RESERVE);
	if (stg_gpu_layout_get(db->pool, tid, &lay) ||
	    stg_hcl_begin_gpu(db->pool, tid, 0, NULL, n, 1, &seg)) {
		rc = db_err_stg(db);
		goto out;
	}
	bg_glay(&lay, &gl);
	if (bg_register_write(db, &gl, seg.seg_off, seg.seg_size, span[0],
			      span[1] < lay.row_count ? span[1] : lay.row_count,
			      0, err, sizeof(err))) {
		rc = db_err(db, GPMDB_GPU, "%s", err);
		goto out;
	}
	wp_to(db, WP_DATA);
	rc = gpu_hcl_delete(db->gpu_reg_base, seg.seg_off, &seg.geom, &gl,
			    rowids, n, db->gpu_scope, &added, &t, err,
			    sizeof(err));
	if (rc) {
		rc = db_err(db, rc, "GPU DELETE: %s", err);
		goto out;
	}
	bg_phases(db, &t, (uint64_t)lay.ntab * lay.stride * 8 + 8 * n,
		  bg_log_bytes(n, 1));
	wp_to(db, WP_LOG); /* the deleted count through the log */
	if (stg_hcl_end(db->pool, tid, &seg, t.bytes, true, added)) {
		rc = db_err_stg(db);
		goto out;
	}
	bg_done(db, "DELETE", n, &t);
	rc = GPMDB_OK;
out:
	wp_to(db, ph);
	stg_gpu_layout_free(&lay);
	stg_schema_free(sch);
	return rc;
cpu:
	stg_schema_free(sch);
	return stg_delete(db->pool, tid, rowids, n) ? db_err_stg(db) : GPMDB_OK;
}

/* ---- INSERT ... SELECT from device results -------------------------- */

/* A DEFAULT value (already the column's type) as the storage bits that
 * rcol_to_storage would write. */
static uint64_t bg_default_bits(const sval *v, stg_type t)
{
	uint64_t u = 0;
	float f;

	switch (t) {
	case STG_T_INT:
	case STG_T_DATE:
		return (uint32_t)(int32_t)v->u.i;
	case STG_T_BOOLEAN:
		return (uint8_t)v->u.i;
	case STG_T_FLOAT:
		f = (float)v->u.r;
		memcpy(&u, &f, 4);
		return u;
	case STG_T_DOUBLE:
		memcpy(&u, &v->u.r, 8);
		return u;
	default: /* BIGINT, DECIMAL */
		return (uint64_t)v->u.i;
	}
}

/* The SQL type of a device column's values (VEC_NULL: BC_T_NULL). */
static int bg_col_class(int coltype)
{
	switch (coltype) {
	case BC_COL_INT32:
	case BC_COL_INT64:
		return BC_T_INT;
	case BC_COL_FLOAT:
	case BC_COL_DOUBLE:
		return BC_T_REAL;
	case BC_COL_DEC:
		return BC_T_DEC;
	case BC_COL_DATE:
		return BC_T_DATE;
	case BC_COL_BOOL:
		return BC_T_BOOL;
	case BC_COL_TEXT:
		return BC_T_TEXT;
	}
	return BC_T_NULL;
}

/* A statement of a device path (INSERT ... SELECT, UPDATE by predicate)
 * whose rows go through the host (the general path) instead: counted in
 * *count, with the reason in why_to (bg_stat's, 400 bytes). */
static void bg_went_host(uint64_t *count, char *why_to, const char *why)
{
	pthread_mutex_lock(&bg_lock);
	(*count)++;
	snprintf(why_to, sizeof(bg_stat.is_host_why), "%s", why);
	pthread_mutex_unlock(&bg_lock);
}

/* Points the conversion source s at device column g, which the plan
 * types as `from`.  Returns false, with the reason in why, when the
 * GPU's output type is not the plan's (the host's conversion, xg_fetch's
 * rel_put_vec, decides those). */
static bool bg_src_from_dev(gpu_ins_src *s, const gpu_col *g, etype from,
			    const char *col, char *why, size_t whysz)
{
	if (from.t == BC_T_NULL) {
		/* typed NULL by the plan: every value is NULL on the CPU
		 * whatever the program's register type */
		s->src = VEC_NULL;
		return true;
	}
	if (g->type != VEC_NULL &&
	    (bg_col_class(g->type) != from.t ||
	     (from.t == BC_T_DEC && g->scale != from.scale))) {
		snprintf(why, whysz,
			 "column %s: the GPU's result type differs from the "
			 "plan's (%s)",
			 col, et_name(from));
		return false;
	}
	s->data = g->data;
	s->nulls = g->nulls;
	s->src = g->type;
	s->src_scale = g->scale;
	return true;
}

/*
 * INSERT ... SELECT under backend=gpu when the SELECT is a GPU projection
 * or filter over a table scan (docs/gpu.md "INSERT ... SELECT"): the
 * result stays on the device (exec_gpu_select_dev), is converted there
 * to the table's storage arrays (gpu_ins_convert), checked (NOT NULL on
 * the device; unique keys by storage on the host, which needs the key
 * columns: only those are downloaded), and the insert kernel copies the
 * arrays into the reserved tablets (gpu_append_dev), persisted; then the
 * row count commits through the metadata log, as for bgpu_append.
 * *done false: the caller runs the general path (SELECT to the host,
 * insert_rel, bgpu_append), counted in gpu_write_stats' insert_select_host
 * with the reason, except under backend cpu/auto.  Everything up to the
 * reserve only reads, so declining after the SELECT ran loses time only.
 */
int bgpu_insert_select(gpmdb_stmt *st, uint32_t tid, const stg_schema *sch,
		       const char *tname, pnode *node, const int *map,
		       bool *done)
{
	gpmdb *db = st->db;
	int nc = sch->ncols, nk = 0, rc = GPMDB_OK, ph = wp_to(db, WP_OTHER);
	exec_gpu_dev *dev = NULL;
	gpu_ins_src *src = NULL;
	void **dv = NULL;
	uint32_t **dn = NULL;
	uint64_t *fnull = NULL, *fbad = NULL, n = 0, start = 0;
	stg_col_batch *kb = NULL, *rb = NULL;
	stg_gpu_layout lay = {0};
	gpu_tab_layout gl;
	gpu_dml_timing t = {0};
	bg_chunk_ctx cc = {db, &gl, 0, 0, 0};
	bg_ins_times tb, ta;
	stg_index_info *ixs = NULL;
	rel *hold = NULL;
	char why[400] = "", err[600];

	*done = false;
	if (db->backend != 2)
		return GPMDB_OK;
	/* what bg_choose sends elsewhere: bgpu_append counts it there */
	if (db->gpu_persist == BG_CAP || db->gpu_persist == BG_HOST) {
		snprintf(why, sizeof(why), "gpu_persist = %s",
			 db->gpu_persist == BG_CAP ? "cap" : "host");
		goto host;
	}
	for (int c = 0; c < nc; c++)
		if (sch->cols[c].type == STG_T_TEXT) {
			snprintf(why, sizeof(why),
				 "TEXT column %s: TEXT is written by the CPU",
				 sch->cols[c].name);
			goto host;
		}
	if (stg_pool_writes_private(db->pool)) {
		snprintf(why, sizeof(why),
			 "msync mode (or pmem mode beside readers): the "
			 "CPU-assisted path writes");
		goto host;
	}
	if (!gpu_available()) {
		snprintf(why, sizeof(why), "no GPU");
		goto host;
	}
	if (bg_register(db, err, sizeof(err))) {
		snprintf(why, sizeof(why), "%.300s", err);
		goto host;
	}
	if (!(src = calloc((size_t)nc + 1, sizeof(*src))) ||
	    !(dv = calloc((size_t)nc + 1, sizeof(*dv))) ||
	    !(dn = calloc((size_t)nc + 1, sizeof(*dn))) ||
	    !(fnull = calloc((size_t)nc + 1, sizeof(*fnull))) ||
	    !(fbad = calloc((size_t)nc + 1, sizeof(*fbad))) ||
	    !(kb = calloc((size_t)nc + 1, sizeof(*kb))) ||
	    !(rb = calloc((size_t)nc + 1, sizeof(*rb))) ||
	    !(hold = rel_new(&st->x, 0, NULL))) {
		rc = db_err(db, GPMDB_NOMEM, "out of memory");
		goto out;
	}
	/* the conversions the kernel does (gpu_ins_src); DEFAULTs become
	 * constants, converted here as insert_rel converts them */
	for (int c = 0; c < nc; c++) {
		const stg_column_info *ci = &sch->cols[c];
		etype to = stg_to_etype(ci);
		int k = map ? map[c] : c;

		src[c].dst_t = to.t;
		src[c].dst_prec = to.prec;
		src[c].dst_scale = to.scale;
		src[c].width = stg_type_width(ci->type);
		if (k < 0) {
			sval v;

			if (dml_default_value(st, ci, &v, hold) ||
			    sval_convert(&st->x, &v, to, 1, hold)) {
				snprintf(why, sizeof(why),
					 "the DEFAULT of column %.64s: %.250s",
					 ci->name, db->errmsg);
				db_clear(db);
				goto host;
			}
			src[c].is_const = 1;
			src[c].knull = v.t == BC_T_NULL;
			src[c].konst = v.t == BC_T_NULL
					   ? 0
					   : bg_default_bits(&v, ci->type);
			continue;
		}
		etype from = node->ty[k];
		if (from.t == BC_T_TEXT ||
		    (from.t == BC_T_REAL && to.t == BC_T_DEC)) {
			snprintf(why, sizeof(why),
				 "column %s: %s to %s is converted by the CPU",
				 ci->name, et_name(from), et_name(to));
			goto host;
		}
	}
	wp_to(db, WP_LOCATE); /* the SELECT, left on the device */
	rc = exec_gpu_select_dev(&st->x, node, &dev, why, sizeof(why));
	wp_to(db, WP_OTHER);
	if (rc == -1) {
		rc = GPMDB_OK;
		goto host;
	}
	if (rc)
		goto out;
	for (int c = 0; c < nc; c++) {
		int k = map ? map[c] : c;

		if (k >= 0 &&
		    !bg_src_from_dev(&src[c], &dev->cols[k], dev->ty[k],
				     sch->cols[c].name, why, sizeof(why)))
			goto host;
	}
	n = dev->nrows;
	if (n == 0) {
		db->changes = 0;
		*done = true;
		pthread_mutex_lock(&bg_lock);
		bg_stat.is_dev_batches++;
		pthread_mutex_unlock(&bg_lock);
		goto out;
	}
	wp_to(db, WP_BIND);
	if (gpu_ins_convert(src, nc, n, dv, dn, fnull, fbad, err,
			    sizeof(err))) {
		snprintf(why, sizeof(why), "GPU conversion: %.300s", err);
		goto host;
	}
	wp_to(db, WP_KEYCHECK);
	db->gstat.bytes_downloaded += 16 * (uint64_t)nc;
	for (int c = 0; c < nc; c++)
		if (fbad[c] != UINT64_MAX) {
			/* an error on the CPU (or a value only it converts):
			 * it reports the first one in its own words */
			snprintf(why, sizeof(why),
				 "column %s, row %llu: the CPU's conversion "
				 "reports it",
				 sch->cols[c].name,
				 (unsigned long long)fbad[c] + 1);
			goto host;
		}
	/* insert_rel's check, its words */
	for (int c = 0; c < nc; c++)
		if ((sch->cols[c].flags & STG_COL_NOTNULL) &&
		    fnull[c] != UINT64_MAX) {
			rc = db_err(db, GPMDB_CONSTRAINT,
				    "NOT NULL constraint failed: %s.%s", tname,
				    sch->cols[c].name);
			goto out;
		}
	/* PRIMARY KEY / UNIQUE: storage checks the keys through the
	 * indexes on the host, so the key columns (and no other) come down */
	if (stg_index_list(db->pool, tid, &ixs, &nk)) {
		rc = db_err_stg(db);
		goto out;
	}
	for (int q = 0; q < nk; q++)
		for (int j = 0; j < ixs[q].ncols && ixs[q].unique; j++) {
			int c = (int)ixs[q].cols[j];
			/* the NULL bitmap only when the column has a NULL */
			size_t vb = n * src[c].width,
			       nb = fnull[c] == UINT64_MAX ? 0
							   : (n + 31) / 32 * 4;
			void *hv, *hn;

			if (kb[c].values)
				continue;
			hv = malloc(vb + 1);
			hn = nb ? malloc(nb) : NULL;
			kb[c].values = hv;
			kb[c].nulls = hn;
			if (!hv || (nb && !hn)) {
				rc = db_err(db, GPMDB_NOMEM, "out of memory");
				goto out;
			}
			if ((rc = gpu_download(hv, dv[c], vb, err,
					       sizeof(err))) ||
			    (rc = gpu_download(hn, dn[c], nb, err,
					       sizeof(err)))) {
				rc = db_err(db, rc, "GPU INSERT: %s", err);
				goto out;
			}
			db->gstat.bytes_downloaded += vb + nb;
		}
	/* stg_append_reserve reads whether values exist, the NULL bitmaps
	 * for NOT NULL (checked above) and the unique keys' columns: those
	 * downloaded, device arrays for the rest, no bitmaps */
	for (int c = 0; c < nc; c++) {
		rb[c].values = kb[c].values ? kb[c].values : dv[c];
		rb[c].nulls = kb[c].values ? kb[c].nulls : NULL;
	}
	/* no way back to the host from here: the bytes, as wp_append
	 * counts them */
	for (int c = 0; c < nc; c++) {
		wp_bytes(db, WP_BIND, n * src[c].width);
		wp_bytes(db, WP_DATA, n * src[c].width);
	}
	bg_ins_times_get(db, &tb);
	if ((rc = bg_reserve(db, tid, rb, NULL, n, &start, &lay, &gl)))
		goto out;
	cc.end = start + n;
	wp_to(db, WP_DATA);
	rc = gpu_append_dev(
	    db->gpu_reg_base, &gl, start, n, (const void *const *)dv,
	    (const uint32_t *const *)dn, bg_chunk, &cc, &t, err, sizeof(err));
	bg_ins_times_get(db, &ta);
	bg_ins_note(&tb, &ta, 0, cc.chunks);
	if (rc) {
		/* past the count: the statement's rollback hides them */
		rc = db_err(db, rc, "GPU INSERT: %s", err);
		goto out;
	}
	bg_phases(db, &t, (uint64_t)lay.ntab * lay.stride * 8, 0);
	wp_to(db, WP_INDEX); /* the count, the rows' index entries */
	if (stg_append_finish(db->pool, tid, start, n, t.bytes)) {
		rc = db_err_stg(db);
		goto out;
	}
	bg_done(db, "INSERT", n, &t);
	pthread_mutex_lock(&bg_lock);
	bg_stat.is_dev_rows += n;
	bg_stat.is_dev_batches++;
	pthread_mutex_unlock(&bg_lock);
	db->changes = (long long)n;
	*done = true;
	goto out;
host:
	bg_went_host(&bg_stat.is_host, bg_stat.is_host_why, why);
out:
	wp_to(db, ph);
	for (int c = 0; dv && c < nc; c++) {
		gpu_free(dv[c], NULL, 0);
		gpu_free(dn[c], NULL, 0);
	}
	for (int c = 0; kb && c < nc; c++) {
		free((void *)kb[c].values);
		free((void *)kb[c].nulls);
	}
	exec_gpu_dev_free(dev);
	stg_gpu_layout_free(&lay);
	rel_free(hold);
	free(src);
	free(dv);
	free(dn);
	free(fnull);
	free(fbad);
	free(kb);
	free(rb);
	free(ixs);
	return rc;
}

/*
 * UPDATE by predicate with its rows and new values computed on the device
 * and never brought to the host: the plan's PROJECT (rowid, new values)
 * over the table's cached columns is left on the device
 * (exec_gpu_select_dev), the values become the columns' storage arrays
 * there (gpu_ins_convert, INSERT ... SELECT's conversion), the HCL kernels
 * read them in place (gpu_hcl_update_dev) and the cached copies of the
 * columns take them too (write-through).  Before, the PROJECT's 2.5M rows
 * of bench_batch's UPDATE a came down into a relation, were converted and
 * checked per row and went up again: 113 + 25 + 13 ms of a 180 ms
 * statement whose kernels take 17 ms.
 * What this does not cover goes the general way, *done false and the
 * reason counted (gpu_write_stats update_select_host): TEXT columns,
 * indexes on an updated column (their keys are kept by the host path),
 * conventional logging, gpu_persist = cap and msync mode, a value the
 * GPU does not convert.
 */
int bgpu_update_dev(gpmdb *db, uint32_t tid, int ncols, const uint32_t *cols,
		    const uint64_t *rowids, uint64_t n, const uint64_t rng[3],
		    void *const *dv, const uint32_t *const *dnl,
		    const uint32_t *widths)
{
	uint64_t before[64], span[2] = {rng[0], rng[1] + 1};
	stg_gpu_layout lay = {0};
	stg_hcl_seg seg;
	gpu_tab_layout gl;
	gpu_dml_timing t = {0};
	char err[600];
	int rc;

	if (ncols < 1 || ncols > 64)
		return db_err(db, GPMDB_INTERNAL,
			      "GPU UPDATE: %d columns on the device", ncols);
	for (int k = 0; k < ncols; k++) {
		before[k] = stg_col_stamp(db->pool, tid, (int)cols[k]);
		wp_bytes(db, WP_DATA, n * widths[k]);
	}
	wp_bytes(db, WP_LOCATE, 8 * n);
	wp_to(db, WP_RESERVE);
	if ((rc = bg_upd_segment(db, tid, ncols, cols, n, (uint32_t)ncols, span,
				 &lay, &gl, &seg)))
		goto out;
	wp_to(db, WP_DATA);
	{
		gpu_update_opts uo = bg_upd_opts(db);

		rc = gpu_hcl_update_dev(
		    db->gpu_reg_base, seg.seg_off, &seg.geom, &gl, rowids, n,
		    rng, ncols, cols, (const void *const *)dv, dnl,
		    db->gpu_scope, &uo, &t, err, sizeof(err));
	}
	if (rc) {
		/* the statement's rollback undoes what the log holds */
		rc = db_err(db, rc, "GPU UPDATE: %s", err);
		goto out;
	}
	bg_phases(db, &t, (uint64_t)lay.ntab * lay.stride * 8,
		  bg_log_bytes(n, ncols));
	wp_to(db, WP_LOG);
	if (stg_hcl_end(db->pool, tid, &seg, t.bytes, false, 0)) {
		rc = db_err_stg(db);
		goto out;
	}
	bg_done(db, "UPDATE", n, &t);
	/* the cached copies take the new values from the device */
	exec_gpu_lock();
	for (int k = 0; k < ncols; k++)
		gcache_write_through(db->pool, db->gpu_owner, tid, (int)cols[k],
				     before[k], rowids, n, dv[k], dnl[k],
				     widths[k], 1);
	exec_gpu_unlock();
out:
	stg_gpu_layout_free(&lay);
	return rc;
}

/* Why an UPDATE of cols cannot take the device path (bgpu_update_dev):
 * set in why and true, or false when it can. */
bool bgpu_update_dev_declines(gpmdb *db, uint32_t tid, const stg_schema *sch,
			      int ncols, const uint32_t *cols, char *why,
			      size_t wlen)
{
	stg_index_info *ixs = NULL;
	int nk = 0;

	if (db->backend != 2) {
		snprintf(why, wlen, "backend is not gpu");
		return true;
	}
	if (ncols < 1 || ncols > 64) {
		snprintf(why, wlen, "%d columns", ncols);
		return true;
	}
	if (db->gpu_persist == BG_CAP || db->gpu_persist == BG_HOST ||
	    db->gpu_log || stg_pool_writes_private(db->pool)) {
		snprintf(why, wlen, "%s",
			 db->gpu_log ? "conventional logging"
				     : "the CPU-assisted path writes");
		return true;
	}
	for (int k = 0; k < ncols; k++)
		if (sch->cols[cols[k]].type == STG_T_TEXT) {
			snprintf(why, wlen, "column %s is TEXT",
				 sch->cols[cols[k]].name);
			return true;
		}
	if (stg_index_list(db->pool, tid, &ixs, &nk)) {
		db_clear(db);
		snprintf(why, wlen, "the table's indexes could not be listed");
		return true;
	}
	for (int q = 0; q < nk; q++)
		for (int j = 0; j < ixs[q].ncols; j++)
			for (int k = 0; k < ncols; k++)
				if (ixs[q].cols[j] == cols[k]) {
					snprintf(why, wlen,
						 "index %s covers column %s",
						 ixs[q].name,
						 sch->cols[cols[k]].name);
					free(ixs);
					return true;
				}
	free(ixs);
	if (!gpu_available()) {
		snprintf(why, wlen, "no GPU");
		return true;
	}
	return false;
}

int bgpu_update_select(gpmdb_stmt *st, uint32_t tid, const stg_schema *sch,
		       const char *tname, pnode *node, int ncols,
		       const uint32_t *cols, bool *done)
{
	gpmdb *db = st->db;
	int rc = GPMDB_OK, ph = wp_to(db, WP_OTHER);
	exec_gpu_dev *dev = NULL;
	gpu_ins_src src[64];
	void *dv[64] = {0};
	uint32_t *dn[64] = {0};
	const uint32_t *dnl[64];
	uint64_t fnull[64], fbad[64], rng[3], n;
	uint32_t widths[64];
	const uint64_t *rowids;
	char why[400] = "", err[600];
	bool down = false; /* CAP: rows and values down (batch_cap.c) */
	double t_conv = 0, t_range = 0;

	*done = false;
	if (db->backend != 2)
		return GPMDB_OK;
	memset(src, 0, sizeof(src));
	if (bgpu_update_dev_declines(db, tid, sch, ncols, cols, why,
				     sizeof(why)) &&
	    !(down = bcap_select_ok(db, sch, ncols, cols)))
		goto host;
	for (int k = 0; k < ncols; k++) {
		const stg_column_info *ci = &sch->cols[cols[k]];
		etype to = stg_to_etype(ci), from = node->ty[k + 1];

		if (ci->type == STG_T_TEXT || from.t == BC_T_TEXT ||
		    (from.t == BC_T_REAL && to.t == BC_T_DEC)) {
			snprintf(why, sizeof(why),
				 "column %s: %s to %s is written by the CPU",
				 ci->name, et_name(from), et_name(to));
			goto host;
		}
		src[k].dst_t = to.t;
		src[k].dst_prec = to.prec;
		src[k].dst_scale = to.scale;
		src[k].width = stg_type_width(ci->type);
	}
	if (bg_register(db, err, sizeof(err))) {
		snprintf(why, sizeof(why), "%.300s", err);
		goto host;
	}
	wp_to(db, WP_LOCATE); /* the rows and values, left on the device */
	{
		exec_span sp;

		exec_span_begin(&st->x, &sp);
		rc = exec_gpu_select_dev(&st->x, node, &dev, why, sizeof(why));
		if (rc ==
		    GPMDB_OK) { /* EXPLAIN ANALYZE: what the PROJECT did */
			exec_span_end(&st->x, node, &sp, rc, NULL);
			if (st->x.analyze)
				node->an_rows += dev->nrows;
		} else
			exec_span_drop(&st->x, &sp);
	}
	wp_to(db, WP_OTHER);
	if (rc == -1) {
		rc = GPMDB_OK;
		goto host;
	}
	if (rc)
		goto out;
	n = dev->nrows;
	if (n == 0) {
		db->changes = 0;
		*done = true;
		goto out;
	}
	/* (its NULL bytes, if the projection made any, are all 0) */
	if (dev->cols[0].type != BC_COL_INT64) {
		snprintf(why, sizeof(why), "row ids of type %d on the device",
			 dev->cols[0].type);
		goto host;
	}
	rowids = (const uint64_t *)dev->cols[0].data;
	for (int k = 0; k < ncols; k++)
		if (!bg_src_from_dev(&src[k], &dev->cols[k + 1], dev->ty[k + 1],
				     sch->cols[cols[k]].name, why, sizeof(why)))
			goto host;
	wp_to(db, WP_BIND);
	t_conv = wp_now_ms();
	if (gpu_ins_convert(src, ncols, n, dv, dn, fnull, fbad, err,
			    sizeof(err)) ||
	    (t_range = wp_now_ms(),
	     gpu_rowid_range(rowids, n, rng, err, sizeof(err)))) {
		snprintf(why, sizeof(why), "GPU conversion: %.300s", err);
		goto host;
	}
	pthread_mutex_lock(&bg_lock);
	bg_stat.sel_convert_ms = t_range - t_conv;
	bg_stat.sel_range_ms = wp_now_ms() - t_range;
	pthread_mutex_unlock(&bg_lock);
	wp_to(db, WP_KEYCHECK);
	for (int k = 0; k < ncols; k++)
		if (fbad[k] != UINT64_MAX) {
			snprintf(why, sizeof(why),
				 "column %s, row %llu: the CPU's conversion "
				 "reports it",
				 sch->cols[cols[k]].name,
				 (unsigned long long)fbad[k] + 1);
			goto host;
		}
	/* do_update's check, its words */
	for (int k = 0; k < ncols; k++)
		if ((sch->cols[cols[k]].flags & STG_COL_NOTNULL) &&
		    fnull[k] != UINT64_MAX) {
			rc = db_err(db, GPMDB_CONSTRAINT,
				    "NOT NULL constraint failed: %s.%s", tname,
				    sch->cols[cols[k]].name);
			goto out;
		}
	if (!rng[2] || rng[1] >= stg_row_count(db->pool, tid)) {
		snprintf(why, sizeof(why),
			 "row ids not in order (or past the table)");
		goto host;
	}
	/* no way back to the host from here */
	for (int k = 0; k < ncols; k++) {
		dnl[k] = fnull[k] == UINT64_MAX ? NULL : dn[k];
		widths[k] = src[k].width;
	}
	if ((rc = down ? bcap_update_from_dev(db, tid, sch, ncols, cols, rowids,
					      n, dv, dnl, widths)
		       : bgpu_update_dev(db, tid, ncols, cols, rowids, n, rng,
					 dv, dnl, widths)))
		goto out;
	pthread_mutex_lock(&bg_lock);
	bg_stat.us_dev_rows += n;
	bg_stat.us_dev_batches++;
	pthread_mutex_unlock(&bg_lock);
	db->changes = (long long)n;
	*done = true;
	goto out;
host:
	bg_went_host(&bg_stat.us_host, bg_stat.us_host_why, why);
out:
	wp_to(db, ph);
	for (int k = 0; k < ncols && k < 64; k++) {
		gpu_free(dv[k], NULL, 0);
		gpu_free(dn[k], NULL, 0);
	}
	exec_gpu_dev_free(dev);
	return rc;
}

/* ---- recovery, open, close ------------------------------------------ */

/* This thread's last open: what GPU recovery spent in registration
 * (PRAGMA recovery_stats gpu_register_ms, gpu_registered_bytes). */
static _Thread_local gpu_recover_timing bg_rec;

static int bgpu_recovery_hook(const stg_hcl_undo_job *job, uint64_t *applied)
{
	gpu_tab_layout gl;
	gpu_recover_timing rt = {0};
	char err[600];
	int rc;

	*applied = 0;
	/* msync mode: CUDA cannot register the file; the CPU does it */
	if (job->dur == STG_DUR_MSYNC || !gpu_available())
		return GPMDB_UNSUPPORTED;
	bg_glay(job->layout, &gl);
	rc = gpu_hcl_recover(job->base, job->map_len, job->seg_off,
			     job->seg_size, &gl, job->layout->row_count,
			     applied, &rt, err, sizeof(err));
	bg_rec.register_ms += rt.register_ms;
	bg_rec.kernel_ms += rt.kernel_ms;
	bg_rec.reg_bytes += rt.reg_bytes;
	bg_rec.reg_ranges += rt.reg_ranges;
	return rc;
}

/* GPMDB_TEST_LAUNCH_FD=fd (tests/gpu/crash_gpu_dml.c): a byte 'k' is
 * written to fd just before a batch's write kernels are launched and 'K'
 * when they finished, so that a test can kill the process inside them. */
static int bg_launch_fd = -1;

static void bg_launch_note(int done)
{
	char c = done ? 'K' : 'k';

	if (bg_launch_fd >= 0 && write(bg_launch_fd, &c, 1) != 1)
		bg_launch_fd = -1; /* the reader is gone: stop telling */
}

/* The bulk sort and probe of index entries (storage.h "Indexes") on the
 * GPU: from these sizes up the hooks' whole round trip (upload, kernels,
 * download) beats the CPU (docs/gpu.md "Index sort and probe on the
 * GPU"); below them storage does it on the CPU without asking. */
#define BG_IX_SORT_MIN_ROWS  (1u << 18)
#define BG_IX_PROBE_MIN_KEYS (1u << 16)

int bgpu_index_check(gpmdb *db, const char *op)
{
	stg_ix_hook_stats hs;
	int rc = GPMDB_OK;

	stg_index_hook_stats(&hs);
	stg_index_hook_stats_reset();
	if (db->backend != 2)
		return GPMDB_OK;
	if (hs.sort_new && hs.sort_rows >= BG_IX_SORT_MIN_ROWS && !hs.sort_gpu)
		rc = bg_fallback(db, op,
				 hs.sort_why[0] ? hs.sort_why : "index sort");
	if (!rc && hs.probe_new && hs.probe_keys >= BG_IX_PROBE_MIN_KEYS &&
	    !hs.probe_gpu)
		rc = bg_fallback(
		    db, op, hs.probe_why[0] ? hs.probe_why : "index probe");
	return rc;
}

void bgpu_index_hooks(gpmdb *db)
{
	const char *e = getenv("GPMDB_GPU_INDEX");
	/* auto or gpu: without a usable GPU the hooks decline with
	 * gpu_init's message and storage sorts or probes on the CPU */
	bool on = db->backend != 1;

	if (e && *e)
		on = strcmp(e, "0") != 0;
	stg_set_index_sort_hook(on ? gpu_ix_sort_hook : NULL,
				BG_IX_SORT_MIN_ROWS);
	stg_set_index_prewarm_hook(on ? gpu_ix_prewarm_hook : NULL);
	stg_set_index_probe_hook(on ? gpu_ix_probe_hook : NULL,
				 BG_IX_PROBE_MIN_KEYS);
}

/* storage's unmap hook: the GPU's registrations of a mapping that is
 * about to go (the pool grown or shrunk and mapped again) */
static void bg_unmap_hook(void *base, uint64_t len)
{
	char err[256];

	(void)len;
	gpu_pm_ranges_drop(base);
	(void)gpu_pm_unregister(base, err, sizeof(err));
}

void bgpu_before_open(gpmdb *db)
{
	const char *e = getenv("GPMDB_GPU_RECOVERY");
	bool on = db->backend == 2;

	if (e && *e)
		on = strcmp(e, "0") != 0;
	if ((e = getenv("GPMDB_TEST_LAUNCH_FD")) && *e) {
		bg_launch_fd = atoi(e);
		gpu_dml_set_launch_hook(bg_launch_note);
	}
	memset(&bg_rec, 0, sizeof(bg_rec));
	stg_gpu_recovery_reset();
	stg_set_hcl_undo_hook(on ? bgpu_recovery_hook : NULL);
	stg_set_unmap_hook(bg_unmap_hook);
	bgpu_index_hooks(db);
}

void bgpu_before_close(gpmdb *db)
{
	char err[512];

	gpu_ix_cache_drop(db->pool); /* its indexes' device copies */
	if (db->gpu_reg_base) {
		gpu_pm_ranges_drop(db->gpu_reg_base);
		/* a whole-mapping registration (reads, older paths) */
		if (gpu_pm_is_registered(db->gpu_reg_base, db->gpu_reg_len) &&
		    gpu_pm_unregister(db->gpu_reg_base, err, sizeof(err)) !=
			GPMDB_OK)
			bg_stat.unregister_errors++;
	}
	db->gpu_reg_base = NULL;
	db->gpu_reg_len = 0;
}

/* ---- pragmas -------------------------------------------------------- */

static const char *bg_nv_cols[] = {"name", "value"};
/* gpu_write_stats: the last write's phases have bytes */
static const char *bg_nvb_cols[] = {"name", "value", "bytes"};
static const char *bg_one_col[] = {"value"};

bool bgpu_is_pragma(const char *name)
{
	return !strcasecmp(name, "gpu_persist") ||
	       !strcasecmp(name, "gpu_persist_scope") ||
	       !strcasecmp(name, "gpu_log") ||
	       !strcasecmp(name, "gpu_log_partitions") ||
	       !strcasecmp(name, "gpu_update_mode") ||
	       !strcasecmp(name, "gpu_key_match") ||
	       !strcasecmp(name, "gpu_lines_min_density") ||
	       !strcasecmp(name, "gpu_write_stats") ||
	       !strcasecmp(name, "gpu_write_fallback") ||
	       !strcasecmp(name, "recovery_stats");
}

int bgpu_pragma_columns(ast_stmt *s, const char ***names)
{
	if (!bgpu_is_pragma(s->name))
		return -1;
	if (!strcasecmp(s->name, "gpu_write_stats")) {
		*names = bg_nvb_cols;
		return 3;
	}
	if (!strcasecmp(s->name, "recovery_stats")) {
		*names = bg_nv_cols;
		return 2;
	}
	if (s->pragma_value && !s->pragma_call) {
		*names = NULL;
		return 0;
	}
	*names = bg_one_col;
	return 1;
}

static int bg_row(gpmdb *db, rel *r, const char *name, const char *text,
		  double num)
{
	if (r->ncols == 3) /* gpu_write_stats: no bytes but the phases' */
		return wp_stat_row(db, r, name, num, -1);
	sval v = {.t = BC_T_REAL};
	v.u.r = num;
	return pragma_row(db, r, name, text, v);
}

typedef struct {
	gpmdb *db;
	rel *r;
} bg_row_ctx;

static int bg_row_cb(void *ctx, const char *name, double v)
{
	bg_row_ctx *c = ctx;

	return bg_row(c->db, c->r, name, NULL, v);
}

int bgpu_pragma(gpmdb_stmt *st, ast_stmt *s, const char *v, rel **out)
{
	static const char *pn[] = {"auto", "kernel", "cap", "host"};
	/* GPU_SCOPE_* order */
	static const char *sn[] = {"thread", "block", "grid", "none"};
	/* GPU_UPD_* order */
	static const char *un[] = {"auto", "scatter", "lines"};
	gpmdb *db = st->db;
	bool set = v && s->pragma_value && !s->pragma_call;
	const char *nm = s->name;
	etype tt[2] = {et_make(BC_T_TEXT), et_make(BC_T_TEXT)};
	rel *r = NULL;
	int rc = GPMDB_OK;

	if (set && !strcasecmp(nm, "gpu_log")) {
		if (!strcasecmp(v, "hcl") || !strcasecmp(v, "conventional")) {
			db->gpu_log = !strcasecmp(v, "conventional");
			return GPMDB_OK;
		}
		return db_err(db, GPMDB_ERROR,
			      "gpu_log is hcl or conventional");
	}
	if (set && !strcasecmp(nm, "gpu_key_match")) {
		if (!strcasecmp(v, "pass") || !strcasecmp(v, "probe")) {
			db->gpu_key_match = !strcasecmp(v, "probe");
			return GPMDB_OK;
		}
		return db_err(db, GPMDB_ERROR,
			      "gpu_key_match is pass or probe");
	}
	if (set && !strcasecmp(nm, "gpu_update_mode")) {
		for (int i = 0; i < 3; i++)
			if (!strcasecmp(v, un[i])) {
				db->gpu_upd_mode = i;
				return GPMDB_OK;
			}
		return db_err(db, GPMDB_ERROR,
			      "gpu_update_mode is auto, scatter or lines");
	}
	if (set && !strcasecmp(nm, "gpu_lines_min_density")) {
		char *end = NULL;
		double d = strtod(v, &end);

		if (!end || *end || !(d > 0 && d <= 128))
			return db_err(db, GPMDB_ERROR,
				      "gpu_lines_min_density is the updated "
				      "rows per dirty 128-byte line above "
				      "which gpu_update_mode = auto writes "
				      "whole lines: a number in (0, 128]");
		db->gpu_lines_density = d;
		return GPMDB_OK;
	}
	if (set && !strcasecmp(nm, "gpu_log_partitions")) {
		char *end = NULL;
		unsigned long k = strtoul(v, &end, 10);

		/* whole warps of partitions: 32 partitions share a line of
		 * each entry word, as HCL's lanes do */
		if (!end || *end || k < 32 || k > 1048576 || k % 32)
			return db_err(db, GPMDB_ERROR,
				      "gpu_log_partitions is a multiple of 32 "
				      "from 32 to 1048576");
		db->gpu_log_parts = (uint32_t)k;
		return GPMDB_OK;
	}
	if (set) {
		const char **names = !strcasecmp(nm, "gpu_persist") ? pn : sn;
		int *dst = !strcasecmp(nm, "gpu_persist") ? &db->gpu_persist
							  : &db->gpu_scope;

		if (strcasecmp(nm, "gpu_persist") &&
		    strcasecmp(nm, "gpu_persist_scope"))
			return db_err(db, GPMDB_ERROR,
				      "PRAGMA %s cannot be set", nm);
		bool is_scope = names == sn;
		for (int i = 0; i < 4; i++)
			if (!strcasecmp(v, names[i])) {
				*dst = i;
				/* kernels store into the shared mapping: in
				 * pmem mode such a writer waits for readers
				 * instead of writing beside them through the
				 * log */
				if (!is_scope)
					stg_pool_set_in_place_only(
					    db->pool, i == BG_KERNEL);
				return GPMDB_OK;
			}
		if (is_scope)
			return db_err(db, GPMDB_ERROR, "%s is %s, %s, %s or %s",
				      nm, sn[0], sn[1], sn[2], sn[3]);
		return db_err(db, GPMDB_ERROR, "%s is %s, %s, %s or %s", nm,
			      names[0], names[1], names[2], names[3]);
	}
	if (!strcasecmp(nm, "gpu_write_stats")) {
		etype t3[3] = {et_make(BC_T_TEXT), et_make(BC_T_REAL),
			       et_make(BC_T_INT)};

		if (!(r = rel_new(NULL, 3, t3)))
			return db_err(db, GPMDB_NOMEM, "out of memory");
	} else if (!strcasecmp(nm, "recovery_stats")) {
		tt[1] = et_make(BC_T_REAL);
		if (!(r = rel_new(NULL, 2, tt)))
			return db_err(db, GPMDB_NOMEM, "out of memory");
	} else if (!(r = rel_new(NULL, 1, tt))) {
		return db_err(db, GPMDB_NOMEM, "out of memory");
	}
	if (!strcasecmp(nm, "gpu_write_stats")) {
		/* this connection's last write, whichever backend ran it */
		if ((rc = wp_pragma_rows(db, r))) {
			rel_free(r);
			return rc;
		}
		uint64_t pop_ns, reg_ns;

		gpu_pm_range_times(&pop_ns, &reg_ns);
		pthread_mutex_lock(&bg_lock);
		const struct {
			const char *n;
			double v;
		} rows[] = {
		    {"gpu_batches", (double)bg_stat.gpu_batches},
		    {"gpu_rows", (double)bg_stat.gpu_rows},
		    {"gpu_bytes", (double)bg_stat.gpu_bytes},
		    {"cap_batches", (double)bg_stat.cap_batches},
		    {"cpu_fallbacks", (double)bg_stat.fallbacks},
		    {"registrations", (double)bg_stat.registrations},
		    /* pool bytes pinned for GPU writes, range by range */
		    {"registered_bytes", (double)bg_stat.registered_bytes},
		    /* the process's time populating and registering them */
		    {"populate_ms", pop_ns / 1e6},
		    {"register_ms", reg_ns / 1e6},
		    {"unregister_errors", (double)bg_stat.unregister_errors},
		    {"conv_batches", (double)bg_stat.conv_batches},
		    {"line_batches", (double)bg_stat.line_batches},
		    {"last_upload_ms", bg_stat.last_upload_ms},
		    {"last_log_ms", bg_stat.last_log_ms},
		    {"last_data_ms", bg_stat.last_data_ms},
		    {"last_total_ms", bg_stat.last_total_ms},
		    {"last_mark_ms", bg_stat.last_mark_ms},
		    {"last_lines_ms", bg_stat.last_lines_ms},
		    {"last_line_cols", (double)bg_stat.last_line_cols},
		    {"last_line_rows", (double)bg_stat.last_line_rows},
		    {"last_dirty_lines", (double)bg_stat.last_dirty_lines},
		    {"insert_select_dev", (double)bg_stat.is_dev_rows},
		    {"insert_select_dev_batches",
		     (double)bg_stat.is_dev_batches},
		    {"insert_select_host", (double)bg_stat.is_host},
		    {"update_select_dev", (double)bg_stat.us_dev_rows},
		    {"update_select_dev_batches",
		     (double)bg_stat.us_dev_batches},
		    {"update_select_host", (double)bg_stat.us_host},
		    /* the last GPU INSERT's host work (docs/gpu.md) */
		    {"last_insert_setup_ms", bg_stat.ins_setup_ms},
		    {"last_insert_keycheck_ms", bg_stat.ins_keycheck_ms},
		    {"last_insert_key_alloc_ms", bg_stat.ins_key_alloc_ms},
		    {"last_insert_key_encode_ms", bg_stat.ins_key_enc_ms},
		    {"last_insert_key_sort_ms", bg_stat.ins_key_sort_ms},
		    {"last_insert_key_probe_ms", bg_stat.ins_key_probe_ms},
		    {"last_insert_tablets_ms", bg_stat.ins_tablets_ms},
		    {"last_insert_grow_ms", bg_stat.ins_grow_ms},
		    {"last_insert_extend_ms", bg_stat.ins_extend_ms},
		    {"last_insert_populate_ms", bg_stat.ins_populate_ms},
		    {"last_insert_register_ms", bg_stat.ins_register_ms},
		    {"last_insert_chunks", (double)bg_stat.ins_chunks},
		    /* the last GPU UPDATE's reservation (bg_upd_segment) */
		    {"last_update_segment_ms", bg_stat.upd_segment_ms},
		    {"last_update_populate_ms", bg_stat.upd_populate_ms},
		    {"last_update_register_ms", bg_stat.upd_register_ms},
		    {"last_update_select_convert_ms", bg_stat.sel_convert_ms},
		    {"last_update_select_range_ms", bg_stat.sel_range_ms},
		    {"last_update_widen_ms", bg_stat.upd_widen_ms},
		    {"last_update_layout_ms", bg_stat.upd_layout_ms},
		    {"last_update_segment_alloc_ms", bg_stat.upd_begin_ms},
		    {"last_update_grow_ms", bg_stat.upd_grow_ms},
		};
		char because[480], ubecause[480];
		uint64_t nhost = bg_stat.is_host, uhost = bg_stat.us_host;

		snprintf(because, sizeof(because),
			 "insert_select_host_because: %s", bg_stat.is_host_why);
		snprintf(ubecause, sizeof(ubecause),
			 "update_select_host_because: %s", bg_stat.us_host_why);
		pthread_mutex_unlock(&bg_lock);
		for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]) && !rc;
		     i++)
			rc = bg_row(db, r, rows[i].n, NULL, rows[i].v);
		if (!rc && nhost)
			rc = bg_row(db, r, because, NULL, (double)nhost);
		if (!rc && uhost)
			rc = bg_row(db, r, ubecause, NULL, (double)uhost);
		if (!rc) { /* CPU-assisted persistence (batch_cap.c) */
			bg_row_ctx rx = {db, r};
			char why[400], nm2[440];

			rc = bcap_stat_rows(bg_row_cb, &rx, why, sizeof(why));
			snprintf(nm2, sizeof(nm2), "cap_host_because: %s", why);
			if (!rc && why[0])
				rc = bg_row(db, r, nm2, NULL, 0);
			if (!rc)
				rc = bgpu_keys_stat_rows(bg_row_cb, &rx, why,
							 sizeof(why));
			snprintf(nm2, sizeof(nm2),
				 "key_match_declined_because: %s", why);
			if (!rc && why[0])
				rc = bg_row(db, r, nm2, NULL, 0);
		}
	} else if (!strcasecmp(nm, "gpu_write_fallback")) {
		char fb[600];

		pthread_mutex_lock(&bg_lock);
		snprintf(fb, sizeof(fb), "%s", bg_stat.last_fallback);
		pthread_mutex_unlock(&bg_lock);
		rc = bg_row(db, r, NULL, fb, 0);
	} else if (!strcasecmp(nm, "recovery_stats")) {
		stg_stats ss;
		stg_gpu_recovery_stats gs;

		stg_get_stats(db->pool, &ss);
		stg_gpu_recovery_last(&gs);
		const struct {
			const char *n;
			double v;
		} rows[] = {
		    {"recovery_ms", ss.recovery_ms},
		    {"recovered_entries", (double)ss.recovered_entries},
		    {"gpu_segments", (double)gs.segments},
		    {"gpu_entries", (double)gs.entries},
		    {"gpu_ms", gs.ms},
		    {"cpu_segments", (double)gs.cpu_segments},
		    {"gpu_register_ms", bg_rec.register_ms},
		    {"gpu_kernel_ms", bg_rec.kernel_ms},
		    {"gpu_registered_bytes", (double)bg_rec.reg_bytes},
		    {"gpu_registered_ranges", (double)bg_rec.reg_ranges},
		};
		for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]) && !rc;
		     i++)
			rc = bg_row(db, r, rows[i].n, NULL, rows[i].v);
	} else if (!strcasecmp(nm, "gpu_log")) {
		rc = bg_row(db, r, NULL, db->gpu_log ? "conventional" : "hcl",
			    0);
	} else if (!strcasecmp(nm, "gpu_update_mode")) {
		rc = bg_row(db, r, NULL, un[db->gpu_upd_mode], 0);
	} else if (!strcasecmp(nm, "gpu_key_match")) {
		rc = bg_row(db, r, NULL, db->gpu_key_match ? "probe" : "pass",
			    0);
	} else if (!strcasecmp(nm, "gpu_lines_min_density")) {
		char num[32];

		snprintf(num, sizeof(num), "%g",
			 db->gpu_lines_density > 0 ? db->gpu_lines_density
						   : BG_LINES_DENSITY);
		rc = bg_row(db, r, NULL, num, 0);
	} else if (!strcasecmp(nm, "gpu_log_partitions")) {
		char num[32];

		snprintf(num, sizeof(num), "%u",
			 db->gpu_log_parts ? db->gpu_log_parts : BG_CONV_PARTS);
		rc = bg_row(db, r, NULL, num, 0);
	} else {
		rc = bg_row(db, r, NULL,
			    !strcasecmp(nm, "gpu_persist") ? pn[db->gpu_persist]
							   : sn[db->gpu_scope],
			    0);
	}
	if (rc) {
		rel_free(r);
		return rc;
	}
	*out = r;
	return GPMDB_OK;
}
