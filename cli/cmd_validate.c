/* SPDX-License-Identifier: Apache-2.0
 * cmd_validate: `agentcap validate MEASUREMENTS.csv` - predicted against
 * measured, row by row, with the error per metric and hardware family;
 * `--cross-validate GROUP` refits without each group and predicts it; and
 * `agentcap fit-params MEASUREMENTS.csv -o params.json`, the fit itself
 * (calib/fitparams.h). */
#include "cli/cli.h"

#include "cli/args.h"

#include "base/diag.h"
#include "base/outfile.h"
#include "models/calfile.h"
#include "models/catalog.h"
#include "models/engine.h"
#include "base/textfile.h"
#include "calib/fitparams.h"
#include "calib/validate.h"
#include "plan/pubexp.h"

#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

static const char VALIDATE_HELP[] =
	"NAME\n"
	"    agentcap validate - compare the performance model with measurements\n"
	"\n"
	"SYNOPSIS\n"
	"    agentcap validate [MEASUREMENTS.csv] [--json FILE] [--catalog DIR]\n"
	"                      [--engines FILE] [--calibration FILE]\n"
	"                      [--requests-per-client N] [--min-confidence LEVEL] [--quiet]\n"
	"    agentcap validate MEASUREMENTS.csv --cross-validate GROUP\n"
	"                      [--min-confidence LEVEL] [--catalog DIR] [--engines FILE]\n"
	"                      [--json FILE] [--write-bands FILE [--commit SHA]]\n"
	"    agentcap validate --published EXPERIMENTS.csv [--json FILE] [--catalog DIR]\n"
	"                      [--seed N]\n"
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
	"    --calibration FILE\n"
	"        Use calibrate's FILE; alone, score its rows.\n"
	"    --requests-per-client N\n"
	"        Requests each simulated client sends (default 8).\n"
	"    --min-confidence LEVEL\n"
	"        low, medium or high: rows of a lower stated confidence are still\n"
	"        predicted and listed but marked excluded and left out of every\n"
	"        summary.  'medium' gives the set the model's parameters are set on.\n"
	"    --quiet\n"
	"        Print only the summary.\n"
	"    --cross-validate GROUP\n"
	"        family, hardware, model, engine, package (monolithic, soc or\n"
	"        multi-die), memory (hbm, gddr or lpddr) or format (the weight\n"
	"        format): leave each group out in turn,\n"
	"        refit the parameters on the other rows (agentcap fit-params), predict\n"
	"        the group's rows with them, and print per group and metric the\n"
	"        median and p90 APE in sample (shipped parameters) and out of sample,\n"
	"        then the same over all rows.  Rows below --min-confidence (default\n"
	"        medium here) are left out.  With --json, the file holds the cells\n"
	"        and every row's measured value and its predictions in and out of\n"
	"        sample with their APE ('-': standard output, no table).\n"
	"    --write-bands FILE\n"
	"        With --cross-validate: also write the error bars of the performance\n"
	"        model (models/calibration/uncertainty.json is this file for the\n"
	"        shipped set, grouped by family): per regime (hardware family x engine\n"
	"        x metric, pooled when it has fewer than 5 rows) the 80% quantile of\n"
	"        the rows' out-of-sample |ln(predicted / measured)|, with the\n"
	"        measurements' path and CRC-32.  '-' writes to standard output.\n"
	"    --commit SHA\n"
	"        The calibration commit to record in that file.\n";

static const char VALIDATE_HELP_PUBLISHED[] =
	"    --published\n"
	"        EXPERIMENTS.csv lists published multi-replica experiments instead\n"
	"        (routing, prefix reuse across turns, KV offload; the shipped set is\n"
	"        models/calibration/published-experiments.csv, its sources in the\n"
	"        README.md beside it).  Each row's two configurations (A, the one the\n"
	"        source credits, and its baseline B) are replayed on the row's\n"
	"        workload trace through the scenario set-up every command uses, and\n"
	"        the table sets published against predicted, for the absolute figures\n"
	"        and for the gain of A over B, with the verdict: within the row's\n"
	"        tolerated band, a known gap (documented in the row and in\n"
	"        docs/validation.md), a miss, or not simulated.\n"
	"    --seed N\n"
	"        With --published: the replays' seed (default 1).\n"
	"\n";

static const char VALIDATE_HELP_TAIL[] =
	"EXIT STATUS\n"
	"    0 the report was produced (whatever the errors); 2 bad usage or input\n"
	"    (path:line: what), or an output that cannot be written; 3 internal error.\n"
	"\n"
	"EXAMPLES\n"
	"    agentcap validate models/calibration/measurements.csv\n"
	"    agentcap validate models/calibration/measurements.csv --min-confidence medium\n"
	"    agentcap validate my-benchmarks.csv --json report.json\n"
	"    agentcap validate models/calibration/measurements.csv --cross-validate family\n"
	"    agentcap validate --published models/calibration/published-experiments.csv\n"
	"    agentcap validate models/calibration/measurements.csv --cross-validate family \\\n"
	"                      --write-bands models/calibration/uncertainty.json \\\n"
	"                      --commit \"$(git log -1 --format=%H -- models/calibration/measurements.csv)\"\n";

struct validate_args {
	const char *csv;
	const char *calibration;
	const char *json;
	const char *catalog;
	const char *engines;
	int per_client;
	int min_confidence;
	bool quiet;
	const char *cross;
	const char *bands;
	const char *commit;
	bool published;
	bool seed_set;
	uint64_t seed;
};

/* A calibration commit as git names one: 7 to 40 lower-case hex digits;
 * says why not on standard error. */
static bool commit_ok(const char *cmd, const char *commit)
{
	size_t n = strlen(commit);
	if (n >= 7 && n <= 40 && strspn(commit, "0123456789abcdef") == n)
		return true;
	fprintf(stderr, "agentcap %s: --commit '%s': expected 7 to 40 lower-case hex digits\n", cmd,
		commit);
	return false;
}

static int parse_args(int argc, char **argv, struct validate_args *a)
{
	enum { O_JSON = 1000, O_CATALOG, O_ENGINES, O_RPC, O_MINCONF, O_QUIET, O_HELP, O_CROSS,
	       O_BANDS, O_COMMIT, O_CALIBRATION, O_PUBLISHED, O_SEED };
	static const struct option opts[] = {
		{"json", required_argument, NULL, O_JSON},
		{"catalog", required_argument, NULL, O_CATALOG},
		{"engines", required_argument, NULL, O_ENGINES},
		{"requests-per-client", required_argument, NULL, O_RPC},
		{"min-confidence", required_argument, NULL, O_MINCONF},
		{"quiet", no_argument, NULL, O_QUIET},
		{"cross-validate", required_argument, NULL, O_CROSS},
		{"write-bands", required_argument, NULL, O_BANDS},
		{"commit", required_argument, NULL, O_COMMIT},
		{"calibration", required_argument, NULL, O_CALIBRATION},
		{"published", no_argument, NULL, O_PUBLISHED},
		{"seed", required_argument, NULL, O_SEED},
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
		case O_BANDS: a->bands = optarg; break;
		case O_COMMIT: a->commit = optarg; break;
		case O_CALIBRATION: a->calibration = optarg; break;
		case O_PUBLISHED: a->published = true; break;
		case O_SEED: {
			char *end;
			errno = 0;
			unsigned long long v = strtoull(optarg, &end, 10);
			if (errno || *end || end == optarg || optarg[0] == '-') {
				fprintf(stderr, "agentcap validate: --seed '%s': expected a whole number "
					"from 0 to 18446744073709551615\n", optarg);
				return 2;
			}
			a->seed = (uint64_t)v;
			a->seed_set = true;
			break;
		}
		case O_CROSS: {
			enum fitparams_group g;
			if (fitparams_group_parse(optarg, &g)) {
				fprintf(stderr, "agentcap validate: --cross-validate '%s': expected "
					"family, hardware, model, engine, package, memory or "
					"format\n", optarg);
				return 2;
			}
			a->cross = optarg;
			break;
		}
		case 'h':
		case O_HELP:
			fputs(VALIDATE_HELP, stdout);
			fputs(VALIDATE_HELP_PUBLISHED, stdout);
			fputs(VALIDATE_HELP_TAIL, stdout);
			return -1;
		default:
			fprintf(stderr, "agentcap validate: unknown or incomplete option '%s' (see "
				"agentcap validate --help)\n", argv[optind - 1]);
			return 2;
		}
	}
	if (a->published) {
		if (a->cross || a->calibration || a->bands || a->commit || a->quiet || a->engines ||
		    a->min_confidence || a->per_client != 8) {
			fprintf(stderr, "agentcap validate: --published takes only --json, --catalog "
				"and --seed (see agentcap validate --help)\n");
			return 2;
		}
		if (optind != argc - 1) {
			fprintf(stderr, "agentcap validate: --published expects exactly one "
				"EXPERIMENTS.csv argument (see agentcap validate --help)\n");
			return 2;
		}
		a->csv = argv[optind];
		if (!a->seed_set)
			a->seed = 1;
		return args_output_is_input("validate", "--json", a->json, a->csv,
					    "the experiments file itself") ? 2 : 0;
	}
	if (a->seed_set) {
		fprintf(stderr, "agentcap validate: --seed goes with --published (the measurement "
			"rows replay no seeded choice)\n");
		return 2;
	}
	if (!(optind == argc - 1 || (a->calibration && optind == argc))) {
		fprintf(stderr, "agentcap validate: expected exactly one MEASUREMENTS.csv argument%s "
			"(see agentcap validate --help)\n", a->calibration ? ", or none with "
			"--calibration" : "");
		return 2;
	}
	a->csv = optind < argc ? argv[optind] : NULL;
	if (a->cross && a->calibration) {
		fprintf(stderr, "agentcap validate: --cross-validate refits the built-in parameters "
			"(drop --calibration)\n");
		return 2;
	}
	if (a->cross && a->quiet) {
		fprintf(stderr, "agentcap validate: --cross-validate prints its own table (drop "
			"--quiet)\n");
		return 2;
	}
	if (a->cross && a->json && a->bands && strcmp(a->json, "-") == 0 &&
	    strcmp(a->bands, "-") == 0) {
		fprintf(stderr, "agentcap validate: --json and --write-bands cannot both write to "
			"standard output\n");
		return 2;
	}
	if ((a->bands || a->commit) && !a->cross) {
		fprintf(stderr, "agentcap validate: --write-bands and --commit need --cross-validate "
			"(the bands come from its out-of-sample errors)\n");
		return 2;
	}
	if (a->commit && !a->bands) {
		fprintf(stderr, "agentcap validate: --commit is recorded in the --write-bands file "
			"(give one)\n");
		return 2;
	}
	if (a->commit && !commit_ok("validate", a->commit))
		return 2;
	if (args_output_is_input("validate", "--json", a->json, a->csv,
				 "the measurements file itself") ||
	    args_output_is_input("validate", "--write-bands", a->bands, a->csv,
				 "the measurements file itself"))
		return 2;
	return 0;
}

/* The catalogue and a writable engine table (the built-in one when no
 * --engines is given): the fit changes both in place. */
static int load_writable(const char *catalog, const char *engines, struct catalog **cat,
			 struct engine_table **et, struct diag *d)
{
	int rc = args_models_load(catalog, engines, cat, et, d);
	if (rc || *et)
		return rc;
	*et = malloc(sizeof(**et));
	if (!*et)
		return diag_set(d, DIAG_ENOMEM, "out of memory");
	return engine_table_load(*et, NULL, d);
}

/* `validate --cross-validate GROUP` */
static int cross_validate(const struct validate_args *a)
{
	struct diag d;
	diag_init(&d);
	struct catalog *cat = NULL;
	struct engine_table *et = NULL;
	enum fitparams_group g = CG_FAMILY;
	(void)fitparams_group_parse(a->cross, &g);
	int rc = load_writable(a->catalog, a->engines, &cat, &et, &d);
	char *text = rc ? NULL : textfile_read(a->csv, CSVREAD_MAX_BYTES, "a measurements CSV", &d);
	if (!rc && !text)
		rc = d.code ? d.code : DIAG_EIO;
	struct fitparams_cv cv;
	memset(&cv, 0, sizeof(cv));
	if (!rc && a->bands)
		rc = outfile_check(a->bands, &d);
	if (!rc && a->json)
		rc = outfile_check(a->json, &d);
	if (!rc)
		rc = outfile_distinct((const char *const[]){"--write-bands", "--json"},
				      (const char *const[]){a->bands, a->json}, 2, &d);
	if (!rc) {
		struct fitparams_opts o;
		fitparams_opts_init(&o);
		if (a->min_confidence > 0)
			o.min_confidence = (enum validate_confidence)a->min_confidence;
		o.requests_per_client = a->per_client;
		rc = fitparams_cross_validate(&cv, cat, et, a->csv, text, strlen(text), g, &o, &d);
	}
	/* nothing to report: an input error before any output */
	if (!rc && cv.n_rows == 0)
		rc = diag_set(&d, DIAG_EINPUT, "%s: no row to cross-validate (expected rows the "
			      "model predicts, of at least %s confidence)", a->csv,
			      validate_confidence_name(a->min_confidence > 0
							       ? (enum validate_confidence)a->min_confidence
							       : VC_MEDIUM));
	/* the bands before any output, so that a failure leaves none */
	struct uncert_table t;
	uncert_init(&t);
	if (!rc && a->bands) {
		rc = fitparams_cv_bands(&t, &cv, NULL, UNCERT_COVERAGE_DEFAULT, UNCERT_MIN_ROWS_DEFAULT,
				    &d);
		if (rc) {
			char msg[sizeof(d.msg)];
			snprintf(msg, sizeof(msg), "%s", d.msg);
			rc = diag_set(&d, rc, "%s: %s", a->csv, msg);
		}
	}
	/* and what a prediction outside the set's coverage errs by: leave one
	 * package kind, memory kind, format and engine out */
	static const enum fitparams_group dims[] = { CG_PACKAGE, CG_MEMORY, CG_FORMAT, CG_ENGINE };
	for (size_t k = 0; !rc && a->bands && k < sizeof(dims) / sizeof(dims[0]); k++) {
		struct fitparams_cv dv;
		memset(&dv, 0, sizeof(dv));
		struct fitparams_opts o;
		fitparams_opts_init(&o);
		if (a->min_confidence > 0)
			o.min_confidence = (enum validate_confidence)a->min_confidence;
		o.requests_per_client = a->per_client;
		rc = fitparams_cross_validate(&dv, cat, et, a->csv, text, strlen(text), dims[k], &o,
					      &d);
		if (!rc)
			rc = fitparams_cv_dim(&t.dims[t.n_dims], &dv, t.coverage, &d);
		if (!rc)
			t.n_dims++;
		fitparams_cv_release(&dv);
	}
	size_t in_sample = 0, nested = 0, total = 0;
	if (!rc && a->bands)
		rc = fitparams_cv_band_coverage(&cv, &t, &in_sample, &nested, &total, &d);
	bool bands_stdout = a->bands && strcmp(a->bands, "-") == 0;
	bool json_stdout = a->json && strcmp(a->json, "-") == 0;
	if (!rc && !bands_stdout && !json_stdout)
		rc = fitparams_cv_write_text(stdout, &cv, &d);
	if (!rc && a->json) {
		struct outfile of;
		rc = outfile_open(&of, a->json, &d);
		if (!rc) {
			struct diag wd;
			diag_init(&wd);
			rc = outfile_finish(&of, fitparams_cv_write_json(of.fp, &cv, &wd), &wd, &d);
		}
	}
	if (!rc && a->bands) {
		unsigned long crc = crc32(crc32(0L, Z_NULL, 0), (const Bytef *)text,
					  (uInt)strlen(text));
		snprintf(t.path, sizeof(t.path), "%s", a->csv);
		snprintf(t.crc32, sizeof(t.crc32), "%08lx", crc);
		snprintf(t.commit, sizeof(t.commit), "%s", a->commit ? a->commit : "");
		struct outfile of;
		rc = outfile_open(&of, a->bands, &d);
		if (!rc) {
			struct diag wd;
			diag_init(&wd);
			rc = outfile_finish(&of, uncert_write_json(of.fp, &t, &wd), &wd, &d);
		}
		if (!rc && !bands_stdout && !json_stdout && total)
			printf("\nerror bars: %zu regimes (family x engine x metric, pooled below %zu "
			       "rows), %.0f%% bands of the out-of-sample |log error|; they cover %zu of "
			       "%zu rows (%.1f%%); built without the row's %s they cover %zu (%.1f%%)\n",
			       t.n, t.min_rows, 100 * t.coverage, in_sample, total,
			       100.0 * (double)in_sample / (double)total, t.grouping, nested,
			       100.0 * (double)nested / (double)total);
	}
	uncert_release(&t);
	fitparams_cv_release(&cv);
	free(text);
	args_models_free(cat, et);
	return rc ? cli_fail(rc, d.msg) : 0;
}

/* `validate --published EXPERIMENTS.csv` */
static int published(const struct validate_args *a)
{
	struct diag d;
	diag_init(&d);
	struct catalog *cat = NULL;
	struct engine_table *et = NULL;
	struct pubexp_report rep;
	memset(&rep, 0, sizeof(rep));
	int rc = a->json ? outfile_check(a->json, &d) : 0;
	if (rc == 0)
		rc = args_models_load(a->catalog, NULL, &cat, &et, &d);
	if (rc == 0) {
		struct pubexp_opts o = {.cat = cat, .seed = a->seed};
		rc = pubexp_run(&rep, a->csv, &o, &d);
	}
	bool json_stdout = a->json && strcmp(a->json, "-") == 0;
	int wrc = 0; /* the JSON's; the table is printed even when it fails */
	if (rc == 0 && a->json) {
		struct outfile of;
		wrc = outfile_open(&of, a->json, &d);
		if (wrc == 0) {
			struct diag wd;
			diag_init(&wd);
			wrc = outfile_finish(&of, pubexp_write_json(of.fp, &rep, &wd), &wd, &d);
		}
	}
	if (rc == 0 && !json_stdout)
		rc = pubexp_write_text(stdout, &rep, &d);
	if (wrc != 0)
		rc = wrc;
	pubexp_release(&rep);
	args_models_free(cat, et);
	return rc ? cli_fail(rc, d.msg) : 0;
}

int cmd_validate(int argc, char **argv)
{
	struct validate_args a;
	int prc = parse_args(argc, argv, &a);
	if (prc != 0)
		return prc < 0 ? 0 : prc;
	if (a.cross)
		return cross_validate(&a);
	if (a.published)
		return published(&a);
	struct diag d;
	diag_init(&d);
	struct catalog *cat = NULL;
	struct engine_table *et = NULL;
	struct validate_report rep;
	memset(&rep, 0, sizeof(rep));
	int rc = a.json ? outfile_check(a.json, &d) : 0;
	struct calfile *cal = NULL;
	if (rc == 0)
		rc = args_models_load(a.catalog, a.engines, &cat, &et, &d);
	if (rc == 0)
		rc = args_calibration(a.calibration, cat, &et, &cal, &d);
	if (rc == 0 && !a.csv && !cal->csv)
		rc = diag_set(&d, DIAG_EINPUT, "%s: no measurements_csv to score (expected a file "
			      "written by agentcap calibrate, or a MEASUREMENTS.csv argument)",
			      cal->path);
	if (rc == 0) {
		struct validate_opts o;
		validate_opts_init(&o, cat);
		o.engines = et;
		o.requests_per_client = a.per_client;
		o.min_confidence = (enum validate_confidence)a.min_confidence;
		rc = a.csv ? validate_run(&rep, a.csv, &o, &d)
			   : validate_run_text(&rep, cal->path, cal->csv, strlen(cal->csv), &o, &d);
		rep.calibration = cal;
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
			calfile_write_text(stdout, cal, NULL, NULL, NULL, 0);
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
	calfile_free(cal);
	if (rc != 0)
		return cli_fail(rc, d.msg);
	return 0;
}

/* ---- agentcap fit-params ---- */

static const char FIT_PARAMS_HELP[] =
	"NAME\n"
	"    agentcap fit-params - fit the performance model's parameters to measurements\n"
	"\n"
	"SYNOPSIS\n"
	"    agentcap fit-params MEASUREMENTS.csv [-o params.json] [--commit HASH]\n"
	"                        [--min-confidence LEVEL] [--prior W]\n"
	"                        [--catalog DIR] [--engines FILE]\n"
	"\n"
	"DESCRIPTION\n"
	"    Fits the per-family parameters (eff_compute, eff_bw, step_overhead_us of\n"
	"    families.json) and the per-engine ones (overheads and kernel scales of\n"
	"    engines.json, and their per-family overrides) that move the predictions\n"
	"    of the decode_tok_s and prefill_tok_s rows of MEASUREMENTS.csv, by\n"
	"    weighted nonlinear least squares on the log error (GSL\n"
	"    gsl_multifit_nlinear): fractions stay in (0, 1) through a logistic,\n"
	"    overheads positive through an exponential, and a weak prior keeps what\n"
	"    the rows cannot tell apart at its shipped value.  Rows of high\n"
	"    confidence weigh 1, medium or unstated 0.5; rows below --min-confidence\n"
	"    (default medium) are left out.  Serving rows, which need a simulation\n"
	"    each, are not fitted.  Prints the parameters (shipped and fitted) and the\n"
	"    median APE of the fitted rows before and after.  This is not `agentcap\n"
	"    fit`, which says which models fit in which machine's memory.\n"
	"\n"
	"OPTIONS\n"
	"    -o FILE\n"
	"        Write the parameters, every fitted row's residual and the summary\n"
	"        as JSON ('-': standard output, and nothing else is printed).  The\n"
	"        file records the measurements' path, the CRC-32 of their bytes and\n"
	"        --commit.\n"
	"    --commit HASH\n"
	"        The commit of the measurements, recorded in the file.\n"
	"    --min-confidence LEVEL\n"
	"        low, medium (default) or high.\n"
	"    --prior W\n"
	"        Weight of the prior per unit of a transformed parameter (default\n"
	"        0.1; 0 fits the rows alone).\n"
	"    --catalog DIR, --engines FILE\n"
	"        Start from these files instead of the built-in copies.\n"
	"\n"
	"EXIT STATUS\n"
	"    0 the fit ran; 2 bad usage or input; 3 internal error.\n"
	"\n"
	"EXAMPLES\n"
	"    agentcap fit-params models/calibration/measurements.csv -o params.json\n";

struct fit_args {
	const char *csv, *out, *commit, *catalog, *engines;
	int min_confidence;
	double prior;
};

static int parse_fit_args(int argc, char **argv, struct fit_args *a)
{
	enum { O_COMMIT = 1000, O_MINCONF, O_PRIOR, O_CATALOG, O_ENGINES, O_HELP };
	static const struct option opts[] = {
		{"commit", required_argument, NULL, O_COMMIT},
		{"min-confidence", required_argument, NULL, O_MINCONF},
		{"prior", required_argument, NULL, O_PRIOR},
		{"catalog", required_argument, NULL, O_CATALOG},
		{"engines", required_argument, NULL, O_ENGINES},
		{"help", no_argument, NULL, O_HELP},
		{NULL, 0, NULL, 0},
	};
	memset(a, 0, sizeof(*a));
	a->min_confidence = VC_MEDIUM;
	a->prior = 0.1;
	optind = 1;
	opterr = 0;
	int c;
	while ((c = getopt_long(argc, argv, "ho:", opts, NULL)) != -1) {
		switch (c) {
		case 'o': a->out = optarg; break;
		case O_COMMIT: a->commit = optarg; break;
		case O_CATALOG: a->catalog = optarg; break;
		case O_ENGINES: a->engines = optarg; break;
		case O_MINCONF:
			a->min_confidence = validate_confidence_parse(optarg);
			if (a->min_confidence < 0) {
				fprintf(stderr, "agentcap fit-params: --min-confidence '%s': expected "
					"low, medium or high\n", optarg);
				return 2;
			}
			break;
		case O_PRIOR: {
			char *end;
			errno = 0;
			double v = strtod(optarg, &end);
			if (errno || *end || end == optarg || !(v >= 0 && v <= 100)) {
				fprintf(stderr, "agentcap fit-params: --prior '%s': expected a number "
					"from 0 to 100\n", optarg);
				return 2;
			}
			a->prior = v;
			break;
		}
		case 'h':
		case O_HELP:
			fputs(FIT_PARAMS_HELP, stdout);
			return -1;
		default:
			fprintf(stderr, "agentcap fit-params: unknown or incomplete option '%s' (see "
				"agentcap fit-params --help)\n", argv[optind - 1]);
			return 2;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "agentcap fit-params: expected exactly one MEASUREMENTS.csv argument "
			"(see agentcap fit-params --help)\n");
		return 2;
	}
	a->csv = argv[optind];
	if (a->commit && !a->out) {
		fprintf(stderr, "agentcap fit-params: --commit is recorded in the -o file (give "
			"one)\n");
		return 2;
	}
	if (a->commit && !commit_ok("fit-params", a->commit))
		return 2;
	if (args_output_is_input("fit-params", "-o", a->out, a->csv,
				 "the measurements file itself"))
		return 2;
	return 0;
}

void cli_print_params(const struct fitparams_fit *fit, const char *before)
{
	int w = (int)strlen("field");
	for (size_t j = 0; j < fit->n_params; j++) {
		int n = (int)strlen(fitparams_field_name(fit->params[j].field));
		w = n > w ? n : w;
	}
	printf("%-9s %-22s %-16s %-*s %12s %12s\n", "target", "id", "family prefix", w, "field",
	       before, "fitted");
	for (size_t j = 0; j < fit->n_params; j++) {
		const struct fitparams_param *p = &fit->params[j];
		printf("%-9s %-22s %-16s %-*s %12.4g %12.4g\n", fitparams_target_name(p->target), p->id,
		       p->target == CALIB_OVERRIDE ? p->family_prefix : "-", w,
		       fitparams_field_name(p->field), p->shipped, p->value);
	}
}

static void print_fit(const struct fitparams_fit *fit)
{
	cli_print_params(fit, "shipped");
	printf("\n%zu rows fitted, %zu parameters, %zu iterations (%s)\n", fit->n_res,
	       fit->n_params, fit->iterations, fit->stop ? fit->stop : "");
	printf("median APE of the fitted rows: %.1f%% shipped, %.1f%% fitted; weighted squared "
	       "log error %.4f -> %.4f\n", fit->median_ape_before, fit->median_ape_after,
	       fit->cost_before, fit->cost_after);
}

int cmd_fit_params(int argc, char **argv)
{
	struct fit_args a;
	int prc = parse_fit_args(argc, argv, &a);
	if (prc != 0)
		return prc < 0 ? 0 : prc;
	struct diag d;
	diag_init(&d);
	struct catalog *cat = NULL;
	struct engine_table *et = NULL;
	char *text = NULL;
	struct fitparams_fit fit;
	memset(&fit, 0, sizeof(fit));
	int rc = a.out ? outfile_check(a.out, &d) : 0;
	if (!rc)
		rc = load_writable(a.catalog, a.engines, &cat, &et, &d);
	if (!rc) {
		text = textfile_read(a.csv, CSVREAD_MAX_BYTES, "a measurements CSV", &d);
		if (!text)
			rc = d.code ? d.code : DIAG_EIO;
	}
	if (!rc) {
		struct fitparams_opts o;
		fitparams_opts_init(&o);
		o.min_confidence = (enum validate_confidence)a.min_confidence;
		o.prior = a.prior;
		rc = fitparams_fit_run(&fit, cat, et, a.csv, text, strlen(text), &o, &d);
	}
	bool to_stdout = a.out && strcmp(a.out, "-") == 0;
	if (!rc && a.out) {
		unsigned long crc = crc32(crc32(0L, Z_NULL, 0), (const Bytef *)text,
					  (uInt)strlen(text));
		struct outfile of;
		rc = outfile_open(&of, a.out, &d);
		if (!rc) {
			struct diag wd;
			diag_init(&wd);
			rc = outfile_finish(&of, fitparams_fit_write_json(of.fp, &fit, a.csv, crc, a.commit,
								     &wd), &wd, &d);
		}
	}
	if (!rc && !to_stdout)
		print_fit(&fit);
	fitparams_fit_release(&fit);
	free(text);
	args_models_free(cat, et);
	return rc ? cli_fail(rc, d.msg) : 0;
}
