/* SPDX-License-Identifier: Apache-2.0
 * test_synth_stats: `agentcap stats` (traces/stats.h) and the synthetic
 * team's own count (test_synth_count.c) agree on a generated trace: the
 * same calls, sessions, prompt tokens, median input and output tokens, tool
 * failure rate, and exactly the same prefix-cache hits with an unbounded
 * cache.  The two count prefix sharing differently (block hashes of the
 * expanded prompt there, segment boundaries here), so agreement checks
 * both.  They also agree on the turns and the median and P90 overlap
 * concurrency of the turns whose calls overlap (to rounding: stats adds a
 * turn's durations in time order, the count per turn after sorting).  A
 * large block size keeps the block-level count with its curve quick; at the
 * engine's 16-token blocks the hits are compared without the curve.
 */
#include "tests/traces/test_synth_count.h"
#include "tests/traces/testutil.h"

#include "base/diag.h"
#include "traces/stats.h"
#include "traces/synth.h"
#include "traces/synth_profile.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

static void test_stats_agrees(void **state)
{
	(void)state;
	struct synth_profile p;
	struct diag d;
	diag_init(&d);
	assert_int_equal(synth_profile_load(&p, NULL, &d), 0);
	char path[512];
	testutil_scratch(path, sizeof(path), "synth_stats.jsonl");
	struct synth_team_opts o = {.engineers = 20, .days = 1, .seed = 21};
	assert_int_equal(synth_team_write(&p, &o, path, false, NULL, &d), 0);
	const int64_t block = 1024;
	struct stats_opts so = {.block_size = block, .decode_tokens_per_s = p.decode_tokens_per_s};
	struct stats *st = NULL;
	assert_int_equal(stats_new(&st, &so, &d), 0);
	struct stats_summary sum;
	int rc = stats_read(st, path, TRACE_FMT_AUTO, false, &sum, NULL, &d);
	if (rc)
		fail_msg("stats: %s", d.msg);
	struct synth_count c;
	char msg[DIAG_MSG_MAX];
	assert_int_equal(synth_count_file(path, block, p.decode_tokens_per_s, &c, msg, sizeof(msg)), 0);
	assert_true(c.calls > 500);
	assert_int_equal(sum.calls, c.calls);
	assert_int_equal(sum.sessions, c.sessions);
	assert_int_equal(sum.prompt_tokens, c.prompt_tokens);
	assert_int_equal(sum.output_tokens, c.output_tokens);
	assert_int_equal(sum.engineers, c.engineers);
	assert_int_equal(sum.tool_fail, c.tool_fail);
	assert_int_equal(sum.tool_ok, c.tool_ok);
	assert_int_equal(sum.retry_calls, c.retries);
	assert_true(sum.input_tokens.p50 == c.median_prompt_tokens);
	assert_true(sum.output_tokens_per_call.p50 == c.median_output_tokens);
	assert_int_equal(sum.hit_tokens_unbounded, c.cached_tokens);
	assert_true(fabs(sum.tool_failure_rate - c.tool_failure_rate) < 1e-12);
	/* the overlap target: per turn, at the profile's decode rate */
	assert_true(c.overlap_turns >= 10);
	assert_int_equal(sum.turns, c.turns);
	assert_int_equal(sum.overlap_turns, c.overlap_turns);
	assert_int_equal(sum.overlap_concurrency.n, c.overlap_turns);
	assert_true(sum.overlap_concurrency.p50 > 1.0);
	assert_true(fabs(sum.overlap_concurrency.p50 - c.overlap_median) < 1e-9);
	assert_true(fabs(sum.overlap_concurrency.p90 - c.overlap_p90) < 1e-9);
	stats_free(st);
	/* at the engine's 16-token blocks, without the curve (the fast path) */
	so.block_size = 16;
	so.no_curve = true;
	assert_int_equal(stats_new(&st, &so, &d), 0);
	rc = stats_read(st, path, TRACE_FMT_AUTO, false, &sum, NULL, &d);
	if (rc)
		fail_msg("stats: %s", d.msg);
	assert_int_equal(synth_count_file(path, 16, p.decode_tokens_per_s, &c, msg, sizeof(msg)), 0);
	assert_true(c.cached_tokens > 0);
	assert_int_equal(sum.hit_tokens_unbounded, c.cached_tokens);
	assert_true(fabs(sum.prefix_hit_rate_unbounded - c.hit_rate) < 1e-12);
	stats_free(st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stats_agrees),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
