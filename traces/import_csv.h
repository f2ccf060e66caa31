/* SPDX-License-Identifier: Apache-2.0
 * import_csv: the CSV row reader the CSV importers share (Azure, BurstGPT),
 * built on libcsv.  It reads one physical line at a time (so line numbers
 * in messages are the editor's) and splits it into fields; a quoted field
 * may therefore not contain a newline, which none of the supported traces
 * needs.  Header lookup ignores case, blanks and underscores, so
 * "Request tokens", "request_tokens" and "RequestTokens" are one column.
 */
#ifndef TRACES_IMPORT_CSV_H
#define TRACES_IMPORT_CSV_H

#include "base/vec.h"
#include "traces/import_util.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum { CSVR_BAD = 3 };

struct csvr {
	struct lines l;
	void *parser;         /* struct csv_parser * */
	struct vec bytes;     /* char: the fields of the row, each NUL-terminated */
	struct vec offs;      /* size_t: start of each field in bytes */
	const char *line;     /* the current line (valid until the next row) */
	size_t line_len;
	bool overflow;
};

/* 0, DIAG_EIO or DIAG_ENOMEM. */
int csvr_open(struct csvr *r, const char *path, struct diag *d);
/* Next non-blank line: LINES_OK (fields ready), LINES_TOO_LONG, CSVR_BAD
 * (unbalanced quotes), 0 at the end, or a negative code. */
int csvr_next(struct csvr *r, struct diag *d);
size_t csvr_nfields(const struct csvr *r);
const char *csvr_field(const struct csvr *r, size_t i);
/* 1-based byte column where field i starts in the current line. */
long csvr_col(const struct csvr *r, size_t i);
/* Index of the first header field matching one of names (NULL-terminated),
 * or -1. */
long csvr_find(const struct csvr *r, const char *const *names);
void csvr_close(struct csvr *r);

/* Whole number 0..max written in decimal (a trailing ".0" is accepted). */
bool csv_int(const char *s, int64_t max, int64_t *out);
/* Finite decimal number >= 0. */
bool csv_seconds(const char *s, double *out);

#endif
