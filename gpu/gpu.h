/*
 * gpu.h - the CUDA backend's C interface (docs/gpu.md).
 *
 * Every function exists in both builds: with CUDA (GPMDB_HAVE_GPU, the .cu
 * files of gpu/) they do the work; without it (make GPU=0, gpu/gpu_host.c) they
 * return GPMDB_UNSUPPORTED with "gpmdb was built without CUDA (make GPU=0)", so
 * the engine calls gpu_* unconditionally and shows the message.
 *
 * Errors: a function that can fail returns a GPMDB_* code and writes a
 * message into err (errlen bytes, may be NULL/0).  A failed CUDA call is
 * GPMDB_GPU (GPMDB_NOMEM for an allocation) and its message names the call
 * and cudaGetErrorString's text.  No GPU, or one too old, is
 * GPMDB_UNSUPPORTED with a message ending "using the CPU backend".
 *
 * Threads: gpu_init is safe to call from any thread; the rest use one
 * stream and must not be called concurrently (the engine has one writer
 * and serialises GPU work).
 */
#ifndef GPMDB_GPU_H
#define GPMDB_GPU_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#include "../engine/bytecode.h"

/* The lowest compute capability gpmdb accepts (major * 10 + minor). */
#define GPU_MIN_CC 70

typedef struct gpu_info {
	char name[256];
	int device; /* CUDA device number (always 0 for now) */
	int cc_major, cc_minor;
	int sm_count;
	int mem_clock_khz;	/* peak memory clock */
	int mem_bus_bits;	/* memory bus width */
	uint64_t mem_total;	/* bytes */
	uint64_t mem_free;	/* bytes, when gpu_info was called */
	double bandwidth_gbs;	/* theoretical peak: 2 * clock * bus / 8 */
	int driver_version;	/* e.g. 13000 */
	int runtime_version;	/* e.g. 13000 */
	uint64_t pool_reserved; /* bytes the memory pool holds */
	uint64_t pool_used;	/* bytes handed out by gpu_alloc */
} gpu_info;

/*
 * Sets up device 0: capability check, stream, memory pool.  Idempotent;
 * a failure is remembered and returned (with its message) again.
 * GPMDB_OK, GPMDB_UNSUPPORTED (no GPU, too old, built without CUDA) or
 * GPMDB_GPU.
 */
int gpu_init(char *err, size_t errlen);
/* Microseconds the first gpu_init spent creating the CUDA context, the
 * stream and the memory pool (0 before it ran). */
uint64_t gpu_init_us(void);
/* Microseconds gpu_init calls waited, in all (setup included). */
uint64_t gpu_init_wait_us(void);
/* Starts gpu_init and the staging buffers' allocation on a thread of
 * their own (a connection opened with backend=gpu), once per process;
 * GPMDB_GPU_PRESTART=0 turns it off.  gpu_init waits for it. */
void gpu_init_async(void);
/* Waits for that thread if it runs (before a close can reach exit()). */
void gpu_init_async_join(void);
/* Microseconds the thread ran (0 when none ran). */
uint64_t gpu_init_async_us(void);
/* 1 while that thread still sets CUDA up: a statement that will wait for
 * it may do its host work first (exec_gpu_prefetch). */
int gpu_init_pending(void);
/* 1 when gpu_init succeeded (calls it if it has not run yet). */
int gpu_available(void);
/* Frees the pool and the stream; a later gpu_init starts again. */
void gpu_shutdown(void);

/* Device facts for .stats (calls gpu_init). */
int gpu_get_info(gpu_info *info, char *err, size_t errlen);
/* The device memory gpmdb may use, in bytes (0: the whole device; PRAGMA
 * gpu_memory_limit, default GPMDB_GPU_MEMORY_LIMIT in MiB); gpu_alloc
 * keeps within it and gpu_get_info reports the device as no larger. */
void gpu_set_memory_limit(uint64_t bytes);
uint64_t gpu_memory_limit(void);
/* The device memory an allocation could take now: free memory (within the
 * limit) plus the pool's unused reservation; UINT64_MAX when unknown. */
uint64_t gpu_mem_avail(void);
/* One line: "NVIDIA H100 80GB HBM3, sm_90, 132 SMs, 79.1/79.6 GiB free,
 * 3352 GB/s peak"; or the reason there is no GPU. */
void gpu_describe(char *buf, size_t len);

/*
 * Device memory from the pool (stream-ordered: cudaMallocFromPoolAsync on
 * gpmdb's stream, no cudaMalloc per query).  n = 0 gives NULL.  An
 * allocation the device cannot satisfy is GPMDB_NOMEM.
 */
int gpu_alloc(void **dptr, size_t n, char *err, size_t errlen);
int gpu_free(void *dptr, char *err, size_t errlen);
/* Copies on gpmdb's stream; the _sync variants wait for them. */
int gpu_upload(void *dst, const void *src, size_t n, char *err, size_t errlen);
int gpu_download(void *dst, const void *src, size_t n, char *err,
		 size_t errlen);
/* An upload through two pinned staging buffers (CPU copy of one chunk
 * while the DMA of the previous one runs): for pageable sources that
 * cannot be registered.  Returns once src may be reused. */
int gpu_upload_staged(void *dst, const void *src, size_t n, char *err,
		      size_t errlen);
/* For a caller that builds what it uploads (the cache's decode jobs):
 * gpu_stage_take lends the next staging buffer (gpu_stage_size bytes),
 * once its last DMA is done, to be filled and then sent by
 * gpu_stage_send (its first n bytes to dst, on gpmdb's stream), which
 * gives it back; no other GPU call between the two. */
size_t gpu_stage_size(void);
int gpu_stage_take(char **buf, char *err, size_t errlen);
int gpu_stage_send(void *dst, size_t n, char *err, size_t errlen);
int gpu_memset(void *dst, int byte, size_t n, char *err, size_t errlen);
/* data[rowids[i] * width] = vals[i] for n rows of a device column of width
 * 1, 2, 4 or 8 bytes, and nulls[rowids[i]] = bit i of vnulls (vnulls NULL:
 * 0) when nulls is not NULL; rowids, vals and vnulls are host arrays,
 * uploaded first (the column cache's write-through, gpu/cache.c). */
int gpu_scatter_rows(void *data, uint8_t *nulls, uint32_t width,
		     const uint64_t *rowids, const void *vals,
		     const uint32_t *vnulls, uint64_t n, char *err,
		     size_t errlen);
/* dst[i] = start + i for i < n (int64; the column cache's row ids of a
 * tablet without deleted rows, made on the device instead of uploaded). */
int gpu_fill_seq(int64_t *dst, int64_t start, uint64_t n, char *err,
		 size_t errlen);
/* The same from device arrays. */
int gpu_scatter_rows_dev(void *data, uint8_t *nulls, uint32_t width,
			 const uint64_t *rowids, const void *vals,
			 const uint32_t *vnulls, uint64_t n, char *err,
			 size_t errlen);
/* Waits for everything queued on gpmdb's stream. */
int gpu_sync(char *err, size_t errlen);

/*
 * The device-to-device copy bandwidth, the reference for what a query
 * over cached columns can reach (tpc/bench_gpu.c): cudaMemcpyAsync of
 * `bytes` between two pool buffers, best of `reps` timed copies after a
 * warm-up one, in GB/s of bytes copied (each byte is read once and
 * written once: the memory moves twice that).  The buffers go back to the
 * pool.  GPMDB_NOMEM when they do not fit.
 */
int gpu_d2d_bandwidth(uint64_t bytes, int reps, double *gbs, char *err,
		      size_t errlen);

/* ---- the expression interpreter (gpu/vm_gpu.cu, gpu/gvm.c) ---------- */

/* A TEXT value of a device column: bytes [off, off + len) of the batch's
 * text buffer.  In outputs, off with GPU_STR_CONST set is an offset into
 * the program's constant text (bc_program.text) instead. */
typedef struct gpu_str {
	uint32_t off, len;
} gpu_str;
#define GPU_STR_CONST 0x80000000u

/*
 * One column for gpu_vm_run, device pointers.  type is a BC_COL_* (or
 * VEC_NULL: every row NULL, data unused); data holds int32 (INT32, DATE),
 * int64 (INT64, DEC), float, double, uint8 (BOOL) or gpu_str (TEXT) per
 * element; nulls (optional) 1 byte per element, 1 = NULL; sel (optional,
 * inputs only) maps row i to element sel[i], as vec.sel does.
 */
/* A selection entry that names no row: the column reads NULL there (a
 * LEFT join's unmatched left rows on their right side). */
#define GPU_NO_ROW 0xFFFFFFFFu

typedef struct gpu_col {
	void *data;
	uint8_t *nulls;
	const uint32_t *sel;
	uint8_t type, prec, scale, pad;
	uint32_t pad2;
} gpu_col;

/*
 * Can the GPU interpreter run p?  Returns 1, or 0 with the reason in why:
 * the first op it does not support ("op UPPER makes new text: runs on the
 * CPU"), or a program that needs more live registers than a GPU thread
 * holds.  The planner calls it and falls back to the CPU loudly.
 */
int gpu_vm_supports(const bc_program *p, char *why, size_t len);

/*
 * Runs p on the GPU over nrows rows of in[0..nin): one thread per row.
 * text/ntext: the device buffer that TEXT columns point into; itext
 * (NULL, or nin entries) gives input k a buffer of its own where itext[k]
 * is not NULL, so that a program reading several text columns needs no
 * copy of them into one buffer.  TEXT outputs are offsets into text, so
 * a TEXT output together with a TEXT input on its own buffer is
 * GPMDB_MISUSE.  out[k]
 * (p->noutputs of them) gets the type and freshly allocated device arrays
 * (data and nulls, one allocation: free with gpu_vm_free_outputs).
 * Results are those of vm_run over the same rows in batches of VEC_BATCH,
 * errors included: the error reported is the one vm_run would report
 * first.  GPMDB_OK, GPMDB_ERROR (an SQL error of a row), GPMDB_MISUSE (bad
 * program or inputs), GPMDB_UNSUPPORTED (see gpu_vm_supports), GPMDB_NOMEM,
 * GPMDB_GPU.  On an error no outputs are left allocated.
 */
int gpu_vm_run(const bc_program *p, const gpu_col *in, int nin, uint32_t nrows,
	       const char *text, uint64_t ntext, const char *const *itext,
	       gpu_col *out, char *err, size_t errlen);
void gpu_vm_free_outputs(const bc_program *p, gpu_col *out);

/* ---- operators (gpu/ops.cu): compaction, downloads, aggregation ------ */

/*
 * Selection: of rows [0, n) whose value in pred (an output of gpu_vm_run:
 * BOOL, INT64, DOUBLE or VEC_NULL) is true as the CPU filter tests it (not
 * NULL, != 0), writes sel_in[i] (or i when sel_in is NULL) in row order
 * into *idx (device, n + 1 elements; gpu_free it) and their number into
 * *count.  CUB DeviceSelect::Flagged.
 */
int gpu_select(const gpu_col *pred, uint32_t n, const uint32_t *sel_in,
	       uint32_t **idx, uint32_t *count, char *err, size_t errlen);

/* Downloads k device ranges (src[i], len[i] bytes) into dst[i] with one
 * transfer over the bus (device-to-device copies into one buffer first). */
int gpu_download_many(int k, void *const *dst, const void *const *src,
		      const size_t *len, char *err, size_t errlen);

/* Aggregates gpu_group_agg computes; arg is a dense device column. */
enum {
	GPU_AGG_COUNT_STAR, /* rows */
	GPU_AGG_COUNT,	    /* non-NULL values (any type) */
	GPU_AGG_SUM_I,	    /* exact 128-bit sum of INT64/DEC/BOOL values;
			       overflow set when a partial sum leaves int64 */
	GPU_AGG_SUM_R,	    /* sum of DOUBLE values (order differs from the
			       CPU's: not bit-identical) */
	GPU_AGG_MIN_I,	    /* INT64, DEC, DATE, BOOL */
	GPU_AGG_MAX_I,
	GPU_AGG_MIN_R, /* DOUBLE; the first of equal values, as the CPU */
	GPU_AGG_MAX_R
};

typedef struct gpu_agg {
	int op;
	gpu_col arg; /* unused for COUNT_STAR */
} gpu_agg;

/* Per group (host arrays, ngroups each): */
typedef struct gpu_agg_res {
	uint64_t *cnt;	  /* non-NULL values (COUNT_STAR: rows) */
	uint64_t *sum_lo; /* SUM_I, COUNT, COUNT_STAR: the 128-bit sum */
	int64_t *sum_hi;
	int64_t *i64; /* MIN_I/MAX_I */
	double *f64;  /* SUM_R, MIN_R/MAX_R */
	int overflow; /* SUM_I: some partial sum left int64 */
} gpu_agg_res;

typedef struct gpu_groups {
	uint32_t ngroups;
	int naggs;
	uint32_t *first;   /* the group's first row (its order on the CPU) */
	int64_t *key;	   /* one integer key: the group's key (widened);
			      NULL otherwise (the engine reads the key
			      columns at the first rows) */
	uint8_t *key_null; /* with key: the NULL group */
	gpu_agg_res *res;  /* naggs */
	uint32_t *order;   /* the sort path: group numbers by first row (the
			      CPU's order, sorted on the device); NULL: the
			      caller sorts (few groups) */
} gpu_groups;

/* A key column (GROUP BY, ORDER BY, DISTINCT, join): a dense device
 * column (INT64, DEC, INT32, DATE, BOOL, DOUBLE, FLOAT, TEXT; VEC_NULL:
 * all NULL), its direction (ORDER BY only) and, for TEXT, the device
 * bytes its gpu_str values point into: text for plain offsets, ctext (a
 * device copy of the program's constant text, may be NULL when no value
 * has GPU_STR_CONST) for constant ones.  TEXT compares as the CPU's
 * val_text_cmp: bytes unsigned (memcmp), then the shorter first. */
typedef struct gpu_sortcol {
	gpu_col col;
	const char *text, *ctext;
	uint8_t desc, nulls_first;
} gpu_sortcol;

/* The longest TEXT key (bytes) a GPU sort orders: a key is sorted as
 * big-endian 8-byte words, one radix pass each. */
#define GPU_SORT_MAX_TEXT 256

/*
 * GROUP BY keys[0..nkeys) (NULLs equal: one group; nkeys = 0: one group
 * of all rows) over n rows with aggregates aggs[0..naggs).  One integer
 * key (INT64/DEC/INT32/DATE/BOOL): a hash pass when the groups fit in
 * shared memory, else a stable CUB radix sort of the keys; g->key holds
 * the keys.  Otherwise (several keys, TEXT or DOUBLE keys): a hash pass
 * over a 64-bit hash of all keys whose table verifies the keys of every
 * row against the group's first-inserted row (no false merges), else the
 * stable multi-key sort of gpu_sort's order (TEXT keys longer than
 * GPU_SORT_MAX_TEXT: GPMDB_UNSUPPORTED); g->key is NULL.  Each aggregate
 * by a segmented inclusive scan in row order.  Groups come with their
 * first row; the engine orders them by first row, the CPU's order.  n =
 * 0 gives no groups.  Free with gpu_group_free.
 */
int gpu_group_agg(const gpu_sortcol *keys, int nkeys, uint32_t n,
		  const gpu_agg *aggs, int naggs, gpu_groups *g, char *err,
		  size_t errlen);
void gpu_group_free(gpu_groups *g);

/* How a group's aggregate becomes its result value (the engine's
 * agg_final), for results kept on the device. */
enum {
	GPU_FIN_COUNT, /* COUNT, COUNT(*): the count, never NULL */
	GPU_FIN_SUM,   /* SUM: NULL without values, else the sum (an
			  integer sum as REAL when type is DOUBLE) */
	GPU_FIN_AVG,   /* AVG: NULL without values, else sum / count */
	GPU_FIN_TOTAL, /* TOTAL: the sum as REAL, 0.0 without values */
	GPU_FIN_MINMAX /* MIN, MAX: NULL without values, else the value */
};
typedef struct gpu_agg_fin {
	int fin;      /* GPU_FIN_* */
	int scale;    /* AVG, TOTAL of a DECIMAL argument: its scale */
	uint8_t type; /* the result column's BC_COL_* (INT64, DEC, INT32,
			 DATE, BOOL, DOUBLE) */
} gpu_agg_fin;

/*
 * gpu_group_agg whose result stays on the device when there are many
 * groups (the sort path): *on_dev = 1 and out[0..nkeys + naggs) are new
 * device columns of g->ngroups rows in the order of the groups' first
 * rows (the CPU's order): each key as its column's value at the group's
 * first row (its type; TEXT values still point into the key column's text
 * buffer, so its gpu_str values must not be GPU_STR_CONST ones), then each
 * aggregate finished by fin[a].  Each out[k].data
 * is one allocation (data, then the NULL bytes at out[k].nulls): free it
 * with gpu_free.  g->res[a].overflow says an integer SUM left int64.
 * Few groups (the hash path): *on_dev = 0 and g is gpu_group_agg's host
 * result.
 */
int gpu_group_agg_keep(const gpu_sortcol *keys, int nkeys, uint32_t n,
		       const gpu_agg *aggs, int naggs, const gpu_agg_fin *fin,
		       gpu_groups *g, gpu_col *out, int *on_dev, char *err,
		       size_t errlen);

/* ---- fused scan-filter-aggregate (gpu/ops.cu) ------------------------ */

/* A term of a fused filter: the row passes when all its terms are true.
 * Comparisons are the interpreter's (gvm_row.h) over the values LOAD_COL
 * and CONST give: false when either side is NULL; EQ is ==, NE its
 * negation, LT/LE/GT/GE by (x < y ? -1 : x > y) (REAL NaN compares
 * "equal" there, as on the CPU).  IS_NULL / NOT_NULL test a's flag. */
enum {
	GPU_TERM_EQ,
	GPU_TERM_NE,
	GPU_TERM_LT,
	GPU_TERM_LE,
	GPU_TERM_GT,
	GPU_TERM_GE,
	GPU_TERM_ISNULL,
	GPU_TERM_NOTNULL
};

/* A column operand converted before a REAL comparison, as I2R and D2R
 * do (gvm_row.h): (double)v, or val_dec_to_real(v, scale). */
enum { GPU_CVT_NONE, GPU_CVT_I2R, GPU_CVT_D2R };

typedef struct gpu_term {
	int op;		    /* GPU_TERM_* */
	int real;	    /* compare as doubles (a, b DOUBLE or FLOAT or
			       converted), else as int64 (INT32, INT64, DEC, DATE,
			       BOOL widened) */
	int bcol;	    /* b is a column, else the constant k */
	int acvt, bcvt;	    /* GPU_CVT_* of a and b */
	int ascale, bscale; /* GPU_CVT_D2R: the decimal's scale */
	gpu_col a;	    /* dense device columns over the n rows (no sel) */
	gpu_col b;
	bc_imm k; /* the constant: k.i widened as CONST does, or k.r */
} gpu_term;

/* Terms one fused call takes. */
#define GPU_FUSE_MAXTERMS 16

/*
 * gpu_group_agg over the rows [0, n) of dense columns that pass
 * terms[0..nterms), without materialising them: the terms are evaluated
 * inside the aggregation kernel and failing rows contribute nothing.
 * Groups' first rows are row numbers in [0, n).  No keys: one kernel
 * (per-thread accumulators, block reduction, per-block partials) and a
 * one-block kernel folding the partials, one download; one integer key
 * or several keys: the hash path of gpu_group_agg with the terms.
 * Exactness is gpu_group_agg's: when the fused kernel cannot give the
 * same result (an integer sum whose positive or negative part leaves the
 * range where no partial sum can overflow, more groups than fit, a REAL
 * min/max with keys), *declined is set with the reason in err and g is
 * empty: the caller runs the general path, which checks every partial
 * sum in row order.  No rows passing gives no groups.
 */
int gpu_fused_agg(const gpu_term *terms, int nterms, const gpu_sortcol *keys,
		  int nkeys, uint32_t n, const gpu_agg *aggs, int naggs,
		  gpu_groups *g, int *declined, char *err, size_t errlen);

/* ---- sort, distinct, join (gpu/relops.cu): row numbers in the CPU's
 * order; the engine gathers the rows on the host ---------------------- */

/*
 * ORDER BY: the first min(keep, n) row numbers of rows [0, n) in the
 * order of keys[0..nkeys) into perm (host): exec.c's sort_cmp order (NULLs
 * by nulls_first whatever the direction, -0.0 equal to 0.0, ties in row
 * order).  Stable CUB radix sort passes, last key first; a TEXT key is
 * one pass per 8 bytes of its longest value plus one for the length
 * (longer than GPU_SORT_MAX_TEXT: GPMDB_UNSUPPORTED, naming the length).
 */
int gpu_sort(const gpu_sortcol *keys, int nkeys, uint32_t n, uint32_t keep,
	     uint32_t *perm, char *err, size_t errlen);

/*
 * Rows [0, n) compared over cols (NULLs equal): the first row of each set
 * of equal rows, in row order, into *rows (host, malloc'd; free it) and
 * their count into *nrows.  Rows [nl, n) are a probe side: mode 0 keeps
 * the first of every set (DISTINCT, UNION: nl = n); mode 1 only sets that
 * hold a probe row (INTERSECT), mode 2 only those without (EXCEPT); only
 * rows below nl are kept.  exec.c's dedup.  With a TEXT column, equal
 * rows are brought together by a sort on a 64-bit hash of the row whose
 * neighbours are compared exactly; should two different rows share a
 * hash next to each other, the full sort of gpu_sort runs instead.
 */
int gpu_distinct(const gpu_sortcol *cols, int ncols, uint32_t n, uint32_t nl,
		 int mode, uint32_t **rows, uint32_t *nrows, char *err,
		 size_t errlen);

/*
 * Equi-join on nkeys keys (the same type on both sides, TEXT included;
 * desc and nulls_first unused; a NULL key matches nothing): the pairs
 * (li[k], ri[k]) (host, malloc'd) in exec.c's order: left rows
 * ascending, for each its matching right rows descending.  More than
 * max_pairs pairs is GPMDB_UNSUPPORTED.
 */
int gpu_join(const gpu_sortcol *lkeys, const gpu_sortcol *rkeys, int nkeys,
	     uint32_t nl, uint32_t nr, uint64_t max_pairs, uint32_t **li,
	     uint32_t **ri, uint64_t *npairs, char *err, size_t errlen);

/* gpu_join with the pairs left on the device (*li, *ri: gpu_free them;
 * NULL when there are none) and mapped: li[k] = lmap[left row], ri[k] =
 * rmap[right row] where lmap/rmap (device, may be NULL: the row itself)
 * are given, e.g. the selections the keys were computed over, so that the
 * pairs are physical rows of the inputs' columns. */
int gpu_join_dev(const gpu_sortcol *lkeys, const gpu_sortcol *rkeys, int nkeys,
		 uint32_t nl, uint32_t nr, const uint32_t *lmap,
		 const uint32_t *rmap, uint64_t max_pairs, uint32_t **li,
		 uint32_t **ri, uint64_t *npairs, char *err, size_t errlen);

/* SEMI/ANTI joins (exec.c's semi_out): which left rows are kept. */
enum {
	GPU_SEMI,     /* rows with a matching right row */
	GPU_ANTI,     /* rows without one (NOT EXISTS) */
	GPU_ANTI_NULL /* without one and with no NULL key (NOT IN; the
			 engine handles an empty right side and a right
			 side holding a NULL key) */
};

/*
 * The left rows [0, nl) a SEMI/ANTI join keeps (mode GPU_*), matched on
 * nkeys keys as gpu_join matches them (a NULL key matches nothing), in
 * row order into *rows (host, malloc'd; free it) and their number into
 * *nrows.  No residual condition: the engine runs gpu_join's pairs
 * through one itself.
 */
int gpu_semi_join(const gpu_sortcol *lkeys, const gpu_sortcol *rkeys, int nkeys,
		  uint32_t nl, uint32_t nr, int mode, uint32_t **rows,
		  uint32_t *nrows, char *err, size_t errlen);

/* gpu_semi_join with the rows on the device (*rows: gpu_free it) mapped
 * through lmap (device, may be NULL: the row itself), and NOT IN's rules
 * applied for GPU_ANTI_NULL (exec.c's semi_out): every left row when the
 * right side is empty, none when a right key is NULL. */
int gpu_semi_join_dev(const gpu_sortcol *lkeys, const gpu_sortcol *rkeys,
		      int nkeys, uint32_t nl, uint32_t nr, int mode,
		      const uint32_t *lmap, uint32_t **rows, uint32_t *nrows,
		      char *err, size_t errlen);

/*
 * DISTINCT aggregates: keys[0..nk) over m rows, the group keys then the
 * aggregate's argument last; *nulls (device, m bytes; gpu_free it) is 1
 * where the row is not the first of its set of equal rows (NULLs equal,
 * as the CPU's DISTINCT set) or its argument is NULL, so that the
 * argument with these NULL flags aggregates each group's distinct
 * values once, at their first rows, in row order.
 */
int gpu_distinct_nulls(const gpu_sortcol *keys, int nk, uint32_t m,
		       uint8_t **nulls, char *err, size_t errlen);

/* Bare columns (the first non-NULL value of a group): *out a new dense
 * INT64 column (one allocation at out->data: gpu_free it) of row numbers
 * 0..m-1, NULL where the dense column like (no sel) is NULL; MIN over it
 * gives each group's first row with a value. */
int gpu_row_numbers(const gpu_col *like, uint32_t m, gpu_col *out, char *err,
		    size_t errlen);

/* Rows idx[0..m) (device array) of the dense device column src into a
 * new dense column *dst (type, scale as src; TEXT values still point
 * into src's text buffer): one allocation at dst->data (gpu_free it;
 * none for VEC_NULL). */
int gpu_gather(const gpu_col *src, const uint32_t *idx, uint32_t m,
	       gpu_col *dst, char *err, size_t errlen);

/* out[k] = idx[k] == GPU_NO_ROW ? GPU_NO_ROW : base[idx[k]], k < m (device
 * arrays; *out a new one: gpu_free it): selections composed. */
int gpu_remap(const uint32_t *base, const uint32_t *idx, uint32_t m,
	      uint32_t **out, char *err, size_t errlen);

/* dst[k] = src[k] + add, k < n (device arrays, dst may be src): a
 * window's row numbers made the table's (exec_gpu_stream.c). */
int gpu_idx_shift(uint32_t *dst, const uint32_t *src, uint32_t n, uint32_t add,
		  char *err, size_t errlen);

/* A LEFT join's unmatched left rows: the positions [0, nl) that no
 * li[0..np) names (device), in order, into *rows (device: gpu_free it)
 * and *nrows; matched: those that some li names instead (a SEMI join's
 * rows after its residual). */
int gpu_unmatched(const uint32_t *li, uint64_t np, uint32_t nl, int matched,
		  uint32_t **rows, uint32_t *nrows, char *err, size_t errlen);

/* Device-to-device copy on gpmdb's stream. */
int gpu_copy(void *dst, const void *src, size_t n, char *err, size_t errlen);

/* Adds base to the offset of n TEXT values (device), so that columns with
 * different text buffers can share one buffer of a run. */
int gpu_str_rebase(gpu_str *v, uint64_t n, uint32_t base, char *err,
		   size_t errlen);

#ifdef __cplusplus
}
#endif

#endif /* GPMDB_GPU_H */
