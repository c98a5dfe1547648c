/*
 * keymatch.cu - a batch of bound keys matched against a cached key column
 * in one pass (keymatch.h).
 *
 * The keys that can match are sorted with their parameter rows (a stable
 * radix sort: a key's parameter rows stay in their order), runs of equal
 * keys become one entry each (the key, the run's last parameter row, its
 * length), and every table row binary-searches its value among them.  The
 * matched rows are compacted in row order, so the result is what the
 * host's hash pass (engine/write/batch.c match_keys) gives: row ids
 * ascending, each with the last parameter row of its key.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cub/cub.cuh>
#include <thrust/iterator/counting_iterator.h>

#include "gpmdb.h"

#include "gpu_internal.h"
#include "keymatch.h"

#define KM_BLOCK 256

static unsigned km_grid(uint64_t n)
{
	return (unsigned)((n + KM_BLOCK - 1) / KM_BLOCK);
}

static double km_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* The keys widened to int64, and whether each can match. */
__global__ void km_keys(const void *keys, uint32_t width, const uint32_t *nulls,
			const uint8_t *skip, uint32_t n, int64_t *k64,
			uint8_t *ok)
{
	uint32_t j = blockIdx.x * blockDim.x + threadIdx.x;

	if (j >= n)
		return;
	k64[j] = width == 4 ? (int64_t)((const int32_t *)keys)[j]
			    : ((const int64_t *)keys)[j];
	ok[j] =
	    !(skip && skip[j]) && !(nulls && (nulls[j >> 5] >> (j & 31) & 1));
}

/* head[i]: 1 where a run of equal sorted keys starts. */
__global__ void km_heads(const int64_t *k, uint32_t m, uint32_t *head)
{
	uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < m)
		head[i] = i == 0 || k[i] != k[i - 1];
}

/* Run u = uid[i] - 1: its key and first position at its head, its last
 * position and last parameter row at its end. */
__global__ void km_runs(const int64_t *k, const uint32_t *j,
			const uint32_t *uid, uint32_t m, int64_t *ukey,
			uint32_t *ustart, uint32_t *uend, uint32_t *ulast)
{
	uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i >= m)
		return;
	uint32_t u = uid[i] - 1;
	if (i == 0 || k[i] != k[i - 1]) {
		ukey[u] = k[i];
		ustart[u] = i;
	}
	if (i == m - 1 || k[i + 1] != k[i]) {
		uend[u] = i;
		ulast[u] = j[i];
	}
}

/* Every table row looks its value up among the *nu run keys: match[r]
 * the run or -1, hit[r] whether it matched, found[u] set for runs that
 * matched, *changes += the run's length per matching row.  No early
 * return: the warp's sum needs all its lanes. */
__global__ void km_probe(gpu_col c, uint32_t nrows, const int64_t *ukey,
			 const uint32_t *nu, const uint32_t *ustart,
			 const uint32_t *uend, int32_t *match, uint8_t *hit,
			 uint8_t *found, unsigned long long *changes)
{
	uint32_t r = blockIdx.x * blockDim.x + threadIdx.x;
	unsigned long long add = 0;

	if (r < nrows) {
		int32_t got = -1;

		if (!(c.nulls && c.nulls[r])) {
			int64_t v =
			    (c.type == BC_COL_INT32 || c.type == BC_COL_DATE)
				? (int64_t)((const int32_t *)c.data)[r]
				: ((const int64_t *)c.data)[r];
			uint32_t lo = 0, hi = *nu;

			while (lo < hi) {
				uint32_t mid = lo + (hi - lo) / 2;
				if (ukey[mid] < v)
					lo = mid + 1;
				else
					hi = mid;
			}
			if (lo < *nu && ukey[lo] == v) {
				got = (int32_t)lo;
				found[lo] = 1;
				add = uend[lo] - ustart[lo] + 1;
			}
		}
		match[r] = got;
		hit[r] = got >= 0;
	}
	for (int o = 16; o > 0; o >>= 1)
		add += __shfl_down_sync(0xffffffffu, add, o);
	if ((threadIdx.x & 31) == 0 && add)
		atomicAdd(changes, add);
}

/* The k-th match: its row id and its key's last parameter row. */
__global__ void km_out(const uint32_t *sel, const uint32_t *nsel,
		       const int32_t *match, const int64_t *rowids,
		       const uint32_t *ulast, uint64_t *orow, int64_t *oprow)
{
	uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;

	if (k >= *nsel)
		return;
	uint32_t r = sel[k];
	orow[k] = rowids ? (uint64_t)rowids[r] : r;
	oprow[k] = ulast[match[r]];
}

/* used[j] of each sorted key's parameter row: whether its run matched. */
__global__ void km_used(const uint32_t *j, const uint32_t *uid, uint32_t m,
			const uint8_t *found, uint8_t *used)
{
	uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < m)
		used[j[i]] = found[uid[i] - 1];
}

/* Device buffers of one call, freed together by gpu_key_match. */
typedef struct km_mem {
	void *p[32];
	int n;
} km_mem;

static int km_get(km_mem *mm, void *out, size_t bytes, char *err, size_t errlen)
{
	void **o = (void **)out;
	int rc;

	*o = NULL;
	if (mm->n == (int)(sizeof(mm->p) / sizeof(mm->p[0])))
		return gpu_say(err, errlen, GPMDB_INTERNAL,
			       "key match: too many buffers");
	/* never 0 bytes: CUB reads a NULL temp pointer as a size query */
	if ((rc = gpu_alloc(o, bytes ? bytes : 16, err, errlen)))
		return rc;
	mm->p[mm->n++] = *o;
	return GPMDB_OK;
}

static int km_run(km_mem *mm, const gpu_keymatch_in *in, uint8_t *used,
		  gpu_keymatch_out *out, char *err, size_t errlen)
{
	cudaStream_t s = gpu_stream();
	uint32_t n = (uint32_t)in->n, nr = (uint32_t)in->nrows, m = 0, nsel = 0;
	uint32_t *cnt, *sj, *sj2, *head, *uid, *ustart, *uend, *ulast, *sel;
	int64_t *k64, *sk, *sk2, *ukey;
	uint8_t *ok, *found, *hit, *dused, *dskip = NULL;
	uint32_t *dnulls = NULL;
	int32_t *match;
	unsigned long long *dchg, chg = 0;
	uint64_t *orow;
	int64_t *oprow;
	void *dkeys, *tmp;
	size_t tb = 0, t1 = 0, t2 = 0, t3 = 0, t4 = 0;
	double t0 = km_now_ms(), tm;
	int rc;
	thrust::counting_iterator<uint32_t> it(0);

	/* the keys up, widened, and which can match */
	if ((rc = km_get(mm, &dkeys, (size_t)n * in->width, err, errlen)) ||
	    (in->nulls && (rc = km_get(mm, &dnulls, ((size_t)n + 31) / 32 * 4,
				       err, errlen))) ||
	    (in->skip && (rc = km_get(mm, &dskip, n, err, errlen))) ||
	    (rc = km_get(mm, &k64, 8 * (size_t)n, err, errlen)) ||
	    (rc = km_get(mm, &ok, n, err, errlen)) ||
	    (rc = km_get(mm, &cnt, 8, err, errlen)))
		return rc;
	/* through the pinned staging buffers (made at open by the GPU's
	 * setup thread): from pageable memory the 20 MB of 2.5M BIGINT
	 * keys took 2.3-3.3 ms */
	if ((rc = gpu_upload_staged(dkeys, in->keys, (size_t)n * in->width, err,
				    errlen)))
		return rc;
	if (dnulls)
		GPU_TRY(cudaMemcpyAsync(dnulls, in->nulls,
					((size_t)n + 31) / 32 * 4,
					cudaMemcpyHostToDevice, s));
	if (dskip)
		GPU_TRY(cudaMemcpyAsync(dskip, in->skip, n,
					cudaMemcpyHostToDevice, s));
	km_keys<<<km_grid(n), KM_BLOCK, 0, s>>>(dkeys, in->width, dnulls, dskip,
						n, k64, ok);
	GPU_TRY(cudaGetLastError());
	GPU_TRY(cudaStreamSynchronize(s));
	tm = km_now_ms();
	out->upload_ms = tm - t0;
	t0 = tm;

	/* the keys that can match, with their parameter rows, sorted */
	if ((rc = km_get(mm, &sk, 8 * (size_t)n, err, errlen)) ||
	    (rc = km_get(mm, &sk2, 8 * (size_t)n, err, errlen)) ||
	    (rc = km_get(mm, &sj, 4 * (size_t)n, err, errlen)) ||
	    (rc = km_get(mm, &sj2, 4 * (size_t)n, err, errlen)) ||
	    (rc = km_get(mm, &head, 4 * (size_t)n, err, errlen)) ||
	    (rc = km_get(mm, &uid, 4 * (size_t)n, err, errlen)))
		return rc;
	GPU_TRY(
	    cub::DeviceSelect::Flagged(NULL, t1, k64, ok, sk, cnt, (int)n, s));
	GPU_TRY(
	    cub::DeviceSelect::Flagged(NULL, t2, it, ok, sj, cnt, (int)n, s));
	GPU_TRY(cub::DeviceRadixSort::SortPairs(NULL, t3, sk, sk2, sj, sj2,
						(int)n, 0, 64, s));
	GPU_TRY(cub::DeviceScan::InclusiveSum(NULL, t4, head, uid, (int)n, s));
	tb = t1 > t2 ? t1 : t2;
	tb = tb > t3 ? tb : t3;
	tb = tb > t4 ? tb : t4;
	if ((rc = km_get(mm, &tmp, tb, err, errlen)))
		return rc;
	GPU_TRY(
	    cub::DeviceSelect::Flagged(tmp, t1, k64, ok, sk, cnt, (int)n, s));
	GPU_TRY(
	    cub::DeviceSelect::Flagged(tmp, t2, it, ok, sj, cnt, (int)n, s));
	GPU_TRY(cudaMemcpyAsync(&m, cnt, 4, cudaMemcpyDeviceToHost, s));
	GPU_TRY(cudaStreamSynchronize(s));
	if (used)
		memset(used, 0, in->n);
	if (m == 0) {
		out->sort_ms = km_now_ms() - t0;
		return GPMDB_OK; /* no key can match */
	}
	t3 = tb;
	GPU_TRY(cub::DeviceRadixSort::SortPairs(tmp, t3, sk, sk2, sj, sj2,
						(int)m, 0, 64, s));
	km_heads<<<km_grid(m), KM_BLOCK, 0, s>>>(sk2, m, head);
	GPU_TRY(cudaGetLastError());
	t4 = tb;
	GPU_TRY(cub::DeviceScan::InclusiveSum(tmp, t4, head, uid, (int)m, s));
	/* the runs reuse the buffers the sort is done with */
	ukey = sk;
	ustart = sj;
	uend = head;
	if ((rc = km_get(mm, &ulast, 4 * (size_t)m, err, errlen)) ||
	    (rc = km_get(mm, &found, m, err, errlen)) ||
	    (rc = km_get(mm, &dchg, 8, err, errlen)))
		return rc;
	/* head is read by km_heads' scan only: uend may take its place
	 * once the scan is done (same stream) */
	km_runs<<<km_grid(m), KM_BLOCK, 0, s>>>(sk2, sj2, uid, m, ukey, ustart,
						uend, ulast);
	GPU_TRY(cudaGetLastError());
	GPU_TRY(cudaMemsetAsync(found, 0, m, s));
	GPU_TRY(cudaMemsetAsync(dchg, 0, 8, s));
	GPU_TRY(cudaStreamSynchronize(s));
	tm = km_now_ms();
	out->sort_ms = tm - t0;
	t0 = tm;

	/* one pass over the table's rows, the matches compacted in order */
	if ((rc = km_get(mm, &match, 4 * (size_t)nr, err, errlen)) ||
	    (rc = km_get(mm, &hit, nr, err, errlen)) ||
	    (rc = km_get(mm, &sel, 4 * (size_t)nr, err, errlen)))
		return rc;
	if (nr) {
		km_probe<<<km_grid(nr), KM_BLOCK, 0, s>>>(
		    in->col, nr, ukey, uid + (m - 1), ustart, uend, match, hit,
		    found, dchg);
		GPU_TRY(cudaGetLastError());
		size_t t5 = 0;
		GPU_TRY(cub::DeviceSelect::Flagged(NULL, t5, it, hit, sel, cnt,
						   (int)nr, s));
		if (t5 > tb) {
			if ((rc = km_get(mm, &tmp, t5, err, errlen)))
				return rc;
			tb = t5;
		}
		t5 = tb;
		GPU_TRY(cub::DeviceSelect::Flagged(tmp, t5, it, hit, sel, cnt,
						   (int)nr, s));
		GPU_TRY(
		    cudaMemcpyAsync(&nsel, cnt, 4, cudaMemcpyDeviceToHost, s));
		GPU_TRY(cudaStreamSynchronize(s));
	}
	/* the matches' row ids and parameter rows; which parameter rows
	 * matched */
	if (in->keep) {
		/* the caller's: gpu_key_match frees them on an error */
		if ((rc = gpu_alloc((void **)&out->drowid, 8 * (size_t)nsel + 8,
				    err, errlen)) ||
		    (rc = gpu_alloc((void **)&out->dprow, 8 * (size_t)nsel + 8,
				    err, errlen)))
			return rc;
		orow = out->drowid;
		oprow = out->dprow;
	} else if ((rc = km_get(mm, &orow, 8 * (size_t)nsel, err, errlen)) ||
		   (rc = km_get(mm, &oprow, 8 * (size_t)nsel, err, errlen)))
		return rc;
	if ((rc = km_get(mm, &dused, n, err, errlen)))
		return rc;
	if (nsel) {
		km_out<<<km_grid(nsel), KM_BLOCK, 0, s>>>(
		    sel, cnt, match, in->rowids, ulast, orow, oprow);
		GPU_TRY(cudaGetLastError());
	}
	if (used) {
		GPU_TRY(cudaMemsetAsync(dused, 0, n, s));
		km_used<<<km_grid(m), KM_BLOCK, 0, s>>>(sj2, uid, m, found,
							dused);
		GPU_TRY(cudaGetLastError());
	}
	GPU_TRY(cudaStreamSynchronize(s));
	tm = km_now_ms();
	out->probe_ms = tm - t0;
	t0 = tm;

	if (in->keep && nsel) {
		/* the rows are in row order, each once: strictly increasing */
		GPU_TRY(cudaMemcpyAsync(&out->rng[0], orow, 8,
					cudaMemcpyDeviceToHost, s));
		GPU_TRY(cudaMemcpyAsync(&out->rng[1], orow + nsel - 1, 8,
					cudaMemcpyDeviceToHost, s));
		out->rng[2] = 1;
	} else if (!in->keep) {
		out->rowid = (uint64_t *)malloc(8 * (size_t)nsel + 8);
		out->prow = (int64_t *)malloc(8 * (size_t)nsel + 8);
		if (!out->rowid || !out->prow)
			return gpu_say(err, errlen, GPMDB_NOMEM,
				       "out of memory");
		GPU_TRY(cudaMemcpyAsync(out->rowid, orow, 8 * (size_t)nsel,
					cudaMemcpyDeviceToHost, s));
		GPU_TRY(cudaMemcpyAsync(out->prow, oprow, 8 * (size_t)nsel,
					cudaMemcpyDeviceToHost, s));
	}
	if (used)
		GPU_TRY(
		    cudaMemcpyAsync(used, dused, n, cudaMemcpyDeviceToHost, s));
	GPU_TRY(cudaMemcpyAsync(&chg, dchg, 8, cudaMemcpyDeviceToHost, s));
	GPU_TRY(cudaStreamSynchronize(s));
	out->n = nsel;
	out->changes = (long long)chg;
	out->download_ms = km_now_ms() - t0;
	return GPMDB_OK;
}

extern "C" int gpu_key_match(const gpu_keymatch_in *in, uint8_t *used,
			     gpu_keymatch_out *out, char *err, size_t errlen)
{
	km_mem mm;
	int rc;
	bool narrow =
	    in->col.type == BC_COL_INT32 || in->col.type == BC_COL_DATE;
	bool wide = in->col.type == BC_COL_INT64 || in->col.type == BC_COL_DEC;

	memset(out, 0, sizeof(*out));
	mm.n = 0;
	if (!((in->width == 4 && narrow) || (in->width == 8 && wide)))
		return gpu_say(err, errlen, GPMDB_UNSUPPORTED,
			       "key match: keys of %u bytes against a column "
			       "of type %d",
			       in->width, in->col.type);
	if (in->n > INT32_MAX || in->nrows > INT32_MAX)
		return gpu_say(err, errlen, GPMDB_TOOBIG,
			       "key match: %llu keys, %llu rows: at most "
			       "2147483647 each",
			       (unsigned long long)in->n,
			       (unsigned long long)in->nrows);
	if ((rc = gpu_init(err, errlen)))
		return rc;
	if (in->n == 0 && in->keep) {
		rc = GPMDB_OK;
	} else if (in->n == 0) {
		out->rowid = (uint64_t *)malloc(8);
		out->prow = (int64_t *)malloc(8);
		if (!out->rowid || !out->prow)
			rc = gpu_say(err, errlen, GPMDB_NOMEM, "out of memory");
	} else {
		rc = km_run(&mm, in, used, out, err, errlen);
	}
	/* an error leaves queued work behind: let it finish before the
	 * buffers go back to the pool */
	if (rc)
		cudaStreamSynchronize(gpu_stream());
	for (int i = mm.n - 1; i >= 0; i--)
		gpu_free(mm.p[i], NULL, 0);
	if (rc) {
		free(out->rowid);
		free(out->prow);
		gpu_free(out->drowid, NULL, 0);
		gpu_free(out->dprow, NULL, 0);
		memset(out, 0, sizeof(*out));
	} else if (!out->rowid && !in->keep) { /* no key could match */
		out->rowid = (uint64_t *)malloc(8);
		out->prow = (int64_t *)malloc(8);
		if (!out->rowid || !out->prow) {
			free(out->rowid);
			free(out->prow);
			memset(out, 0, sizeof(*out));
			return gpu_say(err, errlen, GPMDB_NOMEM,
				       "out of memory");
		}
	}
	return rc;
}

/* dst[i] = src[prow[i]] (width bytes), the NULL bits likewise, a warp's
 * 32 bits made by one ballot (blocks are whole warps). */
__global__ void km_gather(const char *src, const uint32_t *snul, uint32_t w,
			  const int64_t *prow, uint32_t m, char *dst,
			  uint32_t *dnul, unsigned *anynull)
{
	uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
	bool isnull = false;

	if (i < m) {
		uint64_t r = (uint64_t)prow[i];

		switch (w) {
		case 1:
			dst[i] = src[r];
			break;
		case 2:
			((uint16_t *)dst)[i] = ((const uint16_t *)src)[r];
			break;
		case 4:
			((uint32_t *)dst)[i] = ((const uint32_t *)src)[r];
			break;
		default:
			((uint64_t *)dst)[i] = ((const uint64_t *)src)[r];
		}
		isnull = snul && (snul[r >> 5] >> (r & 31) & 1);
	}
	if (!snul)
		return;
	uint32_t bits = __ballot_sync(0xffffffffu, isnull);
	if ((threadIdx.x & 31) == 0 && i < m) {
		dnul[i >> 5] = bits;
		if (bits)
			atomicOr(anynull, 1u);
	}
}

static int kg_run(km_mem *mm, const void *vals, const uint32_t *nulls,
		  uint64_t n, uint32_t w, const int64_t *dprow, uint32_t m,
		  void *dv, uint32_t *dnl, bool *anynull, char *err,
		  size_t errlen)
{
	cudaStream_t s = gpu_stream();
	void *dsrc;
	uint32_t *dsn = NULL;
	unsigned *dany, any = 0;
	int rc;

	if ((rc = km_get(mm, &dsrc, (size_t)n * w, err, errlen)) ||
	    (nulls &&
	     (rc = km_get(mm, &dsn, ((size_t)n + 31) / 32 * 4, err, errlen))) ||
	    (rc = km_get(mm, &dany, 4, err, errlen)))
		return rc;
	if ((rc = gpu_upload_staged(dsrc, vals, (size_t)n * w, err, errlen)))
		return rc; /* staged: as the keys (km_match) */
	if (dsn)
		GPU_TRY(cudaMemcpyAsync(dsn, nulls, ((size_t)n + 31) / 32 * 4,
					cudaMemcpyHostToDevice, s));
	GPU_TRY(cudaMemsetAsync(dany, 0, 4, s));
	if (m) {
		km_gather<<<km_grid(m), KM_BLOCK, 0, s>>>(
		    (const char *)dsrc, dsn, w, dprow, m, (char *)dv, dnl,
		    dany);
		GPU_TRY(cudaGetLastError());
	}
	GPU_TRY(cudaMemcpyAsync(&any, dany, 4, cudaMemcpyDeviceToHost, s));
	GPU_TRY(cudaStreamSynchronize(s));
	*anynull = any != 0;
	return GPMDB_OK;
}

extern "C" int gpu_key_gather(const void *vals, const uint32_t *nulls,
			      uint64_t n, uint32_t width, const int64_t *dprow,
			      uint64_t m, void **dv, uint32_t **dnl, char *err,
			      size_t errlen)
{
	km_mem mm;
	bool anynull = false;
	int rc;

	*dv = NULL;
	*dnl = NULL;
	mm.n = 0;
	if (width != 1 && width != 2 && width != 4 && width != 8)
		return gpu_say(err, errlen, GPMDB_UNSUPPORTED,
			       "key gather: values of %u bytes", width);
	if (m > INT32_MAX || n > INT32_MAX)
		return gpu_say(err, errlen, GPMDB_TOOBIG,
			       "key gather: %llu of %llu rows",
			       (unsigned long long)m, (unsigned long long)n);
	if ((rc = gpu_init(err, errlen)) ||
	    (rc = gpu_alloc(dv, (size_t)m * width + 8, err, errlen)) ||
	    (nulls &&
	     (rc = gpu_alloc((void **)dnl, ((size_t)m + 31) / 32 * 4 + 4, err,
			     errlen))))
		goto out;
	rc = kg_run(&mm, vals, nulls, n, width, dprow, (uint32_t)m, *dv, *dnl,
		    &anynull, err, errlen);
out:
	if (rc)
		cudaStreamSynchronize(gpu_stream());
	for (int i = mm.n - 1; i >= 0; i--)
		gpu_free(mm.p[i], NULL, 0);
	if (rc || !anynull) {
		gpu_free(*dnl, NULL, 0);
		*dnl = NULL;
	}
	if (rc) {
		gpu_free(*dv, NULL, 0);
		*dv = NULL;
	}
	return rc;
}
