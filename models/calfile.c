/* SPDX-License-Identifier: Apache-2.0
 * calfile: the calibration behind a prediction, built-in or a team's own
 * (see calfile.h).
 *
 * The file is read with cJSON whole (it is small: CALFILE_MAX_BYTES); every
 * key that matters is checked and a bad one is named by its path.  The
 * built-in rows are the embedded measurements.csv read with csvread.
 */
#include "models/calfile.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <zlib.h>

#include "base/textfile.h"
#include "models/csvread.h"

extern const char calibration_measurements_csv[];

#define BUILTIN_CSV_NAME "models/calibration/measurements.csv"

void calfile_free(struct calfile *cf)
{
	if (!cf)
		return;
	free(cf->params);
	free(cf->rows);
	free(cf->csv);
	free(cf);
}

static struct calfile *calfile_new(const char *path, struct diag *d)
{
	struct calfile *cf = calloc(1, sizeof(*cf));
	if (!cf) {
		diag_set(d, DIAG_ENOMEM, "out of memory");
		return NULL;
	}
	snprintf(cf->path, sizeof(cf->path), "%s", path);
	return cf;
}

/* ---- reading a file ---- */

static const char *const field_names[] = {
	"eff_compute", "eff_bw", "step_overhead_us", "layer_overhead_us", "compute_scale",
	"attention_scale", "quant_bw_scale", "moe_scale", "moe_layer_overhead_us",
	"quant_matmul_flops_per_core_clock", "matvec_bytes_per_core_clock",
	"quant_matvec_bytes_per_core_clock", "attention_scale_without_fa", "moe_host_routing_us",
	"eff_issue", "sm_w_at_1ghz",
};

static bool known_field(enum calfile_target t, const char *f)
{
	/* a family has its five factors; an engine every other field; an
	 * override what engines.json lets one set (engine.c params): not the
	 * per-core figures, which are the engine's alone */
	size_t n = sizeof(field_names) / sizeof(field_names[0]);
	for (size_t i = 0; i < n; i++) {
		if (strcmp(f, field_names[i]) != 0)
			continue;
		bool family_only = i < 2 || strcmp(f, "eff_issue") == 0 ||
				   strcmp(f, "sm_w_at_1ghz") == 0;
		bool per_core = strstr(f, "_per_core_clock") != NULL;
		if (t == CALFILE_FAMILY)
			return family_only || strcmp(f, "step_overhead_us") == 0;
		if (t == CALFILE_OVERRIDE)
			return !family_only && !per_core;
		return !family_only;
	}
	return false;
}

static bool is_fraction_field(const char *f)
{
	return strcmp(f, "eff_compute") == 0 || strcmp(f, "eff_bw") == 0 ||
	       strcmp(f, "eff_issue") == 0 || strstr(f, "_scale") != NULL;
}

static const char *jstr(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

static bool jnum(const cJSON *o, const char *key, double *out)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble))
		return false;
	*out = v->valuedouble;
	return true;
}

static int read_param(struct calfile_param *p, const cJSON *o, const char *name, size_t i,
		      struct diag *d)
{
	const char *t = jstr(o, "target"), *id = jstr(o, "id"), *f = jstr(o, "field");
	if (!cJSON_IsObject(o) || !t || !id || !f)
		return diag_set(d, DIAG_EINPUT, "%s: parameters[%zu]: expected an object with "
				"string keys target, id and field", name, i);
	if (strcmp(t, "family") == 0)
		p->target = CALFILE_FAMILY;
	else if (strcmp(t, "engine") == 0)
		p->target = CALFILE_ENGINE;
	else if (strcmp(t, "override") == 0)
		p->target = CALFILE_OVERRIDE;
	else
		return diag_set(d, DIAG_EINPUT, "%s: parameters[%zu].target: '%s' (expected family, "
				"engine or override)", name, i, t);
	if (!known_field(p->target, f))
		return diag_set(d, DIAG_EINPUT, "%s: parameters[%zu].field: '%s' is not a %s "
				"parameter (expected %s)", name, i, f, t,
				p->target == CALFILE_FAMILY
					? "eff_compute, eff_bw, step_overhead_us, eff_issue or sm_w_at_1ghz"
					: p->target == CALFILE_OVERRIDE
					? "step_overhead_us, layer_overhead_us, compute_scale, "
					  "attention_scale, quant_bw_scale, moe_scale, "
					  "moe_layer_overhead_us, attention_scale_without_fa or "
					  "moe_host_routing_us"
					: "step_overhead_us, layer_overhead_us, compute_scale, "
					  "attention_scale, quant_bw_scale, moe_scale, "
					  "moe_layer_overhead_us, quant_matmul_flops_per_core_clock, "
					  "matvec_bytes_per_core_clock, "
					  "quant_matvec_bytes_per_core_clock, "
					  "attention_scale_without_fa or moe_host_routing_us");
	if (strlen(id) >= sizeof(p->id))
		return diag_set(d, DIAG_EINPUT, "%s: parameters[%zu].id: too long", name, i);
	snprintf(p->id, sizeof(p->id), "%s", id);
	snprintf(p->field, sizeof(p->field), "%s", f);
	if (p->target == CALFILE_OVERRIDE) {
		const char *fp = jstr(o, "family_prefix");
		if (!fp || strlen(fp) >= sizeof(p->family_prefix))
			return diag_set(d, DIAG_EINPUT, "%s: parameters[%zu].family_prefix: expected "
					"a string (an override names its family prefix)", name, i);
		snprintf(p->family_prefix, sizeof(p->family_prefix), "%s", fp);
	}
	/* the bounds the fit keeps (calib/fitparams.c): a fraction from 1e-6 to
	 * 1, any other figure from 1e-3 to 1e7 */
	bool frac = is_fraction_field(f);
	if (!jnum(o, "fitted", &p->value) ||
	    (frac ? !(p->value >= 1e-6 && p->value <= 1) : !(p->value >= 1e-3 && p->value <= 1e7)))
		return diag_set(d, DIAG_EINPUT, "%s: parameters[%zu].fitted: expected %s", name, i,
				frac ? "a fraction from 1e-6 to 1"
				     : "a positive number from 1e-3 to 1e7 (microseconds, or FLOP "
				       "or bytes per core clock)");
	return 0;
}

static void copy_str(char *dst, size_t size, const char *s)
{
	snprintf(dst, size, "%s", s ? s : "");
}

static int read_row(struct calfile_row *r, const cJSON *o, const char *name, size_t i,
		    struct diag *d)
{
	const char *hw = jstr(o, "hardware"), *m = jstr(o, "model");
	const char *e = jstr(o, "engine_profile") ? jstr(o, "engine_profile") : jstr(o, "engine");
	const char *met = jstr(o, "metric");
	double g = 1, v = NAN, c = 0, in = -1, out = -1;
	if (!cJSON_IsObject(o) || !hw || !m || !e || !met || !jnum(o, "value", &v))
		return diag_set(d, DIAG_EINPUT, "%s: rows[%zu]: expected an object with hardware, "
				"model, engine, metric and value", name, i);
	/* the optional counts: whole numbers in range when present */
	static const struct {
		const char *key;
		double lo, hi;
	} counts[] = { { "n_gpus", 1, 1e6 }, { "concurrency", 0, 1e9 },
		       { "input_tokens", 0, 1e12 }, { "output_tokens", 0, 1e12 } };
	double *dst[] = { &g, &c, &in, &out };
	for (size_t k = 0; k < sizeof(counts) / sizeof(counts[0]); k++) {
		const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, counts[k].key);
		if (!it || cJSON_IsNull(it))
			continue;
		if (!cJSON_IsNumber(it) || !(it->valuedouble >= counts[k].lo &&
					     it->valuedouble <= counts[k].hi) ||
		    (k != 1 && it->valuedouble != floor(it->valuedouble)))
			return diag_set(d, DIAG_EINPUT, "%s: rows[%zu].%s: expected %s from %g to "
					"%g", name, i, counts[k].key,
					k == 1 ? "a number" : "a whole number", counts[k].lo,
					counts[k].hi);
		*dst[k] = it->valuedouble;
	}
	double line = NAN;
	r->line = jnum(o, "line", &line) && line >= 1 && line < 1e9 ? (long)line : (long)i + 1;
	copy_str(r->hardware, sizeof(r->hardware), hw);
	copy_str(r->model, sizeof(r->model), m);
	copy_str(r->engine, sizeof(r->engine), e);
	copy_str(r->metric, sizeof(r->metric), met);
	r->n_gpus = g >= 1 && g < 1e6 ? (int)g : 1;
	r->concurrency = c > 0 ? c : 0;
	r->input_tokens = in >= 0 ? (int64_t)in : -1;
	r->output_tokens = out >= 0 ? (int64_t)out : -1;
	r->value = v;
	return 0;
}

int calfile_parse(struct calfile **out, const char *name, const char *text, size_t len,
		  struct diag *d)
{
	*out = NULL;
	const char *end = NULL;
	cJSON *root = cJSON_ParseWithLengthOpts(text, len, &end, false);
	if (!root) {
		long line = 1, col = 1;
		const char *at = cJSON_GetErrorPtr();
		if (at && at >= text && at <= text + len)
			textfile_line_col(text, at, &line, &col);
		return diag_at(d, DIAG_EINPUT, name, line, col, "not JSON (expected an agentcap "
			       "calibration file, written by agentcap calibrate)");
	}
	const char *rest = end ? end : text + len;
	while (rest < text + len && (*rest == ' ' || *rest == '\t' || *rest == '\n' || *rest == '\r'))
		rest++;
	if (rest < text + len) {
		long line = 1, col = 1;
		textfile_line_col(text, rest, &line, &col);
		cJSON_Delete(root);
		return diag_at(d, DIAG_EINPUT, name, line, col, "text after the JSON document "
			       "(expected one calibration file object)");
	}
	int rc = 0;
	const char *fmt = jstr(root, "format");
	if (!cJSON_IsObject(root) || !fmt || strcmp(fmt, CALFILE_FORMAT) != 0) {
		rc = diag_set(d, DIAG_EINPUT, "%s: not an agentcap calibration file (expected "
			      "\"format\": \"%s\", written by agentcap calibrate)", name,
			      CALFILE_FORMAT);
		goto out;
	}
	double ver = 0;
	if (!jnum(root, "schema_version", &ver) || ver != 1) {
		rc = diag_set(d, DIAG_EINPUT, "%s: schema_version: expected 1", name);
		goto out;
	}
	const cJSON *params = cJSON_GetObjectItemCaseSensitive(root, "parameters");
	const cJSON *rows = cJSON_GetObjectItemCaseSensitive(root, "rows");
	if (!cJSON_IsArray(params) || !cJSON_IsArray(rows)) {
		rc = diag_set(d, DIAG_EINPUT, "%s: expected arrays \"parameters\" and \"rows\"", name);
		goto out;
	}
	size_t np = (size_t)cJSON_GetArraySize(params), nr = (size_t)cJSON_GetArraySize(rows);
	if (np > CALFILE_PARAMS_MAX || nr > CALFILE_ROWS_MAX) {
		rc = diag_set(d, DIAG_EINPUT, "%s: %zu parameters and %zu rows (expected at most %d "
			      "and %d)", name, np, nr, CALFILE_PARAMS_MAX, CALFILE_ROWS_MAX);
		goto out;
	}
	struct calfile *cf = calfile_new(name, d);
	if (!cf) {
		rc = DIAG_ENOMEM;
		goto out;
	}
	cf->own = true;
	cf->crc32 = crc32(crc32(0L, Z_NULL, 0), (const Bytef *)text, (uInt)len);
	cf->params = calloc(np ? np : 1, sizeof(*cf->params));
	cf->rows = calloc(nr ? nr : 1, sizeof(*cf->rows));
	if (!cf->params || !cf->rows) {
		calfile_free(cf);
		rc = diag_set(d, DIAG_ENOMEM, "out of memory");
		goto out;
	}
	const cJSON *it;
	cJSON_ArrayForEach(it, params) {
		if ((rc = read_param(&cf->params[cf->n_params], it, name, cf->n_params, d)))
			break;
		cf->n_params++;
	}
	if (!rc)
		cJSON_ArrayForEach(it, rows) {
			if ((rc = read_row(&cf->rows[cf->n_rows], it, name, cf->n_rows, d)))
				break;
			cf->n_rows++;
		}
	const char *csv = jstr(root, "measurements_csv");
	if (!rc && csv) {
		size_t n = strlen(csv);
		if (!(cf->csv = malloc(n + 1)))
			rc = diag_set(d, DIAG_ENOMEM, "out of memory");
		else
			memcpy(cf->csv, csv, n + 1);
	}
	if (rc)
		calfile_free(cf);
	else
		*out = cf;
out:
	cJSON_Delete(root);
	return rc;
}

int calfile_load(struct calfile **out, const char *path, struct diag *d)
{
	*out = NULL;
	struct diag rd;
	diag_init(&rd);
	char *text = textfile_read(path, CALFILE_MAX_BYTES, "an agentcap calibration file", &rd);
	if (!text)
		return diag_set(d, rd.code ? rd.code : DIAG_EINPUT, "%s (expected an agentcap "
				"calibration file, written by agentcap calibrate)", rd.msg);
	int rc = calfile_parse(out, path, text, strlen(text), d);
	free(text);
	return rc;
}

/* ---- the built-in calibration ---- */

static void engine_text(const struct csvread *t, size_t r, int ce, int cn, char *buf, size_t n)
{
	const char *notes = csvread_cell(t, r, cn);
	const char *pub = strstr(notes, "engine_as_published=");
	if (pub) {
		pub += strlen("engine_as_published=");
		const char *end = strstr(pub, " | ");
		int k = end ? (int)(end - pub) : (int)strlen(pub);
		snprintf(buf, n, "%s %.*s", csvread_cell(t, r, ce), k, pub);
	} else {
		snprintf(buf, n, "%s", csvread_cell(t, r, ce));
	}
}

int calfile_builtin(struct calfile **out, const struct engine_table *et, struct diag *d)
{
	*out = NULL;
	struct csvread t;
	const char *text = calibration_measurements_csv;
	size_t len = strlen(text);
	int rc = csvread_parse(&t, BUILTIN_CSV_NAME, text, len, d);
	if (rc)
		return rc;
	struct engine_table *own = et ? NULL : malloc(sizeof(*own));
	struct calfile *cf = calfile_new(BUILTIN_CSV_NAME, d);
	if ((!et && !own) || !cf) {
		rc = diag_set(d, DIAG_ENOMEM, "out of memory");
		goto out;
	}
	if (own) {
		if ((rc = engine_table_load(own, NULL, d)))
			goto out;
		et = own;
	}
	cf->crc32 = crc32(crc32(0L, Z_NULL, 0), (const Bytef *)text, (uInt)len);
	cf->rows = calloc(t.rows ? t.rows : 1, sizeof(*cf->rows));
	if (!cf->rows) {
		rc = diag_set(d, DIAG_ENOMEM, "out of memory");
		goto out;
	}
	int ch = csvread_col(&t, "hardware"), cg = csvread_col(&t, "n_gpus");
	int cm = csvread_col(&t, "model"), ce = csvread_col(&t, "engine");
	int cc = csvread_col(&t, "concurrency"), ci = csvread_col(&t, "input_tokens");
	int co = csvread_col(&t, "output_tokens"), cme = csvread_col(&t, "metric");
	int cv = csvread_col(&t, "value"), cn = csvread_col(&t, "notes");
	for (size_t r = 0; r < t.rows && !rc; r++) {
		struct calfile_row *row = &cf->rows[cf->n_rows];
		double g, c, in, o, v;
		if ((rc = csvread_number(&t, r, cg, 1, &g, d)) ||
		    (rc = csvread_number(&t, r, cc, 1, &c, d)) ||
		    (rc = csvread_number(&t, r, ci, 1, &in, d)) ||
		    (rc = csvread_number(&t, r, co, 1, &o, d)) ||
		    (rc = csvread_number(&t, r, cv, 1, &v, d)))
			break;
		row->line = t.lines[r];
		copy_str(row->hardware, sizeof(row->hardware), csvread_cell(&t, r, ch));
		copy_str(row->model, sizeof(row->model), csvread_cell(&t, r, cm));
		char etext[512];
		engine_text(&t, r, ce, cn, etext, sizeof(etext));
		const struct engine_profile *ep = engine_match(et, etext);
		copy_str(row->engine, sizeof(row->engine), ep ? ep->id : csvread_cell(&t, r, ce));
		copy_str(row->metric, sizeof(row->metric), csvread_cell(&t, r, cme));
		row->n_gpus = isfinite(g) && g >= 1 ? (int)g : 1;
		row->concurrency = isfinite(c) && c > 0 ? c : 0;
		row->input_tokens = isfinite(in) ? (int64_t)in : -1;
		row->output_tokens = isfinite(o) ? (int64_t)o : -1;
		row->value = v;
		cf->n_rows++;
	}
out:
	csvread_release(&t);
	free(own);
	if (rc)
		calfile_free(cf);
	else
		*out = cf;
	return rc;
}

/* ---- applying ---- */

static double *engine_field(struct engine_params *p, const char *f)
{
	if (strcmp(f, "step_overhead_us") == 0) return &p->step_overhead_us;
	if (strcmp(f, "layer_overhead_us") == 0) return &p->layer_overhead_us;
	if (strcmp(f, "compute_scale") == 0) return &p->compute_scale;
	if (strcmp(f, "attention_scale") == 0) return &p->attention_scale;
	if (strcmp(f, "attention_scale_without_fa") == 0) return &p->attention_scale_without_fa;
	if (strcmp(f, "quant_bw_scale") == 0) return &p->quant_bw_scale;
	if (strcmp(f, "moe_scale") == 0) return &p->moe_scale;
	if (strcmp(f, "moe_layer_overhead_us") == 0) return &p->moe_layer_overhead_us;
	if (strcmp(f, "moe_host_routing_us") == 0) return &p->moe_host_routing_us;
	if (strcmp(f, "quant_matmul_flops_per_core_clock") == 0)
		return &p->quant_matmul_flops_per_core_clock;
	if (strcmp(f, "matvec_bytes_per_core_clock") == 0) return &p->matvec_bytes_per_core_clock;
	if (strcmp(f, "quant_matvec_bytes_per_core_clock") == 0)
		return &p->quant_matvec_bytes_per_core_clock;
	return NULL;
}

int calfile_apply(const struct calfile *cf, struct catalog *cat, struct engine_table *et,
		  struct diag *d)
{
	for (size_t j = 0; j < cf->n_params; j++) {
		const struct calfile_param *p = &cf->params[j];
		double *v = NULL;
		if (p->target == CALFILE_FAMILY) {
			struct cat_family *fam = catalog_family_mut(cat, p->id);
			if (!fam)
				return diag_set(d, DIAG_EINPUT, "%s: parameters[%zu]: no hardware family "
						"'%s' in the catalogue", cf->path, j, p->id);
			v = strcmp(p->field, "eff_compute") == 0 ? &fam->eff_compute
			    : strcmp(p->field, "eff_bw") == 0	  ? &fam->eff_bw
			    : strcmp(p->field, "eff_issue") == 0  ? &fam->eff_issue
			    : strcmp(p->field, "sm_w_at_1ghz") == 0 ? &fam->sm_w_at_1ghz
								  : &fam->step_overhead_us;
		} else {
			struct engine_profile *e = NULL;
			for (size_t i = 0; i < et->count && !e; i++)
				if (strcmp(et->engines[i].id, p->id) == 0)
					e = &et->engines[i];
			if (!e)
				return diag_set(d, DIAG_EINPUT, "%s: parameters[%zu]: no engine '%s' in "
						"the engine table", cf->path, j, p->id);
			if (p->target == CALFILE_ENGINE) {
				v = engine_field(&e->p, p->field);
			} else {
				for (size_t o = 0; o < e->override_count && !v; o++)
					if (strcmp(e->overrides[o].family_prefix, p->family_prefix) == 0)
						v = engine_field(&e->overrides[o].p, p->field);
				if (!v)
					return diag_set(d, DIAG_EINPUT, "%s: parameters[%zu]: engine '%s' "
							"has no override for family prefix '%s'",
							cf->path, j, p->id, p->family_prefix);
			}
		}
		if (!v)
			return diag_set(d, DIAG_EINPUT, "%s: parameters[%zu].field: '%s'", cf->path, j,
					p->field);
		*v = p->value;
	}
	return 0;
}

/* ---- distance ---- */

static const struct cat_family *family_of(const struct cat_hardware *hw)
{
	return hw->family ? hw->family : hw->device ? hw->device->family : NULL;
}

static int hardware_rank(const struct catalog *cat, const char *a, const char *b)
{
	const struct cat_hardware *x = catalog_hardware(cat, a), *y = catalog_hardware(cat, b);
	if (!x || !y)
		return catalog_name_eq(a, b) ? 0 : 2;
	if (x == y)
		return 0;
	const struct cat_family *fx = family_of(x), *fy = family_of(y);
	return fx && fx == fy ? 1 : 2;
}

static int model_rank(const struct catalog *cat, const char *a, const char *b)
{
	const struct cat_model *x = catalog_model(cat, a), *y = catalog_model(cat, b);
	if (!x || !y)
		return catalog_name_eq(a, b) ? 0 : 2;
	if (x == y)
		return 0;
	bool same_kind = (x->experts > 0) == (y->experts > 0);
	double ratio = (double)x->active_params / (double)(y->active_params > 0 ? y->active_params : 1);
	return same_kind && ratio <= 2 && ratio >= 0.5 ? 1 : 2;
}

void calfile_nearest(const struct calfile *cf, const struct catalog *cat,
		     const struct calfile_regime *r, struct calfile_near *out)
{
	memset(out, 0, sizeof(*out));
	double batch = r->batch >= 1 ? r->batch : 1;
	double context = r->context >= 1 ? r->context : 1;
	for (size_t i = 0; i < cf->n_rows; i++) {
		const struct calfile_row *row = &cf->rows[i];
		struct calfile_near n = { .found = true, .row = i };
		n.hardware_rank = hardware_rank(cat, r->hardware, row->hardware);
		n.model_rank = model_rank(cat, r->model, row->model);
		n.engine_rank = r->engine && strcmp(r->engine, row->engine) == 0 ? 0 : 1;
		n.row_batch = row->concurrency >= 1 ? row->concurrency : CALFILE_OFFLINE_BATCH;
		double in = row->input_tokens > 0 ? (double)row->input_tokens : 0;
		double o = row->output_tokens > 0 ? (double)row->output_tokens : 0;
		n.row_context = fmax(in + o / 2, 1);
		n.batch_doublings = fabs(log2(batch / n.row_batch));
		n.context_doublings = fabs(log2(context / n.row_context));
		n.score = 100.0 * n.hardware_rank + 10.0 * n.model_rank + 5.0 * n.engine_rank +
			  n.batch_doublings + n.context_doublings;
		if (!out->found || n.score < out->score)
			*out = n;
	}
}

const char *calfile_hardware_word(int rank)
{
	return rank == 0 ? "same hardware" : rank == 1 ? "same family" : "other hardware";
}

const char *calfile_model_word(int rank)
{
	return rank == 0 ? "same model" : rank == 1 ? "similar model" : "other model";
}

const char *calfile_engine_word(int rank)
{
	return rank == 0 ? "same engine" : "other engine";
}

void calfile_describe(const struct calfile *cf, char *buf, size_t size)
{
	if (cf->own)
		snprintf(buf, size, "own file %s (crc32 %08lx, %zu measured rows, %zu fitted "
			 "parameter%s over the built-in values)", cf->path, cf->crc32, cf->n_rows,
			 cf->n_params, cf->n_params == 1 ? "" : "s");
	else
		snprintf(buf, size, "built-in (%s, %zu measured rows)", cf->path, cf->n_rows);
}

void calfile_describe_near(const struct calfile *cf, const struct calfile_near *n, char *buf,
			   size_t size)
{
	if (!n->found) {
		snprintf(buf, size, "none");
		return;
	}
	const struct calfile_row *row = &cf->rows[n->row];
	snprintf(buf, size, "%s %s %ld: %s/%s/%s at batch %.0f, context %.0f; %s, %s, %s; batch "
		 "%.1f and context %.1f doublings away (score %.1f)", cf->path,
		 cf->own ? "row" : "line", row->line, row->hardware, row->model, row->engine,
		 n->row_batch, n->row_context, calfile_hardware_word(n->hardware_rank),
		 calfile_model_word(n->model_rank), calfile_engine_word(n->engine_rank),
		 n->batch_doublings, n->context_doublings, n->score);
}

/* ---- writing ---- */

static void wstr(FILE *out, const char *s)
{
	fputc('"', out);
	for (; s && *s; s++) {
		unsigned char ch = (unsigned char)*s;
		if (ch == '"' || ch == '\\')
			fprintf(out, "\\%c", ch);
		else if (ch < 0x20 || ch == 0x7f)
			fprintf(out, "\\u%04x", ch);
		else
			fputc(ch, out);
	}
	fputc('"', out);
}

/* Numbers rounded to 1e-3 (distances) or as %.10g. */
static void wnum(FILE *out, double v)
{
	if (isfinite(v))
		fprintf(out, "%.10g", v);
	else
		fputs("null", out);
}

void calfile_write_json(FILE *out, const struct calfile *cf, const char *const *labels,
			const struct calfile_regime *r, const struct calfile_near *near, size_t n)
{
	fputs("{\"source\": ", out);
	wstr(out, cf->own ? "own" : "built-in");
	fputs(", \"path\": ", out);
	wstr(out, cf->path);
	fprintf(out, ", \"crc32\": \"%08lx\", \"rows\": %zu, \"parameters\": %zu, \"nearest\": [",
		cf->crc32, cf->n_rows, cf->n_params);
	for (size_t i = 0; i < n; i++) {
		const struct calfile_near *p = &near[i];
		fputs(i ? ", {\"regime\": " : "{\"regime\": ", out);
		wstr(out, labels[i]);
		fputs(", \"batch\": ", out);
		wnum(out, r[i].batch >= 1 ? r[i].batch : 1);
		fputs(", \"context\": ", out);
		wnum(out, r[i].context >= 1 ? r[i].context : 1);
		if (!p->found) {
			fputs(", \"line\": null}", out);
			continue;
		}
		const struct calfile_row *row = &cf->rows[p->row];
		fprintf(out, ", \"line\": %ld, \"hardware\": ", row->line);
		wstr(out, row->hardware);
		fputs(", \"model\": ", out);
		wstr(out, row->model);
		fputs(", \"engine\": ", out);
		wstr(out, row->engine);
		fputs(", \"row_batch\": ", out);
		wnum(out, p->row_batch);
		fputs(", \"row_context\": ", out);
		wnum(out, p->row_context);
		fputs(", \"hardware_match\": ", out);
		wstr(out, calfile_hardware_word(p->hardware_rank));
		fputs(", \"model_match\": ", out);
		wstr(out, calfile_model_word(p->model_rank));
		fputs(", \"engine_match\": ", out);
		wstr(out, calfile_engine_word(p->engine_rank));
		fputs(", \"batch_doublings\": ", out);
		wnum(out, round(p->batch_doublings * 1000) / 1000);
		fputs(", \"context_doublings\": ", out);
		wnum(out, round(p->context_doublings * 1000) / 1000);
		fputs(", \"score\": ", out);
		wnum(out, round(p->score * 1000) / 1000);
		fputc('}', out);
	}
	fputs("]}", out);
}

void calfile_write_text(FILE *out, const struct calfile *cf, const char *const *labels,
			const struct calfile_regime *r, const struct calfile_near *near, size_t n)
{
	char buf[CALFILE_PATH_MAX + 128];
	calfile_describe(cf, buf, sizeof(buf));
	fprintf(out, "Calibration: %s\n", buf);
	for (size_t i = 0; i < n; i++) {
		char nb[CALFILE_PATH_MAX + 512];
		calfile_describe_near(cf, &near[i], nb, sizeof(nb));
		fprintf(out, "Nearest measured point (%s, batch %.0f, context %.0f): %s\n", labels[i],
			r[i].batch >= 1 ? r[i].batch : 1, r[i].context >= 1 ? r[i].context : 1, nb);
	}
}
