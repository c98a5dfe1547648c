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
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "gpu_dml.h"
#include "gpu_internal.h"

#include "gpmdb.h"

#define PM_MAX 16

static struct {
	void *base;
	uint64_t len;
} pm_regs[PM_MAX];
static pthread_mutex_t pm_lock = PTHREAD_MUTEX_INITIALIZER;

static void pr_drop_base(const void *base); /* below, lock held */

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

extern "C" int gpu_host_register_uva(void *p, uint64_t len, const char *what,
				     char *err, size_t errlen)
{
	cudaError_t e = cudaHostRegister(
	    p, (size_t)len, cudaHostRegisterMapped | cudaHostRegisterPortable);
	void *dp = NULL;

	if (e != cudaSuccess) {
		(void)cudaGetLastError(); /* not sticky: clear it */
		return gpu_say(err, errlen, GPMDB_UNSUPPORTED,
			       "cudaHostRegister of %s (%llu bytes) failed: "
			       "%s (%s); GPU writes need the pool on tmpfs "
			       "(/dev/shm) or persistent memory (durability "
			       "pmem)",
			       what, (unsigned long long)len,
			       cudaGetErrorString(e), cudaGetErrorName(e));
	}
	/* Kernels use the host address (UVA): check the device agrees. */
	e = cudaHostGetDevicePointer(&dp, p, 0);
	if (e != cudaSuccess || dp != p) {
		(void)cudaGetLastError();
		(void)cudaHostUnregister(p);
		return gpu_say(
		    err, errlen, GPMDB_UNSUPPORTED,
		    "registered %s: the device address differs from "
		    "the host's (%s): GPU writes need unified "
		    "addressing",
		    what, e == cudaSuccess ? "no UVA" : cudaGetErrorString(e));
	}
	return GPMDB_OK;
}

extern "C" int gpu_pm_register(void *base, uint64_t len, char *err,
			       size_t errlen)
{
	int rc = gpu_init(err, errlen), i, slot = -1;

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
	/* The same base with another length: the pool grew (in place, or
	 * mapped again at the same address).  The old range goes first, and
	 * the write paths' ranges of it, or CUDA refuses the overlap. */
	pr_drop_base(base);
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
	rc = gpu_host_register_uva(base, len, "the pool mapping", err, errlen);
	if (rc != GPMDB_OK) {
		pthread_mutex_unlock(&pm_lock);
		return rc;
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

/* ---- ranges ---------------------------------------------------------------
 *
 * Registering a whole pool pins and maps every page of it: about a
 * second for a few GB, paid by every process's first GPU write and again
 * after each growth of the pool.  A GPU write only needs what its kernels
 * store into: the tablets of the rows it writes and its log segment.
 * gpu_pm_ensure registers the parts of such ranges not registered yet and
 * keeps them for the next statements (the table's tablets are written
 * again); a new mapping (the pool grew and was mapped again) or
 * gpu_pm_ranges_drop forgets them.  Kernels keep using host addresses
 * (UVA: a registered range's device address is its host address).
 */
typedef struct {
	uint64_t lo, hi; /* pool offsets, page-aligned */
} pm_range;
static char *pr_base;
static uint64_t pr_len;
static pm_range *pr;
static size_t pr_n, pr_cap;
static uint64_t pr_bytes;

/* Unregisters every range (lock held); errors only leak pins. */
static void pr_drop_all(void)
{
	for (size_t i = 0; i < pr_n; i++)
		if (cudaHostUnregister(pr_base + pr[i].lo) != cudaSuccess)
			(void)cudaGetLastError();
	pr_n = 0;
	pr_bytes = 0;
	pr_base = NULL;
	pr_len = 0;
}

static void pr_drop_base(const void *base)
{
	if (pr_base && pr_base == (const char *)base)
		pr_drop_all();
}

extern "C" void gpu_pm_ranges_drop(void *base)
{
	pthread_mutex_lock(&pm_lock);
	if (pr_base && (!base || pr_base == base))
		pr_drop_all();
	pthread_mutex_unlock(&pm_lock);
}

static uint64_t pr_populate_ns, pr_register_ns;

static uint64_t pr_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Whether pr_add populates a range's pages on every core before
 * cudaHostRegister (GPMDB_GPU_POPULATE=0: not; a measurement switch,
 * docs/gpu.md "INSERT pipeline"). */
static int pr_populate_on(void)
{
	static int on = -1;

	if (on < 0) {
		const char *e = getenv("GPMDB_GPU_POPULATE");
		on = !(e && !strcmp(e, "0"));
	}
	return on;
}

/*
 * Why: cudaHostRegister pins a range page by page on one thread, and a
 * page of a fresh pool range (allocated by posix_fallocate, never
 * touched by this process) must first be faulted into the page table.
 * MADV_POPULATE_WRITE on every core maps them in parallel, so the
 * registration only pins.  A failure (EFAULT: the file cannot back the
 * page, tmpfs full) is the registration's error to report.
 */
static int pr_populate(char *p, uint64_t len, char *err, size_t errlen)
{
	const uint64_t piece = 2u << 20;
	long np = (long)((len + piece - 1) / piece);
	int bad = 0, why = 0;

#pragma omp parallel for schedule(dynamic) reduction(+ : bad) if (np > 1)
	for (long i = 0; i < np; i++) {
		uint64_t o = (uint64_t)i * piece;
		uint64_t l = len - o < piece ? len - o : piece;
		if (madvise(p + o, (size_t)l, MADV_POPULATE_WRITE) != 0) {
			bad++;
			__atomic_store_n(&why, errno, __ATOMIC_RELAXED);
		}
	}
	if (bad)
		return gpu_say(err, errlen, GPMDB_IOERR,
			       "cannot populate %llu bytes of the pool "
			       "mapping for the GPU's writes: %s",
			       (unsigned long long)len, strerror(why));
	return GPMDB_OK;
}

extern "C" void gpu_pm_range_times(uint64_t *populate_ns, uint64_t *register_ns)
{
	pthread_mutex_lock(&pm_lock);
	*populate_ns = pr_populate_ns;
	*register_ns = pr_register_ns;
	pthread_mutex_unlock(&pm_lock);
}

/* Registers [lo, hi) as one more range (lock held). */
static int pr_add(uint64_t lo, uint64_t hi, char *err, size_t errlen)
{
	void *p = pr_base + lo;
	uint64_t t0 = pr_now_ns(), t1;
	int rc;

	if (pr_n == pr_cap) {
		size_t nc = pr_cap ? 2 * pr_cap : 64;
		pm_range *n = (pm_range *)realloc(pr, nc * sizeof(*n));
		if (!n)
			return gpu_say(err, errlen, GPMDB_NOMEM,
				       "out of memory for the pool's "
				       "registrations");
		pr = n;
		pr_cap = nc;
	}
	rc = pr_populate_on() ? pr_populate((char *)p, hi - lo, err, errlen)
			      : GPMDB_OK;
	t1 = pr_now_ns();
	pr_populate_ns += t1 - t0;
	if (rc != GPMDB_OK)
		return rc;
	rc = gpu_host_register_uva(p, hi - lo, "a range of the pool mapping",
				   err, errlen);
	pr_register_ns += pr_now_ns() - t1;
	if (rc != GPMDB_OK)
		return rc;
	/* keep the list sorted by lo */
	size_t at = pr_n;
	while (at > 0 && pr[at - 1].lo > lo) {
		pr[at] = pr[at - 1];
		at--;
	}
	pr[at].lo = lo;
	pr[at].hi = hi;
	pr_n++;
	pr_bytes += hi - lo;
	return GPMDB_OK;
}

extern "C" int gpu_pm_ensure(void *base, uint64_t map_len, const uint64_t *r,
			     uint32_t nr, uint64_t *added, char *err,
			     size_t errlen)
{
	uint64_t pg = 4096;
	int rc = gpu_init(err, errlen);

	if (added)
		*added = 0;
	if (rc != GPMDB_OK)
		return rc;
	pthread_mutex_lock(&pm_lock);
	/* the whole mapping registered (gpu_pm_register): nothing to add;
	 * a whole registration of a shorter length (the pool grew in
	 * place) goes, or its range would be registered twice */
	{
		int i = pm_find(base);
		if (i >= 0 && pm_regs[i].len == map_len) {
			pthread_mutex_unlock(&pm_lock);
			return GPMDB_OK;
		}
		if (i >= 0 && (rc = pm_drop(i, err, errlen)) != GPMDB_OK) {
			pthread_mutex_unlock(&pm_lock);
			return rc;
		}
	}
	/* the ranges stay while the base does: a pool grown in place
	 * (storage's reservation) keeps them; a mapping that moved or
	 * shrank drops them (storage's unmap hook drops them first) */
	if (pr_base != (char *)base || map_len < pr_len) {
		pr_drop_all();
		pr_base = (char *)base;
	}
	pr_len = map_len;
	for (uint32_t k = 0; k < nr && rc == GPMDB_OK; k++) {
		uint64_t lo = r[2 * k] / pg * pg,
			 hi = (r[2 * k + 1] + pg - 1) / pg * pg;
		if (hi > map_len)
			hi = map_len;
		/* the gaps of [lo, hi) between registered ranges */
		for (size_t i = 0; i < pr_n && lo < hi && rc == GPMDB_OK; i++) {
			if (pr[i].hi <= lo)
				continue;
			if (pr[i].lo >= hi)
				break;
			if (pr[i].lo > lo) {
				uint64_t g = pr[i].lo;
				rc = pr_add(lo, g, err, errlen);
				if (added && rc == GPMDB_OK)
					*added += g - lo;
				i++; /* the range just added sits before i */
			}
			lo = pr[i].hi > lo ? pr[i].hi : lo;
		}
		if (rc == GPMDB_OK && lo < hi) {
			rc = pr_add(lo, hi, err, errlen);
			if (added && rc == GPMDB_OK)
				*added += hi - lo;
		}
	}
	pthread_mutex_unlock(&pm_lock);
	return rc;
}

extern "C" int gpu_pm_range_registered(const void *base, uint64_t map_len,
				       const void *p, uint64_t len)
{
	const char *c = (const char *)p;
	int r = 0;

	pthread_mutex_lock(&pm_lock);
	/* ranges of this very mapping: one mapped again (a growth) lost
	 * them, though gpu_pm_ensure drops them only at its next call */
	if (pr_base && pr_base == (const char *)base && pr_len <= map_len &&
	    c >= pr_base && len <= pr_len &&
	    (uint64_t)(c - pr_base) <= pr_len - len) {
		uint64_t lo = (uint64_t)(c - pr_base), hi = lo + len;
		for (size_t i = 0; i < pr_n && pr[i].lo <= lo; i++)
			if (pr[i].hi >= hi) {
				r = 1;
				break;
			}
	}
	pthread_mutex_unlock(&pm_lock);
	return r;
}

extern "C" uint64_t gpu_pm_range_bytes(void)
{
	return pr_bytes;
}
