/*
 * bench_util.c - plumbing shared by the benchmarks (bench_util.h).
 */
#include "bench_util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

double bench_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

void bench_die(const char *what, const char *why)
{
	fprintf(stderr, "%s: %s: %s\n", bench_prog, what, why);
	exit(2);
}

void *bench_alloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		bench_die("malloc", strerror(errno));
	return p;
}

uint64_t bench_gcd(uint64_t a, uint64_t b)
{
	while (b) {
		uint64_t t = a % b;
		a = b;
		b = t;
	}
	return a;
}

uint64_t bench_coprime_step(uint64_t n)
{
	uint64_t step = (uint64_t)(n * 0.6180339887498949);

	if (step == 0)
		step = 1;
	while (bench_gcd(step, n) != 1)
		step++;
	return step % n;
}

bool bench_in_list(const char *list, const char *word)
{
	size_t n = strlen(word);
	for (const char *p = list; *p;) {
		const char *q = strchr(p, ',');
		size_t len = q ? (size_t)(q - p) : strlen(p);
		if (len == n && !strncmp(p, word, n))
			return true;
		if (!q)
			break;
		p = q + 1;
	}
	return false;
}

int bench_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

void bench_digest_add(bench_digest *g, int64_t id, double v)
{
	if (g->n && v < g->prev)
		g->disorder++;
	g->prev = v;
	g->sum += (uint64_t)id;
	g->poshash += (uint64_t)id * (g->n * 2 + 1);
	g->n++;
}

int bench_duck_digest(duckdl *dl, duckdl_result *r, bench_digest *g, char *err,
		      size_t errlen)
{
	duckdl_chunk ch;

	if (dl->column_type(r, 0) != DUCKDL_TYPE_BIGINT ||
	    dl->column_type(r, 1) != DUCKDL_TYPE_DOUBLE) {
		snprintf(err, errlen, "unexpected column types");
		return -1;
	}
	while ((ch = dl->fetch_chunk(*r)) != NULL) {
		duckdl_idx n = dl->chunk_size(ch);
		const int64_t *id = dl->vector_data(dl->chunk_vector(ch, 0));
		const double *v = dl->vector_data(dl->chunk_vector(ch, 1));
		for (duckdl_idx i = 0; i < n; i++)
			bench_digest_add(g, id[i], v[i]);
		dl->destroy_chunk(&ch);
	}
	return 0;
}
