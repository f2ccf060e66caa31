/* SPDX-License-Identifier: Apache-2.0
 * Tests of KV retention across tool pauses (sim/kvcache.h): hand-sized
 * caches where the answer is known block by block.  A retained session's
 * blocks survive an eviction sweep that takes an unretained session's, an
 * expiry makes them evictable again in plain LRU order, and the cap and an
 * allocation with nothing else free release retained blocks, oldest first,
 * instead of refusing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "sim/kvcache.h"

/* A "session" of n blocks with hashes base+0..n-1: allocated, entered, and
 * released tail first, retained until `until` (0: plain release). */
static void session(struct kvcache *kv, uint64_t base, int n, int64_t until)
{
	int32_t b[8];
	assert_true(n <= 8);
	for (int i = 0; i < n; i++) {
		b[i] = kvcache_alloc(kv);
		assert_true(b[i] >= 0);
		assert_int_equal(kvcache_register(kv, b[i], base + (uint64_t)i), 0);
	}
	for (int i = n - 1; i >= 0; i--) {
		if (until > 0)
			kvcache_put_retained(kv, b[i], until);
		else
			kvcache_put(kv, b[i]);
	}
	assert_true(kvcache_check(kv));
}

static bool holds(const struct kvcache *kv, uint64_t base, int n)
{
	for (int i = 0; i < n; i++)
		if (kvcache_lookup(kv, base + (uint64_t)i) < 0)
			return false;
	return true;
}

static bool holds_none(const struct kvcache *kv, uint64_t base, int n)
{
	for (int i = 0; i < n; i++)
		if (kvcache_lookup(kv, base + (uint64_t)i) >= 0)
			return false;
	return true;
}

/* Fill every never-used block, then take `sweep` more (evictions). */
static void sweep(struct kvcache *kv, int64_t n)
{
	for (int64_t i = 0; i < n; i++)
		assert_true(kvcache_alloc(kv) >= 0);
	assert_true(kvcache_check(kv));
}

/* 8 blocks: session A (2 blocks) pauses for a tool, session B (2 blocks)
 * finishes after it, then a new call needs 4 never-used blocks and 2 more.
 * Plain LRU evicts A's (released first); with A retained, B's go. */
static void test_retained_survives_sweep(void **state)
{
	(void)state;
	for (int on = 0; on <= 1; on++) {
		struct kvcache kv;
		assert_int_equal(kvcache_init(&kv, 16, 8, true), 0);
		if (on)
			kvcache_retain_config(&kv, 8);
		session(&kv, 100, 2, on ? 60 : 0); /* A */
		session(&kv, 200, 2, 0);           /* B */
		sweep(&kv, 4 + 2);
		if (on) {
			assert_true(holds(&kv, 100, 2));
			assert_true(holds_none(&kv, 200, 2));
			assert_int_equal(kv.retained, 2);
			assert_int_equal(kv.retain_avoided, 2);
			assert_int_equal(kv.retain_forced, 0);
		} else {
			assert_true(holds_none(&kv, 100, 2));
			assert_true(holds(&kv, 200, 2));
		}
		assert_int_equal(kv.evictions, 2);
		/* A's next call hits its retained blocks */
		int32_t m[2];
		assert_int_equal(kvcache_match(&kv, (uint64_t[]){100, 101}, 2, m), on ? 2 : 0);
		if (on) {
			kvcache_take(&kv, m[0]);
			kvcache_take(&kv, m[1]);
			assert_int_equal(kv.retain_hits, 2);
			assert_int_equal(kv.retained, 0);
			assert_true(kvcache_check(&kv));
		}
		kvcache_release(&kv);
	}
}

/* After its expiry, A's blocks rejoin the LRU queue at their stamps (older
 * than B's) and go first, as plain LRU would take them. */
static void test_expiry_makes_evictable(void **state)
{
	(void)state;
	struct kvcache kv;
	assert_int_equal(kvcache_init(&kv, 16, 8, true), 0);
	kvcache_retain_config(&kv, 8);
	session(&kv, 100, 2, 60); /* A, retained until 60 */
	session(&kv, 200, 2, 0);  /* B */
	kvcache_retain_expire(&kv, 59);
	assert_int_equal(kv.retained, 2);
	assert_int_equal(kvcache_retain_next_ns(&kv), 60);
	kvcache_retain_expire(&kv, 60);
	assert_int_equal(kv.retained, 0);
	assert_int_equal(kvcache_retain_next_ns(&kv), INT64_MAX);
	assert_true(kvcache_check(&kv));
	sweep(&kv, 4 + 2);
	assert_true(holds_none(&kv, 100, 2));
	assert_true(holds(&kv, 200, 2));
	assert_int_equal(kv.retain_avoided, 0);
	kvcache_release(&kv);
}

/* An expired block placed between unretained ones: the queue stays in stamp
 * order, so evictions follow release order exactly. */
static void test_expiry_merges_in_stamp_order(void **state)
{
	(void)state;
	struct kvcache kv;
	assert_int_equal(kvcache_init(&kv, 16, 6, true), 0);
	kvcache_retain_config(&kv, 6);
	session(&kv, 100, 2, 0);  /* X, oldest */
	session(&kv, 200, 2, 10); /* A retained */
	session(&kv, 300, 2, 0);  /* Y, newest */
	kvcache_retain_expire(&kv, 10);
	assert_true(kvcache_check(&kv));
	sweep(&kv, 2);
	assert_true(holds_none(&kv, 100, 2));
	assert_true(holds(&kv, 200, 2) && holds(&kv, 300, 2));
	sweep(&kv, 2);
	assert_true(holds_none(&kv, 200, 2));
	assert_true(holds(&kv, 300, 2));
	kvcache_release(&kv);
}

/* The cap (here 3 of 8 blocks): retaining C's 2 blocks after A's 2 expires
 * A's oldest block at once.  Then, with every free block retained, an
 * allocation still succeeds: the oldest retained block gives way. */
static void test_cap_releases_instead_of_refusing(void **state)
{
	(void)state;
	struct kvcache kv;
	assert_int_equal(kvcache_init(&kv, 16, 4, true), 0);
	kvcache_retain_config(&kv, 3);
	session(&kv, 100, 2, 60); /* A */
	session(&kv, 300, 2, 70); /* C */
	assert_int_equal(kv.retained, 3);
	assert_int_equal(kv.retain_capped, 1);
	assert_int_equal(kv.retain_peak, 3);
	assert_int_equal(kvcache_available(&kv), 4);
	/* one LRU block (A's tail, released first), then retained ones */
	int32_t got[4];
	for (int i = 0; i < 4; i++) {
		got[i] = kvcache_alloc(&kv);
		assert_true(got[i] >= 0);
		assert_true(kvcache_check(&kv));
	}
	assert_int_equal(kv.retain_forced, 3);
	assert_int_equal(kv.evictions, 4);
	assert_int_equal(kvcache_alloc(&kv), -1); /* all in use now */
	for (int i = 0; i < 4; i++)
		kvcache_put(&kv, got[i]);
	assert_true(kvcache_check(&kv));
	kvcache_release(&kv);
}

/* The allocs-before counts walk the LRU queue, then the retained one. */
static void test_allocs_before_walks_both(void **state)
{
	(void)state;
	struct kvcache kv;
	assert_int_equal(kvcache_init(&kv, 16, 4, true), 0);
	kvcache_retain_config(&kv, 4);
	session(&kv, 100, 2, 60);
	session(&kv, 200, 2, 0);
	/* LRU: B's two; then A's two retained (stamps 0, 1 < B's 2, 3) */
	assert_int_equal(kvcache_allocs_before(&kv, 2, 4), 0);
	assert_int_equal(kvcache_allocs_before(&kv, 4, 4), 4);
	assert_int_equal(kvcache_allocs_before_hashed(&kv, 4), 0);
	kvcache_release(&kv);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_retained_survives_sweep),
		cmocka_unit_test(test_expiry_makes_evictable),
		cmocka_unit_test(test_expiry_merges_in_stamp_order),
		cmocka_unit_test(test_cap_releases_instead_of_refusing),
		cmocka_unit_test(test_allocs_before_walks_both),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
