/*
 * pipe_dict.c - a scan's filter on one TEXT column tested on dictionary
 * codes (issue 17).  A dictionary tablet (storage/layout.h "Encodings")
 * holds each of its distinct strings once and a code per row; the
 * filter's own compiled program runs once over the tablet's dictionary
 * (and over '' and NULL), giving whether each code passes, and the scan
 * then keeps the rows whose code passes without making their strings:
 * `l_shipmode = 'AIR'` over 6M rows becomes 7 comparisons a tablet and a
 * table lookup a row.  Being the same program over the same strings, the
 * rows are those the string path keeps, whatever the predicate (=, <>,
 * IN and NOT IN with NULLs, LIKE, IS NULL, ...), its comparison and its
 * three-valued logic.
 *
 * Taken only where that cannot change a result: the FILTER is one of the
 * filters right above the scan, those before it cannot fail either
 * (pipe_pred_safe: the filters may then run in any order, as
 * stage_filter's own reordering does), and its program reads nothing but
 * that column.  A tablet whose dictionary is large against its rows
 * keeps the strings (its table would cost about what the rows do, on
 * one thread), and so does one whose evaluation fails (a string of a
 * deleted row the filter would never have read).
 */
#include "pipe_int.h"

#include "../../storage/layout.h"

#include <stdlib.h>
#include <string.h>

/* Rows tested on codes, for the tests (pipe_dict_rows). */
static _Atomic uint64_t dict_rows;

uint64_t pipe_dict_rows(void)
{
	return atomic_load(&dict_rows);
}

/* Whether filter s reads only one TEXT column of the scan n, which is a
 * TEXT column of the table: that column, else -1. */
static int dict_col(const pstage *s, const pnode *n)
{
	const cexpr *c = s->pred;

	if (s->kind != PS_FILTER || !s->safe || !c || !s->pred->prog ||
	    c->ninputs != 1 || c->in[0].kind != IN_COL ||
	    c->in[0].ty.t != BC_T_TEXT)
		return -1;
	int col = c->in[0].col;
	if (col < 0 || col >= n->ncols || n->ty[col].t != BC_T_TEXT)
		return -1;
	int tc = n->tcol ? n->tcol[col] : col;
	if (tc < 0 || tc >= n->ntcols || n->stype[tc] != STG_T_TEXT)
		return -1;
	return col;
}

/* The filter of the scan's first filters that may run on codes, and
 * whether the column need not be read for the others or the sink. */
static void dict_plan(pipe *p)
{
	const pnode *n = p->src;
	int f, j;

	p->dict.stage = -1;
	if (!n || p->x->analyze) /* EXPLAIN ANALYZE counts every filter */
		return;
	{
		/* GPMDB_DICT_PRED=0: the strings always (the benchmark's
		 * before, the tests' string path) */
		const char *e = getenv("GPMDB_DICT_PRED");
		if (e && e[0] == '0')
			return;
	}
	for (f = 0; f < p->ns && p->st[f].kind == PS_FILTER; f++) {
		int col = dict_col(&p->st[f], n);
		if (col >= 0) {
			p->dict.stage = f;
			p->dict.col = col;
			p->dict.tcol = n->tcol ? n->tcol[col] : col;
			break;
		}
		if (!p->st[f].safe)
			return; /* a filter that can fail keeps its rows */
	}
	if (p->dict.stage < 0)
		return;
	/* the filters after the scan run as one stage (stage_filter): the
	 * column is read later when another of them or a stage after
	 * them reads it (p->live, which is NULL where all are read) */
	for (j = 0; j < p->ns && p->st[j].kind == PS_FILTER; j++) {
		const cexpr *c = p->st[j].pred;
		for (int k = 0; j != p->dict.stage && c && k < c->ninputs; k++)
			if (c->in[k].kind != IN_COL ||
			    c->in[k].col == p->dict.col)
				return;
	}
	p->dict.skip = p->live[j] && !p->live[j][p->dict.col];
}

/* Each code's result of the filter over the dictionary of column tc of
 * tablet v into pass[dict_n + 2] (then '' and NULL); false when the
 * program fails. */
static bool dict_eval(pipe *p, rel *b, vm_scratch *scr,
		      const stg_tablet_view *v, uint8_t *pass)
{
	const stg_colenc *e = &v->enc[p->dict.tcol];
	const cexpr *c = p->st[p->dict.stage].pred;
	rcol *d = &b->cols[p->dict.col];
	uint64_t n = e->dict_n + 2;
	uint32_t sel[VEC_BATCH];
	char err[256];
	vec r;

	memset(pass, 0, n);
	for (uint64_t at = 0; at < n; at += VEC_BATCH) {
		uint32_t m =
		    n - at < VEC_BATCH ? (uint32_t)(n - at) : VEC_BATCH;
		vec_str *s = d->data;
		for (uint32_t i = 0; i < m; i++) {
			uint64_t k = at + i;
			d->nulls[i] = k == e->dict_n + 1;
			s[i].ptr =
			    k < e->dict_n ? v->heap + e->dict[k].off : "";
			s[i].len = k < e->dict_n ? e->dict[k].len : 0;
		}
		b->nrows = m;
		if (cx_eval_pure(c, b, 0, m, &r, scr, err, sizeof(err)))
			return false;
		uint32_t np = exec_filter_true(&r, m, 0, sel);
		for (uint32_t i = 0; i < np; i++)
			pass[at + sel[i]] = 1;
	}
	return true;
}

/* p->gdict: an AGG whose group keys (at most 4) are all TEXT columns of
 * the scan, through FILTERs and plain PROJECT columns (no join: its
 * rows may carry strings of another table). */
static void dict_group_plan(pipe *p)
{
	const pnode *n = p->src;
	const pnode *a = p->agg;

	p->ngdict = 0;
	if (!n || !a || !a->ngroup || a->ngroup > 4 || p->spill)
		return;
	{
		/* GPMDB_DICT_GROUP=0: the string path always (the
		 * benchmark's before, the tests' reference) */
		const char *e = getenv("GPMDB_DICT_GROUP");
		if (e && e[0] == '0')
			return;
	}
	for (int k = 0; k < a->ngroup; k++) {
		int c = p->gcol[k];
		if (c < 0 || a->ty[k].t != BC_T_TEXT)
			return;
		for (int i = p->ns - 1; i >= 0 && c >= 0; i--)
			if (p->st[i].kind == PS_PROJECT)
				c = p->st[i].plain[c];
			else if (p->st[i].kind != PS_FILTER)
				c = -1;
		if (c < 0 || c >= n->ncols || n->ty[c].t != BC_T_TEXT)
			return;
		int tc = n->tcol ? n->tcol[c] : c;
		if (tc < 0 || tc >= n->ntcols || n->stype[tc] != STG_T_TEXT)
			return;
		p->gdict[k] = tc;
	}
	p->ngdict = a->ngroup;
}

int pipe_dict_tables(pipe *p)
{
	exec_ctx *x = p->x;
	rel *b = NULL;
	vm_scratch scr;
	int rc = GPMDB_OK;

	dict_group_plan(p);
	dict_plan(p);
	if (p->dict.stage < 0 || !p->ntab)
		return GPMDB_OK;
	vm_scratch_init(&scr);
	p->dict.ntab = p->ntab;
	if (!(p->dict.pass = calloc(p->ntab, sizeof(*p->dict.pass))) ||
	    !(b = pipe_batch(p->st[p->dict.stage].in))) {
		rc = db_err(x->db, GPMDB_NOMEM, "out of memory");
		goto out;
	}
	for (uint32_t t = 0; t < p->ntab; t++) {
		const stg_tablet_view *v = &p->tv[t];
		const stg_colenc *e = v->enc && !v->data[p->dict.tcol]
					  ? &v->enc[p->dict.tcol]
					  : NULL;
		/* a dictionary of more than an eighth of the rows: the
		 * strings (its table would cost about what they do) */
		if (!e || e->kind != STG_ENC_DICT ||
		    e->dict_n > v->nrows / 8 + 16)
			continue;
		if (!(p->dict.pass[t] = malloc(e->dict_n + 2))) {
			rc = db_err(x->db, GPMDB_NOMEM, "out of memory");
			goto out;
		}
		if (!dict_eval(p, b, &scr, v, p->dict.pass[t])) {
			free(p->dict.pass[t]);
			p->dict.pass[t] = NULL;
		}
	}
out:
	vm_scratch_free(&scr);
	rel_free(b);
	return rc;
}

void pipe_dict_free(pipe *p)
{
	for (uint32_t t = 0; p->dict.pass && t < p->dict.ntab; t++)
		free(p->dict.pass[t]);
	free(p->dict.pass);
	p->dict.pass = NULL;
}

int pipe_dict_keep(pthr *t, uint32_t tab, const stg_tablet_view *v,
		   uint64_t off, uint32_t cnt)
{
	const pdict *d = &t->p->dict;
	const uint8_t *pass = d->pass ? d->pass[tab] : NULL;

	if (!pass)
		return -1;
	const stg_colenc *e = &v->enc[d->tcol];
	const uint32_t *nl = v->nulls ? v->nulls[d->tcol] : NULL;
	const uint32_t *dl = v->deleted;
	uint32_t *code = t->codes, m = 0;

	/* off is a multiple of VEC_BATCH, so of 32 in the bitmaps */
	stg_dict_codes(e, off, cnt, code);
	if (nl) {
		nl += off / 32;
		for (uint32_t w = 0; w < (cnt + 31) / 32; w++)
			for (uint32_t r = w * 32;
			     nl[w] && r < w * 32 + 32 && r < cnt; r++)
				if (nl[w] >> (r % 32) & 1)
					code[r] = (uint32_t)e->dict_n + 1;
	}
	if (dl) {
		dl += off / 32;
		for (uint32_t r = 0; r < cnt; r++) {
			t->keep[m] = r;
			m += pass[code[r]] & !(dl[r / 32] >> (r % 32) & 1);
		}
	} else {
		for (uint32_t r = 0; r < cnt; r++) {
			t->keep[m] = r;
			m += pass[code[r]];
		}
	}
	atomic_fetch_add(&dict_rows, cnt);
	return (int)m;
}

/* ---- GROUP BY dictionary strings ----
 *
 * The strings of a dictionary tablet's column are the dictionary's own:
 * rows of one code reference one string, (pointer, length) of the
 * tablet's heap, which does not change while the statement reads.  So a
 * batch's rows whose keys are the same references have the same keys,
 * and the group the string path gives the first of them is the group of
 * every other: each distinct tuple of references of a batch (at most the
 * product of the dictionaries' sizes, a few for flags and modes) is
 * hashed and looked up once by groups_find, in the order of its first
 * row (so the groups are made in the string path's order), and the rows
 * take its group by a lookup of the references in a small table.  NULL
 * keys are a reference of their own; which strings are equal ('' and an
 * out-of-range code's '', not 'a' and 'A') is groups_find's to say, as
 * on the string path.  The bound on the tuples is the dictionaries',
 * checked per tablet; a batch of more distinct references leaves before
 * a group is made. */

#define DG_KEYS 4
/* twice the most tuples a batch may hold: a batch of more (references
 * that are not one per code) leaves before a group is made */
#define DG_SLOTS 512
#define DG_MAX	 256 /* tuples: the product of (dict_n + 2) per key */

typedef struct pgcent {
	const char *s[DG_KEYS];
	uint32_t len[DG_KEYS]; /* UINT32_MAX: NULL */
	uint32_t gen, first;   /* the tuple's index in the batch */
} pgcent;

typedef struct pgcache {
	uint32_t gen; /* entries of another gen are empty */
	pgcent e[DG_SLOTS];
	uint16_t slot[VEC_BATCH];  /* per row: its entry */
	uint32_t first[VEC_BATCH]; /* per tuple: its first row */
	uint64_t hv[VEC_BATCH];	   /* per tuple: its keys' hash */
	uint64_t gid[VEC_BATCH];   /* per tuple: its group */
} pgcache;

static _Atomic uint64_t dict_group_rows;

uint64_t pipe_dict_group_rows(void)
{
	return atomic_load(&dict_group_rows);
}

void pipe_dict_groups_free(pthr *t)
{
	free(t->gc);
	rel_free(t->gkb);
	t->gc = NULL;
	t->gkb = NULL;
}

/* Whether every key column is a dictionary of t's tablet, and their
 * tuples fit the table. */
static bool dict_group_ok(const pthr *t)
{
	const pipe *p = t->p;
	uint64_t prod = 1;

	if (!p->ngdict || t->gtab < 0 || (uint64_t)t->gtab >= p->ntab)
		return false;
	const stg_tablet_view *v = &p->tv[t->gtab];
	if (!v->enc)
		return false;
	for (int k = 0; k < p->ngdict; k++) {
		int tc = p->gdict[k];
		if (v->data[tc] || v->enc[tc].kind != STG_ENC_DICT)
			return false;
		prod *= v->enc[tc].dict_n + 2; /* then '' and NULL */
		if (prod > DG_MAX)
			return false;
	}
	return true;
}

int pipe_dict_groups(pthr *t, const rel *ka, uint32_t m, int na, bool *done)
{
	int ng = t->p->ngdict;

	*done = false;
	if (!dict_group_ok(t))
		return GPMDB_OK;
	if (!t->gc) {
		if (!(t->gc = calloc(1, sizeof(*t->gc))) ||
		    !(t->gkb = rel_new(NULL, ng, t->p->agg->ty)) ||
		    rel_reserve(t->gkb, VEC_BATCH))
			return pipe_fail(t, GPMDB_NOMEM, "out of memory");
	}
	pgcache *gc = t->gc;
	if (++gc->gen == 0) { /* wrapped: every entry emptied */
		memset(gc->e, 0, sizeof(gc->e));
		gc->gen = 1;
	}
	uint32_t nf = 0, gen = gc->gen;
	for (uint32_t i = 0; i < m; i++) {
		const char *s[DG_KEYS] = {0};
		uint32_t len[DG_KEYS] = {0};
		uint64_t h = 0;
		for (int k = 0; k < ng; k++) {
			const rcol *c = &ka->cols[k];
			const vec_str *v = &((const vec_str *)c->data)[i];
			s[k] = c->nulls[i] ? NULL : v->ptr;
			len[k] = c->nulls[i] ? UINT32_MAX : v->len;
			h = (h ^ (uint64_t)(uintptr_t)s[k] ^ len[k]) *
			    0x9e3779b97f4a7c15ull;
		}
		uint32_t q = (uint32_t)(h >> 40) & (DG_SLOTS - 1);
		for (;; q = (q + 1) & (DG_SLOTS - 1)) {
			pgcent *e = &gc->e[q];
			if (e->gen != gen) { /* a new tuple */
				if (nf == DG_SLOTS / 2)
					return GPMDB_OK; /* not codes' */
				memcpy(e->s, s, sizeof(s));
				memcpy(e->len, len, sizeof(len));
				e->gen = gen;
				e->first = nf;
				gc->first[nf++] = i;
				break;
			}
			if (!memcmp(e->s, s, sizeof(s)) &&
			    !memcmp(e->len, len, sizeof(len)))
				break;
		}
		gc->slot[i] = (uint16_t)q;
	}
	/* each tuple's group by the string path, in the order of its first
	 * row */
	pipe_gather(t->gkb, ka, gc->first, nf, NULL);
	exec_hash_batch(t->gkb, ng, nf, gc->hv, false);
	for (uint32_t f = 0; f < nf; f++) {
		int64_t e =
		    groups_find(&t->g, t->gkb, f, gc->hv[f], na ? na : 1);
		if (e < 0)
			return pipe_fail(t, GPMDB_NOMEM, "out of memory");
		gc->gid[f] = (uint64_t)e;
	}
	for (uint32_t i = 0; i < m; i++)
		t->gid[i] = gc->gid[gc->e[gc->slot[i]].first];
	atomic_fetch_add(&dict_group_rows, m);
	*done = true;
	return GPMDB_OK;
}
