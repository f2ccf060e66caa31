/* SPDX-License-Identifier: Apache-2.0
 * baseline: the team's work as a per-token API would bill it, the same
 * whatever self-hosted deployment it is compared with.
 *
 * The API baseline of `agentcap compare` was the usage of the first
 * winner's replay: prompts compacted to the local model's context and
 * cached tokens from the local GPUs' prefix cache, so the same team's API
 * bill moved with the model and the hardware order compared.  Here the
 * team is replayed once more with every call sent to the API (an API
 * backend beside the scenario's shape, whose size rule takes every
 * prompt), as recorded (no compaction: the traced agent ran against the
 * API's own context), with the API's own prompt cache (its minimum prefix,
 * and a time to live the caller chooses: the price of a cache write
 * depends on it).  The usage is priced by models/cost.h (cost_api_eval,
 * cost_seats_eval); it does not depend on the local shape, which never
 * receives a call.
 *
 * The API's timing (first token, output speed: the closed loop's pace)
 * and its cache's minimum prefix come from models/catalog/api_backends.json
 * under the API's id, else under the row of the same provider, said so in
 * the result.
 */
#ifndef PLAN_BASELINE_H
#define PLAN_BASELINE_H

#include "models/cost.h"
#include "plan/size.h"

#include <stdint.h>

struct prices;

/* Prompt-cache lifetime of the baseline when the scenario does not set
 * cost.api_cache_ttl_s: Claude Code with an API key writes 5-minute
 * entries unless promptCacheTtl asks for an hour (Developers Digest,
 * "Claude Code Prompt Cache: Read the Hit Ratio, Set 5m or 1h TTLs",
 * 2026-10-17; a subscription defaults to an hour). */
#define BASELINE_CACHE_TTL_S 300.0

struct baseline_setup {
	const struct size_setup *size;    /* the team: base scenario, replicate 0's
					     trace and seed, the replay options */
	const char *hardware;             /* a shape the base scenario builds on */
	int32_t tp, pp;                   /* (the local side takes no call) */
	const char *api_id;               /* prices.json id of the API */
	const struct prices *prices;
	double cache_ttl_s;               /* > 0 */
};

struct baseline_result {
	struct cost_usage usage;          /* periods and engineers left to the
					     caller; the GPU figures are a
					     placeholder of one idle GPU */
	int64_t days;                     /* days of the resampled team; 0 */
	double cache_ttl_s;
	char latency_id[64];              /* api_backends.json row used */
	char timing_note[256];            /* "" or why another row was used */
};

/* Replay the team on the API alone and gather its usage.  0 or a DIAG
 * code (an API with no latency row for it or its provider: DIAG_EINPUT). */
int baseline_run(const struct baseline_setup *s, struct baseline_result *r, struct diag *d);

#endif
