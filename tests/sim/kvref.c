/* SPDX-License-Identifier: Apache-2.0
 * kvref: paged KV blocks, prefix-cache hash table and LRU free queue (the
 * differential test's oracle, see kvref.h). */
#include "tests/sim/kvref.h"

#include "base/diag.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

int kvref_init(struct kvref *kv, int64_t block_size, int64_t total_blocks, bool prefix_caching)
{
	memset(kv, 0, sizeof(*kv));
	kv->block_size = block_size;
	kv->total_blocks = total_blocks;
	kv->prefix_caching = prefix_caching;
	kv->head = kv->tail = -1;
	map_init(&kv->table);
	if (block_size < 1 || total_blocks < 1 || total_blocks > INT32_MAX)
		return DIAG_EINPUT;
	return 0;
}

void kvref_release(struct kvref *kv)
{
	free(kv->hash);
	free(kv->hashed);
	free(kv->ref);
	free(kv->prev);
	free(kv->next);
	free(kv->dprev);
	free(kv->dnext);
	free(kv->stamp);
	map_release(&kv->table);
	memset(kv, 0, sizeof(*kv));
	kv->head = kv->tail = -1;
}

void kvref_reset(struct kvref *kv)
{
	assert(kvref_used(kv) == 0 && kv->reserved == 0);
	int64_t bs = kv->block_size, total = kv->total_blocks;
	bool pc = kv->prefix_caching;
	int64_t ev = kv->evictions, dup = kv->duplicates;
	void (*on_evict)(void *, uint64_t) = kv->on_evict;
	void *evict_ctx = kv->evict_ctx;
	kvref_release(kv); /* no block is demoted: the GPU's memory is simply lost */
	int rc = kvref_init(kv, bs, total, pc); /* cannot fail: it held these values */
	assert(rc == 0);
	(void)rc;
	kv->evictions = ev;
	kv->duplicates = dup;
	kv->on_evict = on_evict;
	kv->evict_ctx = evict_ctx;
}

static int kv_grow(struct kvref *kv)
{
	int64_t ncap = kv->cap ? kv->cap * 2 : 1024;
	if (ncap > kv->total_blocks)
		ncap = kv->total_blocks;
	size_t n = (size_t)ncap;
	uint64_t *h = realloc(kv->hash, n * sizeof(*h));
	if (h)
		kv->hash = h;
	unsigned char *hd = realloc(kv->hashed, n);
	if (hd)
		kv->hashed = hd;
	int32_t *r = realloc(kv->ref, n * sizeof(*r));
	if (r)
		kv->ref = r;
	int32_t *p = realloc(kv->prev, n * sizeof(*p));
	if (p)
		kv->prev = p;
	int32_t *x = realloc(kv->next, n * sizeof(*x));
	if (x)
		kv->next = x;
	int32_t *dp = realloc(kv->dprev, n * sizeof(*dp));
	if (dp)
		kv->dprev = dp;
	int32_t *dn = realloc(kv->dnext, n * sizeof(*dn));
	if (dn)
		kv->dnext = dn;
	uint64_t *st = realloc(kv->stamp, n * sizeof(*st));
	if (st)
		kv->stamp = st;
	if (!h || !hd || !r || !p || !x || !dp || !dn || !st)
		return DIAG_ENOMEM;
	kv->cap = ncap;
	return 0;
}

static void q_unlink(struct kvref *kv, int32_t b)
{
	int32_t p = kv->prev[b], n = kv->next[b];
	if (p >= 0)
		kv->next[p] = n;
	else
		kv->head = n;
	if (n >= 0)
		kv->prev[n] = p;
	else
		kv->tail = p;
	kv->prev[b] = kv->next[b] = -1;
	kv->free_len--;
}

static void q_append(struct kvref *kv, int32_t b)
{
	kv->prev[b] = kv->tail;
	kv->next[b] = -1;
	if (kv->tail >= 0)
		kv->next[kv->tail] = b;
	else
		kv->head = b;
	kv->tail = b;
	kv->free_len++;
	kv->stamp[b] = kv->stamp_next++;
}

/* Take b off its hash's ring; the hash leaves the table with its last block. */
static void unhash(struct kvref *kv, int32_t b)
{
	uint64_t *v = map_get(&kv->table, kv->hash[b]);
	assert(v);
	if (kv->dnext[b] == b) {
		map_del(&kv->table, kv->hash[b]);
	} else {
		kv->dnext[kv->dprev[b]] = kv->dnext[b];
		kv->dprev[kv->dnext[b]] = kv->dprev[b];
		if (*v == (uint64_t)b)
			*v = (uint64_t)kv->dnext[b];
	}
	kv->hashed[b] = 0;
}

int64_t kvref_match(const struct kvref *kv, const uint64_t *hashes, int64_t n, int32_t *blocks)
{
	if (!kv->prefix_caching)
		return 0;
	int64_t i = 0;
	for (; i < n; i++) {
		const uint64_t *b = map_get(&kv->table, hashes[i]);
		if (!b)
			break;
		if (blocks)
			blocks[i] = (int32_t)*b;
	}
	return i;
}

void kvref_take(struct kvref *kv, int32_t b)
{
	assert(b >= 0 && b < kv->touched && kv->hashed[b]);
	if (kv->ref[b] == 0)
		q_unlink(kv, b);
	kv->ref[b]++;
}

int32_t kvref_alloc(struct kvref *kv)
{
	int32_t b;
	if (kv->touched < kv->total_blocks) {
		if (kv->touched == kv->cap && kv_grow(kv) != 0)
			return -1;
		b = (int32_t)kv->touched++;
	} else if (kv->head >= 0) {
		b = kv->head;
		q_unlink(kv, b);
		if (kv->hashed[b]) {
			unhash(kv, b);
			kv->evictions++;
			if (kv->on_evict)
				kv->on_evict(kv->evict_ctx, kv->hash[b]);
		}
	} else {
		return -1;
	}
	kv->hashed[b] = 0;
	kv->hash[b] = 0;
	kv->ref[b] = 1;
	kv->prev[b] = kv->next[b] = -1;
	return b;
}

int kvref_register(struct kvref *kv, int32_t b, uint64_t h)
{
	if (!kv->prefix_caching || kv->hashed[b])
		return 0;
	uint64_t *v = map_get(&kv->table, h);
	if (v) { /* a duplicate: append it to the ring, after the others */
		int32_t first = (int32_t)*v, last = kv->dprev[first];
		kv->dnext[last] = b;
		kv->dprev[b] = last;
		kv->dnext[b] = first;
		kv->dprev[first] = b;
		kv->duplicates++;
	} else {
		if (map_put(&kv->table, h, (uint64_t)b) != 0)
			return DIAG_ENOMEM;
		kv->dnext[b] = kv->dprev[b] = b;
	}
	kv->hash[b] = h;
	kv->hashed[b] = 1;
	return 0;
}

void kvref_put(struct kvref *kv, int32_t b)
{
	assert(kv->ref[b] > 0);
	if (--kv->ref[b] == 0)
		q_append(kv, b);
}

int64_t kvref_allocs_before(const struct kvref *kv, uint64_t stamp, int64_t limit)
{
	int64_t n = kv->total_blocks - kv->touched;
	if (n >= limit)
		return limit;
	for (int32_t b = kv->head; b >= 0 && n < limit && kv->stamp[b] < stamp; b = kv->next[b])
		n++;
	return n;
}

int64_t kvref_allocs_before_hashed(const struct kvref *kv, int64_t limit)
{
	int64_t n = kv->total_blocks - kv->touched;
	if (n >= limit)
		return limit;
	for (int32_t b = kv->head; b >= 0 && n < limit && !kv->hashed[b]; b = kv->next[b])
		n++;
	return n;
}

int64_t kvref_used(const struct kvref *kv)
{
	return kv->touched - kv->free_len;
}

bool kvref_check(const struct kvref *kv)
{
	int64_t n = 0;
	for (int32_t b = kv->head, p = -1; b >= 0; p = b, b = kv->next[b]) {
		if (kv->prev[b] != p || kv->ref[b] != 0 || n > kv->touched)
			return false;
		n++;
	}
	if (n != kv->free_len)
		return false;
	int64_t zero = 0;
	for (int64_t b = 0; b < kv->touched; b++) {
		if (kv->ref[b] < 0)
			return false;
		if (kv->ref[b] == 0)
			zero++;
		if (kv->hashed[b]) {
			/* b is on the ring its hash's table entry starts */
			uint64_t *v = map_get(&kv->table, kv->hash[b]);
			if (!v)
				return false;
			int32_t first = (int32_t)*v, x = first;
			int64_t steps = 0;
			while (x != b && steps++ <= kv->touched) {
				if (!kv->hashed[x] || kv->hash[x] != kv->hash[b] ||
				    kv->dprev[kv->dnext[x]] != x)
					return false;
				x = kv->dnext[x];
				if (x == first)
					return false;
			}
			if (x != b)
				return false;
		}
	}
	for (int32_t b = kv->head; b >= 0 && kv->next[b] >= 0; b = kv->next[b])
		if (kv->stamp[b] >= kv->stamp[kv->next[b]])
			return false;
	if (zero != kv->free_len)
		return false;
	for (size_t i = 0; i < kv->table.cap; i++) {
		if (!kv->table.used[i])
			continue;
		int64_t b = (int64_t)kv->table.slots[i].val;
		if (b < 0 || b >= kv->touched || !kv->hashed[b] || kv->hash[b] != kv->table.slots[i].key)
			return false;
	}
	return true;
}
