/* SPDX-License-Identifier: Apache-2.0
 * End-to-end tests of `agentcap replay` on a scenario with `pools`: two
 * workstation GPUs beside one 8x H100 node.  The faster pool takes the
 * larger share under least_requests (and round_robin splits by replica);
 * per-pool GPU-hours follow each pool's GPUs per replica and add up to the
 * cluster's; --set reaches into a pool; a pool that cannot hold the model,
 * an unknown key in a pool and pools of different tokenizers are errors
 * naming the pool; expert_parallel_size reaches the performance model. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "tests/support/cli_run.h"

#include <cjson/cJSON.h>

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FIX AC_SRC_DIR "/tests/fixtures"
#define MOONCAKE200 FIX "/traces/mooncake_head200.jsonl"

/* Two RTX PRO 6000 workstations (1 GPU each) and one HGX H100 node (TP 8). */
#define TWO_POOLS                                                                              \
	"--set 'pools=[{\"name\":\"ws\",\"hardware\":\"rtx-pro-6000\",\"replicas\":2},"        \
	"{\"name\":\"node\",\"hardware\":\"hgx-h100-8\",\"replicas\":1}]'"

static cJSON *run_json(const char *extra)
{
	char args[2048];
	snprintf(args, sizeof(args), "replay " MOONCAKE200 " --json - %s", extra);
	struct cli_out r = cli_run(args);
	if (r.status != 0 && r.status != 1)
		fail_msg("agentcap %s: %s", args, r.err);
	cJSON *j = cJSON_Parse(r.out);
	assert_non_null(j);
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

static const char *str(const cJSON *j, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, key);
	if (!cJSON_IsString(v))
		fail_msg("no string '%s' in the JSON report", key);
	return v->valuestring;
}

static const cJSON *pool(const cJSON *j, int i)
{
	const cJSON *c = cJSON_GetObjectItemCaseSensitive(j, "cluster");
	assert_non_null(c);
	const cJSON *pools = cJSON_GetObjectItemCaseSensitive(c, "pools");
	assert_true(cJSON_IsArray(pools));
	assert_int_equal(cJSON_GetArraySize(pools), 2);
	return cJSON_GetArrayItem(pools, i);
}

/* The pools' shapes as resolved, their figures, and GPU-hours at each
 * pool's own GPUs per replica summing to the cluster's. */
static void test_pool_sections_and_gpu_hours(void **state)
{
	(void)state;
	cJSON *j = run_json(TWO_POOLS " --set router.policy=least_requests");
	const cJSON *c = cJSON_GetObjectItemCaseSensitive(j, "cluster");
	const cJSON *ws = pool(j, 0), *node = pool(j, 1);
	assert_string_equal(str(ws, "name"), "ws");
	assert_string_equal(str(ws, "hardware_id"), "rtx-pro-6000");
	assert_int_equal(num(ws, "replicas"), 2);
	assert_int_equal(num(ws, "gpus_per_replica"), 1);
	assert_string_equal(str(node, "hardware_id"), "hgx-h100-8");
	assert_int_equal(num(node, "tensor_parallel_size"), 8);
	assert_int_equal(num(node, "gpus_per_replica"), 8);
	assert_int_equal(num(node, "first_replica"), 2);
	assert_int_equal(num(j, "replicas"), 3);
	/* the pools differ: no single figure per replica */
	assert_int_equal(num(c, "gpus_per_replica"), 0);
	double dur = num(j, "duration_s");
	double prov = num(c, "gpu_hours_provisioned"), busy = num(c, "gpu_hours_busy");
	assert_true(fabs(prov - (2 * 1 + 1 * 8) * dur / 3600.0) < 1e-9 * prov);
	assert_true(fabs(num(ws, "gpu_hours_provisioned") + num(node, "gpu_hours_provisioned") - prov) <
		    1e-9 * prov);
	assert_true(fabs(num(ws, "gpu_hours_busy") + num(node, "gpu_hours_busy") - busy) <
		    1e-9 * busy + 1e-12);
	assert_true(fabs(num(node, "gpu_hours_busy") - 8 * num(node, "busy_s") / 3600.0) < 1e-9);
	/* per replica: the pool it belongs to, and requests adding up */
	const cJSON *per = cJSON_GetObjectItemCaseSensitive(c, "per_replica");
	assert_int_equal(cJSON_GetArraySize(per), 3);
	int64_t ws_reqs = 0;
	for (int i = 0; i < 3; i++) {
		const cJSON *p = cJSON_GetArrayItem(per, i);
		assert_int_equal(num(p, "pool"), i < 2 ? 0 : 1);
		if (i < 2)
			ws_reqs += (int64_t)num(p, "requests");
	}
	assert_int_equal(ws_reqs, num(ws, "requests"));
	assert_int_equal(num(ws, "requests") + num(node, "requests"), num(j, "completed"));
	/* the node's TP-8 H100s serve faster: least_requests sends it more
	 * than both workstations together, and its calls start sooner */
	assert_true(num(node, "requests") > num(ws, "requests"));
	assert_true(num(node, "ttft_p95_ms") < num(ws, "ttft_p95_ms"));
	cJSON_Delete(j);

	/* round_robin ignores speed: one call in three for the node */
	j = run_json(TWO_POOLS " --set router.policy=round_robin");
	assert_true(fabs(num(pool(j, 1), "requests") - 200.0 / 3) <= 1.0);
	cJSON_Delete(j);
}

/* --set pools[i].key reaches one pool; the table lists the pools. */
static void test_set_into_a_pool(void **state)
{
	(void)state;
	cJSON *j = run_json(TWO_POOLS " --set 'pools[0].replicas=3' --set 'pools[1].engine.max_num_seqs=64'");
	assert_int_equal(num(pool(j, 0), "replicas"), 3);
	assert_int_equal(num(pool(j, 1), "max_num_seqs"), 64);
	assert_int_equal(num(pool(j, 0), "max_num_seqs"), 1024);
	assert_int_equal(num(j, "replicas"), 4);
	cJSON_Delete(j);
	struct cli_out r = cli_run("replay " MOONCAKE200 " " TWO_POOLS);
	assert_true(r.status == 0 || r.status == 1);
	assert_non_null(strstr(r.out, "pool 0 ws: 2 x rtx-pro-6000 (TP 1, PP 1, EP 1, 1 GPU each)"));
	assert_non_null(strstr(r.out, "pool 1 node: 1 x hgx-h100-8 (TP 8, PP 1, EP 1, 8 GPUs each)"));
	assert_non_null(strstr(r.out, "p95 TTFT ms"));
	cli_out_free(&r);
}

static void expect_error(const char *extra, const char *msg)
{
	char args[2048];
	snprintf(args, sizeof(args), "replay " MOONCAKE200 " --quiet %s", extra);
	struct cli_out r = cli_run(args);
	char why[4096];
	bool ok = r.status == 2 && strstr(r.err, msg);
	snprintf(why, sizeof(why), "agentcap %s: status %d, stderr '%s' (expected 2 and '%s')", args,
		 r.status, r.err, msg);
	cli_out_free(&r);
	if (!ok)
		fail_msg("%s", why);
}

/* Errors name the pool: the one that cannot hold the model, a key a pool
 * does not have, a pool that is not there, a tokenizer that differs. */
static void test_errors_name_the_pool(void **state)
{
	(void)state;
	expect_error(TWO_POOLS " --set model=llama-3.1-70b",
		     "agentcap: (built-in default): pools[0] (ws): llama-3.1-70b in bf16 needs "
		     "141.1 GB per GPU for its weights");
	expect_error(TWO_POOLS " --set 'pools[1].hardware=nope'",
		     "pools[1].hardware: unknown id 'nope'");
	expect_error(TWO_POOLS " --set 'pools[2].replicas=1'",
		     "--set pools[2].replicas=1: pools[2]: no such pool (the scenario lists 2; "
		     "expected an index below 2)");
	expect_error(TWO_POOLS " --set 'pools[0].router.policy=x'",
		     "pools[0].router.policy: unknown key (expected one of: name, model, hardware");
	expect_error("--set 'pools=[{\"hardware\":\"h100-sxm\",\"slo\":{}}]'",
		     "pools[0].slo: unknown key");
	expect_error(TWO_POOLS " --set 'pools[1].model=qwen2.5-7b'",
		     "pools[1].model: 'qwen2.5-7b' has a vocabulary of 152064 tokens, pools[0]'s "
		     "'llama-3.1-8b' 128256 (expected models with one tokenizer");
	expect_error("--set 'pools=[]'", "pools: expected an array of 1 to 16 pool objects");
	expect_error(TWO_POOLS " --set kv_tiers.host_gb=64", "kv_tiers: not modelled with pools yet");
	expect_error(TWO_POOLS " --set 'pools[1].engine.block_size=32'",
		     "(built-in default): pools[1].engine.block_size: 32 differs from pools[0]'s 16");
}

/* expert_parallel_size reaches the performance model, for one shape and
 * per pool: the MoE layers' all-reduces become all-to-alls and the step
 * waits for the busiest GPU's experts, so step times change. */
static void test_expert_parallel(void **state)
{
	(void)state;
	cJSON *tp = run_json("--set model=qwen3-30b-a3b --set hardware=hgx-h100-8");
	cJSON *ep = run_json("--set model=qwen3-30b-a3b --set hardware=hgx-h100-8 "
			     "--set expert_parallel_size=8");
	const cJSON *run_tp = cJSON_GetObjectItemCaseSensitive(tp, "run");
	const cJSON *run_ep = cJSON_GetObjectItemCaseSensitive(ep, "run");
	/* the key appears only when experts are spread: older reports stay as they were */
	assert_null(cJSON_GetObjectItemCaseSensitive(run_tp, "expert_parallel_size"));
	assert_int_equal(num(run_ep, "expert_parallel_size"), 8);
	assert_true(num(ep, "mean_tpot_ms") != num(tp, "mean_tpot_ms"));
	cJSON_Delete(tp);
	cJSON_Delete(ep);
	cJSON *j = run_json("--set model=qwen3-30b-a3b --set 'pools=[{\"hardware\":\"hgx-h100-8\","
			    "\"expert_parallel_size\":8},{\"hardware\":\"hgx-h100-8\"}]'");
	assert_int_equal(num(pool(j, 0), "expert_parallel_size"), 8);
	assert_int_equal(num(pool(j, 1), "expert_parallel_size"), 1);
	cJSON_Delete(j);
	expect_error("--set expert_parallel_size=2",
		     "expert_parallel_size 2: expected 1, or the tensor-parallel size (1) for a "
		     "mixture of experts");
}

/* whatif replays pools as replay does; size searches one shape and refuses
 * a scenario with pools by name, not half-using it
 * (tests/cli/test_cli_features.c holds every command and feature). */
static void test_whatif_takes_pools_size_refuses(void **state)
{
	(void)state;
	struct cli_out r = cli_run("whatif no-retry " MOONCAKE200 " --set 'pools=[{}]' --quiet");
	assert_int_equal(r.status, 0);
	cli_out_free(&r);
	r = cli_run("size --engineers 2 --trace " MOONCAKE200 " --set 'pools=[{}]'");
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "pools: agentcap size does not take it: the search varies "
			       "the replicas of one replica shape"));
	cli_out_free(&r);
}

/* A fault names a pool: the whole node down for 30 s is one failure per
 * replica of it, billed at its 8 GPUs only while up; a replica within a
 * pool counts from the pool's first; a pool that is not there is an error. */
static void test_pool_faults(void **state)
{
	(void)state;
	cJSON *j = run_json(TWO_POOLS " --set router.policy=least_requests "
			    "--set 'faults.list=[{\"pool\":\"node\",\"at_s\":20,\"repair_s\":30}]'");
	const cJSON *c = cJSON_GetObjectItemCaseSensitive(j, "cluster");
	const cJSON *f = cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(c, "elastic"), "faults");
	assert_non_null(f);
	assert_int_equal(num(f, "failures"), 1);
	assert_true(num(f, "outage_s") == 30.0);
	assert_int_equal(num(f, "failed_calls"), 0);
	assert_int_equal(num(j, "completed"), 200);
	double dur = num(j, "duration_s");
	assert_true(dur > 50.0);
	const cJSON *ws = pool(j, 0), *node = pool(j, 1);
	/* billed while starting again, not while down: 30 s missing */
	assert_true(fabs(num(node, "gpu_hours_provisioned") - 8.0 * (dur - 30.0) / 3600.0) < 1e-9);
	assert_true(fabs(num(ws, "gpu_hours_provisioned") - 2.0 * dur / 3600.0) < 1e-9);
	assert_true(fabs(num(c, "gpu_hours_provisioned") - (10.0 * dur - 8.0 * 30.0) / 3600.0) <
		    1e-9);
	cJSON_Delete(j);

	/* pool 0's replica 1 is the cluster's replica 1: the same run */
	j = run_json(TWO_POOLS " --set 'faults.list=[{\"pool\":0,\"replica\":1,\"at_s\":20,"
			       "\"repair_s\":30}]'");
	cJSON *k = run_json(TWO_POOLS " --set 'faults.list=[{\"replica\":1,\"at_s\":20,"
			    "\"repair_s\":30}]'");
	char *a = cJSON_PrintUnformatted(j), *b = cJSON_PrintUnformatted(k);
	assert_string_equal(a, b);
	free(a);
	free(b);
	assert_true(fabs(num(pool(j, 0), "gpu_hours_provisioned") -
			 (2.0 * num(j, "duration_s") - 30.0) / 3600.0) < 1e-9);
	cJSON_Delete(j);
	cJSON_Delete(k);

	expect_error(TWO_POOLS " --set 'faults.list=[{\"pool\":\"nope\",\"at_s\":1,\"repair_s\":1}]'",
		     "faults.list[0].pool: 'nope' (expected a pool's name or an index below 2");
	expect_error(TWO_POOLS " --set 'faults.list=[{\"pool\":1,\"replica\":1,\"at_s\":1,\"repair_s\":1}]'",
		     "faults.list[0].replica: 1 (expected a replica in [0, 1): the pool has 1)");
	expect_error(TWO_POOLS " --set 'faults.list=[{\"replica\":3,\"at_s\":1,\"repair_s\":1}]'",
		     "faults.list[0].replica: 3 (expected a replica in [0, 3): replicas is 3)");
	expect_error(" --set 'faults.list=[{\"pool\":0,\"at_s\":1,\"repair_s\":1}]'",
		     "faults.list[0].pool: 0 (expected a pool's name or an index below 0");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pool_sections_and_gpu_hours),
		cmocka_unit_test(test_set_into_a_pool),
		cmocka_unit_test(test_errors_name_the_pool),
		cmocka_unit_test(test_expert_parallel),
		cmocka_unit_test(test_whatif_takes_pools_size_refuses),
		cmocka_unit_test(test_pool_faults),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
