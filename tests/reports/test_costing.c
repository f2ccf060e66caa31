/* SPDX-License-Identifier: Apache-2.0
 * Tests for reports/costing: a run's figures become the plain numbers the
 * cost model prices (busy and idle time per GPU, GPU-hours, tokens, tasks),
 * and the cost table prints every option, part and assumption. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reports/costing.h"

static void test_usage_from_run(void **state)
{
	(void)state;
	struct metrics_summary s;
	memset(&s, 0, sizeof(s));
	s.duration_s = 7200;
	s.gpu_busy_fraction = 0.25;
	s.prompt_tokens = 1000;
	s.cached_prompt_tokens = 900;
	s.output_tokens = 50;
	s.completed = 9;
	s.failed = 1;
	s.tasks = 4;
	s.tasks_accept_known = 3;
	s.tasks_accepted = 2;
	struct cost_usage u;
	/* 2 replicas of 4 GPUs, no cluster figures: 8 GPUs x 2 h = 16 GPU-h up,
	 * a quarter of it busy */
	costing_usage(&u, &s, NULL, 2, 4, 10, 21);
	assert_true(u.duration_s == 7200 && u.periods_per_month == 21);
	assert_true(u.busy_s_per_gpu == 1800 && u.idle_s_per_gpu == 5400);
	assert_true(fabs(u.gpu_hours_provisioned - 16) < 1e-12);
	assert_true(fabs(u.gpu_hours_busy - 4) < 1e-12);
	assert_int_equal(u.prompt_tokens, 1000);
	assert_int_equal(u.cached_tokens, 900);
	assert_int_equal(u.output_tokens, 50);
	assert_int_equal(u.calls, 10);
	assert_int_equal(u.tasks, 4);
	assert_int_equal(u.tasks_accept_known, 3);
	assert_int_equal(u.tasks_accepted, 2);
	assert_int_equal(u.engineers, 10);
	struct diag d;
	diag_init(&d);
	assert_int_equal(cost_usage_check(&u, &d), 0);
	/* the cluster's GPU-hours win when given */
	struct cluster_summary cls;
	memset(&cls, 0, sizeof(cls));
	cls.gpu_hours_provisioned = 12;
	cls.gpu_hours_busy = 3;
	costing_usage(&u, &s, &cls, 2, 4, 0, 0);
	assert_true(u.gpu_hours_provisioned == 12 && u.gpu_hours_busy == 3);
	assert_null(u.replica_up);
	assert_int_equal(u.replica_up_count, 0);
	/* and so do the replica stretches of its timeline, which the elastic
	 * option bills (granularity, minimum per stretch) */
	struct cost_stretch up[3] = {{.s = 7200, .from_start = true, .to_end = true},
				     {.s = 30}, {.s = 3000, .to_end = true}};
	cls.replica_up = up;
	cls.replica_up_count = 3;
	costing_usage(&u, &s, &cls, 2, 4, 0, 0);
	assert_ptr_equal(u.replica_up, up);
	assert_int_equal(u.replica_up_count, 3);
	assert_int_equal(cost_usage_check(&u, &d), 0);
}

static void test_table(void **state)
{
	(void)state;
	struct cost_api p = { .label = "api test" };
	cost_fig_set(&p.input_usd_mtok, 2, "row a");
	cost_fig_set(&p.cached_usd_mtok, 0.1, "row b");
	cost_fig_set(&p.output_usd_mtok, 10, "row c");
	struct cost_usage u = {
		.duration_s = 3600, .periods_per_month = 1, .gpus_per_replica = 1, .replicas = 1,
		.prompt_tokens = 1000000, .cached_tokens = 900000, .output_tokens = 50000,
		.tasks = 2, .engineers = 1,
	};
	struct costing c = {.hardware = "test-gpu", .periods_per_month = 1, .n = 1,
			    .periods_source = "given"};
	struct diag d;
	diag_init(&d);
	assert_int_equal(cost_api_eval(&p, &u, NULL, &c.r[0], &d), 0);
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);
	assert_non_null(f);
	assert_int_equal(costing_write_table(f, &c, &d), 0);
	fclose(f);
	assert_non_null(strstr(buf, "  api test                                           0.79"));
	assert_non_null(strstr(buf, "api test: 0.79 USD per month = input 0.20 + cached_input 0.09 + "
				    "output 0.50"));
	assert_non_null(strstr(buf, "row c"));
	assert_null(strstr(buf, "Energy"));
	assert_non_null(strstr(buf, "A month: 1 replays of the trace (given)"));
	assert_null(strstr(buf, "Not priced"));
	free(buf);
	/* no option priced, no power figure: both said, not silent */
	c.n = 0;
	snprintf(c.note, sizeof(c.note), "purchase and energy: no TDP");
	f = open_memstream(&buf, &n);
	assert_non_null(f);
	assert_int_equal(costing_write_table(f, &c, &d), 0);
	fclose(f);
	assert_non_null(strstr(buf, "no purchase, dedicated or rental price for test-gpu"));
	assert_non_null(strstr(buf, "Not priced: purchase and energy: no TDP"));
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_usage_from_run),
		cmocka_unit_test(test_table),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
