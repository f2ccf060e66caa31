/* SPDX-License-Identifier: Apache-2.0
 * costing: a replay's figures (struct metrics_summary, and struct
 * cluster_summary for several replicas) as the plain numbers that
 * models/cost.h prices, and the cost table printed beside a report.
 *
 * Busy time per GPU is the run's busy fraction x its duration (every GPU of
 * a replica works while the replica's step runs); the rest of the run each
 * GPU is powered and idle.  GPU-hours provisioned: the cluster summary's,
 * else replicas x GPUs x duration; each replica's billed stretches (up,
 * starting or draining) from the cluster summary's timeline, borrowed: *u
 * points into cls, valid while its struct cluster is.  Token counts are
 * those of the completed calls.  docs/cost.md gives the formulas that
 * price them.
 */
#ifndef REPORTS_COSTING_H
#define REPORTS_COSTING_H

#include "models/cost.h"
#include "reports/cluster.h"
#include "reports/metrics.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* A replay priced: the scenario's hardware under each option the price
 * catalogue offers (purchase, dedicated, elastic; n of them), with the
 * energy when the hardware has a power figure.  Filled by run_cost
 * (plan/run.h); printed by costing_write_table, written into the report's
 * JSON as its "cost" member (docs/output-schema.md). */
#define COSTING_NOTE_MAX 1100
struct costing {
	char hardware[COST_LABEL_MAX];
	double periods_per_month;            /* replays counted in a month */
	char periods_source[COSTING_NOTE_MAX];
	struct cost_result r[3];
	size_t n;
	bool powered;                        /* busy_w, idle_w, pue and e are set */
	struct cost_fig busy_w, idle_w, pue;
	struct cost_energy e;
	char note[COSTING_NOTE_MAX];         /* why a part is missing; "" = none */
};

/* Fill *u from one run.  cls may be NULL (one replica, or no cluster
 * figures); periods_per_month 0 = continuous traffic; engineers 0 =
 * unknown. */
void costing_usage(struct cost_usage *u, const struct metrics_summary *s,
		   const struct cluster_summary *cls, int32_t replicas, int32_t gpus_per_replica,
		   int64_t engineers, double periods_per_month);

/* The cost table: the one date the prices are as of (the newest price
 * date of r's assumptions), one line per option (per month, per 1M output tokens,
 * per accepted task, per engineer-month), then each option's parts and
 * assumptions with their sources, then the energy and power figures, or
 * the note saying why there are none.  Returns 0 or DIAG_EIO when a write
 * fails. */
int costing_write_table(FILE *out, const struct costing *c, struct diag *d);

#endif
