/* SPDX-License-Identifier: Apache-2.0
 * validate: compare the performance model with published measurements --
 * the logic of `agentcap validate`.
 *
 * Input is a CSV (models/csvread.h) with the columns hardware, n_gpus,
 * model, quant, engine, concurrency, input_tokens, output_tokens, metric,
 * value, unit (and optionally source, notes, kv_dtype), where hardware,
 * model and quant are catalogue ids and metric is one of the eight names
 * below.  Each row becomes a prediction:
 *   - decode_tok_s: `concurrency` sequences (1 when empty) decode
 *     output_tokens tokens (128, llama-bench's tg128, when empty) after
 *     input_tokens of context, summed in closed form (perf_decode_run_ns);
 *     aggregate tokens/s;
 *   - prefill_tok_s: input_tokens of prompt per sequence from an empty
 *     cache in chunks of the engine's prefill chunk (llama.cpp: its 512-token
 *     ubatch, or "-ub N" when the engine column gives it);
 *   - output_throughput_tok_s, total_throughput_tok_s, ttft_ms, tpot_ms,
 *     itl_ms, e2el_ms: a closed-loop simulation (sim/) of `concurrency`
 *     clients each sending requests_per_client requests of input_tokens and
 *     output_tokens back to back, or, when concurrency is empty or 0
 *     (offline benchmarks), offline_requests requests queued at time 0; the
 *     engine profile's batch limit and chunk, the memory model's KV
 *     capacity.  Latencies are medians over requests (means when the notes
 *     say "statistic=mean"); throughputs are tokens over the span from the
 *     first arrival to the last completion.  tpot_ms/itl_ms of one sequence
 *     without token counts are the decode steps of a 128-token generation.
 * n_gpus is tensor parallelism unless the engine column says "layer split"
 * or "pipeline", or the notes "parallel=layer-split" (then pipeline
 * stages).  The engine column is matched to an
 * engine profile (models/engine.h); unmatched text uses the default engine
 * and says so in the row's note.  The KV cache is BF16 unless a kv_dtype
 * column says otherwise or the engine profile stores FP8 KV with FP8/FP4
 * checkpoints (TensorRT-LLM with NVIDIA ModelOpt checkpoints).
 *
 * Rows that cannot be predicted (a simulation metric without token counts,
 * a model that does not fit) are kept as skipped with the reason and left
 * out of the summary.  Malformed rows (unknown ids or metric, non-numbers)
 * are input errors naming path:line.
 *
 * Optional columns `provenance` (original, copy, inferred: how the figure
 * reached the table) and `confidence` (high, medium, low) describe each
 * row; an empty cell or a missing column means "not stated".  Every summary
 * group reports its median APE over all its rows and, beside it, over the
 * rows whose provenance is `original`.  With opts.min_confidence set, rows
 * whose stated confidence is below it are still predicted and listed but
 * marked excluded and left out of every summary: that is the set the
 * model's parameters are set and checked on (rows of unstated confidence
 * stay in).  A `not_modelled=...` item in the notes (run conditions the
 * model cannot express) is repeated in the row's note.
 */
#ifndef CALIB_VALIDATE_H
#define CALIB_VALIDATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "base/diag.h"
#include "models/calfile.h"
#include "models/catalog.h"
#include "models/csvread.h"
#include "models/engine.h"

enum validate_metric {
	VM_DECODE_TOK_S = 0,
	VM_PREFILL_TOK_S,
	VM_OUTPUT_THROUGHPUT,
	VM_TOTAL_THROUGHPUT,
	VM_TTFT_MS,
	VM_TPOT_MS,
	VM_ITL_MS,
	VM_E2EL_MS,
	VM_COUNT
};

enum validate_provenance { VP_UNSTATED = 0, VP_ORIGINAL, VP_COPY, VP_INFERRED };

/* Ordered: a level compares greater than the levels below it. */
enum validate_confidence { VC_UNSTATED = 0, VC_LOW, VC_MEDIUM, VC_HIGH };

/* "original", "copy", "inferred" ("" when unstated). */
const char *validate_provenance_name(enum validate_provenance p);

/* "low", "medium", "high" ("" when unstated). */
const char *validate_confidence_name(enum validate_confidence c);

/* VC_LOW, VC_MEDIUM or VC_HIGH from its name; -1 for anything else. */
int validate_confidence_parse(const char *name);

/* "decode_tok_s", "prefill_tok_s", "output_throughput_tok_s",
 * "total_throughput_tok_s", "ttft_ms", "tpot_ms", "itl_ms", "e2el_ms". */
const char *validate_metric_name(enum validate_metric m);

struct validate_opts {
	const struct catalog *cat;
	const struct engine_table *engines; /* NULL: the built-in table */
	int requests_per_client;      /* closed-loop simulations; default 8 */
	int offline_requests;         /* rows without a concurrency; default 1024 */
	enum validate_confidence min_confidence; /* VC_UNSTATED: every row */
	const bool *row_mask;         /* NULL: every row; else rows r with
					 r < row_mask_n && row_mask[r] only, the
					 others skipped ("not in this run") */
	size_t row_mask_n;
	bool no_simulation;           /* skip the rows a simulation would
					 predict (fits on step rows) */
};

void validate_opts_init(struct validate_opts *o, const struct catalog *cat);

struct validate_row {
	size_t index;                 /* row of the table */
	long line;
	enum validate_metric metric;
	char family[CAT_ID_MAX];
	char engine[ENGINE_NAME_MAX]; /* engine profile used */
	int tp, pp;
	double concurrency;           /* 0: offline */
	int64_t input_tokens, output_tokens; /* -1 when empty */
	double measured;
	double predicted;             /* NAN when skipped */
	double ape_pct;               /* |predicted - measured| / measured x 100 */
	bool skipped;
	bool simulated;
	bool excluded;                /* confidence below opts.min_confidence */
	enum validate_provenance provenance;
	enum validate_confidence confidence;
	char note[384];
};

struct validate_group {
	char key[CAT_ID_MAX];         /* metric name or family id */
	size_t n;
	double median_ape_pct;
	double max_ape_pct;
	size_t n_original;            /* rows of provenance `original` */
	double median_ape_pct_original; /* NAN when n_original is 0 */
};

struct validate_report {
	struct csvread table;         /* the input, for its columns */
	struct validate_row *rows;
	size_t n_rows;
	size_t n_skipped;
	size_t n_excluded;            /* predicted but below min_confidence */
	size_t n_simulations;         /* simulations run: one per distinct
					 serving run, however many rows it has */
	enum validate_confidence min_confidence;
	struct validate_group metrics[VM_COUNT];
	size_t n_metrics;             /* groups with at least one row */
	struct validate_group *families; /* sorted by id */
	size_t n_families;
	const struct calfile *calibration; /* what the predictions rest on, set
					      by the caller (models/calfile.h);
					      NULL: not stated */
};

/* Read `path` and predict every row.  0, DIAG_EIO, DIAG_EINPUT ("path:line:
 * unknown hardware 'x' ..."), DIAG_ENOMEM, or DIAG_EINTERNAL (a simulator
 * invariant broke).  rep is released and zeroed on failure. */
int validate_run(struct validate_report *rep, const char *path, const struct validate_opts *o,
		 struct diag *d);

/* The same from CSV text in memory; `name` stands for the path. */
int validate_run_text(struct validate_report *rep, const char *name, const char *text,
		      size_t len, const struct validate_opts *o, struct diag *d);

void validate_release(struct validate_report *rep);

/* Median of the APEs of `metric` rows in the summary (NAN when there are
 * none), and the same over the rows of provenance `original`. */
double validate_median_ape(const struct validate_report *rep, enum validate_metric metric);
double validate_median_ape_original(const struct validate_report *rep,
				    enum validate_metric metric);

/* The table of rows, then the summary per metric and per family. */
int validate_write_text(FILE *out, const struct validate_report *rep, struct diag *d);

/* {"schema_version": 1, "rows": [...], "summary": {"per_metric": {...},
 * "per_family": {...}}}: every input column of each row (strings; numbers
 * as numbers where the cell is numeric), plus predicted, measured, ape_pct,
 * engine_profile, method, excluded, note; per group n, median_ape_pct,
 * max_ape_pct, n_original, median_ape_pct_original; and the counts rows,
 * skipped, excluded with min_confidence. */
int validate_write_json(FILE *out, const struct validate_report *rep, struct diag *d);

#endif
