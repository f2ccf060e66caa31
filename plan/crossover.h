/* SPDX-License-Identifier: Apache-2.0
 * crossover: `agentcap compare` over a list of team sizes, and the team
 * sizes from which self-hosting costs less per accepted task than the seats
 * and the API.
 *
 * Every point is a whole `compare` at that team size: the team made again
 * (synthesised or resampled for that many engineers), `size` run on it, the
 * winners priced (plan/compare.h), the seats and the API billed on that
 * team as recorded.  Nothing is scaled from one size to another, so each
 * point is what `agentcap compare --engineers N` prints alone, and the
 * cost per accepted task of an option is a step function of the team size:
 * it falls while the deployment absorbs more engineers, and steps up where
 * the sizing needs another replica.
 *
 * A series is one self-hosted way of paying on one hardware option
 * ("h100-sxm elastic"; the box-plus-API rows of docs/hybrid.md apart).
 * Its crossover against a baseline (seats or API) is the smallest team size
 * of the list from which, at that size and every larger one, the series
 * has a deployment and costs no more per accepted task than the baseline;
 * it lies between the size before it in the list ("after") and that size
 * ("from").  None: not within the sizes tried.
 *
 * Nothing here prints to the terminal or reads files.
 */
#ifndef PLAN_CROSSOVER_H
#define PLAN_CROSSOVER_H

#include "plan/compare.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define CROSSOVER_MAX_TEAMS 24

/* Where a series first beats a baseline for good (see the file comment). */
struct crossover_at {
	bool found;
	int64_t from;                  /* engineers: the first size it holds at */
	int64_t after;                 /* the size before it; 0 = it holds from
					  the smallest size tried */
};

struct crossover_series {
	enum cost_option option;
	char hardware[SCENARIO_STR_MAX];
	bool hybrid;                   /* one box + the scenario's API backends */
	/* per point; usd_task NAN: no deployment of this option at that size */
	double usd_task[CROSSOVER_MAX_TEAMS];
	double usd_month[CROSSOVER_MAX_TEAMS];
	int32_t gpus[CROSSOVER_MAX_TEAMS];
	char deployment[CROSSOVER_MAX_TEAMS][48];
	struct crossover_at vs_seats, vs_api;
};

struct crossover_curve {
	int64_t engineers[CROSSOVER_MAX_TEAMS]; /* ascending */
	size_t n;
	double seats_task[CROSSOVER_MAX_TEAMS], api_task[CROSSOVER_MAX_TEAMS];
	double seats_month[CROSSOVER_MAX_TEAMS], api_month[CROSSOVER_MAX_TEAMS];
	struct crossover_series s[COMPARE_MAX_ROWS];
	size_t n_series;
};

void crossover_init(struct crossover_curve *c);

/* Add the comparison of a team of `engineers` (larger than every point
 * before it).  0, or DIAG_EINPUT when the sizes are out of order or there
 * are more than CROSSOVER_MAX_TEAMS. */
int crossover_add(struct crossover_curve *c, int64_t engineers, const struct compare_result *r,
		  struct diag *d);

/* The crossovers of every series (after the last crossover_add). */
void crossover_finish(struct crossover_curve *c);

/* The curve: one line per team size (the cheapest self-hosted row, seats
 * and API per accepted task), then each series' crossovers. */
void crossover_table(FILE *fp, const struct compare_setup *cs, const struct crossover_curve *c);

/* The JSON document (schema "agentcap-compare-range", docs/size.md);
 * 0 or DIAG_EIO. */
int crossover_json(FILE *fp, const struct compare_setup *cs, const struct crossover_curve *c);

/* Parse a list of team sizes: "10,20,40" or "A:B:S" (A, A+S, ... up to
 * B), each 1..max, ascending without repeats after sorting.  0, or
 * DIAG_EINPUT naming what was expected. */
int crossover_parse_teams(const char *text, int64_t max, int64_t *out, size_t *n,
			  struct diag *d);

#endif
