/* SPDX-License-Identifier: Apache-2.0
 * apilat: the API latency and prompt-cache catalogue (see apilat.h). */
#include "models/apilat.h"

#include <cjson/cJSON.h>

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

extern const char api_backends_json[]; /* generated from models/catalog/api_backends.json */

void apilat_free(struct apilat *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->n; i++) {
		struct apilat_row *r = &t->rows[i];
		free(r->id);
		free(r->speed_source);
		free(r->speed_date);
		free(r->cache_source);
		free(r->cache_date);
		free(r->fit_source);
		free(r->fit_date);
		free(r->limits_tier);
		free(r->limits_source);
		free(r->limits_date);
	}
	free(t->rows);
	free(t);
}

static char *dup_str(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	if (!cJSON_IsString(v) || !v->valuestring[0])
		return NULL;
	return strdup(v->valuestring);
}

static bool num(const cJSON *o, const char *key, double lo, double hi, double *out)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble < lo ||
	    v->valuedouble > hi)
		return false;
	*out = v->valuedouble;
	return true;
}

static int load_row(struct apilat_row *r, const cJSON *o, const char *name, int i, struct diag *d)
{
	static const char *const strs[] = {"id", "speed_source", "speed_date", "cache_source",
					   "cache_date"};
	char **fields[] = {&r->id, &r->speed_source, &r->speed_date, &r->cache_source,
			   &r->cache_date};
	for (size_t k = 0; k < sizeof(strs) / sizeof(strs[0]); k++)
		if (!(*fields[k] = dup_str(o, strs[k])))
			return diag_set(d, DIAG_EINPUT, "%s: backends[%d]: %s: expected a non-empty string",
					name, i, strs[k]);
	double min_tokens = 0;
	if (!num(o, "ttft_s", 1e-6, 3600, &r->ttft_s))
		return diag_set(d, DIAG_EINPUT, "%s: backends[%d] '%s': ttft_s: expected seconds in (0, 3600]",
				name, i, r->id);
	if (!num(o, "output_tok_s", 1e-3, 1e6, &r->output_tok_s))
		return diag_set(d, DIAG_EINPUT,
				"%s: backends[%d] '%s': output_tok_s: expected tokens per second > 0", name, i,
				r->id);
	if (!num(o, "cache_min_tokens", 0, 1e9, &min_tokens) || min_tokens != floor(min_tokens))
		return diag_set(d, DIAG_EINPUT,
				"%s: backends[%d] '%s': cache_min_tokens: expected an integer >= 0", name, i,
				r->id);
	r->cache_min_tokens = (int64_t)min_tokens;
	if (!num(o, "cache_ttl_s", 0, 1e7, &r->cache_ttl_s))
		return diag_set(d, DIAG_EINPUT, "%s: backends[%d] '%s': cache_ttl_s: expected seconds >= 0",
				name, i, r->id);
	if (cJSON_GetObjectItemCaseSensitive(o, "prefill_tok_s")) {
		if (!num(o, "ttft_base_s", 1e-6, 3600, &r->ttft_base_s))
			return diag_set(d, DIAG_EINPUT, "%s: backends[%d] '%s': ttft_base_s: expected "
					"seconds in (0, 3600] beside prefill_tok_s", name, i, r->id);
		if (!num(o, "prefill_tok_s", 1, 1e9, &r->prefill_tok_s) ||
		    !num(o, "cached_tok_s", 1, 1e12, &r->cached_tok_s))
			return diag_set(d, DIAG_EINPUT, "%s: backends[%d] '%s': prefill_tok_s, "
					"cached_tok_s: expected prompt tokens per second >= 1", name, i,
					r->id);
		if (!(r->fit_source = dup_str(o, "fit_source")) || !(r->fit_date = dup_str(o, "fit_date")))
			return diag_set(d, DIAG_EINPUT, "%s: backends[%d] '%s': fit_source, fit_date: "
					"expected non-empty strings beside prefill_tok_s", name, i, r->id);
	}
	if (cJSON_GetObjectItemCaseSensitive(o, "limits_tier")) {
		static const char *const lim[] = {"rpm", "input_tpm", "output_tpm", "tpm"};
		double *at[] = {&r->rpm, &r->input_tpm, &r->output_tpm, &r->tpm};
		for (size_t k = 0; k < 4; k++)
			if (!num(o, lim[k], 0, 1e12, at[k]))
				return diag_set(d, DIAG_EINPUT, "%s: backends[%d] '%s': %s: expected a "
						"per-minute limit >= 0 (0: none)", name, i, r->id, lim[k]);
		const cJSON *c = cJSON_GetObjectItemCaseSensitive(o, "limits_count_cached");
		if (!cJSON_IsBool(c))
			return diag_set(d, DIAG_EINPUT, "%s: backends[%d] '%s': limits_count_cached: "
					"expected true or false", name, i, r->id);
		r->limits_count_cached = cJSON_IsTrue(c);
		if (!(r->limits_tier = dup_str(o, "limits_tier")) ||
		    !(r->limits_source = dup_str(o, "limits_source")) ||
		    !(r->limits_date = dup_str(o, "limits_date")))
			return diag_set(d, DIAG_EINPUT, "%s: backends[%d] '%s': limits_tier, "
					"limits_source, limits_date: expected non-empty strings", name, i,
					r->id);
	}
	return 0;
}

int apilat_load(struct apilat **out, const char *name, const char *text, struct diag *d)
{
	*out = NULL;
	if (!text) {
		text = api_backends_json;
		name = "api_backends.json";
	}
	cJSON *root = cJSON_Parse(text);
	if (!root)
		return diag_set(d, DIAG_EINPUT, "%s: not JSON (expected an object with \"backends\")", name);
	const cJSON *rows = cJSON_GetObjectItemCaseSensitive(root, "backends");
	if (!cJSON_IsArray(rows)) {
		cJSON_Delete(root);
		return diag_set(d, DIAG_EINPUT, "%s: backends: expected an array of rows", name);
	}
	struct apilat *t = calloc(1, sizeof(*t));
	size_t n = (size_t)cJSON_GetArraySize(rows);
	if (t)
		t->rows = calloc(n ? n : 1, sizeof(*t->rows));
	if (!t || !t->rows) {
		free(t);
		cJSON_Delete(root);
		return diag_set(d, DIAG_ENOMEM, "out of memory for %s", name);
	}
	int rc = 0, i = 0;
	const cJSON *o;
	cJSON_ArrayForEach(o, rows)
	{
		t->n++;
		rc = cJSON_IsObject(o) ? load_row(&t->rows[i], o, name, i, d)
				       : diag_set(d, DIAG_EINPUT, "%s: backends[%d]: expected an object", name, i);
		for (int j = 0; rc == 0 && j < i; j++)
			if (strcmp(t->rows[j].id, t->rows[i].id) == 0)
				rc = diag_set(d, DIAG_EINPUT, "%s: backends[%d]: id '%s' given twice", name, i,
					      t->rows[i].id);
		if (rc != 0)
			break;
		i++;
	}
	cJSON_Delete(root);
	if (rc != 0) {
		apilat_free(t);
		return rc;
	}
	*out = t;
	return 0;
}

const struct apilat_row *apilat_find(const struct apilat *t, const char *id)
{
	for (size_t i = 0; t && i < t->n; i++)
		if (strcmp(t->rows[i].id, id) == 0)
			return &t->rows[i];
	return NULL;
}
