/* SPDX-License-Identifier: Apache-2.0
 * cmd_fit: `agentcap fit` - which models fit on a machine, which machines
 * can hold a model. */
#include "cli/cli.h"

#include "cli/args.h"

#include "base/diag.h"
#include "base/outfile.h"
#include "models/calfile.h"
#include "models/catalog.h"
#include "models/engine.h"
#include "models/fit.h"
#include "models/uncert.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char FIT_HELP[] =
	"NAME\n"
	"    agentcap fit - which models fit on a machine, which machines hold a model\n"
	"\n"
	"SYNOPSIS\n"
	"    agentcap fit --hardware H [options]\n"
	"    agentcap fit --model M [options]\n"
	"      options: [--engine E] [--format F] [--prefer quality|speed|memory]\n"
	"               [--memory SIZE] [--host-ram SIZE]\n"
	"               [--min-context N] [--context N] [--gpu-memory-utilization U]\n"
	"               [--all] [--json FILE] [--catalog DIR] [--engines FILE] [--calibration FILE]\n"
	"\n"
	"DESCRIPTION\n"
	"    With --hardware, lists every catalogue model that fits on H: the weight\n"
	"    format chosen by --prefer among those that leave KV cache for the minimum\n"
	"    context and that H and the engine can run, the weights, the KV tokens left, the longest context x the sequences the\n"
	"    KV cache holds at it, and predicted single-stream decode and prefill\n"
	"    tokens/s.  A mixture of experts that fits in no format may fit with its\n"
	"    experts in host RAM: the row says so and how much host RAM it needs.\n"
	"    With --model, lists the hardware entries (GPUs and complete systems, whose\n"
	"    GPUs split the model by tensor parallelism) that can hold M, cheapest first\n"
	"    by list price in the currency it was published in (EUR converted only to\n"
	"    sort, at the rate and date printed), then those without a price.  Prices\n"
	"    are for the whole entry; the GPUs column says \"1 of 72\" when a model uses\n"
	"    fewer GPUs than the system has.\n"
	"    Bandwidth and peak rates are the catalogue's datasheet figures (each with\n"
	"    its source in models/catalog/); tokens/s are predictions of the\n"
	"    performance model (docs/performance-model.md), not measurements.\n"
	"\n"
	"OPTIONS\n"
	"    --engine E\n"
	"        Engine profile (vllm, sglang, trtllm, llama.cpp, mlx).  Default: llama.cpp\n"
	"        on unified-memory machines, vllm elsewhere.  It decides the formats tried.\n"
	"    --format F\n"
	"        Try only this weight format.\n"
	"    --prefer quality|speed|memory\n"
	"        Which of the formats that fit to show.  quality (default): the most\n"
	"        nominal bits (fp8 and int8 count as 8), then the faster, then fp8 over\n"
	"        int8; speed: the fastest predicted decode; memory: the fewest bits,\n"
	"        which leaves the most KV cache.  Formats the hardware cannot compute in\n"
	"        are never chosen (NVFP4 needs FP4 tensor cores: Blackwell).\n"
	"    --memory SIZE\n"
	"        Memory per GPU instead of the catalogue's, e.g. 96G (a budget what-if).\n"
	"        The header says so; an entry whose memory it changes is another machine,\n"
	"        so its list price is not shown.\n"
	"    --host-ram SIZE\n"
	"        Host RAM for offloaded experts.  Default: the entry's, else 512G.\n"
	"    --min-context N\n"
	"        KV room a model must have, in tokens.  Default: its context, at most 32768.\n"
	"    --context N\n"
	"        Context of the tokens/s predictions.  Default 4096.\n"
	"    --gpu-memory-utilization U\n"
	"        Share of GPU memory the engine may use.  Default 0.9.\n"
	"    --all\n"
	"        Also list what does not fit, with the reason.\n"
	"    --json FILE\n"
	"        Write the rows as JSON ('-': standard output, no table).\n"
	"    --catalog DIR, --engines FILE\n"
	"        Read the catalogue / engine profiles from files instead of the built-in copy.\n"
	"    --calibration FILE\n"
	"        Lay a calibration file from agentcap calibrate over the built-in\n"
	"        parameters; the output says which calibration it rests on and how far\n"
	"        from a measured point (docs/calibrate.md).\n"
	"\n"
	"EXIT STATUS\n"
	"    0 something fits; 1 nothing fits; 2 bad usage or input, or an output that\n"
	"    cannot be written (the table is still printed when the JSON fails);\n"
	"    3 internal error.\n"
	"\n"
	"EXAMPLES\n"
	"    agentcap fit --hardware dgx-spark\n"
	"    agentcap fit --hardware rtx-pro-6000 --all\n"
	"    agentcap fit --model llama-3.1-70b\n"
	"    agentcap fit --hardware h100-sxm --memory 40G\n"
	"    agentcap fit --hardware h200 --prefer speed\n";

struct fit_args {
	const char *hardware;
	const char *model;
	const char *json;
	const char *catalog;
	const char *engines;
	const char *calibration;
	struct fit_opts o;
};




static int parse_args(int argc, char **argv, struct fit_args *a)
{
	enum { O_HW = 1000, O_MODEL, O_ENGINE, O_FORMAT, O_MEMORY, O_HOSTRAM, O_MINCTX, O_CTX,
	       O_UTIL, O_ALL, O_JSON, O_CATALOG, O_ENGINES, O_CALIBRATION, O_PREFER, O_HELP };
	static const struct option opts[] = {
		{"hardware", required_argument, NULL, O_HW},
		{"model", required_argument, NULL, O_MODEL},
		{"engine", required_argument, NULL, O_ENGINE},
		{"format", required_argument, NULL, O_FORMAT},
		{"memory", required_argument, NULL, O_MEMORY},
		{"host-ram", required_argument, NULL, O_HOSTRAM},
		{"min-context", required_argument, NULL, O_MINCTX},
		{"context", required_argument, NULL, O_CTX},
		{"gpu-memory-utilization", required_argument, NULL, O_UTIL},
		{"all", no_argument, NULL, O_ALL},
		{"json", required_argument, NULL, O_JSON},
		{"catalog", required_argument, NULL, O_CATALOG},
		{"engines", required_argument, NULL, O_ENGINES},
		{"calibration", required_argument, NULL, O_CALIBRATION},
		{"prefer", required_argument, NULL, O_PREFER},
		{"help", no_argument, NULL, O_HELP},
		{NULL, 0, NULL, 0},
	};
	memset(a, 0, sizeof(*a));
	optind = 1;
	opterr = 0;
	int c;
	char *end;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case O_HW: a->hardware = optarg; break;
		case O_MODEL: a->model = optarg; break;
		case O_ENGINE: a->o.engine = optarg; break;
		case O_FORMAT: a->o.weight_format = optarg; break;
		case O_MEMORY:
			if (!args_size_gb(optarg, &a->o.memory_gb))
				return args_bad("fit", "--memory", optarg, "a size such as 96G, 80GB or 512M");
			break;
		case O_HOSTRAM:
			if (!args_size_gb(optarg, &a->o.host_ram_gb))
				return args_bad("fit", "--host-ram", optarg, "a size such as 512G or 1T");
			break;
		case O_MINCTX:
			if (!args_int(optarg, 1, 1000000000, &a->o.min_context))
				return args_bad("fit", "--min-context", optarg, "a whole number of tokens >= 1");
			break;
		case O_CTX:
			if (!args_int(optarg, 1, 100000000, &a->o.context))
				return args_bad("fit", "--context", optarg, "a whole number of tokens >= 1");
			break;
		case O_UTIL:
			errno = 0;
			a->o.gpu_memory_utilization = strtod(optarg, &end);
			if (errno || end == optarg || *end || !(a->o.gpu_memory_utilization > 0 &&
								 a->o.gpu_memory_utilization <= 1))
				return args_bad("fit", "--gpu-memory-utilization", optarg, "a fraction in (0, 1]");
			break;
		case O_PREFER:
			if (!fit_prefer_parse(optarg, &a->o.prefer))
				return args_bad("fit", "--prefer", optarg, "quality, speed or memory");
			break;
		case O_ALL: a->o.all = true; break;
		case O_JSON: a->json = optarg; break;
		case O_CATALOG: a->catalog = optarg; break;
		case O_ENGINES: a->engines = optarg; break;
		case O_CALIBRATION: a->calibration = optarg; break;
		case 'h':
		case O_HELP:
			fputs(FIT_HELP, stdout);
			return -1;
		default:
			fprintf(stderr, "agentcap fit: unknown or incomplete option '%s' (see agentcap fit "
				"--help)\n", argv[optind - 1]);
			return 2;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "agentcap fit: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	if (!a->hardware == !a->model) {
		fprintf(stderr, "agentcap fit: give exactly one of --hardware H or --model M (see "
			"agentcap fit --help)\n");
		return 2;
	}
	return 0;
}

int cmd_fit(int argc, char **argv)
{
	struct fit_args a;
	int prc = parse_args(argc, argv, &a);
	if (prc != 0)
		return prc < 0 ? 0 : prc;
	struct diag d;
	diag_init(&d);
	struct catalog *cat = NULL;
	struct engine_table *et = NULL;
	struct calfile *cal = NULL;
	struct fit_result r;
	memset(&r, 0, sizeof(r));
	int rc = a.json ? outfile_check(a.json, &d) : 0;
	if (rc == 0)
		rc = args_models_load(a.catalog, a.engines, &cat, &et, &d);
	if (rc == 0)
		rc = args_calibration(a.calibration, cat, &et, &cal, &d);
	a.o.engines = et;
	struct uncert_table bands;
	uncert_init(&bands);
	if (rc == 0)
		rc = uncert_load(&bands, NULL, &d);
	a.o.bands = &bands;
	if (rc == 0)
		rc = a.hardware ? fit_hardware(&r, cat, a.hardware, &a.o, &d)
				: fit_model(&r, cat, a.model, &a.o, &d);
	bool json_stdout = a.json && strcmp(a.json, "-") == 0;
	int wrc = 0; /* the JSON's; the table is printed even when it fails */
	if (rc == 0 && a.json) {
		struct outfile of;
		wrc = outfile_open(&of, a.json, &d);
		if (wrc == 0) {
			struct diag wd;
			diag_init(&wd);
			wrc = outfile_finish(&of, fit_write_json(of.fp, &r, &wd), &wd, &d);
		}
	}
	if (rc == 0 && !json_stdout)
		rc = fit_write_text(stdout, &r, &d);
	if (wrc != 0)
		rc = wrc;
	size_t n_fit = r.n_fit;
	fit_result_release(&r);
	uncert_release(&bands);
	args_models_free(cat, et);
	calfile_free(cal);
	if (rc != 0)
		return cli_fail(rc, d.msg);
	return n_fit > 0 ? 0 : 1;
}
