/* SPDX-License-Identifier: Apache-2.0
 * test_quality: the benchmark-score catalogue (models/catalog/quality.json)
 * and relative quality (models/quality.h).
 *   - the built-in table loads, every row sourced and dated, every harness
 *     id one of the documented families;
 *   - relative quality by hand from the catalogue's rows: the first
 *     benchmark of the order with a shared scaffold, the newest row, the
 *     cap at 1; a model against itself is 1; a model with no score, a
 *     traced model with no score and two models never run with the same
 *     scaffold are not found, each saying why; vendor rows whose scaffold
 *     is unstated never pair;
 *   - a bad table: exit code, file and row named, what was expected.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "models/quality.h"

#include <math.h>
#include <string.h>

static void test_builtin(void **state)
{
	(void)state;
	struct quality *q = NULL;
	struct diag d;
	diag_init(&d);
	assert_int_equal(quality_load(&q, NULL, NULL, &d), 0);
	assert_true(q->n >= 60);
	for (size_t i = 0; i < q->n; i++) {
		const struct quality_row *r = &q->rows[i];
		assert_true(strncmp(r->source, "http", 4) == 0 || strstr(r->source, "arXiv"));
		assert_true(r->score > 0 && r->score <= 100);
	}
	assert_true(quality_has(q, "claude-sonnet-4-5"));
	assert_false(quality_has(q, "llama-3.1-8b"));
	quality_free(q);
}

static void test_relative(void **state)
{
	(void)state;
	struct quality *q = NULL;
	struct diag d;
	diag_init(&d);
	assert_int_equal(quality_load(&q, NULL, NULL, &d), 0);
	struct quality_rel r;

	/* SWE-bench Pro on Scale's harness, the first benchmark of the order:
	 * 5.24 / 43.6 */
	quality_relative(q, "llama-4-maverick-17b-128e", "claude-sonnet-4-5", &r);
	assert_true(r.found);
	assert_true(fabs(r.ratio - 5.24 / 43.6) < 1e-12);
	assert_true(r.factor == r.ratio);
	assert_string_equal(r.model_row->benchmark, "swe-bench-pro");
	assert_non_null(strstr(r.basis, "swe-bench-pro with scale-seal"));

	/* Qwen's SWE-bench rows are on its own scaffold: the pair is
	 * Terminal-Bench 2.0 on Terminus 2, 59.3 / 59.3 */
	quality_relative(q, "qwen3.6-27b", "claude-opus-4-5", &r);
	assert_true(r.found);
	assert_string_equal(r.model_row->benchmark, "terminal-bench-2.0");
	assert_true(r.ratio == 1.0);

	/* better than the traced model: capped, and said */
	quality_relative(q, "claude-opus-4-5", "claude-haiku-4-5", &r);
	assert_true(r.found && r.ratio > 1 && r.factor == 1);
	assert_non_null(strstr(r.basis, "capped at 1"));

	/* itself */
	quality_relative(q, "glm-5", "glm-5", &r);
	assert_true(r.found && r.factor == 1 && !r.model_row);

	/* not found, each with its reason */
	quality_relative(q, "llama-3.1-8b", "claude-sonnet-4-5", &r);
	assert_false(r.found);
	assert_true(r.factor == 1);
	assert_non_null(strstr(r.basis, "no published score for llama-3.1-8b"));
	quality_relative(q, "claude-sonnet-4-5", "claude-sonnet-5-5", &r);
	assert_false(r.found);
	assert_non_null(strstr(r.basis, "traced model claude-sonnet-5-5"));
	/* GLM-5.2's rows are vendor figures with no scaffold named */
	quality_relative(q, "glm-5.2", "gpt-5-5", &r);
	assert_false(r.found);
	assert_non_null(strstr(r.basis, "same scaffold"));
	quality_free(q);
}

static void test_bad_table(void **state)
{
	(void)state;
	static const struct {
		const char *text, *want;
	} cases[] = {
		{"[", "t.json: not JSON"},
		{"{}", "t.json: scores: expected an array"},
		{"{\"scores\": [1]}", "t.json: scores[0]: expected an object"},
		{"{\"scores\": [{\"model\": \"m\", \"benchmark\": \"b\", \"harness\": \"h\", "
		 "\"date\": \"2026\", \"source\": \"s\", \"score\": 50}]}",
		 "t.json: scores[0]: harness_id: expected a non-empty string"},
		{"{\"scores\": [{\"model\": \"m\", \"benchmark\": \"b\", \"harness\": \"h\", "
		 "\"harness_id\": \"x\", \"date\": \"2026\", \"source\": \"s\", \"score\": 0}]}",
		 "t.json: scores[0] 'm': score: expected a percentage in (0, 100]"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct quality *q = (struct quality *)1;
		struct diag d;
		diag_init(&d);
		assert_int_equal(quality_load(&q, "t.json", cases[i].text, &d), DIAG_EINPUT);
		assert_null(q);
		if (!strstr(d.msg, cases[i].want))
			fail_msg("case %zu: got '%s', want '%s'", i, d.msg, cases[i].want);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_builtin),
		cmocka_unit_test(test_relative),
		cmocka_unit_test(test_bad_table),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
