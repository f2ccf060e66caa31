/* SPDX-License-Identifier: Apache-2.0
 * kvtier: an LRU set of KV block hashes below the GPU caches (see kvtier.h). */
#include "sim/kvtier.h"

#include "base/diag.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

int kvtier_init(struct kvtier *t, int64_t capacity, double ns_per_block, struct kvtier *lower)
{
	memset(t, 0, sizeof(*t));
	t->capacity = capacity;
	t->ns_per_block = ns_per_block;
	t->lower = lower;
	t->lru = t->mru = -1;
	map_init(&t->index);
	if (capacity < 1 || capacity > INT32_MAX || !(ns_per_block >= 0))
		return DIAG_EINPUT;
	return 0;
}

void kvtier_release(struct kvtier *t)
{
	free(t->hash);
	free(t->prev);
	free(t->next);
	map_release(&t->index);
	memset(t, 0, sizeof(*t));
	t->lru = t->mru = -1;
}

static int grow(struct kvtier *t)
{
	int64_t ncap = t->cap ? t->cap * 2 : 1024;
	if (ncap > t->capacity)
		ncap = t->capacity;
	size_t n = (size_t)ncap;
	uint64_t *h = realloc(t->hash, n * sizeof(*h));
	if (h)
		t->hash = h;
	int32_t *p = realloc(t->prev, n * sizeof(*p));
	if (p)
		t->prev = p;
	int32_t *x = realloc(t->next, n * sizeof(*x));
	if (x)
		t->next = x;
	if (!h || !p || !x)
		return DIAG_ENOMEM;
	t->cap = ncap;
	return 0;
}

static void unlink_slot(struct kvtier *t, int32_t s)
{
	int32_t p = t->prev[s], n = t->next[s];
	if (p >= 0)
		t->next[p] = n;
	else
		t->lru = n;
	if (n >= 0)
		t->prev[n] = p;
	else
		t->mru = p;
	t->prev[s] = t->next[s] = -1;
}

static void append_slot(struct kvtier *t, int32_t s)
{
	t->prev[s] = t->mru;
	t->next[s] = -1;
	if (t->mru >= 0)
		t->next[t->mru] = s;
	else
		t->lru = s;
	t->mru = s;
}

void kvtier_put(struct kvtier *t, uint64_t h)
{
	uint64_t *v = map_get(&t->index, h);
	if (v) { /* already here: now the most recent */
		unlink_slot(t, (int32_t)*v);
		append_slot(t, (int32_t)*v);
		return;
	}
	int32_t s;
	if (t->len < t->capacity) {
		if (t->len == t->cap && grow(t) != 0) {
			if (!t->err)
				t->err = DIAG_ENOMEM;
			return;
		}
		s = (int32_t)t->len++;
	} else { /* full: the least recent block moves down (or is dropped) */
		s = t->lru;
		uint64_t old = t->hash[s];
		unlink_slot(t, s);
		map_del(&t->index, old);
		t->evicted++;
		if (t->lower)
			kvtier_put(t->lower, old);
	}
	if (map_put(&t->index, h, (uint64_t)s) != 0) {
		/* the run stops with this error; the tier need only be freeable */
		if (!t->err)
			t->err = DIAG_ENOMEM;
		return;
	}
	t->hash[s] = h;
	append_slot(t, s);
	t->stored++;
}

bool kvtier_has(const struct kvtier *t, uint64_t h)
{
	return map_get(&t->index, h) != NULL;
}

void kvtier_load(struct kvtier *t, uint64_t h)
{
	uint64_t *v = map_get(&t->index, h);
	assert(v);
	if (!v)
		return;
	unlink_slot(t, (int32_t)*v);
	append_slot(t, (int32_t)*v);
	t->loaded++;
}

bool kvtier_check(const struct kvtier *t)
{
	if (t->len > t->capacity || (int64_t)t->index.len != t->len)
		return false;
	int64_t n = 0;
	for (int32_t s = t->lru, p = -1; s >= 0; p = s, s = t->next[s]) {
		if (t->prev[s] != p || n >= t->len)
			return false;
		const uint64_t *v = map_get(&t->index, t->hash[s]);
		if (!v || *v != (uint64_t)s)
			return false;
		n++;
	}
	return n == t->len;
}
