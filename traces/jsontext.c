/* SPDX-License-Identifier: Apache-2.0
 * jsontext: NUL-safe, out-of-memory-aware JSON parsing (see jsontext.h). */
#include "traces/jsontext.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <string.h>

size_t jsontext_find_nul(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '\0')
			return i;
		if (s[i] != '\\' || i + 1 >= n)
			continue;
		if (s[i + 1] == 'u' && i + 5 < n && memcmp(s + i + 2, "0000", 4) == 0)
			return i;
		i++; /* the escaped character, whatever it is */
	}
	return n;
}

size_t jsontext_find_bad_utf8(const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0;
	while (i < n) {
		unsigned char c = u[i];
		if (c < 0x80) {
			i++;
			continue;
		}
		size_t len;
		unsigned char lo = 0x80, hi = 0xbf; /* range of the second byte */
		if (c >= 0xc2 && c <= 0xdf) {
			len = 2;
		} else if (c >= 0xe0 && c <= 0xef) {
			len = 3;
			if (c == 0xe0)
				lo = 0xa0; /* overlong */
			else if (c == 0xed)
				hi = 0x9f; /* surrogates */
		} else if (c >= 0xf0 && c <= 0xf4) {
			len = 4;
			if (c == 0xf0)
				lo = 0x90; /* overlong */
			else if (c == 0xf4)
				hi = 0x8f; /* past U+10FFFF */
		} else {
			return i;
		}
		if (n - i < len || u[i + 1] < lo || u[i + 1] > hi)
			return i;
		for (size_t k = 2; k < len; k++)
			if ((u[i + k] & 0xc0) != 0x80)
				return i;
		i += len;
	}
	return n;
}

enum jsontext_rc jsontext_parse(const char *s, size_t n, struct cJSON **root, size_t *at)
{
	*root = NULL;
	*at = 0;
	size_t nul = jsontext_find_nul(s, n);
	if (nul < n) {
		*at = nul;
		return JSONTEXT_NUL;
	}
	size_t bad = jsontext_find_bad_utf8(s, n);
	if (bad < n) {
		*at = bad;
		return JSONTEXT_UTF8;
	}
	const char *end = NULL;
	/* A syntax error leaves errno alone; a failed malloc sets ENOMEM. */
	int saved = errno;
	errno = 0;
	cJSON *r = cJSON_ParseWithLengthOpts(s, n + 1, &end, 1);
	int err = errno;
	errno = saved;
	if (r) {
		*root = r;
		return JSONTEXT_OK;
	}
	if (err == ENOMEM)
		return JSONTEXT_NOMEM;
	*at = end && end >= s && end <= s + n ? (size_t)(end - s) : 0;
	return JSONTEXT_SYNTAX;
}

const cJSON *jsontext_repeated_key(const cJSON *obj)
{
	for (const cJSON *c = obj ? obj->child : NULL; c; c = c->next)
		for (const cJSON *e = obj->child; e != c; e = e->next)
			if (c->string && e->string && strcmp(c->string, e->string) == 0)
				return c;
	return NULL;
}
