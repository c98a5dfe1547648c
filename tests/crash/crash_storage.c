/*
 * crash_storage.c - kill a writer at every crash point (and at random) and
 * check that recovery restores exactly a committed state.
 *
 * A child process (this program re-executed with --child) runs a
 * deterministic workload against a pool and writes the index of every
 * commit to a pipe once stg_commit has returned.  The parent replays the
 * same workload against an in-memory model, keeping the after-image of
 * every commit.  When the child dies with k commits acknowledged, the
 * reopened pool must hold the after-image of commit k or of commit k + 1
 * (the one in flight) and nothing else, pass stg_check, reopen to the same
 * state (recovery is idempotent), and open read-only without a byte of the
 * file changing.
 *
 * Kill modes: GPMDB_CRASH_AT="point:n" for every point of STG_CRASH_POINTS
 * and several n; recovery.* points by crashing the recovering process too;
 * and SIGKILL after a random delay.  Both durability modes: pmem (pool in
 * /dev/shm) and msync (pool in /tmp).  GPMDB_CRASH_SEED overrides the seed
 * (printed first), GPMDB_CRASH_JOBS the number of worker processes (4).
 * Every failure names the workload, the mode, the crash point and hit
 * count or kill delay, and what differed from which commit's image.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"

#include "../storage/crashpoints.h"
#include "../storage/storage.h"

#include "crash_model.h"

/* ---- Workloads, written once against a sink --------------------------- */

typedef struct wsink wsink;
struct wsink {
	int (*begin)(wsink *);
	int (*commit)(wsink *);
	int (*rollback)(wsink *);
	int (*create)(wsink *, const tdef *);
	int (*drop)(wsink *, const char *name);
	int (*append)(wsink *, const char *name, const batch *b, uint64_t n);
	int (*update)(wsink *, const char *name, int ncols,
		      const uint32_t *cols, const uint64_t *ids, uint64_t n,
		      const batch *vals);
	int (*del)(wsink *, const char *name, const uint64_t *ids, uint64_t n);
	/* CREATE INDEX over the table's rows (the model: no change) */
	int (*index)(wsink *, const char *table, const char *name,
		     const uint32_t *cols, int ncols);
	/* One savepoint at a time is enough for the workloads. */
	int (*savepoint)(wsink *);
	int (*rollback_to)(wsink *);
};

#define TRY(x)                                                                 \
	do {                                                                   \
		int rc_ = (x);                                                 \
		if (rc_ != GPMDB_OK)                                           \
			return rc_;                                            \
	} while (0)

static int do_append(wsink *s, const tdef *t, uint64_t n, uint64_t key,
		     uint64_t row0)
{
	stg_type types[MAXC];
	uint32_t notnull = 0;
	batch b;
	int c, rc;

	for (c = 0; c < t->ncols; c++) {
		types[c] = t->cols[c].type;
		if (t->cols[c].flags & STG_COL_NOTNULL)
			notnull |= 1u << c;
	}
	batch_make(&b, types, NULL, t->ncols, n, key, row0, notnull);
	rc = s->append(s, t->name, &b, n);
	batch_free(&b);
	return rc;
}

/* n rows of two BIGINT columns whose values count up from row0 (both
 * equal the row number): every index of the table takes them at its
 * right edge (index.append). */
static int do_append_up(wsink *s, const tdef *t, uint64_t n, uint64_t row0)
{
	static const stg_type types[2] = {STG_T_BIGINT, STG_T_BIGINT};
	batch b;
	int rc;

	batch_make(&b, types, NULL, 2, n, 0, row0, 3);
	for (int c = 0; c < 2; c++) {
		for (uint64_t r = 0; r < n; r++)
			((int64_t *)b.vals[c])[r] = (int64_t)(row0 + r);
		b.cb[c].nulls = NULL;
	}
	rc = s->append(s, t->name, &b, n);
	batch_free(&b);
	return rc;
}

/* k distinct rows of [0, nrows) with row % 3 == want3 (want3 < 0: any). */
static uint64_t pick_rows(rng *r, uint64_t nrows, int want3, uint64_t k,
			  uint64_t *out)
{
	uint64_t *cand = malloc(nrows * sizeof(uint64_t)), nc = 0, i;

	for (i = 0; i < nrows; i++)
		if (want3 < 0 || (i % 3 == 0) == (want3 == 0))
			cand[nc++] = i;
	if (k > nc)
		k = nc;
	for (i = 0; i < k; i++) {
		uint64_t j = i + rng_next(r) % (nc - i), t = cand[i];

		cand[i] = cand[j];
		cand[j] = t;
		out[i] = cand[i];
	}
	free(cand);
	return k;
}

static int do_update(wsink *s, const tdef *t, rng *r, uint64_t nrows,
		     uint64_t k, const uint32_t *cols, int ncols, uint64_t key)
{
	uint64_t *ids = malloc(k * sizeof(uint64_t));
	stg_type types[MAXC];
	uint32_t notnull = 0;
	batch b;
	int c, rc;

	/* Updates never touch rows % 3 == 0, which deletes use, so an
	 * update never meets a deleted row. */
	k = pick_rows(r, nrows, 1, k, ids);
	for (c = 0; c < ncols; c++)
		types[c] = t->cols[cols[c]].type;
	for (c = 0; c < t->ncols; c++)
		if (t->cols[c].flags & STG_COL_NOTNULL)
			notnull |= 1u << c;
	batch_make(&b, types, cols, ncols, k, key, 0, notnull);
	rc = s->update(s, t->name, ncols, cols, ids, k, &b);
	batch_free(&b);
	free(ids);
	return rc;
}

static int do_delete(wsink *s, const tdef *t, rng *r, uint64_t nrows,
		     uint64_t k)
{
	uint64_t *ids = malloc(k * sizeof(uint64_t));
	int rc;

	k = pick_rows(r, nrows, 0, k, ids);
	rc = s->del(s, t->name, ids, k);
	free(ids);
	return rc;
}

enum { W_APPEND, W_UPDATE, W_DDL, W_GROW, W_INDEX, NWORK };
static const char *const work_names[NWORK] = {"append", "update", "ddl", "grow",
					      "index"};

#define A_BS 100

/* (a) create, then batches committed one by one, some two to a commit,
 * with rolled-back appends in between. */
static int wl_append(wsink *s, int scale)
{
	tdef t = tdef_wide("ta");
	int nb = 6 * scale, bi = 0, txn = 0;

	TRY(s->begin(s));
	TRY(s->create(s, &t));
	TRY(s->commit(s));
	while (bi < nb) {
		TRY(s->begin(s));
		TRY(do_append(s, &t, A_BS, (uint64_t)bi, (uint64_t)bi * A_BS));
		bi++;
		if (txn % 4 == 2 && bi < nb) {
			TRY(do_append(s, &t, A_BS, (uint64_t)bi,
				      (uint64_t)bi * A_BS));
			bi++;
		}
		TRY(s->commit(s));
		if (txn % 5 == 3) {
			TRY(s->begin(s));
			TRY(do_append(s, &t, A_BS, 5000 + (uint64_t)txn,
				      (uint64_t)bi * A_BS));
			TRY(s->rollback(s));
		}
		txn++;
	}
	return GPMDB_OK;
}

#define U_ROWS 600

/* (b) one table, then update and delete batches, committed one by one. */
static int wl_update(wsink *s, int scale)
{
	static const uint32_t c13[] = {1, 3}, c123[] = {1, 2, 3}, c2[] = {2},
			      c1[] = {1}, c3[] = {3};
	tdef t = tdef_wide("tb");
	uint64_t nrows = U_ROWS; /* committed rows */
	int j, nj = 8 * scale;

	TRY(s->begin(s));
	TRY(s->create(s, &t));
	TRY(do_append(s, &t, U_ROWS, 7, 0));
	TRY(s->commit(s));
	for (j = 0; j < nj; j++) {
		rng r = {g_seed * 31 + (uint64_t)j};
		uint64_t key = 1000 + (uint64_t)j;

		TRY(s->begin(s));
		switch (j % 4) {
		case 0:
			TRY(do_update(s, &t, &r, nrows, 40, c13, 2, key));
			break;
		case 1:
			TRY(do_delete(s, &t, &r, nrows, 30));
			break;
		case 2: /* more threads than one block of the pretended grid */
			TRY(do_update(s, &t, &r, nrows, 300, c123, 3, key));
			break;
		default:
			TRY(do_update(s, &t, &r, nrows, 20, c2, 1, key));
			TRY(do_delete(s, &t, &r, nrows, 10));
			break;
		}
		TRY(s->commit(s));
		if (j % 4 == 0) {
			/* Rows logged twice in one transaction (the oldest
			 * image must win on undo), and a statement rolled
			 * back to a savepoint. */
			TRY(s->begin(s));
			TRY(do_update(s, &t, &r, nrows, 60, c1, 1, key + 100));
			TRY(s->savepoint(s));
			TRY(do_update(s, &t, &r, nrows, 60, c123, 3,
				      key + 200));
			TRY(do_delete(s, &t, &r, nrows, 10));
			TRY(s->rollback_to(s));
			TRY(do_update(s, &t, &r, nrows, 60, c13, 2, key + 300));
			TRY(s->commit(s));
		}
		if (j % 4 == 1) {
			/* Appended rows updated and deleted before their
			 * append commits. */
			TRY(s->begin(s));
			TRY(do_append(s, &t, 40, key, nrows));
			TRY(do_update(s, &t, &r, nrows + 40, 30, c2, 1,
				      key + 400));
			TRY(do_delete(s, &t, &r, nrows + 40, 8));
			TRY(s->commit(s));
			nrows += 40;
		}
		if (j % 5 == 4) {
			TRY(s->begin(s));
			TRY(do_update(s, &t, &r, nrows, 50, c1, 1, key + 500));
			TRY(do_update(s, &t, &r, nrows, 50, c13, 2, key + 600));
			TRY(do_delete(s, &t, &r, nrows, 5));
			TRY(do_append(s, &t, 30, key + 700, nrows));
			TRY(do_update(s, &t, &r, nrows + 30, 20, c3, 1,
				      key + 800));
			TRY(s->rollback(s));
		}
	}
	return GPMDB_OK;
}

/* (c) create/drop cycles, a drop and re-create in one transaction, and
 * rolled-back creates. */
static int wl_ddl(wsink *s, int scale)
{
	int i, nc = 5 * scale;
	char name[32], prev[32];

	for (i = 0; i < nc; i++) {
		tdef t;

		snprintf(name, sizeof(name), "c%d", i);
		t = i % 2 ? tdef_pair(name, STG_T_INT, STG_T_DOUBLE)
			  : tdef_pair(name, STG_T_BIGINT, STG_T_TEXT);
		TRY(s->begin(s));
		TRY(s->create(s, &t));
		TRY(do_append(s, &t, 40 + 10 * (uint64_t)i, 100 + (uint64_t)i,
			      0));
		TRY(s->commit(s));
		if (i > 0) {
			snprintf(prev, sizeof(prev), "c%d", i - 1);
			TRY(s->begin(s));
			TRY(s->drop(s, prev));
			TRY(s->commit(s));
		}
		if (i % 3 == 2) {
			tdef u = tdef_pair(name, STG_T_TEXT, STG_T_BIGINT);

			TRY(s->begin(s));
			TRY(s->drop(s, name));
			TRY(s->create(s, &u));
			TRY(do_append(s, &u, 5, 200 + (uint64_t)i, 0));
			TRY(s->commit(s));
		}
		if (i % 4 == 1) {
			tdef tmp = tdef_pair("tmp", STG_T_BIGINT, STG_T_TEXT);

			TRY(s->begin(s));
			TRY(s->create(s, &tmp));
			TRY(do_append(s, &tmp, 20, 300 + (uint64_t)i, 0));
			TRY(s->rollback(s));
		}
	}
	return GPMDB_OK;
}

#define G_BS 20000

/* (d) appends large enough to grow a small pool several times, one of
 * them rolled back after growing. */
static int wl_grow(wsink *s, int scale)
{
	tdef t = tdef_pair("td", STG_T_BIGINT, STG_T_BIGINT);
	int b, nb = 4 * scale;

	t.cols[0].flags = STG_COL_NOTNULL;
	TRY(s->begin(s));
	TRY(s->create(s, &t));
	TRY(s->commit(s));
	for (b = 0; b < nb; b++) {
		TRY(s->begin(s));
		TRY(do_append(s, &t, G_BS, (uint64_t)b, (uint64_t)b * G_BS));
		TRY(s->commit(s));
		if (b == 1) {
			TRY(s->begin(s));
			TRY(do_append(s, &t, 2 * G_BS, 900,
				      (uint64_t)(b + 1) * G_BS));
			TRY(s->rollback(s));
		}
	}
	/* Updates and deletes spread over every tablet, one committed and
	 * one rolled back. */
	{
		static const uint32_t c1[] = {1}, c01[] = {0, 1};
		uint64_t nrows = (uint64_t)nb * G_BS;
		rng r = {g_seed * 77};

		TRY(s->begin(s));
		TRY(do_update(s, &t, &r, nrows, 500, c1, 1, 5000));
		TRY(do_delete(s, &t, &r, nrows, 100));
		TRY(s->commit(s));
		TRY(s->begin(s));
		TRY(do_update(s, &t, &r, nrows, 300, c01, 2, 5001));
		TRY(do_delete(s, &t, &r, nrows, 50));
		TRY(s->rollback(s));
	}
	return GPMDB_OK;
}

#define X_ROWS 3000

/* (e) indexes over existing rows (CREATE INDEX: a bulk build, one on a
 * TEXT column), batch INSERTs into the indexed table (large: a rebuild of
 * the trees; small: entries one by one), UPDATEs of key columns (small
 * and large), deletes, a rolled-back batch and a rolled-back statement;
 * batches of keys counting up into another table (added at the trees'
 * right edge), one rolled back.  Each table also has the store sink's
 * indexes from its creation. */
static int wl_index(wsink *s, int scale)
{
	static const uint32_t c0[] = {0}, c1[] = {1}, c10[] = {1, 0},
			      c01[] = {0, 1};
	tdef t = tdef_pair("tx", STG_T_BIGINT, STG_T_TEXT),
	     u = tdef_pair("tz", STG_T_BIGINT, STG_T_BIGINT);
	uint64_t nrows = X_ROWS;
	int j, nj = 3 * scale;

	TRY(s->begin(s));
	TRY(s->create(s, &t));
	TRY(do_append(s, &t, X_ROWS, 31, 0));
	TRY(s->commit(s));
	TRY(s->begin(s));
	TRY(s->index(s, "tx", "tx_y", c1, 1));
	TRY(s->commit(s));
	/* keys counting up: batches at the trees' right edge, the last
	 * rolled back */
	TRY(s->begin(s));
	TRY(s->create(s, &u));
	TRY(do_append_up(s, &u, X_ROWS, 0));
	TRY(s->commit(s));
	for (j = 0; j < 4; j++) {
		TRY(s->begin(s));
		TRY(do_append_up(s, &u, 1500, X_ROWS + 1500 * (uint64_t)j));
		if (j < 3)
			TRY(s->commit(s));
		else
			TRY(s->rollback(s));
	}
	TRY(s->begin(s));
	TRY(s->index(s, "tx", "tx_yx", c10, 2));
	TRY(do_append(s, &t, 2500, 32, nrows));
	TRY(s->commit(s));
	nrows += 2500;
	for (j = 0; j < nj; j++) {
		rng r = {g_seed * 53 + (uint64_t)j};
		uint64_t key = 3000 + 10 * (uint64_t)j;

		TRY(s->begin(s));
		TRY(do_update(s, &t, &r, nrows, 200, c0, 1, key));
		TRY(s->commit(s));
		TRY(s->begin(s));
		TRY(do_update(s, &t, &r, nrows, 1500, c01, 2, key + 1));
		TRY(do_delete(s, &t, &r, nrows, 150));
		TRY(s->commit(s));
		TRY(s->begin(s));
		TRY(do_append(s, &t, 40, key + 2, nrows));
		TRY(s->savepoint(s));
		TRY(do_update(s, &t, &r, nrows, 100, c1, 1, key + 3));
		TRY(s->rollback_to(s));
		TRY(do_append(s, &t, 1200, key + 4, nrows + 40));
		TRY(s->commit(s));
		nrows += 1240;
		TRY(s->begin(s));
		TRY(do_append(s, &t, 1500, key + 5, nrows));
		TRY(do_update(s, &t, &r, nrows, 300, c0, 1, key + 6));
		TRY(s->rollback(s));
	}
	return GPMDB_OK;
}

static int run_workload(int w, wsink *s, int scale)
{
	switch (w) {
	case W_APPEND:
		return wl_append(s, scale);
	case W_UPDATE:
		return wl_update(s, scale);
	case W_DDL:
		return wl_ddl(s, scale);
	case W_INDEX:
		return wl_index(s, scale);
	default:
		return wl_grow(s, scale);
	}
}

static uint64_t initial_size_for(int w)
{
	return w == W_GROW ? 1ull << 20 : 2ull << 20;
}

/* ---- Model sink: records the after-image of every commit -------------- */

typedef struct {
	wsink s;
	mstate work;
	mstate sp;   /* the work at the savepoint */
	mstate *img; /* img[i]: after commit i; img[0]: the empty pool */
	int nimg, cap;
} model_sink;

static int m_begin(wsink *s)
{
	(void)s;
	return GPMDB_OK;
}

static int m_commit(wsink *s)
{
	model_sink *m = (model_sink *)s;

	if (m->nimg == m->cap) {
		m->cap = m->cap ? 2 * m->cap : 16;
		m->img = realloc(m->img, (size_t)m->cap * sizeof(mstate));
	}
	mstate_copy(&m->img[m->nimg++], &m->work);
	return GPMDB_OK;
}

static int m_rollback(wsink *s)
{
	model_sink *m = (model_sink *)s;

	mstate_free(&m->work);
	mstate_copy(&m->work, &m->img[m->nimg - 1]);
	return GPMDB_OK;
}

static int m_create(wsink *s, const tdef *t)
{
	model_sink *m = (model_sink *)s;
	mtable *x;
	int c;

	if (m->work.n == MAXT || mstate_find(&m->work, t->name) >= 0)
		return GPMDB_INTERNAL;
	x = &m->work.t[m->work.n++];
	memset(x, 0, sizeof(*x));
	snprintf(x->name, sizeof(x->name), "%s", t->name);
	x->ncols = t->ncols;
	for (c = 0; c < t->ncols; c++)
		x->types[c] = t->cols[c].type;
	mtable_reserve(x, 16);
	return GPMDB_OK;
}

static int m_drop(wsink *s, const char *name)
{
	model_sink *m = (model_sink *)s;
	int i = mstate_find(&m->work, name);

	if (i < 0)
		return GPMDB_NOTFOUND;
	mtable_free(&m->work.t[i]);
	memmove(&m->work.t[i], &m->work.t[i + 1],
		(size_t)(m->work.n - i - 1) * sizeof(mtable));
	m->work.n--;
	return GPMDB_OK;
}

static int m_append(wsink *s, const char *name, const batch *b, uint64_t n)
{
	model_sink *m = (model_sink *)s;
	int i = mstate_find(&m->work, name), c;
	mtable *x;
	uint64_t r;

	if (i < 0)
		return GPMDB_NOTFOUND;
	x = &m->work.t[i];
	mtable_reserve(x, x->nrows + n);
	for (r = 0; r < n; r++) {
		for (c = 0; c < x->ncols; c++) {
			const uint32_t *nb = b->cb[c].nulls;

			x->nulls[c][x->nrows + r] =
			    nb ? (nb[r / 32] >> (r % 32)) & 1 : 0;
			x->vals[c][x->nrows + r] =
			    value_of(x->types[c], b->cb[c].values, r);
		}
		x->del[x->nrows + r] = 0;
	}
	x->nrows += n;
	return GPMDB_OK;
}

static int m_update(wsink *s, const char *name, int ncols, const uint32_t *cols,
		    const uint64_t *ids, uint64_t n, const batch *b)
{
	model_sink *m = (model_sink *)s;
	int i = mstate_find(&m->work, name), c;
	mtable *x;
	uint64_t r;

	if (i < 0)
		return GPMDB_NOTFOUND;
	x = &m->work.t[i];
	for (r = 0; r < n; r++)
		for (c = 0; c < ncols; c++) {
			const uint32_t *nb = b->cb[c].nulls;
			uint32_t cn = cols[c];

			x->nulls[cn][ids[r]] =
			    nb ? (nb[r / 32] >> (r % 32)) & 1 : 0;
			x->vals[cn][ids[r]] =
			    value_of(x->types[cn], b->cb[c].values, r);
		}
	return GPMDB_OK;
}

static int m_del(wsink *s, const char *name, const uint64_t *ids, uint64_t n)
{
	model_sink *m = (model_sink *)s;
	int i = mstate_find(&m->work, name);
	uint64_t r;

	if (i < 0)
		return GPMDB_NOTFOUND;
	for (r = 0; r < n; r++)
		m->work.t[i].del[ids[r]] = 1;
	return GPMDB_OK;
}

static int m_index(wsink *s, const char *table, const char *name,
		   const uint32_t *cols, int ncols)
{
	(void)s;
	(void)table;
	(void)name;
	(void)cols;
	(void)ncols;
	return GPMDB_OK;
}

static int m_savepoint(wsink *s)
{
	model_sink *m = (model_sink *)s;

	mstate_free(&m->sp);
	mstate_copy(&m->sp, &m->work);
	return GPMDB_OK;
}

static int m_rollback_to(wsink *s)
{
	model_sink *m = (model_sink *)s;

	mstate_free(&m->work);
	mstate_copy(&m->work, &m->sp);
	return GPMDB_OK;
}

/* The images of workload w at a scale, computed once. */
typedef struct {
	mstate *img;
	int nimg; /* commits + 1 */
} images;

static images img_cache[NWORK][4];

static const images *model_images(int w, int scale)
{
	images *im = &img_cache[w][scale];
	model_sink m;
	int i;

	if (im->img)
		return im;
	memset(&m, 0, sizeof(m));
	m.s = (wsink){m_begin, m_commit,    m_rollback,	  m_create,
		      m_drop,  m_append,    m_update,	  m_del,
		      m_index, m_savepoint, m_rollback_to};
	m_commit(&m.s); /* image 0: the freshly created pool */
	if (run_workload(w, &m.s, scale) != GPMDB_OK) {
		fprintf(stderr, "model of workload %s failed\n", work_names[w]);
		exit(2);
	}
	mstate_free(&m.work);
	mstate_free(&m.sp);
	/* Sorted by name, as actual states are. */
	for (i = 0; i < m.nimg; i++)
		qsort(m.img[i].t, (size_t)m.img[i].n, sizeof(mtable),
		      cmp_tables);
	im->img = m.img;
	im->nimg = m.nimg;
	return im;
}

/* ---- Storage sink: the child ------------------------------------------ */

typedef struct {
	wsink s;
	stg_pool *p;
	stg_mark mark;
	int ackfd;
	int32_t ncommits;
	const char *what;
} store_sink;

static int st_fail(store_sink *ss, const char *op, int rc)
{
	fprintf(stderr, "child: %s failed after %d commits: rc %d: %s\n", op,
		(int)ss->ncommits, rc, stg_errmsg(ss->p));
	return rc;
}

static int st_begin(wsink *s)
{
	store_sink *ss = (store_sink *)s;
	int rc = stg_begin(ss->p);

	return rc ? st_fail(ss, "stg_begin", rc) : rc;
}

static int st_commit(wsink *s)
{
	store_sink *ss = (store_sink *)s;
	int rc = stg_commit(ss->p);

	if (rc)
		return st_fail(ss, "stg_commit", rc);
	/* Acknowledged only now that the commit has returned. */
	ss->ncommits++;
	if (write(ss->ackfd, &ss->ncommits, sizeof(ss->ncommits)) !=
	    sizeof(ss->ncommits))
		return GPMDB_IOERR;
	return GPMDB_OK;
}

static int st_rollback(wsink *s)
{
	store_sink *ss = (store_sink *)s;
	int rc = stg_rollback(ss->p);

	return rc ? st_fail(ss, "stg_rollback", rc) : rc;
}

static int st_create(wsink *s, const tdef *t)
{
	store_sink *ss = (store_sink *)s;
	uint32_t id;
	int rc =
	    stg_table_create(ss->p, t->name, t->cols, t->ncols, t->sql, &id);
	char ix[64];
	uint32_t c0 = 0, c10[2] = {1, 0};

	if (rc)
		return st_fail(ss, "stg_table_create", rc);
	/* Every table has indexes (non-unique: the workloads repeat
	 * values), so every write below changes B+-trees as well: after
	 * recovery stg_check finds each index equal to its table. */
	snprintf(ix, sizeof(ix), "%s_i0", t->name);
	rc = stg_index_create(ss->p, id, ix, &c0, 1, false, STG_IX_CREATED,
			      NULL, NULL);
	if (rc == GPMDB_OK && t->ncols > 1) {
		snprintf(ix, sizeof(ix), "%s_i10", t->name);
		rc = stg_index_create(ss->p, id, ix, c10, 2, false,
				      STG_IX_CREATED, NULL, NULL);
	}
	return rc ? st_fail(ss, "stg_index_create", rc) : rc;
}

static int st_find(store_sink *ss, const char *name, uint32_t *id)
{
	int rc = stg_table_find(ss->p, name, id);

	return rc ? st_fail(ss, "stg_table_find", rc) : rc;
}

static int st_drop(wsink *s, const char *name)
{
	store_sink *ss = (store_sink *)s;
	uint32_t id;
	int rc;

	TRY(st_find(ss, name, &id));
	rc = stg_table_drop(ss->p, id);
	return rc ? st_fail(ss, "stg_table_drop", rc) : rc;
}

static int st_append(wsink *s, const char *name, const batch *b, uint64_t n)
{
	store_sink *ss = (store_sink *)s;
	uint32_t id;
	int rc;

	TRY(st_find(ss, name, &id));
	rc = stg_append(ss->p, id, b->cb, n);
	return rc ? st_fail(ss, "stg_append", rc) : rc;
}

static int st_update(wsink *s, const char *name, int ncols,
		     const uint32_t *cols, const uint64_t *ids, uint64_t n,
		     const batch *b)
{
	store_sink *ss = (store_sink *)s;
	uint32_t id;
	int rc;

	TRY(st_find(ss, name, &id));
	rc = stg_update(ss->p, id, ncols, cols, ids, n, b->cb);
	return rc ? st_fail(ss, "stg_update", rc) : rc;
}

static int st_del(wsink *s, const char *name, const uint64_t *ids, uint64_t n)
{
	store_sink *ss = (store_sink *)s;
	uint32_t id;
	int rc;

	TRY(st_find(ss, name, &id));
	rc = stg_delete(ss->p, id, ids, n);
	return rc ? st_fail(ss, "stg_delete", rc) : rc;
}

static int st_index(wsink *s, const char *table, const char *name,
		    const uint32_t *cols, int ncols)
{
	store_sink *ss = (store_sink *)s;
	uint32_t id;
	int rc = st_find(ss, table, &id);

	if (rc == GPMDB_OK)
		rc = stg_index_create(ss->p, id, name, cols, ncols, false,
				      STG_IX_CREATED, NULL, NULL);
	return rc ? st_fail(ss, "stg_index_create", rc) : rc;
}

static int st_savepoint(wsink *s)
{
	store_sink *ss = (store_sink *)s;
	int rc = stg_savepoint(ss->p, &ss->mark);

	return rc ? st_fail(ss, "stg_savepoint", rc) : rc;
}

static int st_rollback_to(wsink *s)
{
	store_sink *ss = (store_sink *)s;
	int rc = stg_rollback_to(ss->p, &ss->mark);

	return rc ? st_fail(ss, "stg_rollback_to", rc) : rc;
}

static stg_durability dur_of(int mode)
{
	return mode == 0 ? STG_DUR_PMEM : STG_DUR_MSYNC;
}

static const char *const mode_names[2] = {"pmem", "msync"};

static int child_main(int w, int mode, const char *path, int ackfd, int scale)
{
	stg_open_opts o = {0};
	store_sink ss;
	char err[256];
	int rc;

	memset(&ss, 0, sizeof(ss));
	ss.s = (wsink){st_begin, st_commit,    st_rollback,   st_create,
		       st_drop,	 st_append,    st_update,     st_del,
		       st_index, st_savepoint, st_rollback_to};
	ss.ackfd = ackfd;
	/* A hung child would hang the whole test: SIGALRM reports it. */
	alarm(60);
	o.durability = dur_of(mode);
	rc = stg_open(path, &o, &ss.p, err, sizeof(err));
	if (rc != GPMDB_OK) {
		fprintf(stderr, "child: stg_open %s: %s\n", path, err);
		return 3;
	}
	rc = run_workload(w, &ss.s, scale);
	stg_close(ss.p);
	return rc == GPMDB_OK ? 0 : 3;
}

/* Opens the pool (running recovery) and closes it. */
static int recover_main(int mode, const char *path)
{
	stg_open_opts o = {0};
	stg_pool *p;
	char err[256];

	alarm(60);
	o.durability = dur_of(mode);
	if (stg_open(path, &o, &p, err, sizeof(err)) != GPMDB_OK) {
		fprintf(stderr, "recovery child: %s\n", err);
		return 4;
	}
	stg_close(p);
	return 0;
}

/* ---- Reading the actual state ----------------------------------------- */

static int read_state(stg_pool *p, mstate *out, char *err, size_t errlen)
{
	stg_object *objs = NULL;
	int nobj = 0, i, rc;

	memset(out, 0, sizeof(*out));
	rc = stg_objects_list(p, &objs, &nobj);
	if (rc != GPMDB_OK) {
		snprintf(err, errlen, "stg_objects_list: rc %d: %s", rc,
			 stg_errmsg(p));
		return rc;
	}
	for (i = 0; i < nobj && rc == GPMDB_OK; i++) {
		stg_schema *sc = NULL;
		mtable *x;
		uint32_t nt = 0, ti;
		uint64_t ndel = 0, r;
		int c;

		if (objs[i].kind != STG_OBJ_TABLE)
			continue;
		if (out->n == MAXT) {
			snprintf(err, errlen, "more than %d tables", MAXT);
			rc = GPMDB_INTERNAL;
			break;
		}
		x = &out->t[out->n++];
		memset(x, 0, sizeof(*x));
		snprintf(x->name, sizeof(x->name), "%s", objs[i].name);
		rc = stg_table_schema(p, objs[i].table_id, &sc);
		if (rc != GPMDB_OK) {
			snprintf(err, errlen, "stg_table_schema %s: rc %d: %s",
				 x->name, rc, stg_errmsg(p));
			break;
		}
		x->ncols = sc->ncols > MAXC ? MAXC : sc->ncols;
		for (c = 0; c < x->ncols; c++)
			x->types[c] = sc->cols[c].type;
		stg_schema_free(sc);
		x->nrows = stg_row_count(p, objs[i].table_id);
		mtable_reserve(x, x->nrows ? x->nrows : 1);
		for (c = 0; c < x->ncols && x->nrows; c++) {
			size_t w = x->types[c] == STG_T_TEXT
				       ? sizeof(stg_text)
				       : stg_type_width(x->types[c]);
			void *buf = malloc(x->nrows * w);
			uint32_t *nb = calloc((x->nrows + 31) / 32, 4);

			rc = stg_read(p, objs[i].table_id, (uint32_t)c, 0,
				      x->nrows, buf, nb);
			if (rc == GPMDB_OK)
				for (r = 0; r < x->nrows; r++) {
					x->nulls[c][r] =
					    (nb[r / 32] >> (r % 32)) & 1;
					x->vals[c][r] =
					    value_of(x->types[c], buf, r);
				}
			else
				snprintf(err, errlen,
					 "stg_read %s col %d: rc %d: %s",
					 x->name, c, rc, stg_errmsg(p));
			free(buf);
			free(nb);
			if (rc != GPMDB_OK)
				break;
		}
		if (rc != GPMDB_OK)
			break;
		/* Deleted bits come from the tablets' bitmaps. */
		memset(x->del, 0, x->nrows);
		rc = stg_tablet_count(p, objs[i].table_id, &nt);
		for (ti = 0; ti < nt && rc == GPMDB_OK; ti++) {
			stg_tablet_view v;

			rc = stg_tablet_get(p, objs[i].table_id, ti, &v);
			if (rc != GPMDB_OK)
				break;
			for (r = 0; r < v.nrows; r++) {
				uint64_t row = v.first_row + r;

				if (row >= x->nrows) {
					snprintf(
					    err, errlen,
					    "%s: tablet %u row %llu beyond "
					    "the row count %llu",
					    x->name, ti,
					    (unsigned long long)row,
					    (unsigned long long)x->nrows);
					rc = GPMDB_CORRUPT;
					break;
				}
				x->del[row] =
				    (v.deleted[r / 32] >> (r % 32)) & 1;
				ndel += x->del[row];
			}
		}
		if (rc != GPMDB_OK) {
			if (!err[0])
				snprintf(err, errlen,
					 "tablets of %s: rc %d: %s", x->name,
					 rc, stg_errmsg(p));
			break;
		}
		if (ndel != stg_deleted_count(p, objs[i].table_id)) {
			snprintf(err, errlen,
				 "%s: stg_deleted_count %llu, bitmaps say "
				 "%llu",
				 x->name,
				 (unsigned long long)stg_deleted_count(
				     p, objs[i].table_id),
				 (unsigned long long)ndel);
			rc = GPMDB_CORRUPT;
		}
	}
	stg_objects_free(objs, nobj);
	qsort(out->t, (size_t)out->n, sizeof(mtable), cmp_tables);
	return rc;
}

/* ---- Files ------------------------------------------------------------ */

typedef struct {
	uint8_t *data;
	size_t len;
} fbytes;

static int file_read(const char *path, fbytes *f)
{
	struct stat st;
	int fd = open(path, O_RDONLY);
	size_t got = 0;

	f->data = NULL;
	f->len = 0;
	if (fd < 0 || fstat(fd, &st) != 0) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	f->len = (size_t)st.st_size;
	f->data = malloc(f->len ? f->len : 1);
	while (got < f->len) {
		ssize_t n = pread(fd, f->data + got, f->len - got, (off_t)got);

		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	return got == f->len ? 0 : -1;
}

/* Offset of the first difference, or -1 when equal. */
static long long file_diff(const fbytes *a, const fbytes *b)
{
	size_t i, n = a->len < b->len ? a->len : b->len;

	for (i = 0; i < n; i++)
		if (a->data[i] != b->data[i])
			return (long long)i;
	return a->len == b->len ? -1 : (long long)n;
}

/* ---- One run ---------------------------------------------------------- */

static char self_exe[4096];
static char pool_paths[2][256];

#define NPOINTS_MAX 64
static const char *const point_names[] = {
#define X_NAME(n, d) n,
    STG_CRASH_POINTS(X_NAME)
#undef X_NAME
};
#define NPOINTS ((int)(sizeof(point_names) / sizeof(point_names[0])))
static bool point_hit[NPOINTS_MAX];
static int nruns, nkilled;

static void mark_hit(const char *crash_at)
{
	int i;

	for (i = 0; i < NPOINTS; i++) {
		size_t l = strlen(point_names[i]);

		if (strncmp(crash_at, point_names[i], l) == 0 &&
		    crash_at[l] == ':')
			point_hit[i] = true;
	}
}

/* "exit 3", "signal 14 (Alarm clock)": for failure messages. */
static const char *status_str(int st)
{
	static char buf[64];

	if (WIFSIGNALED(st))
		snprintf(buf, sizeof(buf), "signal %d (%s)", WTERMSIG(st),
			 strsignal(WTERMSIG(st)));
	else
		snprintf(buf, sizeof(buf), "exit %d", WEXITSTATUS(st));
	return buf;
}

static pid_t spawn(char *const argv[], const char *crash_at, int close_fd)
{
	pid_t pid;

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid == 0) {
		if (close_fd >= 0)
			close(close_fd);
		if (crash_at)
			setenv("GPMDB_CRASH_AT", crash_at, 1);
		else
			unsetenv("GPMDB_CRASH_AT");
		execv(self_exe, argv);
		_exit(127);
	}
	return pid;
}

typedef struct {
	int w, mode, scale;
	const char *crash_at;  /* NULL: none */
	long kill_after_us;    /* < 0: none */
	const char *rec_crash; /* crash point for a recovering child */
} run_spec;

static void unlink_wal(const char *pool)
{
	char w[300];

	snprintf(w, sizeof(w), "%s-wal", pool);
	unlink(w);
}

static void describe(const run_spec *rs, char *buf, size_t len)
{
	snprintf(buf, len, "[%s %s %s%s%s kill=%ldus]", work_names[rs->w],
		 mode_names[rs->mode], rs->crash_at ? rs->crash_at : "-",
		 rs->rec_crash ? " then " : "",
		 rs->rec_crash ? rs->rec_crash : "", rs->kill_after_us);
}

/* Which images may recovery produce?  *lo..*hi, inclusive. */
static void allowed_images(const run_spec *rs, int k, int total, int *lo,
			   int *hi)
{
	*lo = k;
	*hi = k < total ? k + 1 : k;
	if (!rs->crash_at || rs->kill_after_us >= 0)
		return;
	/* Points before the commit point of the transaction in flight leave
	 * it uncommitted; points after it leave it committed.  pmem: the
	 * commit record.  msync (storage/wal.c): the frame in the commit
	 * log (a kill, unlike a power cut, keeps what was written before
	 * the fdatasync) or, for a big commit, the commit record written in
	 * place after its data. */
	static const char *const before[] = {
	    "commit.begin:", "wal.fresh:", "wal.big_ckpt:", "wal.big_undo:",
	    "wal.big_data:"};
	static const char *const after[] = {
	    "wal.frame:",      "wal.commit:",	  "wal.inplace:",
	    "wal.checkpoint:", "wal.big_record:", "wal.big_free:"};
	for (size_t i = 0; i < sizeof(before) / sizeof(before[0]); i++)
		if (strncmp(rs->crash_at, before[i], strlen(before[i])) == 0)
			*hi = k;
	for (size_t i = 0; i < sizeof(after) / sizeof(after[0]); i++)
		if (strncmp(rs->crash_at, after[i], strlen(after[i])) == 0)
			*lo = *hi;
	if (strncmp(rs->crash_at, "commit.record:", 14) == 0 ||
	    strncmp(rs->crash_at, "commit.free:", 12) == 0) {
		if (rs->mode == 0)
			*lo = *hi;
		else
			*hi = k; /* msync: before the frame */
	}
}

static void open_opts(int mode, bool ro, stg_open_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->durability = dur_of(mode);
	o->readonly = ro;
}

/* Runs a child that only opens (recovers) the pool, with a crash point. */
static bool run_recovery_child(const run_spec *rs, const char *path,
			       const char *d)
{
	char mbuf[8];
	char *argv[] = {self_exe, "--recover", mbuf, (char *)path, NULL};
	pid_t pid;
	int st;

	snprintf(mbuf, sizeof(mbuf), "%d", rs->mode);
	pid = spawn(argv, rs->rec_crash, -1);
	if (pid < 0 || waitpid(pid, &st, 0) != pid) {
		CHECKF(0, "%s: cannot run the recovery child", d);
		return false;
	}
	if (WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL) {
		mark_hit(rs->rec_crash);
		return true;
	}
	CHECKF(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s: recovery child: %s",
	       d, status_str(st));
	return false;
}

/* Compares the recovered state with the allowed images; reports. */
static bool check_against_model(const char *d, const char *when,
				const mstate *act, const images *im, int lo,
				int hi)
{
	char diff[2][400];
	int i;

	for (i = lo; i <= hi; i++)
		if (!mstate_diff(act, &im->img[i], diff[i - lo],
				 sizeof(diff[0])))
			return true;
	if (lo == hi)
		CHECKF(0, "%s %s: not the after-image of commit %d: %s", d,
		       when, lo, diff[0]);
	else
		CHECKF(0,
		       "%s %s: neither commit %d nor %d: vs %d: %s; vs %d: %s",
		       d, when, lo, hi, lo, diff[0], hi, diff[1]);
	return false;
}

static void run_one(const run_spec *rs, bool *child_killed)
{
	const char *path = pool_paths[rs->mode];
	const images *im = model_images(rs->w, rs->scale);
	int total = im->nimg - 1;
	char d[160], err[512] = "", wbuf[8], mbuf[8], fbuf[12], sbuf[8];
	char *argv[] = {self_exe,     "--child", wbuf, mbuf,
			(char *)path, fbuf,	 sbuf, NULL};
	stg_open_opts o;
	stg_pool *p = NULL;
	mstate act, again;
	fbytes before, after;
	int fds[2], st, k = 0, lo, hi, rc;
	int32_t ack;
	pid_t pid;
	char *rep = NULL;
	bool killed;

	*child_killed = false;
	nruns++;
	describe(rs, d, sizeof(d));
	memset(&act, 0, sizeof(act));
	memset(&again, 0, sizeof(again));

	/* A fresh pool. */
	unlink(path);
	unlink_wal(path);
	open_opts(rs->mode, false, &o);
	o.create = true;
	o.initial_size = initial_size_for(rs->w);
	rc = stg_open(path, &o, &p, err, sizeof(err));
	CHECKF(rc == GPMDB_OK, "%s: creating the pool: %s", d, err);
	if (rc != GPMDB_OK)
		return;
	stg_close(p);
	p = NULL;

	/* The child, acknowledging commits through the pipe. */
	if (pipe(fds) != 0) {
		CHECKF(0, "%s: pipe: %s", d, strerror(errno));
		return;
	}
	snprintf(wbuf, sizeof(wbuf), "%d", rs->w);
	snprintf(mbuf, sizeof(mbuf), "%d", rs->mode);
	snprintf(fbuf, sizeof(fbuf), "%d", fds[1]);
	snprintf(sbuf, sizeof(sbuf), "%d", rs->scale);
	pid = spawn(argv, rs->crash_at, fds[0]);
	close(fds[1]);
	if (pid < 0) {
		close(fds[0]);
		CHECKF(0, "%s: fork: %s", d, strerror(errno));
		return;
	}
	if (rs->kill_after_us >= 0) {
		struct timespec ts = {rs->kill_after_us / 1000000,
				      (rs->kill_after_us % 1000000) * 1000};

		nanosleep(&ts, NULL);
		kill(pid, SIGKILL);
	}
	while (read(fds[0], &ack, sizeof(ack)) == sizeof(ack)) {
		CHECKF(ack == k + 1, "%s: ack %d after %d", d, (int)ack, k);
		k = ack;
	}
	close(fds[0]);
	waitpid(pid, &st, 0);
	killed = WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL;
	if (!killed) {
		CHECKF(WIFEXITED(st) && WEXITSTATUS(st) == 0,
		       "%s: child failed (%s) after %d commits", d,
		       status_str(st), k);
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
			return;
		CHECKF(k == total, "%s: child finished with %d commits of %d",
		       d, k, total);
	} else {
		nkilled++;
		if (rs->crash_at && rs->kill_after_us < 0)
			mark_hit(rs->crash_at);
	}
	*child_killed = killed;
	allowed_images(rs, k, total, &lo, &hi);

	if (killed && rs->rec_crash) {
		/* Crash the recovery itself, maybe twice in a row, then let
		 * the parent recover what they left. */
		if (run_recovery_child(rs, path, d))
			run_recovery_child(rs, path, d);
	} else if (killed) {
		/* A reader of a pool a writer left crashed writes nothing. */
		file_read(path, &before);
		open_opts(rs->mode, true, &o);
		rc = stg_open(path, &o, &p, err, sizeof(err));
		if (rc == GPMDB_OK) {
			if (read_state(p, &act, err, sizeof(err)) == GPMDB_OK)
				check_against_model(d,
						    "read-only before "
						    "recovery",
						    &act, im, lo, hi);
			else
				CHECKF(0, "%s: read-only before recovery: %s",
				       d, err);
			mstate_free(&act);
			stg_close(p);
			p = NULL;
		}
		file_read(path, &after);
		CHECKF(file_diff(&before, &after) < 0,
		       "%s: read-only open of a crashed pool changed byte %lld "
		       "(size %zu -> %zu)",
		       d, file_diff(&before, &after), before.len, after.len);
		free(before.data);
		free(after.data);
	}

	/* Recovery. */
	open_opts(rs->mode, false, &o);
	rc = stg_open(path, &o, &p, err, sizeof(err));
	CHECKF(rc == GPMDB_OK, "%s: reopen after the crash: rc %d: %s", d, rc,
	       err);
	if (rc != GPMDB_OK)
		return;
	rc = read_state(p, &act, err, sizeof(err));
	CHECKF(rc == GPMDB_OK, "%s: reading the recovered state: %s", d, err);
	if (rc == GPMDB_OK)
		check_against_model(d, "after recovery", &act, im, lo, hi);
	rc = stg_check(p, &rep);
	CHECKF(rc == GPMDB_OK, "%s: stg_check after recovery: %s", d,
	       rep ? rep : "(no report)");
	free(rep);
	rep = NULL;
	stg_close(p);
	p = NULL;

	/* Idempotent: a second recovery finds nothing to do. */
	rc = stg_open(path, &o, &p, err, sizeof(err));
	CHECKF(rc == GPMDB_OK, "%s: second reopen: rc %d: %s", d, rc, err);
	if (rc == GPMDB_OK) {
		stg_stats ss;
		char diff[400];

		if (stg_get_stats(p, &ss) == GPMDB_OK)
			CHECKF(ss.recovered_entries == 0,
			       "%s: second reopen recovered %llu entries", d,
			       (unsigned long long)ss.recovered_entries);
		rc = read_state(p, &again, err, sizeof(err));
		CHECKF(rc == GPMDB_OK, "%s: second reopen: %s", d, err);
		if (rc == GPMDB_OK)
			CHECKF(!mstate_diff(&again, &act, diff, sizeof(diff)),
			       "%s: second reopen differs: %s", d, diff);
		mstate_free(&again);
		stg_close(p);
		p = NULL;
	}

	/* Read-only open of the recovered pool: same state, same bytes. */
	file_read(path, &before);
	open_opts(rs->mode, true, &o);
	rc = stg_open(path, &o, &p, err, sizeof(err));
	CHECKF(rc == GPMDB_OK, "%s: read-only reopen: rc %d: %s", d, rc, err);
	if (rc == GPMDB_OK) {
		char diff[400];

		rc = read_state(p, &again, err, sizeof(err));
		CHECKF(rc == GPMDB_OK, "%s: read-only reopen: %s", d, err);
		if (rc == GPMDB_OK)
			CHECKF(!mstate_diff(&again, &act, diff, sizeof(diff)),
			       "%s: read-only reopen differs: %s", d, diff);
		mstate_free(&again);
		stg_close(p);
		p = NULL;
	}
	file_read(path, &after);
	CHECKF(file_diff(&before, &after) < 0,
	       "%s: read-only open changed byte %lld (size %zu -> %zu)", d,
	       file_diff(&before, &after), before.len, after.len);
	free(before.data);
	free(after.data);
	mstate_free(&act);

	/* The recovered pool takes new work: no space is handed out twice. */
	open_opts(rs->mode, false, &o);
	rc = stg_open(path, &o, &p, err, sizeof(err));
	if (rc == GPMDB_OK) {
		tdef t = tdef_pair("zz_post", STG_T_BIGINT, STG_T_TEXT);
		stg_col_batch cb[2];
		int64_t v[10] = {0};
		stg_text s[10];
		uint32_t id;
		int i;

		for (i = 0; i < 10; i++) {
			s[i].ptr = "post-recovery";
			s[i].len = 13;
		}
		cb[0] = (stg_col_batch){v, NULL};
		cb[1] = (stg_col_batch){s, NULL};
		rc = stg_begin(p);
		if (rc == GPMDB_OK)
			rc = stg_table_create(p, t.name, t.cols, t.ncols, t.sql,
					      &id);
		if (rc == GPMDB_OK)
			rc = stg_append(p, id, cb, 10);
		if (rc == GPMDB_OK)
			rc = stg_commit(p);
		CHECKF(rc == GPMDB_OK, "%s: writing after recovery: rc %d: %s",
		       d, rc, stg_errmsg(p));
		rc = stg_check(p, &rep);
		CHECKF(rc == GPMDB_OK, "%s: stg_check after new work: %s", d,
		       rep ? rep : "(no report)");
		free(rep);
		stg_close(p);
	} else {
		CHECKF(0, "%s: third reopen: rc %d: %s", d, rc, err);
	}
	unlink(path);
	unlink_wal(path);
}

/* ---- Test cases ------------------------------------------------------- */

static bool is_recovery_point(const char *name)
{
	return strncmp(name, "recovery.", 9) == 0 ||
	       strcmp(name, "wal.replayed") == 0;
}

/*
 * The runs are grouped in series (a series stops early when a workload
 * does not reach a point).  Series are spread over worker processes: a
 * run spends most of its time waiting for fork, exec and msync, so two
 * workers roughly halve the time even on two cores.
 */
typedef void (*series_fn)(int idx, int mode);

static int g_jobs = 4;

typedef struct {
	int failed, runs, killed;
	bool hit[NPOINTS_MAX];
} worker_result;

static void set_pool_paths(void)
{
	snprintf(pool_paths[0], sizeof(pool_paths[0]),
		 "/dev/shm/gpmdb_crash_%d.pool", (int)getpid());
	snprintf(pool_paths[1], sizeof(pool_paths[1]),
		 "/tmp/gpmdb_crash_%d.pool", (int)getpid());
}

static void run_series(int nseries, series_fn fn, int mode)
{
	pid_t pids[16];
	int fds[16], j, s, jobs = g_jobs;

	if (jobs > 16)
		jobs = 16;
	for (j = 0; j < jobs; j++) {
		int pfd[2];

		if (pipe(pfd) != 0) {
			CHECKF(0, "pipe: %s", strerror(errno));
			jobs = j;
			break;
		}
		fflush(stdout);
		fflush(stderr);
		pids[j] = fork();
		if (pids[j] == 0) {
			worker_result res;

			close(pfd[0]);
			/* One write per line, so workers' lines do not mix. */
			setvbuf(stderr, NULL, _IOLBF, 4096);
			set_pool_paths();
			nruns = nkilled = 0;
			memset(point_hit, 0, sizeof(point_hit));
			for (s = j; s < nseries; s += jobs)
				fn(s, mode);
			/* A failed run may have left its pool behind. */
			unlink(pool_paths[0]);
			unlink(pool_paths[1]);
			unlink_wal(pool_paths[1]);
			fflush(stderr);
			res.failed = th_case_failed;
			res.runs = nruns;
			res.killed = nkilled;
			memcpy(res.hit, point_hit, sizeof(res.hit));
			if (write(pfd[1], &res, sizeof(res)) != sizeof(res))
				_exit(1);
			_exit(0);
		}
		close(pfd[1]);
		fds[j] = pfd[0];
		if (pids[j] < 0) {
			close(fds[j]);
			CHECKF(0, "fork: %s", strerror(errno));
			jobs = j;
			break;
		}
	}
	for (j = 0; j < jobs; j++) {
		worker_result res;
		int st, i;

		if (read(fds[j], &res, sizeof(res)) != sizeof(res)) {
			CHECKF(0, "worker %d died without a result", j);
		} else {
			if (res.failed)
				th_case_failed = 1;
			nruns += res.runs;
			nkilled += res.killed;
			for (i = 0; i < NPOINTS; i++)
				point_hit[i] |= res.hit[i];
		}
		close(fds[j]);
		waitpid(pids[j], &st, 0);
	}
}

/* Series (point, workload): several hit counts; a count the workload does
 * not reach ends the series. */
static void series_points(int idx, int mode)
{
	static const int counts[] = {1, 2, 5, 17, 60, 200};
	int pi = idx % NPOINTS, w = idx / NPOINTS, ci;

	if (is_recovery_point(point_names[pi]))
		return;
	for (ci = 0; ci < (int)(sizeof(counts) / sizeof(counts[0])); ci++) {
		char at[64];
		run_spec rs = {w, mode, 1, at, -1, NULL};
		bool killed;

		snprintf(at, sizeof(at), "%s:%d", point_names[pi], counts[ci]);
		run_one(&rs, &killed);
		if (!killed)
			break;
	}
}

/* Crashes during recovery, after crashes that leave work to undo. */
static const char *const rec_bases[] = {
    "commit.begin:2",  "commit.begin:4", "update.data:1",   "delete.data:2",
    "hcl.tail:3",      "append.count:2", "catalog.write:3", "grow.remap:1",
    "commit.record:2", "wal.commit:2",	 "wal.big_data:1"};
#define NBASES ((int)(sizeof(rec_bases) / sizeof(rec_bases[0])))

static void series_recovery(int idx, int mode)
{
	static const int counts[] = {1, 3};
	int w = idx / NBASES, bi = idx % NBASES, pi, ci;

	for (pi = 0; pi < NPOINTS; pi++) {
		if (!is_recovery_point(point_names[pi]))
			continue;
		for (ci = 0; ci < (int)(sizeof(counts) / sizeof(counts[0]));
		     ci++) {
			char at[64];
			run_spec rs = {w, mode, 1, rec_bases[bi], -1, at};
			bool killed;

			snprintf(at, sizeof(at), "%s:%d", point_names[pi],
				 counts[ci]);
			run_one(&rs, &killed);
			/* The workload never got to the base point: there is
			 * nothing to recover, for any recovery point. */
			if (!killed)
				return;
		}
	}
}

#define NRANDOM 64

static void series_random(int idx, int mode)
{
	rng r = {g_seed ^ (uint64_t)(mode + 1) * 0xabcdef ^
		 (uint64_t)idx * 0x51ed27};
	run_spec rs = {idx % NWORK, mode, 2, NULL, (long)(rng_next(&r) % 20001),
		       NULL};
	bool killed;

	run_one(&rs, &killed);
}

/* The index workload alone, killed at random moments of its whole run
 * (CREATE INDEX, batch INSERTs into indexed tables, UPDATEs of key
 * columns): GPMDB_CRASH_INDEX_KILLS (default 60) per mode. */
#define NRANDOM_INDEX 60
#define INDEX_SPAN_US 400000

static void series_random_index(int idx, int mode)
{
	rng r = {g_seed ^ (uint64_t)(mode + 7) * 0x9e3779b9 ^
		 (uint64_t)idx * 0x2545f491};
	run_spec rs = {
	    W_INDEX, mode, 1, NULL, (long)(rng_next(&r) % INDEX_SPAN_US), NULL};
	bool killed;

	run_one(&rs, &killed);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Runs the series and says how many runs they made, how many children
 * died before the end of their workload, and how long it took. */
static void timed(int nseries, series_fn fn, int mode, const char *what)
{
	int r0 = nruns, k0 = nkilled;
	double t0 = now_s();

	run_series(nseries, fn, mode);
	printf("# %s %s: %d runs, %d children killed before the end, "
	       "%.1fs\n",
	       what, mode_names[mode], nruns - r0, nkilled - k0, now_s() - t0);
}

static void test_random_kills_index_pmem(void)
{
	timed(NRANDOM_INDEX, series_random_index, 0, "index random kills");
}

static void test_random_kills_index_msync(void)
{
	timed(NRANDOM_INDEX, series_random_index, 1, "index random kills");
}

static void test_points_pmem(void)
{
	timed(NPOINTS * NWORK, series_points, 0, "crash points");
}
static void test_points_msync(void)
{
	timed(NPOINTS * NWORK, series_points, 1, "crash points");
}
static void test_recovery_points_pmem(void)
{
	timed(NWORK * NBASES, series_recovery, 0, "recovery crash points");
}
static void test_recovery_points_msync(void)
{
	timed(NWORK * NBASES, series_recovery, 1, "recovery crash points");
}
static void test_random_kills_pmem(void)
{
	timed(NRANDOM, series_random, 0, "random kills");
}
static void test_random_kills_msync(void)
{
	timed(NRANDOM, series_random, 1, "random kills");
}

static void test_every_point_hit(void)
{
	int i;

	for (i = 0; i < NPOINTS; i++)
		CHECKF(point_hit[i], "crash point %s was never hit",
		       point_names[i]);
}

int main(int argc, char **argv)
{
	const char *s = getenv("GPMDB_CRASH_SEED");
	ssize_t n;

	if (s && *s)
		g_seed = strtoull(s, NULL, 0);
	if (argc == 7 && strcmp(argv[1], "--child") == 0)
		return child_main(atoi(argv[2]), atoi(argv[3]), argv[4],
				  atoi(argv[5]), atoi(argv[6]));
	if (argc == 4 && strcmp(argv[1], "--recover") == 0)
		return recover_main(atoi(argv[2]), argv[3]);

	/* The parent recovers and checks; it must never crash itself. */
	unsetenv("GPMDB_CRASH_AT");
	/* msync mode's commit log: small thresholds, so that these small
	 * workloads checkpoint, take the big-commit path and map fresh
	 * extents shared (storage/wal.c) */
	setenv("GPMDB_TEST_WAL_CKPT", "262144", 0);
	setenv("GPMDB_TEST_WAL_BIG", "131072", 0);
	setenv("GPMDB_TEST_WAL_SHARED", "65536", 0);
	n = readlink("/proc/self/exe", self_exe, sizeof(self_exe) - 1);
	if (n <= 0) {
		perror("/proc/self/exe");
		return 1;
	}
	self_exe[n] = '\0';
	s = getenv("GPMDB_CRASH_JOBS");
	if (s && atoi(s) > 0)
		g_jobs = atoi(s);
	set_pool_paths();
	/* The models are computed once, before the workers fork. */
	for (n = 0; n < NWORK; n++) {
		model_images((int)n, 1);
		model_images((int)n, 2);
	}
	printf("# seed %llu (set GPMDB_CRASH_SEED to override)\n",
	       (unsigned long long)g_seed);

	TEST_RUN(test_points_pmem);
	TEST_RUN(test_points_msync);
	TEST_RUN(test_recovery_points_pmem);
	TEST_RUN(test_recovery_points_msync);
	TEST_RUN(test_random_kills_pmem);
	TEST_RUN(test_random_kills_msync);
	TEST_RUN(test_random_kills_index_pmem);
	TEST_RUN(test_random_kills_index_msync);
	TEST_RUN(test_every_point_hit);
	printf("# %d runs, %d children killed\n", nruns, nkilled);
	TEST_MAIN_END();
}
