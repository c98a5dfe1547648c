/*
 * spill.c - spilling to temporary files when a query passes PRAGMA
 * memory_limit (docs/engine.md "Spilling"): the hash aggregate and the
 * hash join partition their rows by key hash (grace-style) and run
 * partition by partition; ORDER BY writes sorted runs and merges them.  A
 * file is made in PRAGMA temp_directory, by default the pool's directory
 * (":memory:": $TMPDIR or /tmp), and unlinked at once, so that nothing is
 * left behind by a crash.
 *
 * Rows are written row by row into per-stream buffers (a stream: one
 * thread's rows of one partition, or one sorted run) which go to the file
 * in chunks of at most a batch; each row its ordinal (its position in the
 * input) where kept, then each column a NULL byte and its value (text as
 * its length and bytes, never a pointer).  Streams are read back a chunk
 * at a time.
 */
/* unistd.h's pipe() would clash with the pipeline's type */
#define pipe unistd_pipe
#include <unistd.h>
#undef pipe

#include "pipe_int.h"

#include <errno.h>
#include <fcntl.h>
#include <omp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Partitions of a spilled aggregate or join (their rows' hash bits). */
#define SPILL_BITS  7
#define SPILL_NPART (1 << SPILL_BITS)

typedef struct spill_chunk {
	uint64_t off;
	uint32_t len, rows;
} spill_chunk;

typedef struct spill_stream {
	spill_chunk *c;
	uint32_t n, cap;
	char *buf; /* rows not yet written */
	size_t blen, bcap;
	uint32_t brows;
} spill_stream;

struct spill {
	exec_ctx *x;
	pnode *node; /* the node that spills (EXPLAIN ANALYZE) */
	int fd;
	char dir[1024];
	int ncols;
	etype *ty;
	bool ord; /* each row carries its ordinal (aggregates, sorts) */
	/* partitions: stream (thread, part) is st[thread * SPILL_NPART +
	 * part]; sorted runs: one stream each */
	spill_stream **st;
	int nst, cap, nthr;
	pthread_mutex_t mu;
	size_t bufsz, acct;	  /* a stream's buffer; bytes accounted */
	atomic_uint_fast64_t end; /* the file's bytes, reserved */
	atomic_int err;
	char msg[1200];
	/* a pipeline's source: every stream's chunks in order */
	const spill_chunk **flat;
	uint64_t nflat, frows;
	/* NOT IN's sides (nkey): a row whose key is NULL goes to no
	 * partition and sets knull */
	bool nkey;
	atomic_bool knull;
	bool inorder; /* a query's result: one stream a thread (partition 0) */
	/* the partition bits rows take (0 under GPMDB_TEST_JOIN_ONEPART: a
	 * join's sides all in partition 0, which must split again) */
	int pmask;
};

void spill_dir(const gpmdb *db, char *dir, size_t size)
{
	const char *p = db->path, *slash = strrchr(p, '/');
	const char *tmp = getenv("TMPDIR");

	if (db->temp_dir[0])
		snprintf(dir, size, "%s", db->temp_dir);
	else if (!p[0] || !strcmp(p, ":memory:"))
		snprintf(dir, size, "%s", tmp && *tmp ? tmp : "/tmp");
	else if (!slash)
		snprintf(dir, size, ".");
	else if (slash == p)
		snprintf(dir, size, "/");
	else
		snprintf(dir, size, "%.*s", (int)(slash - p), p);
}

/* The statement's code of errno e: a full disk is GPMDB_FULL. */
static int spill_code(int e)
{
	return e == ENOSPC || e == EFBIG || e == EDQUOT ? GPMDB_FULL
							: GPMDB_IOERR;
}

/* Records the first failure of the file (errno e); returns its code. */
static int spill_fail(spill *s, int e)
{
	/* the message first: a thread that sees err reads it */
	pthread_mutex_lock(&s->mu);
	if (!atomic_load(&s->err)) {
		snprintf(s->msg, sizeof(s->msg),
			 "cannot spill to temporary file in %s: %s", s->dir,
			 strerror(e));
		atomic_store(&s->err, e);
	}
	pthread_mutex_unlock(&s->mu);
	return spill_code(e);
}

/* The statement's error of a failed file. */
static int spill_err(spill *s, int rc)
{
	return db_err(s->x->db, rc, "%s", s->msg);
}

void spill_clear(exec_ctx *x)
{
	x->over = false;
	db_clear(x->db);
}

bool spill_over(exec_ctx *x, int rc)
{
	return rc == GPMDB_NOMEM && x->over && x->mem_limit;
}

/* A new spill file for rows of ncols columns of types ty (ord: with
 * ordinals) written by nthr threads. */
static int spill_open_ty(exec_ctx *x, pnode *node, int ncols, const etype *ty,
			 bool ord, int nthr, spill **out)
{
	spill *s = calloc(1, sizeof(*s));
	size_t avail;
	int fd;

	*out = NULL;
	if (!s || !(s->ty = malloc(sizeof(etype) * (size_t)(ncols + 1)))) {
		free(s);
		return db_err(x->db, GPMDB_NOMEM, "out of memory");
	}
	s->x = x;
	s->node = node;
	s->fd = -1;
	s->ncols = ncols;
	memcpy(s->ty, ty, sizeof(etype) * (size_t)ncols);
	s->ord = ord;
	s->nthr = nthr;
	s->pmask = SPILL_NPART - 1;
	pthread_mutex_init(&s->mu, NULL);
	spill_dir(x->db, s->dir, sizeof(s->dir));
	fd = open(s->dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd < 0 && (errno == EOPNOTSUPP || errno == EISDIR)) {
		/* no O_TMPFILE here: a named file, unlinked at once */
		char name[1100];
		snprintf(name, sizeof(name), "%s/gpmdb-spill-XXXXXX", s->dir);
		if ((fd = mkostemp(name, O_CLOEXEC)) >= 0 && unlink(name)) {
			int e = errno;
			close(fd);
			fd = -1;
			errno = e;
		}
	}
	if (fd < 0) {
		int rc = spill_fail(s, errno);
		spill_err(s, rc);
		pthread_mutex_destroy(&s->mu);
		free(s->ty);
		free(s);
		return rc;
	}
	s->fd = fd;
	/* the buffers: a part of what the limit leaves, 4..64 KiB each */
	avail = x->mem_limit > x->mem ? x->mem_limit - x->mem : 0;
	s->bufsz = avail / 4 / ((size_t)nthr * SPILL_NPART + 1);
	s->bufsz = s->bufsz < 4096 ? 4096 : s->bufsz > 65536 ? 65536 : s->bufsz;
	*out = s;
	return GPMDB_OK;
}

/* A new spill file for rows of node lay's layout. */
static int spill_open(exec_ctx *x, pnode *node, const pnode *lay, bool ord,
		      int nthr, spill **out)
{
	return spill_open_ty(x, node, lay->ncols, lay->ty, ord, nthr, out);
}

/* Room for the partition streams of nthr threads. */
static int spill_parts(spill *s, int nthr)
{
	int n = nthr * SPILL_NPART;

	if (s->nst >= n)
		return GPMDB_OK;
	spill_stream **st = realloc(s->st, sizeof(*st) * (size_t)n);
	if (!st)
		return db_err(s->x->db, GPMDB_NOMEM, "out of memory");
	s->st = st;
	for (; s->nst < n; s->nst++)
		if (!(s->st[s->nst] = calloc(1, sizeof(spill_stream))))
			return db_err(s->x->db, GPMDB_NOMEM, "out of memory");
	s->cap = n;
	s->nthr = nthr;
	/* the buffers, at most one a stream (a result: one a thread) */
	size_t add = (size_t)(s->inorder ? nthr : n) * s->bufsz;
	s->acct += add;
	return exec_mem(s->x, add);
}

/* A new stream (a sorted run), thread-safe; NULL: out of memory. */
static spill_stream *spill_stream_new(spill *s)
{
	spill_stream *ss = calloc(1, sizeof(*ss));

	pthread_mutex_lock(&s->mu);
	if (ss && s->nst == s->cap) {
		int cap = s->cap ? 2 * s->cap : 16;
		spill_stream **st = realloc(s->st, sizeof(*st) * (size_t)cap);
		if (st) {
			s->st = st;
			s->cap = cap;
		}
	}
	if (ss && s->nst < s->cap)
		s->st[s->nst++] = ss;
	else {
		free(ss);
		ss = NULL;
	}
	pthread_mutex_unlock(&s->mu);
	return ss;
}

/* Writes the stream's buffered rows to the file as a chunk. */
static int stream_flush(spill *s, spill_stream *ss)
{
	uint64_t off;
	size_t done = 0;

	if (!ss->blen)
		return GPMDB_OK;
	if (atomic_load(&s->err)) /* another thread's write failed */
		return spill_code(atomic_load(&s->err));
	if (ss->n == ss->cap) {
		uint32_t cap = ss->cap ? 2 * ss->cap : 8;
		spill_chunk *c = realloc(ss->c, sizeof(*c) * cap);
		if (!c)
			return GPMDB_NOMEM;
		ss->c = c;
		ss->cap = cap;
	}
	off = atomic_fetch_add(&s->end, ss->blen);
	while (done < ss->blen) {
		ssize_t w = pwrite(s->fd, ss->buf + done, ss->blen - done,
				   (off_t)(off + done));
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return spill_fail(s, w < 0 ? errno : ENOSPC);
		done += (size_t)w;
	}
	ss->c[ss->n++] = (spill_chunk){off, (uint32_t)ss->blen, ss->brows};
	ss->blen = 0;
	ss->brows = 0;
	return GPMDB_OK;
}

/* The bytes row i of r takes in the file. */
static size_t row_size(const spill *s, const rel *r, uint64_t i,
		       const uint8_t *live)
{
	size_t n = s->ord ? 8 : 0;

	for (int c = 0; c < s->ncols; c++) {
		const rcol *d = &r->cols[c];
		n++;
		if ((live && !live[c]) || d->nulls[i])
			continue;
		n += d->ty.t == BC_T_TEXT ? 4 + ((vec_str *)d->data)[i].len
					  : rel_width(d->ty.t);
	}
	return n;
}

/* Appends row i of r (the columns live[c], or all; the others as NULL)
 * to stream ss. */
static int spill_row(spill *s, spill_stream *ss, const rel *r, uint64_t i,
		     const uint8_t *live, uint64_t ord)
{
	size_t need = row_size(s, r, i, live);
	char *p;
	int rc;

	/* a chunk is at most a batch (a pipeline's source reads one) */
	if (ss->blen + need > ss->bcap || ss->brows == VEC_BATCH) {
		if ((rc = stream_flush(s, ss)))
			return rc;
		if (need > ss->bcap || !ss->buf) {
			size_t cap = need > s->bufsz ? need : s->bufsz;
			char *b = realloc(ss->buf, cap);
			if (!b)
				return GPMDB_NOMEM;
			ss->buf = b;
			ss->bcap = cap;
		}
	}
	p = ss->buf + ss->blen;
	if (s->ord) {
		memcpy(p, &ord, 8);
		p += 8;
	}
	for (int c = 0; c < s->ncols; c++) {
		const rcol *d = &r->cols[c];
		bool nl = (live && !live[c]) || d->nulls[i];
		*p++ = (char)nl;
		if (nl)
			continue;
		if (d->ty.t == BC_T_TEXT) {
			vec_str v = ((vec_str *)d->data)[i];
			memcpy(p, &v.len, 4);
			if (v.len) /* an empty text may have no bytes */
				memcpy(p + 4, v.ptr, v.len);
			p += 4 + v.len;
		} else {
			size_t w = rel_width(d->ty.t);
			memcpy(p, (const char *)d->data + i * w, w);
			p += w;
		}
	}
	ss->blen += need;
	ss->brows++;
	return GPMDB_OK;
}

/* Appends the rows of chunk c to r (s's layout, then the ordinal);
 * thread-safe when r has no exec_ctx (no error is recorded in the
 * statement then: GPMDB_NOMEM, or a failure of the file in s->msg). */
static int spill_load_raw(spill *s, const spill_chunk *c, rel *r)
{
	char *buf = malloc(c->len ? c->len : 1), *p;
	size_t done = 0;
	int rc = GPMDB_OK;

	if (!buf)
		return GPMDB_NOMEM;
	while (done < c->len) {
		ssize_t n = pread(s->fd, buf + done, c->len - done,
				  (off_t)(c->off + done));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			rc = spill_fail(s, n < 0 ? errno : EIO);
			goto out;
		}
		done += (size_t)n;
	}
	if ((rc = rel_reserve(r, c->rows)))
		goto out;
	p = buf;
	for (uint32_t k = 0; k < c->rows; k++) {
		uint64_t at = r->nrows + k;
		if (s->ord) {
			memcpy(&((int64_t *)r->cols[s->ncols].data)[at], p, 8);
			r->cols[s->ncols].nulls[at] = 0;
			p += 8;
		}
		for (int col = 0; col < s->ncols; col++) {
			rcol *d = &r->cols[col];
			size_t w = rel_width(d->ty.t);
			d->nulls[at] = (uint8_t)*p++;
			if (d->nulls[at]) {
				memset((char *)d->data + at * w, 0, w);
				continue;
			}
			if (d->ty.t == BC_T_TEXT) {
				uint32_t len;
				memcpy(&len, p, 4);
				if ((rc = rel_str(r, p + 4, len,
						  &((vec_str *)d->data)[at])))
					goto out;
				p += 4 + len;
			} else {
				memcpy((char *)d->data + at * w, p, w);
				p += w;
			}
		}
	}
	r->nrows += c->rows;
out:
	free(buf);
	return rc;
}

static int spill_load(spill *s, const spill_chunk *c, rel *r)
{
	int rc = spill_load_raw(s, c, r);

	if (rc == GPMDB_NOMEM)
		return db_err(s->x->db, rc, "out of memory");
	return rc && atomic_load(&s->err) ? spill_err(s, rc) : rc;
}

/* Writes every stream's buffered rows and frees the buffers. */
static int spill_flush_all(spill *s)
{
	int rc = GPMDB_OK;

	for (int i = 0; i < s->nst && !rc; i++) {
		rc = stream_flush(s, s->st[i]);
		free(s->st[i]->buf);
		s->st[i]->buf = NULL;
		s->st[i]->bcap = 0;
	}
	/* the buffers are gone: the partitions are read back next */
	s->x->mem -= s->acct <= s->x->mem ? s->acct : s->x->mem;
	s->acct = 0;
	if (rc == GPMDB_NOMEM)
		return db_err(s->x->db, rc, "out of memory");
	return rc ? spill_err(s, rc) : GPMDB_OK;
}

static void spill_close(spill *s)
{
	exec_ctx *x;

	if (!s)
		return;
	x = s->x;
	if (x->analyze && s->node)
		s->node->an_spill += atomic_load(&s->end);
	if (s->fd >= 0)
		close(s->fd);
	for (int i = 0; i < s->nst; i++) {
		free(s->st[i]->c);
		free(s->st[i]->buf);
		free(s->st[i]);
	}
	free(s->st);
	free(s->flat);
	free(s->ty);
	x->mem -= s->acct <= x->mem ? s->acct : x->mem;
	pthread_mutex_destroy(&s->mu);
	free(s);
}

/* Partition part's rows (every thread's, in thread order) into r. */
static int spill_read_part(spill *s, int part, rel *r)
{
	int rc = GPMDB_OK;

	for (int t = 0; t < s->nthr && !rc; t++) {
		const spill_stream *ss = s->st[t * SPILL_NPART + part];
		for (uint32_t k = 0; k < ss->n && !rc; k++)
			rc = spill_load(s, &ss->c[k], r);
	}
	return rc;
}

/* The partition of a key hash. */
static inline int spill_part_of(uint64_t hv)
{
	return (int)((hv ^ hv >> 29) * 0x9e3779b97f4a7c15ull >>
		     (64 - SPILL_BITS));
}

/* Rows 0..m of r (hashes hv) into thread ti's partitions; row i's
 * ordinal (s->ord): ti's rows before it, ord0 + i, after ti.  With
 * s->nkey, a row whose key (row i of k) is NULL is left out. */
static int spill_rows(spill *s, int ti, const rel *r, uint32_t m,
		      const uint64_t *hv, const uint8_t *live, uint64_t ord0,
		      const rel *k)
{
	int rc = GPMDB_OK;

	for (uint32_t i = 0; i < m && !rc; i++) {
		if (s->nkey && k && exec_key_has_null(k, i)) {
			atomic_store(&s->knull, true);
			continue;
		}
		rc = spill_row(s,
			       s->st[(size_t)ti * SPILL_NPART +
				     (spill_part_of(hv[i]) & s->pmask)],
			       r, i, live, (uint64_t)ti << 40 | (ord0 + i));
	}
	return rc;
}

/* The rows written to s's streams. */
static uint64_t spill_nrows(const spill *s)
{
	uint64_t n = 0;

	for (int i = 0; i < s->nst; i++) {
		n += s->st[i]->brows;
		for (uint32_t c = 0; c < s->st[i]->n; c++)
			n += s->st[i]->c[c].rows;
	}
	return n;
}

/* A relation for a partition's rows: s's layout, then the ordinal. */
static rel *spill_part_rel(spill *s)
{
	etype ty[s->ncols + 1];

	memcpy(ty, s->ty, sizeof(etype) * (size_t)s->ncols);
	ty[s->ncols] = et_make(BC_T_INT);
	return rel_new(s->x, s->ncols + s->ord, ty);
}

/* dst gets src's rows appended (same layout); src is freed. */
static int spill_append(rel *dst, rel *src)
{
	uint64_t at = dst->nrows;
	int rc;

	if (!src->nrows) {
		rel_free(src);
		return GPMDB_OK;
	}
	if ((rc = rel_reserve(dst, src->nrows))) {
		rel_free(src);
		return rc;
	}
	for (int c = 0; c < dst->ncols; c++) {
		size_t w = rel_width(dst->cols[c].ty.t);
		memcpy((char *)dst->cols[c].data + at * w, src->cols[c].data,
		       src->nrows * w);
		memcpy(dst->cols[c].nulls + at, src->cols[c].nulls, src->nrows);
	}
	dst->nrows += src->nrows;
	rel_adopt(dst, src); /* the text stays where src has it */
	rel_free(src);
	return GPMDB_OK;
}

/* ---- in a pipeline's threads (pipe.c calls these) ---- */

static int thread_rows(pthr *t, const rel *b, uint32_t m, const uint64_t *hv,
		       const uint8_t *live, const rel *k)
{
	spill *s = t->p->spill;
	int rc = spill_rows(s, t->ti, b, m, hv, live, t->sord, k);

	t->sord += m;
	if (rc == GPMDB_NOMEM)
		return pipe_fail(t, rc, "out of memory");
	return rc ? pipe_fail(t, rc, s->msg) : GPMDB_OK;
}

int spill_thread_rows(pthr *t, const rel *b, uint32_t m, const uint64_t *hv,
		      const uint8_t *live)
{
	return thread_rows(t, b, m, hv, live, NULL);
}

/* The relation sink partitioning its batch by the keys p->spk. */
int spill_sink_part(pthr *t, const rel *b)
{
	pipe *p = t->p;
	uint32_t m = (uint32_t)b->nrows;
	vec v;
	int rc;

	if (!p->nspk) { /* a query's result: each thread's rows in order */
		spill *s = p->spill;
		spill_stream *ss = s->st[(size_t)t->ti * SPILL_NPART];
		rc = GPMDB_OK;
		for (uint32_t i = 0; i < m && !rc; i++)
			rc = spill_row(s, ss, b, i, NULL, 0);
		if (rc == GPMDB_NOMEM)
			return pipe_fail(t, rc, "out of memory");
		return rc ? pipe_fail(t, rc, s->msg) : GPMDB_OK;
	}
	if (!t->skb) {
		etype ty[64];
		for (int k = 0; k < p->nspk; k++)
			ty[k] = p->spk[k]->ty;
		if (!(t->skb = rel_new(NULL, p->nspk, ty)) ||
		    rel_reserve(t->skb, VEC_BATCH))
			return pipe_fail(t, GPMDB_NOMEM, "out of memory");
	}
	for (int k = 0; k < p->nspk; k++) {
		char err[256] = "";
		if ((rc = cx_eval_pure(p->spk[k], b, 0, m, &v, &t->scr[p->ns],
				       err, sizeof(err))))
			return pipe_fail(t, rc, err);
		if ((rc = pipe_put(t, t->skb, k, &v, m)))
			return rc;
	}
	t->skb->nrows = m;
	exec_hash_batch(t->skb, p->nspk, m, t->hv, false);
	return thread_rows(t, b, m, t->hv, NULL, t->skb);
}

/* Thread t's rows (t->out) as one sorted run. */
int spill_run(pthr *t)
{
	pipe *p = t->p;
	spill *s = p->spill;
	rel *o = t->out;
	uint64_t n = o->nrows;
	uint32_t *idx;
	spill_stream *ss;
	int rc = GPMDB_OK;

	if (!n)
		return GPMDB_OK;
	if (!(idx = malloc(sizeof(uint32_t) * (n + 1))) ||
	    !(ss = spill_stream_new(s))) {
		free(idx);
		return pipe_fail(t, GPMDB_NOMEM, "out of memory");
	}
	/* rows after the first keep of a run come after keep others */
	uint64_t m = exec_sort_idx(o, p->srt, p->keep, idx);
	for (uint64_t k = 0; k < m && !rc; k++)
		rc = spill_row(s, ss, o, idx[k], NULL,
			       (uint64_t)t->ti << 40 | (t->sord + idx[k]));
	if (!rc)
		rc = stream_flush(s, ss);
	free(ss->buf);
	ss->buf = NULL;
	ss->bcap = 0;
	free(idx);
	t->sord += n;
	pipe_reset(o);
	/* its text is gone: the bytes are those of its arrays again */
	size_t cb = 0;
	for (int c = 0; c < o->ncols; c++)
		cb += o->cap * (rel_width(o->cols[c].ty.t) + 1);
	if (o->bytes > cb) {
		atomic_fetch_sub(&p->mem, o->bytes - cb);
		o->bytes = cb;
	}
	if (rc == GPMDB_NOMEM)
		return pipe_fail(t, rc, "out of memory");
	return rc ? pipe_fail(t, rc, s->msg) : GPMDB_OK;
}

/* After the threads: the rest of their rows to the file. */
int spill_end(pipe *p, pthr *th)
{
	int rc = GPMDB_OK;

	for (int t = 0; t < p->nthr && p->srt && !rc; t++)
		if ((rc = spill_run(&th[t])))
			rc = db_err(p->x->db, rc, "%s", th[t].msg);
	return rc ? rc : spill_flush_all(p->spill);
}

int spill_threads_fit(const pipe *p, int nt, int states)
{
	const spill *s = p->spill;
	const exec_ctx *x = p->x;
	size_t per, avail;

	if (!s || p->srt || !x->mem_limit)
		return nt;
	per = (size_t)states * (s->inorder ? 1 : SPILL_NPART) * s->bufsz;
	avail = x->mem_limit > x->mem ? x->mem_limit - x->mem : 0;
	while (nt > 1 && (size_t)nt * per > avail / 2)
		nt--;
	return nt;
}

int spill_threads(pipe *p)
{
	return p->srt ? GPMDB_OK : spill_parts(p->spill, p->nthr);
}

/* ---- the operators ---- */

/* The groups AGG n's partitions give, appended to r, and their first
 * rows' ordinals to sk (cap: its room, skb: its bytes counted). */
typedef struct agg_out {
	rel *r;
	exec_sortkey *sk;
	uint64_t cap;
	size_t skb;
} agg_out;

static int agg_parts(exec_ctx *x, pnode *n, spill *s, int depth, agg_out *ao);

/* Rows of chunk c (hashes hv) into the partitions of sub by other bits
 * of their hash (depth), each with its ordinal ord[i] (NULL: 0): a
 * partition split again. */
static int spill_repart(spill *sub, const rel *c, const uint64_t *hv, int depth,
			const uint64_t *ord)
{
	int rc = GPMDB_OK;

	for (uint64_t i = 0; i < c->nrows && !rc; i++) {
		uint64_t h = exec_hash_mix(hv[i], (uint64_t)depth);
		rc = spill_row(sub, sub->st[spill_part_of(h)], c, i, NULL,
			       ord ? ord[i] : 0);
	}
	if (rc == GPMDB_NOMEM)
		return db_err(sub->x->db, rc, "out of memory");
	if (rc && atomic_load(&sub->err))
		return spill_err(sub, rc);
	return rc;
}

/* Partition part of s, too large to aggregate alone, split again a chunk
 * at a time by other bits of the group keys' hash (depth) into a file
 * of its own, whose partitions then aggregate (agg_parts). */
static int agg_resplit(exec_ctx *x, pnode *n, spill *s, int part, int depth,
		       agg_out *ao)
{
	spill *sub = NULL;
	rel *c = NULL, *k = NULL;
	uint64_t hv[VEC_BATCH];
	int rc, ng = n->ngroup;

	if ((rc = spill_open_ty(x, n, s->ncols, s->ty, true, 1, &sub)) ||
	    (rc = spill_parts(sub, 1)))
		goto out;
	for (int t = 0; t < s->nthr && !rc; t++) {
		const spill_stream *ss = s->st[t * SPILL_NPART + part];
		for (uint32_t ci = 0; ci < ss->n && !rc; ci++) {
			rel_free(c);
			rel_free(k);
			k = NULL;
			if (!(c = spill_part_rel(s)) ||
			    !(k = rel_new(x, ng, n->ty))) {
				rc = x->db->errcode;
				break;
			}
			if ((rc = spill_load(s, &ss->c[ci], c)) ||
			    (rc = rel_reserve(k, c->nrows)))
				break;
			for (int g = 0; g < ng && !rc; g++) {
				cexpr *cx;
				if (!(rc = exec_node_cx(x, n, g, n->group[g],
							false, n->l, &cx)))
					rc = exec_eval_into(x, cx, c, k, g);
			}
			k->nrows = c->nrows;
			exec_hash_batch(k, ng, (uint32_t)c->nrows, hv, false);
			rc = spill_repart(sub, c, hv, depth,
					  c->cols[s->ncols].data);
		}
	}
	rel_free(c);
	rel_free(k);
	if (!rc && !(rc = spill_flush_all(sub)))
		rc = agg_parts(x, n, sub, depth, ao);
out:
	spill_close(sub);
	return rc;
}

static int agg_parts(exec_ctx *x, pnode *n, spill *s, int depth, agg_out *ao)
{
	rel *r = ao->r;
	int rc = GPMDB_OK;

	for (int part = 0; part < SPILL_NPART && !rc; part++) {
		rel *in, *o = NULL;
		uint64_t *frow = NULL, at = r->nrows;
		if ((rc = db_check_interrupt(x->db)))
			break;
		if (!(in = spill_part_rel(s))) {
			rc = x->db->errcode;
			break;
		}
		if (!(rc = spill_read_part(s, part, in)))
			rc = exec_agg_in(x, n, in, &o, &frow);
		if (spill_over(x, rc) && depth < 4) {
			/* this partition alone passes the limit */
			rel_free(in);
			spill_clear(x);
			rc = agg_resplit(x, n, s, part, depth + 1, ao);
			continue;
		}
		if (!rc && at + o->nrows > ao->cap) {
			uint64_t nc = ao->cap ? ao->cap : 1024;
			while (nc < at + o->nrows)
				nc *= 2;
			exec_sortkey *k = realloc(ao->sk, sizeof(*k) * nc);
			if (!k) {
				rc =
				    db_err(x->db, GPMDB_NOMEM, "out of memory");
			} else {
				rc = exec_mem(x, sizeof(*k) * (nc - ao->cap));
				ao->skb += sizeof(*k) * (nc - ao->cap);
				ao->sk = k;
				ao->cap = nc;
			}
		}
		for (uint64_t j = 0; !rc && j < o->nrows; j++)
			ao->sk[at + j] = (exec_sortkey){
			    ((uint64_t *)in->cols[s->ncols].data)[frow[j]], 1,
			    (uint32_t)(at + j)};
		free(frow);
		rel_free(in);
		if (!rc)
			rc = spill_append(r, o);
		else
			rel_free(o);
	}
	return rc;
}

/* AGG n's partitions in s (rows with their ordinals) aggregated one at
 * a time (exec_agg_in; one too large split again) into *out, then put
 * in the order of the groups' first rows, as without spilling. */
static int spill_agg_parts(exec_ctx *x, pnode *n, spill *s, rel **out)
{
	agg_out ao = {exec_rel_like(x, n), NULL, 0, 0};
	rel *r = ao.r;
	int rc = r ? agg_parts(x, n, s, 0, &ao) : x->db->errcode;
	exec_sortkey *sk = ao.sk;

	if (!rc && r->nrows > UINT32_MAX)
		rc = db_err(x->db, GPMDB_UNSUPPORTED,
			    "more than 2^32 groups spilled");
	/* the groups by their first rows' ordinals, a column at a time */
	if (!rc && r->nrows && !exec_radix_sort(sk, r->nrows))
		rc = db_err(x->db, GPMDB_NOMEM, "out of memory");
	for (int c = 0; c < r->ncols && !rc && r->nrows; c++) {
		rcol *d = &r->cols[c];
		size_t w = rel_width(d->ty.t);
		char *nd = malloc(r->cap * w);
		uint8_t *nn = malloc(r->cap);
		if (!nd || !nn) {
			free(nd);
			free(nn);
			rc = db_err(x->db, GPMDB_NOMEM, "out of memory");
			break;
		}
		for (uint64_t i = 0; i < r->nrows; i++) {
			memcpy(nd + i * w, (char *)d->data + sk[i].row * w, w);
			nn[i] = d->nulls[sk[i].row];
		}
		free(d->data);
		free(d->nulls);
		d->data = nd;
		d->nulls = nn;
	}
	free(sk);
	x->mem -= ao.skb <= x->mem ? ao.skb : x->mem;
	if (rc) {
		rel_free(r);
		return rc;
	}
	*out = r;
	return GPMDB_OK;
}

/* AGG p->agg passed the limit: its input again, rows partitioned by the
 * group keys' hash into the file with their position in the input, then
 * each partition aggregated alone (spill_agg_parts). */
int spill_agg(pipe *p, rel **out)
{
	exec_ctx *x = p->x;
	spill *s = NULL;
	int rc;

	spill_clear(x);
	if ((rc = spill_open(x, p->agg, p->top, true, p->nthr, &s)))
		return rc;
	atomic_store(&p->stop, 0);
	atomic_store(&p->mem, 0);
	p->spill = s;
	rc = pipe_exec(p, NULL);
	p->spill = NULL;
	if (!rc)
		rc = spill_agg_parts(x, p->agg, s, out);
	spill_close(s);
	return rc;
}

/* The rows of relation in into s's partitions (thread 0's) by the hash
 * of their keys k (one row of k a row of in), a batch at a time. */
static int spill_rel_rows(spill *s, const rel *in, const rel *k)
{
	rel w = *k, b = *in;
	rcol wc[k->ncols + 1], bc[in->ncols + 1];
	uint64_t hv[VEC_BATCH];
	int rc = GPMDB_OK;

	w.cols = wc;
	b.cols = bc;
	for (uint64_t at = 0; at < in->nrows && !rc; at += VEC_BATCH) {
		uint32_t m =
		    (uint32_t)(in->nrows - at < VEC_BATCH ? in->nrows - at
							  : VEC_BATCH);
		for (int c = 0; c < k->ncols; c++) {
			wc[c] = k->cols[c];
			wc[c].data = (char *)k->cols[c].data +
				     at * rel_width(k->cols[c].ty.t);
			wc[c].nulls = k->cols[c].nulls + at;
		}
		for (int c = 0; c < in->ncols; c++) {
			bc[c] = in->cols[c];
			bc[c].data = (char *)in->cols[c].data +
				     at * rel_width(in->cols[c].ty.t);
			bc[c].nulls = in->cols[c].nulls + at;
		}
		w.nrows = b.nrows = m;
		exec_hash_batch(&w, k->ncols, m, hv, false);
		rc = spill_rows(s, 0, &b, m, hv, NULL, at, &w);
	}
	if (rc == GPMDB_NOMEM)
		return db_err(s->x->db, rc, "out of memory");
	return rc ? spill_err(s, rc) : spill_flush_all(s);
}

int spill_agg_rel(exec_ctx *x, pnode *n, rel *in, rel **out)
{
	spill *s = NULL;
	rel *k = NULL;
	int rc;

	spill_clear(x);
	if (!(rc = spill_open(x, n, n->l, true, 1, &s)) &&
	    !(rc = spill_parts(s, 1)) && (k = rel_new(x, n->ngroup, n->ty)) &&
	    !(rc = rel_reserve(k, in->nrows))) {
		for (int g = 0; g < n->ngroup && !rc; g++) {
			cexpr *c;
			if (!(rc = exec_node_cx(x, n, g, n->group[g], false,
						n->l, &c)))
				rc = exec_eval_into(x, c, in, k, g);
		}
		k->nrows = in->nrows;
		if (!rc)
			rc = spill_rel_rows(s, in, k);
	} else if (!rc) {
		rc = x->db->errcode;
	}
	rel_free(k);
	rel_free(in);
	if (!rc)
		rc = spill_agg_parts(x, n, s, out);
	spill_close(s);
	return rc;
}

/* One side of join n (side, its keys at slots base..) into s's
 * partitions: a pipeline when side streams, else its relation (nkey:
 * rows whose key is NULL left out, s->knull set). */
static int spill_side(exec_ctx *x, pnode *n, pnode *side, ast_expr **keys,
		      int base, bool nkey, spill **out)
{
	spill *s = NULL;
	rel *in = NULL, *k = NULL;
	int rc, nt = omp_get_max_threads();

	if ((rc = spill_open(x, n, side, false, nt, &s)))
		return rc;
	s->nkey = nkey;
	if (getenv("GPMDB_TEST_JOIN_ONEPART"))
		s->pmask = 0;
	*out = s;
	rc = pipe_run_spill(x, side, s, n, keys, base, 0);
	if (rc != PIPE_DECLINE)
		return rc;
	/* not a pipeline: its rows, then their keys' hashes a batch at a
	 * time, on one thread */
	if ((rc = spill_parts(s, 1)) || (rc = exec_node(x, side, &in)) ||
	    (rc = exec_eval_keys(x, n, base, keys, side, in, &k)))
		goto out;
	rc = spill_rel_rows(s, in, k);
out:
	rel_free(k);
	rel_free(in);
	return rc;
}

bool spill_join_ok(const exec_ctx *x, const pnode *n)
{
	const pnode *ixs = n->r;

	while (ixs->kind == PN_FILTER && !ixs->post)
		ixs = ixs->l;
	return x->gen && n->nkeys && n->nkeys <= 64 && n->jtype != JOIN_CROSS &&
	       !(ixs->kind == PN_ISCAN && ixs->ix->njk);
}

typedef struct spill_drain_arg {
	spill *s;
	spill_stream *ss;
} spill_drain_arg;

/* A spilled partition's joined rows, a batch at a time, to the file. */
static int spill_drain(void *arg, rel *out)
{
	spill_drain_arg *a = arg;
	int rc = GPMDB_OK;

	for (uint64_t i = 0; i < out->nrows && !rc; i++)
		rc = spill_row(a->s, a->ss, out, i, NULL, 0);
	if (rc == GPMDB_NOMEM)
		return db_err(a->s->x->db, rc, "out of memory");
	return rc ? spill_err(a->s, rc) : GPMDB_OK;
}

/* Where a spilled join's rows go: relation r, or file o's stream os. */
typedef struct jout {
	rel *r;
	spill *o;
	spill_stream *os;
} jout;

/* The rows of partition part of s (every thread's), or with bytes, the
 * bytes they take in the file. */
static uint64_t part_size(const spill *s, int part, bool bytes)
{
	uint64_t n = 0;

	for (int t = 0; t < s->nthr; t++) {
		const spill_stream *ss = s->st[t * SPILL_NPART + part];
		for (uint32_t c = 0; c < ss->n; c++)
			n += bytes ? ss->c[c].len : ss->c[c].rows;
	}
	return n;
}

/* Partition part of a's and b's rows joined (exec_join_rels) into jo.
 * Past the limit, the rows it wrote to the file are taken back. */
static int join_part(exec_ctx *x, pnode *n, spill *a, spill *b, int part,
		     jout *jo)
{
	rel *l = NULL, *rr = NULL, *out = NULL;
	uint32_t keep = 0;
	int rc;

	if (!(l = exec_rel_like(x, n->l)) || !(rr = exec_rel_like(x, n->r))) {
		rel_free(l);
		return x->db->errcode;
	}
	if ((rc = spill_read_part(a, part, l)) ||
	    (rc = spill_read_part(b, part, rr))) {
		rel_free(l);
		rel_free(rr);
		return rc;
	}
	if (jo->r) {
		if (!(rc = exec_join_rels(x, n, l, rr, NULL, NULL, &out)))
			rc = spill_append(jo->r, out);
		return rc;
	}
	/* the stream's rows so far in chunks, so that a failure can drop
	 * this partition's */
	if ((rc = stream_flush(jo->o, jo->os))) {
		rel_free(l);
		rel_free(rr);
		return rc == GPMDB_NOMEM ? db_err(x->db, rc, "out of memory")
					 : spill_err(jo->o, rc);
	}
	keep = jo->os->n;
	spill_drain_arg da = {jo->o, jo->os};
	rc = exec_join_rels(x, n, l, rr, spill_drain, &da, &out);
	if (spill_over(x, rc)) {
		jo->os->n = keep;
		jo->os->blen = 0;
		jo->os->brows = 0;
	}
	return rc;
}

static int join_parts(exec_ctx *x, pnode *n, spill *a, spill *b, int depth,
		      uint64_t prev, jout *jo);

/* The chunks of partition part of s (every thread's) into *out (*n). */
static int part_chunks(spill *s, int part, const spill_chunk ***out,
		       uint64_t *n)
{
	uint64_t k = 0;

	for (int t = 0; t < s->nthr; t++)
		k += s->st[t * SPILL_NPART + part]->n;
	if (!(*out = malloc(sizeof(**out) * (k + 1))))
		return db_err(s->x->db, GPMDB_NOMEM, "out of memory");
	*n = 0;
	for (int t = 0; t < s->nthr; t++) {
		const spill_stream *ss = s->st[t * SPILL_NPART + part];
		for (uint32_t c = 0; c < ss->n; c++)
			(*out)[(*n)++] = &ss->c[c];
	}
	return GPMDB_OK;
}

/* Chunks from *at on of c (nc) into r, up to budget bytes of the file
 * (one at least); *at moves past them. */
static int load_piece(spill *s, const spill_chunk **c, uint64_t nc,
		      uint64_t *at, size_t budget, rel *r)
{
	size_t got = 0;
	int rc = GPMDB_OK;

	while (*at < nc && !rc && (!got || got + c[*at]->len <= budget)) {
		got += c[*at]->len;
		rc = spill_load(s, c[(*at)++], r);
	}
	return rc;
}

/* The bytes of a piece of a join's partition: an eighth of what the
 * limit leaves. */
static size_t piece_budget(const exec_ctx *x)
{
	return (x->mem_limit > x->mem ? x->mem_limit - x->mem : 0) / 8;
}

/* Join n of partition part, whose rows share one key (splitting cannot
 * help): the right side in pieces of what the limit leaves, each joined
 * with the left side read again a piece at a time (block nested loops
 * over the hash join: every left row meets every right piece).  Only an
 * INNER JOIN without a residual predicate may take several right pieces
 * (the others decide a left row's fate from all its right rows at once:
 * their right side must be one piece). */
static int join_pieces(exec_ctx *x, pnode *n, spill *a, spill *b, int part,
		       jout *jo)
{
	const spill_chunk **ca = NULL, **cb = NULL;
	uint64_t na = 0, nb = 0, bi = 0;
	size_t budget = piece_budget(x);
	int rc;

	if ((rc = part_chunks(a, part, &ca, &na)) ||
	    (rc = part_chunks(b, part, &cb, &nb)))
		goto out;
	while (bi < nb && !rc) {
		uint64_t bnext = bi, ai = 0;
		while (ai < na && !rc) {
			rel *l = NULL, *rr = NULL, *o = NULL;
			uint64_t bat = bi;
			if ((rc = db_check_interrupt(x->db)))
				break;
			if (!(l = exec_rel_like(x, n->l)) ||
			    !(rr = exec_rel_like(x, n->r))) {
				rel_free(l);
				rc = x->db->errcode;
				break;
			}
			if ((rc = load_piece(b, cb, nb, &bat, budget, rr)) ||
			    (rc = load_piece(a, ca, na, &ai, budget, l))) {
				rel_free(l);
				rel_free(rr);
				break;
			}
			bnext = bat;
			if (jo->r) {
				if (!(rc = exec_join_rels(x, n, l, rr, NULL,
							  NULL, &o)))
					rc = spill_append(jo->r, o);
			} else {
				spill_drain_arg da = {jo->o, jo->os};
				rc = exec_join_rels(x, n, l, rr, spill_drain,
						    &da, &o);
			}
		}
		bi = bnext;
	}
out:
	free(ca);
	free(cb);
	return rc;
}

/* Partition part of side's file s split again by other bits of the
 * keys' hash (depth) into a file of its own (*out), a chunk at a time. */
static int join_resplit(exec_ctx *x, pnode *n, pnode *side, ast_expr **keys,
			int base, spill *s, int part, int depth, spill **out)
{
	spill *sub = NULL;
	rel *c = NULL, *k = NULL;
	uint64_t hv[VEC_BATCH];
	int rc;

	if ((rc = spill_open_ty(x, n, s->ncols, s->ty, false, 1, &sub)))
		return rc;
	*out = sub;
	if ((rc = spill_parts(sub, 1)))
		return rc;
	for (int t = 0; t < s->nthr && !rc; t++) {
		const spill_stream *ss = s->st[t * SPILL_NPART + part];
		for (uint32_t ci = 0; ci < ss->n && !rc; ci++) {
			rel_free(c);
			rel_free(k);
			k = NULL;
			if (!(c = exec_rel_like(x, side))) {
				rc = x->db->errcode;
				break;
			}
			if ((rc = spill_load(s, &ss->c[ci], c)) ||
			    (rc =
				 exec_eval_keys(x, n, base, keys, side, c, &k)))
				break;
			exec_hash_batch(k, n->nkeys, (uint32_t)c->nrows, hv,
					false);
			rc = spill_repart(sub, c, hv, depth, NULL);
		}
	}
	rel_free(c);
	rel_free(k);
	return rc ? rc : spill_flush_all(sub);
}

/* The partitions of a and b joined one at a time into jo; one that
 * alone passes the limit is split again (join_resplit) while that
 * makes it smaller than prev, the rows of the partition it came from.
 * Equal keys cannot part: one key's rows past the limit join in pieces
 * (join_pieces) when the join is INNER or its right side fits in one
 * piece, else end the statement. */
static int join_parts(exec_ctx *x, pnode *n, spill *a, spill *b, int depth,
		      uint64_t prev, jout *jo)
{
	int rc = GPMDB_OK, jt = n->jtype;

	for (int part = 0; part < SPILL_NPART && !rc; part++) {
		uint64_t nl = part_size(a, part, false),
			 nr = part_size(b, part, false);
		if ((rc = db_check_interrupt(x->db)))
			break;
		/* every row out has a left row; INNER and SEMI a right one */
		if (!nl || (!nr && (jt == JOIN_INNER || jt == JOIN_SEMI)))
			continue;
		rc = join_part(x, n, a, b, part, jo);
		if (!spill_over(x, rc))
			continue;
		spill_clear(x);
		if ((nl + nr >= prev || depth >= 8) &&
		    ((jt == JOIN_INNER && !n->pred) ||
		     part_size(b, part, true) <= piece_budget(x))) {
			rc = join_pieces(x, n, a, b, part, jo);
			continue;
		}
		if (nl + nr >= prev || depth >= 8) {
			rc = db_err(
			    x->db, GPMDB_NOMEM,
			    "query needs more than the memory limit of "
			    "%zu MiB (PRAGMA memory_limit) and cannot "
			    "spill: %llu rows share one join key (%llu "
			    "left, %llu right; partitions by the keys' "
			    "hash cannot part them)",
			    x->mem_limit >> 20, (unsigned long long)(nl + nr),
			    (unsigned long long)nl, (unsigned long long)nr);
			break;
		}
		spill *sa = NULL, *sb = NULL;
		if (!(rc = join_resplit(x, n, n->l, n->lkeys, 0, a, part,
					depth + 1, &sa)) &&
		    !(rc = join_resplit(x, n, n->r, n->rkeys, n->nkeys, b, part,
					depth + 1, &sb)))
			rc = join_parts(x, n, sa, sb, depth + 1, nl + nr, jo);
		spill_close(sa);
		spill_close(sb);
	}
	return rc;
}

/* Join n passed the limit: both inputs partitioned by their keys' hash
 * (grace hash join), then joined partition by partition (join_parts)
 * into r, or into file o's one stream: equal keys meet in one partition,
 * and a row whose key is NULL meets nothing anywhere, so INNER, LEFT,
 * SEMI and ANTI give the rows of the whole join.  NOT IN (ANTI_NULL)
 * partitions its right side first, NULL keys left out but noted: one
 * NULL there keeps no row (the left side does not run); an empty right
 * side keeps every left row (each partition's right side is empty);
 * else the left rows whose key is NULL are left out, and each
 * partition's NOT IN gives the rest. */
static int spill_join_run(exec_ctx *x, pnode *n, rel *r, spill *o)
{
	spill *a = NULL, *b = NULL;
	jout jo = {r, o, NULL};
	int rc;

	if (!spill_join_ok(x, n)) {
		spill_clear(x);
		return db_err(
		    x->db, GPMDB_NOMEM,
		    "query needs more than the memory limit of %zu MiB (PRAGMA "
		    "memory_limit) and cannot spill: %s",
		    x->mem_limit >> 20,
		    !x->gen	? "a join outside a statement's execution"
		    : !n->nkeys ? "a join without equal keys"
				: "a join read through an index");
	}
	spill_clear(x);
	n->spill_gen = x->gen;
	if (o && !(jo.os = spill_stream_new(o)))
		return db_err(x->db, GPMDB_NOMEM, "out of memory");
	if (n->jtype == JOIN_ANTI_NULL) {
		rc = spill_side(x, n, n->r, n->rkeys, n->nkeys, true, &b);
		if (!rc && !atomic_load(&b->knull))
			rc = spill_side(x, n, n->l, n->lkeys, 0,
					spill_nrows(b) > 0, &a);
	} else if (!(rc = spill_side(x, n, n->l, n->lkeys, 0, false, &a)))
		rc = spill_side(x, n, n->r, n->rkeys, n->nkeys, false, &b);
	if (!rc && a)
		rc = join_parts(x, n, a, b, 0, UINT64_MAX, &jo);
	spill_close(a);
	spill_close(b);
	if (!rc && o)
		rc = spill_flush_all(o);
	return rc;
}

int spill_join(exec_ctx *x, pnode *n, rel **out)
{
	rel *r = NULL;
	int rc;

	if (spill_join_ok(x, n) && !(r = exec_rel_like(x, n)))
		return x->db->errcode;
	if ((rc = spill_join_run(x, n, r, NULL))) {
		rel_free(r);
		return rc;
	}
	*out = r;
	return GPMDB_OK;
}

int spill_join_source(exec_ctx *x, pnode *n, spill **out)
{
	spill *o = NULL;
	exec_span sp;
	uint64_t rows = 0;
	int rc;

	/* its own figures, as exec_node would keep them */
	exec_span_begin(x, &sp);
	if (!(rc = spill_open(x, n, n, false, 1, &o)))
		rc = spill_join_run(x, n, NULL, o);
	if (!rc)
		spill_chunks(o, &rows);
	exec_span_end(x, n, &sp, rc, NULL);
	if (!rc && x->analyze)
		n->an_rows += rows;
	if (rc) {
		spill_close(o);
		return rc;
	}
	*out = o;
	return GPMDB_OK;
}

uint64_t spill_chunks(spill *s, uint64_t *rows)
{
	if (!s->flat) {
		uint64_t n = 0, k = 0;
		for (int i = 0; i < s->nst; i++)
			n += s->st[i]->n;
		if (!(s->flat = malloc(sizeof(*s->flat) * (n + 1))))
			return 0; /* no morsels: spill_source never runs */
		for (int i = 0; i < s->nst; i++)
			for (uint32_t c = 0; c < s->st[i]->n; c++) {
				s->flat[k++] = &s->st[i]->c[c];
				s->frows += s->st[i]->c[c].rows;
			}
		s->nflat = n;
	}
	if (rows)
		*rows = s->frows;
	return s->nflat;
}

int spill_source(pthr *t, uint64_t mi)
{
	spill *s = t->p->ssrc;
	rel *sb = t->sb, *b = t->b[0];
	int rc;

	pipe_reset(sb);
	if ((rc = spill_load_raw(s, s->flat[mi], sb)))
		return pipe_fail(t, rc,
				 rc == GPMDB_NOMEM ? "out of memory" : s->msg);
	for (int c = 0; c < sb->ncols; c++) {
		b->cols[c].data = sb->cols[c].data;
		b->cols[c].nulls = sb->cols[c].nulls;
	}
	b->nrows = sb->nrows;
	return GPMDB_OK;
}

void spill_free(spill *s)
{
	spill_close(s);
}

/* ---- a query's result ---- */

static int spill_result_sort(exec_ctx *x, pnode *n, spill **out);

int spill_result(exec_ctx *x, pnode *n, int rc, spill **out)
{
	pnode on; /* no keys: each thread's rows in order (spill_sink_part) */
	spill *s = NULL;
	uint64_t rows = 0;

	*out = NULL;
	if (!spill_over(x, rc))
		return rc;
	spill_clear(x);
	memset(&on, 0, sizeof(on));
	on.kind = PN_PROJECT;
	if (n->kind == PN_SORT) {
		rc = spill_result_sort(x, n, &s);
		goto done;
	}
	if ((rc = spill_open(x, n, n, false, omp_get_max_threads(), &s)))
		return rc;
	s->inorder = true;
	rc = pipe_run_spill(x, n, s, &on, NULL, 0, 0);
	if (rc == PIPE_DECLINE)
		rc = db_err(x->db, GPMDB_NOMEM,
			    "query needs more than the memory limit of %zu MiB "
			    "(PRAGMA memory_limit) and its result cannot "
			    "spill: its last operator (%s) is not a pipeline",
			    x->mem_limit >> 20, exec_op_name(n->kind));
done:
	if (rc) {
		spill_close(s);
		return rc;
	}
	spill_chunks(s, &rows);
	if (x->analyze)
		n->an_rows += rows;
	*out = s;
	return GPMDB_OK;
}

uint64_t spill_result_rows(spill *s, uint64_t *chunks)
{
	uint64_t rows = 0;

	*chunks = spill_chunks(s, &rows);
	return rows;
}

int spill_result_read(spill *s, uint64_t ci, rel **out)
{
	rel *r = rel_new(NULL, s->ncols, s->ty);
	int rc;

	*out = NULL;
	if (!r)
		return db_err(s->x->db, GPMDB_NOMEM, "out of memory");
	if ((rc = spill_load_raw(s, s->flat[ci], r))) {
		rel_free(r);
		return rc == GPMDB_NOMEM ? db_err(s->x->db, rc, "out of memory")
					 : spill_err(s, rc);
	}
	*out = r;
	return GPMDB_OK;
}

/* ---- external merge sort ---- */

typedef struct scur {
	const spill_stream *ss;
	uint32_t ci; /* the next chunk */
	rel *r;	     /* the chunk's rows, then the ordinal */
	uint64_t pos;
} scur;

typedef struct smerge {
	spill *s;
	const pnode *n;
	scur *c;
} smerge;

/* Loads cursor c's next chunk; false at the run's end. */
static int scur_next(smerge *m, scur *c, bool *more)
{
	exec_ctx *x = m->s->x;
	etype ty[m->s->ncols + 1];

	rel_free(c->r);
	c->r = NULL;
	c->pos = 0;
	*more = c->ci < c->ss->n;
	if (!*more)
		return GPMDB_OK;
	memcpy(ty, m->s->ty, sizeof(etype) * (size_t)m->s->ncols);
	ty[m->s->ncols] = et_make(BC_T_INT);
	if (!(c->r = rel_new(x, m->s->ncols + 1, ty)))
		return x->db->errcode;
	return spill_load(m->s, &c->ss->c[c->ci++], c->r);
}

/* The sort order of cursors a and b's rows: n's keys, then the input
 * order (ordinal). */
static int scur_cmp(const smerge *m, const scur *a, const scur *b)
{
	const pnode *n = m->n;
	int oc = m->s->ncols;

	for (int k = 0; k < n->nsort; k++) {
		sval u, v;
		int c = n->sort_col[k], d;
		rel_get(a->r, c, a->pos, &u);
		rel_get(b->r, c, b->pos, &v);
		if (u.t == BC_T_NULL || v.t == BC_T_NULL) {
			if (u.t == v.t)
				continue;
			d = u.t == BC_T_NULL ? -1 : 1;
			return n->nulls_first[k] ? d : -d;
		}
		if ((d = sval_cmp(&u, &v)))
			return n->desc[k] ? -d : d;
	}
	int64_t i = ((int64_t *)a->r->cols[oc].data)[a->pos],
		j = ((int64_t *)b->r->cols[oc].data)[b->pos];
	return i < j ? -1 : i > j;
}

static void heap_down(const smerge *m, int *h, int n, int i)
{
	for (;;) {
		int l = 2 * i + 1, best = i;
		if (l < n && scur_cmp(m, &m->c[h[l]], &m->c[h[best]]) < 0)
			best = l;
		if (l + 1 < n &&
		    scur_cmp(m, &m->c[h[l + 1]], &m->c[h[best]]) < 0)
			best = l + 1;
		if (best == i)
			return;
		int t = h[i];
		h[i] = h[best];
		h[best] = t;
		i = best;
	}
}

/* The runs of s merged in n's order (ties in input order): row(arg, r,
 * pos, k) for each of the first keep rows (k: its place). */
static int smerge_each(spill *s, const pnode *n, uint64_t keep,
		       int (*row)(void *arg, const rel *r, uint64_t pos,
				  uint64_t k),
		       void *arg)
{
	exec_ctx *x = s->x;
	smerge m = {s, n, calloc((size_t)s->nst + 1, sizeof(scur))};
	int *h = malloc(sizeof(int) * ((size_t)s->nst + 1)), nh = 0, rc = 0;

	if (!m.c || !h) {
		rc = db_err(x->db, GPMDB_NOMEM, "out of memory");
		goto out;
	}
	for (int i = 0; i < s->nst && !rc; i++) {
		bool more;
		m.c[i].ss = s->st[i];
		if (!(rc = scur_next(&m, &m.c[i], &more)) && more)
			h[nh++] = i;
	}
	for (int i = nh / 2 - 1; i >= 0 && !rc; i--)
		heap_down(&m, h, nh, i);
	for (uint64_t k = 0; nh && k < keep && !rc; k++) {
		scur *c = &m.c[h[0]];
		bool more = true;
		if (!(k & 65535) && (rc = db_check_interrupt(x->db)))
			break;
		if ((rc = row(arg, c->r, c->pos, k)))
			break;
		if (++c->pos == c->r->nrows)
			rc = scur_next(&m, c, &more);
		if (!more)
			h[0] = h[--nh];
		heap_down(&m, h, nh, 0);
	}
out:
	for (int i = 0; m.c && i < s->nst; i++)
		rel_free(m.c[i].r);
	free(m.c);
	free(h);
	return rc;
}

/* spill_merge's rows: those from skip on, into relation r. */
typedef struct merge_rel {
	rel *r;
	uint64_t skip;
} merge_rel;

static int merge_to_rel(void *arg, const rel *in, uint64_t pos, uint64_t k)
{
	merge_rel *a = arg;
	rel *r = a->r;
	int rc;

	if (k < a->skip)
		return GPMDB_OK;
	if ((rc = rel_reserve(r, 1)))
		return rc;
	for (int col = 0; col < r->ncols && !rc; col++) {
		sval v;
		rel_get(in, col, pos, &v);
		rc = rel_set(r, col, r->nrows, &v);
	}
	r->nrows += !rc;
	return rc;
}

/* The runs of s merged into *out (SORT n's layout): the first keep rows
 * less the first skip. */
static int spill_merge(spill *s, const pnode *n, uint64_t keep, uint64_t skip,
		       rel **out)
{
	merge_rel a = {exec_rel_like(s->x, n), skip};
	int rc;

	if (!a.r)
		return s->x->db->errcode;
	if ((rc = smerge_each(s, n, keep, merge_to_rel, &a))) {
		rel_free(a.r);
		return rc;
	}
	*out = a.r;
	return GPMDB_OK;
}

/* ORDER BY n passed the limit: its input as sorted runs of what the
 * limit leaves (each stable, rows carrying their input position), then a
 * k-way merge of the runs; its rows [want.skip, want.keep). */
int spill_sort(exec_ctx *x, pnode *n, exec_rows want, rel **out)
{
	spill *s = NULL;
	rel *in = NULL;
	uint32_t *idx = NULL;
	int rc, nt = omp_get_max_threads();

	spill_clear(x);
	if ((rc = spill_open(x, n, n->l, true, nt, &s)))
		return rc;
	rc = pipe_run_spill(x, n->l, s, n, NULL, 0, want.keep);
	if (rc == PIPE_DECLINE) {
		/* not a pipeline: its relation, sorted, as one run */
		spill_stream *ss;
		if ((rc = exec_node(x, n->l, &in)))
			goto out;
		if (!(idx = malloc(sizeof(uint32_t) * (in->nrows + 1))) ||
		    !(ss = spill_stream_new(s))) {
			rc = db_err(x->db, GPMDB_NOMEM, "out of memory");
			goto out;
		}
		uint64_t m = exec_sort_idx(in, n, want.keep, idx);
		for (uint64_t k = 0; k < m && !rc; k++)
			rc = spill_row(s, ss, in, idx[k], NULL, k);
		if (rc == GPMDB_NOMEM)
			rc = db_err(x->db, rc, "out of memory");
		else if (rc)
			rc = spill_err(s, rc);
		rel_free(in);
		in = NULL;
		if (!rc)
			rc = spill_flush_all(s);
	}
	if (!rc)
		rc = spill_merge(s, n, want.keep, want.skip, out);
out:
	free(idx);
	rel_free(in);
	spill_close(s);
	return rc;
}

/* Rows of a run: a share of what the limit leaves to each thread. */
uint64_t spill_run_rows(const exec_ctx *x, const pnode *lay, int nthr,
			uint64_t *bytes)
{
	size_t row = 8,
	       avail = x->mem_limit > x->mem ? x->mem_limit - x->mem : 0;
	uint64_t n;

	for (int c = 0; c < lay->ncols; c++)
		row += rel_width(lay->ty[c].t) + 1 +
		       (lay->ty[c].t == BC_T_TEXT ? 24 : 0);
	*bytes = avail / 4 / (size_t)(nthr > 0 ? nthr : 1);
	n = *bytes / row;
	return n < 1024 ? 1024 : n;
}

/* spill_result_sort's rows: into stream os of file o. */
typedef struct merge_file {
	spill *o;
	spill_stream *os;
} merge_file;

static int merge_to_file(void *arg, const rel *in, uint64_t pos, uint64_t k)
{
	merge_file *a = arg;
	int rc = spill_row(a->o, a->os, in, pos, NULL, 0);

	(void)k;
	if (rc == GPMDB_NOMEM)
		return db_err(a->o->x->db, rc, "out of memory");
	return rc ? spill_err(a->o, rc) : GPMDB_OK;
}

/* ORDER BY n as a query's result past the limit: its input as sorted
 * runs (as spill_sort), merged into file *out's one stream instead of a
 * relation (ties in input order, as unspilled). */
static int spill_result_sort(exec_ctx *x, pnode *n, spill **out)
{
	spill *s = NULL, *o = NULL;
	merge_file a = {NULL, NULL};
	int rc, nt = omp_get_max_threads();

	*out = NULL;
	if ((rc = spill_open(x, n, n->l, true, nt, &s)) ||
	    (rc = spill_open(x, n, n, false, 1, &o)))
		goto out;
	rc = pipe_run_spill(x, n->l, s, n, NULL, 0, UINT64_MAX);
	if (rc == PIPE_DECLINE)
		rc = db_err(x->db, GPMDB_NOMEM,
			    "query needs more than the memory limit of %zu MiB "
			    "(PRAGMA memory_limit) and its result cannot "
			    "spill: the input of its ORDER BY (%s) is not a "
			    "pipeline",
			    x->mem_limit >> 20, exec_op_name(n->l->kind));
	if (rc)
		goto out;
	a.o = o;
	if (!(a.os = spill_stream_new(o))) {
		rc = db_err(x->db, GPMDB_NOMEM, "out of memory");
		goto out;
	}
	if (!(rc = smerge_each(s, n, UINT64_MAX, merge_to_file, &a)))
		rc = spill_flush_all(o);
out:
	spill_close(s);
	if (rc) {
		spill_close(o);
		return rc;
	}
	*out = o;
	return GPMDB_OK;
}
