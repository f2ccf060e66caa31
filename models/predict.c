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

int predict_write_text(FILE *out, const struct perf_model *pm, const struct predict_result *r,
		       const struct mem_plan *plan, struct diag *d)
{
	fprintf(out, "%s in %s (KV %s) on %s, engine %s, tp %d, pp %d\n", pm->model_id,
		pm->weight_format_id, pm->kv_dtype_id, pm->hardware_id, pm->engine_id, pm->tp,
		pm->pp);
	if (pm->vector_fallback)
		fprintf(out, "  (no tensor-core rate published: matmuls at the FP32 vector rate%s)\n",
			pm->rate_estimated ? ", estimated from the family's rate per GPU core" : "");
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
	describe(out, &r->decode);
	if (pm->experts > 0)
		fprintf(out, "      experts touched per MoE layer: %.1f of %.0f\n",
			r->decode.experts_touched, pm->experts);
	fprintf(out, "  prefill, %lld tokens in chunks of %lld:\n", (long long)r->context,
		(long long)r->chunk);
	fprintf(out, "    time            %10.3f ms   (first chunk %s bound)\n", r->prefill_ms,
		perf_bound_name(r->prefill.bound));
	fprintf(out, "    throughput      %10.1f tok/s\n", r->prefill_tok_s);
	describe(out, &r->prefill);
	if (plan) {
		double need = (double)r->batch * (double)(r->context + 1);
		fprintf(out, "  memory: %.1f GB of weights per GPU, KV cache for %lld tokens: "
			"batch x context %s\n", plan->weights_bytes / 1e9,
			(long long)plan->kv_capacity_tokens,
			need <= (double)plan->kv_capacity_tokens ? "fits" : "does NOT fit");
	}
	return io_check(out, d);
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
	jstr(out, "hardware", pm->hardware_id);
	jstr(out, "model", pm->model_id);
	jstr(out, "weight_format", pm->weight_format_id);
	jstr(out, "kv_dtype", pm->kv_dtype_id);
	jstr(out, "engine", pm->engine_id);
	jnum(out, "tp", pm->tp, false);
	jnum(out, "pp", pm->pp, false);
	jnum(out, "gpu_expert_fraction", pm->gpu_expert_fraction, false);
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
	jstr(out, "decode_offload", offload_choice_name(r->decode.offload));
	jnum(out, "decode_experts_touched", r->decode.experts_touched, false);
	jnum(out, "decode_flops_fraction", r->decode.flops_fraction, false);
	jnum(out, "decode_bw_fraction", r->decode.bw_fraction, false);
	jnum(out, "prefill_ms", r->prefill_ms, false);
	jnum(out, "prefill_tok_s", r->prefill_tok_s, false);
	jstr(out, "prefill_bound", perf_bound_name(r->prefill.bound));
	jstr(out, "prefill_offload", offload_choice_name(r->prefill.offload));
	jnum(out, "prefill_flops_fraction", r->prefill.flops_fraction, false);
	if (plan) {
		jnum(out, "weights_gb_per_gpu", plan->weights_bytes / 1e9, false);
		jnum(out, "kv_capacity_tokens", (double)plan->kv_capacity_tokens, false);
	}
	jnum(out, "compute_unknown", pm->compute_unknown ? 1 : 0, false);
	jnum(out, "rate_estimated", pm->rate_estimated ? 1 : 0, true);
	fputs("}\n", out);
	return io_check(out, d);
}
