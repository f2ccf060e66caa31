/* SPDX-License-Identifier: Apache-2.0
 * Scenario pools: a pool inherits every shape key it does not set from the
 * top level after all overrides (wherever `pools` stands in the file), its
 * own keys win, --set reaches into one pool, and a pool's view resolves on
 * its own hardware (a multi-GPU system's TP is not inherited from another
 * pool's). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "models/catalog.h"
#include "replay/deploy.h"
#include "replay/scenario.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The scenario text in a temporary file; the caller unlinks path. */
static void write_tmp(char *path, size_t cap, const char *text)
{
	snprintf(path, cap, "/tmp/agentcap-pools-XXXXXX");
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	FILE *f = fdopen(fd, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void test_inheritance(void **state)
{
	(void)state;
	/* pools before the keys they inherit: order in the file does not matter */
	const char *text =
		"{\"pools\": [{\"name\": \"ws\", \"hardware\": \"rtx-pro-6000\", \"replicas\": 2,"
		"  \"engine\": {\"max_num_seqs\": 64}},"
		" {\"hardware\": \"hgx-h100-8\", \"weight_format\": \"fp8\"}],"
		" \"model\": \"llama-3.1-70b\", \"replicas\": 3,"
		" \"engine\": {\"max_num_batched_tokens\": 4096, \"max_num_seqs\": 128}}";
	char path[64];
	write_tmp(path, sizeof(path), text);
	const char *sets[] = {"engine.max_num_batched_tokens=2048", "pools[1].replicas=5"};
	struct scenario *sc = malloc(sizeof(*sc)), *v = malloc(sizeof(*v));
	assert_non_null(sc);
	assert_non_null(v);
	struct diag d;
	diag_init(&d);
	assert_int_equal(scenario_load(sc, path, sets, 2, &d), 0);
	unlink(path);
	assert_int_equal(sc->n_pools, 2);

	scenario_pool_view(sc, 0, v);
	assert_int_equal(v->n_pools, 0);
	assert_string_equal(v->name, "ws");
	assert_string_equal(v->key_prefix, "pools[0].");
	assert_string_equal(v->hardware, "rtx-pro-6000");
	assert_string_equal(v->model, "llama-3.1-70b");       /* inherited */
	assert_string_equal(v->weight_format, "bf16");        /* the default's */
	assert_int_equal(v->replicas, 2);                     /* its own */
	assert_int_equal(v->engine.max_num_seqs, 64);         /* its own */
	assert_int_equal(v->engine.max_num_batched_tokens, 2048); /* the top level after --set */
	assert_int_equal(v->engine.block_size, 16);

	scenario_pool_view(sc, 1, v);
	assert_string_equal(v->name, "pools[1]");
	assert_string_equal(v->weight_format, "fp8");
	assert_int_equal(v->replicas, 5);                     /* --set */
	assert_int_equal(v->engine.max_num_seqs, 128);        /* the top level's */

	/* each view resolves on its own hardware */
	struct catalog *cat = NULL;
	assert_int_equal(catalog_load(&cat, NULL, &d), 0);
	scenario_pool_view(sc, 1, v);
	assert_int_equal(deploy_resolve(v, cat, NULL, &d), 0);
	assert_int_equal(v->tensor_parallel_size, 8);
	scenario_pool_view(sc, 0, v);
	assert_int_equal(deploy_resolve(v, cat, NULL, &d), 0);
	assert_int_equal(v->tensor_parallel_size, 1);
	assert_string_equal(v->engine_profile, "vllm");

	/* a later `pools` replaces the list */
	const char *again[] = {"pools=[{\"hardware\": \"h100-sxm\"}]"};
	assert_int_equal(scenario_load(sc, NULL, again, 1, &d), 0);
	assert_int_equal(sc->n_pools, 1);
	scenario_pool_view(sc, 0, v);
	assert_string_equal(v->hardware, "h100-sxm");
	assert_int_equal(v->replicas, 1);
	catalog_free(cat);
	free(sc);
	free(v);
}

/* Exact messages: the file or --set argument, then the pool's key. */
static void test_errors(void **state)
{
	(void)state;
	static const struct {
		const char *text;
		const char *set;
		const char *msg;
	} cases[] = {
		{"{\"pools\": {}}", NULL, "FILE: pools: expected an array of 1 to 16 pool objects"},
		{"{\"pools\": [1]}", NULL, "FILE: pools[0]: expected an object"},
		{"{\"pools\": [{}, {\"replicas\": 0}]}", NULL,
		 "FILE: pools[1].replicas: expected an integer in [1, 4096]"},
		{"{\"pools\": [{\"engine\": 3}]}", NULL, "FILE: pools[0].engine: expected an object"},
		{"{\"pools\": [{\"engine\": {\"bogus\": 1}}]}", NULL,
		 "FILE: pools[0].engine.bogus: unknown key (expected one of: max_num_seqs, "
		 "reserve_full_prompt, max_num_batched_tokens, block_size, gpu_memory_utilization, "
		 "enable_chunked_prefill, enable_prefix_caching, flash_attention, build, kv_cache_tokens, max_model_len)"},
		{"{\"pools\": [{\"slo\": {}}]}", NULL,
		 "FILE: pools[0].slo: unknown key (expected one of: name, model, hardware, "
		 "weight_format, kv_cache_dtype, tensor_parallel_size, pipeline_parallel_size, "
		 "expert_parallel_size, engine_profile, profile, offload, host, power_limit_w, replicas, engine)"},
		{"{\"pools\": [{}]}", "pools[1].replicas=2",
		 "--set pools[1].replicas=2: pools[1]: no such pool (the scenario lists 1; expected "
		 "an index below 1)"},
		{"{\"pools\": [{}]}", "pools[x].replicas=2",
		 "--set pools[x].replicas=2: pools[x].replicas: expected pools[i].key with i an index"},
		{"{\"pools\": [{}]}", "pools[0].engine=2",
		 "--set pools[0].engine=2: pools[0].engine: unknown key (expected one of: name, model, "
		 "hardware, weight_format, kv_cache_dtype, tensor_parallel_size, "
		 "pipeline_parallel_size, expert_parallel_size, engine_profile, profile, offload, host, "
		 "power_limit_w, replicas, engine)"},
		{"{\"pools\": [{}]}", "pools[0].engine.max_num_seqs=0",
		 "--set pools[0].engine.max_num_seqs=0: pools[0].engine.max_num_seqs: expected an "
		 "integer in [1, 1048576] or null"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char path[64], want[1024];
		write_tmp(path, sizeof(path), cases[i].text);
		const char *p = strstr(cases[i].msg, "FILE");
		if (p)
			snprintf(want, sizeof(want), "%s%s", path, p + 4);
		else
			snprintf(want, sizeof(want), "%s", cases[i].msg);
		struct scenario *sc = malloc(sizeof(*sc));
		assert_non_null(sc);
		struct diag d;
		diag_init(&d);
		const char *sets[] = {cases[i].set};
		int rc = scenario_load(sc, path, sets, cases[i].set ? 1 : 0, &d);
		unlink(path);
		if (rc != DIAG_EINPUT || strcmp(d.msg, want) != 0)
			fail_msg("case %zu: rc %d, '%s' (expected '%s')", i, rc, d.msg, want);
		free(sc);
	}
}

/* A pool's view names its key in scenario_resolve's messages. */
static void test_resolve_names_pool_key(void **state)
{
	(void)state;
	const char *sets[] = {"pools=[{\"hardware\": \"h100-sxm\"}, {\"engine_profile\": \"nope\"}]"};
	struct scenario *sc = malloc(sizeof(*sc)), *v = malloc(sizeof(*v));
	assert_non_null(sc);
	assert_non_null(v);
	struct diag d;
	diag_init(&d);
	assert_int_equal(scenario_load(sc, NULL, sets, 1, &d), 0);
	struct catalog *cat = NULL;
	assert_int_equal(catalog_load(&cat, NULL, &d), 0);
	scenario_pool_view(sc, 1, v);
	assert_int_equal(deploy_resolve(v, cat, NULL, &d), DIAG_EINPUT);
	assert_non_null(strstr(d.msg, "(built-in default): pools[1].engine_profile: unknown engine 'nope'"));
	catalog_free(cat);
	free(sc);
	free(v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_inheritance),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_resolve_names_pool_key),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
