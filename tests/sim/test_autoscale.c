/* SPDX-License-Identifier: Apache-2.0
 * Tests of the autoscaling policies' decisions (sim/autoscale.h), each case
 * computed by hand from Kubernetes' and KEDA's rules:
 *   - a change of the metric within the 10% tolerance changes nothing;
 *   - a scale-down takes the highest recommendation of the last 300 s;
 *   - a scale-up adds at most max(4 replicas, 100%) per 15 s;
 *   - KEDA wakes from zero above the activation threshold and scales to
 *     zero once the last active poll is more than the cool-down ago. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "sim/autoscale.h"

#include <string.h>

#define S (INT64_C(1000000000))

static void hpa_new(struct hpa *h)
{
	struct hpa_config c;
	hpa_config_default(&c);
	struct diag d;
	diag_init(&d);
	assert_int_equal(hpa_init(h, &c, 15 * S, &d), 0);
}

/* Target 10 calls per replica, 4 replicas: 42 calls is a ratio of 1.05,
 * inside [0.9, 1.1], so 4 stay although ceil(42 / 10) = 5; 46 (1.15) and
 * 35 (0.875) are outside and move to ceil(metric / 10). */
static void test_tolerance_holds_a_small_change(void **state)
{
	(void)state;
	struct hpa h;
	hpa_new(&h);
	assert_int_equal(hpa_sync(&h, 0, 4, 42.0, 10.0, 1, 10), 4);
	assert_int_equal(h.last_raw, 4);
	assert_int_equal(hpa_sync(&h, 15 * S, 4, 38.0, 10.0, 1, 10), 4); /* 0.95 */
	assert_int_equal(hpa_sync(&h, 30 * S, 4, 46.0, 10.0, 1, 10), 5); /* 1.15 */
	hpa_release(&h);
	hpa_new(&h);
	/* 5 replicas at 35 calls: 35 / 50 = 0.7, outside; ceil(3.5) = 4, and
	 * with nothing higher in the window the scale-down goes through */
	assert_int_equal(hpa_sync(&h, 0, 5, 35.0, 10.0, 1, 10), 4);
	assert_int_equal(h.last_raw, 4);
	hpa_release(&h);
}

/* Syncs every 15 s from 4 replicas, target 10: the metric gives
 * recommendations 4 at 0 s, 2 at 15-45 s, 3 at 60 s and 1 from 75 s on.
 * The scale-down window (300 s, strictly younger) holds the 4 until 300 s,
 * the 3 until 360 s:
 *   0-285 s: 4 (the 4 of 0 s is in the window);
 *   300 s:   3 (the 4 left; the 3 of 60 s is the highest);
 *   315-345 s: 3;
 *   360 s:   1 (the 3 left; the 2s of 15-45 s left before it). */
static void test_scale_down_takes_the_window_max(void **state)
{
	(void)state;
	struct hpa h;
	hpa_new(&h);
	int32_t cur = 4;
	for (int64_t t = 0; t <= 375; t += 15) {
		double metric = t == 0 ? 40.0 : t <= 45 ? 20.0 : t == 60 ? 30.0 : 10.0;
		int32_t want = t < 300 ? 4 : t < 360 ? 3 : 1;
		cur = hpa_sync(&h, t * S, cur, metric, 10.0, 1, 10);
		if (cur != want)
			fail_msg("at %lld s: %d replicas (expected %d)", (long long)t, (int)cur,
				 (int)want);
	}
	/* the window held the recommendation, the rate did not: 100% per
	 * 15 s lets 4 -> 3 and 3 -> 1 in one sync each */
	hpa_release(&h);

	/* a window of 0 follows the recommendation at once */
	struct hpa_config c;
	hpa_config_default(&c);
	c.down_window_ns = 0;
	struct diag d;
	diag_init(&d);
	assert_int_equal(hpa_init(&h, &c, 15 * S, &d), 0);
	assert_int_equal(hpa_sync(&h, 0, 4, 40.0, 10.0, 1, 10), 4);
	assert_int_equal(hpa_sync(&h, 15 * S, 4, 20.0, 10.0, 1, 10), 2);
	hpa_release(&h);
}

/* From 1 replica with 20 wanted (metric 20, target 1): each 15 s period
 * allows max(start + 4, 2 x start): 1 -> 5 -> 10 -> 20; a sync inside the
 * period adds nothing more; max_replicas caps it. */
static void test_scale_up_rate_limited(void **state)
{
	(void)state;
	struct hpa h;
	hpa_new(&h);
	assert_int_equal(hpa_sync(&h, 0, 1, 20.0, 1.0, 1, 100), 5);    /* max(1+4, 2) */
	assert_true(h.last_limited);
	assert_int_equal(hpa_sync(&h, 5 * S, 5, 20.0, 1.0, 1, 100), 5); /* start 1 */
	assert_int_equal(hpa_sync(&h, 15 * S, 5, 20.0, 1.0, 1, 100), 10); /* max(9, 10) */
	assert_int_equal(hpa_sync(&h, 30 * S, 10, 20.0, 1.0, 1, 100), 20); /* max(14, 20) */
	assert_int_equal(hpa_sync(&h, 45 * S, 20, 20.0, 1.0, 1, 100), 20);
	hpa_release(&h);
	hpa_new(&h);
	/* 3 replicas: max(3 + 4, 6) = 7; capped at 6 replicas */
	assert_int_equal(hpa_sync(&h, 0, 3, 50.0, 1.0, 1, 100), 7);
	hpa_release(&h);
	hpa_new(&h);
	assert_int_equal(hpa_sync(&h, 0, 3, 50.0, 1.0, 1, 6), 6);
	/* outside [min, max] the count goes to the bound, whatever the metric */
	assert_int_equal(hpa_sync(&h, 15 * S, 9, 0.0, 1.0, 2, 6), 6);
	assert_int_equal(hpa_sync(&h, 30 * S, 1, 50.0, 1.0, 2, 6), 2);
	hpa_release(&h);
}

/* KEDA with min 0, cool-down 300 s, activation 0: polls every 30 s. */
static void test_keda_activation_and_cooldown(void **state)
{
	(void)state;
	struct keda k = {0};
	int64_t cd = 300 * S;
	assert_int_equal(keda_poll(&k, 0, 0, 0.0, 0.0, cd, 0), 0);       /* idle at zero */
	assert_int_equal(keda_poll(&k, 30 * S, 0, 1.0, 0.0, cd, 0), 1);  /* wakes: 0 -> 1 */
	assert_int_equal(keda_poll(&k, 60 * S, 1, 0.0, 0.0, cd, 0), 1);  /* 30 + 300 > 60 */
	assert_int_equal(keda_poll(&k, 330 * S, 1, 0.0, 0.0, cd, 0), 1); /* not yet past */
	assert_int_equal(keda_poll(&k, 360 * S, 1, 0.0, 0.0, cd, 0), 0); /* past: to zero */
	/* above the activation threshold only */
	struct keda k2 = {0};
	assert_int_equal(keda_poll(&k2, 0, 0, 3.0, 5.0, cd, 0), 0);
	assert_int_equal(keda_poll(&k2, 30 * S, 0, 6.0, 5.0, cd, 0), 1);
	/* min > 0: wakes to min; never scales below it */
	struct keda k3 = {0};
	assert_int_equal(keda_poll(&k3, 0, 0, 1.0, 0.0, cd, 2), 2);
	assert_int_equal(keda_poll(&k3, 900 * S, 2, 0.0, 0.0, cd, 2), 2);
	/* never active, replicas up, min 0: to zero at once (no initial
	 * cool-down) */
	struct keda k4 = {0};
	assert_int_equal(keda_poll(&k4, 30 * S, 2, 0.0, 0.0, cd, 0), 0);
}

static void test_names_and_settings(void **state)
{
	(void)state;
	enum autoscale_policy p;
	assert_true(autoscale_policy_parse("hpa", &p));
	assert_int_equal(p, AUTOSCALE_POLICY_HPA);
	assert_true(autoscale_policy_parse("keda", &p));
	assert_false(autoscale_policy_parse("knative", &p));
	assert_string_equal(autoscale_policy_name(AUTOSCALE_POLICY_COOLDOWN), "cooldown");
	struct hpa h;
	struct hpa_config c;
	hpa_config_default(&c);
	struct diag d;
	diag_init(&d);
	c.down_percent = 150;
	assert_int_equal(hpa_init(&h, &c, 15 * S, &d), DIAG_EINPUT);
	hpa_config_default(&c);
	diag_init(&d);
	/* a window of more syncs than the history holds */
	assert_int_equal(hpa_init(&h, &c, 1000, &d), DIAG_EINPUT);
	assert_non_null(strstr(d.msg, "autoscale.interval_s"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tolerance_holds_a_small_change),
		cmocka_unit_test(test_scale_down_takes_the_window_max),
		cmocka_unit_test(test_scale_up_rate_limited),
		cmocka_unit_test(test_keda_activation_and_cooldown),
		cmocka_unit_test(test_names_and_settings),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
