/* SPDX-License-Identifier: Apache-2.0
 * cmd_stats: `agentcap stats TRACE` - what a trace holds, checked before it
 * is trusted: counts, token percentiles, prefix-cache hit rate unbounded and
 * against cache capacity (in tokens, and in GB for a model), overlap
 * concurrency, tools, retries and gaps.  The figures come from traces/stats.h;
 * this file only parses options, converts tokens to bytes with
 * models/memory.h and prints.  The JSON document is built with cJSON, whose
 * number format is fixed, so the same trace gives the same bytes.
 */
#define _GNU_SOURCE
#include "cli/cli.h"

#include "cli/args.h"

#include "base/diag.h"
#include "base/outfile.h"
#include "models/catalog.h"
#include "models/memory.h"
#include "reports/output.h"
#include "traces/stats.h"

#include <cjson/cJSON.h>

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char STATS_HELP[] =
	"NAME\n"
	"    agentcap stats - describe a trace: calls, tokens, prefix-cache reuse, concurrency\n"
	"\n"
	"SYNOPSIS\n"
	"    agentcap stats TRACE [--json FILE] [--html FILE] [--block-size N]\n"
	"                   [--cache-tokens N[,N...]] [--model M [--kv-cache-dtype D]\n"
	"                   [--catalog DIR]] [--decode-tokens-per-s R]\n"
	"                   [--format auto|canonical|mooncake]\n"
	"                   [--curve auto|exact|sampled] [--curve-samples N]\n"
	"                   [--no-curve] [--skip-bad] [--quiet]\n"
	"\n"
	"DESCRIPTION\n"
	"    Reads TRACE (an agentcap trace, docs/trace-format.md, or a Mooncake trace;\n"
	"    plain or gzip) in one streaming pass and prints what it holds: calls,\n"
	"    sessions, tasks and engineers; input, new and output tokens per call\n"
	"    (mean, p50, p90, p99, max); gaps between a call's completion and the next\n"
	"    call; tool failure and retry rates; how many calls overlap, in the\n"
	"    whole trace and within each turn (a root session's task with its\n"
	"    subagents' calls); and the token-weighted prefix-cache hit rate, with\n"
	"    an unbounded cache and as a curve against LRU cache capacity.  Check a\n"
	"    trace with it before trusting a replay of it.  docs/stats.md defines\n"
	"    every figure.\n"
	"\n"
	"    Calls are ordered by their recorded times with zero service time (a\n"
	"    session's later call at the previous call's time plus its gap).  Cache\n"
	"    hits follow the engine's rules: chained hashes of whole blocks, and never\n"
	"    the whole prompt.  With a cache larger than the trace, agentcap replay\n"
	"    reports the same hits except those missed while another request was\n"
	"    still computing the block (in-flight misses).\n"
	"\n"
	"OPTIONS\n"
	"    --json FILE\n"
	"        Also write every figure as JSON (flat keys, docs/stats.md) to FILE,\n"
	"        atomically; '-' writes to standard output and suppresses the table.\n"
	"    --html FILE\n"
	"        Also write a self-contained HTML page (the figures and the hit-rate\n"
	"        curve as an SVG chart), drawn from the JSON result: `agentcap report\n"
	"        stats.json` gives the same page.\n"
	"    --block-size N\n"
	"        Tokens per KV block (the engine's block_size).  Default 16.\n";

/* Second half of the page (a C11 string literal is kept under 4095 bytes). */
static const char STATS_HELP_MORE[] =
	"    --cache-tokens N[,N...]\n"
	"        Cache capacities of the hit-rate curve, in tokens.  Repeatable.\n"
	"        Default: 32768 tokens (about one 24 GB GPU's KV room beside an 8B model)\n"
	"        doubling up to all distinct blocks, the last point; with --model each\n"
	"        also in GB.\n"
	"    --model M\n"
	"        Also give capacities in GB of KV cache of model M (catalogue id).\n"
	"    --kv-cache-dtype D\n"
	"        KV cache element type for --model.  Default bf16.\n"
	"    --catalog DIR\n"
	"        Read the catalogue JSON from DIR instead of the built-in copy.\n"
	"    --decode-tokens-per-s R\n"
	"        Decode rate assumed to turn output tokens into call durations for the\n"
	"        concurrency figures (traces record no durations).  Default 50.  The\n"
	"        synthetic team's targets assume its profile's rate: pass 70 to check\n"
	"        them on an agentcap synth trace (docs/synth-profile.md).\n"
	"    --curve auto|exact|sampled\n"
	"        exact: every block's LRU stack distance (memory grows with the\n"
	"        trace); sampled: SHARDS, an estimate in bounded memory\n"
	"        (docs/stats.md); auto (default): exact up to 2^23 distinct blocks.\n"
	"    --curve-samples N\n"
	"        Blocks the sampled curve keeps (default 262144, ~100 bytes each).\n"
	"    --no-curve\n"
	"        Skip the hit-rate curve against capacity: the unbounded hit rate then\n"
	"        costs a few hash lookups per call instead of work on every block of\n"
	"        every prompt (about 18x faster on a synthetic agent team).\n"
	"        --cache-tokens is not allowed with it.\n"
	"    --format F\n"
	"        Trace format: auto (default), canonical or mooncake.\n"
	"    --skip-bad\n"
	"        Count and skip malformed trace lines instead of stopping.\n"
	"    --quiet\n"
	"        Do not print the table.\n"
	"\n"
	"EXIT STATUS\n"
	"    0 success; 2 bad usage or input (path:line:col: what was expected), or an\n"
	"    output that cannot be written (the --json path is checked before reading,\n"
	"    and the table is still printed if the JSON fails at the end);\n"
	"    3 internal error.\n"
	"\n"
	"EXAMPLES\n"
	"    agentcap stats traces/data/mooncake/conversation_trace.jsonl.gz\n"
	"    agentcap stats team.jsonl.gz --model llama-3.1-8b --json stats.json\n"
	"    agentcap stats synth-team.jsonl.gz --decode-tokens-per-s 70\n";

#define MAX_CAPACITIES 64
/* Default capacities: from CURVE_START_TOKENS (about the KV room of a
 * 24 GB GPU beside an 8B model in bf16: 4.3 GB at 128 KiB per token; one
 * H100 holds about 450K tokens of it) doubling up to every distinct block.
 * Agent traces reuse prefixes so much that a share of the distinct blocks
 * (1% of a team's 100M tokens is 1M) already sits above the knee. */
#define CURVE_START_TOKENS 32768


struct stats_args {
	const char *trace;
	const char *json;
	const char *html;
	const char *model;
	const char *kv_dtype;
	const char *catalog;
	int64_t cache_tokens[MAX_CAPACITIES];
	int n_cache;
	struct stats_opts opts;
	enum trace_format format;
	bool skip_bad;
	bool quiet;
	bool curve_set;
};



static int parse_capacities(struct stats_args *a, const char *arg)
{
	char buf[1024];
	if (strlen(arg) >= sizeof(buf))
		return args_bad("stats", "--cache-tokens", arg, "at most 1023 characters");
	strcpy(buf, arg);
	char *save = NULL;
	for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		int64_t v;
		if (!args_int(tok, 1, (int64_t)1 << 50, &v))
			return args_bad("stats", "--cache-tokens", tok, "a token count 1..2^50");
		if (a->n_cache == MAX_CAPACITIES)
			return args_bad("stats", "--cache-tokens", tok, "at most 64 capacities");
		a->cache_tokens[a->n_cache++] = v;
	}
	return 0;
}

static int parse_args(int argc, char **argv, struct stats_args *a)
{
	enum { O_JSON = 1000, O_HTML, O_BLOCK, O_CACHE, O_MODEL, O_KVD, O_CATALOG, O_RATE, O_FORMAT,
	       O_SKIP, O_QUIET, O_HELP, O_NO_CURVE, O_CURVE, O_SAMPLES };
	static const struct option opts[] = {
		{"json", required_argument, NULL, O_JSON},
		{"html", required_argument, NULL, O_HTML},
		{"block-size", required_argument, NULL, O_BLOCK},
		{"cache-tokens", required_argument, NULL, O_CACHE},
		{"model", required_argument, NULL, O_MODEL},
		{"kv-cache-dtype", required_argument, NULL, O_KVD},
		{"catalog", required_argument, NULL, O_CATALOG},
		{"decode-tokens-per-s", required_argument, NULL, O_RATE},
		{"format", required_argument, NULL, O_FORMAT},
		{"skip-bad", no_argument, NULL, O_SKIP},
		{"no-curve", no_argument, NULL, O_NO_CURVE},
		{"curve", required_argument, NULL, O_CURVE},
		{"curve-samples", required_argument, NULL, O_SAMPLES},
		{"quiet", no_argument, NULL, O_QUIET},
		{"help", no_argument, NULL, O_HELP},
		{NULL, 0, NULL, 0},
	};
	memset(a, 0, sizeof(*a));
	a->opts.block_size = STATS_DEFAULT_BLOCK_SIZE;
	a->opts.decode_tokens_per_s = STATS_DEFAULT_DECODE_TOKENS_PER_S;
	a->kv_dtype = "bf16";
	optind = 1;
	opterr = 0;
	int c, rc;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case O_HTML:
			a->html = optarg;
			break;
		case O_JSON:
			a->json = optarg;
			break;
		case O_BLOCK:
			if (!args_int(optarg, 1, 1 << 24, &a->opts.block_size))
				return args_bad("stats", "--block-size", optarg, "an integer 1..16777216");
			break;
		case O_CACHE:
			if ((rc = parse_capacities(a, optarg)) != 0)
				return rc;
			break;
		case O_MODEL:
			a->model = optarg;
			break;
		case O_KVD:
			a->kv_dtype = optarg;
			break;
		case O_CATALOG:
			a->catalog = optarg;
			break;
		case O_RATE: {
			char *end;
			errno = 0;
			double v = strtod(optarg, &end);
			if (errno || end == optarg || *end || !(v >= 1e-3 && v <= 1e9))
				return args_bad("stats", "--decode-tokens-per-s", optarg, "a rate 0.001..1e9");
			a->opts.decode_tokens_per_s = v;
			break;
		}
		case O_FORMAT:
			if (!args_trace_format(optarg, &a->format))
				return args_bad("stats", "--format", optarg, "auto, canonical or mooncake");
			break;
		case O_SKIP:
			a->skip_bad = true;
			break;
		case O_NO_CURVE:
			a->opts.no_curve = true;
			break;
		case O_CURVE:
			if (strcmp(optarg, "auto") == 0)
				a->opts.curve = STATS_CURVE_AUTO;
			else if (strcmp(optarg, "exact") == 0)
				a->opts.curve = STATS_CURVE_EXACT;
			else if (strcmp(optarg, "sampled") == 0)
				a->opts.curve = STATS_CURVE_SAMPLED;
			else
				return args_bad("stats", "--curve", optarg, "auto, exact or sampled");
			a->curve_set = true;
			break;
		case O_SAMPLES:
			if (!args_int(optarg, 16, (int64_t)1 << 30, &a->opts.sample_blocks))
				return args_bad("stats", "--curve-samples", optarg, "a block count 16..2^30");
			break;
		case O_QUIET:
			a->quiet = true;
			break;
		case 'h':
		case O_HELP:
			fputs(STATS_HELP, stdout);
			fputs(STATS_HELP_MORE, stdout);
			return -1;
		default:
			fprintf(stderr, "agentcap stats: unknown or incomplete option '%s' (see agentcap stats --help)\n",
				argv[optind - 1]);
			return 2;
		}
	}
	if (a->opts.no_curve && (a->curve_set || a->opts.sample_blocks)) {
		fprintf(stderr, "agentcap stats: --curve and --curve-samples need the curve (drop "
			"--no-curve)\n");
		return 2;
	}
	if (a->opts.no_curve && a->n_cache > 0) {
		fprintf(stderr, "agentcap stats: --cache-tokens needs the curve (drop --no-curve)\n");
		return 2;
	}
	if (optind != argc - 1) {
		fprintf(stderr, "agentcap stats: expected exactly one TRACE argument (see agentcap stats --help)\n");
		return 2;
	}
	a->trace = argv[optind];
	return 0;
}

/* One point of the hit-rate curve. */
struct point {
	int64_t cache_tokens;
	int64_t hit_tokens;
	double hit_rate;
};

struct result {
	struct stats_summary s;
	struct stats_source src;
	struct point pts[MAX_CAPACITIES];
	int n_pts;
	int64_t kv_bytes_per_token; /* 0 without --model */
	const char *model_id;
	int64_t model_context;      /* --model's context in tokens, 0 without */
};

static void curve(const struct stats *st, const struct stats_args *a, struct result *r)
{
	int64_t B = r->s.block_size;
	r->n_pts = 0;
	if (a->opts.no_curve) {
		return;
	} else if (a->n_cache > 0) {
		for (int i = 0; i < a->n_cache; i++) {
			struct point *p = &r->pts[r->n_pts++];
			p->cache_tokens = a->cache_tokens[i];
			p->hit_tokens = stats_hit_tokens_at(st, a->cache_tokens[i] / B);
		}
	} else if (r->s.distinct_blocks > 0) {
		int64_t all = r->s.distinct_blocks;
		for (int64_t t = CURVE_START_TOKENS; t / B < all && r->n_pts < MAX_CAPACITIES - 1; t *= 2) {
			struct point *p = &r->pts[r->n_pts++];
			p->cache_tokens = t / B * B;
			p->hit_tokens = stats_hit_tokens_at(st, t / B);
		}
		struct point *p = &r->pts[r->n_pts++];
		p->cache_tokens = all * B;
		p->hit_tokens = stats_hit_tokens_at(st, all);
	}
	for (int i = 0; i < r->n_pts; i++)
		r->pts[i].hit_rate = r->s.prompt_tokens
			? (double)r->pts[i].hit_tokens / (double)r->s.prompt_tokens : 0.0;
}

static double gb(const struct result *r, int64_t tokens)
{
	return (double)tokens * (double)r->kv_bytes_per_token / 1e9;
}

static const char *format_name(enum trace_format f)
{
	return f == TRACE_FMT_MOONCAKE ? "mooncake" : "agentcap-trace v1";
}

/* ---- table ---- */

static void dist_row(FILE *o, const char *label, const struct stats_dist *x, const char *fmt)
{
	if (x->n == 0) {
		fprintf(o, "  %-22s %12s\n", label, "-");
		return;
	}
	char cells[5][32];
	const double v[5] = {x->mean, x->p50, x->p90, x->p99, x->max};
	for (int i = 0; i < 5; i++)
		snprintf(cells[i], sizeof(cells[i]), fmt, v[i]);
	fprintf(o, "  %-22s %12s %12s %12s %12s %12s\n", label, cells[0], cells[1], cells[2], cells[3],
		cells[4]);
}

static void table(FILE *o, const struct stats_args *a, const struct result *r)
{
	const struct stats_summary *s = &r->s;
	fprintf(o, "Trace                   %s (%s%s)\n", a->trace, format_name(r->src.format),
		r->src.gzip ? ", gzip" : "");
	if (r->src.skipped_lines)
		fprintf(o, "Skipped bad lines       %ld (first: %s)\n", r->src.skipped_lines,
			r->src.first_skipped);
	fprintf(o, "Calls                   %lld\n", (long long)s->calls);
	if (r->model_context > 0)
		fprintf(o, "  longer than context   %lld (%.2f%%) exceed %s's %lld-token context (longest "
			"%lld tokens)%s\n", (long long)s->calls_over_context,
			s->calls ? 100.0 * (double)s->calls_over_context / (double)s->calls : 0.0,
			r->model_id, (long long)r->model_context, (long long)s->longest_call_tokens,
			s->calls_over_context ? ": a replay on it cannot serve them as recorded" : "");
	fprintf(o, "Sessions                %lld (%lld of them one-call open-loop requests)\n",
		(long long)s->sessions, (long long)s->open_loop_calls);
	fprintf(o, "Tasks                   %lld (%lld accepted, %lld rejected, %lld unknown)",
		(long long)s->tasks, (long long)s->tasks_accepted, (long long)s->tasks_rejected,
		(long long)(s->tasks - s->tasks_accepted - s->tasks_rejected));
	if (s->subagent_task_runs)
		fprintf(o, "; %lld subagent runs counted in their parent's task",
			(long long)s->subagent_task_runs);
	fputc('\n', o);
	fprintf(o, "Engineers               %lld\n", (long long)s->engineers);
	char span[48];
	report_human_duration(span, sizeof(span), s->last_t_s - s->first_t_s);
	fprintf(o, "Time span               %.3f .. %.3f s (zero service time%s%s)\n", s->first_t_s,
		s->last_t_s, span[0] ? "; " : "", span);
	fprintf(o, "Prompt tokens           %lld (%lld new)\n", (long long)s->prompt_tokens,
		(long long)s->new_tokens);
	fprintf(o, "Output tokens           %lld\n", (long long)s->output_tokens);
	fprintf(o, "\nPer call %16s %12s %12s %12s %12s %12s\n", "", "mean", "p50", "p90", "p99", "max");
	dist_row(o, "input tokens", &s->input_tokens, "%.1f");
	dist_row(o, "new tokens", &s->new_tokens_per_call, "%.1f");
	dist_row(o, "output tokens", &s->output_tokens_per_call, "%.1f");
	dist_row(o, "gap (s)", &s->gap_s, "%.3f");
	dist_row(o, "concurrency", &s->concurrency, "%.2f");
	dist_row(o, "calls per session", &s->calls_per_session, "%.1f");
	dist_row(o, "calls per task", &s->calls_per_task, "%.1f");
	fprintf(o, "  (concurrency: calls in flight at each call's start, at %g output tokens/s)\n",
		s->decode_tokens_per_s);
	fprintf(o, "\nTurns                   %lld (%lld with overlapping calls)\n", (long long)s->turns,
		(long long)s->overlap_turns);
	if (s->overlap_turns > 0)
		fprintf(o, "  overlap concurrency   median %.3f, p90 %.3f, max %.3f\n",
			s->overlap_concurrency.p50, s->overlap_concurrency.p90, s->overlap_concurrency.max);
	else
		fprintf(o, "  overlap concurrency   -\n");
	fprintf(o, "  (per turn: call durations / union of call intervals, at %g output tokens/s)\n",
		s->decode_tokens_per_s);
	fprintf(o, "\nTool outcomes           %lld ok, %lld failed (failure rate %.2f%%)\n",
		(long long)s->tool_ok, (long long)s->tool_fail, 100.0 * s->tool_failure_rate);
	fprintf(o, "Retries                 %lld calls (%.2f%% of calls, %lld prompt tokens)\n",
		(long long)s->retry_calls, 100.0 * s->retry_rate, (long long)s->retry_prompt_tokens);
	fprintf(o, "\nPrefix cache (blocks of %lld tokens)\n", (long long)s->block_size);
	fprintf(o, "  unbounded hit rate    %.2f%% (%lld of %lld prompt tokens)\n",
		100.0 * s->prefix_hit_rate_unbounded, (long long)s->hit_tokens_unbounded,
		(long long)s->prompt_tokens);
	fprintf(o, "  distinct blocks       %lld (%lld tokens", (long long)s->distinct_blocks,
		(long long)(s->distinct_blocks * s->block_size));
	if (r->kv_bytes_per_token)
		fprintf(o, ", %.2f GB of %s KV cache", gb(r, s->distinct_blocks * s->block_size),
			r->model_id);
	fputs(")\n", o);
	if (r->n_pts > 0) {
		fprintf(o, "\n  LRU capacity (tokens)");
		if (r->kv_bytes_per_token)
			fprintf(o, "  %12s", "(GB)");
		fprintf(o, "  %10s\n", "hit rate");
		for (int i = 0; i < r->n_pts; i++) {
			fprintf(o, "  %21lld", (long long)r->pts[i].cache_tokens);
			if (r->kv_bytes_per_token)
				fprintf(o, "  %12.3f", gb(r, r->pts[i].cache_tokens));
			fprintf(o, "  %9.2f%%\n", 100.0 * r->pts[i].hit_rate);
		}
		if (s->curve_sampled)
			fprintf(o, "  (sampled, SHARDS: %lld blocks at the end, rate %.6f; the last point "
				"is exact; docs/stats.md gives the error)\n",
				(long long)s->curve_sample_blocks, s->curve_sample_rate);
		else
			fprintf(o, "  (exact)\n");
	}
}

/* ---- JSON ---- */

static bool add_num(cJSON *o, const char *key, double v)
{
	return cJSON_AddNumberToObject(o, key, isfinite(v) ? v : 0.0) != NULL;
}

static bool add_dist(cJSON *o, const char *name, const struct stats_dist *x)
{
	static const char *const stat[6] = {"min", "mean", "median", "p90", "p99", "max"};
	const double v[6] = {x->min, x->mean, x->p50, x->p90, x->p99, x->max};
	char key[96];
	for (int i = 0; i < 6; i++) {
		snprintf(key, sizeof(key), "%s_%s", stat[i], name);
		if (!add_num(o, key, v[i]))
			return false;
	}
	return true;
}

static cJSON *build_json(const struct stats_args *a, const struct result *r)
{
	const struct stats_summary *s = &r->s;
	cJSON *o = cJSON_CreateObject();
	if (!o)
		return NULL;
	bool ok = add_num(o, "schema_version", 1) &&
		cJSON_AddStringToObject(o, "schema", "agentcap-stats") &&
		cJSON_AddStringToObject(o, "agentcap_version", AGENTCAP_VERSION) &&
		cJSON_AddStringToObject(o, "trace", a->trace) &&
		cJSON_AddStringToObject(o, "trace_format", format_name(r->src.format)) &&
		cJSON_AddBoolToObject(o, "gzip", r->src.gzip) &&
		add_num(o, "skipped_bad_lines", (double)r->src.skipped_lines) &&
		add_num(o, "block_size", (double)s->block_size) &&
		add_num(o, "decode_tokens_per_s", s->decode_tokens_per_s) &&
		add_num(o, "calls", (double)s->calls) &&
		add_num(o, "sessions", (double)s->sessions) &&
		add_num(o, "open_loop_calls", (double)s->open_loop_calls) &&
		add_num(o, "tasks", (double)s->tasks) &&
		add_num(o, "tasks_accepted", (double)s->tasks_accepted) &&
		add_num(o, "tasks_rejected", (double)s->tasks_rejected) &&
		add_num(o, "subagent_task_runs", (double)s->subagent_task_runs) &&
		add_num(o, "engineers", (double)s->engineers) &&
		add_num(o, "first_t_s", s->first_t_s) &&
		add_num(o, "last_t_s", s->last_t_s) &&
		add_num(o, "prompt_tokens", (double)s->prompt_tokens) &&
		add_num(o, "output_tokens", (double)s->output_tokens) &&
		add_num(o, "new_tokens", (double)s->new_tokens) &&
		add_dist(o, "input_tokens", &s->input_tokens) &&
		add_dist(o, "new_tokens", &s->new_tokens_per_call) &&
		add_dist(o, "output_tokens", &s->output_tokens_per_call) &&
		add_dist(o, "gap_s", &s->gap_s) &&
		add_dist(o, "concurrency", &s->concurrency) &&
		add_dist(o, "calls_per_session", &s->calls_per_session) &&
		add_dist(o, "calls_per_task", &s->calls_per_task) &&
		add_num(o, "turns", (double)s->turns) &&
		add_num(o, "overlap_turns", (double)s->overlap_turns) &&
		add_num(o, "overlap_concurrency_median", s->overlap_concurrency.p50) &&
		add_num(o, "overlap_concurrency_p90", s->overlap_concurrency.p90) &&
		add_num(o, "tool_ok_calls", (double)s->tool_ok) &&
		add_num(o, "tool_fail_calls", (double)s->tool_fail) &&
		add_num(o, "tool_failure_rate", s->tool_failure_rate) &&
		add_num(o, "retry_calls", (double)s->retry_calls) &&
		add_num(o, "retry_rate", s->retry_rate) &&
		add_num(o, "retry_prompt_tokens", (double)s->retry_prompt_tokens) &&
		add_num(o, "prefix_hit_tokens_unbounded", (double)s->hit_tokens_unbounded) &&
		add_num(o, "prefix_hit_rate_unbounded", s->prefix_hit_rate_unbounded) &&
		add_num(o, "distinct_blocks", (double)s->distinct_blocks) &&
		add_num(o, "distinct_block_tokens", (double)(s->distinct_blocks * s->block_size));
	if (ok && r->kv_bytes_per_token)
		ok = cJSON_AddStringToObject(o, "model", r->model_id) &&
		     cJSON_AddStringToObject(o, "kv_cache_dtype", a->kv_dtype) &&
		     add_num(o, "kv_bytes_per_token", (double)r->kv_bytes_per_token) &&
		     add_num(o, "model_context_tokens", (double)r->model_context) &&
		     add_num(o, "calls_over_model_context", (double)s->calls_over_context) &&
		     add_num(o, "longest_call_tokens", (double)s->longest_call_tokens) &&
		     add_num(o, "distinct_block_gb", gb(r, s->distinct_blocks * s->block_size));
	if (ok && r->n_pts > 0)
		ok = cJSON_AddStringToObject(o, "cache_curve_method",
					     s->curve_sampled ? "sampled" : "exact") &&
		     add_num(o, "cache_curve_sample_rate", s->curve_sampled ? s->curve_sample_rate : 1) &&
		     add_num(o, "cache_curve_sample_blocks",
			     (double)(s->curve_sampled ? s->curve_sample_blocks : s->distinct_blocks));
	cJSON *arr = ok ? cJSON_AddArrayToObject(o, "cache_curve") : NULL;
	ok = arr != NULL;
	for (int i = 0; ok && i < r->n_pts; i++) {
		cJSON *p = cJSON_CreateObject();
		ok = p && cJSON_AddItemToArray(arr, p);
		if (!ok) {
			cJSON_Delete(p);
			break;
		}
		ok = add_num(p, "cache_tokens", (double)r->pts[i].cache_tokens) &&
		     (!r->kv_bytes_per_token || add_num(p, "cache_gb", gb(r, r->pts[i].cache_tokens))) &&
		     add_num(p, "hit_tokens", (double)r->pts[i].hit_tokens) &&
		     add_num(p, "hit_rate", r->pts[i].hit_rate);
	}
	if (!ok) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

/* The JSON document to --json, and the page drawn from it to --html. */
static int write_json(const struct stats_args *a, const struct result *r, struct diag *d)
{
	cJSON *o = build_json(a, r);
	char *text = o ? cJSON_Print(o) : NULL;
	cJSON_Delete(o);
	if (!text)
		return diag_set(d, DIAG_ENOMEM, "out of memory for the JSON document");
	int rc = 0;
	if (a->json) {
		struct outfile of;
		rc = outfile_open(&of, a->json, d);
		if (rc == 0) {
			fputs(text, of.fp);
			fputc('\n', of.fp);
			rc = outfile_commit(&of, d);
		}
	}
	if (rc == 0 && a->html)
		rc = cli_html_write(a->html, text, strlen(text), "the run's result", d);
	free(text);
	return rc;
}

/* KV bytes per token of context of the model, for the GB columns. */
static int kv_bytes(const struct stats_args *a, struct result *r, struct diag *d)
{
	struct catalog *cat = NULL;
	int rc = catalog_load(&cat, a->catalog, d);
	if (rc != 0)
		return rc;
	const struct cat_model *m = catalog_model(cat, a->model);
	const struct cat_kv_dtype *k = catalog_kv_dtype(cat, a->kv_dtype);
	if (!m)
		rc = diag_set(d, DIAG_EINPUT, "--model '%s': not in the catalogue (expected a model id; "
			      "see models/catalog/)", a->model);
	else if (!k)
		rc = diag_set(d, DIAG_EINPUT, "--kv-cache-dtype '%s': not in the catalogue "
			      "(expected e.g. bf16 or fp8)", a->kv_dtype);
	else {
		/* what a token of context costs in the cache: the full-attention
		 * groups (sliding-window layers hold only their window per running
		 * sequence, whatever the cache size) */
		r->kv_bytes_per_token = mem_kv_context_bytes_per_token(m, k);
		r->model_id = a->model;
		r->model_context = m->max_context;
	}
	catalog_free(cat);
	return rc;
}

int cmd_stats(int argc, char **argv)
{
	struct stats_args *a = malloc(sizeof(*a));
	struct result *r = calloc(1, sizeof(*r));
	if (!a || !r) {
		free(a);
		free(r);
		return cli_fail(DIAG_ENOMEM, "out of memory");
	}
	int prc = parse_args(argc, argv, a);
	if (prc != 0) {
		free(a);
		free(r);
		return prc < 0 ? 0 : prc;
	}
	struct diag d;
	diag_init(&d);
	struct stats *st = NULL;
	/* a bad output path fails now, not after reading the whole trace */
	int rc = a->json ? outfile_check(a->json, &d) : 0;
	if (rc == 0 && a->html)
		rc = outfile_check(a->html, &d);
	if (rc == 0)
		rc = outfile_distinct((const char *const[]){"--json", "--html"},
				      (const char *const[]){a->json, a->html}, 2, &d);
	if (rc == 0 && a->model)
		rc = kv_bytes(a, r, &d);
	a->opts.context_tokens = r->model_context;
	if (rc == 0)
		rc = stats_new(&st, &a->opts, &d);
	if (rc == 0)
		rc = stats_read(st, a->trace, a->format, a->skip_bad, &r->s, &r->src, &d);
	if (rc == 0) {
		curve(st, a, r);
		bool json_stdout = (a->json && strcmp(a->json, "-") == 0) ||
				   (a->html && strcmp(a->html, "-") == 0);
		/* the table goes out even when the JSON cannot be written */
		if (a->json || a->html)
			rc = write_json(a, r, &d);
		if (!a->quiet && !json_stdout)
			table(stdout, a, r);
	}
	stats_free(st);
	free(a);
	free(r);
	if (rc != 0)
		return cli_fail(rc, d.msg);
	return 0;
}
