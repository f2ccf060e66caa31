/* SPDX-License-Identifier: Apache-2.0
 * import_csv: one CSV line at a time through libcsv (see import_csv.h).
 * The parser is fed a line and finished, so a row never spans lines; the
 * fields land in one byte buffer reused from row to row.
 */
#define _POSIX_C_SOURCE 200809L
#include "traces/import_csv.h"

#include "base/diag.h"

#include <csv.h>

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static void on_field(void *data, size_t len, void *vr)
{
	struct csvr *r = vr;
	size_t at = r->bytes.len;
	size_t *off = vec_push(&r->offs);
	if (!off || vec_reserve(&r->bytes, at + len + 1) != 0) {
		r->overflow = true;
		if (off)
			r->offs.len--;
		return;
	}
	*off = at;
	if (len)
		memcpy((char *)r->bytes.data + at, data, len);
	((char *)r->bytes.data)[at + len] = '\0';
	r->bytes.len = at + len + 1;
}

static void on_row(int c, void *vr)
{
	(void)c;
	(void)vr;
}

int csvr_open(struct csvr *r, const char *path, struct diag *d)
{
	memset(r, 0, sizeof(*r));
	vec_init(&r->bytes, 1, VEC_NO_LIMIT);
	vec_init(&r->offs, sizeof(size_t), VEC_NO_LIMIT);
	struct csv_parser *p = malloc(sizeof(*p));
	if (!p || csv_init(p, CSV_STRICT | CSV_STRICT_FINI) != 0) {
		free(p);
		return diag_set(d, DIAG_ENOMEM, "%s: out of memory", path);
	}
	r->parser = p;
	int rc = lines_open(&r->l, path, d);
	if (rc) {
		csv_free(p);
		free(p);
		r->parser = NULL;
	}
	return rc;
}

void csvr_close(struct csvr *r)
{
	if (r->parser) {
		csv_free(r->parser);
		free(r->parser);
	}
	lines_close(&r->l);
	vec_release(&r->bytes);
	vec_release(&r->offs);
	r->parser = NULL;
}

int csvr_next(struct csvr *r, struct diag *d)
{
	char *s;
	size_t n;
	int rc;
	do
		rc = lines_next(&r->l, &s, &n, d);
	while (rc == LINES_OK && lines_blank(s, n));
	if (rc != LINES_OK)
		return rc;
	r->line = s;
	r->line_len = n;
	vec_clear(&r->bytes);
	vec_clear(&r->offs);
	r->overflow = false;
	struct csv_parser *p = r->parser;
	size_t used = csv_parse(p, s, n, on_field, on_row, r);
	int fin = csv_fini(p, on_field, on_row, r);
	if (r->overflow)
		return diag_set(d, DIAG_ENOMEM, "%s:%ld: out of memory", r->l.path, r->l.line_no);
	if (used != n || fin != 0)
		return CSVR_BAD;
	return LINES_OK;
}

size_t csvr_nfields(const struct csvr *r)
{
	return r->offs.len;
}

const char *csvr_field(const struct csvr *r, size_t i)
{
	return i < r->offs.len ? (const char *)r->bytes.data + VEC_AT(&r->offs, size_t, i) : "";
}

long csvr_col(const struct csvr *r, size_t i)
{
	bool quoted = false;
	size_t field = 0;
	for (size_t k = 0; k < r->line_len; k++) {
		if (field == i)
			return (long)k + 1;
		char c = r->line[k];
		if (c == '"')
			quoted = !quoted;
		else if (c == ',' && !quoted)
			field++;
	}
	return field == i ? (long)r->line_len + 1 : 1;
}

/* Header names compared without case, blanks, '_' or '-'. */
static bool same_name(const char *a, const char *b)
{
	for (;;) {
		while (*a == ' ' || *a == '_' || *a == '-' || *a == '\t')
			a++;
		while (*b == ' ' || *b == '_' || *b == '-' || *b == '\t')
			b++;
		if (!*a || !*b)
			return !*a && !*b;
		if (tolower((unsigned char)*a) != tolower((unsigned char)*b))
			return false;
		a++;
		b++;
	}
}

long csvr_find(const struct csvr *r, const char *const *names)
{
	for (size_t i = 0; i < r->offs.len; i++) {
		const char *f = csvr_field(r, i);
		if (i == 0 && (unsigned char)f[0] == 0xef && (unsigned char)f[1] == 0xbb &&
		    (unsigned char)f[2] == 0xbf)
			f += 3; /* UTF-8 byte order mark */
		for (const char *const *n = names; *n; n++)
			if (same_name(f, *n))
				return (long)i;
	}
	return -1;
}

bool csv_int(const char *s, int64_t max, int64_t *out)
{
	if (!isdigit((unsigned char)s[0]))
		return false;
	errno = 0;
	char *end;
	long long v = strtoll(s, &end, 10);
	if (errno || v < 0 || v > max)
		return false;
	if (end[0] == '.') {
		end++;
		while (*end == '0')
			end++;
	}
	if (*end)
		return false;
	*out = v;
	return true;
}

bool csv_seconds(const char *s, double *out)
{
	if (!s[0] || isspace((unsigned char)s[0]) || s[0] == '-' || s[0] == '+')
		return false;
	/* plain decimal only: strtod would also take "0x10" (16), "inf", "nan" */
	if (s[strspn(s, "0123456789.eE+-")] != '\0')
		return false;
	errno = 0;
	char *end;
	double v = strtod(s, &end);
	if (errno || *end || !isfinite(v) || v < 0)
		return false;
	*out = v;
	return true;
}
