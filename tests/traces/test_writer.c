/* SPDX-License-Identifier: Apache-2.0
 * test_writer: canonical output.  Round trips (Mooncake fixture and the
 * hand-written canonical fixture -> plain and gzip canonical -> read back ->
 * the same sessions field by field), byte-identical output for identical
 * input, the writer's own input checks, and all-or-nothing commit.
 */
#include "tests/traces/testutil.h"

#include "base/diag.h"
#include "traces/reader.h"
#include "traces/trace.h"
#include "traces/writer.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>
#include <cmocka.h>

static void write_all(const char *path, bool gzip, struct trace_session **s, size_t n,
		      int64_t hint)
{
	struct diag d;
	diag_init(&d);
	struct trace_writer *w = NULL;
	assert_int_equal(trace_writer_open(&w, path, gzip, "test \"round\" trip", &d), 0);
	if (hint)
		trace_writer_set_block_tokens_hint(w, hint);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(trace_writer_session(w, s[i], &d), 0);
	trace_writer_set_block_tokens_hint(w, 999); /* too late: ignored */
	assert_int_equal(trace_writer_close(w, &d), 0);
}

static void round_trip(const char *src, int64_t hint)
{
	struct trace_session **a;
	size_t na;
	char msg[DIAG_MSG_MAX];
	assert_int_equal(testutil_read_all(src, &a, &na, msg, sizeof(msg)), 0);
	assert_true(na > 0);
	for (int gz = 0; gz <= 1; gz++) {
		char out[512];
		testutil_scratch(out, sizeof(out), gz ? "rt.jsonl.gz" : "rt.jsonl");
		write_all(out, gz, a, na, hint);

		struct diag d;
		diag_init(&d);
		struct trace_reader *r = NULL;
		assert_int_equal(trace_reader_open(&r, out, TRACE_FMT_AUTO, &d), 0);
		assert_int_equal(trace_reader_format(r), TRACE_FMT_CANONICAL);
		assert_int_equal(trace_reader_gzip(r), gz);
		assert_int_equal(trace_reader_block_tokens_hint(r), hint);
		assert_string_equal(trace_reader_source(r), "test \"round\" trip");
		struct trace_session *s;
		size_t i = 0;
		int rc;
		while ((rc = trace_reader_next(r, &s, &d)) == 1) {
			assert_true(i < na);
			assert_true(testutil_session_equal(a[i], s, false));
			trace_session_free(s);
			i++;
		}
		assert_int_equal(rc, 0);
		assert_int_equal(i, na);
		trace_reader_free(r);
	}
	testutil_free_all(a, na);
}

static void test_round_trip_mooncake(void **state)
{
	(void)state;
	char src[512];
	testutil_fixture(src, sizeof(src), "mooncake_head200.jsonl");
	round_trip(src, 512);
}

static void test_round_trip_canonical(void **state)
{
	(void)state;
	char src[512];
	testutil_fixture(src, sizeof(src), "session_good.jsonl");
	round_trip(src, 0);
}

static size_t slurp(const char *path, char *buf, size_t cap)
{
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	size_t n = fread(buf, 1, cap, f);
	fclose(f);
	return n;
}

static void test_deterministic_bytes(void **state)
{
	(void)state;
	char src[512], p1[512], p2[512];
	testutil_fixture(src, sizeof(src), "session_good.jsonl");
	struct trace_session **a;
	size_t na;
	assert_int_equal(testutil_read_all(src, &a, &na, NULL, 0), 0);
	size_t cap = 1 << 16;
	char *b1 = malloc(cap), *b2 = malloc(cap);
	assert_non_null(b1);
	assert_non_null(b2);
	for (int gz = 0; gz <= 1; gz++) {
		testutil_scratch(p1, sizeof(p1), "det1");
		testutil_scratch(p2, sizeof(p2), "det2");
		write_all(p1, gz, a, na, 16);
		write_all(p2, gz, a, na, 16);
		size_t n1 = slurp(p1, b1, cap - 1), n2 = slurp(p2, b2, cap - 1);
		b1[n1] = '\0';
		assert_int_equal(n1, n2);
		assert_memory_equal(b1, b2, n1);
		if (!gz) {
			/* The header, then the first call as the spec shows it. */
			const char *want =
				"{\"format\":\"agentcap-trace\",\"version\":1,\"block_tokens_hint\":16,"
				"\"source\":\"test \\\"round\\\" trip\"}\n{\"session\":\"#";
			assert_memory_equal(b1, want, strlen(want));
			assert_non_null(strstr(b1, ",\"extends\":true,\"prompt\":[[\"#"));
			assert_non_null(strstr(b1, ",\"t\":0.5,"));
			assert_non_null(strstr(b1, ",\"gap\":2.25,"));
			assert_non_null(strstr(b1, ",\"t\":1,\"open_loop\":true,\"prompt\":"));
		} else {
			assert_true((unsigned char)b1[0] == 0x1f && (unsigned char)b1[1] == 0x8b);
		}
	}
	free(b1);
	free(b2);
	testutil_free_all(a, na);
}

static void test_writer_checks(void **state)
{
	(void)state;
	char out[512];
	testutil_scratch(out, sizeof(out), "checks.jsonl");
	unlink(out);
	struct trace_seg seg = { 5, 10 };
	struct trace_call call = { .seq = 0, .segs = &seg, .n_segs = 1, .prompt_tokens = 10,
		.output_tokens = 1, .retry_of = -1 };
	struct trace_session s = { .id = 1, .t_s = 5, .calls = &call, .n_calls = 1 };
	struct diag d;
	diag_init(&d);
	struct trace_writer *w = NULL;
	assert_int_equal(trace_writer_open(&w, out, false, NULL, &d), 0);
	assert_int_equal(trace_writer_session(w, &s, &d), 0);
	/* same id again */
	diag_init(&d);
	s.t_s = 6;
	assert_int_equal(trace_writer_session(w, &s, &d), DIAG_EINPUT);
	assert_non_null(strstr(d.msg, "session #0000000000000001 written twice"));
	/* earlier start */
	diag_init(&d);
	s.id = 2;
	s.t_s = 4;
	assert_int_equal(trace_writer_session(w, &s, &d), DIAG_EINPUT);
	assert_non_null(strstr(d.msg, "starts at t=4 before the previous session's t=5"));
	/* inconsistent prompt_tokens */
	diag_init(&d);
	s.t_s = 7;
	call.prompt_tokens = 11;
	assert_int_equal(trace_writer_session(w, &s, &d), DIAG_EINPUT);
	assert_non_null(strstr(d.msg, "breaks the trace rules"));
	/* still usable */
	call.prompt_tokens = 10;
	diag_init(&d);
	assert_int_equal(trace_writer_session(w, &s, &d), 0);
	/* nothing visible before close */
	assert_int_equal(access(out, F_OK), -1);
	assert_int_equal(trace_writer_close(w, &d), 0);
	struct trace_session **a;
	size_t na;
	assert_int_equal(testutil_read_all(out, &a, &na, NULL, 0), 0);
	assert_int_equal(na, 2);
	assert_true(a[1]->id == 2 && a[1]->t_s == 7);
	testutil_free_all(a, na);

	/* abort leaves the previous file alone */
	assert_int_equal(trace_writer_open(&w, out, true, NULL, &d), 0);
	assert_int_equal(trace_writer_session(w, &s, &d), 0);
	trace_writer_abort(w);
	trace_writer_abort(NULL);
	assert_int_equal(testutil_read_all(out, &a, &na, NULL, 0), 0);
	assert_int_equal(na, 2);
	testutil_free_all(a, na);

	/* an empty trace is a header-only file */
	assert_int_equal(trace_writer_open(&w, out, false, "empty", &d), 0);
	assert_int_equal(trace_writer_close(w, &d), 0);
	assert_int_equal(testutil_read_all(out, &a, &na, NULL, 0), 0);
	assert_int_equal(na, 0);
	free(a);

	/* a directory that does not exist */
	char bad[600];
	snprintf(bad, sizeof(bad), "%s.nodir/x.jsonl", out);
	diag_init(&d);
	w = (struct trace_writer *)&d;
	assert_int_equal(trace_writer_open(&w, bad, false, NULL, &d), DIAG_EIO);
	assert_null(w);
}

/* A session source over an array; fails after `fail_after` sessions if >= 0. */
struct array_source {
	struct trace_session **s;
	size_t n, next;
	long fail_after;
};

static int array_next(void *ctx, struct trace_session **out, struct diag *d)
{
	struct array_source *a = ctx;
	if (a->fail_after >= 0 && (long)a->next == a->fail_after)
		return diag_set(d, DIAG_EINPUT, "source failed");
	if (a->next == a->n)
		return 0;
	return trace_session_clone(out, a->s[a->next++]) == 0 ? 1 : DIAG_ENOMEM;
}

/* trace_writer_drain writes what the source yields, and nothing at all if
 * the source fails half way. */
static void test_drain(void **state)
{
	(void)state;
	char src[512], out[512];
	testutil_fixture(src, sizeof(src), "mooncake_head200.jsonl");
	testutil_scratch(out, sizeof(out), "drain.jsonl");
	struct trace_session **a;
	size_t na;
	char msg[DIAG_MSG_MAX];
	assert_int_equal(testutil_read_all(src, &a, &na, msg, sizeof(msg)), 0);
	struct diag d;
	diag_init(&d);
	unlink(out);
	struct array_source bad = {.s = a, .n = na, .fail_after = 5};
	assert_int_equal(trace_writer_drain(out, false, "drain", array_next, &bad, &d), DIAG_EINPUT);
	assert_int_equal(access(out, F_OK), -1);
	struct array_source good = {.s = a, .n = na, .fail_after = -1};
	diag_init(&d);
	assert_int_equal(trace_writer_drain(out, false, "drain", array_next, &good, &d), 0);
	struct trace_session **b;
	size_t nb;
	assert_int_equal(testutil_read_all(out, &b, &nb, msg, sizeof(msg)), 0);
	assert_int_equal(nb, na);
	for (size_t i = 0; i < na; i++)
		assert_true(testutil_session_equal(a[i], b[i], false));
	testutil_free_all(a, na);
	testutil_free_all(b, nb);
	unlink(out);
}

/* Streaming open-loop requests keeps the writer's memory flat: 400,000 of
 * them would have cost ~17 MB in a map of written ids (42 bytes each). */
static void test_open_loop_memory_flat(void **state)
{
	(void)state;
	char out[512];
	testutil_scratch(out, sizeof(out), "open_loop_many.jsonl.gz");
	struct trace_seg seg = {.content = 7, .tokens = 10};
	struct trace_call call = {.segs = &seg, .n_segs = 1, .prompt_tokens = 10, .output_tokens = 1,
				  .retry_of = -1};
	struct trace_session s = {.calls = &call, .n_calls = 1, .open_loop = true};
	struct diag d;
	diag_init(&d);
	struct trace_writer *w = NULL;
	assert_int_equal(trace_writer_open(&w, out, true, NULL, &d), 0);
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	long rss0 = ru.ru_maxrss;
	for (long i = 0; i < 400000; i++) {
		s.id = trace_anon_session_id(i + 1);
		s.t_s = (double)i;
		assert_int_equal(trace_writer_session(w, &s, &d), 0);
	}
	getrusage(RUSAGE_SELF, &ru);
	assert_true(ru.ru_maxrss < rss0 + 4 * 1024);
	assert_int_equal(trace_writer_close(w, &d), 0);
	remove(out);
}

static void test_round_trip_bundled(void **state)
{
	(void)state;
	char src[512];
	snprintf(src, sizeof(src), "%s/traces/data/mooncake/conversation_trace.jsonl.gz", AC_SRC_DIR);
	round_trip(src, 512);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip_mooncake),
		cmocka_unit_test(test_round_trip_canonical),
		cmocka_unit_test(test_deterministic_bytes),
		cmocka_unit_test(test_writer_checks),
		cmocka_unit_test(test_round_trip_bundled),
		cmocka_unit_test(test_drain),
		cmocka_unit_test(test_open_loop_memory_flat),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
