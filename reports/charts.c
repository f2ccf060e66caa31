/* SPDX-License-Identifier: Apache-2.0
 * charts: chart figures of a run (see charts.h). */
#include "reports/charts.h"

#include "base/diag.h"
#include "reports/metrics.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

const char *charts_cdf_key(enum charts_cdf_kind k)
{
	static const char *const KEYS[CHARTS_N_CDF] = {"ttft", "tpot", "e2el"};
	return KEYS[k];
}

/* The CDF of sorted x[0..n-1] as at most CHARTS_CDF_POINTS points, evenly
 * spaced in rank, the last one the maximum. */
static void cdf_points(const double *x, size_t n, struct charts_cdf *out)
{
	size_t k = n < CHARTS_CDF_POINTS ? n : CHARTS_CDF_POINTS;
	for (size_t i = 0; i < k; i++) {
		size_t idx = k == 1 ? n - 1 : (size_t)llround((double)i * (double)(n - 1) / (double)(k - 1));
		out->ms[i] = x[idx];
		out->pct[i] = 100.0 * (double)(idx + 1) / (double)n;
	}
	out->n = k;
}

int charts_init(struct charts *c, const struct metrics *m, double duration_s, struct diag *d)
{
	static const enum metrics_series SERIES[CHARTS_N_CDF] = {METRICS_TTFT_MS, METRICS_TPOT_MS,
								  METRICS_E2EL_MS};
	memset(c, 0, sizeof(*c));
	for (int k = 0; k < CHARTS_N_CDF; k++) {
		size_t n;
		double *x = metrics_series_sorted(m, SERIES[k], &n);
		if (n == SIZE_MAX)
			return diag_set(d, DIAG_ENOMEM, "out of memory for the report's charts");
		cdf_points(x, n, &c->cdf[k]);
		free(x);
	}
	/* whole minutes per bin, at most CHARTS_MAX_BINS bins */
	c->arrivals_bin_s = 60.0 * fmax(1.0, ceil(duration_s / 60.0 / CHARTS_MAX_BINS));
	c->arrivals = metrics_arrivals_per_bin(m, c->arrivals_bin_s, &c->n_arrivals);
	size_t n_hit = 0;
	if (c->n_arrivals != SIZE_MAX)
		c->hit_rate = metrics_hit_rate_per_bin(m, c->arrivals_bin_s, &n_hit);
	if (c->n_arrivals == SIZE_MAX || n_hit != c->n_arrivals) {
		c->n_arrivals = 0;
		charts_release(c);
		return diag_set(d, DIAG_ENOMEM, "out of memory for the report's charts");
	}
	return 0;
}

void charts_release(struct charts *c)
{
	free(c->arrivals);
	free(c->hit_rate);
	c->arrivals = NULL;
	c->hit_rate = NULL;
	c->n_arrivals = 0;
}

/* The shortest of %.15g..%.17g that reads back to v; null when not finite. */
static void num(FILE *fp, double v)
{
	if (!isfinite(v)) {
		fputs("null", fp);
		return;
	}
	char buf[40];
	for (int prec = 15; prec <= 17; prec++) {
		snprintf(buf, sizeof(buf), "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	fputs(buf, fp);
}

static void array(FILE *fp, const double *x, size_t n)
{
	fputc('[', fp);
	for (size_t i = 0; i < n; i++) {
		if (i)
			fputc(',', fp);
		num(fp, x[i]);
	}
	fputc(']', fp);
}

void charts_json(FILE *fp, const struct charts *c)
{
	fprintf(fp, "{\"cdf_points\": %d", CHARTS_CDF_POINTS);
	for (int k = 0; k < CHARTS_N_CDF; k++) {
		fprintf(fp, ", \"%s_cdf\": {\"ms\": ", charts_cdf_key((enum charts_cdf_kind)k));
		array(fp, c->cdf[k].ms, c->cdf[k].n);
		fputs(", \"pct\": ", fp);
		array(fp, c->cdf[k].pct, c->cdf[k].n);
		fputc('}', fp);
	}
	fputs(", \"arrivals_bin_s\": ", fp);
	num(fp, c->arrivals_bin_s);
	fputs(", \"arrivals\": ", fp);
	array(fp, c->arrivals, c->n_arrivals);
	fputs(", \"hit_rate\": ", fp);
	array(fp, c->hit_rate, c->n_arrivals);
	fputc('}', fp);
}
