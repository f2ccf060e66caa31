/* SPDX-License-Identifier: Apache-2.0
 * perf: how long one engine step takes on a given hardware/model pair.
 *
 * The simulator describes a step by aggregate counts (struct perf_batch) and
 * asks for its duration.  For a stable decode batch it asks for the total of
 * k consecutive steps at once (perf_decode_run_ns), which lets the simulator
 * advance many steps in one event: the model must return exactly the sum of
 * perf_step_ns over the k steps, where step i has every sequence's context
 * one token longer than step i-1.
 */
#ifndef MODELS_PERF_H
#define MODELS_PERF_H

#include <stdint.h>

struct perf_batch {
	int64_t new_tokens;    /* tokens computed this step (prefill + decode) */
	int32_t seqs;          /* sequences in the batch */
	int32_t decode_seqs;   /* of which decoding one token */
	int64_t attn_pairs;    /* sum over new tokens of the keys each attends to
				  (its context including itself) */
	int64_t kv_read_tokens;/* sum over sequences of context after the step */
	/* speculative decoding (models/spec.h); all 0 without it */
	int32_t spec_seqs;     /* of the decode sequences, those verifying a
				  draft: k + 1 positions each, counted in
				  new_tokens, attn_pairs and kv_read_tokens */
	int64_t spec_context;  /* their context before the step, summed */
	double spec_advance;   /* tokens they gain per step together
				  (expected): how a decode run's context grows */
};

struct perf_model; /* defined in models/perf_model.h by the models module */

double perf_step_ns(const struct perf_model *pm, const struct perf_batch *b);

/* Total ns of k >= 1 decode-only steps starting from batch b0 (b0 has
 * new_tokens == decode_seqs == seqs); step i adds i*seqs to attn_pairs and
 * kv_read_tokens.  Equal to the sum of perf_step_ns over those steps.
 * With speculative decoding (b0.spec_seqs == seqs, new_tokens = (k + 1)
 * seqs) the context grows by spec_advance per step instead: step i adds
 * i x spec_advance to kv_read_tokens and spec_context and (k + 1) times that
 * to attn_pairs, fractions allowed. */
double perf_decode_run_ns(const struct perf_model *pm, const struct perf_batch *b0, int64_t k);

#endif
