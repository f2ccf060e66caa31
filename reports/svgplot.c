/* SPDX-License-Identifier: Apache-2.0
 * svgplot: SVG line charts (see svgplot.h).  Linear axes get "nice" ticks:
 * steps of 1, 2 or 5 times a power of ten, about five per axis, the range
 * widened to whole steps; log axes a tick per decade (with 2 and 5 between
 * when there are two decades or fewer), widened to whole decades.
 *
 * Every text of the chart but the ticks and the axis labels (which have
 * their own margins) goes through a placer: the boxes already taken, so a
 * label goes where it overlaps none, or not at all. */
#include "reports/svgplot.h"

#include "base/utf8.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Geometry of the drawing, in SVG user units. */
#define W 640.0
#define H 360.0
#define LEFT 72.0
#define RIGHT 44.0
#define TOP 40.0
#define BOTTOM 60.0

/* Ticks per axis at most: about five are asked for; more only when the
 * numbers are too large or too close for the step to move them (input from
 * a file, `agentcap report`). */
#define MAX_TICKS 20

/* Twelve colours a reader tells apart (Tableau 10 and two dark ones). */
static const char *const COLORS[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
				     "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf",
				     "#393b79", "#637939"};
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

/* ---- text boxes ------------------------------------------------------- */

/* Width of one character of 12px text, over-estimated (system-ui and the
 * sans-serif fallbacks average about 6.5 at 12px; digits 6.7). */
#define CHAR_W 7.2
/* Height above and below a 12px baseline a box claims. */
#define ASCENT 11.0
#define DESCENT 4.0
/* Boxes a chart's placer holds; labels past it are dropped. */
#define MAX_BOXES 512
/* Characters of a bar's label at most. */
#define BAR_LABEL_CHARS 40

static size_t text_chars(const char *s)
{
	size_t n = 0, len = s ? strlen(s) : 0;
	for (size_t at = 0; at < len; n++) {
		uint32_t cp;
		size_t k = utf8_decode(s + at, len - at, &cp);
		at += k ? k : 1;
	}
	return n;
}

static double text_w(const char *s)
{
	return CHAR_W * (double)text_chars(s);
}

/* Text cut to max characters, "…" in the last place when cut. */
static void escape_cut(FILE *out, const char *s, size_t max)
{
	size_t len = s ? strlen(s) : 0;
	if (text_chars(s) <= max) {
		svgplot_escape(out, s);
		return;
	}
	size_t at = 0;
	for (size_t n = 0; n + 1 < max && at < len; n++) {
		uint32_t cp;
		size_t k = utf8_decode(s + at, len - at, &cp);
		at += k ? k : 1;
	}
	char buf[256];
	size_t m = at < sizeof(buf) - 4 ? at : utf8_cut(s, at, sizeof(buf) - 4);
	memcpy(buf, s, m);
	memcpy(buf + m, "\xe2\x80\xa6", 4);
	svgplot_escape(out, buf);
}

struct box {
	double x0, y0, x1, y1;
};

/* The boxes taken in a chart, and the area a placed label must stay in. */
struct placer {
	struct box area;
	struct box b[MAX_BOXES];
	size_t n;
};

static bool box_overlap(const struct box *a, const struct box *b)
{
	return a->x0 < b->x1 && b->x0 < a->x1 && a->y0 < b->y1 && b->y0 < a->y1;
}

/* Take box b when it is inside the area and overlaps no box taken. */
static bool placer_take(struct placer *p, struct box b)
{
	if (b.x0 < p->area.x0 || b.x1 > p->area.x1 || b.y0 < p->area.y0 || b.y1 > p->area.y1 ||
	    p->n >= MAX_BOXES)
		return false;
	for (size_t i = 0; i < p->n; i++)
		if (box_overlap(&b, &p->b[i]))
			return false;
	p->b[p->n++] = b;
	return true;
}

/* Take the box of text at (x, y), anchored at its start (end: at its end). */
static bool placer_text(struct placer *p, double x, double y, const char *text, bool end)
{
	double w = text_w(text);
	struct box b = {end ? x - w : x, y - ASCENT, end ? x : x + w, y + DESCENT};
	return placer_take(p, b);
}

/* ---- axes ------------------------------------------------------------- */

enum ax_kind { AX_LIN, AX_LOG, AX_SYMLOG };

/* lo and hi are in the axis's own terms: values (linear), log10 of them
 * (log), sign(v) log10(1 + |v|) (signed log). */
struct axis {
	enum ax_kind kind;
	double lo, hi, step;
};

static double ax_t(const struct axis *a, double v)
{
	switch (a->kind) {
	case AX_LOG: return v > 0.0 ? log10(v) : NAN;
	case AX_SYMLOG: return copysign(log10(1.0 + fabs(v)), v);
	case AX_LIN: break;
	}
	return v;
}

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
	return (struct axis){AX_LIN, floor(lo / step) * step, ceil(hi / step) * step, step};
}

/* Whole decades around [lo, hi] (both > 0). */
static struct axis log_axis(double lo, double hi)
{
	double a = floor(log10(lo)), b = ceil(log10(hi));
	if (!(b > a))
		b = a + 1.0;
	return (struct axis){AX_LOG, a, b, 1.0};
}

/* A signed log axis over [lo, hi] (lo <= 0 <= hi), to whole decades. */
static struct axis symlog_axis(double lo, double hi)
{
	double a = lo < 0.0 ? -ceil(log10(1.0 - lo)) : 0.0;
	double b = hi > 0.0 ? ceil(log10(1.0 + hi)) : 0.0;
	if (!(b > a))
		b = a + 1.0;
	return (struct axis){AX_SYMLOG, a, b, 1.0};
}

/* The finite values an axis shows: the least, the greatest and the least
 * positive one. */
struct span {
	double lo_pos, hi, lo;
};

static void span_add(struct span *s, double v)
{
	if (!isfinite(v))
		return;
	s->lo = fmin(s->lo, v);
	s->hi = fmax(s->hi, v);
	if (v > 0.0)
		s->lo_pos = fmin(s->lo_pos, v);
}

/* Whether they call for a log axis: no negative one, and the positive ones
 * over two decades or more. */
static bool span_wants_log(const struct span *s)
{
	return s->lo >= 0.0 && isfinite(s->lo_pos) && s->hi / s->lo_pos >= 100.0;
}

/* The tick values of an axis, in data terms, at most max; how many.  On a
 * log axis drawn room units long, a tick per decade, or per as many decades
 * as keep ticks gap units apart (their labels' room); 2 and 5 between when
 * there is room for them too. */
static size_t ax_ticks(const struct axis *a, double *v, size_t max, double room, double gap)
{
	double per_decade = room / fmax(a->hi - a->lo, 1.0);
	double spaced = fmax(1.0, ceil(gap / fmax(per_decade, 1e-9)));
	size_t n = 0;
	switch (a->kind) {
	case AX_LIN:
		for (int i = 0; i <= MAX_TICKS && n < max; i++) {
			double t = a->lo + (double)i * a->step;
			if (!(t <= a->hi + a->step * 1e-9))
				break;
			v[n++] = fabs(t) < a->step * 1e-9 ? 0.0 : t;
		}
		break;
	case AX_LOG: {
		/* a tick per decade, every other one past ten decades, ... */
		double every = fmax(spaced, ceil((a->hi - a->lo) / 10.0));
		/* 2 and 5 sit at 0.30 and 0.70 of a decade */
		bool between = a->hi - a->lo <= 2.0 && per_decade * 0.3 >= gap;
		for (double d = a->lo; d <= a->hi + 1e-9 && n < max; d += every) {
			v[n++] = pow(10.0, d);
			if (between && d < a->hi - 1e-9 && n + 2 <= max) {
				v[n++] = 2.0 * pow(10.0, d);
				v[n++] = 5.0 * pow(10.0, d);
			}
		}
		break;
	}
	case AX_SYMLOG: {
		/* 0 and -/+(10^d - 1), which sit at -/+d and print as -/+10^d */
		double every = fmax(spaced, ceil((a->hi - a->lo) / 8.0));
		for (double d = every * floor(-a->lo / every); d >= 1.0 - 1e-9 && n < max; d -= every)
			v[n++] = -(pow(10.0, d) - 1.0);
		if (n < max)
			v[n++] = 0.0;
		for (double d = every; d <= a->hi + 1e-9 && n < max; d += every)
			v[n++] = pow(10.0, d) - 1.0;
		break;
	}
	}
	return n;
}

/* Where the plot area sits in the drawing. */
struct frame {
	double w, h, left, right, top, bottom;
	struct axis ax, ay;
};

static double px(const struct frame *f, double v)
{
	return f->left + (ax_t(&f->ax, v) - f->ax.lo) / (f->ax.hi - f->ax.lo) *
		(f->w - f->left - f->right);
}

static double py(const struct frame *f, double v)
{
	return f->h - f->bottom - (ax_t(&f->ay, v) - f->ay.lo) / (f->ay.hi - f->ay.lo) *
		(f->h - f->top - f->bottom);
}

/* A tick label: as few decimals as the step needs; on a log axis 1, 10,
 * 100, 1k, ..., 1M, 1G. */
static void tick_label(FILE *out, const struct axis *a, double v)
{
	if (a->kind != AX_LIN) {
		double m = fabs(v);
		if (a->kind == AX_SYMLOG)
			m = round(m + 1.0) - 1.0 == 0.0 ? 0.0 : round(m + 1.0);
		const char *sign = v < 0.0 ? "-" : "";
		if (m >= 1e9)
			fprintf(out, "%s%gG", sign, m / 1e9);
		else if (m >= 1e6)
			fprintf(out, "%s%gM", sign, m / 1e6);
		else if (m >= 1e3)
			fprintf(out, "%s%gk", sign, m / 1e3);
		else
			fprintf(out, "%s%g", sign, m);
		return;
	}
	double step = a->step;
	int dec = step >= 1.0 ? 0 : (int)ceil(-log10(step) - 1e-9);
	if (fabs(v) < step * 1e-9)
		v = 0.0;
	fprintf(out, "%.*f", dec > 6 ? 6 : dec, v);
}

/* The <figure>, <svg>, title, grid with ticks (y ticks only when y_ticks),
 * frame and axis labels of a chart; y_category: the y axis holds names. */
static void frame_open(FILE *out, const struct svgplot_chart *c, const struct frame *f, bool y_ticks,
		       bool y_category, const char *x_note)
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
	double v[MAX_TICKS + 2];
	fputs("<g class=\"grid\">\n", out);
	size_t nt = ax_ticks(&f->ax, v, MAX_TICKS + 1, f->w - f->left - f->right, 44.0);
	for (size_t i = 0; i < nt; i++) {
		double x = px(f, v[i]);
		fprintf(out, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\"/>", x, f->top, x,
			f->h - f->bottom);
		fprintf(out, "<text class=\"tick\" x=\"%.2f\" y=\"%.2f\" text-anchor=\"middle\">", x,
			f->h - f->bottom + 20.0);
		tick_label(out, &f->ax, v[i]);
		fputs("</text>\n", out);
	}
	nt = y_ticks ? ax_ticks(&f->ay, v, MAX_TICKS + 1, f->h - f->top - f->bottom, 20.0) : 0;
	for (size_t i = 0; i < nt; i++) {
		double y = py(f, v[i]);
		fprintf(out, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\"/>", f->left, y,
			f->w - f->right, y);
		fprintf(out, "<text class=\"tick\" x=\"%.2f\" y=\"%.2f\" text-anchor=\"end\">",
			f->left - 6.0, y + 4.0);
		tick_label(out, &f->ay, v[i]);
		fputs("</text>\n", out);
	}
	fputs("</g>\n", out);
	fprintf(out, "<rect class=\"frame\" x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\"/>\n",
		f->left, f->top, f->w - f->left - f->right, f->h - f->top - f->bottom);
	/* axis labels */
	fprintf(out, "<text class=\"label\" data-axis=\"x\" x=\"%.2f\" y=\"%.2f\" "
		"text-anchor=\"middle\">", f->left + (f->w - f->left - f->right) / 2.0,
		f->h - f->bottom + 42.0);
	svgplot_escape(out, c->x_label);
	svgplot_escape(out, x_note);
	fprintf(out, "</text>\n<text class=\"label%s\" data-axis=\"y\" transform=\"translate(16 %.2f) "
		"rotate(-90)\" text-anchor=\"middle\">", y_category ? " category" : "",
		f->top + (f->h - f->top - f->bottom) / 2.0);
	svgplot_escape(out, c->y_label);
	fputs("</text>\n", out);
}

/* The vertical markers, labelled inside the plot (stacked down from its
 * top, right of the line or left of it, where they overlap no other label),
 * then the horizontal ones (above or below the line, at its left or right
 * end); without h (bars), no horizontal ones and the labels above the plot,
 * one row each, where frame.top left them room. */
static void frame_markers(FILE *out, const struct svgplot_chart *c, const struct frame *f, bool h,
			  struct placer *pl)
{
	for (int m = 0; m < c->n_markers; m++) {
		if (!isfinite(c->markers[m].x) || !isfinite(px(f, c->markers[m].x)))
			continue;
		double x = px(f, c->markers[m].x);
		fprintf(out, "<line class=\"marker\" x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\"/>",
			x, f->top, x, f->h - f->bottom);
		const char *label = c->markers[m].label;
		double lx = 0.0, ly = 0.0;
		bool end = false, placed = false;
		for (int row = 0; !placed && row < (h ? 8 : 1); row++) {
			ly = h ? f->top + 14.0 + 14.0 * (double)row
			       : f->top - 5.0 - 14.0 * (double)(c->n_markers - 1 - m);
			for (int side = 0; !placed && side < 2; side++) {
				end = side == 1;
				lx = end ? x - 4.0 : x + 4.0;
				placed = placer_text(pl, lx, ly, label, end);
			}
		}
		if (placed) {
			fprintf(out, "<text class=\"marker\" x=\"%.2f\" y=\"%.2f\"%s>", lx, ly,
				end ? " text-anchor=\"end\"" : "");
			svgplot_escape(out, label);
			fputs("</text>", out);
		}
		fputs("\n", out);
	}
	for (int m = 0; h && m < c->n_hmarkers; m++) {
		if (!isfinite(c->hmarkers[m].x) || !isfinite(py(f, c->hmarkers[m].x)))
			continue;
		double y = py(f, c->hmarkers[m].x);
		fprintf(out, "<line class=\"marker\" x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\"/>",
			f->left, y, f->w - f->right, y);
		const char *label = c->hmarkers[m].label;
		double w = f->w - f->left - f->right;
		static const double AT[][3] = {{0.0, -4.0, 0}, {0.0, 14.0, 0}, {1.0, -4.0, 1},
					       {1.0, 14.0, 1}, {0.5, -4.0, 0}, {0.5, 14.0, 0}};
		for (size_t k = 0; k < sizeof(AT) / sizeof(AT[0]); k++) {
			bool end = AT[k][2] != 0.0;
			double lx = f->left + AT[k][0] * w + (end ? -6.0 : 6.0), ly = y + AT[k][1];
			if (placer_text(pl, lx, ly, label, end)) {
				fprintf(out, "<text class=\"marker\" x=\"%.2f\" y=\"%.2f\"%s>", lx, ly,
					end ? " text-anchor=\"end\"" : "");
				svgplot_escape(out, label);
				fputs("</text>", out);
				break;
			}
		}
		fputs("\n", out);
	}
}

static void frame_close(FILE *out, const struct svgplot_chart *c)
{
	fputs("</svg>\n<figcaption>", out);
	svgplot_escape(out, c->caption);
	fputs("</figcaption>\n</figure>\n", out);
}

/* ---- line charts ------------------------------------------------------ */

/* Legend items: a swatch of 22 units, the name, a gap of 14. */
#define LEGEND_ROW 18.0
#define SWATCH 22.0
#define LEGEND_GAP 14.0

static double legend_item_w(const struct svgplot_series *s)
{
	return SWATCH + text_w(s->name) + LEGEND_GAP;
}

/* Rows the legend of s[0..n) takes in a width of room. */
static int legend_rows(const struct svgplot_series *s, size_t n, double room)
{
	int rows = n ? 1 : 0;
	double at = 0.0;
	for (size_t i = 0; i < n; i++) {
		double w = legend_item_w(&s[i]);
		if (at > 0.0 && at + w > room) {
			rows++;
			at = 0.0;
		}
		at += w;
	}
	return rows;
}

static const char *series_color(const struct svgplot_series *s, size_t i)
{
	return COLORS[(s->color > 0 ? (size_t)(s->color - 1) : i) % N_COLORS];
}

/* A stroke-dasharray attribute for series i, or "". */
static const char *series_dash(const struct svgplot_series *s, size_t i)
{
	if (s->dashed)
		return " stroke-dasharray=\"7 4\"";
	return i >= N_COLORS ? " stroke-dasharray=\"2 3\"" : "";
}

static void dot(FILE *out, double x, double y, const char *color, bool hollow)
{
	if (hollow)
		fprintf(out, "<circle cx=\"%.2f\" cy=\"%.2f\" r=\"4\" fill=\"#fff\" stroke=\"%s\" "
			"stroke-width=\"1.5\"/>", x, y, color);
	else
		fprintf(out, "<circle cx=\"%.2f\" cy=\"%.2f\" r=\"4\" fill=\"%s\"/>", x, y, color);
}

/* The legend under the plot, from y0 down, wrapped to the drawing's width;
 * its boxes taken in pl. */
static void legend(FILE *out, const struct svgplot_series *s, size_t n, const struct frame *f,
		   double y0, struct placer *pl)
{
	double x0 = 16.0, room = f->w - 32.0, at = 0.0, y = y0;
	for (size_t i = 0; i < n; i++) {
		double w = legend_item_w(&s[i]);
		if (at > 0.0 && at + w > room) {
			at = 0.0;
			y += LEGEND_ROW;
		}
		double x = x0 + at;
		const char *color = series_color(&s[i], i);
		if (s[i].points)
			dot(out, x + 11.0, y - 4.0, color, s[i].hollow);
		else
			fprintf(out, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"%s\" "
				"stroke-width=\"2\"%s/>", x, y - 4.0, x + 18.0, y - 4.0, color,
				series_dash(&s[i], i));
		fprintf(out, "<text class=\"legend\" x=\"%.2f\" y=\"%.2f\">", x + SWATCH, y);
		svgplot_escape(out, s[i].name);
		fputs("</text>\n", out);
		struct box b = {x + SWATCH, y - ASCENT, x + SWATCH + text_w(s[i].name), y + DESCENT};
		if (pl->n < MAX_BOXES)
			pl->b[pl->n++] = b;
		at += w;
	}
}

void svgplot_lines(FILE *out, const struct svgplot_chart *c, const struct svgplot_series *s,
		   size_t n_series)
{
	struct span sx = {INFINITY, -INFINITY, INFINITY}, sy = sx;
	for (size_t i = 0; i < n_series; i++)
		for (size_t k = 0; k < s[i].n; k++) {
			if (!isfinite(s[i].x[k]) || !isfinite(s[i].y[k]))
				continue;
			span_add(&sx, s[i].x[k]);
			span_add(&sy, s[i].y[k]);
		}
	for (int m = 0; m < c->n_markers; m++)
		span_add(&sx, c->markers[m].x);
	for (int m = 0; m < c->n_hmarkers; m++)
		span_add(&sy, c->hmarkers[m].x);
	bool xlog = c->x_scale == SVGPLOT_LOG ? isfinite(sx.lo_pos)
		    : c->x_scale == SVGPLOT_AUTO && span_wants_log(&sx);
	bool ylog = c->y_scale == SVGPLOT_LOG ? isfinite(sy.lo_pos)
		    : c->y_scale == SVGPLOT_AUTO && span_wants_log(&sy);
	double xlo = sx.lo, xhi = sx.hi, ylo = sy.lo, yhi = sy.hi;
	if (!isfinite(xlo)) {
		xlo = 0.0;
		xhi = 1.0;
	}
	if (!isfinite(ylo)) {
		ylo = 0.0;
		yhi = 1.0;
	}
	if (ylo > 0.0)
		ylo = 0.0; /* counts and shares read best from zero */
	int rows = legend_rows(s, n_series, W - 32.0);
	double bottom = BOTTOM + (rows ? 12.0 + LEGEND_ROW * (double)rows : 0.0);
	struct frame f = {W, H + bottom - BOTTOM, LEFT, RIGHT, TOP, bottom,
			  xlog ? log_axis(sx.lo_pos, sx.hi) : nice_axis(xlo, xhi),
			  ylog ? log_axis(sy.lo_pos, sy.hi) : nice_axis(ylo, yhi)};
	frame_open(out, c, &f, true, false, xlog ? ", log scale" : "");
	struct placer pl = {.area = {0.0, 0.0, f.w, f.h}};
	legend(out, s, n_series, &f, f.h - f.bottom + 66.0, &pl);
	/* the plot area for what is placed inside it */
	pl.area = (struct box){f.left + 1.0, f.top + 1.0, f.w - f.right - 1.0, f.h - f.bottom - 1.0};
	/* series */
	for (size_t i = 0; i < n_series; i++) {
		const char *color = series_color(&s[i], i);
		if (s[i].points) {
			fprintf(out, "<g class=\"series\">");
			for (size_t k = 0; k < s[i].n; k++) {
				double x = px(&f, s[i].x[k]), y = py(&f, s[i].y[k]);
				if (isfinite(x) && isfinite(y) && isfinite(s[i].x[k]) &&
				    isfinite(s[i].y[k]))
					dot(out, x, y, color, s[i].hollow);
			}
			fputs("</g>\n", out);
		} else {
			fprintf(out, "<polyline class=\"series\" fill=\"none\" stroke=\"%s\"%s points=\"",
				color, series_dash(&s[i], i));
			bool first = true;
			for (size_t k = 0; k < s[i].n; k++) {
				double x = px(&f, s[i].x[k]), y = py(&f, s[i].y[k]);
				if (!isfinite(s[i].x[k]) || !isfinite(s[i].y[k]) || !isfinite(x) ||
				    !isfinite(y))
					continue;
				fprintf(out, "%s%.2f,%.2f", first ? "" : " ", x, y);
				first = false;
			}
			fputs("\"/>\n", out);
		}
	}
	/* the dots claim their room before any label is placed */
	for (size_t i = 0; i < n_series; i++)
		for (size_t k = 0; s[i].points && k < s[i].n && pl.n < MAX_BOXES; k++) {
			double x = px(&f, s[i].x[k]), y = py(&f, s[i].y[k]);
			if (isfinite(x) && isfinite(y))
				pl.b[pl.n++] = (struct box){x - 4.0, y - 4.0, x + 4.0, y + 4.0};
		}
	frame_markers(out, c, &f, true, &pl);
	for (size_t i = 0; i < n_series; i++) {
		if (!s[i].points || !s[i].labels)
			continue;
		for (size_t k = 0; k < s[i].n; k++) {
			double x = px(&f, s[i].x[k]), y = py(&f, s[i].y[k]);
			const char *t = s[i].labels[k];
			if (!t || !t[0] || !isfinite(x) || !isfinite(y) || !isfinite(s[i].x[k]) ||
			    !isfinite(s[i].y[k]))
				continue;
			static const double AT[][3] = {{7.0, 4.0, 0}, {-7.0, 4.0, 1}, {-4.0, -8.0, 0},
						       {-4.0, 16.0, 0}};
			for (size_t a = 0; a < sizeof(AT) / sizeof(AT[0]); a++) {
				bool end = AT[a][2] != 0.0;
				if (placer_text(&pl, x + AT[a][0], y + AT[a][1], t, end)) {
					fprintf(out, "<text class=\"point\" x=\"%.2f\" y=\"%.2f\"%s "
						"fill=\"%s\">", x + AT[a][0], y + AT[a][1],
						end ? " text-anchor=\"end\"" : "", series_color(&s[i], i));
					svgplot_escape(out, t);
					fputs("</text>\n", out);
					break;
				}
			}
		}
	}
	frame_close(out, c);
}

/* ---- bar charts ------------------------------------------------------- */

/* Height of one bar's row, and the least room for category labels. */
#define BAR_ROW 24.0
#define BAR_LEFT 120.0

/* The text printed at a bar's end. */
static void bar_value(char *buf, size_t cap, const struct svgplot_chart *c,
		      const struct svgplot_bar *b)
{
	int digits = c->value_digits < 0 ? 0 : c->value_digits > 6 ? 6 : c->value_digits;
	if (!isfinite(b->value))
		snprintf(buf, cap, "-%s%s", b->note && b->note[0] ? "  " : "", b->note ? b->note : "");
	else
		snprintf(buf, cap, "%s%.*f%s%s%s", c->value_signed && b->value > 0.0 ? "+" : "",
			 digits, b->value, c->value_unit ? c->value_unit : "",
			 b->note && b->note[0] ? "  " : "", b->note ? b->note : "");
}

static int median_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* The median of the magnitudes of the finite, non-zero values. */
static double median_mag(const struct svgplot_bar *bars, size_t n)
{
	double v[64];
	size_t m = 0;
	for (size_t i = 0; i < n && m < sizeof(v) / sizeof(v[0]); i++)
		if (isfinite(bars[i].value) && bars[i].value != 0.0)
			v[m++] = fabs(bars[i].value);
	if (m == 0)
		return NAN;
	qsort(v, m, sizeof(v[0]), median_cmp);
	return m % 2 ? v[m / 2] : 0.5 * (v[m / 2 - 1] + v[m / 2]);
}

void svgplot_bars(FILE *out, const struct svgplot_chart *c, const struct svgplot_bar *bars,
		  size_t n_bars)
{
	double lo = 0.0, hi = 0.0, big = 0.0, label_w = 0.0, value_w = 0.0;
	char text[320];
	for (size_t i = 0; i < n_bars; i++) {
		if (isfinite(bars[i].value)) {
			lo = fmin(lo, bars[i].value);
			hi = fmax(hi, bars[i].value);
			big = fmax(big, fabs(bars[i].value));
		}
		size_t nc = text_chars(bars[i].label);
		label_w = fmax(label_w, CHAR_W * (double)(nc < BAR_LABEL_CHARS ? nc : BAR_LABEL_CHARS));
		bar_value(text, sizeof(text), c, &bars[i]);
		value_w = fmax(value_w, text_w(text));
	}
	for (int m = 0; m < c->n_markers; m++)
		if (isfinite(c->markers[m].x))
			hi = fmax(hi, c->markers[m].x);
	double med = median_mag(bars, n_bars);
	bool symlog = c->x_scale == SVGPLOT_AUTO && isfinite(med) && big > 10.0 * med;
	double rows = n_bars ? (double)n_bars : 1.0;
	double left = fmax(BAR_LEFT, 34.0 + label_w + 8.0);
	/* values left of zero print left of their bar: room on both sides */
	double right = fmax(RIGHT, value_w + 12.0);
	if (lo < 0.0)
		left += value_w + 8.0;
	if (left > W - right - 120.0)
		left = fmax(BAR_LEFT, W - right - 120.0);
	double top = TOP + 14.0 * (double)c->n_markers;
	struct frame f = {W, top + rows * BAR_ROW + BOTTOM, left, right, top, BOTTOM,
			  symlog ? symlog_axis(lo, hi)
				 : nice_axis(lo * 1.05, hi > lo ? hi * 1.05 : 1.0),
			  {AX_LIN, 0.0, rows, 1.0}};
	double x0 = px(&f, 0.0);
	frame_open(out, c, &f, false, true, symlog ? " (signed log scale)" : "");
	size_t max_chars = (size_t)((left - 34.0 - (lo < 0.0 ? value_w + 8.0 : 0.0)) / CHAR_W);
	for (size_t i = 0; i < n_bars; i++) {
		double y = f.top + BAR_ROW * (double)i;
		fprintf(out, "<text class=\"tick\" x=\"%.2f\" y=\"%.2f\" text-anchor=\"end\">",
			(lo < 0.0 ? left - value_w - 8.0 : left) - 6.0, y + BAR_ROW / 2.0 + 4.0);
		escape_cut(out, bars[i].label, max_chars < BAR_LABEL_CHARS ? max_chars
									    : BAR_LABEL_CHARS);
		fputs("</text>", out);
		bar_value(text, sizeof(text), c, &bars[i]);
		if (isfinite(bars[i].value)) {
			double x1 = px(&f, bars[i].value);
			bool neg = bars[i].value < 0.0;
			fprintf(out, "<rect class=\"bar\" x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" "
				"height=\"%.2f\" fill=\"%s\"/><text class=\"value\" x=\"%.2f\" "
				"y=\"%.2f\"%s>", fmin(x0, x1), y + 4.0, fmax(fabs(x1 - x0), 0.5),
				BAR_ROW - 8.0, COLORS[neg ? 2 : 0], neg ? fmin(x0, x1) - 4.0
									: fmax(x0, x1) + 4.0,
				y + BAR_ROW / 2.0 + 4.0, neg ? " text-anchor=\"end\"" : "");
			svgplot_escape(out, text);
			fputs("</text>\n", out);
		} else {
			fprintf(out, "<text class=\"value\" x=\"%.2f\" y=\"%.2f\">", x0 + 4.0,
				y + BAR_ROW / 2.0 + 4.0);
			svgplot_escape(out, text);
			fputs("</text>\n", out);
		}
	}
	struct placer pl = {.area = {0.0, 0.0, f.w, f.h}};
	frame_markers(out, c, &f, false, &pl);
	frame_close(out, c);
}
