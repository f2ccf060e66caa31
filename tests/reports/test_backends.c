/* SPDX-License-Identifier: Apache-2.0
 * Tests for reports/backends: an API backend's spend is each call at the
 * prices of its class.  DeepSeek V4 Pro is at peak 01-04 and 06-10 UTC on
 * weekdays ($1.32 in, $3.96 out per 1M) and half price otherwise; a trace
 * whose t = 0 is 00:00 UTC of a Monday sends one call of 1M prompt and 1M
 * output tokens at 02:00 (peak: $5.28), one at 05:00 and one on Saturday
 * at 02:00 (off-peak: $2.64 each), so the backend spent $10.56, and the
 * report says the clock was read as from a Monday.  With the trace's start
 * on a clock (cost.trace_start_utc 2026-12-07, a Monday) the same three
 * calls split alike; ten hours later all three are off-peak. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>

#include "base/diag.h"
#include "models/cost.h"
#include "models/prices.h"
#include "reports/backends.h"

static void run_three(const struct cost_api *list, int64_t t0_ns, struct backends_summary *sum)
{
	struct backends_api api = {.name = "deepseek", .kind = "api",
				   .price_id = "deepseek-v4-pro-peak", .list = list};
	struct backends *b = backends_new(&api, 1, (struct res_sink){0});
	assert_non_null(b);
	struct res_sink s = backends_sink(b);
	const int64_t H = INT64_C(3600000000000);
	const int64_t at[3] = {2 * H, 5 * H, 5 * 24 * H + 2 * H};
	for (int i = 0; i < 3; i++) {
		struct res_request r = {.seq = i, .replica = -1, .backend = 1,
					.status = RES_COMPLETED, .arrival_ns = t0_ns + at[i],
					.first_token_ns = t0_ns + at[i] + 1, .done_ns = t0_ns + at[i] + 2,
					.prompt_tokens = 1000000, .output_tokens = 1000000};
		s.request(s.ctx, &r);
	}
	struct diag d;
	diag_init(&d);
	assert_int_equal(backends_summarize(b, sum, &d), 0);
	backends_free(b);
}

static void test_off_peak_spend(void **state)
{
	(void)state;
	struct prices *pr = NULL;
	struct diag d;
	diag_init(&d);
	assert_int_equal(prices_load(&pr, NULL, &d), 0);
	struct cost_api list;
	assert_int_equal(cost_api_from_prices(&list, pr, "deepseek-v4-pro-peak", &d), 0);
	struct backends_summary sum;
	run_three(&list, 0, &sum);
	const struct backends_row *row = &sum.rows[1];
	assert_int_equal(row->calls, 3);
	assert_int_equal(row->by_class[0].calls, 1);
	assert_int_equal(row->by_class[COST_API_OFF_PEAK].calls, 2);
	assert_true(fabs(row->usd - (5.28 + 2 * 2.64)) < 1e-9);
	assert_true(row->clock_assumed);
	/* the trace's t = 0 on a clock: 2026-12-07 00:00 UTC, a Monday */
	list.clock_set = true;
	list.clock_t0_ns = INT64_C(1796601600) * 1000000000;
	run_three(&list, 0, &sum);
	assert_true(fabs(sum.rows[1].usd - (5.28 + 2 * 2.64)) < 1e-9);
	assert_false(sum.rows[1].clock_assumed);
	/* ten hours later every call is off the peak (12:00 and 15:00 on
	 * Monday, 12:00 on Saturday) */
	list.clock_t0_ns += INT64_C(36000) * 1000000000;
	run_three(&list, 0, &sum);
	assert_true(fabs(sum.rows[1].usd - 3 * 2.64) < 1e-9);
	prices_free(pr);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_off_peak_spend),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
