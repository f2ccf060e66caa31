/* SPDX-License-Identifier: Apache-2.0
 * preflight: what makes a simulated deployment meaningless or misleading,
 * found from the catalogue before a replay starts.
 *
 * A replay can always be computed, but not every computed replay describes
 * something that can run: an engine without a backend for the hardware
 * (vLLM has no Apple GPU backend), a weight format the engine does not
 * load, or a max_model_len beyond the model's trained context (vLLM refuses
 * one).  Those are input errors.  A weight format whose matmul type the
 * hardware lacks (FP8 on Ampere, FP4 on Hopper) is modelled as the engines
 * run it, weights dequantized to the fallback type, which is slower than a
 * reader may assume: a warning.  Checks that need the trace (calls longer
 * than max_model_len or the KV cache) are replay's (replay/replay.h).
 */
#ifndef MODELS_PREFLIGHT_H
#define MODELS_PREFLIGHT_H

#include <stdint.h>

#include "base/diag.h"
#include "base/warn.h"
#include "models/catalog.h"
#include "models/engine.h"
#include "models/perf_model.h"

/* Check the deployment pm describes (resolved by perf_model_init_opts with
 * table et; NULL: the built-in engine table) with max_model_len (0 = the
 * model's context).  Returns 0 with any warnings appended to w, or
 * DIAG_EINPUT with the reason in d. */
int preflight_deployment(const struct catalog *cat, const struct engine_table *et,
			 const struct perf_model *pm, int64_t max_model_len, struct warn_list *w,
			 struct diag *d);

#endif
