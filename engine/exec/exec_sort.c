/*
 * exec_sort.c - the sort of one numeric key and the gather of sorted
 * rows, on all threads.
 *
 * exec_radix_sort orders (key, rank, row) triples by rank, then key, then
 * their order in the array (stable): a least-significant-digit radix sort,
 * 8 bits a pass.  Each pass, every thread counts the digits of its
 * contiguous share; a digit equal in every key is skipped; the threads
 * then write their shares in thread order into each digit's place, so
 * the order of equal digits is kept.  A full ORDER BY of 10M doubles took
 * glibc's merge sort (a memcpy per move) and a one-thread final merge.
 */
#include "../engine.h"
#include "exec_int.h"

#include <omp.h>
#include <stdlib.h>
#include <string.h>

#define RADIX_BITS 8
#define RADIX_N	   (1u << RADIX_BITS)
/* the key's 8 digits, then the rank */
#define RADIX_PASSES (64 / RADIX_BITS + 1)

/* Inputs from this many rows run on all threads. */
#define RADIX_PAR_MIN 65536

static inline unsigned radix_digit(const exec_sortkey *e, int d)
{
	return d < 64 / RADIX_BITS
		   ? (unsigned)(e->key >> (d * RADIX_BITS)) & (RADIX_N - 1)
		   : e->rank;
}

/* The threads' digit counts cnt[thread][digit] become each thread's first
 * place per digit: digits in order, threads in order within a digit.
 * true: one digit holds all n (the pass changes nothing). */
static bool radix_places(uint64_t *cnt, int nt, uint64_t n)
{
	uint64_t s = 0;
	bool one = false;

	for (unsigned x = 0; x < RADIX_N; x++) {
		uint64_t all = 0;
		for (int u = 0; u < nt; u++) {
			uint64_t *c = &cnt[(size_t)u * RADIX_N + x];
			uint64_t k = *c;
			*c = s;
			s += k;
			all += k;
		}
		one |= all == n;
	}
	return one;
}

bool exec_radix_sort(exec_sortkey *a, uint64_t n)
{
	int nt = n >= RADIX_PAR_MIN ? omp_get_max_threads() : 1;
	exec_sortkey *tmp, *src = a, *dst;
	uint64_t *cnt;

	if (n < 2)
		return true;
	if (nt < 1)
		nt = 1;
	tmp = malloc(n * sizeof(*a));
	cnt = malloc((size_t)nt * RADIX_N * sizeof(*cnt));
	if (!tmp || !cnt) {
		free(tmp);
		free(cnt);
		return false;
	}
	dst = tmp;
	for (int d = 0; d < RADIX_PASSES; d++) {
		bool skip = false;
#pragma omp parallel num_threads(nt)
		{
			int t = omp_get_thread_num(),
			    tn = omp_get_num_threads();
			uint64_t lo = n * (uint64_t)t / (uint64_t)tn,
				 hi = n * (uint64_t)(t + 1) / (uint64_t)tn;
			uint64_t *h = cnt + (size_t)t * RADIX_N;
			memset(h, 0, RADIX_N * sizeof(*h));
			for (uint64_t i = lo; i < hi; i++)
				h[radix_digit(&src[i], d)]++;
#pragma omp barrier
#pragma omp single
			skip = radix_places(cnt, tn, n);
			/* the single's implied barrier publishes skip */
			if (!skip)
				for (uint64_t i = lo; i < hi; i++) {
					exec_sortkey e = src[i];
					dst[h[radix_digit(&e, d)]++] = e;
				}
		}
		if (!skip) {
			exec_sortkey *sw = src;
			src = dst;
			dst = sw;
		}
	}
	if (src != a) {
#pragma omp parallel for num_threads(nt) schedule(static)
		for (uint64_t i = 0; i < n; i++)
			a[i] = src[i];
	}
	free(tmp);
	free(cnt);
	return true;
}

/* Rows idx[0..m) of column s into d from row o: a typed copy (the width
 * known to the compiler, no call per value). */
static void gather_col(rcol *d, const rcol *s, size_t w, bool any_null,
		       const uint32_t *idx, uint64_t o, uint64_t a, uint64_t z)
{
#define GATHER_W(T)                                                            \
	do {                                                                   \
		T *dd = (T *)d->data + o;                                      \
		const T *ss = (const T *)s->data;                              \
		for (uint64_t k = a; k < z; k++)                               \
			dd[k] = ss[idx[k]];                                    \
	} while (0)
	switch (w) {
	case 1:
		GATHER_W(uint8_t);
		break;
	case 4:
		GATHER_W(uint32_t);
		break;
	case 8:
		GATHER_W(uint64_t);
		break;
	default:
		for (uint64_t k = a; k < z; k++)
			memcpy((char *)d->data + (o + k) * w,
			       (const char *)s->data + idx[k] * w, w);
	}
#undef GATHER_W
	if (!any_null) {
		if (z > a)
			memset(d->nulls + o + a, 0, z - a);
		return;
	}
	for (uint64_t k = a; k < z; k++)
		d->nulls[o + k] = s->nulls[idx[k]];
}

/* Whether one of n NULL flags is set (a sequential read, instead of a
 * gather of each row's flag). */
static bool nulls_any(const uint8_t *nl, uint64_t n)
{
	uint8_t any = 0;

	for (uint64_t i = 0; i < n; i++)
		any |= nl[i];
	return any != 0;
}

int exec_gather_rows(rel *dst, const rel *src, const uint32_t *idx, uint64_t m)
{
	uint64_t o = dst->nrows;
	int nt = m >= RADIX_PAR_MIN ? omp_get_max_threads() : 1, rc;

	if ((rc = rel_reserve(dst, m)))
		return rc;
	for (int c = 0; c < dst->ncols; c++) {
		const rcol *s = &src->cols[c];
		rcol *d = &dst->cols[c];
		size_t w = rel_width(d->ty.t);
		if (d->ty.t != BC_T_TEXT) {
			/* scanned when the gather reads most rows anyway */
			bool any = 4 * m < src->nrows ||
				   nulls_any(s->nulls, src->nrows);
#pragma omp parallel num_threads(nt)
			{
				int t = omp_get_thread_num(),
				    tn = omp_get_num_threads();
				gather_col(d, s, w, any, idx, o,
					   m * (uint64_t)t / (uint64_t)tn,
					   m * (uint64_t)(t + 1) /
					       (uint64_t)tn);
			}
			continue;
		}
		/* text: copied into dst's own strings, one thread */
		for (uint64_t k = 0; k < m; k++) {
			uint64_t i = idx[k];
			d->nulls[o + k] = s->nulls[i];
			if (s->nulls[i]) {
				((vec_str *)d->data)[o + k] = (vec_str){0};
				continue;
			}
			vec_str v = ((vec_str *)s->data)[i];
			if ((rc = rel_str(dst, v.ptr, v.len,
					  &((vec_str *)d->data)[o + k])))
				return rc;
		}
	}
	dst->nrows += m;
	return GPMDB_OK;
}
