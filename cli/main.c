/* SPDX-License-Identifier: Apache-2.0
 * main: dispatch `agentcap <command>` to its cmd_ function. */
#include "cli/cli.h"

#include "base/diag.h"

#include <stdio.h>
#include <string.h>

struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
};

static const struct command COMMANDS[] = {
	{"replay", cmd_replay, "replay a trace through a simulated serving deployment"},
	{"import", cmd_import, "convert agent logs and public traces to an agentcap trace"},
	{"stats", cmd_stats, "describe a trace: tokens, prefix-cache reuse, concurrency"},
	{"catalog", cmd_catalog, "list the hardware, models and formats of the catalogue"},
	{"fit", cmd_fit, "which models fit on a machine, which machines hold a model"},
	{"predict", cmd_predict, "step time and tokens/s of one model on one machine"},
	{"validate", cmd_validate, "compare the performance model with published measurements"},
	{"synth", cmd_synth, "write a synthetic trace: an agent-using team or a benchmark workload"},
};
#define N_COMMANDS (sizeof(COMMANDS) / sizeof(COMMANDS[0]))

static void usage(FILE *out)
{
	fputs("NAME\n"
	      "    agentcap - capacity planning for self-hosted LLMs serving coding agents\n"
	      "\n"
	      "SYNOPSIS\n"
	      "    agentcap <command> [options] [arguments]\n"
	      "    agentcap --help | --version\n"
	      "    agentcap <command> --help\n"
	      "\n"
	      "DESCRIPTION\n"
	      "    agentcap replays recorded or synthetic coding-agent traces through a\n"
	      "    discrete-event simulation of a vLLM-style serving deployment on modelled\n"
	      "    hardware, and reports latency percentiles, prefix-cache behaviour and\n"
	      "    utilisation, so that a team can size a deployment before buying it.\n"
	      "\n"
	      "COMMANDS\n",
	      out);
	for (size_t i = 0; i < N_COMMANDS; i++)
		fprintf(out, "    %-10s %s\n", COMMANDS[i].name, COMMANDS[i].summary);
	fputs("\n"
	      "EXIT STATUS\n"
	      "    0  success\n"
	      "    1  the answer is no (e.g. no configuration meets the objective)\n"
	      "    2  bad usage or bad input (the message names the file, line and column)\n"
	      "    3  internal error (a broken invariant; please report it)\n"
	      "\n"
	      "SEE ALSO\n"
	      "    README.md, docs/architecture.md, docs/trace-format.md, docs/scenario.md,\n"
	      "    docs/metrics.md, docs/importers.md, docs/synth-profile.md, docs/stats.md,\n"
	      "    docs/catalog.md, docs/performance-model.md, docs/validation.md\n",
	      out);
}

int cli_fail(int code, const char *msg)
{
	fprintf(stderr, "agentcap: %s\n", msg);
	return diag_exit_status(code);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
	    strcmp(argv[1], "help") == 0) {
		usage(stdout);
		return 0;
	}
	if (strcmp(argv[1], "--version") == 0) {
		printf("agentcap %s\n", AGENTCAP_VERSION);
		return 0;
	}
	for (size_t i = 0; i < N_COMMANDS; i++)
		if (strcmp(argv[1], COMMANDS[i].name) == 0)
			return COMMANDS[i].fn(argc - 1, argv + 1);
	fprintf(stderr, "agentcap: unknown command '%s' (try agentcap --help)\n", argv[1]);
	return 2;
}
