/* SPDX-License-Identifier: Apache-2.0
 * timeseries: the samples a run's simulator took every report.interval_s,
 * kept for the report.
 *
 * A struct timeseries is a res_sink that passes every record on to another
 * sink and keeps each time-series sample (sim/results.h, struct res_sample):
 * one cluster row and one row per replica.  Memory is O(samples x replicas),
 * at most TIMESERIES_MAX_ROWS replica rows; a run that would take more is
 * reported by timeseries_check as an input error (the interval is too short
 * for the run), never as an allocation failure.  docs/metrics.md defines the
 * JSON the report writes from it.
 */
#ifndef REPORTS_TIMESERIES_H
#define REPORTS_TIMESERIES_H

#include "sim/results.h"

#include <stdint.h>

struct diag;
struct timeseries;

/* Replica rows (samples x replicas) one run may keep: 4M rows of 80 bytes. */
#define TIMESERIES_MAX_ROWS (INT64_C(1) << 22)

/* A recorder for `replicas` replicas forwarding to `inner`; NULL when out of
 * memory or replicas < 1. */
struct timeseries *timeseries_new(int32_t replicas, struct res_sink inner);
void timeseries_free(struct timeseries *ts); /* accepts NULL */

/* A sink feeding ts (and through it the inner sink); valid while ts is. */
struct res_sink timeseries_sink(struct timeseries *ts);

/* 0 if every sample was kept; DIAG_EINPUT (too many samples) or DIAG_ENOMEM
 * with a message, or DIAG_EINTERNAL if a sample disagreed with the replica
 * count. */
int timeseries_check(const struct timeseries *ts, struct diag *d);

int64_t timeseries_len(const struct timeseries *ts);
int32_t timeseries_replicas(const struct timeseries *ts);
/* Sample k (0 <= k < len): its cluster row, with `replicas` pointing at its
 * replica rows; valid until ts is freed. */
const struct res_sample *timeseries_at(const struct timeseries *ts, int64_t k);

#endif
