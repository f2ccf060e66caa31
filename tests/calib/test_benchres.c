/* SPDX-License-Identifier: Apache-2.0
 * benchres: each benchmark format to measurement rows (table-driven), what
 * is kept out and why, and the errors naming the file. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/catalog.h"
#include "models/csvread.h"
#include "calib/benchres.h"

static struct catalog *cat;

static int setup(void **state)
{
	(void)state;
	struct diag d;
	diag_init(&d);
	return catalog_load(&cat, NULL, &d);
}

static int teardown(void **state)
{
	(void)state;
	catalog_free(cat);
	return 0;
}

/* Read text; on success the rows as a table (released by the caller). */
static int read_rows(const char *name, const char *text, const struct benchres_given *g,
		     struct benchres *b, struct csvread *t, struct diag *d)
{
	benchres_init(b);
	diag_init(d);
	int rc = benchres_read_text(b, cat, name, text, strlen(text), g, d);
	if (rc)
		return rc;
	struct diag cd;
	diag_init(&cd);
	assert_int_equal(csvread_parse(t, name, b->csv, b->len, &cd), 0);
	return 0;
}

/* A llama-bench JSON text that must read, with nothing given, into n rows. */
static void read_llama_bench(const char *text, size_t n, struct benchres *b, struct csvread *t)
{
	struct diag d;
	struct benchres_given g = { 0 };
	if (read_rows("lb.json", text, &g, b, t, &d))
		fail_msg("%s", d.msg);
	assert_int_equal(b->n_rows, n);
}

static const char *cell(const struct csvread *t, size_t r, const char *col)
{
	return csvread_cell(t, r, csvread_col(t, col));
}

static void test_llama_bench_csv(void **state)
{
	(void)state;
	const char *text =
		"build_commit,gpu_info,backends,model_filename,model_type,n_ubatch,n_gpu_layers,"
		"n_prompt,n_gen,n_depth,avg_ts\n"
		"\"8cf427ff\",\"NVIDIA GeForce RTX 4090\",\"CUDA\",\"m/Qwen2.5-7B-Instruct-Q4_K_M.gguf\","
		"\"qwen2 7B Q4_K - Medium\",\"512\",\"-1\",\"512\",\"0\",\"0\",\"7285.6\"\n"
		"\"8cf427ff\",\"NVIDIA GeForce RTX 4090\",\"CUDA\",\"m/Qwen2.5-7B-Instruct-Q4_K_M.gguf\","
		"\"qwen2 7B Q4_K - Medium\",\"512\",\"-1\",\"0\",\"128\",\"4096\",\"119.9\"\n"
		"\"8cf427ff\",\"NVIDIA GeForce RTX 4090\",\"CUDA\",\"m/Qwen2.5-7B-Instruct-Q4_K_M.gguf\","
		"\"qwen2 7B Q4_K - Medium\",\"512\",\"-1\",\"512\",\"128\",\"0\",\"400\"\n";
	struct benchres b;
	struct csvread t;
	struct diag d;
	struct benchres_given g = { 0 };
	/* the model comes from the file name (Qwen2.5-7B-Instruct is an alias) */
	assert_int_equal(read_rows("lb.csv", text, &g, &b, &t, &d), 0);
	assert_int_equal(b.n_rows, 2);
	assert_int_equal(b.inputs[0].kind, BENCHRES_LLAMA_BENCH);
	assert_string_equal(cell(&t, 0, "hardware"), "rtx-4090");
	assert_string_equal(cell(&t, 0, "model"), "qwen2.5-7b");
	assert_string_equal(cell(&t, 0, "quant"), "gguf-q4-k-m");
	assert_string_equal(cell(&t, 0, "metric"), "prefill_tok_s");
	assert_string_equal(cell(&t, 0, "input_tokens"), "512");
	assert_string_equal(cell(&t, 1, "metric"), "decode_tok_s");
	assert_string_equal(cell(&t, 1, "input_tokens"), "4096"); /* the depth */
	assert_string_equal(cell(&t, 1, "output_tokens"), "128");
	assert_non_null(strstr(cell(&t, 0, "notes"), "-ub 512"));
	/* no flash_attn column: a build before flash attention */
	assert_non_null(strstr(cell(&t, 0, "notes"), "-fa 0"));
	/* the -pg test is kept out with the reason */
	assert_int_equal(b.n_skipped_total, 1);
	assert_non_null(strstr(b.skipped[0], "lb.csv: result 3: a prompt-and-generation test"));
	csvread_release(&t);
	benchres_release(&b);
}

/* llama-bench's flash_attn reaches the rows as -fa 1 or -fa 0, which
 * validate reads (true, 1 and "auto" on; false, 0 and absent off). */
static void test_llama_bench_flash_attn(void **state)
{
	(void)state;
	static const struct {
		const char *fa;
		const char *want;
	} cases[] = {
		{ ", \"flash_attn\": true", "-fa 1" },  { ", \"flash_attn\": 1", "-fa 1" },
		{ ", \"flash_attn\": \"auto\"", "-fa 1" }, { ", \"flash_attn\": false", "-fa 0" },
		{ ", \"flash_attn\": 0", "-fa 0" },     { "", "-fa 0" },
	};
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		char text[1024];
		snprintf(text, sizeof(text),
			 "[{\"build_commit\": \"a094f38\", \"gpu_info\": \"NVIDIA GeForce RTX "
			 "4090\", \"backends\": \"CUDA\", \"model_filename\": "
			 "\"m/Qwen2.5-7B-Instruct-Q4_K_M.gguf\", \"model_type\": \"qwen2 7B Q4_K - "
			 "Medium\", \"n_ubatch\": 2048, "
			 "\"n_prompt\": 2048, \"n_gen\": 0, \"avg_ts\": 9000%s}]",
			 cases[k].fa);
		struct benchres b;
		struct csvread t;
		read_llama_bench(text, 1, &b, &t);
		if (!strstr(cell(&t, 0, "notes"), cases[k].want))
			fail_msg("flash_attn '%s': notes '%s', want '%s'", cases[k].fa,
				 cell(&t, 0, "notes"), cases[k].want);
		csvread_release(&t);
		benchres_release(&b);
	}
}

/* llama-bench's build_number reaches the rows as "build <commit> (<N>)",
 * which validate reads (a build before pull 15525 routes MoE on the host);
 * a GGUF gpt-oss is gguf-mxfp4. */
static void test_llama_bench_build(void **state)
{
	(void)state;
	const char *text =
		"[{\"build_commit\": \"a094f38\", \"build_number\": 6210, \"gpu_info\": \"NVIDIA "
		"GeForce RTX 4090\", \"backends\": \"CUDA\", \"model_filename\": "
		"\"m/gpt-oss-20b-mxfp4.gguf\", \"model_type\": \"gpt-oss 20B MXFP4 MoE\", "
		"\"n_ubatch\": 2048, \"n_prompt\": 2048, \"n_gen\": 0, \"avg_ts\": 8022.33, "
		"\"flash_attn\": true},"
		" {\"build_commit\": \"a094f38\", \"gpu_info\": \"NVIDIA GeForce RTX 4090\", "
		"\"backends\": \"CUDA\", \"model_filename\": \"m/gpt-oss-20b-mxfp4.gguf\", "
		"\"model_type\": \"gpt-oss 20B MXFP4 MoE\", \"n_ubatch\": 2048, \"n_prompt\": 0, "
		"\"n_gen\": 128, \"avg_ts\": 222, \"flash_attn\": true}]";
	struct benchres b;
	struct csvread t;
	read_llama_bench(text, 2, &b, &t);
	assert_string_equal(cell(&t, 0, "model"), "gpt-oss-20b");
	assert_string_equal(cell(&t, 0, "quant"), "gguf-mxfp4");
	assert_non_null(strstr(cell(&t, 0, "notes"), "llama.cpp build a094f38 (6210) (CUDA)"));
	/* no build_number: the commit alone, which names no build */
	assert_null(strstr(cell(&t, 1, "notes"), "build a094f38"));
	assert_non_null(strstr(cell(&t, 1, "notes"), "llama.cpp a094f38 (CUDA)"));
	csvread_release(&t);
	benchres_release(&b);
}

static void test_sglang_jsonl(void **state)
{
	(void)state;
	const char *text =
		"{\"backend\": \"sglang\", \"dataset_name\": \"random\", \"request_rate\": "
		"Infinity, \"max_concurrency\": 16, \"random_input_len\": 1024, "
		"\"random_output_len\": 1024, \"completed\": 64, \"total_input_tokens\": 65536, "
		"\"total_output_tokens\": 65536, \"output_throughput\": 2200.5, "
		"\"median_ttft_ms\": 80.5, \"mean_tpot_ms\": 7.1}\n"
		"\n"
		"{\"backend\": \"sglang\", \"dataset_name\": \"random\", \"request_rate\": 4, "
		"\"max_concurrency\": null, \"random_input_len\": 1024, \"random_output_len\": 1024, "
		"\"completed\": 64, \"total_input_tokens\": 65536, \"total_output_tokens\": 65536, "
		"\"output_throughput\": 900}\n";
	struct benchres b;
	struct csvread t;
	struct diag d;
	struct benchres_given g = { .hardware = "h100-sxm", .model = "llama-3.1-8b" };
	/* Infinity is not JSON: the line is an error naming file:line:col */
	assert_int_equal(read_rows("sg.jsonl", text, &g, &b, &t, &d), DIAG_EINPUT);
	assert_non_null(strstr(d.msg, "sg.jsonl:1:"));
	benchres_release(&b);
	char *fixed = malloc(strlen(text) + 1);
	assert_non_null(fixed);
	strcpy(fixed, text);
	char *inf = strstr(fixed, "Infinity");
	memcpy(inf, "\"inf\"   ", 8);
	assert_int_equal(read_rows("sg.jsonl", fixed, &g, &b, &t, &d), 0);
	assert_int_equal(b.inputs[0].kind, BENCHRES_SGLANG_SERVE);
	assert_int_equal(b.n_rows, 3); /* throughput, TTFT, TPOT of the first run */
	assert_string_equal(cell(&t, 0, "metric"), "output_throughput_tok_s");
	assert_string_equal(cell(&t, 0, "concurrency"), "16");
	assert_string_equal(cell(&t, 0, "engine"), "sglang");
	assert_string_equal(cell(&t, 2, "metric"), "tpot_ms");
	assert_string_equal(cell(&t, 2, "value"), "7.1");
	assert_int_equal(b.inputs[0].requests_per_client, 4);
	/* the open-loop run is kept out */
	assert_int_equal(b.n_skipped_total, 1);
	assert_non_null(strstr(b.skipped[0], "an open-loop run"));
	csvread_release(&t);
	benchres_release(&b);
	free(fixed);
}

static void test_vllm_lengths(void **state)
{
	(void)state;
	const char *text = "{\"model_id\": \"meta-llama/Llama-3.1-8B-Instruct\", \"num_prompts\": "
			   "4, \"request_rate\": \"inf\", \"max_concurrency\": 2, \"completed\": 4, "
			   "\"total_input_tokens\": 400, \"total_output_tokens\": 40, "
			   "\"input_lens\": [90, 110, 95, 105], \"output_lens\": [10, 10, 12, 8], "
			   "\"output_throughput\": 50.5, \"median_ttft_ms\": 20, "
			   "\"median_tpot_ms\": 9}";
	struct benchres b;
	struct csvread t;
	struct diag d;
	struct benchres_given g = { .hardware = "H100 SXM", .n_gpus = 1 };
	int rc = read_rows("v.json", text, &g, &b, &t, &d);
	if (rc)
		fail_msg("%s", d.msg);
	assert_int_equal(b.inputs[0].kind, BENCHRES_VLLM_SERVE);
	assert_string_equal(cell(&t, 0, "model"), "llama-3.1-8b");
	assert_string_equal(cell(&t, 0, "input_tokens"), "100");
	assert_string_equal(cell(&t, 0, "output_tokens"), "10");
	assert_non_null(strstr(cell(&t, 0, "notes"), "input_lens"));
	assert_int_equal(b.inputs[0].requests_per_client, 2);
	csvread_release(&t);
	benchres_release(&b);
}

#define LB "[{\"gpu_info\": \"NVIDIA GeForce RTX 4090\", \"model_type\": \"llama 8B Q4_0\", "
#define LB_PP LB "\"n_prompt\": 512, \"n_gen\": 0, "
#define VL "{\"model_id\": \"meta-llama/Llama-3.1-8B-Instruct\", \"num_prompts\": 8, " \
	   "\"max_concurrency\": 2, \"completed\": 8, \"total_input_tokens\": 800, " \
	   "\"total_output_tokens\": 80, \"median_tpot_ms\": 9, "
#define SG "{\"backend\": \"sglang\", \"dataset_name\": \"random\", \"request_rate\": \"inf\", " \
	   "\"completed\": 8, \"total_input_tokens\": 800, \"total_output_tokens\": 80, "

/* Impossible measurements are input errors naming the file, the result's
 * place (and line where the format has lines), the field as the tool wrote
 * it, the value and the range expected -- never a column of the rows they
 * would have become. */
static void test_implausible(void **state)
{
	(void)state;
	static const struct benchres_given lb = { .model = "llama-3-8b" };
	static const struct benchres_given sv = { .hardware = "h100-sxm" };
	static const struct benchres_given sg = { .hardware = "h100-sxm",
						  .model = "llama-3.1-8b" };
	static const struct {
		const char *text;
		const struct benchres_given *g;
		const char *msg;
	} cases[] = {
		/* llama-bench JSON: throughputs */
		{ LB_PP "\"avg_ts\": 1e-300}]", &lb, "f:1: result 1: avg_ts 1e-300 is not a plausible "
		  "measurement (expected tokens/s within [0.001, 1e+07])" },
		{ LB_PP "\"avg_ts\": 1e308}]", &lb, "f:1: result 1: avg_ts 1e+308 is not a plausible "
		  "measurement (expected tokens/s within [0.001, 1e+07])" },
		{ LB_PP "\"avg_ts\": -7000}]", &lb, "f:1: result 1: avg_ts -7000 is not a plausible" },
		{ LB_PP "\"avg_ts\": \"nan\"}]", &lb, "f:1: result 1: avg_ts 'nan' is not a number" },
		{ LB_PP "\"avg_ts\": null}]", &lb, "f:1: result 1: no avg_ts (expected tokens/s" },
		/* token counts, the context of the model */
		{ LB "\"n_prompt\": 1e9, \"n_gen\": 0, \"avg_ts\": 7000}]", &lb,
		  "f:1: result 1: n_depth 0 + n_prompt 1000000000 + n_gen 0 tokens is beyond the context "
		  "of llama-3-8b (expected at most 8192 tokens in all)" },
		{ LB "\"n_prompt\": 0, \"n_gen\": 512, \"n_depth\": 7936, \"avg_ts\": 100}]", &lb,
		  "f:1: result 1: n_depth 7936 + n_prompt 0 + n_gen 512 tokens is beyond the context of "
		  "llama-3-8b (expected at most 8192" },
		{ LB "\"n_prompt\": -512, \"n_gen\": 0, \"avg_ts\": 7000}]", &lb,
		  "f:1: result 1: n_prompt -512 is not a plausible prompt length in tokens (expected a "
		  "whole number, at least 0)" },
		{ LB "\"n_prompt\": 512.5, \"n_gen\": 0, \"avg_ts\": 7000}]", &lb,
		  "f:1: result 1: n_prompt 512.5 is not a plausible prompt length" },
		{ LB "\"n_prompt\": 512, \"avg_ts\": 7000}]", &lb,
		  "f:1: result 1: no n_gen (expected the generation length in tokens, a whole number" },
		{ LB "\"n_prompt\": 512, \"n_gen\": \"none\", \"avg_ts\": 7000}]", &lb,
		  "f:1: result 1: n_gen 'none' is not a number (expected a number" },
		{ LB_PP "\"n_ubatch\": 0, \"avg_ts\": 7000}]", &lb, "f:1: result 1: n_ubatch 0 is not "
		  "a plausible micro-batch in tokens (expected a whole number from 1 to 16777216)" },
		/* the second result of a JSON array, of JSON Lines, of a CSV */
		{ LB_PP "\"avg_ts\": 7000}, {\"n_prompt\": 0, \"n_gen\": 128, \"avg_ts\": 1e-300}]",
		  &lb, "f:1: result 2: avg_ts 1e-300 is not a plausible" },
		{ "{\"n_prompt\": 512, \"n_gen\": 0, \"avg_ts\": 7000, \"model_type\": \"llama 8B "
		  "Q4_0\", \"gpu_info\": \"RTX 4090\"}\n\n{\"n_prompt\": 1e9, \"n_gen\": 0, "
		  "\"avg_ts\": 7000, \"model_type\": \"llama 8B Q4_0\", \"gpu_info\": \"RTX 4090\"}\n",
		  &lb, "f:3: result 2: n_depth 0 + n_prompt 1000000000 + n_gen 0 tokens is beyond" },
		{ "gpu_info,model_type,n_prompt,n_gen,avg_ts\nRTX 4090,llama 8B Q4_0,512,0,7000\n"
		  "RTX 4090,llama 8B Q4_0,0,128,1e308\n", &lb,
		  "f:3: result 2: avg_ts 1e+308 is not a plausible measurement" },
		/* a pretty-printed array: the line its result starts on, strings holding
		 * brackets, commas and quotes read as strings */
		{ "[\n  {\"model_type\": \"llama 8B Q4_0\", \"gpu_info\": \"RTX 4090\",\n"
		  "   \"backends\": \"CUDA, [x] {y} \\\"z\\\"\", \"n_prompt\": 512, \"n_gen\": 0,\n"
		  "   \"avg_ts\": 7000},\n  {\"model_type\": \"llama 8B Q4_0\", \"gpu_info\": "
		  "\"RTX 4090\", \"n_prompt\": 0,\n   \"n_gen\": 128, \"avg_ts\": 1e-300}\n]\n", &lb,
		  "f:5: result 2: avg_ts 1e-300 is not a plausible" },
		/* a kept-out test is still a measurement */
		{ LB "\"n_prompt\": 512, \"n_gen\": 128, \"avg_ts\": 1e-300}]", &lb,
		  "f:1: result 1: avg_ts 1e-300 is not a plausible" },
		/* vllm bench serve */
		{ VL "\"output_throughput\": 50, \"median_ttft_ms\": 1e308}", &sv,
		  "f: result 1: median_ttft_ms 1e+308 is not a plausible measurement (expected ms (or "
		  "0: not measured) within [0.0001, 1e+07])" },
		{ VL "\"output_throughput\": 50, \"median_ttft_ms\": -20}", &sv,
		  "f: result 1: median_ttft_ms -20 is not a plausible measurement" },
		{ VL "\"output_throughput\": 1e308, \"median_ttft_ms\": 20}", &sv,
		  "f: result 1: output_throughput 1e+308 is not a plausible measurement (expected "
		  "tokens/s within [0.001, 1e+07])" },
		{ VL "\"output_throughput\": 0}", &sv,
		  "f: result 1: output_throughput 0 is not a plausible measurement" },
		{ "{\"model_id\": \"meta-llama/Llama-3.1-8B-Instruct\", \"max_concurrency\": 1e12, "
		  "\"completed\": 8, \"total_input_tokens\": 800, \"total_output_tokens\": 80, "
		  "\"output_throughput\": 50}", &sv, "f: result 1: max_concurrency 1000000000000 is "
		  "not a plausible number of clients (expected a whole number from 1 to 16384)" },
		{ "{\"model_id\": \"meta-llama/Llama-3.1-8B-Instruct\", \"max_concurrency\": 0, "
		  "\"completed\": 8, \"total_input_tokens\": 800, \"total_output_tokens\": 80, "
		  "\"output_throughput\": 50}", &sv, "f: result 1: max_concurrency 0 is not a "
		  "plausible number of clients" },
		{ "{\"model_id\": \"meta-llama/Llama-3.1-8B-Instruct\", \"completed\": 1e9, "
		  "\"total_input_tokens\": 800, \"total_output_tokens\": 80, "
		  "\"output_throughput\": 50}", &sv, "f: result 1: completed 1000000000 is not a "
		  "plausible number of requests (expected a whole number from 0 to 1000000)" },
		{ "{\"model_id\": \"meta-llama/Llama-3.1-8B-Instruct\", \"completed\": 2, "
		  "\"total_input_tokens\": 400000, \"total_output_tokens\": 20, "
		  "\"output_throughput\": 50}", &sv, "f: result 1: a mean request of 200000 prompt "
		  "and 10 output tokens (total_input_tokens, total_output_tokens and completed) is "
		  "beyond the context of llama-3.1-8b (expected at most 131072 tokens in all)" },
		{ "{\"model_id\": \"meta-llama/Llama-3.1-8B-Instruct\", \"completed\": 2, "
		  "\"total_input_tokens\": 40, \"total_output_tokens\": 20, \"input_lens\": [200000, "
		  "200000], \"output_lens\": [10, 10], \"output_throughput\": 50}", &sv,
		  "(the means of input_lens and output_lens) is beyond the context of llama-3.1-8b" },
		{ "{\"model_id\": \"acme/unknown-model\", \"completed\": 2, \"total_input_tokens\": "
		  "40, \"total_output_tokens\": 20, \"output_throughput\": 50}", &sv,
		  "f: model_id 'acme/unknown-model' is not a catalogue model (expected --model ID" },
		/* SGLang JSON Lines: the line and the field it used */
		{ SG "\"max_concurrency\": 2, \"output_throughput\": 50, \"median_tpot_ms\": 9}\n"
		  SG "\"max_concurrency\": 2, \"output_throughput\": 50, \"mean_tpot_ms\": 1e-300}\n",
		  &sg, "f:2: result 2: mean_tpot_ms 1e-300 is not a plausible measurement" },
		{ SG "\"max_concurrency\": 2, \"output_throughput\": 50, \"server_info\": "
		  "{\"model_path\": \"acme/unknown-model\"}}\n", &sv,
		  "f: server_info.model_path 'acme/unknown-model' is not a catalogue model" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct benchres b;
		benchres_init(&b);
		struct diag d;
		diag_init(&d);
		int rc = benchres_read_text(&b, cat, "f", cases[i].text, strlen(cases[i].text),
					    cases[i].g, &d);
		if (rc != DIAG_EINPUT || !strstr(d.msg, cases[i].msg))
			fail_msg("case %zu: rc %d, '%s' (expected '%s')", i, rc, d.msg, cases[i].msg);
		assert_int_equal(b.n_rows, 0);
		benchres_release(&b);
	}
}

/* What is possible reads: a serving run's latency of 0 (SGLang's "not
 * measured") gives no row, a test filling the whole context is kept. */
static void test_plausible_edges(void **state)
{
	(void)state;
	struct benchres b;
	struct csvread t;
	struct diag d;
	struct benchres_given sg = { .hardware = "h100-sxm", .model = "llama-3.1-8b" };
	if (read_rows("f", SG "\"max_concurrency\": 2, \"output_throughput\": 50, "
		      "\"median_ttft_ms\": 0, \"median_tpot_ms\": 9}\n", &sg, &b, &t, &d))
		fail_msg("%s", d.msg);
	assert_int_equal(b.n_rows, 2);
	assert_string_equal(cell(&t, 1, "metric"), "tpot_ms");
	csvread_release(&t);
	benchres_release(&b);
	struct benchres_given lb = { .model = "llama-3-8b" };
	if (read_rows("f", LB "\"n_prompt\": 0, \"n_gen\": 512, \"n_depth\": 7680, "
		      "\"avg_ts\": 0.5}]", &lb, &b, &t, &d))
		fail_msg("%s", d.msg);
	assert_int_equal(b.n_rows, 1);
	csvread_release(&t);
	benchres_release(&b);
}

/* A file holds at most BENCHRES_RESULTS_MAX results, in every format; one
 * more is an error naming the cap (and the line, where the format has one). */
static void test_results_cap(void **state)
{
	(void)state;
	static const char *const one[] = {
		/* JSON Lines, a JSON array, CSV */
		"{\"avg_ts\": 130, \"n_prompt\": 0, \"n_gen\": 128}\n",
		"{\"avg_ts\": 130, \"n_prompt\": 0, \"n_gen\": 128}",
		"\"130\",\"0\",\"128\"\n",
	};
	static const char *const want[] = {
		"f:257: more than 256 results in one file (expected at most 256",
		"f: more than 256 results in one file (expected at most 256",
		"f:258: more than 256 results in one file (expected at most 256",
	};
	struct benchres_given g = { .hardware = "rtx-4090", .model = "llama-3-8b",
				    .quant = "gguf-q4-0" };
	for (size_t k = 0; k < 3; k++) {
		for (size_t n = BENCHRES_RESULTS_MAX; n <= BENCHRES_RESULTS_MAX + 1; n++) {
			size_t cap = (n + 2) * (strlen(one[k]) + 2) + 64, len = 0;
			char *text = malloc(cap);
			assert_non_null(text);
			if (k == 1)
				text[len++] = '[';
			if (k == 2)
				len += (size_t)snprintf(text + len, cap - len, "avg_ts,n_prompt,n_gen\n");
			for (size_t i = 0; i < n; i++)
				len += (size_t)snprintf(text + len, cap - len, "%s%s",
							k == 1 && i ? "," : "", one[k]);
			if (k == 1)
				text[len++] = ']';
			text[len] = '\0';
			struct benchres b;
			benchres_init(&b);
			struct diag d;
			diag_init(&d);
			int rc = benchres_read_text(&b, cat, "f", text, len, &g, &d);
			if (n == BENCHRES_RESULTS_MAX) {
				if (rc)
					fail_msg("format %zu, %zu results: %s", k, n, d.msg);
				assert_int_equal(b.n_rows, n);
			} else if (rc != DIAG_EINPUT || !strstr(d.msg, want[k])) {
				fail_msg("format %zu, %zu results: rc %d, '%s' (expected '%s')", k, n,
					 rc, d.msg, want[k]);
			}
			benchres_release(&b);
			free(text);
		}
	}
}

/* Inputs that are errors, each naming the file and what was expected. */
static void test_errors(void **state)
{
	(void)state;
	static const struct {
		const char *text;
		struct benchres_given g;
		const char *msg;
	} cases[] = {
		{ "", { 0 }, "f: empty (expected a benchmark result)" },
		{ "{\"format\":\"agentcap-trace\",\"version\":1}\n", { 0 },
		  "f: not a benchmark result agentcap reads (expected llama-bench" },
		{ "a,b\n1,2\n", { 0 }, "f: not a benchmark result agentcap reads" },
		{ "[]", { 0 }, "f: no result in the file (expected at least one" },
		{ "[{\"avg_ts\": 5, \"n_prompt\": 512, \"n_gen\": 0, \"gpu_info\": \"Mystery GPU\","
		  " \"model_type\": \"llama 8B Q4_0\"}]", { .model = "llama-3-8b" },
		  "f: gpu_info 'Mystery GPU' is not catalogue hardware (expected --hardware ID" },
		{ "[{\"avg_ts\": 5, \"n_prompt\": 512, \"n_gen\": 0, \"gpu_info\": \"NVIDIA GeForce "
		  "RTX 4090\", \"model_type\": \"llama 8B IQ2_XXS\"}]", { .model = "llama-3-8b" },
		  "f: model_type 'llama 8B IQ2_XXS' names no weight format agentcap knows "
		  "(expected --quant ID" },
		{ "[{\"avg_ts\": 5, \"n_prompt\": 512, \"n_gen\": 0}, {\"output_throughput\": 5, "
		  "\"completed\": 1}]", { .hardware = "rtx-4090", .model = "llama-3-8b",
					   .quant = "gguf-q4-0" },
		  "f:1: result 2: not a llama-bench result like the first" },
		{ "[{\"avg_ts\": 5, \"n_prompt\": 512, \"n_gen\": 64}]",
		  { .hardware = "rtx-4090", .model = "llama-3-8b", .quant = "gguf-q4-0" },
		  "f: no result agentcap can fit (1 kept out: f: result 1: a prompt-and-generation" },
		{ "{\"model_id\": \"x\", \"output_throughput\": 10, \"completed\": 0}",
		  { .hardware = "h100-sxm" }, "f: result 1: no prompt and output lengths" },
		{ "{\"output_throughput\": 10, \"completed\": 2, \"total_input_tokens\": 20, "
		  "\"total_output_tokens\": 20, \"max_concurrency\": 1}", { .hardware = "h100-sxm" },
		  "f: the vllm-bench-serve result does not name the model (expected --model ID" },
		{ "n_prompt,n_gen,avg_ts\n512,0,abc\n", { .hardware = "rtx-4090",
							   .model = "llama-3-8b",
							   .quant = "gguf-q4-0" },
		  "f:2: result 1: avg_ts 'abc' is not a number (expected a number" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct benchres b;
		benchres_init(&b);
		struct diag d;
		diag_init(&d);
		int rc = benchres_read_text(&b, cat, "f", cases[i].text, strlen(cases[i].text),
					    &cases[i].g, &d);
		if (rc != DIAG_EINPUT || !strstr(d.msg, cases[i].msg))
			fail_msg("case %zu: rc %d, '%s' (expected '%s')", i, rc, d.msg, cases[i].msg);
		/* nothing of a bad file stays */
		assert_int_equal(b.n_rows, 0);
		assert_int_equal(b.n_inputs, 0);
		benchres_release(&b);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_llama_bench_csv),
		cmocka_unit_test(test_llama_bench_flash_attn),
		cmocka_unit_test(test_llama_bench_build),
		cmocka_unit_test(test_sglang_jsonl),
		cmocka_unit_test(test_vllm_lengths),
		cmocka_unit_test(test_results_cap),
		cmocka_unit_test(test_implausible),
		cmocka_unit_test(test_plausible_edges),
		cmocka_unit_test(test_errors),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
