/* SPDX-License-Identifier: Apache-2.0
 * End-to-end tests of `agentcap replay` on several replicas: the cluster
 * section of the JSON and the table, GPU-hours, the router's queue limit
 * reported as failures with their reason, and scenario errors; replicas
 * that fail, and an autoscaler that scales to zero. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "tests/support/cli_run.h"

#include <cjson/cJSON.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FIX AC_SRC_DIR "/tests/fixtures"
#define MOONCAKE200 FIX "/traces/mooncake_head200.jsonl"

static cJSON *run_json(const char *extra)
{
	char args[2048];
	snprintf(args, sizeof(args), "replay " MOONCAKE200 " --json - %s", extra);
	struct cli_out r = cli_run(args);
	if (r.status != 0 && r.status != 1)
		fail_msg("agentcap %s: %s", args, r.err);
	cJSON *j = cJSON_Parse(r.out);
	assert_non_null(j);
	/* exit status 1 exactly when the report's answer is no */
	const cJSON *answer = cJSON_GetObjectItemCaseSensitive(j, "answer");
	assert_true(cJSON_IsString(answer));
	assert_int_equal(r.status, strcmp(answer->valuestring, "no") == 0 ? 1 : 0);
	cli_out_free(&r);
	return j;
}

static double num(const cJSON *j, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, key);
	if (!cJSON_IsNumber(v))
		fail_msg("no number '%s' in the JSON report", key);
	return v->valuedouble;
}

static void test_cluster_section(void **state)
{
	(void)state;
	cJSON *j = run_json("--set replicas=4 --set tensor_parallel_size=2");
	const cJSON *c = cJSON_GetObjectItemCaseSensitive(j, "cluster");
	assert_non_null(c);
	assert_int_equal(num(j, "replicas"), 4);
	assert_int_equal(num(c, "gpus_per_replica"), 2);
	double dur = num(j, "duration_s");
	assert_true(fabs(num(c, "gpu_hours_provisioned") - 4 * 2 * dur / 3600.0) < 1e-12);
	const cJSON *rt = cJSON_GetObjectItemCaseSensitive(c, "router");
	/* the default router: the SGLang model gateway's cache-aware policy */
	assert_string_equal(cJSON_GetObjectItemCaseSensitive(rt, "policy")->valuestring,
			    "sglang_smg_v1.9_approx");
	assert_int_equal(num(rt, "routed"), 200);
	assert_int_equal(num(rt, "queued"), 0);
	const cJSON *per = cJSON_GetObjectItemCaseSensitive(c, "per_replica");
	assert_int_equal(cJSON_GetArraySize(per), 4);
	double busy_s = 0, cached = 0;
	int64_t reqs = 0;
	for (int i = 0; i < 4; i++) {
		const cJSON *p = cJSON_GetArrayItem(per, i);
		assert_int_equal(num(p, "replica"), i);
		reqs += (int64_t)num(p, "requests");
		busy_s += num(p, "busy_s");
		cached += num(p, "cached_prompt_tokens");
		assert_true(fabs(num(p, "busy_fraction") - num(p, "busy_s") / dur) < 1e-12);
	}
	assert_int_equal(reqs, num(j, "completed"));
	assert_true(cached == num(j, "cached_prompt_tokens"));
	assert_null(cJSON_GetObjectItemCaseSensitive(j, "timeseries")); /* off by default */
	assert_true(fabs(num(c, "gpu_hours_busy") - 2 * busy_s / 3600.0) < 1e-9);
	/* the busy fraction of the whole run is the replicas' mean */
	assert_true(fabs(num(j, "gpu_busy_fraction") - busy_s / (4 * dur)) < 1e-9);
	cJSON_Delete(j);

	/* one replica: no cluster section, as before replicas existed */
	j = run_json("");
	assert_null(cJSON_GetObjectItemCaseSensitive(j, "cluster"));
	cJSON_Delete(j);
}

static double arr_sum(const cJSON *o, const char *key)
{
	const cJSON *a = cJSON_GetObjectItemCaseSensitive(o, key);
	if (!cJSON_IsArray(a))
		fail_msg("no array '%s' in the time series", key);
	double s = 0.0;
	const cJSON *v;
	cJSON_ArrayForEach(v, a)
		s += v->valuedouble;
	return s;
}

/* report.interval_s: the time series adds up to the run's own counts, per
 * replica to the router's and the cluster section's, and each replica's
 * busy fractions to its summed step time. */
static void test_timeseries_adds_up(void **state)
{
	(void)state;
	cJSON *j = run_json("--set replicas=3 --set router.policy=least_requests "
			    "--set router.max_outstanding=2 --set report.interval_s=5");
	const cJSON *ts = cJSON_GetObjectItemCaseSensitive(j, "timeseries");
	assert_non_null(ts);
	int64_t n = (int64_t)num(ts, "samples");
	assert_true(n > 10);
	assert_true(num(ts, "interval_s") == 5);
	const cJSON *t = cJSON_GetObjectItemCaseSensitive(ts, "t_s");
	assert_int_equal(cJSON_GetArraySize(t), n);
	for (int64_t k = 0; k < n; k++)
		assert_true(cJSON_GetArrayItem(t, (int)k)->valuedouble == 5.0 * (double)(k + 1));
	assert_true(arr_sum(ts, "arrivals") == 200);
	assert_true(arr_sum(ts, "completions") == num(j, "completed"));
	assert_true(arr_sum(ts, "failed") == num(j, "failed"));
	assert_true(arr_sum(ts, "replicas_up") == 3.0 * (double)n);
	assert_true(arr_sum(ts, "router_queue") > 0); /* max_outstanding 2 makes calls wait */
	const cJSON *per = cJSON_GetObjectItemCaseSensitive(ts, "per_replica");
	const cJSON *cper = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(j, "cluster"),
							      "per_replica");
	assert_int_equal(cJSON_GetArraySize(per), 3);
	for (int i = 0; i < 3; i++) {
		const cJSON *p = cJSON_GetArrayItem(per, i), *c = cJSON_GetArrayItem(cper, i);
		assert_true(arr_sum(p, "arrivals") == num(c, "routed"));
		assert_true(arr_sum(p, "completions") == num(c, "requests"));
		assert_true(fabs(5.0 * arr_sum(p, "busy_fraction") - num(c, "busy_s")) < 1e-6);
		/* at most two calls on a replica, none left at the end */
		const cJSON *w = cJSON_GetObjectItemCaseSensitive(p, "running");
		const cJSON *v;
		cJSON_ArrayForEach(v, w)
			assert_true(v->valuedouble >= 0 && v->valuedouble <= 2);
		assert_true(cJSON_GetArrayItem(w, (int)n - 1)->valuedouble == 0);
	}
	cJSON_Delete(j);

	/* a replica down for a minute from 20 s, then starting again: the
	 * series says so sample by sample */
	j = run_json("--set replicas=4 --set report.interval_s=5 "
		     "--set 'faults.list=[{\"replica\":1,\"at_s\":20,\"repair_s\":60}]'");
	ts = cJSON_GetObjectItemCaseSensitive(j, "timeseries");
	n = (int64_t)num(ts, "samples");
	assert_true(arr_sum(ts, "replicas_down") == 12.0); /* samples at 25 .. 80 s */
	const cJSON *up1 = cJSON_GetObjectItemCaseSensitive(
		cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(ts, "per_replica"), 1), "up");
	assert_true(cJSON_GetArrayItem(up1, 3)->valuedouble == 1); /* t = 20 s: not yet */
	assert_true(cJSON_GetArrayItem(up1, 4)->valuedouble == 0); /* t = 25 s: down */
	double starting = arr_sum(ts, "replicas_starting");
	assert_true(starting > 0);
	assert_true(arr_sum(ts, "replicas_up") + arr_sum(ts, "replicas_down") + starting ==
		    4.0 * (double)n);
	assert_true(arr_sum(ts, "arrivals") == 200);
	cJSON_Delete(j);

	/* one replica: the same keys */
	j = run_json("--set report.interval_s=60");
	ts = cJSON_GetObjectItemCaseSensitive(j, "timeseries");
	assert_non_null(ts);
	assert_true(arr_sum(ts, "completions") == num(j, "completed"));
	cJSON_Delete(j);

	struct cli_out r = cli_run("replay " MOONCAKE200 " --set report.interval_s=0.0001");
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "report.interval_s: expected 0 (off) or a number in [0.001, 1000000000]"));
	cli_out_free(&r);
}

static void test_router_queue_limit_fails_calls_with_reason(void **state)
{
	(void)state;
	cJSON *j = run_json("--set replicas=2 --set router.policy=least_requests "
			    "--set router.max_outstanding=2 --set router.queue_limit=3");
	const cJSON *c = cJSON_GetObjectItemCaseSensitive(j, "cluster");
	const cJSON *rt = cJSON_GetObjectItemCaseSensitive(c, "router");
	int64_t refused = (int64_t)num(rt, "refused");
	assert_true(refused > 0);
	assert_int_equal(num(j, "failed"), refused);
	assert_int_equal(num(j, "completed") + num(j, "failed"), 200);
	const cJSON *why = cJSON_GetObjectItemCaseSensitive(j, "failed_reasons");
	assert_int_equal(num(why, "router queue full (router.queue_limit)"), refused);
	assert_true(num(rt, "queued") > 0 && num(rt, "queue_peak") == 3);
	assert_true(num(rt, "wait_max_ms") > 0);
	cJSON_Delete(j);
}

static void test_cluster_table_and_errors(void **state)
{
	(void)state;
	struct cli_out r = cli_run("replay " MOONCAKE200 " --set replicas=3 --set router.policy=prefix_aware");
	assert_int_equal(r.status, 1); /* three H100s still miss the SLO: the answer is no */
	assert_non_null(strstr(r.out, "Cluster"));
	assert_non_null(strstr(r.out, "prefix_aware"));
	assert_non_null(strstr(r.out, "GPU-hours provisioned:"));
	cli_out_free(&r);
	r = cli_run("replay " MOONCAKE200 " --set router.policy=random");
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "router.policy: unknown 'random' (expected one of round_robin, "
				      "least_requests, least_tokens, power_of_two, session_affinity, "
				      "prefix_aware, sglang_smg_v1.9_approx, sglang_smg_v1.9_exact, "
				      "llmd_v0.10_approx, llmd_v0.10_precise, dynamo_v1.0_kv, least_time)"));
	cli_out_free(&r);
	/* the named routers' settings: out of range, the key and its range */
	static const struct {
		const char *set, *want;
	} BAD[] = {
		{"router.kv_weight=-1", "router.kv_weight: expected a number in [0, 1000000]"},
		{"router.queue_weight=2e6", "router.queue_weight: expected a number in [0, 1000000]"},
		{"router.overlap_weight=-0.5", "router.overlap_weight: expected a number in [0, 1000000]"},
		{"router.temperature=1001", "router.temperature: expected a number in [0, 1000]"},
		{"router.scrape_interval_ms=-1",
		 "router.scrape_interval_ms: expected a number in [0, 1000000000]"},
		{"router.max_tree_tokens=0",
		 "router.max_tree_tokens: expected an integer in [1, 1000000000000]"},
	};
	for (size_t i = 0; i < sizeof(BAD) / sizeof(BAD[0]); i++) {
		char cmd[256];
		snprintf(cmd, sizeof(cmd), "replay " MOONCAKE200 " --set %s", BAD[i].set);
		r = cli_run(cmd);
		assert_int_equal(r.status, 2);
		if (!strstr(r.err, BAD[i].want))
			fail_msg("--set %s: %s (want %s)", BAD[i].set, r.err, BAD[i].want);
		cli_out_free(&r);
	}
	r = cli_run("replay " MOONCAKE200 " --set replicas=0");
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "replicas: expected an integer in [1, 4096]"));
	cli_out_free(&r);
	r = cli_run("replay " MOONCAKE200 " --set autoscale.policy=cooldown "
		    "--set autoscale.metric_lag_s=5");
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "autoscale.metric_lag_s: the cooldown policy does not use it"));
	cli_out_free(&r);
	r = cli_run("replay " MOONCAKE200 " --set startup.keep_alive_s=60");
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "startup.keep_alive_s: engine 'vllm' loads its model at start"));
	cli_out_free(&r);
	r = cli_run("replay --help");
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "router.queue_limit"));
	assert_non_null(strstr(r.out, "router.policy"));
	assert_non_null(strstr(r.out, "router.prefix_scorer"));
	assert_non_null(strstr(r.out, "report.interval_s"));
	cli_out_free(&r);
}

static const cJSON *obj(const cJSON *j, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, key);
	if (!cJSON_IsObject(v))
		fail_msg("no object '%s' in the JSON report", key);
	return v;
}

/* Replica 1 of 4 fails 20 s into the run for a minute: its calls are
 * retried, nothing is lost, and it is billed neither while down. */
static void test_fault_in_the_report(void **state)
{
	(void)state;
	cJSON *j = run_json("--set replicas=4 "
			    "--set 'faults.list=[{\"replica\":1,\"at_s\":20,\"repair_s\":60}]'");
	const cJSON *c = obj(j, "cluster");
	const cJSON *e = obj(c, "elastic");
	const cJSON *f = obj(e, "faults");
	assert_null(cJSON_GetObjectItemCaseSensitive(e, "autoscale"));
	assert_int_equal(num(f, "failures"), 1);
	assert_true(num(f, "outage_s") == 60.0);
	assert_true(num(f, "retried_calls") > 0);
	assert_int_equal(num(f, "failed_calls"), 0);
	assert_int_equal(num(j, "completed"), 200);
	assert_int_equal(num(f, "calls_during_outage") + num(f, "calls_outside_outage"), 200);
	assert_int_equal(num(f, "good_during_outage") + num(f, "good_outside_outage"),
			 num(j, "good_requests"));
	/* start-up = the sum of its parts, billed as it starts again */
	double parts = num(e, "provision_s") + num(e, "image_pull_s") + num(e, "engine_start_s") +
		       num(e, "weight_load_s") + num(e, "compile_s") + num(e, "cuda_graph_s") +
		       num(e, "warmup_s");
	assert_true(fabs(num(e, "startup_s") - parts) < 1e-9);
	assert_true(fabs(num(e, "model_load_s") - (parts - num(e, "provision_s") -
						   num(e, "image_pull_s"))) < 1e-9);
	assert_true(num(e, "weight_load_s") > 1.0);
	assert_null(cJSON_GetObjectItemCaseSensitive(e, "on_demand"));
	double dur = num(j, "duration_s");
	assert_true(dur > 80.0);
	assert_true(fabs(num(c, "gpu_hours_provisioned") - (4.0 * dur - 60.0) / 3600.0) < 1e-9);
	assert_int_equal(num(e, "replicas_up_min"), 3);
	/* the default detection: a probe every 10 s, 3 failures, 1 s timeout,
	 * notices the hang at 51 s; the calls on it waited until then */
	assert_string_equal(cJSON_GetObjectItemCaseSensitive(f, "detection")->valuestring, "probe");
	assert_int_equal(num(f, "detected"), 1);
	assert_true(num(f, "hung_calls") > 0);
	assert_true(num(f, "hung_wait_s") > 0 && num(f, "backoff_s") > 0);
	assert_int_equal(num(f, "client_timeouts"), 0);
	cJSON_Delete(j);

	/* no retries: the calls on the failed replica fail with the reason,
	 * once the probes notice it, or at once when it is seen at once */
	const char *det[2] = {"", "--set faults.detection=instant "};
	const char *reason[2] = {"replica hung and the call used its retries (faults.max_retries)",
				 "replica failed and the call used its retries (faults.max_retries)"};
	for (int k = 0; k < 2; k++) {
		char args[512];
		snprintf(args, sizeof(args), "--set replicas=4 --set faults.max_retries=0 %s"
			 "--set 'faults.list=[{\"replica\":1,\"at_s\":20,\"repair_s\":60}]'", det[k]);
		j = run_json(args);
		f = obj(obj(obj(j, "cluster"), "elastic"), "faults");
		assert_true(num(f, "failed_calls") > 0);
		assert_int_equal(num(j, "failed"), num(f, "failed_calls"));
		const cJSON *why = obj(j, "failed_reasons");
		assert_int_equal(num(why, reason[k]), num(f, "failed_calls"));
		cJSON_Delete(j);
	}
}

/* One replica that scales to zero: the first calls wait for a whole cold
 * start, which shows in the TTFT tail. */
static void test_scale_to_zero_in_the_report(void **state)
{
	(void)state;
	cJSON *warm = run_json("--set replicas=2");
	cJSON *j = run_json("--set replicas=2 --set autoscale.enabled=true "
			    "--set autoscale.min_replicas=0 --set autoscale.target=8");
	const cJSON *e = obj(obj(j, "cluster"), "elastic");
	const cJSON *as = obj(e, "autoscale");
	assert_int_equal(num(as, "min_replicas"), 0);
	assert_int_equal(num(as, "active_min"), 0);
	/* KEDA by default: its poll woke the cluster from zero */
	assert_string_equal(cJSON_GetObjectItemCaseSensitive(as, "policy")->valuestring, "keda");
	assert_true(num(as, "activations") >= 1);
	assert_true(num(as, "metric_lag_s") == 30.0 && num(as, "polling_interval_s") == 30.0);
	assert_true(num(as, "tolerance") == 0.1 && num(as, "scale_down_window_s") == 300.0);
	assert_true(num(as, "active_max") <= 2);
	assert_true(num(as, "scale_outs") >= 1);
	assert_true(num(e, "starts") >= 1);
	double startup_ms = 1000.0 * num(e, "startup_s");
	assert_true(num(j, "p99_ttft_ms") > startup_ms);
	assert_true(num(warm, "p99_ttft_ms") < startup_ms);
	assert_int_equal(num(j, "completed"), 200);
	/* billed only from the first start */
	double dur = num(j, "duration_s");
	assert_true(num(obj(j, "cluster"), "gpu_hours_provisioned") < 2.0 * dur / 3600.0);
	cJSON_Delete(j);
	cJSON_Delete(warm);

	/* priced, each stretch a replica was up (its cold start included) is
	 * billed in whole units of the granularity: by the hour, in 20
	 * working periods a month, every stretch of this five-minute trace is
	 * one hour */
	struct cli_out r = cli_run("replay " MOONCAKE200 " --cost --set replicas=2 --set "
				   "autoscale.enabled=true --set autoscale.min_replicas=0 --set "
				   "autoscale.target=8 --set cost.periods_per_month=20 --set "
				   "cost.billing_granularity_s=3600");
	assert_true(r.status == 0 || r.status == 1);
	const char *line = strstr(r.out, "    gpu_hours_per_period ");
	assert_non_null(line);
	double per_period = 0;
	unsigned stretches = 0, own = 0;
	assert_int_equal(sscanf(line, " gpu_hours_per_period %lf GPU-h replay: %u replica "
				"stretches (%u billed on their own", &per_period, &stretches, &own), 3);
	assert_true(stretches >= 1);
	assert_int_equal(own, stretches);
	assert_true(per_period == (double)stretches);
	cli_out_free(&r);

	/* off by default: no lifecycle section */
	j = run_json("--set replicas=4");
	assert_null(cJSON_GetObjectItemCaseSensitive(obj(j, "cluster"), "elastic"));
	cJSON_Delete(j);
}

static void test_elastic_errors_and_help(void **state)
{
	(void)state;
	struct cli_out r = cli_run("replay " MOONCAKE200 " --set replicas=2 "
				   "--set 'faults.list=[{\"replica\":2,\"at_s\":1,\"repair_s\":1}]'");
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "faults.list[0].replica: 2 (expected a replica in [0, 2)"));
	cli_out_free(&r);
	r = cli_run("replay " MOONCAKE200 " --set 'faults.list=[{\"replica\":0,\"at\":1}]'");
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "faults.list[0].at: unknown key"));
	cli_out_free(&r);
	r = cli_run("replay " MOONCAKE200 " --set autoscale.metric=gpu");
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "autoscale.metric: unknown 'gpu' (expected \"queue\", \"kv\" or \"inflight\")"));
	cli_out_free(&r);
	r = cli_run("replay " MOONCAKE200 " --set autoscale.enabled=true --set autoscale.min_replicas=2");
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "expected min_replicas <= max_replicas <= replicas"));
	cli_out_free(&r);
	r = cli_run("replay " MOONCAKE200 " --set autoscale.policy=cooldown "
		    "--set autoscale.metric_lag_s=5");
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "autoscale.metric_lag_s: the cooldown policy does not use it"));
	cli_out_free(&r);
	r = cli_run("replay " MOONCAKE200 " --set startup.keep_alive_s=60");
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "startup.keep_alive_s: engine 'vllm' loads its model at start"));
	cli_out_free(&r);
	r = cli_run("replay --help");
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "autoscale.min_replicas"));
	assert_non_null(strstr(r.out, "faults.list"));
	assert_non_null(strstr(r.out, "startup.storage_gbs"));
	assert_non_null(strstr(r.out, "autoscale.policy"));
	assert_non_null(strstr(r.out, "startup.compile_cache"));
	cli_out_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fault_in_the_report),
		cmocka_unit_test(test_scale_to_zero_in_the_report),
		cmocka_unit_test(test_elastic_errors_and_help),
		cmocka_unit_test(test_cluster_section),
		cmocka_unit_test(test_router_queue_limit_fails_calls_with_reason),
		cmocka_unit_test(test_timeseries_adds_up),
		cmocka_unit_test(test_cluster_table_and_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
