/*
 * gpu_internal.h - what the .cu files of gpu/ share: gpmdb's stream and
 * the CUDA error check.  C++ (nvcc) only.
 */
#ifndef GPMDB_GPU_INTERNAL_H
#define GPMDB_GPU_INTERNAL_H

#include <cuda_runtime.h>

#include "gpu.h"

extern "C" {
/* gpmdb's stream (valid after gpu_init succeeded). */
cudaStream_t gpu_stream(void);
/* Turns a failed CUDA call into a gpmdb error: "call: text (name)";
 * GPMDB_NOMEM for an allocation, GPMDB_GPU otherwise. */
int gpu_cuda_fail(cudaError_t e, const char *call, char *err, size_t errlen);
/* Can this device run gpmdb's kernels?  cudaSuccess or why not. */
cudaError_t gvm_probe_kernel(void);
}

/* Every CUDA call goes through GPU_TRY: a failure returns from the
 * calling function (which has err and errlen) with the call named. */
#define GPU_TRY(call)                                                          \
	do {                                                                   \
		cudaError_t e_ = (call);                                       \
		if (e_ != cudaSuccess)                                         \
			return gpu_cuda_fail(e_, #call, err, errlen);          \
	} while (0)

#endif /* GPMDB_GPU_INTERNAL_H */
