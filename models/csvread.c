/* SPDX-License-Identifier: Apache-2.0
 * csvread: CSV tables through libcsv (see csvread.h).
 *
 * The text is fed to libcsv one physical line at a time, so the row
 * callback knows the line a row ends on; a row's start line is taken when
 * its first field begins.  Cells are trimmed of surrounding spaces.
 */
#include "models/csvread.h"

#include <csv.h>
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct rd {
	struct csvread *t;
	struct diag *d;
	int err;
	long line;               /* line being fed */
	long row_line;           /* line the current row started on */
	char *fields[CSVREAD_MAX_COLS + 1];
	size_t nf;
	bool too_many;
	bool have_header;
};

static char *dup_trim(const char *s, size_t n)
{
	while (n && (*s == ' ' || *s == '\t')) {
		s++;
		n--;
	}
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r'))
		n--;
	char *r = malloc(n + 1);
	if (r) {
		memcpy(r, s, n);
		r[n] = '\0';
	}
	return r;
}

static int own(struct csvread *t, void *p)
{
	if (!p)
		return DIAG_ENOMEM;
	if (t->owned_len == t->owned_cap) {
		size_t cap = t->owned_cap ? 2 * t->owned_cap : 256;
		void **o = realloc(t->owned, cap * sizeof(*o));
		if (!o) {
			free(p);
			return DIAG_ENOMEM;
		}
		t->owned = o;
		t->owned_cap = cap;
	}
	t->owned[t->owned_len++] = p;
	return 0;
}

static void on_field(void *s, size_t len, void *data)
{
	struct rd *r = data;
	if (r->err)
		return;
	if (r->nf == 0)
		r->row_line = r->line;
	if (r->nf == CSVREAD_MAX_COLS) {
		r->too_many = true;
		return;
	}
	char *f = dup_trim(s ? s : "", s ? len : 0);
	if (!f) {
		r->err = diag_set(r->d, DIAG_ENOMEM, "out of memory");
		return;
	}
	r->fields[r->nf++] = f;
}

static void drop_fields(struct rd *r)
{
	for (size_t i = 0; i < r->nf; i++)
		free(r->fields[i]);
	r->nf = 0;
	r->too_many = false;
}

static void on_row(int c, void *data)
{
	(void)c;
	struct rd *r = data;
	struct csvread *t = r->t;
	if (r->err) {
		drop_fields(r);
		return;
	}
	if (r->nf == 0 || (r->nf == 1 && r->fields[0][0] == '\0') || r->fields[0][0] == '#') {
		drop_fields(r);
		return;
	}
	if (r->too_many) {
		r->err = diag_at(r->d, DIAG_EINPUT, t->path, r->row_line, 0,
				 "more than %d fields in a row", CSVREAD_MAX_COLS);
		drop_fields(r);
		return;
	}
	if (!r->have_header) {
		t->header = calloc(r->nf, sizeof(char *));
		if (!t->header || own(t, t->header) != 0) {
			t->header = NULL;
			r->err = diag_set(r->d, DIAG_ENOMEM, "out of memory");
			drop_fields(r);
			return;
		}
		for (size_t i = 0; i < r->nf; i++) {
			if (own(t, r->fields[i]) != 0) {
				r->fields[i] = NULL;
				for (size_t k = i + 1; k < r->nf; k++)
					free(r->fields[k]);
				r->nf = 0;
				r->err = diag_set(r->d, DIAG_ENOMEM, "out of memory");
				return;
			}
			t->header[i] = r->fields[i];
		}
		t->cols = r->nf;
		r->nf = 0;
		r->have_header = true;
		return;
	}
	if (r->nf != t->cols) {
		r->err = diag_at(r->d, DIAG_EINPUT, t->path, r->row_line, 0,
				 "row has %zu fields, expected %zu (the header's)", r->nf, t->cols);
		drop_fields(r);
		return;
	}
	if (t->rows == CSVREAD_MAX_ROWS) {
		r->err = diag_at(r->d, DIAG_EINPUT, t->path, r->row_line, 0,
				 "more than %d rows", CSVREAD_MAX_ROWS);
		drop_fields(r);
		return;
	}
	if (t->rows == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 64;
		char **cells = realloc(t->cells, cap * t->cols * sizeof(char *));
		if (cells)
			t->cells = cells;
		long *lines = cells ? realloc(t->lines, cap * sizeof(long)) : NULL;
		if (!cells || !lines) {
			r->err = diag_set(r->d, DIAG_ENOMEM, "out of memory");
			drop_fields(r);
			return;
		}
		t->lines = lines;
		t->cap = cap;
	}
	for (size_t i = 0; i < r->nf; i++) {
		if (own(t, r->fields[i]) != 0) {
			for (size_t k = i + 1; k < r->nf; k++)
				free(r->fields[k]);
			r->nf = 0;
			r->err = diag_set(r->d, DIAG_ENOMEM, "out of memory");
			return;
		}
		t->cells[t->rows * t->cols + i] = r->fields[i];
	}
	t->lines[t->rows] = r->row_line;
	t->rows++;
	r->nf = 0;
}

void csvread_release(struct csvread *t)
{
	for (size_t i = 0; i < t->owned_len; i++)
		free(t->owned[i]);
	free(t->owned);
	free(t->cells);
	free(t->lines);
	free(t->path);
	memset(t, 0, sizeof(*t));
}

int csvread_parse(struct csvread *t, const char *name, const char *text, size_t len,
		  struct diag *d)
{
	memset(t, 0, sizeof(*t));
	t->path = strdup(name);
	if (!t->path)
		return diag_set(d, DIAG_ENOMEM, "out of memory");
	if (len > CSVREAD_MAX_BYTES) {
		int rc = diag_set(d, DIAG_EINPUT, "%s: larger than %u bytes", name, CSVREAD_MAX_BYTES);
		csvread_release(t);
		return rc;
	}
	struct csv_parser p;
	if (csv_init(&p, CSV_STRICT | CSV_STRICT_FINI | CSV_APPEND_NULL) != 0) {
		csvread_release(t);
		return diag_set(d, DIAG_ENOMEM, "out of memory");
	}
	struct rd r = { .t = t, .d = d, .line = 1 };
	size_t pos = 0;
	while (pos < len && !r.err) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - (text + pos)) + 1 : len - pos;
		if (csv_parse(&p, text + pos, n, on_field, on_row, &r) != n && !r.err)
			r.err = diag_at(d, DIAG_EINPUT, name, r.line, 0, "malformed CSV: %s",
					csv_strerror(csv_error(&p)));
		pos += n;
		if (nl)
			r.line++;
	}
	if (!r.err && csv_fini(&p, on_field, on_row, &r) != 0 && !r.err)
		r.err = diag_at(d, DIAG_EINPUT, name, r.line, 0, "malformed CSV: %s (an unclosed "
				"quote?)", csv_strerror(csv_error(&p)));
	drop_fields(&r);
	csv_free(&p);
	if (!r.err && !r.have_header)
		r.err = diag_set(d, DIAG_EINPUT, "%s: no header row (expected column names)", name);
	if (r.err) {
		csvread_release(t);
		return r.err;
	}
	return 0;
}

int csvread_load(struct csvread *t, const char *path, struct diag *d)
{
	memset(t, 0, sizeof(*t));
	FILE *f = fopen(path, "rb");
	if (!f)
		return diag_set(d, DIAG_EIO, "%s: cannot open: %s", path, strerror(errno));
	char *buf = malloc(CSVREAD_MAX_BYTES + 1);
	if (!buf) {
		fclose(f);
		return diag_set(d, DIAG_ENOMEM, "out of memory");
	}
	size_t n = fread(buf, 1, CSVREAD_MAX_BYTES + 1, f);
	int err = ferror(f);
	fclose(f);
	int rc;
	if (err)
		rc = diag_set(d, DIAG_EIO, "%s: read error", path);
	else
		rc = csvread_parse(t, path, buf, n, d);
	free(buf);
	return rc;
}

int csvread_col(const struct csvread *t, const char *name)
{
	for (size_t i = 0; i < t->cols; i++)
		if (strcmp(t->header[i], name) == 0)
			return (int)i;
	return -1;
}

const char *csvread_cell(const struct csvread *t, size_t row, int col)
{
	if (col < 0 || (size_t)col >= t->cols || row >= t->rows)
		return "";
	return t->cells[row * t->cols + (size_t)col];
}

int csvread_number(const struct csvread *t, size_t row, int col, int empty_ok,
		   double *out, struct diag *d)
{
	const char *s = csvread_cell(t, row, col);
	const char *name = col >= 0 ? t->header[col] : "?";
	if (!s[0]) {
		if (empty_ok) {
			*out = NAN;
			return 0;
		}
		return diag_at(d, DIAG_EINPUT, t->path, t->lines[row], 0,
			       "column '%s' is empty (expected a number)", name);
	}
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || *end || !isfinite(v))
		return diag_at(d, DIAG_EINPUT, t->path, t->lines[row], 0,
			       "column '%s': '%s' is not a number", name, s);
	*out = v;
	return 0;
}
