/*
 * pipe_probe.c - a join stage's direct table: one INT, DECIMAL or DATE key
 * of one type on both sides (hexact) whose built values span a narrow
 * range is looked up by its value, one read, instead of hashed, checked
 * against the bloom bits and searched in the slots (bench_sql's join of
 * 10M fact rows with 50,000 dim rows by dim.d spent a quarter of its
 * time in those reads).  The table holds the chains of the hash table,
 * so the pairs come out in the same order.  And the hashed probe's
 * candidates (join_cands), and a TEXT key's by reference (jt_refs_cands:
 * the rows of a dictionary tablet share their code's string).
 */
#include "pipe_int.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

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

/*
 * Joins on dictionary codes (issue 17): the scan gives a dictionary
 * tablet's rows their code's string, one (pointer, length) into the
 * tablet's heap for the statement, so rows of equal references have
 * equal keys.  A batch's distinct references (at most one in 8 rows) are
 * hashed, and their chains searched with the string comparison, once
 * each; every row then takes its reference's first equal built row.
 * The chains and their order are the hashed probe's, so the pairs are
 * the same in the same order.  A join on TEXT keys over 50% of
 * lineitem's rows of the 2-core box spent 44% of its time hashing and
 * comparing the strings of every row (docs/engine.md).
 */
#define REF_SLOTS 512 /* at most VEC_BATCH / 8 references, a quarter full */

static _Atomic uint64_t dict_join_rows;

uint64_t pipe_dict_join_rows(void)
{
	return atomic_load(&dict_join_rows);
}

void jt_refs_init(pstage *s)
{
	const char *e = getenv("GPMDB_DICT_JOIN");

	/* GPMDB_DICT_JOIN=0: every row hashed (the benchmark's before, the
	 * tests' reference).  Not with a residual condition: it runs in
	 * the keys' scratch (pipe.c stage_join), and the keys' strings are
	 * referenced, not copied, for the batch. */
	s->trefs = s->n->nkeys == 1 && s->bk && s->bk->ncols == 1 &&
		   s->bk->cols[0].ty.t == BC_T_TEXT && !s->dir && !s->pred &&
		   !(e && e[0] == '0');
}

static inline uint32_t ref_slot(vec_str v)
{
	uint64_t h = ((uint64_t)(uintptr_t)v.ptr ^ (uint64_t)v.len << 48) *
		     0x9e3779b97f4a7c15ull;

	return (uint32_t)(h >> 55); /* 9 bits: REF_SLOTS */
}

uint32_t jt_refs_cands(const pstage *s, const rel *kb, uint32_t m,
		       uint32_t *cand, uint64_t *first)
{
	const rcol *c = &kb->cols[0];
	const vec_str *sv = c->data;
	const uint8_t *nl = c->nulls;
	uint16_t used[REF_SLOTS]; /* entry + 1 */
	vec_str ref[REF_SLOTS / 4];
	uint32_t head[REF_SLOTS / 4], nref = 0, most = m / 8, nc = 0;

	memset(used, 0, sizeof(used));
	for (uint32_t r = 0; r < m; r++) {
		uint32_t q, e;

		if (nl[r]) { /* a NULL key meets nothing */
			first[r] = 0;
			continue;
		}
		for (q = ref_slot(sv[r]);; q = (q + 1) & (REF_SLOTS - 1)) {
			e = used[q];
			if (!e || (ref[e - 1].ptr == sv[r].ptr &&
				   ref[e - 1].len == sv[r].len))
				break;
		}
		if (!e) {
			int64_t row;

			if (nref >= most || nref >= REF_SLOTS / 4)
				return UINT32_MAX;
			row = jt_first(s, exec_hash_row(kb, 1, r));
			while (row >= 0 && !jt_key_eq(s, kb, r, row))
				row = (int64_t)s->next[row] - 1;
			ref[nref] = sv[r];
			head[nref] = (uint32_t)(row + 1);
			used[q] = (uint16_t)++nref;
			e = nref;
		}
		first[r] = head[e - 1];
		cand[nc] = r;
		nc += head[e - 1] != 0;
	}
	atomic_fetch_add_explicit(&dict_join_rows, m, memory_order_relaxed);
	return nc;
}
