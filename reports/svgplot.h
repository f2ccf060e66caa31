/* SPDX-License-Identifier: Apache-2.0
 * svgplot: line charts as inline SVG, for the HTML report.
 *
 * One chart is a <figure> holding an <svg> (title, axes with ticks and
 * units, one polyline per series, optional vertical marker lines such as an
 * SLO) and a <figcaption> with the one line that says what to read from it.
 * The output is well-formed XML (every text is escaped), needs no script
 * and no font or file from elsewhere, and is the same bytes for the same
 * input (numbers with two decimals).
 *
 * Layout keeps every text apart: the legend sits under the plot and wraps
 * to as many rows as its names need; marker labels and point labels are
 * placed where they overlap no other text, else stacked, else dropped (the
 * line or dot stays); text widths are estimated from the character count
 * at a width no font used here exceeds on average.  What a checker needs
 * is marked: the title is <text class="title">, each axis label is
 * <text class="label" data-axis="x|y"> (class "label category" for an axis
 * of names, which has no unit), legend items are <text class="legend">.
 */
#ifndef REPORTS_SVGPLOT_H
#define REPORTS_SVGPLOT_H

#include <stddef.h>
#include <stdio.h>

#include <stdbool.h>

#define SVGPLOT_MAX_MARKERS 8

/* How an axis maps values.  AUTO is logarithmic when the positive values
 * span two decades or more and none is negative (zeros are then left out
 * of the plot), else linear; on bars, AUTO is a signed logarithmic axis
 * (sign(v) log10(1 + |v|)) when the largest magnitude is more than ten
 * times the median one, so one outlier does not flatten every other bar. */
enum svgplot_scale {
	SVGPLOT_LINEAR = 0,
	SVGPLOT_LOG,
	SVGPLOT_AUTO,
};

struct svgplot_series {
	const char *name;      /* legend text */
	const double *x;       /* n points, x ascending (for points: any order) */
	const double *y;
	size_t n;
	bool points;           /* dots, not a line */
	bool hollow;           /* dots drawn as rings (points only) */
	bool dashed;           /* a dashed line (lines only) */
	const char *const *labels; /* NULL, or n texts drawn beside the dots
				      where they overlap nothing */
	int color;             /* 0: the colour of its place; k: the k-th
				  colour (series of one kind share one) */
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
	enum svgplot_scale x_scale, y_scale; /* bars: x_scale only */
	/* bars: how each value is printed at its bar's end */
	int value_digits;      /* decimals */
	const char *value_unit; /* after the number ("%"), NULL: none */
	bool value_signed;     /* "+" before a positive value */
};

/* One bar of a bar chart. */
struct svgplot_bar {
	const char *label;     /* the category, left of the bar (cut with an
				  ellipsis past about 40 characters) */
	double value;          /* not finite: no bar, "-" shown */
	const char *note;      /* NULL, or printed after the value */
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
 * values are skipped, and so are values at or below zero on a log axis.
 * Series past the twelfth reuse the colours, dashed. */
void svgplot_lines(FILE *out, const struct svgplot_chart *c, const struct svgplot_series *s,
		   size_t n_series);

/* Write a chart of horizontal bars from 0 (either way), one per category, its value
 * (and note) printed at its end; the chart's markers are vertical lines across all
 * bars (a baseline to compare each bar with), their labels stacked above
 * the plot; hmarkers are not drawn.  On a signed log axis (x_scale AUTO)
 * the x label says so. */
void svgplot_bars(FILE *out, const struct svgplot_chart *c, const struct svgplot_bar *bars,
		  size_t n_bars);

#endif
