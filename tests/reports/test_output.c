/* SPDX-License-Identifier: Apache-2.0
 * Tests for reports/output: the JSON document parses back with every key in
 * the documented order and every number read back equal to the summary; the
 * same inputs give the same bytes; writing leaves no temporary file and fails
 * cleanly on a bad path; strings are escaped; the table has vllm's layout.
 */
#define _POSIX_C_SOURCE 200809L
#include "reports/output.h"

#include "base/diag.h"
#include "base/warn.h"
#include "reports/metrics.h"
#include "tests/reports/small_run.h"

#include <cJSON.h>
#include <dirent.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

static const char *const top_keys[] = {
	"schema_version", "schema", "run", "warnings", "warnings_dropped", "answer", "completed", "failed", "failed_reasons", "duration_s",
	"request_throughput", "output_throughput", "total_token_throughput",
	"good_requests", "request_goodput", "slo_attainment",
	"mean_ttft_ms", "median_ttft_ms", "std_ttft_ms", "p90_ttft_ms", "p95_ttft_ms", "p99_ttft_ms",
	"mean_tpot_ms", "median_tpot_ms", "std_tpot_ms", "p90_tpot_ms", "p95_tpot_ms", "p99_tpot_ms",
	"mean_itl_ms", "median_itl_ms", "std_itl_ms", "p90_itl_ms", "p95_itl_ms", "p99_itl_ms",
	"mean_e2el_ms", "median_e2el_ms", "std_e2el_ms", "p90_e2el_ms", "p95_e2el_ms", "p99_e2el_ms",
	"prompt_tokens", "output_tokens", "cached_prompt_tokens", "computed_prefill_tokens",
	"inflight_miss_tokens", "prefix_cache_hit_rate", "preemptions", "kv_evicted_blocks",
	"calls_compacted", "calls_truncated", "calls_over_max_model_len", "replicas",
	"gpu_busy_fraction", "compute_fraction", "compute_fraction_busy", "bandwidth_fraction",
	"bandwidth_fraction_busy", "batch_seqs_mean", "batch_occupancy", "batch_seqs_max",
	"kv_use_mean", "kv_use_peak", "peak_window_s", "peak_offset_s", "peak_calls",
	"peak_completed", "peak_failed", "peak_tokens", "peak_slo_attainment",
	"mean_peak_ttft_ms", "median_peak_ttft_ms", "std_peak_ttft_ms", "p90_peak_ttft_ms",
	"p95_peak_ttft_ms", "p99_peak_ttft_ms", "mean_peak_tpot_ms", "median_peak_tpot_ms",
	"std_peak_tpot_ms", "p90_peak_tpot_ms", "p95_peak_tpot_ms", "p99_peak_tpot_ms", "sessions",
	"session_calls_mean", "session_makespan_s_mean",
	"session_makespan_s_median", "session_makespan_s_p90", "session_makespan_s_p95",
	"session_makespan_s_p99", "tasks", "tasks_accepted", "tasks_accept_known",
	"task_makespan_s_mean", "task_makespan_s_median", "task_makespan_s_p90",
	"task_makespan_s_p95", "task_makespan_s_p99",
};

static const char *const run_keys[] = {
	"agentcap_version", "trace_path", "trace_format", "scenario_name", "scenario_path",
	"model_id", "hardware_id", "weight_format", "kv_cache_dtype", "engine_profile",
	"tensor_parallel_size", "pipeline_parallel_size", "gpu_memory_utilization", "max_model_len",
	"reserve_full_prompt", "context_policy", "seed", "kv_capacity_tokens", "block_size", "max_num_seqs", "max_num_batched_tokens",
	"enable_prefix_caching", "enable_chunked_prefill", "skipped_bad_lines",
	"events_processed", "engine_steps", "scaled_engineers", "scaled_days", "slo_ttft_ms", "slo_tpot_ms",
	"slo_attainment_target",
};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static struct report_meta fixture_meta(void)
{
	struct report_meta m = {
		.version = "0.1.0",
		.trace_path = "traces/team.jsonl.gz",
		.trace_format = "agentcap-trace",
		.scenario_name = "h100x2",
		.scenario_path = NULL,
		.model_id = "qwen3-coder-30b-a3b",
		.hardware_id = "h100-sxm-80g",
		.weight_format = "fp8",
		.kv_dtype = "fp8",
		.tp = 2,
		.seed = 18446744073709551615ULL,
		.kv_capacity_tokens = 812345,
		.block_size = 16,
		.max_num_seqs = 256,
		.max_num_batched_tokens = 8192,
		.prefix_caching = true,
		.chunked_prefill = false,
		.skipped_bad_lines = 2,
		.events_processed = 123456789,
		.engine_steps = 4567,
		.scaled_engineers = 300,
		.scaled_days = 5,
		.kv_evicted_blocks = 42,
		.slo_ttft_ms = 2000.0,
		.slo_tpot_ms = 0.0,
		.engine = {.profile = "vllm", .pp = 3, .max_model_len = 131072,
			   .gpu_memory_utilization = 0.85, .reserve_full_prompt = true},
		.context = {.policy = "compact", .compacted = 17, .truncated = 0, .too_long = 1},
		.slo_attainment_target = 0.9,
	};
	return m;
}

static struct metrics *small_metrics(struct metrics_summary *s)
{
	struct metrics *m = metrics_new();
	assert_non_null(m);
	struct res_sink sink = metrics_sink(m);
	small_run_feed(&sink);
	struct diag d;
	diag_init(&d);
	assert_int_equal(metrics_summarize(m, s, &d), 0);
	return m;
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	long n = ftell(f);
	assert_true(n >= 0);
	rewind(f);
	char *buf = malloc((size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	buf[n] = '\0';
	fclose(f);
	*len = (size_t)n;
	return buf;
}

struct tmpdir {
	char path[512];
};

static void tmpdir_make(struct tmpdir *t)
{
	snprintf(t->path, sizeof(t->path), "%s/reports_test_XXXXXX", AC_BIN_DIR);
	assert_non_null(mkdtemp(t->path));
}

static size_t tmpdir_entries(const struct tmpdir *t)
{
	DIR *dir = opendir(t->path);
	assert_non_null(dir);
	size_t n = 0;
	struct dirent *e;
	while ((e = readdir(dir)) != NULL)
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, ".."))
			n++;
	closedir(dir);
	return n;
}

static void tmpdir_remove(struct tmpdir *t, const char *const *names, size_t n)
{
	char p[600];
	for (size_t i = 0; i < n; i++) {
		snprintf(p, sizeof(p), "%s/%s", t->path, names[i]);
		unlink(p);
	}
	assert_int_equal(rmdir(t->path), 0);
}

static void check_number(const cJSON *doc, const char *key, double want)
{
	const cJSON *it = cJSON_GetObjectItemCaseSensitive(doc, key);
	if (!cJSON_IsNumber(it)) {
		print_error("key %s missing or not a number\n", key);
		fail();
	}
	if (it->valuedouble != want) {
		print_error("%s = %.17g, want %.17g\n", key, it->valuedouble, want);
		fail();
	}
}

static void check_stats(const cJSON *doc, const char *name, const struct metrics_stats *st)
{
	char key[64];
	const char *what[] = {"mean", "median", "std", "p90", "p95", "p99"};
	double v[] = {st->mean, st->median, st->std, st->p90, st->p95, st->p99};
	for (size_t i = 0; i < 6; i++) {
		snprintf(key, sizeof(key), "%s_%s_ms", what[i], name);
		check_number(doc, key, v[i]);
	}
}

static void check_makespan(const cJSON *doc, const char *name, const struct metrics_stats *st)
{
	char key[64];
	const char *what[] = {"mean", "median", "p90", "p95", "p99"};
	double v[] = {st->mean, st->median, st->p90, st->p95, st->p99};
	for (size_t i = 0; i < 5; i++) {
		snprintf(key, sizeof(key), "%s_makespan_s_%s", name, what[i]);
		check_number(doc, key, v[i]);
	}
}

static void check_key_order(const cJSON *obj, const char *const *keys, size_t n)
{
	size_t i = 0;
	for (const cJSON *it = obj->child; it; it = it->next, i++) {
		assert_true(i < n);
		assert_string_equal(it->string, keys[i]);
	}
	assert_int_equal(i, n);
}

static void test_json_parses_back(void **state)
{
	(void)state;
	struct metrics_summary s;
	struct metrics *m = small_metrics(&s);
	struct report_meta meta = fixture_meta();
	struct tmpdir t;
	tmpdir_make(&t);
	char path[600];
	snprintf(path, sizeof(path), "%s/run.json", t.path);
	struct diag d;
	diag_init(&d);
	assert_int_equal(report_json_write(path, &meta, &s, &d), 0);
	assert_int_equal(tmpdir_entries(&t), 1); /* no temporary file left */

	size_t len;
	char *text = slurp(path, &len);
	cJSON *doc = cJSON_Parse(text);
	assert_non_null(doc);
	check_key_order(doc, top_keys, COUNT(top_keys));
	const cJSON *run = cJSON_GetObjectItemCaseSensitive(doc, "run");
	assert_true(cJSON_IsObject(run));
	check_key_order(run, run_keys, COUNT(run_keys));

	check_number(doc, "schema_version", 1);
	check_number(doc, "completed", 3);
	check_number(doc, "failed", 3);
	const cJSON *reasons = cJSON_GetObjectItemCaseSensitive(doc, "failed_reasons");
	assert_true(cJSON_IsObject(reasons));
	const char *const reason_keys[] = {"prompt exceeds KV capacity", "unspecified"};
	check_key_order(reasons, reason_keys, 2);
	check_number(reasons, "prompt exceeds KV capacity", 2);
	check_number(reasons, "unspecified", 1);
	check_number(doc, "duration_s", s.duration_s);
	check_number(doc, "request_throughput", s.request_throughput);
	check_number(doc, "output_throughput", s.output_throughput);
	check_number(doc, "total_token_throughput", s.total_token_throughput);
	check_stats(doc, "ttft", &s.ttft_ms);
	check_stats(doc, "tpot", &s.tpot_ms);
	check_stats(doc, "itl", &s.itl_ms);
	check_stats(doc, "e2el", &s.e2el_ms);
	check_number(doc, "prompt_tokens", 3500);
	check_number(doc, "output_tokens", 16);
	check_number(doc, "cached_prompt_tokens", 1400);
	check_number(doc, "computed_prefill_tokens", 2300);
	check_number(doc, "inflight_miss_tokens", 150);
	check_number(doc, "prefix_cache_hit_rate", s.prefix_cache_hit_rate);
	check_number(doc, "preemptions", 3);
	check_number(doc, "kv_evicted_blocks", 42);
	check_number(doc, "calls_compacted", 17);
	check_number(doc, "calls_over_max_model_len", 1);
	check_number(doc, "replicas", 3);
	check_number(doc, "gpu_busy_fraction", s.gpu_busy_fraction);
	check_number(doc, "sessions", 2);
	check_number(doc, "session_calls_mean", 2);
	check_makespan(doc, "session", &s.session_makespan_s);
	check_number(doc, "tasks", 3);
	check_number(doc, "tasks_accepted", 1);
	check_number(doc, "tasks_accept_known", 2);
	check_makespan(doc, "task", &s.task_makespan_s);

	assert_string_equal(cJSON_GetObjectItemCaseSensitive(run, "model_id")->valuestring,
			    "qwen3-coder-30b-a3b");
	assert_true(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(run, "scenario_path")));
	assert_true(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(run, "slo_tpot_ms")));
	check_number(run, "slo_ttft_ms", 2000);
	check_number(run, "scaled_engineers", 300);
	check_number(run, "scaled_days", 5);
	check_number(run, "tensor_parallel_size", 2);
	check_number(run, "pipeline_parallel_size", 3);
	check_number(run, "max_model_len", 131072);
	check_number(run, "gpu_memory_utilization", 0.85);
	assert_string_equal(cJSON_GetObjectItemCaseSensitive(run, "engine_profile")->valuestring, "vllm");
	assert_string_equal(cJSON_GetObjectItemCaseSensitive(run, "context_policy")->valuestring, "compact");
	assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(run, "reserve_full_prompt")));
	assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(run, "enable_prefix_caching")));
	assert_true(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(run, "enable_chunked_prefill")));

	/* integers are written as integers, numbers in the shortest exact form */
	assert_non_null(strstr(text, "\n  \"schema_version\": 1,\n"));
	assert_non_null(strstr(text, "\n    \"seed\": 18446744073709551615,\n"));
	assert_non_null(strstr(text, "\n    \"events_processed\": 123456789,\n"));
	assert_non_null(strstr(text, "\n  \"completed\": 3,\n"));
	assert_non_null(strstr(text, "\n  \"duration_s\": 1.8,\n"));
	assert_non_null(strstr(text, "\n  \"prefix_cache_hit_rate\": 0.4,\n"));
	assert_non_null(strstr(text, "\n  \"p90_ttft_ms\": 280,\n"));
	assert_true(len > 2 && text[len - 2] == '}' && text[len - 1] == '\n');

	cJSON_Delete(doc);
	free(text);
	const char *const names[] = {"run.json"};
	tmpdir_remove(&t, names, 1);
	metrics_free(m);
}

static void test_json_deterministic(void **state)
{
	(void)state;
	struct metrics_summary s1, s2;
	struct metrics *m1 = small_metrics(&s1);
	struct metrics *m2 = small_metrics(&s2);
	struct report_meta meta = fixture_meta();
	struct tmpdir t;
	tmpdir_make(&t);
	char a[600], b[600];
	snprintf(a, sizeof(a), "%s/a.json", t.path);
	snprintf(b, sizeof(b), "%s/b.json", t.path);
	struct diag d;
	diag_init(&d);
	assert_int_equal(report_json_write(a, &meta, &s1, &d), 0);
	assert_int_equal(report_json_write(b, &meta, &s2, &d), 0);
	size_t la, lb;
	char *ta = slurp(a, &la);
	char *tb = slurp(b, &lb);
	assert_int_equal(la, lb);
	assert_memory_equal(ta, tb, la);
	free(tb);
	/* overwriting an existing file replaces it whole */
	assert_int_equal(report_json_write(b, &meta, &s1, &d), 0);
	tb = slurp(b, &lb);
	assert_int_equal(la, lb);
	assert_memory_equal(ta, tb, la);
	assert_int_equal(tmpdir_entries(&t), 2);
	free(ta);
	free(tb);
	const char *const names[] = {"a.json", "b.json"};
	tmpdir_remove(&t, names, 2);
	metrics_free(m1);
	metrics_free(m2);
}

static void test_json_bad_path(void **state)
{
	(void)state;
	struct metrics_summary s;
	memset(&s, 0, sizeof(s));
	struct report_meta meta = fixture_meta();
	struct diag d;
	diag_init(&d);
	const char *path = AC_BIN_DIR "/no-such-dir-for-reports/out.json";
	assert_int_equal(report_json_write(path, &meta, &s, &d), DIAG_EIO);
	assert_non_null(strstr(d.msg, path));
}

static void test_json_escapes(void **state)
{
	(void)state;
	struct metrics *m = metrics_new();
	assert_non_null(m);
	struct res_sink sink = metrics_sink(m);
	const char *odd = "say \"hi\"\\ tab\there\nline\x01 \x7f caf\xc3\xa9";
	struct res_request r = {.status = RES_REJECTED, .reason = odd, .replica = -1};
	sink.request(sink.ctx, &r);
	struct metrics_summary s;
	struct diag d;
	diag_init(&d);
	assert_int_equal(metrics_summarize(m, &s, &d), 0);
	struct report_meta meta = fixture_meta();
	meta.trace_path = odd;
	meta.version = NULL;

	struct tmpdir t;
	tmpdir_make(&t);
	char path[600];
	snprintf(path, sizeof(path), "%s/odd.json", t.path);
	assert_int_equal(report_json_write(path, &meta, &s, &d), 0);
	size_t len;
	char *text = slurp(path, &len);
	assert_non_null(strstr(text, "\\u0001"));
	cJSON *doc = cJSON_Parse(text);
	assert_non_null(doc);
	const cJSON *run = cJSON_GetObjectItemCaseSensitive(doc, "run");
	assert_string_equal(cJSON_GetObjectItemCaseSensitive(run, "trace_path")->valuestring, odd);
	assert_true(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(run, "agentcap_version")));
	const cJSON *reasons = cJSON_GetObjectItemCaseSensitive(doc, "failed_reasons");
	assert_non_null(reasons->child);
	assert_string_equal(reasons->child->string, odd);
	/* nothing completed: every latency is 0, the object stays complete */
	check_key_order(doc, top_keys, COUNT(top_keys));
	check_number(doc, "mean_ttft_ms", 0);
	check_number(doc, "sessions", 0);
	cJSON_Delete(doc);
	free(text);
	const char *const names[] = {"odd.json"};
	tmpdir_remove(&t, names, 1);
	metrics_free(m);
}

static char *table_text(const struct report_meta *meta, const struct metrics_summary *s)
{
	FILE *f = tmpfile();
	assert_non_null(f);
	report_table(f, meta, s);
	assert_false(ferror(f));
	long n = ftell(f);
	assert_true(n > 0);
	rewind(f);
	char *buf = malloc((size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static void test_table(void **state)
{
	(void)state;
	struct metrics_summary s;
	struct metrics *m = small_metrics(&s);
	struct report_meta meta = fixture_meta();
	char *text = table_text(&meta, &s);
	const char *lines[] = {
		"================== agentcap run ==================\n",
		"\nModel:                                   qwen3-coder-30b-a3b\n",
		"\nSeed:                                    18446744073709551615\n",
		"\nSLO TTFT (ms):                           2000.00\n",
		"\nPrefix caching:                          on\n",
		"\nChunked prefill:                         off\n",
		"\n============ Serving Benchmark Result ============\n"
		"Successful requests:                     3\n"
		"Failed requests:                         3\n"
		"  prompt exceeds KV capacity:            2\n"
		"  unspecified:                           1\n"
		"Latency percentiles cover:               completed requests only\n"
		"Benchmark duration (s):                  1.80\n"
		"Total input tokens:                      3500\n"
		"Total generated tokens:                  16\n"
		"Request throughput (req/s):              1.67\n"
		"Output token throughput (tok/s):         8.89\n"
		"Total Token throughput (tok/s):          1953.33\n"
		"Request goodput (req/s):                 1.67\n"
		"SLO attainment (%):                      50.00\n"
		"SLO attainment target (%):               90.00\n"
		"---------------Time to First Token----------------\n"
		"Mean TTFT (ms):                          200.00\n"
		"Median TTFT (ms):                        200.00\n"
		"P90 TTFT (ms):                           280.00\n"
		"P95 TTFT (ms):                           290.00\n"
		"P99 TTFT (ms):                           298.00\n"
		"-----Time per Output Token (excl. 1st token)------\n"
		"Mean TPOT (ms):                          90.00\n",
		"\n---------------Inter-token Latency----------------\n"
		"Mean ITL (ms):                           23.33\n",
		"\n----------------End-to-end Latency----------------\n",
		"\nPrefix cache hit rate (%):               40.00\n",
		"\nPreemptions:                             3\n",
		"\nReplicas:                                3\n"
		"Time a step was running (%):             33.33\n",
		"\n-------------Utilisation and Headroom-------------\n",
		"\n------------Peak Hour (whole run: 2 s)------------\n"
		"Starts after the first call (s):         0.00\n"
		"Calls arriving:                          6\n"
		"Failed calls:                            3\n",
		"\nCalls per session (mean):                2.00\n",
		"\nMean session makespan (s):               1.25\n",
		"\nTasks accepted:                          1\n",
		"\nP90 task makespan (s):                   1.80\n"
		"P95 task makespan (s):                   1.90\n"
		"P99 task makespan (s):                   1.98\n"
		"==================================================\n",
	};
	for (size_t i = 0; i < COUNT(lines); i++) {
		if (!strstr(text, lines[i])) {
			print_error("missing:\n%s\nin:\n%s\n", lines[i], text);
			fail();
		}
	}
	assert_null(strstr(text, "SLO TPOT"));
	assert_null(strstr(text, " \n")); /* no trailing blanks */
	free(text);

	/* No sessions or tasks: those sections are left out; NULL strings show "-". */
	struct metrics_summary empty;
	memset(&empty, 0, sizeof(empty));
	meta.trace_path = NULL;
	text = table_text(&meta, &empty);
	assert_non_null(strstr(text, "\nTrace:                                   -\n"));
	assert_null(strstr(text, "Sessions"));
	assert_null(strstr(text, "Tasks"));
	assert_non_null(strstr(text, "\nSuccessful requests:                     0\n"));
	free(text);
	metrics_free(m);
}

/* The step model's error bars: shown in the table and under "run" when
 * set, absent otherwise (the fixture has none). */
static void test_model_bands(void **state)
{
	(void)state;
	struct metrics_summary s;
	struct metrics *m = small_metrics(&s);
	struct report_meta meta = fixture_meta();
	char *text = table_text(&meta, &s);
	assert_null(strstr(text, "Model 80% band"));
	free(text);
	meta.bands = (struct report_bands){
		.coverage = 0.8, .commit = "abc1234", .throughput_pct = 8.125, .ttft_pct = 40,
		.tpot_pct = 14.25, .throughput_regime = "fam x any x output_throughput_tok_s",
		.ttft_regime = "any x any x any", .tpot_regime = "fam x eng x tpot_ms" };
	text = table_text(&meta, &s);
	assert_non_null(strstr(text, "\nModel 80% band, throughput:              +-8.1% (fam x any x "
				     "output_throughput_tok_s)\n"
				     "Model 80% band, TTFT:                    +-40.0% (any x any x any)\n"
				     "Model 80% band, TPOT:                    +-14.2% (fam x eng x "
				     "tpot_ms)\n"));
	free(text);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	report_json_stream(f, &meta, &s);
	fclose(f);
	cJSON *doc = cJSON_Parse(buf);
	assert_non_null(doc);
	const cJSON *run = cJSON_GetObjectItemCaseSensitive(doc, "run");
	const cJSON *b = cJSON_GetObjectItemCaseSensitive(run, "model_bands");
	assert_true(cJSON_IsObject(b));
	/* last in "run", after the keys every report has */
	assert_ptr_equal(b->next, NULL);
	static const char *const keys[] = { "coverage", "calibration_commit",
		"output_throughput_pct", "output_throughput_regime", "ttft_pct", "ttft_regime",
		"tpot_pct", "tpot_regime", "extrapolation" };
	check_key_order(b, keys, COUNT(keys));
	check_number(b, "tpot_pct", 14.25);
	assert_string_equal(cJSON_GetObjectItem(b, "ttft_regime")->valuestring, "any x any x any");
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(b, "extrapolation")));
	cJSON_Delete(doc);
	free(buf);
	/* a shape outside the calibration set's coverage says so */
	meta.bands.extrapolation = "package multi-die, engine vllm";
	text = table_text(&meta, &s);
	assert_non_null(strstr(text, "\nModel extrapolates to:                   package multi-die, "
				     "engine vllm (no calibration row; bands widened)\n"));
	free(text);
	metrics_free(m);
}

static void test_human_duration(void **state)
{
	(void)state;
	char b[48];
	report_human_duration(b, sizeof(b), 59.4);
	assert_string_equal(b, "");
	report_human_duration(b, sizeof(b), 60);
	assert_string_equal(b, "1 min 00 s");
	report_human_duration(b, sizeof(b), 225.16);
	assert_string_equal(b, "3 min 45 s");
	report_human_duration(b, sizeof(b), 8280.4);
	assert_string_equal(b, "2 h 18 min");
	report_human_duration(b, sizeof(b), 3 * 86400.0 + 3600 + 120);
	assert_string_equal(b, "3 d 01 h 02 min");
	report_human_duration(b, sizeof(b), NAN);
	assert_string_equal(b, "");
}

/* Failed calls and SLO attainment below target are loud: warnings that say
 * how many, why, what to change and that percentiles cover completed calls
 * only, printed before anything else, and under "warnings" in JSON. */
static void test_warnings(void **state)
{
	(void)state;
	struct metrics_summary s;
	struct metrics *m = small_metrics(&s); /* 3 completed, 3 failed, 50% attainment */
	struct report_meta meta = fixture_meta();
	assert_true(report_answer_no(&meta, &s));
	struct warn_list w;
	warn_list_init(&w);
	report_run_warnings(&meta, &s, &w);
	assert_int_equal(w.count, 4); /* failed_calls, two reasons, slo_attainment */
	assert_string_equal(w.items[0].code, "failed_calls");
	assert_non_null(strstr(w.items[0].msg, "3 of 6 calls failed (50.0%)"));
	assert_non_null(strstr(w.items[0].msg, "cover the 3 completed calls only"));
	assert_string_equal(w.items[1].code, "failed_reason");
	assert_non_null(strstr(w.items[1].msg, "2 calls: prompt exceeds KV capacity"));
	assert_non_null(strstr(w.items[1].msg, "tensor_parallel_size"));
	assert_string_equal(w.items[3].code, "slo_attainment");
	assert_non_null(strstr(w.items[3].msg, "50.0% is below the target 90.0%"));
	meta.warnings = &w;

	char *text = table_text(&meta, &s);
	assert_true(strncmp(text, "!!!!!!!!!!!!!!!!!!!! WARNINGS !!!!!!!!!!!!!!!!!!!!\n! 3 of 6 calls failed",
			    strlen("!!!!!!!!!!!!!!!!!!!! WARNINGS !!!!!!!!!!!!!!!!!!!!\n! 3 of 6 calls failed")) == 0);
	assert_true(strstr(text, "! 3 of 6") < strstr(text, "agentcap run"));
	for (const char *line = text; *line; line = strchr(line, '\n') + 1) {
		const char *end = strchr(line, '\n');
		assert_true(end - line <= 78); /* wrapped */
	}
	free(text);

	struct tmpdir t;
	tmpdir_make(&t);
	char path[600];
	snprintf(path, sizeof(path), "%s/run.json", t.path);
	struct diag d;
	diag_init(&d);
	assert_int_equal(report_json_write(path, &meta, &s, &d), 0);
	size_t json_len;
	char *json = slurp(path, &json_len);
	cJSON *doc = cJSON_Parse(json);
	assert_non_null(doc);
	const cJSON *arr = cJSON_GetObjectItemCaseSensitive(doc, "warnings");
	assert_true(cJSON_IsArray(arr));
	assert_int_equal(cJSON_GetArraySize(arr), 4);
	const cJSON *first = cJSON_GetArrayItem(arr, 0);
	assert_string_equal(cJSON_GetObjectItemCaseSensitive(first, "code")->valuestring, "failed_calls");
	assert_string_equal(cJSON_GetObjectItemCaseSensitive(first, "message")->valuestring, w.items[0].msg);
	assert_string_equal(cJSON_GetObjectItemCaseSensitive(doc, "answer")->valuestring, "no");
	cJSON_Delete(doc);
	free(json);
	const char *const names[] = {"run.json"};
	tmpdir_remove(&t, names, 1);

	/* A clean run: no warning, the answer is yes. */
	struct metrics_summary ok = s;
	ok.failed = 0;
	ok.n_failed_reasons = 0;
	ok.slo_attainment = 0.95;
	warn_list_init(&w);
	report_run_warnings(&meta, &ok, &w);
	assert_int_equal(w.count, 0);
	assert_false(report_answer_no(&meta, &ok));
	text = table_text(&meta, &ok);
	assert_null(strstr(text, "WARNINGS"));
	assert_null(strstr(text, "Latency percentiles cover"));
	free(text);
	metrics_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_warnings),
		cmocka_unit_test(test_json_parses_back),
		cmocka_unit_test(test_human_duration),
		cmocka_unit_test(test_json_deterministic),
		cmocka_unit_test(test_json_bad_path),
		cmocka_unit_test(test_json_escapes),
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_model_bands),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
