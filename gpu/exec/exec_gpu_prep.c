/*
 * exec_gpu_prep.c - preparing a GPU operator's source (xg_prepare_at):
 * its filters run over a table scan, a join whose pairs stay on the
 * device, a projection or a GROUP BY kept on the device, or any other
 * source run first and uploaded; too large for the device, the source
 * runs on the host instead.
 */
#include "exec_gpu_int.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

/* ---- joins kept on the device ----------------------------------------- */

/* Joins whose pairs a GPU operator above reads on the device (pairs in
 * HBM, columns gathered through them) instead of a host relation. */
uint64_t xg_dev_joins;

/* out[k] = base[idx[k]], k < m (device index arrays; GPU_NO_ROW stays). */
static int xg_remap(exec_ctx *x, const uint32_t *base, const uint32_t *idx,
		    uint32_t m, uint32_t **out)
{
	char err[300];
	int rc;

	if ((rc = gpu_remap(base, idx, m, out, err, sizeof(err))))
		return xg_gerr(x, rc, "join", err);
	return GPMDB_OK;
}

/* *out: a new device array of a[0..na) then b[0..nb) (b NULL: GPU_NO_ROW). */
static int xg_concat(exec_ctx *x, const uint32_t *a, uint32_t na,
		     const uint32_t *b, uint32_t nb, uint32_t **out)
{
	char err[300];
	int rc;

	if ((rc = gpu_alloc((void **)out, 4 * ((size_t)na + nb) + 4, err,
			    sizeof(err))) ||
	    (rc = gpu_copy(*out, a, 4 * (size_t)na, err, sizeof(err))) ||
	    (rc = b ? gpu_copy(*out + na, b, 4 * (size_t)nb, err, sizeof(err))
		    : gpu_memset(*out + na, 0xff, 4 * (size_t)nb, err,
				 sizeof(err)))) {
		gpu_free(*out, NULL, 0);
		*out = NULL;
		return xg_gerr(x, rc, "join", err);
	}
	return GPMDB_OK;
}

/* Keeps rows idx[0..cnt) (device; positions among s's current rows,
 * taken over) of s: a selection composed with s->sel, or for a joined
 * source each leaf's rows compacted. */
static int xg_src_select(xg_src *s, uint32_t *idx, uint32_t cnt)
{
	uint32_t *m;
	int rc = GPMDB_OK;

	if (!s->nleaf) {
		if (s->sel) {
			rc = xg_remap(s->x, s->sel, idx, cnt, &m);
			gpu_free(idx, NULL, 0);
			if (rc)
				return rc;
			gpu_free(s->sel, NULL, 0);
			idx = m;
		}
		s->sel = idx;
		s->nsel = cnt;
		return GPMDB_OK;
	}
	for (int i = 0; i < s->nleaf && !rc; i++) {
		if (!(rc = xg_remap(s->x, s->leaf[i].idx, idx, cnt, &m))) {
			gpu_free(s->leaf[i].idx, NULL, 0);
			s->leaf[i].idx = m;
		}
	}
	gpu_free(idx, NULL, 0);
	s->nrows = cnt;
	/* loaded columns point at the old rows */
	for (int c = 0; c < s->ncols; c++)
		s->cols[c].loaded = false;
	return rc;
}

/*
 * Whether JOIN j can be a device source: an inner equi-join the GPU runs
 * (exec_gpu_ops_decide: key types, the threshold under auto), keys and
 * residual the GPU interpreter runs.  Other joins (LEFT, SEMI/ANTI)
 * return host relations (exec_gpu_ops.c).
 */
int xg_join_ok(exec_ctx *x, pnode *j, char *why, size_t len)
{
	cexpr *c;

	bool semi = j->jtype == JOIN_SEMI || j->jtype == JOIN_ANTI ||
		    j->jtype == JOIN_ANTI_NULL;
	if (j->kind != PN_JOIN || !j->nkeys ||
	    (j->jtype != JOIN_INNER && j->jtype != JOIN_LEFT && !semi)) {
		snprintf(why, len,
			 "only inner, LEFT, semi and anti equi-joins stay on "
			 "the device");
		return 0;
	}
	if (j->jtype == JOIN_ANTI_NULL && j->pred) {
		snprintf(why, len,
			 "a NOT IN join with a residual condition returns a "
			 "host relation");
		return 0;
	}
	if (j->nkeys > 32) {
		snprintf(why, len, "%d join keys (32 on the device)", j->nkeys);
		return 0;
	}
	if (exec_gpu_ops_decide(x, j, why, len) != XG_GPU)
		return 0;
	for (int k = 0; k < j->nkeys; k++)
		if (!xg_expr_ok(x, j, k, j->lkeys[k], false, j->l, &c, why,
				len) ||
		    !xg_expr_ok(x, j, j->nkeys + k, j->rkeys[k], false, j->r,
				&c, why, len))
			return 0;
	if (j->pred && !xg_expr_ok(x, j, 2 * j->nkeys, j->pred, false,
				   semi && j->pair ? j->pair : j, &c, why, len))
		return 0;
	return 1;
}

/* Whether PROJECT c can be a device source (xg_prepare_proj): it runs on
 * the GPU over a scan or a device join, and no output is TEXT (a TEXT
 * output may point at its program's constants, which another program
 * cannot read). */
/* Is c's program a column of the source as it is (one LOAD_COL, its
 * OUTPUT)? */
bool xg_passthrough(const cexpr *c)
{
	const bc_program *p = c->prog;
	int load = -1;

	if (c->ninputs != 1 || c->in[0].kind != IN_COL || p->noutputs != 1)
		return false;
	for (uint32_t k = 0; k < p->ninsns; k++) {
		const bc_insn *in = &p->insns[k];
		if (in->op == BC_NOP)
			continue;
		if (in->op == BC_LOAD_COL && in->a == 0 && load < 0)
			load = in->dst;
		else if (!(in->op == BC_OUTPUT && load >= 0 && in->a == load))
			return false;
	}
	return load >= 0 && p->out_reg[0] == load;
}

static int xg_proj_ok(exec_ctx *x, pnode *c)
{
	char why[400];
	pnode *src;

	if (c->kind != PN_PROJECT || c->ncols != c->nexprs)
		return 0;
	/* TEXT outputs: source columns as they are (their values point
	 * into the column's own text; a computed string may point into the
	 * program's constants, which a consumer's program cannot read) */
	for (int i = 0; i < c->ncols; i++) {
		cexpr *cx;
		if (c->ty[i].t != BC_T_TEXT)
			continue;
		if (exec_node_cx(x, c, i, c->exprs[i], c->post, c->l, &cx)) {
			db_clear(x->db); /* the CPU's run reports it */
			return 0;
		}
		if (!xg_passthrough(cx))
			return 0;
	}
	if (xg_decide(x, c, why, sizeof(why)) != XG_GPU)
		return 0;
	src = xg_source(x, c, why, sizeof(why));
	return src &&
	       (src->kind == PN_SCAN ||
		(src->kind == PN_JOIN &&
		 xg_join_ok(x, src, why, sizeof(why))) ||
		/* a GROUP BY kept on the device (TPC-H Q13, Q15's view) */
		xg_agg_keep_ok(src));
}

/* PROJECT c as a source: run over its own source, the outputs stay on
 * the device as dense columns (a join's input needs no host relation). */
static int xg_prepare_proj(exec_ctx *x, pnode *c, xg_src *s)
{
	xg_src *in = calloc(1, sizeof(xg_src));
	struct xg_out *o = calloc((size_t)c->nexprs + 1, sizeof(xg_out));
	int rc;

	memset(s, 0, sizeof(*s));
	s->x = x;
	s->own = in;
	s->outs = o;
	if (!in || !o)
		return db_err(x->db, GPMDB_NOMEM, "out of memory");
	s->nouts = c->nexprs;
	if ((rc = xg_prepare(x, c, in)))
		return rc;
	for (int i = 0; i < c->nexprs; i++) {
		cexpr *cx;
		if ((rc = exec_node_cx(x, c, i, c->exprs[i], c->post, c->l,
				       &cx)) ||
		    (rc = xg_run(in, cx, &o[i])))
			return rc;
	}
	s->ncols = c->ncols;
	if (!(s->cols = calloc((size_t)s->ncols + 1, sizeof(xg_col))))
		return db_err(x->db, GPMDB_NOMEM, "out of memory");
	s->nrows = xg_rows(in);
	for (int i = 0; i < c->nexprs; i++) {
		s->cols[i].col = o[i].col[0];
		s->cols[i].col.sel = NULL;
		s->cols[i].ndata = s->nrows;
		s->cols[i].loaded = true;
		/* TEXT (xg_proj_ok: a column as it is): the run's buffer,
		 * kept by in, and its map to host bytes, kept by o */
		s->cols[i].text = o[i].dtext;
		s->cols[i].ntext = o[i].ntext;
		s->cols[i].seg = o[i].seg;
		s->cols[i].nseg = o[i].nseg;
	}
	x->db->gstat.gpu_ops++;
	return GPMDB_OK;
}

/* A join's input c as a source: its GPU filters and scan, a device join,
 * or whatever else runs it (on either backend) uploaded. */
static int xg_prepare_side(exec_ctx *x, pnode *c, xg_src *s)
{
	char why[300];
	cexpr *cx;

	if (c->kind == PN_FILTER &&
	    xg_expr_ok(x, c, 0, c->pred, c->post, c->l, &cx, why, sizeof(why)))
		return xg_prepare_win(x, c, s, NULL);
	memset(s, 0, sizeof(*s));
	s->x = x;
	return xg_prepare_at(x, c, NULL, 0, c, s, NULL);
}

/*
 * A SEMI/ANTI join's kept left rows (positions among the left input's
 * rows, device) when it has a residual: the pairs (gpu_join_dev) as a
 * source over the pair layout whose leaves borrow the inputs', the
 * residual run over every pair (as exec.c does), then the left rows that
 * a passing pair names (SEMI) or that none names (ANTI).
 */
static int xg_semi_residual(exec_ctx *x, pnode *j, xg_src **side,
			    const gpu_sortcol *kc, uint32_t **rows,
			    uint32_t *nrows)
{
	const pnode *pl = j->pair ? j->pair : j;
	uint32_t nl = xg_rows(side[0]), *pi[2] = {NULL, NULL}, *idx = NULL,
		 *kept = NULL, cnt = 0;
	uint64_t np = 0;
	struct xg_out o;
	xg_src t;
	char err[300];
	cexpr *c;
	int rc, n = 0;

	memset(&o, 0, sizeof(o));
	memset(&t, 0, sizeof(t));
	t.x = x;
	if ((rc = gpu_join_dev(kc, kc + j->nkeys, j->nkeys, nl,
			       xg_rows(side[1]), NULL, NULL, 1ull << 31, &pi[0],
			       &pi[1], &np, err, sizeof(err)))) {
		rc = xg_gerr(x, rc, "join", err);
		goto out;
	}
	t.ncols = pl->ncols;
	t.nrows = (uint32_t)np;
	if (!(t.cols = calloc((size_t)t.ncols + 1, sizeof(xg_col))) ||
	    !(t.leaf = calloc((size_t)(side[0]->nleaf + side[1]->nleaf + 2),
			      sizeof(xg_leaf)))) {
		rc = db_err(x->db, GPMDB_NOMEM, "out of memory");
		goto out;
	}
	for (int s = 0; s < 2 && !rc; s++) {
		xg_src *in = side[s];
		int col0 = s ? j->l->ncols : 0;
		uint32_t *m = NULL;
		if (!in->nleaf) {
			rc = in->sel
				 ? xg_remap(x, in->sel, pi[s], (uint32_t)np, &m)
				 : xg_concat(x, pi[s], (uint32_t)np, NULL, 0,
					     &m);
			if (!rc)
				t.leaf[n++] = (xg_leaf){in, m, col0, true};
			continue;
		}
		for (int q = 0; q < in->nleaf && !rc; q++)
			if (!(rc = xg_remap(x, in->leaf[q].idx, pi[s],
					    (uint32_t)np, &m)))
				t.leaf[n++] =
				    (xg_leaf){in->leaf[q].src, m,
					      col0 + in->leaf[q].col0, true};
	}
	t.nleaf = n;
	if (rc ||
	    (rc = exec_node_cx(x, j, 2 * j->nkeys, j->pred, false, pl, &c)) ||
	    (rc = xg_run(&t, c, &o)))
		goto out;
	if ((rc = gpu_select(&o.col[0], (uint32_t)np, NULL, &idx, &cnt, err,
			     sizeof(err)))) {
		rc = xg_gerr(x, rc, "select", err);
		goto out;
	}
	if ((rc = xg_remap(x, pi[0], idx, cnt, &kept)))
		goto out;
	if ((rc = gpu_unmatched(kept, cnt, nl, j->jtype == JOIN_SEMI, rows,
				nrows, err, sizeof(err))))
		rc = xg_gerr(x, rc, "join", err);
out:
	xg_out_free(&o);
	xg_src_free(&t);
	gpu_free(pi[0], NULL, 0);
	gpu_free(pi[1], NULL, 0);
	gpu_free(idx, NULL, 0);
	gpu_free(kept, NULL, 0);
	return rc;
}

/* A SEMI/ANTI join of the prepared inputs side[0..1] with their keys kc:
 * s becomes the left input with the rows it keeps. */
static int xg_semi_dev(exec_ctx *x, pnode *j, xg_src **side,
		       const gpu_sortcol *kc, xg_src *s)
{
	xg_src *l = side[0];
	uint32_t *rows, cnt;
	char err[300];
	int rc;

	if (xg_rows(l) > UINT32_MAX / 2 || xg_rows(side[1]) > UINT32_MAX / 2)
		return xg_gerr(x, GPMDB_UNSUPPORTED, "join",
			       "an input of more than 2^31 rows");
	if (j->pred) {
		if ((rc = xg_semi_residual(x, j, side, kc, &rows, &cnt)) ||
		    (rc = xg_src_select(l, rows, cnt)))
			return rc;
		goto done;
	}
	if ((rc = gpu_semi_join_dev(
		 kc, kc + j->nkeys, j->nkeys, xg_rows(l), xg_rows(side[1]),
		 j->jtype == JOIN_SEMI	 ? GPU_SEMI
		 : j->jtype == JOIN_ANTI ? GPU_ANTI
					 : GPU_ANTI_NULL,
		 l->nleaf ? NULL : l->sel, &rows, &cnt, err, sizeof(err))))
		return xg_gerr(x, rc, "join", err);
	if (l->nleaf) {
		/* positions among the joined input's rows */
		if ((rc = xg_src_select(l, rows, cnt)))
			return rc;
	} else {
		/* rows of the input's columns (through its selection) */
		gpu_free(l->sel, NULL, 0);
		l->sel = rows;
		l->nsel = cnt;
	}
done:
	free(s->cols);
	*s = *l;
	free(l);
	side[0] = NULL;
	x->db->gstat.gpu_ops++;
	xg_dev_joins++;
	return GPMDB_OK;
}

/*
 * JOIN j as a source of s: both inputs prepared as sources, their keys
 * computed on the device, the pairs (gpu_join_dev) kept there as rows
 * of the inputs' leaves, the residual run as a filter.  Columns are
 * read through the pairs when an operator needs them (xg_load): nothing
 * is materialised on the host, and only the columns used are read.  The
 * pairs are in exec.c's order (left rows ascending, a left row's right
 * rows descending), as are the inputs' rows: the CPU join's rows.
 */
static int xg_prepare_join(exec_ctx *x, pnode *j, xg_src *s)
{
	int nk = j->nkeys, rc = GPMDB_OK, nl = 0;
	xg_src *side[2] = {calloc(1, sizeof(xg_src)),
			   calloc(1, sizeof(xg_src))};
	xg_out *ko = calloc(2 * (size_t)nk, sizeof(xg_out));
	gpu_sortcol *kc = calloc(2 * (size_t)nk, sizeof(gpu_sortcol));
	uint32_t *pi[2] = {NULL, NULL}, *ld = NULL, nleft = 0;
	uint64_t np = 0;
	bool left = j->jtype == JOIN_LEFT;
	char err[300];

	if (!side[0] || !side[1] || !ko || !kc) {
		rc = db_err(x->db, GPMDB_NOMEM, "out of memory");
		goto out;
	}
	for (int t = 0; t < 2 && !rc; t++)
		rc = xg_prepare_side(x, t ? j->r : j->l, side[t]);
	/* keys as exec_join evaluates them: left, then right */
	for (int t = 0; t < 2 && !rc; t++)
		for (int k = 0; k < nk && !rc; k++) {
			cexpr *c;
			if (!(rc = exec_node_cx(x, j, t * nk + k,
						t ? j->rkeys[k] : j->lkeys[k],
						false, t ? j->r : j->l, &c)) &&
			    !(rc = xg_run(side[t], c, &ko[t * nk + k])))
				rc = xg_keycol(side[t], &ko[t * nk + k],
					       &kc[t * nk + k]);
		}
	if (rc)
		goto out;
	if (j->jtype != JOIN_INNER && !left) {
		rc = xg_semi_dev(x, j, side, kc, s);
		goto out;
	}
	/* pairs as rows of the inputs' columns: through a plain input's
	 * selection; a joined input's leaves are remapped below */
	if (xg_rows(side[0]) > UINT32_MAX / 2 ||
	    xg_rows(side[1]) > UINT32_MAX / 2) {
		rc = xg_gerr(x, GPMDB_UNSUPPORTED, "join",
			     "an input of more than 2^31 rows");
		goto out;
	}
	nleft = xg_rows(side[0]);
	if ((rc = gpu_join_dev(kc, kc + nk, nk, nleft, xg_rows(side[1]),
			       left || side[0]->nleaf ? NULL : side[0]->sel,
			       side[1]->nleaf ? NULL : side[1]->sel, 1ull << 31,
			       &pi[0], &pi[1], &np, err, sizeof(err)))) {
		rc = xg_gerr(x, rc, "join", err);
		goto out;
	}
	for (int k = 0; k < 2 * nk; k++)
		xg_out_free(&ko[k]);
	/* LEFT: the pairs' left positions (dense) are kept to find the
	 * unmatched rows; the leaf gets rows of the input's columns */
	if (left) {
		ld = pi[0];
		pi[0] = NULL;
		if (!side[0]->nleaf && side[0]->sel)
			rc =
			    xg_remap(x, side[0]->sel, ld, (uint32_t)np, &pi[0]);
		else
			rc = xg_concat(x, ld, (uint32_t)np, NULL, 0, &pi[0]);
		if (rc)
			goto out;
	}
	/* the leaves: a plain input is one, a joined one brings its own */
	if (!(s->leaf = calloc((size_t)(side[0]->nleaf + 1) +
				   (size_t)(side[1]->nleaf + 1),
			       sizeof(xg_leaf)))) {
		rc = db_err(x->db, GPMDB_NOMEM, "out of memory");
		goto out;
	}
	for (int t = 0; t < 2 && !rc; t++) {
		int col0 = t ? j->l->ncols : 0;
		xg_src *in = side[t];
		if (!in->nleaf) {
			s->leaf[nl++] = (xg_leaf){in, pi[t], col0};
			side[t] = NULL;
			pi[t] = NULL;
			continue;
		}
		for (int q = 0; q < in->nleaf && !rc; q++) {
			xg_leaf *lf = &in->leaf[q];
			uint32_t *m;
			if ((rc =
				 xg_remap(x, lf->idx, pi[t], (uint32_t)np, &m)))
				break;
			s->leaf[nl++] = (xg_leaf){lf->src, m, col0 + lf->col0};
			lf->src = NULL;
		}
	}
	s->nleaf = nl;
	s->nrows = (uint32_t)np;
	if (rc)
		goto out;
	x->db->gstat.gpu_ops++;
	xg_dev_joins++;
	/* the residual, over the pairs' layout (the join's own) */
	if (j->pred) {
		cexpr *c;
		xg_out o;
		uint32_t *idx, cnt;
		if ((rc = exec_node_cx(x, j, 2 * nk, j->pred, false, j, &c)))
			goto out;
		if ((rc = xg_run(s, c, &o))) {
			xg_out_free(&o);
			goto out;
		}
		rc = gpu_select(&o.col[0], s->nrows, NULL, &idx, &cnt, err,
				sizeof(err));
		xg_out_free(&o);
		if (rc) {
			rc = xg_gerr(x, rc, "select", err);
			goto out;
		}
		if (left) {
			uint32_t *m;
			if ((rc = xg_remap(x, ld, idx, cnt, &m))) {
				gpu_free(idx, NULL, 0);
				goto out;
			}
			gpu_free(ld, NULL, 0);
			ld = m;
		}
		if ((rc = xg_src_select(s, idx, cnt)))
			goto out;
	}
	/* LEFT: the left rows no pair kept, after the pairs (exec.c's
	 * order), with no right row (GPU_NO_ROW reads NULL) */
	if (left) {
		int nll = side[0] ? side[0]->nleaf : 1;
		uint32_t *u = NULL, nu = 0;
		if ((rc = gpu_unmatched(ld, s->nrows, nleft, 0, &u, &nu, err,
					sizeof(err)))) {
			rc = xg_gerr(x, rc, "join", err);
			goto out;
		}
		for (int q = 0; q < s->nleaf && !rc; q++) {
			xg_leaf *lf = &s->leaf[q];
			uint32_t *ext = NULL, *m = NULL;
			const uint32_t *base = q >= nll	 ? NULL
					       : side[0] ? side[0]->leaf[q].idx
							 : lf->src->sel;
			if (q < nll)
				rc = base ? xg_remap(x, base, u, nu, &ext)
					  : xg_concat(x, u, nu, NULL, 0, &ext);
			if (!rc &&
			    !(rc = xg_concat(x, lf->idx, s->nrows,
					     q < nll ? ext : NULL, nu, &m))) {
				gpu_free(lf->idx, NULL, 0);
				lf->idx = m;
			}
			gpu_free(ext, NULL, 0);
		}
		gpu_free(u, NULL, 0);
		s->nrows += nu;
		for (int c = 0; c < s->ncols; c++)
			s->cols[c].loaded = false;
	}
out:
	gpu_free(ld, NULL, 0);
	if (ko)
		for (int k = 0; k < 2 * nk; k++)
			xg_out_free(&ko[k]);
	for (int t = 0; t < 2; t++) {
		if (side[t]) {
			xg_src_free(side[t]);
			free(side[t]);
		}
		gpu_free(pi[t], NULL, 0);
	}
	free(ko);
	free(kc);
	return rc;
}

bool xg_too_large(exec_ctx *x, int rc)
{
	return rc == XG_STREAM ||
	       (rc == GPMDB_NOMEM && !strncmp(x->db->errmsg, "GPU ", 4));
}

/* After xg_too_large: the device's error dropped, s an empty source of
 * ncols columns again (for the host path). */
static int xg_src_reset(exec_ctx *x, xg_src *s, int ncols, int rc)
{
	if (rc != XG_STREAM)
		db_clear(x->db);
	xg_src_free(s);
	s->x = x;
	s->ncols = ncols;
	if (!(s->cols = calloc((size_t)ncols + 1, sizeof(xg_col))))
		return db_err(x->db, GPMDB_NOMEM, "out of memory");
	return GPMDB_OK;
}

/* ---- device batches --------------------------------------------------- */

/* The device-batch implementations of exec_op.c's table (exec_gpu.h):
 * n's rows for the GPU operator consumer, b's ncols columns allocated. */

/* A table scan: its columns from the HBM cache, loaded when read */
int exec_gpu_batch_scan(exec_ctx *x, pnode *consumer, pnode *n, xg_src *b,
			const xg_win *win)
{
	bool fits = true;
	int rc;

	b->scan = n;
	if (win) {
		b->win = win;
		b->nrows = (uint32_t)win->live;
		return GPMDB_OK;
	}
	/* the size check: tables too large for the cache, or for 32-bit
	 * row numbers, are streamed */
	if (xg_scan_rows(x->db, n) > UINT32_MAX)
		return XG_STREAM;
	b->nrows = (uint32_t)xg_scan_rows(x->db, n);
	if ((rc = xg_fits(x, consumer, n, &fits)))
		return rc;
	return fits ? GPMDB_OK : XG_STREAM;
}

/* While set (exec_gpu_rows' second try, under xg_lock): joins,
 * projections and GROUP BYs are not kept on the device but made as host
 * relations (by the GPU operators of exec_gpu_ops.c, in passes when too
 * large), which a chain then reads in row windows (xg_stream_host). */
int xg_host_sources;

/* A device batch too large for the device: none (its host relation is
 * uploaded instead; exec_gpu_ops.c runs in passes when it must), b an
 * empty batch of n's columns again. */
static int xg_batch_fits(exec_ctx *x, pnode *n, xg_src *b, int rc)
{
	if (!xg_too_large(x, rc))
		return rc;
	if ((rc = xg_src_reset(x, b, n->ncols, rc)))
		return rc;
	return EXEC_OP_CPU;
}

/* A join whose pairs stay on the device */
int exec_gpu_batch_join(exec_ctx *x, pnode *consumer, pnode *n, xg_src *b,
			const xg_win *win)
{
	char why[300];

	(void)consumer;
	(void)win;
	if (xg_host_sources || !xg_join_ok(x, n, why, sizeof(why)))
		return EXEC_OP_CPU;
	return xg_batch_fits(x, n, b, xg_prepare_join(x, n, b));
}

/* A projection whose outputs stay on the device (TPC-H Q9's under its
 * GROUP BY) */
int exec_gpu_batch_proj(exec_ctx *x, pnode *consumer, pnode *n, xg_src *b,
			const xg_win *win)
{
	(void)consumer;
	(void)win;
	if (xg_host_sources || !xg_proj_ok(x, n))
		return EXEC_OP_CPU;
	free(b->cols);
	b->cols = NULL;
	return xg_batch_fits(x, n, b, xg_prepare_proj(x, n, b));
}

/* A GROUP BY whose groups stay on the device when there are many (TPC-H
 * Q17, Q18: millions of groups went to the host and came back) */
int exec_gpu_batch_agg(exec_ctx *x, pnode *consumer, pnode *n, xg_src *b,
		       const xg_win *win)
{
	(void)consumer;
	(void)win;
	if (xg_host_sources)
		return EXEC_OP_CPU;
	return xg_batch_fits(x, n, b, xg_agg_keep(x, n, b));
}

/* xg_prepare_win's work for the given chain (top first) and source. */
int xg_prepare_at(exec_ctx *x, pnode *n, pnode **chain, int nchain, pnode *src,
		  xg_src *s, const xg_win *win)
{
	exec_batch b = {EXEC_AT_DEVICE, NULL, s, win};
	char err[300];
	int rc;

	s->ncols = src->ncols;
	if (!(s->cols = calloc((size_t)s->ncols + 1, sizeof(xg_col))))
		return db_err(x->db, GPMDB_NOMEM, "out of memory");
	/* src's rows as a batch, on the device where its kind can leave
	 * them there (a table scan too large for the cache: XG_STREAM, the
	 * caller streams it), else on the host, uploaded when read; a host
	 * window's rows were made before (xg_stream_host) */
	if (win && win->host) {
		b.at = EXEC_AT_HOST;
		b.host = win->host;
		s->in_borrowed = true;
	} else if ((rc = exec_op_batch(x, n, src, EXEC_ALL, &b))) {
		/* a scan past the cache whose consumer's columns fit: the
		 * filters in windows into a selection (xg_stream_sel) */
		if (rc == XG_STREAM && !win)
			rc = xg_stream_sel(x, n, chain, nchain, src, s);
		return rc;
	}
	if (b.at == EXEC_AT_HOST) {
		s->in = b.host;
		if (s->in->nrows > UINT32_MAX)
			return db_err(x->db, GPMDB_UNSUPPORTED,
				      "GPU input: more than 2^32 rows");
		s->nrows = (uint32_t)s->in->nrows;
	}
	/* filters: lowest first */
	for (int i = nchain - 1; i >= 0; i--) {
		pnode *f = chain[i];
		cexpr *c;
		xg_out o;
		uint32_t *idx, cnt;
		if ((rc = exec_node_cx(x, f, 0, f->pred, f->post, f->l, &c)))
			return rc;
		if ((rc = xg_run(s, c, &o))) {
			xg_out_free(&o);
			return rc;
		}
		rc = gpu_select(&o.col[0], s->sel ? s->nsel : s->nrows, s->sel,
				&idx, &cnt, err, sizeof(err));
		xg_out_free(&o);
		if (rc)
			return xg_gerr(x, rc, "select", err);
		if (s->nleaf) {
			if ((rc = xg_src_select(s, idx, cnt)))
				return rc;
		} else {
			gpu_free(s->sel, NULL, 0);
			s->sel = idx;
			s->nsel = cnt;
		}
		x->db->gstat.gpu_ops++;
	}
	return GPMDB_OK;
}

int xg_prepare(exec_ctx *x, pnode *n, xg_src *s)
{
	return xg_prepare_win(x, n, s, NULL);
}
