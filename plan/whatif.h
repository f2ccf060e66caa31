/* SPDX-License-Identifier: Apache-2.0
 * whatif: replay one trace twice, as recorded and through a what-if
 * transform (traces/xform.h, or the replay's compaction at a lower limit),
 * with the same scenario and seed, and set the results side by side.
 *
 * The comparison is a list of rows (key, unit, the two values); the
 * terminal table and the JSON are both written from the rows.  Two replays
 * cost twice one replay; nothing of one run is kept while the other streams
 * except its summary.
 *
 * With a sizing (struct whatif_sizing), each variant is also sized as
 * `agentcap size` sizes a team (plan/size.h: same trace, seed, scenario,
 * objectives and hardware options; the variant's transform applied to every
 * replay of the search) and each winner priced per month as `size` prints
 * it (plan/compare.h: purchase, dedicated and elastic rental).  That adds,
 * per hardware option, the GPUs needed and the three monthly costs as rows
 * (NAN where a variant found no deployment or the catalogue has no price),
 * and the deployments themselves under the table.  A sizing costs what two
 * `agentcap size` runs cost.
 *
 * Both variants replay on one deployment (replay/deploy.h), every scenario
 * feature with them; the sizings search as `agentcap size` does from the
 * same scenario.  With a pool (base/pool.h) the two variants' replays and
 * the two sizings run at the same time, each sizing's own replays on the
 * same pool; each replay stays single-threaded and the results are the
 * same for any number of jobs.  (A variant with PCRE2 rules replays, then
 * is sized, one replay after another: a rules object is not shared between
 * threads.)  The sizings are priced once both replays are done (the month
 * counts the days the team's replay covers).
 */
#ifndef PLAN_WHATIF_H
#define PLAN_WHATIF_H

#include "plan/size.h"
#include "replay/deploy.h"
#include "replay/replay.h"
#include "reports/metrics.h"
#include "traces/xform.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct catalog;
struct compare_result;
struct diag;
struct pool;
struct prices;
struct report_run;

/* What `agentcap size` needs besides the trace, the seed and the replay
 * options, which are the what-if's.  Everything is borrowed. */
struct whatif_sizing {
	const struct catalog *cat;
	const struct scenario *base;      /* loaded, not resolved (size_setup.base) */
	const char *const *hardware;      /* ids, 1..SIZE_MAX_HARDWARE */
	size_t n_hardware;
	const struct slo *slo;
	int32_t max_replicas;             /* 0: size's default */
	const struct prices *prices;
	const char *api_id, *seat_id;     /* compare's baselines (priced, not shown) */
	int64_t engineers;                /* >= 1: the team, for compare */
};

struct whatif_setup {
	const struct deployment *dep;     /* what both variants replay on */
	struct replay_opts replay;        /* trace, format, seed, scale; its
					     xform and compact_at are the variants' */
	bool compact;                     /* both sides compact calls past the
					     limit (the compact-at what-if) */
	double slo_ttft_ms, slo_tpot_ms;  /* 0: none */
	const struct whatif_sizing *sizing; /* NULL: no sizing */
	struct pool *pool;                /* runs the replays; NULL: one after another */
};

struct whatif_variant {
	const char *label;                /* "as recorded", "pinned", ... (borrowed) */
	struct xform_opts xform;
	int64_t compact_at;               /* 0: the engine's max_model_len */
};

struct whatif_side {
	char label[48];
	struct metrics *m;                /* owns what sum points to */
	struct metrics_summary sum;
	struct replay_stats st;
	struct size_setup sizing;         /* sizing: how it searched (valid while
					     whatif_run runs) */
	struct size_result *size;         /* sizing: owned */
	struct compare_result *cost;      /* sizing, when a deployment was found: owned */
};

struct whatif_result {
	struct whatif_side side[2];
	bool sized;
	char slo[256];                    /* sizing: the objectives, slo_format */
	int64_t days;                     /* sizing: days a replay of the team
					     covers, for the month (compare) */
};

/* Run variants v[0] and v[1] and, with s->sizing, size and price each.  0
 * (whether or not a sizing found a deployment) or the first error code
 * (DIAG_*) with d filled; release r in every case. */
int whatif_run(const struct whatif_setup *s, const struct whatif_variant v[2],
	       struct whatif_result *r, struct diag *d);

void whatif_result_release(struct whatif_result *r);

struct whatif_row {
	const char *key;      /* JSON key, e.g. "prefill_tokens_computed" */
	const char *label;    /* table label */
	const char *unit;     /* "tokens", "%", "ms", "req/s", "GPUs", "USD/month", "" */
	const char *hardware; /* sizing rows: the hardware option (valid while
				 the result is); NULL otherwise */
	double a, b;          /* the two variants; NAN: none (no deployment
				 found, no price) */
	int digits;           /* decimals shown in the table */
};

#define WHATIF_MAX_ROWS (24 + 4 * SIZE_MAX_HARDWARE)

/* The comparison rows of r, in table order; returns how many (<= max). */
size_t whatif_rows(const struct whatif_result *r, struct whatif_row *rows, size_t max);

/* The terminal table: one row per metric, the two variants, the difference
 * and the ratio. */
void whatif_table(FILE *fp, const char *kind, const struct whatif_result *r);

/* The JSON document (docs/whatif.md), with run as its "run" (NULL: left
 * out) and each variant's chart figures (reports/charts.h) as "charts";
 * 0, DIAG_ENOMEM, or DIAG_EIO when the stream fails. */
int whatif_json(FILE *fp, const char *kind, uint64_t seed, const struct report_run *run,
		const struct whatif_result *r);

#endif
