/* SPDX-License-Identifier: Apache-2.0
 * floors: what a step cannot go below, whatever its FLOPs and bytes.
 *
 * The roofline of models/perf_model.h charges each operation its FLOPs or
 * its bytes.  A step on many GPUs at a small batch has little of either
 * per GPU, and is then held up by costs that do not shrink with the work:
 *
 *   - kernel launches: every kernel holds the GPU's stream for a least
 *     time (launch, grid start, tail) however little it computes; a step
 *     runs `kernels` of them one after the other, at the engine's per-
 *     kernel cost with CUDA graphs (decode batches up to graph_max_seqs)
 *     or launched one by one;
 *   - collectives: all-reduces under tensor parallelism (in perf_model.c,
 *     latency + size / bandwidth) and, under expert parallelism, one
 *     all-to-all dispatch and one combine per MoE layer (here);
 *   - host: the engine's scheduler and input preparation per step;
 *   - load imbalance: under expert parallelism the GPU holding the busiest
 *     experts sets the pace: the expected maximum of the per-GPU loads
 *     under uniform top-k routing, not their mean.
 *
 * How they combine (perf_model.c):
 *
 *   gpu  = fixed + max(roofline of the operations, kernels x per-kernel)
 *          + collectives
 *   step = host + gpu             (host work precedes the step: vLLM, TRT-LLM)
 *        = max(host, gpu)         (host_overlap: SGLang's overlap scheduler)
 *
 * The kernel floor and the roofline overlap (a kernel whose work takes
 * longer than the floor hides it; the sum over kernels of max(work, floor)
 * is at least the larger of the two sums), collectives do not (a TP step
 * waits for each all-reduce), and `fixed` keeps the engine's per-layer
 * gaps and the family's per-step GPU cost that the calibration set fitted.
 *
 * Plain data, no pointers: copied inside struct perf_model.
 */
#ifndef MODELS_FLOORS_H
#define MODELS_FLOORS_H

#include <stdbool.h>

#include "models/catalog.h"
#include "models/engine.h"

/* Kernels one decode step launches, per layer kind, counted from the
 * model code of vLLM/SGLang (collectives not included; they are charged
 * as collectives):
 *   attention (GQA): residual-add + RMSNorm, QKV GEMM, rotary, KV-cache
 *     write, attention, split-KV combine, output GEMM                 7
 *   attention (MLA): the same plus the latent path: fused q_a/kv_a GEMM,
 *     q_a norm, kv_a norm, q_b GEMM, rotary, W_UK absorb BMM, cache
 *     write, MLA decode + combine, W_UV BMM, output GEMM, norm        12
 *   linear attention (Gated DeltaNet): norm, in-projection, short conv,
 *     gates, recurrent update, gated norm, out-projection             7
 *   dense MLP: norm, gate/up GEMM, activation, down GEMM              4
 *   MoE: norm, router GEMM, top-k + weights, token alignment, grouped
 *     gate/up GEMM, activation, grouped down GEMM, weighted sum       8
 *     each shared expert: gate/up GEMM, activation, down GEMM, add    4
 *   once per step: embedding, final norm, lm-head GEMM, sampling
 *     (penalties, softmax, sample, gather)                            7 */
#define FLOORS_KERNELS_GQA 7
#define FLOORS_KERNELS_MLA 12
#define FLOORS_KERNELS_LINEAR_ATTN 7
#define FLOORS_KERNELS_DENSE_MLP 4
#define FLOORS_KERNELS_MOE 8
#define FLOORS_KERNELS_SHARED_EXPERT 4
#define FLOORS_KERNELS_STEP 7

struct floors {
	double kernels;            /* kernels of one step (every layer + once) */
	double kernel_graph_ns;    /* per kernel inside a CUDA graph; 0 none */
	double kernel_eager_ns;    /* per kernel launched one by one; 0 none */
	double graph_max_seqs;     /* largest decode batch run as a graph */
	bool host_overlap;         /* step = max(host, gpu) */
	double host_ns;            /* the engine's host work per step */
	/* expert parallelism */
	int ep;                    /* GPUs the routed experts are spread over
				      (whole experts); 1: split by TP */
	double experts;            /* routed experts per MoE layer */
	double per_token;          /* experts per token */
	double a2a_fixed_ns;       /* per step: latency of every dispatch and
				      combine */
	double a2a_ns_per_token;   /* per step and new token: their bytes */
};

/* Kernels of one step of model m (see the counts above). */
double floors_kernels_per_step(const struct cat_model *m);

/* Fill f for model m under engine parameters e (after family overrides),
 * with ep expert-parallel GPUs (1 = none), the model's MoE layer count,
 * hidden size, the peer link's bytes/s and latency.  ep > 1 requires a
 * mixture of experts whose routed experts divide evenly over ep GPUs. */
void floors_init(struct floors *f, const struct cat_model *m, const struct engine_params *e,
		 int ep, double moe_layers, double link_bytes_s, double link_latency_ns);

/* Kernel floor of a step: kernels x the per-kernel cost, graphed when the
 * step is decode only with at most graph_max_seqs sequences. */
double floors_launch_ns(const struct floors *f, double seqs, double decode_seqs,
			double new_tokens);

/* Expected busiest-GPU load over the mean load under expert parallelism,
 * >= 1 (1 without EP).  n_items items (token-expert assignments, or the
 * distinct experts touched) fall uniformly on ep GPUs; the maximum of ep
 * near-binomial counts is mean + sd sqrt(2 ln ep) (the Gaussian extreme-
 * value bound), never above n_items and never below the mean. */
double floors_imbalance(const struct floors *f, double n_items, double per_gpu_capacity);

/* All-to-all dispatch and combine of one step of `tokens` new tokens. */
double floors_alltoall_ns(const struct floors *f, double tokens);

#endif
