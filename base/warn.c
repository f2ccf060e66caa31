/* SPDX-License-Identifier: Apache-2.0
 * warn: fixed-size list of report warnings (see warn.h). */
#include "base/warn.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void warn_list_init(struct warn_list *w)
{
	memset(w, 0, sizeof(*w));
}

void warn_add(struct warn_list *w, const char *code, const char *fmt, ...)
{
	if (w->count == WARN_MAX) {
		w->dropped++;
		return;
	}
	struct warn *x = &w->items[w->count++];
	snprintf(x->code, sizeof(x->code), "%s", code);
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(x->msg, sizeof(x->msg), fmt, ap);
	va_end(ap);
}

bool warn_has(const struct warn_list *w, const char *code)
{
	for (size_t i = 0; i < w->count; i++)
		if (strcmp(w->items[i].code, code) == 0)
			return true;
	return false;
}
