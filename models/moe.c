/* SPDX-License-Identifier: Apache-2.0
 * moe: expected distinct experts under uniform top-k routing (see moe.h).
 * D(T) = -E expm1(T log1p(-k/E)) keeps full precision for small T. */
#include "models/moe.h"

#include <assert.h>
#include <math.h>

void moe_routing_init(struct moe_routing *r, double experts, double per_token)
{
	assert(experts >= 1 && per_token >= 1 && per_token <= experts);
	r->experts = experts;
	r->per_token = per_token;
	r->log_miss = per_token >= experts ? -INFINITY : log1p(-per_token / experts);
}

double moe_distinct_experts(const struct moe_routing *r, double tokens)
{
	if (!(tokens > 0))
		return 0;
	if (isinf(r->log_miss))
		return r->experts;
	return -r->experts * expm1(tokens * r->log_miss);
}

double moe_tokens_for_fraction(const struct moe_routing *r, double fraction)
{
	assert(fraction > 0 && fraction < 1);
	if (isinf(r->log_miss))
		return 1;
	return ceil(log1p(-fraction) / r->log_miss);
}

double moe_padded_rows(const struct moe_routing *r, double tokens, double tile_rows)
{
	if (!(tokens > 0))
		return 0;
	double pairs = tokens * r->per_token;
	if (!(tile_rows > 0))
		return pairs;
	double d = moe_distinct_experts(r, tokens);
	return fmax(d * tile_rows, pairs + d * tile_rows / 2);
}

double moe_grouped_ns(double compute_ns, double memory_ns)
{
	return hypot(compute_ns, memory_ns);
}
