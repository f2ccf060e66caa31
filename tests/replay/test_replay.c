/* SPDX-License-Identifier: Apache-2.0
 * Tests of the replay driver: closed-loop sessions stretch with a slower
 * server, extends chains share the KV prefix, and the Mooncake conversation
 * trace's prefix hits match an independent offline count. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "replay/replay.h"

#include <cjson/cJSON.h>
#include <zlib.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

/* linear step time: a + b * new_tokens ns; runs in closed form */
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

#define MAXREC 16384
struct col {
	struct res_request req[MAXREC];
	int n_req;
	struct res_span sess[64];
	int n_sess;
	struct res_span task[64];
	int n_task;
	int64_t prompt, cached, inflight;
};

static void col_req(void *ctx, const struct res_request *r)
{
	struct col *c = ctx;
	if (c->n_req < MAXREC)
		c->req[c->n_req++] = *r;
	c->prompt += r->prompt_tokens;
	c->cached += r->cached_prompt_tokens;
	c->inflight += r->inflight_miss_tokens;
}

static void col_sess(void *ctx, const struct res_span *s)
{
	struct col *c = ctx;
	if (c->n_sess < 64)
		c->sess[c->n_sess++] = *s;
}

static void col_task(void *ctx, const struct res_span *s)
{
	struct col *c = ctx;
	if (c->n_task < 64)
		c->task[c->n_task++] = *s;
}

static struct engine_config cfg_default(void)
{
	struct engine_config cfg = {
		.max_num_seqs = 256, .max_num_batched_tokens = 8192, .block_size = 16,
		.gpu_memory_utilization = 0.9, .enable_chunked_prefill = true,
		.enable_prefix_caching = true, .kv_cache_tokens = 1 << 22, .max_model_len = 1 << 20,
	};
	return cfg;
}

static struct col *run_policy(const char *path, const struct engine_config *cfg, struct lin *l,
			      struct replay_stats *st, enum context_policy policy)
{
	struct col *c = calloc(1, sizeof(*c));
	struct res_sink sink = {.ctx = c, .request = col_req, .session = col_sess, .task = col_task};
	struct sim_perf p = {.ctx = l, .step_ns = lin_step, .decode_run_ns = lin_run};
	struct replay_opts o = {.trace_path = path, .context_policy = policy};
	struct diag d;
	diag_init(&d);
	int rc = replay_run(&o, cfg, p, sink, st, &d);
	if (rc != 0)
		fprintf(stderr, "replay: %s\n", d.msg);
	assert_int_equal(rc, 0);
	return c;
}

static struct col *run(const char *path, const struct engine_config *cfg, struct lin *l,
		       struct replay_stats *st)
{
	return run_policy(path, cfg, l, st, CONTEXT_COMPACT);
}

static const struct res_request *find(const struct col *c, int64_t seq, int64_t prompt)
{
	for (int i = 0; i < c->n_req; i++)
		if (c->req[i].seq == seq && c->req[i].prompt_tokens == prompt)
			return &c->req[i];
	fail_msg("no request seq %lld with %lld prompt tokens", (long long)seq, (long long)prompt);
	return NULL;
}

/* Call n+1 of a session is issued exactly gap after call n completes, so a
 * server twice as slow stretches the session by more than the compute. */
static void test_closed_loop_stretches(void **state)
{
	(void)state;
	const char *path = AC_SRC_DIR "/tests/fixtures/replay/two_sessions.jsonl";
	struct engine_config cfg = cfg_default();
	struct replay_stats st;
	struct lin fast = {.a = 1e6, .b = 1e4}, slow = {.a = 2e6, .b = 2e4};
	struct col *f = run(path, &cfg, &fast, &st);
	assert_int_equal(st.sessions, 2);
	assert_int_equal(st.calls, 4);
	struct col *s = run(path, &cfg, &slow, &st);
	assert_int_equal(f->n_req, 4);
	/* s1's calls: prompts 1200, 1200+50+300 = 1550, 1550+40+100 = 1690 */
	const struct res_request *f0 = find(f, 0, 1200), *f1 = find(f, 1, 1550), *f2 = find(f, 2, 1690);
	assert_int_equal(f1->arrival_ns, f0->done_ns + 2000000000LL);
	assert_int_equal(f2->arrival_ns, f1->done_ns + 1500000000LL);
	const struct res_request *s2 = find(s, 2, 1690);
	assert_true(s2->done_ns > f2->done_ns);
	/* the extends chain reuses the previous prompt and output from cache */
	assert_true(f1->cached_prompt_tokens >= 1200 + 50 - 16);
	/* the second session shares the 1000-token system prompt */
	const struct res_request *o = find(f, 0, 1064);
	assert_int_equal(o->cached_prompt_tokens + o->inflight_miss_tokens, 992);
	/* sessions and tasks were reported, with acceptance */
	assert_int_equal(f->n_sess, 2);
	assert_int_equal(f->n_task, 3);
	int accepted = 0;
	for (int i = 0; i < f->n_task; i++)
		accepted += f->task[i].accepted_known && f->task[i].accepted;
	assert_int_equal(accepted, 1);
	for (int i = 0; i < f->n_sess; i++)
		if (f->sess[i].calls == 3)
			assert_int_equal(f->sess[i].end_ns, f2->done_ns);
	free(f);
	free(s);
}

/* A rejected call ends its session; the calls after it are reported as
 * rejected too, never dropped. */
static void test_rejected_call_abandons_session(void **state)
{
	(void)state;
	const char *path = AC_SRC_DIR "/tests/fixtures/replay/two_sessions.jsonl";
	struct engine_config cfg = cfg_default();
	cfg.max_model_len = 1300; /* s1's second call (1550 + 40) does not fit */
	struct replay_stats st;
	struct lin l = {.a = 1e6, .b = 1e4};
	struct col *c = run_policy(path, &cfg, &l, &st, CONTEXT_REJECT);
	assert_int_equal(c->n_req, 4);
	int rejected = 0;
	for (int i = 0; i < c->n_req; i++)
		rejected += c->req[i].status == RES_REJECTED;
	assert_int_equal(rejected, 2);
	assert_int_equal(st.abandoned_calls, 1);
	free(c);
}

/* Under `compact` the harness compacts a context that would pass
 * max_model_len, and the session goes on from the compacted context:
 * nothing is rejected or abandoned. */
static void test_context_compact(void **state)
{
	(void)state;
	const char *path = AC_SRC_DIR "/tests/fixtures/replay/two_sessions.jsonl";
	struct engine_config cfg = cfg_default();
	cfg.max_model_len = 1300; /* s1's second call (1550 + 40) does not fit */
	struct replay_stats st;
	struct lin l = {.a = 1e6, .b = 1e4};
	struct col *c = run_policy(path, &cfg, &l, &st, CONTEXT_COMPACT);
	assert_int_equal(c->n_req, 4);
	for (int i = 0; i < c->n_req; i++)
		assert_int_equal(c->req[i].status, RES_COMPLETED);
	assert_int_equal(st.abandoned_calls, 0);
	assert_int_equal(st.calls_compacted, 1);
	assert_int_equal(st.calls_truncated + st.calls_too_long, 0);
	/* head 130 (still cached) + summary 52 + tail 169; the next call extends
	 * that by the output (40) and the user's message (100) and hits the
	 * compacted prefix */
	find(c, 0, 1200);
	const struct res_request *c1 = find(c, 1, 351), *c2 = find(c, 2, 491);
	assert_true(c1->cached_prompt_tokens >= 128);
	assert_true(c1->cached_prompt_tokens < 351 - 169);
	assert_true(c2->cached_prompt_tokens >= (351 + 40) / 16 * 16);
	free(c);
}

/* Under `truncate` each call over max_model_len is cut to its last
 * max_model_len - output tokens; the session keeps its full history. */
static void test_context_truncate(void **state)
{
	(void)state;
	const char *path = AC_SRC_DIR "/tests/fixtures/replay/two_sessions.jsonl";
	struct engine_config cfg = cfg_default();
	cfg.max_model_len = 1300;
	struct replay_stats st;
	struct lin l = {.a = 1e6, .b = 1e4};
	struct col *c = run_policy(path, &cfg, &l, &st, CONTEXT_TRUNCATE);
	assert_int_equal(c->n_req, 4);
	for (int i = 0; i < c->n_req; i++)
		assert_int_equal(c->req[i].status, RES_COMPLETED);
	assert_int_equal(st.calls_truncated, 2);
	assert_int_equal(st.calls_compacted, 0);
	find(c, 0, 1200);
	find(c, 1, 1300 - 40);
	find(c, 2, 1300 - 30);
	free(c);
}

/* t = 1e9 s followed by twelve gaps of 1e9 s, each within the format's
 * limits: the fifth call would start past 2^62 ns.  An input error naming
 * that call's line, not an int64 overflow (UBSan) or a wrapped clock. */
static void test_time_horizon(void **state)
{
	(void)state;
	char path[] = "/tmp/agentcap-horizon-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	FILE *f = fdopen(fd, "w");
	fprintf(f, "{\"format\":\"agentcap-trace\",\"version\":1}\n"
		"{\"session\":\"s\",\"t\":1e9,\"prompt\":[[\"a\",10]],\"output_tokens\":1}\n");
	for (int i = 0; i < 12; i++)
		fprintf(f, "{\"session\":\"s\",\"gap\":1e9,\"extends\":true,\"prompt\":[[\"b%d\",10]],"
			"\"output_tokens\":1}\n", i);
	fclose(f);
	struct engine_config cfg = cfg_default();
	struct lin l = {.a = 1e6, .b = 1e4};
	struct col *c = calloc(1, sizeof(*c));
	struct res_sink sink = {.ctx = c, .request = col_req, .session = col_sess, .task = col_task};
	struct sim_perf p = {.ctx = &l, .step_ns = lin_step, .decode_run_ns = lin_run};
	struct replay_opts o = {.trace_path = path};
	struct replay_stats st;
	struct diag d;
	diag_init(&d);
	assert_int_equal(replay_run(&o, &cfg, p, sink, &st, &d), DIAG_EINPUT);
	char want[600];
	snprintf(want, sizeof(want), "%s:6: call seq 4 of the session from line 2 would start at "
		 "5e+09 s of simulated time, past the replay horizon of 2^62 ns", path);
	if (strncmp(d.msg, want, strlen(want)) != 0)
		fail_msg("got  %s\nwant %s...", d.msg, want);
	assert_int_equal(c->n_req, 4); /* the calls before it ran */
	free(c);
	remove(path);
}

/* A call of 10^9 prompt tokens (max_model_len 2^20) is never hashed whole:
 * under `reject` it is rejected on arrival without hashing its 62.5 million
 * blocks or allocating room for them (about 750 MB); under `compact` and
 * `truncate` only what the harness keeps is hashed.  Memory stays flat. */
static void test_too_long_call_not_hashed(void **state)
{
	(void)state;
	char path[] = "/tmp/agentcap-toolong-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	FILE *f = fdopen(fd, "w");
	fprintf(f, "{\"format\":\"agentcap-trace\",\"version\":1}\n"
		"{\"session\":\"s\",\"t\":0,\"prompt\":[[\"a\",100]],\"output_tokens\":1}\n"
		"{\"session\":\"s\",\"gap\":1,\"extends\":true,\"prompt\":[[\"b\",1000000000]],"
		"\"output_tokens\":1}\n");
	fclose(f);
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	long rss0 = ru.ru_maxrss;
	struct engine_config cfg = cfg_default();
	struct lin l = {.a = 1e6, .b = 1e4};
	struct replay_stats st;
	struct col *c = run_policy(path, &cfg, &l, &st, CONTEXT_REJECT);
	assert_int_equal(c->n_req, 2);
	const struct res_request *r = find(c, 1, 1000000101);
	assert_int_equal(r->status, RES_REJECTED);
	assert_string_equal(r->reason, "prompt does not fit max_model_len");
	free(c);
	for (int policy = CONTEXT_COMPACT; policy <= CONTEXT_TRUNCATE; policy++) {
		c = run_policy(path, &cfg, &l, &st, (enum context_policy)policy);
		assert_int_equal(c->n_req, 2);
		assert_int_equal(c->req[1].status, RES_COMPLETED);
		free(c);
	}
	getrusage(RUSAGE_SELF, &ru);
	assert_true(ru.ru_maxrss < rss0 + 64 * 1024);
	remove(path);
}

/* ---- the Mooncake conversation trace against an offline count ---- */

/* Reads the trace with zlib + cJSON directly (not through traces/), and
 * counts for every request, in arrival order, the tokens of its leading
 * 512-token blocks that some earlier request already had, then applies the
 * engine's two rules: whole blocks only, and never the whole prompt. */
static int64_t offline_reusable_tokens(const char *path, int64_t bs, int64_t *prompt_total)
{
	gzFile gz = gzopen(path, "rb");
	assert_non_null(gz);
	static char line[1 << 20];
	/* (hash id, block tokens) pairs seen: a simple open-addressing set */
	size_t cap = 1 << 20;
	uint64_t *set = calloc(cap, sizeof(*set));
	int64_t total = 0;
	*prompt_total = 0;
	while (gzgets(gz, line, sizeof(line))) {
		cJSON *o = cJSON_Parse(line);
		assert_non_null(o);
		int64_t in = (int64_t)cJSON_GetObjectItem(o, "input_length")->valuedouble;
		const cJSON *ids = cJSON_GetObjectItem(o, "hash_ids");
		int n = cJSON_GetArraySize(ids);
		int64_t common = 0;
		bool leading = true;
		for (int i = 0; i < n; i++) {
			int64_t tok = i < n - 1 ? 512 : in - 512 * (int64_t)(n - 1);
			uint64_t key = ((uint64_t)cJSON_GetArrayItem(ids, i)->valuedouble << 12) ^ (uint64_t)tok;
			key = key * 0x9e3779b97f4a7c15ULL + 1;
			size_t h = (size_t)(key ^ (key >> 29)) & (cap - 1);
			bool seen = false;
			while (set[h]) {
				if (set[h] == key) {
					seen = true;
					break;
				}
				h = (h + 1) & (cap - 1);
			}
			if (!seen)
				set[h] = key;
			if (leading && seen)
				common += tok;
			else
				leading = false;
		}
		int64_t cached = common / bs * bs;
		int64_t cap_tokens = (in - 1) / bs * bs;
		total += cached < cap_tokens ? cached : cap_tokens;
		*prompt_total += in;
		cJSON_Delete(o);
	}
	gzclose(gz);
	free(set);
	return total;
}

static void test_mooncake_hits_match_offline_count(void **state)
{
	(void)state;
	const char *path = AC_SRC_DIR "/traces/data/mooncake/conversation_trace.jsonl.gz";
	struct engine_config cfg = cfg_default();
	cfg.kv_cache_tokens = 200LL * 1000 * 1000; /* holds the whole trace */
	cfg.max_model_len = 1 << 20;
	struct replay_stats st;
	struct lin l = {.a = 2e6, .b = 4e4};
	struct col *c = run(path, &cfg, &l, &st);
	int64_t prompt_total;
	int64_t offline = offline_reusable_tokens(path, cfg.block_size, &prompt_total);
	assert_int_equal(c->prompt, prompt_total);
	assert_int_equal(st.sim.kv_evictions, 0);
	/* Every reusable token was either a hit, or missed only because the
	 * request that computes it was still running. */
	assert_int_equal(c->cached + c->inflight, offline);
	assert_true(c->cached <= offline);
	printf("offline reusable %lld, simulated hits %lld, in-flight misses %lld (%.4f%% of prompt tokens)\n",
	       (long long)offline, (long long)c->cached, (long long)c->inflight,
	       100.0 * (double)c->inflight / (double)prompt_total);
	free(c);

	/* Without prefix caching nothing hits. */
	cfg.enable_prefix_caching = false;
	c = run(path, &cfg, &l, &st);
	assert_int_equal(c->cached, 0);
	free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_closed_loop_stretches),
		cmocka_unit_test(test_rejected_call_abandons_session),
		cmocka_unit_test(test_context_compact),
		cmocka_unit_test(test_context_truncate),
		cmocka_unit_test(test_time_horizon),
		cmocka_unit_test(test_too_long_call_not_hashed),
		cmocka_unit_test(test_mooncake_hits_match_offline_count),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
