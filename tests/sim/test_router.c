/* SPDX-License-Identifier: Apache-2.0
 * Tests of the routers that follow a named system (sim/router.h):
 *   - a burst of groups sharing a 2,048-token prefix, arriving together, is
 *     routed by prefix under sglang_smg_v1.9_approx (the approximate tree
 *     records each call when it is routed) and not under prefix_aware or
 *     sglang_smg_v1.9_exact, which read the replicas' caches, still empty
 *     while the first calls wait for their prefill;
 *   - the approximate tree is never told of evictions: a replica's emptied
 *     cache still attracts the calls recorded there;
 *   - llm-d: each scorer by hand (prefix share, normalised waiting queue,
 *     free KV share, their weights), the queue and KV usage read as last
 *     scraped (a change shows only after the next scrape tick), the
 *     approximate index's 64-token blocks with the partial last block
 *     counted, and ties drawn from the seeded stream: the same seed, the
 *     same picks; another seed, other picks; every tied replica drawn;
 *   - Dynamo: costs computed by hand (prefill blocks of the held calls until
 *     their first token and of the uncached part of the prompt, plus
 *     distinct decode blocks), the lowest wins; temperature 0 always picks
 *     it, temperature above 0 draws every replica sometimes, the cheapest
 *     most often, the same draws for the same seed;
 *   - router_describe never cuts a setting in two.
 * Replicas here are real (sim/replica.h) with hand-filled prefix tables;
 * the router's load counters are set by hand where a case needs them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "base/hash.h"
#include "sim/kvcache.h"
#include "sim/kvruns.h"
#include "sim/replica.h"
#include "sim/router.h"
#include "sim/sim.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* a + b x new tokens, per step */
struct lin {
	double a, b;
};

static double lin_step(const void *ctx, const struct perf_batch *pb)
{
	const struct lin *l = ctx;
	return l->a + l->b * (double)pb->new_tokens;
}

static double lin_run(const void *ctx, const struct perf_batch *b0, int64_t k)
{
	return (double)k * lin_step(ctx, b0);
}

static struct sim_perf lin_perf(const struct lin *l)
{
	struct sim_perf p = {.ctx = l, .step_ns = lin_step, .decode_run_ns = lin_run};
	return p;
}

static struct engine_config cfg_cached(void)
{
	struct engine_config cfg = {
		.max_num_seqs = 64,
		.max_num_batched_tokens = 8192,
		.block_size = 16,
		.gpu_memory_utilization = 0.9,
		.enable_chunked_prefill = true,
		.enable_prefix_caching = true,
		.kv_cache_tokens = 16 * 4096,
		.max_model_len = 1 << 20,
	};
	return cfg;
}

/* A chain of `blocks` hashes whose first `shared` blocks are family fam's,
 * the rest the call's own (uniq). */
static void family_hashes(uint64_t *h, int64_t blocks, uint64_t fam, uint64_t uniq, int64_t shared)
{
	uint64_t x = 1;
	for (int64_t j = 0; j < blocks; j++) {
		x = hash_combine(x, j < shared ? fam : uniq);
		h[j] = x;
	}
}

/* Cache n leading blocks of h in rep's prefix table (freed at once, so
 * they stay cached and findable). */
static void cache_prefix(struct replica *rep, const uint64_t *h, int64_t n)
{
	if (rep->runs) {
		struct kvr_req r;
		kvr_req_init(&r);
		int64_t hit = 0;
		kvr_match(&rep->kr, h, n, &hit, NULL, NULL);
		assert_int_equal(kvr_take(&rep->kr, &r, h, hit), 0);
		assert_int_equal(kvr_alloc(&rep->kr, &r, n - hit), 0);
		assert_int_equal(kvr_register(&rep->kr, &r, h, n), 0);
		assert_int_equal(kvr_put(&rep->kr, &r), 0);
		kvr_req_release(&r);
		return;
	}
	for (int64_t j = 0; j < n; j++) {
		int32_t b = kvcache_alloc(&rep->kv);
		assert_true(b >= 0);
		assert_int_equal(kvcache_register(&rep->kv, b, h[j]), 0);
		kvcache_put(&rep->kv, b);
	}
}

/* n replicas of cfg, ready for a router built by hand. */
static void reps_init(struct replica *reps, int n, const struct engine_config *cfg,
		      const struct sim_perf *perf)
{
	struct diag d;
	diag_init(&d);
	for (int i = 0; i < n; i++)
		assert_int_equal(replica_init(&reps[i], i, 0, cfg, perf, &d), 0);
}

static void reps_release(struct replica *reps, int n)
{
	for (int i = 0; i < n; i++)
		replica_release(&reps[i]);
}

static struct sreq call_of(const uint64_t *h, int64_t blocks, int64_t tokens)
{
	struct sreq r = {.call = {.prompt_tokens = tokens, .output_tokens = 1,
				  .block_hashes = h, .n_hashes = blocks},
			 .pools_ok = 1};
	return r;
}

/* ---- the burst ---- */

#define GROUPS 8
#define PER_GROUP 4
#define PREFIX_BLOCKS 128  /* 2,048 tokens */
#define CALL_BLOCKS 160    /* the prefix + 512 tokens of its own */

struct burst_rec {
	int32_t replica[GROUPS * PER_GROUP];
	int done;
};

static void burst_req(void *ctx, const struct res_request *r)
{
	struct burst_rec *b = ctx;
	assert_int_equal(r->status, RES_COMPLETED);
	assert_true(r->seq >= 0 && r->seq < GROUPS * PER_GROUP);
	b->replica[r->seq] = r->replica;
	b->done++;
}

/* Replay the burst on 4 replicas under policy p: every call arrives at
 * t = 0, group by group.  Returns the calls routed for their prefix. */
static int64_t burst(enum router_policy p, struct burst_rec *out)
{
	struct lin l = {.a = 1e5, .b = 1e3};
	struct engine_config cfg = cfg_cached();
	struct router_config rc;
	router_config_default(&rc);
	rc.policy = p;
	static uint64_t h[GROUPS * PER_GROUP][CALL_BLOCKS];
	memset(out, 0, sizeof(*out));
	struct sim s;
	struct diag d;
	diag_init(&d);
	struct res_sink sink = {.ctx = out, .request = burst_req};
	assert_int_equal(sim_init(&s, &cfg, 4, lin_perf(&l), sink, NULL, NULL, &d), 0);
	assert_int_equal(sim_set_router(&s, &rc, &d), 0);
	for (int i = 0; i < GROUPS * PER_GROUP; i++) {
		family_hashes(h[i], CALL_BLOCKS, 0x100 + (uint64_t)(i / PER_GROUP), 0x9000 + (uint64_t)i,
			      PREFIX_BLOCKS);
		struct sim_call c = {.seq = i, .prompt_tokens = CALL_BLOCKS * 16, .output_tokens = 8,
				     .block_hashes = h[i], .n_hashes = CALL_BLOCKS};
		assert_int_equal(sim_submit(&s, &c, 0, &d), 0);
	}
	int rc2;
	while ((rc2 = sim_step(&s, &d)) == 1)
		;
	if (rc2 != 0)
		fail_msg("%s", d.msg);
	assert_int_equal(sim_check_end(&s, &d), 0);
	assert_int_equal(out->done, GROUPS * PER_GROUP);
	int64_t matched = s.router.stats.prefix_matched;
	sim_release(&s);
	return matched;
}

/* Groups whose calls all went to one replica. */
static int whole_groups(const struct burst_rec *b)
{
	int whole = 0;
	for (int g = 0; g < GROUPS; g++) {
		bool same = true;
		for (int k = 1; k < PER_GROUP; k++)
			same = same && b->replica[g * PER_GROUP + k] == b->replica[g * PER_GROUP];
		whole += same;
	}
	return whole;
}

/* Issue #33's case: groups sharing a 2,048-token prefix arrive together.
 * The SGLang gateway's approximate tree holds each group's first call as
 * soon as it is routed, so the group's other calls follow it (three of
 * each group's four calls are routed for their prefix, and the four
 * replicas get two groups each); reading the replicas' caches instead
 * (prefix_aware, or the gateway's event-driven mode) finds nothing cached
 * yet and spreads every group by load.  Were the tree recorded later than
 * the routing (at the first token, say), the approximate policy would
 * spread them too and this test would fail. */
static void test_burst_routed_by_prefix(void **state)
{
	(void)state;
	struct burst_rec b;
	int64_t matched = burst(ROUTER_SGLANG_APPROX, &b);
	assert_int_equal(matched, GROUPS * (PER_GROUP - 1));
	assert_int_equal(whole_groups(&b), GROUPS);
	int per[4] = {0};
	for (int g = 0; g < GROUPS; g++)
		per[b.replica[g * PER_GROUP]]++;
	for (int i = 0; i < 4; i++)
		assert_int_equal(per[i], GROUPS / 4);

	/* the old exact-table policy: 0 calls for their cached prefix */
	matched = burst(ROUTER_PREFIX_AWARE, &b);
	assert_int_equal(matched, 0);
	assert_int_equal(whole_groups(&b), 0);
	matched = burst(ROUTER_SGLANG_EXACT, &b);
	assert_int_equal(matched, 0);
	assert_int_equal(whole_groups(&b), 0);
	/* llm-d's approximate index is recorded when a call is sent too */
	matched = burst(ROUTER_LLMD_APPROX, &b);
	assert_true(matched >= GROUPS * (PER_GROUP - 1) / 2);
}

/* The approximate tree is never told of evictions: replica 1's cache is
 * emptied after a call was routed there, and the next call of its family
 * still goes there; the event-driven mode, reading the cache, sends it to
 * the least loaded replica instead. */
static void test_approx_tree_is_not_told_of_evictions(void **state)
{
	(void)state;
	struct engine_config cfg = cfg_cached();
	struct lin l = {.a = 1e5};
	struct sim_perf perf = lin_perf(&l);
	struct replica reps[3];
	reps_init(reps, 3, &cfg, &perf);
	uint64_t h[40], h2[40];
	family_hashes(h, 40, 0xA, 1, 30);
	family_hashes(h2, 40, 0xA, 2, 30);
	struct diag d;
	diag_init(&d);
	for (int exact = 0; exact < 2; exact++) {
		struct router_config rc;
		router_config_default(&rc);
		rc.policy = exact ? ROUTER_SGLANG_EXACT : ROUTER_SGLANG_APPROX;
		struct router rt;
		assert_int_equal(router_init(&rt, &rc, 3, 64, reps, &d), 0);
		struct sreq r = call_of(h, 40, 40 * 16), r2 = call_of(h2, 40, 40 * 16);
		/* the first call goes where the least loaded is: 1 */
		rt.sent[0] = 1;
		assert_int_equal(router_pick(&rt, &r, reps), 1);
		assert_int_equal(router_sent(&rt, 1, &r), 0);
		cache_prefix(&reps[1], h, 40); /* served: cached there */
		router_done(&rt, 1, &r);
		replica_kv_reset(&reps[1]);    /* and evicted */
		/* 30 of 40 blocks shared: 0.75 > 0.3, recorded on 1 */
		int32_t want = exact ? 2 : 1;  /* exact: nothing cached, the lightest (2) */
		assert_int_equal(router_pick(&rt, &r2, reps), want);
		assert_int_equal(rt.stats.prefix_matched, exact ? 0 : 1);
		router_release(&rt);
	}
	reps_release(reps, 3);
}

/* ---- llm-d ---- */

/* Hold n unhashed blocks on rep (KV usage), released by the caller. */
struct held {
	struct kvr_req r;
	int32_t b[64];
	int64_t n;
};

static void hold_blocks(struct replica *rep, struct held *x, int64_t n)
{
	memset(x, 0, sizeof(*x));
	x->n = n;
	if (rep->runs) {
		kvr_req_init(&x->r);
		assert_int_equal(kvr_alloc(&rep->kr, &x->r, n), 0);
		return;
	}
	assert_true(n <= 64);
	for (int64_t j = 0; j < n; j++)
		assert_true((x->b[j] = kvcache_alloc(&rep->kv)) >= 0);
}

static void unhold_blocks(struct replica *rep, struct held *x)
{
	if (rep->runs) {
		assert_int_equal(kvr_put(&rep->kr, &x->r), 0);
		kvr_req_release(&x->r);
		return;
	}
	for (int64_t j = 0; j < x->n; j++)
		kvcache_put(&rep->kv, x->b[j]);
}

/* llm-d's precise profile by hand: 3 replicas, a prompt of 40 blocks.
 * Replica 0 holds 20 of them (prefix 0.5), its waiting queue is the
 * longest (4 against 0 and 2: queue 0), replica 1 holds none (queue 1),
 * replica 2 holds 10 (prefix 0.25, queue 0.5).  With no KV in use:
 *   default 3/2/2: 0: 1.5 + 0 + 2 = 3.5, 1: 0 + 2 + 2 = 4, 2: 0.75 + 1 + 2 = 3.75: replica 1;
 *   prefix weight 5: 0: 2.5 + 2 = 4.5, 1: 4, 2: 1.25 + 1 + 2 = 4.25: replica 0;
 *   queue weight 0, prefix 3, kv 2, replica 0 at 0.5 KV usage:
 *     0: 1.5 + 1 = 2.5, 1: 2, 2: 0.75 + 2 = 2.75: replica 2.
 * The queue and the KV usage are as last scraped: a new queue shows only
 * after the next tick of the scrape interval. */
static void test_llmd_scorers_by_hand(void **state)
{
	(void)state;
	struct engine_config cfg = cfg_cached();
	cfg.kv_cache_tokens = 16 * 64; /* 64 blocks: 32 held = 0.5 usage */
	struct lin l = {.a = 1e5};
	struct sim_perf perf = lin_perf(&l);
	struct replica reps[3];
	reps_init(reps, 3, &cfg, &perf);
	uint64_t h[40];
	family_hashes(h, 40, 0xB, 3, 40);
	cache_prefix(&reps[0], h, 20);
	cache_prefix(&reps[2], h, 10);
	struct diag d;
	diag_init(&d);
	struct router_config rc;
	router_config_default(&rc);
	rc.policy = ROUTER_LLMD_PRECISE;
	struct router rt;
	assert_int_equal(router_init(&rt, &rc, 3, 64, reps, &d), 0);
	struct sreq r = call_of(h, 40, 40 * 16);
	int64_t ms = 1000000;

	/* scraped at 0 with every queue empty: prefix decides, replica 0 */
	router_scrape(&rt, 0);
	assert_int_equal(router_pick(&rt, &r, reps), 0);
	reps[0].wq_len = 4;
	reps[2].wq_len = 2;
	/* 49 ms: no tick passed, the router still sees empty queues */
	router_scrape(&rt, 49 * ms);
	assert_int_equal(router_pick(&rt, &r, reps), 0);
	/* 50 ms: scraped, replica 1 */
	router_scrape(&rt, 50 * ms);
	assert_int_equal(router_pick(&rt, &r, reps), 1);
	rt.cfg.prefix_weight = 5;
	assert_int_equal(router_pick(&rt, &r, reps), 0);

	rt.cfg.prefix_weight = 3;
	rt.cfg.queue_weight = 0;
	assert_int_equal(router_pick(&rt, &r, reps), 0); /* 3.5 vs 2 vs 2.75 */
	struct held x;
	hold_blocks(&reps[0], &x, 32);
	assert_int_equal(router_pick(&rt, &r, reps), 0); /* not scraped yet */
	router_scrape(&rt, 100 * ms);
	assert_int_equal(router_pick(&rt, &r, reps), 2);
	unhold_blocks(&reps[0], &x);
	reps[0].wq_len = reps[2].wq_len = 0;

	/* scrape_interval_ms 0: read live */
	router_release(&rt);
	rc.scrape_interval_ms = 0;
	rc.queue_weight = 0;
	assert_int_equal(router_init(&rt, &rc, 3, 64, reps, &d), 0);
	hold_blocks(&reps[0], &x, 32);
	assert_int_equal(router_pick(&rt, &r, reps), 2);
	unhold_blocks(&reps[0], &x);
	router_release(&rt);
	reps_release(reps, 3);
}

/* The approximate index counts 64-token index blocks (4 engine blocks of
 * 16), a partial last one included: a 41-block prompt (656 tokens) is 11
 * index blocks; a call of its family sent to replica 1 recorded its 10
 * whole ones, of which the 5 shared (20 blocks) match: prefix 5/11. */
static void test_llmd_approx_index_blocks(void **state)
{
	(void)state;
	struct engine_config cfg = cfg_cached();
	struct lin l = {.a = 1e5};
	struct sim_perf perf = lin_perf(&l);
	struct replica reps[2];
	reps_init(reps, 2, &cfg, &perf);
	uint64_t a[41], b[41];
	family_hashes(a, 41, 0xC, 4, 20);
	family_hashes(b, 41, 0xC, 5, 20);
	struct diag d;
	diag_init(&d);
	struct router_config rc;
	router_config_default(&rc);
	rc.policy = ROUTER_LLMD_APPROX;
	rc.scrape_interval_ms = 0;
	rc.queue_weight = 0;
	rc.kv_weight = 0;
	struct router rt;
	assert_int_equal(router_init(&rt, &rc, 2, 64, reps, &d), 0);
	assert_int_equal(rt.idx_unit, 4);
	struct sreq ra = call_of(a, 41, 41 * 16), rb = call_of(b, 41, 41 * 16);
	assert_int_equal(router_sent(&rt, 1, &ra), 0);
	assert_int_equal(router_pick(&rt, &rb, reps), 1);
	assert_int_equal(rt.stats.prefix_matched, 1);
	assert_true(fabs(rt.score[1] - 5.0 / 11.0) < 1e-12);
	assert_true(rt.score[0] == 0.0);
	/* 19 shared blocks: 4 whole index blocks */
	family_hashes(b, 41, 0xC, 5, 19);
	for (int j = 0; j < 19; j++)
		assert_true(a[j] == b[j]);
	assert_int_equal(router_pick(&rt, &rb, reps), 1);
	assert_true(fabs(rt.score[1] - 4.0 / 11.0) < 1e-12);
	router_done(&rt, 1, &ra);
	router_release(&rt);
	reps_release(reps, 2);
}

/* Ties under llm-d go to one replica drawn from the seeded stream: with
 * every score equal, 64 picks reach all four replicas, two routers with
 * the same seed pick alike, and another seed picks otherwise. */
static void test_llmd_seeded_ties(void **state)
{
	(void)state;
	struct engine_config cfg = cfg_cached();
	struct lin l = {.a = 1e5};
	struct sim_perf perf = lin_perf(&l);
	struct replica reps[4];
	reps_init(reps, 4, &cfg, &perf);
	uint64_t h[8];
	family_hashes(h, 8, 0xD, 6, 8);
	struct diag d;
	diag_init(&d);
	int32_t pick[3][64];
	for (int run = 0; run < 3; run++) {
		struct router_config rc;
		router_config_default(&rc);
		rc.policy = ROUTER_LLMD_APPROX;
		rc.seed = run < 2 ? 7 : 8;
		struct router rt;
		assert_int_equal(router_init(&rt, &rc, 4, 64, reps, &d), 0);
		struct sreq r = call_of(h, 8, 8 * 16);
		router_scrape(&rt, 0);
		int seen[4] = {0};
		for (int k = 0; k < 64; k++) {
			pick[run][k] = router_pick(&rt, &r, reps);
			assert_true(pick[run][k] >= 0 && pick[run][k] < 4);
			seen[pick[run][k]]++;
		}
		for (int i = 0; i < 4; i++)
			assert_true(seen[i] > 0);
		router_release(&rt);
	}
	assert_memory_equal(pick[0], pick[1], sizeof(pick[0]));
	assert_memory_not_equal(pick[0], pick[2], sizeof(pick[0]));
	reps_release(reps, 4);
}

/* ---- Dynamo ---- */

/* Dynamo's cost by hand, block size 16, a prompt of 40 blocks (640
 * tokens).  Replica 0 caches 30 of its blocks, replica 2 10, replica 1
 * none; nothing is held:
 *   0: 640 - 480 = 160 tokens, 10 prefill blocks + 40 decode = 50;
 *   1: 40 + 40 = 80;  2: 30 + 40 = 70:  replica 0.
 * A 60-block call of another family sent to replica 0 adds its 60
 * uncached prefill blocks and 60 decode blocks: 0 costs 170, replica 2
 * wins at 70.  Its first token ends its prefill: 0 costs 110, still 2.
 * With overlap_weight 0, decode blocks alone: 0: 100, 1: 40, 2: 40, a tie
 * that goes to the replica routed fewer calls: 2 has been sent one, so 1.
 * Once the held call is done, replica 0 is cheapest again. */
static void test_dynamo_cost_by_hand(void **state)
{
	(void)state;
	struct engine_config cfg = cfg_cached();
	struct lin l = {.a = 1e5};
	struct sim_perf perf = lin_perf(&l);
	struct replica reps[3];
	reps_init(reps, 3, &cfg, &perf);
	uint64_t h[40], o[60];
	family_hashes(h, 40, 0xE, 7, 40);
	family_hashes(o, 60, 0xF, 8, 60);
	cache_prefix(&reps[0], h, 30);
	cache_prefix(&reps[2], h, 10);
	struct diag d;
	diag_init(&d);
	struct router_config rc;
	router_config_default(&rc);
	rc.policy = ROUTER_DYNAMO_KV;
	struct router rt;
	assert_int_equal(router_init(&rt, &rc, 3, 64, reps, &d), 0);
	struct sreq r = call_of(h, 40, 40 * 16), other = call_of(o, 60, 60 * 16);
	assert_int_equal(router_pick(&rt, &r, reps), 0);
	assert_true(rt.score[0] == 50 && rt.score[1] == 80 && rt.score[2] == 70);
	assert_int_equal(rt.stats.prefix_matched, 1);

	assert_int_equal(router_sent(&rt, 0, &other), 0);
	assert_int_equal(router_pick(&rt, &r, reps), 2);
	assert_true(rt.score[0] == 170 && rt.score[1] == 80 && rt.score[2] == 70);
	router_first_token(&rt, 0, &other);
	assert_int_equal(router_pick(&rt, &r, reps), 2);
	assert_true(rt.score[0] == 110);
	/* a second first token changes nothing */
	router_first_token(&rt, 0, &other);
	assert_true(rt.act_prefill[0] == 0);

	rt.cfg.overlap_weight = 0;
	rt.sent[2] = 1;
	assert_int_equal(router_pick(&rt, &r, reps), 1);
	assert_true(rt.score[0] == 100 && rt.score[1] == 40 && rt.score[2] == 40);
	rt.cfg.overlap_weight = 1;

	router_done(&rt, 0, &other);
	assert_int_equal(kvr_used(&rt.idx[0]), 0);
	assert_int_equal(router_pick(&rt, &r, reps), 0);
	assert_true(rt.score[0] == 50);
	kvr_req_release(&other.rt_act);
	router_release(&rt);
	reps_release(reps, 3);
}

/* Calls sharing blocks count them once in a replica's decode blocks: two
 * calls of one 40-block family, 30 blocks shared, held on replica 0, hold
 * 50 distinct blocks; a third call of the family adds its 10 own. */
static void test_dynamo_distinct_blocks(void **state)
{
	(void)state;
	struct engine_config cfg = cfg_cached();
	struct lin l = {.a = 1e5};
	struct sim_perf perf = lin_perf(&l);
	struct replica reps[2];
	reps_init(reps, 2, &cfg, &perf);
	uint64_t a[40], b[40], c[40];
	family_hashes(a, 40, 0x11, 1, 30);
	family_hashes(b, 40, 0x11, 2, 30);
	family_hashes(c, 40, 0x11, 3, 30);
	struct diag d;
	diag_init(&d);
	struct router_config rc;
	router_config_default(&rc);
	rc.policy = ROUTER_DYNAMO_KV;
	rc.overlap_weight = 0;
	struct router rt;
	assert_int_equal(router_init(&rt, &rc, 2, 64, reps, &d), 0);
	struct sreq ra = call_of(a, 40, 640), rb = call_of(b, 40, 640), r = call_of(c, 40, 640);
	assert_int_equal(router_sent(&rt, 0, &ra), 0);
	assert_int_equal(router_sent(&rt, 0, &rb), 0);
	assert_int_equal(kvr_used(&rt.idx[0]), 50);
	assert_int_equal(router_pick(&rt, &r, reps), 1); /* 60 against 40 */
	assert_true(rt.score[0] == 60 && rt.score[1] == 40);
	router_done(&rt, 0, &ra);
	router_done(&rt, 0, &rb);
	assert_int_equal(kvr_used(&rt.idx[0]), 0);
	kvr_req_release(&ra.rt_act);
	kvr_req_release(&rb.rt_act);
	router_release(&rt);
	reps_release(reps, 2);
}

/* Temperature: 0 always picks the cheapest; above 0 a softmax draw over
 * the normalised costs picks every replica sometimes and the cheapest most
 * often, identically for the same seed and otherwise for another. */
static void test_dynamo_temperature(void **state)
{
	(void)state;
	struct engine_config cfg = cfg_cached();
	struct lin l = {.a = 1e5};
	struct sim_perf perf = lin_perf(&l);
	struct replica reps[3];
	reps_init(reps, 3, &cfg, &perf);
	uint64_t h[40];
	family_hashes(h, 40, 0x12, 9, 40);
	cache_prefix(&reps[0], h, 30); /* costs 50, 80, 70 as above */
	cache_prefix(&reps[2], h, 10);
	struct diag d;
	diag_init(&d);
	struct sreq r = call_of(h, 40, 640);
	int32_t pick[4][200];
	double temps[4] = {0, 1, 1, 1};
	uint64_t seeds[4] = {1, 5, 5, 6};
	for (int run = 0; run < 4; run++) {
		struct router_config rc;
		router_config_default(&rc);
		rc.policy = ROUTER_DYNAMO_KV;
		rc.temperature = temps[run];
		rc.seed = seeds[run];
		struct router rt;
		assert_int_equal(router_init(&rt, &rc, 3, 64, reps, &d), 0);
		int seen[3] = {0};
		for (int k = 0; k < 200; k++) {
			pick[run][k] = router_pick(&rt, &r, reps);
			seen[pick[run][k]]++;
		}
		if (run == 0) {
			assert_int_equal(seen[0], 200);
		} else {
			/* exp(0), exp(-1), exp(-2/3): 0.50, 0.18, 0.26 */
			for (int i = 0; i < 3; i++)
				assert_true(seen[i] > 10);
			assert_true(seen[0] > seen[1] && seen[0] > seen[2]);
		}
		router_release(&rt);
	}
	assert_memory_equal(pick[1], pick[2], sizeof(pick[1]));
	assert_memory_not_equal(pick[1], pick[3], sizeof(pick[1]));
	reps_release(reps, 3);
}

/* ---- reports ---- */

/* router_describe: the policy and its settings, whole; a buffer too small
 * gets the name alone, never half a setting. */
static void test_describe_whole(void **state)
{
	(void)state;
	struct router_config rc;
	router_config_default(&rc);
	char buf[ROUTER_DESCRIBE_MAX];
	assert_int_equal(rc.policy, ROUTER_DEFAULT_POLICY);
	rc.policy = ROUTER_SGLANG_APPROX;
	router_describe(&rc, buf, sizeof(buf));
	assert_string_equal(buf, "sglang_smg_v1.9_approx (cache_threshold 0.3, prefix_load_cap 64, "
				 "balance_rel_threshold 1.5, max_tree_tokens 67108864)");
	rc.policy = ROUTER_LLMD_APPROX;
	rc.max_outstanding = 8;
	router_describe(&rc, buf, sizeof(buf));
	assert_string_equal(buf, "llmd_v0.10_approx (prefix_weight 3, queue_weight 2, kv_weight 2, "
				 "scrape_interval_ms 50); max_outstanding 8");
	rc.policy = ROUTER_DYNAMO_KV;
	rc.max_outstanding = 0;
	router_describe(&rc, buf, sizeof(buf));
	assert_string_equal(buf, "dynamo_v1.0_kv (overlap_weight 1, temperature 0)");
	rc.policy = ROUTER_ROUND_ROBIN;
	router_describe(&rc, buf, sizeof(buf));
	assert_string_equal(buf, "round_robin");
	rc.policy = ROUTER_DYNAMO_KV;
	router_describe(&rc, buf, 20);
	assert_string_equal(buf, "dynamo_v1.0_kv");
	router_describe(&rc, buf, 8);
	assert_string_equal(buf, "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_burst_routed_by_prefix),
		cmocka_unit_test(test_approx_tree_is_not_told_of_evictions),
		cmocka_unit_test(test_llmd_scorers_by_hand),
		cmocka_unit_test(test_llmd_approx_index_blocks),
		cmocka_unit_test(test_llmd_seeded_ties),
		cmocka_unit_test(test_dynamo_cost_by_hand),
		cmocka_unit_test(test_dynamo_distinct_blocks),
		cmocka_unit_test(test_dynamo_temperature),
		cmocka_unit_test(test_describe_whole),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
