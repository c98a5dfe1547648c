/*
 * exec_hash.c - the hash of key values shared by every hash table of the
 * executor (joins, GROUP BY, DISTINCT, set operations, the pipelines'
 * tables): a value's hash (NULLs one value), combined over the columns
 * of a row, one row at a time or a batch a column at a time.
 */
#include "../engine.h"
#include "exec_int.h"

#include <string.h>

static inline uint64_t hash_mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
	return h * 0xff51afd7ed558ccdull;
}

uint64_t exec_hash_mix(uint64_t h, uint64_t v)
{
	return hash_mix(h, v);
}

/* The end of murmur3's finaliser (its first step the caller's own
 * multiply), so that every bit of the result depends on every bit of h. */
static inline uint64_t fmix_tail(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ull;
	return h ^ h >> 33;
}

/* Text: 8 bytes a step (the last step the bytes left), each step a
 * bijection of the state, then murmur3's finaliser, so that every bit of
 * the hash depends on every byte (FNV-1a, a multiply per byte, took a
 * tenth of a GROUP BY of short names). */
static inline uint64_t hash_text(vec_str s)
{
	uint64_t h = 0x9e3779b97f4a7c15ull ^ s.len, w;
	uint32_t k = 0;

	for (; k + 8 <= s.len; k += 8) {
		memcpy(&w, s.ptr + k, 8);
		h = (h ^ w) * 0xff51afd7ed558ccdull;
		h ^= h >> 32;
	}
	if (k < s.len) {
		w = 0;
		for (uint32_t j = 0; k + j < s.len; j++)
			w |= (uint64_t)(uint8_t)s.ptr[k + j] << (8 * j);
		h = (h ^ w) * 0xff51afd7ed558ccdull;
	}
	return fmix_tail(h);
}

/* An integer key (INT, DECIMAL) before hash_mix: murmur3's finaliser,
 * a bijection (a single key's hash stays one-to-one: pipe_int.h hexact)
 * in which every bit depends on every bit of v.  hash_mix's multiply
 * carries bits only upwards, so keys ending in zero bits (multiples of
 * 1024, of 65536) shared the low bits the tables index by: SELECT
 * DISTINCT i * 65536 over 655k rows took more than a minute. */
static inline uint64_t key_mix(uint64_t v)
{
	return fmix_tail((v ^ (v >> 33)) * 0xff51afd7ed558ccdull);
}

uint64_t exec_hash_val(const rcol *c, uint64_t i)
{
	if (c->nulls[i] || c->ty.t == BC_T_NULL)
		return 0x12345;
	switch (c->ty.t) {
	case BC_T_BOOL:
		return ((uint8_t *)c->data)[i] + 1;
	case BC_T_DATE:
		return (uint64_t)((int32_t *)c->data)[i] * 31 + 7;
	case BC_T_REAL: {
		double d = ((double *)c->data)[i];
		uint64_t u;
		if (d == 0)
			d = 0; /* -0.0 */
		memcpy(&u, &d, 8);
		/* murmur3's finaliser: values such as 0.5 or 1e10 end in
		 * zero mantissa bits, and hash_mix's multiply carries bits
		 * only upwards, so the low bits the tables index by were
		 * equal for them (count(DISTINCT d), count(d) and SELECT
		 * DISTINCT d over 650k REALs took minutes) */
		return key_mix(u);
	}
	case BC_T_TEXT:
		return hash_text(((vec_str *)c->data)[i]);
	default:
		return key_mix((uint64_t)((int64_t *)c->data)[i]);
	}
}

/* exec_hash_row of rows 0..m of r into out, a column at a time (the type
 * switch once per column); with nulls0, a row with a NULL key hashes to 0
 * (joins: such a row meets nothing). */
void exec_hash_batch(const rel *r, int ncols, uint32_t m, uint64_t *out,
		     bool nulls0)
{
	memset(out, 0, m * sizeof(*out));
	for (int c = 0; c < ncols; c++) {
		const rcol *col = &r->cols[c];
		const uint8_t *nl = col->nulls;
#define HB_LOOP(EXPR)                                                          \
	for (uint32_t i = 0; i < m; i++)                                       \
	out[i] = hash_mix(out[i], nl[i] ? 0x12345 : (EXPR))
		switch (col->ty.t) {
		case BC_T_NULL:
			for (uint32_t i = 0; i < m; i++)
				out[i] = exec_hash_mix(out[i], 0x12345);
			break;
		case BC_T_BOOL:
			HB_LOOP(((const uint8_t *)col->data)[i] + 1u);
			break;
		case BC_T_DATE:
			HB_LOOP((uint64_t)((const int32_t *)col->data)[i] * 31 +
				7);
			break;
		case BC_T_INT:
		case BC_T_DEC:
			HB_LOOP(
			    key_mix((uint64_t)((const int64_t *)col->data)[i]));
			break;
		case BC_T_TEXT:
			HB_LOOP(hash_text(((const vec_str *)col->data)[i]));
			break;
		default:
			for (uint32_t i = 0; i < m; i++)
				out[i] = exec_hash_mix(out[i],
						       exec_hash_val(col, i));
		}
#undef HB_LOOP
	}
	if (!nulls0)
		return;
	for (int c = 0; c < ncols; c++) {
		const uint8_t *nl = r->cols[c].nulls;
		if (r->cols[c].ty.t == BC_T_NULL) {
			memset(out, 0, m * sizeof(*out));
			return;
		}
		for (uint32_t i = 0; i < m; i++)
			if (nl[i])
				out[i] = 0;
	}
}

uint64_t exec_hash_row(const rel *r, int ncols, uint64_t i)
{
	uint64_t h = 0;

	for (int c = 0; c < ncols; c++)
		h = exec_hash_mix(h, exec_hash_val(&r->cols[c], i));
	return h;
}
