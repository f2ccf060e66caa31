/* SPDX-License-Identifier: Apache-2.0 */
#include "models/kvlink.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/textfile.h"

extern const char kv_links_json[]; /* generated from models/catalog/kv_links.json */

const char *kvlink_embedded_json(void)
{
	return kv_links_json;
}

static int bad(struct diag *d, const char *name, const char *where, const char *expected)
{
	return diag_set(d, DIAG_EINPUT, "%s: %s: expected %s", name, where, expected);
}

/* A sourced figure {"value", "unit", "source", "date"} of unit `unit`. */
static int figure(const cJSON *o, const char *key, const char *unit, double lo, double *out,
		  const char *name, const char *where, struct diag *d)
{
	char at[96];
	snprintf(at, sizeof(at), "%s.%s", where, key);
	const cJSON *f = cJSON_GetObjectItemCaseSensitive(o, key);
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(f, "value");
	const cJSON *u = cJSON_GetObjectItemCaseSensitive(f, "unit");
	const cJSON *s = cJSON_GetObjectItemCaseSensitive(f, "source");
	const cJSON *dt = cJSON_GetObjectItemCaseSensitive(f, "date");
	char exp[160];
	snprintf(exp, sizeof(exp), "a sourced figure {\"value\" >= %g, \"unit\": \"%s\", \"source\", "
		 "\"date\"}", lo, unit);
	if (!cJSON_IsObject(f) || !cJSON_IsNumber(v) || !isfinite(v->valuedouble) ||
	    v->valuedouble < lo || !cJSON_IsString(u) || strcmp(u->valuestring, unit) != 0 ||
	    !cJSON_IsString(s) || !s->valuestring[0] || !cJSON_IsString(dt) ||
	    strlen(dt->valuestring) < 7)
		return bad(d, name, at, exp);
	*out = v->valuedouble;
	return 0;
}

int kvlink_parse(struct kvlink_table *t, const char *name, const char *text, size_t len,
		 struct diag *d)
{
	memset(t, 0, sizeof(*t));
	cJSON *root = cJSON_ParseWithLength(text, len);
	if (!root)
		return diag_set(d, DIAG_EINPUT, "%s: invalid JSON (expected a KV-link table: an "
				"object with \"links\")", name);
	int rc = 0;
	const cJSON *sv = cJSON_GetObjectItemCaseSensitive(root, "schema_version");
	const cJSON *arr = cJSON_GetObjectItemCaseSensitive(root, "links");
	if (!cJSON_IsNumber(sv) || sv->valuedouble != 1)
		rc = bad(d, name, "schema_version", "1");
	else if (!cJSON_IsArray(arr) || cJSON_GetArraySize(arr) < 1 ||
		 cJSON_GetArraySize(arr) > KVLINK_MAX)
		rc = bad(d, name, "links", "an array of 1 to 16 links");
	for (const cJSON *e = rc ? NULL : arr->child; e && !rc; e = e->next) {
		char where[48];
		snprintf(where, sizeof(where), "links[%zu]", t->n);
		struct kv_link *l = &t->link[t->n];
		const cJSON *id = cJSON_GetObjectItemCaseSensitive(e, "id");
		const cJSON *pg = cJSON_GetObjectItemCaseSensitive(e, "per_gpu");
		if (!cJSON_IsObject(e))
			rc = bad(d, name, where, "an object");
		else if (!cJSON_IsString(id) || !id->valuestring[0] ||
			 strlen(id->valuestring) >= KVLINK_ID_MAX)
			rc = bad(d, name, where, "\"id\": a string of 1 to 31 characters");
		else if (kvlink_find(t, id->valuestring))
			rc = bad(d, name, where, "an id no other link has");
		else if (!cJSON_IsBool(pg))
			rc = bad(d, name, where, "\"per_gpu\": true or false");
		if (!rc)
			rc = figure(e, "gbs", "GB/s", 1e-3, &l->gbs, name, where, d);
		if (!rc)
			rc = figure(e, "per_transfer_us", "us", 0, &l->per_transfer_us, name, where, d);
		if (!rc) {
			snprintf(l->id, sizeof(l->id), "%s", id->valuestring);
			l->per_gpu = cJSON_IsTrue(pg);
			t->n++;
		}
	}
	cJSON_Delete(root);
	if (rc)
		memset(t, 0, sizeof(*t));
	return rc;
}

int kvlink_load(struct kvlink_table *t, const char *path, struct diag *d)
{
	if (!path) {
		const char *s = kvlink_embedded_json();
		return kvlink_parse(t, "kv_links.json", s, strlen(s), d);
	}
	char *text = textfile_read(path, 1u << 20, "a KV-link table", d);
	if (!text)
		return d->code ? d->code : DIAG_EIO;
	int rc = kvlink_parse(t, path, text, strlen(text), d);
	free(text);
	return rc;
}

const struct kv_link *kvlink_find(const struct kvlink_table *t, const char *id)
{
	for (size_t i = 0; id && i < t->n; i++)
		if (strcmp(t->link[i].id, id) == 0)
			return &t->link[i];
	return NULL;
}

void kvlink_ids(const struct kvlink_table *t, char *buf, size_t size)
{
	size_t at = 0;
	if (size)
		buf[0] = '\0';
	for (size_t i = 0; i < t->n && at < size; i++) {
		int w = snprintf(buf + at, size - at, "%s%s", i ? ", " : "", t->link[i].id);
		at += w > 0 ? (size_t)w : 0;
	}
}

void kvlink_time(const struct kv_link *l, const struct kv_transfer *x, double *whole_ns,
		 double *exposed_ns)
{
	double lanes = l->per_gpu && x->gpus > 1 ? (double)x->gpus : 1.0;
	double wire = x->bytes / (l->gbs * 1e9 * lanes) * 1e9;
	double whole = (double)(x->pieces > 0 ? x->pieces : 0) * l->per_transfer_us * 1e3 + wire;
	double exposed = whole;
	if (x->layerwise && x->layers > 1) {
		double L = (double)x->layers;
		exposed = fmax(whole / L, whole - x->prefill_ns * (L - 1) / L);
		if (exposed > whole)
			exposed = whole;
	}
	*whole_ns = whole;
	*exposed_ns = exposed;
}
