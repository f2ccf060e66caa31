/* SPDX-License-Identifier: Apache-2.0
 * jsondoc: JSON results with their long arrays of numbers kept as text
 * (see jsondoc.h).
 *
 * One pass over the text (scan) finds the runs and bounds the values the
 * rest holds: outside strings and runs, a document of c commas and k
 * arrays and objects has at most c + 2k + 1 values.  Each '[' outside a
 * string is counted, so a run is known by its ordinal among the arrays;
 * arrays come in the same order in cJSON's tree walked depth first (map),
 * which is how a run finds its empty array in the tree. */
#include "reports/jsondoc.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

struct jsondoc_run {
	size_t at;          /* its '[' in the text */
	size_t len;         /* up to and including its ']' */
	size_t n;           /* numbers and nulls in it */
	size_t ordinal;     /* 1 for the text's first array */
	size_t copy_at;     /* its "[]" in the copy parsed */
	const cJSON *node;  /* its empty array in the tree; NULL until map */
};

static bool is_ws(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static const char *skip_ws(const char *s, const char *end)
{
	while (s < end && is_ws(*s))
		s++;
	return s;
}

/* Length of the JSON number (RFC 8259) at s[0..end), 0 when none. */
static size_t number_len(const char *s, const char *end)
{
	const char *p = s;
	if (p < end && *p == '-')
		p++;
	if (p < end && *p == '0') {
		p++;
	} else if (p < end && *p >= '1' && *p <= '9') {
		while (p < end && is_digit(*p))
			p++;
	} else {
		return 0;
	}
	if (p < end && *p == '.') {
		if (++p >= end || !is_digit(*p))
			return 0;
		while (p < end && is_digit(*p))
			p++;
	}
	if (p < end && (*p == 'e' || *p == 'E')) {
		p++;
		if (p < end && (*p == '+' || *p == '-'))
			p++;
		if (p >= end || !is_digit(*p))
			return 0;
		while (p < end && is_digit(*p))
			p++;
	}
	return (size_t)(p - s);
}

/* When the array whose '[' is at s holds only numbers and nulls (one at
 * least): its length up to and including ']', and *n its elements; else 0.
 * Stops at the first thing that is not part of such an array. */
static size_t run_len(const char *s, const char *end, size_t *n)
{
	const char *p = skip_ws(s + 1, end);
	*n = 0;
	for (;;) {
		size_t k = end - p >= 4 && memcmp(p, "null", 4) == 0 ? 4 : number_len(p, end);
		if (k == 0)
			return 0;
		(*n)++;
		p = skip_ws(p + k, end);
		if (p >= end)
			return 0;
		if (*p == ']')
			return (size_t)(p + 1 - s);
		if (*p != ',')
			return 0;
		p = skip_ws(p + 1, end);
	}
}

/* The runs of text[0..len) into doc->runs, and doc->values.  0, or -1 when
 * the table of runs did not fit in memory. */
static int scan(struct jsondoc *doc, const char *text, size_t len)
{
	const char *p = text, *end = text + len;
	size_t commas = 0, containers = 0, arrays = 0, cap = 0;
	while (p < end) {
		char c = *p;
		if (c == '"') {
			for (p++; p < end && *p != '"'; p++)
				if (*p == '\\' && p + 1 < end)
					p++;
			p++;
			continue;
		}
		if (c == ',') {
			commas++;
		} else if (c == '{') {
			containers++;
		} else if (c == '[') {
			containers++;
			arrays++;
			size_t n, k = run_len(p, end, &n);
			if (k > 0 && n >= JSONDOC_RUN_MIN) {
				if (doc->n_runs == cap) {
					size_t grown = cap ? 2 * cap : 64;
					struct jsondoc_run *r = realloc(doc->runs, grown * sizeof(*r));
					if (!r)
						return -1;
					doc->runs = r;
					cap = grown;
				}
				doc->runs[doc->n_runs++] = (struct jsondoc_run){
					.at = (size_t)(p - text), .len = k, .n = n, .ordinal = arrays};
				p += k;
				continue;
			}
		}
		p++;
	}
	doc->values = commas + 2 * containers + 1;
	return 0;
}

/* Depth first through the tree, arrays counted as scan counted them. */
static void map(struct jsondoc *doc, const cJSON *v, size_t *arrays, size_t *next)
{
	if (cJSON_IsArray(v)) {
		++*arrays;
		if (*next < doc->n_runs && doc->runs[*next].ordinal == *arrays)
			doc->runs[(*next)++].node = v;
	}
	for (const cJSON *c = v->child; c; c = c->next)
		map(doc, c, arrays, next);
}

/* The offset in the text of offset at of the copy. */
static size_t text_at(const struct jsondoc *doc, size_t at)
{
	size_t shift = 0;
	for (size_t i = 0; i < doc->n_runs && doc->runs[i].copy_at < at; i++)
		shift += doc->runs[i].len - 2;
	return at + shift;
}

enum jsondoc_rc jsondoc_parse(struct jsondoc *doc, const char *text, size_t len, size_t max_values,
			      size_t *at)
{
	*doc = (struct jsondoc){.text = text, .len = len};
	*at = 0;
	if (scan(doc, text, len) != 0) {
		jsondoc_release(doc);
		return JSONDOC_NOMEM;
	}
	if (doc->values > max_values) {
		jsondoc_release(doc);
		return JSONDOC_VALUES;
	}
	/* the copy: the text with every run as "[]" (the text itself when
	 * there is none) */
	const char *src = text;
	size_t n = len;
	char *copy = NULL;
	if (doc->n_runs > 0) {
		for (size_t i = 0; i < doc->n_runs; i++)
			n -= doc->runs[i].len - 2;
		copy = malloc(n + 1);
		if (!copy) {
			jsondoc_release(doc);
			return JSONDOC_NOMEM;
		}
		size_t from = 0, to = 0;
		for (size_t i = 0; i < doc->n_runs; i++) {
			struct jsondoc_run *r = &doc->runs[i];
			memcpy(copy + to, text + from, r->at - from);
			to += r->at - from;
			r->copy_at = to;
			memcpy(copy + to, "[]", 2);
			to += 2;
			from = r->at + r->len;
		}
		memcpy(copy + to, text + from, len - from);
		copy[n] = '\0';
		src = copy;
	}
	/* a syntax error leaves errno alone; a failed malloc sets ENOMEM */
	const char *end = NULL;
	int saved = errno;
	errno = 0;
	doc->root = cJSON_ParseWithLengthOpts(src, n, &end, false);
	int err = errno;
	errno = saved;
	enum jsondoc_rc rc = JSONDOC_OK;
	if (!doc->root) {
		rc = err == ENOMEM ? JSONDOC_NOMEM : JSONDOC_SYNTAX;
		*at = end && end >= src && end <= src + n ? text_at(doc, (size_t)(end - src)) : 0;
	} else {
		const char *rest = skip_ws(end, src + n);
		if (rest < src + n) {
			rc = JSONDOC_TRAILING;
			*at = text_at(doc, (size_t)(rest - src));
		}
	}
	free(copy);
	if (rc != JSONDOC_OK) {
		jsondoc_release(doc);
		return rc;
	}
	size_t arrays = 0, next = 0;
	map(doc, doc->root, &arrays, &next);
	return JSONDOC_OK;
}

void jsondoc_release(struct jsondoc *doc)
{
	cJSON_Delete(doc->root);
	free(doc->runs);
	*doc = (struct jsondoc){0};
}

static const struct jsondoc_run *run_of(const struct jsondoc *doc, const cJSON *a)
{
	for (size_t i = 0; a && i < doc->n_runs; i++)
		if (doc->runs[i].node == a)
			return &doc->runs[i];
	return NULL;
}

size_t jsondoc_size(const struct jsondoc *doc, const cJSON *a)
{
	if (!cJSON_IsArray(a))
		return 0;
	const struct jsondoc_run *r = run_of(doc, a);
	return r ? r->n : (size_t)cJSON_GetArraySize(a);
}

void jsondoc_nums_init(struct jsondoc_nums *it, const struct jsondoc *doc, const cJSON *a)
{
	*it = (struct jsondoc_nums){0};
	if (!cJSON_IsArray(a))
		return;
	const struct jsondoc_run *r = run_of(doc, a);
	if (r) {
		it->p = doc->text + r->at + 1;
		it->left = r->n;
	} else {
		it->e = a->child;
	}
}

double jsondoc_nums_next(struct jsondoc_nums *it)
{
	if (it->e) {
		const cJSON *e = it->e;
		it->e = e->next;
		return cJSON_IsNumber(e) ? e->valuedouble : NAN;
	}
	if (it->left == 0)
		return NAN;
	it->left--;
	/* scan checked the run: blanks and commas, then a number or null */
	while (is_ws(*it->p) || *it->p == ',')
		it->p++;
	if (*it->p == 'n') {
		it->p += 4;
		return NAN;
	}
	char *end;
	double v = strtod(it->p, &end);
	it->p = end;
	return v;
}
