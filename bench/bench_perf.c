/* SPDX-License-Identifier: Apache-2.0
 * bench_perf: figures of the performance model -- how fast perf_step_ns and
 * perf_decode_run_ns run (the simulator calls them millions of times), how
 * long `fit` takes for a machine, and the validation APEs on a measurement
 * CSV.  Prints; never run by ctest.
 *
 *   bench_perf [MEASUREMENTS.csv]
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "models/catalog.h"
#include "models/engine.h"
#include "models/fit.h"
#include "models/perf_model.h"
#include "calib/validate.h"

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int speed(const struct catalog *cat, const char *hw, const char *model, const char *wf,
		 int tp)
{
	struct perf_model pm;
	struct diag d;
	diag_init(&d);
	if (perf_model_init(&pm, cat, hw, model, wf, NULL, tp, &d)) {
		fprintf(stderr, "bench_perf: %s\n", d.msg);
		return 2;
	}
	const int n = 2000000;
	volatile double sink = 0;
	double t0 = now_s();
	for (int i = 0; i < n; i++) {
		struct perf_batch b = perf_decode_batch(1 + (i & 255), 1000 + (i & 4095));
		sink += perf_step_ns(&pm, &b);
	}
	double step = (now_s() - t0) / n * 1e9;
	t0 = now_s();
	for (int i = 0; i < n; i++) {
		struct perf_batch b = perf_decode_batch(1 + (i & 255), 1000 + (i & 4095));
		sink += perf_decode_run_ns(&pm, &b, 1 + (i & 65535));
	}
	double run = (now_s() - t0) / n * 1e9;
	(void)sink;
	printf("%-16s %-16s %-10s tp %d: perf_step_ns %6.1f ns/call, perf_decode_run_ns %6.1f ns/call\n",
	       hw, model, wf, tp, step, run);
	return 0;
}

int main(int argc, char **argv)
{
	struct catalog *cat = NULL;
	struct diag d;
	diag_init(&d);
	if (catalog_load(&cat, NULL, &d)) {
		fprintf(stderr, "bench_perf: %s\n", d.msg);
		return 2;
	}
	int rc = speed(cat, "h100-sxm", "llama-3.1-8b", "bf16", 1);
	if (!rc)
		rc = speed(cat, "h200", "deepseek-v3", "fp8", 8);
	if (!rc)
		rc = speed(cat, "h100-sxm", "gpt-oss-120b", "mxfp4", 1);
	const char *hws[] = { "dgx-spark", "rtx-pro-6000" };
	for (size_t i = 0; i < 2 && !rc; i++) {
		struct fit_opts o = { 0 };
		struct fit_result r;
		double t0 = now_s();
		rc = fit_hardware(&r, cat, hws[i], &o, &d);
		if (rc) {
			fprintf(stderr, "bench_perf: %s\n", d.msg);
			break;
		}
		printf("fit --hardware %-14s %zu models fit, %.1f ms\n", hws[i], r.n_fit,
		       (now_s() - t0) * 1e3);
		fit_result_release(&r);
	}
	if (!rc && argc > 1) {
		struct validate_opts o;
		validate_opts_init(&o, cat);
		struct validate_report rep;
		double t0 = now_s();
		rc = validate_run(&rep, argv[1], &o, &d);
		if (rc) {
			fprintf(stderr, "bench_perf: %s\n", d.msg);
		} else {
			printf("validate %s: %zu rows (%zu skipped) in %.2f s\n", argv[1], rep.n_rows,
			       rep.n_skipped, now_s() - t0);
			for (size_t i = 0; i < rep.n_metrics; i++)
				printf("  %-26s n=%-3zu median APE %5.1f%%  worst %6.1f%%\n",
				       rep.metrics[i].key, rep.metrics[i].n,
				       rep.metrics[i].median_ape_pct, rep.metrics[i].max_ape_pct);
			validate_release(&rep);
		}
	}
	catalog_free(cat);
	return rc ? 2 : 0;
}
