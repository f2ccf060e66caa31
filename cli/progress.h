/* SPDX-License-Identifier: Apache-2.0
 * progress: one line on standard error that says how far a long run is.
 *
 * A struct progress is a res_sink that passes every record on to another
 * sink and, on a terminal, rewrites one status line: simulated time, calls
 * done (of how many, when known), calls per second of wall time, and the
 * time left.  It shows nothing during the first second (or the seconds
 * AGENTCAP_PROGRESS_AFTER says), so short runs stay quiet, and redraws at most five times a second.  It is off when standard
 * error is not a terminal, with --quiet, and when the caller says so; the
 * NO_COLOR convention (https://no-color.org) turns its
 * colour off.  progress_end erases the line, so the report that follows
 * starts on a clean screen.
 */
#ifndef CLI_PROGRESS_H
#define CLI_PROGRESS_H

#include "sim/results.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct progress {
	FILE *out;             /* standard error, or NULL when off */
	const char *label;     /* "agentcap replay" */
	bool color;
	int64_t calls_total;   /* 0: not known */
	int64_t calls_done;
	int64_t sim_ns;        /* latest completion seen */
	double start_s;        /* monotonic wall clock at init */
	double after_s;        /* quiet this long first (AGENTCAP_PROGRESS_AFTER) */
	double last_draw_s;    /* 0: nothing on screen */
	struct res_sink next;
};

/* Set up in front of next.  out is the stream to draw on when the run
 * may show progress (NULL: off); whether it is a terminal and NO_COLOR are
 * checked here. */
void progress_init(struct progress *p, FILE *out, const char *label, int64_t calls_total,
		   struct res_sink next);

/* The sink to hand the simulator; valid while p is. */
struct res_sink progress_sink(struct progress *p);

/* Erase the line if one was drawn. */
void progress_end(struct progress *p);

#endif
