/* SPDX-License-Identifier: Apache-2.0
 * spec: speculative decoding in the step-time and memory models.
 *
 * A drafter proposes k tokens per decoding sequence, one autoregressive
 * step at a time; the target then runs one verify step over k + 1
 * positions of each such sequence and keeps the longest accepted prefix
 * plus one token of its own.  With every drafted token accepted
 * independently with probability alpha, the expected tokens a verify step
 * yields per sequence are
 *
 *     E = (1 - alpha^(k+1)) / (1 - alpha)        (k + 1 when alpha = 1)
 *
 * (Leviathan, Kalman and Matias, "Fast Inference from Transformers via
 * Speculative Decoding", ICML 2023, eq. 1).
 *
 * What a verify step costs is the target's own roofline (models/
 * perf_model.h) on the larger batch: k + 1 new tokens per decoding
 * sequence, each attending to its context, so the step is nearly free
 * while weight reads bind (small batch) and costs up to k + 1 times more
 * once FLOPs bind (large batch).  On top come the drafter's k steps and the
 * engine's draft overhead per draft step (engines.json,
 * spec_draft_overhead_us: proposer bookkeeping, rejection sampling, host
 * synchronisation).  The drafter is
 *
 *   - a draft model from the catalogue, run on the same GPUs with the same
 *     engine, weight format and tensor parallelism (vLLM's draft_model
 *     method): its decode step is the same per-operation roofline with its
 *     own coefficients and launch floor; or
 *   - the target's multi-token-prediction (MTP) heads: one extra decoder
 *     layer of the target plus its lm-head per draft step, as DeepSeek-V3's
 *     MTP module is built (arXiv:2412.19437 sec. 2.2: a transformer block
 *     and the shared output head; its published checkpoint counts the
 *     module at 14B beside the 671B main model);
 *   - an EAGLE-3 head (Li et al., arXiv:2503.01840: one decoder layer over
 *     the target's fused hidden states and an output head), priced as the
 *     MTP heads are;
 *   - a model-free drafter, vLLM's `ngram` (prompt lookup) or `suffix`
 *     (suffix trees over the prompt and earlier outputs, Oliaro et al.,
 *     arXiv:2411.04975): proposed on the host, so a draft step costs the
 *     engine's draft overhead and nothing on the GPUs, and no memory.
 *
 * Acceptance as vLLM logs it.  vLLM's SpecDecodingLogging (vllm/v1/
 * spec_decode/metrics.py) prints the draft acceptance rate, accepted /
 * drafted tokens, the mean acceptance length, 1 + accepted / drafts, and
 * the per-position acceptance rates, accepted at position i / drafts.
 * With every drafted token accepted independently with probability alpha
 * and k drafted per step, those are
 *
 *     draft rate  = alpha (1 - alpha^k) / ((1 - alpha) k)
 *     mean length = E above                    position i: alpha^i
 *
 * so each of them fixes alpha: spec_alpha_from_tokens solves E(alpha, k) =
 * target for alpha with GSL's Brent root finder (E rises strictly from 1
 * at alpha 0 to k + 1 at alpha 1).  Per-position rates give the mean
 * length 1 + sum p_i, which is what the speed depends on.
 *
 * Not modelled: the drafter's pass over prompt tokens (small beside the
 * target's prefill), sliding-window and linear-attention layers of a draft
 * model (priced as full attention), and the k transient KV slots of
 * rejected positions.
 *
 * struct spec_model is plain data: copied inside struct perf_model.
 */
#ifndef MODELS_SPEC_H
#define MODELS_SPEC_H

#include <stdbool.h>
#include <stdint.h>

#include "base/diag.h"
#include "models/catalog.h"
#include "models/floors.h"
#include "models/moe.h"
#include "models/perf.h"

#define SPEC_K_MAX 16

enum spec_method { SPEC_OFF = 0, SPEC_DRAFT, SPEC_MTP, SPEC_EAGLE3, SPEC_NGRAM, SPEC_SUFFIX,
		   SPEC_N_METHODS };

/* "off", "draft", "mtp", "eagle3", "ngram", "suffix" (static). */
const char *spec_method_name(enum spec_method m);

/* The method named s; false when none is. */
bool spec_method_parse(const char *s, enum spec_method *out);

/* Whether m drafts on the host with no model (ngram, suffix). */
bool spec_method_model_free(enum spec_method m);

/* What to speculate with.  method SPEC_OFF (the zero value) is off. */
struct spec_opts {
	enum spec_method method;
	const char *draft_model;   /* SPEC_DRAFT: a catalogue model id */
	int32_t k;                 /* draft length, 1..SPEC_K_MAX */
};

/* Expected tokens one verify step yields per sequence (the formula above);
 * alpha in [0, 1], k >= 0. */
double spec_expected_tokens(double alpha, int32_t k);

/* vLLM's logged draft acceptance rate (accepted / drafted tokens) for a
 * per-token rate alpha and k drafted tokens: (E - 1) / k. */
double spec_draft_rate(double alpha, int32_t k);

/* The per-token rate alpha in [0, 1] whose expected tokens per verify step
 * at k (1..SPEC_K_MAX) are `tokens` (in [1, k + 1]): the inverse of
 * spec_expected_tokens.  0 and *alpha, or DIAG_EINPUT when tokens is out
 * of range (the message names `what`, e.g. the scenario key). */
int spec_alpha_from_tokens(double tokens, int32_t k, const char *what, double *alpha,
			   struct diag *d);

/* What a drafter's acceptance is when the scenario gives none: the mean
 * acceptance length a source measured at k_measured drafted tokens, by
 * enum out_kind (unknown, code, structured, prose), and the source.  NULL
 * for methods without a published figure (draft, mtp: their acceptance is
 * the scenario's, default 0.7). */
struct spec_default_acceptance {
	int32_t k_measured;
	double mean_length[4];    /* by enum out_kind */
	const char *source;       /* static */
};
const struct spec_default_acceptance *spec_default_acceptance(enum spec_method m);

/* A drafter's decode step as plain coefficients (ns, per GPU, after the
 * tensor-parallel split), the terms of perf_model.h's roofline that a
 * decode step of a dense or MoE model with full attention uses. */
struct spec_draft {
	double overhead_ns;        /* the drafter's fixed per-step cost */
	double ns_per_token, ns_weights;         /* dense matrices */
	double ns_per_expert_token, ns_per_expert;/* routed experts */
	double experts;            /* 0: dense */
	struct moe_routing routing;
	double ns_per_seq, ns_lm_head;           /* lm-head */
	/* the weight terms of a step of at most matvec_max_tokens tokens
	 * (perf_model.h) */
	double ns_weights_mv, ns_per_expert_mv, ns_lm_head_mv, matvec_max_tokens;
	double ns_per_pair, ns_per_kv_token;     /* attention */
	double ns_comm_fixed, ns_comm_per_token; /* all-reduces */
	struct floors floors;      /* launch and host floors; zero for MTP heads
				      (their kernels run inside the target's
				      step, the engine overhead covers them) */
};

struct spec_model {
	enum spec_method method;   /* SPEC_OFF: everything below is 0 */
	int32_t k;
	char draft_id[CAT_ID_MAX]; /* the draft model, or the target (MTP) */
	double overhead_ns;        /* the engine's per draft step */
	struct spec_draft d;
};

struct perf_model;
struct perf_opts;

/* Fill sm for target pm (already initialised from o) and o->spec; off when
 * o->spec is NULL or its method SPEC_OFF.  0 or DIAG_EINPUT: k out of
 * range, a draft model the catalogue lacks, or one whose vocabulary differs
 * from the target's.  The catalogue does not record which models ship MTP
 * heads: MTP is accepted for any model, its heads priced as one decoder
 * layer. */
int spec_model_init(struct spec_model *sm, const struct perf_model *pm,
		    const struct catalog *cat, const struct perf_opts *o, struct diag *d);

/* One draft step of `seqs` sequences whose contexts (before the step) sum
 * to `context` tokens, in ns, the engine's draft overhead excluded. */
double spec_draft_step_ns(const struct spec_model *sm, double seqs, double context);

/* The drafting of `steps` consecutive verify steps from batch b (its
 * spec_seqs sequences drafting sm->k tokens each from spec_context tokens
 * of context, which grows by spec_advance per verify step): the drafter's
 * steps plus the engine's overhead per draft step, in ns.  0 when b has no
 * speculating sequence.  Summed in closed form per draft position (the
 * attention term split where its FLOP and byte sides cross), so the cost
 * does not grow with steps. */
double spec_draft_run_ns(const struct spec_model *sm, const struct perf_batch *b, int64_t steps);

/* A verify step of `seqs` decoding sequences with `context` tokens each
 * before it, drafting k tokens each, every one expected to yield
 * `tokens_per_step` tokens: k + 1 new tokens per sequence, each attending to
 * its context and the positions before it. */
struct perf_batch spec_verify_batch(int32_t seqs, int64_t context, int32_t k,
				    double tokens_per_step);

/* Memory a drafter adds per GPU of a tp x pp replica of `target` in weight
 * format wf and KV format kv: *weight_bytes of weights and
 * *kv_bytes_per_token per token of context (the drafter's own KV cache, one
 * entry per target token).  A draft model: its weights and KV split like the
 * target's; MTP heads: one decoder layer of the target (its linear
 * parameters over its layers) plus an embedding and an output head, which
 * for DeepSeek-V3 gives 13.3B against the 14B its card states, and one
 * layer's KV.  0 or DIAG_EINPUT (unknown draft model). */
int spec_memory(const struct catalog *cat, const struct cat_model *target,
		const struct cat_weight_format *wf, const struct cat_kv_dtype *kv,
		const struct spec_opts *so, int tp, int pp, double *weight_bytes,
		double *kv_bytes_per_token, struct diag *d);

#endif
