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
	assert_non_null(strstr(text, "price USD"));
	free(text);
	fit_result_release(&r);
	assert_int_equal(fit_model(&r, cat, "gpt-7", &o, &d), DIAG_EINPUT);
	assert_non_null(strstr(d.msg, "unknown model 'gpt-7'"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_predict),
		cmocka_unit_test(test_fit_rtx_pro_6000),
		cmocka_unit_test(test_fit_dgx_spark),
		cmocka_unit_test(test_fit_model),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
