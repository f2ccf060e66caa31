/* SPDX-License-Identifier: Apache-2.0
 * run: one replay of a deployment, gathered into the figures a report
 * prints.
 *
 * Every command that replays a trace goes through run_replay: replay (with
 * every detail), and the replays of size, whatif and sweep (the metrics and
 * the API backends only).  It builds the chain of sinks the records flow
 * through, from the simulator outwards:
 *
 *   metrics <- cluster (detail: per replica, router, lifecycle)
 *           <- backends (the scenario has API backends)
 *           <- per-call CSV (setup.csv) <- progress (setup.progress)
 *           <- time series (detail and report.interval_s)
 *
 * replays the trace on the deployment (deploy_run), and summarises each
 * link.  run_meta then fills a report's description of the run (what was
 * deployed, what the simulator did, the step model's error bars) from the
 * deployment and the result, so no command describes a deployment itself.
 *
 * Nothing here prints; the caller writes the report (reports/output.h).
 */
#ifndef PLAN_RUN_H
#define PLAN_RUN_H

#include "models/uncert.h"
#include "replay/deploy.h"
#include "replay/replay.h"
#include "reports/backends.h"
#include "reports/charts.h"
#include "reports/cluster.h"
#include "reports/costing.h"
#include "reports/metrics.h"
#include "reports/output.h"
#include "reports/reqcsv.h"
#include "reports/timeseries.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct run_setup {
	const struct deployment *dep;
	struct replay_opts replay;    /* the trace side (deploy_run) */
	struct deploy_vary vary;
	bool own_slo;                 /* goodput against the limits below, not
					 the scenario's slo.* */
	double slo_ttft_ms, slo_tpot_ms; /* with own_slo; 0: none */
	bool detail;                  /* the cluster section (with several
					 replicas, pools or a lifecycle) and the
					 time series (report.interval_s) */
	FILE *csv;                    /* non-NULL: one row per call, as calls
					 finish (reports/reqcsv.h); borrowed */
	const char *csv_name;         /* its name in messages */
	void (*progress)(void *ctx, int64_t done_ns); /* non-NULL: called as
					 each call finishes, with its time */
	void *progress_ctx;
};

struct run_result {
	struct metrics *m;
	struct metrics_summary sum;
	struct replay_stats st;
	int32_t replicas;
	struct cluster *cl;           /* NULL: no cluster section */
	struct cluster_summary cls;
	int64_t *routed;              /* per replica, with cl */
	struct timeseries *tsr;       /* NULL: no time series */
	struct backends *bk;          /* NULL: no API backends */
	struct backends_summary bsum;
	struct reqcsv csv;
	int csv_rc;                   /* the CSV stream's status (reqcsv_status) */
	struct diag csv_d;
	/* the step model's error bars for pool 0's shape (none with a measured
	 * profile), and the regime names they point to */
	struct uncert_table bands;
	struct report_bands rb;
	char regimes[3][3 * UNCERT_ID_MAX + 16];
	char extrapolation[4 * UNCERT_ID_MAX + 48]; /* uncert_widen's why */
	/* the teams of the latencies by team (docs/priorities.md): "none",
	 * the scenario's names, then the trace's ids ("#" + 16 hex digits) */
	char team_label[METRICS_MAX_TEAMS][SCENARIO_STR_MAX];
};

/* Replay s->replay's trace on s->dep.  0 with r filled (release it in
 * every case), or the replay's error.  The CSV's own write errors are kept
 * in r->csv_rc and r->csv_d, so that the run's figures are not lost with
 * it. */
int run_replay(const struct run_setup *s, struct run_result *r, struct diag *d);

void run_release(struct run_result *r);

/* The description of the run a report opens with: the deployment (pool 0's
 * shape; the cluster section describes each pool), the engine as resolved,
 * the simulator's counters, the context policy's work, tiers, speculative
 * decoding, cluster, backends, time series and error bars.  The strings
 * and pointers stay valid while s->dep and r are. */
void run_meta(const struct run_setup *s, const struct run_result *r, struct report_meta *meta);

/* The replayed deployment priced (replay --cost): pool 0's hardware under
 * each option pr offers, with scenario sc's cost.* keys applied; a month
 * is cost.periods_per_month replays, else 261/12 working days over a
 * scaled team's days (engineers > 0), else round-the-clock traffic
 * (730 h over the span).  An option the catalogue does not price is left
 * out; hardware with no power figure is priced without purchase and
 * energy, c->note saying why.  0, or DIAG_EINPUT for out-of-range figures. */
int run_cost(struct costing *c, const struct prices *pr, const struct catalog *cat,
	     const struct scenario *sc, const struct run_result *r, int64_t engineers, int64_t days,
	     struct diag *d);

#endif
