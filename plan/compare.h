/* SPDX-License-Identifier: Apache-2.0
 * compare: what the team's work costs on each sized deployment and under
 * each way of paying, beside seats and an API (`agentcap compare`).
 * The scenario's cost.* keys (docs/cost.md) change the assumptions as they
 * do for replay --cost; the self-hosted task figures come in c->task.
 *
 * Input: a finished sizing (plan/size.h) and the price catalogue.  For
 * each hardware option that found a deployment, the winner's replay (its
 * first replicate) is priced by models/cost.h as purchase, dedicated
 * rental and elastic rental, where the catalogue has a price for that
 * hardware; the same team's tokens and tasks are priced as the seat plan
 * and the API named.  Every row gives cost per month, per engineer-month,
 * per 1M output tokens and per accepted task (USD).
 *
 * Break-even, per self-hosted row against the API:
 *   team size    the engineers whose API bill equals this deployment's
 *                monthly cost: monthly cost / API cost per engineer-month
 *                (the deployment serves up to the sized team; past it, a
 *                larger one is needed and the figure is a lower bound);
 *   utilisation  the GPU busy fraction at which the deployment costs what
 *                the API would for the same traffic: busy x monthly cost /
 *                API monthly cost, the traffic scaled on the same GPUs (the
 *                fixed costs stay, the API bill scales with traffic).
 *                Past 100% the GPUs cannot carry that traffic: the
 *                break-even is "never at this size" (JSON null, with the
 *                reason), whatever the team-size figure says.
 * Sensitivity: cost per accepted task with, one at a time, the self-hosted
 * hardware and rental prices, the self-hosted acceptance rate, and the
 * traffic on the same deployment (utilisation) at -20% and +20%.
 *
 * Nothing here prints to the terminal or reads files.
 */
#ifndef PLAN_COMPARE_H
#define PLAN_COMPARE_H

#include "models/cost.h"
#include "plan/size.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct prices;

#define COMPARE_MAX_ROWS (SIZE_MAX_HARDWARE * 3 + 2)
#define COMPARE_SENS 6 /* price -/+, acceptance -/+, utilisation -/+ */
#define COMPARE_SWING 0.2
/* Why a break-even point is "never at this size". */
#define COMPARE_NEVER "even with its GPUs 100% busy it costs more than the API for the same traffic"

struct compare_setup {
	const struct size_setup *size;
	const struct catalog *cat;
	const struct prices *prices;
	const char *api_id;            /* API model the team could pay instead */
	const char *seat_id;           /* seat plan the team could pay instead */
	int64_t engineers;
	int64_t days;                  /* days one replay covers (>= 1) */
	struct cost_task task;         /* self-hosted acceptance and turns */
};

struct compare_row {
	enum cost_option option;
	char hardware[SCENARIO_STR_MAX]; /* "" for seats and API */
	int32_t gpus;
	char deployment[48];           /* "2 x TP4", "" for seats and API */
	struct cost_result r;
	double busy;                   /* GPU busy fraction of the replay */
	double breakeven_engineers;    /* self-hosted rows; 0 otherwise */
	double breakeven_utilisation;
	bool breakeven_never;          /* self-hosted rows: the break-even would
					  need the GPUs more than 100% busy (or
					  the API costs nothing): the two figures
					  above are then no answer */
	double sens[COMPARE_SENS];     /* USD per accepted task */
};

struct compare_result {
	struct compare_row rows[COMPARE_MAX_ROWS];
	size_t n;
	double periods_per_month;
	int64_t engineers;
	char unpriced[512];            /* options the catalogue has no price for */
};

/* Price every row.  0, or DIAG_EINPUT (unknown API or seat id, a usage
 * the cost model refuses).  Options without a winner are skipped. */
int compare_run(const struct compare_setup *c, const struct size_result *sr,
		struct compare_result *out, struct diag *d);

/* The cost table, the break-even lines, the sensitivity table and every
 * price's source and date. */
void compare_table(FILE *fp, const struct compare_setup *c, const struct compare_result *r);

/* Monthly cost of each option's winner under purchase, dedicated and
 * elastic rental, one line per option (for `agentcap size`). */
void compare_monthly(FILE *fp, const struct compare_result *r);

/* The JSON document (docs/size.md); 0 or DIAG_EIO. */
int compare_json(FILE *fp, const struct compare_setup *c, const struct compare_result *r);

#endif
