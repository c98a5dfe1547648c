/*
 * exec_gpu_pragma.c - the GPU pragmas (backend, gpu_strict,
 * gpu_threshold, gpu_stats...) and the GPU executor's life with a
 * connection (exec_gpu_open/close).
 */
#include "exec_gpu_int.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

/* ---- pragmas and statistics ----------------------------------------- */

static const char *xg_stat_cols[] = {"name", "value"};
static const char *xg_one_col[] = {"value"};

static bool xg_is_pragma(const char *name)
{
	return !strcasecmp(name, "backend") ||
	       !strcasecmp(name, "gpu_strict") ||
	       !strcasecmp(name, "gpu_threshold") ||
	       !strcasecmp(name, "gpu_cache_limit") ||
	       !strcasecmp(name, "gpu_memory_limit") ||
	       !strcasecmp(name, "gpu_stats") || !strcasecmp(name, "gpu_info");
}

int exec_gpu_pragma_columns(ast_stmt *s, const char ***names)
{
	if (!xg_is_pragma(s->name))
		return -1;
	if (!strcasecmp(s->name, "gpu_stats")) {
		*names = xg_stat_cols;
		return 2;
	}
	if (s->pragma_value && !s->pragma_call) {
		*names = NULL;
		return 0;
	}
	*names = xg_one_col;
	return 1;
}

static int xg_row(gpmdb *db, rel *r, const char *name, const char *text,
		  int64_t i)
{
	sval v = {.t = BC_T_INT};
	v.u.i = i;
	return pragma_row(db, r, name, text, v);
}

static int xg_bool(const char *v, bool *out)
{
	if (!strcasecmp(v, "on") || !strcasecmp(v, "1") ||
	    !strcasecmp(v, "true") || !strcasecmp(v, "yes")) {
		*out = true;
		return 0;
	}
	if (!strcasecmp(v, "off") || !strcasecmp(v, "0") ||
	    !strcasecmp(v, "false") || !strcasecmp(v, "no")) {
		*out = false;
		return 0;
	}
	return -1;
}

int exec_gpu_set_backend(gpmdb *db, const char *v)
{
	if (!strcasecmp(v, "auto"))
		db->backend = 0;
	else if (!strcasecmp(v, "cpu"))
		db->backend = 1;
	else if (!strcasecmp(v, "gpu")) {
		/* without a GPU each operator falls back (counted) or, under
		 * gpu_strict, fails with gpu_init's message */
		db->backend = 2;
		gpu_init_async(); /* CUDA's setup overlaps what comes first */
	} else
		return db_err(db, GPMDB_ERROR,
			      "unknown backend \"%s\" (expected auto, cpu or "
			      "gpu)",
			      v);
	bgpu_index_hooks(db); /* index sort and probe on the GPU or not */
	return GPMDB_OK;
}

void exec_gpu_open(gpmdb *db)
{
	db->gpu_owner = gcache_new_owner();
	db->gpu_threshold = XG_DEFAULT_THRESHOLD;
}

void exec_gpu_close(gpmdb *db)
{
	gpu_init_async_join();
	exec_gpu_lock();
	gcache_drop_owner(db->gpu_owner);
	exec_gpu_unlock();
}

int exec_gpu_pragma(gpmdb_stmt *st, ast_stmt *s, const char *v, rel **out)
{
	static const char *bn[] = {"auto", "cpu", "gpu"};
	gpmdb *db = st->db;
	bool set = v && s->pragma_value && !s->pragma_call;
	etype tt[2] = {et_make(BC_T_TEXT), et_make(BC_T_INT)};
	rel *r = NULL;
	int rc = GPMDB_OK;
	const char *nm = s->name;

	if (set) {
		if (!strcasecmp(nm, "backend"))
			return exec_gpu_set_backend(db, v);
		if (!strcasecmp(nm, "gpu_strict")) {
			bool b;
			if (xg_bool(v, &b))
				return db_err(db, GPMDB_ERROR,
					      "gpu_strict is on or off");
			db->gpu_strict = b;
			return GPMDB_OK;
		}
		if (!strcasecmp(nm, "gpu_threshold") ||
		    !strcasecmp(nm, "gpu_cache_limit") ||
		    !strcasecmp(nm, "gpu_memory_limit")) {
			char *end;
			long long k = strtoll(v, &end, 10);
			if (*end || k < 0)
				return db_err(db, GPMDB_ERROR,
					      "%s wants a number >= 0", nm);
			if (!strcasecmp(nm, "gpu_threshold"))
				db->gpu_threshold = (uint64_t)k;
			else if (!strcasecmp(nm, "gpu_memory_limit")) {
				/* the process's: the device is one */
				exec_gpu_lock();
				gpu_set_memory_limit((uint64_t)k << 20);
				exec_gpu_unlock();
			} else
				gcache_set_limit((uint64_t)k << 20);
			return GPMDB_OK;
		}
		return db_err(db, GPMDB_ERROR, "PRAGMA %s cannot be set", nm);
	}
	if (!strcasecmp(nm, "gpu_stats")) {
		gcache_stats cs;
		gpu_ix_cache_stats ics;
		stg_ix_hook_stats ihs;
		if (!(r = rel_new(NULL, 2, tt)))
			return db_err(db, GPMDB_NOMEM, "out of memory");
		exec_gpu_lock();
		gcache_get_stats(&cs);
		gpu_ix_cache_get_stats(&ics);
		stg_index_hook_stats(&ihs);
		exec_gpu_unlock();
		const struct {
			const char *n;
			uint64_t v;
		} rows[] = {
		    {"gpu_operators", db->gstat.gpu_ops},
		    {"cpu_fallbacks", db->gstat.cpu_fallbacks},
		    {"gpu_time_us", db->gstat.gpu_ns / 1000},
		    {"bytes_uploaded", db->gstat.bytes_uploaded + 0},
		    {"bytes_downloaded", db->gstat.bytes_downloaded},
		    {"cache_hits", db->gstat.cache_hits},
		    {"cache_misses", db->gstat.cache_misses},
		    {"cache_entries", cs.entries},
		    {"cache_bytes", cs.bytes},
		    {"cache_uploaded_bytes", cs.uploaded},
		    {"cache_evictions", cs.evictions},
		    {"cache_oom_evictions", cs.oom_evictions},
		    {"cache_stale", cs.stale},
		    {"cache_write_through", cs.write_through},
		    {"cache_adopted", cs.adopted},
		    {"cache_upload_direct_bytes", cs.up_direct},
		    {"cache_upload_staged_bytes", cs.up_staged},
		    {"cache_load_us", cs.load_ns / 1000},
		    {"cache_measure_us", cs.measure_ns / 1000},
		    {"cache_pack_us", cs.pack_ns / 1000},
		    {"cache_expand_us", cs.expand_ns / 1000},
		    {"cache_decode_device_tablets", cs.dec_dev_tablets},
		    {"cache_decode_device_bytes", cs.dec_dev_bytes},
		    {"cache_decode_host_tablets", cs.dec_host_tablets},
		    {"cache_ztext_blocks", cs.zt_blocks},
		    {"cache_pool_registered", cs.reg_ok},
		    {"cache_register_failures", cs.reg_fail},
		    {"cache_register_us", cs.reg_ns / 1000},
		    {"device_joins", xg_dev_joins},
		    {"stream_queries", xg_stream_queries},
		    {"stream_windows", xg_stream_windows},
		    {"stream_shrinks", xg_stream_shrinks},
		    /* AGGs with DISTINCT or bare columns over rows past the
		     * device, run in parts by their GROUP BY keys or (no
		     * keys) by their DISTINCT argument */
		    {"agg_parts", xg_agg_parts_runs},
		    /* of them, AGGs over a streamed table scan (its rows
		     * streamed to the host first) */
		    {"stream_agg_parts", xg_stream_agg_parts},
		    /* of the streamed queries, filters run window by window
		     * into a selection of the cached scan (the consumer's
		     * columns fit, the filters' do not) */
		    {"stream_selections", xg_stream_sels},
		    {"stream_loaded_bytes", cs.range_bytes},
		    /* operators run in passes over parts of their inputs */
		    {"part_ops", xo_part_ops},
		    {"part_passes", xo_part_passes},
		    {"fused_aggs", xg_fused_aggs},
		    {"fused_declines", xg_fused_declines},
		    {"device_group_results", xg_kept_aggs},
		    {"text_merges", xg_text_merges},
		    {"text_merged_bytes", xg_text_merged_bytes},
		    /* CUDA context creation in this process */
		    {"init_us", gpu_init_us()},
		    /* that creation started at open on a thread of its own
		     * (backend=gpu), with the staging buffers: its wall time */
		    {"init_prestart_us", gpu_init_async_us()},
		    /* statements' waits for that setup */
		    {"init_wait_us", gpu_init_wait_us()},
		    /* of it, columns' pages mapped ahead (exec_gpu_prefetch) */
		    {"prefetch_bytes", xg_prefetch_bytes},
		    {"prefetch_us", xg_prefetch_ns / 1000},
		    {"index_cache_entries", ics.entries},
		    {"index_cache_bytes", ics.bytes},
		    {"index_cache_hits", ics.hits},
		    {"index_cache_misses", ics.misses},
		    {"index_cache_evictions", ics.evictions},
		    /* the last bulk index sort and probe of this thread:
		     * rows, where (1 GPU, 0 CPU) and wall time */
		    {"index_sort_rows", ihs.sort_rows},
		    {"index_sort_gpu", ihs.sort_gpu},
		    {"index_sort_us", ihs.sort_us},
		    {"index_probe_keys", ihs.probe_keys},
		    {"index_probe_gpu", ihs.probe_gpu},
		    {"index_probe_us", ihs.probe_us},
		};
		for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]) && !rc;
		     i++)
			rc = xg_row(db, r, rows[i].n, NULL, (int64_t)rows[i].v);
		/* the registration's failure, in the driver's words (the
		 * value column is numeric: the words go in the name) */
		if (!rc && cs.reg_fail && !cs.reg_ok) {
			char nm2[300];
			snprintf(nm2, sizeof(nm2),
				 "cache_upload_staged_because: %.200s",
				 cs.reg_msg);
			rc = xg_row(db, r, nm2, NULL, 1);
		}
	} else {
		char buf[400];
		bool num = false;
		int64_t iv = 0;
		if (!strcasecmp(nm, "backend"))
			snprintf(buf, sizeof(buf), "%s", bn[db->backend]);
		else if (!strcasecmp(nm, "gpu_strict"))
			snprintf(buf, sizeof(buf), "%s",
				 db->gpu_strict ? "on" : "off");
		else if (!strcasecmp(nm, "gpu_info")) {
			exec_gpu_lock();
			gpu_describe(buf, sizeof(buf));
			exec_gpu_unlock();
		} else {
			num = true;
			iv = !strcasecmp(nm, "gpu_threshold")
				 ? (int64_t)db->gpu_threshold
			     : !strcasecmp(nm, "gpu_memory_limit")
				 ? (int64_t)(gpu_memory_limit() >> 20)
				 : (int64_t)(gcache_get_limit() >> 20);
		}
		if (!(r = rel_new(NULL, 1, num ? &tt[1] : &tt[0])))
			return db_err(db, GPMDB_NOMEM, "out of memory");
		rc = xg_row(db, r, NULL, num ? NULL : buf, iv);
	}
	if (rc) {
		rel_free(r);
		return rc;
	}
	*out = r;
	return GPMDB_OK;
}

bool exec_gpu_is_pragma(const char *name)
{
	return xg_is_pragma(name);
}
