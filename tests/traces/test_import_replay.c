/* SPDX-License-Identifier: Apache-2.0
 * test_import_replay: every importer's output is a trace replay accepts (all
 * calls served, none rejected), and an imported Mooncake trace replays
 * exactly like the Mooncake file read directly: the same requests at the
 * same times with the same prefix-cache hits, so the block hashes agree.
 */
#include "tests/traces/testutil.h"

#include "base/diag.h"
#include "replay/replay.h"
#include "traces/import.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#define FIX AC_SRC_DIR "/tests/fixtures/import/"

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

#define MAXREC 512
struct col {
	struct res_request req[MAXREC];
	int n;
	int64_t rejected, cached;
};

static void col_req(void *ctx, const struct res_request *r)
{
	struct col *c = ctx;
	if (c->n < MAXREC)
		c->req[c->n++] = *r;
	c->rejected += r->status != RES_COMPLETED;
	c->cached += r->cached_prompt_tokens;
}

static struct col *replay(const char *path, struct replay_stats *st)
{
	struct engine_config cfg = {
		.max_num_seqs = 256, .max_num_batched_tokens = 8192, .block_size = 16,
		.gpu_memory_utilization = 0.9, .enable_chunked_prefill = true,
		.enable_prefix_caching = true, .kv_cache_tokens = 1 << 22, .max_model_len = 1 << 20,
	};
	struct lin l = {.a = 1e6, .b = 1e4};
	struct col *c = calloc(1, sizeof(*c));
	struct res_sink sink = {.ctx = c, .request = col_req};
	struct sim_perf p = {.ctx = &l, .step_ns = lin_step, .decode_run_ns = lin_run};
	struct replay_opts o = {.trace_path = path};
	struct diag d;
	diag_init(&d);
	int rc = replay_run(&o, &cfg, p, sink, st, &d);
	if (rc != 0)
		fail_msg("replay of %s: %s", path, d.msg);
	return c;
}

static void test_every_importer_replays(void **state)
{
	(void)state;
	static const struct {
		const char *fmt, *path;
	} cases[] = {
		{"claude-code", FIX "claude_session.jsonl"},
		{"codex", FIX "codex_rollout.jsonl"},
		{"tracelab", FIX "tracelab_round_trace.jsonl"},
		{"weka", FIX "weka.json"},
		{"weka", FIX "weka_lines.jsonl"},
		{"mooncake", AC_SRC_DIR "/tests/fixtures/traces/mooncake_head200.jsonl"},
		{"azure", FIX "azure2023_code_head50.csv"},
		{"azure", FIX "azure2024.csv"},
		{"burstgpt", FIX "burstgpt.csv"},
		{"burstgpt", FIX "burstgpt_sessions.csv"},
		{"openai-log", FIX "openai.jsonl"},
	};
	char out[512];
	testutil_scratch(out, sizeof(out), "replay_import.jsonl.gz");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct diag d;
		diag_init(&d);
		struct import_stats ist;
		const char *paths[1] = {cases[i].path};
		struct import_opts o = {.keep_text = strcmp(cases[i].fmt, "openai-log") == 0};
		if (import_files(cases[i].fmt, paths, 1, &o, out, &ist, &d) != 0)
			fail_msg("%s: %s", cases[i].path, d.msg);
		struct replay_stats st;
		struct col *c = replay(out, &st);
		assert_int_equal(st.calls, ist.calls);
		assert_int_equal(st.sessions, ist.sessions);
		assert_int_equal(c->n, ist.calls);
		assert_int_equal(c->rejected, 0);
		free(c);
	}
}

static int cmp_req(const void *a, const void *b)
{
	const struct res_request *x = a, *y = b;
	if (x->arrival_ns != y->arrival_ns)
		return x->arrival_ns < y->arrival_ns ? -1 : 1;
	if (x->prompt_tokens != y->prompt_tokens)
		return x->prompt_tokens < y->prompt_tokens ? -1 : 1;
	return (x->cached_prompt_tokens > y->cached_prompt_tokens) -
	       (x->cached_prompt_tokens < y->cached_prompt_tokens);
}

static void test_mooncake_replays_identically(void **state)
{
	(void)state;
	const char *src = AC_SRC_DIR "/tests/fixtures/traces/mooncake_head200.jsonl";
	char out[512];
	testutil_scratch(out, sizeof(out), "mooncake_imported.jsonl");
	struct diag d;
	diag_init(&d);
	const char *paths[1] = {src};
	assert_int_equal(import_files("mooncake", paths, 1, NULL, out, NULL, &d), 0);
	struct replay_stats s1, s2;
	struct col *a = replay(src, &s1);
	struct col *b = replay(out, &s2);
	assert_int_equal(a->n, 200);
	assert_int_equal(b->n, 200);
	assert_true(a->cached > 0); /* the comparison below is about something */
	assert_int_equal(a->cached, b->cached);
	assert_int_equal(s1.sim.steps, s2.sim.steps);
	qsort(a->req, (size_t)a->n, sizeof(a->req[0]), cmp_req);
	qsort(b->req, (size_t)b->n, sizeof(b->req[0]), cmp_req);
	for (int i = 0; i < a->n; i++) {
		assert_int_equal(a->req[i].arrival_ns, b->req[i].arrival_ns);
		assert_int_equal(a->req[i].done_ns, b->req[i].done_ns);
		assert_int_equal(a->req[i].prompt_tokens, b->req[i].prompt_tokens);
		assert_int_equal(a->req[i].cached_prompt_tokens, b->req[i].cached_prompt_tokens);
	}
	free(a);
	free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_importer_replays),
		cmocka_unit_test(test_mooncake_replays_identically),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
