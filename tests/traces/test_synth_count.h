/* SPDX-License-Identifier: Apache-2.0
 * test_synth_count: an independent count of the figures a synthetic team
 * must reproduce (docs/synth-profile.md, "Targets and tolerances"), read
 * back from a trace file with the ordinary reader.  It shares no code with
 * the generator: prefix sharing is computed on segment boundaries (chained
 * hashes of content ids), the timeline from `t`, `gap` and output tokens at
 * a nominal decode rate.
 *
 * Definitions (the same as docs/synth-profile.md):
 *  - hit rate: token-weighted; a call reuses the longest prefix of its
 *    prompt that an earlier call had in its prompt + output (all but the
 *    last token), rounded down to whole blocks, never the whole prompt;
 *    calls in file order (sessions by start time, each session's calls in
 *    order).
 *  - new tokens: tokens of prompt segments whose content appears for the
 *    first time in the trace (an earlier call's output counts as seen);
 *    miss amplification = (prompt - cached) / new.
 *  - tool failure rate: calls with tool "fail" / calls with a tool outcome.
 *  - overlap concurrency of a turn (one task of a root session together
 *    with the calls of the subagents it spawned, which carry the same task
 *    id): sum of call durations / length of the union of call intervals,
 *    a call lasting output_tokens / decode rate.  The median and P90 are
 *    taken over the turns whose calls overlap (concurrency > 1).
 */
#ifndef TESTS_TRACES_TEST_SYNTH_COUNT_H
#define TESTS_TRACES_TEST_SYNTH_COUNT_H

#include <stddef.h>
#include <stdint.h>

struct synth_count {
	int64_t calls, sessions, subagent_sessions, engineers;
	int64_t tasks, accepted, rejected;
	int64_t prompt_tokens, output_tokens, cached_tokens, new_tokens;
	int64_t tool_ok, tool_fail, no_tool, retries;
	int64_t max_attempts;        /* most calls one step took (1 + its retries) */
	double median_prompt_tokens, median_output_tokens;
	double hit_rate;
	double miss_amplification;
	double tool_failure_rate;
	int64_t trees, turns, overlap_turns;
	double overlap_median, overlap_p90;
	double first_t_s, last_t_s;
};

/* Count the trace at `path`; 0, or the reader's negative code with its
 * message in msg. */
int synth_count_file(const char *path, int64_t block_size, double decode_tokens_per_s,
		     struct synth_count *out, char *msg, size_t msgsz);

#endif
