/* SPDX-License-Identifier: Apache-2.0
 * outfile: write an output so that readers see the old content or the whole
 * new content, never a half-written one, and never replace what is not a
 * regular file.
 *
 * What a path names decides how it is written:
 *   "-"                       standard output, directly (commit just flushes);
 *   a regular file, or none   "FILE.tmp.XXXXXX" beside it, renamed over it by
 *                             outfile_commit, removed by outfile_abort;
 *   a symbolic link           followed: the file it points to is replaced (or
 *                             created) that way, the link stays a link;
 *   a character device or     opened and written directly (/dev/null, a
 *   a FIFO                    terminal, a pipe someone reads);
 *   anything else             refused (a directory, a block device, a socket).
 * Exactly one of commit or abort must follow a successful open.
 *
 * Every temporary file that exists is also listed in a small process-wide
 * table, so that a fatal signal can remove it (outfile_remove_temps); that
 * table is the one piece of mutable global state of the program (see
 * outfile.c).  Messages name the path as given and carry the system's reason.
 */
#ifndef BASE_OUTFILE_H
#define BASE_OUTFILE_H

#include <stdbool.h>
#include <stdio.h>

struct diag;

/* Temporary files that can exist at once in one process. */
#define OUTFILE_MAX_TEMPS 16

struct outfile {
	FILE *fp;        /* write here between open and commit/abort */
	char *path;      /* the path as given, for messages; NULL for stdout */
	char *target;    /* the regular file that commit replaces (symlinks
	                  * followed); NULL when writing directly */
	char *tmp_path;  /* "target.tmp.XXXXXX"; NULL when writing directly */
	int slot;        /* index in the table of temporary files, or -1 */
};

/* Whether path can be written, without creating or opening anything: the
 * directory of a file to create exists and is writable, an existing file is
 * writable, a device or FIFO is writable, the type is one outfile writes.
 * Meant for the start of a command, before hours of work.  0 or DIAG_EIO
 * with a message naming the path and the reason. */
int outfile_check(const char *path, struct diag *d);

/* Whether the output path names the same existing file as input (after
 * symbolic links): writing it would replace what is being read.  False when
 * either is "-", missing or cannot be examined. */
bool outfile_is_input(const char *path, const char *input);

/* Whether two output paths name one file: the same text, the same
 * existing file (after symbolic links), or the same name in the same
 * directory (a file neither has created yet).  "-" names standard output:
 * the same as "-" only. */
bool outfile_same(const char *a, const char *b);

/* Outputs of one command: n (option, path) pairs, path NULL when the option
 * is not given.  0, or DIAG_EINPUT naming the two options that would write
 * one file (the last written would keep only its own) and the path; meant
 * for the start of a command, before any work. */
int outfile_distinct(const char *const *options, const char *const *paths, size_t n,
		     struct diag *d);

/* Start writing path as described above.  A FIFO without a reader blocks
 * here until one opens it.  0; DIAG_EIO (the path cannot be written) or
 * DIAG_ENOMEM, with nothing created and of->fp NULL. */
int outfile_open(struct outfile *of, const char *path, struct diag *d);

/* Flush and close; for a temporary file, rename it over the target.  0 or
 * DIAG_EIO naming the path and the system's reason (the temporary file is
 * then removed).  Releases of in every case. */
int outfile_commit(struct outfile *of, struct diag *d);

/* End an output that a writer function filled, returning wrc with its
 * message in *wd: commit when wrc is 0, and also when the writer failed
 * only because the stream refused a write (wrc DIAG_EIO and the stream in
 * error), so that the message names the file and the system's reason
 * rather than the writer's guess; otherwise abort and pass wd on to d.
 * Releases of in every case. */
int outfile_finish(struct outfile *of, int wrc, const struct diag *wd, struct diag *d);

/* Close and remove the temporary file, if any; what went to standard
 * output, a device or a FIFO stays written.  Accepts an outfile whose open
 * failed, and one already committed or aborted. */
void outfile_abort(struct outfile *of);

/* Remove every temporary file of the process that is still open.  Only
 * async-signal-safe calls: meant for a handler of SIGINT, SIGTERM and the
 * like, just before the process dies. */
void outfile_remove_temps(void);

#endif
