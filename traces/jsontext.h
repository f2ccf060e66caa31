/* SPDX-License-Identifier: Apache-2.0
 * jsontext: parse one JSON text the way every reader and importer must, so
 * that bad input, embedded NULs and running out of memory are told apart.
 *
 * cJSON keeps strings NUL-terminated: a "\u0000" escape would silently cut an
 * id, a content id or a text short (two different ids would become one), so a
 * text holding one is refused, as is a raw NUL byte.  So are bytes that are
 * not UTF-8, which cJSON would pass into ids, texts and our own output.  cJSON also returns NULL
 * both for a syntax error and for a failed allocation; the allocator's errno
 * (ENOMEM) tells the second apart, so a valid line that does not fit in memory
 * is reported as out of memory, never as invalid JSON that --skip-bad would
 * drop.
 */
#ifndef TRACES_JSONTEXT_H
#define TRACES_JSONTEXT_H

#include <stddef.h>

struct cJSON;

enum jsontext_rc {
	JSONTEXT_OK = 0,
	JSONTEXT_SYNTAX,   /* invalid JSON; *at is where the parser stopped */
	JSONTEXT_NUL,      /* a NUL byte or a \u0000 escape at *at */
	JSONTEXT_UTF8,     /* bytes at *at that are not UTF-8 (JSON text is UTF-8;
			      passed through they would make our output invalid) */
	JSONTEXT_NOMEM,    /* the text may be valid but did not fit in memory */
};

/* Parse s[0..n) (s[n] must be readable and '\0') as one JSON value with
 * nothing but blanks after it.  On JSONTEXT_OK *root is the tree (free with
 * cJSON_Delete); otherwise *root is NULL and *at (for SYNTAX and NUL) is a
 * 0-based byte offset into s. */
enum jsontext_rc jsontext_parse(const char *s, size_t n, struct cJSON **root, size_t *at);

/* Offset of the first byte of s[0..n) that does not start a well-formed UTF-8
 * sequence (RFC 3629: no overlong forms, no surrogates, at most U+10FFFF),
 * or n if all of it is UTF-8.  O(n), no allocation. */
size_t jsontext_find_bad_utf8(const char *s, size_t n);

/* The first member of object obj whose key an earlier member already has
 * (cJSON keeps both, and a reader that walks the members lets the last
 * win silently), or NULL.  O(members^2): for the small objects of scenario
 * and grid files. */
const struct cJSON *jsontext_repeated_key(const struct cJSON *obj);

/* Offset of the first NUL byte or "\u0000" escape in s[0..n), or n if none.
 * Backslash pairs are skipped, so "\\u0000" (a backslash, then "u0000") is
 * not one.  O(n), no allocation. */
size_t jsontext_find_nul(const char *s, size_t n);

#endif
