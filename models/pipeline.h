/* SPDX-License-Identifier: Apache-2.0
 * pipeline: decode throughput with micro-batches in flight across pipeline
 * stages (pipeline_parallel_size P > 1).
 *
 * The step model (models/perf_model.h) gives the time of one batch through
 * every stage in turn: the stages' work, the P - 1 hand-offs and the
 * engine's host work.  Engines keep up to P batches in flight instead, one
 * per stage (vLLM V1: the executor's max_concurrent_batches is the pipeline
 * size and the engine core fills a batch queue of that depth, vLLM pull
 * 32359; vLLM V0: one scheduler per "virtual engine", P of them; TensorRT-LLM
 * and llama.cpp's prompt path: P micro-batches).  The running sequences are
 * split into M = min(P, seqs) micro-batches of b = ceil(seqs / M), and each
 * micro-batch cycles through the stages on its own:
 *
 *   R  = round trip of one micro-batch of b   (the step model at batch b:
 *        every stage's work + hand-offs + host, host not overlapped: a
 *        micro-batch's next step is scheduled after its last output arrives)
 *   s  = busiest stage's GPU time per micro-batch
 *      = (R - host - hand-offs - head) / P + head    (layers split evenly,
 *        the lm-head and sampling on the last stage, vLLM's get_pp_indices)
 *   C  = max(R, M s, M host)                   time between two tokens of a
 *        sequence: its micro-batch's round trip, unless the busiest stage or
 *        the single host thread, serving all M micro-batches, is slower
 *   throughput = seqs / C
 *   bubble = 1 - M (R - host - hand-offs) / (P C): the share of the P GPUs'
 *            time idle (in hand-offs, host work, and waiting on the busiest
 *            stage, the last one with the lm-head)
 *
 * With one sequence (M = 1) C = R: no overlap, the step model's figure.  With
 * P micro-batches C = R + max(0, (P - 1) head - host - hand-offs, ...): the
 * whole pipeline's work of one micro-batch per cycle, P times the sequences
 * of one batch in flight, less the hand-offs and host time in the loop (the
 * bubbles).  A sequence's time per token is C >= R: never below the sum over
 * its stages.
 *
 * Not modelled: stages made uneven by a layer count that P does not divide
 * (vLLM gives the remainder to the stages before the last), prefill chunks
 * interleaved with decode micro-batches, and schedulers that pack all
 * running sequences into one micro-batch (vLLM issue 41682) -- the formula
 * is the balanced pipeline the engines aim for.
 */
#ifndef MODELS_PIPELINE_H
#define MODELS_PIPELINE_H

#include <stdint.h>

#include "models/perf.h"
#include "models/perf_model.h"

/* The time between two steps of one of m micro-batches in flight over pm's
 * pp stages (m clamped to [1, pp]), that micro-batch's step being b: C of
 * the formula above with R = the step model's time of b, its host in
 * series.  b may mix prefill and decode; speculative verify steps are not
 * supported (b->spec_seqs must be 0).  0 for an empty batch. */
double pipeline_batch_ns(const struct perf_model *pm, int m, const struct perf_batch *b);

/* The sum of pipeline_batch_ns over k decode steps from b0 (a decode-only
 * batch, each step one token more per sequence, as perf_decode_run_ns):
 * exact to rounding, in a few step evaluations and O(log k) probes. */
double pipeline_batch_run_ns(const struct perf_model *pm, int m, const struct perf_batch *b0,
			     int64_t k);

/* One decode step of a pipelined replica. */
struct pipeline_step {
	int stages;            /* P */
	int micro_batches;     /* M = min(P, seqs) */
	int32_t micro_seqs;    /* b = ceil(seqs / M) */
	double round_ns;       /* R */
	double stage_ns;       /* s */
	double host_ns;        /* the engine's host work per micro-batch */
	double handoff_ns;     /* the P - 1 hand-offs of one micro-batch */
	double head_ns;        /* lm-head on the last stage */
	double cycle_ns;       /* C */
	double tok_s;          /* seqs / C */
	double tok_s_per_seq;  /* 1 / C */
	double bubble;         /* 1 - M (R - host - hand-offs) / (P C), in [0, 1) */
};

/* The decode step of `seqs` >= 1 sequences, each `context` >= 0 tokens long
 * before it, on pm's pipeline (pm->pp stages; pp = 1 gives the step model's
 * figure with M = 1). */
void pipeline_decode_step(const struct perf_model *pm, int32_t seqs, int64_t context,
			  struct pipeline_step *out);

/* The sum of cycle_ns over k >= 0 decode steps from `context`, every
 * sequence one token longer each step (pipeline_batch_run_ns of its
 * micro-batch). */
double pipeline_decode_run_ns(const struct perf_model *pm, int32_t seqs, int64_t context,
			      int64_t k);

#endif
