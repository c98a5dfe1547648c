/*
 * exec_join.c - the CPU hash join: keys evaluated per side, a chained table
 * over the built side, probes on all threads, pairs emitted in probe order
 * through the residual; LEFT, SEMI and ANTI joins.
 */
#include "../engine.h"
#include "../value.h"
#include "exec_int.h"

#include <omp.h>
#include <stdlib.h>
#include <string.h>

/* ---- join ---- */

typedef struct keyset {
	rel *k; /* evaluated keys, one column per key */
} keyset;

int exec_eval_keys(exec_ctx *x, pnode *n, int base, ast_expr **keys,
		   const pnode *side, const rel *in, rel **out)
{
	etype ty[64];
	rel *k;
	int rc;

	for (int i = 0; i < n->nkeys; i++)
		ty[i] = expr_type(keys[i]);
	if (!(k = rel_new(x, n->nkeys, ty)))
		return x->db->errcode;
	if ((rc = rel_reserve(k, in->nrows)))
		goto fail;
	for (int i = 0; i < n->nkeys; i++) {
		cexpr *c;
		if ((rc = exec_node_cx(x, n, base + i, keys[i], false, side,
				       &c)) ||
		    (rc = exec_eval_into(x, c, in, k, i)))
			goto fail;
	}
	k->nrows = in->nrows;
	*out = k;
	return GPMDB_OK;
fail:
	rel_free(k);
	return rc;
}

bool exec_key_has_null(const rel *k, uint64_t i)
{
	for (int c = 0; c < k->ncols; c++)
		if (k->cols[c].nulls[i])
			return true;
	return false;
}

/* Appends the pairs (li[k], ri[k]) (ri < 0: NULLs) to out.  Values are
 * copied by width; text is referenced, not copied: exec_join makes the
 * output adopt the inputs' text (rel_adopt). */
int exec_join_emit(rel *out, const rel *l, const rel *r, const int64_t *li,
		   const int64_t *ri, uint64_t m, const uint8_t *live)
{
	int rc;

	bool lneg = false, rneg = false;

	if ((rc = rel_reserve(out, m)))
		return rc;
	/* sides without a missing row (inner joins, matched LEFT rows) are
	 * gathered without a branch: a NULL row holds 0 in its source too */
	for (uint64_t k = 0; k < m; k++) {
		lneg |= li[k] < 0;
		rneg |= ri[k] < 0;
	}
	for (int c = 0; c < out->ncols; c++) {
		if (live && !live[c])
			continue;
		bool right = c >= l->ncols;
		const rel *src = right ? r : l;
		const rcol *s = &src->cols[right ? c - l->ncols : c];
		const int64_t *ix = right ? ri : li;
		bool neg = right ? rneg : lneg;
		rcol *d = &out->cols[c];
		uint64_t o = out->nrows;
#define JOIN_EMIT(T)                                                           \
	do {                                                                   \
		T *dd = (T *)d->data + o;                                      \
		const T *ss = (const T *)s->data;                              \
		if (!neg) {                                                    \
			for (uint64_t k = 0; k < m; k++) {                     \
				dd[k] = ss[ix[k]];                             \
				d->nulls[o + k] = s->nulls[ix[k]];             \
			}                                                      \
			break;                                                 \
		}                                                              \
		for (uint64_t k = 0; k < m; k++) {                             \
			int64_t i = ix[k];                                     \
			if (i < 0 || s->nulls[i]) {                            \
				d->nulls[o + k] = 1;                           \
				memset(&dd[k], 0, sizeof(T));                  \
				continue;                                      \
			}                                                      \
			d->nulls[o + k] = 0;                                   \
			dd[k] = ss[i];                                         \
		}                                                              \
	} while (0)
		switch (d->ty.t) {
		case BC_T_BOOL:
			JOIN_EMIT(uint8_t);
			break;
		case BC_T_DATE:
			JOIN_EMIT(int32_t);
			break;
		case BC_T_TEXT:
			JOIN_EMIT(vec_str);
			break;
		default:
			JOIN_EMIT(int64_t);
		}
#undef JOIN_EMIT
	}
	out->nrows += m;
	return GPMDB_OK;
}

typedef struct jstate {
	exec_ctx *x;
	pnode *n;
	rel *l, *r, *out, *chunk;
	cexpr *pred;
	int64_t li[VEC_BATCH], ri[VEC_BATCH];
	uint32_t m;
	uint8_t *matched; /* LEFT, SEMI, ANTI JOIN: left rows with a match */
	bool semi; /* SEMI/ANTI: pairs only mark matched, never emitted */
	/* out's rows go to drain once it holds a batch (exec_join_rels) */
	int (*drain)(void *arg, rel *out);
	void *darg;
} jstate;

/* Hands out's rows to the drain when it holds a batch (all: at the
 * end), then empties it: a spilled join's partition need not fit. */
static int join_drain(jstate *j, bool all)
{
	int rc;

	if (!j->drain || !j->out->nrows || (!all && j->out->nrows < VEC_BATCH))
		return GPMDB_OK;
	rc = j->drain(j->darg, j->out);
	j->out->nrows = 0; /* its text is the inputs' (exec_join_emit) */
	return rc;
}

/* Flushes buffered pairs: the residual filters them into out. */
static int join_flush(jstate *j)
{
	int rc;

	if (!j->m)
		return GPMDB_OK;
	/* a batch of pairs: a cross join may make billions of them */
	if ((rc = db_check_interrupt(j->x->db)))
		return rc;
	if (!j->pred) {
		if (j->matched)
			for (uint32_t k = 0; k < j->m; k++)
				j->matched[j->li[k]] = 1;
		rc = j->semi ? GPMDB_OK
			     : exec_join_emit(j->out, j->l, j->r, j->li, j->ri,
					      j->m, NULL);
		j->m = 0;
		return rc ? rc : join_drain(j, false);
	}
	j->chunk->nrows = 0;
	vec_arena_reset(&j->chunk->strs);
	if ((rc = exec_join_emit(j->chunk, j->l, j->r, j->li, j->ri, j->m,
				 NULL)))
		return rc;
	vec v;
	if ((rc = cx_eval(j->x, j->pred, j->chunk, 0, j->m, &v)))
		return rc;
	int64_t li[VEC_BATCH], ri[VEC_BATCH];
	uint32_t sel[VEC_BATCH];
	/* exec_filter_true reads every result type: a residual such as `AND 1`
	 * or `AND -12.0` is an INT or REAL vector, not BOOL. */
	uint32_t k2 = exec_filter_true(&v, j->m, 0, sel);
	for (uint32_t k = 0; k < k2; k++) {
		li[k] = j->li[sel[k]];
		ri[k] = j->ri[sel[k]];
		if (j->matched)
			j->matched[li[k]] = 1;
	}
	j->m = 0;
	if (j->semi)
		return GPMDB_OK;
	rc = exec_join_emit(j->out, j->l, j->r, li, ri, k2, NULL);
	return rc ? rc : join_drain(j, false);
}

static int join_pair(jstate *j, int64_t li, int64_t ri)
{
	j->li[j->m] = li;
	j->ri[j->m++] = ri;
	return j->m == VEC_BATCH ? join_flush(j) : GPMDB_OK;
}

/* Left rows probed per parallel step: bounds the pairs held at once. */
#define JOIN_PROBE_BLOCK (256u * 1024)

/* The pairs one thread found for its left rows, in order. */
typedef struct join_pairs {
	int64_t *li, *ri;
	uint64_t n, cap;
	bool nomem;
} join_pairs;

static void join_pairs_add(join_pairs *p, int64_t li, int64_t ri)
{
	if (p->nomem)
		return;
	if (p->n == p->cap) {
		uint64_t cap = p->cap ? p->cap * 2 : 4096;
		int64_t *a = realloc(p->li, cap * 8);
		int64_t *b = a ? realloc(p->ri, cap * 8) : NULL;
		if (a)
			p->li = a;
		if (!b) {
			p->nomem = true;
			return;
		}
		p->ri = b;
		p->cap = cap;
	}
	p->li[p->n] = li;
	p->ri[p->n++] = ri;
}

/*
 * Hash join on the keys lk (left) and rk (right): a chained table over
 * the built side's rows, each chain newest first; the other side's rows
 * are probed by all threads a block at a time, each thread a contiguous
 * range, and the pairs are then emitted in probe-row order (join_pair:
 * residual, LEFT JOIN marks), as one thread would.  Rows with a NULL key
 * match nothing.
 *
 * Normally the right rows are built and the left rows probe.  rev, for a
 * SEMI/ANTI JOIN whose right side has more rows than its left (an EXISTS
 * over lineitem for a few orders), builds over the left keys and lets the
 * right rows probe.  Without a residual such a probe only marks the left
 * rows it meets (several threads may store the same 1: atomic); with one,
 * the pairs go through join_pair (its residual marks).
 */
static int join_hash(exec_ctx *x, jstate *j, const rel *lk, const rel *rk,
		     bool rev)
{
	const rel *bk = rev ? lk : rk, *pk = rev ? rk : lk;
	uint64_t nbuild = bk->nrows, nprobe = pk->nrows, nb = 64;
	int64_t *head, *next;
	uint64_t *hash;
	int nt = omp_get_max_threads();
	join_pairs *pp;
	/* SEMI/ANTI without a residual: one match decides a left row */
	bool first = !rev && j->semi && !j->pred, mark = rev && !j->pred;
	int rc;

	while (nb < nbuild * 2)
		nb *= 2;
	head = malloc(nb * 8);
	next = malloc(nbuild * 8 + 8);
	hash = malloc(nbuild * 8 + 8);
	pp = calloc((size_t)nt, sizeof(join_pairs));
	if (!head || !next || !hash || !pp) {
		rc = db_err(x->db, GPMDB_NOMEM, "out of memory");
		goto out;
	}
	if ((rc = exec_mem(x, (nb + 2 * nbuild) * 8)))
		goto out;
	memset(head, 0xff, nb * 8);
#pragma omp parallel for schedule(static) if (nbuild >= 65536)
	for (uint64_t i = 0; i < nbuild; i++)
		hash[i] = exec_key_has_null(bk, i)
			      ? 0
			      : exec_hash_row(bk, bk->ncols, i);
	for (uint64_t i = 0; i < nbuild; i++) {
		uint64_t b = hash[i] & (nb - 1);
		if (exec_key_has_null(bk, i)) {
			next[i] = -1;
			continue;
		}
		next[i] = head[b];
		head[b] = (int64_t)i;
	}
	for (uint64_t lo = 0; lo < nprobe && !rc; lo += JOIN_PROBE_BLOCK) {
		uint64_t hi = nprobe - lo < JOIN_PROBE_BLOCK
				  ? nprobe
				  : lo + JOIN_PROBE_BLOCK;
		bool stop = false;
		if ((rc = db_check_interrupt(x->db)))
			break;
		/* every buffer, not only those of the threads that run: a
		 * small last block runs on one thread, and the others' pairs
		 * of the previous block must not be emitted twice */
		for (int t = 0; t < nt; t++)
			pp[t].n = 0;
#pragma omp parallel num_threads(nt) if (hi - lo >= 16384)
		{
			int t = omp_get_thread_num(),
			    tn = omp_get_num_threads();
			join_pairs *p = &pp[t];
			uint64_t a =
			    lo + (hi - lo) * (uint64_t)t / (uint64_t)tn;
			uint64_t z =
			    lo + (hi - lo) * (uint64_t)(t + 1) / (uint64_t)tn;
			for (uint64_t i = a; i < z && !p->nomem; i++) {
				if (!(i & 4095) &&
				    atomic_load(&x->db->interrupted))
					break;
				if (exec_key_has_null(pk, i))
					continue;
				uint64_t hv = exec_hash_row(pk, pk->ncols, i);
				for (int64_t e = head[hv & (nb - 1)]; e >= 0;
				     e = next[e]) {
					int64_t li = rev ? e : (int64_t)i,
						ri = rev ? (int64_t)i : e;
					if (hash[e] != hv ||
					    !exec_keys_eq(lk, (uint64_t)li, rk,
							  (uint64_t)ri))
						continue;
					if (mark) {
						__atomic_store_n(
						    &j->matched[li], 1,
						    __ATOMIC_RELAXED);
						continue;
					}
					join_pairs_add(p, li, ri);
					if (first)
						break;
				}
			}
		}
		for (int t = 0; t < nt; t++)
			stop |= pp[t].nomem;
		if (stop) {
			rc = db_err(x->db, GPMDB_NOMEM, "out of memory");
			break;
		}
		for (int t = 0; t < nt && !rc; t++)
			for (uint64_t k = 0; k < pp[t].n && !rc; k++)
				rc = join_pair(j, pp[t].li[k], pp[t].ri[k]);
	}
	if (!rc)
		rc = db_check_interrupt(x->db);
	if (x->mem >= (nb + 2 * nbuild) * 8)
		x->mem -= (nb + 2 * nbuild) * 8;
out:
	for (int t = 0; pp && t < nt; t++) {
		free(pp[t].li);
		free(pp[t].ri);
	}
	free(pp);
	free(head);
	free(next);
	free(hash);
	return rc;
}

/* SEMI/ANTI JOIN's output: the left rows that matched (SEMI) or did not
 * (ANTI; ANTI_NULL with NOT IN's rule for NULLs: none when the right side
 * has a NULL key, all when it is empty, never a NULL left key). */
static int semi_out(jstate *j, const rel *lk, const rel *rk)
{
	int jt = j->n->jtype;
	bool all = false, none = false;
	int64_t li[VEC_BATCH];
	uint32_t m = 0;
	int rc;

	if (jt == JOIN_ANTI_NULL) {
		all = j->r->nrows == 0;
		for (uint64_t i = 0; !all && i < rk->nrows && !none; i++)
			none = exec_key_has_null(rk, i);
	}
	if (none)
		return GPMDB_OK;
	for (uint64_t i = 0; i < j->l->nrows; i++) {
		bool keep = jt == JOIN_SEMI ? j->matched[i] != 0
			    : all	    ? true
			    : jt == JOIN_ANTI
				? !j->matched[i]
				: !j->matched[i] && !exec_key_has_null(lk, i);
		if (!keep)
			continue;
		li[m++] = (int64_t)i;
		if (m == VEC_BATCH) {
			if ((rc = exec_join_emit(j->out, j->l, j->r, li, li, m,
						 NULL)) ||
			    (rc = join_drain(j, false)))
				return rc;
			m = 0;
		}
	}
	return m ? exec_join_emit(j->out, j->l, j->r, li, li, m, NULL)
		 : GPMDB_OK;
}

static int join_run(jstate *j0, rel *lk, rel **out);

static int join_mat(exec_ctx *x, pnode *n, rel **out);

int exec_join(exec_ctx *x, pnode *n, rel **out)
{
	int rc = join_mat(x, n, out);

	/* past the memory limit: by partitions (spill.c), or why not */
	return rc && spill_over(x, rc) ? spill_join(x, n, out) : rc;
}

/* The join of its inputs' relations. */
static int join_mat(exec_ctx *x, pnode *n, rel **out)
{
	jstate j = {0};
	rel *lk = NULL;
	int rc;

	j.x = x;
	j.n = n;
	if ((rc = exec_node(x, n->l, &j.l)))
		return rc;
	/* an inner side read through an index by the outer rows' keys
	 * (plan_index.c try_join): the keys first */
	pnode *ixs = n->r;
	while (ixs->kind == PN_FILTER && !ixs->post)
		ixs = ixs->l;
	if (ixs->kind == PN_ISCAN && ixs->ix->njk && n->nkeys) {
		if ((rc = exec_eval_keys(x, n, 0, n->lkeys, n->l, j.l, &lk)))
			goto fail;
		ixs->ix->jrel = lk;
		rc = exec_node(x, n->r, &j.r);
		ixs->ix->jrel = NULL;
		if (rc)
			goto fail;
	} else if ((rc = exec_node(x, n->r, &j.r)))
		goto fail;
	return join_run(&j, lk, out);
fail:
	rel_free(lk);
	rel_free(j.l);
	return rc;
}

int exec_join_rels(exec_ctx *x, pnode *n, rel *l, rel *r,
		   int (*drain)(void *arg, rel *out), void *arg, rel **out)
{
	jstate j = {0};

	j.x = x;
	j.n = n;
	j.l = l;
	j.r = r;
	j.drain = drain;
	j.darg = arg;
	return join_run(&j, NULL, out);
}

/* The join of j0's inputs (freed), lk: the left keys or NULL. */
static int join_run(jstate *j0, rel *lk, rel **out)
{
	jstate j = *j0;
	exec_ctx *x = j.x;
	pnode *n = j.n;
	rel *rk = NULL;
	/* SEMI/ANTI: the residual runs over (left, right) pairs shaped as
	 * n->pair; the output has the left columns only */
	bool semi = n->jtype == JOIN_SEMI || n->jtype == JOIN_ANTI ||
		    n->jtype == JOIN_ANTI_NULL;
	const pnode *pl = semi && n->pair ? n->pair : n;
	int rc = GPMDB_OK;

	j.semi = semi;
	*out = NULL;
	if (!(j.out = exec_rel_like(x, n)) ||
	    !(j.chunk = exec_rel_like(x, pl))) {
		rc = x->db->errcode;
		goto done;
	}
	if (n->pred && (rc = exec_node_cx(x, n, 2 * n->nkeys, n->pred, false,
					  pl, &j.pred)))
		goto done;
	if (n->jtype == JOIN_LEFT || semi) {
		j.matched = calloc(j.l->nrows + 1, 1);
		if (!j.matched) {
			rc = db_err(x->db, GPMDB_NOMEM, "out of memory");
			goto done;
		}
	}
	if (n->nkeys) {
		if ((!lk && (rc = exec_eval_keys(x, n, 0, n->lkeys, n->l, j.l,
						 &lk))) ||
		    (rc = exec_eval_keys(x, n, n->nkeys, n->rkeys, n->r, j.r,
					 &rk)))
			goto done;
		if ((rc = join_hash(x, &j, lk, rk,
				    semi && rk->nrows > lk->nrows)))
			goto done;
	} else {
		for (uint64_t i = 0; i < j.l->nrows; i++)
			for (uint64_t k = 0; k < j.r->nrows; k++)
				if ((rc =
					 join_pair(&j, (int64_t)i, (int64_t)k)))
					goto done;
	}
	if ((rc = join_flush(&j)))
		goto done;
	if (semi && (rc = semi_out(&j, lk, rk)))
		goto done;
	if (j.matched && !semi)
		for (uint64_t i = 0; i < j.l->nrows; i++)
			if (!j.matched[i] &&
			    ((rc = exec_join_emit(j.out, j.l, j.r,
						  (int64_t[]){(int64_t)i},
						  (int64_t[]){-1}, 1, NULL)) ||
			     (rc = join_drain(&j, false))))
				goto done;
	if (j.drain) { /* every row went to the drain */
		rc = join_drain(&j, true);
		goto done;
	}
	/* the output references the inputs' text (exec_join_emit) */
	for (int c = 0; c < j.out->ncols; c++)
		if (j.out->cols[c].ty.t == BC_T_TEXT) {
			rel_adopt(j.out, c < j.l->ncols ? j.l : j.r);
			rel_adopt(j.out, c < j.l->ncols ? j.r : j.l);
			break;
		}
	*out = j.out;
	j.out = NULL;
done:
	rel_free(lk);
	rel_free(rk);
	free(j.matched);
	rel_free(j.chunk);
	rel_free(j.out);
	rel_free(j.l);
	rel_free(j.r);
	return rc;
}
