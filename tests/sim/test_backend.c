/* SPDX-License-Identifier: Apache-2.0
 * Tests of API backends beside the local replicas (sim/backend.h): an API
 * call's timing is its backend's TTFT and output speed exactly; its prompt
 * cache honours the minimum prefix and the TTL; spill-over keeps a burst's
 * p95 TTFT under the bound that one replica alone misses, and sends the
 * calls that would wait at the router (router.max_outstanding) to the API;
 * while the only replica is down, every call (those it held included) falls
 * back and none is lost, even with no retries allowed; a size rule sends
 * long prompts to the API; without backends nothing changes.
 *
 * Service times come from a linear step model: a + b x new tokens. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "base/hash.h"
#include "sim/backend.h"
#include "sim/lifecycle.h"
#include "sim/sim.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define S (INT64_C(1000000000))
#define MS (INT64_C(1000000))

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
	const struct lin *l = ctx;
	return (double)k * (l->a + l->b * (double)b0->new_tokens);
}

/* 10 ms per step + 50 us per new token: a 4,000-token prefill takes about
 * 210 ms, 200 output tokens about 2 s. */
static const struct lin LIN = {1e7, 5e4};

static struct engine_config cfg_engine(void)
{
	struct engine_config cfg = {
		.max_num_seqs = 8,
		.max_num_batched_tokens = 4096,
		.block_size = 16,
		.gpu_memory_utilization = 0.9,
		.enable_chunked_prefill = true,
		.enable_prefix_caching = true,
		.kv_cache_tokens = 256 * 1024,
		.max_model_len = 64 * 1024,
	};
	return cfg;
}

/* An API at 1 s to the first token and 50 tokens/s, a 1,024-token minimum
 * cacheable prefix and a 300 s TTL. */
static struct hybrid_config hyb_one(void)
{
	struct hybrid_config h;
	hybrid_config_default(&h);
	h.n = 1;
	snprintf(h.b[0].name, sizeof(h.b[0].name), "api");
	h.b[0].ttft_ns = 1e9;
	h.b[0].ns_per_token = 1e9 / 50.0;
	h.b[0].cache_min_tokens = 1024;
	h.b[0].cache_ttl_ns = 300 * S;
	return h;
}

#define MAXREC 4096

struct seen {
	int64_t n, completed, rejected, itl_steps, out_minus_one;
	int64_t by_backend[3];
	int64_t by_route[RES_N_ROUTES];
	double ttft_ms[MAXREC];
	int64_t first_ns[MAXREC], done_ns[MAXREC], arrival_ns[MAXREC], cached[MAXREC];
	int32_t backend[MAXREC];
	uint64_t digest;
};

static void seen_req(void *ctx, const struct res_request *r)
{
	struct seen *a = ctx;
	a->digest = hash_combine(hash_combine(a->digest, (uint64_t)r->done_ns), (uint64_t)r->backend);
	if (r->status != RES_COMPLETED) {
		a->rejected++;
		return;
	}
	a->completed++;
	a->by_backend[r->backend]++;
	a->by_route[r->route]++;
	a->out_minus_one += r->output_tokens - 1;
	if (r->backend)
		assert_int_equal(r->replica, -1);
	if (r->seq >= 0 && r->seq < MAXREC) {
		a->ttft_ms[r->seq] = (double)(r->first_token_ns - r->arrival_ns) / 1e6;
		a->first_ns[r->seq] = r->first_token_ns;
		a->done_ns[r->seq] = r->done_ns;
		a->arrival_ns[r->seq] = r->arrival_ns;
		a->cached[r->seq] = r->cached_prompt_tokens;
		a->backend[r->seq] = r->backend;
	}
	a->n++;
}

static void seen_itl(void *ctx, const struct res_itl_run *r)
{
	struct seen *a = ctx;
	a->itl_steps += r->steps * r->seqs;
}

static void nop_busy(void *ctx, const struct res_busy *b)
{
	(void)ctx;
	(void)b;
}

static void nop_span(void *ctx, const struct res_span *s)
{
	(void)ctx;
	(void)s;
}

static struct res_sink sink_of(struct seen *a)
{
	struct res_sink k = {.ctx = a, .request = seen_req, .itl_run = seen_itl, .busy = nop_busy,
			     .session = nop_span, .task = nop_span};
	return k;
}

/* A call of `prompt` tokens whose first `shared` blocks are common to every
 * call and the rest its own. */
static void submit(struct sim *s, int64_t seq, int64_t t_ns, int64_t prompt, int64_t output,
		   int64_t shared)
{
	int64_t n = (prompt + output) / 16;
	uint64_t *h = malloc((size_t)(n ? n : 1) * sizeof(*h));
	assert_non_null(h);
	for (int64_t j = 0; j < n; j++)
		h[j] = j < shared ? hash_combine(77, (uint64_t)j) : hash_combine(1000 + (uint64_t)seq, (uint64_t)j);
	struct sim_call c = {.seq = seq, .prompt_tokens = prompt, .output_tokens = output,
			     .block_hashes = h, .n_hashes = n};
	struct diag d;
	diag_init(&d);
	assert_int_equal(sim_submit(s, &c, t_ns, &d), 0);
	free(h);
}

static void run_all(struct sim *s)
{
	struct diag d;
	diag_init(&d);
	int rc;
	while ((rc = sim_step(s, &d)) == 1)
		;
	assert_int_equal(rc, 0);
	assert_int_equal(sim_check_end(s, &d), 0);
}

static void mk(struct sim *s, struct seen *a, const struct hybrid_config *h)
{
	struct engine_config cfg = cfg_engine();
	struct sim_perf p = {.ctx = &LIN, .step_ns = lin_step, .decode_run_ns = lin_run};
	struct diag d;
	diag_init(&d);
	memset(a, 0, sizeof(*a));
	assert_int_equal(sim_init(s, &cfg, 1, p, sink_of(a), NULL, NULL, &d), 0);
	if (h)
		assert_int_equal(sim_set_hybrid(s, h, &d), 0);
}

static double p95(const double *x, int64_t n)
{
	double *y = malloc((size_t)n * sizeof(*y));
	assert_non_null(y);
	memcpy(y, x, (size_t)n * sizeof(*y));
	for (int64_t i = 1; i < n; i++)
		for (int64_t j = i; j > 0 && y[j - 1] > y[j]; j--) {
			double t = y[j];
			y[j] = y[j - 1];
			y[j - 1] = t;
		}
	double pos = 0.95 * (double)(n - 1);
	int64_t lo = (int64_t)floor(pos);
	double v = lo + 1 < n ? y[lo] + (pos - (double)lo) * (y[lo + 1] - y[lo]) : y[lo];
	free(y);
	return v;
}

/* The size rule sends a long prompt to the API; its TTFT and E2E are the
 * backend's figures to the nanosecond, its ITLs are all there, and its
 * cache reads only a prefix of 1,024 tokens or more, within the TTL. */
static void test_api_timing_and_cache(void **state)
{
	(void)state;
	struct hybrid_config h = hyb_one();
	h.size_to = 0;
	h.size_prompt_tokens = 100;
	struct sim s;
	struct seen *a = calloc(1, sizeof(*a));
	assert_non_null(a);
	mk(&s, a, &h);
	submit(&s, 0, 0, 4000, 200, 128);       /* writes 250 blocks */
	submit(&s, 1, 10 * S, 4000, 200, 128);  /* shares 128 blocks = 2,048 tokens */
	submit(&s, 2, 20 * S, 4000, 200, 32);   /* shares 32 blocks = 512: below the minimum */
	submit(&s, 3, 20 * S + 400 * S, 4000, 200, 128); /* past the TTL since seq 1 */
	submit(&s, 4, 1000 * S, 50, 10, 0);     /* short: local */
	run_all(&s);
	assert_int_equal(a->completed, 5);
	assert_int_equal(a->by_backend[1], 4);
	assert_int_equal(a->by_route[RES_ROUTE_SIZE], 4);
	assert_int_equal(a->by_backend[0], 1);
	assert_int_equal(a->first_ns[0], 1 * S);
	assert_int_equal(a->done_ns[0], 1 * S + 199 * (S / 50));
	assert_int_equal(a->cached[0], 0);
	assert_int_equal(a->cached[1], 128 * 16);
	assert_int_equal(a->cached[2], 0);
	assert_int_equal(a->cached[3], 0);
	assert_int_equal(a->itl_steps, a->out_minus_one);
	assert_int_equal(s.backends[0].stats.calls, 4);
	sim_release(&s);
	free(a);
}

/* A burst on one replica: 40 calls of 4,000 new tokens, one every 100 ms
 * (each needs about 210 ms of prefill alone).  Alone it queues, and its p95
 * TTFT is far over 2 s; with spill-over at a 2 s predicted TTFT the calls
 * that would wait go to the API (TTFT 1 s) and the p95 is under 2 s.  The
 * same run twice gives the same records. */
static void burst(struct seen *a, const struct hybrid_config *h, uint64_t *digest)
{
	struct sim s;
	mk(&s, a, h);
	for (int64_t i = 0; i < 40; i++)
		submit(&s, i, i * 100 * MS, 4000, 200, 0);
	run_all(&s);
	*digest = a->digest;
	sim_release(&s);
}

static void test_spill_keeps_p95(void **state)
{
	(void)state;
	struct seen *a = calloc(1, sizeof(*a));
	assert_non_null(a);
	uint64_t dg0, dg1, dg2;
	burst(a, NULL, &dg0);
	assert_int_equal(a->completed, 40);
	double alone = p95(a->ttft_ms, 40);
	assert_true(alone > 2000.0);

	struct hybrid_config h = hyb_one();
	h.spill_to = 0;
	h.spill_ttft_ns = 2e9;
	burst(a, &h, &dg1);
	assert_int_equal(a->completed, 40);
	assert_int_equal(a->rejected, 0);
	double mixed = p95(a->ttft_ms, 40);
	assert_true(mixed < 2000.0);
	assert_true(a->by_route[RES_ROUTE_SPILL] > 0);
	assert_true(a->by_backend[0] > 0); /* the replica still serves what it can */
	burst(a, &h, &dg2);
	assert_true(dg1 == dg2);
	assert_true(dg0 != dg1);
	free(a);
}

/* The only replica fails at 5 s for 20 s, with no retries allowed: the
 * calls it held and every call arriving while it is down go to the API;
 * none is lost.  Without a fallback, the calls it held fail. */
static void outage(struct seen *a, const struct hybrid_config *h)
{
	struct sim s;
	mk(&s, a, h);
	struct fault_spec f = {.replica = 0, .at_ns = 5 * S, .repair_ns = 20 * S};
	struct elastic_config el;
	elastic_config_default(&el);
	el.faults = &f;
	el.n_faults = 1;
	el.max_retries = 0;
	struct diag d;
	diag_init(&d);
	assert_int_equal(sim_set_elastic(&s, &el, &d), 0);
	for (int64_t i = 0; i < 60; i++)
		submit(&s, i, i * 500 * MS, 2000, 200, 0);
	run_all(&s);
	sim_release(&s);
}

static void test_fallback_loses_nothing(void **state)
{
	(void)state;
	struct seen *a = calloc(1, sizeof(*a));
	assert_non_null(a);
	outage(a, NULL);
	assert_true(a->rejected > 0);

	struct hybrid_config h = hyb_one();
	h.fallback_to = 0;
	outage(a, &h);
	assert_int_equal(a->rejected, 0);
	assert_int_equal(a->completed, 60);
	assert_true(a->by_route[RES_ROUTE_FALLBACK] >= 40); /* 5 s .. 25 s at 2 per s */
	for (int64_t i = 0; i < 60; i++) {
		bool down = a->arrival_ns[i] >= 5 * S && a->arrival_ns[i] < 25 * S;
		if (down)
			assert_int_equal(a->backend[i], 1);
		else if (a->arrival_ns[i] >= 26 * S) /* repaired and started again */
			assert_int_equal(a->backend[i], 0);
	}
	free(a);
}

/* With router.max_outstanding 2 on the only replica, ten calls arriving
 * together: alone, eight of them wait at the router.  With spill-over to
 * the API on a predicted queue wait over 60 s (a bound the replica's own
 * queue never reaches here), the calls the router would hold go to the API
 * instead: none waits at the router, the two the replica took are served
 * there, and a call arriving once it is free is served locally again. */
static void router_wait(struct seen *a, const struct hybrid_config *h, struct router_stats *rs)
{
	struct sim s;
	mk(&s, a, NULL);
	struct router_config rc;
	router_config_default(&rc);
	rc.max_outstanding = 2;
	struct diag d;
	diag_init(&d);
	assert_int_equal(sim_set_router(&s, &rc, &d), 0);
	if (h)
		assert_int_equal(sim_set_hybrid(&s, h, &d), 0);
	for (int64_t i = 0; i < 10; i++)
		submit(&s, i, i * 10 * MS, 2000, 100, 0);
	submit(&s, 10, 60 * S, 2000, 100, 0);
	run_all(&s);
	*rs = s.router.stats;
	sim_release(&s);
}

static void test_spill_instead_of_router_wait(void **state)
{
	(void)state;
	struct seen *a = calloc(1, sizeof(*a));
	assert_non_null(a);
	struct router_stats rs;
	router_wait(a, NULL, &rs);
	assert_int_equal(a->completed, 11);
	assert_int_equal(rs.queued, 8);

	struct hybrid_config h = hyb_one();
	h.spill_to = 0;
	h.spill_wait_ns = 60e9;
	router_wait(a, &h, &rs);
	assert_int_equal(a->completed, 11);
	assert_int_equal(a->rejected, 0);
	assert_int_equal(rs.queued, 0);
	assert_int_equal(a->by_route[RES_ROUTE_SPILL], 8);
	assert_int_equal(a->by_backend[1], 8);
	assert_int_equal(a->by_backend[0], 3);
	for (int64_t i = 0; i < 11; i++) {
		bool api = i >= 2 && i < 10;
		assert_int_equal(a->backend[i], api ? 1 : 0);
		if (api) /* the API's TTFT, nothing waited before it */
			assert_int_equal(a->first_ns[i] - a->arrival_ns[i], 1 * S);
	}
	free(a);
}

/* Bad settings are input errors; no backends leave the run as it was. */
static void test_config(void **state)
{
	(void)state;
	struct diag d;
	diag_init(&d);
	struct hybrid_config h = hyb_one();
	h.spill_to = 0;
	assert_int_equal(hybrid_config_check(&h, &d), DIAG_EINPUT); /* no bound */
	h = hyb_one();
	h.fallback_to = 1;
	assert_int_equal(hybrid_config_check(&h, &d), DIAG_EINPUT);
	h = hyb_one();
	h.b[0].ns_per_token = 0;
	assert_int_equal(hybrid_config_check(&h, &d), DIAG_EINPUT);
	assert_string_equal(hybrid_route_name(RES_ROUTE_SPILL), "spill");

	struct seen *a = calloc(1, sizeof(*a));
	assert_non_null(a);
	uint64_t dg0, dg1;
	burst(a, NULL, &dg0);
	struct hybrid_config none;
	hybrid_config_default(&none);
	burst(a, &none, &dg1);
	assert_true(dg0 == dg1);
	free(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_api_timing_and_cache),
		cmocka_unit_test(test_spill_keeps_p95),
		cmocka_unit_test(test_spill_instead_of_router_wait),
		cmocka_unit_test(test_fallback_loses_nothing),
		cmocka_unit_test(test_config),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
