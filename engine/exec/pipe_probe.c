/*
 * pipe_probe.c - a join stage's direct table: one INT, DECIMAL or DATE key
 * of one type on both sides (hexact) whose built values span a narrow
 * range is looked up by its value, one read, instead of hashed, checked
 * against the bloom bits and searched in the slots (bench_sql's join of
 * 10M fact rows with 50,000 dim rows by dim.d spent a quarter of its
 * time in those reads).  The table holds the chains of the hash table,
 * so the pairs come out in the same order.  And the hashed probe's
 * candidates (join_cands).
 */
#include "pipe_int.h"

#include <stdlib.h>

/* Built keys spanning at most this many values a built row (and at most
 * DIRECT_MAX values) get a direct table. */
#define DIRECT_SPAN 4
#define DIRECT_MAX  (1u << 24)

static inline int64_t key_at(const rcol *c, uint64_t i)
{
	return c->ty.t == BC_T_DATE ? ((const int32_t *)c->data)[i]
				    : ((const int64_t *)c->data)[i];
}

int jt_direct(exec_ctx *x, pstage *s)
{
	const rcol *c;
	uint64_t n = s->bk ? s->bk->nrows : 0, span;
	int64_t lo = INT64_MAX, hi = INT64_MIN;
	bool any = false;

	if (!s->hexact || !n || s->bk->ncols != 1)
		return GPMDB_OK;
	c = &s->bk->cols[0];
	if (c->ty.t != BC_T_INT && c->ty.t != BC_T_DEC && c->ty.t != BC_T_DATE)
		return GPMDB_OK;
	for (uint64_t i = 0; i < n; i++) {
		if (c->nulls[i])
			continue;
		int64_t v = key_at(c, i);
		lo = v < lo ? v : lo;
		hi = v > hi ? v : hi;
		any = true;
	}
	if (!any)
		return GPMDB_OK;
	span = (uint64_t)hi - (uint64_t)lo; /* no overflow as unsigned */
	if (span >= DIRECT_SPAN * n + 1024 || span >= DIRECT_MAX)
		return GPMDB_OK;
	span++;
	/* without the memory: the hash table serves */
	uint32_t *dir = pipe_zalloc(span * sizeof(uint32_t));
	if (!dir)
		return GPMDB_OK;
	/* each slot is the head of one key's chain (hexact) */
	for (uint64_t q = 0; q < s->nb; q++) {
		uint64_t e = s->slot[q];
		if (!e)
			continue;
		uint64_t row = (e & 0xffffffffu) - 1;
		dir[(uint64_t)key_at(c, row) - (uint64_t)lo] =
		    (uint32_t)row + 1;
	}
	s->dir = dir;
	s->dmin = lo;
	s->dspan = span;
	s->bytes += span * sizeof(uint32_t);
	return exec_mem(x, span * sizeof(uint32_t));
}

uint32_t jt_direct_cands(const pstage *s, const rel *kb, uint32_t m,
			 uint32_t *cand, uint64_t *first)
{
	const rcol *c = &kb->cols[0];
	const uint8_t *nl = c->nulls;
	const uint32_t *dir = s->dir;
	uint64_t lo = (uint64_t)s->dmin, span = s->dspan;
	uint32_t nc = 0;

#define DIRECT_LOOP(T)                                                         \
	do {                                                                   \
		const T *kv = c->data;                                         \
		for (uint32_t r = 0; r < m; r++) {                             \
			uint64_t o = (uint64_t)(int64_t)kv[r] - lo;            \
			uint32_t f = !nl[r] && o < span ? dir[o] : 0;          \
			first[r] = f;                                          \
			cand[nc] = r;                                          \
			nc += f != 0;                                          \
		}                                                              \
	} while (0)
	if (c->ty.t == BC_T_DATE)
		DIRECT_LOOP(int32_t);
	else
		DIRECT_LOOP(int64_t);
#undef DIRECT_LOOP
	return nc;
}

/* The rows of join stage i's key batch kb that may meet a built row
 * (t->jcand[i], returned: how many) and their hashes (t->jhv[i]): all
 * rows, or those whose bloom bit is set; the slots they probe
 * prefetched. */
uint32_t join_cands(pthr *t, int i, const rel *kb, uint32_t m)
{
	const pstage *s = &t->p->st[i];
	uint64_t *hvs = t->jhv[i], rm = s->rmask;
	uint32_t *cand = t->jcand[i], nc = 0;

	exec_hash_batch(kb, s->n->nkeys, m, hvs, true);
	if (s->bloom &&
	    (t->bf_in[i] < 16 * VEC_BATCH || 2 * t->bf_pass[i] < t->bf_in[i])) {
		const uint64_t *bf = s->bloom;
		for (uint32_t r = 0; r < m; r++) {
			uint64_t q = hvs[r] >> 20 & s->bmask;
			cand[nc] = r;
			nc += bf[q >> 6] >> (q & 63) & 1;
		}
		t->bf_in[i] += m;
		t->bf_pass[i] += nc;
	} else {
		for (uint32_t r = 0; r < m; r++)
			cand[r] = r;
		nc = m;
	}
	for (uint32_t c = 0; c < nc; c++) {
		uint64_t hv = hvs[cand[c]];
		__builtin_prefetch(
		    &s->slot[jt_base(s, hv) + ((hv ^ hv >> 29) & rm)]);
	}
	return nc;
}
