/* SPDX-License-Identifier: Apache-2.0
 * progress: the status line of a long run (see progress.h).  The wall
 * clock is read at most once every PROGRESS_EVERY calls, so a fast replay
 * pays almost nothing for it. */
#define _POSIX_C_SOURCE 200809L
#include "cli/progress.h"

#include <stdlib.h>
#include <time.h>
#include <unistd.h>

/* Calls between two looks at the clock. */
#define PROGRESS_EVERY 64
/* Quiet for this long, then a redraw at most this often (seconds). */
#define PROGRESS_AFTER_S 1.0
#define PROGRESS_PERIOD_S 0.2

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A duration as "1 h 02 min", "3 min 04 s" or "5 s". */
static void put_duration(FILE *out, double s)
{
	long long t = (long long)(s + 0.5);
	if (t >= 3600)
		fprintf(out, "%lld h %02lld min", t / 3600, t % 3600 / 60);
	else if (t >= 60)
		fprintf(out, "%lld min %02lld s", t / 60, t % 60);
	else
		fprintf(out, "%lld s", t);
}

static void draw(struct progress *p, double now)
{
	FILE *out = p->out;
	double wall = now - p->start_s;
	double rate = wall > 0.0 ? (double)p->calls_done / wall : 0.0;
	const char *on = p->color ? "\033[1m" : "", *off = p->color ? "\033[0m" : "";
	/* \r and erase-to-end: the line is redrawn in place */
	fprintf(out, "\r\033[K%s: simulated ", p->label);
	put_duration(out, (double)p->sim_ns / 1e9);
	fprintf(out, ", %s%lld%s", on, (long long)p->calls_done, off);
	if (p->calls_total > 0)
		fprintf(out, " of %lld calls (%.0f%%)", (long long)p->calls_total,
			100.0 * (double)p->calls_done / (double)p->calls_total);
	else
		fputs(" calls", out);
	fprintf(out, ", %.0f calls/s", rate);
	if (p->calls_total > 0 && rate > 0.0 && p->calls_done < p->calls_total) {
		fputs(", about ", out);
		put_duration(out, (double)(p->calls_total - p->calls_done) / rate);
		fputs(" left", out);
	}
	fflush(out);
	p->last_draw_s = now;
}

void progress_note(struct progress *p, int64_t done_ns)
{
	p->calls_done++;
	if (done_ns > p->sim_ns)
		p->sim_ns = done_ns;
	if (p->out && p->calls_done % PROGRESS_EVERY == 0) {
		double now = now_s();
		if (now - p->start_s >= p->after_s && now - p->last_draw_s >= PROGRESS_PERIOD_S)
			draw(p, now);
	}
}

void progress_init(struct progress *p, FILE *out, const char *label, int64_t calls_total)
{
	const char *no_color = getenv("NO_COLOR");
	/* AGENTCAP_PROGRESS_AFTER=S: seconds of quiet before the first drawing
	 * (a number >= 0; anything else keeps the default), so a test can ask
	 * for the line without depending on how fast the machine is. */
	double after_s = PROGRESS_AFTER_S;
	const char *after = getenv("AGENTCAP_PROGRESS_AFTER");
	if (after && after[0]) {
		char *end;
		double v = strtod(after, &end);
		if (*end == '\0' && v >= 0 && v <= 1e6)
			after_s = v;
	}
	*p = (struct progress){
		.out = out && isatty(fileno(out)) ? out : NULL,
		.label = label,
		.color = !(no_color && no_color[0]),
		.calls_total = calls_total,
		.start_s = now_s(),
		.after_s = after_s,
	};
}

void progress_end(struct progress *p)
{
	if (p->out && p->last_draw_s > 0.0) {
		fputs("\r\033[K", p->out);
		fflush(p->out);
	}
	p->last_draw_s = 0.0;
}
