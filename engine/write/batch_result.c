/*
 * batch_result.c - columnar results of the batch C API
 * (gpmdb_result_column, include/gpmdb.h, docs/engine.md "Batch API"):
 * they read the statement's materialised result relation
 * (engine/exec/rel.c); INTEGER and REAL columns are returned in place,
 * other types are converted into per-statement caches freed by the next
 * execution, reset or finalize.
 */
#include "../engine.h"
#include "../value.h"
#include "batch_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void batch_result_free(gpmdb_stmt *st)
{
	stmt_batch *b = st->batch;

	if (!b || !b->rc)
		return;
	for (int i = 0; i < b->nrc; i++) {
		free(b->rc[i].values);
		free(b->rc[i].nulls);
		free(b->rc[i].text);
	}
	free(b->rc);
	b->rc = NULL;
	b->nrc = 0;
}

int gpmdb_result_column(gpmdb_stmt *st, int i, gpmdb_column_array *out,
			int64_t *n)
{
	stmt_batch *b;
	rcache *c;
	const rcol *rc;
	uint64_t start, cnt;

	if (!st || !out || !n)
		return GPMDB_MISUSE;
	memset(out, 0, sizeof(*out));
	*n = 0;
	db_clear(st->db);
	if (i < 0 || i >= st->ncols)
		return db_err(st->db, GPMDB_RANGE,
			      "gpmdb_result_column: column %d out of range "
			      "(0..%d)",
			      i, st->ncols - 1);
	if (st->state == 0)
		return db_err(st->db, GPMDB_MISUSE,
			      "gpmdb_result_column: the statement has not "
			      "run (call gpmdb_step first)");
	if (st->state == 2 || !st->res || i >= st->res->ncols ||
	    st->cur >= st->res->nrows) {
		out->type = GPMDB_ARRAY_INT64;
		return GPMDB_OK; /* done: no rows left */
	}
	rc = &st->res->cols[i];
	start = st->cur;
	cnt = st->res->nrows - start;
	*n = (int64_t)cnt;
	/* INTEGER and REAL: the relation's own arrays */
	if (rc->ty.t == BC_T_INT || rc->ty.t == BC_T_REAL) {
		out->type = rc->ty.t == BC_T_INT ? GPMDB_ARRAY_INT64
						 : GPMDB_ARRAY_DOUBLE;
		out->values = (const char *)rc->data + start * 8;
		out->nulls = rc->nulls + start;
		return GPMDB_OK;
	}
	if (!(b = batch_get(st)))
		return db_err(st->db, GPMDB_NOMEM, "out of memory");
	if (!b->rc) {
		b->rc = calloc((size_t)st->ncols, sizeof(rcache));
		if (!b->rc)
			return db_err(st->db, GPMDB_NOMEM, "out of memory");
		b->nrc = st->ncols;
	}
	c = &b->rc[i];
	if (c->valid && c->start == start)
		goto done;
	free(c->values);
	free(c->nulls);
	free(c->text);
	memset(c, 0, sizeof(*c));
	c->nulls = malloc(cnt);
	if (!c->nulls)
		return db_err(st->db, GPMDB_NOMEM, "out of memory");
	memcpy(c->nulls, rc->nulls + start, cnt);
	switch (rc->ty.t) {
	case BC_T_NULL:
	case BC_T_BOOL:
		c->type = GPMDB_ARRAY_INT64;
		c->values = calloc(cnt, 8);
		if (!c->values)
			break;
		for (uint64_t k = 0; k < cnt; k++) {
			if (rc->ty.t == BC_T_NULL)
				c->nulls[k] = 1;
			else
				((int64_t *)c->values)[k] =
				    ((const uint8_t *)rc->data)[start + k];
		}
		break;
	case BC_T_DEC:
		c->type = GPMDB_ARRAY_DOUBLE;
		c->values = malloc(cnt * 8);
		if (!c->values)
			break;
		for (uint64_t k = 0; k < cnt; k++)
			((double *)c->values)[k] = val_dec_to_real(
			    ((const int64_t *)rc->data)[start + k],
			    rc->ty.scale);
		break;
	default: { /* TEXT, DATE: NUL-terminated strings */
		size_t bytes = 0, at = 0;
		char buf[64];
		uint32_t len;
		c->type = GPMDB_ARRAY_TEXT;
		for (uint64_t k = 0; k < cnt; k++) {
			sval v;
			rel_get(st->res, i, start + k, &v);
			if (v.t != BC_T_NULL) {
				sval_text(&v, buf, &len);
				bytes += len + 1;
			}
		}
		c->values = calloc(cnt + 1, sizeof(char *));
		c->text = malloc(bytes + 1);
		if (!c->values || !c->text)
			break;
		for (uint64_t k = 0; k < cnt; k++) {
			sval v;
			rel_get(st->res, i, start + k, &v);
			if (v.t == BC_T_NULL)
				continue;
			const char *t = sval_text(&v, buf, &len);
			memcpy(c->text + at, t, len);
			c->text[at + len] = 0;
			((char **)c->values)[k] = c->text + at;
			at += len + 1;
		}
	}
	}
	if (!c->values || (c->type == GPMDB_ARRAY_TEXT && !c->text)) {
		free(c->values);
		free(c->nulls);
		free(c->text);
		memset(c, 0, sizeof(*c));
		return db_err(st->db, GPMDB_NOMEM, "out of memory");
	}
	c->valid = true;
	c->start = start;
done:
	out->type = c->type;
	out->values = c->values;
	out->nulls = c->nulls;
	return GPMDB_OK;
}
