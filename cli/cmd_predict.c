/* SPDX-License-Identifier: Apache-2.0
 * cmd_predict: `agentcap predict` - step time and throughput of one
 * hardware/model/format combination at a batch and context. */
#include "cli/cli.h"

#include "cli/args.h"

#include "base/diag.h"
#include "base/outfile.h"
#include "models/calfile.h"
#include "models/catalog.h"
#include "models/engine.h"
#include "models/memory.h"
#include "models/perf_model.h"
#include "models/predict.h"
#include "models/profile.h"
#include "models/uncert.h"

#include <getopt.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char PREDICT_HELP[] =
	"NAME\n"
	"    agentcap predict - step time and throughput of one model on one machine\n"
	"\n"
	"SYNOPSIS\n"
	"    agentcap predict --hardware H --model M [--format F] [--kv-dtype K]\n"
	"                     [--engine E] [--tp N] [--pp N] [--batch B] [--context C]\n"
	"                     [--chunk N] [--gpu-expert-fraction F] [--host-bw GBS]\n"
	"                     [--host-tflops T] [--memory SIZE] [--profile CSV]\n"
	"                     [--ep N] [--power-limit W] [--no-flash-attention] [--engine-build N] [--catalog DIR] [--engines FILE] [--calibration FILE] [--json FILE]\n"
	"                     [--explain]\n"
	"\n"
	"DESCRIPTION\n"
	"    Evaluates the step-latency model (docs/performance-model.md) for one\n"
	"    decode step of B sequences that each hold C tokens of context, and for\n"
	"    the prefill of a C-token prompt in chunks of N tokens.  Prints the step\n"
	"    time, decode tokens/s per sequence and in aggregate, prefill tokens/s,\n"
	"    which bound won (compute, memory, overhead, interconnect, host, launch), the\n"
	"    achieved fractions of peak FLOP/s and bandwidth, and whether B x C\n"
	"    tokens fit in the KV cache the memory model leaves.  Each throughput\n"
	"    carries an 80% band: the range the measured value fell in for 80% of\n"
	"    the calibration rows of its regime (hardware family x engine x metric),\n"
	"    each predicted with parameters fitted without its family\n"
	"    (models/calibration/uncertainty.json; docs/validation.md).  Decode at\n"
	"    batch 1 takes the errors of single-stream decode rows, at larger\n"
	"    batches those of serving throughput rows.  No band with --profile.\n"
	"\n"
	"OPTIONS\n"
	"    --hardware H, --model M\n"
	"        Catalogue ids or aliases (agentcap catalog lists them).  Required.\n"
	"    --format F\n"
	"        Weight format id (bf16, fp8, int4-awq, gguf-q4-k-m, ...).  Default bf16.\n"
	"    --kv-dtype K\n"
	"        KV-cache dtype (bf16, fp8, ...).  Default bf16.\n"
	"    --engine E\n"
	"        Engine profile: vllm (default), sglang, trtllm, llama.cpp, mlx, ...\n"
	"    --tp N, --pp N\n"
	"        Tensor- and pipeline-parallel GPUs.  Default 1 and 1.\n"
	"    --ep N\n"
	"        Expert parallelism for a mixture of experts: N = --tp spreads whole\n"
	"        experts over the GPUs (all-to-all dispatch and combine, the busiest\n"
	"        GPU's load sets the pace).  Default 1 (experts split by --tp).\n"
	"    --power-limit W\n"
	"        Board power limit per GPU in watts (a capped or Max-Q board): the core\n"
	"        clock, and with it every compute rate and the GPU's fixed costs, drops\n"
	"        to what the limit allows; memory bandwidth does not.  Default: the\n"
	"        catalogue entry's power_limit_w, else none.\n"
	"    --no-flash-attention\n"
	"        Attention without flash attention (llama.cpp -fa 0, and its builds\n"
	"        before 2024-04-30): the engine's attention_scale_without_fa where its\n"
	"        profile has one; other engines are unchanged.\n"
	"    --engine-build N\n"
	"        The engine's build number, for the costs of older builds: llama.cpp\n"
	"        builds up to 6210 (before pull 15525) route each batched MoE step's\n"
	"        tokens on the host, a cost per token no GPU shortens.  Default: a\n"
	"        current build.\n"
	"    --batch B\n"
	"        Sequences decoding together.  With --pp N above 1 the same sequences\n"
	"        are also shown as micro-batches in flight across the stages.  Default 1.\n"
	"    --context C\n"
	"        Tokens of context each sequence holds; also the prompt prefilled.\n"
	"        Default 1024.\n"
	"    --chunk N\n"
	"        Prefill chunk (max_num_batched_tokens).  Default: the engine's.\n"
	"    --gpu-expert-fraction F\n"
	"        Share of a mixture of experts' routed experts kept on the GPUs; the\n"
	"        rest are in host RAM, streamed or run on the CPU each step.  Default 1.\n"
	"    --host-bw GBS, --host-tflops T\n"
	"        Host RAM bandwidth and CPU peak for offloaded experts.\n"
	;

static const char PREDICT_HELP_TAIL[] =
	"    --memory SIZE\n"
	"        Memory per GPU for the KV check instead of the catalogue's, e.g. 96G.\n"
	"    --profile CSV\n"
	"        Measured step profile overriding the model (docs/performance-model.md).\n"
	"    --catalog DIR, --engines FILE\n"
	"        Read the catalogue / engine profiles from files instead of the built-in copy.\n"
	"    --calibration FILE  agentcap calibrate's file\n"
	"    --json FILE\n"
	"        Write the figures as JSON to FILE ('-': standard output, no text).\n"
	"    --explain\n"
	"        Also print the decode step and the first prefill chunk term by term\n"
	"        (roofline, kernel launches, collectives, imbalance, fixed GPU cost,\n"
	"        host), with the binding term marked '*' (docs/performance-model.md,\n"
	"        step floors).\n"
	"\n"
	"EXIT STATUS\n"
	"    0 batch x (context + 1) tokens fit in the KV cache; 1 the answer is no:\n"
	"    they do not fit, or the weights alone do not fit (the figures are still\n"
	"    printed); 2 bad usage or input, or an output that cannot be written (the\n"
	"    table is still printed when the JSON fails); 3 internal error.\n"
	"\n"
	"EXAMPLES\n"
	"    agentcap predict --hardware h100-sxm --model llama-3.1-8b --batch 32 --context 8192\n"
	"    agentcap predict --hardware h100-sxm --model deepseek-v3 --format int4-awq --tp 8 \\\n"
	"                     --explain\n"
	"    agentcap predict --hardware rtx-pro-6000 --model gpt-oss-120b --format mxfp4 \\\n"
	"                     --engine llama.cpp --context 512\n";

struct predict_args {
	struct perf_opts po;
	int32_t batch;
	int64_t context;
	int64_t chunk;
	double memory_gb;
	const char *profile;
	const char *catalog;
	const char *engines;
	const char *calibration;
	const char *json;
	bool explain;
};




static int parse_args(int argc, char **argv, struct predict_args *a)
{
	enum { O_HW = 1000, O_MODEL, O_FORMAT, O_KV, O_ENGINE, O_TP, O_PP, O_BATCH, O_CONTEXT,
	       O_CHUNK, O_FRAC, O_HOSTBW, O_HOSTTF, O_MEMORY, O_PROFILE, O_CATALOG, O_ENGINES, O_CALIBRATION,
	       O_JSON, O_HELP, O_EP, O_EXPLAIN, O_POWER, O_NOFA, O_BUILD };
	static const struct option opts[] = {
		{"hardware", required_argument, NULL, O_HW},
		{"model", required_argument, NULL, O_MODEL},
		{"format", required_argument, NULL, O_FORMAT},
		{"kv-dtype", required_argument, NULL, O_KV},
		{"engine", required_argument, NULL, O_ENGINE},
		{"tp", required_argument, NULL, O_TP},
		{"pp", required_argument, NULL, O_PP},
		{"batch", required_argument, NULL, O_BATCH},
		{"context", required_argument, NULL, O_CONTEXT},
		{"chunk", required_argument, NULL, O_CHUNK},
		{"gpu-expert-fraction", required_argument, NULL, O_FRAC},
		{"host-bw", required_argument, NULL, O_HOSTBW},
		{"host-tflops", required_argument, NULL, O_HOSTTF},
		{"memory", required_argument, NULL, O_MEMORY},
		{"profile", required_argument, NULL, O_PROFILE},
		{"catalog", required_argument, NULL, O_CATALOG},
		{"engines", required_argument, NULL, O_ENGINES},
		{"calibration", required_argument, NULL, O_CALIBRATION},
		{"json", required_argument, NULL, O_JSON},
		{"ep", required_argument, NULL, O_EP},
		{"explain", no_argument, NULL, O_EXPLAIN},
		{"power-limit", required_argument, NULL, O_POWER},
		{"no-flash-attention", no_argument, NULL, O_NOFA},
		{"engine-build", required_argument, NULL, O_BUILD},
		{"help", no_argument, NULL, O_HELP},
		{NULL, 0, NULL, 0},
	};
	memset(a, 0, sizeof(*a));
	perf_opts_init(&a->po);
	a->po.allow_unknown_compute = true;
	a->batch = 1;
	a->context = 1024;
	a->chunk = 0; /* the engine's, once it is known */
	optind = 1;
	opterr = 0;
	int c;
	double v;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case O_HW: a->po.hardware = optarg; break;
		case O_MODEL: a->po.model = optarg; break;
		case O_FORMAT: a->po.weight_format = optarg; break;
		case O_KV: a->po.kv_dtype = optarg; break;
		case O_ENGINE: a->po.engine = optarg; break;
		case O_TP:
		case O_PP:
			if (!args_number(optarg, 1, 1024, true, &v))
				return args_bad("predict", c == O_TP ? "--tp" : "--pp", optarg, "a whole number from 1 to 1024");
			*(c == O_TP ? &a->po.tp : &a->po.pp) = (int)v;
			break;
		case O_EP:
			if (!args_number(optarg, 1, 1024, true, &v))
				return args_bad("predict", "--ep", optarg, "a whole number from 1 to 1024");
			a->po.ep = (int)v;
			break;
		case O_EXPLAIN: a->explain = true; break;
		case O_NOFA:
			a->po.no_flash_attention = true;
			break;
		case O_BUILD:
			if (!args_number(optarg, 1, 1e7, true, &v))
				return args_bad("predict", "--engine-build", optarg,
						"a whole number from 1 to 10000000");
			a->po.engine_build = (int64_t)v;
			break;
		case O_POWER:
			if (!args_number(optarg, 1, 1e5, false, &a->po.power_limit_w))
				return args_bad("predict", "--power-limit", optarg,
						"watts from 1 to 100000");
			break;
		case O_BATCH:
			if (!args_number(optarg, 1, 1 << 20, true, &v))
				return args_bad("predict", "--batch", optarg, "a whole number from 1 to 1048576");
			a->batch = (int32_t)v;
			break;
		case O_CONTEXT:
		case O_CHUNK:
			if (!args_number(optarg, 1, 1073741824.0, true, &v))
				return args_bad("predict", c == O_CONTEXT ? "--context" : "--chunk", optarg,
					   "a whole number of tokens from 1 to 2^30");
			*(c == O_CONTEXT ? &a->context : &a->chunk) = (int64_t)v;
			break;
		case O_FRAC:
			if (!args_number(optarg, 0, 1, false, &a->po.gpu_expert_fraction))
				return args_bad("predict", "--gpu-expert-fraction", optarg, "a fraction in [0, 1]");
			break;
		case O_HOSTBW:
			if (!args_number(optarg, 1e-3, 1e6, false, &a->po.host.mem_bw_gbs))
				return args_bad("predict", "--host-bw", optarg, "GB/s, a positive number");
			break;
		case O_HOSTTF:
			if (!args_number(optarg, 1e-3, 1e6, false, &a->po.host.tflops))
				return args_bad("predict", "--host-tflops", optarg, "TFLOPS, a positive number");
			break;
		case O_MEMORY:
			if (!args_size_gb(optarg, &a->memory_gb))
				return args_bad("predict", "--memory", optarg, "a size such as 96G, 80GB or 512M");
			break;
		case O_PROFILE: a->profile = optarg; break;
		case O_CATALOG: a->catalog = optarg; break;
		case O_ENGINES: a->engines = optarg; break;
		case O_CALIBRATION: a->calibration = optarg; break;
		case O_JSON: a->json = optarg; break;
		case 'h':
		case O_HELP:
			fputs(PREDICT_HELP, stdout);
			fputs(PREDICT_HELP_TAIL, stdout);
			return -1;
		default:
			fprintf(stderr, "agentcap predict: unknown or incomplete option '%s' (see agentcap "
				"predict --help)\n", argv[optind - 1]);
			return 2;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "agentcap predict: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	if (!a->po.hardware || !a->po.model) {
		fprintf(stderr, "agentcap predict: --hardware and --model are required (see agentcap "
			"predict --help)\n");
		return 2;
	}
	return 0;
}

int cmd_predict(int argc, char **argv)
{
	struct predict_args a;
	int prc = parse_args(argc, argv, &a);
	if (prc != 0)
		return prc < 0 ? 0 : prc;
	struct diag d;
	diag_init(&d);
	struct catalog *cat = NULL;
	struct engine_table *et = NULL;
	struct calfile *cal = NULL;
	struct perf_profile *prof = NULL;
	struct perf_model pm;
	struct predict_result r;
	struct mem_plan plan;
	bool have_plan = false;
	int rc = a.json ? outfile_check(a.json, &d) : 0;
	if (rc == 0)
		rc = args_models_load(a.catalog, a.engines, &cat, &et, &d);
	if (rc == 0)
		rc = args_calibration(a.calibration, cat, &et, &cal, &d);
	a.po.engines = et;
	if (rc == 0)
		rc = perf_model_init_opts(&pm, cat, &a.po, &d);
	if (rc == 0 && a.profile) {
		rc = perf_profile_load(&prof, a.profile, &pm, &d);
		perf_model_set_profile(&pm, prof);
	}
	if (rc == 0 && a.chunk == 0)
		a.chunk = engine_default_chunk(&pm.engine, catalog_hardware(cat, a.po.hardware));
	if (rc == 0)
		rc = predict_run(&r, &pm, a.batch, a.context, a.chunk, &d);
	/* error bars of the analytic model; a measured profile replaces it */
	struct uncert_table bands;
	uncert_init(&bands);
	if (rc == 0 && !a.profile) {
		rc = uncert_load(&bands, NULL, &d);
		if (rc == 0) {
			predict_set_bands(&r, &pm, &bands);
			const struct cat_hardware *hw = catalog_hardware(cat, pm.hardware_id);
			predict_widen_bands(&r, &pm, hw ? catalog_package_kind(hw) : NULL,
					    hw ? catalog_memory_kind(hw) : NULL);
		}
	}
	if (rc == 0 && cal) {
		r.calibration = cal;
		r.regime = (struct calfile_regime){ .hardware = pm.hardware_id, .model = pm.model_id,
						    .engine = pm.engine_id, .batch = a.batch,
						    .context = (double)a.context };
		calfile_nearest(cal, cat, &r.regime, &r.near);
	}
	if (rc == 0) {
		struct mem_opts mo;
		mem_opts_init(&mo);
		mo.hardware = a.po.hardware;
		mo.model = a.po.model;
		mo.weight_format = a.po.weight_format;
		mo.kv_dtype = a.po.kv_dtype;
		mo.tp = a.po.tp;
		mo.pp = a.po.pp;
		mo.gpu_expert_fraction = a.po.gpu_expert_fraction;
		mo.device_memory_gb = a.memory_gb;
		mo.max_num_batched_tokens = a.chunk;
		mo.mla_expanded = pm.mla_expanded;
		const struct cat_hardware *mhw = catalog_hardware(cat, a.po.hardware);
		if (mhw)
			mem_engine_of(&mo.engine, &pm.engine,
				      engine_default_max_num_seqs(&pm.engine, mhw));
		struct diag md;
		diag_init(&md);
		have_plan = mem_plan_opts(&plan, cat, &mo, &md) == 0;
		if (!have_plan && !(a.json && strcmp(a.json, "-") == 0))
			printf("note: %s\n", md.msg);
	}
	int wrc = 0; /* the JSON's; the table is printed even when it fails */
	if (rc == 0 && a.json) {
		struct outfile of;
		wrc = outfile_open(&of, a.json, &d);
		if (wrc == 0) {
			struct diag wd;
			diag_init(&wd);
			wrc = outfile_finish(&of, predict_write_json(of.fp, &pm, &r,
								     have_plan ? &plan : NULL, &wd),
					     &wd, &d);
		}
	}
	if (rc == 0 && !(a.json && strcmp(a.json, "-") == 0))
		rc = predict_write_text(stdout, &pm, &r, have_plan ? &plan : NULL, &d);
	if (rc == 0 && a.explain && !(a.json && strcmp(a.json, "-") == 0)) {
		rc = predict_write_explain(stdout, &pm, &r.decode, "decode step", &d);
		if (rc == 0)
			rc = predict_write_explain(stdout, &pm, &r.prefill, "first prefill chunk", &d);
	}
	if (wrc != 0)
		rc = wrc;
	uncert_release(&bands);
	perf_profile_free(prof);
	args_models_free(cat, et);
	calfile_free(cal);
	if (rc != 0)
		return cli_fail(rc, d.msg);
	if (!have_plan || !predict_fits(&r, &plan)) {
		fprintf(stderr, "agentcap predict: the answer is no (exit status 1): batch %d x "
			"context %lld does not fit in memory\n", (int)a.batch, (long long)a.context);
		return 1;
	}
	return 0;
}
