/* SPDX-License-Identifier: Apache-2.0
 * profile: measured step profiles as ratio curves (see profile.h). */
#include "models/profile.h"

#include <gsl/gsl_errno.h>
#include <gsl/gsl_interp.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "models/catalog.h"
#include "models/csvread.h"
#include "models/perf_model.h"

/* One phase: ratio against log(batch), sorted by batch. */
struct curve {
	double *x;                 /* log(batch) */
	double *y;                 /* ratio */
	size_t n;
	gsl_interp *interp;        /* NULL when n < 2 */
};

struct perf_profile {
	struct curve decode;
	struct curve prefill;
};

static void curve_release(struct curve *c)
{
	if (c->interp)
		gsl_interp_free(c->interp);
	free(c->x);
	free(c->y);
	memset(c, 0, sizeof(*c));
}

void perf_profile_free(struct perf_profile *p)
{
	if (!p)
		return;
	curve_release(&p->decode);
	curve_release(&p->prefill);
	free(p);
}

static double curve_eval(const struct curve *c, double batch)
{
	if (c->n == 1)
		return c->y[0];
	double x = log(batch);
	if (x <= c->x[0])
		return c->y[0];
	if (x >= c->x[c->n - 1])
		return c->y[c->n - 1];
	double y;
	if (gsl_interp_eval_e(c->interp, c->x, c->y, x, NULL, &y) != GSL_SUCCESS)
		return c->y[0]; /* cannot happen inside the range */
	return y;
}

double perf_profile_ratio(const struct perf_profile *p, const struct perf_batch *b)
{
	if (b->new_tokens <= 0)
		return 1;
	bool decode = b->decode_seqs == b->seqs && b->new_tokens == b->seqs;
	const struct curve *c = decode ? &p->decode : &p->prefill;
	if (c->n == 0)
		c = decode ? &p->prefill : &p->decode;
	if (c->n == 0)
		return 1;
	return curve_eval(c, decode ? (double)b->seqs : (double)b->new_tokens);
}

size_t perf_profile_decode_points(const struct perf_profile *p)
{
	return p->decode.n;
}

size_t perf_profile_prefill_points(const struct perf_profile *p)
{
	return p->prefill.n;
}

struct point {
	double batch;
	double log_ratio;
};

static int point_cmp(const void *a, const void *b)
{
	double x = ((const struct point *)a)->batch, y = ((const struct point *)b)->batch;
	return (x > y) - (x < y);
}

/* Sort, merge equal batch sizes (geometric mean), build the interpolant. */
static int curve_build(struct curve *c, struct point *pts, size_t n, struct diag *d)
{
	if (n == 0)
		return 0;
	qsort(pts, n, sizeof(*pts), point_cmp);
	c->x = malloc(n * sizeof(double));
	c->y = malloc(n * sizeof(double));
	if (!c->x || !c->y)
		return diag_set(d, DIAG_ENOMEM, "out of memory");
	size_t i = 0;
	while (i < n) {
		size_t j = i;
		double sum = 0;
		while (j < n && pts[j].batch == pts[i].batch)
			sum += pts[j++].log_ratio;
		c->x[c->n] = log(pts[i].batch);
		c->y[c->n] = exp(sum / (double)(j - i));
		c->n++;
		i = j;
	}
	if (c->n >= 2) {
		const gsl_interp_type *type = c->n >= 3 ? gsl_interp_steffen : gsl_interp_linear;
		c->interp = gsl_interp_alloc(type, c->n);
		if (!c->interp || gsl_interp_init(c->interp, c->x, c->y, c->n) != GSL_SUCCESS)
			return diag_set(d, DIAG_ENOMEM, "cannot build the profile interpolation");
	}
	return 0;
}

static int build(struct perf_profile *p, const struct csvread *t, const struct perf_model *pm,
		 struct diag *d)
{
	int c_phase = csvread_col(t, "phase"), c_batch = csvread_col(t, "batch");
	int c_ctx = csvread_col(t, "context_tokens"), c_ms = csvread_col(t, "step_ms");
	int c_hw = csvread_col(t, "hardware"), c_model = csvread_col(t, "model");
	if (c_phase < 0 || c_batch < 0 || c_ctx < 0 || c_ms < 0)
		return diag_at(d, DIAG_EINPUT, t->path, 1, 0,
			       "missing column (expected phase, batch, context_tokens, step_ms; "
			       "optional hardware, model)");
	if (t->rows == 0)
		return diag_at(d, DIAG_EINPUT, t->path, 1, 0, "no rows (expected at least one "
			       "measured step)");
	struct point *dec = calloc(t->rows, sizeof(*dec));
	struct point *pre = calloc(t->rows, sizeof(*pre));
	size_t nd = 0, np = 0;
	int rc = (!dec || !pre) ? diag_set(d, DIAG_ENOMEM, "out of memory") : 0;
	for (size_t r = 0; r < t->rows && !rc; r++) {
		long line = t->lines[r];
		const char *hw = csvread_cell(t, r, c_hw), *model = csvread_cell(t, r, c_model);
		if (c_hw >= 0 && hw[0] && !catalog_name_eq(hw, pm->hardware_id)) {
			rc = diag_at(d, DIAG_EINPUT, t->path, line, 0, "profile row is for hardware "
				     "'%s', not '%s' (use the catalogue id)", hw, pm->hardware_id);
			break;
		}
		if (c_model >= 0 && model[0] && !catalog_name_eq(model, pm->model_id)) {
			rc = diag_at(d, DIAG_EINPUT, t->path, line, 0, "profile row is for model "
				     "'%s', not '%s' (use the catalogue id)", model, pm->model_id);
			break;
		}
		double batch, ctx, ms;
		if ((rc = csvread_number(t, r, c_batch, 0, &batch, d)) ||
		    (rc = csvread_number(t, r, c_ctx, 0, &ctx, d)) ||
		    (rc = csvread_number(t, r, c_ms, 0, &ms, d)))
			break;
		if (!(batch >= 1 && batch <= 1e7 && batch == floor(batch)) ||
		    !(ctx >= 0 && ctx <= 1e9 && ctx == floor(ctx)) || !(ms > 0)) {
			rc = diag_at(d, DIAG_EINPUT, t->path, line, 0,
				     "expected a whole batch >= 1, a whole context_tokens >= 0 "
				     "and step_ms > 0");
			break;
		}
		const char *phase = csvread_cell(t, r, c_phase);
		struct perf_batch b;
		struct point *dst;
		if (strcmp(phase, "decode") == 0) {
			b = perf_decode_batch((int32_t)batch, (int64_t)ctx);
			dst = &dec[nd++];
		} else if (strcmp(phase, "prefill") == 0) {
			b = perf_prefill_batch((int64_t)batch, (int64_t)ctx);
			dst = &pre[np++];
		} else {
			rc = diag_at(d, DIAG_EINPUT, t->path, line, 0,
				     "phase '%s' (expected decode or prefill)", phase);
			break;
		}
		double model_ns = perf_step_analytic_ns(pm, &b);
		dst->batch = batch;
		dst->log_ratio = log(ms * 1e6 / model_ns);
	}
	if (!rc)
		rc = curve_build(&p->decode, dec, nd, d);
	if (!rc)
		rc = curve_build(&p->prefill, pre, np, d);
	free(dec);
	free(pre);
	return rc;
}

static int finish(struct perf_profile **out, struct csvread *t, const struct perf_model *pm,
		  struct diag *d)
{
	struct perf_profile *p = calloc(1, sizeof(*p));
	int rc = p ? build(p, t, pm, d) : diag_set(d, DIAG_ENOMEM, "out of memory");
	csvread_release(t);
	if (rc) {
		perf_profile_free(p);
		return rc;
	}
	*out = p;
	return 0;
}

int perf_profile_load(struct perf_profile **out, const char *path,
		      const struct perf_model *pm, struct diag *d)
{
	*out = NULL;
	struct csvread t;
	int rc = csvread_load(&t, path, d);
	if (rc)
		return rc;
	return finish(out, &t, pm, d);
}

int perf_profile_parse(struct perf_profile **out, const char *name, const char *text,
		       size_t len, const struct perf_model *pm, struct diag *d)
{
	*out = NULL;
	struct csvread t;
	int rc = csvread_parse(&t, name, text, len, d);
	if (rc)
		return rc;
	return finish(out, &t, pm, d);
}
