/* SPDX-License-Identifier: Apache-2.0
 * Differential test of the run-level KV cache: sim/kvruns.c against the
 * block-level sim/kvcache.c, both driven by the calls a replica makes for
 * the full-attention group (admit: match, then take the hit; grow: allocate;
 * enter the blocks computed; finish or preempt: release tail first; reset)
 * for several concurrent requests whose chains share prefixes, diverge
 * inside runs and repeat one another, on small caches where evictions and
 * duplicate copies are frequent.  After every call both agree on: the match
 * of every request's chain and of random chains (hit, free blocks a take
 * would take, their oldest stamp), available and used blocks, evictions,
 * duplicates, the whole free queue block by block (order, stamp, hash), each
 * request's per-position reference counts, and the allocs-before counts for
 * several arguments; both checks hold.  Then scripted cases with the
 * figures worked out by hand. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "base/diag.h"
#include "base/hash.h"
#include "sim/kvcache.h"
#include "sim/kvruns.h"

#include <stdlib.h>
#include <string.h>

enum { NREQ = 6, MAXPOS = 48, MAXBLK = 96 };

struct slot {
	bool active;
	uint64_t h[MAXPOS];
	int64_t nh;
	int32_t ids[MAXBLK]; /* the block-level table */
	int64_t n_blocks, n_reg;
	struct kvr_req rq;
};

struct duo {
	struct kvcache kv;
	struct kvr kr;
	struct slot s[NREQ];
};

struct rng {
	uint64_t s;
};

static uint64_t rnd(struct rng *r)
{
	return hash_mix64(r->s++);
}

static int64_t below(struct rng *r, int64_t n)
{
	return (int64_t)(rnd(r) % (uint64_t)n);
}

/* A chain from document b: its own tokens up to position q, variant v's
 * after that.  Chains with one b share a prefix; with one (b, v) and any q
 * they agree up to the smaller q, and beyond it when both are past it. */
static void make_chain(uint64_t *h, int64_t n, uint64_t b, int64_t q, uint64_t v)
{
	uint64_t x = 0x5eed;
	for (int64_t j = 0; j < n; j++) {
		uint64_t tok = b * 1000 + (uint64_t)j + (j >= q ? (v + 1) * 1000000 : 0);
		x = hash_combine(x, tok);
		h[j] = x;
	}
}

static void duo_init(struct duo *d, int64_t blocks, bool caching)
{
	memset(d, 0, sizeof(*d));
	assert_int_equal(kvcache_init(&d->kv, 16, blocks, caching), 0);
	assert_int_equal(kvr_init(&d->kr, 16, blocks, caching), 0);
	for (int i = 0; i < NREQ; i++)
		kvr_req_init(&d->s[i].rq);
}

static void duo_release(struct duo *d)
{
	for (int i = 0; i < NREQ; i++)
		kvr_req_release(&d->s[i].rq);
	kvcache_release(&d->kv);
	kvr_release(&d->kr);
}

/* Both matches of h[0..n) agree; returns the hit. */
static int64_t same_match(struct duo *d, const uint64_t *h, int64_t n, int32_t *ids)
{
	int64_t hit = kvcache_match(&d->kv, h, n, ids);
	int64_t ev = 0;
	uint64_t mn = UINT64_MAX;
	for (int64_t j = 0; j < hit; j++)
		if (kvcache_ref(&d->kv, ids[j]) == 0) {
			ev++;
			if (kvcache_stamp(&d->kv, ids[j]) < mn)
				mn = kvcache_stamp(&d->kv, ids[j]);
		}
	int64_t rhit, rev;
	uint64_t rmn;
	kvr_match(&d->kr, h, n, &rhit, &rev, &rmn);
	assert_int_equal(rhit, hit);
	assert_int_equal(rev, ev);
	assert_int_equal(rmn, mn);
	return hit;
}

static void same_counts(struct duo *d, struct rng *r)
{
	for (int k = 0; k < 4; k++) {
		int64_t lim = below(r, d->kv.total_blocks + 3);
		uint64_t st = (uint64_t)below(r, (int64_t)d->kv.stamp_next + 3);
		assert_int_equal(kvr_allocs_before(&d->kr, st, lim), kvcache_allocs_before(&d->kv, st, lim));
		assert_int_equal(kvr_allocs_before_hashed(&d->kr, lim), kvcache_allocs_before_hashed(&d->kv, lim));
	}
	int64_t lim = d->kv.total_blocks + 1;
	assert_int_equal(kvr_allocs_before(&d->kr, UINT64_MAX, lim), kvcache_allocs_before(&d->kv, UINT64_MAX, lim));
	assert_int_equal(kvr_allocs_before_hashed(&d->kr, lim), kvcache_allocs_before_hashed(&d->kv, lim));
}

static void same_state(struct duo *d)
{
	const struct kvcache *a = &d->kv;
	const struct kvr *b = &d->kr;
	assert_true(kvcache_check(a));
	assert_true(kvr_check(b));
	assert_int_equal(kvr_available(b), kvcache_available(a));
	assert_int_equal(kvr_used(b), kvcache_used(a));
	assert_int_equal(b->touched, a->touched);
	assert_int_equal(b->free_len, a->free_len);
	assert_int_equal(b->stamp_next, a->stamp_next);
	assert_int_equal(b->evictions, a->evictions);
	assert_int_equal(b->duplicates, a->duplicates);
	/* the cached hashes: each of every node's copies is one the block
	 * cache holds, and they are as many */
	int64_t copies = 0;
	for (size_t k = 0; k < b->index.cap; k++) {
		if (!b->index.used[k])
			continue;
		const struct kvr_node *nx = (const struct kvr_node *)(uintptr_t)b->index.slots[k].val;
		int64_t layers = 0;
		for (const struct kvr_seg *s = nx->first; s; s = s->lnext)
			layers++;
		for (int64_t p = nx->lo; p < nx->hi; p++) {
			assert_true(kvcache_lookup(a, kvr_node_hash(nx, p)) >= 0);
		}
		copies += layers * (nx->hi - nx->lo);
	}
	assert_int_equal(copies, a->indexed);
	/* the free queue, block by block */
	int32_t x = a->head;
	for (const struct kvr_seg *s = b->qhead; s; s = s->qnext) {
		int64_t len = kvr_seg_len(s);
		for (int64_t i = 0; i < len; i++) {
			assert_true(x >= 0);
			assert_int_equal(a->blk[x].stamp, s->stamp + (uint64_t)i);
			assert_int_equal(a->blk[x].hashed, s->node != NULL);
			if (s->node)
				assert_int_equal(a->blk[x].hash, kvr_node_hash(s->node, s->node->hi - 1 - i));
			x = a->blk[x].next;
		}
	}
	assert_int_equal(x, -1);
	/* each request's table */
	int64_t refs[MAXBLK];
	for (int i = 0; i < NREQ; i++) {
		const struct slot *sl = &d->s[i];
		assert_true(kvr_req_check(b, &sl->rq));
		assert_int_equal(sl->rq.n_hashed + sl->rq.n_unhashed, sl->n_blocks);
		kvr_req_refs(&sl->rq, refs);
		for (int64_t j = 0; j < sl->rq.n_hashed; j++) {
			assert_int_equal(refs[j], kvcache_ref(a, sl->ids[j]));
			assert_true(a->blk[sl->ids[j]].hashed);
			assert_int_equal(a->blk[sl->ids[j]].hash, sl->h[j]);
		}
		for (int64_t j = sl->rq.n_hashed; j < sl->n_blocks; j++) {
			assert_int_equal(kvcache_ref(a, sl->ids[j]), 1);
			assert_false(a->blk[sl->ids[j]].hashed);
		}
	}
}

/* The scripted steps: admit, grow, enter, release. */
static void admit(struct duo *d, int i, int64_t n_match, int64_t take)
{
	struct slot *sl = &d->s[i];
	assert_false(sl->active);
	int64_t hit = same_match(d, sl->h, n_match, sl->ids);
	if (take < 0 || take > hit)
		take = hit;
	for (int64_t j = 0; j < take; j++)
		kvcache_take(&d->kv, sl->ids[j]);
	assert_int_equal(kvr_take(&d->kr, &sl->rq, sl->h, take), 0);
	sl->n_blocks = sl->n_reg = take;
	sl->active = true;
}

/* false if too few blocks (and then neither changed) */
static bool grow(struct duo *d, int i, int64_t m)
{
	struct slot *sl = &d->s[i];
	if ((d->kv.total_blocks - d->kv.touched) + d->kv.free_len < m) {
		int64_t before = kvr_available(&d->kr);
		assert_int_equal(kvr_alloc(&d->kr, &sl->rq, m), DIAG_EINPUT);
		assert_int_equal(kvr_available(&d->kr), before);
		return false;
	}
	for (int64_t j = 0; j < m; j++) {
		int32_t b = kvcache_alloc(&d->kv);
		assert_true(b >= 0);
		sl->ids[sl->n_blocks++] = b;
	}
	assert_int_equal(kvr_alloc(&d->kr, &sl->rq, m), 0);
	return true;
}

static void enter(struct duo *d, int i, int64_t upto)
{
	struct slot *sl = &d->s[i];
	for (int64_t j = sl->n_reg; j < upto; j++)
		assert_int_equal(kvcache_register(&d->kv, sl->ids[j], sl->h[j]), 0);
	assert_int_equal(kvr_register(&d->kr, &sl->rq, sl->h, upto), 0);
	if (upto > sl->n_reg)
		sl->n_reg = upto;
}

static void finish(struct duo *d, int i)
{
	struct slot *sl = &d->s[i];
	for (int64_t j = sl->n_blocks - 1; j >= 0; j--)
		kvcache_put(&d->kv, sl->ids[j]);
	assert_int_equal(kvr_put(&d->kr, &sl->rq), 0);
	sl->n_blocks = sl->n_reg = 0;
	sl->active = false;
}

static void one_op(struct duo *d, struct rng *r)
{
	int i = (int)below(r, NREQ);
	struct slot *sl = &d->s[i];
	switch (below(r, 10)) {
	case 0: case 1: /* admit a call */
		if (!sl->active) {
			sl->nh = 1 + below(r, MAXPOS);
			make_chain(sl->h, sl->nh, (uint64_t)below(r, 3), below(r, MAXPOS), (uint64_t)below(r, 3));
			/* max_hit leaves the last block to compute, now and then less */
			int64_t n = below(r, 4) ? sl->nh - 1 : below(r, sl->nh + 1);
			admit(d, i, n, below(r, 3) ? -1 : below(r, n + 1));
		}
		break;
	case 2: case 3: /* a chunk or decode blocks */
		if (sl->active && sl->n_blocks < MAXBLK) {
			int64_t m = 1 + below(r, 12);
			if (m > MAXBLK - sl->n_blocks)
				m = MAXBLK - sl->n_blocks;
			grow(d, i, m);
		}
		break;
	case 4: case 5: { /* enter what is computed */
		int64_t cap = sl->n_blocks < sl->nh ? sl->n_blocks : sl->nh;
		if (sl->active && cap > sl->n_reg)
			enter(d, i, sl->n_reg + 1 + below(r, cap - sl->n_reg));
		break;
	}
	case 6: case 7: /* finish or preempt */
		if (sl->active)
			finish(d, i);
		break;
	case 8: { /* look-ups: a random chain */
		uint64_t h[MAXPOS];
		int32_t ids[MAXPOS];
		int64_t n = 1 + below(r, MAXPOS);
		make_chain(h, n, (uint64_t)below(r, 3), below(r, MAXPOS), (uint64_t)below(r, 3));
		same_match(d, h, n, ids);
		same_counts(d, r);
		break;
	}
	default: { /* a restart, now and then when nothing is held */
		bool idle = true;
		for (int k = 0; k < NREQ; k++)
			idle &= !d->s[k].active;
		if (idle && below(r, 10) == 0) {
			kvcache_reset(&d->kv);
			kvr_reset(&d->kr);
		}
		break;
	}
	}
}

static void run_case(uint64_t seed, int64_t blocks, int64_t steps, bool caching)
{
	struct duo *d = malloc(sizeof(*d));
	assert_non_null(d);
	duo_init(d, blocks, caching);
	struct rng r = {seed};
	int32_t ids[MAXPOS];
	for (int64_t t = 0; t < steps; t++) {
		one_op(d, &r);
		same_state(d);
		for (int i = 0; i < NREQ; i++)
			if (d->s[i].nh > 0)
				same_match(d, d->s[i].h, d->s[i].nh, ids);
		if (t % 16 == 0)
			same_counts(d, &r);
	}
	for (int i = 0; i < NREQ; i++)
		if (d->s[i].active)
			finish(d, i);
	same_state(d);
	if (caching) { /* the runs exercised what the equivalence is about */
		assert_true(d->kv.evictions > 200);
		assert_true(d->kv.duplicates > 50);
	}
	duo_release(d);
	free(d);
}

static void test_random_small(void **state)
{
	(void)state;
	for (uint64_t seed = 1; seed <= 24; seed++)
		run_case(seed * 7919, 40 + (int64_t)seed * 6, 6000, true);
}

static void test_random_larger(void **state)
{
	(void)state;
	run_case(4242, 300, 30000, true);
}

static void test_without_prefix_caching(void **state)
{
	(void)state;
	run_case(99, 60, 3000, false);
}

/* Two copies of one chain: the first entered serves hits; once its tail is
 * evicted, the second serves those positions. */
static void test_duplicate_copies(void **state)
{
	(void)state;
	struct duo d;
	duo_init(&d, 20, true);
	make_chain(d.s[0].h, 8, 0, 8, 0);
	memcpy(d.s[1].h, d.s[0].h, sizeof(d.s[0].h));
	memcpy(d.s[2].h, d.s[0].h, sizeof(d.s[0].h));
	admit(&d, 0, 8, -1);
	admit(&d, 1, 8, -1);
	assert_true(grow(&d, 0, 8));
	assert_true(grow(&d, 1, 8));
	enter(&d, 0, 8);
	enter(&d, 1, 8); /* computed at the same time: a duplicate */
	assert_int_equal(d.kr.duplicates, 8);
	finish(&d, 0); /* stamps 0..7, position 7 oldest */
	finish(&d, 1); /* stamps 8..15 */
	same_state(&d);
	int64_t hit, ev;
	uint64_t mn;
	kvr_match(&d.kr, d.s[2].h, 8, &hit, &ev, &mn);
	assert_int_equal(hit, 8);
	assert_int_equal(ev, 8);
	assert_int_equal(mn, 0); /* the first copy serves */
	assert_true(grow(&d, 3, 4)); /* never-used blocks: nothing evicted */
	assert_int_equal(d.kr.evictions, 0);
	assert_true(grow(&d, 3, 3)); /* the first copy's positions 7, 6, 5 */
	assert_int_equal(d.kr.evictions, 3);
	same_state(&d);
	kvr_match(&d.kr, d.s[2].h, 8, &hit, &ev, &mn);
	assert_int_equal(hit, 8);
	assert_int_equal(mn, 3); /* first copy's position 4; the second's 7 is 8 */
	admit(&d, 2, 8, -1);
	same_state(&d);
	finish(&d, 2);
	finish(&d, 3);
	same_state(&d);
	duo_release(&d);
}

/* A take that ends inside a free run leaves the run's tail, oldest
 * stamps, at the head of the queue. */
static void test_take_inside_free_run(void **state)
{
	(void)state;
	struct duo d;
	duo_init(&d, 12, true);
	make_chain(d.s[0].h, 10, 1, 10, 0);
	memcpy(d.s[1].h, d.s[0].h, sizeof(d.s[0].h));
	admit(&d, 0, 10, -1);
	assert_true(grow(&d, 0, 10));
	enter(&d, 0, 10);
	finish(&d, 0); /* position p has stamp 9 - p */
	int64_t hit, ev;
	uint64_t mn;
	kvr_match(&d.kr, d.s[1].h, 4, &hit, &ev, &mn);
	assert_int_equal(hit, 4);
	assert_int_equal(ev, 4);
	assert_int_equal(mn, 6);
	admit(&d, 1, 4, -1);
	same_state(&d);
	assert_int_equal(d.kr.qhead->stamp, 0);
	assert_int_equal(kvr_seg_len(d.kr.qhead), 6);
	/* 2 never used, then stamps 0..5 */
	assert_int_equal(kvr_allocs_before(&d.kr, 6, 100), 8);
	assert_int_equal(kvr_allocs_before(&d.kr, 3, 100), 5);
	assert_true(grow(&d, 1, 5)); /* 2 fresh, then positions 9, 8, 7 */
	assert_int_equal(d.kr.evictions, 3);
	kvr_match(&d.kr, d.s[0].h, 10, &hit, &ev, &mn);
	assert_int_equal(hit, 7);
	same_state(&d);
	finish(&d, 1);
	same_state(&d);
	duo_release(&d);
}

/* Evicting the tail of one layer of a node with two splits the node; the
 * holder of the other layer keeps it and releases it tail first. */
static void test_two_layer_eviction(void **state)
{
	(void)state;
	struct duo d;
	duo_init(&d, 24, true);
	make_chain(d.s[0].h, 8, 2, 8, 0);
	memcpy(d.s[1].h, d.s[0].h, sizeof(d.s[0].h));
	admit(&d, 0, 8, -1);
	admit(&d, 1, 8, -1);
	assert_true(grow(&d, 0, 8));
	assert_true(grow(&d, 1, 8));
	enter(&d, 0, 8);
	enter(&d, 1, 8);
	finish(&d, 0); /* the first layer is free; the second held */
	assert_true(grow(&d, 2, 8)); /* the last fresh ones */
	assert_true(grow(&d, 2, 3)); /* positions 7, 6, 5 of the first layer */
	assert_int_equal(d.kr.evictions, 3);
	same_state(&d);
	int64_t hit, ev;
	uint64_t mn;
	kvr_match(&d.kr, d.s[0].h, 8, &hit, &ev, &mn);
	assert_int_equal(hit, 8);
	assert_int_equal(ev, 5); /* positions 0..4 of the first layer */
	assert_int_equal(mn, 3);
	finish(&d, 1); /* its upper part (positions 5..7) first */
	same_state(&d);
	kvr_match(&d.kr, d.s[0].h, 8, &hit, &ev, &mn);
	assert_int_equal(ev, 8);
	assert_int_equal(mn, 3);
	finish(&d, 2);
	same_state(&d);
	duo_release(&d);
}

/* A shared prefix stays in use until its last holder releases it, and
 * then joins the queue after that holder's own tail. */
static void test_release_shared_prefix(void **state)
{
	(void)state;
	struct duo d;
	duo_init(&d, 40, true);
	make_chain(d.s[0].h, 10, 3, 10, 0);
	make_chain(d.s[1].h, 10, 3, 6, 1); /* diverges at position 6 */
	admit(&d, 0, 10, -1);
	assert_true(grow(&d, 0, 10));
	enter(&d, 0, 10);
	admit(&d, 1, 10, -1);
	assert_int_equal(d.s[1].n_blocks, 6);
	assert_true(grow(&d, 1, 4));
	enter(&d, 1, 10);
	finish(&d, 0); /* positions 9..6 get stamps 0..3 */
	same_state(&d);
	finish(&d, 1); /* its 6..9 get 4..7, the shared 5..0 get 8..13 */
	same_state(&d);
	int64_t hit, ev;
	uint64_t mn;
	kvr_match(&d.kr, d.s[0].h, 10, &hit, &ev, &mn);
	assert_int_equal(hit, 10);
	assert_int_equal(mn, 0);
	kvr_match(&d.kr, d.s[1].h, 6, &hit, &ev, &mn);
	assert_int_equal(mn, 8);
	assert_int_equal(d.kr.stamp_next, 14);
	duo_release(&d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_duplicate_copies),
		cmocka_unit_test(test_take_inside_free_run),
		cmocka_unit_test(test_two_layer_eviction),
		cmocka_unit_test(test_release_shared_prefix),
		cmocka_unit_test(test_random_small),
		cmocka_unit_test(test_random_larger),
		cmocka_unit_test(test_without_prefix_caching),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
