/* SPDX-License-Identifier: Apache-2.0
 * calfile: the calibration a prediction rests on -- the built-in one (the
 * catalogue's family factors and the engine profiles as shipped, set on the
 * measurements of models/calibration/measurements.csv), or a team's own
 * file written by `agentcap calibrate` from benchmarks of its own machine.
 *
 * A calibration file is JSON: {"format": "agentcap-calibration",
 * "schema_version": 1, "inputs": [{"path", "kind", "crc32"}], "parameters":
 * [{"target": "family"|"engine"|"override", "id", "family_prefix"
 * (override only), "field", "shipped", "fitted"}], "rows": [...measurement
 * rows, the columns of measurements.csv...], "residuals": [...], ...}
 * (docs/calibrate.md).  Loading it keeps the parameters and the rows;
 * calfile_apply writes the fitted values over the family factors of a
 * catalogue and the parameters of an engine table, as overrides: a field
 * the file does not name keeps its built-in value.
 *
 * Distance to the measured points.  A prediction for a regime (hardware,
 * model, engine, batch of `batch` sequences at `context` tokens) is as good
 * as the nearest measurement behind the parameters.  For every row of the
 * calibration:
 *   hardware: 0 the same id, 1 the same family, 2 another family;
 *   model:    0 the same id, 1 the same kind (dense or mixture of experts)
 *             with active parameters within a factor of 2, 2 otherwise;
 *   engine:   0 the same profile, 1 another;
 *   batch:    |log2(batch / concurrency)| (a row without concurrency ran
 *             offline: its batch is the engine's limit, taken as 256);
 *   context:  |log2(context / row context)|, a row's context being its
 *             input tokens plus half its output tokens (the mean context
 *             a decode step sees), at least 1.
 * The score is 100 hardware + 10 model + 5 engine + batch + context
 * doublings, and the nearest row is the one of least score (the first in
 * file order on a tie): same machine first, then same model, then engine,
 * then the fewest doublings of batch and context away.
 *
 * Invariants: a loaded calfile owns its arrays (calfile_free); the built-in
 * one has no parameters (the shipped values are the catalogue's) and the
 * rows of the embedded measurements.csv.
 */
#ifndef MODELS_CALFILE_H
#define MODELS_CALFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "base/diag.h"
#include "models/catalog.h"
#include "models/engine.h"

#define CALFILE_MAX_BYTES (8u << 20)
#define CALFILE_PARAMS_MAX 128
#define CALFILE_ROWS_MAX 4096
#define CALFILE_FORMAT "agentcap-calibration"
#define CALFILE_PATH_MAX 512
/* Batch assumed for a measurement run offline (no concurrency). */
#define CALFILE_OFFLINE_BATCH 256

enum calfile_target { CALFILE_FAMILY = 0, CALFILE_ENGINE, CALFILE_OVERRIDE };

struct calfile_param {
	enum calfile_target target;
	char id[CAT_ID_MAX];
	char family_prefix[ENGINE_NAME_MAX];
	char field[48];
	double value;              /* fitted */
};

struct calfile_row {
	long line;                 /* CSV line, or index + 1 in a file's rows */
	char hardware[CAT_ID_MAX];
	char model[CAT_ID_MAX];
	char engine[ENGINE_NAME_MAX];
	int n_gpus;
	double concurrency;        /* 0: offline */
	int64_t input_tokens, output_tokens; /* -1: not stated */
	char metric[32];
	double value;
};

struct calfile {
	bool own;                  /* a team's file; false: built-in */
	char path[CALFILE_PATH_MAX]; /* own: as given; built-in: the CSV's */
	unsigned long crc32;       /* of the file's bytes (built-in: of the CSV) */
	struct calfile_param *params;
	size_t n_params;
	struct calfile_row *rows;
	size_t n_rows;
	char *csv;                 /* own: the rows as the CSV the fit read
				      (measurements_csv); NULL when absent */
};

/* Read a calibration file.  0, or DIAG_EINPUT naming the file: unreadable,
 * not JSON ("path:line:col: ..."), foreign ("path: not an agentcap
 * calibration file (expected \"format\": \"agentcap-calibration\", written
 * by agentcap calibrate)"), or a bad key ("path: parameters[2].field: ...");
 * DIAG_ENOMEM.  *out is NULL on failure. */
int calfile_load(struct calfile **out, const char *path, struct diag *d);

/* The same from text in memory; `name` stands for the path. */
int calfile_parse(struct calfile **out, const char *name, const char *text, size_t len,
		  struct diag *d);

/* The built-in calibration: no parameters, the rows of the embedded
 * measurements.csv, each row's engine text matched against et (NULL: the
 * built-in engine table, loaded for the call). */
int calfile_builtin(struct calfile **out, const struct engine_table *et, struct diag *d);

void calfile_free(struct calfile *cf); /* accepts NULL */

/* Write the file's fitted values into cat's families and et's engines.
 * DIAG_EINPUT when a family, engine or override it names is not there
 * ("path: parameters[3]: no engine 'x' in the engine table"). */
int calfile_apply(const struct calfile *cf, struct catalog *cat, struct engine_table *et,
		  struct diag *d);

/* A regime and its nearest measured point. */
struct calfile_regime {
	const char *hardware;      /* catalogue ids */
	const char *model;
	const char *engine;        /* engine profile id */
	double batch;              /* sequences per step (>= 1) */
	double context;            /* tokens of context per sequence */
};

struct calfile_near {
	bool found;                /* false: the calibration has no rows */
	size_t row;                /* index into cf->rows */
	int hardware_rank, model_rank, engine_rank;
	double batch_doublings, context_doublings;
	double row_batch, row_context;
	double score;
};

/* The nearest row to r (definition above). */
void calfile_nearest(const struct calfile *cf, const struct catalog *cat,
		     const struct calfile_regime *r, struct calfile_near *out);

/* "same hardware", "same family", "other hardware"; likewise for model
 * ("same model", "similar model", "other model") and engine (static). */
const char *calfile_hardware_word(int rank);
const char *calfile_model_word(int rank);
const char *calfile_engine_word(int rank);

/* One line of text: "built-in (PATH, N measured rows)" or "own file PATH
 * (crc32 X, N rows, P parameters)" into buf. */
void calfile_describe(const struct calfile *cf, char *buf, size_t size);

/* One line describing n: "PATH:LINE hw/model/engine, batch B, context C:
 * same hardware, same model, same engine; batch 4.0 and context 1.2
 * doublings away (score S)". */
void calfile_describe_near(const struct calfile *cf, const struct calfile_near *n, char *buf,
			   size_t size);

/* The member "calibration" of a JSON result, on one line without a
 * separator: {"source": "built-in"|"own", "path", "crc32", "rows",
 * "parameters", "nearest": [{"regime", "batch", "context", "line",
 * "hardware", "model", "engine", "row_batch", "row_context",
 * "hardware_match", "model_match", "engine_match", "batch_doublings",
 * "context_doublings", "score"}]} for the n regimes r[] (labels[i] names
 * each) and their nearest points near[] (docs/output-schema.md). */
void calfile_write_json(FILE *out, const struct calfile *cf, const char *const *labels,
			const struct calfile_regime *r, const struct calfile_near *near, size_t n);

/* "Calibration: ..." and one "Nearest measured point (label ...)" line per
 * regime, as the replay table prints them. */
void calfile_write_text(FILE *out, const struct calfile *cf, const char *const *labels,
			const struct calfile_regime *r, const struct calfile_near *near, size_t n);

#endif
