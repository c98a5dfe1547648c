/*
 * gpu_host.c - the gpu_* functions of a build without CUDA (make GPU=0):
 * each says so, so the engine can call them unconditionally and show why
 * it runs on the CPU.  With CUDA, gpu/device.cu and gpu/vm_gpu.cu give
 * the real ones and this file is empty.
 */
#include <stdio.h>
#include <string.h>

#include "gpmdb.h"

#include "gpu.h"

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

int gpu_available(void)
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

int gpu_sync(char *err, size_t errlen)
{
	return gpu_no_cuda(err, errlen);
}

int gpu_vm_run(const bc_program *p, const gpu_col *in, int nin, uint32_t nrows,
	       const char *text, uint64_t ntext, gpu_col *out, char *err,
	       size_t errlen)
{
	(void)p;
	(void)in;
	(void)nin;
	(void)nrows;
	(void)text;
	(void)ntext;
	(void)out;
	return gpu_no_cuda(err, errlen);
}

void gpu_vm_free_outputs(const bc_program *p, gpu_col *out)
{
	(void)p;
	(void)out;
}

#else

/* ISO C wants a translation unit to declare something. */
typedef int gpu_host_unused;

#endif /* GPMDB_HAVE_GPU */
