/* SPDX-License-Identifier: Apache-2.0
 * Differential test of the KV cache: sim/kvcache.c against the block-level
 * oracle tests/sim/kvref.c, driven by one random sequence of the calls a
 * replica makes (allocate, enter, hit and take, release tail first or in any
 * order, reset) on small caches where evictions, duplicate
 * hashes, hash collisions in a bucket and full caches are frequent.  After
 * every call both give the same answer: block ids, match lengths and the
 * blocks matched, look-ups, queue positions and stamps, the allocs-before
 * counts, counters, and the hashes evicted, in order; both checks hold. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "sim/kvcache.h"
#include "tests/sim/kvref.h"

#include <stdlib.h>
#include <string.h>

enum { MAX_HELD = 1 << 15, MAX_EVICT = 1 << 18 };

struct evlog {
	uint64_t h[MAX_EVICT];
	int64_t n;
};

static void log_evict(void *ctx, uint64_t h)
{
	struct evlog *l = ctx;
	assert_true(l->n < MAX_EVICT);
	l->h[l->n++] = h;
}

struct rng {
	uint64_t s;
};

static uint64_t rnd(struct rng *r)
{
	uint64_t z = (r->s += 0x9E3779B97F4A7C15ULL);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
	return z ^ (z >> 31);
}

static int64_t below(struct rng *r, int64_t n)
{
	return (int64_t)(rnd(r) % (uint64_t)n);
}

struct pair {
	struct kvcache kv;
	struct kvref ref;
	struct evlog ekv, eref;
	int32_t held[MAX_HELD]; /* one entry per reference taken */
	int64_t n_held;
};

/* Hashes come from a small pool, so blocks share them (duplicates); the
 * chained prefixes of a few "documents" make matches run several blocks. */
static uint64_t pool_hash(struct rng *r, int64_t pool)
{
	return 1000 + (uint64_t)below(r, pool);
}

static void chain(uint64_t doc, int64_t n, uint64_t *out)
{
	for (int64_t j = 0; j < n; j++)
		out[j] = (doc << 20) ^ (uint64_t)(j + 1) * 0x100000001B3ULL;
}

static void same_state(const struct pair *p)
{
	const struct kvcache *a = &p->kv;
	const struct kvref *b = &p->ref;
	assert_int_equal(a->touched, b->touched);
	assert_int_equal(a->free_len, b->free_len);
	assert_int_equal(a->head, b->head);
	assert_int_equal(a->tail, b->tail);
	assert_int_equal(a->evictions, b->evictions);
	assert_int_equal(a->duplicates, b->duplicates);
	assert_int_equal(kvcache_available(a), kvref_available(b));
	assert_int_equal(kvcache_used(a), kvref_used(b));
	for (int32_t x = 0; x < a->touched; x++) {
		assert_int_equal(kvcache_ref(a, x), b->ref[x]);
		assert_int_equal(a->blk[x].hashed, b->hashed[x]);
		if (b->hashed[x])
			assert_int_equal(a->blk[x].hash, b->hash[x]);
		if (b->ref[x] == 0) {
			assert_int_equal(kvcache_stamp(a, x), b->stamp[x]);
			assert_int_equal(a->blk[x].next, b->next[x]);
		}
	}
	assert_int_equal(p->ekv.n, p->eref.n);
	assert_memory_equal(p->ekv.h, p->eref.h, (size_t)p->ekv.n * sizeof(uint64_t));
	assert_true(kvcache_check(a));
	assert_true(kvref_check(b));
}

static void hold(struct pair *p, int32_t x)
{
	assert_true(p->n_held < MAX_HELD);
	p->held[p->n_held++] = x;
}

static void release_at(struct pair *p, int64_t i)
{
	kvcache_put(&p->kv, p->held[i]);
	kvref_put(&p->ref, p->held[i]);
	p->held[i] = p->held[--p->n_held];
}

static void one_op(struct pair *p, struct rng *r, int64_t pool)
{
	uint64_t hs[64];
	int32_t ba[64], bb[64];
	switch (below(r, 12)) {
	case 0: case 1: { /* a request's new blocks, entered in order */
		int64_t n = 1 + below(r, 16);
		uint64_t doc = (uint64_t)below(r, 6);
		chain(doc, 24, hs);
		int64_t from = below(r, 8);
		for (int64_t j = 0; j < n && from + j < 24; j++) {
			int32_t x = kvcache_alloc(&p->kv);
			assert_int_equal(x, kvref_alloc(&p->ref));
			if (x < 0)
				break;
			hold(p, x);
			if (below(r, 4) != 0) {
				assert_int_equal(kvcache_register(&p->kv, x, hs[from + j]), 0);
				assert_int_equal(kvref_register(&p->ref, x, hs[from + j]), 0);
			}
		}
		break;
	}
	case 2: { /* a lone block under a pool hash (collisions, duplicates) */
		int32_t x = kvcache_alloc(&p->kv);
		assert_int_equal(x, kvref_alloc(&p->ref));
		if (x < 0)
			break;
		hold(p, x);
		uint64_t h = pool_hash(r, pool);
		assert_int_equal(kvcache_register(&p->kv, x, h), 0);
		assert_int_equal(kvref_register(&p->ref, x, h), 0);
		break;
	}
	case 3: case 4: { /* a prefix hit, then take some of it */
		int64_t n = 1 + below(r, 24);
		chain((uint64_t)below(r, 6), n, hs);
		if (below(r, 5) == 0)
			hs[0] = pool_hash(r, pool);
		int64_t ma = kvcache_match(&p->kv, hs, n, ba);
		int64_t mb = kvref_match(&p->ref, hs, n, bb);
		assert_int_equal(ma, mb);
		assert_memory_equal(ba, bb, (size_t)ma * sizeof(int32_t));
		int64_t take = ma ? below(r, ma + 1) : 0;
		for (int64_t j = 0; j < take; j++) {
			kvcache_take(&p->kv, ba[j]);
			kvref_take(&p->ref, bb[j]);
			hold(p, ba[j]);
		}
		break;
	}
	case 5: case 6: /* release the latest references, tail first */
		for (int64_t k = below(r, 16); k > 0 && p->n_held > 0; k--) {
			p->n_held--;
			kvcache_put(&p->kv, p->held[p->n_held]);
			kvref_put(&p->ref, p->held[p->n_held]);
		}
		break;
	case 7: /* release one reference anywhere (a window's early block) */
		if (p->n_held > 0)
			release_at(p, below(r, p->n_held));
		break;
	case 8: { /* look-ups and the allocs-before counts */
		uint64_t h = pool_hash(r, pool);
		assert_int_equal(kvcache_lookup(&p->kv, h), kvref_match(&p->ref, &h, 1, bb) ? bb[0] : -1);
		int64_t lim = below(r, p->kv.total_blocks + 2);
		assert_int_equal(kvcache_allocs_before_hashed(&p->kv, lim),
				 kvref_allocs_before_hashed(&p->ref, lim));
		uint64_t st = (uint64_t)below(r, (int64_t)p->ref.stamp_next + 2);
		assert_int_equal(kvcache_allocs_before(&p->kv, st, lim),
				 kvref_allocs_before(&p->ref, st, lim));
		break;
	}
	case 9: { /* the match of a chain from one of the documents */
		int64_t n = 1 + below(r, 24);
		chain((uint64_t)below(r, 6), n, hs);
		int64_t m = kvcache_match(&p->kv, hs, n, ba);
		assert_int_equal(m, kvref_match(&p->ref, hs, n, bb));
		for (int64_t j = 0; j < m; j++)
			assert_int_equal(ba[j], bb[j]);
		break;
	}
	case 10: /* a restart, now and then when nothing is held */
		if (p->n_held == 0 && below(r, 40) == 0) {
			kvcache_reset(&p->kv);
			kvref_reset(&p->ref);
		}
		break;
	default: /* release everything, tail first (a finished request) */
		if (below(r, 3) == 0)
			while (p->n_held > 0) {
				p->n_held--;
				kvcache_put(&p->kv, p->held[p->n_held]);
				kvref_put(&p->ref, p->held[p->n_held]);
			}
		break;
	}
}

static void run_case(uint64_t seed, int64_t blocks, int64_t pool, int64_t steps, bool caching)
{
	struct pair *p = calloc(1, sizeof(*p));
	assert_non_null(p);
	assert_int_equal(kvcache_init(&p->kv, 16, blocks, caching), 0);
	assert_int_equal(kvref_init(&p->ref, 16, blocks, caching), 0);
	p->kv.on_evict = log_evict;
	p->kv.evict_ctx = &p->ekv;
	p->ref.on_evict = log_evict;
	p->ref.evict_ctx = &p->eref;
	struct rng r = {seed};
	/* the whole state after every call on small caches, every 50th on
	 * large ones (the answers of each call are compared as it is made) */
	int64_t every = blocks > 200 ? 50 : 1;
	for (int64_t i = 0; i < steps; i++) {
		one_op(p, &r, pool);
		if (i % every == 0)
			same_state(p);
	}
	while (p->n_held > 0)
		release_at(p, p->n_held - 1);
	same_state(p);
	/* the runs exercised what the equivalence is about */
	if (caching && steps >= 2000) {
		assert_true(p->kv.evictions > 100);
		assert_true(p->kv.duplicates > 10);
	}
	kvcache_release(&p->kv);
	kvref_release(&p->ref);
	free(p);
}

static void test_small_caches(void **state)
{
	(void)state;
	for (uint64_t seed = 1; seed <= 20; seed++)
		run_case(seed, 8 + (int64_t)seed * 3, 12, 3000, true);
}

/* Past the first 1024 blocks the index grows (rehashing every chain in
 * order) while duplicates are entered. */
static void test_growing_index(void **state)
{
	(void)state;
	run_case(77, 3000, 400, 20000, true);
	run_case(78, 1500, 40, 20000, true);
}

static void test_without_prefix_caching(void **state)
{
	(void)state;
	run_case(5, 40, 12, 2000, false);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_small_caches),
		cmocka_unit_test(test_growing_index),
		cmocka_unit_test(test_without_prefix_caching),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
