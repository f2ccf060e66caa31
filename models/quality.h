/* SPDX-License-Identifier: Apache-2.0
 * quality: published coding-agent benchmark scores per model
 * (models/catalog/quality.json, with QUALITY.md), and the relative quality
 * of one model against another that the cost model turns into acceptance.
 *
 * A trace records the tasks one agent, on one model (the traced model),
 * got accepted.  Replayed on another model, the share of those tasks that
 * would be accepted is not known; the published scores give a prior:
 *
 *   factor = min(1, s_model / s_traced)
 *
 * where s_model and s_traced are the two models' scores on the same
 * benchmark run with the same scaffold (harness_id; a row whose scaffold
 * is unstated never matches).  Pairs are sought benchmark by benchmark in
 * the order of QUALITY_BENCHMARKS (the newer and harder first); within one
 * benchmark, the newest row of each model with that scaffold.  A model
 * better than the traced one is not credited above the trace (the cap at
 * 1: the trace is what was observed).  No pair: not found, and the caller
 * says that quality is assumed equal to the traced model's.
 *
 * Read-only once loaded; strings are owned by the table.
 */
#ifndef MODELS_QUALITY_H
#define MODELS_QUALITY_H

#include "base/diag.h"

#include <stdbool.h>
#include <stddef.h>

/* Benchmarks in the order a pair is sought. */
#define QUALITY_BENCHMARKS                                                                         \
	{"swe-bench-pro", "terminal-bench-2.1", "terminal-bench-2.0", "swe-bench-verified",      \
	 "terminal-bench-1.0"}

struct quality_row {
	char *model, *benchmark, *harness, *harness_id, *date, *source;
	double score;              /* % resolved or passed, (0, 100] */
};

struct quality {
	struct quality_row *rows;
	size_t n;
};

/* The table from text (name for messages) or, with text NULL, the copy
 * built into the library.  0, DIAG_EINPUT (not JSON, a missing or bad key:
 * "NAME: scores[i]: key: expected ..."), or DIAG_ENOMEM; *out NULL on
 * failure. */
int quality_load(struct quality **out, const char *name, const char *text, struct diag *d);

void quality_free(struct quality *q); /* accepts NULL */

/* Whether the table has any row for model. */
bool quality_has(const struct quality *q, const char *model);

/* The relative quality of model against traced (see the file comment). */
struct quality_rel {
	bool found;                /* a pair was found, or model == traced */
	double ratio;              /* s_model / s_traced (1 when model == traced) */
	double factor;             /* min(1, ratio) */
	const struct quality_row *model_row, *traced_row; /* NULL when model == traced */
	char basis[512];           /* found: the benchmark, scaffold, both scores, dates
				      and sources; not found: why */
};

void quality_relative(const struct quality *q, const char *model, const char *traced,
		      struct quality_rel *out);

#endif
