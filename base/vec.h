/* SPDX-License-Identifier: Apache-2.0
 * vec: a growable array of fixed-size elements with a hard length limit.
 *
 * Invariant: len <= cap <= max_len; data is NULL iff cap == 0.  Growing past
 * max_len fails with DIAG_ENOMEM instead of exhausting memory, so a hostile
 * input hits a clear limit.  Pointers into data are valid until the next call
 * that grows the vector.
 */
#ifndef BASE_VEC_H
#define BASE_VEC_H

#include <stddef.h>

struct vec {
	void *data;
	size_t len;
	size_t cap;
	size_t elem_size;
	size_t max_len;
};

#define VEC_NO_LIMIT ((size_t)-1 / 2)

void vec_init(struct vec *v, size_t elem_size, size_t max_len);
void vec_release(struct vec *v);
/* Forget the contents, keep the storage. */
static inline void vec_clear(struct vec *v) { v->len = 0; }

/* Make room for at least n elements; 0 or DIAG_ENOMEM. */
int vec_reserve(struct vec *v, size_t n);
/* Append one zeroed element and return it, or NULL (limit or out of memory). */
void *vec_push(struct vec *v);
/* Append n elements copied from src; 0 or DIAG_ENOMEM. */
int vec_append(struct vec *v, const void *src, size_t n);

static inline void *vec_at(const struct vec *v, size_t i)
{
	return (char *)v->data + i * v->elem_size;
}

#define VEC_AT(v, type, i) (((type *)(v)->data)[i])

#endif
