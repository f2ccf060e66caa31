/* SPDX-License-Identifier: Apache-2.0
 * xform: what-if transforms of a trace, applied one session at a time while
 * the trace streams (docs/whatif.md is the user-facing description).
 *
 *   rules          PCRE2 volatile-span rules over segment text (rules.h):
 *                  pin or keep volatile, before any block hash is computed;
 *   inject         a volatile segment of K tokens on every call, at `start`
 *                  (before the first segment), `after-system` (after the
 *                  first segment: the system prompt or harness prefix) or
 *                  `before-last-turn` (before the segments the call adds to
 *                  its session; for a call that restates its prompt, before
 *                  its last segment).  The segment's content differs on every
 *                  call and is not kept in the session's history;
 *   no_retry       drop the calls that retry a failed step (retry_of >= 0);
 *                  a dropped call's gap is added to the next kept call's;
 *   max_output     cap each call's output at K tokens (later prompts that
 *                  carry that output shrink with it);
 *   think_scale    multiply every gap (tool and think time) by F;
 *   arrival_scale  multiply every session's start time by F: F = 1 / r
 *                  replays an open-loop trace's arrivals at r times their
 *                  recorded rate (order kept, as F > 0 scales every start
 *                  alike; gaps within a session are think_scale's);
 *   concurrency    subagent sessions (parent set) are replayed F times on
 *                  average: floor(F) copies plus one more for a fraction
 *                  frac(F) of them, chosen by a hash of the session id (F < 1
 *                  drops subagents).  Copies start together, with new ids.
 * Injection and no-retry restate every prompt in full (the extends chain is
 * expanded), so a transformed session needs O(calls x segments) memory
 * instead of O(segments); nothing is kept between sessions.
 */
#ifndef TRACES_XFORM_H
#define TRACES_XFORM_H

#include "traces/rules.h"

#include <stdbool.h>
#include <stdint.h>

struct diag;
struct trace_session;

enum xform_where { XFORM_NONE = 0, XFORM_START, XFORM_AFTER_SYSTEM, XFORM_BEFORE_LAST_TURN };

struct xform_opts {
	struct rules *rules;       /* borrowed; NULL: none */
	enum xform_where inject_at;
	int64_t inject_tokens;     /* K > 0 with inject_at */
	bool no_retry;
	int64_t max_output;        /* 0: no cap */
	double think_scale;        /* 1: as recorded */
	double arrival_scale;      /* 1: as recorded; > 0 */
	double concurrency;        /* 1: as recorded */
};

struct xform_stats {
	struct rules_stats rules;
	int64_t calls_injected;
	int64_t retries_dropped;
	int64_t outputs_capped;
	int64_t subagents_dropped;
	int64_t subagents_added;
};

/* Defaults: nothing changes. */
void xform_opts_init(struct xform_opts *o);

/* Whether o changes anything; whether it needs segment text. */
bool xform_active(const struct xform_opts *o);
bool xform_needs_text(const struct xform_opts *o);

/* "start", "after-system", "before-last-turn" (static); parse them. */
const char *xform_where_name(enum xform_where w);
bool xform_where_parse(const char *s, enum xform_where *out);

/* Transform *s in place or replace it (the old session is freed).  Returns
 * the number of times the session is to be replayed (0: dropped, and *s is
 * freed and NULL; more than 1: see xform_copy), or DIAG_ENOMEM /
 * DIAG_EINPUT (rules on bad text) with *s unchanged. */
int xform_apply(const struct xform_opts *o, struct trace_session **s, struct xform_stats *st,
		struct diag *d);

/* Copy number k (>= 1) of a session, with an id of its own.  0 or
 * DIAG_ENOMEM. */
int xform_copy(struct trace_session **out, const struct trace_session *s, int k, struct diag *d);

#endif
