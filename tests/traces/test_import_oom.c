/* SPDX-License-Identifier: Apache-2.0
 * Out-of-memory injection for every importer and for `stats`: the k-th
 * allocation made by our code fails, for every k until the run gets
 * through.  Each run must end with 0 or DIAG_ENOMEM (never a crash), leave
 * no output file behind on failure, and (under ASan) leak nothing; a run
 * that returns 0 despite the failed allocation (a fallback) must write
 * exactly what a run without injection writes, so an importer cannot drop
 * a session and report success.  The allocator is wrapped at link time
 * (-Wl,--wrap=...).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "base/diag.h"
#include "traces/import.h"
#include "traces/reader.h"
#include "traces/stats.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t m);
void *__real_realloc(void *p, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t m);
void *__wrap_realloc(void *p, size_t n);

/* Test-only switch: file-scope because the wrapped allocator has no
 * context argument. */
static long fail_at = -1;
static long n_allocs;

static int should_fail(void)
{
	return n_allocs++ == fail_at;
}

void *__wrap_malloc(size_t n)
{
	return should_fail() ? NULL : __real_malloc(n);
}

void *__wrap_calloc(size_t n, size_t m)
{
	return should_fail() ? NULL : __real_calloc(n, m);
}

void *__wrap_realloc(void *p, size_t n)
{
	return should_fail() ? NULL : __real_realloc(p, n);
}

#define FIX AC_SRC_DIR "/tests/fixtures/import/"

/* The whole of `path` (NUL-terminated, *len bytes); read with injection off. */
static char *slurp(const char *path, size_t *len)
{
	long saved = fail_at;
	fail_at = -1;
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	long n = ftell(f);
	assert_true(n >= 0);
	rewind(f);
	char *buf = malloc((size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	buf[n] = '\0';
	fclose(f);
	fail_at = saved;
	*len = (size_t)n;
	return buf;
}

static const struct {
	const char *format, *file;
} CASES[] = {
	{"claude-code", FIX "claude_session.jsonl"},
	{"claude-code", FIX "claude_subagents.jsonl"},
	{"codex", FIX "codex_rollout.jsonl"},
	{"tracelab", FIX "tracelab_round_trace.jsonl"},
	{"weka", FIX "weka.json"},
	{"openai-log", FIX "openai.jsonl"},
	{"azure", FIX "azure2023_code_head50.csv"},
	{"burstgpt", FIX "burstgpt_sessions.csv"},
	{"mooncake", AC_SRC_DIR "/tests/fixtures/traces/mooncake_head200.jsonl"},
};

static void test_importers_oom(void **state)
{
	(void)state;
	char dir[] = "/tmp/agentcap-import-oom-XXXXXX";
	assert_non_null(mkdtemp(dir));
	char out[256];
	snprintf(out, sizeof(out), "%s/out.jsonl", dir);
	for (size_t c = 0; c < sizeof(CASES) / sizeof(CASES[0]); c++) {
		const char *paths[1] = {CASES[c].file};
		struct diag d;
		diag_init(&d);
		struct import_stats st;
		fail_at = -1;
		n_allocs = 0;
		if (import_files(CASES[c].format, paths, 1, NULL, out, &st, &d) != 0)
			fail_msg("%s: %s", CASES[c].format, d.msg);
		long total = n_allocs, step = total / 200 + 1;
		struct import_stats want_st = st;
		size_t want_len;
		char *want = slurp(out, &want_len);
		unlink(out);
		for (long k = 0; k < total; k += step) {
			fail_at = k;
			n_allocs = 0;
			diag_init(&d);
			int rc = import_files(CASES[c].format, paths, 1, NULL, out, &st, &d);
			fail_at = -1;
			if (rc == 0) {
				/* the failed allocation had a fallback: same output */
				size_t got_len;
				char *got = slurp(out, &got_len);
				if (got_len != want_len || memcmp(got, want, want_len) != 0 ||
				    st.sessions != want_st.sessions || st.calls != want_st.calls ||
				    st.records != want_st.records || st.prompt_tokens != want_st.prompt_tokens ||
				    st.output_tokens != want_st.output_tokens)
					fail_msg("%s, allocation %ld of %ld failed: import returned 0 but wrote "
						 "%lld sessions, %lld calls, %zu bytes (without the failure: %lld, "
						 "%lld, %zu)", CASES[c].format, k, total, (long long)st.sessions,
						 (long long)st.calls, got_len, (long long)want_st.sessions,
						 (long long)want_st.calls, want_len);
				free(got);
				unlink(out);
				continue;
			}
			if (rc != DIAG_ENOMEM)
				fail_msg("%s, allocation %ld of %ld: expected DIAG_ENOMEM, got %d (%s)",
					 CASES[c].format, k, total, rc, d.msg);
			assert_int_equal(access(out, F_OK), -1); /* nothing half-written */
		}
		free(want);
	}
	rmdir(dir);
}

/* One stats pass over a session trace; 0 or a negative code. */
static int stats_once(const char *path, bool curve, struct diag *d)
{
	struct stats_opts o = {.block_size = STATS_DEFAULT_BLOCK_SIZE,
			       .decode_tokens_per_s = STATS_DEFAULT_DECODE_TOKENS_PER_S,
			       .no_curve = !curve};
	struct stats *st = NULL;
	int rc = stats_new(&st, &o, d);
	struct stats_summary sum;
	if (rc == 0)
		rc = stats_read(st, path, TRACE_FMT_AUTO, false, &sum, NULL, d);
	stats_free(st);
	return rc;
}

static void test_stats_oom(void **state)
{
	(void)state;
	const char *path = AC_SRC_DIR "/tests/fixtures/traces/session_good.jsonl";
	for (int curve = 0; curve <= 1; curve++) {
		struct diag d;
		diag_init(&d);
		fail_at = -1;
		n_allocs = 0;
		if (stats_once(path, curve, &d) != 0)
			fail_msg("stats: %s", d.msg);
		long total = n_allocs;
		for (long k = 0; k < total; k++) {
			fail_at = k;
			n_allocs = 0;
			diag_init(&d);
			int rc = stats_once(path, curve, &d);
			fail_at = -1;
			if (rc != 0 && rc != DIAG_ENOMEM)
				fail_msg("stats, allocation %ld of %ld: expected DIAG_ENOMEM, got %d (%s)", k,
					 total, rc, d.msg);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_importers_oom),
		cmocka_unit_test(test_stats_oom),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
