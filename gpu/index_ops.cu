/*
 * index_ops.cu - bulk sort and probe of index entries on the GPU
 * (index_gpu.h; docs/gpu.md "Index sort and probe on the GPU").
 *
 * Both turn records into words that compare as the records do:
 *
 *   the order sequence: key bytes [0, cmp), then, when width >= cmp + 8,
 *   the row id's bytes width-1 down to width-8 (a little-endian uint64_t
 *   compared as a number);
 *
 *   a plan (ix_plan) of fields: per byte of the sequence that differs
 *   between records, the bits from its highest to its lowest differing
 *   bit (found by one pass, ix_diff_k: the OR over records of each byte
 *   XOR record 0's); fields packed most significant first into words of
 *   at most 64 bits; a field never straddles two words.
 *
 * Records that agree on every bit left out agree on the bytes, so the
 * words order records exactly as memcmp (then the row id) does.
 *
 * Sort: LSD over the words, last word first: each pass builds the word
 * of every record in the current order (ix_key_k) and runs CUB's stable
 * DeviceRadixSort::SortPairs (word, permutation) over the word's bits
 * only (uint32_t words when they have at most 32 bits); then the records
 * are gathered in the final order (ix_gather_k), checked in order
 * (ix_check_k) and downloaded.  An INT/BIGINT key with its row id over a
 * few million rows is one word: one radix sort.
 *
 * Probe: the records of an index (key, row id) are cached on the device
 * as their key words (column by column) and row ids; the bits left out
 * of the key words must equal the records' in a probe (else it is
 * absent); a one-word key is searched first in a sampled upper level in
 * shared memory, then in the array.
 */
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include <cub/cub.cuh>

#include "gpmdb.h"

#include "gpu_internal.h"
#include "index_gpu.h"

/* ---- small things --------------------------------------------------- */

static double ix_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* The grid of a grid-stride loop over n items. */
static unsigned ix_grid(uint64_t n, unsigned block)
{
	uint64_t g = (n + block - 1) / block;

	if (g > 132u * 16u)
		g = 132u * 16u;
	return g ? (unsigned)g : 1u;
}

#define IX_BLOCK 256

/* Knobs (gpu_ix_set_xfer, gpu_ix_set_probe_samples). */
static int ix_xfer_mode = GPU_IX_XFER_AUTO;
static int ix_samples_on = 1;
/* What AUTO means: measured on the H100 (docs/gpu.md). */
#define IX_XFER_DEFAULT GPU_IX_XFER_STAGED

extern "C" void gpu_ix_set_xfer(int mode)
{
	ix_xfer_mode = mode;
}

extern "C" void gpu_ix_set_probe_samples(int on)
{
	ix_samples_on = on;
}

/* ---- transfers ------------------------------------------------------ */

/* Pinned staging of GPU_IX_XFER_STAGED: the CPU copies a chunk on all
 * cores while the DMA of another runs; an event per buffer says when it
 * may be used again.  Allocated on first use, kept until gpu_shutdown. */
#define IX_STAGE_BYTES (32u << 20)
#define IX_NSTAGE      3
static char *ix_stage[IX_NSTAGE];
static cudaEvent_t ix_stage_ev[IX_NSTAGE];

static int ix_stage_ready(char *err, size_t errlen)
{
	for (int i = 0; i < IX_NSTAGE; i++) {
		if (!ix_stage[i])
			GPU_TRY(cudaHostAlloc((void **)&ix_stage[i],
					      IX_STAGE_BYTES,
					      cudaHostAllocDefault));
		if (!ix_stage_ev[i])
			GPU_TRY(cudaEventCreateWithFlags(
			    &ix_stage_ev[i], cudaEventDisableTiming));
	}
	return GPMDB_OK;
}

/* memcpy on every core, in 1 MiB pieces. */
static void ix_pcopy(void *dst, const void *src, size_t n)
{
	long np = (long)((n + (1u << 20) - 1) >> 20);

#pragma omp parallel for schedule(static) if (np > 2)
	for (long i = 0; i < np; i++) {
		size_t off = (size_t)i << 20;
		size_t c = n - off < (1u << 20) ? n - off : (1u << 20);
		memcpy((char *)dst + off, (const char *)src + off, c);
	}
}

/* The chunk of a staged transfer of n bytes: an eighth of it between 1
 * and 32 MiB, so that the copies of a small transfer (2.5M probes: 22
 * MiB) overlap its DMAs too. */
static size_t ix_chunk(size_t n)
{
	size_t c = (n / 8 + 0xffff) & ~(size_t)0xffff;

	return c < (1u << 20)	    ? (1u << 20)
	       : c > IX_STAGE_BYTES ? IX_STAGE_BYTES
				    : c;
}

static int ix_up_staged(void *dst, const void *src, size_t n, char *err,
			size_t errlen)
{
	cudaStream_t s = gpu_stream();
	size_t cs = ix_chunk(n);
	int rc = ix_stage_ready(err, errlen);

	if (rc)
		return rc;
	for (size_t off = 0, k = 0; off < n; off += cs, k++) {
		size_t c = n - off < cs ? n - off : cs;
		int b = (int)(k % IX_NSTAGE);
		GPU_TRY(cudaEventSynchronize(ix_stage_ev[b]));
		ix_pcopy(ix_stage[b], (const char *)src + off, c);
		GPU_TRY(cudaMemcpyAsync((char *)dst + off, ix_stage[b], c,
					cudaMemcpyHostToDevice, s));
		GPU_TRY(cudaEventRecord(ix_stage_ev[b], s));
	}
	return GPMDB_OK;
}

static int ix_down_staged(void *dst, const void *src, size_t n, char *err,
			  size_t errlen)
{
	cudaStream_t s = gpu_stream();
	size_t cs = ix_chunk(n), nk = (n + cs - 1) / cs;
	int rc = ix_stage_ready(err, errlen);

	if (rc)
		return rc;
	for (size_t k = 0; k < nk + IX_NSTAGE; k++) {
		/* issue chunk k, copy out chunk k - (IX_NSTAGE - 1) */
		if (k < nk) {
			size_t off = k * cs;
			size_t c = n - off < cs ? n - off : cs;
			int b = (int)(k % IX_NSTAGE);
			GPU_TRY(cudaMemcpyAsync(ix_stage[b],
						(const char *)src + off, c,
						cudaMemcpyDeviceToHost, s));
			GPU_TRY(cudaEventRecord(ix_stage_ev[b], s));
		}
		if (k + 1 >= IX_NSTAGE && k + 1 - IX_NSTAGE < nk) {
			size_t j = k + 1 - IX_NSTAGE;
			size_t off = j * cs;
			size_t c = n - off < cs ? n - off : cs;
			int b = (int)(j % IX_NSTAGE);
			GPU_TRY(cudaEventSynchronize(ix_stage_ev[b]));
			ix_pcopy((char *)dst + off, ix_stage[b], c);
		}
	}
	return GPMDB_OK;
}

/* A transfer of one call: the mode, and the host range registered by
 * GPU_IX_XFER_REGISTER (unregistered by ix_xfer_end). */
typedef struct {
	int mode;
	void *reg;
} ix_xfer;

static void ix_xfer_begin(ix_xfer *x, void *host, size_t n)
{
	x->mode = ix_xfer_mode ? ix_xfer_mode : IX_XFER_DEFAULT;
	x->reg = NULL;
	if (x->mode == GPU_IX_XFER_REGISTER && n) {
		if (cudaHostRegister(host, n, cudaHostRegisterDefault) ==
		    cudaSuccess) {
			x->reg = host;
		} else {
			/* e.g. a mapping CUDA refuses: stage instead */
			(void)cudaGetLastError();
			x->mode = GPU_IX_XFER_STAGED;
		}
	}
}

static void ix_xfer_end(ix_xfer *x)
{
	if (x->reg) {
		(void)cudaHostUnregister(x->reg);
		(void)cudaGetLastError();
	}
	x->reg = NULL;
}

static int ix_up(const ix_xfer *x, void *dst, const void *src, size_t n,
		 char *err, size_t errlen)
{
	if (!n)
		return GPMDB_OK;
	if (x->mode == GPU_IX_XFER_STAGED)
		return ix_up_staged(dst, src, n, err, errlen);
	GPU_TRY(
	    cudaMemcpyAsync(dst, src, n, cudaMemcpyHostToDevice, gpu_stream()));
	return GPMDB_OK;
}

/* Returns when dst holds the bytes. */
static int ix_down(const ix_xfer *x, void *dst, const void *src, size_t n,
		   char *err, size_t errlen)
{
	if (!n)
		return GPMDB_OK;
	if (x->mode == GPU_IX_XFER_STAGED)
		return ix_down_staged(dst, src, n, err, errlen);
	GPU_TRY(
	    cudaMemcpyAsync(dst, src, n, cudaMemcpyDeviceToHost, gpu_stream()));
	GPU_TRY(cudaStreamSynchronize(gpu_stream()));
	return GPMDB_OK;
}

/* ---- the plan ------------------------------------------------------- */

/* One field: bits [shift, shift + nbits) of byte pos of a record. */
typedef struct {
	uint32_t pos;
	uint8_t shift, nbits, pad[2];
} ix_field;

typedef struct {
	ix_field *f;	 /* host: nf fields */
	uint32_t nf;	 /* fields */
	uint32_t nw;	 /* words */
	uint32_t *wf;	 /* host: word w has fields [wf[w], wf[w + 1]) */
	uint32_t *wbits; /* host: bits of word w */
	uint32_t bits;	 /* all words */
} ix_plan;

static void ix_plan_free(ix_plan *pl)
{
	free(pl->f);
	free(pl->wf);
	free(pl->wbits);
	memset(pl, 0, sizeof(*pl));
}

/* The plan of the order sequence seq[0, ns) given diff[p] (the bits of
 * byte p that differ between records). */
static int ix_plan_make(const uint32_t *seq, uint32_t ns, const uint32_t *diff,
			ix_plan *pl, char *err, size_t errlen)
{
	uint32_t used = 64;

	memset(pl, 0, sizeof(*pl));
	pl->f = (ix_field *)malloc((ns ? ns : 1) * sizeof(ix_field));
	pl->wf = (uint32_t *)malloc((ns + 2) * sizeof(uint32_t));
	pl->wbits = (uint32_t *)malloc((ns + 1) * sizeof(uint32_t));
	if (!pl->f || !pl->wf || !pl->wbits) {
		ix_plan_free(pl);
		return gpu_say(err, errlen, GPMDB_NOMEM,
			       "out of host memory for the sort plan");
	}
	for (uint32_t i = 0; i < ns; i++) {
		uint32_t d = diff[seq[i]] & 0xffu;
		if (!d)
			continue;
		int lo = __builtin_ctz(d), hi = 31 - __builtin_clz(d);
		uint32_t nb = (uint32_t)(hi - lo + 1);
		if (used + nb > 64) { /* a new word */
			pl->wf[pl->nw] = pl->nf;
			pl->wbits[pl->nw] = 0;
			pl->nw++;
			used = 0;
		}
		pl->f[pl->nf].pos = seq[i];
		pl->f[pl->nf].shift = (uint8_t)lo;
		pl->f[pl->nf].nbits = (uint8_t)nb;
		pl->nf++;
		pl->wbits[pl->nw - 1] += nb;
		pl->bits += nb;
		used += nb;
	}
	pl->wf[pl->nw] = pl->nf;
	return GPMDB_OK;
}

/* ---- kernels -------------------------------------------------------- */

/*
 * diff[p] |= OR over records of (byte p XOR record 0's byte p), for the
 * nbytes bytes of records of width bytes.  Thread t reads the 32-bit
 * words t, t + P, t + 2P, ... of the buffer; P is a multiple of width, so
 * every word a thread reads starts at the same byte of a record (4t mod
 * width) and is compared with the same 4 bytes of record 0 (those that
 * run past a record's end belong to the next one, whose first bytes are
 * compared with record 0's first bytes).
 */
__global__ void ix_diff_k(const uint8_t *rec, uint64_t nbytes, uint32_t width,
			  uint64_t P, uint32_t *diff)
{
	uint64_t t = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x;
	uint64_t nw = nbytes / 4;
	const uint32_t *w = (const uint32_t *)rec;
	uint32_t o, ref = 0, acc = 0;

	if (t == 0)
		for (uint64_t q = nw * 4; q < nbytes; q++) {
			uint32_t p = (uint32_t)(q % width);
			uint32_t b = rec[q] ^ rec[p];
			if (b)
				atomicOr(&diff[p], b);
		}
	if (t >= P || t >= nw)
		return;
	o = (uint32_t)((4 * t) % width);
	for (int i = 0; i < 4; i++)
		ref |= (uint32_t)rec[(o + i) % width] << (8 * i);
	for (uint64_t q = t; q < nw; q += P)
		acc |= w[q] ^ ref;
	for (int i = 0; i < 4; i++) {
		uint32_t b = acc >> (8 * i) & 0xffu, p = (o + i) % width;
		if (b && (diff[p] | b) != diff[p])
			atomicOr(&diff[p], b);
	}
}

/* The value of fields [f0, f1) of the record at p. */
__device__ __forceinline__ uint64_t ix_word(const uint8_t *p, const ix_field *f,
					    uint32_t f0, uint32_t f1)
{
	uint64_t k = 0;

	for (uint32_t j = f0; j < f1; j++) {
		ix_field fj = f[j];
		k = k << fj.nbits | (uint64_t)((p[fj.pos] >> fj.shift) &
					       ((1u << fj.nbits) - 1));
	}
	return k;
}

/* keys[i] = the word of fields [f0, f1) of record perm_in[i] (record i
 * and perm_out[i] = i when perm_in is NULL). */
template <typename K>
__global__ void ix_key_k(const uint8_t *rec, uint32_t width, uint32_t n,
			 const ix_field *f, uint32_t f0, uint32_t f1,
			 const uint32_t *perm_in, K *keys, uint32_t *perm_out)
{
	for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
	     i += gridDim.x * blockDim.x) {
		uint32_t r = perm_in ? perm_in[i] : i;
		keys[i] = (K)ix_word(rec + (uint64_t)r * width, f, f0, f1);
		if (!perm_in)
			perm_out[i] = i;
	}
}

/* out = the records of in in the order perm, 4 bytes a thread. */
__global__ void ix_gather_k(const uint8_t *in, uint8_t *out,
			    const uint32_t *perm, uint32_t width,
			    uint64_t nbytes)
{
	uint64_t n4 = (nbytes + 3) / 4;

	for (uint64_t q4 = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x;
	     q4 < n4; q4 += (uint64_t)gridDim.x * blockDim.x) {
		uint64_t q = q4 * 4, r = q / width;
		uint32_t o = (uint32_t)(q - r * width), v = 0;
		const uint8_t *src = in + (uint64_t)perm[r] * width;
		int k = 0;
		for (; k < 4 && q + k < nbytes; k++) {
			v |= (uint32_t)src[o] << (8 * k);
			if (++o == width && q + k + 1 < nbytes) {
				o = 0;
				src = in + (uint64_t)perm[++r] * width;
			}
		}
		if (k == 4)
			((uint32_t *)out)[q4] = v;
		else
			for (int j = 0; j < k; j++)
				out[q + j] = (uint8_t)(v >> (8 * j));
	}
}

/* The order of records a and b: memcmp over [0, cmp), then the row id
 * when rid. */
__device__ int ix_rec_cmp(const uint8_t *a, const uint8_t *b, uint32_t cmp,
			  uint32_t width, bool rid)
{
	for (uint32_t j = 0; j < cmp; j++)
		if (a[j] != b[j])
			return a[j] < b[j] ? -1 : 1;
	if (rid)
		for (uint32_t j = width; j-- > width - 8;)
			if (a[j] != b[j])
				return a[j] < b[j] ? -1 : 1;
	return 0;
}

/* bad[0] = 1 when some record is before its predecessor.  With row ids
 * (rid), *dup is the lowest row id of a record whose first cmp bytes
 * equal its predecessor's (left at ~0 when none): the unique-key check of
 * a batch (storage/index.c check_keys) then needs no pass of its own over
 * the sorted records on the host. */
__global__ void ix_check_k(const uint8_t *rec, uint32_t n, uint32_t width,
			   uint32_t cmp, bool rid, uint32_t *bad,
			   unsigned long long *dup)
{
	for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i + 1 < n;
	     i += gridDim.x * blockDim.x) {
		const uint8_t *a = rec + (uint64_t)i * width, *b = a + width;
		int d = ix_rec_cmp(a, b, cmp, width, rid);

		if (d > 0)
			bad[0] = 1;
		if (rid && ix_rec_cmp(a, b, cmp, width, false) == 0) {
			unsigned long long id = 0;
			for (uint32_t j = 0; j < 8; j++)
				id |= (unsigned long long)b[width - 8 + j]
				      << (8 * j);
			atomicMin(dup, id);
		}
	}
}

/* ---- the plan of a buffer of records on the device ------------------ */

/* diff[width] of the n records at drec (device); *ddiff is left
 * allocated for the caller to free. */
static int ix_diff(const uint8_t *drec, uint64_t n, uint32_t width,
		   uint32_t *diff, char *err, size_t errlen)
{
	uint32_t *dd = NULL;
	uint64_t nbytes = n * width, P;
	int rc;

	if ((rc = gpu_alloc((void **)&dd, width * sizeof(uint32_t), err,
			    errlen)))
		return rc;
	P = width * (uint64_t)((1u << 18) / width + 1);
	rc = gpu_memset(dd, 0, width * sizeof(uint32_t), err, errlen);
	if (!rc) {
		ix_diff_k<<<(unsigned)((P + IX_BLOCK - 1) / IX_BLOCK), IX_BLOCK,
			    0, gpu_stream()>>>(drec, nbytes, width, P, dd);
		cudaError_t e = cudaGetLastError();
		if (e != cudaSuccess)
			rc = gpu_cuda_fail(e, "ix_diff_k", err, errlen);
	}
	if (!rc)
		rc = gpu_download(diff, dd, width * sizeof(uint32_t), err,
				  errlen);
	(void)gpu_free(dd, NULL, 0);
	return rc;
}

/* The fields on the device. */
static int ix_plan_upload(const ix_plan *pl, ix_field **df, char *err,
			  size_t errlen)
{
	int rc;

	*df = NULL;
	if (!pl->nf)
		return GPMDB_OK;
	if ((rc = gpu_alloc((void **)df, pl->nf * sizeof(ix_field), err,
			    errlen)))
		return rc;
	if ((rc = gpu_upload(*df, pl->f, pl->nf * sizeof(ix_field), err,
			     errlen))) {
		(void)gpu_free(*df, NULL, 0);
		*df = NULL;
	}
	return rc;
}

/* ---- gpu_ix_sort ---------------------------------------------------- */

/* The device buffers of one sort, freed on every path. */
typedef struct {
	uint8_t *in, *out;
	void *k0, *k1;
	uint32_t *p0, *p1;
	void *tmp;
	ix_field *f;
	uint32_t *bad;
} ix_sort_bufs;

static void ix_sort_bufs_free(ix_sort_bufs *b)
{
	void *all[] = {b->in, b->out, b->k0, b->k1, b->p0,
		       b->p1, b->tmp, b->f,  b->bad};

	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		(void)gpu_free(all[i], NULL, 0);
	memset(b, 0, sizeof(*b));
}

/* One LSD pass over word w: keys of every record in the current order,
 * then the stable radix sort of (key, perm) over the word's bits. */
template <typename K>
static int ix_pass(ix_sort_bufs *b, cub::DoubleBuffer<uint32_t> &pb,
		   const ix_plan *pl, uint32_t w, bool first, uint32_t n,
		   uint32_t width, size_t tmpb, char *err, size_t errlen)
{
	cudaStream_t s = gpu_stream();
	cub::DoubleBuffer<K> kb((K *)b->k0, (K *)b->k1);

	ix_key_k<K><<<ix_grid(n, IX_BLOCK), IX_BLOCK, 0, s>>>(
	    b->in, width, n, b->f, pl->wf[w], pl->wf[w + 1],
	    first ? NULL : pb.Current(), kb.Current(), pb.Current());
	GPU_TRY(cudaGetLastError());
	GPU_TRY(cub::DeviceRadixSort::SortPairs(b->tmp, tmpb, kb, pb, (int)n, 0,
						(int)pl->wbits[w], s));
	return GPMDB_OK;
}

static int ix_sort_run(ix_sort_bufs *b, void *recs, uint64_t n, uint32_t width,
		       uint32_t cmp, gpu_ix_sort_stats *st, char *err,
		       size_t errlen)
{
	cudaStream_t s = gpu_stream();
	uint64_t bytes = n * width;
	bool rid = width - cmp >= 8;
	uint32_t ns = cmp + (rid ? 8 : 0), *seq, *diff;
	ix_plan pl;
	ix_xfer x;
	size_t tmpb = 0;
	double t0 = ix_now_ms(), t;
	int rc;

	/* device memory first: nothing is moved unless it all fits */
	if ((rc = gpu_alloc((void **)&b->in, bytes, err, errlen)) ||
	    (rc = gpu_alloc((void **)&b->out, bytes, err, errlen)) ||
	    (rc = gpu_alloc(&b->k0, n * 8, err, errlen)) ||
	    (rc = gpu_alloc(&b->k1, n * 8, err, errlen)) ||
	    (rc = gpu_alloc((void **)&b->p0, n * 4, err, errlen)) ||
	    (rc = gpu_alloc((void **)&b->p1, n * 4, err, errlen)) ||
	    (rc = gpu_alloc((void **)&b->bad, 16, err, errlen)))
		return rc;
	ix_xfer_begin(&x, recs, bytes);
	st->xfer = x.mode;
	rc = ix_up(&x, b->in, recs, bytes, err, errlen);
	if (!rc)
		rc = gpu_sync(err, errlen);
	t = ix_now_ms();
	st->upload_ms = t - t0;
	t0 = t;
	if (rc) {
		ix_xfer_end(&x);
		return rc;
	}

	/* the plan */
	seq = (uint32_t *)malloc((ns + 1) * sizeof(uint32_t));
	diff = (uint32_t *)calloc(width, sizeof(uint32_t));
	if (!seq || !diff) {
		free(seq);
		free(diff);
		ix_xfer_end(&x);
		return gpu_say(err, errlen, GPMDB_NOMEM,
			       "out of host memory for the sort plan");
	}
	for (uint32_t i = 0; i < cmp; i++)
		seq[i] = i;
	for (uint32_t i = 0; rid && i < 8; i++)
		seq[cmp + i] = width - 1 - i;
	rc = ix_diff(b->in, n, width, diff, err, errlen);
	if (!rc)
		rc = ix_plan_make(seq, ns, diff, &pl, err, errlen);
	free(seq);
	free(diff);
	if (rc) {
		ix_xfer_end(&x);
		return rc;
	}
	st->words = pl.nw;
	st->key_bits = pl.bits;
	if (pl.nw == 0) {
		/* every record has the same key and row id: sorted */
		ix_plan_free(&pl);
		ix_xfer_end(&x);
		st->plan_ms = ix_now_ms() - t0;
		return GPMDB_OK;
	}
	rc = ix_plan_upload(&pl, &b->f, err, errlen);
	/* CUB's scratch: the most any pass needs */
	for (uint32_t w = 0; !rc && w < pl.nw; w++) {
		size_t need = 0;
		cudaError_t e;
		cub::DoubleBuffer<uint32_t> pb(b->p0, b->p1);
		if (pl.wbits[w] <= 32) {
			cub::DoubleBuffer<uint32_t> kb((uint32_t *)b->k0,
						       (uint32_t *)b->k1);
			e = cub::DeviceRadixSort::SortPairs(
			    NULL, need, kb, pb, (int)n, 0, (int)pl.wbits[w], s);
		} else {
			cub::DoubleBuffer<uint64_t> kb((uint64_t *)b->k0,
						       (uint64_t *)b->k1);
			e = cub::DeviceRadixSort::SortPairs(
			    NULL, need, kb, pb, (int)n, 0, (int)pl.wbits[w], s);
		}
		if (e != cudaSuccess)
			rc = gpu_cuda_fail(e, "cub::DeviceRadixSort::SortPairs",
					   err, errlen);
		if (need > tmpb)
			tmpb = need;
	}
	if (!rc)
		rc = gpu_alloc(&b->tmp, tmpb ? tmpb : 1, err, errlen);
	if (!rc)
		rc = gpu_sync(err, errlen);
	t = ix_now_ms();
	st->plan_ms = t - t0;
	t0 = t;

	/* LSD: the last word first */
	cub::DoubleBuffer<uint32_t> pb(b->p0, b->p1);
	for (uint32_t w = pl.nw; !rc && w-- > 0;) {
		bool first = w == pl.nw - 1;
		if (pl.wbits[w] <= 32)
			rc =
			    ix_pass<uint32_t>(b, pb, &pl, w, first, (uint32_t)n,
					      width, tmpb, err, errlen);
		else
			rc =
			    ix_pass<uint64_t>(b, pb, &pl, w, first, (uint32_t)n,
					      width, tmpb, err, errlen);
		st->passes++;
	}
	ix_plan_free(&pl);
	if (!rc)
		rc = gpu_sync(err, errlen);
	t = ix_now_ms();
	st->sort_ms = t - t0;
	t0 = t;

	/* the records in order, checked; their first duplicate key found */
	if (!rc) {
		uint32_t bad[4] = {0, 0, 0, 0};
		unsigned long long dup;
		ix_gather_k<<<ix_grid((bytes + 3) / 4, IX_BLOCK), IX_BLOCK, 0,
			      s>>>(b->in, b->out, pb.Current(), width, bytes);
		cudaError_t e = cudaGetLastError();
		if (e != cudaSuccess)
			rc = gpu_cuda_fail(e, "ix_gather_k", err, errlen);
		/* bad[0]: out of order; bad[2..3]: the duplicate, ~0 */
		if (!rc)
			rc = gpu_memset(b->bad, 0, 8, err, errlen);
		if (!rc)
			rc = gpu_memset(b->bad + 2, 0xff, 8, err, errlen);
		if (!rc) {
			ix_check_k<<<ix_grid(n, IX_BLOCK), IX_BLOCK, 0, s>>>(
			    b->out, (uint32_t)n, width, cmp, rid, b->bad,
			    (unsigned long long *)(b->bad + 2));
			e = cudaGetLastError();
			if (e != cudaSuccess)
				rc =
				    gpu_cuda_fail(e, "ix_check_k", err, errlen);
		}
		if (!rc)
			rc = gpu_download(bad, b->bad, 16, err, errlen);
		memcpy(&dup, bad + 2, 8);
		if (!rc && rid)
			st->dup_rowid = dup == ~0ull ? -1 : (int64_t)dup;
		if (!rc && bad[0])
			rc = gpu_say(err, errlen, GPMDB_GPU,
				     "the GPU sort left records out of order "
				     "(a bug): the CPU sorts them");
	}
	t = ix_now_ms();
	st->gather_ms = t - t0;
	t0 = t;
	if (!rc)
		rc = ix_down(&x, recs, b->out, bytes, err, errlen);
	ix_xfer_end(&x);
	st->download_ms = ix_now_ms() - t0;
	return rc;
}

/* ---- getting ready while the host works (gpu_ix_prewarm_hook) ------- */

static pthread_mutex_t ix_pw_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_t ix_pw_thread;
static bool ix_pw_running;
static uint64_t ix_pw_n;
static uint32_t ix_pw_width;
static bool ix_pw_registered;
static void ix_pw_wait(void);

static void *ix_pw_main(void *arg)
{
	char e[300];
	void *d = NULL;
	uint64_t n = ix_pw_n, w = ix_pw_width;
	uint8_t *dummy;

	(void)arg;
	if (gpu_init(e, sizeof(e)) != GPMDB_OK ||
	    ix_stage_ready(e, sizeof(e)) != GPMDB_OK)
		return NULL;
	/* the memory pool keeps what it grew to (release threshold max):
	 * the sort's allocations then find it mapped */
	if (gpu_alloc(&d, (size_t)(n * (2 * w + 24)), e, sizeof(e)) == GPMDB_OK)
		(void)gpu_free(d, e, sizeof(e));
	(void)cudaStreamSynchronize(gpu_stream());
	(void)cudaGetLastError();
	/* the radix sort's kernels loaded (CUDA loads modules lazily) */
	if (w >= 9 && (dummy = (uint8_t *)malloc(4096 * w))) {
		for (uint64_t i = 0; i < 4096 * w; i++)
			dummy[i] = (uint8_t)(i * 2654435761u >> 13);
		gpu_ix_sort_stats st;
		ix_sort_bufs b;
		memset(&b, 0, sizeof(b));
		(void)ix_sort_run(&b, dummy, 4096, (uint32_t)w, (uint32_t)w - 8,
				  &st, e, sizeof(e));
		ix_sort_bufs_free(&b);
		(void)cudaGetLastError();
		free(dummy);
	}
	return NULL;
}

extern "C" void gpu_ix_prewarm_hook(uint64_t n, uint32_t width)
{
	pthread_mutex_lock(&ix_pw_lock);
	if (!ix_pw_registered) {
		/* a process leaving mid-prewarm waits for it first */
		ix_pw_registered = atexit(ix_pw_wait) == 0;
	}
	if (!ix_pw_running) {
		ix_pw_n = n;
		ix_pw_width = width;
		ix_pw_running =
		    pthread_create(&ix_pw_thread, NULL, ix_pw_main, NULL) == 0;
	}
	pthread_mutex_unlock(&ix_pw_lock);
}

/* The GPU's users of the index code wait for a prewarm in flight (it
 * shares their staging and stream). */
static void ix_pw_wait(void)
{
	pthread_mutex_lock(&ix_pw_lock);
	if (ix_pw_running) {
		pthread_join(ix_pw_thread, NULL);
		ix_pw_running = false;
	}
	pthread_mutex_unlock(&ix_pw_lock);
}

extern "C" int gpu_ix_sort(void *recs, uint64_t n, uint32_t width, uint32_t cmp,
			   gpu_ix_sort_stats *st, char *err, size_t errlen)
{
	gpu_ix_sort_stats st0;
	ix_sort_bufs b;
	double t0 = ix_now_ms();
	int rc;

	ix_pw_wait();
	if (!st)
		st = &st0;
	memset(st, 0, sizeof(*st));
	st->dup_rowid = -2;
	memset(&b, 0, sizeof(b));
	if (cmp > width)
		return gpu_say(err, errlen, GPMDB_MISUSE,
			       "gpu_ix_sort: cmp %u is more than width %u", cmp,
			       width);
	if (n < 2 || width == 0)
		return GPMDB_OK;
	if (n > (uint64_t)INT_MAX)
		return gpu_say(err, errlen, GPMDB_UNSUPPORTED,
			       "%llu records are more than the GPU sort takes "
			       "(%d)",
			       (unsigned long long)n, INT_MAX);
	if ((rc = gpu_init(err, errlen)))
		return rc;
	rc = ix_sort_run(&b, recs, n, width, cmp, st, err, errlen);
	ix_sort_bufs_free(&b);
	if (rc == GPMDB_NOMEM) {
		char m[400];
		snprintf(m, sizeof(m), "%s", err ? err : "");
		gpu_say(err, errlen, GPMDB_NOMEM,
			"not enough device memory to sort %llu records of %u "
			"bytes (%.1f MiB and as much again, plus 24 bytes a "
			"record): %s",
			(unsigned long long)n, width,
			n * (double)width / 1048576.0, m);
	}
	/* a sticky error must not reach the next caller */
	(void)cudaGetLastError();
	st->total_ms = ix_now_ms() - t0;
	return rc;
}

extern "C" int gpu_ix_sort_hook(void *recs, uint64_t n, uint32_t width,
				uint32_t cmp, int64_t *dup, char *why,
				size_t whylen)
{
	gpu_ix_sort_stats st;
	int rc = gpu_ix_sort(recs, n, width, cmp, &st, why, whylen);

	if (dup)
		*dup = rc == GPMDB_OK ? st.dup_rowid : -2;
	return rc;
}

/* ---- the index cache ------------------------------------------------ */

#define IX_MAX_ENTRIES 16
#define IX_MAX_SAMPLES 4096

typedef struct {
	bool used, busy;
	const void *pool;
	uint32_t index_id;
	uint64_t version;
	uint64_t n;
	uint32_t kw, width;
	uint64_t lru;
	uint64_t bytes;
	/* device */
	void *keys;	  /* nw arrays of n words: uint32_t when k32 */
	int64_t *rowids;  /* n */
	void *smp;	  /* nsmp words (one-word keys) */
	ix_field *f;	  /* fields */
	uint32_t *wf;	  /* nw + 1 */
	uint8_t *cm, *cr; /* kw: bits left out of the words, their values */
	uint32_t nw, nf, nsmp;
	uint64_t stride;
	bool k32;
} ix_entry;

static ix_entry ix_cache[IX_MAX_ENTRIES];
static uint64_t ix_clock, ix_bytes, ix_limit;
static gpu_ix_cache_stats ix_st;

static void ix_entry_free(ix_entry *e)
{
	void *all[] = {e->keys, e->rowids, e->smp, e->f, e->wf, e->cm, e->cr};

	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		(void)gpu_free(all[i], NULL, 0);
	ix_bytes -= e->bytes;
	memset(e, 0, sizeof(*e));
}

static uint64_t ix_limit_now(void)
{
	if (!ix_limit) {
		gpu_info gi;
		if (gpu_get_info(&gi, NULL, 0) == GPMDB_OK)
			return gi.mem_total / 4;
		return 1ull << 30;
	}
	return ix_limit;
}

/* Frees the least recently used entry not in use: 1, or 0 if none. */
static int ix_evict_one(void)
{
	ix_entry *v = NULL;

	for (int i = 0; i < IX_MAX_ENTRIES; i++) {
		ix_entry *e = &ix_cache[i];
		if (e->used && !e->busy && (!v || e->lru < v->lru))
			v = e;
	}
	if (!v)
		return 0;
	ix_entry_free(v);
	ix_st.evictions++;
	return 1;
}

extern "C" int gpu_ix_cache_reclaim(void)
{
	if (!ix_evict_one())
		return 0;
	ix_st.oom_evictions++;
	return 1;
}

extern "C" void gpu_ix_cache_forget(void)
{
	memset(ix_cache, 0, sizeof(ix_cache));
	ix_bytes = 0;
	/* the staging buffers go too */
	for (int i = 0; i < IX_NSTAGE; i++) {
		if (ix_stage_ev[i])
			(void)cudaEventSynchronize(ix_stage_ev[i]);
		if (ix_stage[i])
			(void)cudaFreeHost(ix_stage[i]);
		if (ix_stage_ev[i])
			(void)cudaEventDestroy(ix_stage_ev[i]);
		ix_stage[i] = NULL;
		ix_stage_ev[i] = NULL;
	}
}

extern "C" void gpu_ix_cache_drop(const void *pool)
{
	for (int i = 0; i < IX_MAX_ENTRIES; i++)
		if (ix_cache[i].used && !ix_cache[i].busy &&
		    (!pool || ix_cache[i].pool == pool))
			ix_entry_free(&ix_cache[i]);
}

extern "C" void gpu_ix_cache_set_limit(uint64_t bytes)
{
	ix_limit = bytes;
}

extern "C" void gpu_ix_cache_get_stats(gpu_ix_cache_stats *s)
{
	*s = ix_st;
	s->entries = 0;
	for (int i = 0; i < IX_MAX_ENTRIES; i++)
		s->entries += ix_cache[i].used;
	s->bytes = ix_bytes;
	s->limit = ix_limit; /* 0: a quarter of the GPU's (no gpu_init here) */
}

/* ---- building an entry ---------------------------------------------- */

/* keys[w * n + i] = word w of record i; rowids[i] = its last 8 bytes. */
template <typename K>
__global__ void ix_words_k(const uint8_t *rec, uint32_t width, uint64_t n,
			   const ix_field *f, const uint32_t *wf, uint32_t nw,
			   K *keys, int64_t *rowids)
{
	for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x;
	     i < n; i += (uint64_t)gridDim.x * blockDim.x) {
		const uint8_t *p = rec + i * width;
		uint64_t r = 0;
		for (uint32_t w = 0; w < nw; w++)
			keys[w * n + i] = (K)ix_word(p, f, wf[w], wf[w + 1]);
		for (int j = 7; j >= 0; j--)
			r = r << 8 | p[width - 8 + j];
		rowids[i] = (int64_t)r;
	}
}

/* The order of keys i and j (nw words each, column by column). */
template <typename K>
__device__ __forceinline__ int ix_kcmp(const K *keys, uint64_t n, uint32_t nw,
				       uint64_t i, uint64_t j)
{
	for (uint32_t w = 0; w < nw; w++) {
		K a = keys[w * n + i], b = keys[w * n + j];
		if (a != b)
			return a < b ? -1 : 1;
	}
	return 0;
}

/* *bad = 1 when a key is less than its predecessor's. */
template <typename K>
__global__ void ix_sorted_k(const K *keys, uint64_t n, uint32_t nw,
			    uint32_t *bad)
{
	for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x;
	     i + 1 < n; i += (uint64_t)gridDim.x * blockDim.x)
		if (ix_kcmp(keys, n, nw, i, i + 1) > 0)
			*bad = 1;
}

template <typename K>
__global__ void ix_samples_k(const K *keys, uint64_t stride, uint32_t ns,
			     K *smp)
{
	uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < ns)
		smp[i] = keys[i * stride];
}

#define IX_LAUNCH_TRY(what)                                                    \
	do {                                                                   \
		cudaError_t e_ = cudaGetLastError();                           \
		if (e_ != cudaSuccess)                                         \
			return gpu_cuda_fail(e_, what, err, errlen);           \
	} while (0)

/* Makes room for bytes in the cache (least recently used entries go). */
static int ix_room(uint64_t bytes, char *err, size_t errlen)
{
	uint64_t lim = ix_limit_now();

	if (bytes > lim)
		return gpu_say(err, errlen, GPMDB_NOMEM,
			       "the index needs %.1f MiB on the device, more "
			       "than the GPU index cache's limit of %.1f MiB",
			       bytes / 1048576.0, lim / 1048576.0);
	while (ix_bytes + bytes > lim && ix_evict_one())
		;
	return GPMDB_OK;
}

/* The words, row ids and samples of the records at drec into e. */
static int ix_build_words(ix_entry *e, const uint8_t *drec, char *err,
			  size_t errlen)
{
	cudaStream_t s = gpu_stream();
	uint32_t *diff, *seq, bad = 0, *dbad = NULL;
	uint8_t *cm, *cr;
	uint64_t n = e->n;
	ix_plan pl;
	int rc;

	diff = (uint32_t *)calloc(e->width, sizeof(uint32_t));
	seq = (uint32_t *)malloc((e->kw + 1) * sizeof(uint32_t));
	cm = (uint8_t *)malloc(e->kw + 1);
	cr = (uint8_t *)malloc(e->kw + 1);
	if (!diff || !seq || !cm || !cr) {
		free(diff);
		free(seq);
		free(cm);
		free(cr);
		return gpu_say(err, errlen, GPMDB_NOMEM,
			       "out of host memory for the index plan");
	}
	for (uint32_t i = 0; i < e->kw; i++)
		seq[i] = i;
	rc = ix_diff(drec, n, e->width, diff, err, errlen);
	if (!rc)
		rc = ix_plan_make(seq, e->kw, diff, &pl, err, errlen);
	if (!rc) {
		/* the bits left out of the words and record 0's values */
		uint8_t *r0 = cr;
		rc = gpu_download(r0, drec, e->kw, err, errlen);
		for (uint32_t i = 0; !rc && i < e->kw; i++) {
			uint32_t d = diff[i] & 0xffu, keep = 0;
			if (d) {
				int lo = __builtin_ctz(d),
				    hi = 31 - __builtin_clz(d);
				keep =
				    ((1u << (hi + 1)) - 1) & ~((1u << lo) - 1);
			}
			cm[i] = (uint8_t)~keep;
			cr[i] &= cm[i];
		}
		if (rc)
			ix_plan_free(&pl);
	}
	free(diff);
	free(seq);
	if (rc) {
		free(cm);
		free(cr);
		return rc;
	}
	e->nw = pl.nw;
	e->nf = pl.nf;
	e->k32 = pl.nw == 1 && pl.wbits[0] <= 32;
	size_t ks = e->k32 ? 4 : 8;
	e->nsmp = 0;
	if (pl.nw == 1 && n > IX_MAX_SAMPLES) {
		e->stride = (n + IX_MAX_SAMPLES - 1) / IX_MAX_SAMPLES;
		e->nsmp = (uint32_t)((n + e->stride - 1) / e->stride);
	}
	e->bytes = pl.nw * n * ks + n * 8 + e->nsmp * ks +
		   pl.nf * sizeof(ix_field) + (pl.nw + 1) * 4 + 2 * e->kw;
	if (!(rc = ix_room(e->bytes, err, errlen)) &&
	    !(rc = gpu_alloc(&e->keys, pl.nw * n * ks, err, errlen)) &&
	    !(rc = gpu_alloc((void **)&e->rowids, n * 8, err, errlen)) &&
	    !(rc = gpu_alloc(&e->smp, e->nsmp * ks, err, errlen)) &&
	    !(rc = ix_plan_upload(&pl, &e->f, err, errlen)) &&
	    !(rc = gpu_alloc((void **)&e->wf, (pl.nw + 1) * 4, err, errlen)) &&
	    !(rc = gpu_upload(e->wf, pl.wf, (pl.nw + 1) * 4, err, errlen)) &&
	    !(rc = gpu_alloc((void **)&e->cm, e->kw, err, errlen)) &&
	    !(rc = gpu_upload(e->cm, cm, e->kw, err, errlen)) &&
	    !(rc = gpu_alloc((void **)&e->cr, e->kw, err, errlen)) &&
	    !(rc = gpu_upload(e->cr, cr, e->kw, err, errlen)) &&
	    !(rc = gpu_alloc((void **)&dbad, 4, err, errlen)) &&
	    !(rc = gpu_memset(dbad, 0, 4, err, errlen))) {
		unsigned g = ix_grid(n, IX_BLOCK);
		if (e->k32) {
			ix_words_k<uint32_t><<<g, IX_BLOCK, 0, s>>>(
			    drec, e->width, n, e->f, e->wf, pl.nw,
			    (uint32_t *)e->keys, e->rowids);
			ix_sorted_k<uint32_t><<<g, IX_BLOCK, 0, s>>>(
			    (uint32_t *)e->keys, n, pl.nw, dbad);
			if (e->nsmp)
				ix_samples_k<uint32_t>
				    <<<(e->nsmp + IX_BLOCK - 1) / IX_BLOCK,
				       IX_BLOCK, 0, s>>>((uint32_t *)e->keys,
							 e->stride, e->nsmp,
							 (uint32_t *)e->smp);
		} else {
			ix_words_k<uint64_t><<<g, IX_BLOCK, 0, s>>>(
			    drec, e->width, n, e->f, e->wf, pl.nw,
			    (uint64_t *)e->keys, e->rowids);
			ix_sorted_k<uint64_t><<<g, IX_BLOCK, 0, s>>>(
			    (uint64_t *)e->keys, n, pl.nw, dbad);
			if (e->nsmp)
				ix_samples_k<uint64_t>
				    <<<(e->nsmp + IX_BLOCK - 1) / IX_BLOCK,
				       IX_BLOCK, 0, s>>>((uint64_t *)e->keys,
							 e->stride, e->nsmp,
							 (uint64_t *)e->smp);
		}
		cudaError_t ce = cudaGetLastError();
		if (ce != cudaSuccess)
			rc = gpu_cuda_fail(ce, "ix_words_k", err, errlen);
		if (!rc)
			rc = gpu_download(&bad, dbad, 4, err, errlen);
		if (!rc && bad)
			rc = gpu_say(err, errlen, GPMDB_CORRUPT,
				     "index %u: the records given for the GPU "
				     "probe are not in key order",
				     e->index_id);
	}
	(void)gpu_free(dbad, NULL, 0);
	ix_plan_free(&pl);
	free(cm);
	free(cr);
	return rc;
}

/* A host buffer for the records of an index: large ones on huge pages
 * where the kernel gives them (fill writes all of it: 4 KiB pages would
 * cost a fault each, 200 thousand for 50M 17-byte records, and as many
 * again to give them back). */
static void *ix_host_alloc(size_t bytes)
{
	void *p = NULL;

	if (bytes < (64u << 20))
		return malloc(bytes ? bytes : 1);
	if (posix_memalign(&p, 2u << 20, bytes))
		return NULL;
	(void)madvise(p, bytes, MADV_HUGEPAGE);
	return p;
}

/* The entry of job, built on a miss; busy until the caller clears it. */
static int ix_entry_get(const stg_ix_probe_job *job, ix_entry **out,
			gpu_ix_probe_stats *st, char *err, size_t errlen)
{
	ix_entry *e = NULL;
	uint8_t *host = NULL, *drec = NULL;
	uint64_t bytes = job->n * job->width;
	ix_xfer x;
	double t0;
	int rc;

	*out = NULL;
	for (int i = 0; i < IX_MAX_ENTRIES; i++) {
		ix_entry *c = &ix_cache[i];
		if (!c->used || c->pool != job->pool ||
		    c->index_id != job->index_id)
			continue;
		if (c->version == job->version && c->n == job->n &&
		    c->kw == job->kw && c->width == job->width) {
			c->lru = ++ix_clock;
			c->busy = true;
			ix_st.hits++;
			st->hit = 1;
			*out = c;
			return GPMDB_OK;
		}
		ix_entry_free(c); /* an older version */
		ix_st.stale++;
	}
	ix_st.misses++;
	for (int i = 0; i < IX_MAX_ENTRIES && !e; i++)
		if (!ix_cache[i].used)
			e = &ix_cache[i];
	if (!e) {
		(void)ix_evict_one();
		for (int i = 0; i < IX_MAX_ENTRIES && !e; i++)
			if (!ix_cache[i].used)
				e = &ix_cache[i];
	}
	if (!e)
		return gpu_say(err, errlen, GPMDB_BUSY,
			       "every GPU index cache entry is in use");
	/* the records, from the caller */
	host = (uint8_t *)ix_host_alloc(bytes);
	if (!host)
		return gpu_say(err, errlen, GPMDB_NOMEM,
			       "out of host memory for %.1f MiB of index "
			       "records",
			       bytes / 1048576.0);
	t0 = ix_now_ms();
	rc = job->fill(job->ctx, host);
	st->fill_ms = ix_now_ms() - t0;
	if (rc) {
		free(host);
		return gpu_say(err, errlen, rc,
			       "index %u: reading its records for the GPU "
			       "failed (%d)",
			       job->index_id, rc);
	}
	t0 = ix_now_ms();
	memset(e, 0, sizeof(*e));
	e->used = true;
	e->busy = true;
	e->pool = job->pool;
	e->index_id = job->index_id;
	e->version = job->version;
	e->n = job->n;
	e->kw = job->kw;
	e->width = job->width;
	e->lru = ++ix_clock;
	rc = gpu_alloc((void **)&drec, bytes, err, errlen);
	if (!rc) {
		ix_xfer_begin(&x, host, bytes);
		rc = ix_up(&x, drec, host, bytes, err, errlen);
		if (!rc)
			rc = gpu_sync(err, errlen);
		ix_xfer_end(&x);
	}
	free(host);
	st->rec_upload_ms = ix_now_ms() - t0;
	if (!rc) {
		ix_st.uploaded += bytes;
		rc = ix_build_words(e, drec, err, errlen);
	}
	(void)gpu_free(drec, NULL, 0);
	if (!rc)
		rc = gpu_sync(err, errlen);
	st->build_ms = ix_now_ms() - t0;
	if (rc) {
		e->bytes = 0; /* not counted in ix_bytes yet */
		ix_entry_free(e);
		return rc;
	}
	ix_bytes += e->bytes;
	*out = e;
	return GPMDB_OK;
}

/* ---- probing -------------------------------------------------------- */

/* Probe q passes when its bits left out of the words equal the records'. */
__device__ __forceinline__ bool
ix_probe_ok(const uint8_t *p, uint32_t kw, const uint8_t *cm, const uint8_t *cr)
{
	for (uint32_t j = 0; j < kw; j++)
		if ((p[j] & cm[j]) != cr[j])
			return false;
	return true;
}

/* One-word keys: the sampled upper level (ns samples, one every stride
 * keys) in shared memory when ns > 0, then the array. */
template <typename K>
__global__ void ix_probe1_k(const K *keys, const int64_t *rowids, uint64_t n,
			    const K *smp, uint32_t ns, uint64_t stride,
			    const uint8_t *probes, uint64_t m, uint32_t kw,
			    const ix_field *f, uint32_t nf, const uint8_t *cm,
			    const uint8_t *cr, int64_t *out)
{
	extern __shared__ unsigned char ix_sh[];
	K *sh = (K *)ix_sh;

	for (uint32_t i = threadIdx.x; i < ns; i += blockDim.x)
		sh[i] = smp[i];
	__syncthreads();
	for (uint64_t q = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x;
	     q < m; q += (uint64_t)gridDim.x * blockDim.x) {
		const uint8_t *p = probes + q * kw;
		uint64_t a = 0, b = n;
		if (!ix_probe_ok(p, kw, cm, cr)) {
			out[q] = -1;
			continue;
		}
		K k = (K)ix_word(p, f, 0, nf);
		if (ns) {
			uint32_t lo = 0, hi = ns;
			while (lo < hi) {
				uint32_t mid = (lo + hi) / 2;
				if (sh[mid] < k)
					lo = mid + 1;
				else
					hi = mid;
			}
			/* smp[lo - 1] < k <= smp[lo] */
			a = lo ? (lo - 1) * stride + 1 : 0;
			b = lo < ns ? lo * stride : n;
		}
		while (a < b) {
			uint64_t mid = (a + b) / 2;
			if (keys[mid] < k)
				a = mid + 1;
			else
				b = mid;
		}
		out[q] = a < n && keys[a] == k ? rowids[a] : -1;
	}
}

/* Keys of any number of words (0 included): a binary search. */
__global__ void ix_probew_k(const uint64_t *keys, const int64_t *rowids,
			    uint64_t n, uint32_t nw, const uint8_t *probes,
			    uint64_t m, uint32_t kw, const ix_field *f,
			    const uint32_t *wf, const uint8_t *cm,
			    const uint8_t *cr, int64_t *out)
{
	for (uint64_t q = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x;
	     q < m; q += (uint64_t)gridDim.x * blockDim.x) {
		const uint8_t *p = probes + q * kw;
		uint64_t a = 0, b = n;
		int c = 1;
		if (!ix_probe_ok(p, kw, cm, cr)) {
			out[q] = -1;
			continue;
		}
		while (a < b) {
			uint64_t mid = (a + b) / 2;
			c = 0;
			for (uint32_t w = 0; w < nw && !c; w++) {
				uint64_t x = keys[w * n + mid],
					 y = ix_word(p, f, wf[w], wf[w + 1]);
				c = x < y ? -1 : x > y;
			}
			if (c < 0)
				a = mid + 1;
			else
				b = mid;
		}
		c = 1;
		if (a < n) {
			c = 0;
			for (uint32_t w = 0; w < nw && !c; w++)
				c = keys[w * n + a] !=
				    ix_word(p, f, wf[w], wf[w + 1]);
		}
		out[q] = !c ? rowids[a] : -1;
	}
}

static int ix_probe_run(const ix_entry *e, const stg_ix_probe_job *job,
			int64_t *rowids, gpu_ix_probe_stats *st, char *err,
			size_t errlen)
{
	cudaStream_t s = gpu_stream();
	uint8_t *dp = NULL;
	int64_t *dout = NULL;
	uint64_t m = job->m;
	ix_xfer x;
	double t0 = ix_now_ms(), t;
	int rc;

	if ((rc = gpu_alloc((void **)&dp, m * job->kw, err, errlen)) ||
	    (rc = gpu_alloc((void **)&dout, m * 8, err, errlen))) {
		(void)gpu_free(dp, NULL, 0);
		return rc;
	}
	ix_xfer_begin(&x, (void *)job->probes, 0);
	rc = ix_up(&x, dp, job->probes, m * job->kw, err, errlen);
	if (!rc)
		rc = gpu_sync(err, errlen);
	t = ix_now_ms();
	st->upload_ms = t - t0;
	t0 = t;
	if (!rc) {
		unsigned g = ix_grid(m, IX_BLOCK);
		uint32_t ns = ix_samples_on ? e->nsmp : 0;
		if (e->nw == 1 && e->k32)
			ix_probe1_k<uint32_t><<<g, IX_BLOCK, ns * 4, s>>>(
			    (const uint32_t *)e->keys, e->rowids, e->n,
			    (const uint32_t *)e->smp, ns, e->stride, dp, m,
			    e->kw, e->f, e->nf, e->cm, e->cr, dout);
		else if (e->nw == 1)
			ix_probe1_k<uint64_t><<<g, IX_BLOCK, ns * 8, s>>>(
			    (const uint64_t *)e->keys, e->rowids, e->n,
			    (const uint64_t *)e->smp, ns, e->stride, dp, m,
			    e->kw, e->f, e->nf, e->cm, e->cr, dout);
		else
			ix_probew_k<<<g, IX_BLOCK, 0, s>>>(
			    (const uint64_t *)e->keys, e->rowids, e->n, e->nw,
			    dp, m, e->kw, e->f, e->wf, e->cm, e->cr, dout);
		cudaError_t ce = cudaGetLastError();
		if (ce != cudaSuccess)
			rc = gpu_cuda_fail(ce, "ix_probe_k", err, errlen);
		if (!rc)
			rc = gpu_sync(err, errlen);
	}
	t = ix_now_ms();
	st->kernel_ms = t - t0;
	t0 = t;
	if (!rc)
		rc = ix_down(&x, rowids, dout, m * 8, err, errlen);
	st->download_ms = ix_now_ms() - t0;
	ix_xfer_end(&x);
	(void)gpu_free(dp, NULL, 0);
	(void)gpu_free(dout, NULL, 0);
	return rc;
}

extern "C" int gpu_ix_probe(const stg_ix_probe_job *job, int64_t *rowids,
			    gpu_ix_probe_stats *st, char *err, size_t errlen)
{
	gpu_ix_probe_stats st0;
	ix_entry *e = NULL;
	double t0 = ix_now_ms();
	int rc;

	ix_pw_wait();
	if (!st)
		st = &st0;
	memset(st, 0, sizeof(*st));
	if (job->width != job->kw + 8)
		return gpu_say(err, errlen, GPMDB_MISUSE,
			       "gpu_ix_probe: width %u is not kw %u + 8",
			       job->width, job->kw);
	if (job->m == 0)
		return GPMDB_OK;
	if (job->n == 0) {
		for (uint64_t i = 0; i < job->m; i++)
			rowids[i] = -1;
		return GPMDB_OK;
	}
	if ((rc = gpu_init(err, errlen)))
		return rc;
	rc = ix_entry_get(job, &e, st, err, errlen);
	if (!rc)
		rc = ix_probe_run(e, job, rowids, st, err, errlen);
	if (e)
		e->busy = false;
	(void)cudaGetLastError();
	st->total_ms = ix_now_ms() - t0;
	return rc;
}

extern "C" int gpu_ix_probe_hook(const stg_ix_probe_job *job, int64_t *rowids,
				 char *why, size_t whylen)
{
	return gpu_ix_probe(job, rowids, NULL, why, whylen);
}
