/* SPDX-License-Identifier: Apache-2.0
 * Tests of several replicas behind the router: queueing-theory oracles on
 * workloads built for them (Poisson arrivals, constant or exponential
 * service), round-robin against independent queues, the router's policies,
 * its queue and admission limit, more replicas against the TTFT tail, and
 * tensor parallelism's all-reduce cost in simulated step times.
 *
 * Service times are fixed by a test step model (a struct sim_perf, the same
 * seam the measured-profile override uses): one request per step
 * (max_num_seqs 1), one output token, so a request's service time is the
 * step time of its prefill, and step time = ns_per_token x prompt tokens. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "base/hash.h"
#include "models/catalog.h"
#include "models/perf_model.h"
#include "sim/kvcache.h"
#include "sim/replica.h"
#include "sim/router.h"
#include "sim/sim.h"

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The oracles' size: 10^6 requests and 2% in the ordinary build.  Built
 * with AddressSanitizer (about ten times slower) they run 10^5 requests
 * against a 5% bound: that build is there to check memory, and the 2%
 * figure is held by the other. */
#if defined(__SANITIZE_ADDRESS__)
#define ORACLE_N 100000
#define ORACLE_TOL 0.05
#else
#define ORACLE_N 1000000
#define ORACLE_TOL 0.02
#endif

/* ---- step models ---- */

/* a + b x new tokens + c x KV tokens read, per step */
struct lin {
	double a, b, c;
};

static double lin_step(const void *ctx, const struct perf_batch *pb)
{
	const struct lin *l = ctx;
	return l->a + l->b * (double)pb->new_tokens + l->c * (double)pb->kv_read_tokens;
}

static double lin_run(const void *ctx, const struct perf_batch *b0, int64_t k)
{
	const struct lin *l = ctx;
	double kk = (double)k;
	return kk * (l->a + l->b * (double)b0->new_tokens + l->c * (double)b0->kv_read_tokens) +
	       l->c * (double)b0->seqs * kk * (kk - 1) / 2;
}

static struct sim_perf lin_perf(const struct lin *l)
{
	struct sim_perf p = {.ctx = l, .step_ns = lin_step, .decode_run_ns = lin_run};
	return p;
}

static struct engine_config cfg_queue(void)
{
	/* one request at a time, whole prompt in one step, no prefix reuse */
	struct engine_config cfg = {
		.max_num_seqs = 1,
		.max_num_batched_tokens = 1 << 24,
		.block_size = 16,
		.gpu_memory_utilization = 0.9,
		.enable_chunked_prefill = true,
		.enable_prefix_caching = false,
		.kv_cache_tokens = (int64_t)1 << 26,
		.max_model_len = (int64_t)1 << 26,
	};
	return cfg;
}

/* ---- an aggregating sink ---- */

struct agg {
	int64_t n;
	double wait_ns_sum;   /* first token - arrival - service */
	double ns_per_token;  /* service = ns_per_token x prompt */
	double *ttft_ns;      /* per request by seq, when not NULL */
	double *done_ns;
	int32_t *replica;
	int64_t cap;
	int64_t rejected;
	const char *reason;
};

static void agg_req(void *ctx, const struct res_request *r)
{
	struct agg *a = ctx;
	if (r->status != RES_COMPLETED) {
		a->rejected++;
		a->reason = r->reason;
		return;
	}
	a->n++;
	double service = a->ns_per_token * (double)r->prompt_tokens;
	a->wait_ns_sum += (double)(r->first_token_ns - r->arrival_ns) - service;
	if (a->ttft_ns && r->seq < a->cap) {
		a->ttft_ns[r->seq] = (double)(r->first_token_ns - r->arrival_ns);
		a->done_ns[r->seq] = (double)r->done_ns;
		a->replica[r->seq] = r->replica;
	}
}

static void agg_alloc(struct agg *a, int64_t n)
{
	a->cap = n;
	a->ttft_ns = calloc((size_t)n, sizeof(double));
	a->done_ns = calloc((size_t)n, sizeof(double));
	a->replica = calloc((size_t)n, sizeof(int32_t));
	assert_non_null(a->ttft_ns);
	assert_non_null(a->done_ns);
	assert_non_null(a->replica);
}

static void agg_free(struct agg *a)
{
	free(a->ttft_ns);
	free(a->done_ns);
	free(a->replica);
}

/* ---- an open-loop driver: arrivals fed in time order, no backlog of events ---- */

struct workload {
	int64_t n;
	const int64_t *t_ns;      /* arrival times */
	const int64_t *prompt;    /* prompt tokens */
	const int64_t *output;    /* output tokens, NULL = 1 */
	const int64_t *index;     /* seq to report, NULL = i */
};

static void drive(struct sim *s, const struct workload *w)
{
	struct diag d;
	diag_init(&d);
	int64_t i = 0;
	for (;;) {
		int64_t t_ev = sim_next_time(s);
		if (i < w->n && w->t_ns[i] <= t_ev) {
			struct sim_call c = {.session = 0, .seq = w->index ? w->index[i] : i,
					     .prompt_tokens = w->prompt[i],
					     .output_tokens = w->output ? w->output[i] : 1};
			assert_int_equal(sim_submit(s, &c, w->t_ns[i], &d), 0);
			i++;
			continue;
		}
		if (t_ev == INT64_MAX)
			break;
		int rc = sim_step(s, &d);
		if (rc < 0)
			fail_msg("%s", d.msg);
	}
	if (sim_check_end(s, &d) != 0)
		fail_msg("%s", d.msg);
}

/* Poisson arrivals at rate lambda per second. */
static void poisson_times(gsl_rng *rng, int64_t *t, int64_t n, double lambda)
{
	double now = 0.0;
	for (int64_t i = 0; i < n; i++) {
		now += gsl_ran_exponential(rng, 1.0 / lambda);
		t[i] = (int64_t)llround(now * 1e9);
	}
}

static void run_cluster(const struct engine_config *cfg, int32_t replicas,
			const struct router_config *rc, struct sim_perf perf, struct agg *a,
			const struct workload *w)
{
	struct sim s;
	struct diag d;
	diag_init(&d);
	struct res_sink sink = {.ctx = a, .request = agg_req};
	assert_int_equal(sim_init(&s, cfg, replicas, perf, sink, NULL, NULL, &d), 0);
	if (rc)
		assert_int_equal(sim_set_router(&s, rc, &d), 0);
	drive(&s, w);
	sim_release(&s);
}

/* ---- oracles ---- */

/* One replica, constant service time D, Poisson arrivals: M/D/1.  The
 * Pollaczek-Khinchine mean wait is rho D / (2 (1 - rho)). */
static void test_md1_pollaczek_khinchine(void **state)
{
	(void)state;
	const int64_t n = ORACLE_N;
	const double D_s = 0.010, rho = 0.7, lambda = rho / D_s;
	const int64_t prompt = 100;
	struct lin l = {.b = D_s * 1e9 / (double)prompt};
	int64_t *t = malloc((size_t)n * sizeof(*t)), *p = malloc((size_t)n * sizeof(*p));
	assert_non_null(t);
	assert_non_null(p);
	gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
	gsl_rng_set(rng, 11);
	poisson_times(rng, t, n, lambda);
	for (int64_t i = 0; i < n; i++)
		p[i] = prompt;
	struct engine_config cfg = cfg_queue();
	struct agg a = {.ns_per_token = l.b};
	struct workload w = {.n = n, .t_ns = t, .prompt = p};
	run_cluster(&cfg, 1, NULL, lin_perf(&l), &a, &w);
	assert_int_equal(a.n, n);
	double wq = a.wait_ns_sum / (double)a.n / 1e9;
	double pk = rho * D_s / (2.0 * (1.0 - rho));
	printf("M/D/1 rho %.2f: mean wait %.6f s, Pollaczek-Khinchine %.6f s (%+.2f%%)\n", rho, wq, pk,
	       100.0 * (wq / pk - 1.0));
	assert_true(fabs(wq / pk - 1.0) < ORACLE_TOL);
	gsl_rng_free(rng);
	free(t);
	free(p);
}

/* Erlang C: probability that an arrival waits in M/M/c with offered load a. */
static double erlang_c(int c, double a)
{
	double term = 1.0, sum = 1.0; /* a^k / k! for k = 0 */
	for (int k = 1; k < c; k++) {
		term *= a / k;
		sum += term;
	}
	double last = term * a / c; /* a^c / c! */
	double rho = a / c;
	double top = last / (1.0 - rho);
	return top / (sum + top);
}

/* Exponential prompt lengths: 1 + floor(Exp(m)) tokens, whose mean is
 * 1 + 1 / (e^(1/m) - 1). */
static double geom_mean(double m)
{
	return 1.0 + 1.0 / expm1(1.0 / m);
}

/* c replicas behind least_requests with one call each at a time (the rest
 * wait at the router), exponential service: M/M/c, Erlang C. */
static void test_mmc_erlang_c(void **state)
{
	(void)state;
	const int64_t n = ORACLE_N;
	const int c = 4;
	const double m = 20000.0, S_s = 0.010, rho = 0.7;
	const double mean_tokens = geom_mean(m);
	struct lin l = {.b = S_s * 1e9 / mean_tokens};
	const double lambda = rho * c / S_s;
	int64_t *t = malloc((size_t)n * sizeof(*t)), *p = malloc((size_t)n * sizeof(*p));
	assert_non_null(t);
	assert_non_null(p);
	gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
	gsl_rng_set(rng, 12);
	poisson_times(rng, t, n, lambda);
	for (int64_t i = 0; i < n; i++)
		p[i] = 1 + (int64_t)floor(gsl_ran_exponential(rng, m));
	struct engine_config cfg = cfg_queue();
	struct router_config rc;
	router_config_default(&rc);
	rc.policy = ROUTER_LEAST_REQUESTS;
	rc.max_outstanding = 1;
	struct agg a = {.ns_per_token = l.b};
	struct workload w = {.n = n, .t_ns = t, .prompt = p};
	run_cluster(&cfg, c, &rc, lin_perf(&l), &a, &w);
	assert_int_equal(a.n, n);
	double wq = a.wait_ns_sum / (double)a.n / 1e9;
	double mu = 1.0 / S_s;
	double ec = erlang_c(c, lambda / mu) / (c * mu - lambda);
	printf("M/M/%d rho %.2f: mean wait %.6f s, Erlang C %.6f s (%+.2f%%)\n", c, rho, wq, ec,
	       100.0 * (wq / ec - 1.0));
	assert_true(fabs(wq / ec - 1.0) < ORACLE_TOL);
	gsl_rng_free(rng);
	free(t);
	free(p);
}

/* Round-robin over N replicas is N independent queues, each fed every Nth
 * arrival: every request's first token and completion agree to the
 * nanosecond with N single-replica runs, batching engine and all. */
static void test_round_robin_is_independent_queues(void **state)
{
	(void)state;
	const int64_t n = 30000;
	const int N = 3;
	struct lin l = {.a = 2e6, .b = 2e3, .c = 20};
	int64_t *t = malloc((size_t)n * sizeof(*t)), *p = malloc((size_t)n * sizeof(*p)),
		*o = malloc((size_t)n * sizeof(*o));
	assert_true(t && p && o);
	gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
	gsl_rng_set(rng, 13);
	poisson_times(rng, t, n, 40.0);
	for (int64_t i = 0; i < n; i++) {
		p[i] = 1 + (int64_t)floor(gsl_ran_exponential(rng, 2000.0));
		o[i] = 1 + (int64_t)gsl_rng_uniform_int(rng, 100);
	}
	struct engine_config cfg = cfg_queue();
	cfg.max_num_seqs = 8;
	cfg.max_num_batched_tokens = 4096;
	struct agg all = {0};
	agg_alloc(&all, n);
	struct workload w = {.n = n, .t_ns = t, .prompt = p, .output = o};
	struct router_config rr;
	router_config_default(&rr);
	rr.policy = ROUTER_ROUND_ROBIN;
	run_cluster(&cfg, N, &rr, lin_perf(&l), &all, &w);
	assert_int_equal(all.n, n);

	int64_t *st = malloc((size_t)n * sizeof(*st)), *sp = malloc((size_t)n * sizeof(*sp)),
		*so = malloc((size_t)n * sizeof(*so)), *si = malloc((size_t)n * sizeof(*si));
	assert_true(st && sp && so && si);
	struct agg one = {0};
	agg_alloc(&one, n);
	for (int k = 0; k < N; k++) {
		int64_t m = 0;
		for (int64_t i = k; i < n; i += N, m++) {
			st[m] = t[i];
			sp[m] = p[i];
			so[m] = o[i];
			si[m] = i;
		}
		struct workload wk = {.n = m, .t_ns = st, .prompt = sp, .output = so, .index = si};
		run_cluster(&cfg, 1, NULL, lin_perf(&l), &one, &wk);
	}
	assert_int_equal(one.n, n);
	for (int64_t i = 0; i < n; i++) {
		assert_int_equal(all.replica[i], i % N);
		assert_true(all.ttft_ns[i] == one.ttft_ns[i]);
		assert_true(all.done_ns[i] == one.done_ns[i]);
	}
	agg_free(&all);
	agg_free(&one);
	gsl_rng_free(rng);
	free(t), free(p), free(o), free(st), free(sp), free(so), free(si);
}

/* At fixed load, doubling the replicas lowers the p99 TTFT while requests
 * queue, down to the TTFT of a request served alone. */
static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static void test_doubling_replicas_lowers_p99_ttft(void **state)
{
	(void)state;
	const int64_t n = 20000;
	struct lin l = {.a = 5e6, .b = 5e3, .c = 30};
	int64_t *t = malloc((size_t)n * sizeof(*t)), *p = malloc((size_t)n * sizeof(*p)),
		*o = malloc((size_t)n * sizeof(*o));
	assert_true(t && p && o);
	gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
	gsl_rng_set(rng, 14);
	poisson_times(rng, t, n, 12.0);
	for (int64_t i = 0; i < n; i++) {
		p[i] = 2000;
		o[i] = 200;
	}
	struct engine_config cfg = cfg_queue();
	cfg.max_num_seqs = 16;
	cfg.max_num_batched_tokens = 2048;
	struct router_config rc;
	router_config_default(&rc);
	rc.policy = ROUTER_LEAST_REQUESTS;
	/* a request alone: one prefill step of 2000 tokens */
	double alone = l.a + l.b * 2000 + l.c * 2000;
	double prev = INFINITY;
	bool vanished = false;
	for (int32_t r = 1; r <= 32; r *= 2) {
		struct agg a = {0};
		agg_alloc(&a, n);
		struct workload w = {.n = n, .t_ns = t, .prompt = p, .output = o};
		run_cluster(&cfg, r, &rc, lin_perf(&l), &a, &w);
		qsort(a.ttft_ns, (size_t)n, sizeof(double), cmp_d);
		double p99 = a.ttft_ns[(size_t)(0.99 * (double)(n - 1))];
		printf("%2d replicas: p99 TTFT %.3f ms (alone %.3f ms)\n", r, p99 / 1e6, alone / 1e6);
		if (!vanished) {
			assert_true(p99 < prev);
		} else {
			/* no queue left to remove: it stays at the floor */
			assert_true(p99 <= prev * 1.0001);
		}
		if (p99 < alone * 1.05)
			vanished = true;
		prev = p99;
		agg_free(&a);
	}
	assert_true(vanished);
	gsl_rng_free(rng);
	free(t), free(p), free(o);
}

/* ---- the router's queue and admission limit ---- */

static void test_router_queue_and_admission_limit(void **state)
{
	(void)state;
	struct lin l = {.b = 1e6}; /* 1 ms per token */
	int64_t t[10], p[10];
	for (int i = 0; i < 10; i++) {
		t[i] = 1000;
		p[i] = 10; /* 10 ms each */
	}
	struct engine_config cfg = cfg_queue();
	struct router_config rc;
	router_config_default(&rc);
	rc.policy = ROUTER_LEAST_REQUESTS;
	rc.max_outstanding = 1;
	rc.queue_limit = 3;
	struct agg a = {.ns_per_token = l.b};
	agg_alloc(&a, 10);
	struct sim s;
	struct diag d;
	diag_init(&d);
	struct res_sink sink = {.ctx = &a, .request = agg_req};
	assert_int_equal(sim_init(&s, &cfg, 2, lin_perf(&l), sink, NULL, NULL, &d), 0);
	assert_int_equal(sim_set_router(&s, &rc, &d), 0);
	struct workload w = {.n = 10, .t_ns = t, .prompt = p};
	drive(&s, &w);
	/* two served at once, three wait at the router, five are refused */
	assert_int_equal(a.n, 5);
	assert_int_equal(a.rejected, 5);
	assert_string_equal(a.reason, "router queue full (router.queue_limit)");
	assert_int_equal(s.router.stats.queued, 3);
	assert_int_equal(s.router.stats.refused, 5);
	assert_int_equal(s.router.stats.queue_peak, 3);
	assert_int_equal(s.stats.rejected, 5);
	/* the wait at the router counts in TTFT: 10, 10, 20, 20, 30 ms */
	assert_true(a.ttft_ns[0] == 10e6 && a.ttft_ns[1] == 10e6);
	assert_true(a.ttft_ns[2] == 20e6 && a.ttft_ns[3] == 20e6 && a.ttft_ns[4] == 30e6);
	assert_int_equal(s.router.stats.wait_ns_max, 20000000);
	assert_int_equal(s.router.stats.wait_ns_sum, 10000000 + 10000000 + 20000000);
	sim_release(&s);
	agg_free(&a);
}

/* A sim whose router was set can be released with calls still queued. */
static void test_release_with_queued_calls(void **state)
{
	(void)state;
	struct lin l = {.b = 1e6};
	struct engine_config cfg = cfg_queue();
	struct router_config rc;
	router_config_default(&rc);
	rc.max_outstanding = 1;
	struct agg a = {0};
	struct sim s;
	struct diag d;
	diag_init(&d);
	struct res_sink sink = {.ctx = &a, .request = agg_req};
	assert_int_equal(sim_init(&s, &cfg, 1, lin_perf(&l), sink, NULL, NULL, &d), 0);
	assert_int_equal(sim_set_router(&s, &rc, &d), 0);
	for (int i = 0; i < 4; i++) {
		struct sim_call c = {.seq = i, .prompt_tokens = 10, .output_tokens = 1};
		assert_int_equal(sim_submit(&s, &c, 0, &d), 0);
	}
	for (int i = 0; i < 4; i++)
		assert_int_equal(sim_step(&s, &d), 1);
	assert_int_equal(s.router.q_len, 3);
	assert_int_not_equal(sim_check_end(&s, &d), 0);
	/* too late to change the router */
	assert_int_equal(sim_set_router(&s, &rc, &d), DIAG_EINTERNAL);
	sim_release(&s); /* ASan checks nothing leaks */
}

/* ---- policies ---- */

/* Prompts of `blocks` full blocks sharing a prefix family `fam`. */
static void family_hashes(uint64_t *h, int64_t blocks, uint64_t fam, uint64_t uniq, int64_t shared)
{
	uint64_t x = 1;
	for (int64_t j = 0; j < blocks; j++) {
		x = hash_combine(x, j < shared ? fam : uniq);
		h[j] = x;
	}
}

struct pick_rec {
	int32_t replica[64];
	int n;
};

static void pick_req(void *ctx, const struct res_request *r)
{
	struct pick_rec *pr = ctx;
	if (pr->n < 64)
		pr->replica[pr->n++] = r->replica;
}

static void run_calls(struct sim *s, const struct sim_call *c, const int64_t *t, int n)
{
	struct diag d;
	diag_init(&d);
	for (int i = 0; i < n; i++) {
		while (sim_next_time(s) <= t[i])
			assert_int_equal(sim_step(s, &d), 1);
		assert_int_equal(sim_submit(s, &c[i], t[i], &d), 0);
	}
	int rc;
	while ((rc = sim_step(s, &d)) == 1)
		;
	assert_int_equal(rc, 0);
	assert_int_equal(sim_check_end(s, &d), 0);
}

/* prefix_aware, under either scorer, sends a call where its prefix is
 * cached; the load cap moves it off a replica that holds too many calls. */
static void prefix_aware_follows_the_cache(enum router_prefix_scorer scorer)
{
	struct lin l = {.a = 1e5, .b = 1e3};
	struct engine_config cfg = cfg_queue();
	cfg.max_num_seqs = 64;
	cfg.enable_prefix_caching = true;
	struct router_config rc;
	router_config_default(&rc);
	rc.policy = ROUTER_PREFIX_AWARE;
	rc.prefix_scorer = scorer;
	uint64_t h[6][64];
	struct sim_call c[6];
	int64_t t[6];
	/* family A lands on replica 0 (all empty: lowest index), family B then
	 * scores best on replica 1 (equal loads, no hits: lowest index again is
	 * 0, but 0 is busier), later A and B calls follow their caches */
	uint64_t fam[6] = {0xA, 0xB, 0xA, 0xB, 0xA, 0xB};
	for (int i = 0; i < 6; i++) {
		family_hashes(h[i], 64, fam[i], 100 + i, 60);
		c[i] = (struct sim_call){.session = 0, .seq = i, .prompt_tokens = 64 * 16,
					 .output_tokens = 1, .block_hashes = h[i], .n_hashes = 64};
		t[i] = i < 2 ? i : (int64_t)1e9 + i; /* later calls after the first two finished */
	}
	struct pick_rec pr = {0};
	struct sim s;
	struct diag d;
	diag_init(&d);
	struct res_sink sink = {.ctx = &pr, .request = pick_req};
	assert_int_equal(sim_init(&s, &cfg, 4, lin_perf(&l), sink, NULL, NULL, &d), 0);
	assert_int_equal(sim_set_router(&s, &rc, &d), 0);
	run_calls(&s, c, t, 6);
	/* every A call on one replica, every B call on another */
	assert_int_equal(s.router.stats.routed, 6);
	int used = 0;
	for (int i = 0; i < 4; i++)
		used += s.router.sent[i] > 0;
	assert_int_equal(used, 2);
	assert_int_equal(s.router.sent[0], 3);
	assert_int_equal(s.router.sent[1], 3);
	sim_release(&s);

	/* the load cap: with cap 0, a replica holding more calls than the least
	 * loaded is skipped even though it holds the prefix */
	rc.prefix_load_cap = 0;
	struct sim_call c2[3];
	int64_t t2[3] = {0, 1, 2};
	for (int i = 0; i < 3; i++) {
		family_hashes(h[i], 64, 0xA, 200 + i, 60);
		c2[i] = (struct sim_call){.seq = i, .prompt_tokens = 64 * 16, .output_tokens = 500,
					  .block_hashes = h[i], .n_hashes = 64};
	}
	struct pick_rec pr2 = {0};
	sink.ctx = &pr2;
	assert_int_equal(sim_init(&s, &cfg, 2, lin_perf(&l), sink, NULL, NULL, &d), 0);
	assert_int_equal(sim_set_router(&s, &rc, &d), 0);
	run_calls(&s, c2, t2, 3);
	/* call 0 to replica 0; call 1 is capped off replica 0 (1 call vs 0), and
	 * neither holds its prefix cached yet; call 2 sees equal loads */
	assert_int_equal(s.router.sent[0] + s.router.sent[1], 3);
	assert_true(s.router.sent[1] >= 1);
	sim_release(&s);
}

static void test_prefix_aware_follows_the_cache(void **state)
{
	(void)state;
	prefix_aware_follows_the_cache(ROUTER_SCORER_CACHE_AWARE);
	prefix_aware_follows_the_cache(ROUTER_SCORER_WEIGHTED);
}

/* Cache n leading blocks of h in replica rep's prefix table (blocks freed
 * at once, so they stay cached and findable). */
static void cache_prefix(struct replica *rep, const uint64_t *h, int64_t n)
{
	if (rep->runs) { /* a request takes what is cached, computes the rest, leaves */
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

/* The cache-aware rule, decision by decision, on replicas whose prefix
 * tables are filled by hand: the longest prefix wins above cache_threshold,
 * the least loaded below it or when the load is imbalanced (both the
 * absolute and the relative threshold passed), and ties of prefix or load
 * go to the lighter replica. */
static void test_cache_aware_rule(void **state)
{
	(void)state;
	struct engine_config cfg = cfg_queue();
	cfg.enable_prefix_caching = true;
	cfg.kv_cache_tokens = 16 * 1024;
	struct diag d;
	diag_init(&d);
	struct replica reps[4];
	struct lin l = {.a = 1e5};
	struct sim_perf perf = lin_perf(&l);
	for (int i = 0; i < 4; i++)
		assert_int_equal(replica_init(&reps[i], i, 0, &cfg, &perf, &d), 0);
	uint64_t h[40];
	family_hashes(h, 40, 0xA, 7, 40);
	cache_prefix(&reps[1], h, 10); /* 10 of 40 blocks: 0.25 */
	cache_prefix(&reps[2], h, 30); /* 0.75 */
	cache_prefix(&reps[3], h, 30);
	struct router_config rc;
	router_config_default(&rc);
	rc.policy = ROUTER_PREFIX_AWARE;
	assert_int_equal(rc.prefix_scorer, ROUTER_SCORER_CACHE_AWARE);
	rc.prefix_load_cap = 4;
	struct router rt;
	assert_int_equal(router_init(&rt, &rc, 4, 64, reps, &d), 0);
	struct sreq r = {.call = {.prompt_tokens = 40 * 16, .output_tokens = 1, .block_hashes = h,
				  .n_hashes = 40}, .pools_ok = 1};

	/* balanced: 30 blocks on replicas 2 and 3, a tie: the lighter, 3 */
	rt.out_reqs[0] = 0;
	rt.out_reqs[1] = 0;
	rt.out_reqs[2] = 3;
	rt.out_reqs[3] = 2;
	assert_int_equal(router_pick(&rt, &r, reps), 3);
	assert_int_equal(rt.stats.prefix_matched, 1);
	/* equal loads, fewer outstanding tokens wins the tie */
	rt.out_reqs[2] = rt.out_reqs[3] = 2;
	rt.out_tokens[2] = 10;
	rt.out_tokens[3] = 20;
	assert_int_equal(router_pick(&rt, &r, reps), 2);
	/* then fewer calls routed so far */
	rt.out_tokens[3] = 10;
	rt.sent[2] = 5;
	rt.sent[3] = 4;
	assert_int_equal(router_pick(&rt, &r, reps), 3);

	/* below the threshold: the least loaded, whatever it holds */
	rc.cache_threshold = 0.8;
	router_release(&rt);
	assert_int_equal(router_init(&rt, &rc, 4, 64, reps, &d), 0);
	rt.out_reqs[0] = 1;
	rt.out_reqs[1] = 0;
	rt.out_reqs[2] = rt.out_reqs[3] = 0;
	rt.sent[1] = 3; /* 2 and 3 routed less: 2 */
	assert_int_equal(router_pick(&rt, &r, reps), 2);
	assert_int_equal(rt.stats.prefix_matched, 0);

	/* imbalance needs both thresholds: 6 - 1 > 4 but 6 < 8 x 1 is not
	 * imbalanced; 6 - 1 > 4 and 6 > 1.5 x 1 is */
	rc.cache_threshold = 0.3;
	rc.balance_rel_threshold = 8.0;
	router_release(&rt);
	assert_int_equal(router_init(&rt, &rc, 4, 64, reps, &d), 0);
	rt.out_reqs[0] = 1;
	rt.out_reqs[1] = 1;
	rt.out_reqs[2] = 6;
	rt.out_reqs[3] = 6;
	assert_int_equal(router_pick(&rt, &r, reps), 2);
	rt.cfg.balance_rel_threshold = 1.5;
	assert_int_equal(router_pick(&rt, &r, reps), 0);
	assert_int_equal(rt.stats.load_capped, 1);
	/* a longer prefix on a lighter replica is not skipped by the probe */
	rt.out_reqs[2] = rt.out_reqs[3] = 1;
	cache_prefix(&reps[0], h, 35);
	assert_int_equal(router_pick(&rt, &r, reps), 0);
	assert_int_equal(rt.stats.prefix_matched, 2);

	router_release(&rt);
	for (int i = 0; i < 4; i++)
		replica_release(&reps[i]);
}

/* The cache-aware rule reads first the replica holding the furthest of a
 * few sampled blocks (the lower index among equals); the pick must not
 * depend on that order.  Replicas 2 and 3 hold the same 30 leading blocks
 * (as a replica's cache always holds a prefix of a chain), so 2 is read
 * first: under equal loads the tie goes to 2, a lighter 3 wins it, and a
 * longer prefix on 3, read after 2, wins whatever the loads. */
static void test_cache_aware_order_free(void **state)
{
	(void)state;
	struct engine_config cfg = cfg_queue();
	cfg.enable_prefix_caching = true;
	cfg.kv_cache_tokens = 16 * 1024;
	struct diag d;
	diag_init(&d);
	struct replica reps[4];
	struct lin l = {.a = 1e5};
	struct sim_perf perf = lin_perf(&l);
	for (int i = 0; i < 4; i++)
		assert_int_equal(replica_init(&reps[i], i, 0, &cfg, &perf, &d), 0);
	uint64_t h[40];
	family_hashes(h, 40, 0xA, 9, 40);
	cache_prefix(&reps[1], h, 5);
	cache_prefix(&reps[2], h, 30);
	cache_prefix(&reps[3], h, 30);
	struct router_config rc;
	router_config_default(&rc);
	rc.policy = ROUTER_PREFIX_AWARE;
	struct router rt;
	assert_int_equal(router_init(&rt, &rc, 4, 64, reps, &d), 0);
	struct sreq r = {.call = {.prompt_tokens = 40 * 16, .output_tokens = 1, .block_hashes = h,
				  .n_hashes = 40}, .pools_ok = 1};
	assert_int_equal(router_pick(&rt, &r, reps), 2);
	assert_int_equal(rt.stats.prefix_matched, 1);
	/* lighter, 3 wins the tie */
	rt.out_tokens[2] = 1;
	assert_int_equal(router_pick(&rt, &r, reps), 3);
	rt.out_tokens[2] = 0;
	rt.out_tokens[3] = 1;
	assert_int_equal(router_pick(&rt, &r, reps), 2);
	/* a longer prefix on 3 (the same sampled blocks as 2's), read after
	 * 2, wins though 3 is heavier */
	cache_prefix(&reps[3], h, 36);
	assert_int_equal(router_pick(&rt, &r, reps), 3);
	router_release(&rt);
	for (int i = 0; i < 4; i++)
		replica_release(&reps[i]);
}

/* session_affinity keeps a session on one replica, and sends it elsewhere
 * when that replica is saturated, counting the fallback. */
static void test_session_affinity_and_fallback(void **state)
{
	(void)state;
	struct lin l = {.a = 1e5, .b = 1e3};
	struct engine_config cfg = cfg_queue();
	cfg.max_num_seqs = 64;
	struct router_config rc;
	router_config_default(&rc);
	rc.policy = ROUTER_SESSION_AFFINITY;
	rc.affinity_saturation = 2;
	struct sim_call c[8];
	int64_t t[8];
	for (int i = 0; i < 8; i++) {
		c[i] = (struct sim_call){.session = 77, .seq = i, .prompt_tokens = 100,
					 .output_tokens = 1000};
		t[i] = i < 4 ? (int64_t)i * 3000000000LL : 20000000000LL + i; /* 4 apart, then 4 at once */
	}
	struct pick_rec pr = {0};
	struct sim s;
	struct diag d;
	diag_init(&d);
	struct res_sink sink = {.ctx = &pr, .request = pick_req};
	assert_int_equal(sim_init(&s, &cfg, 4, lin_perf(&l), sink, NULL, NULL, &d), 0);
	assert_int_equal(sim_set_router(&s, &rc, &d), 0);
	run_calls(&s, c, t, 8);
	int owner = pr.replica[0];
	for (int i = 0; i < 4; i++)
		assert_int_equal(pr.replica[i], owner); /* one at a time: always the owner */
	/* four at once: two on the owner, two elsewhere */
	assert_int_equal(s.router.sent[owner], 6);
	assert_int_equal(s.router.stats.affinity_fallbacks, 2);
	sim_release(&s);
}

/* least_tokens weighs calls by their tokens, least_requests counts them;
 * power_of_two is repeatable for one seed. */
static void test_least_tokens_and_two_choices(void **state)
{
	(void)state;
	struct lin l = {.a = 1e5, .b = 1e3};
	struct engine_config cfg = cfg_queue();
	cfg.max_num_seqs = 64;
	struct router_config rc;
	router_config_default(&rc);
	rc.policy = ROUTER_LEAST_TOKENS;
	/* a long call on 0, two short ones on 1: the next goes to 1 by tokens */
	struct sim_call c[4] = {
		{.seq = 0, .prompt_tokens = 50000, .output_tokens = 10},
		{.seq = 1, .prompt_tokens = 100, .output_tokens = 10},
		{.seq = 2, .prompt_tokens = 100, .output_tokens = 10},
		{.seq = 3, .prompt_tokens = 100, .output_tokens = 10},
	};
	int64_t t[4] = {0, 0, 0, 0};
	struct pick_rec pr = {0};
	struct sim s;
	struct diag d;
	diag_init(&d);
	struct res_sink sink = {.ctx = &pr, .request = pick_req};
	assert_int_equal(sim_init(&s, &cfg, 2, lin_perf(&l), sink, NULL, NULL, &d), 0);
	assert_int_equal(sim_set_router(&s, &rc, &d), 0);
	run_calls(&s, c, t, 4);
	assert_int_equal(s.router.sent[0], 1);
	assert_int_equal(s.router.sent[1], 3);
	sim_release(&s);

	rc.policy = ROUTER_LEAST_REQUESTS;
	assert_int_equal(sim_init(&s, &cfg, 2, lin_perf(&l), sink, NULL, NULL, &d), 0);
	assert_int_equal(sim_set_router(&s, &rc, &d), 0);
	run_calls(&s, c, t, 4);
	assert_int_equal(s.router.sent[0], 2);
	assert_int_equal(s.router.sent[1], 2);
	sim_release(&s);

	/* power_of_two: same seed, same choices; spread over all replicas */
	int64_t sent[2][8];
	for (int rep = 0; rep < 2; rep++) {
		rc.policy = ROUTER_POWER_OF_TWO;
		rc.seed = 5;
		struct sim_call many[64];
		int64_t tm[64];
		for (int i = 0; i < 64; i++) {
			many[i] = (struct sim_call){.seq = i, .prompt_tokens = 100, .output_tokens = 100};
			tm[i] = 0;
		}
		assert_int_equal(sim_init(&s, &cfg, 8, lin_perf(&l), sink, NULL, NULL, &d), 0);
		assert_int_equal(sim_set_router(&s, &rc, &d), 0);
		pr.n = 0;
		run_calls(&s, many, tm, 64);
		for (int i = 0; i < 8; i++) {
			sent[rep][i] = s.router.sent[i];
			/* two choices keep 64 calls over 8 replicas within 8 +- 3 */
			assert_true(sent[rep][i] >= 5 && sent[rep][i] <= 11);
		}
		sim_release(&s);
	}
	assert_memory_equal(sent[0], sent[1], sizeof(sent[0]));
}

static void test_policy_names(void **state)
{
	(void)state;
	for (int i = 0; i < ROUTER_N_POLICIES; i++) {
		enum router_policy p;
		assert_true(router_policy_parse(router_policy_name((enum router_policy)i), &p));
		assert_int_equal(p, i);
		assert_non_null(strstr(router_policy_names(), router_policy_name(p)));
	}
	enum router_policy p;
	assert_false(router_policy_parse("random", &p));
	assert_null(router_policy_name(ROUTER_N_POLICIES));
}

/* ---- tensor parallelism in the simulated cluster ---- */

/* The TP=2 step-time model, pricing every batch at TP=1 too (test probe). */
struct tp_probe {
	const struct perf_model *one, *two;
	double one_ns, two_ns, comm_ns, overhead_ns; /* summed over steps */
	int64_t steps;
};

static double tp_step(const void *ctx, const struct perf_batch *b)
{
	struct tp_probe *t = (struct tp_probe *)ctx;
	struct perf_breakdown br;
	perf_step_breakdown(t->two, b, &br);
	t->one_ns += perf_step_ns(t->one, b);
	t->two_ns += br.step_ns;
	t->comm_ns += br.comm_ns;
	t->overhead_ns += br.overhead_ns;
	t->steps++;
	return br.step_ns;
}

static double tp_run(const void *ctx, const struct perf_batch *b0, int64_t k)
{
	/* single_step below: never a run of more than one step */
	assert_true(k == 1);
	return tp_step(ctx, b0);
}

static void init_pm(struct perf_model *pm, const struct catalog *cat, int tp)
{
	struct diag d;
	diag_init(&d);
	struct perf_opts po;
	perf_opts_init(&po);
	po.hardware = "h100-sxm";
	po.model = "llama-3.1-70b";
	po.weight_format = "fp8";
	po.tp = tp;
	if (perf_model_init_opts(pm, cat, &po, &d) != 0)
		fail_msg("%s", d.msg);
}

/* Replay a workload on a TP=2 replica and price each of its batches at TP=1
 * as well: splitting the matrices over two GPUs halves their time, but the
 * two all-reduces per layer do not shrink, so the steps take more than half
 * as long, and without the all-reduces they would take no more than half
 * plus the fixed per-step overhead. */
static void test_tp2_step_times_fall_by_less_than_half(void **state)
{
	(void)state;
	struct catalog *cat = NULL;
	struct diag d;
	diag_init(&d);
	if (catalog_load(&cat, NULL, &d) != 0)
		fail_msg("%s", d.msg);
	struct perf_model one, two;
	init_pm(&one, cat, 1);
	init_pm(&two, cat, 2);
	struct tp_probe probe = {.one = &one, .two = &two};
	struct sim_perf perf = {.ctx = &probe, .step_ns = tp_step, .decode_run_ns = tp_run};
	struct engine_config cfg = cfg_queue();
	cfg.max_num_seqs = 32;
	cfg.max_num_batched_tokens = 4096;
	struct sim s;
	struct res_sink sink = {0};
	assert_int_equal(sim_init(&s, &cfg, 1, perf, sink, NULL, NULL, &d), 0);
	s.single_step = true;
	for (int i = 0; i < 64; i++) {
		struct sim_call c = {.seq = i, .prompt_tokens = 1500, .output_tokens = 100};
		assert_int_equal(sim_submit(&s, &c, (int64_t)i * 20000000, &d), 0);
	}
	int rc;
	while ((rc = sim_step(&s, &d)) == 1)
		;
	assert_int_equal(rc, 0);
	assert_int_equal(sim_check_end(&s, &d), 0);
	sim_release(&s);
	printf("TP=1 %.1f ms, TP=2 %.1f ms (ratio %.3f), of which all-reduce %.1f ms, overhead %.1f ms over %lld steps\n",
	       probe.one_ns / 1e6, probe.two_ns / 1e6, probe.two_ns / probe.one_ns, probe.comm_ns / 1e6,
	       probe.overhead_ns / 1e6, (long long)probe.steps);
	assert_true(probe.steps > 100);
	assert_true(probe.two_ns < probe.one_ns);
	assert_true(probe.two_ns > 0.5 * probe.one_ns);
	assert_true(probe.comm_ns > 0.0);
	assert_true(probe.two_ns - probe.comm_ns <= 0.5 * probe.one_ns + probe.overhead_ns);
	catalog_free(cat);
}

/* ---- time series ---- */

#define TS_N 400
#define TS_MAX_SAMPLES 4096

struct ts_rec {
	int64_t arrival_ns[TS_N], done_ns[TS_N];
	int32_t replica[TS_N];
	int64_t busy_ns[3];         /* from the res_busy records */
	int64_t n_samples;
	int64_t t_ns[TS_MAX_SAMPLES];
	int64_t in_system[TS_MAX_SAMPLES]; /* router queue + waiting + running */
	int64_t arrivals, completions, failed, rep_arrivals[3], rep_completions[3], rep_busy_ns[3];
	uint64_t digest;
};

static void ts_req(void *ctx, const struct res_request *r)
{
	struct ts_rec *t = ctx;
	t->arrival_ns[r->seq] = r->arrival_ns;
	t->done_ns[r->seq] = r->done_ns;
	t->replica[r->seq] = r->replica;
}

static void ts_busy(void *ctx, const struct res_busy *b)
{
	struct ts_rec *t = ctx;
	t->busy_ns[b->replica] += b->end_ns - b->start_ns;
}

static void ts_sample(void *ctx, const struct res_sample *s)
{
	struct ts_rec *t = ctx;
	assert_true(t->n_samples < TS_MAX_SAMPLES);
	assert_int_equal(s->n_replicas, 3);
	assert_int_equal(s->replicas_up, 3);
	t->t_ns[t->n_samples] = s->t_ns;
	int64_t in = s->router_queue;
	t->arrivals += s->arrivals;
	t->completions += s->completions;
	t->failed += s->failed;
	uint64_t h = hash_combine(t->digest, (uint64_t)s->t_ns);
	for (int i = 0; i < 3; i++) {
		const struct res_sample_replica *p = &s->replicas[i];
		in += p->waiting + p->running;
		t->rep_arrivals[i] += p->arrivals;
		t->rep_completions[i] += p->completions;
		t->rep_busy_ns[i] += p->busy_ns;
		assert_true(p->busy_ns >= 0 && p->busy_ns <= s->interval_ns);
		assert_true(p->kv_blocks_used <= p->kv_blocks_total);
		assert_true(p->running <= 2);
		h = hash_combine(h, (uint64_t)(p->waiting + 7 * p->running + 31 * p->batch_tokens +
					       127 * p->kv_blocks_used + 8191 * p->busy_ns));
	}
	t->in_system[t->n_samples++] = in;
	t->digest = h;
}

static void run_series(struct ts_rec *t, int64_t interval_ns)
{
	struct lin l = {.a = 2e6, .b = 2e4, .c = 1.0};
	struct engine_config cfg = cfg_queue();
	cfg.max_num_seqs = 2;
	cfg.max_num_batched_tokens = 512;
	cfg.enable_prefix_caching = true;
	cfg.kv_cache_tokens = 1 << 16;
	cfg.max_model_len = 1 << 14;
	struct router_config rc;
	router_config_default(&rc);
	rc.policy = ROUTER_LEAST_REQUESTS;
	rc.max_outstanding = 3;
	struct sim s;
	struct diag d;
	diag_init(&d);
	struct res_sink sink = {.ctx = t, .request = ts_req, .busy = ts_busy, .sample = ts_sample};
	assert_int_equal(sim_init(&s, &cfg, 3, lin_perf(&l), sink, NULL, NULL, &d), 0);
	assert_int_equal(sim_set_router(&s, &rc, &d), 0);
	assert_int_equal(sim_set_series(&s, interval_ns, &d), 0);
	gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
	gsl_rng_set(rng, 7);
	int64_t t_ns[TS_N], prompt[TS_N], output[TS_N];
	poisson_times(rng, t_ns, TS_N, 40.0);
	for (int i = 0; i < TS_N; i++) {
		prompt[i] = 100 + (int64_t)gsl_rng_uniform_int(rng, 2000);
		output[i] = 1 + (int64_t)gsl_rng_uniform_int(rng, 60);
	}
	gsl_rng_free(rng);
	struct workload w = {.n = TS_N, .t_ns = t_ns, .prompt = prompt, .output = output};
	drive(&s, &w);
	int64_t last_event = s.now_ns;
	sim_series_flush(&s);
	if (interval_ns > 0) {
		/* the last sample closes the interval holding the last event */
		assert_true(t->n_samples > 0);
		assert_true(t->t_ns[t->n_samples - 1] > last_event);
		assert_true(t->t_ns[t->n_samples - 1] - interval_ns <= last_event);
	}
	sim_release(&s);
}

/* The time series: samples at every multiple of the interval; counts that
 * add up to the run's (per replica too); busy time that adds up to the
 * steps' own records; at each instant, calls in the system (router queue +
 * waiting + running) equal to those that arrived before it and had not
 * finished; the same samples on a second run; none while off. */
static void test_time_series(void **state)
{
	(void)state;
	const int64_t iv = 50000000; /* 50 ms */
	struct ts_rec *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));
	assert_non_null(a);
	assert_non_null(b);
	run_series(a, iv);
	assert_true(a->n_samples > 100);
	for (int64_t k = 0; k < a->n_samples; k++)
		assert_true(a->t_ns[k] == (k + 1) * iv);
	assert_int_equal(a->arrivals, TS_N);
	assert_int_equal(a->completions, TS_N);
	assert_int_equal(a->failed, 0);
	int64_t per[3] = {0};
	for (int i = 0; i < TS_N; i++)
		per[a->replica[i]]++;
	int64_t peak = 0;
	for (int i = 0; i < 3; i++) {
		assert_int_equal(a->rep_arrivals[i], per[i]);
		assert_int_equal(a->rep_completions[i], per[i]);
		assert_int_equal(a->rep_busy_ns[i], a->busy_ns[i]);
	}
	for (int64_t k = 0; k < a->n_samples; k++) {
		int64_t in = 0;
		for (int i = 0; i < TS_N; i++)
			in += a->arrival_ns[i] < a->t_ns[k] && a->done_ns[i] >= a->t_ns[k];
		assert_int_equal(a->in_system[k], in);
		if (in > peak)
			peak = in;
	}
	assert_true(peak > 9); /* more than the replicas' 3 x 3: the router queued */
	run_series(b, iv);
	assert_int_equal(a->n_samples, b->n_samples);
	assert_true(a->digest == b->digest);

	/* off: no samples */
	memset(b, 0, sizeof(*b));
	run_series(b, 0);
	assert_int_equal(b->n_samples, 0);
	free(a);
	free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_policy_names),
		cmocka_unit_test(test_time_series),
		cmocka_unit_test(test_router_queue_and_admission_limit),
		cmocka_unit_test(test_release_with_queued_calls),
		cmocka_unit_test(test_prefix_aware_follows_the_cache),
		cmocka_unit_test(test_cache_aware_rule),
		cmocka_unit_test(test_cache_aware_order_free),
		cmocka_unit_test(test_session_affinity_and_fallback),
		cmocka_unit_test(test_least_tokens_and_two_choices),
		cmocka_unit_test(test_round_robin_is_independent_queues),
		cmocka_unit_test(test_doubling_replicas_lowers_p99_ttft),
		cmocka_unit_test(test_tp2_step_times_fall_by_less_than_half),
		cmocka_unit_test(test_md1_pollaczek_khinchine),
		cmocka_unit_test(test_mmc_erlang_c),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
