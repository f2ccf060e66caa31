/* SPDX-License-Identifier: Apache-2.0
 * test_synth_profile: the synthetic team's JSON profile.  The built-in
 * default loads and holds the documented values; a file overrides only what
 * it names; every kind of mistake is an input error with the file, the key
 * path and what was expected (table-driven, exact messages).
 */
#include "tests/traces/testutil.h"

#include "base/diag.h"
#include "traces/synth.h"
#include "traces/synth_profile.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

static void test_default(void **state)
{
	(void)state;
	struct synth_profile p;
	struct diag d;
	diag_init(&d);
	assert_int_equal(synth_profile_load(&p, NULL, &d), 0);
	assert_true(synth_profile_check(&p));
	assert_string_equal(p.name, "default");
	assert_string_equal(p.source, "(built-in default)");
	/* the field-notes figures the defaults are built on */
	assert_true(p.failure_rate == 0.09);
	assert_int_equal(p.max_attempts, 4);
	assert_int_equal(p.n_archetypes, 5);
	double lo = INFINITY, hi = 0;
	for (int i = 0; i < p.n_archetypes; i++) {
		lo = fmin(lo, p.archetypes[i].token_scale);
		hi = fmax(hi, p.archetypes[i].token_scale);
	}
	assert_true(fabs(hi / lo - 50.0) < 1e-9);
	/* 1.34x median run-to-run spread: exp(0.6745 * sqrt(2) * sigma) */
	assert_true(fabs(exp(0.6745 * sqrt(2.0) * p.run_spread_sigma) - 1.34) < 0.005);
	assert_true(p.target_prefix_hit_rate == 0.957);
	assert_true(p.target_overlap_median == 1.15 && p.target_overlap_p90 == 1.4);
	assert_int_equal(p.n_zones, 4);
	assert_int_equal(p.output_tokens.kind, SYNTH_DIST_LOGNORMAL);
	assert_true(p.output_tokens.min == 1);
}

/* A file changes what it names and nothing else. */
static void test_overlay(void **state)
{
	(void)state;
	char path[512];
	testutil_scratch(path, sizeof(path), "profile_overlay.json");
	testutil_write_str(path, "{\"name\": \"small\", \"tools\": {\"failure_rate\": 0.2},\n"
				 " \"step\": {\"output_tokens\": {\"dist\": \"fixed\", \"value\": 100}},\n"
				 " \"archetypes\": [{\"name\": \"only\", \"weight\": 1}]}\n");
	struct synth_profile def, p;
	struct diag d;
	diag_init(&d);
	assert_int_equal(synth_profile_load(&def, NULL, &d), 0);
	assert_int_equal(synth_profile_load(&p, path, &d), 0);
	assert_true(synth_profile_check(&p));
	assert_string_equal(p.name, "small");
	assert_string_equal(p.source, path);
	assert_true(p.failure_rate == 0.2);
	assert_int_equal(p.output_tokens.kind, SYNTH_DIST_FIXED);
	assert_true(p.output_tokens.p1 == 100);
	/* bounds of the knob's domain when the file gives none */
	assert_true(p.output_tokens.min == 1 && p.output_tokens.max == 1e9);
	assert_int_equal(p.n_archetypes, 1);
	assert_string_equal(p.archetypes[0].name, "only");
	assert_true(p.archetypes[0].token_scale == 1 && p.archetypes[0].steps_scale == 1);
	/* untouched knobs keep the default */
	assert_true(p.retry_failure_probability == def.retry_failure_probability);
	assert_true(p.tool_output_tokens.p1 == def.tool_output_tokens.p1);
	assert_int_equal(p.n_zones, def.n_zones);
	assert_true(synth_dist_mean(&p.output_tokens) == 100);
}

struct bad_case {
	const char *json;
	const char *msg; /* expected after "<where>: " */
};

static const struct bad_case BAD[] = {
	{"{\"teams\": {}}",
	 "teams: unknown key (expected one of: name, description, team, harness, sessions, task, "
	 "step, tools, cache, subagents, archetypes, timing, output_kinds, targets)"},
	{"{\"tools\": {\"failure_rte\": 0.1}}",
	 "tools.failure_rte: unknown key (expected one of: failure_rate, retry_failure_probability, "
	 "max_attempts, error_tokens)"},
	{"{\"team\": {\"timezones\": [{\"utc_offset_h\": 1, \"weight\": 1}, {\"utc_offset_h\": 2, "
	 "\"wieght\": 1}]}}",
	 "team.timezones[1].wieght: unknown key (expected one of: name, utc_offset_h, weight)"},
	{"{\"team\": {\"timezones\": [{\"utc_offset_h\": 15, \"weight\": 1}]}}",
	 "team.timezones[0].utc_offset_h: expected a number in [-12, 14]"},
	{"{\"team\": {\"timezones\": [{\"utc_offset_h\": 1}]}}",
	 "team.timezones[0]: needs utc_offset_h and weight"},
	{"{\"team\": {\"timezones\": []}}",
	 "team.timezones: expected an array of 1 to 32 {\"name\", \"utc_offset_h\", \"weight\"} objects"},
	{"{\"archetypes\": [{\"weight\": 1, \"token_scale\": 0}]}",
	 "archetypes[0].token_scale: expected a number in [0.001, 1000]"},
	{"{\"archetypes\": [{\"token_scale\": 2}]}", "archetypes[0]: needs a weight"},
	{"{\"output_kinds\": {\"code\": 0.7, \"prose\": 0.5}}",
	 "output_kinds: shares add up to 1.2 (expected at most 1; the rest carry no kind)"},
	{"{\"output_kinds\": {\"poetry\": 0.5}}",
	 "output_kinds.poetry: unknown key (expected one of: code, structured, prose)"},
	{"{\"tools\": {\"failure_rate\": \"high\"}}",
	 "tools.failure_rate: expected a number in [0, 0.9]"},
	{"{\"tools\": {\"max_attempts\": 2.5}}", "tools.max_attempts: expected an integer in [1, 64]"},
	{"{\"step\": {\"output_tokens\": 200}}",
	 "step.output_tokens: expected a distribution object {\"dist\": KIND, ...}"},
	{"{\"step\": {\"output_tokens\": {\"dist\": \"zipf\", \"median\": 2}}}",
	 "step.output_tokens.dist: expected one of fixed, uniform, normal, lognormal, gamma, "
	 "exponential, geometric, poisson"},
	{"{\"step\": {\"output_tokens\": {\"dist\": \"lognormal\", \"median\": 200}}}",
	 "step.output_tokens: a lognormal distribution needs median and sigma"},
	{"{\"step\": {\"output_tokens\": {\"dist\": \"lognormal\", \"median\": 200, \"sigma\": 1, "
	 "\"mean\": 3}}}",
	 "step.output_tokens.mean: unknown key (expected one of: dist, median, sigma, min, max)"},
	{"{\"step\": {\"output_tokens\": {\"dist\": \"lognormal\", \"median\": -5, \"sigma\": 1}}}",
	 "step.output_tokens: median must be > 0 and sigma in [0, 10]"},
	{"{\"step\": {\"output_tokens\": {\"dist\": \"uniform\", \"low\": 10, \"high\": 20, "
	 "\"min\": 0}}}",
	 "step.output_tokens.min: expected a number in [1, 1000000000]"},
	{"{\"step\": {\"output_tokens\": {\"dist\": \"fixed\", \"value\": 5, \"min\": 10, \"max\": 9}}}",
	 "step.output_tokens: min 10 exceeds max 9"},
	{"{\"task\": {\"steps\": {\"dist\": \"geometric\", \"mean\": 0.5}}}",
	 "task.steps: mean must be >= 1"},
	{"{\"harness\": {\"context_window_tokens\": 100000, \"compact_reserve_tokens\": 25000}}",
	 "harness: after a compaction the harness, the largest repository context, summary and "
	 "output leave 0 tokens below the compaction threshold 75000 (expected at least 1024: a "
	 "larger context_window_tokens or smaller maxima)"},
	{"{\"harness\": {\"compact_reserve_tokens\": 20000}}",
	 "harness.compact_reserve_tokens: 20000 leaves no room for the compaction call (expected at "
	 "least compact_request_tokens + summary_tokens.max = 20500)"},
	{"[1, 2]", "expected a JSON object at the top level"},
};

static void test_errors(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(BAD) / sizeof(BAD[0]); i++) {
		struct synth_profile p;
		struct diag d;
		diag_init(&d);
		char path[512], want[1400];
		testutil_scratch(path, sizeof(path), "profile_bad.json");
		testutil_write_str(path, BAD[i].json);
		int rc = synth_profile_load(&p, path, &d);
		snprintf(want, sizeof(want), "%s: %s", path, BAD[i].msg);
		if (rc != DIAG_EINPUT || strcmp(d.msg, want) != 0)
			fail_msg("case %zu: got %d '%s'\nexpected '%s'", i, rc, d.msg, want);
	}
}

static void test_syntax_and_io(void **state)
{
	(void)state;
	struct synth_profile p;
	struct diag d;
	char path[512], want[700];
	testutil_scratch(path, sizeof(path), "profile_syntax.json");
	testutil_write_str(path, "{\n  \"name\": \"x\",\n  \"tools\": {\"failure_rate\": 0.1,,}\n}\n");
	diag_init(&d);
	assert_int_equal(synth_profile_load(&p, path, &d), DIAG_EINPUT);
	snprintf(want, sizeof(want), "%s:3:", path);
	assert_memory_equal(d.msg, want, strlen(want));
	assert_non_null(strstr(d.msg, "malformed JSON"));

	testutil_write_str(path, "{\"name\": ");
	diag_init(&d);
	assert_int_equal(synth_profile_load(&p, path, &d), DIAG_EINPUT);
	assert_non_null(strstr(d.msg, "unexpected end of file"));

	diag_init(&d);
	assert_int_equal(synth_profile_load(&p, "/nonexistent/profile.json", &d), DIAG_EINPUT);
	assert_string_equal(d.msg, "/nonexistent/profile.json: cannot open: No such file or directory");
}

/* A failure rate that the retry settings cannot produce is refused when the
 * team is made, naming the knobs. */
static void test_unreachable_failure_rate(void **state)
{
	(void)state;
	struct synth_profile p;
	struct diag d;
	diag_init(&d);
	assert_int_equal(synth_profile_load(&p, NULL, &d), 0);
	assert_int_equal(synth_profile_load_text(&p, "{\"tools\": {\"max_attempts\": 2}}", "inline", &d), 0);
	assert_string_equal(p.source, "inline");
	assert_int_equal(p.max_attempts, 2);
	/* at most S(M) / (1 + S(M-1)) of calls can fail: 1.875 / 2.75 here */
	p.failure_rate = 0.9;
	p.retry_failure_probability = 0.5;
	p.max_attempts = 4;
	assert_true(synth_first_failure_probability(&p) > 1);
	struct synth_team *t = NULL;
	struct synth_team_opts o = {.engineers = 1, .days = 1, .seed = 1};
	assert_int_equal(synth_team_new(&t, &p, &o, &d), DIAG_EINPUT);
	assert_null(t);
	assert_string_equal(d.msg, "inline: tools.failure_rate 0.9 cannot be reached with "
			    "retry_failure_probability 0.5 and max_attempts 4 (expected a lower rate or "
			    "fewer retries)");
	/* and the derivation is right where it is reachable: with one attempt
	 * the first failure probability is the rate itself */
	p.max_attempts = 1;
	assert_true(fabs(synth_first_failure_probability(&p) - 0.9) < 1e-12);
	p.max_attempts = 4;
	p.failure_rate = 0.09;
	p.retry_failure_probability = 0.35;
	double p1 = synth_first_failure_probability(&p), q = 0.35;
	double fails = p1 * (1 + q + q * q + q * q * q), calls = 1 + p1 * (1 + q + q * q);
	assert_true(fabs(fails / calls - 0.09) < 1e-12);
	o.engineers = 0;
	diag_init(&d);
	assert_int_equal(synth_team_new(&t, &p, &o, &d), DIAG_EINPUT);
	assert_string_equal(d.msg, "engineers 0 out of range (expected 1..1000000)");
}

/* --timezones N keeps the N heaviest zones in their order: 1 is the
 * default team's Central Europe office. */
static void test_keep_zones(void **state)
{
	(void)state;
	struct synth_profile p;
	struct diag d;
	diag_init(&d);
	assert_int_equal(synth_profile_load(&p, NULL, &d), 0);
	assert_int_equal(p.n_zones, 4);
	struct synth_profile two = p;
	synth_profile_keep_zones(&two, 2);
	assert_int_equal(two.n_zones, 2);
	assert_string_equal(two.zones[0].name, "US Eastern");
	assert_string_equal(two.zones[1].name, "Central Europe");
	synth_profile_keep_zones(&p, 1);
	assert_int_equal(p.n_zones, 1);
	assert_string_equal(p.zones[0].name, "Central Europe");
	assert_true(synth_profile_check(&p));
	synth_profile_keep_zones(&p, 5);
	assert_int_equal(p.n_zones, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_default),
		cmocka_unit_test(test_keep_zones),
		cmocka_unit_test(test_overlay),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_syntax_and_io),
		cmocka_unit_test(test_unreachable_failure_rate),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
