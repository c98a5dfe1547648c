/*
 * exec_gpu_src.c - a GPU operator's source on the device (xg_src): the
 * columns of a cached table scan or of an uploaded host relation, a
 * program run over the source's rows (xg_run), the results fetched to
 * the host (xg_fetch), and the row windows of a scan too large for the
 * column cache (xg_windows).
 */
#include "exec_gpu_int.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

/* ---- device inputs ---------------------------------------------------- */

/* Fused aggregates run and declined (gpu_stats, process-wide). */
uint64_t xg_fused_aggs, xg_fused_declines;
/* GROUP BY results kept on the device for the operator above
 * (gpu_stats, process-wide). */
uint64_t xg_kept_aggs;
/* Runs that copied several text columns into one buffer (a TEXT
 * output) and the bytes copied (gpu_stats, process-wide). */
uint64_t xg_text_merges, xg_text_merged_bytes;

int xg_gerr(exec_ctx *x, int rc, const char *op, const char *msg)
{
	/* SQL errors of rows keep the CPU's words; the rest name the GPU */
	if (rc == GPMDB_ERROR)
		return db_err(x->db, rc, "%s", msg);
	return db_err(x->db, rc, "GPU %s: %s", op, msg);
}

int xg_keep_dev(xg_src *s, void *p)
{
	if (s->ndev == 512) {
		gpu_free(p, NULL, 0);
		return db_err(s->x->db, GPMDB_NOMEM, "too many GPU buffers");
	}
	s->dev[s->ndev++] = p;
	return GPMDB_OK;
}

int xg_keep_host(xg_src *s, void *p)
{
	if (s->nhost == 512) {
		free(p);
		return db_err(s->x->db, GPMDB_NOMEM, "too many buffers");
	}
	s->host[s->nhost++] = p;
	return GPMDB_OK;
}

static void xg_outs_free(struct xg_out *o, int n);

void xg_src_free(xg_src *s)
{
	xg_outs_free(s->outs, s->nouts);
	if (s->own) {
		xg_src_free(s->own);
		free(s->own);
	}
	for (int i = 0; i < s->nleaf; i++) {
		if (s->leaf[i].src && !s->leaf[i].borrowed) {
			xg_src_free(s->leaf[i].src);
			free(s->leaf[i].src);
		}
		gpu_free(s->leaf[i].idx, NULL, 0);
	}
	free(s->leaf);
	for (int i = 0; i < s->ndev; i++)
		gpu_free(s->dev[i], NULL, 0);
	for (int i = 0; i < s->nhost; i++)
		free(s->host[i]);
	gpu_free(s->sel, NULL, 0);
	free(s->cols);
	if (!s->in_borrowed)
		rel_free(s->in);
	memset(s, 0, sizeof(*s));
}

/* Uploads column c of the host source. */
static int xg_upload_rel(xg_src *s, int c, xg_col *o)
{
	exec_ctx *x = s->x;
	const rcol *rc_ = &s->in->cols[c];
	uint64_t n = s->in->nrows;
	char err[300];
	void *d;
	int rc;

	o->col.type = (uint8_t)rel_vec_type(rc_->ty.t);
	o->col.prec = rc_->ty.prec;
	o->col.scale = rc_->ty.scale;
	if (o->col.type == VEC_NULL || !n)
		return GPMDB_OK;
	if (o->col.type == BC_COL_TEXT) {
		/* strings packed into one host buffer: device offsets map back
		 * to it */
		uint64_t total = 0, off = 0;
		const vec_str *v = rc_->data;
		for (uint64_t i = 0; i < n; i++)
			if (!rc_->nulls[i])
				total += v[i].len;
		if (total >= 0x80000000ull)
			return db_err(x->db, GPMDB_UNSUPPORTED,
				      "GPU input: text column of %llu bytes "
				      "(2 GiB per GPU run)",
				      (unsigned long long)total);
		char *hb = malloc(total + 1);
		gpu_str *hs = malloc(sizeof(gpu_str) * n);
		gcache_seg *seg = malloc(sizeof(gcache_seg));
		if (!hb || !hs || !seg) {
			free(hb);
			free(hs);
			free(seg);
			return db_err(x->db, GPMDB_NOMEM, "out of memory");
		}
		for (uint64_t i = 0; i < n; i++) {
			uint32_t l = rc_->nulls[i] ? 0 : v[i].len;
			if (l)
				memcpy(hb + off, v[i].ptr, l);
			hs[i].off = (uint32_t)off;
			hs[i].len = l;
			off += l;
		}
		seg->dev_off = 0;
		seg->host = hb;
		if ((rc = xg_keep_host(s, hb)) || (rc = xg_keep_host(s, seg))) {
			free(hs);
			return rc;
		}
		void *dt;
		if ((rc = gpu_alloc(&dt, total + 1, err, sizeof(err))) ||
		    (rc = xg_keep_dev(s, dt)) ||
		    (rc = gpu_upload(dt, hb, total, err, sizeof(err))) ||
		    (rc = gpu_alloc(&d, sizeof(gpu_str) * n + n, err,
				    sizeof(err))) ||
		    (rc = xg_keep_dev(s, d)) ||
		    (rc = gpu_upload(d, hs, sizeof(gpu_str) * n, err,
				     sizeof(err)))) {
			free(hs);
			return x->db->errcode == rc
				   ? rc
				   : xg_gerr(x, rc, "upload", err);
		}
		free(hs);
		o->text = dt;
		o->ntext = total;
		o->seg = seg;
		o->nseg = 1;
		o->col.data = d;
		o->col.nulls = (uint8_t *)d + sizeof(gpu_str) * n;
	} else {
		size_t w = rel_width(rc_->ty.t);
		if ((rc = gpu_alloc(&d, w * n + n, err, sizeof(err))) ||
		    (rc = xg_keep_dev(s, d)) ||
		    (rc = gpu_upload(d, rc_->data, w * n, err, sizeof(err))))
			return x->db->errcode == rc
				   ? rc
				   : xg_gerr(x, rc, "upload", err);
		o->col.data = d;
		o->col.nulls = (uint8_t *)d + w * n;
	}
	if ((rc = gpu_upload(o->col.nulls, rc_->nulls, n, err, sizeof(err))))
		return xg_gerr(x, rc, "upload", err);
	x->db->gstat.bytes_uploaded +=
	    n * (rel_width(rc_->ty.t) + 1) + o->ntext;
	return GPMDB_OK;
}

/*
 * Registers the pool mapping with CUDA once per mapping, so that the
 * column cache DMAs from it at bus speed (unregistered: about 1.3 GB/s
 * was measured).  The range is the connection's db->gpu_reg_base, shared
 * with the GPU writes (batch_gpu.c), which unregister it at close.  A
 * refusal (a pool on ext4: "invalid argument") is remembered for that
 * mapping and reported by gpu_stats (cache_pool_registered 0,
 * cache_register_failures, a row "cache_upload_staged_because: <the
 * driver's words>"); the cache then uploads through pinned staging.
 */
static void xg_register(gpmdb *db)
{
	static const void *fail_base;
	static uint64_t fail_len;
	uint64_t len = 0;
	void *base = stg_pool_base(db->pool, &len);
	struct timespec t0, t1;
	char e[400];
	int rc;

	if (!base || !len)
		return;
	if (db->gpu_reg_base == base && db->gpu_reg_len == len &&
	    gpu_pm_is_registered(base, len))
		return;
	if (fail_base == base && fail_len == len)
		return;
	{
		/* Pinning the whole pool took seconds at SF10 (issue 17) for
		 * a first query that reads a fraction of it: columns go up
		 * through the pinned staging ring instead, unless asked */
		const char *pin = getenv("GPMDB_GPU_PIN_POOL");
		if (!pin || !*pin || !strcmp(pin, "0")) {
			gcache_note_register(0, 0,
					     "the pool is not pinned whole "
					     "(GPMDB_GPU_PIN_POOL=1 does)");
			fail_base = base;
			fail_len = len;
			return;
		}
	}
	if (stg_pool_writes_private(db->pool) && !stg_pool_readonly(db->pool)) {
		/* msync mode maps the pool privately and drops private pages
		 * after commits (storage/wal.c): pinned pages would go stale,
		 * and pinning would copy every page */
		gcache_note_register(0, 0,
				     "msync mode: the pool is mapped privately "
				     "and written back at commit");
		fail_base = base;
		fail_len = len;
		return;
	}
	if (db->gpu_reg_base) {
		/* remapped: the old range goes (it may be unmapped already;
		 * a refusal only keeps its pins until the process ends) */
		(void)gpu_pm_unregister(db->gpu_reg_base, e, sizeof(e));
		db->gpu_reg_base = NULL;
		db->gpu_reg_len = 0;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	rc = gpu_pm_register(base, len, e, sizeof(e));
	clock_gettime(CLOCK_MONOTONIC, &t1);
	gcache_note_register(rc == GPMDB_OK,
			     (uint64_t)((t1.tv_sec - t0.tv_sec) * 1000000000LL +
					(t1.tv_nsec - t0.tv_nsec)),
			     rc == GPMDB_OK ? "" : e);
	if (rc == GPMDB_OK) {
		db->gpu_reg_base = base;
		db->gpu_reg_len = len;
	} else {
		fail_base = base;
		fail_len = len;
	}
}

int xg_load(xg_src *s, int c)
{
	xg_col *o = &s->cols[c];
	exec_ctx *x = s->x;
	char err[300];
	int rc;

	if (o->loaded)
		return GPMDB_OK;
	if (s->nleaf) {
		/* a joined source: the leaf's column, read at the pairs */
		int j = s->nleaf - 1;
		while (j > 0 && s->leaf[j].col0 > c)
			j--;
		xg_src *ls = s->leaf[j].src;
		int lc = c - s->leaf[j].col0;
		if ((rc = xg_load(ls, lc)))
			return rc;
		*o = ls->cols[lc];
		o->col.sel = s->leaf[j].idx;
		return GPMDB_OK;
	}
	if (s->scan) {
		pnode *sc = s->scan;
		gcache_colref ref;
		/* the table column (plan_prune may have dropped some) */
		int tc = sc->tcol ? sc->tcol[c] : c;
		bool rid = tc >= sc->ntcols;
		xg_register(x->db);
		if (s->win) {
			/* a streamed window: its rows alone, freed with s */
			void *dev;
			gcache_seg *seg;
			rc = gcache_column_range(
			    x->db->pool, sc->table_id, rid ? GCACHE_ROWID : tc,
			    rid ? 0 : sc->stype[tc], s->win->row0,
			    s->win->nrows, &ref, &dev, &seg, err, sizeof(err));
			if (rc)
				return xg_gerr(x, rc, "column window", err);
			if ((rc = xg_keep_dev(s, dev))) {
				free(seg);
				return rc;
			}
			if (seg && (rc = xg_keep_host(s, seg)))
				return rc;
		} else {
			rc = gcache_column(
			    x->db->pool, x->db->gpu_owner, sc->table_id,
			    rid ? GCACHE_ROWID : tc, rid ? 0 : sc->stype[tc],
			    &ref, err, sizeof(err));
			if (rc)
				return xg_gerr(x, rc, "column cache", err);
		}
		if (ref.nrows != s->nrows)
			return db_err(x->db, GPMDB_INTERNAL,
				      "GPU column cache: %llu rows, expected "
				      "%u",
				      (unsigned long long)ref.nrows, s->nrows);
		if (!s->win && ref.hit)
			x->db->gstat.cache_hits++;
		else if (!s->win)
			x->db->gstat.cache_misses++;
		o->col = ref.col;
		o->col.prec = sc->ty[c].prec;
		o->col.scale = sc->ty[c].scale;
		o->text = ref.text;
		o->ntext = ref.ntext;
		o->seg = ref.seg;
		o->nseg = ref.nseg;
	} else if ((rc = xg_upload_rel(s, c, o))) {
		return rc;
	}
	o->ndata = s->nrows;
	o->loaded = true;
	return GPMDB_OK;
}

/* ---- running a program over the source ------------------------------ */

/* An array of n runs, and the array */
static void xg_outs_free(struct xg_out *o, int n)
{
	for (int i = 0; o && i < n; i++)
		xg_out_free(&o[i]);
	free(o);
}

void xg_out_free(xg_out *o)
{
	if (o->have)
		gpu_vm_free_outputs(o->p, o->col);
	free(o->p);
	free(o->seg);
	memset(o, 0, sizeof(*o));
}

/*
 * Input k of c, an uncorrelated subquery (xg_expr_ok lets no other kind
 * through), becomes a constant of p, the program copy the run uses: its
 * value is one for the statement and computed on the host by the CPU's
 * exec_subquery (once per statement, the same NULL for no row, the same
 * conversion), so the GPU needs no input column for it and the value
 * sits in constant memory with the program.  Not computed when the run
 * has no rows: the CPU evaluates nothing then either (a subquery error
 * stays unreported on both).
 */
static int xg_bind_subq(xg_src *s, cexpr *c, int k, bc_program *p)
{
	exec_ctx *x = s->x;
	const bc_rtype *it = &p->in_type[k];
	sval v;
	int rc;

	if (!cx_input_const(c, k))
		return db_err(x->db, GPMDB_INTERNAL,
			      "input %d of a GPU expression is a correlated "
			      "subquery",
			      k);
	if (!(s->sel ? s->nsel : s->nrows))
		return bc_bind_input(p, k, 1, (bc_imm){0}, NULL, 0)
			   ? db_err(x->db, GPMDB_INTERNAL, "%s", p->errmsg)
			   : GPMDB_OK;
	if ((rc = cx_input_value(x, c, k, &v)))
		return rc;
	if (v.t != BC_T_NULL && (rel_vec_type(v.t) != it->type ||
				 (v.t == BC_T_DEC && v.scale != it->scale)))
		return db_err(x->db, GPMDB_INTERNAL,
			      "a subquery value of type %s for a GPU input "
			      "of type %d",
			      bc_type_name(v.t), it->type);
	bc_imm imm = {0};
	if (v.t == BC_T_REAL)
		imm.r = v.u.r;
	else if (v.t != BC_T_TEXT && v.t != BC_T_NULL)
		imm.i = v.u.i;
	if (bc_bind_input(p, k, v.t == BC_T_NULL, imm,
			  v.t == BC_T_TEXT ? v.u.s.ptr : NULL,
			  v.t == BC_T_TEXT ? v.u.s.len : 0))
		/* a long TEXT value: the program's constant text is full */
		return db_err(x->db, GPMDB_UNSUPPORTED,
			      "GPU expression: a subquery's value (%s) does "
			      "not fit the program (%s)",
			      bc_type_name(v.t), p->errmsg);
	return GPMDB_OK;
}

int xg_run(xg_src *s, cexpr *c, xg_out *o)
{
	exec_ctx *x = s->x;
	gpu_col in[BC_MAX_INPUTS];
	int tcols[BC_MAX_INPUTS], nt = 0, rc;
	const char *text = NULL, *itext[BC_MAX_INPUTS] = {0};
	uint64_t ntext = 0;
	bool tout = false;
	char err[400];

	memset(o, 0, sizeof(*o));
	if (!(o->p = malloc(sizeof(bc_program))))
		return db_err(x->db, GPMDB_NOMEM, "out of memory");
	memcpy(o->p, c->prog, sizeof(bc_program));
	for (int k = 0; k < c->ninputs; k++) {
		int col = c->in[k].col;
		if (c->in[k].kind == IN_SUBQ) {
			if ((rc = xg_bind_subq(s, c, k, o->p)))
				return rc;
			memset(&in[k], 0, sizeof(in[k]));
			in[k].type = VEC_NULL; /* never read: see above */
			continue;
		}
		if ((rc = xg_load(s, col)))
			return rc;
		in[k] = s->cols[col].col;
		/* a joined source's columns carry their leaf's rows */
		if (!s->nleaf)
			in[k].sel = s->sel;
		/* LOAD_COL widens INT32 and FLOAT as the scan would: read the
		 * cached storage arrays as they are */
		if (in[k].type == BC_COL_INT32 &&
		    o->p->in_type[k].type == BC_COL_INT64)
			o->p->in_type[k].type = BC_COL_INT32;
		if (in[k].type == BC_COL_FLOAT &&
		    o->p->in_type[k].type == BC_COL_DOUBLE)
			o->p->in_type[k].type = BC_COL_FLOAT;
		if (in[k].type == BC_COL_TEXT) {
			int j;
			for (j = 0; j < nt && tcols[j] != col; j++)
				;
			if (j == nt)
				tcols[nt++] = col;
		}
	}
	for (uint32_t k = 0; k < o->p->noutputs; k++)
		tout |= o->p->rtype[o->p->out_reg[k]].type == BC_T_TEXT;
	if (nt > 1 && !tout) {
		/* No TEXT output, so nothing needs one buffer for the run:
		 * each input reads its own column's text, no copy */
		for (int k = 0; k < c->ninputs; k++)
			if (in[k].type == BC_COL_TEXT)
				itext[k] = s->cols[c->in[k].col].text;
		nt = 0;
	}
	/* With a TEXT output, one text buffer per run (output offsets are
	 * into it, and o->seg maps them back): one column's own, or
	 * several copied together with their references rebased. */
	uint32_t nseg = 0;
	for (int j = 0; j < nt; j++)
		nseg += s->cols[tcols[j]].nseg;
	if (nseg && !(o->seg = calloc(nseg, sizeof(gcache_seg))))
		return db_err(x->db, GPMDB_NOMEM, "out of memory");
	if (nt == 1) {
		xg_col *tc = &s->cols[tcols[0]];
		text = tc->text;
		ntext = tc->ntext;
		memcpy(o->seg, tc->seg, sizeof(gcache_seg) * tc->nseg);
		o->nseg = tc->nseg;
	} else if (nt > 1) {
		uint64_t total = 0, base = 0;
		char *buf;
		for (int j = 0; j < nt; j++)
			total += s->cols[tcols[j]].ntext;
		if (total >= 0x80000000ull)
			return db_err(x->db, GPMDB_UNSUPPORTED,
				      "GPU input: text columns of %llu bytes "
				      "together (2 GiB per GPU run)",
				      (unsigned long long)total);
		if ((rc = gpu_alloc((void **)&buf, total + 1, err,
				    sizeof(err))) ||
		    (rc = xg_keep_dev(s, buf)))
			return xg_gerr(x, rc, "text", err);
		for (int j = 0; j < nt; j++) {
			xg_col *tc = &s->cols[tcols[j]];
			uint64_t n = tc->ndata;
			gpu_str *copy;
			if ((rc = gpu_copy(buf + base, tc->text, tc->ntext, err,
					   sizeof(err))) ||
			    (rc = gpu_alloc((void **)&copy,
					    n * sizeof(gpu_str) + 1, err,
					    sizeof(err))) ||
			    (rc = xg_keep_dev(s, copy)) ||
			    (rc = gpu_copy(copy, tc->col.data,
					   n * sizeof(gpu_str), err,
					   sizeof(err))) ||
			    (rc = gpu_str_rebase(copy, n, (uint32_t)base, err,
						 sizeof(err))))
				return xg_gerr(x, rc, "text", err);
			for (int k = 0; k < c->ninputs; k++)
				if (c->in[k].kind == IN_COL &&
				    c->in[k].col == tcols[j])
					in[k].data = copy;
			for (uint32_t q = 0; q < tc->nseg; q++) {
				o->seg[o->nseg] = tc->seg[q];
				o->seg[o->nseg++].dev_off += base;
			}
			base += tc->ntext;
		}
		text = buf;
		ntext = total;
		xg_text_merges++;
		xg_text_merged_bytes += total;
	}
	o->dtext = text;
	o->ntext = ntext;
	rc = gpu_vm_run(o->p, in, c->ninputs, s->sel ? s->nsel : s->nrows, text,
			ntext, itext, o->col, err, sizeof(err));
	if (rc)
		return xg_gerr(x, rc, "expression", err);
	o->have = true;
	return GPMDB_OK;
}

/* A TEXT output value as host bytes. */
static const char *xg_host_text(const xg_out *o, gpu_str v)
{
	if (v.off & GPU_STR_CONST)
		return o->p->text + (v.off & ~GPU_STR_CONST);
	uint32_t lo = 0, hi = o->nseg;
	while (hi - lo > 1) { /* the last segment starting at or before off */
		uint32_t mid = (lo + hi) / 2;
		if (o->seg[mid].dev_off <= v.off)
			lo = mid;
		else
			hi = mid;
	}
	return o->seg[lo].host + (v.off - o->seg[lo].dev_off);
}

/* Output 0 of o as a key column for gpu_sort / gpu_group_agg: TEXT
 * keys get the run's text buffer and a device copy of the program's
 * constant text (values with GPU_STR_CONST point there). */
int xg_keycol(xg_src *s, const xg_out *o, gpu_sortcol *k)
{
	char err[300];
	void *d;
	int rc;

	memset(k, 0, sizeof(*k));
	k->col = o->col[0];
	if (k->col.type != BC_COL_TEXT)
		return GPMDB_OK;
	k->text = o->dtext;
	if (!o->p || !o->p->ntext)
		return GPMDB_OK;
	if ((rc = gpu_alloc(&d, o->p->ntext, err, sizeof(err))) ||
	    (rc = xg_keep_dev(s, d)) ||
	    (rc = gpu_upload(d, o->p->text, o->p->ntext, err, sizeof(err))))
		return s->x->db->errcode == rc ? rc
					       : xg_gerr(s->x, rc, "text", err);
	k->ctext = d;
	return GPMDB_OK;
}

/* Downloads output k of n runs (one transfer for all) and appends them
 * as columns cols[k] of r. */
int xg_fetch(exec_ctx *x, xg_out *outs, int nout, uint32_t n, rel *r)
{
	void *dst[2 * 256] = {0};
	const void *src[2 * 256] = {0};
	size_t len[2 * 256] = {0};
	void *hb[256];
	int rc = GPMDB_OK, k;
	char err[300];

	if (nout > 256)
		return db_err(x->db, GPMDB_UNSUPPORTED,
			      "GPU output: more than 256 columns");
	memset(hb, 0, sizeof(hb));
	for (k = 0; k < nout; k++) {
		gpu_col *c = &outs[k].col[0];
		size_t w = c->type == BC_COL_TEXT    ? sizeof(gpu_str)
			   : c->type == BC_COL_DATE  ? 4
			   : c->type == BC_COL_INT32 ? 4
			   : c->type == BC_COL_FLOAT ? 4
			   : c->type == BC_COL_BOOL  ? 1
			   : c->type == VEC_NULL     ? 0
						     : 8;
		if (!(hb[k] = malloc(w * n + n + 1))) {
			rc = db_err(x->db, GPMDB_NOMEM, "out of memory");
			goto out;
		}
		dst[2 * k] = hb[k];
		src[2 * k] = c->data;
		len[2 * k] = w * n;
		dst[2 * k + 1] = (char *)hb[k] + w * n;
		src[2 * k + 1] = c->nulls;
		/* no NULL bytes (a gathered key column without NULLs,
		 * gpu_gather): nothing to download, every row not NULL */
		len[2 * k + 1] = c->type == VEC_NULL || !c->nulls ? 0 : n;
		if (!c->nulls && c->type != VEC_NULL)
			memset(dst[2 * k + 1], 0, n + 1);
	}
	if ((rc = gpu_download_many(2 * nout, dst, src, len, err,
				    sizeof(err)))) {
		rc = xg_gerr(x, rc, "download", err);
		goto out;
	}
	for (k = 0; k < nout; k++)
		x->db->gstat.bytes_downloaded += len[2 * k] + len[2 * k + 1];
	if ((rc = rel_reserve(r, n)))
		goto out;
	for (k = 0; k < nout && !rc; k++) {
		gpu_col *c = &outs[k].col[0];
		vec v;
		if (c->type == VEC_NULL) { /* every row NULL, values zero */
			rcol *d = &r->cols[k];
			memset(d->nulls, 1, n);
			memset(d->data, 0, n * rel_width(d->ty.t));
			continue;
		}
		memset(&v, 0, sizeof(v));
		v.type = c->type;
		v.prec = c->prec;
		v.scale = c->scale;
		v.count = n;
		v.nulls = (uint8_t *)dst[2 * k + 1];
		v.v.data = hb[k];
		if (c->type == BC_COL_TEXT) {
			gpu_str *gs = hb[k];
			vec_str *vs = malloc(sizeof(vec_str) * n + 1);
			if (!vs) {
				rc =
				    db_err(x->db, GPMDB_NOMEM, "out of memory");
				break;
			}
			for (uint32_t i = 0; i < n; i++) {
				gpu_str g = gs[i];
				vs[i].len = v.nulls[i] ? 0 : g.len;
				vs[i].ptr =
				    v.nulls[i] ? "" : xg_host_text(&outs[k], g);
			}
			v.v.str = vs;
			rc = rel_put_vec(r, k, 0, &v, n);
			free(vs);
		} else {
			/* values of NULL rows are unspecified on the GPU;
			 * the CPU's are zero */
			size_t w = len[2 * k] / (n ? n : 1);
			if (c->type != VEC_NULL)
				for (uint32_t i = 0; i < n; i++)
					if (v.nulls[i])
						memset((char *)hb[k] + i * w, 0,
						       w);
			rc = rel_put_vec(r, k, 0, &v, n);
		}
	}
	if (!rc)
		r->nrows = n;
out:
	for (k = 0; k < nout; k++)
		free(hb[k]);
	return rc;
}

/* ---- streamed scans: tables whose columns do not fit the cache ------- */

/* The columns of src (a SCAN) that n's chain reads: need[c] set. */
static void xg_mark_cx(const cexpr *c, bool *need, int ncols)
{
	for (int k = 0; k < c->ninputs; k++)
		if (c->in[k].kind == IN_COL && c->in[k].col >= 0 &&
		    c->in[k].col < ncols)
			need[c->in[k].col] = true;
}

static int xg_need_cols(exec_ctx *x, pnode *n, pnode *src, bool *need,
			bool filters)
{
	cexpr *c;
	int rc;

	for (pnode *f = n->kind == PN_FILTER ? n : n->l;
	     filters && f && f != src; f = f->l) {
		if ((rc = exec_node_cx(x, f, 0, f->pred, f->post, f->l, &c)))
			return rc;
		xg_mark_cx(c, need, src->ncols);
	}
	if (n->kind == PN_PROJECT) {
		for (int i = 0; i < n->nexprs; i++) {
			if ((rc = exec_node_cx(x, n, i, n->exprs[i], n->post,
					       n->l, &c)))
				return rc;
			xg_mark_cx(c, need, src->ncols);
		}
	} else if (n->kind == PN_AGG) {
		for (int k = 0; k < n->ngroup; k++) {
			if ((rc = exec_node_cx(x, n, k, n->group[k], false,
					       n->l, &c)))
				return rc;
			xg_mark_cx(c, need, src->ncols);
		}
		for (int a = 0; a < n->naggs; a++) {
			if (!n->aggs[a].arg)
				continue;
			if ((rc =
				 exec_node_cx(x, n, n->ngroup + a,
					      n->aggs[a].arg, false, n->l, &c)))
				return rc;
			xg_mark_cx(c, need, src->ncols);
		}
	} else {
		/* a FILTER whose consumer is on the CPU returns every
		 * column its parent reads */
		for (int k = 0; k < n->ncols && k < src->ncols; k++)
			need[k] |= !n->unread || !n->unread[k];
	}
	return GPMDB_OK;
}

/* Column c of scan sc as the cache names it. */
static void xg_tcol(const pnode *sc, int c, int *col, int *stype)
{
	int tc = sc->tcol ? sc->tcol[c] : c;

	*col = tc >= sc->ntcols ? GCACHE_ROWID : tc;
	*stype = tc >= sc->ntcols ? 0 : sc->stype[tc];
}

/*
 * The size check of the normal path: whether the columns n's chain needs
 * (their cache entries' sizes, or what loading them would take) fit in
 * what the cache can give the query.  A cached column costs a lookup; an
 * uncached one is measured (the measure is memoised for its load).
 */
static int xg_fits_cols(exec_ctx *x, pnode *n, pnode *src, bool filters,
			bool *fits)
{
	bool *need = calloc((size_t)src->ncols + 1, sizeof(bool));
	uint64_t total = 0, b;
	char err[300];
	int rc, col, st;

	*fits = true;
	if (!need)
		return db_err(x->db, GPMDB_NOMEM, "out of memory");
	if ((rc = xg_need_cols(x, n, src, need, filters)))
		goto out;
	for (int c = 0; c < src->ncols; c++) {
		if (!need[c])
			continue;
		xg_tcol(src, c, &col, &st);
		if ((rc = gcache_need(x->db->pool, x->db->gpu_owner,
				      src->table_id, col, st, &b, err,
				      sizeof(err)))) {
			rc = xg_gerr(x, rc, "column cache", err);
			goto out;
		}
		total = b > UINT64_MAX - total ? UINT64_MAX : total + b;
	}
	*fits = total <= gcache_room();
out:
	free(need);
	return rc;
}

int xg_fits(exec_ctx *x, pnode *n, pnode *src, bool *fits)
{
	return xg_fits_cols(x, n, src, true, fits);
}

int xg_fits_out(exec_ctx *x, pnode *n, pnode *src, bool *fits)
{
	return xg_fits_cols(x, n, src, false, fits);
}

/* Appends cur to the windows when it has live rows; clears it. */
static int xg_win_push(exec_ctx *x, xg_win **w, uint32_t *nw, uint32_t *cap,
		       xg_win *cur)
{
	if (cur->live) {
		if (*nw == *cap) {
			uint32_t c2 = *cap ? 2 * *cap : 16;
			xg_win *w2 = realloc(*w, sizeof(xg_win) * c2);
			if (!w2)
				return db_err(x->db, GPMDB_NOMEM,
					      "out of memory");
			*w = w2;
			*cap = c2;
		}
		(*w)[(*nw)++] = *cur;
	}
	memset(cur, 0, sizeof(*cur));
	return GPMDB_OK;
}

/* Live rows and device bytes of the columns cols over [r0, r0 + rn). */
static int xg_win_measure(exec_ctx *x, uint32_t table_id, const int *cols,
			  const int *sts, int nc, uint64_t r0, uint64_t rn,
			  xg_win *o)
{
	uint64_t l = 0, b = 0;
	char err[300];
	int rc;

	memset(o, 0, sizeof(*o));
	o->row0 = r0;
	o->nrows = rn;
	for (int k = 0; k < nc; k++) {
		if ((rc = gcache_range_size(x->db->pool, table_id, cols[k],
					    sts[k], r0, rn, &l, &b, err,
					    sizeof(err))))
			return xg_gerr(x, rc, "column window", err);
		o->live = l;
		o->bytes += b;
		if (sts[k] == STG_T_TEXT && cols[k] != GCACHE_ROWID)
			o->text += b;
	}
	return GPMDB_OK;
}

/*
 * The windows of a streamed scan: ranges of the table's physical rows
 * whose needed columns take at most budget device bytes (1/div of
 * what the cache can give the query or of the free device memory when
 * less, at least XG_WIN_MIN_BUDGET).  Whole
 * tablets are put together while they fit; a tablet larger than the
 * budget is cut into pieces of a multiple of 1024 rows (a piece's text
 * may still pass the budget when its strings are longer than the
 * tablet's average).  The TEXT columns of a window take less than
 * gcache_text_limit bytes (a column past it is streamed even when the
 * cache could hold it).  Windows without live rows are left out.
 */
int xg_windows(exec_ctx *x, pnode *n, pnode *src, uint32_t div, xg_win **wout,
	       uint32_t *nwout)
{
	stg_pool *p = x->db->pool;
	bool *need = calloc((size_t)src->ncols + 1, sizeof(bool));
	int *cols = calloc((size_t)src->ncols + 1, sizeof(int)),
	    *sts = calloc((size_t)src->ncols + 1, sizeof(int)), nc = 0;
	uint64_t room = gcache_room(), budget;
	xg_win *w = NULL, cur, tw;
	uint32_t nw = 0, cap = 0, nt = 0;
	int rc = GPMDB_OK;

	*wout = NULL;
	*nwout = 0;
	memset(&cur, 0, sizeof(cur));
	/* the device memory free now, when less than the cache's room */
	uint64_t avail = gpu_mem_avail();
	if (avail < room)
		room = avail;
	budget = room / div;
	if (budget < XG_WIN_MIN_BUDGET)
		budget = XG_WIN_MIN_BUDGET;
	/* a window's TEXT columns (their references counted too) stay under
	 * what one load addresses (gcache_text_limit) */
	uint64_t tlim = gcache_text_limit();
	if (!need || !cols || !sts) {
		rc = db_err(x->db, GPMDB_NOMEM, "out of memory");
		goto out;
	}
	if ((rc = xg_need_cols(x, n, src, need, true)))
		goto out;
	for (int c = 0; c < src->ncols; c++)
		if (need[c]) {
			xg_tcol(src, c, &cols[nc], &sts[nc]);
			nc++;
		}
	if (!nc) { /* count(*) alone: windows sized by the row ids */
		cols[nc] = GCACHE_ROWID;
		sts[nc++] = 0;
	}
	if (stg_tablet_count(p, src->table_id, &nt)) {
		rc = db_err(x->db, stg_errcode(p), "%s", stg_errmsg(p));
		goto out;
	}
	for (uint32_t t = 0; t < nt && !rc; t++) {
		stg_tablet_view v;
		if (stg_tablet_get(p, src->table_id, t, &v)) {
			rc = db_err(x->db, stg_errcode(p), "%s", stg_errmsg(p));
			break;
		}
		if (!v.nrows)
			continue;
		if ((rc = xg_win_measure(x, src->table_id, cols, sts, nc,
					 v.first_row, v.nrows, &tw)))
			break;
		if ((tw.bytes <= budget && tw.text < tlim) || v.nrows <= 1024) {
			if (cur.nrows &&
			    (cur.row0 + cur.nrows != tw.row0 ||
			     cur.bytes + tw.bytes > budget ||
			     cur.text + tw.text >= tlim ||
			     cur.live + tw.live > UINT32_MAX) &&
			    (rc = xg_win_push(x, &w, &nw, &cap, &cur)))
				break;
			if (!cur.nrows)
				cur.row0 = tw.row0;
			cur.nrows += tw.nrows;
			cur.live += tw.live;
			cur.bytes += tw.bytes;
			cur.text += tw.text;
			continue;
		}
		if ((rc = xg_win_push(x, &w, &nw, &cap, &cur)))
			break;
		uint64_t k = (tw.bytes + budget - 1) / budget,
			 kt = tw.text / tlim + 1;
		k = kt > k ? kt : k;
		uint64_t step = ((uint64_t)v.nrows / k) & ~1023ull;
		uint64_t end = v.first_row + v.nrows;
		if (step < 1024)
			step = 1024;
		for (uint64_t r0 = v.first_row; r0 < end && !rc; r0 += step) {
			uint64_t rn = end - r0 < step ? end - r0 : step;
			if (!(rc = xg_win_measure(x, src->table_id, cols, sts,
						  nc, r0, rn, &cur)))
				rc = xg_win_push(x, &w, &nw, &cap, &cur);
		}
	}
	if (!rc)
		rc = xg_win_push(x, &w, &nw, &cap, &cur);
out:
	free(need);
	free(cols);
	free(sts);
	if (rc) {
		free(w);
		return rc;
	}
	*wout = w;
	*nwout = nw;
	return GPMDB_OK;
}

/* ---- the operators -------------------------------------------------- */

uint32_t xg_rows(const xg_src *s)
{
	return s->sel ? s->nsel : s->nrows;
}

/* Sets up the source of n's chain and runs the chain's filters (bottom
 * up): s->sel holds the selected rows.  win: a window of a streamed scan;
 * NULL otherwise. */
int xg_prepare_win(exec_ctx *x, pnode *n, xg_src *s, const xg_win *win)
{
	pnode *chain[64], *src;
	int nchain = 0;
	char why[300];

	memset(s, 0, sizeof(*s));
	s->x = x;
	src = xg_source(x, n, why, sizeof(why));
	if (n->kind == PN_FILTER)
		chain[nchain++] = n;
	for (pnode *f = n->l; f != src; f = f->l) {
		if (nchain == 64)
			return db_err(x->db, GPMDB_UNSUPPORTED,
				      "GPU input: more than 63 filters");
		chain[nchain++] = f;
	}
	return xg_prepare_at(x, n, chain, nchain, src, s, win);
}
