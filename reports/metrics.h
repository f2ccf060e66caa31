/* SPDX-License-Identifier: Apache-2.0
 * metrics: aggregate the records of one simulation run (sim/results.h) into
 * the serving metrics of `vllm bench serve` plus cache, utilisation, session
 * and task figures.
 *
 * A struct metrics is a res_sink: the simulator pushes records into it and
 * metrics_summarize turns them into a struct metrics_summary.  It keeps one
 * double per completed request for each of TTFT, TPOT and E2EL (so those
 * percentiles are exact), one double per session and per task, and a
 * log-spaced histogram for inter-token latencies (reports/loghist.h: 0.1%
 * relative resolution), since there is one ITL per output token.  Sink
 * callbacks cannot fail; the first error they meet (a size limit, memory, a
 * malformed record) is kept and returned by metrics_summarize.  The exact
 * definitions of every figure are in docs/metrics.md.
 */
#ifndef REPORTS_METRICS_H
#define REPORTS_METRICS_H

#include "base/outkind.h"
#include "sim/results.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct diag;
struct metrics;

/* Length of the peak window: one hour of simulated time. */
#define METRICS_PEAK_WINDOW_S 3600.0

/* Default cap on the records kept per array (requests, sessions, tasks). */
#define METRICS_MAX_RECORDS ((size_t)1 << 28)
/* Cap on distinct rejection reasons; reasons longer than this are cut. */
#define METRICS_MAX_REASONS 256
#define METRICS_REASON_MAX_LEN 200

/* Groups metrics_set_groups splits calls into: priority classes 0..15 and
 * teams 0..63 (sim/sim.h's SIM_MAX_PRIO + 1 and SIM_MAX_TEAMS). */
#define METRICS_MAX_CLASSES 16
#define METRICS_MAX_TEAMS 64

/* Mean, median, population standard deviation (numpy.std) and percentiles
 * (numpy.percentile, linear interpolation) of one quantity. */
struct metrics_stats {
	double mean;
	double median;
	double std;
	double p90;
	double p95;
	double p99;
};

struct metrics_reason {
	const char *reason;  /* owned by the struct metrics */
	int64_t count;
};

struct metrics_summary {
	int64_t completed;              /* requests with status RES_COMPLETED */
	int64_t failed;                 /* requests with status RES_REJECTED */
	const struct metrics_reason *failed_reasons; /* sorted by reason (strcmp) */
	size_t n_failed_reasons;
	double duration_s;              /* first arrival .. last completion/rejection */
	double request_throughput;      /* completed / duration_s */
	double output_throughput;       /* output tokens / duration_s */
	double total_token_throughput;  /* (prompt + output tokens) / duration_s */
	int64_t good_requests;          /* completed within every SLO set (all, if none) */
	double request_goodput;         /* good_requests / duration_s (vLLM "goodput") */
	double slo_attainment;          /* good_requests / (completed + failed) */
	int64_t calls_outage;           /* calls that arrived while a replica was
					   down or were retried by a failure */
	int64_t good_outage;            /* of those, good ones */
	struct metrics_stats ttft_ms;
	struct metrics_stats tpot_ms;   /* requests with more than one output token */
	struct metrics_stats itl_ms;    /* every inter-token latency */
	struct metrics_stats e2el_ms;
	int64_t itl_count;              /* number of inter-token latencies */
	/* Token counters sum over completed requests only. */
	int64_t prompt_tokens;
	int64_t output_tokens;
	int64_t cached_prompt_tokens;
	int64_t computed_prefill_tokens;
	int64_t inflight_miss_tokens;
	int64_t tier_cached_tokens[RES_MAX_TIERS]; /* of cached_prompt_tokens, loaded
					   from the host [0] and disk/remote [1] tiers */
	double prefix_cache_hit_rate;   /* cached / prompt tokens, 0..1 */
	int64_t preemptions;
	int32_t replicas;               /* set, or 1 + highest replica in busy records */
	double gpu_busy_fraction;       /* busy time / (duration * replicas): the share of
					   time any step ran, however small; not headroom */
	/* Headroom (docs/metrics.md): what the steps achieved against the
	 * capacity given by metrics_set_capacity (0 where it is not set).
	 * "_busy" figures are weighted by step time, the others by run time. */
	double compute_fraction;        /* FLOPs / (duration * replicas * peak FLOP/s) */
	double bandwidth_fraction;      /* bytes / (duration * replicas * peak bytes/s) */
	double compute_fraction_busy;   /* FLOPs / (busy time * peak FLOP/s) */
	double bandwidth_fraction_busy;
	double batch_seqs_mean;         /* sequences per step, step-time weighted */
	double batch_occupancy;         /* batch_seqs_mean / max_num_seqs */
	int32_t batch_seqs_max;
	double kv_use_mean;             /* KV blocks held by running requests over the
					   cache's blocks, step-time weighted */
	double kv_use_peak;             /* the most held at any step end */
	/* The busiest hour of simulated time: the window of METRICS_PEAK_WINDOW_S
	 * (or the whole run if shorter) whose arriving calls bring the most
	 * prompt + output tokens; figures of the calls that arrived in it. */
	double peak_window_s;
	double peak_offset_s;           /* window start after the first arrival */
	int64_t peak_calls;
	int64_t peak_completed;
	int64_t peak_failed;
	int64_t peak_tokens;            /* prompt + output tokens of its calls */
	double peak_slo_attainment;
	struct metrics_stats peak_ttft_ms;
	struct metrics_stats peak_tpot_ms;
	int64_t sessions;
	double session_calls_mean;
	struct metrics_stats session_makespan_s; /* std is computed, not reported */
	int64_t tasks;
	int64_t tasks_accepted;
	int64_t tasks_accept_known;
	struct metrics_stats task_makespan_s;
	/* By output kind of the call (enum out_kind): completed calls with more
	 * than one output token, and their decode speed. */
	struct metrics_kind {
		int64_t calls;
		double tpot_ms_mean;     /* mean of their TPOTs */
		double decode_tok_s;     /* their output tokens after the first over
					    the time from first to last token */
	} by_kind[OUT_KINDS];
	/* By priority class and by team (metrics_set_groups; n_classes and
	 * n_teams 0 otherwise): the groups that had calls, in ascending
	 * number; percentiles over the group's completed calls. */
	int32_t n_classes, n_teams;
	struct metrics_group {
		int32_t id;              /* class 0..15 or team 0..63 (sim_call) */
		int64_t completed, failed;
		struct metrics_stats ttft_ms, tpot_ms, e2el_ms;
	} by_class[METRICS_MAX_CLASSES], by_team[METRICS_MAX_TEAMS];
};

/* A new, empty aggregator, or NULL when out of memory. */
struct metrics *metrics_new(void);
void metrics_free(struct metrics *m); /* accepts NULL */

/* A sink whose five callbacks feed m; valid while m is. */
struct res_sink metrics_sink(struct metrics *m);

/* Denominator of gpu_busy_fraction: replicas > 0 fixes it (replicas that
 * never ran a step still count); 0 goes back to 1 + the highest replica index
 * seen in busy records. */
void metrics_set_replicas(struct metrics *m, int32_t replicas);

/* Capacity of one replica (sim/results.h), the denominators of the
 * headroom figures. */
void metrics_set_capacity(struct metrics *m, const struct res_capacity *c);

/* Cap on the records kept per array (default METRICS_MAX_RECORDS); going past
 * it makes metrics_summarize fail with DIAG_ENOMEM.  Call before any record. */
/* Latency objectives for goodput, in ms; 0 = no objective.  A request is
 * good when it completed with TTFT <= ttft_ms and TPOT <= tpot_ms (a
 * one-token output has TPOT 0), as vllm bench serve's --goodput counts. */
void metrics_set_slo(struct metrics *m, double ttft_ms, double tpot_ms);

void metrics_set_max_records(struct metrics *m, size_t max_records);

/* Latency percentiles per priority class and per team (res_request.prio
 * and .team) in the summary; off by default.  Costs O(calls) per group
 * that has calls at metrics_summarize. */
void metrics_set_groups(struct metrics *m, bool on);

/* The invariants (one TTFT and E2EL per completed request, at most that
 * many TPOTs, reasons sorted and counted, the ITL histogram consistent with
 * the ITL count).  O(records + histogram bins); for asserts and tests. */
bool metrics_check(const struct metrics *m);

/* Fill *out from the records so far.  Returns 0, or the first error a sink
 * callback met (DIAG_ENOMEM for a limit or memory, DIAG_EINPUT for a
 * malformed record) with its message in d, or DIAG_ENOMEM if the scratch
 * space for sorting cannot be allocated.  out->failed_reasons points into m
 * and stays valid until the next record is pushed or m is freed. */
int metrics_summarize(const struct metrics *m, struct metrics_summary *out, struct diag *d);

/* The per-call values behind the latency figures, for charts. */
enum metrics_series {
	METRICS_TTFT_MS,   /* one per completed call */
	METRICS_TPOT_MS,   /* one per completed call with more than one output token */
	METRICS_E2EL_MS,   /* one per completed call */
};

/* A sorted copy of one series (free it), its length in *n; NULL with *n 0
 * when it is empty or memory runs out (then *n is SIZE_MAX). */
double *metrics_series_sorted(const struct metrics *m, enum metrics_series which, size_t *n);

/* Calls arriving in each bin_s-second bin from the first arrival, as a
 * new array (free it) of *n counts; NULL with *n 0 when there was no call,
 * or with *n SIZE_MAX when memory runs out. */
double *metrics_arrivals_per_bin(const struct metrics *m, double bin_s, size_t *n);

/* The token-weighted prefix-cache hit rate (0..1) of the completed calls
 * arriving in each bin, the bins of metrics_arrivals_per_bin; NAN for a bin
 * without any.  Same conventions for *n and the result. */
double *metrics_hit_rate_per_bin(const struct metrics *m, double bin_s, size_t *n);

/* Statistics of x[0..n-1] as numpy computes them; sorts x in place.  All
 * fields are 0 when n == 0 (as `vllm bench serve` reports an empty set). */
void metrics_stats_of(double *x, size_t n, struct metrics_stats *out);

#endif
