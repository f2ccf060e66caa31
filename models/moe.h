/* SPDX-License-Identifier: Apache-2.0
 * moe: how many experts a batch touches in a mixture-of-experts layer.
 *
 * A token picks k of a layer's E routed experts.  Under uniform routing a
 * given expert is missed by one token with probability 1 - k/E, so by a
 * batch of T tokens with probability (1 - k/E)^T, and the expected number of
 * distinct experts the batch touches (and whose weights the step must read)
 * is
 *     D(T) = E (1 - (1 - k/E)^T),
 * k for one token, growing with the batch until every expert is read.
 * Real routers are not uniform (popular experts), which lowers D at a given
 * T; uniform routing is the upper bound the memory traffic is planned for.
 *
 * Grouped expert GEMMs.  Engines run a MoE layer's experts as one grouped
 * GEMM (vLLM's and SGLang's fused_moe, DeepGEMM, CUTLASS grouped GEMMs):
 * the T k token rows are sorted by expert and each expert's rows are padded
 * to the kernel's M tile (vLLM moe_align_block_size pads every expert's
 * segment to BLOCK_SIZE_M; DeepGEMM's contiguous layout aligns each expert
 * to its M block), so the tensor cores compute the padded rows.  At a small
 * batch a touched expert gets T k / D rows, far fewer than a tile, and its
 * GEMM computes a whole tile per expert; as the batch grows the rows per
 * expert grow and the padding's share falls.  The weights are read once
 * per touched expert whatever its rows.
 *
 * A grouped GEMM whose rows per expert sit near the roofline's ridge
 * reaches neither peak: its weight loads and its MMAs overlap only in
 * part.  DeepGEMM's published FP8 grouped GEMMs on an H800 (deepseek-ai/
 * DeepGEMM README, February 2025; masked layout: 1 x 1024, 2 x 512 and
 * 4 x 256 rows per expert at 1233, 1040 and 932 TFLOPS for N 4096, K 7168;
 * contiguous layout: 4 x 8192 and 8 x 4096 rows) take 1.07-1.51x (median
 * 1.25x) the larger of their compute and memory times at the Hopper
 * family's achievable fractions, the most at the ridge.  Their time is
 * modelled as the Euclidean norm of the two, sqrt(c^2 + m^2): the larger
 * far from the ridge, 1.41x it at the ridge; it leaves the ten rows at
 * 0.94-1.30x (median 1.08x).  Their other losses (K 2048's short main
 * loop, wave quantisation over the SMs) are not modelled.
 */
#ifndef MODELS_MOE_H
#define MODELS_MOE_H

#include <stdbool.h>

/* Constants of one layer's routing, precomputed once. */
struct moe_routing {
	double experts;          /* E routed experts */
	double per_token;        /* k chosen per token */
	double log_miss;         /* log(1 - k/E); -inf when k == E */
};

/* Fill r for E experts and k per token (1 <= k <= E). */
void moe_routing_init(struct moe_routing *r, double experts, double per_token);

/* Expected distinct experts touched by `tokens` tokens (0 for none; the
 * formula is continuous in tokens, so fractional counts are allowed). */
double moe_distinct_experts(const struct moe_routing *r, double tokens);

/* Expected rows a grouped expert GEMM computes for `tokens` tokens when
 * every touched expert's rows are padded to `tile_rows` (<= 0: no padding,
 * T k).  A touched expert with fewer than half a tile costs one tile; past
 * that its padding averages half a tile (the remainders of many experts'
 * row counts spread evenly over the tile):
 *     rows = max(D(T) tile, T k + D(T) tile / 2),
 * continuous in T and equal to T k (1 + o(1)) once the experts' rows are
 * many tiles. */
double moe_padded_rows(const struct moe_routing *r, double tokens, double tile_rows);

/* Time of a grouped expert GEMM from its compute and memory times:
 * sqrt(c^2 + m^2), the rounded roofline corner above. */
double moe_grouped_ns(double compute_ns, double memory_ns);

/* Tokens at which the batch is expected to touch a `fraction` (in (0, 1))
 * of the experts: the smallest T with D(T) >= fraction x E. */
double moe_tokens_for_fraction(const struct moe_routing *r, double fraction);

#endif
