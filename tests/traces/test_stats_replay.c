/* SPDX-License-Identifier: Apache-2.0
 * test_stats_replay: the offline hit count of traces/stats.h against the
 * simulator's, through replay with a cache larger than the trace.
 *
 *  - Mooncake traces (open loop): replay's cached prompt tokens plus its
 *    in-flight misses (a block another request was still computing; 512
 *    tokens on the conversation trace) equal stats' unbounded-cache hits
 *    exactly.
 *  - A closed-loop trace whose calls never overlap (fast server, gaps of at
 *    least a millisecond): replay's order of calls is stats' zero-service
 *    order, so the hits are equal with no in-flight misses at all.
 */
#include "tests/traces/testutil.h"

#include "base/diag.h"
#include "replay/replay.h"
#include "traces/stats.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

/* step time a + b * new tokens (ns), decode runs in closed form */
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
	return (double)k * lin_step(ctx, b0);
}

struct sums {
	int64_t prompt, cached, inflight, calls;
};

static void on_request(void *ctx, const struct res_request *r)
{
	struct sums *s = ctx;
	s->prompt += r->prompt_tokens;
	s->cached += r->cached_prompt_tokens;
	s->inflight += r->inflight_miss_tokens;
	s->calls++;
}

static struct sums replay_sums(const char *path, const struct lin *l, int64_t block_size)
{
	struct engine_config cfg = {
		.max_num_seqs = 256, .max_num_batched_tokens = 8192, .block_size = block_size,
		.gpu_memory_utilization = 0.9, .enable_chunked_prefill = true,
		.enable_prefix_caching = true, .kv_cache_tokens = 200000000, /* as the CLI's --set */
		.max_model_len = 1 << 20,
	};
	struct sim_perf perf = {.ctx = l, .step_ns = lin_step, .decode_run_ns = lin_run};
	struct sums s = {0};
	struct res_sink sink = {.ctx = &s, .request = on_request};
	struct replay_opts o = {.trace_path = path, .format = TRACE_FMT_AUTO, .seed = 1};
	struct replay_stats st;
	struct diag d;
	diag_init(&d);
	int rc = replay_run(&o, &cfg, perf, sink, &st, &d);
	if (rc != 0)
		fail_msg("%s", d.msg);
	assert_int_equal(st.sim.kv_evictions, 0);
	return s;
}

static struct stats_summary stats_of(const char *path, int64_t block_size)
{
	struct stats *st;
	struct stats_summary s;
	struct diag d;
	diag_init(&d);
	struct stats_opts o = {.block_size = block_size, .decode_tokens_per_s = 50};
	assert_int_equal(stats_new(&st, &o, &d), 0);
	if (stats_read(st, path, TRACE_FMT_AUTO, false, &s, NULL, &d) != 0)
		fail_msg("%s", d.msg);
	stats_free(st);
	return s;
}

/* 512-token blocks (Mooncake's own) keep this fast; the CLI's default 16
 * gives the same picture: 54,097,440 = 54,097,440 + 0 on the conversation
 * trace (docs/stats.md).  Blocks are cached when their step is scheduled, so
 * no request misses what another is computing in the same step. */
static void mooncake_case(const char *name, int64_t want_inflight)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/traces/data/mooncake/%s", AC_SRC_DIR, name);
	struct lin l = {.a = 5e6, .b = 2e4};
	struct sums r = replay_sums(path, &l, 512);
	struct stats_summary s = stats_of(path, 512);
	assert_int_equal(s.calls, r.calls);
	assert_int_equal(s.prompt_tokens, r.prompt);
	assert_int_equal(s.hit_tokens_unbounded, r.cached + r.inflight);
	if (want_inflight >= 0)
		assert_int_equal(r.inflight, want_inflight);
	assert_true(r.inflight * 1000 <= r.cached); /* a small correction */
	printf("%s: stats unbounded hits %lld = replay hits %lld + in-flight misses %lld; "
	       "hit rate %.6f vs %.6f\n", name, (long long)s.hit_tokens_unbounded, (long long)r.cached,
	       (long long)r.inflight, s.prefix_hit_rate_unbounded, (double)r.cached / (double)r.prompt);
}

static void test_mooncake_unbounded_matches_replay(void **state)
{
	(void)state;
	mooncake_case("conversation_trace.jsonl.gz", 0);
	mooncake_case("synthetic_trace.jsonl.gz", -1);
}

/* Closed-loop sessions sharing a system prompt and repositories, with
 * extends chains and restated prompts.  Times are whole microseconds; the
 * server takes about one, and no two calls come within 50 us of each other
 * in zero-service order (checked), so replay issues them in the same order. */
static uint64_t next_rnd(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

static int i64_cmp(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

static void write_closed_loop(const char *path)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs("{\"format\":\"agentcap-trace\",\"version\":1}\n", f);
	uint64_t x = 88172645463325252ULL;
	int64_t times[40 * 7];
	int n_times = 0;
	for (int i = 0; i < 40; i++) {
		int calls = 1 + (int)(next_rnd(&x) % 7);
		int64_t t_us = (int64_t)i * 3000000 + (int64_t)(next_rnd(&x) % 1000000);
		times[n_times++] = t_us;
		fprintf(f, "{\"session\":\"s%d\",\"engineer\":\"e%d\",\"t\":%lld.%06lld,"
			"\"prompt\":[[\"sys\",700],[\"repo%d\",300],[\"u%d\",%d]],\"output_tokens\":%d}\n",
			i, i % 5, (long long)(t_us / 1000000), (long long)(t_us % 1000000),
			(int)(x % 3), i, 10 + (int)(x % 90), 5 + (int)(x % 50));
		for (int k = 1; k < calls; k++) {
			int64_t gap_us = 1000 + (int64_t)(next_rnd(&x) % 4000000);
			t_us += gap_us;
			times[n_times++] = t_us;
			char gap[32];
			snprintf(gap, sizeof(gap), "%lld.%06lld", (long long)(gap_us / 1000000),
				 (long long)(gap_us % 1000000));
			if (x % 5 == 0)
				fprintf(f, "{\"session\":\"s%d\",\"gap\":%s,\"prompt\":[[\"sys\",700],"
					"[\"repo%d\",300],[\"v%d_%d\",%d]],\"output_tokens\":%d}\n",
					i, gap, (int)(x % 3), i, k, 5 + (int)(x % 40), 1 + (int)(x % 30));
			else
				fprintf(f, "{\"session\":\"s%d\",\"gap\":%s,\"extends\":true,"
					"\"prompt\":[[\"r%d_%d\",%d]],\"output_tokens\":%d,\"tool\":\"%s\"}\n",
					i, gap, i, k, 1 + (int)(x % 200), 1 + (int)(x % 60),
					x % 3 ? "ok" : "fail");
		}
	}
	assert_int_equal(fclose(f), 0);
	qsort(times, (size_t)n_times, sizeof(times[0]), i64_cmp);
	for (int i = 1; i < n_times; i++)
		assert_true(times[i] - times[i - 1] >= 50);
}

static void test_closed_loop_matches_replay_exactly(void **state)
{
	(void)state;
	char path[512];
	testutil_scratch(path, sizeof(path), "stats_closed_loop.jsonl");
	write_closed_loop(path);
	struct lin l = {.a = 10, .b = 0.01}; /* a call takes microseconds at most */
	struct sums r = replay_sums(path, &l, 16);
	struct stats_summary s = stats_of(path, 16);
	assert_int_equal(s.calls, r.calls);
	assert_int_equal(r.inflight, 0);
	assert_true(r.cached > 0);
	assert_int_equal(s.hit_tokens_unbounded, r.cached);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mooncake_unbounded_matches_replay),
		cmocka_unit_test(test_closed_loop_matches_replay_exactly),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
