/* SPDX-License-Identifier: Apache-2.0
 * cmd_validate: `agentcap validate MEASUREMENTS.csv` - predicted against
 * measured, row by row, with the error per metric and hardware family. */
#include "cli/cli.h"

#include "cli/args.h"

#include "base/diag.h"
#include "base/outfile.h"
#include "models/catalog.h"
#include "models/engine.h"
#include "replay/validate.h"

#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char VALIDATE_HELP[] =
	"NAME\n"
	"    agentcap validate - compare the performance model with measurements\n"
	"\n"
	"SYNOPSIS\n"
	"    agentcap validate MEASUREMENTS.csv [--json FILE] [--catalog DIR]\n"
	"                      [--engines FILE] [--requests-per-client N]\n"
	"                      [--min-confidence LEVEL] [--quiet]\n"
	"\n"
	"DESCRIPTION\n"
	"    For each row of MEASUREMENTS.csv (columns hardware, n_gpus, model, quant,\n"
	"    engine, concurrency, input_tokens, output_tokens, metric, value, unit;\n"
	"    hardware, model and quant are catalogue ids) runs the matching prediction:\n"
	"    decode_tok_s and prefill_tok_s from the step model (batch = concurrency,\n"
	"    context = input_tokens, llama-bench style tg/pp), the serving metrics\n"
	"    (output_throughput_tok_s, total_throughput_tok_s, ttft_ms, tpot_ms,\n"
	"    itl_ms, e2el_ms) from a closed-loop simulation of `concurrency` clients\n"
	"    sending requests back to back (all requests at once when concurrency is\n"
	"    empty).  Prints predicted against measured and the absolute percentage\n"
	"    error (APE) of each row, then the median and worst APE per metric and\n"
	"    per hardware family, over all rows and over the rows whose provenance\n"
	"    column says original (optional columns provenance: original, copy,\n"
	"    inferred; confidence: high, medium, low).  The calibration set shipped\n"
	"    with agentcap is models/calibration/measurements.csv;\n"
	"    docs/validation.md discusses it.\n"
	"\n"
	"OPTIONS\n"
	"    --json FILE\n"
	"        Also write rows (input columns plus predicted, measured, ape_pct) and\n"
	"        summary (per metric and per family: n, median_ape_pct, max_ape_pct)\n"
	"        as JSON; '-' writes to standard output and suppresses the table.\n"
	"    --catalog DIR, --engines FILE\n"
	"        Read the catalogue / engine profiles from files instead of the built-in copy.\n"
	"    --requests-per-client N\n"
	"        Requests each simulated client sends (default 8).\n"
	"    --min-confidence LEVEL\n"
	"        low, medium or high: rows of a lower stated confidence are still\n"
	"        predicted and listed but marked excluded and left out of every\n"
	"        summary.  'medium' gives the set the model's parameters are set on.\n"
	"    --quiet\n"
	"        Print only the summary.\n"
	"\n"
	"EXIT STATUS\n"
	"    0 the report was produced (whatever the errors); 2 bad usage or input\n"
	"    (path:line: what), or an output that cannot be written; 3 internal error.\n"
	"\n"
	"EXAMPLES\n"
	"    agentcap validate models/calibration/measurements.csv\n"
	"    agentcap validate models/calibration/measurements.csv --min-confidence medium\n"
	"    agentcap validate my-benchmarks.csv --json report.json\n";

struct validate_args {
	const char *csv;
	const char *json;
	const char *catalog;
	const char *engines;
	int per_client;
	int min_confidence;
	bool quiet;
};

static int parse_args(int argc, char **argv, struct validate_args *a)
{
	enum { O_JSON = 1000, O_CATALOG, O_ENGINES, O_RPC, O_MINCONF, O_QUIET, O_HELP };
	static const struct option opts[] = {
		{"json", required_argument, NULL, O_JSON},
		{"catalog", required_argument, NULL, O_CATALOG},
		{"engines", required_argument, NULL, O_ENGINES},
		{"requests-per-client", required_argument, NULL, O_RPC},
		{"min-confidence", required_argument, NULL, O_MINCONF},
		{"quiet", no_argument, NULL, O_QUIET},
		{"help", no_argument, NULL, O_HELP},
		{NULL, 0, NULL, 0},
	};
	memset(a, 0, sizeof(*a));
	a->per_client = 8;
	optind = 1;
	opterr = 0;
	int c;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case O_JSON: a->json = optarg; break;
		case O_CATALOG: a->catalog = optarg; break;
		case O_ENGINES: a->engines = optarg; break;
		case O_RPC: {
			char *end;
			errno = 0;
			long v = strtol(optarg, &end, 10);
			if (errno || *end || end == optarg || v < 1 || v > 10000) {
				fprintf(stderr, "agentcap validate: --requests-per-client '%s': expected "
					"a whole number from 1 to 10000\n", optarg);
				return 2;
			}
			a->per_client = (int)v;
			break;
		}
		case O_MINCONF:
			a->min_confidence = validate_confidence_parse(optarg);
			if (a->min_confidence < 0) {
				fprintf(stderr, "agentcap validate: --min-confidence '%s': expected "
					"low, medium or high\n", optarg);
				return 2;
			}
			break;
		case O_QUIET: a->quiet = true; break;
		case 'h':
		case O_HELP:
			fputs(VALIDATE_HELP, stdout);
			return -1;
		default:
			fprintf(stderr, "agentcap validate: unknown or incomplete option '%s' (see "
				"agentcap validate --help)\n", argv[optind - 1]);
			return 2;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "agentcap validate: expected exactly one MEASUREMENTS.csv argument "
			"(see agentcap validate --help)\n");
		return 2;
	}
	a->csv = argv[optind];
	return 0;
}

int cmd_validate(int argc, char **argv)
{
	struct validate_args a;
	int prc = parse_args(argc, argv, &a);
	if (prc != 0)
		return prc < 0 ? 0 : prc;
	struct diag d;
	diag_init(&d);
	struct catalog *cat = NULL;
	struct engine_table *et = NULL;
	struct validate_report rep;
	memset(&rep, 0, sizeof(rep));
	int rc = a.json ? outfile_check(a.json, &d) : 0;
	if (rc == 0)
		rc = args_models_load(a.catalog, a.engines, &cat, &et, &d);
	if (rc == 0) {
		struct validate_opts o;
		validate_opts_init(&o, cat);
		o.engines = et;
		o.requests_per_client = a.per_client;
		o.min_confidence = (enum validate_confidence)a.min_confidence;
		rc = validate_run(&rep, a.csv, &o, &d);
	}
	bool json_stdout = a.json && strcmp(a.json, "-") == 0;
	int wrc = 0; /* the JSON's; the table is printed even when it fails */
	if (rc == 0 && a.json) {
		struct outfile of;
		wrc = outfile_open(&of, a.json, &d);
		if (wrc == 0) {
			struct diag wd;
			diag_init(&wd);
			wrc = outfile_finish(&of, validate_write_json(of.fp, &rep, &wd), &wd, &d);
		}
	}
	if (rc == 0 && !json_stdout) {
		if (a.quiet) {
			for (size_t i = 0; i < rep.n_metrics; i++) {
				const struct validate_group *g = &rep.metrics[i];
				char orig[32] = "     -";
				if (g->n_original > 0)
					snprintf(orig, sizeof(orig), "%6.1f%%", g->median_ape_pct_original);
				printf("%-28s n=%-4zu median APE %6.1f%%  worst %6.1f%%  original "
				       "n=%-4zu median %s\n", g->key, g->n, g->median_ape_pct,
				       g->max_ape_pct, g->n_original, orig);
			}
		} else {
			rc = validate_write_text(stdout, &rep, &d);
		}
	}
	if (wrc != 0)
		rc = wrc;
	validate_release(&rep);
	args_models_free(cat, et);
	if (rc != 0)
		return cli_fail(rc, d.msg);
	return 0;
}
