/*
 * test_index_gpu.c - the bulk sort and probe of index entries on the GPU
 * (gpu/index_gpu.h, docs/gpu.md "Index sort and probe on the GPU"), on a
 * machine with a GPU (make test-gpu).
 *
 * Records as storage makes them (storage.h "Indexes"): kw key bytes
 * compared with memcmp (INT keys: a tag byte, then the value big-endian
 * with its sign bit flipped; TEXT-like keys: a tag, letters, zero
 * padding), then the row id, 8 bytes little-endian.  gpu_ix_sort must
 * equal qsort by (key bytes, row id as a number); gpu_ix_probe must equal
 * a binary search for the first record of each key.  Widths 17, 26 and
 * 40, duplicates, n = 0, 1, 1000 and 5M, every transfer mode, the cache
 * (hits, versions, limit, records out of order).
 *
 * Then a timing printout, not an assertion (GPMDB_IX_BENCH_ROWS, default
 * 50M; 0 skips it): the sort of 50M 17-byte records against a 16-thread
 * CPU merge sort, 2.5M probes over them against a CPU binary search, and
 * the sizes where the GPU starts to win (the hooks' thresholds).
 */
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "harness.h"

#include "gpmdb.h"

#include "../gpu/gpu.h"
#include "../gpu/index_gpu.h"

static char err[1024];
static int have_gpu;

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static uint64_t rng_state = 0x1234567887654321ull;

static uint64_t rnd(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* splitmix of i: data generated in parallel */
static uint64_t hash64(uint64_t i)
{
	uint64_t z = i * 0x9e3779b97f4a7c15ull + 0x7f4a7c159e3779b9ull;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* ---- records -------------------------------------------------------- */

static void put_int(uint8_t *p, int null, int64_t v)
{
	uint64_t u = (uint64_t)v ^ (1ull << 63);

	p[0] = null ? 0 : 1;
	for (int i = 0; i < 8; i++)
		p[1 + i] = null ? 0 : (uint8_t)(u >> (56 - 8 * i));
}

static void put_rowid(uint8_t *p, uint64_t r)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(r >> (8 * i));
}

static uint64_t get_rowid(const uint8_t *p)
{
	uint64_t r = 0;

	for (int i = 7; i >= 0; i--)
		r = r << 8 | p[i];
	return r;
}

/* 0: width 17's keys are non-negative, never NULL (the benchmark's
 * id column) */
static int gen_signed = 1;

/* Record i's key for width 17 (one INT), 26 (two INTs) or 40 (a text
 * of 31 bytes); range: distinct values about (duplicates below it). */
static void make_key(uint8_t *p, uint32_t width, uint64_t h, uint64_t range)
{
	uint32_t kw = width - 8;

	memset(p, 0, kw);
	if (kw == 0)
		return;
	if (width == 17 && !gen_signed) {
		put_int(p, 0, (int64_t)(h % range));
	} else if (width == 17) {
		put_int(p, h % 101 == 0,
			(int64_t)(h % range) - (int64_t)(range / 2));
	} else if (width == 26) {
		put_int(p, h % 97 == 0, (int64_t)((h >> 8) % (range / 8 + 1)));
		put_int(p + 9, h % 89 == 0, -(int64_t)((h >> 24) % 9));
	} else {
		uint64_t v = h % range;
		uint32_t len = 1 + (uint32_t)((h >> 40) % (kw - 1));
		p[0] = (h >> 20) % 53 == 0 ? 0 : 1;
		for (uint32_t i = 0; p[0] && i < len; i++) {
			p[1 + i] = (uint8_t)('a' + v % 3);
			v /= 3;
		}
	}
}

/* n records, row ids i (or random 64-bit ones when bigrid). */
static uint8_t *make_recs(uint64_t n, uint32_t width, uint64_t range,
			  int bigrid, uint64_t seed)
{
	uint8_t *r = malloc(n * width + 1);

#pragma omp parallel for schedule(static)
	for (int64_t i = 0; i < (int64_t)n; i++) {
		uint64_t h = hash64((uint64_t)i ^ seed);
		uint8_t *p = r + (uint64_t)i * width;
		make_key(p, width, h, range);
		/* row ids are below 2^63 (rowids[] are int64_t) */
		put_rowid(p + width - 8, bigrid ? hash64(h) >> 1 : (uint64_t)i);
	}
	return r;
}

/* ---- the CPU's order ------------------------------------------------ */

typedef struct {
	uint32_t width, cmp;
} ord;

static int rec_cmp(const void *a, const void *b, void *arg)
{
	const ord *o = arg;
	int c = memcmp(a, b, o->cmp);

	if (c || o->width - o->cmp < 8)
		return c;
	uint64_t x = get_rowid((const uint8_t *)a + o->width - 8),
		 y = get_rowid((const uint8_t *)b + o->width - 8);
	return x < y ? -1 : x > y;
}

/* A 16-thread (all cores) merge sort: runs sorted by qsort_r in
 * parallel, then merged pairwise in parallel. */
static void cpu_sort(uint8_t *recs, uint64_t n, uint32_t width, uint32_t cmp)
{
	ord o = {width, cmp};
	int T = 1;
	uint64_t *b;
	uint8_t *tmp, *src = recs, *dst;

	while (T < omp_get_max_threads())
		T *= 2;
	if (n < 4096)
		T = 1;
	b = malloc((T + 1) * sizeof(uint64_t));
	for (int i = 0; i <= T; i++)
		b[i] = n * i / T;
#pragma omp parallel for schedule(dynamic, 1)
	for (int i = 0; i < T; i++)
		qsort_r(recs + b[i] * width, b[i + 1] - b[i], width, rec_cmp,
			&o);
	if (T == 1) {
		free(b);
		return;
	}
	tmp = malloc(n * width + 1);
	dst = tmp;
	for (int run = 1; run < T; run *= 2) {
#pragma omp parallel for schedule(dynamic, 1)
		for (int k = 0; k < T; k += 2 * run) {
			uint64_t i = b[k], ie = b[k + run], j = b[k + run],
				 je = b[k + 2 * run], d = b[k];
			while (i < ie && j < je) {
				if (rec_cmp(src + j * width, src + i * width,
					    &o) < 0)
					memcpy(dst + d++ * width,
					       src + j++ * width, width);
				else
					memcpy(dst + d++ * width,
					       src + i++ * width, width);
			}
			memcpy(dst + d * width, src + i * width,
			       (ie - i) * width);
			d += ie - i;
			memcpy(dst + d * width, src + j * width,
			       (je - j) * width);
		}
		uint8_t *t = src;
		src = dst;
		dst = t;
	}
	if (src != recs)
		memcpy(recs, src, n * width);
	free(tmp);
	free(b);
}

/* The first record whose first kw bytes equal p: its row id, or -1. */
static int64_t cpu_probe1(const uint8_t *recs, uint64_t n, uint32_t width,
			  uint32_t kw, const uint8_t *p)
{
	uint64_t a = 0, b = n;

	while (a < b) {
		uint64_t m = (a + b) / 2;
		if (memcmp(recs + m * width, p, kw) < 0)
			a = m + 1;
		else
			b = m;
	}
	if (a < n && !memcmp(recs + a * width, p, kw))
		return (int64_t)get_rowid(recs + a * width + width - 8);
	return -1;
}

static void cpu_probe(const uint8_t *recs, uint64_t n, uint32_t width,
		      const uint8_t *probes, uint64_t m, int64_t *out,
		      int threads)
{
	uint32_t kw = width - 8;

#pragma omp parallel for schedule(static) num_threads(threads)
	for (int64_t i = 0; i < (int64_t)m; i++)
		out[i] = cpu_probe1(recs, n, width, kw, probes + i * kw);
}

/* ---- sort cases ------------------------------------------------------ */

static int same_order(const uint8_t *a, const uint8_t *b, uint64_t n,
		      uint32_t width)
{
	for (uint64_t i = 0; i < n; i++)
		if (memcmp(a + i * width, b + i * width, width)) {
			fprintf(stderr, "# first difference at record %llu\n",
				(unsigned long long)i);
			return 0;
		}
	return 1;
}

/* gpu_ix_sort of n random records equals the CPU's order. */
static void sort_case(uint64_t n, uint32_t width, uint32_t cmp, uint64_t range,
		      int bigrid)
{
	uint8_t *a = make_recs(n ? n : 1, width, range, bigrid, n * 31 + width);
	uint8_t *b = malloc(n * width + 1);
	gpu_ix_sort_stats st;
	int rc;

	memcpy(b, a, n * width);
	cpu_sort(b, n, width, cmp);
	rc = gpu_ix_sort(a, n, width, cmp, &st, err, sizeof(err));
	CHECKF(rc == GPMDB_OK, "n %llu width %u: %d %s", (unsigned long long)n,
	       width, rc, err);
	CHECKF(same_order(a, b, n, width),
	       "n %llu width %u cmp %u range %llu: order differs",
	       (unsigned long long)n, width, cmp, (unsigned long long)range);
	/* the first duplicate key: the lowest row id of a record whose key
	 * equals its predecessor's (records with row ids only) */
	if (rc == GPMDB_OK && n >= 2 && width >= cmp + 8) {
		int64_t want = -1;
		for (uint64_t i = 1; i < n; i++) {
			uint64_t id;
			if (memcmp(b + (i - 1) * width, b + i * width, cmp))
				continue;
			memcpy(&id, b + i * width + width - 8, 8);
			if (want < 0 || (int64_t)id < want)
				want = (int64_t)id;
		}
		CHECKF(st.dup_rowid == want,
		       "n %llu width %u cmp %u range %llu: duplicate row id "
		       "%lld, want %lld",
		       (unsigned long long)n, width, cmp,
		       (unsigned long long)range, (long long)st.dup_rowid,
		       (long long)want);
	}
	if (n >= 1000)
		printf("# sort n %llu width %u cmp %u: %u words, %u bits, %u "
		       "passes, %.1f ms\n",
		       (unsigned long long)n, width, cmp, st.words, st.key_bits,
		       st.passes, st.total_ms);
	free(a);
	free(b);
}

static void test_init(void)
{
	char line[512];
	int rc = gpu_init(err, sizeof(err));

	CHECKF(rc == GPMDB_OK, "gpu_init: %d %s", rc, err);
	have_gpu = rc == GPMDB_OK;
	if (have_gpu) {
		gpu_describe(line, sizeof(line));
		printf("# device: %s; %d CPU threads\n", line,
		       omp_get_max_threads());
	}
}

static void test_sort_small(void)
{
	static const uint32_t widths[] = {17, 26, 40};

	if (!have_gpu)
		return;
	for (int w = 0; w < 3; w++) {
		sort_case(0, widths[w], widths[w] - 8, 10, 0);
		sort_case(1, widths[w], widths[w] - 8, 10, 0);
		sort_case(2, widths[w], widths[w] - 8, 10, 0);
		sort_case(1000, widths[w], widths[w] - 8, 50, 0);
		sort_case(1000, widths[w], widths[w] - 8, 1u << 30, 1);
		sort_case(1000, widths[w], widths[w], 20, 0); /* no row id */
		sort_case(4099, widths[w], widths[w] - 8, 7, 1);
	}
	/* only a row id; a wide text key (25 words) */
	sort_case(20000, 8, 0, 1, 1);
	sort_case(20000, 200, 192, 1000, 1);
	/* every record equal: nothing to sort */
	{
		uint8_t r[10 * 17];
		for (int i = 0; i < 10; i++) {
			put_int(r + i * 17, 0, 42);
			put_rowid(r + i * 17 + 9, 7);
		}
		uint8_t c[sizeof(r)];
		memcpy(c, r, sizeof(r));
		CHECK_RC(gpu_ix_sort(r, 10, 17, 9, NULL, err, sizeof(err)),
			 GPMDB_OK);
		CHECK(!memcmp(r, c, sizeof(r)));
	}
	/* cmp past the record: refused, untouched */
	{
		uint8_t r[4 * 17] = {3, 2, 1};
		CHECK_RC(gpu_ix_sort(r, 4, 17, 18, NULL, err, sizeof(err)),
			 GPMDB_MISUSE);
		CHECK(r[0] == 3);
	}
}

static void test_sort_5m(void)
{
	if (!have_gpu)
		return;
	sort_case(5000000, 17, 9, 1000000, 0);
	sort_case(5000000, 26, 18, 1u << 20, 1);
	sort_case(5000000, 40, 32, 1000000, 0);
}

/* Every transfer mode gives the same order; the hook is gpu_ix_sort. */
static void test_sort_xfer(void)
{
	static const char *names[] = {"auto", "pageable", "register", "staged"};

	if (!have_gpu)
		return;
	for (int m = 0; m < 4; m++) {
		uint64_t n = 1500000;
		uint8_t *a = make_recs(n, 17, 1u << 24, 0, 99);
		uint8_t *b = malloc(n * 17);
		memcpy(b, a, n * 17);
		cpu_sort(b, n, 17, 9);
		gpu_ix_set_xfer(m);
		int rc =
		    m ? gpu_ix_sort(a, n, 17, 9, NULL, err, sizeof(err))
		      : gpu_ix_sort_hook(a, n, 17, 9, NULL, err, sizeof(err));
		CHECKF(rc == GPMDB_OK, "%s: %d %s", names[m], rc, err);
		CHECKF(same_order(a, b, n, 17), "%s", names[m]);
		free(a);
		free(b);
	}
	gpu_ix_set_xfer(GPU_IX_XFER_AUTO);
}

/* ---- probe cases ----------------------------------------------------- */

typedef struct {
	const uint8_t *recs;
	uint64_t bytes;
	int calls;
} fill_ctx;

static int fill_copy(void *ctx, void *recs)
{
	fill_ctx *f = ctx;

	memcpy(recs, f->recs, f->bytes);
	f->calls++;
	return GPMDB_OK;
}

/* m probes over sorted records: a third keys of records (duplicates of
 * the same key included), a third random keys, the rest keys with
 * another tag byte (never present: left-out bits differ). */
static uint8_t *make_probes(const uint8_t *recs, uint64_t n, uint32_t width,
			    uint64_t m, uint64_t range)
{
	uint32_t kw = width - 8;
	uint8_t *p = malloc(m * kw + 1);

	for (uint64_t i = 0; i < m; i++) {
		uint8_t *q = p + i * kw;
		uint64_t h = rnd();
		if (i % 3 == 0 && n)
			memcpy(q, recs + (h % n) * width, kw);
		else
			make_key(q, width, h, range * 2);
		if (i % 3 == 2)
			q[0] = (uint8_t)(2 + h % 200);
	}
	return p;
}

static int pool_tag;

static void probe_case(uint64_t n, uint32_t width, uint64_t m, uint64_t range,
		       int version)
{
	uint8_t *recs = make_recs(n ? n : 1, width, range, 1, n + width);
	uint8_t *probes;
	int64_t *got = malloc(m * 8 + 8), *want = malloc(m * 8 + 8);
	fill_ctx fc;
	gpu_ix_probe_stats st;
	stg_ix_probe_job job;
	int rc;

	cpu_sort(recs, n, width, width - 8);
	probes = make_probes(recs, n, width, m, range);
	fc = (fill_ctx){recs, n * width, 0};
	job = (stg_ix_probe_job){.pool = &pool_tag,
				 .index_id = width,
				 .version = (uint64_t)version,
				 .n = n,
				 .kw = width - 8,
				 .width = width,
				 .fill = fill_copy,
				 .ctx = &fc,
				 .probes = probes,
				 .m = m};
	cpu_probe(recs, n, width, probes, m, want, omp_get_max_threads());
	for (int pass = 0; pass < 2; pass++) {
		memset(got, 0x5a, m * 8);
		rc = gpu_ix_probe(&job, got, &st, err, sizeof(err));
		CHECKF(rc == GPMDB_OK, "n %llu width %u: %d %s",
		       (unsigned long long)n, width, rc, err);
		uint64_t bad = 0, hits = 0;
		for (uint64_t i = 0; i < m; i++) {
			bad += got[i] != want[i];
			hits += want[i] != -1;
		}
		CHECKF(bad == 0,
		       "n %llu width %u pass %d: %llu of %llu probes differ",
		       (unsigned long long)n, width, pass,
		       (unsigned long long)bad, (unsigned long long)m);
		if (n && m >= 1000)
			CHECK(hits > m / 4 && hits < m);
		if (n)
			CHECKF(st.hit == pass, "pass %d hit %d", pass, st.hit);
	}
	CHECK(fc.calls == (n ? 1 : 0));
	free(recs);
	free(probes);
	free(got);
	free(want);
}

static void test_probe(void)
{
	static const uint32_t widths[] = {17, 26, 40};

	if (!have_gpu)
		return;
	for (int w = 0; w < 3; w++) {
		probe_case(0, widths[w], 100, 10, 1);
		probe_case(1, widths[w], 100, 10, 1);
		probe_case(1000, widths[w], 3000, 100, 1);
		probe_case(1000, widths[w], 3000, 5, 2); /* many duplicates */
		probe_case(5000000, widths[w], 300000, 2000000, 1);
	}
	probe_case(20000, 200, 5000, 1000, 1); /* 25 words */
	/* the sampled upper level off: the same answers */
	gpu_ix_set_probe_samples(0);
	probe_case(5000000, 17, 300000, 2000000, 3);
	gpu_ix_set_probe_samples(1);
	gpu_ix_cache_drop(NULL);
}

/* The cache: hits, a new version, another index, the limit, records out
 * of order, dropping a pool. */
static void test_probe_cache(void)
{
	uint64_t n = 200000, m = 5000;
	uint8_t *recs, *probes;
	int64_t *got, *want;
	fill_ctx fc;
	gpu_ix_cache_stats cs0, cs;
	stg_ix_probe_job job;

	if (!have_gpu)
		return;
	recs = make_recs(n, 17, 100000, 0, 5);
	cpu_sort(recs, n, 17, 9);
	probes = make_probes(recs, n, 17, m, 100000);
	got = malloc(m * 8);
	want = malloc(m * 8);
	cpu_probe(recs, n, 17, probes, m, want, 1);
	fc = (fill_ctx){recs, n * 17, 0};
	job = (stg_ix_probe_job){.pool = &fc,
				 .index_id = 1,
				 .version = 10,
				 .n = n,
				 .kw = 9,
				 .width = 17,
				 .fill = fill_copy,
				 .ctx = &fc,
				 .probes = probes,
				 .m = m};
	gpu_ix_cache_get_stats(&cs0);
	CHECK_RC(gpu_ix_probe_hook(&job, got, err, sizeof(err)), GPMDB_OK);
	CHECK_RC(gpu_ix_probe_hook(&job, got, err, sizeof(err)), GPMDB_OK);
	CHECK(fc.calls == 1);
	CHECK(!memcmp(got, want, m * 8));
	job.version = 11; /* the index changed */
	CHECK_RC(gpu_ix_probe_hook(&job, got, err, sizeof(err)), GPMDB_OK);
	CHECK(fc.calls == 2);
	job.index_id = 2; /* another index, same records */
	CHECK_RC(gpu_ix_probe_hook(&job, got, err, sizeof(err)), GPMDB_OK);
	CHECK(fc.calls == 3);
	CHECK(!memcmp(got, want, m * 8));
	gpu_ix_cache_get_stats(&cs);
	CHECK(cs.entries == 2);
	CHECK(cs.hits - cs0.hits == 1);
	CHECK(cs.misses - cs0.misses == 3);
	CHECK(cs.stale - cs0.stale == 1);
	CHECK(cs.bytes > 0);
	printf("# cache: %llu entries, %llu bytes for %llu records of 17 "
	       "bytes\n",
	       (unsigned long long)cs.entries, (unsigned long long)cs.bytes,
	       (unsigned long long)(2 * n));

	/* the limit: refused with the sizes */
	gpu_ix_cache_set_limit(4096);
	job.index_id = 3;
	CHECK_RC(gpu_ix_probe_hook(&job, got, err, sizeof(err)), GPMDB_NOMEM);
	CHECKF(strstr(err, "limit") != NULL, "%s", err);
	printf("# limit: %s\n", err);
	gpu_ix_cache_set_limit(0);

	/* records out of key order: refused, nothing kept */
	{
		uint8_t *bad = malloc(n * 17);
		memcpy(bad, recs, n * 17);
		memcpy(bad + 17 * 1000, recs + 17 * 150000, 17);
		fill_ctx fb = {bad, n * 17, 0};
		job.index_id = 4;
		job.ctx = &fb;
		CHECK_RC(gpu_ix_probe_hook(&job, got, err, sizeof(err)),
			 GPMDB_CORRUPT);
		CHECKF(strstr(err, "key order") != NULL, "%s", err);
		printf("# out of order: %s\n", err);
		CHECK_RC(gpu_ix_probe_hook(&job, got, err, sizeof(err)),
			 GPMDB_CORRUPT);
		CHECK(fb.calls == 2);
		free(bad);
		job.ctx = &fc;
	}
	/* width must be kw + 8 */
	job.width = 18;
	CHECK_RC(gpu_ix_probe_hook(&job, got, err, sizeof(err)), GPMDB_MISUSE);
	job.width = 17;
	gpu_ix_cache_drop(&fc);
	gpu_ix_cache_get_stats(&cs);
	CHECK(cs.entries == 0 && cs.bytes == 0);
	free(recs);
	free(probes);
	free(got);
	free(want);
}

/* ---- timing (not an assertion) ------------------------------------- */

static void bench_sort_sizes(void)
{
	static const uint64_t sizes[] = {65536, 262144, 1048576, 4194304};

	for (int i = 0; i < 4; i++) {
		uint64_t n = sizes[i];
		uint8_t *a = make_recs(n, 17, n, 0, 1000 + i);
		uint8_t *b = malloc(n * 17);
		double best_g = 1e30, best_c = 1e30;
		for (int r = 0; r < 3; r++) {
			uint8_t *c = make_recs(n, 17, n, 0, 1000 + i);
			double t0 = now_ms();
			gpu_ix_sort(c, n, 17, 9, NULL, err, sizeof(err));
			double t1 = now_ms();
			memcpy(b, a, n * 17);
			double t2 = now_ms();
			cpu_sort(b, n, 17, 9);
			double t3 = now_ms();
			if (t1 - t0 < best_g)
				best_g = t1 - t0;
			if (t3 - t2 < best_c)
				best_c = t3 - t2;
			free(c);
		}
		printf("# sort 17-byte records n %8llu: gpu %8.2f ms, cpu (%d "
		       "threads) %8.2f ms, %.1fx\n",
		       (unsigned long long)n, best_g, omp_get_max_threads(),
		       best_c, best_c / best_g);
		free(a);
		free(b);
	}
}

static void bench_probe_sizes(const uint8_t *recs, uint64_t n,
			      stg_ix_probe_job *job)
{
	static const uint64_t sizes[] = {1024, 4096, 16384, 65536, 262144};

	for (int i = 0; i < 5; i++) {
		uint64_t m = sizes[i];
		uint8_t *p = make_probes(recs, n, 17, m, n);
		int64_t *o = malloc(m * 8);
		double g = 1e30, c1 = 1e30, cT = 1e30;
		job->probes = p;
		job->m = m;
		for (int r = 0; r < 3; r++) {
			double t0 = now_ms();
			gpu_ix_probe(job, o, NULL, err, sizeof(err));
			double t1 = now_ms();
			cpu_probe(recs, n, 17, p, m, o, 1);
			double t2 = now_ms();
			cpu_probe(recs, n, 17, p, m, o, omp_get_max_threads());
			double t3 = now_ms();
			g = t1 - t0 < g ? t1 - t0 : g;
			c1 = t2 - t1 < c1 ? t2 - t1 : c1;
			cT = t3 - t2 < cT ? t3 - t2 : cT;
		}
		printf("# probe m %7llu over %llu: gpu (warm) %7.3f ms, cpu 1 "
		       "thread %7.3f ms, cpu %d threads %7.3f ms\n",
		       (unsigned long long)m, (unsigned long long)n, g, c1,
		       omp_get_max_threads(), cT);
		free(p);
		free(o);
	}
}

static void test_bench(void)
{
	const char *e = getenv("GPMDB_IX_BENCH_ROWS");
	uint64_t n = e ? strtoull(e, NULL, 10) : 50000000ull;
	static const char *names[] = {"auto", "pageable", "register", "staged"};
	uint8_t *orig, *a, *ref;
	gpu_ix_sort_stats st;
	double t0, cpu_ms;

	if (!have_gpu || n == 0)
		return;
	/* warm: CUB, the pool, the pinned staging */
	a = make_recs(100000, 17, 100000, 0, 3);
	gpu_ix_sort(a, 100000, 17, 9, NULL, err, sizeof(err));
	free(a);

	gen_signed = 0;
	orig = make_recs(n, 17, n * 2, 0, 77);
	gen_signed = 1;
	ref = malloc(n * 17);
	a = malloc(n * 17);
	memcpy(ref, orig, n * 17);
	t0 = now_ms();
	cpu_sort(ref, n, 17, 9);
	cpu_ms = now_ms() - t0;
	printf("# bench: %llu records of 17 bytes (INT key + row id), keys in "
	       "[0, %llu)\n",
	       (unsigned long long)n, (unsigned long long)(n * 2));
	printf("# cpu merge sort, %d threads: %.1f ms\n", omp_get_max_threads(),
	       cpu_ms);
	for (int m = 1; m <= 3; m++) {
		for (int r = 0; r < 2; r++) {
			memcpy(a, orig, n * 17);
			gpu_ix_set_xfer(m);
			int rc =
			    gpu_ix_sort(a, n, 17, 9, &st, err, sizeof(err));
			CHECKF(rc == GPMDB_OK, "%d %s", rc, err);
			if (r == 1)
				CHECKF(same_order(a, ref, n, 17), "bench %s",
				       names[m]);
			printf("# gpu sort (%s%s): %.1f ms = upload %.1f + "
			       "plan %.1f + sort %.1f (%u words, %u bits, %u "
			       "passes) + gather/check %.1f + download %.1f; "
			       "%.1fx the cpu\n",
			       names[m], r ? "" : ", first", st.total_ms,
			       st.upload_ms, st.plan_ms, st.sort_ms, st.words,
			       st.key_bits, st.passes, st.gather_ms,
			       st.download_ms, cpu_ms / st.total_ms);
		}
	}
	gpu_ix_set_xfer(GPU_IX_XFER_AUTO);
	/* as CREATE INDEX would: records just written by the CPU */
	for (int r = 0; r < 2; r++) {
		gen_signed = 0;
		uint8_t *fr = make_recs(n, 17, n * 2, 0, 77);
		gen_signed = 1;
		int rc = gpu_ix_sort(fr, n, 17, 9, &st, err, sizeof(err));
		CHECKF(rc == GPMDB_OK, "%d %s", rc, err);
		CHECK(same_order(fr, ref, n, 17));
		printf("# gpu sort (fresh buffer, auto): %.1f ms = upload %.1f "
		       "+ plan %.1f + sort %.1f (%u words, %u bits, %u "
		       "passes) + gather/check %.1f + download %.1f; %.1fx "
		       "the cpu\n",
		       st.total_ms, st.upload_ms, st.plan_ms, st.sort_ms,
		       st.words, st.key_bits, st.passes, st.gather_ms,
		       st.download_ms, cpu_ms / st.total_ms);
		free(fr);
	}
	/* signed keys and NULLs: every bit of the value varies */
	{
		uint8_t *sg = make_recs(n, 17, n * 2, 0, 78);
		ord o = {17, 9};
		uint64_t bad = 0;
		int rc = gpu_ix_sort(sg, n, 17, 9, &st, err, sizeof(err));
		CHECKF(rc == GPMDB_OK, "%d %s", rc, err);
		for (uint64_t i = 1; i < n; i++)
			bad += rec_cmp(sg + (i - 1) * 17, sg + i * 17, &o) > 0;
		CHECK(bad == 0);
		printf("# gpu sort (signed keys, NULLs, auto): %.1f ms = "
		       "upload %.1f + plan %.1f + sort %.1f (%u words, %u "
		       "bits, %u passes) + gather/check %.1f + download %.1f\n",
		       st.total_ms, st.upload_ms, st.plan_ms, st.sort_ms,
		       st.words, st.key_bits, st.passes, st.gather_ms,
		       st.download_ms);
		free(sg);
	}
	free(a);
	free(orig);

	/* 2.5M probes over the n sorted records */
	{
		uint64_t m = 2500000;
		uint8_t *p = make_probes(ref, n, 17, m, n);
		int64_t *got = malloc(m * 8), *want = malloc(m * 8);
		fill_ctx fc = {ref, n * 17, 0};
		gpu_ix_probe_stats ps;
		stg_ix_probe_job job = {.pool = &fc,
					.index_id = 9,
					.version = 1,
					.n = n,
					.kw = 9,
					.width = 17,
					.fill = fill_copy,
					.ctx = &fc,
					.probes = p,
					.m = m};
		int rc = gpu_ix_probe(&job, got, &ps, err, sizeof(err));
		CHECKF(rc == GPMDB_OK, "%d %s", rc, err);
		printf(
		    "# probe miss: %.1f ms = fill %.1f + build %.1f (records "
		    "to the device %.1f) + probes %.2f\n",
		    ps.total_ms, ps.fill_ms, ps.build_ms, ps.rec_upload_ms,
		    ps.upload_ms + ps.kernel_ms + ps.download_ms);
		{
			gpu_ix_cache_stats cs;
			gpu_ix_cache_get_stats(&cs);
			printf("# index cache: %llu entries, %.1f MiB for %llu "
			       "records (%.1f bytes a record)\n",
			       (unsigned long long)cs.entries,
			       cs.bytes / 1048576.0, (unsigned long long)n,
			       (double)cs.bytes / (double)n);
		}
		t0 = now_ms();
		cpu_probe(ref, n, 17, p, m, want, omp_get_max_threads());
		double c = now_ms() - t0;
		t0 = now_ms();
		cpu_probe(ref, n, 17, p, m, want, 1);
		double c1 = now_ms() - t0;
		CHECK(!memcmp(got, want, m * 8));
		for (int smp = 1; smp >= 0; smp--)
			for (int x = 1; x <= 3; x += 2) {
				double best = 1e30;
				gpu_ix_probe_stats b = {0};
				gpu_ix_set_probe_samples(smp);
				gpu_ix_set_xfer(x);
				for (int r = 0; r < 5; r++) {
					rc = gpu_ix_probe(&job, got, &ps, err,
							  sizeof(err));
					if (ps.total_ms < best) {
						best = ps.total_ms;
						b = ps;
					}
				}
				CHECK(rc == GPMDB_OK);
				CHECK(!memcmp(got, want, m * 8));
				printf("# probe 2.5M warm (samples %s, %s): "
				       "%.2f ms = upload %.2f + kernel %.2f + "
				       "download %.2f; cpu %d threads %.1f "
				       "ms, 1 thread %.1f ms\n",
				       smp ? "on" : "off", names[x], best,
				       b.upload_ms, b.kernel_ms, b.download_ms,
				       omp_get_max_threads(), c, c1);
			}
		gpu_ix_set_probe_samples(1);
		/* the transfers' spread: rounds of each mode in turn */
		for (int round = 0; round < 3; round++)
			for (int x = 1; x <= 3; x += 2) {
				gpu_ix_set_xfer(x);
				printf("# probe 2.5M round %d %s:", round,
				       names[x]);
				for (int r = 0; r < 5; r++) {
					gpu_ix_probe(&job, got, &ps, err,
						     sizeof(err));
					printf(" %.2f", ps.total_ms);
				}
				printf(" ms\n");
			}
		gpu_ix_set_xfer(GPU_IX_XFER_AUTO);
		bench_probe_sizes(ref, n, &job);
		free(p);
		free(got);
		free(want);
		gpu_ix_cache_drop(NULL);
	}
	free(ref);
	bench_sort_sizes();
}

int main(void)
{
	TEST_RUN(test_init);
	TEST_RUN(test_sort_small);
	TEST_RUN(test_sort_xfer);
	TEST_RUN(test_sort_5m);
	TEST_RUN(test_probe);
	TEST_RUN(test_probe_cache);
	TEST_RUN(test_bench);
	TEST_MAIN_END();
}
