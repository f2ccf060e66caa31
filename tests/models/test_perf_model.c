/* SPDX-License-Identifier: Apache-2.0
 * Tests for models/perf_model: roofline behaviour (batch-1 decode is memory
 * bound and scales with weight bytes; a large prefill is compute bound and
 * scales with FLOPs), error messages, and perf_decode_run_ns against a
 * brute-force sum of perf_step_ns over many seeded random batches.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "models/catalog.h"
#include "models/perf_model.h"

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

static void init_ok(struct perf_model *pm, const struct catalog *cat, const char *hw,
		    const char *model, const char *wf, const char *kv)
{
	struct diag d;
	diag_init(&d);
	if (perf_model_init(pm, cat, hw, model, wf, kv, 1, &d))
		fail_msg("%s/%s/%s: %s", hw, model, wf ? wf : "bf16", d.msg);
	assert_true(perf_model_check(pm));
}

/* One decode step of `seqs` sequences that each hold `ctx` tokens after it. */
static struct perf_batch decode_batch(int32_t seqs, int64_t ctx)
{
	return (struct perf_batch){ .new_tokens = seqs, .seqs = seqs, .decode_seqs = seqs,
				    .attn_pairs = (int64_t)seqs * ctx,
				    .kv_read_tokens = (int64_t)seqs * ctx };
}

/* A prefill chunk of n tokens on top of `cached` tokens of one sequence. */
static struct perf_batch prefill_batch(int64_t n, int64_t cached)
{
	int64_t pairs = n * cached + n * (n + 1) / 2;
	return (struct perf_batch){ .new_tokens = n, .seqs = 1, .decode_seqs = 0,
				    .attn_pairs = pairs, .kv_read_tokens = cached + n };
}

static void assert_close(double got, double want, double rel)
{
	double err = fabs(got - want) / fmax(fabs(want), 1e-300);
	if (err > rel)
		fail_msg("got %.17g, want %.17g (relative error %.3g > %.3g)", got, want, err, rel);
}

static void test_init_and_constants(void **state)
{
	const struct catalog *cat = *state;
	struct perf_model pm;
	init_ok(&pm, cat, "H100", "meta-llama/Llama-3.1-8B-Instruct", NULL, NULL);
	assert_string_equal(pm.hardware_id, "h100-sxm");
	assert_string_equal(pm.model_id, "llama-3.1-8b");
	assert_string_equal(pm.weight_format_id, "bf16");
	assert_string_equal(pm.kv_dtype_id, "bf16");
	assert_string_equal(pm.family_id, "nvidia-hopper");
	assert_int_equal(pm.matmul_dtype, CAT_DTYPE_BF16);
	assert_true(pm.kv_bytes_per_token == 131072);
	assert_true(pm.attn_flops_per_pair == 4.0 * 32 * 32 * 128);
	assert_true(pm.lm_head_flops_per_seq == 2.0 * 4096 * 128256);
	assert_true(pm.matmul_peak_flops == 989.4e12);
	assert_true(pm.overhead_ns > 0);

	/* fp8 on Ampere: FP8 bytes, BF16 math (no FP8 tensor cores) */
	init_ok(&pm, cat, "a100", "llama-3.1-8b", "fp8", NULL);
	assert_int_equal(pm.matmul_dtype, CAT_DTYPE_BF16);
	assert_true(pm.matmul_peak_flops == 312e12);
	init_ok(&pm, cat, "h100-sxm", "llama-3.1-8b", "fp8", "fp8");
	assert_int_equal(pm.matmul_dtype, CAT_DTYPE_FP8);
	assert_true(pm.kv_bytes_per_token == 65536);
	/* fp16 falls back to the bf16 rate where fp16 is not listed */
	init_ok(&pm, cat, "l40s", "qwen2.5-7b", "fp16", "fp16");
	assert_int_equal(pm.matmul_dtype, CAT_DTYPE_BF16);
}

static void test_errors(void **state)
{
	const struct catalog *cat = *state;
	struct perf_model pm;
	struct diag d;

	diag_init(&d);
	assert_int_equal(perf_model_init(&pm, cat, "h100-sxm", "llama-3.1-70b", NULL, NULL, 2,
					 &d), DIAG_EINPUT);
	assert_non_null(strstr(d.msg, "tensor parallelism (tp=2) is not modelled yet"));
	assert_non_null(strstr(d.msg, "later version"));

	diag_init(&d);
	assert_int_equal(perf_model_init(&pm, cat, "B300", "llama-3.1-8b", NULL, NULL, 1, &d),
			 DIAG_EINPUT);
	assert_non_null(strstr(d.msg, "unknown hardware 'B300' (known: h100-sxm, "));

	diag_init(&d);
	assert_int_equal(perf_model_init(&pm, cat, "h100-sxm", "llama-3.1-8b", "q4_k_m", NULL,
					 1, &d), DIAG_EINPUT);
	assert_non_null(strstr(d.msg, "unknown weight format 'q4_k_m'"));

	diag_init(&d);
	assert_int_equal(perf_model_init(&pm, cat, "h100-sxm", "llama-3.1-8b", NULL, "int4", 1,
					 &d), DIAG_EINPUT);
	assert_non_null(strstr(d.msg, "unknown KV-cache dtype 'int4'"));
}

static void test_decode_batch1_memory_bound(void **state)
{
	const struct catalog *cat = *state;
	const char *hws[] = { "h100-sxm", "h100-pcie", "h200", "a100-sxm-80gb", "l40s",
			      "rtx-4090" };
	for (size_t h = 0; h < sizeof(hws) / sizeof(hws[0]); h++) {
		struct perf_model bf16, fp8;
		init_ok(&bf16, cat, hws[h], "llama-3.1-8b", "bf16", NULL);
		init_ok(&fp8, cat, hws[h], "llama-3.1-8b", "fp8", NULL);
		struct perf_batch b = decode_batch(1, 1024);
		struct perf_breakdown x, y;
		perf_step_breakdown(&bf16, &b, &x);
		perf_step_breakdown(&fp8, &b, &y);
		assert_int_equal(x.bound, PERF_BOUND_MEMORY);
		assert_int_equal(y.bound, PERF_BOUND_MEMORY);
		assert_true(x.compute_ns < 0.05 * x.memory_ns);
		assert_close(x.step_ns, perf_step_ns(&bf16, &b), 1e-15);
		assert_close(x.step_ns, x.overhead_ns + x.memory_ns, 1e-15);
		/* the memory term is bytes over effective bandwidth */
		assert_close(x.memory_ns, x.bytes / (bf16.mem_bw_bytes * bf16.eff_bw) * 1e9, 1e-12);
		/* FP8 weights: about half the bytes, so about half the time.  A step
		 * reads 6,979,321,856 linear weights (1 byte in FP8) plus the norms
		 * and the lm-head, 525,602,816 weights that stay 16-bit. */
		assert_close(x.weight_bytes, (6979321856.0 + 525602816.0) * 2, 1e-15);
		assert_close(y.weight_bytes, 6979321856.0 + 525602816.0 * 2, 1e-15);
		double ratio = y.memory_ns / x.memory_ns;
		assert_true(ratio > 0.5 && ratio < 0.6);
		assert_close(ratio, y.bytes / x.bytes, 1e-12);
	}
	/* Llama-3.1-8B BF16 on H100 at batch 1: between 5 and 10 ms per token */
	struct perf_model pm;
	init_ok(&pm, cat, "h100-sxm", "llama-3.1-8b", NULL, NULL);
	struct perf_batch b = decode_batch(1, 1024);
	double ns = perf_step_ns(&pm, &b);
	assert_true(ns > 5e6 && ns < 10e6);
	/* a longer context only adds KV bytes */
	struct perf_batch longer = decode_batch(1, 100000);
	assert_close(perf_step_ns(&pm, &longer) - ns,
		     (100000 - 1024) * pm.kv_bytes_per_token / (pm.mem_bw_bytes * pm.eff_bw) * 1e9,
		     1e-9);
}

static void test_prefill_compute_bound(void **state)
{
	const struct catalog *cat = *state;
	const char *models[] = { "llama-3.1-8b", "llama-2-7b", "qwen2.5-7b", "llama-3.1-70b" };
	for (size_t i = 0; i < sizeof(models) / sizeof(models[0]); i++) {
		struct perf_model pm;
		init_ok(&pm, cat, "h200", models[i], NULL, NULL);
		struct perf_batch a = prefill_batch(8192, 0);
		struct perf_batch b = prefill_batch(16384, 0);
		struct perf_breakdown x, y;
		perf_step_breakdown(&pm, &a, &x);
		perf_step_breakdown(&pm, &b, &y);
		assert_int_equal(x.bound, PERF_BOUND_COMPUTE);
		assert_int_equal(y.bound, PERF_BOUND_COMPUTE);
		/* all work here runs at the BF16 rate: time is FLOPs over rate */
		assert_close(x.compute_ns, x.flops / (pm.bf16_peak_flops * pm.eff_compute) * 1e9,
			     1e-12);
		assert_close(y.compute_ns / x.compute_ns, y.flops / x.flops, 1e-12);
		/* attention is quadratic: twice the tokens, more than twice the time */
		assert_true(y.compute_ns > 2 * x.compute_ns);
		assert_close(x.matmul_flops, 8192.0 * pm.matmul_flops_per_token, 1e-12);
		assert_true(x.flops_fraction > 0.5 && x.flops_fraction <= pm.eff_compute);
	}
	/* FP8 math halves the matmul time of a large prefill */
	struct perf_model bf16, fp8;
	init_ok(&bf16, cat, "h100-sxm", "llama-3.1-8b", "bf16", NULL);
	init_ok(&fp8, cat, "h100-sxm", "llama-3.1-8b", "fp8", NULL);
	struct perf_batch p = prefill_batch(8192, 0);
	struct perf_breakdown x, y;
	perf_step_breakdown(&bf16, &p, &x);
	perf_step_breakdown(&fp8, &p, &y);
	assert_close(x.matmul_flops, y.matmul_flops, 1e-15);
	double mm_bf16 = x.matmul_flops / (bf16.matmul_peak_flops * bf16.eff_compute);
	double mm_fp8 = y.matmul_flops / (fp8.matmul_peak_flops * fp8.eff_compute);
	assert_close(mm_fp8 / mm_bf16, 989.4 / 1978.9, 1e-12);
	assert_true(y.compute_ns < 0.65 * x.compute_ns);
}

static void test_breakdown_and_empty(void **state)
{
	const struct catalog *cat = *state;
	struct perf_model pm;
	init_ok(&pm, cat, "rtx-4090", "llama-2-7b", "int4-awq", NULL);
	struct perf_batch empty = { 0 };
	assert_true(perf_step_ns(&pm, &empty) == 0);
	struct perf_breakdown br;
	perf_step_breakdown(&pm, &empty, &br);
	assert_true(br.step_ns == 0 && br.flops == 0);

	/* mixed batch: 30 decodes plus a 512-token chunk */
	struct perf_batch mix = { .new_tokens = 542, .seqs = 31, .decode_seqs = 30,
				  .attn_pairs = 30 * 2000 + 512 * 1000 + 512 * 513 / 2,
				  .kv_read_tokens = 30 * 2000 + 1000 + 512 };
	perf_step_breakdown(&pm, &mix, &br);
	assert_close(br.step_ns, perf_step_ns(&pm, &mix), 1e-15);
	assert_close(br.lm_head_flops, 31 * pm.lm_head_flops_per_seq, 1e-15);
	assert_close(br.kv_bytes, (double)(mix.kv_read_tokens + mix.new_tokens) *
				  pm.kv_bytes_per_token, 1e-15);
	assert_true(br.bound == PERF_BOUND_COMPUTE || br.bound == PERF_BOUND_MEMORY);
	assert_string_equal(perf_bound_name(PERF_BOUND_MEMORY), "memory");
	assert_string_equal(perf_bound_name(PERF_BOUND_COMPUTE), "compute");
	assert_string_equal(perf_bound_name(PERF_BOUND_OVERHEAD), "overhead");

	/* a tiny step on a fast device is overhead bound */
	struct perf_model small = pm;
	small.ns_weights = 1;
	small.ns_per_kv_token = 0;
	struct perf_batch one = decode_batch(1, 10);
	perf_step_breakdown(&small, &one, &br);
	assert_int_equal(br.bound, PERF_BOUND_OVERHEAD);
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

static void test_run_sum_equals_brute_force(void **state)
{
	const struct catalog *cat = *state;
	const char *hws[] = { "h100-sxm", "a100", "l40s", "rtx-4090", "h200" };
	const char *models[] = { "llama-3.1-8b", "llama-2-7b", "qwen2.5-7b", "llama-3.1-70b" };
	const char *fmts[] = { "bf16", "fp8", "int4-gptq", "int8" };
	uint64_t seed = 0x9e3779b97f4a7c15ULL;
	int crossed = 0, cases = 0;
	for (int n = 0; n < 240; n++) {
		struct perf_model pm;
		init_ok(&pm, cat, hws[rng_range(&seed, 0, 4)], models[rng_range(&seed, 0, 3)],
			fmts[rng_range(&seed, 0, 3)], rng_range(&seed, 0, 1) ? "fp8" : "bf16");
		/* short contexts and big batches start compute bound */
		int32_t seqs = (int32_t)rng_range(&seed, 1, 1024);
		int64_t max_ctx = rng_range(&seed, 0, 1) ? 64 : 32768;
		int64_t ctx_sum = 0;
		for (int32_t s = 0; s < seqs; s++)
			ctx_sum += rng_range(&seed, 1, max_ctx);
		struct perf_batch b0 = { .new_tokens = seqs, .seqs = seqs, .decode_seqs = seqs,
					 .attn_pairs = ctx_sum, .kv_read_tokens = ctx_sum };
		int64_t k = rng_range(&seed, 1, n % 8 == 0 ? 100000 : 5000);
		double fast = perf_decode_run_ns(&pm, &b0, k);
		double slow = brute_force(&pm, &b0, k);
		assert_close(fast, slow, 1e-9);

		/* did the bound change inside the run? */
		struct perf_breakdown first, last;
		struct perf_batch bl = b0;
		bl.attn_pairs += (k - 1) * seqs;
		bl.kv_read_tokens += (k - 1) * seqs;
		perf_step_breakdown(&pm, &b0, &first);
		perf_step_breakdown(&pm, &bl, &last);
		if ((first.compute_ns >= first.memory_ns) != (last.compute_ns >= last.memory_ns))
			crossed++;
		cases++;
	}
	/* the random cases must exercise the crossover, not only one side */
	assert_true(crossed >= 10);
	assert_true(crossed < cases);

	/* k = 1 is one step; k = 0 is nothing */
	struct perf_model pm;
	init_ok(&pm, cat, "h100-sxm", "llama-3.1-8b", NULL, NULL);
	struct perf_batch b = decode_batch(64, 3000);
	assert_close(perf_decode_run_ns(&pm, &b, 1), perf_step_ns(&pm, &b), 1e-15);
	assert_true(perf_decode_run_ns(&pm, &b, 0) == 0);
}

/* A run crossing from compute bound to memory bound, built on purpose. */
static void test_run_crossover_exact(void **state)
{
	const struct catalog *cat = *state;
	struct perf_model pm;
	init_ok(&pm, cat, "h100-sxm", "llama-3.1-8b", "bf16", NULL);
	struct perf_batch b0 = decode_batch(768, 8);
	struct perf_breakdown br;
	perf_step_breakdown(&pm, &b0, &br);
	assert_int_equal(br.bound, PERF_BOUND_COMPUTE);
	int64_t k = 20000;
	struct perf_batch bl = decode_batch(768, 8 + k - 1);
	perf_step_breakdown(&pm, &bl, &br);
	assert_int_equal(br.bound, PERF_BOUND_MEMORY);
	assert_close(perf_decode_run_ns(&pm, &b0, k), brute_force(&pm, &b0, k), 1e-10);
}

/* perf_decode_run_ns must not loop over k: a run of 10^12 steps is checked
 * against its closed form (a memory-bound run is one affine sum), and a
 * million calls of it finish at once. */
static void test_run_is_constant_time(void **state)
{
	const struct catalog *cat = *state;
	struct perf_model pm;
	init_ok(&pm, cat, "a100", "llama-3.1-70b", "int4-awq", NULL);
	struct perf_batch b0 = decode_batch(1, 1000);
	int64_t k = 1000000000000LL;
	double m0 = pm.ns_weights + (double)(b0.kv_read_tokens + 1) * pm.ns_per_kv_token;
	double m1 = pm.ns_per_kv_token;
	double kd = (double)k;
	double want = kd * (pm.overhead_ns + m0) + m1 * kd * (kd - 1) / 2;
	volatile double got = 0;
	for (int i = 0; i < 1000000; i++)
		got = perf_decode_run_ns(&pm, &b0, k - (i & 1));
	assert_close(got, want - (pm.overhead_ns + m0 + m1 * (kd - 2)), 1e-12);
	assert_close(perf_decode_run_ns(&pm, &b0, k), want, 1e-12);
}

/* The other order: memory bound first, compute bound later.  No catalogue
 * entry does this (attention adds far fewer FLOPs per KV byte than any
 * accelerator's ridge point), so the model is edited by hand. */
static void test_run_memory_then_compute(void **state)
{
	const struct catalog *cat = *state;
	struct perf_model pm;
	init_ok(&pm, cat, "l40s", "llama-3.1-8b", NULL, NULL);
	pm.ns_per_kv_token = 0.001;
	pm.ns_per_pair = 20;
	uint64_t seed = 42;
	int crossed = 0;
	for (int n = 0; n < 100; n++) {
		struct perf_batch b0 = decode_batch((int32_t)rng_range(&seed, 1, 64),
						    rng_range(&seed, 1, 4096));
		int64_t k = rng_range(&seed, 1, 200000);
		struct perf_breakdown first, last;
		struct perf_batch bl = b0;
		bl.attn_pairs += (k - 1) * b0.seqs;
		bl.kv_read_tokens += (k - 1) * b0.seqs;
		perf_step_breakdown(&pm, &b0, &first);
		perf_step_breakdown(&pm, &bl, &last);
		if (first.compute_ns < first.memory_ns && last.compute_ns > last.memory_ns)
			crossed++;
		assert_close(perf_decode_run_ns(&pm, &b0, k), brute_force(&pm, &b0, k), 1e-9);
	}
	assert_true(crossed >= 10);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_init_and_constants),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_decode_batch1_memory_bound),
		cmocka_unit_test(test_prefill_compute_bound),
		cmocka_unit_test(test_breakdown_and_empty),
		cmocka_unit_test(test_run_sum_equals_brute_force),
		cmocka_unit_test(test_run_crossover_exact),
		cmocka_unit_test(test_run_is_constant_time),
		cmocka_unit_test(test_run_memory_then_compute),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
