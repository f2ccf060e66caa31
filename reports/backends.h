/* SPDX-License-Identifier: Apache-2.0
 * backends: where a run's calls went when API backends stand beside the
 * local engines (sim/backend.h), and what each side cost and felt like.
 *
 * A struct backends is a res_sink that passes every record on to another
 * sink and keeps, per backend (row 0: the local engines; row k: API backend
 * k - 1), the completed calls, their prompt, cached and output tokens, the
 * tasks that had at least one call there, the calls each routing rule sent
 * (spill, fallback, size), and one TTFT and E2EL per call for exact
 * percentiles.  Spend per API backend is its tokens at the list prices the
 * caller gives: uncached prompt tokens not written to its cache x input,
 * those written x the cache-write price of its entries' lifetime (the
 * input price when the catalogue has none), cached x cached input (the
 * input price when the catalogue has no cached price), output x output.  A
 * seat plan's calls cost nothing per token; its seat price is reported
 * beside them, per engineer and month.  docs/hybrid.md defines every key.
 */
#ifndef REPORTS_BACKENDS_H
#define REPORTS_BACKENDS_H

#include "models/cost.h"
#include "sim/results.h"

#include <stdbool.h>
#include <stdint.h>

struct backends;
struct diag;

#define BACKENDS_MAX_ROWS 9 /* the local engines + sim/backend.h's BACKEND_MAX */

/* One API backend as the caller prices it.  Strings borrowed (valid while
 * the struct backends is). */
struct backends_api {
	const char *name;
	const char *kind;            /* "api" or "seat" */
	const char *price_id;        /* prices.json id */
	const struct cost_api *list; /* its prices, every class (the cache-write
					price of its entries' lifetime); NULL =
					none (a seat plan without list prices) */
	double seat_usd_month;       /* seat plans: per engineer, else 0 */
	int64_t cache_min_tokens;    /* its prompt cache: a prompt this long or
					longer writes what it did not read */
	bool cache;                  /* it keeps a prompt cache at all */
};

struct backends_row {
	const char *name;            /* "local" for row 0 */
	const char *kind;            /* "local", "api", "seat" */
	const char *price_id;        /* NULL for row 0 */
	int64_t calls;
	int64_t tasks;               /* tasks with at least one call here */
	int64_t prompt_tokens;
	int64_t cached_prompt_tokens;
	int64_t cache_write_tokens;  /* API rows: prompt tokens written to its
					prompt cache (uncached, in prompts of its
					cache_min_tokens or more) */
	int64_t output_tokens;
	struct cost_api_tokens by_class[COST_API_CLASSES]; /* API rows: the
					calls split by their API's price classes
					(long-prompt tiers, off-peak hours) */
	bool clock_assumed;          /* an off-peak split read trace times that
					are not dates */
	int64_t rate_limited;        /* API rows: 429s its calls met */
	int64_t limit_failed;        /* calls that gave up after 429s */
	double backoff_s;            /* time clients waited after its 429s */
	int64_t by_route[RES_N_ROUTES];
	double call_share;           /* calls / all completed calls */
	double usd;                  /* token spend over the run (0 for row 0
					and seat plans) */
	double seat_usd_month;
	double ttft_mean_ms, ttft_median_ms, ttft_p90_ms, ttft_p95_ms, ttft_p99_ms;
	double e2el_mean_ms, e2el_median_ms, e2el_p90_ms, e2el_p95_ms, e2el_p99_ms;
};

struct backends_summary {
	int32_t n;                   /* rows: 1 + API backends */
	struct backends_row rows[BACKENDS_MAX_ROWS];
	int64_t calls;               /* completed calls, all backends */
	double spilled_share;        /* of those, sent by spill-over */
	double fallback_share;
	double size_share;
	double api_share;            /* served by any API backend */
	double usd;                  /* token spend of every API backend */
	/* the rules, for the report (0 / NULL: off) */
	const char *spill_to, *fallback_to, *size_to;
	double spill_wait_ms, spill_ttft_ms;
	int64_t size_prompt_tokens;
};

/* A new aggregator over n API backends (copied), passing records to next;
 * NULL when out of memory or n out of range. */
struct backends *backends_new(const struct backends_api *apis, int32_t n, struct res_sink next);
void backends_free(struct backends *b); /* accepts NULL */

struct res_sink backends_sink(struct backends *b);

/* Tasks that had at least one call on an API backend (finished tasks). */
int64_t backends_api_tasks(const struct backends *b);

/* Fill *out (the rule fields are left for the caller).  0, or the first
 * error a callback met (DIAG_ENOMEM) with its message in d. */
int backends_summarize(const struct backends *b, struct backends_summary *out, struct diag *d);

#endif
