/* SPDX-License-Identifier: Apache-2.0
 * calibrate: a team's own calibration from benchmarks of its own machine --
 * the logic of `agentcap calibrate RESULT... -o my-box.json`.
 *
 * The benchmark results (calib/benchres.h) become measurement rows; the
 * parameters of their regime (the hardware family's efficiency factors and
 * step overhead, the engine profile's overheads and scales, the engine's
 * overrides for that family) are fitted to them with the fitter of
 * `agentcap fit-params` (calib/fitparams.h), serving rows included: each
 * evaluation simulates the benchmark's closed-loop clients at its
 * concurrency and lengths.  A parameter no row moves keeps its built-in
 * value and is not written.  Rows of at least medium confidence are fitted
 * (throughputs high, latencies medium, so throughput weighs double).
 *
 * The file (models/calfile.h, docs/calibrate.md) holds the inputs' names
 * and CRC-32s, the rows, the fitted parameters and each row's residual.
 * Deterministic: the same inputs in the same order give the same bytes.
 */
#ifndef CALIB_CALIBRATE_H
#define CALIB_CALIBRATE_H

#include <stdio.h>

#include "base/diag.h"
#include "models/catalog.h"
#include "models/engine.h"
#include "calib/benchres.h"
#include "calib/fitparams.h"

/* Fit the rows of b.  cat and et are working copies: on success they hold
 * the fitted values.  0, DIAG_EINPUT (no row to fit: "path: result N: agentcap
 * cannot predict it, so nothing is left to fit: <why> (expected ...)", in
 * terms of the results, not of the rows), DIAG_ENOMEM, DIAG_EINTERNAL. */
int calibrate_run(struct fitparams_fit *fit, struct catalog *cat, struct engine_table *et,
		  const struct benchres *b, struct diag *d);

/* The calibration file.  DIAG_EIO when a write fails. */
int calibrate_write_json(FILE *out, const struct fitparams_fit *fit, const struct benchres *b,
			 const struct engine_table *et, struct diag *d);

#endif
