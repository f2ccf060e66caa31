/* SPDX-License-Identifier: Apache-2.0
 * test_stats_azure: on the Azure 2023 code trace, the median input and
 * output lengths stats reports equal the ones counted independently: the
 * CSV parsed here with plain C and the lengths sorted.  Checked on the trace
 * imported by traces/import.h (import_files "azure"), and on a canonical
 * file this test writes itself (one open-loop call per row), which checks
 * stats without the importer.
 */
#include "tests/traces/testutil.h"

#include "base/diag.h"
#include "traces/stats.h"
#include "traces/import.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#define AZURE_CODE AC_SRC_DIR "/tests/fixtures/azure2023/AzureLLMInferenceTrace_code.csv"
#define MAX_ROWS 20000

struct csv_counts {
	int64_t ctx[MAX_ROWS], gen[MAX_ROWS];
	size_t n;
	int64_t ctx_sum, gen_sum;
};

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

static double median(int64_t *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_i64);
	return n % 2 ? (double)v[n / 2] : ((double)v[n / 2 - 1] + (double)v[n / 2]) / 2.0;
}

/* TIMESTAMP,ContextTokens,GeneratedTokens; the last line has no newline. */
static void read_csv(struct csv_counts *c)
{
	FILE *f = fopen(AZURE_CODE, "r");
	assert_non_null(f);
	char line[256];
	assert_non_null(fgets(line, sizeof(line), f));
	assert_int_equal(strncmp(line, "TIMESTAMP,ContextTokens,GeneratedTokens", 39), 0);
	c->n = 0;
	c->ctx_sum = c->gen_sum = 0;
	while (fgets(line, sizeof(line), f)) {
		long long a, b;
		assert_int_equal(sscanf(line, "%*[^,],%lld,%lld", &a, &b), 2);
		assert_true(c->n < MAX_ROWS);
		c->ctx[c->n] = a;
		c->gen[c->n] = b;
		c->ctx_sum += a;
		c->gen_sum += b;
		c->n++;
	}
	fclose(f);
}

static struct stats_summary stats_of(const char *path)
{
	struct stats *st;
	struct stats_summary s;
	struct diag d;
	diag_init(&d);
	assert_int_equal(stats_new(&st, NULL, &d), 0);
	if (stats_read(st, path, TRACE_FMT_AUTO, false, &s, NULL, &d) != 0)
		fail_msg("%s", d.msg);
	stats_free(st);
	return s;
}

static void check(const struct stats_summary *s, struct csv_counts *c)
{
	assert_int_equal(s->calls, (int64_t)c->n);
	assert_int_equal(s->prompt_tokens, c->ctx_sum);
	assert_int_equal(s->output_tokens, c->gen_sum); /* no row has 0 generated tokens */
	double mi = median(c->ctx, c->n), mo = median(c->gen, c->n);
	printf("Azure 2023 code: %zu requests, median input %.1f, median output %.1f; stats %.1f, %.1f\n",
	       c->n, mi, mo, s->input_tokens.p50, s->output_tokens_per_call.p50);
	assert_true(s->input_tokens.p50 == mi);
	assert_true(s->output_tokens_per_call.p50 == mo);
	assert_true(s->input_tokens.max == (double)c->ctx[c->n - 1]); /* sorted by median() */
	assert_true(s->input_tokens.min == (double)c->ctx[0]);
}

static void test_own_conversion(void **state)
{
	(void)state;
	struct csv_counts *c = malloc(sizeof(*c));
	read_csv(c);
	assert_int_equal(c->n, 8819);
	char path[512];
	testutil_scratch(path, sizeof(path), "stats_azure_own.jsonl");
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs("{\"format\":\"agentcap-trace\",\"version\":1}\n", f);
	for (size_t i = 0; i < c->n; i++)
		fprintf(f, "{\"t\":%zu,\"prompt\":[[\"row%zu\",%lld]],\"output_tokens\":%lld}\n", i, i,
			(long long)c->ctx[i], (long long)c->gen[i]);
	assert_int_equal(fclose(f), 0);
	struct stats_summary s = stats_of(path);
	check(&s, c);
	free(c);
}

static void test_imported(void **state)
{
	(void)state;
	struct csv_counts *c = malloc(sizeof(*c));
	read_csv(c);
	char out[512];
	testutil_scratch(out, sizeof(out), "stats_azure_import.jsonl");
	const char *in[1] = {AZURE_CODE};
	struct diag d;
	diag_init(&d);
	if (import_files("azure", in, 1, NULL, out, NULL, &d) != 0)
		fail_msg("%s", d.msg);
	struct stats_summary s = stats_of(out);
	check(&s, c);
	assert_int_equal(s.open_loop_calls, (int64_t)c->n);
	free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_own_conversion),
		cmocka_unit_test(test_imported),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
