/* SPDX-License-Identifier: Apache-2.0
 * Out-of-memory injection: the N-th allocation made by our code fails, for
 * every N until a whole replay gets through.  Each run must end cleanly —
 * success, or DIAG_ENOMEM with a message — never a crash, and (under ASan)
 * with nothing leaked.  The allocator is wrapped at link time
 * (-Wl,--wrap=malloc,...), so the libraries need no hook of their own.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "replay/replay.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t m);
void *__real_realloc(void *p, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t m);
void *__wrap_realloc(void *p, size_t n);

/* Test-only switch: the one piece of mutable file-scope state in a test,
 * because the wrapped allocator has no context argument. */
static long fail_at = -1; /* allocation index that fails; -1: none */
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

static double lin_step(const void *ctx, const struct perf_batch *pb)
{
	(void)ctx;
	return 1e6 + 1e3 * (double)pb->new_tokens;
}

static double lin_run(const void *ctx, const struct perf_batch *b0, int64_t k)
{
	return (double)k * lin_step(ctx, b0);
}

static void count_req(void *ctx, const struct res_request *r)
{
	(void)r;
	(*(int *)ctx)++;
}

static int run_once(const char *path, struct diag *d, int *n_req)
{
	struct engine_config cfg = {
		.max_num_seqs = 8, .max_num_batched_tokens = 512, .block_size = 16,
		.gpu_memory_utilization = 0.9, .enable_chunked_prefill = true,
		.enable_prefix_caching = true, .kv_cache_tokens = 16 * 300, .max_model_len = 1 << 20,
	};
	struct sim_perf p = {.ctx = NULL, .step_ns = lin_step, .decode_run_ns = lin_run};
	struct res_sink sink = {.ctx = n_req, .request = count_req};
	struct replay_opts o = {.trace_path = path};
	struct replay_stats st;
	*n_req = 0;
	return replay_run(&o, &cfg, p, sink, &st, d);
}

/* Fail allocation k for k = 0, step, 2*step, ... through the last one a
 * successful run makes (step 1 for small traces: every allocation). */
static void sweep(const char *path, long max_runs)
{
	struct diag d;
	diag_init(&d);
	int n_req;
	fail_at = -1;
	n_allocs = 0;
	assert_int_equal(run_once(path, &d, &n_req), 0);
	long total = n_allocs;
	long step = total / max_runs + 1;
	int ok = 0, oom = 0;
	for (long k = 0; k <= total + 1; k += step) {
		fail_at = k;
		n_allocs = 0;
		diag_init(&d);
		int rc = run_once(path, &d, &n_req);
		if (rc == 0 && n_allocs <= k) { /* the armed failure was never reached */
			ok = 1;
			break;
		}
		if (rc != DIAG_ENOMEM)
			fail_msg("allocation %ld failed: expected DIAG_ENOMEM, got %d (%s)", k, rc, d.msg);
		assert_true(d.msg[0] != '\0');
		oom++;
	}
	if (!ok) { /* the stride stepped past the end: the run must then succeed */
		fail_at = -1;
		diag_init(&d);
		ok = run_once(path, &d, &n_req) == 0;
	}
	fail_at = -1;
	assert_true(ok);
	assert_true(oom > 10);
	printf("%s: %d of %ld allocations failed in turn, each handled\n", path, oom, total);
}

static void test_oom_sessions(void **state)
{
	(void)state;
	sweep(AC_SRC_DIR "/tests/fixtures/replay/two_sessions.jsonl", 1000);
}

static void test_oom_mooncake(void **state)
{
	(void)state;
	sweep(AC_SRC_DIR "/tests/fixtures/traces/mooncake_head200.jsonl", 150);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_oom_sessions),
		cmocka_unit_test(test_oom_mooncake),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
