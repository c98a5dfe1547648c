/*
 * keymatch.h - bound keys matched against a table's cached key column in
 * one pass on the GPU (gpu/keymatch.cu; engine/write/batch_keys_gpu.c,
 * docs/gpu.md "Key batches").
 *
 * UPDATE/DELETE ... WHERE key = ? with arrays bound finds the rows of a
 * batch of keys.  On the GPU the persistent index's probe needs the
 * index's records copied to the device first (the first UPDATE b of
 * bench_batch: 190 ms of its 240), while the key column itself is what
 * the column cache holds, uploaded straight from the pool: the keys are
 * sorted on the device and every table row looks its value up among them
 * (a binary search; the sorted keys of a batch of millions fit the L2).
 *
 * In a build without CUDA gpu_key_match returns GPMDB_UNSUPPORTED with
 * gpu_host.c's message.  Not thread-safe, like the rest of gpu/.
 */
#ifndef GPMDB_GPU_KEYMATCH_H
#define GPMDB_GPU_KEYMATCH_H

#include <stddef.h>
#include <stdint.h>

#include "gpu.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gpu_keymatch_in {
	/* host: n keys of width bytes (4: int32, 8: int64, signed), the
	 * column's storage form; a key with its bit set in nulls, or skip[j]
	 * nonzero, matches nothing (either may be NULL) */
	const void *keys;
	const uint32_t *nulls;
	const uint8_t *skip;
	uint64_t n;
	uint32_t width;
	/* device: the table's key column as the column cache holds it (live
	 * rows; type BC_COL_INT32/DATE or INT64/DEC, NULL bytes or none),
	 * and each cached row's row id (NULL: the row's position) */
	gpu_col col;
	const int64_t *rowids;
	uint64_t nrows;
	/* 1: the matches stay on the device (out->drowid, out->dprow) */
	int keep;
} gpu_keymatch_in;

typedef struct gpu_keymatch_out {
	/* malloc'd: the matched table rows in row id order, and for each the
	 * last parameter row with its key; n of them */
	uint64_t *rowid;
	int64_t *prow;
	uint64_t n;
	/* parameter rows that matched a table row, once per such row (the
	 * statement's change count) */
	long long changes;
	/* in->keep: the same on the device (gpu_free them; NULL when there
	 * is no match), and rng: the least and greatest row id and 1 (they
	 * are strictly increasing), as gpu_rowid_range gives them */
	uint64_t *drowid;
	int64_t *dprow;
	uint64_t rng[3];
	double upload_ms, sort_ms, probe_ms, download_ms;
} gpu_keymatch_out;

/*
 * Matches in->keys against in->col: out filled (free out->rowid and
 * out->prow), used[j] (n bytes, may be NULL) set to 1 for each parameter
 * row whose key matched a table row and 0 otherwise.  GPMDB_OK, or an
 * error with err set (GPMDB_NOMEM when the device is short of memory,
 * GPMDB_TOOBIG past INT32_MAX keys or rows, GPMDB_UNSUPPORTED without
 * CUDA or for another width); out is then empty.
 */
int gpu_key_match(const gpu_keymatch_in *in, uint8_t *used,
		  gpu_keymatch_out *out, char *err, size_t errlen);

/*
 * The values of parameter rows dprow[0..m) (device, from gpu_key_match
 * with keep) gathered from host arrays of n rows, vals (width bytes a
 * value: 1, 2, 4 or 8) and the NULL bitmap nulls (may be NULL), into new
 * device arrays: *dv (m values) and *dnl (a bitmap of m bits; NULL when
 * no gathered value is NULL).  The caller gpu_frees them.
 */
int gpu_key_gather(const void *vals, const uint32_t *nulls, uint64_t n,
		   uint32_t width, const int64_t *dprow, uint64_t m, void **dv,
		   uint32_t **dnl, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif

#endif /* GPMDB_GPU_KEYMATCH_H */
