/* SPDX-License-Identifier: Apache-2.0
 * benchres: benchmark results a team can produce on its own machine in
 * minutes, turned into measurement rows of the calibration set's schema
 * (calib/validate.h) -- the input side of `agentcap calibrate`.
 *
 * Formats, recognised by content, never by file name:
 *   - llama-bench -o json (an array of test objects), -o jsonl (one per
 *     line) and -o csv (a header naming the same fields).  Fields used:
 *     n_prompt, n_gen, n_depth, avg_ts, model_type, model_filename,
 *     gpu_info, backends, build_commit, n_gpu_layers, n_ubatch, type_k.
 *     A test with n_prompt > 0 and n_gen 0 is a prefill_tok_s row (input
 *     n_prompt); n_gen > 0 and n_prompt 0 a decode_tok_s row (output n_gen
 *     after n_depth tokens of context); both at once ("-pg") and prefill
 *     after a depth are kept out with the reason.
 *   - `vllm bench serve --save-result` JSON (one object): model_id,
 *     max_concurrency, request_rate, num_prompts, completed,
 *     total_input_tokens, total_output_tokens, input_lens and output_lens
 *     when saved (--save-detailed), output_throughput, median_ttft_ms,
 *     median_tpot_ms.
 *   - `python -m sglang.bench_serving --output-file` JSONL (one object a
 *     run): backend, dataset_name, max_concurrency, request_rate,
 *     random_input_len, random_output_len, completed, total_input_tokens,
 *     total_output_tokens, output_throughput, median_ttft_ms,
 *     median_tpot_ms (mean_tpot_ms when the median is absent).
 * A serving run becomes an output_throughput_tok_s row (high confidence:
 * the figure the calibration must reproduce), and ttft_ms and tpot_ms rows
 * (medium), at the run's concurrency with its mean prompt and output
 * lengths.  A run driven by a request rate without a concurrency limit is
 * open loop, which the fit's simulation does not drive: it is kept out
 * with the reason.
 *
 * Hardware, model, weight format and engine come from the file where it
 * says (llama-bench's gpu_info and model_type, vLLM's model_id, SGLang's
 * server_info.model_path) and from the command line otherwise; the command
 * line wins.  Each must map to a catalogue id (aliases count), or the read
 * fails naming the file, the value and the option that would settle it.
 */
#ifndef CALIB_BENCHRES_H
#define CALIB_BENCHRES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/diag.h"
#include "models/catalog.h"

#define BENCHRES_MAX_BYTES (64u << 20)
/* Results (llama-bench tests, serving runs) one file may hold.  A
 * llama-bench sweep prints a few dozen tests and a serving sweep a dozen
 * runs; every serving run is simulated at each of the fit's hundred or so
 * evaluations, so a file of more is an input error, not minutes of fitting. */
#define BENCHRES_RESULTS_MAX 256
#define BENCHRES_INPUTS_MAX 64
#define BENCHRES_SKIPPED_MAX 64

enum benchres_kind {
	BENCHRES_LLAMA_BENCH = 0, /* JSON, JSONL or CSV */
	BENCHRES_VLLM_SERVE,
	BENCHRES_SGLANG_SERVE,
};

/* "llama-bench", "vllm-bench-serve", "sglang-bench-serving" (static). */
const char *benchres_kind_name(enum benchres_kind k);

/* What the command line says; NULL / 0 where it says nothing. */
struct benchres_given {
	const char *hardware;
	const char *model;
	const char *quant;
	const char *engine;      /* engine text, e.g. "vllm 0.10.1" */
	int n_gpus;
};

struct benchres_input {
	char path[512];
	enum benchres_kind kind;
	unsigned long crc32;     /* of the file's bytes */
	size_t rows;             /* measurement rows it gave */
	int requests_per_client; /* serving runs: prompts per client (0: none) */
	int offline_requests;    /* offline serving runs: prompts (0: none) */
};

struct benchres {
	char *csv;               /* the rows as CSV text, header first */
	size_t len, cap;
	size_t n_rows;
	struct benchres_input inputs[BENCHRES_INPUTS_MAX];
	size_t n_inputs;
	char skipped[BENCHRES_SKIPPED_MAX][256]; /* "path: test 3: why" */
	size_t n_skipped;
	size_t n_skipped_total;
};

void benchres_init(struct benchres *b);
void benchres_release(struct benchres *b);

/* Read one result file and append its rows.  0, DIAG_EINPUT naming the file
 * ("path: not a benchmark result agentcap reads (expected ...)", "path:
 * gpu_info 'X' is not catalogue hardware (expected --hardware ID ...)",
 * "path:line:col: ..." for broken JSON, "path:line: more than
 * BENCHRES_RESULTS_MAX results ..."), DIAG_EIO, DIAG_ENOMEM. */
int benchres_read(struct benchres *b, const struct catalog *cat, const char *path,
		  const struct benchres_given *g, struct diag *d);

/* The same from text in memory; `name` stands for the path. */
int benchres_read_text(struct benchres *b, const struct catalog *cat, const char *name,
		       const char *text, size_t len, const struct benchres_given *g,
		       struct diag *d);

#endif
