/* SPDX-License-Identifier: Apache-2.0
 * floors: what a step cannot go below, whatever its FLOPs and bytes.
 *
 * The roofline of models/perf_model.h charges each operation its FLOPs or
 * its bytes.  A step on many GPUs at a small batch has little of either
 * per GPU, and is then held up by costs that do not shrink with the work:
 *
 *   - kernel launches: every kernel holds the GPU's stream for a least
 *     time (launch, grid start, tail) however little it computes, longer
 *     for a GEMM-class kernel than for an elementwise one; a step runs
 *     its kernels one after the other, at the engine's per-kernel costs
 *     inside CUDA graphs (decode batches up to graph_max_seqs) or at the
 *     host's launch rate when launched one by one;
 *   - collectives: all-reduces under tensor parallelism (in perf_model.c,
 *     latency + size / bandwidth) and, under expert parallelism, one
 *     all-to-all dispatch and one combine per MoE layer (here);
 *   - host: the engine's scheduler and input preparation per step;
 *   - load imbalance: under expert parallelism the GPU holding the busiest
 *     experts sets the pace: the expected maximum of the per-GPU loads
 *     under uniform top-k routing, not their mean;
 *   - piecewise graphs: an engine whose decode graphs are captured in
 *     pieces between the attention layers (vLLM V1 before full CUDA
 *     graphs became its default) runs each layer's attention eagerly from
 *     Python between two graph replays; each attention layer then costs
 *     the engine's piecewise_layer_us more than inside one full graph;
 *   - per-expert launches: an engine whose MoE GEMMs for weight-only
 *     quantized formats launch one kernel per expert (vLLM's first Marlin
 *     MoE kernel, v0.5-v0.7: a host loop over every expert of the layer)
 *     pays, for each of the two expert GEMMs of a MoE layer, one kernel per
 *     expert on the GPU: a short GEMM for each expert the batch routes
 *     tokens to, an almost empty kernel for each it does not.
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
 * model code of vLLM/SGLang (collectives are charged as collectives), as
 * (GEMM-class, small) kernels.  A GEMM-class kernel (dense, grouped-expert
 * or batched matmul) has a longer least time at a small batch than a small
 * elementwise or reduction kernel:
 *   attention (GQA): QKV and output GEMMs; residual-add + RMSNorm, rotary,
 *     KV-cache write, attention, split-KV combine                   2 + 5
 *   attention (MLA): fused q_a/kv_a GEMM, q_b GEMM, W_UK and W_UV absorb
 *     BMMs, output GEMM; norm, q_a and kv_a norms, rotary, cache write,
 *     MLA decode, combine                                             5 + 7
 *   linear attention (Gated DeltaNet): in- and out-projections; norm,
 *     short conv, gates, recurrent update, gated norm                 2 + 5
 *   dense MLP: gate/up and down GEMMs; norm, activation               2 + 2
 *   MoE: router GEMM, grouped gate/up and down GEMMs; norm, top-k with
 *     weights, token alignment, activation, weighted sum              3 + 5
 *     each shared expert: gate/up and down GEMMs; activation, add     2 + 2
 *   once per step: lm-head GEMM; embedding, final norm, sampling
 *     (penalties, softmax, sample, gather)                            1 + 6 */
#define FLOORS_GEMM_GQA 2
#define FLOORS_SMALL_GQA 5
#define FLOORS_GEMM_MLA 5
#define FLOORS_SMALL_MLA 7
#define FLOORS_GEMM_LINEAR_ATTN 2
#define FLOORS_SMALL_LINEAR_ATTN 5
#define FLOORS_GEMM_DENSE_MLP 2
#define FLOORS_SMALL_DENSE_MLP 2
#define FLOORS_GEMM_MOE 3
#define FLOORS_SMALL_MOE 5
#define FLOORS_GEMM_SHARED_EXPERT 2
#define FLOORS_SMALL_SHARED_EXPERT 2
#define FLOORS_GEMM_STEP 1
#define FLOORS_SMALL_STEP 6

/* Share of a link's per-direction bandwidth an expert-parallel all-to-all
 * moves between GPUs.  DeepEP's normal kernels on H800s (deepseek-ai/DeepEP,
 * V1 README, now docs/legacy.md, 2025: NVLink 200 GB/s per direction, ~160
 * GB/s "maximum"; EP 8 in one node, 4,096 tokens per GPU, hidden 7168,
 * top-8 experts in 4 of the 8 GPUs' expert groups, FP8 dispatch) dispatch
 * at 153 GB/s of received bytes counting the GPU's own tokens; the 3.5 of
 * each token's 4 copies that cross NVLink move at 134 GB/s, 0.67 of the
 * link.  Its combine (BF16) measured 158 GB/s.  All-reduces reach more
 * (PERF_LINK_EFF 0.9): NCCL moves large contiguous buffers, an all-to-all
 * scatters a token's rows to several GPUs. */
#define FLOORS_A2A_LINK_EFF 0.67

struct floors {
	double gemm_kernels;       /* GEMM-class kernels of one step */
	double small_kernels;      /* the other kernels of one step */
	double kernel_graph_ns;    /* per small kernel inside a CUDA graph; 0 none */
	double gemm_ns;            /* per GEMM-class kernel (its least time
				      at a small batch); 0 none */
	double kernel_eager_ns;    /* per kernel launched one by one: the host's
				      launch rate (a kernel costs the larger of
				      this and its own least time); 0 none */
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
	double a2a_dispatch_ns_per_token; /* of which one MoE layer's dispatch */
	double a2a_combine_ns_per_token;  /* and one MoE layer's combine */
	/* per-expert launches (0 = the engine runs grouped expert GEMMs) */
	double expert_kernels;     /* experts each GPU launches a kernel for,
				      per expert GEMM (experts / ep); 0 none */
	double expert_gemm_layers; /* MoE layers x 2 expert GEMMs */
	double expert_empty_ns;    /* a kernel for an expert no token chose,
				      inside a CUDA graph */
	double expert_eager_ns;    /* one such launch outside a graph */
	/* piecewise decode graphs (0 = whole-step graphs) */
	double attn_layers;        /* layers whose attention leaves the graph */
	double piecewise_ns;       /* extra per such layer in a graphed step */
};

/* GEMM-class and small kernels of one step of model m (the counts
 * above). */
void floors_kernels_per_step(const struct cat_model *m, double *gemm, double *small);

/* Fill f for model m under engine parameters e (after family overrides),
 * with ep expert-parallel GPUs (1 = none), the model's MoE layer count,
 * hidden size, the peer link's bytes/s and latency.  ep > 1 requires a
 * mixture of experts whose routed experts divide evenly over ep GPUs;
 * link_bytes_s is the all-to-all's (derated by FLOORS_A2A_LINK_EFF).
 * weight_only: the weight format is dequantized in the kernels (the path
 * an engine's per-expert kernels, e->expert_kernel_empty_us > 0, take). */
void floors_init(struct floors *f, const struct cat_model *m, const struct engine_params *e,
		 int ep, double moe_layers, double link_bytes_s, double link_latency_ns,
		 bool weight_only);

/* Expert-parallel all-to-all (the DP-attention + EP recipe of DeepEP and
 * vLLM/SGLang: each of the ep GPUs holds 1/ep of the step's tokens and
 * whole experts).  Dispatch sends a token's hidden vector once to every
 * other GPU that holds at least one of its k experts (DeepEP's normal
 * kernels: is_token_in_rank; the experts of one GPU share the copy), and
 * combine returns one vector per such GPU, its experts' outputs already
 * weighted and summed there.  Under uniform routing without replacement a
 * GPU holding E/ep of the E experts gets none of a token's k with
 * probability prod_{i<k} (E - E/ep - i) / (E - i), so a token travels to
 *     (ep - 1) (1 - that product)
 * other GPUs: k (ep - 1) / ep with one expert per GPU, fewer when a GPU
 * holds several (DeepSeek-V3, 256 experts, k 8, ep 8: 4.6, not 7).  0 for
 * ep <= 1. */
double floors_a2a_remote_gpus(double experts, double per_token, int ep);

/* Set f's all-to-all terms for `moe_layers` MoE layers of hidden size
 * `hidden`: per layer a dispatch of `dispatch_bytes` per element (FP8
 * checkpoints dispatch FP8 with one FP32 scale per 128 elements, DeepEP's
 * FP8 dispatch; others 16-bit) and a 16-bit combine, each a latency plus
 * its bytes over link_bytes_s (already derated by FLOORS_A2A_LINK_EFF),
 * each GPU sending its
 * 1/ep of the tokens.  Called by floors_init with 16-bit dispatch; a
 * caller that knows the format calls it again. */
void floors_set_alltoall(struct floors *f, double moe_layers, double hidden,
			 double dispatch_bytes, double link_bytes_s, double link_latency_ns);

/* True when a step of this shape runs as a captured CUDA graph: decode
 * only, at most graph_max_seqs sequences, an engine that captures. */
bool floors_graphed(const struct floors *f, double seqs, double decode_seqs, double new_tokens);

/* Kernel floor of a step: GEMM-class kernels x their least time plus small
 * kernels x theirs, inside a graph when the step is decode only with at
 * most graph_max_seqs sequences (plus, for piecewise graphs, attn_layers x
 * piecewise_ns); launched one by one, no kernel costs less than the host's
 * launch time.  With per-expert launches, `touched` (the
 * expected distinct experts a MoE layer's tokens go to) of each GPU's
 * expert kernels run as short GEMMs (a small kernel's least time) and the
 * rest as empty ones, in place of the two grouped GEMMs. */
double floors_launch_ns(const struct floors *f, double seqs, double decode_seqs,
			double new_tokens, double touched);

/* Kernels of one step (GEMM-class, small and per-expert). */
double floors_kernel_count(const struct floors *f);

/* Expected busiest-GPU load over the mean load under expert parallelism,
 * >= 1 (1 without EP).  n_items items (token-expert assignments, or the
 * distinct experts touched) fall uniformly on ep GPUs; the maximum of ep
 * near-binomial counts is mean + sd sqrt(2 ln ep) (the Gaussian extreme-
 * value bound), never above n_items and never below the mean. */
double floors_imbalance(const struct floors *f, double n_items, double per_gpu_capacity);

/* All-to-all dispatch and combine of one step of `tokens` new tokens. */
double floors_alltoall_ns(const struct floors *f, double tokens);

#endif
