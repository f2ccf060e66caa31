/* SPDX-License-Identifier: Apache-2.0
 * predict: decode and prefill figures of one combination (see predict.h). */
#include "models/predict.h"

#include <math.h>
#include <stdbool.h>
#include <string.h>

int predict_run(struct predict_result *r, const struct perf_model *pm, int32_t batch,
		int64_t context, int64_t chunk, struct diag *d)
{
	memset(r, 0, sizeof(*r));
	if (batch < 1 || batch > (1 << 20))
		return diag_set(d, DIAG_EINPUT, "batch %d: expected 1 to 1048576 sequences", batch);
	if (context < 1 || context > ((int64_t)1 << 30))
		return diag_set(d, DIAG_EINPUT, "context %lld: expected 1 to 2^30 tokens",
				(long long)context);
	if (chunk < 1 || chunk > ((int64_t)1 << 30))
		return diag_set(d, DIAG_EINPUT, "chunk %lld: expected 1 to 2^30 tokens",
				(long long)chunk);
	r->batch = batch;
	r->context = context;
	r->chunk = chunk;
	struct perf_batch b = perf_decode_batch(batch, context);
	perf_step_breakdown(pm, &b, &r->decode);
	r->decode_step_ms = r->decode.step_ns / 1e6;
	r->decode_tok_s_per_seq = 1e9 / r->decode.step_ns;
	r->decode_tok_s = batch * r->decode_tok_s_per_seq;
	if (pm->pp > 1)
		pipeline_decode_step(pm, batch, context, &r->pipeline);
	struct perf_batch p = perf_prefill_batch(context < chunk ? context : chunk, 0);
	perf_step_breakdown(pm, &p, &r->prefill);
	double ns = perf_prefill_ns(pm, context, 0, chunk);
	r->prefill_ms = pm->compute_unknown ? NAN : ns / 1e6;
	r->prefill_tok_s = pm->compute_unknown ? NAN : (double)context / (ns * 1e-9);
	return 0;
}

static int io_check(FILE *out, struct diag *d)
{
	if (ferror(out))
		return diag_set(d, DIAG_EIO, "cannot write the prediction");
	return 0;
}

static void describe(FILE *out, const struct perf_breakdown *br)
{
	fprintf(out, "      overhead %.3f ms, compute-bound ops %.3f ms, memory-bound ops %.3f ms",
		br->overhead_ns / 1e6, br->compute_bound_ns / 1e6, br->memory_bound_ns / 1e6);
	if (br->comm_ns > 0)
		fprintf(out, ", interconnect %.3f ms", br->comm_ns / 1e6);
	if (br->offload != OFFLOAD_NONE)
		fprintf(out, ", host experts (%s) %.3f ms", offload_choice_name(br->offload),
			br->host_ns / 1e6);
	fprintf(out, "\n      achieved %.1f%% of peak FLOP/s, %.1f%% of peak bandwidth\n",
		100 * br->flops_fraction, 100 * br->bw_fraction);
}

/* The decode batch as micro-batches in flight (models/pipeline.h). */
static void write_pipeline(FILE *out, const struct pipeline_step *p)
{
	fprintf(out, "  decode pipelined, %d micro-batch%s of %d in flight over %d stages:\n",
		p->micro_batches, p->micro_batches == 1 ? "" : "es", (int)p->micro_seqs, p->stages);
	fprintf(out, "    round trip      %10.3f ms   one micro-batch through every stage, "
		"hand-offs %.3f ms, host %.3f ms\n", p->round_ns / 1e6, p->handoff_ns / 1e6,
		p->host_ns / 1e6);
	fprintf(out, "    busiest stage   %10.3f ms   per micro-batch (lm-head %.3f ms on the last)\n",
		p->stage_ns / 1e6, p->head_ns / 1e6);
	fprintf(out, "    cycle           %10.3f ms   max(round trip, %d x stage, %d x host); "
		"bubble %.1f%%\n", p->cycle_ns / 1e6, p->micro_batches, p->micro_batches,
		100 * p->bubble);
	fprintf(out, "    per sequence    %10.1f tok/s\n", p->tok_s_per_seq);
	fprintf(out, "    aggregate       %10.1f tok/s\n", p->tok_s);
}

void predict_set_bands(struct predict_result *r, const struct perf_model *pm,
		       const struct uncert_table *t)
{
	r->bands = t;
	r->decode_band_metric = r->batch > 1 ? "output_throughput_tok_s" : "decode_tok_s";
	r->decode_band = uncert_lookup(t, pm->family_id, pm->engine_id, r->decode_band_metric);
	r->prefill_band = uncert_lookup(t, pm->family_id, pm->engine_id, "prefill_tok_s");
}

void predict_widen_bands(struct predict_result *r, const struct perf_model *pm,
			 const char *package, const char *memory)
{
	if (!r->bands)
		return;
	struct uncert_point pt = { package, memory, pm->weight_format_id, pm->engine_id };
	if (r->decode_band.regime)
		uncert_widen(r->bands, &pt, &r->decode_band, r->extrapolation,
			     sizeof(r->extrapolation));
	if (r->prefill_band.regime)
		uncert_widen(r->bands, &pt, &r->prefill_band, r->extrapolation,
			     sizeof(r->extrapolation));
}

/* "    80% band        +-21.8%   140.1 to 206.5 tok/s (errors of REGIME, n rows)" */
static void write_band(FILE *out, const struct uncert_band *b, const struct uncert_table *t,
		       double tok_s)
{
	if (!b->regime)
		return;
	char name[3 * UNCERT_ID_MAX + 16];
	fprintf(out, "    %.0f%% band        +-%.1f%%   %.1f to %.1f tok/s (errors of %s, %zu rows)\n",
		100 * t->coverage, b->pct, tok_s * b->low_factor, tok_s * b->high_factor,
		uncert_regime_name(b->regime, name, sizeof(name)), b->regime->n);
}

int predict_write_text(FILE *out, const struct perf_model *pm, const struct predict_result *r,
		       const struct mem_plan *plan, struct diag *d)
{
	fprintf(out, "%s in %s (KV %s) on %s, engine %s, tp %d, pp %d\n", pm->model_id,
		pm->weight_format_id, pm->kv_dtype_id, pm->hardware_id, pm->engine_id, pm->tp,
		pm->pp);
	if (pm->die_factor < 1)
		fprintf(out, "  a package of several dies: %.1f%% of the bandwidth its dies reach "
			"alone, for the reads that cross the die link (die_remote_penalty of %s)\n",
			100 * pm->die_factor, pm->die_penalty_family);
	if (pm->vector_fallback)
		fprintf(out, "  (no tensor-core rate published: matmuls at the FP32 vector rate%s)\n",
			pm->rate_estimated ? ", estimated from the family's rate per GPU core" : "");
	if (pm->power_limit_w > 0)
		fprintf(out, "  board power limit %.0f W: core clock %.1f%% of rated (compute rates and "
			"the GPU's fixed costs follow it, bandwidth does not)\n", pm->power_limit_w,
			100 * pm->clock_fraction);
	if (pm->issue_bound_matmul)
		fprintf(out, "  issue-bound quantized matmuls: %.1f%% of the engine's rate per clock "
			"(eff_issue), %.1f%% of the rated clock held (sm_w_at_1ghz)\n",
			100 * pm->eff_issue, 100 * pm->sustained_clock);
	if (pm->compute_unknown)
		fprintf(out, "  (the catalogue has no compute figure for %s: compute terms are 0, so "
			"only the bandwidth-bound decode figures mean anything)\n", pm->hardware_id);
	if (pm->gpu_expert_fraction < 1)
		fprintf(out, "  experts on the GPUs: %.1f%% (the rest in host RAM)\n",
			100 * pm->gpu_expert_fraction);
	fprintf(out, "  decode, batch %d at context %lld:\n", r->batch, (long long)r->context);
	fprintf(out, "    step            %10.3f ms   (%s bound)\n", r->decode_step_ms,
		perf_bound_name(r->decode.bound));
	fprintf(out, "    per sequence    %10.1f tok/s\n", r->decode_tok_s_per_seq);
	fprintf(out, "    aggregate       %10.1f tok/s\n", r->decode_tok_s);
	write_band(out, &r->decode_band, r->bands, r->decode_tok_s);
	describe(out, &r->decode);
	if (pm->experts > 0)
		fprintf(out, "      experts touched per MoE layer: %.1f of %.0f\n",
			r->decode.experts_touched, pm->experts);
	if (r->pipeline.stages > 1)
		write_pipeline(out, &r->pipeline);
	fprintf(out, "  prefill, %lld tokens in chunks of %lld:\n", (long long)r->context,
		(long long)r->chunk);
	fprintf(out, "    time            %10.3f ms   (first chunk %s bound)\n", r->prefill_ms,
		perf_bound_name(r->prefill.bound));
	fprintf(out, "    throughput      %10.1f tok/s\n", r->prefill_tok_s);
	write_band(out, &r->prefill_band, r->bands, r->prefill_tok_s);
	describe(out, &r->prefill);
	if (r->extrapolation[0])
		fprintf(out, "  the calibration set has no row of: %s (bands widened for it)\n",
			r->extrapolation);
	if (plan)
		fprintf(out, "  memory: %.1f GB of weights per GPU, KV cache for %lld tokens: "
			"batch x context %s\n", plan->weights_bytes / 1e9,
			(long long)plan->kv_capacity_tokens,
			predict_fits(r, plan) ? "fits" : "does NOT fit");
	if (r->calibration) {
		const char *label = "this prediction";
		calfile_write_text(out, r->calibration, &label, &r->regime, &r->near, 1);
	}
	return io_check(out, d);
}

int predict_write_explain(FILE *out, const struct perf_model *pm, const struct perf_breakdown *br,
			  const char *what, struct diag *d)
{
	const struct floors *f = &pm->floors;
	double gpu_core = fmax(br->ops_ns, br->launch_ns);
	/* the additive terms of the step; the largest binds */
	struct {
		const char *name;
		double ns;
	} terms[] = {
		{ br->floor_binds ? "kernel launches" : "roofline", gpu_core },
		{ "collectives", br->comm_ns },
		{ "fixed GPU", br->gpu_fixed_ns },
		{ "host", br->host_step_ns },
	};
	size_t best = 0;
	for (size_t i = 1; i < 3; i++)
		if (terms[i].ns > terms[best].ns)
			best = i;
	/* the host binds when it is the largest added term, or, overlapped,
	 * when it outlasts the GPU */
	if (br->host_overlap ? br->host_step_ns >= br->step_ns
			     : br->host_step_ns > terms[best].ns)
		best = 3;
	fprintf(out, "  %s, term by term (gpu = fixed + max(roofline, kernel launches) + "
		"collectives; step = %s):\n", what,
		br->host_overlap ? "max(host, gpu): the host overlaps" : "host + gpu");
	fprintf(out, "   %c roofline        %9.3f ms   weights %.3f, KV %.3f, compute-bound ops "
		"%.3f ms (each operation's larger side, summed)\n",
		best == 0 && !br->floor_binds ? '*' : ' ', br->ops_ns / 1e6, br->weights_ns / 1e6,
		br->kv_ns / 1e6, br->compute_bound_ns / 1e6);
	if (br->kernels > 0 && (f->kernel_graph_ns > 0 || f->kernel_eager_ns > 0)) {
		fprintf(out, "   %c kernel launches %9.3f ms   %.0f GEMM-class + %.0f small kernels",
			best == 0 && br->floor_binds ? '*' : ' ', br->launch_ns / 1e6,
			f->gemm_kernels, f->small_kernels);
		if (f->expert_kernels > 0)
			fprintf(out, " + %.0f per-expert kernels (%.0f x %.0f experts; %.1f of "
				"them with tokens)", f->expert_gemm_layers * f->expert_kernels,
				f->expert_gemm_layers, f->expert_kernels,
				fmin(br->experts_touched / (double)f->ep, f->expert_kernels));
		if (br->graphed && f->piecewise_ns > 0)
			fprintf(out, ", inside piecewise CUDA graphs (+ %.0f attention layers run "
				"eagerly between the pieces, %.0f us each: %.3f ms)%s\n",
				f->attn_layers, f->piecewise_ns / 1e3,
				f->attn_layers * f->piecewise_ns / 1e6,
				br->floor_binds ? " (above the roofline: it sets the GPU time)" : "");
		else
			fprintf(out, ", %s%s\n",
				br->graphed ? "inside a CUDA graph" : "launched one by one",
				br->floor_binds ? " (above the roofline: it sets the GPU time)" : "");
	}
	else
		fprintf(out, "     kernel launches       -      the engine has no kernel floor "
			"(its per-layer costs are in fixed GPU)\n");
	fprintf(out, "   %c collectives     %9.3f ms   %s", best == 1 ? '*' : ' ',
		br->comm_ns / 1e6, pm->tp > 1 ? "all-reduces over the tensor-parallel GPUs" :
		pm->pp > 1 ? "pipeline hand-offs" : "none (one GPU)");
	if (br->alltoall_ns > 0)
		fprintf(out, ", of which expert all-to-alls %.3f ms", br->alltoall_ns / 1e6);
	fputc('\n', out);
	if (pm->experts > 0)
		fprintf(out, "     imbalance       %9.2fx     busiest GPU's expert load over the mean "
			"(%s)\n", br->imbalance,
			pm->ep > 1 ? "expert parallelism" : "1: experts split by tensor parallelism");
	fprintf(out, "   %c fixed GPU       %9.3f ms   the family's per-step cost and the engine's "
		"per-layer gaps\n", best == 2 ? '*' : ' ', br->gpu_fixed_ns / 1e6);
	fprintf(out, "   %c host            %9.3f ms   the engine's scheduler and input preparation\n",
		best == 3 ? '*' : ' ', br->host_step_ns / 1e6);
	if (br->host_ns > 0)
		fprintf(out, "     host experts    %9.3f ms   offloaded experts (%s), in the roofline\n",
			br->host_ns / 1e6, offload_choice_name(br->offload));
	if (br->host_routing_ns > 0)
		fprintf(out, "     host routing    %9.3f ms   the build routes the experts' tokens on the "
			"host (llama.cpp before pull 15525), in the GPU time\n",
			br->host_routing_ns / 1e6);
	fprintf(out, "     step            %9.3f ms   binding: %s (%.0f%% of the step)\n",
		br->step_ns / 1e6, terms[best].name,
		br->step_ns > 0 ? 100 * terms[best].ns / br->step_ns : 0);
	return io_check(out, d);
}

bool predict_fits(const struct predict_result *r, const struct mem_plan *plan)
{
	return (double)r->batch * (double)(r->context + 1) <= (double)plan->kv_capacity_tokens;
}

static void jnum(FILE *out, const char *key, double v, bool last)
{
	if (isfinite(v))
		fprintf(out, "  \"%s\": %.10g%s\n", key, v, last ? "" : ",");
	else
		fprintf(out, "  \"%s\": null%s\n", key, last ? "" : ",");
}

static void jstr(FILE *out, const char *key, const char *v)
{
	fprintf(out, "  \"%s\": \"%s\",\n", key, v); /* ids: no characters to escape */
}

int predict_write_json(FILE *out, const struct perf_model *pm, const struct predict_result *r,
		       const struct mem_plan *plan, struct diag *d)
{
	fputs("{\n", out);
	jnum(out, "schema_version", 1, false);
	jstr(out, "hardware", pm->hardware_id);
	jstr(out, "model", pm->model_id);
	jstr(out, "weight_format", pm->weight_format_id);
	jstr(out, "kv_dtype", pm->kv_dtype_id);
	jstr(out, "engine", pm->engine_id);
	jnum(out, "tp", pm->tp, false);
	jnum(out, "pp", pm->pp, false);
	jnum(out, "gpu_expert_fraction", pm->gpu_expert_fraction, false);
	jnum(out, "power_limit_w", pm->power_limit_w, false);
	jnum(out, "clock_fraction", pm->clock_fraction, false);
	jnum(out, "sustained_clock", pm->sustained_clock, false);
	jnum(out, "eff_issue", pm->eff_issue, false);
	jnum(out, "batch", r->batch, false);
	jnum(out, "context", (double)r->context, false);
	jnum(out, "chunk", (double)r->chunk, false);
	jnum(out, "decode_step_ms", r->decode_step_ms, false);
	jnum(out, "decode_tok_s_per_seq", r->decode_tok_s_per_seq, false);
	jnum(out, "decode_tok_s", r->decode_tok_s, false);
	jstr(out, "decode_bound", perf_bound_name(r->decode.bound));
	jnum(out, "decode_overhead_ms", r->decode.overhead_ns / 1e6, false);
	jnum(out, "decode_compute_bound_ms", r->decode.compute_bound_ns / 1e6, false);
	jnum(out, "decode_memory_bound_ms", r->decode.memory_bound_ns / 1e6, false);
	jnum(out, "decode_interconnect_ms", r->decode.comm_ns / 1e6, false);
	jnum(out, "decode_host_ms", r->decode.host_ns / 1e6, false);
	jnum(out, "decode_roofline_ms", r->decode.ops_ns / 1e6, false);
	jnum(out, "decode_launch_floor_ms", r->decode.launch_ns / 1e6, false);
	jnum(out, "decode_alltoall_ms", r->decode.alltoall_ns / 1e6, false);
	jnum(out, "decode_imbalance", r->decode.imbalance, false);
	jnum(out, "decode_engine_host_ms", r->decode.host_step_ns / 1e6, false);
	jstr(out, "decode_offload", offload_choice_name(r->decode.offload));
	jnum(out, "decode_experts_touched", r->decode.experts_touched, false);
	jnum(out, "decode_flops_fraction", r->decode.flops_fraction, false);
	jnum(out, "decode_bw_fraction", r->decode.bw_fraction, false);
	if (r->pipeline.stages > 1) {
		jnum(out, "pipeline_micro_batches", r->pipeline.micro_batches, false);
		jnum(out, "pipeline_micro_seqs", r->pipeline.micro_seqs, false);
		jnum(out, "pipeline_round_trip_ms", r->pipeline.round_ns / 1e6, false);
		jnum(out, "pipeline_stage_ms", r->pipeline.stage_ns / 1e6, false);
		jnum(out, "pipeline_cycle_ms", r->pipeline.cycle_ns / 1e6, false);
		jnum(out, "pipeline_bubble", r->pipeline.bubble, false);
		jnum(out, "pipeline_tok_s_per_seq", r->pipeline.tok_s_per_seq, false);
		jnum(out, "pipeline_tok_s", r->pipeline.tok_s, false);
	}
	jnum(out, "prefill_ms", r->prefill_ms, false);
	jnum(out, "prefill_tok_s", r->prefill_tok_s, false);
	jstr(out, "prefill_bound", perf_bound_name(r->prefill.bound));
	jstr(out, "prefill_offload", offload_choice_name(r->prefill.offload));
	jnum(out, "prefill_flops_fraction", r->prefill.flops_fraction, false);
	if (plan) {
		jnum(out, "weights_gb_per_gpu", plan->weights_bytes / 1e9, false);
		jnum(out, "kv_capacity_tokens", (double)plan->kv_capacity_tokens, false);
		fprintf(out, "  \"fits\": %s,\n", predict_fits(r, plan) ? "true" : "false");
	}
	if (r->decode_band.regime && r->prefill_band.regime) {
		char name[3 * UNCERT_ID_MAX + 16];
		jnum(out, "band_coverage", r->bands->coverage, false);
		fprintf(out, "  \"band_calibration_commit\": \"%s\",\n", r->bands->commit);
		jstr(out, "band_extrapolation", r->extrapolation);
		jnum(out, "decode_band_pct", r->decode_band.pct, false);
		jnum(out, "decode_band_low_tok_s", r->decode_tok_s * r->decode_band.low_factor, false);
		jnum(out, "decode_band_high_tok_s", r->decode_tok_s * r->decode_band.high_factor,
		     false);
		jstr(out, "decode_band_regime",
		     uncert_regime_name(r->decode_band.regime, name, sizeof(name)));
		jnum(out, "decode_band_rows", (double)r->decode_band.regime->n, false);
		jnum(out, "prefill_band_pct", r->prefill_band.pct, false);
		jnum(out, "prefill_band_low_tok_s", r->prefill_tok_s * r->prefill_band.low_factor,
		     false);
		jnum(out, "prefill_band_high_tok_s", r->prefill_tok_s * r->prefill_band.high_factor,
		     false);
		jstr(out, "prefill_band_regime",
		     uncert_regime_name(r->prefill_band.regime, name, sizeof(name)));
		jnum(out, "prefill_band_rows", (double)r->prefill_band.regime->n, false);
	}
	jnum(out, "compute_unknown", pm->compute_unknown ? 1 : 0, false);
	if (r->calibration) {
		const char *label = "this prediction";
		fputs("  \"calibration\": ", out);
		calfile_write_json(out, r->calibration, &label, &r->regime, &r->near, 1);
		fputs(",\n", out);
	}
	jnum(out, "rate_estimated", pm->rate_estimated ? 1 : 0, true);
	fputs("}\n", out);
	return io_check(out, d);
}
