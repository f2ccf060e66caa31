/* SPDX-License-Identifier: Apache-2.0
 * charts: the figures a run's charts are drawn from, kept in its JSON.
 *
 * The HTML report is drawn from a command's JSON result alone (html.h), so
 * that `agentcap report` on a saved result gives the page `--html` gave.
 * What the percentiles do not carry is kept here: the CDFs of TTFT, TPOT
 * and E2E as at most CHARTS_CDF_POINTS (value, share at or below) points,
 * and calls arriving per time bin with their prefix-cache hit rate.  Same run, same points, same bytes.
 */
#ifndef REPORTS_CHARTS_H
#define REPORTS_CHARTS_H

#include <stddef.h>
#include <stdio.h>

struct diag;
struct metrics;

/* Points kept of a CDF: enough for a smooth curve, a small file. */
#define CHARTS_CDF_POINTS 200
/* Bins of the arrivals chart at most. */
#define CHARTS_MAX_BINS 300

enum charts_cdf_kind { CHARTS_TTFT, CHARTS_TPOT, CHARTS_E2EL, CHARTS_N_CDF };

struct charts_cdf {
	double ms[CHARTS_CDF_POINTS];  /* ascending */
	double pct[CHARTS_CDF_POINTS]; /* calls at or below ms, % */
	size_t n;
};

struct charts {
	struct charts_cdf cdf[CHARTS_N_CDF];
	double arrivals_bin_s;         /* whole minutes */
	double *arrivals;              /* calls arriving per bin, n_arrivals of them */
	double *hit_rate;              /* prefix-cache hit rate of the calls arriving
					  in each bin, 0..1 (NAN: none completed) */
	size_t n_arrivals;
};

/* The JSON key stem of a CDF: "ttft", "tpot", "e2el". */
const char *charts_cdf_key(enum charts_cdf_kind k);

/* Fill c from m, which has seen the whole run of duration_s seconds.  0, or
 * DIAG_ENOMEM with the message in d (c is then released). */
int charts_init(struct charts *c, const struct metrics *m, double duration_s, struct diag *d);

void charts_release(struct charts *c);

/* The object {"cdf_points": N, "ttft_cdf": {"ms": [...], "pct": [...]},
 * "tpot_cdf": ..., "e2el_cdf": ..., "arrivals_bin_s": S, "arrivals": [...],
 * "hit_rate": [...]}
 * on one line (numbers as the shortest text that reads back the same). */
void charts_json(FILE *fp, const struct charts *c);

#endif
