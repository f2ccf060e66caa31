/* SPDX-License-Identifier: Apache-2.0
 * cmd_calibrate: `agentcap calibrate RESULT... -o my-box.json` -- a team's
 * own calibration from benchmarks of its own machine (calib/calibrate.h).
 */
#include "cli/args.h"
#include "cli/cli.h"

#include "base/diag.h"
#include "base/outfile.h"
#include "models/catalog.h"
#include "models/engine.h"
#include "calib/benchres.h"
#include "calib/calibrate.h"

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char CALIBRATE_HELP[] =
	"NAME\n"
	"    agentcap calibrate - fit the performance model to benchmarks of your own machine\n"
	"\n"
	"SYNOPSIS\n"
	"    agentcap calibrate RESULT... -o FILE [--hardware ID] [--model ID] [--quant ID]\n"
	"                       [--engine TEXT] [--gpus N] [--catalog DIR] [--engines FILE]\n"
	"                       [--quiet]\n"
	"\n"
	"DESCRIPTION\n"
	"    Reads benchmark results a team can produce in minutes on its own box:\n"
	"      llama-bench -o json, -o jsonl or -o csv;\n"
	"      vllm bench serve --save-result (the result JSON);\n"
	"      python -m sglang.bench_serving --output-file (its JSONL).\n"
	"    The format is recognised by content.  Each result becomes measurement\n"
	"    rows of the calibration set's schema (docs/validation.md): llama-bench\n"
	"    pp and tg tests as prefill_tok_s and decode_tok_s, a serving run as\n"
	"    output_throughput_tok_s, ttft_ms and tpot_ms at its concurrency and\n"
	"    mean lengths.  The parameters of that hardware/model/engine regime are\n"
	"    then fitted with the fitter of agentcap fit-params (serving rows by\n"
	"    simulation); the ones no row moves keep their built-in values.  FILE\n"
	"    holds the fitted parameters, the rows, each row's residual and the\n"
	"    inputs' names and CRC-32s; give it to replay, size, fit, predict and\n"
	"    validate with --calibration FILE.  See docs/calibrate.md.\n"
	"\n"
	"OPTIONS\n"
	"    -o, --output FILE\n"
	"        The calibration file (required; '-' is standard output).\n"
	"    --hardware ID, --model ID, --quant ID\n"
	"        Catalogue ids (aliases count) for what the results do not say:\n"
	"        vllm and SGLang results never name the hardware; llama-bench names\n"
	"        the GPU (gpu_info) and the weight type (model_type), and the model\n"
	"        only through its file name.  Given, they win over the file.\n"
	"    --engine TEXT\n"
	"        The engine as you would describe it (\"vllm 0.10.1\", \"llama.cpp\n"
	"        b6100\"): picks the engine profile (default: the tool's engine).\n"
	"    --gpus N\n"
	"        GPUs of the run (default 1; tensor parallel for vLLM and SGLang,\n"
	"        a layer split for llama.cpp).\n"
	"    --catalog DIR, --engines FILE\n"
	"        Start from this catalogue and engine table instead of the built-in.\n"
	"    --quiet\n"
	"        Do not print the summary.\n"
	"\n"
	"EXIT STATUS\n"
	"    0 success; 2 bad usage, or a result that cannot be read, is not one of\n"
	"    the formats above, names hardware or a model outside the catalogue,\n"
	"    reports an impossible measurement (a throughput outside 0.001 to 1e7\n"
	"    tokens/s, a latency outside 1e-4 to 1e7 ms, tokens beyond the model's\n"
	"    context, ...), holds more than 256 results, or leaves nothing the model\n"
	"    can predict (the message names the file, the line or result, the field\n"
	"    and what was expected); 3 internal error.\n"
	"\n"
	"EXAMPLES\n"
	"    llama-bench -m qwen2.5-7b-instruct-q4_k_m.gguf -o json > lb.json\n"
	"    agentcap calibrate lb.json --model qwen2.5-7b -o my-box.json\n"
	"    agentcap calibrate serve.json --hardware h100-sxm -o my-box.json\n"
	"    agentcap replay team.jsonl.gz --calibration my-box.json\n";

struct calibrate_args {
	const char *out, *catalog, *engines;
	struct benchres_given given;
	bool quiet;
	char **inputs;
	int n_inputs;
};

static int parse_args(int argc, char **argv, struct calibrate_args *a)
{
	enum { O_HW = 1000, O_MODEL, O_QUANT, O_ENGINE, O_GPUS, O_CATALOG, O_ENGINES, O_QUIET,
	       O_HELP };
	static const struct option opts[] = {
		{"output", required_argument, NULL, 'o'},
		{"hardware", required_argument, NULL, O_HW},
		{"model", required_argument, NULL, O_MODEL},
		{"quant", required_argument, NULL, O_QUANT},
		{"engine", required_argument, NULL, O_ENGINE},
		{"gpus", required_argument, NULL, O_GPUS},
		{"catalog", required_argument, NULL, O_CATALOG},
		{"engines", required_argument, NULL, O_ENGINES},
		{"quiet", no_argument, NULL, O_QUIET},
		{"help", no_argument, NULL, O_HELP},
		{NULL, 0, NULL, 0},
	};
	memset(a, 0, sizeof(*a));
	optind = 1;
	opterr = 0;
	int c;
	while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'o': a->out = optarg; break;
		case O_HW: a->given.hardware = optarg; break;
		case O_MODEL: a->given.model = optarg; break;
		case O_QUANT: a->given.quant = optarg; break;
		case O_ENGINE: a->given.engine = optarg; break;
		case O_GPUS: {
			int64_t n;
			if (!args_int(optarg, 1, 1024, &n))
				return args_bad("calibrate", "--gpus", optarg, "a whole number from 1 to "
						"1024");
			a->given.n_gpus = (int)n;
			break;
		}
		case O_CATALOG: a->catalog = optarg; break;
		case O_ENGINES: a->engines = optarg; break;
		case O_QUIET: a->quiet = true; break;
		case 'h':
		case O_HELP:
			fputs(CALIBRATE_HELP, stdout);
			return -1;
		default:
			fprintf(stderr, "agentcap calibrate: unknown or incomplete option '%s' (see "
				"agentcap calibrate --help)\n", argv[optind - 1]);
			return 2;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "agentcap calibrate: expected at least one RESULT file (see "
			"agentcap calibrate --help)\n");
		return 2;
	}
	if (!a->out) {
		fprintf(stderr, "agentcap calibrate: expected -o FILE, where the calibration goes "
			"(see agentcap calibrate --help)\n");
		return 2;
	}
	a->inputs = argv + optind;
	a->n_inputs = argc - optind;
	for (int i = 0; i < a->n_inputs; i++)
		if (args_output_is_input("calibrate", "-o", a->out, a->inputs[i],
					 "one of the results read"))
			return 2;
	return 0;
}

static void print_summary(const struct fitparams_fit *fit, const struct benchres *b,
			  const char *out)
{
	printf("Calibration from %zu benchmark result%s: %zu measurement rows, %zu kept out -> %s\n\n",
	       b->n_inputs, b->n_inputs == 1 ? "" : "s", b->n_rows, b->n_skipped_total, out);
	printf("%-40s %-20s %-8s %5s\n", "input", "kind", "crc32", "rows");
	for (size_t i = 0; i < b->n_inputs; i++)
		printf("%-40s %-20s %08lx %5zu\n", b->inputs[i].path,
		       benchres_kind_name(b->inputs[i].kind), b->inputs[i].crc32, b->inputs[i].rows);
	for (size_t i = 0; i < b->n_skipped; i++)
		printf("kept out: %s\n", b->skipped[i]);
	putchar('\n');
	cli_print_params(fit, "built-in");
	printf("\n%-5s %-24s %-10s %12s %12s %12s %8s\n", "line", "metric", "engine", "measured",
	       "built-in", "fitted", "error");
	for (size_t i = 0; i < fit->n_res; i++) {
		const struct fitparams_residual *r = &fit->res[i];
		printf("%-5ld %-24s %-10s %12.4g %12.4g %12.4g %7.1f%%\n", r->line,
		       validate_metric_name(r->metric), r->engine, r->measured, r->before, r->after,
		       100.0 * (r->after - r->measured) / r->measured);
	}
	printf("\n%zu rows fitted, %zu parameter%s, %zu iterations (%s); median APE %.1f%% "
	       "built-in, %.1f%% fitted\n", fit->n_res, fit->n_params, fit->n_params == 1 ? "" : "s",
	       fit->iterations,
	       fit->stop ? fit->stop : "", fit->median_ape_before, fit->median_ape_after);
}

int cmd_calibrate(int argc, char **argv)
{
	struct calibrate_args a;
	int prc = parse_args(argc, argv, &a);
	if (prc != 0)
		return prc < 0 ? 0 : prc;
	struct diag d;
	diag_init(&d);
	struct catalog *cat = NULL;
	struct engine_table *et = NULL;
	struct benchres b;
	benchres_init(&b);
	struct fitparams_fit fit;
	memset(&fit, 0, sizeof(fit));
	int rc = outfile_check(a.out, &d);
	if (!rc)
		rc = args_models_load(a.catalog, a.engines, &cat, &et, &d);
	if (!rc && !et) {
		et = malloc(sizeof(*et));
		rc = et ? engine_table_load(et, NULL, &d) : diag_set(&d, DIAG_ENOMEM, "out of memory");
	}
	if (!rc && a.given.engine && !engine_match(et, a.given.engine)) {
		char ids[512];
		engine_list_ids(et, ids, sizeof(ids));
		rc = diag_set(&d, DIAG_EINPUT, "--engine '%s' names no engine profile (expected text "
			      "naming one of: %s)", a.given.engine, ids);
	}
	for (int i = 0; i < a.n_inputs && !rc; i++)
		rc = benchres_read(&b, cat, a.inputs[i], &a.given, &d);
	if (!rc)
		rc = calibrate_run(&fit, cat, et, &b, &d);
	if (!rc) {
		struct outfile of;
		rc = outfile_open(&of, a.out, &d);
		if (!rc) {
			struct diag wd;
			diag_init(&wd);
			rc = outfile_finish(&of, calibrate_write_json(of.fp, &fit, &b, et, &wd), &wd,
					    &d);
		}
	}
	if (!rc && !a.quiet && strcmp(a.out, "-") != 0)
		print_summary(&fit, &b, a.out);
	fitparams_fit_release(&fit);
	benchres_release(&b);
	args_models_free(cat, et);
	return rc ? cli_fail(rc, d.msg) : 0;
}
