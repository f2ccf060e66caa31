/* SPDX-License-Identifier: Apache-2.0
 * outfile: write a file so that readers see the old content or the whole new
 * content, never a half-written one.
 *
 * outfile_open creates "PATH.tmp.XXXXXX" beside PATH; outfile_commit flushes,
 * closes and renames it over PATH; outfile_abort removes it.  Exactly one of
 * commit or abort must follow a successful open.  The special path "-" writes
 * to standard output directly (commit just flushes).
 */
#ifndef BASE_OUTFILE_H
#define BASE_OUTFILE_H

#include <stdio.h>

struct diag;

struct outfile {
	FILE *fp;        /* write here between open and commit/abort */
	char *path;      /* final path */
	char *tmp_path;  /* NULL when writing to stdout */
};

int outfile_open(struct outfile *of, const char *path, struct diag *d);
int outfile_commit(struct outfile *of, struct diag *d);
void outfile_abort(struct outfile *of);

#endif
