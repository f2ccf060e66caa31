/* SPDX-License-Identifier: Apache-2.0
 * apilat: the hosted APIs' latency and prompt-cache rules
 * (models/catalog/api_backends.json), loaded and validated.
 *
 * One row per API model, keyed by the id its price rows carry in
 * prices.json: the median time to the first token and output speed the
 * source published, and the provider's prompt-cache rules (shortest
 * cacheable prefix, time an unused entry lives), each with source and
 * date.  Read-only once loaded; strings are owned by the table and stay
 * valid until apilat_free.
 */
#ifndef MODELS_APILAT_H
#define MODELS_APILAT_H

#include "base/diag.h"

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
