/* SPDX-License-Identifier: Apache-2.0
 * progress: one line on standard error that says how far a long run is.
 *
 * A struct progress is told of each call as it finishes (progress_note)
 * and, on a terminal, rewrites one status line: simulated time, calls done
 * (of how many, when known), calls per second of wall time, and the time
 * left.  It shows nothing during the first second (or the seconds
 * AGENTCAP_PROGRESS_AFTER says), so short runs stay quiet, and redraws at most five times a second.  It is off when standard
 * error is not a terminal, with --quiet, and when the caller says so; the
 * NO_COLOR convention (https://no-color.org) turns its
 * colour off.  progress_end erases the line, so the report that follows
 * starts on a clean screen.
 */
#ifndef CLI_PROGRESS_H
#define CLI_PROGRESS_H

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
};

/* Set up.  out is the stream to draw on when the run may show progress
 * (NULL: off); whether it is a terminal and NO_COLOR are checked here. */
void progress_init(struct progress *p, FILE *out, const char *label, int64_t calls_total);

/* One more call finished, at simulated time done_ns. */
void progress_note(struct progress *p, int64_t done_ns);

/* Erase the line if one was drawn. */
void progress_end(struct progress *p);

#endif
