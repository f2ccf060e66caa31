/* SPDX-License-Identifier: Apache-2.0
 * backend: API backends beside the local engines, and the rules that send a
 * call to one (local plus cloud).
 *
 * An API backend (a per-token API, or a seat plan's service) is simulated as
 * a service of unbounded capacity: a call sent to it at t gets its first
 * token at t + TTFT and its last at that + (output_tokens - 1) x
 * ns_per_token, whatever else is in flight (deterministic; the published
 * figures are medians under the provider's own load).  The TTFT is
 * ttft_base_ns + uncached x ns_per_uncached + cached x ns_per_cached when
 * ns_per_uncached > 0 (a fit to published curves: models/apilat.h), else
 * the fixed ttft_ns.
 *
 * Per-minute limits.  Each limit (requests, input tokens, output tokens,
 * tokens in and out) is a token bucket, as Anthropic documents its own: it
 * holds at most the limit and refills at limit / 60 per second.  A call is
 * admitted when every bucket holds what it needs (1 request; its uncached
 * prompt tokens, cached ones too when limits_count_cached; its output
 * tokens) and takes it; else it gets a 429, and the client tries again
 * after client_backoff_ns (attempt 0, 1, ...), failing after max_retries
 * 429s.  A call that needs more than a whole bucket never gets in.
 * Output tokens are counted as generated (Anthropic estimates them from
 * max_tokens at the start and corrects them at the end).  Its prompt cache is
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

/* Client retries after a 429 when the scenario sets none: Claude Code
 * retries transient failures up to 10 times (CLAUDE_CODE_MAX_RETRIES,
 * default 10; Claude Code's documentation, read 2026-12-03), with the
 * Anthropic and OpenAI Python SDKs' back-off: min(0.5 s x 2^n, 8 s) x
 * (1 - 0.25 u), u uniform in [0, 1) (INITIAL_RETRY_DELAY 0.5,
 * MAX_RETRY_DELAY 8.0 in src/{anthropic,openai}/_constants.py,
 * _calculate_retry_timeout in _base_client.py; read 2026-12-03).  The
 * retry-after header, which the SDKs obey up to 60 s, is not modelled. */
#define BACKEND_DEFAULT_MAX_RETRIES 10
#define CLIENT_BACKOFF_INITIAL_S 0.5
#define CLIENT_BACKOFF_MAX_S 8.0

/* One API backend. */
struct backend_config {
	char name[BACKEND_NAME_MAX];
	double ttft_ns;            /* > 0: the fixed TTFT */
	double ttft_base_ns;       /* the prompt model (used when ns_per_uncached > 0) */
	double ns_per_uncached;    /* per uncached prompt token; 0 = fixed TTFT */
	double ns_per_cached;      /* per cached prompt token */
	double ns_per_token;       /* 1e9 / output tokens per second, > 0 */
	int64_t cache_min_tokens;  /* shortest prefix the cache keeps; 0 = any */
	int64_t cache_ttl_ns;      /* 0 = no prompt cache */
	/* per-minute limits, 0 = none */
	double rpm, input_tpm, output_tpm, tpm;
	bool limits_count_cached;  /* cached prompt tokens count as input */
	int32_t max_retries;       /* 429s a call may meet before it fails */
	double backoff_initial_ns, backoff_max_ns;
};

/* backend_config's limits and retries at their defaults: none, and
 * Claude Code's / the SDKs' (above). */
void backend_config_limits_default(struct backend_config *c);

struct hybrid_config {
	int32_t n;                 /* backends; 0 = none (nothing here runs) */
	struct backend_config b[BACKEND_MAX];
	int32_t spill_to;          /* backend index, or -1 */
	double spill_wait_ns;      /* 0 = no bound on the predicted queue wait */
	double spill_ttft_ns;      /* 0 = no bound on the predicted TTFT */
	int32_t fallback_to;       /* -1 = none */
	int32_t size_to;           /* -1 = none */
	int64_t size_prompt_tokens;/* prompts longer than this go to size_to */
	uint64_t seed;             /* the run's: the back-off jitter */
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
	int64_t rate_limited;      /* 429s */
	int64_t backoff_ns;        /* time clients waited before trying again */
	int64_t limit_failed;      /* calls that met max_retries + 1 429s */
};

/* A backend at run time: its settings, its prompt cache and its limits'
 * buckets (what each holds at bucket_ns). */
struct backend {
	struct backend_config cfg;
	struct map cache;          /* block hash -> last use ns + 1 */
	struct backend_stats stats;
	double bucket[4];          /* requests, input, output, tokens */
	int64_t bucket_ns;
};

void backend_init(struct backend *b, const struct backend_config *cfg);
void backend_release(struct backend *b);

/* The prompt-cache hit of a call whose prompt's full blocks are
 * hashes[0..n) (block_size tokens each) at now_ns, in tokens, and the
 * cache written for it.  0 and *cached_tokens, or DIAG_ENOMEM. */
int backend_cache(struct backend *b, const uint64_t *hashes, int64_t n, int64_t block_size,
		  int64_t prompt_tokens, int64_t now_ns, int64_t *cached_tokens);

/* The cached prefix backend_cache would find now, in tokens, without
 * touching the cache. */
int64_t backend_cache_peek(const struct backend *b, const uint64_t *hashes, int64_t n,
			   int64_t block_size, int64_t prompt_tokens, int64_t now_ns);

/* Whether a call of prompt_tokens (cached_tokens of them read from the
 * cache) and output_tokens is within b's limits at now_ns; if so its share
 * is taken from every bucket.  A backend without limits admits all. */
bool backend_admit(struct backend *b, int64_t now_ns, int64_t prompt_tokens,
		   int64_t cached_tokens, int64_t output_tokens);

/* The wait before a client's retry number `attempt` (0 = the first) with
 * the SDKs' back-off between initial_ns and max_ns and a jitter drawn from
 * (seed, key, attempt): min(initial x 2^attempt, max) x (1 - 0.25 u). */
int64_t client_backoff_ns(double initial_ns, double max_ns, int32_t attempt, uint64_t seed,
			  uint64_t key);

/* When a call sent at now_ns with prompt_tokens (cached_tokens of them
 * cached) and output_tokens gets its first and its last token. */
void backend_times(const struct backend_config *c, int64_t now_ns, int64_t prompt_tokens,
		   int64_t cached_tokens, int64_t output_tokens, int64_t *first_ns,
		   int64_t *done_ns);

#endif
