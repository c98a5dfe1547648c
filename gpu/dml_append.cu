/*
 * dml_append.cu - GPU INSERT at the tail of a table (gpu_dml.h
 * gpu_append, gpu_append_dev): the INSERT pipeline of chunks through
 * pinned staging, a copy stream and the copy kernels (docs/gpu.md
 * "INSERT pipeline").
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dml_geom.cuh"
#include "gpu_dml.h"
#include "gpu_internal.h"
#include "persist.cuh"

#include "gpmdb.h"

/* ---- INSERT --------------------------------------------------------- */

/* Values of rows [lr, lr + n) of one column of one tablet: coalesced. */
__global__ void dml_k_copy(char *dst, const char *src, uint64_t n, uint32_t w)
{
	uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		dml_store(dst + i * w, dml_load(src + i * w, w), w);
	gpm_persist_thread(); /* before the host's row count (grid scope) */
}

/* The same for int32_t values of a BIGINT column: sign-extended as they
 * are stored (gpu_append_keep's srcw 4); keep (NULL: none) gets the
 * widened values too, for the column cache. */
__global__ void dml_k_widen(int64_t *dst, const int32_t *src, uint64_t n,
			    int64_t *keep)
{
	uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n) {
		int64_t v = src[i];

		dml_store((char *)(dst + i), (uint64_t)v, 8);
		if (keep)
			keep[i] = v;
	}
	gpm_persist_thread();
}

/* Bits [lr0, lr0 + n) of a tablet bitmap from bits [b0, b0 + n) of src
 * (NULL: zeros), one thread per destination word: the first and last
 * words keep the bits of the rows around them. */
__global__ void dml_k_putbits(uint32_t *dst, uint64_t lr0, uint64_t n,
			      const uint32_t *src, uint64_t b0)
{
	uint64_t wd =
	    (lr0 >> 5) + (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
	uint32_t old, out = 0;

	if (wd > (lr0 + n - 1) >> 5)
		return;
	old = dst[wd];
	for (uint32_t b = 0; b < 32; b++) {
		uint64_t r = wd * 32 + b;
		uint32_t bit;

		if (r >= lr0 && r < lr0 + n)
			bit = src ? dml_bit(src, b0 + (r - lr0)) : 0;
		else
			bit = (old >> b) & 1u;
		out |= bit << b;
	}
	if (out != old)
		dst[wd] = out;
	gpm_persist_thread();
}

/* NULL bytes [b, b + n) of a batch from its NULL bits, bit b0 of src
 * being the first. */
__global__ void dml_k_nullbytes(uint8_t *dst, const uint32_t *src, uint64_t b0,
				uint64_t n)
{
	uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		dst[i] =
		    (uint8_t)((src[(b0 + i) >> 5] >> ((b0 + i) & 31)) & 1u);
}

/*
 * The INSERT pipeline (docs/gpu.md "INSERT pipeline").  The rows go in
 * chunks of whole 1024-row groups inside one tablet, at most
 * DML_CHUNK_BYTES of values and NULL words, each through one of
 * DML_NSLOT slots (a pinned staging buffer and a device buffer):
 *   host:        waits until the slot's last kernels are done, calls the
 *                chunk hook (the caller registers the chunk's tablet),
 *                copies the chunk's values and NULL words into the
 *                staging buffer on every core;
 *   copy stream: the staging buffer to the device buffer;
 *   stream:      waits for that copy, the kernels store the chunk into
 *                the pool and persist (grid scope: before the count).
 * So the host stages (and registers) chunk k + 2 while chunk k + 1 goes
 * up and chunk k is stored: PCIe carries the upload and the stores at
 * once, in its two directions.  The staging buffers stay for the next
 * INSERT (pinning costs about as much as the copy).
 */
#define DML_NSLOT	3
#define DML_CHUNK_BYTES (32ull << 20)
#define DML_PIECE	(1u << 20) /* bytes of one staging copy task */

static pthread_mutex_t dml_pipe_lock = PTHREAD_MUTEX_INITIALIZER;
static char *dml_stage[DML_NSLOT];
static uint64_t dml_stage_bytes;
static cudaStream_t dml_cstream;
static cudaEvent_t dml_ev_up[DML_NSLOT], dml_ev_done[DML_NSLOT];

/* The pipeline's pinned buffers (bytes each), copy stream and events,
 * made once (lock held). */
static int dml_pipe_ready(uint64_t bytes, char *err, size_t errlen)
{
	cudaError_t e = cudaSuccess;
	const char *call = "cudaStreamCreateWithFlags";

	if (!dml_cstream)
		e = cudaStreamCreateWithFlags(&dml_cstream,
					      cudaStreamNonBlocking);
	for (int b = 0; b < DML_NSLOT && e == cudaSuccess; b++) {
		call = "cudaEventCreateWithFlags";
		if (!dml_ev_up[b])
			e = cudaEventCreateWithFlags(&dml_ev_up[b],
						     cudaEventDisableTiming);
		if (e == cudaSuccess && !dml_ev_done[b])
			e = cudaEventCreateWithFlags(&dml_ev_done[b],
						     cudaEventDisableTiming);
	}
	if (e == cudaSuccess && dml_stage_bytes < bytes) {
		for (int b = 0; b < DML_NSLOT && e == cudaSuccess; b++) {
			call = "cudaFreeHost";
			if (dml_stage[b])
				e = cudaFreeHost(dml_stage[b]);
			dml_stage[b] = NULL;
		}
		dml_stage_bytes = 0;
		for (int b = 0; b < DML_NSLOT && e == cudaSuccess; b++) {
			call = "cudaHostAlloc";
			e = cudaHostAlloc((void **)&dml_stage[b], bytes,
					  cudaHostAllocDefault);
		}
		if (e == cudaSuccess)
			dml_stage_bytes = bytes;
	}
	if (e != cudaSuccess) {
		(void)cudaGetLastError();
		return gpu_cuda_fail(e, call, err, errlen);
	}
	return GPMDB_OK;
}

/* One chunk: table rows [r, r + k), batch rows [b0, b0 + k), in tablet
 * ti at local row lr. */
typedef struct {
	uint64_t r, k, b0, lr, ti;
} dml_chunk;

/* The next chunk from row r (< end): up to the tablet's end, whole
 * 1024-row groups (so no NULL word is shared between two chunks) of at
 * most DML_CHUNK_BYTES for a row of rowb bytes. */
static dml_chunk dml_next_chunk(uint64_t r, uint64_t end, uint64_t start,
				uint64_t rowb)
{
	dml_chunk c;
	uint64_t f, cap, maxk = DML_CHUNK_BYTES / (rowb ? rowb : 1);

	c.ti = dml_tab_index(r);
	f = dml_first_row(c.ti);
	cap = dml_capacity(c.ti);
	c.r = r;
	c.lr = r - f;
	c.b0 = r - start;
	maxk = maxk < 1024 ? 1024 : maxk / 1024 * 1024;
	c.k = (end < f + cap ? end : f + cap) - r;
	/* the first chunk of a tablet may start mid-group */
	if (c.k > maxk)
		c.k = maxk - c.lr % 1024;
	return c;
}

/* The kernels of one chunk on stream s: column c's values from
 * vals[c] (its chunk's first row) and NULL bits from nulls[c] (bit
 * nb0 of it is the chunk's first row; NULL: none), the deleted bits
 * cleared. */
static int dml_chunk_kernels(cudaStream_t s, char *cp,
			     const gpu_tab_layout *lay, const dml_chunk *ch,
			     const char *const *vals,
			     const uint32_t *const *nulls, const uint64_t *nb0,
			     const uint32_t *srcw, void *const *keepv,
			     uint64_t *bytes, char *err, size_t errlen)
{
	const uint64_t *tt2 = lay->tab + ch->ti * lay->stride;
	uint64_t lr = ch->lr, k = ch->k;
	uint64_t nwd = ((lr + k - 1) >> 5) - (lr >> 5) + 1;
	cudaError_t e;

	for (uint32_t c = 0; c < lay->ncols; c++) {
		uint32_t w = lay->widths[c];

		if (srcw && srcw[c] != w) {
			int64_t *kp = keepv && keepv[c]
					  ? (int64_t *)keepv[c] + ch->b0
					  : NULL;
			dml_k_widen<<<dml_grid(k), DML_TPB, 0, s>>>(
			    (int64_t *)(cp + tt2[2 * c] + lr * w),
			    (const int32_t *)vals[c], k, kp);
			if ((e = cudaGetLastError()) != cudaSuccess)
				return gpu_cuda_fail(e, "dml_k_widen", err,
						     errlen);
		} else {
			dml_k_copy<<<dml_grid(k), DML_TPB, 0, s>>>(
			    cp + tt2[2 * c] + lr * w, vals[c], k, w);
			if ((e = cudaGetLastError()) != cudaSuccess)
				return gpu_cuda_fail(e, "dml_k_copy", err,
						     errlen);
		}
		dml_k_putbits<<<dml_grid(nwd), DML_TPB, 0, s>>>(
		    (uint32_t *)(cp + tt2[2 * c + 1]), lr, k, nulls[c],
		    nulls[c] ? nb0[c] : 0);
		if ((e = cudaGetLastError()) != cudaSuccess)
			return gpu_cuda_fail(e, "dml_k_putbits", err, errlen);
		*bytes += k * w + k / 8;
	}
	dml_k_putbits<<<dml_grid(nwd), DML_TPB, 0, s>>>(
	    (uint32_t *)(cp + tt2[lay->stride - 1]), lr, k, NULL, 0);
	if ((e = cudaGetLastError()) != cudaSuccess)
		return gpu_cuda_fail(e, "dml_k_putbits", err, errlen);
	*bytes += k / 8;
	return GPMDB_OK;
}

/* The chunk's values and NULL bytes into the copies the INSERT leaves
 * for the column cache (gpu_append_keep), on stream s before the slot is
 * given back. */
static int dml_keep_chunk(cudaStream_t s, const gpu_tab_layout *lay,
			  const dml_chunk *ch, const char *const *vals,
			  const uint32_t *const *nulls, const uint64_t *nb0,
			  const uint32_t *srcw, const gpu_append_copies *keep,
			  char *err, size_t errlen)
{
	for (uint32_t c = 0; c < lay->ncols; c++) {
		uint32_t w = lay->widths[c];

		/* a widened column's copy is dml_k_widen's */
		if (keep->vals && keep->vals[c] && !(srcw && srcw[c] != w))
			GPU_TRY(cudaMemcpyAsync(
			    (char *)keep->vals[c] + ch->b0 * w, vals[c],
			    ch->k * w, cudaMemcpyDeviceToDevice, s));
		if (!keep->nullb || !keep->nullb[c])
			continue;
		if (nulls[c]) {
			dml_k_nullbytes<<<dml_grid(ch->k), DML_TPB, 0, s>>>(
			    keep->nullb[c] + ch->b0, nulls[c], nb0[c], ch->k);
			GPU_TRY(cudaGetLastError());
		} else {
			GPU_TRY(cudaMemsetAsync(keep->nullb[c] + ch->b0, 0,
						ch->k, s));
		}
	}
	return GPMDB_OK;
}

/* One staging copy task: at most DML_PIECE bytes. */
typedef struct {
	const char *src;
	char *dst;
	uint64_t len;
} dml_piece;

/* Copy tasks a chunk of k rows may need (dml_stage_chunk). */
static uint64_t dml_pieces_max(const gpu_tab_layout *lay, uint64_t k)
{
	uint64_t cap = 0;

	for (uint32_t c = 0; c < lay->ncols; c++)
		cap += (k * lay->widths[c]) / DML_PIECE + 3;
	return cap;
}

/* Host arrays: chunk ch of every column into slot b's staging buffer,
 * on every core (pc: room for dml_pieces_max tasks); *dv, *dn and nb0 say
 * where each column's piece lands in the slot's device buffer dbuf.
 * Returns the bytes staged. */
static uint64_t dml_stage_chunk(const gpu_tab_layout *lay, const dml_chunk *ch,
				const void *const *vals,
				const uint32_t *const *nulls,
				const uint32_t *srcw, char *stage, char *dbuf,
				const char **dv, const uint32_t **dn,
				uint64_t *nb0, dml_piece *pc)
{
	uint64_t off = 0, np = 0;

	for (uint32_t c = 0; c < lay->ncols; c++) {
		uint32_t sw = srcw ? srcw[c] : lay->widths[c];
		uint64_t len = ch->k * sw;
		const char *src = (const char *)vals[c] + ch->b0 * sw;

		dv[c] = dbuf + off;
		for (uint64_t o = 0; o < len; o += DML_PIECE)
			pc[np++] = (dml_piece){src + o, stage + off + o,
					       len - o < DML_PIECE ? len - o
								   : DML_PIECE};
		off = (off + len + 255) / 256 * 256;
		dn[c] = NULL;
		nb0[c] = 0;
		if (nulls[c]) {
			uint64_t w0 = ch->b0 / 32;
			uint64_t w1 = (ch->b0 + ch->k - 1) / 32;

			dn[c] = (const uint32_t *)(dbuf + off);
			nb0[c] = ch->b0 % 32;
			pc[np++] = (dml_piece){(const char *)(nulls[c] + w0),
					       stage + off, (w1 - w0 + 1) * 4};
			off = (off + (w1 - w0 + 1) * 4 + 255) / 256 * 256;
		}
	}
#pragma omp parallel for schedule(dynamic) if (np > 2)
	for (long i = 0; i < (long)np; i++)
		memcpy(pc[i].dst, pc[i].src, pc[i].len);
	return off;
}

/* Bytes one row takes in a slot: values and NULL bits (rounded up). */
static uint64_t dml_row_bytes(const gpu_tab_layout *lay,
			      const uint32_t *const *nulls)
{
	uint64_t b = 0;

	for (uint32_t c = 0; c < lay->ncols; c++)
		b += lay->widths[c] + (nulls && nulls[c] ? 1 : 0);
	return b;
}

/* gpu_append (dev 0: host arrays, through the pipeline) and
 * gpu_append_dev (dev 1: device arrays, read where they are; chunked
 * too, so that registration keeps pace with the kernels). */
static int dml_append(void *pool, const gpu_tab_layout *lay, uint64_t start,
		      uint64_t n, const void *const *vals,
		      const uint32_t *const *nulls, const uint32_t *srcw,
		      int dev, gpu_append_chunk_fn fn, void *ctx,
		      const gpu_append_copies *keep, gpu_dml_timing *t,
		      char *err, size_t errlen)
{
	cudaStream_t s;
	gpu_dml_timing tt;
	double t0 = dml_ms(), tu;
	char *cp = (char *)pool, *dbuf[DML_NSLOT] = {NULL, NULL, NULL};
	uint64_t rowb, slot_bytes = 0, end = start + n, nch = 0;
	const char **dv = NULL;
	const uint32_t **dn = NULL;
	uint64_t *nb0 = NULL;
	dml_piece *pc = NULL;
	bool locked = false, queued = false;
	int rc;

	if (!t)
		t = &tt;
	memset(t, 0, sizeof(*t));
	if ((rc = gpu_init(err, errlen)))
		return rc;
	if (n == 0)
		return GPMDB_OK;
	for (uint32_t c = 0; srcw && c < lay->ncols; c++)
		if (srcw[c] != lay->widths[c] &&
		    (dev || srcw[c] != 4 || lay->widths[c] != 8))
			return gpu_say(err, errlen, GPMDB_MISUSE,
				       "GPU INSERT: column %u: values of %u "
				       "bytes cannot be stored in %u",
				       c, srcw[c], lay->widths[c]);
	s = gpu_stream();
	if (dml_tab_index(start + n - 1) >= lay->ntab) {
		snprintf(err, errlen, "rows up to %llu have no tablet",
			 (unsigned long long)(start + n));
		return GPMDB_MISUSE;
	}
	dv = (const char **)calloc(lay->ncols + 1, sizeof(*dv));
	dn = (const uint32_t **)calloc(lay->ncols + 1, sizeof(*dn));
	nb0 = (uint64_t *)calloc(lay->ncols + 1, sizeof(*nb0));
	if (!dv || !dn || !nb0) {
		rc = gpu_say(err, errlen, GPMDB_NOMEM, "out of memory");
		goto out;
	}
	rowb = dml_row_bytes(lay, dev ? NULL : nulls);
	if (!dev) {
		/* a chunk's values and NULL words, 256-byte aligned each */
		uint64_t k = DML_CHUNK_BYTES / rowb;
		k = k < 1024 ? 1024 : k / 1024 * 1024;
		if (k > DML_MAX_ROWS)
			k = DML_MAX_ROWS;
		slot_bytes = k * rowb + (uint64_t)lay->ncols * 520;
		pc = (dml_piece *)malloc(dml_pieces_max(lay, k) * sizeof(*pc));
		if (!pc) {
			rc = gpu_say(err, errlen, GPMDB_NOMEM, "out of memory");
			goto out;
		}
		pthread_mutex_lock(&dml_pipe_lock);
		locked = true;
		if ((rc = dml_pipe_ready(slot_bytes, err, errlen)))
			goto out;
		for (int b = 0; b < DML_NSLOT; b++) {
			cudaError_t e;

			if ((rc = gpu_alloc((void **)&dbuf[b], slot_bytes, err,
					    errlen)))
				goto out;
			/* allocated in the stream's order: the copy stream
			 * waits for this event before it writes the buffer */
			queued = true;
			if ((e = cudaEventRecord(dml_ev_done[b], s)) !=
			    cudaSuccess) {
				rc = gpu_cuda_fail(e, "cudaEventRecord", err,
						   errlen);
				goto out;
			}
		}
	}
	dml_note(0);
	for (uint64_t r = start; r < end; nch++) {
		dml_chunk ch = dml_next_chunk(r, end, start, rowb);
		int b = (int)(nch % DML_NSLOT);
		cudaError_t e;

		if (fn && (rc = fn(ctx, ch.r, ch.r + ch.k, err, errlen)))
			goto out;
		if (dev) {
			for (uint32_t c = 0; c < lay->ncols; c++) {
				dv[c] = (const char *)vals[c] +
					ch.b0 * lay->widths[c];
				dn[c] = nulls[c];
				nb0[c] = ch.b0;
			}
		} else {
			uint64_t nbytes;

			tu = dml_ms();
			/* the slot's previous chunk is stored: its buffers
			 * are free */
			if ((e = cudaEventSynchronize(dml_ev_done[b])) !=
			    cudaSuccess) {
				rc = gpu_cuda_fail(e, "cudaEventSynchronize",
						   err, errlen);
				goto out;
			}
			nbytes = dml_stage_chunk(lay, &ch, vals, nulls, srcw,
						 dml_stage[b], dbuf[b], dv, dn,
						 nb0, pc);
			if ((e = cudaStreamWaitEvent(dml_cstream,
						     dml_ev_done[b], 0)) !=
				cudaSuccess ||
			    (e = cudaMemcpyAsync(dbuf[b], dml_stage[b], nbytes,
						 cudaMemcpyHostToDevice,
						 dml_cstream)) != cudaSuccess ||
			    (e = cudaEventRecord(dml_ev_up[b], dml_cstream)) !=
				cudaSuccess ||
			    (e = cudaStreamWaitEvent(s, dml_ev_up[b], 0)) !=
				cudaSuccess) {
				rc = gpu_cuda_fail(e, "the chunk's upload", err,
						   errlen);
				goto out;
			}
			t->upload_ms += dml_ms() - tu;
		}
		queued = true;
		if ((rc = dml_chunk_kernels(s, cp, lay, &ch, dv, dn, nb0, srcw,
					    keep ? (void *const *)keep->vals
						 : NULL,
					    &t->bytes, err, errlen)) ||
		    (keep && (rc = dml_keep_chunk(s, lay, &ch, dv, dn, nb0,
						  srcw, keep, err, errlen))))
			goto out;
		if (!dev &&
		    (e = cudaEventRecord(dml_ev_done[b], s)) != cudaSuccess) {
			rc = gpu_cuda_fail(e, "cudaEventRecord", err, errlen);
			goto out;
		}
		r += ch.k;
	}
out:
	/* even after an error nothing may still read the buffers or store
	 * into the pool once this returns */
	if (queued) {
		cudaError_t e = cudaStreamSynchronize(s);
		if (e == cudaSuccess && !dev)
			e = cudaStreamSynchronize(dml_cstream);
		if (e != cudaSuccess && rc == GPMDB_OK)
			rc = gpu_cuda_fail(e, "cudaStreamSynchronize", err,
					   errlen);
	}
	for (int b = 0; b < DML_NSLOT; b++)
		if (dbuf[b])
			(void)gpu_free(dbuf[b], NULL, 0);
	if (locked)
		pthread_mutex_unlock(&dml_pipe_lock);
	if (rc == GPMDB_OK)
		dml_note(1);
	free(dv);
	free(dn);
	free(nb0);
	free(pc);
	t->total_ms = dml_ms() - t0;
	t->data_ms = t->total_ms - t->upload_ms;
	return rc;
}

extern "C" int gpu_append(void *pool, const gpu_tab_layout *lay, uint64_t start,
			  uint64_t n, const void *const *vals,
			  const uint32_t *const *nulls, gpu_append_chunk_fn fn,
			  void *ctx, gpu_dml_timing *t, char *err,
			  size_t errlen)
{
	return dml_append(pool, lay, start, n, vals, nulls, NULL, 0, fn, ctx,
			  NULL, t, err, errlen);
}

extern "C" int gpu_append_keep(void *pool, const gpu_tab_layout *lay,
			       uint64_t start, uint64_t n,
			       const void *const *vals,
			       const uint32_t *const *nulls,
			       const uint32_t *srcw, gpu_append_chunk_fn fn,
			       void *ctx, const gpu_append_copies *keep,
			       gpu_dml_timing *t, char *err, size_t errlen)
{
	return dml_append(pool, lay, start, n, vals, nulls, srcw, 0, fn, ctx,
			  keep, t, err, errlen);
}

extern "C" int gpu_append_dev(void *pool, const gpu_tab_layout *lay,
			      uint64_t start, uint64_t n,
			      const void *const *dvals,
			      const uint32_t *const *dnulls,
			      gpu_append_chunk_fn fn, void *ctx,
			      gpu_dml_timing *t, char *err, size_t errlen)
{
	return dml_append(pool, lay, start, n, dvals, dnulls, NULL, 1, fn, ctx,
			  NULL, t, err, errlen);
}
