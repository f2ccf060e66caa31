/* SPDX-License-Identifier: Apache-2.0
 * Tests for models/predict and models/fit: the figures agree with the
 * performance and memory models, the answer formats hold the promised
 * columns, dgx-spark and rtx-pro-6000 give sensible lists, a 753B MoE needs
 * expert offload on a 96 GB GPU and the row says how much host RAM, and
 * --model lists hardware cheapest first.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <cJSON.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/catalog.h"
#include "models/fit.h"
#include "models/memory.h"
#include "models/perf_model.h"
#include "models/predict.h"

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

/* Run a writer into a string (caller frees). */
static char *capture(int (*fn)(FILE *, const void *, struct diag *), const void *arg)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct diag d;
	diag_init(&d);
	assert_int_equal(fn(f, arg, &d), 0);
	fclose(f);
	return buf;
}

static int fit_text(FILE *f, const void *r, struct diag *d)
{
	return fit_write_text(f, r, d);
}

static int fit_json(FILE *f, const void *r, struct diag *d)
{
	return fit_write_json(f, r, d);
}

static void test_predict(void **state)
{
	const struct catalog *cat = *state;
	struct perf_model pm;
	struct diag d;
	diag_init(&d);
	assert_int_equal(perf_model_init(&pm, cat, "h100-sxm", "llama-3.1-8b", NULL, NULL, 1, &d), 0);
	struct predict_result r;
	assert_int_equal(predict_run(&r, &pm, 16, 4096, 2048, &d), 0);
	struct perf_batch b = perf_decode_batch(16, 4096);
	assert_true(r.decode_step_ms == perf_step_ns(&pm, &b) / 1e6);
	assert_true(fabs(r.decode_tok_s - 16 * r.decode_tok_s_per_seq) < 1e-9);
	assert_true(fabs(r.prefill_ms - perf_prefill_ns(&pm, 4096, 0, 2048) / 1e6) < 1e-9);
	assert_int_equal(r.decode.bound, PERF_BOUND_MEMORY);
	assert_int_equal(r.prefill.bound, PERF_BOUND_COMPUTE);
	struct mem_plan plan;
	assert_int_equal(mem_plan(&plan, cat, "h100-sxm", "llama-3.1-8b", NULL, NULL, 1, 0.9, 2048,
				  &d), 0);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_int_equal(predict_write_text(f, &pm, &r, &plan, &d), 0);
	fclose(f);
	assert_non_null(strstr(buf, "llama-3.1-8b in bf16 (KV bf16) on h100-sxm, engine vllm"));
	assert_non_null(strstr(buf, "(memory bound)"));
	assert_non_null(strstr(buf, "per sequence"));
	assert_non_null(strstr(buf, "aggregate"));
	assert_non_null(strstr(buf, "batch x context fits"));
	free(buf);
	f = open_memstream(&buf, &len);
	assert_int_equal(predict_write_json(f, &pm, &r, &plan, &d), 0);
	fclose(f);
	cJSON *j = cJSON_Parse(buf);
	assert_non_null(j);
	/* versioned like every other JSON agentcap writes, and first */
	assert_string_equal(j->child->string, "schema_version");
	assert_int_equal(j->child->valueint, 1);
	assert_string_equal(cJSON_GetObjectItem(j, "decode_bound")->valuestring, "memory");
	assert_true(fabs(cJSON_GetObjectItem(j, "decode_tok_s")->valuedouble - r.decode_tok_s) <
		    1e-6 * r.decode_tok_s);
	cJSON_Delete(j);
	free(buf);
	assert_int_equal(predict_run(&r, &pm, 0, 10, 10, &d), DIAG_EINPUT);
}

static const struct fit_row *row_of(const struct fit_result *r, const char *id)
{
	for (size_t i = 0; i < r->n; i++)
		if (strcmp(r->by_model ? r->rows[i].hw->id : r->rows[i].model->id, id) == 0)
			return &r->rows[i];
	return NULL;
}

static void test_fit_rtx_pro_6000(void **state)
{
	const struct catalog *cat = *state;
	struct fit_opts o = { 0 };
	struct fit_result r;
	struct diag d;
	diag_init(&d);
	assert_int_equal(fit_hardware(&r, cat, "rtx-pro-6000", &o, &d), 0);
	assert_true(r.n_fit >= 10 && r.n == r.n_fit);
	/* small dense models fit in BF16 with room for many long sequences */
	const struct fit_row *small = row_of(&r, "llama-3.1-8b");
	assert_non_null(small);
	assert_int_equal(small->status, FIT_GPU);
	assert_string_equal(small->format->id, "bf16");
	assert_true(small->sequences_at_cap >= 2);
	assert_true(small->decode_tok_s > 50 && small->decode_tok_s < 200);
	assert_true(small->prefill_tok_s > 5000);
	/* a 70B model fits only quantized */
	const struct fit_row *big = row_of(&r, "llama-3.1-70b");
	assert_non_null(big);
	assert_true(big->format->bits_per_weight < 9);
	assert_true(big->kv_tokens >= 32768);
	/* the 753B MoE needs its experts in host RAM, and says how much */
	const struct fit_row *glm = row_of(&r, "glm-5.2");
	assert_non_null(glm);
	assert_int_equal(glm->status, FIT_OFFLOAD);
	assert_true(glm->gpu_expert_fraction > 0 && glm->gpu_expert_fraction < 0.5);
	assert_true(glm->host_ram_needed_gb > 200 && glm->host_ram_needed_gb <= 512);
	assert_true(glm->host_ram_assumed);
	/* fitting rows are ordered by size, largest first */
	for (size_t i = 1; i < r.n; i++)
		assert_true(r.rows[i - 1].model->total_params >= r.rows[i].model->total_params);
	char *text = capture(fit_text, &r);
	assert_non_null(strstr(text, "Models that fit on rtx-pro-6000"));
	assert_non_null(strstr(text, "KV tokens"));
	assert_non_null(strstr(text, "ctx x seqs"));
	assert_non_null(strstr(text, "expert offload:"));
	assert_non_null(strstr(text, "GB host RAM"));
	assert_non_null(strstr(text, "not measurements"));
	free(text);
	char *json = capture(fit_json, &r);
	cJSON *j = cJSON_Parse(json);
	assert_non_null(j);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(j, "rows")), (int)r.n);
	cJSON_Delete(j);
	free(json);
	fit_result_release(&r);

	/* with less host RAM the 753B MoE does not fit at all */
	o.host_ram_gb = 64;
	o.all = true;
	assert_int_equal(fit_hardware(&r, cat, "rtx-pro-6000", &o, &d), 0);
	glm = row_of(&r, "glm-5.2");
	assert_non_null(glm);
	assert_int_equal(glm->status, FIT_NO);
	assert_non_null(strstr(glm->why, "GB of host RAM"));
	fit_result_release(&r);

	/* a budget what-if: 24 GB per GPU fits fewer models */
	struct fit_opts small_mem = { .memory_gb = 24 };
	struct fit_result r24;
	assert_int_equal(fit_hardware(&r24, cat, "rtx-pro-6000", &small_mem, &d), 0);
	struct fit_result full;
	struct fit_opts none = { 0 };
	assert_int_equal(fit_hardware(&full, cat, "rtx-pro-6000", &none, &d), 0);
	assert_true(r24.n_fit < full.n_fit);
	assert_null(row_of(&r24, "llama-3.1-70b"));
	fit_result_release(&r24);
	fit_result_release(&full);
}

static void test_fit_dgx_spark(void **state)
{
	const struct catalog *cat = *state;
	struct fit_opts o = { 0 };
	struct fit_result r;
	struct diag d;
	diag_init(&d);
	assert_int_equal(fit_hardware(&r, cat, "dgx-spark", &o, &d), 0);
	assert_true(r.n_fit >= 8);
	for (size_t i = 0; i < r.n; i++) {
		/* unified memory: llama.cpp by default, never offload */
		assert_string_equal(r.rows[i].engine, "llama.cpp");
		assert_int_equal(r.rows[i].status, FIT_GPU);
		/* 273 GB/s cannot stream more than its bytes per second */
		double bytes = r.rows[i].weights_gb;
		if (r.rows[i].model->experts == 0)
			assert_true(r.rows[i].decode_tok_s < 273 / bytes);
	}
	/* gpt-oss-120b, the model people buy a Spark for, fits */
	assert_non_null(row_of(&r, "gpt-oss-120b"));
	assert_null(row_of(&r, "glm-5.2"));
	fit_result_release(&r);
	/* unknown names are input errors */
	assert_int_equal(fit_hardware(&r, cat, "dgx-sparkle", &o, &d), DIAG_EINPUT);
	assert_non_null(strstr(d.msg, "unknown hardware 'dgx-sparkle'"));
	diag_init(&d);
	o.engine = "deepspeed";
	assert_int_equal(fit_hardware(&r, cat, "dgx-spark", &o, &d), DIAG_EINPUT);
	assert_non_null(strstr(d.msg, "unknown engine"));
}

static void test_fit_model(void **state)
{
	const struct catalog *cat = *state;
	struct fit_opts o = { 0 };
	struct fit_result r;
	struct diag d;
	diag_init(&d);
	assert_int_equal(fit_model(&r, cat, "llama-3.1-70b", &o, &d), 0);
	assert_true(r.by_model && r.n_fit >= 5);
	/* priced entries first, cheapest first */
	double prev = 0;
	bool unpriced = false;
	for (size_t i = 0; i < r.n; i++) {
		if (!r.rows[i].has_price) {
			unpriced = true;
			continue;
		}
		assert_false(unpriced);
		assert_true(r.rows[i].price_usd >= prev);
		prev = r.rows[i].price_usd;
	}
	/* an 8-GPU system uses the fewest GPUs that hold the model */
	const struct fit_row *hgx = row_of(&r, "hgx-h100-8");
	assert_non_null(hgx);
	assert_true(hgx->tp >= 1 && hgx->tp < 8);
	char *text = capture(fit_text, &r);
	assert_non_null(strstr(text, "Hardware that can hold llama-3.1-70b, cheapest first"));
	assert_non_null(strstr(text, "price"));
	free(text);
	fit_result_release(&r);
	assert_int_equal(fit_model(&r, cat, "gpt-7", &o, &d), DIAG_EINPUT);
	assert_non_null(strstr(d.msg, "unknown model 'gpt-7'"));
}

/* A format is chosen only where the hardware can compute in it, and among
 * those by --prefer. */
static void test_fit_format_choice(void **state)
{
	const struct catalog *cat = *state;
	struct diag d;
	diag_init(&d);
	/* no FP4 tensor cores: never NVFP4 (it has no fallback dtype) */
	const char *no_fp4[] = { "h100-sxm", "h200", "a100-sxm-80gb", "l40s", "rtx-4090", "mi300x",
				 "hgx-h100-8", NULL };
	for (int i = 0; no_fp4[i]; i++) {
		struct fit_opts o = { 0 };
		struct fit_result r;
		assert_int_equal(fit_hardware(&r, cat, no_fp4[i], &o, &d), 0);
		for (size_t k = 0; k < r.n; k++)
			if (r.rows[k].format && strcmp(r.rows[k].format->id, "nvfp4") == 0)
				fail_msg("%s: %s in nvfp4", no_fp4[i], r.rows[k].model->id);
		fit_result_release(&r);
		assert_false(fit_format_runs_on(catalog_hardware(cat, no_fp4[i]),
						catalog_weight_format(cat, "nvfp4")));
	}
	assert_true(fit_format_runs_on(catalog_hardware(cat, "b200"),
				       catalog_weight_format(cat, "nvfp4")));
	/* MXFP4 runs weight-only on Hopper (gpt-oss), fp8 weight-only on Ampere */
	assert_true(fit_format_runs_on(catalog_hardware(cat, "h100-sxm"),
				       catalog_weight_format(cat, "mxfp4")));
	assert_true(fit_format_runs_on(catalog_hardware(cat, "a100-sxm-80gb"),
				       catalog_weight_format(cat, "fp8")));
	/* asked for explicitly, it does not fit, and the row says why */
	struct fit_opts nv = { .weight_format = "nvfp4", .all = true };
	struct fit_result r;
	assert_int_equal(fit_hardware(&r, cat, "h100-sxm", &nv, &d), 0);
	assert_int_equal(r.n_fit, 0);
	const struct fit_row *row = row_of(&r, "llama-3.1-8b");
	assert_non_null(row);
	assert_non_null(strstr(row->why, "no fp4 tensor path for nvfp4"));
	fit_result_release(&r);

	/* fp8 over int8 at equal bits (H200 took int8, 8.01 bits, before) */
	struct fit_opts q = { 0 };
	assert_int_equal(fit_hardware(&r, cat, "h200", &q, &d), 0);
	row = row_of(&r, "llama-3.1-70b");
	assert_non_null(row);
	assert_string_equal(row->format->id, "fp8");
	fit_result_release(&r);

	/* the three preferences on one machine */
	struct fit_result rq, rs, rm;
	struct fit_opts os = { .prefer = FIT_PREFER_SPEED }, om = { .prefer = FIT_PREFER_MEMORY };
	assert_int_equal(fit_hardware(&rq, cat, "rtx-pro-6000", &q, &d), 0);
	assert_int_equal(fit_hardware(&rs, cat, "rtx-pro-6000", &os, &d), 0);
	assert_int_equal(fit_hardware(&rm, cat, "rtx-pro-6000", &om, &d), 0);
	const struct fit_row *a = row_of(&rq, "llama-3.1-8b"), *b = row_of(&rs, "llama-3.1-8b"),
			     *c = row_of(&rm, "llama-3.1-8b");
	assert_non_null(a);
	assert_non_null(b);
	assert_non_null(c);
	assert_string_equal(a->format->id, "bf16");
	assert_true(b->format->bits_per_weight < 8);
	assert_true(b->decode_tok_s > a->decode_tok_s);
	assert_true(c->format->bits_per_weight <= b->format->bits_per_weight);
	assert_true(c->kv_tokens >= a->kv_tokens);
	for (size_t k = 0; k < rm.n; k++)
		if (rm.rows[k].status == FIT_GPU) {
			const struct fit_row *qq = row_of(&rq, rm.rows[k].model->id);
			assert_true(rm.rows[k].format->bits_per_weight <=
				    qq->format->bits_per_weight);
		}
	char *text = capture(fit_text, &rs);
	assert_non_null(strstr(text, "preferred for speed"));
	free(text);
	fit_result_release(&rq);
	fit_result_release(&rs);
	fit_result_release(&rm);
	enum fit_prefer p;
	assert_true(fit_prefer_parse("memory", &p));
	assert_int_equal(p, FIT_PREFER_MEMORY);
	assert_false(fit_prefer_parse("fast", &p));
}

/* Prices: shown in the published currency, the conversion said; a rack
 * priced whole beside the GPUs it uses; no price said as such; --memory
 * names itself and withholds the price of a machine it changes. */
static void test_fit_prices(void **state)
{
	const struct catalog *cat = *state;
	struct diag d;
	diag_init(&d);
	struct fit_opts o = { 0 };
	struct fit_result r;
	assert_int_equal(fit_model(&r, cat, "llama-3.1-70b", &o, &d), 0);
	const struct fit_row *nvl = row_of(&r, "gb200-nvl72");
	assert_non_null(nvl);
	assert_int_equal(nvl->gpus_in_entry, 72);
	assert_true(nvl->tp < 72);
	const struct fit_row *ws = row_of(&r, "ws-rtx-pro-6000");
	assert_non_null(ws);
	assert_int_equal(ws->price->currency, CAT_CUR_EUR);
	assert_true(ws->price_usd > ws->price->amount);
	assert_true(r.n_priced > 0 && r.n_priced < r.n);
	for (size_t i = 0; i < r.n; i++)
		assert_int_equal(r.rows[i].has_price, i < r.n_priced);
	char *text = capture(fit_text, &r);
	assert_non_null(strstr(text, "EUR 16000"));
	assert_null(strstr(text, "17088")); /* not passed off as dollars */
	assert_non_null(strstr(text, "USD 3100000  1 of 72"));
	assert_non_null(strstr(text, "EUR at 1.068 USD (catalogue rate of 2026-08)"));
	assert_non_null(strstr(text, "no price published in the catalogue"));
	assert_non_null(strstr(text, "no price "));
	free(text);
	char *json = capture(fit_json, &r);
	cJSON *j = cJSON_Parse(json);
	assert_non_null(j);
	cJSON *row;
	bool seen = false;
	cJSON_ArrayForEach(row, cJSON_GetObjectItem(j, "rows")) {
		if (strcmp(cJSON_GetObjectItem(row, "hardware")->valuestring, "ws-rtx-pro-6000"))
			continue;
		seen = true;
		cJSON *pr = cJSON_GetObjectItem(row, "price");
		assert_string_equal(cJSON_GetObjectItem(pr, "currency")->valuestring, "EUR");
		assert_int_equal(cJSON_GetObjectItem(pr, "amount")->valuedouble, 16000);
	}
	assert_true(seen);
	cJSON_Delete(j);
	free(json);
	fit_result_release(&r);

	/* --memory 96G: the 96 GB cards keep their price, an H100 with 96 GB
	 * is another machine */
	struct fit_opts m96 = { .memory_gb = 96 };
	assert_int_equal(fit_model(&r, cat, "llama-3.1-70b", &m96, &d), 0);
	const struct fit_row *h100 = row_of(&r, "h100-sxm"), *pro = row_of(&r, "rtx-pro-6000");
	assert_non_null(h100);
	assert_non_null(pro);
	assert_false(h100->has_price);
	assert_true(h100->price_withheld);
	assert_true(pro->has_price);
	text = capture(fit_text, &r);
	assert_non_null(strstr(text, "96 GB per GPU (--memory)"));
	assert_null(strstr(text, "USD 30000"));
	free(text);
	fit_result_release(&r);
	struct fit_opts m40 = { .memory_gb = 40 };
	assert_int_equal(fit_hardware(&r, cat, "h100-sxm", &m40, &d), 0);
	text = capture(fit_text, &r);
	assert_non_null(strstr(text, "40 GB per GPU (--memory; the catalogue's 80 GB)"));
	assert_null(strstr(text, "; 80 GB per GPU"));
	free(text);
	fit_result_release(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_predict),
		cmocka_unit_test(test_fit_rtx_pro_6000),
		cmocka_unit_test(test_fit_dgx_spark),
		cmocka_unit_test(test_fit_model),
		cmocka_unit_test(test_fit_format_choice),
		cmocka_unit_test(test_fit_prices),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
