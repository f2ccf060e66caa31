/* SPDX-License-Identifier: Apache-2.0
 * cmd_whatif: `agentcap whatif KIND TRACE` - replay a trace as recorded and
 * through one harness what-if, and print the two side by side. */
#define _GNU_SOURCE
#include "cli/cli.h"

#include "cli/args.h"

#include "base/diag.h"
#include "base/outfile.h"
#include "base/pool.h"
#include "base/warn.h"
#include "models/catalog.h"
#include "models/prices.h"
#include "plan/size.h"
#include "plan/whatif.h"
#include "replay/deploy.h"
#include "replay/replay.h"
#include "replay/scenario.h"
#include "replay/slo.h"
#include "reports/output.h"
#include "traces/rules.h"
#include "traces/xform.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char WHATIF_HELP[] =
	"NAME\n"
	"    agentcap whatif - what a harness habit costs: the trace as recorded beside a what-if\n"
	"\n"
	"SYNOPSIS\n"
	"    agentcap whatif cache-bust TRACE (--pattern REGEX [--pin] | --rules FILE |\n"
	"                                      --inject-at WHERE --tokens K) [COMMON]\n"
	"    agentcap whatif no-retry TRACE [COMMON]\n"
	"    agentcap whatif think-time TRACE --factor F [COMMON]\n"
	"    agentcap whatif compact-at TRACE --tokens K [COMMON]\n"
	"    agentcap whatif max-output TRACE --tokens K [COMMON]\n"
	"    agentcap whatif concurrency TRACE --factor F [COMMON]\n"
	"    COMMON: [--scenario FILE] [--set KEY=VALUE]... [--engineers N [--days D]]\n"
	"            [--slo OBJECTIVES [--hardware ID[,ID...]] [--max-replicas R]\n"
	"            [--prices FILE]] [--seed N] [--format F] [--skip-bad] [--jobs J]\n"
	"            [--catalog DIR] [--json FILE] [--html FILE] [--quiet]\n"
	"\n"
	"DESCRIPTION\n"
	"    Replays TRACE twice with the same scenario and seed: as recorded, and\n"
	"    through one what-if transform applied to each session as it streams\n"
	"    (docs/whatif.md).  Prints prefill tokens computed, the token-weighted\n"
	"    prefix-cache hit rate, TTFT and TPOT percentiles, goodput and GPU busy\n"
	"    fraction for both, with the difference and the ratio.  With --slo it\n"
	"    also sizes each variant as agentcap size does (same seed and options)\n"
	"    and prints the deployment, the GPUs and the monthly cost of each.\n"
	"\n"
	"    cache-bust  --pattern REGEX: a PCRE2 pattern (UTF-8, ^ and $ at line\n"
	"                ends) over segment text.  Without --pin the matched text is\n"
	"                kept volatile (the bug); with --pin it is replaced by a\n"
	"                constant before content ids are computed (the fix).\n"
	"                --rules FILE: a JSON list of {name, pattern, action}.\n"
	"                --inject-at start|after-system|before-last-turn --tokens K:\n"
	"                for traces without text, a volatile segment of K tokens on\n"
	"                every call.\n"
	"    no-retry    drop the calls that retry a failed tool step.\n"
	"    think-time  multiply every gap (tool and think time) by F.\n"
	"    compact-at  the harness compacts the context at K tokens.\n"
	"    max-output  cap every output at K tokens.\n"
	"    concurrency replay subagent sessions F times on average.\n"
	"\n"
	"OPTIONS\n"
	"    --scenario, --set, --seed, --format, --skip-bad, --catalog, --engineers,\n"
	"    --days: as for agentcap replay.\n"
	"    --slo OBJECTIVES\n"
	"        KEY=DURATION,... as for agentcap size (ttft_p95=2s,tpot_p50=50ms):\n"
	"        size both variants against them; goodput counts the calls within\n"
	"        their first TTFT and TPOT limits (default: the scenario's SLO, and\n"
	"        no sizing).\n"
	"    --hardware IDS\n"
	"        With --slo: hardware options to size, comma-separated catalogue\n"
	"        ids (default: the scenario's).\n"
	"    --max-replicas R\n"
	"        With --slo: the search's replica cap per shape (default 256).\n"
	"    --jobs J\n"
	"        Replays at once (1..256; default: the online cores): the two\n"
	"        variants side by side, then the two sizings and their candidates.\n"
	"        The results do not depend on it.\n"
	"    --prices FILE\n"
	"        With --slo: prices for the monthly costs (default: the scenario's\n"
	"        'prices', else the built-in catalogue).\n"
	"    --json FILE\n"
	"        Also write the comparison as JSON ('-': standard output, no table).\n"
	"    --html FILE\n"
	"        Also write a self-contained HTML page of it, drawn from the JSON (the\n"
	"        same as agentcap report on it): both variants' latency CDFs overlaid\n"
	"        and the change in each figure.\n"
	"\n"
	"EXIT STATUS\n"
	"    0 success; 2 bad usage or input (a bad pattern shows the pattern,\n"
	"    PCRE2's message and the offset; a rule past a bound of\n"
	"    docs/whatif.md, such as the match limit, names the rule, the segment\n"
	"    and the bound); 3 internal error.\n"
	"\n"
	"EXAMPLES\n"
	"    agentcap whatif cache-bust team.jsonl --pattern '^Date: .*$' --pin\n"
	"    agentcap whatif cache-bust team.jsonl --inject-at start --tokens 20\n"
	"    agentcap whatif cache-bust team.jsonl --pattern '^Date: .*$' --pin \\\n"
	"        --slo ttft_p95=2s,tpot_p50=50ms --hardware h100-sxm,l40s\n";

#define MAX_SETS 256

struct whatif_args {
	const char *kind;
	const char *trace;
	const char *scenario;
	const char *json;
	const char *html;
	const char *catalog;
	const char *sets[MAX_SETS];
	int n_sets;
	uint64_t seed;
	enum trace_format format;
	bool skip_bad;
	bool quiet;
	struct scale_opts scale;
	const char *pattern;
	const char *rules;
	bool pin;
	enum xform_where inject_at;
	int64_t tokens;
	double factor;
	bool have_factor;
	const char *slo;          /* --slo: size both variants */
	char *hardware;           /* copy of --hardware, split in place */
	int64_t max_replicas;
	const char *prices;
	int64_t jobs;             /* 0: the online cores */
};

static const char *const KINDS[] = {"cache-bust", "no-retry", "think-time", "compact-at",
				    "max-output", "concurrency", NULL};

static int bad(const char *msg)
{
	fprintf(stderr, "agentcap whatif: %s (see agentcap whatif --help)\n", msg);
	return 2;
}

static int parse_args(int argc, char **argv, struct whatif_args *a)
{
	enum { O_SCENARIO = 1000, O_SET, O_JSON, O_HTML, O_SEED, O_FORMAT, O_SKIP, O_CATALOG, O_QUIET,
	       O_HELP, O_ENGINEERS, O_DAYS, O_PATTERN, O_PIN, O_RULES, O_INJECT, O_TOKENS, O_FACTOR,
	       O_SLO, O_HW, O_MAXR, O_PRICES, O_JOBS };
	static const struct option opts[] = {
		{"scenario", required_argument, NULL, O_SCENARIO},
		{"set", required_argument, NULL, O_SET},
		{"json", required_argument, NULL, O_JSON},
		{"html", required_argument, NULL, O_HTML},
		{"seed", required_argument, NULL, O_SEED},
		{"format", required_argument, NULL, O_FORMAT},
		{"skip-bad", no_argument, NULL, O_SKIP},
		{"catalog", required_argument, NULL, O_CATALOG},
		{"quiet", no_argument, NULL, O_QUIET},
		{"help", no_argument, NULL, O_HELP},
		{"engineers", required_argument, NULL, O_ENGINEERS},
		{"days", required_argument, NULL, O_DAYS},
		{"pattern", required_argument, NULL, O_PATTERN},
		{"pin", no_argument, NULL, O_PIN},
		{"rules", required_argument, NULL, O_RULES},
		{"inject-at", required_argument, NULL, O_INJECT},
		{"tokens", required_argument, NULL, O_TOKENS},
		{"factor", required_argument, NULL, O_FACTOR},
		{"slo", required_argument, NULL, O_SLO},
		{"hardware", required_argument, NULL, O_HW},
		{"max-replicas", required_argument, NULL, O_MAXR},
		{"prices", required_argument, NULL, O_PRICES},
		{"jobs", required_argument, NULL, O_JOBS},
		{NULL, 0, NULL, 0},
	};
	memset(a, 0, sizeof(*a));
	a->seed = 1;
	optind = 1;
	opterr = 0;
	int c;
	int64_t v64;
	double v;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case O_SCENARIO: a->scenario = optarg; break;
		case O_SET:
			if (a->n_sets == MAX_SETS)
				return bad("too many --set options");
			a->sets[a->n_sets++] = optarg;
			break;
		case O_JSON: a->json = optarg; break;
		case O_HTML: a->html = optarg; break;
		case O_SEED:
			if (!args_int(optarg, 0, INT64_MAX, &v64))
				return args_bad("whatif", "--seed", optarg, "a non-negative integer");
			a->seed = (uint64_t)v64;
			break;
		case O_FORMAT:
			if (!args_trace_format(optarg, &a->format))
				return args_bad("whatif", "--format", optarg, "auto, canonical or mooncake");
			break;
		case O_SKIP: a->skip_bad = true; break;
		case O_CATALOG: a->catalog = optarg; break;
		case O_QUIET: a->quiet = true; break;
		case O_ENGINEERS:
			if (!args_int(optarg, 1, 1000000, &v64))
				return args_bad("whatif", "--engineers", optarg, "an integer 1..1000000");
			a->scale.engineers = v64;
			break;
		case O_DAYS:
			if (!args_int(optarg, 0, 1000000, &v64))
				return args_bad("whatif", "--days", optarg, "an integer 0..1000000");
			a->scale.days = v64;
			break;
		case O_PATTERN: a->pattern = optarg; break;
		case O_PIN: a->pin = true; break;
		case O_RULES: a->rules = optarg; break;
		case O_INJECT:
			if (!xform_where_parse(optarg, &a->inject_at))
				return args_bad("whatif", "--inject-at", optarg,
						"start, after-system or before-last-turn");
			break;
		case O_TOKENS:
			if (!args_int(optarg, 1, 1000000000, &a->tokens))
				return args_bad("whatif", "--tokens", optarg, "an integer 1..1000000000");
			break;
		case O_FACTOR:
			if (!args_number(optarg, 0, 1000, false, &v))
				return args_bad("whatif", "--factor", optarg, "a number 0..1000");
			a->factor = v;
			a->have_factor = true;
			break;
		case O_SLO: a->slo = optarg; break;
		case O_HW:
			free(a->hardware);
			if (!(a->hardware = strdup(optarg)))
				return bad("out of memory");
			break;
		case O_MAXR:
			if (!args_int(optarg, 1, 65536, &a->max_replicas))
				return args_bad("whatif", "--max-replicas", optarg, "an integer 1..65536");
			break;
		case O_PRICES: a->prices = optarg; break;
		case O_JOBS:
			if (!args_int(optarg, 1, POOL_MAX_JOBS, &a->jobs))
				return args_bad("whatif", "--jobs", optarg, "an integer 1..256");
			break;
		case 'h':
		case O_HELP:
			fputs(WHATIF_HELP, stdout);
			return -1;
		default:
			fprintf(stderr, "agentcap whatif: unknown or incomplete option '%s' (see agentcap "
				"whatif --help)\n", argv[optind - 1]);
			return 2;
		}
	}
	if (optind != argc - 2)
		return bad("expected KIND and TRACE");
	a->kind = argv[optind];
	a->trace = argv[optind + 1];
	bool known = false;
	for (int i = 0; KINDS[i]; i++)
		known = known || strcmp(a->kind, KINDS[i]) == 0;
	if (!known)
		return args_bad("whatif", "KIND", a->kind, "cache-bust, no-retry, think-time, "
				"compact-at, max-output or concurrency");
	bool cb = strcmp(a->kind, "cache-bust") == 0;
	int ways = (a->pattern != NULL) + (a->rules != NULL) + (a->inject_at != XFORM_NONE);
	if (cb && ways != 1)
		return bad("cache-bust needs exactly one of --pattern, --rules, --inject-at");
	if (!cb && (ways || a->pin))
		return bad("--pattern, --pin, --rules and --inject-at belong to cache-bust");
	if (a->pin && !a->pattern)
		return bad("--pin goes with --pattern");
	bool wants_tokens = (cb && a->inject_at != XFORM_NONE) || strcmp(a->kind, "compact-at") == 0 ||
			    strcmp(a->kind, "max-output") == 0;
	bool wants_factor = strcmp(a->kind, "think-time") == 0 || strcmp(a->kind, "concurrency") == 0;
	if (wants_tokens != (a->tokens > 0))
		return bad(wants_tokens ? "this what-if needs --tokens K" : "--tokens does not apply here");
	if (wants_factor != a->have_factor)
		return bad("think-time and concurrency need --factor F; no other what-if takes it");
	if (a->scale.days && !a->scale.engineers)
		return bad("--days needs --engineers");
	if (!a->slo && (a->hardware || a->max_replicas || a->prices))
		return bad("--hardware, --max-replicas and --prices go with --slo");
	return 0;
}

/* The what-if variant of the arguments (xform options and label). */
static int variant_of(const struct whatif_args *a, struct rules **rules, struct whatif_variant *v,
		      struct diag *d)
{
	xform_opts_init(&v->xform);
	const char *k = a->kind;
	if (strcmp(k, "cache-bust") == 0) {
		if (a->inject_at != XFORM_NONE) {
			v->xform.inject_at = a->inject_at;
			v->xform.inject_tokens = a->tokens;
			v->label = "injected";
			return 0;
		}
		int rc = rules_new(rules, d);
		if (rc == 0 && a->rules)
			rc = rules_load(*rules, a->rules, d);
		if (rc == 0 && a->pattern)
			rc = rules_add(*rules, "pattern", a->pattern, a->pin ? RULE_PIN : RULE_VOLATILE,
				       "--pattern", d);
		v->xform.rules = *rules;
		v->label = a->rules ? "with rules" : a->pin ? "pinned" : "volatile";
		return rc;
	}
	if (strcmp(k, "no-retry") == 0) {
		v->xform.no_retry = true;
		v->label = "no retries";
	} else if (strcmp(k, "think-time") == 0) {
		v->xform.think_scale = a->factor;
		v->label = "think time xF";
	} else if (strcmp(k, "compact-at") == 0) {
		v->compact_at = a->tokens;
		v->label = "compact at K";
	} else if (strcmp(k, "max-output") == 0) {
		v->xform.max_output = a->tokens;
		v->label = "outputs capped";
	} else {
		v->xform.concurrency = a->factor;
		v->label = "subagents xF";
	}
	return 0;
}

/* The baselines agentcap compare prices by default.  The sizing prices
 * them too (compare_run) but shows only the self-hosted rows. */
#define DEFAULT_API "claude-sonnet-5-5"
#define DEFAULT_SEATS "claude-team-premium"

/* The first limit of metric m among the objectives (0: none), for goodput. */
static double first_limit(const struct slo *slo, enum slo_metric m)
{
	for (int i = 0; i < slo->n; i++)
		if (slo->obj[i].metric == m)
			return slo->obj[i].limit_ms;
	return 0;
}

/* With --slo: keep the scenario as loaded (size resolves it per shape),
 * check the hardware ids and load the prices, before any replay. */
static int sizing_checks(struct whatif_args *a, const struct scenario *sc,
			 const struct catalog *cat, struct scenario **base, struct prices **prices,
			 const char **hw_ids, size_t *n_hw, struct diag *d)
{
	if (!(*base = malloc(sizeof(**base))))
		return diag_set(d, DIAG_ENOMEM, "out of memory");
	**base = *sc;
	if (a->hardware) {
		*n_hw = 0;
		for (char *save = NULL, *tok = strtok_r(a->hardware, ",", &save); tok;
		     tok = strtok_r(NULL, ",", &save)) {
			if (*n_hw == SIZE_MAX_HARDWARE)
				return diag_set(d, DIAG_EINPUT, "--hardware: more than %d ids (expected "
						"1..%d catalogue ids separated by commas)",
						SIZE_MAX_HARDWARE, SIZE_MAX_HARDWARE);
			hw_ids[(*n_hw)++] = tok;
		}
		if (*n_hw == 0)
			return diag_set(d, DIAG_EINPUT, "--hardware: expected 1..%d catalogue ids "
					"separated by commas", SIZE_MAX_HARDWARE);
	} else {
		hw_ids[0] = (*base)->hardware;
		*n_hw = 1;
	}
	for (size_t i = 0; i < *n_hw; i++)
		if (!catalog_hardware(cat, hw_ids[i]))
			return diag_set(d, DIAG_EINPUT, "--hardware: unknown hardware id '%s' (expected "
					"a catalogue id: see agentcap catalog)", hw_ids[i]);
	int rc = prices_load(prices, a->prices ? a->prices : sc->prices[0] ? sc->prices : NULL, d);
	for (size_t i = 0; rc == 0 && i < *n_hw; i++)
		rc = cost_gpu_hour_row_check(*prices, catalog_hardware(cat, hw_ids[i]),
					     sc->cost.gpu_hour_row, d);
	if (rc == 0 && (!prices_find(*prices, PRICE_API_OUTPUT, DEFAULT_API) ||
			!prices_find(*prices, PRICE_SEAT, DEFAULT_SEATS)))
		rc = diag_set(d, DIAG_EINPUT, "%s: the monthly costs are priced as agentcap size "
			      "prices them, which needs the API '%s' and the seat plan '%s' (expected "
			      "a price file with both: see agentcap catalog --prices)",
			      a->prices ? a->prices : sc->prices[0] ? sc->prices : "prices",
			      DEFAULT_API, DEFAULT_SEATS);
	return rc;
}

int cmd_whatif(int argc, char **argv)
{
	struct whatif_args *a = malloc(sizeof(*a));
	if (!a)
		return cli_fail(DIAG_ENOMEM, "out of memory");
	int prc = parse_args(argc, argv, a);
	if (prc != 0) {
		free(a->hardware);
		free(a);
		return prc < 0 ? 0 : prc;
	}
	struct diag d;
	diag_init(&d);
	struct scenario sc;
	struct scenario *base = NULL;    /* as loaded, for the sizing */
	struct prices *prices = NULL;
	struct slo slo;
	const char *hw_ids[SIZE_MAX_HARDWARE];
	size_t n_hw = 0;
	struct catalog *cat = NULL;
	struct deployment dep;
	bool built = false;
	struct warn_list *warns = malloc(sizeof(*warns));
	struct rules *rules = NULL;
	struct whatif_variant v[2] = {{.label = "as recorded"}, {0}};
	xform_opts_init(&v[0].xform);
	struct whatif_result res;
	memset(&res, 0, sizeof(res));
	struct pool *pool = NULL;
	/* checks first: nothing is replayed or written before they pass */
	int rc = warns ? 0 : diag_set(&d, DIAG_ENOMEM, "out of memory");
	if (warns)
		warn_list_init(warns);
	if (rc == 0 && a->slo)
		rc = slo_parse(&slo, a->slo, "--slo", &d);
	if (rc == 0 && a->json)
		rc = outfile_check(a->json, &d);
	if (rc == 0 && a->html)
		rc = outfile_check(a->html, &d);
	if (rc == 0)
		rc = outfile_distinct((const char *const[]){"--json", "--html"},
				      (const char *const[]){a->json, a->html}, 2, &d);
	if (rc == 0)
		rc = variant_of(a, &rules, &v[1], &d);
	if (rc == 0)
		rc = scenario_load(&sc, a->scenario, a->sets, a->n_sets, &d);
	if (rc == 0)
		rc = deploy_check(&sc, a->slo ? DEPLOY_CMD_WHATIF_SIZED : DEPLOY_CMD_WHATIF, &d);
	if (rc == 0)
		rc = catalog_load(&cat, a->catalog, &d);
	if (rc == 0 && a->slo)
		rc = sizing_checks(a, &sc, cat, &base, &prices, hw_ids, &n_hw, &d);
	if (rc == 0 && !prices && sc.n_backends > 0 && a->prices)
		rc = prices_load(&prices, a->prices, &d);
	if (rc == 0) {
		struct deploy_opts dopt = {.prices = prices};
		rc = deploy_build(&dep, &sc, cat, &dopt, warns, &d);
		built = rc == 0;
	}
	for (size_t i = 0; rc == 0 && i < warns->count; i++)
		fprintf(stderr, "agentcap whatif: warning: %s\n", warns->items[i].msg);
	if (rc == 0) {
		struct whatif_setup s = {
			.dep = &dep,
			.replay = {.trace_path = a->trace, .format = a->format, .skip_bad = a->skip_bad,
				   .seed = a->seed, .scale = a->scale},
			.compact = v[1].compact_at > 0,
			.slo_ttft_ms = a->slo ? first_limit(&slo, SLO_TTFT) : sc.slo_ttft_ms,
			.slo_tpot_ms = a->slo ? first_limit(&slo, SLO_TPOT) : sc.slo_tpot_ms,
		};
		struct whatif_sizing z = {
			.cat = cat,
			.base = base,
			.hardware = hw_ids,
			.n_hardware = n_hw,
			.slo = &slo,
			.max_replicas = (int32_t)a->max_replicas,
			.prices = prices,
			.api_id = DEFAULT_API,
			.seat_id = DEFAULT_SEATS,
			.engineers = a->scale.engineers > 0 ? a->scale.engineers : 1,
		};
		if (a->slo)
			s.sizing = &z;
		s.replay.scale.seed = a->seed;
		long cores = sysconf(_SC_NPROCESSORS_ONLN);
		int64_t jobs = a->jobs ? a->jobs : cores < 1 ? 1 : cores > POOL_MAX_JOBS ? POOL_MAX_JOBS
											    : cores;
		rc = pool_new(&pool, (int32_t)jobs, &d);
		s.pool = pool;
		if (rc == 0)
			rc = whatif_run(&s, v, &res, &d);
	}
	if (rc == 0) {
		bool json_stdout = (a->json && strcmp(a->json, "-") == 0) ||
				   (a->html && strcmp(a->html, "-") == 0);
		if (!a->quiet && !json_stdout) {
			whatif_table(stdout, a->kind, &res);
			const struct xform_stats *x = &res.side[1].st.xform;
			printf("Scenario: %s; seed %llu; %s\n", sc.name, (unsigned long long)a->seed,
			       a->trace);
			if (strcmp(a->kind, "cache-bust") == 0 && rules)
				printf("Rules: %zu (JIT %s); segments with text %lld, pinned %lld, volatile "
				       "%lld, matches %lld\n", rules_count(rules),
				       rules_jit(rules) ? "on" : "off", (long long)x->rules.segments_seen,
				       (long long)x->rules.segments_pinned,
				       (long long)x->rules.segments_volatile, (long long)x->rules.matches);
			else if (strcmp(a->kind, "cache-bust") == 0)
				printf("Injected: %lld calls, %lld tokens each, at %s\n",
				       (long long)x->calls_injected, (long long)a->tokens,
				       xform_where_name(a->inject_at));
			else if (strcmp(a->kind, "no-retry") == 0)
				printf("Retries dropped: %lld\n", (long long)x->retries_dropped);
			else if (strcmp(a->kind, "max-output") == 0)
				printf("Outputs capped: %lld\n", (long long)x->outputs_capped);
			else if (strcmp(a->kind, "concurrency") == 0)
				printf("Subagent sessions added %lld, dropped %lld\n",
				       (long long)x->subagents_added, (long long)x->subagents_dropped);
			else if (strcmp(a->kind, "compact-at") == 0)
				printf("Calls compacted: %lld as recorded, %lld at %lld tokens\n",
				       (long long)res.side[0].st.calls_compacted,
				       (long long)res.side[1].st.calls_compacted, (long long)a->tokens);
		}
		if (a->json || a->html) {
			/* one JSON result, written as it is and drawn as a page */
			struct report_run run = {.version = AGENTCAP_VERSION, .scenario_name = sc.name,
						 .scenario_path = sc.source, .trace = a->trace,
						 .model_id = sc.model, .seed = a->seed};
			struct cli_buf jb;
			rc = cli_buf_open(&jb, &d);
			int wrc = 0;
			if (rc == 0) {
				wrc = whatif_json(jb.fp, a->kind, a->seed, &run, &res);
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
	}
	whatif_result_release(&res);
	prices_free(prices);
	free(base);
	free(a->hardware);
	pool_free(pool);
	rules_free(rules);
	if (built)
		deploy_release(&dep);
	free(warns);
	catalog_free(cat);
	free(a);
	if (rc != 0)
		return cli_fail(rc, d.msg);
	return 0;
}
