/* SPDX-License-Identifier: Apache-2.0
 * Priority scheduling (engine_config.sched_priority, vLLM's
 * --scheduling-policy priority) and per-team caps at the router
 * (router_config.team_max_inflight), on cases small enough to work out by
 * hand: a linear step time, a KV cache of a few blocks, calls whose
 * prompts share nothing and prefix caching off, so every figure below
 * follows from the block counts. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "sim/replica.h"
#include "sim/sim.h"

#include <stdlib.h>
#include <string.h>

/* step time 1000 + 10 ns per new token */
static double lin_step(const void *ctx, const struct perf_batch *pb)
{
	(void)ctx;
	return 1000.0 + 10.0 * (double)pb->new_tokens;
}

static double lin_run(const void *ctx, const struct perf_batch *b0, int64_t k)
{
	(void)ctx;
	return (double)k * (1000.0 + 10.0 * (double)b0->new_tokens);
}

#define MAXREC 64
struct col {
	struct res_request rec[MAXREC];
	int n;
};

static void col_req(void *ctx, const struct res_request *r)
{
	struct col *c = ctx;
	assert_true(c->n < MAXREC);
	c->rec[c->n++] = *r;
}

struct harness {
	struct sim s;
	struct col col;
	struct diag d;
};

/* One replica of kv_blocks blocks of 16 tokens, prefix caching off; the
 * router capped at team_cap calls per team (0: none) over `replicas`. */
static struct harness *h_new(int64_t kv_blocks, bool priority, int32_t replicas, int64_t team_cap,
			     int32_t max_num_seqs)
{
	struct harness *h = calloc(1, sizeof(*h));
	assert_non_null(h);
	diag_init(&h->d);
	struct engine_config cfg = {
		.max_num_seqs = max_num_seqs,
		.max_num_batched_tokens = 2048,
		.block_size = 16,
		.gpu_memory_utilization = 0.9,
		.enable_chunked_prefill = true,
		.enable_prefix_caching = false,
		.kv_cache_tokens = 16 * kv_blocks,
		.max_model_len = 1 << 20,
		.sched_priority = priority,
	};
	struct sim_perf p = {.step_ns = lin_step, .decode_run_ns = lin_run};
	struct res_sink sink = {.ctx = &h->col, .request = col_req};
	assert_int_equal(sim_init(&h->s, &cfg, replicas, p, sink, NULL, NULL, &h->d), 0);
	struct router_config rc;
	router_config_default(&rc);
	rc.policy = ROUTER_LEAST_REQUESTS;
	rc.team_max_inflight = team_cap;
	assert_int_equal(sim_set_router(&h->s, &rc, &h->d), 0);
	return h;
}

/* Call `id` (its session id) of `prompt` + `out` tokens, blocks its own. */
static void h_submit(struct harness *h, int64_t t_ns, uint64_t id, int64_t prompt, int64_t out,
		     int32_t prio, int32_t team)
{
	uint64_t hs[64];
	int64_t n = (prompt + out) / 16;
	assert_true(n <= 64);
	for (int64_t j = 0; j < n; j++)
		hs[j] = id * 1000 + (uint64_t)j + 1;
	struct sim_call c = {.session = id, .prompt_tokens = prompt, .output_tokens = out,
			     .block_hashes = hs, .n_hashes = n, .prio = prio, .team = team};
	assert_int_equal(sim_submit(&h->s, &c, t_ns, &h->d), 0);
}

static void h_run(struct harness *h)
{
	int rc;
	while ((rc = sim_step(&h->s, &h->d)) == 1)
		;
	assert_int_equal(rc, 0);
	assert_int_equal(sim_check_end(&h->s, &h->d), 0);
}

static const struct res_request *rec_of(const struct harness *h, uint64_t id)
{
	for (int i = 0; i < h->col.n; i++)
		if (h->col.rec[i].session == id)
			return &h->col.rec[i];
	fail_msg("no record of call %llu", (unsigned long long)id);
	return NULL;
}

/* Two calls of 32 + 40 tokens (5 blocks each at the end: 71 positions)
 * on a cache of 8 blocks: low (class 1) arrives at 0, high (class 0) at
 * 1 ns, both are admitted, and they decode in step until low needs its 5th
 * block with high holding 4.  fcfs preempts the most recently admitted,
 * high; priority preempts the largest (class, arrival), low itself, and
 * high runs on.  Either way the victim waits until the other has finished
 * (it needs 5 blocks back, 3 are free), so exactly one preemption, and the
 * victim finishes second. */
static void victim_case(bool priority, uint64_t *first, int32_t *pre_low, int32_t *pre_high)
{
	struct harness *h = h_new(8, priority, 1, 0, 256);
	h_submit(h, 0, 1, 32, 40, 1, 0); /* low */
	h_submit(h, 1, 2, 32, 40, 0, 0); /* high */
	h_run(h);
	assert_int_equal(h->col.n, 2);
	const struct res_request *lo = rec_of(h, 1), *hi = rec_of(h, 2);
	assert_int_equal(lo->status, RES_COMPLETED);
	assert_int_equal(hi->status, RES_COMPLETED);
	*first = lo->done_ns < hi->done_ns ? 1 : 2;
	*pre_low = lo->preemptions;
	*pre_high = hi->preemptions;
	assert_int_equal(h->s.stats.preemptions, *pre_low + *pre_high);
	sim_release(&h->s);
	free(h);
}

static void test_preemption_victim(void **state)
{
	(void)state;
	uint64_t first;
	int32_t pl, ph;
	victim_case(false, &first, &pl, &ph);
	assert_int_equal(first, 1); /* fcfs: the later call, high, gave way */
	assert_int_equal(pl, 0);
	assert_int_equal(ph, 1);
	victim_case(true, &first, &pl, &ph);
	assert_int_equal(first, 2); /* priority: low gave way */
	assert_int_equal(pl, 1);
	assert_int_equal(ph, 0);
}

/* The victim under priority may be a request already scheduled in the
 * step: high (class 0) is admitted after low (class 2), so low is first in
 * the running list and schedules its decode before high asks for a block.
 * high then finds none free, and the victim is low, taken back out of the
 * step.  Three calls: mid (class 1) too; low must be the one preempted,
 * mid and high never. */
static void test_victim_taken_out_of_step(void **state)
{
	(void)state;
	struct harness *h = h_new(12, true, 1, 0, 256);
	h_submit(h, 0, 1, 32, 40, 2, 0); /* low */
	h_submit(h, 1, 2, 32, 40, 1, 0); /* mid */
	h_submit(h, 2, 3, 48, 40, 0, 0); /* high: one block more, runs out first */
	h_run(h);
	assert_int_equal(h->col.n, 3);
	assert_true(rec_of(h, 1)->preemptions >= 1);
	assert_int_equal(rec_of(h, 2)->preemptions, 0);
	assert_int_equal(rec_of(h, 3)->preemptions, 0);
	assert_true(rec_of(h, 3)->done_ns < rec_of(h, 1)->done_ns);
	sim_release(&h->s);
	free(h);
}

/* Waiting order: one sequence slot; A (class 1) runs from 0; B (class 1)
 * at 1 ns, C (class 0) at 2 ns, D (class 0) at 3 ns wait.  fcfs admits B,
 * C, D; priority admits C, D (class 0, by arrival), then B. */
static void waiting_order(bool priority, uint64_t order[4])
{
	struct harness *h = h_new(64, priority, 1, 0, 1);
	h_submit(h, 0, 1, 32, 8, 1, 0);
	h_submit(h, 1, 2, 32, 8, 1, 0);
	h_submit(h, 2, 3, 32, 8, 0, 0);
	h_submit(h, 3, 4, 32, 8, 0, 0);
	h_run(h);
	assert_int_equal(h->col.n, 4);
	for (int i = 0; i < 4; i++)
		order[i] = h->col.rec[i].session; /* records come in completion order */
	for (int i = 0; i < 4; i++)
		assert_int_equal(h->col.rec[i].preemptions, 0);
	sim_release(&h->s);
	free(h);
}

static void test_waiting_order(void **state)
{
	(void)state;
	uint64_t o[4];
	waiting_order(false, o);
	assert_int_equal(o[0], 1);
	assert_int_equal(o[1], 2);
	assert_int_equal(o[2], 3);
	assert_int_equal(o[3], 4);
	waiting_order(true, o);
	assert_int_equal(o[0], 1);
	assert_int_equal(o[1], 3);
	assert_int_equal(o[2], 4);
	assert_int_equal(o[3], 2);
}

/* A team over its cap waits at the router while another team's call goes
 * first.  Two replicas, a cap of one call per team: team 1 sends calls 1
 * and 2 at 0 and 1 ns, team 2 call 3 at 2 ns.  Call 1 runs, call 2 waits
 * at the router though replica 1 is idle, call 3 goes to replica 1 at its
 * arrival; call 2 leaves the router when call 1 is done.  Without the cap,
 * call 2 starts at its arrival. */
static void test_team_cap(void **state)
{
	(void)state;
	struct harness *h = h_new(64, false, 2, 1, 256);
	h_submit(h, 0, 1, 32, 8, 0, 1);
	h_submit(h, 1, 2, 32, 8, 0, 1);
	h_submit(h, 2, 3, 32, 8, 0, 2);
	h_run(h);
	const struct res_request *a = rec_of(h, 1), *b = rec_of(h, 2), *c = rec_of(h, 3);
	assert_int_equal(a->dispatched_ns, 0);
	assert_int_equal(c->dispatched_ns, 2);
	assert_int_equal(b->dispatched_ns, a->done_ns);
	assert_int_equal(h->s.router.stats.queued, 1);
	sim_release(&h->s);
	free(h);

	h = h_new(64, false, 2, 0, 256);
	h_submit(h, 0, 1, 32, 8, 0, 1);
	h_submit(h, 1, 2, 32, 8, 0, 1);
	h_submit(h, 2, 3, 32, 8, 0, 2);
	h_run(h);
	assert_int_equal(rec_of(h, 2)->dispatched_ns, 1);
	assert_int_equal(h->s.router.stats.queued, 0);
	sim_release(&h->s);
	free(h);
}

/* Calls that wait at the router for their teams leave it round robin over
 * the teams: one replica of one sequence slot, the router capped at one
 * call per team in the engine; team 1 sends calls 1..3 at 0..2 ns, team 2
 * calls 4..6 at 3..5 ns.  Calls 1 and 4 reach the engine at once (one per
 * team); each finish lets the next team's head go, so they complete
 * 1, 4, 2, 5, 3, 6, where without the cap they complete as they came. */
static void test_team_round_robin(void **state)
{
	(void)state;
	struct harness *h = h_new(64, false, 1, 1, 1);
	for (uint64_t i = 1; i <= 6; i++)
		h_submit(h, (int64_t)i - 1, i, 32, 8, 0, i <= 3 ? 1 : 2);
	h_run(h);
	assert_int_equal(h->col.n, 6);
	const uint64_t want[6] = {1, 4, 2, 5, 3, 6};
	for (int i = 0; i < 6; i++)
		assert_int_equal(h->col.rec[i].session, want[i]);
	assert_int_equal(h->col.rec[0].team, 1);
	assert_int_equal(h->col.rec[1].team, 2);
	sim_release(&h->s);
	free(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_preemption_victim),
		cmocka_unit_test(test_victim_taken_out_of_step),
		cmocka_unit_test(test_waiting_order),
		cmocka_unit_test(test_team_cap),
		cmocka_unit_test(test_team_round_robin),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
