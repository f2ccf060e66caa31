/* SPDX-License-Identifier: Apache-2.0
 * outfile: temporary file + rename, so output is all-or-nothing. */
#define _POSIX_C_SOURCE 200809L
#include "base/outfile.h"

#include "base/diag.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int outfile_open(struct outfile *of, const char *path, struct diag *d)
{
	of->fp = NULL;
	of->path = NULL;
	of->tmp_path = NULL;
	if (strcmp(path, "-") == 0) {
		of->fp = stdout;
		return 0;
	}
	size_t n = strlen(path);
	of->path = strdup(path);
	of->tmp_path = malloc(n + 12);
	if (!of->path || !of->tmp_path) {
		outfile_abort(of);
		return diag_set(d, DIAG_ENOMEM, "out of memory opening %s", path);
	}
	memcpy(of->tmp_path, path, n);
	memcpy(of->tmp_path + n, ".tmp.XXXXXX", 12);
	int fd = mkstemp(of->tmp_path);
	if (fd < 0) {
		int e = errno;
		free(of->tmp_path);
		of->tmp_path = NULL;
		outfile_abort(of);
		return diag_set(d, DIAG_EIO, "%s: cannot create: %s", path, strerror(e));
	}
	/* mkstemp creates the file 0600; give the result the mode a plain
	 * fopen would (0666 less the umask), since it replaces the user's file. */
	mode_t mask = umask(0);
	umask(mask);
	fchmod(fd, 0666 & ~mask);
	of->fp = fdopen(fd, "w");
	if (!of->fp) {
		close(fd);
		outfile_abort(of);
		return diag_set(d, DIAG_EIO, "%s: cannot open: %s", path, strerror(errno));
	}
	return 0;
}

int outfile_commit(struct outfile *of, struct diag *d)
{
	int rc = 0;
	if (!of->tmp_path) {
		if (of->fp && fflush(of->fp) != 0)
			rc = diag_set(d, DIAG_EIO, "standard output: write failed: %s", strerror(errno));
		of->fp = NULL;
		return rc;
	}
	int bad = ferror(of->fp);
	if (fclose(of->fp) != 0 || bad) {
		of->fp = NULL;
		rc = diag_set(d, DIAG_EIO, "%s: write failed", of->path);
		outfile_abort(of);
		return rc;
	}
	of->fp = NULL;
	if (rename(of->tmp_path, of->path) != 0) {
		rc = diag_set(d, DIAG_EIO, "%s: cannot rename into place: %s", of->path, strerror(errno));
		outfile_abort(of);
		return rc;
	}
	free(of->tmp_path);
	free(of->path);
	of->tmp_path = NULL;
	of->path = NULL;
	return 0;
}

void outfile_abort(struct outfile *of)
{
	if (of->fp && of->fp != stdout)
		fclose(of->fp);
	if (of->tmp_path)
		unlink(of->tmp_path);
	free(of->tmp_path);
	free(of->path);
	of->fp = NULL;
	of->tmp_path = NULL;
	of->path = NULL;
}
