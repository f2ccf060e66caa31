/* SPDX-License-Identifier: Apache-2.0
 * End-to-end tests of `agentcap predict`, `agentcap fit` and `agentcap
 * validate` through the binary: help pages, exit codes (0, 1 when nothing
 * fits, 2 on bad input with path:line), JSON outputs, and the scenario keys
 * that reach the performance model through `agentcap replay`. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "tests/support/cli_run.h"

#include <cjson/cJSON.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define CALIBRATION AC_SRC_DIR "/models/calibration/measurements.csv"
#define MOONCAKE200 AC_SRC_DIR "/tests/fixtures/traces/mooncake_head200.jsonl"

static void test_help_pages(void **state)
{
	(void)state;
	const char *cmds[] = { "predict --help", "fit --help", "validate --help" };
	for (size_t i = 0; i < 3; i++) {
		struct cli_out r = cli_run(cmds[i]);
		assert_int_equal(r.status, 0);
		assert_non_null(strstr(r.out, "SYNOPSIS"));
		assert_non_null(strstr(r.out, "EXIT STATUS"));
		cli_out_free(&r);
	}
	struct cli_out r = cli_run("--help");
	assert_non_null(strstr(r.out, "predict"));
	assert_non_null(strstr(r.out, "fit"));
	assert_non_null(strstr(r.out, "validate"));
	cli_out_free(&r);
}

static void test_predict(void **state)
{
	(void)state;
	struct cli_out r = cli_run("predict --hardware h100-sxm --model llama-3.1-8b --batch 8 --context 4096");
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "decode, batch 8 at context 4096"));
	assert_non_null(strstr(r.out, "bound)"));
	assert_non_null(strstr(r.out, "aggregate"));
	assert_non_null(strstr(r.out, "prefill, 4096 tokens"));
	cli_out_free(&r);
	r = cli_run("predict --hardware rtx-pro-6000 --model gpt-oss-120b --format mxfp4 --engine "
		"llama.cpp --context 512 --json -");
	assert_int_equal(r.status, 0);
	cJSON *j = cJSON_Parse(r.out);
	assert_non_null(j);
	assert_string_equal(cJSON_GetObjectItem(j, "engine")->valuestring, "llama.cpp");
	assert_true(cJSON_GetObjectItem(j, "decode_tok_s")->valuedouble > 50);
	assert_true(cJSON_GetObjectItem(j, "decode_experts_touched")->valuedouble == 4);
	cJSON_Delete(j);
	cli_out_free(&r);
	r = cli_run("predict --hardware h100-sxm --model llama-3.1-70b --tp 4 --batch 64 --context 2000");
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "interconnect"));
	cli_out_free(&r);
	r = cli_run("predict --hardware h100-sxm --model nope");
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "unknown model 'nope'"));
	cli_out_free(&r);
	r = cli_run("predict --hardware h100-sxm --model llama-3.1-8b --batch zero");
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "--batch 'zero'"));
	cli_out_free(&r);
	r = cli_run("predict --model llama-3.1-8b");
	assert_int_equal(r.status, 2);
	cli_out_free(&r);
}

/* --explain: a 61-layer MoE on 8 GPUs at batch 1 is bound by its kernel
 * launches, an 8B model on one GPU at batch 256 by its roofline; --ep
 * charges the expert all-to-alls. */
static void test_predict_explain(void **state)
{
	(void)state;
	struct cli_out r = cli_run("predict --hardware h100-sxm --model deepseek-v3 --format int4-awq "
				   "--tp 8 --explain");
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "(launch bound)"));
	assert_non_null(strstr(r.out, "* kernel launches"));
	assert_non_null(strstr(r.out, "binding: kernel launches"));
	assert_non_null(strstr(r.out, "step = host + gpu"));
	cli_out_free(&r);
	r = cli_run("predict --hardware h100-sxm --model llama-3.1-8b --batch 256 --context 2048 "
		    "--explain");
	/* 256 x 2049 tokens are more than the 443K-token cache: the figures
	 * print and the answer is no */
	assert_int_equal(r.status, 1);
	assert_non_null(strstr(r.out, "* roofline"));
	assert_null(strstr(r.out, "binding: kernel launches"));
	cli_out_free(&r);
	r = cli_run("predict --hardware h100-sxm --model deepseek-v3 --format int4-awq --tp 8 "
		    "--engine sglang --explain");
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "max(host, gpu)"));
	cli_out_free(&r);
	r = cli_run("predict --hardware h100-sxm --model deepseek-v3 --format int4-awq --tp 8 --ep 8 "
		    "--batch 64 --explain --json -");
	assert_int_equal(r.status, 0);
	cJSON *j = cJSON_Parse(r.out);
	assert_non_null(j);
	assert_true(cJSON_GetObjectItem(j, "decode_alltoall_ms")->valuedouble > 0);
	assert_true(cJSON_GetObjectItem(j, "decode_imbalance")->valuedouble > 1);
	assert_true(cJSON_GetObjectItem(j, "decode_launch_floor_ms")->valuedouble > 8);
	cJSON_Delete(j);
	cli_out_free(&r);
	r = cli_run("predict --hardware h100-sxm --model deepseek-v3 --format int4-awq --tp 8 --ep 3");
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "expert_parallel_size 3"));
	cli_out_free(&r);
	r = cli_run("predict --hardware h100-sxm --model deepseek-v3 --tp 8 --ep x");
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "--ep 'x'"));
	cli_out_free(&r);
}

static void test_fit(void **state)
{
	(void)state;
	struct cli_out r = cli_run("fit --hardware dgx-spark");
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "Models that fit on dgx-spark"));
	assert_non_null(strstr(r.out, "gpt-oss-120b"));
	cli_out_free(&r);
	r = cli_run("fit --hardware rtx-pro-6000 --json -");
	assert_int_equal(r.status, 0);
	cJSON *j = cJSON_Parse(r.out);
	assert_non_null(j);
	bool glm = false;
	cJSON *row;
	cJSON_ArrayForEach(row, cJSON_GetObjectItem(j, "rows")) {
		if (strcmp(cJSON_GetObjectItem(row, "model")->valuestring, "glm-5.2") == 0) {
			glm = true;
			assert_string_equal(cJSON_GetObjectItem(row, "status")->valuestring, "offload");
			assert_true(cJSON_GetObjectItem(row, "host_ram_needed_gb")->valuedouble > 100);
		}
	}
	assert_true(glm);
	cJSON_Delete(j);
	cli_out_free(&r);
	r = cli_run("fit --model llama-3.1-70b");
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "cheapest first"));
	cli_out_free(&r);
	/* nothing fits: exit 1 */
	r = cli_run("fit --hardware rtx-5060-ti-16gb --memory 1G");
	assert_int_equal(r.status, 1);
	cli_out_free(&r);
	r = cli_run("fit --hardware rtx-4090 --model llama-2-7b");
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "exactly one of --hardware"));
	cli_out_free(&r);
	r = cli_run("fit --hardware rtx-4090 --memory lots");
	assert_int_equal(r.status, 2);
	cli_out_free(&r);
	/* the header says what --memory made of the machine */
	r = cli_run("fit --hardware h100-sxm --memory 40G");
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "40 GB per GPU (--memory; the catalogue's 80 GB)"));
	cli_out_free(&r);
	r = cli_run("fit --hardware h200 --prefer memory --json -");
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "\"prefer\": \"memory\""));
	cli_out_free(&r);
	r = cli_run("fit --hardware h200 --prefer fast");
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "--prefer 'fast': expected quality, speed or memory"));
	cli_out_free(&r);
}

static void test_validate(void **state)
{
	(void)state;
	struct cli_out r = cli_run("validate " CALIBRATION " --quiet --min-confidence medium");
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "decode_tok_s"));
	assert_non_null(strstr(r.out, "prefill_tok_s"));
	assert_non_null(strstr(r.out, "original n="));
	cli_out_free(&r);
	r = cli_run("validate " CALIBRATION " --min-confidence sure");
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "--min-confidence 'sure': expected low, medium or high"));
	cli_out_free(&r);
	char json[] = "/tmp/agentcap-validate-XXXXXX";
	close(mkstemp(json));
	char args[512];
	snprintf(args, sizeof(args), "validate " CALIBRATION " --json %s", json);
	r = cli_run(args);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "median APE%"));
	assert_non_null(strstr(r.out, "median orig%"));
	char *text = cli_slurp(json, NULL);
	cJSON *j = cJSON_Parse(text);
	assert_non_null(j);
	assert_true(cJSON_GetArraySize(cJSON_GetObjectItem(j, "rows")) > 80);
	assert_non_null(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "summary"), "per_family"));
	cJSON_Delete(j);
	free(text);
	unlink(json);
	cli_out_free(&r);
	/* bad input: path:line, exit 2 */
	char bad[] = "/tmp/agentcap-bad-XXXXXX";
	int fd = mkstemp(bad);
	const char *csv = "hardware,n_gpus,model,quant,engine,concurrency,input_tokens,"
			  "output_tokens,metric,value,unit\n"
			  "h100-sxm,1,llama-3.1-8b,bf16,vllm,1,0,128,decode_tok_s,100,tok/s\n"
			  "h100-sxm,1,llama-9,bf16,vllm,1,0,128,decode_tok_s,100,tok/s\n";
	assert_true(write(fd, csv, strlen(csv)) == (ssize_t)strlen(csv));
	close(fd);
	snprintf(args, sizeof(args), "validate %s", bad);
	r = cli_run(args);
	assert_int_equal(r.status, 2);
	char want[128];
	snprintf(want, sizeof(want), "%s:3: unknown model 'llama-9'", bad);
	assert_non_null(strstr(r.err, want));
	cli_out_free(&r);
	unlink(bad);
	r = cli_run("validate");
	assert_int_equal(r.status, 2);
	cli_out_free(&r);
}

/* fit-params: help, usage errors (exit 2), a fit of the calibration set
 * written as JSON with its commit, nothing written on bad input;
 * validate --cross-validate: its usage errors. */
static void test_fit_params(void **state)
{
	(void)state;
	struct cli_out r = cli_run("fit-params --help");
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "SYNOPSIS"));
	assert_non_null(strstr(r.out, "gsl_multifit_nlinear"));
	cli_out_free(&r);
	r = cli_run("--help");
	assert_non_null(strstr(r.out, "fit-params"));
	cli_out_free(&r);
	r = cli_run("fit-params " CALIBRATION " --prior -1");
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "--prior '-1': expected a number from 0 to 100"));
	cli_out_free(&r);
	r = cli_run("fit-params");
	assert_int_equal(r.status, 2);
	cli_out_free(&r);
	r = cli_run("validate " CALIBRATION " --cross-validate vendor");
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "expected family, hardware, model, engine, package, memory or format"));
	cli_out_free(&r);
	r = cli_run("validate " CALIBRATION " --cross-validate family --quiet");
	assert_int_equal(r.status, 2);
	cli_out_free(&r);
	r = cli_run("validate " CALIBRATION " --cross-validate family --json - --write-bands -");
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "cannot both write to standard output"));
	cli_out_free(&r);

	char json[] = "/tmp/agentcap-params-XXXXXX";
	close(mkstemp(json));
	char args[512];
	snprintf(args, sizeof(args), "fit-params " CALIBRATION " -o %s --commit deadbeef", json);
	r = cli_run(args);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "rows fitted"));
	assert_non_null(strstr(r.out, "median APE of the fitted rows"));
	/* the parameter table's columns line up, the longest field name
	 * (quant_matvec_bytes_per_core_clock) included: every line up to the
	 * blank one is as long as the header */
	size_t width = strcspn(r.out, "\n"), rows = 0;
	for (const char *l = r.out + width + 1; *l && *l != '\n'; l += strcspn(l, "\n") + 1, rows++)
		assert_int_equal(strcspn(l, "\n"), width);
	assert_true(rows > 10);
	assert_non_null(strstr(r.out, "quant_matvec_bytes_per_core_clock"));
	char *text = cli_slurp(json, NULL);
	cJSON *j = cJSON_Parse(text);
	assert_non_null(j);
	cJSON *m = cJSON_GetObjectItem(j, "measurements");
	assert_string_equal(cJSON_GetObjectItem(m, "commit")->valuestring, "deadbeef");
	assert_int_equal(strlen(cJSON_GetObjectItem(m, "crc32")->valuestring), 8);
	assert_true(cJSON_GetArraySize(cJSON_GetObjectItem(j, "parameters")) > 10);
	assert_true(cJSON_GetArraySize(cJSON_GetObjectItem(j, "residuals")) > 50);
	cJSON *sum = cJSON_GetObjectItem(j, "summary");
	assert_true(cJSON_GetObjectItem(sum, "cost_fitted")->valuedouble <
		    cJSON_GetObjectItem(sum, "cost_shipped")->valuedouble);
	cJSON_Delete(j);
	free(text);
	cli_out_free(&r);
	/* bad input: exit 2, the earlier file left as it was */
	char bad[] = "/tmp/agentcap-badfit-XXXXXX";
	int fd = mkstemp(bad);
	const char *csv = "hardware,n_gpus,model,quant,engine,concurrency,input_tokens,"
			  "output_tokens,metric,value,unit\n"
			  "h100-sxm,1,llama-9,bf16,vllm,1,0,128,decode_tok_s,100,tok/s\n";
	assert_true(write(fd, csv, strlen(csv)) == (ssize_t)strlen(csv));
	close(fd);
	size_t before = 0, after = 0;
	free(cli_slurp(json, &before));
	snprintf(args, sizeof(args), "fit-params %s -o %s", bad, json);
	r = cli_run(args);
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "unknown model 'llama-9'"));
	free(cli_slurp(json, &after));
	assert_int_equal(before, after);
	cli_out_free(&r);
	unlink(bad);
	unlink(json);
}

/* Judged on failed calls only: these runs check settings, not the SLO. */
#define NO_SLO " --set slo.attainment=0"

/* Figures of one `agentcap replay --json -` run of the 200-request
 * Mooncake fixture with the given --set arguments. */
struct replay_figures {
	double kv_capacity_tokens, median_ttft_ms, median_tpot_ms, duration_s;
};

static struct replay_figures replay_with(const char *sets)
{
	char args[1024];
	snprintf(args, sizeof(args), "replay " MOONCAKE200 " --quiet --json - %s", sets);
	struct cli_out r = cli_run(args);
	if (r.status != 0 && r.status != 1) /* 1: the answer is no, figures still out */
		fail_msg("agentcap %s: exit %d: %s", args, r.status, r.err);
	cJSON *j = cJSON_Parse(r.out);
	assert_non_null(j);
	struct replay_figures f = {
		.kv_capacity_tokens = cJSON_GetObjectItem(cJSON_GetObjectItem(j, "run"),
							  "kv_capacity_tokens")->valuedouble,
		.median_ttft_ms = cJSON_GetObjectItem(j, "median_ttft_ms")->valuedouble,
		.median_tpot_ms = cJSON_GetObjectItem(j, "median_tpot_ms")->valuedouble,
		.duration_s = cJSON_GetObjectItem(j, "duration_s")->valuedouble,
	};
	cJSON_Delete(j);
	cli_out_free(&r);
	return f;
}

/* The scenario keys reach the model through replay, each changing the
 * figure it should: pipeline stages add KV room (weights spread over more
 * GPUs) and a hop per step; experts left in host RAM add KV room and slow
 * every step; the host's RAM bandwidth and CPU peak slow the decode steps
 * that run offloaded experts on the CPU, and its link slows the prefill
 * chunks that stream them. */
/* A shape outside the calibration set's coverage says so in the report,
 * and its bands are wider than those of a covered one: a B200 (two dies;
 * the set has no package of several) against an H100. */
static void test_replay_extrapolation(void **state)
{
	(void)state;
	cJSON *j;
	const cJSON *x;
	struct cli_out a = cli_run("replay " MOONCAKE200 " --set hardware=b200" NO_SLO);
	struct cli_out b = cli_run("replay " MOONCAKE200 " --set hardware=h100-sxm" NO_SLO);
	assert_non_null(strstr(a.out, "Model extrapolates to:                   package multi-die"));
	const char *eb = strstr(b.out, "Model extrapolates to:");
	assert_true(eb == NULL || strstr(eb, "multi-die") == NULL);
	cli_out_free(&a);
	cli_out_free(&b);
	a = cli_run("replay " MOONCAKE200 " --quiet --json - --set hardware=b200" NO_SLO);
	j = cJSON_Parse(a.out);
	assert_non_null(j);
	const cJSON *mb = cJSON_GetObjectItem(cJSON_GetObjectItem(j, "run"), "model_bands");
	x = cJSON_GetObjectItem(mb, "extrapolation");
	assert_true(cJSON_IsString(x) && strstr(x->valuestring, "package multi-die"));
	cJSON_Delete(j);
	cli_out_free(&a);
	/* predict says it too, and widens its bands */
	a = cli_run("predict --hardware b200 --model llama-3.1-8b --format fp8 --engine trtllm");
	b = cli_run("predict --hardware h100-sxm --model llama-3.1-8b --format fp8 --engine trtllm");
	assert_int_equal(a.status, 0);
	assert_non_null(strstr(a.out, "the calibration set has no row of: package multi-die"));
	assert_null(strstr(b.out, "the calibration set has no row of"));
	cli_out_free(&a);
	cli_out_free(&b);
	/* and size, per option, in its table and its JSON */
	a = cli_run("size --engineers 3 --profile default --hardware h100-sxm,b200 "
		    "--set weight_format=fp8 --set engine_profile=trtllm");
	assert_non_null(strstr(a.out, "\nb200: the model extrapolates to package multi-die "));
	assert_null(strstr(a.out, "h100-sxm: the model extrapolates"));
	cli_out_free(&a);
	a = cli_run("size --engineers 3 --profile default --hardware h100-sxm,b200 "
		    "--set weight_format=fp8 --set engine_profile=trtllm --json -");
	j = cJSON_Parse(a.out);
	assert_non_null(j);
	const cJSON *opts = cJSON_GetObjectItem(j, "options");
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(cJSON_GetArrayItem(opts, 0), "extrapolation")));
	x = cJSON_GetObjectItem(cJSON_GetArrayItem(opts, 1), "extrapolation");
	assert_true(cJSON_IsString(x) && strcmp(x->valuestring, "package multi-die") == 0);
	cJSON_Delete(j);
	cli_out_free(&a);
}

static void test_replay_scenario_keys(void **state)
{
	(void)state;
	struct cli_out a = cli_run("replay " MOONCAKE200 " --quiet --json - --set engine_profile=llama.cpp" NO_SLO);
	struct cli_out b = cli_run("replay " MOONCAKE200 " --quiet --json - --set engine_profile=vllm" NO_SLO);
	assert_int_equal(a.status, 0);
	assert_int_equal(b.status, 0);
	assert_true(strcmp(a.out, b.out) != 0);
	cli_out_free(&a);
	cli_out_free(&b);
	a = cli_run("replay " MOONCAKE200 " --quiet --set engine_profile=deepspeed");
	assert_int_equal(a.status, 2);
	assert_non_null(strstr(a.err, "unknown engine 'deepspeed'"));
	cli_out_free(&a);

	/* pipeline_parallel_size: the memory model (KV capacity) and the step time */
#define L70 "--set model=llama-3.1-70b --set tensor_parallel_size=4 "
	struct replay_figures pp1 = replay_with(L70 "--set pipeline_parallel_size=1");
	struct replay_figures pp2 = replay_with(L70 "--set pipeline_parallel_size=2");
	assert_true(pp2.kv_capacity_tokens > 2 * pp1.kv_capacity_tokens);
	pp1 = replay_with(L70 "--set pipeline_parallel_size=1 --set engine.kv_cache_tokens=300000");
	pp2 = replay_with(L70 "--set pipeline_parallel_size=2 --set engine.kv_cache_tokens=300000");
	assert_true(pp2.median_tpot_ms > pp1.median_tpot_ms);
	assert_true(pp2.duration_s > pp1.duration_s);

	/* offload.gpu_expert_fraction: KV capacity, then step time at a fixed KV */
#define MOE "--set model=qwen3-30b-a3b "
	struct replay_figures all = replay_with(MOE);
	struct replay_figures half = replay_with(MOE "--set offload.gpu_expert_fraction=0.5");
	assert_true(half.kv_capacity_tokens > 2 * all.kv_capacity_tokens);
#define MOE_KV MOE "--set engine.kv_cache_tokens=100000 "
#define HALF MOE_KV "--set offload.gpu_expert_fraction=0.5 "
	all = replay_with(MOE_KV);
	half = replay_with(HALF);
	assert_true(half.median_tpot_ms > 2 * all.median_tpot_ms);

	/* host.*: each slows what it should once experts live in host RAM */
	struct replay_figures bw = replay_with(HALF "--set host.mem_bw_gbs=100");
	assert_true(bw.median_tpot_ms > 1.5 * half.median_tpot_ms);
	struct replay_figures cpu = replay_with(HALF "--set host.tflops=0.2");
	assert_true(cpu.median_tpot_ms > 1.5 * half.median_tpot_ms);
	struct replay_figures link = replay_with(HALF "--set host.link_gbs=8");
	assert_true(link.median_ttft_ms > 1.5 * half.median_ttft_ms);
	/* the defaults are what an unset key means */
	struct replay_figures dflt = replay_with(HALF "--set host.mem_bw_gbs=0 --set host.tflops=0");
	assert_true(dflt.median_tpot_ms == half.median_tpot_ms);
#undef HALF
#undef MOE_KV
#undef MOE
#undef L70

	a = cli_run("replay " MOONCAKE200 " --quiet --set offload.gpu_expert_fraction=2");
	assert_int_equal(a.status, 2);
	assert_non_null(strstr(a.err, "offload.gpu_expert_fraction: expected a number in [0, 1]"));
	cli_out_free(&a);
}

/* What the scenario leaves unset follows the hardware and the engine
 * version: a multi-GPU system runs over all its GPUs, a Mac runs the
 * llama.cpp profile, vLLM's batch limit follows the GPU's memory. */
static void test_replay_hardware_defaults(void **state)
{
	(void)state;
	struct cli_out a = cli_run("replay " MOONCAKE200 " --quiet --json - --set hardware=hgx-h100-8"
				   " --set model=llama-3.1-70b" NO_SLO);
	assert_int_equal(a.status, 0);
	assert_non_null(strstr(a.out, "\"tensor_parallel_size\": 8,"));
	assert_non_null(strstr(a.out, "\"pipeline_parallel_size\": 1,"));
	assert_non_null(strstr(a.out, "\"engine_profile\": \"vllm\""));
	assert_non_null(strstr(a.out, "\"max_num_seqs\": 1024,"));
	assert_non_null(strstr(a.out, "\"reserve_full_prompt\": true"));
	cli_out_free(&a);
	a = cli_run("replay " MOONCAKE200 " --quiet --json - --set hardware=mac-studio-m5-ultra-256gb" NO_SLO);
	assert_int_equal(a.status, 0);
	assert_non_null(strstr(a.out, "\"engine_profile\": \"llama.cpp\""));
	assert_non_null(strstr(a.out, "\"tensor_parallel_size\": 1,"));
	cli_out_free(&a);
	a = cli_run("replay " MOONCAKE200 " --quiet --json - --set hardware=a100-sxm-80gb" NO_SLO);
	assert_int_equal(a.status, 0);
	assert_non_null(strstr(a.out, "\"max_num_seqs\": 256,"));
	cli_out_free(&a);
	/* set explicitly, they win; the table names what was used */
	a = cli_run("replay " MOONCAKE200 " --set hardware=hgx-h100-8 --set model=llama-3.1-70b"
		    " --set tensor_parallel_size=4 --set engine.max_num_seqs=64"
		    " --set engine.reserve_full_prompt=false" NO_SLO);
	assert_int_equal(a.status, 0);
	assert_non_null(strstr(a.out, "Tensor parallel size:                    4\n"));
	assert_non_null(strstr(a.out, "Pipeline parallel size:                  2\n"));
	assert_non_null(strstr(a.out, "Max num seqs:                            64\n"));
	assert_non_null(strstr(a.out, "Admission:                               first chunk\n"));
	assert_non_null(strstr(a.out, "Engine profile:                          vllm\n"));
	assert_non_null(strstr(a.out, "Max model len:                           131072\n"));
	assert_non_null(strstr(a.out, "GPU memory utilization:                  0.90\n"));
	cli_out_free(&a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_help_pages),
		cmocka_unit_test(test_predict),
		cmocka_unit_test(test_predict_explain),
		cmocka_unit_test(test_fit),
		cmocka_unit_test(test_validate),
		cmocka_unit_test(test_fit_params),
		cmocka_unit_test(test_replay_scenario_keys),
		cmocka_unit_test(test_replay_extrapolation),
		cmocka_unit_test(test_replay_hardware_defaults),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
