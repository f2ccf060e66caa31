/* SPDX-License-Identifier: Apache-2.0
 * test_whatif: `agentcap whatif` end to end.
 *   - a synthetic team whose harness starts every call with a timestamp
 *     line: as recorded the hit rate is near zero and the computed prefill
 *     several times the pinned run's; pinned, the hit rate is the one of the
 *     same team without the header (within 0.5 percentage points);
 *   - an OpenAI gateway log with a "Date:" line at the top of the system
 *     prompt: --pattern '^Date: .*$' --pin against the same log without the
 *     line and a volatile segment injected at `start`: the volatile runs agree
 *     within 1 point, the fixed runs within 4 points (restated prompts
 *     prefill each assistant message once; extending ones cache the decode);
 *   - with --slo, each variant is sized as `agentcap size` does: the
 *     timestamp team as recorded (volatile) needs more GPUs than pinned, and
 *     costs more a month; the sizing's rows and its JSON section agree;
 *   - a recorded trace of nearly a day and a half is sized as replays of
 *     2 days (the whole days it spans, a started one counting);
 *   - import --rules pins at import time; a volatile rule undoes it;
 *   - the harness what-ifs each move the figure they should;
 *   - a bad pattern shows the pattern, PCRE2's message and the offset (2);
 *   - --jobs 1 and --jobs 2 write the same JSON, sizing included, with and
 *     without PCRE2 rules (whose sizing replays run one after another).
 */
#include <cjson/cJSON.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <cmocka.h>

#include "tests/support/cli_run.h"

#define SCRATCH AC_BIN_DIR "/tests/plan/scratch"
#define FIX AC_SRC_DIR "/tests/fixtures/whatif"

static void run_ok(const char *args)
{
	struct cli_out r = cli_run(args);
	if (r.status != 0)
		fail_msg("agentcap %s: status %d, stderr '%s'", args, r.status, r.err);
	cli_out_free(&r);
}

struct pair {
	double a, b;
};

/* Row `key` of `agentcap whatif ARGS --json -`. */
static struct pair row(const char *args, const char *key)
{
	char cmd[2048];
	snprintf(cmd, sizeof(cmd), "whatif %s --json -", args);
	struct cli_out r = cli_run(cmd);
	if (r.status != 0)
		fail_msg("agentcap %s: status %d, stderr '%s'", cmd, r.status, r.err);
	cJSON *j = cJSON_Parse(r.out);
	assert_non_null(j);
	struct pair p = {-1, -1};
	const cJSON *e;
	cJSON_ArrayForEach(e, cJSON_GetObjectItem(j, "rows")) {
		if (strcmp(cJSON_GetObjectItem(e, "key")->valuestring, key) == 0) {
			p.a = cJSON_GetObjectItem(e, "a")->valuedouble;
			p.b = cJSON_GetObjectItem(e, "b")->valuedouble;
		}
	}
	cJSON_Delete(j);
	cli_out_free(&r);
	assert_true(p.a >= 0);
	return p;
}

static int setup(void **state)
{
	(void)state;
	mkdir(AC_BIN_DIR "/tests/plan", 0777);
	mkdir(SCRATCH, 0777);
	FILE *f = fopen(SCRATCH "/team.json", "w");
	assert_non_null(f);
	fputs("{\"harness\":{\"context_window_tokens\":131072}}\n", f);
	fclose(f);
	f = fopen(SCRATCH "/team_hdr.json", "w");
	assert_non_null(f);
	fputs("{\"harness\":{\"context_window_tokens\":131072,\"timestamp_header_tokens\":20}}\n", f);
	fclose(f);
	f = fopen(SCRATCH "/date.json", "w");
	assert_non_null(f);
	fputs("[{\"name\":\"date\",\"pattern\":\"^Date: .*$\",\"action\":\"pin\"}]\n", f);
	fclose(f);
	run_ok("synth --engineers 2 --days 1 --seed 3 --profile " SCRATCH "/team.json -o " SCRATCH
	       "/team.jsonl --quiet");
	run_ok("synth --engineers 2 --days 1 --seed 3 --profile " SCRATCH "/team_hdr.json -o " SCRATCH
	       "/team_hdr.jsonl --quiet");
	run_ok("import openai-log --keep-text " FIX "/openai_date.jsonl -o " SCRATCH "/date.jsonl");
	run_ok("import openai-log " FIX "/openai_nodate.jsonl -o " SCRATCH "/nodate.jsonl");
	return 0;
}

static void test_timestamp_team(void **state)
{
	(void)state;
	const char *pin = "cache-bust " SCRATCH "/team_hdr.jsonl --pattern '^Date: .*$' --pin";
	struct pair hit = row(pin, "prefix_cache_hit_rate");
	struct pair computed = row(pin, "prefill_tokens_computed");
	/* without the header: the same team (same seed, same draws) */
	struct cli_out r = cli_run("replay " SCRATCH "/team.jsonl --json -");
	assert_int_equal(r.status, 0);
	cJSON *j = cJSON_Parse(r.out);
	assert_non_null(j);
	struct pair plain = {100 * cJSON_GetObjectItem(j, "prefix_cache_hit_rate")->valuedouble, 0};
	cJSON_Delete(j);
	cli_out_free(&r);
	assert_true(hit.a < 1.0);                     /* volatile: near zero (%) */
	assert_true(computed.a > 5 * computed.b);     /* several times the prefill */
	assert_true(plain.a > 80);
	assert_true(hit.b > plain.a - 0.5 && hit.b < plain.a + 0.5);
}

/* whatif names the router both variants ran under, in the text and in the
 * JSON's "run", with the settings it reads. */
static void test_router_printed(void **state)
{
	(void)state;
	struct cli_out r = cli_run("whatif no-retry " SCRATCH "/team.jsonl --set replicas=2");
	if (r.status != 0)
		fail_msg("status %d: %s", r.status, r.err);
	assert_non_null(strstr(r.out, "Router: sglang_smg_v1.9_approx (cache_threshold 0.3, "));
	cli_out_free(&r);
	r = cli_run("whatif no-retry " SCRATCH "/team.jsonl --set replicas=2 "
		    "--set router.policy=llmd_v0.10_approx --json -");
	if (r.status != 0)
		fail_msg("status %d: %s", r.status, r.err);
	cJSON *j = cJSON_Parse(r.out);
	assert_non_null(j);
	const cJSON *rt = cJSON_GetObjectItem(cJSON_GetObjectItem(j, "run"), "router");
	assert_string_equal(cJSON_GetObjectItem(rt, "policy")->valuestring, "llmd_v0.10_approx");
	assert_string_equal(cJSON_GetObjectItem(rt, "settings")->valuestring,
			    "llmd_v0.10_approx (prefix_weight 3, queue_weight 2, kv_weight 2, "
			    "scrape_interval_ms 50)");
	cJSON_Delete(j);
	cli_out_free(&r);
}

/* Row `key` of hardware hw in the parsed document j; NAN for null. */
static struct pair hw_row(const cJSON *j, const char *key, const char *hw)
{
	struct pair p = {-2, -2};
	const cJSON *e;
	cJSON_ArrayForEach(e, cJSON_GetObjectItem(j, "rows")) {
		const cJSON *h = cJSON_GetObjectItem(e, "hardware");
		if (strcmp(cJSON_GetObjectItem(e, "key")->valuestring, key) == 0 && cJSON_IsString(h) &&
		    strcmp(h->valuestring, hw) == 0) {
			const cJSON *a = cJSON_GetObjectItem(e, "a"), *b = cJSON_GetObjectItem(e, "b");
			p.a = cJSON_IsNumber(a) ? a->valuedouble : -1;
			p.b = cJSON_IsNumber(b) ? b->valuedouble : -1;
		}
	}
	if (p.a == -2)
		fail_msg("no row %s for %s", key, hw);
	return p;
}

static void test_size_timestamp_team(void **state)
{
	(void)state;
	struct cli_out r = cli_run("whatif cache-bust " SCRATCH "/team_hdr.jsonl --pattern '^Date: .*$' "
				   "--pin --slo ttft_p95=2s,tpot_p50=50ms --hardware h100-sxm --json -");
	if (r.status != 0)
		fail_msg("status %d, stderr '%s'", r.status, r.err);
	cJSON *j = cJSON_Parse(r.out);
	assert_non_null(j);
	/* as recorded, the header makes every call a cache miss from its first
	 * block: the deployment that holds the objectives is larger */
	struct pair gpus = hw_row(j, "gpus", "h100-sxm");
	assert_true(gpus.b >= 1);
	assert_true(gpus.a > gpus.b);
	struct pair bought = hw_row(j, "usd_month_purchase", "h100-sxm");
	assert_true(bought.b > 0);
	assert_true(bought.a > bought.b);
	struct pair rented = hw_row(j, "usd_month_elastic", "h100-sxm");
	assert_true(rented.b > 0 && rented.a > rented.b);
	/* the JSON section says the same, with the shapes */
	const cJSON *size = cJSON_GetObjectItem(j, "size");
	assert_non_null(size);
	assert_string_equal(cJSON_GetObjectItem(size, "slo")->valuestring,
			    "ttft_p95=2000ms,tpot_p50=50ms");
	const cJSON *opt = cJSON_GetArrayItem(cJSON_GetObjectItem(size, "options"), 0);
	assert_string_equal(cJSON_GetObjectItem(opt, "hardware")->valuestring, "h100-sxm");
	const cJSON *vs = cJSON_GetObjectItem(opt, "variants");
	assert_int_equal(cJSON_GetArraySize(vs), 2);
	for (int i = 0; i < 2; i++) {
		const cJSON *v = cJSON_GetArrayItem(vs, i);
		assert_true(cJSON_IsTrue(cJSON_GetObjectItem(v, "found")));
		double g = cJSON_GetObjectItem(v, "gpus")->valuedouble;
		assert_true(g == (i == 0 ? gpus.a : gpus.b));
		assert_true(g == cJSON_GetObjectItem(v, "replicas")->valuedouble *
				     cJSON_GetObjectItem(v, "tensor_parallel_size")->valuedouble *
				     cJSON_GetObjectItem(v, "pipeline_parallel_size")->valuedouble);
		const cJSON *usd = cJSON_GetObjectItem(v, "usd_month");
		assert_true(cJSON_GetObjectItem(usd, "purchase")->valuedouble ==
			    (i == 0 ? bought.a : bought.b));
	}
	cJSON_Delete(j);
	cli_out_free(&r);
}

static void test_openai_date_vs_injection(void **state)
{
	(void)state;
	struct pair rule = row("cache-bust " SCRATCH "/date.jsonl --pattern '^Date: .*$' --pin",
			       "prefix_cache_hit_rate");
	/* "Date: Tue, 01 Dec 2026 10:16:40 GMT\n": 36 characters, 9 tokens */
	struct pair inj = row("cache-bust " SCRATCH "/nodate.jsonl --inject-at start --tokens 9",
			      "prefix_cache_hit_rate");
	assert_true(rule.a < 1.0 && inj.b < 1.0);
	assert_true(rule.a - inj.b < 1.0 && inj.b - rule.a < 1.0);
	assert_true(rule.b > 70);
	assert_true(rule.b - inj.a < 4.0 && inj.a - rule.b < 4.0);
}

static void test_import_rules(void **state)
{
	(void)state;
	run_ok("import openai-log --keep-text --rules " SCRATCH "/date.json " FIX
	       "/openai_date.jsonl -o " SCRATCH "/pinned.jsonl");
	/* the pinned import caches as the pinned replay does; a volatile rule
	 * on its text puts the dates back into the content ids */
	struct pair p = row("cache-bust " SCRATCH "/pinned.jsonl --pattern '^Date: .*$'",
			    "prefix_cache_hit_rate");
	struct pair q = row("cache-bust " SCRATCH "/date.jsonl --pattern '^Date: .*$' --pin",
			    "prefix_cache_hit_rate");
	assert_true(p.a == q.b);
	assert_true(p.b < 1.0);
	struct cli_out r = cli_run("import openai-log --rules " SCRATCH "/date.json " FIX
				   "/openai_date.jsonl -o " SCRATCH "/x.jsonl");
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "--keep-text"));
	cli_out_free(&r);
}

static void test_harness_whatifs(void **state)
{
	(void)state;
	const char *t = SCRATCH "/team.jsonl";
	char a[512];
	snprintf(a, sizeof(a), "no-retry %s", t);
	struct pair done = row(a, "completed");
	assert_true(done.b < done.a);
	snprintf(a, sizeof(a), "think-time %s --factor 0.1", t);
	struct pair dur = row(a, "duration_s");
	assert_true(dur.b < dur.a);
	snprintf(a, sizeof(a), "max-output %s --tokens 20", t);
	struct pair tpot = row(a, "prompt_tokens");
	assert_true(tpot.b < tpot.a);
	snprintf(a, sizeof(a), "compact-at %s --tokens 30000", t);
	struct pair pr = row(a, "prompt_tokens");
	assert_true(pr.b < pr.a);
	snprintf(a, sizeof(a), "concurrency %s --factor 0", t);
	struct pair conc = row(a, "completed");
	assert_true(conc.b < conc.a);
	snprintf(a, sizeof(a), "concurrency %s --factor 2", t);
	conc = row(a, "completed");
	assert_true(conc.b > conc.a);
}

/* The JSON of `agentcap whatif ARGS --json - --jobs J` (free it). */
static char *json_jobs(const char *args, int jobs)
{
	char cmd[2048];
	snprintf(cmd, sizeof(cmd), "whatif %s --json - --jobs %d", args, jobs);
	struct cli_out r = cli_run(cmd);
	if (r.status != 0)
		fail_msg("agentcap %s: status %d, stderr '%s'", cmd, r.status, r.err);
	char *out = r.out;
	r.out = NULL;
	cli_out_free(&r);
	return out;
}

static void test_jobs_identical(void **state)
{
	(void)state;
	static const char *const ARGS[] = {
		"no-retry " SCRATCH "/team_hdr.jsonl --slo ttft_p95=2s,tpot_p50=50ms --hardware h100-sxm",
		"cache-bust " SCRATCH "/team_hdr.jsonl --pattern '^Date: .*$' --pin --slo "
		"ttft_p95=2s,tpot_p50=50ms --hardware h100-sxm",
	};
	for (size_t i = 0; i < sizeof(ARGS) / sizeof(ARGS[0]); i++) {
		char *one = json_jobs(ARGS[i], 1), *two = json_jobs(ARGS[i], 2);
		assert_non_null(strstr(one, "\"size\""));
		assert_string_equal(one, two);
		free(one);
		free(two);
	}
	struct cli_out r = cli_run("whatif no-retry " SCRATCH "/team.jsonl --jobs 0");
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "--jobs"));
	cli_out_free(&r);
}

/* A recorded trace (no resampling) whose calls span a day and a half less
 * an hour: the sizing prices a month of replays of the whole days it spans,
 * 2 (not 1: a started day counts), in the JSON and in the table. */
static void test_days_of_a_day_and_a_half(void **state)
{
	(void)state;
	FILE *f = fopen(SCRATCH "/day_and_half.jsonl", "w");
	assert_non_null(f);
	fputs("{\"format\":\"agentcap-trace\",\"version\":1,\"block_tokens_hint\":16}\n"
	      "{\"session\":\"a\",\"engineer\":\"e1\",\"task\":\"t1\",\"t\":0,\"prompt\":"
	      "[[\"sys\",2000,{\"text\":\"Date: Mon\\nYou are a coding agent.\"}],[\"u1\",200]],"
	      "\"output_tokens\":100}\n"
	      "{\"session\":\"a\",\"gap\":5,\"extends\":true,\"prompt\":[[\"u2\",300]],"
	      "\"output_tokens\":100}\n"
	      "{\"session\":\"b\",\"engineer\":\"e1\",\"task\":\"t2\",\"t\":126000,\"prompt\":"
	      "[[\"sys\",2000,{\"text\":\"Date: Tue\\nYou are a coding agent.\"}],[\"u3\",200]],"
	      "\"output_tokens\":100}\n",
	      f);
	assert_int_equal(fclose(f), 0);
	const char *args = "whatif cache-bust " SCRATCH "/day_and_half.jsonl --pattern '^Date: .*$' "
			   "--pin --slo ttft_p95=2s,tpot_p50=50ms --hardware h100-sxm";
	char cmd[1024];
	snprintf(cmd, sizeof(cmd), "%s --json -", args);
	struct cli_out r = cli_run(cmd);
	if (r.status != 0)
		fail_msg("status %d, stderr '%s'", r.status, r.err);
	cJSON *j = cJSON_Parse(r.out);
	assert_non_null(j);
	const cJSON *size = cJSON_GetObjectItem(j, "size");
	assert_non_null(size);
	assert_int_equal(cJSON_GetObjectItem(size, "days")->valuedouble, 2);
	cJSON_Delete(j);
	cli_out_free(&r);
	r = cli_run(args);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "a month is 10.88 replays of 2 days"));
	cli_out_free(&r);

	/* the same calls with no engineer named: a request-level trace's
	 * month counts the whole days its span covers, rounded up */
	f = fopen(SCRATCH "/day_and_half_anon.jsonl", "w");
	assert_non_null(f);
	fputs("{\"format\":\"agentcap-trace\",\"version\":1,\"block_tokens_hint\":16}\n"
	      "{\"session\":\"a\",\"t\":0,\"prompt\":[[\"sys\",2000],[\"u1\",200]],"
	      "\"output_tokens\":100}\n"
	      "{\"session\":\"a\",\"gap\":5,\"extends\":true,\"prompt\":[[\"u2\",300]],"
	      "\"output_tokens\":100}\n"
	      "{\"session\":\"b\",\"t\":126000,\"prompt\":[[\"sys\",2000],[\"u3\",200]],"
	      "\"output_tokens\":100}\n",
	      f);
	assert_int_equal(fclose(f), 0);
	r = cli_run("whatif think-time " SCRATCH "/day_and_half_anon.jsonl --factor 2 "
		    "--slo ttft_p95=2s,tpot_p50=50ms --hardware h100-sxm");
	if (r.status != 0)
		fail_msg("status %d, stderr '%s'", r.status, r.err);
	assert_non_null(strstr(r.out, "a month is 10.88 replays of 2 days"));
	cli_out_free(&r);
}

static void test_errors(void **state)
{
	(void)state;
	struct cli_out r = cli_run("whatif cache-bust " SCRATCH "/date.jsonl --pattern 'Date: (['");
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "bad pattern 'Date: (['"));
	assert_non_null(strstr(r.err, "missing terminating ] for character class"));
	assert_non_null(strstr(r.err, "at offset 8"));
	cli_out_free(&r);
	const char *bad[] = {
		"whatif cache-bust x.jsonl",
		"whatif cache-bust x.jsonl --pattern a --rules b",
		"whatif cache-bust x.jsonl --inject-at start",
		"whatif cache-bust x.jsonl --inject-at middle --tokens 3",
		"whatif think-time x.jsonl",
		"whatif no-retry x.jsonl --pin",
		"whatif frobnicate x.jsonl",
		"whatif no-retry x.jsonl --hardware h100-sxm",
		"whatif no-retry x.jsonl --slo ttft=500",
		"whatif no-retry x.jsonl --slo ttft_p95=2s --max-replicas 0",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		r = cli_run(bad[i]);
		if (r.status != 2)
			fail_msg("%s: status %d (expected 2)", bad[i], r.status);
		cli_out_free(&r);
	}
	/* an unknown hardware id stops before any replay */
	r = cli_run("whatif no-retry " SCRATCH "/team.jsonl --slo ttft_p95=2s --hardware h100-sxm,nope");
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "unknown hardware id 'nope'"));
	cli_out_free(&r);
	r = cli_run("whatif --help");
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "cache-bust"));
	cli_out_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_timestamp_team),
		cmocka_unit_test(test_size_timestamp_team),
		cmocka_unit_test(test_openai_date_vs_injection),
		cmocka_unit_test(test_import_rules),
		cmocka_unit_test(test_harness_whatifs),
		cmocka_unit_test(test_jobs_identical),
		cmocka_unit_test(test_days_of_a_day_and_a_half),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_router_printed),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
