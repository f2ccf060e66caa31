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
 * traffic on the same deployment (utilisation) at -20% and +20%, and the
 * operator time at the low and the high end of its sourced ranges.
 * Warnings per row: operator time more than COMPARE_OPERATOR_DECIDES of
 * the month, and what a purchase price leaves out (its "not_priced"
 * assumption).
 *
 * Local plus cloud (docs/hybrid.md).  When the scenario lists API backends
 * and routing rules (c->backends), each option that found a deployment also
 * gets hybrid rows: one box (ONE replica of the scenario's shape on that
 * hardware: a multi-GPU system whole, else one GPU) with the backends
 * beside it, the same team replayed to the end on every replicate (first
 * replicate priced), under purchase, dedicated and elastic rental.  A
 * hybrid row's month is the local box's cost (as its self-hosted row
 * prices one replica) plus each API backend's calls at its list prices
 * (cost_api_eval on that backend's tokens; a seat plan by cost_seats_eval
 * for the team), and its accepted tasks blend the two sides' acceptance by
 * the share of calls each served: the self-hosted model's on the local
 * share, the trace's own (as the API row takes it) on the rest.  The rows
 * say whether the mix met the objectives, its p95 TTFT and the API share;
 * they have no break-even (they are part API already).
 *
 * Nothing here prints to the terminal or reads files.
 */
#ifndef PLAN_COMPARE_H
#define PLAN_COMPARE_H

#include "models/cost.h"
#include "plan/baseline.h"
#include "plan/size.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct prices;
struct quality;

#define COMPARE_MAX_ROWS (SIZE_MAX_HARDWARE * 6 + 2)
/* Sensitivity columns: price -/+20%, acceptance -/+20%, acceptance at 30%
 * and 100% of the traced model's, utilisation -/+20%, operator time at the
 * low and the high end of its sourced ranges (cost_operator_from_prices). */
#define COMPARE_SENS 10
#define COMPARE_ACC_LOW 0.3
/* A self-hosted row whose operator time is more than this share of its
 * month is decided by it: the table and the JSON warn, naming the keys. */
#define COMPARE_OPERATOR_DECIDES 0.5

/* Where a model's acceptance comes from (compare_quality). */
enum compare_basis {
	COMPARE_BASIS_ASSUMED = 0, /* quality assumed equal to the traced model's */
	COMPARE_BASIS_SCORES,      /* published scores (models/quality.h) */
	COMPARE_BASIS_PILOT,       /* a figure given for the model (--acceptance
				      MODEL=RATE, scenario key) */
	COMPARE_BASIS_TRACED,      /* the traced model itself */
};

struct compare_quality {
	char model[SCENARIO_STR_MAX];
	const char *role;              /* "self-hosted" or "api" */
	enum compare_basis basis;
	double factor;                 /* x the trace's acceptance (scores) */
	char why[1200];
};
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
	struct cost_task base_task;    /* the seats' and the API's (the API
					  model's acceptance) */
	const char *traced_model;      /* the model the trace was recorded with
					  (its acceptance is the trace's) */
	bool traced_assumed;           /* traced_model is the default (the API's),
					  not given: said in a warning */
	struct compare_quality quality[2]; /* self-hosted model, API model
					  (compare_quality) */
	bool backends;                 /* hybrid rows for the API backends and
					  rules of size->base (size->local_only
					  sized the self-hosted rows without
					  them) */
	const struct baseline_result *baseline; /* the team on the API as
					  recorded (plan/baseline.h); NULL:
					  compare_run replays it */
};

/* What a hybrid row's replay gave (see the file comment). */
struct compare_hybrid {
	bool on;                       /* this is a hybrid row */
	bool meets;                    /* the mix met the objectives (replicates
					  as size counts them) */
	double ttft_p95_ms;            /* first replicate */
	double api_share;              /* calls an API served */
	double api_usd_month;          /* every backend's calls, per month */
	double local_usd_month;        /* the one box */
	double acceptance;             /* the blended acceptance rate */
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
	struct compare_hybrid hy;      /* hybrid rows only */
};

struct compare_result {
	struct baseline_result baseline; /* what priced the seats and API rows */
	struct compare_row rows[COMPARE_MAX_ROWS];
	size_t n;
	double periods_per_month;
	int64_t engineers;
	char unpriced[1024];           /* options the catalogue has no price for */
	char prices_as_of[COST_DATE_MAX]; /* the newest date of the prices used
					     ("" when none is dated) */
};

/* The acceptance basis of the self-hosted model and of the API model,
 * against c->traced_model: a figure given for the model where there is one
 * (c->task / c->base_task acceptance_rate >= 0), else their published
 * scores (quality.h; the quality factor set in the task), else assumed
 * equal.  q may be NULL (no scores: every model assumed equal). */
void compare_quality(struct compare_setup *c, const struct quality *q, const char *model);

/* Price every row.  0, or DIAG_EINPUT (unknown API or seat id, a usage
 * the cost model refuses).  Options without a winner are skipped. */
int compare_run(const struct compare_setup *c, const struct size_result *sr,
		struct compare_result *out, struct diag *d);

/* The cost table, the break-even lines, the sensitivity table and every
 * price's source and date. */
void compare_table(FILE *fp, const struct compare_setup *c, const struct compare_result *r);

/* The answer on one screen (compare --summary): the recommendation with
 * its latency, monthly cost and cost per accepted task, the seats and the
 * API beside it, every option in one line, the break-even team, the
 * inputs that change the cheapest option when moved, and what is
 * assumed; sr gives each option's latency. */
void compare_summary(FILE *fp, const struct compare_setup *c, const struct compare_result *r,
		     const struct size_result *sr);

/* Monthly cost of each option's winner under purchase, dedicated and
 * elastic rental, one line per option (for `agentcap size`). */
void compare_monthly(FILE *fp, const struct compare_result *r);

/* The JSON document (docs/size.md); 0 or DIAG_EIO. */
int compare_json(FILE *fp, const struct compare_setup *c, const struct compare_result *r);

#endif
