/* SPDX-License-Identifier: Apache-2.0
 * html: self-contained HTML pages of JSON results (see html.h).
 *
 * One renderer per kind of result, each reading the cJSON tree through the
 * rd_ helpers: a key the page needs and does not find is an input error
 * naming the file, the key and the kind of result expected; the first such
 * error wins and the page is abandoned.  Every text that comes from input
 * (paths, names, warnings) goes through svgplot_escape.
 *
 * Memory: the tree comes from reports/jsondoc.h, which leaves long arrays
 * of numbers in the text; a line is read from them in one pass into at
 * most LINE_POINTS points (rd_line), so drawing a result takes little more
 * than its text, whatever the length of its time series. */
#include "reports/html.h"

#include "reports/fields.h"
#include "reports/jsondoc.h"

#include "base/diag.h"
#include "base/utf8.h"
#include "reports/svgplot.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Series drawn in one chart at most (the legend's room). */
#define MAX_SERIES 12
/* Points of a cost-against-utilisation curve. */
#define UTIL_POINTS 100
/* Candidates of a sizing drawn at most. */
#define MAX_CANDIDATES 512
/* Points of one line drawn at most: a chart's plot is about 520 units
 * wide, so four points (first, lowest, highest, last) for each of 512
 * stretches of a longer series show every peak and dip it can. */
#define LINE_POINTS 2048
/* Values of a result outside its long arrays of numbers (reports/jsondoc.h)
 * read at most: about 80 bytes each in memory.  A result agentcap writes
 * holds a few thousand. */
#define MAX_VALUES ((size_t)1 << 20)

static const char CSS[] =
	"body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;max-width:60rem;"
	"margin:1.5rem auto;padding:0 1rem;color:#222;line-height:1.4}\n"
	"h1{font-size:1.5rem;margin-bottom:.3rem}h2{font-size:1.15rem;margin-top:1.6rem;"
	"border-bottom:1px solid #ccc}\n"
	"table{border-collapse:collapse;margin:.5rem 0;display:block;overflow-x:auto;max-width:100%}"
	"td,th{padding:.15rem .8rem .15rem 0;text-align:left;vertical-align:top;"
	"overflow-wrap:break-word}th{font-weight:600}td.n{text-align:right;"
	"font-variant-numeric:tabular-nums;overflow-wrap:normal;white-space:nowrap}\n"
	"pre{white-space:pre-wrap;overflow-wrap:anywhere}\n"
	".answer-yes{color:#1a7f37;font-weight:700}.answer-no{color:#b42318;font-weight:700}\n"
	".warn{background:#fff4e5;border-left:4px solid #f59e0b;padding:.4rem .8rem;margin:.4rem 0}\n"
	"figure{margin:1rem 0;break-inside:avoid}figure svg{width:100%;height:auto;max-width:640px;"
	"display:block}\nfigcaption{font-size:.9rem;color:#444;max-width:640px}\n"
	"svg text{font-family:inherit;font-size:12px;fill:#222}svg text.title{font-size:15px;"
	"font-weight:600}svg text.label{font-size:13px}svg text.point{font-size:11px}\n"
	"svg .grid line{stroke:#e5e5e5;stroke-width:1}svg rect.frame{fill:none;stroke:#888}\n"
	"svg polyline.series{stroke-width:2}svg line.marker{stroke:#b42318;stroke-dasharray:6 4;"
	"stroke-width:1.5}svg text.marker{fill:#b42318}\n"
	"@media print{body{max-width:none;margin:0}h2{break-after:avoid}}\n";

/* ---- reading the result ------------------------------------------------- */

struct rd {
	const struct jsondoc *doc;
	const char *name;  /* the file, for messages */
	const char *kind;  /* "replay", ... */
	struct diag *d;
	int rc;            /* first error */
};

static void rd_missing(struct rd *r, const char *key, const char *what)
{
	if (r->rc == 0)
		r->rc = diag_set(r->d, DIAG_EINPUT, "%s: the %s result has no %s '%s' (expected the "
				 "JSON that agentcap %s --json writes)", r->name, r->kind, what, key,
				 r->kind);
}

static const cJSON *rd_obj(struct rd *r, const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	if (!cJSON_IsObject(v)) {
		rd_missing(r, key, "object");
		return NULL;
	}
	return v;
}

static const cJSON *rd_arr(struct rd *r, const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	if (!cJSON_IsArray(v)) {
		rd_missing(r, key, "array");
		return NULL;
	}
	return v;
}

/* A number; null (a value that was not finite) reads as NAN. */
static double rd_num(struct rd *r, const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	if (cJSON_IsNumber(v))
		return v->valuedouble;
	if (!cJSON_IsNull(v))
		rd_missing(r, key, "number");
	return NAN;
}

/* A number that may be absent or null: NAN then. */
static double opt_num(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

/* A string; null or absent reads as "-". */
static const char *opt_str(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	return cJSON_IsString(v) ? v->valuestring : "-";
}

static bool opt_bool(const cJSON *o, const char *key)
{
	return cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, key));
}

/* Where the x or the y of a line come from: the numbers of array a (NULL:
 * the index, for the first n elements), each times mul over div. */
struct src {
	const cJSON *a;
	double mul, div;
	size_t n;
};

/* The points of a line, at most LINE_POINTS. */
struct line {
	size_t n;
	double x[LINE_POINTS], y[LINE_POINTS];
};

static double src_next(struct src s, struct jsondoc_nums *it, size_t i)
{
	return (s.a ? jsondoc_nums_next(it) : (double)i) * s.mul / s.div;
}

/* One point of a stretch, with its index. */
struct pick {
	size_t i;
	double x, y;
};

/* The line through (x[i], y[i]), for each i of the shorter of xs and ys
 * (elements that are not numbers read as NAN): every point when there are
 * at most LINE_POINTS, else the line cut into LINE_POINTS / 4 stretches of
 * consecutive points and, of each, its first, lowest, highest and last
 * finite point in their order: what a chart of this width can show, read
 * in one pass without holding the series.  A new line (free it); NULL
 * with r->rc set when out of memory. */
static struct line *rd_line(struct rd *r, struct src xs, struct src ys)
{
	struct line *l = malloc(sizeof(*l));
	if (!l) {
		if (r->rc == 0)
			r->rc = diag_set(r->d, DIAG_ENOMEM, "out of memory for the report's charts");
		return NULL;
	}
	size_t nx = xs.a ? jsondoc_size(r->doc, xs.a) : xs.n;
	size_t ny = ys.a ? jsondoc_size(r->doc, ys.a) : ys.n;
	size_t n = nx < ny ? nx : ny;
	struct jsondoc_nums ix, iy;
	jsondoc_nums_init(&ix, r->doc, xs.a);
	jsondoc_nums_init(&iy, r->doc, ys.a);
	l->n = 0;
	if (n <= LINE_POINTS) {
		for (size_t i = 0; i < n; i++) {
			l->x[i] = src_next(xs, &ix, i);
			l->y[i] = src_next(ys, &iy, i);
		}
		l->n = n;
		return l;
	}
	const uint64_t stretches = LINE_POINTS / 4;
	size_t i = 0;
	for (uint64_t k = 0; k < stretches; k++) {
		size_t stop = (size_t)((k + 1) * (uint64_t)n / stretches);
		struct pick p[4];
		bool any = false;
		for (; i < stop; i++) {
			struct pick q = {i, src_next(xs, &ix, i), src_next(ys, &iy, i)};
			if (!isfinite(q.x) || !isfinite(q.y))
				continue;
			if (!any)
				p[0] = p[1] = p[2] = q;
			if (q.y < p[1].y)
				p[1] = q;
			if (q.y > p[2].y)
				p[2] = q;
			p[3] = q;
			any = true;
		}
		if (!any)
			continue;
		/* in index order, each once */
		for (int a = 1; a < 4; a++)
			for (int b = a; b > 0 && p[b].i < p[b - 1].i; b--) {
				struct pick t = p[b];
				p[b] = p[b - 1];
				p[b - 1] = t;
			}
		for (int a = 0; a < 4; a++)
			if (a == 0 || p[a].i != p[a - 1].i) {
				l->x[l->n] = p[a].x;
				l->y[l->n++] = p[a].y;
			}
	}
	return l;
}

/* ---- labels -------------------------------------------------------------- */

/* "…": what ends a label cut to fit. */
#define ELLIPSIS "\xe2\x80\xa6"

/* The strings up to NULL, one after the other, into buf[0..cap) (cap >= 1):
 * when they do not fit, cut between two UTF-8 characters (never inside
 * one: utf8_cut) with "…" after the cut, so a label is never left with
 * half a character; it is escaped only when written, so never cut inside
 * an entity either. */
static void fit(char *buf, size_t cap, ...) __attribute__((sentinel));

static void fit(char *buf, size_t cap, ...)
{
	const size_t room = cap - 1, dots = sizeof(ELLIPSIS) - 1;
	size_t at = 0;
	bool cut = false;
	va_list ap;
	va_start(ap, cap);
	for (const char *s; !cut && (s = va_arg(ap, const char *)) != NULL;) {
		size_t n = strlen(s);
		if (n > room - at) {
			n = utf8_cut(s, n, room - at > dots ? room - at - dots : 0);
			cut = true;
		}
		memcpy(buf + at, s, n);
		at += n;
	}
	va_end(ap);
	if (cut && room - at >= dots) {
		memcpy(buf + at, ELLIPSIS, dots);
		at += dots;
	}
	buf[at] = '\0';
}

/* ---- page pieces -------------------------------------------------------- */

static void page_begin(FILE *out, const char *title)
{
	fputs("<!DOCTYPE html>\n<html xmlns=\"http://www.w3.org/1999/xhtml\" lang=\"en\">\n<head>\n"
	      "<meta charset=\"utf-8\"/>\n<meta name=\"viewport\" content=\"width=device-width, "
	      "initial-scale=1\"/>\n<title>",
	      out);
	svgplot_escape(out, title);
	fprintf(out, "</title>\n<style>\n%s</style>\n</head>\n<body>\n<h1>", CSS);
	svgplot_escape(out, title);
	fputs("</h1>\n", out);
}

static void page_end(FILE *out)
{
	fputs("</body>\n</html>\n", out);
}

static void h2(FILE *out, const char *text)
{
	fputs("<h2>", out);
	svgplot_escape(out, text);
	fputs("</h2>\n", out);
}

/* The "what was run" table: rows of (name, value), value NULL ends. */
struct fact {
	const char *name;
	char value[512];
};

static void facts(FILE *out, const char *heading, const struct fact *f, size_t n)
{
	h2(out, heading);
	fputs("<table>\n", out);
	for (size_t i = 0; i < n; i++) {
		fputs("<tr><th>", out);
		svgplot_escape(out, f[i].name);
		fputs("</th><td>", out);
		svgplot_escape(out, f[i].value);
		fputs("</td></tr>\n", out);
	}
	fputs("</table>\n", out);
}

static void fact_str(struct fact *f, size_t *n, const char *name, const char *value)
{
	f[*n].name = name;
	fit(f[*n].value, sizeof(f[*n].value), value ? value : "-", NULL);
	(*n)++;
}

static void answer(FILE *out, bool no, const char *question)
{
	fprintf(out, "<p>Answer: <span class=\"%s\">%s</span> &#8212; ", no ? "answer-no" : "answer-yes",
		no ? "no" : "yes");
	svgplot_escape(out, question);
	fputs("</p>\n", out);
}

static void warn_para(FILE *out, const char *text)
{
	fputs("<p class=\"warn\">", out);
	svgplot_escape(out, text);
	fputs("</p>\n", out);
}

/* A table cell with a number, "-" when it is not finite. */
static void td_num(FILE *out, double v, int digits)
{
	if (isfinite(v))
		fprintf(out, "<td class=\"n\">%.*f</td>", digits, v);
	else
		fputs("<td class=\"n\">-</td>", out);
}

static void td_str(FILE *out, const char *s)
{
	fputs("<td>", out);
	svgplot_escape(out, s);
	fputs("</td>", out);
}

static void th_row(FILE *out, const char *const *heads, size_t n)
{
	fputs("<tr>", out);
	for (size_t i = 0; i < n; i++) {
		fputs("<th>", out);
		svgplot_escape(out, heads[i]);
		fputs("</th>", out);
	}
	fputs("</tr>\n", out);
}

/* The "run" object size, compare and whatif write at their top. */
static void run_facts(struct rd *r, const cJSON *doc, struct fact *f, size_t *n)
{
	const cJSON *run = rd_obj(r, doc, "run");
	if (!run)
		return;
	fact_str(f, n, "Scenario", opt_str(run, "scenario_name"));
	fact_str(f, n, "Scenario file", opt_str(run, "scenario_path"));
	fact_str(f, n, "Trace", opt_str(run, "trace"));
	fact_str(f, n, "Model", opt_str(run, "model_id"));
}

/* ---- objectives ---------------------------------------------------------- */

/* The limits of "ttft_p95=2000ms,tpot_p50=50ms", by key; how many. */
struct objective {
	char key[16];
	double limit_ms;
};

static int parse_slo(const char *text, struct objective *o, int max)
{
	int n = 0;
	const char *p = text;
	while (*p && n < max) {
		const char *eq = strchr(p, '=');
		if (!eq || eq - p >= (ptrdiff_t)sizeof(o[n].key))
			break;
		memcpy(o[n].key, p, (size_t)(eq - p));
		o[n].key[eq - p] = '\0';
		char *end;
		o[n].limit_ms = strtod(eq + 1, &end);
		if (end == eq + 1 || !(o[n].limit_ms > 0.0))
			break;
		n++;
		p = strchr(end, ',');
		if (!p)
			break;
		p++;
	}
	return n;
}

/* ---- replay ------------------------------------------------------------- */

/* One CDF of a run's "charts" as a series named name; *own the line to
 * free. */
static int cdf_series(struct rd *r, const cJSON *charts, const char *key, const char *name,
		      struct svgplot_series *s, struct line **own)
{
	const cJSON *c = rd_obj(r, charts, key);
	const cJSON *ms = c ? rd_arr(r, c, "ms") : NULL, *pct = c ? rd_arr(r, c, "pct") : NULL;
	if (r->rc)
		return r->rc;
	*own = rd_line(r, (struct src){ms, 1.0, 1.0, 0}, (struct src){pct, 1.0, 1.0, 0});
	if (*own)
		*s = (struct svgplot_series){.name = name, .x = (*own)->x, .y = (*own)->y,
					     .n = (*own)->n};
	return r->rc;
}

/* Charts of TTFT, TPOT and E2E: one series per run in charts[0..n_runs),
 * each objective o[0..n_obj) on its chart: a line at its limit and, for a
 * percentile ("ttft_p95"), one at that share of the calls; a key without a
 * percentile ("ttft", replay's objectives) is a line at its limit. */
static void cdf_charts(FILE *out, struct rd *r, const cJSON *const *charts, const char *const *names,
		       size_t n_runs, const struct objective *o, int n_obj)
{
	static const char *const STEM[] = {"ttft", "tpot", "e2el"};
	static const char *const NAME[] = {"TTFT", "TPOT", "E2E"};
	static const char *const KEYS[] = {"ttft_cdf", "tpot_cdf", "e2el_cdf"};
	const struct svgplot_chart TEMPLATE[] = {
		{.id = "ttft-cdf", .title = "Time to first token, cumulative", .x_label = "TTFT (ms)",
		 .y_label = "calls at or below (%)",
		 .caption = "Read across from a share of calls to the TTFT they got: the curve should "
			    "reach the top left of the dashed objective line."},
		{.id = "tpot-cdf", .title = "Time per output token (after the first), cumulative",
		 .x_label = "TPOT (ms)", .y_label = "calls at or below (%)",
		 .caption = "How fast tokens stream once a call has started; a long right tail means "
			    "decode steps crowded by large batches or prefills."},
		{.id = "e2e-cdf", .title = "End-to-end latency, cumulative", .x_label = "E2E (ms)",
		 .y_label = "calls at or below (%)",
		 .caption = "How long an agent waits for each whole call; this is what stretches a "
			    "session."},
	};
	char labels[SVGPLOT_MAX_MARKERS][64], hlabels[SVGPLOT_MAX_MARKERS][32];
	for (int k = 0; k < 3 && r->rc == 0; k++) {
		struct svgplot_chart c = TEMPLATE[k];
		c.x_scale = SVGPLOT_AUTO;
		for (int i = 0; i < n_obj && c.n_markers < SVGPLOT_MAX_MARKERS; i++) {
			size_t len = strlen(STEM[k]);
			if (strncmp(o[i].key, STEM[k], len) != 0 ||
			    (o[i].key[len] != '\0' && o[i].key[len] != '_'))
				continue;
			double pct = o[i].key[len] == '_' && o[i].key[len + 1] == 'p'
				     ? strtod(o[i].key + len + 2, NULL) : NAN;
			if (isfinite(pct) && pct > 0.0 && pct < 100.0) {
				snprintf(labels[c.n_markers], sizeof(labels[0]), "P%g %s objective %g ms",
					 pct, NAME[k], o[i].limit_ms);
				snprintf(hlabels[c.n_hmarkers], sizeof(hlabels[0]), "%g%% of calls", pct);
				c.hmarkers[c.n_hmarkers] = (struct svgplot_marker){pct,
										   hlabels[c.n_hmarkers]};
				c.n_hmarkers++;
			} else {
				snprintf(labels[c.n_markers], sizeof(labels[0]), "%s objective %g ms",
					 NAME[k], o[i].limit_ms);
			}
			c.markers[c.n_markers] = (struct svgplot_marker){o[i].limit_ms,
									 labels[c.n_markers]};
			c.n_markers++;
		}
		if (k == 0 && c.n_markers == 0)
			c.caption = "Read across from a share of calls to the TTFT they got: the further "
				    "left the curve, the sooner agents see their first token.";
		struct svgplot_series s[2];
		struct line *own[2] = {NULL, NULL};
		for (size_t i = 0; i < n_runs && r->rc == 0; i++)
			cdf_series(r, charts[i], KEYS[k], names[i], &s[i], &own[i]);
		if (r->rc == 0)
			svgplot_lines(out, &c, s, n_runs);
		for (int i = 0; i < 2; i++)
			free(own[i]);
	}
}

/* Calls arriving per bin and their prefix-cache hit rate, from a run's
 * "charts". */
static void arrivals_charts(FILE *out, struct rd *r, const cJSON *charts)
{
	double bin_s = rd_num(r, charts, "arrivals_bin_s");
	const cJSON *a = rd_arr(r, charts, "arrivals"), *h = rd_arr(r, charts, "hit_rate");
	if (r->rc)
		return;
	size_t n = jsondoc_size(r->doc, a);
	struct src t = {NULL, bin_s, 3600.0, n};
	struct line *counts = rd_line(r, t, (struct src){a, 1.0, 1.0, 0});
	struct line *hit = rd_line(r, t, (struct src){h, 100.0, 1.0, 0});
	if (r->rc == 0) {
		char title[96];
		snprintf(title, sizeof(title), "Calls arriving per %g min", bin_s / 60.0);
		struct svgplot_chart c = {
			.id = "arrivals",
			.title = title,
			.x_label = "time from the first call (h)",
			.y_label = "calls arriving (per bin)",
			.caption = "The load over the run: latency percentiles are mostly decided by the "
				   "busiest stretch.",
		};
		struct svgplot_series s = {.name = "calls", .x = counts->x, .y = counts->y,
					   .n = counts->n};
		svgplot_lines(out, &c, &s, 1);
		snprintf(title, sizeof(title), "Prefix-cache hit rate per %g min", bin_s / 60.0);
		c = (struct svgplot_chart){
			.id = "hit-rate-time",
			.title = title,
			.x_label = "time from the first call (h)",
			.y_label = "prompt tokens found cached (%)",
			.caption = "Token-weighted hit rate of the calls arriving in each bin: a dip is "
				   "new sessions starting cold, or a cache too small for the load of the "
				   "moment.",
		};
		s = (struct svgplot_series){.name = "hit rate", .x = hit->x, .y = hit->y, .n = hit->n,
					    .points = n < 3};
		svgplot_lines(out, &c, &s, 1);
	}
	free(counts);
	free(hit);
}

static void stats_row(FILE *out, struct rd *r, const cJSON *doc, const char *label, const char *stem)
{
	static const char *const PRE[] = {"mean", "median", "p90", "p95", "p99"};
	fputs("<tr><th>", out);
	svgplot_escape(out, label);
	fputs("</th>", out);
	for (size_t i = 0; i < sizeof(PRE) / sizeof(PRE[0]); i++) {
		char key[48];
		snprintf(key, sizeof(key), "%s_%s_ms", PRE[i], stem);
		td_num(out, rd_num(r, doc, key), 2);
	}
	fputs("</tr>\n", out);
}

/* A time series section (the run's "timeseries", when it has one). */
static void timeseries_charts(FILE *out, struct rd *r, const cJSON *doc);

/* The run's "backends" (API backends beside the local engines,
 * docs/hybrid.md), when it has one: where the calls went, what each side
 * cost and the latency each gave. */
static void backends_table(FILE *out, struct rd *r, const cJSON *doc)
{
	const cJSON *b = cJSON_GetObjectItemCaseSensitive(doc, "backends");
	if (!cJSON_IsObject(b))
		return;
	const cJSON *per = rd_arr(r, b, "per_backend");
	double spilled = rd_num(r, b, "spilled_share"), fallback = rd_num(r, b, "fallback_share");
	double size = rd_num(r, b, "size_share"), usd = rd_num(r, b, "usd");
	if (r->rc)
		return;
	fprintf(out, "<h2>Backends</h2>\n<p>Spilled %.2f%%, fell back %.2f%%, routed by size %.2f%% "
		"of the calls; API spend over the run %.2f USD at list prices.</p>\n",
		100.0 * spilled, 100.0 * fallback, 100.0 * size, usd);
	fputs("<table>\n<tr><th>backend</th><th>kind</th><th>calls (%)</th><th>tasks</th>"
	      "<th>cached (%)</th><th>USD</th><th>median TTFT (ms)</th><th>P95 TTFT (ms)</th>"
	      "<th>P95 E2E (ms)</th></tr>\n", out);
	const cJSON *x;
	cJSON_ArrayForEach(x, per) {
		double prompt = rd_num(r, x, "prompt_tokens"), cached = rd_num(r, x, "cached_prompt_tokens");
		fputs("<tr><th>", out);
		svgplot_escape(out, opt_str(x, "name"));
		fputs("</th><td>", out);
		svgplot_escape(out, opt_str(x, "kind"));
		fputs("</td>", out);
		td_num(out, 100.0 * rd_num(r, x, "call_share"), 2);
		td_num(out, rd_num(r, x, "tasks"), 0);
		td_num(out, prompt > 0 ? 100.0 * cached / prompt : 0.0, 2);
		td_num(out, rd_num(r, x, "usd"), 2);
		td_num(out, rd_num(r, x, "median_ttft_ms"), 0);
		td_num(out, rd_num(r, x, "p95_ttft_ms"), 0);
		td_num(out, rd_num(r, x, "p95_e2el_ms"), 0);
		fputs("</tr>\n", out);
	}
	fputs("</table>\n", out);
}

/* replay --cost: each option per month, per 1M output tokens, per accepted
 * task and per engineer-month, what the month is made of, every assumption
 * with its source, and the energy. */
static void cost_table(FILE *out, struct rd *r, const cJSON *doc)
{
	const cJSON *c = cJSON_GetObjectItemCaseSensitive(doc, "cost");
	if (!cJSON_IsObject(c))
		return;
	const cJSON *opts = rd_arr(r, c, "options");
	double periods = rd_num(r, c, "periods_per_month");
	if (r->rc)
		return;
	h2(out, "Cost (USD)");
	fprintf(out, "<p>A month is %.4g replays of the trace (", periods);
	svgplot_escape(out, opt_str(c, "periods_source"));
	fputs(").</p>\n", out);
	const char *nope = opt_str(c, "not_priced");
	if (nope && nope[0]) {
		fputs("<p class=\"warn\">Not priced: ", out);
		svgplot_escape(out, nope);
		fputs("</p>\n", out);
	}
	if (cJSON_GetArraySize(opts) == 0) {
		fputs("<p>The price catalogue has no purchase, dedicated or rental price for ", out);
		svgplot_escape(out, opt_str(c, "hardware"));
		fputs(".</p>\n", out);
		return;
	}
	static const char *const heads[] = {"option", "per month", "per 1M output tokens",
					    "per accepted task", "per engineer-month"};
	fputs("<table>\n", out);
	th_row(out, heads, sizeof(heads) / sizeof(heads[0]));
	const cJSON *o;
	cJSON_ArrayForEach(o, opts) {
		double eng = rd_num(r, o, "usd_per_engineer_month");
		fputs("<tr><th>", out);
		svgplot_escape(out, opt_str(o, "label"));
		fputs("</th>", out);
		td_num(out, rd_num(r, o, "usd_per_month"), 2);
		td_num(out, rd_num(r, o, "usd_per_1m_output_tokens"), 4);
		td_num(out, rd_num(r, o, "usd_per_accepted_task"), 4);
		if (eng > 0)
			td_num(out, eng, 2);
		else
			td_str(out, "-");
		fputs("</tr>\n", out);
	}
	fputs("</table>\n", out);
	cJSON_ArrayForEach(o, opts) {
		fputs("<h3>", out);
		svgplot_escape(out, opt_str(o, "label"));
		fputs("</h3>\n<p>Per month:", out);
		const cJSON *p;
		int k = 0;
		cJSON_ArrayForEach(p, rd_arr(r, o, "parts")) {
			fprintf(out, "%s ", k++ ? " +" : "");
			svgplot_escape(out, opt_str(p, "name"));
			fprintf(out, " %.2f", rd_num(r, p, "usd_per_month"));
		}
		fputs("</p>\n<table>\n<tr><th>assumption</th><th>value</th><th>unit</th>"
		      "<th>source</th></tr>\n", out);
		const cJSON *a;
		cJSON_ArrayForEach(a, rd_arr(r, o, "assumptions")) {
			fputs("<tr><th>", out);
			svgplot_escape(out, opt_str(a, "name"));
			fputs("</th>", out);
			double v = rd_num(r, a, "value");
			fprintf(out, "<td class=\"n\">%.6g</td>", isfinite(v) ? v : 0.0);
			td_str(out, opt_str(a, "unit"));
			td_str(out, opt_str(a, "source"));
			fputs("</tr>\n", out);
		}
		fputs("</table>\n", out);
	}
	const cJSON *e = cJSON_GetObjectItemCaseSensitive(c, "energy");
	if (cJSON_IsObject(e))
		fprintf(out, "<p>Energy: %.4g J per output token (IT); %.6g kWh a month IT, %.6g kWh "
			"with PUE %.3g; busy %g W and idle %g W per GPU.</p>\n",
			rd_num(r, e, "j_per_output_token"), rd_num(r, e, "kwh_month_it"),
			rd_num(r, e, "kwh_month_facility"),
			rd_num(r, rd_obj(r, e, "pue"), "value"),
			rd_num(r, rd_obj(r, e, "busy_w_per_gpu"), "value"),
			rd_num(r, rd_obj(r, e, "idle_w_per_gpu"), "value"));
}

/* replay --cost as a chart: each way of paying's month, its cost per
 * accepted task beside the bar. */
static void cost_chart(FILE *out, const cJSON *doc)
{
	const cJSON *c = cJSON_GetObjectItemCaseSensitive(doc, "cost");
	const cJSON *opts = cJSON_GetObjectItemCaseSensitive(c, "options"), *o;
	size_t n = (size_t)cJSON_GetArraySize(opts);
	if (!cJSON_IsObject(c) || n == 0)
		return;
	struct svgplot_bar *bars = calloc(n, sizeof(*bars));
	char(*labels)[96] = calloc(n, sizeof(*labels)), (*notes)[96] = calloc(n, sizeof(*notes));
	if (bars && labels && notes) {
		size_t k = 0;
		cJSON_ArrayForEach(o, opts) {
			if (k >= n)
				break;
			fit(labels[k], sizeof(labels[0]), opt_str(o, "label"), NULL);
			double task = opt_num(o, "usd_per_accepted_task");
			if (isfinite(task))
				snprintf(notes[k], sizeof(notes[0]), "(%.2f per accepted task)", task);
			bars[k] = (struct svgplot_bar){labels[k], opt_num(o, "usd_per_month"), notes[k]};
			k++;
		}
		struct svgplot_chart ch = {
			.id = "replay-cost",
			.title = "Cost per month by way of paying",
			.x_label = "cost of the month (USD)",
			.y_label = "way of paying",
			.caption = "What this traffic costs a month on this deployment, bought or rented "
				   "(replay --cost; the parts and every assumption with its source are in "
				   "the Cost section above).",
			.value_digits = 0,
		};
		svgplot_bars(out, &ch, bars, k);
	}
	free(bars);
	free(labels);
	free(notes);
}

/* Every measured figure of the run, labelled and in the units the terminal
 * table gives them (reports/fields.h); a figure a run leaves out (a KV tier
 * it has not) is left out here too. */
static void figures_table(FILE *out, const cJSON *doc)
{
	fputs("<h2>All figures</h2>\n<table>\n", out);
	for (int id = RF_COMPLETED; id < RF_N_FIELDS; id++) {
		const struct report_field *f = report_field((enum report_field_id)id);
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(doc, f->key);
		if (!f->label || !(cJSON_IsNumber(v) || cJSON_IsString(v)))
			continue;
		char label[96];
		size_t n = (size_t)snprintf(label, sizeof(label), "%s%s",
					    strncmp(f->key, "peak_", 5) == 0 ? "Busiest hour, " : "",
					    f->label);
		if (n > 0 && n < sizeof(label) && label[n - 1] == ':')
			label[n - 1] = '\0';
		fputs("<tr><th>", out);
		svgplot_escape(out, label);
		fputs("</th>", out);
		if (cJSON_IsString(v)) { /* a name, such as the KV tier mode */
			td_str(out, v->valuestring);
			fputs("</tr>\n", out);
			continue;
		}
		bool whole = f->type == RT_I32 || f->type == RT_I64;
		td_num(out, f->show == RS_PERCENT ? 100.0 * v->valuedouble : v->valuedouble,
		       whole ? 0 : 2);
		fputs("</tr>\n", out);
	}
	fputs("</table>\n", out);
}

static int page_replay(FILE *out, struct rd *r, const cJSON *doc)
{
	const cJSON *run = rd_obj(r, doc, "run");
	const cJSON *charts = rd_obj(r, doc, "charts");
	const cJSON *warnings = rd_arr(r, doc, "warnings");
	double completed = rd_num(r, doc, "completed"), failed = rd_num(r, doc, "failed");
	double dur = rd_num(r, doc, "duration_s"), att = rd_num(r, doc, "slo_attainment");
	double hit = rd_num(r, doc, "prefix_cache_hit_rate");
	if (r->rc)
		return r->rc;
	double slo_ttft = opt_num(run, "slo_ttft_ms"), slo_tpot = opt_num(run, "slo_tpot_ms");
	struct fact f[16];
	size_t n = 0;
	fact_str(f, &n, "Scenario", opt_str(run, "scenario_name"));
	fact_str(f, &n, "Scenario file", opt_str(run, "scenario_path"));
	fact_str(f, &n, "Trace", opt_str(run, "trace_path"));
	fact_str(f, &n, "Trace format", opt_str(run, "trace_format"));
	f[n].name = "Calls";
	snprintf(f[n++].value, sizeof(f[0].value), "%.0f completed, %.0f failed", completed, failed);
	f[n].name = "Duration";
	snprintf(f[n++].value, sizeof(f[0].value), "%.1f s simulated", dur);
	fact_str(f, &n, "Model", opt_str(run, "model_id"));
	fact_str(f, &n, "Hardware", opt_str(run, "hardware_id"));
	f[n].name = "Weights / KV cache";
	fit(f[n++].value, sizeof(f[0].value), opt_str(run, "weight_format"), " / ",
	    opt_str(run, "kv_cache_dtype"), NULL);
	f[n].name = "Tensor parallel";
	snprintf(f[n++].value, sizeof(f[0].value), "%.0f", opt_num(run, "tensor_parallel_size"));
	f[n].name = "KV cache";
	snprintf(f[n++].value, sizeof(f[0].value), "%.0f tokens per replica",
		 opt_num(run, "kv_capacity_tokens"));
	f[n].name = "Latency objectives";
	if (slo_ttft > 0.0 || slo_tpot > 0.0)
		snprintf(f[n++].value, sizeof(f[0].value), "TTFT <= %g ms, TPOT <= %g ms (0: none); "
			 "met by %.1f%%", isfinite(slo_ttft) ? slo_ttft : 0.0,
			 isfinite(slo_tpot) ? slo_tpot : 0.0, 100.0 * att);
	else
		snprintf(f[n++].value, sizeof(f[0].value), "none set");
	f[n].name = "Prefix-cache hit rate";
	snprintf(f[n++].value, sizeof(f[0].value), "%.1f%%", 100.0 * hit);
	f[n].name = "Seed";
	snprintf(f[n++].value, sizeof(f[0].value), "%.0f", opt_num(run, "seed"));
	fact_str(f, &n, "agentcap version", opt_str(run, "agentcap_version"));

	page_begin(out, "agentcap replay report");
	answer(out, strcmp(opt_str(doc, "answer"), "no") == 0,
	       "does this deployment serve this trace within its objectives?");
	const cJSON *w;
	cJSON_ArrayForEach(w, warnings) warn_para(out, opt_str(w, "message"));
	facts(out, "What was run", f, n);

	fputs("<h2>Latency (ms)</h2>\n<table>\n<tr><th></th><th>mean</th><th>median</th><th>P90</th>"
	      "<th>P95</th><th>P99</th></tr>\n", out);
	stats_row(out, r, doc, "TTFT", "ttft");
	stats_row(out, r, doc, "TPOT", "tpot");
	stats_row(out, r, doc, "ITL", "itl");
	stats_row(out, r, doc, "E2E", "e2el");
	fputs("</table>\n", out);
	backends_table(out, r, doc);
	cost_table(out, r, doc);
	figures_table(out, doc);
	fputs("<h2>Charts</h2>\n", out);
	const char *name = "calls at or below";
	struct objective obj[2];
	int n_obj = 0;
	if (slo_ttft > 0.0)
		obj[n_obj++] = (struct objective){"ttft", slo_ttft};
	if (slo_tpot > 0.0)
		obj[n_obj++] = (struct objective){"tpot", slo_tpot};
	cost_chart(out, doc);
	cdf_charts(out, r, &charts, &name, 1, obj, n_obj);
	arrivals_charts(out, r, charts);
	if (r->rc == 0)
		timeseries_charts(out, r, doc);
	return r->rc;
}

/* One chart of the run's "timeseries": the arrays keys[0..n) against t_s
 * (h), each scaled by scale; left out when none of them is there. */
static void ts_chart(FILE *out, struct rd *r, const cJSON *ts, const cJSON *ta,
		     const struct svgplot_chart *c, const char *const *keys, const char *const *names,
		     size_t n, double scale)
{
	struct svgplot_series s[4];
	struct line *own[4] = {NULL, NULL, NULL, NULL};
	size_t k = 0, nt = jsondoc_size(r->doc, ta);
	for (size_t i = 0; i < n && i < 4 && r->rc == 0; i++) {
		const cJSON *a = cJSON_GetObjectItemCaseSensitive(ts, keys[i]);
		if (!cJSON_IsArray(a))
			continue;
		own[k] = rd_line(r, (struct src){ta, 1.0, 3600.0, 0}, (struct src){a, scale, 1.0, 0});
		if (!own[k])
			break;
		s[k] = (struct svgplot_series){.name = names[i], .x = own[k]->x, .y = own[k]->y,
					       .n = own[k]->n, .points = nt < 3};
		k++;
	}
	if (k > 0 && r->rc == 0)
		svgplot_lines(out, c, s, k);
	for (size_t i = 0; i < 4; i++)
		free(own[i]);
}

/* The run's "timeseries" (report.interval_s), when it has one: queue depth,
 * batch size, KV use and replicas up over time. */
static void timeseries_charts(FILE *out, struct rd *r, const cJSON *doc)
{
	const cJSON *ts = cJSON_GetObjectItemCaseSensitive(doc, "timeseries");
	if (!cJSON_IsObject(ts))
		return;
	const cJSON *ta = rd_arr(r, ts, "t_s");
	if (r->rc)
		return;
	static const char *const QK[] = {"router_queue", "waiting"};
	static const char *const QN[] = {"in the router's queue", "waiting in replicas"};
	struct svgplot_chart c = {
		.id = "ts-queue",
		.title = "Queue depth over time",
		.x_label = "simulated time (h)",
		.y_label = "calls waiting (calls)",
		.caption = "Calls waiting for a replica or for a place in a batch at each sample: a "
			   "queue that keeps growing means too few replicas for that stretch.",
	};
	ts_chart(out, r, ts, ta, &c, QK, QN, 2, 1.0);
	static const char *const BK[] = {"running"};
	static const char *const BN[] = {"calls running"};
	c = (struct svgplot_chart){
		.id = "ts-batch",
		.title = "Batch size over time",
		.x_label = "simulated time (h)",
		.y_label = "calls in running batches (calls)",
		.caption = "Calls in the replicas' running sets, summed: near max_num_seqs per "
			   "replica, batches are full and decode slows for everyone.",
	};
	ts_chart(out, r, ts, ta, &c, BK, BN, 1, 1.0);
	static const char *const KK[] = {"kv_use"};
	static const char *const KN[] = {"KV cache in use"};
	c = (struct svgplot_chart){
		.id = "ts-kv",
		.title = "KV-cache use over time",
		.x_label = "simulated time (h)",
		.y_label = "KV blocks held by running calls (%)",
		.caption = "Near 100%, new calls wait for blocks or running ones are preempted; low "
			   "use with a long queue points at the batch limits instead.",
	};
	ts_chart(out, r, ts, ta, &c, KK, KN, 1, 100.0);
	static const char *const RK[] = {"replicas_up", "replicas_starting"};
	static const char *const RN[] = {"up", "starting"};
	c = (struct svgplot_chart){
		.id = "ts-replicas",
		.title = "Replicas over time",
		.x_label = "simulated time (h)",
		.y_label = "replicas (replicas)",
		.caption = "Replicas serving and starting at each sample: what an autoscaler did, "
			   "and what faults took away.",
	};
	ts_chart(out, r, ts, ta, &c, RK, RN, 2, 1.0);
}

/* ---- stats -------------------------------------------------------------- */

static int page_stats(FILE *out, struct rd *r, const cJSON *doc)
{
	const cJSON *curve = rd_arr(r, doc, "cache_curve");
	double calls = rd_num(r, doc, "calls"), sessions = rd_num(r, doc, "sessions");
	double engineers = rd_num(r, doc, "engineers"), tasks = rd_num(r, doc, "tasks");
	double t0 = rd_num(r, doc, "first_t_s"), t1 = rd_num(r, doc, "last_t_s");
	double unbounded = rd_num(r, doc, "prefix_hit_rate_unbounded");
	if (r->rc)
		return r->rc;
	struct fact f[8];
	size_t n = 0;
	fact_str(f, &n, "Trace", opt_str(doc, "trace"));
	fact_str(f, &n, "Trace format", opt_str(doc, "trace_format"));
	f[n].name = "Contents";
	snprintf(f[n++].value, sizeof(f[0].value), "%.0f calls in %.0f sessions, %.0f tasks, %.0f "
		 "engineers, over %.1f h", calls, sessions, tasks, engineers, (t1 - t0) / 3600.0);
	fact_str(f, &n, "Scenario", "none: stats describes the trace as recorded");
	fact_str(f, &n, "Seed", "none: nothing is drawn at random");
	fact_str(f, &n, "agentcap version", opt_str(doc, "agentcap_version"));
	page_begin(out, "agentcap stats report");
	facts(out, "What was read", f, n);

	h2(out, "Distributions");
	static const char *const HEAD[] = {"", "min", "mean", "median", "P90", "P99", "max"};
	static const char *const PRE[] = {"min", "mean", "median", "p90", "p99", "max"};
	static const char *const ROWS[][2] = {
		{"prompt tokens", "input_tokens"}, {"new prompt tokens", "new_tokens"},
		{"output tokens", "output_tokens"}, {"gap between calls (s)", "gap_s"},
		{"calls in flight", "concurrency"}, {"calls per session", "calls_per_session"},
	};
	fputs("<table>\n", out);
	th_row(out, HEAD, 7);
	for (size_t i = 0; i < sizeof(ROWS) / sizeof(ROWS[0]); i++) {
		fputs("<tr><th>", out);
		svgplot_escape(out, ROWS[i][0]);
		fputs("</th>", out);
		for (size_t k = 0; k < 6; k++) {
			char key[64];
			snprintf(key, sizeof(key), "%s_%s", PRE[k], ROWS[i][1]);
			td_num(out, opt_num(doc, key), 1);
		}
		fputs("</tr>\n", out);
	}
	fputs("</table>\n<h2>Charts</h2>\n", out);

	/* capacity 0 holds nothing: the curve starts at (0, 0) */
	size_t k = (size_t)cJSON_GetArraySize(curve) + 1;
	double *x = malloc(k * sizeof(*x)), *y = malloc(k * sizeof(*y));
	if (!x || !y) {
		free(x);
		free(y);
		return r->rc = diag_set(r->d, DIAG_ENOMEM, "out of memory for the report's charts");
	}
	x[0] = y[0] = 0.0;
	size_t m = 1;
	double xmax = 0.0;
	const cJSON *p;
	cJSON_ArrayForEach(p, curve) {
		x[m] = rd_num(r, p, "cache_tokens");
		y[m] = 100.0 * rd_num(r, p, "hit_rate");
		xmax = fmax(xmax, x[m]);
		m++;
	}
	/* the capacities tried double from one to the next: over a decade or
	 * more they go on a log axis, in tokens (ticks 1k, 1M), where each
	 * doubling is as wide as the next; else in the thousands or millions
	 * that keep the ticks short */
	double xmin = INFINITY;
	for (size_t i = 1; i < m; i++)
		if (x[i] > 0.0)
			xmin = fmin(xmin, x[i]);
	bool log_x = isfinite(xmin) && xmax / xmin >= 10.0;
	double scale = log_x ? 1.0 : xmax >= 1e7 ? 1e6 : xmax >= 1e4 ? 1e3 : 1.0;
	for (size_t i = 0; i < m; i++)
		x[i] /= scale;
	struct svgplot_chart c = {
		.id = "cache-curve",
		.title = "Prefix-cache hit rate against KV-cache capacity (LRU)",
		.x_label = scale == 1e6 ? "KV-cache capacity (million tokens)"
			   : scale == 1e3 ? "KV-cache capacity (thousand tokens)"
					  : "KV-cache capacity (tokens)",
		.y_label = "prompt tokens found cached (%)",
		.caption = "How much cache this traffic needs: where the curve flattens, more KV "
			   "capacity stops paying; the dashed line is the hit rate of a cache that never "
			   "evicts. Capacities spanning decades are on a log axis, each decade the same "
			   "width.",
		.x_scale = log_x ? SVGPLOT_LOG : SVGPLOT_LINEAR,
	};
	c.hmarkers[c.n_hmarkers++] = (struct svgplot_marker){100.0 * unbounded, "never evicting"};
	struct svgplot_series s = {.name = "hit rate", .x = x, .y = y, .n = m, .points = m < 3};
	if (r->rc == 0)
		svgplot_lines(out, &c, &s, 1);
	free(x);
	free(y);
	return r->rc;
}

/* ---- size --------------------------------------------------------------- */

/* The worst ratio over the objectives of a candidate's median percentile to
 * its limit. */
static double worst_ratio(const cJSON *cand, const struct objective *o, int n_obj)
{
	const cJSON *objs = cJSON_GetObjectItemCaseSensitive(cand, "objectives_ms");
	double worst = NAN;
	for (int i = 0; i < n_obj; i++) {
		double v = opt_num(cJSON_GetObjectItemCaseSensitive(objs, o[i].key), "p50");
		if (isfinite(v) && !(v / o[i].limit_ms <= worst))
			worst = v / o[i].limit_ms;
	}
	return worst;
}

/* One launch command l of option o. */
static void launch_html(FILE *out, const cJSON *o, const cJSON *l)
{
	char head[256];
	const char *pool = opt_str(l, "pool");
	snprintf(head, sizeof(head), "%s%s%s: %s %s, %.0f replica(s) x %.0f GPU(s)%s",
		 opt_str(o, "hardware"), strcmp(pool, "-") ? ", pool " : "",
		 strcmp(pool, "-") ? pool : "", opt_str(l, "engine"),
		 opt_str(l, "version"),
		 opt_num(l, "replicas"), opt_num(l, "gpus_per_replica"),
		 opt_bool(l, "complete") ? "" : " (incomplete: see the notes)");
	fputs("<h3>", out);
	svgplot_escape(out, head);
	fputs("</h3>\n<pre>", out);
	svgplot_escape(out, opt_str(l, "shell"));
	fputs("</pre>\n", out);
	const cJSON *notes = cJSON_GetObjectItemCaseSensitive(l, "notes");
	const cJSON *nt;
	if (cJSON_GetArraySize(notes) > 0) {
		fputs("<ul>", out);
		cJSON_ArrayForEach(nt, notes) {
			fputs("<li>", out);
			svgplot_escape(out, cJSON_IsString(nt) ? nt->valuestring : "");
			fputs("</li>", out);
		}
		fputs("</ul>\n", out);
	}
}

/* Whether a candidate's replay was stopped before its end (a replicate's
 * verdict is an early rule: "failed", "slo", "queue"), so its percentiles
 * cover only the calls finished by then. */
static bool stopped_early(const cJSON *e)
{
	const cJSON *v;
	cJSON_ArrayForEach(v, cJSON_GetObjectItemCaseSensitive(e, "verdicts")) {
		if (cJSON_IsString(v) && strcmp(v->valuestring, "met") != 0 &&
		    strcmp(v->valuestring, "ran") != 0)
			return true;
	}
	return false;
}

/* "2 x TP4", "1 x TP8 PP2", or disaggregated "1P+3D x TP1". */
static void deployment(char *buf, size_t cap, const cJSON *e)
{
	char n[48];
	double pp = opt_num(e, "pipeline_parallel_size"), p = opt_num(e, "prefill_replicas");
	if (p > 0)
		snprintf(n, sizeof(n), "%.0fP+%.0fD", p, opt_num(e, "decode_replicas"));
	else
		snprintf(n, sizeof(n), "%.0f", opt_num(e, "replicas"));
	if (pp > 1)
		snprintf(buf, cap, "%s x TP%.0f PP%.0f", n, opt_num(e, "tensor_parallel_size"), pp);
	else
		snprintf(buf, cap, "%s x TP%.0f", n, opt_num(e, "tensor_parallel_size"));
}

static void seeds_text(struct rd *r, char *buf, size_t cap, const cJSON *seeds)
{
	size_t at = 0, n = jsondoc_size(r->doc, seeds);
	buf[0] = '\0';
	struct jsondoc_nums it;
	jsondoc_nums_init(&it, r->doc, seeds);
	for (size_t i = 0; i < n; i++) {
		if (at >= cap)
			break;
		int w = snprintf(buf + at, cap - at, "%s%.0f", at ? ", " : "", jsondoc_nums_next(&it));
		if (w < 0)
			break;
		at += (size_t)w;
	}
}

static int page_size(FILE *out, struct rd *r, const cJSON *doc)
{
	const cJSON *options = rd_arr(r, doc, "options");
	const cJSON *seeds = rd_arr(r, doc, "seeds");
	const cJSON *calls = rd_arr(r, doc, "calls");
	double reps = rd_num(r, doc, "replicates"), conf = rd_num(r, doc, "confidence");
	const char *slo = opt_str(doc, "slo");
	struct fact f[12];
	size_t n = 0;
	run_facts(r, doc, f, &n);
	if (r->rc)
		return r->rc;
	f[n].name = "Calls per replicate";
	seeds_text(r, f[n++].value, sizeof(f[0].value), calls);
	fact_str(f, &n, "Latency objectives", slo);
	f[n].name = "Replicates";
	snprintf(f[n++].value, sizeof(f[0].value), "%.0f; a deployment meets the objectives when "
		 "at least %.0f%% of them do", reps, 100.0 * conf);
	f[n].name = "Seeds";
	seeds_text(r, f[n++].value, sizeof(f[0].value), seeds);
	fact_str(f, &n, "agentcap version", opt_str(cJSON_GetObjectItemCaseSensitive(doc, "run"),
						     "agentcap_version"));
	bool found = false;
	const cJSON *o;
	cJSON_ArrayForEach(o, options) found = found || opt_bool(o, "found");

	page_begin(out, "agentcap size report");
	answer(out, !found, "does any hardware option meet the objectives?");
	facts(out, "What was searched", f, n);

	h2(out, "Smallest deployment per hardware option");
	static const char *const HEAD[] = {"Hardware", "Deployment", "GPUs", "P95 TTFT (ms)",
					   "P50 TPOT (ms)", "Busy (%)", "Hit (%)", "Met"};
	fputs("<table>\n", out);
	th_row(out, HEAD, 8);
	cJSON_ArrayForEach(o, options) {
		const cJSON *best = cJSON_GetObjectItemCaseSensitive(o, "best");
		fputs("<tr>", out);
		td_str(out, opt_str(o, "hardware"));
		if (cJSON_IsObject(best)) {
			char dep[64], met[32];
			deployment(dep, sizeof(dep), best);
			td_str(out, dep);
			td_num(out, opt_num(best, "gpus"), 0);
			td_num(out, opt_num(best, "p95_ttft_ms"), 1);
			td_num(out, opt_num(best, "median_tpot_ms"), 2);
			td_num(out, 100.0 * opt_num(best, "gpu_busy_fraction"), 1);
			td_num(out, 100.0 * opt_num(best, "prefix_cache_hit_rate"), 1);
			snprintf(met, sizeof(met), "%.0f/%.0f", opt_num(best, "replicates_met"),
				 opt_num(best, "replicates_run"));
			td_str(out, met);
		} else {
			fputs("<td colspan=\"7\">", out);
			svgplot_escape(out, "none found");
			const char *pruned = opt_str(o, "pruned");
			if (strcmp(pruned, "-") != 0 && pruned[0]) {
				fputs(": ", out);
				svgplot_escape(out, pruned);
			}
			fputs("</td>", out);
		}
		fputs("</tr>\n", out);
	}
	fputs("</table>\n", out);

	/* the winners' launch commands, as modelled: an object per option, an
	 * array of one per pool when disaggregated */
	bool any_launch = false;
	cJSON_ArrayForEach(o, options) {
		const cJSON *l = cJSON_GetObjectItemCaseSensitive(o, "launch");
		any_launch = any_launch || cJSON_IsObject(l) || cJSON_GetArraySize(l) > 0;
	}
	if (any_launch) {
		h2(out, "Launch commands");
		fputs("<p>Each winner's engine command as the replay modelled it: one per replica, "
		      "every value written out.</p>\n", out);
		cJSON_ArrayForEach(o, options) {
			const cJSON *ls = cJSON_GetObjectItemCaseSensitive(o, "launch");
			int n_l = cJSON_IsArray(ls) ? cJSON_GetArraySize(ls) : cJSON_IsObject(ls);
			for (int k = 0; k < n_l; k++) {
				const cJSON *l = cJSON_IsArray(ls) ? cJSON_GetArrayItem(ls, k) : ls;
				if (cJSON_IsObject(l))
					launch_html(out, o, l);
			}
		}
	}

	/* the candidates tried, and the chart of them: per hardware option a
	 * colour, met as dots and missed as rings, each with its shape; a
	 * candidate stopped early has no whole percentile to draw */
	struct objective obj[8];
	int n_obj = parse_slo(slo, obj, 8);
	size_t n_cand = 0, n_opt = 0;
	cJSON_ArrayForEach(o, options) {
		n_opt++;
		n_cand += (size_t)cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(o, "path"));
	}
	if (n_cand > MAX_CANDIDATES)
		n_cand = MAX_CANDIDATES;
	if (n_opt > MAX_SERIES / 2)
		n_opt = MAX_SERIES / 2;
	double *x = malloc((n_cand + 1) * sizeof(*x)), *y = malloc((n_cand + 1) * sizeof(*y));
	char(*shape)[64] = calloc(n_cand + 1, sizeof(*shape));
	const char **shapes = calloc(n_cand + 1, sizeof(*shapes));
	char(*names)[96] = calloc(MAX_SERIES, sizeof(*names));
	if (!x || !y || !shape || !shapes || !names) {
		free(x);
		free(y);
		free(shape);
		free(shapes);
		free(names);
		return r->rc = diag_set(r->d, DIAG_ENOMEM, "out of memory for the report's charts");
	}
	struct svgplot_series s[MAX_SERIES];
	size_t ns = 0, at = 0, n_early = 0;
	h2(out, "Candidates tried, in search order");
	static const char *const CHEAD[] = {"Hardware", "Deployment", "GPUs", "Worst objective / limit",
					    "Met", "Why not"};
	fputs("<table>\n", out);
	th_row(out, CHEAD, 6);
	size_t k_opt = 0;
	cJSON_ArrayForEach(o, options) {
		const cJSON *path = cJSON_GetObjectItemCaseSensitive(o, "path");
		const cJSON *e;
		/* this option's two series: met, then missed */
		for (int met = 1; met >= 0; met--) {
			size_t first = at;
			cJSON_ArrayForEach(e, path) {
				if (opt_bool(e, "meets") != (met == 1))
					continue;
				char dep[64];
				deployment(dep, sizeof(dep), e);
				double ratio = worst_ratio(e, obj, n_obj), gpus = opt_num(e, "gpus");
				bool early = stopped_early(e);
				if (!early && at < n_cand && k_opt < n_opt) {
					x[at] = gpus;
					y[at] = ratio;
					fit(shape[at], sizeof(shape[0]), dep, NULL);
					shapes[at] = shape[at];
					at++;
				}
			}
			if (k_opt < n_opt && ns < MAX_SERIES) {
				fit(names[ns], sizeof(names[0]), opt_str(o, "hardware"),
				    met ? ": met" : ": missed", NULL);
				s[ns] = (struct svgplot_series){.name = names[ns], .x = x + first,
							       .y = y + first, .n = at - first,
							       .points = true, .hollow = !met,
							       .labels = shapes + first,
							       .color = (int)k_opt + 1};
				ns++;
			}
		}
		cJSON_ArrayForEach(e, path) {
			char dep[64];
			deployment(dep, sizeof(dep), e);
			double ratio = worst_ratio(e, obj, n_obj), gpus = opt_num(e, "gpus");
			bool meets = opt_bool(e, "meets"), early = stopped_early(e);
			n_early += early;
			fputs("<tr>", out);
			td_str(out, opt_str(o, "hardware"));
			td_str(out, dep);
			td_num(out, gpus, 0);
			if (early)
				td_str(out, "stopped early: not measured");
			else
				td_num(out, ratio, 2);
			td_str(out, meets ? "yes" : "no");
			td_str(out, opt_str(e, "why"));
			fputs("</tr>\n", out);
		}
		k_opt++;
	}
	fputs("</table>\n<h2>Charts</h2>\n", out);
	char caption[512];
	snprintf(caption, sizeof(caption), "Each dot is one deployment the search replayed to the "
		 "end, coloured by hardware, its shape beside it (replicas x tensor parallel); a dot "
		 "met every objective, a ring missed one; at or below the dashed line every objective "
		 "held. The answer is the leftmost dot of each colour.%s",
		 n_early ? " Candidates the search stopped early (it saw the objective missed before "
			   "the replay ended) are in the table, not drawn: their percentiles cover part "
			   "of the calls, so their ratio would say nothing." : "");
	struct svgplot_chart c = {
		.id = "size-candidates",
		.title = "Candidates tried: GPUs against the worst objective",
		.x_label = "GPUs of the candidate deployment (GPUs)",
		.y_label = "worst percentile / its limit (x)",
		.caption = caption,
		.y_scale = SVGPLOT_AUTO,
	};
	c.hmarkers[c.n_hmarkers++] = (struct svgplot_marker){1.0, "objective limit"};
	svgplot_lines(out, &c, s, ns);
	free(x);
	free(y);
	free(shape);
	free(shapes);
	free(names);
	return r->rc;
}

/* ---- compare ------------------------------------------------------------ */

static bool self_hosted(const cJSON *row)
{
	const char *o = opt_str(row, "option");
	return strcmp(o, "seats") != 0 && strcmp(o, "api") != 0;
}

/* A row's name: "h100-sxm purchase (1 x TP1)", a local plus cloud row's
 * "h100-sxm purchase + API (1 x TP1)" (its month holds the API's calls:
 * without the "+ API" it reads as the box alone, and cheaper than it is),
 * "seats", "api". */
static void row_label(char *buf, size_t cap, const cJSON *row)
{
	bool hybrid = cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(row, "hybrid"));
	if (self_hosted(row))
		fit(buf, cap, opt_str(row, "hardware"), " ", opt_str(row, "option"),
		    hybrid ? " + API" : "", " (", opt_str(row, "deployment"), ")", NULL);
	else
		fit(buf, cap, opt_str(row, "option"), NULL);
}

/* Whether p (in text) starts a token of its own: not inside an id, a path
 * or a URL ("uptime-global-2025", "/2025/"). */
static bool token_start(const char *text, const char *p)
{
	if (p == text)
		return true;
	char c = p[-1];
	return !((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		 c == '-' || c == '_' || c == '/' || c == '.' || c == '=');
}

/* Digits at p, at most 5. */
static size_t digits_at(const char *p)
{
	size_t d = 0;
	while (d < 5 && p[d] >= '0' && p[d] <= '9')
		d++;
	return d;
}

/* The date a source gives, into buf: its first "2025-12-28" or "2026-08"
 * standing as a token of its own, else its first year standing alone
 * ("..., 2026 mid"); "-" when there is none (a default, a figure of the
 * run). */
static void source_date(char *buf, size_t cap, const char *text)
{
	for (int pass = 0; pass < 2; pass++) {
		for (const char *p = text; *p; p++) {
			if (digits_at(p) != 4 || (p[0] != '1' && p[0] != '2') || !token_start(text, p))
				continue;
			size_t len = 4;
			if (p[4] == '-' && digits_at(p + 5) == 2) {
				len = 7;
				if (p[7] == '-' && digits_at(p + 8) == 2)
					len = 10;
			}
			char after = p[len];
			bool alone = after == '\0' || after == ' ' || after == ',' || after == ')' ||
				     after == ';' || after == ':';
			if (!alone || (pass == 0 && len == 4) || (pass == 1 && len != 4))
				continue;
			snprintf(buf, cap, "%.*s", (int)len, p);
			return;
		}
	}
	snprintf(buf, cap, "-");
}

/* The sensitivity table: each row's cost per accepted task with one input
 * moved (docs/size.md, "Sensitivity"). */
static void sensitivity_table(FILE *out, const cJSON *rows, const char *cur)
{
	static const char *const KEYS[] = {"price_minus", "price_plus", "acceptance_minus",
					   "acceptance_plus", "acceptance_30pct_of_traced",
					   "acceptance_100pct_of_traced", "utilisation_minus",
					   "utilisation_plus", "operator_low", "operator_high"};
	static const char *const HEAD[] = {"Option", "as priced", "price -20%", "price +20%",
					   "acceptance -20%", "acceptance +20%",
					   "acceptance 30% of traced", "acceptance 100% of traced",
					   "traffic -20%", "traffic +20%", "operator low",
					   "operator high"};
	bool any = false;
	const cJSON *row;
	cJSON_ArrayForEach(row, rows) any = any || cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(
		row, "sensitivity_usd_per_accepted_task"));
	if (!any)
		return;
	h2(out, "Sensitivity");
	fputs("<p>Cost per accepted task (", out);
	svgplot_escape(out, cur);
	fputs(") with one input moved at a time: each row's own price -/+20%; the self-hosted "
	      "acceptance -/+20%, and at 30% and 100% of the traced model's; the traffic on the same "
	      "deployment -/+20%; operator time at the low and high ends of its sourced range. A row "
	      "whose order against the API changes inside these columns is a close call.</p>\n<table>\n",
	      out);
	th_row(out, HEAD, sizeof(HEAD) / sizeof(HEAD[0]));
	cJSON_ArrayForEach(row, rows) {
		const cJSON *sv = cJSON_GetObjectItemCaseSensitive(row, "sensitivity_usd_per_accepted_task");
		char label[192];
		row_label(label, sizeof(label), row);
		fputs("<tr><th>", out);
		svgplot_escape(out, label);
		fputs("</th>", out);
		td_num(out, opt_num(row, "usd_per_accepted_task"), 2);
		for (size_t k = 0; k < sizeof(KEYS) / sizeof(KEYS[0]); k++)
			td_num(out, opt_num(sv, KEYS[k]), 2);
		fputs("</tr>\n", out);
	}
	fputs("</table>\n", out);
}

/* The value of a row's assumption name; NAN when it has none. */
static double assumption_value(const cJSON *row, const char *name)
{
	const cJSON *a;
	cJSON_ArrayForEach(a, cJSON_GetObjectItemCaseSensitive(row, "assumptions")) {
		if (strcmp(opt_str(a, "name"), name) == 0)
			return opt_num(a, "value");
	}
	return NAN;
}

/* Operator time per self-hosted row: its figure a month, its share of the
 * month, and the row's warnings (operator time deciding it, what a price
 * leaves out). */
static void operator_table(FILE *out, const cJSON *rows, const char *cur)
{
	h2(out, "Operator cost");
	fputs("<p>Operator time is a model: a base per deployment plus a share per system "
	      "(docs/cost.md, \"Operator time\"). Where it is more than half a row's month it decides "
	      "that row: set it from your own staffing.</p>\n<table>\n", out);
	char h1[64], h3[64];
	fit(h1, sizeof(h1), "operator (", cur, "/month)", NULL);
	fit(h3, sizeof(h3), "month (", cur, ")", NULL);
	const char *head[] = {"Option", h1, h3, "operator share (%)", "notes"};
	th_row(out, head, 5);
	const cJSON *row;
	cJSON_ArrayForEach(row, rows) {
		if (!self_hosted(row))
			continue;
		char label[192];
		row_label(label, sizeof(label), row);
		fputs("<tr><th>", out);
		svgplot_escape(out, label);
		fputs("</th>", out);
		td_num(out, assumption_value(row, "operator"), 2);
		td_num(out, opt_num(row, "usd_per_month"), 2);
		td_num(out, 100.0 * opt_num(row, "operator_share"), 1);
		fputs("<td>", out);
		const cJSON *w;
		int k = 0;
		cJSON_ArrayForEach(w, cJSON_GetObjectItemCaseSensitive(row, "warnings")) {
			if (!cJSON_IsString(w))
				continue;
			if (k++)
				fputs("; ", out);
			svgplot_escape(out, w->valuestring);
		}
		fputs("</td></tr>\n", out);
	}
	fputs("</table>\n", out);
}

/* Every figure each row used, with its unit, source and the source's date;
 * a figure the same for every row before it is listed once, under the
 * first row that used it, and named so. */
static void assumptions_table(FILE *out, const cJSON *rows, const char *as_of)
{
	h2(out, "Assumptions and sources");
	fputs("<p>Every figure each option rests on, with its unit, its source and the date the "
	      "source gives (\"-\": a default or a figure of this run, not a dated price). Prices as "
	      "of ", out);
	svgplot_escape(out, as_of);
	fputs(".</p>\n", out);
	const cJSON *row;
	cJSON_ArrayForEach(row, rows) {
		char label[192];
		row_label(label, sizeof(label), row);
		fputs("<h3>", out);
		svgplot_escape(out, label);
		fputs("</h3>\n<table>\n<tr><th>assumption</th><th>value</th><th>unit</th>"
		      "<th>source</th><th>date</th></tr>\n", out);
		const cJSON *a;
		cJSON_ArrayForEach(a, cJSON_GetObjectItemCaseSensitive(row, "assumptions")) {
			char date[16];
			const char *src = opt_str(a, "source");
			source_date(date, sizeof(date), src);
			double v = opt_num(a, "value");
			fputs("<tr><th>", out);
			svgplot_escape(out, opt_str(a, "name"));
			fputs("</th>", out);
			if (isfinite(v))
				fprintf(out, "<td class=\"n\">%.6g</td>", v);
			else
				td_str(out, "-");
			td_str(out, opt_str(a, "unit"));
			td_str(out, src);
			td_str(out, date);
			fputs("</tr>\n", out);
		}
		fputs("</table>\n", out);
	}
}

static int page_compare(FILE *out, struct rd *r, const cJSON *doc)
{
	const cJSON *rows = rd_arr(r, doc, "rows");
	double engineers = rd_num(r, doc, "engineers");
	struct fact f[14];
	size_t n = 0;
	run_facts(r, doc, f, &n);
	if (r->rc)
		return r->rc;
	const cJSON *run = cJSON_GetObjectItemCaseSensitive(doc, "run");
	const char *slo = opt_str(doc, "slo");
	f[n].name = "Team";
	snprintf(f[n++].value, sizeof(f[0].value), "%.0f engineers", engineers);
	fact_str(f, &n, "Latency objectives",
		 strcmp(slo, "-") != 0 ? slo : "not in this result (each option was sized by agentcap "
					      "size's objectives)");
	fact_str(f, &n, "API", opt_str(doc, "api"));
	fact_str(f, &n, "Seats", opt_str(doc, "seats"));
	fact_str(f, &n, "Prices as of", opt_str(doc, "prices_as_of"));
	f[n].name = "Seed";
	snprintf(f[n++].value, sizeof(f[0].value), "%.0f", opt_num(run, "seed"));
	fact_str(f, &n, "agentcap version", opt_str(run, "agentcap_version"));
	page_begin(out, "agentcap compare report");
	facts(out, "What was priced", f, n);

	const char *cur = opt_str(doc, "currency");
	if (!cur[0] || strcmp(cur, "-") == 0)
		cur = "USD";
	h2(out, "Cost");
	static const char *const HEAD[] = {"Option", "GPUs", "per month", "per engineer-month",
					   "per 1M output tokens", "per accepted task", "GPU busy (%)",
					   "break-even busy (%)"};
	fputs("<table>\n", out);
	th_row(out, HEAD, 8);
	double api = NAN, seats = NAN;
	size_t n_rows = 0;
	const cJSON *row;
	cJSON_ArrayForEach(row, rows) {
		char label[192];
		row_label(label, sizeof(label), row);
		double task = opt_num(row, "usd_per_accepted_task");
		if (strcmp(opt_str(row, "option"), "api") == 0)
			api = task;
		if (strcmp(opt_str(row, "option"), "seats") == 0)
			seats = task;
		fputs("<tr>", out);
		td_str(out, label);
		if (self_hosted(row))
			td_num(out, opt_num(row, "gpus"), 0);
		else
			td_str(out, "");
		td_num(out, opt_num(row, "usd_per_month"), 2);
		td_num(out, opt_num(row, "usd_per_engineer_month"), 2);
		td_num(out, opt_num(row, "usd_per_1m_output_tokens"), 2);
		td_num(out, task, 2);
		if (self_hosted(row)) {
			td_num(out, 100.0 * opt_num(row, "gpu_busy_fraction"), 1);
			double be = opt_num(row, "breakeven_gpu_busy_fraction");
			if (isfinite(be) && be <= 1.0)
				td_num(out, 100.0 * be, 1);
			else if (cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(row, "hybrid")))
				td_str(out, "-");
			else
				td_str(out, "never at this size");
		} else {
			td_str(out, "");
			td_str(out, "");
		}
		fputs("</tr>\n", out);
		n_rows++;
	}
	fputs("</table>\n<p>All figures in ", out);
	svgplot_escape(out, cur);
	fputs(". A row named \"+ API\" is one box with the API beside it: its month holds the API's "
	      "calls too.</p>\n", out);
	sensitivity_table(out, rows, cur);
	operator_table(out, rows, cur);
	h2(out, "Charts");

	/* bars: self-hosted rows, seats and API as lines across them */
	struct svgplot_bar *bars = calloc(n_rows ? n_rows : 1, sizeof(*bars));
	char(*labels)[192] = calloc(n_rows ? n_rows : 1, sizeof(*labels));
	char(*marks)[64] = calloc(SVGPLOT_MAX_MARKERS, sizeof(*marks));
	double *ux = malloc(UTIL_POINTS * sizeof(*ux));
	double *uy = malloc(MAX_SERIES * UTIL_POINTS * sizeof(*uy));
	if (!bars || !labels || !marks || !ux || !uy) {
		free(bars);
		free(labels);
		free(marks);
		free(ux);
		free(uy);
		return r->rc = diag_set(r->d, DIAG_ENOMEM, "out of memory for the report's charts");
	}
	size_t nb = 0;
	cJSON_ArrayForEach(row, rows) {
		if (!self_hosted(row))
			continue;
		row_label(labels[nb], sizeof(labels[0]), row);
		bars[nb] = (struct svgplot_bar){labels[nb], opt_num(row, "usd_per_accepted_task"), NULL};
		nb++;
	}
	char xl[64];
	fit(xl, sizeof(xl), "cost per accepted task (", cur, ")", NULL);
	struct svgplot_chart c = {
		.id = "cost-per-task",
		.title = "Cost per accepted task by option",
		.x_label = xl,
		.y_label = "option (deployment)",
		.caption = "A bar left of a dashed line is cheaper per accepted task than the seats or "
			   "the API it is named for, at the traffic replayed. \"+ API\": one box with the "
			   "API beside it, both paid.",
		.value_digits = 2,
	};
	if (isfinite(seats))
		c.markers[c.n_markers++] = (struct svgplot_marker){seats, "seats"};
	if (isfinite(api))
		c.markers[c.n_markers++] = (struct svgplot_marker){api, "API"};
	svgplot_bars(out, &c, bars, nb);

	/* cost against utilisation: the fixed monthly cost over traffic scaled
	 * on the same GPUs, so per task it falls as 1 / busy; local plus cloud
	 * rows have no such curve (their API part scales with the traffic) */
	for (int i = 0; i < UTIL_POINTS; i++)
		ux[i] = (double)(i + 1);
	struct svgplot_series s[MAX_SERIES];
	size_t ns = 0;
	/* drawn up to 4x the dearer baseline, or twice the cheapest option at
	 * full use when that is higher, so the crossing stays readable */
	double cap = 4.0 * fmax(isfinite(api) ? api : 0.0, isfinite(seats) ? seats : 0.0);
	double cheapest = INFINITY, top = 0.0;
	cJSON_ArrayForEach(row, rows) if (self_hosted(row)) {
		double full = opt_num(row, "usd_per_accepted_task") * opt_num(row, "gpu_busy_fraction");
		if (isfinite(full))
			cheapest = fmin(cheapest, full);
		top = fmax(top, opt_num(row, "usd_per_accepted_task"));
	}
	if (isfinite(cheapest))
		cap = fmax(cap, 2.0 * cheapest);
	if (!(cap > 0.0))
		cap = top;
	c = (struct svgplot_chart){
		.id = "cost-vs-utilisation",
		.title = "Cost per accepted task against GPU utilisation",
		.x_label = "GPU busy (%)",
		.y_label = xl,
		.caption = "More traffic on the same GPUs spreads their fixed cost: where a curve "
			   "crosses the API line is the break-even utilisation (marked when it is below "
			   "100%). Local plus cloud rows are left out: their API part grows with the "
			   "traffic.",
	};
	if (isfinite(api))
		c.hmarkers[c.n_hmarkers++] = (struct svgplot_marker){api, "API"};
	if (isfinite(seats))
		c.hmarkers[c.n_hmarkers++] = (struct svgplot_marker){seats, "seats"};
	size_t k = 0;
	cJSON_ArrayForEach(row, rows) {
		if (!self_hosted(row))
			continue;
		size_t at = k++;
		if (ns >= MAX_SERIES || cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(row, "hybrid")))
			continue;
		double busy = opt_num(row, "gpu_busy_fraction") * 100.0;
		double task = opt_num(row, "usd_per_accepted_task");
		double *yy = uy + ns * UTIL_POINTS;
		for (int i = 0; i < UTIL_POINTS; i++) {
			double v = task * busy / ux[i];
			yy[i] = isfinite(v) && v <= cap ? v : NAN;
		}
		s[ns] = (struct svgplot_series){.name = labels[at], .x = ux, .y = yy, .n = UTIL_POINTS};
		double be = opt_num(row, "breakeven_gpu_busy_fraction");
		if (isfinite(be) && be <= 1.0 && c.n_markers < SVGPLOT_MAX_MARKERS) {
			fit(marks[c.n_markers], sizeof(marks[0]), "break-even ", opt_str(row, "hardware"),
			    " ", opt_str(row, "option"), NULL);
			c.markers[c.n_markers] = (struct svgplot_marker){100.0 * be, marks[c.n_markers]};
			c.n_markers++;
		}
		ns++;
	}
	svgplot_lines(out, &c, s, ns);
	assumptions_table(out, rows, opt_str(doc, "prices_as_of"));
	free(bars);
	free(labels);
	free(marks);
	free(ux);
	free(uy);
	return r->rc;
}

/* ---- compare over team sizes ------------------------------------------- */

/* Item k of the array key of o as a number; NAN when null or absent. */
static double arr_num(const cJSON *o, const char *key, int k)
{
	const cJSON *v = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(o, key), k);
	return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

static void range_label(char *buf, size_t cap, const cJSON *s)
{
	fit(buf, cap, opt_str(s, "hardware"), " ", opt_str(s, "option"),
	    opt_bool(s, "hybrid") ? " + API" : "", NULL);
}

static void crossing_text(char *buf, size_t cap, const cJSON *at)
{
	double from = opt_num(at, "from"), after = opt_num(at, "after");
	if (!cJSON_IsObject(at))
		snprintf(buf, cap, "not within the sizes tried");
	else if (!isfinite(after))
		snprintf(buf, cap, "from %.0f (every size tried)", from);
	else
		snprintf(buf, cap, "from %.0f (more than %.0f)", from, after);
}

static int page_compare_range(FILE *out, struct rd *r, const cJSON *doc)
{
	const cJSON *eng = rd_arr(r, doc, "engineers");
	const cJSON *base = rd_arr(r, doc, "baselines");
	const cJSON *series = rd_arr(r, doc, "series");
	struct fact f[12];
	size_t n = 0;
	run_facts(r, doc, f, &n);
	if (r->rc)
		return r->rc;
	int np = cJSON_GetArraySize(eng);
	const cJSON *run = cJSON_GetObjectItemCaseSensitive(doc, "run");
	fact_str(f, &n, "API", opt_str(doc, "api"));
	fact_str(f, &n, "Seats", opt_str(doc, "seats"));
	f[n].name = "Seed";
	snprintf(f[n++].value, sizeof(f[0].value), "%.0f", opt_num(run, "seed"));
	fact_str(f, &n, "agentcap version", opt_str(run, "agentcap_version"));
	f[n].name = "Team sizes";
	snprintf(f[n++].value, sizeof(f[0].value), "%d, from %.0f to %.0f engineers, each sized and "
		 "priced on its own", np, np ? cJSON_GetArrayItem(eng, 0)->valuedouble : 0.0,
		 np ? cJSON_GetArrayItem(eng, np - 1)->valuedouble : 0.0);
	page_begin(out, "agentcap compare: team sizes");
	facts(out, "What was priced", f, n);
	const char *cur = opt_str(doc, "currency");
	if (!cur[0])
		cur = "USD";

	h2(out, "Cost per accepted task by team size");
	fputs("<table>\n<tr><th>engineers</th>", out);
	const cJSON *x;
	char label[192];
	cJSON_ArrayForEach(x, series) {
		range_label(label, sizeof(label), x);
		fputs("<th>", out);
		svgplot_escape(out, label);
		fputs("</th>", out);
	}
	cJSON_ArrayForEach(x, base) {
		fputs("<th>", out);
		svgplot_escape(out, opt_str(x, "option"));
		fputs("</th>", out);
	}
	fputs("</tr>\n", out);
	for (int k = 0; k < np; k++) {
		fprintf(out, "<tr><th>%.0f</th>", cJSON_GetArrayItem(eng, k)->valuedouble);
		cJSON_ArrayForEach(x, series) {
			double v = arr_num(x, "usd_per_accepted_task", k);
			const cJSON *dep = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(x,
							      "deployment"), k);
			if (!isfinite(v)) {
				td_str(out, "no deployment");
				continue;
			}
			fprintf(out, "<td class=\"n\">%.2f (", v);
			svgplot_escape(out, cJSON_IsString(dep) ? dep->valuestring : "");
			fputs(")</td>", out);
		}
		cJSON_ArrayForEach(x, base) td_num(out, arr_num(x, "usd_per_accepted_task", k), 2);
		fputs("</tr>\n", out);
	}
	fputs("</table>\n<p>All figures in ", out);
	svgplot_escape(out, cur);
	fputs(" per accepted task; the deployment each size needed in brackets.</p>\n", out);

	h2(out, "Crossovers");
	static const char *const CHEAD[] = {"Option", "cheaper than the seats", "cheaper than the API"};
	fputs("<table>\n", out);
	th_row(out, CHEAD, 3);
	cJSON_ArrayForEach(x, series) {
		char a[64], b[64];
		range_label(label, sizeof(label), x);
		crossing_text(a, sizeof(a), cJSON_GetObjectItemCaseSensitive(x, "crossover_seats"));
		crossing_text(b, sizeof(b), cJSON_GetObjectItemCaseSensitive(x, "crossover_api"));
		fputs("<tr>", out);
		td_str(out, label);
		td_str(out, a);
		td_str(out, b);
		fputs("</tr>\n", out);
	}
	fputs("</table>\n<p>From that team size on, at every larger size tried, the option costs no "
	      "more per accepted task than the baseline; the crossing lies above the size tried "
	      "before it.</p>\n", out);

	/* the curve: each self-hosted series, the seats and the API */
	h2(out, "Charts");
	size_t cap = (size_t)(np > 0 ? np : 1);
	double *xs = malloc(cap * sizeof(*xs));
	double *ys = malloc(MAX_SERIES * cap * sizeof(*ys));
	char(*names)[192] = calloc(MAX_SERIES, sizeof(*names));
	if (!xs || !ys || !names) {
		free(xs);
		free(ys);
		free(names);
		return r->rc = diag_set(r->d, DIAG_ENOMEM, "out of memory for the report's charts");
	}
	for (int k = 0; k < np; k++)
		xs[k] = cJSON_GetArrayItem(eng, k)->valuedouble;
	struct svgplot_series sv[MAX_SERIES];
	size_t ns = 0;
	cJSON_ArrayForEach(x, base) {
		double *yy = ys + ns * cap;
		for (int k = 0; k < np; k++)
			yy[k] = arr_num(x, "usd_per_accepted_task", k);
		fit(names[ns], sizeof(names[0]), opt_str(x, "option"), " (", opt_str(x, "id"), ")",
		    NULL);
		sv[ns] = (struct svgplot_series){.name = names[ns], .x = xs, .y = yy, .n = (size_t)np};
		ns++;
	}
	cJSON_ArrayForEach(x, series) {
		if (ns >= MAX_SERIES)
			break;
		double *yy = ys + ns * cap;
		for (int k = 0; k < np; k++)
			yy[k] = arr_num(x, "usd_per_accepted_task", k);
		range_label(names[ns], sizeof(names[0]), x);
		sv[ns] = (struct svgplot_series){.name = names[ns], .x = xs, .y = yy, .n = (size_t)np};
		ns++;
	}
	char yl[64];
	fit(yl, sizeof(yl), "cost per accepted task (", cur, ")", NULL);
	struct svgplot_chart c = {
		.id = "cost-by-team-size",
		.title = "Cost per accepted task against team size",
		.x_label = "team size (engineers)",
		.y_label = yl,
		.caption = "Each point is a sizing run at that team size; a self-hosted line falls as "
			   "its deployment absorbs more engineers and steps up where another replica "
			   "is needed. Below the seats or API line, self-hosting is cheaper.",
	};
	svgplot_lines(out, &c, sv, ns);
	free(xs);
	free(ys);
	free(names);
	return r->rc;
}

/* ---- whatif ------------------------------------------------------------- */

/* A row of the whatif table as a reader reads it: the label, the unit, and
 * whether its figures are counts (printed without decimals). */
struct row_name {
	const char *key;
	const char *label;
	const char *unit;
	bool count;
};

static const struct row_name WHATIF_ROWS[] = {
	{"completed", "Calls completed", "calls", true},
	{"failed", "Calls failed", "calls", true},
	{"prompt_tokens", "Prompt tokens", "tokens", true},
	{"prefill_tokens_computed", "Prefill tokens computed", "tokens", true},
	{"prefix_cache_hit_rate", "Prefix-cache hit rate", "%", false},
	{"mean_ttft_ms", "Mean TTFT", "ms", false},
	{"median_ttft_ms", "Median TTFT", "ms", false},
	{"p90_ttft_ms", "P90 TTFT", "ms", false},
	{"p95_ttft_ms", "P95 TTFT", "ms", false},
	{"p99_ttft_ms", "P99 TTFT", "ms", false},
	{"mean_tpot_ms", "Mean TPOT", "ms", false},
	{"median_tpot_ms", "Median TPOT", "ms", false},
	{"p90_tpot_ms", "P90 TPOT", "ms", false},
	{"p95_tpot_ms", "P95 TPOT", "ms", false},
	{"p99_tpot_ms", "P99 TPOT", "ms", false},
	{"request_goodput", "Goodput", "calls/s", false},
	{"slo_attainment", "Calls within the objectives", "%", false},
	{"gpu_busy_fraction", "GPU busy", "%", false},
	{"duration_s", "Duration", "s", false},
	{"gpus", "GPUs needed", "GPUs", true},
	{"usd_month_purchase", "Purchase", "USD/month", false},
	{"usd_month_dedicated", "Dedicated rental", "USD/month", false},
	{"usd_month_elastic", "Elastic rental", "USD/month", false},
};

/* The label of a whatif row: from the table above, the hardware after a
 * comma, the unit in brackets ("Elastic rental, h100-sxm (USD/month)"); a
 * key the table lacks reads with its underscores as spaces and the unit
 * the row gives.  *count: its figures are whole. */
static void whatif_label(char *buf, size_t cap, const cJSON *row, bool *count)
{
	const char *key = opt_str(row, "key"), *unit = opt_str(row, "unit");
	const struct row_name *rn = NULL;
	for (size_t i = 0; i < sizeof(WHATIF_ROWS) / sizeof(WHATIF_ROWS[0]); i++)
		if (strcmp(key, WHATIF_ROWS[i].key) == 0)
			rn = &WHATIF_ROWS[i];
	char name[96];
	if (rn) {
		fit(name, sizeof(name), rn->label, NULL);
		unit = rn->unit;
	} else {
		fit(name, sizeof(name), key, NULL);
		for (char *c = name; *c; c++)
			if (*c == '_')
				*c = ' ';
		if (name[0] >= 'a' && name[0] <= 'z')
			name[0] = (char)(name[0] - 'a' + 'A');
	}
	*count = rn ? rn->count : false;
	const cJSON *hw = cJSON_GetObjectItemCaseSensitive(row, "hardware");
	bool has_unit = unit[0] && strcmp(unit, "-") != 0;
	/* the unit stays whole: a long name or hardware id is cut before it */
	char tail[40];
	fit(tail, sizeof(tail), has_unit ? " (" : "", has_unit ? unit : "", has_unit ? ")" : "", NULL);
	size_t keep = cap > strlen(tail) + 1 ? cap - strlen(tail) : 1;
	fit(buf, keep, name, cJSON_IsString(hw) ? ", " : "", cJSON_IsString(hw) ? hw->valuestring : "",
	    NULL);
	size_t at = strlen(buf);
	snprintf(buf + at, cap - at, "%s", tail);
}

/* The sizing of each variant (whatif --slo): GPUs per hardware option and
 * variant, each bar saying the deployment's shape. */
static void whatif_size_chart(FILE *out, const cJSON *size)
{
	const cJSON *opts = cJSON_GetObjectItemCaseSensitive(size, "options"), *o;
	size_t n = 0;
	cJSON_ArrayForEach(o, opts) n += 2;
	if (n == 0)
		return;
	struct svgplot_bar *bars = calloc(n, sizeof(*bars));
	char(*labels)[96] = calloc(n, sizeof(*labels)), (*notes)[96] = calloc(n, sizeof(*notes));
	if (!bars || !labels || !notes) {
		free(bars);
		free(labels);
		free(notes);
		return;
	}
	size_t k = 0;
	cJSON_ArrayForEach(o, opts) {
		const cJSON *v;
		int i = 0;
		cJSON_ArrayForEach(v, cJSON_GetObjectItemCaseSensitive(o, "variants")) {
			if (k >= n || i >= 2)
				break;
			fit(labels[k], sizeof(labels[0]), opt_str(o, "hardware"), ", ",
			    opt_str(v, "variant"), NULL);
			if (opt_bool(v, "found"))
				fit(notes[k], sizeof(notes[0]), opt_str(v, "deployment"), NULL);
			else
				fit(notes[k], sizeof(notes[0]), "none found", NULL);
			bars[k] = (struct svgplot_bar){labels[k], opt_num(v, "gpus"), notes[k]};
			k++;
			i++;
		}
	}
	char title[160];
	fit(title, sizeof(title), "GPUs needed to meet ", opt_str(size, "slo"), NULL);
	struct svgplot_chart c = {
		.id = "whatif-size",
		.title = title,
		.x_label = "GPUs of the smallest deployment (GPUs)",
		.y_label = "hardware, variant",
		.caption = "Each variant sized as agentcap size sizes a team: the bar is the GPUs of the "
			   "smallest deployment meeting every objective, the text its shape (replicas x "
			   "tensor parallel).",
		.value_unit = " GPUs",
	};
	svgplot_bars(out, &c, bars, k);
	free(bars);
	free(labels);
	free(notes);
}

static int page_whatif(FILE *out, struct rd *r, const cJSON *doc)
{
	const cJSON *rows = rd_arr(r, doc, "rows");
	const cJSON *variants = rd_arr(r, doc, "variants");
	const cJSON *charts = rd_arr(r, doc, "charts");
	double seed = rd_num(r, doc, "seed");
	struct fact f[10];
	size_t n = 0;
	run_facts(r, doc, f, &n);
	if (r->rc)
		return r->rc;
	if (cJSON_GetArraySize(variants) != 2 || cJSON_GetArraySize(charts) != 2) {
		rd_missing(r, "variants", "pair of");
		return r->rc;
	}
	const char *names[2] = {cJSON_GetArrayItem(variants, 0)->valuestring,
				cJSON_GetArrayItem(variants, 1)->valuestring};
	const cJSON *ch[2] = {cJSON_GetArrayItem(charts, 0), cJSON_GetArrayItem(charts, 1)};
	if (!names[0] || !names[1]) {
		rd_missing(r, "variants", "pair of");
		return r->rc;
	}
	const cJSON *size = cJSON_GetObjectItemCaseSensitive(doc, "size");
	const char *slo = cJSON_IsObject(size) ? opt_str(size, "slo") : "-";
	fact_str(f, &n, "What-if", opt_str(doc, "whatif"));
	f[n].name = "Variants";
	fit(f[n++].value, sizeof(f[0].value), names[0], ", then ", names[1], NULL);
	if (cJSON_IsObject(size))
		fact_str(f, &n, "Latency objectives", slo);
	f[n].name = "Seed";
	snprintf(f[n++].value, sizeof(f[0].value), "%.0f", seed);
	fact_str(f, &n, "agentcap version",
		 opt_str(cJSON_GetObjectItemCaseSensitive(doc, "run"), "agentcap_version"));
	page_begin(out, "agentcap whatif report");
	facts(out, "What was replayed", f, n);

	h2(out, "Side by side");
	const char *head[] = {"", names[0], names[1], "difference", "change (%)"};
	fputs("<table>\n", out);
	th_row(out, head, 5);
	size_t n_rows = (size_t)cJSON_GetArraySize(rows);
	struct svgplot_bar *bars = calloc(n_rows ? n_rows : 1, sizeof(*bars));
	char(*labels)[96] = calloc(n_rows ? n_rows : 1, sizeof(*labels));
	if (!bars || !labels) {
		free(bars);
		free(labels);
		return r->rc = diag_set(r->d, DIAG_ENOMEM, "out of memory for the report's charts");
	}
	size_t nb = 0;
	const cJSON *row;
	cJSON_ArrayForEach(row, rows) {
		double a = opt_num(row, "a"), b = opt_num(row, "b");
		bool count;
		whatif_label(labels[nb], sizeof(labels[0]), row, &count);
		double rel = a != 0.0 ? 100.0 * (b - a) / fabs(a) : NAN;
		fputs("<tr><th>", out);
		svgplot_escape(out, labels[nb]);
		fputs("</th>", out);
		td_num(out, a, count ? 0 : 2);
		td_num(out, b, count ? 0 : 2);
		td_num(out, b - a, count ? 0 : 2);
		td_num(out, rel, 1);
		fputs("</tr>\n", out);
		bars[nb] = (struct svgplot_bar){labels[nb], rel, NULL};
		nb++;
	}
	fputs("</table>\n<h2>Charts</h2>\n", out);
	struct objective obj[8];
	int n_obj = parse_slo(slo, obj, 8);
	cdf_charts(out, r, ch, names, 2, obj, n_obj);
	char title[160];
	fit(title, sizeof(title), "Change from ", names[0], " to ", names[1], NULL);
	struct svgplot_chart c = {
		.id = "whatif-diff",
		.title = title,
		.x_label = "change (% of the first variant)",
		.y_label = "figure (unit)",
		.caption = "Which figures the what-if moves, and which way: bars right of zero grew, "
			   "bars left of it shrank ('-': the first variant's figure is zero). When one "
			   "change is more than ten times the median one, the axis is logarithmic either "
			   "side of zero, so the others stay readable; each bar prints its value.",
		.x_scale = SVGPLOT_AUTO,
		.value_digits = 1,
		.value_unit = "%",
		.value_signed = true,
	};
	if (r->rc == 0)
		svgplot_bars(out, &c, bars, nb);
	if (r->rc == 0 && cJSON_IsObject(size))
		whatif_size_chart(out, size);
	free(bars);
	free(labels);
	return r->rc;
}

/* ---- dispatch ----------------------------------------------------------- */

struct kind {
	const char *schema;
	const char *name;
	const char *version_key;
	int (*page)(FILE *, struct rd *, const cJSON *);
};

static const struct kind KINDS[] = {
	{"agentcap-replay", "replay", "schema_version", page_replay},
	{"agentcap-stats", "stats", "schema_version", page_stats},
	{"agentcap-size", "size", "version", page_size},
	{"agentcap-compare", "compare", "version", page_compare},
	{"agentcap-compare-range", "compare over team sizes", "version", page_compare_range},
	{"agentcap-whatif", "whatif", "version", page_whatif},
};

/* Line and column (from 1) of offset at in text. */
static void line_col(const char *text, size_t at, long *line, long *col)
{
	*line = 1;
	*col = 1;
	for (size_t i = 0; i < at; i++) {
		if (text[i] == '\n') {
			(*line)++;
			*col = 1;
		} else {
			(*col)++;
		}
	}
}

int html_render(FILE *out, const char *text, size_t len, const char *name, struct diag *d)
{
	struct jsondoc doc;
	size_t at;
	long line, col;
	switch (jsondoc_parse(&doc, text, len, MAX_VALUES, &at)) {
	case JSONDOC_OK:
		break;
	case JSONDOC_SYNTAX:
		line_col(text, at, &line, &col);
		return diag_set(d, DIAG_EINPUT, "%s:%ld:%ld: not valid JSON (expected the JSON result "
				"of agentcap replay, stats, size, compare or whatif --json)", name, line,
				col);
	case JSONDOC_TRAILING:
		line_col(text, at, &line, &col);
		return diag_set(d, DIAG_EINPUT, "%s:%ld:%ld: text after the JSON value (expected one "
				"JSON result and nothing after it)", name, line, col);
	case JSONDOC_VALUES:
		return diag_set(d, DIAG_EINPUT, "%s: more than %zu JSON values besides arrays of "
				"numbers, more than a page draws (expected the JSON result of agentcap "
				"replay, stats, size, compare or whatif --json, which holds a few "
				"thousand)", name, MAX_VALUES);
	case JSONDOC_NOMEM:
		return diag_set(d, DIAG_ENOMEM, "%s: out of memory reading the result", name);
	}
	const cJSON *schema = cJSON_GetObjectItemCaseSensitive(doc.root, "schema");
	const struct kind *k = NULL;
	for (size_t i = 0; cJSON_IsString(schema) && i < sizeof(KINDS) / sizeof(KINDS[0]); i++)
		if (strcmp(schema->valuestring, KINDS[i].schema) == 0)
			k = &KINDS[i];
	if (!k) {
		jsondoc_release(&doc);
		return diag_set(d, DIAG_EINPUT, "%s: not an agentcap result (expected a JSON object "
				"whose \"schema\" is agentcap-replay, agentcap-stats, agentcap-size, "
				"agentcap-compare, agentcap-compare-range or agentcap-whatif, as "
				"--json writes)", name);
	}
	struct rd r = {.doc = &doc, .name = name, .kind = k->name, .d = d};
	double v = rd_num(&r, doc.root, k->version_key);
	if (r.rc == 0 && v != 1.0)
		r.rc = diag_set(d, DIAG_EINPUT, "%s: %s result of schema version %g (expected 1: "
				"this agentcap draws version 1)", name, k->name, v);
	if (r.rc == 0 && k->page(out, &r, doc.root) == 0)
		page_end(out);
	jsondoc_release(&doc);
	return r.rc;
}
