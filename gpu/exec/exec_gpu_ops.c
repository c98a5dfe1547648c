/*
 * exec_gpu_ops.c - ORDER BY (and top-N under LIMIT), equi-joins (inner
 * and LEFT), DISTINCT and UNION/INTERSECT/EXCEPT on the GPU (docs/gpu.md).
 *
 * Shape: the operator's inputs are computed first (on either backend) as
 * host relations; the columns the operator compares (sort keys, join
 * keys, DISTINCT columns) are uploaded; the GPU (gpu/relops.cu) returns row
 * numbers in exactly the order the CPU operator (exec.c) produces them,
 * and the rows are gathered on the host from the input relations, so the
 * result is the CPU's row for row.  Join keys that are expressions are
 * evaluated by the CPU interpreter with exec.c's programs (same slots),
 * and a residual ON/WHERE condition runs over the pairs on the host in
 * exec.c's batches of VEC_BATCH pairs, so row errors are the CPU's too.
 *
 * Choice: as for filters (exec_gpu.c), except that backend=auto looks at
 * the planner's estimate of the input rows (the inputs are not scans).
 * TEXT keys are compared in binary order (the CPU's val_text_cmp): the
 * strings of the uploaded columns are packed into one device buffer.
 * A GPU failure (memory, CUDA) falls back to the CPU, which computes the
 * inputs again, or fails under gpu_strict.
 */
#include "exec_gpu_ops.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../engine/exec/exec_int.h"
#include "../gpu.h"

#define XO_DECLINE (-1)

bool exec_gpu_ops_kind(int kind)
{
	return kind == PN_SORT || kind == PN_JOIN || kind == PN_DISTINCT ||
	       kind == PN_SETOP || kind == PN_LIMIT;
}

/* Types the GPU compares as exec.c does (sval_cmp of one static type).
 * TEXT: binary order (val_text_cmp), the only collation the binder lets
 * through. */
static bool xo_type_ok(int t, bool null_ok)
{
	return t == BC_T_INT || t == BC_T_DEC || t == BC_T_DATE ||
	       t == BC_T_BOOL || t == BC_T_REAL || t == BC_T_TEXT ||
	       (null_ok && t == BC_T_NULL);
}

static double xo_est(const pnode *n)
{
	switch (n->kind) {
	case PN_JOIN:
		return n->l->est > n->r->est ? n->l->est : n->r->est;
	case PN_SETOP:
		return n->l->est + n->r->est;
	default:
		return n->l->est;
	}
}

/* The static part of the choice: 1 or 0 and why. */
static int xo_supported(const pnode *n, char *why, size_t len)
{
	switch (n->kind) {
	case PN_SORT:
		for (int k = 0; k < n->nsort; k++) {
			etype t = n->l->ty[n->sort_col[k]];
			if (!xo_type_ok(t.t, true)) {
				snprintf(why, len,
					 "ORDER BY a %s key (sorted on the "
					 "CPU)",
					 et_name(t));
				return 0;
			}
		}
		return 1;
	case PN_JOIN:
		for (int k = 0; k < n->nkeys; k++) {
			etype a = expr_type(n->lkeys[k]),
			      b = expr_type(n->rkeys[k]);
			if (a.t != b.t ||
			    (a.t == BC_T_DEC && a.scale != b.scale)) {
				snprintf(why, len,
					 "join key of types %s and %s",
					 et_name(a), et_name(b));
				return 0;
			}
			if (!xo_type_ok(a.t, false)) {
				snprintf(why, len, "join key of type %s",
					 et_name(a));
				return 0;
			}
		}
		return 1;
	default: {
		int nc = n->kind == PN_DISTINCT ? n->nvis : n->ncols;
		for (int c = 0; c < nc; c++)
			if (!xo_type_ok(n->ty[c].t, true)) {
				snprintf(why, len, "%s over a %s column",
					 exec_op_name(n->kind),
					 et_name(n->ty[c]));
				return 0;
			}
		return 1;
	}
	}
}

int exec_gpu_ops_decide(exec_ctx *x, pnode *n, char *why, size_t len)
{
	gpmdb *db = x->db;
	char gerr[300];

	why[0] = 0;
	if (db->backend == 1)
		return XG_CPU;
	/* LIMIT follows its input (exec_gpu.c) */
	if (n->kind == PN_LIMIT)
		return exec_gpu_decide(x, n, why, len);
	if (n->kind == PN_JOIN && (n->jtype == JOIN_CROSS || !n->nkeys)) {
		snprintf(why, len,
			 "no GPU version of a join without an "
			 "equality key yet");
		return XG_NO_OP;
	}
	if (n->kind == PN_SETOP && n->op == AST_UNION_ALL) {
		snprintf(why, len, "UNION ALL only concatenates (on the host)");
		return XG_NO_OP;
	}
	if (db->backend == 0 && xo_est(n) < (double)db->gpu_threshold) {
		snprintf(why, len,
			 "input estimated at %.0f rows < gpu threshold %llu",
			 xo_est(n), (unsigned long long)db->gpu_threshold);
		return XG_CPU;
	}
	if (gpu_init(gerr, sizeof(gerr))) {
		snprintf(why, len, "no GPU: %s", gerr);
		return db->backend == 2 ? XG_WANTED_CPU : XG_CPU;
	}
	return xo_supported(n, why, len) ? XG_GPU : XG_WANTED_CPU;
}

/* ---- helpers ----------------------------------------------------------- */

static int xo_gerr(exec_ctx *x, int rc, const char *op, const char *msg)
{
	/* "GPU ..." errors fall back to the CPU (exec_op_run's rule) */
	return db_err(x->db, rc, "GPU %s: %s", op, msg);
}

/* Device buffers of one operator. */
typedef struct xo_dev {
	void *p[512];
	int n;
} xo_dev;

static void xo_dev_free(xo_dev *d)
{
	for (int i = 0; i < d->n; i++)
		gpu_free(d->p[i], NULL, 0);
	d->n = 0;
}

/* A TEXT column c of a (and b after it): the strings packed into one
 * device buffer (k->text) and their gpu_str values (k->col). */
static int xo_upload_text(exec_ctx *x, xo_dev *d, const rel *a, const rel *b,
			  int c, gpu_sortcol *k)
{
	const rel *r2[2] = {a, b};
	uint64_t na = a->nrows, n = na + (b ? b->nrows : 0), total = 0, off = 0;
	char err[300], *hb = NULL, *dt, *dv;
	gpu_str *hs = NULL;
	uint8_t *hn = NULL;
	int rc = GPMDB_OK;

	for (int q = 0; q < 2 && r2[q]; q++) {
		const rcol *rc_ = &r2[q]->cols[c];
		const vec_str *v = rc_->data;
		for (uint64_t i = 0; i < r2[q]->nrows; i++)
			if (!rc_->nulls[i])
				total += v[i].len;
	}
	/* gpu_str offsets: 31 bits (the top one marks constant text) */
	if (total >= 0x80000000ull)
		return xo_gerr(x, GPMDB_UNSUPPORTED, "upload",
			       "a TEXT column of more than 2 GiB");
	if (d->n + 2 > 512)
		return db_err(x->db, GPMDB_NOMEM, "too many GPU buffers");
	if (!(hb = malloc(total + 1)) || !(hs = malloc(sizeof(gpu_str) * n)) ||
	    !(hn = malloc(n))) {
		rc = db_err(x->db, GPMDB_NOMEM, "out of memory");
		goto out;
	}
	for (uint64_t q = 0, o = 0; q < 2 && r2[q]; q++) {
		const rcol *rc_ = &r2[q]->cols[c];
		const vec_str *v = rc_->data;
		for (uint64_t i = 0; i < r2[q]->nrows; i++, o++) {
			uint32_t l = rc_->nulls[i] ? 0 : v[i].len;
			if (l)
				memcpy(hb + off, v[i].ptr, l);
			hs[o].off = (uint32_t)off;
			hs[o].len = l;
			hn[o] = rc_->nulls[i];
			off += l;
		}
	}
	if ((rc = gpu_alloc((void **)&dt, total + 1, err, sizeof(err))))
		goto gerr;
	d->p[d->n++] = dt;
	if ((rc = gpu_alloc((void **)&dv, (sizeof(gpu_str) + 1) * n, err,
			    sizeof(err))))
		goto gerr;
	d->p[d->n++] = dv;
	if ((rc = gpu_upload(dt, hb, total, err, sizeof(err))) ||
	    (rc = gpu_upload(dv, hs, sizeof(gpu_str) * n, err, sizeof(err))) ||
	    (rc =
		 gpu_upload(dv + sizeof(gpu_str) * n, hn, n, err, sizeof(err))))
		goto gerr;
	k->col.type = BC_COL_TEXT;
	k->col.data = dv;
	k->col.nulls = (uint8_t *)dv + sizeof(gpu_str) * n;
	k->text = dt;
	x->db->gstat.bytes_uploaded += (sizeof(gpu_str) + 1) * n + total;
	goto out;
gerr:
	rc = xo_gerr(x, rc, "upload", err);
out:
	free(hb);
	free(hs);
	free(hn);
	return rc;
}

/* Uploads column c of a (and, when b, of b after it) as one dense device
 * column: k->col (k->text for TEXT; desc and nulls_first 0). */
static int xo_upload(exec_ctx *x, xo_dev *d, const rel *a, const rel *b, int c,
		     gpu_sortcol *k)
{
	const rcol *ca = &a->cols[c], *cb = b ? &b->cols[c] : NULL;
	uint64_t na = a->nrows, nb = b ? b->nrows : 0, n = na + nb;
	size_t w = rel_width(ca->ty.t);
	gpu_col *g = &k->col;
	char err[300];
	char *p;
	int rc;

	memset(k, 0, sizeof(*k));
	g->type = (uint8_t)rel_vec_type(ca->ty.t);
	g->scale = ca->ty.scale;
	if (g->type == VEC_NULL || !n)
		return GPMDB_OK;
	if (g->type == BC_COL_TEXT)
		return xo_upload_text(x, d, a, b, c, k);
	if (d->n == 512)
		return db_err(x->db, GPMDB_NOMEM, "too many GPU buffers");
	if ((rc = gpu_alloc((void **)&p, w * n + n, err, sizeof(err))))
		return xo_gerr(x, rc, "upload", err);
	d->p[d->n++] = p;
	if ((rc = gpu_upload(p, ca->data, w * na, err, sizeof(err))) ||
	    (rc = gpu_upload(p + w * n, ca->nulls, na, err, sizeof(err))) ||
	    (nb && ((rc = gpu_upload(p + w * na, cb->data, w * nb, err,
				     sizeof(err))) ||
		    (rc = gpu_upload(p + w * n + na, cb->nulls, nb, err,
				     sizeof(err))))))
		return xo_gerr(x, rc, "upload", err);
	g->data = p;
	g->nulls = (uint8_t *)p + w * n;
	x->db->gstat.bytes_uploaded += (w + 1) * n;
	return GPMDB_OK;
}

/* dst gets rows idx[0..m) (row k < na of a, else row k - na of b), as
 * exec.c's rel_gather (text copied into dst's arena). */
static int xo_gather(rel *dst, const rel *a, const rel *b, uint64_t na,
		     const uint32_t *idx, uint64_t m)
{
	int rc;

	if ((rc = rel_reserve(dst, m)))
		return rc;
	for (int c = 0; c < dst->ncols; c++) {
		rcol *d = &dst->cols[c];
		size_t w = rel_width(d->ty.t);
		for (uint64_t k = 0; k < m; k++) {
			uint64_t i = idx[k], o = dst->nrows + k;
			const rcol *s = &a->cols[c];
			if (i >= na) {
				s = &b->cols[c];
				i -= na;
			}
			d->nulls[o] = s->nulls[i];
			if (d->ty.t == BC_T_TEXT && !s->nulls[i]) {
				vec_str v = ((vec_str *)s->data)[i];
				if ((rc = rel_str(dst, v.ptr, v.len,
						  &((vec_str *)d->data)[o])))
					return rc;
			} else {
				memcpy((char *)d->data + o * w,
				       (char *)s->data + i * w, w);
			}
		}
	}
	dst->nrows += m;
	return GPMDB_OK;
}

/* After a GPU sort or DISTINCT/set operation that ended with rc: n's
 * result in *out, rows idx[0..m) (row numbers: a's first na rows, then
 * b's) brought back as 4-byte numbers and gathered on the host. */
static int xo_result(exec_ctx *x, pnode *n, int rc, const rel *a, const rel *b,
		     uint64_t na, const uint32_t *idx, uint64_t m, rel **out)
{
	rel *r = NULL;

	if (!rc) {
		x->db->gstat.bytes_downloaded += 4 * m;
		if (!(r = rel_new(x, n->ncols, n->ty)))
			rc = x->db->errcode ? x->db->errcode : GPMDB_NOMEM;
		else
			rc = xo_gather(r, a, b, na, idx, m);
	}
	if (rc) {
		rel_free(r);
		return rc;
	}
	*out = r;
	return GPMDB_OK;
}

/* ---- passes: inputs past the device's memory --------------------------- */

/*
 * Why: an operator's uploaded columns and working memory (sort buffers,
 * hash tables, pairs) must fit the device at once; before, a larger input
 * ran out of memory and the operator fell back to the CPU.  Now such an
 * operator runs in passes over parts of its input, each part a whole
 * pass of the same GPU code: a join and DISTINCT/set operations on parts
 * split by a hash of their keys (equal keys meet in one part), a sort on
 * chunks of rows merged on the host.  The parts' results are put back in
 * the CPU's order, so the result is the one-pass result row for row.
 * The first split is sized from the free device memory; a part that
 * still runs out of memory doubles the parts (at most XO_MAX_PARTS, and
 * only while the largest part shrinks: all-equal keys cannot be split).
 */
uint64_t xo_part_ops, xo_part_passes;

/* Not a GPMDB code: "too large for one pass" (rows past 32-bit numbers) */
#define XO_SPLIT (-5)

/* The device ran out of memory (or rows past one pass): split the work. */
static bool xo_too_large(exec_ctx *x, int rc)
{
	return rc == XO_SPLIT ||
	       (rc == GPMDB_NOMEM && !strncmp(x->db->errmsg, "GPU ", 4));
}

/* Parts for rows of about bytes device bytes (4x for working memory). */
uint32_t xo_parts_for(uint64_t bytes, uint64_t rows, uint64_t per)
{
	uint64_t avail = gpu_mem_avail(), p = 2;

	while (p < XO_MAX_PARTS && (4 * bytes / p > avail || rows / p > per))
		p *= 2;
	return (uint32_t)p;
}

uint64_t exec_gpu_rel_bytes(const rel *r, int nc)
{
	uint64_t b = 0;

	for (int c = 0; r && c < nc; c++) {
		const rcol *col = &r->cols[c];
		b += (rel_width(col->ty.t) + 1) * r->nrows;
		if (col->ty.t == BC_T_TEXT)
			for (uint64_t i = 0; i < r->nrows; i++)
				b += col->nulls[i]
					 ? 0
					 : ((const vec_str *)col->data)[i].len;
	}
	return b;
}

/* Splits (xo_split, exec_gpu_ops.h) */
void xo_split_free(xo_split *sp)
{
	free(sp->pt);
	free(sp->idx);
	free(sp->off);
	memset(sp, 0, sizeof(*sp));
}

static bool xo_key_null(const rel *k, uint64_t i);

/* skip_null: rows with a NULL among the columns are in no part (join
 * keys: they match nothing, and all would meet in one part). */
int xo_split_rows(exec_ctx *x, const rel *r, int nc, uint32_t np,
		  bool skip_null, xo_split *sp)
{
	uint64_t n = r ? r->nrows : 0, *at;

	memset(sp, 0, sizeof(*sp));
	sp->np = np;
	if (!(sp->pt = malloc(4 * n + 4)) || !(sp->idx = malloc(4 * n + 4)) ||
	    !(sp->off = calloc((size_t)np + 1, 8)) ||
	    !(at = calloc((size_t)np + 1, 8))) {
		xo_split_free(sp);
		return db_err(x->db, GPMDB_NOMEM, "out of memory");
	}
#pragma omp parallel for schedule(static) if (n > 65536)
	for (uint64_t i = 0; i < n; i++)
		sp->pt[i] =
		    skip_null && xo_key_null(r, i)
			? XO_NO_PART
			: (uint32_t)((exec_hash_row(r, nc, i) >> 32) % np);
	for (uint64_t i = 0; i < n; i++)
		if (sp->pt[i] != XO_NO_PART)
			sp->off[sp->pt[i] + 1]++;
	for (uint32_t p = 0; p < np; p++)
		sp->off[p + 1] += sp->off[p];
	memcpy(at, sp->off, 8 * (size_t)np);
	for (uint64_t i = 0; i < n; i++)
		if (sp->pt[i] != XO_NO_PART)
			sp->idx[at[sp->pt[i]]++] = (uint32_t)i;
	free(at);
	return GPMDB_OK;
}

uint64_t xo_split_max(const xo_split *sp)
{
	uint64_t m = 0;

	for (uint32_t p = 0; p < sp->np; p++)
		if (sp->off[p + 1] - sp->off[p] > m)
			m = sp->off[p + 1] - sp->off[p];
	return m;
}

int xo_rows_rel(exec_ctx *x, const rel *a, const rel *b, const uint32_t *idx,
		uint64_t m, rel **out)
{
	etype *ty = malloc(sizeof(etype) * ((size_t)a->ncols + 1));
	rel *o = NULL;
	int rc;

	*out = NULL;
	if (!ty)
		return db_err(x->db, GPMDB_NOMEM, "out of memory");
	for (int c = 0; c < a->ncols; c++)
		ty[c] = a->cols[c].ty;
	o = rel_new(x, a->ncols, ty);
	free(ty);
	if (!o)
		return x->db->errcode ? x->db->errcode : GPMDB_NOMEM;
	if ((rc = xo_gather(o, a, b, a->nrows, idx, m))) {
		rel_free(o);
		return rc;
	}
	*out = o;
	return GPMDB_OK;
}

/* Part p of sp as a new relation of r's rows (all of r's columns). */
static int xo_part_rel(exec_ctx *x, const rel *r, const xo_split *sp,
		       uint32_t p, rel **out)
{
	return xo_rows_rel(x, r, NULL, sp->idx + sp->off[p],
			   sp->off[p + 1] - sp->off[p], out);
}

void exec_gpu_rel_view(const rel *r, uint64_t lo, uint64_t m, rcol *vc, rel *v)
{
	for (int c = 0; c < r->ncols; c++) {
		size_t w = rel_width(r->cols[c].ty.t);
		vc[c] = r->cols[c];
		if (vc[c].data) /* a NULL-typed column may have none */
			vc[c].data = (char *)r->cols[c].data + lo * w;
		if (vc[c].nulls)
			vc[c].nulls = r->cols[c].nulls + lo;
	}
	*v = *r;
	v->cols = vc;
	v->nrows = m;
}

/* ---- sort ------------------------------------------------------------- */

/* One pass: the first keep of v's rows in n's order into perm. */
static int xo_sort_pass(exec_ctx *x, pnode *n, const rel *v, uint32_t keep,
			uint32_t *perm, gpu_sortcol *keys)
{
	xo_dev d = {{0}, 0};
	char err[300];
	int rc = GPMDB_OK;

	if (v->nrows > UINT32_MAX / 2)
		return XO_SPLIT;
	exec_gpu_lock();
	for (int k = 0; k < n->nsort && !rc; k++) {
		rc = xo_upload(x, &d, v, NULL, n->sort_col[k], &keys[k]);
		keys[k].desc = n->desc[k];
		keys[k].nulls_first = n->nulls_first[k];
	}
	if (!rc && (rc = gpu_sort(keys, n->nsort, (uint32_t)v->nrows, keep,
				  perm, err, sizeof(err))))
		rc = xo_gerr(x, rc, "sort", err);
	xo_dev_free(&d);
	exec_gpu_unlock();
	return rc;
}

/* exec.c's sort_cmp: rows i and j of r in n's order, ties in row order. */
static int xo_row_cmp(const rel *r, const pnode *n, uint32_t i, uint32_t j)
{
	for (int k = 0; k < n->nsort; k++) {
		sval a, b;
		int c = n->sort_col[k], d;
		rel_get(r, c, i, &a);
		rel_get(r, c, j, &b);
		if (a.t == BC_T_NULL || b.t == BC_T_NULL) {
			if (a.t == b.t)
				continue;
			d = a.t == BC_T_NULL ? -1 : 1;
			return n->nulls_first[k] ? d : -d;
		}
		if ((d = sval_cmp(&a, &b)))
			return n->desc[k] ? -d : d;
	}
	return i < j ? -1 : i > j;
}

/* A sorted run of a chunk: rows p[at..end) (row numbers of the input). */
typedef struct xo_run {
	const uint32_t *p;
	uint64_t at, end;
} xo_run;

static bool xo_run_less(const rel *r, const pnode *n, const xo_run *a,
			const xo_run *b)
{
	return xo_row_cmp(r, n, a->p[a->at], b->p[b->at]) < 0;
}

/* Moves the run at i of the heap rs[0..nh) down to its place. */
static void xo_sift(const rel *r, const pnode *n, xo_run *rs, uint32_t nh,
		    uint32_t i)
{
	for (;;) {
		uint32_t m = i, lc = 2 * i + 1, rc = lc + 1;
		if (lc < nh && xo_run_less(r, n, &rs[lc], &rs[m]))
			m = lc;
		if (rc < nh && xo_run_less(r, n, &rs[rc], &rs[m]))
			m = rc;
		if (m == i)
			return;
		xo_run t = rs[i];
		rs[i] = rs[m];
		rs[m] = t;
		i = m;
	}
}

/* The first keep rows of the runs rs[0..nr) merged into perm (a binary
 * heap of the runs by their next row). */
static void xo_merge_runs(const rel *r, const pnode *n, xo_run *rs, uint32_t nr,
			  uint64_t keep, uint32_t *perm)
{
	uint32_t nh = 0;

	for (uint32_t i = 0; i < nr; i++)
		if (rs[i].at < rs[i].end)
			rs[nh++] = rs[i];
	for (uint32_t s = nh / 2; s-- > 0;)
		xo_sift(r, n, rs, nh, s);
	for (uint64_t k = 0; k < keep && nh; k++) {
		perm[k] = rs[0].p[rs[0].at++];
		if (rs[0].at == rs[0].end)
			rs[0] = rs[--nh];
		xo_sift(r, n, rs, nh, 0);
	}
}

/* The sort in nc chunks of rows, each sorted on the GPU (its first keep
 * rows), merged on the host into perm[0..keep). */
static int xo_sort_chunks(exec_ctx *x, pnode *n, const rel *in, uint32_t nc,
			  uint64_t keep, uint32_t *perm, gpu_sortcol *keys)
{
	uint64_t nr = in->nrows, step = (nr + nc - 1) / nc, at = 0;
	uint32_t *runs =
	    malloc(4 * (nr < (uint64_t)nc * keep ? nr : nc * keep) + 4);
	xo_run *rs = calloc((size_t)nc + 1, sizeof(xo_run));
	rcol *vc = malloc(sizeof(rcol) * ((size_t)in->ncols + 1));
	uint32_t nrun = 0;
	int rc = GPMDB_OK;

	if (!runs || !rs || !vc) {
		rc = db_err(x->db, GPMDB_NOMEM, "out of memory");
		goto out;
	}
	for (uint64_t lo = 0; lo < nr && !rc; lo += step) {
		uint64_t m = nr - lo < step ? nr - lo : step;
		uint32_t kc = (uint32_t)(keep < m ? keep : m);
		rel v;
		exec_gpu_rel_view(in, lo, m, vc, &v);
		if ((rc = xo_sort_pass(x, n, &v, kc, runs + at, keys)))
			break;
		xo_part_passes++;
		for (uint32_t k = 0; k < kc; k++)
			runs[at + k] += (uint32_t)lo;
		rs[nrun++] = (xo_run){runs + at, 0, kc};
		at += kc;
	}
	if (!rc)
		xo_merge_runs(in, n, rs, nrun, keep, perm);
out:
	free(runs);
	free(rs);
	free(vc);
	return rc;
}

static int xo_sort_run(exec_ctx *x, pnode *n, rel *in, exec_rows want,
		       rel **out)
{
	gpu_sortcol *keys = NULL;
	uint32_t *perm = NULL;
	uint64_t keep = want.keep, skip;
	int rc = GPMDB_OK;

	if (in->nrows > UINT32_MAX)
		return xo_gerr(x, GPMDB_UNSUPPORTED, "sort",
			       "more than 2^32 rows");
	if (n->nsort > 256)
		return xo_gerr(x, GPMDB_UNSUPPORTED, "sort",
			       "more than 256 keys");
	if (keep > in->nrows)
		keep = in->nrows;
	skip = want.skip < keep ? want.skip : keep;
	/* the key descriptors on the heap: this frame may sit in a deep
	 * recursion of exec_node */
	if (!(perm = malloc(4 * keep + 4)) ||
	    !(keys = calloc((size_t)n->nsort + 1, sizeof(gpu_sortcol)))) {
		free(perm);
		return db_err(x->db, GPMDB_NOMEM, "out of memory");
	}
	rc = xo_sort_pass(x, n, in, (uint32_t)keep, perm, keys);
	if (xo_too_large(x, rc)) {
		/* chunks: as many as the free memory asks, doubled while a
		 * chunk still does not fit */
		uint64_t bytes = 0;
		for (int k = 0; k < n->nsort; k++) {
			rel kv = *in;
			kv.cols = &in->cols[n->sort_col[k]];
			bytes += exec_gpu_rel_bytes(&kv, 1);
		}
		uint32_t nc = xo_parts_for(bytes, in->nrows, UINT32_MAX / 4);
		for (;;) {
			if (rc != XO_SPLIT)
				db_clear(x->db);
			rc = xo_sort_chunks(x, n, in, nc, keep, perm, keys);
			if (!xo_too_large(x, rc) || nc >= XO_MAX_PARTS ||
			    in->nrows / nc < 1024)
				break;
			nc *= 2;
		}
		if (!rc)
			xo_part_ops++;
	}
	if (rc == XO_SPLIT)
		rc = xo_gerr(x, GPMDB_UNSUPPORTED, "sort",
			     "a chunk of more than 2^31 rows");
	/* the first keep rows less the OFFSET's skip */
	rc = xo_result(x, n, rc, in, NULL, in->nrows, perm + skip, keep - skip,
		       out);
	free(perm);
	free(keys);
	return rc;
}

/* ---- DISTINCT and set operations -------------------------------------- */

/* One pass over a (and b after it): the kept rows (a's rows first, then
 * b's) into *rows. */
static int xo_dedup_pass(exec_ctx *x, pnode *n, const rel *a, const rel *b,
			 int mode, int nc, gpu_sortcol *cols, uint32_t **rows,
			 uint32_t *nrows)
{
	/* UNION: b's rows are candidates too; INTERSECT/EXCEPT: a probe */
	bool concat = b && mode == 0;
	uint64_t n_all = a->nrows + (b ? b->nrows : 0);
	xo_dev d = {{0}, 0};
	char err[300];
	int rc = GPMDB_OK;

	*rows = NULL;
	*nrows = 0;
	if (n_all > UINT32_MAX / 2)
		return XO_SPLIT;
	exec_gpu_lock();
	for (int c = 0; c < nc && !rc; c++) {
		rc = xo_upload(x, &d, a, b, c, &cols[c]);
		cols[c].desc = 0;
		cols[c].nulls_first = 1;
	}
	if (!rc && (rc = gpu_distinct(cols, nc, (uint32_t)n_all,
				      concat || !b ? (uint32_t)n_all
						   : (uint32_t)a->nrows,
				      mode, rows, nrows, err, sizeof(err))))
		rc = xo_gerr(x, rc, exec_op_name(n->kind), err);
	xo_dev_free(&d);
	exec_gpu_unlock();
	return rc;
}

/* The kept rows of mark[0..n) (1 = kept) in order into *rows. */
static int xo_marked(exec_ctx *x, const uint8_t *mark, uint64_t n,
		     uint32_t **rows, uint32_t *nrows)
{
	uint64_t m = 0;

	for (uint64_t i = 0; i < n; i++)
		m += mark[i];
	if (!(*rows = malloc(4 * m + 4)))
		return db_err(x->db, GPMDB_NOMEM, "out of memory");
	m = 0;
	for (uint64_t i = 0; i < n; i++)
		if (mark[i])
			(*rows)[m++] = (uint32_t)i;
	*nrows = (uint32_t)m;
	return GPMDB_OK;
}

/*
 * One part of DISTINCT or UNION: a pass, or when it does not fit (many
 * equal rows, which the hash cannot split), chunks of its rows (a's,
 * then b's) each reduced to the first row of each of its sets, then one
 * pass over those rows in order: the first row of a set overall is the
 * first in the first chunk that holds the set.  INTERSECT and EXCEPT
 * chunk a's rows, each chunk against all of the part's probe rows b
 * (whether a set has a probe row is the set's, in every chunk).
 */
static int xo_dedup_part(exec_ctx *x, pnode *n, const rel *pa, const rel *pb,
			 int mode, int nc, gpu_sortcol *cols, uint32_t **rows,
			 uint32_t *nrows)
{
	uint64_t na = pa->nrows, nall = na + (pb ? pb->nrows : 0),
		 nch = mode == 0 ? nall : na; /* the rows chunked */
	uint32_t *surv = NULL, *r = NULL, m = 0;
	rcol *vc = NULL;
	rel *sv = NULL;
	int rc;

	rc = xo_dedup_pass(x, n, pa, pb, mode, nc, cols, rows, nrows);
	xo_part_passes++;
	if (!xo_too_large(x, rc) || nch < 2048)
		return rc;
	if (!(surv = malloc(4 * nall + 4)) ||
	    !(vc = malloc(sizeof(rcol) * ((size_t)pa->ncols + 1)))) {
		free(surv);
		return db_err(x->db, GPMDB_NOMEM, "out of memory");
	}
	for (uint64_t k = 2; xo_too_large(x, rc) && nch / k >= 1024; k *= 2) {
		uint64_t step = (nch + k - 1) / k, ns = 0;
		if (rc != XO_SPLIT)
			db_clear(x->db);
		rc = GPMDB_OK;
		/* DISTINCT, UNION: chunks of both sides; INTERSECT, EXCEPT:
		 * chunks of a, each against the part's whole probe side b */
		for (int side = 0; side < (mode == 0 ? 2 : 1) && !rc; side++) {
			const rel *q = side ? pb : pa;
			uint64_t base = side ? na : 0;
			for (uint64_t lo = 0; q && lo < q->nrows && !rc;
			     lo += step) {
				uint64_t cm =
				    q->nrows - lo < step ? q->nrows - lo : step;
				rel v;
				exec_gpu_rel_view(q, lo, cm, vc, &v);
				rc = xo_dedup_pass(x, n, &v, mode ? pb : NULL,
						   mode, nc, cols, &r, &m);
				xo_part_passes++;
				for (uint32_t t = 0; !rc && t < m; t++)
					surv[ns++] =
					    (uint32_t)(base + lo + r[t]);
				free(r);
				r = NULL;
			}
		}
		if (rc)
			continue;
		/* the chunks' rows, in order, in one pass */
		if ((rc = xo_rows_rel(x, pa, pb, surv, ns, &sv)))
			break;
		rc = xo_dedup_pass(x, n, sv, NULL, 0, nc, cols, &r, &m);
		xo_part_passes++;
		rel_free(sv);
		sv = NULL;
		if (rc)
			continue;
		for (uint32_t t = 0; t < m; t++)
			r[t] = surv[r[t]];
		*rows = r;
		*nrows = m;
		r = NULL;
	}
	free(r);
	free(surv);
	free(vc);
	return rc;
}

/* The passes of DISTINCT or a set operation over np parts of a and b
 * split by a hash of their nc columns (equal rows meet in one part); the
 * kept rows as one pass gives them (in row order, a's then b's). */
static int xo_dedup_parts(exec_ctx *x, pnode *n, const rel *a, const rel *b,
			  int mode, int nc, gpu_sortcol *cols, uint32_t np,
			  uint32_t **rows, uint32_t *nrows, uint64_t *biggest)
{
	uint64_t n_all = a->nrows + (b ? b->nrows : 0);
	uint8_t *mark = calloc(n_all + 1, 1);
	xo_split sa, sb;
	int rc;

	memset(&sb, 0, sizeof(sb));
	if (!mark)
		return db_err(x->db, GPMDB_NOMEM, "out of memory");
	if ((rc = xo_split_rows(x, a, nc, np, false, &sa)) ||
	    (b && (rc = xo_split_rows(x, b, nc, np, false, &sb))))
		goto out;
	*biggest = xo_split_max(&sa) + (b ? xo_split_max(&sb) : 0);
	for (uint32_t p = 0; p < np && !rc; p++) {
		uint64_t na = sa.off[p + 1] - sa.off[p],
			 nb = b ? sb.off[p + 1] - sb.off[p] : 0;
		rel *pa = NULL, *pb = NULL;
		uint32_t *r = NULL, m = 0;
		/* a part without a's rows keeps nothing, but for UNION */
		if (!na && (mode != 0 || !nb))
			continue;
		if (!(rc = xo_part_rel(x, a, &sa, p, &pa)) &&
		    !(b && (rc = xo_part_rel(x, b, &sb, p, &pb))))
			rc =
			    xo_dedup_part(x, n, pa, pb, mode, nc, cols, &r, &m);
		for (uint32_t k = 0; !rc && k < m; k++)
			mark[r[k] < na ? sa.idx[sa.off[p] + r[k]]
				       : a->nrows +
					     sb.idx[sb.off[p] + r[k] - na]] = 1;
		free(r);
		rel_free(pa);
		rel_free(pb);
	}
	if (!rc)
		rc = xo_marked(x, mark, n_all, rows, nrows);
out:
	xo_split_free(&sa);
	xo_split_free(&sb);
	free(mark);
	return rc;
}

static int xo_dedup_run(exec_ctx *x, pnode *n, rel *a, rel *b, int mode,
			rel **out)
{
	int nc = n->kind == PN_DISTINCT ? n->nvis : n->ncols;
	gpu_sortcol *cols = NULL;
	uint32_t *rows = NULL, nrows = 0;
	uint64_t n_all = a->nrows + (b ? b->nrows : 0);
	int rc = GPMDB_OK;

	if (n_all > UINT32_MAX)
		return xo_gerr(x, GPMDB_UNSUPPORTED, exec_op_name(n->kind),
			       "more than 2^32 rows");
	if (nc > 256)
		return xo_gerr(x, GPMDB_UNSUPPORTED, exec_op_name(n->kind),
			       "more than 256 columns");
	if (!(cols = calloc((size_t)nc + 1, sizeof(gpu_sortcol))))
		return db_err(x->db, GPMDB_NOMEM, "out of memory");
	rc = xo_dedup_pass(x, n, a, b, mode, nc, cols, &rows, &nrows);
	if (xo_too_large(x, rc)) {
		uint32_t np = xo_parts_for(exec_gpu_rel_bytes(a, nc) +
					       exec_gpu_rel_bytes(b, nc),
					   n_all, UINT32_MAX / 4);
		uint64_t last = UINT64_MAX, big = 0;
		for (;;) {
			if (rc != XO_SPLIT)
				db_clear(x->db);
			free(rows);
			rows = NULL;
			rc = xo_dedup_parts(x, n, a, b, mode, nc, cols, np,
					    &rows, &nrows, &big);
			if (!xo_too_large(x, rc) || np >= XO_MAX_PARTS ||
			    big > last - last / 8)
				break;
			last = big;
			np *= 2;
		}
		if (!rc)
			xo_part_ops++;
	}
	if (rc == XO_SPLIT)
		rc = xo_gerr(x, GPMDB_UNSUPPORTED, exec_op_name(n->kind),
			     "a part of more than 2^31 rows (equal rows)");
	rc = xo_result(x, n, rc, a, b, a->nrows, rows, nrows, out);
	free(rows);
	free(cols);
	return rc;
}

/* ---- join ------------------------------------------------------------- */

/* exec_eval_keys, with the GPU join's key limit. */
static int xo_keys(exec_ctx *x, pnode *n, int base, ast_expr **keys,
		   const pnode *side, const rel *in, rel **out)
{
	if (n->nkeys > 64)
		return db_err(x->db, GPMDB_UNSUPPORTED,
			      "GPU join: more than "
			      "64 keys");
	return exec_eval_keys(x, n, base, keys, side, in, out);
}

/* exec.c's join_emit: pairs (li[k], ri[k]), ri < 0 a NULL right side. */
static int xo_emit(rel *out, const rel *l, const rel *r, const int64_t *li,
		   const int64_t *ri, uint64_t m)
{
	int rc;

	if ((rc = rel_reserve(out, m)))
		return rc;
	for (int c = 0; c < out->ncols; c++) {
		bool right = c >= l->ncols;
		const rel *src = right ? r : l;
		const rcol *s = &src->cols[right ? c - l->ncols : c];
		rcol *d = &out->cols[c];
		size_t w = rel_width(d->ty.t);
		for (uint64_t k = 0; k < m; k++) {
			int64_t i = right ? ri[k] : li[k];
			uint64_t o = out->nrows + k;
			if (i < 0 || s->nulls[i]) {
				d->nulls[o] = 1;
				memset((char *)d->data + o * w, 0, w);
				continue;
			}
			d->nulls[o] = 0;
			memcpy((char *)d->data + o * w,
			       (char *)s->data + (uint64_t)i * w, w);
			if (d->ty.t == BC_T_TEXT) {
				vec_str *v = &((vec_str *)d->data)[o];
				if ((rc = rel_str(out, v->ptr, v->len, v)))
					return rc;
			}
		}
	}
	out->nrows += m;
	return GPMDB_OK;
}

/* exec.c's filter_true: rows of v that are true (not NULL, != 0). */
static uint32_t xo_true(const vec *v, uint32_t n, uint32_t *dst)
{
	uint32_t k = 0;

	if (v->type == VEC_NULL)
		return 0;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t j = v->sel ? v->sel[i] : i;
		bool t;
		if (v->nulls && v->nulls[j])
			continue;
		switch (v->type) {
		case BC_COL_BOOL:
			t = v->v.u8[j];
			break;
		case BC_COL_INT64:
			t = v->v.i64[j] != 0;
			break;
		case BC_COL_DOUBLE:
			t = v->v.f64[j] != 0;
			break;
		default:
			t = false;
		}
		if (t)
			dst[k++] = i;
	}
	return k;
}

/* The pairs into out: with a residual, in exec.c's batches of VEC_BATCH
 * pairs (the same rows evaluated in the same batches: the same errors).
 * pl: the layout the residual reads (n, or a SEMI/ANTI join's pair
 * layout); out NULL (SEMI/ANTI): the pairs only mark matched. */
static int xo_join_out(exec_ctx *x, pnode *n, const pnode *pl, const rel *l,
		       const rel *r, const uint32_t *pli, const uint32_t *pri,
		       uint64_t np, uint8_t *matched, rel *out)
{
	int64_t li[VEC_BATCH], ri[VEC_BATCH], fl[VEC_BATCH], fr[VEC_BATCH];
	uint32_t sel[VEC_BATCH];
	cexpr *pred = NULL;
	rel *chunk = NULL;
	int rc = GPMDB_OK;

	if (n->pred) {
		if (pl->ncols != l->ncols + r->ncols)
			return xo_gerr(x, GPMDB_INTERNAL, "join",
				       "the residual's layout is not the "
				       "pairs'");
		if ((rc = exec_node_cx(x, n, 2 * n->nkeys, n->pred, false, pl,
				       &pred)))
			return rc;
		if (!(chunk = rel_new(x, pl->ncols, pl->ty)))
			return x->db->errcode;
	}
	for (uint64_t s = 0; s < np && !rc; s += VEC_BATCH) {
		uint32_t m =
		    (uint32_t)(np - s < VEC_BATCH ? np - s : VEC_BATCH);
		if ((rc = db_check_interrupt(x->db)))
			break;
		for (uint32_t k = 0; k < m; k++) {
			li[k] = pli[s + k];
			ri[k] = pri[s + k];
		}
		if (!pred) {
			for (uint32_t k = 0; matched && k < m; k++)
				matched[li[k]] = 1;
			rc = out ? xo_emit(out, l, r, li, ri, m) : GPMDB_OK;
			continue;
		}
		chunk->nrows = 0;
		vec_arena_reset(&chunk->strs);
		vec v;
		if ((rc = xo_emit(chunk, l, r, li, ri, m)) ||
		    (rc = cx_eval(x, pred, chunk, 0, m, &v)))
			break;
		uint32_t k2 = xo_true(&v, m, sel);
		for (uint32_t k = 0; k < k2; k++) {
			fl[k] = li[sel[k]];
			fr[k] = ri[sel[k]];
			if (matched)
				matched[fl[k]] = 1;
		}
		rc = out ? xo_emit(out, l, r, fl, fr, k2) : GPMDB_OK;
	}
	rel_free(chunk);
	return rc;
}

/* exec.c's key_has_null: row i of the key columns k has a NULL key. */
static bool xo_key_null(const rel *k, uint64_t i)
{
	for (int c = 0; c < k->ncols; c++)
		if (k->cols[c].nulls[i])
			return true;
	return false;
}

/* What the GPU found for a SEMI/ANTI join. */
typedef struct xo_semi {
	bool all, none;	       /* ANTI_NULL's rules (no residual: decided) */
	uint32_t *rows, nrows; /* no residual: the kept left rows */
	uint32_t *li, *ri;     /* residual: the pairs */
	uint64_t np;
} xo_semi;

/* What a join asks of the GPU: its pairs (XO_PAIRS), or the left rows a
 * SEMI/ANTI join without a residual keeps (GPU_SEMI, GPU_ANTI,
 * GPU_ANTI_NULL). */
#define XO_PAIRS (-1)

/* One pass over key rows lk and rk: pairs (li, ri, np: left rows
 * ascending, a left row's right rows descending) or kept left rows. */
static int xo_join_pass(exec_ctx *x, pnode *n, const rel *lk, const rel *rk,
			int mode, uint32_t **li, uint32_t **ri, uint64_t *np,
			uint32_t **rows, uint32_t *nrows)
{
	gpu_sortcol *lc = NULL, *rc_ = NULL;
	xo_dev d = {{0}, 0};
	char err[300];
	int rc = GPMDB_OK;

	if (lk->nrows > UINT32_MAX / 2 || rk->nrows > UINT32_MAX / 2)
		return XO_SPLIT;
	if (!(lc = calloc((size_t)n->nkeys + 1, sizeof(gpu_sortcol))) ||
	    !(rc_ = calloc((size_t)n->nkeys + 1, sizeof(gpu_sortcol)))) {
		free(lc);
		return db_err(x->db, GPMDB_NOMEM, "out of memory");
	}
	exec_gpu_lock();
	for (int k = 0; k < n->nkeys && !rc; k++)
		if (!(rc = xo_upload(x, &d, lk, NULL, k, &lc[k])))
			rc = xo_upload(x, &d, rk, NULL, k, &rc_[k]);
	/* pairs come back as two uint32 arrays */
	if (!rc && mode == XO_PAIRS) {
		if ((rc = gpu_join(lc, rc_, n->nkeys, (uint32_t)lk->nrows,
				   (uint32_t)rk->nrows, 1ull << 31, li, ri, np,
				   err, sizeof(err))))
			rc = xo_gerr(x, rc, "join", err);
		else
			x->db->gstat.bytes_downloaded += 8 * *np;
	} else if (!rc) {
		if ((rc = gpu_semi_join(lc, rc_, n->nkeys, (uint32_t)lk->nrows,
					(uint32_t)rk->nrows, mode, rows, nrows,
					err, sizeof(err))))
			rc = xo_gerr(x, rc, "join", err);
		else
			x->db->gstat.bytes_downloaded += 4 * (uint64_t)*nrows;
	}
	xo_dev_free(&d);
	exec_gpu_unlock();
	free(lc);
	free(rc_);
	return rc;
}

/*
 * One part of a join: a pass, or when it does not fit (keys that the
 * hash cannot split: one value on many rows), its left rows in chunks
 * against all of its right rows, halved until they fit.  The chunks'
 * pairs and kept rows, in left row order, are one pass's.
 */
static int xo_join_part(exec_ctx *x, pnode *n, const rel *pl, const rel *pr,
			int mode, uint32_t **li, uint32_t **ri, uint64_t *np,
			uint32_t **rows, uint32_t *nrows)
{
	uint64_t nc = 2, nr = pl->nrows, cap = 0;
	rcol *vc = NULL;
	int rc;

	rc = xo_join_pass(x, n, pl, pr, mode, li, ri, np, rows, nrows);
	xo_part_passes++;
	if (!xo_too_large(x, rc) || nr < 2048)
		return rc;
	if (!(vc = malloc(sizeof(rcol) * ((size_t)pl->ncols + 1))))
		return db_err(x->db, GPMDB_NOMEM, "out of memory");
	for (; xo_too_large(x, rc) && nr / nc >= 1024; nc *= 2) {
		uint64_t step = (nr + nc - 1) / nc;
		if (rc != XO_SPLIT)
			db_clear(x->db);
		free(*li);
		free(*ri);
		free(*rows);
		*li = *ri = *rows = NULL;
		*np = 0;
		*nrows = 0;
		cap = 0;
		rc = GPMDB_OK;
		for (uint64_t lo = 0; lo < nr && !rc; lo += step) {
			uint64_t m = nr - lo < step ? nr - lo : step, cn = 0;
			uint32_t *cl = NULL, *cr = NULL, *cw = NULL, cm = 0;
			rel v;
			exec_gpu_rel_view(pl, lo, m, vc, &v);
			rc = xo_join_pass(x, n, &v, pr, mode, &cl, &cr, &cn,
					  &cw, &cm);
			xo_part_passes++;
			/* append, as rows of the part */
			uint64_t add = mode == XO_PAIRS ? cn : cm;
			if (!rc && *np + *nrows + add > cap) {
				uint64_t c2 = 2 * (*np + *nrows + add) + 1024;
				uint32_t *a = realloc(mode == XO_PAIRS ? *li
								       : *rows,
						      4 * c2),
					 *b = mode == XO_PAIRS
						  ? realloc(*ri, 4 * c2)
						  : NULL;
				if (a)
					*(mode == XO_PAIRS ? li : rows) = a;
				if (b)
					*ri = b;
				if (!a || (mode == XO_PAIRS && !b))
					rc = db_err(x->db, GPMDB_NOMEM,
						    "out of memory");
				cap = c2;
			}
			for (uint64_t k = 0; !rc && k < cn; k++) {
				(*li)[*np] = cl[k] + (uint32_t)lo;
				(*ri)[(*np)++] = cr[k];
			}
			for (uint32_t k = 0; !rc && k < cm; k++)
				(*rows)[(*nrows)++] = cw[k] + (uint32_t)lo;
			free(cl);
			free(cr);
			free(cw);
		}
	}
	free(vc);
	return rc;
}

/* A part's pairs, as rows of the whole inputs. */
typedef struct xo_pairs {
	uint32_t *li, *ri;
	uint64_t n;
} xo_pairs;

/*
 * The join's passes over np parts of lk and rk split by a hash of their
 * keys (equal keys meet in one part).  Pairs: each left row's pairs come
 * from its part, in the part's order, so taking the left rows in order
 * gives one pass's order.  Kept rows: in row order; GPU_ANTI_NULL runs as
 * GPU_ANTI (a part may lack the right rows that decide NOT IN's rules,
 * which the caller applied) less the rows with a NULL key.
 */
static int xo_join_parts(exec_ctx *x, pnode *n, const rel *lk, const rel *rk,
			 int mode, uint32_t np, uint32_t **li, uint32_t **ri,
			 uint64_t *npairs, uint32_t **rows, uint32_t *nrows,
			 uint64_t *biggest)
{
	uint64_t nl = lk->nrows, total = 0;
	xo_pairs *pp = calloc((size_t)np + 1, sizeof(xo_pairs));
	uint64_t *cur = calloc((size_t)np + 1, 8);
	uint8_t *mark = mode == XO_PAIRS ? NULL : calloc(nl + 1, 1);
	int pmode = mode == GPU_ANTI_NULL ? GPU_ANTI : mode;
	xo_split sl, sr;
	int rc;

	memset(&sl, 0, sizeof(sl));
	memset(&sr, 0, sizeof(sr));
	if (!pp || !cur || (mode != XO_PAIRS && !mark)) {
		rc = db_err(x->db, GPMDB_NOMEM, "out of memory");
		goto out;
	}
	if ((rc = xo_split_rows(x, lk, n->nkeys, np, true, &sl)) ||
	    (rc = xo_split_rows(x, rk, n->nkeys, np, true, &sr)))
		goto out;
	*biggest = xo_split_max(&sl) + xo_split_max(&sr);
	/* left rows with a NULL key: no pairs; ANTI keeps them */
	for (uint64_t i = 0; pmode == GPU_ANTI && i < nl; i++)
		if (sl.pt[i] == XO_NO_PART)
			mark[i] = 1;
	for (uint32_t p = 0; p < np && !rc; p++) {
		uint64_t a = sl.off[p + 1] - sl.off[p],
			 b = sr.off[p + 1] - sr.off[p];
		const uint32_t *lx = sl.idx + sl.off[p],
			       *rx = sr.idx + sr.off[p];
		rel *pl = NULL, *pr = NULL;
		uint32_t *r = NULL, m = 0;
		if (!a)
			continue;
		if (!b) { /* no right rows: ANTI keeps the part's rows */
			for (uint64_t k = 0; pmode == GPU_ANTI && k < a; k++)
				mark[lx[k]] = 1;
			continue;
		}
		if (!(rc = xo_part_rel(x, lk, &sl, p, &pl)) &&
		    !(rc = xo_part_rel(x, rk, &sr, p, &pr)))
			rc = xo_join_part(x, n, pl, pr, pmode, &pp[p].li,
					  &pp[p].ri, &pp[p].n, &r, &m);
		rel_free(pl);
		rel_free(pr);
		for (uint64_t k = 0; !rc && mode == XO_PAIRS && k < pp[p].n;
		     k++) {
			pp[p].li[k] = lx[pp[p].li[k]];
			pp[p].ri[k] = rx[pp[p].ri[k]];
		}
		total += pp[p].n;
		for (uint32_t k = 0; !rc && k < m; k++)
			mark[lx[r[k]]] = 1;
		free(r);
	}
	if (rc)
		goto out;
	if (mode != XO_PAIRS) {
		for (uint64_t i = 0; mode == GPU_ANTI_NULL && i < nl; i++)
			if (mark[i] && xo_key_null(lk, i))
				mark[i] = 0;
		rc = xo_marked(x, mark, nl, rows, nrows);
		goto out;
	}
	if (!(*li = malloc(4 * total + 4)) || !(*ri = malloc(4 * total + 4))) {
		rc = db_err(x->db, GPMDB_NOMEM, "out of memory");
		goto out;
	}
	*npairs = 0;
	for (uint64_t i = 0; i < nl; i++) {
		if (sl.pt[i] == XO_NO_PART)
			continue;
		xo_pairs *q = &pp[sl.pt[i]];
		uint64_t *c = &cur[sl.pt[i]];
		for (; *c < q->n && q->li[*c] == i; (*c)++, (*npairs)++) {
			(*li)[*npairs] = (uint32_t)i;
			(*ri)[*npairs] = q->ri[*c];
		}
	}
out:
	for (uint32_t p = 0; pp && p < np; p++) {
		free(pp[p].li);
		free(pp[p].ri);
	}
	free(pp);
	free(cur);
	free(mark);
	xo_split_free(&sl);
	xo_split_free(&sr);
	return rc;
}

/* The join's pairs or kept rows: one pass, else passes over parts. */
static int xo_join_gpu(exec_ctx *x, pnode *n, const rel *lk, const rel *rk,
		       int mode, uint32_t **li, uint32_t **ri, uint64_t *np,
		       uint32_t **rows, uint32_t *nrows)
{
	int rc = xo_join_pass(x, n, lk, rk, mode, li, ri, np, rows, nrows);

	if (xo_too_large(x, rc)) {
		uint64_t mx = lk->nrows > rk->nrows ? lk->nrows : rk->nrows,
			 last = UINT64_MAX, big = 0;
		uint32_t parts =
		    xo_parts_for(exec_gpu_rel_bytes(lk, n->nkeys) +
				     exec_gpu_rel_bytes(rk, n->nkeys),
				 mx, UINT32_MAX / 4);
		for (;;) {
			if (rc != XO_SPLIT)
				db_clear(x->db);
			free(*li);
			free(*ri);
			free(*rows);
			*li = *ri = *rows = NULL;
			*np = 0;
			*nrows = 0;
			rc = xo_join_parts(x, n, lk, rk, mode, parts, li, ri,
					   np, rows, nrows, &big);
			if (!xo_too_large(x, rc) || parts >= XO_MAX_PARTS ||
			    big > last - last / 8)
				break;
			last = big;
			parts *= 2;
		}
		if (!rc)
			xo_part_ops++;
	}
	if (rc == XO_SPLIT)
		rc = xo_gerr(x, GPMDB_UNSUPPORTED, "join",
			     "a part of more than 2^31 rows (equal keys)");
	return rc;
}

/* The SEMI/ANTI join's output from what the GPU found. */
static int xo_semi_out(exec_ctx *x, pnode *n, const rel *l, const rel *r,
		       const rel *lk, xo_semi *sg, rel **out)
{
	int jt = n->jtype, rc;
	const pnode *pl = n->pair ? n->pair : n;
	uint8_t *matched = NULL;
	rel *o = NULL;

	if (n->pred) {
		if (!(matched = calloc(l->nrows + 1, 1))) {
			rc = db_err(x->db, GPMDB_NOMEM, "out of memory");
			goto out;
		}
		if ((rc = xo_join_out(x, n, pl, l, r, sg->li, sg->ri, sg->np,
				      matched, NULL)))
			goto out;
	}
	if (n->pred || sg->all) {
		/* the rows semi_out keeps */
		free(sg->rows);
		sg->nrows = 0;
		if (!(sg->rows = malloc(4 * (l->nrows + 1)))) {
			rc = db_err(x->db, GPMDB_NOMEM, "out of memory");
			goto out;
		}
		for (uint64_t i = 0; !sg->none && i < l->nrows; i++) {
			bool keep = jt == JOIN_SEMI ? matched[i] != 0
				    : sg->all	    ? true
				    : jt == JOIN_ANTI
					? !matched[i]
					: !matched[i] && !xo_key_null(lk, i);
			if (keep)
				sg->rows[sg->nrows++] = (uint32_t)i;
		}
	}
	if (n->ncols > l->ncols) {
		rc = xo_gerr(x, GPMDB_INTERNAL, "join",
			     "SEMI/ANTI output wider than its left side");
		goto out;
	}
	if (!(o = rel_new(x, n->ncols, n->ty))) {
		rc = x->db->errcode ? x->db->errcode : GPMDB_NOMEM;
		goto out;
	}
	if ((rc = xo_gather(o, l, NULL, l->nrows, sg->rows, sg->nrows)))
		goto out;
	*out = o;
	o = NULL;
out:
	free(matched);
	rel_free(o);
	return rc;
}

static int xo_join_run(exec_ctx *x, pnode *n, rel *l, rel *r, rel **out)
{
	rel *lk = NULL, *rk = NULL, *o = NULL;
	uint32_t *li = NULL, *ri = NULL, *nor = NULL, non = 0;
	uint64_t np = 0;
	uint8_t *matched = NULL;
	int jt = n->jtype;
	bool semi = jt == JOIN_SEMI || jt == JOIN_ANTI || jt == JOIN_ANTI_NULL;
	xo_semi sg;
	int rc;

	memset(&sg, 0, sizeof(sg));
	/* keys as exec_join evaluates them: left, then right */
	if ((rc = xo_keys(x, n, 0, n->lkeys, n->l, l, &lk)) ||
	    (rc = xo_keys(x, n, n->nkeys, n->rkeys, n->r, r, &rk)))
		goto out;
	if (l->nrows > UINT32_MAX || r->nrows > UINT32_MAX) {
		rc = xo_gerr(x, GPMDB_UNSUPPORTED, "join",
			     "an input of more than 2^32 rows");
		goto out;
	}
	if (semi) {
		/* ANTI_NULL (NOT IN): no row when a right key is NULL, every
		 * row when the right side is empty */
		if (jt == JOIN_ANTI_NULL) {
			sg.all = r->nrows == 0;
			for (uint64_t i = 0;
			     !sg.all && i < rk->nrows && !sg.none; i++)
				sg.none = xo_key_null(rk, i);
		}
		/* with a residual every pair goes through it (its errors), as
		 * on the CPU, whatever the rules decide after */
		if (n->pred)
			rc = xo_join_gpu(x, n, lk, rk, XO_PAIRS, &sg.li, &sg.ri,
					 &sg.np, &nor, &non);
		else if (!sg.all && !sg.none)
			rc = xo_join_gpu(x, n, lk, rk,
					 jt == JOIN_SEMI   ? GPU_SEMI
					 : jt == JOIN_ANTI ? GPU_ANTI
							   : GPU_ANTI_NULL,
					 &li, &ri, &np, &sg.rows, &sg.nrows);
		if (!rc)
			rc = xo_semi_out(x, n, l, r, lk, &sg, out);
		goto out;
	}
	if ((rc = xo_join_gpu(x, n, lk, rk, XO_PAIRS, &li, &ri, &np, &nor,
			      &non)))
		goto out;
	if (jt == JOIN_LEFT && !(matched = calloc(l->nrows + 1, 1))) {
		rc = db_err(x->db, GPMDB_NOMEM, "out of memory");
		goto out;
	}
	if (!(o = rel_new(x, n->ncols, n->ty))) {
		rc = x->db->errcode ? x->db->errcode : GPMDB_NOMEM;
		goto out;
	}
	if ((rc = xo_join_out(x, n, n, l, r, li, ri, np, matched, o)))
		goto out;
	/* LEFT JOIN: the left rows without a match, after the pairs */
	for (uint64_t i = 0; matched && i < l->nrows && !rc; i++)
		if (!matched[i])
			rc = xo_emit(o, l, r, (int64_t[]){(int64_t)i},
				     (int64_t[]){-1}, 1);
	if (!rc) {
		*out = o;
		o = NULL;
	}
out:
	free(sg.rows);
	free(sg.li);
	free(sg.ri);
	free(li);
	free(ri);
	free(nor);
	free(matched);
	rel_free(o);
	rel_free(lk);
	rel_free(rk);
	return rc;
}

/* ---- LIMIT ------------------------------------------------------------ */

/*
 * LIMIT over an input that runs on the GPU: the CPU's LIMIT (exec.c),
 * whose SORT input gives only its rows from OFFSET to LIMIT + OFFSET (a
 * GPU top-N: only they come back).  The LIMIT counts as a GPU operator when
 * nothing below it fell back to the CPU (its rows are then a GPU result); it
 * never falls back itself.
 */
static int xo_limit_run(exec_ctx *x, pnode *n, rel **out)
{
	uint64_t fb0 = x->db->gstat.cpu_fallbacks;
	int rc = exec_limit(x, n, out);

	if (!rc && x->db->gstat.cpu_fallbacks == fb0)
		x->db->gstat.gpu_ops++;
	return rc;
}

/* ---- running ---------------------------------------------------------- */

/* The backend choice of a SORT, JOIN, DISTINCT, SETOP or LIMIT: true for
 * the GPU; else why is left empty for a CPU choice and kept for a
 * fallback (exec_op_run's rule). */
static bool xo_chosen(exec_ctx *x, pnode *n, char *why, size_t len)
{
	int d = exec_gpu_ops_decide(x, n, why, len);

	if (d == XG_GPU)
		return true;
	if (d != XG_WANTED_CPU)
		why[0] = 0;
	return false;
}

int exec_gpu_sort(exec_ctx *x, pnode *n, exec_rows want, rel **out, char *why,
		  size_t len)
{
	rel *in;
	int rc;

	if (!xo_chosen(x, n, why, len))
		return EXEC_OP_CPU;
	/* a projection of a scan below: its keys never leave the device;
	 * when they do not fit with the sort's working memory, the general
	 * path (the sort in chunks) */
	rc = exec_gpu_sort_dev(x, n, want, out);
	if (rc == GPMDB_NOMEM && xo_too_large(x, rc)) {
		db_clear(x->db);
		rc = XO_DECLINE;
	}
	if (rc == XO_DECLINE) {
		if ((rc = exec_node(x, n->l, &in)))
			return rc;
		rc = xo_sort_run(x, n, in, want, out);
		rel_free(in);
	}
	if (!rc)
		x->db->gstat.gpu_ops++;
	return rc;
}

int exec_gpu_ops_node(exec_ctx *x, pnode *n, exec_rows want, rel **out,
		      char *why, size_t len)
{
	rel *l = NULL, *r = NULL;
	int rc;

	(void)want;
	if (!xo_chosen(x, n, why, len))
		return EXEC_OP_CPU;
	/* LIMIT: never a fallback of its own (the input's are counted) */
	if (n->kind == PN_LIMIT)
		return xo_limit_run(x, n, out);
	if ((rc = exec_node(x, n->l, &l)))
		return rc;
	if (n->r && (rc = exec_node(x, n->r, &r))) {
		rel_free(l);
		return rc;
	}
	if (n->kind == PN_JOIN)
		rc = xo_join_run(x, n, l, r, out);
	else if (n->kind == PN_DISTINCT)
		rc = xo_dedup_run(x, n, l, NULL, 0, out);
	else
		rc = xo_dedup_run(x, n, l, r,
				  n->op == AST_UNION	   ? 0
				  : n->op == AST_INTERSECT ? 1
							   : 2,
				  out);
	rel_free(l);
	rel_free(r);
	if (!rc)
		x->db->gstat.gpu_ops++;
	return rc;
}
