/* SPDX-License-Identifier: Apache-2.0
 * Tests for speculative decoding in the replica (sim/replica.c): calls of
 * different output kinds decoding side by side advance by their own
 * expected tokens per verify step, so code (high acceptance) gets a shorter
 * TPOT than prose from the same steps; the fixed-point carry makes a decode
 * run yield exactly the tokens of the single steps it stands for; the
 * speed-up bookkeeping agrees with the perf model; and with speculation off
 * nothing changes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/outkind.h"
#include "models/catalog.h"
#include "models/perf_model.h"
#include "models/spec.h"
#include "sim/sim.h"

#define MAX_REC 16

struct col {
	struct res_request rec[MAX_REC];
	int n;
	int64_t itl_samples;
};

static void col_req(void *ctx, const struct res_request *r)
{
	struct col *c = ctx;
	if (c->n < MAX_REC)
		c->rec[c->n++] = *r;
}

static void col_itl(void *ctx, const struct res_itl_run *r)
{
	struct col *c = ctx;
	c->itl_samples += r->steps * r->seqs;
}

static struct engine_config cfg_of(int32_t k, double alpha_code, double alpha_prose)
{
	struct engine_config cfg = {
		.max_num_seqs = 64, .max_num_batched_tokens = 8192, .block_size = 16,
		.gpu_memory_utilization = 0.9, .enable_chunked_prefill = true,
		.enable_prefix_caching = true, .kv_cache_tokens = 1 << 20, .max_model_len = 1 << 17,
	};
	if (k > 0) {
		cfg.spec_k = k;
		for (int i = 0; i < OUT_KINDS; i++)
			cfg.spec_tokens[i] = spec_expected_tokens(0.7, k);
		cfg.spec_tokens[OUT_KIND_CODE] = spec_expected_tokens(alpha_code, k);
		cfg.spec_tokens[OUT_KIND_PROSE] = spec_expected_tokens(alpha_prose, k);
	}
	return cfg;
}

struct run {
	struct col col;
	struct sim_stats st;
};

/* Two calls arriving together, one code and one prose, each of `out`
 * output tokens, on pm with cfg; single_step as asked. */
static void run_pair(const struct perf_model *pm, const struct engine_config *cfg, int64_t out,
		     bool single_step, struct run *res)
{
	struct sim *s = calloc(1, sizeof(*s));
	assert_non_null(s);
	memset(res, 0, sizeof(*res));
	struct diag d;
	diag_init(&d);
	struct res_sink sink = {.ctx = &res->col, .request = col_req, .itl_run = col_itl};
	assert_int_equal(sim_init(s, cfg, 1, sim_perf_from_model(pm), sink, NULL, NULL, &d), 0);
	s->single_step = single_step;
	int32_t kinds[2] = {OUT_KIND_CODE, OUT_KIND_PROSE};
	for (int i = 0; i < 2; i++) {
		struct sim_call c = {.session = (uint64_t)i + 1, .prompt_tokens = 1000,
				     .output_tokens = out, .kind = kinds[i]};
		assert_int_equal(sim_submit(s, &c, 0, &d), 0);
	}
	int rc;
	while ((rc = sim_step(s, &d)) == 1)
		;
	assert_int_equal(rc, 0);
	assert_int_equal(sim_check_end(s, &d), 0);
	res->st = sim_get_stats(s);
	sim_release(s);
	free(s);
}

static const struct res_request *of_kind(const struct run *r, int32_t kind)
{
	for (int i = 0; i < r->col.n; i++)
		if (r->col.rec[i].kind == kind)
			return &r->col.rec[i];
	fail();
	return NULL;
}

static double tpot_ms(const struct res_request *r)
{
	return (double)(r->done_ns - r->first_token_ns) / 1e6 / (double)(r->output_tokens - 1);
}

static void test_kinds_differ(void **state)
{
	(void)state;
	struct catalog *cat = NULL;
	struct diag d;
	diag_init(&d);
	assert_int_equal(catalog_load(&cat, NULL, &d), 0);
	struct perf_model *plain = malloc(sizeof(*plain)), *sp = malloc(sizeof(*sp));
	assert_non_null(plain);
	assert_non_null(sp);
	struct perf_opts o;
	perf_opts_init(&o);
	o.hardware = "h100-sxm";
	o.model = "llama-3.1-70b";
	o.weight_format = "fp8";
	o.tp = 2;
	assert_int_equal(perf_model_init_opts(plain, cat, &o, &d), 0);
	struct spec_opts so = {SPEC_DRAFT, "llama-3.1-8b", 3};
	o.spec = &so;
	assert_int_equal(perf_model_init_opts(sp, cat, &o, &d), 0);

	struct engine_config off = cfg_of(0, 0, 0), on = cfg_of(3, 0.9, 0.4);
	struct run *r = calloc(4, sizeof(*r));
	assert_non_null(r);
	run_pair(plain, &off, 400, false, &r[0]);
	run_pair(sp, &on, 400, false, &r[1]);
	run_pair(sp, &on, 400, true, &r[2]);

	/* without speculation both kinds decode alike */
	double p_code = tpot_ms(of_kind(&r[0], OUT_KIND_CODE));
	double p_prose = tpot_ms(of_kind(&r[0], OUT_KIND_PROSE));
	assert_true(fabs(p_code - p_prose) <= 1e-6 * p_code);
	assert_int_equal(r[0].st.spec_seq_steps[OUT_KIND_CODE], 0);

	/* with it, code (alpha 0.9) beats prose (alpha 0.4), both beat plain */
	double s_code = tpot_ms(of_kind(&r[1], OUT_KIND_CODE));
	double s_prose = tpot_ms(of_kind(&r[1], OUT_KIND_PROSE));
	double tau_code = spec_expected_tokens(0.9, 3), tau_prose = spec_expected_tokens(0.4, 3);
	print_message("TPOT plain %.3f ms, code %.3f ms, prose %.3f ms\n", p_code, s_code, s_prose);
	assert_true(s_code < s_prose && s_prose < p_code);
	/* they shared the verify steps while both decoded, so their TPOTs
	 * stand nearly as their tokens per step (prose decodes alone, slightly
	 * faster, once code is done) */
	double ratio = s_prose / s_code;
	assert_true(ratio > 0.9 * tau_code / tau_prose && ratio < 1.02 * tau_code / tau_prose);

	/* tokens per verify step follow the expectation (the last step of a
	 * call yields only what is left of its output) */
	for (int k = OUT_KIND_CODE; k <= OUT_KIND_PROSE; k += OUT_KIND_PROSE - OUT_KIND_CODE) {
		double tau = k == OUT_KIND_CODE ? tau_code : tau_prose;
		double got = (double)r[1].st.spec_tokens[k] / (double)r[1].st.spec_seq_steps[k];
		assert_true(fabs(got - tau) * (double)r[1].st.spec_seq_steps[k] <= tau + 1.0);
		assert_int_equal(r[1].st.spec_tokens[k], 399); /* all but the prefill's */
	}
	/* one ITL per token after the first */
	assert_int_equal(r[1].col.itl_samples, 2 * 399);
	/* the decode runs are priced with and without the drafter */
	assert_true(r[1].st.spec_run_ns > 0 && r[1].st.spec_plain_ns > 0);
	assert_true(r[1].st.step_events < r[2].st.step_events);

	/* decode runs yield the tokens of the single steps they stand for:
	 * same steps, same first tokens, same end within rounding of the
	 * fractional context */
	assert_int_equal(r[1].st.steps, r[2].st.steps);
	for (int32_t k = OUT_KIND_CODE; k <= OUT_KIND_PROSE; k += 2) {
		const struct res_request *a = of_kind(&r[1], k), *b = of_kind(&r[2], k);
		assert_int_equal(a->first_token_ns, b->first_token_ns);
		assert_true(llabs(a->done_ns - b->done_ns) <= a->done_ns / 10000);
	}
	free(r);
	free(plain);
	free(sp);
	catalog_free(cat);
}

/* vLLM V0's speculative_disable_by_batch_size: with the switch at 2, the
 * pair decoding together does not speculate (no verify step, plain TPOT);
 * at 3 it does, as without the switch. */
static void test_disable_by_batch_size(void **state)
{
	(void)state;
	struct catalog *cat = NULL;
	struct diag d;
	diag_init(&d);
	assert_int_equal(catalog_load(&cat, NULL, &d), 0);
	struct perf_model *sp = malloc(sizeof(*sp));
	assert_non_null(sp);
	struct perf_opts o;
	perf_opts_init(&o);
	o.hardware = "h100-sxm";
	o.model = "llama-3.1-70b";
	o.weight_format = "fp8";
	o.tp = 2;
	struct spec_opts so = {SPEC_DRAFT, "llama-3.1-8b", 3};
	o.spec = &so;
	assert_int_equal(perf_model_init_opts(sp, cat, &o, &d), 0);
	struct engine_config on = cfg_of(3, 0.9, 0.4), off2 = on, off3 = on;
	off2.spec_disable_batch = 2;
	off3.spec_disable_batch = 3;
	struct run *r = calloc(3, sizeof(*r));
	assert_non_null(r);
	run_pair(sp, &on, 400, false, &r[0]);
	run_pair(sp, &off2, 400, false, &r[1]);
	run_pair(sp, &off3, 400, false, &r[2]);
	for (int k = 0; k < OUT_KINDS; k++) {
		assert_int_equal(r[1].st.spec_seq_steps[k], 0);
		assert_int_equal(r[2].st.spec_seq_steps[k], r[0].st.spec_seq_steps[k]);
	}
	double t_on = tpot_ms(of_kind(&r[0], OUT_KIND_CODE));
	double t_off = tpot_ms(of_kind(&r[1], OUT_KIND_CODE));
	assert_true(t_off > 1.5 * t_on);
	assert_int_equal(r[1].col.itl_samples, 2 * 399);
	free(r);
	free(sp);
	catalog_free(cat);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kinds_differ),
		cmocka_unit_test(test_disable_by_batch_size),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
