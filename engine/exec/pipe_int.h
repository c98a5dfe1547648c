/*
 * pipe_int.h - between the pipelines' files: pipe.c (planning, sources,
 * stages, the relation, top-N and mark sinks, threads), pipe_agg.c (the
 * aggregate sink and its merge), pipe_build.c (join tables),
 * pipe_filter.c (filters without the VM), pipe_dict.c (filters on
 * dictionary codes) and pipe_probe.c (join probes).
 * Private to them.
 */
#ifndef GPMDB_PIPE_INT_H
#define GPMDB_PIPE_INT_H

#include "../engine.h"
#include "exec_int.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#define PIPE_MAX 24
/* Sources of fewer rows run on one thread. */
#define PIPE_PAR_MIN_ROWS 65536

enum { PS_FILTER, PS_PROJECT, PS_JOIN };

/* A thread gives up its work (another failed, or an interrupt): not an
 * error of its own. */
#define PIPE_STOP (-2)

/* A FILTER  column OP constant  over INT, REAL or DATE (pipe_filter.c). */
typedef struct pfast {
	bool on;
	int op, type, col;
	int64_t i; /* the constant: INT, DATE */
	double r;  /* REAL */
} pfast;

/* A FILTER of the scan's first filters that reads one TEXT column and
 * cannot fail, tested on a dictionary column's codes (pipe_dict.c):
 * its program runs once over each tablet's dictionary, at the start,
 * into a table of whether each code passes; the scan then keeps the
 * rows whose code passes and the FILTER does not run on them. */
typedef struct pdict {
	int stage;	/* the FILTER, or -1: none */
	int col, tcol;	/* its column in the batch and in the table */
	bool skip;	/* no other stage reads the column: not read */
	uint8_t **pass; /* per tablet: per code (dict_n of them), then an
			   out-of-range code, then NULL; or NULL: strings */
	uint32_t ntab;
} pdict;

typedef struct pstage {
	int kind;
	pnode *n;
	const pnode *in; /* layout of the stage's input batch */
	cexpr *pred;	 /* FILTER predicate, JOIN residual */
	cexpr **ex;	 /* PROJECT: the columns; JOIN: the stream keys */
	int *plain;	 /* PROJECT: input column copied as it is, or -1 */
	/* JOIN */
	bool sleft;	 /* the stream is the left input */
	const pnode *pl; /* the residual's layout */
	etype kty[64];	 /* key types */
	rel *build, *bk; /* the built input and its keys */
	/* open addressing over the distinct key hashes, 2 slots a built
	 * row: the upper 32 bits of the hash, then the first row + 1 of
	 * the chain (next) of the rows with that hash (0: empty); chains
	 * newest first, as exec_join's */
	uint64_t *slot, nb;
	/* large tables: 2^pbits regions by the hash's top bits, each built
	 * by one thread; a row's slots are in its region (rmask) */
	int pbits;
	uint64_t rmask;
	uint64_t *hash; /* per built row */
	uint32_t *next; /* per built row: the next row + 1 of its chain */
	bool bnull;	/* ANTI_NULL: a built key is NULL */
	/* one bit per hash value (bits 20.. of the hash, 16 per built row):
	 * a probe whose bit is clear meets nothing, found without a walk of
	 * the table (most probes of a selective join) */
	uint64_t *bloom, bmask;
	uint64_t build_ns; /* EXPLAIN ANALYZE: hashing the built side */
	bool kf;	   /* its stream's keys filter the built AGG's groups */
	bool safe;	   /* FILTER: its predicate cannot fail (pipe.c) */
	pfast fast;	   /* FILTER: its predicate's own loop, or off */
	/* one INT, DECIMAL, DATE or BOOL key of one type on both sides: its
	 * hash is one-to-one (exec_hash_mix of one value), so equal hashes
	 * are equal keys and the chain's rows need no comparison */
	bool hexact;
	/* hexact INT, DECIMAL or DATE keys of a narrow span (pipe_probe.c):
	 * dir[key - dmin] = the first row + 1 of the key's chain (0: none),
	 * for keys dmin .. dmin + dspan - 1 */
	uint32_t *dir;
	int64_t dmin;
	uint64_t dspan;
	/* one TEXT key (pipe_probe.c jt_refs_cands): a batch's rows whose
	 * strings are one reference (a dictionary tablet's code) probe once
	 * per reference */
	bool trefs;
	/* a LEFT join whose left input is built (the right one streams):
	 * per built row, whether a stream row met it; the rows that met
	 * none are emitted with NULLs after the stream ends (pipe_outer) */
	uint8_t *bmatch;
	size_t bytes; /* accounted against the memory limit */
} pstage;

typedef struct pipe {
	exec_ctx *x;
	pnode *top;	/* the last streaming node: the sink's input layout */
	pnode *src;	/* the SCAN, or NULL: srel */
	pnode *top_src; /* the source's node */
	rel *srel;
	int ns;
	pstage st[PIPE_MAX]; /* st[0] reads the source */
	pnode *agg;	     /* the AGG sink, or NULL: a relation */
	struct pmark *mark;  /* a SEMI/ANTI join's right rows marking the
				left rows they meet, or NULL */
	pnode *topn;	     /* a relation sink keeping the first keep rows
				in topn's (SORT) order, or NULL */
	uint64_t keep;
	cexpr **gx;	    /* AGG: group keys, then arguments */
	int *gcol;	    /* AGG: the input column each one is, or -1 */
	struct pgroups *kf; /* AGG: only groups with these keys, or NULL */
	etype aty[128];	    /* AGG: argument types */
	/* the columns of batch b[i] that a later stage or the sink reads
	 * (pipe_live), or NULL: all; the others are not written */
	uint8_t *live[PIPE_MAX + 1];
	/* morsels: (tablet, first row) of a scan, or a relation's rows */
	stg_tablet_view *tv;
	uint32_t ntab;
	uint64_t nm, *moff;
	uint32_t *mtab;
	int nthr;  /* threads' states (the sinks merge them in order) */
	int nwork; /* threads that ran */
	atomic_int stop;
	atomic_size_t mem; /* sink bytes held by the threads */
	/* spilling (spill.c): the sink writes its rows to this file: AGG:
	 * partitioned by the group keys' hash; a relation: by the hash of
	 * the keys spk (a join's side), or as sorted runs of runrows rows
	 * or runbytes bytes (their first keep rows)
	 * in srt's (SORT) order */
	struct spill *spill;
	cexpr **spk;
	int nspk;
	pnode *srt;
	uint64_t runrows, runbytes;
	/* the source: the rows of a join that spilled, or NULL */
	struct spill *ssrc;
	pdict dict; /* the scan's filter on dictionary codes */
	/* AGG whose group keys are all TEXT columns of the scan (pipe_dict.c
	 * pipe_dict_groups): their table columns, or ngdict 0 */
	int gdict[4], ngdict;
} pipe;

/* One thread's groups of the AGG sink: open addressing on the key hash;
 * the key values of group g are row g of keys (text copied). */
/* Aggregates over fewer groups than this sum a batch group by group in
 * registers (a state updated by every row waits on its last store). */
#define AGG_RUN_MAX 64

typedef struct pgroups {
	rel *keys;
	uint64_t n, cap, nslot;
	uint64_t *hash;
	uint64_t *slot;
	aggst *st;
	uint64_t *bloom, bmask; /* a key filter's bits (groups_bloom) */
	/* one INT/DECIMAL key: dir[key - dlo] = its group + 1 (0: not
	 * yet), keys dlo .. dlo + dspan - 1 (pipe_agg.c groups_dir);
	 * dspan 0: none, UINT64_MAX: none wanted */
	uint32_t *dir;
	int64_t dlo;
	uint64_t dspan;
} pgroups;

typedef struct pthr {
	pipe *p;
	vm_scratch scr[PIPE_MAX + 1];
	vm_scratch *sscr; /* AGG sink: one per key and argument */
	uint64_t gid[VEC_BATCH];
	uint64_t hv[VEC_BATCH]; /* AGG sink: the keys' hashes */
	/* AGG sink with few groups: the batch's rows by group (stable),
	 * group g's rows at run[rs[g]..rs[g+1]), or nruns 0 */
	uint32_t run[VEC_BATCH], rs[AGG_RUN_MAX + 1], nruns;
	uint64_t *jhv[PIPE_MAX]; /* JOIN: the stream keys' hashes */
	/* JOIN: rows checked against the bloom bits and those that passed;
	 * a thread stops checking where most pass */
	uint64_t bf_in[PIPE_MAX], bf_pass[PIPE_MAX];
	/* JOIN with trefs: batches probed by reference and given up (too
	 * many references); a thread stops trying where most are given up */
	uint32_t tr_ok[PIPE_MAX], tr_off[PIPE_MAX];
	uint32_t *jcand[PIPE_MAX]; /* JOIN: the rows that probe */
	/* consecutive FILTERs starting at stage i: the order they run in
	 * (ford[i..]), and per filter its time, rows in and rows kept */
	uint8_t ford[PIPE_MAX];
	uint32_t fbat[PIPE_MAX];
	uint64_t fns[PIPE_MAX], fin[PIPE_MAX], fout[PIPE_MAX];
	rel *b[PIPE_MAX + 1]; /* b[0]: source batch; b[i+1]: stage i's out */
	rel *b2[PIPE_MAX];    /* JOIN: pairs before the residual */
	rel *kb[PIPE_MAX];    /* JOIN: stream keys */
	int64_t *li[PIPE_MAX], *ri[PIPE_MAX];
	uint32_t np[PIPE_MAX];
	uint8_t *matched[PIPE_MAX];
	uint32_t keep[VEC_BATCH];
	uint32_t codes[VEC_BATCH]; /* a vector of dictionary codes */
	bool dict_done;	    /* b[0]'s rows passed p->dict.stage's FILTER */
	int64_t gtab;	    /* the tablet of the morsel being read, or -1 */
	struct pgcache *gc; /* AGG on dictionary keys (pipe_dict.c) */
	rel *gkb;	    /* its first rows of each key in a batch */
	const void **sd;
	const uint32_t **sn;
	stg_vecbuf *dec;  /* a morsel's rows of an encoded column, decoded */
	const char **sh;  /* the heap a TEXT column's refs resolve against */
	void **own0;	  /* b[0]'s own arrays (data, nulls per column) */
	rel *out;	  /* relation sink */
	rel *ka, *aa;	  /* AGG sink: keys and arguments of a batch */
	void **kown;	  /* their own arrays (data, nulls per column) */
	rel *kfb;	  /* AGG with a key filter: the rows it keeps */
	rel *mkb, *mpair; /* mark sink: right keys, (left, right) pairs */
	int64_t *mli, *mri;
	uint32_t mnp;
	pgroups g;	 /* AGG sink */
	uint64_t m0, m1; /* morsels [m0, m1) */
	int ti;		 /* the thread state's index */
	rel *skb;	 /* spilling by keys: a batch's keys */
	uint64_t sord;	 /* spilling runs: rows written before */
	rel *sb;	 /* a spilled source's batch (b[0] is over it) */
	/* EXPLAIN ANALYZE: rows into stage i (ns: the sink), time in it and
	 * the stages after it; the source's time */
	uint64_t rows_in[PIPE_MAX + 1], incl_ns[PIPE_MAX + 1], src_ns;
	int rc;
	char msg[256];
} pthr;

/* The mark sink of a SEMI/ANTI join whose right input streams: the left
 * rows are built (hashed), each right row marks the left rows it meets
 * (through the residual when there is one). */
typedef struct pmark {
	pstage s;	  /* the built left side: s.build, s.bk, the table */
	cexpr *rk[64];	  /* right keys over the right input's layout */
	uint8_t *matched; /* per left row */
	atomic_int rnull; /* a right key is NULL (NOT IN) */
	atomic_int rany;  /* a right row came */
} pmark;

/* The first slot of the region of a key hash in join table s. */
static inline uint64_t jt_base(const pstage *s, uint64_t hv)
{
	return s->pbits ? (hv >> (64 - s->pbits)) * (s->rmask + 1) : 0;
}

/* Whether stream key row r of kb equals built row row's key (compared
 * in the join's own order of sides). */
static inline bool jt_key_eq(const pstage *s, const rel *kb, uint32_t r,
			     int64_t row)
{
	return s->sleft ? exec_keys_eq(kb, r, s->bk, (uint64_t)row)
			: exec_keys_eq(s->bk, (uint64_t)row, kb, r);
}

/* The first row of the chain of the built rows whose key hash is hv (the
 * next ones: next[row] - 1), or -1. */
static inline int64_t jt_first(const pstage *s, uint64_t hv)
{
	uint64_t tag = hv >> 32, e, base = jt_base(s, hv), rm = s->rmask;

	for (uint64_t o = (hv ^ hv >> 29) & rm; (e = s->slot[base + o]);
	     o = (o + 1) & rm) {
		uint64_t row = (e & 0xffffffffu) - 1;
		if (e >> 32 == tag && s->hash[row] == hv)
			return (int64_t)row;
	}
	return -1;
}

/* ---- pipe_filter.c ---- */

/* f = the loop of predicate c when it is  column OP constant  over INT,
 * REAL or DATE; false (f off) otherwise. */
bool pipe_fast_make(const cexpr *c, pfast *f);
/* Whether evaluating predicate e cannot fail (no arithmetic but a
 * literal date's, no cast, no function, no subquery): such filters may
 * run in any order. */
bool pipe_pred_safe(const ast_expr *e);
/* The rows of batch b (through sel, or all n) that pass f into out (out
 * may be sel); returns how many, or -1: b's column is not f's type (the
 * program then runs). */
int pipe_fast_run(const pfast *f, const rel *b, const uint32_t *sel, uint32_t n,
		  uint32_t *out);

/* ---- pipe_dict.c ---- */

/* p->dict: the filter of the scan's first filters that may run on
 * dictionary codes, and its table per dictionary tablet of p->tv (those
 * it does not pay for, or whose evaluation fails, keep the strings);
 * after the stages, p->live and the morsels. */
int pipe_dict_tables(pipe *p);
void pipe_dict_free(pipe *p);
/* The rows of t's morsel (tablet tab, rows [off, off + cnt) of view v)
 * that are not deleted and pass the filter into t->keep; -1: the
 * tablet's strings are read (no table). */
int pipe_dict_keep(pthr *t, uint32_t tab, const stg_tablet_view *v,
		   uint64_t off, uint32_t cnt);
/* Rows the scans tested on dictionary codes (tests/unit/test_dict_pred.c
 * declares it: this header is not the tests'). */
uint64_t pipe_dict_rows(void);
/* t->gid of the rows 0..m of the AGG sink's keys ka when they are
 * strings of the dictionaries of t's tablet (*done), else *done false
 * and the string path runs; returns an error or GPMDB_OK. */
int pipe_dict_groups(pthr *t, const rel *ka, uint32_t m, int na, bool *done);
void pipe_dict_groups_free(pthr *t);
/* Rows grouped by pipe_dict_groups (tests/unit/test_dict_group.c). */
uint64_t pipe_dict_group_rows(void);

/* ---- pipe_probe.c ---- */

/* Join stage s's direct table (s->dir) when its keys allow one. */
int jt_direct(exec_ctx *x, pstage *s);
/* The rows of key batch kb that meet a built row of direct table s into
 * cand (returned: how many); first[r] = the first row + 1 of row r's
 * chain. */
uint32_t jt_direct_cands(const pstage *s, const rel *kb, uint32_t m,
			 uint32_t *cand, uint64_t *first);

/* The rows of join stage i's key batch kb that may meet a built row
 * (t->jcand[i], returned: how many) and their hashes (t->jhv[i]): all
 * rows, or those whose bloom bit is set; the slots they probe
 * prefetched. */
uint32_t join_cands(pthr *t, int i, const rel *kb, uint32_t m);
/* Stage s's trefs, decided once its keys are built. */
void jt_refs_init(pstage *s);
/* As jt_direct_cands, for a one-TEXT-key stage (trefs): each distinct
 * reference (pointer, length) of the batch's strings hashed and its
 * chain searched once, first[r] the first row + 1 of the chain's rows
 * equal to row r's key; UINT32_MAX (nothing done) when the batch holds
 * more than one reference in 8 rows. */
uint32_t jt_refs_cands(const pstage *s, const rel *kb, uint32_t m,
		       uint32_t *cand, uint64_t *first);
/* Rows probed by reference so far (tests). */
uint64_t pipe_dict_join_rows(void);

/* ---- pipe.c ---- */

/* A size threshold of a parallel path (smaller under
 * GPMDB_TEST_PIPE_SMALL=1). */
uint64_t pipe_small(uint64_t n);
/* n zeroed bytes, written at once (not calloc's zero pages). */
void *pipe_zalloc(size_t n);
/* A batch relation of n's layout (no accounting: bounded, per thread). */
rel *pipe_batch(const pnode *n);
void pipe_reset(rel *r);
/* Rows idx[0..m) of src into dst (same layout), text referenced; live:
 * the columns to copy, or NULL for all. */
void pipe_gather(rel *dst, const rel *src, const uint32_t *idx, uint32_t m,
		 const uint8_t *live);
/* Records the thread's first error; returns rc. */
int pipe_fail(pthr *t, int rc, const char *msg);
/* Stores v into column c of r (rows 0..n), converting; text copied
 * (pipe_put) or referenced (pipe_put_ref). */
int pipe_put(pthr *t, rel *r, int c, const vec *v, uint32_t n);
int pipe_put_ref(pthr *t, rel *r, int c, const vec *v, uint32_t n);

/* Monotonic nanoseconds. */
uint64_t pipe_now(void);

/* ---- pipe_build.c ---- */

/* Runs the built input of join stage s (srel: the stream's source
 * relation, for a key filter) and hashes it into its table. */
int stage_build(exec_ctx *x, pstage *s, const rel *srel);
/* Evaluates the keys of s->build and hashes its rows into the table. */
int stage_hash(exec_ctx *x, pstage *s);
/* A join stage's built side and table. */
void stage_free(exec_ctx *x, pstage *s);

/* ---- pipe_explain.c ---- */

/* The shape of planned pipeline p (pipe_plan); returns GPMDB_OK. */
int pipe_shape_of(const pipe *p, pipe_shape *sh);
/* EXPLAIN ANALYZE: p ran; its nodes record the pipeline (pnode.pl_id). */
void pipe_ran(const pipe *p);

/* ---- pipe_agg.c ---- */

int groups_init(pgroups *g, const pnode *n);
uint64_t *pipe_bloom(const uint64_t *hash, uint64_t n, uint64_t *mask);
int groups_bloom(pgroups *g);
int agg_distinct_finish(exec_ctx *x, const pnode *n, rel *pairs, rel **out);
void groups_free(pgroups *g, int na);
/* The group of row i of keys k (hash hv) in g, added when new; -1: out
 * of memory. */
int64_t groups_find(pgroups *g, const rel *k, uint64_t i, uint64_t hv, int na);
/* Aggregates batch b into the thread's groups. */
int sink_agg(pthr *t, const rel *b);
/* AVG/TOTAL of integers sum exactly in s->i: agg_avg_flush moves it to
 * s->r (at the end of a thread's work). */
bool agg_avg_int(const aggdef *ad, etype ty);
void agg_avg_flush(aggst *s, etype ty);
/* The threads' groups into the result relation. */
int merge_agg(pipe *p, pthr *th, rel **out);

/* ---- pipe.c, for spill.c ---- */

/* Runs planned pipeline p's threads and merges their states (p->spill:
 * the sink's rows go to the file, *out is not set). */
int pipe_exec(pipe *p, rel **out);
typedef struct spill spill;
/* Node n's rows (n a FILTER, PROJECT, JOIN or SCAN) as a pipeline into
 * s: by the hash of keys (slots base.. of join on) or, on a SORT, as
 * sorted runs; PIPE_DECLINE: n does not stream. */
int pipe_run_spill(exec_ctx *x, pnode *n, spill *s, pnode *on, ast_expr **keys,
		   int base, uint64_t keep);

/* ---- spill.c ---- */

/* A pipeline thread's rows 0..m of b (hashes hv; live columns, or all)
 * into its partitions. */
int spill_thread_rows(pthr *t, const rel *b, uint32_t m, const uint64_t *hv,
		      const uint8_t *live);
/* The relation sink when spilling by keys. */
int spill_sink_part(pthr *t, const rel *b);
/* Thread t's rows as one sorted run. */
int spill_run(pthr *t);
/* Before the threads start: the file's streams for p->nthr states. */
int spill_threads(pipe *p);
/* How many of nt threads, each with states partitioning states, the
 * spill's buffers (at least 4 KiB a partition) leave room for in half of
 * what the memory limit leaves: at least 1.  A tight limit on many
 * threads would otherwise fail for the buffers alone (4 threads under
 * 4 MiB: 2 MiB of them). */
int spill_threads_fit(const pipe *p, int nt, int states);
/* After the threads: what they hold to the file. */
int spill_end(pipe *p, pthr *th);
/* AGG p->agg passed the memory limit: its groups by partitions. */
int spill_agg(pipe *p, rel **out);
/* Join n (marked to spill) into a file whose chunks are a pipeline's
 * source: spill_chunks (how many; *rows: their rows), spill_source
 * (chunk mi into t->b[0]), spill_free. */
int spill_join_source(exec_ctx *x, pnode *n, spill **out);
uint64_t spill_chunks(spill *s, uint64_t *rows);
int spill_source(pthr *t, uint64_t mi);
void spill_free(spill *s);
/* Rows of a sorted run per thread, of layout lay; *bytes: its bytes. */
uint64_t spill_run_rows(const exec_ctx *x, const pnode *lay, int nthr,
			uint64_t *bytes);

#endif /* GPMDB_PIPE_INT_H */
