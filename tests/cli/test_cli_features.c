/* SPDX-License-Identifier: Apache-2.0
 * One way in: every scenario feature (pools, API backends, KV tiers, an
 * autoscaler, faults, speculative decoding, start-up) against every command
 * that replays (replay, size, compare, whatif, sweep).  A command either
 * takes the feature, and then its figures are replay's with the feature
 * (so they move exactly as replay's move), or it refuses the feature by
 * key with exit status 2 before any replay, writing nothing.  Which
 * command takes what comes from one table (replay/deploy.c, COMMANDS).
 *
 * The team: `agentcap synth --engineers 3 --days 1 --seed 1` (671 calls),
 * on the default scenario one H100 with Llama-3.1-8B; the quoted cases of
 * the review are here: whatif with kv_tiers.host_gb=200 computes replay's
 * 1,922,299 prefill tokens with the tier written through (the default;
 * 1,920,427 filled by eviction, 1,952,683 without a tier), whatif on
 * scenarios/h100-plus-sonnet.json sends replay's share of calls to the API,
 * size with and without tiers differs as replay does, and sweep takes pools,
 * backends and tiers.  KV retention (kv_retention.*) and sticky sub-agents
 * (router.sticky_subagents) reach every command through deploy_engine and
 * the router settings; so do priority scheduling (scheduling.*) and the
 * per-team cap (router.team_max_inflight), through deploy_run.  size and
 * compare take disaggregation between two pools on one hardware (their
 * winner, a prefill:decode split, is replay's with those pool replicas) and
 * refuse it between pools on different hardware by the pools' key. */
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
#include <unistd.h>

#define TEAM "features_team3.jsonl.gz"
#define SCRATCH "features_scratch"

/* One feature: the keys that turn it on (as --set arguments, and as the
 * members of a sweep grid's "set"), over a base both runs share. */
struct feature {
	const char *name;          /* the key deploy_check names */
	const char *base;          /* --set arguments both runs have */
	const char *base_json;     /* the same as grid members ("" none) */
	const char *on;            /* --set arguments of the feature */
	const char *on_json;       /* the same as grid members */
	bool moves_replay;         /* replay's figures change with it */
	bool size_takes;           /* size and compare take it */
	const char *refused;       /* the key a refusal names (NULL: name) */
};

#define POOLS_ON "--set 'pools=[{\"name\":\"a\",\"hardware\":\"h100-sxm\"}," \
		 "{\"name\":\"b\",\"hardware\":\"l40s\"}]'"
#define POOLS_JSON "\"pools\":[{\"name\":\"a\",\"hardware\":\"h100-sxm\"}," \
		   "{\"name\":\"b\",\"hardware\":\"l40s\"}]"
/* disaggregation: prefill pool b, decode pool a, on the scenario's hardware */
#define PD_SETS "--set disaggregation.prefill_pool=b --set disaggregation.decode_pool=a"
#define PD_ON "--set 'pools=[{\"name\":\"a\"},{\"name\":\"b\"}]' " PD_SETS
#define PD_JSON "\"pools\":[{\"name\":\"a\"},{\"name\":\"b\"}]," \
		"\"disaggregation.prefill_pool\":\"b\",\"disaggregation.decode_pool\":\"a\""
#define BACKENDS_ON "--set 'backends=[{\"name\":\"sonnet\",\"price\":\"claude-sonnet-4-5\"," \
		    "\"ttft_model\":\"fixed\"}]' " \
		    "--set router.size_to=sonnet --set router.size_prompt_tokens=100000"
#define BACKENDS_JSON "\"backends\":[{\"name\":\"sonnet\",\"price\":\"claude-sonnet-4-5\"," \
		      "\"ttft_model\":\"fixed\"}]," \
		      "\"router.size_to\":\"sonnet\",\"router.size_prompt_tokens\":100000"
#define AUTOSCALE "--set replicas=2 --set autoscale.enabled=true --set autoscale.min_replicas=0"
#define AUTOSCALE_JSON "\"replicas\":2,\"autoscale.enabled\":true,\"autoscale.min_replicas\":0"
#define SPEC_ON "--set speculative.method=draft --set speculative.draft_model=llama-3.1-8b " \
		"--set speculative.acceptance_rate=0.8"
#define SPEC_JSON "\"speculative.method\":\"draft\",\"speculative.draft_model\":\"llama-3.1-8b\"," \
		  "\"speculative.acceptance_rate\":0.8"
#define STARTUP_ON "--set startup.provision_s=30 --set startup.storage_gbs=5"
#define STARTUP_JSON "\"startup.provision_s\":30,\"startup.storage_gbs\":5"

static const struct feature FEATURES[] = {
	{"pools", "", "", POOLS_ON, POOLS_JSON, true, false, NULL},
	{"backends", "", "", BACKENDS_ON, BACKENDS_JSON, true, true, NULL},
	{"kv_tiers", "", "", "--set kv_tiers.host_gb=200", "\"kv_tiers.host_gb\":200", true, true, NULL},
	/* how the host tier fills, and whether steps wait for its stores */
	{"kv_tiers", "--set kv_tiers.host_gb=200 --set kv_tiers.mode=evict",
	 "\"kv_tiers.host_gb\":200,\"kv_tiers.mode\":\"evict\"", "--set kv_tiers.host_gb=200",
	 "\"kv_tiers.host_gb\":200", true, true, NULL},
	{"kv_tiers", "--set kv_tiers.host_gb=200", "\"kv_tiers.host_gb\":200",
	 "--set kv_tiers.host_gb=200 --set kv_tiers.async_store=false",
	 "\"kv_tiers.host_gb\":200,\"kv_tiers.async_store\":false", true, true, NULL},
	{"autoscale.enabled", "--set replicas=2", "\"replicas\":2", AUTOSCALE, AUTOSCALE_JSON, true,
	 false, NULL},
	{"faults", "--set replicas=2", "\"replicas\":2",
	 "--set replicas=2 --set 'faults.list=[{\"replica\":0,\"at_s\":30000,\"repair_s\":3600}]'",
	 "\"replicas\":2,\"faults.list\":[{\"replica\":0,\"at_s\":30000,\"repair_s\":3600}]", true,
	 false, NULL},
	{"speculative.method", "", "", SPEC_ON, SPEC_JSON, true, true, NULL},
	/* start-up alone changes nothing (no replica starts during a run
	 * without a lifecycle), in replay as in every command */
	{"startup", "", "", STARTUP_ON, STARTUP_JSON, false, true, NULL},
	/* KV retention across tool pauses, on a cache of 135K tokens that this
	 * team's prompts (~121K) overflow when two sessions overlap: the paused
	 * prefix is kept instead of the one-off work beside it */
	{"kv_retention", "--set engine.kv_cache_tokens=135000", "\"engine.kv_cache_tokens\":135000",
	 "--set engine.kv_cache_tokens=135000 --set kv_retention.mode=ttl --set kv_retention.ttl_s=60",
	 "\"engine.kv_cache_tokens\":135000,\"kv_retention.mode\":\"ttl\","
	 "\"kv_retention.ttl_s\":60", true, true, NULL},
	/* sticky sub-agents on one replica change nothing either */
	{"router.sticky_subagents", "--set router.policy=session_affinity",
	 "\"router.policy\":\"session_affinity\"",
	 "--set router.policy=session_affinity --set router.sticky_subagents=true",
	 "\"router.policy\":\"session_affinity\",\"router.sticky_subagents\":true", false, true,
	 NULL},
	/* prefill/decode disaggregation between two pools on one hardware:
	 * size searches the prefill:decode split on each hardware option */
	{"disaggregation", "", "", PD_ON, PD_JSON, true, true, NULL},
	/* ... between pools on different hardware: size refuses the pools */
	{"disaggregation", POOLS_ON, POOLS_JSON,
	 POOLS_ON " --set disaggregation.prefill_pool=b --set disaggregation.decode_pool=a",
	 POOLS_JSON ",\"disaggregation.prefill_pool\":\"b\",\"disaggregation.decode_pool\":\"a\"",
	 true, false, "pools"},
	/* priority scheduling: on this team's load no call waits behind
	 * another class, so replay's figures stay, in every command alike */
	{"scheduling.policy", "--set engine.kv_cache_tokens=135000",
	 "\"engine.kv_cache_tokens\":135000",
	 "--set engine.kv_cache_tokens=135000 --set scheduling.policy=priority",
	 "\"engine.kv_cache_tokens\":135000,\"scheduling.policy\":\"priority\"", false, true,
	 NULL},
	/* a cap of one call in flight per team (every call is team "none"
	 * here): calls wait at the router, in every command alike */
	{"router.team_max_inflight", "", "", "--set router.team_max_inflight=1",
	 "\"router.team_max_inflight\":1", true, true, NULL},
	/* ... and with an autoscaler, every cold start */
	{"startup", AUTOSCALE, AUTOSCALE_JSON, AUTOSCALE " " STARTUP_ON,
	 AUTOSCALE_JSON "," STARTUP_JSON, true, false, "autoscale.enabled"},
};
#define N_FEATURES (sizeof(FEATURES) / sizeof(FEATURES[0]))

/* What a run said, for comparing commands. */
struct fig {
	double completed, p95_ttft_ms, p99_ttft_ms, hit, prefill, busy, api_share, duration_s;
};

static int setup(void **state)
{
	(void)state;
	struct cli_out r = cli_run("synth --engineers 3 --days 1 --seed 1 -o " TEAM);
	int rc = r.status;
	cli_out_free(&r);
	return rc != 0 || system("mkdir -p " SCRATCH) != 0;
}

static double num(const cJSON *j, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, key);
	if (!cJSON_IsNumber(v))
		fail_msg("no number '%s' in the JSON", key);
	return v->valuedouble;
}

static cJSON *run_json(const char *args)
{
	struct cli_out r = cli_run(args);
	if (r.status != 0 && r.status != 1)
		fail_msg("agentcap %s: exit %d: %s", args, r.status, r.err);
	cJSON *j = cJSON_Parse(r.out);
	if (!j)
		fail_msg("agentcap %s: no JSON on standard output", args);
	cli_out_free(&r);
	return j;
}

/* replay's figures; scaled: as size replays the team (resampled, seed 1);
 * replicas > 0: that many replicas of tp GPUs, of which prefill > 0 in
 * PD_ON's prefill pool and the others in its decode pool. */
static struct fig replay_pd(const char *sets, bool scaled, int32_t replicas, int32_t tp,
			    int32_t prefill)
{
	char args[4096], rep[160] = "";
	if (replicas > 0 && prefill > 0)
		snprintf(rep, sizeof(rep), " --set 'pools=[{\"name\":\"a\",\"replicas\":%d},"
			 "{\"name\":\"b\",\"replicas\":%d}]' --set tensor_parallel_size=%d",
			 (int)(replicas - prefill), (int)prefill, (int)tp);
	else if (replicas > 0)
		snprintf(rep, sizeof(rep), " --set replicas=%d --set tensor_parallel_size=%d",
			 (int)replicas, (int)tp);
	snprintf(args, sizeof(args), "replay " TEAM " --json - %s%s%s", scaled ?
		 "--engineers 3 --seed 1 " : "", sets, rep);
	cJSON *j = run_json(args);
	struct fig f = {.completed = num(j, "completed"), .p95_ttft_ms = num(j, "p95_ttft_ms"),
			.p99_ttft_ms = num(j, "p99_ttft_ms"), .hit = num(j, "prefix_cache_hit_rate"),
			.prefill = num(j, "computed_prefill_tokens"),
			.busy = num(j, "gpu_busy_fraction"), .duration_s = num(j, "duration_s")};
	const cJSON *b = cJSON_GetObjectItemCaseSensitive(j, "backends");
	if (b)
		f.api_share = num(b, "api_share");
	cJSON_Delete(j);
	return f;
}

static struct fig replay_shape(const char *sets, bool scaled, int32_t replicas, int32_t tp)
{
	return replay_pd(sets, scaled, replicas, tp, 0);
}

static struct fig replay_fig(const char *sets, bool scaled, int32_t replicas)
{
	return replay_shape(sets, scaled, replicas, 1);
}

static bool fig_equal(const struct fig *a, const struct fig *b)
{
	return a->completed == b->completed && a->p95_ttft_ms == b->p95_ttft_ms &&
	       a->p99_ttft_ms == b->p99_ttft_ms && a->hit == b->hit && a->prefill == b->prefill &&
	       a->api_share == b->api_share && a->duration_s == b->duration_s;
}

/* The row of key in a whatif result; field "a": as recorded. */
static double whatif_row(const cJSON *j, const char *key)
{
	const cJSON *rows = cJSON_GetObjectItemCaseSensitive(j, "rows");
	const cJSON *r;
	cJSON_ArrayForEach(r, rows)
	{
		const cJSON *k = cJSON_GetObjectItemCaseSensitive(r, "key");
		if (cJSON_IsString(k) && strcmp(k->valuestring, key) == 0)
			return num(r, "a");
	}
	fail_msg("no whatif row '%s'", key);
	return 0;
}

/* whatif's "as recorded" side: the trace as recorded on the scenario. */
static struct fig whatif_fig(const char *sets)
{
	char args[4096];
	snprintf(args, sizeof(args), "whatif no-retry " TEAM " --json - %s", sets);
	cJSON *j = run_json(args);
	struct fig f = {.completed = whatif_row(j, "completed"),
			.p99_ttft_ms = whatif_row(j, "p99_ttft_ms"),
			.hit = whatif_row(j, "prefix_cache_hit_rate"), /* in % */
			.prefill = whatif_row(j, "prefill_tokens_computed"),
			.duration_s = whatif_row(j, "duration_s")};
	cJSON_Delete(j);
	return f;
}

/* One sweep cell of the team with members `set` in the grid's "set". */
static cJSON *sweep_row(const char *set, int *status)
{
	FILE *fp = fopen("features_grid.json", "w"); /* traces: beside the grid */
	assert_non_null(fp);
	fprintf(fp, "{\"set\": {%s}, \"traces\": [\"%s\"], \"seeds\": [1], "
		"\"grid\": {\"name\": [\"cell\"]}}\n", set, TEAM);
	assert_int_equal(fclose(fp), 0);
	unlink(SCRATCH "/rows.jsonl");
	struct cli_out r = cli_run("sweep features_grid.json -o " SCRATCH "/rows.jsonl --jobs 1");
	*status = r.status;
	if (r.status != 0) {
		cli_out_free(&r);
		return NULL;
	}
	cli_out_free(&r);
	char *text = cli_slurp(SCRATCH "/rows.jsonl", NULL);
	assert_non_null(text);
	cJSON *j = cJSON_Parse(text);
	free(text);
	assert_non_null(j);
	return j;
}

static struct fig sweep_fig(const char *set)
{
	int status;
	cJSON *j = sweep_row(set, &status);
	if (!j)
		fail_msg("sweep with {%s}: exit %d", set, status);
	const cJSON *t = cJSON_GetObjectItemCaseSensitive(j, "ttft_ms");
	struct fig f = {.completed = num(j, "completed"), .p95_ttft_ms = num(t, "p95"),
			.p99_ttft_ms = num(t, "p99"), .hit = num(j, "prefix_cache_hit_rate"),
			.busy = num(j, "gpu_busy_fraction"), .duration_s = num(j, "duration_s")};
	cJSON_Delete(j);
	return f;
}

/* size's winner on h100-sxm, and its replicas, TP and prefill replicas
 * (0: not disaggregated). */
static struct fig size_fig(const char *sets, int32_t *replicas, int32_t *tp, int32_t *prefill)
{
	char args[4096];
	snprintf(args, sizeof(args), "size --engineers 3 --trace " TEAM " --hardware h100-sxm "
		 "--jobs 1 --json - %s", sets);
	cJSON *j = run_json(args);
	const cJSON *opt = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(j, "options"), 0);
	assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(opt, "found")));
	const cJSON *b = cJSON_GetObjectItemCaseSensitive(opt, "best");
	struct fig f = {.p95_ttft_ms = num(b, "p95_ttft_ms"), .hit = num(b, "prefix_cache_hit_rate"),
			.busy = num(b, "gpu_busy_fraction")};
	const cJSON *api = cJSON_GetObjectItemCaseSensitive(b, "api_share");
	if (api)
		f.api_share = api->valuedouble;
	*replicas = (int32_t)num(b, "replicas");
	*tp = (int32_t)num(b, "tensor_parallel_size");
	const cJSON *p = cJSON_GetObjectItemCaseSensitive(b, "prefill_replicas");
	*prefill = p ? (int32_t)num(b, "prefill_replicas") : 0;
	if (p && num(b, "decode_replicas") != *replicas - *prefill)
		fail_msg("size %s: prefill and decode replicas do not add up", sets);
	cJSON_Delete(j);
	return f;
}

/* A refusal: exit 2 naming the key and the command, nothing written. */
static void expect_refused(const char *cmd, const char *sets, const char *key, const char *name)
{
	char args[4096], want[128];
	unlink(SCRATCH "/refused.json");
	snprintf(args, sizeof(args), "%s --json " SCRATCH "/refused.json %s", cmd, sets);
	struct cli_out r = cli_run(args);
	snprintf(want, sizeof(want), "%s: agentcap %s does not take it: ", key, name);
	if (r.status != 2 || !strstr(r.err, want))
		fail_msg("agentcap %s: exit %d, expected 2 with '%s': %s", args, r.status, want,
			 r.err);
	assert_int_not_equal(access(SCRATCH "/refused.json", F_OK), 0);
	cli_out_free(&r);
}

static void test_replay_moves(void **state)
{
	(void)state;
	for (size_t i = 0; i < N_FEATURES; i++) {
		const struct feature *f = &FEATURES[i];
		struct fig off = replay_fig(f->base, false, 0), on = replay_fig(f->on, false, 0);
		if (fig_equal(&off, &on) == f->moves_replay)
			fail_msg("replay with %s: expected the figures to %s", f->name,
				 f->moves_replay ? "change" : "stay");
	}
	/* the review's case: host-memory KV offload saves prefill, a little
	 * less when the host tier is written through and holds what the GPU
	 * holds too */
	struct fig off = replay_fig("", false, 0), on = replay_fig("--set kv_tiers.host_gb=200", false, 0);
	struct fig ev = replay_fig("--set kv_tiers.host_gb=200 --set kv_tiers.mode=evict", false, 0);
	assert_true(off.prefill == 1952683);
	assert_true(on.prefill == 1922299);
	assert_true(ev.prefill == 1920427);
}

/* whatif's as-recorded side is replay's, feature by feature. */
static void test_whatif_is_replay(void **state)
{
	(void)state;
	for (size_t i = 0; i < N_FEATURES; i++) {
		const struct feature *f = &FEATURES[i];
		const char *sets[2] = {f->base, f->on};
		for (int k = 0; k < 2; k++) {
			struct fig w = whatif_fig(sets[k]), r = replay_fig(sets[k], false, 0);
			if (w.completed != r.completed || w.p99_ttft_ms != r.p99_ttft_ms ||
			    w.hit != 100 * r.hit || w.prefill != r.prefill || w.duration_s != r.duration_s)
				fail_msg("whatif with %s (%s): prefill %.0f, hit %.17g; replay %.0f, %.17g",
					 f->name, sets[k], w.prefill, w.hit, r.prefill, r.hit);
		}
	}
	/* the review's case: the box plus Sonnet sends calls to the API */
	struct fig w = whatif_fig("--scenario " AC_SRC_DIR "/scenarios/h100-plus-sonnet.json");
	struct fig r = replay_fig("--scenario " AC_SRC_DIR "/scenarios/h100-plus-sonnet.json", false,
				  0);
	struct fig plain = replay_fig("", false, 0);
	assert_true(w.prefill == r.prefill && w.hit == 100 * r.hit && w.p99_ttft_ms == r.p99_ttft_ms);
	assert_true(r.api_share > 0.2);
	assert_true(w.prefill != plain.prefill);
}

/* sweep's row is replay's, feature by feature: pools, backends and tiers
 * included. */
static void test_sweep_is_replay(void **state)
{
	(void)state;
	for (size_t i = 0; i < N_FEATURES; i++) {
		const struct feature *f = &FEATURES[i];
		const char *sets[2] = {f->base, f->on};
		const char *json[2] = {f->base_json, f->on_json};
		for (int k = 0; k < 2; k++) {
			struct fig s = sweep_fig(json[k]), r = replay_fig(sets[k], false, 0);
			if (s.completed != r.completed || s.p95_ttft_ms != r.p95_ttft_ms ||
			    s.p99_ttft_ms != r.p99_ttft_ms || s.hit != r.hit || s.busy != r.busy ||
			    s.duration_s != r.duration_s)
				fail_msg("sweep with %s ({%s}): p95 %.17g, hit %.17g; replay %.17g, %.17g",
					 f->name, json[k], s.p95_ttft_ms, s.hit, r.p95_ttft_ms, r.hit);
		}
	}
}

/* size's winner is replay's on the winner's deployment, with the feature
 * and without it; or size refuses the feature before any replay. */
static void test_size_is_replay_or_refuses(void **state)
{
	(void)state;
	for (size_t i = 0; i < N_FEATURES; i++) {
		const struct feature *f = &FEATURES[i];
		if (!f->size_takes) {
			char cmd[256];
			snprintf(cmd, sizeof(cmd), "size --engineers 3 --trace %s --hardware h100-sxm",
				 TEAM);
			expect_refused(cmd, f->on, f->refused ? f->refused : f->name, "size");
			continue;
		}
		const char *sets[2] = {f->base, f->on};
		struct fig s[2];
		for (int k = 0; k < 2; k++) {
			int32_t reps, tp, prefill;
			s[k] = size_fig(sets[k], &reps, &tp, &prefill);
			if ((prefill > 0) != (k == 1 && strcmp(f->name, "disaggregation") == 0))
				fail_msg("size with %s (%s): %d prefill replicas", f->name, sets[k],
					 (int)prefill);
			struct fig r = replay_pd(sets[k], true, reps, tp, prefill);
			if (s[k].p95_ttft_ms != r.p95_ttft_ms || s[k].hit != r.hit ||
			    s[k].busy != r.busy || s[k].api_share != r.api_share)
				fail_msg("size with %s (%s): p95 %.17g, hit %.17g, API %.17g; replay of "
					 "%d replicas %.17g, %.17g, %.17g", f->name, sets[k],
					 s[k].p95_ttft_ms, s[k].hit, s[k].api_share, (int)reps,
					 r.p95_ttft_ms, r.hit, r.api_share);
		}
		bool same = s[0].p95_ttft_ms == s[1].p95_ttft_ms && s[0].hit == s[1].hit &&
			    s[0].busy == s[1].busy;
		if (same == f->moves_replay)
			fail_msg("size with %s: expected the winner to %s, as replay's does", f->name,
				 f->moves_replay ? "change" : "stay");
	}
}

/* compare prices size's winners (the box alone) and, with backends, one
 * box plus the API as replay serves it; it refuses what size refuses. */
static void test_compare_is_replay_or_refuses(void **state)
{
	(void)state;
	char cmd[256];
	snprintf(cmd, sizeof(cmd), "compare --engineers 3 --trace %s --hardware h100-sxm --jobs 1",
		 TEAM);
	for (size_t i = 0; i < N_FEATURES; i++) {
		const struct feature *f = &FEATURES[i];
		if (!f->size_takes) {
			expect_refused(cmd, f->on, f->refused ? f->refused : f->name, "compare");
			continue;
		}
		char args[4096];
		snprintf(args, sizeof(args), "%s --json - %s", cmd, f->on);
		cJSON *j = run_json(args);
		const cJSON *rows = cJSON_GetObjectItemCaseSensitive(j, "rows"), *row;
		bool plain = false, hybrid = false;
		cJSON_ArrayForEach(row, rows)
		{
			const cJSON *opt = cJSON_GetObjectItemCaseSensitive(row, "option");
			if (strcmp(opt->valuestring, "purchase") != 0)
				continue;
			const cJSON *hy = cJSON_GetObjectItemCaseSensitive(row, "hybrid");
			const cJSON *dep = cJSON_GetObjectItemCaseSensitive(row, "deployment");
			int reps = 0, tp = 0, p = 0, dd = 0;
			if (strstr(dep->valuestring, "P+") &&
			    sscanf(dep->valuestring, "%dP+%dD x TP%d", &p, &dd, &tp) == 3)
				reps = p + dd;
			else
				assert_int_equal(sscanf(dep->valuestring, "%d x TP%d", &reps, &tp), 2);
			assert_int_equal(p > 0, strcmp(f->name, "disaggregation") == 0);
			if (!hy) {
				/* the box alone: the scenario without its backends */
				const char *local = strcmp(f->name, "backends") == 0 ? f->base : f->on;
				struct fig r = replay_pd(local, true, reps, tp, p);
				assert_true(num(row, "gpu_busy_fraction") == r.busy);
				plain = true;
			} else {
				/* one box with the API beside it, as replay runs it */
				struct fig r = replay_shape(f->on, true, 1, tp);
				assert_true(num(hy, "api_share") == r.api_share);
				assert_true(num(hy, "ttft_p95_ms") == r.p95_ttft_ms);
				assert_true(r.api_share > 0);
				hybrid = true;
			}
		}
		assert_true(plain);
		assert_int_equal(hybrid, strcmp(f->name, "backends") == 0);
		cJSON_Delete(j);
	}
}

/* whatif --slo sizes each variant as size does: it refuses what size
 * refuses, by key, before any replay. */
static void test_whatif_sized_refuses(void **state)
{
	(void)state;
	for (size_t i = 0; i < N_FEATURES; i++) {
		const struct feature *f = &FEATURES[i];
		if (f->size_takes)
			continue;
		expect_refused("whatif no-retry " TEAM " --slo ttft_p95=2s", f->on,
			       f->refused ? f->refused : f->name, "whatif --slo");
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_replay_moves),
		cmocka_unit_test(test_whatif_is_replay),
		cmocka_unit_test(test_sweep_is_replay),
		cmocka_unit_test(test_size_is_replay_or_refuses),
		cmocka_unit_test(test_compare_is_replay_or_refuses),
		cmocka_unit_test(test_whatif_sized_refuses),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
