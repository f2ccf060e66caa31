/* SPDX-License-Identifier: Apache-2.0
 * test_slo: percentile objectives.
 *   - slo_parse: good strings to objectives, bad ones to an error naming
 *     the piece and what was expected;
 *   - slo_miss_budget: for every n up to 300 and every percentile, once
 *     budget(p, n) of at most n values are over a limit, numpy's
 *     percentile of them is over it whatever the other values are (checked
 *     against metrics_stats_of at every k <= n with the rest at 0), and
 *     one fewer is not enough at k = n (the budget is tight);
 *   - slo_request_ms on completed and rejected calls.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "base/diag.h"
#include "replay/slo.h"
#include "reports/metrics.h"

static void test_parse_good(void **state)
{
	(void)state;
	struct slo s;
	struct diag d;
	diag_init(&d);
	assert_int_equal(slo_parse(&s, "ttft_p95=2s,tpot_p50=50ms", "--slo", &d), 0);
	assert_int_equal(s.n, 2);
	assert_int_equal(s.obj[0].metric, SLO_TTFT);
	assert_int_equal(s.obj[0].percentile, 95);
	assert_true(s.obj[0].limit_ms == 2000.0);
	assert_int_equal(s.obj[1].metric, SLO_TPOT);
	assert_int_equal(s.obj[1].percentile, 50);
	assert_true(s.obj[1].limit_ms == 50.0);
	assert_int_equal(slo_parse(&s, "e2el_p99=1.5s,ttft_p90=300ms", "--slo", &d), 0);
	assert_int_equal(s.n, 2);
	assert_true(s.obj[0].limit_ms == 1500.0);
	assert_true(s.obj[1].limit_ms == 300.0);
	char buf[128];
	assert_string_equal(slo_format(&s, buf, sizeof(buf)), "e2el_p99=1500ms,ttft_p90=300ms");
	/* a key given twice is refused, not settled by the last value */
	assert_int_equal(slo_parse(&s, "e2el_p99=1.5s,ttft_p90=300ms,ttft_p90=400ms", "--slo", &d),
			 DIAG_EINPUT);
	assert_string_equal(d.msg, "--slo: 'ttft_p90' given twice (expected each objective once)");
	diag_init(&d);
}

static void test_parse_bad(void **state)
{
	(void)state;
	static const char *const BAD[] = {
		"", "ttft", "ttft_p95", "ttft_p95=", "ttft_p95=2", "ttft_p95=2h", "ttft_p95=-1s",
		"ttft_p95=0ms", "ttft_p97=2s", "itl_p95=2s", "ttft_p95=2s,", "ttft_p95=2s,,tpot_p50=1ms",
		"TTFT_p95=2s", "ttft_p95=nanms", "ttft_p95=infs", "ttft_p5=2s",
	};
	for (size_t i = 0; i < sizeof(BAD) / sizeof(BAD[0]); i++) {
		struct slo s;
		struct diag d;
		diag_init(&d);
		if (slo_parse(&s, BAD[i], "--slo", &d) != DIAG_EINPUT)
			fail_msg("'%s' parsed", BAD[i]);
		assert_non_null(strstr(d.msg, "--slo"));
		assert_non_null(strstr(d.msg, "expected KEY=DURATION"));
		assert_int_equal(s.n, 0);
	}
	struct slo s;
	struct diag d;
	diag_init(&d);
	assert_int_equal(slo_parse(&s, "ttft_p95=2s,tpot_p50=5x", "--slo", &d), DIAG_EINPUT);
	assert_non_null(strstr(d.msg, "'tpot_p50=5x'"));
}

static double pct(const struct metrics_stats *st, int p)
{
	return p == 50 ? st->median : p == 90 ? st->p90 : p == 95 ? st->p95 : st->p99;
}

static void test_miss_budget(void **state)
{
	(void)state;
	static const int PS[] = {50, 90, 95, 99};
	double *x = malloc(300 * sizeof(*x));
	assert_non_null(x);
	for (int pi = 0; pi < 4; pi++) {
		int p = PS[pi];
		for (int64_t n = 1; n <= 300; n++) {
			int64_t m = slo_miss_budget(p, n);
			assert_true(m >= 1 && m <= n);
			/* m values over the limit (1) settle it for every k in [m, n] */
			for (int64_t k = m; k <= n; k++) {
				for (int64_t i = 0; i < k; i++)
					x[i] = i < m ? 2.0 : 0.0;
				struct metrics_stats st;
				metrics_stats_of(x, (size_t)k, &st);
				if (!(pct(&st, p) > 1.0))
					fail_msg("p%d n=%lld k=%lld m=%lld: percentile %g", p, (long long)n,
						 (long long)k, (long long)m, pct(&st, p));
			}
			/* and m - 1 are not enough when all n values come */
			if (m > 1) {
				for (int64_t i = 0; i < n; i++)
					x[i] = i < m - 1 ? 2.0 : 0.0;
				struct metrics_stats st;
				metrics_stats_of(x, (size_t)n, &st);
				if (pct(&st, p) > 1.9999)
					fail_msg("p%d n=%lld: budget %lld is not the least", p, (long long)n,
						 (long long)m);
			}
		}
	}
	free(x);
}

static void test_request_ms(void **state)
{
	(void)state;
	struct res_request r = {.status = RES_COMPLETED, .arrival_ns = 1000000000,
				.first_token_ns = 1250000000, .done_ns = 2250000000, .output_tokens = 11};
	assert_true(slo_request_ms(SLO_TTFT, &r) == 250.0);
	assert_true(slo_request_ms(SLO_TPOT, &r) == 100.0);
	assert_true(slo_request_ms(SLO_E2EL, &r) == 1250.0);
	r.output_tokens = 1;
	assert_true(slo_request_ms(SLO_TPOT, &r) < 0);
	r.status = RES_REJECTED;
	assert_true(slo_request_ms(SLO_TTFT, &r) < 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_good),
		cmocka_unit_test(test_parse_bad),
		cmocka_unit_test(test_miss_budget),
		cmocka_unit_test(test_request_ms),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
