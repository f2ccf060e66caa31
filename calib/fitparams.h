/* SPDX-License-Identifier: Apache-2.0
 * fitparams: the performance model's per-family and per-engine parameters fitted
 * to measurements, and leave-one-group-out cross-validation -- the logic of
 * `agentcap fit-params` and `agentcap validate --cross-validate`.
 *
 * The fit.  The parameters are fields of the catalogue's hardware families
 * (eff_compute, eff_bw, step_overhead_us) and of the engine profiles
 * (step and layer overheads, compute/attention/quantized-bandwidth/MoE
 * scales, the MoE layer overhead, and the per-family overrides of layer
 * overhead and compute scale), for the families and engines the fitted rows
 * use.  A parameter that moves no fitted row's prediction is left out, and
 * so is an overhead shipped at 0.  They are found by weighted nonlinear
 * least squares on the log error (GSL gsl_multifit_nlinear, Levenberg-
 * Marquardt trust region, finite-difference Jacobian):
 *
 *   minimise  sum_rows w_i ln(predicted_i / measured_i)^2
 *           + sum_params (prior (theta_j - theta0_j))^2
 *
 * with each parameter in a transformed space that keeps it physical:
 * fractions (efficiencies and scales) as value = 1 / (1 + e^-theta), in
 * (0, 1); overheads as value = e^theta, > 0.  The second sum is a weak
 * prior toward the shipped value (theta0), so that parameters the rows
 * cannot tell apart (a family's per-step cost and an engine's) stay where
 * their sources put them instead of drifting along the ridge.  Row weights
 * come from the confidence column: high 1, medium or unstated 0.5; rows
 * below opts.min_confidence are left out.
 *
 * Only rows the step model predicts in closed form (decode_tok_s,
 * prefill_tok_s, and single-sequence tpot without token counts) are
 * fitted: a serving row needs a simulation, thousands of which a fit
 * cannot afford.  Serving rows are still predicted with the fitted
 * parameters wherever results are reported (cross-validation).
 *
 * Cross-validation.  For each value of the grouping (hardware family,
 * hardware id, model id or engine profile) among the rows: refit without
 * that group's rows, predict them (serving rows by simulation), and record
 * their absolute percentage errors next to the in-sample ones (shipped
 * parameters).  Nothing a held-out family's rows set reaches its own
 * prediction: a family none of whose rows is left in the fit takes what the
 * other families' fitted factors say about it (fitparams_stand_in: the compute
 * efficiency from families on the same matmul unit, else the unit's first
 * value; the bandwidth efficiency from families of the same memory kind;
 * the issue efficiency, SM watts and step cost from all),
 * as hardware without measurements would, and an engine's override
 * for it is taken out for the fold unless a kept row of another family ran
 * under it; an engine with no row left keeps its shipped values (there is
 * no analogue to take them from).  The catalogue and engine table are
 * restored to their shipped values after every fold.
 *
 * Both functions change the catalogue's families and the engine table in
 * place while they run (they are the caller's working copies); on return
 * fitparams_fit leaves the fitted values in them, fitparams_cross_validate the
 * values it found.  Deterministic: same inputs, same results.
 */
#ifndef CALIB_FITPARAMS_H
#define CALIB_FITPARAMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "base/diag.h"
#include "models/catalog.h"
#include "models/engine.h"
#include "models/uncert.h"
#include "calib/validate.h"

enum fitparams_target {
	CALIB_FAMILY = 0,   /* models/catalog/families.json */
	CALIB_ENGINE,       /* an engine profile's own figure */
	CALIB_OVERRIDE,     /* an engine's by_family override */
};

enum fitparams_field {
	CF_EFF_COMPUTE = 0,
	CF_EFF_BW,
	CF_FAMILY_STEP_US,
	CF_STEP_US,
	CF_LAYER_US,
	CF_COMPUTE_SCALE,
	CF_ATTENTION_SCALE,
	CF_QUANT_BW_SCALE,
	CF_MOE_SCALE,
	CF_MOE_LAYER_US,
	CF_QUANT_MATMUL_FLOP_CLK,
	CF_MATVEC_BYTES_CLK,
	CF_QUANT_MATVEC_BYTES_CLK,
	CF_ATTENTION_SCALE_NO_FA,
	CF_MOE_HOST_ROUTING_US,
	CF_EFF_ISSUE,
	CF_SM_W,
	CF_COUNT
};

/* The JSON name of a field ("eff_bw", "layer_overhead_us", ...; static). */
const char *fitparams_field_name(enum fitparams_field f);

/* "family", "engine", "override" (static). */
const char *fitparams_target_name(enum fitparams_target t);

struct fitparams_param {
	enum fitparams_target target;
	char id[CAT_ID_MAX];                  /* family or engine id */
	char family_prefix[ENGINE_NAME_MAX];  /* CALIB_OVERRIDE: its prefix */
	enum fitparams_field field;
	double shipped;                       /* value before the fit */
	double value;                         /* fitted value */
};

struct fitparams_opts {
	enum validate_confidence min_confidence; /* default VC_MEDIUM */
	double prior;            /* weight of the prior per unit of theta;
				    default 0.1 */
	int max_iter;            /* default 100 */
	const bool *exclude;     /* rows left out of the fit; NULL none */
	size_t exclude_n;
	int requests_per_client; /* simulations (cross-validation, and the fit
				    with simulate); default 8 */
	int offline_requests;    /* serving rows run offline (no concurrency):
				    requests queued at once; 0: validate's
				    default */
	bool identifiable_only;  /* fit at most one parameter per row, those
				    the rows' responses tell apart (fitparams.c,
				    screen); the others keep their values */
	bool simulate;           /* also fit the serving rows a simulation
				    predicts (output throughput, TTFT, TPOT
				    ...): a few rows of one deployment, as
				    `agentcap calibrate` fits; each evaluation
				    then runs their simulations */
};

void fitparams_opts_init(struct fitparams_opts *o);

/* One fitted row. */
struct fitparams_residual {
	long line;
	enum validate_metric metric;
	char family[CAT_ID_MAX];
	char engine[ENGINE_NAME_MAX];
	double weight;
	double measured;
	double before;           /* predicted with the shipped parameters */
	double after;            /* predicted with the fitted ones */
};

struct fitparams_fit {
	struct fitparams_param *params; /* as many as the fitted rows can move */
	size_t n_params;
	size_t params_cap;
	struct fitparams_residual *res;
	size_t n_res;
	size_t iterations;
	int gsl_status;          /* of gsl_multifit_nlinear_driver; 0 converged */
	const char *stop;        /* why it stopped (static) */
	double cost_before;      /* weighted sum of squared log errors, rows only */
	double cost_after;
	double median_ape_before; /* over the fitted rows, % */
	double median_ape_after;
};

/* Fit on the rows of the CSV text (validate.h columns) with cat's families
 * and et's engines as the starting point.  0, DIAG_EINPUT (a bad row, or no
 * row to fit), DIAG_ENOMEM, DIAG_EINTERNAL.  On success cat and et hold the
 * fitted values; fit owns res until fitparams_fit_release. */
int fitparams_fit_run(struct fitparams_fit *fit, struct catalog *cat, struct engine_table *et,
		  const char *name, const char *text, size_t len, const struct fitparams_opts *o,
		  struct diag *d);

void fitparams_fit_release(struct fitparams_fit *fit);

/* Set every parameter of fit to `fitted` ? value : shipped in cat and et. */
void fitparams_apply(const struct fitparams_fit *fit, struct catalog *cat, struct engine_table *et,
		 bool fitted);

/* params.json: {"schema_version": 1, "measurements": {"path", "crc32",
 * "commit"}, "method": ..., "parameters": [...], "residuals": [...],
 * "summary": {...}}.  commit may be NULL (written as null); crc32 is of
 * the measurement text. */
int fitparams_fit_write_json(FILE *out, const struct fitparams_fit *fit, const char *path,
			 unsigned long crc32, const char *commit, struct diag *d);

/* The "iterations", "stop", "parameters" and "residuals" keys of a JSON
 * object, two spaces in, a comma after the last: the part params.json and
 * a calibration file (calib/calibrate.h) share. */
void fitparams_fit_write_body(FILE *out, const struct fitparams_fit *fit);

/* What a fold leaves out: a hardware family, a hardware or model id, an
 * engine profile, a package kind (catalog_package_kind: monolithic, soc,
 * multi-die), a memory kind (catalog_memory_kind: hbm, gddr, lpddr) or a
 * weight format (the row's quant, as the catalogue names it). */
enum fitparams_group { CG_FAMILY = 0, CG_HARDWARE, CG_MODEL, CG_ENGINE, CG_PACKAGE, CG_MEMORY,
		       CG_FORMAT, CG_COUNT };

/* "family", "hardware", "model", "engine", "package", "memory", "format"
 * -> 0 and *g; -1 otherwise. */
int fitparams_group_parse(const char *name, enum fitparams_group *g);

/* The name fitparams_group_parse reads for g. */
const char *fitparams_group_name(enum fitparams_group g);

/* Out-of-sample and in-sample errors of one (group, metric). */
struct fitparams_cv_cell {
	char group[CAT_ID_MAX];  /* group value; "all" for the pooled rows */
	enum validate_metric metric;
	size_t n;
	double in_median, in_p90;   /* APE % with the shipped parameters */
	double out_median, out_p90; /* APE % refitted without the group */
};

/* One row predicted out of sample (the rows the cells summarise). */
struct fitparams_cv_row {
	long line;
	enum validate_metric metric;
	char group[CAT_ID_MAX];       /* its value of the grouping */
	char family[CAT_ID_MAX];
	char engine[ENGINE_NAME_MAX]; /* engine profile */
	double measured;
	double predicted_in;          /* shipped parameters */
	double predicted_out;         /* refitted without the row's group */
	bool engine_in_sample;        /* no fitted row of its engine was left
					 in the fold: the engine's own figures
					 are the shipped ones, set with this
					 row in view */
};

struct fitparams_cv {
	enum fitparams_group group;
	struct fitparams_cv_cell *cells; /* by group (sorted), then metric; the
					pooled "all" cells last */
	size_t n_cells;
	size_t n_folds;
	struct fitparams_cv_row *rows;   /* in the order of the input */
	size_t n_rows;
};

/* What cross-validation gives a family none of whose rows is left in a fold,
 * for field (CF_EFF_COMPUTE, CF_EFF_BW, CF_FAMILY_STEP_US, CF_EFF_ISSUE or
 * CF_SM_W):
 * the median of the values fit found for the other families; for the compute efficiency
 * only over the families on the same matmul unit (families.json
 * matmul_units), and the unit's own first value when none was fitted; for
 * the bandwidth efficiency over the families of the same memory kind
 * (families.json memory_kind), all of them when none of that kind was
 * fitted.  When nothing was fitted, *out is NAN for an efficiency of
 * bandwidth or a step cost (the family keeps its value) and 0 for an issue
 * efficiency or an SM's watts (the family is given none: catalog_eff_issue,
 * perf_sustained_clock); never fam's own value.  0, or DIAG_ENOMEM. */
int fitparams_stand_in(const struct catalog *cat, const struct fitparams_fit *fit,
		   const struct cat_family *fam, enum fitparams_field field, double *out,
		   struct diag *d);

/* Leave-one-group-out over the rows of the CSV text. */
int fitparams_cross_validate(struct fitparams_cv *cv, struct catalog *cat, struct engine_table *et,
			 const char *name, const char *text, size_t len, enum fitparams_group g,
			 const struct fitparams_opts *o, struct diag *d);

void fitparams_cv_release(struct fitparams_cv *cv);

/* The table: one line per cell. */
int fitparams_cv_write_text(FILE *out, const struct fitparams_cv *cv, struct diag *d);

/* The cells and every row's in-sample and out-of-sample prediction, as
 * JSON (schema in docs/validation.md). */
int fitparams_cv_write_json(FILE *out, const struct fitparams_cv *cv, struct diag *d);

/* The error bars of the rows' out-of-sample predictions (models/uncert.h):
 * one sample ln(predicted_out / measured) per row, regimes by the row's
 * family, engine profile and metric.  The header fields of t other than
 * coverage, min_rows and grouping are left for the caller.  Skips the rows
 * whose group value is `without` (NULL: none), so that a band can be
 * judged on a group it was not built from.  0, DIAG_EINPUT (no row
 * left), DIAG_ENOMEM. */
/* The coverage dimension cv's grouping makes (models/uncert.h): its name,
 * the values the rows have (sorted), and the coverage quantile of the
 * rows' |ln(predicted out of sample / measured)|.  0, DIAG_EINPUT (no row
 * predicted, too many values) or DIAG_ENOMEM. */
int fitparams_cv_dim(struct uncert_dim *dm, const struct fitparams_cv *cv, double coverage,
		     struct diag *d);

int fitparams_cv_bands(struct uncert_table *t, const struct fitparams_cv *cv, const char *without,
		   double coverage, size_t min_rows, struct diag *d);

/* How often bands cover the rows' out-of-sample predictions:
 * *in_sample of the rows lie within the bands of t, and *nested within
 * bands built (as fitparams_cv_bands does) without the row's own group, so
 * that a row never meets a band made from itself.  *total rows in all. */
int fitparams_cv_band_coverage(const struct fitparams_cv *cv, const struct uncert_table *t,
			   size_t *in_sample, size_t *nested, size_t *total, struct diag *d);

#endif
