/* SPDX-License-Identifier: Apache-2.0
 * Tests for models/engine (the built-in table loads, names match, family
 * overrides apply, bad files are rejected with the key path),
 * models/csvread (quoting, comments, line numbers, field-count errors) and
 * models/profile (a measured profile reproduces its measurements exactly,
 * interpolates between them, clamps outside, keeps decode runs exact, and
 * rejects bad rows with path:line).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "models/catalog.h"
#include "models/csvread.h"
#include "models/engine.h"
#include "models/perf_model.h"
#include "models/profile.h"

static void assert_close(double got, double want, double rel)
{
	double err = fabs(got - want) / fmax(fabs(want), 1e-300);
	if (err > rel)
		fail_msg("got %.17g, want %.17g (relative error %.3g > %.3g)", got, want, err, rel);
}

static void test_builtin_engines(void **state)
{
	(void)state;
	struct engine_table t;
	struct diag d;
	diag_init(&d);
	if (engine_table_load(&t, NULL, &d))
		fail_msg("%s", d.msg);
	const char *ids[] = { "vllm", "vllm-2025", "vllm-v0", "sglang", "trtllm", "llama.cpp",
			      "mlx" };
	for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++)
		assert_non_null(engine_find(&t, ids[i]));
	assert_ptr_equal(engine_find(&t, "TensorRT-LLM"), engine_find(&t, "trtllm"));
	/* Ollama: llama.cpp's figures (it inherits them), a model loaded on
	 * demand and unloaded after five idle minutes; the others keep theirs */
	const struct engine_profile *oll = engine_find(&t, "Ollama");
	const struct engine_profile *lcpp = engine_find(&t, "llama.cpp");
	assert_non_null(oll);
	assert_string_equal(oll->id, "ollama");
	assert_true(oll->p.step_overhead_us == lcpp->p.step_overhead_us);
	assert_true(oll->p.layer_overhead_us == lcpp->p.layer_overhead_us);
	assert_int_equal(oll->override_count, lcpp->override_count);
	assert_int_equal(oll->format_count, lcpp->format_count);
	assert_true(oll->startup.keep_alive_s == 300.0);
	assert_true(lcpp->startup.keep_alive_s == -1.0);
	assert_true(engine_find(&t, "vllm")->startup.keep_alive_s == -1.0);
	assert_true(engine_find(&t, "sglang")->startup.keep_alive_s == -1.0);
	assert_ptr_equal(engine_match(&t, "Ollama 0.12 (CUDA)"), oll);
	assert_ptr_equal(engine_match(&t, "llama-server b6210"), lcpp);
	/* every engine has its start-up figures (vLLM's, with their TP growth) */
	const struct engine_profile *v = engine_find(&t, "vllm");
	assert_true(v->startup.image_gb > 0 && v->startup.engine_start_s > 0);
	assert_true(v->startup.compile_cold_s > v->startup.compile_cached_s);
	assert_true(v->startup.cuda_graph_s_per_layer > 0 && v->startup.cuda_graph_tp_growth > 0);
	assert_null(engine_find(&t, "deepspeed-mii"));
	/* which hardware families each engine has a GPU backend for */
	const struct engine_profile *vllm = engine_find(&t, "vllm"), *mlx = engine_find(&t, "mlx");
	const struct engine_profile *trt = engine_find(&t, "trtllm"), *cpp = engine_find(&t, "llama.cpp");
	assert_true(engine_runs_on(vllm, "nvidia-hopper") && engine_runs_on(vllm, "amd-cdna3"));
	assert_false(engine_runs_on(vllm, "apple-silicon"));
	assert_true(vllm->runs_on_source[0] != '\0');
	assert_true(engine_runs_on(mlx, "apple-silicon") && !engine_runs_on(mlx, "nvidia-hopper"));
	assert_true(engine_runs_on(trt, "nvidia-blackwell") && !engine_runs_on(trt, "amd-cdna3"));
	assert_true(engine_runs_on(cpp, "apple-silicon") && engine_runs_on(cpp, "amd-strix-halo"));
	assert_true(!engine_runs_on(engine_find(&t, "sglang"), "amd-strix-halo"));
	/* free-text engine columns */
	struct { const char *text, *id; } cases[] = {
		{ "llama.cpp 8e672ef (Metal)", "llama.cpp" },
		{ "llama.cpp (-fa 1 -b 4096 -ub 2048)", "llama.cpp" },
		{ "SGLang v0.3.0 TP4", "sglang" },
		{ "TensorRT-LLM ~1.0 (PyTorch backend)", "trtllm" },
		{ "vllm vLLM v0.6.0 (--num-scheduler-steps 10) TP4", "vllm-v0" },
		{ "vLLM 0.23.0", "vllm" },
		/* V1 releases with piecewise decode graphs by default (v0.8-v0.10) */
		{ "vllm vLLM (July 2025; version not stated; vLLM v0.9 inferred from the date)",
		  "vllm-2025" },
		{ "vLLM 0.10.1.1", "vllm-2025" },
		{ "vllm vLLM v0.7.3 (TP8)", "vllm-v0" },
		{ "rapid-mlx 0.10.3 / mlx 0.32.0", "mlx" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct engine_profile *e = engine_match(&t, cases[i].text);
		assert_non_null(e);
		if (strcmp(e->id, cases[i].id) != 0)
			fail_msg("'%s' matched %s, want %s", cases[i].text, e->id, cases[i].id);
	}
	assert_null(engine_match(&t, "NCCL all_reduce"));
	/* only the 2025 V1 profile runs its decode graphs in pieces */
	assert_true(engine_find(&t, "vllm-2025")->p.piecewise_layer_us == 129);
	assert_true(engine_find(&t, "vllm")->p.piecewise_layer_us == 0);
	assert_ptr_equal(engine_find(&t, "vllm-v1-2025"), engine_find(&t, "vllm-2025"));
	/* family overrides: the longest prefix wins */
	const struct engine_profile *lc = engine_find(&t, "llama.cpp");
	struct engine_params base, dc, rtx, hop;
	engine_resolve(lc, NULL, &base);
	engine_resolve(lc, "nvidia-blackwell", &dc);
	engine_resolve(lc, "nvidia-blackwell-rtx", &rtx);
	engine_resolve(lc, "nvidia-hopper", &hop);
	assert_true(dc.layer_overhead_us > base.layer_overhead_us);
	assert_true(dc.compute_scale < base.compute_scale);
	assert_true(dc.bw_scale == base.bw_scale); /* not overridden */
	assert_true(rtx.layer_overhead_us == base.layer_overhead_us);
	assert_string_equal(engine_override_for(lc, "nvidia-blackwell-rtx")->family_prefix,
			    "nvidia-blackwell-rtx");
	assert_string_equal(engine_override_for(lc, "nvidia-blackwell")->family_prefix,
			    "nvidia-blackwell");
	assert_null(engine_override_for(lc, NULL));
	/* Hopper and Ampere run on the engine's own figures: what set their
	 * overrides (slow MMQ prefill and batch-1 decode on data-centre parts)
	 * is the per-core bound every family shares */
	assert_null(engine_override_for(lc, "nvidia-hopper"));
	assert_true(hop.layer_overhead_us == base.layer_overhead_us &&
		    hop.compute_scale == base.compute_scale);
	assert_true(base.quant_matmul_flops_per_core_clock > 0);
	assert_true(base.matvec_bytes_per_core_clock > base.quant_matvec_bytes_per_core_clock &&
		    base.quant_matvec_bytes_per_core_clock > 0);
	assert_true(engine_find(&t, "vllm")->p.quant_matmul_flops_per_core_clock == 0 &&
		    engine_find(&t, "vllm")->p.matvec_bytes_per_core_clock == 0);
	assert_true(base.fp16_accumulate);
	/* formats each engine loads */
	assert_true(engine_supports_format(lc, "gguf-q4-k-m"));
	assert_false(engine_supports_format(engine_find(&t, "vllm"), "gguf-q4-k-m"));
	assert_true(engine_supports_format(engine_find(&t, "vllm"), "fp8"));
	assert_true(engine_supports_format(engine_find(&t, "mlx"), "mlx-q4"));
	assert_true(engine_find(&t, "trtllm")->p.fp8_kv_with_fp8_weights);
	char ids_buf[256];
	engine_list_ids(&t, ids_buf, sizeof(ids_buf));
	assert_non_null(strstr(ids_buf, "vllm, "));
}

static int parse(struct engine_table *t, const char *text, struct diag *d)
{
	diag_init(d);
	return engine_table_parse(t, "engines.json", text, strlen(text), d);
}

#define FIG(v, u) "{\"value\": " #v ", \"unit\": \"" u "\", \"source\": \"s\", \"date\": \"2026-08\"}"
#define ENGINE_BODY(scale) \
	"\"step_overhead_us\": " FIG(100, "us") ", \"layer_overhead_us\": " FIG(2, "us") \
	", \"compute_scale\": " scale ", \"attention_scale\": " FIG(0.8, "fraction") \
	", \"bw_scale\": " FIG(1, "fraction") ", \"quant_bw_scale\": " FIG(1, "fraction") \
	", \"moe_scale\": " FIG(1, "fraction") ", \"moe_layer_overhead_us\": " FIG(0, "us") \
	", \"max_num_seqs\": " FIG(256, "sequences") ", \"prefill_chunk_tokens\": " \
	FIG(8192, "tokens")

static void test_engine_errors(void **state)
{
	(void)state;
	static struct engine_table t;
	struct diag d;
	const char *ok = "{\"schema_version\": 1, \"engines\": [{\"id\": \"x\", \"name\": \"X\", "
			 ENGINE_BODY(FIG(1, "fraction")) "}]}";
	assert_int_equal(parse(&t, ok, &d), 0);
	assert_int_equal(t.count, 1);
	assert_true(t.engines[0].p.step_overhead_us == 100);
	/* without floor figures an engine has no floors and runs MLA everywhere */
	assert_true(t.engines[0].p.kernel_graph_us == 0 && t.engines[0].p.gemm_kernel_us == 0);
	assert_true(t.engines[0].p.expert_kernel_empty_us == 0);
	assert_false(t.engines[0].p.host_overlap);
	assert_true(engine_runs_mla(&t.engines[0], "int4-awq"));
	const char *floors = "{\"schema_version\": 1, \"engines\": [{\"id\": \"x\", \"name\": "
			     "\"X\", " ENGINE_BODY(FIG(1, "fraction")) ", \"kernel_graph_us\": "
			     FIG(4, "us") ", \"gemm_kernel_us\": " FIG(9, "us") ", \"kernel_eager_us\": "
			     FIG(10, "us") ", \"graph_max_seqs\": " FIG(512, "sequences")
			     ", \"host_overlap\": true, \"mla_formats\": [\"bf16\", \"fp8\"], "
			     "\"expert_kernel_empty_us\": " FIG(0.5, "us") ", "
			     "\"expert_kernel_eager_us\": " FIG(3.8, "us") ", "
			     "\"by_family\": [{\"family_prefix\": \"nvidia-ampere\", "
			     "\"gemm_kernel_us\": " FIG(12, "us") ", \"expert_kernel_empty_us\": "
			     FIG(0.7, "us") "}]}]}";
	assert_int_equal(parse(&t, floors, &d), 0);
	struct engine_params fp;
	engine_resolve(&t.engines[0], "nvidia-ampere", &fp);
	assert_true(fp.kernel_graph_us == 4 && fp.gemm_kernel_us == 12 && fp.kernel_eager_us == 10 &&
		    fp.graph_max_seqs == 512 && fp.host_overlap);
	/* per-expert launches: the override replaces one figure, keeps the other */
	assert_true(fp.expert_kernel_empty_us == 0.7 && fp.expert_kernel_eager_us == 3.8);
	assert_true(t.engines[0].p.expert_kernel_empty_us == 0.5);
	assert_true(engine_runs_mla(&t.engines[0], "FP8"));
	assert_false(engine_runs_mla(&t.engines[0], "int4-awq"));
	/* the start-up memory profile: absent, 0 (the memory model's defaults) */
	assert_true(t.engines[0].p.kv_sampler_bytes_per_logit == 0 &&
		    t.engines[0].p.kv_non_torch_gib == 0 && t.engines[0].p.kv_cuda_graph_gib == 0);
	const char *kv = "{\"schema_version\": 1, \"engines\": [{\"id\": \"x\", \"name\": \"X\", "
			 ENGINE_BODY(FIG(1, "fraction")) ", \"kv_sampler_bytes_per_logit\": "
			 FIG(38, "bytes per logit") ", \"kv_non_torch_gib\": " FIG(0.13, "GiB")
			 ", \"kv_non_torch_tp_gib\": " FIG(0.42, "GiB") ", \"kv_cuda_graph_gib\": "
			 FIG(0.6, "GiB") "}]}";
	assert_int_equal(parse(&t, kv, &d), 0);
	engine_resolve(&t.engines[0], "nvidia-ampere", &fp);
	assert_true(fp.kv_sampler_bytes_per_logit == 38 && fp.kv_non_torch_gib == 0.13 &&
		    fp.kv_non_torch_tp_gib == 0.42 && fp.kv_cuda_graph_gib == 0.6);
	const char *bad_kv = "{\"schema_version\": 1, \"engines\": [{\"id\": \"x\", \"name\": "
			     "\"X\", " ENGINE_BODY(FIG(1, "fraction")) ", \"kv_sampler_bytes_per_logit\": "
			     FIG(38, "bytes") "}]}";
	assert_int_equal(parse(&t, bad_kv, &d), DIAG_EINPUT);
	assert_string_equal(d.msg, "engines.json: engines[0].kv_sampler_bytes_per_logit.unit: "
				   "expected \"bytes per logit\"");
	const char *bad_graph = "{\"schema_version\": 1, \"engines\": [{\"id\": \"x\", \"name\": "
				"\"X\", " ENGINE_BODY(FIG(1, "fraction")) ", \"graph_max_seqs\": "
				FIG(0.5, "sequences") "}]}";
	assert_int_equal(parse(&t, bad_graph, &d), DIAG_EINPUT);
	assert_non_null(strstr(d.msg, "graph_max_seqs.value"));
	const char *bad_scale = "{\"schema_version\": 1, \"engines\": [{\"id\": \"x\", \"name\": "
				"\"X\", " ENGINE_BODY(FIG(1.5, "fraction")) "}]}";
	assert_int_equal(parse(&t, bad_scale, &d), DIAG_EINPUT);
	assert_string_equal(d.msg, "engines.json: engines[0].compute_scale.value: expected a "
				   "fraction in (0, 1]");
	const char *bad_unit = "{\"schema_version\": 1, \"engines\": [{\"id\": \"x\", \"name\": "
			       "\"X\", " ENGINE_BODY(FIG(1, "percent")) "}]}";
	assert_int_equal(parse(&t, bad_unit, &d), DIAG_EINPUT);
	assert_string_equal(d.msg, "engines.json: engines[0].compute_scale.unit: expected "
				   "\"fraction\"");
	const char *unknown = "{\"schema_version\": 1, \"engines\": [{\"id\": \"x\", \"name\": "
			      "\"X\", \"speed\": 3, " ENGINE_BODY(FIG(1, "fraction")) "}]}";
	assert_int_equal(parse(&t, unknown, &d), DIAG_EINPUT);
	assert_string_equal(d.msg, "engines.json: engines[0].speed: unknown key");
	const char *dup = "{\"schema_version\": 1, \"engines\": [{\"id\": \"x\", \"name\": \"X\", "
			  ENGINE_BODY(FIG(1, "fraction")) "}, {\"id\": \"X\", \"name\": \"Y\", "
			  ENGINE_BODY(FIG(1, "fraction")) "}]}";
	assert_int_equal(parse(&t, dup, &d), DIAG_EINPUT);
	assert_non_null(strstr(d.msg, "engines[1]: name already used"));
	assert_int_equal(parse(&t, "{\"schema_version\": 1,\n \"engines\": [}", &d), DIAG_EINPUT);
	assert_non_null(strstr(d.msg, "engines.json:2:"));
	assert_int_equal(parse(&t, "{\"schema_version\": 2, \"engines\": []}", &d), DIAG_EINPUT);
	assert_non_null(strstr(d.msg, "schema_version: expected 1"));
	diag_init(&d);
	/* a file that is not there is bad input, named, as every loader says it */
	assert_int_equal(engine_table_load(&t, "/nonexistent/engines.json", &d), DIAG_EINPUT);
	assert_non_null(strstr(d.msg, "/nonexistent/engines.json: cannot open: "));
}

static void test_csvread(void **state)
{
	(void)state;
	const char *text = "# a comment\n"
			   "a, b ,c\n"
			   "1,\"two, with comma\",3\n"
			   "\n"
			   "4,\"multi\nline\",6\n"
			   "7,,x\n";
	struct csvread t;
	struct diag d;
	diag_init(&d);
	if (csvread_parse(&t, "t.csv", text, strlen(text), &d))
		fail_msg("%s", d.msg);
	assert_int_equal(t.cols, 3);
	assert_int_equal(t.rows, 3);
	assert_int_equal(csvread_col(&t, "b"), 1);
	assert_int_equal(csvread_col(&t, "z"), -1);
	assert_string_equal(csvread_cell(&t, 0, 1), "two, with comma");
	assert_string_equal(csvread_cell(&t, 1, 1), "multi\nline");
	assert_int_equal(t.lines[0], 3);
	assert_int_equal(t.lines[1], 5);
	assert_int_equal(t.lines[2], 7);
	double v;
	assert_int_equal(csvread_number(&t, 0, 0, 0, &v, &d), 0);
	assert_true(v == 1);
	assert_int_equal(csvread_number(&t, 2, 1, 1, &v, &d), 0);
	assert_true(isnan(v));
	assert_int_equal(csvread_number(&t, 2, 2, 0, &v, &d), DIAG_EINPUT);
	assert_string_equal(d.msg, "t.csv:7: column 'c': 'x' is not a number");
	diag_init(&d);
	assert_int_equal(csvread_number(&t, 2, 1, 0, &v, &d), DIAG_EINPUT);
	assert_string_equal(d.msg, "t.csv:7: column 'b' is empty (expected a number)");
	csvread_release(&t);

	diag_init(&d);
	const char *short_row = "a,b\n1,2\n3\n";
	assert_int_equal(csvread_parse(&t, "s.csv", short_row, strlen(short_row), &d), DIAG_EINPUT);
	assert_string_equal(d.msg, "s.csv:3: row has 1 fields, expected 2 (the header's)");
	diag_init(&d);
	const char *open_quote = "a,b\n1,\"2\n";
	assert_int_equal(csvread_parse(&t, "q.csv", open_quote, strlen(open_quote), &d),
			 DIAG_EINPUT);
	assert_non_null(strstr(d.msg, "q.csv:"));
	diag_init(&d);
	assert_int_equal(csvread_parse(&t, "e.csv", "# only\n", 7, &d), DIAG_EINPUT);
	assert_non_null(strstr(d.msg, "no header row"));
	diag_init(&d);
	assert_int_equal(csvread_load(&t, "/nonexistent.csv", &d), DIAG_EIO);
}

struct pf {
	struct catalog *cat;
	struct perf_model pm;
};

static void model_for(struct pf *f)
{
	struct diag d;
	diag_init(&d);
	assert_int_equal(catalog_load(&f->cat, NULL, &d), 0);
	assert_int_equal(perf_model_init(&f->pm, f->cat, "h100-sxm", "llama-3.1-8b", NULL, NULL, 1,
					 &d), 0);
}

static int load_profile(struct perf_profile **p, const struct perf_model *pm, const char *text,
			struct diag *d)
{
	diag_init(d);
	return perf_profile_parse(p, "prof.csv", text, strlen(text), pm, d);
}

static void test_profile_override(void **state)
{
	(void)state;
	struct pf f;
	model_for(&f);
	const char *text = "hardware,model,phase,batch,context_tokens,step_ms\n"
			   "h100-sxm,llama-3.1-8b,decode,1,1000,9.0\n"
			   "h100-sxm,llama-3.1-8b,decode,8,1000,10.0\n"
			   "H100-SXM,llama-3.1-8b,decode,64,1000,14.0\n"
			   ",,decode,64,4000,20.0\n"
			   "h100-sxm,llama-3.1-8b,prefill,512,0,30.0\n"
			   "h100-sxm,llama-3.1-8b,prefill,4096,0,200.0\n";
	struct perf_profile *p = NULL;
	struct diag d;
	if (load_profile(&p, &f.pm, text, &d))
		fail_msg("%s", d.msg);
	assert_int_equal(perf_profile_decode_points(p), 3);
	assert_int_equal(perf_profile_prefill_points(p), 2);
	struct perf_model pm = f.pm;
	perf_model_set_profile(&pm, p);
	/* at a measured shape the measurement itself */
	struct perf_batch b1 = perf_decode_batch(1, 1000), b8 = perf_decode_batch(8, 1000);
	assert_close(perf_step_ns(&pm, &b1), 9.0e6, 1e-12);
	assert_close(perf_step_ns(&pm, &b8), 10.0e6, 1e-12);
	struct perf_batch pf = perf_prefill_batch(512, 0);
	assert_close(perf_step_ns(&pm, &pf), 30.0e6, 1e-12);
	/* two contexts at one batch size: their ratios' geometric mean */
	struct perf_batch c1 = perf_decode_batch(64, 1000), c4 = perf_decode_batch(64, 4000);
	double r1 = 14.0e6 / perf_step_analytic_ns(&f.pm, &c1);
	double r4 = 20.0e6 / perf_step_analytic_ns(&f.pm, &c4);
	assert_close(perf_profile_ratio(p, &c1), sqrt(r1 * r4), 1e-12);
	/* between measured batch sizes the ratio lies between its neighbours
	 * (Steffen's interpolation is monotone) */
	struct perf_batch b3 = perf_decode_batch(3, 1000);
	double r_1 = perf_profile_ratio(p, &b1), r_8 = perf_profile_ratio(p, &b8);
	double r_3 = perf_profile_ratio(p, &b3);
	assert_true(r_3 >= fmin(r_1, r_8) && r_3 <= fmax(r_1, r_8));
	/* clamped outside the measured range */
	struct perf_batch b512 = perf_decode_batch(512, 1000);
	assert_close(perf_profile_ratio(p, &b512), perf_profile_ratio(p, &c1), 1e-12);
	/* two prefill points: linear in log(batch) */
	struct perf_batch p2 = perf_prefill_batch(1448, 0); /* ~ geometric middle */
	double ra = perf_profile_ratio(p, &pf);
	struct perf_batch p4096 = perf_prefill_batch(4096, 0);
	double rb = perf_profile_ratio(p, &p4096);
	double x = (log(1448) - log(512)) / (log(4096) - log(512));
	assert_close(perf_profile_ratio(p, &p2), ra + x * (rb - ra), 1e-12);
	/* a decode run is scaled by the ratio at its batch size, exactly */
	assert_close(perf_decode_run_ns(&pm, &b8, 1000),
		     perf_decode_run_ns(&f.pm, &b8, 1000) * r_8, 1e-12);
	/* mixed batches use the prefill curve */
	struct perf_batch mix = { .new_tokens = 520, .seqs = 9, .decode_seqs = 8,
				  .attn_pairs = 8 * 1000 + 512 * 513 / 2, .kv_read_tokens = 8 * 1000 + 512 };
	struct perf_breakdown br;
	perf_step_breakdown(&pm, &mix, &br);
	assert_close(br.profile_ratio, perf_profile_ratio(p, &mix), 1e-15);
	assert_close(br.step_ns, perf_step_ns(&pm, &mix), 1e-15);
	perf_profile_free(p);

	/* a profile with only decode rows serves prefill steps too */
	const char *only = "phase,batch,context_tokens,step_ms\ndecode,4,100,8\n";
	assert_int_equal(load_profile(&p, &f.pm, only, &d), 0);
	struct perf_batch b4 = perf_decode_batch(4, 100);
	assert_close(perf_profile_ratio(p, &pf), 8e6 / perf_step_analytic_ns(&f.pm, &b4), 1e-12);
	perf_profile_free(p);
	catalog_free(f.cat);
}

static void test_profile_errors(void **state)
{
	(void)state;
	struct pf f;
	model_for(&f);
	struct perf_profile *p = NULL;
	struct diag d;
	assert_int_equal(load_profile(&p, &f.pm, "hardware,model,phase,batch,context_tokens,step_ms\n"
					"h100-sxm,llama-3.1-8b,decode,1,100,5\n"
					"a100,llama-3.1-8b,decode,2,100,5\n", &d), DIAG_EINPUT);
	assert_string_equal(d.msg, "prof.csv:3: profile row is for hardware 'a100', not "
				   "'h100-sxm' (use the catalogue id)");
	assert_null(p);
	assert_int_equal(load_profile(&p, &f.pm, "phase,batch,context_tokens,step_ms\n"
					"warmup,1,100,5\n", &d), DIAG_EINPUT);
	assert_string_equal(d.msg, "prof.csv:2: phase 'warmup' (expected decode or prefill)");
	assert_int_equal(load_profile(&p, &f.pm, "phase,batch,context_tokens,step_ms\n"
					"decode,0,100,5\n", &d), DIAG_EINPUT);
	assert_non_null(strstr(d.msg, "prof.csv:2: expected a whole batch >= 1"));
	assert_int_equal(load_profile(&p, &f.pm, "phase,batch,step_ms\ndecode,1,5\n", &d),
			 DIAG_EINPUT);
	assert_non_null(strstr(d.msg, "missing column"));
	assert_int_equal(load_profile(&p, &f.pm, "phase,batch,context_tokens,step_ms\n", &d),
			 DIAG_EINPUT);
	assert_non_null(strstr(d.msg, "no rows"));
	diag_init(&d);
	assert_int_equal(perf_profile_load(&p, "/nonexistent.csv", &f.pm, &d), DIAG_EIO);
	perf_profile_free(NULL);
	catalog_free(f.cat);
}

/* "inherits": a copy of an earlier engine, its names aside, with the
 * entry's own keys over it; a name that is not an earlier engine's is an
 * error at the key. */
/* The defaults each engine takes from the device's memory at start-up:
 * vLLM's get_batch_defaults (8192 tokens and 1024 sequences from 70 GiB,
 * not on an A100; 2048 and 256 below), SGLang's chunked_prefill_size and
 * cuda_graph_max_bs by memory step, llama-server's four slots, Ollama's
 * one; and a step list that does not ascend is refused by key. */
static void test_gpu_defaults(void **state)
{
	(void)state;
	static struct engine_table t;
	struct catalog *cat = NULL;
	struct diag d;
	diag_init(&d);
	assert_int_equal(catalog_load(&cat, NULL, &d), 0);
	assert_int_equal(engine_table_load(&t, NULL, &d), 0);
	static const struct {
		const char *engine, *hw;
		int32_t tp;
		int64_t chunk;
		int seqs;
		double graphs;
	} cases[] = {
		{ "vllm", "h100-sxm", 1, 8192, 1024, 512 },
		{ "vllm", "h200", 1, 8192, 1024, 512 },
		{ "vllm", "b200", 1, 8192, 1024, 512 },
		{ "vllm", "a100-sxm-80gb", 1, 2048, 256, 512 },
		{ "vllm", "l40s", 1, 2048, 256, 512 },
		{ "vllm", "l4", 1, 2048, 256, 512 },
		{ "vllm", "rtx-4090", 1, 2048, 256, 512 },
		{ "vllm-2025", "l40s", 1, 2048, 256, 512 },
		{ "vllm-2025", "h100-sxm", 1, 8192, 1024, 512 },
		{ "sglang", "l4", 1, 2048, 1024, 24 },
		{ "sglang", "l4", 4, 2048, 1024, 80 },
		{ "sglang", "l40s", 1, 4096, 1024, 32 },
		{ "sglang", "l40s", 8, 4096, 1024, 160 },
		{ "sglang", "h100-sxm", 2, 8192, 1024, 256 },
		{ "sglang", "h200", 8, 8192, 1024, 512 },
		{ "sglang", "b200", 8, 16384, 1024, 512 },
		{ "llama.cpp", "rtx-4090", 1, 512, 4, 0 },
		{ "ollama", "rtx-4090", 1, 512, 1, 0 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct cat_hardware *hw = catalog_hardware(cat, cases[i].hw);
		const struct engine_profile *e = engine_find(&t, cases[i].engine);
		assert_non_null(hw);
		assert_non_null(e);
		struct engine_params par;
		engine_resolve(e, hw->family ? hw->family->id : NULL, &par);
		if (engine_default_chunk(&par, hw) != cases[i].chunk ||
		    engine_default_max_num_seqs(&par, hw) != cases[i].seqs ||
		    engine_default_graph_max_seqs(&par, hw, cases[i].tp) != cases[i].graphs)
			fail_msg("%s on %s at TP %d: chunk %lld seqs %d graphs %g", cases[i].engine,
				 cases[i].hw, cases[i].tp, (long long)engine_default_chunk(&par, hw),
				 engine_default_max_num_seqs(&par, hw),
				 engine_default_graph_max_seqs(&par, hw, cases[i].tp));
	}
	/* unified memory: no device-memory step (vLLM's query fails there) */
	const struct cat_hardware *spark = NULL;
	for (size_t i = 0; i < cat->hardware_count && !spark; i++)
		if (cat->hardware[i].unified_memory)
			spark = &cat->hardware[i];
	assert_non_null(spark);
	struct engine_params vp;
	engine_resolve(engine_find(&t, "vllm"), NULL, &vp);
	assert_int_equal(engine_default_chunk(&vp, spark), 2048);
	assert_null(engine_gpu_tier(&vp, spark));
	/* every engine says which release its launch command stands for */
	for (size_t i = 0; i < t.count; i++)
		assert_true(t.engines[i].launch_cli[0] && t.engines[i].launch_version[0] &&
			    t.engines[i].launch_source[0]);
	const char *bad = "{\"schema_version\": 1, \"engines\": [{\"id\": \"x\", \"name\": \"X\", "
			  ENGINE_BODY(FIG(1, "fraction")) ", \"by_gpu_memory\": [{\"min_gib\": 70}, "
			  "{\"min_gib\": 20}]}]}";
	assert_int_equal(parse(&t, bad, &d), DIAG_EINPUT);
	assert_string_equal(d.msg, "engines.json: engines[0].by_gpu_memory[1].min_gib: expected a "
				   "number of GiB above the step before");
	const char *bad_cli = "{\"schema_version\": 1, \"engines\": [{\"id\": \"x\", \"name\": "
			      "\"X\", " ENGINE_BODY(FIG(1, "fraction")) ", \"launch\": {\"cli\": "
			      "\"tgi\", \"version\": \"1\", \"source\": \"s\", \"date\": \"2026-12\"}}]}";
	assert_int_equal(parse(&t, bad_cli, &d), DIAG_EINPUT);
	assert_string_equal(d.msg, "engines.json: engines[0].launch.cli: expected one of: vllm, "
				   "vllm-v0, sglang, trtllm, llama-server, ollama, mlx");
	catalog_free(cat);
}

static void test_engine_inherits(void **state)
{
	(void)state;
	static struct engine_table t;
	struct diag d;
	const char *two = "{\"schema_version\": 1, \"engines\": [{\"id\": \"x\", \"name\": \"X\", "
			  "\"aliases\": [\"ex\"], \"formats\": [\"bf16\"], "
			  ENGINE_BODY(FIG(1, "fraction")) ", \"compile_cold_s\": " FIG(27, "s")
			  ", \"image_gb\": " FIG(12, "GB") "}, {\"id\": \"y\", \"name\": \"Y\", "
			  "\"inherits\": \"x\", \"layer_overhead_us\": " FIG(5, "us")
			  ", \"keep_alive_s\": " FIG(300, "s") "}]}";
	assert_int_equal(parse(&t, two, &d), 0);
	const struct engine_profile *x = &t.engines[0], *y = &t.engines[1];
	assert_true(y->p.step_overhead_us == 100 && y->p.layer_overhead_us == 5);
	assert_true(x->p.layer_overhead_us == 2);
	assert_int_equal(y->alias_count, 0);
	assert_int_equal(y->format_count, 1);
	assert_true(y->startup.compile_cold_s == 27 && y->startup.image_gb == 12);
	assert_true(y->startup.keep_alive_s == 300 && x->startup.keep_alive_s == -1);
	const char *bad = "{\"schema_version\": 1, \"engines\": [{\"id\": \"y\", \"name\": \"Y\", "
			  "\"inherits\": \"x\"}]}";
	assert_int_equal(parse(&t, bad, &d), DIAG_EINPUT);
	assert_non_null(strstr(d.msg, "engines[0].inherits"));
	assert_non_null(strstr(d.msg, "expected the id of an engine listed before this one"));
	const char *unit = "{\"schema_version\": 1, \"engines\": [{\"id\": \"x\", \"name\": \"X\", "
			   ENGINE_BODY(FIG(1, "fraction")) ", \"warmup_s\": " FIG(1, "us") "}]}";
	assert_int_equal(parse(&t, unit, &d), DIAG_EINPUT);
	assert_non_null(strstr(d.msg, "warmup_s.unit"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_builtin_engines),
		cmocka_unit_test(test_engine_errors),
		cmocka_unit_test(test_engine_inherits),
		cmocka_unit_test(test_gpu_defaults),
		cmocka_unit_test(test_csvread),
		cmocka_unit_test(test_profile_override),
		cmocka_unit_test(test_profile_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
