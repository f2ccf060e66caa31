/* SPDX-License-Identifier: Apache-2.0
 * outkind: names of the output kinds (see outkind.h). */
#include "base/outkind.h"

#include <string.h>

static const char *const names[OUT_KINDS] = { "unknown", "code", "structured", "prose" };

const char *out_kind_name(int kind)
{
	return kind >= 0 && kind < OUT_KINDS ? names[kind] : "?";
}

int out_kind_parse(const char *s)
{
	for (int i = 0; i < OUT_KINDS; i++)
		if (s && strcmp(s, names[i]) == 0)
			return i;
	return -1;
}
