/* SPDX-License-Identifier: Apache-2.0
 * import: turn agent logs and public request traces into a canonical
 * agentcap trace (docs/importers.md says how every field maps).
 *
 * One entry point serves every format: it reads the inputs, assembles
 * sessions, sorts them by start time (buffering what it must; a single
 * request-level file is streamed), rebases absolute clock times so the
 * earliest call starts at t = 0, and writes the result all-or-nothing
 * through traces/writer.h.  Without keep_text no prompt or output text,
 * file path or tool input reaches the output, and session, engineer and
 * task ids are salted hashes.  A malformed record stops the import with
 * "path:line[:col]: what (expected ...)" and DIAG_EINPUT, or, with
 * skip_bad, is counted and dropped.
 */
#ifndef TRACES_IMPORT_H
#define TRACES_IMPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct diag;
struct rules;

struct import_opts {
	bool keep_text;   /* keep segment text (openai-log) and unsalted ids */
	bool skip_bad;    /* count and drop malformed records instead of failing */
	const char *salt; /* salt of the id hashes; NULL: a fixed default */
	/* Who is who, for formats whose logs name no engineer (claude-code,
	 * codex, tracelab, weka): engineers[i] names the engineer of every
	 * session read from paths[i] (NULL array or entry: none), and with
	 * engineer_dirs every path must be a folder holding one folder per
	 * engineer, whose name is the engineer's.  Engineer ids are hashed like
	 * every other id.  Request-level formats refuse both. */
	const char *const *engineers;
	bool engineer_dirs;
	size_t max_calls_per_session; /* 0: TRACE_READER_MAX_CALLS_PER_SESSION; importers
				       that collect records first check it as they read */
	struct rules *rules; /* borrowed; volatile-span rules applied to each
				session before it is written (traces/rules.h:
				pinned spans get their constant content id);
				needs keep_text */
};

#define IMPORT_MSG_MAX 1024

struct import_stats {
	int64_t records;        /* input records read (lines, CSV rows, requests) */
	int64_t calls;          /* LLM calls written */
	int64_t sessions;       /* sessions written */
	int64_t skipped;        /* malformed records dropped (skip_bad) */
	int64_t files;          /* input files read */
	int64_t tasks;          /* tasks started (a new task id on a call) */
	int64_t engineers;      /* distinct engineers named (engineers, engineer_dirs) */
	int64_t prompt_tokens;  /* sum of prompt tokens, prefix included */
	int64_t reused_tokens;  /* sum of the recorded cached/reused prefix tokens */
	int64_t output_tokens;  /* sum of output tokens as written (>= 1 each) */
	int64_t tool_fails;     /* calls whose tool outcome is "fail" */
	int64_t failed_requests; /* request-level rows that failed (BurstGPT: 0 response tokens) */
	int64_t estimated;      /* calls with a token count estimated from text */
	double gap_s;           /* sum of the gaps written */
	int64_t rules_pinned;   /* segments a pin rule rewrote (rules) */
	int64_t rules_volatile; /* segments a volatile rule marked (rules) */
	char first_skipped[IMPORT_MSG_MAX]; /* message of the first dropped record, "" if none */
};

/* Import `n` input paths (files or, for claude-code/codex, folders) of
 * `format` into a canonical trace at out_path (gzip if out_path ends in
 * .gz; "-" is standard output), atomically (temp + rename).  Inputs may be
 * gzip-compressed.  `o` may be NULL (all defaults); `st` is filled (may be
 * NULL).  0, or DIAG_EINPUT (unknown format, bad input), DIAG_EIO,
 * DIAG_ENOMEM; on failure no output file is created or replaced. */
int import_files(const char *format, const char *const *paths, size_t n,
		 const struct import_opts *o, const char *out_path,
		 struct import_stats *st, struct diag *d);

/* The format names import_files accepts, NULL-terminated. */
const char *const *import_formats(void);

/* One line describing format `name` (for --help), or NULL if unknown. */
const char *import_format_summary(const char *name);

#endif
