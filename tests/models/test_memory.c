/* SPDX-License-Identifier: Apache-2.0
 * Tests for models/memory: KV bytes per token, weight bytes, the memory plan
 * (Llama-3.1-8B BF16 on H100 at 0.9 lands within 2% of the ~437K tokens
 * vLLM logs for Llama-3-8B),
 * and the errors for weights that do not fit and bad arguments.
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

static int setup(void **state)
{
	struct diag d;
	diag_init(&d);
	struct catalog *cat = NULL;
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

static void test_kv_bytes_per_token(void **state)
{
	const struct catalog *cat = *state;
	const struct cat_kv_dtype *bf16 = catalog_kv_dtype(cat, "bf16");
	const struct cat_kv_dtype *fp8 = catalog_kv_dtype(cat, "fp8");
	/* 2 (K and V) x layers x kv_heads x head_dim x bytes */
	assert_int_equal(mem_kv_bytes_per_token(catalog_model(cat, "llama-3.1-8b"), bf16), 131072);
	assert_int_equal(mem_kv_bytes_per_token(catalog_model(cat, "llama-3.1-8b"), fp8), 65536);
	assert_int_equal(mem_kv_bytes_per_token(catalog_model(cat, "llama-2-7b"), bf16), 524288);
	assert_int_equal(mem_kv_bytes_per_token(catalog_model(cat, "qwen2.5-7b"), bf16), 57344);
	assert_int_equal(mem_kv_bytes_per_token(catalog_model(cat, "llama-3.1-70b"), bf16), 327680);
}

static void test_weights_bytes(void **state)
{
	const struct catalog *cat = *state;
	const struct cat_model *m = catalog_model(cat, "llama-3.1-8b");
	/* BF16: two bytes for each of the 8,030,261,248 parameters */
	assert_int_equal(mem_weights_bytes(m, catalog_weight_format(cat, "bf16")), 16060522496LL);
	/* FP8: one byte per linear weight, embeddings/lm-head/norms stay 16-bit */
	assert_int_equal(mem_weights_bytes(m, catalog_weight_format(cat, "fp8")), 9081200640LL);
	int64_t awq = mem_weights_bytes(m, catalog_weight_format(cat, "awq"));
	assert_true(awq > 5.5e9 && awq < 6.0e9);
}

static void test_plan_llama8b_h100(void **state)
{
	const struct catalog *cat = *state;
	struct mem_plan p;
	struct diag d;
	diag_init(&d);
	int rc = mem_plan(&p, cat, "H100", "llama-3.1-8b", "bf16", "bf16", 1, 0.9, 8192, &d);
	if (rc)
		fail_msg("%s", d.msg);
	assert_int_equal(p.kv_bytes_per_token, 131072);
	assert_int_equal(p.weights_bytes, 16060522496LL);
	/* 79.22 GiB visible to the engine */
	assert_int_equal(p.device_bytes, (int64_t)(79.22 * 1073741824.0));
	assert_int_equal(p.reserve_bytes, p.runtime_reserve_bytes + p.activation_bytes);
	assert_int_equal(p.kv_bytes, p.budget_bytes - p.weights_bytes - p.reserve_bytes);
	assert_int_equal(p.kv_capacity_tokens, p.kv_bytes / p.kv_bytes_per_token);
	/* vLLM logs 53.29 GiB of KV = 436,551 tokens for Llama-3-8B (same
	 * shapes) with a larger non-PyTorch reserve (pull request 10511) */
	assert_true(p.kv_bytes > 50e9 && p.kv_bytes < 60e9);
	assert_true(p.kv_capacity_tokens > 430000 && p.kv_capacity_tokens < 460000);
	/* the engine-neutral profile: the forward pass sets the peak */
	assert_int_equal(p.activation_bytes, p.forward_bytes);
	assert_int_equal(p.forward_bytes, 8192LL * 2 * (3 * 14336 + 3 * 4096));
	assert_int_equal(p.sampler_bytes, 256LL * 128256 * 4 + 8192LL * 4096 * 2);

	/* as that vLLM profiled it: 256 sequences through the PyTorch sort,
	 * 1.79 GiB outside PyTorch.  It logs an activation peak of 1.26 GiB
	 * and 53.29 GiB of KV. */
	struct mem_opts o;
	mem_opts_init(&o);
	o.hardware = "H100";
	o.model = "llama-3.1-8b";
	o.engine = (struct mem_engine){ .sampler_seqs = 256,
					.sampler_bytes_per_logit = MEM_SAMPLER_SORT_BYTES_PER_LOGIT,
					.non_torch_gib = 1.79 };
	struct mem_plan v;
	assert_int_equal(mem_plan_opts(&v, cat, &o, &d), 0);
	double act_gib = v.activation_bytes / 1073741824.0;
	assert_true(act_gib > 1.2 && act_gib < 1.26);
	assert_int_equal(v.activation_bytes, v.sampler_bytes);
	assert_true(fabs(v.kv_bytes / 1073741824.0 - 53.29) < 0.1);

	/* FP8 KV doubles the tokens; a bigger profiling step leaves fewer */
	struct mem_plan q;
	assert_int_equal(mem_plan(&q, cat, "H100", "llama-3.1-8b", "bf16", "fp8", 1, 0.9, 8192, &d),
			 0);
	assert_true(q.kv_capacity_tokens >= 2 * p.kv_capacity_tokens - 1 &&
		    q.kv_capacity_tokens <= 2 * p.kv_capacity_tokens + 1);
	assert_int_equal(mem_plan(&q, cat, "H100", "llama-3.1-8b", NULL, NULL, 1, 0.9, 32768, &d), 0);
	assert_true(q.kv_capacity_tokens < p.kv_capacity_tokens);
	assert_true(q.activation_bytes > p.activation_bytes);
	/* lower utilisation, fewer tokens */
	assert_int_equal(mem_plan(&q, cat, "H100", "llama-3.1-8b", NULL, NULL, 1, 0.5, 8192, &d), 0);
	assert_true(q.kv_capacity_tokens < p.kv_capacity_tokens / 2);
}

static void test_plan_datasheet_memory(void **state)
{
	const struct catalog *cat = *state;
	struct mem_plan p;
	struct diag d;
	diag_init(&d);
	/* no driver-reported figure for L40: the datasheet's 48 GB */
	assert_int_equal(mem_plan(&p, cat, "l40", "qwen2.5-7b", "int4-awq", "fp8", 1, 0.9, 2048,
				  &d), 0);
	assert_int_equal(p.device_bytes, 48000000000LL);
	assert_int_equal(p.budget_bytes, 43200000000LL);
	assert_true(p.kv_capacity_tokens > 0);
	/* the L40S's driver reports 44.53 GiB (ECC takes 1/16 of the 48 GB) */
	assert_int_equal(mem_plan(&p, cat, "l40s", "qwen2.5-7b", "int4-awq", "fp8", 1, 0.9, 2048,
				  &d), 0);
	assert_int_equal(p.device_bytes, (int64_t)(44.53 * 1073741824.0));
	/* Llama-3.1-70B in AWQ fits one H200 */
	assert_int_equal(mem_plan(&p, cat, "h200", "llama-3.1-70b", "int4-awq", NULL, 1, 0.9, 8192,
				  &d), 0);
	assert_true(p.weights_bytes > 35e9 && p.weights_bytes < 40e9);
}

static void test_plan_errors(void **state)
{
	const struct catalog *cat = *state;
	struct mem_plan p;
	struct diag d;

	diag_init(&d);
	assert_int_equal(mem_plan(&p, cat, "h100-sxm", "llama-3.1-70b", "bf16", NULL, 1, 0.9, 8192,
				  &d), DIAG_EINPUT);
	assert_non_null(strstr(d.msg, "llama-3.1-70b in bf16 needs 141.1 GB per GPU for its "
				      "weights (1 GPU), but h100-sxm has 73.7 GB available"));
	assert_int_equal(p.weights_bytes, 141107412992LL);

	diag_init(&d);
	assert_int_equal(mem_plan(&p, cat, "rtx-4090", "llama-3.1-8b", "bf16", NULL, 1, 0.7, 8192,
				  &d), DIAG_EINPUT);
	assert_non_null(strstr(d.msg, "needs 16.1 GB per GPU for its weights (1 GPU), but "
				      "rtx-4090 has"));

	diag_init(&d);
	assert_int_equal(mem_plan(&p, cat, "h100-sxm", "llama-3.1-70b", NULL, NULL, 0, 0.9, 8192,
				  &d), DIAG_EINPUT);
	assert_non_null(strstr(d.msg, "expected whole numbers from 1 to 1024"));

	diag_init(&d);
	assert_int_equal(mem_plan(&p, cat, "h100-sxm", "llama-3.1-8b", NULL, NULL, 1, 1.5, 8192,
				  &d), DIAG_EINPUT);
	assert_non_null(strstr(d.msg, "gpu_memory_utilization 1.5 is out of range"));
	diag_init(&d);
	assert_int_equal(mem_plan(&p, cat, "h100-sxm", "llama-3.1-8b", NULL, NULL, 1, 0, 8192, &d),
			 DIAG_EINPUT);
	diag_init(&d);
	assert_int_equal(mem_plan(&p, cat, "h100-sxm", "llama-3.1-8b", NULL, NULL, 1, 0.9, 0, &d),
			 DIAG_EINPUT);
	assert_non_null(strstr(d.msg, "max_num_batched_tokens 0 is out of range"));
	diag_init(&d);
	assert_int_equal(mem_plan(&p, cat, "tpu-v9", "llama-3.1-8b", NULL, NULL, 1, 0.9, 8, &d),
			 DIAG_EINPUT);
	assert_non_null(strstr(d.msg, "unknown hardware 'tpu-v9'"));
}

/* The two phases of the profiling step: the forward pass's MLP is split by
 * tensor parallelism, the hidden-wide buffers and the sampler are not. */
static void test_activation_phases(void **state)
{
	const struct catalog *cat = *state;
	struct mem_opts o;
	mem_opts_init(&o);
	o.hardware = "h100-sxm";
	o.model = "llama-3.1-70b";
	o.weight_format = "fp8";
	o.max_num_batched_tokens = 2048;
	o.engine.sampler_seqs = 1024;
	o.engine.sampler_bytes_per_logit = MEM_SAMPLER_SORT_BYTES_PER_LOGIT;
	struct mem_plan p;
	struct diag d;
	diag_init(&d);
	for (int tp = 2; tp <= 8; tp *= 2) {
		o.tp = tp;
		assert_int_equal(mem_plan_opts(&p, cat, &o, &d), 0);
		assert_int_equal(p.forward_bytes, 2048LL * 2 * (3 * 28672 / tp + 3 * 8192));
		assert_int_equal(p.sampler_bytes,
				 (int64_t)ceil(1024.0 * 128256 * 38 + 2048.0 * 8192 * 2));
		assert_int_equal(p.activation_bytes, p.sampler_bytes);
	}
	/* FlashInfer's sampler holds 10 bytes a logit: the forward pass of a
	 * large step is then the peak */
	o.tp = 1;
	o.model = "llama-3.1-8b";
	o.max_num_batched_tokens = 16384;
	o.engine.sampler_seqs = 256;
	o.engine.sampler_bytes_per_logit = MEM_SAMPLER_FLASHINFER_BYTES_PER_LOGIT;
	assert_int_equal(mem_plan_opts(&p, cat, &o, &d), 0);
	assert_true(p.forward_bytes > p.sampler_bytes);
	assert_int_equal(p.activation_bytes, p.forward_bytes);
}

/* The engine's start-up profile from engines.json: memory outside PyTorch,
 * more of it across GPUs, and CUDA graphs where the release charges them. */
static void test_engine_profile_reserve(void **state)
{
	const struct catalog *cat = *state;
	struct engine_table *et = malloc(sizeof(*et));
	assert_non_null(et);
	struct diag d;
	diag_init(&d);
	assert_int_equal(engine_table_load(et, NULL, &d), 0);
	struct engine_params v1, v2025, v0, llama;
	engine_resolve(engine_find(et, "vllm"), "nvidia-ada", &v1);
	engine_resolve(engine_find(et, "vllm-2025"), "nvidia-ada", &v2025);
	engine_resolve(engine_find(et, "vllm-v0"), "nvidia-ada", &v0);
	engine_resolve(engine_find(et, "llama.cpp"), "nvidia-ada", &llama);
	/* the sampler paths the profiles stand for */
	assert_true(v1.kv_sampler_bytes_per_logit == MEM_SAMPLER_FLASHINFER_BYTES_PER_LOGIT);
	assert_true(v2025.kv_sampler_bytes_per_logit == MEM_SAMPLER_SORT_BYTES_PER_LOGIT);
	assert_true(v0.kv_sampler_bytes_per_logit == MEM_SAMPLER_SORT_BYTES_PER_LOGIT);
	assert_true(v2025.kv_cuda_graph_gib == 0 && v0.kv_cuda_graph_gib == 0);
	assert_true(v1.kv_cuda_graph_gib > 0);

	struct mem_opts o;
	mem_opts_init(&o);
	o.hardware = "rtx-4090";
	o.model = "qwen3-8b";
	struct mem_plan p, q;
	mem_engine_of(&o.engine, &v1, 256);
	assert_int_equal(mem_plan_opts(&p, cat, &o, &d), 0);
	assert_int_equal(p.non_torch_bytes, (int64_t)ceil(v1.kv_non_torch_gib * 1073741824.0));
	assert_int_equal(p.cuda_graph_bytes, (int64_t)ceil(v1.kv_cuda_graph_gib * 1073741824.0));
	assert_int_equal(p.runtime_reserve_bytes, p.non_torch_bytes + p.cuda_graph_bytes);
	/* Qwen3-8B in BF16 on one RTX 4090 at 0.9 and 8192 batched tokens:
	 * about 4.7 GiB of KV, 30,000 to 37,000 tokens (issue 34) */
	assert_true(p.kv_capacity_tokens > 30000 && p.kv_capacity_tokens < 37000);
	/* across two GPUs each pays the communicators' buffers too */
	o.tp = 2;
	assert_int_equal(mem_plan_opts(&q, cat, &o, &d), 0);
	assert_int_equal(q.non_torch_bytes,
			 (int64_t)ceil((v1.kv_non_torch_gib + v1.kv_non_torch_tp_gib) * 1073741824.0));
	/* an engine without a start-up profile keeps the family's reserve and
	 * an FP32 logits buffer */
	o.tp = 1;
	mem_engine_of(&o.engine, &llama, 256);
	assert_int_equal(mem_plan_opts(&q, cat, &o, &d), 0);
	assert_int_equal(q.non_torch_bytes, (int64_t)ceil(1.0 * 1073741824.0));
	assert_int_equal(q.cuda_graph_bytes, 0);
	assert_int_equal(q.sampler_bytes, (int64_t)ceil(256.0 * 151936 * 4 + 8192.0 * 4096 * 2));
	/* a profile out of range is an input error */
	o.engine.cuda_graph_gib = -1;
	diag_init(&d);
	assert_int_equal(mem_plan_opts(&q, cat, &o, &d), DIAG_EINPUT);
	assert_non_null(strstr(d.msg, "engine start-up profile out of range"));
	free(et);
}

static void test_unified_memory_device(void **state)
{
	(void)state;
	/* a 128 GB unified-memory machine where 65% may hold weights and KV */
	struct cat_hardware hw = { .memory_gb = 128, .unified_memory = true,
				   .usable_memory_fraction = 0.65 };
	assert_int_equal(mem_device_bytes(&hw), 83200000000LL);
	struct cat_hardware gpu = { .memory_gb = 24, .usable_memory_fraction = 1 };
	assert_int_equal(mem_device_bytes(&gpu), 24000000000LL);
}

static struct mem_opts opts(const char *hw, const char *model, const char *wf, int tp, int pp)
{
	struct mem_opts o;
	mem_opts_init(&o);
	o.hardware = hw;
	o.model = model;
	o.weight_format = wf;
	o.tp = tp;
	o.pp = pp;
	return o;
}

/* Tensor parallelism splits weights and KV heads over the GPUs of a stage;
 * pipeline parallelism splits the layers. */
static void test_plan_tp_pp(void **state)
{
	const struct catalog *cat = *state;
	struct diag d;
	diag_init(&d);
	struct mem_plan one, two, four, pp2;
	struct mem_opts o = opts("h100-sxm", "llama-3.1-70b", "fp8", 1, 1);
	assert_int_equal(mem_plan_opts(&one, cat, &o, &d), 0);
	o.tp = 2;
	assert_int_equal(mem_plan_opts(&two, cat, &o, &d), 0);
	o.tp = 4;
	assert_int_equal(mem_plan_opts(&four, cat, &o, &d), 0);
	o.tp = 1;
	o.pp = 2;
	assert_int_equal(mem_plan_opts(&pp2, cat, &o, &d), 0);
	assert_int_equal(two.gpus, 2);
	assert_int_equal(one.weights_total_bytes, two.weights_total_bytes);
	/* every matrix and the embeddings split in two */
	assert_true(llabs(2 * two.weights_bytes - one.weights_bytes) <= 2);
	/* 8 KV heads over 2 GPUs: half the KV per token on each */
	assert_int_equal(two.kv_gpu_bytes_per_token * 2, one.kv_gpu_bytes_per_token);
	assert_int_equal(one.kv_gpu_bytes_per_token, one.kv_bytes_per_token);
	/* more room and less per token: more than twice the tokens */
	assert_true(two.kv_capacity_tokens > 2 * one.kv_capacity_tokens);
	assert_true(four.kv_capacity_tokens > 2 * two.kv_capacity_tokens);
	/* pipeline stages: half the layers each, plus the embeddings (first) or
	 * the lm-head (last), as large as half of both */
	assert_int_equal(pp2.kv_gpu_bytes_per_token * 2, one.kv_gpu_bytes_per_token);
	assert_true(llabs(pp2.weights_bytes - two.weights_bytes) <= 2);
	/* 70B in BF16 does not fit one H100 but fits four */
	o = opts("h100-sxm", "llama-3.1-70b", "bf16", 4, 1);
	assert_int_equal(mem_plan_opts(&four, cat, &o, &d), 0);
	assert_true(four.kv_capacity_tokens > 400000);
	/* more KV heads than GPUs: each GPU keeps whole heads */
	o = opts("h100-sxm", "llama-3.1-70b", "fp8", 16, 1);
	struct mem_plan sixteen;
	assert_int_equal(mem_plan_opts(&sixteen, cat, &o, &d), 0);
	assert_int_equal(sixteen.kv_gpu_bytes_per_token * 8, one.kv_gpu_bytes_per_token);
	/* an MLA latent is kept whole on every GPU */
	o = opts("h200", "deepseek-v3", "fp8", 8, 1);
	struct mem_plan mla;
	assert_int_equal(mem_plan_opts(&mla, cat, &o, &d), 0);
	assert_int_equal(mla.kv_gpu_bytes_per_token, 61 * 576 * 2);
}

/* On a unified-memory machine the model may use the platform's share of
 * RAM (or less, when gpu_memory_utilization is lower). */
static void test_plan_unified(void **state)
{
	const struct catalog *cat = *state;
	const struct cat_hardware *spark = catalog_hardware(cat, "dgx-spark");
	assert_true(spark->unified_memory);
	struct diag d;
	diag_init(&d);
	struct mem_plan p;
	struct mem_opts o = opts("dgx-spark", "llama-3.1-8b", "bf16", 1, 1);
	o.gpu_memory_utilization = 1.0;
	assert_int_equal(mem_plan_opts(&p, cat, &o, &d), 0);
	double raw = spark->memory_visible_gib > 0 ? spark->memory_visible_gib * 1073741824.0
						    : spark->memory_gb * 1e9;
	assert_int_equal(p.budget_bytes, (int64_t)floor(raw * spark->usable_memory_fraction));
	assert_int_equal(p.device_bytes, mem_device_bytes(spark));
	o.gpu_memory_utilization = 0.3;
	assert_int_equal(mem_plan_opts(&p, cat, &o, &d), 0);
	assert_int_equal(p.budget_bytes, (int64_t)floor(raw * 0.3));
	/* a budget what-if: 96 GB of device memory */
	o = opts("h100-sxm", "llama-3.1-70b", "fp8", 1, 1);
	o.device_memory_gb = 96;
	assert_int_equal(mem_plan_opts(&p, cat, &o, &d), 0);
	assert_int_equal(p.device_bytes, 96000000000LL);
	/* unified memory cannot offload experts */
	o = opts("dgx-spark", "qwen3-30b-a3b", "bf16", 1, 1);
	o.gpu_expert_fraction = 0.5;
	diag_init(&d);
	assert_int_equal(mem_plan_opts(&p, cat, &o, &d), DIAG_EINPUT);
	assert_non_null(strstr(d.msg, "unified memory"));
}

/* A 753B MoE needs expert offload on a 96 GB GPU: the experts that do not
 * fit live in host RAM, which the plan states. */
static void test_plan_offload(void **state)
{
	const struct catalog *cat = *state;
	struct diag d;
	diag_init(&d);
	struct mem_plan p;
	struct mem_opts o = opts("rtx-pro-6000", "glm-5.2", "gguf-q4-k-m", 1, 1);
	assert_int_equal(mem_plan_opts(&p, cat, &o, &d), DIAG_EINPUT);
	assert_non_null(strstr(d.msg, "keep experts in host RAM"));
	double f = mem_max_gpu_expert_fraction(cat, &o, 32768);
	assert_true(f > 0 && f < 0.5);
	o.gpu_expert_fraction = f;
	diag_init(&d);
	if (mem_plan_opts(&p, cat, &o, &d))
		fail_msg("%s", d.msg);
	assert_true(p.kv_capacity_tokens >= 32768);
	assert_true(p.host_expert_bytes > 0);
	assert_int_equal(p.host_expert_bytes,
			 (int64_t)ceil((1 - f) * (double)p.expert_bytes));
	assert_int_equal(p.host_ram_needed_bytes,
			 p.host_expert_bytes + (int64_t)(MEM_HOST_RESERVE_GB * 1e9));
	/* the host holds most of the 400+ GB of experts */
	assert_true(p.host_expert_bytes > 250e9 && p.host_ram_needed_bytes < 512e9);
	/* a little more on the GPU no longer leaves the KV room */
	o.gpu_expert_fraction = fmin(1, f + 0.01);
	diag_init(&d);
	int rc = mem_plan_opts(&p, cat, &o, &d);
	assert_true(rc == DIAG_EINPUT || p.kv_capacity_tokens < 32768);
	/* dense models: 1 when they fit, -1 when not */
	o = opts("h100-sxm", "llama-3.1-8b", "bf16", 1, 1);
	assert_true(mem_max_gpu_expert_fraction(cat, &o, 1000) == 1);
	o = opts("rtx-4090", "llama-3.1-70b", "bf16", 1, 1);
	assert_true(mem_max_gpu_expert_fraction(cat, &o, 1000) < 0);
}

/* gpt-oss-120b alternates sliding-window (128 tokens) and full attention, 18
 * layers each: vLLM's hybrid manager groups them 18 and 18, so a token of
 * context costs 18 layers' KV, not 36, and the same memory holds twice the
 * tokens a full-attention model of the same per-layer shape would; each
 * running sequence keeps its window's blocks besides.  Worked by hand. */
static void test_plan_sliding_window_groups(void **state)
{
	struct catalog *cat = *state;
	struct diag d;
	diag_init(&d);
	struct mem_plan hybrid, full;
	assert_int_equal(mem_plan(&hybrid, cat, "h200", "gpt-oss-120b", "mxfp4", "bf16", 1, 0.9, 8192, &d), 0);
	/* K and V x 8 KV heads x 64 x 2 bytes = 2048 bytes per layer per token */
	assert_int_equal(hybrid.groups.group_layers, 18);
	assert_int_equal(hybrid.groups.full_groups, 1);
	assert_int_equal(hybrid.groups.window_groups, 1);
	assert_int_equal(hybrid.kv_gpu_bytes_per_token, 18 * 2048);
	assert_int_equal(hybrid.kv_capacity_tokens, hybrid.kv_bytes / (18 * 2048));
	assert_int_equal(hybrid.window_bytes_per_seq, 18 * 2048 * (128 + 16));
	assert_int_equal(hybrid.seq_kv_tokens, 128 + 16);
	/* the same model with every layer full attention */
	struct cat_model *m = (struct cat_model *)catalog_model(cat, "gpt-oss-120b");
	int64_t sw = m->sliding_window_layers;
	m->sliding_window_layers = 0;
	assert_int_equal(mem_plan(&full, cat, "h200", "gpt-oss-120b", "mxfp4", "bf16", 1, 0.9, 8192, &d), 0);
	m->sliding_window_layers = sw;
	assert_int_equal(full.kv_bytes, hybrid.kv_bytes);
	assert_int_equal(full.kv_gpu_bytes_per_token, 36 * 2048);
	assert_int_equal(full.seq_kv_tokens, 0);
	assert_true(hybrid.kv_capacity_tokens >= 2 * full.kv_capacity_tokens &&
		    hybrid.kv_capacity_tokens <= 2 * full.kv_capacity_tokens + 1);
	/* Llama 4 Scout: 36 chunked-attention layers and 12 global: groups of 12 */
	struct mem_kv_groups g;
	mem_kv_groups_of(catalog_model(cat, "llama-4-scout-17b-16e"), &g);
	assert_int_equal(g.group_layers, 12);
	assert_int_equal(g.full_groups, 1);
	assert_int_equal(g.window_groups, 3);
}

/* Qwen3.6-35B-A3B: 30 Gated DeltaNet layers keep a state per sequence, 10
 * full-attention layers a KV cache per token; the state is in the plan. */
static void test_plan_linear_state(void **state)
{
	const struct catalog *cat = *state;
	struct diag d;
	diag_init(&d);
	struct mem_plan p;
	assert_int_equal(mem_plan(&p, cat, "h100-sxm", "qwen3.6-35b-a3b", "fp8", "bf16", 1, 0.9, 8192, &d), 0);
	/* per layer: 32 v heads x 128 x 128 x 4 bytes of state, and 3 x (2 x 16 +
	 * 32) x 128 x 2 bytes of convolution window */
	int64_t layer = 32 * 128 * 128 * 4 + 3 * (2 * 16 + 32) * 128 * 2;
	assert_int_equal(p.state_bytes_per_seq, 30 * layer);
	assert_int_equal(mem_linear_state_bytes(catalog_model(cat, "qwen3.6-35b-a3b")), 30 * layer);
	assert_int_equal(p.groups.group_layers, 10);
	assert_int_equal(p.groups.linear_groups, 3);
	assert_int_equal(p.kv_gpu_bytes_per_token, mem_kv_bytes_per_token(catalog_model(cat, "qwen3.6-35b-a3b"),
									catalog_kv_dtype(cat, "bf16")));
	assert_int_equal(p.seq_kv_tokens, (30 * layer + p.kv_gpu_bytes_per_token - 1) / p.kv_gpu_bytes_per_token);
	/* split over two GPUs, each keeps half the heads' state */
	struct mem_opts o;
	mem_opts_init(&o);
	o.hardware = "h100-sxm";
	o.model = "qwen3.6-35b-a3b";
	o.weight_format = "fp8";
	o.tp = 2;
	assert_int_equal(mem_plan_opts(&p, cat, &o, &d), 0);
	assert_int_equal(p.state_bytes_per_seq, 15 * layer);
	/* a dense full-attention model keeps neither */
	assert_int_equal(mem_plan(&p, cat, "h100-sxm", "llama-3.1-8b", "bf16", "bf16", 1, 0.9, 8192, &d), 0);
	assert_int_equal(p.seq_kv_tokens, 0);
	assert_int_equal(p.kv_gpu_bytes_per_token, 131072);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kv_bytes_per_token),
		cmocka_unit_test(test_weights_bytes),
		cmocka_unit_test(test_plan_llama8b_h100),
		cmocka_unit_test(test_plan_datasheet_memory),
		cmocka_unit_test(test_plan_errors),
		cmocka_unit_test(test_activation_phases),
		cmocka_unit_test(test_engine_profile_reserve),
		cmocka_unit_test(test_unified_memory_device),
		cmocka_unit_test(test_plan_tp_pp),
		cmocka_unit_test(test_plan_unified),
		cmocka_unit_test(test_plan_offload),
		cmocka_unit_test(test_plan_sliding_window_groups),
		cmocka_unit_test(test_plan_linear_state),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
