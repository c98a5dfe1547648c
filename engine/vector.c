/*
 * vector.c - the per-batch string arena (see vector.h).
 */
#include <stdlib.h>

#include "vector.h"

#define VEC_CHUNK_MIN (64 * 1024)

void vec_arena_init(vec_arena *a)
{
	a->first = a->cur = NULL;
}

char *vec_arena_alloc(vec_arena *a, size_t n)
{
	vec_chunk *c = a->cur, *nc;
	size_t cap;

	if (c && c->cap - c->used >= n)
		goto take;
	/* Reuse the following chunks kept from earlier batches when they are
	 * big enough; otherwise put a new one right after the current. */
	while (c ? c->next != NULL : a->first != NULL) {
		nc = c ? c->next : a->first;
		nc->used = 0;
		a->cur = c = nc;
		if (c->cap >= n)
			goto take;
	}
	cap = n > VEC_CHUNK_MIN ? n : VEC_CHUNK_MIN;
	nc = malloc(sizeof(*nc) + cap);
	if (!nc)
		return NULL;
	nc->cap = cap;
	nc->used = 0;
	nc->next = NULL;
	if (c)
		c->next = nc;
	else
		a->first = nc;
	a->cur = c = nc;
take:
	c->used += n;
	return c->data + c->used - n;
}

void vec_arena_reset(vec_arena *a)
{
	a->cur = a->first;
	if (a->cur)
		a->cur->used = 0;
}

void vec_arena_free(vec_arena *a)
{
	vec_chunk *c = a->first, *n;

	for (; c; c = n) {
		n = c->next;
		free(c);
	}
	a->first = a->cur = NULL;
}
