/* SPDX-License-Identifier: Apache-2.0
 * uncert: error bars of the performance model per regime (see uncert.h).
 *
 * Building sorts copies of the samples once per level by that level's key
 * and takes each run of equal keys as a group: O(levels n log n).  A
 * lookup walks the (few hundred at most) regimes linearly per level.
 */
#include "models/uncert.h"
#include "base/jsonw.h"
#include "base/textfile.h"

#include <cJSON.h>
#include <gsl/gsl_sort.h>

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

extern const char uncertainty_json[]; /* generated from models/calibration/uncertainty.json */

const char *uncert_embedded_json(void)
{
	return uncertainty_json;
}

void uncert_init(struct uncert_table *t)
{
	memset(t, 0, sizeof(*t));
	t->coverage = UNCERT_COVERAGE_DEFAULT;
	t->min_rows = UNCERT_MIN_ROWS_DEFAULT;
}

void uncert_release(struct uncert_table *t)
{
	free(t->regimes);
	t->regimes = NULL;
	t->n = 0;
	t->n_dims = 0;
}

/* Which of family, engine, metric a level names (the others are "any"). */
static const bool level_names[UNCERT_LEVELS][3] = {
	{ true, true, true },
	{ false, true, true },
	{ true, false, true },
	{ false, false, true },
	{ false, false, false },
};

static const char *field(const struct uncert_sample *s, int k)
{
	return k == 0 ? s->family : k == 1 ? s->engine : s->metric;
}

/* Sort context: qsort has no user pointer, so the level travels with each
 * element. */
struct keyed {
	const struct uncert_sample *s;
	int level;
};

static int cmp_keyed(const void *a, const void *b)
{
	const struct keyed *x = a, *y = b;
	for (int k = 0; k < 3; k++) {
		if (!level_names[x->level][k])
			continue;
		int c = strcmp(field(x->s, k), field(y->s, k));
		if (c)
			return c;
	}
	/* stable order for equal keys: by position */
	return x->s < y->s ? -1 : x->s > y->s;
}

static bool same_key(const struct keyed *x, const struct keyed *y)
{
	for (int k = 0; k < 3; k++)
		if (level_names[x->level][k] && strcmp(field(x->s, k), field(y->s, k)) != 0)
			return false;
	return true;
}

/* The ceil(q n)-th smallest of v[0..n) (sorted in place). */
static double order_quantile(double *v, size_t n, double q)
{
	gsl_sort(v, 1, n);
	size_t k = (size_t)ceil(q * (double)n - 1e-9);
	if (k < 1)
		k = 1;
	if (k > n)
		k = n;
	return v[k - 1];
}

static bool matches(const char *have, const char *want)
{
	return strcmp(have, "*") == 0 || (want && strcmp(have, want) == 0);
}

static bool regime_matches(const struct uncert_regime *r, const struct uncert_sample *s)
{
	return matches(r->family, s->family) && matches(r->engine, s->engine) &&
	       matches(r->metric, s->metric);
}

/* The regimes t->regimes[first..t->n) of one pooled level also answer for
 * the rows that no narrower regime took (resolved[] false): a regime's
 * band is at least the coverage quantile over those rows when there are
 * min_rows of them, so that the rows a lookup sends to it are covered as
 * the others are.  Then marks the rows this level takes.  v: scratch of n. */
static void widen_level(struct uncert_table *t, size_t first, const struct uncert_sample *s,
			size_t n, bool *resolved, double *v)
{
	for (size_t k = first; k < t->n; k++) {
		struct uncert_regime *r = &t->regimes[k];
		size_t m = 0;
		for (size_t i = 0; i < n; i++)
			if (!resolved[i] && regime_matches(r, &s[i]))
				v[m++] = fabs(s[i].log_error);
		r->n_fallback = m;
		if (m >= t->min_rows)
			r->log_band = fmax(r->log_band, order_quantile(v, m, t->coverage));
	}
	for (size_t i = 0; i < n; i++)
		for (size_t k = first; k < t->n && !resolved[i]; k++)
			resolved[i] = regime_matches(&t->regimes[k], &s[i]);
}

int uncert_build(struct uncert_table *t, const struct uncert_sample *s, size_t n,
		 double coverage, size_t min_rows, struct diag *d)
{
	uncert_release(t);
	if (!(coverage > 0 && coverage < 1))
		return diag_set(d, DIAG_EINPUT, "coverage %g (expected a fraction in (0, 1))", coverage);
	if (min_rows < 1)
		return diag_set(d, DIAG_EINPUT, "min_rows 0 (expected at least 1)");
	if (n == 0)
		return diag_set(d, DIAG_EINPUT, "no out-of-sample error to build bands from");
	for (size_t i = 0; i < n; i++) {
		for (int k = 0; k < 3; k++)
			if (!field(&s[i], k) || !field(&s[i], k)[0] ||
			    strlen(field(&s[i], k)) >= UNCERT_ID_MAX)
				return diag_set(d, DIAG_EINPUT, "sample %zu: empty or too long id "
						"(expected 1 to %d characters)", i, UNCERT_ID_MAX - 1);
		if (!isfinite(s[i].log_error))
			return diag_set(d, DIAG_EINPUT, "sample %zu: log error not finite", i);
	}
	t->coverage = coverage;
	t->min_rows = min_rows;
	struct keyed *ks = malloc(n * sizeof(*ks));
	double *v = malloc(n * sizeof(*v));
	size_t cap = 0;
	int rc = 0;
	if (!ks || !v)
		rc = diag_set(d, DIAG_ENOMEM, "out of memory");
	bool *resolved = calloc(n, sizeof(*resolved));
	if (!resolved && !rc)
		rc = diag_set(d, DIAG_ENOMEM, "out of memory");
	for (int lv = 0; lv < UNCERT_LEVELS && !rc; lv++) {
		size_t first = t->n;
		for (size_t i = 0; i < n; i++)
			ks[i] = (struct keyed){ .s = &s[i], .level = lv };
		qsort(ks, n, sizeof(*ks), cmp_keyed);
		for (size_t i = 0; i < n && !rc;) {
			size_t j = i;
			while (j < n && same_key(&ks[i], &ks[j]))
				j++;
			size_t m = j - i;
			if (m >= min_rows || lv == UNCERT_LEVELS - 1) {
				if (t->n == cap) {
					size_t nc = cap ? 2 * cap : 64;
					struct uncert_regime *p =
						nc > UNCERT_REGIMES_MAX ? NULL
									: realloc(t->regimes, nc * sizeof(*p));
					if (!p) {
						rc = diag_set(d, DIAG_ENOMEM, "out of memory (at most %d "
							      "regimes)", UNCERT_REGIMES_MAX);
						break;
					}
					t->regimes = p;
					cap = nc;
				}
				struct uncert_regime *r = &t->regimes[t->n++];
				memset(r, 0, sizeof(*r));
				r->level = lv;
				char *dst[3] = { r->family, r->engine, r->metric };
				for (int k = 0; k < 3; k++)
					snprintf(dst[k], UNCERT_ID_MAX, "%s",
						 level_names[lv][k] ? field(ks[i].s, k) : "*");
				r->n = m;
				for (size_t q = 0; q < m; q++)
					v[q] = fabs(ks[i + q].s->log_error);
				r->log_band = order_quantile(v, m, coverage);
			}
			i = j;
		}
		if (!rc)
			widen_level(t, first, s, n, resolved, v);
	}
	free(resolved);
	free(ks);
	free(v);
	if (rc)
		uncert_release(t);
	return rc;
}

struct uncert_band uncert_lookup(const struct uncert_table *t, const char *family,
				 const char *engine, const char *metric)
{
	struct uncert_band b = { .low_factor = 1, .high_factor = 1 };
	for (int lv = 0; lv < UNCERT_LEVELS; lv++)
		for (size_t i = 0; i < t->n; i++) {
			const struct uncert_regime *r = &t->regimes[i];
			if (r->level != lv || !matches(r->family, family) ||
			    !matches(r->engine, engine) || !matches(r->metric, metric))
				continue;
			b.regime = r;
			b.log_band = r->log_band;
			b.pct = 100 * expm1(r->log_band);
			b.low_factor = exp(-r->log_band);
			b.high_factor = exp(r->log_band);
			return b;
		}
	return b;
}

static bool dim_covers(const struct uncert_dim *dm, const char *value)
{
	for (size_t i = 0; i < dm->n_covered; i++)
		if (strcmp(dm->covered[i], value) == 0)
			return true;
	return false;
}

size_t uncert_widen(const struct uncert_table *t, const struct uncert_point *p,
		    struct uncert_band *b, char *why, size_t why_size)
{
	const char *vals[] = { p->package, p->memory, p->format, p->engine };
	static const char *const names[] = { "package", "memory", "format", "engine" };
	size_t n = 0, at = 0;
	double sq = b->log_band * b->log_band;
	if (why && why_size)
		why[0] = '\0';
	for (size_t k = 0; k < sizeof(vals) / sizeof(vals[0]); k++) {
		if (!vals[k])
			continue;
		for (size_t i = 0; i < t->n_dims; i++) {
			const struct uncert_dim *dm = &t->dims[i];
			if (strcmp(dm->name, names[k]) != 0 || dim_covers(dm, vals[k]))
				continue;
			sq += dm->log_band * dm->log_band;
			if (why && at < why_size) {
				int w = snprintf(why + at, why_size - at, "%s%s %s", n ? ", " : "",
						 names[k], vals[k]);
				at += w > 0 ? (size_t)w : 0;
			}
			n++;
		}
	}
	if (n) {
		b->log_band = sqrt(sq);
		b->pct = 100 * expm1(b->log_band);
		b->low_factor = exp(-b->log_band);
		b->high_factor = exp(b->log_band);
	}
	return n;
}

const char *uncert_regime_name(const struct uncert_regime *r, char *buf, size_t size)
{
	const char *f[3] = { r->family, r->engine, r->metric };
	for (int k = 0; k < 3; k++)
		if (strcmp(f[k], "*") == 0)
			f[k] = "any";
	snprintf(buf, size, "%s x %s x %s", f[0], f[1], f[2]);
	return buf;
}

/* ---- the file ---- */


/* Bands are written to six decimals, rounded up, so that a row on the
 * quantile stays inside the band read back. */
int uncert_write_json(FILE *out, const struct uncert_table *t, struct diag *d)
{
	fputs("{\n  \"schema_version\": 1,\n  \"measurements\": {\"path\": ", out);
	jsonw_str(out, t->path);
	fputs(", \"crc32\": ", out);
	jsonw_str(out, t->crc32);
	fputs(", \"commit\": ", out);
	if (t->commit[0])
		jsonw_str(out, t->commit);
	else
		fputs("null", out);
	fputs("},\n  \"out_of_sample\": ", out);
	jsonw_str(out, t->grouping);
	fprintf(out, ",\n  \"coverage\": %.10g,\n  \"min_rows\": %zu,\n", t->coverage, t->min_rows);
	fputs("  \"method\": \"the coverage quantile (an order statistic) of |ln(predicted / "
	      "measured)| per regime, each row predicted with parameters refitted without its "
	      "group; a regime with fewer than min_rows rows falls back to family x engine x "
	      "metric, any family, any engine, the metric alone, all rows\",\n", out);
	fputs("  \"regimes\": [", out);
	for (size_t i = 0; i < t->n; i++) {
		const struct uncert_regime *r = &t->regimes[i];
		fprintf(out, "%s\n    {\"level\": %d, \"family\": ", i ? "," : "", r->level);
		jsonw_str(out, r->family);
		fputs(", \"engine\": ", out);
		jsonw_str(out, r->engine);
		fputs(", \"metric\": ", out);
		jsonw_str(out, r->metric);
		fprintf(out, ", \"rows\": %zu, \"rows_resolved\": %zu, \"log_band\": %.6f, "
			"\"band_pct\": %.1f}", r->n, r->n_fallback, ceil(r->log_band * 1e6) / 1e6,
			100 * expm1(r->log_band));
	}
	fputs("\n  ]", out);
	if (t->n_dims) {
		fputs(",\n  \"extrapolation\": [", out);
		for (size_t i = 0; i < t->n_dims; i++) {
			const struct uncert_dim *dm = &t->dims[i];
			fprintf(out, "%s\n    {\"dimension\": ", i ? "," : "");
			jsonw_str(out, dm->name);
			fputs(", \"covered\": [", out);
			for (size_t k = 0; k < dm->n_covered; k++) {
				fputs(k ? ", " : "", out);
				jsonw_str(out, dm->covered[k]);
			}
			fprintf(out, "], \"log_band\": %.6f, \"band_pct\": %.1f}",
				ceil(dm->log_band * 1e6) / 1e6, 100 * expm1(dm->log_band));
		}
		fputs("\n  ]", out);
	}
	fputs("\n}\n", out);
	if (ferror(out))
		return diag_set(d, DIAG_EIO, "cannot write the uncertainty bands");
	return 0;
}

static int bad(struct diag *d, const char *name, const char *where, const char *expected)
{
	return diag_set(d, DIAG_EINPUT, "%s: %s: expected %s", name, where, expected);
}

static int get_str(const cJSON *o, const char *key, char *dst, size_t size, bool nullable,
		   const char *name, const char *where, struct diag *d)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	char at[128];
	snprintf(at, sizeof(at), "%s%s%s", where, where[0] ? "." : "", key);
	if (nullable && cJSON_IsNull(v)) {
		dst[0] = '\0';
		return 0;
	}
	if (!cJSON_IsString(v) || !v->valuestring[0] || strlen(v->valuestring) >= size) {
		char exp[96];
		snprintf(exp, sizeof(exp), "a string of 1 to %zu characters%s", size - 1,
			 nullable ? " or null" : "");
		return bad(d, name, at, exp);
	}
	memcpy(dst, v->valuestring, strlen(v->valuestring) + 1);
	return 0;
}

static int get_num(const cJSON *o, const char *key, double lo, double hi, bool whole, double *out,
		   const char *name, const char *where, struct diag *d)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	char at[128];
	snprintf(at, sizeof(at), "%s%s%s", where, where[0] ? "." : "", key);
	if (!cJSON_IsNumber(v) || !(v->valuedouble >= lo && v->valuedouble <= hi) ||
	    (whole && v->valuedouble != floor(v->valuedouble))) {
		char exp[96];
		snprintf(exp, sizeof(exp), "a %s from %g to %g", whole ? "whole number" : "number",
			 lo, hi);
		return bad(d, name, at, exp);
	}
	*out = v->valuedouble;
	return 0;
}

/* "extrapolation": optional; each dimension named once, its covered
 * values distinct. */
static int parse_dims(struct uncert_table *t, const cJSON *root, const char *name, struct diag *d)
{
	const cJSON *arr = cJSON_GetObjectItemCaseSensitive(root, "extrapolation");
	if (!arr)
		return 0;
	if (!cJSON_IsArray(arr) || cJSON_GetArraySize(arr) > UNCERT_DIMS_MAX)
		return bad(d, name, "extrapolation", "an array of at most 8 dimensions");
	int rc;
	for (const cJSON *e = arr->child; e; e = e->next) {
		char where[64];
		snprintf(where, sizeof(where), "extrapolation[%zu]", t->n_dims);
		struct uncert_dim *dm = &t->dims[t->n_dims];
		if (!cJSON_IsObject(e))
			return bad(d, name, where, "an object");
		if ((rc = get_str(e, "dimension", dm->name, sizeof(dm->name), false, name, where, d)))
			return rc;
		if (strcmp(dm->name, "package") != 0 && strcmp(dm->name, "memory") != 0 &&
		    strcmp(dm->name, "format") != 0 && strcmp(dm->name, "engine") != 0)
			return bad(d, name, where, "a dimension named package, memory, format or engine");
		for (size_t i = 0; i < t->n_dims; i++)
			if (strcmp(t->dims[i].name, dm->name) == 0)
				return bad(d, name, where, "each dimension once");
		const cJSON *cov = cJSON_GetObjectItemCaseSensitive(e, "covered");
		char at[96];
		snprintf(at, sizeof(at), "%s.covered", where);
		if (!cJSON_IsArray(cov) || cJSON_GetArraySize(cov) > UNCERT_COVERED_MAX)
			return bad(d, name, at, "an array of at most 32 strings");
		for (const cJSON *c = cov->child; c; c = c->next) {
			if (!cJSON_IsString(c) || !c->valuestring[0] ||
			    strlen(c->valuestring) >= UNCERT_ID_MAX)
				return bad(d, name, at, "strings of 1 to 63 characters");
			if (dim_covers(dm, c->valuestring))
				return bad(d, name, at, "distinct values");
			snprintf(dm->covered[dm->n_covered++], UNCERT_ID_MAX, "%s", c->valuestring);
		}
		if ((rc = get_num(e, "log_band", 0, 10, false, &dm->log_band, name, where, d)))
			return rc;
		t->n_dims++;
	}
	return 0;
}

static int parse_root(struct uncert_table *t, const cJSON *root, const char *name, struct diag *d)
{
	double v;
	int rc;
	if (!cJSON_IsObject(root))
		return bad(d, name, "(top)", "an object");
	if ((rc = get_num(root, "schema_version", 1, 1, true, &v, name, "", d)))
		return rc;
	const cJSON *ms = cJSON_GetObjectItemCaseSensitive(root, "measurements");
	if (!cJSON_IsObject(ms))
		return bad(d, name, "measurements", "an object with path, crc32 and commit");
	if ((rc = get_str(ms, "path", t->path, sizeof(t->path), false, name, "measurements", d)) ||
	    (rc = get_str(ms, "crc32", t->crc32, sizeof(t->crc32), false, name, "measurements",
			  d)) ||
	    (rc = get_str(ms, "commit", t->commit, sizeof(t->commit), true, name, "measurements",
			  d)) ||
	    (rc = get_str(root, "out_of_sample", t->grouping, sizeof(t->grouping), false, name, "",
			  d)))
		return rc;
	if ((rc = get_num(root, "coverage", 0.01, 0.99, false, &t->coverage, name, "", d)))
		return rc;
	if ((rc = get_num(root, "min_rows", 1, 1e6, true, &v, name, "", d)))
		return rc;
	t->min_rows = (size_t)v;
	const cJSON *arr = cJSON_GetObjectItemCaseSensitive(root, "regimes");
	int count = cJSON_IsArray(arr) ? cJSON_GetArraySize(arr) : 0;
	if (count < 1 || count > UNCERT_REGIMES_MAX)
		return bad(d, name, "regimes", "an array of 1 to 4096 regimes");
	t->regimes = calloc((size_t)count, sizeof(*t->regimes));
	if (!t->regimes)
		return diag_set(d, DIAG_ENOMEM, "out of memory");
	bool has_all = false;
	for (const cJSON *e = arr->child; e; e = e->next) {
		char where[64];
		snprintf(where, sizeof(where), "regimes[%zu]", t->n);
		struct uncert_regime *r = &t->regimes[t->n];
		if (!cJSON_IsObject(e))
			return bad(d, name, where, "an object");
		if ((rc = get_num(e, "level", 0, UNCERT_LEVELS - 1, true, &v, name, where, d)))
			return rc;
		r->level = (int)v;
		if ((rc = get_str(e, "family", r->family, sizeof(r->family), false, name, where, d)) ||
		    (rc = get_str(e, "engine", r->engine, sizeof(r->engine), false, name, where, d)) ||
		    (rc = get_str(e, "metric", r->metric, sizeof(r->metric), false, name, where, d)))
			return rc;
		const char *f[3] = { r->family, r->engine, r->metric };
		for (int k = 0; k < 3; k++)
			if ((strcmp(f[k], "*") != 0) != level_names[r->level][k])
				return bad(d, name, where,
					   "family, engine and metric named as its level says "
					   "(\"*\" where the level pools)");
		if ((rc = get_num(e, "rows", 1, 1e9, true, &v, name, where, d)))
			return rc;
		r->n = (size_t)v;
		if ((rc = get_num(e, "rows_resolved", 0, (double)r->n, true, &v, name, where, d)))
			return rc;
		r->n_fallback = (size_t)v;
		if ((rc = get_num(e, "log_band", 0, 10, false, &r->log_band, name, where, d)))
			return rc;
		if (t->n > 0 && t->regimes[t->n - 1].level > r->level)
			return bad(d, name, where, "regimes in order of level");
		has_all = has_all || r->level == UNCERT_LEVELS - 1;
		t->n++;
	}
	if (!has_all)
		return bad(d, name, "regimes", "a regime of level 4 (all rows)");
	return parse_dims(t, root, name, d);
}

int uncert_parse(struct uncert_table *t, const char *name, const char *text, size_t len,
		 struct diag *d)
{
	uncert_release(t);
	uncert_init(t);
	const char *end = NULL;
	cJSON *root = cJSON_ParseWithLengthOpts(text, len, &end, false);
	if (!root) {
		long line = 1, col = 1;
		const char *stop = end ? end : text;
		for (const char *q = text; q < stop && q < text + len; q++) {
			if (*q == '\n') {
				line++;
				col = 1;
			} else {
				col++;
			}
		}
		return diag_at(d, DIAG_EINPUT, name, line, col,
			       "invalid JSON (expected an uncertainty file: an object with "
			       "\"regimes\")");
	}
	int rc = parse_root(t, root, name, d);
	cJSON_Delete(root);
	if (rc) {
		uncert_release(t);
		uncert_init(t);
	}
	return rc;
}

int uncert_load(struct uncert_table *t, const char *path, struct diag *d)
{
	if (!path) {
		const char *txt = uncert_embedded_json();
		return uncert_parse(t, "uncertainty.json", txt, strlen(txt), d);
	}
	char *buf = textfile_read(path, UNCERT_FILE_MAX_BYTES, "an uncertainty file", d);
	if (!buf)
		return d->code ? d->code : DIAG_EIO;
	int rc = uncert_parse(t, path, buf, strlen(buf), d);
	free(buf);
	return rc;
}
