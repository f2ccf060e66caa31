/* SPDX-License-Identifier: Apache-2.0
 * cmd_whatif: `agentcap whatif KIND TRACE` - replay a trace as recorded and
 * through one harness what-if, and print the two side by side. */
#define _GNU_SOURCE
#include "cli/cli.h"

#include "cli/args.h"

#include "base/diag.h"
#include "base/outfile.h"
#include "models/catalog.h"
#include "models/perf_model.h"
#include "models/profile.h"
#include "plan/whatif.h"
#include "replay/replay.h"
#include "replay/scenario.h"
#include "traces/rules.h"
#include "traces/xform.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
	"            [--slo ttft=MS[,tpot=MS]] [--seed N] [--format F] [--skip-bad]\n"
	"            [--catalog DIR] [--json FILE] [--quiet]\n"
	"\n"
	"DESCRIPTION\n"
	"    Replays TRACE twice with the same scenario and seed: as recorded, and\n"
	"    through one what-if transform applied to each session as it streams\n"
	"    (docs/whatif.md).  Prints prefill tokens computed, the token-weighted\n"
	"    prefix-cache hit rate, TTFT and TPOT percentiles, goodput and GPU busy\n"
	"    fraction for both, with the difference and the ratio.\n"
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
	"    --slo ttft=MS[,tpot=MS]\n"
	"        Latency objectives for goodput (default: the scenario's).\n"
	"    --json FILE\n"
	"        Also write the comparison as JSON ('-': standard output, no table).\n"
	"\n"
	"EXIT STATUS\n"
	"    0 success; 2 bad usage or input (a bad pattern shows the pattern,\n"
	"    PCRE2's message and the offset); 3 internal error.\n"
	"\n"
	"EXAMPLES\n"
	"    agentcap whatif cache-bust team.jsonl --pattern '^Date: .*$' --pin\n"
	"    agentcap whatif cache-bust team.jsonl --inject-at start --tokens 20\n";

#define MAX_SETS 256

struct whatif_args {
	const char *kind;
	const char *trace;
	const char *scenario;
	const char *json;
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
	double slo_ttft_ms, slo_tpot_ms;
	bool have_slo;
};

static const char *const KINDS[] = {"cache-bust", "no-retry", "think-time", "compact-at",
				    "max-output", "concurrency", NULL};

static int bad(const char *msg)
{
	fprintf(stderr, "agentcap whatif: %s (see agentcap whatif --help)\n", msg);
	return 2;
}

static bool parse_slo(const char *s, struct whatif_args *a)
{
	char buf[128];
	snprintf(buf, sizeof(buf), "%s", s);
	char *save = NULL;
	for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '=');
		double v;
		if (!eq || !args_number(eq + 1, 0, 1e9, false, &v))
			return false;
		*eq = '\0';
		if (strcmp(tok, "ttft") == 0)
			a->slo_ttft_ms = v;
		else if (strcmp(tok, "tpot") == 0)
			a->slo_tpot_ms = v;
		else
			return false;
	}
	a->have_slo = true;
	return true;
}

static int parse_args(int argc, char **argv, struct whatif_args *a)
{
	enum { O_SCENARIO = 1000, O_SET, O_JSON, O_SEED, O_FORMAT, O_SKIP, O_CATALOG, O_QUIET, O_HELP,
	       O_ENGINEERS, O_DAYS, O_PATTERN, O_PIN, O_RULES, O_INJECT, O_TOKENS, O_FACTOR, O_SLO };
	static const struct option opts[] = {
		{"scenario", required_argument, NULL, O_SCENARIO},
		{"set", required_argument, NULL, O_SET},
		{"json", required_argument, NULL, O_JSON},
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
		case O_SLO:
			if (!parse_slo(optarg, a))
				return args_bad("whatif", "--slo", optarg, "ttft=MS[,tpot=MS]");
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

int cmd_whatif(int argc, char **argv)
{
	struct whatif_args *a = malloc(sizeof(*a));
	if (!a)
		return cli_fail(DIAG_ENOMEM, "out of memory");
	int prc = parse_args(argc, argv, a);
	if (prc != 0) {
		free(a);
		return prc < 0 ? 0 : prc;
	}
	struct diag d;
	diag_init(&d);
	struct scenario sc;
	struct catalog *cat = NULL;
	struct perf_model pm;
	struct perf_profile *prof = NULL;
	struct engine_config cfg;
	struct rules *rules = NULL;
	struct whatif_variant v[2] = {{.label = "as recorded"}, {0}};
	xform_opts_init(&v[0].xform);
	struct whatif_result res;
	memset(&res, 0, sizeof(res));
	int rc = a->json ? outfile_check(a->json, &d) : 0;
	if (rc == 0)
		rc = variant_of(a, &rules, &v[1], &d);
	if (rc == 0)
		rc = scenario_load(&sc, a->scenario, a->sets, a->n_sets, &d);
	if (rc == 0 && sc.n_pools > 0)
		rc = diag_set(&d, DIAG_EINPUT, "%s: pools: whatif runs one replica shape (expected a "
			      "scenario without pools; replay takes pools)", sc.source);
	if (rc == 0)
		rc = catalog_load(&cat, a->catalog, &d);
	if (rc == 0)
		rc = scenario_resolve(&sc, cat, NULL, &d);
	if (rc == 0)
		rc = cli_scenario_engine(&sc, cat, &pm, &prof, &cfg, &d);
	if (rc == 0) {
		struct whatif_setup s = {
			.replay = {.trace_path = a->trace, .format = a->format, .skip_bad = a->skip_bad,
				   .seed = a->seed, .scale = a->scale,
				   .context_policy = v[1].compact_at ? CONTEXT_COMPACT : sc.context_policy,
				   .replicas = sc.replicas, .router = &sc.router},
			.cfg = &cfg,
			.perf = sim_perf_from_model(&pm),
			.replicas = sc.replicas,
			.slo_ttft_ms = a->have_slo ? a->slo_ttft_ms : sc.slo_ttft_ms,
			.slo_tpot_ms = a->have_slo ? a->slo_tpot_ms : sc.slo_tpot_ms,
		};
		s.replay.scale.seed = a->seed;
		sc.router.seed = a->seed;
		rc = whatif_run(&s, v, &res, &d);
	}
	if (rc == 0) {
		bool json_stdout = a->json && strcmp(a->json, "-") == 0;
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
		if (a->json) {
			struct outfile of;
			rc = outfile_open(&of, a->json, &d);
			if (rc == 0) {
				struct diag wd;
				diag_init(&wd);
				int wrc = whatif_json(of.fp, a->kind, a->seed, &res);
				if (wrc)
					diag_set(&wd, wrc, "%s: write failed", a->json);
				rc = outfile_finish(&of, wrc, &wd, &d);
			}
		}
	}
	whatif_result_release(&res);
	rules_free(rules);
	perf_profile_free(prof);
	catalog_free(cat);
	free(a);
	if (rc != 0)
		return cli_fail(rc, d.msg);
	return 0;
}
