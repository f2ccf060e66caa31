/* SPDX-License-Identifier: Apache-2.0
 * test_stats: trace statistics.  A hand-counted example (counts, new tokens,
 * prefix hits, tasks, tools, gaps, concurrency), percentiles against known
 * values, the LRU curve against a naive LRU cache on a random trace with
 * shared prefixes and extends chains (compactions included), the same
 * unbounded hits without the curve, per-turn overlap concurrency by hand,
 * and the input errors.
 */
#include "tests/traces/testutil.h"

#include "base/diag.h"
#include "base/vec.h"
#include "traces/prompt.h"
#include "traces/stats.h"
#include "traces/trace.h"

#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <cmocka.h>

#define HDR "{\"format\":\"agentcap-trace\",\"version\":1}\n"

/* The example of docs/trace-format.md section 12. */
static const char EXAMPLE[] = HDR
	"{\"session\":\"s1\",\"engineer\":\"alice\",\"task\":\"t1\",\"t\":0.5,\"prompt\":[[\"sys\",1000],[\"tools\",500],[\"u1\",40]],\"output_tokens\":120,\"tool\":\"ok\"}\n"
	"{\"session\":\"s1\",\"task\":\"t1\",\"gap\":2.25,\"extends\":true,\"prompt\":[[\"tr1\",300]],\"output_tokens\":80,\"tool\":\"fail\"}\n"
	"{\"session\":\"s1\",\"task\":\"t1\",\"gap\":1,\"extends\":true,\"prompt\":[[\"tr2\",50]],\"output_tokens\":40,\"retry_of\":1,\"tool\":\"ok\",\"accepted\":true}\n"
	"{\"session\":\"sub1\",\"parent_session\":\"s1\",\"engineer\":\"alice\",\"task\":\"t1\",\"t\":1.0,\"prompt\":[[\"sys\",1000],[\"sub-brief\",200]],\"output_tokens\":5}\n"
	"{\"t\":1.0,\"prompt\":[[\"x\",100]],\"output_tokens\":1}\n";

static void read_stats(const char *body, const char *name, const struct stats_opts *o,
		       struct stats **st, struct stats_summary *s)
{
	char path[512];
	testutil_scratch(path, sizeof(path), name);
	testutil_write_str(path, body);
	struct diag d;
	diag_init(&d);
	assert_int_equal(stats_new(st, o, &d), 0);
	int rc = stats_read(*st, path, TRACE_FMT_AUTO, false, s, NULL, &d);
	if (rc != 0)
		fail_msg("%s", d.msg);
}

static void test_example_by_hand(void **state)
{
	(void)state;
	struct stats_opts o = {.block_size = 16, .decode_tokens_per_s = 40};
	struct stats *st;
	struct stats_summary s;
	read_stats(EXAMPLE, "stats_example.jsonl", &o, &st, &s);
	assert_int_equal(s.calls, 5);
	assert_int_equal(s.sessions, 3);
	assert_int_equal(s.open_loop_calls, 1);
	assert_int_equal(s.tasks, 1);          /* s1's t1 */
	assert_int_equal(s.subagent_task_runs, 1); /* sub1's run of t1, inside it */
	assert_int_equal(s.tasks_accepted, 1);
	assert_int_equal(s.tasks_rejected, 0);
	assert_int_equal(s.engineers, 1);
	assert_int_equal(s.prompt_tokens, 1540 + 1960 + 2090 + 1200 + 100);
	assert_int_equal(s.output_tokens, 120 + 80 + 40 + 5 + 1);
	/* new: all of s1's first call, then what each extends call appends */
	assert_int_equal(s.new_tokens, 1540 + 300 + 50 + 1200 + 100);
	/* hits in order s1#0 (0.5 s), sub1 (1.0), request (1.0), s1#1 (2.75),
	 * s1#2 (3.75): sub1 reuses 62 blocks of "sys"; s1#1 the 103 full
	 * blocks s1#0 left (1540 + 120 - 1 tokens); s1#2 the 127 s1#1 left */
	assert_int_equal(s.hit_tokens_unbounded, 62 * 16 + 103 * 16 + 127 * 16);
	assert_true(fabs(s.prefix_hit_rate_unbounded - 4672.0 / 6890.0) < 1e-12);
	assert_int_equal(s.tool_ok, 2);
	assert_int_equal(s.tool_fail, 1);
	assert_true(fabs(s.tool_failure_rate - 1.0 / 3.0) < 1e-12);
	assert_int_equal(s.retry_calls, 1);
	assert_int_equal(s.retry_prompt_tokens, 2090);
	assert_int_equal(s.gap_s.n, 2);
	assert_true(fabs(s.gap_s.p50 - 1.625) < 1e-9);
	assert_true(fabs(s.first_t_s - 0.5) < 1e-12 && fabs(s.last_t_s - 3.75) < 1e-12);
	/* at 40 tokens/s: s1#0 runs 0.5..3.5; sub1 starts at 1.0 beside it, the
	 * request at 1.0 beside both; s1#1 starts 3.5 + 2.25, s1#2 after it */
	assert_int_equal(s.concurrency.n, 5);
	assert_true(s.concurrency.max == 3 && s.concurrency.p50 == 1);
	assert_true(fabs(s.concurrency.mean - 8.0 / 5.0) < 1e-12);
	assert_int_equal(s.calls_per_session.n, 2);
	assert_true(s.calls_per_session.max == 3 && s.calls_per_session.min == 1);
	assert_int_equal(s.calls_per_task.n, 1);
	/* one turn: s1's t1 with sub1 inside s1#0; s1#1 runs 5.75..7.75 and
	 * s1#2 8.75..9.75: (3 + 0.125 + 2 + 1) / (3 + 2 + 1); the request is
	 * in no turn */
	assert_int_equal(s.turns, 1);
	assert_int_equal(s.overlap_turns, 1);
	assert_true(fabs(s.overlap_concurrency.p50 - 6.125 / 6.0) < 1e-12);
	/* an unbounded cache holds every block: the curve ends at the same hits */
	assert_int_equal(stats_hit_tokens_at(st, s.distinct_blocks), s.hit_tokens_unbounded);
	assert_int_equal(stats_hit_tokens_at(st, INT64_MAX), s.hit_tokens_unbounded);
	assert_int_equal(stats_hit_tokens_at(st, 0), 0);
	stats_free(st);
}

/* Turns at 10 tokens/s.  Root r: task A 0..2 and 3..4, task B 6..9,
 * task C 10..11 and 12..13.  Its subagent a1 (task A) runs 1..3 and
 * 3.5..4.5, a1's own subagent a2 (task A, so r's turn) 1.5..2.5; b1 (task
 * C) fills 11..12 exactly between r's calls.  Root q (task D) runs
 * 20..22 with q1 20..22 and q2 21..22; `late`, a subagent of q1, starts at
 * 30 after turn D closed (22) and opens a turn of its own. */
static const char TURNS[] = HDR
	"{\"session\":\"r\",\"engineer\":\"e1\",\"task\":\"A\",\"t\":0,\"prompt\":[[\"p\",100]],\"output_tokens\":20}\n"
	"{\"session\":\"r\",\"task\":\"A\",\"gap\":1,\"prompt\":[[\"p\",100]],\"output_tokens\":10}\n"
	"{\"session\":\"r\",\"task\":\"B\",\"gap\":2,\"prompt\":[[\"p\",100]],\"output_tokens\":30}\n"
	"{\"session\":\"r\",\"task\":\"C\",\"gap\":1,\"prompt\":[[\"p\",100]],\"output_tokens\":10}\n"
	"{\"session\":\"r\",\"task\":\"C\",\"gap\":1,\"prompt\":[[\"p\",100]],\"output_tokens\":10}\n"
	"{\"session\":\"a1\",\"parent_session\":\"r\",\"task\":\"A\",\"t\":1,\"prompt\":[[\"p\",100]],\"output_tokens\":20}\n"
	"{\"session\":\"a1\",\"task\":\"A\",\"gap\":0.5,\"prompt\":[[\"p\",100]],\"output_tokens\":10}\n"
	"{\"session\":\"a2\",\"parent_session\":\"a1\",\"task\":\"A\",\"t\":1.5,\"prompt\":[[\"p\",100]],\"output_tokens\":10}\n"
	"{\"session\":\"b1\",\"parent_session\":\"r\",\"task\":\"C\",\"t\":11,\"prompt\":[[\"p\",100]],\"output_tokens\":10}\n"
	"{\"session\":\"q\",\"engineer\":\"e2\",\"task\":\"D\",\"t\":20,\"prompt\":[[\"p\",100]],\"output_tokens\":20}\n"
	"{\"session\":\"q1\",\"parent_session\":\"q\",\"task\":\"D\",\"t\":20,\"prompt\":[[\"p\",100]],\"output_tokens\":20}\n"
	"{\"session\":\"q2\",\"parent_session\":\"q\",\"task\":\"D\",\"t\":21,\"prompt\":[[\"p\",100]],\"output_tokens\":10}\n"
	"{\"session\":\"late\",\"parent_session\":\"q1\",\"task\":\"D\",\"t\":30,\"prompt\":[[\"p\",100]],\"output_tokens\":10}\n";

static void test_turn_overlap_by_hand(void **state)
{
	(void)state;
	struct stats_opts o = {.block_size = 16, .decode_tokens_per_s = 10};
	struct stats *st;
	struct stats_summary s;
	read_stats(TURNS, "stats_turns.jsonl", &o, &st, &s);
	assert_int_equal(s.calls, 13);
	/* A, B, C, D and late's D */
	assert_int_equal(s.turns, 5);
	/* A: durations 2 + 1 + 2 + 1 + 1 = 7 over the union 0..4.5 (the pieces
	 * 0..3 and 3..4.5 touch); D: 2 + 2 + 1 = 5 over 20..22.  B and C (b1
	 * only touches r's calls) and late's turn do not overlap. */
	assert_int_equal(s.overlap_turns, 2);
	assert_int_equal(s.overlap_concurrency.n, 2);
	const double a = 7.0 / 4.5, dd = 5.0 / 2.0;
	assert_true(fabs(s.overlap_concurrency.min - a) < 1e-12);
	assert_true(fabs(s.overlap_concurrency.max - dd) < 1e-12);
	assert_true(fabs(s.overlap_concurrency.p50 - (a + dd) / 2) < 1e-12);
	assert_true(fabs(s.overlap_concurrency.p90 - (a + 0.9 * (dd - a))) < 1e-12);
	stats_free(st);
	/* at 20 tokens/s every call halves: A's pieces 0..1 (r), 1..2 (a1),
	 * 1.5..2 (a2), 2..2.5 (r), 2.5..3 (a1) fill 0..3 with 3.5 s of calls.
	 * r's task C now ends at 9, before b1 starts at 11: b1 opens a turn of
	 * its own.  D: q and q1 run 20..21 and leave at 21, when q2 starts, so
	 * q2 still joins: (1 + 1 + 0.5) / 1.5. */
	o.decode_tokens_per_s = 20;
	read_stats(TURNS, "stats_turns20.jsonl", &o, &st, &s);
	assert_int_equal(s.turns, 6);
	assert_int_equal(s.overlap_turns, 2);
	assert_true(fabs(s.overlap_concurrency.min - 3.5 / 3.0) < 1e-12);
	assert_true(fabs(s.overlap_concurrency.max - 2.5 / 1.5) < 1e-12);
	stats_free(st);
}

static void test_block_rules(void **state)
{
	(void)state;
	/* the second prompt equals the first: never the whole prompt, so with
	 * 32 tokens and 16-token blocks one block (16 tokens) is reused; with
	 * 33 tokens two blocks */
	struct stats *st;
	struct stats_summary s;
	read_stats(HDR "{\"t\":0,\"prompt\":[[\"a\",32]],\"output_tokens\":1}\n"
		   "{\"t\":1,\"prompt\":[[\"a\",32]],\"output_tokens\":1}\n"
		   "{\"t\":2,\"prompt\":[[\"b\",33]],\"output_tokens\":1}\n"
		   "{\"t\":3,\"prompt\":[[\"b\",33]],\"output_tokens\":1}\n",
		   "stats_rules.jsonl", NULL, &st, &s);
	assert_int_equal(s.hit_tokens_unbounded, 16 + 32);
	assert_int_equal(s.new_tokens, 32 * 2 + 33 * 2); /* no sessions: all new */
	stats_free(st);
	/* the same with 8-token blocks: 3 of 4 blocks, then all 4 of the 33 */
	struct stats_opts o = {.block_size = 8, .decode_tokens_per_s = 50};
	read_stats(HDR "{\"t\":0,\"prompt\":[[\"a\",32]],\"output_tokens\":1}\n"
		   "{\"t\":1,\"prompt\":[[\"a\",32]],\"output_tokens\":1}\n"
		   "{\"t\":2,\"prompt\":[[\"b\",33]],\"output_tokens\":1}\n"
		   "{\"t\":3,\"prompt\":[[\"b\",33]],\"output_tokens\":1}\n",
		   "stats_rules8.jsonl", &o, &st, &s);
	assert_int_equal(s.hit_tokens_unbounded, 24 + 32);
	stats_free(st);
}

static void test_new_tokens_restated_prompt(void **state)
{
	(void)state;
	/* a call that restates its history instead of extending: new tokens are
	 * what follows the common prefix with the previous prompt + output */
	struct stats *st;
	struct stats_summary s;
	read_stats(HDR "{\"session\":\"a\",\"t\":0,\"prompt\":[[\"sys\",100],[\"u\",10]],\"output_tokens\":7}\n"
		   "{\"session\":\"a\",\"gap\":1,\"extends\":true,\"prompt\":[[\"r\",5]],\"output_tokens\":3}\n"
		   "{\"session\":\"a\",\"gap\":1,\"prompt\":[[\"sys\",100],[\"u\",10],[\"z\",9]],\"output_tokens\":3}\n",
		   "stats_restated.jsonl", NULL, &st, &s);
	assert_int_equal(s.new_tokens_per_call.n, 3);
	assert_int_equal(s.new_tokens, 110 + 5 + 9);
	assert_true(s.new_tokens_per_call.max == 110 && s.new_tokens_per_call.min == 5);
	assert_int_equal(s.tasks, 1); /* one run of calls without a task id */
	stats_free(st);
}

static void test_percentiles(void **state)
{
	(void)state;
	/* outputs 1..10: mean 5.5, median 5.5, p90 9.1, p99 9.91 (linear
	 * interpolation between ranks); inputs all 7 */
	char body[4096] = HDR;
	for (int i = 1; i <= 10; i++) {
		char line[160];
		snprintf(line, sizeof(line), "{\"t\":%d,\"prompt\":[[\"p%d\",7]],\"output_tokens\":%d}\n",
			 i, i, 11 - i);
		strcat(body, line);
	}
	struct stats *st;
	struct stats_summary s;
	struct stats_opts slow = {.block_size = 16, .decode_tokens_per_s = 1};
	read_stats(body, "stats_pct.jsonl", &slow, &st, &s);
	const struct stats_dist *o = &s.output_tokens_per_call;
	assert_int_equal(o->n, 10);
	assert_true(fabs(o->mean - 5.5) < 1e-12 && fabs(o->p50 - 5.5) < 1e-12);
	assert_true(fabs(o->p90 - 9.1) < 1e-9 && fabs(o->p99 - 9.91) < 1e-9);
	assert_true(o->min == 1 && o->max == 10);
	assert_true(s.input_tokens.p50 == 7 && s.input_tokens.p99 == 7);
	/* 1 token/s: call i runs (11 - i) s from t = i, so all overlap */
	assert_true(s.concurrency.max == 10);
	stats_free(st);
}

/* ---- the LRU curve against a naive LRU cache ---- */

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

#define N_SESS 70
#define MAX_CALLS 8
#define MAX_SEGS 64

struct gen_sess {
	struct trace_session s;
	struct trace_call calls[MAX_CALLS];
	struct trace_seg segs[MAX_CALLS][MAX_SEGS];
	int64_t t_us[MAX_CALLS];   /* zero-service call times, microseconds */
};

/* Random sessions with a shared system prompt, a few shared repositories,
 * extends chains and restated prompts; times in whole microseconds. */
static void generate(struct gen_sess *g, struct rng *r)
{
	int64_t t_us = 0;
	for (int i = 0; i < N_SESS; i++) {
		struct gen_sess *x = &g[i];
		memset(x, 0, sizeof(*x));
		t_us += rnd_in(r, 1, 4000000);
		x->s.id = trace_id_hash((char[]){(char)('A' + i % 26), (char)('a' + i / 26), 0});
		x->s.t_s = (double)t_us / 1e6;
		x->s.calls = x->calls;
		x->s.n_calls = (size_t)rnd_in(r, 1, MAX_CALLS);
		x->s.line = i + 2;
		int64_t tt = t_us;
		for (size_t k = 0; k < x->s.n_calls; k++) {
			struct trace_call *c = &x->calls[k];
			c->seq = (int64_t)k;
			c->retry_of = -1;
			c->segs = x->segs[k];
			c->output_tokens = rnd_in(r, 1, 90);
			if (k > 0) {
				int64_t gap_us = rnd_in(r, 0, 20000000);
				c->gap_s = (double)gap_us / 1e6;
				tt += gap_us;
			}
			x->t_us[k] = tt;
			if (k > 0 && rnd(r) % 4 != 0) {
				c->extends_prev = true;
				size_t n = (size_t)rnd_in(r, 1, 2);
				int64_t tok = 0;
				for (size_t q = 0; q < n; q++) {
					c->segs[q].content = rnd(r);
					c->segs[q].tokens = rnd_in(r, 1, 70);
					tok += c->segs[q].tokens;
				}
				c->n_segs = n;
				c->prompt_tokens = x->calls[k - 1].prompt_tokens +
						   x->calls[k - 1].output_tokens + tok;
				continue;
			}
			/* system prompt, one of 4 repositories, then own content */
			c->segs[0] = (struct trace_seg){.content = 1001, .tokens = 200};
			c->segs[1] = (struct trace_seg){.content = 2000 + rnd(r) % 4, .tokens = 150};
			c->segs[2] = (struct trace_seg){.content = rnd(r) % 50, .tokens = 40};
			c->segs[3] = (struct trace_seg){.content = rnd(r), .tokens = rnd_in(r, 1, 100)};
			c->n_segs = 4;
			c->prompt_tokens = 390 + c->segs[3].tokens;
		}
		assert_true(trace_session_check(&x->s));
	}
}

struct ref_call {
	int64_t t_us;
	int sess;
	size_t call;
};

static int ref_cmp(const void *a, const void *b)
{
	const struct ref_call *x = a, *y = b;
	return (x->t_us > y->t_us) - (x->t_us < y->t_us);
}

/* Naive LRU: MRU first, linear search; capacity < 0 means unbounded. */
struct naive {
	uint64_t *h;
	int64_t n, cap;
};

static int64_t naive_find(const struct naive *c, uint64_t h)
{
	for (int64_t i = 0; i < c->n; i++)
		if (c->h[i] == h)
			return i;
	return -1;
}

static void naive_touch(struct naive *c, uint64_t h)
{
	int64_t i = naive_find(c, h);
	if (i < 0) {
		i = c->n < c->cap ? c->n++ : c->n - 1; /* evict the LRU end */
	}
	memmove(c->h + 1, c->h, (size_t)i * sizeof(*c->h));
	c->h[0] = h;
}

static int64_t naive_hits(const struct gen_sess *g, const struct ref_call *order, size_t n_order,
			  int64_t B, int64_t cap, int64_t room)
{
	struct naive c = {.h = calloc((size_t)room, sizeof(uint64_t)), .cap = cap};
	struct tchain chain[N_SESS];
	struct vec hashes[N_SESS];
	for (int i = 0; i < N_SESS; i++)
		vec_init(&hashes[i], sizeof(uint64_t), VEC_NO_LIMIT);
	int64_t hits = 0;
	for (size_t q = 0; q < n_order; q++) {
		const struct gen_sess *x = &g[order[q].sess];
		const struct trace_call *cl = &x->calls[order[q].call];
		struct tchain *ch = &chain[order[q].sess];
		struct vec *hv = &hashes[order[q].sess];
		if (!cl->extends_prev) {
			tchain_init(ch, B);
			vec_clear(hv);
		}
		for (size_t k = 0; k < cl->n_segs; k++)
			assert_int_equal(tchain_feed(ch, cl->segs[k].content, cl->segs[k].tokens, hv), 0);
		assert_int_equal(tchain_feed(ch, trace_output_content(x->s.id, cl->seq), cl->output_tokens, hv), 0);
		const uint64_t *h = hv->data;
		int64_t nb = (int64_t)hv->len;
		int64_t lim = (cl->prompt_tokens - 1) / B < nb ? (cl->prompt_tokens - 1) / B : nb;
		for (int64_t k = 0; k < lim && naive_find(&c, h[k]) >= 0; k++)
			hits += B;
		int64_t held = (cl->prompt_tokens + cl->output_tokens - 1) / B;
		if (held > nb)
			held = nb;
		for (int64_t k = held - 1; k >= 0; k--)
			naive_touch(&c, h[k]);
	}
	for (int i = 0; i < N_SESS; i++)
		vec_release(&hashes[i]);
	free(c.h);
	return hits;
}

static void test_curve_matches_naive_lru(void **state)
{
	(void)state;
	struct gen_sess *g = malloc(N_SESS * sizeof(*g));
	struct rng r = {.s = 0x5eed5eed12345ULL};
	generate(g, &r);
	struct ref_call order[N_SESS * MAX_CALLS];
	size_t n_order = 0;
	for (int i = 0; i < N_SESS; i++)
		for (size_t k = 0; k < g[i].s.n_calls; k++)
			order[n_order++] = (struct ref_call){.t_us = g[i].t_us[k], .sess = i, .call = k};
	qsort(order, n_order, sizeof(order[0]), ref_cmp);
	for (size_t q = 1; q < n_order; q++)
		assert_true(order[q].t_us != order[q - 1].t_us); /* no ties: order is plain */

	const int64_t B = 4; /* small blocks: > 4096 accesses, so positions get compacted */
	struct stats_opts o = {.block_size = B, .decode_tokens_per_s = 30};
	struct stats *st;
	struct diag d;
	diag_init(&d);
	assert_int_equal(stats_new(&st, &o, &d), 0);
	for (int i = 0; i < N_SESS; i++) {
		struct trace_session *copy;
		assert_int_equal(trace_session_clone(&copy, &g[i].s), 0);
		assert_int_equal(stats_add(st, copy, &d), 0);
	}
	struct stats_summary s;
	assert_int_equal(stats_finish(st, &s, &d), 0);
	int64_t U = s.distinct_blocks;
	assert_true(U > 4096);   /* more blocks than the first tree holds */

	int64_t unbounded = naive_hits(g, order, n_order, B, U + 1, U + 1);
	assert_int_equal(s.hit_tokens_unbounded, unbounded);
	assert_true(unbounded > 0 && unbounded < s.prompt_tokens);
	const int64_t caps[] = {1, 2, 3, 7, 20, 64, 100, 250, 500, U / 2, U - 1, U, U + 5};
	int64_t prev = -1;
	for (size_t i = 0; i < sizeof(caps) / sizeof(caps[0]); i++) {
		int64_t want = naive_hits(g, order, n_order, B, caps[i], U + 5);
		int64_t got = stats_hit_tokens_at(st, caps[i]);
		if (got != want)
			fail_msg("capacity %lld blocks: stats %lld, naive LRU %lld", (long long)caps[i],
				 (long long)got, (long long)want);
		assert_true(got >= prev); /* LRU: more capacity, never fewer hits */
		prev = got;
	}
	stats_free(st);
	/* without the curve: the same unbounded figures from the segment trie */
	o.no_curve = true;
	assert_int_equal(stats_new(&st, &o, &d), 0);
	for (int i = 0; i < N_SESS; i++) {
		struct trace_session *copy;
		assert_int_equal(trace_session_clone(&copy, &g[i].s), 0);
		assert_int_equal(stats_add(st, copy, &d), 0);
	}
	struct stats_summary s2;
	assert_int_equal(stats_finish(st, &s2, &d), 0);
	assert_int_equal(s2.hit_tokens_unbounded, unbounded);
	assert_int_equal(s2.distinct_blocks, U);
	assert_int_equal(stats_hit_tokens_at(st, U), -1);
	stats_free(st);

	/* the sampled curve with room for every block samples them all (rate
	 * 1): the same LRU stack, binned by distance 256 bins to an octave, so
	 * exact below about 370 blocks (bins narrower than a block) and within
	 * a bin's share above; the last point is the exact unbounded count */
	o.no_curve = false;
	o.curve = STATS_CURVE_SAMPLED;
	o.sample_blocks = (int64_t)1 << 20;
	assert_int_equal(stats_new(&st, &o, &d), 0);
	for (int i = 0; i < N_SESS; i++) {
		struct trace_session *copy;
		assert_int_equal(trace_session_clone(&copy, &g[i].s), 0);
		assert_int_equal(stats_add(st, copy, &d), 0);
	}
	assert_int_equal(stats_finish(st, &s2, &d), 0);
	assert_true(s2.curve_sampled && s2.curve_sample_rate == 1.0);
	assert_int_equal(s2.curve_sample_blocks, U);
	assert_int_equal(s2.hit_tokens_unbounded, unbounded);
	assert_int_equal(s2.distinct_blocks, U);
	for (size_t i = 0; i < sizeof(caps) / sizeof(caps[0]); i++) {
		int64_t want = naive_hits(g, order, n_order, B, caps[i], U + 5);
		int64_t got = stats_hit_tokens_at(st, caps[i]);
		int64_t tol = caps[i] < 300 ? 0 : s.prompt_tokens / 200;
		if (got < want - tol || got > want + tol)
			fail_msg("sampled at rate 1, capacity %lld blocks: %lld, naive LRU %lld",
				 (long long)caps[i], (long long)got, (long long)want);
	}
	stats_free(st);

	/* a sample of 512 blocks: the threshold drops, the sample stays within
	 * its size, the curve never falls and ends at the exact count */
	o.sample_blocks = 512;
	assert_int_equal(stats_new(&st, &o, &d), 0);
	for (int i = 0; i < N_SESS; i++) {
		struct trace_session *copy;
		assert_int_equal(trace_session_clone(&copy, &g[i].s), 0);
		assert_int_equal(stats_add(st, copy, &d), 0);
	}
	assert_int_equal(stats_finish(st, &s2, &d), 0);
	assert_true(s2.curve_sampled && s2.curve_sample_rate < 0.5);
	assert_true(s2.curve_sample_blocks <= 512 && s2.curve_sample_blocks > 0);
	assert_int_equal(s2.hit_tokens_unbounded, unbounded);
	prev = 0;
	for (int64_t c = 1; c <= U; c += 1 + c / 8) {
		int64_t got = stats_hit_tokens_at(st, c);
		assert_true(got >= prev && got <= unbounded);
		prev = got;
	}
	assert_int_equal(stats_hit_tokens_at(st, U), unbounded);
	stats_free(st);
	free(g);
}

/* auto: a trace past the exact curve's limit is read again with the sampled
 * curve; every figure but the curve is the exact run's. */
static void test_auto_switches_to_sampled(void **state)
{
	(void)state;
	char path[512];
	testutil_scratch(path, sizeof(path), "stats_auto.jsonl");
	/* four sessions of 40-block calls sharing a 20-block prefix: 100
	 * distinct blocks in all, none of the calls over 90 */
	char text[4096];
	int at = snprintf(text, sizeof(text), "{\"format\":\"agentcap-trace\",\"version\":1}\n");
	for (int i = 0; i < 4; i++)
		at += snprintf(text + at, sizeof(text) - (size_t)at,
			       "{\"session\":\"s%d\",\"t\":%d,\"prompt\":[[\"sys\",320],[\"u%d\",320]],"
			       "\"output_tokens\":1}\n", i, i, i);
	testutil_write_str(path, text);
	struct stats_opts o = {.block_size = 16, .decode_tokens_per_s = 50, .curve = STATS_CURVE_EXACT};
	struct stats *st;
	struct diag d;
	diag_init(&d);
	struct stats_summary ex, au;
	assert_int_equal(stats_new(&st, &o, &d), 0);
	assert_int_equal(stats_read(st, path, TRACE_FMT_AUTO, false, &ex, NULL, &d), 0);
	assert_false(ex.curve_sampled);
	assert_int_equal(ex.distinct_blocks, 100);
	stats_free(st);
	/* exact with a limit of 90 blocks: refused, as before */
	o.max_curve_blocks = 90;
	assert_int_equal(stats_new(&st, &o, &d), 0);
	assert_int_equal(stats_read(st, path, TRACE_FMT_AUTO, false, &au, NULL, &d), DIAG_EINPUT);
	assert_non_null(strstr(d.msg, "more than 90 blocks"));
	stats_free(st);
	/* auto with the same limit: read again, sampled */
	o.curve = STATS_CURVE_AUTO;
	diag_init(&d);
	assert_int_equal(stats_new(&st, &o, &d), 0);
	assert_int_equal(stats_read(st, path, TRACE_FMT_AUTO, false, &au, NULL, &d), 0);
	assert_true(au.curve_sampled);
	assert_int_equal(au.calls, ex.calls);
	assert_int_equal(au.prompt_tokens, ex.prompt_tokens);
	assert_int_equal(au.hit_tokens_unbounded, ex.hit_tokens_unbounded);
	assert_int_equal(au.distinct_blocks, ex.distinct_blocks);
	assert_true(au.input_tokens.p50 == ex.input_tokens.p50);
	assert_int_equal(stats_hit_tokens_at(st, 100), ex.hit_tokens_unbounded);
	stats_free(st);
}

static void test_errors(void **state)
{
	(void)state;
	struct stats *st = NULL;
	struct diag d;
	diag_init(&d);
	struct stats_opts bad = {.block_size = 0, .decode_tokens_per_s = 50};
	assert_int_equal(stats_new(&st, &bad, &d), DIAG_EINPUT);
	assert_null(st);
	assert_non_null(strstr(d.msg, "block size 0"));
	diag_init(&d);
	struct stats_opts bad2 = {.block_size = 16, .decode_tokens_per_s = 0};
	assert_int_equal(stats_new(&st, &bad2, &d), DIAG_EINPUT);
	assert_non_null(strstr(d.msg, "decode rate"));

	/* sessions out of start order */
	diag_init(&d);
	assert_int_equal(stats_new(&st, NULL, &d), 0);
	struct trace_seg seg = {.content = 5, .tokens = 40};
	struct trace_call c = {.segs = &seg, .n_segs = 1, .prompt_tokens = 40, .output_tokens = 3,
			       .retry_of = -1};
	struct trace_session a = {.id = 1, .t_s = 10, .calls = &c, .n_calls = 1, .line = 2};
	struct trace_session b = {.id = 2, .t_s = 9, .calls = &c, .n_calls = 1, .line = 3};
	struct trace_session *x;
	assert_int_equal(trace_session_clone(&x, &a), 0);
	assert_int_equal(stats_add(st, x, &d), 0);
	assert_int_equal(trace_session_clone(&x, &b), 0);
	assert_int_equal(stats_add(st, x, &d), DIAG_EINPUT);
	assert_string_equal(d.msg, "line 3: session starts before the previous one "
			    "(expected sessions in start order)");
	/* a session that breaks the rules (prompt tokens do not add up) */
	diag_init(&d);
	struct trace_call bc = c;
	bc.prompt_tokens = 41;
	struct trace_session bs = {.id = 3, .t_s = 11, .calls = &bc, .n_calls = 1, .line = 4};
	assert_int_equal(trace_session_clone(&x, &bs), 0);
	assert_int_equal(stats_add(st, x, &d), DIAG_EINPUT);
	assert_non_null(strstr(d.msg, "line 4"));
	stats_free(st);

	/* a bad trace line names file:line:col; an unreadable file fails */
	char path[512];
	testutil_scratch(path, sizeof(path), "stats_bad.jsonl");
	testutil_write_str(path, HDR "{\"t\":0,\"prompt\":[[\"a\",0]],\"output_tokens\":1}\n");
	diag_init(&d);
	assert_int_equal(stats_new(&st, NULL, &d), 0);
	struct stats_summary s;
	assert_int_equal(stats_read(st, path, TRACE_FMT_AUTO, false, &s, NULL, &d), DIAG_EINPUT);
	assert_non_null(strstr(d.msg, "stats_bad.jsonl:2:"));
	stats_free(st);
	/* ... unless skipped */
	testutil_write_str(path, HDR "{\"t\":0,\"prompt\":[[\"a\",0]],\"output_tokens\":1}\n"
			   "{\"t\":1,\"prompt\":[[\"a\",20]],\"output_tokens\":1}\n");
	diag_init(&d);
	assert_int_equal(stats_new(&st, NULL, &d), 0);
	struct stats_source src;
	assert_int_equal(stats_read(st, path, TRACE_FMT_AUTO, true, &s, &src, &d), 0);
	assert_int_equal(src.skipped_lines, 1);
	assert_non_null(strstr(src.first_skipped, ":2:"));
	assert_int_equal(s.calls, 1);
	stats_free(st);
	diag_init(&d);
	assert_int_equal(stats_new(&st, NULL, &d), 0);
	assert_int_equal(stats_read(st, "/nonexistent/stats.jsonl", TRACE_FMT_AUTO, false, &s, NULL, &d),
			 DIAG_EIO);
	stats_free(st);
}

static long maxrss_mb(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss / 1024;
}

/* A two-line trace whose one call has a 10^9-token segment: 62.5 million
 * blocks of 16 tokens, about 4 GB for the curve once.  Refused before any
 * block is hashed, naming the file and line; without the curve (memory per
 * segment) the same file is fine. */
static void test_huge_segment_checked_first(void **state)
{
	(void)state;
	char path[512];
	testutil_scratch(path, sizeof(path), "huge_segment.jsonl");
	testutil_write_str(path, "{\"format\":\"agentcap-trace\",\"version\":1}\n"
			   "{\"session\":\"a\",\"t\":0,\"prompt\":[[\"x\",1000000000]],"
			   "\"output_tokens\":1}\n");
	long rss0 = maxrss_mb();
	struct stats *st;
	struct diag d;
	diag_init(&d);
	assert_int_equal(stats_new(&st, NULL, &d), 0);
	struct stats_summary s;
	assert_int_equal(stats_read(st, path, TRACE_FMT_AUTO, false, &s, NULL, &d), DIAG_EINPUT);
	char want[700];
	snprintf(want, sizeof(want), "%s:2: call 0 needs the capacity curve to track more than "
		 "33554432 blocks of 16 tokens (expected a smaller trace, a larger --block-size, or "
		 "--no-curve)", path);
	assert_string_equal(d.msg, want);
	stats_free(st);
	assert_true(maxrss_mb() < rss0 + 64);
	struct stats_opts o = {.block_size = 16, .decode_tokens_per_s = 50, .no_curve = true};
	diag_init(&d);
	assert_int_equal(stats_new(&st, &o, &d), 0);
	assert_int_equal(stats_read(st, path, TRACE_FMT_AUTO, false, &s, NULL, &d), 0);
	assert_int_equal(s.prompt_tokens, 1000000000);
	stats_free(st);
	assert_true(maxrss_mb() < rss0 + 64);
	/* a lower limit is honoured at the same point */
	o = (struct stats_opts){.block_size = 16, .decode_tokens_per_s = 50, .max_curve_blocks = 100};
	testutil_write_str(path, "{\"format\":\"agentcap-trace\",\"version\":1}\n"
			   "{\"session\":\"a\",\"t\":0,\"prompt\":[[\"x\",1600]],\"output_tokens\":1}\n"
			   "{\"session\":\"a\",\"gap\":1,\"extends\":true,\"prompt\":[[\"y\",15]],"
			   "\"output_tokens\":1}\n");
	diag_init(&d);
	assert_int_equal(stats_new(&st, &o, &d), 0);
	assert_int_equal(stats_read(st, path, TRACE_FMT_AUTO, false, &s, NULL, &d), DIAG_EINPUT);
	assert_non_null(strstr(d.msg, ":3: call 1 needs the capacity curve to track more than 100 "));
	stats_free(st);
}

static void test_empty_and_free_midway(void **state)
{
	(void)state;
	struct stats *st;
	struct stats_summary s;
	read_stats(HDR, "stats_empty.jsonl", NULL, &st, &s);
	assert_int_equal(s.calls, 0);
	assert_true(s.prefix_hit_rate_unbounded == 0 && s.input_tokens.n == 0);
	assert_int_equal(stats_hit_tokens_at(st, 100), 0);
	stats_free(st);
	/* freeing with sessions still pending releases them (ASan checks) */
	struct diag d;
	diag_init(&d);
	assert_int_equal(stats_new(&st, NULL, &d), 0);
	struct trace_session *x;
	char path[512];
	testutil_scratch(path, sizeof(path), "stats_pending.jsonl");
	testutil_write_str(path, EXAMPLE);
	struct trace_session **all;
	size_t n;
	char msg[256];
	assert_int_equal(testutil_read_all(path, &all, &n, msg, sizeof(msg)), 0);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(trace_session_clone(&x, all[i]), 0);
		assert_int_equal(stats_add(st, x, &d), 0);
	}
	testutil_free_all(all, n);
	stats_free(st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_example_by_hand),
		cmocka_unit_test(test_turn_overlap_by_hand),
		cmocka_unit_test(test_block_rules),
		cmocka_unit_test(test_new_tokens_restated_prompt),
		cmocka_unit_test(test_percentiles),
		cmocka_unit_test(test_curve_matches_naive_lru),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_huge_segment_checked_first),
		cmocka_unit_test(test_auto_switches_to_sampled),
		cmocka_unit_test(test_empty_and_free_midway),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
