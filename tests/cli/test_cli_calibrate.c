/* SPDX-License-Identifier: Apache-2.0
 * End-to-end tests of `agentcap calibrate` and of --calibration: a published
 * llama-bench run and a published `vllm bench serve` run
 * (tests/fixtures/calibrate/SOURCE.md) each give a calibration file;
 * replaying the benchmark's own workload (a trace synthesised from its
 * lengths and concurrency) with that file reproduces the measured
 * throughput within 5%, where the built-in calibration does not; the file
 * is the same bytes every time; an unreadable or foreign input is exit
 * status 2 naming the file and what was expected; every result says which
 * calibration it rests on. */
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
#define LLAMA FIX "/calibrate/llama-bench-rtx4090-llama3-8b-q4km.json"
#define VLLM FIX "/calibrate/vllm-serve-h100-gpt-oss-20b.json"
#define SCRATCH AC_BIN_DIR "/tests/cli/scratch_calibrate"
#define LB_CAL SCRATCH "/lb.json"
#define VL_CAL SCRATCH "/vl.json"
/* the llama-bench run had flash attention off (no flash_attn field: a build
 * before it), so its replays have it off too */
#define LLAMA_SET " --set hardware=rtx-4090 --set model=llama-3-8b " \
		  "--set weight_format=gguf-q4-k-m --set engine_profile=llama.cpp " \
		  "--set engine.flash_attention=false"
#define VLLM_SET " --set hardware=h100-sxm --set model=gpt-oss-20b --set weight_format=mxfp4"

/* Published figures (SOURCE.md). */
#define LB_PP512_TOK_S 7138.99
#define LB_TG512_TOK_S 130.58
#define VL_OUTPUT_TOK_S 1443.44

static int setup(void **state)
{
	(void)state;
	mkdir(AC_BIN_DIR "/tests", 0755);
	mkdir(AC_BIN_DIR "/tests/cli", 0755);
	mkdir(SCRATCH, 0755);
	struct cli_out r = cli_run("calibrate " LLAMA " --model llama-3-8b -o " LB_CAL " --quiet");
	int ok = r.status == 0;
	cli_out_free(&r);
	r = cli_run("calibrate " VLLM " --hardware h100-sxm --quant mxfp4 --engine 'vllm 0.11.0' "
		    "-o " VL_CAL " --quiet");
	ok = ok && r.status == 0;
	cli_out_free(&r);
	return ok ? 0 : -1;
}

static cJSON *load(const char *path)
{
	char *text = cli_slurp(path, NULL);
	assert_non_null(text);
	cJSON *j = cJSON_Parse(text);
	free(text);
	assert_non_null(j);
	return j;
}

static double num(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	assert_true(cJSON_IsNumber(v));
	return v->valuedouble;
}

static const char *str(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	assert_true(cJSON_IsString(v));
	return v->valuestring;
}

/* Replay `trace` with the settings and an optional calibration; the JSON
 * result (the run's answer may be "no": exit 0 or 1). */
static cJSON *replay(const char *trace, const char *sets, const char *cal)
{
	char cmd[2048];
	snprintf(cmd, sizeof(cmd), "replay %s%s%s%s --quiet --json -", trace, sets,
		 cal ? " --calibration " : "", cal ? cal : "");
	struct cli_out r = cli_run(cmd);
	if (r.status != 0 && r.status != 1)
		fail_msg("%s: exit %d: %s", cmd, r.status, r.err);
	cJSON *j = cJSON_Parse(r.out);
	cli_out_free(&r);
	assert_non_null(j);
	return j;
}

static void synth(const char *args, const char *out)
{
	char cmd[1024];
	snprintf(cmd, sizeof(cmd), "synth --workload fixed %s -o %s --quiet", args, out);
	struct cli_out r = cli_run(cmd);
	assert_int_equal(r.status, 0);
	cli_out_free(&r);
}

static double rel_err(double got, double want)
{
	return fabs(got - want) / want;
}

/* The file: its format, inputs with CRCs, rows, fitted parameters. */
static void test_llama_bench_file(void **state)
{
	(void)state;
	cJSON *j = load(LB_CAL);
	assert_string_equal(str(j, "format"), "agentcap-calibration");
	const cJSON *in = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "inputs"), 0);
	assert_string_equal(str(in, "path"), LLAMA);
	assert_string_equal(str(in, "kind"), "llama-bench");
	assert_int_equal(strlen(str(in, "crc32")), 8);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(j, "rows")), 8);
	const cJSON *row = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "rows"), 0);
	assert_string_equal(str(row, "hardware"), "rtx-4090");
	assert_string_equal(str(row, "model"), "llama-3-8b");
	assert_string_equal(str(row, "quant"), "gguf-q4-k-m");
	assert_string_equal(str(row, "metric"), "prefill_tok_s");
	assert_true(num(row, "value") == LB_PP512_TOK_S);
	int n_params = cJSON_GetArraySize(cJSON_GetObjectItem(j, "parameters"));
	assert_true(n_params >= 1 && n_params <= 8);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(j, "residuals")), 8);
	cJSON_Delete(j);
}

/* llama-bench's tg512 and pp512 replayed as one-client traces. */
static void test_llama_bench_replays(void **state)
{
	(void)state;
	synth("--input-len 1 --output-len 512 --num-prompts 3 --max-concurrency 1",
	      SCRATCH "/tg512.jsonl");
	synth("--input-len 512 --output-len 1 --num-prompts 3 --max-concurrency 1",
	      SCRATCH "/pp512.jsonl");
	cJSON *tg = replay(SCRATCH "/tg512.jsonl", LLAMA_SET, LB_CAL);
	double got = num(tg, "output_throughput");
	if (rel_err(got, LB_TG512_TOK_S) > 0.05)
		fail_msg("tg512 replayed at %.2f tok/s, measured %.2f", got, LB_TG512_TOK_S);
	const cJSON *cal = cJSON_GetObjectItem(cJSON_GetObjectItem(tg, "run"), "calibration");
	assert_string_equal(str(cal, "source"), "own");
	const cJSON *near = cJSON_GetArrayItem(cJSON_GetObjectItem(cal, "nearest"), 0);
	assert_string_equal(str(near, "hardware_match"), "same hardware");
	assert_string_equal(str(near, "model_match"), "same model");
	assert_string_equal(str(near, "engine_match"), "same engine");
	cJSON_Delete(tg);
	cJSON *pp = replay(SCRATCH "/pp512.jsonl", LLAMA_SET, LB_CAL);
	got = num(pp, "total_token_throughput") * 512.0 / 513.0; /* the prompt's share */
	if (rel_err(got, LB_PP512_TOK_S) > 0.05)
		fail_msg("pp512 replayed at %.1f tok/s, measured %.1f", got, LB_PP512_TOK_S);
	cJSON_Delete(pp);
	/* the built-in calibration misses the same measurement by more */
	tg = replay(SCRATCH "/tg512.jsonl", LLAMA_SET, NULL);
	assert_true(rel_err(num(tg, "output_throughput"), LB_TG512_TOK_S) > 0.05);
	cal = cJSON_GetObjectItem(cJSON_GetObjectItem(tg, "run"), "calibration");
	assert_string_equal(str(cal, "source"), "built-in");
	cJSON_Delete(tg);
}

/* The vLLM run: 500 prompts of ~1998 tokens queued at once, ~94 out. */
static void test_vllm_serve_replays(void **state)
{
	(void)state;
	cJSON *j = load(VL_CAL);
	const cJSON *in = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "inputs"), 0);
	assert_string_equal(str(in, "kind"), "vllm-bench-serve");
	const cJSON *rows = cJSON_GetObjectItem(j, "rows");
	assert_int_equal(cJSON_GetArraySize(rows), 3);
	const cJSON *row = cJSON_GetArrayItem(rows, 0);
	assert_string_equal(str(row, "metric"), "output_throughput_tok_s");
	assert_true(num(row, "input_tokens") == 1998 && num(row, "output_tokens") == 94);
	cJSON_Delete(j);
	synth("--input-len 1998 --output-len 94 --num-prompts 500 --request-rate inf",
	      SCRATCH "/vllm.jsonl");
	cJSON *r = replay(SCRATCH "/vllm.jsonl", VLLM_SET, VL_CAL);
	double got = num(r, "output_throughput");
	if (rel_err(got, VL_OUTPUT_TOK_S) > 0.05)
		fail_msg("the vllm run replayed at %.1f tok/s, measured %.1f", got, VL_OUTPUT_TOK_S);
	cJSON_Delete(r);
	r = replay(SCRATCH "/vllm.jsonl", VLLM_SET, NULL);
	assert_true(rel_err(num(r, "output_throughput"), VL_OUTPUT_TOK_S) > 0.05);
	cJSON_Delete(r);
}

/* The same inputs give the same bytes. */
static void test_deterministic(void **state)
{
	(void)state;
	struct cli_out r = cli_run("calibrate " LLAMA " --model llama-3-8b -o " SCRATCH
				   "/lb2.json --quiet");
	assert_int_equal(r.status, 0);
	cli_out_free(&r);
	size_t n1, n2;
	char *a = cli_slurp(LB_CAL, &n1), *b = cli_slurp(SCRATCH "/lb2.json", &n2);
	assert_non_null(a);
	assert_non_null(b);
	assert_int_equal(n1, n2);
	assert_memory_equal(a, b, n1);
	free(a);
	free(b);
	r = cli_run("calibrate " VLLM " --hardware h100-sxm --quant mxfp4 --engine 'vllm 0.11.0' "
		    "-o " SCRATCH "/vl2.json --quiet");
	assert_int_equal(r.status, 0);
	cli_out_free(&r);
	a = cli_slurp(VL_CAL, &n1);
	b = cli_slurp(SCRATCH "/vl2.json", &n2);
	assert_int_equal(n1, n2);
	assert_memory_equal(a, b, n1);
	free(a);
	free(b);
}

static void expect_error(const char *args, const char *what1, const char *what2)
{
	struct cli_out r = cli_run(args);
	if (r.status != 2 || !strstr(r.err, what1) || (what2 && !strstr(r.err, what2)))
		fail_msg("agentcap %s: exit %d, stderr: %s (expected exit 2 and '%s'%s%s)", args,
			 r.status, r.err, what1, what2 ? " and " : "", what2 ? what2 : "");
	cli_out_free(&r);
}

/* Unreadable, foreign and incomplete inputs: exit 2 naming the file and
 * what was expected, no calibration file written. */
static void test_bad_inputs(void **state)
{
	(void)state;
	remove(SCRATCH "/bad.json");
	expect_error("calibrate " SCRATCH "/missing.json -o " SCRATCH "/bad.json",
		     SCRATCH "/missing.json", "expected a benchmark result");
	expect_error("calibrate " FIX "/replay/two_sessions.jsonl -o " SCRATCH "/bad.json",
		     FIX "/replay/two_sessions.jsonl: not a benchmark result agentcap reads "
		     "(expected llama-bench", NULL);
	expect_error("calibrate " AC_SRC_DIR "/models/calibration/measurements.csv -o " SCRATCH
		     "/bad.json", "measurements.csv: not a benchmark result agentcap reads", NULL);
	FILE *f = fopen(SCRATCH "/broken.json", "w");
	assert_non_null(f);
	fputs("[\n  {\"avg_ts\": 1,\n", f);
	fclose(f);
	expect_error("calibrate " SCRATCH "/broken.json -o " SCRATCH "/bad.json",
		     SCRATCH "/broken.json:", "expected");
	expect_error("calibrate " VLLM " -o " SCRATCH "/bad.json", VLLM ": the vllm-bench-serve "
		     "result does not name the hardware (expected --hardware ID", NULL);
	expect_error("calibrate " LLAMA " -o " SCRATCH "/bad.json", LLAMA ": model_filename "
		     "'./models/8B-v3/ggml-model-Q4_K_M.gguf' (model_type 'llama 8B Q4_K - Medium') "
		     "names no catalogue model", "expected --model ID");
	expect_error("calibrate " LLAMA " --model no-such-model -o " SCRATCH "/bad.json",
		     "--model 'no-such-model' is not a catalogue model", NULL);
	expect_error("calibrate " VLLM " --hardware h100-sxm --engine 'my own server' -o " SCRATCH
		     "/bad.json", "--engine 'my own server' names no engine profile (expected", NULL);
	/* nothing the model can predict: the result and the reason, not the
	 * metric names of the rows it became */
	expect_error("calibrate " VLLM " --hardware rtx-4090 --model llama-3.1-70b -o " SCRATCH
		     "/bad.json", VLLM ": result 1: agentcap cannot predict it, so nothing is left "
		     "to fit: llama-3.1-70b in bf16 needs", "(expected results of a deployment");
	struct cli_out nr = cli_run("calibrate " VLLM " --hardware rtx-4090 --model llama-3.1-70b "
				    "-o " SCRATCH "/bad.json");
	assert_null(strstr(nr.err, "decode_tok_s"));
	cli_out_free(&nr);
	struct stat st;
	assert_int_not_equal(stat(SCRATCH "/bad.json", &st), 0);
	/* --calibration: a file that is not one, or not there */
	expect_error("replay " FIX "/replay/two_sessions.jsonl --calibration " LLAMA,
		     LLAMA ": not an agentcap calibration file (expected \"format\": "
		     "\"agentcap-calibration\"", NULL);
	expect_error("predict --hardware h100-sxm --model llama-3.1-8b --calibration " SCRATCH
		     "/missing.json", SCRATCH "/missing.json", "calibration file");
	expect_error("fit --hardware h100-sxm --calibration " SCRATCH "/broken.json",
		     SCRATCH "/broken.json:", "expected an agentcap calibration file");
	/* an output that is one of the inputs: refused, the input intact */
	f = fopen(SCRATCH "/copy.json", "w");
	assert_non_null(f);
	FILE *in = fopen(LLAMA, "rb");
	assert_non_null(in);
	char buf[4096];
	size_t n;
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
		assert_int_equal(fwrite(buf, 1, n, f), n);
	fclose(in);
	fclose(f);
	struct stat before;
	assert_int_equal(stat(SCRATCH "/copy.json", &before), 0);
	expect_error("calibrate " SCRATCH "/copy.json --model llama-3-8b -o " SCRATCH "/copy.json",
		     "-o " SCRATCH "/copy.json: one of the results read", NULL);
	f = fopen(SCRATCH "/m.csv", "w");
	assert_non_null(f);
	fputs("hardware,n_gpus,model,quant,engine,concurrency,input_tokens,output_tokens,metric,"
	      "value,unit,provenance,confidence\nrtx-4090,1,llama-2-7b,gguf-q4-0,llama.cpp,1,0,128,"
	      "decode_tok_s,180,tok/s,original,high\n", f);
	fclose(f);
	expect_error("fit-params " SCRATCH "/m.csv -o " SCRATCH "/m.csv",
		     "-o " SCRATCH "/m.csv: the measurements file itself", NULL);
	expect_error("validate " SCRATCH "/m.csv --json " SCRATCH "/m.csv",
		     SCRATCH "/m.csv: the measurements file itself", NULL);
	expect_error("fit-params " SCRATCH "/m.csv --commit 'hello world' -o " SCRATCH "/p.json",
		     "--commit 'hello world': expected 7 to 40 lower-case hex digits", NULL);
	expect_error("fit-params " SCRATCH "/m.csv --commit abcdef1",
		     "--commit is recorded in the -o file", NULL);
	struct stat after;
	assert_int_equal(stat(SCRATCH "/copy.json", &after), 0);
	assert_int_equal(after.st_size, before.st_size);
	f = fopen(SCRATCH "/m.csv", "r");
	assert_non_null(f);
	assert_non_null(fgets(buf, sizeof(buf), f));
	assert_non_null(strstr(buf, "hardware,n_gpus"));
	fclose(f);
	/* cross-validation with no row it can use: exit 2 before any output,
	 * the --json file left as it was and no bands file made */
	f = fopen(SCRATCH "/low.csv", "w");
	assert_non_null(f);
	fputs("hardware,n_gpus,model,quant,engine,concurrency,input_tokens,output_tokens,metric,"
	      "value,unit,provenance,confidence\nrtx-4090,1,llama-2-7b,gguf-q4-0,llama.cpp,1,0,128,"
	      "decode_tok_s,180,tok/s,original,low\n", f);
	fclose(f);
	f = fopen(SCRATCH "/cv.json", "w");
	assert_non_null(f);
	fputs("keep\n", f);
	fclose(f);
	remove(SCRATCH "/cvbands.json");
	expect_error("validate " SCRATCH "/low.csv --cross-validate family --json " SCRATCH
		     "/cv.json --write-bands " SCRATCH "/cvbands.json",
		     SCRATCH "/low.csv: no row to cross-validate", NULL);
	f = fopen(SCRATCH "/cv.json", "r");
	assert_non_null(f);
	assert_non_null(fgets(buf, sizeof(buf), f));
	assert_string_equal(buf, "keep\n");
	fclose(f);
	assert_int_not_equal(stat(SCRATCH "/cvbands.json", &after), 0);
	/* a NUL byte inside a measurements file: its place, not a silent cut */
	f = fopen(SCRATCH "/nul.csv", "wb");
	assert_non_null(f);
	static const char nul[] = "hardware,n_gpus,model,quant,engine,concurrency,input_tokens,"
				  "output_tokens,metric,value,unit,provenance,confidence\n"
				  "rtx-4090,1,llama-2-7b,gguf-q4-0,llama.cpp,1,0,128,decode_tok_s,"
				  "180,tok/s,original,high\n\0rtx-4090\n";
	assert_int_equal(fwrite(nul, 1, sizeof(nul) - 1, f), sizeof(nul) - 1);
	fclose(f);
	expect_error("fit-params " SCRATCH "/nul.csv", SCRATCH "/nul.csv:3:1: a NUL byte", NULL);
}

/* src with the first `from` replaced by `to`, written to dst. */
static void write_replaced(const char *src, const char *dst, const char *from, const char *to)
{
	char *text = cli_slurp(src, NULL);
	assert_non_null(text);
	char *at = strstr(text, from);
	assert_non_null(at);
	FILE *f = fopen(dst, "w");
	assert_non_null(f);
	fprintf(f, "%.*s%s%s", (int)(at - text), text, to, at + strlen(from));
	assert_int_equal(fclose(f), 0);
	free(text);
}

/* Impossible measurements: exit 2 naming the file, the line, the result,
 * the field as the tool wrote it, the value and the range expected -- not a
 * column of the rows they become -- and no calibration written. */
static void test_implausible_results(void **state)
{
	(void)state;
	static const struct {
		const char *src, *from, *to, *args, *msg;
	} cases[] = {
		{ LLAMA, "\"avg_ts\": 6898.71", "\"avg_ts\": 1e-300", "--model llama-3-8b",
		  ":20: result 2: avg_ts 1e-300 is not a plausible measurement (expected tokens/s "
		  "within [0.001, 1e+07])" },
		{ LLAMA, "\"avg_ts\": 6898.71", "\"avg_ts\": 1e308", "--model llama-3-8b",
		  ":20: result 2: avg_ts 1e+308 is not a plausible measurement" },
		{ LLAMA, "\"n_prompt\": 1024", "\"n_prompt\": 1e9", "--model llama-3-8b",
		  ":20: result 2: n_depth 0 + n_prompt 1000000000 + n_gen 0 tokens is beyond the "
		  "context of llama-3-8b (expected at most 8192 tokens in all)" },
		{ VLLM, "\"median_ttft_ms\": 16363.96", "\"median_ttft_ms\": 1e308",
		  "--hardware h100-sxm --quant mxfp4", ": result 1: median_ttft_ms 1e+308 is not a "
		  "plausible measurement (expected ms (or 0: not measured) within [0.0001, 1e+07])" },
		{ VLLM, "\"max_concurrency\": null", "\"max_concurrency\": 1e12",
		  "--hardware h100-sxm --quant mxfp4", ": result 1: max_concurrency 1000000000000 is "
		  "not a plausible number of clients (expected a whole number from 1 to 16384)" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char in[256], cmd[1024], want[512];
		snprintf(in, sizeof(in), SCRATCH "/implausible%zu.json", i);
		write_replaced(cases[i].src, in, cases[i].from, cases[i].to);
		remove(SCRATCH "/bad.json");
		snprintf(cmd, sizeof(cmd), "calibrate %s %s -o " SCRATCH "/bad.json", in,
			 cases[i].args);
		snprintf(want, sizeof(want), "%s%s", in, cases[i].msg);
		struct cli_out r = cli_run(cmd);
		/* never the rows' own columns ("concurrency '...'", "input_tokens") */
		if (r.status != 2 || !strstr(r.err, want) || strstr(r.err, " concurrency '") ||
		    strstr(r.err, " input_tokens"))
			fail_msg("agentcap %s: exit %d, stderr: %s (expected exit 2 and '%s')", cmd,
				 r.status, r.err, want);
		cli_out_free(&r);
		struct stat st;
		assert_int_not_equal(stat(SCRATCH "/bad.json", &st), 0);
	}
}

/* predict, fit, validate and size say which calibration they rest on. */
static void test_results_say_calibration(void **state)
{
	(void)state;
	struct cli_out r = cli_run("predict --hardware rtx-4090 --model llama-3-8b --format "
				   "gguf-q4-k-m --engine llama.cpp --batch 1 --context 512 "
				   "--calibration " LB_CAL);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "Calibration: own file " LB_CAL));
	assert_non_null(strstr(r.out, "same hardware, same model, same engine"));
	cli_out_free(&r);
	r = cli_run("predict --hardware rtx-4090 --model llama-3-8b --json -");
	assert_int_equal(r.status, 0);
	cJSON *j = cJSON_Parse(r.out);
	assert_non_null(j);
	assert_string_equal(str(cJSON_GetObjectItem(j, "calibration"), "source"), "built-in");
	cJSON_Delete(j);
	cli_out_free(&r);
	r = cli_run("fit --hardware rtx-4090 --calibration " LB_CAL " --json -");
	assert_int_equal(r.status, 0);
	j = cJSON_Parse(r.out);
	assert_non_null(j);
	const cJSON *cal = cJSON_GetObjectItem(j, "calibration");
	assert_string_equal(str(cal, "source"), "own");
	assert_true(cJSON_GetArraySize(cJSON_GetObjectItem(cal, "nearest")) >= 1);
	cJSON_Delete(j);
	cli_out_free(&r);
	r = cli_run("validate --calibration " LB_CAL);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "Calibration: own file"));
	assert_non_null(strstr(r.out, "8 rows, 8 predicted"));
	cli_out_free(&r);
	r = cli_run("size --engineers 2 --trace " FIX "/traces/mooncake_head200.jsonl "
		    "--calibration " VL_CAL " --json - --quiet");
	assert_true(r.status == 0 || r.status == 1);
	j = cJSON_Parse(r.out);
	assert_non_null(j);
	cal = cJSON_GetObjectItem(cJSON_GetObjectItem(j, "run"), "calibration");
	assert_string_equal(str(cal, "source"), "own");
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(cal, "nearest")), 1);
	cJSON_Delete(j);
	cli_out_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_llama_bench_file),
		cmocka_unit_test(test_llama_bench_replays),
		cmocka_unit_test(test_vllm_serve_replays),
		cmocka_unit_test(test_deterministic),
		cmocka_unit_test(test_bad_inputs),
		cmocka_unit_test(test_implausible_results),
		cmocka_unit_test(test_results_say_calibration),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
