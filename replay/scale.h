/* SPDX-License-Identifier: Apache-2.0
 * scale: a team of N engineers made from a recorded trace by resampling whole
 * engineer-days, so that a pilot of a few engineers can size a rollout to
 * many (`agentcap replay --engineers N`).
 *
 * An engineer-day is (engineer id, day of the session's start) in the
 * engineer's own time zone: their day begins in the middle of the longest
 * quiet spell of their days (the 5-minute bins of the day in which none of
 * their sessions starts, taken circularly), which for a person is the
 * night; an engineer without a quiet spell of 4 hours (a request-level
 * trace served around the clock) keeps UTC days.  Each engineer's days are
 * counted from their own first day, so a one-day team spread over time
 * zones is one day even where its working hours cross 00:00 UTC, and a
 * team scaled to its own size spans as many days as it did.  Sessions
 * without an engineer id (request-level traces) all belong to one
 * anonymous engineer.  Each engineer contributes every day from their first
 * to their last active day, idle days included, so the load per engineer
 * stays what the pilot recorded.
 *
 * For every target day d (0..days-1) the N target engineers draw engineer-
 * days from the pool of days on the same weekday (d mod 7, when the source
 * spans at least a week; else from all days), without replacement until the
 * pool is used up, then again from a fresh shuffle.  A drawn engineer-day
 * keeps its sessions' times of day (optionally all shifted by one uniform
 * jitter, kept within the day) and moves to target day d of the engineer
 * it came from, so time zones stay as recorded.  All draws come
 * from one gsl_rng_mt19937 seeded with `seed`: same trace, same options, same
 * sessions out.
 *
 * Identity.  A copy gets new session, parent and task ids (per target
 * engineer and day), and engineer id "engineer j".  Prompt contents that
 * more than one source engineer used (a shared system prompt, tool list) keep
 * their identity, so the whole team shares their KV cache; contents of one
 * engineer are salted per (target engineer, source engineer), so two copies
 * of one pilot engineer never share cache they would not share in reality.
 *
 * Streaming.  The first pass reads the source once, writes each session to
 * an anonymous temporary file (tmpfile) and keeps an index: 40 bytes per
 * session, 80 per engineer, plus one entry per distinct engineer-day and per distinct prompt
 * content.  scale_next then yields the new team's sessions in start order,
 * holding one target day's index entries at a time.
 */
#ifndef REPLAY_SCALE_H
#define REPLAY_SCALE_H

#include <stdint.h>

struct diag;
struct trace_reader;
struct trace_session;

struct scale_opts {
	int64_t engineers;   /* N, 1..1000000 */
	int64_t days;        /* target days; 0: as many as the source spans */
	double jitter_s;     /* max shift of an engineer-day, 0..43200 s */
	uint64_t seed;
};

struct scale_info {
	int64_t source_sessions;
	int64_t source_engineers;     /* the anonymous engineer counts as one */
	int64_t named_engineers;      /* of them, those the trace names */
	int64_t source_days;          /* most days from an engineer's first to
					 last day with a session, own days */
	int64_t source_engineer_days; /* pool size: active spans, idle days included */
	int64_t active_engineer_days; /* of them with at least one session */
	int64_t days;                 /* target days */
	int64_t engineers;            /* target engineers */
	int64_t shared_contents;      /* prompt contents used by several engineers */
	int64_t sessions_out;         /* returned by scale_next so far */
};

struct scale;

/* Read the whole of `r` (borrowed; left at its end) and build the index.
 * 0, DIAG_EINPUT (options out of range, or the reader's input error),
 * DIAG_EIO (the temporary file), DIAG_ENOMEM.  On failure *out is NULL. */
int scale_open(struct scale **out, struct trace_reader *r, const struct scale_opts *o,
	       struct diag *d);

/* Next session of the scaled team, in non-decreasing start time: 1 and a
 * heap session (free it with trace_session_free), 0 at the end, or a
 * negative DIAG code. */
int scale_next(struct scale *sc, struct trace_session **out, struct diag *d);

void scale_get_info(const struct scale *sc, struct scale_info *out);

/* Close the temporary file and free everything; accepts NULL. */
void scale_free(struct scale *sc);

#endif
