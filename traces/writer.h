/* SPDX-License-Identifier: Apache-2.0
 * writer: write sessions as a canonical agentcap-trace v1 file, plain or
 * gzip-compressed, all-or-nothing.
 *
 * The file appears under its name only on a successful trace_writer_close
 * (temporary file + rename, base/outfile.h); trace_writer_abort or a failed
 * close leaves any previous file untouched.  In-memory sessions hold only
 * hashes, so ids and contents are written as "#" + 16 hex digits, which the
 * reader takes as the hash itself: reading back what was written gives the
 * same sessions field by field (only `line` differs).  Sessions must come in
 * non-decreasing start time with distinct ids, as the reader requires; the
 * writer keeps one 8-byte hash per session written to check it.
 */
#ifndef TRACES_WRITER_H
#define TRACES_WRITER_H

#include <stdbool.h>
#include <stdint.h>

struct diag;
struct trace_session;
struct trace_writer;

/* Start writing `path` ("-" is standard output).  `gzip` compresses the
 * output; `source` (may be NULL) is recorded in the header.  0, DIAG_EIO or
 * DIAG_ENOMEM; on failure *out is NULL and nothing was created. */
int trace_writer_open(struct trace_writer **out, const char *path, bool gzip,
		      const char *source, struct diag *d);

/* Record a block size hint (tokens) in the header.  Only before the first
 * trace_writer_session; later calls are ignored. */
void trace_writer_set_block_tokens_hint(struct trace_writer *w, int64_t tokens);

/* Append one session.  DIAG_EINPUT when the session breaks the format's rules
 * (see trace_session_check), starts before the previous one, or repeats a
 * session id: nothing is written and the writer stays usable.  DIAG_EIO or
 * DIAG_ENOMEM: the writer has failed and can only be aborted or closed
 * (which then fails too). */
int trace_writer_session(struct trace_writer *w, const struct trace_session *s, struct diag *d);

/* Finish the file and move it into place; frees w in every case. */
int trace_writer_close(struct trace_writer *w, struct diag *d);

/* Drop the output and free w; accepts NULL. */
void trace_writer_abort(struct trace_writer *w);

/* A source of sessions in start order: 1 with a heap session in *out (the
 * caller frees it), 0 at the end, or a negative code. */
typedef int (*trace_source_fn)(void *ctx, struct trace_session **out, struct diag *d);

/* Write every session `next` yields to a new trace at path, atomically: on
 * any error nothing is left at path.  0 or the first negative code. */
int trace_writer_drain(const char *path, bool gzip, const char *source, trace_source_fn next,
		       void *ctx, struct diag *d);

#endif
