/* SPDX-License-Identifier: Apache-2.0
 * End-to-end tests of `agentcap replay --cost` beyond the table: the cost
 * and the energy in the JSON (docs/output-schema.md, member "cost"), the
 * same figures on the HTML page, and hardware with no power figure priced
 * as far as it can be, saying what is left out, not stopping the run. */
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

#define FIX AC_SRC_DIR "/tests/fixtures"
#define TRACE FIX "/traces/session_good.jsonl"
#define SCRATCH AC_BIN_DIR "/tests/cli/scratch_replay_cost"

static const cJSON *option(const cJSON *cost, const char *name)
{
	const cJSON *o;
	cJSON_ArrayForEach(o, cJSON_GetObjectItem(cost, "options")) {
		if (strcmp(cJSON_GetObjectItem(o, "option")->valuestring, name) == 0)
			return o;
	}
	return NULL;
}

static double num(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItem(o, key);
	assert_true(cJSON_IsNumber(v));
	return v->valuedouble;
}

static void test_cost_in_json(void **state)
{
	(void)state;
	struct cli_out r = cli_run("replay " TRACE " --cost --quiet --json -");
	assert_int_equal(r.status, 0);
	cJSON *doc = cJSON_Parse(r.out);
	assert_non_null(doc);
	const cJSON *cost = cJSON_GetObjectItem(doc, "cost");
	assert_non_null(cost);
	assert_string_equal(cJSON_GetObjectItem(cost, "hardware")->valuestring, "h100-sxm");
	assert_true(num(cost, "periods_per_month") > 0);
	/* a trace that names its engineers is a team's: a month is its
	 * working days, as size, compare, whatif and sweep count it */
	assert_non_null(strstr(cJSON_GetObjectItem(cost, "periods_source")->valuestring,
			       "over the team's 1 day"));
	assert_true(num(cost, "periods_per_month") == 261.0 / 12.0);
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(cost, "not_priced")));
	const cJSON *buy = option(cost, "purchase");
	assert_non_null(buy);
	assert_non_null(option(cost, "elastic"));
	/* the month is its parts, and each part is one the table names */
	double sum = 0;
	const cJSON *p;
	cJSON_ArrayForEach(p, cJSON_GetObjectItem(buy, "parts")) sum += num(p, "usd_per_month");
	assert_true(fabs(sum - num(buy, "usd_per_month")) < 1e-6 * sum);
	assert_true(num(buy, "usd_per_accepted_task") > 0);
	const cJSON *a = cJSON_GetArrayItem(cJSON_GetObjectItem(buy, "assumptions"), 0);
	assert_non_null(cJSON_GetObjectItem(a, "source"));
	const cJSON *e = cJSON_GetObjectItem(cost, "energy");
	assert_non_null(e);
	assert_true(num(e, "kwh_month_facility") > num(e, "kwh_month_it"));
	assert_true(num(cJSON_GetObjectItem(e, "busy_w_per_gpu"), "value") == 700);
	assert_true(num(e, "j_per_output_token") > 0);

	/* the table prints the same month, to the cent */
	struct cli_out t = cli_run("replay " TRACE " --cost");
	assert_int_equal(t.status, 0);
	char line[160];
	snprintf(line, sizeof(line), "  %-40s %14.2f", "purchase h100-sxm", num(buy, "usd_per_month"));
	assert_non_null(strstr(t.out, line));
	cli_out_free(&t);
	cJSON_Delete(doc);
	cli_out_free(&r);

	/* without --cost there is no member */
	r = cli_run("replay " TRACE " --quiet --json -");
	assert_int_equal(r.status, 0);
	doc = cJSON_Parse(r.out);
	assert_non_null(doc);
	assert_null(cJSON_GetObjectItem(doc, "cost"));
	cJSON_Delete(doc);
	cli_out_free(&r);
}

/* The calendar (issue 32: "261 weekdays a year with no holidays"): a
 * replayed day of a team counts workdays / 12 times a month, 261 by default
 * and said so, 250 with cost.workdays_per_year (the 11 US federal holidays
 * of 2026); a calendar outside [1, 366] days is refused naming the key. */
static void test_workdays_calendar(void **state)
{
	(void)state;
	const char *run[2] = {
		"replay " TRACE " --cost --engineers 2 --days 1 --quiet --json -",
		"replay " TRACE " --cost --engineers 2 --days 1 --set cost.workdays_per_year=250 "
		"--quiet --json -",
	};
	double periods[2];
	for (int k = 0; k < 2; k++) {
		struct cli_out r = cli_run(run[k]);
		assert_int_equal(r.status, 0);
		cJSON *doc = cJSON_Parse(r.out);
		assert_non_null(doc);
		const cJSON *cost = cJSON_GetObjectItem(doc, "cost");
		periods[k] = num(cost, "periods_per_month");
		const char *why = cJSON_GetObjectItem(cost, "periods_source")->valuestring;
		assert_non_null(strstr(why, k ? "250 working days a year (scenario"
					      : "261 working days a year (weekdays, no holidays"));
		assert_non_null(strstr(why, "cost.workdays_per_year"));
		/* each option's figures say it too */
		const cJSON *a = cJSON_GetArrayItem(cJSON_GetObjectItem(option(cost, "purchase"),
									"assumptions"), 0);
		assert_string_equal(cJSON_GetObjectItem(a, "name")->valuestring, "periods_per_month");
		assert_non_null(strstr(cJSON_GetObjectItem(a, "source")->valuestring,
				       k ? "250 working days" : "261 working days"));
		cJSON_Delete(doc);
		cli_out_free(&r);
	}
	assert_true(fabs(periods[0] - 261.0 / 12) < 1e-12);
	assert_true(fabs(periods[1] - 250.0 / 12) < 1e-12);
	struct cli_out r = cli_run("replay " TRACE " --cost --set cost.workdays_per_year=0 --quiet");
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "cost.workdays_per_year: expected -1 (the default) or a "
				      "number in [1, 366]"));
	cli_out_free(&r);
}

static void test_cost_on_page(void **state)
{
	(void)state;
	mkdir(SCRATCH, 0777);
	struct cli_out r = cli_run("replay " TRACE " --cost --quiet --html " SCRATCH "/run.html");
	assert_int_equal(r.status, 0);
	char *page = cli_slurp(SCRATCH "/run.html", NULL);
	assert_non_null(page);
	const char *c = strstr(page, "<h2>Cost (USD)</h2>");
	assert_non_null(c);
	assert_non_null(strstr(c, "purchase h100-sxm"));
	assert_non_null(strstr(c, "field-notes-loaded"));
	assert_non_null(strstr(c, "Energy: "));
	free(page);
	cli_out_free(&r);
}

/* A Mac Studio has no power figure in the catalogue: the run is priced
 * without purchase and energy, and says so, in the table and the JSON. */
static void test_unpowered_hardware(void **state)
{
	(void)state;
	struct cli_out r = cli_run("replay " TRACE " --cost --set hardware=\"apple-m2-ultra-76c\" "
				   "--quiet --json -");
	assert_int_not_equal(r.status, 2);
	cJSON *doc = cJSON_Parse(r.out);
	assert_non_null(doc);
	const cJSON *cost = cJSON_GetObjectItem(doc, "cost");
	assert_non_null(cost);
	assert_null(option(cost, "purchase"));
	assert_null(cJSON_GetObjectItem(cost, "energy"));
	assert_non_null(strstr(cJSON_GetObjectItem(cost, "not_priced")->valuestring,
			       "no measured power and no TDP"));
	cJSON_Delete(doc);
	cli_out_free(&r);
	r = cli_run("replay " TRACE " --cost --set hardware=\"apple-m2-ultra-76c\"");
	assert_int_not_equal(r.status, 2);
	assert_non_null(strstr(r.out, "Not priced: purchase and energy: "));
	cli_out_free(&r);
}

/* One month everywhere: a one-day team spread over time zones touches two
 * UTC dates, and whatif --slo counted its month as 10.88 replays of 2 days
 * where size and compare count the team's one working day; replay --cost
 * took it for round-the-clock traffic.  Now replay --cost and whatif count
 * 21.75 replays of 1 day and price the same deployment alike; a
 * request-level trace (no engineers) stays round-the-clock. */
static void test_one_month_everywhere(void **state)
{
	(void)state;
	mkdir(SCRATCH, 0777);
	struct cli_out g = cli_run("synth --engineers 4 --days 1 --seed 3 -o " SCRATCH "/tz.jsonl");
	assert_int_equal(g.status, 0);
	cli_out_free(&g);
	struct cli_out r = cli_run("replay " SCRATCH "/tz.jsonl --cost --quiet --json -");
	assert_true(r.status == 0 || r.status == 1);
	cJSON *doc = cJSON_Parse(r.out);
	assert_non_null(doc);
	const cJSON *cost = cJSON_GetObjectItem(doc, "cost");
	assert_true(num(cost, "periods_per_month") == 261.0 / 12.0);
	double buy = num(option(cost, "purchase"), "usd_per_month");
	cJSON_Delete(doc);
	cli_out_free(&r);
	struct cli_out w = cli_run("whatif no-retry " SCRATCH "/tz.jsonl --slo ttft_p95=2s "
				   "--hardware h100-sxm");
	assert_true(w.status == 0 || w.status == 1);
	assert_non_null(strstr(w.out, "a month is 21.75 replays of 1 day"));
	char want[64];
	snprintf(want, sizeof(want), "%.2f", buy);
	const char *row = strstr(w.out, "Purchase, h100-sxm (USD/month)");
	assert_non_null(row);
	assert_non_null(strstr(row, want));
	cli_out_free(&w);
	struct cli_out m = cli_run("replay " FIX "/traces/mooncake_head200.jsonl --cost --quiet "
				   "--json -");
	assert_true(m.status == 0 || m.status == 1);
	doc = cJSON_Parse(m.out);
	assert_non_null(doc);
	assert_non_null(strstr(cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "cost"),
						   "periods_source")->valuestring, "round-the-clock"));
	cJSON_Delete(doc);
	cli_out_free(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cost_in_json),
		cmocka_unit_test(test_workdays_calendar),
		cmocka_unit_test(test_cost_on_page),
		cmocka_unit_test(test_unpowered_hardware),
		cmocka_unit_test(test_one_month_everywhere),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
