/* SPDX-License-Identifier: Apache-2.0
 * svgplot: SVG line charts (see svgplot.h).  Axes get "nice" ticks: steps
 * of 1, 2 or 5 times a power of ten, about five per axis, the range widened
 * to whole steps. */
#include "reports/svgplot.h"

#include "base/utf8.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/* Geometry of the drawing, in SVG user units. */
#define W 640.0
#define H 360.0
#define LEFT 72.0
#define RIGHT 44.0
#define TOP 40.0
#define BOTTOM 56.0

/* Ticks per axis at most: about five are asked for; more only when the
 * numbers are too large or too close for the step to move them (input from
 * a file, `agentcap report`). */
#define MAX_TICKS 20

static const char *const COLORS[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e"};
#define N_COLORS (sizeof(COLORS) / sizeof(COLORS[0]))

/* text with the markup characters as entities, for text (attr false) or a
 * quoted attribute value (attr true: tab, newline and return as character
 * references, which an XML parser would otherwise turn into spaces).
 * Bytes that are not UTF-8 and control characters (XML forbids C0, and
 * a reader sees nothing of the others) become U+FFFD, as do U+FFFE and
 * U+FFFF (not characters in XML), so the page stays well-formed whatever
 * the input holds. */
static void escape(FILE *out, const char *text, bool attr)
{
	const char *s = text ? text : "";
	size_t n = strlen(s);
	for (size_t at = 0; at < n;) {
		uint32_t cp;
		size_t k = utf8_decode(s + at, n - at, &cp);
		if (k == 0) {
			fputs(UTF8_REPLACEMENT, out);
			at++;
			continue;
		}
		switch (cp) {
		case '&': fputs("&amp;", out); break;
		case '<': fputs("&lt;", out); break;
		case '>': fputs("&gt;", out); break;
		case '"': fputs("&quot;", out); break;
		case '\'': fputs("&#39;", out); break;
		case '\t':
		case '\n':
		case '\r':
			if (attr)
				fprintf(out, "&#%u;", (unsigned)cp);
			else
				fputc((int)cp, out);
			break;
		default:
			if (utf8_is_control(cp) || cp == 0xfffe || cp == 0xffff)
				fputs(UTF8_REPLACEMENT, out);
			else
				fwrite(s + at, 1, k, out);
		}
		at += k;
	}
}

void svgplot_escape(FILE *out, const char *text)
{
	escape(out, text, false);
}

void svgplot_escape_attr(FILE *out, const char *text)
{
	escape(out, text, true);
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

/* Where the plot area sits in the drawing. */
struct frame {
	double w, h, left, right, top, bottom;
	struct axis ax, ay;
};

static double px(const struct frame *f, double v)
{
	return f->left + (v - f->ax.lo) / (f->ax.hi - f->ax.lo) * (f->w - f->left - f->right);
}

static double py(const struct frame *f, double v)
{
	return f->h - f->bottom - (v - f->ay.lo) / (f->ay.hi - f->ay.lo) * (f->h - f->top - f->bottom);
}

/* A tick label: as few decimals as the step needs. */
static void tick_label(FILE *out, double v, double step)
{
	int dec = step >= 1.0 ? 0 : (int)ceil(-log10(step) - 1e-9);
	if (fabs(v) < step * 1e-9)
		v = 0.0;
	fprintf(out, "%.*f", dec > 6 ? 6 : dec, v);
}

/* The <figure>, <svg>, title, grid with ticks (y ticks only when y_ticks),
 * frame and axis labels of a chart. */
static void frame_open(FILE *out, const struct svgplot_chart *c, const struct frame *f, bool y_ticks)
{
	fputs("<figure id=\"", out);
	svgplot_escape_attr(out, c->id);
	fprintf(out, "\">\n<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 %.0f %.0f\" "
		"role=\"img\" aria-label=\"", f->w, f->h);
	svgplot_escape_attr(out, c->title);
	fputs("\">\n<title>", out);
	svgplot_escape(out, c->title);
	fprintf(out, "</title>\n<text class=\"title\" x=\"%.2f\" y=\"22\" text-anchor=\"middle\">",
		f->w / 2.0);
	svgplot_escape(out, c->title);
	fputs("</text>\n", out);
	/* grid and ticks */
	fputs("<g class=\"grid\">\n", out);
	for (int i = 0; i <= MAX_TICKS; i++) {
		double v = f->ax.lo + (double)i * f->ax.step;
		if (!(v <= f->ax.hi + f->ax.step * 1e-9))
			break;
		double x = px(f, v);
		fprintf(out, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\"/>", x, f->top, x,
			f->h - f->bottom);
		fprintf(out, "<text class=\"tick\" x=\"%.2f\" y=\"%.2f\" text-anchor=\"middle\">", x,
			f->h - f->bottom + 16.0);
		tick_label(out, v, f->ax.step);
		fputs("</text>\n", out);
	}
	for (int i = 0; y_ticks && i <= MAX_TICKS; i++) {
		double v = f->ay.lo + (double)i * f->ay.step;
		if (!(v <= f->ay.hi + f->ay.step * 1e-9))
			break;
		double y = py(f, v);
		fprintf(out, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\"/>", f->left, y,
			f->w - f->right, y);
		fprintf(out, "<text class=\"tick\" x=\"%.2f\" y=\"%.2f\" text-anchor=\"end\">",
			f->left - 6.0, y + 4.0);
		tick_label(out, v, f->ay.step);
		fputs("</text>\n", out);
	}
	fputs("</g>\n", out);
	fprintf(out, "<rect class=\"frame\" x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\"/>\n",
		f->left, f->top, f->w - f->left - f->right, f->h - f->top - f->bottom);
	/* axis labels */
	fprintf(out, "<text class=\"label\" x=\"%.2f\" y=\"%.2f\" text-anchor=\"middle\">",
		f->left + (f->w - f->left - f->right) / 2.0, f->h - 14.0);
	svgplot_escape(out, c->x_label);
	fprintf(out, "</text>\n<text class=\"label\" transform=\"translate(16 %.2f) rotate(-90)\" "
		"text-anchor=\"middle\">", f->top + (f->h - f->top - f->bottom) / 2.0);
	svgplot_escape(out, c->y_label);
	fputs("</text>\n", out);
}

/* The vertical markers, labelled inside the plot, then the horizontal
 * ones; without h (bars), no horizontal ones and the labels above the plot,
 * where frame.top left them room. */
static void frame_markers(FILE *out, const struct svgplot_chart *c, const struct frame *f, bool h)
{
	for (int m = 0; m < c->n_markers; m++) {
		if (!isfinite(c->markers[m].x))
			continue;
		double x = px(f, c->markers[m].x);
		fprintf(out, "<line class=\"marker\" x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\"/>"
			"<text class=\"marker\" x=\"%.2f\" y=\"%.2f\">", x, f->top, x, f->h - f->bottom,
			x + 4.0, h ? f->top + 12.0 + 14.0 * (double)m
				   : f->top - 4.0 - 14.0 * (double)(c->n_markers - 1 - m));
		svgplot_escape(out, c->markers[m].label);
		fputs("</text>\n", out);
	}
	for (int m = 0; h && m < c->n_hmarkers; m++) {
		if (!isfinite(c->hmarkers[m].x))
			continue;
		double y = py(f, c->hmarkers[m].x);
		fprintf(out, "<line class=\"marker\" x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\"/>"
			"<text class=\"marker\" x=\"%.2f\" y=\"%.2f\">", f->left, y, f->w - f->right, y,
			f->left + 6.0, y - 4.0);
		svgplot_escape(out, c->hmarkers[m].label);
		fputs("</text>\n", out);
	}
}

static void frame_close(FILE *out, const struct svgplot_chart *c)
{
	fputs("</svg>\n<figcaption>", out);
	svgplot_escape(out, c->caption);
	fputs("</figcaption>\n</figure>\n", out);
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
	bool any = isfinite(xlo);
	for (int m = 0; m < c->n_markers; m++)
		if (isfinite(c->markers[m].x)) {
			xlo = fmin(xlo, c->markers[m].x);
			xhi = fmax(xhi, c->markers[m].x);
		}
	for (int m = 0; m < c->n_hmarkers; m++)
		if (isfinite(c->hmarkers[m].x)) {
			ylo = fmin(ylo, c->hmarkers[m].x);
			yhi = fmax(yhi, c->hmarkers[m].x);
		}
	if (!any && !isfinite(xlo)) {
		xlo = 0.0;
		xhi = 1.0;
	}
	if (!isfinite(ylo)) {
		ylo = 0.0;
		yhi = 1.0;
	}
	if (ylo > 0.0)
		ylo = 0.0; /* counts and shares read best from zero */
	struct frame f = {W, H, LEFT, RIGHT, TOP, BOTTOM, nice_axis(xlo, xhi), nice_axis(ylo, yhi)};
	frame_open(out, c, &f, true);
	/* series */
	for (size_t i = 0; i < n_series; i++) {
		const char *color = COLORS[i % N_COLORS];
		if (s[i].points) {
			fprintf(out, "<g class=\"series\" fill=\"%s\">", color);
			for (size_t k = 0; k < s[i].n; k++)
				if (isfinite(s[i].x[k]) && isfinite(s[i].y[k]))
					fprintf(out, "<circle cx=\"%.2f\" cy=\"%.2f\" r=\"4\"/>",
						px(&f, s[i].x[k]), py(&f, s[i].y[k]));
			fputs("</g>\n", out);
		} else {
			fprintf(out, "<polyline class=\"series\" fill=\"none\" stroke=\"%s\" points=\"",
				color);
			bool first = true;
			for (size_t k = 0; k < s[i].n; k++) {
				if (!isfinite(s[i].x[k]) || !isfinite(s[i].y[k]))
					continue;
				fprintf(out, "%s%.2f,%.2f", first ? "" : " ", px(&f, s[i].x[k]),
					py(&f, s[i].y[k]));
				first = false;
			}
			fputs("\"/>\n", out);
		}
		double ly = TOP + 14.0 + 16.0 * (double)i;
		if (s[i].points)
			fprintf(out, "<circle cx=\"%.2f\" cy=\"%.2f\" r=\"4\" fill=\"%s\"/>",
				W - RIGHT - 160.0, ly - 4.0, color);
		else
			fprintf(out, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"%s\" "
				"stroke-width=\"2\"/>", W - RIGHT - 170.0, ly - 4.0, W - RIGHT - 150.0,
				ly - 4.0, color);
		fprintf(out, "<text class=\"legend\" x=\"%.2f\" y=\"%.2f\">", W - RIGHT - 145.0, ly);
		svgplot_escape(out, s[i].name);
		fputs("</text>\n", out);
	}
	frame_markers(out, c, &f, true);
	frame_close(out, c);
}

/* Height of one bar's row, and the room for category labels. */
#define BAR_ROW 24.0
#define BAR_LEFT 200.0

void svgplot_bars(FILE *out, const struct svgplot_chart *c, const struct svgplot_bar *bars,
		  size_t n_bars)
{
	double lo = 0.0, hi = 0.0;
	for (size_t i = 0; i < n_bars; i++)
		if (isfinite(bars[i].value)) {
			lo = fmin(lo, bars[i].value);
			hi = fmax(hi, bars[i].value);
		}
	for (int m = 0; m < c->n_markers; m++)
		if (isfinite(c->markers[m].x))
			hi = fmax(hi, c->markers[m].x);
	double rows = n_bars ? (double)n_bars : 1.0;
	struct frame f = {W, TOP + 14.0 * (double)c->n_markers + rows * BAR_ROW + BOTTOM, BAR_LEFT,
			  RIGHT + 40.0, TOP + 14.0 * (double)c->n_markers, BOTTOM,
			  nice_axis(lo * 1.05, hi > lo ? hi * 1.05 : 1.0), {0.0, rows, 1.0}};
	double x0 = px(&f, 0.0);
	frame_open(out, c, &f, false);
	for (size_t i = 0; i < n_bars; i++) {
		double y = f.top + BAR_ROW * (double)i;
		fprintf(out, "<text class=\"tick\" x=\"%.2f\" y=\"%.2f\" text-anchor=\"end\">",
			BAR_LEFT - 6.0, y + BAR_ROW / 2.0 + 4.0);
		svgplot_escape(out, bars[i].label);
		fputs("</text>", out);
		if (isfinite(bars[i].value)) {
			double x1 = px(&f, bars[i].value);
			fprintf(out, "<rect class=\"bar\" x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" "
				"height=\"%.2f\" fill=\"%s\"/><text class=\"value\" x=\"%.2f\" "
				"y=\"%.2f\">%.2f</text>\n", fmin(x0, x1), y + 4.0, fmax(fabs(x1 - x0), 0.5),
				BAR_ROW - 8.0, COLORS[bars[i].value < 0.0 ? 2 : 0], fmax(x0, x1) + 4.0,
				y + BAR_ROW / 2.0 + 4.0, bars[i].value);
		} else {
			fprintf(out, "<text class=\"value\" x=\"%.2f\" y=\"%.2f\">-</text>\n",
				x0 + 4.0, y + BAR_ROW / 2.0 + 4.0);
		}
	}
	frame_markers(out, c, &f, false);
	frame_close(out, c);
}
