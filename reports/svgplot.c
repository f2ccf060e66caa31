/* SPDX-License-Identifier: Apache-2.0
 * svgplot: SVG line charts (see svgplot.h).  Axes get "nice" ticks: steps
 * of 1, 2 or 5 times a power of ten, about five per axis, the range widened
 * to whole steps. */
#include "reports/svgplot.h"

#include <math.h>
#include <stdbool.h>

/* Geometry of the drawing, in SVG user units. */
#define W 640.0
#define H 360.0
#define LEFT 72.0
#define RIGHT 44.0
#define TOP 40.0
#define BOTTOM 56.0

static const char *const COLORS[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e"};
#define N_COLORS (sizeof(COLORS) / sizeof(COLORS[0]))

void svgplot_escape(FILE *out, const char *text)
{
	for (const char *p = text ? text : ""; *p; p++) {
		switch (*p) {
		case '&': fputs("&amp;", out); break;
		case '<': fputs("&lt;", out); break;
		case '>': fputs("&gt;", out); break;
		case '"': fputs("&quot;", out); break;
		case '\'': fputs("&#39;", out); break;
		default: fputc(*p, out);
		}
	}
}

struct axis {
	double lo, hi, step;
};

/* Ticks for [lo, hi]: a step of 1, 2 or 5 x 10^k giving about 5 ticks. */
static struct axis nice_axis(double lo, double hi)
{
	if (!(hi > lo)) {
		double pad = fabs(lo) > 0.0 ? fabs(lo) * 0.5 : 1.0;
		lo -= pad;
		hi += pad;
		if (lo < 0.0 && hi - pad >= 0.0 && lo + pad >= 0.0)
			lo = 0.0;
	}
	double raw = (hi - lo) / 5.0;
	double mag = pow(10.0, floor(log10(raw)));
	double f = raw / mag;
	double step = (f <= 1.0 ? 1.0 : f <= 2.0 ? 2.0 : f <= 5.0 ? 5.0 : 10.0) * mag;
	return (struct axis){floor(lo / step) * step, ceil(hi / step) * step, step};
}

static double px(const struct axis *a, double v)
{
	return LEFT + (v - a->lo) / (a->hi - a->lo) * (W - LEFT - RIGHT);
}

static double py(const struct axis *a, double v)
{
	return H - BOTTOM - (v - a->lo) / (a->hi - a->lo) * (H - TOP - BOTTOM);
}

/* A tick label: as few decimals as the step needs. */
static void tick_label(FILE *out, double v, double step)
{
	int dec = step >= 1.0 ? 0 : (int)ceil(-log10(step) - 1e-9);
	if (fabs(v) < step * 1e-9)
		v = 0.0;
	fprintf(out, "%.*f", dec > 6 ? 6 : dec, v);
}

void svgplot_lines(FILE *out, const struct svgplot_chart *c, const struct svgplot_series *s,
		   size_t n_series)
{
	double xlo = INFINITY, xhi = -INFINITY, ylo = INFINITY, yhi = -INFINITY;
	for (size_t i = 0; i < n_series; i++)
		for (size_t k = 0; k < s[i].n; k++) {
			if (!isfinite(s[i].x[k]) || !isfinite(s[i].y[k]))
				continue;
			xlo = fmin(xlo, s[i].x[k]);
			xhi = fmax(xhi, s[i].x[k]);
			ylo = fmin(ylo, s[i].y[k]);
			yhi = fmax(yhi, s[i].y[k]);
		}
	for (int m = 0; m < c->n_markers; m++)
		if (isfinite(c->markers[m].x)) {
			xlo = fmin(xlo, c->markers[m].x);
			xhi = fmax(xhi, c->markers[m].x);
		}
	if (!isfinite(xlo)) {
		xlo = ylo = 0.0;
		xhi = yhi = 1.0;
	}
	if (ylo > 0.0)
		ylo = 0.0; /* counts and shares read best from zero */
	struct axis ax = nice_axis(xlo, xhi), ay = nice_axis(ylo, yhi);

	fputs("<figure id=\"", out);
	svgplot_escape(out, c->id);
	fprintf(out, "\">\n<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 %.0f %.0f\" "
		"role=\"img\" aria-label=\"", W, H);
	svgplot_escape(out, c->title);
	fputs("\">\n<title>", out);
	svgplot_escape(out, c->title);
	fprintf(out, "</title>\n<text class=\"title\" x=\"%.2f\" y=\"22\" text-anchor=\"middle\">",
		W / 2.0);
	svgplot_escape(out, c->title);
	fputs("</text>\n", out);
	/* grid and ticks */
	fputs("<g class=\"grid\">\n", out);
	for (double v = ax.lo; v <= ax.hi + ax.step * 1e-9; v += ax.step) {
		double x = px(&ax, v);
		fprintf(out, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\"/>", x, TOP, x,
			H - BOTTOM);
		fprintf(out, "<text class=\"tick\" x=\"%.2f\" y=\"%.2f\" text-anchor=\"middle\">", x,
			H - BOTTOM + 16.0);
		tick_label(out, v, ax.step);
		fputs("</text>\n", out);
	}
	for (double v = ay.lo; v <= ay.hi + ay.step * 1e-9; v += ay.step) {
		double y = py(&ay, v);
		fprintf(out, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\"/>", LEFT, y,
			W - RIGHT, y);
		fprintf(out, "<text class=\"tick\" x=\"%.2f\" y=\"%.2f\" text-anchor=\"end\">",
			LEFT - 6.0, y + 4.0);
		tick_label(out, v, ay.step);
		fputs("</text>\n", out);
	}
	fputs("</g>\n", out);
	fprintf(out, "<rect class=\"frame\" x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\"/>\n",
		LEFT, TOP, W - LEFT - RIGHT, H - TOP - BOTTOM);
	/* axis labels */
	fprintf(out, "<text class=\"label\" x=\"%.2f\" y=\"%.2f\" text-anchor=\"middle\">",
		LEFT + (W - LEFT - RIGHT) / 2.0, H - 14.0);
	svgplot_escape(out, c->x_label);
	fprintf(out, "</text>\n<text class=\"label\" transform=\"translate(16 %.2f) rotate(-90)\" "
		"text-anchor=\"middle\">", TOP + (H - TOP - BOTTOM) / 2.0);
	svgplot_escape(out, c->y_label);
	fputs("</text>\n", out);
	/* series */
	for (size_t i = 0; i < n_series; i++) {
		fprintf(out, "<polyline class=\"series\" fill=\"none\" stroke=\"%s\" points=\"",
			COLORS[i % N_COLORS]);
		bool first = true;
		for (size_t k = 0; k < s[i].n; k++) {
			if (!isfinite(s[i].x[k]) || !isfinite(s[i].y[k]))
				continue;
			fprintf(out, "%s%.2f,%.2f", first ? "" : " ", px(&ax, s[i].x[k]),
				py(&ay, s[i].y[k]));
			first = false;
		}
		fputs("\"/>\n", out);
		double ly = TOP + 14.0 + 16.0 * (double)i;
		fprintf(out, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"%s\" "
			"stroke-width=\"2\"/><text class=\"legend\" x=\"%.2f\" y=\"%.2f\">",
			W - RIGHT - 170.0, ly - 4.0, W - RIGHT - 150.0, ly - 4.0, COLORS[i % N_COLORS],
			W - RIGHT - 145.0, ly);
		svgplot_escape(out, s[i].name);
		fputs("</text>\n", out);
	}
	/* markers */
	for (int m = 0; m < c->n_markers; m++) {
		if (!isfinite(c->markers[m].x))
			continue;
		double x = px(&ax, c->markers[m].x);
		fprintf(out, "<line class=\"marker\" x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\"/>"
			"<text class=\"marker\" x=\"%.2f\" y=\"%.2f\">", x, TOP, x, H - BOTTOM,
			x + 4.0, TOP + 12.0 + 14.0 * (double)m);
		svgplot_escape(out, c->markers[m].label);
		fputs("</text>\n", out);
	}
	fputs("</svg>\n<figcaption>", out);
	svgplot_escape(out, c->caption);
	fputs("</figcaption>\n</figure>\n", out);
}
