/* SPDX-License-Identifier: Apache-2.0
 * kvcap: the memory model (models/memory.h) against the KV cache vLLM
 * reported at start-up.
 *
 * Input is models/calibration/kv-capacity.csv (KV-CAPACITY.md says what a
 * row is): one vLLM start-up a row, with the GPU, model, formats, tensor
 * parallelism, gpu_memory_utilization, the profiling step's batched tokens
 * and sequences, the sampler path it took, the block size, and what vLLM
 * said its KV cache holds -- in tokens (reported_kv_tokens), or where the
 * source gives only memory, in GiB per GPU (reported_kv_gib).
 *
 * Each row is planned with mem_plan_opts as the row's vLLM version sized it:
 * the engine profile matched from the engine text (engine_match, as
 * `validate` does) gives the memory outside PyTorch and the CUDA-graph
 * estimate (charged only from KVCAP_CUDA_GRAPH_MINOR on); the row gives the
 * profiling step (batched tokens, sequences) and the sampler path.  The prediction is in the
 * row's unit: tokens as vLLM counts them (whole blocks of block_size
 * tokens), or GiB of KV memory per GPU.  The error is (predicted - reported)
 * / reported.
 *
 * A row whose ids do not resolve, or whose weights do not fit, is an input
 * error naming path:line: every row of the set must be predictable.
 */
#ifndef CALIB_KVCAP_H
#define CALIB_KVCAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "base/diag.h"
#include "models/catalog.h"
#include "models/engine.h"

#define KVCAP_MAX_ROWS 512

/* The first vLLM release that charges the CUDA graphs' memory before sizing
 * the KV cache (v0.21.0: "CUDA graph memory profiling is enabled (default
 * since v0.21.0)"); rows of older releases are planned without it. */
#define KVCAP_CUDA_GRAPH_MINOR 21

struct kvcap_row {
	long line;                  /* in the CSV, for messages */
	char id[64];
	char hardware[64], model[64], weight_format[32], kv_dtype[32];
	char engine_text[128];      /* as written */
	char engine[64];            /* the profile it matched */
	char sampler[16];           /* "sort" or "flashinfer" */
	int tp;
	int version_minor;          /* v0.<minor>; -1 when the text names none */
	double gpu_memory_utilization;
	int64_t max_num_batched_tokens, max_num_seqs, block_size;
	bool in_tokens;             /* compared in tokens, else in GiB per GPU */
	double reported;            /* tokens, or GiB */
	double predicted;           /* same unit */
	double error;               /* (predicted - reported) / reported */
	double logged_weights_gib;  /* NAN when the source gives none */
	/* the plan, per GPU, in GiB */
	double device_gib, budget_gib, weights_gib, non_torch_gib, cuda_graph_gib,
	       activation_gib, kv_gib;
};

struct kvcap_set {
	struct kvcap_row rows[KVCAP_MAX_ROWS];
	size_t count;
};

/* Read and predict every row of the CSV at `path` with catalogue `cat` and
 * engine table `et`.  0, DIAG_EIO (unreadable file) or DIAG_EINPUT
 * ("path:line: column 'tp': ..."; an unknown id; weights that do not fit).
 * *set is filled as far as it got. */
int kvcap_run(struct kvcap_set *set, const char *path, const struct catalog *cat,
	      const struct engine_table *et, struct diag *d);

/* The same from CSV text in memory (need not be NUL-terminated); `name`
 * stands for the path in messages. */
int kvcap_run_text(struct kvcap_set *set, const char *name, const char *text, size_t len,
		   const struct catalog *cat, const struct engine_table *et, struct diag *d);

/* Median of |error| over the rows (0 for an empty set). */
double kvcap_median_abs_error(const struct kvcap_set *set);

/* Rows with |error| <= frac. */
size_t kvcap_within(const struct kvcap_set *set, double frac);

/* Distinct hardware ids among the rows. */
size_t kvcap_hardware_count(const struct kvcap_set *set);

/* The table (row, GPU x tp, model, reported, predicted, error, and the
 * plan's parts) and the summary, as text.  0 or DIAG_EIO. */
int kvcap_write_text(FILE *out, const struct kvcap_set *set, struct diag *d);

#endif
