/* SPDX-License-Identifier: Apache-2.0
 * predict: what one hardware/model/format/engine combination does at a given
 * batch and context -- the library side of `agentcap predict`.
 *
 * Decode: one step of `batch` sequences that each hold `context` tokens;
 * its time, tokens/s per sequence (1 / step) and in aggregate (batch /
 * step), and which bound won (models/perf_model.h).  Prefill: `context`
 * prompt tokens of one sequence from an empty cache in chunks of `chunk`
 * tokens (the engine's max_num_batched_tokens; llama-bench's pp512 is one
 * chunk of 512), its time and tokens/s, and the bound of its first chunk.
 * With error bars set, the writers add each figure's band: the range the
 * measured value falls in for the band's coverage (80%) of calibration rows
 * predicted out of sample (docs/validation.md).  Writers print to a FILE
 * the caller owns.
 */
#ifndef MODELS_PREDICT_H
#define MODELS_PREDICT_H

#include <stdint.h>
#include <stdio.h>

#include "base/diag.h"
#include "models/memory.h"
#include "models/calfile.h"
#include "models/perf_model.h"
#include "models/pipeline.h"
#include "models/uncert.h"

struct predict_result {
	int32_t batch;
	int64_t context;
	int64_t chunk;
	struct perf_breakdown decode;   /* the decode step */
	double decode_step_ms;
	double decode_tok_s_per_seq;
	double decode_tok_s;            /* aggregate */
	struct perf_breakdown prefill;  /* its first chunk */
	double prefill_ms;
	double prefill_tok_s;
	/* pp > 1: the same decode batch with micro-batches in flight, one per
	 * stage (models/pipeline.h); stages == 0 otherwise */
	struct pipeline_step pipeline;
	/* Error bars (predict_set_bands); regime NULL when not set. */
	struct uncert_band decode_band;
	const char *decode_band_metric;   /* the metric whose errors it is (static) */
	struct uncert_band prefill_band;
	const struct uncert_table *bands; /* borrowed: coverage and calibration commit */
	char extrapolation[4 * UNCERT_ID_MAX + 48]; /* uncert_widen's why; "" none
					   (predict_widen_bands) */
	/* What the figures rest on (models/calfile.h), set by the caller after
	 * predict_run; NULL: not stated (nothing written). */
	const struct calfile *calibration;
	struct calfile_regime regime;
	struct calfile_near near;
};

/* batch >= 1, context >= 1, chunk >= 1; DIAG_EINPUT otherwise. */
int predict_run(struct predict_result *r, const struct perf_model *pm, int32_t batch,
		int64_t context, int64_t chunk, struct diag *d);

/* Give r the error bars of its regimes in t (models/uncert.h): the
 * hardware family and engine profile of pm; for decode the errors of
 * decode_tok_s rows at batch 1 and of output_throughput_tok_s rows (a
 * server decoding many sequences) at larger batches; for prefill those of
 * prefill_tok_s rows.  t must outlive r's writers. */
/* Widen both bands for the dimensions on which (package, memory, format,
 * engine) of pm lie outside the calibration set (models/uncert.h
 * uncert_widen), naming them in r->extrapolation.  After
 * predict_set_bands. */
void predict_widen_bands(struct predict_result *r, const struct perf_model *pm,
			 const char *package, const char *memory);

void predict_set_bands(struct predict_result *r, const struct perf_model *pm,
		       const struct uncert_table *t);

/* True when the KV cache of plan holds r's batch x (context + 1) tokens. */
bool predict_fits(const struct predict_result *r, const struct mem_plan *plan);

/* A readable report; plan (may be NULL) adds whether batch x context fits
 * in the KV cache.  DIAG_EIO when a write fails. */
int predict_write_text(FILE *out, const struct perf_model *pm, const struct predict_result *r,
		       const struct mem_plan *plan, struct diag *d);

/* The step br of model pm term by term, as models/floors.h combines them
 * (roofline with its weights, KV and compute sides; kernel launches;
 * collectives; load imbalance; fixed GPU cost; host), the binding term
 * marked with '*'.  `what` names the step ("decode step").  DIAG_EIO when
 * a write fails. */
int predict_write_explain(FILE *out, const struct perf_model *pm, const struct perf_breakdown *br,
			  const char *what, struct diag *d);

/* The same as one JSON object with a fixed key order. */
int predict_write_json(FILE *out, const struct perf_model *pm, const struct predict_result *r,
		       const struct mem_plan *plan, struct diag *d);

#endif
