/* SPDX-License-Identifier: Apache-2.0
 * End-to-end tests of what trips a new user: who is who in imported agent
 * logs (--engineer, --engineer-dirs) so that --engineers resamples people,
 * the hint to import a raw Claude Code or Codex log, summaries on standard
 * error when a command writes a file, a one-office synthetic team
 * (--timezones), the catalogue's --json FILE / -, --sources and rental
 * prices, what --seed does in a plain replay, durations in h/min, and a
 * stats capacity curve over realistic KV sizes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "tests/support/cli_run.h"

#include <cjson/cJSON.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define FIX AC_SRC_DIR "/tests/fixtures"
#define SCRATCH AC_BIN_DIR "/tests/cli/scratch_usage"

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* Two engineers' Codex logs in a folder each: the same rollout, the second
 * with another session id. */
static void make_team(void)
{
	mkdir(SCRATCH, 0777);
	mkdir(SCRATCH "/team", 0777);
	mkdir(SCRATCH "/team/alice", 0777);
	mkdir(SCRATCH "/team/bob", 0777);
	char *text = cli_slurp(FIX "/import/codex_rollout.jsonl", NULL);
	assert_non_null(text);
	write_file(SCRATCH "/team/alice/r1.jsonl", text);
	const char *id = "01a7c9e4-6d12-7b3a-9f42-8c6d5e1a0b73";
	for (char *p = strstr(text, id); p; p = strstr(p + 1, id))
		p[strlen(id) - 1] = '4';
	write_file(SCRATCH "/team/bob/r2.jsonl", text);
	free(text);
}

static void test_import_names_engineers(void **state)
{
	(void)state;
	make_team();
	/* today's behaviour: pooled logs, no engineer */
	struct cli_out r = cli_run("import codex " SCRATCH "/team -o " SCRATCH "/pooled.jsonl");
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.err, "0 engineers named"));
	cli_out_free(&r);
	r = cli_run("stats " SCRATCH "/pooled.jsonl --no-curve");
	assert_non_null(strstr(r.out, "Engineers               0"));
	cli_out_free(&r);
	/* a folder per engineer */
	r = cli_run("import codex --engineer-dirs " SCRATCH "/team -o " SCRATCH "/dirs.jsonl");
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.err, "2 engineers named"));
	cli_out_free(&r);
	r = cli_run("stats " SCRATCH "/dirs.jsonl --no-curve");
	assert_non_null(strstr(r.out, "Engineers               2"));
	cli_out_free(&r);
	/* --engineer per path gives the same trace */
	r = cli_run("import codex --engineer alice " SCRATCH "/team/alice --engineer bob " SCRATCH
		    "/team/bob/r2.jsonl -o " SCRATCH "/named.jsonl");
	assert_int_equal(r.status, 0);
	cli_out_free(&r);
	size_t na, nb;
	char *a = cli_slurp(SCRATCH "/dirs.jsonl", &na), *b = cli_slurp(SCRATCH "/named.jsonl", &nb);
	assert_non_null(a);
	assert_non_null(b);
	assert_int_equal(na, nb);
	assert_memory_equal(a, b, na);
	free(a);
	free(b);
	/* so --engineers resamples two people, not one pooled log */
	r = cli_run("replay " SCRATCH "/dirs.jsonl --engineers 4");
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "from 2 engineers"));
	cli_out_free(&r);
	r = cli_run("replay " SCRATCH "/pooled.jsonl --engineers 4");
	assert_non_null(strstr(r.out, "from 1 engineers"));
	cli_out_free(&r);
	/* misuse */
	r = cli_run("import codex " SCRATCH "/team --engineer x -o " SCRATCH "/x.jsonl");
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "--engineer x names no PATH"));
	cli_out_free(&r);
	r = cli_run("import codex --engineer-dirs " SCRATCH "/team/alice -o " SCRATCH "/x.jsonl");
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "expected one folder per engineer"));
	cli_out_free(&r);
	r = cli_run("import mooncake --engineer a " FIX "/traces/mooncake_head200.jsonl -o " SCRATCH
		    "/x.jsonl");
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "request-level rows belong to no engineer"));
	cli_out_free(&r);
	assert_int_equal(access(SCRATCH "/x.jsonl", F_OK), -1);
}

static void test_raw_logs_say_import(void **state)
{
	(void)state;
	struct cli_out r = cli_run("replay " FIX "/import/claude_session.jsonl");
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "agentcap import claude-code"));
	cli_out_free(&r);
	r = cli_run("stats " FIX "/import/codex_rollout.jsonl");
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "agentcap import codex"));
	cli_out_free(&r);
}

static void test_synth_one_office_and_stderr(void **state)
{
	(void)state;
	mkdir(SCRATCH, 0777);
	struct cli_out r = cli_run("synth --engineers 6 --days 1 --timezones 1 -o " SCRATCH
				   "/office.jsonl");
	assert_int_equal(r.status, 0);
	assert_string_equal(r.out, ""); /* the summary is on standard error */
	assert_non_null(strstr(r.err, "6 engineers in 1 time zone x 1 days"));
	/* a start after a minute also reads in h/min */
	assert_non_null(strstr(r.err, " h "));
	cli_out_free(&r);
	r = cli_run("synth --engineers 6 --days 1 -o " SCRATCH "/four.jsonl");
	assert_int_equal(r.status, 0);
	assert_string_equal(r.out, "");
	assert_non_null(strstr(r.err, "in 4 time zones"));
	cli_out_free(&r);
	/* one office: every session starts within one office day (Central
	 * Europe, the heaviest zone: 05:00-23:00 UTC at the widest) */
	r = cli_run("stats " SCRATCH "/office.jsonl --no-curve --json -");
	cJSON *j = cJSON_Parse(r.out);
	assert_non_null(j);
	double first = cJSON_GetObjectItem(j, "first_t_s")->valuedouble;
	double last = cJSON_GetObjectItem(j, "last_t_s")->valuedouble;
	assert_true(last - first < 18 * 3600.0);
	cJSON_Delete(j);
	cli_out_free(&r);
	r = cli_run("stats " SCRATCH "/office.jsonl --no-curve");
	assert_non_null(strstr(r.out, "(zero service time; "));
	cli_out_free(&r);
	r = cli_run("synth --workload fixed --input-len 10 --output-len 5 --num-prompts 3 "
		    "--request-rate 1 --timezones 1 -o " SCRATCH "/b.jsonl");
	assert_int_equal(r.status, 2);
	cli_out_free(&r);
	r = cli_run("synth --engineers 2 --days 1 --timezones 0 -o " SCRATCH "/b.jsonl");
	assert_int_equal(r.status, 2);
	cli_out_free(&r);
}

static void test_catalog_outputs(void **state)
{
	(void)state;
	mkdir(SCRATCH, 0777);
	struct cli_out r = cli_run("catalog --json -");
	assert_int_equal(r.status, 0);
	cJSON *j = cJSON_Parse(r.out);
	assert_non_null(j);
	cJSON_Delete(j);
	struct cli_out all = cli_run("catalog --json");
	assert_string_equal(all.out, r.out);
	cli_out_free(&all);
	struct cli_out f = cli_run("catalog --json " SCRATCH "/catalog.json");
	assert_int_equal(f.status, 0);
	assert_string_equal(f.out, "");
	assert_non_null(strstr(f.err, "wrote " SCRATCH "/catalog.json"));
	char *text = cli_slurp(SCRATCH "/catalog.json", NULL);
	assert_non_null(text);
	assert_string_equal(text, r.out);
	free(text);
	cli_out_free(&f);
	cli_out_free(&r);
	/* rental prices in the table */
	r = cli_run("catalog");
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "rent/GPU-hour"));
	assert_non_null(strstr(r.out, "USD 2.49-2.85"));
	cli_out_free(&r);
	/* every figure's source */
	r = cli_run("catalog --sources");
	assert_int_equal(r.status, 0);
	const char *h100 = strstr(r.out, "hardware h100-sxm\n");
	assert_non_null(h100);
	assert_non_null(strstr(h100, "mem_bw_gbs"));
	assert_non_null(strstr(r.out, "usd_per_eur"));
	assert_non_null(strstr(r.out, "1.068 USD/EUR  [field-notes.md"));
	cli_out_free(&r);
	r = cli_run("catalog --json --sources");
	assert_int_equal(r.status, 2);
	cli_out_free(&r);
}

static void test_replay_help_and_durations(void **state)
{
	(void)state;
	struct cli_out r = cli_run("replay --help");
	assert_non_null(strstr(r.out, "In a plain replay nothing is drawn at random"));
	cli_out_free(&r);
	/* a 20-token KV cache queues the Mooncake head for minutes: the long
	 * latencies also read in min and s */
	r = cli_run("replay " FIX "/traces/mooncake_head200.jsonl --set engine.kv_cache_tokens=40000");
	assert_int_equal(r.status, 1); /* minutes of queueing miss the SLO: the answer is no */
	assert_non_null(strstr(r.out, "Benchmark duration (s):"));
	assert_non_null(strstr(r.out, " min "));
	cli_out_free(&r);
}

static void test_stats_curve_range(void **state)
{
	(void)state;
	mkdir(SCRATCH, 0777);
	struct cli_out r = cli_run("synth --engineers 2 --days 1 -o " SCRATCH "/two.jsonl");
	assert_int_equal(r.status, 0);
	cli_out_free(&r);
	r = cli_run("stats " SCRATCH "/two.jsonl --model llama-3.1-8b --json -");
	assert_int_equal(r.status, 0);
	cJSON *j = cJSON_Parse(r.out);
	assert_non_null(j);
	cJSON *curve = cJSON_GetObjectItem(j, "cache_curve");
	int n = cJSON_GetArraySize(curve);
	assert_true(n >= 4);
	/* from one small GPU's KV room (32768 tokens, 4.3 GB of Llama-3.1-8B)
	 * doubling up to all distinct blocks */
	cJSON *p0 = cJSON_GetArrayItem(curve, 0);
	assert_int_equal(cJSON_GetObjectItem(p0, "cache_tokens")->valuedouble, 32768);
	assert_true(fabs(cJSON_GetObjectItem(p0, "cache_gb")->valuedouble - 4.294967296) < 1e-6);
	double prev = 0, prev_rate = -1;
	for (int i = 0; i < n; i++) {
		cJSON *p = cJSON_GetArrayItem(curve, i);
		double t = cJSON_GetObjectItem(p, "cache_tokens")->valuedouble;
		double rate = cJSON_GetObjectItem(p, "hit_rate")->valuedouble;
		assert_true(t > prev && rate >= prev_rate);
		if (i > 0 && i < n - 1)
			assert_true(t == 2 * prev);
		prev = t;
		prev_rate = rate;
	}
	double distinct = cJSON_GetObjectItem(j, "distinct_blocks")->valuedouble * 16;
	assert_true(prev == distinct);
	cJSON_Delete(j);
	cli_out_free(&r);
	/* a hybrid model's GB count the full-attention layers: gpt-oss-120b's
	 * 18 of 36 layers x 8 KV heads x 64 x K and V x 2 bytes */
	r = cli_run("stats " SCRATCH "/two.jsonl --model gpt-oss-120b --json -");
	assert_int_equal(r.status, 0);
	j = cJSON_Parse(r.out);
	assert_non_null(j);
	cJSON *kvb = cJSON_GetObjectItem(j, "kv_bytes_per_token");
	assert_non_null(kvb);
	assert_true(kvb->valuedouble == 18.0 * 8 * 64 * 2 * 2);
	cJSON_Delete(j);
	cli_out_free(&r);
}

static cJSON *summary_of(cJSON *j)
{
	if (cJSON_GetObjectItem(j, "cached_prompt_tokens"))
		return j;
	for (cJSON *c = j->child; c; c = c->next)
		if (cJSON_IsObject(c)) {
			cJSON *x = summary_of(c);
			if (x)
				return x;
		}
	return NULL;
}

/* kv_tiers: a team whose sessions idle through tool calls in a small GPU
 * cache gets some of their evicted prefixes back from a host tier (cached
 * tokens by tier in the JSON and the table); without the tier the keys are
 * absent, so a run without tiers prints what it always did. */
static void test_replay_kv_tiers(void **state)
{
	(void)state;
	mkdir(SCRATCH, 0777);
	struct cli_out r = cli_run("synth --engineers 4 --days 1 -o " SCRATCH "/four.jsonl");
	assert_int_equal(r.status, 0);
	cli_out_free(&r);
	r = cli_run("replay " SCRATCH "/four.jsonl --set engine.kv_cache_tokens=300000 --json -");
	assert_int_equal(r.status, 0);
	cJSON *j = cJSON_Parse(r.out);
	assert_non_null(j);
	cJSON *s0 = summary_of(j);
	assert_non_null(s0);
	assert_null(cJSON_GetObjectItem(s0, "cached_tokens_host"));
	double cached0 = cJSON_GetObjectItem(s0, "cached_prompt_tokens")->valuedouble;
	cJSON_Delete(j);
	cli_out_free(&r);
	r = cli_run("replay " SCRATCH "/four.jsonl --set engine.kv_cache_tokens=300000 "
		    "--set kv_tiers.host_gb=200 --json " SCRATCH "/tiers.json");
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "Cached tokens from host tier:"));
	cli_out_free(&r);
	char *text = NULL;
	{
		FILE *f = fopen(SCRATCH "/tiers.json", "rb");
		assert_non_null(f);
		text = calloc(1, 1 << 22);
		assert_non_null(text);
		size_t n = fread(text, 1, (1 << 22) - 1, f);
		assert_true(n > 0);
		fclose(f);
	}
	j = cJSON_Parse(text);
	free(text);
	assert_non_null(j);
	cJSON *s1 = summary_of(j);
	double cached = cJSON_GetObjectItem(s1, "cached_prompt_tokens")->valuedouble;
	double gpu = cJSON_GetObjectItem(s1, "cached_tokens_gpu")->valuedouble;
	double host = cJSON_GetObjectItem(s1, "cached_tokens_host")->valuedouble;
	double loaded = cJSON_GetObjectItem(s1, "kv_tier_loaded_blocks")->valuedouble;
	printf("cached tokens: %.0f without a tier; with one %.0f (GPU %.0f, host %.0f)\n", cached0,
	       cached, gpu, host);
	assert_true(host > 0);
	assert_true(gpu + host == cached);
	assert_true(cached > cached0);
	assert_true(loaded * 16 >= host);
	assert_true(cJSON_GetObjectItem(s1, "kv_tier_load_s")->valuedouble > 0);
	/* written through by default: what the stores moved is reported */
	assert_string_equal(cJSON_GetObjectItem(s1, "kv_tier_mode")->valuestring, "write_through");
	assert_true(cJSON_GetObjectItem(s1, "kv_tier_stored_blocks")->valuedouble > 0);
	assert_true(cJSON_GetObjectItem(s1, "kv_tier_store_s")->valuedouble > 0);
	assert_true(cJSON_GetObjectItem(s1, "kv_tier_store_stall_s")->valuedouble == 0);
	cJSON_Delete(j);
	/* a mode or a chunk it cannot take: exit 2 naming the key */
	r = cli_run("replay " SCRATCH "/four.jsonl --set kv_tiers.host_gb=10 --set kv_tiers.mode=lru");
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "kv_tiers.mode: unknown 'lru' (expected \"write_through\" or "
				      "\"evict\")"));
	cli_out_free(&r);
	r = cli_run("replay " SCRATCH "/four.jsonl --set kv_tiers.host_gb=10 "
		    "--set kv_tiers.chunk_tokens=100");
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "kv_tiers.chunk_tokens = 100 is not a multiple of the KV "
				      "block size"));
	cli_out_free(&r);
	/* a disk tier needs its bandwidth and a host tier above it */
	r = cli_run("replay " SCRATCH "/four.jsonl --set kv_tiers.host_gb=10 --set kv_tiers.disk_gb=100");
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "kv_tiers.disk_gbs"));
	cli_out_free(&r);
	r = cli_run("replay " SCRATCH "/four.jsonl --set kv_tiers.disk_gb=100 --set kv_tiers.disk_gbs=5");
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "kv_tiers.host_gb"));
	cli_out_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_import_names_engineers),
		cmocka_unit_test(test_replay_kv_tiers),
		cmocka_unit_test(test_raw_logs_say_import),
		cmocka_unit_test(test_synth_one_office_and_stderr),
		cmocka_unit_test(test_catalog_outputs),
		cmocka_unit_test(test_replay_help_and_durations),
		cmocka_unit_test(test_stats_curve_range),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
