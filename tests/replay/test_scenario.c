/* SPDX-License-Identifier: Apache-2.0
 * Scenario loading: defaults, overrides, and exact error messages. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "replay/scenario.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void test_default(void **state)
{
	(void)state;
	struct scenario sc;
	struct diag d;
	diag_init(&d);
	assert_int_equal(scenario_load(&sc, NULL, NULL, 0, &d), 0);
	assert_string_equal(sc.model, "llama-3.1-8b");
	assert_string_equal(sc.hardware, "h100-sxm");
	assert_int_equal(sc.engine.block_size, 16);
	assert_true(sc.engine.enable_prefix_caching);
	assert_int_equal(sc.engine.kv_cache_tokens, 0);
	assert_string_equal(sc.source, "(built-in default)");
	assert_string_equal(sc.prices, ""); /* the built-in price catalogue */
	assert_true(sc.cost.resale_fraction == -1 && sc.cost.acceptance_rate == -1);
}

/* cost.* keys put the scenario's figures over the catalogues' */
static void test_cost_keys(void **state)
{
	(void)state;
	struct scenario sc;
	struct diag d;
	diag_init(&d);
	const char *sets[] = {"cost.resale_fraction=0.25", "cost.acceptance_rate=0.6",
			      "cost.operator_usd_month=0", "cost.min_replicas=1"};
	assert_int_equal(scenario_load(&sc, NULL, sets, 4, &d), 0);
	struct cost_purchase p;
	struct cost_elastic e;
	struct cost_task t;
	memset(&p, 0, sizeof(p));
	memset(&e, 0, sizeof(e));
	cost_fig_set(&p.resale_fraction, 0, "catalogue");
	cost_fig_set(&p.amortisation_months, 36, "catalogue");
	cost_fig_set(&p.operator_usd_month, 5000, "catalogue");
	cost_fig_set(&e.min_replicas, 0, "catalogue");
	cost_task_default(&t);
	scenario_cost_apply(&sc, &p, NULL, &e, &t);
	assert_true(p.resale_fraction.value == 0.25);
	assert_string_equal(p.resale_fraction.source, "scenario (built-in default): cost.resale_fraction");
	assert_true(p.amortisation_months.value == 36); /* not set: unchanged */
	assert_string_equal(p.amortisation_months.source, "catalogue");
	assert_true(p.operator_usd_month.value == 0);
	assert_true(e.min_replicas.value == 1);
	assert_true(t.acceptance_rate.value == 0.6);
	assert_true(t.turns_factor.value == 1);
	const char *bad[] = {"cost.resale_fraction=1.5"};
	assert_int_equal(scenario_load(&sc, NULL, bad, 1, &d), DIAG_EINPUT);
}

static void test_sets(void **state)
{
	(void)state;
	struct scenario sc;
	struct diag d;
	diag_init(&d);
	const char *sets[] = {"engine.enable_prefix_caching=false", "engine.kv_cache_tokens=200000",
			      "model=llama-2-7b", "slo.ttft_ms=1500.5", "engine.kv_cache_tokens=300000",
			      "prices=my-prices.json"};
	assert_int_equal(scenario_load(&sc, NULL, sets, 6, &d), 0);
	assert_string_equal(sc.prices, "my-prices.json");
	assert_false(sc.engine.enable_prefix_caching);
	assert_int_equal(sc.engine.kv_cache_tokens, 300000);
	assert_string_equal(sc.model, "llama-2-7b");
	assert_true(sc.slo_ttft_ms == 1500.5);
}

struct bad_case {
	const char *file_text; /* NULL: use the default */
	const char *set;       /* NULL: none */
	const char *want;      /* exact message; "%s" is the file path */
};

static void test_errors(void **state)
{
	(void)state;
	static const struct bad_case cases[] = {
		{NULL, "engine.max_num_seq=4",
		 "--set engine.max_num_seq=4: engine.max_num_seq: unknown key (expected one of: max_num_seqs, reserve_full_prompt, "
		 "max_num_batched_tokens, block_size, gpu_memory_utilization, enable_chunked_prefill, "
		 "enable_prefix_caching, kv_cache_tokens, max_model_len)"},
		{NULL, "engine.block_size=sixteen",
		 "--set engine.block_size=sixteen: engine.block_size: expected an integer in [1, 4096]"},
		{NULL, "engine.enable_prefix_caching=1",
		 "--set engine.enable_prefix_caching=1: engine.enable_prefix_caching: expected true or false"},
		{NULL, "nodots", "--set nodots: expected dotted.key=value"},
		{"{\"engine\": {\"max_num_seqs\": 2.5}}", NULL,
		 "%s: engine.max_num_seqs: expected an integer in [1, 1048576] or null"},
		{"{\"engine\": {\"gpu_memory_utilisation\": 0.8}}", NULL,
		 "%s: engine.gpu_memory_utilisation: unknown key (expected one of: max_num_seqs, "
		 "reserve_full_prompt, max_num_batched_tokens, block_size, gpu_memory_utilization, enable_chunked_prefill, "
		 "enable_prefix_caching, kv_cache_tokens, max_model_len)"},
		{"{\"model\": 7}", NULL, "%s: model: expected a string"},
		{"{\n  \"model\": \"x\",\n  \"engine\": {,}\n}", NULL,
		 "%s:3:15: malformed JSON at '}' (expected a scenario object)"},
		{"[1]", NULL, "%s: expected a JSON object at the top level"},
	};
	char path[] = "/tmp/agentcap-scenario-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct bad_case *c = &cases[i];
		if (c->file_text) {
			FILE *f = fopen(path, "w");
			fputs(c->file_text, f);
			fclose(f);
		}
		struct scenario sc;
		struct diag d;
		diag_init(&d);
		const char *sets[1] = {c->set};
		int rc = scenario_load(&sc, c->file_text ? path : NULL, sets, c->set ? 1 : 0, &d);
		assert_int_equal(rc, DIAG_EINPUT);
		char want[1024];
		snprintf(want, sizeof(want), c->want, path);
		assert_string_equal(d.msg, want);
	}
	struct scenario sc;
	struct diag d;
	diag_init(&d);
	unlink(path);
	assert_int_equal(scenario_load(&sc, path, NULL, 0, &d), DIAG_EINPUT);
	assert_non_null(strstr(d.msg, "cannot open"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_default),
		cmocka_unit_test(test_cost_keys),
		cmocka_unit_test(test_sets),
		cmocka_unit_test(test_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
