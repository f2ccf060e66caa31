/* SPDX-License-Identifier: Apache-2.0
 * `replay --csv`: one row per call, the percentiles of its TTFT, TPOT and
 * E2E columns equal those of the JSON report, rows come as calls finish,
 * and a CSV that cannot be written leaves the table, the JSON and any
 * previous file alone. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "tests/support/cli_run.h"

#include <cjson/cJSON.h>
#include <csv.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FIX AC_SRC_DIR "/tests/fixtures/traces"

enum { C_SESSION, C_TASK, C_CALL, C_REPLICA, C_ARRIVAL, C_ROUTER, C_QUEUE, C_TTFT, C_TPOT, C_E2E,
       C_PROMPT, C_CACHED, C_COMPUTED, C_OUTPUT, C_PREEMPT, C_OUTCOME, C_REASON, N_COLS };

static const char *const HEADER[N_COLS] = {
	"session", "task", "call", "replica", "arrival_ms", "router_wait_ms", "queue_ms", "ttft_ms",
	"tpot_ms", "e2e_ms", "prompt_tokens", "cached_tokens", "computed_prefill_tokens",
	"output_tokens", "preemptions", "outcome", "reason"};

#define MAX_ROWS 4096

/* The table as libcsv reads it: every field of every row as text. */
struct table {
	char *cell[MAX_ROWS + 1][N_COLS];
	int rows;  /* including the header */
	int col;
	int bad;   /* rows with a wrong number of fields */
};

static void on_field(void *s, size_t n, void *ctx)
{
	struct table *t = ctx;
	if (t->rows <= MAX_ROWS && t->col < N_COLS)
		t->cell[t->rows][t->col] = strndup(s ? s : "", n);
	t->col++;
}

static void on_row(int c, void *ctx)
{
	(void)c;
	struct table *t = ctx;
	t->bad += t->col != N_COLS;
	t->col = 0;
	t->rows++;
}

static struct table *read_table(const char *path)
{
	size_t len;
	char *text = cli_slurp(path, &len);
	assert_non_null(text);
	struct table *t = calloc(1, sizeof(*t));
	struct csv_parser p;
	assert_int_equal(csv_init(&p, CSV_STRICT | CSV_APPEND_NULL), 0);
	assert_int_equal(csv_parse(&p, text, len, on_field, on_row, t), len);
	assert_int_equal(csv_fini(&p, on_field, on_row, t), 0);
	csv_free(&p);
	free(text);
	assert_int_equal(t->bad, 0);
	assert_true(t->rows <= MAX_ROWS);
	for (int c = 0; c < N_COLS; c++)
		assert_string_equal(t->cell[0][c], HEADER[c]);
	return t;
}

static void table_free(struct table *t)
{
	for (int r = 0; r < t->rows; r++)
		for (int c = 0; c < N_COLS; c++)
			free(t->cell[r][c]);
	free(t);
}

static double num(const cJSON *j, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, key);
	if (!cJSON_IsNumber(v))
		fail_msg("JSON has no number %s", key);
	return v->valuedouble;
}

/* The column's non-empty values of completed rows, in *n. */
static double *column(const struct table *t, int col, size_t *n)
{
	double *v = calloc((size_t)t->rows, sizeof(*v));
	*n = 0;
	for (int r = 1; r < t->rows; r++)
		if (strcmp(t->cell[r][C_OUTCOME], "completed") == 0 && t->cell[r][col][0])
			v[(*n)++] = strtod(t->cell[r][col], NULL);
	return v;
}

/* Mean and percentiles of one column against the JSON's NAME keys; the CSV
 * holds times to the nanosecond, TPOT to 1e-9 ms, so they agree to that. */
static void check_stats(const struct table *t, int col, const cJSON *j, const char *name)
{
	size_t n;
	double *v = column(t, col, &n);
	assert_true(n > 0);
	gsl_sort(v, 1, n);
	static const struct { const char *pre; double p; } ps[] = {
		{"median", 0.5}, {"p90", 0.9}, {"p95", 0.95}, {"p99", 0.99}};
	char key[64];
	for (size_t i = 0; i < sizeof(ps) / sizeof(ps[0]); i++) {
		snprintf(key, sizeof(key), "%s_%s_ms", ps[i].pre, name);
		double want = num(j, key), got = gsl_stats_quantile_from_sorted_data(v, 1, n, ps[i].p);
		if (fabs(got - want) > 1e-8 * fmax(1.0, fabs(want)))
			fail_msg("%s: %.12g from the CSV, %.12g in the JSON", key, got, want);
	}
	snprintf(key, sizeof(key), "mean_%s_ms", name);
	double mean = gsl_stats_mean(v, 1, n), want = num(j, key);
	if (fabs(mean - want) > 1e-8 * fmax(1.0, fabs(want)))
		fail_msg("%s: %.12g from the CSV, %.12g in the JSON", key, mean, want);
	free(v);
}

/* Run replay ARGS with --csv and --json into a fresh folder; check the
 * CSV against the JSON.  Returns the number of rows with router waits. */
static int replay_and_compare(const char *args)
{
	char dir[] = "/tmp/agentcap-csv-XXXXXX";
	assert_non_null(mkdtemp(dir));
	char cmd[1024], csv[300], json[300];
	snprintf(csv, sizeof(csv), "%s/r.csv", dir);
	snprintf(json, sizeof(json), "%s/r.json", dir);
	snprintf(cmd, sizeof(cmd), "replay %s --quiet --csv %s --json %s", args, csv, json);
	struct cli_out r = cli_run(cmd);
	if (r.status != 0 && r.status != 1)
		fail_msg("agentcap %s: exit %d, stderr: %s", cmd, r.status, r.err);
	cli_out_free(&r);
	char *jtext = cli_slurp(json, NULL);
	cJSON *j = cJSON_Parse(jtext);
	assert_non_null(j);
	struct table *t = read_table(csv);

	/* one row per call: completed and failed */
	assert_int_equal(t->rows - 1, (int)(num(j, "completed") + num(j, "failed")));
	int completed = 0, waited = 0;
	double last_done = -1.0;
	for (int i = 1; i < t->rows; i++) {
		char **row = t->cell[i];
		if (strcmp(row[C_OUTCOME], "completed") != 0) {
			assert_string_equal(row[C_OUTCOME], "rejected");
			assert_true(row[C_REASON][0] != '\0');
			continue;
		}
		completed++;
		double arrival = strtod(row[C_ARRIVAL], NULL), wait = strtod(row[C_ROUTER], NULL),
		       queue = strtod(row[C_QUEUE], NULL), ttft = strtod(row[C_TTFT], NULL),
		       e2e = strtod(row[C_E2E], NULL);
		waited += wait > 0.0;
		/* the router's wait and the replica's queue come before token 1 */
		assert_true(wait >= 0.0 && queue >= 0.0);
		assert_true(wait + queue <= ttft + 1e-6);
		assert_true(ttft <= e2e);
		/* streamed as calls finish: completion times never go back */
		assert_true(arrival + e2e >= last_done - 1e-6);
		last_done = arrival + e2e;
		assert_true(atoll(row[C_CACHED]) <= atoll(row[C_PROMPT]));
	}
	assert_int_equal(completed, (int)num(j, "completed"));
	check_stats(t, C_TTFT, j, "ttft");
	check_stats(t, C_TPOT, j, "tpot");
	check_stats(t, C_E2E, j, "e2el");
	table_free(t);
	cJSON_Delete(j);
	free(jtext);
	unlink(csv);
	unlink(json);
	rmdir(dir);
	return waited;
}

static void test_csv_matches_json(void **state)
{
	(void)state;
	replay_and_compare(FIX "/session_good.jsonl");
	/* open loop on two replicas whose router holds calls back: the router
	 * wait column is not always zero */
	int waited = replay_and_compare(FIX "/mooncake_head200.jsonl --set replicas=2 "
					"--set router.max_outstanding=4");
	assert_true(waited > 0);
}

/* A CSV that cannot be written: exit 2 naming it, the previous file as it
 * was, no temporary file, and the table still printed. */
static void test_csv_write_fails(void **state)
{
	(void)state;
	char dir[] = "/tmp/agentcap-csv-XXXXXX";
	assert_non_null(mkdtemp(dir));
	char cmd[1024];
	snprintf(cmd, sizeof(cmd), "cd %s && echo previous >r.csv && (ulimit -f 1; %s/cli/agentcap "
		 "replay %s/mooncake_head200.jsonl --csv r.csv; echo $? >rc) 2>err | cat >table", dir,
		 AC_BIN_DIR, FIX);
	(void)!system(cmd);
	char path[400];
	snprintf(path, sizeof(path), "%s/rc", dir);
	char *rc = cli_slurp(path, NULL);
	snprintf(path, sizeof(path), "%s/err", dir);
	char *err = cli_slurp(path, NULL);
	snprintf(path, sizeof(path), "%s/table", dir);
	char *table = cli_slurp(path, NULL);
	snprintf(path, sizeof(path), "%s/r.csv", dir);
	char *prev = cli_slurp(path, NULL);
	if (strcmp(rc, "2\n") != 0 || !strstr(err, "r.csv: write failed: File too large") ||
	    strstr(err, "answer is no") ||
	    !strstr(table, "Successful requests:"))
		fail_msg("replay --csv past the size limit: exit %s, stderr: %s", rc, err);
	assert_string_equal(prev, "previous\n");
	free(rc);
	free(err);
	free(table);
	free(prev);
	snprintf(cmd, sizeof(cmd), "ls %s | grep -q tmp", dir);
	assert_int_not_equal(system(cmd), 0);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_csv_matches_json),
		cmocka_unit_test(test_csv_write_fails),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
