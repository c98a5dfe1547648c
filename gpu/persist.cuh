/*
 * persist.cuh - the device persist primitive of GPU writes (GPM's
 * gpm_persist) and its scopes.  CUDA only; included by gpu/dml.cu.
 *
 * A store by a kernel into the registered pool mapping travels over PCIe
 * into host memory.  __threadfence_system() (fence.sc.sys) orders the
 * calling thread's earlier stores before its later ones for every
 * observer in the system, the host included, and does not return before
 * they are performed there: on tmpfs (/dev/shm), which is what gpmdb's
 * pmem mode means without real PM, that is durable against a process
 * crash.  (On real PM without eADR the stores land in the CPU caches
 * through DDIO: GPM disables DDIO for that; gpmdb does not manage it.)
 *
 * Scopes (Scoped persist barriers, GPGPU'18): too narrow breaks
 * recovery, too wide costs.
 *   thread: this thread's stores before its later stores.
 *   block:  every thread of the block's stores before any of its later
 *           stores: a barrier, one system fence, a barrier (the fence is
 *           cumulative: it orders what the barrier made visible to it).
 *           Every thread of the block must call it.
 *   grid:   a kernel boundary: each thread fences at the end of the
 *           kernel, the next kernel of the stream starts after all did.
 *   none:   no fence (the baseline the scopes are measured against; the
 *           stores still reach the pool before the host's stream sync
 *           and commit, but in no order: not crash-consistent).
 */
#ifndef GPMDB_PERSIST_CUH
#define GPMDB_PERSIST_CUH

__device__ __forceinline__ void gpm_persist_thread(void)
{
	__threadfence_system();
}

__device__ __forceinline__ void gpm_persist_block(void)
{
	__syncthreads();
	if (threadIdx.x == 0)
		__threadfence_system();
	__syncthreads();
}

/* The persist of a scope, at a point every thread of the block reaches
 * (no divergence around a call with GPU_SCOPE_BLOCK). */
__device__ __forceinline__ void gpm_persist(int scope)
{
	if (scope == 3 /* GPU_SCOPE_NONE */)
		return;
	if (scope == 1 /* GPU_SCOPE_BLOCK */)
		gpm_persist_block();
	else /* thread; grid: the fence before the kernel boundary */
		gpm_persist_thread();
}

#endif /* GPMDB_PERSIST_CUH */
