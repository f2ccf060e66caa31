/* SPDX-License-Identifier: Apache-2.0
 * keys: dotted key-path tables (see keys.h). */
#include "base/keys.h"

#include <stdio.h>
#include <string.h>

static const char *key_path(const void *table, size_t stride, size_t i)
{
	const char *const *p = (const void *)((const char *)table + i * stride);
	return *p;
}

const void *keys_find(const void *table, size_t n, size_t stride, const char *path)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(key_path(table, stride, i), path) == 0)
			return (const char *)table + i * stride;
	return NULL;
}

void keys_children(const void *table, size_t n, size_t stride, const char *prefix, char *out,
		   size_t cap)
{
	size_t plen = strlen(prefix), len = 0;
	out[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		const char *p = key_path(table, stride, i);
		if (plen && (strncmp(p, prefix, plen) != 0 || p[plen] != '.'))
			continue;
		const char *rest = plen ? p + plen + 1 : p;
		if (strchr(rest, '.'))
			continue;
		int w = snprintf(out + len, cap - len, "%s%s", len ? ", " : "", rest);
		if (w < 0 || (size_t)w >= cap - len) {
			out[len] = '\0'; /* no half names */
			break;
		}
		len += (size_t)w;
	}
}
