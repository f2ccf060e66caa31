/* SPDX-License-Identifier: Apache-2.0
 * End-to-end: the launch command in `agentcap size` (table, JSON "launch"
 * per option, HTML page) and in `agentcap replay` (JSON "launch" array,
 * table).  A small team sized on an L4 gets vLLM's small-GPU step budget
 * (2048 tokens) in its command; the shell line is the argv quoted. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "tests/support/cli_run.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define SCRATCH AC_BIN_DIR "/tests/cli/scratch_launch"
#define PAIR AC_SRC_DIR "/tests/fixtures/replay/two_sessions.jsonl"

/* The value after flag in argv (a cJSON array of strings), or NULL. */
static const char *arg_after(const cJSON *argv, const char *flag)
{
	int n = cJSON_GetArraySize(argv);
	for (int i = 0; i + 1 < n; i++)
		if (strcmp(cJSON_GetArrayItem(argv, i)->valuestring, flag) == 0)
			return cJSON_GetArrayItem(argv, i + 1)->valuestring;
	return NULL;
}

static void test_size_launch(void **state)
{
	(void)state;
	mkdir(AC_BIN_DIR "/tests", 0755);
	mkdir(AC_BIN_DIR "/tests/cli", 0755);
	mkdir(SCRATCH, 0755);
	struct cli_out r = cli_run("size --engineers 2 --profile default --hardware l4 "
				   "--set model=qwen3-8b --slo ttft_p95=60s,tpot_p50=200ms "
				   "--quiet --json " SCRATCH "/size.json --html " SCRATCH "/size.html");
	if (r.status != 0)
		fail_msg("size: exit %d: %s", r.status, r.err);
	cli_out_free(&r);
	size_t len = 0;
	char *text = cli_slurp(SCRATCH "/size.json", &len);
	assert_non_null(text);
	cJSON *j = cJSON_Parse(text);
	free(text);
	assert_non_null(j);
	const cJSON *o = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "options"), 0);
	const cJSON *l = cJSON_GetObjectItem(o, "launch");
	assert_true(cJSON_IsObject(l));
	assert_string_equal(cJSON_GetObjectItem(l, "engine")->valuestring, "vllm");
	assert_string_equal(cJSON_GetObjectItem(l, "model")->valuestring, "Qwen/Qwen3-8B");
	const cJSON *argv = cJSON_GetObjectItem(l, "argv");
	assert_string_equal(cJSON_GetArrayItem(argv, 0)->valuestring, "vllm");
	assert_string_equal(arg_after(argv, "--max-num-batched-tokens"), "2048");
	assert_string_equal(arg_after(argv, "--max-num-seqs"), "256");
	const cJSON *best = cJSON_GetObjectItem(o, "best");
	char tp[16];
	snprintf(tp, sizeof(tp), "%d", cJSON_GetObjectItem(best, "tensor_parallel_size")->valueint);
	assert_string_equal(arg_after(argv, "--tensor-parallel-size"), tp);
	assert_int_equal(cJSON_GetObjectItem(l, "replicas")->valueint,
			 cJSON_GetObjectItem(best, "replicas")->valueint);
	const char *shell = cJSON_GetObjectItem(l, "shell")->valuestring;
	assert_true(strncmp(shell, "vllm serve Qwen/Qwen3-8B --tensor-parallel-size ", 48) == 0);
	assert_true(cJSON_IsTrue(cJSON_GetObjectItem(l, "complete")));
	cJSON_Delete(j);
	char *html = cli_slurp(SCRATCH "/size.html", &len);
	assert_non_null(html);
	assert_non_null(strstr(html, "<h2>Launch commands</h2>"));
	assert_non_null(strstr(html, "vllm serve Qwen/Qwen3-8B"));
	free(html);
	/* the table prints it too */
	r = cli_run("size --engineers 2 --profile default --hardware l4 --set model=qwen3-8b "
		    "--slo ttft_p95=60s,tpot_p50=200ms");
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "Launch commands"));
	assert_non_null(strstr(r.out, "    vllm serve Qwen/Qwen3-8B "));
	cli_out_free(&r);
}

static void test_replay_launch(void **state)
{
	(void)state;
	struct cli_out r = cli_run("replay " PAIR " --set engine_profile=sglang --set hardware=l40s "
				   "--quiet --json -");
	if (r.status != 0 && r.status != 1)
		fail_msg("replay: exit %d: %s", r.status, r.err);
	cJSON *j = cJSON_Parse(r.out);
	cli_out_free(&r);
	assert_non_null(j);
	const cJSON *l = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "launch"), 0);
	assert_non_null(l);
	assert_string_equal(cJSON_GetObjectItem(l, "engine")->valuestring, "sglang");
	const cJSON *argv = cJSON_GetObjectItem(l, "argv");
	assert_string_equal(arg_after(argv, "--chunked-prefill-size"), "4096");
	cJSON_Delete(j);
	/* an engine that cannot take the KV dtype: no command, and why */
	r = cli_run("replay " PAIR " --set engine_profile=vllm --set kv_cache_dtype=q8-0 "
		    "--quiet --json -");
	j = cJSON_Parse(r.out);
	cli_out_free(&r);
	if (j) {
		assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(j, "launch")), 0);
		assert_non_null(strstr(cJSON_GetObjectItem(j, "launch_error")->valuestring,
				       "kv_cache_dtype: 'q8-0'"));
		cJSON_Delete(j);
	}
}

/* Priority scheduling reaches vLLM's command as its flag; disaggregation,
 * which no flag of one engine expresses, is said beside each command. */
static void test_launch_priority_and_pd(void **state)
{
	(void)state;
	struct cli_out r = cli_run("replay " PAIR " --set scheduling.policy=priority");
	assert_true(r.status == 0 || r.status == 1);
	assert_non_null(strstr(r.out, "vllm serve "));
	assert_non_null(strstr(r.out, " --scheduling-policy priority"));
	cli_out_free(&r);
	r = cli_run("replay " PAIR " --set 'pools=[{\"name\":\"p\",\"hardware\":\"h100-sxm\"},"
		    "{\"name\":\"d\",\"hardware\":\"h100-sxm\"}]' --set "
		    "disaggregation.prefill_pool=p --set disaggregation.decode_pool=d");
	assert_true(r.status == 0 || r.status == 1);
	assert_non_null(strstr(r.out, "not expressed as a flag: prefill/decode disaggregation"));
	assert_null(strstr(r.out, "--scheduling-policy"));
	cli_out_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_size_launch),
		cmocka_unit_test(test_replay_launch),
		cmocka_unit_test(test_launch_priority_and_pd),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
