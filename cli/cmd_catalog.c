/* SPDX-License-Identifier: Apache-2.0
 * cmd_catalog: `agentcap catalog` - list the hardware, models, weight formats
 * and KV-cache dtypes the catalogue knows, with their ids, display names,
 * aliases and key figures.  The rendering lives in models/catalog.c
 * (catalog_write_table, catalog_write_json) so it is tested as a library
 * function; this file only parses argv and picks the stream. */
#define _GNU_SOURCE
#include "cli/cli.h"

#include "cli/args.h"

#include "base/diag.h"
#include "base/outfile.h"
#include "models/catalog.h"
#include "models/cost.h"
#include "models/prices.h"

#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char CATALOG_HELP[] =
	"NAME\n"
	"    agentcap catalog - list the hardware, models and formats agentcap knows\n"
	"\n"
	"SYNOPSIS\n"
	"    agentcap catalog [--json [FILE]] [--sources] [--catalog DIR]\n"
	"    agentcap catalog --prices [FILE] [--json [OUT]] [--catalog DIR]\n"
	"    agentcap catalog --prices [FILE] --rent ROW [--rent ROW ...]\n"
	"                     [--hours-per-day H[,H...]]\n"
	"    agentcap catalog --prices --month-usd X --tok-s T [--utilisation U[,U...]]\n"
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
	"    --rent ROW\n"
	"        With --prices: instead of the listing, what renting the price row\n"
	"        ROW (a gpu_hour or dedicated_month id) costs for a year, in the row's\n"
	"        currency and in USD: price per GPU-hour x hours a day x 365 (per\n"
	"        GPU); a dedicated server's flat monthly rent x 12, whatever the\n"
	"        hours.  Storage, transfer, power, operations and resale are not\n"
	"        included.  Give it again for more rows.\n"
	"    --hours-per-day H[,H...]\n"
	"        With --rent: the hours a day the GPU is rented, each in (0, 24].\n"
	"        Default 4,8,24.\n"
	"    --month-usd X --tok-s T\n"
	"        With --prices: what one million output tokens cost when a\n"
	"        deployment that costs X USD a month all-in produces T output\n"
	"        tokens a second while busy (agentcap predict gives the aggregate\n"
	"        decode rate of a hardware/model/batch): tokens a month = T x 3600 x\n"
	"        730 h x the utilisation; USD per 1M = X / (tokens / 1e6).\n"
	"    --utilisation U[,U...]\n"
	"        With --month-usd: the shares of the month the deployment is busy,\n"
	"        each in (0, 1].  Default 1,0.5,0.2,0.05.\n";

/* The rest of the help (a C11 string literal is kept under 4095 bytes). */
static const char CATALOG_HELP_TAIL[] =
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
	"    agentcap catalog --prices my-prices.json --json -\n"
	"    agentcap catalog --prices --rent gmi-cloud-h100 --rent ovhcloud-h100\n"
	"    agentcap catalog --prices --rent hetzner-gex131 --hours-per-day 24\n"
	"    agentcap catalog --prices --month-usd 16000 --tok-s 620\n";

#define CATALOG_MAX_LIST 16

/* The projections asked of `catalog --prices` (--rent, --month-usd). */
struct projection {
	const char *rent[CATALOG_MAX_LIST];
	size_t n_rent;
	double hours[CATALOG_MAX_LIST];
	size_t n_hours;
	double month_usd, tok_s;       /* < 0: not given */
	double util[CATALOG_MAX_LIST];
	size_t n_util;
};

/* A comma-separated list of numbers in (lo, hi] into out[0..*n). */
static bool number_list(const char *s, double lo, double hi, double *out, size_t *n)
{
	char buf[256];
	if (strlen(s) >= sizeof(buf))
		return false;
	snprintf(buf, sizeof(buf), "%s", s);
	*n = 0;
	for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		double v;
		if (*n == CATALOG_MAX_LIST || !args_number(tok, lo, hi, false, &v) || !(v > lo))
			return false;
		out[(*n)++] = v;
	}
	return *n > 0;
}

/* One year of renting each --rent row at each number of hours a day. */
static const struct price_row *rent_row(const struct prices *p, const char *id)
{
	const struct price_row *r = prices_find(p, PRICE_GPU_HOUR, id);
	return r ? r : prices_find(p, PRICE_DEDICATED_MONTH, id);
}

static int write_rent(FILE *out, const struct prices *p, const struct projection *pj,
		      struct diag *d)
{
	/* every row first: nothing printed for a bad id */
	for (size_t i = 0; i < pj->n_rent; i++)
		if (!rent_row(p, pj->rent[i]))
			return diag_set(d, DIAG_EINPUT, "--rent '%s': no gpu_hour or dedicated_month row "
					"of that id (expected an id listed by agentcap catalog --prices)",
					pj->rent[i]);
	fputs("One year of rent (price per GPU-hour x hours a day x 365, per GPU; a dedicated "
	      "server's monthly rent x 12; storage, transfer, power, operations and resale not "
	      "included; docs/cost.md)\n", out);
	bool converted = false;
	for (size_t i = 0; i < pj->n_rent; i++) {
		const struct price_row *r = rent_row(p, pj->rent[i]);
		bool flat = r->kind == PRICE_DEDICATED_MONTH;
		fprintf(out, "\n  %s: %s, %s, %s %g %s", r->id, r->item, r->provider, r->currency,
			r->amount, r->unit);
		if (!flat)
			fprintf(out, " (%s)", price_tariff_name(r->tariff));
		fprintf(out, ", %s (%s)\n", r->date, r->source);
		if (flat)
			fputs("    a flat monthly rent: the hours a day change nothing\n", out);
		char cur[16];
		snprintf(cur, sizeof(cur), "%s/year", r->currency);
		fprintf(out, "    %9s %14s %14s\n", "hours/day", cur, "USD/year");
		converted |= strcmp(r->currency, "USD") != 0;
		for (size_t k = 0; k < pj->n_hours; k++) {
			double amount, usd;
			int rc = cost_rent_year(r, pj->hours[k], &amount, &usd, d);
			if (rc)
				return rc;
			fprintf(out, "    %9g %14.2f %14.2f\n", pj->hours[k], amount, usd);
		}
	}
	for (size_t i = 0; converted && i < p->rate_count; i++)
		fprintf(out, "\n  Exchange rate: 1 %s = %.4g USD (%s; %s)\n", p->rates[i].currency,
			p->rates[i].usd_per_unit, p->rates[i].date, p->rates[i].source);
	return ferror(out) ? diag_set(d, DIAG_EIO, "write failed") : 0;
}

/* The cost of one million output tokens at each utilisation. */
static int write_per_mtok(FILE *out, const struct projection *pj, struct diag *d)
{
	double full, per;
	int rc = cost_per_mtok_at(pj->month_usd, pj->tok_s, 1.0, &full, &per, d);
	if (rc)
		return rc;
	fprintf(out, "Cost per 1M output tokens at %.2f USD a month and %g output tokens/s while "
		"busy (docs/cost.md)\n", pj->month_usd, pj->tok_s);
	fprintf(out, "  output tokens a month at 100%% = %g tok/s x %.0f h x 3600 s = %.0f (%.3gB)\n",
		pj->tok_s, COST_HOURS_PER_MONTH, full, full / 1e9);
	fprintf(out, "  %11s %20s %16s\n", "utilisation", "output tokens/month", "USD per 1M");
	for (size_t k = 0; k < pj->n_util; k++) {
		double tokens;
		if ((rc = cost_per_mtok_at(pj->month_usd, pj->tok_s, pj->util[k], &tokens, &per, d)))
			return rc;
		fprintf(out, "  %10g%% %20.0f %16.2f\n", 100 * pj->util[k], tokens, per);
	}
	return ferror(out) ? diag_set(d, DIAG_EIO, "write failed") : 0;
}

/* `catalog --prices [FILE]`: the price catalogue, checked against the
 * hardware catalogue; takes and frees cat. */
static int list_prices(struct catalog *cat, const char *path, bool json, const char *json_path,
		       const struct projection *pj, struct diag *d)
{
	struct prices *p = NULL;
	int rc = prices_load(&p, path, d);
	if (!rc)
		rc = prices_check_hardware(p, cat, d);
	if (!rc && (pj->n_rent || pj->tok_s >= 0)) {
		if (pj->n_rent)
			rc = write_rent(stdout, p, pj, d);
		if (!rc && pj->n_rent && pj->tok_s >= 0)
			fputc('\n', stdout);
		if (!rc && pj->tok_s >= 0)
			rc = write_per_mtok(stdout, pj, d);
	} else if (!rc && json_path) {
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
	enum { O_JSON = 1000, O_CATALOG, O_SOURCES, O_PRICES, O_RENT, O_HOURS, O_MONTH_USD,
	       O_TOK_S, O_UTIL, O_HELP };
	static const struct option opts[] = {
		{"json", no_argument, NULL, O_JSON},
		{"sources", no_argument, NULL, O_SOURCES},
		{"catalog", required_argument, NULL, O_CATALOG},
		{"prices", no_argument, NULL, O_PRICES},
		{"rent", required_argument, NULL, O_RENT},
		{"hours-per-day", required_argument, NULL, O_HOURS},
		{"month-usd", required_argument, NULL, O_MONTH_USD},
		{"tok-s", required_argument, NULL, O_TOK_S},
		{"utilisation", required_argument, NULL, O_UTIL},
		{"help", no_argument, NULL, O_HELP},
		{NULL, 0, NULL, 0},
	};
	bool json = false, sources = false, prices = false, hours = false, util = false;
	const char *dir = NULL, *json_path = NULL, *prices_path = NULL;
	/* the field notes' projections: 4, 8 and 24 h a day; 100, 50, 20 and
	 * 5% busy */
	struct projection pj = {.hours = {4, 8, 24}, .n_hours = 3, .month_usd = -1, .tok_s = -1,
				.util = {1, 0.5, 0.2, 0.05}, .n_util = 4};
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
		case O_RENT:
			if (pj.n_rent == CATALOG_MAX_LIST)
				return args_bad("catalog", "--rent", optarg, "at most 16 rows");
			pj.rent[pj.n_rent++] = optarg;
			break;
		case O_HOURS:
			hours = true;
			if (!number_list(optarg, 0, 24, pj.hours, &pj.n_hours))
				return args_bad("catalog", "--hours-per-day", optarg,
						"1 to 16 hours a day separated by commas, each more "
						"than 0 and at most 24");
			break;
		case O_MONTH_USD:
			if (!args_number(optarg, 0, 1e12, false, &pj.month_usd))
				return args_bad("catalog", "--month-usd", optarg,
						"US dollars a month, from 0 to 1e12");
			break;
		case O_TOK_S:
			if (!args_number(optarg, 0, 1e12, false, &pj.tok_s) || !(pj.tok_s > 0))
				return args_bad("catalog", "--tok-s", optarg,
						"output tokens per second, more than 0");
			break;
		case O_UTIL:
			util = true;
			if (!number_list(optarg, 0, 1, pj.util, &pj.n_util))
				return args_bad("catalog", "--utilisation", optarg,
						"1 to 16 shares of the month separated by commas, "
						"each more than 0 and at most 1");
			break;
		case 'h':
		case O_HELP:
			fputs(CATALOG_HELP, stdout);
			fputs(CATALOG_HELP_TAIL, stdout);
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
	bool projecting = pj.n_rent || pj.month_usd >= 0 || pj.tok_s >= 0;
	if (projecting && !prices) {
		fprintf(stderr, "agentcap catalog: --rent, --month-usd and --tok-s go with --prices "
			"(agentcap catalog --prices --rent ROW)\n");
		return 2;
	}
	if (projecting && json) {
		fprintf(stderr, "agentcap catalog: --rent, --month-usd and --tok-s print a table "
			"(expected no --json)\n");
		return 2;
	}
	if ((pj.month_usd >= 0) != (pj.tok_s >= 0)) {
		fprintf(stderr, "agentcap catalog: --month-usd and --tok-s go together (the cost of "
			"a month and the output tokens a second it buys)\n");
		return 2;
	}
	if ((hours && !pj.n_rent) || (util && pj.tok_s < 0)) {
		fprintf(stderr, "agentcap catalog: %s (expected it with %s)\n",
			hours && !pj.n_rent ? "--hours-per-day sets the hours of --rent"
					    : "--utilisation sets the shares of --month-usd and --tok-s",
			hours && !pj.n_rent ? "--rent ROW" : "--month-usd X --tok-s T");
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
		return list_prices(cat, prices_path, json, json_path, &pj, &d);
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
