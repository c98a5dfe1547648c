/*
 * dml_host.c - gpu_dml.h in a build without CUDA (make GPU=0): every call
 * says so, and the engine writes through the CPU path.  With CUDA,
 * gpu/persist.cu and gpu/dml.cu give the real ones and this file is empty.
 */
#include <stdio.h>

#include "gpmdb.h"

#include "gpu_dml.h"

#ifndef GPMDB_HAVE_GPU

static int dml_no_cuda(char *err, size_t errlen)
{
	if (err && errlen)
		snprintf(err, errlen,
			 "gpmdb was built without CUDA (make GPU=0)");
	return GPMDB_UNSUPPORTED;
}

int gpu_pm_register(void *base, uint64_t len, char *err, size_t errlen)
{
	(void)base;
	(void)len;
	return dml_no_cuda(err, errlen);
}

void gpu_dml_set_launch_hook(void (*fn)(int done))
{
	(void)fn; /* no kernels to tell about */
}

int gpu_pm_unregister(void *base, char *err, size_t errlen)
{
	(void)base;
	(void)err;
	(void)errlen;
	return GPMDB_OK; /* nothing was registered */
}

int gpu_pm_is_registered(const void *base, uint64_t len)
{
	(void)base;
	(void)len;
	return 0;
}

int gpu_pm_range_registered(const void *base, uint64_t map_len, const void *p,
			    uint64_t len)
{
	(void)base;
	(void)map_len;
	(void)p;
	(void)len;
	return 0;
}

int gpu_hcl_update(void *pool, uint64_t seg_off, const hcl_geom *geom,
		   const gpu_tab_layout *lay, const uint64_t *rowids,
		   uint64_t n, int ncols, const uint32_t *cols,
		   const void *const *vals, const uint32_t *const *nulls,
		   int scope, const gpu_update_opts *uo, gpu_dml_timing *t,
		   char *err, size_t errlen)
{
	(void)pool, (void)seg_off, (void)geom, (void)lay, (void)rowids;
	(void)n, (void)ncols, (void)cols, (void)vals, (void)nulls;
	(void)scope, (void)uo, (void)t;
	return dml_no_cuda(err, errlen);
}

int gpu_hcl_update_dev(void *pool, uint64_t seg_off, const hcl_geom *geom,
		       const gpu_tab_layout *lay, const uint64_t *rowids,
		       uint64_t n, const uint64_t range[2], int ncols,
		       const uint32_t *cols, const void *const *vals,
		       const uint32_t *const *nulls, int scope,
		       const gpu_update_opts *uo, gpu_dml_timing *t, char *err,
		       size_t errlen)
{
	(void)pool, (void)seg_off, (void)geom, (void)lay, (void)rowids;
	(void)n, (void)range, (void)ncols, (void)cols, (void)vals;
	(void)nulls, (void)scope, (void)uo, (void)t;
	return dml_no_cuda(err, errlen);
}

int gpu_rowid_range(const uint64_t *rowids, uint64_t n, uint64_t out[3],
		    char *err, size_t errlen)
{
	(void)rowids, (void)n;
	out[0] = out[1] = 0;
	out[2] = 1;
	return dml_no_cuda(err, errlen);
}

int gpu_conv_update(void *pool, uint64_t seg_off, const hcl_geom *geom,
		    const gpu_tab_layout *lay, const uint64_t *rowids,
		    uint64_t n, int ncols, const uint32_t *cols,
		    const void *const *vals, const uint32_t *const *nulls,
		    uint32_t nparts, gpu_dml_timing *t, char *err,
		    size_t errlen)
{
	(void)pool, (void)seg_off, (void)geom, (void)lay, (void)rowids;
	(void)n, (void)ncols, (void)cols, (void)vals, (void)nulls;
	(void)nparts, (void)t;
	return dml_no_cuda(err, errlen);
}

int gpu_pcie_bandwidth(uint64_t bytes, int reps, double *h2d, double *d2h,
		       char *err, size_t errlen)
{
	(void)bytes, (void)reps;
	*h2d = *d2h = 0;
	return dml_no_cuda(err, errlen);
}

int gpu_hcl_delete(void *pool, uint64_t seg_off, const hcl_geom *geom,
		   const gpu_tab_layout *lay, const uint64_t *rowids,
		   uint64_t n, int scope, uint64_t *added, gpu_dml_timing *t,
		   char *err, size_t errlen)
{
	(void)pool, (void)seg_off, (void)geom, (void)lay, (void)rowids;
	(void)n, (void)scope, (void)t;
	*added = 0;
	return dml_no_cuda(err, errlen);
}

int gpu_append(void *pool, const gpu_tab_layout *lay, uint64_t start,
	       uint64_t n, const void *const *vals,
	       const uint32_t *const *nulls, gpu_append_chunk_fn fn, void *ctx,
	       gpu_dml_timing *t, char *err, size_t errlen)
{
	(void)pool, (void)lay, (void)start, (void)n, (void)vals;
	(void)nulls, (void)fn, (void)ctx, (void)t;
	return dml_no_cuda(err, errlen);
}

int gpu_append_keep(void *pool, const gpu_tab_layout *lay, uint64_t start,
		    uint64_t n, const void *const *vals,
		    const uint32_t *const *nulls, const uint32_t *srcw,
		    gpu_append_chunk_fn fn, void *ctx,
		    const gpu_append_copies *keep, gpu_dml_timing *t, char *err,
		    size_t errlen)
{
	(void)pool, (void)lay, (void)start, (void)n, (void)vals, (void)srcw;
	(void)nulls, (void)fn, (void)ctx, (void)keep, (void)t;
	return dml_no_cuda(err, errlen);
}

int gpu_append_dev(void *pool, const gpu_tab_layout *lay, uint64_t start,
		   uint64_t n, const void *const *dvals,
		   const uint32_t *const *dnulls, gpu_append_chunk_fn fn,
		   void *ctx, gpu_dml_timing *t, char *err, size_t errlen)
{
	(void)pool, (void)lay, (void)start, (void)n, (void)dvals;
	(void)dnulls, (void)fn, (void)ctx, (void)t;
	return dml_no_cuda(err, errlen);
}

int gpu_ins_convert(const gpu_ins_src *src, int ncols, uint64_t n, void **vals,
		    uint32_t **nulls, uint64_t *first_null, uint64_t *first_bad,
		    char *err, size_t errlen)
{
	(void)src, (void)n, (void)first_null, (void)first_bad;
	for (int c = 0; c < ncols; c++)
		vals[c] = nulls[c] = NULL;
	return dml_no_cuda(err, errlen);
}

int gpu_hcl_recover(void *pool, uint64_t map_len, uint64_t seg_off,
		    uint64_t seg_size, const gpu_tab_layout *lay,
		    uint64_t row_count, uint64_t *applied,
		    gpu_recover_timing *rt, char *err, size_t errlen)
{
	(void)pool, (void)map_len, (void)seg_off, (void)seg_size, (void)lay;
	(void)row_count, (void)rt;
	*applied = 0;
	return dml_no_cuda(err, errlen);
}

int gpu_pm_ensure(void *base, uint64_t map_len, const uint64_t *r, uint32_t nr,
		  uint64_t *added, char *err, size_t errlen)
{
	(void)base;
	(void)map_len;
	(void)r;
	(void)nr;
	if (added)
		*added = 0;
	return dml_no_cuda(err, errlen);
}

void gpu_pm_ranges_drop(void *base)
{
	(void)base;
}

uint64_t gpu_pm_range_bytes(void)
{
	return 0;
}

void gpu_pm_range_times(uint64_t *populate_ns, uint64_t *register_ns)
{
	*populate_ns = *register_ns = 0;
}

uint32_t gpu_write_ranges(uint64_t map_len, uint64_t s0, uint64_t s1,
			  const gpu_tab_layout *lay, uint64_t row_lo,
			  uint64_t row_end, unsigned long long cmask, int del,
			  uint64_t *r)
{
	(void)map_len;
	(void)row_lo;
	(void)s0;
	(void)s1;
	(void)lay;
	(void)row_end;
	(void)cmask;
	(void)del;
	(void)r;
	return 0;
}

#endif /* !GPMDB_HAVE_GPU */
