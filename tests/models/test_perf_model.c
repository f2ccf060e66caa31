/* SPDX-License-Identifier: Apache-2.0
 * Tests for models/perf_model: each physical term on its own -- a
 * bandwidth-bound decode scales with bytes, a compute-bound prefill with
 * FLOPs, tensor parallelism adds all-reduce time over its link, pipeline
 * stages add hand-offs, MoE weight traffic grows with the batch until every
 * expert is read, MLA and GQA KV bytes, sliding windows, the per-step and
 * per-layer overheads of engines and families, FP16 accumulation and the
 * vector-rate fallback -- and perf_decode_run_ns against a brute-force sum
 * of perf_step_ns over seeded random batches of every kind of model.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "models/catalog.h"
#include "models/engine.h"
#include "models/memory.h"
#include "models/moe.h"
#include "models/perf_model.h"

struct fixture {
	struct catalog *cat;
	struct engine_table et;
};

static int setup(void **state)
{
	static struct fixture f;
	struct diag d;
	diag_init(&d);
	if (catalog_load(&f.cat, NULL, &d) || engine_table_load(&f.et, NULL, &d))
		return -1;
	*state = &f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	catalog_free(f->cat);
	return 0;
}

struct spec {
	const char *hw, *model, *wf, *kv, *engine;
	int tp, pp;
	double frac;
};

static void init_spec(struct perf_model *pm, const struct fixture *f, struct spec s)
{
	struct perf_opts o;
	perf_opts_init(&o);
	o.hardware = s.hw;
	o.model = s.model;
	o.weight_format = s.wf;
	o.kv_dtype = s.kv;
	o.engine = s.engine;
	o.engines = &f->et;
	o.tp = s.tp ? s.tp : 1;
	o.pp = s.pp ? s.pp : 1;
	o.gpu_expert_fraction = s.frac > 0 ? s.frac : 1;
	struct diag d;
	diag_init(&d);
	if (perf_model_init_opts(pm, f->cat, &o, &d))
		fail_msg("%s/%s/%s: %s", s.hw, s.model, s.wf ? s.wf : "bf16", d.msg);
	assert_true(perf_model_check(pm));
}

static void init_ok(struct perf_model *pm, const struct fixture *f, const char *hw,
		    const char *model, const char *wf, const char *kv)
{
	init_spec(pm, f, (struct spec){ hw, model, wf, kv, NULL, 1, 1, 1 });
}

static void assert_close(double got, double want, double rel)
{
	double err = fabs(got - want) / fmax(fabs(want), 1e-300);
	if (err > rel)
		fail_msg("got %.17g, want %.17g (relative error %.3g > %.3g)", got, want, err, rel);
}

static void test_init_and_constants(void **state)
{
	const struct fixture *f = *state;
	struct perf_model pm;
	init_ok(&pm, f, "H100", "meta-llama/Llama-3.1-8B-Instruct", NULL, NULL);
	assert_string_equal(pm.hardware_id, "h100-sxm");
	assert_string_equal(pm.model_id, "llama-3.1-8b");
	assert_string_equal(pm.weight_format_id, "bf16");
	assert_string_equal(pm.kv_dtype_id, "bf16");
	assert_string_equal(pm.family_id, "nvidia-hopper");
	assert_string_equal(pm.engine_id, "vllm");
	assert_int_equal(pm.matmul_dtype, CAT_DTYPE_BF16);
	assert_true(pm.kv_bytes_per_token == 131072);
	assert_true(pm.attn_flops_per_pair == 4.0 * 32 * 32 * 128);
	assert_true(pm.lm_head_flops_per_seq == 2.0 * 4096 * 128256);
	assert_true(pm.matmul_peak_flops == 989.4e12);
	assert_false(pm.dequantizing);

	/* fp8 on Ampere: FP8 bytes, BF16 math (no FP8 tensor cores) */
	init_ok(&pm, f, "a100", "llama-3.1-8b", "fp8", NULL);
	assert_int_equal(pm.matmul_dtype, CAT_DTYPE_BF16);
	assert_true(pm.matmul_peak_flops == 312e12);
	assert_true(pm.dequantizing);
	init_ok(&pm, f, "h100-sxm", "llama-3.1-8b", "fp8", "fp8");
	assert_int_equal(pm.matmul_dtype, CAT_DTYPE_FP8);
	assert_true(pm.kv_bytes_per_token == 65536);
	assert_false(pm.dequantizing);
}

/* Step floors (models/floors.h) on a hand-computed TP 8 decode step:
 * DeepSeek-V3 (61 layers: 3 dense, 58 MoE with one shared expert, MLA) in
 * INT4-AWQ on 8 H100s under vLLM, batch 1.
 *   GEMM-class kernels = 3 x (5 MLA + 2 MLP) + 58 x (5 + 3 MoE + 2 shared)
 *                        + 1 lm-head = 21 + 580 + 1 = 602, at 9 us
 *   small kernels      = 3 x (7 + 2) + 58 x (7 + 5 + 2) + 6 = 27 + 812 + 6
 *                        = 845, at 4 us inside a CUDA graph
 *   kernel floor       = 602 x 9 + 845 x 4 us = 8.798 ms
 *   all-reduce = 2 x 61 x (7 us + 2 x 7/8 x 7168 x 2 bytes / (link x 0.9))
 *   fixed    = Hopper's step cost (51.8, fitted: families.json) + 400 (vLLM
 *              host) + 61 x 2 + 58 x 5 us = 863.8 us
 * The roofline of its operations (~1 ms: 37B active weights at 4 bits
 * over 8 GPUs) is far below the kernel floor, which binds. */
static void test_floors_tp8_decode(void **state)
{
	const struct fixture *f = *state;
	struct perf_model pm;
	init_spec(&pm, f, (struct spec){ "h100-sxm", "deepseek-v3", "int4-awq", NULL, "vllm", 8,
					 1, 1 });
	assert_true(pm.floors.gemm_kernels == 602);
	assert_true(pm.floors.small_kernels == 845);
	assert_true(pm.floors.kernel_graph_ns == 4000 && pm.floors.gemm_ns == 9000);
	double fixed = (catalog_family(f->cat, "nvidia-hopper")->step_overhead_us + 812) * 1e3;
	assert_close(pm.overhead_ns, fixed, 1e-12);
	double link = pm.link_bw_bytes * PERF_LINK_EFF;
	double ar = 122 * (7000 + 2.0 * 7 / 8 * 7168 * 2 / link * 1e9);
	struct perf_batch b = perf_decode_batch(1, 1024);
	struct perf_breakdown br;
	perf_step_breakdown(&pm, &b, &br);
	assert_close(br.launch_ns, 8798e3, 1e-12);
	assert_close(br.comm_ns, ar, 1e-12);
	assert_true(br.ops_ns < 0.25 * br.launch_ns);
	assert_true(br.floor_binds);
	assert_int_equal(br.bound, PERF_BOUND_LAUNCH);
	assert_close(br.step_ns, fixed + 8798e3 + ar, 1e-12);
	assert_close(perf_step_ns(&pm, &b), br.step_ns, 1e-15);

	/* a batch larger than vLLM captures (512) launches eagerly: no kernel
	 * below the host's 10 us per launch */
	struct perf_batch big = perf_decode_batch(600, 10);
	perf_step_breakdown(&pm, &big, &br);
	assert_close(br.launch_ns, (602 + 845) * 10000.0, 1e-12);

	/* one GPU at a large batch: the roofline binds, not the floor */
	struct perf_model one;
	init_spec(&one, f, (struct spec){ "h100-sxm", "llama-3.1-8b", "bf16", NULL, "vllm", 1, 1,
					  1 });
	struct perf_batch wide = perf_decode_batch(256, 2048);
	perf_step_breakdown(&one, &wide, &br);
	assert_false(br.floor_binds);
	assert_true(br.bound == PERF_BOUND_MEMORY || br.bound == PERF_BOUND_COMPUTE);
	assert_true(br.ops_ns > 5 * br.launch_ns);
	assert_close(br.step_ns, br.overhead_ns + br.ops_ns, 1e-12);

	/* engines without floors (llama.cpp) keep the additive model */
	struct perf_model lc;
	init_spec(&lc, f, (struct spec){ "h100-sxm", "deepseek-v3", "gguf-q4-k-m", NULL,
					 "llama.cpp", 8, 1, 1 });
	perf_step_breakdown(&lc, &b, &br);
	assert_true(br.launch_ns == 0 && !br.floor_binds);
}

/* Per-expert launches (vLLM before v0.8 on AWQ/GPTQ MoE: marlin_mm_moe
 * launches one kernel per expert of the layer for each expert GEMM).
 * DeepSeek-V3 INT4-AWQ on 8 H100s under vllm-v0, batch 1:
 *   the two grouped GEMMs of the 58 MoE layers leave the GEMM-class count:
 *     602 - 2 x 58 = 486 at 9 us
 *   845 small kernels at 4 us
 *   per-expert kernels: 2 x 58 x 256 = 29,696; 8 experts get the token
 *     (a short GEMM each at the small kernel's 4 us), 248 exit at once
 *     (0.5 us inside the graph)
 *   kernel floor = 486 x 9 + 845 x 4 + 116 x (8 x 4 + 248 x 0.5) us
 *                = 4,374 + 3,380 + 18,096 us = 25.850 ms
 * Formats the engine runs with its Triton fused-MoE kernel (FP8) and
 * engines with the later one-kernel Marlin MoE (vLLM V1) keep the grouped
 * count. */
static void test_floors_per_expert_launches(void **state)
{
	const struct fixture *f = *state;
	struct perf_model pm;
	init_spec(&pm, f, (struct spec){ "h100-sxm", "deepseek-v3", "int4-awq", NULL, "vllm-v0",
					 8, 1, 1 });
	assert_true(pm.floors.gemm_kernels == 486 && pm.floors.small_kernels == 845);
	assert_true(pm.floors.expert_kernels == 256 && pm.floors.expert_gemm_layers == 116);
	assert_true(pm.floors.expert_empty_ns == 500 && pm.floors.expert_eager_ns == 3800);
	struct perf_batch b = perf_decode_batch(1, 1024);
	struct perf_breakdown br;
	perf_step_breakdown(&pm, &b, &br);
	assert_close(br.experts_touched, 8, 1e-12);
	assert_close(br.launch_ns, 25850e3, 1e-12);
	assert_true(br.kernels == 486 + 845 + 29696);
	assert_true(br.floor_binds && br.graphed);

	/* at 100 sequences most experts get tokens: each of them a short GEMM */
	struct perf_batch wide = perf_decode_batch(100, 1152);
	perf_step_breakdown(&pm, &wide, &br);
	double dx = moe_distinct_experts(&pm.routing, 100);
	assert_true(dx > 240 && dx < 250);
	assert_close(br.launch_ns, (486 * 9 + 845 * 4 + 116 * (dx * 4 + (256 - dx) * 0.5)) * 1e3,
		     1e-12);
	assert_true(br.floor_binds);

	/* a prefill chunk runs outside the graph: every kernel launched one by
	 * one, the per-expert ones at the C++ loop's 3.8 us or their 4 us */
	struct perf_batch pre = perf_prefill_batch(1024, 0);
	perf_step_breakdown(&pm, &pre, &br);
	dx = moe_distinct_experts(&pm.routing, 1024);
	assert_close(br.launch_ns, (486 * 10 + 845 * 10 + 116 * (dx * 4 + (256 - dx) * 3.8)) * 1e3,
		     1e-12);

	/* FP8 runs the Triton fused-MoE kernel: no per-expert launches */
	struct perf_model fp8;
	init_spec(&fp8, f, (struct spec){ "h100-sxm", "deepseek-v3", "fp8", NULL, "vllm-v0", 8, 1,
					  1 });
	assert_true(fp8.floors.expert_kernels == 0 && fp8.floors.gemm_kernels == 602);
	/* vLLM V1 runs one Marlin MoE kernel for all experts */
	struct perf_model v1;
	init_spec(&v1, f, (struct spec){ "h100-sxm", "deepseek-v3", "int4-awq", NULL, "vllm", 8, 1,
					 1 });
	assert_true(v1.floors.expert_kernels == 0 && v1.floors.gemm_kernels == 602);
	/* under expert parallelism each GPU launches for its own experts only */
	struct perf_opts o;
	perf_opts_init(&o);
	o.hardware = "h100-sxm";
	o.model = "deepseek-v3";
	o.weight_format = "int4-awq";
	o.engine = "vllm-v0";
	o.tp = 8;
	o.ep = 8;
	o.engines = &f->et;
	struct diag d;
	diag_init(&d);
	struct perf_model ep;
	assert_int_equal(perf_model_init_opts(&ep, f->cat, &o, &d), 0);
	assert_true(ep.floors.expert_kernels == 32);
	perf_step_breakdown(&ep, &b, &br);
	assert_close(br.launch_ns, (486 * 9 + 845 * 4 + 116 * (1 * 4 + 31 * 0.5)) * 1e3, 1e-12);
}

/* Piecewise decode graphs (vLLM V1 v0.8-v0.10, profile vllm-2025): the
 * attention of each of the 61 layers runs eagerly between graph pieces at
 * 129 us more than inside a full graph.  DeepSeek-V3 INT4-AWQ on 8 H100s,
 * batch 1:
 *   kernel floor = 602 x 9 + 845 x 4 + 61 x 129 us
 *                = 5,418 + 3,380 + 7,869 us = 16.667 ms
 * the same step under the vllm profile (full decode graphs) keeps 8.798 ms;
 * a prefill chunk (no graph) is charged as before. */
static void test_floors_piecewise_graphs(void **state)
{
	const struct fixture *f = *state;
	struct perf_model pw, full;
	init_spec(&pw, f, (struct spec){ "h100-sxm", "deepseek-v3", "int4-awq", NULL, "vllm-2025",
					 8, 1, 1 });
	init_spec(&full, f, (struct spec){ "h100-sxm", "deepseek-v3", "int4-awq", NULL, "vllm",
					   8, 1, 1 });
	assert_true(pw.floors.attn_layers == 61 && pw.floors.piecewise_ns == 129e3);
	assert_true(full.floors.attn_layers == 0 && full.floors.piecewise_ns == 0);
	struct perf_batch b = perf_decode_batch(1, 1024);
	struct perf_breakdown br, bf;
	perf_step_breakdown(&pw, &b, &br);
	perf_step_breakdown(&full, &b, &bf);
	assert_close(br.launch_ns, 16667e3, 1e-12);
	assert_close(bf.launch_ns, 8798e3, 1e-12);
	assert_true(br.graphed && br.floor_binds);
	assert_close(br.step_ns - bf.step_ns, 61 * 129e3, 1e-9);
	/* outside a graph (a prefill chunk) nothing changes */
	struct perf_batch pre = perf_prefill_batch(1024, 0);
	assert_close(perf_step_ns(&pw, &pre), perf_step_ns(&full, &pre), 1e-12);
	/* one GPU, a dense model at a large batch: the roofline still binds
	 * (32 layers x 129 us stays below the weights and KV of 256 streams) */
	struct perf_model one;
	init_spec(&one, f, (struct spec){ "h100-sxm", "llama-3.1-8b", "bf16", NULL, "vllm-2025", 1,
					  1, 1 });
	assert_true(one.floors.attn_layers == 32);
	struct perf_batch wide = perf_decode_batch(256, 2048);
	perf_step_breakdown(&one, &wide, &br);
	assert_false(br.floor_binds);
}

/* Decode runs stay exact when the roofline crosses the kernel floor as the
 * context grows, and when the host overlaps the GPU (SGLang). */
static void test_floors_decode_run(void **state)
{
	const struct fixture *f = *state;
	const char *engines[] = { "vllm", "sglang" };
	for (size_t e = 0; e < 2; e++) {
		struct perf_model pm;
		init_spec(&pm, f, (struct spec){ "h100-sxm", "deepseek-v3", "int4-awq", NULL,
						 engines[e], 8, 1, 1 });
		struct perf_batch b0 = perf_decode_batch(4, 100);
		struct perf_batch last = perf_decode_batch(4, 100 + 99999);
		struct perf_breakdown x, y;
		perf_step_breakdown(&pm, &b0, &x);
		perf_step_breakdown(&pm, &last, &y);
		assert_true(x.floor_binds);   /* short contexts: the floor */
		assert_false(y.floor_binds);  /* long ones: the KV bytes */
		double brute = 0;
		for (int64_t i = 0; i < 100000; i++) {
			struct perf_batch bi = perf_decode_batch(4, 100 + i);
			brute += perf_step_ns(&pm, &bi);
		}
		assert_close(perf_decode_run_ns(&pm, &b0, 100000), brute, 1e-9);
	}
	/* SGLang overlaps its host work: the step is max(host, GPU) */
	struct perf_model sg;
	init_spec(&sg, f, (struct spec){ "h100-sxm", "deepseek-v3", "int4-awq", NULL, "sglang", 8,
					 1, 1 });
	struct perf_batch b = perf_decode_batch(1, 1024);
	struct perf_breakdown br;
	perf_step_breakdown(&sg, &b, &br);
	assert_true(br.host_overlap);
	assert_close(br.step_ns, br.overhead_ns - br.host_step_ns + br.launch_ns + br.comm_ns,
		     1e-12);
}

/* Expert parallelism: whole experts on each GPU, dispatch and combine per
 * MoE layer, and the busiest GPU's load. */
static void test_floors_expert_parallel(void **state)
{
	const struct fixture *f = *state;
	struct perf_model tp, ep;
	init_spec(&tp, f, (struct spec){ "h100-sxm", "deepseek-v3", "int4-awq", NULL, "vllm", 8, 1,
					 1 });
	struct perf_opts o;
	perf_opts_init(&o);
	o.hardware = "h100-sxm";
	o.model = "deepseek-v3";
	o.weight_format = "int4-awq";
	o.tp = 8;
	o.ep = 8;
	o.engines = &f->et;
	struct diag d;
	diag_init(&d);
	assert_int_equal(perf_model_init_opts(&ep, f->cat, &o, &d), 0);
	/* 58 MoE layers trade their all-reduce for two all-to-alls */
	assert_close(ep.ns_allreduce_fixed, (122 - 58) * 7000.0, 1e-12);
	assert_close(ep.floors.a2a_fixed_ns, 2 * 58 * 7000.0, 1e-12);
	/* 8 token-expert pairs over 8 GPUs: mean 1, sd sqrt(8 x 1/8 x 7/8),
	 * busiest ~ 1 + 0.935 x sqrt(2 ln 8) */
	double want = 1 + sqrt(8 * 0.125 * 0.875) * sqrt(2 * log(8.0));
	assert_close(floors_imbalance(&ep.floors, 8, 0), want, 1e-12);
	assert_true(floors_imbalance(&tp.floors, 8, 0) == 1);
	/* imbalance fades with the batch: 4096 tokens x 8 pairs */
	assert_true(floors_imbalance(&ep.floors, 4096 * 8, 0) < 1.05);
	struct perf_batch b = perf_decode_batch(64, 1024);
	struct perf_breakdown x, y;
	perf_step_breakdown(&tp, &b, &x);
	perf_step_breakdown(&ep, &b, &y);
	assert_true(y.imbalance > 1 && x.imbalance == 1);
	assert_true(y.alltoall_ns > 0 && x.alltoall_ns == 0);
	/* bad sizes are input errors */
	o.ep = 4;
	diag_init(&d);
	assert_int_equal(perf_model_init_opts(&ep, f->cat, &o, &d), DIAG_EINPUT);
	assert_non_null(strstr(d.msg, "expert_parallel_size 4"));
	o.ep = 8;
	o.model = "llama-3.1-70b";
	o.weight_format = "fp8";
	diag_init(&d);
	assert_int_equal(perf_model_init_opts(&ep, f->cat, &o, &d), DIAG_EINPUT);
}

/* An engine that cannot run latent attention in a format (mla_formats)
 * keeps a full K and V per head, split over the tensor-parallel GPUs; the
 * kernel counts still follow the checkpoint's MLA projections. */
static void test_mla_fallback(void **state)
{
	const struct fixture *f = *state;
	static struct engine_table et;
	et = f->et;
	struct engine_profile *v = NULL;
	for (size_t i = 0; i < et.count; i++)
		if (strcmp(et.engines[i].id, "vllm") == 0)
			v = &et.engines[i];
	assert_non_null(v);
	strcpy(v->mla_formats[0], "fp8");
	v->mla_format_count = 1;
	struct perf_opts o;
	perf_opts_init(&o);
	o.hardware = "h100-sxm";
	o.model = "deepseek-v3";
	o.weight_format = "int4-awq";
	o.tp = 8;
	o.engines = &et;
	struct perf_model awq, fp8;
	struct diag d;
	diag_init(&d);
	assert_int_equal(perf_model_init_opts(&awq, f->cat, &o, &d), 0);
	o.weight_format = "fp8";
	assert_int_equal(perf_model_init_opts(&fp8, f->cat, &o, &d), 0);
	assert_true(awq.mla_expanded && !fp8.mla_expanded);
	/* 61 layers x K and V x 128 heads x 192 x 2 bytes, 16 heads a GPU */
	assert_true(awq.kv_bytes_per_token == 61.0 * 2 * 128 * 192 * 2);
	assert_close(awq.kv_gpu_fraction, 1.0 / 8, 1e-15);
	assert_true(fp8.kv_bytes_per_token == 61.0 * (512 + 64) * 2);
	assert_true(awq.floors.gemm_kernels == fp8.floors.gemm_kernels);
	struct mem_opts mo;
	mem_opts_init(&mo);
	mo.hardware = "h100-sxm";
	mo.model = "deepseek-v3";
	mo.weight_format = "int4-awq";
	mo.tp = 8;
	struct mem_plan latent, full;
	assert_int_equal(mem_plan_opts(&latent, f->cat, &mo, &d), 0);
	mo.mla_expanded = true;
	assert_int_equal(mem_plan_opts(&full, f->cat, &mo, &d), 0);
	assert_true(latent.kv_gpu_bytes_per_token == 61 * (512 + 64) * 2);
	assert_true(full.kv_gpu_bytes_per_token == 61 * 2 * 16 * 192 * 2);
	assert_true(full.kv_capacity_tokens < latent.kv_capacity_tokens / 10);
}

/* The fixed cost: family step + engine step + layers x engine layer cost
 * (+ MoE layers x the engine's MoE-layer cost), engine overrides by family. */
static void test_overheads(void **state)
{
	const struct fixture *f = *state;
	struct perf_model pm;
	const struct cat_family *dc = catalog_family(f->cat, "nvidia-blackwell");
	const struct engine_profile *lc = engine_find(&f->et, "llama.cpp");
	struct engine_params p;
	engine_resolve(lc, "nvidia-blackwell", &p);
	assert_true(p.layer_overhead_us != lc->p.layer_overhead_us); /* an override */
	init_spec(&pm, f, (struct spec){ "b200", "llama-2-7b", "gguf-q4-0", NULL, "llama.cpp",
					 1, 1, 1 });
	assert_close(pm.overhead_ns, (dc->step_overhead_us + p.step_overhead_us +
				      32 * p.layer_overhead_us) * 1e3, 1e-12);
	/* the same engine on an Ada card keeps its default per-layer cost */
	init_spec(&pm, f, (struct spec){ "rtx-4090", "llama-2-7b", "gguf-q4-0", NULL, "llama.cpp",
					 1, 1, 1 });
	const struct cat_family *ada = catalog_family(f->cat, "nvidia-ada");
	assert_close(pm.overhead_ns, (ada->step_overhead_us + lc->p.step_overhead_us +
				      32 * lc->p.layer_overhead_us) * 1e3, 1e-12);
	/* a tiny step on a fast GPU is overhead bound */
	struct perf_model tiny = pm;
	tiny.ns_weights = tiny.ns_weights_mv = 1;
	tiny.ns_lm_head = tiny.ns_lm_head_mv = 0;
	tiny.ns_per_kv_token = 0;
	struct perf_batch one = perf_decode_batch(1, 10);
	struct perf_breakdown br;
	perf_step_breakdown(&tiny, &one, &br);
	assert_int_equal(br.bound, PERF_BOUND_OVERHEAD);
	/* MoE layers add the engine's MoE-layer cost */
	init_spec(&pm, f, (struct spec){ "rtx-pro-6000", "qwen3-30b-a3b", "gguf-q4-k-m", NULL,
					 "llama.cpp", 1, 1, 1 });
	engine_resolve(lc, "nvidia-blackwell-rtx", &p);
	const struct cat_family *bw = catalog_family(f->cat, "nvidia-blackwell-rtx");
	assert_close(pm.overhead_ns, (bw->step_overhead_us + p.step_overhead_us +
				      48 * p.layer_overhead_us + 48 * p.moe_layer_overhead_us) * 1e3,
		     1e-12);
}

static void test_errors(void **state)
{
	const struct fixture *f = *state;
	struct perf_model pm;
	struct diag d;
	struct perf_opts o;

	perf_opts_init(&o);
	o.hardware = "B300";
	o.model = "llama-3.1-8b";
	diag_init(&d);
	assert_int_equal(perf_model_init_opts(&pm, f->cat, &o, &d), DIAG_EINPUT);
	assert_non_null(strstr(d.msg, "unknown hardware 'B300' (known: h100-sxm, "));

	o.hardware = "h100-sxm";
	o.engine = "deepspeed";
	diag_init(&d);
	assert_int_equal(perf_model_init_opts(&pm, f->cat, &o, &d), DIAG_EINPUT);
	assert_non_null(strstr(d.msg, "unknown engine 'deepspeed' (known: vllm, "));

	o.engine = NULL;
	o.tp = 0;
	diag_init(&d);
	assert_int_equal(perf_model_init_opts(&pm, f->cat, &o, &d), DIAG_EINPUT);
	assert_non_null(strstr(d.msg, "expected whole numbers from 1 to 1024"));

	/* a system cannot split a model over more GPUs than it has */
	o.tp = 4;
	o.hardware = "ws-2x-rtx-5090";
	diag_init(&d);
	assert_int_equal(perf_model_init_opts(&pm, f->cat, &o, &d), DIAG_EINPUT);
	assert_non_null(strstr(d.msg, "ws-2x-rtx-5090 has 2 GPUs"));

	/* unified memory has no separate host RAM to offload to */
	o.tp = 1;
	o.hardware = "dgx-spark";
	o.model = "qwen3-30b-a3b";
	o.gpu_expert_fraction = 0.5;
	diag_init(&d);
	assert_int_equal(perf_model_init_opts(&pm, f->cat, &o, &d), DIAG_EINPUT);
	assert_non_null(strstr(d.msg, "unified memory"));

	diag_init(&d);
	assert_int_equal(perf_model_init(&pm, f->cat, "h100-sxm", "llama-3.1-8b", "q4_k_x", NULL,
					 1, &d), DIAG_EINPUT);
	assert_non_null(strstr(d.msg, "unknown weight format 'q4_k_x'"));
}

/* A batch-1 decode is bandwidth bound and its time is bytes over the
 * effective bandwidth: half the bytes, about half the time. */
static void test_decode_scales_with_bytes(void **state)
{
	const struct fixture *f = *state;
	const char *hws[] = { "h100-sxm", "h200", "a100-sxm-80gb", "l40s", "rtx-4090",
			      "rtx-pro-6000", "b200" };
	for (size_t h = 0; h < sizeof(hws) / sizeof(hws[0]); h++) {
		struct perf_model bf16, fp8;
		init_ok(&bf16, f, hws[h], "llama-3.1-8b", "bf16", NULL);
		init_ok(&fp8, f, hws[h], "llama-3.1-8b", "fp8", NULL);
		struct perf_batch b = perf_decode_batch(1, 1024);
		struct perf_breakdown x, y;
		perf_step_breakdown(&bf16, &b, &x);
		perf_step_breakdown(&fp8, &b, &y);
		assert_int_equal(x.bound, PERF_BOUND_MEMORY);
		if (y.floor_binds) {
			/* FP8 weights stream faster than the step's ~360 kernels
			 * launch (H200, B200): the kernel floor sets the time */
			assert_int_equal(y.bound, PERF_BOUND_LAUNCH);
			assert_close(y.step_ns, y.overhead_ns + y.launch_ns, 1e-12);
			assert_true(y.launch_ns > y.ops_ns);
			continue;
		}
		assert_int_equal(y.bound, PERF_BOUND_MEMORY);
		assert_true(x.compute_ns < 0.05 * x.memory_ns);
		assert_close(x.step_ns, perf_step_ns(&bf16, &b), 1e-15);
		/* every operation is memory bound: the step is bytes / bandwidth */
		double bw = bf16.mem_bw_bytes * bf16.eff_bw * bf16.engine.bw_scale * bf16.die_factor;
		assert_close(x.memory_bound_ns, x.bytes / bw * 1e9, 1e-9);
		assert_close(x.step_ns, x.overhead_ns + x.memory_bound_ns, 1e-12);
		/* 6,979,321,856 linear weights, 525,602,816 that stay 16-bit */
		assert_close(x.weight_bytes, (6979321856.0 + 525602816.0) * 2, 1e-12);
		assert_close(y.weight_bytes, 6979321856.0 + 525602816.0 * 2, 1e-12);
		double ratio = (y.step_ns - y.overhead_ns) / (x.step_ns - x.overhead_ns);
		assert_true(ratio > 0.5 && ratio < 0.6);
	}
	/* Llama-3.1-8B BF16 on H100 at batch 1: between 5 and 10 ms per token */
	struct perf_model pm;
	init_ok(&pm, f, "h100-sxm", "llama-3.1-8b", NULL, NULL);
	struct perf_batch b = perf_decode_batch(1, 1024);
	double ns = perf_step_ns(&pm, &b);
	assert_true(ns > 5e6 && ns < 10e6);
	/* a longer context adds exactly its KV bytes */
	struct perf_batch longer = perf_decode_batch(1, 100000);
	assert_close(perf_step_ns(&pm, &longer) - ns,
		     (100000 - 1024) * pm.kv_bytes_per_token /
			     (pm.mem_bw_bytes * pm.eff_bw * pm.engine.bw_scale) * 1e9, 1e-9);
	/* weight-only formats the engine dequantizes stream more slowly */
	struct perf_model q4;
	init_spec(&q4, f, (struct spec){ "rtx-4090", "llama-2-7b", "gguf-q4-0", NULL, "llama.cpp",
					 1, 1, 1 });
	assert_true(q4.dequantizing);
	double q4_bw = q4.mem_bw_bytes * q4.eff_bw * q4.engine.bw_scale * q4.engine.quant_bw_scale;
	double linear_bytes = (q4.dense_weight_bytes - 0) /* norms are tiny */;
	assert_close(q4.ns_weights, linear_bytes / q4_bw * 1e9, 1e-3);
}

/* A large prefill is compute bound and scales with FLOPs; attention is
 * quadratic; FP8 math halves the matmul time. */
static void test_prefill_scales_with_flops(void **state)
{
	const struct fixture *f = *state;
	const char *models[] = { "llama-3.1-8b", "llama-2-7b", "qwen2.5-7b", "llama-3.1-70b" };
	for (size_t i = 0; i < sizeof(models) / sizeof(models[0]); i++) {
		struct perf_model pm;
		init_ok(&pm, f, "h200", models[i], NULL, NULL);
		struct perf_batch a = perf_prefill_batch(8192, 0);
		struct perf_batch b = perf_prefill_batch(16384, 0);
		struct perf_breakdown x, y;
		perf_step_breakdown(&pm, &a, &x);
		perf_step_breakdown(&pm, &b, &y);
		assert_int_equal(x.bound, PERF_BOUND_COMPUTE);
		assert_int_equal(y.bound, PERF_BOUND_COMPUTE);
		double rate = pm.matmul_peak_flops * pm.eff_compute;
		/* the matrices: FLOPs over the rate, exactly */
		assert_close(x.matmul_flops, 8192.0 * pm.matmul_flops_per_token, 1e-12);
		assert_close(pm.ns_per_token * 8192, x.matmul_flops / rate * 1e9, 1e-9);
		/* attention is quadratic: twice the tokens, more than twice the time */
		assert_true(y.compute_ns > 2 * x.compute_ns);
		assert_true(y.attn_flops > 3.9 * x.attn_flops);
		assert_true(x.flops_fraction > 0.4 && x.flops_fraction <= pm.eff_compute);
	}
	struct perf_model bf16, fp8;
	init_ok(&bf16, f, "h100-sxm", "llama-3.1-8b", "bf16", NULL);
	init_ok(&fp8, f, "h100-sxm", "llama-3.1-8b", "fp8", NULL);
	assert_close(fp8.ns_per_token / bf16.ns_per_token, 989.4 / 1978.9, 1e-12);
	struct perf_batch p = perf_prefill_batch(8192, 0);
	struct perf_breakdown x, y;
	perf_step_breakdown(&bf16, &p, &x);
	perf_step_breakdown(&fp8, &p, &y);
	assert_true(y.compute_ns < 0.65 * x.compute_ns);
}

/* llama.cpp accumulates FP16 matmuls in FP16: a GeForce card runs them at
 * twice its FP32-accumulate rate; vLLM does not. */
static void test_fp16_accumulate(void **state)
{
	const struct fixture *f = *state;
	const struct cat_hardware *hw = catalog_hardware(f->cat, "rtx-4090");
	assert_true(hw->tflops_fp16acc[CAT_DTYPE_FP16] > hw->tflops[CAT_DTYPE_BF16]);
	struct perf_model lc, vl;
	init_spec(&lc, f, (struct spec){ "rtx-4090", "llama-2-7b", "fp16", NULL, "llama.cpp", 1, 1, 1 });
	init_spec(&vl, f, (struct spec){ "rtx-4090", "llama-2-7b", "fp16", NULL, "vllm", 1, 1, 1 });
	assert_true(lc.matmul_peak_flops == hw->tflops_fp16acc[CAT_DTYPE_FP16] * 1e12);
	assert_true(vl.matmul_peak_flops == hw->tflops[CAT_DTYPE_BF16] * 1e12);
	/* on a card without a separate figure nothing changes */
	init_spec(&lc, f, (struct spec){ "h100-sxm", "llama-2-7b", "fp16", NULL, "llama.cpp", 1, 1, 1 });
	assert_true(lc.matmul_peak_flops == 989.4e12);
}

/* Apple GPUs publish no tensor rate: matmuls run at the FP32 vector rate,
 * estimated from the family's rate per core where the chip has none. */
static void test_vector_fallback(void **state)
{
	const struct fixture *f = *state;
	struct perf_model pm;
	init_spec(&pm, f, (struct spec){ "apple-m2-max-30c", "llama-2-7b", "fp16", NULL,
					 "llama.cpp", 1, 1, 1 });
	assert_true(pm.vector_fallback);
	assert_false(pm.rate_estimated);
	assert_close(pm.matmul_peak_flops, 10.7e12, 1e-12);
	const struct cat_hardware *m3 = catalog_hardware(f->cat, "apple-m3-max-40c");
	assert_true(m3->fp32_vector_tflops == 0 && m3->gpu_cores == 40);
	init_spec(&pm, f, (struct spec){ "apple-m3-max-40c", "llama-2-7b", "fp16", NULL,
					 "llama.cpp", 1, 1, 1 });
	assert_true(pm.rate_estimated);
	double est = perf_vector_flops_estimate(f->cat, m3);
	assert_close(pm.matmul_peak_flops, est, 1e-12);
	/* the family's chips publish 0.32-0.36 TFLOPS per core */
	assert_true(est > 40 * 0.3e12 && est < 40 * 0.4e12);
}

/* Core clock: llama.cpp's quantized matmuls run at its FLOPs per SM-clock
 * times SMs x boost clock, not at the tensor peak; its matrix-vector kernels
 * stream at most its bytes per core-clock (fewer for sub-byte weights); a
 * GPU with more bandwidth per SM-clock than that (an H100) is held to it, a
 * GeForce card is not; engines without these figures keep the peak model. */
static void test_core_clock(void **state)
{
	const struct fixture *f = *state;
	const struct engine_profile *lc = engine_find(&f->et, "llama.cpp");
	const struct cat_hardware *h100 = catalog_hardware(f->cat, "h100-sxm");
	double core_hz = perf_core_clock_hz(f->cat, h100);
	assert_close(core_hz, 132 * 1980e6, 1e-12);
	struct perf_model q4, f16, vl, ada;
	init_spec(&q4, f, (struct spec){ "h100-sxm", "llama-2-7b", "gguf-q4-0", NULL, "llama.cpp",
					 1, 1, 1 });
	assert_true(q4.issue_bound_matmul);
	/* at the family's share of the engine's per-clock rate; Hopper gives
	 * no SM watts, so the H100 holds its rated clock */
	double issue;
	struct diag d;
	diag_init(&d);
	assert_int_equal(catalog_eff_issue(f->cat, h100->family, &issue, &d), 0);
	assert_true(q4.eff_issue == issue && q4.sustained_clock == 1);
	assert_close(q4.ns_per_token,
		     q4.dense_flops_per_token /
			     (core_hz * lc->p.quant_matmul_flops_per_core_clock * q4.eff_issue) * 1e9,
		     1e-12);
	/* the H100's 3.35 TB/s is more than its SMs stream: the cap sets the
	 * weight time */
	double wbytes = q4.dense_weight_bytes;
	double cap = core_hz * lc->p.quant_matvec_bytes_per_core_clock;
	assert_true(cap < h100->mem_bw_gbs * 1e9 * q4.eff_bw * lc->p.quant_bw_scale);
	assert_true(fabs(q4.ns_weights_mv / (wbytes / cap * 1e9) - 1) < 0.01); /* norms aside */
	/* only for steps those kernels run: up to 8 tokens (MMVQ_MAX_BATCH_SIZE);
	 * larger batches go through MMQ and stream at the bandwidth */
	assert_true(q4.matvec_max_tokens == 8);
	double stream = h100->mem_bw_gbs * 1e9 * q4.eff_bw * lc->p.quant_bw_scale;
	assert_true(fabs(q4.ns_weights / (wbytes / stream * 1e9) - 1) < 0.01);
	assert_true(q4.ns_weights < q4.ns_weights_mv);
	struct perf_breakdown b8, b9;
	struct perf_batch d8 = perf_decode_batch(8, 100), d9 = perf_decode_batch(9, 100);
	perf_step_breakdown(&q4, &d8, &b8);
	perf_step_breakdown(&q4, &d9, &b9);
	assert_true(b9.weights_ns < 0.9 * b8.weights_ns);
	/* F16 goes through cuBLAS at the tensor rate and streams at the larger
	 * 16-bit cap */
	init_spec(&f16, f, (struct spec){ "h100-sxm", "llama-2-7b", "fp16", NULL, "llama.cpp",
					  1, 1, 1 });
	assert_false(f16.issue_bound_matmul);
	assert_true(fabs(f16.ns_weights_mv / (f16.dense_weight_bytes /
					   (core_hz * lc->p.matvec_bytes_per_core_clock) * 1e9) -
			 1) < 0.01);
	/* vLLM has neither figure */
	init_spec(&vl, f, (struct spec){ "h100-sxm", "llama-2-7b", "int4-awq", NULL, "vllm", 1, 1,
					 1 });
	assert_false(vl.issue_bound_matmul);
	assert_true(vl.matvec_max_tokens == 0 && vl.ns_weights == vl.ns_weights_mv);
	assert_close(vl.ns_per_token, vl.dense_flops_per_token /
				      (vl.matmul_peak_flops * vl.eff_compute * vl.engine.compute_scale) *
				      1e9, 1e-12);
	/* an RTX 4090 streams its 1 TB/s below the cap: bandwidth bound */
	init_spec(&ada, f, (struct spec){ "rtx-4090", "llama-2-7b", "gguf-q4-0", NULL, "llama.cpp",
					  1, 1, 1 });
	const struct cat_hardware *r4090 = catalog_hardware(f->cat, "rtx-4090");
	assert_true(perf_core_clock_hz(f->cat, r4090) * lc->p.quant_matvec_bytes_per_core_clock >
		    r4090->mem_bw_gbs * 1e9 * ada.eff_bw * lc->p.quant_bw_scale);
	/* a core count without a clock takes the family's mean clock; no core
	 * count, no core clock */
	const struct cat_hardware *m6 = catalog_hardware(f->cat, "mac-mini-m6-16gb");
	assert_true(m6->gpu_clock_mhz == 0 && m6->gpu_cores == 12);
	double m6_hz = perf_core_clock_hz(f->cat, m6);
	assert_true(m6_hz > 12 * 1278e6 && m6_hz < 12 * 1470e6);
	assert_true(perf_core_clock_hz(f->cat, catalog_hardware(f->cat, "mi300x")) == 0);
}

/* Issue-bound matmuls (llama.cpp MMQ) run at the family's share of the
 * engine's per-clock rate (eff_issue) and at the clock the board's rating
 * feeds in them (sm_w_at_1ghz): the 70% of the rating that follows the
 * clock over the SMs' watts, by the cube law, at most the rated clock.  A
 * family that gives no eff_issue takes the median of those that do (what
 * cross-validation gives a held-out family); no SM watts, the rated clock.
 * A power limit below the rating composes with it to the clock the limit
 * feeds.  Matmuls at a tensor rate (F16 through cuBLAS) are not touched. */
static void test_issue_rate(void **state)
{
	struct fixture *f = *state;
	size_t nf = f->cat->family_count;
	double *saved = malloc(2 * nf * sizeof(*saved));
	assert_non_null(saved);
	for (size_t i = 0; i < nf; i++) {
		saved[2 * i] = f->cat->families[i].eff_issue;
		saved[2 * i + 1] = f->cat->families[i].sm_w_at_1ghz;
		f->cat->families[i].eff_issue = f->cat->families[i].sm_w_at_1ghz = 0;
	}
	struct cat_family *ada = catalog_family_mut(f->cat, "nvidia-ada");
	const struct spec q4 = { "l40", "llama-2-7b", "gguf-q4-0", NULL, "llama.cpp", 1, 1, 1 };
	struct perf_model pm;
	init_spec(&pm, f, q4);
	assert_true(pm.issue_bound_matmul && pm.eff_issue == 1 && pm.sustained_clock == 1);
	double base = pm.ns_per_token;
	ada->eff_issue = 0.8;
	init_spec(&pm, f, q4);
	assert_close(pm.ns_per_token, base / 0.8, 1e-12);
	/* none of its own: the median of the others' */
	ada->eff_issue = 0;
	catalog_family_mut(f->cat, "nvidia-ampere")->eff_issue = 0.6;
	catalog_family_mut(f->cat, "nvidia-hopper")->eff_issue = 0.9;
	catalog_family_mut(f->cat, "nvidia-blackwell-rtx")->eff_issue = 0.7;
	init_spec(&pm, f, q4);
	assert_close(pm.eff_issue, 0.7, 1e-12);
	/* the L40: 300 W for 142 SMs rated at 2,490 MHz */
	ada->eff_issue = 0.8;
	ada->sm_w_at_1ghz = 0.15;
	init_spec(&pm, f, q4);
	double held = cbrt(0.7 * 300 / (142 * 0.15)) / 2.49;
	assert_true(held < 0.9);
	assert_close(pm.sustained_clock, held, 1e-12);
	assert_close(pm.ns_per_token, base / 0.8 / held, 1e-12);
	/* the RTX 4090, the same AD102 with 450 W for 128 SMs, holds 2,520 MHz */
	struct perf_model r;
	init_spec(&r, f, (struct spec){ "rtx-4090", "llama-2-7b", "gguf-q4-0", NULL, "llama.cpp",
					1, 1, 1 });
	assert_true(r.sustained_clock == 1);
	/* the L40 capped at 250 W: the clock 250 W feeds */
	struct perf_opts o;
	perf_opts_init(&o);
	o.hardware = "l40";
	o.model = "llama-2-7b";
	o.weight_format = "gguf-q4-0";
	o.engine = "llama.cpp";
	o.engines = &f->et;
	o.power_limit_w = 250;
	struct diag d;
	diag_init(&d);
	struct perf_model capped;
	assert_int_equal(perf_model_init_opts(&capped, f->cat, &o, &d), 0);
	double fed = cbrt((250 - 0.3 * 300) / (142 * 0.15)) / 2.49;
	assert_close(capped.ns_per_token, base / 0.8 / fed, 1e-12);
	/* F16 runs at the tensor rate: neither figure applies */
	struct perf_model f16;
	init_spec(&f16, f, (struct spec){ "l40", "llama-2-7b", "fp16", NULL, "llama.cpp", 1, 1,
					  1 });
	assert_false(f16.issue_bound_matmul);
	assert_true(f16.sustained_clock == 1);
	for (size_t i = 0; i < nf; i++) {
		f->cat->families[i].eff_issue = saved[2 * i];
		f->cat->families[i].sm_w_at_1ghz = saved[2 * i + 1];
	}
	free(saved);
}

/* Tensor parallelism splits the work over tp GPUs and adds two all-reduces
 * per layer: latency plus 2 (tp-1)/tp of the hidden states over the link. */
static void test_tp_allreduce(void **state)
{
	const struct fixture *f = *state;
	struct perf_model one, two, eight, pcie;
	init_spec(&one, f, (struct spec){ "h100-sxm", "llama-3.1-70b", "fp8", NULL, NULL, 1, 1, 1 });
	init_spec(&two, f, (struct spec){ "h100-sxm", "llama-3.1-70b", "fp8", NULL, NULL, 2, 1, 1 });
	init_spec(&eight, f, (struct spec){ "h100-sxm", "llama-3.1-70b", "fp8", NULL, NULL, 8, 1, 1 });
	init_spec(&pcie, f, (struct spec){ "l40s", "llama-3.1-70b", "fp8", NULL, NULL, 2, 1, 1 });
	assert_true(one.ns_allreduce_fixed == 0 && one.ns_allreduce_per_token == 0);
	double L = 80, h = 8192, link = two.link_bw_bytes * PERF_LINK_EFF;
	assert_close(two.ns_allreduce_fixed, 2 * L * PERF_LINK_LATENCY_NVLINK_NS, 1e-12);
	assert_close(two.ns_allreduce_per_token, 2 * L * 2.0 * 1 / 2 * h * 2 / link * 1e9, 1e-12);
	assert_close(eight.ns_allreduce_per_token, 2 * L * 2.0 * 7 / 8 * h * 2 / link * 1e9, 1e-12);
	/* without NVLink the all-reduces cross PCIe: slower per byte, more latency */
	assert_close(pcie.ns_allreduce_fixed, 2 * L * PERF_LINK_LATENCY_PCIE_NS, 1e-12);
	assert_true(pcie.ns_allreduce_per_token > 5 * two.ns_allreduce_per_token);
	/* the matrices are split: half the weight time per GPU */
	assert_close(two.ns_weights, one.ns_weights / 2, 1e-12);
	assert_close(two.ns_per_token, one.ns_per_token / 2, 1e-12);
	/* GQA KV heads are split too (8 KV heads over 2 GPUs) ... */
	assert_close(two.ns_per_kv_token, one.ns_per_kv_token / 2, 1e-12);
	/* ... until there are more GPUs than KV heads: 16 GPUs still hold 1 each */
	struct perf_model sixteen;
	init_spec(&sixteen, f, (struct spec){ "h100-sxm", "llama-3.1-70b", "fp8", NULL, NULL, 16, 1,
					      1 });
	assert_close(sixteen.ns_per_kv_token, one.ns_per_kv_token / 8, 1e-12);
	/* and the step time contains exactly the all-reduce term */
	struct perf_batch b = perf_prefill_batch(2048, 0);
	struct perf_breakdown br;
	perf_step_breakdown(&two, &b, &br);
	assert_close(br.comm_ns, two.ns_allreduce_fixed + 2048 * two.ns_allreduce_per_token, 1e-12);
	assert_true(br.step_ns > br.comm_ns + br.overhead_ns);
	/* a small model's batch-1 decode over 8 GPUs: its kernels' launches
	 * bind, and all-reduce latency is a large share of the rest */
	struct perf_model small8;
	init_spec(&small8, f, (struct spec){ "h100-sxm", "llama-3.1-8b", "fp8", NULL, NULL, 8, 1, 1 });
	struct perf_batch d1 = perf_decode_batch(1, 100);
	perf_step_breakdown(&small8, &d1, &br);
	assert_close(br.comm_ns, small8.ns_allreduce_fixed + small8.ns_allreduce_per_token, 1e-12);
	assert_true(br.comm_ns > 0.1 * br.step_ns);
	assert_int_equal(br.bound, PERF_BOUND_LAUNCH);
}

/* Pipeline stages run a batch in sequence: the work is the same, each of
 * the pp - 1 hand-offs adds a latency and the hidden states' bytes. */
static void test_pipeline_stages(void **state)
{
	const struct fixture *f = *state;
	struct perf_model one, four;
	init_spec(&one, f, (struct spec){ "rtx-4090", "llama-3-70b", "gguf-q4-k-m", NULL,
					  "llama.cpp", 1, 1, 1 });
	init_spec(&four, f, (struct spec){ "rtx-4090", "llama-3-70b", "gguf-q4-k-m", NULL,
					   "llama.cpp", 1, 4, 1 });
	struct perf_batch b = perf_prefill_batch(512, 100);
	double link = four.link_bw_bytes * PERF_LINK_EFF;
	double hop = 3 * (PERF_LINK_LATENCY_PCIE_NS + 512 * 8192 * 2.0 / link * 1e9);
	assert_close(perf_step_ns(&four, &b) - perf_step_ns(&one, &b), hop, 1e-9);
	struct perf_batch d = perf_decode_batch(1, 512);
	assert_close(perf_step_ns(&four, &d) - perf_step_ns(&one, &d),
		     3 * (PERF_LINK_LATENCY_PCIE_NS + 8192 * 2.0 / link * 1e9), 1e-9);
}

/* MoE: FLOPs follow the active experts, weight bytes the distinct experts
 * the batch touches, E (1 - (1 - k/E)^T), which grows with the batch until
 * every expert is read. */
static void test_moe_traffic(void **state)
{
	const struct fixture *f = *state;
	struct perf_model pm;
	init_spec(&pm, f, (struct spec){ "h100-sxm", "qwen3-30b-a3b", "bf16", NULL, NULL, 1, 1, 1 });
	assert_true(pm.experts == 128 && pm.experts_per_token == 8 && pm.moe_layers == 48);
	/* one expert of one layer: gate, up and down of 2048 x 768 */
	assert_close(pm.expert_bytes, 3.0 * 2048 * 768 * 2, 1e-12);
	int32_t batches[] = { 1, 2, 8, 32, 128, 512, 4096 };
	double prev_bytes = 0, prev_d = 0;
	for (size_t i = 0; i < sizeof(batches) / sizeof(batches[0]); i++) {
		int32_t bsz = batches[i];
		struct perf_batch b = perf_decode_batch(bsz, 10);
		struct perf_breakdown br;
		perf_step_breakdown(&pm, &b, &br);
		double want = 128 * (1 - pow(1 - 8.0 / 128, bsz));
		assert_close(br.experts_touched, want, 1e-12);
		assert_true(br.experts_touched > prev_d);
		assert_true(br.weight_bytes > prev_bytes);
		assert_close(br.weight_bytes - pm.dense_weight_bytes - pm.lm_head_bytes,
			     want * 48 * pm.expert_bytes, 1e-9);
		prev_d = br.experts_touched;
		prev_bytes = br.weight_bytes;
	}
	assert_close(prev_d, 128, 1e-9); /* all read */
	/* batch 1 reads k experts: far less than a dense model of the same size */
	struct perf_batch one = perf_decode_batch(1, 10);
	struct perf_breakdown br;
	perf_step_breakdown(&pm, &one, &br);
	assert_close(br.experts_touched, 8, 1e-12);
	assert_true(br.weight_bytes < 0.25 * mem_weights_bytes(catalog_model(f->cat,
									     "qwen3-30b-a3b"),
							       catalog_weight_format(f->cat, "bf16")));
	/* FLOPs follow the active parameters at any batch */
	struct perf_batch big = perf_prefill_batch(4096, 0);
	perf_step_breakdown(&pm, &big, &br);
	const struct cat_model *m = catalog_model(f->cat, "qwen3-30b-a3b");
	double active_linear = (double)(m->active_params - m->embedding_params - m->lm_head_params -
					m->norm_params);
	assert_close(br.matmul_flops, 4096 * 2 * active_linear, 1e-6);
}

/* MLA caches one latent per token and layer, kept whole on every GPU. */
static void test_mla_kv(void **state)
{
	const struct fixture *f = *state;
	const struct cat_model *m = catalog_model(f->cat, "deepseek-v3");
	assert_int_equal(m->attention, CAT_ATTN_MLA);
	const struct cat_kv_dtype *bf16 = catalog_kv_dtype(f->cat, "bf16");
	assert_int_equal(mem_kv_bytes_per_token(m, bf16), 61 * (512 + 64) * 2);
	struct perf_model one, eight;
	init_spec(&one, f, (struct spec){ "h200", "deepseek-v3", "fp8", NULL, NULL, 8, 1, 1 });
	assert_true(one.kv_gpu_fraction == 1.0);
	assert_close(one.ns_per_kv_token, 61.0 * 576 * 2 / (one.mem_bw_bytes * one.eff_bw) * 1e9,
		     1e-12);
	/* a GQA model of similar size caches far more per token */
	init_spec(&eight, f, (struct spec){ "h200", "llama-3.1-405b", "fp8", NULL, NULL, 8, 1, 1 });
	assert_true(eight.kv_bytes_per_token > 7 * one.kv_bytes_per_token);
	/* attention FLOPs per pair: 2 heads (qk + v) dims */
	assert_close(one.attn_flops_per_pair, 2.0 * 128 * (192 + 128) * 61, 1e-12);
}

/* Sliding-window layers read at most the window of KV per sequence. */
static void test_sliding_window(void **state)
{
	const struct fixture *f = *state;
	struct perf_model pm;
	init_ok(&pm, f, "h100-sxm", "gpt-oss-20b", "bf16", NULL);
	assert_true(pm.window == 128);
	assert_true(pm.kv_sw_bytes_per_token > 0 && pm.kv_full_bytes_per_token > 0);
	struct perf_breakdown a, b;
	struct perf_batch s1 = perf_decode_batch(4, 100000), s2 = perf_decode_batch(4, 200000);
	perf_step_breakdown(&pm, &s1, &a);
	perf_step_breakdown(&pm, &s2, &b);
	/* only the full-attention half grows with the context */
	double per_tok = pm.kv_full_bytes_per_token;
	assert_close(b.kv_bytes - a.kv_bytes, 4 * 100000 * per_tok, 1e-9);
}

/* Deterministic generator for the random batches (xorshift64*). */
static uint64_t rng_next(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ULL;
}

static int64_t rng_range(uint64_t *s, int64_t lo, int64_t hi)
{
	return lo + (int64_t)(rng_next(s) % (uint64_t)(hi - lo + 1));
}

static double brute_force(const struct perf_model *pm, const struct perf_batch *b0, int64_t k)
{
	double sum = 0;
	struct perf_batch b = *b0;
	for (int64_t i = 0; i < k; i++) {
		b.attn_pairs = b0->attn_pairs + i * b0->seqs;
		b.kv_read_tokens = b0->kv_read_tokens + i * b0->seqs;
		sum += perf_step_ns(pm, &b);
	}
	return sum;
}

/* Every kind of model (dense, MoE, MLA, sliding window, linear attention,
 * offloaded experts, TP, PP) against the step-by-step sum. */
static void test_run_sum_equals_brute_force(void **state)
{
	const struct fixture *f = *state;
	static const struct spec specs[] = {
		{ "h100-sxm", "llama-3.1-8b", "bf16", "bf16", NULL, 1, 1, 1 },
		{ "a100", "llama-3.1-70b", "int4-gptq", "fp8", NULL, 1, 1, 1 },
		{ "l40s", "qwen2.5-7b", "fp8", "bf16", NULL, 1, 1, 1 },
		{ "rtx-4090", "llama-2-7b", "gguf-q4-0", NULL, "llama.cpp", 1, 1, 1 },
		{ "h200", "llama-3.1-70b", "fp8", NULL, NULL, 4, 1, 1 },
		{ "rtx-4090", "llama-3-70b", "gguf-q4-k-m", NULL, "llama.cpp", 1, 2, 1 },
		{ "h100-sxm", "qwen3-30b-a3b", "fp8", NULL, NULL, 1, 1, 1 },
		{ "h200", "deepseek-v3", "fp8", NULL, NULL, 8, 1, 1 },
		{ "h100-sxm", "gpt-oss-20b", "bf16", NULL, NULL, 1, 1, 1 },
		{ "rtx-pro-6000", "gpt-oss-120b", "mxfp4", NULL, "llama.cpp", 1, 1, 1 },
		{ "h100-sxm", "qwen3.6-35b-a3b", "bf16", NULL, NULL, 1, 1, 1 },
		{ "rtx-pro-6000", "qwen3-235b-a22b", "nvfp4", NULL, NULL, 1, 1, 0.3 },
		{ "apple-m2-max-30c", "llama-2-7b", "gguf-q4-0", NULL, "llama.cpp", 1, 1, 1 },
	};
	size_t nspec = sizeof(specs) / sizeof(specs[0]);
	uint64_t seed = 0x9e3779b97f4a7c15ULL;
	int crossed = 0, cases = 0;
	for (int n = 0; n < 260; n++) {
		struct perf_model pm;
		init_spec(&pm, f, specs[n % nspec]);
		/* short contexts and big batches start compute bound */
		int32_t seqs = (int32_t)rng_range(&seed, 1, 1024);
		int64_t max_ctx = rng_range(&seed, 0, 1) ? 64 : 32768;
		int64_t ctx_sum = 0;
		for (int32_t s = 0; s < seqs; s++)
			ctx_sum += rng_range(&seed, 1, max_ctx);
		struct perf_batch b0 = { .new_tokens = seqs, .seqs = seqs, .decode_seqs = seqs,
					 .attn_pairs = ctx_sum, .kv_read_tokens = ctx_sum };
		int64_t k = rng_range(&seed, 1, n % 8 == 0 ? 60000 : 3000);
		double fast = perf_decode_run_ns(&pm, &b0, k);
		double slow = brute_force(&pm, &b0, k);
		assert_close(fast, slow, 1e-9);

		struct perf_breakdown first, last;
		struct perf_batch bl = b0;
		bl.attn_pairs += (k - 1) * seqs;
		bl.kv_read_tokens += (k - 1) * seqs;
		perf_step_breakdown(&pm, &b0, &first);
		perf_step_breakdown(&pm, &bl, &last);
		if (first.compute_bound_ns / first.step_ns > 0.3 &&
		    last.compute_bound_ns / last.step_ns < first.compute_bound_ns / first.step_ns - 0.1)
			crossed++;
		cases++;
	}
	/* the random cases must exercise bends, not only one side */
	assert_true(crossed >= 5);
	assert_true(crossed < cases);

	struct perf_model pm;
	init_ok(&pm, f, "h100-sxm", "llama-3.1-8b", NULL, NULL);
	struct perf_batch b = perf_decode_batch(64, 3000);
	assert_close(perf_decode_run_ns(&pm, &b, 1), perf_step_ns(&pm, &b), 1e-15);
	assert_true(perf_decode_run_ns(&pm, &b, 0) == 0);
}

/* A run crossing from compute bound to memory bound, built on purpose, and
 * a window that fills inside the run. */
static void test_run_bends_exact(void **state)
{
	const struct fixture *f = *state;
	struct perf_model pm;
	init_ok(&pm, f, "h100-sxm", "llama-3.1-8b", "bf16", NULL);
	struct perf_batch b0 = perf_decode_batch(768, 8);
	int64_t k = 20000;
	assert_close(perf_decode_run_ns(&pm, &b0, k), brute_force(&pm, &b0, k), 1e-10);
	/* attention turning compute bound later: edited by hand */
	pm.ns_per_kv_token = 0.001;
	pm.ns_per_pair = 20;
	uint64_t seed = 42;
	for (int n = 0; n < 60; n++) {
		struct perf_batch b = perf_decode_batch((int32_t)rng_range(&seed, 1, 64),
							rng_range(&seed, 1, 4096));
		int64_t kk = rng_range(&seed, 1, 50000);
		assert_close(perf_decode_run_ns(&pm, &b, kk), brute_force(&pm, &b, kk), 1e-9);
	}
	/* gpt-oss: the 128-token windows fill during the run */
	struct perf_model gs;
	init_ok(&gs, f, "h100-sxm", "gpt-oss-20b", "bf16", NULL);
	gs.ns_per_sw_pair *= 500; /* make the window term bend visibly */
	struct perf_batch w = perf_decode_batch(3, 5);
	assert_close(perf_decode_run_ns(&gs, &w, 400), brute_force(&gs, &w, 400), 1e-10);
}

/* perf_decode_run_ns must not loop over k. */
static void test_run_is_constant_time(void **state)
{
	const struct fixture *f = *state;
	struct perf_model pm;
	init_ok(&pm, f, "a100", "llama-3.1-70b", "int4-awq", NULL);
	struct perf_batch b0 = perf_decode_batch(1, 1000);
	int64_t k = 1000000000000LL;
	/* memory bound throughout: an arithmetic series */
	double s0 = perf_step_ns(&pm, &b0);
	struct perf_batch b1 = b0;
	b1.attn_pairs += 1;
	b1.kv_read_tokens += 1;
	double slope = perf_step_ns(&pm, &b1) - s0;
	double kd = (double)k;
	double want = kd * s0 + slope * kd * (kd - 1) / 2;
	volatile double got = 0;
	for (int i = 0; i < 200000; i++)
		got = perf_decode_run_ns(&pm, &b0, k - (i & 1));
	(void)got;
	assert_close(perf_decode_run_ns(&pm, &b0, k), want, 1e-9);
}

static void test_prefill_chunks(void **state)
{
	const struct fixture *f = *state;
	struct perf_model pm;
	init_ok(&pm, f, "h100-sxm", "llama-3.1-8b", NULL, NULL);
	/* chunking sums the chunk steps, each on top of the ones before */
	double want = perf_step_ns(&pm, &(struct perf_batch){ 0 });
	for (int64_t done = 0; done < 10000; done += 4096) {
		int64_t n = 10000 - done < 4096 ? 10000 - done : 4096;
		struct perf_batch b = perf_prefill_batch(n, 500 + done);
		want += perf_step_ns(&pm, &b);
	}
	assert_close(perf_prefill_ns(&pm, 10000, 500, 4096), want, 1e-12);
	assert_true(perf_prefill_ns(&pm, 10000, 0, 512) > perf_prefill_ns(&pm, 10000, 0, 8192));
}

/* Every hardware/model pair of the catalogue can be modelled with a compute
 * figure (published, or derived from published specs and marked so), and
 * its steps are finite and positive: replay accepts every pair. */
static void test_every_catalogue_pair(void **state)
{
	const struct fixture *f = *state;
	const struct catalog *cat = f->cat;
	for (size_t h = 0; h < cat->hardware_count; h++) {
		const struct cat_hardware *hw = &cat->hardware[h];
		for (size_t m = 0; m < cat->model_count; m++) {
			struct perf_opts o;
			perf_opts_init(&o);
			o.hardware = hw->id;
			o.model = cat->models[m].id;
			o.weight_format = "bf16";
			o.engines = &f->et;
			o.engine = hw->unified_memory ? "llama.cpp" : "vllm";
			struct perf_model pm;
			struct diag d;
			diag_init(&d);
			if (perf_model_init_opts(&pm, cat, &o, &d))
				fail_msg("%s / %s: %s", hw->id, o.model, d.msg);
			assert_false(pm.compute_unknown);
			struct perf_batch b = perf_decode_batch(8, 2000);
			struct perf_batch p = perf_prefill_batch(2048, 1000);
			double a = perf_step_ns(&pm, &b), c = perf_step_ns(&pm, &p);
			assert_true(isfinite(a) && a > 0 && isfinite(c) && c > 0);
			assert_true(perf_decode_run_ns(&pm, &b, 100) > 99 * a);
		}
	}
}

/* Packages of several dies (catalog_die_factor): half the reads of a
 * two-die package cross the link, three quarters of MI300X's four I/O
 * dies', each at the family's penalty; B200's family gives none and takes
 * its memory kind's (CDNA 3); one die is untouched; and a package whose
 * memory kind has no penalty at all is refused rather than given a
 * single die's bounds. */
static void test_multi_die(void **state)
{
	const struct fixture *f = *state;
	struct diag d;
	diag_init(&d);
	const struct cat_family *from;
	double k;
	assert_int_equal(catalog_die_factor(f->cat, catalog_hardware(f->cat, "h100-sxm"), &k, &from,
					    &d), 0);
	assert_true(k == 1 && from == NULL);
	assert_int_equal(catalog_die_factor(f->cat, catalog_hardware(f->cat, "apple-m2-ultra-76c"),
					    &k, &from, &d), 0);
	assert_close(k, 1 / (1 + 0.5 * 0.72), 1e-12);
	assert_string_equal(from->id, "apple-silicon");
	assert_int_equal(catalog_die_factor(f->cat, catalog_hardware(f->cat, "mi300x"), &k, &from,
					    &d), 0);
	assert_close(k, 1 / (1 + 0.75 * 0.064), 1e-12);
	assert_int_equal(catalog_die_factor(f->cat, catalog_hardware(f->cat, "hgx-b200-8"), &k,
					    &from, &d), 0);
	assert_close(k, 1 / (1 + 0.5 * 0.064), 1e-12);
	assert_string_equal(from->id, "amd-cdna3");
	/* the factor is the bandwidth's: a bandwidth-bound decode on the
	 * Ultra, against the same chip with a penalty too small to matter,
	 * takes 1 / k as long; its per-core byte rate falls alike */
	struct perf_model ultra, near_one;
	init_spec(&ultra, f, (struct spec){ "apple-m2-ultra-76c", "llama-3.1-8b", "gguf-q4-0", NULL,
					     "llama.cpp", 1, 1, 1 });
	struct cat_family *apple = (struct cat_family *)catalog_hardware(
		f->cat, "apple-m2-ultra-76c")->device->family;
	double keep = apple->die_remote_penalty;
	apple->die_remote_penalty = 1e-12;
	init_spec(&near_one, f, (struct spec){ "apple-m2-ultra-76c", "llama-3.1-8b", "gguf-q4-0",
						NULL, "llama.cpp", 1, 1, 1 });
	/* no penalty anywhere in DRAM families: refused, naming the key */
	apple->die_remote_penalty = 0;
	struct perf_model none;
	struct perf_opts o;
	perf_opts_init(&o);
	o.hardware = "apple-m2-ultra-76c";
	o.model = "llama-3.1-8b";
	o.weight_format = "gguf-q4-0";
	o.engine = "llama.cpp";
	o.engines = &f->et;
	bool other_dram = false;
	for (size_t i = 0; i < f->cat->family_count; i++)
		other_dram |= f->cat->families[i].memory_kind == CAT_MEM_DRAM &&
			      f->cat->families[i].die_remote_penalty > 0;
	assert_false(other_dram);
	assert_int_equal(perf_model_init_opts(&none, f->cat, &o, &d), DIAG_EINPUT);
	assert_non_null(strstr(d.msg, "die_remote_penalty"));
	apple->die_remote_penalty = keep;
	struct perf_batch b = perf_decode_batch(1, 1024);
	struct perf_breakdown x, y;
	perf_step_breakdown(&ultra, &b, &x);
	perf_step_breakdown(&near_one, &b, &y);
	assert_int_equal(x.bound, PERF_BOUND_MEMORY);
	assert_close(x.memory_bound_ns, y.memory_bound_ns / ultra.die_factor, 1e-9);
	assert_close(ultra.die_factor, 1 / (1 + 0.5 * 0.72), 1e-12);
}

/* FP4 tensor-core GEMMs reach a share of the family's BF16 efficiency
 * (formats.json tensor_efficiency, 0.85 for NVFP4 and MXFP4): a
 * compute-bound NVFP4 prefill on an RTX PRO 6000 under TensorRT-LLM takes
 * 1 / 0.85 of the time the same format would at the family's rate; the
 * same checkpoint where the engine dequantizes (llama.cpp's MXFP4) or the
 * hardware falls back (MXFP4 on Hopper) keeps the 16-bit rate. */
static void test_fp4_format_efficiency(void **state)
{
	const struct fixture *f = *state;
	struct perf_model a, b;
	init_spec(&a, f, (struct spec){ "rtx-pro-6000", "llama-3.1-8b", "nvfp4", NULL, "trtllm", 1,
					 1, 1 });
	assert_true(a.format_efficiency == 0.85);
	struct cat_weight_format *nv = (struct cat_weight_format *)catalog_weight_format(f->cat,
											    "nvfp4");
	double keep = nv->tensor_efficiency;
	nv->tensor_efficiency = 1;
	init_spec(&b, f, (struct spec){ "rtx-pro-6000", "llama-3.1-8b", "nvfp4", NULL, "trtllm", 1,
					 1, 1 });
	nv->tensor_efficiency = keep;
	assert_close(a.ns_per_token, b.ns_per_token / 0.85, 1e-12);
	struct perf_model c;
	init_spec(&c, f, (struct spec){ "rtx-pro-6000", "gpt-oss-20b", "gguf-mxfp4", NULL,
					 "llama.cpp", 1, 1, 1 });
	assert_true(c.format_efficiency == 1);
	init_spec(&c, f, (struct spec){ "h100-sxm", "gpt-oss-20b", "mxfp4", NULL, "vllm", 1, 1, 1 });
	assert_true(c.format_efficiency == 1);
	init_spec(&c, f, (struct spec){ "h100-sxm", "llama-3.1-8b", "fp8", NULL, "vllm", 1, 1, 1 });
	assert_true(c.format_efficiency == 1); /* FP8 rows are in the calibration set */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fp4_format_efficiency),
		cmocka_unit_test(test_multi_die),
		cmocka_unit_test(test_init_and_constants),
		cmocka_unit_test(test_overheads),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_decode_scales_with_bytes),
		cmocka_unit_test(test_prefill_scales_with_flops),
		cmocka_unit_test(test_fp16_accumulate),
		cmocka_unit_test(test_vector_fallback),
		cmocka_unit_test(test_core_clock),
		cmocka_unit_test(test_issue_rate),
		cmocka_unit_test(test_tp_allreduce),
		cmocka_unit_test(test_pipeline_stages),
		cmocka_unit_test(test_moe_traffic),
		cmocka_unit_test(test_mla_kv),
		cmocka_unit_test(test_sliding_window),
		cmocka_unit_test(test_run_sum_equals_brute_force),
		cmocka_unit_test(test_run_bends_exact),
		cmocka_unit_test(test_run_is_constant_time),
		cmocka_unit_test(test_prefill_chunks),
		cmocka_unit_test(test_every_catalogue_pair),
		cmocka_unit_test(test_floors_tp8_decode),
		cmocka_unit_test(test_floors_decode_run),
		cmocka_unit_test(test_floors_per_expert_launches),
		cmocka_unit_test(test_floors_piecewise_graphs),
		cmocka_unit_test(test_floors_expert_parallel),
		cmocka_unit_test(test_mla_fallback),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
