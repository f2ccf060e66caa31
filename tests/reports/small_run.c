/* SPDX-License-Identifier: Apache-2.0
 * small_run: the fixed run behind the hand-computed expectations.
 *
 * Completed requests (times in ms):
 *   R1 arrival 0,   first token 100, done 500,  prompt 1000, output 5,  cached 400,  computed 600,  in-flight 0,   preempt 0
 *   R2 arrival 200, first token 400, done 400,  prompt 2000, output 1,  cached 1000, computed 1000, in-flight 100, preempt 1
 *   R3 arrival 300, first token 600, done 1320, prompt 500,  output 10, cached 0,    computed 700,  in-flight 50,  preempt 2
 * Rejected: arrival 1800 (no done time), "prompt exceeds KV capacity";
 *           arrival 100 done 150, same reason; arrival 50, no reason.
 *   duration 0 .. 1800 ms = 1.8 s; TTFT 100, 200, 300; E2EL 500, 200, 1020;
 *   TPOT (R1, R3 only) 400/4 = 100 and 720/9 = 80.
 * Busy: replica 0 [0, 500] and [600, 1000]; replica 2 [100, 1000] -> 1800 ms
 *   busy over 3 replicas x 1.8 s = 1/3.
 * ITL point masses: 1 x 10 ms, 8 x 20 ms (4 steps x 2 seqs), 1 x 30 ms,
 *   2 x 40 ms (2 steps x 1 seq).
 * Sessions: 0 .. 2 s (3 calls), 1 .. 1.5 s (1 call).
 * Tasks: 0 .. 2 s accepted, 1 .. 1.5 s rejected by the user, 0 .. 1 s unknown.
 */
#include "tests/reports/small_run.h"

#include <stddef.h>

static void feed_request(const struct res_sink *s, enum res_status st, const char *reason,
			 long long arrival_ms, long long first_ms, long long done_ms,
			 long long prompt, long long output, long long cached,
			 long long computed, long long inflight, int preempt)
{
	struct res_request r = {
		.session = 1,
		.task = 1,
		.seq = 0,
		.replica = st == RES_COMPLETED ? 0 : -1,
		.status = st,
		.reason = reason,
		.arrival_ns = arrival_ms * MS,
		.first_token_ns = first_ms * MS,
		.done_ns = done_ms * MS,
		.prompt_tokens = prompt,
		.output_tokens = output,
		.cached_prompt_tokens = cached,
		.computed_prefill_tokens = computed,
		.inflight_miss_tokens = inflight,
		.preemptions = preempt,
	};
	s->request(s->ctx, &r);
}

static void feed_itl(const struct res_sink *s, double ms, long long steps, int seqs)
{
	struct res_itl_run r = {
		.first_ns = ms * 1e6,
		.last_ns = ms * 1e6,
		.total_ns = ms * 1e6 * (double)steps,
		.steps = steps,
		.seqs = seqs,
	};
	s->itl_run(s->ctx, &r);
}

static void feed_busy(const struct res_sink *s, int replica, long long start_ms, long long end_ms)
{
	struct res_busy b = {.replica = replica, .start_ns = start_ms * MS, .end_ns = end_ms * MS, .steps = 10};
	s->busy(s->ctx, &b);
}

static void feed_span(void (*fn)(void *, const struct res_span *), void *ctx, uint64_t id,
		      long long start_ms, long long end_ms, int calls, bool known, bool accepted)
{
	struct res_span sp = {
		.id = id,
		.start_ns = start_ms * MS,
		.end_ns = end_ms * MS,
		.calls = calls,
		.accepted_known = known,
		.accepted = accepted,
	};
	fn(ctx, &sp);
}

void small_run_feed(const struct res_sink *s)
{
	feed_request(s, RES_COMPLETED, NULL, 0, 100, 500, 1000, 5, 400, 600, 0, 0);
	feed_request(s, RES_REJECTED, "prompt exceeds KV capacity", 1800, 0, 0, 9000, 7, 0, 0, 0, 0);
	feed_request(s, RES_COMPLETED, NULL, 200, 400, 400, 2000, 1, 1000, 1000, 100, 1);
	feed_request(s, RES_REJECTED, NULL, 50, 0, 0, 10, 1, 0, 0, 0, 0);
	feed_request(s, RES_COMPLETED, NULL, 300, 600, 1320, 500, 10, 0, 700, 50, 2);
	feed_request(s, RES_REJECTED, "prompt exceeds KV capacity", 100, 0, 150, 9000, 7, 0, 0, 0, 0);

	feed_itl(s, 20.0, 4, 2);
	feed_itl(s, 40.0, 2, 1);
	feed_itl(s, 10.0, 1, 1);
	feed_itl(s, 30.0, 1, 1);

	feed_busy(s, 0, 0, 500);
	feed_busy(s, 2, 100, 1000);
	feed_busy(s, 0, 600, 1000);

	feed_span(s->session, s->ctx, 11, 0, 2000, 3, false, false);
	feed_span(s->session, s->ctx, 12, 1000, 1500, 1, false, false);
	feed_span(s->task, s->ctx, 21, 0, 2000, 2, true, true);
	feed_span(s->task, s->ctx, 22, 1000, 1500, 1, true, false);
	feed_span(s->task, s->ctx, 23, 0, 1000, 1, false, false);
}
