/* SPDX-License-Identifier: Apache-2.0
 * The replay report's one table of fields (reports/fields.h) against what
 * uses it: the JSON has every key (run keys under "run") and nothing of
 * the summary beyond them and the composite sections; the terminal table
 * shows every label; the HTML page lists every measured figure; and
 * docs/metrics.md documents every key, in the JSON's order. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "reports/charts.h"
#include "reports/fields.h"
#include "reports/html.h"
#include "reports/metrics.h"
#include "reports/output.h"
#include "tests/reports/small_run.h"

#include "base/diag.h"

#include <cjson/cJSON.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A run with every conditional part of the report on: objectives, expert
 * parallelism, a scenario file, two KV tiers filled by write-through, KV
 * retention, prefill/decode disaggregation. */
static struct report_meta full_meta(void)
{
	struct report_meta m = {
		.version = "0.1.0", .trace_path = "t.jsonl", .trace_format = "agentcap-trace",
		.scenario_name = "s", .scenario_path = "s.json", .model_id = "qwen3-30b-a3b",
		.hardware_id = "hgx-h100-8", .weight_format = "fp8", .kv_dtype = "fp8", .tp = 8,
		.ep = 8, .seed = 7, .kv_capacity_tokens = 1000, .block_size = 16,
		.max_num_seqs = 256, .max_num_batched_tokens = 8192, .prefix_caching = true,
		.slo_ttft_ms = 2000.0, .slo_tpot_ms = 50.0, .slo_attainment_target = 0.9,
		.engine = {.profile = "vllm", .pp = 1, .max_model_len = 4096,
			   .gpu_memory_utilization = 0.9},
		.context = {.policy = "compact"},
		.tiers = {.n = 2, .host_gb = 100, .disk_gb = 1000, .host_gbs = 20, .disk_gbs = 2,
			  .shared_by = 1, .mode = "write_through", .chunk_tokens = 256,
			  .async_store = true},
		.retention = {.on = true, .ttl_s = 300, .max_fraction = 0.6, .peak_blocks = 10,
			      .peak_share = 0.01, .mean_blocks = 4.5, .hit_tokens = 160},
		.pd = {.on = true, .link = "infiniband", .decider = "uncached", .threshold = 16,
		       .remote = 3, .local = 1, .blocks = 40, .gb = 0.5, .wait_mean_ms = 4.5,
		       .wait_max_ms = 9, .transfer_s = 0.02},
	};
	return m;
}

struct run {
	struct charts charts;
	struct metrics *m;
	struct metrics_summary s;
	struct report_meta meta;
	char *json, *table;
	size_t json_len;
};

static int setup(void **state)
{
	struct run *r = calloc(1, sizeof(*r));
	assert_non_null(r);
	r->m = metrics_new();
	assert_non_null(r->m);
	struct res_sink sink = metrics_sink(r->m);
	small_run_feed(&sink);
	struct diag d;
	diag_init(&d);
	assert_int_equal(metrics_summarize(r->m, &r->s, &d), 0);
	r->meta = full_meta();
	assert_int_equal(charts_init(&r->charts, r->m, r->s.duration_s, &d), 0);
	r->meta.charts = &r->charts;
	FILE *f = open_memstream(&r->json, &r->json_len);
	assert_non_null(f);
	report_json_stream(f, &r->meta, &r->s);
	assert_int_equal(fclose(f), 0);
	size_t n;
	f = open_memstream(&r->table, &n);
	assert_non_null(f);
	report_table(f, &r->meta, &r->s);
	assert_int_equal(fclose(f), 0);
	*state = r;
	return 0;
}

static int teardown(void **state)
{
	struct run *r = *state;
	charts_release(&r->charts);
	metrics_free(r->m);
	free(r->json);
	free(r->table);
	free(r);
	return 0;
}

static bool is_run_field(int id)
{
	return id < RF_COMPLETED;
}

/* Every row is in the JSON, where it belongs, with its type; keys and
 * labels are not repeated. */
static void test_json_has_every_field(void **state)
{
	struct run *r = *state;
	cJSON *doc = cJSON_Parse(r->json);
	assert_non_null(doc);
	const cJSON *run = cJSON_GetObjectItemCaseSensitive(doc, "run");
	for (int id = 0; id < RF_N_FIELDS; id++) {
		const struct report_field *f = report_field((enum report_field_id)id);
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(is_run_field(id) ? run : doc, f->key);
		if (!v)
			fail_msg("field '%s' is not in the JSON", f->key);
		bool ok = f->type == RT_STR ? cJSON_IsString(v) || cJSON_IsNull(v)
			  : f->type == RT_BOOL ? cJSON_IsBool(v)
					       : cJSON_IsNumber(v);
		if (!ok)
			fail_msg("field '%s' has the wrong JSON type", f->key);
		assert_ptr_equal(report_field_find(f->key), f);
		for (int k = 0; k < id; k++) {
			const struct report_field *g = report_field((enum report_field_id)k);
			assert_string_not_equal(f->key, g->key);
		}
	}
	for (int id = 0; id < RST_N; id++) {
		const struct report_stats_field *st = report_stats_field((enum report_stats_id)id);
		char key[64];
		if (st->span)
			snprintf(key, sizeof(key), "%s_makespan_s_p95", st->name);
		else
			snprintf(key, sizeof(key), "p95_%s_ms", st->name);
		if (!cJSON_GetObjectItemCaseSensitive(doc, key))
			fail_msg("statistic '%s' is not in the JSON", key);
	}
	/* a field table row is read back exactly as the summary holds it */
	const struct report_field *hit = report_field(RF_HIT_RATE);
	assert_true(cJSON_GetObjectItemCaseSensitive(doc, hit->key)->valuedouble ==
		    r->s.prefix_cache_hit_rate);
	assert_true(report_field_num(hit, &r->meta, &r->s) == r->s.prefix_cache_hit_rate);
	assert_int_equal(report_field_int(report_field(RF_CACHED_GPU), &r->meta, &r->s),
			 r->s.cached_prompt_tokens - r->s.tier_cached_tokens[0] -
				 r->s.tier_cached_tokens[1]);
	cJSON_Delete(doc);
}

/* Every row with a label is in the terminal table (the peak hour only
 * when it has calls, as here). */
static void test_table_has_every_label(void **state)
{
	struct run *r = *state;
	for (int id = 0; id < RF_N_FIELDS; id++) {
		const struct report_field *f = report_field((enum report_field_id)id);
		if (!f->label)
			continue;
		char line[128];
		snprintf(line, sizeof(line), "\n%s ", f->label);
		if (!strstr(r->table, line))
			fail_msg("label '%s' (%s) is not in the table", f->label, f->key);
	}
}

/* The page of the JSON lists every measured figure by its label. */
static void test_html_lists_every_figure(void **state)
{
	struct run *r = *state;
	char *page = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&page, &n);
	assert_non_null(f);
	struct diag d;
	diag_init(&d);
	int rc = html_render(f, r->json, r->json_len, "fields", &d);
	assert_int_equal(fclose(f), 0);
	if (rc != 0)
		fail_msg("html_render: %s", d.msg);
	for (int id = RF_COMPLETED; id < RF_N_FIELDS; id++) {
		const struct report_field *fl = report_field((enum report_field_id)id);
		if (!fl->label)
			continue;
		char want[128];
		int len = snprintf(want, sizeof(want), "%s", fl->label);
		if (len > 0 && want[len - 1] == ':')
			want[len - 1] = '\0';
		if (!strstr(page, want))
			fail_msg("figure '%s' is not on the page", want);
	}
	free(page);
}

/* docs/metrics.md documents every key, in the order the JSON has them. */
static void test_docs_list_every_key_in_order(void **state)
{
	struct run *r = *state;
	FILE *f = fopen(AC_SRC_DIR "/docs/metrics.md", "r");
	assert_non_null(f);
	static char doc[1 << 18];
	size_t n = fread(doc, 1, sizeof(doc) - 1, f);
	fclose(f);
	doc[n] = '\0';
	const char *last = doc, *last_run = doc;
	cJSON *json = cJSON_Parse(r->json);
	assert_non_null(json);
	/* each key, backquoted, after the one before it in JSON order */
	for (int pass = 0; pass < 2; pass++) {
		const cJSON *obj = pass == 0 ? cJSON_GetObjectItemCaseSensitive(json, "run") : json;
		const cJSON *it;
		cJSON_ArrayForEach(it, obj)
		{
			const struct report_field *fl = report_field_find(it->string);
			if (!fl || is_run_field((int)(fl - report_field(0))) != (pass == 0))
				continue;
			char want[80];
			snprintf(want, sizeof(want), "`%s`", fl->key);
			const char *at = strstr(pass == 0 ? last_run : last, want);
			if (!at)
				fail_msg("docs/metrics.md: `%s` is missing, or out of the JSON's order",
					 fl->key);
			if (pass == 0)
				last_run = at;
			else
				last = at;
		}
	}
	for (int id = 0; id < RST_N; id++) {
		const struct report_stats_field *st = report_stats_field((enum report_stats_id)id);
		char want[80], keys[96];
		snprintf(want, sizeof(want), "`%s`", st->name);
		if (st->span)
			snprintf(keys, sizeof(keys), "`%s_makespan_s_{mean,median,p90,p95,p99}`",
				 st->name);
		else
			snprintf(keys, sizeof(keys), "`{mean,median,std,p90,p95,p99}_%s_ms`", st->name);
		if (!strstr(doc, want) && !strstr(doc, keys))
			fail_msg("docs/metrics.md: the statistics `%s` are not described", st->name);
	}
	cJSON_Delete(json);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_json_has_every_field),
		cmocka_unit_test(test_table_has_every_label),
		cmocka_unit_test(test_html_lists_every_figure),
		cmocka_unit_test(test_docs_list_every_key_in_order),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
