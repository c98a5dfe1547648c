/*
 * layout.h - the on-pool structures of a gpmdb pool file.
 *
 * Plain C with fixed-width fields and offsets (from the start of the pool
 * unless a comment says otherwise), never pointers, so that the host code
 * and the CUDA kernels read the same bytes.  Little-endian only.
 *
 * File layout:
 *   [0, 4096)                superblock, written once at creation
 *   [root_off, +4096)        root block (mutable, undo-logged)
 *   [log_off, +log_size)     metadata log (mlog.c)
 *   [bitmap_off, +bm_size)   allocator bitmap, one bit per chunk
 *   [data_off, pool_size)    chunks handed out as extents (alloc.c)
 *
 * Chunk size: the smallest power of two >= 4 KiB that keeps the bitmap
 * at <= 1M chunks (128 KiB) for the pool's max_size.  The default 64 GiB
 * limit gives 64 KiB chunks; small test pools get 4 KiB chunks.  A fixed
 * bitmap covering max_size means growing never moves allocator state.
 */
#ifndef GPMDB_LAYOUT_H
#define GPMDB_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

#define STG_SB_MAGIC "GPMDBPL1"
/* Format versions: 1, the first; 2 adds the zone table (root.zt_*,
 * zones.c) and a copy's identity (superblock copy_*, backup.c).  This
 * build opens both and makes version 2.  A pool of version 1 never gets
 * a zone table: a build of version 1 would go on writing it without
 * stamping zones, and incremental copies would miss those changes.  Its
 * copies (.backup, VACUUM INTO, checkpoints) are written as version 2,
 * which is the way to upgrade it.  Builds of version 1 refuse version 2
 * ("format version 2 is not supported"), builds of 2 refuse 3. */
#define STG_FORMAT_VERSION     5u
#define STG_FORMAT_VERSION_MIN 1u
#define STG_FORMAT_ZONES       2u /* the first version with zone tables */
/* Version 3 adds trimmed tablets (stg_tablet_hdr.rows_alloc): their
 * arrays hold fewer rows than their capacity, and a build of version 2
 * would append past them.  A pool of version 1 or 2 is never given one
 * (its heaps are trimmed, which older builds read and grow as ever);
 * its copies are version 3. */
#define STG_FORMAT_TRIM 3u
/* Version 4 adds encoded tablets (stg_tablet_hdr.enc_rel, stg_col_enc):
 * a build of version 3 would read their packed arrays as plain values.
 * A pool of version 1-3 is never given one (VACUUM there says so); its
 * copies are version 4. */
#define STG_FORMAT_ENC 4u
/* Version 5 adds compressed TEXT (STG_ENC_ZTEXT): a build of version 4
 * would take its packed lengths for dictionary codes.  A pool of
 * version 4 opens and is encoded as before, without it (VACUUM there
 * uses the kinds version 4 knows); its copies are version 5. */
#define STG_FORMAT_ZTEXT 5u
#define STG_SB_SIZE	 4096u
#define STG_SB_CRC_OFF	 4092u
#define STG_ROOT_SIZE	 4096u
#define STG_MIN_CHUNK	 4096ull
#define STG_MAX_CHUNKS	 (1ull << 20)

/* ---- Superblock (immutable) ------------------------------------------- */

typedef struct {
	char magic[8];	  /* "GPMDBPL1" */
	uint32_t version; /* STG_FORMAT_VERSION */
	uint32_t sb_size; /* 4096 */
	uint8_t uuid[16];
	uint64_t ctime;	     /* creation, seconds since the epoch */
	uint64_t max_size;   /* the pool never grows past this */
	uint64_t chunk_size; /* allocation unit, a power of two */
	uint64_t root_off;
	uint64_t root_size;
	uint64_t log_off;
	uint64_t log_size;
	uint64_t bitmap_off;
	uint64_t bitmap_size;
	uint64_t data_off; /* chunk 0; chunk-aligned */
	uint64_t nchunks;  /* chunks the bitmap covers (up to max_size) */
	uint64_t initial_size;
	/* [128, 192): a copy's identity, written by backup.c in copies
	 * only (zero in a pool made by stg_open) */
	uint64_t copy_magic;  /* STG_COPY_MAGIC */
	uint8_t copy_src[16]; /* the uuid of the database copied */
	uint64_t copy_zt_id;  /* its zone table (root.zt_id) */
	uint64_t copy_gen;    /* its log generation copied (an incomplete
			       * copy: the complete copy's it updates, 0
			       * for none) */
	uint64_t copy_time;   /* seconds since the epoch */
	/* the copy's pending deltas (delta.c): the first one's file
	 * offset (the image's end) and the chain's bytes; 0, 0: none.  A
	 * complete copy with deltas has STG_SB_MAGIC_DELTA */
	uint64_t copy_delta_off;
	uint64_t copy_delta_len;
	uint8_t pad[STG_SB_CRC_OFF - 192];
	uint32_t crc; /* zlib crc32 of bytes [0, 4092) */
} stg_superblock;

/* A copy being written (backup.c) has this magic instead of
 * STG_SB_MAGIC until its last write, so it never opens as a database. */
#define STG_SB_MAGIC_INCOMPLETE "GPMDBINC"
#define STG_COPY_MAGIC		0x59504f43424450ull /* "PDBCOPY" */
/* A complete copy whose image is followed by deltas not yet applied
 * (delta.c): the magic keeps builds that do not know deltas from
 * reading the stale image ("bad magic"); opening applies them. */
#define STG_SB_MAGIC_DELTA "GPMDBDLT"

_Static_assert(sizeof(stg_superblock) == STG_SB_SIZE, "superblock size");
_Static_assert(offsetof(stg_superblock, version) == 8, "version at 8");
_Static_assert(offsetof(stg_superblock, sb_size) == 12, "sb size at 12");
_Static_assert(offsetof(stg_superblock, uuid) == 16, "uuid at 16");
_Static_assert(offsetof(stg_superblock, ctime) == 32, "ctime at 32");
_Static_assert(offsetof(stg_superblock, initial_size) == 120, "initial 120");
_Static_assert(offsetof(stg_superblock, copy_magic) == 128, "copy at 128");
_Static_assert(offsetof(stg_superblock, crc) == STG_SB_CRC_OFF, "crc");

/* ---- Root block (changes only through undo-logged writes) -------------- */

#define STG_ROOT_MAGIC 0x31544f524c504d47ull /* "GMPLROT1" */

typedef struct {
	uint64_t magic;
	uint64_t pool_size; /* bytes the allocator may hand out up to */
	uint64_t cat_head;  /* first catalog entry, 0 = none */
	uint64_t cat_tail;  /* last catalog entry (creation order) */
	uint64_t next_obj_seq;
	uint32_t next_table_id;
	uint32_t pad0;
	/* [48, 80): the zone table (zones.c), one undo target; zero in a
	 * pool no backup has been taken of */
	uint64_t zt_off;   /* extent: counter, stamps; 0 = none */
	uint64_t zt_zones; /* zones it covers, from offset 0 */
	uint64_t zt_id;	   /* random, new with every table made */
	uint64_t zt_since; /* its counter when made (1) */
	/* [80, 96): the line masks (zones.c), one undo target; zero in a
	 * pool no backup of this build has been taken of */
	uint64_t lm_off;   /* extent: stg_lm_zone records; 0 = none */
	uint64_t lm_zones; /* zones it covers, from offset 0 */
	uint8_t pad[STG_ROOT_SIZE - 96];
} stg_root;

_Static_assert(sizeof(stg_root) == STG_ROOT_SIZE, "root size");
_Static_assert(offsetof(stg_root, zt_off) == 48, "zone table at 48");
_Static_assert(offsetof(stg_root, lm_off) == 80, "line masks at 80");

/* Zones (zones.c): the pool is cut into 64 KiB zones from offset 0; the
 * table holds a counter, then each zone's stamp: the counter's value
 * taken by the last transaction that wrote into it.  64 KiB: the paper's size
 * and the default allocation chunk (extents start on zone boundaries),
 * transfers large enough to run at the disk's sequential rate, a table of
 * 1/8192 of the pool. */
#define STG_ZONE_SHIFT 16u
#define STG_ZONE_SIZE  (1ull << STG_ZONE_SHIFT)

/* Line masks (zones.c): per zone, the 64-byte lines changed since
 * `since` (1024 bits), valid while the zone's stamp equals `last` (the
 * stamp of the last transaction that marked it; a writer that stamps
 * without marking lines, an older build, leaves them unequal).  64
 * bytes: one cache line, and a change every 800 bytes (every 100th row
 * of an 8-byte column) sets one line in 12.5.  28 records per 4 KiB
 * page (none crosses a page: a mark dirties one page in msync mode);
 * `last` with STG_LM_BUSY set: being restarted (a writer that died
 * there left it invalid).  The reset point that restarts masks is not
 * in the pool (zones.c, lock.c).  No format version: a build without masks
 * stamps zones without marking them (their masks invalid: copied whole)
 * and refuses a copy with deltas (STG_SB_MAGIC_DELTA). */
#define STG_LINE_SHIFT	6u
#define STG_LINE_SIZE	(1ull << STG_LINE_SHIFT)
#define STG_ZONE_LINES	(STG_ZONE_SIZE >> STG_LINE_SHIFT)
#define STG_LM_WORDS	(STG_ZONE_LINES / 64)
#define STG_LM_PER_PAGE 28u
#define STG_LM_BUSY	(1ull << 63)
typedef struct {
	uint64_t since; /* the mask holds every change of stamp >= since */
	uint64_t last;	/* stamp of the last transaction that marked it */
	uint64_t mask[STG_LM_WORDS];
} stg_lm_zone;
_Static_assert(sizeof(stg_lm_zone) == 144, "line mask record");
_Static_assert(STG_LM_PER_PAGE * sizeof(stg_lm_zone) <= 4096, "per page");

/* A delta (delta.c): a 4 KiB page holding this header, then `len`
 * bytes of entries (stg_delta_ent, then the bytes of the lines its
 * mask sets, in order), padded with zeros to 4 KiB. */
#define STG_DELTA_MAGIC 0x31544c4442444d47ull /* "GMDBDLT1" */
typedef struct {
	uint64_t magic;
	uint64_t from_gen;   /* the counter of the copy it was written on */
	uint64_t to_gen;     /* the counter it brings the copy to */
	uint64_t len;	     /* bytes of entries after the header page */
	uint64_t entries;    /* zones */
	uint64_t image_size; /* the image's bytes (the pool's size) */
	uint32_t crc;	     /* zlib crc32 of the entries' len bytes */
	uint32_t hcrc;	     /* crc32 of this header with hcrc 0 */
	uint64_t pad;
} stg_delta_hdr;
typedef struct {
	uint64_t zone;
	uint64_t mask[STG_LM_WORDS];
} stg_delta_ent;
_Static_assert(sizeof(stg_delta_hdr) == 64, "delta header");
_Static_assert(sizeof(stg_delta_ent) == 136, "delta entry");
_Static_assert(offsetof(stg_root, next_table_id) == 40, "root fields");

/* ---- Metadata log ------------------------------------------------------ */

#define STG_LOG_MAGIC	 0x31474f4c42444d47ull /* "GMDBLOG1" */
#define STG_LOG_HDR_SIZE 64u

typedef struct {
	uint64_t magic;
	uint64_t gen; /* entries of other generations are dead */
	uint8_t pad[STG_LOG_HDR_SIZE - 16];
} stg_log_hdr;

enum {
	STG_LOG_UNDO = 1,      /* stg_log_undo + old bytes */
	STG_LOG_HCL_BATCH = 2, /* stg_log_hcl */
	STG_LOG_FREE = 3,      /* stg_log_extent: free at commit */
	STG_LOG_COMMIT = 4     /* no payload: the commit point */
};

/* Entry header; the payload follows, entries start 8-byte aligned.  An
 * entry belongs to the chain when gen matches the log header, prev_seq is
 * the seq of the entry before it (0 for the first) and the crc (of the
 * header with crc = 0, then the payload) matches.  seq never repeats
 * within a generation, so an entry left beyond a savepoint rollback can
 * never link onto the new chain. */
typedef struct {
	uint32_t type;
	uint32_t len; /* payload bytes */
	uint64_t gen;
	uint64_t seq;
	uint64_t prev_seq;
	uint32_t crc;
	uint32_t pad;
} stg_log_rec;

_Static_assert(sizeof(stg_log_rec) == 40, "log record header");

typedef struct {
	uint64_t off;
	uint64_t len;
} stg_log_undo;

typedef struct {
	uint64_t off;
	uint64_t len;
} stg_log_extent;

typedef struct {
	uint64_t seg_off;
	uint64_t seg_size;
	uint32_t table_id;
	uint32_t pad;
} stg_log_hcl;

/* ---- Catalog ------------------------------------------------------------ */

#define STG_CAT_MAGIC 0x45544143u /* "CATE" */
#define STG_CAT_NAME  128u

/* One object (table, view, index) in its own extent.  Entries form a
 * singly linked list in creation order (root.cat_head .. cat_tail).
 * Offsets named *_rel are from the entry's start. */
typedef struct {
	uint32_t magic;
	uint32_t kind; /* stg_objkind */
	uint64_t next;
	uint64_t extent_size;
	uint64_t obj_seq;
	uint32_t table_id; /* tables only */
	uint32_t ncols;
	uint64_t sql_rel;
	uint64_t sql_len;
	uint64_t row_count;	/* committed rows (tables) */
	uint64_t deleted_count; /* rows marked deleted */
	uint64_t tdir;		/* tablet directory extent, 0 = none */
	char name[STG_CAT_NAME];
	char tbl_name[STG_CAT_NAME];
	uint8_t pad[48];
} stg_cat_entry;

_Static_assert(sizeof(stg_cat_entry) == 384, "catalog entry header");
_Static_assert(offsetof(stg_cat_entry, row_count) == 56, "row count");
_Static_assert(offsetof(stg_cat_entry, name) == 80, "name");

typedef struct {
	char name[STG_CAT_NAME];
	char decl_type[64];
	uint32_t type;
	uint32_t flags;
	uint32_t length;
	uint8_t precision;
	uint8_t scale;
	uint8_t pad0[2];
	uint64_t default_rel; /* 0 = no default */
	uint64_t default_len;
} stg_cat_column;

_Static_assert(sizeof(stg_cat_column) == 224, "catalog column");

/* Tablet directory: the offsets of a table's tablets, in order. */
#define STG_TDIR_MAGIC 0x52494454u /* "TDIR" */

typedef struct {
	uint32_t magic;
	uint32_t table_id;
	uint64_t extent_size;
	uint64_t capacity; /* slots */
	uint64_t count;	   /* tablets allocated (some may be empty) */
			   /* uint64_t tablets[capacity] follows */
} stg_tdir;

_Static_assert(sizeof(stg_tdir) == 32, "tablet directory header");

/* ---- Tablets ------------------------------------------------------------ */

#define STG_TABLET_MAGIC    0x544c4254u /* "TBLT" */
#define STG_TABLET_ALIGN    256u
#define STG_TABLET_MAX_ROWS (1u << 20)
#define STG_TABLET_MIN_ROWS 1024u

/* A tablet's extent: this header, then uint64_t colmap[2 * ncols] (data
 * offset and NULL-bitmap offset of each column, from the tablet's start),
 * then 256-aligned arrays.  Rows in use are not stored here: they follow
 * from the table's row count.  The string heap is a separate extent. */
typedef struct {
	uint32_t magic;
	uint32_t ncols;
	uint32_t table_id;
	uint32_t index;
	uint64_t extent_size;
	uint64_t first_row;
	uint64_t capacity;
	uint64_t heap_off;  /* heap extent, 0 = none yet */
	uint64_t heap_size; /* bytes in the heap extent */
	uint64_t heap_used; /* bytes handed out (undo-logged) */
	uint64_t deleted_rel;
	/* rows the arrays have room for (the layout's capacity), less than
	 * capacity in a tablet trimmed at commit (tablet.c); 0: capacity */
	uint64_t rows_alloc;
	/* version 4: the column encodings (stg_col_enc[ncols], from the
	 * tablet's start), 0: every column plain (encode.c) */
	uint64_t enc_rel;
	uint8_t pad[128 - 88];
} stg_tablet_hdr;

_Static_assert(sizeof(stg_tablet_hdr) == 128, "tablet header");
_Static_assert(offsetof(stg_tablet_hdr, heap_used) == 56, "heap_used");
_Static_assert(offsetof(stg_tablet_hdr, enc_rel) == 80, "enc_rel");

/* Encodings (storage/encode.c, docs/ARCHITECTURE.md "Encodings").  An
 * encoded tablet is written whole by VACUUM (or an auto_encode commit)
 * and never written in place again: its rows are sealed (rows_alloc =
 * the rows in use rounded up to 1024), and any write but DELETE's
 * deleted bits first widens it back to a plain tablet (a tablet move
 * under the log).  Its layout: header, colmap, stg_col_enc[ncols], then
 * 256-aligned: each column's data (colmap[2c]), one zero bitmap that
 * every column without NULLs shares (so it costs no bytes of its own),
 * the NULL bitmaps of columns with NULLs, the deleted bitmap, then the
 * dictionaries (stg_strref[dict_n] each, strings in the tablet's heap,
 * which holds only the strings rows refer to).
 *   PLAIN: the array as in a plain tablet.
 *   FOR: value i is base + the bits-wide unsigned field at bit i * bits
 *        of little-endian uint64_t words (bits 0..64; 0: all equal), one
 *        spare word after the last so a field is read with two loads.
 *        Every row in use is encoded, NULL and deleted ones too, so the
 *        decoded array is the plain array byte for byte.
 *   DICT: TEXT; the field is a code into the dictionary (dict_n distinct
 *        strings, in first-seen order); NULL rows have code 0.
 *   ZTEXT (version 5): TEXT, the strings compressed in blocks (zstd
 *        frames with a content checksum and size).  The column's data
 *        (bytes in all) is: each row's length as FOR fields (base, bits;
 *        NULL rows have length 0, every row in use is stored, deleted
 *        ones too), then at dict_rel the block directory stg_zt_blk
 *        [dict_n + 1] (the last: off = z_bytes, row0 = the rows, raw 0),
 *        then at z_rel the frames, z_bytes in all.  A block holds the
 *        strings of rows [row0, next row0) back to back, raw bytes in
 *        all: at most STG_ZT_BLOCK unless one string is longer (it is
 *        then alone), and it never crosses a multiple of STG_ZT_GROUP
 *        rows, so a scan's vector of that many rows decompresses its own
 *        blocks only.  A row's string is at the sum of the lengths of
 *        the rows before it in its block: no per-row reference.
 *        Chosen where it is the smallest and its frames are at most
 *        7/8 of the strings (incompressible text stays plain). */
enum {
	STG_ENC_PLAIN = 0,
	STG_ENC_FOR = 1,
	STG_ENC_DICT = 2,
	STG_ENC_ZTEXT = 3
};

#define STG_ZT_BLOCK 65536u /* uncompressed bytes of a block, at most */
#define STG_ZT_GROUP 2048u  /* rows: a block never crosses a multiple */

typedef struct {
	uint64_t off;  /* its frame, from z_rel */
	uint32_t row0; /* its first row, in the tablet */
	uint32_t raw;  /* its uncompressed bytes */
} stg_zt_blk;

_Static_assert(sizeof(stg_zt_blk) == 16, "compressed text block");

typedef struct {
	uint8_t kind;	   /* STG_ENC_* */
	uint8_t bits;	   /* FOR/DICT/ZTEXT field width, 0..64 */
	uint8_t has_nulls; /* 0: the NULL bitmap is the shared zero one */
	uint8_t pad[5];
	uint64_t base;	   /* FOR: the frame (the minimum, as uint64);
			    * ZTEXT: the lengths' */
	uint64_t dict_n;   /* DICT: entries; ZTEXT: blocks */
	uint64_t dict_rel; /* DICT: stg_strref[dict_n], from tablet start;
			    * ZTEXT: stg_zt_blk[dict_n + 1] */
	uint64_t bytes;	   /* bytes of the column's data at colmap[2c] */
	uint64_t z_rel;	   /* ZTEXT: the frames, from tablet start */
	uint64_t z_bytes;  /* ZTEXT: their bytes */
	uint64_t pad1[1];
} stg_col_enc;

_Static_assert(sizeof(stg_col_enc) == 64, "column encoding");

/* ---- Indexes (btree.c, index.c) ---------------------------------------- */

/* An index's catalog entry (kind STG_OBJ_INDEX) has table_id set to its
 * table's id and tdir set to its header extent (stg_ix_hdr).  An entry
 * with tdir 0 comes from an older format and has no tree. */
#define STG_IX_MAGIC	   0x44485849u /* "IXHD" */
#define STG_IXN_MAGIC	   0x444e5849u /* "IXND" */
#define STG_IX_NODE	   4096u
#define STG_IX_NODE_HDR	   64u
#define STG_IX_MAX_ARENAS  224u
#define STG_IX_TEXT_PREFIX 30u	/* TEXT bytes kept in a key segment */
#define STG_IX_MAX_KEY	   400u /* bytes of an encoded key */

typedef struct {
	uint32_t magic;
	uint32_t version; /* 1 */
	uint32_t table_id;
	uint32_t ncols;
	uint32_t flags; /* bit 0 unique; bits 8..15 stg_ix_origin */
	uint32_t kw;	/* encoded key bytes */
	uint32_t ew;	/* entry bytes: kw + 8 (row id) */
	uint32_t node_size;
	uint64_t extent_size;
	uint8_t pad0[24];
	/* [64, 128): the tree's state, undo-logged as one target */
	uint64_t root;	     /* root node, 0 = none */
	uint64_t height;     /* levels; 1 = the root is a leaf */
	uint64_t entries;    /* live entries */
	uint64_t free_head;  /* freed nodes, linked by free_next */
	uint64_t arena_off;  /* the arena nodes are cut from */
	uint64_t arena_used; /* bytes of it handed out */
	uint64_t arena_size;
	uint64_t narenas;  /* arenas[0..narenas) are the index's extents */
	uint32_t cols[32]; /* table column numbers */
	uint8_t types[32]; /* their stg_type */
	uint8_t segw[32];  /* bytes of each column's key segment */
	uint8_t pad1[512 - 320];
	uint64_t arenas[STG_IX_MAX_ARENAS][2]; /* offset, bytes */
} stg_ix_hdr;

_Static_assert(sizeof(stg_ix_hdr) == 4096, "index header");
_Static_assert(offsetof(stg_ix_hdr, root) == 64, "index state at 64");
_Static_assert(offsetof(stg_ix_hdr, arenas) == 512, "arenas at 512");

/* A node: this header, then n entries (leaf: ew bytes each; inner: a
 * child offset then the separator, the child's first entry, ew + 8
 * bytes each; separator 0 stands for minus infinity). */
typedef struct {
	uint32_t magic;
	uint16_t level; /* 0 = leaf */
	uint16_t pad;
	uint32_t n;
	uint32_t pad1;
	uint64_t prev, next; /* leaves: neighbours in key order, 0 = none */
	uint64_t free_gen;   /* on the free list: the log generation */
	uint64_t free_next;
	uint8_t pad2[16];
} stg_ix_node;

_Static_assert(sizeof(stg_ix_node) == STG_IX_NODE_HDR, "index node header");

#endif /* GPMDB_LAYOUT_H */
