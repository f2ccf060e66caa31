/* SPDX-License-Identifier: Apache-2.0
 * test_stats_trie: the two ways stats counts the unbounded prefix cache give
 * the same hits and distinct blocks.  With the capacity curve stats hashes
 * every block (traces/prompt.h); with no_curve it matches segments in a trie
 * (traces/segtrie.h).  Compared on the head of the Mooncake conversation
 * trace, on the synthetic team of test_synth_stats, and on a generated trace
 * with extends chains, cuts (compactions), system-prompt busts, restated
 * prompts, retries, request-level calls, equal start times, a content seen
 * with several token counts ("#hex" ids name no count) and prompts whose
 * length is a multiple of the block; at blocks of 1, 16 and 512 tokens.
 * A hand count pins the several-token-counts case.
 */
#include "tests/traces/testutil.h"

#include "base/diag.h"
#include "traces/stats.h"
#include "traces/synth.h"
#include "traces/synth_profile.h"
#include "traces/trace.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

/* Hits and distinct blocks of sessions s[0..n) with and without the curve. */
static void compare(struct trace_session *const *s, size_t n, int64_t B, const char *what)
{
	struct stats_summary sum[2];
	for (int k = 0; k < 2; k++) {
		struct stats_opts o = {.block_size = B, .decode_tokens_per_s = 50, .no_curve = k == 1};
		struct stats *st = NULL;
		struct diag d;
		diag_init(&d);
		assert_int_equal(stats_new(&st, &o, &d), 0);
		for (size_t i = 0; i < n; i++) {
			struct trace_session *copy;
			assert_int_equal(trace_session_clone(&copy, s[i]), 0);
			if (stats_add(st, copy, &d) != 0)
				fail_msg("%s: %s", what, d.msg);
		}
		assert_int_equal(stats_finish(st, &sum[k], &d), 0);
		stats_free(st);
	}
	if (sum[0].hit_tokens_unbounded != sum[1].hit_tokens_unbounded ||
	    sum[0].distinct_blocks != sum[1].distinct_blocks)
		fail_msg("%s, %lld-token blocks: blocks give %lld hits, %lld blocks; trie %lld, %lld",
			 what, (long long)B, (long long)sum[0].hit_tokens_unbounded,
			 (long long)sum[0].distinct_blocks, (long long)sum[1].hit_tokens_unbounded,
			 (long long)sum[1].distinct_blocks);
	assert_true(sum[0].hit_tokens_unbounded > 0);
	assert_true(sum[0].hit_tokens_unbounded < sum[0].prompt_tokens);
}

static void compare_file(const char *path, size_t head, const int64_t *blocks, size_t n_blocks)
{
	struct trace_session **s = NULL;
	size_t n = 0;
	char msg[512];
	if (testutil_read_all(path, &s, &n, msg, sizeof(msg)) != 0)
		fail_msg("%s: %s", path, msg);
	if (head > 0 && head < n)
		n = head;
	for (size_t b = 0; b < n_blocks; b++)
		compare(s, n, blocks[b], path);
	testutil_free_all(s, n > 0 ? n : 0);
	(void)0;
}

static void test_mooncake_head(void **state)
{
	(void)state;
	char path[512];
	snprintf(path, sizeof(path), "%s/traces/data/mooncake/conversation_trace.jsonl.gz", AC_SRC_DIR);
	struct trace_session **s = NULL;
	size_t n = 0;
	char msg[512];
	if (testutil_read_all(path, &s, &n, msg, sizeof(msg)) != 0)
		fail_msg("%s: %s", path, msg);
	assert_true(n > 600);
	compare(s, 120, 1, "mooncake head");
	compare(s, 600, 16, "mooncake head");
	compare(s, 600, 512, "mooncake head");
	compare(s, 600, 500, "mooncake head");
	testutil_free_all(s, n);
}

static void test_synth_team(void **state)
{
	(void)state;
	struct synth_profile p;
	struct diag d;
	diag_init(&d);
	assert_int_equal(synth_profile_load(&p, NULL, &d), 0);
	char path[512];
	testutil_scratch(path, sizeof(path), "stats_trie_team.jsonl");
	struct synth_team_opts o = {.engineers = 20, .days = 1, .seed = 21};
	assert_int_equal(synth_team_write(&p, &o, path, false, NULL, &d), 0);
	const int64_t blocks[] = {512};
	compare_file(path, 0, blocks, 1);
}

/* ---- a generated trace ---- */

struct rng {
	uint64_t s;
};

static uint64_t rnd(struct rng *r)
{
	r->s ^= r->s << 13;
	r->s ^= r->s >> 7;
	r->s ^= r->s << 17;
	return r->s;
}

static int64_t rnd_in(struct rng *r, int64_t lo, int64_t hi)
{
	return lo + (int64_t)(rnd(r) % (uint64_t)(hi - lo + 1));
}

#define N_SESS 90
#define MAX_CALLS 10
#define MAX_SEGS 48

/* A segment of content 77 with 10, 30 or 64 tokens: one content, several
 * token counts, as a "#hex" id gives. */
static struct trace_seg seg_new(struct rng *r)
{
	switch (rnd(r) % 4) {
	case 0: {
		static const int64_t t[] = {10, 30, 64};
		return (struct trace_seg){.content = 77, .tokens = t[rnd(r) % 3]};
	}
	case 1: {
		uint64_t c = 500 + rnd(r) % 5; /* shared tool results, one count each */
		return (struct trace_seg){.content = c, .tokens = (int64_t)(c - 480)};
	}
	default:
		return (struct trace_seg){.content = rnd(r), .tokens = rnd_in(r, 1, 300)};
	}
}

static int64_t seg_sum(const struct trace_seg *s, size_t n)
{
	int64_t t = 0;
	for (size_t i = 0; i < n; i++)
		t += s[i].tokens;
	return t;
}

static struct trace_session *gen_session(struct rng *r, double t_s, bool open_loop)
{
	struct trace_call calls[MAX_CALLS];
	static const struct trace_seg zero_seg;
	struct trace_seg segs[MAX_CALLS][MAX_SEGS];
	struct trace_seg ctx[MAX_SEGS + 2];  /* previous call's prompt + output, expanded */
	size_t n_ctx = 0;
	struct trace_session s = {.id = rnd(r), .t_s = t_s, .open_loop = open_loop, .calls = calls};
	size_t n_calls = open_loop ? 1 : (size_t)rnd_in(r, 1, MAX_CALLS);
	for (size_t i = 0; i < n_calls; i++) {
		struct trace_call *c = &calls[i];
		*c = (struct trace_call){.seq = (int64_t)i, .retry_of = -1, .segs = segs[i],
					 .output_tokens = rnd_in(r, 1, 200)};
		for (size_t k = 0; k < MAX_SEGS; k++)
			segs[i][k] = zero_seg;
		if (i > 0)
			c->gap_s = (double)rnd_in(r, 0, 3) * 0.25; /* ties with other calls */
		size_t n = 0;
		int kind = i == 0 ? 0 : (int)(rnd(r) % 10);
		if (n_ctx + 4 > MAX_SEGS && kind >= 1 && kind <= 6)
			kind = 7;
		if (kind == 0) {
			/* system prompt (1: 512 tokens, 2: 500, 3: 1024), repository;
			 * without more, a prompt of a multiple of 16 or 512 tokens */
			uint64_t sys = 1 + rnd(r) % 3;
			segs[i][n++] = (struct trace_seg){.content = sys, .tokens = sys == 1 ? 512 : sys == 2 ? 500 : 1024};
			segs[i][n++] = (struct trace_seg){.content = 100 + rnd(r) % 4, .tokens = 512};
			if (rnd(r) % 2)
				segs[i][n++] = seg_new(r);
		} else if (kind <= 4) {
			c->extends_prev = true;
			size_t k = (size_t)rnd_in(r, 1, 3);
			while (k--)
				segs[i][n++] = seg_new(r);
		} else if (kind == 5) {
			/* restated: the whole context, its last output sometimes with
			 * another token count, then a new segment */
			memcpy(segs[i], ctx, n_ctx * sizeof(ctx[0]));
			n = n_ctx;
			if (rnd(r) % 2 && segs[i][n - 1].tokens > 1)
				segs[i][n - 1].tokens -= rnd_in(r, 1, segs[i][n - 1].tokens - 1);
			segs[i][n++] = seg_new(r);
		} else if (kind == 6) {
			/* a retry: the previous prompt again */
			memcpy(segs[i], ctx, (n_ctx - 1) * sizeof(ctx[0]));
			n = n_ctx - 1;
			c->retry_of = calls[i - 1].seq;
		} else if (kind <= 8) {
			/* a cut: a leading part of the context, then a summary */
			n = (size_t)rnd_in(r, 1, (int64_t)(n_ctx < 6 ? n_ctx : 6));
			memcpy(segs[i], ctx, n * sizeof(ctx[0]));
			segs[i][n++] = (struct trace_seg){.content = rnd(r), .tokens = rnd_in(r, 1, 700)};
		} else {
			/* a bust: another system prompt, the rest kept */
			size_t m = n_ctx < 8 ? n_ctx : 8;
			memcpy(segs[i], ctx, m * sizeof(ctx[0]));
			n = m;
			segs[i][0] = (struct trace_seg){.content = 4, .tokens = 512};
		}
		c->n_segs = n;
		c->prompt_tokens = seg_sum(segs[i], n);
		if (c->extends_prev) {
			c->prompt_tokens += calls[i - 1].prompt_tokens + calls[i - 1].output_tokens;
			memcpy(ctx + n_ctx, segs[i], n * sizeof(ctx[0]));
			n_ctx += n;
		} else {
			memcpy(ctx, segs[i], n * sizeof(ctx[0]));
			n_ctx = n;
		}
		ctx[n_ctx++] = (struct trace_seg){.content = trace_output_content(s.id, c->seq),
						  .tokens = c->output_tokens};
		assert_true(n_ctx <= MAX_SEGS);
	}
	s.n_calls = n_calls;
	assert_true(trace_session_check(&s));
	struct trace_session *out;
	assert_int_equal(trace_session_clone(&out, &s), 0);
	return out;
}

static void test_generated(void **state)
{
	(void)state;
	struct rng r = {.s = 0x7a1e5eed0badcafeULL};
	struct trace_session *s[N_SESS];
	double t = 0;
	for (int i = 0; i < N_SESS; i++) {
		t += (double)rnd_in(&r, 0, 2) * 0.5; /* sessions starting together */
		s[i] = gen_session(&r, t, i % 9 == 4);
	}
	compare(s, N_SESS, 1, "generated");
	compare(s, N_SESS, 16, "generated");
	compare(s, N_SESS, 512, "generated");
	compare(s, N_SESS, 7, "generated");
	for (int i = 0; i < N_SESS; i++)
		trace_session_free(s[i]);
}

/* One content with 20 tokens, then with 10: the second call shares its first
 * 10 tokens, as "#hex" ids without a count give. */
static void test_content_token_counts(void **state)
{
	(void)state;
	const char body[] = "{\"format\":\"agentcap-trace\",\"version\":1}\n"
		"{\"t\":0,\"prompt\":[[\"#00000000000000aa\",20]],\"output_tokens\":1}\n"
		"{\"t\":1,\"prompt\":[[\"#00000000000000aa\",10],[\"y\",5]],\"output_tokens\":1}\n"
		"{\"t\":2,\"prompt\":[[\"#00000000000000aa\",30]],\"output_tokens\":1}\n";
	char path[512];
	testutil_scratch(path, sizeof(path), "stats_trie_counts.jsonl");
	testutil_write_str(path, body);
	/* call 1 computes P + O - 1 = 20 tokens, all of its segment; call 2
	 * shares 10 of them, call 3 all 20 (of its 30) */
	const int64_t want1 = 10 + 20, want4 = 8 + 20;
	for (int k = 0; k < 2; k++) {
		for (int b = 0; b < 2; b++) {
			struct stats_opts o = {.block_size = b ? 4 : 1, .decode_tokens_per_s = 50,
					       .no_curve = k == 1};
			struct stats *st = NULL;
			struct diag d;
			diag_init(&d);
			assert_int_equal(stats_new(&st, &o, &d), 0);
			struct stats_summary sum;
			if (stats_read(st, path, TRACE_FMT_AUTO, false, &sum, NULL, &d) != 0)
				fail_msg("%s", d.msg);
			assert_int_equal(sum.hit_tokens_unbounded, b ? want4 : want1);
			stats_free(st);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_content_token_counts),
		cmocka_unit_test(test_generated),
		cmocka_unit_test(test_mooncake_head),
		cmocka_unit_test(test_synth_team),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
