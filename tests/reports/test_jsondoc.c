/* SPDX-License-Identifier: Apache-2.0
 * jsondoc: long arrays of numbers stay in the text and read back as cJSON
 * would have read them (null and every JSON number form), short ones and
 * arrays holding anything else go into the tree; every array finds its own
 * numbers whatever the nesting; errors point at the place in the text the
 * caller gave, where cJSON stops on the whole text (after runs taken out as
 * well as before them); blanks after the
 * value are fine, anything else is not; and a document with more values
 * than allowed is refused before it is parsed. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "reports/jsondoc.h"

#include <cjson/cJSON.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A JSON array of n numbers: element i is the i-th of FORMS, in turn. */
static char *numbers(size_t n)
{
	static const char *const FORMS[] = {"0", "-1", "2.5", "1e3", "-0.25E-2", "null", "7", "1E+2",
					    "123456789012"};
	char *s = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&s, &len);
	assert_non_null(fp);
	fputc('[', fp);
	for (size_t i = 0; i < n; i++)
		fprintf(fp, "%s%s", i ? (i % 3 ? ", " : ",\n ") : "", FORMS[i % 9]);
	fputc(']', fp);
	assert_int_equal(fclose(fp), 0);
	return s;
}

/* Every element of doc's array a as cJSON reads the same array in text. */
static void same_numbers(const struct jsondoc *doc, const cJSON *a, const char *text)
{
	cJSON *ref = cJSON_Parse(text);
	assert_non_null(ref);
	size_t n = (size_t)cJSON_GetArraySize(ref);
	assert_int_equal(jsondoc_size(doc, a), n);
	struct jsondoc_nums it;
	jsondoc_nums_init(&it, doc, a);
	const cJSON *e;
	cJSON_ArrayForEach(e, ref) {
		double v = jsondoc_nums_next(&it);
		if (cJSON_IsNumber(e))
			assert_true(v == e->valuedouble);
		else
			assert_true(isnan(v));
	}
	assert_true(isnan(jsondoc_nums_next(&it))); /* past the end */
	cJSON_Delete(ref);
}

static void test_runs(void **state)
{
	(void)state;
	char *longa = numbers(1000), *shorta = numbers(JSONDOC_RUN_MIN - 1),
	     *edge = numbers(JSONDOC_RUN_MIN);
	char *text;
	assert_true(asprintf(&text, "{\"a\": %s, \"s\": \"[1, 2, ]\", \"short\": %s, \"nested\": "
			     "[[%s], {\"x\": %s}, [1, \"two\", 3]], \"edge\": %s, \"last\": %s}\n",
			     longa, shorta, longa, edge, edge, longa) > 0);
	struct jsondoc doc;
	size_t at;
	assert_int_equal(jsondoc_parse(&doc, text, strlen(text), 1000, &at), JSONDOC_OK);
	/* a, the two in nested, edge and last; not short, not the string */
	assert_int_equal(doc.n_runs, 5);
	const cJSON *root = doc.root;
	same_numbers(&doc, cJSON_GetObjectItem(root, "a"), longa);
	same_numbers(&doc, cJSON_GetObjectItem(root, "short"), shorta);
	same_numbers(&doc, cJSON_GetObjectItem(root, "edge"), edge);
	same_numbers(&doc, cJSON_GetObjectItem(root, "last"), longa);
	const cJSON *nested = cJSON_GetObjectItem(root, "nested");
	same_numbers(&doc, cJSON_GetArrayItem(cJSON_GetArrayItem(nested, 0), 0), longa);
	same_numbers(&doc, cJSON_GetObjectItem(cJSON_GetArrayItem(nested, 1), "x"), edge);
	/* an array with a string in it is the tree's, read element by element */
	const cJSON *mixed = cJSON_GetArrayItem(nested, 2);
	assert_int_equal(jsondoc_size(&doc, mixed), 3);
	struct jsondoc_nums it;
	jsondoc_nums_init(&it, &doc, mixed);
	assert_true(jsondoc_nums_next(&it) == 1.0);
	assert_true(isnan(jsondoc_nums_next(&it)));
	assert_true(jsondoc_nums_next(&it) == 3.0);
	assert_string_equal(cJSON_GetObjectItem(root, "s")->valuestring, "[1, 2, ]");
	/* not an array: nothing */
	assert_int_equal(jsondoc_size(&doc, cJSON_GetObjectItem(root, "s")), 0);
	jsondoc_nums_init(&it, &doc, NULL);
	assert_true(isnan(jsondoc_nums_next(&it)));
	jsondoc_release(&doc);
	free(text);
	free(longa);
	free(shorta);
	free(edge);
}

/* Where text[at] is, as "line:col". */
static void where(const char *text, size_t at, char *buf, size_t cap)
{
	long line = 1, col = 1;
	for (size_t i = 0; i < at; i++) {
		if (text[i] == '\n') {
			line++;
			col = 1;
		} else {
			col++;
		}
	}
	snprintf(buf, cap, "%ld:%ld", line, col);
}

static void test_errors(void **state)
{
	(void)state;
	char *longa = numbers(500);
	static const struct {
		const char *fmt;   /* %s: a long array of numbers */
		const char *mark;  /* the error is at its first occurrence ("": where
				      cJSON stops on the whole text) */
		enum jsondoc_rc rc;
	} CASES[] = {
		{"{\"a\": %s, \"b\": oops}", "oops", JSONDOC_SYNTAX},
		{"{\"a\": %s, \"b\": %s oops}", "oops", JSONDOC_SYNTAX},
		{"{\"a\": %s} {}", "{}", JSONDOC_TRAILING},
		{"{\"a\": %s}\n\n  x", "x", JSONDOC_TRAILING},
		/* not a run (a number JSON does not have): the tree's parser
		 * stops inside it */
		{"{\"a\": [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, "
		 "23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, "
		 "45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63, 64, .5], "
		 "\"b\": %s}", ".5", JSONDOC_SYNTAX},
		{"{\"a\": %s, \"b\": [1, 2", "", JSONDOC_SYNTAX},
	};
	for (size_t i = 0; i < sizeof(CASES) / sizeof(CASES[0]); i++) {
		char *text;
		assert_true(asprintf(&text, CASES[i].fmt, longa, longa) > 0);
		struct jsondoc doc;
		size_t at = 12345;
		enum jsondoc_rc rc = jsondoc_parse(&doc, text, strlen(text), 100000, &at);
		if (rc != CASES[i].rc)
			fail_msg("case %zu: rc %d (expected %d)", i, rc, CASES[i].rc);
		assert_null(doc.root);
		/* where cJSON stops on the whole text, or the mark */
		size_t want_at;
		if (rc == JSONDOC_SYNTAX) {
			const char *end = NULL;
			assert_null(cJSON_ParseWithLengthOpts(text, strlen(text), &end, 0));
			want_at = (size_t)(end - text);
		} else {
			want_at = (size_t)(strstr(text, CASES[i].mark) - text);
		}
		if (CASES[i].mark[0])
			assert_int_equal(want_at, (size_t)(strstr(text, CASES[i].mark) - text));
		char got[48], want[48];
		where(text, at, got, sizeof(got));
		where(text, want_at, want, sizeof(want));
		if (strcmp(got, want) != 0)
			fail_msg("case %zu: error at %s (expected %s)", i, got, want);
		free(text);
	}
	free(longa);
}

static void test_too_many_values(void **state)
{
	(void)state;
	/* 3 values per "[0, \"x\"]" element (the array, a number, a string),
	 * counted as at most 4 (two commas, one array) */
	size_t n = 1000;
	char *s = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&s, &len);
	assert_non_null(fp);
	fputc('[', fp);
	for (size_t i = 0; i < n; i++)
		fprintf(fp, "%s[0, \"x\"]", i ? ", " : "");
	fputc(']', fp);
	assert_int_equal(fclose(fp), 0);
	struct jsondoc doc;
	size_t at;
	assert_int_equal(jsondoc_parse(&doc, s, len, 2000, &at), JSONDOC_VALUES);
	assert_null(doc.root);
	assert_int_equal(jsondoc_parse(&doc, s, len, 4 * n + 3, &at), JSONDOC_OK);
	assert_true(doc.values >= 3 * n + 1);
	jsondoc_release(&doc);
	/* a run counts as one value whatever its length */
	char *longa = numbers(100000);
	assert_int_equal(jsondoc_parse(&doc, longa, strlen(longa), 10, &at), JSONDOC_OK);
	assert_int_equal(jsondoc_size(&doc, doc.root), 100000);
	jsondoc_release(&doc);
	free(longa);
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_runs),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_too_many_values),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
