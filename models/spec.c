/* SPDX-License-Identifier: Apache-2.0
 * spec: the drafter of speculative decoding priced by the roofline, and
 * the memory it takes (see spec.h).
 *
 * A drafter's step mirrors the decode step of perf_model.c term by term
 * (matrices, experts, lm-head, attention, all-reduces, the launch floor
 * and the host), so that a draft model priced here costs exactly what the
 * same model would cost serving on its own; sums over a run of verify
 * steps are split where the step's convex, piecewise affine cost bends.
 */
#include "models/spec.h"

#include <math.h>
#include <string.h>

#include "models/memory.h"
#include "models/perf_model.h"

const char *spec_method_name(enum spec_method m)
{
	return m == SPEC_DRAFT ? "draft" : m == SPEC_MTP ? "mtp" : "off";
}

double spec_expected_tokens(double alpha, int32_t k)
{
	if (k <= 0)
		return 1;
	if (alpha >= 1)
		return (double)k + 1;
	if (alpha <= 0)
		return 1;
	return (1 - pow(alpha, (double)k + 1)) / (1 - alpha);
}

static void copy_id(char *dst, size_t cap, const char *src)
{
	size_t n = strlen(src);
	if (n >= cap)
		n = cap - 1;
	memcpy(dst, src, n);
	dst[n] = '\0';
}

/* The MTP heads: one decoder layer of the target and its lm-head. */
static void mtp_of(struct spec_draft *x, const struct perf_model *pm)
{
	double L = pm->layers > 0 ? pm->layers : 1;
	x->ns_per_token = pm->ns_per_token / L;
	x->ns_weights = pm->ns_weights / L;
	x->ns_weights_mv = pm->ns_weights_mv / L;
	x->matvec_max_tokens = pm->matvec_max_tokens;
	if (pm->experts > 0 && pm->moe_layers > 0) {
		x->experts = pm->experts;
		x->routing = pm->routing;
		x->ns_per_expert_token = pm->ns_per_expert_token / pm->moe_layers;
		x->ns_per_expert = pm->ns_per_expert / pm->moe_layers;
		x->ns_per_expert_mv = pm->ns_per_expert_mv / pm->moe_layers;
	}
	x->ns_per_seq = pm->ns_per_seq;
	x->ns_lm_head = pm->ns_lm_head;
	x->ns_lm_head_mv = pm->ns_lm_head_mv;
	x->ns_per_pair = pm->ns_per_pair / L;
	x->ns_per_kv_token = pm->ns_per_kv_token / L;
	x->ns_comm_fixed = pm->ns_allreduce_fixed / L;
	x->ns_comm_per_token = pm->ns_allreduce_per_token / L;
}

int spec_model_init(struct spec_model *sm, const struct perf_model *pm,
		    const struct catalog *cat, const struct perf_opts *o, struct diag *d)
{
	memset(sm, 0, sizeof(*sm));
	const struct spec_opts *so = o->spec;
	if (!so || so->method == SPEC_OFF)
		return 0;
	if (so->k < 1 || so->k > SPEC_K_MAX)
		return diag_set(d, DIAG_EINPUT, "speculative.k %d: expected a whole number from 1 "
				"to %d", (int)so->k, SPEC_K_MAX);
	sm->method = so->method;
	sm->k = so->k;
	sm->overhead_ns = pm->engine.spec_draft_overhead_us * 1e3;
	if (so->method == SPEC_MTP) {
		copy_id(sm->draft_id, sizeof(sm->draft_id), pm->model_id);
		mtp_of(&sm->d, pm);
		return 0;
	}
	const struct cat_model *dm = so->draft_model ? catalog_model(cat, so->draft_model) : NULL;
	if (!dm)
		return diag_set(d, DIAG_EINPUT, "speculative.draft_model '%s': expected a model "
				"of the catalogue (agentcap catalog lists them)",
				so->draft_model ? so->draft_model : "");
	const struct cat_model *tm = catalog_model(cat, pm->model_id);
	if (tm && tm->vocab_size != dm->vocab_size)
		return diag_set(d, DIAG_EINPUT, "speculative.draft_model '%s' has a vocabulary of "
				"%lld tokens, the target '%s' one of %lld (expected the same "
				"tokenizer)", dm->id, (long long)dm->vocab_size, tm->id,
				(long long)tm->vocab_size);
	struct perf_opts dopt = *o;
	dopt.model = dm->id;
	dopt.spec = NULL;
	dopt.ep = 1;
	dopt.gpu_expert_fraction = 1;
	struct perf_model dp;
	int rc = perf_model_init_opts(&dp, cat, &dopt, d);
	if (rc)
		return rc;
	copy_id(sm->draft_id, sizeof(sm->draft_id), dp.model_id);
	struct spec_draft *x = &sm->d;
	x->overhead_ns = dp.overhead_ns;
	x->ns_per_token = dp.ns_per_token;
	x->ns_weights = dp.ns_weights;
	x->ns_weights_mv = dp.ns_weights_mv;
	x->matvec_max_tokens = dp.matvec_max_tokens;
	if (dp.experts > 0) {
		x->experts = dp.experts;
		x->routing = dp.routing;
		x->ns_per_expert_token = dp.ns_per_expert_token;
		x->ns_per_expert = dp.ns_per_expert;
		x->ns_per_expert_mv = dp.ns_per_expert_mv;
	}
	x->ns_per_seq = dp.ns_per_seq;
	x->ns_lm_head = dp.ns_lm_head;
	x->ns_lm_head_mv = dp.ns_lm_head_mv;
	x->ns_per_pair = dp.ns_per_pair + dp.ns_per_sw_pair;
	x->ns_per_kv_token = dp.ns_per_kv_token + dp.ns_per_sw_kv_token;
	x->ns_comm_fixed = dp.ns_allreduce_fixed + dp.ns_pp_fixed;
	x->ns_comm_per_token = dp.ns_allreduce_per_token + dp.ns_pp_per_token;
	x->floors = dp.floors;
	return 0;
}

double spec_draft_step_ns(const struct spec_model *sm, double seqs, double context)
{
	const struct spec_draft *x = &sm->d;
	if (!(seqs > 0))
		return 0;
	/* a decode step's shape: each new token attends to its context and
	 * itself; KV touched is the context after the step plus the tokens
	 * written (perf_model.c's shape_of) */
	double t = seqs, p = context + seqs, k = context + 2 * seqs;
	bool mv = t <= x->matvec_max_tokens;
	double ops = fmax(x->ns_per_token * t, mv ? x->ns_weights_mv : x->ns_weights);
	double touched = 0;
	if (x->experts > 0) {
		touched = moe_distinct_experts(&x->routing, t);
		ops += fmax(x->ns_per_expert_token * t,
			    (mv ? x->ns_per_expert_mv : x->ns_per_expert) * touched);
	}
	ops += fmax(x->ns_per_seq * seqs, mv ? x->ns_lm_head_mv : x->ns_lm_head);
	ops += fmax(x->ns_per_pair * p, x->ns_per_kv_token * k);
	double g = x->overhead_ns + ops + x->ns_comm_fixed + x->ns_comm_per_token * t;
	double launch = floors_launch_ns(&x->floors, seqs, seqs, t, touched);
	if (launch > ops)
		g += launch - ops;
	if (x->floors.host_overlap)
		g = fmax(g - x->floors.host_ns, x->floors.host_ns);
	return g;
}

/* The k draft steps of one verify step whose sequences start from `context`. */
static double draft_steps(const struct spec_model *sm, double seqs, double context)
{
	double sum = 0;
	for (int32_t j = 0; j < sm->k; j++)
		sum += spec_draft_step_ns(sm, seqs, context + (double)j * seqs);
	return sum;
}

/* Sum of f(i) = draft_steps(seqs, c0 + i g) over integers i in [a, e).  f
 * is convex and piecewise affine in i (a sum of maxima of affine terms), so
 * a piece whose midpoint lies on the chord between its ends is affine and
 * sums exactly as n (f(a) + f(e-1)) / 2; any other piece is halved. */
static double run_piece(const struct spec_model *sm, double seqs, double c0, double g,
			double a, double e, double fa, double fl, int depth)
{
	double n = e - a;
	if (n <= 2)
		return n == 1 ? fa : fa + fl;
	double last = e - 1;
	double m = floor((a + last) / 2);
	double fm = draft_steps(sm, seqs, c0 + m * g);
	double chord = fa + (fl - fa) * (m - a) / (last - a);
	if (depth >= 48 || fabs(fm - chord) <= 1e-9 * fmax(1.0, fabs(fm)))
		return n * (fa + fl) / 2;
	double fm1 = draft_steps(sm, seqs, c0 + (m + 1) * g);
	return run_piece(sm, seqs, c0, g, a, m + 1, fa, fm, depth + 1) +
	       run_piece(sm, seqs, c0, g, m + 1, e, fm1, fl, depth + 1);
}

double spec_draft_run_ns(const struct spec_model *sm, const struct perf_batch *b, int64_t steps)
{
	if (sm->method == SPEC_OFF || b->spec_seqs <= 0 || steps <= 0)
		return 0;
	double seqs = (double)b->spec_seqs, c0 = (double)b->spec_context, g = b->spec_advance;
	double n = (double)steps;
	double fa = draft_steps(sm, seqs, c0);
	double fl = steps > 1 ? draft_steps(sm, seqs, c0 + (n - 1) * g) : fa;
	return run_piece(sm, seqs, c0, g, 0, n, fa, fl, 0) + n * (double)sm->k * sm->overhead_ns;
}

struct perf_batch spec_verify_batch(int32_t seqs, int64_t context, int32_t k,
				    double tokens_per_step)
{
	int64_t pos = (int64_t)k + 1;
	int64_t s = seqs;
	return (struct perf_batch){
		.new_tokens = s * pos, .seqs = seqs, .decode_seqs = seqs,
		.attn_pairs = s * (pos * context + pos * (pos + 1) / 2),
		.kv_read_tokens = s * (context + pos), .spec_seqs = seqs,
		.spec_context = s * context, .spec_advance = (double)seqs * tokens_per_step };
}

int spec_memory(const struct catalog *cat, const struct cat_model *target,
		const struct cat_weight_format *wf, const struct cat_kv_dtype *kv,
		const struct spec_opts *so, int tp, int pp, double *weight_bytes,
		double *kv_bytes_per_token, struct diag *d)
{
	(void)pp; /* the drafter sits with the last stage, split over its tp GPUs */
	*weight_bytes = 0;
	*kv_bytes_per_token = 0;
	if (!so || so->method == SPEC_OFF)
		return 0;
	double t = tp > 0 ? tp : 1;
	if (so->method == SPEC_MTP) {
		double L = target->layers > 0 ? (double)target->layers : 1;
		double layer = (double)target->linear_params / L * wf->bits_per_weight / 8.0;
		double io = 2.0 * (double)target->hidden_size * (double)target->vocab_size *
			    wf->embedding_bits / 8.0;
		*weight_bytes = (layer + io) / t;
		double kvl = target->kv_layers > 0 ? (double)target->kv_layers : L;
		double frac = 1;
		if (target->attention != CAT_ATTN_MLA && target->kv_heads > 0)
			frac = ceil((double)target->kv_heads / t) / (double)target->kv_heads;
		*kv_bytes_per_token = (double)mem_kv_bytes_per_token(target, kv) / kvl * frac;
		return 0;
	}
	const struct cat_model *dm = so->draft_model ? catalog_model(cat, so->draft_model) : NULL;
	if (!dm)
		return diag_set(d, DIAG_EINPUT, "speculative.draft_model '%s': expected a model "
				"of the catalogue (agentcap catalog lists them)",
				so->draft_model ? so->draft_model : "");
	*weight_bytes = (double)mem_weights_bytes(dm, wf) / t;
	double frac = 1;
	if (dm->attention != CAT_ATTN_MLA && dm->kv_heads > 0)
		frac = ceil((double)dm->kv_heads / t) / (double)dm->kv_heads;
	*kv_bytes_per_token = (double)mem_kv_context_bytes_per_token(dm, kv) * frac;
	return 0;
}
