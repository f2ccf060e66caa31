/* SPDX-License-Identifier: Apache-2.0
 * Tests for reports/metrics: numpy-equivalent statistics on known arrays,
 * every metric of a hand-computed run, ITL mean/std/percentiles from runs,
 * rejection reasons, and each error a sink callback can record.
 */
#include "reports/metrics.h"

#include "base/diag.h"
#include "tests/reports/small_run.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* |got - want| <= tol * max(1, |want|) */
#define NEAR(got, want, tol)                                                          \
	do {                                                                          \
		double g_ = (got), w_ = (want);                                       \
		if (!(fabs(g_ - w_) <= (tol) * fmax(1.0, fabs(w_)))) {                \
			print_error("%s = %.17g, want %.17g\n", #got, g_, w_);        \
			fail();                                                       \
		}                                                                     \
	} while (0)

static void check_stats(const struct metrics_stats *s, double mean, double median, double std,
			double p90, double p95, double p99)
{
	NEAR(s->mean, mean, 1e-12);
	NEAR(s->median, median, 1e-12);
	NEAR(s->std, std, 1e-12);
	NEAR(s->p90, p90, 1e-12);
	NEAR(s->p95, p95, 1e-12);
	NEAR(s->p99, p99, 1e-12);
}

static void test_stats_known_arrays(void **state)
{
	(void)state;
	struct metrics_stats st;
	double a[] = {4, 2, 3, 1};
	metrics_stats_of(a, 4, &st);
	/* numpy: mean 2.5, std 1.118..., percentile([1,2,3,4], 90) = 3.7 */
	check_stats(&st, 2.5, 2.5, 1.1180339887498949, 3.7, 3.85, 3.97);
	assert_true(a[0] == 1 && a[3] == 4); /* sorted in place */

	double b[] = {40, 15, 50, 35, 20};
	metrics_stats_of(b, 5, &st);
	check_stats(&st, 32, 35, 12.884098726725126, 46, 48, 49.6);

	double c[] = {7};
	metrics_stats_of(c, 1, &st);
	check_stats(&st, 7, 7, 0, 7, 7, 7);

	metrics_stats_of(NULL, 0, &st);
	check_stats(&st, 0, 0, 0, 0, 0, 0);
}

static void test_small_run(void **state)
{
	(void)state;
	struct metrics *m = metrics_new();
	assert_non_null(m);
	struct res_sink sink = metrics_sink(m);
	assert_ptr_equal(sink.ctx, m);
	small_run_feed(&sink);
	assert_true(metrics_check(m));

	struct metrics_summary s;
	struct diag d;
	diag_init(&d);
	assert_int_equal(metrics_summarize(m, &s, &d), 0);

	assert_int_equal(s.completed, 3);
	assert_int_equal(s.failed, 3);
	assert_int_equal(s.n_failed_reasons, 2);
	assert_string_equal(s.failed_reasons[0].reason, "prompt exceeds KV capacity");
	assert_int_equal(s.failed_reasons[0].count, 2);
	assert_string_equal(s.failed_reasons[1].reason, "unspecified");
	assert_int_equal(s.failed_reasons[1].count, 1);

	NEAR(s.duration_s, 1.8, 1e-15);
	NEAR(s.request_throughput, 3 / 1.8, 1e-12);
	NEAR(s.output_throughput, 16 / 1.8, 1e-12);
	NEAR(s.total_token_throughput, 3516 / 1.8, 1e-12);

	check_stats(&s.ttft_ms, 200, 200, 81.649658092772597, 280, 290, 298);
	check_stats(&s.tpot_ms, 90, 90, 10, 98, 99, 99.8);
	check_stats(&s.e2el_ms, 573.33333333333337, 500, 338.75589375766668, 916, 968, 1009.6);
	/* ITL point masses 10, 20 x 8, 30, 40 x 2: exact, as numpy on the 12 values */
	assert_int_equal(s.itl_count, 12);
	check_stats(&s.itl_ms, 23.333333333333332, 20, 8.4983658559879753, 39, 40, 40);

	assert_int_equal(s.prompt_tokens, 3500);
	assert_int_equal(s.output_tokens, 16);
	assert_int_equal(s.cached_prompt_tokens, 1400);
	assert_int_equal(s.computed_prefill_tokens, 2300);
	assert_int_equal(s.inflight_miss_tokens, 150);
	NEAR(s.prefix_cache_hit_rate, 0.4, 1e-15);
	assert_int_equal(s.preemptions, 3);

	assert_int_equal(s.replicas, 3);
	NEAR(s.gpu_busy_fraction, 1.0 / 3.0, 1e-15);

	assert_int_equal(s.sessions, 2);
	NEAR(s.session_calls_mean, 2.0, 0);
	NEAR(s.session_makespan_s.mean, 1.25, 1e-15);
	NEAR(s.session_makespan_s.median, 1.25, 1e-15);
	NEAR(s.session_makespan_s.p90, 1.85, 1e-12);
	NEAR(s.session_makespan_s.p95, 1.925, 1e-12);
	NEAR(s.session_makespan_s.p99, 1.985, 1e-12);
	assert_int_equal(s.tasks, 3);
	assert_int_equal(s.tasks_accepted, 1);
	assert_int_equal(s.tasks_accept_known, 2);
	NEAR(s.task_makespan_s.mean, 1.1666666666666667, 1e-12);
	NEAR(s.task_makespan_s.median, 1.0, 1e-12);
	NEAR(s.task_makespan_s.p90, 1.8, 1e-12);
	NEAR(s.task_makespan_s.p95, 1.9, 1e-12);
	NEAR(s.task_makespan_s.p99, 1.98, 1e-12);

	/* Summarizing twice gives the same answer (the kept arrays are not sorted in place). */
	struct metrics_summary s2;
	assert_int_equal(metrics_summarize(m, &s2, &d), 0);
	assert_memory_equal(&s, &s2, sizeof(s));
	metrics_free(m);
}

static void test_replicas_override(void **state)
{
	(void)state;
	struct metrics *m = metrics_new();
	assert_non_null(m);
	struct res_sink sink = metrics_sink(m);
	small_run_feed(&sink);
	metrics_set_replicas(m, 4);
	struct metrics_summary s;
	struct diag d;
	diag_init(&d);
	assert_int_equal(metrics_summarize(m, &s, &d), 0);
	assert_int_equal(s.replicas, 4);
	NEAR(s.gpu_busy_fraction, 0.25, 1e-15);
	metrics_set_replicas(m, 0); /* back to 1 + highest index seen */
	assert_int_equal(metrics_summarize(m, &s, &d), 0);
	assert_int_equal(s.replicas, 3);
	metrics_free(m);
}

/* Goodput counts completed requests within every objective set; a
 * one-token output has TPOT 0 (R2), failed requests are never good. */
static void test_goodput(void **state)
{
	(void)state;
	static const struct {
		double ttft_ms, tpot_ms;
		int64_t good;
	} cases[] = {
		{0, 0, 3},     /* no objective: every completed request */
		{250, 0, 2},   /* R1 (100 ms), R2 (200 ms) */
		{250, 90, 1},  /* R1's TPOT 100 ms fails; R2 has none */
		{50, 0, 0},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct metrics *m = metrics_new();
		assert_non_null(m);
		metrics_set_slo(m, cases[i].ttft_ms, cases[i].tpot_ms);
		struct res_sink sink = metrics_sink(m);
		small_run_feed(&sink);
		struct metrics_summary s;
		struct diag d;
		diag_init(&d);
		assert_int_equal(metrics_summarize(m, &s, &d), 0);
		assert_int_equal(s.good_requests, cases[i].good);
		NEAR(s.request_goodput, (double)cases[i].good / 1.8, 1e-12);
		NEAR(s.slo_attainment, (double)cases[i].good / 6.0, 1e-15);
		metrics_free(m);
	}
}

static void test_empty(void **state)
{
	(void)state;
	struct metrics *m = metrics_new();
	assert_non_null(m);
	assert_true(metrics_check(m));
	struct metrics_summary s, zero;
	memset(&zero, 0, sizeof(zero));
	struct diag d;
	diag_init(&d);
	assert_int_equal(metrics_summarize(m, &s, &d), 0);
	assert_int_equal(s.completed, 0);
	assert_int_equal(s.replicas, 0);
	assert_true(s.duration_s == 0.0 && s.request_throughput == 0.0);
	assert_true(s.itl_ms.p99 == 0.0 && s.gpu_busy_fraction == 0.0);
	assert_true(s.prefix_cache_hit_rate == 0.0 && s.sessions == 0);
	assert_memory_equal(&s, &zero, sizeof(s));
	metrics_free(m);
	metrics_free(NULL);
}

/* Only a rejection at one instant: duration 0, so every throughput is 0. */
static void test_zero_duration(void **state)
{
	(void)state;
	struct metrics *m = metrics_new();
	assert_non_null(m);
	struct res_sink sink = metrics_sink(m);
	struct res_request r = {.status = RES_REJECTED, .reason = "too long", .arrival_ns = 5 * SEC,
				.replica = -1};
	sink.request(sink.ctx, &r);
	struct metrics_summary s;
	struct diag d;
	diag_init(&d);
	assert_int_equal(metrics_summarize(m, &s, &d), 0);
	assert_int_equal(s.failed, 1);
	assert_true(s.duration_s == 0.0);
	assert_true(s.request_throughput == 0.0 && s.output_throughput == 0.0 &&
		    s.total_token_throughput == 0.0);
	metrics_free(m);
}

/* Calls arriving per bin and their token-weighted hit rate, for the
 * report's charts: bins from the first arrival, rejected calls counted as
 * arrivals but not in the hit rate, a bin without completed calls NAN. */
static void test_per_bin(void **state)
{
	(void)state;
	struct metrics *m = metrics_new();
	assert_non_null(m);
	struct res_sink sink = metrics_sink(m);
	static const struct {
		double t_s;
		int64_t prompt, cached;
		bool rejected;
	} CALLS[] = {
		{10, 100, 50, false}, {20, 300, 0, false}, {69, 100, 100, true},
		{75, 100, 90, false}, {190, 50, 0, true},
	};
	for (size_t i = 0; i < sizeof(CALLS) / sizeof(CALLS[0]); i++) {
		int64_t t = (int64_t)(CALLS[i].t_s * 1e9);
		struct res_request r = {.status = CALLS[i].rejected ? RES_REJECTED : RES_COMPLETED,
					.reason = "x", .replica = CALLS[i].rejected ? -1 : 0,
					.arrival_ns = t, .first_token_ns = t + SEC, .done_ns = t + 2 * SEC,
					.prompt_tokens = CALLS[i].prompt,
					.cached_prompt_tokens = CALLS[i].cached, .output_tokens = 2};
		sink.request(sink.ctx, &r);
	}
	size_t n, nh;
	double *count = metrics_arrivals_per_bin(m, 60.0, &n);
	double *hit = metrics_hit_rate_per_bin(m, 60.0, &nh);
	/* from t = 10 s: [10, 70) [70, 130) [130, 190) [190, 250) */
	assert_int_equal(n, 4);
	assert_int_equal(nh, 4);
	assert_true(count[0] == 3 && count[1] == 1 && count[2] == 0 && count[3] == 1);
	NEAR(hit[0], 50.0 / 400.0, 1e-12);
	NEAR(hit[1], 0.9, 1e-12);
	assert_true(isnan(hit[2]) && isnan(hit[3]));
	free(count);
	free(hit);
	metrics_free(m);
}

static void feed_run(const struct res_sink *sink, double first_ms, double last_ms,
		     int64_t steps, int32_t seqs)
{
	/* step i of k lasts first + (last - first) * i / (k - 1) */
	double total = (double)steps * (first_ms + last_ms) / 2.0 * 1e6;
	struct res_itl_run r = {.first_ns = first_ms * 1e6, .last_ns = last_ms * 1e6,
				.total_ns = total, .steps = steps, .seqs = seqs};
	sink->itl_run(sink->ctx, &r);
}

/* Append the values a run stands for to x. */
static size_t expand_run(double *x, size_t n, double first_ms, double last_ms,
			 int64_t steps, int32_t seqs)
{
	for (int32_t s = 0; s < seqs; s++)
		for (int64_t i = 0; i < steps; i++)
			x[n++] = steps == 1 ? first_ms
					    : first_ms + (last_ms - first_ms) * (double)i /
							       (double)(steps - 1);
	return n;
}

/* Mean and std of a linear run are exact: 10, 20, 30, 40 three times, then 20. */
static void test_itl_linear_mean_std(void **state)
{
	(void)state;
	struct metrics *m = metrics_new();
	assert_non_null(m);
	struct res_sink sink = metrics_sink(m);
	feed_run(&sink, 10, 40, 4, 3);
	struct metrics_summary s;
	struct diag d;
	diag_init(&d);
	assert_int_equal(metrics_summarize(m, &s, &d), 0);
	assert_int_equal(s.itl_count, 12);
	NEAR(s.itl_ms.mean, 25.0, 1e-14);
	NEAR(s.itl_ms.std, sqrt(125.0), 1e-14);
	/* The spread of 12 values over [10, 40] answers for 12 evenly spaced
	 * values; the true median of {10,20,30,40} x 3 is 25 either way. */
	NEAR(s.itl_ms.median, 25.0, 1e-12);

	feed_run(&sink, 20, 20, 1, 1);
	assert_int_equal(metrics_summarize(m, &s, &d), 0);
	assert_int_equal(s.itl_count, 13);
	NEAR(s.itl_ms.mean, 24.615384615384617, 1e-14);
	NEAR(s.itl_ms.std, 10.824036368823299, 1e-13);
	metrics_free(m);
}

/* Runs shaped like real decode batches (hundreds of steps, step time growing
 * slowly): mean and std match the expanded values, percentiles within the
 * histogram's 0.1% resolution. */
static void test_itl_runs_within_resolution(void **state)
{
	(void)state;
	struct {
		double first_ms, last_ms;
		int64_t steps;
		int32_t seqs;
	} runs[] = {
		{20.0, 21.5, 300, 8}, {30.0, 33.0, 1000, 2}, {25.0, 25.0, 1, 5},
		{12.0, 12.1, 50, 1},  {21.0, 20.2, 200, 3},  {45.0, 47.0, 700, 1},
	};
	size_t nruns = sizeof(runs) / sizeof(runs[0]);
	size_t total = 0;
	for (size_t i = 0; i < nruns; i++)
		total += (size_t)runs[i].steps * (size_t)runs[i].seqs;
	double *x = malloc(total * sizeof(double));
	assert_non_null(x);

	struct metrics *m = metrics_new();
	assert_non_null(m);
	struct res_sink sink = metrics_sink(m);
	size_t n = 0;
	for (size_t i = 0; i < nruns; i++) {
		feed_run(&sink, runs[i].first_ms, runs[i].last_ms, runs[i].steps, runs[i].seqs);
		n = expand_run(x, n, runs[i].first_ms, runs[i].last_ms, runs[i].steps, runs[i].seqs);
	}
	assert_int_equal(n, total);
	assert_true(metrics_check(m));
	struct metrics_stats want;
	metrics_stats_of(x, n, &want);

	struct metrics_summary s;
	struct diag d;
	diag_init(&d);
	assert_int_equal(metrics_summarize(m, &s, &d), 0);
	assert_int_equal(s.itl_count, (int64_t)total);
	NEAR(s.itl_ms.mean, want.mean, 1e-12);
	NEAR(s.itl_ms.std, want.std, 1e-9);
	assert_true(fabs(s.itl_ms.median - want.median) <= 1e-3 * want.median);
	assert_true(fabs(s.itl_ms.p90 - want.p90) <= 1e-3 * want.p90);
	assert_true(fabs(s.itl_ms.p95 - want.p95) <= 1e-3 * want.p95);
	assert_true(fabs(s.itl_ms.p99 - want.p99) <= 1e-3 * want.p99);
	free(x);
	metrics_free(m);
}

static void reject(const struct res_sink *sink, const char *reason)
{
	struct res_request r = {.status = RES_REJECTED, .reason = reason, .replica = -1};
	sink->request(sink->ctx, &r);
}

static void test_reasons(void **state)
{
	(void)state;
	struct metrics *m = metrics_new();
	assert_non_null(m);
	struct res_sink sink = metrics_sink(m);
	char longer[METRICS_REASON_MAX_LEN + 50];
	memset(longer, 'z', sizeof(longer) - 1);
	longer[sizeof(longer) - 1] = '\0';
	char copy[] = "beta";
	reject(&sink, "gamma");
	reject(&sink, copy);
	copy[0] = 'X'; /* the reason was copied, not borrowed */
	reject(&sink, "alpha");
	reject(&sink, "gamma");
	reject(&sink, NULL);
	reject(&sink, longer);
	reject(&sink, "beta");
	longer[METRICS_REASON_MAX_LEN + 10] = 'y'; /* differs only past the cut */
	reject(&sink, longer);
	reject(&sink, "gamma");
	assert_true(metrics_check(m));

	struct metrics_summary s;
	struct diag d;
	diag_init(&d);
	assert_int_equal(metrics_summarize(m, &s, &d), 0);
	assert_int_equal(s.failed, 9);
	assert_int_equal(s.completed, 0);
	assert_int_equal(s.n_failed_reasons, 5);
	const char *names[] = {"alpha", "beta", "gamma", "unspecified", NULL};
	int64_t counts[] = {1, 2, 3, 1, 2};
	for (size_t i = 0; i < 5; i++) {
		if (names[i])
			assert_string_equal(s.failed_reasons[i].reason, names[i]);
		else
			assert_int_equal(strlen(s.failed_reasons[i].reason), METRICS_REASON_MAX_LEN);
		assert_int_equal(s.failed_reasons[i].count, counts[i]);
	}
	metrics_free(m);
}

static void test_reason_limit(void **state)
{
	(void)state;
	struct metrics *m = metrics_new();
	assert_non_null(m);
	struct res_sink sink = metrics_sink(m);
	char buf[32];
	for (int i = 0; i <= METRICS_MAX_REASONS; i++) {
		snprintf(buf, sizeof(buf), "reason %03d", i);
		reject(&sink, buf);
	}
	struct metrics_summary s;
	struct diag d;
	diag_init(&d);
	assert_int_equal(metrics_summarize(m, &s, &d), DIAG_ENOMEM);
	assert_non_null(strstr(d.msg, "reason 256"));
	metrics_free(m);
}

static void test_record_limit(void **state)
{
	(void)state;
	struct metrics *m = metrics_new();
	assert_non_null(m);
	metrics_set_max_records(m, 2);
	struct res_sink sink = metrics_sink(m);
	struct res_request r = {.status = RES_COMPLETED, .output_tokens = 1, .done_ns = 10};
	for (int i = 0; i < 3; i++)
		sink.request(sink.ctx, &r);
	struct metrics_summary s;
	struct diag d;
	diag_init(&d);
	assert_int_equal(metrics_summarize(m, &s, &d), DIAG_ENOMEM);
	assert_string_equal(d.msg, "metrics: more than 2 completed requests (the limit)");
	metrics_free(m);

	m = metrics_new();
	assert_non_null(m);
	metrics_set_max_records(m, 1);
	sink = metrics_sink(m);
	struct res_span sp = {.start_ns = 0, .end_ns = SEC, .calls = 1};
	sink.task(sink.ctx, &sp);
	sink.task(sink.ctx, &sp);
	diag_init(&d);
	assert_int_equal(metrics_summarize(m, &s, &d), DIAG_ENOMEM);
	assert_string_equal(d.msg, "metrics: more than 1 tasks (the limit)");
	metrics_free(m);
}

/* Each malformed record is an input error; the first one wins. */
static void test_malformed_records(void **state)
{
	(void)state;
	struct diag d;
	struct metrics_summary s;

	struct metrics *m = metrics_new();
	assert_non_null(m);
	struct res_sink sink = metrics_sink(m);
	struct res_itl_run bad_itl = {.first_ns = -1, .last_ns = 5, .total_ns = 4, .steps = 1, .seqs = 1};
	sink.itl_run(sink.ctx, &bad_itl);
	struct res_busy bad_busy = {.replica = 0, .start_ns = 10, .end_ns = 5};
	sink.busy(sink.ctx, &bad_busy);
	diag_init(&d);
	assert_int_equal(metrics_summarize(m, &s, &d), DIAG_EINPUT);
	assert_non_null(strstr(d.msg, "malformed ITL run"));
	assert_int_equal(s.completed, 0);
	metrics_free(m);

	m = metrics_new();
	assert_non_null(m);
	sink = metrics_sink(m);
	bad_itl.first_ns = NAN;
	sink.itl_run(sink.ctx, &bad_itl);
	diag_init(&d);
	assert_int_equal(metrics_summarize(m, &s, &d), DIAG_EINPUT);
	metrics_free(m);

	m = metrics_new();
	assert_non_null(m);
	sink = metrics_sink(m);
	sink.busy(sink.ctx, &bad_busy);
	diag_init(&d);
	assert_int_equal(metrics_summarize(m, &s, &d), DIAG_EINPUT);
	assert_non_null(strstr(d.msg, "malformed busy record"));
	metrics_free(m);

	m = metrics_new();
	assert_non_null(m);
	sink = metrics_sink(m);
	struct res_request r = {.status = (enum res_status)7};
	sink.request(sink.ctx, &r);
	diag_init(&d);
	assert_int_equal(metrics_summarize(m, &s, &d), DIAG_EINPUT);
	assert_string_equal(d.msg, "metrics: request with unknown status 7");
	metrics_free(m);

	/* Empty runs are not errors: they carry no latency. */
	m = metrics_new();
	assert_non_null(m);
	sink = metrics_sink(m);
	struct res_itl_run empty = {.first_ns = 5, .last_ns = 5, .total_ns = 0, .steps = 0, .seqs = 4};
	sink.itl_run(sink.ctx, &empty);
	diag_init(&d);
	assert_int_equal(metrics_summarize(m, &s, &d), 0);
	assert_int_equal(s.itl_count, 0);
	metrics_free(m);
}

/* Headroom: achieved FLOPs and bytes against peak over run time and over
 * step time, batch and KV use weighted by step time.  Two steps on one
 * replica in a 10 s run: 2 s with 4 seqs, KV 100 -> 300 blocks, 2e15 FLOPs,
 * 4e12 bytes; 3 s with 10 seqs, KV 500 -> 500, 3e15 FLOPs, 6e12 bytes.
 * Capacity: 40 seqs, 1000 blocks, 1e15 FLOP/s, 2e12 B/s. */
static void test_headroom(void **state)
{
	(void)state;
	struct metrics *m = metrics_new();
	assert_non_null(m);
	struct res_capacity cap = {.max_num_seqs = 40, .kv_blocks = 1000, .peak_flops = 1e15,
				       .peak_bytes_per_s = 2e12};
	metrics_set_capacity(m, &cap);
	struct res_sink sink = metrics_sink(m);
	const int64_t S = 1000000000;
	struct res_request a = {.status = RES_COMPLETED, .arrival_ns = 0, .first_token_ns = S,
				.done_ns = 2 * S, .prompt_tokens = 10, .output_tokens = 2};
	struct res_request b = a;
	b.arrival_ns = 9 * S;
	b.first_token_ns = b.done_ns = 10 * S;
	b.output_tokens = 1;
	sink.request(sink.ctx, &a);
	sink.request(sink.ctx, &b);
	struct res_busy s1 = {.replica = 0, .start_ns = 0, .end_ns = 2 * S, .steps = 5, .seqs = 4,
			      .kv_blocks_start = 100, .kv_blocks_end = 300, .flops = 2e15,
			      .bytes = 4e12};
	struct res_busy s2 = {.replica = 0, .start_ns = 5 * S, .end_ns = 8 * S, .steps = 1,
			      .seqs = 10, .kv_blocks_start = 500, .kv_blocks_end = 500,
			      .flops = 3e15, .bytes = 6e12};
	sink.busy(sink.ctx, &s1);
	sink.busy(sink.ctx, &s2);
	struct metrics_summary s;
	struct diag d;
	diag_init(&d);
	assert_int_equal(metrics_summarize(m, &s, &d), 0);
	NEAR(s.gpu_busy_fraction, 0.5, 1e-15);
	NEAR(s.compute_fraction, 5e15 / (10 * 1e15), 1e-15);
	NEAR(s.compute_fraction_busy, 5e15 / (5 * 1e15), 1e-15);
	NEAR(s.bandwidth_fraction, 10e12 / (10 * 2e12), 1e-15);
	NEAR(s.bandwidth_fraction_busy, 10e12 / (5 * 2e12), 1e-15);
	NEAR(s.batch_seqs_mean, (4.0 * 2 + 10.0 * 3) / 5, 1e-15);
	NEAR(s.batch_occupancy, 7.6 / 40, 1e-15);
	assert_int_equal(s.batch_seqs_max, 10);
	NEAR(s.kv_use_mean, (200.0 * 2 + 500.0 * 3) / 5 / 1000, 1e-15);
	NEAR(s.kv_use_peak, 0.5, 1e-15);
	metrics_free(m);
}

/* The peak window is the hour whose arriving calls bring the most tokens,
 * with its own latency figures.  Calls: one each minute for three hours
 * with 100 tokens and TTFT 10 ms, plus 30 calls of 1000 tokens and TTFT
 * 500 ms between 1:30 and 2:00; one of them fails. */
static void test_peak_window(void **state)
{
	(void)state;
	struct metrics *m = metrics_new();
	assert_non_null(m);
	metrics_set_slo(m, 100, 0);
	struct res_sink sink = metrics_sink(m);
	const int64_t MIN = 60LL * 1000000000;
	for (int64_t i = 0; i < 180; i++) {
		struct res_request r = {.status = RES_COMPLETED, .arrival_ns = i * MIN,
					.first_token_ns = i * MIN + 10000000,
					.done_ns = i * MIN + 20000000, .prompt_tokens = 90,
					.output_tokens = 10};
		sink.request(sink.ctx, &r);
	}
	for (int64_t i = 0; i < 30; i++) {
		struct res_request r = {.status = RES_COMPLETED, .arrival_ns = 90 * MIN + i * MIN + 1,
					.first_token_ns = 90 * MIN + i * MIN + 1 + 500000000,
					.done_ns = 90 * MIN + i * MIN + 1 + 600000000,
					.prompt_tokens = 999, .output_tokens = 1};
		if (i == 29) {
			r.status = RES_REJECTED;
			r.reason = "too long";
		}
		sink.request(sink.ctx, &r);
	}
	struct metrics_summary s;
	struct diag d;
	diag_init(&d);
	assert_int_equal(metrics_summarize(m, &s, &d), 0);
	NEAR(s.peak_window_s, 3600, 0);
	/* every hour-long window holding all 30 big calls (the last arrives at
	 * minute 119 + 1 ns) ties on tokens (60 small + 30 big); the first such
	 * starts with the small call of minute 60 */
	assert_int_equal(s.peak_calls, 90);
	assert_int_equal(s.peak_failed, 1);
	assert_int_equal(s.peak_completed, 89);
	assert_int_equal(s.peak_tokens, 60 * 100 + 30 * 1000);
	NEAR(s.peak_offset_s, 60 * 60, 1e-9);
	NEAR(s.peak_ttft_ms.median, 10, 1e-12);
	NEAR(s.peak_ttft_ms.p99, 500, 1e-12);
	NEAR(s.peak_slo_attainment, 60.0 / 90, 1e-15);
	NEAR(s.peak_tpot_ms.median, 10.0 / 9, 1e-12);
	metrics_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stats_known_arrays),
		cmocka_unit_test(test_small_run),
		cmocka_unit_test(test_goodput),
		cmocka_unit_test(test_replicas_override),
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_zero_duration),
		cmocka_unit_test(test_itl_linear_mean_std),
		cmocka_unit_test(test_itl_runs_within_resolution),
		cmocka_unit_test(test_reasons),
		cmocka_unit_test(test_reason_limit),
		cmocka_unit_test(test_record_limit),
		cmocka_unit_test(test_malformed_records),
		cmocka_unit_test(test_headroom),
		cmocka_unit_test(test_peak_window),
		cmocka_unit_test(test_per_bin),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
