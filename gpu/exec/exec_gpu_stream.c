/*
 * exec_gpu_stream.c - streamed scans: a chain over a table whose columns
 * do not fit the cache, run window by window (xg_stream), FILTER and
 * PROJECT rows appended in row order, AGG groups merged across windows
 * (xg_sagg_*); an AGG whose aggregates do not merge (DISTINCT, bare
 * columns) in parts by its GROUP BY keys (xg_agg_parts_run) or, without
 * keys, by its DISTINCT argument (xg_dparts_run), over a host relation
 * (xg_agg_parts) or the AGG's input streamed to the host first
 * (xg_stream_parts).
 */
#include "exec_gpu_int.h"

#include "../../engine/exec/exec_int.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

/* ---- streamed scans: running the chain window by window -------------- */

/* Appends the rows of s to d (same column types); s's text moves to d. */
static int xg_rel_append(rel *d, rel *s)
{
	uint64_t n = s->nrows, at = d->nrows;
	int rc;

	if (!n)
		return GPMDB_OK;
	if ((rc = rel_reserve(d, n)))
		return rc;
	for (int c = 0; c < d->ncols; c++) {
		size_t w = rel_width(d->cols[c].ty.t);
		memcpy((char *)d->cols[c].data + at * w, s->cols[c].data,
		       n * w);
		memcpy(d->cols[c].nulls + at, s->cols[c].nulls, n);
	}
	rel_adopt(d, s);
	d->nrows += n;
	return GPMDB_OK;
}

/*
 * The merge of a streamed AGG: groups in the order of their first row
 * (windows in row order, a window's groups by first row: a group's first
 * row is in the first window that has it), found by a hash of their key
 * values; r holds the keys (and, at the end, the results).
 */
typedef struct xg_sagg {
	rel *r;
	uint64_t ngr, cap;
	xg_acc *acc; /* ngr x naggs */
	uint64_t *hv;
	uint32_t *slot; /* open addressing: group + 1, 0 empty */
	uint64_t nslot;
	int *op; /* each aggregate's GPU op */
	bool have_op;
	/* merging parts split by the values of a scalar AGG's DISTINCT
	 * argument (xg_dparts_run), not row windows: a part's rows are not
	 * a range of the CPU's order, so integer sums are checked at the
	 * end (xg_sagg_finish) against hi and lo (na each): bounds of the
	 * sums of their positive and of their negative values */
	bool parts;
	__int128 *hi, *lo;
} xg_sagg;

static void xg_sagg_free(xg_sagg *sa)
{
	free(sa->hi);
	free(sa->lo);
	free(sa->acc);
	free(sa->hv);
	free(sa->slot);
	free(sa->op);
}

static uint64_t xg_sv_hash(uint64_t h, const sval *v)
{
	uint64_t u;

	switch (v->t) {
	case BC_T_NULL:
		u = 0x12345;
		break;
	case BC_T_REAL: {
		double d = v->u.r;
		if (d == 0)
			d = 0; /* -0.0 and 0.0 are one group */
		memcpy(&u, &d, 8);
		break;
	}
	case BC_T_TEXT:
		u = 1469598103934665603ull;
		for (uint32_t k = 0; k < v->u.s.len; k++)
			u = (u ^ (uint8_t)v->u.s.ptr[k]) * 1099511628211ull;
		break;
	default:
		u = (uint64_t)v->u.i;
	}
	h ^= u + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
	return h * 0xff51afd7ed558ccdull;
}

static int xg_sagg_grow_slots(exec_ctx *x, xg_sagg *sa)
{
	uint64_t ns = sa->nslot ? 2 * sa->nslot : 64;
	uint32_t *sl = calloc(ns, sizeof(uint32_t));

	if (!sl)
		return db_err(x->db, GPMDB_NOMEM, "out of memory");
	for (uint64_t g = 0; g < sa->ngr; g++) {
		uint64_t i = sa->hv[g] & (ns - 1);
		while (sl[i])
			i = (i + 1) & (ns - 1);
		sl[i] = (uint32_t)(g + 1);
	}
	free(sa->slot);
	sa->slot = sl;
	sa->nslot = ns;
	return GPMDB_OK;
}

/* The group of key values kv (found or appended); *gid its index. */
static int xg_sagg_find(exec_ctx *x, xg_sagg *sa, int ng, int na,
			const sval *kv, uint64_t *gid)
{
	uint64_t h = 0, i;
	int rc;

	for (int k = 0; k < ng; k++)
		h = xg_sv_hash(h, &kv[k]);
	if ((sa->ngr + 1) * 2 > sa->nslot && (rc = xg_sagg_grow_slots(x, sa)))
		return rc;
	for (i = h & (sa->nslot - 1); sa->slot[i];
	     i = (i + 1) & (sa->nslot - 1)) {
		uint64_t g = sa->slot[i] - 1;
		bool eq = sa->hv[g] == h;
		for (int k = 0; k < ng && eq; k++) {
			sval a;
			rel_get(sa->r, k, g, &a);
			eq = sval_cmp(&a, &kv[k]) == 0;
		}
		if (eq) {
			*gid = g;
			return GPMDB_OK;
		}
	}
	if (sa->ngr >= UINT32_MAX - 1)
		return db_err(x->db, GPMDB_UNSUPPORTED,
			      "GPU stream: more than 2^32 groups");
	if (sa->ngr == sa->cap) {
		uint64_t c2 = sa->cap ? 2 * sa->cap : 64;
		xg_acc *a2 =
		    realloc(sa->acc, sizeof(xg_acc) * c2 * (size_t)(na + 1));
		if (a2)
			sa->acc = a2;
		uint64_t *h2 = a2 ? realloc(sa->hv, 8 * c2) : NULL;
		if (!h2)
			return db_err(x->db, GPMDB_NOMEM, "out of memory");
		sa->hv = h2;
		sa->cap = c2;
	}
	if ((rc = rel_reserve(sa->r, 1)))
		return rc;
	for (int k = 0; k < ng; k++)
		if ((rc = rel_set(sa->r, k, sa->ngr, &kv[k])))
			return rc;
	memset(&sa->acc[sa->ngr * (uint64_t)na], 0, sizeof(xg_acc) * na);
	sa->hv[sa->ngr] = h;
	sa->slot[i] = (uint32_t)(sa->ngr + 1);
	*gid = sa->ngr++;
	sa->r->nrows = sa->ngr;
	return GPMDB_OK;
}

#define XG_I64_MAX ((__int128)INT64_MAX)
#define XG_I64_MIN ((__int128)INT64_MIN)

/*
 * Overflow of integer sums across windows.  The CPU raises "integer
 * overflow" when a partial sum of a group (in row order) leaves int64.
 * A window gives each group its exact 128-bit total T and whether any
 * partial sum inside the window, counted from the window's start, left
 * int64 (one flag per aggregate).  With B the group's total of the
 * earlier windows, the CPU's partial sums in the window are B + the
 * window's.  So: B + T outside int64 is the CPU's error (that partial
 * sum is one of the CPU's); B = 0 for every group of the window makes
 * the flag exact.  Otherwise a second pass gives each group's min and
 * max value m, M in the window (count c): its partial sums lie in
 * [max(c min(m,0), T - c max(M,0)), min(c max(M,0), T - c min(m,0))]
 * (between the sums of its negative and of its positive values), exact
 * when the values have one sign.  Groups this bound proves safe are;
 * when the others all have B = 0 the flag decides; otherwise the answer
 * is not known on the GPU: GPMDB_UNSUPPORTED (the CPU runs the query,
 * counted, or gpu_strict's error).  Parts split by value (sa->parts)
 * are no range of rows: only the bounds are summed here, checked at the
 * end (xg_sagg_parts_check).
 */
static int xg_sagg_check(exec_ctx *x, pnode *n, xg_src *s,
			 const gpu_sortcol *kc, const gpu_agg *ga,
			 const gpu_groups *g, const uint32_t *perm,
			 const uint64_t *gid)
{
	xg_sagg *sa = s->sagg;
	int ng = n->ngroup, na = n->naggs, nchk = 0, rc = GPMDB_OK;
	uint32_t nw = g->ngroups, *perm2 = NULL;
	int *chk = calloc((size_t)na + 1, sizeof(int));
	gpu_agg *g2a = calloc(2 * (size_t)na + 1, sizeof(gpu_agg));
	gpu_groups g2;
	bool anyb = false;
	char err[300];

	memset(&g2, 0, sizeof(g2));
	if (!chk || !g2a) {
		rc = db_err(x->db, GPMDB_NOMEM, "out of memory");
		goto out;
	}
	for (int a = 0; a < na; a++)
		if (ga[a].op == GPU_AGG_SUM_I && n->aggs[a].fn == AGG_SUM &&
		    n->aggs[a].res.t != BC_T_REAL)
			chk[nchk++] = a;
	/* parts: only the bounds below, the total at the end */
	for (int i = 0; i < nchk && !sa->parts; i++)
		for (uint32_t j = 0; j < nw; j++) {
			const gpu_agg_res *res = &g->res[chk[i]];
			__int128 b = sa->acc[gid[j] * na + chk[i]].sum,
				 t = b + xg_sum128(res, perm[j]);
			if (t > XG_I64_MAX || t < XG_I64_MIN) {
				rc = db_err(x->db, GPMDB_ERROR,
					    "integer overflow");
				goto out;
			}
			anyb |= b != 0;
		}
	if (!anyb && !sa->parts) {
		for (int i = 0; i < nchk; i++)
			if (g->res[chk[i]].overflow) {
				rc = db_err(x->db, GPMDB_ERROR,
					    "integer overflow");
				goto out;
			}
		goto out;
	}
	if (!nchk)
		goto out;
	for (int i = 0; i < nchk; i++) {
		g2a[2 * i].op = GPU_AGG_MIN_I;
		g2a[2 * i].arg = ga[chk[i]].arg;
		g2a[2 * i + 1].op = GPU_AGG_MAX_I;
		g2a[2 * i + 1].arg = ga[chk[i]].arg;
	}
	if ((rc = gpu_group_agg(kc, ng, xg_rows(s), g2a, 2 * nchk, &g2, err,
				sizeof(err)))) {
		rc = xg_gerr(x, rc, "aggregate", err);
		goto out;
	}
	/* the same groups: matched by their first rows */
	if (g2.ngroups != nw || !(perm2 = malloc(4 * (size_t)nw + 4))) {
		rc = g2.ngroups != nw
			 ? db_err(x->db, GPMDB_INTERNAL,
				  "GPU stream: %u groups, then %u", nw,
				  g2.ngroups)
			 : db_err(x->db, GPMDB_NOMEM, "out of memory");
		goto out;
	}
	if (ng)
		xg_group_order(&g2, nw, perm2);
	else
		for (uint32_t j = 0; j < nw; j++)
			perm2[j] = j;
	for (uint32_t j = 0; ng && j < nw; j++)
		if (g2.first[perm2[j]] != g->first[perm[j]]) {
			rc = db_err(x->db, GPMDB_INTERNAL,
				    "GPU stream: groups differ between passes");
			goto out;
		}
	for (int i = 0; i < nchk; i++) {
		const gpu_agg_res *res = &g->res[chk[i]];
		bool unsafe = false, unsafe_b = false;
		for (uint32_t j = 0; j < nw; j++) {
			uint32_t gi = perm[j], gj = perm2[j];
			__int128 c = (__int128)res->cnt[gi],
				 b = sa->acc[gid[j] * na + chk[i]].sum,
				 t = xg_sum128(res, gi);
			int64_t mn = g2.res[2 * i].i64[gj],
				mx = g2.res[2 * i + 1].i64[gj];
			if (!c)
				continue;
			__int128 cmn = c * (mn < 0 ? mn : 0),
				 cmx = c * (mx > 0 ? mx : 0);
			__int128 hi = cmx < t - cmn ? cmx : t - cmn;
			__int128 lo = cmn > t - cmx ? cmn : t - cmx;
			if (sa->parts) {
				/* hi bounds the part's positive values' sum,
				 * lo its negative values' */
				sa->hi[chk[i]] += hi;
				sa->lo[chk[i]] += lo;
				continue;
			}
			if (b + hi <= XG_I64_MAX && b + lo >= XG_I64_MIN)
				continue;
			unsafe = true;
			unsafe_b |= b != 0;
		}
		if (!unsafe)
			continue;
		if (!unsafe_b) {
			if (res->overflow) {
				rc = db_err(x->db, GPMDB_ERROR,
					    "integer overflow");
				goto out;
			}
			continue;
		}
		rc = db_err(x->db, GPMDB_UNSUPPORTED,
			    "GPU stream: an integer sum near the int64 limit "
			    "over row windows (its partial sums across "
			    "windows cannot be checked on the GPU)");
		goto out;
	}
out:
	gpu_group_free(&g2);
	free(perm2);
	free(chk);
	free(g2a);
	return rc;
}

/*
 * xg_agg's hook for a streamed scan: merges one window's groups g (its
 * keys: the one integer key in g->key, else read at the groups' first
 * rows by xg_group_keys) into s->sagg.
 */
int xg_sagg_window(exec_ctx *x, pnode *n, xg_src *s, const struct xg_out *key,
		   const gpu_sortcol *kc, const gpu_agg *ga,
		   const gpu_groups *g)
{
	xg_sagg *sa = s->sagg;
	int ng = n->ngroup, na = n->naggs, rc = GPMDB_OK;
	uint32_t nw = g->ngroups, *perm = malloc(4 * (size_t)nw + 4);
	uint64_t *gid = malloc(8 * (size_t)nw + 8);
	sval *kv = calloc((size_t)ng + 1, sizeof(sval));
	rel *kr = NULL;
	bool ztie = false;

	if (!perm || !gid || !kv) {
		rc = db_err(x->db, GPMDB_NOMEM, "out of memory");
		goto out;
	}
	if (!sa->have_op) {
		if (!(sa->op = calloc((size_t)na + 1, sizeof(int)))) {
			rc = db_err(x->db, GPMDB_NOMEM, "out of memory");
			goto out;
		}
		for (int a = 0; a < na; a++)
			sa->op[a] = ga[a].op;
		sa->have_op = true;
	}
	if (!nw)
		goto out;
	if (ng)
		xg_group_order(g, nw, perm);
	else
		for (uint32_t j = 0; j < nw; j++)
			perm[j] = j;
	if (ng && !g->key) {
		if (!(kr = rel_new(x, n->ncols, n->ty)) ||
		    (rc = rel_reserve(kr, nw))) {
			rc = rc		      ? rc
			     : x->db->errcode ? x->db->errcode
					      : GPMDB_NOMEM;
			goto out;
		}
		if ((rc = xg_group_keys(x, n, s, key, kc, g->first, perm, nw,
					kr)))
			goto out;
	}
	for (uint32_t j = 0; j < nw && !rc; j++) {
		uint32_t gi = perm[j];
		if (ng && g->key) {
			kv[0] = xg_ival(n->ty[0], g->key[gi]);
			if (g->key_null[gi])
				kv[0].t = BC_T_NULL;
		} else {
			for (int k = 0; k < ng; k++)
				rel_get(kr, k, j, &kv[k]);
		}
		rc = xg_sagg_find(x, sa, ng, na, kv, &gid[j]);
	}
	if (rc || (rc = xg_sagg_check(x, n, s, kc, ga, g, perm, gid)))
		goto out;
	for (uint32_t j = 0; j < nw; j++) {
		uint32_t gi = perm[j];
		for (int a = 0; a < na; a++) {
			const gpu_agg_res *res = &g->res[a];
			xg_acc *ac = &sa->acc[gid[j] * na + a];
			uint64_t c = res->cnt[gi];
			bool first = ac->cnt == 0;
			if (!c)
				continue;
			/* parts are no ranges of rows: which of -0.0 and 0.0
			 * came first (the CPU's min or max) is not known */
			if (sa->parts && !first &&
			    (ga[a].op == GPU_AGG_MIN_R ||
			     ga[a].op == GPU_AGG_MAX_R) &&
			    res->f64[gi] == ac->f &&
			    signbit(res->f64[gi]) != signbit(ac->f))
				ztie = true;
			ac->cnt += c;
			switch (ga[a].op) {
			case GPU_AGG_COUNT_STAR:
			case GPU_AGG_COUNT:
				break;
			case GPU_AGG_SUM_I:
				ac->sum += xg_sum128(res, gi);
				break;
			case GPU_AGG_SUM_R:
				ac->f += res->f64[gi];
				break;
			/* the earlier window's value on ties, as the CPU
			 * keeps the first of equal values */
			case GPU_AGG_MIN_I:
				if (first || res->i64[gi] < ac->mm)
					ac->mm = res->i64[gi];
				break;
			case GPU_AGG_MAX_I:
				if (first || res->i64[gi] > ac->mm)
					ac->mm = res->i64[gi];
				break;
			case GPU_AGG_MIN_R:
				if (first || res->f64[gi] < ac->f)
					ac->f = res->f64[gi];
				break;
			case GPU_AGG_MAX_R:
				if (first || res->f64[gi] > ac->f)
					ac->f = res->f64[gi];
				break;
			}
		}
	}
	if (ztie)
		rc = db_err(x->db, GPMDB_UNSUPPORTED,
			    "GPU stream: min or max of REAL values with both "
			    "-0.0 and 0.0 over parts split by a DISTINCT "
			    "argument (which came first is not known on the "
			    "GPU)");
out:
	free(perm);
	free(gid);
	free(kv);
	rel_free(kr);
	return rc;
}

/* A merged integer sum (not REAL) that the CPU checks for overflow. */
static bool xg_sagg_checked(const xg_sagg *sa, const aggdef *ad, int a)
{
	return sa->op && sa->op[a] == GPU_AGG_SUM_I && ad->fn == AGG_SUM &&
	       ad->res.t != BC_T_REAL;
}

/*
 * Integer sums merged over parts (sa->parts): every partial sum of the
 * CPU's order lies between the sum of the negative and the sum of the
 * positive values (bounded by sa->lo, sa->hi), and the total is its last
 * partial sum.  A total outside int64 is the CPU's error (any such sum:
 * the CPU fails whichever comes first); bounds inside int64 prove there
 * is none; otherwise the GPU cannot tell and says so.
 */
static int xg_sagg_parts_check(exec_ctx *x, pnode *n, xg_sagg *sa)
{
	int na = n->naggs;

	for (int a = 0; sa->ngr && a < na; a++) {
		__int128 t = sa->acc[a].sum;
		if (xg_sagg_checked(sa, &n->aggs[a], a) &&
		    (t > XG_I64_MAX || t < XG_I64_MIN))
			return db_err(x->db, GPMDB_ERROR, "integer overflow");
	}
	for (int a = 0; sa->ngr && a < na; a++)
		if (xg_sagg_checked(sa, &n->aggs[a], a) &&
		    (sa->hi[a] > XG_I64_MAX || sa->lo[a] < XG_I64_MIN))
			return db_err(
			    x->db, GPMDB_UNSUPPORTED,
			    "GPU stream: an integer sum%s near the "
			    "int64 limit over parts split by a "
			    "DISTINCT argument (its partial sums in "
			    "row order cannot be checked on the "
			    "GPU)",
			    n->aggs[a].distinct ? " of DISTINCT values" : "");
	return GPMDB_OK;
}

/* The results of the merged groups into sa->r (as xg_agg's). */
static int xg_sagg_finish(exec_ctx *x, pnode *n, xg_sagg *sa)
{
	int ng = n->ngroup, na = n->naggs, rc = GPMDB_OK;
	rel *r = sa->r;
	xg_acc zero;

	memset(&zero, 0, sizeof(zero));
	if (sa->parts && (rc = xg_sagg_parts_check(x, n, sa)))
		return rc;
	if (!ng && !sa->ngr) { /* the empty scalar aggregate: one row */
		if ((rc = rel_reserve(r, 1)))
			return rc;
		r->nrows = 1;
	}
	for (uint64_t row = 0; row < r->nrows && !rc; row++) {
		for (int a = 0; a < na && !rc; a++) {
			const aggdef *ad = &n->aggs[a];
			const xg_acc *ac =
			    row < sa->ngr ? &sa->acc[row * na + a] : &zero;
			int op = sa->op ? sa->op[a] : GPU_AGG_COUNT_STAR;
			if (ad->fn == AGG_ANY || ad->fn == AGG_GROUP_CONCAT)
				return db_err(x->db, GPMDB_UNSUPPORTED,
					      "GPU stream: aggregate %d",
					      (int)ad->fn);
			rc = xg_agg_value(x, ad, op, ac, NULL, r, ng + a, row);
		}
	}
	return rc;
}

/* Process-wide (as the cache's counters): PRAGMA gpu_stats. */
uint64_t xg_stream_queries, xg_stream_windows, xg_stream_shrinks,
    xg_agg_parts_runs, xg_stream_agg_parts, xg_stream_sels;

static int xg_stream_parts(exec_ctx *x, pnode *n, pnode *src, rel *hin,
			   int why_rc, rel **out);

/* Whether aggregate ad merges across row windows: not DISTINCT (but
 * min and max of DISTINCT values are those of all values), not a bare
 * column, not group_concat. */
static bool xg_agg_merges(const aggdef *ad)
{
	return (!ad->distinct || ad->fn == AGG_MIN || ad->fn == AGG_MAX) &&
	       ad->fn != AGG_ANY && ad->fn != AGG_GROUP_CONCAT;
}

/* n's aggregates can be merged across windows (else an error naming
 * why the windows were needed). */
static int xg_stream_aggs_ok(exec_ctx *x, pnode *n, const char *because)
{
	for (int a = 0; n->kind == PN_AGG && a < n->naggs; a++) {
		const aggdef *ad = &n->aggs[a];
		if (!xg_agg_merges(ad))
			return db_err(x->db, GPMDB_UNSUPPORTED,
				      "GPU stream: %s and %s aggregates "
				      "are not merged across row windows",
				      because,
				      ad->distinct	  ? "DISTINCT"
				      : ad->fn == AGG_ANY ? "bare-column"
							  : "group_concat");
	}
	return GPMDB_OK;
}

/* n's chain over the windows w[0..nw) in order, into *out. */
static int xg_stream_windows_run(exec_ctx *x, pnode *n, const xg_win *w,
				 uint32_t nw, rel **out)
{
	xg_sagg sa;
	rel *r = NULL;
	int rc = GPMDB_OK;

	memset(&sa, 0, sizeof(sa));
	xg_stream_queries++;
	xg_stream_windows += nw;
	if (!(r = rel_new(x, n->ncols, n->ty)))
		return x->db->errcode ? x->db->errcode : GPMDB_NOMEM;
	sa.r = r;
	for (uint32_t i = 0; i < nw && !rc; i++) {
		xg_src s;
		rel *wr = NULL;
		rc = xg_prepare_win(x, n, &s, &w[i]);
		if (!rc) {
			if (n->kind == PN_AGG) {
				s.sagg = &sa;
				rc = xg_agg(x, n, &s, &wr, NULL);
			} else if (n->kind == PN_PROJECT) {
				rc = xg_project(x, n, &s, &wr);
			} else {
				rc = xg_filter_out(x, n, &s, &wr);
			}
		}
		xg_src_free(&s);
		if (!rc && wr)
			rc = xg_rel_append(r, wr);
		rel_free(wr);
	}
	if (!rc && n->kind == PN_AGG)
		rc = xg_sagg_finish(x, n, &sa);
	xg_sagg_free(&sa);
	if (rc) {
		rel_free(r);
		return rc;
	}
	*out = r;
	return GPMDB_OK;
}

/*
 * Whether a streamed run that failed with rc may go again with windows
 * div times smaller: it ran out of device memory (a window's operators
 * need several times its columns' bytes, and memory held by the
 * operators around this one is not known when the windows are cut),
 * and windows can still shrink.  The error is cleared (the windows'
 * columns are buffers of their own, freed with each window).
 */
#define XG_WIN_DIV_MAX 1024u
static bool xg_stream_again(exec_ctx *x, int rc, uint32_t div)
{
	/* XG_STREAM is a decline to its caller, not a shortage */
	if (rc != GPMDB_NOMEM || !xg_too_large(x, rc) ||
	    div >= XG_WIN_DIV_MAX || !xg_shrink_begin())
		return false;
	db_clear(x->db);
	xg_stream_shrinks++;
	return true;
}

/*
 * n's chain over a table scan whose columns do not fit the cache (or
 * whose load ran out of device memory): window by window (xg_windows),
 * each window's columns loaded into temporary device buffers
 * (gcache_column_range), the chain run over them as over a cached
 * table.  FILTER and PROJECT rows are appended in row order (the CPU's
 * order); AGG results are merged by group (xg_sagg_window).  Row errors
 * come window by window, so the first in row order is reported.  An
 * AGG whose aggregates do not merge: xg_stream_parts.
 */
int xg_stream(exec_ctx *x, pnode *n, rel **out)
{
	char why[300];
	pnode *src = xg_source(x, n, why, sizeof(why));
	int rc = GPMDB_OK;

	if (!src || src->kind != PN_SCAN)
		return db_err(x->db, GPMDB_INTERNAL,
			      "GPU stream: the input is not a table scan");
	/* aggregates the windows cannot merge: the AGG's input to the host,
	 * then in parts */
	if ((rc = xg_stream_aggs_ok(x, n,
				    "the table's columns do not fit "
				    "the GPU cache")))
		return xg_stream_parts(x, n, src, NULL, rc, out);
	uint32_t nw_was = 0;
	for (uint32_t div = 4;; div *= 4) {
		xg_win *w = NULL;
		uint32_t nw = 0;
		if (!(rc = xg_windows(x, n, src, div, &w, &nw)))
			rc = xg_stream_windows_run(x, n, w, nw, out);
		free(w);
		/* one window already as small as windows get: no retry */
		if (nw == nw_was || !xg_stream_again(x, rc, div))
			return rc;
		nw_was = nw;
	}
}

/*
 * Filters over a scan whose columns do not fit the cache while the
 * columns their consumer reads do (TPC-H Q13 at SF30: o_comment, 2.2 GB
 * of text past what one load addresses, is read by the filter alone; the
 * join above reads o_custkey and o_orderkey): the filters run window by
 * window (each window's columns loaded for it alone), their selections
 * (rows among a window's live rows) shifted by the live rows before the
 * window into one selection of the table's rows, and s becomes the scan
 * with that selection, its other columns from the cache.  A join or an
 * aggregate above then runs on the device as over any filtered scan;
 * before, the windows' rows went to the host and the operator above ran
 * over a host relation (Q13: 12 s at SF30).  s is left as it was when
 * this does not apply (XG_STREAM) or fails; the caller streams then.
 */
int xg_stream_sel(exec_ctx *x, pnode *n, pnode **chain, int nchain, pnode *src,
		  xg_src *s)
{
	uint64_t rows = xg_scan_rows(x->db, src), before = 0, nsel = 0;
	uint32_t *sel = NULL, nw = 0;
	xg_win *w = NULL;
	char err[300];
	bool fits = false;
	int rc;

	if (!nchain || src->kind != PN_SCAN || rows > UINT32_MAX)
		return XG_STREAM;
	if ((rc = xg_fits_out(x, n, src, &fits)) || !fits)
		return rc ? rc : XG_STREAM;
	/* the selection first, so that the windows are cut from what is
	 * left */
	if ((rc = gpu_alloc((void **)&sel, 4 * rows + 4, err, sizeof(err))))
		return xg_gerr(x, rc, "stream selection", err);
	rc = xg_windows(x, n, src, 4, &w, &nw);
	for (uint32_t i = 0; i < nw && !rc; i++) {
		xg_src ws;
		memset(&ws, 0, sizeof(ws));
		ws.x = x;
		rc = xg_prepare_at(x, n, chain, nchain, src, &ws, &w[i]);
		uint32_t cnt = ws.sel ? ws.nsel : ws.nrows;
		if (!rc && before + w[i].live > rows)
			rc = db_err(x->db, GPMDB_INTERNAL,
				    "GPU stream selection: windows of more "
				    "than the table's %llu rows",
				    (unsigned long long)rows);
		if (!rc && !ws.sel && cnt)
			rc = db_err(x->db, GPMDB_INTERNAL,
				    "GPU stream selection: a window "
				    "without a selection");
		if (!rc &&
		    (rc = gpu_idx_shift(sel + nsel, ws.sel, cnt,
					(uint32_t)before, err, sizeof(err))))
			rc = xg_gerr(x, rc, "stream selection", err);
		nsel += cnt;
		before += w[i].live;
		xg_src_free(&ws);
	}
	if (!rc && before != rows)
		rc = db_err(x->db, GPMDB_INTERNAL,
			    "GPU stream selection: windows of %llu rows, "
			    "the table has %llu",
			    (unsigned long long)before,
			    (unsigned long long)rows);
	free(w);
	if (rc) {
		gpu_free(sel, NULL, 0);
		return rc;
	}
	xg_stream_queries++;
	xg_stream_windows += nw;
	xg_stream_sels++;
	gpu_free(s->sel, NULL, 0);
	s->scan = src;
	s->win = NULL;
	s->nrows = (uint32_t)rows;
	s->sel = sel;
	s->nsel = (uint32_t)nsel;
	return GPMDB_OK;
}

/* A host source's windows: w[0..nw), each a view of rows of the
 * source (its columns borrowed, in views and vc). */
typedef struct xg_hwin {
	xg_win *w;
	rel *views;
	rcol *vc;
	uint32_t nw;
} xg_hwin;

static void xg_hwin_free(xg_hwin *h)
{
	free(h->w);
	free(h->views);
	free(h->vc);
	memset(h, 0, sizeof(*h));
}

/*
 * A host source's rows in windows: as many rows as take 1/div of what
 * the cache can give the query (or of the free device memory when
 * less), at the average bytes of a row of in (every column, text
 * included), at least 1024 rows.  Each window is a view of in's rows
 * (its columns borrowed); the chain's filters run over each.  *nwin:
 * their number, also when there are too many.
 */
static int xg_host_windows(exec_ctx *x, rel *in, uint32_t div, xg_hwin *h,
			   uint64_t *nwin)
{
	uint64_t room = gcache_room(), bytes = 0, step, nw;
	uint64_t avail = gpu_mem_avail();

	memset(h, 0, sizeof(*h));
	if (avail < room)
		room = avail;
	bytes = exec_gpu_rel_bytes(in, in->ncols);
	room = room / div < XG_WIN_MIN_BUDGET ? XG_WIN_MIN_BUDGET : room / div;
	step = bytes ? (uint64_t)((double)room / bytes * in->nrows) : in->nrows;
	step = step < 1024 ? 1024 : step;
	nw = in->nrows ? (in->nrows + step - 1) / step : 1;
	*nwin = nw;
	if (nw > UINT32_MAX)
		return db_err(x->db, GPMDB_UNSUPPORTED,
			      "GPU stream: more than 2^32 windows");
	h->w = calloc(nw, sizeof(xg_win));
	h->views = calloc(nw, sizeof(rel));
	h->vc = calloc(nw * ((uint64_t)in->ncols + 1), sizeof(rcol));
	if (!h->w || !h->views || !h->vc) {
		xg_hwin_free(h);
		return db_err(x->db, GPMDB_NOMEM, "out of memory");
	}
	for (uint64_t i = 0; i < nw; i++) {
		uint64_t lo = i * step,
			 m = in->nrows - lo < step ? in->nrows - lo : step;
		exec_gpu_rel_view(in, lo, m,
				  h->vc + i * ((uint64_t)in->ncols + 1),
				  &h->views[i]);
		h->w[i].row0 = lo;
		h->w[i].nrows = h->w[i].live = m;
		h->w[i].host = &h->views[i];
	}
	h->nw = (uint32_t)nw;
	return GPMDB_OK;
}

static int xg_stream_host_div(exec_ctx *x, pnode *n, rel *in, uint32_t div,
			      rel **out, uint64_t *nwin)
{
	xg_hwin h;
	int rc;

	if ((rc = xg_host_windows(x, in, div, &h, nwin)))
		return rc;
	rc = xg_stream_windows_run(x, n, h.w, h.nw, out);
	/* the result's text may point into in's (keys read at a group's
	 * first row) */
	if (!rc)
		rel_adopt(*out, in);
	xg_hwin_free(&h);
	return rc;
}

/* Sets up s over the host rows w->host as the rows n reads itself: no
 * filter of n's chain runs (they ran before, or there are none). */
static int xg_prepare_host(exec_ctx *x, pnode *n, xg_src *s, const xg_win *w)
{
	memset(s, 0, sizeof(*s));
	s->x = x;
	return xg_prepare_at(x, n, NULL, 0, n->l, s, w);
}

/* A part of in, its rows idx[0..m) (into *prel), aggregated by n as a
 * whole GPU aggregate: its groups into *wr with their first rows in
 * *firsts (xg_agg_parts_run), or merged into sa (xg_dparts_run). */
static int xg_part_agg(exec_ctx *x, pnode *n, rel *in, const uint32_t *idx,
		       uint64_t m, uint32_t **firsts, xg_sagg *sa, rel **prel,
		       rel **wr)
{
	xg_src s;
	xg_win w;
	int rc;

	if ((rc = xo_rows_rel(x, in, NULL, idx, m, prel)))
		return rc;
	memset(&w, 0, sizeof(w));
	w.nrows = w.live = m;
	w.host = *prel;
	rc = xg_prepare_host(x, n, &s, &w);
	if (!rc) {
		s.firsts = firsts;
		s.sagg = sa;
		rc = xg_agg(x, n, &s, wr, NULL);
	}
	xg_src_free(&s);
	xo_part_passes++;
	return rc;
}

/* One try of xg_agg_parts: np parts of in split by kv's columns (*biggest:
 * the largest part's rows). */
static int xg_agg_parts_run(exec_ctx *x, pnode *n, rel *in, const rel *kv,
			    uint32_t np, uint64_t *biggest, rel **out)
{
	xo_split sp;
	rel *all = NULL;
	uint32_t *first = NULL, *perm = NULL;
	int rc;

	if ((rc = xo_split_rows(x, kv, kv->ncols, np, false, &sp)))
		return rc;
	*biggest = xo_split_max(&sp);
	all = rel_new(x, n->ncols, n->ty);
	first = malloc(sizeof(uint32_t) * (in->nrows + 1));
	if (!all || !first) {
		rc = x->db->errcode
			 ? x->db->errcode
			 : db_err(x->db, GPMDB_NOMEM, "out of memory");
		goto out;
	}
	xo_part_ops++;
	for (uint32_t p = 0; p < np && !rc; p++) {
		uint64_t m = sp.off[p + 1] - sp.off[p];
		const uint32_t *idx = sp.idx + sp.off[p];
		rel *prel = NULL, *wr = NULL;
		uint32_t *pf = NULL;
		if (!m)
			continue;
		rc = xg_part_agg(x, n, in, idx, m, &pf, NULL, &prel, &wr);
		if (!prel) /* its rows not made */
			break;
		if (!rc && wr && wr->nrows && !pf)
			rc = db_err(x->db, GPMDB_INTERNAL,
				    "GPU aggregate in parts: no first rows");
		for (uint64_t j = 0; !rc && wr && j < wr->nrows; j++)
			first[all->nrows + j] = idx[pf[j]];
		if (!rc && wr)
			rc = xg_rel_append(all, wr);
		/* keys and bare columns may point into the part's text */
		rel_adopt(all, prel);
		free(pf);
		rel_free(wr);
		rel_free(prel);
	}
	if (rc)
		goto out;
	/* the groups in the order of their first rows: the CPU's */
	if (!(perm = malloc(sizeof(uint32_t) * (all->nrows + 1)))) {
		rc = db_err(x->db, GPMDB_NOMEM, "out of memory");
		goto out;
	}
	for (uint64_t k = 0; k < all->nrows; k++)
		perm[k] = (uint32_t)k;
	qsort_r(perm, all->nrows, sizeof(uint32_t), xg_cmp_first, first);
	rc = xo_rows_rel(x, all, NULL, perm, all->nrows, out);
out:
	xo_split_free(&sp);
	rel_free(all);
	free(first);
	free(perm);
	return rc;
}

/*
 * One try of xg_dparts: a scalar AGG (no GROUP BY) over np parts of in
 * split by the values of the argument its DISTINCT aggregates share
 * (kv), so that equal values meet in one part: each part a whole GPU
 * aggregate (its DISTINCT exact), the parts' states merged as windows'
 * (xg_sagg_window): the counts and sums of distinct values add up, as
 * do counts, sums and averages of all rows; min and max merge.  Integer
 * sums are checked at the end (xg_sagg_parts_check).
 */
static int xg_dparts_run(exec_ctx *x, pnode *n, rel *in, const rel *kv,
			 uint32_t np, uint64_t *biggest, rel **out)
{
	int na = n->naggs, rc;
	xo_split sp;
	xg_sagg sa;

	memset(&sa, 0, sizeof(sa));
	if ((rc = xo_split_rows(x, kv, kv->ncols, np, false, &sp)))
		return rc;
	*biggest = xo_split_max(&sp);
	sa.parts = true;
	sa.hi = calloc((size_t)na + 1, sizeof(__int128));
	sa.lo = calloc((size_t)na + 1, sizeof(__int128));
	if (!(sa.r = rel_new(x, n->ncols, n->ty)) || !sa.hi || !sa.lo) {
		rc = x->db->errcode
			 ? x->db->errcode
			 : db_err(x->db, GPMDB_NOMEM, "out of memory");
		goto out;
	}
	xo_part_ops++;
	for (uint32_t p = 0; p < np && !rc; p++) {
		uint64_t m = sp.off[p + 1] - sp.off[p];
		rel *prel = NULL, *wr = NULL;
		if (!m)
			continue;
		rc = xg_part_agg(x, n, in, sp.idx + sp.off[p], m, NULL, &sa,
				 &prel, &wr);
		rel_free(wr); /* none: the results come from the merge */
		rel_free(prel);
	}
	if (!rc)
		rc = xg_sagg_finish(x, n, &sa);
	if (!rc) {
		*out = sa.r;
		sa.r = NULL;
	}
out:
	rel_free(sa.r);
	xg_sagg_free(&sa);
	xo_split_free(&sp);
	return rc;
}

/*
 * n over in in parts split by the columns of kv (kv's rows: in's): by
 * GROUP BY keys (xg_agg_parts_run) or, without keys, by a DISTINCT
 * argument (xg_dparts_run).  As many parts as rows of about in's bytes
 * take 4x of budget (and of the free device memory), at least 2; they
 * double while one runs out of device memory and the largest still
 * shrinks (one key's rows cannot be split).
 */
static int xg_parts_try(exec_ctx *x, pnode *n, rel *in, const rel *kv,
			uint64_t budget, rel **out)
{
	uint64_t was = UINT64_MAX, biggest = 0,
		 bytes = exec_gpu_rel_bytes(in, in->ncols);
	uint32_t np = xo_parts_for(bytes, in->nrows, UINT32_MAX / 4);
	int rc;

	while (np < XO_MAX_PARTS && 4 * bytes / np > budget)
		np *= 2;
	xg_agg_parts_runs++;
	for (;;) {
		rc = n->ngroup
			 ? xg_agg_parts_run(x, n, in, kv, np, &biggest, out)
			 : xg_dparts_run(x, n, in, kv, np, &biggest, out);
		if (!rc || !xg_too_large(x, rc) || rc == XG_STREAM ||
		    np >= XO_MAX_PARTS || biggest >= was)
			break;
		db_clear(x->db);
		was = biggest;
		np *= 2;
	}
	return rc;
}

/*
 * The aggregate whose argument splits a scalar AGG n (no GROUP BY) into
 * parts (xg_dparts_run): every aggregate that does not merge across
 * windows is DISTINCT (count, sum, avg, total) of one and the same
 * argument.  Its index, else -1 with why (a bare column, DISTINCT
 * aggregates of different arguments, group_concat).
 */
static int xg_dparts_agg(const pnode *n, const char **why)
{
	int d = -1;

	*why = "group_concat is not a GPU aggregate";
	for (int a = 0; a < n->naggs; a++) {
		const aggdef *ad = &n->aggs[a];
		if (ad->fn == AGG_ANY) {
			*why = "a bare column without GROUP BY is not merged "
			       "across row windows";
			return -1;
		}
		if (ad->fn == AGG_GROUP_CONCAT)
			return -1;
		if (xg_agg_merges(ad))
			continue;
		if (d >= 0 && !expr_equal(n->aggs[d].arg, ad->arg)) {
			*why = "DISTINCT aggregates of different arguments "
			       "without GROUP BY are not merged across row "
			       "windows";
			return -1;
		}
		d = d < 0 ? a : d;
	}
	return d >= 0 && n->aggs[d].arg ? d : -1;
}

/*
 * An AGGREGATE over a host relation too large for the device whose
 * aggregates do not merge across row windows (DISTINCT, bare columns):
 * in parts split by a hash of its GROUP BY keys, so that all of a
 * group's rows are in one part, each part a whole GPU aggregate (its
 * DISTINCT exact), the parts' groups put in the order of their first
 * rows (the CPU's).  Without GROUP BY, in parts split by the values of
 * the argument its DISTINCT aggregates share (xg_dparts_agg).  Only for
 * keys (or that argument) that are columns of in (hashed on the host)
 * and an AGG that reads in itself (a group's first row maps back
 * through its part's rows): otherwise why_rc, the error of why the
 * windows cannot do.
 */
static int xg_agg_parts(exec_ctx *x, pnode *n, rel *in, rel **out, int why_rc)
{
	int ng = n->ngroup, nk = ng ? ng : 1, d = -1, rc = why_rc;
	rcol *kc = NULL;
	const char *dwhy;
	char why[300];
	rel kv;

	if (n->kind != PN_AGG || in->ncols != n->l->ncols ||
	    in->nrows > UINT32_MAX || xg_source(x, n, why, sizeof(why)) != n->l)
		return why_rc;
	if (!ng && (d = xg_dparts_agg(n, &dwhy)) < 0)
		return why_rc;
	if (!(kc = calloc((size_t)nk + 1, sizeof(rcol))))
		return db_err(x->db, GPMDB_NOMEM, "out of memory");
	for (int k = 0; k < nk; k++) {
		int c =
		    exec_plain_col(n, ng ? n->group[k] : n->aggs[d].arg, false);
		if (c < 0 || c >= in->ncols) {
			free(kc);
			return why_rc;
		}
		kc[k] = in->cols[c];
	}
	kv = *in;
	kv.cols = kc;
	kv.ncols = nk;
	db_clear(x->db);
	rc = xg_parts_try(x, n, in, &kv, UINT64_MAX, out);
	free(kc);
	return rc;
}

/*
 * The rows n's AGGREGATE reads, streamed from the scan window by window
 * (w[0..nw)) into *out in row order, the chain's filters run in each
 * window.  Columns 0..nl-1 are n->l's: those the AGG reads fetched, the
 * others NULL BOOLs, two bytes a row (nothing reads them; a table's
 * unread columns at their width would take host memory for nothing).  Then the
 * values of the expressions ke[0..nx) (n's compiled expressions ki[], types
 * kt[]): keys that are not plain columns, evaluated here in row order (their
 * errors the CPU's first).
 */
static int xg_stream_in(exec_ctx *x, pnode *n, const xg_win *w, uint32_t nw,
			int nx, ast_expr *const *ke, const int *ki,
			const etype *kt, rel **out)
{
	int nl = n->l->ncols, nc = nl + nx, ng = n->ngroup, rc = GPMDB_OK;
	bool *skip = calloc((size_t)nl + 1, sizeof(bool));
	etype *ty = calloc((size_t)nc + 1, sizeof(etype));
	xg_out *o = calloc((size_t)nc + 1, sizeof(xg_out));
	rel *r = NULL;

	*out = NULL;
	if (!skip || !ty || !o) {
		rc = db_err(x->db, GPMDB_NOMEM, "out of memory");
		goto out;
	}
	if (nc > 256) { /* xg_fetch's columns */
		rc = db_err(x->db, GPMDB_UNSUPPORTED,
			    "GPU stream: an aggregate's input of more than "
			    "256 columns");
		goto out;
	}
	/* the columns the AGG's keys and arguments read */
	for (int k = 0; k < nl; k++)
		skip[k] = true;
	for (int i = 0; i < ng + n->naggs && !rc; i++) {
		ast_expr *e = i < ng ? n->group[i] : n->aggs[i - ng].arg;
		cexpr *c;
		if (!e || (rc = exec_node_cx(x, n, i, e, false, n->l, &c)))
			continue;
		for (int k = 0; k < c->ninputs; k++)
			if (c->in[k].kind == IN_COL && c->in[k].col >= 0 &&
			    c->in[k].col < nl)
				skip[c->in[k].col] = false;
	}
	for (int k = 0; k < nc; k++)
		ty[k] = k >= nl	  ? kt[k - nl]
			: skip[k] ? et_make(BC_T_BOOL)
				  : n->l->ty[k];
	if (rc || !(r = rel_new(x, nc, ty))) {
		rc = rc ? rc : x->db->errcode ? x->db->errcode : GPMDB_NOMEM;
		goto out;
	}
	xg_stream_queries++;
	xg_stream_windows += nw;
	for (uint32_t i = 0; i < nw && !rc; i++) {
		rel *wr = NULL;
		xg_src s;
		memset(o, 0, sizeof(xg_out) * (size_t)nc);
		rc = xg_prepare_win(x, n, &s, &w[i]);
		if (!rc)
			rc = xg_col_runs(x, nl, n->l->ty, skip, &s, o);
		for (int j = 0; j < nx && !rc; j++) {
			cexpr *c;
			if (!(rc = exec_node_cx(x, n, ki[j], ke[j], false, n->l,
						&c)))
				rc = xg_run(&s, c, &o[nl + j]);
		}
		if (!rc && !(wr = rel_new(x, nc, ty)))
			rc = x->db->errcode ? x->db->errcode : GPMDB_NOMEM;
		if (!rc)
			rc = xg_fetch(x, o, nc, xg_rows(&s), wr);
		for (int k = 0; k < nc; k++)
			xg_out_free(&o[k]);
		xg_src_free(&s);
		if (!rc)
			rc = xg_rel_append(r, wr);
		rel_free(wr);
	}
	if (!rc && r->nrows > UINT32_MAX)
		rc = db_err(x->db, GPMDB_UNSUPPORTED,
			    "GPU stream: an aggregate's input of more than "
			    "2^32 rows in parts");
	if (!rc) {
		*out = r;
		r = NULL;
	}
out:
	rel_free(r);
	free(skip);
	free(ty);
	free(o);
	return rc;
}

/* The query's memory limit (PRAGMA memory_limit) reached by rows this
 * path keeps on the host (the CPU's aggregate streams them): a GPU
 * failure, so the CPU runs the AGG (counted) or gpu_strict says why. */
static int xg_stream_mem(exec_ctx *x, int rc)
{
	if (!spill_over(x, rc))
		return rc;
	spill_clear(x);
	return db_err(x->db, GPMDB_UNSUPPORTED,
		      "GPU stream: an aggregate's input held on the host for "
		      "its DISTINCT or bare-column aggregates passes the "
		      "memory limit (PRAGMA memory_limit)");
}

/*
 * A streamed scan's AGGREGATE whose aggregates do not merge across
 * windows (why_rc: the error saying so), or one over a host source hin
 * that xg_agg_parts cannot split as it is (a filter between, computed
 * keys or DISTINCT argument).  Its input is streamed to the host
 * (xg_stream_in, over windows of the scan or of hin), then aggregated
 * in parts in which what the
 * aggregates compare meets: split by the GROUP BY keys (groups in the
 * order of their first rows, bare columns and DISTINCT exact), or,
 * without keys, by the values of the one argument every DISTINCT
 * aggregate has (count, sum, avg of DISTINCT values and the mergeable
 * others).  Otherwise (a bare column or group_concat without GROUP BY,
 * DISTINCT aggregates of different arguments) an error naming why.
 */
static int xg_stream_parts(exec_ctx *x, pnode *n, pnode *src, rel *hin,
			   int why_rc, rel **out)
{
	int ng = n->ngroup, nl = n->l->ncols, nk = ng ? ng : 1, nx = 0,
	    rc = GPMDB_OK;
	ast_expr *ke[XG_MAX_KEYS];
	int ki[XG_MAX_KEYS], kcol[XG_MAX_KEYS];
	etype kt[XG_MAX_KEYS];
	rcol kc[XG_MAX_KEYS];
	rel *in = NULL, kv, inv;

	if (n->kind != PN_AGG || ng > XG_MAX_KEYS)
		return why_rc;
	if (!ng) {
		const char *why;
		int d = xg_dparts_agg(n, &why);
		/* the specific reason, not why_rc's (db_err keeps the first
		 * error of a statement) */
		if (d < 0) {
			db_clear(x->db);
			return db_err(x->db, GPMDB_UNSUPPORTED,
				      "GPU stream: %s and %s",
				      hin ? "the input does not fit the GPU"
					  : "the table's columns do not fit "
					    "the GPU cache",
				      why);
		}
		ke[0] = n->aggs[d].arg;
		ki[0] = d; /* n's compiled expression ng + d */
		kt[0] = expr_type(n->aggs[d].arg);
	} else {
		for (int k = 0; k < ng; k++) {
			ke[k] = n->group[k];
			ki[k] = k;
			kt[k] = n->ty[k];
		}
	}
	/* plain columns are read from the input; other keys are computed
	 * in the windows, after the input's columns */
	for (int k = 0; k < nk; k++) {
		int c = exec_plain_col(n, ke[k], false);
		if (c >= 0 && c < nl && n->l->ty[c].t == kt[k].t) {
			kcol[k] = c;
			continue;
		}
		kcol[k] = nl + nx;
		ke[nx] = ke[k];
		ki[nx] = ki[k];
		kt[nx++] = kt[k];
	}
	db_clear(x->db);
	uint64_t nw_was = 0;
	for (uint32_t div = 4;; div *= 4) {
		xg_hwin h;
		uint64_t nw = 0;
		memset(&h, 0, sizeof(h));
		if (hin) /* a host source: windows of its rows */
			rc = xg_host_windows(x, hin, div, &h, &nw);
		else if (!(rc = xg_windows(x, n, src, div, &h.w, &h.nw)))
			nw = h.nw;
		if (!rc)
			rc = xg_stream_in(x, n, h.w, h.nw, nx, ke, ki, kt, &in);
		if (hin)
			xg_hwin_free(&h);
		else
			free(h.w);
		if (nw == nw_was || !xg_stream_again(x, rc, div))
			break;
		nw_was = nw;
	}
	if (rc)
		return xg_stream_mem(x, rc);
	xg_stream_agg_parts++;
	/* the parts of the AGG's input: its columns (inv), split by the
	 * key columns (kv), both views of in */
	for (int k = 0; k < nk; k++)
		kc[k] = in->cols[kcol[k]];
	kv = *in;
	kv.cols = kc;
	kv.ncols = nk;
	inv = *in;
	inv.ncols = nl;
	/* a part's device bytes: as a window's, within what the cache can
	 * give the query */
	uint64_t budget = gcache_room(), avail = gpu_mem_avail();
	budget = avail < budget ? avail : budget;
	budget =
	    budget < 4 * XG_WIN_MIN_BUDGET ? 4 * XG_WIN_MIN_BUDGET : budget;
	rc = xg_parts_try(x, n, &inv, &kv, budget, out);
	rel_free(in);
	return xg_stream_mem(x, rc);
}

int xg_stream_host(exec_ctx *x, pnode *n, rel *in, rel **out)
{
	uint64_t nw_was = 0;
	int rc;

	/* aggregates the windows cannot merge: parts by GROUP BY keys (or
	 * the DISTINCT argument) of in; under a filter or for computed keys
	 * the AGG's input made first (as a streamed scan's) */
	if ((rc = xg_stream_aggs_ok(x, n, "the input does not fit the GPU"))) {
		int why_rc = rc;
		if ((rc = xg_agg_parts(x, n, in, out, XG_DECLINE)) !=
		    XG_DECLINE)
			return rc;
		return xg_stream_parts(x, n, NULL, in, why_rc, out);
	}
	for (uint32_t div = 4;; div *= 4) {
		uint64_t nw = 0;
		rc = xg_stream_host_div(x, n, in, div, out, &nw);
		if (nw == nw_was || !xg_stream_again(x, rc, div))
			return rc;
		nw_was = nw;
	}
}
