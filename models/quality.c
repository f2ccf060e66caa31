/* SPDX-License-Identifier: Apache-2.0
 * quality: benchmark scores per model and relative quality (see quality.h). */
#include "models/quality.h"

#include <cjson/cJSON.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern const char quality_json[]; /* generated from models/catalog/quality.json */

void quality_free(struct quality *q)
{
	if (!q)
		return;
	for (size_t i = 0; i < q->n; i++) {
		struct quality_row *r = &q->rows[i];
		free(r->model);
		free(r->benchmark);
		free(r->harness);
		free(r->harness_id);
		free(r->date);
		free(r->source);
	}
	free(q->rows);
	free(q);
}

static char *dup_str(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	if (!cJSON_IsString(v) || !v->valuestring[0])
		return NULL;
	return strdup(v->valuestring);
}

static int load_row(struct quality_row *r, const cJSON *o, const char *name, int i,
		    struct diag *d)
{
	static const char *const keys[] = {"model", "benchmark", "harness", "harness_id", "date",
					   "source"};
	char **fields[] = {&r->model, &r->benchmark, &r->harness, &r->harness_id, &r->date,
			   &r->source};
	for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++)
		if (!(*fields[k] = dup_str(o, keys[k])))
			return diag_set(d, DIAG_EINPUT, "%s: scores[%d]: %s: expected a non-empty "
					"string", name, i, keys[k]);
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, "score");
	if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || !(v->valuedouble > 0) ||
	    v->valuedouble > 100)
		return diag_set(d, DIAG_EINPUT, "%s: scores[%d] '%s': score: expected a percentage "
				"in (0, 100]", name, i, r->model);
	r->score = v->valuedouble;
	return 0;
}

int quality_load(struct quality **out, const char *name, const char *text, struct diag *d)
{
	*out = NULL;
	if (!text) {
		text = quality_json;
		name = "quality.json";
	}
	cJSON *root = cJSON_Parse(text);
	if (!root)
		return diag_set(d, DIAG_EINPUT, "%s: not JSON (expected an object with \"scores\")",
				name);
	const cJSON *rows = cJSON_GetObjectItemCaseSensitive(root, "scores");
	if (!cJSON_IsArray(rows)) {
		cJSON_Delete(root);
		return diag_set(d, DIAG_EINPUT, "%s: scores: expected an array of rows", name);
	}
	struct quality *q = calloc(1, sizeof(*q));
	size_t n = (size_t)cJSON_GetArraySize(rows);
	if (q)
		q->rows = calloc(n ? n : 1, sizeof(*q->rows));
	if (!q || !q->rows) {
		free(q);
		cJSON_Delete(root);
		return diag_set(d, DIAG_ENOMEM, "out of memory for %s", name);
	}
	int rc = 0, i = 0;
	const cJSON *o;
	cJSON_ArrayForEach(o, rows) {
		q->n++;
		rc = cJSON_IsObject(o) ? load_row(&q->rows[i], o, name, i, d)
				       : diag_set(d, DIAG_EINPUT, "%s: scores[%d]: expected an object",
						  name, i);
		if (rc != 0)
			break;
		i++;
	}
	cJSON_Delete(root);
	if (rc != 0) {
		quality_free(q);
		return rc;
	}
	*out = q;
	return 0;
}

bool quality_has(const struct quality *q, const char *model)
{
	for (size_t i = 0; q && i < q->n; i++)
		if (strcmp(q->rows[i].model, model) == 0)
			return true;
	return false;
}

/* The newest row of model on benchmark with scaffold hid (the first of
 * equal dates), or NULL. */
static const struct quality_row *row_of(const struct quality *q, const char *model,
					const char *bench, const char *hid)
{
	const struct quality_row *best = NULL;
	for (size_t i = 0; i < q->n; i++) {
		const struct quality_row *r = &q->rows[i];
		if (strcmp(r->model, model) || strcmp(r->benchmark, bench) || strcmp(r->harness_id, hid))
			continue;
		if (!best || strcmp(r->date, best->date) > 0)
			best = r;
	}
	return best;
}

void quality_relative(const struct quality *q, const char *model, const char *traced,
		      struct quality_rel *out)
{
	memset(out, 0, sizeof(*out));
	out->ratio = out->factor = 1;
	if (strcmp(model, traced) == 0) {
		out->found = true;
		snprintf(out->basis, sizeof(out->basis), "the traced model itself");
		return;
	}
	static const char *const order[] = QUALITY_BENCHMARKS;
	for (size_t b = 0; q && b < sizeof(order) / sizeof(order[0]); b++) {
		/* the scaffolds model was run with on this benchmark, in file order */
		for (size_t i = 0; i < q->n; i++) {
			const struct quality_row *m = &q->rows[i];
			if (strcmp(m->model, model) || strcmp(m->benchmark, order[b]) ||
			    strcmp(m->harness_id, "unstated") == 0)
				continue;
			const struct quality_row *mr = row_of(q, model, order[b], m->harness_id);
			const struct quality_row *tr = row_of(q, traced, order[b], m->harness_id);
			if (!tr)
				continue;
			out->found = true;
			out->model_row = mr;
			out->traced_row = tr;
			out->ratio = mr->score / tr->score;
			out->factor = out->ratio < 1 ? out->ratio : 1;
			snprintf(out->basis, sizeof(out->basis),
				 "%s with %s: %s %.4g (%s, %s) / %s %.4g (%s, %s)%s", order[b],
				 m->harness_id, model, mr->score, mr->date, mr->source, traced,
				 tr->score, tr->date, tr->source,
				 out->ratio > 1 ? "; capped at 1: not credited above the trace" : "");
			return;
		}
	}
	if (!quality_has(q, model))
		snprintf(out->basis, sizeof(out->basis), "no published score for %s in "
			 "quality.json", model);
	else if (!quality_has(q, traced))
		snprintf(out->basis, sizeof(out->basis), "no published score for the traced model "
			 "%s in quality.json", traced);
	else
		snprintf(out->basis, sizeof(out->basis), "no benchmark on which %s and %s were run "
			 "with the same scaffold in quality.json", model, traced);
}
