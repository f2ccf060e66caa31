/* SPDX-License-Identifier: Apache-2.0
 * cmd_replay: `agentcap replay TRACE` - one trace, one scenario, one report. */
#define _GNU_SOURCE
#include "cli/cli.h"

#include "cli/args.h"
#include "cli/progress.h"

#include "base/diag.h"
#include "base/outfile.h"
#include "base/warn.h"
#include "models/calfile.h"
#include "models/catalog.h"
#include "models/cost.h"
#include "models/prices.h"
#include "plan/run.h"
#include "replay/deploy.h"
#include "replay/replay.h"
#include "replay/launch.h"
#include "replay/scenario.h"
#include "reports/charts.h"
#include "reports/cluster.h"
#include "reports/costing.h"
#include "reports/metrics.h"
#include "reports/output.h"

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
	"        Repeatable; applied in order after the file.  VALUE is JSON when\n"
	"        all of it is JSON, else a string (2s).\n"
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

/* What a scenario can describe, every family of keys (docs/scenario.md). */
static const char REPLAY_HELP_SCENARIO[] =
	"\n"
	"SCENARIO FAMILIES (docs/scenario.md; each also reaches size, compare,\n"
	"whatif and sweep, or is refused there by name)\n"
	"    model, hardware, weight_format, kv_cache_dtype, tensor/pipeline/expert\n"
	"        parallel sizes, engine_profile, engine.*: the shape and its engine\n"
	"    replicas, router.*: several replicas behind a router (policies,\n"
	"        limits, spill rules to an API)\n"
	"    pools: replicas of different shapes in one cluster\n"
	"    disaggregation.*: prefill and decode on two pools, the KV crossing a\n"
	"        link between them (docs/disaggregation.md)\n"
	"    kv_retention.*: a session's KV kept across its tool pauses\n"
	"    backends: API or seat backends beside the local engines (docs/hybrid.md)\n"
	"    kv_tiers.*: host and disk tiers below the GPU KV cache\n"
	"    autoscale.*, startup.*: an autoscaler and what a replica start costs\n"
	"    faults.*: replicas failing at given times or at a rate\n"
	"    speculative.*: speculative decoding (draft model or MTP; docs/speculative.md)\n"
	"    offload.gpu_expert_fraction, host.*: MoE experts in host memory\n"
	"    power_limit_w: a board power limit\n"
	"    replay.context_policy: calls longer than max_model_len\n"
	"    slo.*, report.*: objectives and the time series\n"
	"    cost.*: the assumptions of --cost (docs/cost.md)\n";

/* The cost options (a C11 string literal is kept under 4095 bytes). */
static const char REPLAY_HELP_COST[] =
	"    --cost\n"
	"        After the table, price the replayed deployment (docs/cost.md):\n"
	"        purchase, dedicated and elastic rental of the scenario's hardware\n"
	"        where the price catalogue has a price, per month, per 1M output\n"
	"        tokens, per accepted task and per engineer-month, each with its\n"
	"        parts and every assumption and source, and the energy.  A month\n"
	"        repeats the replayed span: 21.75 working days (261 a year / 12;\n"
	"        cost.workdays_per_year sets a calendar) / --days with --engineers,\n"
	"        else around the clock; the output says which.  The figures also\n"
	"        go into --json (member \"cost\") and --html.  Off by default.\n"
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
	"    kv_tiers.mode                write_through (default: store each prefilled chunk) or evict\n"
	"    kv_tiers.chunk_tokens        write_through: tokens a stored chunk spans (256)\n"
	"    kv_tiers.save_unfull_chunk   write_through: store a prompt's partial last chunk (false)\n"
	"    kv_tiers.async_store         write_through: stores overlap compute (true)\n"
	"    router.policy                sglang_smg_v1.9_approx (default: SGLang model\n"
	"                                 gateway, approximate tree), sglang_smg_v1.9_exact,\n"
	"                                 llmd_v0.10_approx, llmd_v0.10_precise, dynamo_v1.0_kv,\n"
	"                                 round_robin, least_requests, least_tokens,\n"
	"                                 power_of_two, session_affinity, prefix_aware\n"
	"    router.max_outstanding       calls per replica before the router queues (0 = no limit)\n"
	"    router.queue_limit           calls the router holds; more are refused (0 = no limit)\n"
	"    router.affinity_saturation   session_affinity: leave a replica at this many calls\n"
	"    router.prefix_scorer         prefix_aware: cache_aware (SGLang gateway, default) or\n"
	"                                 weighted (llm-d)\n"
	"    router.prefix_load_cap       prefix_aware, sglang_*: calls above the least loaded\n"
	"                                 where load wins (64)\n"
	"    router.cache_threshold       cache_aware, sglang_*_approx: cached share of the\n"
	"                                 prompt that attracts (0.3)\n"
	"    router.balance_rel_threshold cache_aware, sglang_*: max/min load that is imbalanced (1.5)\n"
	"    router.max_tree_tokens       sglang_*_approx: tokens each replica's tree keeps (67108864)\n"
	"    router.prefix_weight         weighted, llmd_*: weight of the cached share (3)\n"
	"    router.load_weight           weighted: weight of the load (2)\n"
	"    router.queue_weight          llmd_*: weight of the scraped waiting queue (2)\n"
	"    router.kv_weight             llmd_*: weight of the scraped free KV share (2)\n"
	"    router.scrape_interval_ms    llmd_*: metrics refresh interval (50; 0 = live)\n"
	"    router.overlap_weight        dynamo_*: prefill blocks against decode blocks (1)\n"
	"    router.temperature           dynamo_*: softmax temperature (0 = lowest cost)\n"
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

/* Prefill/decode disaggregation (docs/disaggregation.md). */
static const char REPLAY_HELP_PD[] =
	"    disaggregation.prefill_pool, .decode_pool\n"
	"                                 pool names: calls decode on the decode pool and\n"
	"                                 prefill on the prefill pool when the decider says\n"
	"    disaggregation.decider       uncached (default: more than non_cached_tokens of\n"
	"                                 the prompt missing on the decode replica) or always\n"
	"    disaggregation.non_cached_tokens  the threshold (16, llm-d's guides)\n"
	"    disaggregation.link          nvlink, infiniband (default), roce or ethernet\n"
	"    disaggregation.layerwise     the transfer overlaps the prefill (false)\n"
	"    disaggregation.buffered      one transfer a call, not one a block (false)\n";

static const char REPLAY_HELP_ELASTIC[] =
	"START-UP, AUTOSCALING AND FAULTS (docs/scenario.md; all off by default)\n"
	"    startup.provision_s          cloud node provisioning (120 s; 0 = node up)\n"
	"    startup.image_pull_gbs       image pull and unpack on a new node (0.037 GB/s)\n"
	"    startup.image_prepulled      the image is on the node: no pull (false)\n"
	"    startup.storage_gbs          weight load bandwidth per GPU (1 GB/s)\n"
	"    startup.compile_cache        torch.compile from an earlier start's cache (false)\n"
	"    startup.keep_alive_s         ollama: idle s before the model unloads (300;\n"
	"                                 -1 never); its loads are reported\n"
	"                                 start-up = provisioning + image pull + engine start\n"
	"                                 + weights + compile + CUDA graphs + warm-up,\n"
	"                                 each part in the report (docs/scenario.md)\n"
	"    autoscale.enabled            follow the load between min and max replicas\n"
	"    autoscale.policy             keda (default: KEDA and the HPA it drives), hpa\n"
	"                                 (Kubernetes HorizontalPodAutoscaler) or cooldown\n"
	"                                 (this tool's first rule, no named system's)\n"
	"    autoscale.metric             inflight (default), queue or kv, per replica\n"
	"    autoscale.target             target of the metric (0 = 100, 1 or 0.8)\n"
	"    autoscale.min_replicas       fewest replicas (1; 0 = scale to zero)\n"
	"    autoscale.max_replicas       most replicas (0 = replicas)\n"
	"    autoscale.interval_s         seconds between evaluations, the HPA's sync (15)\n"
	"    autoscale.cooldown_s         keda: s after the last active poll before zero;\n"
	"                                 cooldown: s after a scaling action (300)\n"
	"    autoscale.tolerance, .scale_up_window_s, .scale_down_window_s,\n"
	"    .scale_up_pods, .scale_up_percent, .scale_up_period_s, .scale_down_percent,\n"
	"    .scale_down_period_s         hpa and keda: the HPA's behaviour (0.1, 0, 300,\n"
	"                                 4, 100, 15, 100, 15: Kubernetes' defaults)\n"
	"    autoscale.metric_lag_s       hpa and keda: age of the metric read (30)\n"
	"    autoscale.polling_interval_s, .activation_target\n"
	"                                 keda: poll to and from zero (30 s, above 0)\n"
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
			fputs(REPLAY_HELP_SCENARIO, stdout);
			fputs(REPLAY_HELP_OUTPUTS, stdout);
			fputs(REPLAY_HELP_CLUSTER, stdout);
			fputs(REPLAY_HELP_PD, stdout);
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

/* The progress line, told of each call as it finishes. */
static void on_progress(void *ctx, int64_t done_ns)
{
	progress_note(ctx, done_ns);
}

/* The deployment's launch commands: rendered as the JSON's "launch"
 * array, and kept for the table. */
struct launch_out {
	struct launch_cmd *cmd;       /* [n] */
	int n;
	char error[DIAG_MSG_MAX];     /* why there are none ("" when there are) */
	struct cli_buf json;
	bool have_json;
};

static int launch_render(struct launch_out *lo, const struct deployment *dp,
			 struct report_meta *meta, struct diag *d)
{
	lo->cmd = calloc(SCENARIO_MAX_POOLS, sizeof(*lo->cmd));
	if (!lo->cmd)
		return diag_set(d, DIAG_ENOMEM, "out of memory");
	struct diag ld;
	diag_init(&ld);
	int rc = launch_of_deployment(lo->cmd, SCENARIO_MAX_POOLS, &lo->n, dp, 0, &ld);
	if (rc == DIAG_ENOMEM)
		return diag_set(d, rc, "%s", ld.msg);
	if (rc != 0) {
		/* an engine that cannot take the settings: said, not fatal */
		lo->n = 0;
		snprintf(lo->error, sizeof(lo->error), "%s", ld.msg);
		meta->launch_error = lo->error;
	}
	rc = cli_buf_open(&lo->json, d);
	if (rc != 0)
		return rc;
	lo->have_json = true;
	fputc('[', lo->json.fp);
	for (int i = 0; i < lo->n; i++) {
		if (i)
			fputc(',', lo->json.fp);
		launch_json(lo->json.fp, &lo->cmd[i]);
	}
	fputc(']', lo->json.fp);
	rc = cli_buf_close(&lo->json, d);
	if (rc == 0)
		meta->launch_json = lo->json.text;
	return rc;
}

static void launch_table(FILE *fp, const struct launch_out *lo)
{
	if (lo->n == 0 && !lo->error[0])
		return;
	fprintf(fp, "\nLaunch command%s (the deployment as modelled, docs/size.md):\n",
		lo->n > 1 ? "s" : "");
	for (int i = 0; i < lo->n; i++)
		launch_print(fp, &lo->cmd[i], "  ");
	if (lo->error[0])
		fprintf(fp, "  (none: %s)\n", lo->error);
}

static void launch_out_release(struct launch_out *lo)
{
	if (lo->have_json)
		cli_buf_free(&lo->json);
	free(lo->cmd);
	memset(lo, 0, sizeof(*lo));
}

int cmd_replay(int argc, char **argv)
{
	struct replay_args *a = malloc(sizeof(*a));
	struct warn_list *warns = malloc(sizeof(*warns));
	struct scenario *sc = malloc(sizeof(*sc));
	struct run_result *res = malloc(sizeof(*res));
	struct costing *cost = malloc(sizeof(*cost));
	if (!a || !warns || !sc || !res || !cost) {
		free(cost);
		free(a);
		free(warns);
		free(sc);
		free(res);
		return cli_fail(DIAG_ENOMEM, "out of memory");
	}
	warn_list_init(warns);
	int prc = parse_args(argc, argv, a);
	if (prc != 0) {
		free(a);
		free(warns);
		free(sc);
		free(res);
		free(cost);
		return prc < 0 ? 0 : prc;
	}
	struct diag d;
	diag_init(&d);
	struct catalog *cat = NULL;
	struct deployment dep;
	bool built = false, ran = false;
	struct outfile csv_out = {.slot = -1};
	int64_t trace_calls = 0;
	struct progress prog;
	struct prices *price_cat = NULL;
	struct calfile *cal = NULL;
	struct engine_table *cal_et = NULL;
	bool answer_no = false;
	/* a bad output path fails now, not after the whole replay */
	int rc = a->json ? outfile_check(a->json, &d) : 0;
	if (rc == 0 && a->csv)
		rc = outfile_check(a->csv, &d);
	if (rc == 0 && a->html)
		rc = outfile_check(a->html, &d);
	if (rc == 0) {
		const char *opt[] = {"--json", "--csv", "--html"};
		const char *path[] = {a->json, a->csv, a->html};
		rc = outfile_distinct(opt, path, 3, &d);
	}
	if (rc == 0)
		rc = scenario_load(sc, a->scenario, a->sets, a->n_sets, &d);
	if (rc == 0)
		rc = deploy_check(sc, DEPLOY_CMD_REPLAY, &d);
	if (rc == 0)
		rc = catalog_load(&cat, a->catalog, &d);
	if (rc == 0)
		rc = args_calibration(a->calibration, cat, &cal_et, &cal, &d);
	if (rc == 0 && a->cost && sc->n_pools > 0)
		rc = diag_set(&d, DIAG_EINPUT, "--cost: a scenario with pools is not priced yet "
			      "(expected a scenario of one shape)");
	if (rc == 0 && sc->n_backends > 0 && a->cost)
		rc = diag_set(&d, DIAG_EINPUT, "--cost: a scenario with backends is priced by agentcap "
			      "compare, or by the backends section of this report (expected no --cost "
			      "with backends; docs/hybrid.md)");
	/* a bad price file fails now, not after the replay */
	if (rc == 0 && (a->cost || sc->n_backends > 0))
		rc = prices_load(&price_cat, a->prices ? a->prices : sc->prices[0] ? sc->prices : NULL,
				 &d);
	if (rc == 0 && a->cost)
		rc = prices_check_hardware(price_cat, cat, &d);
	if (rc == 0 && a->cost && catalog_hardware(cat, sc->hardware))
		rc = cost_gpu_hour_row_check(price_cat, catalog_hardware(cat, sc->hardware),
					     sc->cost.gpu_hour_row, &d);
	if (rc == 0) {
		struct deploy_opts dopt = {.prices = price_cat};
		rc = deploy_build(&dep, sc, cat, &dopt, warns, &d);
		built = rc == 0;
	}
	struct run_setup rs = {
		.dep = &dep,
		.replay = {.trace_path = a->trace, .format = a->format, .skip_bad = a->skip_bad,
			   .seed = a->seed, .scale = a->scale},
		.detail = true,
		.csv_name = a->csv,
	};
	rs.replay.scale.seed = a->seed;
	if (rc == 0)
		rc = deploy_scan(&dep, &rs.replay, warns, &trace_calls, &d);
	for (size_t i = 0; rc == 0 && i < warns->count; i++)
		fprintf(stderr, "agentcap replay: warning: %s\n", warns->items[i].msg);
	if (rc == 0 && a->csv) {
		rc = outfile_open(&csv_out, a->csv, &d);
		rs.csv = csv_out.fp;
	}
	if (rc == 0) {
		/* a scaled team has as many calls as the draw gives: no total */
		progress_init(&prog, a->quiet ? NULL : stderr, "agentcap replay",
			      a->scale.engineers ? 0 : trace_calls);
		rs.progress = on_progress;
		rs.progress_ctx = &prog;
		rc = run_replay(&rs, res, &d);
		ran = true;
		progress_end(&prog);
	}
	struct diag csv_d;
	diag_init(&csv_d);
	int csv_rc = 0;
	if (a->csv && csv_out.fp) {
		/* kept aside, so the table and the JSON still go out */
		if (rc != 0)
			outfile_abort(&csv_out);
		else
			csv_rc = outfile_finish(&csv_out, res->csv_rc, &res->csv_d, &csv_d);
	}
	struct charts charts = {0};
	struct launch_out launch = {0};
	if (rc == 0)
		rc = charts_init(&charts, res->m, res->sum.duration_s, &d);
	struct report_calibration rcal;
	struct report_meta meta;
	if (rc == 0) {
		const struct scenario *shape = &dep.pool[0].sc;
		const struct metrics_summary *sum = &res->sum;
		args_calibration_describe(&rcal, cal);
		double done = sum->completed > 0 ? (double)sum->completed : 1.0;
		struct calfile_regime reg = {
			.hardware = shape->hardware, .model = shape->model,
			.engine = shape->engine_profile, .batch = sum->batch_seqs_mean,
			.context = ((double)sum->prompt_tokens + (double)sum->output_tokens / 2) / done,
		};
		args_calibration_point(&rcal, cal, cat, "run", &reg);
		run_meta(&rs, res, &meta);
		/* priced before anything is written, so the JSON and the page
		 * carry it */
		if (a->cost) {
			/* a month of the trace as size, compare and whatif count
			 * it: the team's own working days, resampled or not; a
			 * request-level trace is round-the-clock traffic */
			int64_t eng = 0, days = 0;
			rc = replay_month_days(&rs.replay, &res->st, &days, &eng, &d);
			if (rc == 0)
				rc = run_cost(cost, price_cat, cat, shape, res, eng, days, &d);
			meta.cost = rc == 0 ? cost : NULL;
		}
		bool cost_ok = rc == 0;
		meta.version = AGENTCAP_VERSION;
		meta.warnings = warns;
		/* the deployment's launch commands, one per pool */
		if (rc == 0)
			rc = launch_render(&launch, &dep, &meta, &d);
		meta.charts = &charts;
		meta.calibration = &rcal;
		report_run_warnings(&meta, sum, warns);
		answer_no = report_answer_no(&meta, sum);
		/* the table keeps out of a JSON or CSV on standard output */
		bool json_stdout = (a->json && strcmp(a->json, "-") == 0) ||
				   (a->csv && strcmp(a->csv, "-") == 0) ||
				   (a->html && strcmp(a->html, "-") == 0);
		/* the table goes out even when the JSON cannot be written, so the
		 * run's results are not lost with it */
		if (rc == 0 && a->json)
			rc = report_json_write(a->json, &meta, sum, &d);
		if (cost_ok && !a->quiet && !json_stdout) {
			report_table(stdout, &meta, sum);
			launch_table(stdout, &launch);
		}
		const struct replay_stats *st = &res->st;
		if (!a->quiet && !json_stdout && a->scale.engineers)
			printf("Scaled team: %lld engineers x %lld days resampled (seed %llu) from %lld "
			       "engineers, %lld engineer-days (%lld active), %lld sessions\n",
			       (long long)st->scale.engineers, (long long)st->scale.days,
			       (unsigned long long)a->seed, (long long)st->scale.source_engineers,
			       (long long)st->scale.source_engineer_days,
			       (long long)st->scale.active_engineer_days, (long long)st->scale.sessions_out);
		if (cost_ok && a->cost && !a->quiet && !json_stdout) {
			/* beside a failed JSON too; the JSON's error is the one told */
			struct diag td;
			diag_init(&td);
			fputc('\n', stdout);
			if (costing_write_table(stdout, cost, &td) && rc == 0) {
				rc = td.code;
				d = td;
			}
		}
		if (rc == 0 && a->html) {
			/* the page is drawn from the JSON, as `agentcap report` draws it */
			struct cli_buf jb;
			rc = cli_buf_open(&jb, &d);
			if (rc == 0) {
				report_json_stream(jb.fp, &meta, sum);
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
				(long long)sum->failed, (long long)(sum->completed + sum->failed),
				(long long)sum->good_requests, 100.0 * sum->slo_attainment,
				100.0 * sc->slo_attainment);
	}
	charts_release(&charts);
	launch_out_release(&launch);
	if (ran)
		run_release(res);
	if (built)
		deploy_release(&dep);
	prices_free(price_cat);
	catalog_free(cat);
	calfile_free(cal);
	free(cal_et);
	free(a);
	free(warns);
	free(sc);
	free(res);
	free(cost);
	if (rc != 0)
		return cli_fail(rc, d.msg);
	return answer_no ? 1 : 0;
}
