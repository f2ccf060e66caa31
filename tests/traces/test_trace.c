/* SPDX-License-Identifier: Apache-2.0
 * test_trace: identity rules (ids, contents, outputs) and whole-session
 * helpers (clone, check, prompt expansion) of traces/trace.h.
 */
#include "base/diag.h"
#include "base/vec.h"
#include "traces/trace.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

static void test_hex_id(void **state)
{
	(void)state;
	uint64_t v = 0;
	assert_true(trace_hex_id("#00000000000000ff", &v));
	assert_int_equal(v, 255);
	assert_true(trace_hex_id("#DEADBEEF00000001", &v));
	assert_true(v == 0xdeadbeef00000001ULL);
	assert_false(trace_hex_id("#00000000000000f", &v));   /* 15 digits */
	assert_false(trace_hex_id("#00000000000000fff", &v)); /* 17 digits */
	assert_false(trace_hex_id("#00000000000000fg", &v));
	assert_false(trace_hex_id("00000000000000ff0", &v));
	assert_false(trace_hex_id("", &v));
	assert_true(trace_id_hash("#0123456789abcdef") == 0x0123456789abcdefULL);
	assert_true(trace_content_str("#0123456789abcdef", 99) == 0x0123456789abcdefULL);
}

static void test_id_rules(void **state)
{
	(void)state;
	assert_true(trace_id_hash("s1") == trace_id_hash("s1"));
	assert_true(trace_id_hash("s1") != trace_id_hash("s2"));
	assert_true(trace_id_hash("s1") != 0);
	assert_true(trace_anon_session_id(1) != trace_anon_session_id(2));
	/* Token counts are part of a content. */
	assert_true(trace_content_str("x", 100) != trace_content_str("x", 512));
	assert_true(trace_content_int(3, 100) != trace_content_int(3, 512));
	assert_true(trace_content_str("x", 100) == trace_content_str("x", 100));
	/* Strings and integers never coincide. */
	assert_true(trace_content_str("7", 64) != trace_content_int(7, 64));
	/* Outputs depend on session and seq. */
	assert_true(trace_output_content(1, 0) != trace_output_content(1, 1));
	assert_true(trace_output_content(1, 0) != trace_output_content(2, 0));
}

/* The seeds are part of the file format: these values must never change
 * within format version 1. */
static void test_golden_hashes(void **state)
{
	(void)state;
	assert_true(trace_id_hash("s1") == 0x97b105e07a341950ULL);
	assert_true(trace_content_int(0, 512) == 0xc04462f37e773313ULL);
	assert_true(trace_content_str("sys", 1000) == 0xf4b4ca8bf19ce4afULL);
	assert_true(trace_output_content(trace_id_hash("s1"), 0) == 0xa7ec93dbd876a8d3ULL);
	assert_true(trace_anon_session_id(1) == 0x218f366f4db32953ULL);
}

/* A three-call session with an extends chain, in caller storage. */
struct fix {
	struct trace_seg a[2], b[1], c[1];
	struct trace_call calls[3];
	struct trace_session s;
};

static void fix_fill(struct fix *f)
{
	f->a[0] = (struct trace_seg){ 11, 100 };
	f->a[1] = (struct trace_seg){ 12, 20 };
	f->b[0] = (struct trace_seg){ 13, 5 };
	f->c[0] = (struct trace_seg){ 14, 7 };
	f->calls[0] = (struct trace_call){ .seq = 0, .segs = f->a, .n_segs = 2,
		.prompt_tokens = 120, .output_tokens = 10, .retry_of = -1 };
	f->calls[1] = (struct trace_call){ .seq = 1, .gap_s = 1.5, .extends_prev = true,
		.segs = f->b, .n_segs = 1, .prompt_tokens = 135, .output_tokens = 3,
		.retry_of = -1, .tool = TRACE_TOOL_FAIL };
	f->calls[2] = (struct trace_call){ .seq = 4, .gap_s = 0, .extends_prev = true,
		.segs = f->c, .n_segs = 1, .prompt_tokens = 145, .output_tokens = 1,
		.retry_of = 1, .accepted = TRACE_ACCEPT_TRUE };
	f->s = (struct trace_session){ .id = 77, .t_s = 2.0, .calls = f->calls, .n_calls = 3,
		.line = 5 };
}

static void test_clone_and_check(void **state)
{
	(void)state;
	struct fix f;
	fix_fill(&f);
	assert_true(trace_session_check(&f.s));
	struct trace_session *c = NULL;
	assert_int_equal(trace_session_clone(&c, &f.s), 0);
	assert_non_null(c);
	assert_true(trace_session_check(c));
	assert_ptr_not_equal(c->calls, f.calls);
	assert_ptr_not_equal(c->calls[0].segs, f.a);
	assert_true(c->calls[2].segs[0].content == 14);
	assert_int_equal(c->calls[1].prompt_tokens, 135);
	trace_session_free(c);
	trace_session_free(NULL);

	/* Each broken invariant is caught. */
	f.calls[1].prompt_tokens = 134;
	assert_false(trace_session_check(&f.s));
	fix_fill(&f);
	f.calls[0].extends_prev = true;
	assert_false(trace_session_check(&f.s));
	fix_fill(&f);
	f.calls[2].seq = 1;
	assert_false(trace_session_check(&f.s));
	fix_fill(&f);
	f.calls[2].retry_of = 3;
	assert_false(trace_session_check(&f.s));
	fix_fill(&f);
	f.calls[2].output_tokens = 0;
	assert_false(trace_session_check(&f.s));
	fix_fill(&f);
	f.calls[0].gap_s = 1;
	assert_false(trace_session_check(&f.s));
	fix_fill(&f);
	f.b[0].tokens = 0;
	assert_false(trace_session_check(&f.s));
	fix_fill(&f);
	f.s.n_calls = 0;
	assert_false(trace_session_check(&f.s));
}

static void test_prompt_expansion(void **state)
{
	(void)state;
	struct fix f;
	fix_fill(&f);
	struct vec v;
	vec_init(&v, sizeof(struct trace_seg), VEC_NO_LIMIT);
	assert_int_equal(trace_session_prompt(&f.s, 2, &v), 0);
	/* a0 a1 out(0) b0 out(1) c0 */
	assert_int_equal(v.len, 6);
	const struct trace_seg *g = v.data;
	assert_true(g[0].content == 11 && g[1].content == 12);
	assert_true(g[2].content == trace_output_content(77, 0) && g[2].tokens == 10);
	assert_true(g[3].content == 13);
	assert_true(g[4].content == trace_output_content(77, 1) && g[4].tokens == 3);
	assert_true(g[5].content == 14);
	int64_t total = 0;
	for (size_t i = 0; i < v.len; i++)
		total += g[i].tokens;
	assert_int_equal(total, f.calls[2].prompt_tokens);
	vec_clear(&v);
	assert_int_equal(trace_session_prompt(&f.s, 0, &v), 0);
	assert_int_equal(v.len, 2);
	vec_release(&v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hex_id),
		cmocka_unit_test(test_id_rules),
		cmocka_unit_test(test_golden_hashes),
		cmocka_unit_test(test_clone_and_check),
		cmocka_unit_test(test_prompt_expansion),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
