/* SPDX-License-Identifier: Apache-2.0
 * html: a report as one self-contained HTML page.
 *
 * The page carries its CSS inline and its charts as inline SVG
 * (reports/svgplot.h); it fetches nothing and runs no script, so it reads
 * the same offline, printed, or attached to a ticket.  It is also
 * well-formed XML, so a strict XML parser checks it.  Same run, same bytes.
 *
 * The pieces (html_begin, html_facts, html_end, with svgplot_lines between)
 * are there for any command that has a report to show; html_replay puts a
 * replay's page together from them.
 */
#ifndef REPORTS_HTML_H
#define REPORTS_HTML_H

#include "reports/metrics.h"
#include "reports/output.h"

#include <stddef.h>
#include <stdio.h>

struct diag;

/* The document up to an <h1> of title, with the shared CSS. */
void html_begin(FILE *out, const char *title);

/* A two-column table of (name, value) pairs: the "what was run" block at
 * the top of a page. */
struct html_fact {
	const char *name;
	const char *value;
};
void html_facts(FILE *out, const char *heading, const struct html_fact *facts, size_t n);

/* Close the document. */
void html_end(FILE *out);

/* A replay's page: scenario, trace, seed and version at the top, the
 * answer and its warnings, a table of the headline figures, and charts:
 * the CDFs of TTFT, TPOT and E2E with the SLO lines, and calls arriving
 * over time.  m must have seen the whole run (s summarizes it).  0, or
 * DIAG_ENOMEM with the message in d. */
int html_replay(FILE *out, const struct report_meta *meta, const struct metrics_summary *s,
		const struct metrics *m, struct diag *d);

#endif
