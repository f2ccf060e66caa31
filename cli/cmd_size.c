/* SPDX-License-Identifier: Apache-2.0
 * cmd_size: `agentcap size` - the smallest deployment per hardware option
 * whose replay of a team meets the latency objectives (plan/size.h) - and
 * `agentcap compare`, which prices those deployments beside seats and an
 * API (plan/compare.h).  Both take the same team and sizing options. */
#define _GNU_SOURCE
#include "cli/cli.h"

#include "cli/args.h"

#include "base/diag.h"
#include "base/outfile.h"
#include "base/pool.h"
#include "models/calfile.h"
#include "models/catalog.h"
#include "models/cost.h"
#include "models/prices.h"
#include "models/quality.h"
#include "models/uncert.h"
#include "plan/compare.h"
#include "plan/crossover.h"
#include "plan/size.h"
#include "plan/tune.h"
#include "replay/deploy.h"
#include "replay/scenario.h"
#include "replay/slo.h"
#include "reports/output.h"
#include "traces/synth.h"
#include "traces/synth_profile.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char SIZE_HELP[] =
	"NAME\n"
	"    agentcap size - the smallest deployment per hardware option that meets the SLOs\n"
	"\n"
	"SYNOPSIS\n"
	"    agentcap size --engineers N (--trace T | --profile P) [--slo OBJECTIVES]\n"
	"                  [--hardware ID[,ID...]] [--model M] [--format F] [--engine E]\n"
	"                  [--days D] [--replicates K [--confidence C]] [--seed S]\n"
	"                  [--max-replicas R] [--redundancy F] [--no-early] [--jobs J]\n"
	"                  [--model-uncertainty] [--tune] [--scenario FILE]\n"
	"                  [--set KEY=VALUE]... [--catalog DIR] [--calibration FILE] [--skip-bad]\n"
	"                  [--json FILE] [--html FILE] [--quiet]\n"
	"\n"
	"DESCRIPTION\n"
	"    For each hardware option, drops the replica shapes whose weights do not\n"
	"    fit (memory model, before any replay), then replays the team on 1, 2, 4,\n"
	"    ... replicas until one count meets every objective and bisects down to\n"
	"    the smallest that does (docs/size.md).  Replays stop early once their\n"
	"    answer is known to be no.  Prints per option the winner (GPUs, replicas\n"
	"    x TP, goodput, busy, hit rate, P95 TTFT, P50 TPOT), the search path and\n"
	"    its monthly cost bought, rented by the month and by the GPU-hour.\n"
	"\n"
	"OPTIONS\n"
	"    --engineers N       team size (1..1000000)\n"
	"    --trace T           a recorded team, resampled to N engineers by whole\n"
	"                        engineer-days (as replay --engineers)\n"
	"    --profile P         a synthetic team from profile file P ('default': the\n"
	"                        built-in profile, docs/synth-profile.md)\n"
	"    --days D            days of the team to replay (default: 1 for --profile,\n"
	"                        the trace's span for --trace)\n"
	"    --slo OBJECTIVES    KEY=DURATION,...: KEY ttft, tpot or e2el with _p50,\n"
	"                        _p90, _p95 or _p99; DURATION with ms or s\n"
	"                        (default ttft_p95=2s,tpot_p50=50ms)\n"
	"    --hardware IDS      hardware options, comma-separated catalogue ids\n"
	"                        (default: the scenario's)\n"
	"    --model M, --format F, --engine E\n"
	"                        model, weight format and engine profile (default:\n"
	"                        the scenario's)\n"
	"    --replicates K      replay each candidate on K teams (seeds S..S+K-1,\n"
	"                        1..32; default 1) and report spreads\n"
	"    --confidence C      share of replicates a deployment must meet the\n"
	"                        objectives in (default 0.9: with K = 5, all five)\n"
	"    --max-replicas R    gallop cap per shape (default 256)\n"
	"    --redundancy F      size for N+F: the objectives must hold with F\n"
	"                        replicas failed for the whole run (0..8; default 0)\n"
	"    --no-early          run every replay to the end\n"
	"    --model-uncertainty divide each limit by 1 + the model's 80% error\n"
	"                        band (docs/size.md)\n"
	"    --tune [--tune-budget B]  then tune each option's engine settings, at\n"
	"                        most B size searches each (1..200; 24; docs/size.md)\n"
	"    --jobs J            replays at once (1..256; default: the online cores);\n"
	"                        the output does not depend on it\n"
	"    --prices FILE       prices for the monthly cost lines (default: the\n"
	"                        scenario's 'prices', else the built-in catalogue)\n"
	"    --scenario, --set, --catalog, --calibration, --skip-bad, --seed: as for replay\n"
	"    --json FILE         also write the result as JSON ('-': standard output)\n"
	"    --html FILE         also write a self-contained HTML page of it, drawn\n"
	"                        from the JSON (the same as agentcap report on it):\n"
	"                        size charts the candidates tried, compare the cost\n"
	"                        per accepted task and the break-even utilisation\n"
	"\n"
	"EXIT STATUS\n"
	"    0 a deployment was found for at least one option; 1 none meets the\n"
	"    objectives (the closest miss is printed); 2 bad usage or input (an\n"
	"    unknown hardware id, objectives that do not parse); 3 internal error.\n"
	"\n"
	"EXAMPLES\n"
	"    agentcap size --engineers 50 --profile default --hardware h100-sxm,l40s\n"
	"    agentcap size --engineers 300 --trace pilot.jsonl.gz --slo ttft_p95=2s \\\n"
	"        --replicates 5 --confidence 0.8 --json size.json\n";

static const char COMPARE_HELP[] =
	"NAME\n"
	"    agentcap compare - cost per accepted task: self-hosting against seats and APIs\n"
	"\n"
	"SYNOPSIS\n"
	"    agentcap compare --engineers N (--trace T | --profile P) [SIZE OPTIONS]\n"
	"                     [--api ID] [--seats ID] [--prices FILE]\n"
	"                     [--acceptance [MODEL=]R] [--turns F] [--traced-model ID]\n"
	"\n"
	"DESCRIPTION\n"
	"    Sizes the team as agentcap size does, then prices each option's\n"
	"    deployment as purchase, dedicated rental and elastic rental (where the\n"
	"    price catalogue has a price for that hardware), beside the seat plan and\n"
	"    the API named: USD per month, per engineer-month, per 1M output tokens\n"
	"    and per accepted task.  Then the break-even team size and GPU busy\n"
	"    fraction of each self-hosted option against the API, a sensitivity\n"
	"    table (self-hosted prices, acceptance rate and traffic moved by 20%,\n"
	"    operator time at the ends of its sourced ranges), warnings where\n"
	"    operator time decides a row or a price leaves something out, and\n"
	"    every price used with its source and date (docs/size.md, docs/cost.md).\n"
	"    With several team sizes, each is sized and priced on its own, and the\n"
	"    table gives the cost per accepted task by team size and the team size\n"
	"    from which each self-hosted option beats the seats and the API.\n"
	"\n"
	"OPTIONS\n"
	"    --engineers N       team size; or several: a list 10,20,40 or a range\n"
	"                        start:stop:step (10:80:10), at most 24 sizes\n"
	"    SIZE OPTIONS        as for agentcap size (--slo, --hardware, --model, ...)\n"
	"    --api ID            the API the team could pay instead (default\n"
	"                        claude-sonnet-5-5; ids: agentcap catalog --prices)\n"
	"    --seats ID          the seat plan (default claude-team-premium, $150 a seat\n"
	"                        as the vendor's support page states)\n"
	"    --prices FILE       a price file of the shape of models/catalog/prices.json\n"
	"                        (default: the scenario's 'prices', else the built-in one)\n"
	"    --acceptance R      the self-hosted model's share of tasks accepted, (0, 1]\n"
	"                        (default: the trace's own x its published quality\n"
	"                        against the traced model, else assumed equal: said)\n"
	"    --acceptance MODEL=R  a pilot's share for MODEL, the self-hosted model or\n"
	"                        the API's (repeatable)\n"
	"    --traced-model ID   the model the trace was recorded with (default: the\n"
	"                        --api model, with a warning)\n"
	"    --turns F           its calls and tokens per task relative to the trace\n"
	"                        (default 1)\n"
	"    --summary           the answer on one screen: the cheapest self-hosted\n"
	"                        option with its latency and costs, the seats and the\n"
	"                        API, the break-even team, what moves the answer and\n"
	"                        what is assumed (the details: without it, --json,\n"
	"                        --html)\n"
	"\n"
	"EXIT STATUS\n"
	"    0 the table was printed; 1 no option found a deployment meeting the\n"
	"    objectives (only the closest miss is printed); 2 bad usage or input;\n"
	"    3 internal error.\n"
	"\n"
	"EXAMPLES\n"
	"    agentcap compare --engineers 50 --profile default --hardware h100-sxm,hgx-h100-8\n"
	"    agentcap compare --engineers 5,10,20,40 --profile default --hardware h100-sxm\n";

#define MAX_SETS 256
/* "N engineers, synthetic, profile P" */
#define SIZE_TEAM_TEXT 1100

struct size_args {
	int64_t engineers;
	int64_t days;
	const char *trace;
	const char *profile;
	const char *slo;
	char *hardware;           /* copy of --hardware, split in place */
	const char *model, *weight_format, *engine;
	const char *scenario;
	const char *json;
	const char *html;
	const char *catalog;
	const char *calibration;
	const char *sets[MAX_SETS];
	int n_sets;
	uint64_t seed;
	bool compare;             /* agentcap compare */
	int64_t teams[CROSSOVER_MAX_TEAMS]; /* compare --engineers A,B,...: sizes */
	size_t n_teams;
	const char *api, *seats, *prices;
	double acceptance, turns; /* 0: default */
	struct {                  /* --acceptance MODEL=RATE, in order */
		const char *model;
		size_t len;
		double rate;
	} pilot[4];
	int n_pilot;
	const char *traced;       /* --traced-model */
	int64_t replicates;
	double confidence;
	int64_t max_replicas;
	int64_t jobs;             /* 0: the online cores */
	int64_t redundancy;
	bool no_early, skip_bad, quiet;
	bool summary;             /* compare --summary: the answer on one screen */
	bool model_uncertainty;
	bool tune;
	int64_t tune_budget;      /* 0: TUNE_DEFAULT_BUDGET */
};

static int bad(const struct size_args *a, const char *msg)
{
	const char *cmd = a->compare ? "compare" : "size";
	fprintf(stderr, "agentcap %s: %s (see agentcap %s --help)\n", cmd, msg, cmd);
	return 2;
}

static int parse_args(int argc, char **argv, struct size_args *a)
{
	enum { O_ENG = 1000, O_DAYS, O_TRACE, O_PROFILE, O_SLO, O_HW, O_MODEL, O_FORMAT, O_ENGINE,
	       O_SCENARIO, O_SET, O_JSON, O_HTML, O_CATALOG, O_CALIBRATION, O_SEED, O_REPS, O_CONF, O_MAXR,
	       O_NOEARLY, O_SKIP, O_QUIET, O_SUMMARY, O_HELP, O_API, O_SEATS, O_PRICES, O_ACCEPT, O_TURNS, O_TRACED, O_JOBS,
	       O_REDUND, O_UNCERT, O_TUNE, O_TUNE_BUDGET };
	static const struct option opts[] = {
		{"engineers", required_argument, NULL, O_ENG},
		{"days", required_argument, NULL, O_DAYS},
		{"trace", required_argument, NULL, O_TRACE},
		{"profile", required_argument, NULL, O_PROFILE},
		{"slo", required_argument, NULL, O_SLO},
		{"hardware", required_argument, NULL, O_HW},
		{"model", required_argument, NULL, O_MODEL},
		{"format", required_argument, NULL, O_FORMAT},
		{"engine", required_argument, NULL, O_ENGINE},
		{"scenario", required_argument, NULL, O_SCENARIO},
		{"set", required_argument, NULL, O_SET},
		{"json", required_argument, NULL, O_JSON},
		{"html", required_argument, NULL, O_HTML},
		{"catalog", required_argument, NULL, O_CATALOG},
		{"calibration", required_argument, NULL, O_CALIBRATION},
		{"seed", required_argument, NULL, O_SEED},
		{"replicates", required_argument, NULL, O_REPS},
		{"confidence", required_argument, NULL, O_CONF},
		{"max-replicas", required_argument, NULL, O_MAXR},
		{"no-early", no_argument, NULL, O_NOEARLY},
		{"jobs", required_argument, NULL, O_JOBS},
		{"redundancy", required_argument, NULL, O_REDUND},
		{"model-uncertainty", no_argument, NULL, O_UNCERT},
		{"tune", no_argument, NULL, O_TUNE},
		{"tune-budget", required_argument, NULL, O_TUNE_BUDGET},
		{"skip-bad", no_argument, NULL, O_SKIP},
		{"quiet", no_argument, NULL, O_QUIET},
		{"summary", no_argument, NULL, O_SUMMARY},
		{"help", no_argument, NULL, O_HELP},
		{"api", required_argument, NULL, O_API},
		{"seats", required_argument, NULL, O_SEATS},
		{"prices", required_argument, NULL, O_PRICES},
		{"acceptance", required_argument, NULL, O_ACCEPT},
		{"turns", required_argument, NULL, O_TURNS},
		{"traced-model", required_argument, NULL, O_TRACED},
		{NULL, 0, NULL, 0},
	};
	bool compare = a->compare;
	memset(a, 0, sizeof(*a));
	a->compare = compare;
	a->api = "claude-sonnet-5-5";
	a->seats = "claude-team-premium";
	a->seed = 1;
	a->replicates = 1;
	a->confidence = 0.9;
	a->slo = "ttft_p95=2s,tpot_p50=50ms";
	optind = 1;
	opterr = 0;
	const char *cmd = compare ? "compare" : "size";
	int c;
	int64_t v64;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case O_ENG:
			if (compare && strpbrk(optarg, ",:")) {
				struct diag td;
				diag_init(&td);
				if (crossover_parse_teams(optarg, 1000000, a->teams, &a->n_teams, &td))
					return bad(a, td.msg);
				a->engineers = a->teams[0];
				break;
			}
			if (!args_int(optarg, 1, 1000000, &a->engineers))
				return args_bad(cmd, "--engineers", optarg,
						compare ? "an integer 1..1000000, a list 10,20,40 or "
							  "a range 10:80:10"
							: "an integer 1..1000000");
			a->n_teams = 0;
			break;
		case O_DAYS:
			if (!args_int(optarg, 1, SYNTH_MAX_DAYS, &a->days))
				return args_bad(cmd, "--days", optarg, "an integer 1..3660");
			break;
		case O_TRACE: a->trace = optarg; break;
		case O_PROFILE: a->profile = optarg; break;
		case O_SLO: a->slo = optarg; break;
		case O_HW:
			free(a->hardware);
			if (!(a->hardware = strdup(optarg)))
				return bad(a, "out of memory");
			break;
		case O_MODEL: a->model = optarg; break;
		case O_FORMAT: a->weight_format = optarg; break;
		case O_ENGINE: a->engine = optarg; break;
		case O_SCENARIO: a->scenario = optarg; break;
		case O_SET:
			if (a->n_sets == MAX_SETS - 4)
				return bad(a, "too many --set options");
			a->sets[a->n_sets++] = optarg;
			break;
		case O_JSON: a->json = optarg; break;
		case O_HTML: a->html = optarg; break;
		case O_CATALOG: a->catalog = optarg; break;
		case O_CALIBRATION: a->calibration = optarg; break;
		case O_SEED:
			if (!args_int(optarg, 0, INT64_MAX / 2, &v64))
				return args_bad(cmd, "--seed", optarg, "a non-negative integer");
			a->seed = (uint64_t)v64;
			break;
		case O_REPS:
			if (!args_int(optarg, 1, SIZE_MAX_REPLICATES, &a->replicates))
				return args_bad(cmd, "--replicates", optarg, "an integer 1..32");
			break;
		case O_CONF:
			if (!args_number(optarg, 0, 1, false, &a->confidence) || !(a->confidence > 0))
				return args_bad(cmd, "--confidence", optarg, "a share in (0, 1]");
			break;
		case O_MAXR:
			if (!args_int(optarg, 1, 65536, &a->max_replicas))
				return args_bad(cmd, "--max-replicas", optarg, "an integer 1..65536");
			break;
		case O_NOEARLY: a->no_early = true; break;
		case O_UNCERT: a->model_uncertainty = true; break;
		case O_TUNE: a->tune = true; break;
		case O_TUNE_BUDGET:
			if (!args_int(optarg, 1, TUNE_MAX_BUDGET, &a->tune_budget))
				return args_bad(cmd, "--tune-budget", optarg, "an integer 1..200");
			break;
		case O_REDUND:
			if (!args_int(optarg, 0, SIZE_MAX_REDUNDANCY, &a->redundancy))
				return args_bad(cmd, "--redundancy", optarg, "an integer 0..8");
			break;
		case O_JOBS:
			if (!args_int(optarg, 1, POOL_MAX_JOBS, &a->jobs))
				return args_bad(cmd, "--jobs", optarg, "an integer 1..256");
			break;
		case O_API: a->api = optarg; break;
		case O_SEATS: a->seats = optarg; break;
		case O_PRICES: a->prices = optarg; break;
		case O_TRACED: a->traced = optarg; break;
		case O_ACCEPT:
			if (strchr(optarg, '=')) {
				const char *eq = strchr(optarg, '=');
				if (a->n_pilot == 4)
					return bad(a, "--acceptance MODEL=RATE: more than 4");
				if (eq == optarg || !args_number(eq + 1, 0.001, 1, false,
								 &a->pilot[a->n_pilot].rate))
					return args_bad(cmd, "--acceptance", optarg,
							"a share in [0.001, 1], or MODEL=SHARE");
				a->pilot[a->n_pilot].model = optarg;
				a->pilot[a->n_pilot].len = (size_t)(eq - optarg);
				a->n_pilot++;
				break;
			}
			if (!args_number(optarg, 0.001, 1, false, &a->acceptance))
				return args_bad(cmd, "--acceptance", optarg, "a share in [0.001, 1]");
			break;
		case O_TURNS:
			if (!args_number(optarg, 0, 1000, false, &a->turns) || !(a->turns > 0))
				return args_bad(cmd, "--turns", optarg, "a factor in (0, 1000]");
			break;
		case O_SKIP: a->skip_bad = true; break;
		case O_QUIET: a->quiet = true; break;
		case O_SUMMARY: a->summary = true; break;
		case 'h':
		case O_HELP:
			fputs(compare ? COMPARE_HELP : SIZE_HELP, stdout);
			return -1;
		default:
			fprintf(stderr, "agentcap %s: unknown or incomplete option '%s' (see agentcap "
				"%s --help)\n", cmd, argv[optind - 1], cmd);
			return 2;
		}
	}
	if (!compare && (a->acceptance || a->turns || a->n_pilot || a->traced ||
			 strcmp(a->api, "claude-sonnet-5-5") ||
			 strcmp(a->seats, "claude-team-premium")))
		return bad(a, "--api, --seats, --acceptance, --turns and --traced-model belong to "
			   "compare");
	if (a->summary && (!compare || a->n_teams > 1)) {
		fprintf(stderr, "agentcap %s: --summary is compare's, for one team size (expected "
			"agentcap compare --engineers N --summary)\n", cmd);
		return 2;
	}
	if (compare && (a->tune || a->tune_budget))
		return bad(a, "--tune and --tune-budget belong to size");
	if (a->tune_budget && !a->tune)
		return bad(a, "--tune-budget B: expected --tune with it");
	if (optind != argc)
		return bad(a, "unexpected argument; the team comes with --trace or --profile");
	if (!a->engineers)
		return bad(a, "--engineers N is required");
	if ((a->trace != NULL) == (a->profile != NULL))
		return bad(a, "expected exactly one of --trace T and --profile P");
	return 0;
}

/* The replicates' traces: the recorded one (resampled per seed), or one
 * synthetic team per seed written to a temporary file. */
struct teams {
	char *paths[SIZE_MAX_REPLICATES];
	bool temp[SIZE_MAX_REPLICATES];
	uint64_t seeds[SIZE_MAX_REPLICATES];
};

static void teams_release(struct teams *t)
{
	for (int i = 0; i < SIZE_MAX_REPLICATES; i++) {
		if (t->temp[i] && t->paths[i])
			unlink(t->paths[i]);
		free(t->paths[i]);
		t->paths[i] = NULL;
	}
}

static int teams_make(const struct size_args *a, struct teams *t, struct diag *d)
{
	memset(t, 0, sizeof(*t));
	for (int64_t k = 0; k < a->replicates; k++)
		t->seeds[k] = a->seed + (uint64_t)k;
	if (a->trace) {
		for (int64_t k = 0; k < a->replicates; k++)
			if (!(t->paths[k] = strdup(a->trace)))
				return diag_set(d, DIAG_ENOMEM, "out of memory");
		return 0;
	}
	struct synth_profile *p = malloc(sizeof(*p));
	if (!p)
		return diag_set(d, DIAG_ENOMEM, "out of memory");
	int rc = synth_profile_load(p, strcmp(a->profile, "default") == 0 ? NULL : a->profile, d);
	const char *tmp = getenv("TMPDIR");
	for (int64_t k = 0; rc == 0 && k < a->replicates; k++) {
		char path[4096];
		snprintf(path, sizeof(path), "%s/agentcap-size-XXXXXX", tmp && *tmp ? tmp : "/tmp");
		int fd = mkstemp(path);
		if (fd < 0) {
			rc = diag_set(d, DIAG_EIO, "%s: cannot make a temporary file for the team", path);
			break;
		}
		close(fd);
		t->temp[k] = true;
		if (!(t->paths[k] = strdup(path))) {
			unlink(path);
			rc = diag_set(d, DIAG_ENOMEM, "out of memory");
			break;
		}
		struct synth_team_opts o = {.engineers = (int32_t)a->engineers,
					    .days = a->days ? (int32_t)a->days : 1,
					    .seed = t->seeds[k]};
		rc = synth_team_write(p, &o, path, true, NULL, d);
	}
	free(p);
	return rc;
}

/* Split "a,b,c" in place into ids. */
static size_t split_ids(char *s, const char **ids, size_t max)
{
	size_t n = 0;
	for (char *save = NULL, *tok = strtok_r(s, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (n == max)
			return max + 1;
		ids[n++] = tok;
	}
	return n;
}

/* compare's setup from the options: the same for one team and a range.
 * The acceptance of each side: a figure given for its model (--acceptance
 * MODEL=RATE or R, the scenario's cost.acceptance_rate and
 * cost.api_acceptance_rate), else its published scores against the traced
 * model (q), else assumed equal, said in a warning (plan/compare.h). */
static int compare_setup_of(struct compare_setup *cs, const struct size_args *a,
			    const struct size_setup *s, const struct scenario *sc,
			    const struct catalog *cat, const struct prices *prices,
			    const struct quality *q, struct diag *d)
{
	*cs = (struct compare_setup){.size = s, .cat = cat, .prices = prices, .api_id = a->api,
				     .seat_id = a->seats, .engineers = a->engineers,
				     .days = a->days ? a->days : 1};
	cs->backends = sc->n_backends > 0;
	cost_task_default(&cs->task);
	scenario_cost_apply(sc, NULL, NULL, NULL, &cs->task); /* cost.acceptance_rate, ... */
	cost_task_default(&cs->base_task);
	if (sc->cost.api_acceptance_rate >= 0)
		cost_fig_set(&cs->base_task.acceptance_rate, sc->cost.api_acceptance_rate,
			     "scenario %s: cost.api_acceptance_rate", sc->source);
	if (a->acceptance > 0)
		cost_fig_set(&cs->task.acceptance_rate, a->acceptance, "--acceptance");
	for (int i = 0; i < a->n_pilot; i++) {
		const char *m = a->pilot[i].model;
		size_t n = a->pilot[i].len;
		bool local = strlen(sc->model) == n && strncmp(m, sc->model, n) == 0;
		bool api = strlen(a->api) == n && strncmp(m, a->api, n) == 0;
		if (!local && !api)
			return diag_set(d, DIAG_EINPUT, "--acceptance %.*s=%g: %.*s is neither the "
					"self-hosted model (%s) nor the API's (%s) (expected one of "
					"them)", (int)n, m, a->pilot[i].rate, (int)n, m, sc->model,
					a->api);
		if (local)
			cost_fig_set(&cs->task.acceptance_rate, a->pilot[i].rate,
				     "--acceptance %s=%g (a pilot figure)", sc->model, a->pilot[i].rate);
		if (api)
			cost_fig_set(&cs->base_task.acceptance_rate, a->pilot[i].rate,
				     "--acceptance %s=%g (a pilot figure)", a->api, a->pilot[i].rate);
	}
	if (a->turns > 0)
		cost_fig_set(&cs->task.turns_factor, a->turns, "--turns");
	cs->traced_model = a->traced ? a->traced
			   : sc->cost.traced_model[0] ? sc->cost.traced_model : a->api;
	cs->traced_assumed = !a->traced && !sc->cost.traced_model[0];
	compare_quality(cs, q, sc->model);
	return 0;
}

/* compare --engineers A,B,...: at each size the team made again, sized and
 * priced exactly as `compare --engineers N` would (plan/crossover.h), then
 * the curve, the crossovers, the JSON and the page.  Returns the exit
 * status: 0, 1 (no size found a deployment), 2 (d says why). */
static int run_range(struct size_args *a, struct size_setup *s, const struct scenario *sc,
		     const struct catalog *cat, const struct prices *prices,
		     const struct quality *q, struct teams *teams, struct size_result *res,
		     char *team, size_t team_cap, struct diag *d)
{
	struct crossover_curve *curve = malloc(sizeof(*curve));
	struct compare_result *cmp = malloc(sizeof(*cmp));
	if (!curve || !cmp) {
		free(curve);
		free(cmp);
		diag_set(d, DIAG_ENOMEM, "out of memory");
		return 2;
	}
	crossover_init(curve);
	int rc = 0;
	size_t found_any = 0;
	struct compare_setup cs;
	for (size_t k = 0; rc == 0 && k < a->n_teams; k++) {
		a->engineers = a->teams[k];
		if (!a->trace)
			rc = args_team_fits("--engineers", a->engineers, a->days ? a->days : 1, d);
		teams_release(teams);
		if (rc == 0)
			rc = teams_make(a, teams, d);
		if (rc)
			break;
		snprintf(team, team_cap, "%lld engineers, %s %s", (long long)a->engineers,
			 a->trace ? "resampled from" : "synthetic, profile",
			 a->trace ? a->trace : a->profile);
		s->replay.scale.engineers = a->trace ? a->engineers : 0;
		if (!a->quiet)
			fprintf(stderr, "agentcap compare: team of %lld engineers (%zu of %zu): "
				"sizing\n", (long long)a->engineers, k + 1, a->n_teams);
		rc = size_run(s, res, d);
		if (rc == 0)
			rc = compare_setup_of(&cs, a, s, sc, cat, prices, q, d);
		/* nothing self-hosted at a size: an empty point (no rows) */
		found_any += rc == 0 && size_found(res) > 0;
		if (rc == 0)
			rc = compare_run(&cs, res, cmp, d);
		if (rc == 0)
			rc = crossover_add(curve, a->engineers, cmp, d);
		size_result_release(res);
	}
	if (rc == 0)
		crossover_finish(curve);
	if (rc == 0) {
		bool json_stdout = (a->json && strcmp(a->json, "-") == 0) ||
				   (a->html && strcmp(a->html, "-") == 0);
		snprintf(team, team_cap, "%s, %s %s", a->n_teams > 1 ? "team sizes" : "team",
			 a->trace ? "resampled from" : "synthetic, profile",
			 a->trace ? a->trace : a->profile);
		if (!a->quiet && !json_stdout) {
			char router[ROUTER_DESCRIBE_MAX];
			printf("Teams: %s; model %s, weights %s, KV cache %s; objectives %s\n", team,
			       sc->model, sc->weight_format, sc->kv_cache_dtype, a->slo);
			printf("Router: %s\n", router_describe(&sc->router, router, sizeof(router)));
			crossover_table(stdout, &cs, curve);
		}
		if (a->json || a->html) {
			struct cli_buf jb;
			rc = cli_buf_open(&jb, d);
			int wrc = 0;
			if (rc == 0) {
				wrc = crossover_json(jb.fp, &cs, curve);
				rc = cli_buf_close(&jb, d);
			}
			if (rc == 0 && wrc)
				rc = diag_set(d, wrc, "out of memory for the JSON result");
			if (rc == 0 && a->json)
				rc = cli_text_write(a->json, jb.text, jb.len, d);
			if (rc == 0 && a->html)
				rc = cli_html_write(a->html, jb.text, jb.len, "the run's result", d);
			cli_buf_free(&jb);
		}
	}
	free(curve);
	free(cmp);
	if (rc)
		return 2;
	if (!found_any) {
		fprintf(stderr, "agentcap compare: the answer is no (exit status 1): at no team size "
			"does a deployment meet %s, so there is nothing self-hosted to price\n", a->slo);
		return 1;
	}
	return 0;
}

static int run(int argc, char **argv, bool compare)
{
	struct size_args *a = calloc(1, sizeof(*a));
	struct size_result *res = calloc(1, sizeof(*res));
	struct teams *teams = calloc(1, sizeof(*teams));
	struct scenario *sc = malloc(sizeof(*sc));
	if (!a || !res || !teams || !sc) {
		free(a);
		free(res);
		free(teams);
		free(sc);
		return cli_fail(DIAG_ENOMEM, "out of memory");
	}
	if (a)
		a->compare = compare;
	int prc = a ? parse_args(argc, argv, a) : 0;
	if (prc != 0) {
		free(a->hardware);
		free(a);
		free(res);
		free(teams);
		free(sc);
		return prc < 0 ? 0 : prc;
	}
	struct diag d;
	diag_init(&d);
	struct catalog *cat = NULL;
	struct calfile *cal = NULL;
	struct engine_table *cal_et = NULL;
	struct report_calibration rcal;
	memset(&rcal, 0, sizeof(rcal));
	struct uncert_table shipped_bands;
	uncert_init(&shipped_bands);
	struct slo slo;
	const char *hw_ids[SIZE_MAX_HARDWARE];
	size_t n_hw = 0;
	/* checks first: nothing is replayed or written before they pass */
	int rc = slo_parse(&slo, a->slo, "--slo", &d);
	if (rc == 0 && a->json)
		rc = outfile_check(a->json, &d);
	if (rc == 0 && a->html)
		rc = outfile_check(a->html, &d);
	if (rc == 0)
		rc = outfile_distinct((const char *const[]){"--json", "--html"},
				      (const char *const[]){a->json, a->html}, 2, &d);
	char model_set[SCENARIO_STR_MAX + 8], format_set[SCENARIO_STR_MAX + 16],
		engine_set[SCENARIO_STR_MAX + 16];
	if (a->model) {
		snprintf(model_set, sizeof(model_set), "model=%s", a->model);
		a->sets[a->n_sets++] = model_set;
	}
	if (a->weight_format) {
		snprintf(format_set, sizeof(format_set), "weight_format=%s", a->weight_format);
		a->sets[a->n_sets++] = format_set;
	}
	if (a->engine) {
		snprintf(engine_set, sizeof(engine_set), "engine_profile=%s", a->engine);
		a->sets[a->n_sets++] = engine_set;
	}
	if (rc == 0)
		rc = scenario_load(sc, a->scenario, a->sets, a->n_sets, &d);
	if (rc == 0)
		rc = deploy_check(sc, a->compare ? DEPLOY_CMD_COMPARE : DEPLOY_CMD_SIZE, &d);
	if (rc == 0)
		rc = catalog_load(&cat, a->catalog, &d);
	if (rc == 0)
		rc = args_calibration(a->calibration, cat, &cal_et, &cal, &d);
	if (rc == 0 && !catalog_model(cat, sc->model))
		rc = diag_set(&d, DIAG_EINPUT, "--model: unknown model id '%s' (see agentcap catalog)",
			      sc->model);
	if (rc == 0) {
		if (a->hardware) {
			n_hw = split_ids(a->hardware, hw_ids, SIZE_MAX_HARDWARE);
			if (n_hw == 0 || n_hw > SIZE_MAX_HARDWARE)
				rc = diag_set(&d, DIAG_EINPUT, "--hardware '%s': expected 1..%d catalogue "
					      "ids separated by commas", a->hardware, SIZE_MAX_HARDWARE);
		} else {
			hw_ids[0] = sc->hardware;
			n_hw = 1;
		}
	}
	for (size_t i = 0; rc == 0 && i < n_hw; i++)
		if (!catalog_hardware(cat, hw_ids[i]))
			rc = diag_set(&d, DIAG_EINPUT, "--hardware: unknown hardware id '%s' (expected "
				      "a catalogue id: see agentcap catalog)", hw_ids[i]);
	/* a mistyped weight format or KV dtype is bad input, as in replay, not
	 * "no shape fits" after the search */
	if (rc == 0) {
		struct cat_selection sel;
		struct diag sd;
		diag_init(&sd);
		rc = catalog_select(cat, &sel, hw_ids[0], sc->model, sc->weight_format,
				    sc->kv_cache_dtype, &sd);
		if (rc)
			rc = diag_set(&d, rc, "%s (from --format, or the scenario's weight_format or "
				      "kv_cache_dtype)", sd.msg);
	}
	/* compare: the prices and the baselines' ids, before any replay */
	struct prices *prices = NULL;
	if (rc == 0)
		rc = prices_load(&prices, a->prices ? a->prices : sc->prices[0] ? sc->prices : NULL, &d);
	/* compare: the benchmark scores, and the traced model named */
	struct quality *quality = NULL;
	if (rc == 0 && a->compare)
		rc = quality_load(&quality, NULL, NULL, &d);
	const char *traced = a->traced ? a->traced : sc->cost.traced_model;
	if (rc == 0 && a->compare && traced[0] && !catalog_model(cat, traced) &&
	    !prices_find(prices, PRICE_API_OUTPUT, traced) && !quality_has(quality, traced))
		rc = diag_set(&d, DIAG_EINPUT, "%s '%s': unknown model (expected a model id of "
			      "agentcap catalog, or an API id of agentcap catalog --prices)",
			      a->traced ? "--traced-model" : "cost.traced_model", traced);
	for (int i = 0; rc == 0 && i < a->n_pilot; i++) {
		const char *m = a->pilot[i].model;
		size_t n = a->pilot[i].len;
		if (!(strlen(sc->model) == n && strncmp(m, sc->model, n) == 0) &&
		    !(strlen(a->api) == n && strncmp(m, a->api, n) == 0))
			rc = diag_set(&d, DIAG_EINPUT, "--acceptance %.*s=%g: %.*s is neither the "
				      "self-hosted model (%s) nor the API's (%s) (expected one of them)",
				      (int)n, m, a->pilot[i].rate, (int)n, m, sc->model, a->api);
	}
	/* the scenario's elastic row fits every hardware option priced */
	for (size_t i = 0; rc == 0 && i < n_hw; i++)
		rc = cost_gpu_hour_row_check(prices, catalog_hardware(cat, hw_ids[i]),
					     sc->cost.gpu_hour_row, &d);
	if (rc == 0 && a->compare && !prices_find(prices, PRICE_API_OUTPUT, a->api))
		rc = diag_set(&d, DIAG_EINPUT, "--api: no API prices for '%s' (expected an id of an "
			      "api_output row: see agentcap catalog --prices)", a->api);
	if (rc == 0 && a->compare && !prices_find(prices, PRICE_SEAT, a->seats))
		rc = diag_set(&d, DIAG_EINPUT, "--seats: no seat plan '%s' (expected an id of a seat "
			      "row: see agentcap catalog --prices)", a->seats);
	/* the scenario's API backends: in every replay of size, and compare's
	 * box + API rows (docs/hybrid.md); checked now, not after the search */
	if (rc == 0 && sc->n_backends > 0) {
		struct deploy_backends bk;
		rc = deploy_backends(sc, prices, &bk, &d);
	}
	for (int32_t i = 0; rc == 0 && a->compare && i < sc->n_backends; i++) {
		const struct scenario_backend *b = &sc->backends[i];
		const char *list = b->latency[0] ? b->latency : b->price;
		if (strcmp(b->kind, "seat") == 0 && !prices_find(prices, PRICE_API_OUTPUT, list))
			rc = diag_set(&d, DIAG_EINPUT,
				      "%s: backends[%d] '%s': latency: '%s' has no API prices to value "
				      "the seat plan's usage (expected an API model's id)",
				      sc->source, (int)i, b->name, list);
	}
	if (rc == 0 && !a->trace)
		rc = args_team_fits("--engineers", a->engineers, a->days ? a->days : 1, &d);
	if (rc == 0)
		rc = teams_make(a, teams, &d);
	struct pool *pool = NULL;
	if (rc == 0) {
		long cores = sysconf(_SC_NPROCESSORS_ONLN);
		int64_t jobs = a->jobs ? a->jobs : cores < 1 ? 1 : cores > POOL_MAX_JOBS ? POOL_MAX_JOBS
											    : cores;
		rc = pool_new(&pool, (int32_t)jobs, &d);
	}
	char team[SIZE_TEAM_TEXT];
	snprintf(team, sizeof(team), "%lld engineers, %s %s", (long long)a->engineers,
		 a->trace ? "resampled from" : "synthetic, profile", a->trace ? a->trace : a->profile);
	char router[ROUTER_DESCRIBE_MAX];
	struct report_run run = {.version = AGENTCAP_VERSION, .scenario_name = sc->name,
				 .scenario_path = sc->source, .trace = team, .model_id = sc->model,
				 .router = router_policy_name(sc->router.policy),
				 .router_settings = router_describe(&sc->router, router, sizeof(router)),
				 .seed = teams->seeds[0]};
	struct size_setup s = {
		.cat = cat,
		.base = sc,
		.hardware = hw_ids,
		.n_hardware = n_hw,
		.slo = &slo,
		.replay = {.skip_bad = a->skip_bad, .context_policy = sc->context_policy,
			   .scale = {.engineers = a->trace ? a->engineers : 0,
				     .days = a->trace ? a->days : 0}},
		.traces = (const char *const *)teams->paths,
		.seeds = teams->seeds,
		.replicates = (int32_t)a->replicates,
		.confidence = a->confidence,
		.max_replicas = (int32_t)a->max_replicas,
		.no_early = a->no_early,
		.pool = pool,
		.redundancy = (int32_t)a->redundancy,
		.run = &run,
		.prices = prices,
		.bands = &shipped_bands,
		/* compare sizes the box alone, and adds box + API rows itself */
		.local_only = a->compare,
	};
	/* the error bars say which options the calibration set has no row of */
	if (rc == 0)
		rc = uncert_load(&shipped_bands, NULL, &d);
	/* --model-uncertainty: size against tightened objectives */
	struct slo slo_tight;
	double band_pct[SLO_MAX_OBJECTIVES];
	if (rc == 0 && a->model_uncertainty) {
		struct uncert_table bands;
		uncert_init(&bands);
		rc = uncert_load(&bands, NULL, &d);
		if (rc == 0)
			rc = size_slo_with_bands(&slo_tight, band_pct, &s, &slo, &bands, &d);
		uncert_release(&bands);
		if (rc == 0) {
			s.slo = &slo_tight;
			s.slo_asked = &slo;
			s.slo_band_pct = band_pct;
		}
	}
	if (rc == 0 && a->n_teams > 1) {
		/* compare over team sizes: each sized and priced on its own */
		int status = run_range(a, &s, sc, cat, prices, quality, teams, res, team,
				       sizeof(team), &d);
		uncert_release(&shipped_bands);
		pool_free(pool);
		prices_free(prices);
		quality_free(quality);
		teams_release(teams);
		catalog_free(cat);
		calfile_free(cal);
		free(cal_et);
		free(a->hardware);
		free(a);
		free(res);
		free(teams);
		free(sc);
		return status == 2 ? cli_fail(d.code, d.msg) : status;
	}
	if (rc == 0)
		rc = size_run(&s, res, &d);
	/* --tune: res becomes the tuned result, res_base keeps size's own */
	struct tune_result *tr = NULL;
	struct size_result *res_base = NULL;
	if (rc == 0 && a->tune) {
		tr = calloc(1, sizeof(*tr));
		res_base = malloc(sizeof(*res_base));
		rc = tr && res_base ? tune_run(&s, (int32_t)a->tune_budget, res, tr, &d)
				    : diag_set(&d, DIAG_ENOMEM, "out of memory");
		if (rc == 0) {
			*res_base = *res;
			*res = *tr->tuned;
			memset(tr->tuned, 0, sizeof(*tr->tuned));
			s.tune = tr;
			s.write_tune = tune_json;
		}
	}
	/* an option whose search stopped: the others are not lost with it */
	if (rc != 0 && res->n > 0 && !a->quiet)
		size_table(stdout, &s, res);
	if (rc == 0) {
		/* each option's regime: its engine, the batch a replica decodes on
		 * average (Little's law: output tokens per second and replica times
		 * the median time per token), the mean prompt */
		args_calibration_describe(&rcal, cal);
		for (size_t i = 0; i < res->n; i++) {
			const struct size_option *o = &res->opt[i];
			const struct size_eval *e = o->found ? &o->best
						    : o->have_closest ? &o->closest : NULL;
			const struct size_fig *f = e ? &e->fig[0] : NULL;
			double reps = e && e->replicas > 0 ? e->replicas : 1;
			double calls = f && f->calls - f->failed > 0 ? (double)(f->calls - f->failed) : 1;
			struct calfile_regime reg = {
				.hardware = o->hardware, .model = sc->model, .engine = o->engine_profile,
				.batch = f && f->duration_s > 0
					 ? f->output_tokens / f->duration_s / reps * f->tpot_p50_ms / 1e3
					 : 1,
				.context = f ? (double)f->prompt_tokens / calls : 1,
			};
			args_calibration_point(&rcal, cal, cat, o->hardware, &reg);
		}
		run.calibration = &rcal;
	}
	bool found = rc == 0 && size_found(res) > 0;
	struct compare_result *cmp = NULL;
	struct compare_setup cs;
	/* size prices its winners too (compare_monthly) */
	int crc = compare_setup_of(&cs, a, &s, sc, cat, prices, quality, &d);
	if (rc == 0)
		rc = crc;
	if (rc == 0 && found) {
		if (!(cmp = malloc(sizeof(*cmp))))
			rc = diag_set(&d, DIAG_ENOMEM, "out of memory");
		else
			rc = compare_run(&cs, res, cmp, &d);
	}
	/* --tune: the monthly cost with the scenario's settings beside the tuned */
	if (rc == 0 && s.tune && size_found(res_base) > 0) {
		struct compare_result *cb = malloc(sizeof(*cb));
		rc = cb ? compare_run(&cs, res_base, cb, &d) : diag_set(&d, DIAG_ENOMEM, "out of memory");
		if (rc == 0)
			tune_price(tr, cb, cmp);
		free(cb);
	} else if (rc == 0 && s.tune) {
		tune_price(tr, NULL, cmp);
	}
	if (rc == 0) {
		bool json_stdout = (a->json && strcmp(a->json, "-") == 0) ||
				   (a->html && strcmp(a->html, "-") == 0);
		if (!a->quiet && !json_stdout && a->summary && cmp && a->compare) {
			compare_summary(stdout, &cs, cmp, res);
		} else if (!a->quiet && !json_stdout) {
			size_table(stdout, &s, res);
			if (s.tune)
				tune_table(stdout, s.tune);
			report_calibration_table(stdout, &rcal);
			printf("Team: %lld engineers, %s %s; model %s, weights %s, KV cache %s\n",
			       (long long)a->engineers, a->trace ? "resampled from" : "synthetic, profile",
			       a->trace ? a->trace : a->profile, sc->model, sc->weight_format,
			       sc->kv_cache_dtype);
			if (cmp && a->compare) {
				printf("\n");
				compare_table(stdout, &cs, cmp);
			} else if (cmp) {
				compare_monthly(stdout, cmp);
			}
		}
		if (a->json || a->html) {
			/* one JSON result, written as it is and drawn as a page */
			struct cli_buf jb;
			rc = cli_buf_open(&jb, &d);
			int wrc = 0;
			if (rc == 0) {
				wrc = cmp && a->compare ? compare_json(jb.fp, &cs, cmp)
							: size_json(jb.fp, &s, res);
				rc = cli_buf_close(&jb, &d);
			}
			if (rc == 0 && wrc)
				rc = diag_set(&d, wrc, "out of memory for the JSON result");
			if (rc == 0 && a->json)
				rc = cli_text_write(a->json, jb.text, jb.len, &d);
			if (rc == 0 && a->html)
				rc = cli_html_write(a->html, jb.text, jb.len, "the run's result", &d);
			cli_buf_free(&jb);
		}
		if (rc == 0 && !found)
			fprintf(stderr, "agentcap %s: the answer is no (exit status 1): no deployment "
				"of %zu hardware option%s meets %s%s\n", a->compare ? "compare" : "size",
				n_hw, n_hw == 1 ? "" : "s", a->slo,
				a->compare ? ", so there is nothing self-hosted to price" : "");
	}
	free(cmp);
	pool_free(pool);
	prices_free(prices);
	quality_free(quality);
	size_result_release(res);
	if (res_base)
		size_result_release(res_base);
	free(res_base);
	if (tr)
		tune_result_release(tr);
	free(tr);
	teams_release(teams);
	catalog_free(cat);
	calfile_free(cal);
	free(cal_et);
	uncert_release(&shipped_bands);
	free(a->hardware);
	free(a);
	free(res);
	free(teams);
	free(sc);
	if (rc != 0)
		return cli_fail(rc, d.msg);
	return found ? 0 : 1;
}

int cmd_size(int argc, char **argv)
{
	return run(argc, argv, false);
}

int cmd_compare(int argc, char **argv)
{
	return run(argc, argv, true);
}
