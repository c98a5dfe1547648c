/*
 * storage.h - the storage engine's interface to the layers above it.
 *
 * A database is one pool file mapped with libpmem.  Tables are columnar:
 * a chain of tablets, each column of a tablet one 256-byte aligned array
 * with a NULL bitmap, a deleted-row bitmap per tablet and a string heap per
 * tablet.  Every change is made inside a storage transaction and is undone
 * by recovery unless that transaction committed:
 *   - catalog, allocator and row-count changes go through the metadata log
 *     (mlog: a conventional undo log appended by the one writer);
 *   - in-place updates and deletes of row data are undo-logged with HCL
 *     (hcl.h), the format the GPU writes too.
 *
 * Threading: a stg_pool is used by one thread at a time.  Any number of
 * connections (stg_open, in one process or several) may open a pool; a
 * write transaction takes the write lock at stg_begin and gives it back
 * at its end; a second writer waits up to the busy timeout, then gets
 * GPMDB_BUSY ("database is locked").  Reads see the last commit when
 * their snapshot began (stg_read_begin; storage/lock.c).
 *
 * Pointers returned into the pool (tablet views) stay valid until the next
 * call that can grow the pool: stg_append, stg_update, stg_table_create,
 * stg_object_create, stg_begin/commit/rollback.  Offsets never move.
 *
 * Every function returns a GPMDB_* result code; on failure the message is
 * in stg_errmsg(pool).
 */
#ifndef GPMDB_STORAGE_H
#define GPMDB_STORAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../include/gpmdb.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct stg_pool stg_pool;

/* ---- Durability ------------------------------------------------------- */

typedef enum {
	STG_DUR_AUTO =
	    0, /* detect: pmem on PM (DAX) or tmpfs, msync elsewhere */
	STG_DUR_PMEM = 1,  /* cache-line flush + fence (pmem_persist) */
	STG_DUR_MSYNC = 2, /* pmem_msync of dirty ranges */
	STG_DUR_OFF = 3	   /* no flushing at all: bulk loads, raw speed */
} stg_durability;

const char *stg_durability_name(stg_durability d); /* "pmem", "msync", "off" */
int stg_durability_parse(const char *s, stg_durability *out); /* incl. "auto" */

/* ---- Open / close ----------------------------------------------------- */

typedef struct {
	bool create; /* create the file when it does not exist */
	/* open for reading: nothing written to the pool (a crashed
	 * writer's transaction undone in memory), shared locks only */
	bool readonly;
	stg_durability durability; /* AUTO detects */
	uint64_t initial_size;	   /* new pools; 0 = STG_DEFAULT_INITIAL_SIZE */
	uint64_t max_size;	   /* new pools; 0 = STG_DEFAULT_MAX_SIZE */
	/* pmem mode: this connection's snapshots do not send writers
	 * beside readers (backups and checkpoints: only their last pass
	 * holds a snapshot, briefly; a writer that finds it on goes beside
	 * it for that transaction only) */
	bool quiet_reader;
} stg_open_opts;

#define STG_DEFAULT_INITIAL_SIZE (8ull << 20)  /* 8 MiB */
#define STG_DEFAULT_MAX_SIZE	 (64ull << 30) /* 64 GiB */

/*
 * Opens (or creates) the pool at path and runs recovery when the previous
 * writer crashed.  On failure *out is NULL, errmsg holds the reason, and
 * an existing file is left byte-for-byte unchanged.
 */
int stg_open(const char *path, const stg_open_opts *opts, stg_pool **out,
	     char *errmsg, size_t errmsg_len);
int stg_close(stg_pool *p);

const char *stg_errmsg(const stg_pool *p);
int stg_errcode(const stg_pool *p);
/* The mode the pool was opened in (pmem, msync, off). */
stg_durability stg_pool_durability(const stg_pool *p);
bool stg_pool_readonly(const stg_pool *p);
/* Are this connection's writes private until commit right now (msync
 * mode, or a pmem-mode transaction beside readers: the pool is mapped
 * privately and written through the log, so CUDA cannot store into it
 * and the CPU-assisted path writes for the GPU)? */
bool stg_pool_writes_private(const stg_pool *p);
/* pmem mode: writers wait for readers to go instead of writing beside
 * them through the log (PRAGMA gpu_persist = kernel). */
void stg_pool_set_in_place_only(stg_pool *p, bool on);

/* ---- Transactions ----------------------------------------------------- */

/* All modifying calls need an active transaction (GPMDB_MISUSE otherwise). */
int stg_begin(stg_pool *p);
/* A read snapshot: the view stays at the last commit until the matching
 * stg_read_end (calls nest; a connection inside a write transaction
 * reads its own view).  GPMDB_BUSY when a pmem-mode writer keeps the
 * snapshot out past the busy timeout. */
int stg_read_begin(stg_pool *p);
void stg_read_end(stg_pool *p);
/* How long a writer waits for another (and a pmem reader for a writer),
 * in ms; 0 = fail at once. */
void stg_busy_timeout(stg_pool *p, int ms);
int stg_get_busy_timeout(const stg_pool *p);
/* Changes when commits of other connections came into this view (plans
 * and caches made before are stale). */
uint64_t stg_data_version(const stg_pool *p);
/* Column col's write stamp (col -1: the table's live rows and their
 * ids): it changes whenever a write of this connection may have changed
 * the column's values, the table's rows or where its bytes are, and when
 * anything else did (a rollback, recovery, a moved mapping, another
 * connection's commit seen).  A copy of the column taken at stamp S is
 * current while this still says S (stamp.c; the GPU column cache). */
uint64_t stg_col_stamp(stg_pool *p, uint32_t table_id, int col);
int stg_commit(stg_pool *p);
int stg_rollback(stg_pool *p);
bool stg_in_txn(const stg_pool *p);

/* A savepoint marks a position inside the transaction; rolling back to it
 * undoes only what came after (statement-level rollback). */
typedef struct {
	uint64_t mlog_pos;
	uint64_t seq;
	size_t nimg; /* DRAM savepoint images taken before the mark */
} stg_mark;
int stg_savepoint(stg_pool *p, stg_mark *m);
int stg_rollback_to(stg_pool *p, const stg_mark *m);
/* The statement behind the mark succeeded and will not be rolled back to
 * it: the DRAM images it kept go (without this, a transaction of many
 * statements keeps an image of every target each of them changed, such
 * as a 4 KiB index leaf per single-row INSERT).  Only the newest mark. */
int stg_release(stg_pool *p, const stg_mark *m);

/* ---- Types ------------------------------------------------------------ */

typedef enum {
	STG_T_INT = 1,	   /* int32_t */
	STG_T_BIGINT = 2,  /* int64_t (also INTEGER) */
	STG_T_FLOAT = 3,   /* float */
	STG_T_DOUBLE = 4,  /* double (REAL, DOUBLE) */
	STG_T_DECIMAL = 5, /* int64_t scaled by 10^scale, precision <= 18 */
	STG_T_DATE = 6,	   /* int32_t days since 1970-01-01 */
	STG_T_BOOLEAN = 7, /* uint8_t 0 or 1 */
	STG_T_TEXT = 8	   /* stg_strref into the tablet's string heap */
} stg_type;

size_t stg_type_width(stg_type t); /* bytes per value in a column array */
const char *stg_type_name(stg_type t);

/* A string value inside a tablet: offset into that tablet's heap, length. */
typedef struct {
	uint32_t off;
	uint32_t len;
} stg_strref;

/* Text passed to stg_append / stg_update. */
typedef struct {
	const char *ptr;
	uint32_t len;
} stg_text;

/* ---- Catalog ---------------------------------------------------------- */

#define STG_NAME_MAX	128 /* bytes of a name, NUL included */
#define STG_MAX_COLUMNS 1000

#define STG_COL_NOTNULL	    0x01
#define STG_COL_PRIMARY_KEY 0x02
#define STG_COL_UNIQUE	    0x04
#define STG_COL_HAS_DEFAULT 0x08

typedef struct {
	const char *name;
	stg_type type;
	uint32_t flags;		  /* STG_COL_* */
	uint8_t precision, scale; /* DECIMAL(p,s) */
	uint32_t length;	  /* VARCHAR(n) / CHAR(n): n; 0 = unbounded */
	const char
	    *decl_type; /* as written, e.g. "VARCHAR(25)"; NULL = derived */
	const char *default_sql; /* DEFAULT expression as SQL text, or NULL */
} stg_column_def;

typedef enum {
	STG_OBJ_TABLE = 1,
	STG_OBJ_VIEW = 2,
	STG_OBJ_INDEX = 3
} stg_objkind;

/* Creates a table; sql is the CREATE statement kept for .schema. */
int stg_table_create(stg_pool *p, const char *name, const stg_column_def *cols,
		     int ncols, const char *sql, uint32_t *table_id);
/* Drops a table and every index on it; its space is freed at commit. */
int stg_table_drop(stg_pool *p, uint32_t table_id);
/* Case-insensitive lookup; GPMDB_NOTFOUND when absent (no message set). */
int stg_table_find(stg_pool *p, const char *name, uint32_t *table_id);

/* Views and indexes: a name, the table they belong to and their SQL. */
int stg_object_create(stg_pool *p, stg_objkind kind, const char *name,
		      const char *tbl_name, const char *sql);
int stg_object_drop(stg_pool *p, stg_objkind kind, const char *name);

/* Catalog listing, in creation order.  Strings are copies owned by the
 * caller's stg_object array, freed with stg_objects_free. */
typedef struct {
	stg_objkind kind;
	char name[STG_NAME_MAX];
	char tbl_name[STG_NAME_MAX];
	char *sql;
	uint32_t table_id; /* tables only */
} stg_object;
int stg_objects_list(stg_pool *p, stg_object **out, int *n);
void stg_objects_free(stg_object *objs, int n);

/* A table's schema, a malloc'd copy (free with stg_schema_free). */
typedef struct {
	char name[STG_NAME_MAX];
	stg_type type;
	uint32_t flags;
	uint8_t precision, scale;
	uint32_t length;
	char decl_type[64];
	char *default_sql; /* NULL when none */
} stg_column_info;

typedef struct {
	uint32_t table_id;
	char name[STG_NAME_MAX];
	int ncols;
	stg_column_info *cols;
} stg_schema;
int stg_table_schema(stg_pool *p, uint32_t table_id, stg_schema **out);
void stg_schema_free(stg_schema *s);

/* ---- Row data --------------------------------------------------------- */

/* Bitmaps are arrays of uint32_t words, bit (row % 32) of word (row / 32),
 * least significant bit first; a set bit means NULL (or deleted). */

/* One column of a batch: nrows values of the column's width (stg_text for
 * TEXT), and an optional NULL bitmap (NULL pointer: no NULLs). */
typedef struct {
	const void *values;
	const uint32_t *nulls;
} stg_col_batch;

/* Number of rows in the table, deleted ones included (row ids run from 0
 * to stg_row_count - 1).  Inside a transaction it counts its own appends. */
uint64_t stg_row_count(stg_pool *p, uint32_t table_id);
/* Rows marked deleted. */
uint64_t stg_deleted_count(stg_pool *p, uint32_t table_id);
/* Bytes of the pool the table holds: its catalog entry, tablet directory,
 * tablets and string heaps (allocated extents, not only rows in use). */
int stg_table_bytes(stg_pool *p, uint32_t table_id, uint64_t *bytes);
/* Where a table's bytes go (PRAGMA storage_info, storage/info.c): one
 * row per column (col >= 0: values, NULL bits and TEXT heap bytes of the
 * rows in use; bytes their sum), then rows with col -1 whose bytes alone
 * count: "(catalog)" (catalog entry and tablet directory), "(tablet
 * headers)", "(deleted bitmaps)", "(unused capacity)" (tablet room past
 * the rows in use, alignment, chunk rounding), "(heap unused)" (heap
 * bytes reserved, not handed out), "(heap dead)" (handed out, no row
 * refers to them), and "(index NAME)" per index (catalog entry, header,
 * arenas).  An encoded column's values are its packed bytes (and a
 * dictionary's entries), its nulls 0 without NULLs (the bitmap is the
 * tablet's shared zero one, counted in "(deleted bitmaps)").  The bytes of all
 * rows add up to stg_table_bytes plus the indexes'.  *rows malloc'd (free()).
 */
typedef struct {
	char name[STG_NAME_MAX + 16];
	int col; /* column number, -1 for the other rows */
	uint64_t values, nulls, heap;
	uint64_t bytes;
	/* columns: tablets holding rows by encoding (0 plain, 1 frame of
	 * reference, 2 dictionary, 3 compressed TEXT) and the field widths
	 * of 1 and 2 */
	uint32_t ntab[4];
	uint8_t bits_min, bits_max;
} stg_storage_row;
int stg_storage_info(stg_pool *p, uint32_t table_id, stg_storage_row **rows,
		     int *n);

/*
 * Tells storage that an append of nrows rows to the table is coming, before
 * its rows are converted and checked: when it will grow the pool file by
 * a large range (alloc_prepare's one growth, 64 MiB or more, pmem mode), a
 * thread allocates that range of the file meanwhile (posix_fallocate: on
 * tmpfs the kernel allocates and zeroes every page on one thread, about
 * 150 ms a GB, and it does not go faster from several threads,
 * tpc/batch/bench_grow.c), and the caller's OpenMP loops use one thread
 * fewer until the growth joins it.  Best effort: nothing changes in the
 * pool, a failure (a full disk) is found again and reported by the
 * append's own growth.  Inside a write transaction.
 */
int stg_grow_ahead(stg_pool *p, uint32_t table_id, uint64_t nrows);

/*
 * Appends nrows rows; cols has one entry per column of the table, in
 * order.  Fails whole (nothing visible) with GPMDB_CONSTRAINT naming the
 * first offending row when a NOT NULL column gets a NULL, with GPMDB_FULL
 * ("database or disk is full") when the pool cannot grow.  The rows
 * become durable and visible to others when the transaction commits.
 */
int stg_append(stg_pool *p, uint32_t table_id, const stg_col_batch *cols,
	       uint64_t nrows);
/* stg_append where from[c] (from NULL: all STG_FROM_SAME) says how
 * column c's values come: STG_FROM_I32, int32_t values of a BIGINT column
 * widened as they are written (no converted copy of the batch first; the
 * unique key checks read them as they are). */
enum { STG_FROM_SAME = 0, STG_FROM_I32 = 1 };
int stg_append_from(stg_pool *p, uint32_t table_id, const stg_col_batch *cols,
		    const uint8_t *from, uint64_t nrows);

/*
 * Sets ncols columns (cols[i]) of n rows (rowids) to new values
 * (vals[i].values holds n values of column cols[i]).  Old values are
 * undo-logged with HCL, as the GPU writer does, before they are
 * overwritten.  Each row id may appear at most once.
 */
int stg_update(stg_pool *p, uint32_t table_id, int ncols, const uint32_t *cols,
	       const uint64_t *rowids, uint64_t n, const stg_col_batch *vals);

/* Marks n rows deleted (HCL undo-logged).  Deleting a deleted row is a no-op.
 */
int stg_delete(stg_pool *p, uint32_t table_id, const uint64_t *rowids,
	       uint64_t n);

/* An encoded column of a tablet view (layout.h "Encodings"): kind 0
 * plain (the view's data[c]), 1 frame of reference, 2 dictionary, 3
 * compressed TEXT (read it through stg_tablet_text or
 * stg_tablet_decode_all: stg_colenc_decode gives its rows as ''). */
typedef struct {
	uint8_t kind, bits;
	uint8_t width;		/* bytes of a plain value */
	uint64_t base;		/* FOR: the frame; ZTEXT: the lengths' */
	const uint64_t *words;	/* the packed fields (ZTEXT: lengths) */
	const stg_strref *dict; /* DICT: code -> string in the heap */
	uint64_t dict_n;	/* DICT: entries; ZTEXT: blocks */
	const void *blk;	/* ZTEXT: stg_zt_blk[dict_n + 1] */
	const uint8_t *z;	/* ZTEXT: the frames */
	uint64_t heap_used;	/* ZTEXT: the tablet heap's bytes in use */
} stg_colenc;

/* Rows [from, from + n) of a dictionary column (kind 2) as codes into
 * out: code k is the string e->dict[k]; a code outside the dictionary
 * (gpmdb_check finds none) reads as e->dict_n, the string '' that
 * stg_colenc_decode gives it.  For readers that evaluate a predicate
 * once per dictionary entry (engine/exec/pipe_dict.c). */
void stg_dict_codes(const stg_colenc *e, uint64_t from, uint64_t n,
		    uint32_t *out);

/* Zero-copy view of one tablet, for scans.  A column of an encoded
 * tablet has data[c] NULL (so that no reader takes the packed bytes for
 * values) and enc[c] describes it: read it through stg_tablet_col. */
typedef struct {
	uint64_t first_row; /* row id of the tablet's first row */
	uint32_t nrows;	    /* rows in use (inside the table's row count) */
	uint32_t capacity;
	int ncols;
	const void *const *data;      /* data[c]: column c's array */
	const uint32_t *const *nulls; /* nulls[c]: column c's NULL bitmap */
	const uint32_t *deleted;      /* deleted-row bitmap */
	const char *heap; /* string heap: stg_strref.off is relative to it */
	const stg_colenc *enc; /* NULL: every column plain */
	uint64_t heap_used;    /* the heap's bytes in use */
} stg_tablet_view;

/* Rows [from, from + n) of column c (w: stg_type_width of its type) as
 * plain values: the pool's array itself when the column is plain (no
 * copy), else decoded into buf (n * w bytes), which is returned.  TEXT
 * gives stg_strref relative to the view's heap. */
const void *stg_tablet_col(const stg_tablet_view *v, int c, size_t w,
			   uint64_t from, uint64_t n, void *buf);
/* Decodes rows [from, from + n) of an encoded column into out
 * (compressed TEXT: every row as '', see stg_tablet_text). */
void stg_colenc_decode(const stg_colenc *e, size_t w, uint64_t from, uint64_t n,
		       void *out);
/* Rows [from, from + n) of TEXT column c as stg_strref (out[n]) relative
 * to *heap: the view's heap for a plain or dictionary column, tb's
 * buffer for a compressed one, whose blocks covering the rows are
 * decompressed into it (valid until tb's next use; stg_textbuf_free
 * after the last).  GPMDB_CORRUPT when a block does not decompress to
 * what its directory says (nothing misread), GPMDB_NOMEM. */
typedef struct {
	char *buf;
	size_t cap;
	const void *frame; /* the one block buf holds, if any */
	uint64_t zlen;
} stg_textbuf;
int stg_tablet_text(const stg_tablet_view *v, int c, uint64_t from, uint64_t n,
		    stg_strref *out, const char **heap, stg_textbuf *tb);
void stg_textbuf_free(stg_textbuf *tb);
/* A compressed TEXT column (enc kind STG_ENC_ZTEXT) block by block, for
 * a reader that decompresses its blocks in parallel (the GPU cache):
 * e->dict_n blocks; block b holds rows [*row0, *row1) of the tablet,
 * raw bytes: their strings back to back, row r's stg_zt_len bytes (NULL
 * rows 0) after those of the rows before it in the block.
 * stg_zt_unpack decompresses block b into dst (raw bytes):
 * GPMDB_CORRUPT when it does not decompress to them, GPMDB_NOMEM. */
void stg_zt_block(const stg_colenc *e, uint64_t b, uint64_t *row0,
		  uint64_t *row1, uint32_t *raw);
uint32_t stg_zt_len(const stg_colenc *e, uint64_t r);
int stg_zt_unpack(const stg_colenc *e, uint64_t b, char *dst);
/* A reader's buffers for one encoded column, a vector at a time: rows
 * [from, from + n) of column c of v, n <= STG_VEC_ROWS, decoded
 * into vb (allocated on first use) and *data pointed at them, *heap at
 * what TEXT refs are relative to (stg_tablet_text).  GPMDB_NOMEM,
 * GPMDB_CORRUPT (stg_decode_errstr). */
#define STG_VEC_ROWS 2048 /* layout.h STG_ZT_GROUP */
typedef struct {
	void *arr;
	stg_textbuf tb;
} stg_vecbuf;
int stg_tablet_vec(const stg_tablet_view *v, int c, uint64_t from, uint64_t n,
		   stg_vecbuf *vb, const void **data, const char **heap);
void stg_vecbuf_free(stg_vecbuf *vb);
/* For readers that take a tablet's columns as whole arrays: the
 * encoded columns of *v (those with want[c] set, want NULL: all) decoded
 * into arrays owned by pb, and v->data pointed at them (v->enc NULL:
 * the view reads as plain; unwanted encoded columns stay NULL).  A plain
 * view is left as it is (no copy).  A compressed TEXT column decoded
 * moves v->heap to a copy owned by pb (the heap's bytes, then the
 * column's strings): every stg_strref of the view resolves against
 * v->heap as before.  stg_plainbuf_free after the last read of the
 * view.  GPMDB_NOMEM, GPMDB_CORRUPT (a block that does not decompress),
 * GPMDB_TOOBIG (the copy past 4 GiB). */
typedef struct {
	void **arr;
	const void **data;
	int n;
	char *heap;
} stg_plainbuf;
int stg_tablet_decode_all(stg_tablet_view *v, const uint8_t *want,
			  stg_plainbuf *pb);
void stg_plainbuf_free(stg_plainbuf *pb);
/* The message for a failure of stg_tablet_decode_all / stg_tablet_text. */
const char *stg_decode_errstr(int rc);
static inline bool stg_tablet_plain(const stg_tablet_view *v, int c)
{
	return v->data[c] != NULL;
}

/* Maps the pool's pages that hold columns of table table_id on every core
 * (prefetch.c): types[c] the storage type of column c (ncols of them),
 * -1 for a column not wanted.  Nothing is copied or kept; *bytes: what
 * was mapped.  For a statement that is about to read them and waits for
 * something else first (a fresh process's GPU setup). */
int stg_prefetch_cols(stg_pool *p, uint32_t table_id, const int *types,
		      int ncols, uint64_t *bytes);

/* ---- Encodings (encode.c) --------------------------------------------- */

/* VACUUM: every table's tablets rewritten encoded where that is smaller
 * (layout.h "Encodings"), their heaps holding only the strings rows
 * refer to; one transaction per tablet (a crash leaves each tablet
 * before or after), outside any transaction.  bytes_before/after: the
 * tables' bytes (stg_table_bytes), either may be NULL.  A pool of
 * format version < 4 gets GPMDB_UNSUPPORTED with the way to upgrade. */
int stg_vacuum(stg_pool *p, uint64_t *bytes_before, uint64_t *bytes_after);
/* Encode the tables a transaction wrote at its commit (per connection;
 * also on at open when the environment has GPMDB_AUTO_ENCODE=1). */
void stg_set_auto_encode(stg_pool *p, bool on);
bool stg_auto_encode(const stg_pool *p);
/* In a transaction: the encoded tablets holding rows [first, first + n)
 * of a table made plain again (a tablet move under the log), before a
 * write that changes their values (the GPU write paths: n UINT64_MAX
 * for the whole table). */
int stg_table_widen(stg_pool *p, uint32_t table_id, uint64_t first, uint64_t n);
/* Tablets of the table that are encoded (0: none). */
uint32_t stg_table_encoded(stg_pool *p, uint32_t table_id);

int stg_tablet_count(stg_pool *p, uint32_t table_id, uint32_t *n);
/* view's arrays point into storage owned by the pool (see header note). */
int stg_tablet_get(stg_pool *p, uint32_t table_id, uint32_t idx,
		   stg_tablet_view *view);

/* Copies n values of one column starting at first_row into out (width of
 * the type; TEXT gives stg_text pointing into the pool) and, if nulls is
 * not NULL, a NULL bitmap of n bits starting at bit 0. */
int stg_read(stg_pool *p, uint32_t table_id, uint32_t col, uint64_t first_row,
	     uint64_t n, void *out, uint32_t *nulls);

/* ---- Indexes (index.c, btree.c; docs/ARCHITECTURE.md "Indexes") ------- */

/*
 * A B+-tree in the pool per index: every PRIMARY KEY and UNIQUE
 * constraint and every CREATE INDEX.  Entries are (key, row id) in key
 * order, NULLs first (SQLite's order), then row id; only live rows have
 * entries.  Nodes change under the metadata log like any other target, so
 * a statement, savepoint or transaction rollback and crash recovery undo
 * them with the rows.  stg_append, stg_update and stg_delete keep every
 * index of their table exact and refuse a duplicate of a unique key
 * (GPMDB_CONSTRAINT "UNIQUE constraint failed: t.a, t.b", nothing
 * written); stg_constraint_row says which row of the batch it was.
 */
#define STG_INDEX_MAX_COLS 32

typedef enum {
	STG_IX_CREATED = 0, /* CREATE [UNIQUE] INDEX ('c' in index_list) */
	STG_IX_PRIMARY = 1, /* PRIMARY KEY ('pk') */
	STG_IX_UNIQUE = 2   /* UNIQUE constraint ('u') */
} stg_ix_origin;

typedef struct {
	uint32_t index_id;
	uint32_t table_id;
	char name[STG_NAME_MAX];
	char tbl_name[STG_NAME_MAX];
	bool unique;
	stg_ix_origin origin;
	int ncols;
	uint32_t cols[STG_INDEX_MAX_COLS]; /* table column numbers */
	uint64_t entries;		   /* live entries */
	uint64_t bytes;			   /* extents the index holds */
	uint32_t height;		   /* levels, 1 = a root leaf */
} stg_index_info;

/* Creates an index over the table's live rows (bulk: the rows' keys are
 * sorted, then the leaves built left to right).  A unique index over
 * duplicate keys fails with GPMDB_CONSTRAINT and leaves nothing.  sql is
 * kept for .schema (NULL for constraint indexes). */
int stg_index_create(stg_pool *p, uint32_t table_id, const char *name,
		     const uint32_t *cols, int ncols, bool unique,
		     stg_ix_origin origin, const char *sql, uint32_t *index_id);
/* Drops an index by name (its space is freed at commit). */
int stg_index_drop(stg_pool *p, const char *name);
/* Builds the index again from its table (REINDEX). */
int stg_index_rebuild(stg_pool *p, uint32_t index_id);
/* Every index of a table (table_id 0: of every table), in creation order;
 * *out malloc'd (free()). */
int stg_index_list(stg_pool *p, uint32_t table_id, stg_index_info **out,
		   int *n);
/* By name, case-insensitive: GPMDB_NOTFOUND (no message) when absent. */
int stg_index_find(stg_pool *p, const char *name, stg_index_info *out);

/* A key column's value in the column's storage representation: i for
 * INT, BIGINT, DECIMAL (scaled by the column's scale), DATE and BOOLEAN;
 * d for FLOAT and DOUBLE; s/len for TEXT. */
typedef struct {
	bool null;
	int64_t i;
	double d;
	const char *s;
	uint32_t len;
} stg_key_val;

/* A range over a prefix of the key: lo holds nlo values of the first
 * nlo key columns (nlo 0: from the first entry), hi nhi values (nhi 0: to
 * the last).  An inclusive bound takes every entry whose first nlo
 * columns equal lo.  desc reads the range from its end backwards. */
typedef struct {
	int nlo, nhi;
	const stg_key_val *lo, *hi;
	bool lo_incl, hi_incl;
	bool desc;
} stg_ix_range;

/* A cursor over a range.  It reads the tree as it is: a write to the
 * table between stg_icur_open and the last stg_icur_next is a misuse. */
typedef struct stg_icur stg_icur;
int stg_icur_open(stg_pool *p, uint32_t index_id, const stg_ix_range *r,
		  stg_icur **out);
/* Up to max row ids in key order (reverse when desc); *got 0 at the end. */
int stg_icur_next(stg_icur *c, uint64_t *rowids, uint32_t max, uint32_t *got);
void stg_icur_close(stg_icur *c);
/* Fraction of the index's entries inside the range, estimated from the
 * tree's inner nodes (exact for a root leaf): the planner's cost. */
double stg_index_estimate(stg_pool *p, uint32_t index_id,
			  const stg_ix_range *r);

/* Looks n keys up in one call (the bound arrays of UPDATE ... WHERE k = ?):
 * keys has one batch per key column, in the columns' storage arrays as
 * stg_append takes them; rowids[i] is the row id of the first entry equal
 * to key i, or -1 (a key with a NULL matches nothing). */
int stg_index_probe(stg_pool *p, uint32_t index_id, const stg_col_batch *keys,
		    uint64_t n, int64_t *rowids);

/* Writes that bypass stg_append/stg_update/stg_delete (GPU kernels):
 *   INSERT: stg_append_reserve checks the unique keys, stg_append_finish
 *           adds the entries (nothing to call);
 *   UPDATE: stg_index_update_begin before the kernels (checks the new
 *           keys, removes the rows' entries of indexes on the changed
 *           columns), stg_index_update_end after them (adds them again
 *           from the table);
 *   DELETE: stg_index_delete_rows before the kernels.
 * Row ids must be distinct. */
int stg_index_update_begin(stg_pool *p, uint32_t table_id, int ncols,
			   const uint32_t *cols, const uint64_t *rowids,
			   uint64_t n, const stg_col_batch *vals);
int stg_index_update_end(stg_pool *p, uint32_t table_id, int ncols,
			 const uint32_t *cols, const uint64_t *rowids,
			 uint64_t n);
int stg_index_delete_rows(stg_pool *p, uint32_t table_id,
			  const uint64_t *rowids, uint64_t n);
/* After GPMDB_CONSTRAINT from a write: the offending row's position in
 * the batch (of the new rows, or of rowids), -1 when unknown. */
int64_t stg_constraint_row(const stg_pool *p);
/* ... and its key, "t.a = 5, t.b = 'x'" ("" when unknown). */
const char *stg_constraint_key(const stg_pool *p);

/* Bulk sorting of index entries (CREATE INDEX, large batches): entries
 * are n records of width bytes compared with memcmp over their first
 * cmp bytes; a hook (the GPU backend) may sort them instead of the CPU.
 * It returns GPMDB_OK when it sorted them, anything else to let the CPU
 * do it; *why (if not NULL) says why it declined.  dup (if not NULL):
 * when the records end in a row id (width >= cmp + 8), the lowest row id
 * of a record whose first cmp bytes equal its predecessor's once sorted,
 * -1 when none, -2 when the hook did not look (a unique-key check then
 * compares the neighbours itself). */
typedef int (*stg_ix_sort_hook)(void *recs, uint64_t n, uint32_t width,
				uint32_t cmp, int64_t *dup, char *why,
				size_t whylen);
void stg_set_index_sort_hook(stg_ix_sort_hook fn, uint64_t min_rows);
/* Told when a sort the sort hook will take is coming (an index build's,
 * a big append's key check), before its records are made: the GPU
 * backend gets its context, memory and staging ready meanwhile instead
 * of after (the first CREATE INDEX of a process paid them in turn). */
typedef void (*stg_ix_prewarm_hook)(uint64_t n, uint32_t width);
void stg_set_index_prewarm_hook(stg_ix_prewarm_hook fn);

/* Bulk probe by a hook (the GPU backend): the index's entries as records
 * of width = kw + 8 bytes (kw bytes of key, memcmp-ordered, then the row
 * id, uint64_t little-endian), in key order, produced on demand by fill
 * (the hook caches them by (pool, index_id, version): version changes
 * with every change of the index).  probes holds m keys of kw bytes; the
 * hook sets rowids[i] to the row id of the first record whose first kw
 * bytes equal probe i, -1 when none.  GPMDB_OK when it did the probe,
 * anything else to let the CPU do it (*why says why). */
typedef struct {
	const void *pool;
	uint32_t index_id;
	uint64_t version;
	uint64_t n; /* records */
	uint32_t kw, width;
	int (*fill)(void *ctx, void *recs); /* n records, key order */
	void *ctx;
	const void *probes;
	uint64_t m;
} stg_ix_probe_job;
typedef int (*stg_ix_probe_hook)(const stg_ix_probe_job *job, int64_t *rowids,
				 char *why, size_t whylen);
void stg_set_index_probe_hook(stg_ix_probe_hook fn, uint64_t min_keys);
/* What the last bulk sort / probe of this thread ran on ("gpu", "cpu")
 * and why the hook declined, for gpu_stats and gpu_strict. */
typedef struct {
	bool sort_gpu, probe_gpu;	    /* the last bulk sort / probe */
	char sort_why[200], probe_why[200]; /* why the hook declined */
	uint64_t sort_rows, probe_keys;
	uint64_t sort_us, probe_us; /* their wall time */
	bool sort_new, probe_new;   /* since stg_index_hook_stats_reset */
} stg_ix_hook_stats;
void stg_index_hook_stats(stg_ix_hook_stats *out);
/* Clears sort_new and probe_new (the start of a statement). */
void stg_index_hook_stats_reset(void);

/* ---- Integrity and statistics ---------------------------------------- */

/* Checks superblock, catalog, extents (none leaked, none used twice), row
 * counts and bitmaps.  *report (malloc'd, may be NULL) lists every problem,
 * one per line, or "ok".  Returns GPMDB_OK or GPMDB_CORRUPT. */
int stg_check(stg_pool *p, char **report);

typedef struct {
	uint64_t pool_size; /* bytes mapped */
	uint64_t max_size;
	uint64_t used_bytes;	  /* allocated extents */
	uint64_t bytes_persisted; /* since open: bytes flushed */
	uint64_t last_txn_bytes_persisted;
	double recovery_ms;	    /* time spent in recovery at open */
	uint64_t recovered_entries; /* undo entries applied at open */
	stg_durability durability;
	bool is_pmem; /* libpmem says the mapping is real PM */
	/* pmem mode: times this connection mapped the pool privately to
	 * write (or read) beside other connections' snapshots */
	uint64_t beside_readers;
	/* pmem mode: of this connection's commits, those made privately
	 * beside readers (through the log) */
	uint64_t beside_commits;
} stg_stats;
int stg_get_stats(stg_pool *p, stg_stats *out);

/* Writes the committed state of the pool to a new file dest (backup.c):
 * outside a transaction; dest must not exist; its superblock is written
 * last, so a copy cut short never opens.  *bytes: the copy's size.  The
 * caller holds a read snapshot (VACUUM INTO). */
int stg_backup_to(stg_pool *p, const char *dest, uint64_t *bytes);

/* A copy in steps of pages (STG_BACKUP_PAGE bytes), the shape of SQLite's
 * backup API: begin (dest opened: created, or an earlier copy of this
 * database updated incrementally, or another gpmdb file overwritten),
 * step (n pages, n < 0: all; GPMDB_DONE once the copy is complete),
 * finish (a complete copy gets its superblock and is made durable; a new
 * file that is incomplete or failed is removed, an old copy rewritten in
 * part keeps the "incomplete copy" superblock; the handle is freed).
 * Unless held, p is a connection of the backup's own and it takes its
 * snapshots itself (pmem mode: passes without one first, the last under
 * one); with held the caller holds one from begin to finish. */
#define STG_BACKUP_PAGE 4096u
typedef struct stg_backup stg_backup;
typedef struct {
	bool full;	  /* a full copy even onto an earlier copy */
	bool create_only; /* dest must not exist (VACUUM INTO) */
	bool held;	  /* the caller holds a read snapshot throughout */
} stg_backup_opts;
int stg_backup_begin(stg_pool *p, const char *dest, const stg_backup_opts *o,
		     stg_backup **out);
int stg_backup_step(stg_backup *b, long long npages);
uint64_t stg_backup_remaining(const stg_backup *b);
uint64_t stg_backup_pagecount(const stg_backup *b);
typedef struct {
	bool incremental;	/* only zones changed since the copy */
	uint64_t zones;		/* zones of the pool */
	uint64_t zones_copied;	/* distinct zones written so far */
	uint64_t bytes_written; /* all passes */
	uint64_t zone_size;
	int passes;
	uint64_t zones_lines; /* zones written as lines into a delta */
	uint64_t delta_bytes; /* their entries' bytes */
	char why_full[300];   /* a full copy: why */
} stg_backup_info;
void stg_backup_get_info(const stg_backup *b, stg_backup_info *out);
int stg_backup_finish(stg_backup *b);

/* ---- Zones (zones.c) ------------------------------------------------- */

/* The zone table: 64 KiB zones stamped with the counter value of the
 * transaction that last wrote them.  ensure (inside a transaction) makes it or
 * grows it to the pool's size; mark stamps a range that a GPU kernel writes. */
typedef struct {
	bool tracked;	    /* the format has zone tables (version >= 2) */
	uint32_t version;   /* the pool's format version */
	bool table;	    /* a zone table exists */
	uint64_t zone_size; /* STG_ZONE_SIZE */
	uint64_t zones;	    /* zones of the pool */
	uint64_t covered;   /* zones the table covers */
	uint64_t id, since; /* the table's id, its counter when made */
	uint64_t gen;	    /* its counter in this view */
	uint64_t lines;	    /* zones the line masks cover */
} stg_zones;
int stg_zones_ensure(stg_pool *p);
void stg_zones_info(stg_pool *p, stg_zones *out);
/* Zones stamped after since (uncovered zones count). */
uint64_t stg_zones_changed(stg_pool *p, uint64_t since);
void stg_zone_mark(stg_pool *p, uint64_t off, uint64_t len);

/* Where storage's write calls spend their time, cumulative since open
 * (nanoseconds): unique-key checks before an append (stg_append and
 * stg_append_reserve), index entries (UPDATE's key check included), undo
 * logging of UPDATE and DELETE (the HCL segment), and the commit's disk
 * writes (msync mode's frame, fdatasync and in-place writes).  The
 * engine's write phases subtract them from its "data" and "commit"
 * phases.  tablets_ns: making an append's tablets (stg_append_reserve's
 * tab_ensure_tablets), of which grow_ns growing the pool file
 * (pool_extend: the file extended and mapped again), of which
 * extend_ns the file's extension alone (posix_fallocate: on tmpfs the
 * kernel allocates and zeroes every page); grows: the pool's growths.
 * key_alloc_ns, key_enc_ns, key_sort_ns, key_probe_ns: the parts of the
 * unique-key checks (a large records buffer allocated and its pages
 * faulted in; the keys encoded as records and NULL keys dropped; the
 * records sorted, by the GPU's hook or the CPU; each compared with its
 * neighbour, unless the GPU's sort did, and looked up in the tree). */
typedef struct {
	uint64_t key_check_ns, index_ns, log_ns, persist_ns;
	uint64_t tablets_ns, grow_ns, extend_ns, grows;
	uint64_t key_alloc_ns, key_enc_ns, key_sort_ns, key_probe_ns;
} stg_write_times;
void stg_get_write_times(const stg_pool *p, stg_write_times *out);

/* Base address and length of the mapping, for GPU registration. */
void *stg_pool_base(stg_pool *p, uint64_t *len);
/* The mapping GPU kernels store into and its length: in pmem mode on
 * shmem a second shared mapping of the file that stays while the
 * connection does (its registrations survive the base going private
 * beside readers), else the base.  GPMDB_GPU_NO_ALIAS=1: the base
 * (measurements). */
void *stg_pool_gpu_base(stg_pool *p, uint64_t *len);
/* That second mapping while the base is shared too (the same bytes at
 * the same offsets: registered ranges of it serve uploads of the base's
 * bytes), else NULL. */
const void *stg_pool_gpu_alias(const stg_pool *p);

/* ---- Crash injection (tests) ----------------------------------------- */

/*
 * GPMDB_CRASH_AT="point:n[,point:n...]" kills the process with SIGKILL the
 * n-th time (1-based) the named point is reached.  Points are listed in
 * docs/ARCHITECTURE.md.  A no-op when the variable is unset.
 */
void stg_crash_point(const char *name);

/* Tests: called by a pmem reader after it has undone a dead writer's
 * transaction and before it looks again (NULL: nothing), so that a test
 * can kill another writer in that window (crash_concurrency.c). */
extern void (*stg_test_after_recover)(void);

#ifdef __cplusplus
}
#endif
#endif /* GPMDB_STORAGE_H */
