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
