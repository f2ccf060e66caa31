/* SPDX-License-Identifier: Apache-2.0
 * main: dispatch `agentcap <command>` to its cmd_ function, with what every
 * command shares around it: fatal signals remove unfinished outputs, and a
 * refused write to standard output is an error, not a silent exit 0. */
#define _POSIX_C_SOURCE 200809L
#include "cli/cli.h"

#include "base/diag.h"
#include "base/outfile.h"

#include <errno.h>
#include <signal.h>
#include <stdbool.h>
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
	{"fit-params", cmd_fit_params, "fit the model's per-family and per-engine parameters to measurements"},
	{"calibrate", cmd_calibrate, "fit the model to benchmarks of your own machine (llama-bench, vllm, sglang)"},
	{"synth", cmd_synth, "write a synthetic trace: an agent-using team or a benchmark workload"},
	{"whatif", cmd_whatif, "replay a trace as recorded and through a harness what-if, side by side"},
	{"size", cmd_size, "the smallest deployment per hardware option that meets the SLOs"},
	{"compare", cmd_compare, "cost per accepted task: sized self-hosting against seats and APIs"},
	{"report", cmd_report, "the HTML page of a saved JSON result (replay, stats, size, ...)"},
	{"sweep", cmd_sweep, "replay every cell of a grid of scenarios x traces x seeds, one row each"},
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
	      "OUTPUT FILES\n"
	      "    Every output path (--json, --html, -o) is checked before the work starts.  A\n"
	      "    regular file is written to FILE.tmp.XXXXXX beside it and renamed over it\n"
	      "    only when complete; a symbolic link is followed and the file it points to\n"
	      "    replaced that way; a character device (/dev/null) or a FIFO is written\n"
	      "    directly; '-' is standard output; anything else is refused.  SIGINT,\n"
	      "    SIGTERM, SIGHUP, SIGQUIT and SIGPIPE remove unfinished temporary files.\n"
	      "\n"
	      "EXIT STATUS\n"
	      "    0  success\n"
	      "    1  the answer is no: replay with failed calls or SLO attainment below\n"
	      "       slo.attainment (default 0.9); predict whose batch x context does\n"
	      "       not fit; size when no deployment meets the objectives (the\n"
	      "       report is still printed)\n"
	      "    2  bad usage or bad input (the message names the file, line and column),\n"
	      "       an output that cannot be written: a missing folder, a full disk,\n"
	      "       standard output closed or full (the message names it and says why),\n"
	      "       or a resource limit: out of memory, threads that cannot start\n"
	      "    3  internal error (a broken invariant; please report it)\n"
	      "\n"
	      "SEE ALSO\n"
	      "    README.md, docs/architecture.md, docs/trace-format.md, docs/scenario.md,\n"
	      "    docs/metrics.md, docs/importers.md, docs/synth-profile.md, docs/stats.md,\n"
	      "    docs/catalog.md, docs/performance-model.md, docs/validation.md,\n"
	      "    docs/whatif.md, docs/size.md\n",
	      out);
}

/* A signal that ends the process: remove the temporary files of outputs not
 * yet complete, then die of the same signal so the parent sees it.
 * SA_RESETHAND has restored the default action, and the signal stays blocked
 * until the handler returns, when it is delivered again. */
static void on_fatal_signal(int sig)
{
	int e = errno;
	outfile_remove_temps();
	raise(sig);
	errno = e;
}

static void catch_fatal_signals(void)
{
	static const int fatal[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE};
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_fatal_signal;
	sa.sa_flags = SA_RESETHAND;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(fatal) / sizeof(fatal[0]); i++) {
		struct sigaction old;
		/* a signal ignored by whoever started us (nohup, a background
		 * job of a script) stays ignored */
		if (sigaction(fatal[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN)
			continue;
		sigaction(fatal[i], &sa, NULL);
	}
	/* Past a file size limit (ulimit -f) a write then fails with EFBIG,
	 * which is reported like a full disk, instead of killing the process
	 * with its output half-written. */
	signal(SIGXFSZ, SIG_IGN);
}

/* Flush and close standard output.  A write it refused (a full disk,
 * /dev/full, a pipe closed while SIGPIPE is ignored) means the user got a
 * truncated answer: report it and turn a successful status into 2.  A
 * standard output closed from the start (>&-) is an error only if the
 * command wrote to it. */
static int finish_stdout(int status)
{
	bool failed = ferror(stdout) != 0;
	int e = 0;
	errno = 0;
	if (fflush(stdout) != 0) {
		failed = true;
		e = errno;
	}
	errno = 0;
	if (fclose(stdout) != 0 && errno != EBADF) {
		if (!failed)
			e = errno;
		failed = true;
	}
	if (!failed)
		return status;
	if (e)
		fprintf(stderr, "agentcap: standard output: write failed: %s\n", strerror(e));
	else
		fprintf(stderr, "agentcap: standard output: write failed (an earlier write was "
			"refused)\n");
	return status == 0 || status == 1 ? diag_exit_status(DIAG_EIO) : status;
}

int cli_fail(int code, const char *msg)
{
	/* running out of memory is the run's size, not a bug: say what to change */
	if (code == DIAG_ENOMEM && !strstr(msg, "expected"))
		fprintf(stderr, "agentcap: %s (expected a run that fits in this process's memory: a "
			"shorter trace, fewer engineers, days, replicas or --jobs, or more memory)\n",
			msg);
	else
		fprintf(stderr, "agentcap: %s\n", msg);
	return diag_exit_status(code);
}

static int run(int argc, char **argv)
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

int main(int argc, char **argv)
{
	catch_fatal_signals();
	return finish_stdout(run(argc, argv));
}
