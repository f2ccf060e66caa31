/* SPDX-License-Identifier: Apache-2.0
 * fuzz_util: what the libFuzzer harnesses share: a private scratch folder
 * for the file-based APIs they drive (readers and importers take paths), and
 * the stats pass every harness runs on the sessions a reader accepts.
 *
 * libFuzzer calls LLVMFuzzerTestOneInput with no context argument, so the
 * scratch folder's name is the one piece of process-wide state here: set
 * once on first use, removed at exit.  Nothing else survives an input;
 * every harness frees all it allocates (leaks are reported as crashes).
 */
#ifndef FUZZ_FUZZ_UTIL_H
#define FUZZ_FUZZ_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "traces/reader.h"

/* Path of `name` in the scratch folder (valid until the next call). */
const char *fuzz_path(const char *name);

/* Write data to fuzz_path(name) and return that path; aborts if it cannot. */
const char *fuzz_write(const char *name, const uint8_t *data, size_t size);

/* Read `path` with the trace reader and run every accepted session through
 * traces/stats.h.  Aborts when an invariant breaks: a session the reader
 * returns fails trace_session_check, stats refuses a valid session, or a
 * reader that failed once does not keep failing the same way.  Returns the
 * reader's final code. */
int fuzz_read_trace(const char *path, enum trace_format fmt, bool skip_bad);

#endif
