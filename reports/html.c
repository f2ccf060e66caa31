/* SPDX-License-Identifier: Apache-2.0
 * html: self-contained HTML reports (see html.h).  Every text that comes
 * from input (paths, names, warnings) goes through svgplot_escape. */
#include "reports/html.h"

#include "base/diag.h"
#include "base/warn.h"
#include "reports/svgplot.h"

#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Points kept of a CDF: enough for a smooth curve, a small file. */
#define CDF_POINTS 200
/* Bins of the arrivals chart at most. */
#define MAX_BINS 300

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

void html_begin(FILE *out, const char *title)
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

void html_facts(FILE *out, const char *heading, const struct html_fact *facts, size_t n)
{
	if (heading) {
		fputs("<h2>", out);
		svgplot_escape(out, heading);
		fputs("</h2>\n", out);
	}
	fputs("<table>\n", out);
	for (size_t i = 0; i < n; i++) {
		fputs("<tr><th>", out);
		svgplot_escape(out, facts[i].name);
		fputs("</th><td>", out);
		svgplot_escape(out, facts[i].value);
		fputs("</td></tr>\n", out);
	}
	fputs("</table>\n", out);
}

void html_end(FILE *out)
{
	fputs("</body>\n</html>\n", out);
}

/* The CDF of sorted x[0..n-1] as at most CDF_POINTS (value, % at or below). */
static size_t cdf_points(const double *x, size_t n, double *vx, double *vy)
{
	if (n == 0)
		return 0;
	size_t k = n < CDF_POINTS ? n : CDF_POINTS;
	for (size_t i = 0; i < k; i++) {
		size_t idx = k == 1 ? n - 1 : (size_t)llround((double)i * (double)(n - 1) / (double)(k - 1));
		vx[i] = x[idx];
		vy[i] = 100.0 * (double)(idx + 1) / (double)n;
	}
	return k;
}

static int cdf_chart(FILE *out, const struct metrics *m, enum metrics_series which,
		     const struct svgplot_chart *c, struct diag *d)
{
	size_t n;
	double *x = metrics_series_sorted(m, which, &n);
	if (n == SIZE_MAX)
		return diag_set(d, DIAG_ENOMEM, "out of memory for the HTML report's charts");
	double vx[CDF_POINTS], vy[CDF_POINTS];
	struct svgplot_series s = {.name = "calls at or below", .x = vx, .y = vy,
				   .n = cdf_points(x, n, vx, vy)};
	svgplot_lines(out, c, &s, 1);
	free(x);
	return 0;
}

static void row_stats(FILE *out, const char *name, const struct metrics_stats *st)
{
	fputs("<tr><th>", out);
	svgplot_escape(out, name);
	fprintf(out, "</th><td class=\"n\">%.2f</td><td class=\"n\">%.2f</td><td class=\"n\">%.2f</td>"
		"<td class=\"n\">%.2f</td><td class=\"n\">%.2f</td></tr>\n", st->mean, st->median,
		st->p90, st->p95, st->p99);
}

int html_replay(FILE *out, const struct report_meta *meta, const struct metrics_summary *s,
		const struct metrics *m, struct diag *d)
{
	char seed[32], tp[32], kv[48], calls[96], dur[48], slo[96], hit[32], fmt[96];
	snprintf(fmt, sizeof(fmt), "%s / %s", meta->weight_format ? meta->weight_format : "?",
		 meta->kv_dtype ? meta->kv_dtype : "?");
	snprintf(seed, sizeof(seed), "%" PRIu64, meta->seed);
	snprintf(tp, sizeof(tp), "%d", (int)meta->tp);
	snprintf(kv, sizeof(kv), "%" PRId64 " tokens per replica", meta->kv_capacity_tokens);
	snprintf(calls, sizeof(calls), "%" PRId64 " completed, %" PRId64 " failed", s->completed,
		 s->failed);
	snprintf(dur, sizeof(dur), "%.1f s simulated", s->duration_s);
	if (meta->slo_ttft_ms > 0.0 || meta->slo_tpot_ms > 0.0)
		snprintf(slo, sizeof(slo), "TTFT <= %g ms, TPOT <= %g ms (0: none); met by %.1f%%",
			 meta->slo_ttft_ms, meta->slo_tpot_ms, 100.0 * s->slo_attainment);
	else
		snprintf(slo, sizeof(slo), "none set");
	snprintf(hit, sizeof(hit), "%.1f%%", 100.0 * s->prefix_cache_hit_rate);
	const struct html_fact facts[] = {
		{"Scenario", meta->scenario_name ? meta->scenario_name : "default"},
		{"Scenario file", meta->scenario_path ? meta->scenario_path : "(built in)"},
		{"Trace", meta->trace_path},
		{"Trace format", meta->trace_format},
		{"Calls", calls},
		{"Duration", dur},
		{"Model", meta->model_id},
		{"Hardware", meta->hardware_id},
		{"Weights / KV cache", fmt},
		{"Tensor parallel", tp},
		{"KV cache", kv},
		{"Latency objectives", slo},
		{"Prefix-cache hit rate", hit},
		{"Seed", seed},
		{"agentcap version", meta->version},
	};
	html_begin(out, "agentcap replay report");
	bool no = report_answer_no(meta, s);
	fprintf(out, "<p>Answer: <span class=\"%s\">%s</span> &#8212; does this deployment serve "
		"this trace within its objectives?</p>\n", no ? "answer-no" : "answer-yes",
		no ? "no" : "yes");
	for (size_t i = 0; meta->warnings && i < meta->warnings->count; i++) {
		fputs("<p class=\"warn\">", out);
		svgplot_escape(out, meta->warnings->items[i].msg);
		fputs("</p>\n", out);
	}
	html_facts(out, "What was run", facts, sizeof(facts) / sizeof(facts[0]));

	fputs("<h2>Latency (ms)</h2>\n<table>\n<tr><th></th><th>mean</th><th>median</th><th>P90</th>"
	      "<th>P95</th><th>P99</th></tr>\n", out);
	row_stats(out, "TTFT", &s->ttft_ms);
	row_stats(out, "TPOT", &s->tpot_ms);
	row_stats(out, "ITL", &s->itl_ms);
	row_stats(out, "E2E", &s->e2el_ms);
	fputs("</table>\n<h2>Charts</h2>\n", out);

	struct svgplot_chart c = {
		.id = "ttft-cdf",
		.title = "Time to first token, cumulative",
		.x_label = "TTFT (ms)",
		.y_label = "calls at or below (%)",
		.caption = "Read across from a share of calls to the TTFT they got: the curve should "
			   "reach the top left of the dashed objective line.",
	};
	if (meta->slo_ttft_ms > 0.0)
		c.markers[c.n_markers++] = (struct svgplot_marker){meta->slo_ttft_ms, "TTFT objective"};
	int rc = cdf_chart(out, m, METRICS_TTFT_MS, &c, d);
	c = (struct svgplot_chart){
		.id = "tpot-cdf",
		.title = "Time per output token (after the first), cumulative",
		.x_label = "TPOT (ms)",
		.y_label = "calls at or below (%)",
		.caption = "How fast tokens stream once a call has started; a long right tail means "
			   "decode steps crowded by large batches or prefills.",
	};
	if (meta->slo_tpot_ms > 0.0)
		c.markers[c.n_markers++] = (struct svgplot_marker){meta->slo_tpot_ms, "TPOT objective"};
	if (rc == 0)
		rc = cdf_chart(out, m, METRICS_TPOT_MS, &c, d);
	c = (struct svgplot_chart){
		.id = "e2e-cdf",
		.title = "End-to-end latency, cumulative",
		.x_label = "E2E (ms)",
		.y_label = "calls at or below (%)",
		.caption = "How long an agent waits for each whole call; this is what stretches a "
			   "session.",
	};
	if (rc == 0)
		rc = cdf_chart(out, m, METRICS_E2EL_MS, &c, d);
	if (rc == 0) {
		/* whole minutes per bin, at most MAX_BINS bins */
		double bin_s = 60.0 * fmax(1.0, ceil(s->duration_s / 60.0 / MAX_BINS));
		size_t n;
		double *counts = metrics_arrivals_per_bin(m, bin_s, &n);
		if (n == SIZE_MAX)
			rc = diag_set(d, DIAG_ENOMEM, "out of memory for the HTML report's charts");
		double *t = n && n != SIZE_MAX ? malloc(n * sizeof(*t)) : NULL;
		if (rc == 0 && n && !t)
			rc = diag_set(d, DIAG_ENOMEM, "out of memory for the HTML report's charts");
		if (rc == 0) {
			for (size_t i = 0; i < n; i++)
				t[i] = (double)i * bin_s / 3600.0;
			char title[96];
			snprintf(title, sizeof(title), "Calls arriving per %g min", bin_s / 60.0);
			c = (struct svgplot_chart){
				.id = "arrivals",
				.title = title,
				.x_label = "time from the first call (h)",
				.y_label = "calls per bin",
				.caption = "The load over the run: latency percentiles are mostly decided "
					   "by the busiest stretch.",
			};
			struct svgplot_series sr = {.name = "calls", .x = t, .y = counts, .n = n};
			svgplot_lines(out, &c, &sr, 1);
		}
		free(t);
		free(counts);
	}
	if (rc == 0)
		html_end(out);
	return rc;
}
