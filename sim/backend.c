/* SPDX-License-Identifier: Apache-2.0
 * backend: API backends' timing and prompt caches (see backend.h). */
#include "sim/backend.h"

#include "base/hash.h"

#include <math.h>
#include <string.h>

void backend_config_limits_default(struct backend_config *c)
{
	c->rpm = c->input_tpm = c->output_tpm = c->tpm = 0;
	c->limits_count_cached = false;
	c->max_retries = BACKEND_DEFAULT_MAX_RETRIES;
	c->backoff_initial_ns = CLIENT_BACKOFF_INITIAL_S * 1e9;
	c->backoff_max_ns = CLIENT_BACKOFF_MAX_S * 1e9;
}

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
		const double v[] = {b->ttft_base_ns, b->ns_per_uncached, b->ns_per_cached, b->rpm,
				    b->input_tpm, b->output_tpm, b->tpm, b->backoff_initial_ns,
				    b->backoff_max_ns};
		bool ok = b->max_retries >= 0;
		for (size_t j = 0; j < sizeof(v) / sizeof(v[0]); j++)
			ok &= isfinite(v[j]) && v[j] >= 0;
		if (!ok)
			return diag_set(d, DIAG_EINPUT,
					"backends[%d] '%s': expected a prompt-dependent TTFT, limits and "
					"retries >= 0", (int)k, b->name);
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
	/* every bucket full at the start */
	b->bucket[0] = cfg->rpm;
	b->bucket[1] = cfg->input_tpm;
	b->bucket[2] = cfg->output_tpm;
	b->bucket[3] = cfg->tpm;
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

int64_t backend_cache_peek(const struct backend *b, const uint64_t *hashes, int64_t n,
			   int64_t block_size, int64_t prompt_tokens, int64_t now_ns)
{
	if (b->cfg.cache_ttl_ns <= 0)
		return 0;
	int64_t hit = 0;
	while (hit < n) {
		const uint64_t *t = map_get(&b->cache, hashes[hit]);
		if (!t || now_ns - (int64_t)(*t - 1) > b->cfg.cache_ttl_ns)
			break;
		hit++;
	}
	int64_t tokens = hit * block_size;
	if (tokens >= prompt_tokens)
		tokens = prompt_tokens - 1;
	return tokens >= b->cfg.cache_min_tokens && tokens > 0 ? tokens : 0;
}

bool backend_admit(struct backend *b, int64_t now_ns, int64_t prompt_tokens,
		   int64_t cached_tokens, int64_t output_tokens)
{
	const struct backend_config *c = &b->cfg;
	const double limit[4] = {c->rpm, c->input_tpm, c->output_tpm, c->tpm};
	if (!(limit[0] > 0) && !(limit[1] > 0) && !(limit[2] > 0) && !(limit[3] > 0))
		return true;
	/* refill since the last look: limit / 60 per second, up to the limit */
	double dt_s = (double)(now_ns - b->bucket_ns) / 1e9;
	for (int j = 0; j < 4; j++)
		if (limit[j] > 0)
			b->bucket[j] = fmin(limit[j], b->bucket[j] + limit[j] / 60.0 * dt_s);
	b->bucket_ns = now_ns;
	double in = (double)(c->limits_count_cached ? prompt_tokens : prompt_tokens - cached_tokens);
	const double need[4] = {1, in, (double)output_tokens, in + (double)output_tokens};
	for (int j = 0; j < 4; j++)
		if (limit[j] > 0 && b->bucket[j] < need[j])
			return false;
	for (int j = 0; j < 4; j++)
		if (limit[j] > 0)
			b->bucket[j] -= need[j];
	return true;
}

int64_t client_backoff_ns(double initial_ns, double max_ns, int32_t attempt, uint64_t seed,
			  uint64_t key)
{
	double wait = initial_ns * pow(2.0, attempt < 60 ? attempt : 60);
	if (wait > max_ns)
		wait = max_ns;
	uint64_t x = hash_combine(hash_combine(seed ^ UINT64_C(0x6261636b6f6666), key),
				  (uint64_t)attempt);
	double u = (double)(x >> 11) * 0x1.0p-53; /* [0, 1) */
	return llround(wait * (1 - 0.25 * u));
}

void backend_times(const struct backend_config *c, int64_t now_ns, int64_t prompt_tokens,
		   int64_t cached_tokens, int64_t output_tokens, int64_t *first_ns,
		   int64_t *done_ns)
{
	double ttft = c->ttft_ns;
	if (c->ns_per_uncached > 0)
		ttft = c->ttft_base_ns + (double)(prompt_tokens - cached_tokens) * c->ns_per_uncached +
		       (double)cached_tokens * c->ns_per_cached;
	*first_ns = now_ns + llround(ttft);
	*done_ns = *first_ns + llround((double)(output_tokens - 1) * c->ns_per_token);
}
