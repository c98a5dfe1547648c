/*
 * pipe.c - pipelined CPU execution.
 *
 * The materialising operators of exec.c build each node's whole relation
 * before its parent runs: a FILTER over a SCAN first copies every row of
 * the table.  A pipeline instead runs a chain of streaming operators
 * (FILTER, PROJECT, the probe of a hash JOIN) over batches of VEC_BATCH
 * rows taken from a source (a table scan, or a relation a breaker below
 * produced), and hands each batch to a sink: an aggregate's per-thread
 * groups, or the chain's result relation.  Intermediate relations never
 * exist; a batch stays in the cache from the scan to the sink.
 *
 * Breakers end pipelines: the built side of a join, an aggregate, a sort,
 * DISTINCT, set operations run through exec_node (which may itself run a
 * pipeline below them) before the pipeline starts.
 *
 * Threads.  The source is cut into morsels of VEC_BATCH rows; thread t of
 * T takes the t-th contiguous run of them, and the sinks merge the
 * threads' results in thread order.  Results are therefore those of one
 * thread reading the rows in order: the same groups in the same order
 * (the first row of each), the same rows in the same order, INT sums
 * checked with the prefixes of the serial order (agg_merge).  A hash join
 * streams its larger input and builds the other (an INNER join whose
 * left input is the smaller one emits its rows in the order of the
 * right).
 *
 * A LEFT JOIN emits, per batch of its left rows, the pairs that matched
 * and then the rows that did not (exec_join puts all unmatched rows
 * last): without ORDER BY, SQL leaves the order open.
 *
 * What a pipeline declines (PIPE_DECLINE: exec.c's operators run it):
 * correlated subqueries' executions, expressions that are not pure
 * (subqueries, outer references), nodes the GPU backend takes, cross
 * joins, joins read through an index, DISTINCT aggregates and
 * group_concat.  An error inside a pipeline other than running out of
 * memory or an interrupt (an integer overflow, a bad cast) makes the
 * statement run the plain operators again, which report the error that
 * the first failing row gives in row order.
 */
#include "../../gpu/exec/exec_gpu_ops.h"
#include "../engine.h"
#include "../value.h"
#include "exec_int.h"
#include "pipe_int.h"

#include <omp.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- helpers ---- */

/* A size threshold of a parallel path; 1,000 under GPMDB_TEST_PIPE_SMALL=1
 * (tests/unit/test_pipe.c runs those paths over small tables). */
uint64_t pipe_small(uint64_t n)
{
	const char *e = getenv("GPMDB_TEST_PIPE_SMALL");

	return e && e[0] == '1' ? 1000 : n;
}

/* n zeroed bytes, written at once: calloc's fresh pages read before they
 * are written map the zero page, and the first store then costs a
 * copy-on-write fault with a TLB shootdown on every thread of the
 * process (half of TPC-H Q18's time on 16 threads). */
void *pipe_zalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (p)
		memset(p, 0, n);
	return p;
}

static size_t pipe_stg_width(int stype)
{
	switch (stype) {
	case STG_T_BIGINT:
	case STG_T_DOUBLE:
	case STG_T_DECIMAL:
		return 8;
	case STG_T_BOOLEAN:
		return 1;
	case STG_T_TEXT:
		return sizeof(stg_strref);
	default: /* INT, FLOAT, DATE */
		return 4;
	}
}

/* A batch relation of n's layout (no accounting: bounded, per thread). */
rel *pipe_batch(const pnode *n)
{
	rel *r = rel_new(NULL, n->ncols, n->ty);

	if (r && rel_reserve(r, VEC_BATCH)) {
		rel_free(r);
		return NULL;
	}
	return r;
}

void pipe_reset(rel *r)
{
	r->nrows = 0;
	vec_arena_reset(&r->strs);
}

/* Rows idx[0..m) of src into dst (same layout), text referenced. */
void pipe_gather(rel *dst, const rel *src, const uint32_t *idx, uint32_t m,
		 const uint8_t *live)
{
	for (int c = 0; c < dst->ncols; c++) {
		if (live && !live[c])
			continue;
		const rcol *s = &src->cols[c];
		rcol *d = &dst->cols[c];
		switch (rel_width(d->ty.t)) {
		case 1:
			for (uint32_t k = 0; k < m; k++)
				((uint8_t *)d->data)[k] =
				    ((uint8_t *)s->data)[idx[k]];
			break;
		case 4:
			for (uint32_t k = 0; k < m; k++)
				((int32_t *)d->data)[k] =
				    ((int32_t *)s->data)[idx[k]];
			break;
		case 8:
			for (uint32_t k = 0; k < m; k++)
				((int64_t *)d->data)[k] =
				    ((int64_t *)s->data)[idx[k]];
			break;
		default:
			for (uint32_t k = 0; k < m; k++)
				((vec_str *)d->data)[k] =
				    ((vec_str *)s->data)[idx[k]];
		}
		for (uint32_t k = 0; k < m; k++)
			d->nulls[k] = s->nulls[idx[k]];
	}
	dst->nrows = m;
}

int pipe_fail(pthr *t, int rc, const char *msg)
{
	if (!t->rc) {
		t->rc = rc;
		snprintf(t->msg, sizeof(t->msg), "%s",
			 msg && msg[0] ? msg : "expression failed");
	}
	return rc;
}

static int pipe_eval(pthr *t, int slot, const cexpr *c, const rel *in, vec *v)
{
	char err[256];
	int rc;

	err[0] = 0;
	rc = cx_eval_pure(c, in, 0, (uint32_t)in->nrows, v, &t->scr[slot], err,
			  sizeof(err));
	return rc ? pipe_fail(t, rc, err) : GPMDB_OK;
}

/* Stores v into column c of r (rows 0..n): arrays copied when the types
 * agree; otherwise converted (a conversion may fail: its message). */
int pipe_put(pthr *t, rel *r, int c, const vec *v, uint32_t n)
{
	int rc = rel_put_vec(r, c, 0, v, n);

	return rc ? pipe_fail(t, rc, "cannot convert a value") : GPMDB_OK;
}

/* Column c of r (rows 0..n) = v, text referenced (v's strings stay valid
 * while the batch is processed); other types as pipe_put. */
int pipe_put_ref(pthr *t, rel *r, int c, const vec *v, uint32_t n)
{
	rcol *d = &r->cols[c];

	if (d->ty.t != BC_T_TEXT || v->type != BC_COL_TEXT)
		return pipe_put(t, r, c, v, n);
	for (uint32_t i = 0; i < n; i++) {
		uint32_t j = v->sel ? v->sel[i] : i;
		d->nulls[i] = v->nulls ? v->nulls[j] : 0;
		((vec_str *)d->data)[i] = v->v.str[j];
	}
	return GPMDB_OK;
}

/* ---- sinks ---- */

/* A top-N thread sorts its rows once it holds this many. */
static uint64_t topn_limit(const pipe *p)
{
	return p->keep < 32768 ? 65536 : 2 * p->keep;
}

/* Keeps the thread's first keep rows in the sort order, in the order
 * they came (so that a stable sort of all threads' rows, concatenated
 * in thread order, is that of the whole input). */
static int topn_compact(pthr *t)
{
	pipe *p = t->p;
	rel *o = t->out, *r;
	uint64_t m;
	uint32_t *idx = malloc(sizeof(uint32_t) * (o->nrows + 1));
	size_t before = o->bytes;

	if (!idx)
		return pipe_fail(t, GPMDB_NOMEM, "out of memory");
	m = exec_sort_idx(o, p->topn, p->keep, idx);
	if (m == o->nrows) {
		free(idx);
		return GPMDB_OK;
	}
	/* in input order */
	uint8_t *sel = pipe_zalloc(o->nrows + 1);
	if (!sel) {
		free(idx);
		return pipe_fail(t, GPMDB_NOMEM, "out of memory");
	}
	for (uint64_t k = 0; k < m; k++)
		sel[idx[k]] = 1;
	m = 0;
	for (uint64_t i = 0; i < o->nrows; i++)
		if (sel[i])
			idx[m++] = (uint32_t)i;
	free(sel);
	r = rel_new(NULL, o->ncols, p->top->ty);
	if (!r || rel_gather_rows(r, o, idx, m)) {
		free(idx);
		rel_free(r);
		return pipe_fail(t, GPMDB_NOMEM, "out of memory");
	}
	free(idx);
	rel_free(o);
	t->out = r;
	atomic_fetch_sub(&p->mem, before);
	atomic_fetch_add(&p->mem, r->bytes);
	return GPMDB_OK;
}

static int sink_rel(pthr *t, const rel *b)
{
	rel *o = t->out;
	uint64_t at = o->nrows, m = b->nrows;
	size_t b0 = o->bytes;

	if (t->p->spill && !t->p->srt)
		return spill_sink_part(t, b);
	if (rel_reserve(o, m))
		return pipe_fail(t, GPMDB_NOMEM, "out of memory");
	for (int c = 0; c < o->ncols; c++) {
		rcol *d = &o->cols[c];
		const rcol *s = &b->cols[c];
		size_t w = rel_width(d->ty.t);
		memcpy(d->nulls + at, s->nulls, m);
		if (d->ty.t != BC_T_TEXT) {
			memcpy((char *)d->data + at * w, s->data, m * w);
			continue;
		}
		for (uint64_t k = 0; k < m; k++) {
			vec_str v = ((vec_str *)s->data)[k];
			vec_str *dv = &((vec_str *)d->data)[at + k];
			if (s->nulls[k]) {
				dv->ptr = NULL;
				dv->len = 0;
				continue;
			}
			if (rel_str(o, v.ptr, v.len, dv))
				return pipe_fail(t, GPMDB_NOMEM,
						 "out of memory");
		}
	}
	o->nrows += m;
	/* o->bytes: its arrays' capacity and its text */
	atomic_fetch_add(&t->p->mem, o->bytes - b0);
	if (t->p->topn && o->nrows >= topn_limit(t->p))
		return topn_compact(t);
	if (t->p->srt &&
	    (o->nrows >= t->p->runrows || o->bytes >= t->p->runbytes))
		return spill_run(t);
	return GPMDB_OK;
}

static int pipe_push(pthr *t, int i, rel *b);

/* ---- stages ---- */

uint64_t pipe_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Batches between two choices of the order of consecutive filters. */
#define FILTER_REORDER 32

/* The order of the filters in ord[0..nf) (stage numbers) by rank: time
 * per row over the share of rows dropped, least first; the figures then
 * count half, so that the order follows the data. */
static void filter_reorder(pthr *t, uint8_t *ord, int nf)
{
	double rank[PIPE_MAX];

	for (int q = 0; q < nf; q++) {
		int f = ord[q];
		double in = t->fin[f] ? (double)t->fin[f] : 1,
		       drop = 1 - (double)t->fout[f] / in;
		rank[f] =
		    ((double)t->fns[f] / in) / (drop > 1e-3 ? drop : 1e-3);
		t->fns[f] /= 2;
		t->fin[f] /= 2;
		t->fout[f] /= 2;
	}
	for (int q = 1; q < nf; q++) /* insertion sort: a few filters */
		for (int r = q; r > 0 && rank[ord[r]] < rank[ord[r - 1]]; r--) {
			uint8_t x = ord[r];
			ord[r] = ord[r - 1];
			ord[r - 1] = x;
		}
}

/*
 * A FILTER and the FILTERs right above it: the first runs over the batch,
 * each next one over the rows kept so far through the selection, and the
 * rows left are gathered once (TPC-H Q6's four conjuncts gathered 72% of
 * the scan after the first).  When none of them can fail, each thread
 * runs them in the order their measured cost and selectivity favour
 * (Q12 wrote its text IN first); EXPLAIN ANALYZE keeps the written order
 * so that its figures are per filter.
 */
static int stage_filter(pthr *t, int i, rel *b)
{
	pipe *p = t->p;
	uint32_t sel[VEC_BATCH], pos[VEC_BATCH], k = (uint32_t)b->nrows, m;
	uint8_t *ord = &t->ford[i];
	char err[256];
	bool adapt = !p->x->analyze, dense = true; /* no row selected yet */
	int j = i, nf, rc;
	vec v;

	while (j + 1 < p->ns && p->st[j + 1].kind == PS_FILTER)
		j++;
	nf = j - i + 1;
	for (int f = i; f <= j; f++)
		adapt &= p->st[f].safe;
	adapt &= nf > 1;
	if (!adapt || !t->fbat[i])
		for (int q = 0; q < nf; q++)
			ord[q] = (uint8_t)(i + q);
	for (int q = 0; q < nf && k; q++) {
		int f = ord[q];
		/* the scan kept only the rows its codes pass (pipe_dict.c) */
		if (i == 0 && f == p->dict.stage && t->dict_done)
			continue;
		uint64_t t0 = adapt ? pipe_now() : 0;
		int fm = -1; /* column OP constant: its own loop */
		if (p->st[f].fast.on)
			fm = pipe_fast_run(&p->st[f].fast, b,
					   dense ? NULL : sel, k, sel);
		if (fm >= 0) {
			m = (uint32_t)fm;
		} else if (dense) {
			if ((rc = pipe_eval(t, f, p->st[f].pred, b, &v)))
				return rc;
			m = exec_filter_true(&v, k, 0, sel);
		} else {
			if (p->x->analyze)
				t->rows_in[f] += k;
			rc = cx_eval_pure_sel(p->st[f].pred, b, sel, k, &v,
					      &t->scr[f], err, sizeof(err));
			if (rc)
				return pipe_fail(t, rc, err);
			m = exec_filter_true(&v, k, 0, pos);
			for (uint32_t r = 0; r < m; r++)
				sel[r] = sel[pos[r]];
		}
		if (adapt) {
			t->fns[f] += pipe_now() - t0;
			t->fin[f] += k;
			t->fout[f] += m;
		}
		k = m;
		dense = false;
	}
	if (adapt && ++t->fbat[i] % FILTER_REORDER == 0)
		filter_reorder(t, ord, nf);
	if (k == b->nrows)
		return pipe_push(t, j + 1, b);
	if (!k)
		return GPMDB_OK;
	pipe_gather(t->b[j + 1], b, sel, k, p->live[j + 1]);
	return pipe_push(t, j + 1, t->b[j + 1]);
}

static int stage_project(pthr *t, int i, rel *b)
{
	pstage *s = &t->p->st[i];
	rel *o = t->b[i + 1];
	uint32_t m = (uint32_t)b->nrows;
	vec v;
	int rc;

	pipe_reset(o);
	for (int c = 0; c < s->n->nexprs; c++) {
		int pc = s->plain[c];
		if (t->p->live[i + 1] && !t->p->live[i + 1][c])
			continue; /* nobody reads it */
		if (pc >= 0) {	  /* the input's column: text referenced */
			size_t w = rel_width(o->cols[c].ty.t);
			memcpy(o->cols[c].data, b->cols[pc].data, m * w);
			memcpy(o->cols[c].nulls, b->cols[pc].nulls, m);
			continue;
		}
		if ((rc = pipe_eval(t, i, s->ex[c], b, &v)) ||
		    (rc = pipe_put(t, o, c, &v, m)))
			return rc;
	}
	o->nrows = m;
	return pipe_push(t, i + 1, o);
}

/* SEMI, ANTI, ANTI_NULL: the output is the left rows. */
static bool join_semi(int jt)
{
	return jt == JOIN_SEMI || jt == JOIN_ANTI || jt == JOIN_ANTI_NULL;
}

/* Built row r of a LEFT join met a stream row.  Threads may mark one
 * row at once: relaxed atomic stores of the same value; a row already
 * marked is not written again (its cache line stays shared). */
static inline void join_bmark(uint8_t *bm, int64_t r)
{
	if (!__atomic_load_n(&bm[r], __ATOMIC_RELAXED))
		__atomic_store_n(&bm[r], 1, __ATOMIC_RELAXED);
}

/* The buffered pairs of stage i (stream row, built row) go through the
 * residual: INNER and LEFT joins push the rows that pass, SEMI/ANTI mark
 * them (LEFT marks them too). */
static int join_flush_pairs(pthr *t, int i, const rel *b)
{
	pstage *s = &t->p->st[i];
	int jt = s->n->jtype;
	bool semi = join_semi(jt), left = jt == JOIN_LEFT && s->sleft;
	uint8_t *bm = s->bmatch;
	uint32_t m = t->np[i], sel[VEC_BATCH], k;
	rel *c = semi || s->pred ? t->b2[i] : t->b[i + 1];
	int64_t *li = s->sleft ? t->li[i] : t->ri[i];
	int64_t *ri = s->sleft ? t->ri[i] : t->li[i];
	vec v;
	int rc;

	if (!m)
		return GPMDB_OK;
	t->np[i] = 0;
	/* a batch may make millions of pairs: stop here too */
	if (atomic_load(&t->p->stop) || atomic_load(&t->p->x->db->interrupted))
		return PIPE_STOP;
	if (semi && !s->pred) {
		for (uint32_t q = 0; q < m; q++)
			t->matched[i][t->li[i][q]] = 1;
		return GPMDB_OK;
	}
	pipe_reset(c);
	if (exec_join_emit(c, s->sleft ? b : s->build, s->sleft ? s->build : b,
			   li, ri, m, semi ? NULL : t->p->live[i + 1]))
		return pipe_fail(t, GPMDB_NOMEM, "out of memory");
	if (!s->pred) {
		for (uint32_t q = 0; left && q < m; q++)
			t->matched[i][t->li[i][q]] = 1;
		for (uint32_t q = 0; bm && q < m; q++)
			join_bmark(bm, t->ri[i][q]);
		return pipe_push(t, i + 1, c);
	}
	if ((rc = pipe_eval(t, i, s->pred, c, &v)))
		return rc;
	k = exec_filter_true(&v, m, 0, sel);
	if (semi || left)
		for (uint32_t q = 0; q < k; q++)
			t->matched[i][t->li[i][sel[q]]] = 1;
	for (uint32_t q = 0; bm && q < k; q++)
		join_bmark(bm, t->ri[i][sel[q]]);
	if (semi) {
		for (uint32_t q = 0; q < k; q++)
			t->matched[i][t->li[i][sel[q]]] = 1;
		return GPMDB_OK;
	}
	if (k == m)
		return pipe_push(t, i + 1, c);
	if (!k)
		return GPMDB_OK;
	pipe_gather(t->b[i + 1], c, sel, k, t->p->live[i + 1]);
	return pipe_push(t, i + 1, t->b[i + 1]);
}

/* LEFT JOIN: the rows of batch b that matched nothing, with NULLs on the
 * right. */
static int join_unmatched(pthr *t, int i, const rel *b)
{
	pstage *s = &t->p->st[i];
	uint32_t m = 0;

	for (uint32_t r = 0; r < b->nrows; r++)
		if (!t->matched[i][r]) {
			t->li[i][m] = r;
			t->ri[i][m++] = -1;
		}
	if (!m)
		return GPMDB_OK;
	pipe_reset(t->b[i + 1]);
	if (exec_join_emit(t->b[i + 1], b, s->build, t->li[i], t->ri[i], m,
			   t->p->live[i + 1]))
		return pipe_fail(t, GPMDB_NOMEM, "out of memory");
	return pipe_push(t, i + 1, t->b[i + 1]);
}

static int stage_join(pthr *t, int i, rel *b)
{
	pstage *s = &t->p->st[i];
	int jt = s->n->jtype, nk = s->n->nkeys;
	bool semi = join_semi(jt), first = semi && !s->pred;
	uint32_t m = (uint32_t)b->nrows;
	rel *kb = t->kb[i];
	uint8_t *mt = t->matched[i];
	vec v;
	int rc;

	/* one TEXT key by reference (its strings stay valid for the
	 * batch): jt_refs_cands compares references */
	for (int k = 0; k < nk; k++)
		if ((rc = pipe_eval(t, i, s->ex[k], b, &v)) ||
		    (rc = s->trefs ? pipe_put_ref(t, kb, k, &v, m)
				   : pipe_put(t, kb, k, &v, m)))
			return rc;
	kb->nrows = m;
	if (semi || jt == JOIN_LEFT)
		memset(mt, 0, m);
	/* the rows that may meet a built row; hvs: their hashes, or with
	 * a direct table or by reference the first row + 1 of the chain's
	 * rows they meet (by reference: the first is known equal) */
	uint64_t *hvs = t->jhv[i];
	uint32_t *cand = t->jcand[i];
	uint32_t nc = UINT32_MAX;
	bool refs = false;
	if (s->trefs && (t->tr_off[i] < 8 || t->tr_ok[i] >= t->tr_off[i])) {
		nc = jt_refs_cands(s, kb, m, cand, hvs);
		refs = nc != UINT32_MAX;
		t->tr_ok[i] += refs;
		t->tr_off[i] += !refs;
	}
	if (!refs)
		nc = s->dir ? jt_direct_cands(s, kb, m, cand, hvs)
			    : join_cands(t, i, kb, m);
	bool byfirst = s->dir || refs;
	for (uint32_t c = 0; c < nc; c++) {
		uint32_t r = cand[c];
		uint64_t hv = hvs[r];
		if (!byfirst && !hv && exec_key_has_null(kb, r))
			continue;
		/* the chain of this hash: every equal key is there */
		int64_t row0 = byfirst ? (int64_t)hv - 1 : jt_first(s, hv);
		for (int64_t row = row0; row >= 0;
		     row = (int64_t)s->next[row] - 1) {
			if (!s->hexact && !(refs && row == row0) &&
			    !jt_key_eq(s, kb, r, row))
				continue;
			uint32_t np = t->np[i]++;
			t->li[i][np] = r;
			t->ri[i][np] = row;
			if (t->np[i] == VEC_BATCH &&
			    (rc = join_flush_pairs(t, i, b)))
				return rc;
			if (first)
				break;
		}
	}
	if ((rc = join_flush_pairs(t, i, b)))
		return rc;
	if (jt == JOIN_LEFT && s->sleft) /* the batch's unmatched rows */
		return join_unmatched(t, i, b);
	if (!semi)
		return GPMDB_OK;
	/* SEMI/ANTI: the stream rows that matched / did not */
	uint32_t sel[VEC_BATCH], k = 0;
	for (uint32_t r = 0; r < m; r++) {
		bool keep = jt == JOIN_SEMI   ? mt[r] != 0
			    : jt == JOIN_ANTI ? !mt[r]
			    : s->bnull	      ? false
			    : !s->build->nrows
				? true
				: !mt[r] && !exec_key_has_null(kb, r);
		if (keep)
			sel[k++] = r;
	}
	if (k == m)
		return pipe_push(t, i + 1, b);
	if (!k)
		return GPMDB_OK;
	pipe_gather(t->b[i + 1], b, sel, k, t->p->live[i + 1]);
	return pipe_push(t, i + 1, t->b[i + 1]);
}

static int mark_flush(pthr *t, const rel *b)
{
	pmark *mk = t->p->mark;
	uint32_t m = t->mnp, sel[VEC_BATCH], k;
	vec v;
	int rc;

	t->mnp = 0;
	if (!m)
		return GPMDB_OK;
	if (atomic_load(&t->p->stop) || atomic_load(&t->p->x->db->interrupted))
		return PIPE_STOP;
	pipe_reset(t->mpair);
	if (exec_join_emit(t->mpair, mk->s.build, b, t->mli, t->mri, m, NULL))
		return pipe_fail(t, GPMDB_NOMEM, "out of memory");
	if ((rc = pipe_eval(t, PIPE_MAX, mk->s.pred, t->mpair, &v)))
		return rc;
	k = exec_filter_true(&v, m, 0, sel);
	for (uint32_t q = 0; q < k; q++)
		__atomic_store_n(&mk->matched[t->mli[sel[q]]], 1,
				 __ATOMIC_RELAXED);
	return GPMDB_OK;
}

static int sink_mark(pthr *t, const rel *b)
{
	pmark *mk = t->p->mark;
	pstage *s = &mk->s;
	int nk = s->n->nkeys, rc;
	uint32_t m = (uint32_t)b->nrows;
	rel *kb = t->mkb;
	vec v;

	atomic_store(&mk->rany, 1);
	for (int k = 0; k < nk; k++)
		if ((rc = pipe_eval(t, PIPE_MAX, mk->rk[k], b, &v)) ||
		    (rc = pipe_put(t, kb, k, &v, m)))
			return rc;
	kb->nrows = m;
	/* as stage_join: hashes of the batch, bloom bits, prefetches (t->hv:
	 * a mark pipeline has no AGG sink) */
	uint64_t *hvs = t->hv;
	uint32_t cand[VEC_BATCH], nc = 0;
	exec_hash_batch(kb, nk, m, hvs, true);
	for (uint32_t r = 0; r < m; r++) {
		uint64_t q = hvs[r] >> 20 & s->bmask;
		cand[nc] = r;
		nc +=
		    !s->bloom || (s->bloom[q >> 6] >> (q & 63) & 1) || !hvs[r];
	}
	for (uint32_t c = 0; c < nc; c++) {
		uint64_t hv = hvs[cand[c]];
		__builtin_prefetch(
		    &s->slot[jt_base(s, hv) + ((hv ^ hv >> 29) & s->rmask)]);
	}
	for (uint32_t c = 0; c < nc; c++) {
		uint32_t r = cand[c];
		uint64_t hv = hvs[r];
		if (!hv && exec_key_has_null(kb, r)) {
			atomic_store(&mk->rnull, 1);
			continue;
		}
		for (int64_t row = jt_first(s, hv); row >= 0;
		     row = (int64_t)s->next[row] - 1) {
			if (!s->hexact &&
			    !exec_keys_eq(s->bk, (uint64_t)row, kb, r))
				continue;
			if (!s->pred) {
				__atomic_store_n(&mk->matched[row], 1,
						 __ATOMIC_RELAXED);
				continue;
			}
			t->mli[t->mnp] = row;
			t->mri[t->mnp++] = r;
			if (t->mnp == VEC_BATCH && (rc = mark_flush(t, b)))
				return rc;
		}
	}
	return mark_flush(t, b);
}

static int pipe_step(pthr *t, int i, rel *b);

static int pipe_push(pthr *t, int i, rel *b)
{
	uint64_t t0;
	int rc;

	if (!b->nrows)
		return GPMDB_OK;
	if (!t->p->x->analyze)
		return pipe_step(t, i, b);
	t->rows_in[i] += b->nrows;
	t0 = pipe_now();
	rc = pipe_step(t, i, b);
	t->incl_ns[i] += pipe_now() - t0;
	return rc;
}

static int pipe_step(pthr *t, int i, rel *b)
{
	pipe *p = t->p;

	if (i == p->ns)
		return p->agg	 ? sink_agg(t, b)
		       : p->mark ? sink_mark(t, b)
				 : sink_rel(t, b);
	switch (p->st[i].kind) {
	case PS_FILTER:
		return stage_filter(t, i, b);
	case PS_PROJECT:
		return stage_project(t, i, b);
	default:
		return stage_join(t, i, b);
	}
}

/* ---- the source ---- */

/* TEXT column tc of sp's rows into d, referencing the tablet's heap: the
 * mapping does not move while a statement reads (the pool grows only
 * under writes), and the sinks copy what they keep. */
static void source_text(const scan_part *sp, int tc, rcol *d, const char *heap)
{
	const stg_strref *src = sp->v.data[tc];
	const uint32_t *nl = sp->v.nulls ? sp->v.nulls[tc] : NULL;

	for (uint64_t k = 0; k < sp->m; k++) {
		uint32_t i = sp->keep ? sp->keep[k] : (uint32_t)k;
		vec_str *o = &((vec_str *)d->data)[k];
		if (nl && (nl[i / 32] >> (i % 32) & 1)) {
			d->nulls[k] = 1;
			o->ptr = NULL;
			o->len = 0;
			continue;
		}
		d->nulls[k] = 0;
		o->ptr = heap + src[i].off;
		o->len = src[i].len;
	}
}

/* The NULL flags of a column without NULLs (never written). */
static const uint8_t pipe_zeros[VEC_BATCH];
/* The strings of a column no stage reads (pipe_dict.c). */
static const vec_str pipe_nostr[VEC_BATCH];

/* Whether the first n bits of bm are all clear. */
static bool pipe_no_bits(const uint32_t *bm, uint32_t n)
{
	uint32_t w = 0, acc = 0;

	for (; w < n / 32; w++)
		acc |= bm[w];
	if (n % 32)
		acc |= bm[w] & ((1u << (n % 32)) - 1);
	return acc == 0;
}

/* Fills b[0] with the live rows of morsel mi of a scan. */
static void source_scan(pthr *t, uint64_t mi)
{
	pipe *p = t->p;
	const pnode *n = p->src;
	const stg_tablet_view *v = &p->tv[p->mtab[mi]];
	uint64_t off = p->moff[mi];
	uint32_t cnt =
	    v->nrows - off < VEC_BATCH ? (uint32_t)(v->nrows - off) : VEC_BATCH;
	rel *b = t->b[0];
	scan_part sp;
	bool del = false;

	pipe_reset(b);
	memset(&sp, 0, sizeof(sp));
	/* the view shifted to the morsel's first row (off: a multiple of
	 * VEC_BATCH, so of 32 in the bitmaps) */
	for (int c = 0; c < v->ncols; c++) {
		/* an encoded column: decoded below if the scan reads it */
		t->sd[c] = v->data[c] ? (const char *)v->data[c] +
					    off * pipe_stg_width(n->stype[c])
				      : NULL;
		t->sn[c] =
		    v->nulls && v->nulls[c] ? v->nulls[c] + off / 32 : NULL;
		t->sh[c] = v->heap;
	}
	sp.v = *v;
	sp.v.first_row = v->first_row + off;
	sp.v.nrows = cnt;
	sp.v.data = t->sd;
	sp.v.nulls = t->sn;
	sp.v.deleted = v->deleted ? v->deleted + off / 32 : NULL;
	sp.m = cnt;
	t->gtab = p->mtab[mi];
	/* a filter on dictionary codes: the rows that pass, none deleted */
	int dm =
	    p->dict.pass ? pipe_dict_keep(t, p->mtab[mi], v, off, cnt) : -1;
	t->dict_done = dm >= 0;
	if (dm == 0) {
		b->nrows = 0;
		return;
	}
	if (dm > 0) {
		sp.keep = t->keep;
		sp.m = (uint32_t)dm;
		del = true;
	}
	for (uint32_t w = 0; dm < 0 && sp.v.deleted && w < (cnt + 31) / 32; w++)
		if (sp.v.deleted[w])
			del = true;
	if (del && dm < 0) {
		sp.keep = t->keep;
		sp.m = 0;
		for (uint32_t r = 0; r < cnt; r++)
			if (!(sp.v.deleted[r / 32] >> (r % 32) & 1))
				t->keep[sp.m++] = r;
	}
	for (int c = 0; c < n->ncols; c++) {
		int tc = n->tcol ? n->tcol[c] : c;
		rcol *d = &b->cols[c];
		int st = tc < n->ntcols ? n->stype[tc] : STG_T_INT;

		if (t->dict_done && c == p->dict.col && p->dict.skip) {
			d->data = (void *)pipe_nostr; /* read by none */
			d->nulls = (uint8_t *)pipe_zeros;
			continue;
		}
		/* an encoded column: a vector decoded (TEXT refs relative
		 * to t->sh[tc]: compressed TEXT's own buffer) */
		_Static_assert(VEC_BATCH <= STG_VEC_ROWS, "stg_tablet_vec");
		if (tc < n->ntcols && !v->data[tc]) {
			int rc = stg_tablet_vec(v, tc, off, cnt, &t->dec[tc],
						&t->sd[tc], &t->sh[tc]);
			if (rc) {
				pipe_fail(t, rc, stg_decode_errstr(rc));
				b->nrows = 0;
				return;
			}
		}
		/* a NULL bitmap without a NULL in this morsel counts as
		 * none (nullable columns mostly hold no NULL) */
		if (tc < n->ntcols && sp.v.nulls[tc] &&
		    pipe_no_bits(sp.v.nulls[tc], cnt))
			t->sn[tc] = NULL;
		/* same width in the tablet and the batch, no NULL, no
		 * deleted row: the batch reads the tablet's array */
		if (!del && tc < n->ntcols && !sp.v.nulls[tc] &&
		    st != STG_T_INT && st != STG_T_FLOAT && st != STG_T_TEXT) {
			d->data = (void *)sp.v.data[tc];
			d->nulls = (uint8_t *)pipe_zeros;
			continue;
		}
		d->data = t->own0[2 * c];
		d->nulls = t->own0[2 * c + 1];
		if (st == STG_T_TEXT)
			source_text(&sp, tc, d, t->sh[tc]);
		else
			scan_fill(n, &sp, tc, d);
	}
	b->nrows = sp.m;
}

/* b[0] as a window of rows of the source relation (no copy). */
static void source_rel(pthr *t, uint64_t mi)
{
	const rel *s = t->p->srel;
	rel *b = t->b[0];
	uint64_t at = mi * VEC_BATCH;

	for (int c = 0; c < s->ncols; c++) {
		size_t w = rel_width(s->cols[c].ty.t);
		b->cols[c].data = (char *)s->cols[c].data + at * w;
		b->cols[c].nulls = s->cols[c].nulls + at;
	}
	b->nrows = s->nrows - at < VEC_BATCH ? s->nrows - at : VEC_BATCH;
}

static void pipe_thread(pthr *t)
{
	pipe *p = t->p;
	exec_ctx *x = p->x;

	for (uint64_t mi = t->m0; mi < t->m1; mi++) {
		if (atomic_load(&p->stop) || atomic_load(&x->db->interrupted))
			break;
		if (x->mem_limit &&
		    x->mem + atomic_load(&p->mem) > x->mem_limit) {
			pipe_fail(t, GPMDB_NOMEM, "memory limit");
			x->over = true;
			break;
		}
		uint64_t t0 = x->analyze ? pipe_now() : 0;
		if (p->src)
			source_scan(t, mi);
		else if (p->ssrc && spill_source(t, mi))
			break;
		else if (!p->ssrc)
			source_rel(t, mi);
		if (x->analyze)
			t->src_ns += pipe_now() - t0;
		if (pipe_push(t, 0, t->b[0]))
			break;
	}
	if (t->rc)
		atomic_store(&p->stop, 1);
}

/* m built rows (li) of LEFT join stage i with NULLs on the right into
 * the stages after it. */
static int outer_flush(pthr *t, int i, uint32_t m)
{
	pipe *p = t->p;

	if (atomic_load(&p->stop) || atomic_load(&p->x->db->interrupted))
		return PIPE_STOP;
	pipe_reset(t->b[i + 1]);
	if (exec_join_emit(t->b[i + 1], p->st[i].build, t->b[i], t->li[i],
			   t->ri[i], m, p->live[i + 1]))
		return pipe_fail(t, GPMDB_NOMEM, "out of memory");
	return pipe_push(t, i + 1, t->b[i + 1]);
}

/* LEFT join stage i, its left rows built: the built rows [r0, r1) that
 * no stream row met, with NULLs on the right, into the stages after it.
 * Runs once every thread's stream has ended. */
static void pipe_outer(pthr *t, int i, uint64_t r0, uint64_t r1)
{
	const uint8_t *bm = t->p->st[i].bmatch;
	uint32_t m = 0;
	int rc = GPMDB_OK;

	for (uint64_t r = r0; r < r1 && !rc; r++) {
		if (bm[r])
			continue;
		t->li[i][m] = (int64_t)r;
		t->ri[i][m++] = -1;
		if (m == VEC_BATCH) {
			rc = outer_flush(t, i, m);
			m = 0;
		}
	}
	if (!rc && m)
		rc = outer_flush(t, i, m);
	if (t->rc)
		atomic_store(&t->p->stop, 1);
}

/* The end of a thread's work, once every stream has ended. */
static void pipe_thread_end(pthr *t)
{
	pipe *p = t->p;

	if (!t->rc && p->topn && t->out->nrows > p->keep)
		topn_compact(t);
	for (int a = 0; !t->rc && p->agg && a < p->agg->naggs; a++)
		if (agg_avg_int(&p->agg->aggs[a], p->aty[a]))
			for (uint64_t e = 0; e < t->g.n; e++)
				agg_avg_flush(
				    &t->g.st[e * (size_t)p->agg->naggs + a],
				    p->aty[a]);
	if (t->rc)
		atomic_store(&p->stop, 1);
}

/* ---- per-thread state ---- */

static void pthr_free(pthr *t)
{
	pipe *p = t->p;

	for (int i = 0; i <= PIPE_MAX; i++)
		vm_scratch_free(&t->scr[i]);
	for (int k = 0; t->sscr && k < p->agg->ngroup + p->agg->naggs; k++)
		vm_scratch_free(&t->sscr[k]);
	free(t->sscr);
	for (int k = 0; t->kown && k < p->agg->ngroup + p->agg->naggs; k++) {
		rcol *d = k < p->agg->ngroup ? &t->ka->cols[k]
					     : &t->aa->cols[k - p->agg->ngroup];
		d->data = t->kown[2 * k];
		d->nulls = t->kown[2 * k + 1];
	}
	free(t->kown);
	rel_free(t->kfb);
	rel_free(t->mkb);
	rel_free(t->mpair);
	free(t->mli);
	free(t->mri);
	if (t->b[0] && !p->src) /* a window: the columns are the source's */
		for (int c = 0; c < t->b[0]->ncols; c++)
			t->b[0]->cols[c].data = t->b[0]->cols[c].nulls = NULL;
	for (int c = 0; t->own0 && c < t->b[0]->ncols; c++) {
		t->b[0]->cols[c].data = t->own0[2 * c];
		t->b[0]->cols[c].nulls = t->own0[2 * c + 1];
	}
	free(t->own0);
	for (int i = 0; i <= p->ns; i++)
		rel_free(t->b[i]);
	for (int i = 0; i < p->ns; i++) {
		rel_free(t->b2[i]);
		rel_free(t->kb[i]);
		free(t->li[i]);
		free(t->ri[i]);
		free(t->matched[i]);
		free(t->jhv[i]);
		free(t->jcand[i]);
	}
	for (int c = 0; t->dec && p->src && c < p->src->ntcols + 8; c++)
		stg_vecbuf_free(&t->dec[c]);
	free(t->dec);
	free(t->sh);
	free(t->sd);
	free(t->sn);
	rel_free(t->out);
	rel_free(t->skb);
	rel_free(t->sb);
	rel_free(t->ka);
	rel_free(t->aa);
	pipe_dict_groups_free(t);
	groups_free(&t->g, p->agg ? p->agg->naggs : 0);
}

static int pthr_init(pthr *t, pipe *p)
{
	t->p = p;
	t->gtab = -1;
	for (int i = 0; i <= PIPE_MAX; i++)
		vm_scratch_init(&t->scr[i]);
	if (p->src) {
		int nc = p->src->ntcols + 8;
		t->sd = calloc((size_t)nc, sizeof(*t->sd));
		t->sn = calloc((size_t)nc, sizeof(*t->sn));
		t->dec = calloc((size_t)nc, sizeof(*t->dec));
		t->sh = calloc((size_t)nc, sizeof(*t->sh));
		if (!t->sd || !t->sn || !t->dec || !t->sh ||
		    !(t->b[0] = pipe_batch(p->src)) ||
		    !(t->own0 = calloc(2 * (size_t)p->src->ncols + 2,
				       sizeof(void *))))
			return GPMDB_NOMEM;
		for (int c = 0; c < p->src->ncols; c++) {
			t->own0[2 * c] = t->b[0]->cols[c].data;
			t->own0[2 * c + 1] = t->b[0]->cols[c].nulls;
		}
	} else {
		/* a window over the source: no arrays of its own (a spilled
		 * join's rows: over those of sb) */
		if (!(t->b[0] =
			  rel_new(NULL, p->top_src->ncols, p->top_src->ty)))
			return GPMDB_NOMEM;
		if (p->ssrc && !(t->sb = pipe_batch(p->top_src)))
			return GPMDB_NOMEM;
	}
	for (int i = 0; i < p->ns; i++) {
		pstage *s = &p->st[i];
		if (!(t->b[i + 1] = pipe_batch(
			  s->kind == PS_JOIN && join_semi(s->n->jtype) ? s->in
								       : s->n)))
			return GPMDB_NOMEM;
		if (s->kind != PS_JOIN)
			continue;
		t->li[i] = malloc(VEC_BATCH * 8);
		t->ri[i] = malloc(VEC_BATCH * 8);
		t->matched[i] = malloc(VEC_BATCH);
		t->jhv[i] = malloc(VEC_BATCH * 8);
		t->jcand[i] = malloc(VEC_BATCH * 4);
		t->kb[i] = rel_new(NULL, s->n->nkeys, s->kty);
		if (!t->li[i] || !t->ri[i] || !t->matched[i] || !t->jhv[i] ||
		    !t->jcand[i] || !t->kb[i] ||
		    rel_reserve(t->kb[i], VEC_BATCH) ||
		    !(t->b2[i] = pipe_batch(s->pl)))
			return GPMDB_NOMEM;
	}
	if (p->agg) {
		const pnode *n = p->agg;
		int ne = n->ngroup + n->naggs;
		if (!(t->sscr = calloc((size_t)ne + 1, sizeof(vm_scratch))))
			return GPMDB_NOMEM;
		for (int k = 0; k < ne; k++)
			vm_scratch_init(&t->sscr[k]);
		if (!(t->ka = rel_new(NULL, n->ngroup, n->ty)) ||
		    rel_reserve(t->ka, VEC_BATCH) ||
		    !(t->aa = rel_new(NULL, n->naggs, p->aty)) ||
		    rel_reserve(t->aa, VEC_BATCH) || groups_init(&t->g, n) ||
		    !(t->kown = calloc(2 * (size_t)ne + 2, sizeof(void *))))
			return GPMDB_NOMEM;
		for (int k = 0; k < ne; k++) {
			rcol *d = k < n->ngroup ? &t->ka->cols[k]
						: &t->aa->cols[k - n->ngroup];
			t->kown[2 * k] = d->data;
			t->kown[2 * k + 1] = d->nulls;
		}
		if (p->kf && !(t->kfb = pipe_batch(n->l)))
			return GPMDB_NOMEM;
	} else if (p->mark) {
		pstage *s = &p->mark->s;
		t->mli = malloc(VEC_BATCH * 8);
		t->mri = malloc(VEC_BATCH * 8);
		if (!t->mli || !t->mri ||
		    !(t->mkb = rel_new(NULL, s->n->nkeys, s->kty)) ||
		    rel_reserve(t->mkb, VEC_BATCH) ||
		    !(t->mpair = pipe_batch(s->pl)))
			return GPMDB_NOMEM;
	} else if (!(t->out = rel_new(NULL, p->top->ncols, p->top->ty))) {
		return GPMDB_NOMEM;
	}
	return GPMDB_OK;
}

/* ---- planning a pipeline ---- */

static bool pipe_cpu(exec_ctx *x, pnode *n)
{
	char why[400];
	int d;

	if (x->db->backend == 1)
		return true;
	d = exec_gpu_decide(x, n, why, sizeof(why));
	return d == XG_CPU || d == XG_NO_OP;
}

static int pipe_cx(exec_ctx *x, pnode *n, int slot, ast_expr *e, bool post,
		   const pnode *in, cexpr **c, bool *ok)
{
	int rc = exec_node_cx(x, n, slot, e, post, in, c);

	if (!rc && !cx_pure(*c))
		*ok = false;
	return rc;
}

/* An inner join's stream: its larger input.  A LEFT join streams its
 * right input when that is the larger and too large to build cheaply
 * (a parallel source): the left rows are built, marked as stream rows
 * meet them, and those left unmarked come out with NULLs at the end
 * (pipe_outer); the other joins stream the left. */
static bool join_kf_shape(const pnode *n);

static bool join_streams_left(const pnode *n)
{
	/* a LEFT join into a GROUP BY on its right keys streams its few
	 * left rows: their keys filter the groups (join_kf_ok; TPC-H Q17
	 * builds 220 of 200,000) */
	if (n->jtype == JOIN_LEFT)
		return n->l->est >= n->r->est ||
		       n->r->est < pipe_small(PIPE_PAR_MIN_ROWS) ||
		       join_kf_shape(n);
	if (n->jtype != JOIN_INNER)
		return true;
	return n->l->est >= n->r->est;
}

static bool join_ok(const pnode *n)
{
	const pnode *ixs = n->r;

	if (!n->nkeys || n->nkeys > 64 || n->jtype == JOIN_CROSS)
		return false;
	/* a SEMI/ANTI join whose right input is much the larger: exec_join
	 * hashes the left rows and lets the right ones probe (a small
	 * table in the cache instead of a large one built) */
	if (join_semi(n->jtype) && n->r->est > 4 * n->l->est)
		return false;
	while (ixs->kind == PN_FILTER && !ixs->post)
		ixs = ixs->l;
	return !(ixs->kind == PN_ISCAN && ixs->ix->njk);
}

/* A join that streams its left input into a table built from a GROUP
 * BY on exactly its right keys (a decorrelated scalar subquery: TPC-H
 * Q2, Q17, Q20), with far fewer left rows than the aggregate reads: the
 * left rows are made first, and their keys keep the aggregate to the
 * groups they will look up (pgroups keyfilter). */
static bool join_kf_shape(const pnode *n)
{
	const pnode *a = n->r;

	if (n->kind != PN_JOIN || !n->nkeys || a->kind != PN_AGG ||
	    a->ngroup != n->nkeys || n->l->est > a->l->est)
		return false;
	for (int k = 0; k < n->nkeys; k++) {
		const ast_expr *e = n->rkeys[k];
		if (e->kind != AST_E_COLUMN || e->rel || a->g[k] != e->col ||
		    a->ty[k].t != expr_type(n->lkeys[k]).t ||
		    a->ty[k].scale != expr_type(n->lkeys[k]).scale)
			return false;
	}
	return true;
}

static bool join_kf_ok(const pnode *n)
{
	return join_kf_shape(n) && join_streams_left(n);
}

/* Compiles stage s over node n; *ok false: n cannot stream. */
static int stage_make(exec_ctx *x, pnode *n, pstage *s, bool *ok)
{
	int rc = GPMDB_OK;

	memset(s, 0, sizeof(*s));
	s->n = n;
	*ok = true;
	switch (n->kind) {
	case PN_FILTER:
		s->kind = PS_FILTER;
		s->in = n->l;
		s->safe = pipe_pred_safe(n->pred);
		rc = pipe_cx(x, n, 0, n->pred, n->post, n->l, &s->pred, ok);
		if (!rc && *ok && s->pred && !x->analyze)
			pipe_fast_make(s->pred, &s->fast);
		return rc;
	case PN_PROJECT:
		s->kind = PS_PROJECT;
		s->in = n->l;
		s->ex = ast_alloc(&x->st->parena,
				  sizeof(cexpr *) * (size_t)(n->nexprs + 1));
		s->plain = ast_alloc(&x->st->parena,
				     sizeof(int) * (size_t)(n->nexprs + 1));
		if (!s->ex || !s->plain)
			return db_err(x->db, GPMDB_NOMEM, "out of memory");
		for (int i = 0; i < n->nexprs && !rc && *ok; i++) {
			int pc = exec_plain_col(n, n->exprs[i], n->post);
			s->plain[i] = -1;
			if (pc >= 0 && n->l->ty[pc].t == n->ty[i].t &&
			    n->l->ty[pc].scale == n->ty[i].scale) {
				s->plain[i] = pc;
				continue;
			}
			rc = pipe_cx(x, n, i, n->exprs[i], n->post, n->l,
				     &s->ex[i], ok);
		}
		return rc;
	default: { /* PN_JOIN */
		bool semi = join_semi(n->jtype);
		s->kind = PS_JOIN;
		s->sleft = join_streams_left(n);
		s->in = s->sleft ? n->l : n->r;
		s->pl = semi && n->pair ? n->pair : n;
		s->ex = ast_alloc(&x->st->parena,
				  sizeof(cexpr *) * (size_t)n->nkeys);
		if (!s->ex)
			return db_err(x->db, GPMDB_NOMEM, "out of memory");
		for (int k = 0; k < n->nkeys && !rc && *ok; k++) {
			ast_expr *e = s->sleft ? n->lkeys[k] : n->rkeys[k];
			s->kty[k] = expr_type(e);
			rc = pipe_cx(x, n, (s->sleft ? 0 : n->nkeys) + k, e,
				     false, s->in, &s->ex[k], ok);
		}
		if (!rc && *ok && n->pred)
			rc = pipe_cx(x, n, 2 * n->nkeys, n->pred, false, s->pl,
				     &s->pred, ok);
		return rc;
	}
	}
}

static void pipe_free(pipe *p)
{
	for (int i = 0; i < p->ns; i++)
		stage_free(p->x, &p->st[i]);
	rel_free(p->srel);
	spill_free(p->ssrc);
	pipe_dict_free(p);
	free(p->tv);
	free(p->mtab);
	free(p->moff);
}

/* The morsels of the source. */
static int pipe_morsels(pipe *p)
{
	exec_ctx *x = p->x;

	if (p->ssrc) {
		p->nm = spill_chunks(p->ssrc, NULL);
		return GPMDB_OK;
	}
	if (!p->src) {
		p->nm = (p->srel->nrows + VEC_BATCH - 1) / VEC_BATCH;
		return GPMDB_OK;
	}
	if (stg_tablet_count(x->db->pool, p->src->table_id, &p->ntab))
		return db_err_stg(x->db);
	p->tv = calloc((size_t)p->ntab + 1, sizeof(*p->tv));
	if (!p->tv)
		return db_err(x->db, GPMDB_NOMEM, "out of memory");
	for (uint32_t t = 0; t < p->ntab; t++) {
		if (stg_tablet_get(x->db->pool, p->src->table_id, t, &p->tv[t]))
			return db_err_stg(x->db);
		p->nm += (p->tv[t].nrows + VEC_BATCH - 1) / VEC_BATCH;
	}
	p->mtab = malloc((p->nm + 1) * sizeof(uint32_t));
	p->moff = malloc((p->nm + 1) * sizeof(uint64_t));
	if (!p->mtab || !p->moff)
		return db_err(x->db, GPMDB_NOMEM, "out of memory");
	uint64_t k = 0;
	for (uint32_t t = 0; t < p->ntab; t++)
		for (uint64_t r = 0; r < p->tv[t].nrows; r += VEC_BATCH) {
			p->mtab[k] = t;
			p->moff[k++] = r;
		}
	return GPMDB_OK;
}

/* ---- merging the threads' results ---- */

static int merge_rel(pipe *p, pthr *th, rel **out)
{
	exec_ctx *x = p->x;
	uint64_t total = 0, at = 0;
	rel *r;
	int rc;

	if (p->nthr == 1) { /* the thread's rows are the result */
		r = th[0].out;
		th[0].out = NULL;
		r->x = x;
		if ((rc = exec_mem(x, r->bytes))) {
			rel_free(r);
			return rc;
		}
		*out = r;
		return GPMDB_OK;
	}
	r = exec_rel_like(x, p->top);

	for (int t = 0; t < p->nthr; t++)
		total += th[t].out->nrows;
	if (!r)
		return x->db->errcode;
	if ((rc = rel_reserve(r, total))) {
		rel_free(r);
		return rc;
	}
	for (int t = 0; t < p->nthr; t++) {
		rel *o = th[t].out;
		for (int c = 0; c < r->ncols && o->nrows; c++) {
			size_t w = rel_width(r->cols[c].ty.t);
			memcpy((char *)r->cols[c].data + at * w,
			       o->cols[c].data, o->nrows * w);
			memcpy(r->cols[c].nulls + at, o->cols[c].nulls,
			       o->nrows);
		}
		at += o->nrows;
		/* the text stays where the thread copied it */
		rel_adopt(r, o);
	}
	r->nrows = total;
	*out = r;
	return GPMDB_OK;
}

/* ---- running one ---- */

static void pipe_figures(pnode *n, uint64_t rows, uint64_t self, uint64_t tm)
{
	n->an_calls++;
	n->an_rows += rows;
	n->an_self_ns += self;
	n->an_ns += tm;
}

/* EXPLAIN ANALYZE's figures of the nodes that ran inside the pipeline:
 * rows out of each; its time and that of the nodes below it, the
 * threads' time divided by their number.  The node on top (run by
 * exec_node) counts them as its children. */
static void pipe_analyzed(pipe *p, const pthr *th)
{
	uint64_t rows[PIPE_MAX + 1] = {0}, incl[PIPE_MAX + 2] = {0}, src = 0;
	uint64_t below, piped = 0, nt = (uint64_t)p->nwork;

	for (int t = 0; t < p->nthr; t++) {
		src += th[t].src_ns;
		for (int i = 0; i <= p->ns; i++) {
			rows[i] += th[t].rows_in[i];
			incl[i] += th[t].incl_ns[i];
		}
	}
	src /= nt;
	for (int i = 0; i <= p->ns; i++)
		incl[i] /= nt;
	if (p->src) {
		pipe_figures(p->src, rows[0], src, src);
		below = piped = src;
	} else {
		below = p->top_src->an_ns;
	}
	/* stage i's own time: its inclusive time less the next one's */
	for (int i = 0; i < p->ns; i++) {
		pstage *s = &p->st[i];
		uint64_t self =
		    incl[i] > incl[i + 1] ? incl[i] - incl[i + 1] : 0;
		uint64_t tm;
		if (s->kind == PS_JOIN)
			self += s->build_ns;
		tm = self + below;
		if (s->kind == PS_JOIN)
			tm += (s->sleft ? s->n->r : s->n->l)->an_ns;
		if (!p->agg && !p->topn && !p->mark && s->n == p->top)
			break;
		pipe_figures(s->n, rows[i + 1], self, tm);
		below = tm;
		piped += self;
	}
	/* the node on top, run by exec_node, counts the pipelined ones as
	 * its children (the built sides and a source relation ran through
	 * exec_node: counted already) */
	p->x->an_kid_ns += piped;
}

int pipe_exec(pipe *p, rel **out)
{
	exec_ctx *x = p->x;
	uint64_t rows = p->src ? 0 : p->ssrc ? 0 : p->srel->nrows;

	if (p->ssrc)
		spill_chunks(p->ssrc, &rows);
	int nt = omp_get_max_threads(), rc = GPMDB_OK, bad = -1, nouter = 0;
	pthr *th;

	for (uint32_t t = 0; p->src && t < p->ntab; t++)
		rows += p->tv[t].nrows;
	if (rows < PIPE_PAR_MIN_ROWS || nt < 2)
		nt = 1;
	if ((uint64_t)nt > p->nm && p->nm)
		nt = (int)p->nm;
	for (int i = 0; i < p->ns; i++)
		nouter += p->st[i].bmatch != NULL;
	nt = spill_threads_fit(p, nt, 1 + nouter);
	/* the threads' states; a LEFT join with its left rows built has nt
	 * more, after them, for the rows no stream row met: the sinks'
	 * states merge in order, so those rows follow all the stream's, as
	 * on one thread */
	p->nwork = nt;
	p->nthr = nt * (1 + nouter);
	if (!(th = calloc((size_t)p->nthr, sizeof(pthr))))
		return db_err(x->db, GPMDB_NOMEM, "out of memory");
	if (p->spill && (rc = spill_threads(p))) {
		free(th);
		return rc;
	}
	for (int t = 0; t < p->nthr && !rc; t++) {
		th[t].ti = t;
		th[t].m0 = t < nt ? p->nm * (uint64_t)t / (uint64_t)nt : 0;
		th[t].m1 =
		    t < nt ? p->nm * (uint64_t)(t + 1) / (uint64_t)nt : 0;
		if (pthr_init(&th[t], p))
			rc = db_err(x->db, GPMDB_NOMEM, "out of memory");
	}
	if (!rc) {
#pragma omp parallel for num_threads(nt) schedule(static, 1) if (nt > 1)
		for (int t = 0; t < nt; t++)
			pipe_thread(&th[t]);
		/* stage by stage: a later stage's marks include the rows an
		 * earlier one let through */
		for (int i = 0, k = 1; i < p->ns && !atomic_load(&p->stop);
		     i++) {
			if (!p->st[i].bmatch)
				continue;
			uint64_t nb = p->st[i].bk->nrows;
			pthr *tk = th + (size_t)nt * (size_t)k++;
#pragma omp parallel for num_threads(nt) schedule(static, 1) if (nt > 1)
			for (int t = 0; t < nt; t++)
				pipe_outer(
				    &tk[t], i, nb * (uint64_t)t / (uint64_t)nt,
				    nb * (uint64_t)(t + 1) / (uint64_t)nt);
		}
#pragma omp parallel for num_threads(nt) schedule(static, 1) if (nt > 1)
		for (int t = 0; t < p->nthr; t++)
			pipe_thread_end(&th[t]);
		if ((rc = db_check_interrupt(x->db)))
			goto done;
		for (int t = 0; t < p->nthr && bad < 0; t++)
			if (th[t].rc)
				bad = t;
		if (bad >= 0) {
			if (th[bad].rc == GPMDB_NOMEM &&
			    !strcmp(th[bad].msg, "memory limit"))
				rc = db_err(x->db, GPMDB_NOMEM,
					    "query needs more than the memory "
					    "limit of %zu MiB (PRAGMA "
					    "memory_limit)",
					    x->mem_limit >> 20);
			else if (th[bad].rc == GPMDB_NOMEM)
				rc =
				    db_err(x->db, GPMDB_NOMEM, "out of memory");
			else if (p->spill || p->ssrc) /* a file's error, or
							 the rows' */
				rc = db_err(x->db, th[bad].rc, "%s",
					    th[bad].msg);
			else
				rc = PIPE_DECLINE; /* the plain operators
						      report it */
			goto done;
		}
		rc = p->spill  ? spill_end(p, th)
		     : p->mark ? GPMDB_OK
		     : p->agg  ? merge_agg(p, th, out)
			       : merge_rel(p, th, out);
		if (!rc && x->analyze)
			pipe_analyzed(p, th);
	}
done:
	for (int t = 0; t < p->nthr; t++)
		if (th[t].p)
			pthr_free(&th[t]);
	free(th);
	return rc;
}

/* The input column of AGG n that e reads as it is (type ty), or -1. */
static int agg_plain(const pnode *n, const ast_expr *e, etype ty)
{
	int pc = exec_plain_col(n, e, false);

	if (pc < 0 || n->l->ty[pc].t != ty.t ||
	    (ty.t == BC_T_DEC && n->l->ty[pc].scale != ty.scale))
		return -1;
	return pc;
}

static int pipe_live(exec_ctx *x, pipe *p);
typedef struct spill_req {
	spill *s;
	pnode *on; /* the join whose keys, or the SORT whose runs */
	ast_expr **keys;
	int base;
	uint64_t keep; /* a SORT's runs: their first keep rows */
} spill_req;
static int pipe_go(exec_ctx *x, pnode *n, pnode *topn, uint64_t keep,
		   pmark *mark, rel **out, pipe_shape *sh, const spill_req *rq);

/*
 * An AGG whose aggregates are all DISTINCT over one argument (TPC-H Q16's
 * count(DISTINCT ps_suppkey)) in two phases: a pipeline groups by the keys
 * and the argument (the distinct pairs, merged across threads as any
 * groups), then agg_distinct_finish aggregates those pairs by the keys.
 * The inner AGG is made once per plan (n->dagg).
 */
static int pipe_distinct(exec_ctx *x, pnode *n, rel **out, pipe_shape *sh)
{
	const ast_expr *arg = n->aggs[0].arg;
	pnode *d = n->dagg;
	rel *pairs = NULL;
	int ng = n->ngroup, rc;

	if (!arg || n->keyfilter || ng + 1 > 64 || !pipe_cpu(x, n))
		return PIPE_DECLINE;
	for (int a = 0; a < n->naggs; a++) {
		int fn = n->aggs[a].fn;
		if (!n->aggs[a].distinct || !n->aggs[a].arg ||
		    !expr_equal(n->aggs[a].arg, arg) ||
		    (fn != AGG_COUNT && fn != AGG_SUM && fn != AGG_AVG &&
		     fn != AGG_MIN && fn != AGG_MAX && fn != AGG_TOTAL))
			return PIPE_DECLINE;
	}
	if (!d) {
		d = ast_alloc(&x->st->parena, sizeof(*d));
		ast_expr **g = ast_alloc(&x->st->parena,
					 sizeof(ast_expr *) * (size_t)(ng + 1));
		etype *ty =
		    ast_alloc(&x->st->parena, sizeof(etype) * (size_t)(ng + 1));
		int *gc =
		    ast_alloc(&x->st->parena, sizeof(int) * (size_t)(ng + 1));
		const char **nm = ast_alloc(&x->st->parena,
					    sizeof(char *) * (size_t)(ng + 1));
		if (!d || !g || !ty || !gc || !nm)
			return db_err(x->db, GPMDB_NOMEM, "out of memory");
		*d = *n;
		if (ng) { /* no GROUP BY: n->group is NULL */
			memcpy(g, n->group, sizeof(ast_expr *) * (size_t)ng);
			memcpy(ty, n->ty, sizeof(etype) * (size_t)ng);
			memcpy(gc, n->g, sizeof(int) * (size_t)ng);
			memcpy(nm, n->names, sizeof(char *) * (size_t)ng);
		}
		g[ng] = (ast_expr *)arg;
		ty[ng] = expr_type(arg);
		gc[ng] = -1;
		nm[ng] = "distinct";
		d->group = g;
		d->ty = ty;
		d->g = gc;
		d->names = nm;
		d->ngroup = d->ncols = d->nvis = ng + 1;
		d->naggs = 0;
		d->aggs = NULL;
		d->cx = NULL;
		d->ncx = 0;
		d->dagg = NULL;
		d->dof = n;
		n->dagg = d;
	}
	if ((rc = pipe_go(x, d, NULL, 0, NULL, sh ? NULL : &pairs, sh, NULL)))
		return rc;
	if (sh)
		return GPMDB_OK;
	rc = agg_distinct_finish(x, n, pairs, out);
	rel_free(pairs);
	return rc;
}

/* Tries to run n (FILTER, PROJECT, JOIN or AGG) as a pipeline. */
/* Pipeline p's sink writes to rq's file: by the hash of rq's join keys
 * (over p->top's layout), or as sorted runs of rq's SORT. */
static int pipe_spill_req(exec_ctx *x, pipe *p, const spill_req *rq, bool *ok)
{
	int rc = GPMDB_OK;

	p->spill = rq->s;
	if (rq->on->kind == PN_SORT) {
		p->srt = rq->on;
		p->runrows = spill_run_rows(x, p->top, omp_get_max_threads(),
					    &p->runbytes);
		p->keep = rq->keep;
		return GPMDB_OK;
	}
	p->nspk = rq->on->nkeys;
	if (!(p->spk =
		  ast_alloc(&x->st->parena, sizeof(cexpr *) * (size_t)p->nspk)))
		return db_err(x->db, GPMDB_NOMEM, "out of memory");
	for (int k = 0; k < p->nspk && !rc && *ok; k++)
		rc = pipe_cx(x, rq->on, rq->base + k, rq->keys[k], false,
			     p->top, &p->spk[k], ok);
	return rc;
}

/* The pipeline ending at n (with topn: n is that SORT's input, and the
 * sink keeps keep rows of each thread).  With sh (EXPLAIN): only says
 * what it would run (pipe_shape_of), running nothing.  With rq: its rows
 * go to a spill file (pipe_run_spill). */
static int pipe_go(exec_ctx *x, pnode *n, pnode *topn, uint64_t keep,
		   pmark *mark, rel **out, pipe_shape *sh, const spill_req *rq)
{
	pipe p;
	pnode *chain[PIPE_MAX], *c;
	int nc = 0, rc = GPMDB_OK;
	bool ok = true;

	/* a correlated subquery runs once per outer row: its plain
	 * operators keep their per-execution caches (an uncorrelated one
	 * runs once: pipelines; outer references are not pure anyway) */
	if (x->corr || (rq && n->kind != PN_FILTER && n->kind != PN_PROJECT &&
			n->kind != PN_JOIN && n->kind != PN_SCAN))
		return PIPE_DECLINE;
	memset(&p, 0, sizeof(p));
	p.x = x;
	p.topn = topn;
	p.keep = keep;
	p.mark = mark;
	c = n;
	if (n->kind == PN_AGG && !topn && !mark && n->naggs &&
	    n->aggs[0].distinct)
		return pipe_distinct(x, n, out, sh);
	if (n->kind == PN_AGG) {
		if (n->naggs > 120 || n->ngroup > 64 || !pipe_cpu(x, n))
			return PIPE_DECLINE;
		for (int a = 0; a < n->naggs; a++)
			if (n->aggs[a].distinct ||
			    n->aggs[a].fn == AGG_GROUP_CONCAT)
				return PIPE_DECLINE;
		p.agg = n;
		p.kf = n->keyfilter;
		c = n->l;
	}
	/* the chain of streaming nodes, top down; a join whose left keys
	 * will filter its built aggregate ends it (its left input is the
	 * source relation) */
	bool kf = false;
	while (!kf && nc < PIPE_MAX && pipe_cpu(x, c) &&
	       (c->kind == PN_FILTER || c->kind == PN_PROJECT ||
		(c->kind == PN_JOIN && join_ok(c) && !spill_marked(x, c))) &&
	       /* a view's use that shares its rows: a source (exec_node
		  runs it once) */
	       (c == n || !c->vsh || !exec_share_ok(c))) {
		chain[nc++] = c;
		kf = c->kind == PN_JOIN && join_kf_ok(c);
		c = c->kind == PN_JOIN && !join_streams_left(c) ? c->r : c->l;
	}
	p.top_src = c;
	/* a join that spills: its rows come from its file (spill.c) */
	bool sj = c->kind == PN_JOIN && spill_marked(x, c) && !kf && !sh;
	if (c->kind == PN_SCAN && pipe_cpu(x, c) && !kf)
		p.src = c;
	else if (!nc && !sj)
		return PIPE_DECLINE; /* an aggregate of a relation: exec_agg;
					a top-N of one: exec_sort_top */
	p.top = p.agg ? n->l : n;
	/* compile bottom up; a node that cannot stream ends the chain
	 * below it (it becomes the source) */
	for (int i = nc - 1; i >= 0 && !rc; i--) {
		pstage *s = &p.st[p.ns];
		if ((rc = stage_make(x, chain[i], s, &ok)))
			break;
		if (!ok) { /* chain[i] and those above it: plain */
			return PIPE_DECLINE;
		}
		s->kf = kf && p.ns == 0;
		p.ns++;
	}
	if (!rc && p.agg) {
		const pnode *an = p.agg;
		int ng = an->ngroup;
		p.gx =
		    ast_alloc(&x->st->parena,
			      sizeof(cexpr *) * (size_t)(ng + an->naggs + 1));
		p.gcol = ast_alloc(&x->st->parena,
				   sizeof(int) * (size_t)(ng + an->naggs + 1));
		if (!p.gx || !p.gcol)
			rc = db_err(x->db, GPMDB_NOMEM, "out of memory");
		for (int k = 0; k < ng && !rc && ok; k++) {
			p.gcol[k] = agg_plain(an, an->group[k], an->ty[k]);
			rc = pipe_cx(x, n, k, an->group[k], false, an->l,
				     &p.gx[k], &ok);
		}
		for (int a = 0; a < an->naggs && !rc && ok; a++) {
			p.aty[a] = an->aggs[a].arg ? expr_type(an->aggs[a].arg)
						   : et_make(BC_T_INT);
			p.gx[ng + a] = NULL;
			p.gcol[ng + a] =
			    an->aggs[a].arg
				? agg_plain(an, an->aggs[a].arg, p.aty[a])
				: -1;
			if (an->aggs[a].arg)
				rc = pipe_cx(x, n, ng + a, an->aggs[a].arg,
					     false, an->l, &p.gx[ng + a], &ok);
		}
		if (!rc && !ok)
			return PIPE_DECLINE;
	}
	if (rc || sh)
		return rc ? rc : pipe_shape_of(&p, sh);
	if (rq && (rc = pipe_spill_req(x, &p, rq, &ok)))
		return rc;
	if (!ok)
		return PIPE_DECLINE;
	if ((rc = pipe_live(x, &p)))
		return rc;
	/* the breakers below: the source relation, the joins' built sides */
	if (sj)
		rc = spill_join_source(x, c, &p.ssrc);
	else if (!p.src)
		rc = exec_node(x, c, &p.srel);
	if (spill_over(x, rc) && !sj && !kf && !sh && c->kind == PN_JOIN &&
	    spill_marked(x, c)) {
		/* the join spilled but its rows passed the limit: they are
		 * this pipeline's source from its file instead */
		spill_clear(x);
		pipe_free(&p);
		return pipe_go(x, n, topn, keep, mark, out, sh, rq);
	}
	for (int i = 0; i < p.ns && !rc; i++) {
		if (p.st[i].kind != PS_JOIN)
			continue;
		rc = stage_build(x, &p.st[i], p.srel);
		if (!spill_over(x, rc))
			continue;
		if (!spill_join_ok(x, p.st[i].n)) { /* the error says why */
			rc = spill_join(x, p.st[i].n, NULL);
			break;
		}
		/* the join runs by partitions, a breaker below the
		 * pipeline that runs again (spill.c) */
		p.st[i].n->spill_gen = x->gen;
		spill_clear(x);
		pipe_free(&p);
		return pipe_go(x, n, topn, keep, mark, out, sh, rq);
	}
	if (!rc)
		rc = pipe_morsels(&p);
	if (!rc)
		rc = pipe_dict_tables(&p);
	if (!rc)
		rc = pipe_exec(&p, out);
	/* the groups passed the limit: by partitions (spill.c) */
	if (spill_over(x, rc) && p.agg && p.agg->ngroup && !rq && !topn &&
	    !mark && p.nthr)
		rc = spill_agg(&p, out);
	if (!rc && x->analyze)
		pipe_ran(&p);
	pipe_free(&p);
	return rc;
}

static int pipe_run_semi(exec_ctx *x, pnode *n, rel **out, pipe_shape *sh);

/* The input columns c reads into mark. */
static void live_cx(const cexpr *c, uint8_t *mark, int ncols)
{
	for (int k = 0; c && k < c->ninputs; k++)
		if (c->in[k].kind == IN_COL && c->in[k].col < ncols)
			mark[c->in[k].col] = 1;
}

/* Late materialisation: which columns of each batch a later stage or
 * the sink reads (p->live), from the sink down.  A join then gathers,
 * a filter copies and a projection computes only those (TPC-H Q5's
 * join of lineitem with orders and customer carried nine columns to
 * read four). */
static int pipe_live(exec_ctx *x, pipe *p)
{
	const pnode *lay[PIPE_MAX + 1];
	int nc[PIPE_MAX + 1];

	if (p->mark || !p->agg)
		return GPMDB_OK; /* a relation or the marks: all of them */
	lay[0] = p->src ? p->src : p->top_src;
	for (int i = 0; i < p->ns; i++) {
		const pstage *s = &p->st[i];
		lay[i + 1] =
		    s->kind == PS_JOIN && join_semi(s->n->jtype) ? s->in : s->n;
	}
	for (int i = 0; i <= p->ns; i++) {
		nc[i] = lay[i]->ncols;
		if (!(p->live[i] =
			  ast_alloc(&x->st->parena, (size_t)nc[i] + 1)))
			return db_err(x->db, GPMDB_NOMEM, "out of memory");
		memset(p->live[i], 0, (size_t)nc[i] + 1);
	}
	/* the sink: group keys and arguments */
	uint8_t *top = p->live[p->ns];
	for (int k = 0; k < p->agg->ngroup + p->agg->naggs; k++) {
		if (p->gcol[k] >= 0 && p->gcol[k] < nc[p->ns])
			top[p->gcol[k]] = 1;
		live_cx(p->gx[k], top, nc[p->ns]);
	}
	for (int i = p->ns - 1; i >= 0; i--) {
		const pstage *s = &p->st[i];
		uint8_t *out = p->live[i + 1], *in = p->live[i];
		switch (s->kind) {
		case PS_FILTER:
			memcpy(in, out, (size_t)nc[i]);
			live_cx(s->pred, in, nc[i]);
			break;
		case PS_PROJECT:
			for (int c = 0; c < s->n->nexprs; c++) {
				if (!out[c])
					continue;
				if (s->plain[c] >= 0)
					in[s->plain[c]] = 1;
				else
					live_cx(s->ex[c], in, nc[i]);
			}
			break;
		default: {
			bool semi = join_semi(s->n->jtype);
			int off = semi || s->sleft ? 0 : s->n->l->ncols;
			if (semi && s->pred && !s->sleft) {
				memset(in, 1, (size_t)nc[i]);
				break;
			}
			/* the residual reads the pairs: non-semi joins emit
			 * its columns too; a semi join's stream side of the
			 * pair is its input */
			live_cx(s->pred, semi ? in : out,
				semi ? nc[i] : nc[i + 1]);
			for (int c = 0; c < nc[i]; c++)
				in[c] |= out[c + off];
			for (int k = 0; k < s->n->nkeys; k++)
				live_cx(s->ex[k], in, nc[i]);
		}
		}
	}
	return GPMDB_OK;
}

/* pipe_run, pipe_run_topn (topn: n is the SORT) and, with sh, pipe_plan */
static int pipe_node(exec_ctx *x, pnode *n, bool topn, uint64_t keep, rel **out,
		     pipe_shape *sh)
{
	int rc;

	if (topn)
		return !pipe_cpu(x, n) || keep > (1u << 24)
			   ? PIPE_DECLINE
			   : pipe_go(x, n->l, n, keep, NULL, out, sh, NULL);
	if (n->kind == PN_JOIN && !sh && spill_marked(x, n))
		return spill_join(x, n, out);
	if (n->kind == PN_JOIN &&
	    (rc = pipe_run_semi(x, n, out, sh)) != PIPE_DECLINE)
		return !sh && spill_over(x, rc) ? spill_join(x, n, out) : rc;
	return pipe_go(x, n, NULL, 0, NULL, out, sh, NULL);
}

int pipe_run_spill(exec_ctx *x, pnode *n, spill *s, pnode *on, ast_expr **keys,
		   int base, uint64_t keep)
{
	spill_req rq = {s, on, keys, base, keep};

	return pipe_go(x, n, NULL, 0, NULL, NULL, NULL, &rq);
}

int pipe_run(exec_ctx *x, pnode *n, rel **out)
{
	return pipe_node(x, n, false, 0, out, NULL);
}

int pipe_run_topn(exec_ctx *x, pnode *n, uint64_t keep, rel **out)
{
	return pipe_node(x, n, true, keep, out, NULL);
}

int pipe_plan(exec_ctx *x, pnode *n, uint64_t keep, pipe_shape *sh)
{
	memset(sh, 0, sizeof(*sh));
	return pipe_node(x, n, n->kind == PN_SORT, keep, NULL, sh);
}

/* A SEMI/ANTI join whose right input is much the larger: the left rows
 * are hashed and the right input streams through a pipeline into the
 * mark sink (instead of exec_join materialising the right side). */
static int pipe_run_semi(exec_ctx *x, pnode *n, rel **out, pipe_shape *sh)
{
	int nk = n->nkeys, jt = n->jtype, rc = GPMDB_OK;
	const pnode *ixs = n->r;
	pmark mk;
	pstage *s = &mk.s;
	bool ok = true;

	if (n->kind != PN_JOIN || !join_semi(jt) || !nk || nk > 64 || x->corr ||
	    n->r->est <= 4 * n->l->est || !pipe_cpu(x, n))
		return PIPE_DECLINE;
	while (ixs->kind == PN_FILTER && !ixs->post)
		ixs = ixs->l;
	if (ixs->kind == PN_ISCAN && ixs->ix->njk)
		return PIPE_DECLINE;
	memset(&mk, 0, sizeof(mk));
	s->kind = PS_JOIN;
	s->n = n;
	s->sleft = false; /* the left is built */
	s->pl = n->pair ? n->pair : n;
	for (int k = 0; k < nk && !rc && ok; k++) {
		s->kty[k] = expr_type(n->rkeys[k]);
		rc = pipe_cx(x, n, nk + k, n->rkeys[k], false, n->r, &mk.rk[k],
			     &ok);
	}
	if (!rc && ok && n->pred)
		rc =
		    pipe_cx(x, n, 2 * nk, n->pred, false, s->pl, &s->pred, &ok);
	if (rc || !ok)
		return rc ? rc : PIPE_DECLINE;
	if (sh) /* the left side is built first: pipe_shape_of */
		return pipe_go(x, n->r, NULL, 0, &mk, NULL, sh, NULL);
	if ((rc = exec_node(x, n->l, &s->build)) || (rc = stage_hash(x, s)))
		goto out;
	if (!(mk.matched = pipe_zalloc(s->build->nrows + 1))) {
		rc = db_err(x->db, GPMDB_NOMEM, "out of memory");
		goto out;
	}
	if ((rc = pipe_go(x, n->r, NULL, 0, &mk, NULL, NULL, NULL)))
		goto out; /* PIPE_DECLINE too: exec_join runs it */
	/* the left rows that matched (SEMI) or not (ANTI; NOT IN: none
	 * after a NULL right key, all when the right side is empty) */
	uint64_t nl = s->build->nrows, m = 0;
	uint32_t *idx = malloc(sizeof(uint32_t) * (nl + 1));
	if (!idx) {
		rc = db_err(x->db, GPMDB_NOMEM, "out of memory");
		goto out;
	}
	bool none = jt == JOIN_ANTI_NULL && atomic_load(&mk.rany) &&
		    atomic_load(&mk.rnull);
	bool all = jt == JOIN_ANTI_NULL && !atomic_load(&mk.rany);
	for (uint64_t i = 0; i < nl && !none; i++) {
		bool keep =
		    jt == JOIN_SEMI   ? mk.matched[i] != 0
		    : jt == JOIN_ANTI ? !mk.matched[i]
		    : all	      ? true
			  : !mk.matched[i] && !exec_key_has_null(s->bk, i);
		if (keep)
			idx[m++] = (uint32_t)i;
	}
	rc = exec_gather_out(x, n, s->build, idx, m, out);
out:
	free(mk.matched);
	stage_free(x, s);
	return rc;
}
