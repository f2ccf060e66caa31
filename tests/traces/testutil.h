/* SPDX-License-Identifier: Apache-2.0
 * testutil: helpers shared by the traces/ tests: scratch files under the
 * build tree, fixture paths, and field-by-field session comparison.
 */
#ifndef TESTS_TRACES_TESTUTIL_H
#define TESTS_TRACES_TESTUTIL_H

#include <stdbool.h>
#include <stddef.h>

struct trace_session;

/* Path of fixture `name`: AC_SRC_DIR "/tests/fixtures/traces/" name. */
void testutil_fixture(char *out, size_t outsz, const char *name);

/* A scratch path under AC_BIN_DIR "/tests/traces/scratch/" (created). */
void testutil_scratch(char *out, size_t outsz, const char *name);

/* Write `len` bytes to path (replacing it); asserts on failure. */
void testutil_write(const char *path, const void *data, size_t len);
void testutil_write_str(const char *path, const char *text);

/* Everything but `line` (unless with_line) equal, segments included. */
bool testutil_session_equal(const struct trace_session *a, const struct trace_session *b,
		      bool with_line);

/* Read every session of a file into a heap array (*n of them); returns the
 * reader's final code (0 at a clean end). */
int testutil_read_all(const char *path, struct trace_session ***out, size_t *n, char *msg,
		size_t msgsz);
void testutil_free_all(struct trace_session **s, size_t n);

#endif
