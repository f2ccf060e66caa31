/* SPDX-License-Identifier: Apache-2.0
 * preflight: catalogue checks of a deployment before a replay (see
 * preflight.h). */
#include "models/preflight.h"

#include <stdlib.h>
#include <string.h>

/* Engines of t with a backend for family_id, comma-separated. */
static void engines_for(const struct engine_table *t, const char *family_id, char *buf,
			size_t size)
{
	size_t n = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < t->count && n + 1 < size; i++) {
		if (!engine_runs_on(&t->engines[i], family_id))
			continue;
		int k = snprintf(buf + n, size - n, "%s%s", n ? ", " : "", t->engines[i].id);
		if (k < 0)
			break;
		n += (size_t)k;
	}
}

static bool low_precision(enum cat_dtype t)
{
	return t == CAT_DTYPE_FP8 || t == CAT_DTYPE_INT8 || t == CAT_DTYPE_FP4;
}

int preflight_deployment(const struct catalog *cat, const struct engine_table *et,
			 const struct perf_model *pm, int64_t max_model_len, struct warn_list *w,
			 struct diag *d)
{
	struct engine_table *own = NULL;
	if (!et)
		et = cat->engines;
	if (!et) {
		own = malloc(sizeof(*own));
		if (!own)
			return diag_set(d, DIAG_ENOMEM, "out of memory for the engine table");
		int rc = engine_table_load(own, NULL, d);
		if (rc != 0) {
			free(own);
			return rc;
		}
		et = own;
	}
	int rc = 0;
	const struct engine_profile *e = engine_find(et, pm->engine_id);
	const struct cat_hardware *hw = catalog_hardware(cat, pm->hardware_id);
	const struct cat_model *m = catalog_model(cat, pm->model_id);
	const struct cat_weight_format *wf = catalog_weight_format(cat, pm->weight_format_id);
	if (!e || !hw || !m || !wf) {
		rc = diag_set(d, DIAG_EINTERNAL, "pre-flight: the resolved deployment is not in the "
			      "catalogue");
		goto out;
	}
	if (!engine_runs_on(e, pm->family_id)) {
		char ok[256];
		engines_for(et, pm->family_id, ok, sizeof(ok));
		rc = diag_set(d, DIAG_EINPUT,
			      "engine_profile '%s' does not run on %s (hardware family %s): %s. "
			      "Engines that do: %s",
			      e->id, hw->id, pm->family_id,
			      e->runs_on_source[0] ? e->runs_on_source : "no backend for it",
			      ok[0] ? ok : "none in the engine table");
		goto out;
	}
	if (!engine_supports_format(e, wf->id)) {
		char fmts[512] = "";
		size_t n = 0;
		for (size_t i = 0; i < e->format_count && n + 1 < sizeof(fmts); i++) {
			int k = snprintf(fmts + n, sizeof(fmts) - n, "%s%s", i ? ", " : "",
					 e->formats[i]);
			if (k < 0)
				break;
			n += (size_t)k;
		}
		rc = diag_set(d, DIAG_EINPUT,
			      "engine_profile '%s' does not load weight format '%s' (it loads %s)",
			      e->id, wf->id, fmts);
		goto out;
	}
	if (max_model_len > m->max_context) {
		rc = diag_set(d, DIAG_EINPUT,
			      "engine.max_model_len %lld is beyond %s's context of %lld tokens: vLLM "
			      "refuses a max_model_len past the model's max_position_embeddings, and "
			      "positions past it were never trained (expected at most %lld, or null "
			      "for the model's context)",
			      (long long)max_model_len, m->id, (long long)m->max_context,
			      (long long)m->max_context);
		goto out;
	}
	if (low_precision(wf->compute_dtype) && pm->matmul_dtype != wf->compute_dtype)
		warn_add(w, "format_compute",
			 "Weight format %s wants %s matmuls, which %s (%s) cannot compute: it is "
			 "modelled as the engines run it there, weights stored in %s and widened "
			 "to %s in the kernels, so compute-bound steps (prefill) run at the %s rate "
			 "while decode still reads the smaller weights.",
			 wf->id, cat_dtype_name(wf->compute_dtype), hw->id, pm->family_id, wf->id,
			 cat_dtype_name(pm->matmul_dtype), cat_dtype_name(pm->matmul_dtype));
out:
	free(own);
	return rc;
}
