/*
 * persist.cu - registering the pool mapping with CUDA (gpu_dml.h).
 *
 * cudaHostRegister pins the mapping's pages and maps them into the GPU's
 * address space, so kernels can store into the pool.  CUDA accepts a
 * MAP_SHARED mapping of a tmpfs (/dev/shm) file and refuses one of an
 * ext4 file ("invalid argument", seen on the GPU machine): then GPU
 * writes are not possible and the engine says so (docs/gpu.md).
 *
 * A small table of registrations, one per base address: the engine
 * registers a pool once and re-registers it when it was remapped.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "gpu_dml.h"
#include "gpu_internal.h"

#include "gpmdb.h"

#define PM_MAX 16

static struct {
	void *base;
	uint64_t len;
} pm_regs[PM_MAX];
static pthread_mutex_t pm_lock = PTHREAD_MUTEX_INITIALIZER;

static int pm_find(const void *base)
{
	for (int i = 0; i < PM_MAX; i++)
		if (pm_regs[i].base == base && base)
			return i;
	return -1;
}

/* Unregisters slot i (lock held). */
static int pm_drop(int i, char *err, size_t errlen)
{
	cudaError_t e = cudaHostUnregister(pm_regs[i].base);

	pm_regs[i].base = NULL;
	pm_regs[i].len = 0;
	if (e != cudaSuccess) {
		(void)cudaGetLastError(); /* not sticky: clear it */
		return gpu_cuda_fail(e, "cudaHostUnregister", err, errlen);
	}
	return GPMDB_OK;
}

extern "C" int gpu_pm_register(void *base, uint64_t len, char *err,
			       size_t errlen)
{
	int rc = gpu_init(err, errlen), i, slot = -1;
	cudaError_t e;
	void *dp = NULL;

	if (rc != GPMDB_OK)
		return rc;
	if (base == NULL || len == 0) {
		snprintf(err, errlen, "gpu_pm_register: no mapping");
		return GPMDB_MISUSE;
	}
	pthread_mutex_lock(&pm_lock);
	i = pm_find(base);
	if (i >= 0 && pm_regs[i].len == len) {
		pthread_mutex_unlock(&pm_lock);
		return GPMDB_OK;
	}
	/* The same base with another length: the pool grew and was mapped
	 * again at the same address.  The old range goes first, or CUDA
	 * refuses the overlap. */
	if (i >= 0 && (rc = pm_drop(i, err, errlen)) != GPMDB_OK) {
		pthread_mutex_unlock(&pm_lock);
		return rc;
	}
	for (i = 0; i < PM_MAX && slot < 0; i++)
		if (pm_regs[i].base == NULL)
			slot = i;
	if (slot < 0) {
		pthread_mutex_unlock(&pm_lock);
		snprintf(err, errlen,
			 "gpu_pm_register: more than %d pools registered",
			 PM_MAX);
		return GPMDB_UNSUPPORTED;
	}
	e = cudaHostRegister(base, (size_t)len,
			     cudaHostRegisterMapped | cudaHostRegisterPortable);
	if (e != cudaSuccess) {
		(void)cudaGetLastError(); /* not sticky: clear it */
		pthread_mutex_unlock(&pm_lock);
		snprintf(err, errlen,
			 "cudaHostRegister of the pool mapping (%llu bytes) "
			 "failed: %s (%s); GPU writes need the pool on tmpfs "
			 "(/dev/shm) or persistent memory (durability pmem)",
			 (unsigned long long)len, cudaGetErrorString(e),
			 cudaGetErrorName(e));
		return GPMDB_UNSUPPORTED;
	}
	/* Kernels use the host address (UVA): check the device agrees. */
	e = cudaHostGetDevicePointer(&dp, base, 0);
	if (e != cudaSuccess || dp != base) {
		(void)cudaGetLastError();
		(void)cudaHostUnregister(base);
		pthread_mutex_unlock(&pm_lock);
		snprintf(err, errlen,
			 "registered pool: the device address differs from "
			 "the host's (%s): GPU writes need unified addressing",
			 e == cudaSuccess ? "no UVA" : cudaGetErrorString(e));
		return GPMDB_UNSUPPORTED;
	}
	pm_regs[slot].base = base;
	pm_regs[slot].len = len;
	pthread_mutex_unlock(&pm_lock);
	return GPMDB_OK;
}

extern "C" int gpu_pm_unregister(void *base, char *err, size_t errlen)
{
	int i, rc = GPMDB_OK;

	pthread_mutex_lock(&pm_lock);
	i = pm_find(base);
	if (i >= 0)
		rc = pm_drop(i, err, errlen);
	pthread_mutex_unlock(&pm_lock);
	return rc;
}

extern "C" int gpu_pm_is_registered(const void *base, uint64_t len)
{
	int i, r;

	pthread_mutex_lock(&pm_lock);
	i = pm_find(base);
	r = i >= 0 && pm_regs[i].len == len;
	pthread_mutex_unlock(&pm_lock);
	return r;
}

/* ---- PCIe copy limits (the batch benchmark) ------------------------- */

extern "C" int gpu_pcie_bandwidth(uint64_t bytes, int reps, double *h2d,
				  double *d2h, char *err, size_t errlen)
{
	void *h = NULL, *d = NULL;
	cudaEvent_t e0 = NULL, e1 = NULL;
	cudaError_t ce = cudaSuccess;
	const char *call = "";
	cudaStream_t s;
	float best[2] = {0, 0};
	int rc = gpu_init(err, errlen);

	*h2d = *d2h = 0;
	if (rc)
		return rc;
	if (bytes == 0 || reps < 1) {
		snprintf(err, errlen,
			 "gpu_pcie_bandwidth: bytes and reps must be > 0");
		return GPMDB_MISUSE;
	}
	s = gpu_stream();
#define PB_TRY(x)                                                              \
	do {                                                                   \
		if (ce == cudaSuccess && (ce = (x)) != cudaSuccess)            \
			call = #x;                                             \
	} while (0)
	/* pinned host memory: what a DMA engine copies at full speed */
	PB_TRY(cudaMallocHost(&h, bytes));
	PB_TRY(cudaMalloc(&d, bytes));
	PB_TRY(cudaEventCreate(&e0));
	PB_TRY(cudaEventCreate(&e1));
	if (ce == cudaSuccess)
		memset(h, 1, bytes); /* pages exist before the timing */
	/* r = -1: untimed warm-up of both directions */
	for (int r = -1; r < reps && ce == cudaSuccess; r++) {
		for (int dir = 0; dir < 2 && ce == cudaSuccess; dir++) {
			float ms = 0;

			PB_TRY(cudaEventRecord(e0, s));
			PB_TRY(cudaMemcpyAsync(dir ? h : d, dir ? d : h, bytes,
					       dir ? cudaMemcpyDeviceToHost
						   : cudaMemcpyHostToDevice,
					       s));
			PB_TRY(cudaEventRecord(e1, s));
			PB_TRY(cudaEventSynchronize(e1));
			PB_TRY(cudaEventElapsedTime(&ms, e0, e1));
			if (r >= 0 && ce == cudaSuccess && ms > 0 &&
			    (best[dir] == 0 || ms < best[dir]))
				best[dir] = ms;
		}
	}
#undef PB_TRY
	if (ce != cudaSuccess) {
		(void)cudaGetLastError();
		rc = gpu_cuda_fail(ce, call, err, errlen);
	}
	if (h)
		(void)cudaFreeHost(h);
	if (d)
		(void)cudaFree(d);
	if (e0)
		(void)cudaEventDestroy(e0);
	if (e1)
		(void)cudaEventDestroy(e1);
	if (!rc && best[0] > 0)
		*h2d = (double)bytes / (best[0] * 1e-3) / 1e9;
	if (!rc && best[1] > 0)
		*d2h = (double)bytes / (best[1] * 1e-3) / 1e9;
	return rc;
}
