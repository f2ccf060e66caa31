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
	"    agentcap catalog --catalog my-catalog/ --json\n";

int cmd_catalog(int argc, char **argv)
{
	enum { O_JSON = 1000, O_CATALOG, O_SOURCES, O_HELP };
	static const struct option opts[] = {
		{"json", no_argument, NULL, O_JSON},
		{"sources", no_argument, NULL, O_SOURCES},
		{"catalog", required_argument, NULL, O_CATALOG},
		{"help", no_argument, NULL, O_HELP},
		{NULL, 0, NULL, 0},
	};
	bool json = false, sources = false;
	const char *dir = NULL, *json_path = NULL;
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
