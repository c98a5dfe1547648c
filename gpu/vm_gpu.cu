/*
 * vm_gpu.cu - the expression interpreter on the GPU (gpu.h, gvm.h): one
 * thread per row runs gvm_row (gvm_row.h) with the program, its slot map
 * and the column descriptors in __constant__ memory.
 *
 * Errors: a row that fails atomicMin's its gvm_key (batch, pc, row) into
 * one device word, so the smallest key is the error vm_run would meet
 * first; a second launch of one thread re-runs that row to collect what
 * the message needs.  Both are cheap and only the error path pays the
 * second.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpmdb.h"

#include "gpu_internal.h"
#include "gvm_row.h"

#define GVM_BLOCK 128

typedef struct gvm_launch {
	gvm_prog prog;
	gvm_io io;
} gvm_launch;

/* Constant memory is 64 KiB; the program's fixed-size arrays (bytecode.h)
 * are sized so that any program fits, so there is no oversize case. */
static_assert(sizeof(gvm_launch) <= 60 * 1024,
	      "a program and its columns must fit constant memory");

__constant__ gvm_launch gvm_c;

__global__ void __launch_bounds__(GVM_BLOCK)
    gvm_kernel(uint32_t nrows, unsigned long long *key)
{
	uint32_t row = blockIdx.x * blockDim.x + threadIdx.x;
	gvm_reg R[GVM_MAX_SLOTS];
	uint32_t pc;

	if (row >= nrows)
		return;
	if (gvm_row(&gvm_c.prog, &gvm_c.io, row, R, &pc, NULL))
		atomicMin(key, (unsigned long long)gvm_key(row, pc));
}

__global__ void gvm_err_kernel(uint32_t row, gvm_errinfo *ei)
{
	gvm_reg R[GVM_MAX_SLOTS];
	uint32_t pc;

	gvm_row(&gvm_c.prog, &gvm_c.io, row, R, &pc, ei);
}

extern "C" cudaError_t gvm_probe_kernel(void)
{
	cudaFuncAttributes a;

	return cudaFuncGetAttributes(&a, gvm_kernel);
}

extern "C" void gpu_vm_free_outputs(const bc_program *p, gpu_col *out)
{
	for (uint32_t k = 0; k < p->noutputs; k++) {
		gpu_free(out[k].data, NULL, 0);
		out[k].data = NULL;
		out[k].nulls = NULL;
	}
}

/* Device scratch of one run: the error key, then the error details. */
typedef struct gvm_scratch {
	unsigned long long key;
	gvm_errinfo ei;
} gvm_scratch;

static int gvm_launch_run(gvm_launch *h, uint32_t nrows, gvm_scratch *d,
			  char *err, size_t errlen)
{
	cudaStream_t s = gpu_stream();
	gvm_scratch hs;

	GPU_TRY(cudaMemsetAsync(&d->key, 0xff, sizeof(d->key), s));
	GPU_TRY(cudaMemcpyToSymbolAsync(gvm_c, h, sizeof(*h), 0,
					cudaMemcpyHostToDevice, s));
	if (nrows) {
		gvm_kernel<<<(nrows + GVM_BLOCK - 1) / GVM_BLOCK, GVM_BLOCK, 0,
			     s>>>(nrows, &d->key);
		GPU_TRY(cudaGetLastError());
	}
	GPU_TRY(cudaMemcpyAsync(&hs.key, &d->key, sizeof(hs.key),
				cudaMemcpyDeviceToHost, s));
	GPU_TRY(cudaStreamSynchronize(s));
	if (hs.key == GVM_KEY_NONE)
		return GPMDB_OK;
	/* Undo gvm_key: batch << 20 | pc << 11 | row in batch. */
	gvm_err_kernel<<<1, 1, 0, s>>>(
	    (uint32_t)((hs.key >> 20) * VEC_BATCH + (hs.key & (VEC_BATCH - 1))),
	    &d->ei);
	GPU_TRY(cudaGetLastError());
	GPU_TRY(cudaMemcpyAsync(&hs.ei, &d->ei, sizeof(hs.ei),
				cudaMemcpyDeviceToHost, s));
	GPU_TRY(cudaStreamSynchronize(s));
	return gvm_error_msg(&h->prog.p, &hs.ei, err, errlen);
}

extern "C" int gpu_vm_run(const bc_program *p, const gpu_col *in, int nin,
			  uint32_t nrows, const char *text, uint64_t ntext,
			  const char *const *itext, gpu_col *out, char *err,
			  size_t errlen)
{
	gvm_launch *h = NULL;
	gvm_scratch *d = NULL;
	uint32_t k, nout = 0;
	int rc = gpu_init(err, errlen);

	if (rc)
		return rc;
	h = (gvm_launch *)calloc(1, sizeof(*h));
	if (!h) {
		snprintf(err, errlen, "out of memory");
		return GPMDB_NOMEM;
	}
	rc = gvm_prepare(p, in, nin, text, ntext, itext, &h->prog, &h->io, err,
			 errlen);
	if (rc)
		goto out;
	for (k = 0; k < p->noutputs; k++, nout++) {
		gpu_col *o = &h->io.out[k];
		size_t db = (gvm_out_width(o->type) * (size_t)nrows + 255) &
			    ~(size_t)255;
		void *b;
		if ((rc = gpu_alloc(&b, db + nrows + 1, err, errlen)))
			goto out;
		o->data = b;
		o->nulls = (uint8_t *)b + db;
	}
	if ((rc = gpu_alloc((void **)&d, sizeof(*d), err, errlen)))
		goto out;
	rc = gvm_launch_run(h, nrows, d, err, errlen);
out:
	if (d)
		gpu_free(d, NULL, 0);
	if (rc) {
		for (k = 0; k < nout; k++)
			gpu_free(h->io.out[k].data, NULL, 0);
	} else {
		for (k = 0; k < p->noutputs; k++)
			out[k] = h->io.out[k];
	}
	free(h);
	return rc;
}
