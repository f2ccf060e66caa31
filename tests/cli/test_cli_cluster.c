/* SPDX-License-Identifier: Apache-2.0
 * End-to-end tests of `agentcap replay` on several replicas: the cluster
 * section of the JSON and the table, GPU-hours, the router's queue limit
 * reported as failures with their reason, and scenario errors. */
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
	assert_string_equal(cJSON_GetObjectItemCaseSensitive(rt, "policy")->valuestring, "round_robin");
	assert_int_equal(num(rt, "routed"), 200);
	assert_int_equal(num(rt, "queued"), 0);
	const cJSON *per = cJSON_GetObjectItemCaseSensitive(c, "per_replica");
	assert_int_equal(cJSON_GetArraySize(per), 4);
	double busy_s = 0, cached = 0;
	int64_t reqs = 0;
	for (int i = 0; i < 4; i++) {
		const cJSON *p = cJSON_GetArrayItem(per, i);
		assert_int_equal(num(p, "replica"), i);
		assert_int_equal(num(p, "requests"), 50); /* round robin */
		reqs += (int64_t)num(p, "requests");
		busy_s += num(p, "busy_s");
		cached += num(p, "cached_prompt_tokens");
		assert_true(fabs(num(p, "busy_fraction") - num(p, "busy_s") / dur) < 1e-12);
	}
	assert_int_equal(reqs, num(j, "completed"));
	assert_true(cached == num(j, "cached_prompt_tokens"));
	assert_true(fabs(num(c, "gpu_hours_busy") - 2 * busy_s / 3600.0) < 1e-9);
	/* the busy fraction of the whole run is the replicas' mean */
	assert_true(fabs(num(j, "gpu_busy_fraction") - busy_s / (4 * dur)) < 1e-9);
	cJSON_Delete(j);

	/* one replica: no cluster section, as before replicas existed */
	j = run_json("");
	assert_null(cJSON_GetObjectItemCaseSensitive(j, "cluster"));
	cJSON_Delete(j);
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
	assert_non_null(strstr(r.err, "router.policy: expected one of round_robin, least_requests, "
				      "least_tokens, power_of_two, session_affinity, prefix_aware"));
	cli_out_free(&r);
	r = cli_run("replay " MOONCAKE200 " --set replicas=0");
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "replicas: expected an integer in [1, 4096]"));
	cli_out_free(&r);
	r = cli_run("replay --help");
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "router.queue_limit"));
	assert_non_null(strstr(r.out, "router.policy"));
	cli_out_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cluster_section),
		cmocka_unit_test(test_router_queue_limit_fails_calls_with_reason),
		cmocka_unit_test(test_cluster_table_and_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
