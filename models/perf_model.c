/* SPDX-License-Identifier: Apache-2.0
 * perf_model: per-operation roofline step latency (see perf_model.h and
 * models/perf.h).
 *
 * perf_model_init_opts turns catalogue figures into time per unit of work
 * (ns per new token, per attention pair, per KV token, per distinct expert,
 * per sequence, and per step for weights), after the family's efficiency
 * factors, the engine's scales and the tensor-parallel split.  A step is
 * then a handful of max() terms (one per kind of operation) plus constants.
 *
 * Decode runs.  With T and S fixed, only P (pairs) and K (KV tokens) move,
 * both by S per step, so each attention term is a max (and, for sliding
 * windows, mins) of affine functions of the step index i: piecewise affine
 * with breakpoints where its two sides cross or a window fills.  All other
 * terms are constant over the run.  run_sum collects those breakpoints,
 * cuts [0, k) at them and sums every piece exactly as n (f(a) + f(b)) / 2,
 * which costs a few step evaluations whatever k is.
 */
#include "models/perf_model.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "models/memory.h"
#include "models/power.h"
#include "models/profile.h"

static const char *const bound_names[] = { "overhead", "compute", "memory", "interconnect",
					   "host", "launch" };

const char *perf_bound_name(enum perf_bound b)
{
	return ((int)b >= 0 && (int)b < 6) ? bound_names[b] : "?";
}

static void copy_id(char *dst, size_t cap, const char *src)
{
	size_t n = strlen(src);
	if (n >= cap)
		n = cap - 1; /* ids are validated shorter at load */
	memcpy(dst, src, n);
	dst[n] = '\0';
}

void perf_opts_init(struct perf_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->tp = 1;
	o->pp = 1;
	o->ep = 1;
	o->gpu_expert_fraction = 1.0;
}

struct perf_batch perf_decode_batch(int32_t seqs, int64_t context)
{
	/* each sequence holds context + 1 tokens after the step and its new
	 * token attends to all of them */
	int64_t after = (int64_t)seqs * (context + 1);
	return (struct perf_batch){ .new_tokens = seqs, .seqs = seqs, .decode_seqs = seqs,
				    .attn_pairs = after, .kv_read_tokens = after };
}

struct perf_batch perf_prefill_batch(int64_t n, int64_t cached)
{
	return (struct perf_batch){ .new_tokens = n, .seqs = n > 0 ? 1 : 0, .decode_seqs = 0,
				    .attn_pairs = n * cached + n * (n + 1) / 2,
				    .kv_read_tokens = cached + n };
}

/* The 16-bit rate attention and the lm-head run at. */
static double rate16(const struct cat_hardware *hw, bool fp16acc)
{
	double t = 0;
	if (fp16acc)
		t = hw->tflops_fp16acc[CAT_DTYPE_FP16];
	if (t <= 0)
		t = hw->tflops[CAT_DTYPE_BF16] > 0 ? hw->tflops[CAT_DTYPE_BF16]
						   : hw->tflops[CAT_DTYPE_FP16];
	return t * 1e12;
}

static bool link_is_fast(const char *kind)
{
	return kind && (strncmp(kind, "nvlink", 6) == 0 || strncmp(kind, "infinity", 8) == 0 ||
			strncmp(kind, "xgmi", 4) == 0);
}

/* Architecture counts the catalogue derives, with fallbacks for entries
 * that leave them 0. */
static double moe_layers_of(const struct cat_model *m)
{
	if (m->experts <= 0)
		return 0;
	if (m->moe_layers > 0)
		return (double)m->moe_layers;
	return (double)(m->layers - m->dense_layers);
}

static double kv_layers_of(const struct cat_model *m)
{
	if (m->kv_layers > 0)
		return (double)m->kv_layers;
	return (double)(m->layers - m->linear_attention_layers);
}

double perf_vector_flops_estimate(const struct catalog *cat, const struct cat_hardware *hw)
{
	if (hw->gpu_cores <= 0)
		return 0;
	/* per core-clock where the entries give clocks (hw's own and its
	 * peers'), else per core */
	bool clocked = hw->gpu_clock_mhz > 0;
	double sum = 0;
	int n = 0;
	for (size_t i = 0; i < cat->hardware_count; i++) {
		const struct cat_hardware *x = &cat->hardware[i];
		if (x->family == hw->family && !x->system_kind && x->fp32_vector_tflops > 0 &&
		    x->gpu_cores > 0 && (!clocked || x->gpu_clock_mhz > 0)) {
			sum += x->fp32_vector_tflops / (double)x->gpu_cores /
			       (clocked ? x->gpu_clock_mhz : 1.0);
			n++;
		}
	}
	if (!n)
		return 0;
	return sum / n * (double)hw->gpu_cores * (clocked ? hw->gpu_clock_mhz : 1.0) * 1e12;
}

/* Core clock.  A GPU core (an NVIDIA SM, an Apple GPU core) issues one warp
 * or SIMD-group instruction per clock from each of its four schedulers (the
 * NVIDIA Ampere, Ada, Hopper and Blackwell architecture whitepapers; Apple
 * GPU cores likewise run four SIMD groups of 32 lanes, philipturner/metal-
 * benchmarks).  A kernel that spends most of its instructions unpacking and
 * scaling quantized weights is bound by that issue rate, cores x clock, and
 * not by the tensor or vector peak: llama.cpp's MMQ matmuls (ggml-cuda
 * mmq.cuh: load_tiles_* dequantize each weight tile into shared memory
 * before the int8 mma.sync) and its matrix-vector kernels (mmvq.cu, and the
 * Metal kernel_mul_mv_* kernels), whose bytes in flight per core, not the
 * memory, set the pace on GPUs with much bandwidth per core (an RTX 5070 Ti,
 * 70 SMs at 2.45 GHz, streams more bytes per SM than an A100 at 1.41 GHz:
 * per clock, not per core).  The clock is the entry's boost clock, else the
 * mean over its family's entries that give one; 0 without a core count. */
double perf_core_clock_hz(const struct catalog *cat, const struct cat_hardware *hw)
{
	if (hw->gpu_cores <= 0)
		return 0;
	double mhz = hw->gpu_clock_mhz;
	if (mhz <= 0) {
		double sum = 0;
		int n = 0;
		for (size_t i = 0; i < cat->hardware_count; i++) {
			const struct cat_hardware *x = &cat->hardware[i];
			if (x->family == hw->family && !x->system_kind && x->gpu_clock_mhz > 0) {
				sum += x->gpu_clock_mhz;
				n++;
			}
		}
		mhz = n ? sum / n : 0;
	}
	return (double)hw->gpu_cores * mhz * 1e6;
}

double perf_sustained_clock(const struct catalog *cat, const struct cat_hardware *hw,
			    double sm_w)
{
	double hz = perf_core_clock_hz(cat, hw);
	if (!(sm_w > 0) || !(hw->tdp_w > 0) || !(hz > 0))
		return 1;
	double rated_ghz = hz / hw->gpu_cores / 1e9;
	double ghz = cbrt((1 - POWER_FIXED_SHARE) * hw->tdp_w / (hw->gpu_cores * sm_w));
	return fmin(1, ghz / rated_ghz);
}

int perf_model_init_opts(struct perf_model *pm, const struct catalog *cat,
			 const struct perf_opts *o, struct diag *d)
{
	memset(pm, 0, sizeof(*pm));
	if (o->tp < 1 || o->tp > 1024 || o->pp < 1 || o->pp > 1024)
		return diag_set(d, DIAG_EINPUT, "tensor_parallel_size %d and pipeline_parallel_size "
				"%d: expected whole numbers from 1 to 1024", o->tp, o->pp);
	if (!(o->gpu_expert_fraction >= 0 && o->gpu_expert_fraction <= 1))
		return diag_set(d, DIAG_EINPUT, "gpu_expert_fraction %g: expected a fraction in "
				"[0, 1]", o->gpu_expert_fraction);
	struct cat_selection sel;
	int rc = catalog_select(cat, &sel, o->hardware, o->model, o->weight_format, o->kv_dtype, d);
	if (rc)
		return rc;
	const struct cat_hardware *hw = sel.hardware;
	const struct cat_model *m = sel.model;
	const struct cat_weight_format *wf = sel.weight_format;
	const struct cat_family *fam = hw->family;
	int gpus = o->tp * o->pp;
	if (hw->system_kind && hw->device_count > 0 && gpus > hw->device_count)
		return diag_set(d, DIAG_EINPUT, "%s has %lld GPUs; tensor_parallel_size %d x "
				"pipeline_parallel_size %d needs %d", hw->id,
				(long long)hw->device_count, o->tp, o->pp, gpus);

	/* the engine */
	struct engine_table *own = NULL;
	const struct engine_table *et = o->engines ? o->engines : cat->engines;
	if (!et) {
		own = malloc(sizeof(*own));
		if (!own)
			return diag_set(d, DIAG_ENOMEM, "out of memory");
		rc = engine_table_load(own, NULL, d);
		if (rc) {
			free(own);
			return rc;
		}
		et = own;
	}
	const char *ename = o->engine ? o->engine : ENGINE_DEFAULT_ID;
	const struct engine_profile *ep = engine_find(et, ename);
	if (!ep) {
		char ids[512];
		engine_list_ids(et, ids, sizeof(ids));
		rc = diag_set(d, DIAG_EINPUT, "unknown engine '%s' (known: %s)", ename, ids);
		free(own);
		return rc;
	}
	copy_id(pm->engine_id, sizeof(pm->engine_id), ep->id);
	engine_resolve(ep, fam->id, &pm->engine);
	/* decode graphs as the engine captures them on this device */
	pm->engine.graph_max_seqs =
		engine_default_graph_max_seqs(&pm->engine, hw, o->tp > 0 ? o->tp : 1);
	struct cat_model mha;
	const struct cat_model *arch = m; /* the checkpoint's layers, for kernel counts */
	if (m->attention == CAT_ATTN_MLA && !engine_runs_mla(ep, wf->id)) {
		/* no latent cache: K and V per head, heads split over tp */
		mha = *m;
		mha.attention = CAT_ATTN_GQA;
		mha.kv_heads = mha.heads;
		m = &mha;
		pm->mla_expanded = true;
	}
	free(own);

	/* the machine */
	double mm = catalog_matmul_flops(hw, wf, &pm->matmul_dtype);
	if (mm > 0 && pm->matmul_dtype == CAT_DTYPE_FP4 && !pm->engine.fp4_tensor_cores) {
		/* an engine without FP4 kernels (llama.cpp's MMQ dequantizes
		 * MXFP4 and multiplies at its 8/16-bit path) gets no FP4 rate:
		 * the format's matmuls run at the 16-bit path, as its other
		 * quantized formats do */
		pm->matmul_dtype = CAT_DTYPE_BF16;
		mm = hw->tflops[CAT_DTYPE_BF16] * 1e12;
	}
	if (mm > 0 && pm->engine.fp16_accumulate) {
		/* FP16 accumulation exists for FP16 (not BF16) inputs, and for
		 * FP8 on parts that list it */
		enum cat_dtype acc = pm->matmul_dtype == CAT_DTYPE_BF16 ? CAT_DTYPE_FP16
								       : pm->matmul_dtype;
		if (hw->tflops_fp16acc[acc] * 1e12 > mm) {
			mm = hw->tflops_fp16acc[acc] * 1e12;
			pm->matmul_dtype = acc;
		}
	}
	double r16 = rate16(hw, pm->engine.fp16_accumulate);
	double vec = hw->fp32_vector_tflops * 1e12;
	/* no tensor path at all (Apple GPUs): matmuls run on the FP32/FP16
	 * vector units.  Hardware with tensor cores that lacks a format's
	 * dtype (NVFP4 on Hopper) cannot run that format: no vector fallback */
	bool no_tensor = r16 <= 0;
	if (vec <= 0 && no_tensor) {
		vec = perf_vector_flops_estimate(cat, hw);
		pm->rate_estimated = vec > 0;
	}
	if (no_tensor && vec > 0) {
		pm->vector_fallback = true;
		if (mm <= 0)
			mm = vec;
		if (r16 <= 0)
			r16 = vec;
	}
	if ((mm <= 0 || r16 <= 0) && o->allow_unknown_compute) {
		/* effectively infinite: every compute term becomes 0 */
		pm->compute_unknown = true;
		mm = r16 = 1e30;
	}
	if (mm <= 0)
		return diag_set(d, DIAG_EINPUT,
				"hardware '%s' lists no dense %s rate for weight format '%s' (%s%s); "
				"it cannot run that format",
				hw->id, cat_dtype_name(wf->compute_dtype), wf->id,
				wf->has_fallback ? "nor for its fallback " : "the format has no fallback",
				wf->has_fallback ? cat_dtype_name(wf->fallback_dtype) : "");
	if (r16 <= 0)
		return diag_set(d, DIAG_EINPUT,
				"hardware '%s' lists no dense bf16 or fp16 rate, which attention "
				"and the lm-head need", hw->id);

	copy_id(pm->hardware_id, sizeof(pm->hardware_id), hw->id);
	copy_id(pm->model_id, sizeof(pm->model_id), m->id);
	copy_id(pm->weight_format_id, sizeof(pm->weight_format_id), wf->id);
	copy_id(pm->kv_dtype_id, sizeof(pm->kv_dtype_id), sel.kv_dtype->id);
	copy_id(pm->family_id, sizeof(pm->family_id), fam->id);
	pm->tp = o->tp;
	pm->pp = o->pp;
	pm->ep = o->ep > 1 ? o->ep : 1;
	pm->matmul_peak_flops = mm;
	pm->bf16_peak_flops = r16;
	pm->mem_bw_bytes = hw->mem_bw_gbs * 1e9;
	pm->eff_compute = fam->eff_compute;
	pm->eff_bw = fam->eff_bw;
	if (hw->peer_link.kind && hw->peer_link.bw_gbs > 0) {
		pm->link_bw_bytes = hw->peer_link.bw_gbs * 1e9;
		pm->link_latency_ns = link_is_fast(hw->peer_link.kind) ? PERF_LINK_LATENCY_NVLINK_NS
									 : PERF_LINK_LATENCY_PCIE_NS;
	} else {
		pm->link_bw_bytes = (hw->host_link.bw_gbs > 0 ? hw->host_link.bw_gbs
							       : OFFLOAD_DEFAULT_LINK_GBS) * 1e9;
		pm->link_latency_ns = PERF_LINK_LATENCY_PCIE_NS;
	}

	/* the architecture */
	double L = (double)m->layers, h = (double)m->hidden_size, V = (double)m->vocab_size;
	double H = (double)m->heads, kvh = (double)m->kv_heads, hd = (double)m->head_dim;
	double tp = o->tp;
	pm->layers = L;
	pm->hidden = h;
	double L_moe = moe_layers_of(m);
	double E = (double)m->experts, k = (double)m->experts_per_token;
	double per_expert = 0;
	if (E > 0 && L_moe > 0) {
		if (k < 1 || k > E)
			return diag_set(d, DIAG_EINPUT, "model '%s': experts_per_token %g outside "
					"[1, experts %g]", m->id, k, E);
		per_expert = m->expert_params > 0 ? (double)m->expert_params / (L_moe * E)
						  : 3.0 * h * (double)m->expert_intermediate_size;
		pm->moe_layers = L_moe;
		pm->experts = E;
		pm->experts_per_token = k;
		moe_routing_init(&pm->routing, E, k);
	}
	if (pm->ep > 1 && (pm->ep != o->tp || !(E > 0 && L_moe > 0) ||
			   fmod(E, (double)pm->ep) != 0))
		return diag_set(d, DIAG_EINPUT, "expert_parallel_size %d: expected 1, or the "
				"tensor-parallel size (%d) for a mixture of experts whose routed "
				"experts (%g) divide evenly over it", pm->ep, o->tp, E);
	double expert_total = per_expert * E * L_moe;
	double dense_params = (double)m->linear_params - expert_total;
	if (dense_params < 0)
		dense_params = 0;
	double bpw = wf->bits_per_weight / 8.0, ebw = wf->embedding_bits / 8.0;
	double dbw = wf->dense_bits / 8.0;
	pm->dense_flops_per_token = 2.0 * dense_params;
	pm->expert_flops_per_token = 2.0 * k * per_expert * L_moe;
	pm->matmul_flops_per_token = pm->dense_flops_per_token + pm->expert_flops_per_token;
	pm->lm_head_flops_per_seq = 2.0 * h * V;
	pm->dense_weight_bytes = dense_params * dbw + (double)m->norm_params * ebw;
	pm->expert_bytes = per_expert * bpw;
	pm->lm_head_bytes = h * V * ebw;
	pm->weight_bytes_per_step = pm->dense_weight_bytes + pm->lm_head_bytes +
				    (E > 0 ? k * L_moe * pm->expert_bytes : 0);

	/* attention: full, sliding-window and linear (recurrent) layers */
	double kv_layers = kv_layers_of(m);
	double sw_layers = m->sliding_window > 0 ? (double)m->sliding_window_layers : 0;
	if (sw_layers > kv_layers)
		sw_layers = kv_layers;
	double full_layers = kv_layers - sw_layers;
	double pair_flops_layer;
	if (m->attention == CAT_ATTN_MLA) {
		double dqk = m->qk_nope_head_dim > 0 ? (double)(m->qk_nope_head_dim +
								m->qk_rope_head_dim) : hd;
		double dv = m->v_head_dim > 0 ? (double)m->v_head_dim : hd;
		pair_flops_layer = 2.0 * H * (dqk + dv);
		pm->kv_gpu_fraction = 1.0; /* the latent is kept whole on every rank */
	} else {
		pair_flops_layer = 4.0 * H * hd;
		double per_rank = ceil(kvh / tp);
		pm->kv_gpu_fraction = per_rank * tp / kvh / tp;
	}
	pm->kv_bytes_per_token = (double)mem_kv_bytes_per_token(m, sel.kv_dtype);
	double kv_layer = kv_layers > 0 ? pm->kv_bytes_per_token / kv_layers : 0;
	pm->kv_full_bytes_per_token = kv_layer * full_layers;
	pm->kv_sw_bytes_per_token = kv_layer * sw_layers;
	pm->attn_flops_per_pair = pair_flops_layer * full_layers;
	pm->sw_flops_per_pair = pair_flops_layer * sw_layers;
	pm->window = sw_layers > 0 ? (double)m->sliding_window : 0;
	double lin_layers = (double)m->linear_attention_layers;
	if (lin_layers > 0) {
		double vh = (double)(m->linear_v_heads > 0 ? m->linear_v_heads : m->heads);
		double ld = (double)(m->linear_head_dim > 0 ? m->linear_head_dim : m->head_dim);
		/* state update S += k v^T, decay, and readout q S: ~6 d^2 per head */
		pm->lin_attn_flops_per_token = 6.0 * vh * ld * ld * lin_layers;
		/* FP32 state, read and written every step */
		pm->state_bytes_per_seq = 2.0 * vh * ld * ld * 4.0 * lin_layers;
	}

	/* a board power limit lowers the core clock: every compute rate and
	 * the GPU's own fixed times follow it, bandwidth does not */
	pm->power_limit_w = o->power_limit_w > 0 ? o->power_limit_w : hw->power_limit_w;
	rc = power_clock_fraction(pm->power_limit_w, hw->tdp_w, hw->id, &pm->clock_fraction, d);
	if (rc)
		return rc;
	if (pm->clock_fraction >= 1)
		pm->power_limit_w = 0;
	double kclk = pm->clock_fraction;

	/* time per unit, per GPU */
	struct engine_params *e = &pm->engine;
	/* a format's own tensor-core kernels (FP4) reach a share of what the
	 * family's BF16 GEMMs do (formats.json tensor_efficiency) */
	pm->format_efficiency = pm->matmul_dtype == wf->compute_dtype && !pm->vector_fallback
					? wf->tensor_efficiency : 1.0;
	double rate_mm = mm * pm->eff_compute * e->compute_scale * pm->format_efficiency * kclk;
	pm->core_clock_hz = perf_core_clock_hz(cat, hw);
	pm->sustained_clock = 1;
	if (e->quant_matmul_flops_per_core_clock > 0 && pm->core_clock_hz > 0 &&
	    !pm->vector_fallback && !pm->compute_unknown && wf->bits_per_weight < 15.5) {
		/* quantized weights through issue-bound kernels (core clock),
		 * at the share of the engine's per-clock rate the family's
		 * boards sustain: the clock they hold under the load and what
		 * their SMs issue per clock differ by architecture and board
		 * (families.json, eff_issue) */
		pm->issue_bound_matmul = true;
		rc = catalog_eff_issue(cat, fam, &pm->eff_issue, d);
		if (rc)
			return rc;
		/* and at the clock its rating feeds in such a load: a board
		 * with few watts for its SMs (an L40's 300 W for 142, a Max-Q's
		 * for 188) holds less than its rated boost.  A limit below the
		 * rating lowers it further by kclk: with the cube law both
		 * compose to the clock the limit feeds (models/power.h) */
		pm->sustained_clock = perf_sustained_clock(cat, hw, fam->sm_w_at_1ghz);
		rate_mm = pm->core_clock_hz * e->quant_matmul_flops_per_core_clock * pm->eff_issue *
			  pm->sustained_clock * kclk;
	}
	double rate_head = r16 * pm->eff_compute * e->compute_scale * kclk;
	if (o->no_flash_attention && e->attention_scale_without_fa > 0)
		e->attention_scale = e->attention_scale_without_fa;
	double rate_attn = r16 * pm->eff_compute * e->attention_scale * kclk;
	/* a package of several dies: reads that cross the die link cost more
	 * than local ones, and each core delivers fewer bytes per clock for
	 * it (catalog_die_factor) */
	const struct cat_family *die_from = NULL;
	rc = catalog_die_factor(cat, hw, &pm->die_factor, &die_from, d);
	if (rc)
		return rc;
	snprintf(pm->die_penalty_family, sizeof(pm->die_penalty_family), "%s",
		 die_from ? die_from->id : "");
	double bw = pm->mem_bw_bytes * pm->eff_bw * e->bw_scale * pm->die_factor;
	/* weight-only formats the kernels dequantize on the fly stream their
	 * weights at a lower fraction of the bandwidth than native ones */
	double natural_bits = pm->matmul_dtype == CAT_DTYPE_FP4 ? 4
			      : (pm->matmul_dtype == CAT_DTYPE_FP8 || pm->matmul_dtype == CAT_DTYPE_INT8) ? 8
			      : 16;
	if (pm->vector_fallback)
		natural_bits = 16;
	pm->dequantizing = wf->bits_per_weight < natural_bits - 0.6;
	double wbw = bw * (pm->dequantizing ? e->quant_bw_scale : 1.0);
	double head_bw = bw, wbw_mm = wbw, dense_wbw = wbw;
	pm->matvec_max_tokens = 0;
	if (e->matvec_bytes_per_core_clock > 0 && pm->core_clock_hz > 0) {
		/* the matrix-vector kernels' bytes per core clock (core clock):
		 * fewer for sub-byte weights, whose nibbles are unpacked before
		 * the dot product.  At the rated clock: a board slows its clock
		 * only when it draws its power limit, and a weight-streaming
		 * decode draws far less than a matmul (the RTX 3090 sweep of
		 * test_power_cap: decode loses 6% at 200 W where prefill loses
		 * 27%) */
		double cap = pm->core_clock_hz * e->matvec_bytes_per_core_clock * pm->die_factor;
		double qcap = e->quant_matvec_bytes_per_core_clock > 0
				      ? pm->core_clock_hz * e->quant_matvec_bytes_per_core_clock *
						pm->die_factor
				      : cap;
		wbw = fmin(wbw, wf->bits_per_weight < 8 ? qcap : cap);
		dense_wbw = fmin(dense_wbw, wf->dense_bits < 8 ? qcap : cap);
		head_bw = fmin(head_bw, cap);
		/* only steps of a few tokens run those kernels: llama.cpp's CUDA
		 * matrix-vector path takes at most MMVQ_MAX_BATCH_SIZE (8) columns
		 * (ggml-cuda mmvq.cuh, ggml_cuda_should_use_mmvq) and Metal's
		 * kernel_mul_mv as many (ggml-metal: ne11_mm_min 8); larger
		 * batches go through MMQ or cuBLAS, which stream each weight tile
		 * once at the bandwidth */
		pm->matvec_max_tokens = PERF_MATVEC_MAX_TOKENS;
	}
	pm->ns_per_token = pm->dense_flops_per_token / tp / rate_mm * 1e9;
	pm->ns_weights_mv =
		(dense_params * dbw / tp / dense_wbw + (double)m->norm_params * ebw / tp / bw) * 1e9;
	pm->ns_weights = (dense_params * dbw / tp / wbw_mm + (double)m->norm_params * ebw / tp / bw) * 1e9;
	pm->ns_per_expert_token = pm->expert_flops_per_token / tp / (rate_mm * e->moe_scale) * 1e9;
	pm->ns_per_expert_mv = pm->expert_bytes * L_moe / tp / wbw * 1e9;
	pm->ns_per_expert = pm->expert_bytes * L_moe / tp / wbw_mm * 1e9;
	pm->ns_per_seq = pm->lm_head_flops_per_seq / tp / rate_head * 1e9;
	pm->ns_lm_head_mv = pm->lm_head_bytes / tp / head_bw * 1e9;
	pm->ns_lm_head = pm->lm_head_bytes / tp / bw * 1e9;
	pm->ns_per_pair = pm->attn_flops_per_pair / tp / rate_attn * 1e9;
	pm->ns_per_kv_token = pm->kv_full_bytes_per_token * pm->kv_gpu_fraction / bw * 1e9;
	pm->ns_per_sw_pair = pm->sw_flops_per_pair / tp / rate_attn * 1e9;
	pm->ns_per_sw_kv_token = pm->kv_sw_bytes_per_token * pm->kv_gpu_fraction / bw * 1e9;
	pm->ns_per_lin_attn_token = pm->lin_attn_flops_per_token / tp / rate_attn * 1e9;
	pm->ns_per_state_seq = pm->state_bytes_per_seq / tp / bw * 1e9;
	if (o->tp > 1) {
		/* two all-reduces of the hidden state per layer (attention output,
		 * MLP output), ring algorithm: 2 (tp-1)/tp of the bytes each way */
		double link = pm->link_bw_bytes * PERF_LINK_EFF;
		/* under expert parallelism the MoE layers' all-reduce becomes a
		 * dispatch and a combine (floors.h) */
		double n_ar = 2.0 * L - (pm->ep > 1 ? L_moe : 0);
		pm->ns_allreduce_fixed = n_ar * pm->link_latency_ns;
		pm->ns_allreduce_per_token = n_ar * 2.0 * (tp - 1) / tp * h * 2.0 / link * 1e9;
	}
	if (o->pp > 1) {
		double link = pm->link_bw_bytes * PERF_LINK_EFF;
		pm->ns_pp_fixed = (o->pp - 1) * pm->link_latency_ns;
		pm->ns_pp_per_token = (o->pp - 1) * h * 2.0 / link * 1e9;
	}
	/* llama.cpp's CUDA builds up to the one before pull 15525 (2025-08)
	 * copied each expert matmul's routing to the host, synchronised and
	 * sorted the tokens there: a cost per token no GPU shortens */
	if (o->engine_build > 0 && e->moe_host_routing_us > 0 &&
	    (double)o->engine_build <= e->moe_host_routing_last_build && pm->experts > 0 &&
	    o->gpu_expert_fraction >= 1)
		pm->ns_host_routing_per_token = L_moe * e->moe_host_routing_us * 1e3;
	pm->overhead_ns = (fam->step_overhead_us + e->step_overhead_us + L * e->layer_overhead_us +
			   L_moe * e->moe_layer_overhead_us) * 1e3;
	pm->gpu_fixed_ns = (fam->step_overhead_us + L * e->layer_overhead_us +
			    L_moe * e->moe_layer_overhead_us) * 1e3;
	if (kclk < 1) {
		/* the GPU-side fixed costs run at the core clock, the host's
		 * do not */
		pm->gpu_fixed_ns /= kclk;
		pm->overhead_ns = pm->gpu_fixed_ns + e->step_overhead_us * 1e3;
	}
	/* kernels follow the checkpoint's projections even when its latent
	 * attention runs as plain multi-head attention */
	floors_init(&pm->floors, arch, e, pm->ep, L_moe, pm->link_bw_bytes * FLOORS_A2A_LINK_EFF,
		    pm->link_latency_ns, pm->dequantizing);
	pm->floors.kernel_graph_ns /= kclk;
	pm->floors.gemm_ns /= kclk;
	pm->floors.expert_empty_ns /= kclk;
	if (pm->ep > 1 && pm->matmul_dtype == CAT_DTYPE_FP8)
		/* FP8 checkpoints dispatch FP8 activations with one FP32 scale
		 * per 128 elements (DeepEP's FP8 dispatch); combine stays 16-bit */
		floors_set_alltoall(&pm->floors, L_moe, h, 1.0 + 4.0 / 128.0,
				    pm->link_bw_bytes * FLOORS_A2A_LINK_EFF, pm->link_latency_ns);

	/* expert offload */
	pm->gpu_expert_fraction = E > 0 ? o->gpu_expert_fraction : 1.0;
	if (pm->gpu_expert_fraction < 1 && hw->unified_memory)
		return diag_set(d, DIAG_EINPUT, "%s has unified memory: experts cannot be "
				"offloaded to a separate host RAM (gpu_expert_fraction must be 1)",
				hw->id);
	pm->host = offload_host_resolve(&o->host, hw->host_link.bw_gbs);
	rc = spec_model_init(&pm->spec, pm, cat, o, d);
	if (rc)
		return rc;
	assert(perf_model_check(pm));
	return 0;
}

int perf_model_init(struct perf_model *pm, const struct catalog *cat,
		    const char *hardware_id, const char *model_id,
		    const char *weight_format, const char *kv_dtype, int tp, struct diag *d)
{
	struct perf_opts o;
	perf_opts_init(&o);
	o.hardware = hardware_id;
	o.model = model_id;
	o.weight_format = weight_format;
	o.kv_dtype = kv_dtype;
	o.tp = tp;
	return perf_model_init_opts(pm, cat, &o, d);
}

void perf_model_set_profile(struct perf_model *pm, const struct perf_profile *p)
{
	pm->profile = p;
}

static bool finite_nonneg(double x)
{
	return isfinite(x) && x >= 0;
}

bool perf_model_check(const struct perf_model *pm)
{
	const double *ns[] = { &pm->overhead_ns, &pm->ns_per_token, &pm->ns_weights,
		&pm->ns_weights_mv, &pm->ns_per_expert_mv, &pm->ns_lm_head_mv,
		&pm->ns_per_expert_token, &pm->ns_per_expert, &pm->ns_per_seq, &pm->ns_lm_head,
		&pm->ns_per_pair, &pm->ns_per_kv_token, &pm->ns_per_sw_pair,
		&pm->ns_per_sw_kv_token, &pm->ns_per_lin_attn_token, &pm->ns_per_state_seq,
		&pm->ns_allreduce_fixed, &pm->ns_allreduce_per_token, &pm->ns_pp_fixed,
		&pm->ns_pp_per_token };
	for (size_t i = 0; i < sizeof(ns) / sizeof(ns[0]); i++)
		if (!finite_nonneg(*ns[i]))
			return false;
	const struct floors *f = &pm->floors;
	if (!finite_nonneg(f->gemm_kernels) || !finite_nonneg(f->small_kernels) ||
	    !finite_nonneg(f->kernel_graph_ns) || !finite_nonneg(f->gemm_ns) ||
	    !finite_nonneg(f->kernel_eager_ns) || !finite_nonneg(f->host_ns) ||
	    !finite_nonneg(f->a2a_fixed_ns) || !finite_nonneg(f->a2a_ns_per_token) ||
	    !finite_nonneg(f->expert_kernels) || !finite_nonneg(f->expert_empty_ns) ||
	    !finite_nonneg(f->expert_eager_ns) || !finite_nonneg(f->gemm_kernels) ||
	    !finite_nonneg(f->attn_layers) || !finite_nonneg(f->piecewise_ns) ||
	    !finite_nonneg(pm->gpu_fixed_ns) || pm->gpu_fixed_ns > pm->overhead_ns * (1 + 1e-12) ||
	    f->ep != pm->ep)
		return false;
	return pm->tp >= 1 && pm->pp >= 1 && pm->matmul_peak_flops > 0 &&
	       pm->clock_fraction > 0 && pm->clock_fraction <= 1 &&
	       pm->sustained_clock > 0 && pm->sustained_clock <= 1 &&
	       (!pm->issue_bound_matmul || (pm->eff_issue > 0 && pm->eff_issue <= 1)) &&
	       pm->bf16_peak_flops > 0 && pm->mem_bw_bytes > 0 && pm->eff_compute > 0 &&
	       pm->eff_compute <= 1 && pm->eff_bw > 0 && pm->eff_bw <= 1 &&
	       pm->engine.compute_scale > 0 && pm->engine.attention_scale > 0 &&
	       pm->engine.bw_scale > 0 && pm->gpu_expert_fraction >= 0 &&
	       pm->gpu_expert_fraction <= 1 && (pm->experts == 0 || pm->experts_per_token >= 1) &&
	       pm->hardware_id[0] && pm->model_id[0];
}

/* A step's shape in doubles: new tokens, sequences, attention pairs, and KV
 * tokens touched (context after the step, plus the new tokens written). */
struct shape {
	double t, s, p, k;
	double d;   /* decode sequences (graph or eager launches) */
	double lt;  /* new tokens as the launch floor counts them: a verify step
		       of speculative decoding, k + 1 positions of every
		       sequence, runs as a decode graph (vLLM V1 captures
		       uniform decode batches of that query length) */
	double gp, gk; /* growth of p and k per step of a decode run */
};

static struct shape shape_of(const struct perf_batch *b)
{
	bool verify = b->spec_seqs > 0 && b->spec_seqs == b->seqs && b->decode_seqs == b->seqs;
	return (struct shape){ (double)b->new_tokens, (double)b->seqs, (double)b->attn_pairs,
			       (double)(b->kv_read_tokens + b->new_tokens),
			       (double)b->decode_seqs,
			       verify ? (double)b->seqs : (double)b->new_tokens,
			       (double)b->seqs, (double)b->seqs };
}

/* One operation's two sides, accumulated into the breakdown. */
static double op(struct perf_breakdown *br, double compute, double memory)
{
	if (br) {
		br->compute_ns += compute;
		br->memory_ns += memory;
		if (compute > memory)
			br->compute_bound_ns += compute;
		else
			br->memory_bound_ns += memory;
	}
	return fmax(compute, memory);
}

/* A grouped GEMM's two sides, accumulated like op() but combined as the
 * rounded roofline corner of models/moe.h; the time goes to the larger
 * side's share. */
static double op_grouped(struct perf_breakdown *br, double compute, double memory)
{
	double t = moe_grouped_ns(compute, memory);
	if (br) {
		br->compute_ns += compute;
		br->memory_ns += memory;
		if (compute > memory)
			br->compute_bound_ns += t;
		else
			br->memory_bound_ns += t;
	}
	return t;
}

/* Rows the routed experts' grouped GEMMs compute for t tokens on one GPU's
 * share: every touched expert's rows padded to the engine's M tile (the
 * small-batch tile at most as many tokens as experts; the step's own token
 * count rounded up to 8 when the tile spans the batch and the batch is the
 * smaller); t k without a grouped-GEMM model. */
static double expert_rows(const struct perf_model *pm, double t)
{
	double tile = pm->engine.moe_tile_rows;
	if (t <= pm->experts && pm->engine.moe_tile_rows_small > 0)
		tile = pm->engine.moe_tile_rows_small;
	if (pm->engine.moe_tile_spans_batch)
		/* llama.cpp's mul_mat_q_case picks the narrowest multiple of 8
		 * columns that covers the batch in one tile, up to its widest */
		tile = fmin(tile, 8.0 * ceil(t / 8.0));
	return moe_padded_rows(&pm->routing, t, tile);
}

/* The weight-byte times of a step of t tokens (M_lin, M_exp, M_head): the
 * matrix-vector kernels' for a step of at most matvec_max_tokens, which they
 * run (engine.h, per core clock), the batched kernels' otherwise. */
struct weight_times {
	double lin, exp, head;
};

static struct weight_times weight_times_of(const struct perf_model *pm, double t)
{
	if (t <= pm->matvec_max_tokens)
		return (struct weight_times){ pm->ns_weights_mv, pm->ns_per_expert_mv,
					      pm->ns_lm_head_mv };
	return (struct weight_times){ pm->ns_weights, pm->ns_per_expert, pm->ns_lm_head };
}

/* The routed experts of every MoE layer, with offload when some are not on
 * the GPUs. */
static double experts_ns(const struct perf_model *pm, double t, struct perf_breakdown *br)
{
	if (pm->experts <= 0)
		return 0;
	double dx = moe_distinct_experts(&pm->routing, t);
	double m_exp = weight_times_of(pm, t).exp;
	if (br)
		br->experts_touched = dx;
	double f = pm->gpu_expert_fraction;
	if (f >= 1) {
		/* under expert parallelism the busiest GPU's tokens and experts
		 * set the pace (floors.h); 1 otherwise */
		double imb_t = floors_imbalance(&pm->floors, t * pm->experts_per_token, 0);
		double imb_d = floors_imbalance(&pm->floors, dx, pm->experts / pm->ep);
		if (br)
			br->imbalance = fmax(imb_t, imb_d);
		if (pm->engine.moe_tile_rows > 0 && t > pm->matvec_max_tokens)
			/* grouped GEMMs: padded rows, rounded corner (moe.h); a step
			 * of a few tokens runs the matrix-vector kernels instead */
			return op_grouped(br, pm->ns_per_expert_token / pm->experts_per_token *
						      expert_rows(pm, t) * imb_t,
					  m_exp * dx * imb_d);
		return op(br, pm->ns_per_expert_token * t * imb_t, m_exp * dx * imb_d);
	}
	struct offload_demand dm = {
		.missing_experts = dx * (1 - f) * pm->moe_layers,
		.expert_bytes = pm->expert_bytes,
		.host_token_experts = t * pm->experts_per_token * (1 - f) * pm->moe_layers,
		.flops_per_token_expert = pm->expert_flops_per_token /
					  (pm->experts_per_token * pm->moe_layers),
		.activation_bytes = t * pm->hidden * 2.0 * pm->moe_layers,
		.moe_layers = pm->moe_layers,
		.gpus = pm->tp,
	};
	struct offload_cost c = offload_step_cost(&pm->host, &dm);
	double gpu_all = fmax(pm->ns_per_expert_token * t, m_exp * dx);
	double gpu_part = fmax(pm->ns_per_expert_token * t * f, m_exp * dx * f);
	bool stream = gpu_all + c.stream_ns <= gpu_part + c.cpu_ns;
	if (br) {
		br->offload = stream ? OFFLOAD_STREAM : OFFLOAD_CPU;
		br->host_ns = stream ? c.stream_ns : c.cpu_ns;
		if (stream)
			op(br, pm->ns_per_expert_token * t, m_exp * dx);
		else
			op(br, pm->ns_per_expert_token * t * f, m_exp * dx * f);
	}
	return stream ? gpu_all + c.stream_ns : gpu_part + c.cpu_ns;
}

/* The terms of a step that the floors combine (floors.h). */
struct terms {
	double ops;     /* roofline of the operations */
	double launch;  /* kernel floor */
	double gpu;     /* GPU time before the host is added */
	double host;    /* the engine's host work */
};

static double analytic_terms(const struct perf_model *pm, const struct shape *x,
			     struct perf_breakdown *br, struct terms *tm)
{
	if (!(x->t > 0)) {
		if (tm)
			*tm = (struct terms){ 0, 0, 0, 0 };
		return 0;
	}
	/* the roofline, summed in the order the model always used so that a
	 * step no floor binds keeps its exact value */
	double sum = pm->overhead_ns, ops = 0, v;
	struct weight_times w = weight_times_of(pm, x->t);
	v = op(br, pm->ns_per_token * x->t, w.lin);
	sum += v;
	ops += v;
	v = experts_ns(pm, x->t, br);
	sum += v;
	ops += v;
	v = op(br, pm->ns_per_seq * x->s, w.head);
	sum += v;
	ops += v;
	v = op(br, pm->ns_per_pair * x->p, pm->ns_per_kv_token * x->k);
	sum += v;
	ops += v;
	if (pm->window > 0) {
		v = op(br, pm->ns_per_sw_pair * fmin(x->p, x->t * pm->window),
		       pm->ns_per_sw_kv_token * fmin(x->k, x->s * pm->window));
		sum += v;
		ops += v;
	}
	if (pm->state_bytes_per_seq > 0) {
		v = op(br, pm->ns_per_lin_attn_token * x->t, pm->ns_per_state_seq * x->s);
		sum += v;
		ops += v;
	}
	double a2a = floors_alltoall_ns(&pm->floors, x->t);
	double comm = pm->ns_allreduce_fixed + pm->ns_allreduce_per_token * x->t +
		      pm->ns_pp_fixed + pm->ns_pp_per_token * x->t;
	double t = sum + comm;
	/* an old build's host routing: only batched steps run the expert
	 * matmuls that synchronise for it, and the GPU idles meanwhile */
	double routing = x->t > pm->matvec_max_tokens ? pm->ns_host_routing_per_token * x->t : 0;
	t += routing;
	/* floors: the kernel floor overlaps the roofline, the all-to-alls
	 * add, the host adds or overlaps */
	double touched = pm->experts > 0 ? moe_distinct_experts(&pm->routing, x->t) : 0;
	double launch = floors_launch_ns(&pm->floors, x->s, x->d, x->lt, touched);
	if (launch > ops)
		t += launch - ops;
	t += a2a;
	double host = pm->floors.host_ns;
	double gpu = t - host;
	if (pm->floors.host_overlap)
		t = fmax(gpu, host);
	if (tm)
		*tm = (struct terms){ ops, launch, gpu, host };
	if (br) {
		br->overhead_ns = pm->overhead_ns;
		br->comm_ns = comm + a2a;
		br->alltoall_ns = a2a;
		br->ops_ns = ops;
		br->launch_ns = launch;
		br->kernels = floors_kernel_count(&pm->floors);
		br->floor_binds = launch > ops;
		br->graphed = floors_graphed(&pm->floors, x->s, x->d, x->lt);
		br->gpu_fixed_ns = pm->gpu_fixed_ns;
		br->host_step_ns = host;
		br->host_routing_ns = routing;
		br->host_overlap = pm->floors.host_overlap;
	}
	return t;
}

static double analytic(const struct perf_model *pm, const struct shape *x,
		       struct perf_breakdown *br)
{
	return analytic_terms(pm, x, br, NULL);
}

static void batch_check(const struct perf_batch *b)
{
	(void)b;
	assert(b->new_tokens >= 0 && b->seqs >= 0 && b->attn_pairs >= 0 &&
	       b->kv_read_tokens >= 0);
	assert(b->decode_seqs >= 0 && b->decode_seqs <= b->seqs);
	assert(b->new_tokens == 0 || b->seqs > 0);
}

double perf_step_analytic_ns(const struct perf_model *pm, const struct perf_batch *b)
{
	batch_check(b);
	struct shape x = shape_of(b);
	return analytic(pm, &x, NULL);
}

double perf_step_ns(const struct perf_model *pm, const struct perf_batch *b)
{
	batch_check(b);
	if (b->new_tokens <= 0)
		return 0;
	struct shape x = shape_of(b);
	double t = analytic(pm, &x, NULL);
	return (pm->profile ? t * perf_profile_ratio(pm->profile, b) : t) +
	       spec_draft_run_ns(&pm->spec, b, 1);
}

void perf_step_breakdown(const struct perf_model *pm, const struct perf_batch *b,
			 struct perf_breakdown *out)
{
	batch_check(b);
	memset(out, 0, sizeof(*out));
	out->bound = PERF_BOUND_OVERHEAD;
	out->profile_ratio = 1;
	out->imbalance = 1;
	if (b->new_tokens <= 0)
		return;
	struct shape x = shape_of(b);
	double t = analytic(pm, &x, out);
	out->profile_ratio = pm->profile ? perf_profile_ratio(pm->profile, b) : 1;
	out->spec_draft_ns = spec_draft_run_ns(&pm->spec, b, 1);
	out->step_ns = t * out->profile_ratio + out->spec_draft_ns;

	double dx = out->experts_touched;
	out->matmul_flops = x.t * pm->matmul_flops_per_token;
	out->attn_flops = x.p * pm->attn_flops_per_pair +
			  (pm->window > 0 ? fmin(x.p, x.t * pm->window) * pm->sw_flops_per_pair : 0) +
			  x.t * pm->lin_attn_flops_per_token;
	out->lm_head_flops = x.s * pm->lm_head_flops_per_seq;
	out->flops = out->matmul_flops + out->attn_flops + out->lm_head_flops;
	out->weight_bytes = pm->dense_weight_bytes + pm->lm_head_bytes +
			    dx * pm->moe_layers * pm->expert_bytes *
				    (out->offload == OFFLOAD_CPU ? pm->gpu_expert_fraction : 1);
	double kvb = pm->kv_full_bytes_per_token * x.k +
		     (pm->window > 0 ? pm->kv_sw_bytes_per_token * fmin(x.k, x.s * pm->window) : 0);
	out->kv_bytes = kvb * pm->kv_gpu_fraction * pm->tp + pm->state_bytes_per_seq * x.s;
	out->bytes = out->weight_bytes + out->kv_bytes;

	double imb_d = out->imbalance;
	struct weight_times w = weight_times_of(pm, x.t);
	out->weights_ns = w.lin + w.head + w.exp * dx * (pm->experts > 0 ? imb_d : 0);
	out->kv_ns = pm->ns_per_kv_token * x.k +
		     (pm->window > 0 ? pm->ns_per_sw_kv_token * fmin(x.k, x.s * pm->window) : 0) +
		     pm->ns_per_state_seq * x.s;
	/* what bound the step: a floor above the roofline hides the
	 * roofline's compute and memory shares */
	double shares[6] = { out->overhead_ns, out->compute_bound_ns, out->memory_bound_ns,
			     out->comm_ns, out->host_ns, 0 };
	if (out->floor_binds) {
		shares[PERF_BOUND_COMPUTE] = shares[PERF_BOUND_MEMORY] = 0;
		shares[PERF_BOUND_LAUNCH] = out->launch_ns;
	}
	int best = 0;
	for (int i = 1; i < 6; i++)
		if (shares[i] > shares[best])
			best = i;
	out->bound = (enum perf_bound)best;
	double step_s = out->step_ns * 1e-9;
	double gpus = (double)pm->tp;
	out->flops_fraction = out->flops / step_s / (pm->matmul_peak_flops * gpus);
	out->bw_fraction = out->bytes / step_s / (pm->mem_bw_bytes * gpus);
}

/* ---- decode runs ---- */

struct cuts {
	double x[16];
	int n;
};

/* Where a0 + a1 i and b0 + b1 i cross, if they do. */
static void cross(struct cuts *c, double a0, double a1, double b0, double b1)
{
	double den = a1 - b1;
	if (den == 0 || c->n == (int)(sizeof(c->x) / sizeof(c->x[0])))
		return;
	double x = (b0 - a0) / den;
	if (isfinite(x))
		c->x[c->n++] = x;
}

static void add_cut(struct cuts *c, double x)
{
	if (isfinite(x) && c->n < (int)(sizeof(c->x) / sizeof(c->x[0])))
		c->x[c->n++] = x;
}

static int dbl_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double at_terms(const struct perf_model *pm, const struct shape *x0, double i,
		       struct terms *tm)
{
	struct shape x = *x0;
	x.p += i * x.gp;
	x.k += i * x.gk;
	return analytic_terms(pm, &x, NULL, tm);
}


/* The step where affine u (u(a) = ua, u(b) = ub) crosses level c, as a
 * step index in (a, b], or -1 when it does not cross inside. */
static double crossing(double a, double b, double ua, double ub, double c)
{
	if (!((ua < c && ub > c) || (ua > c && ub < c)))
		return -1;
	double j = ceil(a + (c - ua) / (ub - ua) * (b - a));
	return j > a && j <= b ? j : -1;
}

/* Sum of steps a..e-1, a piece where every roofline term is affine.  The
 * floors add two possible kinks: the roofline crossing the kernel floor,
 * and (host overlap) the GPU time crossing the host's; split there and
 * sum each affine part exactly. */
static double piece_sum(const struct perf_model *pm, const struct shape *x0, double a,
			double e, int depth)
{
	double n = e - a;
	struct terms ta, tb;
	double fa = at_terms(pm, x0, a, &ta);
	if (n == 1)
		return fa;
	double fb = at_terms(pm, x0, e - 1, &tb);
	if (depth < 4) {
		double j = crossing(a, e - 1, ta.ops, tb.ops, ta.launch);
		if (j < 0 && pm->floors.host_overlap)
			j = crossing(a, e - 1, ta.gpu, tb.gpu, ta.host);
		if (j > a && j < e)
			return piece_sum(pm, x0, a, j, depth + 1) +
			       piece_sum(pm, x0, j, e, depth + 1);
	}
	return n * (fa + fb) / 2;
}

/* Sum of analytic() over steps 0..k-1 of a decode run. */
static double run_sum(const struct perf_model *pm, const struct shape *x0, double k)
{
	struct cuts c = { .n = 0 };
	double s = x0->s, gp = x0->gp, gk = x0->gk;
	/* full attention: compute and memory sides cross */
	cross(&c, pm->ns_per_pair * x0->p, pm->ns_per_pair * gp, pm->ns_per_kv_token * x0->k,
	      pm->ns_per_kv_token * gk);
	if (pm->window > 0) {
		double w = pm->window, cp = pm->ns_per_sw_pair, mk = pm->ns_per_sw_kv_token;
		double pcap = x0->t * w, kcap = s * w;
		add_cut(&c, (pcap - x0->p) / gp); /* pairs reach their cap */
		add_cut(&c, (kcap - x0->k) / gk); /* KV reaches its cap */
		cross(&c, cp * x0->p, cp * gp, mk * x0->k, mk * gk);
		cross(&c, cp * pcap, 0, mk * x0->k, mk * gk);
		cross(&c, cp * x0->p, cp * gp, mk * kcap, 0);
	}
	/* integer boundaries inside (0, k), sorted and unique */
	double b[18];
	int nb = 0;
	for (int i = 0; i < c.n; i++) {
		double j = ceil(c.x[i]);
		if (j > 0 && j < k)
			b[nb++] = j;
	}
	qsort(b, (size_t)nb, sizeof(double), dbl_cmp);
	double sum = 0, a = 0;
	for (int i = 0; i <= nb; i++) {
		double e = i < nb ? b[i] : k;
		if (e <= a)
			continue;
		sum += piece_sum(pm, x0, a, e, 0);
		a = e;
	}
	return sum;
}

double perf_decode_run_ns(const struct perf_model *pm, const struct perf_batch *b0,
			  int64_t k)
{
	batch_check(b0);
	assert(b0->decode_seqs == b0->seqs &&
	       (b0->spec_seqs > 0 ? b0->spec_seqs == b0->seqs &&
					    b0->new_tokens == b0->seqs * ((int64_t)pm->spec.k + 1)
				  : b0->new_tokens == b0->seqs));
	if (k <= 0 || b0->new_tokens <= 0)
		return 0;
	struct shape x0 = shape_of(b0);
	if (b0->spec_seqs > 0) {
		/* each sequence's context grows by its expected accepted tokens,
		 * and every one of its k + 1 positions attends to it */
		x0.gk = b0->spec_advance;
		x0.gp = b0->spec_advance * ((double)pm->spec.k + 1);
	}
	double t = run_sum(pm, &x0, (double)k);
	return (pm->profile ? t * perf_profile_ratio(pm->profile, b0) : t) +
	       spec_draft_run_ns(&pm->spec, b0, k);
}

double perf_prefill_ns(const struct perf_model *pm, int64_t tokens, int64_t cached,
		       int64_t chunk)
{
	if (chunk < 1)
		chunk = tokens;
	double sum = 0;
	for (int64_t done = 0; done < tokens;) {
		int64_t n = tokens - done < chunk ? tokens - done : chunk;
		struct perf_batch b = perf_prefill_batch(n, cached + done);
		sum += perf_step_ns(pm, &b);
		done += n;
	}
	return sum;
}
