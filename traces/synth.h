/* SPDX-License-Identifier: Apache-2.0
 * synth: a synthetic team of engineers using coding agents, as a stream of
 * canonical sessions in start-time order.
 *
 * Each engineer has a time zone, an archetype and a daily working window;
 * on each active day they run agent sessions one after another inside the
 * window.  A session holds tasks; a task is a run of steps; a step is one
 * LLM call whose tool may fail and be retried.  Prompts are content-addressed
 * (docs/trace-format.md): a team-wide harness prefix (system prompt, tool
 * definitions), a per-repository context, a per-task brief, then each call
 * extends the previous one with the tool output it got.  Compaction and
 * cache-busting rebuild the prompt; subagent sessions (parent_session) run
 * alongside their parent.  Every knob is in struct synth_profile;
 * docs/synth-profile.md describes the model and its sources.
 *
 * Times: the trace carries the first call's absolute time `t` and gaps
 * (tool and think time) after that; the generator lays calls on a nominal
 * timeline where a call lasts output_tokens / timing.decode_tokens_per_s,
 * which places subagents beside their parent and sessions inside the
 * working window.  t = 0 is 00:00 UTC of the first day; each engineer works
 * `days` consecutive local days, the first being the first whose window
 * starts at or after t = 0.
 *
 * Memory: one engineer-day of sessions per engineer, merged through a heap
 * keyed by each engineer's next start, so a long run stays bounded.
 * Determinism: engineer e's day d depends only on the profile, the seed, e,
 * d and e's earlier days (a rejected task carried over), never on how many
 * engineers or later days are generated.
 */
#ifndef TRACES_SYNTH_H
#define TRACES_SYNTH_H

#include <stdbool.h>
#include <stdint.h>

struct diag;
struct synth_profile;
struct trace_session;
struct synth_team;

#define SYNTH_MAX_ENGINEERS 1000000
#define SYNTH_MAX_DAYS 3660

struct synth_team_opts {
	int32_t engineers;  /* 1 .. SYNTH_MAX_ENGINEERS */
	int32_t days;       /* 1 .. SYNTH_MAX_DAYS */
	uint64_t seed;
};

/* What was generated so far (for summaries and tests). */
struct synth_team_stats {
	int64_t engineer_days;      /* active engineer-days with at least one session */
	int64_t sessions;           /* all sessions, subagents included */
	int64_t subagent_sessions;
	int64_t calls;
	int64_t tasks;              /* task runs of root sessions */
	int64_t tasks_accepted;
	int64_t reattempts;         /* task runs that repeat a rejected task */
	int64_t tool_failures;      /* calls with tool "fail" */
	int64_t retries;            /* calls with retry_of */
	int64_t compactions;
	int64_t busts;
	int64_t prompt_tokens;      /* sum over calls */
	int64_t output_tokens;
	double last_start_s;        /* start of the latest session */
};

/* Derived probability that a step's first attempt fails, so that the share
 * of calls with tool "fail" is profile.failure_rate given the retry
 * settings; > 1 means the settings cannot reach that rate. */
double synth_first_failure_probability(const struct synth_profile *p);

/* Make a generator.  The profile is copied.  0, DIAG_EINPUT (options out of
 * range, or tools.failure_rate unreachable with the retry settings) or
 * DIAG_ENOMEM. */
int synth_team_new(struct synth_team **out, const struct synth_profile *p,
		   const struct synth_team_opts *o, struct diag *d);

/* Next session in non-decreasing start time: 1 and a heap session in *out
 * (the caller frees it with trace_session_free), 0 when the team is done,
 * or a negative DIAG code. */
int synth_team_next(struct synth_team *t, struct trace_session **out, struct diag *d);

const struct synth_team_stats *synth_team_stats(const struct synth_team *t);

/* Accepts NULL. */
void synth_team_free(struct synth_team *t);

/* Generate the whole team into a canonical trace at `path` ("-": standard
 * output), gzip-compressed if `gzip`, all-or-nothing.  `stats` (may be NULL)
 * receives the totals. */
int synth_team_write(const struct synth_profile *p, const struct synth_team_opts *o,
		     const char *path, bool gzip, struct synth_team_stats *stats, struct diag *d);

#endif
