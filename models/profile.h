/* SPDX-License-Identifier: Apache-2.0
 * profile: a measured step profile that overrides the analytic model for
 * one hardware/model pair.
 *
 * A profile is a CSV file (models/csvread.h) with the columns
 *     phase,batch,context_tokens,step_ms
 * and optionally hardware, model (catalogue names; checked against the
 * model the profile is attached to).  A `decode` row times one decode step
 * of `batch` sequences each holding `context_tokens` tokens; a `prefill`
 * row times one chunk of `batch` prompt tokens of one sequence on top of
 * `context_tokens` cached ones.  Such tables come from vLLM's
 * benchmark_latency, Vidur-style profilers or llama-bench.
 *
 * How it overrides.  For each row the analytic model is evaluated at the
 * same shape, giving the ratio measured / modelled.  Ratios are kept per
 * phase as a function of the batch size (rows at several contexts for one
 * batch size are combined by their geometric mean) and interpolated with
 * GSL (Steffen's monotone spline with three or more batch sizes, linear
 * with two) over log(batch), clamped at both ends.  A decode-only step is
 * scaled by the decode ratio at its sequence count, any other step by the
 * prefill ratio at its token count; a phase without rows uses the other's.
 * At a measured shape the model returns the measurement exactly; between
 * them it keeps the analytic model's dependence on context and batch mix.
 * The ratio is constant over a decode run, so runs stay exact and O(1).
 *
 * Evaluation only reads the profile (GSL is called without an accelerator),
 * so one profile may serve many threads.
 */
#ifndef MODELS_PROFILE_H
#define MODELS_PROFILE_H

#include <stddef.h>

#include "base/diag.h"
#include "models/perf.h"

struct perf_model;
struct perf_profile;

/* Read the profile at `path` and compute its ratios against pm (whose own
 * profile, if any, is ignored).  0, DIAG_EIO, DIAG_EINPUT ("path:line:
 * ..." for a bad row, a hardware/model column that does not match pm, a
 * non-positive time or batch) or DIAG_ENOMEM.  *out is NULL on failure. */
int perf_profile_load(struct perf_profile **out, const char *path,
		      const struct perf_model *pm, struct diag *d);

/* The same from CSV text in memory; `name` stands for the path. */
int perf_profile_parse(struct perf_profile **out, const char *name, const char *text,
		       size_t len, const struct perf_model *pm, struct diag *d);

void perf_profile_free(struct perf_profile *p); /* accepts NULL */

/* measured / modelled for a step shaped like b (1 for an empty batch). */
double perf_profile_ratio(const struct perf_profile *p, const struct perf_batch *b);

/* Distinct batch sizes with a ratio, per phase. */
size_t perf_profile_decode_points(const struct perf_profile *p);
size_t perf_profile_prefill_points(const struct perf_profile *p);

#endif
