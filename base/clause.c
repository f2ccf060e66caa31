/* SPDX-License-Identifier: Apache-2.0
 * clause: clauses appended whole or counted (see clause.h). */
#include "base/clause.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void clause_init(struct clause_list *l, char *buf, size_t cap)
{
	l->buf = buf;
	l->cap = cap;
	l->len = 0;
	l->dropped = 0;
	if (cap)
		buf[0] = '\0';
}

void clause_resume(struct clause_list *l, char *buf, size_t cap)
{
	l->buf = buf;
	l->cap = cap;
	l->len = cap ? strnlen(buf, cap - 1) : 0;
	l->dropped = 0;
}

void clause_add(struct clause_list *l, const char *fmt, ...)
{
	if (l->cap < CLAUSE_MIN_CAP)
		return;
	char clause[4096];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(clause, sizeof(clause), fmt, ap);
	va_end(ap);
	size_t at = l->len;
	size_t need = (at ? 2 : 0) + (n > 0 ? (size_t)n : 0);
	if (n >= 0 && (size_t)n < sizeof(clause) && at + need + CLAUSE_TAIL < l->cap) {
		snprintf(l->buf + at, l->cap - at, "%s%s", at ? "; " : "", clause);
		at += need;
		l->len = at;
	} else {
		l->dropped++;
	}
	if (l->dropped)
		snprintf(l->buf + at, l->cap - at, " (and %d more)", l->dropped);
}
