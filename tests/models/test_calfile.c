/* SPDX-License-Identifier: Apache-2.0
 * calfile: reading a calibration file (and refusing foreign ones), laying
 * its parameters over a catalogue and an engine table, the built-in rows,
 * and the distance to the nearest measured point as docs/calibrate.md
 * defines it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/calfile.h"
#include "models/catalog.h"
#include "models/engine.h"
#include "models/perf_model.h"

#define GOOD "{\"format\": \"agentcap-calibration\", \"schema_version\": 1, " \
	     "\"parameters\": [{\"target\": \"family\", \"id\": \"nvidia-ada\", \"field\": " \
	     "\"eff_bw\", \"shipped\": 0.9, \"fitted\": 0.5}, {\"target\": \"family\", \"id\": " \
	     "\"nvidia-ada\", \"field\": \"eff_issue\", \"fitted\": 0.7}, {\"target\": " \
	     "\"family\", \"id\": \"nvidia-ada\", \"field\": \"sm_w_at_1ghz\", \"fitted\": " \
	     "0.25}, {\"target\": \"engine\", \"id\": " \
	     "\"llama.cpp\", \"field\": \"step_overhead_us\", \"fitted\": 300}], " \
	     "\"rows\": [{\"line\": 2, \"hardware\": \"rtx-4090\", \"model\": \"llama-3-8b\", " \
	     "\"engine\": \"llama.cpp\", \"engine_profile\": \"llama.cpp\", \"concurrency\": 1, " \
	     "\"input_tokens\": 0, \"output_tokens\": 512, \"metric\": \"decode_tok_s\", " \
	     "\"value\": 130.58}, {\"line\": 3, \"hardware\": \"h100-sxm\", \"model\": " \
	     "\"gpt-oss-20b\", \"engine\": \"vllm 0.11.0\", \"engine_profile\": \"vllm\", " \
	     "\"concurrency\": null, \"input_tokens\": 1998, \"output_tokens\": 94, \"metric\": " \
	     "\"output_throughput_tok_s\", \"value\": 1443.44}], " \
	     "\"measurements_csv\": \"hardware,n_gpus\\n\"}"

static void test_parse_and_apply(void **state)
{
	(void)state;
	struct diag d;
	diag_init(&d);
	struct calfile *cf;
	assert_int_equal(calfile_parse(&cf, "my.json", GOOD, strlen(GOOD), &d), 0);
	assert_true(cf->own);
	assert_int_equal(cf->n_params, 4);
	assert_int_equal(cf->n_rows, 2);
	assert_int_equal(cf->rows[0].line, 2);
	assert_string_equal(cf->rows[1].engine, "vllm");
	assert_true(cf->rows[1].concurrency == 0);
	assert_string_equal(cf->csv, "hardware,n_gpus\n");
	struct catalog *cat;
	assert_int_equal(catalog_load(&cat, NULL, &d), 0);
	struct engine_table *et = malloc(sizeof(*et));
	assert_non_null(et);
	assert_int_equal(engine_table_load(et, NULL, &d), 0);
	/* the prediction before and after: half the bandwidth, slower decode */
	struct perf_opts po;
	perf_opts_init(&po);
	po.hardware = "rtx-4090";
	po.model = "llama-3-8b";
	po.weight_format = "gguf-q4-k-m";
	po.engine = "llama.cpp";
	struct perf_model pm;
	assert_int_equal(perf_model_init_opts(&pm, cat, &po, &d), 0);
	struct perf_batch b = perf_decode_batch(1, 512);
	double before = perf_step_ns(&pm, &b);
	assert_int_equal(calfile_apply(cf, cat, et, &d), 0);
	assert_true(catalog_family(cat, "nvidia-ada")->eff_bw == 0.5);
	assert_true(catalog_family(cat, "nvidia-ada")->eff_issue == 0.7);
	assert_true(catalog_family(cat, "nvidia-ada")->sm_w_at_1ghz == 0.25);
	assert_true(engine_find(et, "llama.cpp")->p.step_overhead_us == 300);
	/* the catalogue carries the table to models built without one */
	cat->engines = et;
	assert_int_equal(perf_model_init_opts(&pm, cat, &po, &d), 0);
	double after = perf_step_ns(&pm, &b);
	assert_true(after > before * 1.3);
	cat->engines = NULL;
	catalog_free(cat);
	free(et);
	calfile_free(cf);
}

/* Foreign or broken files: the name and what was expected. */
static void test_refused(void **state)
{
	(void)state;
	static const struct {
		const char *text;
		const char *msg;
	} cases[] = {
		{ "{\"format\":\"agentcap-trace\",\"version\":1}",
		  "x.json: not an agentcap calibration file (expected \"format\": "
		  "\"agentcap-calibration\", written by agentcap calibrate)" },
		{ "[1, 2", "x.json:1:" },
		{ "{\"format\": \"agentcap-calibration\", \"schema_version\": 2, \"parameters\": [], "
		  "\"rows\": []}", "x.json: schema_version: expected 1" },
		{ "{\"format\": \"agentcap-calibration\", \"schema_version\": 1, \"rows\": []}",
		  "x.json: expected arrays \"parameters\" and \"rows\"" },
		{ "{\"format\": \"agentcap-calibration\", \"schema_version\": 1, \"rows\": [], "
		  "\"parameters\": [{\"target\": \"family\", \"id\": \"nvidia-ada\", \"field\": "
		  "\"moe_scale\", \"fitted\": 0.5}]}",
		  "x.json: parameters[0].field: 'moe_scale' is not a family parameter" },
		{ "{\"format\": \"agentcap-calibration\", \"schema_version\": 1, \"rows\": [], "
		  "\"parameters\": [{\"target\": \"engine\", \"id\": \"vllm\", \"field\": "
		  "\"compute_scale\", \"fitted\": 1.5}]}",
		  "x.json: parameters[0].fitted: expected a fraction from 1e-6 to 1" },
		/* values the fit never gives: a tiny fraction, a huge overhead */
		{ "{\"format\": \"agentcap-calibration\", \"schema_version\": 1, \"rows\": [], "
		  "\"parameters\": [{\"target\": \"family\", \"id\": \"nvidia-ada\", \"field\": "
		  "\"eff_bw\", \"fitted\": 1e-310}]}",
		  "x.json: parameters[0].fitted: expected a fraction from 1e-6 to 1" },
		{ "{\"format\": \"agentcap-calibration\", \"schema_version\": 1, \"rows\": [], "
		  "\"parameters\": [{\"target\": \"engine\", \"id\": \"vllm\", \"field\": "
		  "\"step_overhead_us\", \"fitted\": 1e306}]}",
		  "x.json: parameters[0].fitted: expected a positive number from 1e-3 to 1e7" },
		/* a family's issue rate is a fraction; it and an SM's watts are
		 * the family's, never an engine's */
		{ "{\"format\": \"agentcap-calibration\", \"schema_version\": 1, \"rows\": [], "
		  "\"parameters\": [{\"target\": \"family\", \"id\": \"nvidia-ada\", \"field\": "
		  "\"eff_issue\", \"fitted\": 1.2}]}",
		  "x.json: parameters[0].fitted: expected a fraction from 1e-6 to 1" },
		{ "{\"format\": \"agentcap-calibration\", \"schema_version\": 1, \"rows\": [], "
		  "\"parameters\": [{\"target\": \"engine\", \"id\": \"llama.cpp\", \"field\": "
		  "\"sm_w_at_1ghz\", \"fitted\": 0.2}]}",
		  "x.json: parameters[0].field: 'sm_w_at_1ghz' is not a engine parameter" },
		/* a per-core figure is the engine's, never an override's */
		{ "{\"format\": \"agentcap-calibration\", \"schema_version\": 1, \"rows\": [], "
		  "\"parameters\": [{\"target\": \"override\", \"id\": \"llama.cpp\", "
		  "\"family_prefix\": \"apple\", \"field\": \"matvec_bytes_per_core_clock\", "
		  "\"fitted\": 5}]}",
		  "x.json: parameters[0].field: 'matvec_bytes_per_core_clock' is not a override" },
		{ "{\"format\": \"agentcap-calibration\", \"schema_version\": 1, \"rows\": [], "
		  "\"parameters\": []}}} garbage",
		  "x.json:1:" },
		{ "{\"format\": \"agentcap-calibration\", \"schema_version\": 1, \"parameters\": [], "
		  "\"rows\": [{\"hardware\": \"rtx-4090\", \"model\": \"llama-2-7b\", \"engine\": "
		  "\"llama.cpp\", \"metric\": \"decode_tok_s\", \"value\": 100, \"input_tokens\": "
		  "1e300}]}",
		  "x.json: rows[0].input_tokens: expected a whole number from 0 to 1e+12" },
		{ "{\"format\": \"agentcap-calibration\", \"schema_version\": 1, \"parameters\": [], "
		  "\"rows\": [{\"hardware\": \"rtx-4090\", \"model\": \"llama-2-7b\", \"engine\": "
		  "\"llama.cpp\", \"metric\": \"decode_tok_s\", \"value\": 100, \"n_gpus\": "
		  "\"2\"}]}",
		  "x.json: rows[0].n_gpus: expected a whole number from 1 to 1e+06" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct diag d;
		diag_init(&d);
		struct calfile *cf = (struct calfile *)1;
		int rc = calfile_parse(&cf, "x.json", cases[i].text, strlen(cases[i].text), &d);
		if (rc != DIAG_EINPUT || !strstr(d.msg, cases[i].msg))
			fail_msg("case %zu: rc %d '%s' (expected '%s')", i, rc, d.msg, cases[i].msg);
		assert_null(cf);
	}
	/* what calibrate writes for an engine override, which engines.json
	 * lets set these two, reads back */
	static const char *const ok[] = { "attention_scale_without_fa", "moe_host_routing_us" };
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		char text[512];
		snprintf(text, sizeof(text),
			 "{\"format\": \"agentcap-calibration\", \"schema_version\": 1, "
			 "\"rows\": [], \"parameters\": [{\"target\": \"override\", \"id\": "
			 "\"llama.cpp\", \"family_prefix\": \"nvidia-ada\", \"field\": \"%s\", "
			 "\"fitted\": 0.2}]}", ok[i]);
		struct diag d;
		diag_init(&d);
		struct calfile *cf = NULL;
		if (calfile_parse(&cf, "x.json", text, strlen(text), &d))
			fail_msg("%s: %s", ok[i], d.msg);
		calfile_free(cf);
	}
	/* a parameter naming what the tables do not have */
	const char *text = "{\"format\": \"agentcap-calibration\", \"schema_version\": 1, "
			   "\"rows\": [], \"parameters\": [{\"target\": \"override\", \"id\": "
			   "\"vllm\", \"family_prefix\": \"no-such-family\", \"field\": "
			   "\"layer_overhead_us\", \"fitted\": 5}]}";
	struct diag d;
	diag_init(&d);
	struct calfile *cf;
	assert_int_equal(calfile_parse(&cf, "x.json", text, strlen(text), &d), 0);
	struct catalog *cat;
	assert_int_equal(catalog_load(&cat, NULL, &d), 0);
	struct engine_table *et = malloc(sizeof(*et));
	assert_non_null(et);
	assert_int_equal(engine_table_load(et, NULL, &d), 0);
	assert_int_equal(calfile_apply(cf, cat, et, &d), DIAG_EINPUT);
	assert_non_null(strstr(d.msg, "x.json: parameters[0]: engine 'vllm' has no override for "
				      "family prefix 'no-such-family'"));
	catalog_free(cat);
	free(et);
	calfile_free(cf);
	diag_init(&d);
	assert_int_equal(calfile_load(&cf, "/nonexistent/cal.json", &d), DIAG_EINPUT);
	assert_non_null(strstr(d.msg, "/nonexistent/cal.json"));
	assert_non_null(strstr(d.msg, "expected an agentcap calibration file"));
}

/* The distance of docs/calibrate.md, term by term. */
static void test_nearest(void **state)
{
	(void)state;
	struct diag d;
	diag_init(&d);
	struct calfile *cf;
	assert_int_equal(calfile_parse(&cf, "my.json", GOOD, strlen(GOOD), &d), 0);
	struct catalog *cat;
	assert_int_equal(catalog_load(&cat, NULL, &d), 0);
	struct calfile_near n;
	/* the row itself: nothing away */
	struct calfile_regime r = { "rtx-4090", "llama-3-8b", "llama.cpp", 1, 256 };
	calfile_nearest(cf, cat, &r, &n);
	assert_true(n.found);
	assert_int_equal(n.row, 0);
	assert_true(n.score == 0);
	/* 16 sequences at 1024 tokens: 4 and 2 doublings */
	r.batch = 16;
	r.context = 1024;
	calfile_nearest(cf, cat, &r, &n);
	assert_int_equal(n.row, 0);
	assert_true(fabs(n.batch_doublings - 4) < 1e-9 && fabs(n.context_doublings - 2) < 1e-9);
	assert_true(fabs(n.score - 6) < 1e-9);
	/* another GPU of the family, another engine: 100 + 5 on top */
	r.hardware = "l40s";
	r.engine = "vllm";
	calfile_nearest(cf, cat, &r, &n);
	assert_int_equal(n.hardware_rank, 1);
	assert_int_equal(n.engine_rank, 1);
	assert_true(fabs(n.score - 111) < 1e-9);
	/* a Hopper with the MoE: the offline row (batch 256, context 1998 + 47) */
	struct calfile_regime h = { "h100-sxm", "gpt-oss-20b", "vllm", 256, 2045 };
	calfile_nearest(cf, cat, &h, &n);
	assert_int_equal(n.row, 1);
	assert_true(n.score == 0);
	/* a similar model: dense, active parameters within 2x */
	h.model = "qwen2.5-7b";
	h.hardware = "rtx-4090";
	h.engine = "llama.cpp";
	h.batch = 1;
	h.context = 256;
	calfile_nearest(cf, cat, &h, &n);
	assert_int_equal(n.row, 0);
	assert_int_equal(n.model_rank, 1);
	assert_true(fabs(n.score - 10) < 1e-9);
	catalog_free(cat);
	calfile_free(cf);
}

/* The built-in calibration: the embedded measurements.csv. */
static void test_builtin(void **state)
{
	(void)state;
	struct diag d;
	diag_init(&d);
	struct calfile *cf;
	assert_int_equal(calfile_builtin(&cf, NULL, &d), 0);
	assert_false(cf->own);
	assert_int_equal(cf->n_params, 0);
	assert_true(cf->n_rows > 50);
	assert_string_equal(cf->path, "models/calibration/measurements.csv");
	assert_int_equal(cf->rows[0].line, 2);
	char buf[256];
	calfile_describe(cf, buf, sizeof(buf));
	assert_non_null(strstr(buf, "built-in (models/calibration/measurements.csv"));
	calfile_free(cf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_and_apply),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_nearest),
		cmocka_unit_test(test_builtin),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
