/* SPDX-License-Identifier: Apache-2.0
 * small_run: a hand-computed run (6 requests, busy records, 2 sessions,
 * 3 tasks, point-mass ITL runs) pushed into any res_sink, shared by the
 * reports/ tests.  The expected figures are listed in small_run.c.
 */
#ifndef TESTS_REPORTS_SMALL_RUN_H
#define TESTS_REPORTS_SMALL_RUN_H

#include "sim/results.h"

#define MS (1000000LL)
#define SEC (1000000000LL)

void small_run_feed(const struct res_sink *sink);

#endif
