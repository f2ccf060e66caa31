/* SPDX-License-Identifier: Apache-2.0
 * Tests of replicas that start, drain, fail and scale (sim/lifecycle.h):
 * a replica failing for an hour loses no call and keeps the end-of-run
 * invariants; a scale-from-zero run pays the cold start in its TTFT tail and
 * bills nothing while idle; the autoscaler stays within its bounds at every
 * event and scales in no sooner than its cooldown after its last scaling
 * action; provisioned GPU-hours equal the integral of billed replicas, as the
 * test measures it itself by watching the replicas' states between events.
 *
 * Service times come from a linear step model (a struct sim_perf): a +
 * b x new tokens + c x KV tokens read per step. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "base/hash.h"
#include "reports/cluster.h"
#include "sim/backend.h"
#include "sim/lifecycle.h"
#include "sim/replica.h"
#include "sim/sim.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S (INT64_C(1000000000))

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

/* 5 ms per step + 20 us per new token: a 2,000-token prefill takes 45 ms,
 * a decode step of a few sequences about 5 ms. */
static const struct lin LIN = {5e6, 2e4, 0.0};

/* 20 ms per step: calls of several seconds, so a failing replica holds
 * several of them, running and waiting. */
static const struct lin SLOW = {2e7, 2e4, 0.0};

static struct sim_perf lin_perf_of(const struct lin *l)
{
	struct sim_perf p = {.ctx = l, .step_ns = lin_step, .decode_run_ns = lin_run};
	return p;
}

static struct sim_perf lin_perf(void)
{
	return lin_perf_of(&LIN);
}

static struct engine_config cfg_engine(void)
{
	struct engine_config cfg = {
		.max_num_seqs = 8,
		.max_num_batched_tokens = 4096,
		.block_size = 16,
		.gpu_memory_utilization = 0.9,
		.enable_chunked_prefill = true,
		.enable_prefix_caching = true,
		.kv_cache_tokens = 64 * 1024,
		.max_model_len = 32 * 1024,
	};
	return cfg;
}

/* ---- what the sink saw ---- */

struct seen {
	int64_t completed, rejected;
	int64_t outage_calls, retried;
	const char *reason;
	int64_t n;                 /* records */
	int64_t *by_seq;           /* per seq: times reported */
	double *ttft_ns;           /* per seq */
	int32_t *replica;
	int64_t *done_ns;
	int64_t cached_last;       /* cached prompt tokens of the last record */
	int64_t cap;
	uint64_t digest;           /* of every record, for determinism */
};

static void seen_req(void *ctx, const struct res_request *r)
{
	struct seen *a = ctx;
	a->n++;
	a->digest = hash_combine(a->digest, (uint64_t)r->seq);
	a->digest = hash_combine(a->digest, (uint64_t)r->done_ns);
	a->digest = hash_combine(a->digest, (uint64_t)(int64_t)r->replica);
	if (r->seq >= 0 && r->seq < a->cap) {
		a->by_seq[r->seq]++;
		a->ttft_ns[r->seq] = (double)(r->first_token_ns - r->arrival_ns);
		a->replica[r->seq] = r->replica;
		a->done_ns[r->seq] = r->done_ns;
	}
	a->outage_calls += r->outage;
	a->cached_last = r->cached_prompt_tokens;
	a->retried += r->retries > 0;
	if (r->status == RES_COMPLETED) {
		a->completed++;
	} else {
		a->rejected++;
		assert_non_null(r->reason);
		a->reason = r->reason;
	}
}

static void seen_alloc(struct seen *a, int64_t n)
{
	memset(a, 0, sizeof(*a));
	a->cap = n;
	a->by_seq = calloc((size_t)n, sizeof(*a->by_seq));
	a->ttft_ns = calloc((size_t)n, sizeof(*a->ttft_ns));
	a->replica = calloc((size_t)n, sizeof(*a->replica));
	a->done_ns = calloc((size_t)n, sizeof(*a->done_ns));
	assert_non_null(a->by_seq);
	assert_non_null(a->ttft_ns);
	assert_non_null(a->replica);
	assert_non_null(a->done_ns);
}

static void seen_free(struct seen *a)
{
	free(a->by_seq);
	free(a->ttft_ns);
	free(a->replica);
	free(a->done_ns);
}

/* ---- a workload and a driver that watches the replicas ---- */

struct workload {
	int64_t n;
	int64_t *t_ns;
	int64_t *prompt;
	int64_t *output;
	uint64_t *hashes;          /* n x HBLOCKS */
};

#define HBLOCKS 256

/* Calls at a steady rate per second over [t0, t1): prompts of 1,000 to 3,000
 * tokens sharing one of 8 system prefixes of 512 tokens, outputs of 50 to
 * 300 tokens. */
static void wl_steady(struct workload *w, int64_t t0, int64_t t1, double rate, uint64_t seed)
{
	int64_t n = (int64_t)((double)(t1 - t0) / 1e9 * rate);
	int64_t base = w->n;
	w->n += n;
	w->t_ns = realloc(w->t_ns, (size_t)w->n * sizeof(*w->t_ns));
	w->prompt = realloc(w->prompt, (size_t)w->n * sizeof(*w->prompt));
	w->output = realloc(w->output, (size_t)w->n * sizeof(*w->output));
	w->hashes = realloc(w->hashes, (size_t)w->n * HBLOCKS * sizeof(*w->hashes));
	assert_non_null(w->t_ns);
	assert_non_null(w->prompt);
	assert_non_null(w->output);
	assert_non_null(w->hashes);
	for (int64_t i = 0; i < n; i++) {
		uint64_t x = hash_combine(seed, (uint64_t)i);
		int64_t k = base + i;
		w->t_ns[k] = t0 + (int64_t)((double)i / rate * 1e9);
		w->prompt[k] = 1000 + (int64_t)(x % 2001);
		w->output[k] = 50 + (int64_t)((x >> 20) % 251);
		uint64_t fam = (x >> 40) % 8;
		for (int64_t j = 0; j < HBLOCKS; j++)
			w->hashes[k * HBLOCKS + j] = j < 32 ? hash_combine(fam + 1, (uint64_t)j)
							    : hash_combine(x, (uint64_t)j);
	}
}

static void wl_free(struct workload *w)
{
	free(w->t_ns);
	free(w->prompt);
	free(w->output);
	free(w->hashes);
	memset(w, 0, sizeof(*w));
}

/* What the driver measures itself: after every event it counts the
 * replicas in each state, building its own timeline of billed replicas. */
struct watch {
	int64_t *t;                /* from t[k] on, billed[k] replicas billed */
	int32_t *billed;
	int64_t n, cap;
	int32_t active_lo, active_hi; /* up + starting, at every event */
	/* scaling actions: the active count changing (time 0 counts as one,
	 * as it does for the autoscaler) */
	int32_t last_active;
	int64_t last_change_ns;
	int64_t scale_ins;
	int64_t min_in_gap_ns;     /* least time from an action to a scale-in */
};

static int32_t count_life(const struct sim *s, int life)
{
	int32_t n = 0;
	for (int32_t i = 0; i < s->n_replicas; i++)
		n += s->replicas[i].life == life;
	return n;
}

static void watch_note(struct watch *wt, const struct sim *s)
{
	int32_t billed = count_life(s, REP_UP) + count_life(s, REP_STARTING) + count_life(s, REP_DRAINING);
	int32_t active = count_life(s, REP_UP) + count_life(s, REP_STARTING);
	if (active < wt->active_lo)
		wt->active_lo = active;
	if (active > wt->active_hi)
		wt->active_hi = active;
	if (active != wt->last_active) {
		if (active < wt->last_active) {
			int64_t gap = s->now_ns - wt->last_change_ns;
			if (wt->scale_ins == 0 || gap < wt->min_in_gap_ns)
				wt->min_in_gap_ns = gap;
			wt->scale_ins++;
		}
		wt->last_active = active;
		wt->last_change_ns = s->now_ns;
	}
	if (wt->n > 0 && wt->billed[wt->n - 1] == billed)
		return;
	if (wt->n > 0 && wt->t[wt->n - 1] == s->now_ns) {
		wt->billed[wt->n - 1] = billed;
		return;
	}
	if (wt->n == wt->cap) {
		wt->cap = wt->cap ? 2 * wt->cap : 64;
		wt->t = realloc(wt->t, (size_t)wt->cap * sizeof(*wt->t));
		wt->billed = realloc(wt->billed, (size_t)wt->cap * sizeof(*wt->billed));
		assert_non_null(wt->t);
		assert_non_null(wt->billed);
	}
	wt->t[wt->n] = s->now_ns;
	wt->billed[wt->n] = billed;
	wt->n++;
}

/* Replica-seconds billed over [lo, hi) by the driver's own timeline. */
static double watch_billed_s(const struct watch *wt, int64_t lo, int64_t hi)
{
	double sum = 0.0;
	for (int64_t k = 0; k < wt->n; k++) {
		int64_t a = wt->t[k] > lo ? wt->t[k] : lo;
		int64_t b = k + 1 < wt->n ? wt->t[k + 1] : INT64_MAX;
		if (b > hi)
			b = hi;
		if (b > a)
			sum += (double)wt->billed[k] * (double)(b - a) / 1e9;
	}
	return sum;
}

static void watch_free(struct watch *wt)
{
	free(wt->t);
	free(wt->billed);
}

static void drive(struct sim *s, const struct workload *w, struct watch *wt)
{
	struct diag d;
	diag_init(&d);
	int64_t i = 0;
	memset(wt, 0, sizeof(*wt));
	wt->active_lo = INT32_MAX;
	wt->last_active = count_life(s, REP_UP) + count_life(s, REP_STARTING);
	watch_note(wt, s); /* the state at time 0 */
	for (;;) {
		int64_t t_ev = sim_next_time(s);
		if (i < w->n && w->t_ns[i] <= t_ev) {
			struct sim_call c = {.session = 0, .seq = i, .prompt_tokens = w->prompt[i],
					     .output_tokens = w->output[i],
					     .block_hashes = &w->hashes[i * HBLOCKS],
					     .n_hashes = HBLOCKS};
			assert_int_equal(sim_submit(s, &c, w->t_ns[i], &d), 0);
			i++;
			continue;
		}
		if (t_ev == INT64_MAX)
			break;
		int rc = sim_step(s, &d);
		if (rc < 0)
			fail_msg("%s", d.msg);
		watch_note(wt, s);
	}
	if (sim_check_end(s, &d) != 0)
		fail_msg("%s", d.msg);
}

/* Last completion or failure among the seen records. */
static int64_t seen_last_done(const struct seen *a)
{
	int64_t t = 0;
	for (int64_t i = 0; i < a->cap; i++)
		if (a->done_ns[i] > t)
			t = a->done_ns[i];
	return t;
}

/* ---- failures ---- */

/* One of four replicas fails for an hour in the middle of a three-hour
 * load (2.5 h): every call completes (retried through the router) or is reported
 * failed with a reason, the failed replica takes nothing while down, and the
 * simulator's end-of-run invariants hold. */
static void run_fault_hour(int32_t max_retries, struct seen *a, struct elastic_stats *es,
			   struct watch *wt)
{
	struct engine_config cfg = cfg_engine();
	struct workload w = {0};
	wl_steady(&w, 0, 9000 * S, 8.0, 7);
	seen_alloc(a, w.n);
	struct sim s;
	struct diag d;
	diag_init(&d);
	struct res_sink sink = {.ctx = a, .request = seen_req};
	assert_int_equal(sim_init(&s, &cfg, 4, lin_perf_of(&SLOW), sink, NULL, NULL, &d), 0);
	struct router_config rc;
	router_config_default(&rc);
	rc.policy = ROUTER_LEAST_REQUESTS;
	assert_int_equal(sim_set_router(&s, &rc, &d), 0);
	struct elastic_config ec;
	elastic_config_default(&ec);
	struct fault_spec f = {.replica = 1, .at_ns = 3600 * S + 123456789, .repair_ns = 3600 * S};
	ec.faults = &f;
	ec.n_faults = 1;
	ec.startup_ns = 90 * S;
	ec.max_retries = max_retries;
	assert_int_equal(sim_set_elastic(&s, &ec, &d), 0);
	drive(&s, &w, wt);
	*es = sim_elastic_stats(&s);
	/* each call reported exactly once */
	assert_int_equal(a->n, w.n);
	for (int64_t i = 0; i < w.n; i++)
		assert_int_equal(a->by_seq[i], 1);
	/* nothing finished on replica 1 while it was down or starting again */
	for (int64_t i = 0; i < w.n; i++)
		if (a->replica[i] == 1)
			assert_false(a->done_ns[i] > f.at_ns && a->done_ns[i] < f.at_ns + f.repair_ns + ec.startup_ns);
	assert_int_equal(es->faults, 1);
	assert_int_equal(es->outage_ns, f.repair_ns);
	sim_release(&s);
	wl_free(&w);
}

static void test_one_of_four_fails_for_an_hour(void **state)
{
	(void)state;
	struct seen a;
	struct elastic_stats es;
	struct watch wt;
	run_fault_hour(FAULT_DEFAULT_MAX_RETRIES, &a, &es, &wt);
	/* the failed replica was busy: its calls went elsewhere and completed */
	assert_true(es.retried_calls > 0);
	assert_int_equal(es.retries, es.retried_calls);
	assert_int_equal(es.fault_failed, 0);
	assert_int_equal(a.rejected, 0);
	assert_int_equal(a.completed, a.cap);
	assert_int_equal(a.retried, es.retried_calls);
	/* an hour at 8 calls/s arrives during the outage, plus the retried */
	assert_true(a.outage_calls >= 3600 * 8 && a.outage_calls <= 3600 * 8 + es.retried_calls + 1);
	/* three replicas billed through the outage, four otherwise (the
	 * returning one from the start of its start-up) */
	int64_t end = seen_last_done(&a);
	assert_true(fabs(watch_billed_s(&wt, 0, end) - (4.0 * (double)end / 1e9 - 3600.0)) < 1e-6);
	watch_free(&wt);
	seen_free(&a);
}

static void test_fault_without_retries_fails_with_a_reason(void **state)
{
	(void)state;
	struct seen a;
	struct elastic_stats es;
	struct watch wt;
	run_fault_hour(0, &a, &es, &wt);
	watch_free(&wt);
	assert_true(es.fault_failed > 0);
	assert_int_equal(es.retries, 0);
	assert_int_equal(a.rejected, es.fault_failed);
	assert_int_equal(a.completed + a.rejected, a.cap);
	assert_non_null(strstr(a.reason, "faults.max_retries"));
	seen_free(&a);
}

/* A fault rate: failures come at random but the same every run. */
static void run_rate(uint64_t seed, uint64_t *digest, struct elastic_stats *es)
{
	struct engine_config cfg = cfg_engine();
	struct workload w = {0};
	wl_steady(&w, 0, 2 * 3600 * S, 2.0, 11);
	struct seen a;
	seen_alloc(&a, w.n);
	struct sim s;
	struct diag d;
	diag_init(&d);
	struct res_sink sink = {.ctx = &a, .request = seen_req};
	assert_int_equal(sim_init(&s, &cfg, 4, lin_perf(), sink, NULL, NULL, &d), 0);
	struct elastic_config ec;
	elastic_config_default(&ec);
	ec.mtbf_ns = 3600.0 * 1e9;
	ec.repair_ns = 600 * S;
	ec.startup_ns = 60 * S;
	ec.seed = seed;
	assert_int_equal(sim_set_elastic(&s, &ec, &d), 0);
	struct watch wt;
	drive(&s, &w, &wt);
	watch_free(&wt);
	*es = sim_elastic_stats(&s);
	*digest = a.digest;
	assert_int_equal(a.completed + a.rejected, w.n);
	sim_release(&s);
	seen_free(&a);
	wl_free(&w);
}

/* ---- fault detection by probe ---- */

struct one {
	int64_t dispatched_ns, backoff_ns;
	int32_t replica, retries, n;
	bool completed;
};

static void one_req(void *ctx, const struct res_request *r)
{
	struct one *o = ctx;
	o->n++;
	o->dispatched_ns = r->dispatched_ns;
	o->backoff_ns = r->backoff_ns;
	o->replica = r->replica;
	o->retries = r->retries;
	o->completed = r->status == RES_COMPLETED;
}

/* One call of 2,000 prompt and 4,000 output tokens (about 80 s at 20 ms a
 * step) sent at 0 to replica 0 of two; replica 0 fails at 50 s for 200 s.
 * detection: instant, or a probe every 10 s that fails 3 times in a row,
 * each after probe_timeout_ns; the client gives up after client_timeout_ns
 * and backs off from 0.5 s to 8 s; the run's seed is 7. */
static void run_hang(int32_t detection, int64_t probe_timeout_ns, int64_t client_timeout_ns,
		     int64_t repair_ns, struct one *o, struct elastic_stats *es)
{
	struct engine_config cfg = cfg_engine();
	struct sim s;
	struct diag d;
	diag_init(&d);
	memset(o, 0, sizeof(*o));
	struct res_sink sink = {.ctx = o, .request = one_req};
	assert_int_equal(sim_init(&s, &cfg, 2, lin_perf_of(&SLOW), sink, NULL, NULL, &d), 0);
	/* round robin: which replica a call lands on must not hang on its
	 * prefix, only on the hang the probes have or have not noticed */
	struct router_config rr;
	router_config_default(&rr);
	rr.policy = ROUTER_ROUND_ROBIN;
	assert_int_equal(sim_set_router(&s, &rr, &d), 0);
	struct elastic_config ec;
	elastic_config_default(&ec);
	struct fault_spec f = {.replica = 0, .at_ns = 50 * S, .repair_ns = repair_ns};
	ec.faults = &f;
	ec.n_faults = 1;
	ec.startup_ns = 10 * S;
	ec.seed = 7;
	ec.detection = detection;
	ec.probe_period_ns = 10 * S;
	ec.probe_failure_threshold = 3;
	ec.probe_timeout_ns = probe_timeout_ns;
	ec.client_timeout_ns = client_timeout_ns;
	ec.retry_initial_ns = 0.5e9;
	ec.retry_max_ns = 8e9;
	assert_int_equal(sim_set_elastic(&s, &ec, &d), 0);
	uint64_t h[HBLOCKS];
	for (int64_t j = 0; j < HBLOCKS; j++)
		h[j] = hash_combine(99, (uint64_t)j);
	struct sim_call c = {.seq = 0, .prompt_tokens = 2000, .output_tokens = 4000,
			     .block_hashes = h, .n_hashes = HBLOCKS};
	assert_int_equal(sim_submit(&s, &c, 0, &d), 0);
	int rc;
	while ((rc = sim_step(&s, &d)) == 1)
		;
	if (rc != 0 || sim_check_end(&s, &d) != 0)
		fail_msg("%s", d.msg);
	*es = sim_elastic_stats(&s);
	sim_release(&s);
	assert_int_equal(o->n, 1);
	assert_true(o->completed);
	assert_int_equal(o->replica, 1);
	assert_int_equal(o->retries, 1);
}

/* Detected instantly, the call is retried at the fault, 50 s.  With a
 * probe every 10 s failing 3 times (and no probe timeout) the failed
 * probes are at 60, 70 and 80 s: the call waits on the hung replica for the
 * probe period x the threshold, 30 s, then its client backs off (seeded:
 * the SDKs' 0.5 s x (1 - 0.25 u)) and sends it again, to replica 1.  A
 * 1 s probe timeout notices it 1 s later; a client timeout of 60 s gives
 * up before the probes do; a repair before them ends the hang unnoticed. */
static void test_probe_detection_delays_retries(void **state)
{
	(void)state;
	struct one o;
	struct elastic_stats es;
	run_hang(FAULT_DETECT_INSTANT, 0, 0, 200 * S, &o, &es);
	assert_int_equal(o.dispatched_ns, 50 * S);
	assert_int_equal(o.backoff_ns, 0);
	assert_int_equal(es.hung_calls, 0);

	uint64_t key = hash_combine(hash_combine(0, 0), 0); /* session, seq, arrival */
	int64_t w0 = client_backoff_ns(0.5e9, 8e9, 0, 7, key);
	assert_true(w0 >= 375000000 && w0 <= 500000000);
	run_hang(FAULT_DETECT_PROBE, 0, 600 * S, 200 * S, &o, &es);
	assert_int_equal(o.dispatched_ns, 50 * S + 10 * S * 3 + w0);
	assert_int_equal(o.backoff_ns, w0);
	assert_int_equal(es.detected, 1);
	assert_int_equal(es.hung_calls, 1);
	assert_int_equal(es.hung_wait_ns, 80 * S);
	assert_int_equal(es.client_timeouts, 0);
	assert_int_equal(es.backoff_ns, w0);
	assert_int_equal(es.faults, 1);

	run_hang(FAULT_DETECT_PROBE, 1 * S, 600 * S, 200 * S, &o, &es);
	assert_int_equal(o.dispatched_ns, 81 * S + w0);

	run_hang(FAULT_DETECT_PROBE, 0, 60 * S, 200 * S, &o, &es);
	assert_int_equal(o.dispatched_ns, 60 * S + w0);
	assert_int_equal(es.client_timeouts, 1);
	assert_int_equal(es.hung_wait_ns, 60 * S);

	/* repaired (restarted) 20 s after the fault, before the probes
	 * notice: the hang ends then, unnoticed */
	run_hang(FAULT_DETECT_PROBE, 0, 600 * S, 20 * S, &o, &es);
	assert_int_equal(o.dispatched_ns, 70 * S + w0);
	assert_int_equal(es.detected, 0);
	assert_int_equal(es.hung_wait_ns, 70 * S);
}

/* Until the probes notice, the router keeps sending the hung replica calls:
 * round robin over two replicas, replica 0 hangs at 50 s; a call at 60 s
 * goes to replica 1, the next at 65 s to replica 0, where it waits until
 * the probes notice at 80 s, then runs on replica 1 after its back-off. */
static void test_hung_replica_still_gets_calls(void **state)
{
	(void)state;
	struct engine_config cfg = cfg_engine();
	struct seen a;
	seen_alloc(&a, 3);
	struct sim s;
	struct diag d;
	diag_init(&d);
	struct res_sink sink = {.ctx = &a, .request = seen_req};
	assert_int_equal(sim_init(&s, &cfg, 2, lin_perf_of(&SLOW), sink, NULL, NULL, &d), 0);
	/* round robin: which replica a call lands on must not hang on its
	 * prefix, only on the hang the probes have or have not noticed */
	struct router_config rr;
	router_config_default(&rr);
	rr.policy = ROUTER_ROUND_ROBIN;
	assert_int_equal(sim_set_router(&s, &rr, &d), 0);
	struct elastic_config ec;
	elastic_config_default(&ec);
	struct fault_spec f = {.replica = 0, .at_ns = 50 * S, .repair_ns = 200 * S};
	ec.faults = &f;
	ec.n_faults = 1;
	ec.startup_ns = 10 * S;
	ec.detection = FAULT_DETECT_PROBE;
	ec.probe_period_ns = 10 * S;
	ec.probe_failure_threshold = 3;
	ec.client_timeout_ns = 600 * S;
	ec.retry_initial_ns = 0.5e9;
	ec.retry_max_ns = 8e9;
	assert_int_equal(sim_set_elastic(&s, &ec, &d), 0);
	uint64_t h[HBLOCKS];
	const int64_t at[3] = {0, 60 * S, 65 * S}, out[3] = {4000, 100, 100};
	for (int64_t i = 0; i < 3; i++) {
		for (int64_t j = 0; j < HBLOCKS; j++)
			h[j] = hash_combine(100 + (uint64_t)i, (uint64_t)j);
		struct sim_call c = {.seq = i, .prompt_tokens = 2000, .output_tokens = out[i],
				     .block_hashes = h, .n_hashes = HBLOCKS};
		while (sim_next_time(&s) < at[i])
			assert_int_equal(sim_step(&s, &d), 1);
		assert_int_equal(sim_submit(&s, &c, at[i], &d), 0);
	}
	int rc;
	while ((rc = sim_step(&s, &d)) == 1)
		;
	if (rc != 0 || sim_check_end(&s, &d) != 0)
		fail_msg("%s", d.msg);
	struct elastic_stats es = sim_elastic_stats(&s);
	assert_int_equal(a.completed, 3);
	assert_int_equal(a.replica[1], 1);
	assert_int_equal(a.replica[2], 1);
	assert_true(a.ttft_ns[2] >= 15e9);     /* waited 65 s -> 80 s, then backed off */
	assert_true(a.ttft_ns[1] < 1e9);
	assert_int_equal(es.hung_calls, 2);    /* the call it held, and the one sent to it */
	assert_int_equal(es.hung_wait_ns, 80 * S + 15 * S);
	assert_int_equal(es.detected, 1);
	sim_release(&s);
	seen_free(&a);
}

static void test_fault_rate_is_seeded(void **state)
{
	(void)state;
	uint64_t d1, d2, d3;
	struct elastic_stats e1, e2, e3;
	run_rate(5, &d1, &e1);
	run_rate(5, &d2, &e2);
	run_rate(6, &d3, &e3);
	assert_true(d1 == d2);
	assert_int_equal(e1.faults, e2.faults);
	/* 4 replicas x 2 h at a 1 h MTBF: about 8 failures (less the repairs) */
	assert_true(e1.faults >= 2 && e1.faults <= 20);
	assert_true(d1 != d3 || e1.faults != e3.faults);
}

/* A failed replica comes back with an empty cache: the same prompt that hit
 * before the failure misses after it, and hits again without one. */
static int64_t cached_after(bool fail)
{
	struct engine_config cfg = cfg_engine();
	struct workload w = {0};
	wl_steady(&w, 0, 2 * S, 0.5, 9); /* one call at 0 */
	wl_steady(&w, 200 * S, 202 * S, 0.5, 9); /* the same call at 200 s */
	assert_int_equal(w.n, 2);
	struct seen a;
	seen_alloc(&a, w.n);
	struct sim s;
	struct diag d;
	diag_init(&d);
	struct res_sink sink = {.ctx = &a, .request = seen_req};
	assert_int_equal(sim_init(&s, &cfg, 1, lin_perf(), sink, NULL, NULL, &d), 0);
	struct elastic_config ec;
	elastic_config_default(&ec);
	/* a fault far past the run leaves the lifecycle on but changes nothing */
	struct fault_spec f = {.replica = 0, .at_ns = fail ? 100 * S : 1000 * S, .repair_ns = 10 * S};
	ec.faults = &f;
	ec.n_faults = 1;
	ec.startup_ns = 5 * S;
	assert_int_equal(sim_set_elastic(&s, &ec, &d), 0);
	struct watch wt;
	drive(&s, &w, &wt);
	watch_free(&wt);
	assert_int_equal(a.completed, 2);
	assert_int_equal(sim_elastic_stats(&s).faults, fail ? 1 : 0);
	int64_t cached = a.cached_last;
	sim_release(&s);
	seen_free(&a);
	wl_free(&w);
	return cached;
}

static void test_failed_replica_loses_its_cache(void **state)
{
	(void)state;
	assert_true(cached_after(false) > 0);
	assert_int_equal(cached_after(true), 0);
}

/* ---- models loaded on demand (Ollama's keep-alive) ---- */

/* The same call twice, `gap_s` apart, on one replica whose engine loads its
 * model on demand in 5 s and unloads it after keep_alive_s idle (< 0:
 * never).  Returns the loads; *reloads, the second call's TTFT and cached
 * prompt tokens. */
static int64_t keep_alive_run(double gap_s, double keep_alive_s, int64_t *reloads, double *ttft2_ns,
			      int64_t *cached2)
{
	struct engine_config cfg = cfg_engine();
	cfg.load_on_demand = true;
	cfg.keep_alive_ns = keep_alive_s < 0 ? -1 : (int64_t)(keep_alive_s * 1e9);
	cfg.model_load_ns = 5 * S;
	struct workload w = {0};
	int64_t gap = (int64_t)(gap_s * 1e9);
	wl_steady(&w, 0, 2 * S, 0.5, 9);
	wl_steady(&w, gap, gap + 2 * S, 0.5, 9);
	assert_int_equal(w.n, 2);
	struct seen a;
	seen_alloc(&a, w.n);
	struct sim s;
	struct diag d;
	diag_init(&d);
	struct res_sink sink = {.ctx = &a, .request = seen_req};
	assert_int_equal(sim_init(&s, &cfg, 1, lin_perf(), sink, NULL, NULL, &d), 0);
	struct watch wt;
	drive(&s, &w, &wt);
	watch_free(&wt);
	assert_int_equal(a.completed, 2);
	struct sim_stats st = sim_get_stats(&s);
	*reloads = st.model_reloads;
	*ttft2_ns = a.ttft_ns[1];
	*cached2 = a.cached_last;
	/* the first call paid the first load */
	assert_true(a.ttft_ns[0] >= 5e9 && a.ttft_ns[0] < 6e9);
	assert_int_equal(st.model_load_ns, st.model_loads * 5 * S);
	sim_release(&s);
	seen_free(&a);
	wl_free(&w);
	return st.model_loads;
}

/* Ollama keeps a model 5 minutes after its last call: calls 6 minutes
 * apart pay two loads (the second after an unload, its cache gone), 4
 * minutes apart one (the second hits the cache); keep_alive -1 pays one
 * whatever the gap. */
static void test_keep_alive_reloads(void **state)
{
	(void)state;
	int64_t reloads, cached;
	double ttft2;
	assert_int_equal(keep_alive_run(360, 300, &reloads, &ttft2, &cached), 2);
	assert_int_equal(reloads, 1);
	assert_true(ttft2 >= 5e9);
	assert_int_equal(cached, 0);
	assert_int_equal(keep_alive_run(240, 300, &reloads, &ttft2, &cached), 1);
	assert_int_equal(reloads, 0);
	assert_true(ttft2 < 1e9);
	assert_true(cached > 0);
	assert_int_equal(keep_alive_run(360, -1, &reloads, &ttft2, &cached), 1);
	assert_int_equal(keep_alive_run(7200, -1, &reloads, &ttft2, &cached), 1);
	assert_int_equal(reloads, 0);
	/* keep_alive 0 unloads after every call */
	assert_int_equal(keep_alive_run(10, 0, &reloads, &ttft2, &cached), 2);
}

/* ---- scale to zero ---- */

static void test_scale_from_zero(void **state)
{
	(void)state;
	struct engine_config cfg = cfg_engine();
	struct workload w = {0};
	/* a burst at 100 s, an idle hour, a burst at 4,000 s */
	wl_steady(&w, 100 * S, 400 * S, 2.0, 3);
	wl_steady(&w, 4000 * S, 4300 * S, 2.0, 4);
	struct seen a;
	seen_alloc(&a, w.n);
	struct cluster *cl = cluster_new(2, (struct res_sink){.ctx = &a, .request = seen_req});
	assert_non_null(cl);
	struct sim s;
	struct diag d;
	diag_init(&d);
	assert_int_equal(sim_init(&s, &cfg, 2, lin_perf(), cluster_sink(cl), NULL, NULL, &d), 0);
	struct elastic_config ec;
	elastic_config_default(&ec);
	ec.autoscale = true;
	ec.metric = AUTOSCALE_INFLIGHT;
	ec.target = 4.0;
	ec.min_replicas = 0;
	ec.max_replicas = 2;
	ec.interval_ns = 15 * S;
	ec.cooldown_ns = 120 * S;
	ec.startup_ns = 150 * S;
	assert_int_equal(sim_set_elastic(&s, &ec, &d), 0);
	struct watch wt;
	drive(&s, &w, &wt);
	struct elastic_stats es = sim_elastic_stats(&s);
	assert_int_equal(a.completed, w.n);
	/* the first call waited for a whole cold start: the next evaluation,
	 * then start-up; later calls of the burst did not */
	assert_true(a.ttft_ns[0] >= (double)ec.startup_ns);
	assert_true(a.ttft_ns[0] <= (double)(ec.startup_ns + ec.interval_ns) + 2e9);
	double max_ttft = 0.0, late = 0.0;
	for (int64_t i = 0; i < w.n; i++) {
		if (a.ttft_ns[i] > max_ttft)
			max_ttft = a.ttft_ns[i];
		if (w.t_ns[i] > 300 * S && w.t_ns[i] < 400 * S && a.ttft_ns[i] > late)
			late = a.ttft_ns[i];
	}
	assert_true(max_ttft >= (double)ec.startup_ns); /* the tail shows it */
	assert_true(late < 5e9);
	/* the second burst paid a cold start too: it had scaled to zero */
	int64_t second = w.n / 2;
	assert_true(a.ttft_ns[second] >= (double)ec.startup_ns);
	assert_true(es.starts >= 2);
	assert_int_equal(wt.active_lo, 0);
	assert_true(wt.active_hi <= 2);
	/* nothing billed while idle (the idle hour, and before the first call) */
	assert_true(watch_billed_s(&wt, 1000 * S, 4000 * S) == 0.0);
	assert_true(watch_billed_s(&wt, 0, 100 * S) == 0.0);
	assert_true(cluster_billed_replica_s(cl, 1000 * S, 4000 * S) == 0.0);
	/* provisioned GPU-hours are the integral the driver measured, over the
	 * run (first arrival to last completion) */
	int64_t t0 = w.t_ns[0], t1 = seen_last_done(&a);
	double billed = watch_billed_s(&wt, t0, t1);
	struct cluster_summary cs;
	cluster_summarize(cl, (double)(t1 - t0) / 1e9, 2, &cs);
	assert_true(cs.gpu_hours_provisioned > 0.0);
	assert_true(fabs(cs.gpu_hours_provisioned - 2.0 * billed / 3600.0) <=
		    1e-9 * cs.gpu_hours_provisioned);
	/* well under two replicas kept up all along */
	assert_true(billed < 0.5 * 2.0 * (double)(t1 - t0) / 1e9);
	/* the same time as each replica's stretches, as a cloud bills them:
	 * one per start (it scaled from zero, twice), each from the start of
	 * its cold start, so none is shorter than the start-up */
	assert_true(cs.replica_up_count >= (size_t)es.starts);
	double stretch_s = 0.0;
	for (size_t i = 0; i < cs.replica_up_count; i++) {
		const struct cost_stretch *st = &cs.replica_up[i];
		stretch_s += st->s;
		assert_false(st->from_start); /* nothing was up at the first call */
		if (!st->to_end)
			assert_true(st->s >= (double)ec.startup_ns / 1e9);
	}
	assert_true(fabs(stretch_s - billed) <= 1e-6 * billed);
	watch_free(&wt);
	sim_release(&s);
	cluster_free(cl);
	seen_free(&a);
	wl_free(&w);
}

/* KEDA with min 0 (polls every 30 s, the metric read 30 s late, 300 s
 * cool-down), one replica starting in 60 s.  A call at 100 s: the poll at
 * 120 s reads it, the reading acts at 150 s (0 -> 1), the replica is up at
 * 210 s, so its TTFT is 110 s and a little.  The last poll that sees the
 * call in flight is at 210 s (acting at 240 s); the first reading acting
 * more than 300 s after that is at 570 s: scaled to zero, billed 420 s.  A
 * call at 1,000 s wakes it again the same way. */
static void test_keda_wakes_from_zero_and_cools_down(void **state)
{
	(void)state;
	struct engine_config cfg = cfg_engine();
	struct workload w = {0};
	wl_steady(&w, 100 * S, 102 * S, 0.5, 3);
	wl_steady(&w, 1000 * S, 1002 * S, 0.5, 4);
	assert_int_equal(w.n, 2);
	struct seen a;
	seen_alloc(&a, w.n);
	struct sim s;
	struct diag d;
	diag_init(&d);
	assert_int_equal(sim_init(&s, &cfg, 1, lin_perf(), (struct res_sink){.ctx = &a, .request = seen_req},
				  NULL, NULL, &d), 0);
	struct elastic_config ec;
	elastic_config_default(&ec);
	ec.autoscale = true;
	ec.policy = AUTOSCALE_POLICY_KEDA;
	ec.target = 4.0;
	ec.min_replicas = 0;
	ec.max_replicas = 1;
	ec.interval_ns = 15 * S;
	ec.polling_ns = 30 * S;
	ec.metric_lag_ns = 30 * S;
	ec.cooldown_ns = 300 * S;
	ec.startup_ns = 60 * S;
	assert_int_equal(sim_set_elastic(&s, &ec, &d), 0);
	struct watch wt;
	drive(&s, &w, &wt);
	struct elastic_stats es = sim_elastic_stats(&s);
	assert_int_equal(a.completed, 2);
	for (int k = 0; k < 2; k++)
		if (!(a.ttft_ns[k] >= 110e9 && a.ttft_ns[k] < 111e9))
			fail_msg("call %d: TTFT %.3f s (expected 110 s and the prefill)", k,
				 a.ttft_ns[k] / 1e9);
	assert_int_equal(es.activations, 2);
	assert_int_equal(es.deactivations, 1); /* the run ends with the second call */
	assert_int_equal(es.starts, 2);
	assert_true(watch_billed_s(&wt, 0, 1000 * S) == 420.0);
	assert_true(watch_billed_s(&wt, 571 * S, 1000 * S) == 0.0);
	watch_free(&wt);
	sim_release(&s);
	seen_free(&a);
	wl_free(&w);
}

/* ---- the time series follows the lifecycle ---- */

#define TS_REPS 4

/* A sink that keeps each replica's state from the replica records and
 * checks every time-series sample against it. */
struct life_watch {
	int32_t life[TS_REPS];
	int64_t samples;
	int64_t idle_samples;      /* samples with no replica billed */
	int64_t starting_samples;  /* samples with a replica starting */
	int64_t down_samples;      /* samples with a replica down */
	int64_t arrivals, completions;
};

static void lw_replica(void *ctx, const struct res_replica *r)
{
	struct life_watch *lw = ctx;
	assert_true(r->replica >= 0 && r->replica < TS_REPS);
	assert_int_equal(lw->life[r->replica], r->from);
	lw->life[r->replica] = r->to;
}

static void lw_sample(void *ctx, const struct res_sample *smp)
{
	struct life_watch *lw = ctx;
	int32_t n[REP_N_LIFE] = {0};
	for (int32_t i = 0; i < smp->n_replicas; i++) {
		assert_int_equal(smp->replicas[i].life, lw->life[i]);
		n[lw->life[i]]++;
	}
	assert_int_equal(smp->replicas_up, n[REP_UP]);
	assert_int_equal(smp->replicas_starting, n[REP_STARTING]);
	assert_int_equal(smp->replicas_draining, n[REP_DRAINING]);
	assert_int_equal(smp->replicas_down, n[REP_DOWN]);
	lw->samples++;
	lw->idle_samples += n[REP_UP] + n[REP_STARTING] + n[REP_DRAINING] == 0;
	lw->starting_samples += n[REP_STARTING] > 0;
	lw->down_samples += n[REP_DOWN] > 0;
	lw->arrivals += smp->arrivals;
	lw->completions += smp->completions;
}

static void lw_request(void *ctx, const struct res_request *r)
{
	(void)ctx;
	(void)r;
}

/* Samples every 10 s of a run that scales from zero, and of one where a
 * replica fails: each replica's state in every sample is the one its
 * records say, and the counts per state agree. */
static void test_time_series_follows_the_lifecycle(void **state)
{
	(void)state;
	struct engine_config cfg = cfg_engine();
	struct workload w = {0};
	wl_steady(&w, 100 * S, 400 * S, 2.0, 3);
	wl_steady(&w, 4000 * S, 4300 * S, 2.0, 4);
	for (int run = 0; run < 2; run++) {
		struct life_watch lw = {0}; /* every replica up at time 0 */
		struct res_sink sink = {.ctx = &lw, .request = lw_request, .replica = lw_replica,
					.sample = lw_sample};
		struct sim s;
		struct diag d;
		diag_init(&d);
		assert_int_equal(sim_init(&s, &cfg, TS_REPS, lin_perf(), sink, NULL, NULL, &d), 0);
		assert_int_equal(sim_set_series(&s, 10 * S, &d), 0);
		struct elastic_config ec;
		elastic_config_default(&ec);
		ec.startup_ns = 150 * S;
		struct fault_spec f = {.replica = 2, .at_ns = 200 * S, .repair_ns = 600 * S};
		if (run == 0) {
			ec.autoscale = true;
			ec.target = 4.0;
			ec.min_replicas = 0;
			ec.max_replicas = TS_REPS;
			ec.interval_ns = 15 * S;
			ec.cooldown_ns = 120 * S;
		} else {
			ec.faults = &f;
			ec.n_faults = 1;
		}
		assert_int_equal(sim_set_elastic(&s, &ec, &d), 0);
		struct watch wt;
		drive(&s, &w, &wt);
		sim_series_flush(&s);
		assert_true(lw.samples > 400);
		assert_int_equal(lw.arrivals, w.n);
		assert_int_equal(lw.completions, w.n);
		assert_true(lw.starting_samples > 0);
		if (run == 0) {
			/* scaled to zero through the idle hour */
			assert_true(lw.idle_samples >= 300);
			assert_int_equal(lw.down_samples, 0);
		} else {
			/* down 600 s, then starting 150 s */
			assert_int_equal(lw.down_samples, 60);
			assert_int_equal(lw.starting_samples, 15);
			assert_int_equal(lw.idle_samples, 0);
		}
		watch_free(&wt);
		sim_release(&s);
	}
	wl_free(&w);
}

/* ---- the autoscaler's bounds and the GPU-hours integral, under every
 * policy and metric ---- */

static void test_autoscaler_stays_in_bounds(void **state)
{
	(void)state;
	struct engine_config cfg = cfg_engine();
	struct workload w = {0};
	/* load that rises and falls: 4, 30, 8, 40, 2 calls/s, five minutes each */
	double rates[] = {4, 30, 8, 40, 2};
	for (int k = 0; k < 5; k++)
		wl_steady(&w, (int64_t)k * 300 * S, (int64_t)(k + 1) * 300 * S, rates[k], 20 + (uint64_t)k);
	for (int run = 0; run < AUTOSCALE_N_METRICS * AUTOSCALE_N_POLICIES; run++) {
		int metric = run % AUTOSCALE_N_METRICS;
		struct seen a;
		seen_alloc(&a, w.n);
		struct cluster *cl = cluster_new(10, (struct res_sink){.ctx = &a, .request = seen_req});
		assert_non_null(cl);
		struct sim s;
		struct diag d;
		diag_init(&d);
		assert_int_equal(sim_init(&s, &cfg, 10, lin_perf(), cluster_sink(cl), NULL, NULL, &d), 0);
		struct router_config rc;
		router_config_default(&rc);
		rc.policy = ROUTER_LEAST_REQUESTS;
		assert_int_equal(sim_set_router(&s, &rc, &d), 0);
		struct elastic_config ec;
		elastic_config_default(&ec);
		ec.autoscale = true;
		ec.policy = (enum autoscale_policy)(run / AUTOSCALE_N_METRICS);
		ec.metric = (enum autoscale_metric)metric;
		ec.target = metric == AUTOSCALE_QUEUE ? 1.0 : metric == AUTOSCALE_KV ? 0.15 : 6.0;
		ec.min_replicas = 2;
		ec.max_replicas = 7;
		ec.interval_ns = 15 * S;
		ec.cooldown_ns = 60 * S;
		ec.startup_ns = 45 * S;
		assert_int_equal(sim_set_elastic(&s, &ec, &d), 0);
		struct watch wt;
		drive(&s, &w, &wt);
		struct elastic_stats es = sim_elastic_stats(&s);
		assert_int_equal(a.completed, w.n);
		/* within [min, max] at every event, and it did move */
		assert_true(wt.active_lo >= ec.min_replicas);
		assert_true(wt.active_hi <= ec.max_replicas);
		assert_true(es.active_min >= ec.min_replicas && es.active_max <= ec.max_replicas);
		assert_true(es.scale_outs > 0);
		assert_true(es.scale_ins > 0);
		assert_true(wt.active_hi > ec.min_replicas);
		/* GPU-hours provisioned = GPUs x the integral of billed replicas */
		int64_t t0 = w.t_ns[0], t1 = seen_last_done(&a);
		double billed = watch_billed_s(&wt, t0, t1);
		struct cluster_summary cs;
		cluster_summarize(cl, (double)(t1 - t0) / 1e9, 4, &cs);
		assert_true(fabs(cs.gpu_hours_provisioned - 4.0 * billed / 3600.0) <=
			    1e-9 * cs.gpu_hours_provisioned);
		/* and less than keeping the most up all along */
		assert_true(billed < 7.0 * (double)(t1 - t0) / 1e9);
		watch_free(&wt);
		sim_release(&s);
		cluster_free(cl);
		seen_free(&a);
	}
	wl_free(&w);
}

/* Load that swings every minute between a burst and a trickle, for half an
 * hour: the autoscaler scales out for each burst at once, and would scale
 * in each trickle, but waits autoscale.cooldown_s (300 s) after its last
 * scaling action, out or in.  No scale-in comes sooner than that after the
 * action before it, and at least one comes on the first evaluation the
 * cooldown allows (it was held back, not merely late). */
static void test_scale_in_waits_for_cooldown(void **state)
{
	(void)state;
	struct engine_config cfg = cfg_engine();
	struct workload w = {0};
	for (int k = 0; k < 15; k++) {
		wl_steady(&w, (int64_t)(120 * k) * S, (int64_t)(120 * k + 60) * S, 20.0, 40 + (uint64_t)k);
		wl_steady(&w, (int64_t)(120 * k + 60) * S, (int64_t)(120 * k + 120) * S, 0.5,
			  70 + (uint64_t)k);
	}
	struct seen a;
	seen_alloc(&a, w.n);
	struct sim s;
	struct diag d;
	diag_init(&d);
	struct res_sink sink = {.ctx = &a, .request = seen_req};
	assert_int_equal(sim_init(&s, &cfg, 6, lin_perf(), sink, NULL, NULL, &d), 0);
	struct router_config rc;
	router_config_default(&rc);
	rc.policy = ROUTER_LEAST_REQUESTS;
	assert_int_equal(sim_set_router(&s, &rc, &d), 0);
	struct elastic_config ec;
	elastic_config_default(&ec);
	ec.autoscale = true;
	ec.metric = AUTOSCALE_INFLIGHT;
	ec.target = 4.0;
	ec.min_replicas = 1;
	ec.max_replicas = 6;
	ec.interval_ns = 15 * S;
	ec.cooldown_ns = 300 * S;
	ec.startup_ns = 20 * S;
	assert_int_equal(sim_set_elastic(&s, &ec, &d), 0);
	struct watch wt;
	drive(&s, &w, &wt);
	struct elastic_stats es = sim_elastic_stats(&s);
	assert_int_equal(a.completed, w.n);
	printf("scale-outs %lld, scale-ins %lld, least time from an action to a scale-in %.0f s\n",
	       (long long)es.scale_outs, (long long)es.scale_ins, (double)wt.min_in_gap_ns / 1e9);
	assert_true(es.scale_outs >= 2);
	assert_int_equal(wt.scale_ins, es.scale_ins);
	assert_true(wt.scale_ins >= 2);
	assert_true(wt.min_in_gap_ns >= ec.cooldown_ns);
	assert_true(wt.min_in_gap_ns < ec.cooldown_ns + ec.interval_ns);
	watch_free(&wt);
	sim_release(&s);
	seen_free(&a);
	wl_free(&w);
}

/* Bad settings are input errors, and nothing elastic is a no-op. */
static void test_settings_checked(void **state)
{
	(void)state;
	struct engine_config cfg = cfg_engine();
	struct sim s;
	struct diag d;
	diag_init(&d);
	struct res_sink sink = {0};
	assert_int_equal(sim_init(&s, &cfg, 2, lin_perf(), sink, NULL, NULL, &d), 0);
	struct elastic_config ec;
	elastic_config_default(&ec);
	assert_false(elastic_active(&ec));
	assert_int_equal(sim_set_elastic(&s, &ec, &d), 0);
	assert_false(s.elastic);
	struct fault_spec f = {.replica = 2, .at_ns = 0, .repair_ns = S};
	ec.faults = &f;
	ec.n_faults = 1;
	assert_int_equal(sim_set_elastic(&s, &ec, &d), DIAG_EINPUT);
	sim_release(&s);
	assert_int_equal(sim_init(&s, &cfg, 2, lin_perf(), sink, NULL, NULL, &d), 0);
	elastic_config_default(&ec);
	ec.autoscale = true;
	ec.target = 1.0;
	ec.interval_ns = S;
	ec.min_replicas = 3;
	assert_int_equal(sim_set_elastic(&s, &ec, &d), DIAG_EINPUT);
	sim_release(&s);
	enum autoscale_metric m;
	assert_true(autoscale_metric_parse("kv", &m));
	assert_int_equal(m, AUTOSCALE_KV);
	assert_false(autoscale_metric_parse("gpu", &m));
	assert_string_equal(rep_life_name(REP_DRAINING), "draining");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_settings_checked),
		cmocka_unit_test(test_one_of_four_fails_for_an_hour),
		cmocka_unit_test(test_fault_without_retries_fails_with_a_reason),
		cmocka_unit_test(test_fault_rate_is_seeded),
		cmocka_unit_test(test_probe_detection_delays_retries),
		cmocka_unit_test(test_hung_replica_still_gets_calls),
		cmocka_unit_test(test_failed_replica_loses_its_cache),
		cmocka_unit_test(test_keep_alive_reloads),
		cmocka_unit_test(test_scale_from_zero),
		cmocka_unit_test(test_keda_wakes_from_zero_and_cools_down),
		cmocka_unit_test(test_autoscaler_stays_in_bounds),
		cmocka_unit_test(test_scale_in_waits_for_cooldown),
		cmocka_unit_test(test_time_series_follows_the_lifecycle),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
