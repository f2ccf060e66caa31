/* SPDX-License-Identifier: Apache-2.0
 * Tests for models/uncert: the band of a regime is the coverage quantile of
 * its out-of-sample errors as an order statistic; regimes below min_rows
 * fall back level by level; a pooled regime is widened for the rows that
 * fall back to it; the file round-trips; every kind of bad file is refused
 * with a message naming the key; the built-in file loads; `predict`
 * shows the band of its regime, the batch choosing the decode metric, and
 * `fit` the bands of each row's family and engine. */
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
#include "models/fit.h"
#include "models/predict.h"
#include "models/uncert.h"

#include <cJSON.h>

/* Ten rows of (fam-a, eng-x, decode) with |errors| 0.01 .. 0.10, five of
 * (fam-b, eng-x, decode) at 0.5, two of (fam-c, eng-y, prefill). */
static size_t samples(struct uncert_sample *s)
{
	size_t n = 0;
	for (int i = 1; i <= 10; i++)
		s[n++] = (struct uncert_sample){ "fam-a", "eng-x", "decode_tok_s",
						 (i % 2 ? 1 : -1) * 0.01 * i };
	for (int i = 0; i < 5; i++)
		s[n++] = (struct uncert_sample){ "fam-b", "eng-x", "decode_tok_s", -0.5 };
	s[n++] = (struct uncert_sample){ "fam-c", "eng-y", "prefill_tok_s", 0.2 };
	s[n++] = (struct uncert_sample){ "fam-c", "eng-y", "prefill_tok_s", 0.3 };
	return n;
}

static void test_build_and_lookup(void **state)
{
	(void)state;
	struct uncert_sample s[32];
	size_t n = samples(s);
	struct uncert_table t;
	uncert_init(&t);
	struct diag d;
	diag_init(&d);
	assert_int_equal(uncert_build(&t, s, n, 0.8, 5, &d), 0);

	/* own regime: the 8th of 10 sorted |errors| */
	struct uncert_band b = uncert_lookup(&t, "fam-a", "eng-x", "decode_tok_s");
	assert_non_null(b.regime);
	assert_int_equal(b.regime->level, 0);
	assert_int_equal(b.regime->n, 10);
	assert_true(fabs(b.log_band - 0.08) < 1e-12);
	assert_true(fabs(b.pct - 100 * expm1(0.08)) < 1e-9);
	assert_true(fabs(b.high_factor * b.low_factor - 1) < 1e-12);
	b = uncert_lookup(&t, "fam-b", "eng-x", "decode_tok_s");
	assert_int_equal(b.regime->level, 0);
	assert_true(fabs(b.log_band - 0.5) < 1e-12);

	/* an unseen family takes any family x eng-x x decode: 15 rows, the
	 * 12th |error| is 0.5 */
	b = uncert_lookup(&t, "fam-new", "eng-x", "decode_tok_s");
	assert_int_equal(b.regime->level, 1);
	assert_int_equal(b.regime->n, 15);
	assert_int_equal(b.regime->n_fallback, 0);
	assert_true(fabs(b.log_band - 0.5) < 1e-12);
	/* unseen engine: fam-a x any engine x decode (level 2) */
	b = uncert_lookup(&t, "fam-a", "eng-new", "decode_tok_s");
	assert_int_equal(b.regime->level, 2);
	/* two prefill rows: too few for any level but all rows */
	b = uncert_lookup(&t, "fam-c", "eng-y", "prefill_tok_s");
	assert_int_equal(b.regime->level, 4);
	assert_int_equal(b.regime->n, 17);
	assert_int_equal(b.regime->n_fallback, 2);
	/* 14th of 17 sorted |errors| (0.01..0.1, 0.2, 0.3, 0.5 x 5) is 0.5 */
	assert_true(fabs(b.log_band - 0.5) < 1e-12);
	b = uncert_lookup(&t, NULL, NULL, NULL);
	assert_int_equal(b.regime->level, 4);

	char buf[128];
	assert_string_equal(uncert_regime_name(t.regimes[t.n - 1].level == 4 ? &t.regimes[t.n - 1]
									: NULL, buf, sizeof(buf)),
			    "any x any x any");

	/* every row of the input is within its own band at least 80% of the time */
	size_t covered = 0;
	for (size_t i = 0; i < n; i++) {
		struct uncert_band x = uncert_lookup(&t, s[i].family, s[i].engine, s[i].metric);
		covered += fabs(s[i].log_error) <= x.log_band;
	}
	assert_true(covered >= 0.8 * (double)n);
	uncert_release(&t);
	uncert_release(&t); /* twice is harmless */
}

/* A pooled regime answers for the rows of small groups: it is widened to
 * their quantile when there are min_rows of them. */
static void test_fallback_widens(void **state)
{
	(void)state;
	struct uncert_sample s[32];
	size_t n = 0;
	/* a big, accurate group and five small groups of one bad row each */
	for (int i = 0; i < 20; i++)
		s[n++] = (struct uncert_sample){ "big", "e", "m", 0.01 };
	static const char *const small[] = { "s1", "s2", "s3", "s4", "s5" };
	for (int i = 0; i < 5; i++)
		s[n++] = (struct uncert_sample){ small[i], "e", "m", 0.4 };
	struct uncert_table t;
	uncert_init(&t);
	struct diag d;
	diag_init(&d);
	assert_int_equal(uncert_build(&t, s, n, 0.8, 5, &d), 0);
	struct uncert_band b = uncert_lookup(&t, "s3", "e", "m");
	assert_int_equal(b.regime->level, 1);
	assert_int_equal(b.regime->n, 25);
	assert_int_equal(b.regime->n_fallback, 5);
	/* over all 25 rows the 20th |error| is 0.01; over the five that fall
	 * back it is 0.4 */
	assert_true(fabs(b.log_band - 0.4) < 1e-12);
	uncert_release(&t);

	/* refused inputs */
	assert_int_equal(uncert_build(&t, s, n, 1.0, 5, &d), DIAG_EINPUT);
	assert_non_null(strstr(d.msg, "coverage"));
	diag_init(&d);
	assert_int_equal(uncert_build(&t, s, n, 0.8, 0, &d), DIAG_EINPUT);
	diag_init(&d);
	assert_int_equal(uncert_build(&t, s, 0, 0.8, 5, &d), DIAG_EINPUT);
	diag_init(&d);
	s[0].log_error = NAN;
	assert_int_equal(uncert_build(&t, s, n, 0.8, 5, &d), DIAG_EINPUT);
	assert_string_equal(d.msg, "sample 0: log error not finite");
	diag_init(&d);
	s[0].log_error = 0;
	s[1].family = "";
	assert_int_equal(uncert_build(&t, s, n, 0.8, 5, &d), DIAG_EINPUT);
	assert_null(t.regimes);
}

static char *write_json(const struct uncert_table *t, size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);
	struct diag d;
	diag_init(&d);
	assert_int_equal(uncert_write_json(f, t, &d), 0);
	fclose(f);
	return buf;
}

static void test_round_trip(void **state)
{
	(void)state;
	struct uncert_sample s[32];
	size_t n = samples(s);
	struct uncert_table t, u;
	uncert_init(&t);
	uncert_init(&u);
	struct diag d;
	diag_init(&d);
	assert_int_equal(uncert_build(&t, s, n, 0.8, 5, &d), 0);
	snprintf(t.path, sizeof(t.path), "m \"q\".csv");
	snprintf(t.crc32, sizeof(t.crc32), "0123abcd");
	snprintf(t.grouping, sizeof(t.grouping), "family");
	size_t len;
	char *text = write_json(&t, &len);
	assert_non_null(strstr(text, "\"commit\": null"));
	assert_int_equal(uncert_parse(&u, "x.json", text, len, &d), 0);
	assert_int_equal(u.n, t.n);
	assert_string_equal(u.path, "m \"q\".csv");
	assert_string_equal(u.crc32, "0123abcd");
	assert_string_equal(u.commit, "");
	for (size_t i = 0; i < t.n; i++) {
		assert_int_equal(u.regimes[i].level, t.regimes[i].level);
		assert_string_equal(u.regimes[i].family, t.regimes[i].family);
		assert_int_equal(u.regimes[i].n, t.regimes[i].n);
		assert_int_equal(u.regimes[i].n_fallback, t.regimes[i].n_fallback);
		/* rounded up, never down */
		assert_true(u.regimes[i].log_band >= t.regimes[i].log_band);
		assert_true(u.regimes[i].log_band - t.regimes[i].log_band < 1.01e-6);
	}
	/* written again: the same bytes */
	size_t len2;
	char *text2 = write_json(&u, &len2);
	assert_int_equal(len, len2);
	assert_memory_equal(text, text2, len);
	free(text);
	free(text2);
	uncert_release(&t);
	uncert_release(&u);
}

#define GOOD_HEAD "{\"schema_version\": 1, \"measurements\": {\"path\": \"m.csv\", " \
		  "\"crc32\": \"00000000\", \"commit\": null}, \"out_of_sample\": \"family\", " \
		  "\"coverage\": 0.8, \"min_rows\": 5, "
#define ALL_ROWS "{\"level\": 4, \"family\": \"*\", \"engine\": \"*\", \"metric\": \"*\", " \
		 "\"rows\": 3, \"rows_resolved\": 3, \"log_band\": 0.2}"

static void test_bad_files(void **state)
{
	(void)state;
	static const struct {
		const char *text;
		const char *msg;
	} cases[] = {
		{ "{", "b.json:1:1: invalid JSON (expected an uncertainty file: an object with "
		       "\"regimes\")" },
		{ "[]", "b.json: (top): expected an object" },
		{ "{\"schema_version\": 2}", "b.json: schema_version: expected a whole number from "
					    "1 to 1" },
		{ "{\"schema_version\": 1}", "b.json: measurements: expected an object with path, "
					    "crc32 and commit" },
		{ GOOD_HEAD "\"regimes\": []}", "b.json: regimes: expected an array of 1 to 4096 "
					       "regimes" },
		{ GOOD_HEAD "\"regimes\": [{\"level\": 5}]}", "b.json: regimes[0].level: expected a "
							     "whole number from 0 to 4" },
		{ GOOD_HEAD "\"regimes\": [{\"level\": 0, \"family\": \"*\", \"engine\": \"e\", "
			    "\"metric\": \"m\", \"rows\": 1, \"rows_resolved\": 1, \"log_band\": 0.1}]}",
		  "b.json: regimes[0]: expected family, engine and metric named as its level says "
		  "(\"*\" where the level pools)" },
		{ GOOD_HEAD "\"regimes\": [{\"level\": 4, \"family\": \"*\", \"engine\": \"*\", "
			    "\"metric\": \"*\", \"rows\": 1, \"rows_resolved\": 2, \"log_band\": 0.1}]}",
		  "b.json: regimes[0].rows_resolved: expected a whole number from 0 to 1" },
		{ GOOD_HEAD "\"regimes\": [{\"level\": 4, \"family\": \"*\", \"engine\": \"*\", "
			    "\"metric\": \"*\", \"rows\": 1, \"rows_resolved\": 1, \"log_band\": -1}]}",
		  "b.json: regimes[0].log_band: expected a number from 0 to 10" },
		{ GOOD_HEAD "\"regimes\": [" ALL_ROWS ", {\"level\": 3, \"family\": \"*\", "
			    "\"engine\": \"*\", \"metric\": \"m\", \"rows\": 1, \"rows_resolved\": 1, "
			    "\"log_band\": 0.1}]}",
		  "b.json: regimes[1]: expected regimes in order of level" },
		{ GOOD_HEAD "\"regimes\": [{\"level\": 3, \"family\": \"*\", \"engine\": \"*\", "
			    "\"metric\": \"m\", \"rows\": 1, \"rows_resolved\": 1, \"log_band\": 0.1}]}",
		  "b.json: regimes: expected a regime of level 4 (all rows)" },
		{ GOOD_HEAD "\"regimes\": [" ALL_ROWS "], \"extrapolation\": [{\"dimension\": "
			    "\"vendor\", \"covered\": [], \"log_band\": 0.1}]}",
		  "b.json: extrapolation[0]: expected a dimension named package, memory, format or "
		  "engine" },
		{ GOOD_HEAD "\"regimes\": [" ALL_ROWS "], \"extrapolation\": [{\"dimension\": "
			    "\"package\", \"covered\": [\"soc\", \"soc\"], \"log_band\": 0.1}]}",
		  "b.json: extrapolation[0].covered: expected distinct values" },
		{ GOOD_HEAD "\"regimes\": [" ALL_ROWS "], \"extrapolation\": [{\"dimension\": "
			    "\"format\", \"covered\": [], \"log_band\": 0.1}, {\"dimension\": "
			    "\"format\", \"covered\": [], \"log_band\": 0.1}]}",
		  "b.json: extrapolation[1]: expected each dimension once" },
		{ "{\"schema_version\": 1, \"measurements\": {\"path\": \"m.csv\", \"crc32\": "
		  "\"00000000\", \"commit\": 3}}",
		  "b.json: measurements.commit: expected a string of 1 to 63 characters or null" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct uncert_table t;
		uncert_init(&t);
		struct diag d;
		diag_init(&d);
		int rc = uncert_parse(&t, "b.json", cases[i].text, strlen(cases[i].text), &d);
		if (rc != DIAG_EINPUT || strcmp(d.msg, cases[i].msg) != 0)
			fail_msg("case %zu: rc %d, '%s' (expected '%s')", i, rc, d.msg, cases[i].msg);
		assert_null(t.regimes);
	}
	/* the smallest good file */
	const char *good = GOOD_HEAD "\"regimes\": [" ALL_ROWS "]}";
	struct uncert_table t;
	uncert_init(&t);
	struct diag d;
	diag_init(&d);
	assert_int_equal(uncert_parse(&t, "g.json", good, strlen(good), &d), 0);
	assert_int_equal(t.n, 1);
	uncert_release(&t);
	assert_int_equal(uncert_load(&t, "/nonexistent/u.json", &d), DIAG_EINPUT);
	assert_non_null(strstr(d.msg, "/nonexistent/u.json: cannot open: "));
}

/* A prediction outside the set's coverage: its band grows by the root of
 * the sum of squares of the dimensions it lies outside of, and says which;
 * inside, nothing moves. */
static void test_widen(void **state)
{
	(void)state;
	const char *text = GOOD_HEAD "\"regimes\": [" ALL_ROWS "], \"extrapolation\": ["
		"{\"dimension\": \"package\", \"covered\": [\"monolithic\", \"soc\"], "
		"\"log_band\": 0.3}, {\"dimension\": \"format\", \"covered\": [\"fp16\"], "
		"\"log_band\": 0.4}]}";
	struct uncert_table t;
	uncert_init(&t);
	struct diag d;
	diag_init(&d);
	assert_int_equal(uncert_parse(&t, "w.json", text, strlen(text), &d), 0);
	assert_int_equal(t.n_dims, 2);
	struct uncert_band b = uncert_lookup(&t, "f", "e", "m");
	double base = b.log_band;
	char why[128];
	struct uncert_point in = { "soc", "lpddr", "fp16", "llama.cpp" };
	struct uncert_band bi = b;
	assert_int_equal(uncert_widen(&t, &in, &bi, why, sizeof(why)), 0);
	assert_string_equal(why, "");
	assert_true(bi.log_band == base);
	struct uncert_point out = { "multi-die", "hbm", "nvfp4", NULL };
	struct uncert_band bo = b;
	assert_int_equal(uncert_widen(&t, &out, &bo, why, sizeof(why)), 2);
	assert_string_equal(why, "package multi-die, format nvfp4");
	assert_float_equal(bo.log_band, sqrt(base * base + 0.09 + 0.16), 1e-12);
	assert_float_equal(bo.pct, 100 * expm1(bo.log_band), 1e-9);
	/* the shipped file knows the four dimensions; nothing multi-die in it */
	struct uncert_table s;
	uncert_init(&s);
	assert_int_equal(uncert_load(&s, NULL, &d), 0);
	assert_int_equal(s.n_dims, 4);
	struct uncert_point b200 = { "multi-die", "hbm", "fp8", "trtllm" };
	struct uncert_band bb = uncert_lookup(&s, "nvidia-blackwell", "trtllm", "decode_tok_s");
	assert_int_equal(uncert_widen(&s, &b200, &bb, why, sizeof(why)), 1);
	assert_string_equal(why, "package multi-die");
	uncert_release(&s);
	uncert_release(&t);
}

static void test_builtin(void **state)
{
	(void)state;
	struct uncert_table t;
	uncert_init(&t);
	struct diag d;
	diag_init(&d);
	if (uncert_load(&t, NULL, &d))
		fail_msg("%s", d.msg);
	assert_true(t.n >= 1);
	assert_string_equal(t.path, "models/calibration/measurements.csv");
	assert_int_equal(strlen(t.crc32), 8);
	assert_true(strlen(t.commit) == 40); /* the calibration commit is recorded */
	assert_true(fabs(t.coverage - UNCERT_COVERAGE_DEFAULT) < 1e-12);
	/* every lookup answers */
	struct uncert_band b = uncert_lookup(&t, "no-such-family", "no-such-engine", "ttft_ms");
	assert_non_null(b.regime);
	assert_int_equal(b.regime->level, 4);
	assert_true(b.pct > 0);
	/* the same file on disk */
	struct uncert_table u;
	uncert_init(&u);
	assert_int_equal(uncert_load(&u, AC_SRC_DIR "/models/calibration/uncertainty.json", &d), 0);
	assert_int_equal(u.n, t.n);
	uncert_release(&u);
	uncert_release(&t);
}

static char *predict_text(const struct perf_model *pm, const struct predict_result *r, bool json)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct diag d;
	diag_init(&d);
	if (json)
		assert_int_equal(predict_write_json(f, pm, r, NULL, &d), 0);
	else
		assert_int_equal(predict_write_text(f, pm, r, NULL, &d), 0);
	fclose(f);
	return buf;
}

static void test_predict_bands(void **state)
{
	(void)state;
	struct catalog *cat = NULL;
	struct diag d;
	diag_init(&d);
	assert_int_equal(catalog_load(&cat, NULL, &d), 0);
	struct perf_model pm;
	assert_int_equal(perf_model_init(&pm, cat, "h100-sxm", "llama-3.1-8b", NULL, NULL, 1, &d), 0);
	/* errors per regime: hopper x vllm decode 0.1, serving 0.3, prefill 0.2 */
	struct uncert_sample s[16];
	size_t n = 0;
	for (int i = 0; i < 5; i++) {
		s[n++] = (struct uncert_sample){ "nvidia-hopper", pm.engine_id, "decode_tok_s", 0.1 };
		s[n++] = (struct uncert_sample){ "nvidia-hopper", pm.engine_id,
						 "output_throughput_tok_s", -0.3 };
		s[n++] = (struct uncert_sample){ "nvidia-hopper", pm.engine_id, "prefill_tok_s", 0.2 };
	}
	struct uncert_table t;
	uncert_init(&t);
	assert_int_equal(uncert_build(&t, s, n, 0.8, 5, &d), 0);
	snprintf(t.commit, sizeof(t.commit), "%s", "0123456789abcdef0123456789abcdef01234567");

	struct predict_result r;
	assert_int_equal(predict_run(&r, &pm, 1, 1024, 2048, &d), 0);
	char *txt = predict_text(&pm, &r, false);
	assert_null(strstr(txt, "% band")); /* none unless set */
	free(txt);
	predict_set_bands(&r, &pm, &t);
	assert_string_equal(r.decode_band_metric, "decode_tok_s");
	assert_true(fabs(r.decode_band.log_band - 0.1) < 1e-12);
	assert_true(fabs(r.prefill_band.log_band - 0.2) < 1e-12);
	txt = predict_text(&pm, &r, false);
	char want[256];
	snprintf(want, sizeof(want), "80%% band        +-%.1f%%   %.1f to %.1f tok/s (errors of "
		 "nvidia-hopper x %s x decode_tok_s, 5 rows)", 100 * expm1(0.1),
		 r.decode_tok_s * exp(-0.1), r.decode_tok_s * exp(0.1), pm.engine_id);
	if (!strstr(txt, want))
		fail_msg("no '%s' in:\n%s", want, txt);
	free(txt);

	/* a batch decodes as a server does: the serving rows' errors */
	assert_int_equal(predict_run(&r, &pm, 32, 1024, 2048, &d), 0);
	predict_set_bands(&r, &pm, &t);
	assert_string_equal(r.decode_band_metric, "output_throughput_tok_s");
	assert_true(fabs(r.decode_band.log_band - 0.3) < 1e-12);
	char *js = predict_text(&pm, &r, true);
	cJSON *j = cJSON_Parse(js);
	assert_non_null(j);
	assert_true(fabs(cJSON_GetObjectItem(j, "decode_band_pct")->valuedouble - 100 * expm1(0.3)) <
		    1e-6);
	assert_true(fabs(cJSON_GetObjectItem(j, "decode_band_high_tok_s")->valuedouble -
			 r.decode_tok_s * exp(0.3)) < 1e-6 * r.decode_tok_s);
	assert_true(fabs(cJSON_GetObjectItem(j, "prefill_band_low_tok_s")->valuedouble -
			 r.prefill_tok_s * exp(-0.2)) < 1e-6 * r.prefill_tok_s);
	assert_string_equal(cJSON_GetObjectItem(j, "band_calibration_commit")->valuestring,
			    "0123456789abcdef0123456789abcdef01234567");
	char reg[128];
	snprintf(reg, sizeof(reg), "nvidia-hopper x %s x prefill_tok_s", pm.engine_id);
	assert_string_equal(cJSON_GetObjectItem(j, "prefill_band_regime")->valuestring, reg);
	cJSON_Delete(j);
	free(js);
	uncert_release(&t);
	catalog_free(cat);
}

static void test_fit_bands(void **state)
{
	(void)state;
	struct catalog *cat = NULL;
	struct diag d;
	diag_init(&d);
	assert_int_equal(catalog_load(&cat, NULL, &d), 0);
	struct uncert_sample s[16];
	size_t n = 0;
	for (int i = 0; i < 5; i++) {
		s[n++] = (struct uncert_sample){ "apple-silicon", "llama.cpp", "decode_tok_s", 0.25 };
		s[n++] = (struct uncert_sample){ "apple-silicon", "llama.cpp", "prefill_tok_s", 0.5 };
	}
	struct uncert_table t;
	uncert_init(&t);
	assert_int_equal(uncert_build(&t, s, n, 0.8, 5, &d), 0);
	struct fit_opts o = { .engine = "llama.cpp" };
	struct fit_result r;
	assert_int_equal(fit_hardware(&r, cat, "apple-m2-max-30c", &o, &d), 0);
	assert_true(r.n_fit > 0);
	assert_true(r.band_coverage == 0);
	assert_true(isnan(r.rows[0].decode_band_pct));
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_int_equal(fit_write_text(f, &r, &d), 0);
	fclose(f);
	assert_null(strstr(buf, "+-dec"));
	free(buf);
	fit_result_release(&r);

	o.bands = &t;
	assert_int_equal(fit_hardware(&r, cat, "apple-m2-max-30c", &o, &d), 0);
	assert_true(fabs(r.band_coverage - 0.8) < 1e-12);
	for (size_t i = 0; i < r.n_fit; i++) {
		assert_true(fabs(r.rows[i].decode_band_pct - 100 * expm1(0.25)) < 1e-9);
		assert_true(fabs(r.rows[i].prefill_band_pct - 100 * expm1(0.5)) < 1e-9);
	}
	f = open_memstream(&buf, &len);
	assert_int_equal(fit_write_text(f, &r, &d), 0);
	fclose(f);
	assert_non_null(strstr(buf, "+-dec +-pre  note"));
	assert_non_null(strstr(buf, "  28%   65%"));
	free(buf);
	f = open_memstream(&buf, &len);
	assert_int_equal(fit_write_json(f, &r, &d), 0);
	fclose(f);
	cJSON *j = cJSON_Parse(buf);
	assert_non_null(j);
	const cJSON *row0 = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "rows"), 0);
	assert_true(fabs(cJSON_GetObjectItem(row0, "decode_band_pct")->valuedouble -
			 100 * expm1(0.25)) < 1e-6);
	cJSON_Delete(j);
	free(buf);
	fit_result_release(&r);
	uncert_release(&t);
	catalog_free(cat);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_build_and_lookup),
		cmocka_unit_test(test_fallback_widens),
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_bad_files),
		cmocka_unit_test(test_builtin),
		cmocka_unit_test(test_widen),
		cmocka_unit_test(test_predict_bands),
		cmocka_unit_test(test_fit_bands),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
