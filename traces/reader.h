/* SPDX-License-Identifier: Apache-2.0
 * reader: stream sessions out of a canonical (agentcap-trace v1) or Mooncake
 * JSON Lines file, plain or gzip-compressed.
 *
 * The reader holds one session being assembled plus one parsed line of
 * look-ahead (a session is complete only when the next session's first line
 * or the end of the file is seen), so memory grows with the largest session,
 * never with the file.  Besides that it keeps one 8-byte hash per session
 * already returned, to reject a session that reappears after another one.
 * Every line is checked as soon as it is read; the first bad line stops the
 * reader with "path:line:col: what (expected ...)" unless skip_bad is set,
 * in which case bad lines are counted and dropped.  docs/trace-format.md is
 * the normative description of both formats.
 */
#ifndef TRACES_READER_H
#define TRACES_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct diag;
struct trace_session;

enum trace_format { TRACE_FMT_AUTO, TRACE_FMT_CANONICAL, TRACE_FMT_MOONCAKE };

/* Size limits; a line or session past one is an input error naming the line. */
struct trace_reader_limits {
	size_t max_line_bytes;        /* one line, newline excluded */
	size_t max_segs_per_call;     /* prompt segments (Mooncake: hash_ids) */
	size_t max_calls_per_session;
	size_t max_segs_per_session;  /* sum over the session's calls */
};

#define TRACE_READER_MAX_LINE_BYTES ((size_t)64 << 20)
/* With skip_bad, how far the reader looks for the end of a line too long to
 * keep before it gives up on the file. */
#define TRACE_READER_MAX_DISCARD_BYTES ((size_t)1 << 30)
#define TRACE_READER_MAX_SEGS_PER_CALL ((size_t)1 << 20)
#define TRACE_READER_MAX_CALLS_PER_SESSION ((size_t)1 << 20)
#define TRACE_READER_MAX_SEGS_PER_SESSION ((size_t)1 << 24)

/* Mooncake hash ids name blocks of this many tokens. */
#define TRACE_MOONCAKE_BLOCK_TOKENS 512

struct trace_reader;

/* Open `path` ("-" is standard input) and read its first line to check (or,
 * with TRACE_FMT_AUTO, decide) the format: canonical when the first line is
 * the header object, Mooncake when it is an object with `hash_ids` or
 * `input_length`.  gzip is recognised by its magic bytes, not by the name.
 * 0, DIAG_EINPUT (not a trace of an accepted format), DIAG_EIO or
 * DIAG_ENOMEM.  On failure *out is NULL. */
int trace_reader_open(struct trace_reader **out, const char *path,
		      enum trace_format fmt, struct diag *d);

/* Next session: returns 1 and a heap session in *out (free it with
 * trace_session_free; the reader keeps no pointer to it), 0 at the end of
 * the input, or a negative DIAG code with *out NULL.  After an error every
 * later call returns the same code and message. */
int trace_reader_next(struct trace_reader *r, struct trace_session **out, struct diag *d);

/* Count and drop malformed lines instead of failing (default: fail).
 * Errors that are not about one line (I/O, truncated gzip, out of memory,
 * a bad header) still stop the reader. */
void trace_reader_set_skip_bad(struct trace_reader *r, bool skip_bad);

/* Lines dropped so far by skip_bad, and the message of the first one (NULL
 * if none; valid until trace_reader_free). */
long trace_reader_skipped(const struct trace_reader *r);
const char *trace_reader_first_skipped(const struct trace_reader *r);

/* Replace the limits (defaults: the TRACE_READER_MAX_* above).  Applies to
 * lines read from now on; the first line was read by trace_reader_open under
 * the defaults. */
void trace_reader_set_limits(struct trace_reader *r, const struct trace_reader_limits *lim);

/* The format in use (never TRACE_FMT_AUTO), whether the input was gzip. */
enum trace_format trace_reader_format(const struct trace_reader *r);
bool trace_reader_gzip(const struct trace_reader *r);

/* Header facts: the block size hint in tokens (0 if the header has none;
 * 512 for Mooncake) and the `source` string (NULL if none; "mooncake" for
 * Mooncake).  The string lives until trace_reader_free. */
int64_t trace_reader_block_tokens_hint(const struct trace_reader *r);
const char *trace_reader_source(const struct trace_reader *r);

/* The path given to open (valid until free), and the number of the last line
 * read (1-based; the look-ahead line, so it can be past the last session
 * returned). */
const char *trace_reader_path(const struct trace_reader *r);
long trace_reader_line(const struct trace_reader *r);

/* Keep each segment's {"text": ...} in trace_call.seg_text (default: the
 * text is checked and dropped).  A session gets seg_text only when all its
 * segments come from canonical lines; a segment without text is NULL. */
void trace_reader_set_keep_text(struct trace_reader *r, bool keep_text);

/* Close the file and free everything; accepts NULL. */
void trace_reader_free(struct trace_reader *r);

#endif
