/* SPDX-License-Identifier: Apache-2.0
 * warn: a short list of findings a report shows above its figures.
 *
 * Pre-flight checks (models/, replay/) and the reading of a finished run
 * (reports/) append warnings here; cli/ decides whether one makes the answer
 * "no" and reports/ prints them at the top of the table and under
 * "warnings" in JSON.  Each warning has a stable code (a lower-case word a
 * script can match, e.g. "failed_calls") and a message of one or a few
 * sentences saying what was found and what to change.
 *
 * Fixed size, no heap: WARN_MAX warnings of at most WARN_MSG_MAX - 1 bytes;
 * more are counted in `dropped`, longer messages are cut.  Order is the
 * order of warn_add, so output stays deterministic.
 */
#ifndef BASE_WARN_H
#define BASE_WARN_H

#include <stdbool.h>
#include <stddef.h>

#define WARN_MAX 24
#define WARN_CODE_MAX 32
#define WARN_MSG_MAX 512

struct warn {
	char code[WARN_CODE_MAX];
	char msg[WARN_MSG_MAX];
};

struct warn_list {
	struct warn items[WARN_MAX];
	size_t count;
	size_t dropped; /* warn_add calls past WARN_MAX */
};

void warn_list_init(struct warn_list *w);

/* Append a warning (printf-style message). */
void warn_add(struct warn_list *w, const char *code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* True when a warning with this code is in the list. */
bool warn_has(const struct warn_list *w, const char *code);

#endif
