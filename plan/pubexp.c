/* SPDX-License-Identifier: Apache-2.0
 * pubexp: published multi-replica experiments reproduced by replays
 * (plan/pubexp.h).
 *
 * Design: the CSV is read whole (models/csvread.h), every row checked
 * before anything runs, so a typo on the last line costs no simulation.
 * Then each row's two configurations are built from the default scenario
 * plus the row's keys (scenario_load, deploy_check, deploy_build: the set-up
 * path of `agentcap replay`) and replayed with deploy_run into the metrics
 * of reports/, through a window that leaves out a warm-up.  Replays are
 * keyed by (trace, sets, variant) text; a key seen before reuses its
 * figures, which keeps a row per metric of one experiment cheap.  A goodput
 * row builds its deployment once and replays it at a fixed sequence of
 * arrival rates (goodput_search); its key carries the SLO instead.
 * Invariants: a row is either skipped (predicted figures NAN) or has both
 * predicted figures finite; the verdict counts add up to n_rows.
 */
#include "plan/pubexp.h"

#include "base/diag.h"
#include "base/jsonw.h"
#include "models/catalog.h"
#include "models/csvread.h"
#include "replay/replay.h"
#include "reports/metrics.h"
#include "replay/deploy.h"
#include "replay/scenario.h"
#include "traces/xform.h"

#include <assert.h>
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Items in one sets/variant cell, and the longest cell. */
#define PUBEXP_MAX_SETS 32
#define PUBEXP_CELL_MAX 1024
/* Distinct replays one file may ask for. */
#define PUBEXP_MAX_REPLAYS 256

static const char *const METRIC_NAMES[PX_N_METRICS] = {
	"ttft_mean_ms", "ttft_p50_ms", "ttft_p95_ms", "e2el_mean_ms",
	"e2el_p95_ms", "output_throughput_tok_s", "total_throughput_tok_s",
	"prefix_cache_hit_rate", "goodput_rps_per_gpu",
};

static const char *const KINDS[] = {"routing", "prefix_reuse", "offload", "disaggregation"};

/* The goodput search: arrival rates from GOODPUT_LO to GOODPUT_HI times the
 * trace's own, bisected in log space GOODPUT_STEPS times (a step of 2^(12 /
 * 2^12) = 0.2% at the end). */
#define GOODPUT_LO (1.0 / 16)
#define GOODPUT_HI 256.0
#define GOODPUT_STEPS 12

const char *pubexp_metric_name(enum pubexp_metric m)
{
	assert(m >= 0 && m < PX_N_METRICS);
	return METRIC_NAMES[m];
}

bool pubexp_higher_is_better(enum pubexp_metric m)
{
	return m == PX_OUTPUT_THROUGHPUT || m == PX_TOTAL_THROUGHPUT || m == PX_HIT_RATE ||
	       m == PX_GOODPUT;
}

const char *pubexp_verdict_name(enum pubexp_verdict v)
{
	switch (v) {
	case PXV_SKIPPED: return "skipped";
	case PXV_WITHIN: return "within";
	case PXV_KNOWN_GAP: return "known gap";
	case PXV_MISS: return "miss";
	}
	return "?";
}

/* The columns a file must have. */
enum {
	C_ID, C_KIND, C_METRIC, C_PUB_A, C_PUB_B, C_GAIN_LO, C_GAIN_HI, C_TOL, C_GAP,
	C_SKIP, C_TRACE, C_SETS, C_VAR_A, C_VAR_B, C_LABEL_A, C_LABEL_B, C_SOURCE,
	C_URL, C_DATE, C_WORKLOAD, C_FROM, C_N
};
static const char *const COLS[C_N] = {
	"id", "kind", "metric", "published_a", "published_b", "gain_lo", "gain_hi",
	"tolerance", "known_gap", "skip", "trace", "sets", "variant_a", "variant_b",
	"label_a", "label_b", "source", "url", "date", "workload", "measure_from_s",
};
/* Columns a file may leave out (then empty on every row): the SLO of a
 * goodput row. */
enum { O_SLO_TTFT, O_SLO_TPOT, O_SLO_ATT, O_N };
static const char *const OPT_COLS[O_N] = {"slo_ttft_ms", "slo_tpot_ms", "slo_attainment"};

/* One replay's figures, by metric. */
struct replay_memo {
	char *key;
	double v[PX_N_METRICS];
};

struct pubexp_ctx {
	const struct pubexp_opts *o;
	const char *path;
	char dir[PUBEXP_CELL_MAX];   /* the CSV's folder, "" for the cwd */
	struct replay_memo memo[PUBEXP_MAX_REPLAYS];
	size_t n_memo;
};

static void copy_cell(char *dst, size_t cap, const char *src)
{
	size_t n = strlen(src);
	if (n >= cap)
		n = cap - 1;
	memcpy(dst, src, n);
	dst[n] = '\0';
}

static int text_cell(const struct csvread *t, size_t r, int col, char *dst, size_t cap,
		     const char *path, struct diag *d)
{
	const char *s = csvread_cell(t, r, col);
	if (strlen(s) >= cap)
		return diag_at(d, DIAG_EINPUT, path, t->lines[r], 0,
			       "column '%s': %zu characters (expected at most %zu)", t->header[col],
			       strlen(s), cap - 1);
	copy_cell(dst, cap, s);
	return 0;
}

/* Split "k=v; k2=v2" into items (in buf, which it modifies).  0, or
 * DIAG_EINPUT naming the item that is not KEY=VALUE. */
static int split_sets(char *buf, const char **items, int *n, const char *path, long line,
		      const char *col, struct diag *d)
{
	char *p = buf;
	while (*p) {
		char *end = strchr(p, ';');
		if (end)
			*end = '\0';
		while (isspace((unsigned char)*p))
			p++;
		char *e = p + strlen(p);
		while (e > p && isspace((unsigned char)e[-1]))
			*--e = '\0';
		if (*p) {
			char *eq = strchr(p, '=');
			if (!eq || eq == p)
				return diag_at(d, DIAG_EINPUT, path, line, 0,
					       "column '%s': item '%s' (expected KEY=VALUE, items separated by ';')",
					       col, p);
			if (*n >= PUBEXP_MAX_SETS)
				return diag_at(d, DIAG_EINPUT, path, line, 0,
					       "column '%s': more than %d items", col, PUBEXP_MAX_SETS);
			items[(*n)++] = p;
		}
		if (!end)
			break;
		p = end + 1;
	}
	return 0;
}

/* The figures of one summary, by metric. */
static void figures(const struct metrics_summary *s, double v[PX_N_METRICS])
{
	v[PX_TTFT_MEAN] = s->ttft_ms.mean;
	v[PX_TTFT_P50] = s->ttft_ms.median;
	v[PX_TTFT_P95] = s->ttft_ms.p95;
	v[PX_E2EL_MEAN] = s->e2el_ms.mean;
	v[PX_E2EL_P95] = s->e2el_ms.p95;
	v[PX_OUTPUT_THROUGHPUT] = s->output_throughput;
	v[PX_TOTAL_THROUGHPUT] = s->total_token_throughput;
	v[PX_HIT_RATE] = s->prefix_cache_hit_rate;
	v[PX_GOODPUT] = NAN; /* a search over replays, not one replay's figure */
}

/* The sink between the simulator and the metrics: calls issued before
 * from_ns (a warm-up the source ran before measuring) fill the caches but
 * are not counted; everything else passes through. */
struct window {
	int64_t from_ns;
	struct res_sink next;
	int64_t dropped;
	int64_t counted;             /* calls passed on */
	int64_t first_ns, last_ns;   /* their earliest and latest arrival */
};

static void window_request(void *ctx, const struct res_request *r)
{
	struct window *w = ctx;
	if (r->arrival_ns < w->from_ns) {
		w->dropped++;
		return;
	}
	if (w->counted == 0 || r->arrival_ns < w->first_ns)
		w->first_ns = r->arrival_ns;
	if (w->counted == 0 || r->arrival_ns > w->last_ns)
		w->last_ns = r->arrival_ns;
	w->counted++;
	w->next.request(w->next.ctx, r);
}

static void window_itl_run(void *ctx, const struct res_itl_run *r)
{
	struct window *w = ctx;
	if (r->first_ns >= (double)w->from_ns)
		w->next.itl_run(w->next.ctx, r);
}

static void window_busy(void *ctx, const struct res_busy *b)
{
	struct window *w = ctx;
	w->next.busy(w->next.ctx, b);
}

static void window_drop_span(void *ctx, const struct res_span *s)
{
	(void)ctx;
	(void)s; /* sessions and tasks straddle the window; no row uses them */
}

/* One replay of dep on trace_path, its arrival times multiplied by
 * arrival_scale: the summary of the calls issued from from_s on (under the
 * SLO slo_ttft_ms / slo_tpot_ms, 0 for none) and *rate_rps, their arrival
 * rate (calls - 1 over the first to the last arrival; NAN for fewer than two
 * calls or one instant).  0 or the replay's error in sd. */
static int replay_once(const struct deployment *dep, const char *trace_path, uint64_t seed,
		       double from_s, double arrival_scale, double slo_ttft_ms, double slo_tpot_ms,
		       struct metrics_summary *sum, double *rate_rps, struct diag *sd)
{
	struct metrics *m = metrics_new();
	if (!m)
		return diag_set(sd, DIAG_ENOMEM, "out of memory");
	metrics_set_replicas(m, deploy_replicas(dep, NULL));
	if (slo_ttft_ms > 0 || slo_tpot_ms > 0)
		metrics_set_slo(m, slo_ttft_ms, slo_tpot_ms);
	struct window w = {.from_ns = (int64_t)llround(from_s * 1e9), .next = metrics_sink(m)};
	struct res_sink sink = {.ctx = &w, .request = window_request,
				.itl_run = window_itl_run, .busy = window_busy,
				.session = window_drop_span, .task = window_drop_span};
	struct xform_opts xf;
	xform_opts_init(&xf);
	xf.arrival_scale = arrival_scale;
	struct replay_opts ro = {.trace_path = trace_path, .format = TRACE_FMT_AUTO,
				 .seed = seed, .xform = &xf};
	struct replay_stats st;
	int rc = deploy_run(dep, &ro, NULL, sink, &st, sd);
	if (rc == 0)
		rc = metrics_summarize(m, sum, sd);
	if (rc == 0 && sum->completed == 0)
		rc = diag_set(sd, DIAG_EINPUT, "no call completed from %g s on (measure_from_s)",
			      from_s);
	*rate_rps = w.counted >= 2 && w.last_ns > w.first_ns
			    ? (double)(w.counted - 1) / ((double)(w.last_ns - w.first_ns) / 1e9)
			    : NAN;
	metrics_free(m);
	return rc;
}

/* Goodput per GPU of dep, DistServe's: the highest arrival rate at which
 * at least row->slo_attainment of the calls meet both row->slo_ttft_ms and
 * row->slo_tpot_ms, over the deployment's GPUs.  The trace is replayed with
 * its arrival times divided by a factor f, bisected in log space between
 * GOODPUT_LO and GOODPUT_HI a fixed GOODPUT_STEPS times, which assumes that
 * attainment falls as the rate rises.  0 when even the lowest rate misses
 * the SLO; the rate at GOODPUT_HI (a lower bound) when even that meets it.
 * The rate is the replay's own (calls - 1 over their arrival span), so a
 * trace need not be at any particular rate.  *out set, 0 or sd's error. */
static int goodput_search(const struct deployment *dep, const char *trace_path, uint64_t seed,
			  const struct pubexp_row *row, double *out, struct diag *sd)
{
	int32_t gpus = deploy_gpus(dep, NULL);
	assert(gpus > 0);
	double lo = GOODPUT_LO, hi = GOODPUT_HI, best_rate = 0;
	struct metrics_summary sum;
	double rate;
	int rc = replay_once(dep, trace_path, seed, 0, 1.0 / lo, row->slo_ttft_ms, row->slo_tpot_ms,
			     &sum, &rate, sd);
	if (rc == 0 && !isfinite(rate))
		rc = diag_set(sd, DIAG_EINPUT, "a goodput search needs calls that arrive over time "
			      "(expected two calls or more, not all at one instant)");
	if (rc != 0 || sum.slo_attainment < row->slo_attainment) {
		*out = 0;
		return rc;
	}
	best_rate = rate;
	rc = replay_once(dep, trace_path, seed, 0, 1.0 / hi, row->slo_ttft_ms, row->slo_tpot_ms,
			 &sum, &rate, sd);
	if (rc == 0 && sum.slo_attainment >= row->slo_attainment) {
		*out = rate / gpus;
		return 0;
	}
	for (int k = 0; rc == 0 && k < GOODPUT_STEPS; k++) {
		double mid = sqrt(lo * hi);
		rc = replay_once(dep, trace_path, seed, 0, 1.0 / mid, row->slo_ttft_ms,
				 row->slo_tpot_ms, &sum, &rate, sd);
		if (rc == 0 && sum.slo_attainment >= row->slo_attainment) {
			lo = mid;
			best_rate = rate;
		} else {
			hi = mid;
		}
	}
	*out = best_rate / gpus;
	return rc;
}

/* Replay row r's configuration (sets + variant) on its trace, or reuse a
 * replay of the same key; out gets the figures of the calls issued from
 * from_s on, or for a goodput row out[PX_GOODPUT] from goodput_search (the
 * other figures NAN). */
static int replay_variant(struct pubexp_ctx *cx, const struct csvread *t, size_t r,
			  const struct pubexp_row *row, const char *variant,
			  double out[PX_N_METRICS], struct diag *d)
{
	const char *trace = csvread_cell(t, r, csvread_col(t, "trace"));
	const char *sets = csvread_cell(t, r, csvread_col(t, "sets"));
	long line = t->lines[r];
	double from_s = row->measure_from_s;
	bool goodput = row->metric == PX_GOODPUT;
	size_t klen = strlen(trace) + strlen(sets) + strlen(variant) + 160;
	char *key = malloc(klen);
	if (!key)
		return diag_set(d, DIAG_ENOMEM, "out of memory");
	if (goodput)
		snprintf(key, klen, "%s\n%s\n%s\ngoodput %.17g %.17g %.17g", trace, sets, variant,
			 row->slo_ttft_ms, row->slo_tpot_ms, row->slo_attainment);
	else
		snprintf(key, klen, "%s\n%s\n%s\n%.17g", trace, sets, variant, from_s);
	for (size_t i = 0; i < cx->n_memo; i++)
		if (strcmp(cx->memo[i].key, key) == 0) {
			memcpy(out, cx->memo[i].v, sizeof cx->memo[i].v);
			free(key);
			return 0;
		}
	if (cx->n_memo >= PUBEXP_MAX_REPLAYS) {
		free(key);
		return diag_at(d, DIAG_EINPUT, cx->path, line, 0, "more than %d distinct replays",
			       PUBEXP_MAX_REPLAYS);
	}

	char buf[2 * PUBEXP_CELL_MAX + 2];
	snprintf(buf, sizeof buf, "%s;%s", sets, variant);
	const char *items[PUBEXP_MAX_SETS];
	int n = 0;
	int rc = split_sets(buf, items, &n, cx->path, line, "sets/variant", d);

	char trace_path[2 * PUBEXP_CELL_MAX + 2];
	if (trace[0] == '/' || !cx->dir[0])
		snprintf(trace_path, sizeof trace_path, "%s", trace);
	else
		snprintf(trace_path, sizeof trace_path, "%s/%s", cx->dir, trace);

	struct scenario *sc = calloc(1, sizeof *sc);
	if (rc == 0 && !sc)
		rc = diag_set(d, DIAG_ENOMEM, "out of memory");
	struct diag sd;
	diag_init(&sd);
	if (rc == 0) {
		rc = scenario_load(sc, NULL, items, n, &sd);
		if (rc == 0)
			rc = deploy_check(sc, DEPLOY_CMD_REPLAY, &sd);
		if (rc != 0)
			diag_at(d, rc, cx->path, line, 0, "%s", sd.msg);
	}
	struct deployment dep;
	bool built = false;
	if (rc == 0) {
		struct deploy_opts dopt = {0};
		rc = deploy_build(&dep, sc, cx->o->cat, &dopt, NULL, &sd);
		if (rc != 0)
			diag_at(d, rc, cx->path, line, 0, "%s", sd.msg);
		built = rc == 0;
	}
	if (rc == 0 && goodput) {
		for (int k = 0; k < PX_N_METRICS; k++)
			out[k] = NAN;
		rc = goodput_search(&dep, trace_path, cx->o->seed, row, &out[PX_GOODPUT], &sd);
		if (rc != 0)
			diag_at(d, rc, cx->path, line, 0, "%s: %s", trace_path, sd.msg);
	} else if (rc == 0) {
		struct metrics_summary sum;
		double rate;
		rc = replay_once(&dep, trace_path, cx->o->seed, from_s, 1.0, 0, 0, &sum, &rate, &sd);
		if (rc != 0)
			diag_at(d, rc, cx->path, line, 0, "%s: %s", trace_path, sd.msg);
		else
			figures(&sum, out);
	}
	if (built)
		deploy_release(&dep);
	free(sc);
	if (rc != 0) {
		free(key);
		return rc;
	}
	cx->memo[cx->n_memo].key = key;
	memcpy(cx->memo[cx->n_memo].v, out, sizeof cx->memo[cx->n_memo].v);
	cx->n_memo++;
	return 0;
}

/* Check row r's cells and fill the descriptive part of *row. */
static int parse_row(const struct pubexp_ctx *cx, const struct csvread *t, const int *col,
		     const int *ocol, size_t r, struct pubexp_row *row, struct diag *d)
{
	const char *path = cx->path;
	long line = t->lines[r];
	int rc = 0;
	row->line = line;
	rc = text_cell(t, r, col[C_ID], row->id, sizeof row->id, path, d);
	if (rc == 0 && !row->id[0])
		rc = diag_at(d, DIAG_EINPUT, path, line, 0, "column 'id' is empty (expected a name)");
	if (rc == 0)
		rc = text_cell(t, r, col[C_KIND], row->kind, sizeof row->kind, path, d);
	if (rc == 0) {
		bool ok = false;
		for (size_t k = 0; k < sizeof KINDS / sizeof KINDS[0]; k++)
			ok = ok || strcmp(row->kind, KINDS[k]) == 0;
		if (!ok)
			rc = diag_at(d, DIAG_EINPUT, path, line, 0,
				     "column 'kind': '%s' (expected routing, prefix_reuse, offload or "
				     "disaggregation)", row->kind);
	}
	if (rc == 0) {
		const char *m = csvread_cell(t, r, col[C_METRIC]);
		int found = -1;
		for (int k = 0; k < PX_N_METRICS; k++)
			if (strcmp(m, METRIC_NAMES[k]) == 0)
				found = k;
		if (found < 0)
			rc = diag_at(d, DIAG_EINPUT, path, line, 0,
				     "column 'metric': '%s' (expected ttft_mean_ms, ttft_p50_ms, ttft_p95_ms, "
				     "e2el_mean_ms, e2el_p95_ms, output_throughput_tok_s, total_throughput_tok_s, "
				     "prefix_cache_hit_rate or goodput_rps_per_gpu)",
				     m);
		else
			row->metric = (enum pubexp_metric)found;
	}
	if (rc == 0)
		rc = csvread_number(t, r, col[C_PUB_A], 1, &row->published_a, d);
	if (rc == 0)
		rc = csvread_number(t, r, col[C_PUB_B], 1, &row->published_b, d);
	if (rc == 0)
		rc = csvread_number(t, r, col[C_GAIN_LO], 0, &row->gain_lo, d);
	if (rc == 0)
		rc = csvread_number(t, r, col[C_GAIN_HI], 0, &row->gain_hi, d);
	if (rc == 0)
		rc = csvread_number(t, r, col[C_TOL], 0, &row->tolerance, d);
	if (rc == 0 && !(row->gain_lo > 0 && row->gain_hi >= row->gain_lo))
		rc = diag_at(d, DIAG_EINPUT, path, line, 0,
			     "gain_lo %g, gain_hi %g (expected 0 < gain_lo <= gain_hi)", row->gain_lo,
			     row->gain_hi);
	if (rc == 0 && !(row->tolerance >= 1 && row->tolerance <= 100))
		rc = diag_at(d, DIAG_EINPUT, path, line, 0,
			     "column 'tolerance': %g (expected a factor from 1 to 100)", row->tolerance);
	if (rc == 0)
		rc = text_cell(t, r, col[C_GAP], row->known_gap, sizeof row->known_gap, path, d);
	if (rc == 0)
		rc = text_cell(t, r, col[C_SKIP], row->skip, sizeof row->skip, path, d);
	if (rc == 0)
		rc = text_cell(t, r, col[C_LABEL_A], row->label_a, sizeof row->label_a, path, d);
	if (rc == 0)
		rc = text_cell(t, r, col[C_LABEL_B], row->label_b, sizeof row->label_b, path, d);
	if (rc == 0)
		rc = text_cell(t, r, col[C_SOURCE], row->source, sizeof row->source, path, d);
	if (rc == 0)
		rc = text_cell(t, r, col[C_URL], row->url, sizeof row->url, path, d);
	if (rc == 0)
		rc = text_cell(t, r, col[C_DATE], row->date, sizeof row->date, path, d);
	if (rc == 0)
		rc = text_cell(t, r, col[C_WORKLOAD], row->workload, sizeof row->workload, path, d);
	if (rc == 0 && strcmp(row->workload, "stated") != 0 && strcmp(row->workload, "inferred") != 0)
		rc = diag_at(d, DIAG_EINPUT, path, line, 0,
			     "column 'workload': '%s' (expected stated or inferred: how much of the "
			     "workload the source gives)", row->workload);
	if (rc == 0)
		rc = csvread_number(t, r, col[C_FROM], 1, &row->measure_from_s, d);
	if (rc == 0 && isnan(row->measure_from_s))
		row->measure_from_s = 0;
	if (rc == 0 && !(row->measure_from_s >= 0 && row->measure_from_s <= 1e7))
		rc = diag_at(d, DIAG_EINPUT, path, line, 0,
			     "column 'measure_from_s': %g (expected seconds from 0 to 1e7, or empty)",
			     row->measure_from_s);
	if (rc == 0 && !row->source[0])
		rc = diag_at(d, DIAG_EINPUT, path, line, 0,
			     "column 'source' is empty (expected who published the figure)");
	double *slo[O_N] = {&row->slo_ttft_ms, &row->slo_tpot_ms, &row->slo_attainment};
	for (int c = 0; rc == 0 && c < O_N; c++)
		rc = ocol[c] < 0 ? (*slo[c] = NAN, 0) : csvread_number(t, r, ocol[c], 1, slo[c], d);
	bool goodput = row->metric == PX_GOODPUT;
	for (int c = 0; rc == 0 && !goodput && c < O_N; c++)
		if (!isnan(*slo[c]))
			rc = diag_at(d, DIAG_EINPUT, path, line, 0,
				     "column '%s': %g on a %s row (expected it empty: only "
				     "goodput_rps_per_gpu takes an SLO)", OPT_COLS[c], *slo[c],
				     METRIC_NAMES[row->metric]);
	for (int c = 0; rc == 0 && goodput && c < O_N; c++)
		if (isnan(*slo[c]))
			rc = diag_at(d, DIAG_EINPUT, path, line, 0,
				     "column '%s' is empty (expected goodput_rps_per_gpu's SLO in "
				     "slo_ttft_ms, slo_tpot_ms and slo_attainment)", OPT_COLS[c]);
	if (rc == 0 && goodput && !(row->slo_ttft_ms > 0 && row->slo_ttft_ms <= 1e7))
		rc = diag_at(d, DIAG_EINPUT, path, line, 0,
			     "column 'slo_ttft_ms': %g (expected milliseconds above 0, at most 1e7)",
			     row->slo_ttft_ms);
	if (rc == 0 && goodput && !(row->slo_tpot_ms > 0 && row->slo_tpot_ms <= 1e7))
		rc = diag_at(d, DIAG_EINPUT, path, line, 0,
			     "column 'slo_tpot_ms': %g (expected milliseconds above 0, at most 1e7)",
			     row->slo_tpot_ms);
	if (rc == 0 && goodput && !(row->slo_attainment > 0 && row->slo_attainment <= 1))
		rc = diag_at(d, DIAG_EINPUT, path, line, 0,
			     "column 'slo_attainment': %g (expected the share of calls that must meet "
			     "the SLO, above 0, at most 1)", row->slo_attainment);
	if (rc == 0 && goodput && row->measure_from_s != 0)
		rc = diag_at(d, DIAG_EINPUT, path, line, 0,
			     "column 'measure_from_s': %g on a goodput_rps_per_gpu row (expected it empty: "
			     "the search replays the whole trace at each rate)", row->measure_from_s);
	for (int c = C_TRACE; rc == 0 && c <= C_VAR_B; c++) {
		const char *s = csvread_cell(t, r, col[c]);
		if (strlen(s) >= PUBEXP_CELL_MAX)
			rc = diag_at(d, DIAG_EINPUT, path, line, 0,
				     "column '%s': %zu characters (expected at most %d)", COLS[c], strlen(s),
				     PUBEXP_CELL_MAX - 1);
	}
	if (rc == 0 && !row->skip[0] && !csvread_cell(t, r, col[C_TRACE])[0])
		rc = diag_at(d, DIAG_EINPUT, path, line, 0,
			     "column 'trace' is empty (expected the workload's trace, or a reason in 'skip')");
	if (rc == 0 && !row->skip[0]) {
		/* the keys must parse before anything runs */
		char buf[PUBEXP_CELL_MAX];
		const char *items[PUBEXP_MAX_SETS];
		for (int c = C_SETS; rc == 0 && c <= C_VAR_B; c++) {
			int n = 0;
			copy_cell(buf, sizeof buf, csvread_cell(t, r, col[c]));
			rc = split_sets(buf, items, &n, path, line, COLS[c], d);
		}
	}
	row->predicted_a = row->predicted_b = row->predicted_gain = NAN;
	row->gain_ratio = NAN;
	return rc;
}

/* The verdict of a simulated row from its predicted figures. */
static void judge(struct pubexp_row *row)
{
	double a = row->predicted_a, b = row->predicted_b;
	double g = pubexp_higher_is_better(row->metric) ? a / b : b / a;
	row->predicted_gain = g;
	if (!isfinite(g) || g <= 0) {
		row->gain_ratio = NAN;
		row->gain_sign_matches = false;
		row->verdict = row->known_gap[0] ? PXV_KNOWN_GAP : PXV_MISS;
		return;
	}
	row->gain_ratio = g < row->gain_lo ? g / row->gain_lo : g > row->gain_hi ? g / row->gain_hi : 1.0;
	row->gain_sign_matches = g > 1.0;
	bool inside = g >= row->gain_lo / row->tolerance && g <= row->gain_hi * row->tolerance;
	row->verdict = inside ? PXV_WITHIN : row->known_gap[0] ? PXV_KNOWN_GAP : PXV_MISS;
}

void pubexp_release(struct pubexp_report *rep)
{
	free(rep->rows);
	memset(rep, 0, sizeof *rep);
}

int pubexp_run(struct pubexp_report *rep, const char *path, const struct pubexp_opts *o,
	       struct diag *d)
{
	memset(rep, 0, sizeof *rep);
	assert(o && o->cat);
	struct pubexp_ctx *cx = calloc(1, sizeof *cx);
	if (!cx)
		return diag_set(d, DIAG_ENOMEM, "out of memory");
	cx->o = o;
	cx->path = path;
	const char *slash = strrchr(path, '/');
	if (slash) {
		size_t n = (size_t)(slash - path);
		if (n == 0)
			n = 1; /* "/x.csv": the root */
		if (n >= sizeof cx->dir) {
			free(cx);
			return diag_set(d, DIAG_EINPUT, "%s: path too long", path);
		}
		memcpy(cx->dir, path, n);
		cx->dir[n] = '\0';
	}

	struct csvread t;
	int rc = csvread_load(&t, path, d);
	if (rc != 0) {
		free(cx);
		return rc;
	}
	int col[C_N], ocol[O_N];
	for (int c = 0; c < O_N; c++)
		ocol[c] = csvread_col(&t, OPT_COLS[c]);
	for (int c = 0; rc == 0 && c < C_N; c++) {
		col[c] = csvread_col(&t, COLS[c]);
		if (col[c] < 0)
			rc = diag_at(d, DIAG_EINPUT, path, 1, 0, "no column '%s' (expected the columns %s, ...)",
				     COLS[c], "id, kind, metric, published_a, published_b, gain_lo, gain_hi, tolerance");
	}
	if (rc == 0 && t.rows == 0)
		rc = diag_at(d, DIAG_EINPUT, path, 1, 0, "no experiments (expected one row or more)");
	if (rc == 0) {
		rep->rows = calloc(t.rows, sizeof *rep->rows);
		if (!rep->rows)
			rc = diag_set(d, DIAG_ENOMEM, "out of memory");
		else
			rep->n_rows = t.rows;
	}
	for (size_t r = 0; rc == 0 && r < t.rows; r++) {
		rc = parse_row(cx, &t, col, ocol, r, &rep->rows[r], d);
		for (size_t q = 0; rc == 0 && q < r; q++)
			if (strcmp(rep->rows[q].id, rep->rows[r].id) == 0 &&
			    rep->rows[q].metric == rep->rows[r].metric)
				rc = diag_at(d, DIAG_EINPUT, path, t.lines[r], 0,
					     "experiment '%s' metric '%s' repeats line %ld (expected one row each)",
					     rep->rows[r].id, METRIC_NAMES[rep->rows[r].metric], rep->rows[q].line);
	}
	for (size_t r = 0; rc == 0 && r < t.rows; r++) {
		struct pubexp_row *row = &rep->rows[r];
		if (row->skip[0]) {
			row->verdict = PXV_SKIPPED;
			continue;
		}
		double va[PX_N_METRICS], vb[PX_N_METRICS];
		rc = replay_variant(cx, &t, r, row, csvread_cell(&t, r, col[C_VAR_A]), va, d);
		if (rc == 0)
			rc = replay_variant(cx, &t, r, row, csvread_cell(&t, r, col[C_VAR_B]), vb, d);
		if (rc == 0) {
			row->predicted_a = va[row->metric];
			row->predicted_b = vb[row->metric];
			judge(row);
		}
	}
	if (rc == 0) {
		rep->n_replays = cx->n_memo;
		rep->seed = o->seed;
		for (size_t r = 0; r < rep->n_rows; r++)
			switch (rep->rows[r].verdict) {
			case PXV_SKIPPED: rep->n_skipped++; break;
			case PXV_WITHIN: rep->n_within++; break;
			case PXV_KNOWN_GAP: rep->n_known_gap++; break;
			case PXV_MISS: rep->n_miss++; break;
			}
		assert(rep->n_skipped + rep->n_within + rep->n_known_gap + rep->n_miss == rep->n_rows);
	}
	for (size_t i = 0; i < cx->n_memo; i++)
		free(cx->memo[i].key);
	free(cx);
	csvread_release(&t);
	if (rc != 0)
		pubexp_release(rep);
	return rc;
}

/* "%.4g" or "-" for NAN. */
static void fmt_num(char *buf, size_t cap, double v)
{
	if (isnan(v))
		snprintf(buf, cap, "-");
	else
		snprintf(buf, cap, "%.4g", v);
}

/* Signed error of a prediction against a published figure, %, or "-". */
static void fmt_err(char *buf, size_t cap, double predicted, double published)
{
	if (isnan(predicted) || isnan(published) || published == 0)
		snprintf(buf, cap, "-");
	else
		snprintf(buf, cap, "%+.0f", 100.0 * (predicted - published) / published);
}

static void fmt_band(char *buf, size_t cap, double lo, double hi)
{
	if (lo == hi)
		snprintf(buf, cap, "%.3gx", lo);
	else
		snprintf(buf, cap, "%.3g-%.3gx", lo, hi);
}

int pubexp_write_text(FILE *out, const struct pubexp_report *rep, struct diag *d)
{
	fprintf(out, "Published multi-replica experiments (%zu rows, %zu replays, seed %llu)\n",
		rep->n_rows, rep->n_replays, (unsigned long long)rep->seed);
	fprintf(out, "%-24s %-14s %-23s %-8s %9s %9s %10s %9s %9s %7s %7s %7s %6s  %s\n",
		"experiment", "kind", "metric", "workload", "pub A", "pub B", "pub gain", "pred A",
		"pred B", "err A%", "err B%", "gain", "ratio", "verdict");
	for (size_t r = 0; r < rep->n_rows; r++) {
		const struct pubexp_row *row = &rep->rows[r];
		char pa[32], pb[32], band[48], qa[32], qb[32], g[32], ratio[32], ea[32], eb[32];
		fmt_num(pa, sizeof pa, row->published_a);
		fmt_num(pb, sizeof pb, row->published_b);
		fmt_band(band, sizeof band, row->gain_lo, row->gain_hi);
		fmt_num(qa, sizeof qa, row->predicted_a);
		fmt_num(qb, sizeof qb, row->predicted_b);
		if (isnan(row->predicted_gain))
			snprintf(g, sizeof g, "-");
		else
			snprintf(g, sizeof g, "%.3gx", row->predicted_gain);
		fmt_err(ea, sizeof ea, row->predicted_a, row->published_a);
		fmt_err(eb, sizeof eb, row->predicted_b, row->published_b);
		if (isnan(row->gain_ratio))
			snprintf(ratio, sizeof ratio, "-");
		else
			snprintf(ratio, sizeof ratio, "%.2f", row->gain_ratio);
		fprintf(out, "%-24s %-14s %-23s %-8s %9s %9s %10s %9s %9s %7s %7s %7s %6s  %s\n",
			row->id, row->kind, METRIC_NAMES[row->metric], row->workload, pa, pb, band, qa,
			qb, ea, eb, g, ratio, pubexp_verdict_name(row->verdict));
	}
	fprintf(out, "\n");
	for (size_t r = 0; r < rep->n_rows; r++) {
		const struct pubexp_row *row = &rep->rows[r];
		fprintf(out, "%s %s: A = %s, B = %s; tolerance x%g; %s, %s, %s\n", row->id,
			METRIC_NAMES[row->metric], row->label_a, row->label_b, row->tolerance,
			row->source, row->date, row->url);
		if (row->metric == PX_GOODPUT)
			fprintf(out, "  goodput: the highest rate at which %g%% of the calls have TTFT <= "
				"%g ms and TPOT <= %g ms, per GPU\n", 100.0 * row->slo_attainment,
				row->slo_ttft_ms, row->slo_tpot_ms);
		if (row->skip[0])
			fprintf(out, "  not simulated: %s\n", row->skip);
		else if (row->verdict == PXV_KNOWN_GAP)
			fprintf(out, "  known gap: %s\n", row->known_gap);
		else if (row->verdict == PXV_MISS)
			fprintf(out, "  MISS: the predicted gain is outside the tolerated band and no gap is documented\n");
	}
	fprintf(out, "\n%zu within the band, %zu known gaps, %zu misses, %zu not simulated\n",
		rep->n_within, rep->n_known_gap, rep->n_miss, rep->n_skipped);
	if (ferror(out))
		return diag_set(d, DIAG_EIO, "cannot write the table");
	return 0;
}

static void json_num_or_null(FILE *out, double v)
{
	if (isnan(v))
		fputs("null", out);
	else
		jsonw_num(out, v);
}

int pubexp_write_json(FILE *out, const struct pubexp_report *rep, struct diag *d)
{
	fprintf(out, "{\"schema_version\":1,\"seed\":%llu,\"replays\":%zu,\"rows\":[",
		(unsigned long long)rep->seed, rep->n_replays);
	for (size_t r = 0; r < rep->n_rows; r++) {
		const struct pubexp_row *row = &rep->rows[r];
		fputs(r ? ",{" : "{", out);
		fputs("\"id\":", out);
		jsonw_str(out, row->id);
		fputs(",\"kind\":", out);
		jsonw_str(out, row->kind);
		fputs(",\"metric\":", out);
		jsonw_str(out, METRIC_NAMES[row->metric]);
		fputs(",\"workload\":", out);
		jsonw_str(out, row->workload);
		fputs(",\"measure_from_s\":", out);
		jsonw_num(out, row->measure_from_s);
		fputs(",\"slo_ttft_ms\":", out);
		json_num_or_null(out, row->slo_ttft_ms);
		fputs(",\"slo_tpot_ms\":", out);
		json_num_or_null(out, row->slo_tpot_ms);
		fputs(",\"slo_attainment\":", out);
		json_num_or_null(out, row->slo_attainment);
		fputs(",\"label_a\":", out);
		jsonw_str(out, row->label_a);
		fputs(",\"label_b\":", out);
		jsonw_str(out, row->label_b);
		fputs(",\"published_a\":", out);
		json_num_or_null(out, row->published_a);
		fputs(",\"published_b\":", out);
		json_num_or_null(out, row->published_b);
		fputs(",\"gain_lo\":", out);
		jsonw_num(out, row->gain_lo);
		fputs(",\"gain_hi\":", out);
		jsonw_num(out, row->gain_hi);
		fputs(",\"tolerance\":", out);
		jsonw_num(out, row->tolerance);
		fputs(",\"predicted_a\":", out);
		json_num_or_null(out, row->predicted_a);
		fputs(",\"predicted_b\":", out);
		json_num_or_null(out, row->predicted_b);
		fputs(",\"predicted_gain\":", out);
		json_num_or_null(out, row->predicted_gain);
		fputs(",\"gain_ratio\":", out);
		json_num_or_null(out, row->gain_ratio);
		fprintf(out, ",\"gain_sign_matches\":%s", row->verdict != PXV_SKIPPED && row->gain_sign_matches ? "true" : "false");
		fputs(",\"verdict\":", out);
		jsonw_str(out, pubexp_verdict_name(row->verdict));
		fputs(",\"known_gap\":", out);
		jsonw_str(out, row->known_gap);
		fputs(",\"skip\":", out);
		jsonw_str(out, row->skip);
		fputs(",\"source\":", out);
		jsonw_str(out, row->source);
		fputs(",\"url\":", out);
		jsonw_str(out, row->url);
		fputs(",\"date\":", out);
		jsonw_str(out, row->date);
		fprintf(out, ",\"line\":%ld}", row->line);
	}
	fprintf(out,
		"],\"summary\":{\"rows\":%zu,\"within\":%zu,\"known_gap\":%zu,\"miss\":%zu,\"skipped\":%zu}}\n",
		rep->n_rows, rep->n_within, rep->n_known_gap, rep->n_miss, rep->n_skipped);
	if (ferror(out))
		return diag_set(d, DIAG_EIO, "cannot write the JSON");
	return 0;
}
