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
 * System entries are resolved in a second pass over hardware.json, once
 * every accelerator is known: each takes a copy of its accelerator's
 * figures, so readers never follow the device pointer for them.  Model
 * counts are derived from the architecture (attention, Gated DeltaNet, dense
 * and MoE FFN, embeddings, norms) and checked against the published totals.
 * The end of the file renders the listings of `agentcap catalog` to a
 * caller-given stream; they print nothing on their own.
 */
#include "models/catalog.h"
#include "models/power.h"
#include "base/jsonw.h"

#include <assert.h>
#include <cJSON.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
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

/* Append text to the path, cut at its end (the path is only read in
 * messages; the parse pushes a key per field, so no printf here). */
static void jp_append(struct jp *p, const char *text, size_t n)
{
	size_t room = sizeof(p->path) - 1 - p->len;
	if (n > room)
		n = room;
	memcpy(p->path + p->len, text, n);
	p->len += n;
	p->path[p->len] = '\0';
}

static size_t jp_key(struct jp *p, const char *key)
{
	size_t mark = p->len;
	if (p->len)
		jp_append(p, ".", 1);
	jp_append(p, key, strlen(key));
	return mark;
}

static size_t jp_index(struct jp *p, size_t i)
{
	size_t mark = p->len;
	char buf[24];
	size_t n = sizeof(buf);
	buf[--n] = ']';
	do {
		buf[--n] = (char)('0' + i % 10);
		i /= 10;
	} while (i);
	buf[--n] = '[';
	jp_append(p, buf + n, sizeof(buf) - n);
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

/* A sourced figure: {"value": n, "unit": u, "source": s, "date": d, "note"?},
 * and when max_out is not NULL an optional "max" (the upper end of a
 * published range, >= value; *max_out = value when absent).
 * units is a NULL-terminated list of accepted unit strings; *unit_idx (may be
 * NULL) receives the one matched. *out is 0 when the figure is absent. */
static int j_figure_x(struct jp *p, const cJSON *obj, const char *key, bool required,
		      const char *const *units, enum j_range range, double *out,
		      size_t *unit_idx, double *max_out)
{
	static const char *const keys[] = { "value", "unit", "source", "date", "note", NULL };
	static const char *const keys_max[] = { "value", "max", "unit", "source", "date",
		"note", NULL };
	const cJSON *it = j_get(obj, key);
	*out = 0;
	if (unit_idx)
		*unit_idx = 0;
	if (max_out)
		*max_out = 0;
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
	if ((rc = j_keys(p, it, max_out ? keys_max : keys)))
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
	double xmax = x;
	const cJSON *mx = max_out ? j_get(it, "max") : NULL;
	if (mx) {
		size_t mv = jp_key(p, "max");
		if (!cJSON_IsNumber(mx) || !isfinite(mx->valuedouble))
			rc = jp_fail(p, "expected a number");
		else if (mx->valuedouble < x || (range == J_FRACTION && mx->valuedouble > 1))
			rc = jp_fail(p, "%.17g is out of range (expected at least value, %.17g%s)",
				     mx->valuedouble, x, range == J_FRACTION ? ", and at most 1" : "");
		else
			xmax = mx->valuedouble;
		jp_pop(p, mv);
		if (rc)
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
	if (max_out)
		*max_out = xmax;
	if (unit_idx)
		*unit_idx = ui;
out:
	jp_pop(p, m);
	return rc;
}

static int j_figure(struct jp *p, const cJSON *obj, const char *key, bool required,
		    const char *const *units, enum j_range range, double *out,
		    size_t *unit_idx)
{
	return j_figure_x(p, obj, key, required, units, range, out, unit_idx, NULL);
}

/* An optional array of at most max non-empty strings under `key`. */
static int j_aliases_key(struct jp *p, const cJSON *obj, const char *key, int max,
			 char ***out, size_t *n)
{
	const cJSON *it = j_get(obj, key);
	*out = NULL;
	*n = 0;
	if (!it)
		return 0;
	size_t m = jp_key(p, key);
	int rc = 0;
	int count = cJSON_GetArraySize(it);
	if (!cJSON_IsArray(it)) {
		rc = jp_fail(p, "expected an array of strings");
	} else if (count > max) {
		rc = jp_fail(p, "more than %d entries", max);
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

/* An optional array of alias strings. */
static int j_aliases(struct jp *p, const cJSON *obj, char ***out, size_t *n)
{
	return j_aliases_key(p, obj, "aliases", CAT_MAX_ALIASES, out, n);
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

/* ASCII only: a name's meaning does not depend on the locale. */
static int name_char(int c)
{
	if (c == ' ' || c == '_')
		return '-';
	return c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c;
}

bool catalog_name_eq(const char *a, const char *b)
{
	if (!a || !b)
		return false;
	for (; *a && *b; a++, b++)
		if (*a != *b && name_char((unsigned char)*a) != name_char((unsigned char)*b))
			return false;
	return *a == *b;
}

/* Order of names under catalog_name_eq (0 exactly when equal). */
static int name_cmp(const char *a, const char *b)
{
	for (;; a++, b++) {
		int x = name_char((unsigned char)*a), y = name_char((unsigned char)*b);
		if (x != y || !x)
			return (x > y) - (x < y);
	}
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

struct name_ref {
	const char *name;
	size_t i, k; /* entry, and name k of it (0: the id) */
};

static int name_ref_cmp(const void *pa, const void *pb)
{
	const struct name_ref *a = pa, *b = pb;
	int c = name_cmp(a->name, b->name);
	if (c)
		return c;
	if (a->i != b->i)
		return a->i < b->i ? -1 : 1;
	return (a->k > b->k) - (a->k < b->k);
}

/* No two names of the table may be equal under catalog_name_eq.  Of every
 * clash the one reported is the name read first that repeats an earlier
 * one, named with the earliest entry it repeats: sorted, each run of equal
 * names is in reading order, its second member is the repeat and its first
 * the entry repeated. */
static int names_unique(struct jp *p, const char *table, const void *base,
			const struct names *t)
{
	size_t n = 0;
	for (size_t i = 0; i < t->count; i++)
		n += names_alias_count(base, t, i) + 1;
	if (n < 2)
		return 0;
	struct name_ref *v = malloc(n * sizeof(*v));
	if (!v)
		return jp_nomem(p);
	size_t at = 0;
	for (size_t i = 0; i < t->count; i++)
		for (size_t k = 0; k <= names_alias_count(base, t, i); k++)
			v[at++] = (struct name_ref){ names_at(base, t, i, k), i, k };
	qsort(v, n, sizeof(*v), name_ref_cmp);
	const struct name_ref *rep = NULL, *first = NULL;
	for (size_t x = 1; x < n; x++) {
		if (name_cmp(v[x - 1].name, v[x].name) != 0 ||
		    (x >= 2 && name_cmp(v[x - 2].name, v[x].name) == 0))
			continue;
		if (!rep || v[x].i < rep->i || (v[x].i == rep->i && v[x].k < rep->k)) {
			rep = &v[x];
			first = &v[x - 1];
		}
	}
	int rc = 0;
	if (rep) {
		size_t m = jp_key(p, table);
		jp_index(p, rep->i);
		if (rep->k == 0) {
			jp_key(p, "id");
		} else {
			jp_key(p, "aliases");
			jp_index(p, rep->k - 1);
		}
		rc = jp_fail(p, "'%s' already names '%s' (%s[%zu])", rep->name,
			     names_id(base, t, first->i), table, first->i);
		jp_pop(p, m);
	}
	free(v);
	return rc;
}

/* ---- families.json ------------------------------------------------------ */

static const char *const U_FRACTION[] = { "fraction", NULL };
static const char *const U_US[] = { "us", NULL };
static const char *const U_GIB[] = { "GiB", NULL };
static const char *const U_GB[] = { "GB", NULL };
static const char *const U_GBS[] = { "GB/s", NULL };
static const char *const U_DIES[] = { "dies", NULL };
static const char *const U_TFLOPS[] = { "TFLOPS", NULL };
static const char *const U_TOPS[] = { "TOPS", NULL };
static const char *const U_W[] = { "W", NULL };
static const char *const U_W_PER_SM[] = { "W per SM at 1 GHz", NULL };
static const char *const U_MHZ[] = { "MHz", NULL };
static const char *const U_LINK[] = { "GB/s per direction", "GB/s bidirectional", NULL };
static const char *const U_BITS[] = { "bits", NULL };
static const char *const U_PARAMS[] = { "parameters", NULL };

static int parse_matmul_unit(struct jp *p, const cJSON *e, struct cat_matmul_unit *u)
{
	static const char *const keys[] = { "id", "name", "eff_compute", "note", NULL };
	int rc;
	char *note;
	if (!cJSON_IsObject(e))
		return jp_fail(p, "expected an object");
	if ((rc = j_keys(p, e, keys)) || (rc = j_id(p, e, "id", &u->id)) ||
	    (rc = j_string(p, e, "name", true, &u->name)) ||
	    (rc = j_figure(p, e, "eff_compute", true, U_FRACTION, J_FRACTION, &u->eff_compute,
			   NULL)) ||
	    (rc = j_string(p, e, "note", false, &note)))
		return rc;
	return 0;
}

static int parse_family(struct jp *p, const cJSON *e, struct cat_family *f)
{
	static const char *const keys[] = { "id", "name", "matmul_unit", "memory_kind",
		"eff_compute", "eff_bw", "step_overhead_us", "eff_issue", "sm_w_at_1ghz",
		"runtime_reserve_gib", "die_remote_penalty", "note", NULL };
	int rc;
	char *note, *unit, *mem;
	if (!cJSON_IsObject(e))
		return jp_fail(p, "expected an object");
	if ((rc = j_keys(p, e, keys)) || (rc = j_id(p, e, "id", &f->id)) ||
	    (rc = j_string(p, e, "name", true, &f->name)) ||
	    (rc = j_string(p, e, "matmul_unit", true, &unit)))
		return rc;
	for (size_t i = 0; i < p->cat->matmul_unit_count && !f->matmul_unit; i++)
		if (catalog_name_eq(p->cat->matmul_units[i].id, unit))
			f->matmul_unit = &p->cat->matmul_units[i];
	if (!f->matmul_unit) {
		size_t m = jp_key(p, "matmul_unit");
		rc = jp_fail(p, "unknown matmul unit '%s' (expected an id of matmul_units)", unit);
		jp_pop(p, m);
		return rc;
	}
	if ((rc = j_string(p, e, "memory_kind", true, &mem)))
		return rc;
	if (strcmp(mem, "hbm") == 0 || strcmp(mem, "dram") == 0) {
		f->memory_kind = mem[0] == 'h' ? CAT_MEM_HBM : CAT_MEM_DRAM;
	} else {
		size_t m = jp_key(p, "memory_kind");
		rc = jp_fail(p, "'%s' (expected \"hbm\" or \"dram\")", mem);
		jp_pop(p, m);
		return rc;
	}
	if (
	    (rc = j_figure(p, e, "eff_compute", true, U_FRACTION, J_FRACTION,
			   &f->eff_compute, NULL)) ||
	    (rc = j_figure(p, e, "eff_bw", true, U_FRACTION, J_FRACTION, &f->eff_bw, NULL)) ||
	    (rc = j_figure(p, e, "step_overhead_us", true, U_US, J_POSITIVE,
			   &f->step_overhead_us, NULL)) ||
	    (rc = j_figure(p, e, "eff_issue", false, U_FRACTION, J_FRACTION, &f->eff_issue,
			   NULL)) ||
	    (rc = j_figure(p, e, "sm_w_at_1ghz", false, U_W_PER_SM, J_POSITIVE,
			   &f->sm_w_at_1ghz, NULL)) ||
	    (rc = j_figure(p, e, "runtime_reserve_gib", true, U_GIB, J_POSITIVE,
			   &f->runtime_reserve_gib, NULL)) ||
	    (rc = j_figure(p, e, "die_remote_penalty", false, U_FRACTION, J_FRACTION,
			   &f->die_remote_penalty, NULL)) ||
	    (rc = j_string(p, e, "note", false, &note)))
		return rc;
	return 0;
}

static int parse_families(struct jp *p, const cJSON *root)
{
	static const char *const keys[] = { "schema_version", "description", "matmul_units",
		"families", NULL };
	struct catalog *cat = p->cat;
	const cJSON *arr, *units;
	size_t n, nu;
	int rc;
	if ((rc = j_header(p, root, keys)) || (rc = j_table(p, root, "matmul_units", &units, &nu)))
		return rc;
	if (!(cat->matmul_units = cat_calloc(cat, nu, sizeof(*cat->matmul_units))))
		return jp_nomem(p);
	cat->matmul_unit_count = nu;
	for (size_t i = 0; i < nu; i++) {
		size_t m = jp_key(p, "matmul_units");
		jp_index(p, i);
		rc = parse_matmul_unit(p, cJSON_GetArrayItem(units, (int)i), &cat->matmul_units[i]);
		jp_pop(p, m);
		if (rc)
			return rc;
	}
	if ((rc = j_table(p, root, "families", &arr, &n)))
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

static const char *const U_CURRENCY[] = { "USD", "EUR", NULL };
static const char *const U_USD_PER_EUR[] = { "USD/EUR", NULL };
static const char *const U_PER_HOUR[] = { "USD/hour", "EUR/hour", NULL };

static const char *const currency_names[] = { "", "USD", "EUR" };

const char *cat_currency_name(enum cat_currency c)
{
	return ((int)c >= 0 && (int)c <= CAT_CUR_EUR) ? currency_names[c] : "?";
}

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

/* A dated price {"value", "max"?, "unit": currency, "source", "date",
 * "note"?}; units lists the accepted units, whose index k maps to currency
 * k + 1 (USD, EUR). */
static int j_price(struct jp *p, const cJSON *obj, const char *key,
		   const char *const *units, struct cat_price *pr)
{
	size_t ui;
	memset(pr, 0, sizeof(*pr));
	int rc = j_figure_x(p, obj, key, false, units, J_POSITIVE, &pr->amount, &ui,
			    &pr->amount_max);
	if (rc || pr->amount == 0)
		return rc;
	const cJSON *it = j_get(obj, key);
	size_t m = jp_key(p, key);
	if (!(rc = j_string(p, it, "date", true, &pr->date)))
		rc = j_string(p, it, "source", true, &pr->source);
	jp_pop(p, m);
	pr->currency = (enum cat_currency)(ui + 1);
	return rc;
}

/* The "system" object of a complete system; *accel receives the name of
 * its accelerator (resolved once every entry is read). */
static int parse_system(struct jp *p, const cJSON *e, struct cat_hardware *h, char **accel)
{
	static const char *const keys[] = { "kind", "accelerator", "count", "peer_link",
		"host_memory_gb", "note", NULL };
	static const char *const kinds[] = { "workstation", "desktop", "laptop", "server",
		"cluster", NULL };
	const cJSON *sys;
	int rc = j_object(p, e, "system", true, &sys);
	if (rc)
		return rc;
	size_t m = jp_key(p, "system");
	char *note;
	if ((rc = j_keys(p, sys, keys)) ||
	    (rc = j_string(p, sys, "kind", true, &h->system_kind)) ||
	    (rc = j_string(p, sys, "accelerator", true, accel)) ||
	    (rc = j_int(p, sys, "count", true, 1, 1024, &h->device_count)) ||
	    (rc = parse_link(p, sys, "peer_link", &h->peer_link)) ||
	    (rc = j_figure_x(p, sys, "host_memory_gb", false, U_GB, J_POSITIVE,
			     &h->host_memory_gb, NULL, &h->host_memory_max_gb)) ||
	    (rc = j_string(p, sys, "note", false, &note)))
		goto out;
	size_t k = 0;
	while (kinds[k] && strcmp(kinds[k], h->system_kind) != 0)
		k++;
	if (!kinds[k]) {
		size_t mk = jp_key(p, "kind");
		rc = jp_fail(p, "expected \"workstation\", \"desktop\", \"laptop\", \"server\" or "
			     "\"cluster\", got \"%s\"", h->system_kind);
		jp_pop(p, mk);
	}
out:
	jp_pop(p, m);
	return rc;
}

/* "package": {"dies": N, "die_link_gbs": sourced figure (absent where the
 * vendor publishes none)}: a package of N GPU dies joined by a die link;
 * absent, one die. */
static int parse_package(struct jp *p, const cJSON *e, struct cat_hardware *h)
{
	static const char *const keys[] = { "dies", "die_link_gbs", "note", NULL };
	const cJSON *pk;
	h->dies = 1;
	int rc = j_object(p, e, "package", false, &pk);
	if (rc || !pk)
		return rc;
	size_t m = jp_key(p, "package");
	char *note;
	double dies = 0;
	if (!(rc = j_keys(p, pk, keys)) &&
	    !(rc = j_figure(p, pk, "dies", true, U_DIES, J_POSITIVE, &dies, NULL)) &&
	    !(rc = dies == floor(dies) && dies >= 1 && dies <= 64
			   ? 0 : jp_fail(p, "dies: %.17g (expected a whole number from 1 to 64)",
					 dies)) &&
	    !(rc = j_figure(p, pk, "die_link_gbs", false, U_GBS, J_POSITIVE, &h->die_link_gbs,
			    NULL)))
		rc = j_string(p, pk, "note", false, &note);
	if (!rc)
		h->dies = (int64_t)dies;
	if (!rc && h->dies == 1 && h->die_link_gbs > 0) {
		size_t mk = jp_key(p, "die_link_gbs");
		rc = jp_fail(p, "a package of one die has no die link (expected dies >= 2, or "
			     "no die_link_gbs)");
		jp_pop(p, mk);
	}
	jp_pop(p, m);
	return rc;
}

static int parse_hw(struct jp *p, const cJSON *e, struct cat_hardware *h, char **accel)
{
	static const char *const keys[] = { "id", "name", "aliases", "family", "memory_gb",
		"memory_visible_gib", "mem_bw_gbs", "tflops", "fp32_vector_tflops", "gpu_cores",
		"gpu_clock_mhz",
		"tdp_w", "power_limit_w", "idle_w", "inference_w", "interconnect", "unified_memory",
		"usable_memory_fraction", "package", "price", "rent_per_hour", "note", NULL };
	static const char *const system_keys[] = { "id", "name", "aliases", "system", "price",
		"rent_per_hour", "note", NULL };
	static const char *const tflops_keys[] = { "bf16", "fp16", "fp8", "int8", "fp4",
		"fp16_fp16acc", "fp8_fp16acc", NULL };
	static const char *const link_keys[] = { "peer", "host", NULL };
	struct catalog *cat = p->cat;
	int rc;
	char *family, *note;
	const cJSON *tf, *ic;
	double ignored;
	*accel = NULL;
	if (!cJSON_IsObject(e))
		return jp_fail(p, "expected an object");
	bool is_system = j_get(e, "system") != NULL;
	if ((rc = j_keys(p, e, is_system ? system_keys : keys)) ||
	    (rc = j_id(p, e, "id", &h->id)) || (rc = j_string(p, e, "name", true, &h->name)) ||
	    (rc = j_aliases(p, e, &h->aliases, &h->alias_count)) ||
	    (rc = j_price(p, e, "price", U_CURRENCY, &h->price)) ||
	    (rc = j_price(p, e, "rent_per_hour", U_PER_HOUR, &h->rent_hour)) ||
	    (rc = j_string(p, e, "note", false, &note)))
		return rc;
	if (is_system)
		return parse_system(p, e, h, accel); /* figures come from the device */
	h->device = h;
	h->device_count = 1;
	if ((rc = j_string(p, e, "family", true, &family)))
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
		rc = j_keys(p, tf, tflops_keys);
		for (int t = 0; t < CAT_DTYPE_COUNT && !rc; t++)
			rc = j_figure(p, tf, dtype_names[t], false,
				      t == CAT_DTYPE_INT8 ? U_TOPS : U_TFLOPS, J_POSITIVE,
				      &h->tflops[t], NULL);
		if (!rc)
			rc = j_figure(p, tf, "fp16_fp16acc", false, U_TFLOPS, J_POSITIVE,
				      &h->tflops_fp16acc[CAT_DTYPE_FP16], NULL);
		if (!rc)
			rc = j_figure(p, tf, "fp8_fp16acc", false, U_TFLOPS, J_POSITIVE,
				      &h->tflops_fp16acc[CAT_DTYPE_FP8], NULL);
		jp_pop(p, m);
		if (rc)
			return rc;
		/* FP16 accumulation is never slower than FP32 accumulation */
		for (int t = 0; t < CAT_DTYPE_COUNT && !rc; t++) {
			double base = h->tflops[t];
			if (t == CAT_DTYPE_FP16 && base == 0)
				base = h->tflops[CAT_DTYPE_BF16];
			if (h->tflops_fp16acc[t] == 0) {
				/* FP16 without its own figure runs at the BF16 rate */
				h->tflops_fp16acc[t] = t == CAT_DTYPE_FP16 ? base : h->tflops[t];
			} else if (h->tflops_fp16acc[t] < base) {
				size_t mk = jp_key(p, "tflops");
				jp_key(p, t == CAT_DTYPE_FP16 ? "fp16_fp16acc" : "fp8_fp16acc");
				rc = jp_fail(p, "%.17g is below the FP32-accumulate rate %.17g "
					     "(expected at least that)", h->tflops_fp16acc[t], base);
				jp_pop(p, mk);
			}
		}
		if (rc)
			return rc;
	}
	if ((rc = j_figure(p, e, "fp32_vector_tflops", false, U_TFLOPS, J_POSITIVE,
			   &h->fp32_vector_tflops, NULL)) ||
	    (rc = j_int(p, e, "gpu_cores", false, 1, 1 << 20, &h->gpu_cores)) ||
	    (rc = j_figure(p, e, "gpu_clock_mhz", false, U_MHZ, J_POSITIVE, &h->gpu_clock_mhz,
			   NULL)) ||
	    (rc = j_figure(p, e, "tdp_w", false, U_W, J_POSITIVE, &h->tdp_w, NULL)) ||
	    (rc = j_figure(p, e, "power_limit_w", false, U_W, J_POSITIVE, &h->power_limit_w,
			   NULL)) ||
	    (rc = j_figure_x(p, e, "idle_w", false, U_W, J_POSITIVE, &h->idle_w, NULL,
			     &ignored)) ||
	    (rc = j_figure_x(p, e, "inference_w", false, U_W, J_POSITIVE, &h->inference_w,
			     NULL, &h->inference_w_max)) ||
	    (rc = j_object(p, e, "interconnect", false, &ic)))
		return rc;
	/* a GPU core clock: a figure in GHz written as MHz would make the
	 * per-core-clock bounds (models/perf_model.c) a thousand times low */
	if (h->gpu_clock_mhz > 0 && !(h->gpu_clock_mhz >= 100 && h->gpu_clock_mhz <= 5000)) {
		size_t mk = jp_key(p, "gpu_clock_mhz");
		rc = jp_fail(p, "%.17g MHz (expected a GPU core clock of 100 to 5000 MHz)",
			     h->gpu_clock_mhz);
		jp_pop(p, mk);
		return rc;
	}
	if (h->power_limit_w > 0 &&
	    !(h->tdp_w > 0 && h->power_limit_w <= h->tdp_w &&
	      h->power_limit_w > POWER_FIXED_SHARE * h->tdp_w)) {
		size_t mk = jp_key(p, "power_limit_w");
		rc = jp_fail(p, "%.17g W (expected a limit above %.0f%% of tdp_w and at most "
			     "tdp_w, which the entry must give)", h->power_limit_w,
			     100 * POWER_FIXED_SHARE);
		jp_pop(p, mk);
		return rc;
	}
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
			   J_FRACTION, &h->usable_memory_fraction, NULL)))
		return rc;
	if (h->usable_memory_fraction == 0)
		h->usable_memory_fraction = 1.0;
	return parse_package(p, e, h);
}

/* Give system entry i the per-device figures of its accelerator. */
static int resolve_system(struct jp *p, size_t i, const char *accel)
{
	struct catalog *cat = p->cat;
	struct cat_hardware *h = &cat->hardware[i];
	struct names t = NAMES(cat->hardware_count, struct cat_hardware);
	size_t j = names_lookup(cat->hardware, &t, accel);
	int rc = 0;
	size_t m = jp_key(p, "hardware");
	jp_index(p, i);
	jp_key(p, "system");
	jp_key(p, "accelerator");
	if (j == t.count)
		rc = jp_fail(p, "unknown hardware '%s' (not in hardware.json)", accel);
	else if (cat->hardware[j].system_kind)
		rc = jp_fail(p, "'%s' is itself a system (expected an accelerator)", accel);
	jp_pop(p, m);
	if (rc)
		return rc;
	const struct cat_hardware *dev = &cat->hardware[j];
	struct cat_hardware keep = *h;
	*h = *dev;
	h->id = keep.id;
	h->name = keep.name;
	h->aliases = keep.aliases;
	h->alias_count = keep.alias_count;
	h->device = dev;
	h->device_count = keep.device_count;
	h->system_kind = keep.system_kind;
	h->host_memory_gb = keep.host_memory_gb;
	h->host_memory_max_gb = keep.host_memory_max_gb;
	h->price = keep.price;
	h->rent_hour = keep.rent_hour.currency ? keep.rent_hour : dev->rent_hour;
	if (keep.peer_link.kind)
		h->peer_link = keep.peer_link;
	else
		h->peer_link = (struct cat_link){ 0 }; /* the devices are not linked */
	return 0;
}

static int parse_hardware(struct jp *p, const cJSON *root)
{
	static const char *const keys[] = { "schema_version", "description", "usd_per_eur",
		"hardware", NULL };
	struct catalog *cat = p->cat;
	const cJSON *arr;
	size_t n;
	int rc;
	if ((rc = j_header(p, root, keys)) ||
	    (rc = j_figure(p, root, "usd_per_eur", false, U_USD_PER_EUR, J_POSITIVE,
			   &cat->usd_per_eur, NULL)) ||
	    (rc = j_table(p, root, "hardware", &arr, &n)))
		return rc;
	if (cat->usd_per_eur > 0) {
		size_t m = jp_key(p, "usd_per_eur");
		rc = j_string(p, j_get(root, "usd_per_eur"), "date", true, &cat->usd_per_eur_date);
		jp_pop(p, m);
		if (rc)
			return rc;
	}
	char **accel = cat_calloc(cat, n, sizeof(*accel));
	if (!(cat->hardware = cat_calloc(cat, n, sizeof(*cat->hardware))) || !accel)
		return jp_nomem(p);
	cat->hardware_count = n;
	for (size_t i = 0; i < n; i++) {
		size_t m = jp_key(p, "hardware");
		jp_index(p, i);
		rc = parse_hw(p, cJSON_GetArrayItem(arr, (int)i), &cat->hardware[i], &accel[i]);
		jp_pop(p, m);
		if (rc)
			return rc;
	}
	struct names t = NAMES(n, struct cat_hardware);
	if ((rc = names_unique(p, "hardware", cat->hardware, &t)))
		return rc;
	for (size_t i = 0; i < n && !rc; i++)
		if (accel[i])
			rc = resolve_system(p, i, accel[i]);
	return rc;
}

/* ---- models.json -------------------------------------------------------- */

/* Published and derived active counts may differ by this much: publishers
 * round them to two significant digits ("3.3B", "17B"). */
#define CAT_ACTIVE_TOLERANCE 0.04

bool cat_model_is_estimated(const struct cat_model *m, const char *field)
{
	for (size_t i = 0; i < m->estimated_count; i++)
		if (strcmp(m->estimated[i], field) == 0)
			return true;
	return false;
}

/* Layers i in [dense_layers, layers) with (i + 1) % freq == 0. */
static int64_t count_moe_layers(int64_t layers, int64_t dense_layers, int64_t freq)
{
	return layers / freq - dense_layers / freq;
}

/* Parameters of one attention block (full attention). */
static double attention_params(const struct cat_model *md)
{
	double h = (double)md->hidden_size;
	if (md->attention == CAT_ATTN_MLA) {
		double heads = (double)md->heads;
		double qk = (double)(md->qk_nope_head_dim + md->qk_rope_head_dim);
		double ql = (double)md->q_lora_rank;
		double kvl = (double)md->kv_lora_rank;
		double q = ql > 0 ? h * ql + ql + ql * heads * qk : h * heads * qk;
		double kv = h * (kvl + (double)md->qk_rope_head_dim) + kvl +
			    kvl * heads * (double)(md->qk_nope_head_dim + md->v_head_dim);
		double o = heads * (double)md->v_head_dim * h;
		return q + kv + o;
	}
	double q = (double)(md->heads * md->head_dim);
	double kv = (double)(md->kv_heads * md->head_dim);
	double attn = h * q * (md->attention_output_gate ? 2 : 1) + 2 * h * kv + q * h;
	if (md->attention_bias)
		attn += q + 2 * kv;
	return attn;
}

/* Parameters of one Gated DeltaNet block: the q/k/v/z input projection,
 * the b/a gate projection, the short causal convolution over q/k/v, the
 * per-head decay and step parameters, the gated norm and the output
 * projection. */
static double linear_attention_params(const struct cat_model *md)
{
	double h = (double)md->hidden_size;
	double qk = (double)(md->linear_qk_heads * md->linear_head_dim);
	double v = (double)(md->linear_v_heads * md->linear_head_dim);
	double vh = (double)md->linear_v_heads;
	return h * (2 * qk + 2 * v) + h * 2 * vh + (2 * qk + v) * (double)md->linear_conv_kernel +
	       2 * vh + (double)md->linear_head_dim + v * h;
}

static int count_mismatch(struct jp *p, const char *key, const char *what, double published,
			  double derived, double alt, double tolerance)
{
	double rel = fabs(derived - published) / published;
	double rel_alt = alt > 0 ? fabs(alt - published) / published : rel;
	if (rel <= tolerance || rel_alt <= tolerance)
		return 0;
	size_t m = jp_key(p, key);
	int rc = jp_fail(p, "published %s %.4g differs from %.4g counted from the "
			 "architecture by %.1f%% (more than %.0f%%)", what, published, derived,
			 rel * 100, tolerance * 100);
	jp_pop(p, m);
	return rc;
}

/* Parameter counts from the architecture (see catalog.h). Doubles are exact
 * here: every product stays far below 2^53 within the accepted ranges. */
static int model_derive(struct jp *p, struct cat_model *md)
{
	double h = (double)md->hidden_size;
	double embed = (double)md->vocab_size * h;
	double lm_head = md->tied_embeddings ? 0 : embed;
	double norms = (double)md->layers * 2 * h + h;
	bool mla_counted = md->attention != CAT_ATTN_MLA ||
			   (md->qk_nope_head_dim > 0 && md->v_head_dim > 0);
	double full_layers = (double)(md->layers - md->linear_attention_layers);
	md->kv_layers = md->layers - md->linear_attention_layers;
	md->moe_layers = md->experts ? count_moe_layers(md->layers, md->dense_layers,
							md->moe_layer_freq) : 0;
	double dense_ffn = 3 * h * (double)md->intermediate_size;
	double expert = 3 * h * (double)md->expert_intermediate_size;
	double shared = (double)md->shared_experts * 3 * h *
			(double)md->shared_expert_intermediate_size;
	double router = h * (double)md->experts;
	double moe_layers = (double)md->moe_layers;
	double ffn = (double)(md->layers - md->moe_layers) * dense_ffn +
		     moe_layers * ((double)md->experts * expert + shared + router);
	double experts_all = moe_layers * (double)md->experts * expert;
	double experts_idle = moe_layers * (double)(md->experts - md->experts_per_token) * expert;
	double linear;
	if (mla_counted) {
		double mixers = full_layers * attention_params(md);
		if (md->linear_attention_layers)
			mixers += (double)md->linear_attention_layers * linear_attention_params(md);
		linear = mixers + ffn;
		double total = linear + norms + embed + lm_head;
		int rc = count_mismatch(p, "params", "count", md->params_published, total, 0,
					CAT_PARAMS_TOLERANCE);
		if (rc)
			return rc;
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
	md->expert_params = (int64_t)llround(experts_all);
	md->active_params = md->total_params - (int64_t)llround(experts_idle);
	if (md->active_params_published > 0 && mla_counted) {
		/* Publishers differ on the input embedding table (a lookup, no
		 * FLOPs): OpenAI and DeepSeek leave it out, Qwen and Meta count
		 * it; accept either. */
		double active = (double)md->active_params;
		double without = md->tied_embeddings ? 0 : active - embed;
		return count_mismatch(p, "active_params", "active count",
				      md->active_params_published, active, without,
				      CAT_ACTIVE_TOLERANCE);
	}
	return 0;
}

static int parse_model(struct jp *p, const cJSON *e, struct cat_model *md)
{
	static const char *const keys[] = { "id", "name", "aliases", "source", "architecture",
		"attention", "layers", "hidden_size", "heads", "kv_heads", "head_dim",
		"intermediate_size", "vocab_size", "max_context", "tied_embeddings",
		"attention_bias", "attention_output_gate", "params", "active_params", "moe",
		"mla", "local_attention", "linear_attention", "estimated", "note", NULL };
	static const char *const src_keys[] = { "url", "date", "note", NULL };
	static const char *const moe_keys[] = { "experts", "experts_per_token",
		"shared_experts", "expert_intermediate_size", "shared_expert_intermediate_size",
		"dense_layers", "moe_layer_freq", NULL };
	static const char *const mla_keys[] = { "kv_lora_rank", "qk_rope_head_dim",
		"qk_nope_head_dim", "v_head_dim", "q_lora_rank", NULL };
	static const char *const local_keys[] = { "kind", "window", "layers", NULL };
	static const char *const linear_keys[] = { "kind", "layers", "qk_heads", "v_heads",
		"head_dim", "conv_kernel", NULL };
	const int64_t BIG = (int64_t)1 << 24;
	int rc;
	char *arch, *attn, *url, *note;
	const cJSON *src, *moe, *mla, *local, *lin;
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
	    (rc = j_bool(p, e, "attention_output_gate", false, false,
			 &md->attention_output_gate)) ||
	    (rc = j_figure(p, e, "params", true, U_PARAMS, J_POSITIVE, &md->params_published,
			   NULL)) ||
	    (rc = j_figure(p, e, "active_params", false, U_PARAMS, J_POSITIVE,
			   &md->active_params_published, NULL)) ||
	    (rc = j_object(p, e, "moe", is_moe, &moe)) ||
	    (rc = j_object(p, e, "mla", md->attention == CAT_ATTN_MLA, &mla)) ||
	    (rc = j_object(p, e, "local_attention", false, &local)) ||
	    (rc = j_object(p, e, "linear_attention", false, &lin)) ||
	    (rc = j_string(p, e, "note", false, &note)))
		return rc;
	if (md->heads % md->kv_heads != 0) {
		size_t m = jp_key(p, "kv_heads");
		rc = jp_fail(p, "%lld does not divide heads (%lld)", (long long)md->kv_heads,
			     (long long)md->heads);
		jp_pop(p, m);
		return rc;
	}
	if (md->active_params_published > md->params_published) {
		size_t m = jp_key(p, "active_params");
		rc = jp_fail(p, "%.4g is more than the total params %.4g",
			     md->active_params_published, md->params_published);
		jp_pop(p, m);
		return rc;
	}
	if (moe && !is_moe) {
		size_t m = jp_key(p, "moe");
		rc = jp_fail(p, "given for a dense model (set \"architecture\": \"moe\")");
		jp_pop(p, m);
		return rc;
	}
	md->moe_layer_freq = 1;
	if (moe) {
		size_t m = jp_key(p, "moe");
		if (!(rc = j_keys(p, moe, moe_keys)) &&
		    !(rc = j_int(p, moe, "experts", true, 2, 65536, &md->experts)) &&
		    !(rc = j_int(p, moe, "experts_per_token", true, 1, md->experts,
				 &md->experts_per_token)) &&
		    !(rc = j_int(p, moe, "shared_experts", false, 0, 64, &md->shared_experts)) &&
		    !(rc = j_int(p, moe, "expert_intermediate_size", true, 1, 1 << 22,
				 &md->expert_intermediate_size)) &&
		    !(rc = j_int(p, moe, "shared_expert_intermediate_size", false, 1, 1 << 22,
				 &md->shared_expert_intermediate_size)) &&
		    !(rc = j_int(p, moe, "dense_layers", false, 0, md->layers - 1,
				 &md->dense_layers)) &&
		    !(rc = j_int(p, moe, "moe_layer_freq", false, 1, md->layers,
				 &md->moe_layer_freq))) {
			if (md->moe_layer_freq == 0)
				md->moe_layer_freq = 1;
			int64_t moe_n = count_moe_layers(md->layers, md->dense_layers,
							 md->moe_layer_freq);
			if (moe_n < 1)
				rc = jp_fail(p, "no layer is a MoE layer (check dense_layers and "
					     "moe_layer_freq)");
			else if (moe_n < md->layers && md->intermediate_size == 0)
				rc = jp_fail(p, "dense layers need the model's intermediate_size");
		}
		if (!md->shared_expert_intermediate_size)
			md->shared_expert_intermediate_size = md->expert_intermediate_size;
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
		    !(rc = j_int(p, mla, "kv_lora_rank", true, 1, 1 << 16, &md->kv_lora_rank)) &&
		    !(rc = j_int(p, mla, "qk_rope_head_dim", true, 1, 4096,
				 &md->qk_rope_head_dim)) &&
		    !(rc = j_int(p, mla, "qk_nope_head_dim", false, 1, 4096,
				 &md->qk_nope_head_dim)) &&
		    !(rc = j_int(p, mla, "v_head_dim", false, 1, 4096, &md->v_head_dim)) &&
		    !(rc = j_int(p, mla, "q_lora_rank", false, 1, 1 << 16, &md->q_lora_rank)) &&
		    (md->qk_nope_head_dim > 0) != (md->v_head_dim > 0))
			rc = jp_fail(p, "give both qk_nope_head_dim and v_head_dim, or neither");
		jp_pop(p, m);
		if (rc)
			return rc;
	}
	if (local) {
		size_t m = jp_key(p, "local_attention");
		char *kind;
		if (!(rc = j_keys(p, local, local_keys)) &&
		    !(rc = j_string(p, local, "kind", true, &kind)) &&
		    !(rc = j_int(p, local, "window", true, 1, (int64_t)1 << 30,
				 &md->sliding_window)) &&
		    !(rc = j_int(p, local, "layers", true, 1, md->layers,
				 &md->sliding_window_layers)) &&
		    strcmp(kind, "sliding") != 0 && strcmp(kind, "chunked") != 0) {
			size_t mk = jp_key(p, "kind");
			rc = jp_fail(p, "expected \"sliding\" or \"chunked\", got \"%s\"", kind);
			jp_pop(p, mk);
		}
		jp_pop(p, m);
		if (rc)
			return rc;
	}
	if (lin) {
		size_t m = jp_key(p, "linear_attention");
		char *kind;
		if (!(rc = j_keys(p, lin, linear_keys)) &&
		    !(rc = j_string(p, lin, "kind", true, &kind)) &&
		    !(rc = j_int(p, lin, "layers", true, 1, md->layers - 1,
				 &md->linear_attention_layers)) &&
		    !(rc = j_int(p, lin, "qk_heads", true, 1, 4096, &md->linear_qk_heads)) &&
		    !(rc = j_int(p, lin, "v_heads", true, 1, 4096, &md->linear_v_heads)) &&
		    !(rc = j_int(p, lin, "head_dim", true, 1, 4096, &md->linear_head_dim)) &&
		    !(rc = j_int(p, lin, "conv_kernel", true, 1, 64, &md->linear_conv_kernel)) &&
		    strcmp(kind, "gated-deltanet") != 0) {
			size_t mk = jp_key(p, "kind");
			rc = jp_fail(p, "expected \"gated-deltanet\", got \"%s\"", kind);
			jp_pop(p, mk);
		}
		jp_pop(p, m);
		if (rc)
			return rc;
		if (md->sliding_window_layers > md->layers - md->linear_attention_layers) {
			m = jp_key(p, "local_attention");
			jp_key(p, "layers");
			rc = jp_fail(p, "more local-attention layers than attention layers");
			jp_pop(p, m);
			return rc;
		}
	}
	if ((rc = j_aliases_key(p, e, "estimated", CAT_MAX_ESTIMATED, &md->estimated,
				&md->estimated_count)))
		return rc;
	for (size_t i = 0; i < md->estimated_count; i++) {
		bool known = false;
		for (const char *const *k = keys; *k && !known; k++)
			known = strcmp(*k, md->estimated[i]) == 0;
		for (const char *const *k = moe_keys; *k && !known; k++)
			known = strcmp(*k, md->estimated[i]) == 0;
		for (const char *const *k = mla_keys; *k && !known; k++)
			known = strcmp(*k, md->estimated[i]) == 0;
		if (!known) {
			size_t m = jp_key(p, "estimated");
			jp_index(p, i);
			rc = jp_fail(p, "'%s' is not a field of a model entry", md->estimated[i]);
			jp_pop(p, m);
			return rc;
		}
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
		"compute_dtype", "fallback_compute_dtype", "embedding_bits", "dense_bits",
		"tensor_efficiency", "note", NULL };
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
	if ((rc = j_figure(p, e, "dense_bits", false, U_BITS, J_POSITIVE, &f->dense_bits, NULL)))
		return rc;
	if (!(f->dense_bits > 0)) /* absent: as the experts */
		f->dense_bits = f->bits_per_weight;
	if ((rc = j_figure(p, e, "tensor_efficiency", false, U_FRACTION, J_FRACTION,
			   &f->tensor_efficiency, NULL)))
		return rc;
	if (!(f->tensor_efficiency > 0)) /* absent: the family's rate as it is */
		f->tensor_efficiency = 1;
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
		if (!id_valid(f->id) || !f->matmul_unit ||
		    !(f->eff_compute > 0 && f->eff_compute <= 1) ||
		    !(f->eff_bw > 0 && f->eff_bw <= 1) || !(f->step_overhead_us > 0) ||
		    !(f->eff_issue >= 0 && f->eff_issue <= 1) || !(f->sm_w_at_1ghz >= 0))
			return false;
	}
	for (size_t i = 0; i < cat->hardware_count; i++) {
		const struct cat_hardware *h = &cat->hardware[i];
		if (!id_valid(h->id) || h->family < cat->families ||
		    h->family >= cat->families + cat->family_count || !(h->memory_gb > 0) ||
		    !(h->mem_bw_gbs > 0) ||
		    !(h->usable_memory_fraction > 0 && h->usable_memory_fraction <= 1))
			return false;
		if (h->device < cat->hardware || h->device >= cat->hardware + cat->hardware_count ||
		    h->device->device != h->device || h->device_count < 1 ||
		    (h->device == h) != (h->system_kind == NULL) ||
		    (h->device == h && h->device_count != 1))
			return false;
		if ((h->price.currency != CAT_CUR_NONE) != (h->price.amount > 0) ||
		    h->price.amount_max < h->price.amount)
			return false;
		for (int t = 0; t < CAT_DTYPE_COUNT; t++)
			if (h->tflops_fp16acc[t] < h->tflops[t])
				return false;
	}
	for (size_t i = 0; i < cat->model_count; i++) {
		const struct cat_model *m = &cat->models[i];
		if (!id_valid(m->id) || m->linear_params <= 0 || m->embedding_params <= 0 ||
		    m->total_params != m->embedding_params + m->lm_head_params +
					       m->norm_params + m->linear_params ||
		    m->heads % m->kv_heads != 0)
			return false;
		if (m->active_params <= 0 || m->active_params > m->total_params ||
		    m->expert_params > m->linear_params || m->kv_layers < 1 ||
		    m->kv_layers > m->layers || (m->experts == 0) != (m->moe_layers == 0) ||
		    m->moe_layers > m->layers)
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

/* The catalogue's files: the embedded copy (dir NULL) or those of dir,
 * read into texts[] (free them whatever the outcome). */
struct cat_texts {
	char paths[CATALOG_PARTS][4096];
	struct catalog_file files[CATALOG_PARTS];
	char *texts[CATALOG_PARTS];
	const struct catalog_file *use;
	size_t n;
};

static int load_texts(struct cat_texts *t, const char *dir, struct diag *d)
{
	memset(t->texts, 0, sizeof(t->texts));
	if (!dir) {
		t->use = catalog_embedded(&t->n);
		return 0;
	}
	int rc = 0;
	for (size_t k = 0; k < CATALOG_PARTS && !rc; k++) {
		int w = snprintf(t->paths[k], sizeof(t->paths[k]), "%s/%s", dir, catalog_parts[k].name);
		if (w < 0 || (size_t)w >= sizeof(t->paths[k])) {
			rc = diag_set(d, DIAG_EINPUT, "catalogue directory path too long");
			break;
		}
		size_t len = 0;
		rc = read_file(t->paths[k], &t->texts[k], &len, d);
		t->files[k] = (struct catalog_file){ .name = t->paths[k], .text = t->texts[k], .len = len };
	}
	t->use = t->files;
	t->n = CATALOG_PARTS;
	return rc;
}

static void free_texts(struct cat_texts *t)
{
	for (size_t k = 0; k < CATALOG_PARTS; k++)
		free(t->texts[k]);
}

int catalog_load(struct catalog **out, const char *dir, struct diag *d)
{
	*out = NULL;
	struct cat_texts *t = malloc(sizeof(*t));
	if (!t)
		return diag_set(d, DIAG_ENOMEM, "out of memory");
	int rc = load_texts(t, dir, d);
	if (!rc)
		rc = catalog_parse(out, t->use, t->n, d);
	free_texts(t);
	free(t);
	return rc;
}

/* ---- sources ------------------------------------------------------------ */

/* One figure of an entry: "  key  value unit  source (date)" for every
 * object under `v` that carries a "source", with dotted keys below it. */
static void source_lines(FILE *out, const char *key, const cJSON *v)
{
	if (!cJSON_IsObject(v))
		return;
	const cJSON *src = cJSON_GetObjectItemCaseSensitive(v, "source");
	if (cJSON_IsString(src)) {
		const cJSON *val = cJSON_GetObjectItemCaseSensitive(v, "value");
		const cJSON *max = cJSON_GetObjectItemCaseSensitive(v, "max");
		const cJSON *unit = cJSON_GetObjectItemCaseSensitive(v, "unit");
		const cJSON *date = cJSON_GetObjectItemCaseSensitive(v, "date");
		fprintf(out, "    %-28s ", key);
		if (cJSON_IsNumber(val))
			fprintf(out, "%.10g", val->valuedouble);
		else if (cJSON_IsString(val))
			fputs(val->valuestring, out);
		else
			fputs("-", out);
		if (cJSON_IsNumber(max))
			fprintf(out, "-%.10g", max->valuedouble);
		if (cJSON_IsString(unit))
			fprintf(out, " %s", unit->valuestring);
		fprintf(out, "  [%s", src->valuestring);
		if (cJSON_IsString(date))
			fprintf(out, ", %s", date->valuestring);
		fputs("]\n", out);
		return;
	}
	const cJSON *c;
	cJSON_ArrayForEach(c, v) {
		char sub[256];
		snprintf(sub, sizeof(sub), "%s%s%s", key, key[0] ? "." : "", c->string ? c->string : "");
		source_lines(out, sub, c);
	}
}

int catalog_write_sources(const char *dir, FILE *out, struct diag *d)
{
	struct cat_texts *t = malloc(sizeof(*t));
	if (!t)
		return diag_set(d, DIAG_ENOMEM, "out of memory");
	int rc = load_texts(t, dir, d);
	for (size_t k = 0; k < t->n && !rc; k++) {
		cJSON *root = cJSON_ParseWithLength(t->use[k].text, t->use[k].len);
		if (!root) {
			rc = diag_set(d, DIAG_EINPUT, "%s: not valid JSON (run agentcap catalog to see "
				      "where)", t->use[k].name);
			break;
		}
		fprintf(out, "%s\n", t->use[k].name);
		const cJSON *top;
		cJSON_ArrayForEach(top, root) {
			if (cJSON_IsObject(top)) {
				fprintf(out, "  %s\n", top->string);
				source_lines(out, "", top);
				continue;
			}
			if (!cJSON_IsArray(top))
				continue;
			const cJSON *e;
			cJSON_ArrayForEach(e, top) {
				const cJSON *id = cJSON_GetObjectItemCaseSensitive(e, "id");
				fprintf(out, "  %s %s\n", top->string,
					cJSON_IsString(id) ? id->valuestring : "?");
				const cJSON *f;
				cJSON_ArrayForEach(f, e)
					source_lines(out, f->string, f);
			}
		}
		cJSON_Delete(root);
	}
	free_texts(t);
	free(t);
	if (!rc && ferror(out))
		rc = diag_set(d, DIAG_EIO, "cannot write the catalogue sources");
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

struct cat_family *catalog_family_mut(struct catalog *cat, const char *name)
{
	for (size_t i = 0; name && i < cat->family_count; i++)
		if (catalog_name_eq(cat->families[i].id, name))
			return &cat->families[i];
	return NULL;
}

int catalog_eff_issue(const struct catalog *cat, const struct cat_family *fam, double *out,
		      struct diag *d)
{
	*out = fam->eff_issue;
	if (*out > 0)
		return 0;
	double *v = malloc((cat->family_count ? cat->family_count : 1) * sizeof(*v));
	if (!v)
		return diag_set(d, DIAG_ENOMEM, "out of memory");
	size_t n = 0;
	for (size_t i = 0; i < cat->family_count; i++)
		if (cat->families[i].eff_issue > 0)
			v[n++] = cat->families[i].eff_issue;
	*out = 1;
	if (n) {
		gsl_sort(v, 1, n);
		*out = gsl_stats_median_from_sorted_data(v, 1, n);
	}
	free(v);
	return 0;
}

int32_t catalog_replica_gpus_max(const struct cat_hardware *hw)
{
	if (!hw || !hw->unified_memory)
		return 0;
	return hw->peer_link.kind ? 2 : 1;
}

const struct cat_hardware *catalog_hardware(const struct catalog *cat, const char *name)
{
	struct names t = NAMES(cat->hardware_count, struct cat_hardware);
	size_t i = names_lookup(cat->hardware, &t, name);
	return i < t.count ? &cat->hardware[i] : NULL;
}

int catalog_die_factor(const struct catalog *cat, const struct cat_hardware *hw, double *factor,
		       const struct cat_family **from, struct diag *d)
{
	const struct cat_hardware *dev = hw->device ? hw->device : hw;
	*factor = 1;
	if (from)
		*from = NULL;
	if (dev->dies <= 1)
		return 0;
	const struct cat_family *f = dev->family;
	if (f && !(f->die_remote_penalty > 0)) {
		const struct cat_family *own = f;
		f = NULL;
		for (size_t i = 0; i < cat->family_count && !f; i++)
			if (cat->families[i].memory_kind == own->memory_kind &&
			    cat->families[i].die_remote_penalty > 0)
				f = &cat->families[i];
	}
	if (!f)
		return diag_set(d, DIAG_EINPUT, "%s is a package of %lld dies, and neither its family "
				"nor any family of its memory kind gives the cost of reading another "
				"die's memory (expected families.json die_remote_penalty)", hw->id,
				(long long)dev->dies);
	double share = 1 - 1 / (double)dev->dies;
	*factor = 1 / (1 + share * f->die_remote_penalty);
	if (from)
		*from = f;
	return 0;
}

const char *catalog_package_kind(const struct cat_hardware *hw)
{
	const struct cat_hardware *d = hw->device ? hw->device : hw;
	if (d->dies > 1)
		return "multi-die";
	return d->unified_memory ? "soc" : "monolithic";
}

const char *catalog_memory_kind(const struct cat_hardware *hw)
{
	const struct cat_hardware *d = hw->device ? hw->device : hw;
	if (d->family && d->family->memory_kind == CAT_MEM_HBM)
		return "hbm";
	return d->unified_memory ? "lpddr" : "gddr";
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

/* ---- prices ------------------------------------------------------------- */

bool catalog_price_usd(const struct catalog *cat, const struct cat_hardware *hw, double *usd)
{
	*usd = 0;
	switch (hw->price.currency) {
	case CAT_CUR_USD:
		*usd = hw->price.amount;
		return true;
	case CAT_CUR_EUR:
		if (!(cat->usd_per_eur > 0))
			return false;
		*usd = hw->price.amount * cat->usd_per_eur;
		return true;
	case CAT_CUR_NONE:
	default:
		return false;
	}
}

/* True when a sorts before b in catalog_hardware_by_price. */
static bool price_before(const struct catalog *cat, const struct cat_hardware *a,
			 const struct cat_hardware *b)
{
	double pa, pb;
	bool ha = catalog_price_usd(cat, a, &pa), hb = catalog_price_usd(cat, b, &pb);
	if (ha != hb)
		return ha;
	if (!ha)
		return a < b; /* file order */
	if (pa != pb)
		return pa < pb;
	return strcmp(a->id, b->id) < 0;
}

size_t catalog_hardware_by_price(const struct catalog *cat, const struct cat_hardware **out)
{
	size_t priced = 0;
	/* insertion sort: stable, no allocation; the catalogue has hundreds
	 * of entries at most */
	for (size_t i = 0; i < cat->hardware_count; i++) {
		const struct cat_hardware *h = &cat->hardware[i];
		double usd;
		if (catalog_price_usd(cat, h, &usd))
			priced++;
		size_t j = i;
		while (j > 0 && price_before(cat, h, out[j - 1])) {
			out[j] = out[j - 1];
			j--;
		}
		out[j] = h;
	}
	return priced;
}

double cat_hardware_total_memory_gb(const struct cat_hardware *hw)
{
	return hw->memory_gb * (double)hw->device_count;
}

/* ---- listings ----------------------------------------------------------- */


/* A number, or null when 0 (the catalogue's "not given"). */
static void json_num(FILE *out, double x)
{
	if (x == 0 || !isfinite(x))
		fputs("null", out);
	else
		fprintf(out, "%.10g", x);
}

static void json_key(FILE *out, const char *indent, const char *key, bool first)
{
	fprintf(out, "%s%s\"%s\": ", first ? "" : ",\n", indent, key);
}

static void json_aliases(FILE *out, char **aliases, size_t n)
{
	fputc('[', out);
	for (size_t i = 0; i < n; i++) {
		if (i)
			fputs(", ", out);
		jsonw_str(out, aliases[i]);
	}
	fputc(']', out);
}

static void json_price(FILE *out, const struct cat_price *pr)
{
	if (pr->currency == CAT_CUR_NONE) {
		fputs("null", out);
		return;
	}
	fputs("{\"amount\": ", out);
	json_num(out, pr->amount);
	fputs(", \"amount_max\": ", out);
	json_num(out, pr->amount_max);
	fputs(", \"currency\": ", out);
	jsonw_str(out, cat_currency_name(pr->currency));
	fputs(", \"date\": ", out);
	jsonw_str(out, pr->date);
	fputc('}', out);
}

static void json_link(FILE *out, const struct cat_link *l)
{
	if (!l->kind) {
		fputs("null", out);
		return;
	}
	fputs("{\"kind\": ", out);
	jsonw_str(out, l->kind);
	fputs(", \"gbs_per_direction\": ", out);
	json_num(out, l->bw_gbs);
	fputc('}', out);
}

static void json_hardware(FILE *out, const struct catalog *cat, const struct cat_hardware *h)
{
	const char *in = "      ";
	fputs("    {\n", out);
	json_key(out, in, "id", true);
	jsonw_str(out, h->id);
	json_key(out, in, "name", false);
	jsonw_str(out, h->name);
	json_key(out, in, "aliases", false);
	json_aliases(out, h->aliases, h->alias_count);
	json_key(out, in, "kind", false);
	jsonw_str(out, h->system_kind ? "system" : "device");
	json_key(out, in, "system_kind", false);
	jsonw_str(out, h->system_kind);
	json_key(out, in, "device", false);
	jsonw_str(out, h->device->id);
	json_key(out, in, "device_count", false);
	fprintf(out, "%lld", (long long)h->device_count);
	json_key(out, in, "family", false);
	jsonw_str(out, h->family->id);
	json_key(out, in, "memory_gb", false);
	json_num(out, h->memory_gb);
	json_key(out, in, "total_memory_gb", false);
	json_num(out, cat_hardware_total_memory_gb(h));
	json_key(out, in, "mem_bw_gbs", false);
	json_num(out, h->mem_bw_gbs);
	json_key(out, in, "unified_memory", false);
	fputs(h->unified_memory ? "true" : "false", out);
	json_key(out, in, "memory_kind", false);
	jsonw_str(out, catalog_memory_kind(h));
	json_key(out, in, "package_kind", false);
	jsonw_str(out, catalog_package_kind(h));
	json_key(out, in, "dies", false);
	fprintf(out, "%lld", (long long)(h->device ? h->device : h)->dies);
	json_key(out, in, "die_link_gbs", false);
	json_num(out, (h->device ? h->device : h)->die_link_gbs);
	json_key(out, in, "usable_memory_fraction", false);
	json_num(out, h->usable_memory_fraction);
	json_key(out, in, "tflops", false);
	fputc('{', out);
	for (int t = 0; t < CAT_DTYPE_COUNT; t++) {
		fprintf(out, "%s\"%s\": ", t ? ", " : "", dtype_names[t]);
		json_num(out, h->tflops[t]);
	}
	fputs(", \"fp16_fp16acc\": ", out);
	json_num(out, h->tflops_fp16acc[CAT_DTYPE_FP16]);
	fputs(", \"fp8_fp16acc\": ", out);
	json_num(out, h->tflops_fp16acc[CAT_DTYPE_FP8]);
	fputc('}', out);
	json_key(out, in, "fp32_vector_tflops", false);
	json_num(out, h->fp32_vector_tflops);
	json_key(out, in, "tdp_w", false);
	json_num(out, h->tdp_w);
	json_key(out, in, "power_limit_w", false);
	json_num(out, h->power_limit_w);
	json_key(out, in, "idle_w", false);
	json_num(out, h->idle_w);
	json_key(out, in, "peer_link", false);
	json_link(out, &h->peer_link);
	json_key(out, in, "host_memory_gb", false);
	json_num(out, h->host_memory_gb);
	json_key(out, in, "host_memory_max_gb", false);
	json_num(out, h->host_memory_max_gb);
	json_key(out, in, "price", false);
	json_price(out, &h->price);
	double usd;
	json_key(out, in, "price_usd", false);
	json_num(out, catalog_price_usd(cat, h, &usd) ? usd : 0);
	json_key(out, in, "rent_per_hour", false);
	json_price(out, &h->rent_hour);
	fputs("\n    }", out);
}

static void json_model(FILE *out, const struct cat_model *m)
{
	const char *in = "      ";
	fputs("    {\n", out);
	json_key(out, in, "id", true);
	jsonw_str(out, m->id);
	json_key(out, in, "name", false);
	jsonw_str(out, m->name);
	json_key(out, in, "aliases", false);
	json_aliases(out, m->aliases, m->alias_count);
	json_key(out, in, "architecture", false);
	jsonw_str(out, m->experts ? "moe" : "dense");
	json_key(out, in, "attention", false);
	jsonw_str(out, m->attention == CAT_ATTN_MLA ? "mla" : "gqa");
	json_key(out, in, "layers", false);
	fprintf(out, "%lld", (long long)m->layers);
	json_key(out, in, "kv_layers", false);
	fprintf(out, "%lld", (long long)m->kv_layers);
	json_key(out, in, "max_context", false);
	fprintf(out, "%lld", (long long)m->max_context);
	json_key(out, in, "total_params", false);
	fprintf(out, "%lld", (long long)m->total_params);
	json_key(out, in, "active_params", false);
	fprintf(out, "%lld", (long long)m->active_params);
	json_key(out, in, "params_published", false);
	json_num(out, m->params_published);
	json_key(out, in, "active_params_published", false);
	json_num(out, m->active_params_published);
	json_key(out, in, "experts", false);
	fprintf(out, "%lld", (long long)m->experts);
	json_key(out, in, "experts_per_token", false);
	fprintf(out, "%lld", (long long)m->experts_per_token);
	json_key(out, in, "shared_experts", false);
	fprintf(out, "%lld", (long long)m->shared_experts);
	json_key(out, in, "estimated", false);
	json_aliases(out, m->estimated, m->estimated_count);
	fputs("\n    }", out);
}

int catalog_write_json(const struct catalog *cat, FILE *out, struct diag *d)
{
	fputs("{\n  \"schema_version\": 1,\n  \"usd_per_eur\": ", out);
	if (cat->usd_per_eur > 0) {
		fputs("{\"value\": ", out);
		json_num(out, cat->usd_per_eur);
		fputs(", \"date\": ", out);
		jsonw_str(out, cat->usd_per_eur_date);
		fputc('}', out);
	} else {
		fputs("null", out);
	}
	fputs(",\n  \"families\": [\n", out);
	for (size_t i = 0; i < cat->family_count; i++) {
		const struct cat_family *f = &cat->families[i];
		fputs(i ? ",\n    {\"id\": " : "    {\"id\": ", out);
		jsonw_str(out, f->id);
		fputs(", \"name\": ", out);
		jsonw_str(out, f->name);
		fputs(", \"eff_compute\": ", out);
		json_num(out, f->eff_compute);
		fputs(", \"eff_bw\": ", out);
		json_num(out, f->eff_bw);
		fputs(", \"step_overhead_us\": ", out);
		json_num(out, f->step_overhead_us);
		if (f->eff_issue > 0) {
			fputs(", \"eff_issue\": ", out);
			json_num(out, f->eff_issue);
		}
		if (f->sm_w_at_1ghz > 0) {
			fputs(", \"sm_w_at_1ghz\": ", out);
			json_num(out, f->sm_w_at_1ghz);
		}
		fputs(", \"runtime_reserve_gib\": ", out);
		json_num(out, f->runtime_reserve_gib);
		fputc('}', out);
	}
	fputs("\n  ],\n  \"hardware\": [\n", out);
	for (size_t i = 0; i < cat->hardware_count; i++) {
		if (i)
			fputs(",\n", out);
		json_hardware(out, cat, &cat->hardware[i]);
	}
	fputs("\n  ],\n  \"models\": [\n", out);
	for (size_t i = 0; i < cat->model_count; i++) {
		if (i)
			fputs(",\n", out);
		json_model(out, &cat->models[i]);
	}
	fputs("\n  ],\n  \"weight_formats\": [\n", out);
	for (size_t i = 0; i < cat->weight_format_count; i++) {
		const struct cat_weight_format *w = &cat->weight_formats[i];
		fputs(i ? ",\n    {\"id\": " : "    {\"id\": ", out);
		jsonw_str(out, w->id);
		fputs(", \"name\": ", out);
		jsonw_str(out, w->name);
		fputs(", \"aliases\": ", out);
		json_aliases(out, w->aliases, w->alias_count);
		fputs(", \"bits_per_weight\": ", out);
		json_num(out, w->bits_per_weight);
		fputs(", \"embedding_bits\": ", out);
		json_num(out, w->embedding_bits);
		if (w->dense_bits != w->bits_per_weight) {
			fputs(", \"dense_bits\": ", out);
			json_num(out, w->dense_bits);
		}
		fputs(", \"compute_dtype\": ", out);
		jsonw_str(out, cat_dtype_name(w->compute_dtype));
		fputs(", \"fallback_compute_dtype\": ", out);
		jsonw_str(out, w->has_fallback ? cat_dtype_name(w->fallback_dtype) : NULL);
		fputc('}', out);
	}
	fputs("\n  ],\n  \"kv_dtypes\": [\n", out);
	for (size_t i = 0; i < cat->kv_dtype_count; i++) {
		const struct cat_kv_dtype *k = &cat->kv_dtypes[i];
		fputs(i ? ",\n    {\"id\": " : "    {\"id\": ", out);
		jsonw_str(out, k->id);
		fputs(", \"name\": ", out);
		jsonw_str(out, k->name);
		fputs(", \"aliases\": ", out);
		json_aliases(out, k->aliases, k->alias_count);
		fputs(", \"bits_per_element\": ", out);
		json_num(out, k->bits_per_element);
		fputc('}', out);
	}
	fputs("\n  ]\n}\n", out);
	if (ferror(out))
		return diag_set(d, DIAG_EIO, "writing the catalogue listing failed");
	return 0;
}

/* "a, b" of the aliases into buf (cut with "..." past size). */
static const char *alias_list(char *buf, size_t size, char **aliases, size_t n)
{
	size_t used = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		int w = snprintf(buf + used, size - used, "%s%s", i ? ", " : "", aliases[i]);
		if (w < 0 || (size_t)w >= size - used) {
			if (size > 4)
				memcpy(buf + size - 4, "...", 4);
			break;
		}
		used += (size_t)w;
	}
	return buf;
}

int catalog_write_table(const struct catalog *cat, FILE *out, struct diag *d)
{
	char aliases[256];
	fprintf(out, "HARDWARE (%zu)\n", cat->hardware_count);
	fprintf(out, "  %-26s %4s %8s %8s %9s %11s %14s  %s\n", "id", "n", "mem GB", "GB/s",
		"bf16 TF", "price", "rent/GPU-hour", "name [aliases]");
	for (size_t i = 0; i < cat->hardware_count; i++) {
		const struct cat_hardware *h = &cat->hardware[i];
		char price[32] = "-";
		if (h->price.currency)
			snprintf(price, sizeof(price), "%s %.0f",
				 cat_currency_name(h->price.currency), h->price.amount);
		char rent[40] = "-";
		if (h->rent_hour.currency && h->rent_hour.amount_max > h->rent_hour.amount)
			snprintf(rent, sizeof(rent), "%s %.2f-%.2f",
				 cat_currency_name(h->rent_hour.currency), h->rent_hour.amount,
				 h->rent_hour.amount_max);
		else if (h->rent_hour.currency)
			snprintf(rent, sizeof(rent), "%s %.2f",
				 cat_currency_name(h->rent_hour.currency), h->rent_hour.amount);
		char bf16[16] = "-";
		if (h->tflops[CAT_DTYPE_BF16] > 0)
			snprintf(bf16, sizeof(bf16), "%.1f", h->tflops[CAT_DTYPE_BF16]);
		fprintf(out, "  %-26s %4lld %8.0f %8.0f %9s %11s %14s  %s", h->id,
			(long long)h->device_count, h->memory_gb, h->mem_bw_gbs, bf16, price,
			rent, h->name);
		if (h->alias_count)
			fprintf(out, " [%s]", alias_list(aliases, sizeof(aliases), h->aliases,
							 h->alias_count));
		fputc('\n', out);
	}
	fprintf(out, "\nMODELS (%zu)\n", cat->model_count);
	fprintf(out, "  %-26s %5s %4s %6s %9s %9s %8s  %s\n", "id", "arch", "attn", "layers",
		"params B", "active B", "context", "name [aliases]");
	for (size_t i = 0; i < cat->model_count; i++) {
		const struct cat_model *m = &cat->models[i];
		fprintf(out, "  %-26s %5s %4s %6lld %9.2f %9.2f %8lld  %s%s", m->id,
			m->experts ? "moe" : "dense", m->attention == CAT_ATTN_MLA ? "mla" : "gqa",
			(long long)m->layers, (double)m->total_params / 1e9,
			(double)m->active_params / 1e9, (long long)m->max_context, m->name,
			m->estimated_count ? " (estimated)" : "");
		if (m->alias_count)
			fprintf(out, " [%s]", alias_list(aliases, sizeof(aliases), m->aliases,
							 m->alias_count));
		fputc('\n', out);
	}
	fprintf(out, "\nWEIGHT FORMATS (%zu)\n", cat->weight_format_count);
	fprintf(out, "  %-26s %6s %7s %8s  %s\n", "id", "bits", "compute", "fallback",
		"name [aliases]");
	for (size_t i = 0; i < cat->weight_format_count; i++) {
		const struct cat_weight_format *w = &cat->weight_formats[i];
		fprintf(out, "  %-26s %6.3g %7s %8s  %s", w->id, w->bits_per_weight,
			cat_dtype_name(w->compute_dtype),
			w->has_fallback ? cat_dtype_name(w->fallback_dtype) : "-", w->name);
		if (w->alias_count)
			fprintf(out, " [%s]", alias_list(aliases, sizeof(aliases), w->aliases,
							 w->alias_count));
		fputc('\n', out);
	}
	fprintf(out, "\nKV-CACHE DTYPES (%zu)\n", cat->kv_dtype_count);
	fprintf(out, "  %-26s %6s  %s\n", "id", "bits", "name [aliases]");
	for (size_t i = 0; i < cat->kv_dtype_count; i++) {
		const struct cat_kv_dtype *k = &cat->kv_dtypes[i];
		fprintf(out, "  %-26s %6.3g  %s", k->id, k->bits_per_element, k->name);
		if (k->alias_count)
			fprintf(out, " [%s]", alias_list(aliases, sizeof(aliases), k->aliases,
							 k->alias_count));
		fputc('\n', out);
	}
	if (ferror(out))
		return diag_set(d, DIAG_EIO, "writing the catalogue listing failed");
	return 0;
}
