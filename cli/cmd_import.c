/* SPDX-License-Identifier: Apache-2.0
 * cmd_import: `agentcap import FORMAT PATH... -o OUT` - turn agent logs or a
 * public request trace into a canonical agentcap trace (traces/import.h). */
#define _GNU_SOURCE
#include "cli/cli.h"

#include "base/diag.h"
#include "base/outfile.h"
#include "traces/import.h"
#include "traces/rules.h"

#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char IMPORT_HELP_HEAD[] =
	"NAME\n"
	"    agentcap import - convert agent logs and public traces to an agentcap trace\n"
	"\n"
	"SYNOPSIS\n"
	"    agentcap import FORMAT [--engineer NAME] PATH... -o OUT.jsonl[.gz]\n"
	"                    [--engineer-dirs] [--keep-text] [--skip-bad] [--salt S]\n"
	"                    [--rules FILE]\n"
	"\n"
	"DESCRIPTION\n"
	"    Reads every PATH (a file, plain or gzip-compressed; for claude-code, codex,\n"
	"    tracelab and weka also a folder, read recursively in name order) as FORMAT\n"
	"    and writes one canonical trace (docs/trace-format.md) to OUT, sorted by\n"
	"    session start, gzip-compressed when OUT ends in .gz.  OUT appears only when\n"
	"    the whole import succeeded (a FIFO or a device, which cannot be replaced,\n"
	"    gets the trace as it is written).  docs/importers.md says how every field of\n"
	"    every format maps and what is estimated.  A one-line summary goes to\n"
	"    standard error.\n"
	"\n"
	"    Without --keep-text no prompt or output text, file path or tool input\n"
	"    leaves the importer, and session, engineer and task ids are hashes salted\n"
	"    with --salt.\n"
	"\n"
	"FORMATS\n";

static const char IMPORT_HELP_TAIL[] =
	"\n"
	"OPTIONS\n"
	"    -o, --output OUT\n"
	"        The trace to write (required); '-' writes to standard output.\n"
	"    --keep-text\n"
	"        Keep message text in text-bearing formats (openai-log) and hash ids\n"
	"        without the salt, so they match the source's ids.\n"
	"    --skip-bad\n"
	"        Count and skip malformed records instead of stopping at the first.\n"
	"    --salt S\n"
	"        Salt of the id hashes (default: a fixed salt, so that two imports of\n"
	"        the same logs agree).  Use a secret salt to keep ids unlinkable.\n"
	"    --rules FILE\n"
	"        Apply volatile-span rules (docs/whatif.md: PCRE2 patterns, action pin\n"
	"        or volatile) to each session's segment text before it is written, so a\n"
	"        pinned timestamp no longer changes the content ids.  Needs --keep-text.\n"
	"    --engineer NAME\n"
	"        The PATHs after it (up to the next --engineer) are NAME's logs.\n"
	"        Claude Code and Codex logs name no engineer: without this (or\n"
	"        --engineer-dirs) the trace has no engineers, and replay --engineers\n"
	"        resamples the pooled logs as one person instead of resampling people.\n"
	"    --engineer-dirs\n"
	"        Every PATH is a folder holding one folder per engineer (team/alice/,\n"
	"        team/bob/, ...); the folder's name is the engineer's.\n"
	"\n"
	"EXIT STATUS\n"
	"    0 success; 2 bad usage or input (path:line[:col]: what was expected), or\n"
	"    OUT cannot be written; 3 internal error or out of memory.  Interrupted\n"
	"    (SIGINT, SIGTERM, SIGHUP), the import leaves no file behind.\n"
	"\n"
	"EXAMPLES\n"
	"    agentcap import claude-code ~/.claude/projects -o claude.jsonl.gz\n"
	"    agentcap import codex ~/.codex/sessions -o codex.jsonl.gz --salt \"$SECRET\"\n"
	"    agentcap import claude-code --engineer alice logs/alice --engineer bob \\\n"
	"        logs/bob -o team.jsonl.gz\n"
	"    agentcap import claude-code --engineer-dirs logs -o team.jsonl.gz\n"
	"    agentcap import azure AzureLLMInferenceTrace_code.csv -o azure.jsonl\n"
	"    agentcap import openai-log gateway.jsonl -o chat.jsonl --keep-text\n";

static void help(FILE *out)
{
	fputs(IMPORT_HELP_HEAD, out);
	for (const char *const *f = import_formats(); *f; f++)
		fprintf(out, "    %s\n        %s\n", *f, import_format_summary(*f));
	fputs(IMPORT_HELP_TAIL, out);
}

int cmd_import(int argc, char **argv)
{
	enum { O_KEEP = 1000, O_SKIP, O_SALT, O_ENGINEER, O_ENGINEER_DIRS, O_HELP, O_RULES };
	static const struct option opts[] = {
		{"output", required_argument, NULL, 'o'},
		{"keep-text", no_argument, NULL, O_KEEP},
		{"skip-bad", no_argument, NULL, O_SKIP},
		{"salt", required_argument, NULL, O_SALT},
		{"engineer", required_argument, NULL, O_ENGINEER},
		{"engineer-dirs", no_argument, NULL, O_ENGINEER_DIRS},
		{"rules", required_argument, NULL, O_RULES},
		{"help", no_argument, NULL, O_HELP},
		{NULL, 0, NULL, 0},
	};
	struct import_opts o = {0};
	const char *out = NULL, *rules_path = NULL;
	/* FORMAT and the PATHs in order, each PATH with the --engineer before it
	 * ('-' in the option string keeps them in place: code 1) */
	const char **pos = calloc((size_t)argc + 1, sizeof(*pos));
	const char **eng = calloc((size_t)argc + 1, sizeof(*eng));
	if (!pos || !eng) {
		free(pos);
		free(eng);
		return cli_fail(DIAG_ENOMEM, "out of memory");
	}
	size_t npos = 0;
	const char *cur = NULL;
	bool any_eng = false, eng_unused = false;
	int rc = 0;
	optind = 1;
	opterr = 0;
	int c;
	while (rc == 0 && (c = getopt_long(argc, argv, "-ho:", opts, NULL)) != -1) {
		switch (c) {
		case 1:
			eng[npos] = npos > 0 ? cur : NULL;
			pos[npos++] = optarg;
			eng_unused = eng_unused && npos == 1;
			break;
		case O_ENGINEER:
			if (!optarg[0]) {
				fprintf(stderr, "agentcap import: --engineer '': expected a name\n");
				rc = 2;
				break;
			}
			cur = optarg;
			any_eng = eng_unused = true;
			break;
		case O_ENGINEER_DIRS:
			o.engineer_dirs = true;
			break;
		case 'o':
			out = optarg;
			break;
		case O_KEEP:
			o.keep_text = true;
			break;
		case O_SKIP:
			o.skip_bad = true;
			break;
		case O_SALT:
			o.salt = optarg;
			break;
		case O_RULES:
			rules_path = optarg;
			break;
		case 'h':
		case O_HELP:
			help(stdout);
			free(pos);
			free(eng);
			return 0;
		default:
			fprintf(stderr, "agentcap import: unknown or incomplete option '%s' (see agentcap "
				"import --help)\n", argv[optind - 1]);
			rc = 2;
		}
	}
	if (rc == 0 && (npos < 2 || !out)) {
		fprintf(stderr, "agentcap import: expected FORMAT, at least one PATH and -o OUT (see "
			"agentcap import --help)\n");
		rc = 2;
	}
	if (rc == 0 && eng_unused) {
		fprintf(stderr, "agentcap import: --engineer %s names no PATH (expected it before "
			"that engineer's PATHs)\n", cur);
		rc = 2;
	}
	if (rc == 0 && any_eng && o.engineer_dirs) {
		fprintf(stderr, "agentcap import: give --engineer or --engineer-dirs, not both\n");
		rc = 2;
	}
	if (rc == 0 && !import_format_summary(pos[0])) {
		fprintf(stderr, "agentcap import: unknown format '%s' (expected one of:", pos[0]);
		for (const char *const *f = import_formats(); *f; f++)
			fprintf(stderr, " %s", *f);
		fprintf(stderr, ")\n");
		rc = 2;
	}
	if (rc != 0) {
		free(pos);
		free(eng);
		return rc;
	}
	o.engineers = any_eng ? eng + 1 : NULL;
	struct diag d;
	diag_init(&d);
	if (outfile_check(out, &d) != 0) {
		free(pos);
		free(eng);
		return cli_fail(d.code, d.msg);
	}
	struct import_stats *st = calloc(1, sizeof(*st));
	if (!st) {
		free(pos);
		free(eng);
		return cli_fail(DIAG_ENOMEM, "out of memory");
	}
	if (rules_path && !o.keep_text) {
		fprintf(stderr, "agentcap import: --rules matches segment text (expected --keep-text "
			"with --rules)\n");
		rc = 2;
	} else if (rules_path && (rules_new(&o.rules, &d) != 0 ||
				  rules_load(o.rules, rules_path, &d) != 0)) {
		rc = cli_fail(d.code, d.msg);
	}
	if (rc != 0) {
		rules_free(o.rules);
		free(st);
		free(pos);
		free(eng);
		return rc;
	}
	rc = import_files(pos[0], pos + 1, npos - 1, &o, out, st, &d);
	if (rc == 0 && o.rules)
		fprintf(stderr, "agentcap import: rules from %s: %lld segments pinned, %lld kept "
			"volatile\n", rules_path, (long long)st->rules_pinned,
			(long long)st->rules_volatile);
	rules_free(o.rules);
	if (rc == 0) {
		fprintf(stderr, "agentcap import: %s: %lld files, %lld records -> %lld sessions, %lld "
			"calls, %lld tasks; %lld prompt tokens (%lld reused), %lld output tokens; "
			"%lld tool failures; %lld skipped; %lld engineers named -> %s\n",
			pos[0], (long long)st->files, (long long)st->records, (long long)st->sessions,
			(long long)st->calls, (long long)st->tasks, (long long)st->prompt_tokens,
			(long long)st->reused_tokens, (long long)st->output_tokens,
			(long long)st->tool_fails, (long long)st->skipped, (long long)st->engineers, out);
		if (st->skipped)
			fprintf(stderr, "agentcap import: first skipped record: %s\n", st->first_skipped);
	}
	free(st);
	free(pos);
	free(eng);
	return rc == 0 ? 0 : cli_fail(rc, d.msg);
}
