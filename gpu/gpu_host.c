/*
 * gpu_host.c - the gpu_* functions of a build without CUDA (make GPU=0):
 * each says so, so the engine can call them unconditionally and show why
 * it runs on the CPU.  With CUDA, gpu/device.cu and gpu/vm_gpu.cu give
 * the real ones and this file is empty.
 */
#include <stdio.h>
#include <string.h>

#include "gpmdb.h"

#include "cache_dec.h"
#include "gpu.h"
#include "index_gpu.h"
#include "keymatch.h"

#ifndef GPMDB_HAVE_GPU

#define GPU_NO_CUDA "gpmdb was built without CUDA (make GPU=0)"

static int gpu_no_cuda(char *err, size_t errlen)
{
	if (err && errlen)
		snprintf(err, errlen, "%s", GPU_NO_CUDA);
	return GPMDB_UNSUPPORTED;
}

int gpu_init(char *err, size_t errlen)
{
	return gpu_no_cuda(err, errlen);
}

void gpu_init_async(void)
{
}

void gpu_init_async_join(void)
{
}

uint64_t gpu_init_async_us(void)
{
	return 0;
}

int gpu_init_pending(void)
{
	return 0;
}

int gpu_available(void)
{
	return 0;
}

uint64_t gpu_init_us(void)
{
	return 0;
}

uint64_t gpu_init_wait_us(void)
{
	return 0;
}

void gpu_shutdown(void)
{
}

int gpu_get_info(gpu_info *info, char *err, size_t errlen)
{
	memset(info, 0, sizeof(*info));
	return gpu_no_cuda(err, errlen);
}

void gpu_describe(char *buf, size_t len)
{
	gpu_no_cuda(buf, len);
}

/* Kept and reported (PRAGMA gpu_memory_limit), used by nothing here. */
static uint64_t gpu_mem_cap;

void gpu_set_memory_limit(uint64_t bytes)
{
	gpu_mem_cap = bytes;
}

uint64_t gpu_memory_limit(void)
{
	return gpu_mem_cap;
}

uint64_t gpu_mem_avail(void)
{
	return UINT64_MAX; /* unknown */
}

int gpu_alloc(void **dptr, size_t n, char *err, size_t errlen)
{
	(void)n;
	*dptr = NULL;
	return gpu_no_cuda(err, errlen);
}

int gpu_free(void *dptr, char *err, size_t errlen)
{
	(void)dptr;
	return gpu_no_cuda(err, errlen);
}

int gpu_upload(void *dst, const void *src, size_t n, char *err, size_t errlen)
{
	(void)dst;
	(void)src;
	(void)n;
	return gpu_no_cuda(err, errlen);
}

int gpu_upload_staged(void *dst, const void *src, size_t n, char *err,
		      size_t errlen)
{
	(void)dst;
	(void)src;
	(void)n;
	return gpu_no_cuda(err, errlen);
}

size_t gpu_stage_size(void)
{
	return 0;
}

int gpu_stage_take(char **buf, char *err, size_t errlen)
{
	*buf = NULL;
	return gpu_no_cuda(err, errlen);
}

int gpu_stage_send(void *dst, size_t n, char *err, size_t errlen)
{
	(void)dst;
	(void)n;
	return gpu_no_cuda(err, errlen);
}

int gpu_download(void *dst, const void *src, size_t n, char *err, size_t errlen)
{
	(void)dst;
	(void)src;
	(void)n;
	return gpu_no_cuda(err, errlen);
}

int gpu_memset(void *dst, int byte, size_t n, char *err, size_t errlen)
{
	(void)dst;
	(void)byte;
	(void)n;
	return gpu_no_cuda(err, errlen);
}

int gpu_fill_seq(int64_t *dst, int64_t start, uint64_t n, char *err,
		 size_t errlen)
{
	(void)dst;
	(void)start;
	(void)n;
	return gpu_no_cuda(err, errlen);
}

int gpu_scatter_rows_dev(void *data, uint8_t *nulls, uint32_t width,
			 const uint64_t *rowids, const void *vals,
			 const uint32_t *vnulls, uint64_t n, char *err,
			 size_t errlen)
{
	return gpu_scatter_rows(data, nulls, width, rowids, vals, vnulls, n,
				err, errlen);
}

int gpu_scatter_rows(void *data, uint8_t *nulls, uint32_t width,
		     const uint64_t *rowids, const void *vals,
		     const uint32_t *vnulls, uint64_t n, char *err,
		     size_t errlen)
{
	(void)data;
	(void)nulls;
	(void)width;
	(void)rowids;
	(void)vals;
	(void)vnulls;
	(void)n;
	return gpu_no_cuda(err, errlen);
}

int gpu_sync(char *err, size_t errlen)
{
	return gpu_no_cuda(err, errlen);
}

int gpu_d2d_bandwidth(uint64_t bytes, int reps, double *gbs, char *err,
		      size_t errlen)
{
	(void)bytes;
	(void)reps;
	*gbs = 0;
	return gpu_no_cuda(err, errlen);
}

int gpu_vm_run(const bc_program *p, const gpu_col *in, int nin, uint32_t nrows,
	       const char *text, uint64_t ntext, const char *const *itext,
	       gpu_col *out, char *err, size_t errlen)
{
	(void)p;
	(void)in;
	(void)nin;
	(void)nrows;
	(void)text;
	(void)ntext;
	(void)itext;
	(void)out;
	return gpu_no_cuda(err, errlen);
}

void gpu_vm_free_outputs(const bc_program *p, gpu_col *out)
{
	(void)p;
	(void)out;
}

int gpu_select(const gpu_col *pred, uint32_t n, const uint32_t *sel_in,
	       uint32_t **idx, uint32_t *count, char *err, size_t errlen)
{
	(void)pred;
	(void)n;
	(void)sel_in;
	*idx = NULL;
	*count = 0;
	return gpu_no_cuda(err, errlen);
}

int gpu_download_many(int k, void *const *dst, const void *const *src,
		      const size_t *len, char *err, size_t errlen)
{
	(void)k;
	(void)dst;
	(void)src;
	(void)len;
	return gpu_no_cuda(err, errlen);
}

int gpu_group_agg(const gpu_sortcol *keys, int nkeys, uint32_t n,
		  const gpu_agg *aggs, int naggs, gpu_groups *g, char *err,
		  size_t errlen)
{
	(void)keys;
	(void)nkeys;
	(void)n;
	(void)aggs;
	(void)naggs;
	memset(g, 0, sizeof(*g));
	return gpu_no_cuda(err, errlen);
}

void gpu_group_free(gpu_groups *g)
{
	(void)g;
}

int gpu_group_agg_keep(const gpu_sortcol *keys, int nkeys, uint32_t n,
		       const gpu_agg *aggs, int naggs, const gpu_agg_fin *fin,
		       gpu_groups *g, gpu_col *out, int *on_dev, char *err,
		       size_t errlen)
{
	(void)keys;
	(void)nkeys;
	(void)n;
	(void)aggs;
	(void)naggs;
	(void)fin;
	(void)out;
	*on_dev = 0;
	memset(g, 0, sizeof(*g));
	return gpu_no_cuda(err, errlen);
}

int gpu_fused_agg(const gpu_term *terms, int nterms, const gpu_sortcol *keys,
		  int nkeys, uint32_t n, const gpu_agg *aggs, int naggs,
		  gpu_groups *g, int *declined, char *err, size_t errlen)
{
	(void)terms;
	(void)nterms;
	(void)keys;
	(void)nkeys;
	(void)n;
	(void)aggs;
	(void)naggs;
	memset(g, 0, sizeof(*g));
	*declined = 0;
	return gpu_no_cuda(err, errlen);
}

int gpu_copy(void *dst, const void *src, size_t n, char *err, size_t errlen)
{
	(void)dst;
	(void)src;
	(void)n;
	return gpu_no_cuda(err, errlen);
}

int gpu_gather(const gpu_col *src, const uint32_t *idx, uint32_t m,
	       gpu_col *dst, char *err, size_t errlen)
{
	(void)idx;
	(void)m;
	*dst = *src;
	dst->data = NULL;
	dst->nulls = NULL;
	return gpu_no_cuda(err, errlen);
}

int gpu_str_rebase(gpu_str *v, uint64_t n, uint32_t base, char *err,
		   size_t errlen)
{
	(void)v;
	(void)n;
	(void)base;
	return gpu_no_cuda(err, errlen);
}

int gpu_sort(const gpu_sortcol *keys, int nkeys, uint32_t n, uint32_t keep,
	     uint32_t *perm, char *err, size_t errlen)
{
	(void)keys;
	(void)nkeys;
	(void)n;
	(void)keep;
	(void)perm;
	return gpu_no_cuda(err, errlen);
}

int gpu_distinct(const gpu_sortcol *cols, int ncols, uint32_t n, uint32_t nl,
		 int mode, uint32_t **rows, uint32_t *nrows, char *err,
		 size_t errlen)
{
	(void)cols;
	(void)ncols;
	(void)n;
	(void)nl;
	(void)mode;
	*rows = NULL;
	*nrows = 0;
	return gpu_no_cuda(err, errlen);
}

int gpu_join(const gpu_sortcol *lkeys, const gpu_sortcol *rkeys, int nkeys,
	     uint32_t nl, uint32_t nr, uint64_t max_pairs, uint32_t **li,
	     uint32_t **ri, uint64_t *npairs, char *err, size_t errlen)
{
	(void)lkeys;
	(void)rkeys;
	(void)nkeys;
	(void)nl;
	(void)nr;
	(void)max_pairs;
	*li = *ri = NULL;
	*npairs = 0;
	return gpu_no_cuda(err, errlen);
}

int gpu_join_dev(const gpu_sortcol *lkeys, const gpu_sortcol *rkeys, int nkeys,
		 uint32_t nl, uint32_t nr, const uint32_t *lmap,
		 const uint32_t *rmap, uint64_t max_pairs, uint32_t **li,
		 uint32_t **ri, uint64_t *npairs, char *err, size_t errlen)
{
	(void)lkeys;
	(void)rkeys;
	(void)nkeys;
	(void)nl;
	(void)nr;
	(void)lmap;
	(void)rmap;
	(void)max_pairs;
	*li = *ri = NULL;
	*npairs = 0;
	return gpu_no_cuda(err, errlen);
}

int gpu_semi_join_dev(const gpu_sortcol *lkeys, const gpu_sortcol *rkeys,
		      int nkeys, uint32_t nl, uint32_t nr, int mode,
		      const uint32_t *lmap, uint32_t **rows, uint32_t *nrows,
		      char *err, size_t errlen)
{
	(void)lkeys;
	(void)rkeys;
	(void)nkeys;
	(void)nl;
	(void)nr;
	(void)mode;
	(void)lmap;
	*rows = NULL;
	*nrows = 0;
	return gpu_no_cuda(err, errlen);
}

int gpu_semi_join(const gpu_sortcol *lkeys, const gpu_sortcol *rkeys, int nkeys,
		  uint32_t nl, uint32_t nr, int mode, uint32_t **rows,
		  uint32_t *nrows, char *err, size_t errlen)
{
	(void)lkeys;
	(void)rkeys;
	(void)nkeys;
	(void)nl;
	(void)nr;
	(void)mode;
	*rows = NULL;
	*nrows = 0;
	return gpu_no_cuda(err, errlen);
}

int gpu_distinct_nulls(const gpu_sortcol *keys, int nk, uint32_t m,
		       uint8_t **nulls, char *err, size_t errlen)
{
	(void)keys;
	(void)nk;
	(void)m;
	*nulls = NULL;
	return gpu_no_cuda(err, errlen);
}

int gpu_row_numbers(const gpu_col *like, uint32_t m, gpu_col *out, char *err,
		    size_t errlen)
{
	(void)like;
	(void)m;
	memset(out, 0, sizeof(*out));
	return gpu_no_cuda(err, errlen);
}

int gpu_remap(const uint32_t *base, const uint32_t *idx, uint32_t m,
	      uint32_t **out, char *err, size_t errlen)
{
	(void)base;
	(void)idx;
	(void)m;
	*out = NULL;
	return gpu_no_cuda(err, errlen);
}

int gpu_idx_shift(uint32_t *dst, const uint32_t *src, uint32_t n, uint32_t add,
		  char *err, size_t errlen)
{
	(void)dst;
	(void)src;
	(void)n;
	(void)add;
	return gpu_no_cuda(err, errlen);
}

int gpu_unmatched(const uint32_t *li, uint64_t np, uint32_t nl, int matched,
		  uint32_t **rows, uint32_t *nrows, char *err, size_t errlen)
{
	(void)li;
	(void)np;
	(void)nl;
	(void)matched;
	*rows = NULL;
	*nrows = 0;
	return gpu_no_cuda(err, errlen);
}

/* index_gpu.h */

int gpu_ix_sort(void *recs, uint64_t n, uint32_t width, uint32_t cmp,
		gpu_ix_sort_stats *st, char *err, size_t errlen)
{
	(void)recs;
	(void)n;
	(void)width;
	(void)cmp;
	if (st)
		memset(st, 0, sizeof(*st));
	return gpu_no_cuda(err, errlen);
}

int gpu_ix_probe(const stg_ix_probe_job *job, int64_t *rowids,
		 gpu_ix_probe_stats *st, char *err, size_t errlen)
{
	(void)job;
	(void)rowids;
	if (st)
		memset(st, 0, sizeof(*st));
	return gpu_no_cuda(err, errlen);
}

int gpu_key_match(const gpu_keymatch_in *in, uint8_t *used,
		  gpu_keymatch_out *out, char *err, size_t errlen)
{
	(void)in;
	(void)used;
	memset(out, 0, sizeof(*out));
	return gpu_no_cuda(err, errlen);
}

int gpu_key_gather(const void *vals, const uint32_t *nulls, uint64_t n,
		   uint32_t width, const int64_t *dprow, uint64_t m, void **dv,
		   uint32_t **dnl, char *err, size_t errlen)
{
	(void)vals;
	(void)nulls;
	(void)n;
	(void)width;
	(void)dprow;
	(void)m;
	*dv = NULL;
	*dnl = NULL;
	return gpu_no_cuda(err, errlen);
}

void gpu_ix_prewarm_hook(uint64_t n, uint32_t width)
{
	(void)n;
	(void)width;
}

int gpu_ix_sort_hook(void *recs, uint64_t n, uint32_t width, uint32_t cmp,
		     int64_t *dup, char *why, size_t whylen)
{
	if (dup)
		*dup = -2;
	return gpu_ix_sort(recs, n, width, cmp, NULL, why, whylen);
}

int gpu_ix_probe_hook(const stg_ix_probe_job *job, int64_t *rowids, char *why,
		      size_t whylen)
{
	return gpu_ix_probe(job, rowids, NULL, why, whylen);
}

void gpu_ix_cache_get_stats(gpu_ix_cache_stats *s)
{
	memset(s, 0, sizeof(*s));
}

void gpu_ix_cache_set_limit(uint64_t bytes)
{
	(void)bytes;
}

void gpu_ix_cache_drop(const void *pool)
{
	(void)pool;
}

int gpu_ix_cache_reclaim(void)
{
	return 0;
}

void gpu_ix_cache_forget(void)
{
}

void gpu_ix_set_xfer(int mode)
{
	(void)mode;
}

void gpu_ix_set_probe_samples(int on)
{
	(void)on;
}

int gpu_cache_decode(const gc_dec_job *jobs, uint32_t n, uint32_t most_rows,
		     const void *scr, void *out, uint8_t *nul, uint32_t w,
		     char *err, size_t errlen)
{
	(void)jobs;
	(void)n;
	(void)most_rows;
	(void)scr;
	(void)out;
	(void)nul;
	(void)w;
	return gpu_no_cuda(err, errlen);
}

#else

/* ISO C wants a translation unit to declare something. */
typedef int gpu_host_unused;

#endif /* GPMDB_HAVE_GPU */
