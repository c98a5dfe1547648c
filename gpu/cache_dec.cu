/*
 * cache_dec.cu - the column cache's decode kernel (cache_dec.h): frame of
 * reference fields and dictionary codes expanded in HBM, deleted rows
 * left out, NULL bits made bytes.
 *
 * One thread a physical row, threads of a warp on the rows of one 32-bit
 * bitmap word: a thread finds its place among the live rows from that
 * word alone (the live rows before the word, pre or counted from lo,
 * plus the live bits below its own), so packed bytes are read once and
 * values are written once, in order.  A field is at most two aligned
 * 64-bit loads (bits 0..64, layout.h "Encodings").
 */
#include "gpmdb.h"

#include "cache_dec.h"
#include "gpu_internal.h"

#define GC_DEC_THREADS 256
/* blocks per job and launch (a grid-stride loop covers more rows) */
#define GC_DEC_BLOCKS 1024u

static __device__ __forceinline__ uint64_t gc_field(const uint64_t *wd,
						    uint64_t p, uint32_t bits)
{
	uint64_t v;
	uint32_t sh = (uint32_t)(p & 63);

	if (bits == 0)
		return 0;
	v = wd[p >> 6] >> sh;
	if (sh && sh + bits > 64)
		v |= wd[(p >> 6) + 1] << (64 - sh);
	return bits == 64 ? v : v & ((1ull << bits) - 1);
}

__global__ void gc_dec_k(const gc_dec_job *jobs, const char *scr, char *out,
			 uint8_t *onul, uint32_t w)
{
	const gc_dec_job *j = &jobs[blockIdx.y];
	const uint64_t a = j->lo & ~31u;
	const uint64_t span = (((uint64_t)j->hi + 31) & ~31ull) - a;
	const uint32_t *del =
	    j->del == GC_DEC_NONE ? NULL : (const uint32_t *)(scr + j->del);
	const uint32_t *nb =
	    j->nul == GC_DEC_NONE ? NULL : (const uint32_t *)(scr + j->nul);
	const uint32_t *pre =
	    j->pre == GC_DEC_NONE ? NULL : (const uint32_t *)(scr + j->pre);
	const uint64_t *wd = (const uint64_t *)(scr + j->words);

	for (uint64_t t = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
	     t < span; t += (uint64_t)gridDim.x * blockDim.x) {
		uint64_t i = a + t, w0 = i & ~31ull;
		uint32_t wj = (uint32_t)(t >> 5), lane = (uint32_t)(t & 31);
		uint32_t m = 0xffffffffu;

		/* the rows of this word inside [lo, hi), less deleted ones */
		if (w0 < j->lo)
			m &= 0xffffffffu << (j->lo - w0);
		if (w0 + 32 > j->hi)
			m &= (1u << (uint32_t)(j->hi - w0)) - 1;
		if (del)
			m &= ~del[wj];
		if (!(m >> lane & 1))
			continue;
		uint64_t k = j->out + __popc(m & ((1u << lane) - 1)) +
			     (pre ? pre[wj] : (w0 > j->lo ? w0 - j->lo : 0));
		bool isnull = nb && (nb[wj] >> lane & 1);
		uint64_t v = gc_field(wd, i * j->bits - j->bitsub, j->bits);

		if (onul)
			onul[k] = isnull;
		if (j->kind == GC_DEC_DICT) {
			gpu_str s = {j->toff, 0};
			if (!isnull && v < j->dict_n)
				s = ((const gpu_str *)(scr + j->dict))[v];
			((gpu_str *)out)[k] = s;
			continue;
		}
		v += j->base; /* the frame; the width's low bytes are kept */
		switch (w) {
		case 1:
			((uint8_t *)out)[k] = (uint8_t)v;
			break;
		case 2:
			((uint16_t *)out)[k] = (uint16_t)v;
			break;
		case 4:
			((uint32_t *)out)[k] = (uint32_t)v;
			break;
		default:
			((uint64_t *)out)[k] = v;
		}
	}
}

extern "C" int gpu_cache_decode(const gc_dec_job *jobs, uint32_t n,
				uint32_t most_rows, const void *scr, void *out,
				uint8_t *nul, uint32_t w, char *err,
				size_t errlen)
{
	uint64_t blocks =
	    ((uint64_t)most_rows + 32 + GC_DEC_THREADS - 1) / GC_DEC_THREADS;

	if (n == 0 || most_rows == 0)
		return GPMDB_OK;
	if (n > 65535u || (w != 1 && w != 2 && w != 4 && w != 8))
		return gpu_say(err, errlen, GPMDB_INTERNAL,
			       "gpu_cache_decode: %u jobs of width %u", n, w);
	dim3 grid((unsigned)(blocks < GC_DEC_BLOCKS ? blocks : GC_DEC_BLOCKS),
		  n);
	gc_dec_k<<<grid, GC_DEC_THREADS, 0, gpu_stream()>>>(
	    jobs, (const char *)scr, (char *)out, nul, w);
	GPU_TRY(cudaGetLastError());
	return GPMDB_OK;
}
