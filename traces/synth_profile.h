/* SPDX-License-Identifier: Apache-2.0
 * synth_profile: every knob of the synthetic team generator, read from a JSON
 * profile laid over the built-in default (traces/profiles/default.json).
 *
 * A profile is one JSON object.  Scalars are checked against a range; a
 * distribution is an object {"dist": KIND, parameters..., "min", "max"} that
 * replaces the default distribution as a whole; the two lists (time zones,
 * archetypes) replace the default lists as a whole.  An unknown key, a wrong
 * type or a value out of range is an input error naming the file and the
 * key path ("team.timezones[2].weight").  docs/synth-profile.md documents
 * each knob, its default and the published figure the default comes from.
 *
 * Invariant after a successful synth_profile_load: every distribution is
 * valid for its knob (synth_dist_check), weights are positive, and the
 * limits below hold.  The struct owns no heap memory.
 */
#ifndef TRACES_SYNTH_PROFILE_H
#define TRACES_SYNTH_PROFILE_H

#include "base/outkind.h"
#include <stdbool.h>
#include <stdint.h>

struct diag;

#define SYNTH_NAME_MAX 64
#define SYNTH_MAX_ZONES 32
#define SYNTH_MAX_ARCHETYPES 16

enum synth_dist_kind {
	SYNTH_DIST_FIXED,       /* value */
	SYNTH_DIST_UNIFORM,     /* low, high */
	SYNTH_DIST_NORMAL,      /* mean, sd */
	SYNTH_DIST_LOGNORMAL,   /* median, sigma (sd of the log) */
	SYNTH_DIST_GAMMA,       /* mean, shape */
	SYNTH_DIST_EXPONENTIAL, /* mean */
	SYNTH_DIST_GEOMETRIC,   /* mean >= 1, support 1, 2, ... */
	SYNTH_DIST_POISSON,     /* mean, support 0, 1, ... */
};

/* A distribution; draws are clamped to [min, max]. */
struct synth_dist {
	enum synth_dist_kind kind;
	double p1, p2;   /* the parameters in the order listed above */
	double min, max;
};

struct synth_zone {
	char name[SYNTH_NAME_MAX];
	double utc_offset_h;  /* -12 .. +14 */
	double weight;        /* > 0, relative share of engineers */
};

struct synth_archetype {
	char name[SYNTH_NAME_MAX];
	double weight;        /* > 0, relative share of engineers */
	double token_scale;   /* multiplies the input tokens a turn adds (tool output, briefs) */
	double steps_scale;   /* multiplies steps per task */
	double break_scale;   /* multiplies the break between sessions */
};

struct synth_profile {
	char name[SYNTH_NAME_MAX];

	/* team */
	struct synth_zone zones[SYNTH_MAX_ZONES];
	int n_zones;
	struct synth_dist day_start_local_h;  /* per engineer */
	struct synth_dist day_length_h;       /* per engineer */
	struct synth_dist day_jitter_h;       /* per engineer-day */
	double active_day_probability;
	int32_t repos;
	double home_repo_probability;
	struct synth_dist repo_context_tokens; /* per repo */

	/* harness shared by the whole team */
	int64_t system_prompt_tokens;
	int64_t tool_definitions_tokens;      /* 0: no separate segment */
	int64_t timestamp_header_tokens;      /* > 0: every call starts with a
						 "Date: ..." line of this many
						 tokens, with its text (a
						 cache-busting harness) */
	int64_t context_window_tokens;
	int64_t compact_reserve_tokens;       /* compaction when a prompt would pass window - this */
	int64_t compact_request_tokens;
	struct synth_dist summary_tokens;     /* the compaction call's output */
	struct synth_dist kept_tokens;        /* recent context kept verbatim after it */

	/* sessions */
	struct synth_dist first_session_delay_s;
	struct synth_dist break_s;
	struct synth_dist tasks_per_session;
	struct synth_dist user_gap_s;

	/* tasks */
	struct synth_dist brief_tokens;
	struct synth_dist steps_per_task;
	struct synth_dist explore_steps;      /* leading steps that read rather than edit */
	double run_spread_sigma;
	double accept_probability;
	double reattempt_probability;

	/* steps */
	struct synth_dist output_tokens;
	struct synth_dist explore_tool_output_tokens;
	struct synth_dist tool_output_tokens;
	struct synth_dist tool_gap_s;

	/* tool failures and retries */
	double failure_rate;
	double retry_failure_probability;
	int32_t max_attempts;
	struct synth_dist error_tokens;

	/* cache-busting misses */
	double bust_probability;
	int64_t volatile_tokens;

	/* subagents */
	double spawn_probability;
	struct synth_dist subagents_parallel;
	struct synth_dist subagent_brief_tokens;
	struct synth_dist subagent_steps;
	struct synth_dist subagent_result_tokens;

	struct synth_archetype archetypes[SYNTH_MAX_ARCHETYPES];
	int n_archetypes;

	/* nominal service time used to lay calls on the timeline */
	double decode_tokens_per_s;

	/* what the defaults are meant to reproduce (informative; the generator
	 * does not read them, tests and `agentcap stats` compare against them) */
	double target_median_prompt_tokens;
	double target_median_output_tokens;
	double target_prefix_hit_rate;
	double target_miss_amplification;
	double target_tool_failure_rate;
	double target_overlap_median;
	double target_overlap_p90;

	/* output kinds (base/outkind.h): the share of calls whose output is
	 * code, structured output, prose; the rest are written without a kind.
	 * All 0 by default: no call carries one. */
	double kind_share[OUT_KINDS];

	char source[512]; /* "(built-in default)" or the file laid over it */
};

/* The default profile shipped with agentcap (traces/profiles/default.json). */
extern const char synth_profile_default_json[];

/* Load the built-in default, then lay `path` over it (NULL: default only).
 * 0, DIAG_EINPUT ("PATH: key.path: what (expected ...)"; JSON syntax errors
 * name line and column), DIAG_EIO or DIAG_ENOMEM. */
int synth_profile_load(struct synth_profile *p, const char *path, struct diag *d);

/* Lay JSON text over *p as it stands (load a profile first: this does not
 * reset to the default); `where` names the text in messages and becomes
 * p->source. */
int synth_profile_load_text(struct synth_profile *p, const char *text, const char *where,
			    struct diag *d);

/* The most tokens one step may append to a prompt (a tool output, an error,
 * a brief, or all subagent results together): what is left of the
 * compaction threshold after the largest harness + repository context +
 * environment, summary and output.  The generator clamps to it, so no
 * prompt plus output passes the window.  Loading refuses a profile whose
 * cap is below SYNTH_MIN_STEP_CAP. */
#define SYNTH_MIN_STEP_CAP 1024
int64_t synth_profile_step_cap(const struct synth_profile *p);

/* context_window_tokens - compact_reserve_tokens: a call whose prompt plus
 * output would pass it is preceded by a compaction. */
int64_t synth_profile_compact_threshold(const struct synth_profile *p);

/* The mean of a distribution before clamping (geometric: its mean; uniform:
 * the midpoint; lognormal: median * exp(sigma^2 / 2)). */
double synth_dist_mean(const struct synth_dist *dist);

/* Invariant check for asserts and tests. */
bool synth_profile_check(const struct synth_profile *p);

/* Keep the n time zones of p with the most weight (ties: the earlier in
 * the list), in their order: n = 1 makes a one-office team, whose peak is
 * not averaged away over zones.  Fewer than n zones: all kept.  n >= 1. */
void synth_profile_keep_zones(struct synth_profile *p, int n);

#endif
