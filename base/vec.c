/* SPDX-License-Identifier: Apache-2.0
 * vec: growable array with a limit (see vec.h). */
#include "base/vec.h"

#include "base/diag.h"

#include <stdlib.h>
#include <string.h>

void vec_init(struct vec *v, size_t elem_size, size_t max_len)
{
	v->data = NULL;
	v->len = 0;
	v->cap = 0;
	v->elem_size = elem_size;
	v->max_len = max_len;
}

void vec_release(struct vec *v)
{
	free(v->data);
	v->data = NULL;
	v->len = 0;
	v->cap = 0;
}

int vec_reserve(struct vec *v, size_t n)
{
	if (n <= v->cap)
		return 0;
	if (n > v->max_len)
		return DIAG_ENOMEM;
	size_t cap = v->cap ? v->cap : 8;
	while (cap < n)
		cap = cap > v->max_len / 2 ? v->max_len : cap * 2;
	if (cap > v->max_len)
		cap = v->max_len;
	void *p = realloc(v->data, cap * v->elem_size);
	if (!p)
		return DIAG_ENOMEM;
	v->data = p;
	v->cap = cap;
	return 0;
}

void *vec_push(struct vec *v)
{
	if (vec_reserve(v, v->len + 1) != 0)
		return NULL;
	void *slot = vec_at(v, v->len++);
	memset(slot, 0, v->elem_size);
	return slot;
}

int vec_append(struct vec *v, const void *src, size_t n)
{
	if (n == 0)
		return 0;
	if (vec_reserve(v, v->len + n) != 0)
		return DIAG_ENOMEM;
	memcpy(vec_at(v, v->len), src, n * v->elem_size);
	v->len += n;
	return 0;
}
