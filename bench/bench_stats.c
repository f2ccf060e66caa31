/* SPDX-License-Identifier: Apache-2.0
 * bench_stats: how fast `agentcap stats` reads a trace and how much memory
 * its prefix-cache analysis takes: wall time, calls and KV blocks per second,
 * distinct blocks and peak RSS, at each block size given (default 16 512).
 * Also the cost of scaling the trace to N engineers (replay/scale.h) without
 * the simulator.
 *
 *     bench_stats TRACE [BLOCK_SIZE ...]
 *     bench_stats --scale N TRACE
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

int main(int argc, char **argv)
{
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
