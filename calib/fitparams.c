/* SPDX-License-Identifier: Apache-2.0
 * fitparams: fitted per-family and per-engine parameters and leave-one-group-out
 * cross-validation (see fitparams.h).
 *
 * Every evaluation of the objective reruns validate_run_text on the fitted
 * rows only (opts.row_mask, no simulation): the rows are parsed again each
 * time, which costs far less than their predictions.  The parameter vector
 * theta lives in the transformed space of fitparams.h; apply() writes the
 * physical values into the caller's catalogue and engine table.
 */
#include "calib/fitparams.h"
#include "base/jsonw.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_multifit_nlinear.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <gsl/gsl_vector.h>


static const char *const field_names[CF_COUNT] = {
	"eff_compute", "eff_bw", "step_overhead_us", "step_overhead_us", "layer_overhead_us",
	"compute_scale", "attention_scale", "quant_bw_scale", "moe_scale", "moe_layer_overhead_us",
	"quant_matmul_flops_per_core_clock", "matvec_bytes_per_core_clock",
	"quant_matvec_bytes_per_core_clock", "attention_scale_without_fa", "moe_host_routing_us",
	"eff_issue", "sm_w_at_1ghz",
};

const char *fitparams_field_name(enum fitparams_field f)
{
	return f >= 0 && f < CF_COUNT ? field_names[f] : "?";
}

const char *fitparams_target_name(enum fitparams_target t)
{
	return t == CALIB_FAMILY ? "family" : t == CALIB_ENGINE ? "engine" : "override";
}

void fitparams_opts_init(struct fitparams_opts *o)
{
	*o = (struct fitparams_opts){ .min_confidence = VC_MEDIUM, .prior = 0.1, .max_iter = 100,
				  .requests_per_client = 8 };
}

static bool is_fraction(enum fitparams_field f)
{
	return f == CF_EFF_COMPUTE || f == CF_EFF_BW || f == CF_EFF_ISSUE || f == CF_COMPUTE_SCALE ||
	       f == CF_ATTENTION_SCALE || f == CF_QUANT_BW_SCALE || f == CF_MOE_SCALE ||
	       f == CF_ATTENTION_SCALE_NO_FA;
}

/* Fractions shipped at 1 start just inside the logistic's range. */
#define FRACTION_MAX 0.999
#define FRACTION_MIN 1e-6

static double to_theta(enum fitparams_field f, double v)
{
	if (is_fraction(f)) {
		v = fmin(fmax(v, FRACTION_MIN), FRACTION_MAX);
		return log(v / (1 - v));
	}
	return log(v);
}

/* The logistic rounds to 1 for large theta, which (0, 1] allows, and to 0
 * for very negative theta, which it does not: FRACTION_MIN is the floor.
 * An overhead stays above 1e-3 us for the same reason, and below 1e7 (ten
 * seconds a step; calibration files are held to the same range). */
static double from_theta(enum fitparams_field f, double th)
{
	if (is_fraction(f))
		return fmax(1 / (1 + exp(-th)), FRACTION_MIN);
	return fmin(fmax(exp(th), 1e-3), 1e7);
}

/* A row the model cannot predict (no finite positive value) counts as a
 * log error of e^20, never as a perfect fit: otherwise a fit could reach a
 * cost of 0 by pushing every row out of the model's range. */
#define CALIB_UNPREDICTED_LOG 20.0

static double row_residual(double pred, double meas, double w)
{
	double e = isfinite(pred) && pred > 0 ? log(pred / meas) : CALIB_UNPREDICTED_LOG;
	return sqrt(w) * e;
}

static struct engine_profile *engine_mut(struct engine_table *et, const char *id)
{
	for (size_t i = 0; i < et->count; i++)
		if (strcmp(et->engines[i].id, id) == 0)
			return &et->engines[i];
	return NULL;
}

static double *param_field(struct engine_params *p, enum fitparams_field f)
{
	switch (f) {
	case CF_STEP_US: return &p->step_overhead_us;
	case CF_LAYER_US: return &p->layer_overhead_us;
	case CF_COMPUTE_SCALE: return &p->compute_scale;
	case CF_ATTENTION_SCALE: return &p->attention_scale;
	case CF_ATTENTION_SCALE_NO_FA: return &p->attention_scale_without_fa;
	case CF_QUANT_BW_SCALE: return &p->quant_bw_scale;
	case CF_MOE_SCALE: return &p->moe_scale;
	case CF_MOE_LAYER_US: return &p->moe_layer_overhead_us;
	case CF_MOE_HOST_ROUTING_US: return &p->moe_host_routing_us;
	case CF_QUANT_MATMUL_FLOP_CLK: return &p->quant_matmul_flops_per_core_clock;
	case CF_MATVEC_BYTES_CLK: return &p->matvec_bytes_per_core_clock;
	case CF_QUANT_MATVEC_BYTES_CLK: return &p->quant_matvec_bytes_per_core_clock;
	default: return NULL;
	}
}

/* The fields of a family a fit sets. */
static const enum fitparams_field family_fields[] = { CF_EFF_COMPUTE, CF_EFF_BW, CF_FAMILY_STEP_US,
	CF_EFF_ISSUE, CF_SM_W };
#define CALIB_FAMILY_FIELDS (sizeof(family_fields) / sizeof(family_fields[0]))

static double *family_field(struct cat_family *fam, enum fitparams_field f)
{
	switch (f) {
	case CF_EFF_COMPUTE: return &fam->eff_compute;
	case CF_EFF_BW: return &fam->eff_bw;
	case CF_FAMILY_STEP_US: return &fam->step_overhead_us;
	case CF_EFF_ISSUE: return &fam->eff_issue;
	case CF_SM_W: return &fam->sm_w_at_1ghz;
	default: return NULL;
	}
}

/* Where parameter q lives in cat / et; NULL when it does not. */
static double *locate(const struct fitparams_param *q, struct catalog *cat, struct engine_table *et)
{
	if (q->target == CALIB_FAMILY) {
		struct cat_family *fam = catalog_family_mut(cat, q->id);
		return fam ? family_field(fam, q->field) : NULL;
	}
	struct engine_profile *e = engine_mut(et, q->id);
	if (!e)
		return NULL;
	if (q->target == CALIB_ENGINE)
		return param_field(&e->p, q->field);
	for (size_t i = 0; i < e->override_count; i++)
		if (strcmp(e->overrides[i].family_prefix, q->family_prefix) == 0)
			return param_field(&e->overrides[i].p, q->field);
	return NULL;
}

void fitparams_apply(const struct fitparams_fit *fit, struct catalog *cat, struct engine_table *et,
		 bool fitted)
{
	for (size_t j = 0; j < fit->n_params; j++) {
		double *v = locate(&fit->params[j], cat, et);
		assert(v);
		if (v)
			*v = fitted ? fit->params[j].value : fit->params[j].shipped;
	}
}

/* ---- the objective ---- */

struct ctx {
	struct catalog *cat;
	struct engine_table *et;
	const char *name, *text;
	size_t len;
	struct validate_opts vo;     /* row_mask = the fitted rows */
	size_t *rows;                /* indexes of the fitted rows */
	double *w;                   /* their weights */
	double *measured;
	size_t n_rows;
	struct fitparams_param *params;
	size_t n_params;
	double *theta0;
	double prior;
	int error;                   /* first failure inside a GSL callback */
	struct diag *d;
};

static void set_theta(struct ctx *c, const double *th)
{
	for (size_t j = 0; j < c->n_params; j++) {
		double *v = locate(&c->params[j], c->cat, c->et);
		if (v)
			*v = from_theta(c->params[j].field, th[j]);
	}
}

/* Predictions of the fitted rows under the current values into pred[]. */
static int predict_rows(struct ctx *c, double *pred)
{
	struct validate_report rep;
	int rc = validate_run_text(&rep, c->name, c->text, c->len, &c->vo, c->d);
	if (rc)
		return rc;
	for (size_t i = 0; i < c->n_rows; i++) {
		const struct validate_row *r = &rep.rows[c->rows[i]];
		pred[i] = r->skipped ? NAN : r->predicted;
	}
	validate_release(&rep);
	return 0;
}

/* Residuals: weighted log errors of the rows, then the prior. */
static int residuals(struct ctx *c, const double *th, double *f)
{
	set_theta(c, th);
	int rc = predict_rows(c, f);
	if (rc)
		return rc;
	for (size_t i = 0; i < c->n_rows; i++)
		f[i] = row_residual(f[i], c->measured[i], c->w[i]);
	for (size_t j = 0; j < c->n_params; j++)
		f[c->n_rows + j] = c->prior * (th[j] - c->theta0[j]);
	return 0;
}

static int gsl_f(const gsl_vector *x, void *params, gsl_vector *f)
{
	struct ctx *c = params;
	if (c->error)
		return GSL_EBADFUNC;
	int rc = residuals(c, x->data, f->data);
	if (rc) {
		c->error = rc;
		return GSL_EBADFUNC;
	}
	return GSL_SUCCESS;
}

/* Forward differences over a fixed step in theta (the step model has kinks
 * where one term overtakes another: a step of 1e-3 in the transformed
 * space, 0.1% of an overhead, differences across rounding and stays local). */
#define CALIB_FD_STEP 1e-3

static int gsl_df(const gsl_vector *x, void *params, gsl_matrix *J)
{
	struct ctx *c = params;
	if (c->error)
		return GSL_EBADFUNC;
	size_t n = J->size1, p = J->size2;
	double *th = calloc(p, sizeof(double));
	double *f0 = calloc(n, sizeof(double));
	double *f1 = calloc(n, sizeof(double));
	int rc = th && f0 && f1 ? 0 : DIAG_ENOMEM;
	for (size_t j = 0; j < p && !rc; j++)
		th[j] = gsl_vector_get(x, j);
	if (!rc)
		rc = residuals(c, th, f0);
	for (size_t j = 0; j < p && !rc; j++) {
		double save = th[j];
		th[j] = save + CALIB_FD_STEP;
		rc = residuals(c, th, f1);
		th[j] = save;
		for (size_t i = 0; i < n && !rc; i++)
			gsl_matrix_set(J, i, j, (f1[i] - f0[i]) / CALIB_FD_STEP);
	}
	free(th);
	free(f0);
	free(f1);
	if (rc) {
		c->error = rc == DIAG_ENOMEM ? diag_set(c->d, DIAG_ENOMEM, "out of memory") : rc;
		return GSL_EBADFUNC;
	}
	return GSL_SUCCESS;
}

static double cost_of(const double *f, size_t n)
{
	double s = 0;
	for (size_t i = 0; i < n; i++)
		s += f[i] * f[i];
	return s;
}

static double median_ape(const double *pred, const double *meas, size_t n, double *scratch)
{
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (isfinite(pred[i]))
			scratch[k++] = fabs(pred[i] - meas[i]) / meas[i] * 100;
	if (!k)
		return NAN;
	gsl_sort(scratch, 1, k);
	return gsl_stats_median_from_sorted_data(scratch, 1, k);
}

/* ---- the parameters ---- */

static bool has_param(const struct fitparams_fit *fit, const struct fitparams_param *q)
{
	for (size_t j = 0; j < fit->n_params; j++) {
		const struct fitparams_param *p = &fit->params[j];
		if (p->target == q->target && p->field == q->field && strcmp(p->id, q->id) == 0 &&
		    strcmp(p->family_prefix, q->family_prefix) == 0)
			return true;
	}
	return false;
}

static int add_param(struct fitparams_fit *fit, struct catalog *cat, struct engine_table *et,
		     enum fitparams_target t, const char *id, const char *prefix, enum fitparams_field f,
		     struct diag *d)
{
	struct fitparams_param q = { .target = t, .field = f };
	snprintf(q.id, sizeof(q.id), "%s", id);
	snprintf(q.family_prefix, sizeof(q.family_prefix), "%s", prefix ? prefix : "");
	if (has_param(fit, &q))
		return 0;
	double *v = locate(&q, cat, et);
	/* an override that does not set the field, or an overhead of 0 (no
	 * such cost), is not a parameter */
	if (!v || !(*v > 0) || !isfinite(*v))
		return 0;
	if (fit->n_params == fit->params_cap) {
		size_t cap = fit->params_cap ? 2 * fit->params_cap : 32;
		struct fitparams_param *p = realloc(fit->params, cap * sizeof(*p));
		if (!p)
			return diag_set(d, DIAG_ENOMEM, "out of memory for the parameters");
		fit->params = p;
		fit->params_cap = cap;
	}
	q.shipped = q.value = *v;
	fit->params[fit->n_params++] = q;
	return 0;
}

/* Every parameter a fitted row's family or engine can move. */
static int candidates(struct fitparams_fit *fit, struct catalog *cat, struct engine_table *et,
		      const struct validate_report *rep, const size_t *rows, size_t n,
		      struct diag *d)
{
	static const enum fitparams_field eng_fields[] = { CF_STEP_US, CF_LAYER_US, CF_COMPUTE_SCALE,
		CF_ATTENTION_SCALE, CF_QUANT_BW_SCALE, CF_MOE_SCALE, CF_MOE_LAYER_US,
		CF_QUANT_MATMUL_FLOP_CLK, CF_MATVEC_BYTES_CLK,
		CF_QUANT_MATVEC_BYTES_CLK, CF_ATTENTION_SCALE_NO_FA, CF_MOE_HOST_ROUTING_US };
	const size_t n_eng = sizeof(eng_fields) / sizeof(eng_fields[0]);
	int rc = 0;
	for (size_t i = 0; i < n && !rc; i++) {
		const struct validate_row *r = &rep->rows[rows[i]];
		for (size_t k = 0; k < CALIB_FAMILY_FIELDS && !rc; k++)
			rc = add_param(fit, cat, et, CALIB_FAMILY, r->family, NULL, family_fields[k],
				       d);
		struct engine_profile *e = engine_mut(et, r->engine);
		if (!e)
			continue;
		for (size_t k = 0; k < n_eng && !rc; k++)
			rc = add_param(fit, cat, et, CALIB_ENGINE, e->id, NULL, eng_fields[k], d);
		const struct engine_override *o = engine_override_for(e, r->family);
		for (size_t k = 0; o && k < n_eng && !rc; k++)
			rc = add_param(fit, cat, et, CALIB_OVERRIDE, e->id, o->family_prefix,
				       eng_fields[k], d);
	}
	return rc;
}

void fitparams_fit_release(struct fitparams_fit *fit)
{
	free(fit->params);
	fit->params = NULL;
	fit->n_params = fit->params_cap = 0;
	free(fit->res);
	fit->res = NULL;
	fit->n_res = 0;
}

static double confidence_weight(enum validate_confidence c)
{
	return c == VC_HIGH ? 1.0 : 0.5;
}

/* The rows to fit: predicted without a simulation, not excluded by
 * confidence or by o->exclude. */
static int select_rows(struct ctx *c, const struct fitparams_opts *o, struct validate_report *rep,
		       struct diag *d)
{
	struct validate_opts vo = c->vo;
	vo.row_mask = NULL;
	vo.no_simulation = !o->simulate;
	vo.min_confidence = o->min_confidence;
	int rc = validate_run_text(rep, c->name, c->text, c->len, &vo, d);
	if (rc)
		return rc;
	size_t n = rep->n_rows;
	bool *mask = calloc(n ? n : 1, sizeof(bool));
	c->rows = calloc(n ? n : 1, sizeof(size_t));
	c->w = calloc(n ? n : 1, sizeof(double));
	c->measured = calloc(n ? n : 1, sizeof(double));
	if (!mask || !c->rows || !c->w || !c->measured) {
		free(mask);
		return diag_set(d, DIAG_ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < n; i++) {
		const struct validate_row *r = &rep->rows[i];
		if (r->skipped || r->excluded || (o->exclude && i < o->exclude_n && o->exclude[i]))
			continue;
		mask[i] = true;
		c->rows[c->n_rows] = i;
		c->w[c->n_rows] = confidence_weight(r->confidence);
		c->measured[c->n_rows] = r->measured;
		c->n_rows++;
	}
	c->vo.row_mask = mask;
	c->vo.row_mask_n = n;
	c->vo.no_simulation = !o->simulate;
	if (!c->n_rows)
		return diag_set(d, DIAG_EINPUT, "%s: no row to fit (decode_tok_s and prefill_tok_s "
				"rows of at least %s confidence are fitted)", c->name,
				validate_confidence_name(o->min_confidence));
	return 0;
}

static void ctx_release(struct ctx *c)
{
	free((void *)c->vo.row_mask);
	free(c->rows);
	free(c->w);
	free(c->measured);
	free(c->theta0);
}

/* Drop the candidates no fitted row responds to.  With identifiable_only,
 * keep at most one parameter per fitted row, chosen greedily by how much of
 * the rows' response each adds beyond those already kept (Gram-Schmidt on
 * the columns of the finite-difference Jacobian, largest remaining norm
 * first, stopping below CALIB_IDENT_MIN of the first): a handful of rows
 * cannot tell ten parameters apart, and the others keep their built-in
 * values instead of drifting along the ridge. */
#define CALIB_IDENT_MIN 0.05

static int screen(struct fitparams_fit *fit, struct ctx *c, double *f0, double *f1, double *th,
		  bool identifiable_only)
{
	int rc = residuals(c, th, f0);
	if (rc)
		return rc;
	size_t nr = c->n_rows, np = fit->n_params;
	double *col = calloc(nr * (np ? np : 1), sizeof(double));
	bool *moves = calloc(np ? np : 1, sizeof(bool));
	bool *keep = calloc(np ? np : 1, sizeof(bool));
	if (!col || !moves || !keep) {
		free(col);
		free(moves);
		free(keep);
		return diag_set(c->d, DIAG_ENOMEM, "out of memory");
	}
	for (size_t j = 0; j < np && !rc; j++) {
		double save = th[j];
		th[j] += 0.1;
		rc = residuals(c, th, f1);
		th[j] = save;
		for (size_t i = 0; i < nr && !rc; i++) {
			col[j * nr + i] = f1[i] - f0[i];
			moves[j] = moves[j] || fabs(f1[i] - f0[i]) > 1e-9;
		}
		keep[j] = moves[j];
	}
	if (!rc && identifiable_only) {
		for (size_t j = 0; j < np; j++)
			keep[j] = false;
		double first = 0;
		for (size_t k = 0; k < nr && k < np; k++) {
			size_t best = np;
			double bn = 0;
			for (size_t j = 0; j < np; j++) {
				if (!moves[j] || keep[j])
					continue;
				double s2 = 0;
				for (size_t i = 0; i < nr; i++)
					s2 += col[j * nr + i] * col[j * nr + i];
				if (sqrt(s2) > bn * (1 + 1e-12)) {
					bn = sqrt(s2);
					best = j;
				}
			}
			if (best == np || (k > 0 && bn < CALIB_IDENT_MIN * first))
				break;
			if (k == 0)
				first = bn;
			keep[best] = true;
			/* take the kept direction out of the others */
			for (size_t j = 0; j < np; j++) {
				if (keep[j] || !moves[j])
					continue;
				double dot = 0;
				for (size_t i = 0; i < nr; i++)
					dot += col[j * nr + i] * col[best * nr + i];
				for (size_t i = 0; i < nr; i++)
					col[j * nr + i] -= dot / (bn * bn) * col[best * nr + i];
			}
		}
	}
	size_t kept = 0;
	for (size_t j = 0; j < np && !rc; j++) {
		if (keep[j]) {
			fit->params[kept] = fit->params[j];
			th[kept] = th[j];
			c->theta0[kept] = c->theta0[j];
			kept++;
		} else {
			/* put it back */
			double *v = locate(&fit->params[j], c->cat, c->et);
			if (v)
				*v = fit->params[j].shipped;
		}
	}
	free(col);
	free(moves);
	free(keep);
	if (rc)
		return rc;
	fit->n_params = kept;
	c->n_params = kept;
	return 0;
}

int fitparams_fit_run(struct fitparams_fit *fit, struct catalog *cat, struct engine_table *et,
		  const char *name, const char *text, size_t len, const struct fitparams_opts *o,
		  struct diag *d)
{
	memset(fit, 0, sizeof(*fit));
	struct ctx c = { .cat = cat, .et = et, .name = name, .text = text, .len = len,
			 .prior = o->prior, .d = d };
	validate_opts_init(&c.vo, cat);
	c.vo.engines = et;
	c.vo.requests_per_client = o->requests_per_client;
	if (o->offline_requests > 0)
		c.vo.offline_requests = o->offline_requests;
	struct validate_report rep;
	int rc = select_rows(&c, o, &rep, d);
	if (!rc)
		rc = candidates(fit, cat, et, &rep, c.rows, c.n_rows, d);
	if (!c.vo.row_mask && !rc)
		rc = diag_set(d, DIAG_EINTERNAL, "no row mask");
	validate_release(&rep);
	if (rc) {
		ctx_release(&c);
		fitparams_fit_release(fit);
		return rc;
	}
	c.params = fit->params;
	c.n_params = fit->n_params;
	size_t pmax = fit->n_params ? fit->n_params : 1;
	size_t nmax = c.n_rows + pmax;
	double *th = calloc(pmax, sizeof(double));
	double *f0 = calloc(nmax, sizeof(double));
	double *f1 = calloc(nmax, sizeof(double));
	double *pred0 = calloc(c.n_rows, sizeof(double));
	c.theta0 = calloc(pmax, sizeof(double));
	fit->res = calloc(c.n_rows, sizeof(*fit->res));
	if (!th || !f0 || !f1 || !pred0 || !c.theta0 || !fit->res) {
		rc = diag_set(d, DIAG_ENOMEM, "out of memory");
		goto out;
	}
	for (size_t j = 0; j < fit->n_params; j++)
		th[j] = c.theta0[j] = to_theta(fit->params[j].field, fit->params[j].shipped);
	/* before: the shipped values exactly */
	fitparams_apply(fit, cat, et, false);
	if ((rc = predict_rows(&c, pred0)))
		goto out;
	if ((rc = screen(fit, &c, f0, f1, th, o->identifiable_only)))
		goto out;
	for (size_t i = 0; i < c.n_rows; i++)
		f1[i] = row_residual(pred0[i], c.measured[i], c.w[i]);
	fit->cost_before = cost_of(f1, c.n_rows);
	fit->median_ape_before = median_ape(pred0, c.measured, c.n_rows, f1);
	fit->stop = "no parameter moves a fitted row";
	if (fit->n_params > 0) {
		size_t n = c.n_rows + c.n_params, p = c.n_params;
		gsl_multifit_nlinear_parameters fp = gsl_multifit_nlinear_default_parameters();
		gsl_multifit_nlinear_workspace *w =
			gsl_multifit_nlinear_alloc(gsl_multifit_nlinear_trust, &fp, n, p);
		if (!w) {
			rc = diag_set(d, DIAG_ENOMEM, "out of memory for the fit");
			goto out;
		}
		gsl_multifit_nlinear_fdf fdf = { .f = gsl_f, .df = gsl_df, .fvv = NULL, .n = n,
						 .p = p, .params = &c };
		gsl_vector_view x0 = gsl_vector_view_array(th, p);
		int info = 0;
		int st = gsl_multifit_nlinear_init(&x0.vector, &fdf, w);
		if (!st && !c.error)
			st = gsl_multifit_nlinear_driver((size_t)o->max_iter, 1e-6, 1e-6, 1e-8, NULL,
							 NULL, &info, w);
		if (c.error) {
			rc = c.error;
			gsl_multifit_nlinear_free(w);
			goto out;
		}
		fit->gsl_status = st;
		fit->iterations = gsl_multifit_nlinear_niter(w);
		fit->stop = st == GSL_SUCCESS ? (info == 1 ? "converged (step size)"
						 : info == 2 ? "converged (gradient)"
							     : "converged")
			    : st == GSL_EMAXITER ? "iteration limit"
			    : st == GSL_ENOPROG	 ? "no further progress"
						 : "stopped";
		const gsl_vector *x = gsl_multifit_nlinear_position(w);
		for (size_t j = 0; j < p; j++) {
			th[j] = gsl_vector_get(x, j);
			fit->params[j].value = from_theta(fit->params[j].field, th[j]);
		}
		gsl_multifit_nlinear_free(w);
	}
	fitparams_apply(fit, cat, et, true);
	if ((rc = predict_rows(&c, f0)))
		goto out;
	for (size_t i = 0; i < c.n_rows; i++) {
		struct fitparams_residual *r = &fit->res[i];
		r->weight = c.w[i];
		r->measured = c.measured[i];
		r->before = pred0[i];
		r->after = f0[i];
	}
	fit->n_res = c.n_rows;
	fit->median_ape_after = median_ape(f0, c.measured, c.n_rows, f1);
	{
		double s = 0;
		for (size_t i = 0; i < c.n_rows; i++) {
			double r = row_residual(f0[i], c.measured[i], c.w[i]);
			s += r * r;
		}
		fit->cost_after = s;
	}
	/* row labels from one more parse */
	{
		struct validate_report lab;
		struct validate_opts vo = c.vo;
		if ((rc = validate_run_text(&lab, name, text, len, &vo, d)))
			goto out;
		for (size_t i = 0; i < c.n_rows; i++) {
			const struct validate_row *r = &lab.rows[c.rows[i]];
			fit->res[i].line = r->line;
			fit->res[i].metric = r->metric;
			snprintf(fit->res[i].family, sizeof(fit->res[i].family), "%s", r->family);
			snprintf(fit->res[i].engine, sizeof(fit->res[i].engine), "%s", r->engine);
		}
		validate_release(&lab);
	}
out:
	free(th);
	free(f0);
	free(f1);
	free(pred0);
	ctx_release(&c);
	if (rc)
		fitparams_fit_release(fit);
	return rc;
}

/* ---- output ---- */



/* "iterations", "stop", "parameters" and "residuals" keys (each line
 * indented two spaces, a comma after the last), as fit-params and
 * calibrate write them. */
void fitparams_fit_write_body(FILE *out, const struct fitparams_fit *fit)
{
	fprintf(out, "  \"iterations\": %zu,\n  \"stop\": ", fit->iterations);
	jsonw_str(out, fit->stop ? fit->stop : "");
	fputs(",\n  \"parameters\": [", out);
	for (size_t j = 0; j < fit->n_params; j++) {
		const struct fitparams_param *p = &fit->params[j];
		fprintf(out, "%s\n    {\"target\": \"%s\", \"id\": ", j ? "," : "",
			fitparams_target_name(p->target));
		jsonw_str(out, p->id);
		if (p->target == CALIB_OVERRIDE) {
			fputs(", \"family_prefix\": ", out);
			jsonw_str(out, p->family_prefix);
		}
		fprintf(out, ", \"field\": \"%s\", \"shipped\": ", fitparams_field_name(p->field));
		jsonw_num(out, p->shipped);
		fputs(", \"fitted\": ", out);
		jsonw_num(out, p->value);
		fputc('}', out);
	}
	fputs("\n  ],\n  \"residuals\": [", out);
	for (size_t i = 0; i < fit->n_res; i++) {
		const struct fitparams_residual *r = &fit->res[i];
		fprintf(out, "%s\n    {\"line\": %ld, \"metric\": \"%s\", \"family\": ", i ? "," : "",
			r->line, validate_metric_name(r->metric));
		jsonw_str(out, r->family);
		fputs(", \"engine\": ", out);
		jsonw_str(out, r->engine);
		fputs(", \"weight\": ", out);
		jsonw_num(out, r->weight);
		fputs(", \"measured\": ", out);
		jsonw_num(out, r->measured);
		fputs(", \"predicted_shipped\": ", out);
		jsonw_num(out, r->before);
		fputs(", \"predicted_fitted\": ", out);
		jsonw_num(out, r->after);
		fputs(", \"log_error\": ", out);
		jsonw_num(out, r->after > 0 ? log(r->after / r->measured) : NAN);
		fputc('}', out);
	}
	fputs("\n  ],\n", out);
}

int fitparams_fit_write_json(FILE *out, const struct fitparams_fit *fit, const char *path,
			 unsigned long crc32, const char *commit, struct diag *d)
{
	fputs("{\n  \"schema_version\": 1,\n  \"measurements\": {\"path\": ", out);
	jsonw_str(out, path);
	fprintf(out, ", \"crc32\": \"%08lx\", \"commit\": ", crc32);
	if (commit)
		jsonw_str(out, commit);
	else
		fputs("null", out);
	fputs("},\n  \"method\": \"weighted nonlinear least squares on the log error (GSL "
	      "gsl_multifit_nlinear, Levenberg-Marquardt, finite-difference Jacobian); fractions "
	      "as 1/(1+exp(-theta)), overheads as exp(theta); a prior toward the shipped value; "
	      "decode and prefill rows only\",\n", out);
	fitparams_fit_write_body(out, fit);
	fputs("  \"summary\": {\"rows\": ", out);
	fprintf(out, "%zu, \"parameters\": %zu, \"cost_shipped\": ", fit->n_res, fit->n_params);
	jsonw_num(out, fit->cost_before);
	fputs(", \"cost_fitted\": ", out);
	jsonw_num(out, fit->cost_after);
	fputs(", \"median_ape_pct_shipped\": ", out);
	jsonw_num(out, fit->median_ape_before);
	fputs(", \"median_ape_pct_fitted\": ", out);
	jsonw_num(out, fit->median_ape_after);
	fputs("}\n}\n", out);
	if (ferror(out))
		return diag_set(d, DIAG_EIO, "cannot write the parameters");
	return 0;
}

/* ---- cross-validation ---- */

static const char *const group_names[CG_COUNT] = { "family", "hardware", "model", "engine",
							   "package", "memory", "format" };

const char *fitparams_group_name(enum fitparams_group g)
{
	return (unsigned)g < CG_COUNT ? group_names[g] : "?";
}

int fitparams_group_parse(const char *name, enum fitparams_group *g)
{
	const char *const *names = group_names;
	for (int i = 0; i < CG_COUNT; i++)
		if (name && strcmp(name, names[i]) == 0) {
			*g = (enum fitparams_group)i;
			return 0;
		}
	return -1;
}

/* A row's value of the grouping: the catalogue id of its hardware or model,
 * so that an alias or another spelling of one falls in the same group (a
 * fold that kept the other spelling's rows would leave the group in view). */
static const char *group_of(const struct catalog *cat, const struct validate_report *rep,
			    size_t i, enum fitparams_group g)
{
	const struct validate_row *r = &rep->rows[i];
	const char *cell;
	switch (g) {
	case CG_FAMILY: return r->family;
	case CG_ENGINE: return r->engine;
	case CG_HARDWARE: {
		cell = csvread_cell(&rep->table, i, csvread_col(&rep->table, "hardware"));
		const struct cat_hardware *h = catalog_hardware(cat, cell);
		return h ? h->id : cell;
	}
	case CG_MODEL: {
		cell = csvread_cell(&rep->table, i, csvread_col(&rep->table, "model"));
		const struct cat_model *m = catalog_model(cat, cell);
		return m ? m->id : cell;
	}
	case CG_PACKAGE:
	case CG_MEMORY: {
		cell = csvread_cell(&rep->table, i, csvread_col(&rep->table, "hardware"));
		const struct cat_hardware *h = catalog_hardware(cat, cell);
		if (!h)
			return "unknown";
		return g == CG_PACKAGE ? catalog_package_kind(h) : catalog_memory_kind(h);
	}
	case CG_FORMAT: {
		cell = csvread_cell(&rep->table, i, csvread_col(&rep->table, "quant"));
		const struct cat_weight_format *w = catalog_weight_format(cat, cell);
		return w ? w->id : cell;
	}
	case CG_COUNT: break;
	}
	return "";
}

static int cmp_covered(const void *a, const void *b)
{
	return strcmp((const char *)a, (const char *)b);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

void fitparams_cv_release(struct fitparams_cv *cv)
{
	free(cv->cells);
	cv->cells = NULL;
	cv->n_cells = 0;
	free(cv->rows);
	cv->rows = NULL;
	cv->n_rows = 0;
}

static void quantiles(double *v, size_t n, double *med, double *p90)
{
	if (!n) {
		*med = *p90 = NAN;
		return;
	}
	gsl_sort(v, 1, n);
	*med = gsl_stats_median_from_sorted_data(v, 1, n);
	*p90 = gsl_stats_quantile_from_sorted_data(v, 1, n, 0.90);
}

static int add_cell(struct fitparams_cv *cv, size_t *cap, const char *group, enum validate_metric m,
		    const double *in, const double *outv, const bool *sel, size_t n, double *scratch,
		    struct diag *d)
{
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (sel[i])
			scratch[k++] = in[i];
	if (!k)
		return 0;
	if (cv->n_cells == *cap) {
		size_t nc = *cap ? 2 * *cap : 32;
		struct fitparams_cv_cell *p = realloc(cv->cells, nc * sizeof(*p));
		if (!p)
			return diag_set(d, DIAG_ENOMEM, "out of memory");
		cv->cells = p;
		*cap = nc;
	}
	struct fitparams_cv_cell *c = &cv->cells[cv->n_cells++];
	memset(c, 0, sizeof(*c));
	snprintf(c->group, sizeof(c->group), "%s", group);
	c->metric = m;
	c->n = k;
	quantiles(scratch, k, &c->in_median, &c->in_p90);
	k = 0;
	for (size_t i = 0; i < n; i++)
		if (sel[i])
			scratch[k++] = outv[i];
	quantiles(scratch, k, &c->out_median, &c->out_p90);
	return 0;
}

/* Whether fit's parameter q tells what fam reaches in field: a family
 * factor of that field; for a compute efficiency, a fraction of the peak of
 * a kind of unit, only from families multiplying on the same kind; with
 * same_memory, only from families of fam's memory technology (HBM stacks
 * and GDDR/LPDDR chips reach different fractions of their peaks). */
static bool stands_for(const struct catalog *cat, const struct fitparams_param *q,
		       const struct cat_family *fam, enum fitparams_field field, bool same_memory)
{
	if (q->target != CALIB_FAMILY || q->field != field)
		return false;
	const struct cat_family *other = catalog_family(cat, q->id);
	if (field == CF_EFF_COMPUTE && (!other || other->matmul_unit != fam->matmul_unit))
		return false;
	return !same_memory || (other && other->memory_kind == fam->memory_kind);
}

/* The median of the values of the parameters stands_for picks, in *out
 * (NAN when none is); v has room for every parameter of fit. */
static void median_standing_for(const struct catalog *cat, const struct fitparams_fit *fit,
				const struct cat_family *fam, enum fitparams_field field,
				bool same_memory, double *v, double *out)
{
	size_t m = 0;
	for (size_t j = 0; j < fit->n_params; j++)
		if (stands_for(cat, &fit->params[j], fam, field, same_memory))
			v[m++] = fit->params[j].value;
	*out = NAN;
	if (m) {
		gsl_sort(v, 1, m);
		*out = gsl_stats_median_from_sorted_data(v, 1, m);
	}
}

/* A family whose rows are all held out has nothing to fit its own factors
 * on: it takes what the families that stayed say about a family like it
 * (fitparams.h), never its shipped values, which were set with its rows in
 * view. */
int fitparams_stand_in(const struct catalog *cat, const struct fitparams_fit *fit,
		   const struct cat_family *fam, enum fitparams_field field, double *out,
		   struct diag *d)
{
	double *v = malloc((fit->n_params ? fit->n_params : 1) * sizeof(*v));
	if (!v)
		return diag_set(d, DIAG_ENOMEM, "out of memory");
	*out = NAN;
	/* a bandwidth efficiency belongs to a memory technology: pooled over
	 * all families only when none of the same kind was fitted */
	if (field == CF_EFF_BW)
		median_standing_for(cat, fit, fam, field, true, v, out);
	if (isnan(*out))
		median_standing_for(cat, fit, fam, field, false, v, out);
	/* no fitted family shares its unit: the unit's first value, from
	 * outside the calibration set */
	if (isnan(*out) && field == CF_EFF_COMPUTE)
		*out = fam->matmul_unit->eff_compute;
	/* optional figures: none fitted, none given */
	if (isnan(*out) && (field == CF_EFF_ISSUE || field == CF_SM_W))
		*out = 0;
	free(v);
	return 0;
}

/* Put the stand-ins in fam for the fold; saved[] keeps what it had (all
 * of it first: each stand-in is read from the fit, not from fam). */
static int stand_in_family(struct cat_family *fam, const struct catalog *cat,
			   const struct fitparams_fit *fit, double *saved, struct diag *d)
{
	for (size_t k = 0; k < CALIB_FAMILY_FIELDS; k++)
		saved[k] = *family_field(fam, family_fields[k]);
	for (size_t k = 0; k < CALIB_FAMILY_FIELDS; k++) {
		double x;
		int rc = fitparams_stand_in(cat, fit, fam, family_fields[k], &x, d);
		if (rc)
			return rc;
		if (!isnan(x))
			*family_field(fam, family_fields[k]) = x;
	}
	return 0;
}

/* Put back what stand_in_family saved. */
static void restore_family(struct cat_family *fam, const double *saved)
{
	for (size_t k = 0; k < CALIB_FAMILY_FIELDS; k++)
		*family_field(fam, family_fields[k]) = saved[k];
}

/* An engine's override for a family none of whose rows is left in the fit
 * was set with those rows in view, as the family's own factors were: unless
 * a row of another family that the fold fitted runs that engine under the
 * same override (a kept serving row, only simulated, does not count), the
 * fields a fit sets are taken
 * out of it for the fold, and the family runs on the engine's own (fitted)
 * values, as a family without measurements does.  Overrides the fit never
 * sets (batch limits, speculative-decoding costs) stay.  saved[] gets a copy
 * of every override changed and where it lives; returns how many (at most
 * cap). */
struct saved_override {
	struct engine_override *o;
	struct engine_override copy;
};

static size_t stand_in_overrides(struct engine_table *et, const char *fid,
				 const struct fitparams_fit *fit, struct saved_override *saved,
				 size_t n_saved, size_t cap)
{
	for (size_t i = 0; i < et->count && n_saved < cap; i++) {
		struct engine_profile *e = &et->engines[i];
		const struct engine_override *co = engine_override_for(e, fid);
		if (!co)
			continue;
		struct engine_override *o = &e->overrides[co - e->overrides];
		bool fitted_elsewhere = false, done = false;
		/* only rows the fold fitted count: a kept serving row it only
		 * simulates set nothing */
		for (size_t r = 0; fit && r < fit->n_res && !fitted_elsewhere; r++)
			fitted_elsewhere = strcmp(fit->res[r].engine, e->id) == 0 &&
					   engine_override_for(e, fit->res[r].family) == co;
		for (size_t k = 0; k < n_saved && !done; k++)
			done = saved[k].o == o;
		if (fitted_elsewhere || done)
			continue;
		saved[n_saved].o = o;
		saved[n_saved].copy = *o;
		n_saved++;
		double *f[] = { &o->p.step_overhead_us, &o->p.layer_overhead_us,
				&o->p.compute_scale, &o->p.attention_scale,
				&o->p.attention_scale_without_fa, &o->p.quant_bw_scale,
				&o->p.moe_scale, &o->p.moe_layer_overhead_us };
		for (size_t k = 0; k < sizeof(f) / sizeof(f[0]); k++)
			*f[k] = -1; /* not overridden */
	}
	return n_saved;
}

int fitparams_cross_validate(struct fitparams_cv *cv, struct catalog *cat, struct engine_table *et,
			 const char *name, const char *text, size_t len, enum fitparams_group g,
			 const struct fitparams_opts *o, struct diag *d)
{
	memset(cv, 0, sizeof(*cv));
	cv->group = g;
	struct validate_opts vo;
	validate_opts_init(&vo, cat);
	vo.engines = et;
	vo.min_confidence = o->min_confidence;
	vo.requests_per_client = o->requests_per_client;
	struct validate_report base;
	int rc = validate_run_text(&base, name, text, len, &vo, d);
	if (rc)
		return rc;
	size_t n = base.n_rows;
	double *in = calloc(n ? n : 1, sizeof(double));
	double *outv = calloc(n ? n : 1, sizeof(double));
	double *pred_out = calloc(n ? n : 1, sizeof(double));
	double *scratch = calloc(n ? n : 1, sizeof(double));
	bool *used = calloc(n ? n : 1, sizeof(bool));
	bool *held = calloc(n ? n : 1, sizeof(bool));
	bool *sel = calloc(n ? n : 1, sizeof(bool));
	bool *eng_in = calloc(n ? n : 1, sizeof(bool));
	const char **keys = calloc(n ? n : 1, sizeof(char *));
	const char **grp = calloc(n ? n : 1, sizeof(char *)); /* each row's group */
	/* a fold holds out at most one family per row and stands in for
	 * at most every override once */
	struct held_family {
		const char *id;
		struct cat_family *fam;
		double saved[CALIB_FAMILY_FIELDS];
	} *fams = calloc(n ? n : 1, sizeof(*fams));
	size_t ovs_cap = 0;
	for (size_t i = 0; i < et->count; i++)
		ovs_cap += et->engines[i].override_count;
	struct saved_override *ovs = calloc(ovs_cap ? ovs_cap : 1, sizeof(*ovs));
	size_t cap = 0, n_keys = 0, n_ovs = 0;
	if (!in || !outv || !pred_out || !scratch || !used || !held || !sel || !eng_in || !keys ||
	    !grp || !fams || !ovs) {
		rc = diag_set(d, DIAG_ENOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		const struct validate_row *r = &base.rows[i];
		used[i] = !r->skipped && !r->excluded;
		in[i] = r->ape_pct;
		outv[i] = NAN;
		grp[i] = group_of(cat, &base, i, g);
		if (used[i])
			keys[n_keys++] = grp[i];
	}
	qsort(keys, n_keys, sizeof(char *), cmp_str);
	size_t uniq = 0;
	for (size_t i = 0; i < n_keys; i++)
		if (!uniq || strcmp(keys[uniq - 1], keys[i]) != 0)
			keys[uniq++] = keys[i];
	for (size_t k = 0; k < uniq && !rc; k++) {
		for (size_t i = 0; i < n; i++)
			held[i] = used[i] && strcmp(grp[i], keys[k]) == 0;
		struct fitparams_opts fo = *o;
		fo.exclude = held;
		fo.exclude_n = n;
		struct fitparams_fit fit;
		struct diag fd;
		diag_init(&fd);
		int frc = fitparams_fit_run(&fit, cat, et, name, text, len, &fo, &fd);
		if (frc && frc != DIAG_EINPUT) {
			rc = diag_set(d, frc, "%s", fd.msg);
			break;
		}
		/* families with every row held out stand in for new hardware */
		size_t n_fam = 0;
		int src = 0;
		for (size_t i = 0; i < n && !frc && !src; i++) {
			if (!held[i])
				continue;
			const char *fid = base.rows[i].family;
			bool seen = false, kept = false;
			for (size_t f = 0; f < n_fam && !seen; f++)
				seen = strcmp(fams[f].id, fid) == 0;
			for (size_t r = 0; r < n && !kept; r++)
				kept = used[r] && !held[r] && strcmp(base.rows[r].family, fid) == 0;
			struct cat_family *fam = catalog_family_mut(cat, fid);
			if (seen || kept || !fam)
				continue;
			fams[n_fam].fam = fam;
			fams[n_fam].id = fid;
			src = stand_in_family(fam, cat, &fit, fams[n_fam].saved, d);
			n_fam++;
			if (!src)
				n_ovs = stand_in_overrides(et, fid, &fit, ovs, n_ovs, ovs_cap);
		}
		/* a held-out row whose engine has no fitted row left in the
		 * fold runs on the engine's shipped figures, which were set
		 * with it in view: say so (no stand-in exists for an engine) */
		for (size_t i = 0; i < n; i++) {
			if (!held[i])
				continue;
			bool kept = false;
			for (size_t q = 0; !frc && q < fit.n_res && !kept; q++)
				kept = strcmp(fit.res[q].engine, base.rows[i].engine) == 0;
			eng_in[i] = !kept;
		}
		/* a fold that leaves no row to fit keeps the shipped values */
		struct validate_report rep;
		struct validate_opts po = vo;
		po.row_mask = held;
		po.row_mask_n = n;
		rc = src ? src : validate_run_text(&rep, name, text, len, &po, d);
		for (size_t v = n_ovs; v-- > 0;)
			*ovs[v].o = ovs[v].copy;
		n_ovs = 0;
		for (size_t f = 0; f < n_fam; f++)
			restore_family(fams[f].fam, fams[f].saved);
		if (!frc)
			fitparams_apply(&fit, cat, et, false);
		fitparams_fit_release(&fit);
		if (rc)
			break;
		for (size_t i = 0; i < n; i++)
			if (held[i]) {
				outv[i] = rep.rows[i].skipped ? NAN : rep.rows[i].ape_pct;
				pred_out[i] = rep.rows[i].predicted;
			}
		validate_release(&rep);
		cv->n_folds++;
	}
	/* a held-out row the refit could not predict is left out of both sides */
	for (size_t i = 0; i < n; i++)
		if (used[i] && !isfinite(outv[i]))
			used[i] = false;
	for (size_t k = 0; k < uniq && !rc; k++)
		for (int m = 0; m < VM_COUNT && !rc; m++) {
			for (size_t i = 0; i < n; i++)
				sel[i] = used[i] && base.rows[i].metric == (enum validate_metric)m &&
					 strcmp(grp[i], keys[k]) == 0;
			rc = add_cell(cv, &cap, keys[k], (enum validate_metric)m, in, outv, sel, n,
				      scratch, d);
		}
	for (int m = 0; m < VM_COUNT && !rc; m++) {
		for (size_t i = 0; i < n; i++)
			sel[i] = used[i] && base.rows[i].metric == (enum validate_metric)m;
		rc = add_cell(cv, &cap, "all", (enum validate_metric)m, in, outv, sel, n, scratch, d);
	}
	if (!rc && n_keys) {
		cv->rows = calloc(n, sizeof(*cv->rows));
		if (!cv->rows)
			rc = diag_set(d, DIAG_ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < n && !rc; i++) {
		if (!used[i])
			continue;
		const struct validate_row *r = &base.rows[i];
		struct fitparams_cv_row *cr = &cv->rows[cv->n_rows++];
		cr->line = r->line;
		cr->metric = r->metric;
		snprintf(cr->group, sizeof(cr->group), "%s", grp[i]);
		snprintf(cr->family, sizeof(cr->family), "%s", r->family);
		snprintf(cr->engine, sizeof(cr->engine), "%s", r->engine);
		cr->measured = r->measured;
		cr->predicted_in = r->predicted;
		cr->predicted_out = pred_out[i];
		cr->engine_in_sample = eng_in[i];
	}
out:
	free(in);
	free(outv);
	free(pred_out);
	free(scratch);
	free(used);
	free(held);
	free(sel);
	free(eng_in);
	free(keys);
	free(grp);
	free(fams);
	free(ovs);
	validate_release(&base);
	if (rc)
		fitparams_cv_release(cv);
	return rc;
}

int fitparams_cv_write_text(FILE *out, const struct fitparams_cv *cv, struct diag *d)
{
	fprintf(out, "leave one %s out: refit without the group's rows, predict them (%zu folds)\n",
		fitparams_group_name(cv->group), cv->n_folds);
	fprintf(out, "%-24s %-24s %4s %12s %9s %12s %9s\n", fitparams_group_name(cv->group), "metric", "n",
		"in median%", "in p90%", "out median%", "out p90%");
	for (size_t i = 0; i < cv->n_cells; i++) {
		const struct fitparams_cv_cell *c = &cv->cells[i];
		if (i > 0 && strcmp(c->group, "all") == 0 && strcmp(cv->cells[i - 1].group, "all") != 0)
			fputc('\n', out);
		fprintf(out, "%-24.24s %-24s %4zu %12.1f %9.1f %12.1f %9.1f\n", c->group,
			validate_metric_name(c->metric), c->n, c->in_median, c->in_p90, c->out_median,
			c->out_p90);
	}
	/* the rows whose engine the fold could not refit, by engine in the
	 * order they first come */
	bool first = true;
	for (size_t i = 0; i < cv->n_rows; i++) {
		const struct fitparams_cv_row *r = &cv->rows[i];
		bool seen = false;
		for (size_t k = 0; k < i && !seen; k++)
			seen = cv->rows[k].engine_in_sample &&
			       strcmp(cv->rows[k].engine, r->engine) == 0;
		if (!r->engine_in_sample || seen)
			continue;
		size_t m = 0;
		for (size_t k = i; k < cv->n_rows; k++)
			m += cv->rows[k].engine_in_sample && strcmp(cv->rows[k].engine, r->engine) == 0;
		if (first)
			fputs("\nheld-out rows whose engine the fold could not refit (no fitted row of "
			      "it left):\nthey ran on the engine's shipped figures, set with them in "
			      "view\n", out);
		fprintf(out, "  %-22s %4zu\n", r->engine, m);
		first = false;
	}
	if (ferror(out))
		return diag_set(d, DIAG_EIO, "cannot write the cross-validation table");
	return 0;
}

static void json_ape(FILE *out, double predicted, double measured)
{
	if (predicted > 0 && measured > 0)
		jsonw_num(out, 100.0 * fabs(predicted - measured) / measured);
	else
		fputs("null", out);
}

int fitparams_cv_write_json(FILE *out, const struct fitparams_cv *cv, struct diag *d)
{
	fprintf(out, "{\n  \"schema_version\": 1,\n  \"grouping\": \"%s\",\n  \"folds\": %zu,\n"
		"  \"cells\": [", fitparams_group_name(cv->group), cv->n_folds);
	for (size_t i = 0; i < cv->n_cells; i++) {
		const struct fitparams_cv_cell *c = &cv->cells[i];
		fputs(i ? ",\n    {\"group\": " : "\n    {\"group\": ", out);
		jsonw_str(out, c->group);
		fprintf(out, ", \"metric\": \"%s\", \"n\": %zu, \"in_median_pct\": ",
			validate_metric_name(c->metric), c->n);
		jsonw_num(out, c->in_median);
		fputs(", \"in_p90_pct\": ", out);
		jsonw_num(out, c->in_p90);
		fputs(", \"out_median_pct\": ", out);
		jsonw_num(out, c->out_median);
		fputs(", \"out_p90_pct\": ", out);
		jsonw_num(out, c->out_p90);
		fputc('}', out);
	}
	fputs(cv->n_cells ? "\n  ],\n  \"rows\": [" : "],\n  \"rows\": [", out);
	for (size_t i = 0; i < cv->n_rows; i++) {
		const struct fitparams_cv_row *r = &cv->rows[i];
		fprintf(out, "%s    {\"line\": %ld, \"metric\": \"%s\", \"group\": ", i ? ",\n" : "\n",
			r->line, validate_metric_name(r->metric));
		jsonw_str(out, r->group);
		fputs(", \"family\": ", out);
		jsonw_str(out, r->family);
		fputs(", \"engine\": ", out);
		jsonw_str(out, r->engine);
		fputs(", \"measured\": ", out);
		jsonw_num(out, r->measured);
		fputs(", \"predicted_in\": ", out);
		jsonw_num(out, r->predicted_in);
		fputs(", \"predicted_out\": ", out);
		jsonw_num(out, r->predicted_out);
		fputs(", \"ape_in_pct\": ", out);
		json_ape(out, r->predicted_in, r->measured);
		fputs(", \"ape_out_pct\": ", out);
		json_ape(out, r->predicted_out, r->measured);
		fprintf(out, ", \"engine_in_sample\": %s}", r->engine_in_sample ? "true" : "false");
	}
	fputs(cv->n_rows ? "\n  ]\n}\n" : "]\n}\n", out);
	if (ferror(out))
		return diag_set(d, DIAG_EIO, "cannot write the cross-validation report");
	return 0;
}

int fitparams_cv_bands(struct uncert_table *t, const struct fitparams_cv *cv, const char *without,
		   double coverage, size_t min_rows, struct diag *d)
{
	struct uncert_sample *s = calloc(cv->n_rows ? cv->n_rows : 1, sizeof(*s));
	if (!s)
		return diag_set(d, DIAG_ENOMEM, "out of memory");
	size_t n = 0;
	for (size_t i = 0; i < cv->n_rows; i++) {
		const struct fitparams_cv_row *r = &cv->rows[i];
		if (without && strcmp(r->group, without) == 0)
			continue;
		if (!(r->predicted_out > 0 && r->measured > 0))
			continue;
		s[n++] = (struct uncert_sample){ .family = r->family, .engine = r->engine,
						 .metric = validate_metric_name(r->metric),
						 .log_error = log(r->predicted_out / r->measured) };
	}
	int rc = uncert_build(t, s, n, coverage, min_rows, d);
	if (!rc)
		snprintf(t->grouping, sizeof(t->grouping), "%s", fitparams_group_name(cv->group));
	free(s);
	return rc;
}

int fitparams_cv_dim(struct uncert_dim *dm, const struct fitparams_cv *cv, double coverage,
		     struct diag *d)
{
	memset(dm, 0, sizeof(*dm));
	snprintf(dm->name, sizeof(dm->name), "%s", fitparams_group_name(cv->group));
	double *v = calloc(cv->n_rows ? cv->n_rows : 1, sizeof(*v));
	if (!v)
		return diag_set(d, DIAG_ENOMEM, "out of memory");
	size_t n = 0;
	int rc = 0;
	for (size_t i = 0; i < cv->n_rows && !rc; i++) {
		const struct fitparams_cv_row *r = &cv->rows[i];
		bool known = false;
		for (size_t k = 0; k < dm->n_covered && !known; k++)
			known = strcmp(dm->covered[k], r->group) == 0;
		if (!known) {
			if (dm->n_covered == UNCERT_COVERED_MAX || strlen(r->group) >= UNCERT_ID_MAX)
				rc = diag_set(d, DIAG_EINPUT, "leave one %s out: more than %d values, "
					      "or one of %d characters or more (expected fewer)",
					      dm->name, UNCERT_COVERED_MAX, UNCERT_ID_MAX);
			else
				snprintf(dm->covered[dm->n_covered++], UNCERT_ID_MAX, "%s", r->group);
		}
		if (r->predicted_out > 0 && r->measured > 0)
			v[n++] = fabs(log(r->predicted_out / r->measured));
	}
	if (!rc && n == 0)
		rc = diag_set(d, DIAG_EINPUT, "leave one %s out: no row predicted (expected rows the "
			      "model predicts)", dm->name);
	if (!rc) {
		qsort(dm->covered, dm->n_covered, sizeof(dm->covered[0]), cmp_covered);
		gsl_sort(v, 1, n);
		size_t k = (size_t)ceil(coverage * (double)n - 1e-9);
		k = k < 1 ? 1 : k > n ? n : k;
		dm->log_band = v[k - 1];
	}
	free(v);
	return rc;
}

static bool band_covers(const struct uncert_table *t, const struct fitparams_cv_row *r)
{
	struct uncert_band b = uncert_lookup(t, r->family, r->engine, validate_metric_name(r->metric));
	return b.regime && fabs(log(r->predicted_out / r->measured)) <= b.log_band;
}

int fitparams_cv_band_coverage(const struct fitparams_cv *cv, const struct uncert_table *t,
			   size_t *in_sample, size_t *nested, size_t *total, struct diag *d)
{
	*in_sample = *nested = *total = 0;
	for (size_t i = 0; i < cv->n_rows; i++) {
		const struct fitparams_cv_row *r = &cv->rows[i];
		if (!(r->predicted_out > 0 && r->measured > 0))
			continue;
		(*total)++;
		*in_sample += band_covers(t, r);
		bool first = true;
		for (size_t k = 0; k < i && first; k++)
			first = strcmp(cv->rows[k].group, r->group) != 0;
		if (!first)
			continue;
		struct uncert_table u;
		uncert_init(&u);
		int rc = fitparams_cv_bands(&u, cv, r->group, t->coverage, t->min_rows, d);
		if (rc == DIAG_EINPUT) /* one group only: nothing to build from */
			continue;
		if (rc)
			return rc;
		for (size_t k = i; k < cv->n_rows; k++)
			if (strcmp(cv->rows[k].group, r->group) == 0 && cv->rows[k].predicted_out > 0 &&
			    cv->rows[k].measured > 0)
				*nested += band_covers(&u, &cv->rows[k]);
		uncert_release(&u);
	}
	return 0;
}
