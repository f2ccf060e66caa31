/* SPDX-License-Identifier: Apache-2.0
 * whatif: replay one trace twice, as recorded and through a what-if
 * transform (traces/xform.h, or the replay's compaction at a lower limit),
 * with the same scenario and seed, and set the results side by side.
 *
 * The comparison is a list of rows (key, unit, the two values), so the
 * columns a later planner adds (deployment size for the SLO, monthly cost)
 * are more rows, not a new format; the terminal table and the JSON are both
 * written from the rows.  Two replays cost twice one replay; nothing of one
 * run is kept while the other streams except its summary.
 */
#ifndef PLAN_WHATIF_H
#define PLAN_WHATIF_H

#include "replay/replay.h"
#include "reports/metrics.h"
#include "traces/xform.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct diag;

struct whatif_setup {
	struct replay_opts replay;        /* trace, format, seed, scale, policy; its
					     xform and compact_at are the variants' */
	const struct engine_config *cfg;
	struct sim_perf perf;
	int32_t replicas;
	double slo_ttft_ms, slo_tpot_ms;  /* 0: none */
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
};

struct whatif_result {
	struct whatif_side side[2];
};

/* Run variant v[0] then v[1].  0 or the first replay's error code (DIAG_*)
 * with d filled; release r in every case. */
int whatif_run(const struct whatif_setup *s, const struct whatif_variant v[2],
	       struct whatif_result *r, struct diag *d);

void whatif_result_release(struct whatif_result *r);

struct whatif_row {
	const char *key;    /* JSON key, e.g. "prefill_tokens_computed" */
	const char *label;  /* table label */
	const char *unit;   /* "tokens", "%", "ms", "req/s", "" */
	double a, b;        /* the two variants */
	int digits;         /* decimals shown in the table */
};

#define WHATIF_MAX_ROWS 32

/* The comparison rows of r, in table order; returns how many (<= max). */
size_t whatif_rows(const struct whatif_result *r, struct whatif_row *rows, size_t max);

/* The terminal table: one row per metric, the two variants, the difference
 * and the ratio. */
void whatif_table(FILE *fp, const char *kind, const struct whatif_result *r);

/* The JSON document (docs/whatif.md); 0, or DIAG_EIO when the stream fails. */
int whatif_json(FILE *fp, const char *kind, uint64_t seed, const struct whatif_result *r);

#endif
