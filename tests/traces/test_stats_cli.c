/* SPDX-License-Identifier: Apache-2.0
 * test_stats_cli: `agentcap stats` and `agentcap replay --engineers` end to
 * end: help, exit codes and messages, the JSON document's flat keys and
 * values on a hand-checked trace, the same bytes on a second run, KV bytes
 * per token with --model, given cache capacities, turn overlap concurrency
 * and --no-curve, the sampled curve against the exact one, and a scaled
 * replay.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "tests/support/cli_run.h"

#include <cjson/cJSON.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define GOOD AC_SRC_DIR "/tests/fixtures/traces/session_good.jsonl"
#define MOON AC_SRC_DIR "/tests/fixtures/traces/mooncake_head200.jsonl"

static double num(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	if (!cJSON_IsNumber(v))
		fail_msg("key %s missing or not a number", key);
	return v->valuedouble;
}

/* The JSON of `agentcap stats ARGS --json -`; the caller deletes it. */
static cJSON *stats_json(const char *args)
{
	char cmd[1024];
	snprintf(cmd, sizeof(cmd), "stats %s --json -", args);
	struct cli_out r = cli_run(cmd);
	if (r.status != 0)
		fail_msg("agentcap %s: status %d, stderr '%s'", cmd, r.status, r.err);
	cJSON *j = cJSON_Parse(r.out);
	cli_out_free(&r);
	assert_non_null(j);
	return j;
}

/* The sampled curve (SHARDS) on a synthetic team of 5 engineers (about a
 * million distinct blocks), sampling about one block in 60: within 1 point
 * of hit rate of the exact curve at every default capacity, the last point
 * equal, the sample within its size.  auto gives the exact curve here. */
static void test_sampled_curve(void **state)
{
	(void)state;
	const char *team = AC_BIN_DIR "/tests/traces/stats_team5.jsonl";
	struct cli_out r = cli_run("synth --engineers 5 --days 1 --seed 2 -o " AC_BIN_DIR
				   "/tests/traces/stats_team5.jsonl --quiet");
	assert_int_equal(r.status, 0);
	cli_out_free(&r);
	char args[512];
	snprintf(args, sizeof(args), "%s --curve exact", team);
	cJSON *ex = stats_json(args);
	snprintf(args, sizeof(args), "%s --curve sampled --curve-samples 16384", team);
	cJSON *sa = stats_json(args);
	cJSON *au = stats_json(team);
	assert_string_equal(cJSON_GetObjectItem(ex, "cache_curve_method")->valuestring, "exact");
	assert_string_equal(cJSON_GetObjectItem(au, "cache_curve_method")->valuestring, "exact");
	assert_string_equal(cJSON_GetObjectItem(sa, "cache_curve_method")->valuestring, "sampled");
	assert_true(num(sa, "cache_curve_sample_rate") < 0.05);
	assert_true(num(sa, "cache_curve_sample_blocks") <= 16384);
	assert_true(num(ex, "distinct_blocks") > 500000);
	assert_true(num(sa, "distinct_blocks") == num(ex, "distinct_blocks"));
	const cJSON *ce = cJSON_GetObjectItem(ex, "cache_curve");
	const cJSON *cs = cJSON_GetObjectItem(sa, "cache_curve");
	int n = cJSON_GetArraySize(ce);
	assert_true(n >= 5);
	assert_int_equal(cJSON_GetArraySize(cs), n);
	for (int i = 0; i < n; i++) {
		const cJSON *pe = cJSON_GetArrayItem(ce, i), *ps = cJSON_GetArrayItem(cs, i);
		assert_true(num(pe, "cache_tokens") == num(ps, "cache_tokens"));
		double err = num(ps, "hit_rate") - num(pe, "hit_rate");
		if (err > 0.01 || err < -0.01)
			fail_msg("capacity %.0f tokens: sampled %.4f, exact %.4f", num(pe, "cache_tokens"),
				 num(ps, "hit_rate"), num(pe, "hit_rate"));
	}
	assert_true(num(cJSON_GetArrayItem(cs, n - 1), "hit_tokens") ==
		    num(cJSON_GetArrayItem(ce, n - 1), "hit_tokens"));
	cJSON_Delete(ex);
	cJSON_Delete(sa);
	cJSON_Delete(au);
	r = cli_run("stats x.jsonl --no-curve --curve sampled");
	assert_int_equal(r.status, 2);
	cli_out_free(&r);
	r = cli_run("stats x.jsonl --curve fuzzy");
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "--curve 'fuzzy'"));
	cli_out_free(&r);
}

static void test_help_and_errors(void **state)
{
	(void)state;
	struct cli_out r = cli_run("stats --help");
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "agentcap stats - describe a trace"));
	assert_non_null(strstr(r.out, "--cache-tokens"));
	cli_out_free(&r);
	r = cli_run("--help");
	assert_non_null(strstr(r.out, "stats"));
	cli_out_free(&r);
	r = cli_run("stats");
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "expected exactly one TRACE argument"));
	cli_out_free(&r);
	r = cli_run("stats " GOOD " --block-size 0");
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "--block-size '0': expected an integer 1..16777216"));
	cli_out_free(&r);
	r = cli_run("stats " GOOD " --cache-tokens 100,x");
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "--cache-tokens 'x'"));
	cli_out_free(&r);
	r = cli_run("stats " GOOD " --model no-such-model");
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "--model 'no-such-model': not in the catalogue"));
	cli_out_free(&r);
	r = cli_run("stats /nonexistent/trace.jsonl");
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "/nonexistent/trace.jsonl"));
	cli_out_free(&r);
	r = cli_run("stats " AC_SRC_DIR "/tests/fixtures/cli/bad_line.jsonl");
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "bad_line.jsonl:"));
	cli_out_free(&r);
}

static void test_json_keys_and_determinism(void **state)
{
	(void)state;
	struct cli_out a = cli_run("stats " GOOD " --json - --model llama-3.1-8b --cache-tokens 16,160,1600");
	assert_int_equal(a.status, 0);
	struct cli_out b = cli_run("stats " GOOD " --json - --model llama-3.1-8b --cache-tokens 16,160,1600");
	assert_string_equal(a.out, b.out); /* same trace, same bytes */
	cJSON *j = cJSON_Parse(a.out);
	assert_non_null(j);
	/* the flat keys the issue names, with the values of traces/stats.h */
	assert_true(num(j, "calls") == 9);
	assert_true(num(j, "sessions") == 5);
	/* one definition of a task with replay and synth: sub1's run of its
	 * parent's task is counted apart */
	assert_true(num(j, "tasks") == 5);
	assert_true(num(j, "subagent_task_runs") == 1);
	assert_true(num(j, "prompt_tokens") == 8294);
	assert_true(num(j, "output_tokens") == 246);
	assert_true(num(j, "median_input_tokens") == 1010);
	assert_true(num(j, "median_output_tokens") == 4);
	double rate = num(j, "prefix_hit_rate_unbounded");
	assert_true(rate > 0 && rate < 1);
	assert_true(rate == num(j, "prefix_hit_tokens_unbounded") / 8294.0);
	assert_true(num(j, "kv_bytes_per_token") == 131072); /* Llama-3.1-8B, bf16 */
	const cJSON *curve = cJSON_GetObjectItemCaseSensitive(j, "cache_curve");
	assert_int_equal(cJSON_GetArraySize(curve), 3);
	double prev = -1;
	for (int i = 0; i < 3; i++) {
		const cJSON *p = cJSON_GetArrayItem(curve, i);
		double tokens = num(p, "cache_tokens");
		assert_true(num(p, "cache_gb") == tokens * 131072 / 1e9);
		assert_true(num(p, "hit_rate") >= prev && num(p, "hit_rate") <= rate);
		prev = num(p, "hit_rate");
	}
	cJSON_Delete(j);
	cli_out_free(&a);
	cli_out_free(&b);
	/* the table says the same */
	struct cli_out t = cli_run("stats " GOOD);
	assert_int_equal(t.status, 0);
	assert_non_null(strstr(t.out, "Calls                   9"));
	assert_non_null(strstr(t.out, "unbounded hit rate"));
	assert_non_null(strstr(t.out, "LRU capacity (tokens)"));
	cli_out_free(&t);
}

/* Turn overlap in the JSON and the table, and --no-curve: one root q with
 * two subagents at 10 tokens/s, q and q1 run 20..22, q2 21..22: the turn's
 * calls last 5 s over a 2 s union. */
static void test_turns_and_no_curve(void **state)
{
	(void)state;
	char path[] = "/tmp/agentcap-stats-turns-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	FILE *f = fdopen(fd, "w");
	assert_non_null(f);
	fputs("{\"format\":\"agentcap-trace\",\"version\":1}\n"
	      "{\"session\":\"q\",\"task\":\"D\",\"t\":20,\"prompt\":[[\"p\",100]],\"output_tokens\":20}\n"
	      "{\"session\":\"q1\",\"parent_session\":\"q\",\"task\":\"D\",\"t\":20,\"prompt\":[[\"p\",100]],\"output_tokens\":20}\n"
	      "{\"session\":\"q2\",\"parent_session\":\"q\",\"task\":\"D\",\"t\":21,\"prompt\":[[\"p\",100]],\"output_tokens\":10}\n",
	      f);
	fclose(f);
	char args[512];
	snprintf(args, sizeof(args), "stats %s --decode-tokens-per-s 10 --json -", path);
	struct cli_out a = cli_run(args);
	assert_int_equal(a.status, 0);
	cJSON *j = cJSON_Parse(a.out);
	assert_non_null(j);
	assert_true(num(j, "turns") == 1);
	assert_true(num(j, "overlap_turns") == 1);
	assert_true(num(j, "overlap_concurrency_median") == 2.5);
	assert_true(num(j, "overlap_concurrency_p90") == 2.5);
	assert_true(num(j, "max_concurrency") == 3); /* the trace-wide figure is unchanged */
	cJSON_Delete(j);
	cli_out_free(&a);
	snprintf(args, sizeof(args), "stats %s --decode-tokens-per-s 10", path);
	struct cli_out t = cli_run(args);
	assert_int_equal(t.status, 0);
	assert_non_null(strstr(t.out, "Turns                   1 (1 with overlapping calls)"));
	assert_non_null(strstr(t.out, "overlap concurrency   median 2.500, p90 2.500"));
	cli_out_free(&t);
	/* --no-curve: the same unbounded hits, no curve */
	struct cli_out c = cli_run("stats " GOOD " --json -");
	struct cli_out n = cli_run("stats " GOOD " --json - --no-curve");
	assert_int_equal(n.status, 0);
	cJSON *cj = cJSON_Parse(c.out), *nj = cJSON_Parse(n.out);
	assert_non_null(cj);
	assert_non_null(nj);
	assert_true(num(nj, "prefix_hit_tokens_unbounded") == num(cj, "prefix_hit_tokens_unbounded"));
	assert_true(num(nj, "distinct_blocks") == num(cj, "distinct_blocks"));
	assert_true(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(cj, "cache_curve")) > 0);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(nj, "cache_curve")), 0);
	cJSON_Delete(cj);
	cJSON_Delete(nj);
	cli_out_free(&c);
	cli_out_free(&n);
	struct cli_out bad = cli_run("stats " GOOD " --no-curve --cache-tokens 160");
	assert_int_equal(bad.status, 2);
	assert_non_null(strstr(bad.err, "--cache-tokens needs the curve"));
	cli_out_free(&bad);
	unlink(path);
}

static void test_replay_engineers(void **state)
{
	(void)state;
	/* slo.attainment=0: only failed calls would make the answer no */
	struct cli_out one = cli_run("replay " MOON " --json - --set engine.kv_cache_tokens=2000000 "
				     "--set slo.attainment=0");
	struct cli_out three = cli_run("replay " MOON " --json - --engineers 3 --jitter 60 --seed 4 "
			       "--set engine.kv_cache_tokens=2000000 --set slo.attainment=0");
	assert_int_equal(one.status, 0);
	assert_int_equal(three.status, 0);
	cJSON *a = cJSON_Parse(one.out), *b = cJSON_Parse(three.out);
	assert_non_null(a);
	assert_non_null(b);
	assert_true(num(b, "completed") + num(b, "failed") == 3 * (num(a, "completed") + num(a, "failed")));
	assert_true(num(a, "completed") == 200);
	cJSON_Delete(a);
	cJSON_Delete(b);
	cli_out_free(&one);
	cli_out_free(&three);
	struct cli_out t = cli_run("replay " MOON " --engineers 2 --set engine.kv_cache_tokens=2000000 "
				   "--set slo.attainment=0");
	assert_int_equal(t.status, 0);
	assert_non_null(strstr(t.out, "Scaled team: 2 engineers x 1 days"));
	cli_out_free(&t);
	struct cli_out bad = cli_run("replay " MOON " --engineers 0");
	assert_int_equal(bad.status, 2);
	assert_non_null(strstr(bad.err, "--engineers '0': expected an integer 1..1000000"));
	cli_out_free(&bad);
	bad = cli_run("replay " MOON " --days 3");
	assert_int_equal(bad.status, 2);
	assert_non_null(strstr(bad.err, "need --engineers"));
	cli_out_free(&bad);
}

/* stats --model M flags the calls longer than M's context: 13 of the first
 * 200 Mooncake requests exceed Qwen3-30B-A3B's 40,960 tokens (the longest
 * is 121,213), none exceed Llama-3.1-8B's 131,072. */
static void test_calls_over_context(void **state)
{
	(void)state;
	struct cli_out r = cli_run("stats " MOON " --no-curve --model qwen3-30b-a3b --json -");
	assert_int_equal(r.status, 0);
	cJSON *j = cJSON_Parse(r.out);
	assert_non_null(j);
	assert_true(num(j, "model_context_tokens") == 40960);
	assert_true(num(j, "calls_over_model_context") == 13);
	assert_true(num(j, "longest_call_tokens") == 121213);
	cJSON_Delete(j);
	cli_out_free(&r);
	r = cli_run("stats " MOON " --no-curve --model qwen3-30b-a3b");
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "longer than context   13 (6.50%) exceed qwen3-30b-a3b's "
				      "40960-token context (longest 121213 tokens): a replay on it "
				      "cannot serve them as recorded"));
	cli_out_free(&r);
	r = cli_run("stats " MOON " --no-curve --model llama-3.1-8b");
	assert_non_null(strstr(r.out, "longer than context   0 (0.00%)"));
	assert_null(strstr(r.out, "cannot serve"));
	cli_out_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_help_and_errors),
		cmocka_unit_test(test_json_keys_and_determinism),
		cmocka_unit_test(test_turns_and_no_curve),
		cmocka_unit_test(test_sampled_curve),
		cmocka_unit_test(test_replay_engineers),
		cmocka_unit_test(test_calls_over_context),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
