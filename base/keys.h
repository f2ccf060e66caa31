/* SPDX-License-Identifier: Apache-2.0
 * keys: look-ups in a schema table of dotted key paths ("engine.block_size").
 *
 * A table is an array of structs of `stride` bytes whose FIRST member is the
 * `const char *` dotted path; scenario and profile readers describe their
 * keys that way and share these look-ups and the "expected one of" lists of
 * their error messages.
 */
#ifndef BASE_KEYS_H
#define BASE_KEYS_H

#include <stddef.h>

/* The entry whose path is `path`, or NULL. */
const void *keys_find(const void *table, size_t n, size_t stride, const char *path);

/* "a, b, c": the names of the direct children of `prefix` ("" = the top
 * level), in table order, truncated to fit cap. */
void keys_children(const void *table, size_t n, size_t stride, const char *prefix, char *out,
		   size_t cap);

#endif
