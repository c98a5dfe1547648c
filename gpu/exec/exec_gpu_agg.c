/*
 * exec_gpu_agg.c - aggregates and GROUP BY on the GPU (xg_agg): keys,
 * aggregate arguments read in place, the groups' rows built on the host
 * or kept on the device for the operator above (xg_agg_keep), and the
 * fused scan-filter-aggregate (xg_fused).
 */
#include "exec_gpu_int.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

/* qsort_r: row numbers by first[] (arg) */
int xg_cmp_first(const void *a, const void *b, void *arg)
{
	const uint32_t *first = arg;
	uint32_t x = first[*(const uint32_t *)a],
		 y = first[*(const uint32_t *)b];
	return x < y ? -1 : x > y;
}

/* perm[0..nout): group numbers in the order of their first rows (as the
 * CPU's hash aggregate finds them): the device's order when it made one
 * (many groups), else sorted here. */
void xg_group_order(const gpu_groups *g, uint32_t nout, uint32_t *perm)
{
	if (g->order && nout == g->ngroups) {
		memcpy(perm, g->order, sizeof(uint32_t) * nout);
		return;
	}
	for (uint32_t k = 0; k < nout; k++)
		perm[k] = k;
	if (g->ngroups && nout > 1)
		qsort_r(perm, nout, sizeof(uint32_t), xg_cmp_first, g->first);
}

/* AVG or TOTAL of a group from its sum (0 without values) and count, as
 * agg_final: a DECIMAL argument's sum divided by ten scale times; TOTAL
 * 0.0 without values, AVG NULL. */
sval xg_avg_total(const aggdef *ad, etype t, long double sum, uint64_t cnt)
{
	sval v;

	memset(&v, 0, sizeof(v));
	v.t = BC_T_NULL;
	if (cnt && t.t == BC_T_DEC)
		for (int q = 0; q < t.scale; q++)
			sum /= 10;
	if (ad->fn == AGG_TOTAL) {
		v.t = BC_T_REAL;
		v.u.r = (double)sum;
	} else if (cnt) {
		v.t = BC_T_REAL;
		v.u.r = (double)(sum / cnt);
	}
	return v;
}

sval xg_ival(etype t, int64_t i)
{
	sval v;
	memset(&v, 0, sizeof(v));
	v.t = t.t == BC_T_INT || t.t == BC_T_DEC || t.t == BC_T_DATE ||
		      t.t == BC_T_BOOL
		  ? t.t
		  : BC_T_INT;
	v.scale = t.scale;
	v.u.i = i;
	return v;
}

__int128 xg_sum128(const gpu_agg_res *r, uint32_t g)
{
	return (__int128)(((unsigned __int128)(uint64_t)r->sum_hi[g] << 64) |
			  r->sum_lo[g]);
}

/* Group gi's state of aggregate ad (GPU op op) in the device's results
 * res (NULL: no rows, the empty scalar aggregate). */
static xg_acc xg_acc_of(const aggdef *ad, int op, const gpu_agg_res *res,
			uint32_t gi)
{
	etype t = ad->arg ? expr_type(ad->arg) : et_make(BC_T_INT);
	xg_acc ac;

	memset(&ac, 0, sizeof(ac));
	if (!res || !(ac.cnt = res->cnt[gi]))
		return ac;
	switch (ad->fn) {
	case AGG_SUM:
	case AGG_AVG:
	case AGG_TOTAL:
		if (op == GPU_AGG_SUM_R)
			ac.f = res->f64[gi];
		else
			ac.sum = xg_sum128(res, gi);
		break;
	case AGG_MIN:
	case AGG_MAX:
		if (t.t == BC_T_REAL)
			ac.f = res->f64[gi];
		else
			ac.mm = res->i64[gi];
		break;
	}
	return ac;
}

int xg_agg_value(exec_ctx *x, const aggdef *ad, int op, const xg_acc *ac,
		 const sval *any, rel *r, int col, uint64_t row)
{
	etype t = ad->arg ? expr_type(ad->arg) : et_make(BC_T_INT);
	uint64_t cnt = ac->cnt;
	sval v;
	int rc;

	memset(&v, 0, sizeof(v));
	v.t = BC_T_NULL;
	switch (ad->fn) {
	case AGG_COUNT_STAR:
	case AGG_COUNT:
		v.t = BC_T_INT;
		v.u.i = (int64_t)cnt;
		break;
	case AGG_SUM:
		if (!cnt)
			break;
		v.t = ad->res.t;
		v.scale = ad->res.scale;
		if (v.t == BC_T_REAL)
			v.u.r = op == GPU_AGG_SUM_R
				    ? ac->f
				    : (double)(long double)ac->sum;
		else /* the device's sums are checked: it fits */
			v.u.i = (int64_t)ac->sum;
		break;
	case AGG_AVG:
	case AGG_TOTAL:
		v = xg_avg_total(ad, t,
				 !cnt		       ? 0
				 : op == GPU_AGG_SUM_R ? (long double)ac->f
						       : (long double)ac->sum,
				 cnt);
		break;
	case AGG_MIN:
	case AGG_MAX:
		if (!cnt)
			break;
		if (t.t == BC_T_REAL) {
			v.t = BC_T_REAL;
			v.u.r = ac->f;
		} else {
			v = xg_ival(t, ac->mm);
		}
		break;
	case AGG_ANY:
		if (cnt && any)
			v = *any;
		break;
	}
	/* as agg_final: to the aggregate's result type */
	if (v.t != BC_T_NULL &&
	    (v.t != ad->res.t ||
	     (v.t == BC_T_DEC && v.scale != ad->res.scale)) &&
	    (rc = sval_convert(x, &v, ad->res, 0, r)))
		return rc;
	return rel_set(r, col, row, &v);
}

/*
 * An aggregate's key or argument that is a plain column over all rows
 * (no filter: no selection): the aggregate reads the source's device
 * array itself.  Why: running the identity program copied every value
 * and NULL byte (the 1000-group GROUP BY of 100M rows copied k, v and q,
 * 2.7 GB, before aggregating them).  The GPU aggregate widens INT32,
 * DATE and BOOL as LOAD_COL does; FLOAT and TEXT go through the program.
 * 1 with *col set; 0: run the program, or an error in *rc (loading the
 * column failed).
 */
static int xg_direct(xg_src *s, cexpr *c, gpu_col *col, int *rc)
{
	*rc = GPMDB_OK;
	if (s->sel || s->nleaf || !xg_passthrough(c))
		return 0;
	if ((*rc = xg_load(s, c->in[0].col)))
		return 0;
	const gpu_col *g = &s->cols[c->in[0].col].col;
	bool ints = g->type == BC_COL_INT64 || g->type == BC_COL_DEC ||
		    g->type == BC_COL_INT32 || g->type == BC_COL_DATE ||
		    g->type == BC_COL_BOOL;
	int t = c->ty.t;
	if (!((ints && (t == BC_T_INT || t == BC_T_DEC || t == BC_T_DATE ||
			t == BC_T_BOOL)) ||
	      (g->type == BC_COL_DOUBLE && t == BC_T_REAL)))
		return 0;
	*col = *g;
	col->sel = NULL;
	return 1;
}

/*
 * The key columns of groups whose first rows are first[perm[0..nout)]
 * into columns 0..ng of r (rows 0..nout): the rows are gathered on the
 * device and come back in one transfer (TEXT through each key's run's
 * segments).  Why the first row: the CPU's group keeps the key values of
 * its first row.
 */
int xg_group_keys(exec_ctx *x, pnode *n, xg_src *s, const xg_out *key,
		  const gpu_sortcol *kc, const uint32_t *first,
		  const uint32_t *perm, uint32_t nout, rel *r)
{
	int ng = n->ngroup, rc = GPMDB_OK;
	uint32_t *fr = malloc(4 * (size_t)nout + 4), *dfr = NULL;
	xg_out *gk = calloc((size_t)ng + 1, sizeof(xg_out));
	rel *kr = NULL;
	char err[300];

	if (!fr || !gk) {
		rc = db_err(x->db, GPMDB_NOMEM, "out of memory");
		goto out;
	}
	for (uint32_t k = 0; k < nout; k++)
		fr[k] = first[perm[k]];
	if ((rc = gpu_alloc((void **)&dfr, 4 * (size_t)nout + 4, err,
			    sizeof(err))) ||
	    (rc = xg_keep_dev(s, dfr)) ||
	    (rc = gpu_upload(dfr, fr, 4 * (size_t)nout, err, sizeof(err)))) {
		rc = x->db->errcode == rc ? rc : xg_gerr(x, rc, "upload", err);
		goto out;
	}
	x->db->gstat.bytes_uploaded += 4 * (uint64_t)nout;
	for (int k = 0; k < ng; k++) {
		/* the gathered copy maps text through the key's run */
		gk[k].p = key[k].p;
		gk[k].seg = key[k].seg;
		gk[k].nseg = key[k].nseg;
		if ((rc = gpu_gather(&kc[k].col, dfr, nout, &gk[k].col[0], err,
				     sizeof(err)))) {
			rc = xg_gerr(x, rc, "gather", err);
			goto out;
		}
		if (gk[k].col[0].data &&
		    (rc = xg_keep_dev(s, gk[k].col[0].data)))
			goto out;
	}
	if (!(kr = rel_new(x, ng, n->ty))) {
		rc = x->db->errcode ? x->db->errcode : GPMDB_NOMEM;
		goto out;
	}
	if ((rc = xg_fetch(x, gk, ng, nout, kr)))
		goto out;
	for (uint32_t row = 0; row < nout && !rc; row++)
		for (int k = 0; k < ng && !rc; k++) {
			sval v;
			rel_get(kr, k, row, &v);
			rc = rel_set(r, k, row, &v);
		}
out:
	free(fr);
	free(gk);
	rel_free(kr);
	return rc;
}

/*
 * Bare columns (AGG_ANY): each group's least row number with a value
 * (g->res[a].i64, the MIN over gpu_row_numbers) gathers the argument's
 * run on the device; all come back in one transfer as the columns of
 * *out (nout rows in the output's order perm), aggregate a's in column
 * col[a].  A group with no value reads row 0 (its result is NULL).
 */
static int xg_any_values(exec_ctx *x, pnode *n, xg_src *s, const xg_out *args,
			 const gpu_groups *g, const uint32_t *perm,
			 uint32_t nout, int *col, rel **out)
{
	int na = n->naggs, nany = 0, rc = GPMDB_OK;
	etype *ty = calloc((size_t)na + 1, sizeof(etype));
	xg_out *ga = calloc((size_t)na + 1, sizeof(xg_out));
	uint32_t *pos = malloc(4 * (size_t)nout + 4), *dpos;
	char err[300];

	*out = NULL;
	if (!ty || !ga || !pos) {
		rc = db_err(x->db, GPMDB_NOMEM, "out of memory");
		goto done;
	}
	for (int a = 0; a < na; a++) {
		col[a] = -1;
		if (n->aggs[a].fn != AGG_ANY)
			continue;
		const gpu_agg_res *res = &g->res[a];
		xg_out *o = &ga[nany];
		for (uint32_t k = 0; k < nout; k++)
			pos[k] =
			    res->cnt[perm[k]] ? (uint32_t)res->i64[perm[k]] : 0;
		if ((rc = gpu_alloc((void **)&dpos, 4 * (size_t)nout + 4, err,
				    sizeof(err))) ||
		    (rc = xg_keep_dev(s, dpos)) ||
		    (rc = gpu_upload(dpos, pos, 4 * (size_t)nout, err,
				     sizeof(err)))) {
			rc = x->db->errcode == rc
				 ? rc
				 : xg_gerr(x, rc, "upload", err);
			goto done;
		}
		x->db->gstat.bytes_uploaded += 4 * (uint64_t)nout;
		/* the gathered copy maps text through the argument's run */
		o->p = args[a].p;
		o->seg = args[a].seg;
		o->nseg = args[a].nseg;
		if ((rc = gpu_gather(&args[a].col[0], dpos, nout, &o->col[0],
				     err, sizeof(err)))) {
			rc = xg_gerr(x, rc, "gather", err);
			goto done;
		}
		if (o->col[0].data && (rc = xg_keep_dev(s, o->col[0].data)))
			goto done;
		ty[nany] = expr_type(n->aggs[a].arg);
		col[a] = nany++;
	}
	if (!nany)
		goto done;
	if (!(*out = rel_new(x, nany, ty))) {
		rc = x->db->errcode ? x->db->errcode : GPMDB_NOMEM;
		goto done;
	}
	rc = xg_fetch(x, ga, nany, nout, *out);
done:
	free(ty);
	free(ga);
	free(pos);
	return rc;
}

/* Row row of the aggregate's result: group perm[row]'s key and values.
 * x NULL: no error message is set (the parallel pass). */
static int xg_agg_row(exec_ctx *x, const pnode *n, const gpu_groups *g,
		      const gpu_agg *ga, const rel *anyv, const int *anycol,
		      bool empty_scalar, const uint32_t *perm, uint32_t row,
		      rel *r)
{
	int ng = n->ngroup, na = n->naggs, rc = GPMDB_OK;
	uint32_t gi = perm[row];

	if (ng && g->key) {
		sval v = xg_ival(n->ty[0], g->key[gi]);
		if (g->key_null[gi])
			v.t = BC_T_NULL;
		if ((rc = rel_set(r, 0, row, &v)))
			return rc;
	}
	for (int a = 0; a < na && !rc; a++) {
		const aggdef *ad = &n->aggs[a];
		xg_acc ac = xg_acc_of(ad, ga[a].op,
				      empty_scalar ? NULL : &g->res[a], gi);
		sval any;
		bool have_any = anyv && anycol[a] >= 0;
		if (have_any)
			rel_get(anyv, anycol[a], row, &any);
		rc = xg_agg_value(x, ad, ga[a].op, &ac, have_any ? &any : NULL,
				  r, ng + a, row);
	}
	return rc;
}

/* How aggregate ad becomes its result on the device (gpu_group_agg_keep):
 * false when the host must finish it (ANY, a result type the host would
 * convert to). */
static bool xg_agg_fin(const aggdef *ad, gpu_agg_fin *f)
{
	etype t = ad->arg ? expr_type(ad->arg) : et_make(BC_T_INT);

	memset(f, 0, sizeof(*f));
	f->type = (uint8_t)rel_vec_type(ad->res.t);
	switch (ad->fn) {
	case AGG_COUNT_STAR:
	case AGG_COUNT:
		f->fin = GPU_FIN_COUNT;
		return ad->res.t == BC_T_INT;
	case AGG_SUM:
		f->fin = GPU_FIN_SUM;
		/* as xg_agg_row: an integer sum takes the result type, a
		 * REAL sum must be REAL */
		return t.t == BC_T_REAL
			   ? ad->res.t == BC_T_REAL
			   : (ad->res.t == BC_T_INT || ad->res.t == BC_T_DEC ||
			      ad->res.t == BC_T_REAL);
	case AGG_AVG:
	case AGG_TOTAL:
		f->fin = ad->fn == AGG_AVG ? GPU_FIN_AVG : GPU_FIN_TOTAL;
		f->scale = t.t == BC_T_DEC ? t.scale : 0;
		return ad->res.t == BC_T_REAL;
	case AGG_MIN:
	case AGG_MAX:
		f->fin = GPU_FIN_MINMAX;
		return ad->res.t == t.t &&
		       (t.t != BC_T_DEC || ad->res.scale == t.scale) &&
		       t.t != BC_T_TEXT && t.t != BC_T_NULL;
	default:
		return false;
	}
}

/* Can n's groups stay on the device for the operator above (xg_agg's
 * keep)?  Keys of any type (TEXT ones: columns as they are, xg_agg
 * checks), aggregates xg_agg_fin finishes. */
bool xg_agg_keep_ok(const pnode *n)
{
	gpu_agg_fin f;

	if (n->kind != PN_AGG || n->ngroup < 1)
		return false;
	for (int k = 0; k < n->ngroup; k++)
		if (n->ty[k].t == BC_T_NULL)
			return false;
	for (int a = 0; a < n->naggs; a++)
		if (!xg_agg_fin(&n->aggs[a], &f))
			return false;
	return true;
}

/* The device result of gpu_group_agg_keep as source d's columns. */
static int xg_agg_to_src(exec_ctx *x, pnode *n, gpu_col *cols, uint32_t ng,
			 const xg_out *key, xg_src *d)
{
	int rc = GPMDB_OK;

	d->x = x;

	for (int c = 0; c < n->ncols; c++) {
		xg_col *o = &d->cols[c];
		if (!rc)
			rc = xg_keep_dev(d, cols[c].data);
		else
			gpu_free(cols[c].data, NULL, 0);
		memset(o, 0, sizeof(*o));
		o->col = cols[c];
		o->col.prec = n->ty[c].prec;
		o->col.scale = n->ty[c].scale;
		o->ndata = ng;
		o->loaded = true;
		if (c < n->ngroup && cols[c].type == BC_COL_TEXT) {
			/* the key's run: its text buffer (kept alive with
			 * the AGG's source, xg_agg_keep) and a copy of its
			 * map to host bytes */
			const xg_out *k = &key[c];
			gcache_seg *sg = NULL;
			if (!rc &&
			    !(sg = malloc(sizeof(gcache_seg) * (k->nseg + 1))))
				rc =
				    db_err(x->db, GPMDB_NOMEM, "out of memory");
			if (!rc && (rc = xg_keep_host(d, sg)) == GPMDB_OK) {
				if (k->nseg)
					memcpy(sg, k->seg,
					       sizeof(gcache_seg) * k->nseg);
				o->text = k->dtext;
				o->ntext = k->ntext;
				o->seg = sg;
				o->nseg = k->nseg;
			}
		}
	}
	d->x = x;
	d->nrows = ng;
	return rc;
}

int xg_agg(exec_ctx *x, pnode *n, xg_src *s, rel **out, xg_src *keep)
{
	int ng = n->ngroup, na = n->naggs, rc = GPMDB_OK;
	xg_out *key = calloc((size_t)ng + 1, sizeof(xg_out)),
	       *args = calloc((size_t)na + 1, sizeof(xg_out));
	gpu_agg *ga = calloc((size_t)na + 1, sizeof(gpu_agg));
	int *anycol = calloc((size_t)na + 1, sizeof(int));
	/* on the heap: exec_node recursion runs through this frame */
	gpu_sortcol *kc = calloc(XG_MAX_KEYS, sizeof(gpu_sortcol));
	gpu_groups g;
	uint32_t m = xg_rows(s), *perm = NULL;
	rel *r = NULL, *anyv = NULL;
	char err[300];

	memset(&g, 0, sizeof(g));
	if (!kc || !key || !args || !ga || !anycol) {
		rc = db_err(x->db, GPMDB_NOMEM, "out of memory");
		goto out;
	}
	if (ng > XG_MAX_KEYS) {
		rc = db_err(x->db, GPMDB_UNSUPPORTED,
			    "GPU aggregate: more than %d keys", XG_MAX_KEYS);
		goto out;
	}
	/* keys, then arguments: the CPU's order of evaluation (and so of
	 * errors) */
	for (int k = 0; k < ng; k++) {
		cexpr *c;
		if ((rc = exec_node_cx(x, n, k, n->group[k], false, n->l, &c)))
			goto out;
		if (xg_direct(s, c, &kc[k].col, &rc))
			continue;
		/* fused: no program runs over rows the filter would drop */
		if (!rc && s->fuse)
			rc = XG_UNFUSED;
		if (rc || (rc = xg_run(s, c, &key[k])) ||
		    (rc = xg_keycol(s, &key[k], &kc[k])))
			goto out;
		/* a computed TEXT key may point into the program's constants,
		 * which a consumer cannot read: its groups come to the host */
		if (n->ty[k].t == BC_T_TEXT && !xg_passthrough(c))
			keep = NULL;
	}
	for (int a = 0; a < na; a++) {
		const aggdef *ad = &n->aggs[a];
		cexpr *c;
		etype t = ad->arg ? expr_type(ad->arg) : et_make(BC_T_INT);
		if (s->fuse && (ad->fn == AGG_ANY || ad->distinct)) {
			rc = XG_UNFUSED;
			goto out;
		}
		if (ad->arg) {
			if ((rc = exec_node_cx(x, n, ng + a, ad->arg, false,
					       n->l, &c)))
				goto out;
			/* a bare column is gathered from its run (text
			 * mapped through the run's segments) */
			if (ad->fn == AGG_ANY ||
			    !xg_direct(s, c, &ga[a].arg, &rc)) {
				if (!rc && s->fuse)
					rc = XG_UNFUSED;
				if (rc || (rc = xg_run(s, c, &args[a])))
					goto out;
				ga[a].arg = args[a].col[0];
			}
		}
		/* DISTINCT: rows repeating their group's (keys, argument)
		 * become NULL arguments, which every aggregate skips; the
		 * first of equal values stays, so sums add in row order as
		 * on the CPU */
		if (ad->distinct && ad->arg) {
			gpu_sortcol *dk =
			    calloc((size_t)ng + 1, sizeof(gpu_sortcol));
			uint8_t *dn = NULL;
			if (!dk) {
				rc =
				    db_err(x->db, GPMDB_NOMEM, "out of memory");
				goto out;
			}
			memcpy(dk, kc, sizeof(gpu_sortcol) * (size_t)ng);
			if (args[a].have)
				rc = xg_keycol(s, &args[a], &dk[ng]);
			else
				dk[ng].col = ga[a].arg;
			if (!rc && (rc = gpu_distinct_nulls(dk, ng + 1, m, &dn,
							    err, sizeof(err))))
				rc = xg_gerr(x, rc, "DISTINCT aggregate", err);
			free(dk);
			if (!rc && dn)
				rc = xg_keep_dev(s, dn);
			if (rc)
				goto out;
			ga[a].arg.nulls = dn;
		}
		bool real = t.t == BC_T_REAL;
		switch (ad->fn) {
		case AGG_COUNT_STAR:
			ga[a].op = GPU_AGG_COUNT_STAR;
			break;
		case AGG_COUNT:
			ga[a].op = GPU_AGG_COUNT;
			break;
		case AGG_SUM:
		case AGG_AVG:
		case AGG_TOTAL:
			ga[a].op = real ? GPU_AGG_SUM_R : GPU_AGG_SUM_I;
			break;
		case AGG_MIN:
			ga[a].op = real ? GPU_AGG_MIN_R : GPU_AGG_MIN_I;
			break;
		case AGG_MAX:
			ga[a].op = real ? GPU_AGG_MAX_R : GPU_AGG_MAX_I;
			break;
		case AGG_ANY: {
			/* the least row number with a value: agg_step's
			 * first non-NULL value of the group */
			gpu_col rn;
			if ((rc = gpu_row_numbers(&ga[a].arg, m, &rn, err,
						  sizeof(err)))) {
				rc = xg_gerr(x, rc, "bare column", err);
				goto out;
			}
			if ((rc = xg_keep_dev(s, rn.data)))
				goto out;
			ga[a].op = GPU_AGG_MIN_I;
			ga[a].arg = rn;
			break;
		}
		}
	}
	if (s->fuse) {
		int declined = 0;
		rc = gpu_fused_agg(s->terms, s->nterms, kc, ng, m, ga, na, &g,
				   &declined, err, sizeof(err));
		if (!rc && declined) {
			/* the general path gives the exact result (or
			 * error) */
			xg_fused_declines++;
			rc = XG_UNFUSED;
			goto out;
		}
	} else {
		if (keep && !s->sagg) {
			/* the operator above reads the groups on the device:
			 * many groups stay there (few come back as usual) */
			gpu_agg_fin *fin = calloc((size_t)na + 1, sizeof(*fin));
			gpu_col *kcols =
			    calloc((size_t)n->ncols + 1, sizeof(gpu_col));
			int on_dev = 0;
			if (!fin || !kcols) {
				free(fin);
				free(kcols);
				rc =
				    db_err(x->db, GPMDB_NOMEM, "out of memory");
				goto out;
			}
			for (int a = 0; a < na; a++)
				xg_agg_fin(&n->aggs[a], &fin[a]);
			rc = gpu_group_agg_keep(kc, ng, m, ga, na, fin, &g,
						kcols, &on_dev, err,
						sizeof(err));
			free(fin);
			if (!rc && on_dev) {
				x->db->gstat.gpu_ops++;
				xg_kept_aggs++;
				for (int a = 0; a < na && !rc; a++)
					if (g.res[a].overflow &&
					    n->aggs[a].fn == AGG_SUM &&
					    n->aggs[a].res.t != BC_T_REAL)
						rc = db_err(x->db, GPMDB_ERROR,
							    "integer overflow");
				int rc2 = xg_agg_to_src(x, n, kcols, g.ngroups,
							key, keep);
				free(kcols);
				rc = rc ? rc : rc2;
				goto out;
			}
			free(kcols);
		} else {
			rc = gpu_group_agg(kc, ng, m, ga, na, &g, err,
					   sizeof(err));
		}
	}
	if (rc) {
		rc = xg_gerr(x, rc, "aggregate", err);
		goto out;
	}
	x->db->gstat.gpu_ops++;
	/* a streamed scan (xg_stream): this window's groups are merged into
	 * s->sagg; the results come after the last window */
	if (s->sagg) {
		rc = xg_sagg_window(x, n, s, key, kc, ga, &g);
		goto out;
	}
	/* the CPU checks every partial sum: so does the GPU */
	for (int a = 0; a < na; a++)
		if (g.res && g.res[a].overflow && n->aggs[a].fn == AGG_SUM &&
		    n->aggs[a].res.t != BC_T_REAL) {
			rc = db_err(x->db, GPMDB_ERROR, "integer overflow");
			goto out;
		}
	uint32_t nout = g.ngroups;
	bool empty_scalar = !ng && nout == 0;
	if (empty_scalar)
		nout = 1;
	if (!(perm = malloc(sizeof(uint32_t) * (nout + 1)))) {
		rc = db_err(x->db, GPMDB_NOMEM, "out of memory");
		goto out;
	}
	if (ng)
		xg_group_order(&g, nout, perm);
	else
		for (uint32_t k = 0; k < nout; k++)
			perm[k] = k;
	if (s->firsts && ng) {
		if (!(*s->firsts = malloc(sizeof(uint32_t) * (nout + 1)))) {
			rc = db_err(x->db, GPMDB_NOMEM, "out of memory");
			goto out;
		}
		for (uint32_t k = 0; k < nout; k++)
			(*s->firsts)[k] = g.first[perm[k]];
	}
	if (!(r = rel_new(x, n->ncols, n->ty)) || (rc = rel_reserve(r, nout))) {
		rc = rc ? rc : x->db->errcode ? x->db->errcode : GPMDB_NOMEM;
		goto out;
	}
	/* several keys, TEXT or REAL ones: read at the groups' first rows */
	if (ng && !g.key && nout &&
	    (rc = xg_group_keys(x, n, s, key, kc, g.first, perm, nout, r)))
		goto out;
	/* bare columns: their values at the rows found above */
	if (!empty_scalar && nout &&
	    (rc = xg_any_values(x, n, s, args, &g, perm, nout, anycol, &anyv)))
		goto out;
	/* many groups and no TEXT to allocate: rows in parallel (15M groups
	 * took most of a second in one thread, TPC-H Q18 at SF10); a row that
	 * fails there runs again in order for the CPU's first error */
	bool par = nout >= 65536;
	for (int c = 0; c < n->ncols && par; c++)
		par = n->ty[c].t != BC_T_TEXT;
	if (par) {
		int bad = 0;
#pragma omp parallel for schedule(static) reduction(| : bad)
		for (int64_t row = 0; row < (int64_t)nout; row++)
			bad |= xg_agg_row(NULL, n, &g, ga, anyv, anycol,
					  empty_scalar, perm, (uint32_t)row,
					  r) != GPMDB_OK;
		par = !bad;
	}
	for (uint32_t row = 0; !par && row < nout && !rc; row++)
		rc = xg_agg_row(x, n, &g, ga, anyv, anycol, empty_scalar, perm,
				row, r);
	if (!rc) {
		r->nrows = nout;
		*out = r;
		r = NULL;
	}
out:
	gpu_group_free(&g);
	for (int k = 0; key && k < ng; k++)
		xg_out_free(&key[k]);
	free(key);
	free(kc);
	for (int a = 0; args && a < na; a++)
		xg_out_free(&args[a]);
	free(args);
	free(ga);
	free(anycol);
	free(perm);
	rel_free(anyv);
	rel_free(r);
	return rc;
}

/* AGG n under an operator that reads its result on the device: its
 * groups become source d's columns (xg_agg's keep: many groups stay on
 * the device; few come back and d reads them as a host source).
 * XG_DECLINE: n runs as usual (exec_node), nothing was done. */

int xg_agg_keep(exec_ctx *x, pnode *n, xg_src *d)
{
	char why[400];
	xg_src s;
	rel *r = NULL;
	int rc;

	if (!xg_agg_keep_ok(n) || xg_decide(x, n, why, sizeof(why)) != XG_GPU)
		return XG_DECLINE;
	/* the fused kernel first, as exec_gpu_rows: few groups, filters
	 * evaluated inside the aggregate (a host result, d reads it as a
	 * host source); it declines many groups */
	rc = xg_fused(x, n, &s, &r);
	if (rc == XG_UNFUSED) {
		xg_src_free(&s);
		rc = xg_prepare(x, n, &s);
		if (!rc)
			rc = xg_agg(x, n, &s, &r, d);
	}
	/* TEXT keys on the device point into buffers of the AGG's source:
	 * d keeps it */
	for (int k = 0; !rc && !r && k < n->ngroup; k++)
		if (n->ty[k].t == BC_T_TEXT) {
			xg_src *own = malloc(sizeof(*own));
			if (!own) {
				rc =
				    db_err(x->db, GPMDB_NOMEM, "out of memory");
				break;
			}
			*own = s;
			memset(&s, 0, sizeof(s));
			d->own = own;
			break;
		}
	xg_src_free(&s);
	/* too large for the device (exec_node streams it), or a GPU error:
	 * the AGG again as its own operator, which falls back (or fails
	 * under gpu_strict) as any other; SQL errors are the query's */
	if (rc == XG_STREAM || (rc && exec_gpu_failed(x->db, rc))) {
		if (rc != XG_STREAM)
			db_clear(x->db);
		rel_free(r);
		return XG_DECLINE;
	}
	if (rc) {
		rel_free(r);
		return rc;
	}
	if (r) {
		d->in = r;
		d->nrows = (uint32_t)r->nrows;
	}
	return GPMDB_OK;
}

/* ---- fused scan-filter-aggregate ---------------------------------------
 *
 * Why: an AGG over FILTERs of a cached scan ran each filter's program
 * over every row (a BOOL column written), compacted the passing rows
 * (CUB select: flags, row ids, the selection written and read again) and
 * ran each argument over the selection before aggregating: at least two
 * passes over the data and a synchronisation per step.  When every
 * filter is a conjunction of comparisons of columns with constants or
 * columns (and IS [NOT] NULL), and the keys and arguments are plain
 * columns, the aggregation kernel evaluates the terms itself
 * (gpu_fused_agg): one pass, no selection.  These programs cannot fail,
 * so no row error can be missed; anything else takes the general path.
 */

/* The register kinds of xg_terms' walk. */
enum { XT_NONE, XT_COL, XT_CONST, XT_CONJ };

/* Column type ct LOAD_COL'ed into a register of type rt, compared as the
 * interpreter compares it: 1 as int64, 2 as double, 0 not fused. */
static int xg_term_fam(int ct, int rt)
{
	switch (rt) {
	case BC_T_INT:
		return ct == BC_COL_INT32 || ct == BC_COL_INT64;
	case BC_T_DEC:
		return ct == BC_COL_DEC;
	case BC_T_DATE:
		return ct == BC_COL_DATE;
	case BC_T_BOOL:
		return ct == BC_COL_BOOL;
	case BC_T_REAL:
		return ct == BC_COL_DOUBLE || ct == BC_COL_FLOAT ? 2 : 0;
	}
	return 0;
}

/* The comparison op's relation (GPU_TERM_EQ..GE) and register type, or
 * -1. */
static int xg_term_rel(int op, int *rt)
{
	static const struct {
		int eq, t;
	} fam[] = {{BC_EQ_I, BC_T_INT},
		   {BC_EQ_R, BC_T_REAL},
		   {BC_EQ_D, BC_T_DEC},
		   {BC_EQ_DT, BC_T_DATE},
		   {BC_EQ_B, BC_T_BOOL}};
	/* each family is EQ, NE, LT, LE, GT, GE, IS, ISNOT, NULLIF */
	for (size_t k = 0; k < sizeof(fam) / sizeof(fam[0]); k++)
		if (op >= fam[k].eq && op <= fam[k].eq + 5) {
			*rt = fam[k].t;
			return op - fam[k].eq;
		}
	return -1;
}

/*
 * Appends the terms of filter program c to t[*nt..] when the program is
 * a conjunction the fused kernel evaluates exactly as the interpreter
 * would; *ok = false (t unchanged) otherwise.  Only the terms the output
 * depends on are kept (a dead comparison cannot fail, so dropping it
 * changes nothing).
 */
static int xg_terms(xg_src *s, cexpr *c, gpu_term *t, int *nt, bool *ok)
{
	const bc_program *p = c->prog;
	uint8_t kind[BC_MAX_REGS], cvt[BC_MAX_REGS], cscale[BC_MAX_REGS];
	uint16_t col[BC_MAX_REGS]; /* XT_COL: the source column */
	bc_imm cval[BC_MAX_REGS];  /* XT_CONST: the value CONST makes */
	uint32_t mask[BC_MAX_REGS];
	gpu_term cand[32];
	int nc = 0, out = -1, rc;

	*ok = false;
	memset(kind, 0, sizeof(kind));
	if (p->noutputs != 1 || p->nregs > BC_MAX_REGS)
		return GPMDB_OK;
	for (int k = 0; k < c->ninputs; k++)
		if (c->in[k].kind != IN_COL || c->in[k].col < 0 ||
		    c->in[k].col >= s->ncols)
			return GPMDB_OK;
	for (uint32_t pc = 0; pc < p->ninsns; pc++) {
		const bc_insn *in = &p->insns[pc];
		int d = in->dst, a = in->a, b = in->b, rt = 0, cmp;
		if (in->op == BC_NOP)
			continue;
		if (in->op == BC_OUTPUT) {
			out = a;
			continue;
		}
		if (d >= BC_MAX_REGS || a >= BC_MAX_REGS || b >= BC_MAX_REGS)
			return GPMDB_OK;
		kind[d] = XT_NONE;
		switch (in->op) {
		case BC_LOAD_COL:
			if (a >= c->ninputs)
				return GPMDB_OK;
			kind[d] = XT_COL;
			col[d] = (uint16_t)c->in[a].col;
			cvt[d] = GPU_CVT_NONE;
			continue;
		case BC_CONST: {
			/* the value as gvm_row's CONST makes it */
			bc_imm v = in->imm;
			int ty = p->rtype[d].type;
			if (ty == BC_T_NULL || ty == BC_T_TEXT)
				return GPMDB_OK;
			if (ty == BC_T_BOOL)
				v.i = (uint8_t)v.i;
			else if (ty == BC_T_DATE)
				v.i = (int32_t)v.i;
			kind[d] = XT_CONST;
			cval[d] = v;
			continue;
		}
		case BC_I2D: {
			/* a constant made decimal (m >= 10): folded as the
			 * interpreter computes it; a failure is left to the
			 * general path */
			int64_t v;
			if (kind[a] != XT_CONST ||
			    val_i64_to_dec(cval[a].i, p->rtype[d].scale, &v) ||
			    !val_dec_fits(v, p->rtype[d].prec))
				return GPMDB_OK;
			kind[d] = XT_CONST;
			cval[d].i = v;
			continue;
		}
		case BC_I2R:
		case BC_D2R:
			/* a column compared as REAL (k = v, m <= 500.5) */
			if (kind[a] != XT_COL || cvt[a] != GPU_CVT_NONE ||
			    p->rtype[a].type !=
				(in->op == BC_I2R ? BC_T_INT : BC_T_DEC))
				return GPMDB_OK;
			kind[d] = XT_COL;
			col[d] = col[a];
			cvt[d] = in->op == BC_I2R ? GPU_CVT_I2R : GPU_CVT_D2R;
			cscale[d] = p->rtype[a].scale;
			continue;
		case BC_MOVE:
			kind[d] = kind[a];
			col[d] = col[a];
			cvt[d] = cvt[a];
			cscale[d] = cscale[a];
			cval[d] = cval[a];
			mask[d] = mask[a];
			continue;
		case BC_AND:
			if (kind[a] != XT_CONJ || kind[b] != XT_CONJ)
				return GPMDB_OK;
			kind[d] = XT_CONJ;
			mask[d] = mask[a] | mask[b];
			continue;
		}
		if (nc == 32)
			return GPMDB_OK;
		gpu_term *tm = &cand[nc];
		memset(tm, 0, sizeof(*tm));
		if (in->op == BC_IS_NULL || in->op == BC_NOT_NULL) {
			if (kind[a] != XT_COL)
				return GPMDB_OK;
			if ((rc = xg_load(s, col[a])))
				return rc;
			tm->op = in->op == BC_IS_NULL ? GPU_TERM_ISNULL
						      : GPU_TERM_NOTNULL;
			tm->a = s->cols[col[a]].col;
		} else if ((cmp = xg_term_rel(in->op, &rt)) >= 0) {
			int ra = a, rb = b;
			if (kind[ra] == XT_CONST && kind[rb] == XT_COL) {
				/* 5 < k is k > 5 */
				static const int mirror[] = {
				    GPU_TERM_EQ, GPU_TERM_NE, GPU_TERM_GT,
				    GPU_TERM_GE, GPU_TERM_LT, GPU_TERM_LE};
				ra = b;
				rb = a;
				cmp = mirror[cmp];
			}
			if (kind[ra] != XT_COL ||
			    (kind[rb] != XT_COL && kind[rb] != XT_CONST) ||
			    p->rtype[ra].type != rt || p->rtype[rb].type != rt)
				return GPMDB_OK;
			int opnd[2] = {ra, rb};
			for (int q = 0; q < 2; q++) {
				int r = opnd[q];
				if (q == 1 && kind[r] == XT_CONST) {
					tm->k = cval[r];
					break;
				}
				if ((rc = xg_load(s, col[r])))
					return rc;
				const gpu_col *g = &s->cols[col[r]].col;
				/* the column as LOAD_COL (and I2R/D2R) give
				 * it to a register of type rt */
				int fam = cvt[r] == GPU_CVT_I2R
					      ? xg_term_fam(g->type, BC_T_INT)
					  : cvt[r] == GPU_CVT_D2R
					      ? xg_term_fam(g->type, BC_T_DEC)
					      : xg_term_fam(g->type, rt);
				if (!fam)
					return GPMDB_OK;
				if (q == 0) {
					tm->a = *g;
					tm->acvt = cvt[r];
					tm->ascale = cscale[r];
				} else {
					tm->bcol = 1;
					tm->b = *g;
					tm->bcvt = cvt[r];
					tm->bscale = cscale[r];
				}
			}
			tm->op = cmp;
			tm->real = rt == BC_T_REAL;
		} else {
			return GPMDB_OK;
		}
		tm->a.sel = NULL;
		tm->b.sel = NULL;
		kind[d] = XT_CONJ;
		mask[d] = 1u << nc;
		nc++;
	}
	if (out < 0 || out >= BC_MAX_REGS)
		return GPMDB_OK;
	if (kind[out] == XT_COL && cvt[out] == GPU_CVT_NONE &&
	    p->rtype[out].type == BC_T_BOOL) {
		/* WHERE b: true when not NULL and != 0 */
		if ((rc = xg_load(s, col[out])))
			return rc;
		if (s->cols[col[out]].col.type != BC_COL_BOOL || nc == 32)
			return GPMDB_OK;
		memset(&cand[nc], 0, sizeof(cand[nc]));
		cand[nc].op = GPU_TERM_NE;
		cand[nc].a = s->cols[col[out]].col;
		cand[nc].a.sel = NULL;
		kind[out] = XT_CONJ;
		mask[out] = 1u << nc;
		nc++;
	}
	if (kind[out] != XT_CONJ)
		return GPMDB_OK;
	int need = 0;
	for (int k = 0; k < nc; k++)
		need += (mask[out] >> k) & 1;
	if (*nt + need > GPU_FUSE_MAXTERMS)
		return GPMDB_OK;
	for (int k = 0; k < nc; k++)
		if ((mask[out] >> k) & 1)
			t[(*nt)++] = cand[k];
	*ok = true;
	return GPMDB_OK;
}

/*
 * n (an AGG) with its filters fused into the aggregate kernel, when its
 * source is a cached table scan (not streamed) and every filter, key and
 * argument fits (xg_terms, xg_agg).  XG_UNFUSED: the general path runs
 * (s is freed by the caller either way).
 */
int xg_fused(exec_ctx *x, pnode *n, xg_src *s, rel **out)
{
	pnode *src;
	gpu_term *t;
	int nf = 0, nt = 0, rc;
	bool fits = true, ok = true;
	char why[300];

	memset(s, 0, sizeof(*s));
	if (n->kind != PN_AGG)
		return XG_UNFUSED;
	src = xg_source(x, n, why, sizeof(why));
	if (!src || src->kind != PN_SCAN ||
	    xg_scan_rows(x->db, src) > UINT32_MAX)
		return XG_UNFUSED;
	for (pnode *f = n->l; f != src; f = f->l)
		nf++;
	/* without filters a grouped aggregate reads its columns directly
	 * already (the same hash kernel) */
	if (!nf && n->ngroup)
		return XG_UNFUSED;
	if ((rc = xg_fits(x, n, src, &fits)))
		return rc;
	if (!fits)
		return XG_UNFUSED;
	s->x = x;
	s->scan = src;
	s->nrows = (uint32_t)xg_scan_rows(x->db, src);
	s->ncols = src->ncols;
	if (!(s->cols = calloc((size_t)s->ncols + 1, sizeof(xg_col))) ||
	    !(t = calloc(GPU_FUSE_MAXTERMS, sizeof(gpu_term))))
		return db_err(x->db, GPMDB_NOMEM, "out of memory");
	if ((rc = xg_keep_host(s, t)))
		return rc;
	for (pnode *f = n->l; f != src && ok; f = f->l) {
		cexpr *c;
		if ((rc = exec_node_cx(x, f, 0, f->pred, f->post, f->l, &c)) ||
		    (rc = xg_terms(s, c, t, &nt, &ok)))
			return rc;
	}
	if (!ok)
		return XG_UNFUSED;
	s->fuse = true;
	s->terms = t;
	s->nterms = nt;
	if ((rc = xg_agg(x, n, s, out, NULL)))
		return rc;
	xg_fused_aggs++;
	x->db->gstat.gpu_ops += (uint64_t)nf; /* the filters ran too */
	return GPMDB_OK;
}
