/*
 * device.cu - the CUDA context of gpmdb (gpu.h): device 0, a capability
 * check, one non-blocking stream, a stream-ordered memory pool, device
 * facts for .stats.  Every CUDA call is checked (GPU_TRY) and becomes a
 * gpmdb error naming the call.
 */
#include <omp.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gpmdb.h"

#include "cache.h"
#include "exit_handoff.h"
#include "gpu_internal.h"
#include "index_gpu.h"

static pthread_mutex_t gpu_lock = PTHREAD_MUTEX_INITIALIZER;
static int gpu_state; /* 0: not tried, 1: tried (gpu_rc says how) */
static int gpu_rc;    /* GPMDB_OK or why not */
static char gpu_msg[512];
static cudaStream_t gpu_strm;
static cudaMemPool_t gpu_pool;
static gpu_info gpu_facts;

int gpu_say(char *err, size_t errlen, int rc, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return rc;
}

extern "C" int gpu_cuda_fail(cudaError_t e, const char *call, char *err,
			     size_t errlen)
{
	int n = (int)strcspn(call, "(");

	/* Clears the error if it is not sticky, so the next call is not
	 * blamed for it. */
	(void)cudaGetLastError();
	return gpu_say(err, errlen,
		       e == cudaErrorMemoryAllocation ? GPMDB_NOMEM : GPMDB_GPU,
		       "%.*s: %s (%s)", n, call, cudaGetErrorString(e),
		       cudaGetErrorName(e));
}

extern "C" cudaStream_t gpu_stream(void)
{
	return gpu_strm;
}

/* The facts that do not change; mem_free and the pool's are refreshed by
 * gpu_get_info. */
static int gpu_read_facts(gpu_info *f, char *err, size_t errlen)
{
	cudaDeviceProp prop;
	size_t fr, tot;

	memset(f, 0, sizeof(*f));
	GPU_TRY(cudaGetDeviceProperties(&prop, 0));
	snprintf(f->name, sizeof(f->name), "%s", prop.name);
	f->device = 0;
	f->cc_major = prop.major;
	f->cc_minor = prop.minor;
	f->sm_count = prop.multiProcessorCount;
	GPU_TRY(cudaDeviceGetAttribute(&f->mem_clock_khz,
				       cudaDevAttrMemoryClockRate, 0));
	GPU_TRY(cudaDeviceGetAttribute(&f->mem_bus_bits,
				       cudaDevAttrGlobalMemoryBusWidth, 0));
	/* Double data rate: two transfers per clock. */
	f->bandwidth_gbs =
	    2.0 * f->mem_clock_khz * 1e3 * (f->mem_bus_bits / 8) / 1e9;
	GPU_TRY(cudaMemGetInfo(&fr, &tot));
	f->mem_free = fr;
	f->mem_total = tot;
	GPU_TRY(cudaDriverGetVersion(&f->driver_version));
	GPU_TRY(cudaRuntimeGetVersion(&f->runtime_version));
	return GPMDB_OK;
}

static int gpu_make_pool(char *err, size_t errlen)
{
	cudaMemPoolProps props;
	/* Keep freed memory in the pool across synchronisations: that is
	 * what makes an allocation per query cheap.  gpu_shutdown gives it
	 * back. */
	uint64_t keep = UINT64_MAX;

	memset(&props, 0, sizeof(props));
	props.allocType = cudaMemAllocationTypePinned;
	props.handleTypes = cudaMemHandleTypeNone;
	props.location.type = cudaMemLocationTypeDevice;
	props.location.id = 0;
	GPU_TRY(cudaMemPoolCreate(&gpu_pool, &props));
	GPU_TRY(cudaMemPoolSetAttribute(
	    gpu_pool, cudaMemPoolAttrReleaseThreshold, &keep));
	return GPMDB_OK;
}

/* Pinned staging buffers of gpu_upload_staged (double-buffered), 16 MiB
 * each: pinning two of 64 MiB took 50-60 ms of a fresh process's first
 * GPU statement, two of 16 MiB about 15 ms, and a 200 MB column's load
 * took as long from either (24-28 ms, H200, bench_batch's fresh
 * UPDATEs, device run 4 of 2026-11-27).  The copy into them runs on
 * every core: a first query's columns come from a mapping this process
 * has not touched yet, and one core faulting its pages in and copying
 * them moved 4.4 GB/s (960 MB in 216 ms at SF10 on the H200). */
#define GPU_STAGE_DEFAULT_MB 16
static size_t gpu_stage_bytes; /* set with the buffers' allocation */
/* A thread's share of a staged chunk: small enough that a 1.5 MB encoded
 * tablet (one gc_put) is copied by several cores, not one (6.5 GB/s for
 * TPC-H's cold loads on the H200 when pieces were 1 MiB and chunks under
 * 4 MiB went on one core). */
#define GPU_STAGE_PIECE (128u << 10)
static char *gpu_stage[2];
static cudaEvent_t gpu_stage_ev[2];
static int gpu_stage_next;

static void gpu_stage_free(void)
{
	for (int i = 0; i < 2; i++) {
		if (gpu_stage_ev[i])
			(void)cudaEventSynchronize(gpu_stage_ev[i]);
		if (gpu_stage[i])
			(void)cudaFreeHost(gpu_stage[i]);
		if (gpu_stage_ev[i])
			(void)cudaEventDestroy(gpu_stage_ev[i]);
		gpu_stage[i] = NULL;
		gpu_stage_ev[i] = NULL;
	}
}

static void gpu_teardown(void)
{
	gpu_stage_free();
	gpu_ix_cache_forget(); /* its entries go with the pool */
	if (gpu_strm) {
		(void)cudaStreamSynchronize(gpu_strm);
		(void)cudaStreamDestroy(gpu_strm);
	}
	if (gpu_pool)
		(void)cudaMemPoolDestroy(gpu_pool);
	gpu_strm = NULL;
	gpu_pool = NULL;
	(void)cudaGetLastError();
}

static int gpu_setup(char *err, size_t errlen)
{
	int n = 0, pools = 0, rc;
	cudaError_t e = cudaGetDeviceCount(&n);

	if (e != cudaSuccess) {
		(void)cudaGetLastError();
		return gpu_say(err, errlen, GPMDB_UNSUPPORTED,
			       "no CUDA GPU found (cudaGetDeviceCount: %s); "
			       "using the CPU backend",
			       cudaGetErrorString(e));
	}
	if (n == 0)
		return gpu_say(err, errlen, GPMDB_UNSUPPORTED,
			       "no CUDA GPU found (cudaGetDeviceCount: 0 "
			       "devices); using the CPU backend");
	if ((rc = gpu_read_facts(&gpu_facts, err, errlen)))
		return rc;
	if (gpu_facts.cc_major * 10 + gpu_facts.cc_minor < GPU_MIN_CC)
		return gpu_say(err, errlen, GPMDB_UNSUPPORTED,
			       "GPU 0 (%s) has compute capability %d.%d, "
			       "gpmdb needs %d.%d or newer; using the CPU "
			       "backend",
			       gpu_facts.name, gpu_facts.cc_major,
			       gpu_facts.cc_minor, GPU_MIN_CC / 10,
			       GPU_MIN_CC % 10);
	GPU_TRY(cudaSetDevice(0));
	GPU_TRY(
	    cudaDeviceGetAttribute(&pools, cudaDevAttrMemoryPoolsSupported, 0));
	if (!pools)
		return gpu_say(err, errlen, GPMDB_UNSUPPORTED,
			       "GPU 0 (%s) has no stream-ordered memory pools "
			       "(cudaDevAttrMemoryPoolsSupported = 0); using "
			       "the CPU backend",
			       gpu_facts.name);
	/* The kernels are built for some architectures only (Makefile):
	 * ask the runtime whether this one can load them. */
	e = gvm_probe_kernel();
	if (e != cudaSuccess) {
		(void)cudaGetLastError();
		return gpu_say(
		    err, errlen, GPMDB_UNSUPPORTED,
		    "GPU 0 (%s, sm_%d%d) cannot run gpmdb's kernels "
		    "(cudaFuncGetAttributes: %s); rebuild with its "
		    "-gencode in the Makefile; using the CPU backend",
		    gpu_facts.name, gpu_facts.cc_major, gpu_facts.cc_minor,
		    cudaGetErrorString(e));
	}
	GPU_TRY(cudaStreamCreateWithFlags(&gpu_strm, cudaStreamNonBlocking));
	return gpu_make_pool(err, errlen);
}

/* Wall time of the last gpu_setup: CUDA's driver and context creation,
 * the stream and the memory pool (gpu_stats init_us). */
static uint64_t gpu_setup_us;

extern "C" uint64_t gpu_init_us(void)
{
	return gpu_setup_us;
}

/* gpu_setup has run (read without gpu_lock by gpu_init_pending) */
static int gpu_setup_done;

/*
 * OpenMP's threads end (omp_pause_resource_all; the next parallel region
 * starts them again).  Why: after a parallel region
 * libgomp's threads spin before they sleep (OMP_WAIT_POLICY unset), and
 * in a fresh process they spun on every core beside CUDA's setup and the
 * exit.  Resting them at those two points took TPC-H SF10's fresh
 * processes from 422 to 368 ms (geometric mean of 44 shell runs, H200;
 * OMP_WAIT_POLICY=passive: 339; warm times unchanged; docs/gpu.md "A
 * fresh process").  A no-op inside a parallel region or where the
 * calling thread started none.  GPMDB_OMP_REST=0 turns it off (a
 * measurement switch).
 */
static void gpu_omp_rest(void)
{
	const char *e = getenv("GPMDB_OMP_REST");

	if (!(e && !strcmp(e, "0")) && !omp_in_parallel())
		(void)omp_pause_resource_all(omp_pause_soft);
}

/*
 * At exit (registered once CUDA is set up): wait for the GPU's work (no
 * kernel may write the pool after the process is gone), then hand the
 * driver's teardown to a holder process (exit_handoff.c), so the exit is
 * not 84-177 ms longer (bench_cuda_exit).  GPMDB_GPU_EXIT_HANDOFF=0
 * turns it off (a measurement switch); a forked child that exits does
 * nothing here (its CUDA is not usable).  A kernel another thread
 * launches after the synchronisation (exit() beside a running statement)
 * runs until the holder's teardown, some milliseconds after the exit, as
 * it ran until the exiting process's own teardown without the holder.
 */
static pid_t gpu_exit_pid;

static void gpu_exit_at(void)
{
	static const char *const keep[] = {"/dev/nvidia", NULL};
	const char *e = getenv("GPMDB_GPU_EXIT_HANDOFF");
	struct timespec t0, t1, t2;
	cudaError_t se;
	pid_t h;

	if (getpid() != gpu_exit_pid || (e && !strcmp(e, "0")))
		return;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	gpu_omp_rest();
	/* returns once every launched task has finished, also when one of
	 * them failed (its error is reported here) */
	se = cudaDeviceSynchronize();
	clock_gettime(CLOCK_MONOTONIC, &t1);
	h = gpu_exit_handoff(keep);
	clock_gettime(CLOCK_MONOTONIC, &t2);
	/* GPMDB_GPU_EXIT_HANDOFF=trace: what happened, on stderr */
	if (e && !strcmp(e, "trace"))
		fprintf(stderr,
			"gpmdb: exit handoff: holder %d, synchronize %.2f ms "
			"(%s), handoff %.2f ms\n",
			(int)h,
			(t1.tv_sec - t0.tv_sec) * 1e3 +
			    (t1.tv_nsec - t0.tv_nsec) / 1e6,
			cudaGetErrorString(se),
			(t2.tv_sec - t1.tv_sec) * 1e3 +
			    (t2.tv_nsec - t1.tv_nsec) / 1e6);
}

/* gpu_setup once (gpu_lock held) */
static void gpu_setup_once(void)
{
	struct timespec t0, t1;

	if (gpu_state)
		return;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	gpu_rc = gpu_setup(gpu_msg, sizeof(gpu_msg));
	clock_gettime(CLOCK_MONOTONIC, &t1);
	gpu_setup_us = (uint64_t)((t1.tv_sec - t0.tv_sec) * 1000000LL +
				  (t1.tv_nsec - t0.tv_nsec) / 1000);
	if (gpu_rc)
		gpu_teardown();
	else if (!gpu_exit_pid) {
		gpu_exit_pid = getpid();
		(void)atexit(gpu_exit_at);
	}
	gpu_state = 1;
	__atomic_store_n(&gpu_setup_done, 1, __ATOMIC_RELEASE);
}

/* Microseconds statements spent in gpu_init waiting for CUDA's setup (the
 * prestart thread's or their own), counted only while it had not run:
 * what a fresh process's first GPU statement pays of it (gpu_stats
 * init_wait_us). */
static uint64_t gpu_wait_us;

extern "C" uint64_t gpu_init_wait_us(void)
{
	return gpu_wait_us;
}

extern "C" int gpu_init(char *err, size_t errlen)
{
	int rc;
	struct timespec t0, t1;
	/* timed only while the setup has not run: every GPU call comes
	 * through here */
	bool timed = !__atomic_load_n(&gpu_setup_done, __ATOMIC_ACQUIRE);

	if (timed) {
		clock_gettime(CLOCK_MONOTONIC, &t0);
		gpu_omp_rest();
	}
	pthread_mutex_lock(&gpu_lock);
	gpu_setup_once();
	if (timed) {
		clock_gettime(CLOCK_MONOTONIC, &t1);
		gpu_wait_us += (uint64_t)((t1.tv_sec - t0.tv_sec) * 1000000LL +
					  (t1.tv_nsec - t0.tv_nsec) / 1000);
	}
	rc = gpu_rc;
	if (rc && err && errlen)
		snprintf(err, errlen, "%s", gpu_msg);
	pthread_mutex_unlock(&gpu_lock);
	return rc;
}

/*
 * Why: CUDA's driver and context creation take 140-250 ms (H200,
 * persistence mode on) and the staging buffers' pinning 50-60 ms more,
 * all of it on the first GPU statement of a process.  A connection
 * opened with backend=gpu starts them at open on a thread of their own,
 * so they overlap what the program and the statement do on the host
 * first (an INSERT's conversion and checks, parsing, planning).  The
 * thread holds gpu_lock throughout: a gpu_init meanwhile waits for it
 * and finds everything made.  Joined by gpu_init_async_join (at close),
 * never left running into exit().
 */
static pthread_t gpu_pre_thr;
static int gpu_pre_on; /* a thread started and not joined */
static uint64_t gpu_pre_us;

/* The staging buffers' size: GPMDB_GPU_STAGE_MB (a measurement switch)
 * or GPU_STAGE_DEFAULT_MB, fixed once they are allocated. */
extern "C" size_t gpu_stage_size(void)
{
	const char *e = getenv("GPMDB_GPU_STAGE_MB");
	long mb = e ? atol(e) : 0;

	if (gpu_stage_bytes)
		return gpu_stage_bytes;
	return (size_t)(mb >= 1 && mb <= 1024 ? mb : GPU_STAGE_DEFAULT_MB)
	       << 20;
}

static int gpu_stage_alloc(char *err, size_t errlen)
{
	if (!gpu_stage_bytes)
		gpu_stage_bytes = gpu_stage_size();
	for (int i = 0; i < 2; i++) {
		if (!gpu_stage[i])
			GPU_TRY(cudaHostAlloc((void **)&gpu_stage[i],
					      gpu_stage_bytes,
					      cudaHostAllocDefault));
		if (!gpu_stage_ev[i])
			GPU_TRY(cudaEventCreateWithFlags(
			    &gpu_stage_ev[i], cudaEventDisableTiming));
	}
	return GPMDB_OK;
}

static void *gpu_pre_main(void *arg)
{
	struct timespec t0, t1;
	char err[256];

	(void)arg;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	pthread_mutex_lock(&gpu_lock);
	gpu_setup_once();
	/* a failure here is not reported: the staged upload allocates
	 * again and says why */
	if (gpu_rc == GPMDB_OK && gpu_stage_alloc(err, sizeof(err)))
		(void)cudaGetLastError();
	pthread_mutex_unlock(&gpu_lock);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	gpu_pre_us = (uint64_t)((t1.tv_sec - t0.tv_sec) * 1000000LL +
				(t1.tv_nsec - t0.tv_nsec) / 1000);
	return NULL;
}

/* fork() waits for the thread's critical section (a child must not
 * inherit gpu_lock taken); the child has no thread to join */
static void gpu_fork_prepare(void)
{
	pthread_mutex_lock(&gpu_lock);
}

static void gpu_fork_parent(void)
{
	pthread_mutex_unlock(&gpu_lock);
}

static void gpu_fork_child(void)
{
	gpu_pre_on = 0;
	pthread_mutex_unlock(&gpu_lock);
}

static pthread_once_t gpu_fork_once = PTHREAD_ONCE_INIT;

static void gpu_fork_hooks(void)
{
	(void)pthread_atfork(gpu_fork_prepare, gpu_fork_parent, gpu_fork_child);
}

extern "C" void gpu_init_async(void)
{
	const char *e = getenv("GPMDB_GPU_PRESTART");

	if (e && !strcmp(e, "0"))
		return; /* a measurement switch */
	(void)pthread_once(&gpu_fork_once, gpu_fork_hooks);
	pthread_mutex_lock(&gpu_lock);
	if (!gpu_state && !gpu_pre_on &&
	    pthread_create(&gpu_pre_thr, NULL, gpu_pre_main, NULL) == 0)
		gpu_pre_on = 1;
	pthread_mutex_unlock(&gpu_lock);
}

extern "C" void gpu_init_async_join(void)
{
	pthread_t t;

	pthread_mutex_lock(&gpu_lock);
	if (!gpu_pre_on) {
		pthread_mutex_unlock(&gpu_lock);
		return;
	}
	t = gpu_pre_thr;
	gpu_pre_on = 0;
	pthread_mutex_unlock(&gpu_lock);
	(void)pthread_join(t, NULL);
}

extern "C" uint64_t gpu_init_async_us(void)
{
	return gpu_pre_us;
}

extern "C" int gpu_init_pending(void)
{
	return __atomic_load_n(&gpu_pre_on, __ATOMIC_ACQUIRE) &&
	       !__atomic_load_n(&gpu_setup_done, __ATOMIC_ACQUIRE);
}

extern "C" int gpu_available(void)
{
	return gpu_init(NULL, 0) == GPMDB_OK;
}

extern "C" void gpu_shutdown(void)
{
	pthread_mutex_lock(&gpu_lock);
	if (gpu_state)
		gpu_teardown();
	gpu_state = 0;
	__atomic_store_n(&gpu_setup_done, 0, __ATOMIC_RELEASE);
	gpu_rc = 0;
	gpu_msg[0] = 0;
	pthread_mutex_unlock(&gpu_lock);
}

extern "C" int gpu_get_info(gpu_info *info, char *err, size_t errlen)
{
	size_t fr, tot;
	uint64_t v;
	int rc = gpu_init(err, errlen);

	memset(info, 0, sizeof(*info));
	if (rc)
		return rc;
	*info = gpu_facts;
	GPU_TRY(cudaMemGetInfo(&fr, &tot));
	info->mem_free = fr;
	info->mem_total = tot;
	GPU_TRY(cudaMemPoolGetAttribute(gpu_pool,
					cudaMemPoolAttrReservedMemCurrent, &v));
	info->pool_reserved = v;
	if (gpu_memory_limit()) {
		/* the device as no larger than the limit: free is what the
		 * limit leaves beside the pool's reservation, which counts
		 * up to the limit (callers add its unused part: free plus
		 * that is the limit less what is in use) */
		uint64_t cap = gpu_memory_limit();
		if (info->pool_reserved > cap)
			info->pool_reserved = cap;
		if (info->mem_total > cap)
			info->mem_total = cap;
		if (info->mem_free > cap - info->pool_reserved)
			info->mem_free = cap - info->pool_reserved;
	}
	GPU_TRY(cudaMemPoolGetAttribute(gpu_pool, cudaMemPoolAttrUsedMemCurrent,
					&v));
	info->pool_used = v;
	return GPMDB_OK;
}

extern "C" uint64_t gpu_mem_avail(void)
{
	gpu_info gi;

	if (gpu_get_info(&gi, NULL, 0) != GPMDB_OK)
		return UINT64_MAX;
	/* the pool keeps freed memory: its unused part counts */
	return gi.mem_free + (gi.pool_reserved > gi.pool_used
				  ? gi.pool_reserved - gi.pool_used
				  : 0);
}

extern "C" void gpu_describe(char *buf, size_t len)
{
	gpu_info f;

	if (gpu_get_info(&f, buf, len))
		return;
	snprintf(buf, len,
		 "%s, sm_%d%d, %d SMs, %.1f/%.1f GiB free, %.0f GB/s peak, "
		 "pool %.1f MiB",
		 f.name, f.cc_major, f.cc_minor, f.sm_count,
		 f.mem_free / 1073741824.0, f.mem_total / 1073741824.0,
		 f.bandwidth_gbs, f.pool_reserved / 1048576.0);
}

/*
 * The device memory gpmdb may use (PRAGMA gpu_memory_limit, or
 * GPMDB_GPU_MEMORY_LIMIT in MiB for the process): 0 is the whole device.
 * Why: a GPU shared with other programs, and a way to run every operator's
 * past-memory path (partitions, windows) at a test's scale.  gpu_alloc
 * treats a request past it as out of memory (eviction first);
 * gpu_get_info reports the device as no larger, so the column cache's
 * default (half) and the streamed windows follow.
 */
static uint64_t gpu_mem_cap;
static int gpu_mem_cap_read;

extern "C" void gpu_set_memory_limit(uint64_t bytes)
{
	__atomic_store_n(&gpu_mem_cap, bytes, __ATOMIC_RELAXED);
	__atomic_store_n(&gpu_mem_cap_read, 1, __ATOMIC_RELEASE);
}

extern "C" uint64_t gpu_memory_limit(void)
{
	if (!__atomic_load_n(&gpu_mem_cap_read, __ATOMIC_ACQUIRE)) {
		const char *e = getenv("GPMDB_GPU_MEMORY_LIMIT");
		long long mb = e ? atoll(e) : 0;
		gpu_set_memory_limit(mb > 0 ? (uint64_t)mb << 20 : 0);
	}
	return __atomic_load_n(&gpu_mem_cap, __ATOMIC_RELAXED);
}

/* With a limit: whether n more bytes stay within it (the pool's bytes in
 * use, after the stream's pending frees have run).  cudaErrorMemoryAllocation
 * when they do not, cudaSuccess when they do; the synchronisation's own
 * error otherwise (a kernel of the stream failed: it must be reported, a
 * later call would not say it again). */
static cudaError_t gpu_cap_check(size_t n)
{
	uint64_t cap = gpu_memory_limit(), used = 0;
	cudaError_t e;

	if (!cap)
		return cudaSuccess;
	if ((e = cudaStreamSynchronize(gpu_strm)) != cudaSuccess)
		return e;
	if (cudaMemPoolGetAttribute(gpu_pool, cudaMemPoolAttrUsedMemCurrent,
				    &used) != cudaSuccess) {
		(void)cudaGetLastError();
		return cudaSuccess; /* CUDA's own allocation will say */
	}
	return used + n <= cap ? cudaSuccess : cudaErrorMemoryAllocation;
}

/* The message of an allocation nothing could make room for: what holds
 * the device's memory. */
static void gpu_stat_oom(size_t n, char *err, size_t errlen)
{
	uint64_t res = 0, used = 0;
	size_t fr = 0, tot = 0;
	gcache_stats cs;

	(void)cudaMemPoolGetAttribute(gpu_pool,
				      cudaMemPoolAttrReservedMemCurrent, &res);
	(void)cudaMemPoolGetAttribute(gpu_pool, cudaMemPoolAttrUsedMemCurrent,
				      &used);
	(void)cudaMemGetInfo(&fr, &tot);
	(void)cudaGetLastError();
	gcache_get_stats(&cs);
	gpu_say(err, errlen, GPMDB_NOMEM,
		"cudaMallocFromPoolAsync: out of memory: %.1f MiB asked; %.1f "
		"of %.1f MiB free, "
		"gpmdb holds %.1f MiB (%.1f MiB in use, %.1f MiB of it "
		"columns this query pins)%s",
		n / 1048576.0, fr / 1048576.0, tot / 1048576.0, res / 1048576.0,
		used / 1048576.0, cs.bytes / 1048576.0,
		gpu_memory_limit() ? " within gpu_memory_limit" : "");
}

extern "C" int gpu_alloc(void **dptr, size_t n, char *err, size_t errlen)
{
	int rc = gpu_init(err, errlen);

	*dptr = NULL;
	if (rc || n == 0)
		return rc;
	for (bool trimmed = false;;) {
		cudaError_t e = gpu_cap_check(n);
		if (e != cudaSuccess && e != cudaErrorMemoryAllocation)
			return gpu_cuda_fail(
			    e,
			    "cudaStreamSynchronize (before an "
			    "allocation under gpu_memory_limit)",
			    err, errlen);
		if (e == cudaSuccess)
			e = cudaMallocFromPoolAsync(dptr, n, gpu_pool,
						    gpu_strm);
		if (e == cudaSuccess)
			return GPMDB_OK;
		if (e != cudaErrorMemoryAllocation)
			return gpu_cuda_fail(e, "cudaMallocFromPoolAsync", err,
					     errlen);
		(void)cudaGetLastError();
		/* Out of memory: columns cached for earlier queries go first
		 * (a long run of different queries otherwise fills HBM with
		 * them: TPC-H Q12 at SF10 after the other 21), then the
		 * pool's free blocks go back to the driver (blocks of other
		 * sizes cannot serve this one). */
		*dptr = NULL;
		if (n > gpu_facts.mem_total)
			break; /* nothing could make room for it */
		if (gcache_reclaim() || gpu_ix_cache_reclaim())
			continue;
		if (!trimmed) {
			trimmed = true;
			GPU_TRY(cudaStreamSynchronize(gpu_strm));
			GPU_TRY(cudaMemPoolTrimTo(gpu_pool, 0));
			continue;
		}
		break;
	}
	gpu_stat_oom(n, err, errlen);
	return GPMDB_NOMEM;
}

extern "C" int gpu_free(void *dptr, char *err, size_t errlen)
{
	int rc = gpu_init(err, errlen);

	if (rc || !dptr)
		return rc;
	GPU_TRY(cudaFreeAsync(dptr, gpu_strm));
	return GPMDB_OK;
}

extern "C" int gpu_upload(void *dst, const void *src, size_t n, char *err,
			  size_t errlen)
{
	int rc = gpu_init(err, errlen);

	if (rc || n == 0)
		return rc;
	/* From pageable memory the call returns once src has been staged,
	 * so the caller may reuse src at once. */
	GPU_TRY(cudaMemcpyAsync(dst, src, n, cudaMemcpyHostToDevice, gpu_strm));
	return GPMDB_OK;
}

/*
 * Why: a cudaMemcpyAsync from pageable memory (the pool mapping when it
 * cannot be registered, e.g. on ext4) goes through the driver's own
 * small staging at a fraction of the bus's speed (about 1.3 GB/s was
 * measured for the column cache).  Here the CPU copies chunks into one
 * of two pinned buffers while the DMA of the other runs; an event per
 * buffer says when it may be refilled.  Returns once src has been
 * copied (the last DMA may still run), like gpu_upload.
 */
extern "C" int gpu_upload_staged(void *dst, const void *src, size_t n,
				 char *err, size_t errlen)
{
	int rc = gpu_init(err, errlen);

	if (rc || n == 0)
		return rc;
	if ((rc = gpu_stage_alloc(err, errlen)))
		return rc;
	for (size_t off = 0; off < n; off += gpu_stage_bytes) {
		size_t c =
		    n - off < gpu_stage_bytes ? n - off : gpu_stage_bytes;
		int b = gpu_stage_next;
		gpu_stage_next ^= 1;
		/* the DMA that last read this buffer is done */
		GPU_TRY(cudaEventSynchronize(gpu_stage_ev[b]));
		{
			long np =
			    (long)((c + GPU_STAGE_PIECE - 1) / GPU_STAGE_PIECE);
			char *d = gpu_stage[b];
			const char *s0 = (const char *)src + off;
#pragma omp parallel for schedule(static) if (np > 1)
			for (long i = 0; i < np; i++) {
				size_t o = (size_t)i * GPU_STAGE_PIECE;
				memcpy(d + o, s0 + o,
				       c - o < GPU_STAGE_PIECE
					   ? c - o
					   : GPU_STAGE_PIECE);
			}
		}
		GPU_TRY(cudaMemcpyAsync((char *)dst + off, gpu_stage[b], c,
					cudaMemcpyHostToDevice, gpu_strm));
		GPU_TRY(cudaEventRecord(gpu_stage_ev[b], gpu_strm));
	}
	return GPMDB_OK;
}

/* The buffer gpu_stage_take lent (-1: none) */
static int gpu_stage_lent = -1;

extern "C" int gpu_stage_take(char **buf, char *err, size_t errlen)
{
	int rc = gpu_init(err, errlen);

	*buf = NULL;
	if (rc || (rc = gpu_stage_alloc(err, errlen)))
		return rc;
	int b = gpu_stage_next;
	gpu_stage_next ^= 1;
	/* the DMA that last read this buffer is done */
	GPU_TRY(cudaEventSynchronize(gpu_stage_ev[b]));
	gpu_stage_lent = b;
	*buf = gpu_stage[b];
	return GPMDB_OK;
}

extern "C" int gpu_stage_send(void *dst, size_t n, char *err, size_t errlen)
{
	int b = gpu_stage_lent;

	gpu_stage_lent = -1;
	if (b < 0 || n > gpu_stage_bytes)
		return gpu_say(err, errlen, GPMDB_INTERNAL,
			       "GPU staging: a send without a buffer taken");
	GPU_TRY(cudaMemcpyAsync(dst, gpu_stage[b], n, cudaMemcpyHostToDevice,
				gpu_strm));
	GPU_TRY(cudaEventRecord(gpu_stage_ev[b], gpu_strm));
	return GPMDB_OK;
}

extern "C" int gpu_download(void *dst, const void *src, size_t n, char *err,
			    size_t errlen)
{
	int rc = gpu_init(err, errlen);

	if (rc || n == 0)
		return rc;
	GPU_TRY(cudaMemcpyAsync(dst, src, n, cudaMemcpyDeviceToHost, gpu_strm));
	GPU_TRY(cudaStreamSynchronize(gpu_strm));
	return GPMDB_OK;
}

extern "C" int gpu_memset(void *dst, int byte, size_t n, char *err,
			  size_t errlen)
{
	int rc = gpu_init(err, errlen);

	if (rc || n == 0)
		return rc;
	GPU_TRY(cudaMemsetAsync(dst, byte, n, gpu_strm));
	return GPMDB_OK;
}

template <typename T>
__global__ void gpu_scatter_k(T *data, uint8_t *nulls, const uint64_t *rid,
			      const T *vals, const uint32_t *vn, uint64_t n)
{
	uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x;

	if (i >= n)
		return;
	data[rid[i]] = vals[i];
	if (nulls)
		nulls[rid[i]] =
		    vn ? (uint8_t)((vn[i >> 5] >> (i & 31)) & 1u) : 0;
}

__global__ static void gpu_seq_k(int64_t *d, int64_t start, uint64_t n)
{
	uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x;

	if (i < n)
		d[i] = start + (int64_t)i;
}

extern "C" int gpu_fill_seq(int64_t *dst, int64_t start, uint64_t n, char *err,
			    size_t errlen)
{
	int rc = gpu_init(err, errlen);

	if (rc || n == 0)
		return rc;
	gpu_seq_k<<<(unsigned)((n + 255) / 256), 256, 0, gpu_strm>>>(dst, start,
								     n);
	GPU_TRY(cudaGetLastError());
	return GPMDB_OK;
}

extern "C" int gpu_scatter_rows_dev(void *data, uint8_t *nulls, uint32_t width,
				    const uint64_t *rid, const void *v,
				    const uint32_t *vn, uint64_t n, char *err,
				    size_t errlen)
{
	unsigned blocks = (unsigned)((n + 255) / 256);
	int rc = gpu_init(err, errlen);

	if (rc || n == 0)
		return rc;
	switch (width) {
	case 1:
		gpu_scatter_k<<<blocks, 256, 0, gpu_strm>>>(
		    (uint8_t *)data, nulls, rid, (const uint8_t *)v, vn, n);
		break;
	case 2:
		gpu_scatter_k<<<blocks, 256, 0, gpu_strm>>>(
		    (uint16_t *)data, nulls, rid, (const uint16_t *)v, vn, n);
		break;
	case 4:
		gpu_scatter_k<<<blocks, 256, 0, gpu_strm>>>(
		    (uint32_t *)data, nulls, rid, (const uint32_t *)v, vn, n);
		break;
	case 8:
		gpu_scatter_k<<<blocks, 256, 0, gpu_strm>>>(
		    (uint64_t *)data, nulls, rid, (const uint64_t *)v, vn, n);
		break;
	default:
		return gpu_say(err, errlen, GPMDB_MISUSE,
			       "gpu_scatter_rows: width %u", width);
	}
	GPU_TRY(cudaGetLastError());
	return GPMDB_OK;
}

extern "C" int gpu_scatter_rows(void *data, uint8_t *nulls, uint32_t width,
				const uint64_t *rowids, const void *vals,
				const uint32_t *vnulls, uint64_t n, char *err,
				size_t errlen)
{
	size_t nw = vnulls ? (n + 31) / 32 * 4 : 0;
	/* one allocation: row ids, values (8-aligned), NULL words */
	size_t vo = 8 * n, no = vo + ((width * n + 7) & ~(size_t)7);
	char *buf = NULL;
	int rc = gpu_init(err, errlen);

	if (rc || n == 0)
		return rc;
	if ((rc = gpu_alloc((void **)&buf, no + nw, err, errlen)))
		return rc;
	if ((rc = gpu_upload(buf, rowids, 8 * n, err, errlen)) ||
	    (rc = gpu_upload(buf + vo, vals, width * n, err, errlen)) ||
	    (vnulls && (rc = gpu_upload(buf + no, vnulls, nw, err, errlen))) ||
	    (rc = gpu_scatter_rows_dev(
		 data, nulls, width, (uint64_t *)buf, buf + vo,
		 vnulls ? (uint32_t *)(buf + no) : NULL, n, err, errlen))) {
		gpu_free(buf, NULL, 0);
		return rc;
	}
	return gpu_free(buf, err, errlen);
}

extern "C" int gpu_sync(char *err, size_t errlen)
{
	int rc = gpu_init(err, errlen);

	if (rc)
		return rc;
	GPU_TRY(cudaStreamSynchronize(gpu_strm));
	return GPMDB_OK;
}

/* Times copies with events on gpmdb's stream; everything it allocated is
 * released on every path (a failed call must not leak pool memory). */
extern "C" int gpu_d2d_bandwidth(uint64_t bytes, int reps, double *gbs,
				 char *err, size_t errlen)
{
	void *a = NULL, *b = NULL;
	cudaEvent_t e0 = NULL, e1 = NULL;
	cudaError_t ce = cudaSuccess;
	const char *call = "";
	float best = 0;
	int rc = gpu_init(err, errlen);

	*gbs = 0;
	if (rc)
		return rc;
	if (bytes == 0 || reps < 1)
		return gpu_say(err, errlen, GPMDB_MISUSE,
			       "gpu_d2d_bandwidth: bytes and reps must be > 0");
#define D2D_TRY(x)                                                             \
	do {                                                                   \
		if (ce == cudaSuccess && (ce = (x)) != cudaSuccess)            \
			call = #x;                                             \
	} while (0)
	D2D_TRY(cudaMallocFromPoolAsync(&a, bytes, gpu_pool, gpu_strm));
	D2D_TRY(cudaMallocFromPoolAsync(&b, bytes, gpu_pool, gpu_strm));
	D2D_TRY(cudaEventCreate(&e0));
	D2D_TRY(cudaEventCreate(&e1));
	/* written first: pages exist, and the warm-up copy is untimed */
	D2D_TRY(cudaMemsetAsync(a, 1, bytes, gpu_strm));
	D2D_TRY(
	    cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice, gpu_strm));
	for (int r = 0; r < reps && ce == cudaSuccess; r++) {
		float ms = 0;
		D2D_TRY(cudaEventRecord(e0, gpu_strm));
		D2D_TRY(cudaMemcpyAsync(r & 1 ? a : b, r & 1 ? b : a, bytes,
					cudaMemcpyDeviceToDevice, gpu_strm));
		D2D_TRY(cudaEventRecord(e1, gpu_strm));
		D2D_TRY(cudaEventSynchronize(e1));
		D2D_TRY(cudaEventElapsedTime(&ms, e0, e1));
		if (ce == cudaSuccess && ms > 0 && (best == 0 || ms < best))
			best = ms;
	}
#undef D2D_TRY
	if (ce != cudaSuccess)
		rc = gpu_cuda_fail(ce, call, err, errlen);
	if (a)
		(void)cudaFreeAsync(a, gpu_strm);
	if (b)
		(void)cudaFreeAsync(b, gpu_strm);
	if (e0)
		(void)cudaEventDestroy(e0);
	if (e1)
		(void)cudaEventDestroy(e1);
	if (!rc && cudaStreamSynchronize(gpu_strm) != cudaSuccess)
		rc = gpu_cuda_fail(cudaGetLastError(), "cudaStreamSynchronize",
				   err, errlen);
	if (!rc && best > 0)
		*gbs = (double)bytes / (best * 1e-3) / 1e9;
	return rc;
}
