/* SPDX-License-Identifier: Apache-2.0
 * Prefill/decode disaggregation in the simulator (sim_set_pd), by hand.
 *
 * Two pools of one replica each: pool 0 prefills, pool 1 decodes.  Step
 * time = 1,000 ns + 10 ns a new token on both; blocks of 16 tokens; 1,000
 * KV bytes a token; a buffered transfer over a 50 GB/s link costs 29 us +
 * bytes / 50 GB/s. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "sim/sim.h"

#include <math.h>
#include <string.h>

static double step(const void *ctx, const struct perf_batch *pb)
{
	(void)ctx;
	return 1000.0 + 10.0 * (double)pb->new_tokens;
}

static double run(const void *ctx, const struct perf_batch *b0, int64_t k)
{
	return (double)k * step(ctx, b0);
}

struct seen {
	int n;
	struct res_request r[8];
};

static void on_req(void *ctx, const struct res_request *r)
{
	struct seen *s = ctx;
	assert_true(s->n < 8);
	s->r[s->n++] = *r;
}

/* The prefill pool's KV cache, step budget and replicas: kv_tokens 0, the
 * decode replica's (100,000); batch 0, no bound; replicas 0, one. */
static void setup_sim_sized(struct sim *s, struct seen *seen, bool always, bool layerwise,
			    int64_t kv_tokens, int64_t batch, int32_t prefill_replicas)
{
	struct engine_config cfg = {
		.max_num_seqs = 4, .max_num_batched_tokens = 1 << 20, .block_size = 16,
		.gpu_memory_utilization = 0.9, .enable_chunked_prefill = true,
		.enable_prefix_caching = true, .kv_cache_tokens = 100000, .max_model_len = 1 << 20,
	};
	struct sim_perf perf = {.step_ns = step, .decode_run_ns = run};
	struct sim_pool pools[2] = {
		{.cfg = cfg, .perf = perf, .replicas = 1},
		{.cfg = cfg, .perf = perf, .replicas = 1},
	};
	if (kv_tokens > 0)
		pools[0].cfg.kv_cache_tokens = kv_tokens;
	if (batch > 0)
		pools[0].cfg.max_num_batched_tokens = batch;
	if (prefill_replicas > 0)
		pools[0].replicas = prefill_replicas;
	struct res_sink sink = {.ctx = seen, .request = on_req};
	struct diag d;
	diag_init(&d);
	assert_int_equal(sim_init_pools(s, pools, 2, sink, NULL, NULL, &d), 0);
	struct sim_pd_config pd = {
		.prefill_pool = 0, .decode_pool = 1, .always = always, .non_cached_tokens = 16,
		.kv_bytes_per_token = 1000,
		.link = {.id = "test", .gbs = 50, .per_gpu = true, .per_transfer_us = 29},
		.gpus = 1, .layers = 4, .layerwise = layerwise, .buffered = true,
	};
	if (sim_set_pd(s, &pd, &d) != 0)
		fail_msg("%s", d.msg);
}

static void setup_sim(struct sim *s, struct seen *seen, bool always, bool layerwise)
{
	setup_sim_sized(s, seen, always, layerwise, 0, 0, 0);
}

static void run_to_end(struct sim *s)
{
	struct diag d;
	diag_init(&d);
	int rc;
	while ((rc = sim_step(s, &d)) > 0)
		;
	if (rc < 0 || sim_check_end(s, &d) != 0)
		fail_msg("%s", d.msg);
}

static uint64_t hashes[64];

static void submit(struct sim *s, int64_t seq, int64_t t_ns)
{
	struct diag d;
	diag_init(&d);
	for (int i = 0; i < 64; i++)
		hashes[i] = 0x9e3779b97f4a7c15ULL * (uint64_t)(i + 1);
	struct sim_call c = {.seq = seq, .prompt_tokens = 800, .output_tokens = 10,
			     .block_hashes = hashes, .n_hashes = 50};
	assert_int_equal(sim_submit(s, &c, t_ns, &d), 0);
}

/* An 800-token prompt the decode replica lacks goes to the prefill pool:
 * its first token after one 8,000-token-ns step (9,000 ns); its 50 blocks
 * (800,000 bytes) cross in 29,000 + 16,000 ns; the decode replica takes
 * them, computes the first token's KV with token 2 (1,010 ns), then eight
 * steps of one token.  The same prompt again finds every block on the
 * decode replica: 0 uncached tokens, at most the threshold, so it never
 * visits the prefill pool. */
static void test_threshold(void **state)
{
	(void)state;
	struct sim s;
	struct seen seen = {0};
	setup_sim(&s, &seen, false, false);
	submit(&s, 0, 0);
	run_to_end(&s);
	assert_int_equal(seen.n, 1);
	const struct res_request *a = &seen.r[0];
	assert_int_equal(a->status, RES_COMPLETED);
	assert_int_equal(a->replica, 1);
	assert_int_equal(a->first_token_ns, 9000);
	assert_int_equal(a->done_ns, 9000 + 45000 + 1010 + 8 * 1010);
	assert_int_equal(a->cached_prompt_tokens, 0);
	assert_int_equal(s.pd_stats.remote, 1);
	assert_int_equal(s.pd_stats.transfers, 1);
	assert_int_equal(s.pd_stats.blocks, 50);
	assert_true(s.pd_stats.bytes == 800000);
	assert_true(fabs(s.pd_stats.exposed_ns - 45000) < 1e-6);
	int64_t steps = s.stats.steps;
	submit(&s, 1, 100000);
	run_to_end(&s);
	assert_int_equal(seen.n, 2);
	const struct res_request *b = &seen.r[1];
	assert_int_equal(b->replica, 1);
	assert_int_equal(s.pd_stats.remote, 1); /* unchanged */
	assert_int_equal(s.pd_stats.local, 1);
	assert_int_equal(b->cached_prompt_tokens, 800 - 16); /* the last block is recomputed */
	assert_true(s.stats.steps > steps);
	sim_release(&s);
}

/* Always: the second call goes to the prefill pool too, but nothing
 * crosses: the decode replica already holds its 50 blocks. */
static void test_always(void **state)
{
	(void)state;
	struct sim s;
	struct seen seen = {0};
	setup_sim(&s, &seen, true, false);
	submit(&s, 0, 0);
	run_to_end(&s);
	submit(&s, 1, 100000);
	run_to_end(&s);
	assert_int_equal(seen.n, 2);
	assert_int_equal(s.pd_stats.remote, 2);
	assert_int_equal(s.pd_stats.local, 0);
	assert_int_equal(s.pd_stats.transfers, 2);
	assert_int_equal(s.pd_stats.blocks, 50);
	assert_int_equal(seen.r[1].replica, 1);
	sim_release(&s);
}

/* Layer-wise over 4 layers: of a 45,000 ns transfer behind a 9,000 ns
 * prefill, 45,000 - 9,000 x 3/4 = 38,250 ns is waited for. */
static void test_layerwise(void **state)
{
	(void)state;
	struct sim s;
	struct seen seen = {0};
	setup_sim(&s, &seen, false, true);
	submit(&s, 0, 0);
	run_to_end(&s);
	assert_true(fabs(s.pd_stats.exposed_ns - 38250) < 1e-6);
	assert_true(fabs(s.pd_stats.whole_ns - 45000) < 1e-6);
	assert_int_equal(seen.r[0].done_ns, 9000 + 38250 + 1010 + 8 * 1010);
	sim_release(&s);
}

/* Layer-wise after a retry: two prefill replicas (0, 1), the decode
 * replica 2; the prefill computes 100 tokens a step (2,000 ns), so the
 * 800-token prompt takes 8 steps.  Replica 0 fails at 5,000 ns, mid-way
 * (detected at once): the call is sent again to replica 1, prefilled from
 * 5,000 to 21,000 ns, and its transfer overlaps that prefill only:
 * 45,000 - 16,000 x 3/4 = 33,000 ns exposed (counted from its first
 * admission, at 0 on replica 0, it read 45,000 - 21,000 x 3/4 = 29,250). */
static void test_layerwise_after_retry(void **state)
{
	(void)state;
	struct sim s;
	struct seen seen = {0};
	setup_sim_sized(&s, &seen, true, true, 0, 100, 2);
	struct diag d;
	diag_init(&d);
	struct router_config rr;
	router_config_default(&rr);
	rr.policy = ROUTER_ROUND_ROBIN;
	assert_int_equal(sim_set_router(&s, &rr, &d), 0);
	struct elastic_config ec;
	elastic_config_default(&ec);
	struct fault_spec f = {.replica = 0, .at_ns = 5000, .repair_ns = INT64_C(1) << 50};
	ec.faults = &f;
	ec.n_faults = 1;
	ec.detection = FAULT_DETECT_INSTANT;
	ec.seed = 1;
	if (sim_set_elastic(&s, &ec, &d) != 0)
		fail_msg("%s", d.msg);
	submit(&s, 0, 0);
	run_to_end(&s);
	assert_int_equal(seen.n, 1);
	const struct res_request *a = &seen.r[0];
	assert_int_equal(a->status, RES_COMPLETED);
	assert_int_equal(a->retries, 1);
	assert_int_equal(a->replica, 2);
	assert_int_equal(a->first_token_ns, 21000);
	assert_true(fabs(s.pd_stats.whole_ns - 45000) < 1e-6);
	if (fabs(s.pd_stats.exposed_ns - 33000) > 1e-6)
		fail_msg("exposed %.1f ns (expected 33,000)", s.pd_stats.exposed_ns);
	sim_release(&s);
}

/* A per-team cap of one call in flight: a call keeps its team's slot from
 * the prefill replica to the decode replica, so the team's other calls
 * wait at the router and none is stuck behind a slot held in transfer;
 * every call completes, one at a time. */
static void test_team_cap(void **state)
{
	(void)state;
	struct sim s;
	struct seen seen = {0};
	setup_sim(&s, &seen, true, false);
	struct router_config rc;
	router_config_default(&rc);
	rc.team_max_inflight = 1;
	struct diag d;
	diag_init(&d);
	assert_int_equal(sim_set_router(&s, &rc, &d), 0);
	s.router.rr_per_pool = true; /* as sim_set_pd left it */
	for (int k = 0; k < 3; k++) {
		for (int i = 0; i < 64; i++)
			hashes[i] = 0x9e3779b97f4a7c15ULL * (uint64_t)(i + 1 + 100 * k);
		struct sim_call c = {.seq = k, .prompt_tokens = 800, .output_tokens = 10,
				     .block_hashes = hashes, .n_hashes = 50, .session = (uint64_t)k + 1};
		assert_int_equal(sim_submit(&s, &c, 0, &d), 0);
	}
	run_to_end(&s);
	assert_int_equal(seen.n, 3);
	for (int k = 0; k < 3; k++)
		assert_int_equal(seen.r[k].status, RES_COMPLETED);
	/* one at a time: each first token after the one before it finished */
	assert_true(seen.r[1].first_token_ns > seen.r[0].done_ns);
	assert_true(seen.r[2].first_token_ns > seen.r[1].done_ns);
	assert_int_equal(s.router.team_inflight[0], 0);
	sim_release(&s);
}

static void test_bad_config(void **state)
{
	(void)state;
	struct sim s;
	struct seen seen = {0};
	setup_sim(&s, &seen, false, false);
	struct sim_pd_config pd = s.pd;
	pd.decode_pool = 0;
	struct diag d;
	diag_init(&d);
	assert_int_equal(sim_set_pd(&s, &pd, &d), DIAG_EINPUT);
	assert_non_null(strstr(d.msg, "two different pools"));
	sim_release(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_threshold),
		cmocka_unit_test(test_always),
		cmocka_unit_test(test_layerwise),
		cmocka_unit_test(test_layerwise_after_retry),
		cmocka_unit_test(test_team_cap),
		cmocka_unit_test(test_bad_config),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
