/* SPDX-License-Identifier: Apache-2.0
 * csvread: a small CSV file read whole into a table of strings.
 *
 * For the measurement tables agentcap reads (measured step profiles,
 * calibration measurements): RFC 4180 quoting (fields with commas, quotes
 * and newlines), a header row naming the columns, lines starting with '#'
 * and blank lines skipped.  Every row remembers the physical line it starts
 * on, so errors about a cell can say "path:line: ...".  A row with a
 * different number of fields than the header is an error.
 *
 * Limits: CSVREAD_MAX_BYTES per file, CSVREAD_MAX_COLS columns,
 * CSVREAD_MAX_ROWS rows; going past one is an input error.  Strings returned
 * stay valid until csvread_release.
 */
#ifndef MODELS_CSVREAD_H
#define MODELS_CSVREAD_H

#include <stddef.h>

#include "base/diag.h"

#define CSVREAD_MAX_BYTES (16u << 20)
#define CSVREAD_MAX_COLS 64
#define CSVREAD_MAX_ROWS 1000000

struct csvread {
	char *path;              /* as given, for messages */
	char **header;           /* cols names */
	size_t cols;
	char **cells;            /* rows x cols, row-major; never NULL entries */
	long *lines;             /* line each data row starts on (1-based) */
	size_t rows;             /* data rows (header excluded) */
	size_t cap;              /* rows allocated */
	void **owned;            /* every string, freed by csvread_release */
	size_t owned_len, owned_cap;
};

/* Read `path`.  0, DIAG_EIO (cannot read), DIAG_EINPUT ("path:line: row has
 * 5 fields, expected 7 (the header's)"; malformed quoting; no header;
 * limits) or DIAG_ENOMEM.  t is released and zeroed on failure. */
int csvread_load(struct csvread *t, const char *path, struct diag *d);

/* The same from text in memory; `name` stands for the path in messages. */
int csvread_parse(struct csvread *t, const char *name, const char *text, size_t len,
		  struct diag *d);

void csvread_release(struct csvread *t);

/* Index of the column named `name` (exact, after trimming spaces), or -1. */
int csvread_col(const struct csvread *t, const char *name);

/* Cell text ("" when col < 0). */
const char *csvread_cell(const struct csvread *t, size_t row, int col);

/* Parse a cell as a finite number: 0 and *out set, or DIAG_EINPUT
 * ("path:line: column 'x': 'abc' is not a number").  An empty cell is an
 * error unless empty_ok, which sets *out = NAN and returns 0. */
int csvread_number(const struct csvread *t, size_t row, int col, int empty_ok,
		   double *out, struct diag *d);

#endif
