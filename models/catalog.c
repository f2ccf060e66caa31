/* SPDX-License-Identifier: Apache-2.0
 * catalog: parse and validate the JSON catalogue (see catalog.h).
 *
 * Parsing walks each cJSON tree with a small cursor (struct jp) that keeps
 * the key path of the value being read ("hardware[3].mem_bw_gbs.value"), so
 * every complaint names the file and the exact place.  The first problem
 * stops the load.  Every allocation is registered in cat->owned and freed in
 * one sweep by catalog_free, so a failure half-way leaks nothing.
 * Invariant after a successful parse: every hardware entry points at a
 * family of the same catalogue, no two names (ids or aliases) of one table
 * are equal under catalog_name_eq, and every derived count is positive.
 */
#include "models/catalog.h"

#include <assert.h>
#include <cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Published and derived parameter counts may differ by this much. */
#define CAT_PARAMS_TOLERANCE 0.02
/* Upper bound on entries per table and aliases per entry. */
#define CAT_MAX_ENTRIES 10000
#define CAT_MAX_ALIASES 64
#define CAT_MAX_TEXT 4096

static const char *const dtype_names[CAT_DTYPE_COUNT + 1] = {
	"bf16", "fp16", "fp8", "int8", "fp4", NULL,
};

const char *cat_dtype_name(enum cat_dtype t)
{
	return ((int)t >= 0 && (int)t < CAT_DTYPE_COUNT) ? dtype_names[t] : "?";
}

static int dtype_parse(const char *s, enum cat_dtype *out)
{
	for (int i = 0; i < CAT_DTYPE_COUNT; i++) {
		if (strcmp(s, dtype_names[i]) == 0) {
			*out = (enum cat_dtype)i;
			return 0;
		}
	}
	return -1;
}

/* ---- ownership ---------------------------------------------------------- */

static void *cat_own(struct catalog *cat, void *ptr)
{
	if (!ptr)
		return NULL;
	if (cat->owned_count == cat->owned_cap) {
		size_t cap = cat->owned_cap ? cat->owned_cap * 2 : 64;
		void **grown = realloc(cat->owned, cap * sizeof(*grown));
		if (!grown) {
			free(ptr);
			return NULL;
		}
		cat->owned = grown;
		cat->owned_cap = cap;
	}
	cat->owned[cat->owned_count++] = ptr;
	return ptr;
}

static void *cat_calloc(struct catalog *cat, size_t n, size_t size)
{
	return cat_own(cat, calloc(n ? n : 1, size));
}

static char *cat_strdup(struct catalog *cat, const char *s)
{
	size_t n = strlen(s) + 1;
	char *p = cat_own(cat, malloc(n));
	if (p)
		memcpy(p, s, n);
	return p;
}

void catalog_free(struct catalog *cat)
{
	if (!cat)
		return;
	for (size_t i = 0; i < cat->owned_count; i++)
		free(cat->owned[i]);
	free(cat->owned);
	free(cat);
}

/* ---- the cursor --------------------------------------------------------- */

struct jp {
	struct catalog *cat;
	struct diag *d;
	const char *file;
	char path[256];
	size_t len;
};

static size_t jp_key(struct jp *p, const char *key)
{
	size_t mark = p->len;
	int n = snprintf(p->path + p->len, sizeof(p->path) - p->len,
			 p->len ? ".%s" : "%s", key);
	if (n > 0)
		p->len += (size_t)n < sizeof(p->path) - p->len ? (size_t)n
							       : sizeof(p->path) - p->len - 1;
	return mark;
}

static size_t jp_index(struct jp *p, size_t i)
{
	size_t mark = p->len;
	int n = snprintf(p->path + p->len, sizeof(p->path) - p->len, "[%zu]", i);
	if (n > 0)
		p->len += (size_t)n < sizeof(p->path) - p->len ? (size_t)n
							       : sizeof(p->path) - p->len - 1;
	return mark;
}

static void jp_pop(struct jp *p, size_t mark)
{
	p->len = mark;
	p->path[mark] = '\0';
}

static int jp_fail(struct jp *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int jp_fail(struct jp *p, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (p->len)
		return diag_set(p->d, DIAG_EINPUT, "%s: %s: %s", p->file, p->path, msg);
	return diag_set(p->d, DIAG_EINPUT, "%s: %s", p->file, msg);
}

static int jp_nomem(struct jp *p)
{
	return diag_set(p->d, DIAG_ENOMEM, "%s: out of memory while loading the catalogue",
			p->file);
}

/* Fail on keys outside `allowed` (NULL-terminated) and on repeated keys. */
static int j_keys(struct jp *p, const cJSON *obj, const char *const *allowed)
{
	const cJSON *it;
	cJSON_ArrayForEach(it, obj) {
		bool ok = false;
		for (const char *const *a = allowed; *a; a++)
			if (strcmp(it->string, *a) == 0)
				ok = true;
		if (!ok)
			return jp_fail(p, "unknown key '%s'", it->string);
		for (const cJSON *jt = obj->child; jt != it; jt = jt->next)
			if (strcmp(jt->string, it->string) == 0)
				return jp_fail(p, "duplicate key '%s'", it->string);
	}
	return 0;
}

/* The member `key` of obj, NULL when absent or null. */
static const cJSON *j_get(const cJSON *obj, const char *key)
{
	const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, key);
	return (it && !cJSON_IsNull(it)) ? it : NULL;
}

static int j_missing(struct jp *p, const char *key, const char *what)
{
	size_t m = jp_key(p, key);
	int rc = jp_fail(p, "missing (expected %s)", what);
	jp_pop(p, m);
	return rc;
}

static int j_object(struct jp *p, const cJSON *obj, const char *key, bool required,
		    const cJSON **out)
{
	const cJSON *it = j_get(obj, key);
	*out = NULL;
	if (!it)
		return required ? j_missing(p, key, "an object") : 0;
	if (!cJSON_IsObject(it)) {
		size_t m = jp_key(p, key);
		int rc = jp_fail(p, "expected an object");
		jp_pop(p, m);
		return rc;
	}
	*out = it;
	return 0;
}

static int j_string(struct jp *p, const cJSON *obj, const char *key, bool required,
		    char **out)
{
	const cJSON *it = j_get(obj, key);
	*out = NULL;
	if (!it)
		return required ? j_missing(p, key, "a string") : 0;
	size_t m = jp_key(p, key);
	int rc = 0;
	if (!cJSON_IsString(it) || !it->valuestring)
		rc = jp_fail(p, "expected a string");
	else if (!it->valuestring[0])
		rc = jp_fail(p, "expected a non-empty string");
	else if (strlen(it->valuestring) >= CAT_MAX_TEXT)
		rc = jp_fail(p, "string longer than %d bytes", CAT_MAX_TEXT - 1);
	else if (!(*out = cat_strdup(p->cat, it->valuestring)))
		rc = jp_nomem(p);
	jp_pop(p, m);
	return rc;
}

static bool id_valid(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n >= CAT_ID_MAX)
		return false;
	for (const char *c = s; *c; c++)
		if (!(islower((unsigned char)*c) || isdigit((unsigned char)*c) ||
		      *c == '-' || *c == '.'))
			return false;
	return true;
}

static int j_id(struct jp *p, const cJSON *obj, const char *key, char **out)
{
	int rc = j_string(p, obj, key, true, out);
	if (rc)
		return rc;
	if (!id_valid(*out)) {
		size_t m = jp_key(p, key);
		rc = jp_fail(p, "'%s' is not an id (expected 1-%d lower-case letters, "
			     "digits, '-' or '.')", *out, CAT_ID_MAX - 1);
		jp_pop(p, m);
	}
	return rc;
}

static int j_bool(struct jp *p, const cJSON *obj, const char *key, bool required,
		  bool dflt, bool *out)
{
	const cJSON *it = j_get(obj, key);
	*out = dflt;
	if (!it)
		return required ? j_missing(p, key, "true or false") : 0;
	if (!cJSON_IsBool(it)) {
		size_t m = jp_key(p, key);
		int rc = jp_fail(p, "expected true or false");
		jp_pop(p, m);
		return rc;
	}
	*out = cJSON_IsTrue(it);
	return 0;
}

static int j_int(struct jp *p, const cJSON *obj, const char *key, bool required,
		 int64_t lo, int64_t hi, int64_t *out)
{
	const cJSON *it = j_get(obj, key);
	*out = 0;
	if (!it)
		return required ? j_missing(p, key, "an integer") : 0;
	size_t m = jp_key(p, key);
	int rc = 0;
	double v = it->valuedouble;
	if (!cJSON_IsNumber(it) || v != floor(v) || !isfinite(v))
		rc = jp_fail(p, "expected an integer");
	else if (v < (double)lo || v > (double)hi)
		rc = jp_fail(p, "%.17g is out of range (expected %lld to %lld)", v,
			     (long long)lo, (long long)hi);
	else
		*out = (int64_t)v;
	jp_pop(p, m);
	return rc;
}

static bool date_valid(const char *s)
{
	/* YYYY-MM or YYYY-MM-DD */
	size_t n = strlen(s);
	if (n != 7 && n != 10)
		return false;
	for (size_t i = 0; i < n; i++) {
		bool dash = (i == 4 || i == 7);
		if (dash ? s[i] != '-' : !isdigit((unsigned char)s[i]))
			return false;
	}
	int month = (s[5] - '0') * 10 + (s[6] - '0');
	if (month < 1 || month > 12)
		return false;
	if (n == 10) {
		int day = (s[8] - '0') * 10 + (s[9] - '0');
		if (day < 1 || day > 31)
			return false;
	}
	return true;
}

static int j_date(struct jp *p, const cJSON *obj, const char *key)
{
	char *date;
	int rc = j_string(p, obj, key, true, &date);
	if (rc)
		return rc;
	if (!date_valid(date)) {
		size_t m = jp_key(p, key);
		rc = jp_fail(p, "'%s' is not a date (expected YYYY-MM or YYYY-MM-DD)", date);
		jp_pop(p, m);
	}
	return rc;
}

enum j_range {
	J_POSITIVE,  /* > 0 */
	J_FRACTION,  /* 0 < x <= 1 */
};

/* A sourced figure: {"value": n, "unit": u, "source": s, "date": d, "note"?}.
 * units is a NULL-terminated list of accepted unit strings; *unit_idx (may be
 * NULL) receives the one matched. *out is 0 when the figure is absent. */
static int j_figure(struct jp *p, const cJSON *obj, const char *key, bool required,
		    const char *const *units, enum j_range range, double *out,
		    size_t *unit_idx)
{
	static const char *const keys[] = { "value", "unit", "source", "date", "note", NULL };
	const cJSON *it = j_get(obj, key);
	*out = 0;
	if (unit_idx)
		*unit_idx = 0;
	if (!it)
		return required ? j_missing(p, key, "a sourced figure {\"value\", \"unit\", "
					    "\"source\", \"date\"}") : 0;
	size_t m = jp_key(p, key);
	int rc = 0;
	char *unit = NULL, *src = NULL, *note = NULL;
	if (!cJSON_IsObject(it)) {
		rc = jp_fail(p, "expected a sourced figure {\"value\", \"unit\", \"source\", "
			     "\"date\"}");
		goto out;
	}
	if ((rc = j_keys(p, it, keys)))
		goto out;
	const cJSON *v = j_get(it, "value");
	if (!v) {
		rc = j_missing(p, "value", "a number");
		goto out;
	}
	if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble)) {
		size_t mv = jp_key(p, "value");
		rc = jp_fail(p, "expected a number");
		jp_pop(p, mv);
		goto out;
	}
	double x = v->valuedouble;
	bool in_range = range == J_FRACTION ? (x > 0 && x <= 1) : x > 0;
	if (!in_range) {
		size_t mv = jp_key(p, "value");
		rc = jp_fail(p, "%.17g is out of range (expected %s)", x,
			     range == J_FRACTION ? "a fraction in (0, 1]" : "a positive number");
		jp_pop(p, mv);
		goto out;
	}
	if ((rc = j_string(p, it, "unit", true, &unit)))
		goto out;
	size_t ui = 0;
	while (units[ui] && strcmp(units[ui], unit) != 0)
		ui++;
	if (!units[ui]) {
		char want[256] = "";
		for (size_t k = 0; units[k]; k++) {
			size_t used = strlen(want);
			snprintf(want + used, sizeof(want) - used, "%s\"%s\"",
				 k ? " or " : "", units[k]);
		}
		size_t mu = jp_key(p, "unit");
		rc = jp_fail(p, "expected %s, got \"%s\"", want, unit);
		jp_pop(p, mu);
		goto out;
	}
	if ((rc = j_string(p, it, "source", true, &src)))
		goto out;
	if ((rc = j_date(p, it, "date")))
		goto out;
	if ((rc = j_string(p, it, "note", false, &note)))
		goto out;
	*out = x;
	if (unit_idx)
		*unit_idx = ui;
out:
	jp_pop(p, m);
	return rc;
}

/* An optional array of alias strings. */
static int j_aliases(struct jp *p, const cJSON *obj, char ***out, size_t *n)
{
	const cJSON *it = j_get(obj, "aliases");
	*out = NULL;
	*n = 0;
	if (!it)
		return 0;
	size_t m = jp_key(p, "aliases");
	int rc = 0;
	int count = cJSON_GetArraySize(it);
	if (!cJSON_IsArray(it)) {
		rc = jp_fail(p, "expected an array of strings");
	} else if (count > CAT_MAX_ALIASES) {
		rc = jp_fail(p, "more than %d aliases", CAT_MAX_ALIASES);
	} else if (count > 0) {
		char **arr = cat_calloc(p->cat, (size_t)count, sizeof(*arr));
		if (!arr) {
			rc = jp_nomem(p);
			goto out;
		}
		for (int i = 0; i < count && !rc; i++) {
			const cJSON *s = cJSON_GetArrayItem(it, i);
			size_t mi = jp_index(p, (size_t)i);
			if (!cJSON_IsString(s) || !s->valuestring || !s->valuestring[0])
				rc = jp_fail(p, "expected a non-empty string");
			else if (strlen(s->valuestring) >= CAT_MAX_TEXT)
				rc = jp_fail(p, "string longer than %d bytes", CAT_MAX_TEXT - 1);
			else if (!(arr[i] = cat_strdup(p->cat, s->valuestring)))
				rc = jp_nomem(p);
			jp_pop(p, mi);
		}
		*out = arr;
		*n = (size_t)count;
	}
out:
	jp_pop(p, m);
	return rc;
}

/* The array `key` of the top-level object; *count its length (>= 1). */
static int j_table(struct jp *p, const cJSON *root, const char *key, const cJSON **arr,
		   size_t *count)
{
	const cJSON *it = j_get(root, key);
	*arr = NULL;
	*count = 0;
	if (!it)
		return j_missing(p, key, "an array");
	size_t m = jp_key(p, key);
	int rc = 0;
	int n = cJSON_GetArraySize(it);
	if (!cJSON_IsArray(it))
		rc = jp_fail(p, "expected an array");
	else if (n < 1)
		rc = jp_fail(p, "expected at least one entry");
	else if (n > CAT_MAX_ENTRIES)
		rc = jp_fail(p, "more than %d entries", CAT_MAX_ENTRIES);
	jp_pop(p, m);
	if (rc)
		return rc;
	*arr = it;
	*count = (size_t)n;
	return 0;
}

static int j_header(struct jp *p, const cJSON *root, const char *const *keys)
{
	int rc = j_keys(p, root, keys);
	if (rc)
		return rc;
	int64_t version;
	if ((rc = j_int(p, root, "schema_version", true, 1, INT32_MAX, &version)))
		return rc;
	if (version != 1) {
		size_t m = jp_key(p, "schema_version");
		rc = jp_fail(p, "unsupported version %lld (this build reads version 1)",
			     (long long)version);
		jp_pop(p, m);
		return rc;
	}
	char *desc;
	return j_string(p, root, "description", false, &desc);
}

/* ---- names -------------------------------------------------------------- */

static int name_char(int c)
{
	if (c == ' ' || c == '_')
		return '-';
	return tolower(c);
}

bool catalog_name_eq(const char *a, const char *b)
{
	if (!a || !b)
		return false;
	for (; *a && *b; a++, b++)
		if (name_char((unsigned char)*a) != name_char((unsigned char)*b))
			return false;
	return *a == *b;
}

/* View of one table for the name checks and lookups. */
struct names {
	size_t stride;             /* bytes between entries */
	size_t count;
	size_t id_off;             /* offsets inside an entry */
	size_t aliases_off;
	size_t alias_count_off;
};

#define NAMES(n, type) \
	((struct names){ .stride = sizeof(type), .count = (n), \
			 .id_off = offsetof(type, id), \
			 .aliases_off = offsetof(type, aliases), \
			 .alias_count_off = offsetof(type, alias_count) })

static const char *names_id(const void *base, const struct names *t, size_t i)
{
	const char *e = (const char *)base + i * t->stride;
	return *(char *const *)(e + t->id_off);
}

static size_t names_alias_count(const void *base, const struct names *t, size_t i)
{
	const char *e = (const char *)base + i * t->stride;
	return *(const size_t *)(e + t->alias_count_off);
}

static const char *names_alias(const void *base, const struct names *t, size_t i, size_t k)
{
	const char *e = (const char *)base + i * t->stride;
	char *const *aliases = *(char **const *)(e + t->aliases_off);
	return aliases[k];
}

/* Name k of entry i: k == 0 is the id, k >= 1 alias k-1. */
static const char *names_at(const void *base, const struct names *t, size_t i, size_t k)
{
	return k == 0 ? names_id(base, t, i) : names_alias(base, t, i, k - 1);
}

static size_t names_lookup(const void *base, const struct names *t, const char *name)
{
	if (!name)
		return t->count;
	for (size_t i = 0; i < t->count; i++)
		for (size_t k = 0; k <= names_alias_count(base, t, i); k++)
			if (catalog_name_eq(names_at(base, t, i, k), name))
				return i;
	return t->count;
}

/* No two names of the table may be equal under catalog_name_eq. */
static int names_unique(struct jp *p, const char *table, const void *base,
			const struct names *t)
{
	for (size_t i = 0; i < t->count; i++) {
		size_t ni = names_alias_count(base, t, i) + 1;
		for (size_t k = 0; k < ni; k++) {
			const char *name = names_at(base, t, i, k);
			for (size_t j = 0; j <= i; j++) {
				size_t nj = j == i ? k : names_alias_count(base, t, j) + 1;
				for (size_t l = 0; l < nj; l++) {
					if (!catalog_name_eq(name, names_at(base, t, j, l)))
						continue;
					size_t m = jp_key(p, table);
					jp_index(p, i);
					if (k == 0) {
						jp_key(p, "id");
					} else {
						jp_key(p, "aliases");
						jp_index(p, k - 1);
					}
					int rc = jp_fail(p, "'%s' already names '%s' (%s[%zu])",
							 name, names_id(base, t, j), table, j);
					jp_pop(p, m);
					return rc;
				}
			}
		}
	}
	return 0;
}

/* ---- families.json ------------------------------------------------------ */

static const char *const U_FRACTION[] = { "fraction", NULL };
static const char *const U_US[] = { "us", NULL };
static const char *const U_GIB[] = { "GiB", NULL };
static const char *const U_GB[] = { "GB", NULL };
static const char *const U_GBS[] = { "GB/s", NULL };
static const char *const U_TFLOPS[] = { "TFLOPS", NULL };
static const char *const U_TOPS[] = { "TOPS", NULL };
static const char *const U_W[] = { "W", NULL };
static const char *const U_LINK[] = { "GB/s per direction", "GB/s bidirectional", NULL };
static const char *const U_BITS[] = { "bits", NULL };
static const char *const U_PARAMS[] = { "parameters", NULL };

static int parse_family(struct jp *p, const cJSON *e, struct cat_family *f)
{
	static const char *const keys[] = { "id", "name", "eff_compute", "eff_bw",
		"step_overhead_us", "runtime_reserve_gib", "note", NULL };
	int rc;
	char *note;
	if (!cJSON_IsObject(e))
		return jp_fail(p, "expected an object");
	if ((rc = j_keys(p, e, keys)) || (rc = j_id(p, e, "id", &f->id)) ||
	    (rc = j_string(p, e, "name", true, &f->name)) ||
	    (rc = j_figure(p, e, "eff_compute", true, U_FRACTION, J_FRACTION,
			   &f->eff_compute, NULL)) ||
	    (rc = j_figure(p, e, "eff_bw", true, U_FRACTION, J_FRACTION, &f->eff_bw, NULL)) ||
	    (rc = j_figure(p, e, "step_overhead_us", true, U_US, J_POSITIVE,
			   &f->step_overhead_us, NULL)) ||
	    (rc = j_figure(p, e, "runtime_reserve_gib", true, U_GIB, J_POSITIVE,
			   &f->runtime_reserve_gib, NULL)) ||
	    (rc = j_string(p, e, "note", false, &note)))
		return rc;
	return 0;
}

static int parse_families(struct jp *p, const cJSON *root)
{
	static const char *const keys[] = { "schema_version", "description", "families", NULL };
	struct catalog *cat = p->cat;
	const cJSON *arr;
	size_t n;
	int rc;
	if ((rc = j_header(p, root, keys)) || (rc = j_table(p, root, "families", &arr, &n)))
		return rc;
	if (!(cat->families = cat_calloc(cat, n, sizeof(*cat->families))))
		return jp_nomem(p);
	cat->family_count = n;
	for (size_t i = 0; i < n; i++) {
		size_t m = jp_key(p, "families");
		jp_index(p, i);
		rc = parse_family(p, cJSON_GetArrayItem(arr, (int)i), &cat->families[i]);
		jp_pop(p, m);
		if (rc)
			return rc;
	}
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < i; j++)
			if (catalog_name_eq(cat->families[i].id, cat->families[j].id)) {
				size_t m = jp_key(p, "families");
				jp_index(p, i);
				jp_key(p, "id");
				rc = jp_fail(p, "'%s' already names families[%zu]",
					     cat->families[i].id, j);
				jp_pop(p, m);
				return rc;
			}
	return 0;
}

/* ---- hardware.json ------------------------------------------------------ */

static int parse_link(struct jp *p, const cJSON *parent, const char *key, struct cat_link *l)
{
	static const char *const keys[] = { "kind", "bw_gbs", "note", NULL };
	const cJSON *o;
	int rc = j_object(p, parent, key, false, &o);
	if (rc || !o)
		return rc;
	size_t m = jp_key(p, key);
	size_t unit;
	char *note;
	if (!(rc = j_keys(p, o, keys)) && !(rc = j_string(p, o, "kind", true, &l->kind)) &&
	    !(rc = j_figure(p, o, "bw_gbs", true, U_LINK, J_POSITIVE, &l->bw_gbs, &unit)) &&
	    !(rc = j_string(p, o, "note", false, &note))) {
		if (unit == 1)
			l->bw_gbs /= 2; /* bidirectional total -> each direction */
	}
	jp_pop(p, m);
	return rc;
}

static int parse_hw(struct jp *p, const cJSON *e, struct cat_hardware *h)
{
	static const char *const keys[] = { "id", "name", "aliases", "family", "memory_gb",
		"memory_visible_gib", "mem_bw_gbs", "tflops", "tdp_w", "idle_w",
		"interconnect", "unified_memory", "usable_memory_fraction", "note", NULL };
	static const char *const link_keys[] = { "peer", "host", NULL };
	struct catalog *cat = p->cat;
	int rc;
	char *family, *note;
	const cJSON *tf, *ic;
	if (!cJSON_IsObject(e))
		return jp_fail(p, "expected an object");
	if ((rc = j_keys(p, e, keys)) || (rc = j_id(p, e, "id", &h->id)) ||
	    (rc = j_string(p, e, "name", true, &h->name)) ||
	    (rc = j_aliases(p, e, &h->aliases, &h->alias_count)) ||
	    (rc = j_string(p, e, "family", true, &family)))
		return rc;
	size_t fi = 0;
	while (fi < cat->family_count && !catalog_name_eq(cat->families[fi].id, family))
		fi++;
	if (fi == cat->family_count) {
		size_t m = jp_key(p, "family");
		rc = jp_fail(p, "unknown family '%s' (not in families.json)", family);
		jp_pop(p, m);
		return rc;
	}
	h->family = &cat->families[fi];
	if ((rc = j_figure(p, e, "memory_gb", true, U_GB, J_POSITIVE, &h->memory_gb, NULL)) ||
	    (rc = j_figure(p, e, "memory_visible_gib", false, U_GIB, J_POSITIVE,
			   &h->memory_visible_gib, NULL)) ||
	    (rc = j_figure(p, e, "mem_bw_gbs", true, U_GBS, J_POSITIVE, &h->mem_bw_gbs, NULL)) ||
	    (rc = j_object(p, e, "tflops", true, &tf)))
		return rc;
	{
		size_t m = jp_key(p, "tflops");
		rc = j_keys(p, tf, dtype_names);
		for (int t = 0; t < CAT_DTYPE_COUNT && !rc; t++)
			rc = j_figure(p, tf, dtype_names[t], false,
				      t == CAT_DTYPE_INT8 ? U_TOPS : U_TFLOPS, J_POSITIVE,
				      &h->tflops[t], NULL);
		jp_pop(p, m);
		if (rc)
			return rc;
	}
	if ((rc = j_figure(p, e, "tdp_w", false, U_W, J_POSITIVE, &h->tdp_w, NULL)) ||
	    (rc = j_figure(p, e, "idle_w", false, U_W, J_POSITIVE, &h->idle_w, NULL)) ||
	    (rc = j_object(p, e, "interconnect", false, &ic)))
		return rc;
	if (ic) {
		size_t m = jp_key(p, "interconnect");
		if (!(rc = j_keys(p, ic, link_keys)) &&
		    !(rc = parse_link(p, ic, "peer", &h->peer_link)))
			rc = parse_link(p, ic, "host", &h->host_link);
		jp_pop(p, m);
		if (rc)
			return rc;
	}
	if ((rc = j_bool(p, e, "unified_memory", true, false, &h->unified_memory)) ||
	    (rc = j_figure(p, e, "usable_memory_fraction", h->unified_memory, U_FRACTION,
			   J_FRACTION, &h->usable_memory_fraction, NULL)) ||
	    (rc = j_string(p, e, "note", false, &note)))
		return rc;
	if (h->usable_memory_fraction == 0)
		h->usable_memory_fraction = 1.0;
	return 0;
}

static int parse_hardware(struct jp *p, const cJSON *root)
{
	static const char *const keys[] = { "schema_version", "description", "hardware", NULL };
	struct catalog *cat = p->cat;
	const cJSON *arr;
	size_t n;
	int rc;
	if ((rc = j_header(p, root, keys)) || (rc = j_table(p, root, "hardware", &arr, &n)))
		return rc;
	if (!(cat->hardware = cat_calloc(cat, n, sizeof(*cat->hardware))))
		return jp_nomem(p);
	cat->hardware_count = n;
	for (size_t i = 0; i < n; i++) {
		size_t m = jp_key(p, "hardware");
		jp_index(p, i);
		rc = parse_hw(p, cJSON_GetArrayItem(arr, (int)i), &cat->hardware[i]);
		jp_pop(p, m);
		if (rc)
			return rc;
	}
	struct names t = NAMES(n, struct cat_hardware);
	return names_unique(p, "hardware", cat->hardware, &t);
}

/* ---- models.json -------------------------------------------------------- */

/* Parameter counts from the architecture (see catalog.h). Doubles are exact
 * here: every product stays far below 2^53 within the accepted ranges. */
static int model_derive(struct jp *p, struct cat_model *md)
{
	double h = (double)md->hidden_size;
	double q = (double)(md->heads * md->head_dim);
	double kv = (double)(md->kv_heads * md->head_dim);
	double embed = (double)md->vocab_size * h;
	double lm_head = md->tied_embeddings ? 0 : embed;
	double norms = (double)md->layers * 2 * h + h;
	double linear;
	if (md->attention == CAT_ATTN_GQA) {
		double attn = h * q + 2 * h * kv + q * h;
		if (md->attention_bias)
			attn += q + 2 * kv;
		double dense_ffn = 3 * h * (double)md->intermediate_size;
		double ffn;
		if (md->experts == 0) {
			ffn = (double)md->layers * dense_ffn;
		} else {
			double moe_ffn = (double)(md->experts + md->shared_experts) * 3 * h *
					 (double)md->expert_intermediate_size +
					 h * (double)md->experts; /* router */
			ffn = (double)md->dense_layers * dense_ffn +
			      (double)(md->layers - md->dense_layers) * moe_ffn;
		}
		linear = (double)md->layers * attn + ffn;
		double total = linear + norms + embed + lm_head;
		double rel = fabs(total - md->params_published) / md->params_published;
		if (rel > CAT_PARAMS_TOLERANCE) {
			size_t m = jp_key(p, "params");
			int rc = jp_fail(p, "published count %.4g differs from %.4g counted "
					 "from the architecture by %.1f%% (more than %.0f%%)",
					 md->params_published, total, rel * 100,
					 CAT_PARAMS_TOLERANCE * 100);
			jp_pop(p, m);
			return rc;
		}
	} else {
		linear = md->params_published - norms - embed - lm_head;
		if (linear <= 0) {
			size_t m = jp_key(p, "params");
			int rc = jp_fail(p, "published count %.4g is smaller than the "
					 "embeddings and norms alone", md->params_published);
			jp_pop(p, m);
			return rc;
		}
	}
	md->embedding_params = (int64_t)embed;
	md->lm_head_params = (int64_t)lm_head;
	md->norm_params = (int64_t)norms;
	md->linear_params = (int64_t)llround(linear);
	md->total_params = md->embedding_params + md->lm_head_params + md->norm_params +
			   md->linear_params;
	return 0;
}

static int parse_model(struct jp *p, const cJSON *e, struct cat_model *md)
{
	static const char *const keys[] = { "id", "name", "aliases", "source", "architecture",
		"attention", "layers", "hidden_size", "heads", "kv_heads", "head_dim",
		"intermediate_size", "vocab_size", "max_context", "tied_embeddings",
		"attention_bias", "params", "moe", "mla", "note", NULL };
	static const char *const src_keys[] = { "url", "date", "note", NULL };
	static const char *const moe_keys[] = { "experts", "experts_per_token",
		"shared_experts", "expert_intermediate_size", "dense_layers", NULL };
	static const char *const mla_keys[] = { "kv_lora_rank", "qk_rope_head_dim", NULL };
	const int64_t BIG = (int64_t)1 << 24;
	int rc;
	char *arch, *attn, *url, *note;
	const cJSON *src, *moe, *mla;
	if (!cJSON_IsObject(e))
		return jp_fail(p, "expected an object");
	if ((rc = j_keys(p, e, keys)) || (rc = j_id(p, e, "id", &md->id)) ||
	    (rc = j_string(p, e, "name", true, &md->name)) ||
	    (rc = j_aliases(p, e, &md->aliases, &md->alias_count)) ||
	    (rc = j_object(p, e, "source", true, &src)))
		return rc;
	{
		size_t m = jp_key(p, "source");
		if (!(rc = j_keys(p, src, src_keys)) && !(rc = j_string(p, src, "url", true, &url)) &&
		    !(rc = j_date(p, src, "date")))
			rc = j_string(p, src, "note", false, &note);
		jp_pop(p, m);
		if (rc)
			return rc;
	}
	if ((rc = j_string(p, e, "architecture", true, &arch)))
		return rc;
	bool is_moe = strcmp(arch, "moe") == 0;
	if (!is_moe && strcmp(arch, "dense") != 0) {
		size_t m = jp_key(p, "architecture");
		rc = jp_fail(p, "expected \"dense\" or \"moe\", got \"%s\"", arch);
		jp_pop(p, m);
		return rc;
	}
	if ((rc = j_string(p, e, "attention", true, &attn)))
		return rc;
	if (strcmp(attn, "gqa") == 0) {
		md->attention = CAT_ATTN_GQA;
	} else if (strcmp(attn, "mla") == 0) {
		md->attention = CAT_ATTN_MLA;
	} else {
		size_t m = jp_key(p, "attention");
		rc = jp_fail(p, "expected \"gqa\" or \"mla\", got \"%s\"", attn);
		jp_pop(p, m);
		return rc;
	}
	if ((rc = j_int(p, e, "layers", true, 1, 10000, &md->layers)) ||
	    (rc = j_int(p, e, "hidden_size", true, 1, 1 << 20, &md->hidden_size)) ||
	    (rc = j_int(p, e, "heads", true, 1, 4096, &md->heads)) ||
	    (rc = j_int(p, e, "kv_heads", true, 1, 4096, &md->kv_heads)) ||
	    (rc = j_int(p, e, "head_dim", true, 1, 4096, &md->head_dim)) ||
	    (rc = j_int(p, e, "intermediate_size", !is_moe, 1, 1 << 22,
			&md->intermediate_size)) ||
	    (rc = j_int(p, e, "vocab_size", true, 1, BIG, &md->vocab_size)) ||
	    (rc = j_int(p, e, "max_context", true, 1, (int64_t)1 << 30, &md->max_context)) ||
	    (rc = j_bool(p, e, "tied_embeddings", true, false, &md->tied_embeddings)) ||
	    (rc = j_bool(p, e, "attention_bias", false, false, &md->attention_bias)) ||
	    (rc = j_figure(p, e, "params", true, U_PARAMS, J_POSITIVE, &md->params_published,
			   NULL)) ||
	    (rc = j_object(p, e, "moe", is_moe, &moe)) ||
	    (rc = j_object(p, e, "mla", md->attention == CAT_ATTN_MLA, &mla)) ||
	    (rc = j_string(p, e, "note", false, &note)))
		return rc;
	if (md->heads % md->kv_heads != 0) {
		size_t m = jp_key(p, "kv_heads");
		rc = jp_fail(p, "%lld does not divide heads (%lld)", (long long)md->kv_heads,
			     (long long)md->heads);
		jp_pop(p, m);
		return rc;
	}
	if (moe && !is_moe) {
		size_t m = jp_key(p, "moe");
		rc = jp_fail(p, "given for a dense model (set \"architecture\": \"moe\")");
		jp_pop(p, m);
		return rc;
	}
	if (moe) {
		size_t m = jp_key(p, "moe");
		if (!(rc = j_keys(p, moe, moe_keys)) &&
		    !(rc = j_int(p, moe, "experts", true, 2, 65536, &md->experts)) &&
		    !(rc = j_int(p, moe, "experts_per_token", true, 1, md->experts,
				 &md->experts_per_token)) &&
		    !(rc = j_int(p, moe, "shared_experts", false, 0, 64, &md->shared_experts)) &&
		    !(rc = j_int(p, moe, "expert_intermediate_size", true, 1, 1 << 22,
				 &md->expert_intermediate_size)) &&
		    !(rc = j_int(p, moe, "dense_layers", false, 0, md->layers - 1,
				 &md->dense_layers)) &&
		    md->dense_layers > 0 && md->intermediate_size == 0)
			rc = jp_fail(p, "dense_layers > 0 needs the model's intermediate_size");
		jp_pop(p, m);
		if (rc)
			return rc;
	}
	if (mla && md->attention != CAT_ATTN_MLA) {
		size_t m = jp_key(p, "mla");
		rc = jp_fail(p, "given for a GQA model (set \"attention\": \"mla\")");
		jp_pop(p, m);
		return rc;
	}
	if (mla) {
		size_t m = jp_key(p, "mla");
		if (!(rc = j_keys(p, mla, mla_keys)) &&
		    !(rc = j_int(p, mla, "kv_lora_rank", true, 1, 1 << 16, &md->kv_lora_rank)))
			rc = j_int(p, mla, "qk_rope_head_dim", true, 1, 4096,
				   &md->qk_rope_head_dim);
		jp_pop(p, m);
		if (rc)
			return rc;
	}
	return model_derive(p, md);
}

static int parse_models(struct jp *p, const cJSON *root)
{
	static const char *const keys[] = { "schema_version", "description", "models", NULL };
	struct catalog *cat = p->cat;
	const cJSON *arr;
	size_t n;
	int rc;
	if ((rc = j_header(p, root, keys)) || (rc = j_table(p, root, "models", &arr, &n)))
		return rc;
	if (!(cat->models = cat_calloc(cat, n, sizeof(*cat->models))))
		return jp_nomem(p);
	cat->model_count = n;
	for (size_t i = 0; i < n; i++) {
		size_t m = jp_key(p, "models");
		jp_index(p, i);
		rc = parse_model(p, cJSON_GetArrayItem(arr, (int)i), &cat->models[i]);
		jp_pop(p, m);
		if (rc)
			return rc;
	}
	struct names t = NAMES(n, struct cat_model);
	return names_unique(p, "models", cat->models, &t);
}

/* ---- formats.json ------------------------------------------------------- */

static int j_dtype(struct jp *p, const cJSON *e, const char *key, bool required,
		   bool *present, enum cat_dtype *out)
{
	char *s;
	int rc = j_string(p, e, key, required, &s);
	*present = false;
	if (rc || !s)
		return rc;
	if (dtype_parse(s, out) != 0) {
		size_t m = jp_key(p, key);
		rc = jp_fail(p, "unknown dtype \"%s\" (expected bf16, fp16, fp8, int8 or fp4)", s);
		jp_pop(p, m);
		return rc;
	}
	*present = true;
	return 0;
}

static int parse_wformat(struct jp *p, const cJSON *e, struct cat_weight_format *f)
{
	static const char *const keys[] = { "id", "name", "aliases", "bits_per_weight",
		"compute_dtype", "fallback_compute_dtype", "embedding_bits", "note", NULL };
	int rc;
	bool present;
	char *note;
	if (!cJSON_IsObject(e))
		return jp_fail(p, "expected an object");
	if ((rc = j_keys(p, e, keys)) || (rc = j_id(p, e, "id", &f->id)) ||
	    (rc = j_string(p, e, "name", true, &f->name)) ||
	    (rc = j_aliases(p, e, &f->aliases, &f->alias_count)) ||
	    (rc = j_figure(p, e, "bits_per_weight", true, U_BITS, J_POSITIVE,
			   &f->bits_per_weight, NULL)) ||
	    (rc = j_dtype(p, e, "compute_dtype", true, &present, &f->compute_dtype)) ||
	    (rc = j_dtype(p, e, "fallback_compute_dtype", false, &f->has_fallback,
			  &f->fallback_dtype)) ||
	    (rc = j_figure(p, e, "embedding_bits", true, U_BITS, J_POSITIVE,
			   &f->embedding_bits, NULL)) ||
	    (rc = j_string(p, e, "note", false, &note)))
		return rc;
	return 0;
}

static int parse_kv(struct jp *p, const cJSON *e, struct cat_kv_dtype *k)
{
	static const char *const keys[] = { "id", "name", "aliases", "bits_per_element",
		"note", NULL };
	int rc;
	char *note;
	if (!cJSON_IsObject(e))
		return jp_fail(p, "expected an object");
	if ((rc = j_keys(p, e, keys)) || (rc = j_id(p, e, "id", &k->id)) ||
	    (rc = j_string(p, e, "name", true, &k->name)) ||
	    (rc = j_aliases(p, e, &k->aliases, &k->alias_count)) ||
	    (rc = j_figure(p, e, "bits_per_element", true, U_BITS, J_POSITIVE,
			   &k->bits_per_element, NULL)) ||
	    (rc = j_string(p, e, "note", false, &note)))
		return rc;
	return 0;
}

static int parse_formats(struct jp *p, const cJSON *root)
{
	static const char *const keys[] = { "schema_version", "description", "weight_formats",
		"kv_dtypes", NULL };
	struct catalog *cat = p->cat;
	const cJSON *wa, *ka;
	size_t nw, nk;
	int rc;
	if ((rc = j_header(p, root, keys)) ||
	    (rc = j_table(p, root, "weight_formats", &wa, &nw)) ||
	    (rc = j_table(p, root, "kv_dtypes", &ka, &nk)))
		return rc;
	if (!(cat->weight_formats = cat_calloc(cat, nw, sizeof(*cat->weight_formats))) ||
	    !(cat->kv_dtypes = cat_calloc(cat, nk, sizeof(*cat->kv_dtypes))))
		return jp_nomem(p);
	cat->weight_format_count = nw;
	cat->kv_dtype_count = nk;
	for (size_t i = 0; i < nw; i++) {
		size_t m = jp_key(p, "weight_formats");
		jp_index(p, i);
		rc = parse_wformat(p, cJSON_GetArrayItem(wa, (int)i), &cat->weight_formats[i]);
		jp_pop(p, m);
		if (rc)
			return rc;
	}
	for (size_t i = 0; i < nk; i++) {
		size_t m = jp_key(p, "kv_dtypes");
		jp_index(p, i);
		rc = parse_kv(p, cJSON_GetArrayItem(ka, (int)i), &cat->kv_dtypes[i]);
		jp_pop(p, m);
		if (rc)
			return rc;
	}
	struct names tw = NAMES(nw, struct cat_weight_format);
	struct names tk = NAMES(nk, struct cat_kv_dtype);
	if ((rc = names_unique(p, "weight_formats", cat->weight_formats, &tw)))
		return rc;
	return names_unique(p, "kv_dtypes", cat->kv_dtypes, &tk);
}

/* ---- files -------------------------------------------------------------- */

typedef int (*parse_fn)(struct jp *p, const cJSON *root);

static const struct {
	const char *name;
	parse_fn parse;
} catalog_parts[] = {
	/* families first: hardware entries refer to them */
	{ "families.json", parse_families },
	{ "hardware.json", parse_hardware },
	{ "models.json", parse_models },
	{ "formats.json", parse_formats },
};

#define CATALOG_PARTS (sizeof(catalog_parts) / sizeof(catalog_parts[0]))

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

static int parse_one(struct catalog *cat, const struct catalog_file *f, parse_fn parse,
		     struct diag *d)
{
	if (f->len > CATALOG_FILE_MAX_BYTES)
		return diag_at(d, DIAG_EINPUT, f->name, 0, 0, "larger than %u bytes",
			       CATALOG_FILE_MAX_BYTES);
	const char *end = NULL;
	cJSON *root = cJSON_ParseWithLengthOpts(f->text, f->len, &end, 0);
	if (!root) {
		long line = 1, col = 1;
		const char *stop = (end && end >= f->text && end <= f->text + f->len) ? end
										       : f->text;
		for (const char *c = f->text; c < stop; c++) {
			if (*c == '\n') {
				line++;
				col = 1;
			} else {
				col++;
			}
		}
		return diag_at(d, DIAG_EINPUT, f->name, line, col,
			       "invalid JSON (or out of memory while parsing)");
	}
	struct jp p = { .cat = cat, .d = d, .file = f->name, .len = 0 };
	p.path[0] = '\0';
	int rc = cJSON_IsObject(root) ? parse(&p, root)
				      : jp_fail(&p, "expected a JSON object at the top level");
	cJSON_Delete(root);
	return rc;
}

int catalog_parse(struct catalog **out, const struct catalog_file *files, size_t n,
		  struct diag *d)
{
	*out = NULL;
	struct catalog *cat = calloc(1, sizeof(*cat));
	if (!cat)
		return diag_set(d, DIAG_ENOMEM, "out of memory while loading the catalogue");
	int rc = 0;
	for (size_t k = 0; k < CATALOG_PARTS && !rc; k++) {
		const struct catalog_file *f = NULL;
		for (size_t i = 0; i < n; i++)
			if (strcmp(base_name(files[i].name), catalog_parts[k].name) == 0)
				f = &files[i];
		if (!f)
			rc = diag_set(d, DIAG_EINPUT, "the catalogue has no %s",
				      catalog_parts[k].name);
		else
			rc = parse_one(cat, f, catalog_parts[k].parse, d);
	}
	if (rc) {
		catalog_free(cat);
		return rc;
	}
	assert(catalog_check(cat));
	*out = cat;
	return 0;
}

bool catalog_check(const struct catalog *cat)
{
	if (!cat || !cat->family_count || !cat->hardware_count || !cat->model_count ||
	    !cat->weight_format_count || !cat->kv_dtype_count)
		return false;
	for (size_t i = 0; i < cat->family_count; i++) {
		const struct cat_family *f = &cat->families[i];
		if (!id_valid(f->id) || !(f->eff_compute > 0 && f->eff_compute <= 1) ||
		    !(f->eff_bw > 0 && f->eff_bw <= 1) || !(f->step_overhead_us > 0))
			return false;
	}
	for (size_t i = 0; i < cat->hardware_count; i++) {
		const struct cat_hardware *h = &cat->hardware[i];
		if (!id_valid(h->id) || h->family < cat->families ||
		    h->family >= cat->families + cat->family_count || !(h->memory_gb > 0) ||
		    !(h->mem_bw_gbs > 0) ||
		    !(h->usable_memory_fraction > 0 && h->usable_memory_fraction <= 1))
			return false;
	}
	for (size_t i = 0; i < cat->model_count; i++) {
		const struct cat_model *m = &cat->models[i];
		if (!id_valid(m->id) || m->linear_params <= 0 || m->embedding_params <= 0 ||
		    m->total_params != m->embedding_params + m->lm_head_params +
					       m->norm_params + m->linear_params ||
		    m->heads % m->kv_heads != 0)
			return false;
	}
	for (size_t i = 0; i < cat->weight_format_count; i++)
		if (!id_valid(cat->weight_formats[i].id) ||
		    !(cat->weight_formats[i].bits_per_weight > 0))
			return false;
	for (size_t i = 0; i < cat->kv_dtype_count; i++)
		if (!id_valid(cat->kv_dtypes[i].id) || !(cat->kv_dtypes[i].bits_per_element > 0))
			return false;
	return true;
}

static int read_file(const char *path, char **text, size_t *len, struct diag *d)
{
	*text = NULL;
	*len = 0;
	FILE *fp = fopen(path, "rb");
	if (!fp)
		return diag_at(d, DIAG_EIO, path, 0, 0, "cannot open: %s", strerror(errno));
	size_t cap = 0, n = 0;
	char *buf = NULL;
	int rc = 0;
	for (;;) {
		if (n == cap) {
			if (cap >= CATALOG_FILE_MAX_BYTES + 1) {
				rc = diag_at(d, DIAG_EINPUT, path, 0, 0, "larger than %u bytes",
					     CATALOG_FILE_MAX_BYTES);
				break;
			}
			cap = cap ? cap * 2 : 64 * 1024;
			if (cap > CATALOG_FILE_MAX_BYTES + 1)
				cap = CATALOG_FILE_MAX_BYTES + 1;
			char *grown = realloc(buf, cap);
			if (!grown) {
				rc = diag_set(d, DIAG_ENOMEM, "%s: out of memory", path);
				break;
			}
			buf = grown;
		}
		size_t got = fread(buf + n, 1, cap - n, fp);
		n += got;
		if (got == 0) {
			if (ferror(fp))
				rc = diag_at(d, DIAG_EIO, path, 0, 0, "read failed: %s",
					     strerror(errno));
			break;
		}
	}
	fclose(fp);
	if (rc) {
		free(buf);
		return rc;
	}
	*text = buf;
	*len = n;
	return 0;
}

int catalog_load(struct catalog **out, const char *dir, struct diag *d)
{
	*out = NULL;
	if (!dir) {
		size_t n;
		const struct catalog_file *files = catalog_embedded(&n);
		return catalog_parse(out, files, n, d);
	}
	char paths[CATALOG_PARTS][4096];
	struct catalog_file files[CATALOG_PARTS];
	char *texts[CATALOG_PARTS] = { 0 };
	int rc = 0;
	for (size_t k = 0; k < CATALOG_PARTS && !rc; k++) {
		int w = snprintf(paths[k], sizeof(paths[k]), "%s/%s", dir, catalog_parts[k].name);
		if (w < 0 || (size_t)w >= sizeof(paths[k])) {
			rc = diag_set(d, DIAG_EINPUT, "catalogue directory path too long");
			break;
		}
		size_t len;
		rc = read_file(paths[k], &texts[k], &len, d);
		files[k] = (struct catalog_file){ .name = paths[k], .text = texts[k], .len = len };
	}
	if (!rc)
		rc = catalog_parse(out, files, CATALOG_PARTS, d);
	for (size_t k = 0; k < CATALOG_PARTS; k++)
		free(texts[k]);
	return rc;
}

/* ---- lookups ------------------------------------------------------------ */

const struct cat_family *catalog_family(const struct catalog *cat, const char *name)
{
	for (size_t i = 0; name && i < cat->family_count; i++)
		if (catalog_name_eq(cat->families[i].id, name))
			return &cat->families[i];
	return NULL;
}

const struct cat_hardware *catalog_hardware(const struct catalog *cat, const char *name)
{
	struct names t = NAMES(cat->hardware_count, struct cat_hardware);
	size_t i = names_lookup(cat->hardware, &t, name);
	return i < t.count ? &cat->hardware[i] : NULL;
}

const struct cat_model *catalog_model(const struct catalog *cat, const char *name)
{
	struct names t = NAMES(cat->model_count, struct cat_model);
	size_t i = names_lookup(cat->models, &t, name);
	return i < t.count ? &cat->models[i] : NULL;
}

const struct cat_weight_format *catalog_weight_format(const struct catalog *cat,
						      const char *name)
{
	struct names t = NAMES(cat->weight_format_count,
			       struct cat_weight_format);
	size_t i = names_lookup(cat->weight_formats, &t, name);
	return i < t.count ? &cat->weight_formats[i] : NULL;
}

const struct cat_kv_dtype *catalog_kv_dtype(const struct catalog *cat, const char *name)
{
	struct names t = NAMES(cat->kv_dtype_count, struct cat_kv_dtype);
	size_t i = names_lookup(cat->kv_dtypes, &t, name);
	return i < t.count ? &cat->kv_dtypes[i] : NULL;
}

/* "a, b, c" of a table's ids into buf (truncated with "..."). */
static void list_ids(const void *base, const struct names *t, char *buf, size_t size)
{
	size_t used = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < t->count; i++) {
		int w = snprintf(buf + used, size - used, "%s%s", i ? ", " : "",
				 names_id(base, t, i));
		if (w < 0 || (size_t)w >= size - used) {
			if (size > 4)
				memcpy(buf + size - 4, "...", 4);
			return;
		}
		used += (size_t)w;
	}
}

static int unknown(struct diag *d, const char *what, const char *name, const void *base,
		   const struct names *t)
{
	char known[384];
	list_ids(base, t, known, sizeof(known));
	return diag_set(d, DIAG_EINPUT, "unknown %s '%s' (known: %s)", what, name ? name : "",
			known);
}

int catalog_select(const struct catalog *cat, struct cat_selection *sel,
		   const char *hardware, const char *model, const char *weight_format,
		   const char *kv_dtype, struct diag *d)
{
	memset(sel, 0, sizeof(*sel));
	if (!weight_format)
		weight_format = "bf16";
	if (!kv_dtype)
		kv_dtype = "bf16";
	struct names th = NAMES(cat->hardware_count, struct cat_hardware);
	struct names tm = NAMES(cat->model_count, struct cat_model);
	struct names tw = NAMES(cat->weight_format_count,
				struct cat_weight_format);
	struct names tk = NAMES(cat->kv_dtype_count, struct cat_kv_dtype);
	if (!(sel->hardware = catalog_hardware(cat, hardware)))
		return unknown(d, "hardware", hardware, cat->hardware, &th);
	if (!(sel->model = catalog_model(cat, model)))
		return unknown(d, "model", model, cat->models, &tm);
	if (!(sel->weight_format = catalog_weight_format(cat, weight_format)))
		return unknown(d, "weight format", weight_format, cat->weight_formats, &tw);
	if (!(sel->kv_dtype = catalog_kv_dtype(cat, kv_dtype)))
		return unknown(d, "KV-cache dtype", kv_dtype, cat->kv_dtypes, &tk);
	return 0;
}

double catalog_matmul_flops(const struct cat_hardware *hw, const struct cat_weight_format *wf,
			    enum cat_dtype *used)
{
	enum cat_dtype t = wf->compute_dtype;
	double tflops = hw->tflops[t];
	if (tflops <= 0 && wf->has_fallback) {
		t = wf->fallback_dtype;
		tflops = hw->tflops[t];
	}
	if (used)
		*used = t;
	return tflops > 0 ? tflops * 1e12 : 0;
}
