/* SPDX-License-Identifier: Apache-2.0
 * cmd_catalog: `agentcap catalog` - list the hardware, models, weight formats
 * and KV-cache dtypes the catalogue knows, with their ids, display names,
 * aliases and key figures.  The rendering lives in models/catalog.c
 * (catalog_write_table, catalog_write_json) so it is tested as a library
 * function; this file only parses argv and picks the stream. */
#define _GNU_SOURCE
#include "cli/cli.h"

#include "base/diag.h"
#include "base/outfile.h"
#include "models/catalog.h"
#include "models/prices.h"

#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static const char CATALOG_HELP[] =
	"NAME\n"
	"    agentcap catalog - list the hardware, models and formats agentcap knows\n"
	"\n"
	"SYNOPSIS\n"
	"    agentcap catalog [--json [FILE]] [--sources] [--catalog DIR]\n"
	"    agentcap catalog --prices [FILE] [--json [OUT]] [--catalog DIR]\n"
	"\n"
	"DESCRIPTION\n"
	"    Prints every entry of the catalogue (models/catalog/*.json, built into\n"
	"    the binary): hardware (accelerators and complete systems, with memory,\n"
	"    bandwidth, dense BF16 TFLOPS, purchase price and rental per GPU-hour\n"
	"    where published, each in the currency it was published in), model\n"
	"    architectures (total and active parameters, context), weight formats\n"
	"    (bits per weight, compute dtype) and KV-cache dtypes, each with its id,\n"
	"    display name and aliases.  Any id or alias names the entry in other\n"
	"    commands; case, spaces, '-' and '_' do not matter (\"H100\", \"h100 sxm\").\n"
	"    Every figure's source and date are in the JSON files; docs/catalog.md\n"
	"    explains the fields.\n"
	"\n"
	"OPTIONS\n"
	"    --json [FILE]\n"
	"        Write one JSON document instead of the tables: keys in a fixed order,\n"
	"        entries in file order, so the same catalogue gives the same bytes.\n"
	"        Figures the catalogue does not give are null.  To FILE (atomically;\n"
	"        a summary goes to standard error) or, without FILE or with '-', to\n"
	"        standard output, as --json FILE does in the other commands.\n"
	"    --sources\n"
	"        Print every figure with its value, unit, source and date instead of\n"
	"        the tables, file by file and entry by entry.\n"
	"    --catalog DIR\n"
	"        Read the catalogue JSON from DIR instead of the built-in copy.\n"
	"    --prices [FILE]\n"
	"        List the price catalogue instead (models/catalog/prices.json, built\n"
	"        in; or FILE, a file of the same shape): seats, API input / cached\n"
	"        input / output prices, GPU-hour rental, dedicated servers, purchase\n"
	"        prices, electricity, PUE and operator time, each with its amount and\n"
	"        currency as published, in USD at the stated exchange rate, its unit,\n"
	"        the hardware id it prices, date and source; then the exchange rates\n"
	"        and the hardware ids that have no rental, dedicated or purchase\n"
	"        price.  A bad row is an error naming FILE:LINE:COL and what was\n"
	"        expected (exit status 2).  docs/cost.md explains the file.\n"
	"\n"
	"EXIT STATUS\n"
	"    0 success; 2 bad usage or a bad catalogue (the message names the file and\n"
	"    key path), or standard output cannot be written; 3 out of memory.\n"
	"\n"
	"EXAMPLES\n"
	"    agentcap catalog\n"
	"    agentcap catalog --json catalog.json\n"
	"    agentcap catalog --json - | jq '.hardware[0]'\n"
	"    agentcap catalog --sources | grep -A12 'hardware h100-sxm'\n"
	"    agentcap catalog --catalog my-catalog/ --json\n"
	"    agentcap catalog --prices\n"
	"    agentcap catalog --prices my-prices.json --json -\n";

/* `catalog --prices [FILE]`: the price catalogue, checked against the
 * hardware catalogue; takes and frees cat. */
static int list_prices(struct catalog *cat, const char *path, bool json, const char *json_path,
		       struct diag *d)
{
	struct prices *p = NULL;
	int rc = prices_load(&p, path, d);
	if (!rc)
		rc = prices_check_hardware(p, cat, d);
	if (!rc && json_path) {
		struct outfile of;
		rc = outfile_open(&of, json_path, d);
		if (!rc) {
			rc = prices_write_json(p, cat, of.fp, d);
			if (!rc)
				rc = outfile_commit(&of, d);
			else
				outfile_abort(&of);
		}
		if (!rc)
			fprintf(stderr, "agentcap catalog: wrote %s: %zu prices\n", json_path,
				p->row_count);
	} else if (!rc) {
		rc = json ? prices_write_json(p, cat, stdout, d) : prices_write_table(p, cat, stdout, d);
	}
	prices_free(p);
	catalog_free(cat);
	return rc ? cli_fail(rc, d->msg) : 0;
}

int cmd_catalog(int argc, char **argv)
{
	enum { O_JSON = 1000, O_CATALOG, O_SOURCES, O_PRICES, O_HELP };
	static const struct option opts[] = {
		{"json", no_argument, NULL, O_JSON},
		{"sources", no_argument, NULL, O_SOURCES},
		{"catalog", required_argument, NULL, O_CATALOG},
		{"prices", no_argument, NULL, O_PRICES},
		{"help", no_argument, NULL, O_HELP},
		{NULL, 0, NULL, 0},
	};
	bool json = false, sources = false, prices = false;
	const char *dir = NULL, *json_path = NULL, *prices_path = NULL;
	optind = 1;
	opterr = 0;
	int c;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case O_JSON:
			json = true;
			/* an optional FILE right after --json */
			if (optind < argc && (strcmp(argv[optind], "-") == 0 || argv[optind][0] != '-'))
				json_path = argv[optind++];
			break;
		case O_SOURCES:
			sources = true;
			break;
		case O_PRICES:
			prices = true;
			/* an optional FILE right after --prices */
			if (optind < argc && argv[optind][0] != '-')
				prices_path = argv[optind++];
			break;
		case O_CATALOG:
			dir = optarg;
			break;
		case 'h':
		case O_HELP:
			fputs(CATALOG_HELP, stdout);
			return 0;
		default:
			fprintf(stderr, "agentcap catalog: unknown or incomplete option '%s' "
				"(try agentcap catalog --help)\n", argv[optind - 1]);
			return 2;
		}
	}
	if (json && sources) {
		fprintf(stderr, "agentcap catalog: give --json or --sources, not both\n");
		return 2;
	}
	if (prices && sources) {
		fprintf(stderr, "agentcap catalog: give --prices or --sources, not both\n");
		return 2;
	}
	if (json_path && strcmp(json_path, "-") == 0)
		json_path = NULL;
	if (optind < argc) {
		fprintf(stderr, "agentcap catalog: unexpected argument '%s' "
			"(try agentcap catalog --help)\n", argv[optind]);
		return 2;
	}
	struct diag d;
	diag_init(&d);
	struct catalog *cat = NULL;
	int rc = catalog_load(&cat, dir, &d);
	if (!rc && prices)
		return list_prices(cat, prices_path, json, json_path, &d);
	if (!rc && sources) {
		rc = catalog_write_sources(dir, stdout, &d);
	} else if (!rc && json_path) {
		struct outfile of;
		rc = outfile_open(&of, json_path, &d);
		if (!rc) {
			rc = catalog_write_json(cat, of.fp, &d);
			if (!rc)
				rc = outfile_commit(&of, &d);
			else
				outfile_abort(&of);
		}
		if (!rc)
			fprintf(stderr, "agentcap catalog: wrote %s: %zu hardware entries, %zu models, "
				"%zu weight formats, %zu KV-cache dtypes\n", json_path,
				cat->hardware_count, cat->model_count, cat->weight_format_count,
				cat->kv_dtype_count);
	} else if (!rc) {
		rc = json ? catalog_write_json(cat, stdout, &d) : catalog_write_table(cat, stdout, &d);
	}
	/* a write standard output refused is reported by main, with its reason */
	catalog_free(cat);
	return rc ? cli_fail(rc, d.msg) : 0;
}
