/* SPDX-License-Identifier: Apache-2.0
 * fields: the one table of the replay report's figures.
 *
 * Every scalar a replay report gives (what was run, and what it measured)
 * is one row here: its JSON key, its label in the terminal table, its unit,
 * its C type and how the table shows it (a share as a percentage, a
 * duration with its d/h/min beside it, a flag as on/off), and where its
 * value lives (struct report_meta or struct metrics_summary).  The table
 * and the JSON writers of reports/output.c both take label, key, format and
 * value from here; they only place the rows (vllm bench serve's order for
 * the table, the documented key order for the JSON) and say when a row is
 * shown.  The HTML page of a replay lists the figures from this table, and
 * tests hold docs/metrics.md and the JSON to it.
 *
 * Latency statistics (mean, median, std, p90, p95, p99 of one metric) are a
 * second, smaller table: one row per metric, expanded into its keys
 * (`<stat>_<name>_ms`, or `<name>_makespan_s_<stat>` for spans).
 */
#ifndef REPORTS_FIELDS_H
#define REPORTS_FIELDS_H

#include "reports/metrics.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct report_meta;

enum report_field_id {
	/* the run (JSON "run") */
	RF_VERSION, RF_TRACE_PATH, RF_TRACE_FORMAT, RF_SCENARIO_NAME, RF_SCENARIO_PATH, RF_MODEL,
	RF_HARDWARE, RF_WEIGHT_FORMAT, RF_KV_DTYPE, RF_ENGINE_PROFILE, RF_TP, RF_PP, RF_EP,
	RF_GPU_MEMORY_UTILIZATION, RF_MAX_MODEL_LEN, RF_RESERVE_FULL_PROMPT, RF_CONTEXT_POLICY,
	RF_SEED, RF_KV_CAPACITY, RF_BLOCK_SIZE, RF_MAX_NUM_SEQS, RF_MAX_NUM_BATCHED_TOKENS,
	RF_PREFIX_CACHING, RF_CHUNKED_PREFILL, RF_SKIPPED_LINES, RF_EVENTS, RF_ENGINE_STEPS,
	RF_SCALED_ENGINEERS, RF_SCALED_DAYS, RF_SLO_TTFT, RF_SLO_TPOT, RF_SLO_TARGET,
	/* requests and throughput */
	RF_COMPLETED, RF_FAILED, RF_DURATION, RF_REQUEST_THROUGHPUT, RF_OUTPUT_THROUGHPUT,
	RF_TOTAL_THROUGHPUT, RF_GOOD_REQUESTS, RF_GOODPUT, RF_SLO_ATTAINMENT,
	/* tokens and the prefix cache */
	RF_PROMPT_TOKENS, RF_OUTPUT_TOKENS, RF_CACHED_TOKENS, RF_COMPUTED_PREFILL, RF_INFLIGHT_MISS,
	RF_CACHED_GPU, RF_CACHED_HOST, RF_CACHED_DISK, RF_TIER_LOADED, RF_TIER_LOAD_S,
	RF_TIER_HOST_GB, RF_TIER_HOST_GBS, RF_TIER_DISK_GB, RF_TIER_DISK_GBS, RF_TIER_SHARED_BY,
	RF_TIER_MODE, RF_TIER_CHUNK_TOKENS, RF_TIER_ASYNC_STORE, RF_TIER_STORED_BLOCKS,
	RF_TIER_STORED_CHUNKS, RF_TIER_STORED_GB, RF_TIER_STORE_S, RF_TIER_STALL_S,
	RF_TIER_LOAD_WAIT_S,
	RF_RETAIN_TTL, RF_RETAIN_MAX_FRACTION, RF_RETAIN_PEAK_BLOCKS, RF_RETAIN_PEAK_SHARE,
	RF_RETAIN_MEAN_BLOCKS, RF_RETAIN_HIT_TOKENS, RF_RETAIN_AVOIDED, RF_RETAIN_FORCED,
	RF_RETAIN_CAPPED,
	RF_PD_LINK, RF_PD_DECIDER, RF_PD_THRESHOLD, RF_PD_REMOTE, RF_PD_LOCAL, RF_PD_BLOCKS,
	RF_PD_GB, RF_PD_WAIT_MEAN_MS, RF_PD_WAIT_MAX_MS, RF_PD_WIRE_S,
	RF_HIT_RATE, RF_PREEMPTIONS, RF_EVICTED,
	/* the context limit */
	RF_COMPACTED, RF_TRUNCATED, RF_TOO_LONG,
	/* utilisation and headroom */
	RF_REPLICAS, RF_BUSY, RF_COMPUTE, RF_COMPUTE_BUSY, RF_BANDWIDTH, RF_BANDWIDTH_BUSY,
	RF_BATCH_MEAN, RF_BATCH_OCCUPANCY, RF_BATCH_MAX, RF_KV_USE_MEAN, RF_KV_USE_PEAK,
	/* the busiest hour */
	RF_PEAK_WINDOW, RF_PEAK_OFFSET, RF_PEAK_CALLS, RF_PEAK_COMPLETED, RF_PEAK_FAILED,
	RF_PEAK_TOKENS, RF_PEAK_SLO,
	/* sessions and tasks */
	RF_SESSIONS, RF_SESSION_CALLS, RF_TASKS, RF_TASKS_ACCEPTED, RF_TASKS_KNOWN,
	RF_N_FIELDS
};

enum report_type { RT_I32, RT_I64, RT_U64, RT_DBL, RT_BOOL, RT_STR };

/* How the terminal table shows a value (the JSON writes it as it is). */
enum report_show {
	RS_PLAIN,     /* integers as they are, numbers with two decimals */
	RS_PERCENT,   /* a share 0..1 shown as 0..100 */
	RS_DURATION,  /* a time in the unit, and from a minute up in d/h/min */
	RS_ONOFF,     /* a flag as "on" / "off" */
	RS_ADMISSION, /* reserve_full_prompt as "whole prompt" / "first chunk" */
	RS_NULL_ZERO, /* a limit: JSON null when it is 0 (none) */
};

struct report_field {
	const char *key;      /* JSON key */
	const char *label;    /* table label with its colon; NULL: JSON only */
	const char *unit;     /* what the JSON value counts ("" for names) */
	enum report_type type;
	enum report_show show;
	bool meta;            /* in struct report_meta, else metrics_summary */
	size_t off;           /* offset of the value there; see also get */
	double (*get)(const struct report_meta *m, const struct metrics_summary *s);
	                      /* non-NULL: a figure computed from others */
};

/* One statistic table row: a metric's mean, median, ... */
enum report_stats_id {
	RST_TTFT, RST_TPOT, RST_ITL, RST_E2EL, RST_PEAK_TTFT, RST_PEAK_TPOT, RST_SESSION, RST_TASK,
	RST_N
};

struct report_stats_field {
	const char *name;     /* "ttft": keys mean_ttft_ms, ... */
	const char *title;    /* the table's section rule; NULL: none */
	const char *short_name; /* "TTFT": labels "Mean TTFT (ms):", ... */
	const char *unit;     /* "ms" or "s" */
	bool span;            /* keys <name>_makespan_s_<stat>, no std */
	size_t off;           /* offset of its struct metrics_stats in the summary */
};

/* Row id of the field table (valid for 0 <= id < RF_N_FIELDS). */
const struct report_field *report_field(enum report_field_id id);
const struct report_stats_field *report_stats_field(enum report_stats_id id);

/* The row whose JSON key is key, or NULL. */
const struct report_field *report_field_find(const char *key);

/* Its value as a number (integers and flags converted), a string (RT_STR;
 * NULL when unknown) or a flag. */
double report_field_num(const struct report_field *f, const struct report_meta *m,
			const struct metrics_summary *s);
int64_t report_field_int(const struct report_field *f, const struct report_meta *m,
			 const struct metrics_summary *s);
uint64_t report_field_uint(const struct report_field *f, const struct report_meta *m,
			   const struct metrics_summary *s);
const char *report_field_str(const struct report_field *f, const struct report_meta *m);

/* The statistics of row st in s. */
const struct metrics_stats *report_stats_of(const struct report_stats_field *st,
					    const struct metrics_summary *s);

#endif
