/* SPDX-License-Identifier: Apache-2.0
 * Tests for the regimes the step model handles by the engine's mechanism,
 * each against a published measurement or a documented kernel path.
 *
 * FP4 weights per engine.  llama.cpp runs MXFP4 through its quantized
 * matmul kernels (MMQ: activations quantized to 8 bits, int8 tensor-core
 * MMA), not through the FP4 tensor cores of a Blackwell GPU; its native
 * MXFP4 path was an experimental pull request of December 2025 that
 * reached 1.26x the MMQ path, not the 2x of the FP4 instruction
 * (ggml-org/llama.cpp pull 17906, 2025-12-10: gpt-oss 20B MXFP4 pp512 on an
 * RTX PRO 6000 Blackwell, 10,560.64 tok/s at master c6f6e4f96, 13,304.80
 * with the FP4 path).  TensorRT-LLM and vLLM run NVFP4 on the FP4 MMA.
 *
 * Grouped expert GEMMs (models/moe.h).  Each touched expert's token rows are
 * padded to the kernel's M tile, so at a small batch an expert's GEMM
 * computes a whole tile for a few tokens; near the roofline's ridge a
 * grouped GEMM reaches neither peak.  Published check: DeepGEMM's grouped
 * FP8 GEMMs on an H800 (deepseek-ai/DeepGEMM README, February 2025; the
 * H800 has the H100 SXM's tensor cores and HBM3, only its NVLink is
 * narrower, so the h100-sxm catalogue entry stands for it).
 *
 * Pipeline parallelism.  With P stages the engines keep up to P micro-batches
 * in flight, one per stage (vLLM V1's batch queue of max_concurrent_batches =
 * pipeline_parallel_size, vLLM pull 32359; V0's P virtual engines), so an
 * offline workload on P GPUs runs every stage at once, while each sequence
 * still waits for all of its stages per token (models/pipeline.h).
 *
 * Power caps.  A board power limit lowers the core clock (models/power.h):
 * compute-bound prefill slows with it, bandwidth-bound decode much less.
 * Published sweep: llmgarage.ai, "Tokens-per-Second Test Bench: Power
 * Limit Sweep" (February 2026): six RTX 3090s (350 W rated), llama.cpp
 * server, MiniMax M2.5 UD_IQ2_M; prefill at 198K context 9,893 / 9,326 /
 * 8,436 / 5,941 tok/s at 350 / 300 / 250 / 200 W, decode at 4K context
 * 72.6 / 72.1 / 70.7 / 68.3 / 62.6 tok/s at 350 / 300 / 250 / 200 / 150 W.
 *
 * Long context.  Decode attention reads the whole KV cache: with the KV
 * split over the GPU's SMs (Flash-Decoding, in every engine profile's
 * kernels) its time follows the KV bytes, whatever the batch and length
 * (PyTorch blog, "Flash-Decoding for long-context inference", Dao, Haziza,
 * Massa, Sizov, October 2023: A100, f16, 16 query heads of 128 over 2 KV
 * heads -- CodeLlama-34B on 4 GPUs -- 63.4, 67.7, 77.7, 58.5, 57.0, 56.4,
 * 58.2, 60.3, 64.4 us for batch x length = 65,536 from 256 x 256 to 1 x
 * 65,536, and 106.6 us at 1 x 131,072).  Prefill attention is quadratic
 * and compute bound at the FlashAttention kernels' rate: 50-73% of the
 * A100's peak (FlashAttention-2, arXiv:2307.08691), up to 75% of the
 * H100's (740 TFLOPS FP16 forward, FlashAttention-3, arXiv:2407.08608,
 * which puts FlashAttention-2 at 35% on the H100).
 *
 * Expert-parallel all-to-all (models/floors.h).  Each GPU dispatches its
 * share of the tokens to the GPUs holding their experts and gets the
 * weighted outputs back: two all-to-alls per MoE layer whose bytes follow
 * tokens x the GPUs a token reaches x hidden x the element size, over the
 * peer link.  Published check: DeepEP's intranode normal kernels on eight
 * H800s (deepseek-ai/DeepEP, V1 README, docs/legacy.md). */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/catalog.h"
#include "models/engine.h"
#include "models/memory.h"
#include "models/perf_model.h"
#include "models/pipeline.h"
#include "models/power.h"

static int setup(void **state)
{
	struct catalog *cat = NULL;
	struct diag d;
	diag_init(&d);
	if (catalog_load(&cat, NULL, &d))
		return -1;
	*state = cat;
	return 0;
}

static int teardown(void **state)
{
	catalog_free(*state);
	return 0;
}

static void model_opts(struct perf_model *pm, const struct catalog *cat,
		       const struct perf_opts *o)
{
	struct diag d;
	diag_init(&d);
	if (perf_model_init_opts(pm, cat, o, &d))
		fail_msg("%s", d.msg);
}

static void model(struct perf_model *pm, const struct catalog *cat, const char *hw,
		  const char *m, const char *wf, const char *engine)
{
	struct perf_opts o;
	perf_opts_init(&o);
	o.hardware = hw;
	o.model = m;
	o.weight_format = wf;
	o.engine = engine;
	model_opts(pm, cat, &o);
}

static double prefill_tok_s(const struct perf_model *pm, int64_t tokens, int64_t chunk)
{
	return (double)tokens / (perf_prefill_ns(pm, tokens, 0, chunk) * 1e-9);
}

static void test_fp4_paths(void **state)
{
	const struct catalog *cat = *state;
	struct perf_model lc, trt;
	/* llama.cpp: the 16-bit path, weights dequantized on the fly */
	model(&lc, cat, "rtx-pro-6000", "gpt-oss-20b", "gguf-mxfp4", "llama.cpp");
	assert_int_not_equal(lc.matmul_dtype, CAT_DTYPE_FP4);
	assert_true(lc.dequantizing);
	/* TensorRT-LLM: native NVFP4 MMA */
	model(&trt, cat, "rtx-pro-6000", "gpt-oss-20b", "nvfp4", "trtllm");
	assert_int_equal(trt.matmul_dtype, CAT_DTYPE_FP4);
	assert_false(trt.dequantizing);
	model(&trt, cat, "rtx-pro-6000", "gpt-oss-20b", "mxfp4", "vllm");
	assert_int_equal(trt.matmul_dtype, CAT_DTYPE_FP4);

	/* the expert and dense matmuls run at the int8 MMQ kernels' per-core
	 * rate, not at a tensor peak */
	assert_true(lc.issue_bound_matmul);
	/* the published pp512 (pull 17906's master column, an RTX Pro 6000
	 * Blackwell of unstated edition: the 300 W Max-Q runs about a fifth
	 * below the 600 W board): within 50% of the MMQ path's 10,560.64
	 * tok/s, and below 1.2x the experimental FP4 path's 13,304.80.  A model
	 * at the FP4 tensor-core rate predicted three times the MMQ figure; the
	 * current build's MoE prefill is the least certain figure of the
	 * model (docs/validation.md) */
	double pp = prefill_tok_s(&lc, 512, 512);
	if (fabs(pp / 10560.64 - 1) > 0.5 || pp > 1.2 * 13304.80)
		fail_msg("llama.cpp gpt-oss-20b MXFP4 pp512 on rtx-pro-6000: %.0f tok/s predicted, "
			 "10,561 measured (MMQ), 13,305 with the FP4 path", pp);
}

static void model_tp(struct perf_model *pm, const struct catalog *cat, const char *hw,
		     const char *m, const char *wf, const char *engine, int tp)
{
	struct perf_opts o;
	perf_opts_init(&o);
	o.hardware = hw;
	o.model = m;
	o.weight_format = wf;
	o.engine = engine;
	o.tp = tp;
	model_opts(pm, cat, &o);
}

static void model_pp(struct perf_model *pm, const struct catalog *cat, const char *hw,
		     const char *m, const char *engine, int pp)
{
	struct perf_opts o;
	perf_opts_init(&o);
	o.hardware = hw;
	o.model = m;
	o.engine = engine;
	o.pp = pp;
	model_opts(pm, cat, &o);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* DeepGEMM's grouped GEMMs (README, February 2025, H800, NVCC 12.8):
 * groups x rows per group, N, K, TFLOPS.  Masked layout (decode) and
 * contiguous layout (prefill). */
static const struct {
	double groups, rows, n, k, tflops;
} deepgemm_grouped[] = {
	{ 1, 1024, 4096, 7168, 1233 }, { 1, 1024, 7168, 2048, 925 },
	{ 2, 512, 4096, 7168, 1040 },  { 2, 512, 7168, 2048, 916 },
	{ 4, 256, 4096, 7168, 932 },   { 4, 256, 7168, 2048, 815 },
	{ 4, 8192, 4096, 7168, 1297 }, { 4, 8192, 7168, 2048, 1099 },
	{ 8, 4096, 4096, 7168, 1288 }, { 8, 4096, 7168, 2048, 1093 },
};

/* Every published grouped GEMM against the rounded roofline corner at the
 * Hopper family's achievable fractions of the catalogue's H100 SXM FP8 peak
 * and bandwidth: within 31% each, median within 10%, where the plain
 * roofline (the larger of the two times) is 25% fast at the median and
 * 51% at worst. */
static void test_grouped_gemm_deepgemm(void **state)
{
	const struct catalog *cat = *state;
	struct perf_model pm;
	model(&pm, cat, "h100-sxm", "qwen3-30b-a3b", "fp8", "vllm");
	assert_int_equal(pm.matmul_dtype, CAT_DTYPE_FP8);
	double rate = pm.matmul_peak_flops * pm.eff_compute * pm.engine.compute_scale;
	double bw = pm.mem_bw_bytes * pm.eff_bw * pm.engine.bw_scale;
	enum { N = sizeof(deepgemm_grouped) / sizeof(deepgemm_grouped[0]) };
	double ratio[N], ratio_max[N];
	for (size_t i = 0; i < N; i++) {
		double g = deepgemm_grouped[i].groups, m = deepgemm_grouped[i].rows;
		double n = deepgemm_grouped[i].n, k = deepgemm_grouped[i].k;
		double flops = 2 * g * m * n * k;
		/* FP8 weights and activations in, BF16 out */
		double bytes = g * n * k + g * m * k + 2 * g * m * n;
		double measured = flops / (deepgemm_grouped[i].tflops * 1e12);
		double c = flops / rate, mem = bytes / bw;
		ratio[i] = measured / moe_grouped_ns(c, mem);
		ratio_max[i] = measured / fmax(c, mem);
		if (fabs(log(ratio[i])) > log(1.31))
			fail_msg("DeepGEMM %gx%g N %g K %g: %.0f TFLOPS measured, %.0f modelled",
				 g, m, n, k, deepgemm_grouped[i].tflops,
				 flops / moe_grouped_ns(c, mem) / 1e12);
	}
	qsort(ratio, N, sizeof(double), cmp_double);
	qsort(ratio_max, N, sizeof(double), cmp_double);
	double med = (ratio[N / 2 - 1] + ratio[N / 2]) / 2;
	double med_max = (ratio_max[N / 2 - 1] + ratio_max[N / 2]) / 2;
	if (fabs(med - 1) > 0.10 || med_max < 1.20)
		fail_msg("median measured/modelled %.3f (rounded corner), %.3f (plain roofline)",
			 med, med_max);
}

/* The padding mechanism: rows computed per useful row fall as the batch
 * grows, and rise with the expert count at a fixed batch. */
static void test_grouped_gemm_padding(void **state)
{
	(void)state;
	struct moe_routing r;
	moe_routing_init(&r, 128, 8);
	/* one token: 8 experts, one 64-row tile each */
	assert_true(fabs(moe_padded_rows(&r, 1, 64) - 8 * 64) < 1e-9);
	/* no tile: the token rows themselves */
	assert_true(fabs(moe_padded_rows(&r, 100, 0) - 800) < 1e-9);
	double prev = INFINITY;
	for (double t = 1; t <= 65536; t *= 2) {
		double waste = moe_padded_rows(&r, t, 64) / (t * 8);
		assert_true(waste >= 1);
		assert_true(waste <= prev + 1e-12);
		prev = waste;
	}
	/* 65,536 tokens: 4,096 rows per expert, padding under 1% */
	assert_true(prev < 1.01);
	/* 256 tokens, 8 per token: 16 rows per expert of 128, 8 of 256 */
	struct moe_routing wide;
	moe_routing_init(&wide, 256, 8);
	assert_true(moe_padded_rows(&wide, 256, 64) > moe_padded_rows(&r, 256, 64));
	/* the rounded corner: the larger side far from the ridge, sqrt 2 at it */
	assert_true(fabs(moe_grouped_ns(1, 0.01) / 1 - 1) < 1e-3);
	assert_true(fabs(moe_grouped_ns(3, 3) / 3 - sqrt(2)) < 1e-12);
}

/* Through the step model: an engine with grouped expert GEMMs (vLLM) pays
 * for them against the same model without (tile 0): nothing at batch 1
 * (memory bound, far from the ridge), most where a step's experts sit near
 * the ridge; and the expert term's efficiency (its useful FLOP time over
 * its time) rises with the decode batch. */
static double expert_term_ns(const struct perf_model *pm, const struct perf_batch *b)
{
	struct perf_model none = *pm;
	none.experts = 0; /* the roofline without the routed experts */
	struct perf_breakdown x, y;
	perf_step_breakdown(pm, b, &x);
	perf_step_breakdown(&none, b, &y);
	return x.ops_ns - y.ops_ns;
}

static void test_grouped_gemm_step(void **state)
{
	const struct catalog *cat = *state;
	struct perf_model g, plain;
	model_tp(&g, cat, "h100-sxm", "qwen3-235b-a22b", "fp8", "vllm", 8);
	assert_true(g.engine.moe_tile_rows == 64 && g.engine.moe_tile_rows_small == 16);
	plain = g;
	plain.engine.moe_tile_rows = 0;
	plain.engine.moe_tile_rows_small = 0;
	struct perf_batch b1 = perf_decode_batch(1, 1000);
	double e1 = expert_term_ns(&g, &b1), p1 = expert_term_ns(&plain, &b1);
	assert_true(e1 >= p1 && e1 / p1 < 1.01);
	double worst = 1, prev_eff = 0;
	for (int32_t s = 1; s <= 8192; s *= 2) {
		struct perf_batch b = perf_decode_batch(s, 128);
		double eg = expert_term_ns(&g, &b), ep = expert_term_ns(&plain, &b);
		assert_true(eg >= ep * (1 - 1e-12));
		if (eg / ep > worst)
			worst = eg / ep;
		double eff = g.ns_per_expert_token * s / eg;
		assert_true(eff > prev_eff && eff <= 1);
		prev_eff = eff;
	}
	/* near the ridge the grouped GEMMs cost at least 30% more */
	assert_true(worst > 1.3);
}

/* llama.cpp's MMQ for a mixture of experts runs every touched expert's
 * tokens in tiles as wide as the batch, up to 128 columns (mmq.cuh
 * mul_mat_q_case): a 128-expert model at 2048 tokens gives each expert 64,
 * half a tile, where a 32-expert one fills two tiles and a half.  The gpt-oss
 * guide (llama.cpp discussion 15396, -ub 2048) measured pp2048 of
 * gpt-oss-120b at 0.479 of gpt-oss-20b's on an RTX PRO 6000 (5,518.07 /
 * 11,521.95 tok/s): their active weights alone would give 0.70. */
static void test_llamacpp_moe_tiles(void **state)
{
	const struct catalog *cat = *state;
	struct perf_model big, small;
	model(&big, cat, "rtx-pro-6000", "gpt-oss-120b", "mxfp4", "llama.cpp");
	model(&small, cat, "rtx-pro-6000", "gpt-oss-20b", "mxfp4", "llama.cpp");
	assert_true(big.engine.moe_tile_rows == 128 && big.engine.moe_tile_spans_batch);
	double ratio = prefill_tok_s(&big, 2048, 2048) / prefill_tok_s(&small, 2048, 2048);
	struct perf_model big0 = big, small0 = small;
	big0.engine.moe_tile_rows = small0.engine.moe_tile_rows = 0;
	double ratio0 = prefill_tok_s(&big0, 2048, 2048) / prefill_tok_s(&small0, 2048, 2048);
	if (fabs(ratio / (5518.07 / 11521.95) - 1) > 0.1 || !(ratio0 > 0.6))
		fail_msg("pp2048 gpt-oss-120b / gpt-oss-20b: %.3f with the tiles, %.3f without; "
			 "0.479 measured", ratio, ratio0);
	/* the tile spans the batch: 40 tokens give a 40-column tile, so every
	 * touched expert costs 40 rows where the full tile would cost 128 */
	struct perf_batch b40 = perf_prefill_batch(40, 0);
	struct perf_model wide = small;
	wide.engine.moe_tile_spans_batch = false;
	double e40 = expert_term_ns(&small, &b40), w40 = expert_term_ns(&wide, &b40);
	if (!(e40 < 0.6 * w40))
		fail_msg("40 tokens: %.0f ns of experts with a batch-wide tile, %.0f with 128", e40,
			 w40);
	/* a smaller ubatch thins every expert's share, so its tiles run emptier:
	 * pp512 at -ub 512 costs more per token than pp2048 at -ub 2048 */
	double r512 = prefill_tok_s(&small, 512, 512) / prefill_tok_s(&small, 2048, 2048);
	if (!(r512 < 0.9))
		fail_msg("gpt-oss-20b pp512 at -ub 512 / pp2048 at -ub 2048: %.3f", r512);
}

/* llama.cpp's flash-attention kernels at long context: the gpt-oss guide
 * (discussion 15396, -fa 1 -ub 2048) measured pp8192, pp16384 and pp32768 on
 * an RTX PRO 6000 at 0.926, 0.848 and 0.718 of pp2048 for gpt-oss-20b and
 * 0.963, 0.908 and 0.816 for gpt-oss-120b.  Without flash attention (-fa 0,
 * every build before it) the KQ matrix goes through memory and pp32768
 * falls below half of pp2048. */
static void test_llamacpp_flash_attention(void **state)
{
	const struct catalog *cat = *state;
	/* The same ratios from two builds: the guide's RTX PRO 6000 ran build
	 * 6205, before pull 15525, its RTX 4080 SUPER build 6316, after it,
	 * and the later build loses less at long context (0.978, 0.920 and
	 * 0.825).  The model has one flash-attention figure for both: it
	 * lands between them, their mean log error within 5% at every length,
	 * the PRO 6000 within 20% and the 4080 SUPER within 25%: its attention
	 * runs at Ada's compute efficiency, which the RTX 4090's F16 prefill
	 * rows set (families.json), and its matmuls at Ada's issue rate, so
	 * its long prompts lose more than the PRO 6000's (0.64 at pp32768). */
	static const struct {
		const char *hardware, *model;
		int64_t build;
		double r[3], tol;
	} cases[] = {
		{ "rtx-pro-6000", "gpt-oss-20b", 6205, { 0.926, 0.848, 0.718 }, 0.20 },
		{ "rtx-pro-6000", "gpt-oss-120b", 6205, { 0.963, 0.908, 0.816 }, 0.20 },
		{ "rtx-4080-super", "gpt-oss-20b", 6316, { 0.978, 0.920, 0.825 }, 0.25 },
	};
	double sum_log[3] = { 0, 0, 0 };
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		struct perf_opts go;
		perf_opts_init(&go);
		go.hardware = cases[k].hardware;
		go.model = cases[k].model;
		go.weight_format = "gguf-mxfp4";
		go.engine = "llama.cpp";
		go.engine_build = cases[k].build;
		struct perf_model pm;
		model_opts(&pm, cat, &go);
		double base = prefill_tok_s(&pm, 2048, 2048);
		for (int i = 0; i < 3; i++) {
			int64_t n = (int64_t)8192 << i;
			double r = prefill_tok_s(&pm, n, 2048) / base;
			if (fabs(r / cases[k].r[i] - 1) > cases[k].tol)
				fail_msg("%s %s pp%lld / pp2048: %.3f, %.3f measured",
					 cases[k].hardware, cases[k].model, (long long)n, r,
					 cases[k].r[i]);
			sum_log[i] += log(r / cases[k].r[i]);
		}
	}
	for (int i = 0; i < 3; i++)
		if (fabs(sum_log[i] / 3) > log(1.05))
			fail_msg("pp%d / pp2048: mean log error over the builds %.3f",
				 8192 << i, sum_log[i] / 3);
	struct perf_opts o;
	perf_opts_init(&o);
	o.hardware = "rtx-pro-6000";
	o.model = "gpt-oss-20b";
	o.weight_format = "mxfp4";
	o.engine = "llama.cpp";
	struct perf_model fa, nofa;
	model_opts(&fa, cat, &o);
	o.no_flash_attention = true;
	model_opts(&nofa, cat, &o);
	/* the switch takes the figure without flash attention, a lower one */
	assert_true(nofa.engine.attention_scale == fa.engine.attention_scale_without_fa);
	assert_true(nofa.engine.attention_scale < fa.engine.attention_scale);
	double r = prefill_tok_s(&nofa, 32768, 2048) / prefill_tok_s(&nofa, 2048, 2048);
	if (!(r < 0.5))
		fail_msg("gpt-oss-20b pp32768 / pp2048 without flash attention: %.3f", r);
	/* an engine without a separate figure ignores the switch */
	o.engine = "vllm";
	struct perf_model v1, v0;
	model_opts(&v1, cat, &o);
	o.no_flash_attention = false;
	model_opts(&v0, cat, &o);
	assert_true(v1.engine.attention_scale == v0.engine.attention_scale);
}

/* Sequences an offline run keeps going at `context` tokens each: the
 * engine's max_num_seqs (vLLM V1 caps the running sequences of all micro-
 * batches together, vLLM issue 27462) or what the KV cache holds. */
static int32_t offline_seqs(const struct catalog *cat, const struct perf_model *pm, int pp,
			    int64_t context)
{
	struct mem_opts mo;
	mem_opts_init(&mo);
	mo.hardware = pm->hardware_id;
	mo.model = pm->model_id;
	mo.pp = pp;
	struct mem_plan plan;
	struct diag d;
	diag_init(&d);
	if (mem_plan_opts(&plan, cat, &mo, &d))
		fail_msg("%s", d.msg);
	int64_t fit = plan.kv_capacity_tokens / context;
	int64_t cap = engine_default_max_num_seqs(&pm->engine,
						  catalog_hardware(cat, pm->hardware_id));
	return (int32_t)(fit < cap ? fit : cap);
}

/* Offline Llama-3.1-8B BF16, 1,000 + 1,000 tokens (mean context 1,500):
 * pipeline_parallel_size 8 over eight H100s against one H100. */
static void test_pp_offline_throughput(void **state)
{
	const struct catalog *cat = *state;
	struct perf_model one, pp8;
	model_pp(&one, cat, "h100-sxm", "llama-3.1-8b", "vllm", 1);
	model_pp(&pp8, cat, "h100-sxm", "llama-3.1-8b", "vllm", 8);
	const int64_t ctx = 1500;
	int32_t n1 = offline_seqs(cat, &one, 1, 2000), n8 = offline_seqs(cat, &pp8, 8, 2000);
	assert_true(n1 >= 64 && n8 > n1);
	struct pipeline_step p1, p8;
	pipeline_decode_step(&one, n1, ctx, &p1);
	pipeline_decode_step(&pp8, n8, ctx, &p8);
	/* one GPU: the step model unchanged */
	struct perf_batch b1 = perf_decode_batch(n1, ctx);
	assert_int_equal(p1.micro_batches, 1);
	assert_true(fabs(p1.cycle_ns - perf_step_ns(&one, &b1)) <= 1e-6 * p1.cycle_ns);
	/* eight micro-batches in flight: several times one GPU's throughput */
	assert_int_equal(p8.micro_batches, 8);
	assert_int_equal(p8.micro_seqs, (n8 + 7) / 8);
	if (!(p8.tok_s > 4 * p1.tok_s))
		fail_msg("pp 8: %.0f tok/s, one GPU %.0f tok/s (%.2fx)", p8.tok_s, p1.tok_s,
			 p8.tok_s / p1.tok_s);
	/* and more than one batch in flight over the same eight stages gives */
	struct perf_batch b8 = perf_decode_batch(n8, ctx);
	assert_true(p8.tok_s > 4 * n8 / (perf_step_ns(&pp8, &b8) * 1e-9));
	/* a sequence's time per token is never below the sum over its stages:
	 * one GPU running the same micro-batch alone, plus the hand-offs */
	struct perf_batch bm = perf_decode_batch(p8.micro_seqs, ctx);
	assert_true(p8.cycle_ns >= perf_step_ns(&one, &bm) + p8.handoff_ns - 1e-6);
	assert_true(p8.cycle_ns >= p8.round_ns);
	/* the bubble: GPUs idle for the hand-offs and the host work in the loop
	 * and while the last stage runs the lm-head, which makes it the
	 * busiest: the cycle is its eight micro-batches */
	assert_true(fabs(p8.cycle_ns - 8 * p8.stage_ns) < 1e-6 * p8.cycle_ns);
	assert_true(p8.bubble > 0.05 && p8.bubble < 0.3);
	assert_true(fabs(p8.bubble - (1 - (p8.round_ns - p8.host_ns - p8.handoff_ns) /
					  p8.cycle_ns)) < 1e-12);
}

/* The cycle by hand, and decode runs summed in closed form against the
 * step-by-step sum, across the crossings of R, M s and M host. */
static void test_pp_cycle_and_runs(void **state)
{
	const struct catalog *cat = *state;
	struct perf_model pm;
	model_pp(&pm, cat, "h100-sxm", "llama-3.1-8b", "vllm", 4);
	struct pipeline_step p;
	pipeline_decode_step(&pm, 1, 100, &p);
	/* one sequence: one micro-batch, nothing overlaps: the round trip with
	 * the host in series */
	assert_int_equal(p.micro_batches, 1);
	struct perf_batch b = perf_decode_batch(1, 100);
	assert_true(fabs(p.cycle_ns - perf_step_ns(&pm, &b)) < 1e-6);
	assert_true(fabs(p.tok_s_per_seq - 1e9 / p.cycle_ns) < 1e-9);
	/* 3 sequences over 4 stages: 3 micro-batches of 1 */
	pipeline_decode_step(&pm, 3, 100, &p);
	assert_int_equal(p.micro_batches, 3);
	assert_int_equal(p.micro_seqs, 1);
	double s = (p.round_ns - p.host_ns - p.handoff_ns - p.head_ns) / 4 + p.head_ns;
	assert_true(fabs(p.stage_ns - s) < 1e-6);
	assert_true(fabs(p.cycle_ns - fmax(fmax(p.round_ns, 3 * s), 3 * p.host_ns)) < 1e-6);
	/* vllm-v0's 6 ms of host work per micro-batch: 4 micro-batches of 250
	 * wait on the host (24 ms a cycle) until their contexts make the round
	 * trip longer, near 900 tokens */
	struct perf_model v0;
	model_pp(&v0, cat, "h100-sxm", "llama-3.1-8b", "vllm-v0", 4);
	pipeline_decode_step(&v0, 1000, 700, &p);
	assert_true(p.cycle_ns == 4 * p.host_ns && p.round_ns < p.cycle_ns);
	pipeline_decode_step(&v0, 1000, 1399, &p);
	assert_true(p.cycle_ns > 4 * p.host_ns);
	const struct perf_model *models[] = { &pm, &v0 };
	const int32_t seqs[] = { 1, 3, 4, 64, 1000 };
	const int64_t ctx[] = { 0, 700, 30000 };
	for (size_t m = 0; m < 2; m++)
		for (size_t i = 0; i < sizeof(seqs) / sizeof(seqs[0]); i++)
			for (size_t j = 0; j < sizeof(ctx) / sizeof(ctx[0]); j++) {
				int64_t k = 700;
				double brute = 0;
				for (int64_t t = 0; t < k; t++) {
					pipeline_decode_step(models[m], seqs[i], ctx[j] + t, &p);
					brute += p.cycle_ns;
				}
				double run = pipeline_decode_run_ns(models[m], seqs[i], ctx[j], k);
				if (fabs(run - brute) > 1e-9 * brute)
					fail_msg("%s seqs %d ctx %lld: run %.6f ms, steps %.6f ms",
						 models[m]->engine_id, seqs[i], (long long)ctx[j],
						 run / 1e6, brute / 1e6);
			}
	assert_true(pipeline_decode_run_ns(&pm, 4, 0, 0) == 0);
}

static void model_cap(struct perf_model *pm, const struct catalog *cat, double watts)
{
	struct perf_opts o;
	perf_opts_init(&o);
	o.hardware = "rtx-3090";
	o.model = "llama-2-7b";
	o.weight_format = "gguf-q4-0";
	o.engine = "llama.cpp";
	o.power_limit_w = watts;
	model_opts(pm, cat, &o);
}

static void model_ep(struct perf_model *pm, const struct catalog *cat, const char *hw,
		     const char *m, const char *wf, int n)
{
	struct perf_opts o;
	perf_opts_init(&o);
	o.hardware = hw;
	o.model = m;
	o.weight_format = wf;
	o.tp = n;
	o.ep = n;
	model_opts(pm, cat, &o);
}

static void test_power_cap(void **state)
{
	const struct catalog *cat = *state;
	/* the clock by hand: 30% of 350 W does not follow the clock, the rest
	 * goes as its cube */
	double k;
	struct diag d;
	diag_init(&d);
	assert_int_equal(power_clock_fraction(250, 350, "x", &k, &d), 0);
	assert_true(fabs(k - cbrt((250 - 105.0) / 245.0)) < 1e-12);
	assert_int_equal(power_clock_fraction(0, 350, "x", &k, &d), 0);
	assert_true(k == 1);
	assert_int_equal(power_clock_fraction(400, 350, "x", &k, &d), 0);
	assert_true(k == 1);
	assert_int_equal(power_clock_fraction(100, 350, "rtx-3090", &k, &d), DIAG_EINPUT);
	assert_non_null(strstr(d.msg, "expected more than 105 W"));
	diag_init(&d);
	assert_int_equal(power_clock_fraction(100, 0, "x", &k, &d), DIAG_EINPUT);

	struct perf_model full, w300, w250, w200, w150;
	model_cap(&full, cat, 0);
	model_cap(&w300, cat, 300);
	model_cap(&w250, cat, 250);
	model_cap(&w200, cat, 200);
	model_cap(&w150, cat, 150);
	assert_true(full.clock_fraction == 1 && full.power_limit_w == 0);
	assert_true(w250.power_limit_w == 250);
	/* prefill follows the clock: the sweep's 0.943 and 0.853 of full power
	 * at 300 and 250 W, within 5% */
	double pre = prefill_tok_s(&full, 512, 512);
	double r300 = prefill_tok_s(&w300, 512, 512) / pre, r250 = prefill_tok_s(&w250, 512, 512) / pre;
	if (fabs(r300 / (9326.0 / 9893) - 1) > 0.05 || fabs(r250 / (8436.0 / 9893) - 1) > 0.05)
		fail_msg("prefill at 300 / 250 W: %.3f / %.3f of full power, measured 0.943 / 0.853",
			 r300, r250);
	/* decode hardly moves: within 6% of the sweep's 0.941 at 200 W and 15%
	 * of its 0.862 at 150 W, and it loses under a fifth of what prefill
	 * loses */
	struct perf_batch b = perf_decode_batch(1, 512);
	double dec = perf_step_ns(&full, &b);
	double d200 = dec / perf_step_ns(&w200, &b), d150 = dec / perf_step_ns(&w150, &b);
	double p200 = prefill_tok_s(&w200, 512, 512) / pre;
	if (fabs(d200 / (68.3 / 72.6) - 1) > 0.06 || fabs(d150 / (62.6 / 72.6) - 1) > 0.15 ||
	    !(1 - d200 < 0.2 * (1 - p200)))
		fail_msg("decode at 200 / 150 W: %.3f / %.3f of full power (measured 0.941 / 0.862); "
			 "prefill at 200 W %.3f", d200, d150, p200);
	/* bandwidth is not scaled, compute and the GPU's fixed costs are */
	assert_true(w200.ns_weights == full.ns_weights);
	assert_true(fabs(w200.ns_per_token * w200.clock_fraction - full.ns_per_token) <
		    1e-9 * full.ns_per_token);
	assert_true(fabs(w200.gpu_fixed_ns * w200.clock_fraction - full.gpu_fixed_ns) < 1e-6);
	assert_true(fabs((w200.overhead_ns - w200.gpu_fixed_ns) -
			 (full.overhead_ns - full.gpu_fixed_ns)) < 1e-6);
	/* a limit the clock model cannot meet is an input error */
	struct perf_opts o;
	perf_opts_init(&o);
	o.hardware = "rtx-3090";
	o.model = "llama-2-7b";
	o.power_limit_w = 100;
	struct perf_model bad;
	diag_init(&d);
	assert_int_equal(perf_model_init_opts(&bad, cat, &o, &d), DIAG_EINPUT);
}


/* pp512 of Llama-2-7B Q4_0 with -fa 0, one GPU (llama-bench, llama.cpp
 * discussion 15013, the calibration set's rows), per SM and rated clock.
 * llama.cpp's quantized matmuls are charged per SM and clock; a board
 * whose rating cannot feed its SMs at the rated clock in them holds a
 * lower one (families.json sm_w_at_1ghz).  The RTX PRO 6000 Max-Q, the
 * 600 W card's 188 SMs at 300 W, measured 0.767 of it (12,742 against
 * 16,619 tok/s): at their rated clocks (2,288 and 2,617 MHz) the model
 * gives 0.88; with the clock the 300 W feeds it is within 10%.  The L40, the RTX 4090's AD102 with
 * 142 SMs at 300 W against 128 at 450 W, measured 0.541 of the 4090's
 * rate per SM at 0.99 of its rated clock: the model goes below 0.8 (it
 * stays above the measurement: the L40's row is the family's worst,
 * docs/validation.md). */
static double pp512_q4(const struct catalog *cat, const char *hw)
{
	struct perf_opts o;
	perf_opts_init(&o);
	o.hardware = hw;
	o.model = "llama-2-7b";
	o.weight_format = "gguf-q4-0";
	o.engine = "llama.cpp";
	o.no_flash_attention = true;
	struct perf_model pm;
	model_opts(&pm, cat, &o);
	assert_true(pm.issue_bound_matmul);
	return prefill_tok_s(&pm, 512, 512);
}

static void test_board_power_in_matmuls(void **state)
{
	const struct catalog *cat = *state;
	double maxq = pp512_q4(cat, "rtx-pro-6000-maxq") / pp512_q4(cat, "rtx-pro-6000");
	if (fabs(maxq / 0.767 - 1) > 0.10)
		fail_msg("Max-Q / RTX PRO 6000 pp512: %.3f, 0.767 measured", maxq);
	double l40 = pp512_q4(cat, "l40") / 142 / (pp512_q4(cat, "rtx-4090") / 128);
	if (!(l40 < 0.8 && l40 > 0.541))
		fail_msg("L40 / RTX 4090 pp512 per SM: %.3f, 0.541 measured", l40);
}

/* The catalogue's power_limit_w applies unless the caller gives one. */
static void test_power_cap_catalogue(void **state)
{
	(void)state;
	size_t n;
	const struct catalog_file *orig = catalog_embedded(&n);
	struct catalog_file files[8];
	assert_true(n <= 8);
	const char *anchor = "\"id\": \"rtx-3090\",";
	const char *add = "\"id\": \"rtx-3090\", \"power_limit_w\": {\"value\": 250, \"unit\": "
			  "\"W\", \"source\": \"a capped board\", \"date\": \"2026-12\"},";
	char *edited = NULL;
	for (size_t i = 0; i < n; i++) {
		files[i] = orig[i];
		if (strcmp(orig[i].name, "hardware.json") != 0)
			continue;
		const char *at = strstr(orig[i].text, anchor);
		assert_non_null(at);
		size_t pre = (size_t)(at - orig[i].text);
		size_t len = orig[i].len - strlen(anchor) + strlen(add);
		edited = malloc(len + 1);
		assert_non_null(edited);
		memcpy(edited, orig[i].text, pre);
		memcpy(edited + pre, add, strlen(add));
		memcpy(edited + pre + strlen(add), at + strlen(anchor),
		       orig[i].len - pre - strlen(anchor));
		edited[len] = '\0';
		files[i].text = edited;
		files[i].len = len;
	}
	struct catalog *cat = NULL;
	struct diag d;
	diag_init(&d);
	if (catalog_parse(&cat, files, n, &d))
		fail_msg("%s", d.msg);
	assert_true(catalog_hardware(cat, "rtx-3090")->power_limit_w == 250);
	struct perf_model pm, over;
	model_cap(&pm, cat, 0);
	assert_true(pm.power_limit_w == 250);
	assert_true(fabs(pm.clock_fraction - cbrt(145.0 / 245.0)) < 1e-12);
	model_cap(&over, cat, 300);
	assert_true(over.power_limit_w == 300);
	catalog_free(cat);
	free(edited);
}

static void test_long_context_attention(void **state)
{
	const struct catalog *cat = *state;
	/* Llama-3.1-70B at tp 4 has CodeLlama-34B's per-GPU attention shape
	 * at 4 GPUs: 2 KV heads of 128 (8 query heads instead of 16, which
	 * changes only the compute side a decode step leaves idle) */
	struct perf_model pm;
	model_tp(&pm, cat, "a100-sxm-80gb", "llama-3.1-70b", "bf16", "vllm", 4);
	double layers = pm.layers;
	assert_true(fabs(pm.kv_full_bytes_per_token * pm.kv_gpu_fraction / layers - 1024) < 1e-9);
	static const struct {
		double b, len, us;
	} fd[] = { { 256, 256, 63.4 },  { 128, 512, 67.7 },  { 64, 1024, 77.7 },
		   { 32, 2048, 58.5 },  { 16, 4096, 57.0 },  { 8, 8192, 56.4 },
		   { 4, 16384, 58.2 },  { 2, 32768, 60.3 },  { 1, 65536, 64.4 },
		   { 1, 131072, 106.6 } };
	double t[10];
	for (int i = 0; i < 10; i++) {
		/* one layer of a decode step: every sequence's query over its
		 * keys */
		double keys = fd[i].b * fd[i].len;
		t[i] = fmax(pm.ns_per_pair * keys, pm.ns_per_kv_token * keys) / layers / 1e3;
	}
	/* as measured, the time follows batch x length alone (the measured
	 * times of equal KV lie within 30% of each other) ... */
	for (int i = 1; i < 9; i++) {
		assert_true(fabs(t[i] - t[0]) < 1e-9 * t[0]);
		assert_true(fd[i].us / fd[0].us < 1.3 && fd[0].us / fd[i].us < 1.3);
	}
	/* ... and 65,536 more keys cost the measured 42.2 us (one call's fixed
	 * kernels cancel out), within 10%: the KV streams at the family's
	 * bandwidth fraction at 128K as at 256 */
	double marginal = fd[9].us - fd[8].us;
	if (fabs((t[9] - t[8]) / marginal - 1) > 0.10)
		fail_msg("65,536 more keys: %.1f us modelled, %.1f measured", t[9] - t[8], marginal);
	/* prefill: the attention FLOP rate inside the published ranges */
	double a100 = pm.attn_flops_per_pair / pm.tp / pm.ns_per_pair * 1e9 / pm.bf16_peak_flops;
	assert_true(a100 >= 0.50 && a100 <= 0.73);
	struct perf_model h;
	model_tp(&h, cat, "h100-sxm", "llama-3.1-8b", "bf16", "vllm", 1);
	double h100 = h.attn_flops_per_pair / h.ns_per_pair * 1e9 / h.bf16_peak_flops;
	assert_true(h100 > 0.35 && h100 <= 0.75);
	/* at 128K tokens a prompt's attention outweighs its matrices: the
	 * quadratic term, 4 H d L per pair over n (n + 1) / 2 pairs */
	struct perf_batch b = perf_prefill_batch(131072, 0);
	double attn = h.ns_per_pair * (double)b.attn_pairs;
	double lin = h.ns_per_token * 131072;
	assert_true(attn > 2.5 * lin);
}

/* DeepEP V1, intranode EP 8 on H800s (NVLink 200 GB/s per direction):
 * 4,096 tokens per GPU, hidden 7168, top-8 experts within 4 of the 8 GPUs'
 * expert groups, FP8 dispatch at 153 GB/s and BF16 combine at 158 GB/s of
 * received bytes (the GPU's own tokens counted).  FLOORS_A2A_LINK_EFF was
 * read off the dispatch; the combine, with twice the bytes per element, is
 * the check. */
static void test_alltoall_deepep(void **state)
{
	const struct catalog *cat = *state;
	struct perf_model pm;
	model_ep(&pm, cat, "h100-sxm", "deepseek-v3", "fp8", 8);
	/* FP8 checkpoints dispatch FP8 with a scale per 128 elements */
	assert_true(fabs(pm.floors.a2a_dispatch_ns_per_token / pm.floors.a2a_combine_ns_per_token -
			 (1 + 4.0 / 128) / 2) < 1e-12);
	/* the benchmark: each GPU holds one group, a token reaches 4 of them */
	struct floors f = pm.floors;
	f.experts = 8;
	f.per_token = 4;
	double fp8 = 1 + 4.0 / 128;
	floors_set_alltoall(&f, 1, 7168, fp8, 200e9 * FLOORS_A2A_LINK_EFF, 0);
	double tokens = 8 * 4096.0;
	double recv = 4096.0 * 4 * 7168; /* elements each GPU receives */
	double disp = f.a2a_dispatch_ns_per_token * tokens * 1e-9;
	double comb = f.a2a_combine_ns_per_token * tokens * 1e-9;
	double disp_meas = recv * fp8 / 153e9, comb_meas = recv * 2 / 158e9;
	if (fabs(disp / disp_meas - 1) > 0.03 || fabs(comb / comb_meas - 1) > 0.10)
		fail_msg("DeepEP EP8: dispatch %.0f us modelled, %.0f measured; combine %.0f us "
			 "modelled, %.0f measured", disp * 1e6, disp_meas * 1e6, comb * 1e6,
			 comb_meas * 1e6);
	/* per-expert copies (k (ep-1)/ep) would have put the dispatch 2x off
	 * there: 8 x 7/8 = 7 copies against the 3.5 that cross NVLink */
	assert_true(fabs(floors_a2a_remote_gpus(8, 4, 8) - 3.5) < 1e-12);
}

/* The mechanism: the GPUs a token reaches, bytes linear in the tokens,
 * time inverse to the link: EP 8 over PCIe against NVLink. */
static void test_alltoall_mechanism(void **state)
{
	const struct catalog *cat = *state;
	/* one expert per GPU: every one of the k experts is a copy */
	assert_true(fabs(floors_a2a_remote_gpus(8, 2, 8) - 2 * 7.0 / 8) < 1e-12);
	/* several experts per GPU share a copy: DeepSeek-V3 reaches ~4.6 */
	double ds = floors_a2a_remote_gpus(256, 8, 8);
	assert_true(ds > 4.5 && ds < 4.7);
	assert_true(floors_a2a_remote_gpus(256, 8, 1) == 0);
	double prev = 0;
	for (int k = 1; k <= 16; k++) {
		double r = floors_a2a_remote_gpus(256, k, 8);
		assert_true(r > prev && r <= fmin(k, 7) + 1e-12);
		prev = r;
	}
	/* bytes grow with tokens: the step's all-to-all is latency + slope */
	struct perf_model nv, pcie;
	model_ep(&nv, cat, "h100-sxm", "qwen3-30b-a3b", "bf16", 8);
	model_ep(&pcie, cat, "l40s", "qwen3-30b-a3b", "bf16", 8);
	struct perf_breakdown a, b;
	struct perf_batch b64 = perf_decode_batch(64, 1024), b256 = perf_decode_batch(256, 1024);
	perf_step_breakdown(&nv, &b64, &a);
	perf_step_breakdown(&nv, &b256, &b);
	assert_true(fabs((b.alltoall_ns - a.alltoall_ns) - 192 * nv.floors.a2a_ns_per_token) <
		    1e-6 * b.alltoall_ns);
	assert_true(fabs(a.alltoall_ns - nv.floors.a2a_fixed_ns - 64 * nv.floors.a2a_ns_per_token) <
		    1e-6 * a.alltoall_ns);
	/* BF16 checkpoints dispatch 16-bit: dispatch and combine alike */
	assert_true(fabs(nv.floors.a2a_dispatch_ns_per_token - nv.floors.a2a_combine_ns_per_token) <
		    1e-12 * nv.floors.a2a_combine_ns_per_token);
	/* NVLink (450 GB/s each way) against PCIe 4.0 x16 (32 GB/s): the bytes
	 * take 14x longer (the latency is PCIe's too) */
	assert_true(fabs(pcie.floors.a2a_ns_per_token / nv.floors.a2a_ns_per_token -
			 nv.link_bw_bytes / pcie.link_bw_bytes) < 1e-9);
	assert_true(nv.link_bw_bytes / pcie.link_bw_bytes > 10);
	struct perf_batch chunk = perf_prefill_batch(8192, 0);
	struct perf_breakdown pc, nc;
	perf_step_breakdown(&pcie, &chunk, &pc);
	perf_step_breakdown(&nv, &chunk, &nc);
	assert_true(pc.alltoall_ns > 8 * nc.alltoall_ns);
}

/* llama.cpp's CUDA builds before pull 15525 (2025-08-23) routed each expert
 * matmul's tokens on the host behind a stream synchronisation: a cost per
 * token no GPU shortens.  The gpt-oss guide (discussion 15396, -ub 2048)
 * measured gpt-oss-20b pp2048 at 8,022 tok/s on an RTX 4090 with build 6210
 * and 8,171 on an RTX 4080 SUPER with build 6316, after the pull: the
 * smaller board keeps up with one of 1.6x its SMs x clock.  The model gives
 * that ratio within 20% with each board's build, where without the build
 * it follows the boards' size (1.5). */
static void test_llamacpp_host_routing(void **state)
{
	const struct catalog *cat = *state;
	struct perf_opts o;
	perf_opts_init(&o);
	o.model = "gpt-oss-20b";
	o.weight_format = "gguf-mxfp4";
	o.engine = "llama.cpp";
	struct perf_model old4090, new4090, new4080s, old_small, old_big, dense_old, dense_new;
	o.hardware = "rtx-4090";
	o.engine_build = 6210;
	model_opts(&old4090, cat, &o);
	o.engine_build = 0; /* unknown: a current build */
	model_opts(&new4090, cat, &o);
	o.hardware = "rtx-4080-super";
	o.engine_build = 6316;
	model_opts(&new4080s, cat, &o);
	double meas = 8022.33 / 8170.95;
	double ratio = prefill_tok_s(&old4090, 2048, 2048) / prefill_tok_s(&new4080s, 2048, 2048);
	double no_build = prefill_tok_s(&new4090, 2048, 2048) / prefill_tok_s(&new4080s, 2048, 2048);
	/* within 20%, where the boards' size alone gives 1.5 */
	if (fabs(ratio / meas - 1) > 0.20 || !(fabs(log(ratio / meas)) < 0.5 * fabs(log(no_build / meas))))
		fail_msg("RTX 4090 (6210) / RTX 4080 SUPER (6316) pp2048: %.3f, %.3f measured, %.3f "
			 "without the builds", ratio, meas, no_build);
	/* one board, both builds: only the host's share moves */
	assert_true(new4090.ns_host_routing_per_token == 0);
	assert_true(old4090.ns_host_routing_per_token > 0);
	double per_tok = old4090.moe_layers * old4090.engine.moe_host_routing_us * 1e3;
	assert_true(fabs(old4090.ns_host_routing_per_token - per_tok) < 1e-9 * per_tok);
	double d = (perf_prefill_ns(&old4090, 2048, 0, 2048) - perf_prefill_ns(&new4090, 2048, 0,
										 2048));
	assert_true(fabs(d - 2048 * per_tok) < 1e-6 * d);
	/* the same cost on a small and a large board */
	o.engine_build = 6208;
	o.hardware = "rtx-5060-ti-16gb";
	model_opts(&old_small, cat, &o);
	o.hardware = "rtx-pro-6000";
	model_opts(&old_big, cat, &o);
	assert_true(old_small.ns_host_routing_per_token == old_big.ns_host_routing_per_token);
	/* experts partly on the host take the offload path, which does not
	 * route through MMQ */
	o.gpu_expert_fraction = 0.5;
	struct perf_model offloaded;
	model_opts(&offloaded, cat, &o);
	assert_true(offloaded.ns_host_routing_per_token == 0);
	o.gpu_expert_fraction = 1;
	/* decode (the matrix-vector kernels) and dense models pay nothing */
	struct perf_batch one = { .new_tokens = 1, .seqs = 1, .decode_seqs = 1,
				  .attn_pairs = 128, .kv_read_tokens = 128 };
	assert_true(perf_step_ns(&old4090, &one) == perf_step_ns(&new4090, &one));
	o.model = "llama-2-7b";
	o.weight_format = "gguf-q4-0";
	o.engine_build = 6210;
	model_opts(&dense_old, cat, &o);
	o.engine_build = 0;
	model_opts(&dense_new, cat, &o);
	assert_true(perf_prefill_ns(&dense_old, 512, 0, 512) ==
		    perf_prefill_ns(&dense_new, 512, 0, 512));
	/* Apple's Metal backend never routed on the host */
	o.model = "gpt-oss-20b";
	o.weight_format = "gguf-mxfp4";
	o.hardware = "apple-m1-max-32c";
	o.engine_build = 6180;
	struct perf_model metal;
	model_opts(&metal, cat, &o);
	assert_true(metal.ns_host_routing_per_token == 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_fp4_paths, setup, teardown),
		cmocka_unit_test_setup_teardown(test_grouped_gemm_deepgemm, setup, teardown),
		cmocka_unit_test(test_grouped_gemm_padding),
		cmocka_unit_test_setup_teardown(test_grouped_gemm_step, setup, teardown),
		cmocka_unit_test_setup_teardown(test_llamacpp_moe_tiles, setup, teardown),
		cmocka_unit_test_setup_teardown(test_llamacpp_flash_attention, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pp_offline_throughput, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pp_cycle_and_runs, setup, teardown),
		cmocka_unit_test_setup_teardown(test_power_cap, setup, teardown),
		cmocka_unit_test_setup_teardown(test_board_power_in_matmuls, setup, teardown),
		cmocka_unit_test(test_power_cap_catalogue),
		cmocka_unit_test_setup_teardown(test_long_context_attention, setup, teardown),
		cmocka_unit_test_setup_teardown(test_llamacpp_host_routing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_alltoall_deepep, setup, teardown),
		cmocka_unit_test_setup_teardown(test_alltoall_mechanism, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
