/* SPDX-License-Identifier: Apache-2.0
 * test_rules: PCRE2 volatile-span rules and the streaming what-if
 * transforms of traces/xform.h on small hand-made sessions, and the reader
 * keeping segment text when asked.
 */
#include "tests/traces/testutil.h"

#include "base/diag.h"
#include "base/vec.h"
#include "traces/reader.h"
#include "traces/rules.h"
#include "traces/trace.h"
#include "traces/xform.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

/* A heap session of two calls: call 0 [sys, hdr], call 1 extends with [turn];
 * segment texts as given (NULL: none). */
static struct trace_session *two_calls(const char *hdr0, const char *hdr1)
{
	struct trace_seg s0[2] = {{101, 100}, {102, 10}};
	struct trace_seg s1[2] = {{103, 100}, {104, 10}};
	char *t0[2] = {"You are a coding agent.", (char *)hdr0};
	char *t1[2] = {"You are a coding agent.", (char *)hdr1};
	struct trace_call calls[2] = {
		{.seq = 0, .segs = s0, .n_segs = 2, .prompt_tokens = 110, .output_tokens = 5,
		 .retry_of = -1, .seg_text = t0},
		{.seq = 1, .segs = s1, .n_segs = 2, .prompt_tokens = 110, .output_tokens = 5,
		 .retry_of = -1, .seg_text = t1, .gap_s = 2},
	};
	struct trace_session v = {.id = 7, .t_s = 1, .calls = calls, .n_calls = 2};
	struct trace_session *s = NULL;
	assert_int_equal(trace_session_clone(&s, &v), 0);
	assert_true(trace_session_check(s));
	return s;
}

static void test_bad_pattern(void **state)
{
	(void)state;
	struct rules *r;
	struct diag d;
	diag_init(&d);
	assert_int_equal(rules_new(&r, &d), 0);
	assert_int_equal(rules_add(r, "x", "^Date: (", RULE_PIN, "--pattern", &d), DIAG_EINPUT);
	assert_non_null(strstr(d.msg, "bad pattern '^Date: ('"));
	assert_non_null(strstr(d.msg, "missing closing parenthesis"));
	assert_non_null(strstr(d.msg, "at offset 8"));
	assert_int_equal(rules_count(r), 0);
	rules_free(r);
}

static void test_pin_and_volatile(void **state)
{
	(void)state;
	struct diag d;
	diag_init(&d);
	struct rules *pin, *vol;
	assert_int_equal(rules_new(&pin, &d), 0);
	assert_int_equal(rules_new(&vol, &d), 0);
	assert_int_equal(rules_add(pin, "date", "^Date: .*$", RULE_PIN, NULL, &d), 0);
	assert_int_equal(rules_add(vol, "date", "^Date: .*$", RULE_VOLATILE, NULL, &d), 0);
	/* same recorded ids, different dates */
	struct trace_session *a = two_calls("Date: Mon\nrepo at /x", "Date: Tue\nrepo at /x");
	struct rules_stats st = {0};
	assert_int_equal(rules_apply(pin, a, &st, &d), 0);
	/* pinned: equal text apart from the date gives equal content, the
	 * system prompt (no match) keeps its id */
	assert_int_equal(a->calls[0].segs[1].content, a->calls[1].segs[1].content);
	assert_int_equal(a->calls[0].segs[0].content, 101);
	assert_int_equal(st.segments_seen, 4);
	assert_int_equal(st.segments_pinned, 2);
	struct trace_session *b = two_calls("Date: Mon\nrepo at /x", "Date: Mon\nrepo at /x");
	/* give both headers one recorded id: only the volatile rule can tell them apart */
	b->calls[1].segs[1].content = b->calls[0].segs[1].content;
	memset(&st, 0, sizeof(st));
	assert_int_equal(rules_apply(vol, b, &st, &d), 0);
	assert_int_equal(st.segments_volatile, 2);
	assert_int_equal(b->calls[0].segs[1].content, b->calls[1].segs[1].content); /* same date */
	struct trace_session *c = two_calls("Date: Mon\nrepo", "Date: Tue\nrepo");
	c->calls[1].segs[1].content = c->calls[0].segs[1].content;
	assert_int_equal(rules_apply(vol, c, &st, &d), 0);
	assert_int_not_equal(c->calls[0].segs[1].content, c->calls[1].segs[1].content);
	/* a pinned text differs from another pinned text with other words */
	struct trace_session *e = two_calls("Date: Mon\nrepo at /x", "Date: Tue\nrepo at /y");
	assert_int_equal(rules_apply(pin, e, &st, &d), 0);
	assert_int_not_equal(e->calls[0].segs[1].content, e->calls[1].segs[1].content);
	/* an empty text and a pattern that matches the empty string */
	struct rules *empty;
	assert_int_equal(rules_new(&empty, &d), 0);
	assert_int_equal(rules_add(empty, "any", "^", RULE_PIN, NULL, &d), 0);
	struct trace_session *f = two_calls("", "");
	memset(&st, 0, sizeof(st));
	assert_int_equal(rules_apply(empty, f, &st, &d), 0);
	assert_int_equal(st.segments_pinned, 4);
	assert_int_equal(f->calls[0].segs[1].content, f->calls[1].segs[1].content);
	trace_session_free(f);
	rules_free(empty);
	trace_session_free(a);
	trace_session_free(b);
	trace_session_free(c);
	trace_session_free(e);
	rules_free(pin);
	rules_free(vol);
}

/* One rule set with a pin rule and a volatile rule that both match a
 * segment (docs/whatif.md: pin wins when both kinds match one segment):
 * the segment is pinned, in either order of the rules, so two headers that
 * differ only in the date share one content id, as under the pin alone; a
 * segment only the volatile rule matches stays volatile. */
static void test_pin_beats_volatile(void **state)
{
	(void)state;
	struct diag d;
	diag_init(&d);
	for (int order = 0; order < 2; order++) {
		struct rules *r;
		assert_int_equal(rules_new(&r, &d), 0);
		for (int k = 0; k < 2; k++) {
			if (k == order)
				assert_int_equal(rules_add(r, "date", "^Date: .*$", RULE_PIN, NULL, &d), 0);
			else
				assert_int_equal(rules_add(r, "day", "(Mon|Tue)", RULE_VOLATILE, NULL, &d), 0);
		}
		struct trace_session *a = two_calls("Date: Mon\nrepo at /x", "Date: Tue\nrepo at /x");
		struct rules_stats st = {0};
		assert_int_equal(rules_apply(r, a, &st, &d), 0);
		assert_int_equal(st.segments_pinned, 2);
		assert_int_equal(st.segments_volatile, 0);
		assert_int_equal(a->calls[0].segs[1].content, a->calls[1].segs[1].content);
		/* the volatile rule alone on the same text: the days tell them apart */
		struct trace_session *b = two_calls("Mon: repo at /x", "Tue: repo at /x");
		b->calls[1].segs[1].content = b->calls[0].segs[1].content;
		memset(&st, 0, sizeof(st));
		assert_int_equal(rules_apply(r, b, &st, &d), 0);
		assert_int_equal(st.segments_pinned, 0);
		assert_int_equal(st.segments_volatile, 2);
		assert_int_not_equal(b->calls[0].segs[1].content, b->calls[1].segs[1].content);
		trace_session_free(a);
		trace_session_free(b);
		rules_free(r);
	}
}

static void test_rules_file(void **state)
{
	(void)state;
	char path[512];
	testutil_scratch(path, sizeof(path), "rules.json");
	struct diag d;
	diag_init(&d);
	struct rules *r;
	assert_int_equal(rules_new(&r, &d), 0);
	testutil_write_str(path, "[{\"name\":\"date\",\"pattern\":\"^Date: .*$\",\"action\":\"pin\"},"
				 "{\"name\":\"rid\",\"pattern\":\"req-[0-9a-f]+\",\"action\":\"volatile\"}]");
	assert_int_equal(rules_load(r, path, &d), 0);
	assert_int_equal(rules_count(r), 2);
	testutil_write_str(path, "{\"rules\":[{\"name\":\"a\",\"pattern\":\"x\",\"action\":\"keep\"}]}");
	assert_int_equal(rules_load(r, path, &d), DIAG_EINPUT);
	assert_non_null(strstr(d.msg, "rule 1: unknown action 'keep'"));
	diag_init(&d);
	testutil_write_str(path, "[{\"name\":\"a\",\"pattern\":\"a{2,1}\",\"action\":\"pin\"}]");
	assert_int_equal(rules_load(r, path, &d), DIAG_EINPUT);
	assert_non_null(strstr(d.msg, "rule 1: bad pattern 'a{2,1}'"));
	assert_non_null(strstr(d.msg, "offset"));
	rules_free(r);
}

/* The expanded prompt of call i as contents. */
static size_t prompt_of(const struct trace_session *s, size_t i, uint64_t *out, size_t max)
{
	struct vec v;
	vec_init(&v, sizeof(struct trace_seg), VEC_NO_LIMIT);
	assert_int_equal(trace_session_prompt(s, i, &v), 0);
	assert_true(v.len <= max);
	for (size_t k = 0; k < v.len; k++)
		out[k] = VEC_AT(&v, struct trace_seg, k).content;
	size_t n = v.len;
	vec_release(&v);
	return n;
}

static void inject(enum xform_where w, size_t expect_at0, size_t expect_at1)
{
	struct xform_opts o;
	xform_opts_init(&o);
	o.inject_at = w;
	o.inject_tokens = 7;
	struct trace_session *s = two_calls(NULL, NULL);
	s->calls[1].extends_prev = true;
	s->calls[1].prompt_tokens = 110 + 5 + 110;
	assert_true(trace_session_check(s));
	struct xform_stats st = {0};
	struct diag d;
	diag_init(&d);
	assert_int_equal(xform_apply(&o, &s, &st, &d), 1);
	assert_true(trace_session_check(s));
	assert_int_equal(st.calls_injected, 2);
	assert_false(s->calls[1].extends_prev);
	assert_int_equal(s->calls[1].prompt_tokens, 225 + 7);
	uint64_t p0[8], p1[8];
	assert_int_equal(prompt_of(s, 0, p0, 8), 3);
	assert_int_equal(prompt_of(s, 1, p1, 8), 6);
	assert_int_equal(s->calls[0].segs[expect_at0].tokens, 7);
	assert_int_equal(s->calls[1].segs[expect_at1].tokens, 7);
	/* the injected segment differs per call; the rest is as recorded */
	assert_int_not_equal(p0[expect_at0], p1[expect_at1]);
	assert_int_equal(p1[expect_at1 == 0 ? 1 : 0], 101);
	trace_session_free(s);
}

static void test_inject_positions(void **state)
{
	(void)state;
	/* call 0: [101 sys, 102 hdr]; call 1: [101, 102, out0, 103, 104] */
	inject(XFORM_START, 0, 0);
	inject(XFORM_AFTER_SYSTEM, 1, 1);
	inject(XFORM_BEFORE_LAST_TURN, 1, 3); /* before the call's own segments */
}

static void test_harness_whatifs(void **state)
{
	(void)state;
	struct diag d;
	diag_init(&d);
	struct xform_opts o;
	xform_opts_init(&o);
	assert_false(xform_active(&o));
	/* max output: prompts that carry the output shrink with it */
	struct trace_session *s = two_calls(NULL, NULL);
	s->calls[1].extends_prev = true;
	s->calls[1].prompt_tokens = 225;
	o.max_output = 3;
	struct xform_stats st = {0};
	assert_int_equal(xform_apply(&o, &s, &st, &d), 1);
	assert_int_equal(s->calls[0].output_tokens, 3);
	assert_int_equal(s->calls[1].prompt_tokens, 223);
	assert_int_equal(st.outputs_capped, 2);
	assert_true(trace_session_check(s));
	/* think time */
	xform_opts_init(&o);
	o.think_scale = 0.5;
	assert_int_equal(xform_apply(&o, &s, &st, &d), 1);
	assert_true(s->calls[1].gap_s == 1.0);
	/* arrival times: the session's start moves, its gaps stay */
	xform_opts_init(&o);
	o.arrival_scale = 0.25;
	assert_true(xform_active(&o));
	s->t_s = 10.0;
	assert_int_equal(xform_apply(&o, &s, &st, &d), 1);
	assert_true(s->t_s == 2.5);
	assert_true(s->calls[1].gap_s == 1.0);
	trace_session_free(s);
	/* no retry: the retry goes, its gap moves to the next call */
	struct trace_seg g[3] = {{1, 10}, {2, 10}, {3, 10}};
	struct trace_call c[3] = {
		{.seq = 0, .segs = g, .n_segs = 1, .prompt_tokens = 10, .output_tokens = 1,
		 .retry_of = -1, .tool = TRACE_TOOL_FAIL},
		{.seq = 1, .segs = g + 1, .n_segs = 1, .prompt_tokens = 21, .output_tokens = 1,
		 .retry_of = 0, .extends_prev = true, .gap_s = 1},
		{.seq = 2, .segs = g + 2, .n_segs = 1, .prompt_tokens = 32, .output_tokens = 1,
		 .retry_of = -1, .extends_prev = true, .gap_s = 2},
	};
	struct trace_session v = {.id = 9, .calls = c, .n_calls = 3};
	assert_true(trace_session_check(&v));
	assert_int_equal(trace_session_clone(&s, &v), 0);
	xform_opts_init(&o);
	o.no_retry = true;
	memset(&st, 0, sizeof(st));
	assert_int_equal(xform_apply(&o, &s, &st, &d), 1);
	assert_int_equal(s->n_calls, 2);
	assert_int_equal(st.retries_dropped, 1);
	assert_true(s->calls[1].gap_s == 3.0);
	assert_int_equal(s->calls[1].prompt_tokens, 32);
	assert_true(trace_session_check(s));
	trace_session_free(s);
}

static void test_concurrency(void **state)
{
	(void)state;
	struct diag d;
	diag_init(&d);
	struct xform_opts o;
	xform_opts_init(&o);
	int copies = 0, sessions = 0, roots = 0;
	for (uint64_t id = 1; id <= 400; id++) {
		struct trace_session *s = two_calls(NULL, NULL);
		s->id = id;
		s->parent = id % 2 ? 77 : 0; /* half are subagents */
		struct xform_stats st = {0};
		o.concurrency = 1.5;
		int n = xform_apply(&o, &s, &st, &d);
		assert_true(n >= 1 && n <= 2);
		if (!s->parent)
			assert_int_equal(n, 1), roots++;
		else
			copies += n, sessions++;
		if (n == 2) {
			struct trace_session *k = NULL;
			assert_int_equal(xform_copy(&k, s, 1, &d), 0);
			assert_int_not_equal(k->id, s->id);
			trace_session_free(k);
		}
		trace_session_free(s);
	}
	assert_int_equal(roots, 200);
	/* 1.5 copies per subagent on average (hash of the id) */
	assert_true(copies > 270 && copies < 330);
	/* zero drops every subagent */
	struct trace_session *s = two_calls(NULL, NULL);
	s->parent = 5;
	o.concurrency = 0;
	struct xform_stats st = {0};
	assert_int_equal(xform_apply(&o, &s, &st, &d), 0);
	assert_null(s);
	assert_int_equal(st.subagents_dropped, 1);
}

static void test_reader_keeps_text(void **state)
{
	(void)state;
	char path[512];
	testutil_scratch(path, sizeof(path), "text.jsonl");
	testutil_write_str(path,
		"{\"format\":\"agentcap-trace\",\"version\":1}\n"
		"{\"session\":\"s\",\"t\":0,\"prompt\":[[\"sys\",10,{\"text\":\"Date: 1\"}],[\"u\",5]],\"output_tokens\":1}\n"
		"{\"session\":\"s\",\"gap\":1,\"extends\":true,\"prompt\":[[\"v\",5,{\"text\":\"hi\"}]],\"output_tokens\":1}\n");
	for (int keep = 0; keep < 2; keep++) {
		struct trace_reader *r;
		struct diag d;
		diag_init(&d);
		assert_int_equal(trace_reader_open(&r, path, TRACE_FMT_AUTO, &d), 0);
		trace_reader_set_keep_text(r, keep);
		struct trace_session *s = NULL;
		assert_int_equal(trace_reader_next(r, &s, &d), 1);
		if (!keep) {
			assert_null(s->calls[0].seg_text);
		} else {
			assert_string_equal(s->calls[0].seg_text[0], "Date: 1");
			assert_null(s->calls[0].seg_text[1]);
			assert_string_equal(s->calls[1].seg_text[0], "hi");
		}
		trace_session_free(s);
		trace_reader_free(r);
	}
}

/* A heap session (first line 5) of one call with one segment of text. */
static struct trace_session *one_text(const char *text)
{
	struct trace_seg seg = {201, 10};
	char *t[1] = {(char *)text};
	struct trace_call call = {.seq = 0, .segs = &seg, .n_segs = 1, .prompt_tokens = 10,
				  .output_tokens = 1, .retry_of = -1, .seg_text = t};
	struct trace_session v = {.id = 3, .line = 5, .calls = &call, .n_calls = 1};
	struct trace_session *s = NULL;
	assert_int_equal(trace_session_clone(&s, &v), 0);
	return s;
}

/* A rule set of one rule, JIT on or off. */
static struct rules *one_rule(const char *name, const char *pattern, enum rule_action a, bool jit)
{
	struct diag d;
	diag_init(&d);
	struct rules *r;
	assert_int_equal(rules_new(&r, &d), 0);
	rules_set_jit(r, jit);
	assert_int_equal(rules_add(r, name, pattern, a, "--pattern", &d), 0);
	return r;
}

/* rules_apply on one segment of `text`: its code; *content and the message. */
static int apply_one(struct rules *r, const char *text, uint64_t *content, struct rules_stats *st,
		     struct diag *d)
{
	struct trace_session *s = one_text(text);
	diag_init(d);
	int rc = rules_apply(r, s, st, d);
	if (content)
		*content = s->calls[0].segs[0].content;
	trace_session_free(s);
	return rc;
}

/* n copies of byte c, then `tail`, in a heap string. */
static char *repeat(char c, size_t n, const char *tail)
{
	char *t = malloc(n + strlen(tail) + 1);
	assert_non_null(t);
	memset(t, c, n);
	strcpy(t + n, tail);
	return t;
}

/* Finding 10: each match used to re-check the UTF-8 of the rest of the
 * segment (quadratic in its length); now the text is checked once and every
 * match runs with PCRE2_NO_UTF_CHECK, on the JIT and on the interpreter. */
static void test_utf_checked_once(void **state)
{
	(void)state;
	const size_t n = 200000;
	char *text = repeat('x', n, "");
	for (int jit = 1; jit >= 0; jit--) {
		struct rules *r = one_rule("x", "x", RULE_VOLATILE, jit);
		struct diag d;
		assert_int_equal(rules_add(r, "y", "y", RULE_VOLATILE, NULL, &d), 0);
		struct rules_stats st = {0};
		assert_int_equal(apply_one(r, text, NULL, &st, &d), 0);
		assert_int_equal(st.matches, n);
		assert_int_equal(st.utf_checks, 1);             /* one check per segment text */
		assert_int_equal(st.utf_check_bytes, n);        /* that reads it once */
		assert_int_equal(st.match_calls, (n + 1) + 1);  /* rule x: n + 1, rule y: 1 */
		/* a pin rule: the rewrite is matched, not checked again */
		rules_free(r);
		r = one_rule("x", "x", RULE_PIN, jit);
		memset(&st, 0, sizeof(st));
		assert_int_equal(apply_one(r, text, NULL, &st, &d), 0);
		assert_int_equal(st.segments_pinned, 1);
		assert_int_equal(st.utf_checks, 1);
		assert_int_equal(st.utf_check_bytes, n);
		assert_int_equal(st.match_calls, 1 + (n + 1));  /* found, then rewritten */
		/* text that is not UTF-8 is still an error naming the segment */
		memset(&st, 0, sizeof(st));
		assert_int_equal(apply_one(r, "ab\xff", NULL, &st, &d), DIAG_EINPUT);
		assert_non_null(strstr(d.msg, "session at line 5 call 0 segment 0: segment text "
					      "cannot be matched: UTF-8 error"));
		assert_non_null(strstr(d.msg, "at byte 2 (expected UTF-8 text)"));
		assert_int_equal(st.match_calls, 0);
		rules_free(r);
	}
	free(text);
}

/* Finding 11a: catastrophic backtracking stops at the match limit, an
 * input error naming the rule, its file, the segment and the limit. */
static void test_match_limit(void **state)
{
	(void)state;
	char path[512];
	testutil_scratch(path, sizeof(path), "nested.json");
	testutil_write_str(path, "[{\"name\":\"date\",\"pattern\":\"^Date: .*$\",\"action\":\"pin\"},"
				 "{\"name\":\"nested\",\"pattern\":\"(a+)+$\",\"action\":\"volatile\"}]");
	char *text = repeat('a', 30, "b");
	for (int jit = 1; jit >= 0; jit--) {
		struct diag d;
		diag_init(&d);
		struct rules *r;
		assert_int_equal(rules_new(&r, &d), 0);
		rules_set_jit(r, jit);
		assert_int_equal(rules_load(r, path, &d), 0);
		struct rules_stats st = {0};
		assert_int_equal(apply_one(r, text, NULL, &st, &d), DIAG_EINPUT);
		assert_non_null(strstr(d.msg, "session at line 5 call 0 segment 0: rule 'nested' "
					      "(pattern '(a+)+$', from "));
		assert_non_null(strstr(d.msg, "nested.json: rule 2) hit the match limit of 1000000 "
					      "backtracking steps"));
		assert_non_null(strstr(d.msg, "possessive"));
		/* the fix the message suggests works */
		struct rules *ok = one_rule("nested", "(a++)+$", RULE_VOLATILE, jit);
		assert_int_equal(apply_one(ok, text, NULL, &st, &d), 0);
		rules_free(ok);
		rules_free(r);
	}
	free(text);
	/* a long name is cut whole characters at a time; a name must be UTF-8 */
	char name[2 * 100 + 1] = "";
	for (int i = 0; i < 100; i++)
		strcat(name, "\xc3\xa9");
	struct rules *r = one_rule(name, "(a+)+$", RULE_PIN, true);
	char *aab = repeat('a', 30, "b");
	struct diag d;
	assert_int_equal(apply_one(r, aab, NULL, &(struct rules_stats){0}, &d), DIAG_EINPUT);
	name[2 * 63] = '\0';
	char want[sizeof(name) + 32];
	snprintf(want, sizeof(want), "rule '%s' (pattern", name);
	assert_non_null(strstr(d.msg, want));
	free(aab);
	diag_init(&d);
	assert_int_equal(rules_add(r, "bad\xff", "x", RULE_PIN, "r.json: rule 2", &d), DIAG_EINPUT);
	assert_string_equal(d.msg, "r.json: rule 2: name is not UTF-8 (expected UTF-8 text)");
	rules_free(r);
}

/* "BEGIN word0 word1 ..." of at least n bytes, in a heap string. */
static char *words(size_t n)
{
	char *t = malloc(n + 32);
	assert_non_null(t);
	size_t len = (size_t)sprintf(t, "BEGIN");
	for (int i = 0; len < n; i++)
		len += (size_t)sprintf(t + len, " word%d", i);
	return t;
}

/* Finding 11b: the default 32 KiB JIT stack failed an ordinary pattern on a
 * 17 KB segment and called it a UTF-8 problem; the JIT now has 8 MiB, and
 * running out of it (or of the interpreter's depth or heap) says which. */
static void test_stack_limits(void **state)
{
	(void)state;
	char *text = words(17 * 1000);
	for (int jit = 1; jit >= 0; jit--) {
		for (int pin = 0; pin < 2; pin++) {
			struct rules *r = one_rule("begin", "BEGIN(?: word\\d+)*",
						   pin ? RULE_PIN : RULE_VOLATILE, jit);
			struct rules_stats st = {0};
			struct diag d;
			assert_int_equal(apply_one(r, text, NULL, &st, &d), 0);
			assert_int_equal(st.matches, 1);
			rules_free(r);
		}
	}
	free(text);
	/* past the bounds: 6 MB of words */
	text = words(6 * 1000 * 1000);
	struct rules *r = one_rule("begin", "BEGIN(?: word\\d+)*", RULE_VOLATILE, true);
	struct diag d;
	assert_int_equal(apply_one(r, text, NULL, &(struct rules_stats){0}, &d), DIAG_EINPUT);
	assert_non_null(strstr(d.msg, "rule 'begin' (pattern 'BEGIN(?: word\\d+)*', from --pattern)"));
	if (rules_jit(r))
		assert_non_null(strstr(d.msg, "hit the JIT stack limit of 8192 KiB in one match"));
	assert_non_null(strstr(d.msg, "(expected a pattern that keeps less to backtrack to: make a "
				      "long repeat possessive, (?:...)*+"));
	assert_null(strstr(d.msg, "UTF-8"));
	rules_free(r);
	r = one_rule("begin", "BEGIN(?: word\\d+)*", RULE_VOLATILE, false);
	assert_int_equal(apply_one(r, text, NULL, &(struct rules_stats){0}, &d), DIAG_EINPUT);
	assert_non_null(strstr(d.msg, "hit the depth limit of 250000 nested backtracking points"));
	rules_free(r);
	/* many groups make big interpreter frames: the heap limit comes first */
	r = one_rule("wide", "BEGIN(?: (w)(o)(r)(d)(\\d)(\\d)?(\\d)?(\\d)?(\\d)?(\\d)?(\\d)?(\\d)?"
			     "(\\d)?(\\d)?(\\d)?(\\d)?(\\d)?(\\d)?(\\d)?(\\d)?(\\d)?(\\d)?(\\d)?)*",
		     RULE_VOLATILE, false);
	assert_int_equal(apply_one(r, text, NULL, &(struct rules_stats){0}, &d), DIAG_EINPUT);
	assert_non_null(strstr(d.msg, "hit the heap limit of 65536 KiB of backtracking memory"));
	rules_free(r);
	/* the possessive repeat the messages suggest needs no stack */
	for (int jit = 1; jit >= 0; jit--) {
		r = one_rule("begin", "BEGIN(?: word\\d+)*+", RULE_VOLATILE, jit);
		assert_int_equal(apply_one(r, text, NULL, &(struct rules_stats){0}, &d), 0);
		rules_free(r);
	}
	free(text);
}

/* The content a pin rule set gives one segment of `text` (10 tokens). */
static uint64_t pinned(const char *name, const char *pattern, const char *text)
{
	struct rules *r = one_rule(name, pattern, RULE_PIN, true);
	struct rules_stats st = {0};
	struct diag d;
	uint64_t c = 0;
	assert_int_equal(apply_one(r, text, &c, &st, &d), 0);
	assert_int_equal(st.segments_pinned, 1);
	rules_free(r);
	return c;
}

/* Finding 11c: a pin rule that matches the empty string goes on as Perl's
 * s///g does (after an empty match: a non-empty one at the same place, else
 * one character on) and cannot split a segment past RULES_MAX_PIECES. */
static void test_empty_pin(void **state)
{
	(void)state;
	/* a rule that matches "<n>" rewrites it to itself: the reference */
	assert_int_equal(pinned("n", "a??", "aa"), pinned("n", "<n>", "<n><n><n><n><n>"));
	assert_int_not_equal(pinned("n", "a??", "aa"), pinned("n", "<n>", "<n>a<n>a<n>"));
	assert_int_equal(pinned("n", "y*", "abc"), pinned("n", "<n>", "<n>a<n>b<n>c<n>"));
	assert_int_equal(pinned("n", "y*", "\xc3\xa9"), pinned("n", "<n>", "<n>\xc3\xa9<n>"));
	/* a \r\n newline is one character where the pattern says so */
	assert_int_equal(pinned("n", "(*CRLF)y*", "a\r\nb"), pinned("n", "<n>", "<n>a<n>\r\n<n>b<n>"));
	assert_int_equal(pinned("n", "y*", "a\r\nb"), pinned("n", "<n>", "<n>a<n>\r<n>\n<n>b<n>"));
	/* a volatile rule that matches empty ends too: one match per place */
	struct rules *r = one_rule("e", "y*", RULE_VOLATILE, true);
	struct rules_stats st = {0};
	struct diag d;
	assert_int_equal(apply_one(r, "abc", NULL, &st, &d), 0);
	assert_int_equal(st.matches, 4);
	rules_free(r);
	/* bounded: the pieces of one segment, over all its pin rules */
	char *text = repeat('x', RULES_MAX_PIECES / 2, "");
	for (int jit = 1; jit >= 0; jit--) {
		r = one_rule("empty", "y*", RULE_PIN, jit);
		assert_int_equal(rules_add(r, "again", "z*", RULE_PIN, NULL, &d), 0);
		memset(&st, 0, sizeof(st));
		assert_int_equal(apply_one(r, text, NULL, &st, &d), DIAG_EINPUT);
		assert_non_null(strstr(d.msg, "session at line 5 call 0 segment 0: rule 'again' "
					      "(pattern 'z*') splits the segment into more than "
					      "1048576 pieces"));
		assert_non_null(strstr(d.msg, "x+ rather than x*"));
		assert_true(st.matches <= RULES_MAX_PIECES + 1);
		rules_free(r);
	}
	free(text);
	/* \C can end a match inside a character: refused, not passed on unchecked */
	r = one_rule("byte", "\\C", RULE_VOLATILE, true);
	assert_int_equal(apply_one(r, "\xc3\xa9", NULL, &st, &d), DIAG_EINPUT);
	assert_non_null(strstr(d.msg, "rule 'byte' (pattern '\\C', from --pattern) matched a span "
				      "that does not start and end on whole characters at byte 0"));
	rules_free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bad_pattern),
		cmocka_unit_test(test_pin_and_volatile),
		cmocka_unit_test(test_pin_beats_volatile),
		cmocka_unit_test(test_rules_file),
		cmocka_unit_test(test_inject_positions),
		cmocka_unit_test(test_harness_whatifs),
		cmocka_unit_test(test_concurrency),
		cmocka_unit_test(test_reader_keeps_text),
		cmocka_unit_test(test_utf_checked_once),
		cmocka_unit_test(test_match_limit),
		cmocka_unit_test(test_stack_limits),
		cmocka_unit_test(test_empty_pin),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
