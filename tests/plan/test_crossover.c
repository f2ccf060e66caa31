/* SPDX-License-Identifier: Apache-2.0
 * test_crossover: compare over team sizes (plan/crossover.h).
 *   - hand-built comparisons: a series cheaper than the seats from the
 *     second size on crosses there ("more than" the first); one cheaper at
 *     the first size but dearer later does not count as crossed there; a
 *     size where an option found no deployment breaks a crossing; one
 *     cheaper at every size crosses "at every size tried";
 *   - the JSON carries the curve (null where no deployment) and the
 *     crossovers;
 *   - team-size lists and ranges, and what they refuse;
 *   - end to end: `compare --engineers 1,2` gives at each size exactly the
 *     figures `compare --engineers N` gives alone (each point a sizing
 *     run), and a page of its kind.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "plan/crossover.h"
#include "tests/support/cli_run.h"

#include <cjson/cJSON.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void add_row(struct compare_result *r, enum cost_option o, const char *hw, double task)
{
	struct compare_row *row = &r->rows[r->n++];
	memset(row, 0, sizeof(*row));
	row->option = o;
	snprintf(row->hardware, sizeof(row->hardware), "%s", hw);
	row->r.usd_per_accepted_task = task;
	row->r.usd_month = 100 * task;
	row->gpus = 1;
	snprintf(row->deployment, sizeof(row->deployment), "1 x TP1");
}

/* Four sizes; seats 2.0 and the API 3.0 per task throughout. */
static void curve(struct crossover_curve *c)
{
	/* per size: a cheaper than seats from size 2 on; b cheaper at size 1
	 * only; g cheaper than the API throughout, no deployment at size 4
	 * for h; e cheaper than both everywhere */
	static const double A[4] = {2.5, 1.9, 1.5, 1.2};
	static const double B[4] = {1.5, 2.5, 2.6, 2.7};
	static const double H[4] = {1.0, 1.0, 1.0, NAN};
	static const int64_t ENG[4] = {5, 10, 20, 40};
	struct compare_result *r = malloc(sizeof(*r));
	assert_non_null(r);
	struct diag d;
	diag_init(&d);
	crossover_init(c);
	for (int k = 0; k < 4; k++) {
		memset(r, 0, sizeof(*r));
		add_row(r, COST_PURCHASE, "a", A[k]);
		add_row(r, COST_ELASTIC, "b", B[k]);
		if (isfinite(H[k]))
			add_row(r, COST_DEDICATED, "h", H[k]);
		add_row(r, COST_ELASTIC, "e", 0.5);
		add_row(r, COST_SEATS, "", 2.0);
		add_row(r, COST_API, "", 3.0);
		assert_int_equal(crossover_add(c, ENG[k], r, &d), 0);
	}
	free(r);
	crossover_finish(c);
}

static const struct crossover_series *find(const struct crossover_curve *c, const char *hw)
{
	for (size_t i = 0; i < c->n_series; i++)
		if (strcmp(c->s[i].hardware, hw) == 0)
			return &c->s[i];
	fail_msg("no series %s", hw);
	return NULL;
}

static void test_crossings(void **state)
{
	(void)state;
	struct crossover_curve *c = malloc(sizeof(*c));
	assert_non_null(c);
	curve(c);
	assert_int_equal(c->n, 4);
	assert_int_equal(c->n_series, 4);
	const struct crossover_series *a = find(c, "a");
	assert_true(a->vs_seats.found);
	assert_int_equal(a->vs_seats.from, 10);
	assert_int_equal(a->vs_seats.after, 5);
	assert_true(a->vs_api.found); /* 2.5 <= 3 from the first size */
	assert_int_equal(a->vs_api.from, 5);
	assert_int_equal(a->vs_api.after, 0);
	const struct crossover_series *b = find(c, "b");
	assert_false(b->vs_seats.found); /* cheaper at 5 only: not for good */
	assert_true(b->vs_api.found);
	const struct crossover_series *h = find(c, "h");
	assert_true(isnan(h->usd_task[3]));
	assert_false(h->vs_seats.found); /* no deployment at 40 */
	assert_false(h->vs_api.found);
	const struct crossover_series *e = find(c, "e");
	assert_true(e->vs_seats.found && e->vs_seats.from == 5 && e->vs_seats.after == 0);

	/* the text and the JSON say the same */
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct size_setup ss = {0};
	struct compare_setup cs = {.size = &ss, .api_id = "api-x", .seat_id = "seat-y"};
	crossover_table(f, &cs, c);
	fclose(f);
	assert_non_null(strstr(buf, "a purchase"));
	assert_non_null(strstr(buf, "from 10 (more than 5)"));
	assert_non_null(strstr(buf, "not within the sizes tried"));
	assert_non_null(strstr(buf, "from 5 (every size tried)"));
	free(buf);
	f = open_memstream(&buf, &len);
	assert_int_equal(crossover_json(f, &cs, c), 0);
	fclose(f);
	cJSON *j = cJSON_Parse(buf);
	assert_non_null(j);
	assert_string_equal(cJSON_GetObjectItem(j, "schema")->valuestring, "agentcap-compare-range");
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(j, "engineers")), 4);
	const cJSON *s;
	int seen = 0;
	cJSON_ArrayForEach(s, cJSON_GetObjectItem(j, "series")) {
		const char *hw = cJSON_GetObjectItem(s, "hardware")->valuestring;
		const cJSON *cs_seats = cJSON_GetObjectItem(s, "crossover_seats");
		if (strcmp(hw, "a") == 0) {
			assert_int_equal(cJSON_GetObjectItem(cs_seats, "from")->valueint, 10);
			assert_int_equal(cJSON_GetObjectItem(cs_seats, "after")->valueint, 5);
			seen++;
		} else if (strcmp(hw, "h") == 0) {
			assert_true(cJSON_IsNull(cs_seats));
			const cJSON *t = cJSON_GetObjectItem(s, "usd_per_accepted_task");
			assert_true(cJSON_IsNull(cJSON_GetArrayItem(t, 3)));
			assert_true(cJSON_IsNull(cJSON_GetArrayItem(cJSON_GetObjectItem(s, "deployment"),
								    3)));
			seen++;
		}
	}
	assert_int_equal(seen, 2);
	cJSON_Delete(j);
	free(buf);

	/* sizes out of order are refused */
	struct compare_result *r = calloc(1, sizeof(*r));
	struct diag d;
	diag_init(&d);
	assert_int_equal(crossover_add(c, 40, r, &d), DIAG_EINPUT);
	assert_non_null(strstr(d.msg, "expected ascending"));
	free(r);
	free(c);
}

static void test_parse(void **state)
{
	(void)state;
	int64_t v[CROSSOVER_MAX_TEAMS];
	size_t n;
	struct diag d;
	diag_init(&d);
	assert_int_equal(crossover_parse_teams("40,10,20", 1000, v, &n, &d), 0);
	assert_int_equal(n, 3);
	assert_true(v[0] == 10 && v[1] == 20 && v[2] == 40);
	assert_int_equal(crossover_parse_teams("10:40:10", 1000, v, &n, &d), 0);
	assert_int_equal(n, 4);
	assert_true(v[3] == 40);
	assert_int_equal(crossover_parse_teams("10:45:10", 1000, v, &n, &d), 0);
	assert_true(n == 4 && v[3] == 40);
	static const char *const bad[] = {"10,,20", "10,20,", "0,5", "5,5", "10:5:1", "1:100:1",
					  "a,b", "10:20", "10:20:0", "-1,3", "1001,2", "5,x"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		diag_init(&d);
		if (crossover_parse_teams(bad[i], 1000, v, &n, &d) != DIAG_EINPUT)
			fail_msg("'%s' accepted", bad[i]);
		assert_non_null(strstr(d.msg, "expected"));
	}
}

/* The figure of (hardware, option) in a compare JSON's rows. */
static double row_task(const cJSON *doc, const char *hw, const char *option)
{
	const cJSON *row;
	cJSON_ArrayForEach(row, cJSON_GetObjectItem(doc, "rows")) {
		if (strcmp(cJSON_GetObjectItem(row, "option")->valuestring, option) == 0 &&
		    strcmp(cJSON_GetObjectItem(row, "hardware")->valuestring, hw) == 0)
			return cJSON_GetObjectItem(row, "usd_per_accepted_task")->valuedouble;
	}
	return NAN;
}

#define TEAM "--profile default --hardware h100-sxm,l40s --seed 3"

static void test_each_point_is_a_compare(void **state)
{
	(void)state;
	struct cli_out r = cli_run("compare --engineers 2,1 " TEAM " --quiet --json -");
	assert_int_equal(r.status, 0);
	cJSON *range = cJSON_Parse(r.out);
	assert_non_null(range);
	const cJSON *rt = cJSON_GetObjectItem(cJSON_GetObjectItem(range, "run"), "router");
	assert_string_equal(cJSON_GetObjectItem(rt, "policy")->valuestring, "sglang_smg_v1.9_approx");
	const cJSON *eng = cJSON_GetObjectItem(range, "engineers");
	assert_int_equal(cJSON_GetArraySize(eng), 2);
	assert_int_equal(cJSON_GetArrayItem(eng, 0)->valueint, 1);
	for (int k = 0; k < 2; k++) {
		char cmd[256];
		snprintf(cmd, sizeof(cmd), "compare --engineers %d " TEAM " --quiet --json -", k + 1);
		struct cli_out one = cli_run(cmd);
		assert_int_equal(one.status, 0);
		cJSON *doc = cJSON_Parse(one.out);
		assert_non_null(doc);
		int checked = 0;
		const cJSON *s;
		cJSON_ArrayForEach(s, cJSON_GetObjectItem(range, "series")) {
			double v = cJSON_GetArrayItem(cJSON_GetObjectItem(s, "usd_per_accepted_task"),
						      k)->valuedouble;
			double w = row_task(doc, cJSON_GetObjectItem(s, "hardware")->valuestring,
					    cJSON_GetObjectItem(s, "option")->valuestring);
			assert_true(v == w);
			checked++;
		}
		assert_true(checked >= 2);
		const cJSON *b;
		cJSON_ArrayForEach(b, cJSON_GetObjectItem(range, "baselines")) {
			double v = cJSON_GetArrayItem(cJSON_GetObjectItem(b, "usd_per_accepted_task"),
						      k)->valuedouble;
			assert_true(v == row_task(doc, "", cJSON_GetObjectItem(b, "option")->valuestring));
		}
		cJSON_Delete(doc);
		cli_out_free(&one);
	}
	cJSON_Delete(range);
	cli_out_free(&r);

	/* the table: one line per size, then the crossovers */
	r = cli_run("compare --engineers 1,2 " TEAM);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "Cost per accepted task (USD) by team size"));
	assert_non_null(strstr(r.out, "Crossovers: the team size from which"));
	assert_non_null(strstr(r.out, "Router: sglang_smg_v1.9_approx (cache_threshold 0.3, "));
	assert_non_null(strstr(r.err, "team of 2 engineers (2 of 2): sizing"));
	cli_out_free(&r);

	/* a list belongs to compare; size refuses it */
	r = cli_run("size --engineers 1,2 " TEAM);
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "--engineers"));
	cli_out_free(&r);
	r = cli_run("compare --engineers 2,2 " TEAM);
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "given twice"));
	assert_string_equal(r.out, "");
	cli_out_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_crossings),
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_each_point_is_a_compare),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
