/* SPDX-License-Identifier: Apache-2.0
 * Tests for models/moe (expected distinct experts of E with k per token for
 * a batch of B tokens is E (1 - (1 - k/E)^B)) and models/offload (experts in
 * host RAM: the LRU hit fraction, and the stream-or-CPU choice flipping
 * exactly where the two costs cross, seen through the performance model).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "models/catalog.h"
#include "models/moe.h"
#include "models/offload.h"
#include "models/perf_model.h"

static void assert_close(double got, double want, double rel)
{
	double err = fabs(got - want) / fmax(fabs(want), 1e-300);
	if (err > rel)
		fail_msg("got %.17g, want %.17g (relative error %.3g > %.3g)", got, want, err, rel);
}

/* The grouped expert GEMM's efficiency by tokens per expert t = T k / E
 * that tile padding implies (real rows over padded rows), against the
 * curves measured on H100/H800 grouped-GEMM kernels: eff = t / (t +
 * t_half) with t_half from 18 to 107 tokens (Liger, vLLM fused_moe and
 * DeepGEMM benchmarks; docs/performance-model.md, "Grouped expert
 * GEMMs").  gpt-oss-120b's 128 experts, 4 a token, vLLM's 64-row tile: once
 * every expert is touched the rule is t / (t + 32), inside that band at
 * every t from 16 to 1,024.  llama.cpp's MMQ picks its 128-column tile
 * against the whole ubatch (pull 15525): inside the band from 32 tokens an
 * expert, below it at 16 (1/8 of the tile used), the padding its open
 * pull 26977 would cut. */
static void test_tokens_per_expert(void **state)
{
	(void)state;
	struct moe_routing r;
	moe_routing_init(&r, 128, 4);
	for (double t = 16; t <= 1024; t *= 2) {
		double T = t * 128 / 4;
		for (int k = 0; k < 2; k++) {
			double tile = k ? 128 : 64;
			double eff = T * 4 / moe_padded_rows(&r, T, tile);
			if (t >= tile / 2)
				assert_close(eff, t / (t + tile / 2), 1e-6);
			if (k && t < 32) {
				assert_true(eff < t / (t + 107));
				continue;
			}
			if (!(eff >= t / (t + 107) - 1e-12 && eff <= t / (t + 18) + 1e-12))
				fail_msg("t %.0f, tile %.0f: efficiency %.3f outside the measured "
					 "band [%.3f, %.3f]", t, tile, eff, t / (t + 107), t / (t + 18));
		}
	}
}

static void test_distinct_experts(void **state)
{
	(void)state;
	struct moe_routing r;
	moe_routing_init(&r, 128, 8);
	assert_true(moe_distinct_experts(&r, 0) == 0);
	assert_close(moe_distinct_experts(&r, 1), 8, 1e-14);
	/* the closed form at several batch sizes, computed independently */
	int bs[] = { 2, 3, 10, 64, 512 };
	for (size_t i = 0; i < sizeof(bs) / sizeof(bs[0]); i++) {
		double miss = 1;
		for (int t = 0; t < bs[i]; t++)
			miss *= 1 - 8.0 / 128;
		assert_close(moe_distinct_experts(&r, bs[i]), 128 * (1 - miss), 1e-12);
	}
	/* grows with the batch until every expert is touched */
	double prev = 0;
	for (int t = 1; t <= 4096; t *= 2) {
		double dx = moe_distinct_experts(&r, t);
		assert_true(t <= 256 ? dx > prev : dx >= prev);
		assert_true(dx <= 128);
		prev = dx;
	}
	assert_close(prev, 128, 1e-9);
	/* half of the experts by T = log(1/2) / log(1 - k/E) */
	double t50 = moe_tokens_for_fraction(&r, 0.5);
	assert_true(moe_distinct_experts(&r, t50) >= 64);
	assert_true(moe_distinct_experts(&r, t50 - 1) < 64);
	/* every expert chosen by every token */
	struct moe_routing all;
	moe_routing_init(&all, 4, 4);
	assert_true(moe_distinct_experts(&all, 1) == 4 && moe_distinct_experts(&all, 9) == 4);
}

static void test_lru_and_costs(void **state)
{
	(void)state;
	assert_true(offload_lru_hit(32, 128) == 0.25);
	assert_true(offload_lru_hit(0, 128) == 0);
	assert_true(offload_lru_hit(500, 128) == 1);
	struct offload_host h = offload_host_resolve(NULL, 64);
	assert_true(h.mem_bw_gbs == OFFLOAD_DEFAULT_MEM_BW_GBS && h.link_gbs == 64);
	struct offload_demand dm = { .missing_experts = 100, .expert_bytes = 1e7,
				     .host_token_experts = 50, .flops_per_token_expert = 1e8,
				     .activation_bytes = 1e6, .moe_layers = 10, .gpus = 1 };
	struct offload_cost c = offload_step_cost(&h, &dm);
	double bytes = 100 * 1e7;
	assert_close(c.stream_ns, bytes / (64e9 * OFFLOAD_LINK_EFF) * 1e9, 1e-12);
	double cpu = fmax(50 * 1e8 / (h.tflops * 1e12 * OFFLOAD_CPU_EFF),
			  bytes / (h.mem_bw_gbs * 1e9 * OFFLOAD_RAM_EFF));
	assert_close(c.cpu_ns, (cpu + 2 * 1e6 / (64e9 * OFFLOAD_LINK_EFF)) * 1e9 +
				       10 * OFFLOAD_CPU_LAYER_NS, 1e-12);
	/* two GPUs stream over two links */
	dm.gpus = 2;
	assert_close(offload_step_cost(&h, &dm).stream_ns, c.stream_ns / 2, 1e-12);
	/* nothing missing costs nothing */
	dm.missing_experts = 0;
	c = offload_step_cost(&h, &dm);
	assert_true(c.stream_ns == 0 && c.cpu_ns == 0);
}

/* Through the model: a small decode batch runs its host experts on the CPU,
 * a large prefill streams them, and the choice flips where the costs
 * (recomputed here from the model's own terms) cross. */
static void test_choice_flips(void **state)
{
	(void)state;
	struct catalog *cat = NULL;
	struct diag d;
	diag_init(&d);
	assert_int_equal(catalog_load(&cat, NULL, &d), 0);
	struct perf_opts o;
	perf_opts_init(&o);
	o.hardware = "rtx-pro-6000";
	o.model = "qwen3-235b-a22b";
	o.weight_format = "nvfp4";
	o.gpu_expert_fraction = 0.25;
	struct perf_model pm;
	if (perf_model_init_opts(&pm, cat, &o, &d))
		fail_msg("%s", d.msg);
	struct perf_breakdown br;
	struct perf_batch one = perf_decode_batch(1, 1000);
	perf_step_breakdown(&pm, &one, &br);
	assert_int_equal(br.offload, OFFLOAD_CPU);
	struct perf_batch big = perf_prefill_batch(8192, 0);
	perf_step_breakdown(&pm, &big, &br);
	assert_int_equal(br.offload, OFFLOAD_STREAM);
	assert_true(br.host_ns > 0);

	/* find the flip by scanning prefill chunk sizes, and check that on
	 * each side the chosen option is the cheaper one */
	int64_t flip = 0;
	enum offload_choice prev = OFFLOAD_CPU;
	for (int64_t t = 1; t <= 8192; t++) {
		struct perf_batch b = perf_prefill_batch(t, 0);
		perf_step_breakdown(&pm, &b, &br);
		double dx = moe_distinct_experts(&pm.routing, (double)t);
		double f = pm.gpu_expert_fraction;
		struct offload_demand dm = {
			.missing_experts = dx * (1 - f) * pm.moe_layers,
			.expert_bytes = pm.expert_bytes,
			.host_token_experts = t * pm.experts_per_token * (1 - f) * pm.moe_layers,
			.flops_per_token_expert = pm.expert_flops_per_token /
						  (pm.experts_per_token * pm.moe_layers),
			.activation_bytes = t * pm.hidden * 2.0 * pm.moe_layers,
			.moe_layers = pm.moe_layers, .gpus = 1 };
		struct offload_cost c = offload_step_cost(&pm.host, &dm);
		double all = fmax(pm.ns_per_expert_token * t, pm.ns_per_expert * dx);
		double part = fmax(pm.ns_per_expert_token * t * f, pm.ns_per_expert * dx * f);
		enum offload_choice want = all + c.stream_ns <= part + c.cpu_ns ? OFFLOAD_STREAM
										 : OFFLOAD_CPU;
		assert_int_equal(br.offload, want);
		if (want != prev && !flip)
			flip = t;
		prev = want;
	}
	/* it flips once, at a few tens to hundreds of tokens */
	assert_true(flip > 1 && flip < 8192);
	/* a slower CPU moves the flip to smaller batches */
	o.host.tflops = 0.5;
	o.host.mem_bw_gbs = 50;
	struct perf_model slow;
	assert_int_equal(perf_model_init_opts(&slow, cat, &o, &d), 0);
	int64_t flip_slow = 0;
	for (int64_t t = 1; t <= 8192 && !flip_slow; t++) {
		struct perf_batch b = perf_prefill_batch(t, 0);
		perf_step_breakdown(&slow, &b, &br);
		if (br.offload == OFFLOAD_STREAM)
			flip_slow = t;
	}
	assert_true(flip_slow > 0 && flip_slow < flip);
	/* offloading costs time against keeping every expert on the GPU */
	o.gpu_expert_fraction = 1;
	o.host = (struct offload_host){ 0 };
	struct perf_model resident;
	assert_int_equal(perf_model_init_opts(&resident, cat, &o, &d), 0);
	assert_true(perf_step_ns(&pm, &one) > 2 * perf_step_ns(&resident, &one));
	catalog_free(cat);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tokens_per_expert),
		cmocka_unit_test(test_distinct_experts),
		cmocka_unit_test(test_lru_and_costs),
		cmocka_unit_test(test_choice_flips),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
