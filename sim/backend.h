/* SPDX-License-Identifier: Apache-2.0
 * backend: API backends beside the local engines, and the rules that send a
 * call to one (local plus cloud).
 *
 * An API backend (a per-token API, or a seat plan's service) is simulated as
 * a service of unbounded capacity: a call sent to it at t gets its first
 * token at t + ttft_ns and its last at that + (output_tokens - 1) x
 * ns_per_token, whatever else is in flight (deterministic; the published
 * figures are medians under the provider's own load).  Its prompt cache is
 * its own: a call's cached tokens are the longest prefix of its prompt's
 * full blocks that an earlier call sent to the same backend wrote within
 * cache_ttl_ns of now (every hit refreshes the entry, as Anthropic's and
 * OpenAI's caches do), counted only when that prefix is at least
 * cache_min_tokens long; a prompt of cache_min_tokens or more writes all its
 * full blocks.  Blocks are the local engines' KV blocks (the same chained
 * hashes), so the API's cache granularity is block_size tokens.
 *
 * Rules, tried in this order for every call (sim.c, route):
 *   size      a prompt longer than size_prompt_tokens goes to size_to;
 *   fallback  while no local replica that could serve the call is up
 *             (sim/lifecycle.h: down, starting, draining or off), it goes
 *             to fallback_to; a call a failed replica held goes back through
 *             these rules at once and so reaches the API when nothing local
 *             is up (the retry limit does not apply then: no call is lost);
 *   spill     the router's pick is kept unless the call would wait at the
 *             router (no replica eligible), or the pick's predicted queue
 *             wait is over spill_wait_ns, or its predicted TTFT over
 *             spill_ttft_ns; then it goes to spill_to.
 * A call no local pool can ever serve (past every pool's max_model_len or
 * KV cache) goes to size_to, else fallback_to, else is rejected as before.
 *
 * Prediction (spill): the replica's step in flight ends at its scheduled
 * time; then the prefill still owed by its running calls and the calls in
 * its waiting queue (each prompt less the prefix the replica's cache holds
 * now) and the call's own are computed in chunks of max_num_batched_tokens
 * less the running decodes, each chunk timed by the replica's own step-time
 * model at that call's context.  It ignores what later arrivals and
 * preemptions do, so it is a lower bound of the wait in an overloaded
 * replica and exact for a lone call on an idle one.
 */
#ifndef SIM_BACKEND_H
#define SIM_BACKEND_H

#include "base/diag.h"
#include "base/map.h"
#include "sim/results.h"

#include <stdbool.h>
#include <stdint.h>

#define BACKEND_MAX 8
#define BACKEND_NAME_MAX 48

/* One API backend. */
struct backend_config {
	char name[BACKEND_NAME_MAX];
	double ttft_ns;            /* > 0 */
	double ns_per_token;       /* 1e9 / output tokens per second, > 0 */
	int64_t cache_min_tokens;  /* shortest prefix the cache keeps; 0 = any */
	int64_t cache_ttl_ns;      /* 0 = no prompt cache */
};

struct hybrid_config {
	int32_t n;                 /* backends; 0 = none (nothing here runs) */
	struct backend_config b[BACKEND_MAX];
	int32_t spill_to;          /* backend index, or -1 */
	double spill_wait_ns;      /* 0 = no bound on the predicted queue wait */
	double spill_ttft_ns;      /* 0 = no bound on the predicted TTFT */
	int32_t fallback_to;       /* -1 = none */
	int32_t size_to;           /* -1 = none */
	int64_t size_prompt_tokens;/* prompts longer than this go to size_to */
};

/* No backends, every rule off. */
void hybrid_config_default(struct hybrid_config *c);

/* 0, or DIAG_EINPUT naming what is out of range. */
int hybrid_config_check(const struct hybrid_config *c, struct diag *d);

/* "local", "spill", "fallback", "size" (static); NULL out of range. */
const char *hybrid_route_name(int route);

/* What one backend did over a run. */
struct backend_stats {
	int64_t calls;
	int64_t cached_tokens;
	int64_t cache_writes;      /* blocks written (new or refreshed) */
};

/* A backend at run time: its settings and its prompt cache. */
struct backend {
	struct backend_config cfg;
	struct map cache;          /* block hash -> last use ns + 1 */
	struct backend_stats stats;
};

void backend_init(struct backend *b, const struct backend_config *cfg);
void backend_release(struct backend *b);

/* The prompt-cache hit of a call whose prompt's full blocks are
 * hashes[0..n) (block_size tokens each) at now_ns, in tokens, and the
 * cache written for it.  0 and *cached_tokens, or DIAG_ENOMEM. */
int backend_cache(struct backend *b, const uint64_t *hashes, int64_t n, int64_t block_size,
		  int64_t prompt_tokens, int64_t now_ns, int64_t *cached_tokens);

/* When a call sent at now_ns with output_tokens gets its first and its last
 * token. */
void backend_times(const struct backend_config *c, int64_t now_ns, int64_t output_tokens,
		   int64_t *first_ns, int64_t *done_ns);

#endif
