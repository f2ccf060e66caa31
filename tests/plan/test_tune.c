/* SPDX-License-Identifier: Apache-2.0
 * test_tune: `agentcap size --tune` (plan/tune.h).
 *   - a synthetic team of six engineers on L40S under a poor step budget
 *     (engine.max_num_batched_tokens=512 on long agent prompts): tuning
 *     finds a configuration that needs fewer GPUs than size alone, and the
 *     lever that did it reports the scenario's GPUs as its effect;
 *   - replaying the emitted settings reproduces the tuned result exactly:
 *     size with the tuned --set keys on top of the scenario, and size with
 *     launch_sets of the winner's emitted command, give the same winner
 *     (shape, replicas, GPUs) and the same P95 TTFT, bit for bit;
 *   - the launch command carries the tuned step budget;
 *   - the budget bounds the size searches and says it stopped the search;
 *   - bad input: --tune-budget out of range, --tune-budget without --tune,
 *     --tune on compare: exit 2 naming the option and what was expected;
 *     the JSON has the tuning under "tune"; --jobs 1 and 2 print the same.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include <cjson/cJSON.h>

#include "base/diag.h"
#include "models/catalog.h"
#include "plan/size.h"
#include "plan/tune.h"
#include "replay/launch.h"
#include "replay/scenario.h"
#include "replay/slo.h"
#include "tests/support/cli_run.h"
#include "traces/synth.h"
#include "traces/synth_profile.h"

#define SCRATCH AC_BIN_DIR "/tests/plan/scratch_tune"
#define TEAM SCRATCH "/team6.jsonl.gz"
#define BUDGET 8

static const char *const POOR = "engine.max_num_batched_tokens=512";

struct fixture {
	struct catalog *cat;
	struct scenario sc;
	struct slo slo;
	struct size_setup s;
	const char *traces[1];
	uint64_t seeds[1];
	const char *hw[1];
};

static void fixture_init(struct fixture *f, const char *const *sets, int n_sets)
{
	memset(f, 0, sizeof(*f));
	struct diag d;
	diag_init(&d);
	assert_int_equal(catalog_load(&f->cat, NULL, &d), 0);
	if (scenario_load(&f->sc, NULL, sets, n_sets, &d) != 0)
		fail_msg("scenario_load: %s", d.msg);
	assert_int_equal(slo_parse(&f->slo, "ttft_p95=2s,tpot_p50=50ms", "--slo", &d), 0);
	f->hw[0] = "l40s";
	f->traces[0] = TEAM;
	f->seeds[0] = 1;
	f->s = (struct size_setup){
		.cat = f->cat, .base = &f->sc, .hardware = f->hw, .n_hardware = 1, .slo = &f->slo,
		.replay = {.context_policy = f->sc.context_policy},
		.traces = f->traces, .seeds = f->seeds, .replicates = 1, .confidence = 0.9,
	};
}

static void run_size(struct fixture *f, struct size_result *r)
{
	struct diag d;
	diag_init(&d);
	if (size_run(&f->s, r, &d) != 0)
		fail_msg("size_run: %s", d.msg);
}

static double ttft(const struct size_eval *e)
{
	return size_eval_median(e, offsetof(struct size_fig, ttft_p95_ms));
}

static void same_winner(const struct size_option *a, const struct size_option *b)
{
	assert_true(a->found);
	assert_true(b->found);
	assert_int_equal(a->best.gpus, b->best.gpus);
	assert_int_equal(a->best.tp, b->best.tp);
	assert_int_equal(a->best.pp, b->best.pp);
	assert_int_equal(a->best.replicas, b->best.replicas);
	assert_int_equal(a->best.kv_cache_tokens, b->best.kv_cache_tokens);
	assert_true(ttft(&a->best) == ttft(&b->best));
}

static void test_tune_beats_poor_settings(void **state)
{
	(void)state;
	struct fixture *f = malloc(sizeof(*f));
	struct size_result *base = calloc(1, sizeof(*base));
	struct tune_result *t = calloc(1, sizeof(*t));
	assert_true(f && base && t);
	fixture_init(f, &POOR, 1);
	run_size(f, base);
	assert_true(base->opt[0].found);

	struct diag d;
	diag_init(&d);
	if (tune_run(&f->s, BUDGET, base, t, &d) != 0)
		fail_msg("tune_run: %s", d.msg);
	const struct tune_option *o = &t->opt[0];
	const struct size_option *tuned = &t->tuned->opt[0];
	assert_int_equal(o->error, 0);
	/* fewer GPUs than size alone */
	assert_true(o->base.found && o->best.found);
	assert_int_equal(o->base.gpus, base->opt[0].best.gpus);
	assert_true(o->best.gpus < o->base.gpus);
	assert_int_equal(o->best.gpus, tuned->best.gpus);
	/* the step budget did it; put back, it needs the scenario's GPUs */
	assert_string_equal(o->scenario.v[TUNE_BATCHED_TOKENS], "512");
	assert_string_not_equal(o->tuned.v[TUNE_BATCHED_TOKENS], "512");
	assert_true(o->effect[TUNE_BATCHED_TOKENS].gpus > o->best.gpus ||
		    !o->effect[TUNE_BATCHED_TOKENS].found);
	/* the budget: never more searches than it allows, beyond the effects */
	assert_true(o->searches <= BUDGET + TUNE_LEVERS);
	assert_true(o->passes >= 1);

	/* the launch command carries the tuned step budget */
	assert_non_null(tuned->launch);
	bool seen = false;
	for (int i = 0; i + 1 < tuned->launch->argc; i++)
		if (strcmp(tuned->launch->argv[i], "--max-num-batched-tokens") == 0)
			seen = strcmp(tuned->launch->argv[i + 1],
				      o->tuned.v[TUNE_BATCHED_TOKENS]) == 0;
	assert_true(seen);

	/* replay the tuned --set keys on top of the scenario's */
	char sets[TUNE_LEVERS][LAUNCH_SET_MAX];
	tune_sets(&o->tuned, sets);
	const char *argv_sets[1 + TUNE_LEVERS] = {POOR};
	for (int l = 0; l < TUNE_LEVERS; l++)
		argv_sets[1 + l] = sets[l];
	struct fixture *g = malloc(sizeof(*g));
	struct size_result *again = calloc(1, sizeof(*again));
	assert_true(g && again);
	fixture_init(g, argv_sets, 1 + TUNE_LEVERS);
	run_size(g, again);
	same_winner(tuned, &again->opt[0]);
	size_result_release(again);
	catalog_free(g->cat);

	/* and launch_sets of the emitted command */
	char lsets[LAUNCH_MAX_SETS][LAUNCH_SET_MAX];
	int n = 0;
	assert_int_equal(launch_sets(tuned->launch, lsets, LAUNCH_MAX_SETS, &n, &d), 0);
	const char *lp[LAUNCH_MAX_SETS];
	for (int i = 0; i < n; i++)
		lp[i] = lsets[i];
	memset(again, 0, sizeof(*again));
	fixture_init(g, lp, n);
	run_size(g, again);
	same_winner(tuned, &again->opt[0]);
	size_result_release(again);
	catalog_free(g->cat);
	free(again);
	free(g);

	tune_result_release(t);
	size_result_release(base);
	catalog_free(f->cat);
	free(t);
	free(base);
	free(f);
}

/* A budget of one search: the descent stops after it, and says so. */
static void test_budget(void **state)
{
	(void)state;
	struct fixture *f = malloc(sizeof(*f));
	struct size_result *base = calloc(1, sizeof(*base));
	struct tune_result *t = calloc(1, sizeof(*t));
	assert_true(f && base && t);
	fixture_init(f, &POOR, 1);
	f->s.max_replicas = 2;
	run_size(f, base);
	struct diag d;
	diag_init(&d);
	assert_int_equal(tune_run(&f->s, 1, base, t, &d), 0);
	assert_true(t->opt[0].budget_spent);
	assert_true(t->opt[0].searches <= 1 + TUNE_LEVERS);
	tune_result_release(t);
	diag_init(&d);
	assert_int_equal(tune_run(&f->s, TUNE_MAX_BUDGET + 1, base, t, &d), DIAG_EINPUT);
	assert_non_null(strstr(d.msg, "--tune-budget"));
	assert_non_null(strstr(d.msg, "expected"));
	tune_result_release(t);
	size_result_release(base);
	catalog_free(f->cat);
	free(t);
	free(base);
	free(f);
}

static void test_cli(void **state)
{
	(void)state;
	struct cli_out r = cli_run("size --engineers 2 --profile default --tune --tune-budget 0");
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "--tune-budget"));
	assert_non_null(strstr(r.err, "1..200"));
	cli_out_free(&r);
	r = cli_run("size --engineers 2 --profile default --tune-budget 4");
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "expected --tune"));
	cli_out_free(&r);
	r = cli_run("compare --engineers 2 --profile default --tune");
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "--tune"));
	cli_out_free(&r);
	/* a small run: the table and the JSON carry the tuning */
	const char *json = SCRATCH "/tune.json";
	unlink(json);
	r = cli_run("size --engineers 1 --profile default --hardware h100-sxm --max-replicas 2 "
		    "--tune --tune-budget 2 --json " SCRATCH "/tune.json");
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "Engine tuning"));
	assert_non_null(strstr(r.out, "replay it with: --set engine.enable_chunked_prefill="));
	cli_out_free(&r);
	FILE *fp = fopen(json, "rb");
	assert_non_null(fp);
	static char buf[1 << 20];
	size_t len = fread(buf, 1, sizeof(buf) - 1, fp);
	fclose(fp);
	buf[len] = '\0';
	cJSON *doc = cJSON_Parse(buf);
	assert_non_null(doc);
	cJSON *tune = cJSON_GetObjectItem(doc, "tune");
	assert_non_null(tune);
	assert_int_equal(cJSON_GetObjectItem(tune, "budget")->valueint, 2);
	cJSON *o = cJSON_GetArrayItem(cJSON_GetObjectItem(tune, "options"), 0);
	assert_non_null(o);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(o, "levers")), TUNE_LEVERS);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(o, "sets")), TUNE_LEVERS);
	assert_non_null(cJSON_GetObjectItem(o, "usd_month_tuned"));
	cJSON_Delete(doc);
	/* the same bytes whatever the jobs */
	struct cli_out a = cli_run("size --engineers 1 --profile default --hardware h100-sxm,l40s "
				   "--max-replicas 2 --tune --tune-budget 3 --jobs 1");
	struct cli_out b = cli_run("size --engineers 1 --profile default --hardware h100-sxm,l40s "
				   "--max-replicas 2 --tune --tune-budget 3 --jobs 2");
	assert_int_equal(a.status, b.status);
	assert_string_equal(a.out, b.out);
	cli_out_free(&a);
	cli_out_free(&b);
}

static int setup(void **state)
{
	(void)state;
	mkdir(AC_BIN_DIR "/tests/plan", 0777);
	mkdir(SCRATCH, 0777);
	struct synth_profile *p = malloc(sizeof(*p));
	if (!p)
		return -1;
	struct diag d;
	diag_init(&d);
	int rc = synth_profile_load(p, NULL, &d);
	struct synth_team_opts o = {.engineers = 6, .days = 1, .seed = 1};
	struct synth_team_stats st;
	if (rc == 0)
		rc = synth_team_write(p, &o, TEAM, true, &st, &d);
	free(p);
	return rc == 0 ? 0 : -1;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tune_beats_poor_settings),
		cmocka_unit_test(test_budget),
		cmocka_unit_test(test_cli),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
