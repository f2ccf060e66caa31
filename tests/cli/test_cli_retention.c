/* SPDX-License-Identifier: Apache-2.0
 * End-to-end tests of KV retention across tool pauses (kv_retention.*) and
 * sticky routing of sub-agents (router.sticky_subagents), docs/scenario.md
 * "KV retention across tool pauses".
 *
 * The team (tests/fixtures/replay/retention_team.jsonl): 8 agent sessions,
 * each a private 26K-token context over a shared 4K system prompt, 8 calls
 * 40 s of tool time apart, beside one-off calls (a unique 12K-token prompt
 * every 2 s) on one H100 with Llama-3.1-8B and a KV cache of 300K tokens,
 * too small for every live session and the one-off traffic.  Under plain
 * LRU the one-off calls evict the paused agents' prefixes; with retention
 * the agents come back to them: the hit rate rises and P95 TTFT falls.
 * Bad keys are errors naming the key; the default changes nothing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "tests/support/cli_run.h"

#include <cjson/cJSON.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FIX AC_SRC_DIR "/tests/fixtures/replay"
#define TEAM "replay " FIX "/retention_team.jsonl --json - --set engine.kv_cache_tokens=300000 "
#define SUBS "replay " FIX "/subagents.jsonl --quiet --set replicas=4 " \
	     "--set router.policy=session_affinity "

static cJSON *run_json(const char *args)
{
	struct cli_out r = cli_run(args);
	if (r.status != 0 && r.status != 1)
		fail_msg("agentcap %s: exit %d: %s", args, r.status, r.err);
	cJSON *j = cJSON_Parse(r.out);
	if (!j)
		fail_msg("agentcap %s: no JSON on standard output", args);
	cli_out_free(&r);
	return j;
}

static double num(const cJSON *j, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, key);
	if (!cJSON_IsNumber(v))
		fail_msg("no number '%s' in the JSON", key);
	return v->valuedouble;
}

/* Retention raises the hit rate and lowers P95 TTFT against LRU, and the
 * report says what it held and what it served. */
static void test_team_retention_beats_lru(void **state)
{
	(void)state;
	cJSON *lru = run_json(TEAM);
	cJSON *ret = run_json(TEAM "--set kv_retention.mode=ttl");
	double hit_lru = num(lru, "prefix_cache_hit_rate"), hit_ret = num(ret, "prefix_cache_hit_rate");
	double p95_lru = num(lru, "p95_ttft_ms"), p95_ret = num(ret, "p95_ttft_ms");
	print_message("hit rate %.4f -> %.4f, p95 TTFT %.1f -> %.1f ms, prefill %.0f -> %.0f\n",
		      hit_lru, hit_ret, p95_lru, p95_ret, num(lru, "computed_prefill_tokens"),
		      num(ret, "computed_prefill_tokens"));
	assert_true(hit_ret > hit_lru + 0.1);
	assert_true(p95_ret < 0.8 * p95_lru);
	assert_true(num(ret, "computed_prefill_tokens") < num(lru, "computed_prefill_tokens"));
	assert_int_equal((int)num(lru, "completed"), (int)num(ret, "completed"));
	/* the figures are there only with retention */
	assert_null(cJSON_GetObjectItemCaseSensitive(lru, "kv_retained_blocks_peak"));
	double share = num(ret, "kv_retained_share_peak");
	assert_true(share > 0 && share <= 0.6 + 1e-9);
	assert_true(num(ret, "kv_retained_blocks_mean") > 0);
	assert_true(num(ret, "kv_retained_blocks_mean") <= num(ret, "kv_retained_blocks_peak"));
	assert_true(num(ret, "kv_retained_hit_tokens") > 0);
	assert_true(num(ret, "kv_retention_evictions_avoided") > 0);
	assert_true(num(ret, "kv_retention_ttl_s") == 300);
	/* the cache ran out of unretained blocks and retention gave way: every
	 * call was still admitted */
	assert_true(num(ret, "kv_retained_evicted_blocks") > 0);
	cJSON_Delete(lru);
	cJSON_Delete(ret);
}

/* A time to live shorter than the tool pauses keeps nothing for the
 * agents' return: the figures are LRU's again or close to them. */
static void test_short_ttl_keeps_little(void **state)
{
	(void)state;
	cJSON *lru = run_json(TEAM);
	cJSON *shrt = run_json(TEAM "--set kv_retention.mode=ttl --set kv_retention.ttl_s=1");
	cJSON *lng = run_json(TEAM "--set kv_retention.mode=ttl");
	assert_true(num(shrt, "prefix_cache_hit_rate") < num(lng, "prefix_cache_hit_rate"));
	assert_true(num(shrt, "prefix_cache_hit_rate") < num(lru, "prefix_cache_hit_rate") + 0.05);
	cJSON_Delete(lru);
	cJSON_Delete(shrt);
	cJSON_Delete(lng);
}

static void expect_error(const char *args, const char *want)
{
	struct cli_out r = cli_run(args);
	if (r.status != 2 || !strstr(r.err, want))
		fail_msg("agentcap %s: exit %d, expected 2 with '%s': %s", args, r.status, want, r.err);
	cli_out_free(&r);
}

static void test_bad_keys_named(void **state)
{
	(void)state;
	expect_error(TEAM "--set kv_retention.mode=pin",
		     "kv_retention.mode: unknown 'pin' (expected \"off\" or \"ttl\")");
	expect_error(TEAM "--set kv_retention.ttl_s=0", "kv_retention.ttl_s: expected");
	expect_error(TEAM "--set kv_retention.max_fraction=1.5", "kv_retention.max_fraction: expected");
	expect_error(TEAM "--set kv_retention.mode=ttl --set engine.enable_prefix_caching=false",
		     "kv_retention.mode ttl keeps cached prefixes, but prefix caching is off");
	expect_error(TEAM "--set router.sticky_subagents=true",
		     "router.sticky_subagents: only session_affinity keeps a session on one replica");
}

/* The replica column of each call: sticky, every sub-agent lands on its
 * parent's replica; without it, consistent hashing spreads them. */
static int replicas_used(const char *sets)
{
	char args[1024];
	snprintf(args, sizeof(args), SUBS "%s --csv subagents.csv", sets);
	struct cli_out r = cli_run(args);
	if (r.status != 0)
		fail_msg("agentcap %s: exit %d: %s", args, r.status, r.err);
	cli_out_free(&r);
	FILE *f = fopen("subagents.csv", "r");
	assert_non_null(f);
	char line[4096];
	int seen[64] = {0}, n = 0;
	assert_non_null(fgets(line, sizeof(line), f)); /* header */
	while (fgets(line, sizeof(line), f)) {
		char *c = line;
		for (int k = 0; k < 3 && c; k++)
			c = strchr(c, ',') ? strchr(c, ',') + 1 : NULL;
		assert_non_null(c);
		int rep = atoi(c);
		assert_true(rep >= 0 && rep < 64);
		n += !seen[rep];
		seen[rep] = 1;
	}
	fclose(f);
	remove("subagents.csv");
	return n;
}

static void test_sticky_subagents(void **state)
{
	(void)state;
	assert_true(replicas_used("") > 1);
	assert_true(replicas_used("--set router.sticky_subagents=false") > 1);
	assert_int_equal(replicas_used("--set router.sticky_subagents=true"), 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_team_retention_beats_lru),
		cmocka_unit_test(test_short_ttl_keeps_little),
		cmocka_unit_test(test_bad_keys_named),
		cmocka_unit_test(test_sticky_subagents),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
