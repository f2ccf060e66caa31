/* SPDX-License-Identifier: Apache-2.0
 * trace: the canonical in-memory form of a coding-agent trace.
 *
 * A trace is a stream of sessions.  A session is an ordered list of LLM calls
 * made by one agent loop; its first call starts at an absolute time, each
 * later call is issued `gap_s` after the previous call *completes* (closed
 * loop).  A request-level trace (Mooncake, Azure) is a stream of one-call
 * sessions replayed open loop.  docs/trace-format.md is the normative
 * description of the file format that maps onto these types.
 *
 * Prompts are content-addressed: an ordered list of segments, each a 64-bit
 * content hash and a token count.  Two prompts share KV cache exactly as far
 * as their segment lists agree (aligned down to the engine's block size).  A
 * call with `extends_prev` set has the prompt "previous call's prompt +
 * previous call's output + segs", so long sessions stay O(n) to store.
 *
 * Ownership: a struct trace_session and everything it points to is one heap
 * object returned by the reader and released with trace_session_free.
 */
#ifndef TRACES_TRACE_H
#define TRACES_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum trace_tool { TRACE_TOOL_NONE = 0, TRACE_TOOL_OK, TRACE_TOOL_FAIL };
enum trace_accept { TRACE_ACCEPT_UNKNOWN = 0, TRACE_ACCEPT_TRUE, TRACE_ACCEPT_FALSE };
/* A call's `priority` key: none, a number (prio_value), or a class name
 * the scenario maps to a number (docs/priorities.md). */
enum trace_prio {
	TRACE_PRIO_NONE = 0,
	TRACE_PRIO_VALUE,
	TRACE_PRIO_MAIN,
	TRACE_PRIO_SUBAGENT,
	TRACE_PRIO_BATCH,
};
/* Priority numbers a trace may give: 0 (first served) .. TRACE_PRIO_MAX. */
#define TRACE_PRIO_MAX 15

struct trace_seg {
	uint64_t content;  /* hash of the segment's content id */
	int64_t tokens;    /* > 0 */
};

struct trace_call {
	int64_t seq;           /* strictly increasing within a session */
	uint64_t task;         /* hash of the task id; 0 if none */
	double gap_s;          /* think/tool time before this call (0 for the first) */
	bool extends_prev;     /* prompt = prev prompt + prev output + segs */
	struct trace_seg *segs;
	size_t n_segs;
	int64_t prompt_tokens; /* total prompt tokens, prefix included */
	int64_t output_tokens; /* >= 1 after reading (0 in a file is read as 1) */
	enum trace_tool tool;  /* outcome of the tool call that follows */
	int64_t retry_of;      /* seq of the call this one retries, or -1 */
	enum trace_accept accepted; /* meaningful on a task's last call */
	int32_t kind;          /* enum out_kind of its output (base/outkind.h):
				  "kind" in the file, OUT_KIND_UNKNOWN without */
	enum trace_prio prio;  /* "priority" in the file; TRACE_PRIO_NONE without */
	int32_t prio_value;    /* with TRACE_PRIO_VALUE: 0..TRACE_PRIO_MAX */
	long line;             /* file line of the call, for messages; 0 if unknown */
	/* Optional text of each segment (text-bearing traces only): NULL, or
	 * n_segs entries, each NULL (no text) or a NUL-terminated UTF-8 string.
	 * The writer emits it as the segment's {"text": ...}; nothing else uses
	 * it yet.  trace_session_clone copies the strings into its block. */
	char **seg_text;
};

struct trace_session {
	uint64_t id;           /* hash of the session id (unique per file) */
	uint64_t engineer;     /* hash of the engineer id; 0 if none */
	uint64_t parent;       /* hash of the parent session (subagents); 0 if none */
	uint64_t team;         /* hash of the team id ("team"); 0 if none */
	double t_s;            /* absolute start time of the first call, seconds */
	struct trace_call *calls;
	size_t n_calls;        /* >= 1 */
	long line;             /* file line of the session's first call */
	bool open_loop;        /* a request-level call (no `session` in the file,
				  a Mooncake line, or "open_loop": true): replay
				  at t_s whatever the server does; n_calls == 1 */
};

/* Limits of the format (docs/trace-format.md, "Limits"). */
#define TRACE_MAX_TOKENS 1000000000LL          /* one segment or one output */
#define TRACE_MAX_PROMPT_TOKENS (1LL << 40)    /* one prompt, prefix included */
#define TRACE_MAX_INT_ID (1LL << 53)           /* |integer id| (exact in a double) */
#define TRACE_MAX_SECONDS 1e9                   /* t and gap: int64 ns stays far off */

/* Frees a session and everything it points to; accepts NULL.  Only for
 * sessions that are one heap block (from the reader or trace_session_clone). */
void trace_session_free(struct trace_session *s);

/* Content hash of the output of call `seq` of session `session_id`: the
 * segment that a following extends_prev call inherits. */
uint64_t trace_output_content(uint64_t session_id, int64_t seq);

/* --- Identity rules shared by every reader, writer and importer --------- */

/* If s is exactly "#" followed by 16 hex digits (either case), stores the
 * value in *out and returns true.  Such a string names a hash directly: the
 * writer emits ids this way so that read(write(x)) == x. */
bool trace_hex_id(const char *s, uint64_t *out);

/* Hash of a session, engineer, task or parent id string ("#hex" rule
 * applies).  Never 0 for an ordinary string; "#0000000000000000" gives 0. */
uint64_t trace_id_hash(const char *id);

/* Session id of a call without a `session` (a one-call, open-loop session)
 * read from line `line`; also the session id of Mooncake line `line`. */
uint64_t trace_anon_session_id(long line);

/* Segment content of a string content id with `tokens` tokens: distinct token
 * counts give distinct contents.  A "#hex" id is the content hash itself and
 * ignores `tokens`. */
uint64_t trace_content_str(const char *id, int64_t tokens);

/* Segment content of an integer content id (Mooncake hash ids use this too).
 * Never equal to the string form of the same digits. */
uint64_t trace_content_int(int64_t id, int64_t tokens);

/* --- Whole sessions ------------------------------------------------------- */

/* Copy a session whose arrays live anywhere into one heap block that
 * trace_session_free releases.  0 or DIAG_ENOMEM (no diag: the caller knows
 * what it was copying). */
int trace_session_clone(struct trace_session **out, const struct trace_session *src);

/* Invariant check for asserts and tests: n_calls >= 1 (== 1 if open_loop),
 * seq >= 0 and strictly increasing, first call neither extends nor has a gap, tokens in range,
 * prompt_tokens consistent with the segments and the extends chain,
 * output_tokens >= 1, retry_of names an earlier call or is -1. */
bool trace_session_check(const struct trace_session *s);

struct vec;

/* Append the full prompt of call `i` (extends chain expanded: inherited
 * segments, the previous outputs as trace_output_content segments, then the
 * call's own) to `out`, a vec of struct trace_seg.  O(length of the chain).
 * 0 or DIAG_ENOMEM. */
int trace_session_prompt(const struct trace_session *s, size_t i, struct vec *out);

#endif
