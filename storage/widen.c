/*
 * widen.c - an append's columns written into the pool as they come
 * (stg_append_from): a bound INT32 array goes into a BIGINT column
 * without a converted copy of the batch first (engine/write/batch.c made
 * one, 8 bytes a value of fresh memory, before stg_append copied it).
 */
#include <string.h>

#include "internal.h"

int stg_append(stg_pool *p, uint32_t table_id, const stg_col_batch *cols,
	       uint64_t nrows)
{
	return stg_append_from(p, table_id, cols, NULL, nrows);
}

int tab_batch_col_ok(stg_pool *p, const stg_cat_column *c,
		     const stg_col_batch *b, int from)
{
	if (b->values == NULL)
		return pool_err(p, GPMDB_MISUSE,
				"stg_append: column %s has no values", c->name);
	if (from != STG_FROM_SAME &&
	    (from != STG_FROM_I32 || c->type != STG_T_BIGINT))
		return pool_err(p, GPMDB_MISUSE,
				"stg_append: column %s: values of kind %d "
				"cannot be widened to its type",
				c->name, from);
	return GPMDB_OK;
}

void tab_copy_col(stg_pool *p, void *dst, const stg_col_batch *b, int from,
		  uint64_t r0, uint64_t n, size_t w)
{
	/* widened through a buffer in the cache, copied as any column is */
	enum { CHUNK = 2048 };
	int64_t buf[CHUNK];
	const int32_t *s = (const int32_t *)b->values + r0;

	if (from != STG_FROM_I32) {
		pool_memcpy_nodrain(p, dst, (const char *)b->values + r0 * w,
				    n * w);
		return;
	}
	for (uint64_t i = 0; i < n; i += CHUNK) {
		uint64_t k = n - i < CHUNK ? n - i : CHUNK;

		for (uint64_t j = 0; j < k; j++)
			buf[j] = s[i + j];
		pool_memcpy_nodrain(p, (int64_t *)dst + i, buf, k * 8);
	}
}
