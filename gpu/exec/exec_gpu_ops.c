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

#include "../gpu.h"

#define XO_DECLINE (-1)

bool exec_gpu_ops_kind(int kind)
{
	return kind == PN_SORT || kind == PN_JOIN || kind == PN_DISTINCT ||
	       kind == PN_SETOP || kind == PN_LIMIT;
}

/* Types the GPU compares as exec.c does (sval_cmp of one static type).
 * TEXT: binary order (val_text_cmp), the only collation the binder lets
 * through (COLLATE RTRIM compares binary too). */
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

/* ---- sort ------------------------------------------------------------- */

static int xo_sort_run(exec_ctx *x, pnode *n, rel *in, exec_rows want,
		       rel **out)
{
	gpu_sortcol *keys = NULL;
	xo_dev d = {{0}, 0};
	uint32_t *perm = NULL;
	uint64_t keep = want.keep, skip;
	char err[300];
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
	exec_gpu_lock();
	for (int k = 0; k < n->nsort && !rc; k++) {
		rc = xo_upload(x, &d, in, NULL, n->sort_col[k], &keys[k]);
		keys[k].desc = n->desc[k];
		keys[k].nulls_first = n->nulls_first[k];
	}
	if (!rc && (rc = gpu_sort(keys, n->nsort, (uint32_t)in->nrows,
				  (uint32_t)keep, perm, err, sizeof(err))))
		rc = xo_gerr(x, rc, "sort", err);
	xo_dev_free(&d);
	exec_gpu_unlock();
	/* the first keep rows less the OFFSET's skip */
	rc = xo_result(x, n, rc, in, NULL, in->nrows, perm + skip, keep - skip,
		       out);
	free(perm);
	free(keys);
	return rc;
}

/* ---- DISTINCT and set operations -------------------------------------- */

static int xo_dedup_run(exec_ctx *x, pnode *n, rel *a, rel *b, int mode,
			rel **out)
{
	int nc = n->kind == PN_DISTINCT ? n->nvis : n->ncols;
	gpu_sortcol *cols = NULL;
	xo_dev d = {{0}, 0};
	uint32_t *rows = NULL, nrows = 0;
	/* UNION: b's rows are candidates too; INTERSECT/EXCEPT: a probe */
	bool concat = b && mode == 0;
	uint64_t n_all = a->nrows + (b ? b->nrows : 0);
	char err[300];
	int rc = GPMDB_OK;

	if (n_all > UINT32_MAX / 2)
		return xo_gerr(x, GPMDB_UNSUPPORTED, exec_op_name(n->kind),
			       "more than 2^31 rows");
	if (nc > 256)
		return xo_gerr(x, GPMDB_UNSUPPORTED, exec_op_name(n->kind),
			       "more than 256 columns");
	if (!(cols = calloc((size_t)nc + 1, sizeof(gpu_sortcol))))
		return db_err(x->db, GPMDB_NOMEM, "out of memory");
	exec_gpu_lock();
	for (int c = 0; c < nc && !rc; c++) {
		rc = xo_upload(x, &d, a, b, c, &cols[c]);
		cols[c].desc = 0;
		cols[c].nulls_first = 1;
	}
	if (!rc && (rc = gpu_distinct(cols, nc, (uint32_t)n_all,
				      concat || !b ? (uint32_t)n_all
						   : (uint32_t)a->nrows,
				      mode, &rows, &nrows, err, sizeof(err))))
		rc = xo_gerr(x, rc, exec_op_name(n->kind), err);
	xo_dev_free(&d);
	exec_gpu_unlock();
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

/* What the GPU found for a SEMI/ANTI join (xo_semi_gpu). */
typedef struct xo_semi {
	bool all, none;	       /* ANTI_NULL's rules (no residual: decided) */
	uint32_t *rows, nrows; /* no residual: the kept left rows */
	uint32_t *li, *ri;     /* residual: the pairs */
	uint64_t np;
} xo_semi;

/*
 * SEMI, ANTI and ANTI_NULL joins (decorrelated EXISTS, IN, NOT EXISTS,
 * NOT IN): the kept left rows in row order, exec.c's semi_out.  Without
 * a residual the GPU finds them (gpu_semi_join).  With one, gpu_join's
 * pairs (left rows ascending, right rows descending: join_hash's order;
 * the CPU's reversed table for a larger right side evaluates the same
 * pairs in another order) go through the residual on the host in
 * batches of VEC_BATCH, marking the left rows that match.  ANTI_NULL
 * (NOT IN): no row when a right key is NULL, every row when the right
 * side is empty, else no row with a NULL key.  Called with the GPU lock
 * held and the keys uploaded.
 */
static int xo_semi_gpu(exec_ctx *x, pnode *n, const rel *l, const rel *r,
		       const rel *rk, const gpu_sortcol *lc,
		       const gpu_sortcol *rc_, xo_semi *sg)
{
	int jt = n->jtype, rc = GPMDB_OK;
	char err[300];

	if (jt == JOIN_ANTI_NULL) {
		sg->all = r->nrows == 0;
		for (uint64_t i = 0; !sg->all && i < rk->nrows && !sg->none;
		     i++)
			sg->none = xo_key_null(rk, i);
	}
	if (n->pred) {
		/* every pair goes through the residual (its errors), as on
		 * the CPU, whatever the rules decide after */
		if ((rc = gpu_join(lc, rc_, n->nkeys, (uint32_t)l->nrows,
				   (uint32_t)r->nrows, 1ull << 31, &sg->li,
				   &sg->ri, &sg->np, err, sizeof(err))))
			rc = xo_gerr(x, rc, "join", err);
	} else if (!sg->all && !sg->none) {
		if ((rc = gpu_semi_join(lc, rc_, n->nkeys, (uint32_t)l->nrows,
					(uint32_t)r->nrows,
					jt == JOIN_SEMI	  ? GPU_SEMI
					: jt == JOIN_ANTI ? GPU_ANTI
							  : GPU_ANTI_NULL,
					&sg->rows, &sg->nrows, err,
					sizeof(err))))
			rc = xo_gerr(x, rc, "join", err);
	}
	if (!rc)
		x->db->gstat.bytes_downloaded +=
		    8 * sg->np + 4 * (uint64_t)sg->nrows;
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
	gpu_sortcol *lc = NULL, *rc_ = NULL;
	xo_dev d = {{0}, 0};
	rel *lk = NULL, *rk = NULL, *o = NULL;
	uint32_t *li = NULL, *ri = NULL;
	uint64_t np = 0;
	uint8_t *matched = NULL;
	bool semi = n->jtype == JOIN_SEMI || n->jtype == JOIN_ANTI ||
		    n->jtype == JOIN_ANTI_NULL;
	xo_semi sg;
	char err[300];
	int rc;

	memset(&sg, 0, sizeof(sg));
	/* keys as exec_join evaluates them: left, then right */
	if ((rc = xo_keys(x, n, 0, n->lkeys, n->l, l, &lk)) ||
	    (rc = xo_keys(x, n, n->nkeys, n->rkeys, n->r, r, &rk)))
		goto out;
	if (!(lc = calloc((size_t)n->nkeys + 1, sizeof(gpu_sortcol))) ||
	    !(rc_ = calloc((size_t)n->nkeys + 1, sizeof(gpu_sortcol)))) {
		rc = db_err(x->db, GPMDB_NOMEM, "out of memory");
		goto out;
	}
	if (l->nrows > UINT32_MAX / 2 || r->nrows > UINT32_MAX / 2) {
		rc = xo_gerr(x, GPMDB_UNSUPPORTED, "join",
			     "an input of more than 2^31 rows");
		goto out;
	}
	exec_gpu_lock();
	for (int k = 0; k < n->nkeys && !rc; k++)
		if (!(rc = xo_upload(x, &d, lk, NULL, k, &lc[k])))
			rc = xo_upload(x, &d, rk, NULL, k, &rc_[k]);
	/* pairs come back as two uint32 arrays */
	if (!rc && semi)
		rc = xo_semi_gpu(x, n, l, r, rk, lc, rc_, &sg);
	else if (!rc && (rc = gpu_join(lc, rc_, n->nkeys, (uint32_t)l->nrows,
				       (uint32_t)r->nrows, 1ull << 31, &li, &ri,
				       &np, err, sizeof(err))))
		rc = xo_gerr(x, rc, "join", err);
	xo_dev_free(&d);
	exec_gpu_unlock();
	if (rc)
		goto out;
	if (semi) {
		rc = xo_semi_out(x, n, l, r, lk, &sg, out);
		goto out;
	}
	x->db->gstat.bytes_downloaded += 8 * np;
	if (n->jtype == JOIN_LEFT && !(matched = calloc(l->nrows + 1, 1))) {
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
	free(lc);
	free(rc_);
	free(li);
	free(ri);
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
	/* a projection of a scan below: its keys never leave the device */
	if ((rc = exec_gpu_sort_dev(x, n, want, out)) == XO_DECLINE) {
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
