/* SPDX-License-Identifier: Apache-2.0
 * pubexp: published multi-replica experiments (routing, prefix reuse across
 * turns, KV offload) reproduced by replays -- the logic of `agentcap
 * validate --published`.
 *
 * Input is a CSV (models/csvread.h); models/calibration/
 * published-experiments.csv is the shipped set and its README.md the
 * provenance of every figure.  One row is one published comparison of two
 * configurations, A (the one the source credits, e.g. a cache-aware router
 * or a host-memory KV tier) over B (its baseline: round robin, no offload),
 * on one metric.  Columns:
 *   id, kind (routing, prefix_reuse, offload, disaggregation), metric
 *                              (below),
 *   published_a, published_b   the source's absolute figures (may be empty),
 *   gain_lo, gain_hi           the published gain of A over B, or the range
 *                              the source gives (lo = hi for one figure);
 *                              for a latency metric the gain is B / A, for
 *                              a throughput metric A / B,
 *   tolerance                  factor >= 1: a predicted gain within
 *                              [gain_lo / tolerance, gain_hi x tolerance]
 *                              reproduces the figure,
 *   known_gap                  empty, or why the model misses the figure
 *                              (docs/validation.md says more),
 *   skip                       empty, or why the row cannot be simulated
 *                              (kept in the table, not run),
 *   trace                      the workload, an agentcap trace, relative to
 *                              the CSV's folder,
 *   sets                       scenario keys for both runs, "key=value"
 *                              items separated by ';' (over the built-in
 *                              default scenario, as `replay --set` does),
 *   variant_a, variant_b       the keys that differ, same form,
 *   workload                   stated (the source gives every parameter of
 *                              the trace) or inferred (some are ours; the
 *                              README says which),
 *   measure_from_s             empty or seconds: calls issued before this
 *                              time are the source's warm-up, replayed (they
 *                              fill the caches) but not counted,
 *   label_a, label_b, source, url, date   descriptive.
 * Optional columns (a file may leave them out; then empty everywhere):
 *   slo_ttft_ms, slo_tpot_ms,  a goodput_rps_per_gpu row's SLO, required
 *   slo_attainment             there and refused on any other row: each
 *                              call's TTFT and TPOT limits, and the share
 *                              of calls (0..1] that must meet both.
 * Metrics: ttft_mean_ms, ttft_p50_ms, ttft_p95_ms, e2el_mean_ms,
 * e2el_p95_ms (lower is better), output_throughput_tok_s,
 * total_throughput_tok_s (prompt and output tokens), prefix_cache_hit_rate
 * (higher is better), as reports/metrics.h defines them, over the calls
 * issued from measure_from_s on; goodput_rps_per_gpu (higher is better),
 * DistServe's goodput: the highest arrival rate at which slo_attainment of
 * the calls meet both limits, over the configuration's GPUs (every pool's
 * replicas x tensor x pipeline parallel size).  It is found by replaying
 * the trace with its arrival times divided by a factor from 1/16 to 256,
 * bisected in log space a fixed 12 times (to 0.2%); the rate is the
 * replay's own, calls - 1 over the first to the last arrival, so an
 * open-loop trace at any rate will do.  Such a row leaves measure_from_s
 * empty.
 *
 * Each distinct (trace, sets, variant, measure_from_s) replays once, through
 * the one set-up path every command uses (scenario_load, deploy_build,
 * deploy_run of replay/deploy.h), seeded with the
 * run's seed; rows that share a replay share its figures.  The output is
 * deterministic for a given input and seed.
 *
 * Malformed input (a missing column, an unknown metric or kind, a number
 * that is not one, a gain band upside down, a set item without '=', a
 * scenario key the scenario loader refuses, an SLO missing from a goodput
 * row, out of range, or given to another row) is DIAG_EINPUT naming
 * path:line and what was expected.
 */
#ifndef PLAN_PUBEXP_H
#define PLAN_PUBEXP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct catalog;
struct diag;

enum pubexp_metric {
	PX_TTFT_MEAN = 0,
	PX_TTFT_P50,
	PX_TTFT_P95,
	PX_E2EL_MEAN,
	PX_E2EL_P95,
	PX_OUTPUT_THROUGHPUT,
	PX_TOTAL_THROUGHPUT,
	PX_HIT_RATE,
	PX_GOODPUT,          /* goodput_rps_per_gpu: a search, not one replay */
	PX_N_METRICS
};

/* "ttft_mean_ms", ... (static). */
const char *pubexp_metric_name(enum pubexp_metric m);

/* Whether a larger value of m is better (throughput, hit rate). */
bool pubexp_higher_is_better(enum pubexp_metric m);

enum pubexp_verdict {
	PXV_SKIPPED = 0,   /* not simulated (skip column) */
	PXV_WITHIN,        /* predicted gain inside the tolerated band */
	PXV_KNOWN_GAP,     /* outside, and the row documents the gap */
	PXV_MISS,          /* outside, undocumented: the model moved or broke */
};

/* "skipped", "within", "known gap", "miss" (static). */
const char *pubexp_verdict_name(enum pubexp_verdict v);

#define PUBEXP_TEXT_MAX 512

struct pubexp_row {
	long line;
	char id[64];
	char kind[32];
	enum pubexp_metric metric;
	char label_a[96], label_b[96];
	double published_a, published_b; /* NAN when not published */
	double gain_lo, gain_hi;         /* published gain (band) */
	double tolerance;
	char known_gap[PUBEXP_TEXT_MAX];
	char skip[PUBEXP_TEXT_MAX];
	char source[PUBEXP_TEXT_MAX];
	char url[PUBEXP_TEXT_MAX];
	char date[32];
	char workload[16];               /* "stated" or "inferred" */
	double measure_from_s;           /* calls issued earlier are warm-up */
	double slo_ttft_ms, slo_tpot_ms; /* goodput rows: the SLO; else NAN */
	double slo_attainment;           /* goodput rows: share of calls that
					    must meet it; else NAN */
	double predicted_a, predicted_b; /* NAN when skipped */
	double predicted_gain;           /* NAN when skipped */
	double gain_ratio;               /* predicted / nearest edge of the
					    published band (1 inside it) */
	bool gain_sign_matches;          /* predicted gain > 1 like every
					    published gain here (all > 1) */
	enum pubexp_verdict verdict;
};

struct pubexp_opts {
	const struct catalog *cat;       /* borrowed */
	uint64_t seed;                   /* default 1 */
};

struct pubexp_report {
	struct pubexp_row *rows;
	size_t n_rows;
	size_t n_replays;                /* distinct replays run */
	size_t n_within, n_known_gap, n_miss, n_skipped;
	uint64_t seed;
};

/* Read `path`, replay every row's two configurations and fill rep.  0,
 * DIAG_EIO, DIAG_EINPUT ("path:line: ..."), DIAG_ENOMEM, or a replay's
 * error prefixed with the row's path:line.  rep is released and zeroed on
 * failure. */
int pubexp_run(struct pubexp_report *rep, const char *path, const struct pubexp_opts *o,
	       struct diag *d);

void pubexp_release(struct pubexp_report *rep);

/* The table: experiment, metric, published A/B and gain, predicted A/B
 * and gain, ratio to the band, verdict, source; then the counts. */
int pubexp_write_text(FILE *out, const struct pubexp_report *rep, struct diag *d);

/* {"schema_version": 1, "seed": N, "rows": [...], "summary": {...}}. */
int pubexp_write_json(FILE *out, const struct pubexp_report *rep, struct diag *d);

#endif
