/* SPDX-License-Identifier: Apache-2.0
 * test_synth_cli: `agentcap synth` end to end: help, usage errors and their
 * exit status, a profile error naming the file and key path, the printed
 * default profile, the same bytes on a second run (plain and gzip), and the
 * outputs replaying through `agentcap replay`.
 */
#include "tests/traces/testutil.h"

#include <cjson/cJSON.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "tests/support/cli_run.h"


static void expect(const char *args, int status, const char *in_stderr)
{
	struct cli_out r = cli_run(args);
	if (r.status != status || (in_stderr && !strstr(r.err, in_stderr)))
		fail_msg("agentcap %s: status %d, stderr '%s' (expected %d and '%s')", args, r.status,
			 r.err, status, in_stderr ? in_stderr : "");
	cli_out_free(&r);
}

static void test_help_and_usage(void **state)
{
	(void)state;
	struct cli_out r = cli_run("synth --help");
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "SYNOPSIS"));
	assert_non_null(strstr(r.out, "--max-concurrency C"));
	cli_out_free(&r);
	r = cli_run("--help");
	assert_non_null(strstr(r.out, "synth"));
	cli_out_free(&r);
	expect("synth", 2, "expected --engineers N and --days D, or --workload");
	expect("synth --engineers 3 --days 1", 2, "expected -o OUT");
	expect("synth --engineers 0 --days 1 -o x", 2, "--engineers '0': expected an integer 1..1000000");
	expect("synth --engineers 3 --days 1 --range-ratio 0.1 -o x", 2,
	       "--range-ratio needs --workload");
	expect("synth --workload random --input-len 10 --output-len 5 --num-prompts 3 -o x", 2,
	       "exactly one of --request-rate and --max-concurrency");
	expect("synth --workload random --input-len 10 --output-len 5 --num-prompts 3 "
	       "--request-rate 1 --max-concurrency 2 -o x",
	       2, "exactly one of --request-rate and --max-concurrency");
	expect("synth --workload fixed --input-len 10 --output-len 5 --num-prompts 3 "
	       "--request-rate 1 --range-ratio 0.2 -o x",
	       2, "--range-ratio applies to the random workload only");
	expect("synth --workload random --input-len 10 --output-len 5 --num-prompts 3 "
	       "--max-concurrency 2 --burstiness 2 -o x",
	       2, "--burstiness applies to --request-rate only");
	expect("synth --workload poisson -o x", 2, "expected random or fixed");
	expect("synth --engineers 2 --days 1 -o /nonexistent-dir/t.jsonl", 2, "/nonexistent-dir/t.jsonl");
}

static void test_profile_error(void **state)
{
	(void)state;
	char prof[512], out[512], args[1200];
	testutil_scratch(prof, sizeof(prof), "cli_bad_profile.json");
	testutil_scratch(out, sizeof(out), "cli_never.jsonl");
	testutil_write_str(prof, "{\"subagents\": {\"paralel\": 2}}");
	unlink(out);
	snprintf(args, sizeof(args), "synth --engineers 2 --days 1 --profile %s -o %s", prof, out);
	struct cli_out r = cli_run(args);
	assert_int_equal(r.status, 2);
	char want[700];
	snprintf(want, sizeof(want), "agentcap: %s: subagents.paralel: unknown key (expected one of: "
		 "spawn_probability, parallel, brief_tokens, steps, result_tokens)\n", prof);
	assert_string_equal(r.err, want);
	assert_int_equal(access(out, F_OK), -1); /* nothing written */
	cli_out_free(&r);
}

static void test_print_profile(void **state)
{
	(void)state;
	struct cli_out r = cli_run("synth --print-profile");
	assert_int_equal(r.status, 0);
	size_t n;
	char *file = cli_slurp(AC_SRC_DIR "/traces/profiles/default.json", &n);
	assert_non_null(file);
	assert_string_equal(r.out, file);
	cJSON *j = cJSON_Parse(r.out);
	assert_non_null(j);
	cJSON_Delete(j);
	free(file);
	cli_out_free(&r);
}

static void test_same_bytes_and_replay(void **state)
{
	(void)state;
	const char *names[] = {"cli_team_a.jsonl", "cli_team_b.jsonl", "cli_team_a.jsonl.gz",
			       "cli_team_b.jsonl.gz"};
	char path[4][512], args[2600];
	for (int i = 0; i < 4; i++) {
		testutil_scratch(path[i], sizeof(path[i]), names[i]);
		snprintf(args, sizeof(args), "synth --engineers 2 --days 1 --seed 5 -o %s", path[i]);
		struct cli_out r = cli_run(args);
		assert_int_equal(r.status, 0);
		/* the summary goes to standard error, as for every command that
		 * writes a file */
		assert_string_equal(r.out, "");
		assert_non_null(strstr(r.err, "2 engineers in 4 time zones x 1 days, seed 5"));
		cli_out_free(&r);
	}
	size_t na, nb;
	for (int i = 0; i < 4; i += 2) {
		char *a = cli_slurp(path[i], &na), *b = cli_slurp(path[i + 1], &nb);
		assert_true(na == nb && memcmp(a, b, na) == 0);
		if (i == 2)
			assert_true((unsigned char)a[0] == 0x1f && (unsigned char)a[1] == 0x8b);
		free(a);
		free(b);
	}
	/* the trace to standard output, the summary to standard error */
	struct cli_out r = cli_run("synth --engineers 2 --days 1 --seed 5 -o -");
	assert_int_equal(r.status, 0);
	char *a = cli_slurp(path[0], &na);
	assert_true(r.out_len == na && memcmp(r.out, a, na) == 0);
	assert_non_null(strstr(r.err, "wrote -"));
	free(a);
	cli_out_free(&r);
	/* replay takes it as it is (prompts up to the profile's 262,144-token
	 * window need a model with that context; slo.attainment=0: judged on
	 * failed calls only, of which there must be none) */
	snprintf(args, sizeof(args), "replay %s --set model=qwen3.6-35b-a3b --set weight_format=fp8 "
		 "--set slo.attainment=0 --quiet", path[2]);
	r = cli_run(args);
	if (r.status != 0)
		fail_msg("replay: %s", r.err);
	cli_out_free(&r);

	char bench[512];
	testutil_scratch(bench, sizeof(bench), "cli_bench.jsonl");
	snprintf(args, sizeof(args), "synth --workload random --input-len 512 --output-len 64 "
		 "--range-ratio 0.5 --num-prompts 50 --request-rate 5 --burstiness 0.5 "
		 "--shared-prefix 256 -o %s", bench);
	r = cli_run(args);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.err, "50 requests in 50 sessions"));
	cli_out_free(&r);
	snprintf(args, sizeof(args), "replay %s --json -", bench);
	r = cli_run(args);
	assert_int_equal(r.status, 0);
	cJSON *j = cJSON_Parse(r.out);
	assert_non_null(j);
	cJSON_Delete(j);
	cli_out_free(&r);
}

static double num(const cJSON *j, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, key);
	assert_true(cJSON_IsNumber(v));
	return v->valuedouble;
}

/* The default synthetic team (a 262,144-token window) on the default
 * scenario (Llama-3.1-8B, 131,072 tokens): under the default context policy
 * the harness compacts and every session completes; the report counts the
 * compactions.  Rejecting instead abandons most of the sessions' calls. */
static void test_team_on_shorter_context(void **state)
{
	(void)state;
	char trace[512], args[1200];
	testutil_scratch(trace, sizeof(trace), "cli_team_ctx.jsonl.gz");
	snprintf(args, sizeof(args), "synth --engineers 2 --days 1 --seed 2 -o %s", trace);
	expect(args, 0, NULL);
	/* slo.attainment=0: judged on failed calls only */
	snprintf(args, sizeof(args), "replay %s --quiet --json - --set slo.attainment=0", trace);
	struct cli_out r = cli_run(args);
	assert_int_equal(r.status, 0);
	cJSON *j = cJSON_Parse(r.out);
	assert_non_null(j);
	assert_true(num(j, "failed") == 0);
	assert_true(num(j, "calls_compacted") > 0);
	assert_true(num(j, "calls_over_max_model_len") == 0);
	assert_string_equal(cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(j, "run"), "context_policy")->valuestring, "compact");
	double completed = num(j, "completed");
	cJSON_Delete(j);
	cli_out_free(&r);
	snprintf(args, sizeof(args), "replay %s --quiet --json - --set replay.context_policy=reject", trace);
	r = cli_run(args);
	assert_int_equal(r.status, 1); /* failed calls: the answer is no */
	j = cJSON_Parse(r.out);
	assert_non_null(j);
	assert_true(num(j, "calls_compacted") == 0);
	assert_true(num(j, "calls_over_max_model_len") > 0);
	assert_true(num(j, "failed") > 0.2 * completed);
	cJSON_Delete(j);
	cli_out_free(&r);
	unlink(trace);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_help_and_usage),
		cmocka_unit_test(test_profile_error),
		cmocka_unit_test(test_print_profile),
		cmocka_unit_test(test_same_bytes_and_replay),
		cmocka_unit_test(test_team_on_shorter_context),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
