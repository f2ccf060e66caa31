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

int main(int argc, char **argv)
{
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
		double t0 = now_s();
		int rc = stats_new(&st, &o, &d);
		if (rc == 0)
			rc = stats_read(st, argv[1], TRACE_FMT_AUTO, false, &s, NULL, &d);
		double t1 = now_s();
		stats_free(st);
		if (rc != 0) {
			fprintf(stderr, "bench_stats: %s\n", d.msg);
			return 1;
		}
		double blocks = (double)(s.prompt_tokens + s.output_tokens) / (double)o.block_size;
		printf("%s block %lld: %.3f s, %lld calls (%.0f calls/s), ~%.0f blocks touched (%.2e/s), "
		       "%lld distinct blocks, unbounded hit rate %.4f, peak RSS %ld MB\n",
		       argv[1], (long long)o.block_size, t1 - t0, (long long)s.calls,
		       (double)s.calls / (t1 - t0), blocks, blocks / (t1 - t0), (long long)s.distinct_blocks,
		       s.prefix_hit_rate_unbounded, peak_rss_mb());
	}
	return 0;
}
