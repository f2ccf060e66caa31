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
 */
#ifndef REPLAY_REPLAY_H
#define REPLAY_REPLAY_H

#include "replay/scale.h"
#include "sim/sim.h"
#include "traces/reader.h"

#include <stdbool.h>
#include <stdint.h>

struct replay_opts {
	const char *trace_path;
	enum trace_format format;
	bool skip_bad;
	uint64_t seed;           /* reported; no replay choice is random yet */
	bool single_step;        /* verification aid: no coalesced decode runs */
	struct scale_opts scale; /* engineers > 0: replay a team resampled from the
				    trace (replay/scale.h), seeded with scale.seed */
};

struct replay_stats {
	int64_t sessions;        /* sessions read */
	int64_t calls;           /* calls read */
	int64_t abandoned_calls; /* calls not issued because their session broke */
	long skipped_lines;      /* malformed lines dropped (skip_bad) */
	int64_t peak_sessions_in_flight;
	struct sim_stats sim;
	char trace_format[32];   /* "agentcap-trace v1" or "mooncake" */
	bool gzip;
	struct scale_info scale; /* when scale.engineers > 0 */
};

/* Replay the whole trace.  On success the sink has seen every call, session
 * and task, and the simulator's end-of-run invariants held. */
int replay_run(const struct replay_opts *o, const struct engine_config *cfg, struct sim_perf perf,
	       struct res_sink sink, struct replay_stats *st, struct diag *d);

#endif
