/* SPDX-License-Identifier: Apache-2.0
 * diag: the caller-provided diagnostic that every fallible function fills.
 *
 * A function that can fail returns an int (0 ok, a negative DIAG_E* code) and
 * writes one human-readable message into a struct diag the caller owns.  The
 * first error wins; later ones are only counted, so the message a user sees is
 * the root cause, not a cascade.  Messages about input name the place:
 * "path:line:col: what is wrong 'token' (expected ...)".
 */
#ifndef BASE_DIAG_H
#define BASE_DIAG_H

#include <stddef.h>

enum {
	DIAG_OK = 0,
	DIAG_EINPUT = -1,    /* bad input or usage: exit status 2 */
	DIAG_ENOMEM = -2,    /* allocation failed or a size limit was hit: exit 2,
				a resource limit the user can change */
	DIAG_EIO = -3,       /* the operating system refused a read or write: exit 2 */
	DIAG_EINTERNAL = -4, /* a broken invariant detected at run time: exit 3 */
};

#define DIAG_MSG_MAX 1024

struct diag {
	int code;             /* first error's code, DIAG_OK if none */
	int count;            /* errors reported, including the first */
	char msg[DIAG_MSG_MAX];
};

void diag_init(struct diag *d);

/* Record an error; returns code so callers can write `return diag_set(...)`.
 * Only the first call stores its message. */
int diag_set(struct diag *d, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Same, prefixed with "path:line:col: " (col 0 omits the column, line 0 both). */
int diag_at(struct diag *d, int code, const char *path, long line, long col,
	    const char *fmt, ...) __attribute__((format(printf, 6, 7)));

/* Exit status for a code: 0; 2 for input and I/O (a path the user gave);
 * 3 for internal errors and running out of memory. */
int diag_exit_status(int code);

#endif
