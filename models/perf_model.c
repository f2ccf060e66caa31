/* SPDX-License-Identifier: Apache-2.0
 * perf_model: roofline step latency (see perf_model.h and models/perf.h).
 *
 * perf_model_init turns catalogue figures into time per unit of work (ns per
 * new token, per attention pair, per sequence, per KV token, and per step for
 * the weights), so a step is two dot products and a max.  A decode run of k
 * steps has both terms affine in the step index i:
 *   compute(i) = c0 + c1 i,  memory(i) = m0 + m1 i
 * so their maximum switches sides at most once, at the crossover
 * i* = (m0 - c0) / (c1 - m1); perf_decode_run_ns sums each side in closed
 * form and costs O(1) whatever k is.
 */
#include "models/perf_model.h"

#include <assert.h>
#include <math.h>
#include <string.h>

#include "models/memory.h"

static const char *const bound_names[] = { "overhead", "compute", "memory" };

const char *perf_bound_name(enum perf_bound b)
{
	return ((int)b >= 0 && (int)b < 3) ? bound_names[b] : "?";
}

static void copy_id(char dst[CAT_ID_MAX], const char *src)
{
	size_t n = strlen(src);
	if (n >= CAT_ID_MAX)
		n = CAT_ID_MAX - 1; /* ids are validated shorter at load */
	memcpy(dst, src, n);
	dst[n] = '\0';
}

int perf_model_init(struct perf_model *pm, const struct catalog *cat,
		    const char *hardware_id, const char *model_id,
		    const char *weight_format, const char *kv_dtype, int tp, struct diag *d)
{
	memset(pm, 0, sizeof(*pm));
	if (tp != 1)
		return diag_set(d, DIAG_EINPUT,
				"tensor parallelism (tp=%d) is not modelled yet: this version "
				"simulates one GPU per replica (tp=1); tensor and pipeline "
				"parallelism come in a later version", tp);
	struct cat_selection sel;
	int rc = catalog_select(cat, &sel, hardware_id, model_id, weight_format, kv_dtype, d);
	if (rc)
		return rc;
	const struct cat_hardware *hw = sel.hardware;
	const struct cat_model *m = sel.model;
	const struct cat_weight_format *wf = sel.weight_format;
	const struct cat_family *fam = hw->family;
	if (m->experts > 0)
		return diag_set(d, DIAG_EINPUT,
				"model '%s' is a mixture of experts: this version models dense "
				"models only (MoE expert traffic comes in a later version)", m->id);
	if (m->attention != CAT_ATTN_GQA)
		return diag_set(d, DIAG_EINPUT,
				"model '%s' uses multi-head latent attention: this version "
				"models GQA attention only (MLA comes in a later version)", m->id);

	double matmul_peak = catalog_matmul_flops(hw, wf, &pm->matmul_dtype);
	if (matmul_peak <= 0)
		return diag_set(d, DIAG_EINPUT,
				"hardware '%s' lists no dense %s rate for weight format '%s'%s%s",
				hw->id, cat_dtype_name(wf->compute_dtype), wf->id,
				wf->has_fallback ? " (nor the fallback " : "",
				wf->has_fallback ? cat_dtype_name(wf->fallback_dtype) : "");
	double bf16_tflops = hw->tflops[CAT_DTYPE_BF16] > 0 ? hw->tflops[CAT_DTYPE_BF16]
							    : hw->tflops[CAT_DTYPE_FP16];
	if (bf16_tflops <= 0)
		return diag_set(d, DIAG_EINPUT,
				"hardware '%s' lists no dense bf16 or fp16 rate, which attention "
				"and the lm-head need", hw->id);

	copy_id(pm->hardware_id, hw->id);
	copy_id(pm->model_id, m->id);
	copy_id(pm->weight_format_id, wf->id);
	copy_id(pm->kv_dtype_id, sel.kv_dtype->id);
	copy_id(pm->family_id, fam->id);
	pm->tp = tp;

	pm->matmul_peak_flops = matmul_peak;
	pm->bf16_peak_flops = bf16_tflops * 1e12;
	pm->mem_bw_bytes = hw->mem_bw_gbs * 1e9;
	pm->eff_compute = fam->eff_compute;
	pm->eff_bw = fam->eff_bw;
	pm->overhead_ns = fam->step_overhead_us * 1e3;

	double hidden = (double)m->hidden_size;
	pm->matmul_flops_per_token = 2.0 * (double)(m->linear_params + m->norm_params);
	pm->attn_flops_per_pair = 4.0 * (double)m->layers * (double)m->heads *
				  (double)m->head_dim;
	pm->lm_head_flops_per_seq = 2.0 * hidden * (double)m->vocab_size;
	/* Every matrix once; the lm-head matrix once whether tied or not; the
	 * embedding table only as the gathered rows, which we neglect. */
	pm->weight_bytes_per_step =
		(double)m->linear_params * wf->bits_per_weight / 8.0 +
		((double)m->norm_params + hidden * (double)m->vocab_size) *
			wf->embedding_bits / 8.0;
	pm->kv_bytes_per_token = (double)mem_kv_bytes_per_token(m, sel.kv_dtype);

	double matmul_rate = pm->matmul_peak_flops * pm->eff_compute;
	double bf16_rate = pm->bf16_peak_flops * pm->eff_compute;
	double bw_rate = pm->mem_bw_bytes * pm->eff_bw;
	pm->ns_per_token = pm->matmul_flops_per_token / matmul_rate * 1e9;
	pm->ns_per_pair = pm->attn_flops_per_pair / bf16_rate * 1e9;
	pm->ns_per_seq = pm->lm_head_flops_per_seq / bf16_rate * 1e9;
	pm->ns_weights = pm->weight_bytes_per_step / bw_rate * 1e9;
	pm->ns_per_kv_token = pm->kv_bytes_per_token / bw_rate * 1e9;
	assert(perf_model_check(pm));
	return 0;
}

static bool finite_nonneg(double x)
{
	return isfinite(x) && x >= 0;
}

bool perf_model_check(const struct perf_model *pm)
{
	return pm->tp >= 1 && pm->matmul_peak_flops > 0 && pm->bf16_peak_flops > 0 &&
	       pm->mem_bw_bytes > 0 && pm->eff_compute > 0 && pm->eff_compute <= 1 &&
	       pm->eff_bw > 0 && pm->eff_bw <= 1 && finite_nonneg(pm->overhead_ns) &&
	       finite_nonneg(pm->ns_per_token) && finite_nonneg(pm->ns_per_pair) &&
	       finite_nonneg(pm->ns_per_seq) && finite_nonneg(pm->ns_weights) &&
	       finite_nonneg(pm->ns_per_kv_token) && pm->hardware_id[0] && pm->model_id[0];
}

/* Every sequence of a step computes logits for one position: a decode
 * produces its token, a prefill chunk its last position (discarded unless
 * the chunk ends the prompt). */
static double compute_ns(const struct perf_model *pm, const struct perf_batch *b)
{
	return (double)b->new_tokens * pm->ns_per_token +
	       (double)b->attn_pairs * pm->ns_per_pair + (double)b->seqs * pm->ns_per_seq;
}

/* KV is read for the whole context and written for the new tokens. */
static double memory_ns(const struct perf_model *pm, const struct perf_batch *b)
{
	return pm->ns_weights +
	       (double)(b->kv_read_tokens + b->new_tokens) * pm->ns_per_kv_token;
}

static void batch_check(const struct perf_batch *b)
{
	(void)b;
	assert(b->new_tokens >= 0 && b->seqs >= 0 && b->attn_pairs >= 0 &&
	       b->kv_read_tokens >= 0);
	assert(b->decode_seqs >= 0 && b->decode_seqs <= b->seqs);
	assert(b->new_tokens == 0 || b->seqs > 0);
}

double perf_step_ns(const struct perf_model *pm, const struct perf_batch *b)
{
	batch_check(b);
	if (b->new_tokens <= 0)
		return 0;
	return pm->overhead_ns + fmax(compute_ns(pm, b), memory_ns(pm, b));
}

void perf_step_breakdown(const struct perf_model *pm, const struct perf_batch *b,
			 struct perf_breakdown *out)
{
	batch_check(b);
	memset(out, 0, sizeof(*out));
	out->bound = PERF_BOUND_OVERHEAD;
	if (b->new_tokens <= 0)
		return;
	out->matmul_flops = (double)b->new_tokens * pm->matmul_flops_per_token;
	out->attn_flops = (double)b->attn_pairs * pm->attn_flops_per_pair;
	out->lm_head_flops = (double)b->seqs * pm->lm_head_flops_per_seq;
	out->flops = out->matmul_flops + out->attn_flops + out->lm_head_flops;
	out->weight_bytes = pm->weight_bytes_per_step;
	out->kv_bytes = (double)(b->kv_read_tokens + b->new_tokens) * pm->kv_bytes_per_token;
	out->bytes = out->weight_bytes + out->kv_bytes;
	out->compute_ns = compute_ns(pm, b);
	out->memory_ns = memory_ns(pm, b);
	out->overhead_ns = pm->overhead_ns;
	out->step_ns = pm->overhead_ns + fmax(out->compute_ns, out->memory_ns);
	if (out->overhead_ns > out->compute_ns && out->overhead_ns > out->memory_ns)
		out->bound = PERF_BOUND_OVERHEAD;
	else if (out->compute_ns >= out->memory_ns)
		out->bound = PERF_BOUND_COMPUTE;
	else
		out->bound = PERF_BOUND_MEMORY;
	double step_s = out->step_ns * 1e-9;
	out->flops_fraction = out->flops / step_s / pm->matmul_peak_flops;
	out->bw_fraction = out->bytes / step_s / pm->mem_bw_bytes;
}

/* Sum of f0 + f1 i over the n integers i = a, a+1, ..., a+n-1. */
static double affine_sum(double f0, double f1, double a, double n)
{
	return n * f0 + f1 * (n * a + n * (n - 1) / 2);
}

double perf_decode_run_ns(const struct perf_model *pm, const struct perf_batch *b0,
			  int64_t k)
{
	batch_check(b0);
	assert(b0->new_tokens == b0->seqs && b0->decode_seqs == b0->seqs);
	if (k <= 0 || b0->new_tokens <= 0)
		return 0;
	double s = (double)b0->seqs;
	double c0 = compute_ns(pm, b0), c1 = s * pm->ns_per_pair;
	double m0 = memory_ns(pm, b0), m1 = s * pm->ns_per_kv_token;
	double kd = (double)k;
	double d0 = c0 - m0, d1 = c1 - m1;

	/* Steps [0, j) take the side that wins at i = 0, steps [j, k) the
	 * other; j = k when no crossover falls inside the run. */
	double j;
	bool compute_first;
	if (d1 == 0) {
		compute_first = d0 >= 0;
		j = kd;
	} else {
		double x = -d0 / d1; /* d(x) = 0 */
		if (d1 > 0) {
			/* compute wins for i >= x */
			compute_first = false;
			j = ceil(x);
		} else {
			/* compute wins for i <= x */
			compute_first = true;
			j = floor(x) + 1;
		}
		if (!(j > 0))
			j = 0;
		if (j > kd)
			j = kd;
	}
	double head, tail;
	if (compute_first) {
		head = affine_sum(c0, c1, 0, j);
		tail = affine_sum(m0, m1, j, kd - j);
	} else {
		head = affine_sum(m0, m1, 0, j);
		tail = affine_sum(c0, c1, j, kd - j);
	}
	return kd * pm->overhead_ns + head + tail;
}
