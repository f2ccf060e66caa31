/* SPDX-License-Identifier: Apache-2.0
 * test_synth_bench: vllm-bench-serve-like workloads.  Fixed lengths are
 * exact, random lengths stay in vLLM's range and average the requested
 * length, the shared prefix is the only shared content, open-loop arrivals
 * keep the requested rate and burstiness (gamma inter-arrivals: coefficient
 * of variation 1/sqrt(burstiness)), an infinite rate puts every request at
 * t = 0, fixed concurrency makes exactly C back-to-back clients, options out
 * of range are refused, and the same seed gives the same file.
 */
#include "tests/traces/testutil.h"

#include "base/diag.h"
#include "base/map.h"
#include "traces/synth_bench.h"
#include "traces/trace.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

static struct synth_bench_opts opts(enum synth_bench_kind kind, int64_t in, int64_t out, int64_t n)
{
	struct synth_bench_opts o = {.kind = kind, .input_len = in, .output_len = out,
				     .num_prompts = n, .request_rate = INFINITY, .burstiness = 1,
				     .seed = 42};
	return o;
}

/* Stream every session; calls back per call. */
struct seen {
	int64_t calls, sessions;
	int64_t min_in, max_in, min_out, max_out;
	double sum_in, sum_out;
	double t_first, t_last;
	double *arrivals;
	size_t n_arr;
	struct map contents;  /* content -> times seen */
	int64_t max_calls_per_session, min_calls_per_session;
};

static void run(const struct synth_bench_opts *o, struct seen *v, bool keep_arrivals)
{
	memset(v, 0, sizeof(*v));
	v->min_in = v->min_out = INT64_MAX;
	v->min_calls_per_session = INT64_MAX;
	map_init(&v->contents);
	if (keep_arrivals) {
		v->arrivals = malloc((size_t)o->num_prompts * sizeof(double));
		assert_non_null(v->arrivals);
	}
	struct diag d;
	diag_init(&d);
	struct synth_bench *b = NULL;
	assert_int_equal(synth_bench_new(&b, o, &d), 0);
	struct trace_session *s;
	int got;
	double last = 0;
	while ((got = synth_bench_next(b, &s, &d)) == 1) {
		assert_true(trace_session_check(s));
		assert_true(s->t_s >= last);
		last = s->t_s;
		if (v->sessions == 0)
			v->t_first = s->t_s;
		v->t_last = s->t_s;
		v->sessions++;
		assert_int_equal(s->open_loop, o->max_concurrency == 0);
		if ((int64_t)s->n_calls > v->max_calls_per_session)
			v->max_calls_per_session = (int64_t)s->n_calls;
		if ((int64_t)s->n_calls < v->min_calls_per_session)
			v->min_calls_per_session = (int64_t)s->n_calls;
		if (keep_arrivals)
			v->arrivals[v->n_arr++] = s->t_s;
		for (size_t i = 0; i < s->n_calls; i++) {
			const struct trace_call *c = &s->calls[i];
			assert_false(c->extends_prev);
			assert_true(c->gap_s == 0);
			int64_t own = c->prompt_tokens - o->shared_prefix_len;
			v->calls++;
			v->min_in = own < v->min_in ? own : v->min_in;
			v->max_in = own > v->max_in ? own : v->max_in;
			v->min_out = c->output_tokens < v->min_out ? c->output_tokens : v->min_out;
			v->max_out = c->output_tokens > v->max_out ? c->output_tokens : v->max_out;
			v->sum_in += (double)own;
			v->sum_out += (double)c->output_tokens;
			for (size_t k = 0; k < c->n_segs; k++) {
				uint64_t *n = map_get(&v->contents, c->segs[k].content);
				if (n)
					(*n)++;
				else
					map_put(&v->contents, c->segs[k].content, 1);
			}
		}
		trace_session_free(s);
	}
	assert_int_equal(got, 0);
	const struct synth_bench_stats *st = synth_bench_stats(b);
	assert_int_equal(st->requests, v->calls);
	assert_int_equal(st->sessions, v->sessions);
	synth_bench_free(b);
}

static void seen_release(struct seen *v)
{
	map_release(&v->contents);
	free(v->arrivals);
}

static void test_fixed_lengths_and_prefix(void **state)
{
	(void)state;
	struct synth_bench_opts o = opts(SYNTH_BENCH_FIXED, 1000, 77, 300);
	o.shared_prefix_len = 512;
	struct seen v;
	run(&o, &v, false);
	assert_int_equal(v.calls, 300);
	assert_int_equal(v.sessions, 300);
	assert_int_equal(v.min_in, 1000);
	assert_int_equal(v.max_in, 1000);
	assert_int_equal(v.min_out, 77);
	assert_int_equal(v.max_out, 77);
	/* one prefix content seen by every prompt, every other content once */
	assert_int_equal(v.contents.len, 301);
	uint64_t *shared = map_get(&v.contents, trace_content_str("bench/shared-prefix", 512));
	assert_non_null(shared);
	assert_int_equal(*shared, 300);
	/* infinite rate: everything at t = 0 */
	assert_true(v.t_first == 0 && v.t_last == 0);
	seen_release(&v);
}

static void test_random_lengths(void **state)
{
	(void)state;
	struct synth_bench_opts o = opts(SYNTH_BENCH_RANDOM, 1000, 200, 20000);
	o.range_ratio = 0.25;
	struct seen v;
	run(&o, &v, false);
	/* vLLM's range: integers in [floor(len*(1-r)), ceil(len*(1+r))] */
	assert_true(v.min_in >= 750 && v.max_in <= 1250);
	assert_true(v.min_out >= 150 && v.max_out <= 250);
	/* uniform: the extremes are reached and the mean is the length */
	assert_true(v.min_in <= 752 && v.max_in >= 1248);
	assert_true(fabs(v.sum_in / (double)v.calls - 1000) < 5);
	assert_true(fabs(v.sum_out / (double)v.calls - 200) < 1.5);
	assert_int_equal(v.contents.len, 20000); /* no prefix: nothing shared */
	seen_release(&v);
	/* ratio 0 (vLLM's default) gives the exact lengths */
	o.range_ratio = 0;
	o.num_prompts = 50;
	run(&o, &v, false);
	assert_true(v.min_in == 1000 && v.max_in == 1000 && v.min_out == 200 && v.max_out == 200);
	seen_release(&v);
}

static void interarrival_moments(const struct seen *v, double *mean, double *cv)
{
	double s = 0, s2 = 0;
	size_t n = v->n_arr - 1;
	for (size_t i = 1; i < v->n_arr; i++) {
		double g = v->arrivals[i] - v->arrivals[i - 1];
		s += g;
		s2 += g * g;
	}
	*mean = s / (double)n;
	*cv = sqrt(s2 / (double)n - *mean * *mean) / *mean;
}

static void test_rate_and_burstiness(void **state)
{
	(void)state;
	struct synth_bench_opts o = opts(SYNTH_BENCH_RANDOM, 128, 16, 20000);
	o.request_rate = 10;
	const double shapes[] = {1.0, 0.25, 4.0};
	for (size_t i = 0; i < 3; i++) {
		o.burstiness = shapes[i];
		struct seen v;
		run(&o, &v, true);
		double mean, cv;
		interarrival_moments(&v, &mean, &cv);
		double rate = (double)(v.n_arr - 1) / (v.t_last - v.t_first);
		if (fabs(rate - 10) > 0.4)
			fail_msg("burstiness %g: rate %g, requested 10", shapes[i], rate);
		double want_cv = 1 / sqrt(shapes[i]);
		if (fabs(cv - want_cv) > 0.06 * want_cv)
			fail_msg("burstiness %g: cv %g, expected %g", shapes[i], cv, want_cv);
		assert_true(v.t_first == 0);
		seen_release(&v);
	}
}

static void test_max_concurrency(void **state)
{
	(void)state;
	struct synth_bench_opts o = opts(SYNTH_BENCH_FIXED, 256, 32, 103);
	o.max_concurrency = 10;
	struct seen v;
	run(&o, &v, false);
	assert_int_equal(v.sessions, 10);
	assert_int_equal(v.calls, 103);
	/* prompts are dealt round robin: 11 or 10 per client */
	assert_int_equal(v.max_calls_per_session, 11);
	assert_int_equal(v.min_calls_per_session, 10);
	assert_true(v.t_first == 0 && v.t_last == 0);
	seen_release(&v);
	/* fewer prompts than clients: one client per prompt */
	o.num_prompts = 4;
	run(&o, &v, false);
	assert_int_equal(v.sessions, 4);
	assert_int_equal(v.max_calls_per_session, 1);
	seen_release(&v);
}

static void test_same_seed_same_file(void **state)
{
	(void)state;
	char a[512], b[512], c[512];
	testutil_scratch(a, sizeof(a), "bench_a.jsonl");
	testutil_scratch(b, sizeof(b), "bench_b.jsonl");
	testutil_scratch(c, sizeof(c), "bench_c.jsonl");
	struct synth_bench_opts o = opts(SYNTH_BENCH_RANDOM, 500, 50, 200);
	o.range_ratio = 0.5;
	o.request_rate = 3;
	o.burstiness = 0.5;
	o.shared_prefix_len = 100;
	struct diag d;
	diag_init(&d);
	struct synth_bench_stats st;
	assert_int_equal(synth_bench_write(&o, a, false, &st, &d), 0);
	assert_int_equal(st.requests, 200);
	assert_int_equal(synth_bench_write(&o, b, false, NULL, &d), 0);
	o.seed = 43;
	assert_int_equal(synth_bench_write(&o, c, false, NULL, &d), 0);
	struct trace_session **x, **y, **z;
	size_t nx, ny, nz;
	char msg[DIAG_MSG_MAX];
	assert_int_equal(testutil_read_all(a, &x, &nx, msg, sizeof(msg)), 0);
	assert_int_equal(testutil_read_all(b, &y, &ny, msg, sizeof(msg)), 0);
	assert_int_equal(testutil_read_all(c, &z, &nz, msg, sizeof(msg)), 0);
	assert_int_equal(nx, 200);
	assert_int_equal(ny, 200);
	bool differ = false;
	for (size_t i = 0; i < nx; i++) {
		assert_true(testutil_session_equal(x[i], y[i], true));
		differ |= !testutil_session_equal(x[i], z[i], false);
	}
	assert_true(differ);
	testutil_free_all(x, nx);
	testutil_free_all(y, ny);
	testutil_free_all(z, nz);
}

static void test_bad_options(void **state)
{
	(void)state;
	struct {
		struct synth_bench_opts o;
		const char *msg;
	} cases[6];
	for (int i = 0; i < 6; i++)
		cases[i].o = opts(SYNTH_BENCH_RANDOM, 100, 10, 10);
	cases[0].o.kind = SYNTH_BENCH_FIXED;
	cases[0].o.range_ratio = 0.1;
	cases[0].msg = "--range-ratio applies to the random workload only (expected no --range-ratio "
		       "with --workload fixed)";
	cases[1].o.range_ratio = 1.0;
	cases[1].msg = "--range-ratio 1 out of range (expected 0 <= r < 1)";
	cases[2].o.request_rate = 0;
	cases[2].msg = "--request-rate 0 out of range (expected > 0 or inf)";
	cases[3].o.input_len = 0;
	cases[3].msg = "--input-len 0 out of range (expected 1..100000000)";
	cases[4].o.max_concurrency = 1;
	cases[4].o.num_prompts = 2000000;
	cases[4].msg = "2000000 prompts per client at --max-concurrency 1 (expected at most 1048576: "
		       "raise the concurrency)";
	cases[5].o.burstiness = 0;
	cases[5].msg = "--burstiness 0 out of range (expected > 0)";
	for (int i = 0; i < 6; i++) {
		struct diag d;
		diag_init(&d);
		struct synth_bench *b = (struct synth_bench *)&d; /* must be reset to NULL */
		assert_int_equal(synth_bench_new(&b, &cases[i].o, &d), DIAG_EINPUT);
		assert_null(b);
		assert_string_equal(d.msg, cases[i].msg);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fixed_lengths_and_prefix),
		cmocka_unit_test(test_random_lengths),
		cmocka_unit_test(test_rate_and_burstiness),
		cmocka_unit_test(test_max_concurrency),
		cmocka_unit_test(test_same_seed_same_file),
		cmocka_unit_test(test_bad_options),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
