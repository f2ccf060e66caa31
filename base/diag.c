/* SPDX-License-Identifier: Apache-2.0
 * diag: first-error-wins diagnostics (see diag.h). */
#include "base/diag.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void diag_init(struct diag *d)
{
	d->code = DIAG_OK;
	d->count = 0;
	d->msg[0] = '\0';
}

static int diag_vset(struct diag *d, int code, const char *prefix,
		     const char *fmt, va_list ap)
{
	d->count++;
	if (d->code != DIAG_OK)
		return code;
	d->code = code;
	size_t n = 0;
	if (prefix) {
		n = strlen(prefix);
		if (n >= sizeof(d->msg))
			n = sizeof(d->msg) - 1;
		memcpy(d->msg, prefix, n);
		d->msg[n] = '\0';
	}
	vsnprintf(d->msg + n, sizeof(d->msg) - n, fmt, ap);
	return code;
}

int diag_set(struct diag *d, int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	diag_vset(d, code, NULL, fmt, ap);
	va_end(ap);
	return code;
}

int diag_at(struct diag *d, int code, const char *path, long line, long col,
	    const char *fmt, ...)
{
	char prefix[512];
	if (line > 0 && col > 0)
		snprintf(prefix, sizeof(prefix), "%s:%ld:%ld: ", path, line, col);
	else if (line > 0)
		snprintf(prefix, sizeof(prefix), "%s:%ld: ", path, line);
	else
		snprintf(prefix, sizeof(prefix), "%s: ", path);
	va_list ap;
	va_start(ap, fmt);
	diag_vset(d, code, prefix, fmt, ap);
	va_end(ap);
	return code;
}

int diag_exit_status(int code)
{
	switch (code) {
	case DIAG_OK:
		return 0;
	case DIAG_EINPUT:
	case DIAG_EIO: /* a path the user gave cannot be read or written */
	case DIAG_ENOMEM: /* a resource limit: the run asked for more than there is */
		return 2;
	default:
		return 3;
	}
}
