/* SPDX-License-Identifier: Apache-2.0
 * Tests for replay/calib: the fit recovers parameters that generated the
 * measurements, keeps fractions in (0, 1) and overheads positive whatever
 * the rows ask, writes its parameters and residuals as JSON, refuses a set
 * with nothing to fit, and cross-validates deterministically; on the
 * shipped calibration set the out-of-sample medians are pinned and the
 * error bars cover at least 80% of the rows out of sample. */
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

#include <cjson/cJSON.h>
#include <zlib.h>

#include "calib/fitparams.h"

#define CALIBRATION AC_SRC_DIR "/models/calibration/measurements.csv"

#define HEAD "hardware,n_gpus,model,quant,engine,concurrency,input_tokens,output_tokens," \
	     "metric,value,unit,provenance,confidence\n"

/* Rows of two families and one engine, values filled in by generate(). */
static const char *const ROWS[] = {
	"apple-m2-10c,1,llama-2-7b,gguf-q4-0,llama.cpp,1,0,128,decode_tok_s,%.9g,tok/s,original,high\n",
	"apple-m2-10c,1,llama-2-7b,fp16,llama.cpp,1,0,128,decode_tok_s,%.9g,tok/s,original,high\n",
	"apple-m2-10c,1,llama-2-7b,gguf-q4-0,llama.cpp,1,512,0,prefill_tok_s,%.9g,tok/s,original,high\n",
	"apple-m1-8c,1,llama-2-7b,gguf-q8-0,llama.cpp,1,0,128,decode_tok_s,%.9g,tok/s,original,high\n",
	"apple-m1-8c,1,llama-2-7b,fp16,llama.cpp,1,512,0,prefill_tok_s,%.9g,tok/s,original,high\n",
	"rtx-4090,1,llama-2-7b,gguf-q4-0,llama.cpp,1,0,128,decode_tok_s,%.9g,tok/s,original,high\n",
	"rtx-4090,1,llama-3-8b,fp16,llama.cpp,1,0,512,decode_tok_s,%.9g,tok/s,original,high\n",
	"rtx-4090,1,llama-2-7b,fp16,llama.cpp,1,512,0,prefill_tok_s,%.9g,tok/s,original,high\n",
	"rtx-4090,1,llama-3-8b,fp16,llama.cpp,1,8192,0,prefill_tok_s,%.9g,tok/s,original,high\n",
};
#define N_ROWS (sizeof(ROWS) / sizeof(ROWS[0]))

struct fixture {
	struct catalog *cat;
	struct engine_table *et;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	struct diag d;
	diag_init(&d);
	if (!f || catalog_load(&f->cat, NULL, &d))
		return -1;
	f->et = malloc(sizeof(*f->et));
	if (!f->et || engine_table_load(f->et, NULL, &d))
		return -1;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	catalog_free(f->cat);
	free(f->et);
	free(f);
	return 0;
}

/* The CSV with every row's value = v[i]. */
static char *table_of(const double *v)
{
	size_t cap = 8192, len = 0;
	char *s = malloc(cap);
	assert_non_null(s);
	len += (size_t)snprintf(s, cap, "%s", HEAD);
	for (size_t i = 0; i < N_ROWS; i++)
		len += (size_t)snprintf(s + len, cap - len, ROWS[i], v[i]);
	assert_true(len < cap);
	return s;
}

/* Predictions of the rows under the current catalogue and engines. */
static void predict(struct fixture *f, double *out)
{
	double ones[N_ROWS];
	for (size_t i = 0; i < N_ROWS; i++)
		ones[i] = 1;
	char *t = table_of(ones);
	struct validate_opts o;
	validate_opts_init(&o, f->cat);
	o.engines = f->et;
	struct validate_report rep;
	struct diag d;
	diag_init(&d);
	if (validate_run_text(&rep, "gen.csv", t, strlen(t), &o, &d))
		fail_msg("%s", d.msg);
	assert_int_equal(rep.n_rows, N_ROWS);
	for (size_t i = 0; i < N_ROWS; i++) {
		assert_false(rep.rows[i].skipped);
		out[i] = rep.rows[i].predicted;
	}
	validate_release(&rep);
	free(t);
}

static const struct fitparams_param *find(const struct fitparams_fit *fit, enum fitparams_target t,
				      const char *id, enum fitparams_field fl)
{
	for (size_t j = 0; j < fit->n_params; j++)
		if (fit->params[j].target == t && fit->params[j].field == fl &&
		    strcmp(fit->params[j].id, id) == 0)
			return &fit->params[j];
	return NULL;
}

/* Measurements made by a catalogue whose Apple family streams weights at
 * 0.8 of its shipped fraction of its bandwidth and whose Ada family computes
 * at 0.8 of its shipped fraction of its peak: the fit moves both toward
 * those values and leaves almost no error. */
static void test_fit_recovers(void **state)
{
	struct fixture *f = *state;
	struct cat_family *apple = catalog_family_mut(f->cat, "apple-silicon");
	struct cat_family *ada = catalog_family_mut(f->cat, "nvidia-ada");
	assert_non_null(apple);
	assert_non_null(ada);
	double bw0 = apple->eff_bw, c0 = ada->eff_compute;
	double bw1 = 0.8 * bw0, c1 = 0.8 * c0;
	apple->eff_bw = bw1;
	ada->eff_compute = c1;
	double meas[N_ROWS];
	predict(f, meas);
	apple->eff_bw = bw0;
	ada->eff_compute = c0;
	char *t = table_of(meas);
	struct fitparams_opts o;
	fitparams_opts_init(&o);
	o.prior = 0.01;
	struct fitparams_fit fit;
	struct diag d;
	diag_init(&d);
	if (fitparams_fit_run(&fit, f->cat, f->et, "gen.csv", t, strlen(t), &o, &d))
		fail_msg("%s", d.msg);
	assert_int_equal(fit.n_res, N_ROWS);
	assert_true(fit.n_params >= 4);
	assert_true(fit.median_ape_before > 5);
	assert_true(fit.median_ape_after < 1);
	assert_true(fit.cost_after < 0.01 * fit.cost_before);
	const struct fitparams_param *bw = find(&fit, CALIB_FAMILY, "apple-silicon", CF_EFF_BW);
	const struct fitparams_param *cp = find(&fit, CALIB_FAMILY, "nvidia-ada", CF_EFF_COMPUTE);
	assert_non_null(bw);
	assert_non_null(cp);
	assert_true(fabs(bw->shipped - bw0) < 1e-12 && fabs(cp->shipped - c0) < 1e-12);
	assert_true(fabs(bw->value - bw1) < fabs(bw0 - bw1) / 2);
	assert_true(fabs(cp->value - c1) < fabs(c0 - c1) / 2);
	/* the catalogue now holds the fitted values; fitparams_apply restores */
	assert_true(apple->eff_bw == bw->value);
	fitparams_apply(&fit, f->cat, f->et, false);
	assert_true(apple->eff_bw == bw0 && ada->eff_compute == c0);
	/* residuals: every row, the fitted prediction close to the measurement */
	for (size_t i = 0; i < fit.n_res; i++) {
		assert_true(fit.res[i].line == (long)i + 2);
		assert_true(fabs(fit.res[i].after / fit.res[i].measured - 1) < 0.02);
		assert_true(fit.res[i].weight == 1.0);
	}
	fitparams_fit_release(&fit);
	free(t);
}

static char *slurp(const char *path, size_t *len)
{
	FILE *fp = fopen(path, "rb");
	assert_non_null(fp);
	char *t = calloc(1, 1 << 20);
	assert_non_null(t);
	*len = fread(t, 1, (1 << 20) - 1, fp);
	fclose(fp);
	return t;
}

/* The shipped fitted-params.json is what a fit of the shipped measurements
 * gives today: the same CSV (its CRC), every parameter the rows move (none
 * left out, however many: the shipped fit has more than the parameter
 * table's first allocation of 32) at the value written. */
static void test_fit_reproduces_shipped(void **state)
{
	struct fixture *f = *state;
	size_t n, jn;
	char *t = slurp(CALIBRATION, &n);
	char *js = slurp(AC_SRC_DIR "/models/calibration/fitted-params.json", &jn);
	cJSON *j = cJSON_Parse(js);
	assert_non_null(j);
	char crc[16];
	snprintf(crc, sizeof(crc), "%08lx", crc32(crc32(0L, Z_NULL, 0), (const Bytef *)t, (uInt)n));
	cJSON *m = cJSON_GetObjectItem(j, "measurements");
	assert_string_equal(cJSON_GetObjectItem(m, "crc32")->valuestring, crc);
	struct fitparams_opts o;
	fitparams_opts_init(&o);
	struct fitparams_fit fit;
	struct diag d;
	diag_init(&d);
	if (fitparams_fit_run(&fit, f->cat, f->et, CALIBRATION, t, n, &o, &d))
		fail_msg("%s", d.msg);
	cJSON *ps = cJSON_GetObjectItem(j, "parameters");
	assert_int_equal(cJSON_GetArraySize(ps), (int)fit.n_params);
	assert_true(fit.n_params > 32);
	const cJSON *p;
	cJSON_ArrayForEach(p, ps)
	{
		const char *target = cJSON_GetObjectItem(p, "target")->valuestring;
		const char *id = cJSON_GetObjectItem(p, "id")->valuestring;
		const char *field = cJSON_GetObjectItem(p, "field")->valuestring;
		const cJSON *prefix = cJSON_GetObjectItem(p, "family_prefix");
		const struct fitparams_param *q = NULL;
		for (size_t k = 0; k < fit.n_params && !q; k++) {
			const struct fitparams_param *c = &fit.params[k];
			if (strcmp(fitparams_target_name(c->target), target) == 0 &&
			    strcmp(c->id, id) == 0 && strcmp(fitparams_field_name(c->field), field) == 0 &&
			    strcmp(c->family_prefix, prefix ? prefix->valuestring : "") == 0)
				q = c;
		}
		if (!q)
			fail_msg("%s %s %s: in fitted-params.json, not fitted", target, id, field);
		double shipped = cJSON_GetObjectItem(p, "shipped")->valuedouble;
		double fitted = cJSON_GetObjectItem(p, "fitted")->valuedouble;
		if (fabs(q->shipped - shipped) > 1e-9 * fabs(shipped) ||
		    fabs(q->value - fitted) > 1e-5 * fabs(fitted))
			fail_msg("%s %s %s: shipped %.10g fitted %.10g, the file says %.10g %.10g",
				 target, id, field, q->shipped, q->value, shipped, fitted);
	}
	fitparams_apply(&fit, f->cat, f->et, false);
	fitparams_fit_release(&fit);
	cJSON_Delete(j);
	free(js);
	free(t);
}

/* A row a thousand times slower than anything the model gives: the fit may
 * push the overheads to their bound, never to infinity, and the result is
 * a finite cost, not a perfect fit of rows it stopped predicting. */
static void test_fit_unreachable_row(void **state)
{
	struct fixture *f = *state;
	char t[512];
	snprintf(t, sizeof(t), "%s%s", HEAD,
		 "rtx-4090,1,llama-2-7b,gguf-q4-0,llama.cpp,1,0,128,decode_tok_s,0.001,tok/s,"
		 "original,high\n");
	struct fitparams_opts o;
	fitparams_opts_init(&o);
	o.prior = 0;
	struct fitparams_fit fit;
	struct diag d;
	diag_init(&d);
	if (fitparams_fit_run(&fit, f->cat, f->et, "slow.csv", t, strlen(t), &o, &d))
		fail_msg("%s", d.msg);
	assert_true(fit.n_params >= 1);
	for (size_t j = 0; j < fit.n_params; j++) {
		if (!isfinite(fit.params[j].value) || fit.params[j].value > 1e7)
			fail_msg("%s %s: %g", fit.params[j].id, fitparams_field_name(fit.params[j].field),
				 fit.params[j].value);
	}
	assert_true(isfinite(fit.cost_after) && fit.cost_after > 0);
	assert_true(isfinite(fit.median_ape_after));
	assert_true(fit.res[0].after > 0 && isfinite(fit.res[0].after));
	fitparams_apply(&fit, f->cat, f->et, false);
	fitparams_fit_release(&fit);
}

/* Rows three times faster than the hardware can go push the efficiencies
 * up: they stay at most 1, every fraction in (0, 1] and every overhead > 0. */
static void test_fit_bounds(void **state)
{
	struct fixture *f = *state;
	double meas[N_ROWS];
	predict(f, meas);
	for (size_t i = 0; i < N_ROWS; i++)
		meas[i] *= 3;
	char *t = table_of(meas);
	struct fitparams_opts o;
	fitparams_opts_init(&o);
	o.prior = 0;
	struct fitparams_fit fit;
	struct diag d;
	diag_init(&d);
	if (fitparams_fit_run(&fit, f->cat, f->et, "fast.csv", t, strlen(t), &o, &d))
		fail_msg("%s", d.msg);
	for (size_t j = 0; j < fit.n_params; j++) {
		const struct fitparams_param *p = &fit.params[j];
		assert_true(p->value > 0 && isfinite(p->value));
		if (p->field == CF_EFF_BW || p->field == CF_EFF_COMPUTE ||
		    p->field == CF_COMPUTE_SCALE || p->field == CF_ATTENTION_SCALE ||
		    p->field == CF_QUANT_BW_SCALE || p->field == CF_MOE_SCALE)
			assert_true(p->value <= 1);
	}
	/* the catalogue accepts them: a model initialises with the values */
	assert_true(catalog_check(f->cat));
	fitparams_apply(&fit, f->cat, f->et, false);
	fitparams_fit_release(&fit);
	free(t);
}

/* Only serving rows: nothing a fit can use. */
static void test_fit_nothing(void **state)
{
	struct fixture *f = *state;
	const char *t = HEAD "h100-sxm,1,llama-3.1-8b,fp8,trtllm,,128,128,output_throughput_tok_s,"
			     "28000,tok/s,original,high\n";
	struct fitparams_opts o;
	fitparams_opts_init(&o);
	struct fitparams_fit fit;
	struct diag d;
	diag_init(&d);
	assert_int_equal(fitparams_fit_run(&fit, f->cat, f->et, "serving.csv", t, strlen(t), &o, &d),
			 DIAG_EINPUT);
	assert_non_null(strstr(d.msg, "serving.csv: no row to fit"));
	/* a bad row is the validator's input error */
	const char *bad = HEAD "no-such-gpu,1,llama-2-7b,fp16,llama.cpp,1,0,128,decode_tok_s,5,"
			       "tok/s,original,high\n";
	diag_init(&d);
	assert_int_equal(fitparams_fit_run(&fit, f->cat, f->et, "bad.csv", bad, strlen(bad), &o, &d),
			 DIAG_EINPUT);
	assert_non_null(strstr(d.msg, "bad.csv:2"));
}

/* The serving row of test_fit_nothing fitted by simulation, as agentcap
 * calibrate fits it: one row identifies at most one parameter, the others
 * keep their values, and the simulated throughput meets the measurement. */
static void test_fit_serving_identifiable(void **state)
{
	struct fixture *f = *state;
	const char *t = HEAD "h100-sxm,1,llama-3.1-8b,fp8,trtllm,4,512,64,output_throughput_tok_s,"
			     "900,tok/s,original,high\n";
	struct fitparams_opts o;
	fitparams_opts_init(&o);
	o.simulate = true;
	o.identifiable_only = true;
	o.requests_per_client = 2;
	struct fitparams_fit fit;
	struct diag d;
	diag_init(&d);
	if (fitparams_fit_run(&fit, f->cat, f->et, "serving.csv", t, strlen(t), &o, &d))
		fail_msg("%s", d.msg);
	assert_int_equal(fit.n_res, 1);
	assert_int_equal(fit.n_params, 1);
	assert_true(fabs(fit.res[0].before / 900 - 1) > 0.1);
	assert_true(fabs(fit.res[0].after / 900 - 1) < 0.02);
	fitparams_apply(&fit, f->cat, f->et, false);
	fitparams_fit_release(&fit);
	/* without the restriction every parameter the row moves is fitted */
	o.identifiable_only = false;
	diag_init(&d);
	if (fitparams_fit_run(&fit, f->cat, f->et, "serving.csv", t, strlen(t), &o, &d))
		fail_msg("%s", d.msg);
	assert_true(fit.n_params > 1);
	fitparams_apply(&fit, f->cat, f->et, false);
	fitparams_fit_release(&fit);
}

/* The JSON names the measurements (path, CRC, commit), each parameter and
 * each residual. */
static void test_fit_json(void **state)
{
	struct fixture *f = *state;
	double meas[N_ROWS];
	predict(f, meas);
	meas[0] *= 1.1;
	char *t = table_of(meas);
	struct fitparams_opts o;
	fitparams_opts_init(&o);
	struct fitparams_fit fit;
	struct diag d;
	diag_init(&d);
	if (fitparams_fit_run(&fit, f->cat, f->et, "gen.csv", t, strlen(t), &o, &d))
		fail_msg("%s", d.msg);
	char *buf = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&buf, &len);
	assert_non_null(mem);
	assert_int_equal(fitparams_fit_write_json(mem, &fit, "gen.csv", 0x1234abcdUL, "abc123", &d), 0);
	fclose(mem);
	cJSON *j = cJSON_Parse(buf);
	assert_non_null(j);
	cJSON *m = cJSON_GetObjectItem(j, "measurements");
	assert_string_equal(cJSON_GetObjectItem(m, "crc32")->valuestring, "1234abcd");
	assert_string_equal(cJSON_GetObjectItem(m, "commit")->valuestring, "abc123");
	cJSON *ps = cJSON_GetObjectItem(j, "parameters");
	assert_int_equal(cJSON_GetArraySize(ps), (int)fit.n_params);
	cJSON *p0 = cJSON_GetArrayItem(ps, 0);
	assert_non_null(cJSON_GetObjectItem(p0, "shipped"));
	assert_non_null(cJSON_GetObjectItem(p0, "fitted"));
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(j, "residuals")), (int)N_ROWS);
	cJSON_Delete(j);
	free(buf);
	fitparams_apply(&fit, f->cat, f->et, false);
	fitparams_fit_release(&fit);
	free(t);
}

/* The cross-validation's report, text or JSON (the caller frees it). */
static char *cv_report(const struct fitparams_cv *cv, bool json)
{
	char *buf = NULL;
	size_t len = 0;
	struct diag d;
	diag_init(&d);
	FILE *mem = open_memstream(&buf, &len);
	assert_non_null(mem);
	assert_int_equal(json ? fitparams_cv_write_json(mem, cv, &d) : fitparams_cv_write_text(mem, cv, &d),
			 0);
	fclose(mem);
	return buf;
}

/* Its JSON report, parsed (the caller deletes it). */
static cJSON *cv_json(const struct fitparams_cv *cv)
{
	char *buf = cv_report(cv, true);
	cJSON *j = cJSON_Parse(buf);
	free(buf);
	assert_non_null(j);
	return j;
}

/* Leave-one-family-out on the fixture: two folds, the pooled cells, the
 * shipped values back in place, the same table twice. */
static void test_cross_validate_fixture(void **state)
{
	struct fixture *f = *state;
	double meas[N_ROWS];
	predict(f, meas);
	for (size_t i = 0; i < N_ROWS; i++)
		meas[i] *= 1 + 0.05 * (double)(i % 3);
	char *t = table_of(meas);
	double bw0 = catalog_family(f->cat, "apple-silicon")->eff_bw;
	struct fitparams_opts o;
	fitparams_opts_init(&o);
	struct fitparams_cv a, b;
	struct diag d;
	diag_init(&d);
	if (fitparams_cross_validate(&a, f->cat, f->et, "gen.csv", t, strlen(t), CG_FAMILY, &o, &d) ||
	    fitparams_cross_validate(&b, f->cat, f->et, "gen.csv", t, strlen(t), CG_FAMILY, &o, &d))
		fail_msg("%s", d.msg);
	assert_int_equal(a.n_folds, 2);
	assert_true(catalog_family(f->cat, "apple-silicon")->eff_bw == bw0);
	assert_int_equal(a.n_cells, b.n_cells);
	size_t pooled = 0;
	for (size_t i = 0; i < a.n_cells; i++) {
		assert_string_equal(a.cells[i].group, b.cells[i].group);
		assert_true(a.cells[i].out_median == b.cells[i].out_median);
		assert_true(isfinite(a.cells[i].out_median) && isfinite(a.cells[i].in_median));
		assert_true(a.cells[i].out_p90 >= a.cells[i].out_median);
		pooled += strcmp(a.cells[i].group, "all") == 0;
	}
	assert_int_equal(pooled, 2); /* decode and prefill */
	char *buf = cv_report(&a, false);
	assert_non_null(strstr(buf, "leave one family out"));
	assert_non_null(strstr(buf, "nvidia-ada"));
	free(buf);
	/* the JSON report: the same cells, and each row's two predictions
	 * with their errors */
	cJSON *j = cv_json(&a);
	assert_string_equal(cJSON_GetObjectItem(j, "grouping")->valuestring, "family");
	assert_int_equal(cJSON_GetObjectItem(j, "folds")->valueint, 2);
	cJSON *cells = cJSON_GetObjectItem(j, "cells");
	assert_int_equal(cJSON_GetArraySize(cells), (int)a.n_cells);
	cJSON *c0 = cJSON_GetArrayItem(cells, 0);
	assert_string_equal(cJSON_GetObjectItem(c0, "group")->valuestring, a.cells[0].group);
	assert_float_equal(cJSON_GetObjectItem(c0, "out_p90_pct")->valuedouble, a.cells[0].out_p90,
			   1e-6 * a.cells[0].out_p90 + 1e-9);
	cJSON *rows = cJSON_GetObjectItem(j, "rows");
	assert_int_equal(cJSON_GetArraySize(rows), (int)a.n_rows);
	for (size_t i = 0; i < a.n_rows; i++) {
		cJSON *r = cJSON_GetArrayItem(rows, (int)i);
		assert_int_equal(cJSON_GetObjectItem(r, "line")->valueint, a.rows[i].line);
		assert_string_equal(cJSON_GetObjectItem(r, "family")->valuestring, a.rows[i].family);
		double ape = 100 * fabs(a.rows[i].predicted_out - a.rows[i].measured) /
			     a.rows[i].measured;
		assert_float_equal(cJSON_GetObjectItem(r, "ape_out_pct")->valuedouble, ape,
				   1e-6 * ape + 1e-9);
	}
	cJSON_Delete(j);
	fitparams_cv_release(&a);
	fitparams_cv_release(&b);
	enum fitparams_group g;
	assert_int_equal(fitparams_group_parse("engine", &g), 0);
	assert_int_equal(g, CG_ENGINE);
	assert_int_equal(fitparams_group_parse("vendor", &g), -1);
	free(t);
}

/* The fixture's llama.cpp profile, writable. */
static struct engine_profile *llama_cpp(struct fixture *f)
{
	struct engine_profile *lc = NULL;
	for (size_t i = 0; i < f->et->count && !lc; i++)
		if (strcmp(f->et->engines[i].id, "llama.cpp") == 0)
			lc = &f->et->engines[i];
	assert_non_null(lc);
	return lc;
}

/* HEAD and rows[i] filled with value[i] into t; its length. */
static size_t table_from(const char *const *rows, const double *value, size_t n, char *t,
			 size_t size)
{
	size_t len = (size_t)snprintf(t, size, "%s", HEAD);
	for (size_t i = 0; i < n; i++)
		len += (size_t)snprintf(t + len, size - len, rows[i], value[i]);
	assert_true(len < size);
	return len;
}

/* Two cross-validations of the same rows under values the family's rows
 * set differently: each of the family's n rows moves in sample (the values
 * matter to it) and never out of sample (they do not reach it). */
static void assert_no_leak(const struct fitparams_cv *a, const struct fitparams_cv *b,
			   const char *family, size_t n)
{
	assert_int_equal(a->n_rows, b->n_rows);
	size_t seen = 0;
	for (size_t i = 0; i < a->n_rows; i++) {
		if (strcmp(a->rows[i].family, family) != 0)
			continue;
		seen++;
		assert_true(a->rows[i].predicted_in != b->rows[i].predicted_in);
		if (a->rows[i].predicted_out != b->rows[i].predicted_out)
			fail_msg("line %ld: out of sample %.9g and %.9g: the %s values reach the "
				 "family's own prediction", a->rows[i].line, a->rows[i].predicted_out,
				 b->rows[i].predicted_out, family);
	}
	assert_int_equal(seen, n);
}

/* An engine override shared by two families, one held out: a kept row of the
 * other family that the fold only simulates (a serving row) fits nothing, so
 * the override's fitted fields still leave the held-out family's prediction
 * (they were set with its rows in view). */
static void test_cross_validate_no_leak_serving(void **state)
{
	struct fixture *f = *state;
	static const char *const rows[] = {
		"apple-m2-10c,1,llama-2-7b,gguf-q4-0,llama.cpp,1,0,128,decode_tok_s,%.9g,tok/s,original,high\n",
		"apple-m2-10c,1,llama-2-7b,fp16,llama.cpp,1,512,0,prefill_tok_s,%.9g,tok/s,original,high\n",
		"rtx-4090,1,llama-2-7b,gguf-q4-0,llama.cpp,1,0,128,decode_tok_s,%.9g,tok/s,original,high\n",
		"rtx-4090,1,llama-2-7b,gguf-q4-0,llama.cpp,1,512,0,prefill_tok_s,%.9g,tok/s,original,high\n",
		"rtx-3090,1,llama-2-7b,gguf-q4-0,llama.cpp,2,256,64,output_throughput_tok_s,%.9g,tok/s,"
		"original,high\n",
	};
	enum { N = sizeof(rows) / sizeof(rows[0]) };
	static const double value[N] = { 20, 200, 180, 14000, 250 };
	char t[4096];
	size_t len = table_from(rows, value, N, t, sizeof(t));
	struct engine_profile *lc = llama_cpp(f);
	/* an override for nvidia-ada and nvidia-ampere-geforce alike, made
	 * from one that sets no figure */
	const struct engine_override *none = engine_override_for(lc, "nvidia-blackwell-rtx");
	assert_non_null(none);
	assert_true(none->p.layer_overhead_us < 0);
	assert_true(lc->override_count < ENGINE_OVERRIDES_MAX);
	struct engine_override *ov = &lc->overrides[lc->override_count++];
	*ov = *none;
	snprintf(ov->family_prefix, sizeof(ov->family_prefix), "nvidia-a");
	assert_ptr_equal(engine_override_for(lc, "nvidia-ada"), ov);
	assert_ptr_equal(engine_override_for(lc, "nvidia-ampere-geforce"), ov);
	struct fitparams_opts o;
	fitparams_opts_init(&o);
	struct fitparams_cv a, b;
	struct diag d;
	diag_init(&d);
	ov->p.layer_overhead_us = 60;
	int rc = fitparams_cross_validate(&a, f->cat, f->et, "gen.csv", t, len, CG_FAMILY, &o, &d);
	ov->p.layer_overhead_us = 10;
	if (!rc)
		rc = fitparams_cross_validate(&b, f->cat, f->et, "gen.csv", t, len, CG_FAMILY, &o, &d);
	lc->override_count--;
	if (rc)
		fail_msg("%s", d.msg);
	assert_no_leak(&a, &b, "nvidia-ada", 2);
	fitparams_cv_release(&a);
	fitparams_cv_release(&b);
}

/* Leave one model out groups by catalogue id: a model spelled by an alias
 * in some rows is one group, not two that would each keep the other in
 * view. */
static void test_cross_validate_groups_by_id(void **state)
{
	struct fixture *f = *state;
	double meas[N_ROWS];
	predict(f, meas);
	char *t = table_of(meas);
	/* the first two rows name llama-2-7b by an alias */
	char *u = malloc(strlen(t) + 64);
	assert_non_null(u);
	char *at = u;
	const char *p = t;
	for (int k = 0; k < 2; k++) {
		const char *hit = strstr(p, ",llama-2-7b,");
		assert_non_null(hit);
		memcpy(at, p, (size_t)(hit - p));
		at += hit - p;
		at += sprintf(at, ",llama2-7b,");
		p = hit + strlen(",llama-2-7b,");
	}
	strcpy(at, p);
	struct fitparams_opts o;
	fitparams_opts_init(&o);
	struct fitparams_cv cv;
	struct diag d;
	diag_init(&d);
	if (fitparams_cross_validate(&cv, f->cat, f->et, "gen.csv", u, strlen(u), CG_MODEL, &o, &d))
		fail_msg("%s", d.msg);
	/* the fixture's two models: two folds, whatever the spelling */
	assert_int_equal(cv.n_folds, 2);
	for (size_t i = 0; i < cv.n_rows; i++)
		assert_true(strcmp(cv.rows[i].group, "llama-2-7b") == 0 ||
			    strcmp(cv.rows[i].group, "llama-3-8b") == 0);
	fitparams_cv_release(&cv);
	free(u);
	free(t);
}

/* A row whose engine runs on no other family: its family's fold has no
 * fitted row of that engine left, so the engine keeps the shipped figures
 * set with the row in view; the report says so for that row only. */
static void test_cross_validate_engine_in_sample(void **state)
{
	struct fixture *f = *state;
	double meas[N_ROWS];
	predict(f, meas);
	char *t = table_of(meas);
	static const char mlx_row[] =
		"apple-m2-max-30c,1,qwen3.6-35b-a3b,mlx-q4,mlx,1,,,decode_tok_s,79.75,tok/s,"
		"original,high\n";
	char *u = malloc(strlen(t) + sizeof(mlx_row));
	assert_non_null(u);
	strcpy(u, t);
	strcat(u, mlx_row);
	struct fitparams_opts o;
	fitparams_opts_init(&o);
	struct fitparams_cv cv;
	struct diag d;
	diag_init(&d);
	if (fitparams_cross_validate(&cv, f->cat, f->et, "gen.csv", u, strlen(u), CG_FAMILY, &o, &d))
		fail_msg("%s", d.msg);
	assert_int_equal(cv.n_rows, N_ROWS + 1);
	for (size_t i = 0; i < cv.n_rows; i++) {
		bool is_mlx = strcmp(cv.rows[i].engine, "mlx") == 0;
		assert_int_equal(cv.rows[i].line, (long)i + 2);
		if (cv.rows[i].engine_in_sample != is_mlx)
			fail_msg("line %ld (%s): engine_in_sample %d", cv.rows[i].line,
				 cv.rows[i].engine, cv.rows[i].engine_in_sample);
	}
	char *buf = cv_report(&cv, false);
	const char *note = strstr(buf, "could not refit");
	assert_non_null(note);
	assert_non_null(strstr(note, "mlx"));
	assert_null(strstr(note, "llama.cpp"));
	free(buf);
	cJSON *j = cv_json(&cv);
	cJSON *last = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "rows"), (int)N_ROWS);
	assert_true(cJSON_IsTrue(cJSON_GetObjectItem(last, "engine_in_sample")));
	cJSON *first = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "rows"), 0);
	assert_true(cJSON_IsFalse(cJSON_GetObjectItem(first, "engine_in_sample")));
	cJSON_Delete(j);
	fitparams_cv_release(&cv);
	free(u);
	free(t);
}

/* The error bars (models/uncert.h) on the leave-one-family-out predictions
 * of the shipped set:
 * - out of sample twice over: each family's rows are judged against bands
 *   built without that family (so they take the fallback a new family
 *   would), and the band covers the measured value for at least 80% of
 *   the rows;
 * - the shipped bands (models/calibration/uncertainty.json) were made from
 *   this calibration set (its CRC-32), and they too cover at least 80% of
 *   the rows' out-of-sample predictions. */
static void check_bands(const struct fitparams_cv *cv, const char *text, size_t len)
{
	struct diag d;
	diag_init(&d);
	size_t covered = 0, total = 0;
	for (size_t i = 0; i < cv->n_rows; i++) {
		const struct fitparams_cv_row *r = &cv->rows[i];
		bool first = true;
		for (size_t k = 0; k < i && first; k++)
			first = strcmp(cv->rows[k].group, r->group) != 0;
		if (!first)
			continue;
		struct uncert_table u;
		uncert_init(&u);
		if (fitparams_cv_bands(&u, cv, r->group, UNCERT_COVERAGE_DEFAULT, UNCERT_MIN_ROWS_DEFAULT,
				   &d))
			fail_msg("%s", d.msg);
		for (size_t k = i; k < cv->n_rows; k++) {
			const struct fitparams_cv_row *x = &cv->rows[k];
			if (strcmp(x->group, r->group) != 0)
				continue;
			struct uncert_band b =
				uncert_lookup(&u, x->family, x->engine, validate_metric_name(x->metric));
			assert_non_null(b.regime);
			/* never the family's own regime: it was left out */
			assert_string_not_equal(b.regime->family, x->family);
			total++;
			covered += fabs(log(x->predicted_out / x->measured)) <= b.log_band + 1e-12;
		}
		uncert_release(&u);
	}
	assert_int_equal(total, cv->n_rows);
	if ((double)covered < 0.80 * (double)total)
		fail_msg("bands built without the row's family cover %zu of %zu rows (%.1f%%, "
			 "expected >= 80%%)", covered, total, 100.0 * (double)covered / (double)total);

	struct uncert_table shipped;
	uncert_init(&shipped);
	if (uncert_load(&shipped, NULL, &d))
		fail_msg("%s", d.msg);
	char crc[16];
	snprintf(crc, sizeof(crc), "%08lx",
		 crc32(crc32(0L, Z_NULL, 0), (const Bytef *)text, (uInt)len));
	if (strcmp(shipped.crc32, crc) != 0)
		fail_msg("uncertainty.json was made from measurements of CRC-32 %s, the set is %s: "
			 "rerun agentcap validate --cross-validate family --write-bands "
			 "(docs/validation.md)", shipped.crc32, crc);
	assert_string_equal(shipped.grouping, "family");
	covered = 0;
	for (size_t i = 0; i < cv->n_rows; i++) {
		const struct fitparams_cv_row *x = &cv->rows[i];
		struct uncert_band b = uncert_lookup(&shipped, x->family, x->engine,
						     validate_metric_name(x->metric));
		covered += fabs(log(x->predicted_out / x->measured)) <= b.log_band + 1e-12;
	}
	if ((double)covered < 0.80 * (double)cv->n_rows)
		fail_msg("the shipped bands cover %zu of %zu out-of-sample rows (expected >= 80%%)",
			 covered, cv->n_rows);
	uncert_release(&shipped);
}

/* Nothing of a held-out family reaches its own out-of-sample prediction:
 * changing its shipped factors (families.json) and its engine override
 * (engines.json by_family) must leave the predictions of its rows, made
 * without them, exactly as they were, while its in-sample predictions
 * move. */
static void test_cross_validate_no_leak(void **state)
{
	struct fixture *f = *state;
	static const char *const rows[] = {
		"apple-m2-10c,1,llama-2-7b,gguf-q4-0,llama.cpp,1,0,128,decode_tok_s,%.9g,tok/s,original,high\n",
		"apple-m2-10c,1,llama-2-7b,fp16,llama.cpp,1,512,0,prefill_tok_s,%.9g,tok/s,original,high\n",
		"rtx-4090,1,llama-2-7b,gguf-q4-0,llama.cpp,1,0,128,decode_tok_s,%.9g,tok/s,original,high\n",
		"rtx-4090,1,llama-2-7b,gguf-q4-0,llama.cpp,1,512,0,prefill_tok_s,%.9g,tok/s,original,high\n",
		"mi300x,1,llama-2-7b,gguf-q4-0,llama.cpp,1,0,128,decode_tok_s,%.9g,tok/s,original,high\n",
		"mi300x,1,llama-2-7b,gguf-q4-0,llama.cpp,1,512,0,prefill_tok_s,%.9g,tok/s,original,high\n",
	};
	enum { N = sizeof(rows) / sizeof(rows[0]) };
	static const double value[N] = { 20, 200, 180, 14000, 150, 5000 };
	char t[4096];
	size_t len = table_from(rows, value, N, t, sizeof(t));
	struct cat_family *cdna = catalog_family_mut(f->cat, "amd-cdna3");
	assert_non_null(cdna);
	struct engine_profile *lc = llama_cpp(f);
	const struct engine_override *co = engine_override_for(lc, "amd-cdna3");
	assert_non_null(co);
	struct engine_override *ov = &lc->overrides[co - lc->overrides];
	assert_true(ov->p.layer_overhead_us > 0 && ov->p.compute_scale > 0);
	struct fitparams_opts o;
	fitparams_opts_init(&o);
	struct fitparams_cv a, b;
	struct diag d;
	diag_init(&d);
	if (fitparams_cross_validate(&a, f->cat, f->et, "gen.csv", t, len, CG_FAMILY, &o, &d))
		fail_msg("%s", d.msg);
	struct cat_family keep = *cdna;
	struct engine_override keep_ov = *ov;
	cdna->eff_compute *= 0.5;
	cdna->eff_bw *= 0.6;
	cdna->step_overhead_us *= 3;
	ov->p.layer_overhead_us *= 4;
	ov->p.compute_scale *= 0.5;
	int rc = fitparams_cross_validate(&b, f->cat, f->et, "gen.csv", t, len, CG_FAMILY, &o, &d);
	*cdna = keep;
	*ov = keep_ov;
	if (rc)
		fail_msg("%s", d.msg);
	assert_int_equal(a.n_rows, N);
	assert_int_equal(b.n_rows, N);
	assert_no_leak(&a, &b, "amd-cdna3", 2);
	fitparams_cv_release(&a);
	fitparams_cv_release(&b);
}

/* fitparams_stand_in's value, which must come without an error. */
static double stand_in(const struct catalog *cat, const struct fitparams_fit *fit,
		       const struct cat_family *fam, enum fitparams_field field)
{
	double x;
	struct diag d;
	diag_init(&d);
	if (fitparams_stand_in(cat, fit, fam, field, &x, &d))
		fail_msg("%s", d.msg);
	return x;
}

/* The stand-in for a held-out family's compute efficiency comes from the
 * families that multiply on the same kind of unit (families.json
 * matmul_units), and from the unit's first value when no other family of
 * that unit was fitted: Apple (vector ALUs) out, NVIDIA (tensor cores) in,
 * and conversely. */
static void test_cross_validate_stand_in_by_unit(void **state)
{
	struct fixture *f = *state;
	const struct cat_family *apple = catalog_family(f->cat, "apple-silicon");
	const struct cat_family *ada = catalog_family(f->cat, "nvidia-ada");
	const struct cat_family *hop = catalog_family(f->cat, "nvidia-hopper");
	assert_string_equal(apple->matmul_unit->id, "vector");
	assert_string_equal(ada->matmul_unit->id, "matrix");
	assert_ptr_equal(hop->matmul_unit, ada->matmul_unit);
	struct fitparams_fit fit;
	memset(&fit, 0, sizeof(fit));
	struct fitparams_param params[12];
	fit.params = params;
	fit.params_cap = sizeof(params) / sizeof(params[0]);
	static const struct {
		const char *id;
		enum fitparams_field field;
		double value;
	} ps[] = {
		{ "nvidia-ada", CF_EFF_COMPUTE, 0.4 },   { "nvidia-hopper", CF_EFF_COMPUTE, 0.6 },
		{ "nvidia-ampere", CF_EFF_COMPUTE, 0.5 }, { "apple-silicon", CF_EFF_COMPUTE, 0.9 },
		{ "nvidia-ada", CF_EFF_BW, 0.8 },	   { "apple-silicon", CF_EFF_BW, 0.6 },
		{ "nvidia-ada", CF_EFF_ISSUE, 0.8 },	   { "nvidia-hopper", CF_EFF_ISSUE, 0.9 },
		{ "apple-silicon", CF_EFF_ISSUE, 0.6 },   { "nvidia-ada", CF_SM_W, 0.2 },
	};
	for (size_t i = 0; i < sizeof(ps) / sizeof(ps[0]); i++) {
		struct fitparams_param *q = &fit.params[fit.n_params++];
		q->target = CALIB_FAMILY;
		snprintf(q->id, sizeof(q->id), "%s", ps[i].id);
		q->field = ps[i].field;
		q->value = ps[i].value;
	}
	/* Blackwell RTX (tensor cores) takes the median of the three tensor-core
	 * families, never Apple's 0.9 */
	const struct cat_family *bw = catalog_family(f->cat, "nvidia-blackwell-rtx");
	assert_true(fabs(stand_in(f->cat, &fit, bw, CF_EFF_COMPUTE) - 0.5) < 1e-12);
	/* bandwidth pools the families of the same memory kind (GDDR and LPDDR
	 * against HBM), all of them when none was fitted; step costs pool
	 * every family */
	assert_int_equal(bw->memory_kind, CAT_MEM_DRAM);
	assert_int_equal(hop->memory_kind, CAT_MEM_HBM);
	assert_true(fabs(stand_in(f->cat, &fit, bw, CF_EFF_BW) - 0.7) < 1e-12);
	struct fitparams_param *hbm = &fit.params[fit.n_params++];
	*hbm = (struct fitparams_param){ .target = CALIB_FAMILY, .field = CF_EFF_BW, .value = 0.5 };
	snprintf(hbm->id, sizeof(hbm->id), "nvidia-ampere");
	assert_true(fabs(stand_in(f->cat, &fit, bw, CF_EFF_BW) - 0.7) < 1e-12);
	assert_true(fabs(stand_in(f->cat, &fit, hop, CF_EFF_BW) - 0.5) < 1e-12);
	fit.n_params--;
	assert_true(fabs(stand_in(f->cat, &fit, hop, CF_EFF_BW) - 0.7) < 1e-12);
	assert_true(isnan(stand_in(f->cat, &fit, bw, CF_FAMILY_STEP_US)));
	/* an issue efficiency or SM watts: the median over every family that
	 * fitted one (whatever its unit or memory), 0 (the family then gives
	 * none) when none did */
	assert_true(fabs(stand_in(f->cat, &fit, bw, CF_EFF_ISSUE) - 0.8) < 1e-12);
	assert_true(fabs(stand_in(f->cat, &fit, bw, CF_SM_W) - 0.2) < 1e-12);
	size_t n_all = fit.n_params;
	fit.n_params = 6;
	assert_true(stand_in(f->cat, &fit, bw, CF_EFF_ISSUE) == 0);
	assert_true(stand_in(f->cat, &fit, bw, CF_SM_W) == 0);
	fit.n_params = n_all;
	/* Apple held out: no other vector-unit family was fitted (its own
	 * entry aside, which a fold never has): the unit's first value */
	fit.n_params = 3;
	assert_true(stand_in(f->cat, &fit, apple, CF_EFF_COMPUTE) ==
		    apple->matmul_unit->eff_compute);
	assert_true(apple->matmul_unit->eff_compute != apple->eff_compute);
}

/* Leave-one-family-out on the shipped calibration set, pooled over the
 * held-out rows: the medians and p90s recorded in docs/validation.md must
 * not get worse.  The fidelity targets (decode <= 6%, prefill <= 12%,
 * serving throughput <= 15%, every group's p90 <= 35%) are checked, and
 * the medians pinned so that they do not slip back toward them. */
static void test_cross_validate_calibration(void **state)
{
	struct fixture *f = *state;
	FILE *fp = fopen(CALIBRATION, "rb");
	assert_non_null(fp);
	char *t = calloc(1, 1 << 20);
	size_t n = fread(t, 1, (1 << 20) - 1, fp);
	fclose(fp);
	struct fitparams_opts o;
	fitparams_opts_init(&o);
	struct fitparams_cv cv;
	struct diag d;
	diag_init(&d);
	if (fitparams_cross_validate(&cv, f->cat, f->et, CALIBRATION, t, n, CG_FAMILY, &o, &d))
		fail_msg("%s", d.msg);
	/* pooled over every fold: out-of-sample and in-sample medians */
	static const struct {
		enum validate_metric m;
		double out_median, in_median, target;
	} pins[] = {
		{ VM_DECODE_TOK_S, 5.0, 5.0, 6 },
		{ VM_PREFILL_TOK_S, 7.4, 4.9, 12 },
		{ VM_OUTPUT_THROUGHPUT, 8.5, 8.1, 15 },
	};
	for (size_t k = 0; k < sizeof(pins) / sizeof(pins[0]); k++) {
		bool found = false;
		for (size_t i = 0; i < cv.n_cells; i++) {
			const struct fitparams_cv_cell *c = &cv.cells[i];
			if (strcmp(c->group, "all") != 0 || c->metric != pins[k].m)
				continue;
			found = true;
			if (c->out_median > pins[k].out_median + 0.05)
				fail_msg("%s: out-of-sample median %.2f%%, pinned %.1f%%",
					 validate_metric_name(c->metric), c->out_median,
					 pins[k].out_median);
			if (c->in_median > pins[k].in_median + 0.05)
				fail_msg("%s: in-sample median %.2f%%, pinned %.1f%%",
					 validate_metric_name(c->metric), c->in_median,
					 pins[k].in_median);
			if (pins[k].out_median <= pins[k].target && c->out_median > pins[k].target)
				fail_msg("%s: out-of-sample median %.2f%% above the %.0f%% target",
					 validate_metric_name(c->metric), c->out_median, pins[k].target);
		}
		assert_true(found);
	}
	/* every family's p90 out of sample within 35% */
	for (size_t i = 0; i < cv.n_cells; i++) {
		const struct fitparams_cv_cell *c = &cv.cells[i];
		if (strcmp(c->group, "all") != 0 && c->out_p90 > 35.05)
			fail_msg("%s %s: out-of-sample p90 %.2f%%, limit 35%%", c->group,
				 validate_metric_name(c->metric), c->out_p90);
	}
	assert_int_equal(cv.n_folds, 6);
	check_bands(&cv, t, n);
	fitparams_cv_release(&cv);
	free(t);
}

/* Leave one package kind out and leave one format out on the shipped
 * calibration set: the pooled out-of-sample medians docs/validation.md
 * quotes (an increase, or a change of the groups, fails: the set has no
 * multi-die package, so no fold can say how a bound learnt on one die
 * transfers to two). */
static void test_cross_validate_package_format(void **state)
{
	struct fixture *f = *state;
	FILE *fp = fopen(CALIBRATION, "rb");
	assert_non_null(fp);
	char *t = calloc(1, 1 << 20);
	size_t n = fread(t, 1, (1 << 20) - 1, fp);
	fclose(fp);
	static const struct {
		enum fitparams_group g;
		size_t folds;
		const char *groups;
		double decode, prefill; /* pooled out-of-sample medians, % */
	} pins[] = {
		{ CG_PACKAGE, 2, "monolithic soc", 6.5, 14.5 },
		{ CG_FORMAT, 8, "fp16 fp8 gguf-mxfp4 gguf-q4-0 gguf-q4-k-m gguf-q8-0 int4-awq mlx-q4",
		  10.2, 8.4 },
	};
	for (size_t k = 0; k < sizeof(pins) / sizeof(pins[0]); k++) {
		struct fitparams_opts o;
		fitparams_opts_init(&o);
		struct fitparams_cv cv;
		struct diag d;
		diag_init(&d);
		if (fitparams_cross_validate(&cv, f->cat, f->et, CALIBRATION, t, n, pins[k].g, &o,
					     &d))
			fail_msg("%s", d.msg);
		assert_int_equal(cv.n_folds, pins[k].folds);
		char seen[512] = "";
		const char *last = "";
		for (size_t i = 0; i < cv.n_cells; i++) {
			const struct fitparams_cv_cell *c = &cv.cells[i];
			size_t at = strlen(seen);
			if (strcmp(c->group, "all") != 0 && strcmp(c->group, last) != 0)
				snprintf(seen + at, sizeof(seen) - at, "%s%s", at ? " " : "",
					 c->group);
			last = c->group;
			if (strcmp(c->group, "all") != 0)
				continue;
			double pin = c->metric == VM_DECODE_TOK_S ? pins[k].decode
				   : c->metric == VM_PREFILL_TOK_S ? pins[k].prefill : NAN;
			if (isfinite(pin) && fabs(c->out_median - pin) > 0.05)
				fail_msg("leave one %s out, %s: out-of-sample median %.2f%%, pinned "
					 "%.1f%%", fitparams_group_name(pins[k].g),
					 validate_metric_name(c->metric), c->out_median, pin);
		}
		assert_string_equal(seen, pins[k].groups);
		fitparams_cv_release(&cv);
	}
	free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_fit_recovers, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fit_bounds, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fit_unreachable_row, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fit_reproduces_shipped, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fit_nothing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fit_serving_identifiable, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fit_json, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cross_validate_fixture, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cross_validate_no_leak, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cross_validate_groups_by_id, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cross_validate_package_format, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cross_validate_no_leak_serving, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cross_validate_engine_in_sample, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cross_validate_stand_in_by_unit, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cross_validate_calibration, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
