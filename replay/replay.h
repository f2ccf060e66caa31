/* SPDX-License-Identifier: Apache-2.0
 * replay: drive the simulator with a trace, closed loop per session.
 *
 * The driver streams sessions from a trace reader in start-time order and
 * interleaves them with the simulator's events: a session's first call is
 * issued at its recorded time; each later call is issued `gap` seconds after
 * the simulated completion of the call before it, so a slower server
 * stretches the session as it would a real agent.  One-call sessions without
 * an id (Mooncake, Azure) are thereby replayed open loop at their timestamps.
 *
 * Memory grows with the sessions in flight (each keeps its calls and the
 * block hashes of its current context), not with the length of the trace.
 * If a call is rejected, its session cannot go on: the rest of its calls are
 * reported rejected with that reason, never dropped silently.
 *
 * Context limits.  A trace recorded against a longer-context model may hold
 * calls longer than the served model's max_model_len.  The context policy
 * says what the agent's harness does about them:
 *   compact   when prompt + output would pass max_model_len (the room the
 *             call's output reserves), the harness compacts, as the
 *             synthetic team does (docs/synth-profile.md): the prompt
 *             becomes the context's first REPLAY_COMPACT_HEAD of
 *             max_model_len (kept verbatim, still cached), a summary of
 *             REPLAY_COMPACT_SUMMARY new tokens, and the last
 *             REPLAY_COMPACT_TAIL of the context (recent turns, now at new
 *             positions).  Later calls of the session extend the compacted
 *             context, not the recorded one.
 *   truncate  the call is cut to its last max_model_len - output tokens
 *             (the server-side truncation of the oldest context); the
 *             session keeps its full history for the next call.
 *   reject    the call is rejected and the session abandoned.
 * replay_stats counts the calls each policy touched.
 */
#ifndef REPLAY_REPLAY_H
#define REPLAY_REPLAY_H

#include "replay/scale.h"
#include "replay/slo.h"
#include "sim/sim.h"
#include "traces/reader.h"
#include "traces/xform.h"

#include <stdbool.h>
#include <stdint.h>

enum context_policy {
	CONTEXT_COMPACT = 0,
	CONTEXT_TRUNCATE,
	CONTEXT_REJECT,
};

/* Shares of max_model_len a compacted prompt keeps: the synthetic team's
 * defaults (harness and repository base, summary median 10,000, kept
 * context median 35,000 at a 262,144-token window) scaled to the model. */
#define REPLAY_COMPACT_HEAD 0.10
#define REPLAY_COMPACT_SUMMARY 0.04
#define REPLAY_COMPACT_TAIL 0.13

/* "compact", "truncate", "reject" (static). */
const char *context_policy_name(enum context_policy p);

/* Parse one of those names; false if it is none of them. */
bool context_policy_parse(const char *s, enum context_policy *out);

/* Simulated time stays below 2^62 ns (about 146 years): a session whose
 * start, gaps and service times would carry a call past it is an input error
 * naming the call's line, never an int64 overflow. */
#define REPLAY_HORIZON_NS (INT64_C(1) << 62)

/* Early verdict (off unless replay_opts.early is set, so a plain replay
 * runs to the end and its output does not change).  A replay stops, with
 * replay_stats.verdict saying why, as soon as its answer is known to be no:
 *   failed   a call was rejected (a replay with failed calls is a "no");
 *   slo      an objective of early->slo can no longer be met: of the
 *            early->total_calls calls the replay will issue, at least
 *            slo_miss_budget(p, total_calls) are already over the limit, so
 *            the percentile is over it whatever the rest do.  Counted are
 *            completed calls over the limit, and at every sample (below)
 *            the calls in flight that already waited longer than a TTFT or
 *            E2EL limit without a first token / without finishing;
 *   queue    the calls waiting (router queue and replicas' waiting queues)
 *            grew from each sample to the next for early->growth_windows
 *            samples in a row, early->window_s seconds of simulated time
 *            apart: an hour of unbroken growth with the defaults, far
 *            longer than any call's service time, which a deployment that
 *            keeps up does not show.  A closed-loop team cannot queue more
 *            calls than it has sessions open, so for agent traces the slo
 *            rule is the one that fires; the queue rule catches open-loop
 *            (request-level) traces without a TTFT objective.
 * The sink then holds the records of the calls finished so far. */
#define REPLAY_EARLY_WINDOW_S 60.0
#define REPLAY_EARLY_GROWTH 60

struct replay_early {
	const struct slo *slo;    /* NULL: only the failed and queue rules */
	int64_t total_calls;      /* calls the replay will issue (replay_count);
				     0: the slo rule is off */
	double window_s;          /* 0: REPLAY_EARLY_WINDOW_S */
	int32_t growth_windows;   /* 0: REPLAY_EARLY_GROWTH */
};

enum replay_verdict {
	REPLAY_RAN_TO_END = 0,
	REPLAY_STOPPED_FAILED,
	REPLAY_STOPPED_SLO,
	REPLAY_STOPPED_QUEUE,
};

/* "ran", "failed", "slo", "queue" (static). */
const char *replay_verdict_name(enum replay_verdict v);

/* Priority classes and teams of the calls (docs/priorities.md).  A call's
 * class: its trace `priority` (a number as given, "main", "subagent" and
 * "batch" as below); without one, class_subagent for a session with a
 * parent, else class_main.  A session's team: its trace `team` (a team
 * `names` lists by name, or one more team per id the trace brings), else
 * the team `member[]` puts its engineer in, else none (team 0).  Teams of
 * the simulator: 0 none, 1..n_names the named ones, then the trace's
 * (replay_stats.team_ids). */
struct replay_groups {
	int32_t class_main, class_subagent, class_batch;
	int32_t n_names;
	const uint64_t *name_ids;     /* [n_names]: trace_id_hash of each name */
	int32_t n_members;
	const uint64_t *member;       /* engineer id hashes */
	const int32_t *member_team;   /* index into the names */
};

struct replay_opts {
	const char *trace_path;
	enum trace_format format;
	bool skip_bad;
	uint64_t seed;           /* reported; no replay choice is random yet */
	bool single_step;        /* verification aid: no coalesced decode runs */
	struct scale_opts scale; /* engineers > 0: replay a team resampled from the
				    trace (replay/scale.h), seeded with scale.seed */
	enum context_policy context_policy;
	int32_t replicas;        /* engine replicas behind the router; 0 = 1 */
	const struct sim_pool *pools; /* n_pools > 0: the cluster is these pools
				    (sim_init_pools), and replay_run's cfg and
				    perf and `replicas` are not used; the
				    harness compacts at the largest
				    max_model_len of any pool */
	int32_t n_pools;
	const struct sim_pd_config *pd; /* NULL: no prefill/decode
				    disaggregation (sim_set_pd, with pools) */
	const struct router_config *router; /* NULL = the default router */
	const struct sim_tiers_config *tiers; /* NULL or n = 0: no KV tiers */
	int64_t series_interval_ns; /* > 0: time-series samples into the sink
				    every this much simulated time (sim_set_series) */
	int64_t *routed;         /* NULL, or one counter per replica (of every pool): the calls the
				    router handed to each replica, filled at the end */
	const struct elastic_config *elastic; /* NULL = replicas always up */
	int64_t compact_at;      /* > 0: the harness compacts at this many tokens
				    of context (prompt + output) even when
				    max_model_len is larger: the compact-at what-if;
				    the shares above are then of compact_at */
	const struct xform_opts *xform; /* NULL: the trace as recorded; else
				    applied to every session as it streams in
				    (after scaling), traces/xform.h */
	const struct replay_early *early; /* NULL: run to the end */
	const struct hybrid_config *hybrid; /* NULL or n = 0: no API backends
				    (sim/backend.h) */
	const struct replay_groups *groups; /* NULL: every call class 0, team 0 */
	bool as_recorded;        /* no harness compaction, cut or context limit:
				    every call goes as the trace recorded it
				    (an API baseline's replay, where routing
				    sends every call to the API) */
};

struct replay_stats {
	int64_t sessions;        /* sessions read */
	int64_t calls;           /* calls read */
	int64_t abandoned_calls; /* calls not issued because their session broke */
	int64_t calls_compacted; /* calls whose context the harness compacted */
	int64_t calls_truncated; /* calls cut to max_model_len */
	int64_t calls_too_long;  /* calls over max_model_len sent as they were
				    (policy reject: the engine rejects them) */
	long skipped_lines;      /* malformed lines dropped (skip_bad) */
	int64_t peak_sessions_in_flight;
	struct sim_stats sim;
	struct sim_pd_stats pd;  /* prefill/decode disaggregation (o->pd) */
	struct router_stats router; /* what the router did */
	int32_t n_teams;         /* teams seen: 1 (none) + named + the trace's */
	uint64_t team_ids[SIM_MAX_TEAMS]; /* the trace's team id hash of each
				    team past the named ones (0 otherwise) */
	struct elastic_stats elastic; /* what the lifecycle did (sim/lifecycle.h) */
	char trace_format[32];   /* "agentcap-trace v1" or "mooncake" */
	bool gzip;
	struct scale_info scale; /* when scale.engineers > 0 */
	struct xform_stats xform; /* when xform is set */
	enum replay_verdict verdict; /* REPLAY_RAN_TO_END unless stopped early */
	int64_t verdict_ns;      /* simulated time it stopped at */
	char verdict_why[192];   /* what settled it, for the search path */
	double verdict_share;    /* how far past saving it was: of the calls
				    finished or already late when it stopped,
				    the share that missed (failed: 1) */
};

/* What a pass over the trace finds before a replay: its calls as recorded
 * against the engine's limits, by sim_reject_reason's rule.  A call longer
 * than max_model_len is left to o->context_policy: under compact and
 * truncate it is counted in over_max_model_len and then checked against the
 * other limits at max_model_len tokens (at most what the policy leaves);
 * under reject it is rejected. */
struct replay_scan {
	int64_t calls;
	int64_t longest_prompt;      /* tokens */
	int64_t longest_call;        /* prompt + output tokens */
	int64_t over_context;        /* prompt + output beyond context_tokens */
	int64_t over_max_model_len;  /* longer than max_model_len as recorded */
	int64_t over_kv;             /* more KV blocks than the cache holds */
	int64_t over_budget;         /* over the token budget (chunked prefill off) */
	int64_t rejected;            /* calls the engine will reject, for any reason */
};

/* Read the trace o names (as recorded; not the scaled team) and count its
 * calls against cfg and a model context of context_tokens (0 = none).
 * O(trace); memory of one session at a time.  0 or the reader's error. */
int replay_scan(const struct replay_opts *o, const struct engine_config *cfg,
		int64_t context_tokens, struct replay_scan *out, struct diag *d);

/* The same over the n engines of a cluster's pools (cfgs[0..n)): each[p]
 * counts the calls pool p cannot serve (over_max_model_len against its own
 * max_model_len), and *all counts them against the cluster: the context
 * policy applied at the largest max_model_len, a call rejected only when
 * every pool rejects it (over_kv and over_budget by pools[0]'s reason). */
int replay_scan_pools(const struct replay_opts *o, const struct engine_config *cfgs, int32_t n,
		      int64_t context_tokens, struct replay_scan *each, struct replay_scan *all,
		      struct diag *d);

/* The days of o's trace as a team works them (replay/scale.h: each
 * engineer's own days, the most of any engineer) and how many engineers it
 * names: what a month of it is (cost.workdays_per_year / 12 of those days)
 * whether it is resampled or not.  *named is 0 for a request-level trace,
 * whose month is round-the-clock traffic instead.  Reads the trace once
 * (o's own scaling and transforms are not applied).  0 or the reader's
 * error. */
int replay_trace_days(const struct replay_opts *o, int64_t *days, int64_t *named,
		      struct diag *d);

/* The days a month repeats of replay o that ended with stats st, as every
 * command counts them: a resampled team's target days; else, for a trace
 * that names its engineers, its team days (replay_trace_days); 0 for a
 * request-level trace, whose month is round-the-clock traffic.
 * *engineers: the team's size (0 for a request-level trace).  0 or the
 * reader's error. */
int replay_month_days(const struct replay_opts *o, const struct replay_stats *st, int64_t *days,
		      int64_t *engineers, struct diag *d);

/* How many calls a replay of o issues: the sessions o's reader, scaling
 * and what-if transforms yield, counted without simulating.  0 or the
 * reader's error. */
int replay_count(const struct replay_opts *o, int64_t *calls, struct diag *d);

/* Replay the whole trace.  On success the sink has seen every call, session
 * and task, and the simulator's end-of-run invariants held; or, with
 * o->early, the replay stopped early (st->verdict) and the sink has seen
 * the calls finished by then. */
int replay_run(const struct replay_opts *o, const struct engine_config *cfg, struct sim_perf perf,
	       struct res_sink sink, struct replay_stats *st, struct diag *d);

#endif
