/* SPDX-License-Identifier: Apache-2.0
 * End-to-end tests of the agentcap command: help, exit codes, error
 * messages, determinism, and what prefix caching and KV capacity change. */
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
#include <sys/wait.h>
#include <unistd.h>

#define FIX AC_SRC_DIR "/tests/fixtures"
#define MOONCAKE200 FIX "/traces/mooncake_head200.jsonl"

static void test_help(void **state)
{
	(void)state;
	struct cli_out r = cli_run("--help");
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "SYNOPSIS"));
	assert_non_null(strstr(r.out, "replay"));
	cli_out_free(&r);
	r = cli_run("replay --help");
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "--set KEY=VALUE"));
	cli_out_free(&r);
	r = cli_run("frobnicate");
	assert_int_equal(r.status, 2);
	cli_out_free(&r);
	r = cli_run("replay");
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "expected exactly one TRACE"));
	cli_out_free(&r);
}

static void test_bad_line_names_place(void **state)
{
	(void)state;
	struct cli_out r = cli_run("replay " FIX "/cli/bad_line.jsonl");
	assert_int_equal(r.status, 2);
	/* path:line:col: message */
	assert_non_null(strstr(r.err, FIX "/cli/bad_line.jsonl:3:"));
	assert_non_null(strstr(r.err, "output_tokens"));
	cli_out_free(&r);
}

static void test_truncated_gzip_is_an_error(void **state)
{
	(void)state;
	struct cli_out r = cli_run("replay " FIX "/traces/mooncake_head200_truncated.jsonl.gz");
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "mooncake_head200_truncated.jsonl.gz"));
	assert_non_null(strstr(r.err, "truncated"));
	cli_out_free(&r);
}

static void test_unknown_key(void **state)
{
	(void)state;
	struct cli_out r = cli_run("replay " MOONCAKE200 " --set engine.prefix_caching=false");
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "engine.prefix_caching: unknown key"));
	cli_out_free(&r);
	r = cli_run("replay " MOONCAKE200 " --scenario /nonexistent/scenario.json");
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "/nonexistent/scenario.json"));
	cli_out_free(&r);
}

static cJSON *run_json(const char *extra, const char *path)
{
	char args[2048];
	snprintf(args, sizeof(args), "replay " MOONCAKE200 " --quiet --json %s %s", path, extra);
	struct cli_out r = cli_run(args);
	if (r.status != 0 && r.status != 1)
		fail_msg("agentcap %s: %s", args, r.err);
	char *text = cli_slurp(path, NULL);
	cJSON *j = cJSON_Parse(text);
	free(text);
	assert_non_null(j);
	/* exit status 1 exactly when the report's answer is no */
	const cJSON *answer = cJSON_GetObjectItemCaseSensitive(j, "answer");
	assert_true(cJSON_IsString(answer));
	assert_int_equal(r.status, strcmp(answer->valuestring, "no") == 0 ? 1 : 0);
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

static void test_deterministic_json(void **state)
{
	(void)state;
	char a[] = "/tmp/agentcap-a-XXXXXX", b[] = "/tmp/agentcap-b-XXXXXX";
	close(mkstemp(a));
	close(mkstemp(b));
	cJSON *ja = run_json("--seed 7", a);
	cJSON *jb = run_json("--seed 7", b);
	char *ta = cli_slurp(a, NULL), *tb = cli_slurp(b, NULL);
	assert_string_equal(ta, tb);
	assert_int_equal(num(ja, "schema_version"), 1);
	assert_int_equal(num(ja, "completed"), 200);
	free(ta);
	free(tb);
	cJSON_Delete(ja);
	cJSON_Delete(jb);
	unlink(a);
	unlink(b);
}

static void test_prefix_caching_and_capacity(void **state)
{
	(void)state;
	char p[] = "/tmp/agentcap-p-XXXXXX";
	close(mkstemp(p));
	cJSON *on = run_json("--set engine.kv_cache_tokens=20000000", p);
	cJSON *off = run_json("--set engine.kv_cache_tokens=20000000 --set engine.enable_prefix_caching=false", p);
	cJSON *small = run_json("--set engine.kv_cache_tokens=150000", p);
	double hit_on = num(on, "prefix_cache_hit_rate");
	assert_true(hit_on > 0.03);
	assert_true(num(off, "prefix_cache_hit_rate") == 0.0);
	assert_true(num(off, "computed_prefill_tokens") > num(on, "computed_prefill_tokens"));
	/* a cache too small for the working set: fewer hits, evictions or
	 * preemptions, and still every request completes */
	assert_true(num(small, "prefix_cache_hit_rate") < hit_on);
	assert_true(num(small, "kv_evicted_blocks") + num(small, "preemptions") > 0);
	assert_int_equal(num(small, "completed"), 200);
	assert_int_equal(num(small, "failed"), 0);
	cJSON_Delete(on);
	cJSON_Delete(off);
	cJSON_Delete(small);
	unlink(p);
}

static void test_json_to_bad_path(void **state)
{
	(void)state;
	struct cli_out r = cli_run("replay " MOONCAKE200 " --quiet --json /nonexistent/dir/out.json");
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "/nonexistent/dir/out.json"));
	cli_out_free(&r);
}

/* A run whose calls cannot fit the KV cache fails regardless of load: the
 * table opens with the warnings, JSON carries them, and the exit status is
 * 1 ("the answer is no"), as agentcap --help promises. */
static void test_failures_are_loud(void **state)
{
	(void)state;
	struct cli_out r = cli_run("replay " MOONCAKE200 " --set engine.kv_cache_tokens=8000");
	assert_int_equal(r.status, 1);
	/* the pre-flight finding first, then what the run saw */
	const char *head = "!!!!!!!!!!!!!!!!!!!! WARNINGS !!!!!!!!!!!!!!!!!!!!\n"
			   "! Pre-flight: 111 of 200 calls (55.5%) need more KV cache than the 8000";
	assert_true(strncmp(r.out, head, strlen(head)) == 0);
	assert_non_null(strstr(r.out, "\n! 111 of 200 calls failed (55.5%)"));
	assert_true(strstr(r.out, "\n! 111 of 200 calls failed") < strstr(r.out, "agentcap run"));
	assert_non_null(strstr(r.out, "cover the 89 completed calls only"));
	assert_non_null(strstr(r.out, "Latency percentiles cover:               completed requests only"));
	assert_non_null(strstr(r.err, "the answer is no (exit status 1)"));
	cli_out_free(&r);

	r = cli_run("replay " MOONCAKE200 " --set engine.kv_cache_tokens=8000 --quiet --json -");
	assert_int_equal(r.status, 1);
	cJSON *j = cJSON_Parse(r.out);
	assert_non_null(j);
	const cJSON *w = cJSON_GetObjectItemCaseSensitive(j, "warnings");
	assert_true(cJSON_GetArraySize(w) >= 3);
	assert_string_equal(cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(w, 0), "code")->valuestring,
			    "calls_over_kv_cache");
	assert_string_equal(cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(w, 1), "code")->valuestring,
			    "failed_calls");
	assert_string_equal(cJSON_GetObjectItemCaseSensitive(j, "answer")->valuestring, "no");
	cJSON_Delete(j);
	cli_out_free(&r);
}

/* Exit status 1 for SLO attainment below slo.attainment (default 0.9), 0
 * when the target is met; predict exits 1 when batch x context does not fit. */
static void test_exit_status_is_the_answer(void **state)
{
	(void)state;
	/* one H100 for Mooncake's first 200 requests: 0% within the default SLOs */
	struct cli_out r = cli_run("replay " MOONCAKE200 " --quiet");
	assert_int_equal(r.status, 1);
	assert_non_null(strstr(r.err, "target 90.0%"));
	cli_out_free(&r);
	r = cli_run("replay " MOONCAKE200 " --quiet --set slo.attainment=0");
	assert_int_equal(r.status, 0);
	cli_out_free(&r);
	r = cli_run("replay " MOONCAKE200 " --quiet --set slo.ttft_ms=0 --set slo.tpot_ms=0");
	assert_int_equal(r.status, 0);
	cli_out_free(&r);
	r = cli_run("replay " FIX "/replay/two_sessions.jsonl --quiet");
	assert_int_equal(r.status, 0);
	assert_string_equal(r.err, "");
	cli_out_free(&r);
	r = cli_run("replay " MOONCAKE200 " --quiet --set slo.attainment=1.5");
	assert_int_equal(r.status, 2);
	cli_out_free(&r);

	r = cli_run("predict --hardware h100-sxm --model llama-3.1-8b --batch 256 --context 131072");
	assert_int_equal(r.status, 1);
	assert_non_null(strstr(r.out, "does NOT fit"));
	assert_non_null(strstr(r.err, "the answer is no"));
	cli_out_free(&r);
	r = cli_run("predict --hardware h100-sxm --model llama-3.1-8b --batch 256 --context 131072 --json -");
	assert_int_equal(r.status, 1);
	assert_non_null(strstr(r.out, "\"fits\": false"));
	cli_out_free(&r);
	r = cli_run("predict --hardware h100-sxm --model llama-3.1-8b --batch 8 --context 4096");
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "batch x context fits"));
	assert_non_null(strstr(r.out, "4096 tokens in chunks of 8192:"));
	cli_out_free(&r);
	/* the prefill chunk is the engine's: llama.cpp's 512-token physical batch */
	r = cli_run("predict --hardware rtx-4090 --model llama-3.1-8b --format q4_k_m --engine llama.cpp "
		    "--context 4096");
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "4096 tokens in chunks of 512:"));
	cli_out_free(&r);
}

/* predict --power-limit: the clock the limit allows, in the text and the
 * JSON; a limit the board cannot meet is bad input.  predict --pp: the
 * pipelined decode beside the one-batch step. */
static void test_predict_power_and_pipeline(void **state)
{
	(void)state;
	struct cli_out r = cli_run("predict --hardware rtx-3090 --model llama-2-7b --format "
				   "gguf-q4-0 --engine llama.cpp --context 512 --power-limit 250");
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "board power limit 250 W: core clock 84.0% of rated"));
	cli_out_free(&r);
	r = cli_run("predict --hardware rtx-3090 --model llama-2-7b --format gguf-q4-0 --engine "
		    "llama.cpp --context 512 --power-limit 250 --json -");
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "\"power_limit_w\": 250,"));
	assert_non_null(strstr(r.out, "\"clock_fraction\": 0.8395"));
	assert_non_null(strstr(r.out, "\"sustained_clock\": 1,"));
	cli_out_free(&r);
	/* the L40's 300 W does not feed its 142 SMs at 2,490 MHz in MMQ */
	r = cli_run("predict --hardware l40 --model llama-2-7b --format gguf-q4-0 --engine "
		    "llama.cpp --context 512 --explain");
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "issue-bound quantized matmuls: "));
	assert_null(strstr(r.out, "100.0% of the rated clock held"));
	cli_out_free(&r);
	r = cli_run("predict --hardware rtx-3090 --model llama-2-7b --power-limit 100");
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "expected more than 105 W"));
	cli_out_free(&r);
	r = cli_run("predict --hardware rtx-3090 --model llama-2-7b --power-limit lots");
	assert_int_equal(r.status, 2);
	cli_out_free(&r);
	r = cli_run("predict --hardware h100-sxm --model llama-3.1-8b --pp 8 --batch 1024 --context 1500");
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "decode pipelined, 8 micro-batches of 128 in flight over 8 stages"));
	cli_out_free(&r);
	/* --no-flash-attention: llama.cpp's attention without it, slower at
	 * 32K tokens; vLLM has no such figure and does not move */
	double pre[2][2];
	for (int e = 0; e < 2; e++)
		for (int k = 0; k < 2; k++) {
			char args[256];
			snprintf(args, sizeof(args), "predict --hardware rtx-pro-6000 --model gpt-oss-20b "
				 "--format mxfp4 --engine %s --context 32768 --chunk 2048%s --json -",
				 e ? "vllm" : "llama.cpp", k ? " --no-flash-attention" : "");
			r = cli_run(args);
			assert_int_equal(r.status, 0);
			cJSON *j = cJSON_Parse(r.out);
			assert_non_null(j);
			pre[e][k] = cJSON_GetObjectItem(j, "prefill_tok_s")->valuedouble;
			cJSON_Delete(j);
			cli_out_free(&r);
		}
	assert_true(pre[0][1] < 0.7 * pre[0][0]);
	assert_true(pre[1][1] == pre[1][0]);
	/* --engine-build: llama.cpp up to 6210 routes MoE tokens on the host,
	 * slower prefill; a later build is the current one; not a number: 2 */
	double b[3];
	static const char *const builds[3] = { "", " --engine-build 6210", " --engine-build 6316" };
	for (int k = 0; k < 3; k++) {
		char args[256];
		snprintf(args, sizeof(args), "predict --hardware rtx-pro-6000 --model gpt-oss-20b "
			 "--format gguf-mxfp4 --engine llama.cpp --context 2048 --chunk 2048%s --json -",
			 builds[k]);
		r = cli_run(args);
		assert_int_equal(r.status, 0);
		cJSON *j = cJSON_Parse(r.out);
		assert_non_null(j);
		b[k] = cJSON_GetObjectItem(j, "prefill_tok_s")->valuedouble;
		cJSON_Delete(j);
		cli_out_free(&r);
	}
	assert_true(b[1] < 0.8 * b[0]);
	assert_true(b[2] == b[0]);
	r = cli_run("predict --hardware rtx-pro-6000 --model gpt-oss-20b --engine llama.cpp "
		    "--engine-build 62x0");
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "--engine-build"));
	cli_out_free(&r);
}

/* "Time a step was running" near 100% is not a full GPU: a random workload
 * of 2000-token prompts at 4 req/s keeps a step running 99.8% of the time
 * with the batch and the KV cache almost empty.  The headroom figures say
 * so, and the table no longer calls the busy share "GPU busy". */
static void test_headroom_is_not_busy(void **state)
{
	(void)state;
	char path[] = "/tmp/agentcap-rand-XXXXXX";
	close(mkstemp(path));
	char args[512];
	snprintf(args, sizeof(args), "synth --workload random --input-len 2000 --output-len 300 "
		 "--num-prompts 1000 --request-rate 4 -o %s", path);
	struct cli_out r = cli_run(args);
	assert_int_equal(r.status, 0);
	cli_out_free(&r);
	snprintf(args, sizeof(args), "replay %s --json -", path);
	r = cli_run(args);
	assert_int_equal(r.status, 0);
	cJSON *j = cJSON_Parse(r.out);
	assert_non_null(j);
	assert_true(num(j, "gpu_busy_fraction") > 0.99);
	assert_true(num(j, "batch_occupancy") < 0.1);
	assert_true(num(j, "batch_seqs_mean") > 1.0);
	assert_true(num(j, "batch_seqs_max") <= 256);
	assert_true(num(j, "kv_use_mean") < 0.1);
	assert_true(num(j, "kv_use_peak") >= num(j, "kv_use_mean"));
	assert_true(num(j, "compute_fraction") > 0.01 && num(j, "compute_fraction") < 0.5);
	assert_true(num(j, "bandwidth_fraction") > 0.1 && num(j, "bandwidth_fraction") <= 1.0);
	assert_true(num(j, "compute_fraction_busy") >= num(j, "compute_fraction"));
	/* a run shorter than an hour is its own peak window */
	assert_int_equal(num(j, "peak_calls"), 1000);
	assert_true(num(j, "peak_window_s") < 3600);
	assert_true(num(j, "median_peak_ttft_ms") == num(j, "median_ttft_ms"));
	cJSON_Delete(j);
	cli_out_free(&r);
	snprintf(args, sizeof(args), "replay %s", path);
	r = cli_run(args);
	assert_null(strstr(r.out, "GPU busy"));
	assert_non_null(strstr(r.out, "Time a step was running (%):"));
	assert_non_null(strstr(r.out, "Mean batch (% of max_num_seqs):"));
	assert_non_null(strstr(r.out, "Peak Hour (whole run:"));
	cli_out_free(&r);
	unlink(path);
}

/* Pre-flight: a deployment that cannot run is an error before any
 * simulation (exit 2), one that runs badly is warned about before it. */
static void test_preflight(void **state)
{
	(void)state;
	const char *two = FIX "/replay/two_sessions.jsonl --quiet";
	char args[512];
	/* vLLM has no Apple GPU backend; llama.cpp has */
	snprintf(args, sizeof(args), "replay %s --set hardware=apple-m4-max-40c --set engine_profile=vllm",
		 two);
	struct cli_out r = cli_run(args);
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "engine_profile 'vllm' does not run on apple-m4-max-40c"));
	assert_non_null(strstr(r.err, "Engines that do: llama.cpp, ollama, mlx"));
	cli_out_free(&r);
	snprintf(args, sizeof(args), "replay %s --set hardware=apple-m4-max-40c "
		 "--set engine_profile=llama.cpp --set slo.attainment=0", two);
	r = cli_run(args);
	assert_int_equal(r.status, 0);
	cli_out_free(&r);
	/* TensorRT-LLM only on NVIDIA */
	snprintf(args, sizeof(args), "replay %s --set hardware=mi300x --set engine_profile=trtllm", two);
	r = cli_run(args);
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "does not run on mi300x"));
	cli_out_free(&r);
	/* a format the engine does not load */
	snprintf(args, sizeof(args), "replay %s --set engine_profile=llama.cpp --set weight_format=fp8", two);
	r = cli_run(args);
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "does not load weight format 'fp8'"));
	cli_out_free(&r);
	/* max_model_len past the model's context was accepted silently */
	snprintf(args, sizeof(args), "replay %s --set engine.max_model_len=262144", two);
	r = cli_run(args);
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "engine.max_model_len 262144 is beyond llama-3.1-8b's context "
				      "of 131072 tokens"));
	cli_out_free(&r);
	/* a format the hardware cannot compute in: FP8 on an A100 */
	snprintf(args, sizeof(args), "replay %s --set hardware=a100-sxm-80gb --set weight_format=fp8 "
		 "--json -", two);
	r = cli_run(args);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.err, "Weight format fp8 wants fp8 matmuls, which a100-sxm-80gb"));
	assert_non_null(strstr(r.out, "\"code\": \"format_compute\""));
	cli_out_free(&r);
	/* prompts longer than max_model_len and the model's context, before the run */
	r = cli_run("replay " MOONCAKE200 " --quiet --set engine.max_model_len=32768 --json -");
	assert_int_equal(r.status, 1);
	assert_non_null(strstr(r.err, "Pre-flight: 16 of 200 calls (8.0%) are longer than max_model_len "
				      "32768 (llama-3.1-8b's context is 131072 tokens; the longest call "
				      "has 121213)"));
	assert_non_null(strstr(r.err, "raise engine.max_model_len toward the model's context"));
	assert_non_null(strstr(r.err, "replay.context_policy=compact has the harness compact them"));
	assert_non_null(strstr(r.out, "\"code\": \"calls_over_max_model_len\""));
	cli_out_free(&r);
	/* under the reject policy they fail, and the run says so before and after */
	r = cli_run("replay " MOONCAKE200 " --quiet --set engine.max_model_len=32768 "
		    "--set replay.context_policy=reject");
	assert_int_equal(r.status, 1);
	assert_non_null(strstr(r.err, "the longest call has 121213): they will fail "
				      "(replay.context_policy=reject)"));
	assert_non_null(strstr(r.err, "16 of 200 calls failed"));
	cli_out_free(&r);
	r = cli_run("replay " MOONCAKE200 " --quiet --set model=qwen3-30b-a3b");
	assert_int_equal(r.status, 1);
	assert_non_null(strstr(r.err, "Pre-flight: 13 of 200 calls (6.5%) are longer than max_model_len "
				      "40960"));
	assert_non_null(strstr(r.err, "pick a model with a longer context"));
	cli_out_free(&r);
	/* no call fits: nothing to simulate */
	r = cli_run("replay " MOONCAKE200 " --quiet --set engine.kv_cache_tokens=100");
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "none of its 200 calls can be served"));
	cli_out_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_help),
		cmocka_unit_test(test_bad_line_names_place),
		cmocka_unit_test(test_truncated_gzip_is_an_error),
		cmocka_unit_test(test_unknown_key),
		cmocka_unit_test(test_deterministic_json),
		cmocka_unit_test(test_prefix_caching_and_capacity),
		cmocka_unit_test(test_json_to_bad_path),
		cmocka_unit_test(test_failures_are_loud),
		cmocka_unit_test(test_exit_status_is_the_answer),
		cmocka_unit_test(test_predict_power_and_pipeline),
		cmocka_unit_test(test_headroom_is_not_busy),
		cmocka_unit_test(test_preflight),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
