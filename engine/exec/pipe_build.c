/*
 * pipe_build.c - the built side of a pipeline's hash join: the input run
 * first (through exec_node; with the stream's keys as the key filter of
 * a built GROUP BY), its keys hashed, the open-addressing table of
 * (hash tag, row) slots and the rows' chains, built by all threads over
 * 64 regions when large, and the bloom bits of a small one.  The probes
 * are pipe.c's (stage_join); the table's layout is pipe_int.h's pstage.
 */
#include "../engine.h"
#include "exec_int.h"
#include "pipe_int.h"

#include <omp.h>
#include <stdlib.h>
#include <string.h>

/* Inserts built row i (hash hv) at the front of its hash's chain. */
static void jt_insert(pstage *s, uint64_t i, uint64_t hv)
{
	uint64_t tag = hv >> 32, e, base = jt_base(s, hv), rm = s->rmask;
	uint64_t o = (hv ^ hv >> 29) & rm;

	while ((e = s->slot[base + o]) &&
	       (e >> 32 != tag || s->hash[(e & 0xffffffffu) - 1] != hv))
		o = (o + 1) & rm;
	s->next[i] = (uint32_t)(e & 0xffffffffu);
	s->slot[base + o] = tag << 32 | (i + 1);
}

/* Runs the built aggregate of join stage s with the stream's keys (of
 * srel) as its key filter. */
static int stage_build_kf(exec_ctx *x, pstage *s, const rel *srel)
{
	pnode *n = s->n;
	int nk = n->nkeys, rc;
	rel *kk = NULL;
	pgroups g;

	memset(&g, 0, sizeof(g));
	if ((rc = exec_eval_keys(x, n, 0, n->lkeys, n->l, srel, &kk)))
		return rc;
	g.cap = 64;
	g.nslot = 256;
	g.keys = rel_new(NULL, nk, s->kty);
	g.hash = malloc(g.cap * 8);
	g.st = malloc(g.cap * sizeof(aggst));
	g.slot = pipe_zalloc(g.nslot * 8);
	if (!g.keys || !g.hash || !g.st || !g.slot)
		rc = db_err(x->db, GPMDB_NOMEM, "out of memory");
	for (uint64_t i = 0; i < kk->nrows && !rc; i++)
		if (!exec_key_has_null(kk, i) &&
		    groups_find(&g, kk, i, exec_hash_row(kk, nk, i), 1) < 0)
			rc = db_err(x->db, GPMDB_NOMEM, "out of memory");
	if (!rc && groups_bloom(&g))
		rc = db_err(x->db, GPMDB_NOMEM, "out of memory");
	if (!rc) {
		n->r->keyfilter = &g;
		rc = exec_node(x, n->r, &s->build);
		n->r->keyfilter = NULL;
	}
	groups_free(&g, 1);
	rel_free(kk);
	return rc;
}

/* Runs the built input of join stage s and hashes it. */
int stage_build(exec_ctx *x, pstage *s, const rel *srel)
{
	pnode *n = s->n;
	pnode *bn = s->sleft ? n->r : n->l;
	int rc;

	if (s->kf) {
		rc = stage_build_kf(x, s, srel);
	} else {
		rc = exec_node(x, bn, &s->build);
	}
	if (rc)
		return rc;
	uint64_t t0 = pipe_now();
	if (!(rc = stage_hash(x, s)))
		rc = jt_direct(x, s);
	if (!rc)
		jt_refs_init(s);
	s->build_ns = pipe_now() - t0;
	if (!rc && n->jtype == JOIN_LEFT && !s->sleft) {
		uint64_t nb = s->bk->nrows;
		if (!(s->bmatch = pipe_zalloc(nb + 1)))
			return db_err(x->db, GPMDB_NOMEM, "out of memory");
		s->bytes += nb;
		rc = exec_mem(x, nb);
	}
	return rc;
}

/* Built sides of at most this many rows get bloom bits (16 a row: 8 MB
 * at most, about 6% of the probes that meet nothing pass). */
#define BLOOM_MAX_ROWS (4u << 20)

static int stage_bloom(exec_ctx *x, pstage *s)
{
	uint64_t nbuild = s->bk->nrows;

	if (!nbuild || nbuild > BLOOM_MAX_ROWS)
		return GPMDB_OK;
	if (!(s->bloom = pipe_bloom(s->hash, nbuild, &s->bmask)))
		return db_err(x->db, GPMDB_NOMEM, "out of memory");
	s->bytes += (s->bmask + 1) / 8;
	return exec_mem(x, (s->bmask + 1) / 8);
}

/* Evaluates the built side's keys and hashes its rows. */
int stage_hash(exec_ctx *x, pstage *s)
{
	pnode *n = s->n;
	pnode *bn = s->sleft ? n->r : n->l;
	uint64_t nbuild, nb = 64;
	int rc;

	if ((rc = exec_eval_keys(x, n, s->sleft ? n->nkeys : 0,
				 s->sleft ? n->rkeys : n->lkeys, bn, s->build,
				 &s->bk)))
		return rc;
	nbuild = s->bk->nrows;
	if (n->nkeys == 1) {
		etype a = s->bk->cols[0].ty, b = s->kty[0];
		s->hexact = a.t == b.t && a.scale == b.scale &&
			    (a.t == BC_T_INT || a.t == BC_T_DEC ||
			     a.t == BC_T_DATE || a.t == BC_T_BOOL);
	}
	if (nbuild >= UINT32_MAX)
		return db_err(
		    x->db, GPMDB_UNSUPPORTED,
		    "a hash join over more than 4 billion rows is not "
		    "supported");
	s->hash = malloc(nbuild * 8 + 8);
	s->next = malloc(nbuild * 4 + 4);
	if (!s->hash || !s->next)
		return db_err(x->db, GPMDB_NOMEM, "out of memory");
	const rel *bk = s->bk;
#pragma omp parallel for schedule(static) if (nbuild >= 65536)
	for (uint64_t i = 0; i < nbuild; i++)
		s->hash[i] = exec_key_has_null(bk, i)
				 ? 0
				 : exec_hash_row(bk, bk->ncols, i);
	/* a large table is built by all threads: 64 regions by the top bits
	 * of the hash, each region's rows inserted in row order by one
	 * thread (the same table as one thread would build) */
	uint64_t cnt[64] = {0}, at[65] = {0}, *order = NULL;
	bool par = nbuild >= pipe_small(1u << 20) && omp_get_max_threads() > 1;
	if (par) {
		uint64_t most = 1;
		for (uint64_t i = 0; i < nbuild; i++)
			cnt[s->hash[i] >> 58]++;
		for (int q = 0; q < 64; q++) {
			most = cnt[q] > most ? cnt[q] : most;
			at[q + 1] = at[q] + cnt[q];
		}
		while (nb < most * 2)
			nb *= 2;
		s->pbits = 6;
		s->rmask = nb - 1;
		nb *= 64;
		if (!(order = malloc(nbuild * 4 + 4)))
			return db_err(x->db, GPMDB_NOMEM, "out of memory");
		uint64_t w[64];
		memcpy(w, at, sizeof(w));
		for (uint64_t i = 0; i < nbuild; i++)
			((uint32_t *)order)[w[s->hash[i] >> 58]++] =
			    (uint32_t)i;
	} else {
		while (nb < nbuild * 2)
			nb *= 2;
		s->rmask = nb - 1;
	}
	s->nb = nb;
	s->bytes = nb * 8 + nbuild * 12;
	if (!(s->slot = pipe_zalloc(nb * 8)) || (rc = exec_mem(x, s->bytes))) {
		free(order);
		return s->slot ? rc
			       : db_err(x->db, GPMDB_NOMEM, "out of memory");
	}
	for (uint64_t i = 0; i < nbuild; i++)
		if (!s->hash[i] && exec_key_has_null(bk, i)) {
			s->bnull = true;
			break;
		}
	if (par) {
		const uint32_t *ord = (const uint32_t *)order;
#pragma omp parallel for schedule(dynamic, 1)
		for (int q = 0; q < 64; q++)
			for (uint64_t k = at[q]; k < at[q + 1]; k++) {
				uint64_t i = ord[k];
				if (s->hash[i] || !exec_key_has_null(bk, i))
					jt_insert(s, i, s->hash[i]);
			}
		free(order);
		return stage_bloom(x, s);
	}
	/* each row goes to the front of its hash's chain: newest first */
	for (uint64_t i = 0; i < nbuild; i++)
		if (s->hash[i] || !exec_key_has_null(bk, i))
			jt_insert(s, i, s->hash[i]);
	return stage_bloom(x, s);
}

/* A join stage's built side and table. */
void stage_free(exec_ctx *x, pstage *s)
{
	free(s->bmatch);
	free(s->bloom);
	free(s->slot);
	free(s->hash);
	free(s->next);
	free(s->dir);
	rel_free(s->build);
	rel_free(s->bk);
	if (x->mem >= s->bytes)
		x->mem -= s->bytes;
}
