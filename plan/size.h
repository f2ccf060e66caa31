/* SPDX-License-Identifier: Apache-2.0
 * size: the smallest deployment of each hardware option whose replay meets
 * a set of latency objectives (`agentcap size`).
 *
 * For each hardware option the search first lists the shapes a replica can
 * take (a bare GPU: tensor parallel 1, 2, 4, 8; a multi-GPU system: its own
 * shape, one replica per system; a scenario that fixes TP or PP: that
 * shape) and drops, before any replay, those whose weights the memory
 * model says do not fit.  On each remaining shape it gallops on the replica
 * count (1, 2, 4, ... up to max_replicas) until a count meets the
 * objectives, then bisects between the last count that did not and the
 * first that did.  That relies on monotonicity, more replicas never making
 * latency worse, and costs at most 2 log2(n) + 2 candidates for an answer
 * of n replicas.  The gallop also ends when doubling the replicas did not
 * help: a call was rejected (the shape's KV cache cannot hold it), or the
 * doubled candidate, stopped early like the one before, missed the
 * objectives in nearly the same share of the calls it had finished (less
 * than 5% fewer), or, run to the end like the one before, came less than
 * 1% nearer its worst limit.  The search path then says what it saw: the
 * P95 TTFT and the prefix-cache hit rate at both counts, and the router.
 * A hit rate that fell points at the router (it spread the sessions'
 * prefixes over the replicas), a TTFT tail that grew at the replicas;
 * only when neither happened are single calls on that shape blamed, and
 * only another shape can help.  A later shape is searched only below the
 * GPUs of the best deployment found so far, since its answer is only of
 * interest if it needs fewer GPUs.
 *
 * With redundancy F (N+F sizing) every candidate is replayed with F of
 * its replicas failed from the start to the end of the run (the faults of
 * sim/lifecycle.h: the router sends them nothing), so it meets the
 * objectives only if the others carry the team alone; counts of F replicas
 * or fewer are not replayed (nothing would serve), and the gallop steps 1,
 * 2, 4, ... above F.  The cost figures still count every replica: the
 * spare is bought or rented too.
 *
 * A candidate is replayed once per replicate (a team resampled or
 * synthesised with another seed); it meets the objectives when at least
 * `confidence` of the replicates do, and a replicate does when no call
 * failed and every objective's percentile is within its limit.  Replays
 * stop early once their answer is known to be no (replay.h), and a
 * candidate's remaining replicates are skipped once too many failed for
 * the confidence to be reached.
 *
 * The hardware options are searched at the same time, and a candidate's
 * replicates replayed at the same time, on the pool of the setup (each
 * replay single-threaded); results are gathered in a fixed order, so the
 * search, its path and every figure are the same for any number of jobs.
 *
 * Everything is deterministic: same inputs and seeds, same search, same
 * figures.  Nothing here prints to the terminal; size_table and size_json
 * write to the stream they are given.
 */
#ifndef PLAN_SIZE_H
#define PLAN_SIZE_H

#include "models/cost.h"
#include "models/uncert.h"
#include "replay/deploy.h"
#include "replay/launch.h"
#include "replay/replay.h"
#include "replay/scenario.h"
#include "replay/slo.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct catalog;
struct prices;
struct report_run;
struct diag;
struct pool;
struct tune_result;

#define SIZE_MAX_REPLICATES 32
#define SIZE_MAX_HARDWARE 16
#define SIZE_MAX_PATH 64
#define SIZE_DEFAULT_MAX_REPLICAS 256
#define SIZE_MAX_REDUNDANCY 8
#define SIZE_MAX_LAUNCH 2                 /* launch commands of a winner */

struct size_setup {
	const struct catalog *cat;
	const struct scenario *base;      /* loaded (scenario_load), not resolved:
					     model, formats, engine settings and
					     router; its hardware, replicas and,
					     unless set, TP/PP are the search's */
	const char *const *hardware;      /* ids to size, n_hardware >= 1 */
	size_t n_hardware;
	const struct slo *slo;
	struct replay_opts replay;        /* format, skip_bad, context policy and
					     scale (engineers, days); trace_path
					     and seeds are set per replicate */
	const char *const *traces;        /* per replicate: the trace to replay */
	const uint64_t *seeds;            /* per replicate: scale and router seed */
	int32_t replicates;               /* 1..SIZE_MAX_REPLICATES */
	double confidence;                /* (0, 1]: share of replicates to meet */
	int32_t max_replicas;             /* gallop cap per shape; 0 = default */
	int32_t max_gpus;                 /* > 0: only deployments of at most this
					     many GPUs are replayed (a shape's
					     gallop is capped there; --tune's
					     bound: the best found so far); 0:
					     none */
	bool no_early;                    /* run every replay to the end */
	int32_t redundancy;               /* 0..SIZE_MAX_REDUNDANCY: replicas failed
					     for the whole replay (N+R sizing) */
	struct pool *pool;                /* runs the replays (base/pool.h): the
					     options' searches and each candidate's
					     replicates at once; NULL: one after
					     another.  The result does not depend
					     on it. */
	const struct report_run *run;     /* what the JSON says was run at its
					     top ("run"); NULL: left out */
	const struct slo *slo_asked;      /* --model-uncertainty: the objectives
					     as asked, before size_slo_with_bands
					     tightened them into slo; NULL: not
					     tightened */
	const double *slo_band_pct;       /* with slo_asked: each objective's
					     band, +-% (slo_asked->n of them) */
	const struct uncert_table *bands; /* the step model's error bars: say
					     which options lie outside the
					     calibration set (NULL: not said) */
	const struct prices *prices;      /* the API backends' price rows (NULL:
					     the scenario's, or the built-in) */
	const struct tune_result *tune;   /* --tune: its result (plan/tune.h),
					     which size_json writes as "tune"
					     through tune_json; NULL: left out */
	void (*write_tune)(FILE *fp, const struct tune_result *t); /* set with
					     tune: the writer above, handed
					     down so that size does not call
					     up into the tuner */
	bool local_only;                  /* size the self-hosted deployment
					     without the scenario's API backends
					     (compare's rows of the box alone) */
};

/* One replicate's figures (of the calls finished so far when it stopped
 * early). */
struct size_fig {
	bool met;
	enum replay_verdict verdict;
	int64_t calls, failed;
	double obj_ms[SLO_MAX_OBJECTIVES];  /* each objective's percentile */
	double goodput;                     /* req/s within the objectives' limits */
	double busy;                        /* GPU busy fraction, 0..1 */
	double hit;                         /* prefix-cache hit rate, 0..1 */
	double ttft_p95_ms, tpot_p50_ms;
	double duration_s;                  /* simulated, first arrival to last */
	double output_tokens;               /* tokens generated */
	int64_t prompt_tokens;              /* of completed calls, cached included */
	int64_t cached_tokens;              /* of those, prefix-cache hits */
	int64_t tasks, tasks_accept_known, tasks_accepted;
	int64_t days;                       /* days of a resampled team; 0: not scaled */
	double sim_s;                       /* simulated time the replay reached */
	double miss_share;                  /* stopped early: replay_stats.verdict_share */
	int64_t events;                     /* simulator events dispatched */
	/* with API backends (replay.hybrid): what each served, [k] for backend
	 * k; the usage below counts every call, wherever it went */
	int64_t api_calls[BACKEND_MAX];
	int64_t api_prompt_tokens[BACKEND_MAX];
	int64_t api_cached_tokens[BACKEND_MAX];
	int64_t api_cache_write_tokens[BACKEND_MAX];
	int64_t api_output_tokens[BACKEND_MAX];
	struct cost_api_tokens api_class[BACKEND_MAX][COST_API_CLASSES]; /* the
					       same calls by their API's price
					       class (models/cost.h) */
	bool api_clock_assumed[BACKEND_MAX];
	int64_t api_tasks;                  /* tasks with a call on any API backend */
	double api_share;                   /* of the calls, those an API backend served */
		struct cost_usage usage;            /* the replay as models/cost.h prices it
					       (reports/costing.h costing_usage):
					       periods and engineers unset */
};

/* One candidate deployment and what its replicates said. */
struct size_eval {
	int32_t tp, pp, replicas;
	int32_t prefill, decode;          /* disaggregated: the replicas of each
					     pool (replicas is their sum); 0, 0
					     otherwise */
	int32_t gpus;                     /* replicas x tp x pp */
	int32_t gpus_per_replica;
	int64_t kv_cache_tokens;          /* per replica */
	int32_t ran, met;                 /* replicates replayed, and met */
	bool meets;
	char why[256];                    /* the first failing replicate's reason */
	struct size_fig fig[SIZE_MAX_REPLICATES];
};

struct size_option {
	char hardware[SCENARIO_STR_MAX];
	char engine_profile[SCENARIO_STR_MAX];
	char pruned[1536];                /* shapes the memory model ruled out
					     (base/clause.h: whole clauses) */
	char stalled[1536];                /* shapes where doubling the replicas
					     did not help (no gallop further):
					     P95 TTFT and hit rate at both counts,
					     under which router, and what that
					     points to (whole clauses) */
	bool found;
	struct size_eval best;
	bool have_closest;
	struct size_eval closest;         /* the largest candidate that missed */
	struct size_eval *path;           /* every candidate, in search order */
	int n_path;
	int32_t replays;                  /* replays run, replicates counted */
	int64_t events;                   /* simulator events of all of them */
	int error;                        /* 0, or the DIAG code that stopped this
					     option's search (the others go on) */
	char error_msg[DIAG_MSG_MAX];
	struct launch_cmd *launch;        /* found: the winner's launch commands,
					     n_launch of them, one per pool (the
					     prefill pool's then the decode
					     pool's when disaggregated)
					     (replay/launch.h; room for
					     SIZE_MAX_LAUNCH, owned, freed by
					     size_result_release), NULL when the
					     engine cannot take the scenario's
					     settings (launch_error says why) */
	int32_t n_launch;
	char launch_error[DIAG_MSG_MAX];
	char extrapolation[UNCERT_WHY_MAX]; /* the dimensions (package, memory,
					     format, engine) on which its shape
					     lies outside the calibration set
					     (uncert_widen); "" none or not said */
	bool extrapolation_set;
};

struct size_result {
	struct size_option opt[SIZE_MAX_HARDWARE];
	size_t n;
	int64_t total_calls[SIZE_MAX_REPLICATES]; /* calls each replicate issues */
};

/* Check the hardware ids (an unknown one is DIAG_EINPUT naming it and the
 * catalogue's ids), then search each option.  0 (whether or not anything
 * met the objectives: see size_found), or the first option's error; an
 * option's error stops its own search only (r->opt[i].error): r->n
 * options are filled, so the others can still be printed. */
int size_run(const struct size_setup *s, struct size_result *r, struct diag *d);

/* Replay one candidate, `replicas` replicas of shape (tp, pp) (0, 0: the
 * scenario's) of hardware hw, on every replicate, as the search does (with
 * s->no_early, to the end), for checks and tests; a disaggregated scenario
 * puts `prefill` of them (1..replicas-1) in its prefill pool and the others
 * in its decode pool (prefill is 0 otherwise).  r holds the calls per
 * replicate (size_run's, or replay_count's).  0, 1 when the memory model
 * rules the shape out, or an error. */
int size_evaluate(const struct size_setup *s, const struct size_result *r, const char *hw,
		  int32_t tp, int32_t pp, int32_t replicas, int32_t prefill, struct size_eval *e,
		  struct diag *d);

/* Options that found a deployment. */
size_t size_found(const struct size_result *r);

/* The option whose closest miss came nearest the objectives (the smallest
 * worst ratio of percentile to limit over its replicates), or -1. */
int size_closest(const struct size_setup *s, const struct size_result *r);

void size_result_release(struct size_result *r);

/* "2 x TP4", "1 x TP8/PP2", or disaggregated "1P+3D x TP1" (1 prefill and
 * 3 decode replicas) into buf. */
void size_eval_label(const struct size_eval *e, char *buf, size_t size);

/* The worst ratio of percentile to limit over the objectives, median over
 * the replicates that ran (an early stop's partial figures included). */
double size_eval_worst_ratio(const struct slo *slo, const struct size_eval *e);

/* The median over the replicates that ran of one figure, picked by offset
 * into struct size_fig (offsetof). */
double size_eval_median(const struct size_eval *e, size_t field_offset);

/* GSL quantile q (0..1) over the replicates that ran of the same figure. */
double size_eval_quantile(const struct size_eval *e, size_t field_offset, double q);

/* The winners' table and the search path. */
void size_table(FILE *fp, const struct size_setup *s, const struct size_result *r);

/* The JSON document (docs/size.md); 0 or DIAG_EIO. */
int size_json(FILE *fp, const struct size_setup *s, const struct size_result *r);

/* --model-uncertainty: the objectives of `asked` tightened by the step
 * model's error bars (models/uncert.h), so that a deployment is sized to
 * meet them even when the model is as optimistic as its 80% band allows.
 * Each objective's limit is divided by (1 + pct / 100), pct the band of its
 * metric (ttft_ms, tpot_ms, e2el_ms) for the hardware family and engine
 * profile each hardware option of s resolves to, the widest over the
 * options.  band_pct[i] gets objective i's pct.  0, or an error resolving
 * an option (unknown hardware, DIAG_EINPUT). */
struct uncert_table;
int size_slo_with_bands(struct slo *out, double band_pct[SLO_MAX_OBJECTIVES],
			const struct size_setup *s, const struct slo *asked,
			const struct uncert_table *t, struct diag *d);

#endif
