/* SPDX-License-Identifier: Apache-2.0
 * End-to-end: `agentcap replay` with speculative decoding.  One trace with a
 * code call and a prose call arriving together shows the code call decoding
 * faster, by about the ratio of their expected tokens per verify step; with
 * speculation off the report carries no speculative section and both calls
 * decode alike; a bad key is an input error naming it. */
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
#include <unistd.h>

#define PAIR AC_SRC_DIR "/tests/fixtures/traces/kinds_pair.jsonl"
#define SHAPE "--set model=llama-3.1-70b --set weight_format=fp8 --set tensor_parallel_size=2"
#define SPEC " --set speculative.method=draft --set speculative.draft_model=llama-3.1-8b" \
	     " --set speculative.acceptance_code=0.9 --set speculative.acceptance_prose=0.4"

static cJSON *replay_json(const char *sets, const char *path)
{
	char args[2048];
	snprintf(args, sizeof(args), "replay " PAIR " " SHAPE "%s --json %s --quiet", sets, path);
	struct cli_out r = cli_run(args);
	if (r.status != 0 && r.status != 1)
		fail_msg("agentcap %s: status %d: %s", args, r.status, r.err);
	cli_out_free(&r);
	char *text = cli_slurp(path, NULL);
	assert_non_null(text);
	cJSON *j = cJSON_Parse(text);
	free(text);
	assert_non_null(j);
	return j;
}

static const cJSON *kind_of(const cJSON *spec, const char *kind)
{
	const cJSON *e;
	cJSON_ArrayForEach(e, cJSON_GetObjectItem(spec, "by_kind"))
		if (strcmp(cJSON_GetObjectItem(e, "kind")->valuestring, kind) == 0)
			return e;
	fail_msg("no by_kind entry for %s", kind);
	return NULL;
}

static double num(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItem(o, key);
	assert_non_null(v);
	return v->valuedouble;
}

static void test_code_faster_than_prose(void **state)
{
	(void)state;
	char path[] = "/tmp/agentcap-spec-XXXXXX";
	close(mkstemp(path));
	cJSON *off = replay_json("", path);
	assert_null(cJSON_GetObjectItem(off, "speculative"));
	cJSON *on = replay_json(SPEC, path);
	const cJSON *spec = cJSON_GetObjectItem(on, "speculative");
	assert_non_null(spec);
	assert_string_equal(cJSON_GetObjectItem(spec, "method")->valuestring, "draft");
	assert_string_equal(cJSON_GetObjectItem(spec, "draft_model")->valuestring, "llama-3.1-8b");
	assert_true(num(spec, "k") == 3);
	const cJSON *code = kind_of(spec, "code"), *prose = kind_of(spec, "prose");
	double tau_code = 1 + 0.9 + 0.81 + 0.729, tau_prose = 1 + 0.4 + 0.16 + 0.064;
	/* tokens per verify step: the expectation, but for the last step of
	 * each call, which yields only what is left */
	assert_true(fabs(num(code, "tokens_per_step") - tau_code) < 0.05);
	assert_true(fabs(num(prose, "tokens_per_step") - tau_prose) < 0.02);
	double t_code = num(code, "tpot_ms_mean"), t_prose = num(prose, "tpot_ms_mean");
	print_message("TPOT code %.3f ms, prose %.3f ms; speed-up code %.3f, prose %.3f\n", t_code,
		      t_prose, num(code, "decode_speedup"), num(prose, "decode_speedup"));
	assert_true(t_code < t_prose);
	double ratio = t_prose / t_code;
	assert_true(ratio > 0.9 * tau_code / tau_prose && ratio < 1.02 * tau_code / tau_prose);
	assert_true(num(code, "decode_speedup") > num(prose, "decode_speedup"));
	assert_true(num(code, "calls") == 1 && num(prose, "calls") == 1);
	/* the whole run's TPOT falls against the same trace without it */
	double tpot_off = num(off, "mean_tpot_ms");
	double tpot_on = num(on, "mean_tpot_ms");
	assert_true(tpot_on < tpot_off);
	cJSON_Delete(off);
	cJSON_Delete(on);
	unlink(path);
}

/* The logged-rate input gives the same speed-up as the equivalent
 * per-token rate: vLLM's draft acceptance rate 0.511 at k 3 is per-token
 * 0.7, as is the mean acceptance length 2.533; 0.511 read as per-token
 * gives much less.  The report says which was given, table and JSON. */
static void test_logged_rate_same_speedup(void **state)
{
	(void)state;
	char path[] = "/tmp/agentcap-spec-XXXXXX";
	close(mkstemp(path));
	const char *base = " --set speculative.method=draft --set speculative.draft_model=llama-3.1-8b";
	const char *how[4] = {" --set speculative.acceptance_rate=0.7",
			      " --set speculative.draft_acceptance_rate=0.511",
			      " --set speculative.mean_acceptance_length=2.533",
			      " --set speculative.acceptance_rate=0.511"};
	const char *given[4] = {"per_token", "draft_acceptance_rate", "mean_acceptance_length",
				"per_token"};
	double up[4];
	for (int k = 0; k < 4; k++) {
		char sets[512];
		snprintf(sets, sizeof(sets), "%s%s", base, how[k]);
		cJSON *j = replay_json(sets, path);
		const cJSON *spec = cJSON_GetObjectItem(j, "speculative");
		assert_non_null(spec);
		assert_string_equal(cJSON_GetObjectItem(spec, "acceptance_given")->valuestring, given[k]);
		up[k] = num(spec, "decode_speedup");
		cJSON_Delete(j);
	}
	print_message("speed-up: per-token 0.7 %.4f, logged 0.511 %.4f, length 2.533 %.4f, "
		      "0.511 misread %.4f\n", up[0], up[1], up[2], up[3]);
	assert_true(fabs(up[1] - up[0]) < 0.005 * up[0]);
	assert_true(fabs(up[2] - up[0]) < 0.005 * up[0]);
	assert_true(up[3] < 0.85 * up[0]);
	unlink(path);
	char args[1024];
	snprintf(args, sizeof(args), "replay " PAIR " " SHAPE "%s%s", base, how[1]);
	struct cli_out r = cli_run(args);
	assert_true(r.status == 0 || r.status == 1);
	assert_non_null(strstr(r.out, "Acceptance given as:"));
	assert_non_null(strstr(r.out, "vLLM draft acceptance rate 0.511 at k 3"));
	assert_non_null(strstr(r.out, "-> per-token 0.7000"));
	cli_out_free(&r);
}

static void test_bad_key(void **state)
{
	(void)state;
	struct cli_out r = cli_run("replay " PAIR " --set speculative.method=medusa");
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "speculative.method 'medusa' (expected off, draft, mtp, eagle3, ngram or suffix)"));
	cli_out_free(&r);
	r = cli_run("replay " PAIR " --set speculative.method=draft "
		    "--set speculative.draft_model=qwen2.5-7b");
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "vocabulary"));
	cli_out_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_code_faster_than_prose),
		cmocka_unit_test(test_logged_rate_same_speedup),
		cmocka_unit_test(test_bad_key),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
