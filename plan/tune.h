/* SPDX-License-Identifier: Apache-2.0
 * tune: `agentcap size --tune`, the engine settings that let each hardware
 * option's cheapest deployment shrink, found by coordinate descent over a
 * short list of candidate values per engine lever.
 *
 * For each hardware option size_run has already found the cheapest shape
 * with the scenario's engine settings.  The levers are then visited in the
 * order of the field notes' "what to tune first" list (chunked prefill;
 * gpu_memory_utilization and max_num_batched_tokens; max_num_seqs and
 * preemption headroom), then the KV-cache dtype.  For a lever, every
 * candidate value other than the current one is evaluated with the other
 * levers held, by a whole size search of that option (size_run on one
 * hardware id: its shapes, gallop, bisection and early verdicts), and the
 * best candidate is taken only if it strictly beats the current
 * configuration: it meets the objectives on fewer GPUs, or on as many with
 * a lower P95 TTFT.  On one hardware option every way of paying costs
 * more with more GPUs, so fewer GPUs is lower cost.  The descent stops
 * after a pass over the levers changed nothing, or when `budget` size
 * searches have been run for the option (the scenario's own, size_run's,
 * is not counted).  A configuration is searched at most once (a memo).
 * A candidate's search is bounded by the best so far (size_setup
 * max_gpus: it replays nothing larger), since only as many GPUs or fewer
 * can win; the configuration the descent ends on is then searched once
 * more without the bound, as size itself would search it, and that search
 * is the one reported, so size or replay of its settings gives the same.
 * A candidate whose winner the engine cannot launch (replay/launch.h: a
 * KV-cache dtype it lacks), or whose command cannot carry a setting the
 * scenario's could (incomplete: llama.cpp without chunked prefill), does
 * not count as meeting the objectives.
 *
 * Each lever's effect: the configuration tuned, but for that lever at the
 * scenario's value (one more size search per changed lever, beyond the
 * budget, unbounded; none when the lever kept its value).
 *
 * Invariants: everything is deterministic (the same as size_run: any
 * number of jobs, the same answer); nothing here prints to the terminal
 * but tune_table, which writes to the stream it is given.
 */
#ifndef PLAN_TUNE_H
#define PLAN_TUNE_H

#include "plan/size.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct compare_result;

#define TUNE_DEFAULT_BUDGET 24
#define TUNE_MAX_BUDGET 200
#define TUNE_MAX_VALUES 8
#define TUNE_VALUE_MAX 24

enum tune_lever {
	TUNE_CHUNKED_PREFILL = 0,  /* engine.enable_chunked_prefill */
	TUNE_GPU_MEMORY,           /* engine.gpu_memory_utilization */
	TUNE_BATCHED_TOKENS,       /* engine.max_num_batched_tokens */
	TUNE_MAX_NUM_SEQS,         /* engine.max_num_seqs */
	TUNE_KV_DTYPE,             /* kv_cache_dtype */
	TUNE_LEVERS
};

/* The scenario key of lever l ("engine.max_num_batched_tokens"). */
const char *tune_lever_key(enum tune_lever l);

/* One value per lever, each as the text a --set takes ("8192", "true",
 * "fp8", "0.95"). */
struct tune_config {
	char v[TUNE_LEVERS][TUNE_VALUE_MAX];
};

/* What a size search of one configuration found. */
struct tune_score {
	bool found;                /* met the objectives (and launchable) */
	int32_t gpus;
	double ttft_p95_ms;        /* the winner's, median over replicates */
};

struct tune_option {
	char hardware[SCENARIO_STR_MAX];
	struct tune_config scenario;    /* the scenario's values as the engine
					   resolves them on this hardware */
	struct tune_config tuned;
	int n_values[TUNE_LEVERS];      /* candidates per lever, the scenario's
					   value among them; 1: not tuned */
	char values[TUNE_LEVERS][TUNE_MAX_VALUES][TUNE_VALUE_MAX];
	struct tune_score base, best;   /* the scenario's, the tuned */
	struct tune_score effect[TUNE_LEVERS]; /* tuned but lever l at the
					   scenario's value (== best when the
					   lever kept it) */
	int32_t searches;               /* size searches run (size_run's own not
					   counted; the confirming and the
					   effects' searches counted) */
	int32_t passes;                 /* passes over the levers */
	bool budget_spent;              /* stopped by the budget */
	int32_t replays;                /* of all those searches */
	int64_t events;
	/* monthly cost of the winner, whole team: [0] with the scenario's
	 * settings, [1] tuned; by purchase, dedicated and elastic rental; < 0
	 * where the price catalogue has no price (tune_price) */
	double usd_month[2][3];
	int error;                      /* 0, or the DIAG code that stopped it */
	char error_msg[DIAG_MSG_MAX];
};

struct tune_result {
	struct tune_option opt[SIZE_MAX_HARDWARE];
	size_t n;
	int32_t budget;
	struct size_result *tuned;      /* owned: the size result of each
					   option's tuned configuration (its
					   winner, search path and launch
					   command); tune_result_release frees */
};

/* Tune every option of r (size_run's result on s).  budget: size searches
 * per option (1..TUNE_MAX_BUDGET; 0: TUNE_DEFAULT_BUDGET).  0, or the
 * first option's error (the others are still filled: t->opt[i].error),
 * or DIAG_EINPUT for a budget out of range.  t->tuned gets one option per
 * option of r, in the same order; an option whose tuning stopped keeps the
 * scenario's result there. */
int tune_run(const struct size_setup *s, int32_t budget, const struct size_result *r,
	     struct tune_result *t, struct diag *d);

void tune_result_release(struct tune_result *t);

/* Scenario --set arguments for config c ("engine.max_num_batched_tokens=8192",
 * ...), TUNE_LEVERS of them, in lever order. */
void tune_sets(const struct tune_config *c, char sets[TUNE_LEVERS][LAUNCH_SET_MAX]);

/* Fill t->opt[i].usd_month from the priced rows of `base` (compare_run on
 * size_run's result) and `tuned` (on t->tuned); either may be NULL. */
void tune_price(struct tune_result *t, const struct compare_result *base,
		const struct compare_result *tuned);

/* The tuning table: per option the tuned configuration, GPUs and cost with
 * and without it, each lever's effect and the --set keys. */
void tune_table(FILE *fp, const struct tune_result *t);

/* "tune":{...} (docs/output-schema.md), for size_json. */
void tune_json(FILE *fp, const struct tune_result *t);

#endif
