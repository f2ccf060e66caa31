/* SPDX-License-Identifier: Apache-2.0
 * cmd_synth: `agentcap synth` - write a synthetic trace: a team of engineers
 * using coding agents (traces/synth.h), or a benchmark workload like
 * `vllm bench serve` (traces/synth_bench.h). */
#define _GNU_SOURCE
#include "cli/cli.h"

#include "cli/args.h"

#include "base/diag.h"
#include "base/outfile.h"
#include "reports/output.h"
#include "traces/synth.h"
#include "traces/synth_bench.h"
#include "traces/synth_profile.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char SYNTH_HELP[] =
	"NAME\n"
	"    agentcap synth - write a synthetic trace: an agent-using team or a benchmark workload\n"
	"\n"
	"SYNOPSIS\n"
	"    agentcap synth --engineers N --days D [--profile FILE] [--timezones N]\n"
	"                   [--seed S] -o OUT\n"
	"    agentcap synth --workload random|fixed --input-len N --output-len N\n"
	"                   [--range-ratio R] --num-prompts N\n"
	"                   (--request-rate R [--burstiness B] | --max-concurrency C)\n"
	"                   [--shared-prefix N] [--seed S] -o OUT\n"
	"    agentcap synth --print-profile\n"
	"\n"
	"DESCRIPTION\n"
	"    The first form makes a team of N engineers working D days with coding\n"
	"    agents: each engineer has a time zone, a daily working window and an\n"
	"    archetype; sessions hold tasks, tasks hold steps, each step is an LLM call\n"
	"    whose tool may fail and be retried; prompts share a team-wide harness\n"
	"    prefix, grow by tool output, are compacted near the context window and\n"
	"    sometimes rebuilt by cache-busting changes; subagent sessions run beside\n"
	"    their parent.  Every knob is in a JSON profile laid over the built-in\n"
	"    default, whose values reproduce published figures (median step prompt\n"
	"    ~121K tokens, output ~218, prefix hit rate 95.7%, 9% tool failures,\n"
	"    overlap concurrency 1.15 / 1.4): docs/synth-profile.md.\n"
	"\n"
	"    The second form writes a workload like `vllm bench serve` with its random\n"
	"    dataset, to set a simulated deployment beside published benchmark numbers.\n"
	"    With --request-rate, requests arrive open loop (gamma inter-arrival times,\n"
	"    shape = burstiness, mean 1/rate; burstiness 1 is Poisson).  With\n"
	"    --max-concurrency C, the trace holds C closed-loop clients that send their\n"
	"    share of the prompts back to back (gap 0), so replay keeps exactly C\n"
	"    requests in flight until the clients run out.\n"
	"\n"
	"    The output is a canonical agentcap trace (docs/trace-format.md), gzip-\n"
	"    compressed when OUT ends in .gz.  Same options and seed, same bytes.\n"
	"\n"
	"OPTIONS\n"
	"    -o, --output OUT\n"
	"        Trace to write ('-' is standard output); it appears only when complete.\n"
	"        The summary goes to standard error.\n"
	"    --seed S\n"
	"        Seed of the random choices (default 1).\n"
	"    --quiet\n"
	"        Do not print the summary.\n"
	"\n"
	"  Team\n"
	"    --engineers N\n"
	"        Engineers in the team (1..1000000).\n"
	"    --days D\n"
	"        Working days per engineer (1..3660); t = 0 is 00:00 UTC of day one.\n"
	"    --profile FILE\n"
	"        JSON profile laid over the built-in default: name only the knobs you\n"
	"        change.  An unknown key is an error naming the file and key path.\n"
	"    --timezones N\n"
	"        Keep only the profile's N time zones with the most engineers: 1 makes\n"
	"        a one-office team, whose busy hours are not averaged away over four\n"
	"        zones (the default team spans US Pacific to India).\n"
	"    --print-profile\n"
	"        Print the built-in default profile (a starting point for your own).\n"
	"\n";

static const char SYNTH_HELP_WORKLOAD[] =
	"  Benchmark workload\n"
	"    --workload random|fixed\n"
	"        random: lengths drawn uniformly from [len*(1-R), len*(1+R)];\n"
	"        fixed: every prompt exactly --input-len, every output --output-len.\n"
	"    --input-len N, --output-len N\n"
	"        Tokens per prompt (besides the shared prefix) and per output.\n"
	"    --range-ratio R\n"
	"        0 <= R < 1 (random only; default 0, as vLLM).\n"
	"    --num-prompts N\n"
	"        Requests in the workload.\n"
	"    --request-rate R\n"
	"        Requests per second, or 'inf' (all at t = 0).\n"
	"    --burstiness B\n"
	"        Shape of the gamma inter-arrival distribution (default 1: Poisson).\n"
	"    --max-concurrency C\n"
	"        C clients, each sending its next prompt when the previous completes.\n"
	"    --shared-prefix N\n"
	"        Tokens of one prefix shared by every prompt (default 0).\n"
	"\n"
	"EXIT STATUS\n"
	"    0 success; 2 bad usage or input (a profile error names file and key), or\n"
	"    OUT cannot be written; 3 internal error.\n"
	"\n"
	"EXAMPLES\n"
	"    agentcap synth --engineers 300 --days 5 -o team.jsonl.gz\n"
	"    agentcap synth --print-profile > my.json   # edit, then --profile my.json\n"
	"    agentcap synth --workload random --input-len 1024 --output-len 128 \\\n"
	"        --num-prompts 1000 --request-rate 8 --seed 0 -o bench.jsonl\n"
	"    agentcap synth --workload fixed --input-len 2048 --output-len 256 \\\n"
	"        --num-prompts 512 --max-concurrency 32 --shared-prefix 1024 -o c32.jsonl\n";

struct synth_args {
	const char *out;
	const char *profile;
	uint64_t seed;
	bool quiet;
	bool print_profile;
	int64_t engineers, days;     /* 0 = not given */
	int64_t timezones;           /* 0 = the profile's */
	bool workload;
	struct synth_bench_opts bench;
	bool have_rate, have_conc, have_burst, have_range, have_num, have_in, have_out;
};

/* A number option: integer (lo..hi) or real (lo..hi, "inf" allowed if
 * allow_inf).  0, or prints the problem and returns 2. */
static int num_arg(const char *name, const char *s, bool integral, double lo, double hi,
		   bool allow_inf, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	bool ok = errno == 0 && end != s && *end == '\0' && !isnan(v);
	if (ok && isinf(v))
		ok = allow_inf && v > 0;
	else if (ok)
		ok = v >= lo && v <= hi && (!integral || v == floor(v));
	if (!ok) {
		if (integral)
			fprintf(stderr, "agentcap synth: --%s '%s': expected an integer %.0f..%.0f\n",
				name, s, lo, hi);
		else
			fprintf(stderr, "agentcap synth: --%s '%s': expected a number %g..%g%s\n", name, s,
				lo, hi, allow_inf ? " or inf" : "");
		return 2;
	}
	*out = v;
	return 0;
}

static int parse_args(int argc, char **argv, struct synth_args *a)
{
	enum { O_OUT = 'o', O_HELP = 'h', O_SEED = 1000, O_QUIET, O_PRINT, O_ENG, O_DAYS, O_PROFILE, O_TZ,
	       O_WORKLOAD, O_IN, O_OUTLEN, O_RANGE, O_NUM, O_RATE, O_BURST, O_CONC, O_PREFIX };
	static const struct option opts[] = {
		{"output", required_argument, NULL, O_OUT},
		{"seed", required_argument, NULL, O_SEED},
		{"quiet", no_argument, NULL, O_QUIET},
		{"print-profile", no_argument, NULL, O_PRINT},
		{"engineers", required_argument, NULL, O_ENG},
		{"days", required_argument, NULL, O_DAYS},
		{"profile", required_argument, NULL, O_PROFILE},
		{"timezones", required_argument, NULL, O_TZ},
		{"workload", required_argument, NULL, O_WORKLOAD},
		{"input-len", required_argument, NULL, O_IN},
		{"output-len", required_argument, NULL, O_OUTLEN},
		{"range-ratio", required_argument, NULL, O_RANGE},
		{"num-prompts", required_argument, NULL, O_NUM},
		{"request-rate", required_argument, NULL, O_RATE},
		{"burstiness", required_argument, NULL, O_BURST},
		{"max-concurrency", required_argument, NULL, O_CONC},
		{"shared-prefix", required_argument, NULL, O_PREFIX},
		{"help", no_argument, NULL, O_HELP},
		{NULL, 0, NULL, 0},
	};
	memset(a, 0, sizeof(*a));
	a->seed = 1;
	a->bench.burstiness = 1.0;
	optind = 1;
	opterr = 0;
	int c;
	double v;
	while ((c = getopt_long(argc, argv, "ho:", opts, NULL)) != -1) {
		int rc = 0;
		switch (c) {
		case O_OUT:
			a->out = optarg;
			break;
		case O_SEED: {
			char *end;
			errno = 0;
			unsigned long long s = strtoull(optarg, &end, 10);
			if (errno || *end || end == optarg || optarg[0] == '-') {
				fprintf(stderr, "agentcap synth: --seed '%s': expected a non-negative integer\n",
					optarg);
				return 2;
			}
			a->seed = s;
			break;
		}
		case O_QUIET:
			a->quiet = true;
			break;
		case O_PRINT:
			a->print_profile = true;
			break;
		case O_ENG:
			if ((rc = num_arg("engineers", optarg, true, 1, SYNTH_MAX_ENGINEERS, false, &v)) == 0)
				a->engineers = (int64_t)v;
			break;
		case O_DAYS:
			if ((rc = num_arg("days", optarg, true, 1, SYNTH_MAX_DAYS, false, &v)) == 0)
				a->days = (int64_t)v;
			break;
		case O_PROFILE:
			a->profile = optarg;
			break;
		case O_TZ:
			if ((rc = num_arg("timezones", optarg, true, 1, 64, false, &v)) == 0)
				a->timezones = (int64_t)v;
			break;
		case O_WORKLOAD:
			a->workload = true;
			if (strcmp(optarg, "random") == 0) {
				a->bench.kind = SYNTH_BENCH_RANDOM;
			} else if (strcmp(optarg, "fixed") == 0) {
				a->bench.kind = SYNTH_BENCH_FIXED;
			} else {
				fprintf(stderr, "agentcap synth: --workload '%s': expected random or fixed\n",
					optarg);
				return 2;
			}
			break;
		case O_IN:
			a->have_in = true;
			if ((rc = num_arg("input-len", optarg, true, 1, SYNTH_BENCH_MAX_LEN, false, &v)) == 0)
				a->bench.input_len = (int64_t)v;
			break;
		case O_OUTLEN:
			a->have_out = true;
			if ((rc = num_arg("output-len", optarg, true, 1, SYNTH_BENCH_MAX_LEN, false, &v)) == 0)
				a->bench.output_len = (int64_t)v;
			break;
		case O_RANGE:
			a->have_range = true;
			if ((rc = num_arg("range-ratio", optarg, false, 0, 0.999999, false, &v)) == 0)
				a->bench.range_ratio = v;
			break;
		case O_NUM:
			a->have_num = true;
			if ((rc = num_arg("num-prompts", optarg, true, 1, SYNTH_BENCH_MAX_PROMPTS, false, &v)) == 0)
				a->bench.num_prompts = (int64_t)v;
			break;
		case O_RATE:
			a->have_rate = true;
			if ((rc = num_arg("request-rate", optarg, false, 1e-9, 1e9, true, &v)) == 0)
				a->bench.request_rate = v;
			break;
		case O_BURST:
			a->have_burst = true;
			if ((rc = num_arg("burstiness", optarg, false, 1e-6, 1e6, false, &v)) == 0)
				a->bench.burstiness = v;
			break;
		case O_CONC:
			a->have_conc = true;
			if ((rc = num_arg("max-concurrency", optarg, true, 1, 1000000, false, &v)) == 0)
				a->bench.max_concurrency = (int32_t)v;
			break;
		case O_PREFIX:
			if ((rc = num_arg("shared-prefix", optarg, true, 0, SYNTH_BENCH_MAX_LEN, false, &v)) == 0)
				a->bench.shared_prefix_len = (int64_t)v;
			break;
		case O_HELP:
			fputs(SYNTH_HELP, stdout);
			fputs(SYNTH_HELP_WORKLOAD, stdout);
			return -1;
		default:
			fprintf(stderr, "agentcap synth: unknown or incomplete option '%s' (see agentcap synth --help)\n",
				argv[optind - 1]);
			return 2;
		}
		if (rc)
			return rc;
	}
	if (optind != argc) {
		fprintf(stderr, "agentcap synth: unexpected argument '%s' (see agentcap synth --help)\n",
			argv[optind]);
		return 2;
	}
	if (a->print_profile)
		return 0;
	const char *bench_only = a->have_in ? "--input-len" : a->have_out ? "--output-len"
			       : a->have_range ? "--range-ratio" : a->have_num ? "--num-prompts"
			       : a->have_rate ? "--request-rate" : a->have_burst ? "--burstiness"
			       : a->have_conc ? "--max-concurrency"
			       : a->bench.shared_prefix_len ? "--shared-prefix" : NULL;
	if (a->workload) {
		if (a->engineers || a->days || a->profile || a->timezones) {
			fprintf(stderr, "agentcap synth: --workload does not take --engineers, --days, "
				"--profile or --timezones\n");
			return 2;
		}
		if (!a->have_in || !a->have_out || !a->have_num) {
			fprintf(stderr, "agentcap synth: --workload needs --input-len, --output-len and --num-prompts\n");
			return 2;
		}
		if (a->have_rate == a->have_conc) {
			fprintf(stderr, "agentcap synth: --workload needs exactly one of --request-rate and --max-concurrency\n");
			return 2;
		}
		if (a->have_burst && !a->have_rate) {
			fprintf(stderr, "agentcap synth: --burstiness applies to --request-rate only\n");
			return 2;
		}
		a->bench.seed = a->seed;
	} else {
		if (bench_only) {
			fprintf(stderr, "agentcap synth: %s needs --workload (see agentcap synth --help)\n",
				bench_only);
			return 2;
		}
		if (!a->engineers || !a->days) {
			fprintf(stderr, "agentcap synth: expected --engineers N and --days D, or --workload "
					"(see agentcap synth --help)\n");
			return 2;
		}
	}
	if (!a->out) {
		fprintf(stderr, "agentcap synth: expected -o OUT (see agentcap synth --help)\n");
		return 2;
	}
	return 0;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	return n >= m && strcmp(s + n - m, suffix) == 0;
}

int cmd_synth(int argc, char **argv)
{
	struct synth_args a;
	int prc = parse_args(argc, argv, &a);
	if (prc != 0)
		return prc < 0 ? 0 : prc;
	if (a.print_profile) {
		fputs(synth_profile_default_json, stdout);
		return 0;
	}
	struct diag d;
	diag_init(&d);
	if (outfile_check(a.out, &d) != 0)
		return cli_fail(d.code, d.msg);
	bool gzip = ends_with(a.out, ".gz");
	/* the summary goes to standard error, as for every command that writes
	 * a file */
	FILE *info = stderr;
	int rc;
	if (a.workload) {
		struct synth_bench_stats st;
		rc = synth_bench_write(&a.bench, a.out, gzip, &st, &d);
		if (rc == 0 && !a.quiet) {
			fprintf(info, "wrote %s: %lld requests in %lld sessions, %lld input and %lld output "
				"tokens, ", a.out, (long long)st.requests, (long long)st.sessions,
				(long long)st.input_tokens, (long long)st.output_tokens);
			if (a.bench.max_concurrency)
				fprintf(info, "%d clients back to back", (int)a.bench.max_concurrency);
			else
				fprintf(info, "last arrival at %.3f s", st.last_arrival_s);
			fprintf(info, " (seed %llu)\n", (unsigned long long)a.seed);
		}
	} else {
		struct synth_profile *p = malloc(sizeof(*p));
		if (!p)
			return cli_fail(DIAG_ENOMEM, "out of memory");
		rc = args_team_fits("--engineers", a.engineers, a.days, &d);
		if (rc == 0)
			rc = synth_profile_load(p, a.profile, &d);
		if (rc == 0 && a.timezones > 0)
			synth_profile_keep_zones(p, (int)a.timezones);
		struct synth_team_opts o = {.engineers = (int32_t)a.engineers, .days = (int32_t)a.days,
					    .seed = a.seed};
		struct synth_team_stats st;
		if (rc == 0)
			rc = synth_team_write(p, &o, a.out, gzip, &st, &d);
		if (rc == 0 && !a.quiet) {
			fprintf(info, "wrote %s: profile %s from %s, %lld engineers in %d time zone%s x "
				"%lld days, seed %llu\n", a.out, p->name, p->source, (long long)a.engineers,
				p->n_zones, p->n_zones == 1 ? "" : "s", (long long)a.days,
				(unsigned long long)a.seed);
			fprintf(info, "  %lld sessions (%lld subagent), %lld calls, %lld tasks (%lld accepted, "
				"%lld rejected, %lld re-attempts; subagent runs count in their parent's "
				"task), %lld active engineer-days\n",
				(long long)st.sessions, (long long)st.subagent_sessions, (long long)st.calls,
				(long long)st.tasks, (long long)st.tasks_accepted,
				(long long)(st.tasks - st.tasks_accepted), (long long)st.reattempts,
				(long long)st.engineer_days);
			fprintf(info, "  %lld prompt and %lld output tokens; %lld tool failures, %lld retries, "
				"%lld compactions, %lld cache busts; last session starts at %.0f s",
				(long long)st.prompt_tokens, (long long)st.output_tokens,
				(long long)st.tool_failures, (long long)st.retries, (long long)st.compactions,
				(long long)st.busts, st.last_start_s);
			char when[48];
			report_human_duration(when, sizeof(when), st.last_start_s);
			fprintf(info, when[0] ? " (%s)\n" : "%s\n", when);
		}
		free(p);
	}
	if (rc != 0)
		return cli_fail(rc, d.msg);
	return 0;
}
