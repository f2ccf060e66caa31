/* SPDX-License-Identifier: Apache-2.0
 * cli_run: run the built agentcap binary from a test and capture what it
 * printed, for the end-to-end tests of every command. */
#ifndef TESTS_SUPPORT_CLI_RUN_H
#define TESTS_SUPPORT_CLI_RUN_H

#include <stddef.h>

struct cli_out {
	int status;     /* exit status, -1 if it did not exit normally */
	char *out;      /* standard output, NUL-terminated */
	char *err;      /* standard error, NUL-terminated */
	size_t out_len; /* bytes of standard output (it may hold NULs) */
};

/* Run `agentcap ARGS` through the shell (ARGS is pasted as is). */
struct cli_out cli_run(const char *args);
void cli_out_free(struct cli_out *r);

/* A whole file, NUL-terminated (NULL if it cannot be read); *len gets its
 * size when len is not NULL.  Free with free(). */
char *cli_slurp(const char *path, size_t *len);

#endif
