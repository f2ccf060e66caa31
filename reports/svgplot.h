/* SPDX-License-Identifier: Apache-2.0
 * svgplot: line charts as inline SVG, for the HTML report.
 *
 * One chart is a <figure> holding an <svg> (title, axes with ticks and
 * units, one polyline per series, optional vertical marker lines such as an
 * SLO) and a <figcaption> with the one line that says what to read from it.
 * The output is well-formed XML (every text is escaped), needs no script
 * and no font or file from elsewhere, and is the same bytes for the same
 * input (numbers with two decimals).
 */
#ifndef REPORTS_SVGPLOT_H
#define REPORTS_SVGPLOT_H

#include <stddef.h>
#include <stdio.h>

#include <stdbool.h>

#define SVGPLOT_MAX_MARKERS 8

struct svgplot_series {
	const char *name;      /* legend text */
	const double *x;       /* n points, x ascending (for points: any order) */
	const double *y;
	size_t n;
	bool points;           /* dots, not a line */
};

struct svgplot_marker {
	double x;              /* a vertical line at x (hmarkers: horizontal at y) */
	const char *label;     /* drawn beside it */
};

struct svgplot_chart {
	const char *id;        /* the figure's id attribute */
	const char *title;
	const char *x_label;   /* with the unit: "TTFT (ms)" */
	const char *y_label;
	const char *caption;   /* what to read from the chart */
	struct svgplot_marker markers[SVGPLOT_MAX_MARKERS];
	int n_markers;
	struct svgplot_marker hmarkers[SVGPLOT_MAX_MARKERS];
	int n_hmarkers;
};

/* One bar of a bar chart. */
struct svgplot_bar {
	const char *label;     /* the category, left of the bar */
	double value;          /* not finite: no bar, "-" shown */
};

/* Write text (NULL: nothing) for the body of an element: &, <, >, " and '
 * as entities; bytes that are not UTF-8, control characters but tab,
 * newline and return, U+FFFE and U+FFFF as U+FFFD; so any input gives
 * well-formed XML.  svgplot_escape_attr is the same for a value between
 * double quotes, with tab, newline and return as character references
 * (kept as they are, not turned into spaces by the parser). */
void svgplot_escape(FILE *out, const char *text);
void svgplot_escape_attr(FILE *out, const char *text);

/* Write one chart.  Series with no points are left out of the plot area but
 * kept in the legend; with no point at all, the axes span 0..1.  Non-finite
 * values are skipped. */
void svgplot_lines(FILE *out, const struct svgplot_chart *c, const struct svgplot_series *s,
		   size_t n_series);

/* Write a chart of horizontal bars from 0 (either way), one per category, its value
 * printed at its end; the chart's markers are vertical lines across all
 * bars (a baseline to compare each bar with); hmarkers are not drawn. */
void svgplot_bars(FILE *out, const struct svgplot_chart *c, const struct svgplot_bar *bars,
		  size_t n_bars);

#endif
