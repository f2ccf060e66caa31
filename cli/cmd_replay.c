/* SPDX-License-Identifier: Apache-2.0
 * cmd_replay: `agentcap replay TRACE` - one trace, one scenario, one report. */
#define _GNU_SOURCE
#include "cli/cli.h"

#include "cli/args.h"
#include "cli/progress.h"

#include "base/diag.h"
#include "base/outfile.h"
#include "base/warn.h"
#include "models/apilat.h"
#include "models/calfile.h"
#include "models/catalog.h"
#include "models/cost.h"
#include "models/perf_model.h"
#include "models/preflight.h"
#include "models/prices.h"
#include "models/profile.h"
#include "models/uncert.h"
#include "replay/replay.h"
#include "replay/scenario.h"
#include "reports/backends.h"
#include "reports/cluster.h"
#include "reports/charts.h"
#include "reports/costing.h"
#include "reports/timeseries.h"
#include "reports/metrics.h"
#include "reports/output.h"
#include "reports/reqcsv.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char REPLAY_HELP[] =
	"NAME\n"
	"    agentcap replay - replay a trace through a simulated serving deployment\n"
	"\n"
	"SYNOPSIS\n"
	"    agentcap replay TRACE [--scenario FILE] [--set KEY=VALUE]... [--json FILE]\n"
	"                    [--csv FILE] [--html FILE] [--seed N] [--format auto|canonical|mooncake] [--skip-bad]\n"
	"                    [--catalog DIR] [--calibration FILE] [--quiet] [--engineers N [--days D] [--jitter S]]\n"
	"                    [--cost] [--prices FILE]\n"
	"\n"
	"DESCRIPTION\n"
	"    Streams TRACE (an agentcap trace, docs/trace-format.md, or a Mooncake\n"
	"    trace; plain or gzip-compressed, detected by content) through the\n"
	"    scenario's vLLM-style engine replicas (one unless `replicas` says more)\n"
	"    behind a router, on the scenario's model and hardware.  Sessions\n"
	"    replay closed loop: each call is issued its recorded gap after the\n"
	"    simulated completion of the previous one.  Request-level traces replay open\n"
	"    loop at their timestamps.  Prints a table of vllm-bench-serve style\n"
	"    metrics plus prefix-cache, preemption, utilisation and session figures.\n"
	"\n"
	"    Before simulating it checks the deployment and reads the trace once:\n"
	"    an engine without a backend for the hardware, a weight format the\n"
	"    engine does not load, max_model_len past the model's context, or a\n"
	"    trace none of whose calls fit stop it (exit 2); calls longer than\n"
	"    max_model_len or the KV cache, and weight formats the hardware cannot\n"
	"    compute in, are warned about on standard error and at the top of the\n"
	"    report (docs/scenario.md, Pre-flight checks).\n"
	"\n"
	"OPTIONS\n"
	"    --scenario FILE\n"
	"        Scenario JSON (docs/scenario.md).  Without it the built-in default\n"
	"        (scenarios/default.json: Llama-3.1-8B on one H100 SXM) is used.\n"
	"    --set KEY=VALUE\n"
	"        Override one scenario key by its dotted path, e.g.\n"
	"        --set engine.enable_prefix_caching=false --set engine.kv_cache_tokens=200000.\n"
	"        Repeatable; applied in order after the file.  VALUE is read as JSON\n"
	"        when it parses as JSON, else as a string.\n"
	"    --json FILE\n"
	"        Also write every metric as JSON (docs/metrics.md) to FILE, atomically;\n"
	"        '-' writes to standard output and suppresses the table.\n"
	"    --seed N\n"
	"        In a plain replay nothing is drawn at random: the seed is only\n"
	"        reported, and any seed gives the same figures.  With --engineers it\n"
	"        decides which engineer-days each engineer draws (and the --jitter\n"
	"        shifts): another seed, another team.  Default 1.\n"
	"    --format F\n"
	"        Trace format: auto (default), canonical or mooncake.\n"
	"    --skip-bad\n"
	"        Count and skip malformed trace lines instead of stopping.\n"
	"    --catalog DIR\n"
	"        Read hardware/model catalogue JSON from DIR instead of the built-in copy.\n"
	"    --calibration FILE\n"
	"        Lay the parameters of a calibration file from agentcap calibrate (your\n"
	"        own benchmarks) over the built-in ones.  The table and the JSON say\n"
	"        which calibration the run rests on and how far its regime is from the\n"
	"        nearest measured point (docs/calibrate.md).\n"
	"    --quiet\n"
	"        Do not print the table, nor the progress line.  On a terminal, a run\n"
	"        longer than a second shows on standard error the simulated time,\n"
	"        calls done, calls per second and the time left (NO_COLOR turns its\n"
	"        colour off); nothing is shown when standard error is not a terminal.\n"
	"        AGENTCAP_PROGRESS_AFTER=S in the environment: S seconds of quiet\n"
	"        instead of one.\n"
	"    --engineers N\n"
	"        Replay a team of N engineers resampled from the trace: whole\n"
	"        engineer-days (engineer, day of the session start in the engineer's\n"
	"        own time zone: their day begins in their longest quiet spell) drawn\n"
	"        with --seed, keeping their times of day, so a pilot's trace sizes a\n"
	"        rollout.  A one-day team in four time zones stays one day.\n"
	"        Request-level traces count as one engineer.  See docs/stats.md.\n"
	"    --days D\n"
	"        Days of the scaled team (default: as many as the trace spans).\n"
	"    --jitter S\n"
	"        Shift each drawn engineer-day by up to S seconds (default 0), so\n"
	"        copies of one engineer-day do not arrive in lockstep.\n";

/* The cost options (a C11 string literal is kept under 4095 bytes). */
static const char REPLAY_HELP_COST[] =
	"    --cost\n"
	"        After the table, price the replayed deployment (docs/cost.md):\n"
	"        purchase, dedicated and elastic rental of the scenario's hardware\n"
	"        where the price catalogue has a price, per month, per 1M output\n"
	"        tokens, per accepted task and per engineer-month, each with its\n"
	"        parts and every assumption and source, and the energy.  A month\n"
	"        repeats the replayed span: 21.67 working days / --days with\n"
	"        --engineers, else around the clock.  Off by default.\n"
	"    --prices FILE\n"
	"        With --cost: prices from FILE (the shape of prices.json; `agentcap\n"
	"        catalog --prices`) instead of the scenario's `prices` or the\n"
	"        built-in catalogue.  Checked before the replay (exit 2 if bad).\n"
	"        The scenario's cost.* keys (docs/scenario.md) change the assumptions:\n"
	"        --set cost.operator_usd_month=0 --set cost.acceptance_rate=0.6.\n";

/* The options for more outputs (a C11 string literal is kept under 4095 bytes). */
static const char REPLAY_HELP_OUTPUTS[] =
	"    --csv FILE\n"
	"        Also write one row per call (session, call, replica, arrival, router\n"
	"        wait, queue, TTFT, TPOT, E2E, tokens, preemptions, outcome) to FILE,\n"
	"        as calls finish, atomically (docs/output-schema.md).\n"
	"    --html FILE\n"
	"        Also write the report as one self-contained HTML page (inline CSS and\n"
	"        SVG charts, no scripts, nothing fetched): what was run, the answer,\n"
	"        latency figures, CDFs of TTFT, TPOT and E2E with the SLO lines,\n"
	"        calls arriving and the prefix-cache hit rate over time.  Drawn from\n"
	"        the JSON result: agentcap report on a --json file gives the same page.\n"
	"\n";

/* Second half of the page (a C11 string literal is kept under 4095 bytes). */
static const char REPLAY_HELP_CLUSTER[] =
	"CLUSTER KEYS (docs/scenario.md)\n"
	"    replicas                     engine instances of the scenario's shape (1)\n"
	"    kv_tiers.host_gb             host-DRAM KV tier below each GPU cache, GB (0 = off)\n"
	"    kv_tiers.host_gbs            its load bandwidth per GPU, GB/s (0 = the host link)\n"
	"    kv_tiers.disk_gb, .disk_gbs  a disk/remote tier below it, GB and GB/s (0 = none)\n"
	"    kv_tiers.shared_by           replicas sharing one set of tiers (1)\n"
	"    router.policy                round_robin (default), least_requests,\n"
	"                                 least_tokens, power_of_two, session_affinity,\n"
	"                                 prefix_aware\n"
	"    router.max_outstanding       calls per replica before the router queues (0 = no limit)\n"
	"    router.queue_limit           calls the router holds; more are refused (0 = no limit)\n"
	"    router.affinity_saturation   session_affinity: leave a replica at this many calls\n"
	"    router.prefix_scorer         prefix_aware: cache_aware (SGLang gateway, default) or\n"
	"                                 weighted (llm-d)\n"
	"    router.prefix_load_cap       prefix_aware: calls above the least loaded where load wins (64)\n"
	"    router.cache_threshold       cache_aware: cached share of the prompt that attracts (0.3)\n"
	"    router.balance_rel_threshold cache_aware: max/min load that is imbalanced (1.5)\n"
	"    router.prefix_weight         weighted: weight of the cached share (3)\n"
	"    router.load_weight           weighted: weight of the load (2)\n"
	"    expert_parallel_size         1 (default) or tensor_parallel_size: MoE experts\n"
	"                                 spread whole over the replica's GPUs\n"
	"    pools                        [{name, hardware, model, weight_format, replicas,\n"
	"                                 tensor_parallel_size, engine.*, ...}, ...]: replicas\n"
	"                                 of different shapes behind the router; a key a pool\n"
	"                                 leaves out comes from the top level.  One tokenizer\n"
	"                                 (vocabulary size) and one engine.block_size for all;\n"
	"                                 --set pools[0].replicas=3 sets one pool's key\n"
	"    With more than one replica, or pools, the report adds a cluster section:\n"
	"    GPU-hours provisioned and busy, the router's decisions, one line per replica\n"
	"    and, with pools, each pool's shape, requests, busy %, hit %, preemptions,\n"
	"    P95 TTFT and GPU-hours.\n"
	"    report.interval_s            time-series sample interval, simulated s (0 = off):\n"
	"                                 the JSON report adds `timeseries` (docs/metrics.md)\n"
	"\n";

static const char REPLAY_HELP_ELASTIC[] =
	"START-UP, AUTOSCALING AND FAULTS (docs/scenario.md; all off by default)\n"
	"    startup.provision_s          machine + engine start, weights aside (120 s)\n"
	"    startup.storage_gbs          weight load bandwidth (1 GB/s); start-up =\n"
	"                                 provision_s + weight bytes / storage_gbs\n"
	"    autoscale.enabled            follow the load between min and max replicas\n"
	"    autoscale.metric             inflight (default), queue or kv, per replica\n"
	"    autoscale.target             target of the metric (0 = 100, 1 or 0.8)\n"
	"    autoscale.min_replicas       fewest replicas (1; 0 = scale to zero)\n"
	"    autoscale.max_replicas       most replicas (0 = replicas)\n"
	"    autoscale.interval_s         seconds between evaluations (15)\n"
	"    autoscale.cooldown_s         seconds after a scaling action before a scale-in (300)\n"
	"    faults.list                  [{\"replica\": 1, \"at_s\": 3600, \"repair_s\": 3600}, ...];\n"
	"                                 replica counts across pools, or within \"pool\"\n"
	"                                 (name or index); a pool without a replica fails whole\n"
	"    faults.mtbf_h                mean hours between failures per replica (0 = none)\n"
	"    faults.repair_h              hours a failed replica stays down (1)\n"
	"    faults.max_retries           retries of a call whose replica failed (2)\n"
	"    GPU-hours provisioned then count replicas up, starting or draining; the\n"
	"    cluster section adds start-up, scaling and failure figures, and SLO\n"
	"    attainment during outages and outside them.\n"
	"\n";

static const char REPLAY_HELP_END[] =
	"EXIT STATUS\n"
	"    0 the deployment serves the trace: no call failed and, when latency\n"
	"      objectives are set, at least slo.attainment of the calls (default\n"
	"      0.9) met them;\n"
	"    1 the answer is no: some calls failed (never served), or SLO\n"
	"      attainment is below slo.attainment; the report is still written and\n"
	"      starts with WARNINGS saying why;\n"
	"    2 bad usage or input (path:line:col: what was expected), or an\n"
	"    output that cannot be written (the --json path is checked before the\n"
	"    replay, and the table is still printed if the JSON fails at the end);\n"
	"    3 internal error (a simulator invariant failed).\n"
	"\n"
	"EXAMPLES\n"
	"    agentcap replay traces/data/mooncake/conversation_trace.jsonl.gz\n"
	"    agentcap replay trace.jsonl --set engine.enable_prefix_caching=false --json out.json\n"
	"    agentcap replay team.jsonl.gz --set replicas=8 --set router.policy=prefix_aware\n"
	"    agentcap replay team.jsonl.gz --set replicas=8 --set autoscale.enabled=true \\\n"
	"        --set autoscale.min_replicas=0\n";

#define MAX_SETS 256

struct replay_args {
	const char *trace;
	const char *scenario;
	const char *json;
	const char *csv;
	const char *html;
	const char *catalog;
	const char *calibration;
	const char *sets[MAX_SETS];
	int n_sets;
	uint64_t seed;
	enum trace_format format;
	bool skip_bad;
	bool quiet;
	bool cost;
	const char *prices;
	struct scale_opts scale;
};

static int parse_args(int argc, char **argv, struct replay_args *a)
{
	enum { O_SCENARIO = 1000, O_SET, O_JSON, O_SEED, O_FORMAT, O_SKIP, O_CATALOG, O_QUIET, O_HELP,
	       O_ENGINEERS, O_DAYS, O_JITTER, O_CSV, O_HTML, O_COST, O_PRICES, O_CALIBRATION };
	static const struct option opts[] = {
		{"scenario", required_argument, NULL, O_SCENARIO},
		{"set", required_argument, NULL, O_SET},
		{"json", required_argument, NULL, O_JSON},
		{"csv", required_argument, NULL, O_CSV},
		{"html", required_argument, NULL, O_HTML},
		{"seed", required_argument, NULL, O_SEED},
		{"format", required_argument, NULL, O_FORMAT},
		{"skip-bad", no_argument, NULL, O_SKIP},
		{"catalog", required_argument, NULL, O_CATALOG},
		{"calibration", required_argument, NULL, O_CALIBRATION},
		{"quiet", no_argument, NULL, O_QUIET},
		{"help", no_argument, NULL, O_HELP},
		{"engineers", required_argument, NULL, O_ENGINEERS},
		{"days", required_argument, NULL, O_DAYS},
		{"jitter", required_argument, NULL, O_JITTER},
		{"cost", no_argument, NULL, O_COST},
		{"prices", required_argument, NULL, O_PRICES},
		{NULL, 0, NULL, 0},
	};
	memset(a, 0, sizeof(*a));
	a->seed = 1;
	optind = 1;
	opterr = 0;
	int c;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case O_SCENARIO:
			a->scenario = optarg;
			break;
		case O_SET:
			if (a->n_sets == MAX_SETS) {
				fprintf(stderr, "agentcap replay: more than %d --set options\n", MAX_SETS);
				return 2;
			}
			a->sets[a->n_sets++] = optarg;
			break;
		case O_JSON:
			a->json = optarg;
			break;
		case O_CSV:
			a->csv = optarg;
			break;
		case O_HTML:
			a->html = optarg;
			break;
		case O_SEED: {
			char *end;
			errno = 0;
			unsigned long long v = strtoull(optarg, &end, 10);
			if (errno || *end || end == optarg || optarg[0] == '-') {
				fprintf(stderr, "agentcap replay: --seed '%s': expected a non-negative integer\n", optarg);
				return 2;
			}
			a->seed = v;
			break;
		}
		case O_FORMAT:
			if (!args_trace_format(optarg, &a->format))
				return args_bad("replay", "--format", optarg, "auto, canonical or mooncake");
			break;
		case O_SKIP:
			a->skip_bad = true;
			break;
		case O_CATALOG:
			a->catalog = optarg;
			break;
		case O_CALIBRATION:
			a->calibration = optarg;
			break;
		case O_QUIET:
			a->quiet = true;
			break;
		case O_COST:
			a->cost = true;
			break;
		case O_PRICES:
			a->prices = optarg;
			break;
		case O_ENGINEERS:
		case O_DAYS:
		case O_JITTER: {
			char *end;
			errno = 0;
			double v = strtod(optarg, &end);
			bool integral = c != O_JITTER;
			if (errno || end == optarg || *end || !(v >= (c == O_ENGINEERS ? 1 : 0)) ||
			    !(v <= (c == O_JITTER ? 43200 : 1e6)) || (integral && v != floor(v))) {
				fprintf(stderr, "agentcap replay: --%s '%s': expected %s\n",
					c == O_ENGINEERS ? "engineers" : c == O_DAYS ? "days" : "jitter", optarg,
					c == O_ENGINEERS ? "an integer 1..1000000" :
					c == O_DAYS ? "an integer 0..1000000" : "seconds 0..43200");
				return 2;
			}
			if (c == O_ENGINEERS)
				a->scale.engineers = (int64_t)v;
			else if (c == O_DAYS)
				a->scale.days = (int64_t)v;
			else
				a->scale.jitter_s = v;
			break;
		}
		case 'h':
		case O_HELP:
			fputs(REPLAY_HELP, stdout);
			fputs(REPLAY_HELP_COST, stdout);
			fputs(REPLAY_HELP_OUTPUTS, stdout);
			fputs(REPLAY_HELP_CLUSTER, stdout);
			fputs(REPLAY_HELP_ELASTIC, stdout);
			fputs(REPLAY_HELP_END, stdout);
			return -1;
		default:
			fprintf(stderr, "agentcap replay: unknown or incomplete option '%s' (see agentcap replay --help)\n",
				argv[optind - 1]);
			return 2;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "agentcap replay: expected exactly one TRACE argument (see agentcap replay --help)\n");
		return 2;
	}
	if (a->prices && !a->cost) {
		fprintf(stderr, "agentcap replay: --prices needs --cost\n");
		return 2;
	}
	if ((a->scale.days || a->scale.jitter_s) && !a->scale.engineers) {
		fprintf(stderr, "agentcap replay: --days and --jitter need --engineers\n");
		return 2;
	}
	a->trace = argv[optind];
	return 0;
}

/* One pool of a scenario with `pools`, resolved as its own deployment. */
struct pool_run {
	struct scenario sc;          /* scenario_pool_view, then resolved */
	struct perf_model pm;
	struct perf_profile *prof;
	struct engine_config cfg;
};

/* Name pool i in d's message ("file: pools[i] (name): ..."), unless the
 * message already names the pool's key ("file: pools[i].key: ..."). */
static int pool_error(const struct scenario *top, int32_t i, const struct scenario *v, int rc,
		      struct diag *d)
{
	char head[600];
	snprintf(head, sizeof(head), "%s: pools[%d].", top->source, (int)i);
	if (strncmp(d->msg, head, strlen(head)) == 0)
		return rc;
	char msg[DIAG_MSG_MAX];
	int n = snprintf(msg, sizeof(msg), "%s: pools[%d] (%s): ", top->source, (int)i, v->name);
	if (n < 0 || (size_t)n >= sizeof(msg))
		return rc;
	size_t room = sizeof(msg) - (size_t)n - 1, len = strlen(d->msg);
	memcpy(msg + n, d->msg, len < room ? len : room);
	msg[(size_t)n + (len < room ? len : room)] = '\0';
	memcpy(d->msg, msg, sizeof(msg));
	return rc;
}

/* Resolve every pool of sc: its view, the hardware's defaults, the
 * performance and memory models, the catalogue's pre-flight checks (warnings
 * naming the pool), and one tokenizer for all (the same vocabulary size as
 * pools[0]'s model: the router sends every pool the same calls, counted in
 * the same tokens).  *out: sc->n_pools runs, the caller frees them with
 * pool_runs_free. */
static int pools_resolve(const struct scenario *sc, const struct catalog *cat,
			 struct pool_run **out, struct warn_list *w, struct diag *d)
{
	struct pool_run *pr = calloc((size_t)sc->n_pools, sizeof(*pr));
	*out = pr;
	if (!pr)
		return diag_set(d, DIAG_ENOMEM, "out of memory for %d pools", (int)sc->n_pools);
	for (int32_t i = 0; i < sc->n_pools; i++) {
		struct pool_run *p = &pr[i];
		scenario_pool_view(sc, i, &p->sc);
		int rc = scenario_resolve(&p->sc, cat, NULL, d);
		if (rc == 0)
			rc = scenario_engine(&p->sc, cat, &p->pm, &p->prof, &p->cfg, d);
		size_t before = w->count;
		if (rc == 0)
			rc = preflight_deployment(cat, NULL, &p->pm, p->sc.engine.max_model_len, w, d);
		if (rc != 0)
			return pool_error(sc, i, &p->sc, rc, d);
		for (size_t k = before; k < w->count; k++) {
			char msg[WARN_MSG_MAX];
			int n = snprintf(msg, sizeof(msg), "pools[%d] (%.64s): ", (int)i, p->sc.name);
			size_t room = sizeof(msg) - (size_t)n - 1, len = strlen(w->items[k].msg);
			memcpy(msg + n, w->items[k].msg, len < room ? len : room);
			msg[(size_t)n + (len < room ? len : room)] = '\0';
			memcpy(w->items[k].msg, msg, sizeof(msg));
		}
		if (p->cfg.block_size != pr[0].cfg.block_size)
			return diag_set(d, DIAG_EINPUT,
					"%s: pools[%d].engine.block_size: %lld differs from pools[0]'s "
					"%lld (expected one KV block size for every pool: a call carries "
					"one chain of block hashes)",
					sc->source, (int)i, (long long)p->cfg.block_size,
					(long long)pr[0].cfg.block_size);
		const struct cat_model *m0 = catalog_model(cat, pr[0].sc.model);
		const struct cat_model *mi = catalog_model(cat, p->sc.model);
		if (mi->vocab_size != m0->vocab_size)
			return diag_set(d, DIAG_EINPUT,
					"%s: pools[%d].model: '%s' has a vocabulary of %lld tokens, "
					"pools[0]'s '%s' %lld (expected models with one tokenizer: the "
					"router sends every pool the same calls, counted in the same tokens)",
					sc->source, (int)i, mi->id, (long long)mi->vocab_size, m0->id,
					(long long)m0->vocab_size);
	}
	return 0;
}

static void pool_runs_free(struct pool_run *pr, int32_t n)
{
	for (int32_t i = 0; pr && i < n; i++)
		perf_profile_free(pr[i].prof);
	free(pr);
}

int cli_scenario_engine(const struct scenario *sc, const struct catalog *cat,
			struct perf_model *pm, struct perf_profile **prof,
			struct engine_config *cfg, struct diag *d)
{
	return scenario_engine(sc, cat, pm, prof, cfg, d);
}

/* Turn the pre-flight pass over the trace into warnings; every call
 * rejected makes the run meaningless: DIAG_EINPUT. */
static int preflight_trace(const struct replay_scan *sc, const struct engine_config *cfg,
			   enum context_policy policy, const char *model_id, int64_t context,
			   const char *trace, struct warn_list *w, struct diag *d)
{
	if (sc->calls > 0 && sc->rejected == sc->calls)
		return diag_set(d, DIAG_EINPUT,
				"%s: none of its %lld calls can be served by this deployment "
				"(max_model_len %lld, KV cache %lld tokens; longest call %lld tokens): "
				"nothing to simulate", trace, (long long)sc->calls,
				(long long)cfg->max_model_len, (long long)cfg->kv_cache_tokens,
				(long long)sc->longest_call);
	double pct = sc->calls ? 100.0 / (double)sc->calls : 0.0;
	if (sc->over_max_model_len > 0) {
		const char *hint = cfg->max_model_len < context
					   ? "raise engine.max_model_len toward the model's context"
					   : "pick a model with a longer context";
		const char *fate =
			policy == CONTEXT_REJECT
				? "they will fail (replay.context_policy=reject), and the rest of "
				  "their sessions with them"
			: policy == CONTEXT_COMPACT
				? "replay.context_policy=compact has the harness compact them, so the "
				  "replay serves shorter prompts than recorded (counted as Calls "
				  "compacted)"
				: "replay.context_policy=truncate cuts them to their last max_model_len "
				  "tokens, so the replay serves shorter prompts than recorded";
		warn_add(w, "calls_over_max_model_len",
			 "Pre-flight: %lld of %lld calls (%.1f%%) are longer than max_model_len %lld "
			 "(%s's context is %lld tokens; the longest call has %lld): %s. To serve them "
			 "as recorded: %s.",
			 (long long)sc->over_max_model_len, (long long)sc->calls,
			 pct * (double)sc->over_max_model_len, (long long)cfg->max_model_len, model_id,
			 (long long)context, (long long)sc->longest_call, fate, hint);
	}
	if (sc->over_kv > 0)
		warn_add(w, "calls_over_kv_cache",
			 "Pre-flight: %lld of %lld calls (%.1f%%) need more KV cache than the %lld "
			 "tokens this deployment has (the longest call has %lld): they will fail. "
			 "To change: more GPUs per replica, a smaller weight format, kv_cache_dtype "
			 "fp8, or a larger engine.kv_cache_tokens if it was set by hand.",
			 (long long)sc->over_kv, (long long)sc->calls, pct * (double)sc->over_kv,
			 (long long)cfg->kv_cache_tokens, (long long)sc->longest_call);
	if (sc->over_budget > 0)
		warn_add(w, "calls_over_batch_budget",
			 "Pre-flight: %lld of %lld calls are larger than max_num_batched_tokens %lld "
			 "with chunked prefill off: they will fail. To change: "
			 "engine.enable_chunked_prefill=true.",
			 (long long)sc->over_budget, (long long)sc->calls,
			 (long long)cfg->max_num_batched_tokens);
	return 0;
}

/* Pre-flight over the trace for a cluster of pools: the cluster-wide
 * warnings (calls no pool can serve) as for one shape, against the largest
 * pool's limits, and one warning per pool that cannot serve calls the
 * others can (the router sends those elsewhere). */
static int preflight_pools(const struct replay_opts *so, const struct pool_run *pr, int32_t n,
			   const struct scenario *sc, const struct catalog *cat, const char *trace,
			   struct warn_list *w, struct diag *d)
{
	struct engine_config *cfgs = calloc((size_t)n, sizeof(*cfgs));
	struct replay_scan *each = calloc((size_t)n, sizeof(*each));
	int rc = cfgs && each ? 0 : diag_set(d, DIAG_ENOMEM, "out of memory");
	struct engine_config big = pr[0].cfg;
	for (int32_t i = 0; rc == 0 && i < n; i++) {
		cfgs[i] = pr[i].cfg;
		if (cfgs[i].max_model_len > big.max_model_len)
			big.max_model_len = cfgs[i].max_model_len;
		if (cfgs[i].kv_cache_tokens > big.kv_cache_tokens)
			big.kv_cache_tokens = cfgs[i].kv_cache_tokens;
		if (cfgs[i].max_num_batched_tokens > big.max_num_batched_tokens)
			big.max_num_batched_tokens = cfgs[i].max_num_batched_tokens;
	}
	struct replay_scan all;
	int64_t context = catalog_model(cat, pr[0].sc.model)->max_context;
	if (rc == 0)
		rc = replay_scan_pools(so, cfgs, n, context, each, &all, d);
	if (rc == 0)
		rc = preflight_trace(&all, &big, sc->context_policy, pr[0].pm.model_id, context, trace,
				     w, d);
	for (int32_t i = 0; rc == 0 && i < n; i++) {
		int64_t elsewhere = each[i].rejected - all.rejected;
		if (elsewhere <= 0)
			continue;
		warn_add(w, "pool_calls_elsewhere",
			 "Pre-flight: pools[%d] (%s) cannot serve %lld of %lld calls that another "
			 "pool can (its max_model_len is %lld, its KV cache %lld tokens per "
			 "replica): the router sends them to the other pools only.",
			 (int)i, pr[i].sc.name, (long long)elsewhere, (long long)all.calls,
			 (long long)pr[i].cfg.max_model_len, (long long)pr[i].cfg.kv_cache_tokens);
	}
	free(cfgs);
	free(each);
	return rc;
}

/* The metrics' capacity of a cluster of pools: per replica, the mean over
 * all replicas (so that fractions of peak over replicas x duration stay
 * exact); no compute peak if any pool lacks one. */
static void pools_capacity(const struct pool_run *pr, int32_t n, int32_t n_rep,
			   struct metrics_capacity *cap)
{
	double seqs = 0, blocks = 0, flops = 0, bytes = 0;
	bool unknown = false;
	for (int32_t i = 0; i < n; i++) {
		const struct pool_run *p = &pr[i];
		double r = (double)p->sc.replicas, gpus = (double)p->pm.tp * (double)p->pm.pp;
		seqs += r * p->cfg.max_num_seqs;
		blocks += r * (double)(p->cfg.kv_cache_tokens / p->cfg.block_size);
		flops += r * p->pm.matmul_peak_flops * gpus;
		bytes += r * p->pm.mem_bw_bytes * gpus;
		unknown = unknown || p->pm.compute_unknown;
	}
	cap->max_num_seqs = (int32_t)llround(seqs / n_rep);
	cap->kv_blocks = llround(blocks / n_rep);
	cap->peak_flops = unknown ? 0.0 : flops / n_rep;
	cap->peak_bytes_per_s = bytes / n_rep;
}

/* The cost section: the scenario's hardware under each rental and purchase
 * option the price catalogue has a price for, with the energy. */
static int write_cost(FILE *out, const struct prices *pr, const struct catalog *cat,
		      const struct scenario *sc, const struct metrics_summary *sum,
		      const struct cluster_summary *cls, const struct replay_stats *st,
		      const struct replay_args *a, struct diag *d)
{
	const struct cat_hardware *hw = catalog_hardware(cat, sc->hardware);
	if (!hw)
		return diag_set(d, DIAG_EINPUT, "unknown hardware '%s'", sc->hardware);
	int64_t days = a->scale.engineers ? st->scale.days : 0;
	struct cost_usage u;
	double periods = sc->cost.periods_per_month >= 0 ? sc->cost.periods_per_month
			 : days > 0 ? COST_WORKDAYS_PER_MONTH / (double)days : 0;
	costing_usage(&u, sum, cls, sc->replicas,
		      sc->tensor_parallel_size * sc->pipeline_parallel_size,
		      a->scale.engineers ? st->scale.engineers : 0, periods);
	struct cost_task t;
	cost_task_default(&t);
	scenario_cost_apply(sc, NULL, NULL, NULL, &t);
	struct cost_result r[3];
	size_t n = 0;
	struct cost_purchase pp;
	struct cost_dedicated dp;
	struct cost_elastic ep;
	/* each option the catalogue can price (COST_NO_PRICE: not on offer) */
	int rc = cost_purchase_from_prices(&pp, pr, hw, d);
	if (rc == 0) {
		scenario_cost_apply(sc, &pp, NULL, NULL, NULL);
		rc = cost_purchase_eval(&pp, &u, &t, &r[n++], d);
	}
	if (rc == 0 || rc == COST_NO_PRICE) {
		rc = cost_dedicated_from_prices(&dp, pr, hw, d);
		if (rc == 0) {
			scenario_cost_apply(sc, NULL, &dp, NULL, NULL);
			rc = cost_dedicated_eval(&dp, &u, &t, &r[n++], d);
		}
	}
	if (rc == 0 || rc == COST_NO_PRICE) {
		rc = cost_elastic_from_prices(&ep, pr, hw, d);
		if (rc == 0) {
			scenario_cost_apply(sc, NULL, NULL, &ep, NULL);
			rc = cost_elastic_eval(&ep, &u, &t, &r[n++], d);
		}
	}
	if (rc && rc != COST_NO_PRICE)
		return rc;
	struct cost_fig busy, idle, pue;
	struct cost_energy e;
	rc = cost_watts(hw, &busy, &idle, d);
	if (rc == 0) {
		const struct price_row *row = prices_find(pr, PRICE_PUE, COST_DEFAULT_PUE);
		cost_fig_set(&pue, row ? row->usd : 1.0, "%s", row ? row->id : "none");
		if (sc->cost.pue >= 0)
			pue.value = sc->cost.pue;
		rc = cost_energy_eval(&u, busy.value, idle.value, pue.value, &t, &e, d);
	}
	if (rc)
		return rc;
	if (n == 0)
		fprintf(out, "Cost: the price catalogue has no purchase, dedicated or rental price "
			"for %s (agentcap catalog --prices)\n", hw->id);
	rc = costing_write_table(out, r, n, &e, d);
	if (rc == 0)
		fprintf(out, "  Power: busy %g W per GPU (%s); idle %g W (%s)\n", busy.value,
			busy.source, idle.value, idle.source);
	return rc;
}

/* The lifecycle section of the cluster report: settings, the simulator's
 * counters and the SLO attainment inside and outside outages. */
static void fill_elastic(struct cluster_elastic *e, const struct scenario *sc,
			 const struct elastic_config *ec, const double *weight_bytes, int32_t n_rep,
			 const struct elastic_stats *es, const struct metrics_summary *sum)
{
	e->on = true;
	/* with pools, the slowest pool's start-up */
	double bytes = weight_bytes[0];
	for (int32_t i = 1; i < sc->n_pools; i++)
		if (weight_bytes[i] > bytes)
			bytes = weight_bytes[i];
	e->provision_s = sc->provision_s;
	e->weight_load_s = bytes / (sc->storage_gbs * 1e9);
	e->startup_s = e->provision_s + e->weight_load_s;
	e->autoscale = ec->autoscale;
	e->metric = autoscale_metric_name(ec->metric);
	e->target = ec->target;
	e->min_replicas = ec->min_replicas;
	e->max_replicas = ec->max_replicas > 0 ? ec->max_replicas : n_rep;
	e->interval_s = (double)ec->interval_ns / 1e9;
	e->cooldown_s = (double)ec->cooldown_ns / 1e9;
	e->evaluations = es->evaluations;
	e->scale_outs = es->scale_outs;
	e->scale_ins = es->scale_ins;
	e->starts = es->starts;
	e->active_min = es->active_min;
	e->active_max = es->active_max;
	e->faults = ec->n_faults > 0 || ec->mtbf_ns > 0.0;
	e->fault_count = es->faults;
	e->faults_skipped = es->faults_skipped;
	e->retries = es->retries;
	e->retried_calls = es->retried_calls;
	e->fault_failed = es->fault_failed;
	e->outage_s = (double)es->outage_ns / 1e9;
	int64_t calls = sum->completed + sum->failed;
	e->calls_outage = sum->calls_outage;
	e->good_outage = sum->good_outage;
	e->calls_outside = calls - sum->calls_outage;
	e->good_outside = sum->good_requests - sum->good_outage;
	e->slo_attainment_outage =
		e->calls_outage > 0 ? (double)e->good_outage / (double)e->calls_outage : 0.0;
	e->slo_attainment_outside =
		e->calls_outside > 0 ? (double)e->good_outside / (double)e->calls_outside : 0.0;
}

int cmd_replay(int argc, char **argv)
{
	struct replay_args *a = malloc(sizeof(*a));
	struct warn_list *warns = malloc(sizeof(*warns));
	if (!a || !warns) {
		free(a);
		free(warns);
		return cli_fail(DIAG_ENOMEM, "out of memory");
	}
	warn_list_init(warns);
	int prc = parse_args(argc, argv, a);
	if (prc != 0) {
		free(a);
		free(warns);
		return prc < 0 ? 0 : prc;
	}
	struct diag d;
	diag_init(&d);
	struct scenario sc;
	struct catalog *cat = NULL;
	struct perf_model pm;
	struct perf_profile *prof = NULL;
	struct engine_config cfg;
	struct pool_run *pr = NULL; /* with pools: one per pool */
	struct metrics *m = NULL;
	struct cluster *cl = NULL;
	struct timeseries *tsr = NULL;
	int64_t *routed = NULL;
	struct cluster_summary cls;
	struct replay_stats st;
	struct metrics_summary sum;
	struct charts charts = {0};
	struct outfile csv_out = {.slot = -1};
	struct reqcsv csv;
	struct diag csv_d;
	int csv_rc = 0;
	int64_t trace_calls = 0;
	struct progress prog;
	diag_init(&csv_d);
	struct prices *price_cat = NULL;
	struct calfile *cal = NULL;
	struct engine_table *cal_et = NULL;
	struct elastic_config ec;
	double weight_bytes[SCENARIO_MAX_POOLS] = {0};
	bool answer_no = false;
	/* API backends beside the local engines (docs/hybrid.md) */
	struct apilat *lat = NULL;
	struct hybrid_config hyb;
	hybrid_config_default(&hyb);
	struct scenario_backend_price bprice[SCENARIO_MAX_BACKENDS];
	struct backends_api bapi[SCENARIO_MAX_BACKENDS];
	const char *bnames[SCENARIO_MAX_BACKENDS];
	struct backends *bk = NULL;
	struct backends_summary bsum;
	/* a bad output path fails now, not after the whole replay */
	int rc = a->json ? outfile_check(a->json, &d) : 0;
	if (rc == 0 && a->csv)
		rc = outfile_check(a->csv, &d);
	if (rc == 0 && a->html)
		rc = outfile_check(a->html, &d);
	if (rc == 0 && a->json && a->csv && strcmp(a->json, "-") == 0 && strcmp(a->csv, "-") == 0)
		rc = diag_set(&d, DIAG_EINPUT, "--json - and --csv - would both write to standard "
			      "output (expected at most one of them to be '-')");
	int32_t n_pools = 0; /* the scenario's, once it is loaded */
	if (rc == 0)
		rc = scenario_load(&sc, a->scenario, a->sets, a->n_sets, &d);
	if (rc == 0)
		n_pools = sc.n_pools;
	if (rc == 0)
		rc = catalog_load(&cat, a->catalog, &d);
	if (rc == 0)
		rc = args_calibration(a->calibration, cat, &cal_et, &cal, &d);
	if (rc == 0 && a->cost && n_pools > 0)
		rc = diag_set(&d, DIAG_EINPUT, "--cost: a scenario with pools is not priced yet "
			      "(expected a scenario of one shape)");
	if (rc == 0 && a->cost) {
		/* a bad price file fails now, not after the replay */
		rc = prices_load(&price_cat, a->prices ? a->prices : sc.prices[0] ? sc.prices : NULL,
				 &d);
		if (rc == 0)
			rc = prices_check_hardware(price_cat, cat, &d);
	}
	if (rc == 0 && sc.n_backends > 0 && a->cost)
		rc = diag_set(&d, DIAG_EINPUT, "--cost: a scenario with backends is priced by agentcap "
			      "compare, or by the backends section of this report (expected no --cost "
			      "with backends; docs/hybrid.md)");
	if (rc == 0 && sc.n_backends > 0) {
		rc = prices_load(&price_cat, a->prices ? a->prices : sc.prices[0] ? sc.prices : NULL, &d);
		if (rc == 0)
			rc = apilat_load(&lat, NULL, NULL, &d);
		if (rc == 0)
			rc = scenario_hybrid(&sc, lat, price_cat, &hyb, bprice, &d);
		for (int32_t i = 0; rc == 0 && i < sc.n_backends; i++) {
			const struct scenario_backend_price *p = &bprice[i];
			bnames[i] = sc.backends[i].name;
			bapi[i] = (struct backends_api){
				.name = sc.backends[i].name, .kind = sc.backends[i].kind,
				.price_id = sc.backends[i].price,
				.input_usd_mtok = p->input ? p->input->usd : 0,
				.cached_usd_mtok = p->cached ? p->cached->usd : 0,
				.output_usd_mtok = p->output ? p->output->usd : 0,
				.seat_usd_month = p->seat ? p->seat->usd : 0};
		}
	}
	struct sim_tiers_config tiers;
	struct report_tiers rtiers;
	double host_gbs = 0;
	memset(&tiers, 0, sizeof(tiers));
	memset(&rtiers, 0, sizeof(rtiers));
	if (rc == 0 && n_pools > 0 && (sc.kv_tiers.host_gb > 0 || sc.kv_tiers.disk_gb > 0))
		rc = diag_set(&d, DIAG_EINPUT, "%s: kv_tiers: not modelled with pools yet (a tier's "
			      "block and load time follow each pool's model and GPUs; expected "
			      "kv_tiers.host_gb 0 with pools)", sc.source);
	if (rc == 0 && n_pools > 0) {
		rc = pools_resolve(&sc, cat, &pr, warns, &d);
	} else if (rc == 0) {
		rc = scenario_resolve(&sc, cat, NULL, &d);
		if (rc == 0)
			rc = scenario_engine(&sc, cat, &pm, &prof, &cfg, &d);
		if (rc == 0)
			rc = scenario_tiers(&sc, cat, &pm, &cfg, &tiers, &host_gbs, &d);
		if (rc == 0 && tiers.n > 0)
			rtiers = (struct report_tiers){
				.n = tiers.n, .host_gb = sc.kv_tiers.host_gb,
				.disk_gb = sc.kv_tiers.disk_gb, .host_gbs = host_gbs,
				.disk_gbs = tiers.n > 1 ? sc.kv_tiers.disk_gbs : 0,
				.shared_by = tiers.shared_by};
		if (rc == 0)
			rc = preflight_deployment(cat, NULL, &pm, sc.engine.max_model_len, warns, &d);
	}
	/* with pools, the run's own lines describe pools[0]; the cluster
	 * section describes each */
	const struct scenario *shape = n_pools && pr ? &pr[0].sc : &sc;
	const struct perf_model *pm0 = n_pools && pr ? &pr[0].pm : &pm;
	const struct engine_config *cfg0 = n_pools && pr ? &pr[0].cfg : &cfg;
	int32_t n_rep = rc == 0 ? sc.replicas : 1;
	if (n_pools && pr) {
		n_rep = 0;
		for (int32_t i = 0; i < n_pools; i++)
			n_rep += pr[i].sc.replicas;
	}
	if (rc == 0 && n_pools) {
		struct replay_opts so = {.trace_path = a->trace, .format = a->format,
					 .skip_bad = a->skip_bad, .context_policy = sc.context_policy};
		rc = preflight_pools(&so, pr, n_pools, &sc, cat, a->trace, warns, &d);
	} else if (rc == 0) {
		struct replay_opts so = {.trace_path = a->trace, .format = a->format,
					 .skip_bad = a->skip_bad, .context_policy = sc.context_policy};
		struct replay_scan scan;
		int64_t context = catalog_model(cat, sc.model)->max_context;
		rc = replay_scan(&so, &cfg, context, &scan, &d);
		trace_calls = scan.calls;
		if (rc == 0)
			rc = preflight_trace(&scan, &cfg, sc.context_policy, pm.model_id, context,
					     a->trace, warns, &d);
	}
	for (size_t i = 0; rc == 0 && i < warns->count; i++)
		fprintf(stderr, "agentcap replay: warning: %s\n", warns->items[i].msg);
	if (rc == 0 && !(m = metrics_new()))
		rc = diag_set(&d, DIAG_ENOMEM, "out of memory");
	if (rc == 0) {
		/* each pool's replicas load their own weights at start-up */
		if (n_pools)
			for (int32_t i = 0; i < n_pools; i++)
				weight_bytes[i] =
					scenario_weight_bytes(&pr[i].sc, cat, &pr[i].pm, &pr[i].cfg);
		else
			weight_bytes[0] = scenario_weight_bytes(&sc, cat, &pm, &cfg);
		scenario_elastic(&sc, weight_bytes, a->seed, &ec);
	}
	bool elastic = rc == 0 && elastic_active(&ec);
	/* Several replicas, pools, or replicas that come and go: a per-replica
	 * aggregator in front of the metrics. */
	if (rc == 0 && (n_rep > 1 || n_pools || elastic) &&
	    (!(cl = cluster_new(n_rep, metrics_sink(m))) ||
	     !(routed = calloc((size_t)n_rep, sizeof(*routed)))))
		rc = diag_set(&d, DIAG_ENOMEM, "out of memory");
	struct sim_pool sp[SCENARIO_MAX_POOLS];
	if (rc == 0 && n_pools) {
		struct cluster_pool cp[SCENARIO_MAX_POOLS];
		for (int32_t i = 0, first = 0; i < n_pools; i++) {
			const struct pool_run *p = &pr[i];
			cp[i] = (struct cluster_pool){
				.name = p->sc.name, .model_id = p->pm.model_id,
				.hardware_id = p->pm.hardware_id, .weight_format = p->pm.weight_format_id,
				.kv_dtype = p->pm.kv_dtype_id, .engine_profile = p->sc.engine_profile,
				.tp = p->pm.tp, .pp = p->pm.pp, .ep = p->pm.ep,
				.kv_capacity_tokens = p->cfg.kv_cache_tokens,
				.max_num_seqs = p->cfg.max_num_seqs, .max_model_len = p->cfg.max_model_len,
				.first = first, .replicas = p->sc.replicas,
				.gpus_per_replica = p->pm.tp * p->pm.pp};
			sp[i] = (struct sim_pool){.cfg = p->cfg, .perf = sim_perf_from_model(&p->pm),
						  .replicas = p->sc.replicas};
			first += p->sc.replicas;
		}
		if (cluster_set_pools(cl, cp, n_pools) != 0)
			rc = diag_set(&d, DIAG_ENOMEM, "out of memory");
	}
	if (rc == 0) {
		metrics_set_replicas(m, n_rep);
		metrics_set_slo(m, sc.slo_ttft_ms, sc.slo_tpot_ms);
		sc.router.seed = a->seed;
		double gpus = (double)pm0->tp * (double)pm0->pp;
		struct metrics_capacity cap = {
			.max_num_seqs = cfg0->max_num_seqs,
			.kv_blocks = cfg0->kv_cache_tokens / cfg0->block_size,
			.peak_flops = pm0->compute_unknown ? 0.0 : pm0->matmul_peak_flops * gpus,
			.peak_bytes_per_s = pm0->mem_bw_bytes * gpus,
		};
		if (n_pools)
			pools_capacity(pr, n_pools, n_rep, &cap);
		metrics_set_capacity(m, &cap);
		struct replay_opts o = {.trace_path = a->trace, .format = a->format,
					.skip_bad = a->skip_bad, .seed = a->seed, .scale = a->scale,
					.context_policy = sc.context_policy,
					.replicas = sc.replicas, .router = &sc.router,
					.tiers = tiers.n > 0 ? &tiers : NULL,
					.pools = n_pools ? sp : NULL, .n_pools = n_pools,
					.routed = routed, .elastic = elastic ? &ec : NULL,
					.series_interval_ns = llround(sc.report_interval_s * 1e9)};
		o.scale.seed = a->seed;
		o.hybrid = hyb.n > 0 ? &hyb : NULL;
		struct res_sink sink = cl ? cluster_sink(cl) : metrics_sink(m);
		if (hyb.n > 0) {
			if ((bk = backends_new(bapi, hyb.n, sink)) != NULL)
				sink = backends_sink(bk);
			else
				rc = diag_set(&d, DIAG_ENOMEM, "out of memory");
		}
		if (rc == 0 && a->csv) {
			rc = outfile_open(&csv_out, a->csv, &d);
			if (rc == 0) {
				reqcsv_init_backends(&csv, csv_out.fp, sink, bnames, hyb.n);
				sink = reqcsv_sink(&csv);
			}
		}
		/* a scaled team has as many calls as the draw gives: no total */
		progress_init(&prog, a->quiet ? NULL : stderr, "agentcap replay",
			      a->scale.engineers ? 0 : trace_calls, sink);
		/* report.interval_s: a recorder in front of everything else */
		struct res_sink outer = progress_sink(&prog);
		if (rc == 0 && sc.report_interval_s > 0.0) {
			if ((tsr = timeseries_new(n_rep, outer)) != NULL)
				outer = timeseries_sink(tsr);
			else
				rc = diag_set(&d, DIAG_ENOMEM, "out of memory");
		}
		if (rc == 0)
			rc = replay_run(&o, cfg0, sim_perf_from_model(pm0), outer, &st,
					&d);
		progress_end(&prog);
		if (rc == 0 && tsr)
			rc = timeseries_check(tsr, &d);
		if (a->csv && csv_out.fp) {
			/* kept aside, so the table and the JSON still go out */
			struct diag wd;
			diag_init(&wd);
			if (rc != 0)
				outfile_abort(&csv_out);
			else
				csv_rc = outfile_finish(&csv_out, reqcsv_status(&csv, a->csv, &wd), &wd,
							&csv_d);
		}
	}
	if (rc == 0)
		rc = metrics_summarize(m, &sum, &d);
	if (rc == 0)
		rc = charts_init(&charts, m, sum.duration_s, &d);
	if (rc == 0 && cl) {
		for (int32_t i = 0; i < n_rep; i++)
			cluster_set_routed(cl, i, routed[i]);
		cluster_summarize(cl, sum.duration_s,
				  shape->tensor_parallel_size * shape->pipeline_parallel_size, &cls);
		cls.router = (struct cluster_router){
			.policy = router_policy_name(sc.router.policy),
			.prefix_scorer = sc.router.policy == ROUTER_PREFIX_AWARE
						 ? router_scorer_name(sc.router.prefix_scorer)
						 : NULL,
			.routed = st.router.routed,
			.queued = st.router.queued,
			.refused = st.router.refused,
			.affinity_fallbacks = st.router.affinity_fallbacks,
			.load_capped = st.router.load_capped,
			.prefix_matched = st.router.prefix_matched,
			.queue_peak = st.router.queue_peak,
			.wait_mean_ms = st.router.queued
						? (double)st.router.wait_ns_sum / (double)st.router.queued / 1e6
						: 0.0,
			.wait_max_ms = (double)st.router.wait_ns_max / 1e6,
		};
		if (elastic)
			fill_elastic(&cls.elastic, &sc, &ec, weight_bytes, n_rep, &st.elastic, &sum);
	}
	if (rc == 0 && bk) {
		rc = backends_summarize(bk, &bsum, &d);
		const struct scenario_routes *ru = &sc.routes;
		bsum.spill_to = ru->spill_to[0] ? ru->spill_to : NULL;
		bsum.spill_wait_ms = ru->spill_wait_ms;
		bsum.spill_ttft_ms = ru->spill_ttft_ms;
		bsum.fallback_to = ru->fallback_to[0] ? ru->fallback_to : NULL;
		bsum.size_to = ru->size_to[0] ? ru->size_to : NULL;
		bsum.size_prompt_tokens = ru->size_prompt_tokens;
	}
	/* the step model's error bars for the (first) replica shape; a
	 * measured profile replaces the model, and has none */
	struct uncert_table bands;
	uncert_init(&bands);
	struct report_bands rb = {0};
	char regimes[3][3 * UNCERT_ID_MAX + 16];
	const struct perf_profile *prof0 = n_pools && pr ? pr[0].prof : prof;
	if (rc == 0 && !prof0) {
		rc = uncert_load(&bands, NULL, &d);
		static const char *const metric[3] = { "output_throughput_tok_s", "ttft_ms",
						       "tpot_ms" };
		double *pct[3] = { &rb.throughput_pct, &rb.ttft_pct, &rb.tpot_pct };
		const char **name[3] = { &rb.throughput_regime, &rb.ttft_regime, &rb.tpot_regime };
		for (int k = 0; k < 3 && rc == 0; k++) {
			struct uncert_band b = uncert_lookup(&bands, pm0->family_id, pm0->engine_id,
							     metric[k]);
			if (!b.regime)
				break;
			*pct[k] = b.pct;
			*name[k] = uncert_regime_name(b.regime, regimes[k], sizeof(regimes[k]));
			rb.coverage = bands.coverage;
		}
		rb.commit = bands.commit[0] ? bands.commit : NULL;
	}
	struct report_calibration rcal;
	if (rc == 0) {
		args_calibration_describe(&rcal, cal);
		double done = sum.completed > 0 ? (double)sum.completed : 1.0;
		struct calfile_regime reg = {
			.hardware = shape->hardware, .model = shape->model,
			.engine = shape->engine_profile, .batch = sum.batch_seqs_mean,
			.context = ((double)sum.prompt_tokens + (double)sum.output_tokens / 2) / done,
		};
		args_calibration_point(&rcal, cal, cat, "run", &reg);
	}
	if (rc == 0) {
		struct report_meta meta = {
			.version = AGENTCAP_VERSION,
			.trace_path = a->trace,
			.trace_format = st.trace_format,
			.scenario_name = sc.name,
			.scenario_path = sc.source,
			.model_id = shape->model,
			.hardware_id = shape->hardware,
			.weight_format = shape->weight_format,
			.kv_dtype = shape->kv_cache_dtype,
			.tp = shape->tensor_parallel_size,
			.ep = pm0->ep,
			.seed = a->seed,
			.kv_capacity_tokens = cfg0->kv_cache_tokens,
			.block_size = (int32_t)cfg0->block_size,
			.max_num_seqs = cfg0->max_num_seqs,
			.max_num_batched_tokens = cfg0->max_num_batched_tokens,
			.prefix_caching = cfg0->enable_prefix_caching,
			.chunked_prefill = cfg0->enable_chunked_prefill,
			.skipped_bad_lines = st.skipped_lines,
			.events_processed = st.sim.events,
			.engine_steps = st.sim.steps,
			.kv_evicted_blocks = st.sim.kv_evictions,
			.scaled_engineers = a->scale.engineers ? st.scale.engineers : 0,
			.scaled_days = a->scale.engineers ? st.scale.days : 0,
			.slo_ttft_ms = sc.slo_ttft_ms,
			.slo_tpot_ms = sc.slo_tpot_ms,
			.engine = {.profile = shape->engine_profile, .pp = shape->pipeline_parallel_size,
				   .max_model_len = cfg0->max_model_len,
				   .gpu_memory_utilization = cfg0->gpu_memory_utilization,
				   .reserve_full_prompt = cfg0->reserve_full_prompt},
			.context = {.policy = context_policy_name(sc.context_policy),
				    .compacted = st.calls_compacted, .truncated = st.calls_truncated,
				    .too_long = st.calls_too_long},
			.tiers = rtiers,
			.cluster = cl ? &cls : NULL,
			.backends = bk ? &bsum : NULL,
			.timeseries = tsr,
			.timeseries_interval_s = sc.report_interval_s,
			.slo_attainment_target = sc.slo_attainment,
			.bands = rb,
			.warnings = warns,
			.charts = &charts,
			.calibration = &rcal,
		};
		meta.tiers.loaded_blocks = st.sim.tier_loaded_blocks;
		meta.tiers.load_s = st.sim.tier_load_ns / 1e9;
		if (strcmp(sc.spec.method, "off") != 0) {
			struct report_spec *p = &meta.spec;
			p->on = true;
			p->method = sc.spec.method;
			p->draft = strcmp(sc.spec.method, "draft") == 0 ? sc.spec.draft_model : sc.model;
			p->k = sc.spec.k;
			for (int i = 0; i < OUT_KINDS; i++) {
				p->acceptance[i] = sc.spec.acceptance_kind[i] >= 0
							   ? sc.spec.acceptance_kind[i]
							   : sc.spec.acceptance_rate;
				p->seq_steps[i] = st.sim.spec_seq_steps[i];
				p->tokens[i] = st.sim.spec_tokens[i];
			}
			p->run_s = st.sim.spec_run_ns / 1e9;
			p->plain_s = st.sim.spec_plain_ns / 1e9;
		}
		report_run_warnings(&meta, &sum, warns);
		answer_no = report_answer_no(&meta, &sum);
		/* the table keeps out of a JSON or CSV on standard output */
		bool json_stdout = (a->json && strcmp(a->json, "-") == 0) ||
				   (a->csv && strcmp(a->csv, "-") == 0) ||
				   (a->html && strcmp(a->html, "-") == 0);
		/* the table goes out even when the JSON cannot be written, so the
		 * run's results are not lost with it */
		if (a->json)
			rc = report_json_write(a->json, &meta, &sum, &d);
		if (!a->quiet && !json_stdout)
			report_table(stdout, &meta, &sum);
		if (!a->quiet && !json_stdout && a->scale.engineers)
			printf("Scaled team: %lld engineers x %lld days resampled (seed %llu) from %lld "
			       "engineers, %lld engineer-days (%lld active), %lld sessions\n",
			       (long long)st.scale.engineers, (long long)st.scale.days,
			       (unsigned long long)a->seed, (long long)st.scale.source_engineers,
			       (long long)st.scale.source_engineer_days,
			       (long long)st.scale.active_engineer_days, (long long)st.scale.sessions_out);
		if (rc == 0 && a->cost && !a->quiet && !json_stdout) {
			fputc('\n', stdout);
			rc = write_cost(stdout, price_cat, cat, &sc, &sum, cl ? &cls : NULL, &st, a, &d);
		}
		if (rc == 0 && a->html) {
			/* the page is drawn from the JSON, as `agentcap report` draws it */
			struct cli_buf jb;
			rc = cli_buf_open(&jb, &d);
			if (rc == 0) {
				report_json_stream(jb.fp, &meta, &sum);
				rc = cli_buf_close(&jb, &d);
			}
			if (rc == 0)
				rc = cli_html_write(a->html, jb.text, jb.len, "the run's result", &d);
			cli_buf_free(&jb);
		}
		if (rc == 0 && csv_rc != 0) {
			rc = csv_rc;
			d = csv_d;
		}
		if (rc == 0 && answer_no)
			fprintf(stderr, "agentcap replay: the answer is no (exit status 1): %lld of %lld "
				"calls failed; %lld met the latency objectives (%.1f%%, target %.1f%%)\n",
				(long long)sum.failed, (long long)(sum.completed + sum.failed),
				(long long)sum.good_requests, 100.0 * sum.slo_attainment,
				100.0 * sc.slo_attainment);
	}
	charts_release(&charts);
	backends_free(bk);
	apilat_free(lat);
	uncert_release(&bands);
	prices_free(price_cat);
	cluster_free(cl);
	timeseries_free(tsr);
	free(routed);
	metrics_free(m);
	pool_runs_free(pr, n_pools);
	perf_profile_free(prof);
	catalog_free(cat);
	calfile_free(cal);
	free(cal_et);
	free(a);
	free(warns);
	if (rc != 0)
		return cli_fail(rc, d.msg);
	return answer_no ? 1 : 0;
}
