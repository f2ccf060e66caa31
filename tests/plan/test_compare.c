/* SPDX-License-Identifier: Apache-2.0
 * test_compare: `agentcap compare` end to end on a small synthetic team.
 *   - seats, the API and each sized self-hosted option side by side, every
 *     column with its unit, the break-even lines, the sensitivity table
 *     and the prices' sources and dates;
 *   - the arithmetic that compare adds on top of models/cost.h: per
 *     engineer-month = month / engineers, break-even team = month / the
 *     API's per engineer-month, break-even busy fraction = busy x month /
 *     API month, and past 100% busy "never at this size" (JSON null and the
 *     reason), never a busy fraction over 1;
 *   - the scenario's cost.* keys change compare's assumptions as they do
 *     replay --cost's (operator time, acceptance rate), self-hosted rows
 *     only where the key is the self-hosted model's;
 *   - the sensitivity moves the way it must: dearer hardware, fewer
 *     accepted tasks or less traffic make a self-hosted task dearer, and
 *     leave the API's per-task cost alone where they do not touch it;
 *   - an unknown API id or a bad price file: exit 2, nothing written; the
 *     compare options are refused by size, whose table ends with each
 *     winner's monthly cost.
 */
#include <cjson/cJSON.h>

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "tests/support/cli_run.h"

#define SCRATCH AC_BIN_DIR "/tests/plan/scratch_compare"
#define TEAM "--engineers 3 --profile default --hardware hgx-h100-8,h100-sxm"

static double num(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItem(o, key);
	if (!cJSON_IsNumber(v))
		fail_msg("no number '%s'", key);
	return v->valuedouble;
}

static void near(double a, double b)
{
	if (fabs(a - b) > 1e-9 * (fabs(a) + fabs(b)) + 1e-12)
		fail_msg("%.17g != %.17g", a, b);
}

/* The break-even figures of a self-hosted row: numbers that follow from the
 * month figures, or, past 100% busy, null with the reason.  Returns whether
 * there was a number. */
static bool check_breakeven(const cJSON *row, const cJSON *api, double engineers)
{
	const cJSON *why = cJSON_GetObjectItem(row, "breakeven_reason");
	/* on cost per accepted task, each side at its own acceptance and turns */
	double month = num(row, "usd_per_month");
	double api_task = num(api, "usd_per_accepted_task");
	double util = num(row, "gpu_busy_fraction") * num(row, "usd_per_accepted_task") / api_task;
	near(num(row, "usd_per_accepted_task"), month / num(row, "accepted_tasks_per_month"));
	if (cJSON_IsNull(why)) {
		near(num(row, "breakeven_engineers"),
		     month / (api_task * num(row, "accepted_tasks_per_month") / engineers));
		near(num(row, "breakeven_gpu_busy_fraction"), util);
		assert_true(util <= 1.0);
		return true;
	}
	assert_true(cJSON_IsString(why));
	assert_non_null(strstr(why->valuestring, "never at this size"));
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(row, "breakeven_engineers")));
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(row, "breakeven_gpu_busy_fraction")));
	assert_true(util > 1.0);
	return false;
}

/* The assumption called name of a row: its value, and its source in *src. */
static double assumption(const cJSON *row, const char *name, const char **src)
{
	const cJSON *a;
	cJSON_ArrayForEach(a, cJSON_GetObjectItem(row, "assumptions")) {
		if (strcmp(cJSON_GetObjectItem(a, "name")->valuestring, name) == 0) {
			*src = cJSON_GetObjectItem(a, "source")->valuestring;
			return num(a, "value");
		}
	}
	fail_msg("no assumption '%s'", name);
	return 0;
}

static void test_compare_table_and_json(void **state)
{
	(void)state;
	struct cli_out r = cli_run("compare " TEAM " --json " SCRATCH "/c.json");
	if (r.status != 0)
		fail_msg("status %d: %s", r.status, r.err);
	static const char *const WANT[] = {
		"USD/month", "(whole team)", "USD/engineer", "(per month)", "USD/1M output",
		"(tokens)", "USD/accepted", "(task)", "seats claude-team-premium",
		"API claude-sonnet-5-5", "hgx-h100-8 purchase", "hgx-h100-8 elastic",
		"Break-even against the API", "Sensitivity: USD per accepted task", "price-20%",
		"util+20%", "Every figure used, with its unit, source and date", "prices.json",
		"2026", "All money in USD",
		/* the router the sizing replays ran under: the default */
		"Router: sglang_smg_v1.9_approx (cache_threshold 0.3, ",
	};
	for (size_t i = 0; i < sizeof(WANT) / sizeof(WANT[0]); i++)
		if (!strstr(r.out, WANT[i]))
			fail_msg("no '%s' in:\n%s", WANT[i], r.out);
	/* one date for the prices of the whole comparison: the newest used
	 * (the API's list prices, 2026-10-07) */
	const char *as_of = strstr(r.out, "Prices as of 2026-10-07 (the newest date of the prices "
					  "used");
	assert_non_null(as_of);
	assert_null(strstr(as_of + 1, "Prices as of"));
	assert_null(strstr(r.out, "prices as of"));
	cli_out_free(&r);

	char *text = cli_slurp(SCRATCH "/c.json", NULL);
	assert_non_null(text);
	cJSON *j = cJSON_Parse(text);
	free(text);
	assert_non_null(j);
	assert_string_equal(cJSON_GetObjectItem(j, "prices_as_of")->valuestring, "2026-10-07");
	const cJSON *router = cJSON_GetObjectItem(cJSON_GetObjectItem(j, "run"), "router");
	assert_string_equal(cJSON_GetObjectItem(router, "policy")->valuestring,
			    "sglang_smg_v1.9_approx");
	double engineers = num(j, "engineers");
	assert_true(engineers == 3);
	const cJSON *rows = cJSON_GetObjectItem(j, "rows"), *row, *api = NULL;
	int self = 0, seats = 0;
	cJSON_ArrayForEach(row, rows) {
		const char *opt = cJSON_GetObjectItem(row, "option")->valuestring;
		if (strcmp(opt, "api") == 0)
			api = row;
		seats += strcmp(opt, "seats") == 0;
	}
	assert_non_null(api);
	assert_int_equal(seats, 1);
	double api_month = num(api, "usd_per_month");
	assert_true(api_month > 0);
	cJSON_ArrayForEach(row, rows) {
		const char *opt = cJSON_GetObjectItem(row, "option")->valuestring;
		double month = num(row, "usd_per_month"), task = num(row, "usd_per_accepted_task");
		assert_true(month > 0 && task > 0);
		near(num(row, "usd_per_engineer_month") * engineers, month);
		const cJSON *s = cJSON_GetObjectItem(row, "sensitivity_usd_per_accepted_task");
		bool hosted = strcmp(opt, "api") != 0 && strcmp(opt, "seats") != 0;
		assert_true(cJSON_GetArraySize(cJSON_GetObjectItem(row, "assumptions")) > 3);
		if (!hosted) {
			/* its own price moves it; the self-hosted acceptance does not */
			assert_true(num(s, "price_minus") < task && task < num(s, "price_plus"));
			near(num(s, "acceptance_plus"), task);
			continue;
		}
		self++;
		check_breakeven(row, api, engineers);
		assert_true(num(s, "price_minus") < task && task < num(s, "price_plus"));
		assert_true(num(s, "acceptance_plus") < task && task < num(s, "acceptance_minus"));
		assert_true(num(s, "utilisation_plus") < task && task < num(s, "utilisation_minus"));
	}
	assert_true(self >= 3); /* hgx-h100-8: purchase, dedicated, elastic */
	cJSON_Delete(j);
}

/* The team is small: with the default operator time no self-hosted option
 * breaks even at any busy fraction, and the table says so.  The scenario's
 * cost keys then take the operator away and halve the self-hosted
 * acceptance: each row shows them with the scenario as the source, the
 * monthly cost drops by the operator time, and a break-even point appears. */
static void test_compare_scenario_costs(void **state)
{
	(void)state;
	struct cli_out r = cli_run("compare " TEAM " --json " SCRATCH "/d.json");
	if (r.status != 0)
		fail_msg("status %d: %s", r.status, r.err);
	assert_non_null(strstr(r.out, "never at this size: even with its GPUs 100% busy"));
	cli_out_free(&r);
	r = cli_run("compare " TEAM " --set cost.operator_usd_month=0 --set cost.acceptance_rate=0.5 "
		    "--json " SCRATCH "/s.json");
	if (r.status != 0)
		fail_msg("status %d: %s", r.status, r.err);
	cli_out_free(&r);
	char *text[2] = {cli_slurp(SCRATCH "/d.json", NULL), cli_slurp(SCRATCH "/s.json", NULL)};
	assert_non_null(text[0]);
	assert_non_null(text[1]);
	cJSON *j[2] = {cJSON_Parse(text[0]), cJSON_Parse(text[1])};
	assert_non_null(j[0]);
	assert_non_null(j[1]);
	const cJSON *rows[2] = {cJSON_GetObjectItem(j[0], "rows"), cJSON_GetObjectItem(j[1], "rows")};
	int n = cJSON_GetArraySize(rows[0]);
	assert_int_equal(n, cJSON_GetArraySize(rows[1]));
	double engineers = num(j[1], "engineers");
	const cJSON *api = NULL;
	for (int i = 0; i < n; i++) {
		const cJSON *row = cJSON_GetArrayItem(rows[1], i);
		if (strcmp(cJSON_GetObjectItem(row, "option")->valuestring, "api") == 0)
			api = row;
	}
	assert_non_null(api);
	int numbers = 0;
	for (int i = 0; i < n; i++) {
		const cJSON *was = cJSON_GetArrayItem(rows[0], i), *row = cJSON_GetArrayItem(rows[1], i);
		const char *opt = cJSON_GetObjectItem(row, "option")->valuestring;
		assert_string_equal(opt, cJSON_GetObjectItem(was, "option")->valuestring);
		const char *src;
		double acc = assumption(row, "acceptance_rate", &src);
		if (strcmp(opt, "api") == 0 || strcmp(opt, "seats") == 0) {
			assert_null(strstr(src, "cost.acceptance_rate")); /* the baselines' own */
			near(num(row, "usd_per_month"), num(was, "usd_per_month"));
			continue;
		}
		near(acc, 0.5);
		assert_non_null(strstr(src, "cost.acceptance_rate"));
		double op = assumption(row, "operator", &src);
		assert_true(op == 0);
		assert_non_null(strstr(src, "scenario"));
		assert_non_null(strstr(src, "cost.operator_usd_month"));
		double before = assumption(was, "operator", &src);
		assert_true(before > 0);
		near(num(row, "usd_per_month"), num(was, "usd_per_month") - before);
		numbers += check_breakeven(row, api, engineers);
	}
	assert_true(numbers > 0);
	cJSON_Delete(j[0]);
	cJSON_Delete(j[1]);
	free(text[0]);
	free(text[1]);
}

static void test_compare_errors(void **state)
{
	(void)state;
	const char *json = SCRATCH "/bad.json";
	unlink(json);
	struct cli_out r = cli_run("compare " TEAM " --api nosuch --json " SCRATCH "/bad.json");
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "'nosuch'"));
	assert_non_null(strstr(r.err, "expected an id of an api_output row"));
	cli_out_free(&r);
	assert_int_not_equal(access(json, F_OK), 0);

	FILE *f = fopen(SCRATCH "/prices.json", "w");
	assert_non_null(f);
	fputs("{\"prices\": [ {\"id\": \"x\", \"kind\": \"seat\", \"price\": \"ten\"} ]}\n", f);
	fclose(f);
	r = cli_run("compare " TEAM " --prices " SCRATCH "/prices.json --json " SCRATCH "/bad.json");
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "prices.json"));
	assert_non_null(strstr(r.err, "expected"));
	cli_out_free(&r);
	assert_int_not_equal(access(json, F_OK), 0);

	/* the scenario's elastic row: one provider's, checked against every
	 * hardware option before the search */
	r = cli_run("compare " TEAM " --set cost.gpu_hour_row=packet-ai-h200");
	assert_int_equal(r.status, 2);
	assert_string_equal(r.out, "");
	assert_non_null(strstr(r.err, "cost.gpu_hour_row 'packet-ai-h200' prices h200, not the "
				      "deployment's hgx-h100-8"));
	cli_out_free(&r);
	r = cli_run("compare " TEAM " --set cost.gpu_hour_row=vast-ai-h100-spot --json -");
	assert_int_equal(r.status, 0);
	cJSON *j = cJSON_Parse(r.out);
	assert_non_null(j);
	int elastic = 0;
	const cJSON *row;
	cJSON_ArrayForEach(row, cJSON_GetObjectItem(j, "rows")) {
		if (strcmp(cJSON_GetObjectItem(row, "option")->valuestring, "elastic") != 0)
			continue;
		const char *src;
		near(assumption(row, "gpu_hour_price", &src), 1.52);
		assert_non_null(strstr(src, "vast-ai-h100-spot"));
		elastic++;
	}
	assert_int_equal(elastic, 2);
	cJSON_Delete(j);
	cli_out_free(&r);

	r = cli_run("size --engineers 3 --profile default --hardware hgx-h100-8");
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "Monthly cost of each winner, USD per month"));
	assert_non_null(strstr(r.out, "prices as of 2026-10-07:"));
	assert_non_null(strstr(r.out, "dedicated"));
	cli_out_free(&r);
	r = cli_run("size " TEAM " --api claude-sonnet-5-5x");
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "belong to compare"));
	cli_out_free(&r);
}

static int setup(void **state)
{
	(void)state;
	mkdir(AC_BIN_DIR "/tests/plan", 0777);
	mkdir(SCRATCH, 0777);
	return 0;
}

/* The API row of a compare run. */
static const cJSON *api_row(const cJSON *j)
{
	const cJSON *row;
	cJSON_ArrayForEach(row, cJSON_GetObjectItem(j, "rows"))
		if (strcmp(cJSON_GetObjectItem(row, "option")->valuestring, "api") == 0)
			return row;
	fail_msg("no api row");
	return NULL;
}

static cJSON *compare_json(const char *args)
{
	char cmd[1024];
	snprintf(cmd, sizeof(cmd), "compare --engineers 3 --profile default --jobs 1 --json - %s",
		 args);
	struct cli_out r = cli_run(cmd);
	if (r.status != 0 && r.status != 1)
		fail_msg("agentcap %s: %s", cmd, r.err);
	cJSON *j = cJSON_Parse(r.out);
	assert_non_null(j);
	cli_out_free(&r);
	return j;
}

/* The team's API bill is the team's, billed as the API served it: the same
 * to the cent whatever self-hosted model or hardware order sits beside it
 * (it was the first winner's replay, compacted to the local model's
 * context), with cache writes at their premium. */
static void test_api_baseline_is_the_teams(void **state)
{
	(void)state;
	cJSON *a = compare_json("--hardware h100-sxm,l40s");
	cJSON *b = compare_json("--hardware l40s,h100-sxm");
	cJSON *c = compare_json("--hardware h100-sxm --model qwen3.6-35b-a3b --format fp8");
	double usd = num(api_row(a), "usd_per_month");
	assert_true(usd > 0);
	assert_true(num(api_row(b), "usd_per_month") == usd);
	assert_true(num(api_row(c), "usd_per_month") == usd);
	bool writes = false;
	const cJSON *x;
	cJSON_ArrayForEach(x, cJSON_GetObjectItem(api_row(a), "assumptions"))
		if (strcmp(cJSON_GetObjectItem(x, "name")->valuestring, "cache_write_price") == 0) {
			writes = true;
			/* Claude Sonnet 5.5: $2 input, $2.50 a 5-minute write */
			assert_true(num(x, "value") == 2.5);
		}
	assert_true(writes);
	cJSON *h = compare_json("--hardware h100-sxm --set cost.api_cache_ttl_s=3600");
	assert_true(num(api_row(h), "usd_per_month") != usd); /* 1-hour writes: $4 */
	cJSON_Delete(a);
	cJSON_Delete(b);
	cJSON_Delete(c);
	cJSON_Delete(h);
}

/* A long-prompt tier is billed: Claude Haiku 5.5 charges every token of a
 * call whose prompt is above 100,000 tokens five times its base rates, and
 * the team's agent sends many such prompts; the API row says how many
 * tokens went at the tier's prices, and its month lies between the same
 * tokens at the base rates (well above: most of them are in long prompts)
 * and all of them at the tier's (5x the base on every part). */
static void test_api_long_prompt_tier(void **state)
{
	(void)state;
	cJSON *j = compare_json("--hardware h100-sxm --api claude-haiku-5-5");
	const cJSON *row = api_row(j);
	const char *src;
	double tier = assumption(row, "tokens_prompt_over_100000", &src);
	assert_true(tier > 0);
	double in = assumption(row, "input_tokens", &src), cached = assumption(row, "cached_tokens", &src);
	double written = assumption(row, "cache_write_tokens", &src);
	double out = assumption(row, "output_tokens", &src);
	double base = in * 0.1 + cached * 0.01 + written * assumption(row, "cache_write_price", &src) +
		      out * 0.5;
	double usd = num(row, "usd_per_month");
	/* everything at base rates is less; everything at the tier's is more */
	assert_true(usd > base * 1.5);
	assert_true(usd < base * 5 + 1e-9);
	cJSON_Delete(j);
}

/* The compare JSON of cmd (exit 0 expected); the caller deletes it. */
static cJSON *compare_doc(const char *cmd)
{
	struct cli_out r = cli_run(cmd);
	if (r.status != 0)
		fail_msg("%s: status %d: %s", cmd, r.status, r.err);
	cJSON *j = cJSON_Parse(r.out);
	assert_non_null(j);
	cli_out_free(&r);
	return j;
}

static const cJSON *row_of(const cJSON *doc, const char *hw, const char *option)
{
	const cJSON *row;
	cJSON_ArrayForEach(row, cJSON_GetObjectItem(doc, "rows")) {
		if (strcmp(cJSON_GetObjectItem(row, "option")->valuestring, option) == 0 &&
		    strcmp(cJSON_GetObjectItem(row, "hardware")->valuestring, hw) == 0)
			return row;
	}
	fail_msg("no row %s %s", hw, option);
	return NULL;
}

#define SMALL "compare --engineers 3 --profile default --hardware h100-sxm --quiet --json -"

/* A small model with no published score is not silently credited with
 * the traced agent's acceptance: the output says it is assumed, and the
 * sensitivity moves it from 30% to 100% of the traced model's. */
static void test_quality_assumed_is_said(void **state)
{
	(void)state;
	struct cli_out r = cli_run("compare --engineers 3 --profile default --hardware h100-sxm");
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "Warning: llama-3.1-8b: quality assumed equal to the traced "
				      "model claude-sonnet-5-5"));
	assert_non_null(strstr(r.out, "Warning: the trace's acceptance is taken as "
				      "claude-sonnet-5-5's"));
	cli_out_free(&r);
	cJSON *j = compare_doc(SMALL);
	const cJSON *q = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "quality"), 0);
	assert_string_equal(cJSON_GetObjectItem(q, "basis")->valuestring, "assumed");
	assert_true(cJSON_IsTrue(cJSON_GetObjectItem(j, "traced_model_assumed")));
	const cJSON *row = row_of(j, "h100-sxm", "purchase");
	const cJSON *s = cJSON_GetObjectItem(row, "sensitivity_usd_per_accepted_task");
	double task = num(row, "usd_per_accepted_task");
	/* the trace's own acceptance is the 100% column; 30% of it costs 1/0.3 */
	near(num(s, "acceptance_100pct_of_traced"), task);
	near(num(s, "acceptance_30pct_of_traced"), task / 0.3);
	/* operator time at the low and the high end of its sourced ranges
	 * moves the row by the change of its operator part: base $5,000 /
	 * $15,000, and per one-GPU system 1/8 of $109.52 / $438.08 */
	const char *src;
	double op = assumption(row, "operator", &src);
	double systems = assumption(row, "systems", &src);
	double acc = num(row, "accepted_tasks_per_month");
	near(op, 5000 + systems * 219.04 / 8);
	near(num(s, "operator_low"), task + (5000 + systems * 109.52 / 8 - op) / acc);
	near(num(s, "operator_high"), task + (15000 + systems * 438.08 / 8 - op) / acc);
	cJSON_Delete(j);
}

/* Issue 32, "Flat operator cost": operator time is a model, not a flat
 * $5,000 on a workstation and an 8-GPU node alike; its sensitivity moves
 * the H100 rows; where it is more than half a row's month the table and
 * the JSON say it decides the row and name the keys; every purchase row
 * says what its price leaves out. */
static void test_operator_scales_and_decides(void **state)
{
	(void)state;
	cJSON *j = compare_doc("compare --engineers 3 --profile default --hardware "
			       "hgx-h100-8,h100-sxm,ws-2x-rtx-pro-6000 --quiet --json -");
	const char *src;
	const cJSON *node = row_of(j, "hgx-h100-8", "purchase");
	const cJSON *ws = row_of(j, "ws-2x-rtx-pro-6000", "purchase");
	const cJSON *h100 = row_of(j, "h100-sxm", "purchase");
	/* 1 system of 8 GPUs: $5,000 + $219.04; a workstation of 2 GPUs:
	 * $5,000 + 2/8 x $219.04 = $5,054.76 */
	near(assumption(node, "operator", &src), 5219.04);
	near(assumption(ws, "operator", &src), 5054.76);
	assert_true(assumption(node, "operator", &src) != assumption(ws, "operator", &src));
	for (const cJSON *row = cJSON_GetObjectItem(j, "rows")->child; row; row = row->next) {
		const char *opt = cJSON_GetObjectItem(row, "option")->valuestring;
		const cJSON *s = cJSON_GetObjectItem(row, "sensitivity_usd_per_accepted_task");
		const cJSON *w = cJSON_GetObjectItem(row, "warnings");
		assert_true(cJSON_IsArray(w));
		if (strcmp(opt, "api") == 0 || strcmp(opt, "seats") == 0) {
			/* nothing of theirs moves */
			assert_true(cJSON_IsNull(cJSON_GetObjectItem(row, "operator_share")));
			near(num(s, "operator_low"), num(row, "usd_per_accepted_task"));
			near(num(s, "operator_high"), num(row, "usd_per_accepted_task"));
			assert_int_equal(cJSON_GetArraySize(w), 0);
			continue;
		}
		double task = num(row, "usd_per_accepted_task");
		assert_true(num(s, "operator_low") < task);
		assert_true(num(s, "operator_high") > task);
		double share = num(row, "operator_share");
		near(share, assumption(row, "operator", &src) / num(row, "usd_per_month"));
		bool decides = false, left_out = false;
		const cJSON *x;
		cJSON_ArrayForEach(x, w) {
			decides |= strstr(x->valuestring, "it decides this row; set "
					  "cost.operator_base_usd_month and "
					  "cost.operator_per_system_usd_month") != NULL;
			left_out |= strstr(x->valuestring, "not priced:") != NULL;
		}
		assert_true(decides == (share > 0.5));
		assert_true(left_out == (strcmp(opt, "purchase") == 0));
	}
	/* the small H100 row: operator time decides it */
	assert_true(num(h100, "operator_share") > 0.5);
	cJSON_Delete(j);
	struct cli_out r = cli_run("compare --engineers 3 --profile default --hardware h100-sxm");
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "Warning: h100-sxm purchase: operator time is "));
	assert_non_null(strstr(r.out, "Warning: h100-sxm purchase: not priced: network, "
				      "installation and a maintenance contract"));
	assert_non_null(strstr(r.out, "oper low  oper high"));
	cli_out_free(&r);
	/* the scenario's keys: a flat per-system share, and the whole figure */
	j = compare_doc("compare --engineers 3 --profile default --hardware hgx-h100-8 --set "
			"cost.operator_base_usd_month=1000 --set "
			"cost.operator_per_system_usd_month=500 --quiet --json -");
	near(assumption(row_of(j, "hgx-h100-8", "purchase"), "operator", &src), 1500);
	assert_non_null(strstr(assumption(row_of(j, "hgx-h100-8", "purchase"), "operator_base",
					  &src) == 1000 ? src : "", "cost.operator_base_usd_month"));
	cJSON_Delete(j);
	j = compare_doc("compare --engineers 3 --profile default --hardware hgx-h100-8 --set "
			"cost.operator_usd_month=700 --quiet --json -");
	near(assumption(row_of(j, "hgx-h100-8", "elastic"), "operator", &src), 700);
	assert_non_null(strstr(src, "cost.operator_usd_month"));
	cJSON_Delete(j);
}

/* The calendar: 261 working days a year by default, said in the table and
 * the JSON; with cost.workdays_per_year=250 the same team works 250/261 of
 * the days, so the API's month (tokens x replays a month) is 250/261 of
 * it, to the cent. */
static void test_workdays_calendar(void **state)
{
	(void)state;
	cJSON *a = compare_doc(SMALL);
	cJSON *b = compare_doc(SMALL " --set cost.workdays_per_year=250");
	assert_true(num(a, "workdays_per_year") == 261);
	assert_true(num(b, "workdays_per_year") == 250);
	assert_non_null(strstr(cJSON_GetObjectItem(a, "workdays_per_year_source")->valuestring,
			       "weekdays, no holidays"));
	assert_non_null(strstr(cJSON_GetObjectItem(b, "workdays_per_year_source")->valuestring,
			       "cost.workdays_per_year"));
	near(num(a, "periods_per_month"), 261.0 / 12);
	near(num(b, "periods_per_month"), 250.0 / 12);
	near(num(api_row(b), "usd_per_month"), num(api_row(a), "usd_per_month") * 250 / 261);
	cJSON_Delete(a);
	cJSON_Delete(b);
	struct cli_out r = cli_run("compare --engineers 3 --profile default --hardware h100-sxm "
				   "--set cost.workdays_per_year=250");
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "one replayed day counts as one of 20.83 working days a "
				      "month (20.83 replays a month; 250 working days a year"));
	cli_out_free(&r);
}

/* Acceptance and turns move the break-even and cost per task the same way:
 * half the acceptance doubles both the cost per accepted task and the
 * break-even team; twice the turns doubles the cost per accepted task and
 * leaves the cost per 1M output tokens alone (the traffic is the replay's;
 * it completes half the tasks). */
static void test_acceptance_and_turns_reach_break_even(void **state)
{
	(void)state;
	cJSON *a = compare_doc(SMALL " --acceptance 0.6");
	cJSON *b = compare_doc(SMALL " --acceptance 0.3");
	cJSON *t = compare_doc(SMALL " --acceptance 0.6 --turns 2");
	const cJSON *ra = row_of(a, "h100-sxm", "purchase"), *rb = row_of(b, "h100-sxm", "purchase");
	const cJSON *rt = row_of(t, "h100-sxm", "purchase");
	near(num(rb, "usd_per_accepted_task"), 2 * num(ra, "usd_per_accepted_task"));
	if (!cJSON_IsNull(cJSON_GetObjectItem(ra, "breakeven_engineers")))
		near(num(rb, "breakeven_engineers"), 2 * num(ra, "breakeven_engineers"));
	near(num(rt, "usd_per_accepted_task"), 2 * num(ra, "usd_per_accepted_task"));
	near(num(rt, "usd_per_1m_output_tokens"), num(ra, "usd_per_1m_output_tokens"));
	near(num(rt, "usd_per_month"), num(ra, "usd_per_month"));
	/* the API and seats keep their own */
	near(num(row_of(b, "", "api"), "usd_per_accepted_task"),
	     num(row_of(a, "", "api"), "usd_per_accepted_task"));
	cJSON_Delete(a);
	cJSON_Delete(b);
	cJSON_Delete(t);
}

/* Published scores against the traced model: Qwen3.6-35B-A3B against
 * Claude Opus 4.5 on Terminal-Bench 2.0 with Terminus 2, 51.5 / 59.3 of the
 * trace's acceptance; a pilot figure for a model beats its scores; a model
 * named that is neither side, or an unknown traced model, stops before any
 * replay. */
static void test_quality_from_scores_and_pilots(void **state)
{
	(void)state;
#define QWEN "compare --engineers 2 --profile default --hardware h100-sxm --model " \
	     "qwen3.6-35b-a3b --slo ttft_p95=20s,tpot_p50=100ms --quiet --json - " \
	     "--traced-model claude-opus-4-5"
	cJSON *j = compare_doc(QWEN);
	const cJSON *q = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "quality"), 0);
	assert_string_equal(cJSON_GetObjectItem(q, "basis")->valuestring, "scores");
	near(num(q, "quality_factor"), 51.5 / 59.3);
	assert_false(cJSON_IsTrue(cJSON_GetObjectItem(j, "traced_model_assumed")));
	const cJSON *row = row_of(j, "h100-sxm", "purchase");
	const char *src;
	near(assumption(row, "quality_factor", &src), 51.5 / 59.3);
	assert_non_null(strstr(src, "terminal-bench-2.0 with terminus-2"));
	double acc = assumption(row, "acceptance_rate", &src);
	double api_acc = assumption(row_of(j, "", "api"), "acceptance_rate", &src);
	near(acc, api_acc * 51.5 / 59.3);
	cJSON_Delete(j);

	j = compare_doc(QWEN " --acceptance qwen3.6-35b-a3b=0.25");
	q = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "quality"), 0);
	assert_string_equal(cJSON_GetObjectItem(q, "basis")->valuestring, "pilot");
	near(assumption(row_of(j, "h100-sxm", "purchase"), "acceptance_rate", &src), 0.25);
	assert_non_null(strstr(src, "pilot"));
	cJSON_Delete(j);

	struct cli_out r = cli_run(QWEN " --acceptance llama-3.1-8b=0.4");
	assert_int_equal(r.status, 2);
	assert_string_equal(r.out, "");
	assert_non_null(strstr(r.err, "is neither the self-hosted model (qwen3.6-35b-a3b) nor the "
				      "API's"));
	cli_out_free(&r);
	r = cli_run(SMALL " --traced-model no-such-model");
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "--traced-model 'no-such-model': unknown model"));
	cli_out_free(&r);
	r = cli_run("size --engineers 3 --profile default --traced-model glm-5");
	assert_int_equal(r.status, 2);
	cli_out_free(&r);
}

/* The cash flow over years of each hardware option beside the seats and
 * the API, over the scenario's horizon and discount rate: the purchase
 * pays its systems up front and the rest of its month every month; each
 * option's month is its row's; at a 0% rate the NPV is the cash. */
static void test_cash_flow_in_compare(void **state)
{
	(void)state;
	cJSON *j = compare_doc(SMALL " --set cost.horizon_months=24 --set cost.discount_rate=0");
	const cJSON *cf = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "cashflow"), 0);
	assert_string_equal(cJSON_GetObjectItem(cf, "hardware")->valuestring, "h100-sxm");
	const cJSON *res = cJSON_GetObjectItem(cf, "result");
	assert_int_equal(num(res, "horizon_months"), 24);
	assert_non_null(strstr(cJSON_GetObjectItem(res, "horizon_months_source")->valuestring,
			       "cost.horizon_months"));
	const cJSON *o;
	int n = 0;
	cJSON_ArrayForEach(o, cJSON_GetObjectItem(res, "options")) {
		const char *opt = cJSON_GetObjectItem(o, "option")->valuestring;
		const cJSON *row = row_of(j, strcmp(opt, "seats") && strcmp(opt, "api") ? "h100-sxm" : "",
					  opt);
		const char *src;
		near(num(o, "npv_usd"), num(o, "total_usd"));
		if (strcmp(opt, "purchase") == 0) {
			double up = assumption(row, "systems", &src) *
				    assumption(row, "system_price", &src);
			near(num(o, "upfront_usd"), up);
			/* 24 of 36 months written off: a third comes back */
			near(num(o, "residual_usd"), up / 3);
			near(num(o, "total_usd"), up + 24 * (num(row, "usd_per_month") -
							     up / 36.0) - up / 3);
		} else {
			near(num(o, "upfront_usd"), 0);
			near(num(o, "total_usd"), 24 * num(row, "usd_per_month"));
		}
		n++;
	}
	assert_true(n >= 4); /* purchase, elastic, seats, API */
	cJSON_Delete(j);
	struct cli_out r = cli_run("compare --engineers 3 --profile default --hardware h100-sxm");
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "h100-sxm: Cash flow over 36 months, discounted at 8.00% a "
				      "year"));
	cli_out_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_compare_table_and_json),
		cmocka_unit_test(test_compare_scenario_costs),
		cmocka_unit_test(test_compare_errors),
		cmocka_unit_test(test_api_baseline_is_the_teams),
		cmocka_unit_test(test_api_long_prompt_tier),
		cmocka_unit_test(test_quality_assumed_is_said),
		cmocka_unit_test(test_operator_scales_and_decides),
		cmocka_unit_test(test_workdays_calendar),
		cmocka_unit_test(test_acceptance_and_turns_reach_break_even),
		cmocka_unit_test(test_quality_from_scores_and_pilots),
		cmocka_unit_test(test_cash_flow_in_compare),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
