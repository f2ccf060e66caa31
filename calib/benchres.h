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
 * Every figure, count and length read is checked against what a benchmark
 * can measure (the BENCHRES_* bounds below, and the model's context for
 * token counts); an impossible one is an input error naming the file, the
 * line where the format has one, the result's place ("result 2"), the field
 * as the tool wrote it, the value and the range expected -- never a column
 * of the rows it would have become.
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

/* What a result may report; a value outside is an input error naming the
 * file, the result, the field, the value and the range (docs/calibrate.md).
 *   tokens/s (llama-bench avg_ts, a serving run's output_throughput): from
 *     a token in 17 minutes, slower than any catalogue model runs on any
 *     catalogue machine, to ten million a second, tens of times what an
 *     8-GPU node prefills;
 *   latencies (median_ttft_ms, median_tpot_ms) in ms: from 0.1 us, a time
 *     per token of ten million tokens a second and shorter than one kernel
 *     launch, to 1e7 ms (2.8 hours) for one request; 0 is "not measured"
 *     (SGLang writes it when the backend did not stream), no row;
 *   clients (max_concurrency): at least one, at most 16384, several times
 *     the sequences an engine runs at once (vLLM's max_num_seqs, SGLang's
 *     max_running_requests are hundreds to a few thousand), each of which
 *     the fit simulates;
 *   requests (num_prompts, completed): at most a million, hours of the
 *     fastest serving;
 *   token counts: whole, not negative, and a request's prompt, depth and
 *     output together within the model's context (catalogue max_context);
 *   llama-bench n_ubatch: 1 to 2^24 tokens, the range validate reads. */
#define BENCHRES_TOK_S_MIN 1e-3
#define BENCHRES_TOK_S_MAX 1e7
#define BENCHRES_MS_MIN 1e-4
#define BENCHRES_MS_MAX 1e7
#define BENCHRES_CONCURRENCY_MAX 16384
#define BENCHRES_REQUESTS_MAX 1e6
#define BENCHRES_UBATCH_MAX 16777216
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
