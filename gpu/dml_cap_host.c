/*
 * dml_cap_host.c - gpu/dml_cap.h in a build without CUDA (make GPU=0):
 * every call says so, and the engine writes the batch through the CPU
 * path.  With CUDA, gpu/dml_cap.cu gives the real ones and this file is
 * empty.
 */
#include <stdio.h>

#include "gpmdb.h"

#include "dml_cap.h"

#ifndef GPMDB_HAVE_GPU

int gpu_cap_build(const hcl_geom *g, const uint64_t *rowids, uint64_t n,
		  int ncols, const gpu_cap_col *cols, const int64_t *live_rows,
		  uint64_t nlive, uint64_t nrows, uint64_t *added,
		  gpu_cap_batch **out, gpu_cap_timing *t, char *err,
		  size_t errlen)
{
	(void)g, (void)rowids, (void)n, (void)ncols, (void)cols;
	(void)live_rows, (void)nlive, (void)nrows, (void)t;
	*added = 0;
	*out = NULL;
	if (err && errlen)
		snprintf(err, errlen,
			 "gpmdb was built without CUDA (make GPU=0)");
	return GPMDB_UNSUPPORTED;
}

uint64_t gpu_cap_region_bytes(const gpu_cap_batch *b, int region)
{
	(void)b, (void)region;
	return 0;
}

int gpu_cap_fetch(gpu_cap_batch *b, int region, void *dst, gpu_cap_timing *t,
		  char *err, size_t errlen)
{
	(void)b, (void)region, (void)dst, (void)t;
	if (err && errlen)
		snprintf(err, errlen,
			 "gpmdb was built without CUDA (make GPU=0)");
	return GPMDB_UNSUPPORTED;
}

void gpu_cap_free(gpu_cap_batch *b)
{
	(void)b;
}

void gpu_cap_note(int done)
{
	(void)done;
}

#else
/* ISO C forbids an empty translation unit */
typedef int dml_cap_host_unused;
#endif
