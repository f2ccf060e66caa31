/* SPDX-License-Identifier: Apache-2.0
 * test_synth_replay: synthetic traces go through `replay` as they are.  A
 * small team replays with every call completed, and with a cache that holds
 * everything its prefix hits are the independent offline count's (less what
 * the simulator attributes to prefixes still being computed).  A workload at
 * --max-concurrency C keeps exactly C requests in flight while every client
 * has work, back to back.
 */
#include "tests/traces/test_synth_count.h"
#include "tests/traces/testutil.h"

#include "base/diag.h"
#include "replay/replay.h"
#include "traces/stats.h"
#include "traces/synth.h"
#include "traces/synth_bench.h"
#include "traces/synth_profile.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

/* Step time: 5 ms + 20 us per token scheduled (closed form for runs). */
static double step_ns(const void *ctx, const struct perf_batch *pb)
{
	(void)ctx;
	return 5e6 + 2e4 * (double)pb->new_tokens;
}

static double run_ns(const void *ctx, const struct perf_batch *b0, int64_t k)
{
	return (double)k * step_ns(ctx, b0);
}

struct span {
	uint64_t session;
	int64_t start, end;
};

struct col {
	int64_t requests, completed, prompt, cached, inflight, tasks;
	struct span *spans;
	size_t n_spans, cap;
};

static void on_request(void *ctx, const struct res_request *r)
{
	struct col *c = ctx;
	c->requests++;
	c->completed += r->status == RES_COMPLETED;
	c->prompt += r->prompt_tokens;
	c->cached += r->cached_prompt_tokens;
	c->inflight += r->inflight_miss_tokens;
	if (c->n_spans == c->cap) {
		c->cap = c->cap ? 2 * c->cap : 1024;
		c->spans = realloc(c->spans, c->cap * sizeof(*c->spans));
		assert_non_null(c->spans);
	}
	c->spans[c->n_spans++] = (struct span){r->session, r->arrival_ns, r->done_ns};
}

static void on_task(void *ctx, const struct res_span *t)
{
	(void)t;
	((struct col *)ctx)->tasks++;
}

static void replay(const char *path, struct col *c, struct replay_stats *st)
{
	memset(c, 0, sizeof(*c));
	struct engine_config cfg = {
		.max_num_seqs = 256, .max_num_batched_tokens = 8192, .block_size = 16,
		.gpu_memory_utilization = 0.9, .enable_chunked_prefill = true,
		.enable_prefix_caching = true, .kv_cache_tokens = 64LL << 20, .max_model_len = 1 << 20,
	};
	struct res_sink sink = {.ctx = c, .request = on_request, .task = on_task};
	struct sim_perf perf = {.step_ns = step_ns, .decode_run_ns = run_ns};
	struct replay_opts o = {.trace_path = path};
	struct diag d;
	diag_init(&d);
	int rc = replay_run(&o, &cfg, perf, sink, st, &d);
	if (rc)
		fail_msg("replay %s: %s", path, d.msg);
}

static void test_team_replays(void **state)
{
	(void)state;
	struct synth_profile p;
	struct diag d;
	diag_init(&d);
	assert_int_equal(synth_profile_load(&p, NULL, &d), 0);
	char path[512];
	testutil_scratch(path, sizeof(path), "synth_replay.jsonl.gz");
	struct synth_team_opts o = {.engineers = 2, .days = 1, .seed = 2};
	struct synth_team_stats ts;
	assert_int_equal(synth_team_write(&p, &o, path, true, &ts, &d), 0);
	struct col c;
	struct replay_stats st;
	replay(path, &c, &st);
	assert_true(st.gzip);
	assert_int_equal(st.sessions, ts.sessions);
	assert_int_equal(st.calls, ts.calls);
	assert_int_equal(c.requests, ts.calls);
	assert_int_equal(c.completed, ts.calls);
	assert_int_equal(st.abandoned_calls, 0);
	assert_int_equal(c.prompt, ts.prompt_tokens);
	/* one definition of a task: synth, replay and stats count the same
	 * (subagent runs belong to their parent's task; stats names them) */
	assert_true(ts.subagent_sessions > 0);
	assert_int_equal(c.tasks, ts.tasks);
	struct stats_opts so = {.block_size = 16, .decode_tokens_per_s = 50, .no_curve = true};
	struct stats *sst;
	struct stats_summary sum;
	assert_int_equal(stats_new(&sst, &so, &d), 0);
	assert_int_equal(stats_read(sst, path, TRACE_FMT_AUTO, false, &sum, NULL, &d), 0);
	assert_int_equal(sum.tasks, ts.tasks);
	assert_int_equal(sum.tasks_accepted, ts.tasks_accepted);
	assert_int_equal(sum.tasks_accepted + sum.tasks_rejected, ts.tasks);
	assert_true(sum.subagent_task_runs >= ts.subagent_sessions);
	stats_free(sst);
	struct synth_count k;
	char msg[DIAG_MSG_MAX];
	assert_int_equal(synth_count_file(path, 16, p.decode_tokens_per_s, &k, msg, sizeof(msg)), 0);
	print_message("replay cached %lld + in flight %lld, offline %lld of %lld prompt tokens\n",
		      (long long)c.cached, (long long)c.inflight, (long long)k.cached_tokens,
		      (long long)k.prompt_tokens);
	/* The cache never evicts here, so a hit the offline count finds is a hit
	 * for the simulator too, unless the prefix was still being computed. */
	assert_true(c.cached <= k.cached_tokens);
	assert_true(c.cached + c.inflight >= k.cached_tokens);
	assert_true((double)(k.cached_tokens - c.cached) < 0.005 * (double)k.cached_tokens);
	free(c.spans);
}

static int cmp_ev(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	int64_t tx = x >> 1, ty = y >> 1;
	if (tx != ty)
		return (tx > ty) - (tx < ty);
	return (int)(x & 1) - (int)(y & 1); /* an end (0) before a start (1) */
}

static void test_concurrency_replays_exactly(void **state)
{
	(void)state;
	char path[512];
	testutil_scratch(path, sizeof(path), "bench_conc.jsonl");
	struct synth_bench_opts o = {.kind = SYNTH_BENCH_RANDOM, .input_len = 2000, .output_len = 100,
				     .range_ratio = 0.5, .num_prompts = 200, .max_concurrency = 8,
				     .burstiness = 1, .shared_prefix_len = 1024, .seed = 9};
	struct diag d;
	diag_init(&d);
	assert_int_equal(synth_bench_write(&o, path, false, NULL, &d), 0);
	struct col c;
	struct replay_stats st;
	replay(path, &c, &st);
	assert_int_equal(c.completed, 200);
	assert_int_equal(st.peak_sessions_in_flight, 8);
	/* sweep arrivals and completions: never more than 8 in flight, and 8
	 * until the first client runs out of prompts */
	size_t n = c.n_spans;
	int64_t *ev = malloc(2 * n * sizeof(int64_t));
	assert_non_null(ev);
	for (size_t i = 0; i < n; i++) {
		ev[2 * i] = c.spans[i].start * 2 + 1;
		ev[2 * i + 1] = c.spans[i].end * 2;
	}
	qsort(ev, 2 * n, sizeof(int64_t), cmp_ev);
	int64_t in_flight = 0, peak = 0, t_first_dip = -1;
	for (size_t i = 0; i < 2 * n; i++) {
		in_flight += (ev[i] & 1) ? 1 : -1;
		/* back to back: a client's next request arrives at the instant its
		 * previous one ends, so check the level after each instant */
		bool instant_done = i + 1 == 2 * n || (ev[i + 1] >> 1) != (ev[i] >> 1);
		if (!instant_done)
			continue;
		if (in_flight > peak)
			peak = in_flight;
		if (in_flight < 8 && t_first_dip < 0 && i + 1 < 2 * n)
			t_first_dip = ev[i] >> 1;
	}
	assert_int_equal(peak, 8);
	assert_int_equal(in_flight, 0);
	/* the first dip below 8 comes only when a client has sent all its
	 * prompts: not before the earliest of the clients' last arrivals */
	uint64_t ids[8];
	int64_t last[8];
	size_t n_ids = 0;
	for (size_t i = 0; i < n; i++) {
		size_t k = 0;
		while (k < n_ids && ids[k] != c.spans[i].session)
			k++;
		if (k == n_ids) {
			assert_true(n_ids < 8);
			ids[n_ids] = c.spans[i].session;
			last[n_ids++] = 0;
		}
		if (c.spans[i].start > last[k])
			last[k] = c.spans[i].start;
	}
	assert_int_equal(n_ids, 8);
	int64_t first_client_done = INT64_MAX;
	for (size_t k = 0; k < n_ids; k++)
		if (last[k] < first_client_done)
			first_client_done = last[k];
	assert_true(t_first_dip >= first_client_done);
	/* the shared prefix is served from cache after the first wave */
	assert_true(c.cached >= (200 - 8) * 1024);
	free(ev);
	free(c.spans);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_team_replays),
		cmocka_unit_test(test_concurrency_replays_exactly),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
