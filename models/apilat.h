/* SPDX-License-Identifier: Apache-2.0
 * apilat: the hosted APIs' latency and prompt-cache rules
 * (models/catalog/api_backends.json), loaded and validated.
 *
 * One row per API model, keyed by the id its price rows carry in
 * prices.json: the median time to the first token and output speed the
 * source published, and the provider's prompt-cache rules (shortest
 * cacheable prefix, time an unused entry lives), each with source and
 * date.  Optionally:
 *   - TTFT as a function of the prompt, fitted to published measurements:
 *     ttft = ttft_base_s + uncached / prefill_tok_s + cached / cached_tok_s
 *     (the cached term is the reading of the provider's cache);
 *   - the per-minute limits of one stated usage tier: requests, input
 *     tokens, output tokens, and tokens in and out together (0 = no such
 *     limit), and whether prompt-cache reads count as input tokens.
 * Read-only once loaded; strings are owned by the table and stay valid
 * until apilat_free.
 */
#ifndef MODELS_APILAT_H
#define MODELS_APILAT_H

#include "base/diag.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct apilat_row {
	char *id;
	double ttft_s;             /* > 0 */
	double output_tok_s;       /* > 0 */
	char *speed_source, *speed_date;
	int64_t cache_min_tokens;  /* >= 0 */
	double cache_ttl_s;        /* >= 0; 0 = no prompt cache */
	char *cache_source, *cache_date;
	/* TTFT by prompt: prefill_tok_s 0 = no fit (the fixed ttft_s only) */
	double ttft_base_s;        /* > 0 */
	double prefill_tok_s;      /* uncached prompt tokens per second, > 0 */
	double cached_tok_s;       /* cached prompt tokens per second, > 0 */
	char *fit_source, *fit_date;
	/* per-minute limits; limits_tier NULL = none published here */
	double rpm, input_tpm, output_tpm, tpm; /* >= 0; 0 = no such limit */
	bool limits_count_cached;  /* cache reads count as input tokens */
	char *limits_tier, *limits_source, *limits_date;
};

struct apilat {
	struct apilat_row *rows;
	size_t n;
};

/* The table from text (name for messages) or, with text NULL, the copy
 * built into the library.  0, DIAG_EINPUT (not JSON, a missing or bad
 * key: "NAME: backends[i] 'id': key: expected ..."), or DIAG_ENOMEM; *out
 * is NULL on failure. */
int apilat_load(struct apilat **out, const char *name, const char *text, struct diag *d);

void apilat_free(struct apilat *t); /* accepts NULL */

/* The row of id (exact), or NULL.  O(rows). */
const struct apilat_row *apilat_find(const struct apilat *t, const char *id);

#endif
