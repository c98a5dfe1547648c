/*
 * gpu.h - the CUDA backend's C interface (docs/gpu.md).
 *
 * Every function exists in both builds: with CUDA (GPMDB_HAVE_GPU, the .cu
 * files of gpu/) they do the work; without it (make GPU=0, gpu/gpu_host.c) they
 * return GPMDB_UNSUPPORTED with "gpmdb was built without CUDA (make GPU=0)", so
 * the engine calls gpu_* unconditionally and shows the message.
 *
 * Errors: a function that can fail returns a GPMDB_* code and writes a
 * message into err (errlen bytes, may be NULL/0).  A failed CUDA call is
 * GPMDB_GPU (GPMDB_NOMEM for an allocation) and its message names the call
 * and cudaGetErrorString's text.  No GPU, or one too old, is
 * GPMDB_UNSUPPORTED with a message ending "using the CPU backend".
 *
 * Threads: gpu_init is safe to call from any thread; the rest use one
 * stream and must not be called concurrently (the engine has one writer
 * and serialises GPU work).
 */
#ifndef GPMDB_GPU_H
#define GPMDB_GPU_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#include "../engine/bytecode.h"

/* The lowest compute capability gpmdb accepts (major * 10 + minor). */
#define GPU_MIN_CC 70

typedef struct gpu_info {
	char name[256];
	int device; /* CUDA device number (always 0 for now) */
	int cc_major, cc_minor;
	int sm_count;
	int mem_clock_khz;	/* peak memory clock */
	int mem_bus_bits;	/* memory bus width */
	uint64_t mem_total;	/* bytes */
	uint64_t mem_free;	/* bytes, when gpu_info was called */
	double bandwidth_gbs;	/* theoretical peak: 2 * clock * bus / 8 */
	int driver_version;	/* e.g. 13000 */
	int runtime_version;	/* e.g. 13000 */
	uint64_t pool_reserved; /* bytes the memory pool holds */
	uint64_t pool_used;	/* bytes handed out by gpu_alloc */
} gpu_info;

/*
 * Sets up device 0: capability check, stream, memory pool.  Idempotent;
 * a failure is remembered and returned (with its message) again.
 * GPMDB_OK, GPMDB_UNSUPPORTED (no GPU, too old, built without CUDA) or
 * GPMDB_GPU.
 */
int gpu_init(char *err, size_t errlen);
/* 1 when gpu_init succeeded (calls it if it has not run yet). */
int gpu_available(void);
/* Frees the pool and the stream; a later gpu_init starts again. */
void gpu_shutdown(void);

/* Device facts for .stats (calls gpu_init). */
int gpu_get_info(gpu_info *info, char *err, size_t errlen);
/* One line: "NVIDIA H100 80GB HBM3, sm_90, 132 SMs, 79.1/79.6 GiB free,
 * 3352 GB/s peak"; or the reason there is no GPU. */
void gpu_describe(char *buf, size_t len);

/*
 * Device memory from the pool (stream-ordered: cudaMallocFromPoolAsync on
 * gpmdb's stream, no cudaMalloc per query).  n = 0 gives NULL.  An
 * allocation the device cannot satisfy is GPMDB_NOMEM.
 */
int gpu_alloc(void **dptr, size_t n, char *err, size_t errlen);
int gpu_free(void *dptr, char *err, size_t errlen);
/* Copies on gpmdb's stream; the _sync variants wait for them. */
int gpu_upload(void *dst, const void *src, size_t n, char *err, size_t errlen);
int gpu_download(void *dst, const void *src, size_t n, char *err,
		 size_t errlen);
int gpu_memset(void *dst, int byte, size_t n, char *err, size_t errlen);
/* Waits for everything queued on gpmdb's stream. */
int gpu_sync(char *err, size_t errlen);

/* ---- the expression interpreter (gpu/vm_gpu.cu, gpu/gvm.c) ---------- */

/* A TEXT value of a device column: bytes [off, off + len) of the batch's
 * text buffer.  In outputs, off with GPU_STR_CONST set is an offset into
 * the program's constant text (bc_program.text) instead. */
typedef struct gpu_str {
	uint32_t off, len;
} gpu_str;
#define GPU_STR_CONST 0x80000000u

/*
 * One column for gpu_vm_run, device pointers.  type is a BC_COL_* (or
 * VEC_NULL: every row NULL, data unused); data holds int32 (INT32, DATE),
 * int64 (INT64, DEC), float, double, uint8 (BOOL) or gpu_str (TEXT) per
 * element; nulls (optional) 1 byte per element, 1 = NULL; sel (optional,
 * inputs only) maps row i to element sel[i], as vec.sel does.
 */
typedef struct gpu_col {
	void *data;
	uint8_t *nulls;
	const uint32_t *sel;
	uint8_t type, prec, scale, pad;
	uint32_t pad2;
} gpu_col;

/*
 * Can the GPU interpreter run p?  Returns 1, or 0 with the reason in why:
 * the first op it does not support ("op UPPER makes new text: runs on the
 * CPU"), or a program that needs more live registers than a GPU thread
 * holds.  The planner calls it and falls back to the CPU loudly.
 */
int gpu_vm_supports(const bc_program *p, char *why, size_t len);

/*
 * Runs p on the GPU over nrows rows of in[0..nin): one thread per row.
 * text/ntext: the device buffer that TEXT columns point into.  out[k]
 * (p->noutputs of them) gets the type and freshly allocated device arrays
 * (data and nulls, one allocation: free with gpu_vm_free_outputs).
 * Results are those of vm_run over the same rows in batches of VEC_BATCH,
 * errors included: the error reported is the one vm_run would report
 * first.  GPMDB_OK, GPMDB_ERROR (an SQL error of a row), GPMDB_MISUSE (bad
 * program or inputs), GPMDB_UNSUPPORTED (see gpu_vm_supports), GPMDB_NOMEM,
 * GPMDB_GPU.  On an error no outputs are left allocated.
 */
int gpu_vm_run(const bc_program *p, const gpu_col *in, int nin, uint32_t nrows,
	       const char *text, uint64_t ntext, gpu_col *out, char *err,
	       size_t errlen);
void gpu_vm_free_outputs(const bc_program *p, gpu_col *out);

#ifdef __cplusplus
}
#endif

#endif /* GPMDB_GPU_H */
