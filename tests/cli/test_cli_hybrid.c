/* SPDX-License-Identifier: Apache-2.0
 * End-to-end tests of a local box with a cloud API beside it (`backends`,
 * docs/hybrid.md), on a synthetic team of 10 engineers for one day whose
 * afternoon peak is too much for one H100: alone its p95 TTFT is over 2 s;
 * with spill-over at a predicted TTFT of 2 s it is under 2 s, and the
 * report gives the spilled share and what the API cost; with the replica
 * crashing every two hours and no retries, calls are lost alone and none
 * with a fallback; the CSV and the page say where each call went; compare
 * prices one box plus the API beside the pure rows, per accepted task at
 * the acceptance blended by the calls each side served; bad backends and
 * routing keys are errors naming the key; without backends no key of the
 * report changes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "tests/support/cli_run.h"

#include <cjson/cJSON.h>

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TEAM "hybrid_team10.jsonl.gz"
#define SONNET "--set 'backends=[{\"name\":\"sonnet\",\"price\":\"claude-sonnet-4-5\"}]'"

static int make_team(void **state)
{
	(void)state;
	struct cli_out r = cli_run("synth --engineers 10 --days 1 --seed 1 -o " TEAM);
	int rc = r.status;
	cli_out_free(&r);
	return rc;
}

static cJSON *run_json(const char *extra, int *status)
{
	char args[2048];
	snprintf(args, sizeof(args), "replay " TEAM " --json - %s", extra);
	struct cli_out r = cli_run(args);
	if (r.status != 0 && r.status != 1)
		fail_msg("agentcap %s: %s", args, r.err);
	if (status)
		*status = r.status;
	cJSON *j = cJSON_Parse(r.out);
	assert_non_null(j);
	cli_out_free(&r);
	return j;
}

static double num(const cJSON *j, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, key);
	if (!cJSON_IsNumber(v))
		fail_msg("no number '%s' in the JSON report", key);
	return v->valuedouble;
}

static const cJSON *row(const cJSON *j, int i)
{
	const cJSON *b = cJSON_GetObjectItemCaseSensitive(j, "backends");
	assert_non_null(b);
	const cJSON *per = cJSON_GetObjectItemCaseSensitive(b, "per_backend");
	assert_int_equal(cJSON_GetArraySize(per), 2);
	return cJSON_GetArrayItem(per, i);
}

static void test_spill_keeps_p95_under_the_bound(void **state)
{
	(void)state;
	cJSON *alone = run_json("", NULL);
	assert_true(num(alone, "p95_ttft_ms") > 2000.0);
	assert_null(cJSON_GetObjectItemCaseSensitive(alone, "backends"));

	int st;
	cJSON *j = run_json(SONNET " --set router.spill_to=sonnet --set router.spill_ttft_ms=2000", &st);
	assert_int_equal(st, 0);
	assert_true(num(j, "p95_ttft_ms") <= 2000.0);
	assert_int_equal(num(j, "completed"), num(alone, "completed"));
	assert_int_equal(num(j, "failed"), 0);
	const cJSON *b = cJSON_GetObjectItemCaseSensitive(j, "backends");
	double spilled = num(b, "spilled_share");
	assert_true(spilled > 0.01 && spilled < 0.9);
	const cJSON *local = row(j, 0), *api = row(j, 1);
	assert_int_equal(num(local, "calls") + num(api, "calls"), num(j, "completed"));
	assert_int_equal(num(api, "calls_spilled"), num(api, "calls"));
	assert_true(fabs(num(api, "calls") / num(j, "completed") - spilled) < 1e-12);
	/* the API's spend is its tokens at the catalogue's list prices:
	 * $3 / $0.30 / $15 per 1M for Claude Sonnet 4.5 */
	double usd = ((num(api, "prompt_tokens") - num(api, "cached_prompt_tokens")) * 3.0 +
		      num(api, "cached_prompt_tokens") * 0.3 + num(api, "output_tokens") * 15.0) /
		     1e6;
	assert_true(usd > 0);
	assert_true(fabs(num(api, "usd") - usd) < 1e-9 * usd);
	assert_true(fabs(num(b, "usd") - usd) < 1e-9 * usd);
	/* the API's own TTFT is its published 1.8 s; its cache is its own */
	assert_true(fabs(num(api, "p95_ttft_ms") - 1800.0) < 1e-6);
	assert_true(num(api, "cached_prompt_tokens") > 0);
	assert_true(num(api, "tasks") > 0 && num(local, "tasks") > 0);
	cJSON_Delete(j);
	cJSON_Delete(alone);
}

static void test_fallback_loses_no_call(void **state)
{
	(void)state;
	const char *crash = "--set faults.mtbf_h=2 --set faults.repair_h=0.5 --set faults.max_retries=0";
	char args[1024];
	cJSON *alone = run_json(crash, NULL);
	assert_true(num(alone, "failed") > 0);
	snprintf(args, sizeof(args), "%s %s --set router.fallback_to=sonnet", crash, SONNET);
	cJSON *j = run_json(args, NULL);
	assert_int_equal(num(j, "failed"), 0);
	assert_int_equal(num(j, "completed"), num(alone, "completed") + num(alone, "failed"));
	const cJSON *b = cJSON_GetObjectItemCaseSensitive(j, "backends");
	assert_true(num(b, "fallback_share") > 0);
	assert_int_equal(num(row(j, 1), "calls_fallback"), num(row(j, 1), "calls"));
	cJSON_Delete(j);
	cJSON_Delete(alone);
}

static void test_csv_and_table(void **state)
{
	(void)state;
	struct cli_out r = cli_run("replay " TEAM " --csv - " SONNET
				   " --set router.size_to=sonnet --set router.size_prompt_tokens=100000");
	assert_true(r.status == 0 || r.status == 1);
	assert_non_null(strstr(r.out, ",reason,backend,route\n"));
	assert_non_null(strstr(r.out, ",sonnet,size\n"));
	assert_non_null(strstr(r.out, ",local,local\n"));
	cli_out_free(&r);
	r = cli_run("replay " TEAM " " SONNET " --set router.size_to=sonnet "
		    "--set router.size_prompt_tokens=100000");
	assert_non_null(strstr(r.out, "Route by size to:"));
	assert_non_null(strstr(r.out, "sonnet (prompts > 100000 tokens)"));
	assert_non_null(strstr(r.out, "Calls routed by size (%):"));
	cli_out_free(&r);
	/* without backends the CSV keeps its columns */
	r = cli_run("replay " TEAM " --csv -");
	assert_null(strstr(r.out, ",backend,route"));
	cli_out_free(&r);
}

/* compare prices one box plus the API beside pure local and pure API: a
 * hybrid row's month is its box's plus its API calls', per accepted task,
 * and the report's page draws the backends table. */
static void test_compare_prices_the_mix(void **state)
{
	(void)state;
	struct cli_out r = cli_run("compare --engineers 4 --profile default --hardware h100-sxm "
				   "--scenario " AC_SRC_DIR "/scenarios/h100-plus-sonnet.json --json -");
	if (r.status != 0)
		fail_msg("agentcap compare: %s", r.err);
	cJSON *j = cJSON_Parse(r.out);
	assert_non_null(j);
	const cJSON *rows = cJSON_GetObjectItemCaseSensitive(j, "rows"), *row;
	int hybrid = 0, local = 0, api = 0;
	cJSON_ArrayForEach(row, rows) {
		const cJSON *hy = cJSON_GetObjectItemCaseSensitive(row, "hybrid");
		const char *opt = cJSON_GetObjectItemCaseSensitive(row, "option")->valuestring;
		if (strcmp(opt, "api") == 0)
			api++;
		if (!hy) {
			local += strcmp(opt, "api") != 0 && strcmp(opt, "seats") != 0;
			continue;
		}
		hybrid++;
		double month = num(row, "usd_per_month");
		assert_true(fabs(num(hy, "local_usd_per_month") + num(hy, "api_usd_per_month") - month) <
			    1e-9 * month);
		assert_true(num(hy, "api_usd_per_month") > 0);
		assert_true(num(hy, "api_share") > 0 && num(hy, "api_share") < 1);
		assert_true(num(row, "usd_per_accepted_task") > 0);
		assert_true(num(hy, "ttft_p95_ms") <= 2000.0);
		assert_int_equal(num(row, "gpus"), 1);
		assert_string_equal(cJSON_GetObjectItemCaseSensitive(row, "deployment")->valuestring,
				    "1 x TP1");
		assert_true(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(row, "breakeven_engineers")));
	}
	assert_true(hybrid >= 1);
	assert_int_equal(hybrid, local);
	assert_int_equal(api, 1);
	cJSON_Delete(j);
	cli_out_free(&r);
}

/* The value of assumption `name` of a compare row. */
static double assumption(const cJSON *row, const char *name)
{
	const cJSON *a;
	cJSON_ArrayForEach(a, cJSON_GetObjectItemCaseSensitive(row, "assumptions")) {
		if (strcmp(cJSON_GetObjectItemCaseSensitive(a, "name")->valuestring, name) == 0)
			return num(a, "value");
	}
	fail_msg("no assumption '%s'", name);
	return 0;
}

/* With the self-hosted model's acceptance set apart from the trace's own
 * (--acceptance 0.5; the trace accepts 12 of 15 tasks), a box + API row's
 * acceptance blends the two by the calls each side served, and its USD per
 * accepted task is its month over the tasks at that blended acceptance (the
 * tasks a month as the pure self-hosted row of the same option counts them
 * at 0.5). */
static void test_compare_blends_acceptance(void **state)
{
	(void)state;
	struct cli_out r = cli_run("compare --engineers 4 --profile default --hardware h100-sxm "
				   "--scenario " AC_SRC_DIR "/scenarios/h100-plus-sonnet.json "
				   "--acceptance 0.5 --json -");
	if (r.status != 0)
		fail_msg("agentcap compare: %s", r.err);
	cJSON *j = cJSON_Parse(r.out);
	assert_non_null(j);
	const cJSON *rows = cJSON_GetObjectItemCaseSensitive(j, "rows"), *row;
	double trace_acc = -1;
	cJSON_ArrayForEach(row, rows) {
		if (strcmp(cJSON_GetObjectItemCaseSensitive(row, "option")->valuestring, "api") == 0)
			trace_acc = assumption(row, "acceptance_rate");
	}
	assert_true(trace_acc > 0.5 && trace_acc <= 1); /* apart from the box's */
	int blended = 0;
	cJSON_ArrayForEach(row, rows) {
		const cJSON *hy = cJSON_GetObjectItemCaseSensitive(row, "hybrid");
		if (!hy)
			continue;
		const char *opt = cJSON_GetObjectItemCaseSensitive(row, "option")->valuestring;
		/* the pure self-hosted row of the same option: its tasks a month */
		const cJSON *pure = NULL, *q;
		cJSON_ArrayForEach(q, rows) {
			if (!cJSON_GetObjectItemCaseSensitive(q, "hybrid") &&
			    strcmp(cJSON_GetObjectItemCaseSensitive(q, "option")->valuestring, opt) == 0)
				pure = q;
		}
		assert_non_null(pure);
		assert_true(fabs(assumption(pure, "acceptance_rate") - 0.5) < 1e-12);
		double tasks = num(pure, "usd_per_month") / (num(pure, "usd_per_accepted_task") * 0.5);
		double share = num(hy, "api_share");
		assert_true(share > 0 && share < 1);
		double acc = (1 - share) * 0.5 + share * trace_acc;
		assert_true(fabs(num(hy, "acceptance") - acc) < 1e-9);
		assert_true(fabs(assumption(row, "blended_acceptance") - acc) < 1e-9);
		double want = num(row, "usd_per_month") / (tasks * acc);
		double got = num(row, "usd_per_accepted_task");
		if (!(fabs(got - want) <= 1e-9 * want))
			fail_msg("%s + API: %.12g USD per accepted task, expected %.12g", opt, got, want);
		blended++;
	}
	assert_true(blended >= 1);
	cJSON_Delete(j);
	cli_out_free(&r);
}

/* The replay page shows where the calls went. */
static void test_page(void **state)
{
	(void)state;
	struct cli_out r = cli_run("replay " TEAM " --html - " SONNET
				   " --set router.size_to=sonnet --set router.size_prompt_tokens=100000");
	assert_true(r.status == 0 || r.status == 1);
	assert_non_null(strstr(r.out, "<h2>Backends</h2>"));
	assert_non_null(strstr(r.out, "<tr><th>sonnet</th><td>api</td>"));
	cli_out_free(&r);
	r = cli_run("replay " TEAM " --html -");
	assert_null(strstr(r.out, "<h2>Backends</h2>"));
	cli_out_free(&r);
}

static void expect_error(const char *args, const char *what)
{
	char full[1024];
	snprintf(full, sizeof(full), "replay " TEAM " %s", args);
	struct cli_out r = cli_run(full);
	assert_int_equal(r.status, 2);
	if (!strstr(r.err, what))
		fail_msg("agentcap %s: expected '%s' in: %s", full, what, r.err);
	cli_out_free(&r);
}

static void test_errors(void **state)
{
	(void)state;
	expect_error("--set router.spill_to=sonnet --set router.spill_ttft_ms=2000",
		     "router.spill_to: 'sonnet' (expected a backend's name; the scenario lists none)");
	expect_error(SONNET " --set router.spill_to=sonnet",
		     "router.spill_to: no bound (expected router.spill_wait_ms or router.spill_ttft_ms > 0)");
	expect_error("--set 'backends=[{\"name\":\"x\",\"price\":\"no-such-api\"}]'",
		     "backends[0] 'x': price: 'no-such-api' has no api_input and api_output rows");
	expect_error("--set 'backends=[{\"name\":\"x\",\"price\":\"gpt-5-4\"}]'",
		     "backends[0] 'x': price: 'gpt-5-4' has no latency row in api_backends.json");
	expect_error("--set 'backends=[{\"name\":\"x\",\"price\":\"gpt-5\",\"speed\":3}]'",
		     "backends[0].speed: unknown key (expected one of: name, kind, price, latency");
	expect_error("--set 'backends=[{\"name\":\"x\",\"kind\":\"cloud\",\"price\":\"gpt-5\"}]'",
		     "backends[0].kind: 'cloud' (expected \"api\" or \"seat\")");
	expect_error("--set 'backends=[{\"name\":\"x\",\"kind\":\"seat\",\"price\":\"gpt-5\"}]'",
		     "'gpt-5' is no seat plan of the price catalogue");
	expect_error(SONNET " --cost", "--cost: a scenario with backends is priced by agentcap compare");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_spill_keeps_p95_under_the_bound),
		cmocka_unit_test(test_fallback_loses_no_call),
		cmocka_unit_test(test_csv_and_table),
		cmocka_unit_test(test_compare_prices_the_mix),
		cmocka_unit_test(test_compare_blends_acceptance),
		cmocka_unit_test(test_page),
		cmocka_unit_test(test_errors),
	};
	return cmocka_run_group_tests(tests, make_team, NULL);
}
