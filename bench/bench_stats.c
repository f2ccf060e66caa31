/* SPDX-License-Identifier: Apache-2.0
 * bench_stats: how fast `agentcap stats` reads a trace and how much memory
 * its prefix-cache analysis takes: wall time, calls and KV blocks per second,
 * distinct blocks and peak RSS, at each block size given (default 16 512).
 * Also the cost of scaling the trace to N engineers (replay/scale.h) without
 * the simulator.
 *
 *     bench_stats TRACE [BLOCK_SIZE ...]
 *     bench_stats --scale N TRACE
 *     bench_stats --long-session N ...
 *
 *     bench_stats --curve-error TRACE [SAMPLE_BLOCKS ...]
 *
 * The default run reads TRACE with the curve in its default (auto) mode and
 * prints how the curve was made (exact, or sampled with its final rate).
 *
 * --curve-error compares the sampled (SHARDS) curve with the exact one on a
 * trace small enough for both, at the default capacities of `agentcap
 * stats` (32,768 tokens doubling up to every distinct block) and at 64
 * capacities spread evenly in log scale over the same range: the largest
 * and the mean absolute difference in hit-rate points, per sample size
 * (default 4096 16384 65536 262144).
 *
 * --long-session times one session of N calls, each extending the previous
 * call's context by a 300-token segment and producing 100 tokens (block size
 * 16), built in memory: the prefix-cache analysis must stay linear in the
 * new blocks, so the time per call must not grow with N.
 */
#include "base/diag.h"
#include "replay/scale.h"
#include "traces/reader.h"
#include "traces/stats.h"
#include "traces/trace.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* CPU time of this process: the machine may be shared, wall time is not ours */
static double cpu_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static long peak_rss_mb(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss / 1024;
}

static int bench_scale(const char *path, long n)
{
	struct diag d;
	diag_init(&d);
	struct trace_reader *r = NULL;
	double t0 = now_s();
	int rc = trace_reader_open(&r, path, TRACE_FMT_AUTO, &d);
	struct scale *sc = NULL;
	struct scale_opts o = {.engineers = n, .seed = 1};
	if (rc == 0)
		rc = scale_open(&sc, r, &o, &d);
	double t1 = now_s();
	long sessions = 0;
	struct trace_session *s;
	while (rc == 0) {
		rc = scale_next(sc, &s, &d);
		if (rc != 1)
			break;
		rc = 0;
		trace_session_free(s);
		sessions++;
	}
	double t2 = now_s();
	scale_free(sc);
	trace_reader_free(r);
	if (rc < 0) {
		fprintf(stderr, "bench_stats: %s\n", d.msg);
		return 1;
	}
	printf("scale %s to %ld engineers: index %.3f s, %ld sessions out in %.3f s (%.0f sessions/s), "
	       "peak RSS %ld MB\n", path, n, t1 - t0, sessions, t2 - t1, (double)sessions / (t2 - t1),
	       peak_rss_mb());
	return 0;
}

static int bench_long_session(long n)
{
	struct trace_session *s = calloc(1, sizeof(*s));
	struct trace_call *calls = calloc((size_t)n, sizeof(*calls));
	struct trace_seg *segs = calloc((size_t)n, sizeof(*segs));
	if (!s || !calls || !segs)
		return 1;
	s->id = trace_id_hash("long");
	s->calls = calls;
	s->n_calls = (size_t)n;
	s->line = 2;
	int64_t prompt = 0;
	for (long i = 0; i < n; i++) {
		segs[i] = (struct trace_seg){.content = trace_content_int(i, 300), .tokens = 300};
		calls[i] = (struct trace_call){.seq = i, .retry_of = -1, .segs = &segs[i], .n_segs = 1,
					       .output_tokens = 100, .extends_prev = i > 0,
					       .gap_s = i > 0 ? 1.0 : 0.0};
		prompt = i > 0 ? prompt + 100 + 300 : 300;
		calls[i].prompt_tokens = prompt;
	}
	struct trace_session *copy = NULL;
	if (trace_session_clone(&copy, s) != 0)
		return 1;
	free(segs);
	free(calls);
	free(s);
	struct stats_opts o = {.block_size = 16, .decode_tokens_per_s = 50};
	struct diag d;
	diag_init(&d);
	struct stats *st = NULL;
	struct stats_summary sum;
	double t0 = now_s(), c0 = cpu_s();
	int rc = stats_new(&st, &o, &d);
	if (rc == 0)
		rc = stats_add(st, copy, &d);
	else
		trace_session_free(copy);
	if (rc == 0)
		rc = stats_finish(st, &sum, &d);
	double t1 = now_s(), c1 = cpu_s();
	stats_free(st);
	if (rc != 0) {
		fprintf(stderr, "bench_stats: %s\n", d.msg);
		return 1;
	}
	printf("one session of %ld extends calls (last prompt %lld tokens): %.3f s wall, %.3f s CPU, "
	       "%.2f us CPU/call, %lld distinct blocks, unbounded hit rate %.4f, peak RSS %ld MB\n", n,
	       (long long)prompt, t1 - t0, c1 - c0, (c1 - c0) / (double)n * 1e6,
	       (long long)sum.distinct_blocks, sum.prefix_hit_rate_unbounded, peak_rss_mb());
	return 0;
}

/* Read path with o; 0 or 1 (message printed). */
static int read_trace(const char *path, const struct stats_opts *o, struct stats **st,
		      struct stats_summary *s)
{
	struct diag d;
	diag_init(&d);
	int rc = stats_new(st, o, &d);
	if (rc == 0)
		rc = stats_read(*st, path, TRACE_FMT_AUTO, false, s, NULL, &d);
	if (rc != 0) {
		fprintf(stderr, "bench_stats: %s\n", d.msg);
		stats_free(*st);
		*st = NULL;
		return 1;
	}
	return 0;
}

static int bench_curve_error(const char *path, int n, char **sizes)
{
	static const char *const defaults[] = {"4096", "16384", "65536", "262144"};
	const char *const *sz = n > 0 ? (const char *const *)sizes : defaults;
	if (n == 0)
		n = 4;
	struct stats_opts o = {.block_size = 16, .decode_tokens_per_s = 50,
			       .curve = STATS_CURVE_EXACT};
	struct stats *ex = NULL;
	struct stats_summary es;
	double c0 = cpu_s();
	if (read_trace(path, &o, &ex, &es) != 0)
		return 1;
	double c1 = cpu_s();
	printf("%s: %lld calls, %lld distinct blocks, unbounded hit rate %.4f; exact curve %.3f s "
	       "CPU\n", path, (long long)es.calls, (long long)es.distinct_blocks,
	       es.prefix_hit_rate_unbounded, c1 - c0);
	/* capacities: the defaults of agentcap stats, then 64 log-spaced */
	int64_t caps[128];
	int n_caps = 0;
	for (int64_t t = 32768; t / 16 < es.distinct_blocks && n_caps < 60; t *= 2)
		caps[n_caps++] = t / 16;
	int n_def = n_caps;
	for (int i = 0; i < 64; i++)
		caps[n_caps++] = (int64_t)llround(exp2(11 + log2((double)es.distinct_blocks / 2048.0) *
							 i / 63.0));
	for (int k = 0; k < n; k++) {
		struct stats_opts so = o;
		so.curve = STATS_CURVE_SAMPLED;
		so.sample_blocks = atol(sz[k]);
		struct stats *sa = NULL;
		struct stats_summary ss;
		c0 = cpu_s();
		if (read_trace(path, &so, &sa, &ss) != 0) {
			stats_free(ex);
			return 1;
		}
		c1 = cpu_s();
		double max_def = 0, max_all = 0, sum_all = 0;
		for (int i = 0; i < n_caps; i++) {
			double e = 100.0 * fabs((double)(stats_hit_tokens_at(sa, caps[i]) -
							 stats_hit_tokens_at(ex, caps[i]))) /
				   (double)es.prompt_tokens;
			if (i < n_def && e > max_def)
				max_def = e;
			if (i >= n_def) {
				max_all = e > max_all ? e : max_all;
				sum_all += e;
			}
		}
		printf("  sampled, %ld blocks (final rate %.6f): %.3f s CPU; error against exact in "
		       "hit-rate points: max %.3f at the %d default capacities, max %.3f and mean %.3f "
		       "at 64 log-spaced ones\n", atol(sz[k]), ss.curve_sample_rate, c1 - c0, max_def,
		       n_def, max_all, sum_all / 64.0);
		stats_free(sa);
	}
	stats_free(ex);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 3 && strcmp(argv[1], "--curve-error") == 0)
		return bench_curve_error(argv[2], argc - 3, argv + 3);
	if (argc >= 3 && strcmp(argv[1], "--long-session") == 0) {
		for (int i = 2; i < argc; i++)
			if (bench_long_session(atol(argv[i])) != 0)
				return 1;
		return 0;
	}
	if (argc >= 4 && strcmp(argv[1], "--scale") == 0)
		return bench_scale(argv[3], atol(argv[2]));
	if (argc < 2) {
		fprintf(stderr, "usage: bench_stats TRACE [BLOCK_SIZE ...] | bench_stats --scale N TRACE\n");
		return 2;
	}
	static const char *const defaults[] = {"16", "512"};
	const char *const *sizes = argc > 2 ? (const char *const *)argv + 2 : defaults;
	int n_sizes = argc > 2 ? argc - 2 : 2;
	for (int i = 0; i < n_sizes; i++) {
		struct stats_opts o = {.block_size = atol(sizes[i]), .decode_tokens_per_s = 50};
		struct diag d;
		diag_init(&d);
		struct stats *st = NULL;
		struct stats_summary s;
		double t0 = now_s(), c0 = cpu_s();
		int rc = stats_new(&st, &o, &d);
		if (rc == 0)
			rc = stats_read(st, argv[1], TRACE_FMT_AUTO, false, &s, NULL, &d);
		int64_t at_1m = rc == 0 ? stats_hit_tokens_at(st, ((int64_t)1 << 20) / o.block_size) : 0;
		double t1 = now_s(), c1 = cpu_s();
		stats_free(st);
		if (rc != 0) {
			fprintf(stderr, "bench_stats: %s\n", d.msg);
			return 1;
		}
		double blocks = (double)(s.prompt_tokens + s.output_tokens) / (double)o.block_size;
		printf("%s block %lld: %.3f s (%.3f s CPU), %lld calls (%.0f calls/s), ~%.0f blocks "
		       "touched (%.2e/s), %lld distinct blocks, unbounded hit rate %.4f, curve %s "
		       "(rate %.6f; hit rate %.4f at 1M tokens), peak RSS %ld MB\n",
		       argv[1], (long long)o.block_size, t1 - t0, c1 - c0, (long long)s.calls,
		       (double)s.calls / (t1 - t0), blocks, blocks / (t1 - t0), (long long)s.distinct_blocks,
		       s.prefix_hit_rate_unbounded, s.curve_sampled ? "sampled" : "exact",
		       s.curve_sampled ? s.curve_sample_rate : 1.0,
		       s.prompt_tokens ? (double)at_1m / (double)s.prompt_tokens : 0.0, peak_rss_mb());
	}
	return 0;
}
