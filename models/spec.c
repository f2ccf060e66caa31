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

#include <gsl/gsl_errno.h>
#include <gsl/gsl_roots.h>

#include <math.h>
#include <string.h>

#include "base/outkind.h"
#include "models/memory.h"
#include "models/perf_model.h"

static const char *const METHOD_NAMES[SPEC_N_METHODS] = {"off", "draft", "mtp", "eagle3",
							 "ngram", "suffix"};

const char *spec_method_name(enum spec_method m)
{
	return (unsigned)m < SPEC_N_METHODS ? METHOD_NAMES[m] : "off";
}

bool spec_method_parse(const char *s, enum spec_method *out)
{
	for (int i = 0; i < SPEC_N_METHODS; i++)
		if (strcmp(s, METHOD_NAMES[i]) == 0) {
			*out = (enum spec_method)i;
			return true;
		}
	return false;
}

bool spec_method_model_free(enum spec_method m)
{
	return m == SPEC_NGRAM || m == SPEC_SUFFIX;
}

_Static_assert(OUT_KINDS == 4, "spec_default_acceptance has a figure per output kind");

/* Published acceptance, as mean acceptance lengths (tokens per verify
 * step), by output kind: unknown, code, structured, prose.
 *
 * EAGLE-3: RedHatAI/Llama-3.3-70B-Instruct-speculator.eagle3 measured in
 * the nebius/EAGLE3-Llama-3.3-70B-Instruct model card ("Comparison with
 * Public Checkpoints": MT-bench 2.88, HumanEval 3.62, GSM8K 3.29 at
 * temperature 1 and K = 7; read 2026-12-03): code HumanEval, prose
 * MT-bench, the others the mean of the three.
 *
 * n-gram and suffix: Arctic Inference's docs/suffix-decoding.rst, "Key
 * Benchmarks" (vLLM v0.8.4, Llama-3.1-8B-Instruct; read 2026-12-03): decode
 * speed without speculation / with n-gram / with suffix decoding, 75.8 /
 * 175 / 286 tok/s on SWE-Bench (OpenHands agent traces), 77.2 / 100 / 148
 * on HumanEval, 76.0 / 91.2 / 113 on ShareGPT.  A model-free drafter costs
 * the 8B target almost nothing at batch 1, so the speed-up is close to the
 * tokens per verify step (and below them: the verify step costs a little
 * more than a plain one): 2.31, 1.30, 1.20 (n-gram) and 3.77, 1.92, 1.49
 * (suffix).  Agent traffic, code and structured output take the SWE-Bench
 * figure, prose ShareGPT's.  The draft length is not stated: n-gram's is
 * taken as 5, vLLM's documented n-gram example (num_speculative_tokens 5);
 * suffix decoding speculates adaptively up to its tree depth (64), taken
 * as SPEC_K_MAX. */
static const struct spec_default_acceptance EAGLE3_DEFAULT = {
	7, {3.26, 3.62, 3.26, 2.88},
	"EAGLE-3 (RedHatAI Llama-3.3-70B speculator): mean acceptance length 3.62 on HumanEval, "
	"2.88 on MT-bench, 3.29 on GSM8K at k 7 (nebius/EAGLE3-Llama-3.3-70B-Instruct model card, "
	"read 2026-12-03)"};
static const struct spec_default_acceptance NGRAM_DEFAULT = {
	5, {2.31, 2.31, 2.31, 1.20},
	"n-gram on vLLM v0.8.4, Llama-3.1-8B: 175 vs 75.8 tok/s on SWE-Bench, 91.2 vs 76.0 on "
	"ShareGPT, taken as tokens per step at k 5 (Arctic Inference docs/suffix-decoding.rst, "
	"read 2026-12-03)"};
static const struct spec_default_acceptance SUFFIX_DEFAULT = {
	SPEC_K_MAX, {3.77, 3.77, 3.77, 1.49},
	"suffix decoding on vLLM v0.8.4, Llama-3.1-8B: 286 vs 75.8 tok/s on SWE-Bench, 113 vs 76.0 "
	"on ShareGPT, taken as tokens per step at k 16 (Arctic Inference "
	"docs/suffix-decoding.rst, read 2026-12-03)"};

const struct spec_default_acceptance *spec_default_acceptance(enum spec_method m)
{
	return m == SPEC_EAGLE3 ? &EAGLE3_DEFAULT
	       : m == SPEC_NGRAM ? &NGRAM_DEFAULT
	       : m == SPEC_SUFFIX ? &SUFFIX_DEFAULT
				   : NULL;
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

double spec_draft_rate(double alpha, int32_t k)
{
	if (k <= 0)
		return 0;
	return (spec_expected_tokens(alpha, k) - 1) / (double)k;
}

struct tokens_eq {
	double target;
	int32_t k;
};

static double tokens_gap(double alpha, void *p)
{
	const struct tokens_eq *q = p;
	return spec_expected_tokens(alpha, q->k) - q->target;
}

int spec_alpha_from_tokens(double tokens, int32_t k, const char *what, double *alpha,
			   struct diag *d)
{
	*alpha = 0;
	if (k < 1 || k > SPEC_K_MAX)
		return diag_set(d, DIAG_EINPUT, "%s: k %d (expected a draft length from 1 to %d)", what,
				(int)k, SPEC_K_MAX);
	double hi = (double)k + 1;
	if (!isfinite(tokens) || tokens < 1 || tokens > hi)
		return diag_set(d, DIAG_EINPUT, "%s: %.6g tokens per verify step (expected 1 to %d "
				"at k %d)", what, tokens, (int)k + 1, (int)k);
	if (tokens - 1 <= 1e-12) {
		*alpha = 0;
		return 0;
	}
	if (hi - tokens <= 1e-12) {
		*alpha = 1;
		return 0;
	}
	/* E(alpha) is continuous and strictly rising on [0, 1] and the target
	 * lies strictly between E(0) and E(1), so the bracket is valid and
	 * Brent's method neither fails nor calls GSL's error handler (left as
	 * it is: it is the library's global) */
	struct tokens_eq q = {tokens, k};
	gsl_function f = {.function = tokens_gap, .params = &q};
	gsl_root_fsolver *sv = gsl_root_fsolver_alloc(gsl_root_fsolver_brent);
	if (!sv)
		return diag_set(d, DIAG_ENOMEM, "%s: out of memory for the root finder", what);
	int st = gsl_root_fsolver_set(sv, &f, 0.0, 1.0);
	double lo = 0, up = 1, x = 0.5;
	for (int it = 0; st == GSL_SUCCESS && it < 200; it++) {
		st = gsl_root_fsolver_iterate(sv);
		x = gsl_root_fsolver_root(sv);
		lo = gsl_root_fsolver_x_lower(sv);
		up = gsl_root_fsolver_x_upper(sv);
		if (gsl_root_test_interval(lo, up, 1e-14, 0) == GSL_SUCCESS)
			break;
	}
	gsl_root_fsolver_free(sv);
	if (st != GSL_SUCCESS)
		return diag_set(d, DIAG_EINTERNAL, "%s: the root finder failed (%s)", what,
				gsl_strerror(st));
	*alpha = x;
	return 0;
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
	if (spec_method_model_free(so->method)) {
		/* proposed on the host: the engine's overhead per draft step
		 * only (spec_draft_step_ns is 0 with every coefficient 0) */
		copy_id(sm->draft_id, sizeof(sm->draft_id), spec_method_name(so->method));
		return 0;
	}
	if (so->method == SPEC_MTP || so->method == SPEC_EAGLE3) {
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
	if (!so || so->method == SPEC_OFF || spec_method_model_free(so->method))
		return 0;
	double t = tp > 0 ? tp : 1;
	if (so->method == SPEC_MTP || so->method == SPEC_EAGLE3) {
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
