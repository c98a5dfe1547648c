/*
 * test_hcl.c - the HCL undo-log format: layout, sentinel, order, corrupt
 * segments, entry encoding, and recovery of a CPU-written log through the
 * storage API.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include "harness.h"

#include "../storage/hcl.h"
#include "../storage/storage.h"

static const hcl_geom test_geoms[] = {
    {1, 32, 1},	 {1, 32, 3},  {1, 256, 1}, {1, 256, 2},
    {1, 256, 3}, {1, 256, 4}, {3, 256, 1}, {3, 256, 2},
    {3, 256, 3}, {3, 256, 4}, {2, 64, 2},  {5, 96, 3},
};
#define NGEOMS (sizeof(test_geoms) / sizeof(test_geoms[0]))

/* Entries tag themselves with their (thread, entry) in the row id. */
static uint64_t tag_row(uint64_t t, uint32_t e)
{
	return (t << 8) | e | 0xabc0000000000000ull;
}

/* A zeroed, 256-aligned segment (pool segments are at least that aligned). */
static void *seg_alloc(const hcl_geom *g, uint64_t *bytes)
{
	uint64_t n = hcl_segment_bytes(g);
	uint64_t rounded = (n + 255) & ~(uint64_t)255;
	void *p = aligned_alloc(256, rounded);

	if (p)
		memset(p, 0, rounded);
	*bytes = n;
	return p;
}

static uint64_t off_of(const void *seg, const void *p)
{
	return (uint64_t)((const char *)p - (const char *)seg);
}

static void test_geom_for(void)
{
	static const struct {
		uint64_t n;
		uint32_t nblocks;
	} cases[] = {{0, 1},   {1, 1},	 {255, 1}, {256, 1},
		     {257, 2}, {512, 2}, {513, 3}, {1000000, 3907}};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		hcl_geom g = hcl_geom_for(cases[i].n, 3);

		CHECKF(g.nblocks == cases[i].nblocks,
		       "n=%llu: nblocks %u, want %u",
		       (unsigned long long)cases[i].n, g.nblocks,
		       cases[i].nblocks);
		CHECK(g.threads_per_block == 256);
		CHECK(g.entries_per_thread == 3);
		CHECK(hcl_threads(&g) >= cases[i].n);
	}
}

/* No two (thread, entry, word) triples and no two tails share a word; all
 * lie inside the segment, tails before the entries, entries after. */
static void test_layout_unique(void)
{
	size_t gi;

	for (gi = 0; gi < NGEOMS; gi++) {
		const hcl_geom *g = &test_geoms[gi];
		uint64_t bytes, nwords, t, nt = hcl_threads(g), marked = 0;
		uint64_t eoff = hcl_entries_offset(g);
		void *seg = seg_alloc(g, &bytes);
		uint8_t *owner;
		bool ok = true;

		CHECK(seg != NULL);
		if (!seg)
			continue;
		nwords = bytes / 4;
		owner = calloc(nwords, 1);
		CHECK(owner != NULL);
		CHECK(eoff >= hcl_tails_offset() + 4 * nt);
		CHECK(bytes == eoff + 4ull * HCL_ENTRY_WORDS *
					  g->entries_per_thread * nt);
		for (t = 0; t < nt && ok; t++) {
			uint32_t tid = (uint32_t)(t % g->threads_per_block);
			uint64_t ti = hcl_tail_index(
			    g, (uint32_t)(t / g->threads_per_block), tid / 32,
			    tid % 32);
			uint64_t toff = hcl_tails_offset() + 4 * ti;
			uint32_t e, k;

			CHECKF(toff >= 128 && toff + 4 <= eoff,
			       "geom %zu: tail of thread %llu at %llu", gi,
			       (unsigned long long)t, (unsigned long long)toff);
			if (toff + 4 > bytes) {
				ok = false;
				break;
			}
			if (owner[toff / 4]) {
				CHECKF(0,
				       "geom %zu: tail of thread %llu shared",
				       gi, (unsigned long long)t);
				ok = false;
			}
			owner[toff / 4] = 1;
			for (e = 0; e < g->entries_per_thread && ok; e++) {
				for (k = 0; k < HCL_ENTRY_WORDS; k++) {
					uint64_t o = off_of(
					    seg, hcl_word_ptr(seg, g, t, e, k));

					if (o < eoff || o + 4 > bytes ||
					    o % 4 != 0) {
						CHECKF(
						    0,
						    "geom %zu: t%llu e%u k%u "
						    "at %llu outside "
						    "[%llu,%llu)",
						    gi, (unsigned long long)t,
						    e, k, (unsigned long long)o,
						    (unsigned long long)eoff,
						    (unsigned long long)bytes);
						ok = false;
						break;
					}
					if (owner[o / 4]) {
						CHECKF(
						    0,
						    "geom %zu: t%llu e%u k%u "
						    "shares word %llu",
						    gi, (unsigned long long)t,
						    e, k,
						    (unsigned long long)o);
						ok = false;
						break;
					}
					owner[o / 4] = 2;
					marked++;
				}
			}
		}
		/* Every entry word is owned: the layout has no holes, so the
		 * size formula and the index formula agree. */
		CHECKF(!ok || marked == (bytes - eoff) / 4,
		       "geom %zu: %llu entry words owned of %llu", gi,
		       (unsigned long long)marked,
		       (unsigned long long)((bytes - eoff) / 4));
		free(owner);
		free(seg);
	}
}

/* Word k of entry e of a warp's 32 lanes: exactly one aligned 128-byte
 * line, lane l at byte 4*l of it.  A warp's 32 tails: one line too. */
static void test_layout_coalesced(void)
{
	size_t gi;

	for (gi = 0; gi < NGEOMS; gi++) {
		const hcl_geom *g = &test_geoms[gi];
		uint64_t bytes, nt = hcl_threads(g), w0;
		void *seg = seg_alloc(g, &bytes);

		CHECK(seg != NULL);
		if (!seg)
			continue;
		CHECK(hcl_entries_offset(g) % 256 == 0);
		CHECK(off_of(seg, hcl_word_ptr(seg, g, 0, 0, 0)) ==
		      hcl_entries_offset(g));
		for (w0 = 0; w0 < nt; w0 += 32) {
			uint64_t line = off_of(
			    seg, (char *)seg + hcl_tails_offset() + 4 * w0);
			uint32_t e, k, l;

			for (l = 0; l < 32; l++) {
				uint32_t tid =
				    (uint32_t)((w0 + l) % g->threads_per_block);
				uint64_t ti = hcl_tail_index(
				    g,
				    (uint32_t)((w0 + l) / g->threads_per_block),
				    tid / 32, tid % 32);

				CHECKF(hcl_tails_offset() + 4 * ti ==
					   line + 4 * l,
				       "geom %zu: tail of thread %llu not in "
				       "its warp's line",
				       gi, (unsigned long long)(w0 + l));
			}
			CHECK(line % 128 == 0);
			for (e = 0; e < g->entries_per_thread; e++) {
				for (k = 0; k < HCL_ENTRY_WORDS; k++) {
					uint64_t base =
					    off_of(seg, hcl_word_ptr(seg, g, w0,
								     e, k));

					CHECKF(
					    base % 128 == 0,
					    "geom %zu: warp %llu e%u k%u line "
					    "at %llu",
					    gi, (unsigned long long)(w0 / 32),
					    e, k, (unsigned long long)base);
					for (l = 0; l < 32; l++) {
						uint64_t o = off_of(
						    seg,
						    hcl_word_ptr(seg, g, w0 + l,
								 e, k));

						CHECKF(
						    o == base + 4 * l,
						    "geom %zu: lane %u of "
						    "warp %llu e%u k%u at "
						    "%llu, line %llu",
						    gi, l,
						    (unsigned long long)(w0 /
									 32),
						    e, k, (unsigned long long)o,
						    (unsigned long long)base);
					}
				}
			}
		}
		free(seg);
	}
}

/* The CPU writer stores exactly where the inline layout (which the GPU
 * writer uses) says: tails at tails_offset + 4 * tail_index, entry words
 * at entries_offset + 4 * word_index. */
static void test_cpu_writer_matches_layout(void)
{
	size_t gi;

	for (gi = 0; gi < NGEOMS; gi++) {
		const hcl_geom *g = &test_geoms[gi];
		uint64_t bytes, t, nt = hcl_threads(g);
		uint8_t *seg = seg_alloc(g, &bytes);
		uint64_t bad = 0;

		CHECK(seg != NULL);
		if (!seg)
			continue;
		for (t = 0; t < nt; t++) {
			uint32_t tid = (uint32_t)(t % g->threads_per_block);
			uint32_t b = (uint32_t)(t / g->threads_per_block);
			uint32_t w = tid / 32, l = tid % 32, e, k, v;
			uint64_t ti = hcl_tail_index(g, b, w, l);

			hcl_cpu_set_tail(seg, g, t, (uint32_t)(t + 1));
			memcpy(&v, seg + hcl_tails_offset() + 4 * ti, 4);
			bad += v != (uint32_t)(t + 1);
			bad += hcl_get_tail(seg, g, t) != (uint32_t)(t + 1);
			for (e = 0; e < g->entries_per_thread; e++) {
				hcl_entry en = {HCL_K_VALUE, e, tag_row(t, e),
						~tag_row(t, e), 1};
				uint32_t words[HCL_ENTRY_WORDS];

				hcl_encode(&en, words);
				hcl_cpu_put(seg, g, t, e, &en);
				for (k = 0; k < HCL_ENTRY_WORDS; k++) {
					uint64_t o = hcl_entries_offset(g) +
						     4 * hcl_word_index(
							     g, b, w, l, e, k);

					bad += off_of(seg,
						      hcl_word_ptr(seg, g, t, e,
								   k)) != o;
					memcpy(&v, seg + o, 4);
					bad += v != words[k];
				}
			}
		}
		CHECKF(bad == 0, "geom %zu: %llu words misplaced", gi,
		       (unsigned long long)bad);
		free(seg);
	}
}

static void test_header(void)
{
	hcl_geom g = {3, 256, 2};
	uint64_t bytes;
	uint8_t *seg = seg_alloc(&g, &bytes);
	hcl_header h;

	CHECK(seg != NULL);
	if (!seg)
		return;
	hcl_header_init(seg, &g, 42, 0x1122334455667788ull);
	memcpy(&h, seg, sizeof(h));
	CHECK(h.magic == HCL_MAGIC);
	CHECK(h.entry_words == HCL_ENTRY_WORDS);
	CHECK(h.geom.nblocks == 3 && h.geom.threads_per_block == 256 &&
	      h.geom.entries_per_thread == 2);
	CHECK(h.table_id == 42);
	CHECK(h.batch_seq == 0x1122334455667788ull);
	CHECK(h.crc == (uint32_t)crc32(0L, seg, offsetof(hcl_header, crc)));
	CHECK_RC(hcl_header_check(seg, bytes), GPMDB_OK);
	CHECK_RC(hcl_header_check(seg, bytes + 4096), GPMDB_OK);
	free(seg);
}

/* Rewrites the header's crc after a deliberate field change, so that the
 * check must catch the field itself and not just the checksum. */
static void refresh_crc(uint8_t *seg)
{
	hcl_header h;

	memcpy(&h, seg, sizeof(h));
	h.crc = (uint32_t)crc32(0L, seg, offsetof(hcl_header, crc));
	memcpy(seg, &h, sizeof(h));
}

static int count_visit(void *ctx, const hcl_entry *en)
{
	(void)en;
	(*(int *)ctx)++;
	return 0;
}

static void test_corrupt_header(void)
{
	hcl_geom g = {3, 256, 2};
	uint64_t bytes;
	uint8_t *seg = seg_alloc(&g, &bytes);
	uint8_t *good;
	hcl_header h;
	int visits = 0;

	CHECK(seg != NULL);
	if (!seg)
		return;
	hcl_header_init(seg, &g, 7, 9);
	good = malloc(bytes);
	memcpy(good, seg, bytes);

	/* Bad magic, crc left stale and crc refreshed. */
	seg[0] ^= 0x01;
	CHECK_RC(hcl_header_check(seg, bytes), GPMDB_CORRUPT);
	refresh_crc(seg);
	CHECK_RC(hcl_header_check(seg, bytes), GPMDB_CORRUPT);
	CHECK_RC(hcl_foreach(seg, bytes, count_visit, &visits), GPMDB_CORRUPT);
	memcpy(seg, good, bytes);

	/* Bad crc: one flipped bit in a covered field, and in the crc. */
	seg[offsetof(hcl_header, table_id)] ^= 0x80;
	CHECK_RC(hcl_header_check(seg, bytes), GPMDB_CORRUPT);
	CHECK_RC(hcl_foreach(seg, bytes, count_visit, &visits), GPMDB_CORRUPT);
	memcpy(seg, good, bytes);
	seg[offsetof(hcl_header, crc) + 3] ^= 0x10;
	CHECK_RC(hcl_header_check(seg, bytes), GPMDB_CORRUPT);
	memcpy(seg, good, bytes);

	/* Segment smaller than the geometry says, and than a header. */
	CHECK_RC(hcl_header_check(seg, bytes - 1), GPMDB_CORRUPT);
	CHECK_RC(hcl_foreach(seg, bytes - 1, count_visit, &visits),
		 GPMDB_CORRUPT);
	CHECK_RC(hcl_header_check(seg, 100), GPMDB_CORRUPT);
	CHECK_RC(hcl_header_check(seg, 0), GPMDB_CORRUPT);

	/* Insane geometries and entry size behind a valid crc. */
	memcpy(&h, good, sizeof(h));
	h.entry_words = 5;
	memcpy(seg, &h, sizeof(h));
	refresh_crc(seg);
	CHECK_RC(hcl_header_check(seg, bytes), GPMDB_CORRUPT);
	memcpy(&h, good, sizeof(h));
	h.geom.threads_per_block = 0;
	memcpy(seg, &h, sizeof(h));
	refresh_crc(seg);
	CHECK_RC(hcl_header_check(seg, bytes), GPMDB_CORRUPT);
	memcpy(&h, good, sizeof(h));
	h.geom.threads_per_block = 100; /* not a whole number of warps */
	memcpy(seg, &h, sizeof(h));
	refresh_crc(seg);
	CHECK_RC(hcl_header_check(seg, bytes), GPMDB_CORRUPT);
	memcpy(&h, good, sizeof(h));
	h.geom.nblocks = 0;
	memcpy(seg, &h, sizeof(h));
	refresh_crc(seg);
	CHECK_RC(hcl_header_check(seg, bytes), GPMDB_CORRUPT);
	memcpy(&h, good, sizeof(h));
	h.geom.nblocks = 0xffffffffu; /* size would not fit (or overflow) */
	h.geom.entries_per_thread = 0xffffffffu;
	memcpy(seg, &h, sizeof(h));
	refresh_crc(seg);
	CHECK_RC(hcl_header_check(seg, UINT64_MAX), GPMDB_CORRUPT);
	CHECK_RC(hcl_header_check(seg, bytes), GPMDB_CORRUPT);
	CHECK(visits == 0);

	/* An all-zero segment (never initialised) is not a log. */
	memset(seg, 0, bytes);
	CHECK_RC(hcl_header_check(seg, bytes), GPMDB_CORRUPT);
	free(good);
	free(seg);
}

typedef struct {
	uint64_t n, cap;
	uint64_t *rows;
	int stop_after; /* return 77 on this visit (1-based), 0 = never */
} visit_log;

static int log_visit(void *ctx, const hcl_entry *en)
{
	visit_log *v = ctx;

	if (v->n < v->cap)
		v->rows[v->n] = en->row;
	v->n++;
	if (v->stop_after && (int)v->n == v->stop_after)
		return 77;
	return 0;
}

static uint64_t xs_state = 0x9e3779b97f4a7c15ull;
static uint64_t xs(void)
{
	xs_state ^= xs_state << 13;
	xs_state ^= xs_state >> 7;
	xs_state ^= xs_state << 17;
	return xs_state;
}

/*
 * Sentinel and order: entries at index >= tail hold garbage and must never
 * be visited; tail 0 visits nothing; the visit order is threads descending,
 * each thread's entries newest first.
 */
static void test_sentinel_and_order(void)
{
	size_t gi;

	for (gi = 0; gi < NGEOMS; gi++) {
		const hcl_geom *g = &test_geoms[gi];
		uint64_t bytes, t, nt = hcl_threads(g), i, expect = 0;
		uint8_t *seg = seg_alloc(g, &bytes);
		uint32_t *tails;
		visit_log v = {0};
		int rc;

		CHECK(seg != NULL);
		if (!seg)
			continue;
		/* Garbage everywhere first: the reader may rely only on the
		 * header and the tails. */
		for (i = 0; i < bytes; i++)
			seg[i] = (uint8_t)xs();
		hcl_header_init(seg, g, 1, 2);
		tails = malloc(nt * sizeof(*tails));
		for (t = 0; t < nt; t++) {
			uint32_t e, tail;

			tail = (uint32_t)(xs() % (g->entries_per_thread + 1));
			if (t % 7 == 3)
				tail = 0;
			tails[t] = tail;
			expect += tail;
			for (e = 0; e < tail; e++) {
				hcl_entry en = {HCL_K_VALUE, (uint32_t)(t % 5),
						tag_row(t, e), xs(), 0};

				hcl_cpu_put(seg, g, t, e, &en);
			}
			hcl_cpu_set_tail(seg, g, t, tail);
			CHECK(hcl_get_tail(seg, g, t) == tail);
		}
		v.cap = expect + 16;
		v.rows = malloc(v.cap * sizeof(*v.rows));
		rc = hcl_foreach(seg, bytes, log_visit, &v);
		CHECK_RC(rc, GPMDB_OK);
		CHECKF(v.n == expect, "geom %zu: %llu visits, want %llu", gi,
		       (unsigned long long)v.n, (unsigned long long)expect);
		if (v.n == expect) {
			uint64_t k = 0;

			for (t = nt; t-- > 0;) {
				uint32_t e;

				for (e = tails[t]; e-- > 0; k++)
					if (v.rows[k] != tag_row(t, e)) {
						CHECKF(
						    0,
						    "geom %zu: visit %llu is "
						    "row %llx, want t%llu e%u",
						    gi, (unsigned long long)k,
						    (unsigned long long)
							v.rows[k],
						    (unsigned long long)t, e);
						t = 0;
						break;
					}
			}
		}

		/* Stopping early: fn's return value comes back unchanged. */
		if (expect >= 3) {
			v.n = 0;
			v.stop_after = 3;
			CHECK_RC(hcl_foreach(seg, bytes, log_visit, &v), 77);
			CHECK(v.n == 3);
		}

		/* Every tail zero: nothing, whatever the entries hold. */
		for (t = 0; t < nt; t++)
			hcl_cpu_set_tail(seg, g, t, 0);
		v.n = 0;
		v.stop_after = 0;
		CHECK_RC(hcl_foreach(seg, bytes, log_visit, &v), GPMDB_OK);
		CHECK(v.n == 0);

		/* A tail beyond the slot is corruption, wherever it sits, and
		 * is found before anything is visited (recovery must not
		 * apply half a segment it then rejects). */
		hcl_cpu_set_tail(seg, g, 0, 1);
		hcl_cpu_set_tail(seg, g, nt / 2, g->entries_per_thread + 1);
		v.n = 0;
		CHECK_RC(hcl_foreach(seg, bytes, log_visit, &v), GPMDB_CORRUPT);
		CHECK(v.n == 0);
		hcl_cpu_set_tail(seg, g, nt / 2, 0);
		hcl_cpu_set_tail(seg, g, nt - 1, 0xffffffffu);
		CHECK_RC(hcl_foreach(seg, bytes, log_visit, &v), GPMDB_CORRUPT);
		CHECK(v.n == 0);
		hcl_cpu_set_tail(seg, g, nt - 1, g->entries_per_thread);
		v.n = 0;
		CHECK_RC(hcl_foreach(seg, bytes, log_visit, &v), GPMDB_OK);
		CHECK(v.n == 1ull + g->entries_per_thread);
		free(v.rows);
		free(tails);
		free(seg);
	}
}

typedef struct {
	hcl_entry want[8];
	int n, bad;
} rt_ctx;

static int rt_visit(void *ctx, const hcl_entry *en)
{
	rt_ctx *c = ctx;
	const hcl_entry *w = &c->want[c->n++];

	if (en->kind != w->kind || en->col != w->col || en->row != w->row ||
	    en->old_value != w->old_value || en->old_null != w->old_null)
		c->bad++;
	return 0;
}

static void test_encode_roundtrip(void)
{
	static const hcl_entry cases[] = {
	    {HCL_K_VALUE, 0, 0, 0, 0},
	    {HCL_K_VALUE, 1, 1, 1, 1},
	    {HCL_K_VALUE, 0xffffffu, 0xffffffffffffffffull,
	     0xffffffffffffffffull, 1},
	    {HCL_K_DELETE, 999, 0x0000000100000000ull, 0, 0},
	    {HCL_K_VALUE, 0x800001u, 0x123456789abcdef0ull,
	     0xfedcba9876543210ull, 0},
	    {HCL_K_VALUE, 77, 0x00000000ffffffffull, 0x8000000000000000ull, 1},
	};
	hcl_geom g = {1, 32, 8};
	uint64_t bytes;
	void *seg = seg_alloc(&g, &bytes);
	rt_ctx c = {{{0}}, 0, 0};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint32_t w[HCL_ENTRY_WORDS];
		hcl_entry d;

		hcl_encode(&cases[i], w);
		CHECK((w[0] & 0xffu) == cases[i].kind);
		CHECK(w[0] >> 8 == cases[i].col); /* column: high 24 bits */
		CHECK(w[1] == (uint32_t)cases[i].row);
		CHECK(w[2] == (uint32_t)(cases[i].row >> 32));
		CHECK(w[3] == (uint32_t)cases[i].old_value);
		CHECK(w[4] == (uint32_t)(cases[i].old_value >> 32));
		CHECK(w[5] == cases[i].old_null);
		hcl_decode(w, &d);
		CHECKF(d.kind == cases[i].kind && d.col == cases[i].col &&
			   d.row == cases[i].row &&
			   d.old_value == cases[i].old_value &&
			   d.old_null == cases[i].old_null,
		       "case %zu does not round-trip", i);
	}

	/* Through the segment: written by thread 17, read back by foreach
	 * newest first. */
	CHECK(seg != NULL);
	if (!seg)
		return;
	hcl_header_init(seg, &g, 3, 4);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		hcl_cpu_put(seg, &g, 17, (uint32_t)i, &cases[i]);
		c.want[sizeof(cases) / sizeof(cases[0]) - 1 - i] = cases[i];
	}
	hcl_cpu_set_tail(seg, &g, 17, (uint32_t)i);
	CHECK_RC(hcl_foreach(seg, bytes, rt_visit, &c), GPMDB_OK);
	CHECK(c.n == (int)i);
	CHECK(c.bad == 0);
	free(seg);
}

/* ---- Recovery of a CPU-written HCL log through the storage API -------- */

#define RC_ROWS 1000u
#define RC_UPD	600u /* > 256: the pretended grid has several blocks */

static char pool_path[256];
static char self_exe[4096];

static int64_t rc_big(uint64_t r)
{
	return (int64_t)(r * 0x9e3779b97f4a7c15ull);
}

static int32_t rc_int(uint64_t r)
{
	return (int32_t)(r * 7 + 1);
}

static int make_rc_pool(uint32_t *tid)
{
	stg_open_opts o = {0};
	stg_column_def cols[2] = {{0}};
	stg_col_batch b[2];
	int64_t *big = malloc(RC_ROWS * sizeof(int64_t));
	int32_t *in = malloc(RC_ROWS * sizeof(int32_t));
	uint32_t nulls[(RC_ROWS + 31) / 32] = {0};
	char err[256] = "";
	stg_pool *p = NULL;
	uint64_t r;
	int rc;

	for (r = 0; r < RC_ROWS; r++) {
		big[r] = rc_big(r);
		in[r] = rc_int(r);
		if (r % 10 == 0)
			nulls[r / 32] |= 1u << (r % 32);
	}
	cols[0].name = "b";
	cols[0].type = STG_T_BIGINT;
	cols[1].name = "i";
	cols[1].type = STG_T_INT;
	b[0].values = big;
	b[0].nulls = NULL;
	b[1].values = in;
	b[1].nulls = nulls;
	o.create = true;
	o.durability = STG_DUR_PMEM;
	unlink(pool_path);
	rc = stg_open(pool_path, &o, &p, err, sizeof(err));
	CHECKF(rc == GPMDB_OK, "stg_open: %s", err);
	if (rc == GPMDB_OK)
		rc = stg_begin(p);
	if (rc == GPMDB_OK)
		rc = stg_table_create(p, "t", cols, 2,
				      "CREATE TABLE t(b BIGINT, i INT)", tid);
	if (rc == GPMDB_OK)
		rc = stg_append(p, *tid, b, RC_ROWS);
	if (rc == GPMDB_OK)
		rc = stg_commit(p);
	CHECKF(rc == GPMDB_OK, "setup: rc %d: %s", rc, p ? stg_errmsg(p) : err);
	if (p)
		stg_close(p);
	free(big);
	free(in);
	return rc;
}

/* The child: update RC_UPD rows of both columns (odd rows become NULL in
 * column i), then delete some; a crash point kills it on the way. */
static int child_update(const char *path)
{
	stg_open_opts o = {0};
	char err[256];
	stg_pool *p;
	uint64_t *ids = malloc(RC_UPD * sizeof(uint64_t));
	int64_t *big = malloc(RC_UPD * sizeof(int64_t));
	int32_t *in = malloc(RC_UPD * sizeof(int32_t));
	uint32_t nulls[(RC_UPD + 31) / 32] = {0};
	uint32_t cols[2] = {0, 1};
	stg_col_batch v[2];
	uint32_t tid;
	uint64_t i;

	o.durability = STG_DUR_PMEM;
	if (stg_open(path, &o, &p, err, sizeof(err)) != GPMDB_OK)
		return 2;
	if (stg_table_find(p, "t", &tid) != GPMDB_OK)
		return 3;
	for (i = 0; i < RC_UPD; i++) {
		ids[i] = (i * 613) % RC_ROWS; /* 613 is prime to 1000 */
		big[i] = -(int64_t)i - 1;
		in[i] = (int32_t)(100000 + i);
		if (i % 2)
			nulls[i / 32] |= 1u << (i % 32);
	}
	v[0].values = big;
	v[0].nulls = NULL;
	v[1].values = in;
	v[1].nulls = nulls;
	if (stg_begin(p) != GPMDB_OK)
		return 4;
	if (stg_update(p, tid, 2, cols, ids, RC_UPD, v) != GPMDB_OK)
		return 5;
	if (stg_delete(p, tid, ids, 100) != GPMDB_OK)
		return 6;
	stg_crash_point("commit.begin");
	/* Not reached when a crash point fires; reaching here without one
	 * means the crash point was never hit. */
	return 9;
}

/* Runs the child with GPMDB_CRASH_AT=point; returns true when it died of
 * SIGKILL as it should. */
static bool run_crashing_child(const char *crash_at)
{
	pid_t pid = fork();
	int st;

	if (pid == 0) {
		setenv("GPMDB_CRASH_AT", crash_at, 1);
		execl(self_exe, self_exe, "--child-update", pool_path,
		      (char *)NULL);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return false;
	CHECKF(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL,
	       "child with GPMDB_CRASH_AT=%s: status %#x", crash_at, st);
	return WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL;
}

/* expect_recovery: 1 some entries must be undone, -1 none may be, 0 any. */
static void check_rc_pool_original(const char *what, int expect_recovery)
{
	stg_open_opts o = {0};
	char err[256] = "", *rep = NULL;
	stg_pool *p = NULL;
	stg_stats st;
	uint32_t tid, nulls[(RC_ROWS + 31) / 32];
	int64_t *big = malloc(RC_ROWS * sizeof(int64_t));
	int32_t *in = malloc(RC_ROWS * sizeof(int32_t));
	uint64_t r, bad = 0;
	int rc;

	o.durability = STG_DUR_PMEM;
	rc = stg_open(pool_path, &o, &p, err, sizeof(err));
	CHECKF(rc == GPMDB_OK, "%s: reopen: %s", what, err);
	if (rc != GPMDB_OK)
		goto out;
	CHECK_RC(stg_get_stats(p, &st), GPMDB_OK);
	if (expect_recovery > 0)
		CHECKF(st.recovered_entries > 0, "%s: recovered_entries %llu",
		       what, (unsigned long long)st.recovered_entries);
	if (expect_recovery < 0)
		CHECKF(st.recovered_entries == 0,
		       "%s: recovered_entries %llu on a clean pool", what,
		       (unsigned long long)st.recovered_entries);
	CHECK_RC(stg_table_find(p, "t", &tid), GPMDB_OK);
	CHECK(stg_row_count(p, tid) == RC_ROWS);
	CHECKF(stg_deleted_count(p, tid) == 0, "%s: %llu rows deleted", what,
	       (unsigned long long)stg_deleted_count(p, tid));
	CHECK_RC(stg_read(p, tid, 0, 0, RC_ROWS, big, NULL), GPMDB_OK);
	CHECK_RC(stg_read(p, tid, 1, 0, RC_ROWS, in, nulls), GPMDB_OK);
	for (r = 0; r < RC_ROWS; r++) {
		bool isnull = (nulls[r / 32] >> (r % 32)) & 1;

		if (big[r] != rc_big(r) || isnull != (r % 10 == 0) ||
		    (!isnull && in[r] != rc_int(r)))
			bad++;
	}
	CHECKF(bad == 0, "%s: %llu rows differ from the committed image", what,
	       (unsigned long long)bad);
	rc = stg_check(p, &rep);
	CHECKF(rc == GPMDB_OK, "%s: stg_check: %s", what, rep ? rep : "?");
	free(rep);
	stg_close(p);
out:
	free(big);
	free(in);
}

static void test_recovery_cpu_log(void)
{
	/* The update batch first, then the delete batch: tail:1 leaves an
	 * update logged but not applied, tail:2 an applied update and a
	 * logged delete. */
	static const char *points[] = {"hcl.entry:1",	"hcl.tail:1",
				       "update.data:1", "hcl.tail:2",
				       "delete.data:1", "commit.begin:1"};
	uint32_t tid;
	size_t i;

	for (i = 0; i < sizeof(points) / sizeof(points[0]); i++) {
		if (make_rc_pool(&tid) != GPMDB_OK)
			return;
		if (!run_crashing_child(points[i]))
			continue;
		/* Only past the first tail has anything been logged. */
		check_rc_pool_original(
		    points[i], strncmp(points[i], "hcl.entry", 9) ? 1 : 0);
		/* Recovery is idempotent: a second open finds nothing. */
		check_rc_pool_original(points[i], -1);
	}
	unlink(pool_path);
}

int main(int argc, char **argv)
{
	ssize_t n;

	if (argc == 3 && strcmp(argv[1], "--child-update") == 0)
		return child_update(argv[2]);
	n = readlink("/proc/self/exe", self_exe, sizeof(self_exe) - 1);
	if (n > 0)
		self_exe[n] = '\0';
	snprintf(pool_path, sizeof(pool_path),
		 "/dev/shm/gpmdb_test_hcl_%d.pool", (int)getpid());

	TEST_RUN(test_geom_for);
	TEST_RUN(test_layout_unique);
	TEST_RUN(test_layout_coalesced);
	TEST_RUN(test_cpu_writer_matches_layout);
	TEST_RUN(test_header);
	TEST_RUN(test_corrupt_header);
	TEST_RUN(test_sentinel_and_order);
	TEST_RUN(test_encode_roundtrip);
	TEST_RUN(test_recovery_cpu_log);
	TEST_MAIN_END();
}
