/* SPDX-License-Identifier: Apache-2.0
 * slo: latency objectives written as percentiles, "ttft_p95=2s,tpot_p50=50ms".
 *
 * An objective says that the q-quantile of one per-call latency (TTFT, TPOT
 * or E2EL, as docs/metrics.md defines them; percentiles as numpy computes
 * them, linear interpolation) is at most a limit.  A set of objectives is
 * met when every one is.  The replay driver uses them to stop a run whose
 * answer is already known (replay.h, early verdict); plan/ judges finished
 * runs against them.
 *
 * Invariants: 0 < n <= SLO_MAX_OBJECTIVES, each quantile one of 0.50, 0.90,
 * 0.95, 0.99 and each limit > 0 ms.
 */
#ifndef REPLAY_SLO_H
#define REPLAY_SLO_H

#include "sim/results.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct diag;

enum slo_metric {
	SLO_TTFT = 0,  /* first_token - arrival */
	SLO_TPOT,      /* (done - first_token) / (output - 1); calls of >= 2 tokens */
	SLO_E2EL,      /* done - arrival */
};

#define SLO_MAX_OBJECTIVES 8

struct slo_objective {
	enum slo_metric metric;
	int percentile;   /* 50, 90, 95, 99 */
	double limit_ms;
};

struct slo {
	int n;
	struct slo_objective obj[SLO_MAX_OBJECTIVES];
};

/* Parse "KEY=DURATION[,KEY=DURATION...]": KEY is ttft, tpot or e2el, '_',
 * then p50, p90, p95 or p99; DURATION a positive number with a unit, ms or
 * s ("2s", "50ms", "1.5s").  A key given twice keeps the last value.  0, or
 * DIAG_EINPUT with a message naming the piece that does not parse and what
 * was expected ("where" prefixes it, e.g. "--slo"). */
int slo_parse(struct slo *out, const char *s, const char *where, struct diag *d);

/* "ttft_p95", "tpot_p50", ... into buf (size >= 16). */
const char *slo_key(const struct slo_objective *o, char *buf, size_t size);

/* "ttft_p95=2000ms,tpot_p50=50ms" into buf; buf. */
const char *slo_format(const struct slo *s, char *buf, size_t size);

/* The call's value of metric m in ms, or a negative value when it has none
 * (TPOT of a one-token output, any latency of a rejected call). */
double slo_request_ms(enum slo_metric m, const struct res_request *r);

/* How many of at most n values (n >= 1) must exceed a limit for their
 * percentile p to exceed it whatever the other values are: the smallest m
 * with m >= k - floor(p/100 * (k - 1)) for every k <= n (that bound grows
 * with k).  Reaching it settles the objective as missed. */
int64_t slo_miss_budget(int percentile, int64_t n);

#endif
