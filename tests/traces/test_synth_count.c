/* SPDX-License-Identifier: Apache-2.0
 * test_synth_count: independent count of a synthetic trace's figures (see
 * test_synth_count.h).  Memory: one boundary hash per distinct prompt
 * prefix, one content hash per distinct segment, and a few numbers per call
 * (medians and intervals), which is fine for test- and bench-sized traces.
 */
#include "tests/traces/test_synth_count.h"

#include "base/diag.h"
#include "base/hash.h"
#include "base/map.h"
#include "base/vec.h"
#include "traces/reader.h"
#include "traces/trace.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* cmocka's assertions, not assert(): they also check in builds with NDEBUG. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#define CHAIN_SEED 0x51ec0c0a7c4a1115ULL

struct interval {
	int64_t tree;  /* the turn: (session tree, task) */
	double start, end;
};

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static int cmp_interval(const void *a, const void *b)
{
	const struct interval *x = a, *y = b;
	if (x->tree != y->tree)
		return (x->tree > y->tree) - (x->tree < y->tree);
	return (x->start > y->start) - (x->start < y->start);
}

/* Linear interpolation between the two nearest ranks of sorted v[0..n). */
static double pct_i64(const int64_t *v, size_t n, double q)
{
	if (n == 0)
		return 0;
	double pos = q * (double)(n - 1);
	size_t lo = (size_t)floor(pos), hi = lo + 1 < n ? lo + 1 : lo;
	return (double)v[lo] + (pos - (double)lo) * (double)(v[hi] - v[lo]);
}

static double pct_double(const double *v, size_t n, double q)
{
	if (n == 0)
		return 0;
	double pos = q * (double)(n - 1);
	size_t lo = (size_t)floor(pos), hi = lo + 1 < n ? lo + 1 : lo;
	return v[lo] + (pos - (double)lo) * (v[hi] - v[lo]);
}

struct counter {
	int64_t block;
	double decode;
	struct map seen;       /* boundary chain hash -> tokens an earlier call holds */
	struct map contents;   /* contents seen so far */
	struct map trees;      /* session id -> tree index */
	struct map turns;      /* hash of (tree, task) -> turn index */
	int64_t n_turns;
	struct map engineers;
	struct vec prompts, outputs;  /* int64_t per call */
	struct vec intervals;         /* struct interval per call */
	/* the session being counted: its context as segment boundaries */
	struct vec bhash;      /* uint64_t: chain hash after each segment */
	struct vec btok;       /* int64_t: tokens after each segment */
	struct vec attempts;   /* int32_t per call of the session: retries naming it */
	struct synth_count *out;
};

/* Append one segment to the current context's boundaries. */
static void push_boundary(struct counter *c, uint64_t content, int64_t tokens)
{
	size_t n = c->bhash.len;
	uint64_t prev = n ? VEC_AT(&c->bhash, uint64_t, n - 1) : CHAIN_SEED;
	int64_t before = n ? VEC_AT(&c->btok, int64_t, n - 1) : 0;
	uint64_t *h = vec_push(&c->bhash);
	int64_t *t = vec_push(&c->btok);
	assert_true(h && t);
	*h = hash_combine(prev, content);
	*t = before + tokens;
}

static void count_call(struct counter *c, const struct trace_session *s, size_t i)
{
	const struct trace_call *call = &s->calls[i];
	struct synth_count *o = c->out;
	size_t keep = 0; /* boundaries already registered with enough tokens */
	if (call->extends_prev) {
		keep = c->bhash.len ? c->bhash.len - 1 : 0;
	} else {
		vec_clear(&c->bhash);
		vec_clear(&c->btok);
	}
	for (size_t k = 0; k < call->n_segs; k++) {
		const struct trace_seg *g = &call->segs[k];
		push_boundary(c, g->content, g->tokens);
		if (!map_get(&c->contents, g->content)) {
			o->new_tokens += g->tokens;
			assert_int_equal(map_put(&c->contents, g->content, 1), 0);
		}
	}
	int64_t P = call->prompt_tokens;
	assert_int_equal(VEC_AT(&c->btok, int64_t, c->bhash.len - 1), P);
	/* Longest prefix an earlier call held: the deepest boundary seen. */
	int64_t avail = 0;
	for (size_t k = c->bhash.len; k-- > 0;) {
		const uint64_t *v = map_get(&c->seen, VEC_AT(&c->bhash, uint64_t, k));
		if (v) {
			avail = (int64_t)*v;
			break;
		}
	}
	int64_t usable = avail < P - 1 ? avail : P - 1;
	int64_t cached = usable / c->block * c->block;
	o->cached_tokens += cached;
	o->prompt_tokens += P;
	o->output_tokens += call->output_tokens;
	/* This call holds its prompt and output but the last token. */
	uint64_t out_content = trace_output_content(s->id, call->seq);
	push_boundary(c, out_content, call->output_tokens);
	if (!map_get(&c->contents, out_content)) {
		assert_int_equal(map_put(&c->contents, out_content, 1), 0);
	}
	int64_t held = P + call->output_tokens - 1;
	for (size_t k = keep; k < c->bhash.len; k++) {
		int64_t tok = VEC_AT(&c->btok, int64_t, k);
		uint64_t v = (uint64_t)(tok < held ? tok : held);
		uint64_t key = VEC_AT(&c->bhash, uint64_t, k);
		const uint64_t *old = map_get(&c->seen, key);
		if (!old || *old < v) {
			assert_int_equal(map_put(&c->seen, key, v), 0);
		}
	}
	int64_t *pp = vec_push(&c->prompts), *op = vec_push(&c->outputs);
	assert_true(pp && op);
	*pp = P;
	*op = call->output_tokens;
	if (call->tool == TRACE_TOOL_OK)
		o->tool_ok++;
	else if (call->tool == TRACE_TOOL_FAIL)
		o->tool_fail++;
	else
		o->no_tool++;
	if (call->retry_of >= 0)
		o->retries++;
}

static void count_session(struct counter *c, const struct trace_session *s)
{
	struct synth_count *o = c->out;
	if (o->sessions == 0 || s->t_s < o->first_t_s)
		o->first_t_s = s->t_s;
	if (s->t_s > o->last_t_s)
		o->last_t_s = s->t_s;
	o->sessions++;
	o->calls += (int64_t)s->n_calls;
	if (s->engineer && !map_get(&c->engineers, s->engineer)) {
		assert_int_equal(map_put(&c->engineers, s->engineer, 1), 0);
		o->engineers++;
	}
	int64_t tree;
	if (s->parent) {
		o->subagent_sessions++;
		const uint64_t *pt = map_get(&c->trees, s->parent);
		assert_non_null(pt); /* a parent starts before its subagents */
		tree = (int64_t)*pt;
	} else {
		tree = o->trees++;
	}
	assert_int_equal(map_put(&c->trees, s->id, (uint64_t)tree), 0);
	vec_clear(&c->bhash);
	vec_clear(&c->btok);
	double t = s->t_s;
	vec_clear(&c->attempts);
	assert_int_equal(vec_reserve(&c->attempts, s->n_calls), 0);
	memset(c->attempts.data, 0, s->n_calls * sizeof(int32_t));
	c->attempts.len = s->n_calls;
	for (size_t i = 0; i < s->n_calls; i++) {
		const struct trace_call *call = &s->calls[i];
		count_call(c, s, i);
		if (i > 0)
			t += call->gap_s;
		struct interval *iv = vec_push(&c->intervals);
		assert_non_null(iv);
		uint64_t key = hash_combine((uint64_t)tree, call->task);
		const uint64_t *turn = map_get(&c->turns, key);
		if (!turn) {
			assert_int_equal(map_put(&c->turns, key, (uint64_t)c->n_turns++), 0);
			turn = map_get(&c->turns, key);
		}
		iv->tree = (int64_t)*turn;
		iv->start = t;
		iv->end = t + (double)call->output_tokens / c->decode;
		t = iv->end;
		/* attempts of one step: its first call and the retries naming it */
		if (call->retry_of >= 0) {
			int32_t *a = &VEC_AT(&c->attempts, int32_t, (size_t)call->retry_of);
			if (++*a + 1 > o->max_attempts)
				o->max_attempts = *a + 1;
		} else if (o->max_attempts < 1) {
			o->max_attempts = 1;
		}
		bool last_of_task = i + 1 == s->n_calls || s->calls[i + 1].task != call->task;
		if (last_of_task && !s->parent && !s->open_loop) {
			o->tasks++;
			o->accepted += call->accepted == TRACE_ACCEPT_TRUE;
			o->rejected += call->accepted == TRACE_ACCEPT_FALSE;
		}
	}
}

static void finish_counts(struct counter *c)
{
	struct synth_count *o = c->out;
	qsort(c->prompts.data, c->prompts.len, sizeof(int64_t), cmp_i64);
	qsort(c->outputs.data, c->outputs.len, sizeof(int64_t), cmp_i64);
	o->median_prompt_tokens = pct_i64(c->prompts.data, c->prompts.len, 0.5);
	o->median_output_tokens = pct_i64(c->outputs.data, c->outputs.len, 0.5);
	o->hit_rate = o->prompt_tokens ? (double)o->cached_tokens / (double)o->prompt_tokens : 0;
	o->miss_amplification = o->new_tokens ? (double)(o->prompt_tokens - o->cached_tokens) /
							(double)o->new_tokens
					      : 0;
	o->tool_failure_rate = o->tool_ok + o->tool_fail
				       ? (double)o->tool_fail / (double)(o->tool_ok + o->tool_fail)
				       : 0;
	struct interval *iv = c->intervals.data;
	size_t n = c->intervals.len;
	qsort(iv, n, sizeof(*iv), cmp_interval);
	/* Per turn (a task of a root session with its subagents' calls):
	 * sum of call durations / length of the union of call intervals;
	 * kept for the turns where calls overlap. */
	double *conc = malloc(((size_t)c->n_turns + 1) * sizeof(double));
	assert_non_null(conc);
	size_t nc = 0;
	for (size_t i = 0; i < n;) {
		size_t j = i;
		double busy = 0, uni = 0, cur_s = iv[i].start, cur_e = iv[i].end;
		for (; j < n && iv[j].tree == iv[i].tree; j++) {
			busy += iv[j].end - iv[j].start;
			if (iv[j].start >= cur_e) {
				uni += cur_e - cur_s;
				cur_s = iv[j].start;
				cur_e = iv[j].end;
			} else if (iv[j].end > cur_e) {
				cur_e = iv[j].end;
			}
		}
		uni += cur_e - cur_s;
		if (uni > 0 && busy / uni > 1 + 1e-9)
			conc[nc++] = busy / uni;
		i = j;
	}
	qsort(conc, nc, sizeof(double), cmp_double);
	o->overlap_turns = (int64_t)nc;
	o->turns = c->n_turns;
	o->overlap_median = pct_double(conc, nc, 0.5);
	o->overlap_p90 = pct_double(conc, nc, 0.9);
	free(conc);
}

int synth_count_file(const char *path, int64_t block_size, double decode_tokens_per_s,
		     struct synth_count *out, char *msg, size_t msgsz)
{
	memset(out, 0, sizeof(*out));
	struct counter c = {.block = block_size, .decode = decode_tokens_per_s, .out = out};
	map_init(&c.seen);
	map_init(&c.contents);
	map_init(&c.trees);
	map_init(&c.turns);
	map_init(&c.engineers);
	vec_init(&c.prompts, sizeof(int64_t), VEC_NO_LIMIT);
	vec_init(&c.outputs, sizeof(int64_t), VEC_NO_LIMIT);
	vec_init(&c.intervals, sizeof(struct interval), VEC_NO_LIMIT);
	vec_init(&c.bhash, sizeof(uint64_t), VEC_NO_LIMIT);
	vec_init(&c.btok, sizeof(int64_t), VEC_NO_LIMIT);
	vec_init(&c.attempts, sizeof(int32_t), VEC_NO_LIMIT);
	struct diag d;
	diag_init(&d);
	struct trace_reader *r = NULL;
	int rc = trace_reader_open(&r, path, TRACE_FMT_AUTO, &d);
	while (rc == 0) {
		struct trace_session *s = NULL;
		int got = trace_reader_next(r, &s, &d);
		if (got <= 0) {
			rc = got;
			break;
		}
		count_session(&c, s);
		trace_session_free(s);
	}
	trace_reader_free(r);
	if (rc == 0)
		finish_counts(&c);
	if (msg)
		snprintf(msg, msgsz, "%s", d.msg);
	map_release(&c.seen);
	map_release(&c.contents);
	map_release(&c.trees);
	map_release(&c.turns);
	map_release(&c.engineers);
	vec_release(&c.prompts);
	vec_release(&c.outputs);
	vec_release(&c.intervals);
	vec_release(&c.bhash);
	vec_release(&c.btok);
	vec_release(&c.attempts);
	return rc;
}
