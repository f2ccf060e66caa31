/* SPDX-License-Identifier: Apache-2.0
 * Scenario loading: defaults, overrides, and exact error messages. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "replay/deploy.h"
#include "replay/scenario.h"

#include "base/outkind.h"
#include "models/catalog.h"
#include "models/perf_model.h"
#include "models/profile.h"
#include "models/spec.h"

#include <math.h>
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
	cost_fig_set(&p.op.usd_month, 5000, "catalogue");
	cost_fig_set(&e.min_replicas, 0, "catalogue");
	cost_task_default(&t);
	scenario_cost_apply(&sc, &p, NULL, &e, &t);
	assert_true(p.resale_fraction.value == 0.25);
	assert_string_equal(p.resale_fraction.source, "scenario (built-in default): cost.resale_fraction");
	assert_true(p.amortisation_months.value == 36); /* not set: unchanged */
	assert_string_equal(p.amortisation_months.source, "catalogue");
	assert_true(p.op.usd_month.value == 0);
	assert_true(e.min_replicas.value == 1);
	assert_true(t.acceptance_rate.value == 0.6);
	assert_true(t.turns_factor.value == 1);
	const char *bad[] = {"cost.resale_fraction=1.5"};
	assert_int_equal(scenario_load(&sc, NULL, bad, 1, &d), DIAG_EINPUT);

	/* operator time: the whole figure overrides the model; the base and a
	 * per-system share (flat, whatever the GPUs) go into it */
	const char *op[] = {"cost.operator_base_usd_month=2000",
			    "cost.operator_per_system_usd_month=300"};
	assert_int_equal(scenario_load(&sc, NULL, op, 2, &d), 0);
	struct cost_dedicated dp;
	memset(&dp, 0, sizeof(dp));
	cost_fig_set(&dp.op.usd_month, -1, "model");
	cost_fig_set(&dp.op.system_gpus, 8, "catalogue");
	scenario_cost_apply(&sc, NULL, &dp, NULL, NULL);
	assert_true(dp.op.usd_month.value == -1);
	assert_true(dp.op.base_usd_month.value == 2000);
	assert_true(dp.op.system_usd_month.value == 300);
	assert_true(dp.op.system_gpus.value == 0);
	assert_true(cost_operator_per_system(&dp.op, 4) == 300);
	assert_string_equal(dp.op.base_usd_month.source,
			    "scenario (built-in default): cost.operator_base_usd_month");

	/* the calendar: 261 weekdays with no holidays unless the scenario
	 * gives one (250: the 11 US federal holidays of 2026, all on weekdays) */
	char why[256];
	assert_int_equal(scenario_load(&sc, NULL, NULL, 0, &d), 0);
	assert_true(scenario_workdays_per_year(&sc, why, sizeof(why)) == 261);
	assert_non_null(strstr(why, "261 working days a year (weekdays, no holidays"));
	assert_true(scenario_workdays_per_year(NULL, NULL, 0) == COST_WORKDAYS_PER_YEAR);
	const char *cal[] = {"cost.workdays_per_year=250"};
	assert_int_equal(scenario_load(&sc, NULL, cal, 1, &d), 0);
	assert_true(scenario_workdays_per_year(&sc, why, sizeof(why)) == 250);
	assert_non_null(strstr(why, "250 working days a year (scenario (built-in default): "
				    "cost.workdays_per_year)"));
	const char *far[] = {"cost.workdays_per_year=400"};
	diag_init(&d);
	assert_int_equal(scenario_load(&sc, NULL, far, 1, &d), DIAG_EINPUT);
	assert_non_null(strstr(d.msg, "cost.workdays_per_year: expected -1 (the default) or a "
				      "number in [1, 366]"));
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
	const char *want;      /* exact message; "%s" is the file path; NULL:
				  refused, whatever the message */
};

static void test_errors(void **state)
{
	(void)state;
	static const struct bad_case cases[] = {
		{NULL, "engine.max_num_seq=4",
		 "--set engine.max_num_seq=4: engine.max_num_seq: unknown key (expected one of: max_num_seqs, reserve_full_prompt, "
		 "max_num_batched_tokens, block_size, gpu_memory_utilization, enable_chunked_prefill, "
		 "enable_prefix_caching, flash_attention, build, kv_cache_tokens, max_model_len)"},
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
		 "enable_prefix_caching, flash_attention, build, kv_cache_tokens, max_model_len)"},
		{"{\"model\": 7}", NULL, "%s: model: expected a string of 1 to 127 bytes"},
		/* --set takes the whole value as JSON or as a string, never a
		 * JSON prefix of it */
		{NULL, "slo.ttft_ms=2s", "--set slo.ttft_ms=2s: slo.ttft_ms: expected a number in [0, 1000000000000]"},
		{NULL, "replicas=3]", "--set replicas=3]: replicas: expected an integer in [1, 4096]"},
		{NULL, "engine.kv_cache_tokens=1e5 tokens", NULL},
		{NULL, "engine.enable_prefix_caching=falsey",
		 "--set engine.enable_prefix_caching=falsey: engine.enable_prefix_caching: expected true or false"},
		/* a key given twice, a pool name twice, a name too long */
		{"{\"model\": \"a\", \"model\": \"b\"}", NULL,
		 "%s: model: given twice (expected each key once)"},
		{"{\"engine\": {\"block_size\": 16, \"block_size\": 32}}", NULL,
		 "%s: engine.block_size: given twice (expected each key once)"},
		{"{\"pools\": [{\"name\": \"a\"}, {\"name\": \"a\"}]}", NULL,
		 "%s: pools[1].name: 'a' is pools[0]'s name too (expected a name of its own)"},
		{"{\"pools\": [{\"replicas\": 1, \"replicas\": 2}]}", NULL,
		 "%s: pools[0].replicas: given twice (expected each key once)"},
		{"{\"backends\": [{\"name\": \"a\", \"name\": \"b\", \"price\": \"x\"}]}", NULL,
		 "%s: backends[0].name: given twice (expected each key once)"},
		/* cost keys: -1 (the default) or in range, nothing between */
		{NULL, "cost.acceptance_rate=1e-300",
		 "--set cost.acceptance_rate=1e-300: cost.acceptance_rate: expected -1 (the default) or a number in [0.001, 1]"},
		{NULL, "cost.pue=-0.5",
		 "--set cost.pue=-0.5: cost.pue: expected -1 (the default) or a number in [1, 10]"},
		/* a fault rate a run can hold */
		{NULL, "faults.mtbf_h=1e-12",
		 "--set faults.mtbf_h=1e-12: faults.mtbf_h: expected 0 (off) or a number in [0.05, 1000000000]"},
		/* how the host tier fills */
		{NULL, "kv_tiers.mode=lmcache",
		 "--set kv_tiers.mode=lmcache: kv_tiers.mode: unknown 'lmcache' (expected \"write_through\" or \"evict\")"},
		{"{\"kv_tiers\": {\"mode\": 1}}", NULL,
		 "%s: kv_tiers.mode: expected \"write_through\" or \"evict\""},
		{NULL, "kv_tiers.chunk_tokens=0",
		 "--set kv_tiers.chunk_tokens=0: kv_tiers.chunk_tokens: expected an integer in [1, 1048576]"},
		{NULL, "kv_tiers.async_store=1",
		 "--set kv_tiers.async_store=1: kv_tiers.async_store: expected true or false"},
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
		if (rc != DIAG_EINPUT)
			fail_msg("case %zu (%s): accepted", i, c->set ? c->set : c->file_text);
		if (!c->want)
			continue;
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

/* kv_tiers.mode and its write-through keys reach the engine's tier
 * config through deploy_build: write_through by default, in chunks of 256
 * tokens (16 blocks of 16), the partial chunk left out, stores
 * asynchronous, a block's bytes over the replica's GPUs; evict when asked;
 * a chunk that is not a whole number of blocks is refused naming the key. */
static void test_kv_tier_mode_keys(void **state)
{
	(void)state;
	struct scenario *sc = malloc(sizeof(*sc));
	struct deployment *dp = malloc(sizeof(*dp));
	assert_non_null(sc);
	assert_non_null(dp);
	struct diag d;
	diag_init(&d);
	struct catalog *cat = NULL;
	assert_int_equal(catalog_load(&cat, NULL, &d), 0);
	const char *evict[] = {"kv_tiers.host_gb=200", "kv_tiers.mode=evict"};
	assert_int_equal(scenario_load(sc, NULL, evict, 2, &d), 0);
	assert_int_equal(sc->kv_tiers.mode, SIM_TIER_EVICT);
	assert_int_equal(deploy_build(dp, sc, cat, NULL, NULL, &d), 0);
	assert_int_equal(dp->tiers.mode, SIM_TIER_EVICT);
	deploy_release(dp);

	const char *wt[] = {"kv_tiers.host_gb=200"};
	assert_int_equal(scenario_load(sc, NULL, wt, 1, &d), 0);
	assert_int_equal(sc->kv_tiers.mode, SIM_TIER_WRITE_THROUGH);
	if (deploy_build(dp, sc, cat, NULL, NULL, &d) != 0)
		fail_msg("%s", d.msg);
	assert_int_equal(dp->tiers.mode, SIM_TIER_WRITE_THROUGH);
	assert_int_equal(dp->tiers.chunk_blocks, 16);
	assert_false(dp->tiers.save_unfull_chunk);
	assert_true(dp->tiers.async_store);
	/* Llama-3.1-8B in bf16: 128 KiB of KV a token, 16 tokens a block, one GPU */
	assert_true(dp->tiers.bytes_per_block == 131072.0 * 16);
	assert_true(dp->tiers.tier[0].ns_per_block > 0);
	deploy_release(dp);

	const char *sync[] = {"kv_tiers.host_gb=200", "kv_tiers.mode=write_through",
			      "kv_tiers.chunk_tokens=64", "kv_tiers.async_store=false",
			      "kv_tiers.save_unfull_chunk=true"};
	assert_int_equal(scenario_load(sc, NULL, sync, 5, &d), 0);
	if (deploy_build(dp, sc, cat, NULL, NULL, &d) != 0)
		fail_msg("%s", d.msg);
	assert_int_equal(dp->tiers.chunk_blocks, 4);
	assert_false(dp->tiers.async_store);
	assert_true(dp->tiers.save_unfull_chunk);
	deploy_release(dp);

	const char *odd[] = {"kv_tiers.host_gb=200", "kv_tiers.mode=write_through",
			     "kv_tiers.chunk_tokens=100"};
	assert_int_equal(scenario_load(sc, NULL, odd, 3, &d), 0);
	assert_int_equal(deploy_build(dp, sc, cat, NULL, NULL, &d), DIAG_EINPUT);
	assert_string_equal(d.msg, "(built-in default): kv_tiers.chunk_tokens = 100 is not a "
				   "multiple of the KV block size (expected a multiple of 16 tokens)");
	catalog_free(cat);
	free(dp);
	free(sc);
}

/* max_num_batched_tokens left null is the engine version's step size:
 * vLLM's 8192 on the default scenario, llama.cpp's 512-token physical
 * batch; a value the scenario sets wins. */
static void test_chunk_follows_the_engine(void **state)
{
	(void)state;
	struct scenario *sc = malloc(sizeof(*sc));
	assert_non_null(sc);
	struct diag d;
	diag_init(&d);
	struct catalog *cat = NULL;
	assert_int_equal(catalog_load(&cat, NULL, &d), 0);
	static const struct {
		const char *sets[3];
		int n;
		int64_t want;
	} CASES[] = {
		{{NULL}, 0, 8192},
		{{"hardware=rtx-4090", "engine_profile=llama.cpp", "weight_format=q4_k_m"}, 3, 512},
		{{"engine_profile=vllm-v0"}, 1, 2048},
		{{"engine_profile=llama.cpp", "hardware=rtx-4090", "engine.max_num_batched_tokens=2048"},
		 3, 2048},
	};
	for (size_t i = 0; i < sizeof(CASES) / sizeof(CASES[0]); i++) {
		if (scenario_load(sc, NULL, CASES[i].sets, CASES[i].n, &d) != 0 ||
		    deploy_resolve(sc, cat, NULL, &d) != 0)
			fail_msg("case %zu: %s", i, d.msg);
		assert_int_equal(sc->engine.max_num_batched_tokens, CASES[i].want);
	}
	catalog_free(cat);
	free(sc);
}

/* The scenario of the --set lines sets[0..n) and the perf model it runs. */
static void scenario_model(struct scenario *sc, const struct catalog *cat,
			   const char *const *sets, size_t n, struct perf_model *pm)
{
	struct diag d;
	diag_init(&d);
	struct perf_profile *prof = NULL;
	struct engine_config cfg;
	if (scenario_load(sc, NULL, sets, n, &d) != 0 || deploy_resolve(sc, cat, NULL, &d) != 0 ||
	    deploy_engine(sc, cat, pm, &prof, &cfg, &d) != 0)
		fail_msg("%s", d.msg);
	perf_profile_free(prof);
}

/* gpt-oss-20b in wf on an RTX PRO 6000 under llama.cpp, with the --set
 * line key when not NULL: the scenario and the perf model it runs. */
static void pro6000_gpt_oss(struct scenario *sc, const struct catalog *cat, const char *wf,
			    const char *key, struct perf_model *pm)
{
	char format[64];
	snprintf(format, sizeof(format), "weight_format=%s", wf);
	const char *sets[5] = { "hardware=rtx-pro-6000", "model=gpt-oss-20b", format,
				"engine_profile=llama.cpp", key };
	scenario_model(sc, cat, sets, key ? 5 : 4, pm);
}

/* engine.flash_attention: on by default; false reaches the perf model, which
 * then charges llama.cpp's attention without it (slower at long context). */
static void test_flash_attention_key(void **state)
{
	(void)state;
	struct scenario *sc = malloc(sizeof(*sc));
	assert_non_null(sc);
	struct diag d;
	diag_init(&d);
	struct catalog *cat = NULL;
	assert_int_equal(catalog_load(&cat, NULL, &d), 0);
	struct perf_model on, off;
	pro6000_gpt_oss(sc, cat, "mxfp4", NULL, &on);
	assert_true(sc->flash_attention);
	pro6000_gpt_oss(sc, cat, "mxfp4", "engine.flash_attention=false", &off);
	assert_false(sc->flash_attention);
	assert_true(off.engine.attention_scale < on.engine.attention_scale);
	const char *bad[1] = { "engine.flash_attention=maybe" };
	assert_int_equal(scenario_load(sc, NULL, bad, 1, &d), DIAG_EINPUT);
	catalog_free(cat);
	free(sc);
}

/* engine.build: 0 (a current build) by default; a llama.cpp build up to
 * 6210 reaches the perf model, which then charges its host-routed MoE. */
static void test_engine_build_key(void **state)
{
	(void)state;
	struct scenario *sc = malloc(sizeof(*sc));
	assert_non_null(sc);
	struct diag d;
	diag_init(&d);
	struct catalog *cat = NULL;
	assert_int_equal(catalog_load(&cat, NULL, &d), 0);
	struct perf_model now, old;
	pro6000_gpt_oss(sc, cat, "gguf-mxfp4", NULL, &now);
	assert_true(sc->engine_build == 0);
	pro6000_gpt_oss(sc, cat, "gguf-mxfp4", "engine.build=6205", &old);
	assert_true(sc->engine_build == 6205);
	assert_true(now.ns_host_routing_per_token == 0 && old.ns_host_routing_per_token > 0);
	const char *bad[1] = { "engine.build=-3" };
	assert_int_equal(scenario_load(sc, NULL, bad, 1, &d), DIAG_EINPUT);
	catalog_free(cat);
	free(sc);
}

/* speculative.*: off by default; when on, the engine settings carry the
 * expected tokens per verify step by output kind and the drafter's memory
 * shrinks the KV cache; mistakes name the key. */
static void test_speculative_keys(void **state)
{
	(void)state;
	struct scenario *sc = malloc(sizeof(*sc));
	assert_non_null(sc);
	struct diag d;
	diag_init(&d);
	assert_int_equal(scenario_load(sc, NULL, NULL, 0, &d), 0);
	assert_string_equal(sc->spec.method, "off");
	struct spec_opts so;
	deploy_spec_opts(sc, &so);
	assert_int_equal(so.method, SPEC_OFF);

	struct catalog *cat = NULL;
	assert_int_equal(catalog_load(&cat, NULL, &d), 0);
	assert_int_equal(deploy_resolve(sc, cat, NULL, &d), 0);
	struct perf_model *pm = malloc(sizeof(*pm));
	assert_non_null(pm);
	struct perf_profile *prof = NULL;
	struct engine_config off, on;
	assert_int_equal(deploy_engine(sc, cat, pm, &prof, &off, &d), 0);
	assert_int_equal(off.spec_k, 0);
	assert_int_equal(pm->spec.method, SPEC_OFF);

	const char *sets[] = {"speculative.method=draft", "speculative.draft_model=llama-3.1-8b",
			      "speculative.k=4", "speculative.acceptance_code=0.9",
			      "speculative.acceptance_rate=0.5"};
	assert_int_equal(scenario_load(sc, NULL, sets, 5, &d), 0);
	deploy_spec_opts(sc, &so);
	assert_int_equal(so.method, SPEC_DRAFT);
	assert_string_equal(so.draft_model, "llama-3.1-8b");
	assert_int_equal(deploy_resolve(sc, cat, NULL, &d), 0);
	assert_int_equal(deploy_engine(sc, cat, pm, &prof, &on, &d), 0);
	assert_int_equal(on.spec_k, 4);
	assert_int_equal(pm->spec.k, 4);
	assert_true(on.spec_tokens[OUT_KIND_CODE] == spec_expected_tokens(0.9, 4));
	assert_true(on.spec_tokens[OUT_KIND_PROSE] == spec_expected_tokens(0.5, 4));
	assert_true(on.spec_tokens[OUT_KIND_UNKNOWN] == spec_expected_tokens(0.5, 4));
	/* an 8B draft beside an 8B target: its weights and KV take room */
	assert_true(on.kv_cache_tokens < off.kv_cache_tokens / 2 + off.kv_cache_tokens / 4);
	free(pm);
	catalog_free(cat);

	const char *bad_method[] = {"speculative.method=medusa"};
	assert_int_equal(scenario_load(sc, NULL, bad_method, 1, &d), DIAG_EINPUT);
	assert_string_equal(d.msg, "(built-in default): speculative.method 'medusa' (expected off, "
				   "draft, mtp, eagle3, ngram or suffix)");
	const char *no_draft[] = {"speculative.method=draft"};
	diag_init(&d);
	assert_int_equal(scenario_load(sc, NULL, no_draft, 1, &d), DIAG_EINPUT);
	assert_non_null(strstr(d.msg, "needs speculative.draft_model"));
	const char *bad_k[] = {"speculative.k=17"};
	diag_init(&d);
	assert_int_equal(scenario_load(sc, NULL, bad_k, 1, &d), DIAG_EINPUT);
	assert_non_null(strstr(d.msg, "speculative.k"));
	free(sc);
}

/* The acceptance as vLLM logs it, each its own key: the logged draft
 * acceptance rate 0.511 at k 3 is per-token 0.7 (0.7 (1 - 0.343) / (0.3 x
 * 3) = 0.5110), as are the mean acceptance length 2.533 and the position
 * rates 0.7, 0.49, 0.343; the report is told which was given.  Two ways at
 * once, a length past k + 1, rates of the wrong count or rising are errors
 * naming the key.  A model-free drafter without a key takes its published
 * figure. */
static void test_speculative_acceptance_inputs(void **state)
{
	(void)state;
	struct scenario *sc = malloc(sizeof(*sc));
	assert_non_null(sc);
	struct diag d;
	diag_init(&d);
	const char *rate[] = {"speculative.method=mtp", "speculative.draft_acceptance_rate=0.511"};
	assert_int_equal(scenario_load(sc, NULL, rate, 2, &d), 0);
	assert_string_equal(sc->spec.given, "draft_acceptance_rate");
	assert_true(fabs(sc->spec.alpha[OUT_KIND_UNKNOWN] - 0.7) < 5e-4);
	assert_non_null(strstr(sc->spec.given_text, "vLLM draft acceptance rate 0.511 at k 3"));
	const char *len[] = {"speculative.method=mtp", "speculative.mean_acceptance_length=2.533"};
	assert_int_equal(scenario_load(sc, NULL, len, 2, &d), 0);
	assert_string_equal(sc->spec.given, "mean_acceptance_length");
	assert_true(fabs(sc->spec.alpha[OUT_KIND_CODE] - 0.7) < 1e-4);
	const char *pos[] = {"speculative.method=mtp",
			     "speculative.position_acceptance_rates=[0.7,0.49,0.343]"};
	assert_int_equal(scenario_load(sc, NULL, pos, 2, &d), 0);
	assert_string_equal(sc->spec.given, "position_acceptance_rates");
	assert_true(fabs(sc->spec.alpha[OUT_KIND_PROSE] - 0.7) < 1e-9);
	const char *tok[] = {"speculative.method=mtp", "speculative.acceptance_rate=0.6",
			     "speculative.acceptance_prose=0.4"};
	assert_int_equal(scenario_load(sc, NULL, tok, 3, &d), 0);
	assert_string_equal(sc->spec.given, "per_token");
	assert_true(sc->spec.alpha[OUT_KIND_UNKNOWN] == 0.6 && sc->spec.alpha[OUT_KIND_PROSE] == 0.4);
	/* the rate given for one kind is said first, not hidden behind the
	 * others' (it once read "per-token rate 0.6" alone) */
	assert_string_equal(sc->spec.given_text, "per-token rate by output kind, prose 0.4 "
			    "(speculative.acceptance_<kind>); the other kinds: per-token rate 0.6 "
			    "(speculative.acceptance_rate)");
	const char *none[] = {"speculative.method=mtp"};
	assert_int_equal(scenario_load(sc, NULL, none, 1, &d), 0);
	assert_string_equal(sc->spec.given, "default");
	assert_true(sc->spec.alpha[OUT_KIND_UNKNOWN] == SCENARIO_DEFAULT_SPEC_ACCEPTANCE);
	/* n-gram on agent traffic: 2.31 tokens per step at k 5 */
	const char *ngram[] = {"speculative.method=ngram"};
	assert_int_equal(scenario_load(sc, NULL, ngram, 1, &d), 0);
	assert_string_equal(sc->spec.given, "method_default");
	assert_true(fabs(spec_expected_tokens(sc->spec.alpha[OUT_KIND_CODE], 5) - 2.31) < 1e-9);
	assert_true(sc->spec.alpha[OUT_KIND_PROSE] < sc->spec.alpha[OUT_KIND_CODE]);
	const char *eagle[] = {"speculative.method=eagle3"};
	assert_int_equal(scenario_load(sc, NULL, eagle, 1, &d), 0);
	assert_true(fabs(spec_expected_tokens(sc->spec.alpha[OUT_KIND_CODE], 7) - 3.62) < 1e-9);

	const char *both[] = {"speculative.method=mtp", "speculative.acceptance_rate=0.6",
			      "speculative.mean_acceptance_length=2"};
	diag_init(&d);
	assert_int_equal(scenario_load(sc, NULL, both, 3, &d), DIAG_EINPUT);
	assert_string_equal(d.msg, "(built-in default): speculative.acceptance_rate and "
				   "speculative.mean_acceptance_length are both given (expected one "
				   "way of giving the acceptance)");
	const char *longer[] = {"speculative.method=mtp", "speculative.mean_acceptance_length=4.5"};
	diag_init(&d);
	assert_int_equal(scenario_load(sc, NULL, longer, 2, &d), DIAG_EINPUT);
	assert_non_null(strstr(d.msg, "speculative.mean_acceptance_length 4.5 (expected 1 to k + 1 = 4"));
	const char *count[] = {"speculative.method=mtp",
			       "speculative.position_acceptance_rates=[0.7,0.5]"};
	diag_init(&d);
	assert_int_equal(scenario_load(sc, NULL, count, 2, &d), DIAG_EINPUT);
	assert_non_null(strstr(d.msg, "has 2 rates (expected one per draft position"));
	const char *rising[] = {"speculative.method=mtp",
				"speculative.position_acceptance_rates=[0.5,0.6,0.1]"};
	diag_init(&d);
	assert_int_equal(scenario_load(sc, NULL, rising, 2, &d), DIAG_EINPUT);
	assert_non_null(strstr(d.msg, "position_acceptance_rates[1] 0.6 is above the rate before it"));
	const char *pct[] = {"speculative.method=mtp", "speculative.draft_acceptance_rate=51.1"};
	diag_init(&d);
	assert_int_equal(scenario_load(sc, NULL, pct, 2, &d), DIAG_EINPUT);
	assert_string_equal(d.msg, "--set speculative.draft_acceptance_rate=51.1: "
				   "speculative.draft_acceptance_rate: expected a number in [0, 1]");
	free(sc);
}

/* faults.detection: a probe by default, with Kubernetes' probe figures
 * and the SDKs' timeout and back-off; instant keeps the failure seen at
 * once; another name is an error naming the key. */
static void test_fault_detection_keys(void **state)
{
	(void)state;
	struct scenario *sc = malloc(sizeof(*sc));
	assert_non_null(sc);
	struct diag d;
	diag_init(&d);
	assert_int_equal(scenario_load(sc, NULL, NULL, 0, &d), 0);
	assert_string_equal(sc->faults_detection, "probe");
	assert_true(sc->faults_probe_period_s == 10 && sc->faults_probe_failure_threshold == 3 &&
		    sc->faults_probe_timeout_s == 1 && sc->faults_client_timeout_s == 600);
	assert_true(sc->faults_retry_initial_s == 0.5 && sc->faults_retry_max_s == 8);
	const char *inst[] = {"faults.detection=instant", "faults.probe_period_s=5"};
	assert_int_equal(scenario_load(sc, NULL, inst, 2, &d), 0);
	assert_string_equal(sc->faults_detection, "instant");
	const char *bad[] = {"faults.detection=heartbeat"};
	assert_int_equal(scenario_load(sc, NULL, bad, 1, &d), DIAG_EINPUT);
	assert_string_equal(d.msg, "(built-in default): faults.detection 'heartbeat' (expected probe "
				   "or instant)");
	const char *zero[] = {"faults.probe_failure_threshold=0"};
	diag_init(&d);
	assert_int_equal(scenario_load(sc, NULL, zero, 1, &d), DIAG_EINPUT);
	assert_non_null(strstr(d.msg, "faults.probe_failure_threshold: expected an integer in [1, 1000]"));
	free(sc);
}

/* autoscale.policy: keda by default with Kubernetes' and KEDA's figures;
 * each policy's keys reach the lifecycle; a key of another policy, or a
 * name none has, is an input error naming the key. */
static void test_autoscale_keys(void **state)
{
	(void)state;
	struct scenario *sc = malloc(sizeof(*sc));
	assert_non_null(sc);
	struct diag d;
	diag_init(&d);
	assert_int_equal(scenario_load(sc, NULL, NULL, 0, &d), 0);
	assert_int_equal(sc->autoscale_policy, AUTOSCALE_POLICY_KEDA);
	assert_true(sc->hpa.tolerance == 0.1 && sc->hpa.down_window_s == 300.0);
	assert_true(sc->hpa.up_window_s == 0.0 && sc->hpa.up_pods == 4);
	assert_true(sc->hpa.up_percent == 100.0 && sc->hpa.up_period_s == 15.0);
	assert_true(sc->hpa.metric_lag_s == 30.0 && sc->hpa.polling_s == 30.0);
	const char *hpa[] = {"autoscale.policy=hpa", "autoscale.tolerance=0.2",
			     "autoscale.scale_down_window_s=60", "autoscale.metric_lag_s=0"};
	assert_int_equal(scenario_load(sc, NULL, hpa, 4, &d), 0);
	assert_int_equal(sc->autoscale_policy, AUTOSCALE_POLICY_HPA);
	assert_true(sc->hpa.tolerance == 0.2 && sc->hpa.down_window_s == 60.0);
	static const struct {
		const char *sets[2];
		const char *want;
	} bad[] = {
		{{"autoscale.policy=knative", NULL},
		 "--set autoscale.policy=knative: autoscale.policy: expected \"keda\", \"hpa\" or "
		 "\"cooldown\""},
		{{"autoscale.policy=cooldown", "autoscale.tolerance=0.2"},
		 "(built-in default): autoscale.tolerance: the cooldown policy does not use it "
		 "(expected autoscale.policy hpa or keda, or the key left out)"},
		{{"autoscale.policy=hpa", "autoscale.polling_interval_s=10"},
		 "(built-in default): autoscale.polling_interval_s: the hpa policy does not use it "
		 "(expected autoscale.policy keda, or the key left out)"},
		{{"autoscale.policy=hpa", "autoscale.cooldown_s=60"},
		 "(built-in default): autoscale.cooldown_s: the hpa policy does not use it (expected "
		 "autoscale.policy keda or cooldown, or the key left out)"},
		{{"autoscale.scale_down_percent=150", NULL},
		 "--set autoscale.scale_down_percent=150: autoscale.scale_down_percent: expected a "
		 "number in [0, 100]"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		diag_init(&d);
		int n = bad[i].sets[1] ? 2 : 1;
		assert_int_equal(scenario_load(sc, NULL, bad[i].sets, n, &d), DIAG_EINPUT);
		assert_string_equal(d.msg, bad[i].want);
	}
	free(sc);
}

/* startup.* reach the deployment: a TP 4 replica's start-up is the sum of
 * its parts, and the lifecycle starts it in that time; an engine that loads
 * on demand starts in the node's part and loads its model on the first
 * call; a keep-alive for an engine that never unloads is an input error. */
static void test_startup_keys(void **state)
{
	(void)state;
	struct scenario *sc = malloc(sizeof(*sc));
	struct deployment *dp = malloc(sizeof(*dp));
	assert_non_null(sc);
	assert_non_null(dp);
	struct diag d;
	diag_init(&d);
	struct catalog *cat = NULL;
	assert_int_equal(catalog_load(&cat, NULL, &d), 0);
	const char *tp4[] = {"model=llama-3.1-70b", "tensor_parallel_size=4", "replicas=2",
			     "autoscale.enabled=true", "startup.compile_cache=true",
			     "startup.image_prepulled=true"};
	assert_int_equal(scenario_load(sc, NULL, tp4, 6, &d), 0);
	assert_int_equal(deploy_build(dp, sc, cat, NULL, NULL, &d), 0);
	const struct startup_parts *p = &dp->pool[0].startup;
	assert_true(p->image_pull_s == 0.0 && p->compile_s == 9.2);
	assert_true(p->engine_start_s == 22.0);
	assert_true(fabs(p->weight_load_s - dp->pool[0].weight_bytes / 4e9) < 1e-9);
	double sum = p->provision_s + p->image_pull_s + p->engine_start_s + p->weight_load_s +
		     p->compile_s + p->cuda_graph_s + p->warmup_s;
	assert_true(fabs(p->total_s - sum) < 1e-9);
	assert_int_equal(dp->elastic.startup_ns, llround(sum * 1e9));
	assert_false(dp->pool[0].cfg.load_on_demand);
	deploy_release(dp);

	const char *oll[] = {"hardware=apple-m4-max-40c", "engine_profile=ollama",
			     "weight_format=gguf-q4-k-m", "kv_cache_dtype=fp16"};
	assert_int_equal(scenario_load(sc, NULL, oll, 4, &d), 0);
	if (deploy_build(dp, sc, cat, NULL, NULL, &d) != 0)
		fail_msg("%s", d.msg);
	const struct engine_config *c = &dp->pool[0].cfg;
	assert_true(c->load_on_demand);
	assert_int_equal(c->keep_alive_ns, 300 * INT64_C(1000000000));
	assert_int_equal(c->model_load_ns, llround(dp->pool[0].startup.model_load_s * 1e9));
	assert_true(dp->on_demand);
	deploy_release(dp);
	const char *pin[] = {"hardware=apple-m4-max-40c", "engine_profile=ollama",
			     "weight_format=gguf-q4-k-m", "kv_cache_dtype=fp16",
			     "startup.keep_alive_s=-1"};
	assert_int_equal(scenario_load(sc, NULL, pin, 5, &d), 0);
	assert_int_equal(deploy_build(dp, sc, cat, NULL, NULL, &d), 0);
	assert_true(dp->pool[0].cfg.load_on_demand && dp->pool[0].cfg.keep_alive_ns < 0);
	deploy_release(dp);

	const char *bad[] = {"startup.keep_alive_s=600"};
	assert_int_equal(scenario_load(sc, NULL, bad, 1, &d), 0);
	assert_int_equal(deploy_build(dp, sc, cat, NULL, NULL, &d), DIAG_EINPUT);
	assert_string_equal(d.msg, "(built-in default): startup.keep_alive_s: engine 'vllm' loads "
				   "its model at start and never unloads it (expected no "
				   "startup.keep_alive_s, or an engine that loads on demand: "
				   "engine_profile ollama)");
	diag_init(&d);
	const char *bad_type[] = {"startup.keep_alive_s=5m"};
	assert_int_equal(scenario_load(sc, NULL, bad_type, 1, &d), DIAG_EINPUT);
	assert_string_equal(d.msg, "--set startup.keep_alive_s=5m: startup.keep_alive_s: expected "
				   "null (the engine's), a negative number (never unload) or seconds "
				   "in [0, 1e9]");
	diag_init(&d);
	const char *bad_bool[] = {"startup.compile_cache=yes"};
	assert_int_equal(scenario_load(sc, NULL, bad_bool, 1, &d), DIAG_EINPUT);
	assert_string_equal(d.msg, "--set startup.compile_cache=yes: startup.compile_cache: expected "
				   "true or false");
	catalog_free(cat);
	free(dp);
	free(sc);
}

/* cost.trace_start_utc: the clock off-peak API rates are read on, parsed
 * once (2026-12-07T08:00:00Z is 1,796,630,400 s after 1970); a value that
 * is no date is an error naming the key. */
static void test_trace_start_key(void **state)
{
	(void)state;
	struct scenario *sc = malloc(sizeof(*sc));
	assert_non_null(sc);
	struct diag d;
	diag_init(&d);
	const char *ok[] = {"cost.trace_start_utc=2026-12-07T08:00:00Z"};
	assert_int_equal(scenario_load(sc, NULL, ok, 1, &d), 0);
	assert_true(sc->cost.trace_start_ns == INT64_C(1796630400) * 1000000000);
	const char *zone[] = {"cost.trace_start_utc=2026-12-07T09:00:00+01:00"};
	assert_int_equal(scenario_load(sc, NULL, zone, 1, &d), 0);
	assert_true(sc->cost.trace_start_ns == INT64_C(1796630400) * 1000000000);
	const char *bad[] = {"cost.trace_start_utc=monday"};
	assert_int_equal(scenario_load(sc, NULL, bad, 1, &d), DIAG_EINPUT);
	assert_string_equal(d.msg, "(built-in default): cost.trace_start_utc: 'monday' (expected a "
				   "date and time such as 2026-12-07T08:00:00Z; no zone means UTC)");
	free(sc);
}

/* A chip that shares its memory with its CPU is one GPU: a replica of an
 * Apple machine over two is refused by key before anything runs; DGX
 * Spark's link clusters two units, not four. */
static void test_single_chip_tp(void **state)
{
	(void)state;
	struct scenario *sc = malloc(sizeof(*sc));
	struct deployment *dp = malloc(sizeof(*dp));
	assert_non_null(sc);
	assert_non_null(dp);
	struct diag d;
	diag_init(&d);
	struct catalog *cat = NULL;
	assert_int_equal(catalog_load(&cat, NULL, &d), 0);
	const char *mac[] = {"hardware=apple-m4-max-40c", "tensor_parallel_size=2"};
	assert_int_equal(scenario_load(sc, NULL, mac, 2, &d), 0);
	assert_int_equal(deploy_build(dp, sc, cat, NULL, NULL, &d), DIAG_EINPUT);
	assert_string_equal(d.msg, "(built-in default): tensor_parallel_size 2 x "
				   "pipeline_parallel_size 1: 'apple-m4-max-40c' shares its memory with "
				   "its CPU and has no link to another unit's GPU (expected at most 1 GPU "
				   "per replica)");
	diag_init(&d);
	const char *spark2[] = {"hardware=dgx-spark", "tensor_parallel_size=2"};
	assert_int_equal(scenario_load(sc, NULL, spark2, 2, &d), 0);
	if (deploy_build(dp, sc, cat, NULL, NULL, &d) != 0)
		fail_msg("%s", d.msg);
	deploy_release(dp);
	const char *spark4[] = {"hardware=dgx-spark", "tensor_parallel_size=4"};
	assert_int_equal(scenario_load(sc, NULL, spark4, 2, &d), 0);
	assert_int_equal(deploy_build(dp, sc, cat, NULL, NULL, &d), DIAG_EINPUT);
	assert_non_null(strstr(d.msg, "links at most two units (expected at most 2 GPUs per replica)"));
	catalog_free(cat);
	free(dp);
	free(sc);
}

/* A retention key without retention is no silent no-op: an error naming
 * the key. */
static void test_retention_key_without_mode(void **state)
{
	(void)state;
	struct scenario *sc = malloc(sizeof(*sc));
	assert_non_null(sc);
	struct diag d;
	diag_init(&d);
	const char *ttl[] = {"kv_retention.ttl_s=60"};
	assert_int_equal(scenario_load(sc, NULL, ttl, 1, &d), DIAG_EINPUT);
	assert_string_equal(d.msg, "(built-in default): kv_retention.ttl_s: retention is off and does "
				   "not use it (expected kv_retention.mode ttl, or the key left out)");
	diag_init(&d);
	const char *on[] = {"kv_retention.mode=ttl", "kv_retention.ttl_s=60"};
	assert_int_equal(scenario_load(sc, NULL, on, 2, &d), 0);
	free(sc);
}

/* disaggregation.*: both pools by name, distinct, one model and KV type,
 * a known link; its keys only with it; the deployment carries the pools
 * by index, the link's figures and the model's KV bytes a token. */
static void test_disaggregation_keys(void **state)
{
	(void)state;
	struct scenario *sc = malloc(sizeof(*sc));
	struct deployment *dp = malloc(sizeof(*dp));
	assert_non_null(sc);
	assert_non_null(dp);
	struct diag d;
	diag_init(&d);
	static const struct {
		const char *extra, *msg;
	} bad[] = {
		{"disaggregation.link=nvlink", "(built-in default): disaggregation.link: "
		 "disaggregation is off and does not use it (expected disaggregation.prefill_pool and "
		 "decode_pool, or the key left out)"},
		{"disaggregation.prefill_pool=p", "(built-in default): disaggregation.decode_pool: '' "
		 "(expected the name of one of the scenario's pools)"},
	};
	const char *pools = "pools=[{\"name\":\"p\",\"hardware\":\"h100-sxm\"},"
			    "{\"name\":\"d\",\"hardware\":\"h100-sxm\",\"replicas\":2}]";
	for (size_t i = 0; i < 2; i++) {
		const char *sets[] = {pools, bad[i].extra};
		diag_init(&d);
		assert_int_equal(scenario_load(sc, NULL, sets, 2, &d), DIAG_EINPUT);
		assert_string_equal(d.msg, bad[i].msg);
	}
	const char *same[] = {pools, "disaggregation.prefill_pool=p", "disaggregation.decode_pool=p"};
	diag_init(&d);
	assert_int_equal(scenario_load(sc, NULL, same, 3, &d), DIAG_EINPUT);
	assert_non_null(strstr(d.msg, "is the prefill pool too (expected two different pools)"));
	const char *dec[] = {pools, "disaggregation.prefill_pool=p", "disaggregation.decode_pool=d",
			     "disaggregation.decider=sometimes"};
	diag_init(&d);
	assert_int_equal(scenario_load(sc, NULL, dec, 4, &d), DIAG_EINPUT);
	assert_non_null(strstr(d.msg, "disaggregation.decider: 'sometimes' (expected \"uncached\" "
				      "or \"always\")"));
	struct catalog *cat = NULL;
	assert_int_equal(catalog_load(&cat, NULL, &d), 0);
	const char *link[] = {pools, "disaggregation.prefill_pool=p", "disaggregation.decode_pool=d",
			      "disaggregation.link=pcie"};
	assert_int_equal(scenario_load(sc, NULL, link, 4, &d), 0);
	diag_init(&d);
	assert_int_equal(deploy_build(dp, sc, cat, NULL, NULL, &d), DIAG_EINPUT);
	assert_non_null(strstr(d.msg, "disaggregation.link: 'pcie' (expected one of: nvlink, "
				      "infiniband, roce, ethernet)"));
	const char *other[] = {"pools=[{\"name\":\"p\",\"hardware\":\"h100-sxm\","
			       "\"kv_cache_dtype\":\"fp8\"},{\"name\":\"d\",\"hardware\":\"h100-sxm\"}]",
			       "disaggregation.prefill_pool=p", "disaggregation.decode_pool=d"};
	assert_int_equal(scenario_load(sc, NULL, other, 3, &d), 0);
	diag_init(&d);
	assert_int_equal(deploy_build(dp, sc, cat, NULL, NULL, &d), DIAG_EINPUT);
	assert_non_null(strstr(d.msg, "expected one model and KV cache type"));
	const char *ok[] = {pools, "disaggregation.prefill_pool=p", "disaggregation.decode_pool=d",
			    "disaggregation.decider=always", "disaggregation.layerwise=true"};
	assert_int_equal(scenario_load(sc, NULL, ok, 5, &d), 0);
	if (deploy_build(dp, sc, cat, NULL, NULL, &d) != 0)
		fail_msg("%s", d.msg);
	assert_true(dp->pd_on);
	assert_int_equal(dp->pd.prefill_pool, 0);
	assert_int_equal(dp->pd.decode_pool, 1);
	assert_true(dp->pd.always && dp->pd.layerwise && !dp->pd.buffered);
	assert_true(dp->pd.link.gbs == 50 && dp->pd.link.per_gpu);
	/* Llama-3.1-8B, bf16 KV: 32 layers x 2 x 8 KV heads x 128 x 2 bytes */
	assert_true(dp->pd.kv_bytes_per_token == 32.0 * 2 * 8 * 128 * 2);
	assert_int_equal(dp->pd.layers, 32);
	deploy_release(dp);
	catalog_free(cat);
	free(dp);
	free(sc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_disaggregation_keys),
		cmocka_unit_test(test_default),
		cmocka_unit_test(test_cost_keys),
		cmocka_unit_test(test_sets),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_chunk_follows_the_engine),
		cmocka_unit_test(test_flash_attention_key),
		cmocka_unit_test(test_engine_build_key),
		cmocka_unit_test(test_speculative_keys),
		cmocka_unit_test(test_speculative_acceptance_inputs),
		cmocka_unit_test(test_fault_detection_keys),
		cmocka_unit_test(test_autoscale_keys),
		cmocka_unit_test(test_startup_keys),
		cmocka_unit_test(test_trace_start_key),
		cmocka_unit_test(test_single_chip_tp),
		cmocka_unit_test(test_retention_key_without_mode),
		cmocka_unit_test(test_kv_tier_mode_keys),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
