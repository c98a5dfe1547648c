/*
 * pipe_agg.c - the aggregate sink of a pipeline (pipe.c): per-thread
 * groups in open-addressing tables (hash tags in the slots, one INT or
 * DECIMAL key compared in place), typed loops for counts and sums, the
 * generic agg_step for the rest, a key filter from a join above
 * (sideways keys), and the merge of the threads' groups in row order,
 * in parallel by partitions of the key hash when they are many.
 */
#include "../engine.h"
#include "../value.h"
#include "exec_int.h"
#include "pipe_int.h"

#include <omp.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int groups_init(pgroups *g, const pnode *n)
{
	int na = n->naggs ? n->naggs : 1;

	memset(g, 0, sizeof(*g));
	g->cap = 64;
	g->nslot = 256;
	g->keys = rel_new(NULL, n->ngroup, n->ty);
	g->hash = malloc(g->cap * 8);
	g->st = malloc(g->cap * (size_t)na * sizeof(aggst));
	g->slot = pipe_zalloc(g->nslot * 8);
	if (!g->keys || !g->hash || !g->st || !g->slot)
		return GPMDB_NOMEM;
	return GPMDB_OK;
}

/* Bloom bits of n key hashes: one bit per hash (bits 20..), 16 bits a
 * key, so that most probes that meet nothing skip the table walk (join
 * tables and key filters alike).  *mask: the bit index mask; NULL: out
 * of memory. */
uint64_t *pipe_bloom(const uint64_t *hash, uint64_t n, uint64_t *mask)
{
	uint64_t nbits = 4096, *bits;

	while (nbits < 16 * n)
		nbits *= 2;
	if (!(bits = pipe_zalloc(nbits / 8)))
		return NULL;
	*mask = nbits - 1;
	for (uint64_t i = 0; i < n; i++) {
		uint64_t q = hash[i] >> 20 & *mask;
		bits[q >> 6] |= 1ull << (q & 63);
	}
	return bits;
}

int groups_bloom(pgroups *g)
{
	return (g->bloom = pipe_bloom(g->hash, g->n, &g->bmask)) ? GPMDB_OK
								 : GPMDB_NOMEM;
}

void groups_free(pgroups *g, int na)
{
	free(g->bloom);
	for (uint64_t k = 0; g->st && k < g->n * (uint64_t)na; k++)
		free(g->st[k].gc);
	rel_free(g->keys);
	free(g->dir);
	free(g->hash);
	free(g->slot);
	free(g->st);
	memset(g, 0, sizeof(*g));
}

/* The group of row i of keys k (hash hv) in g, added when new; -1: out of
 * memory. */
static inline uint64_t groups_bucket(uint64_t hv, uint64_t m)
{
	return (hv ^ hv >> 29) & m;
}

/* A slot: the upper 32 bits of the group's key hash, then the group + 1
 * (0: empty), so that most probes read no group. */
int64_t groups_find(pgroups *g, const rel *k, uint64_t i, uint64_t hv, int na)
{
	uint64_t m = g->nslot - 1, s = groups_bucket(hv, m), tag = hv >> 32, v;
	int64_t e;

	while ((v = g->slot[s])) {
		e = (int64_t)(v & 0xffffffffu) - 1;
		if (v >> 32 == tag && g->hash[e] == hv &&
		    (!k->ncols || exec_keys_eq(g->keys, (uint64_t)e, k, i)))
			return e;
		s = (s + 1) & m;
	}
	if (g->n >= UINT32_MAX - 1)
		return -1;
	if (g->n == g->cap) {
		uint64_t cap = g->cap * 2;
		uint64_t *h = realloc(g->hash, cap * 8);
		aggst *st =
		    h ? realloc(g->st, cap * (size_t)na * sizeof(aggst)) : NULL;
		if (h)
			g->hash = h;
		if (!st)
			return -1;
		g->st = st;
		g->cap = cap;
	}
	if (2 * (g->n + 1) > g->nslot) {
		uint64_t ns = g->nslot * 2;
		uint64_t *sl = pipe_zalloc(ns * 8);
		if (!sl)
			return -1;
		for (uint64_t q = 0; q < g->n; q++) {
			uint64_t u = groups_bucket(g->hash[q], ns - 1);
			while (sl[u])
				u = (u + 1) & (ns - 1);
			sl[u] = (g->hash[q] >> 32) << 32 | (q + 1);
		}
		free(g->slot);
		g->slot = sl;
		g->nslot = ns;
		m = ns - 1;
		s = groups_bucket(hv, m);
		while (g->slot[s])
			s = (s + 1) & m;
	}
	if (k->ncols && rel_copy_row(g->keys, k, i))
		return -1;
	e = (int64_t)g->n++;
	g->hash[e] = hv;
	memset(&g->st[(uint64_t)e * (size_t)na], 0, (size_t)na * sizeof(aggst));
	g->slot[s] = tag << 32 | (uint64_t)(e + 1);
	return e;
}

/* One INT or DECIMAL group key: its hash (NULLs in one group). */
static inline uint64_t groups_hash_i64(const rcol *c, uint64_t i)
{
	uint64_t v = (uint64_t)((const int64_t *)c->data)[i];

	return c->nulls[i] ? 0x12345 : (v ^ v >> 31) * 0x9e3779b97f4a7c15ull;
}

/* groups_find for one INT or DECIMAL key: values compared in place. */
static int64_t groups_find_i64(pgroups *g, const rel *k, uint64_t i,
			       uint64_t hv, int na)
{
	uint64_t m = g->nslot - 1, s = groups_bucket(hv, m), tag = hv >> 32, v;
	const rcol *kc = &k->cols[0], *gc = &g->keys->cols[0];
	int64_t x = ((const int64_t *)kc->data)[i];
	uint8_t nl = kc->nulls[i] != 0;

	while ((v = g->slot[s])) {
		int64_t e = (int64_t)(v & 0xffffffffu) - 1;
		if (v >> 32 == tag && (gc->nulls[e] != 0) == nl &&
		    (nl || ((const int64_t *)gc->data)[e] == x))
			return e;
		s = (s + 1) & m;
	}
	return groups_find(g, k, i, hv, na ? na : 1);
}

/* A direct map of one INT/DECIMAL key's values to groups: most GROUP BY
 * keys are codes of a narrow range (bench_sql's 1000 k values), looked
 * up in one read instead of a hash, a slot and the group's key.  Made at
 * a thread's first batch over its keys' range (widened, at most
 * GROUPS_DIR_MAX values); keys outside it take groups_find_i64.  Groups
 * are still made by groups_find_i64, so their order and table are the
 * same. */
#define GROUPS_DIR_MAX (1u << 16)

static void groups_dir(pgroups *g, const rcol *kc, uint32_t m)
{
	const int64_t *kv = kc->data;
	int64_t lo = INT64_MAX, hi = INT64_MIN;

	g->dspan = UINT64_MAX; /* decided once */
	for (uint32_t i = 0; i < m; i++)
		if (!kc->nulls[i]) {
			lo = kv[i] < lo ? kv[i] : lo;
			hi = kv[i] > hi ? kv[i] : hi;
		}
	if (lo > hi || (uint64_t)hi - (uint64_t)lo >= GROUPS_DIR_MAX / 4)
		return;
	uint64_t w = ((uint64_t)hi - (uint64_t)lo + 1) * 4, pad;
	w = w < 1024 ? 1024 : w;
	pad = (w - ((uint64_t)hi - (uint64_t)lo + 1)) / 2;
	/* lo - pad without overflow */
	lo = (uint64_t)lo - (uint64_t)INT64_MIN >= pad ? lo - (int64_t)pad
						       : INT64_MIN;
	if (!(g->dir = pipe_zalloc(w * sizeof(uint32_t))))
		return;
	g->dlo = lo;
	g->dspan = w;
}

/* A MIN/MAX/ANY state that took a text value of the batch keeps a copy,
 * in the state's own buffer (gc: group_concat's, unused here), so that
 * a group holds at most its longest value. */
static int groups_keep_text(aggst *s, const sval *v)
{
	if (s->v.t != BC_T_TEXT || s->v.u.s.ptr != v->u.s.ptr || !v->u.s.len)
		return GPMDB_OK;
	if (v->u.s.len > s->gccap) {
		char *p = realloc(s->gc, v->u.s.len);
		if (!p)
			return GPMDB_NOMEM;
		s->gc = p;
		s->gccap = v->u.s.len;
	}
	memcpy(s->gc, v->u.s.ptr, v->u.s.len);
	s->v.u.s.ptr = s->gc;
	return GPMDB_OK;
}

/* The generic step of aggregate a for rows 0..m of the batch. */
static int agg_rows_generic(pthr *t, const aggdef *ad, int a, int na)
{
	rel *aa = t->aa;
	aggst *st = t->g.st;

	for (uint32_t i = 0; i < aa->nrows; i++) {
		aggst *s = &st[t->gid[i] * (size_t)na + a];
		sval sv;
		rel_get(aa, a, i, &sv);
		if (agg_isum(ad) && sv.t != BC_T_NULL) {
			int64_t add = sv.u.i;
			if (ad->res.t == BC_T_DEC && sv.t == BC_T_DEC &&
			    sv.scale != ad->res.scale)
				val_dec_rescale(add, sv.scale, ad->res.scale,
						&add);
			if (!agg_isum_add(s, add))
				return pipe_fail(t, GPMDB_ERROR,
						 "integer overflow");
			continue;
		}
		/* INT sums above, no group_concat: no error */
		agg_step(NULL, ad, s, &sv, NULL);
		if (sv.t == BC_T_TEXT && groups_keep_text(s, &sv))
			return pipe_fail(t, GPMDB_NOMEM, "out of memory");
	}
	return GPMDB_OK;
}

/* AVG and TOTAL of integers and decimals sum exactly in s->i: moved into
 * s->r (as agg_final reads it). */
void agg_avg_flush(aggst *s, etype ty)
{
	if (!s->i)
		return;
	s->r += ty.t == BC_T_DEC
		    ? (long double)s->i / (long double)val_pow10(ty.scale)
		    : (long double)s->i;
	s->i = 0;
}

/* Whether aggregate a of the AGG sink sums in s->i (agg_avg_flush). */
bool agg_avg_int(const aggdef *ad, etype ty)
{
	return (ad->fn == AGG_AVG || ad->fn == AGG_TOTAL) &&
	       (ty.t == BC_T_INT || ty.t == BC_T_DEC);
}

/* agg_rows over the batch's runs of rows by group (t->nruns): the same
 * arithmetic in the same row order per group, in registers.  false: not
 * one of these aggregates (agg_rows' loops take it). */
static bool agg_runs(pthr *t, const aggdef *ad, int a, int na, int *rc)
{
	const rcol *c = &t->aa->cols[a];
	const uint8_t *nl = c->nulls;
	const int64_t *iv = c->data;
	const double *rv = c->data;
	const uint32_t *run = t->run, *rs = t->rs;
	int ty = c->ty.t;
	bool isum = agg_isum(ad) && (ty == BC_T_INT ||
				     (ty == BC_T_DEC && ad->res.t == BC_T_DEC &&
				      c->ty.scale == ad->res.scale));
	bool fsum =
	    (ad->fn == AGG_SUM || ad->fn == AGG_AVG || ad->fn == AGG_TOTAL) &&
	    !agg_isum(ad) && ty == BC_T_REAL;

	bool iavg = (ad->fn == AGG_AVG || ad->fn == AGG_TOTAL) &&
		    (ty == BC_T_INT || ty == BC_T_DEC);

	*rc = GPMDB_OK;
	if (ad->fn != AGG_COUNT_STAR && ad->fn != AGG_COUNT && !isum && !fsum &&
	    !iavg)
		return false;
	for (uint32_t g = 0; g < t->nruns; g++) {
		uint32_t k0 = rs[g], k1 = rs[g + 1];
		if (k0 == k1)
			continue;
		aggst *s = &t->g.st[t->gid[run[k0]] * (size_t)na + a];
		if (ad->fn == AGG_COUNT_STAR) {
			s->cnt += k1 - k0;
			continue;
		}
		int64_t cnt = 0;
		if (ad->fn == AGG_COUNT) {
			for (uint32_t k = k0; k < k1; k++)
				cnt += !nl[run[k]];
			s->cnt += cnt;
			continue;
		}
		if (fsum) {
			long double r = s->r;
			for (uint32_t k = k0; k < k1; k++)
				if (!nl[run[k]]) {
					r += rv[run[k]];
					cnt++;
				}
			s->r = r;
			s->cnt += cnt;
			continue;
		}
		if (iavg) { /* exact, as agg_rows' loop */
			int64_t sum = s->i;
			for (uint32_t k = k0; k < k1; k++) {
				uint32_t i = run[k];
				if (nl[i])
					continue;
				if (__builtin_add_overflow(sum, iv[i], &sum)) {
					agg_avg_flush(s, c->ty);
					sum = iv[i];
				}
				s->i = sum;
				cnt++;
			}
			s->cnt += cnt;
			continue;
		}
		int64_t sum = s->i, lo = s->plo, hi = s->phi;
		bool ov = false;
		for (uint32_t k = k0; k < k1; k++) {
			uint32_t i = run[k];
			if (nl[i])
				continue;
			ov |= __builtin_add_overflow(sum, iv[i], &sum);
			cnt++;
			lo = sum < lo ? sum : lo;
			hi = sum > hi ? sum : hi;
		}
		if (ov) {
			*rc = pipe_fail(t, GPMDB_ERROR, "integer overflow");
			return true;
		}
		s->i = sum;
		s->cnt += cnt;
		s->plo = lo;
		s->phi = hi;
	}
	return true;
}

/* Aggregate a over the batch: typed loops for counts and sums of numbers
 * (the arithmetic of agg_step), the generic step otherwise. */
static int agg_rows(pthr *t, const aggdef *ad, int a, int na)
{
	const rcol *c = &t->aa->cols[a];
	const uint8_t *nl = c->nulls;
	const int64_t *iv = c->data;
	const double *rv = c->data;
	uint32_t m = (uint32_t)t->aa->nrows;
	aggst *st = t->g.st;
	const uint64_t *gid = t->gid;
	int ty = c->ty.t;

#define AGG_S (&st[gid[i] * (size_t)na + a])
	int rc;
	if (t->nruns && agg_runs(t, ad, a, na, &rc))
		return rc;
	if (ad->fn == AGG_COUNT_STAR) {
		for (uint32_t i = 0; i < m; i++)
			AGG_S->cnt++;
		return GPMDB_OK;
	}
	if (ad->fn == AGG_COUNT) {
		for (uint32_t i = 0; i < m; i++)
			AGG_S->cnt += !nl[i];
		return GPMDB_OK;
	}
	if (agg_isum(ad) &&
	    (ty == BC_T_INT || (ty == BC_T_DEC && ad->res.t == BC_T_DEC &&
				c->ty.scale == ad->res.scale))) {
		for (uint32_t i = 0; i < m; i++) {
			if (!nl[i] && !agg_isum_add(AGG_S, iv[i]))
				return pipe_fail(t, GPMDB_ERROR,
						 "integer overflow");
		}
		return GPMDB_OK;
	}
	if ((ad->fn == AGG_SUM && !agg_isum(ad)) || ad->fn == AGG_AVG ||
	    ad->fn == AGG_TOTAL) {
		bool avg = ad->fn != AGG_SUM;
		switch (ty) {
		case BC_T_REAL:
			for (uint32_t i = 0; i < m; i++)
				if (!nl[i]) {
					AGG_S->r += rv[i];
					AGG_S->cnt++;
				}
			return GPMDB_OK;
		case BC_T_INT:
		case BC_T_DEC:
			if (!avg)
				break;
			/* exact: the integers (scaled decimals) are summed
			 * in i, which goes into r when it would overflow and
			 * at the end (agg_avg_flush) */
			for (uint32_t i = 0; i < m; i++)
				if (!nl[i]) {
					aggst *s = AGG_S;
					int64_t sum;
					if (__builtin_add_overflow(s->i, iv[i],
								   &sum)) {
						agg_avg_flush(s, c->ty);
						sum = iv[i];
					}
					s->i = sum;
					s->cnt++;
				}
			return GPMDB_OK;
		}
	}
#undef AGG_S
	return agg_rows_generic(t, ad, a, na);
}

/* Evaluates the group keys (k < ng) or the arguments (k >= ng) of the
 * AGG sink over batch b into ka / aa. */
static int sink_eval(pthr *t, const rel *b, int k0, int k1)
{
	pipe *p = t->p;
	int ng = p->agg->ngroup, rc;
	uint32_t m = (uint32_t)b->nrows;
	vec v;

	for (int k = k0; k < k1; k++) {
		rcol *d = k < ng ? &t->ka->cols[k] : &t->aa->cols[k - ng];
		if (p->gcol[k] >= 0) { /* the batch's column itself */
			d->data = b->cols[p->gcol[k]].data;
			d->nulls = b->cols[p->gcol[k]].nulls;
			continue;
		}
		d->data = t->kown[2 * k];
		d->nulls = t->kown[2 * k + 1];
		if (!p->gx[k])
			continue;
		char err[256] = "";
		if ((rc = cx_eval_pure(p->gx[k], b, 0, m, &v, &t->sscr[k], err,
				       sizeof(err))))
			return pipe_fail(t, rc, err);
		if ((rc = k < ng ? pipe_put_ref(t, t->ka, k, &v, m)
				 : pipe_put_ref(t, t->aa, k - ng, &v, m)))
			return rc;
	}
	return GPMDB_OK;
}

/* The group of row i of keys k in g, or -1: no such group. */
static int64_t groups_lookup(const pgroups *g, const rel *k, uint64_t i,
			     uint64_t hv)
{
	uint64_t m = g->nslot - 1, s = groups_bucket(hv, m), tag = hv >> 32, v;

	while ((v = g->slot[s])) {
		int64_t e = (int64_t)(v & 0xffffffffu) - 1;
		if (v >> 32 == tag && g->hash[e] == hv &&
		    exec_keys_eq(g->keys, (uint64_t)e, k, i))
			return e;
		s = (s + 1) & m;
	}
	return -1;
}

/* The first group of g whose full key hash is hv, or -1. */
static inline int64_t groups_cand(const pgroups *g, uint64_t hv)
{
	uint64_t m = g->nslot - 1, s = groups_bucket(hv, m), tag = hv >> 32, v;

	while ((v = g->slot[s])) {
		int64_t e = (int64_t)(v & 0xffffffffu) - 1;
		if (v >> 32 == tag && g->hash[e] == hv)
			return e;
		s = (s + 1) & m;
	}
	return -1;
}

/* Equal bytes: short keys (flags, codes) without a call. */
static inline bool pipe_str_same(const char *a, const char *b, uint32_t n)
{
	if (n > 8)
		return !memcmp(a, b, n);
	for (uint32_t q = 0; q < n; q++)
		if (a[q] != b[q])
			return false;
	return true;
}

/* Rows i with chk[i] set: chk[i] stays set where keys row i of k differs
 * from group gid[i] of gk, a column at a time (the type switch once per
 * column, no call per row). */
static void groups_verify(const rel *gk, const rel *k, const uint64_t *gid,
			  uint8_t *chk, uint32_t m)
{
	for (int c = 0; c < k->ncols; c++)
		if (gk->cols[c].ty.t != k->cols[c].ty.t ||
		    k->cols[c].ty.t == BC_T_NULL) { /* row by row */
			for (uint32_t i = 0; i < m; i++)
				chk[i] =
				    chk[i] && !exec_keys_eq(gk, gid[i], k, i);
			return;
		}
	for (int c = 0; c < k->ncols; c++) {
		const rcol *a = &gk->cols[c], *b = &k->cols[c];
		const uint8_t *an = a->nulls, *bn = b->nulls;
#define GV_LOOP(T, NE)                                                         \
	for (uint32_t i = 0; i < m; i++) {                                     \
		if (chk[i] != 1)                                               \
			continue;                                              \
		uint64_t e = gid[i];                                           \
		const T x = ((const T *)a->data)[e],                           \
			y = ((const T *)b->data)[i];                           \
		if (an[e] || bn[i] ? an[e] != bn[i] : (NE))                    \
			chk[i] = 2;                                            \
	}
		switch (b->ty.t) {
		case BC_T_BOOL:
			GV_LOOP(uint8_t, x != y);
			break;
		case BC_T_DATE:
			GV_LOOP(int32_t, x != y);
			break;
		case BC_T_REAL:
			GV_LOOP(double, x<y || x> y);
			break;
		case BC_T_TEXT:
			GV_LOOP(vec_str,
				x.len != y.len ||
				    (x.ptr != y.ptr &&
				     !pipe_str_same(x.ptr, y.ptr, x.len)));
			break;
		default:
			GV_LOOP(int64_t, x != y);
		}
#undef GV_LOOP
	}
	for (uint32_t i = 0; i < m; i++)
		chk[i] = chk[i] == 2;
}

/* t->gid of the batch's rows (one INT/DECIMAL key, t->g.dir made): the
 * map's group, else groups_find_i64's, then noted in the map. */
static int sink_groups_dir(pthr *t, const rel *ka, uint32_t m, int na)
{
	pgroups *g = &t->g;
	const rcol *kc = &ka->cols[0];
	const int64_t *kv = kc->data;
	uint64_t lo = (uint64_t)g->dlo, span = g->dspan;

	for (uint32_t i = 0; i < m; i++) {
		uint64_t o = (uint64_t)kv[i] - lo;
		bool in = !kc->nulls[i] && o < span;
		int64_t e = in ? (int64_t)g->dir[o] - 1 : -1;
		if (e < 0) {
			e = groups_find_i64(g, ka, i, groups_hash_i64(kc, i),
					    na);
			if (e < 0)
				return pipe_fail(t, GPMDB_NOMEM,
						 "out of memory");
			if (in)
				g->dir[o] = (uint32_t)e + 1;
		}
		t->gid[i] = (uint64_t)e;
		__builtin_prefetch(&g->st[(uint64_t)e * (size_t)na]);
	}
	return GPMDB_OK;
}

/* t->gid of the rows 0..m of the keys ka: hashes first, their slots
 * prefetched; then the groups, their states prefetched for the
 * aggregates' loops. */
static int sink_groups(pthr *t, rel *ka, uint32_t m, int ng, int na)
{
	uint64_t *hvs = t->hv;
	int rc;

	bool i64 = ng == 1 && (ka->cols[0].ty.t == BC_T_INT ||
			       ka->cols[0].ty.t == BC_T_DEC);
	if (i64 && !t->g.dspan)
		groups_dir(&t->g, &ka->cols[0], m);
	bool dir = i64 && t->g.dir;
	if (dir) {
		if ((rc = sink_groups_dir(t, ka, m, na)))
			return rc;
	} else if (i64)
		for (uint32_t i = 0; i < m; i++)
			hvs[i] = groups_hash_i64(&ka->cols[0], i);
	else
		exec_hash_batch(ka, ng, m, hvs, false);
	for (uint32_t i = 0; i < m && !dir; i++)
		__builtin_prefetch(
		    &t->g.slot[groups_bucket(hvs[i], t->g.nslot - 1)]);
	if (dir) {
		/* the groups found: sink_groups_dir */
	} else if (i64 || !ng) {
		for (uint32_t i = 0; i < m; i++) {
			int64_t e =
			    i64 ? groups_find_i64(&t->g, ka, i, hvs[i], na)
				: groups_find(&t->g, ka, i, hvs[i],
					      na ? na : 1);
			if (e < 0)
				return pipe_fail(t, GPMDB_NOMEM,
						 "out of memory");
			t->gid[i] = (uint64_t)e;
			__builtin_prefetch(&t->g.st[(uint64_t)e * (size_t)na]);
		}
	} else {
		/* the group of the same hash, keys checked after, a column
		 * at a time; a new hash makes its group at once; a row whose
		 * keys differ from its hash's group (a collision) takes the
		 * full search */
		uint8_t chk[VEC_BATCH];
		bool bad = false;
		for (uint32_t i = 0; i < m; i++) {
			int64_t e = groups_cand(&t->g, hvs[i]);
			chk[i] = e >= 0;
			if (e < 0 && (e = groups_find(&t->g, ka, i, hvs[i],
						      na ? na : 1)) < 0)
				return pipe_fail(t, GPMDB_NOMEM,
						 "out of memory");
			t->gid[i] = (uint64_t)e;
		}
		groups_verify(t->g.keys, ka, t->gid, chk, m);
		for (uint32_t i = 0; i < m; i++)
			bad |= chk[i];
		for (uint32_t i = 0; bad && i < m; i++) {
			if (!chk[i])
				continue;
			int64_t e =
			    groups_find(&t->g, ka, i, hvs[i], na ? na : 1);
			if (e < 0)
				return pipe_fail(t, GPMDB_NOMEM,
						 "out of memory");
			t->gid[i] = (uint64_t)e;
		}
	}
	return GPMDB_OK;
}

/* Aggregates batch b (the AGG's input layout) into the thread's groups. */
int sink_agg(pthr *t, const rel *b)
{
	pipe *p = t->p;
	const pnode *n = p->agg;
	int ng = n->ngroup, na = n->naggs, rc;
	uint32_t m = (uint32_t)b->nrows;
	rel *ka = t->ka, *aa = t->aa;
	uint64_t g0 = t->g.n;
	size_t kb0 = t->g.keys->bytes;

	if ((rc = sink_eval(t, b, 0, ng)))
		return rc;
	if (p->kf) { /* only the groups the join above will look up */
		uint32_t sel[VEC_BATCH], k = 0, nc = 0;
		const pgroups *kf = p->kf;
		ka->nrows = m;
		exec_hash_batch(ka, ng, m, t->hv, false);
		for (uint32_t i = 0; i < m; i++) { /* bloom bits first */
			uint64_t q = t->hv[i] >> 20 & kf->bmask;
			sel[nc] = i;
			nc += !kf->bloom || (kf->bloom[q >> 6] >> (q & 63) & 1);
		}
		for (uint32_t c = 0; c < nc; c++)
			if (groups_lookup(kf, ka, sel[c], t->hv[sel[c]]) >= 0)
				sel[k++] = sel[c];
		if (!k)
			return GPMDB_OK;
		if (k < m) {
			pipe_gather(t->kfb, b, sel, k, NULL);
			b = t->kfb;
			m = k;
			if ((rc = sink_eval(t, b, 0, ng)))
				return rc;
		}
	}
	if (p->spill) { /* the rows by their keys' hash (spill.c) */
		ka->nrows = m;
		exec_hash_batch(ka, ng, m, t->hv, false);
		return spill_thread_rows(t, b, m, t->hv, p->live[p->ns]);
	}
	if ((rc = sink_eval(t, b, ng, ng + na)))
		return rc;
	ka->nrows = aa->nrows = m;
	bool dg; /* keys of dictionaries: the groups by their codes */
	if ((rc = pipe_dict_groups(t, ka, m, na, &dg)))
		return rc;
	if (!dg && (rc = sink_groups(t, ka, m, ng, na)))
		return rc;
	/* few groups: the rows by group, for agg_runs */
	t->nruns = 0;
	if (t->g.n <= AGG_RUN_MAX && m >= 64 && na > 0) {
		uint32_t ng2 = (uint32_t)t->g.n, *rs = t->rs;
		memset(rs, 0, (ng2 + 1) * sizeof(*rs));
		for (uint32_t i = 0; i < m; i++)
			rs[t->gid[i] + 1]++;
		for (uint32_t g = 0; g < ng2; g++)
			rs[g + 1] += rs[g];
		uint32_t at[AGG_RUN_MAX];
		memcpy(at, rs, ng2 * sizeof(*rs));
		for (uint32_t i = 0; i < m; i++)
			t->run[at[t->gid[i]]++] = i;
		t->nruns = ng2;
	}
	for (int a = 0; a < na; a++)
		if ((rc = agg_rows(t, &n->aggs[a], a, na)))
			return rc;
	/* the groups' memory, for the memory limit */
	atomic_fetch_add(&p->mem,
			 (t->g.n - g0) * ((size_t)na * sizeof(aggst) + 24) +
			     (t->g.keys->bytes - kb0));
	return GPMDB_OK;
}

/* Groups at least this many in all: the threads' tables are merged in
 * parallel, by partitions of the key hash. */
#define MERGE_PAR_MIN 65536
#define MERGE_PARTS   64

/* The parallel merge: each partition of the hash space takes the groups
 * of every thread in thread order; a group's first thread owns it and
 * later threads' states merge into the owner's (agg_merge in row order,
 * as the serial merge).  The owners then come out in (thread, group)
 * order: the order of their first rows.  PIPE_DECLINE when an INT sum's
 * prefix check fails (the plain operators report it). */
/* Whether the threads' groups follow each other in key order: one INT,
 * DECIMAL or DATE key (no NULL key) whose range in each thread's table
 * starts where the previous one's ended or after.  A GROUP BY on a key
 * the scan meets in order (lineitem's orderkey: TPC-H Q18's 15M groups
 * at SF10) gives each thread a range of its own but for the key that a
 * morsel boundary split.  Then each thread's groups are owners as they
 * are, but for such a split key, whose later states merge into its
 * first thread's (merge_split); *eb[t] is the group of thread t's least
 * key, *ee[t] that of its greatest. */
static bool merge_ordered(const pipe *p, const pthr *th, uint64_t *eb,
			  uint64_t *ee)
{
	const pnode *n = p->agg;
	int nt = p->nthr, t0 = n->ty[0].t;
	int64_t lo[nt], hi[nt], last = INT64_MIN;
	atomic_int bad = 0;

	if (n->ngroup != 1 ||
	    (t0 != BC_T_INT && t0 != BC_T_DEC && t0 != BC_T_DATE))
		return false;
#pragma omp parallel for num_threads(nt) schedule(static, 1)
	for (int t = 0; t < nt; t++) {
		const pgroups *g = &th[t].g;
		const rcol *k = &g->keys->cols[0];
		int64_t a = INT64_MAX, b = INT64_MIN;
		for (uint64_t e = 0; e < g->n; e++) {
			int64_t v = t0 == BC_T_DATE
					? ((const int32_t *)k->data)[e]
					: ((const int64_t *)k->data)[e];
			if (k->nulls[e])
				atomic_store(&bad, 1);
			if (v < a) {
				a = v;
				eb[t] = e;
			}
			if (v > b) {
				b = v;
				ee[t] = e;
			}
		}
		lo[t] = a;
		hi[t] = b;
	}
	if (atomic_load(&bad))
		return false;
	for (int t = 0; t < nt; t++) {
		if (!th[t].g.n)
			continue;
		if (lo[t] < last)
			return false;
		last = hi[t];
	}
	return true;
}

/* The merge of ordered threads (merge_ordered): every group owns itself
 * but a key split between threads, whose later states merge into the
 * first thread's group (in thread order, as the serial merge).  false
 * when an INT sum's prefix check fails. */
static bool merge_split(const pipe *p, pthr *th, uint8_t **own,
			const uint64_t *eb, const uint64_t *ee)
{
	const pnode *n = p->agg;
	int na = n->naggs, ot = -1;
	uint64_t oe = 0;

	for (int t = 0; t < p->nthr; t++) {
		pgroups *g = &th[t].g;
		if (!g->n)
			continue;
		if (ot >= 0 &&
		    exec_keys_eq(th[ot].g.keys, oe, g->keys, eb[t])) {
			if (!agg_merge_all(n->aggs, na, &th[ot].g.st[oe * na],
					   &g->st[eb[t] * na]))
				return false;
			own[t][eb[t]] = 0;
			if (eb[t] == ee[t])
				continue; /* one key: the owner stays */
		}
		ot = t;
		oe = ee[t];
	}
	return true;
}

static int merge_agg_par(pipe *p, pthr *th, rel **out)
{
	exec_ctx *x = p->x;
	const pnode *n = p->agg;
	int na = n->naggs, ng = n->ngroup, nt = p->nthr;
	uint32_t **pidx = calloc((size_t)nt, sizeof(uint32_t *));
	uint64_t(*poff)[MERGE_PARTS + 1] = calloc((size_t)nt, sizeof(*poff));
	uint8_t **own = calloc((size_t)nt, sizeof(uint8_t *));
	uint64_t *base = calloc((size_t)nt + 1, sizeof(uint64_t));
	uint64_t *eb = calloc((size_t)nt + 1, 8),
		 *ee = calloc((size_t)nt + 1, 8);
	atomic_int bad = 0, nomem = 0;
	bool text = false;
	rel *r = NULL;
	int rc = GPMDB_OK;

	if (!pidx || !poff || !own || !base || !eb || !ee) {
		rc = db_err(x->db, GPMDB_NOMEM, "out of memory");
		goto out;
	}
	for (int c = 0; c < n->ncols; c++)
		text |= n->ty[c].t == BC_T_TEXT;
	if (merge_ordered(p, th, eb, ee)) {
		for (int t = 0; t < nt && rc == GPMDB_OK; t++) {
			if (!(own[t] = malloc(th[t].g.n + 1)))
				rc =
				    db_err(x->db, GPMDB_NOMEM, "out of memory");
			else
				memset(own[t], 1, th[t].g.n + 1);
		}
		if (!rc && !merge_split(p, th, own, eb, ee))
			rc = PIPE_DECLINE;
		if (rc)
			goto out;
		goto owners;
	}
	/* each thread's groups by partition (counting sort) */
#pragma omp parallel for num_threads(nt) schedule(static, 1)
	for (int t = 0; t < nt; t++) {
		pgroups *g = &th[t].g;
		uint64_t cnt[MERGE_PARTS] = {0};
		pidx[t] = malloc(g->n * 4 + 4);
		own[t] = pipe_zalloc(g->n + 1);
		if (!pidx[t] || !own[t]) {
			atomic_store(&nomem, 1);
			continue;
		}
		for (uint64_t e = 0; e < g->n; e++)
			cnt[g->hash[e] >> 58]++;
		poff[t][0] = 0;
		for (int q = 0; q < MERGE_PARTS; q++)
			poff[t][q + 1] = poff[t][q] + cnt[q];
		uint64_t at[MERGE_PARTS];
		memcpy(at, poff[t], sizeof(at));
		for (uint64_t e = 0; e < g->n; e++)
			pidx[t][at[g->hash[e] >> 58]++] = (uint32_t)e;
	}
	if (atomic_load(&nomem)) {
		rc = db_err(x->db, GPMDB_NOMEM, "out of memory");
		goto out;
	}
	/* each partition: owners and merges, threads in order */
#pragma omp parallel for num_threads(nt) schedule(dynamic, 1)
	for (int q = 0; q < MERGE_PARTS; q++) {
		uint64_t total = 0, ns = 64, *slot;
		for (int t = 0; t < nt; t++)
			total += poff[t][q + 1] - poff[t][q];
		while (ns < 2 * total)
			ns *= 2;
		if (!(slot = pipe_zalloc(ns * 8))) {
			atomic_store(&nomem, 1);
			continue;
		}
		for (int t = 0; t < nt; t++) {
			pgroups *g = &th[t].g;
			for (uint64_t k = poff[t][q]; k < poff[t][q + 1]; k++) {
				uint32_t e = pidx[t][k];
				uint64_t hv = g->hash[e], s = hv & (ns - 1), v;
				for (; (v = slot[s]); s = (s + 1) & (ns - 1)) {
					int ot = (int)(v >> 40);
					uint64_t oe =
					    (v & ((1ull << 40) - 1)) - 1;
					pgroups *og = &th[ot].g;
					if (og->hash[oe] == hv &&
					    (!ng || exec_keys_eq(og->keys, oe,
								 g->keys, e)))
						break;
				}
				if (!v) {
					slot[s] = (uint64_t)t << 40 | (e + 1);
					own[t][e] = 1;
					continue;
				}
				int ot = (int)(v >> 40);
				uint64_t oe = (v & ((1ull << 40) - 1)) - 1;
				if (!agg_merge_all(n->aggs, na,
						   &th[ot].g.st[oe * na],
						   &g->st[(uint64_t)e * na]))
					atomic_store(&bad, 1);
			}
		}
		free(slot);
	}
	if (atomic_load(&nomem)) {
		rc = db_err(x->db, GPMDB_NOMEM, "out of memory");
		goto out;
	}
	if (atomic_load(&bad)) {
		rc = PIPE_DECLINE;
		goto out;
	}
	/* the owners in (thread, group) order */
owners:
	for (int t = 0; t < nt; t++) {
		uint64_t c = 0;
		for (uint64_t e = 0; e < th[t].g.n; e++)
			c += own[t][e];
		base[t + 1] = base[t] + c;
	}
	if (!(r = exec_rel_like(x, p->agg)) ||
	    (rc = rel_reserve(r, base[nt] ? base[nt] : 1))) {
		rc = rc ? rc : x->db->errcode;
		goto out;
	}
	atomic_int frc = GPMDB_OK;
#pragma omp parallel for num_threads(nt) schedule(static, 1) if (!text)
	for (int t = 0; t < nt; t++) {
		pgroups *g = &th[t].g;
		uint64_t row = base[t];
		for (uint64_t e = 0; e < g->n && !atomic_load(&frc); e++) {
			int erc = GPMDB_OK;
			if (!own[t][e])
				continue;
			for (int k = 0; k < ng && !erc; k++) {
				sval v;
				rel_get(g->keys, k, e, &v);
				erc = rel_set(r, k, row, &v);
			}
			for (int a = 0; a < na && !erc; a++)
				erc = agg_final(text ? x : NULL, &n->aggs[a],
						&g->st[e * na + a], r, ng + a,
						row);
			if (erc)
				atomic_store(&frc, erc);
			row++;
		}
	}
	if ((rc = atomic_load(&frc))) {
		rc = db_err(x->db, rc, "out of memory");
		goto out;
	}
	r->nrows = base[nt];
	*out = r;
	r = NULL;
out:
	rel_free(r);
	for (int t = 0; t < nt && pidx; t++)
		free(pidx[t]);
	for (int t = 0; t < nt && own; t++)
		free(own[t]);
	free(pidx);
	free(poff);
	free(own);
	free(base);
	free(eb);
	free(ee);
	return rc;
}

int merge_agg(pipe *p, pthr *th, rel **out)
{
	exec_ctx *x = p->x;
	const pnode *n = p->agg;
	int na = n->naggs, ng = n->ngroup, rc = GPMDB_OK;
	pgroups gl;
	size_t bytes = 0;
	rel *r = NULL;

	for (int t = 0; t < p->nthr; t++)
		bytes += th[t].g.cap * ((size_t)na * sizeof(aggst) + 16) +
			 th[t].g.nslot * 8;
	if ((rc = exec_mem(x, bytes))) {
		x->mem -= bytes;
		return rc;
	}
	uint64_t total = 0;
	for (int t = 0; t < p->nthr; t++)
		total += th[t].g.n;
	if (p->nthr > 1 && total >= pipe_small(MERGE_PAR_MIN) && ng) {
		rc = merge_agg_par(p, th, out);
		x->mem -= bytes;
		return rc;
	}
	if (groups_init(&gl, n)) {
		groups_free(&gl, na);
		x->mem -= bytes;
		return db_err(x->db, GPMDB_NOMEM, "out of memory");
	}
	for (int t = 0; t < p->nthr && !rc; t++) {
		pgroups *l = &th[t].g;
		for (uint64_t e = 0; e < l->n && !rc; e++) {
			int64_t g = groups_find(&gl, l->keys, e, l->hash[e],
						na ? na : 1);
			if (g < 0) {
				rc =
				    db_err(x->db, GPMDB_NOMEM, "out of memory");
				break;
			}
			if (!agg_merge_all(n->aggs, na,
					   &gl.st[(uint64_t)g * (size_t)na],
					   &l->st[e * (size_t)na]))
				rc = PIPE_DECLINE;
		}
	}
	/* no group by: one row even without input */
	if (!rc && !ng && !gl.n &&
	    groups_find(&gl, gl.keys, 0, 0, na ? na : 1) < 0)
		rc = db_err(x->db, GPMDB_NOMEM, "out of memory");
	if (!rc &&
	    (!(r = exec_rel_like(x, p->agg)) || (rc = rel_reserve(r, gl.n))))
		rc = rc ? rc : x->db->errcode;
	for (uint64_t g = 0; g < gl.n && !rc; g++) {
		for (int k = 0; k < ng && !rc; k++) {
			sval v;
			rel_get(gl.keys, k, g, &v);
			rc = rel_set(r, k, g, &v);
		}
		for (int a = 0; a < na && !rc; a++)
			rc =
			    agg_final(x, &n->aggs[a],
				      &gl.st[g * (size_t)na + a], r, ng + a, g);
	}
	if (!rc) {
		r->nrows = gl.n;
		*out = r;
		r = NULL;
	}
	rel_free(r);
	groups_free(&gl, na);
	x->mem -= bytes;
	return rc;
}

/* The second phase of a DISTINCT aggregate (pipe.c, pipe_distinct): the
 * distinct (keys, argument) rows of pairs aggregated by the keys into
 * AGG n's layout, groups in the order of their first pair. */
int agg_distinct_finish(exec_ctx *x, const pnode *n, rel *pairs, rel **out)
{
	int ng = n->ngroup, na = n->naggs, rc = GPMDB_OK;
	rel kv = *pairs, *r = NULL;
	pgroups g;

	*out = NULL;
	kv.ncols = ng; /* the keys: the first ng columns */
	if (groups_init(&g, n)) {
		groups_free(&g, na);
		return db_err(x->db, GPMDB_NOMEM, "out of memory");
	}
	/* no GROUP BY: one group even without rows */
	if (!ng && groups_find(&g, &kv, 0, 0, na) < 0)
		rc = db_err(x->db, GPMDB_NOMEM, "out of memory");
	for (uint64_t i = 0; i < pairs->nrows && !rc; i++) {
		int64_t e =
		    groups_find(&g, &kv, i, exec_hash_row(&kv, ng, i), na);
		sval v;
		if (e < 0) {
			rc = db_err(x->db, GPMDB_NOMEM, "out of memory");
			break;
		}
		rel_get(pairs, ng, i, &v);
		for (int a = 0; a < na && !rc; a++)
			rc = agg_step(x, &n->aggs[a],
				      &g.st[(uint64_t)e * (size_t)na + a], &v,
				      NULL);
	}
	if (!rc && (!(r = rel_new(x, n->ncols, n->ty)) ||
		    rel_reserve(r, g.n ? g.n : 1)))
		rc = db_err(x->db, GPMDB_NOMEM, "out of memory");
	for (uint64_t e = 0; e < g.n && !rc; e++) {
		for (int k = 0; k < ng && !rc; k++) {
			sval v;
			rel_get(g.keys, k, e, &v);
			rc = rel_set(r, k, e, &v);
		}
		for (int a = 0; a < na && !rc; a++)
			rc = agg_final(x, &n->aggs[a],
				       &g.st[e * (size_t)na + a], r, ng + a, e);
		if (!rc)
			r->nrows = e + 1;
	}
	groups_free(&g, na);
	if (rc) {
		rel_free(r);
		return rc;
	}
	*out = r;
	return GPMDB_OK;
}
