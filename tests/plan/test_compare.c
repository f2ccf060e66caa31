/* SPDX-License-Identifier: Apache-2.0
 * test_compare: `agentcap compare` end to end on a small synthetic team.
 *   - seats, the API and each sized self-hosted option side by side, every
 *     column with its unit, the break-even lines, the sensitivity table
 *     and the prices' sources and dates;
 *   - the arithmetic that compare adds on top of models/cost.h: per
 *     engineer-month = month / engineers, break-even team = month / the
 *     API's per engineer-month, break-even busy fraction = busy x month /
 *     API month;
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

static void test_compare_table_and_json(void **state)
{
	(void)state;
	struct cli_out r = cli_run("compare " TEAM " --json " SCRATCH "/c.json");
	if (r.status != 0)
		fail_msg("status %d: %s", r.status, r.err);
	static const char *const WANT[] = {
		"USD/month", "(whole team)", "USD/engineer", "(per month)", "USD/1M output",
		"(tokens)", "USD/accepted", "(task)", "seats claude-team-premium-2026-06-16",
		"API claude-sonnet-5-5", "hgx-h100-8 purchase", "hgx-h100-8 elastic",
		"Break-even against the API", "Sensitivity: USD per accepted task", "price-20%",
		"util+20%", "Every figure used, with its unit, source and date", "prices.json",
		"2026", "All money in USD",
	};
	for (size_t i = 0; i < sizeof(WANT) / sizeof(WANT[0]); i++)
		if (!strstr(r.out, WANT[i]))
			fail_msg("no '%s' in:\n%s", WANT[i], r.out);
	cli_out_free(&r);

	char *text = cli_slurp(SCRATCH "/c.json", NULL);
	assert_non_null(text);
	cJSON *j = cJSON_Parse(text);
	free(text);
	assert_non_null(j);
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
			near(num(s, "price_minus"), task);
			near(num(s, "acceptance_plus"), task);
			continue;
		}
		self++;
		near(num(row, "breakeven_engineers"), month / (api_month / engineers));
		near(num(row, "breakeven_gpu_busy_fraction"),
		     num(row, "gpu_busy_fraction") * month / api_month);
		assert_true(num(s, "price_minus") < task && task < num(s, "price_plus"));
		assert_true(num(s, "acceptance_plus") < task && task < num(s, "acceptance_minus"));
		assert_true(num(s, "utilisation_plus") < task && task < num(s, "utilisation_minus"));
	}
	assert_true(self >= 3); /* hgx-h100-8: purchase, dedicated, elastic */
	cJSON_Delete(j);
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

	r = cli_run("size --engineers 3 --profile default --hardware hgx-h100-8");
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "Monthly cost of each winner, USD per month"));
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_compare_table_and_json),
		cmocka_unit_test(test_compare_errors),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
