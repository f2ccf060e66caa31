/* SPDX-License-Identifier: Apache-2.0
 * clause: a list of clauses in a fixed buffer ("TP1/PP1: ...; TP2/PP1:
 * ..."), each appended whole or not at all, so a message is never cut in
 * the middle of a word.
 *
 * A clause that does not fit is counted, not written; the list then ends
 * with " (and N more)", for which room is kept.  Nothing here allocates.
 */
#ifndef BASE_CLAUSE_H
#define BASE_CLAUSE_H

#include <stddef.h>

struct clause_list {
	char *buf;      /* NUL-terminated; the caller's */
	size_t cap;     /* bytes of buf, >= CLAUSE_MIN_CAP */
	size_t len;     /* bytes of clauses written, the tail not counted */
	int dropped;    /* clauses that did not fit */
};

/* Room kept for the " (and N more)" tail. */
#define CLAUSE_TAIL 24
#define CLAUSE_MIN_CAP (CLAUSE_TAIL + 2)

/* A list writing into buf[0..cap) from its start (buf emptied). */
void clause_init(struct clause_list *l, char *buf, size_t cap);

/* A list continuing what buf already holds (dropped 0). */
void clause_resume(struct clause_list *l, char *buf, size_t cap);

/* Append "; " (unless the list is empty) and the formatted clause, whole,
 * or count it as dropped; the tail is rewritten after every drop. */
void clause_add(struct clause_list *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
