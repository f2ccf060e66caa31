/* SPDX-License-Identifier: Apache-2.0
 * stats: what a trace contains, measured in one streaming pass, so a user can
 * check a trace before trusting a replay of it (`agentcap stats`).
 *
 * Counts (calls, sessions, tasks, engineers), exact token distributions per
 * call (input, new, output), tool failures and retries, think/tool gaps, the
 * concurrency of overlapping calls, and the token-weighted prefix-cache hit
 * rate with an unbounded cache and as a curve over cache capacity.
 *
 * Order of calls.  A closed-loop session's later calls have no recorded time
 * of their own, only a gap after the previous call's completion.  stats
 * orders calls by their recorded times with zero service time: a session's
 * first call at `t`, each later call at the previous call's time + `gap`.
 * At equal times a session's first call goes before later calls of sessions
 * read earlier (as replay, which reads a session due at an instant before
 * it dispatches the events of that instant); later calls due at the same
 * instant go in the order they were scheduled.
 *
 * Prefix hits use the simulator's rules (traces/prompt.h block hashes of
 * prompt + output, `block_size` tokens per block): a call reuses the longest
 * leading run of its prompt blocks that any earlier call had, whole blocks
 * only and never the whole prompt (at most floor((P-1)/B) blocks).  After a
 * call, its prompt and output blocks are cached: floor((P+O-1)/B) of them,
 * as the engine computes the KV of every token but the last.
 *
 * The capacity curve is an LRU cache of whole blocks: a call looks its prefix
 * up, then touches all its blocks with its first block most recent (the
 * engine frees a request's blocks tail first).  One pass gives the hit rate
 * at every capacity at once (Mattson's stack distances, kept in a Fenwick
 * tree: O(log U) per block for U distinct blocks, memory O(U)).  The engine
 * also spends blocks on each call's partial last block and on calls in
 * flight, so it needs slightly more than the curve's capacity for the same
 * hit rate.  docs/stats.md states every definition.
 *
 * Sampled curve (SHARDS, Waldspurger et al., FAST'15, with its fixed-size
 * variant).  The exact curve needs every distinct block in memory; a
 * 300-engineer week has hundreds of millions.  The sampled curve runs the
 * same LRU analysis on the blocks whose hash falls below a threshold T
 * (spatial sampling: a block is in or out for the whole trace, so its
 * reuse is seen whole), rate R = T / 2^24.  A sampled block's stack
 * distance among sampled blocks d' estimates its distance d' / R among all
 * blocks, and each sampled reference counts for 1 / R blocks.  At most
 * sample_blocks blocks are kept: past that, T drops to the largest value
 * held and the blocks at or above it leave the sample (fixed-size SHARDS),
 * so memory is bounded whatever the trace.  The estimate is scaled so that
 * the curve ends at the exact unbounded hits, which the segment trie
 * counts beside it.  Its error against the exact curve is measured in the
 * tests (within 1 point of hit rate on a synthetic team) and by
 * bench/bench_stats --curve-error.  A call costs O(its sampled blocks x
 * log) besides hashing its new blocks.
 *
 * The mode (stats_opts.curve): exact, sampled, or auto, the default: exact
 * until the curve would track more than STATS_AUTO_EXACT_BLOCKS blocks,
 * when stats_read starts the file again with the sampled curve (a trace on
 * standard input cannot be read twice: the limit is then an error, as in
 * exact mode; stats_add alone never restarts).
 *
 * Without the curve (no_curve) the unbounded figures come from a trie of
 * segments (traces/segtrie.h) and no block hash is made: two calls share KV
 * exactly as far as their segment sequences agree, so a call reuses
 * floor(shared / B) blocks of the leading tokens earlier calls computed (at
 * most floor((P-1)/B)), and an `extends` call walks only its new segments.
 * Memory O(distinct segment occurrences) instead of O(distinct blocks).
 * The figures are the same as with the curve (tests/traces/test_stats_trie.c).
 * The curve needs every block of every call (O(log U) each).
 *
 * Concurrency of overlapping calls uses a second timeline with service
 * times: a call is in flight for output_tokens / decode_tokens_per_s seconds
 * from its start, and a session's later call starts `gap` after the end of
 * the one before (canonical and Mooncake traces record no durations).
 *
 * Turns and their overlap, on that timeline.  A turn is one task of a root
 * session (a run of its calls with one task id) together with the calls of
 * the subagents it spawned: sessions that name the root, directly or through
 * other subagents, in parent_session and carry the same task id.  Its overlap
 * concurrency is the sum of its call durations / the length of the union of
 * its call intervals (1 when nothing overlaps); the distribution is taken
 * over the turns whose value exceeds 1 + 1e-9.  Interval ends are computed
 * in double seconds as t, then previous end + gap, so that a subagent that
 * a generator starts at the end of its parent's call starts exactly there.
 * A turn is open while some session is in it (the root from the start of
 * its first call of the task until it starts a call of another task or its
 * last call ends; a subagent likewise) and is closed when the last one
 * leaves; a subagent that starts after its turn closed opens a new turn.  Open-loop calls belong to
 * no turn.  Calls reach the timeline in start order, so each open turn is
 * O(1): the sum of durations, the union's closed length and its last piece.
 *
 * Memory: O(distinct blocks (segments with no_curve) + distinct token counts + sessions in flight +
 * open turns), plus one map entry per subagent session (its root, for
 * subagents of subagents and late ones) and 8 bytes per overlapping turn
 * (exact percentiles); never O(calls).
 */
#ifndef TRACES_STATS_H
#define TRACES_STATS_H

#include "traces/reader.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct diag;
struct trace_session;

enum stats_curve_mode {
	STATS_CURVE_AUTO = 0,        /* exact while small, else sampled (see above) */
	STATS_CURVE_EXACT,
	STATS_CURVE_SAMPLED,
};

struct stats_opts {
	int64_t block_size;          /* tokens per KV block, >= 1 (engine default 16) */
	double decode_tokens_per_s;  /* assumed decode rate for overlap concurrency, > 0 */
	bool no_curve;               /* skip the capacity curve (see below) */
	int64_t max_curve_blocks;    /* blocks the exact curve may track, and the
					sampled one may hash in one call; 0: the default */
	enum stats_curve_mode curve;
	int64_t sample_blocks;       /* sampled curve: blocks kept, >= 16; 0: the default */
	int64_t context_tokens;      /* a model's context: count the calls whose
					prompt + output exceed it (0 = none) */
};

#define STATS_DEFAULT_BLOCK_SIZE 16
/* The capacity curve keeps every distinct block's hash (about 24 bytes a
 * block in all): 2^25 blocks bound it near 800 MB, 5.7 times what the
 * bundled Mooncake conversation trace needs at 16-token blocks.  A call that
 * would take the curve past it is refused before its blocks are hashed
 * (DIAG_EINPUT, naming its line); no_curve needs memory per segment instead. */
#define STATS_DEFAULT_MAX_CURVE_BLOCKS ((int64_t)1 << 25)
/* auto: past this many distinct blocks (about 200 MB) the curve is sampled */
#define STATS_AUTO_EXACT_BLOCKS ((int64_t)1 << 23)
/* The sampled curve keeps this many blocks (about 100 bytes each). */
#define STATS_DEFAULT_SAMPLE_BLOCKS ((int64_t)1 << 18)
#define STATS_DEFAULT_DECODE_TOKENS_PER_S 50.0

/* Summary of one exactly counted distribution.  Percentiles interpolate
 * linearly between the two nearest ranks (the median of an even count is
 * the mean of the middle two, as numpy's default).  All 0 when n == 0. */
struct stats_dist {
	int64_t n;
	double min, max, mean;
	double p50, p90, p99;
};

struct stats_summary {
	int64_t block_size;
	double decode_tokens_per_s;

	int64_t calls;
	int64_t sessions;            /* as read, one-call open-loop sessions included */
	int64_t open_loop_calls;     /* request-level calls (no session) */
	int64_t tasks;               /* runs of calls with one task id in closed-loop root
					sessions (the one definition synth and replay use) */
	int64_t subagent_task_runs;  /* such runs in subagent sessions: part of their
					parent's task, not counted as tasks */
	int64_t tasks_accepted, tasks_rejected; /* by the task's last call; the rest unknown */
	int64_t engineers;           /* distinct engineer ids (0 if none recorded) */

	int64_t prompt_tokens;       /* sum of input (prompt) tokens */
	int64_t output_tokens;
	int64_t longest_call_tokens; /* largest prompt + output of one call */
	int64_t calls_over_context;  /* calls whose prompt + output exceed
					opts.context_tokens (0 when it is 0) */
	int64_t new_tokens;          /* sum of new_tokens below */
	struct stats_dist input_tokens;  /* per call: prompt tokens, prefix included */
	struct stats_dist new_tokens_per_call; /* prompt tokens not in the previous
						  call's prompt + output (session) */
	struct stats_dist output_tokens_per_call;
	struct stats_dist calls_per_session;  /* closed-loop sessions only */
	struct stats_dist calls_per_task;
	struct stats_dist gap_s;     /* gaps of later calls, at 1 ms resolution */
	struct stats_dist concurrency; /* calls in flight at each call's start, itself included */
	int64_t turns;               /* root tasks with their subagents' calls (see above) */
	int64_t overlap_turns;       /* turns whose calls overlap (== overlap_concurrency.n) */
	struct stats_dist overlap_concurrency; /* per overlapping turn: durations / union */

	int64_t tool_ok, tool_fail;  /* calls with a recorded tool outcome */
	double tool_failure_rate;    /* fail / (ok + fail); 0 if none recorded */
	int64_t retry_calls;         /* calls with retry_of */
	double retry_rate;           /* retry_calls / calls */
	int64_t retry_prompt_tokens;

	double first_t_s, last_t_s;  /* first and last call time (zero service time) */

	int64_t hit_tokens_unbounded;     /* prompt tokens an unbounded cache serves */
	double prefix_hit_rate_unbounded; /* hit_tokens_unbounded / prompt_tokens, 0..1 */
	int64_t distinct_blocks;          /* blocks an unbounded cache ends up holding */

	bool curve_sampled;               /* the curve is a SHARDS estimate */
	double curve_sample_rate;         /* sampled: the final rate R (0..1] */
	int64_t curve_sample_blocks;      /* sampled: blocks in the sample at the end */
};

struct stats;

/* A fresh accumulator.  DIAG_EINPUT for options out of range, DIAG_ENOMEM. */
int stats_new(struct stats **out, const struct stats_opts *o, struct diag *d);

/* Free everything, sessions still held included; accepts NULL. */
void stats_free(struct stats *st);

/* Add one session and take ownership of it (it is freed by stats, even on
 * error).  Sessions must come in non-decreasing start time (as the reader
 * gives them) with a valid structure (trace_session_check); DIAG_EINPUT
 * otherwise.  Calls due before s->t_s are processed first. */
int stats_add(struct stats *st, struct trace_session *s, struct diag *d);

/* Process every call still pending and fill *out.  After it, only the
 * stats_hit_tokens_at and stats_summary calls are allowed. */
int stats_finish(struct stats *st, struct stats_summary *out, struct diag *d);

/* Tokens that an LRU cache of `cache_blocks` blocks serves from the prefix
 * cache over the whole trace (a capacity >= distinct_blocks gives
 * hit_tokens_unbounded); an estimate when the curve is sampled; -1 if the
 * accumulator was made with no_curve.  Only after stats_finish; O(1)
 * exact, O(log) sampled. */
int64_t stats_hit_tokens_at(const struct stats *st, int64_t cache_blocks);

/* What stats_read found out about the file besides the calls. */
struct stats_source {
	enum trace_format format;
	bool gzip;
	long skipped_lines;
	char first_skipped[512];     /* message of the first skipped line, or "" */
};

/* Read the whole trace at `path` into st with the streaming reader (the
 * format as trace_reader_open decides it; `skip_bad` drops malformed lines)
 * and finish.  In auto mode, a trace too large for the exact curve is read
 * again from the start with the sampled one (st is reset).  `src` may be
 * NULL. */
int stats_read(struct stats *st, const char *path, enum trace_format fmt, bool skip_bad,
	       struct stats_summary *out, struct stats_source *src, struct diag *d);

#endif
