/* SPDX-License-Identifier: Apache-2.0
 * textfile: whole-file reads with a limit, positions as line:column. */
#include "base/textfile.h"

#include "base/diag.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *textfile_read(const char *path, size_t max_bytes, const char *what, struct diag *d)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		diag_set(d, DIAG_EINPUT, "%s: cannot open: %s", path, strerror(errno));
		return NULL;
	}
	size_t cap = 4096, len = 0;
	char *buf = malloc(cap);
	while (buf) {
		size_t got = fread(buf + len, 1, cap - len - 1, f);
		len += got;
		if (len > max_bytes) {
			free(buf);
			fclose(f);
			diag_set(d, DIAG_EINPUT, "%s: larger than %zu bytes (expected %s)", path, max_bytes,
				 what);
			return NULL;
		}
		if (got == 0)
			break;
		if (len + 1 == cap) {
			char *n = realloc(buf, cap * 2);
			if (!n) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = n;
			cap *= 2;
		}
	}
	int bad = ferror(f);
	fclose(f);
	if (!buf) {
		diag_set(d, DIAG_ENOMEM, "%s: out of memory", path);
		return NULL;
	}
	if (bad) {
		free(buf);
		diag_set(d, DIAG_EIO, "%s: read error", path);
		return NULL;
	}
	buf[len] = '\0';
	/* every caller reads the text up to its terminator: a NUL inside
	 * would end it early without a word */
	const char *nul = memchr(buf, '\0', len);
	if (nul) {
		long line, col;
		textfile_line_col(buf, nul, &line, &col);
		diag_at(d, DIAG_EINPUT, path, line, col, "a NUL byte (expected %s, as text)", what);
		free(buf);
		return NULL;
	}
	return buf;
}

void textfile_line_col(const char *text, const char *at, long *line, long *col)
{
	*line = 1;
	*col = 1;
	for (const char *p = text; p < at && *p; p++) {
		if (*p == '\n') {
			(*line)++;
			*col = 1;
		} else {
			(*col)++;
		}
	}
}
