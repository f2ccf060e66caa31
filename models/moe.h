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

/* Tokens at which the batch is expected to touch a `fraction` (in (0, 1))
 * of the experts: the smallest T with D(T) >= fraction x E. */
double moe_tokens_for_fraction(const struct moe_routing *r, double fraction);

#endif
