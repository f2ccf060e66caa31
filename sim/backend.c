/* SPDX-License-Identifier: Apache-2.0
 * backend: API backends' timing and prompt caches (see backend.h). */
#include "sim/backend.h"

#include <math.h>
#include <string.h>

void hybrid_config_default(struct hybrid_config *c)
{
	memset(c, 0, sizeof(*c));
	c->spill_to = c->fallback_to = c->size_to = -1;
}

const char *hybrid_route_name(int route)
{
	return res_route_name(route);
}

int hybrid_config_check(const struct hybrid_config *c, struct diag *d)
{
	if (c->n < 0 || c->n > BACKEND_MAX)
		return diag_set(d, DIAG_EINPUT, "%d backends (expected 0 to %d)", (int)c->n, BACKEND_MAX);
	for (int32_t k = 0; k < c->n; k++) {
		const struct backend_config *b = &c->b[k];
		if (!(b->ttft_ns > 0) || !isfinite(b->ttft_ns) || !(b->ns_per_token > 0) ||
		    !isfinite(b->ns_per_token) || b->cache_min_tokens < 0 || b->cache_ttl_ns < 0)
			return diag_set(d, DIAG_EINPUT,
					"backends[%d] '%s': expected a TTFT > 0, an output speed > 0 and cache rules >= 0",
					(int)k, b->name);
	}
	const int32_t to[3] = {c->spill_to, c->fallback_to, c->size_to};
	for (int j = 0; j < 3; j++)
		if (to[j] < -1 || to[j] >= c->n)
			return diag_set(d, DIAG_EINPUT, "a routing rule names backend %d (expected one of 0..%d)",
					(int)to[j], (int)c->n - 1);
	if (c->spill_to >= 0 && !(c->spill_wait_ns > 0) && !(c->spill_ttft_ns > 0))
		return diag_set(d, DIAG_EINPUT,
				"spill-over needs a bound (expected a queue wait or a TTFT bound > 0)");
	if (c->size_to >= 0 && c->size_prompt_tokens < 0)
		return diag_set(d, DIAG_EINPUT, "the size rule needs a prompt size >= 0");
	return 0;
}

void backend_init(struct backend *b, const struct backend_config *cfg)
{
	memset(b, 0, sizeof(*b));
	b->cfg = *cfg;
	map_init(&b->cache);
}

void backend_release(struct backend *b)
{
	map_release(&b->cache);
	memset(b, 0, sizeof(*b));
}

int backend_cache(struct backend *b, const uint64_t *hashes, int64_t n, int64_t block_size,
		  int64_t prompt_tokens, int64_t now_ns, int64_t *cached_tokens)
{
	*cached_tokens = 0;
	if (b->cfg.cache_ttl_ns <= 0)
		return 0;
	int64_t hit = 0;
	while (hit < n) {
		const uint64_t *t = map_get(&b->cache, hashes[hit]);
		if (!t || now_ns - (int64_t)(*t - 1) > b->cfg.cache_ttl_ns)
			break;
		hit++;
	}
	/* the last prompt token is always computed, as in the engines */
	int64_t tokens = hit * block_size;
	if (tokens >= prompt_tokens)
		tokens = prompt_tokens - 1;
	if (tokens >= b->cfg.cache_min_tokens && tokens > 0) {
		*cached_tokens = tokens;
		b->stats.cached_tokens += tokens;
	}
	if (prompt_tokens < b->cfg.cache_min_tokens)
		return 0;
	for (int64_t k = 0; k < n; k++) {
		uint64_t *t = map_ref(&b->cache, hashes[k]);
		if (!t)
			return DIAG_ENOMEM;
		*t = (uint64_t)now_ns + 1;
	}
	b->stats.cache_writes += n;
	return 0;
}

void backend_times(const struct backend_config *c, int64_t now_ns, int64_t output_tokens,
		   int64_t *first_ns, int64_t *done_ns)
{
	*first_ns = now_ns + llround(c->ttft_ns);
	*done_ns = *first_ns + llround((double)(output_tokens - 1) * c->ns_per_token);
}
