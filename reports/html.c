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
#define MAX_SERIES 8
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
	"table{border-collapse:collapse;margin:.5rem 0}td,th{padding:.15rem .8rem .15rem 0;"
	"text-align:left;vertical-align:top}th{font-weight:600}td.n{text-align:right;"
	"font-variant-numeric:tabular-nums}\n"
	".answer-yes{color:#1a7f37;font-weight:700}.answer-no{color:#b42318;font-weight:700}\n"
	".warn{background:#fff4e5;border-left:4px solid #f59e0b;padding:.4rem .8rem;margin:.4rem 0}\n"
	"figure{margin:1rem 0;break-inside:avoid}figure svg{width:100%;height:auto;max-width:640px;"
	"display:block}\nfigcaption{font-size:.9rem;color:#444;max-width:640px}\n"
	"svg text{font-family:inherit;font-size:12px;fill:#222}svg text.title{font-size:15px;"
	"font-weight:600}svg text.label{font-size:13px}\n"
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

/* Charts of TTFT, TPOT and E2E: one series per run in charts[0..n_runs). */
static void cdf_charts(FILE *out, struct rd *r, const cJSON *const *charts, const char *const *names,
		       size_t n_runs, double slo_ttft_ms, double slo_tpot_ms)
{
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
	for (int k = 0; k < 3 && r->rc == 0; k++) {
		struct svgplot_chart c = TEMPLATE[k];
		if (k == 0 && slo_ttft_ms > 0.0)
			c.markers[c.n_markers++] = (struct svgplot_marker){slo_ttft_ms, "TTFT objective"};
		else if (k == 0)
			c.caption = "Read across from a share of calls to the TTFT they got: the further "
				    "left the curve, the sooner agents see their first token.";
		if (k == 1 && slo_tpot_ms > 0.0)
			c.markers[c.n_markers++] = (struct svgplot_marker){slo_tpot_ms, "TPOT objective"};
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
			.y_label = "calls per bin",
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
	cdf_charts(out, r, &charts, &name, 1, slo_ttft, slo_tpot);
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
		.y_label = "calls waiting",
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
		.y_label = "calls in running batches",
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
		.y_label = "replicas",
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
	double scale = xmax >= 1e7 ? 1e6 : xmax >= 1e4 ? 1e3 : 1.0;
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
			   "evicts.",
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

static void deployment(char *buf, size_t cap, const cJSON *e)
{
	double pp = opt_num(e, "pipeline_parallel_size");
	if (pp > 1)
		snprintf(buf, cap, "%.0f x TP%.0f PP%.0f", opt_num(e, "replicas"),
			 opt_num(e, "tensor_parallel_size"), pp);
	else
		snprintf(buf, cap, "%.0f x TP%.0f", opt_num(e, "replicas"),
			 opt_num(e, "tensor_parallel_size"));
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

	/* the winners' launch commands, as modelled */
	bool any_launch = false;
	cJSON_ArrayForEach(o, options) any_launch = any_launch ||
		cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(o, "launch"));
	if (any_launch) {
		h2(out, "Launch commands");
		fputs("<p>Each winner's engine command as the replay modelled it: one per replica, "
		      "every value written out.</p>\n", out);
		cJSON_ArrayForEach(o, options) {
			const cJSON *l = cJSON_GetObjectItemCaseSensitive(o, "launch");
			if (!cJSON_IsObject(l))
				continue;
			char head[256];
			snprintf(head, sizeof(head), "%s: %s %s, %.0f replica(s) x %.0f GPU(s)%s",
				 opt_str(o, "hardware"), opt_str(l, "engine"), opt_str(l, "version"),
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
	}

	/* the candidates tried, and the chart of them */
	struct objective obj[8];
	int n_obj = parse_slo(slo, obj, 8);
	double *x = malloc(2 * MAX_CANDIDATES * sizeof(*x)), *y = malloc(2 * MAX_CANDIDATES * sizeof(*y));
	if (!x || !y) {
		free(x);
		free(y);
		return r->rc = diag_set(r->d, DIAG_ENOMEM, "out of memory for the report's charts");
	}
	size_t n_met = 0, n_miss = 0;
	h2(out, "Candidates tried, in search order");
	static const char *const CHEAD[] = {"Hardware", "Deployment", "GPUs", "Worst objective / limit",
					    "Met", "Why not"};
	fputs("<table>\n", out);
	th_row(out, CHEAD, 6);
	cJSON_ArrayForEach(o, options) {
		const cJSON *path = cJSON_GetObjectItemCaseSensitive(o, "path");
		const cJSON *e;
		cJSON_ArrayForEach(e, path) {
			char dep[64];
			deployment(dep, sizeof(dep), e);
			double ratio = worst_ratio(e, obj, n_obj), gpus = opt_num(e, "gpus");
			bool meets = opt_bool(e, "meets");
			fputs("<tr>", out);
			td_str(out, opt_str(o, "hardware"));
			td_str(out, dep);
			td_num(out, gpus, 0);
			td_num(out, ratio, 2);
			td_str(out, meets ? "yes" : "no");
			td_str(out, opt_str(e, "why"));
			fputs("</tr>\n", out);
			if (meets && n_met < MAX_CANDIDATES) {
				x[n_met] = gpus;
				y[n_met++] = ratio;
			} else if (!meets && n_miss < MAX_CANDIDATES) {
				x[MAX_CANDIDATES + n_miss] = gpus;
				y[MAX_CANDIDATES + n_miss++] = ratio;
			}
		}
	}
	fputs("</table>\n<h2>Charts</h2>\n", out);
	struct svgplot_chart c = {
		.id = "size-candidates",
		.title = "Candidates tried: GPUs against the worst objective",
		.x_label = "GPUs of the candidate deployment",
		.y_label = "worst percentile / its limit (x)",
		.caption = "Each dot is one deployment the search replayed; at or below the dashed "
			   "line every objective held. The answer is the leftmost dot that met them.",
	};
	c.hmarkers[c.n_hmarkers++] = (struct svgplot_marker){1.0, "objective limit"};
	struct svgplot_series s[2] = {
		{.name = "met the objectives", .x = x, .y = y, .n = n_met, .points = true},
		{.name = "missed", .x = x + MAX_CANDIDATES, .y = y + MAX_CANDIDATES, .n = n_miss,
		 .points = true},
	};
	svgplot_lines(out, &c, s, 2);
	free(x);
	free(y);
	return r->rc;
}

/* ---- compare ------------------------------------------------------------ */

static bool self_hosted(const cJSON *row)
{
	const char *o = opt_str(row, "option");
	return strcmp(o, "seats") != 0 && strcmp(o, "api") != 0;
}

static void row_label(char *buf, size_t cap, const cJSON *row)
{
	if (self_hosted(row))
		fit(buf, cap, opt_str(row, "hardware"), " ", opt_str(row, "option"), " (",
		    opt_str(row, "deployment"), ")", NULL);
	else
		fit(buf, cap, opt_str(row, "option"), NULL);
}

static int page_compare(FILE *out, struct rd *r, const cJSON *doc)
{
	const cJSON *rows = rd_arr(r, doc, "rows");
	double engineers = rd_num(r, doc, "engineers");
	struct fact f[12];
	size_t n = 0;
	run_facts(r, doc, f, &n);
	if (r->rc)
		return r->rc;
	const cJSON *run = cJSON_GetObjectItemCaseSensitive(doc, "run");
	f[n].name = "Team";
	snprintf(f[n++].value, sizeof(f[0].value), "%.0f engineers", engineers);
	fact_str(f, &n, "API", opt_str(doc, "api"));
	fact_str(f, &n, "Seats", opt_str(doc, "seats"));
	f[n].name = "Seed";
	snprintf(f[n++].value, sizeof(f[0].value), "%.0f", opt_num(run, "seed"));
	fact_str(f, &n, "agentcap version", opt_str(run, "agentcap_version"));
	page_begin(out, "agentcap compare report");
	facts(out, "What was priced", f, n);

	const char *cur = opt_str(doc, "currency");
	if (!cur[0])
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
	fputs(".</p>\n<h2>Charts</h2>\n", out);

	/* bars: self-hosted rows, seats and API as lines across them */
	struct svgplot_bar *bars = calloc(n_rows ? n_rows : 1, sizeof(*bars));
	char(*labels)[192] = calloc(n_rows ? n_rows : 1, sizeof(*labels));
	double *ux = malloc(UTIL_POINTS * sizeof(*ux));
	double *uy = malloc(MAX_SERIES * UTIL_POINTS * sizeof(*uy));
	if (!bars || !labels || !ux || !uy) {
		free(bars);
		free(labels);
		free(ux);
		free(uy);
		return r->rc = diag_set(r->d, DIAG_ENOMEM, "out of memory for the report's charts");
	}
	size_t nb = 0;
	double top = fmax(isfinite(api) ? api : 0.0, isfinite(seats) ? seats : 0.0);
	cJSON_ArrayForEach(row, rows) {
		if (!self_hosted(row))
			continue;
		row_label(labels[nb], sizeof(labels[0]), row);
		bars[nb] = (struct svgplot_bar){labels[nb], opt_num(row, "usd_per_accepted_task")};
		if (isfinite(bars[nb].value))
			top = fmax(top, bars[nb].value);
		nb++;
	}
	char xl[64];
	fit(xl, sizeof(xl), cur, " per accepted task", NULL);
	struct svgplot_chart c = {
		.id = "cost-per-task",
		.title = "Cost per accepted task by option",
		.x_label = xl,
		.y_label = "",
		.caption = "A bar left of a dashed line is cheaper per accepted task than the seats or "
			   "the API it is named for, at the traffic replayed.",
	};
	if (isfinite(seats))
		c.markers[c.n_markers++] = (struct svgplot_marker){seats, "seats"};
	if (isfinite(api))
		c.markers[c.n_markers++] = (struct svgplot_marker){api, "API"};
	svgplot_bars(out, &c, bars, nb);

	/* cost against utilisation: the fixed monthly cost over traffic scaled
	 * on the same GPUs, so per task it falls as 1 / busy */
	for (int i = 0; i < UTIL_POINTS; i++)
		ux[i] = (double)(i + 1);
	struct svgplot_series s[MAX_SERIES];
	size_t ns = 0;
	/* drawn up to 4x the dearer baseline, or twice the cheapest option at
	 * full use when that is higher, so the crossing stays readable */
	double cap = 4.0 * fmax(isfinite(api) ? api : 0.0, isfinite(seats) ? seats : 0.0);
	double cheapest = INFINITY;
	cJSON_ArrayForEach(row, rows) if (self_hosted(row)) {
		double full = opt_num(row, "usd_per_accepted_task") * opt_num(row, "gpu_busy_fraction");
		if (isfinite(full))
			cheapest = fmin(cheapest, full);
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
			   "100%).",
	};
	if (isfinite(api))
		c.hmarkers[c.n_hmarkers++] = (struct svgplot_marker){api, "API"};
	if (isfinite(seats))
		c.hmarkers[c.n_hmarkers++] = (struct svgplot_marker){seats, "seats"};
	size_t k = 0;
	cJSON_ArrayForEach(row, rows) {
		if (!self_hosted(row) || ns >= MAX_SERIES)
			continue;
		double busy = opt_num(row, "gpu_busy_fraction") * 100.0;
		double task = opt_num(row, "usd_per_accepted_task");
		double *yy = uy + ns * UTIL_POINTS;
		for (int i = 0; i < UTIL_POINTS; i++) {
			double v = task * busy / ux[i];
			yy[i] = isfinite(v) && v <= cap ? v : NAN;
		}
		s[ns] = (struct svgplot_series){.name = labels[k], .x = ux, .y = yy, .n = UTIL_POINTS};
		double be = opt_num(row, "breakeven_gpu_busy_fraction");
		if (isfinite(be) && be <= 1.0 && c.n_markers < SVGPLOT_MAX_MARKERS)
			c.markers[c.n_markers++] = (struct svgplot_marker){100.0 * be, "break-even"};
		ns++;
		k++;
	}
	svgplot_lines(out, &c, s, ns);
	free(bars);
	free(labels);
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
	fit(yl, sizeof(yl), cur, " per accepted task", NULL);
	struct svgplot_chart c = {
		.id = "cost-by-team-size",
		.title = "Cost per accepted task against team size",
		.x_label = "engineers in the team",
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
	fact_str(f, &n, "What-if", opt_str(doc, "whatif"));
	f[n].name = "Variants";
	fit(f[n++].value, sizeof(f[0].value), names[0], ", then ", names[1], NULL);
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
		const char *unit = opt_str(row, "unit");
		double a = opt_num(row, "a"), b = opt_num(row, "b");
		const cJSON *hw = cJSON_GetObjectItemCaseSensitive(row, "hardware");
		if (cJSON_IsString(hw))
			fit(labels[nb], sizeof(labels[0]), opt_str(row, "key"), " ", hw->valuestring,
			    NULL);
		else
			fit(labels[nb], sizeof(labels[0]), opt_str(row, "key"), NULL);
		double rel = a != 0.0 ? 100.0 * (b - a) / fabs(a) : NAN;
		fputs("<tr><th>", out);
		svgplot_escape(out, labels[nb]);
		if (unit[0] && strcmp(unit, "-") != 0) {
			fputs(" (", out);
			svgplot_escape(out, unit);
			fputs(")", out);
		}
		fputs("</th>", out);
		td_num(out, a, 2);
		td_num(out, b, 2);
		td_num(out, b - a, 2);
		td_num(out, rel, 1);
		fputs("</tr>\n", out);
		bars[nb] = (struct svgplot_bar){labels[nb], rel};
		nb++;
	}
	fputs("</table>\n<h2>Charts</h2>\n", out);
	cdf_charts(out, r, ch, names, 2, NAN, NAN);
	char title[160];
	fit(title, sizeof(title), "Change from ", names[0], " to ", names[1], NULL);
	struct svgplot_chart c = {
		.id = "whatif-diff",
		.title = title,
		.x_label = "change (% of the first variant)",
		.y_label = "",
		.caption = "Which figures the what-if moves, and which way: bars right of zero grew, "
			   "bars left of it shrank ('-': the first variant's figure is zero).",
	};
	if (r->rc == 0)
		svgplot_bars(out, &c, bars, nb);
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
