/* SPDX-License-Identifier: Apache-2.0
 * textfile: read a small text file (a scenario, a profile) whole, with a
 * size limit, and turn a position in it into line:column for messages.
 */
#ifndef BASE_TEXTFILE_H
#define BASE_TEXTFILE_H

#include <stddef.h>

struct diag;

/* Read `path` into a NUL-terminated heap buffer of at most max_bytes bytes.
 * Returns it (free with free()) or NULL with d filled: "PATH: cannot open:
 * REASON" (DIAG_EINPUT), "PATH: larger than N bytes (expected WHAT)"
 * (DIAG_EINPUT), "PATH:LINE:COL: a NUL byte (expected WHAT, as text)"
 * (DIAG_EINPUT), a read error (DIAG_EIO) or DIAG_ENOMEM. */
char *textfile_read(const char *path, size_t max_bytes, const char *what, struct diag *d);

/* 1-based line and column of `at` within `text` (at must point into text or
 * at its terminating NUL). */
void textfile_line_col(const char *text, const char *at, long *line, long *col);

#endif
