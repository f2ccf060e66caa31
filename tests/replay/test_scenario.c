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
		cmocka_unit_test(test_sets),
		cmocka_unit_test(test_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
