/* SPDX-License-Identifier: Apache-2.0
 * Tests of replica pools of different shapes behind one router: each pool's
 * replicas run their own step-time model and KV capacity, the router weighs
 * raw outstanding calls (so the faster pool takes more of them), a call one
 * pool cannot hold goes only to the pools that can, and pools must agree on
 * the block size.
 *
 * Service times come from a test step model: one request per step
 * (max_num_seqs 1), one output token, step time = ns_per_token x prompt. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "sim/sim.h"

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct lin {
	double ns_per_token;
};

static double lin_step(const void *ctx, const struct perf_batch *pb)
{
	const struct lin *l = ctx;
	return 1000.0 + l->ns_per_token * (double)pb->new_tokens;
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

static struct engine_config cfg_one(int64_t kv_tokens)
{
	struct engine_config cfg = {
		.max_num_seqs = 1,
		.max_num_batched_tokens = 1 << 20,
		.block_size = 16,
		.gpu_memory_utilization = 0.9,
		.enable_chunked_prefill = true,
		.enable_prefix_caching = false,
		.kv_cache_tokens = kv_tokens,
		.max_model_len = 1 << 20,
	};
	return cfg;
}

/* Calls completed per replica, rejections and their last reason. */
struct tally {
	int64_t per_replica[16];
	int64_t rejected;
	const char *reason;
};

static void tally_req(void *ctx, const struct res_request *r)
{
	struct tally *t = ctx;
	if (r->status != RES_COMPLETED) {
		t->rejected++;
		t->reason = r->reason;
		return;
	}
	assert_true(r->replica >= 0 && r->replica < 16);
	t->per_replica[r->replica]++;
}

/* n Poisson arrivals at rate lambda/s, prompts of `prompt` tokens (every
 * `big_every`-th call of `big` tokens, 0 = none). */
static void drive(struct sim *s, int64_t n, double lambda, int64_t prompt, int64_t big_every,
		  int64_t big)
{
	struct diag d;
	diag_init(&d);
	gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
	gsl_rng_set(rng, 7);
	double now = 0.0;
	int64_t i = 0, t_next = 0;
	bool have = false;
	for (;;) {
		if (!have && i < n) {
			now += gsl_ran_exponential(rng, 1.0 / lambda);
			t_next = (int64_t)(now * 1e9);
			have = true;
		}
		int64_t t_ev = sim_next_time(s);
		if (have && t_next <= t_ev) {
			int64_t p = big_every > 0 && i % big_every == 0 ? big : prompt;
			struct sim_call c = {.seq = i, .prompt_tokens = p, .output_tokens = 1};
			assert_int_equal(sim_submit(s, &c, t_next, &d), 0);
			i++;
			have = false;
			continue;
		}
		if (t_ev == INT64_MAX)
			break;
		if (sim_step(s, &d) < 0)
			fail_msg("%s", d.msg);
	}
	if (sim_check_end(s, &d) != 0)
		fail_msg("%s", d.msg);
	gsl_rng_free(rng);
}

static int64_t pool_sum(const struct tally *t, const struct sim *s, int32_t p)
{
	int64_t n = 0;
	for (int32_t k = 0; k < s->pools[p].replicas; k++)
		n += t->per_replica[s->pools[p].first + k];
	return n;
}

/* Two replicas three times as fast beside two slow ones, at about 60% of
 * the cluster's capacity: under least_requests the fast pool holds fewer
 * calls at any time, so it takes the larger share; round_robin splits
 * evenly whatever the speeds. */
static void run_two_pools_at(enum router_policy policy, double load, int64_t *fast,
			     int64_t *slow);

static void run_two_pools(enum router_policy policy, int64_t *fast, int64_t *slow)
{
	run_two_pools_at(policy, 0.6, fast, slow);
}

static void run_two_pools_at(enum router_policy policy, double load, int64_t *fast,
			     int64_t *slow)
{
	struct lin lf = {.ns_per_token = 10000.0}, ls = {.ns_per_token = 30000.0};
	struct sim_pool pools[2] = {
		{.cfg = cfg_one(1 << 16), .perf = lin_perf(&ls), .replicas = 2},
		{.cfg = cfg_one(1 << 16), .perf = lin_perf(&lf), .replicas = 2},
	};
	/* 100-token prompts: 1 ms fast, 3 ms slow; capacity 2/1 + 2/3 per ms */
	struct tally t = {0};
	struct res_sink sink = {.ctx = &t, .request = tally_req};
	struct sim s;
	struct diag d;
	diag_init(&d);
	assert_int_equal(sim_init_pools(&s, pools, 2, sink, NULL, NULL, &d), 0);
	assert_int_equal(s.n_replicas, 4);
	assert_int_equal(s.pools[1].first, 2);
	struct router_config rc;
	router_config_default(&rc);
	rc.policy = policy;
	assert_int_equal(sim_set_router(&s, &rc, &d), 0);
	drive(&s, 20000, load * (2.0 / 1e-3 + 2.0 / 3e-3), 100, 0, 0);
	assert_int_equal(t.rejected, 0);
	*slow = pool_sum(&t, &s, 0);
	*fast = pool_sum(&t, &s, 1);
	assert_int_equal(*slow + *fast, 20000);
	sim_release(&s);
}

static void test_faster_pool_takes_more(void **state)
{
	(void)state;
	int64_t fast, slow;
	run_two_pools(ROUTER_LEAST_REQUESTS, &fast, &slow);
	printf("least_requests: fast pool %lld calls, slow pool %lld\n", (long long)fast,
	       (long long)slow);
	assert_true(fast > slow * 3 / 2);
	run_two_pools(ROUTER_ROUND_ROBIN, &fast, &slow);
	printf("round_robin: fast pool %lld calls, slow pool %lld\n", (long long)fast,
	       (long long)slow);
	assert_int_equal(fast, slow);
}

/* least_time weighs the load by speed.  At 5% of capacity the cluster is
 * mostly idle: least_requests breaks its ties by index, so the slow pool
 * (replicas 0 and 1) serves most calls at a third of the speed, while
 * least_time sends every call to a fast replica (an idle fast replica's
 * work, 1 ms, beats an idle slow one's, 3 ms).  At 60% the slow pool's
 * share under least_time stays near its share of the capacity (1/4) and
 * below least_requests'. */
static void test_least_time_weighs_speed(void **state)
{
	(void)state;
	int64_t fast, slow;
	run_two_pools_at(ROUTER_LEAST_REQUESTS, 0.05, &fast, &slow);
	printf("5%%: least_requests: fast %lld, slow %lld\n", (long long)fast, (long long)slow);
	assert_true(slow > fast);
	run_two_pools_at(ROUTER_LEAST_TIME, 0.05, &fast, &slow);
	printf("5%%: least_time: fast %lld, slow %lld\n", (long long)fast, (long long)slow);
	assert_true(slow < 20000 / 100);
	int64_t fast_lr, slow_lr;
	run_two_pools_at(ROUTER_LEAST_REQUESTS, 0.6, &fast_lr, &slow_lr);
	run_two_pools_at(ROUTER_LEAST_TIME, 0.6, &fast, &slow);
	printf("60%%: least_requests slow %lld, least_time slow %lld\n", (long long)slow_lr,
	       (long long)slow);
	assert_true(slow < slow_lr);
	assert_true(slow < 20000 * 3 / 10);
}

/* Pool 0's KV cache holds 1,024 tokens, pool 1's 65,536: a 4,000-token
 * call can only go to pool 1, whatever the policy says; a call neither
 * holds is rejected with pool 0's reason. */
static void test_call_goes_where_it_fits(void **state)
{
	(void)state;
	struct lin l = {.ns_per_token = 1000.0};
	for (int policy = 0; policy < ROUTER_N_POLICIES; policy++) {
		struct sim_pool pools[2] = {
			{.cfg = cfg_one(1024), .perf = lin_perf(&l), .replicas = 3},
			{.cfg = cfg_one(1 << 16), .perf = lin_perf(&l), .replicas = 1},
		};
		struct tally t = {0};
		struct res_sink sink = {.ctx = &t, .request = tally_req};
		struct sim s;
		struct diag d;
		diag_init(&d);
		assert_int_equal(sim_init_pools(&s, pools, 2, sink, NULL, NULL, &d), 0);
		struct router_config rc;
		router_config_default(&rc);
		rc.policy = (enum router_policy)policy;
		assert_int_equal(sim_set_router(&s, &rc, &d), 0);
		/* every fourth call is 4,000 tokens */
		drive(&s, 400, 100.0, 100, 4, 4000);
		assert_int_equal(t.rejected, 0);
		/* 100 big calls on replica 3 (pool 1), and some small ones too */
		assert_true(t.per_replica[3] >= 100);
		assert_int_equal(pool_sum(&t, &s, 0) + pool_sum(&t, &s, 1), 400);
		sim_release(&s);

		diag_init(&d);
		struct tally t2 = {0};
		sink.ctx = &t2;
		pools[1].cfg.kv_cache_tokens = 2048;
		assert_int_equal(sim_init_pools(&s, pools, 2, sink, NULL, NULL, &d), 0);
		assert_int_equal(sim_set_router(&s, &rc, &d), 0);
		drive(&s, 40, 100.0, 100, 4, 4000);
		assert_int_equal(t2.rejected, 10);
		assert_string_equal(t2.reason, "prompt + output need more KV blocks than the cache holds");
		sim_release(&s);
	}
}

/* One chain of block hashes per call: pools must share the block size. */
static void test_pools_share_block_size(void **state)
{
	(void)state;
	struct lin l = {.ns_per_token = 1000.0};
	struct sim_pool pools[2] = {
		{.cfg = cfg_one(1 << 16), .perf = lin_perf(&l), .replicas = 1},
		{.cfg = cfg_one(1 << 16), .perf = lin_perf(&l), .replicas = 1},
	};
	pools[1].cfg.block_size = 32;
	struct sim s;
	struct diag d;
	diag_init(&d);
	struct res_sink sink = {0};
	assert_int_equal(sim_init_pools(&s, pools, 2, sink, NULL, NULL, &d), DIAG_EINPUT);
	assert_string_equal(d.msg, "pools[1]: block size 32 differs from pools[0]'s 16 (expected one "
				   "KV block size for every pool: a call carries one chain of block "
				   "hashes)");
	sim_release(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_faster_pool_takes_more),
		cmocka_unit_test(test_least_time_weighs_speed),
		cmocka_unit_test(test_call_goes_where_it_fits),
		cmocka_unit_test(test_pools_share_block_size),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
