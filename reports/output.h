/* SPDX-License-Identifier: Apache-2.0
 * output: render a run's metrics as a terminal table or as a JSON document.
 *
 * The caller fills a struct report_meta describing the run (what was
 * simulated, with which settings) and hands it with a metrics_summary.  The
 * table mirrors the layout of `vllm bench serve`; the JSON object follows
 * docs/metrics.md (schema_version 1): a fixed key order and a fixed number
 * format, so the same inputs give the same bytes.  Nothing here chooses a
 * stream: the table goes to the FILE* given, the JSON to a path ("-" for
 * standard output).
 */
#ifndef REPORTS_OUTPUT_H
#define REPORTS_OUTPUT_H

#include "base/outkind.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct backends_summary;
struct charts;
struct cluster_summary;
struct diag;
struct metrics_summary;
struct timeseries;
struct warn_list;

#define REPORT_SCHEMA_VERSION 1

/* The calibration a result rests on (models/calfile.h), as plain figures:
 * the built-in one or a team's own file, and for each regime the result
 * describes (a run, a hardware option, a fit row) the nearest measured
 * point and how far it is.  Strings are borrowed. */
#define REPORT_CALIB_POINTS_MAX 64

struct report_calib_point {
	const char *label;            /* the regime: "run", a hardware id, ... */
	double batch, context;        /* the regime's sequences per step, tokens */
	bool found;                   /* false: the calibration has no rows */
	long line;                    /* the row: line in the CSV, or row number */
	const char *hardware, *model, *engine; /* the row's */
	double row_batch, row_context;
	const char *hardware_match;   /* "same hardware", "same family", ... */
	const char *model_match;
	const char *engine_match;
	double batch_doublings, context_doublings, score;
};

struct report_calibration {
	bool own;                     /* a team's file; false: built-in */
	const char *path;
	unsigned long crc32;
	size_t rows, parameters;
	size_t n;
	struct report_calib_point points[REPORT_CALIB_POINTS_MAX];
};

/* "Calibration: ..." and one "Nearest measured point" line per point. */
void report_calibration_table(FILE *out, const struct report_calibration *c);

/* The member "calibration": {"source": "built-in"|"own", "path", "crc32",
 * "rows", "parameters", "nearest": [{"regime", "batch", "context",
 * "line", "hardware", "model", "engine", "row_batch", "row_context",
 * "hardware_match", "model_match", "engine_match", "batch_doublings",
 * "context_doublings", "score"}]} on one line, without a separator. */
void report_calibration_json(FILE *fp, const struct report_calibration *c);

/* Describes the run; strings are borrowed for the call and may be NULL
 * (written as null in JSON, "-" in the table). */
struct report_meta {
	const char *version;          /* agentcap version string */
	const char *trace_path;
	const char *trace_format;     /* e.g. "agentcap-trace", "mooncake" */
	const char *scenario_name;
	const char *scenario_path;
	const char *model_id;
	const char *hardware_id;
	const char *weight_format;    /* e.g. "bf16", "fp8", "int4-awq" */
	const char *kv_dtype;
	int32_t tp;
	int32_t ep;                   /* expert parallelism; shown only when > 1 */
	uint64_t seed;
	int64_t kv_capacity_tokens;   /* per replica */
	int32_t block_size;           /* tokens per KV block */
	int32_t max_num_seqs;
	int64_t max_num_batched_tokens;
	bool prefix_caching;
	bool chunked_prefill;
	int64_t skipped_bad_lines;
	int64_t events_processed;
	int64_t engine_steps;          /* engine steps simulated (decode runs count each step) */
	int64_t kv_evicted_blocks;     /* cached KV blocks evicted to make room */
	int64_t scaled_engineers;     /* replay --engineers N: N, else 0 */
	int64_t scaled_days;          /* days of the scaled team, else 0 */
	double slo_ttft_ms;           /* 0 = no SLO */
	double slo_tpot_ms;           /* 0 = no SLO */
	/* The engine as resolved from the scenario, the hardware and the
	 * engine version's defaults. */
	struct report_engine {
		const char *profile;          /* engine profile id */
		int32_t pp;                   /* pipeline stages */
		int64_t max_model_len;
		double gpu_memory_utilization;
		bool reserve_full_prompt;
	} engine;
	/* replay.context_policy and the calls it touched. */
	struct report_context {
		const char *policy;           /* "compact", "truncate", "reject" */
		int64_t compacted;            /* calls whose context was compacted */
		int64_t truncated;            /* calls cut to max_model_len */
		int64_t too_long;             /* calls sent over max_model_len */
	} context;
	/* Latencies by priority class and by team (docs/priorities.md): on
	 * with scheduling.policy priority, router.team_max_inflight, teams or
	 * report.by_class_and_team; off: nothing printed. */
	struct report_groups {
		bool on;
		const char *policy;           /* "fcfs" or "priority" */
		int64_t team_max_inflight;    /* 0: no cap */
		const char *team_label[64];   /* by team number (metrics_group.id) */
	} groups;
	/* kv_tiers: lower KV-cache tiers (n = 0: off, nothing printed). */
	struct report_tiers {
		int32_t n;                    /* 1: host, 2: host and disk/remote */
		double host_gb, disk_gb;      /* capacity of each tier */
		double host_gbs, disk_gbs;    /* load bandwidth per GPU */
		int32_t shared_by;            /* replicas sharing one set */
		int64_t loaded_blocks;        /* blocks loaded back into GPUs */
		double load_s;                /* step time spent loading them */
		const char *mode;             /* "write_through" or "evict" */
		int32_t chunk_tokens;         /* write_through: a stored chunk */
		bool async_store;             /* write_through: stores overlap compute */
		int64_t stored_blocks;        /* write_through: blocks stored as computed */
		int64_t stored_chunks;        /* the chunks they belong to */
		double stored_gb;             /* their bytes, over every replica's GPUs */
		double store_s;               /* host-link time of the stores */
		double stall_s;               /* step time waiting for stores (sync) */
		double load_wait_s;           /* time loads waited behind stores (async) */
	} tiers;
	struct report_retention {         /* kv_retention.mode ttl (on) */
		bool on;
		double ttl_s, max_fraction;   /* as set */
		int64_t peak_blocks;          /* most blocks one replica held retained */
		double peak_share;            /* the largest such share of its cache */
		double mean_blocks;           /* retained blocks over all replicas,
						 time-weighted over the run */
		int64_t hit_tokens;           /* prefix hits served by retained blocks */
		int64_t avoided;              /* evictions that spared an older
						 retained block */
		int64_t forced;               /* retained blocks evicted: nothing
						 else was free */
		int64_t capped;               /* released early by max_fraction */
	} retention;
	/* disaggregation.*: prefill/decode disaggregation (on false: off) */
	struct report_pd {
		bool on;
		const char *link;             /* kv_links.json id */
		const char *decider;          /* "uncached" or "always" */
		int64_t threshold;            /* uncached: non_cached_tokens */
		int64_t remote, local;        /* calls prefilled on each side */
		int64_t blocks;               /* KV blocks sent */
		double gb;                    /* their bytes */
		double wait_mean_ms;          /* exposed transfer per remote call */
		double wait_max_ms;
		double transfer_s;            /* whole transfer time, summed */
	} pd;
	/* speculative.*: speculative decoding (on false: off, nothing printed) */
	struct report_spec {
		bool on;
		const char *method;           /* "draft", "mtp", "eagle3", "ngram",
						 "suffix" */
		const char *draft;            /* the draft model, or the target (MTP) */
		int32_t k;                    /* tokens drafted per verify step */
		double acceptance[OUT_KINDS]; /* alpha by enum out_kind */
		const char *given;            /* how the acceptance was given:
						 "per_token", "draft_acceptance_rate",
						 "mean_acceptance_length",
						 "position_acceptance_rates",
						 "method_default", "default" */
		const char *given_text;       /* the same with the conversion */
		int64_t seq_steps[OUT_KINDS]; /* verify steps, one per sequence */
		int64_t tokens[OUT_KINDS];    /* tokens they yielded */
		double run_s, plain_s;        /* decode runs' time, and the same runs'
						 time without speculation */
	} spec;
	const struct cluster_summary *cluster; /* several replicas: per-replica and
						  router figures; NULL = none */
	const struct backends_summary *backends; /* API backends beside the local
						  engines (reports/backends.h);
						  NULL = none, nothing printed */
	const struct timeseries *timeseries; /* report.interval_s > 0: the samples; NULL = none */
	const struct costing *cost;   /* replay --cost (reports/costing.h); NULL = none */
	double timeseries_interval_s;
	double slo_attainment_target; /* share of calls within the SLOs for "yes" */
	/* Error bars of the step model for the run's hardware family and
	 * engine (models/uncert.h): +-% of each metric's band and the regime
	 * it came from ("family x engine x metric").  coverage 0: none shown. */
	struct report_bands {
		double coverage;              /* 0.8 */
		const char *commit;           /* calibration commit; NULL unknown */
		double throughput_pct, ttft_pct, tpot_pct;
		const char *throughput_regime, *ttft_regime, *tpot_regime;
		const char *extrapolation;    /* the dimensions on which the shape
						 lies outside the calibration set
						 ("package multi-die, engine
						 vllm"; the bands are widened for
						 them); NULL: none */
	} bands;
	const struct report_calibration *calibration; /* NULL: not stated */
	const struct warn_list *warnings; /* shown first; NULL = none */
	const char *launch_json;      /* the deployment's launch commands as a JSON
					 array (rendered by the caller from
					 replay/launch.h), written as "launch";
					 NULL: left out */
	const char *launch_error;     /* why there is none; NULL: none */
	const struct charts *charts;  /* the figures of the report's charts, kept
					 as "charts" for `agentcap report`; NULL
					 = none written */
};

/* The run's answer is "no" when any call failed, or when latency objectives
 * are set and fewer than slo_attainment_target of the calls met them. */
bool report_answer_no(const struct report_meta *meta, const struct metrics_summary *s);

/* Append what a reader must see before the figures: failed calls (how many,
 * why, what to change; latency percentiles then cover completed calls only)
 * and SLO attainment below its target.  Codes: "failed_calls",
 * "failed_reason" (one per reason), "slo_attainment". */
void report_run_warnings(const struct report_meta *meta, const struct metrics_summary *s,
			 struct warn_list *w);

/* Human-readable table; write errors are left for the caller to see with
 * ferror(out). */
void report_table(FILE *out, const struct report_meta *meta, const struct metrics_summary *s);

/* "12 min 05 s", "2 h 17 min" or "1 d 03 h 20 min" for s seconds of a
 * minute or more (rounded to the second), else "" (the table prints both
 * for durations from a minute up). */
void report_human_duration(char *buf, size_t cap, double s);

/* Write the JSON document to path atomically (temporary file + rename; "-"
 * writes to standard output).  Returns 0 or DIAG_EIO / DIAG_ENOMEM with the
 * reason in d; on failure no file and no temporary file is left at path. */
int report_json_write(const char *path, const struct report_meta *meta,
		      const struct metrics_summary *s, struct diag *d);

/* The same document written to fp (for a page drawn from it, html.h);
 * write errors are left for the caller to see with ferror(fp). */
void report_json_stream(FILE *fp, const struct report_meta *meta, const struct metrics_summary *s);

/* What a planner's result (size, compare, whatif) says about the run at its
 * top: strings borrowed, NULL written as null. */
struct report_run {
	const char *version;          /* agentcap version */
	const char *scenario_name;
	const char *scenario_path;
	const char *trace;            /* the trace, or how a team was made */
	const char *model_id;
	const char *router;           /* the router's policy (sim/router.h
					 router_policy_name); NULL: not stated */
	const char *router_settings;  /* the policy with the settings it reads
					 (router_describe); NULL: the name alone */
	uint64_t seed;                /* the first replicate's */
	const struct report_calibration *calibration; /* NULL: not stated */
};

/* The member "run": {"agentcap_version", "scenario_name", "scenario_path",
 * "trace", "model_id"[, "router": {"policy", "settings"}], "seed"[,
 * "calibration"]} on one line, without a separator around it. */
void report_run_json(FILE *fp, const struct report_run *r);

#endif
