/* SPDX-License-Identifier: Apache-2.0
 * Tests for models/cost: each way of paying against arithmetic done by
 * hand (the figures in the comments), the energy figures, task economics,
 * and the helpers that take parameters from the price and hardware
 * catalogues.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "models/catalog.h"
#include "models/cost.h"
#include "models/prices.h"

static void near(double a, double b, int line)
{
	if (!(fabs(a - b) <= 1e-9 * fmax(1.0, fabs(b))))
		fail_msg("line %d: %.12g, expected %.12g", line, a, b);
}
#define NEAR(a, b) near((a), (b), __LINE__)

static const struct cost_assumption *find_assumption(const struct cost_result *r,
						     const char *name)
{
	for (size_t i = 0; i < r->assumption_count; i++)
		if (strcmp(r->assumptions[i].name, name) == 0)
			return &r->assumptions[i];
	fail_msg("no assumption %s", name);
	return NULL;
}

static double part_of(const struct cost_result *r, const char *name)
{
	for (size_t i = 0; i < r->part_count; i++)
		if (strcmp(r->parts[i].name, name) == 0)
			return r->parts[i].usd_month;
	fail_msg("no part %s", name);
	return 0;
}

/* One hour of one 8-GPU replica busy the whole time at 10,000 output
 * tokens/s, repeated around the clock (periods 0: 730 per month). */
static struct cost_usage full_node_hour(void)
{
	struct cost_usage u = {
		.duration_s = 3600,
		.gpus_per_replica = 8,
		.replicas = 1,
		.busy_s_per_gpu = 3600,
		.idle_s_per_gpu = 0,
		.prompt_tokens = 500000000,
		.cached_tokens = 450000000,
		.output_tokens = 36000000,
		.calls = 4000,
		.tasks = 100,
		.tasks_accept_known = 100, .tasks_accepted = 80,
		.engineers = 50,
	};
	return u;
}

/* An 8xH100 node at $16,000 a month all in, at full utilisation:
 *   capital   432,000 / 36 months            = 12,000
 *   power     8 GPUs x 730 h x 625 W = 3,650 kWh x PUE 1.2 = 4,380 kWh
 *             x $0.10                          =    438
 *   hosting                                    =    562
 *   operator                                   =  3,000   -> 16,000
 * output per month: 10,000 tok/s x 3,600 s x 730 = 26.28e9 tokens
 * per 1M output tokens: 16,000 / 26,280 = 0.60882800...
 * tasks: 100 per hour x 730 = 73,000; 80% accepted = 58,400;
 * per accepted task 16,000 / 58,400 = 0.27397260...
 * energy per token: 625 W x 8 GPUs x 3,600 s / 36e6 tokens = 0.5 J */
static void test_purchase_8xh100_by_hand(void **state)
{
	(void)state;
	struct cost_purchase p = { .label = "8xH100 all-in" };
	cost_fig_set(&p.system_usd, 432000, "test");
	cost_fig_set(&p.gpus_per_system, 8, "test");
	cost_fig_set(&p.amortisation_months, 36, "test");
	cost_fig_set(&p.resale_fraction, 0, "test");
	cost_fig_set(&p.busy_w, 625, "test");
	cost_fig_set(&p.idle_w, 90, "test");
	cost_fig_set(&p.pue, 1.2, "test");
	cost_fig_set(&p.electricity_usd_kwh, 0.10, "test");
	cost_fig_set(&p.hosting_usd_month, 562, "test");
	cost_fig_set(&p.op.usd_month, 3000, "test");
	struct cost_usage u = full_node_hour();
	struct cost_result r;
	struct diag d;
	diag_init(&d);
	assert_int_equal(cost_purchase_eval(&p, &u, NULL, &r, &d), 0);
	NEAR(part_of(&r, "capital"), 12000);
	NEAR(part_of(&r, "power"), 438);
	NEAR(part_of(&r, "hosting"), 562);
	NEAR(part_of(&r, "operator"), 3000);
	NEAR(r.usd_month, 16000);
	NEAR(r.output_tokens_month, 26.28e9);
	NEAR(r.usd_per_mtok_output, 16000.0 / 26280.0);
	NEAR(r.tasks_month, 73000);
	NEAR(r.accepted_tasks_month, 58400);
	NEAR(r.usd_per_accepted_task, 16000.0 / 58400.0);
	NEAR(r.usd_per_engineer_month, 320);
	NEAR(find_assumption(&r, "periods_per_month")->value, 730);
	NEAR(find_assumption(&r, "acceptance_rate")->value, 0.8);
	NEAR(find_assumption(&r, "energy_it")->value, 3650);
	assert_string_equal(find_assumption(&r, "system_price")->source, "test");
	assert_string_equal(r.label, "8xH100 all-in");

	struct cost_energy e;
	assert_int_equal(cost_energy_eval(&u, 625, 90, 1.2, NULL, &e, &d), 0);
	NEAR(e.j_per_output_token, 0.5);
	NEAR(e.kwh_month_it, 3650);
	NEAR(e.kwh_month_facility, 4380);
	NEAR(e.idle_gpu_hours_month, 0);

	/* resale: half back after 36 months halves the capital part */
	cost_fig_set(&p.resale_fraction, 0.5, "test");
	assert_int_equal(cost_purchase_eval(&p, &u, NULL, &r, &d), 0);
	NEAR(part_of(&r, "capital"), 6000);
	NEAR(r.usd_month, 10000);
}

/* Systems are bought whole: the 8-GPU system above at 432,000 over 36
 * months, for one replica of 1 GPU, still costs 12,000 of capital and 562
 * of hosting a month (1 system); 3 replicas of 3 GPUs (9 GPUs) need 2
 * systems: 24,000 and 1,124.  Power follows the GPUs, not the systems. */
static void test_purchase_whole_systems(void **state)
{
	(void)state;
	struct cost_purchase p = { .label = "" };
	cost_fig_set(&p.system_usd, 432000, "test");
	cost_fig_set(&p.gpus_per_system, 8, "test");
	cost_fig_set(&p.amortisation_months, 36, "test");
	cost_fig_set(&p.resale_fraction, 0, "test");
	cost_fig_set(&p.busy_w, 625, "test");
	cost_fig_set(&p.idle_w, 90, "test");
	cost_fig_set(&p.pue, 1.2, "test");
	cost_fig_set(&p.electricity_usd_kwh, 0.10, "test");
	cost_fig_set(&p.hosting_usd_month, 562, "test");
	cost_fig_set(&p.op.usd_month, 0, "test");
	struct cost_usage u = full_node_hour();
	u.gpus_per_replica = 1;
	struct cost_result r;
	struct diag d;
	diag_init(&d);
	assert_int_equal(cost_purchase_eval(&p, &u, NULL, &r, &d), 0);
	NEAR(find_assumption(&r, "systems")->value, 1);
	NEAR(part_of(&r, "capital"), 12000);
	NEAR(part_of(&r, "hosting"), 562);
	NEAR(part_of(&r, "power"), 438.0 / 8); /* one GPU busy all month */
	u.replicas = 3;
	u.gpus_per_replica = 3;
	assert_int_equal(cost_purchase_eval(&p, &u, NULL, &r, &d), 0);
	NEAR(find_assumption(&r, "systems")->value, 2);
	NEAR(part_of(&r, "capital"), 24000);
	NEAR(part_of(&r, "hosting"), 1124);
	NEAR(part_of(&r, "power"), 438.0 * 9 / 8);
}

/* Half-busy GPUs: power from busy and idle time.  One workday of 8 h
 * repeated 21 times a month, each GPU busy 2 h of it:
 *   busy 2 h x 21 = 42 GPU-h per GPU; idle 730 - 42 = 688 h
 *   IT energy per GPU = 42 x 700 W + 688 x 80 W = 29,400 + 55,040 Wh
 *   = 84.44 kWh; 2 GPUs = 168.88 kWh; x PUE 1.5 = 253.32 kWh.
 *   J per output token over the day: (7,200 s x 700 + 21,600 s x 80) x 2
 *   / 1e6 tokens = (5,040,000 + 1,728,000) x 2 / 1e6 = 13.536 J */
static void test_energy_busy_idle(void **state)
{
	(void)state;
	struct cost_usage u = {
		.duration_s = 8 * 3600, .periods_per_month = 21, .gpus_per_replica = 2,
		.replicas = 1, .busy_s_per_gpu = 7200, .idle_s_per_gpu = 21600,
		.output_tokens = 1000000, .tasks = 10, 
	};
	struct cost_energy e;
	struct diag d;
	diag_init(&d);
	assert_int_equal(cost_energy_eval(&u, 700, 80, 1.5, NULL, &e, &d), 0);
	NEAR(e.busy_gpu_hours_month, 84);
	NEAR(e.idle_gpu_hours_month, 1376);
	NEAR(e.kwh_month_it, 168.88);
	NEAR(e.kwh_month_facility, 253.32);
	NEAR(e.j_per_output_token, 13.536);
	/* a turns factor changes the tasks the traffic completes, not the
	 * traffic: the busy hours stay */
	struct cost_task t;
	cost_task_default(&t);
	t.turns_factor.value = 2;
	assert_int_equal(cost_energy_eval(&u, 700, 80, 1.5, &t, &e, &d), 0);
	NEAR(e.busy_gpu_hours_month, 84);
}

/* Elastic = GPU-hours x price.  10 GPU-hours per day, 30 days, $2.49:
 * 300 x 2.49 = 747 (continuous days: nothing outside the periods). */
static void test_elastic_gpu_hours_times_price(void **state)
{
	(void)state;
	struct cost_elastic p = { .label = "" };
	cost_fig_set(&p.usd_per_gpu_hour, 2.49, "test");
	cost_fig_set(&p.billing_granularity_s, 1, "test");
	cost_fig_set(&p.min_replicas, 0, "test");
	cost_fig_set(&p.op.usd_month, 0, "test");
	struct cost_usage u = {
		.duration_s = 86400, .periods_per_month = 730.0 / 24.0, .gpus_per_replica = 1,
		.replicas = 2, .gpu_hours_provisioned = 10, .busy_s_per_gpu = 0,
		.output_tokens = 1000, .tasks = 1, .tasks_accept_known = 1, .tasks_accepted = 1,
	};
	struct cost_result r;
	struct diag d;
	diag_init(&d);
	assert_int_equal(cost_elastic_eval(&p, &u, NULL, &r, &d), 0);
	NEAR(find_assumption(&r, "gpu_hours_month")->value, 10 * 730.0 / 24.0);
	NEAR(r.usd_month, 10 * 730.0 / 24.0 * 2.49);
	NEAR(part_of(&r, "min_replicas"), 0);
	assert_string_equal(r.label, "elastic");

	/* billing granularity and the floor outside the periods: replica
	 * stretches of 1,000 s and 2,000.5 s billed by the minute:
	 * 17 x 60 + 34 x 60 = 3,060 s x 2 GPUs = 1.7 GPU-h per 8 h day;
	 * 20 days = 34 GPU-h; outside them 730 - 160 = 570 h x 1 replica x
	 * 2 GPUs = 1,140 GPU-h; at $2.50: 85 + 2,850 = 2,935 */
	struct cost_stretch up[2] = {{.s = 1000}, {.s = 2000.5}};
	struct cost_usage v = {
		.duration_s = 8 * 3600, .periods_per_month = 20, .gpus_per_replica = 2,
		.replicas = 2, .replica_up = up, .replica_up_count = 2,
		.output_tokens = 1000, .tasks = 1, 
	};
	cost_fig_set(&p.usd_per_gpu_hour, 2.5, "test");
	cost_fig_set(&p.billing_granularity_s, 60, "test");
	cost_fig_set(&p.min_replicas, 1, "test");
	assert_int_equal(cost_elastic_eval(&p, &v, NULL, &r, &d), 0);
	NEAR(find_assumption(&r, "gpu_hours_per_period")->value, 1.7);
	NEAR(part_of(&r, "gpu_hours"), 85);
	NEAR(part_of(&r, "min_replicas"), 2850);
	NEAR(r.usd_month, 2935);
	/* per-second billing bills what was up */
	cost_fig_set(&p.billing_granularity_s, 1, "test");
	assert_int_equal(cost_elastic_eval(&p, &v, NULL, &r, &d), 0);
	NEAR(find_assumption(&r, "gpu_hours_per_period")->value, 3001 * 2 / 3600.0);
}

/* Rental as billed, by hand: each stretch a replica was up (a cold start
 * included) is a bill of its own, rounded up to whole units of the billing
 * granularity and at least the minimum billing period; when the replayed
 * periods fill the month back to back, a stretch reaching an end of the span
 * runs on into the next period's and is billed as measured.  $1 per
 * GPU-hour, one GPU per replica, a 2 h span. */
static void test_elastic_billed_stretches(void **state)
{
	(void)state;
	struct cost_elastic p = { .label = "" };
	cost_fig_set(&p.usd_per_gpu_hour, 1, "test");
	cost_fig_set(&p.billing_granularity_s, 3600, "test: by the hour");
	cost_fig_set(&p.min_billing_s, 0, "test");
	cost_fig_set(&p.min_replicas, 0, "test");
	cost_fig_set(&p.op.usd_month, 0, "test");
	/* a 30 s start cancelled, a 1,000 s burst, one up from the start for
	 * 500 s, one up all along */
	struct cost_stretch up[4] = {
		{.s = 30}, {.s = 1000}, {.s = 500, .from_start = true},
		{.s = 7200, .from_start = true, .to_end = true},
	};
	struct cost_usage u = {
		.duration_s = 7200, .periods_per_month = 20, .gpus_per_replica = 1, .replicas = 4,
		.replica_up = up, .replica_up_count = 4, .output_tokens = 1000, .tasks = 1,
	};
	struct cost_result r;
	struct diag d;
	diag_init(&d);
	/* 20 working periods of 2 h: each stretch its own bill, by the hour:
	 * 3,600 + 3,600 + 3,600 + 7,200 s = 5 GPU-h a period, 100 a month */
	assert_int_equal(cost_elastic_eval(&p, &u, NULL, &r, &d), 0);
	NEAR(find_assumption(&r, "gpu_hours_per_period")->value, 5);
	NEAR(part_of(&r, "gpu_hours"), 100);
	assert_non_null(strstr(find_assumption(&r, "gpu_hours_per_period")->source,
			       "4 replica stretches (4 billed on their own"));
	/* around the clock (365 periods back to back): the two stretches at
	 * the span's ends run on, billed as measured: 3,600 + 3,600 + 500 +
	 * 7,200 s */
	u.periods_per_month = 0;
	assert_int_equal(cost_elastic_eval(&p, &u, NULL, &r, &d), 0);
	NEAR(find_assumption(&r, "gpu_hours_per_period")->value, 14900 / 3600.0);
	NEAR(part_of(&r, "gpu_hours"), 14900 / 3600.0 * 365);
	/* per second with a 60 s minimum: the cancelled start is billed a
	 * minute: 60 + 1,000 + 500 + 7,200 s */
	u.periods_per_month = 20;
	cost_fig_set(&p.billing_granularity_s, 1, "test");
	cost_fig_set(&p.min_billing_s, 60, "test");
	assert_int_equal(cost_elastic_eval(&p, &u, NULL, &r, &d), 0);
	NEAR(find_assumption(&r, "gpu_hours_per_period")->value, 8760 / 3600.0);
	NEAR(find_assumption(&r, "min_billing_period")->value, 60);
	/* no stretches: every replica up the whole span, one stretch each;
	 * 5,000 s by the hour is 2 h in periods, 5,000 s back to back */
	struct cost_usage w = {
		.duration_s = 5000, .periods_per_month = 20, .gpus_per_replica = 1, .replicas = 2,
		.output_tokens = 1000, .tasks = 1,
	};
	cost_fig_set(&p.billing_granularity_s, 3600, "test");
	assert_int_equal(cost_elastic_eval(&p, &w, NULL, &r, &d), 0);
	NEAR(find_assumption(&r, "gpu_hours_per_period")->value, 4);
	w.gpu_hours_provisioned = 2 * 5000 / 3600.0; /* the same, given */
	assert_int_equal(cost_elastic_eval(&p, &w, NULL, &r, &d), 0);
	NEAR(find_assumption(&r, "gpu_hours_per_period")->value, 4);
	w.periods_per_month = 0;
	assert_int_equal(cost_elastic_eval(&p, &w, NULL, &r, &d), 0);
	NEAR(find_assumption(&r, "gpu_hours_per_period")->value, 10000 / 3600.0);
	/* fewer GPU-hours than the whole span and no stretches: billed as
	 * given, and said so */
	w.periods_per_month = 20;
	w.gpu_hours_provisioned = 1;
	assert_int_equal(cost_elastic_eval(&p, &w, NULL, &r, &d), 0);
	NEAR(find_assumption(&r, "gpu_hours_per_period")->value, 1);
	assert_non_null(strstr(find_assumption(&r, "gpu_hours_per_period")->source,
			       "granularity and minimum not applied"));
	/* a stretch longer than the span is refused */
	up[1].s = 7201;
	assert_int_equal(cost_elastic_eval(&p, &u, NULL, &r, &d), DIAG_EINPUT);
	assert_non_null(strstr(d.msg, "replica stretch 1"));
}

/* API cost of a trace by hand, Claude Sonnet 5.5 list prices ($2 input,
 * $0.10 cache read, $10 output per 1M), one period a month:
 *   100,000 uncached x 2 / 1e6 = 0.20
 *   900,000 cached   x 0.10 / 1e6 = 0.09
 *    50,000 output   x 10 / 1e6 = 0.50          -> 0.79 */
static void test_api_by_hand(void **state)
{
	(void)state;
	struct prices *pr = NULL;
	struct diag d;
	diag_init(&d);
	assert_int_equal(prices_load(&pr, NULL, &d), 0);
	struct cost_api p;
	assert_int_equal(cost_api_from_prices(&p, pr, "claude-sonnet-5-5", &d), 0);
	NEAR(p.input_usd_mtok.value, 2);
	NEAR(p.cached_usd_mtok.value, 0.1);
	NEAR(p.output_usd_mtok.value, 10);
	assert_non_null(strstr(p.cached_usd_mtok.source, "2026-10-07"));
	struct cost_usage u = {
		.duration_s = 3600, .periods_per_month = 1, .gpus_per_replica = 1, .replicas = 1,
		.prompt_tokens = 1000000, .cached_tokens = 900000, .output_tokens = 50000,
		.tasks = 4, .tasks_accept_known = 4, .tasks_accepted = 2, .engineers = 2,
	};
	struct cost_result r;
	assert_int_equal(cost_api_eval(&p, &u, NULL, &r, &d), 0);
	NEAR(part_of(&r, "input"), 0.20);
	NEAR(part_of(&r, "cached_input"), 0.09);
	NEAR(part_of(&r, "output"), 0.50);
	NEAR(r.usd_month, 0.79);
	NEAR(r.usd_per_mtok_output, 0.79 / 0.05);
	NEAR(r.usd_per_accepted_task, 0.79 / 2);
	NEAR(r.usd_per_engineer_month, 0.395);

	/* a weaker model: 1.5x the turns, 40% accepted: the same traffic,
	 * 0.79 per month, completes 4 / 1.5 tasks, 0.4 of them accepted; per
	 * 1M output tokens unchanged */
	double per_mtok = r.usd_per_mtok_output;
	struct cost_task t;
	cost_task_default(&t);
	cost_fig_set(&t.turns_factor, 1.5, "test");
	cost_fig_set(&t.acceptance_rate, 0.4, "test");
	assert_int_equal(cost_api_eval(&p, &u, &t, &r, &d), 0);
	NEAR(r.usd_month, 0.79);
	NEAR(r.accepted_tasks_month, 4 / 1.5 * 0.4);
	NEAR(r.usd_per_accepted_task, 0.79 / (4 / 1.5 * 0.4));
	NEAR(r.usd_per_mtok_output, per_mtok);
	/* the quality factor scales the trace's own acceptance, and is listed */
	cost_task_default(&t);
	cost_fig_set(&t.quality_factor, 0.5, "scores");
	assert_int_equal(cost_api_eval(&p, &u, &t, &r, &d), 0);
	NEAR(r.accepted_tasks_month, 4 * 0.5 * 0.5); /* the trace: 2 of 4 */
	bool listed = false;
	for (size_t k = 0; k < r.assumption_count; k++)
		listed |= strcmp(r.assumptions[k].name, "quality_factor") == 0 &&
			  r.assumptions[k].value == 0.5 && strstr(r.assumptions[k].source, "scores");
	assert_true(listed);
	/* ... but not a figure given for the model itself */
	cost_fig_set(&t.acceptance_rate, 0.4, "pilot");
	assert_int_equal(cost_api_eval(&p, &u, &t, &r, &d), 0);
	NEAR(r.accepted_tasks_month, 4 * 0.4);
	cost_task_default(&t);
	t.quality_factor.value = 0;
	assert_int_equal(cost_api_eval(&p, &u, &t, &r, &d), DIAG_EINPUT);
	assert_non_null(strstr(d.msg, "quality factor 0"));
	diag_init(&d);

	/* no cached price published: cache reads priced as input */
	assert_int_equal(cost_api_from_prices(&p, pr, "devstral-2", &d), 0);
	NEAR(p.cached_usd_mtok.value, 0.4);
	assert_non_null(strstr(p.cached_usd_mtok.source, "priced as input"));
	assert_int_equal(cost_api_from_prices(&p, pr, "no-such-model", &d), DIAG_EINPUT);
	assert_non_null(strstr(d.msg, "no API prices for 'no-such-model'"));
	prices_free(pr);
}

/* Seats.  GitHub Copilot Business: $19 a seat, $19 of usage included,
 * overage at list.  10 engineers, usage worth $300 at list a month:
 * seats 190 + overage (300 - 190) = 300.  Claude Team Standard ($25,
 * minimum 5) for 3 engineers: 5 x 25 = 125, usage not priced. */
static void test_seats_by_hand(void **state)
{
	(void)state;
	struct prices *pr = NULL;
	struct diag d;
	diag_init(&d);
	assert_int_equal(prices_load(&pr, NULL, &d), 0);
	struct cost_seats p;
	assert_int_equal(cost_seats_from_prices(&p, pr, "github-copilot-business",
						"claude-sonnet-5-5", &d), 0);
	NEAR(p.usd_per_seat_month.value, 19);
	NEAR(p.included_usage_usd.value, 19);
	NEAR(p.overage_at_api_list.value, 1);
	/* $300 of output at $10 per 1M = 30M output tokens in the month */
	struct cost_usage u = {
		.duration_s = 3600, .periods_per_month = 1, .gpus_per_replica = 1, .replicas = 1,
		.output_tokens = 30000000, .tasks = 10,  .engineers = 10,
	};
	struct cost_result r;
	assert_int_equal(cost_seats_eval(&p, &u, NULL, &r, &d), 0);
	NEAR(find_assumption(&r, "usage_at_list")->value, 300);
	NEAR(part_of(&r, "seats"), 190);
	NEAR(part_of(&r, "overage"), 110);
	NEAR(r.usd_month, 300);
	NEAR(r.usd_per_engineer_month, 30);
	NEAR(r.usd_per_accepted_task, 30); /* no acceptance in the trace: all 10 */

	assert_int_equal(cost_seats_from_prices(&p, pr, "claude-team-standard-annual",
						"claude-sonnet-5-5", &d), 0);
	u.engineers = 3;
	assert_int_equal(cost_seats_eval(&p, &u, NULL, &r, &d), 0);
	NEAR(find_assumption(&r, "seats")->value, 5);
	NEAR(r.usd_month, 125);
	NEAR(find_assumption(&r, "included_usage")->value, -1);
	u.engineers = 0;
	assert_int_equal(cost_seats_eval(&p, &u, NULL, &r, &d), DIAG_EINPUT);
	prices_free(pr);
}

/* Dedicated: 3 replicas x 4 GPUs = 12 GPUs in 8-GPU servers = 2 servers
 * x $10,804 = 21,608, plus operator time $5,000 + 2 servers x $219.04 (an
 * 8-GPU system's share) = 5,438.08: 27,046.08. */
static void test_dedicated_by_hand(void **state)
{
	(void)state;
	struct prices *pr = NULL;
	struct catalog *cat = NULL;
	struct diag d;
	diag_init(&d);
	assert_int_equal(prices_load(&pr, NULL, &d), 0);
	assert_int_equal(catalog_load(&cat, NULL, &d), 0);
	struct cost_dedicated p;
	assert_int_equal(cost_dedicated_from_prices(&p, pr, catalog_hardware(cat, "hgx-h100-8"), &d),
			 0);
	NEAR(p.server_usd_month.value, 10804);
	NEAR(p.gpus_per_server.value, 8);
	assert_true(p.op.usd_month.value < 0); /* the model */
	NEAR(p.op.base_usd_month.value, 5000);
	struct cost_usage u = {
		.duration_s = 3600, .gpus_per_replica = 4, .replicas = 3, .output_tokens = 1,
		.tasks = 1, 
	};
	struct cost_result r;
	assert_int_equal(cost_dedicated_eval(&p, &u, NULL, &r, &d), 0);
	NEAR(find_assumption(&r, "servers")->value, 2);
	NEAR(part_of(&r, "operator"), 5438.08);
	NEAR(r.usd_month, 27046.08);
	/* no dedicated price for a bare H100 */
	assert_int_equal(cost_dedicated_from_prices(&p, pr, catalog_hardware(cat, "h100-sxm"), &d),
			 COST_NO_PRICE);
	/* a EUR server converted at the stated rate: 889 x 1.068 */
	assert_int_equal(cost_dedicated_from_prices(&p, pr, catalog_hardware(cat, "hetzner-gex131"),
						    &d), 0);
	NEAR(p.server_usd_month.value, 889 * 1.068);
	assert_non_null(strstr(p.server_usd_month.source, "EUR 889"));
	/* and never per hour: a flat EUR 889 a month is not EUR 889 / 730 an
	 * hour, whatever hourly figure the hardware catalogue gives it */
	struct cost_elastic e;
	const struct cat_hardware *gex = catalog_hardware(cat, "hetzner-gex131");
	assert_int_equal(cost_elastic_from_prices(&e, pr, gex, NULL, &d), COST_NO_PRICE);
	struct cat_hardware derived = *gex;
	derived.rent_hour = (struct cat_price){ .currency = CAT_CUR_EUR, .amount = 889.0 / 730.0,
						.date = (char *)"2026-08",
						.source = (char *)"EUR 889 / 730 h" };
	assert_int_equal(cost_elastic_from_prices(&e, pr, &derived, NULL, &d), COST_NO_PRICE);
	catalog_free(cat);
	prices_free(pr);
}

/* Parameters from the catalogues: the 8xH100 system is priced as the
 * complete HGX H100 server of its own row ($300,000), watts from the TDP,
 * defaults from the named rows. */
static void test_from_catalogues(void **state)
{
	(void)state;
	struct prices *pr = NULL;
	struct catalog *cat = NULL;
	struct diag d;
	diag_init(&d);
	assert_int_equal(prices_load(&pr, NULL, &d), 0);
	assert_int_equal(catalog_load(&cat, NULL, &d), 0);
	struct cost_purchase p;
	assert_int_equal(cost_purchase_from_prices(&p, pr, catalog_hardware(cat, "hgx-h100-8"), &d),
			 0);
	NEAR(p.system_usd.value, 300000);
	NEAR(p.gpus_per_system.value, 8);
	assert_non_null(strstr(p.system_usd.source, "hgx-h100-8-itct"));
	NEAR(p.host_share_usd.value, 0); /* a server row: its host is in its price */
	assert_non_null(strstr(p.not_priced, "network, installation and a maintenance contract"));
	NEAR(p.busy_w.value, 700);
	NEAR(p.idle_w.value, 700 * COST_IDLE_TDP_FRACTION);
	assert_non_null(strstr(p.busy_w.source, "TDP"));
	NEAR(p.pue.value, 1.54);
	NEAR(p.electricity_usd_kwh.value, 0.1194);
	NEAR(p.amortisation_months.value, 36);
	NEAR(p.resale_fraction.value, 0);
	NEAR(p.op.base_usd_month.value, 5000);
	NEAR(p.op.system_usd_month.value, 219.04);
	NEAR(p.op.system_gpus.value, 8);
	/* measured figures win over the TDP: DGX Spark */
	struct cost_fig busy, idle;
	assert_int_equal(cost_watts(catalog_hardware(cat, "dgx-spark"), &busy, &idle, &d), 0);
	assert_true(busy.value < 140);
	NEAR(idle.value, 40);
	assert_non_null(strstr(idle.source, "measured idle"));

	struct cost_elastic e;
	assert_int_equal(cost_elastic_from_prices(&e, pr, catalog_hardware(cat, "hgx-h100-8"), NULL, &d), 0);
	/* the median of the eight on-demand H100 rows (2.00 ... 10.08), not
	 * of all twelve with the spot floor, the reservation, the capacity
	 * block and the index */
	NEAR(e.usd_per_gpu_hour.value, 2.79);
	assert_non_null(strstr(e.usd_per_gpu_hour.source, "median of the 8 on-demand rows of "
				"h100-sxm"));
	assert_int_equal(cost_elastic_from_prices(&e, pr, catalog_hardware(cat, "rtx-3090"), NULL, &d),
			 COST_NO_PRICE);
	/* one provider's row, chosen by the scenario (cost.gpu_hour_row): any
	 * tariff, of the hardware or its GPU; another GPU's row or no row is
	 * an input error naming what was expected */
	assert_int_equal(cost_elastic_from_prices(&e, pr, catalog_hardware(cat, "hgx-h100-8"),
						  "vast-ai-h100-spot", &d), 0);
	NEAR(e.usd_per_gpu_hour.value, 1.52);
	assert_string_equal(e.label, "elastic vast-ai-h100-spot");
	assert_non_null(strstr(e.usd_per_gpu_hour.source, "chosen by cost.gpu_hour_row; tariff spot"));
	assert_int_equal(cost_gpu_hour_row_check(pr, catalog_hardware(cat, "h100-sxm"), "", &d), 0);
	assert_int_equal(cost_elastic_from_prices(&e, pr, catalog_hardware(cat, "hgx-h100-8"),
						  "packet-ai-h200", &d), DIAG_EINPUT);
	assert_string_equal(d.msg, "cost.gpu_hour_row 'packet-ai-h200' prices h200, not the "
			    "deployment's hgx-h100-8 (expected a gpu_hour row of hgx-h100-8 or its "
			    "GPU h100-sxm)");
	diag_init(&d);
	assert_int_equal(cost_gpu_hour_row_check(pr, catalog_hardware(cat, "h100-sxm"),
						 "hetzner-gex131", &d), DIAG_EINPUT);
	assert_string_equal(d.msg, "cost.gpu_hour_row 'hetzner-gex131': the price file has no "
			    "gpu_hour row of that id (expected the id of a gpu_hour row: agentcap "
			    "catalog --prices)");
	diag_init(&d);
	/* no row here: the hardware catalogue's own figures (field notes) */
	assert_int_equal(cost_elastic_from_prices(&e, pr, catalog_hardware(cat, "h100-pcie"), NULL, &d), 0);
	NEAR(e.usd_per_gpu_hour.value, 2.79);
	assert_non_null(strstr(e.usd_per_gpu_hour.source, "hardware.json h100-pcie: rent_per_hour"));
	assert_int_equal(cost_purchase_from_prices(&p, pr, catalog_hardware(cat, "ws-rtx-pro-6000"),
						   &d), 0);
	NEAR(p.system_usd.value, 16000 * 1.068); /* EUR at the price file's rate */
	NEAR(p.gpus_per_system.value, 1);
	assert_non_null(strstr(p.system_usd.source, "EUR 16000 per unit converted"));
	assert_non_null(strstr(p.system_usd.source, "ws-rtx-pro-6000-field-notes"));
	assert_int_equal(cost_purchase_from_prices(&p, pr, catalog_hardware(cat, "ws-2x-rtx-5090"),
						   &d), 0);
	NEAR(p.gpus_per_system.value, 2);
	assert_int_equal(cost_purchase_from_prices(&p, pr, catalog_hardware(cat, "rtx-3090"), &d),
			 COST_NO_PRICE);
	assert_string_equal(p.why_none, ""); /* simply not on offer */
	/* on offer, but with no power figure: bought, its power cannot be
	 * priced, so neither is the purchase (said why; not an error) */
	assert_int_equal(cost_purchase_from_prices(&p, pr,
						   catalog_hardware(cat, "mac-studio-m5-ultra-256gb"),
						   &d), COST_NO_PRICE);
	assert_non_null(strstr(p.why_none, "has no measured power and no TDP"));
	assert_int_equal(d.code, DIAG_OK);
	catalog_free(cat);
	prices_free(pr);
}

/* One hour of g GPUs in replicas of r... as a purchase of hw, evaluated:
 * the result in *out. */
static void purchase_of(const struct prices *pr, const struct catalog *cat, const char *hw,
			int64_t replicas, int64_t gpus, struct cost_purchase *p,
			struct cost_result *out)
{
	struct diag d;
	diag_init(&d);
	if (cost_purchase_from_prices(p, pr, catalog_hardware(cat, hw), &d) != 0)
		fail_msg("%s: %s", hw, d.msg);
	struct cost_usage u = {
		.duration_s = 3600, .gpus_per_replica = gpus, .replicas = replicas,
		.output_tokens = 1000, .tasks = 1,
	};
	if (cost_purchase_eval(p, &u, NULL, out, &d) != 0)
		fail_msg("%s: %s", hw, d.msg);
}

/* Operator time as a model (issue 32: "$5,000/month is added to a single
 * workstation and to an 8-GPU node alike"): base $5,000 + a share per
 * system, $219.04 a month for an 8-GPU system (one loaded GPU cluster
 * engineer, $21,904 a month, per 100 nodes) and 1/8 of it for a one-GPU
 * box.  By hand:
 *   workstation (1 GPU)       5,000 + 1 x 219.04 x 1/8 = 5,027.38
 *   HGX H100 (8 GPUs, 1 box)  5,000 + 1 x 219.04       = 5,219.04
 *   8 bare H100 SXM modules   5,000 + 8 x 219.04 x 1/8 = 5,219.04 (the same GPUs)
 *   2 x TP4 elastic replicas  5,000 + 2 x 219.04 x 4/8 = 5,219.04
 * The whole-figure key overrides the model; a per-system figure given is
 * per system whatever its GPUs. */
static void test_operator_model_by_hand(void **state)
{
	(void)state;
	struct prices *pr = NULL;
	struct catalog *cat = NULL;
	struct diag d;
	diag_init(&d);
	assert_int_equal(prices_load(&pr, NULL, &d), 0);
	assert_int_equal(catalog_load(&cat, NULL, &d), 0);
	struct cost_purchase p;
	struct cost_result ws, node, modules;
	purchase_of(pr, cat, "ws-rtx-pro-6000", 1, 1, &p, &ws);
	purchase_of(pr, cat, "hgx-h100-8", 1, 8, &p, &node);
	purchase_of(pr, cat, "h100-sxm", 1, 8, &p, &modules);
	NEAR(part_of(&ws, "operator"), 5000 + 219.04 / 8);
	NEAR(part_of(&node, "operator"), 5219.04);
	NEAR(part_of(&modules, "operator"), 5219.04);
	assert_true(part_of(&ws, "operator") != part_of(&node, "operator"));
	NEAR(find_assumption(&node, "operator_base")->value, 5000);
	NEAR(find_assumption(&node, "operator_per_system")->value, 219.04);
	NEAR(find_assumption(&ws, "operator_per_system")->value, 27.38);
	NEAR(find_assumption(&modules, "systems")->value, 8);
	assert_string_equal(find_assumption(&node, "operator_per_system")->date, "2026-06");
	assert_non_null(strstr(find_assumption(&node, "operator")->source,
			       "operator_base + operator_per_system x 1 systems bought"));

	struct cost_elastic e;
	assert_int_equal(cost_elastic_from_prices(&e, pr, catalog_hardware(cat, "h100-sxm"), NULL,
						  &d), 0);
	struct cost_usage u = {
		.duration_s = 3600, .gpus_per_replica = 4, .replicas = 2, .output_tokens = 1000,
		.tasks = 1,
	};
	struct cost_result r;
	assert_int_equal(cost_elastic_eval(&e, &u, NULL, &r, &d), 0);
	NEAR(part_of(&r, "operator"), 5219.04);
	/* the ends of the ranges: $5,000 + $109.52 and $15,000 + $438.08 an
	 * 8-GPU system */
	struct cost_operator o;
	assert_int_equal(cost_operator_from_prices(&o, pr, COST_OPERATOR_LOW, &d), 0);
	NEAR(o.base_usd_month.value, 5000);
	NEAR(cost_operator_per_system(&o, 8), 109.52);
	assert_int_equal(cost_operator_from_prices(&o, pr, COST_OPERATOR_HIGH, &d), 0);
	NEAR(o.base_usd_month.value, 15000);
	NEAR(cost_operator_per_system(&o, 8), 438.08);
	NEAR(cost_operator_per_system(&o, 1), 54.76);
	/* the whole figure overrides; a per-system figure given is flat */
	e.op.usd_month.value = 1234;
	assert_int_equal(cost_elastic_eval(&e, &u, NULL, &r, &d), 0);
	NEAR(part_of(&r, "operator"), 1234);
	e.op.usd_month.value = -1;
	cost_fig_set(&e.op.system_usd_month, 100, "given");
	cost_fig_set(&e.op.system_gpus, 0, "given: per system");
	assert_int_equal(cost_elastic_eval(&e, &u, NULL, &r, &d), 0);
	NEAR(part_of(&r, "operator"), 5200);
	/* a missing default row is an input error naming it */
	static const char one[] = "{\"schema_version\": 1, \"prices\": [{\"id\": "
		"\"field-notes-loaded\", \"kind\": \"operator_month\", \"item\": \"i\", "
		"\"provider\": \"p\", \"price\": 5000, \"unit\": \"per deployment per month\", "
		"\"currency\": \"USD\", \"date\": \"d\", \"source\": \"s\"}]}";
	struct prices *q = NULL;
	assert_int_equal(prices_parse(&q, "one.json", one, strlen(one), &d), 0);
	assert_int_equal(cost_operator_from_prices(&o, q, COST_OPERATOR_DEFAULT, &d), DIAG_EINPUT);
	assert_string_equal(d.msg, "cost: the price file has no operator_system_month row "
			    "'gpu-cluster-engineer-100-nodes' (expected the default row docs/cost.md "
			    "names)");
	prices_free(q);
	catalog_free(cat);
	prices_free(pr);
}

/* Complete capital (issue 32: "Bare SXM GPUs are priced as whole systems
 * and 8-GPU servers as 'GPUs only'").  By hand:
 *   h100-sxm      $30,000 street + ($300,000 - 8 x $30,000) / 8 = $37,500 a GPU
 *   hgx-h100-8    its own server row: $300,000
 *   hgx-h200-8    8 x ($35,000 + $7,500) = $340,000 (the H100 server's host)
 *   rtx-pro-6000  $12,000 + (EUR 16,000 - EUR 14,000) x 1.068 = $14,136
 *   rtx-5090      $2,699 + (EUR 4,200 x 1.068 - $2,699) = $4,485.60
 *   b200          $40,000: no host priced, said so
 * and every purchase says what it leaves out. */
static void test_complete_capital_by_hand(void **state)
{
	(void)state;
	struct prices *pr = NULL;
	struct catalog *cat = NULL;
	struct diag d;
	diag_init(&d);
	assert_int_equal(prices_load(&pr, NULL, &d), 0);
	assert_int_equal(catalog_load(&cat, NULL, &d), 0);
	static const struct {
		const char *hw;
		int64_t gpus;
		double system, host, capital_month;
		const char *left_out;
	} want[] = {
		{"h100-sxm", 8, 37500, 7500, 8 * 37500 / 36.0,
		 "not priced: network, installation and a maintenance contract"},
		{"hgx-h100-8", 8, 300000, 0, 300000 / 36.0,
		 "not priced: network, installation and a maintenance contract"},
		{"hgx-h200-8", 8, 340000, 7500, 340000 / 36.0,
		 "not priced: network, installation and a maintenance contract"},
		{"rtx-pro-6000", 1, 12000 + 2000 * 1.068, 2000 * 1.068, (12000 + 2136) / 36.0,
		 "not priced: network"},
		{"rtx-5090", 1, 4200 * 1.068, 4200 * 1.068 - 2699, 4485.6 / 36.0,
		 "not priced: network"},
		{"b200", 1, 40000, 0, 40000 / 36.0,
		 "not priced: the host (chassis, CPUs, memory: GPUs only), network"},
		{"dgx-spark", 1, 4699, 0, 4699 / 36.0, "not priced: a maintenance contract (a "
		 "complete box runs as bought"},
		{"ws-rtx-pro-6000", 1, 16000 * 1.068, 0, 16000 * 1.068 / 36.0,
		 "not priced: a maintenance contract"},
		{"ws-rtx-5060-ti", 1, 1300 * 1.068, 0, 1300 * 1.068 / 36.0,
		 "not priced: a maintenance contract"},
		{"ryzen-ai-max-395", 1, 3999, 0, 3999 / 36.0, "not priced: a maintenance contract"},
	};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		struct cost_purchase p;
		struct cost_result r;
		purchase_of(pr, cat, want[i].hw, 1, want[i].gpus, &p, &r);
		if (fabs(p.system_usd.value - want[i].system) > 1e-6 ||
		    fabs(p.host_share_usd.value - want[i].host) > 1e-6)
			fail_msg("%s: system %.10g host %.10g, expected %.10g and %.10g", want[i].hw,
				 p.system_usd.value, p.host_share_usd.value, want[i].system,
				 want[i].host);
		NEAR(part_of(&r, "capital"), want[i].capital_month);
		NEAR(find_assumption(&r, "system_price")->value, want[i].system);
		const struct cost_assumption *np = find_assumption(&r, "not_priced");
		if (!strstr(np->source, want[i].left_out))
			fail_msg("%s: '%s' lacks '%s'", want[i].hw, np->source, want[i].left_out);
		if (want[i].host > 0) {
			const struct cost_assumption *h = find_assumption(&r, "host_share");
			NEAR(h->value, want[i].host);
			assert_true(h->date[0] != '\0');
		}
	}
	catalog_free(cat);
	prices_free(pr);
}

/* A comparison prints one "prices as of" date: the newest of the dates of
 * the prices it used, each read as its leading year, month and day. */
static void test_prices_as_of(void **state)
{
	(void)state;
	static const struct {
		const char *date, *lead;
	} dates[] = {
		{"2026-05-22", "2026-05-22"}, {"2026-08", "2026-08"}, {"2026 mid", "2026"},
		{"2026-Q1", "2026-Q1"}, {"2025 (stored copy; year inferred)", "2025"},
		{"2026-10 (stored copy; model latest)", "2026-10"}, {"n.d. (stored copy)", ""},
		{"2025-06-18 to 2026-05-31", "2025-06-18"}, {"", ""}, {"20261", "2026"},
	};
	for (size_t i = 0; i < sizeof(dates) / sizeof(dates[0]); i++) {
		char out[COST_DATE_MAX];
		cost_date_of(dates[i].date, out);
		assert_string_equal(out, dates[i].lead);
	}
	assert_true(cost_date_after("2026-05-22", "2026-05"));
	assert_true(cost_date_after("2026-05", "2026"));
	assert_true(cost_date_after("2026-Q2", "2026-05"));
	assert_false(cost_date_after("2026-Q1", "2026-03"));
	assert_true(cost_date_after("2025", ""));
	assert_false(cost_date_after("", ""));

	struct prices *pr = NULL;
	struct catalog *cat = NULL;
	struct diag d;
	diag_init(&d);
	assert_int_equal(prices_load(&pr, NULL, &d), 0);
	assert_int_equal(catalog_load(&cat, NULL, &d), 0);
	struct cost_purchase p;
	assert_int_equal(cost_purchase_from_prices(&p, pr, catalog_hardware(cat, "h100-sxm"), &d), 0);
	assert_string_equal(p.system_usd.date, "2026"); /* "2026 mid" */
	assert_string_equal(p.pue.date, "2025-07");
	assert_string_equal(p.amortisation_months.date, ""); /* a default has no date */
	struct cost_usage u = {
		.duration_s = 3600, .gpus_per_replica = 1, .replicas = 1, .output_tokens = 1,
		.tasks = 1,
	};
	struct cost_result r[2];
	assert_int_equal(cost_purchase_eval(&p, &u, NULL, &r[0], &d), 0);
	/* street H100 2026, PUE 2025-07, electricity 2025, operator 2026-08 */
	char as_of[COST_DATE_MAX] = "";
	cost_newest_date(as_of, &r[0]);
	assert_string_equal(as_of, "2026-08");
	/* a figure the scenario sets has no date: it does not count */
	cost_fig_set(&p.op.usd_month, 0, "scenario");
	assert_int_equal(cost_purchase_eval(&p, &u, NULL, &r[0], &d), 0);
	as_of[0] = '\0';
	cost_newest_date(as_of, &r[0]);
	assert_string_equal(as_of, "2026");
	/* the newest over the options compared: the API's 2026-10-07 */
	struct cost_api a;
	assert_int_equal(cost_api_from_prices(&a, pr, "claude-sonnet-5-5", &d), 0);
	assert_int_equal(cost_api_eval(&a, &u, NULL, &r[1], &d), 0);
	cost_newest_date(as_of, &r[1]);
	assert_string_equal(as_of, "2026-10-07");
	catalog_free(cat);
	prices_free(pr);
}

/* The field notes' projections by hand: one year of rent = price per hour
 * x hours a day x 365; a flat monthly rent x 12; cost per 1M output tokens
 * = month / (tok/s x 3600 x 730 h x utilisation / 1e6). */
static void test_projections(void **state)
{
	(void)state;
	struct prices *pr = NULL;
	struct diag d;
	diag_init(&d);
	assert_int_equal(prices_load(&pr, NULL, &d), 0);
	double amount, usd;
	const struct price_row *gmi = prices_find(pr, PRICE_GPU_HOUR, "gmi-cloud-h100");
	static const double hours[3] = {24, 8, 4}, want[3] = {17520, 5840, 2920};
	for (int i = 0; i < 3; i++) {
		assert_int_equal(cost_rent_year(gmi, hours[i], &amount, &usd, &d), 0);
		NEAR(amount, want[i]);
		NEAR(usd, want[i]);
	}
	assert_int_equal(cost_rent_year(prices_find(pr, PRICE_GPU_HOUR, "ovhcloud-h100"), 24,
					&amount, &usd, &d), 0);
	NEAR(amount, 24528);
	NEAR(usd, 24528 * 1.068);
	assert_int_equal(cost_rent_year(prices_find(pr, PRICE_DEDICATED_MONTH, "hetzner-gex131"), 4,
					&amount, &usd, &d), 0);
	NEAR(amount, 10668); /* flat: 889 x 12, whatever the hours */
	assert_int_equal(cost_rent_year(gmi, 25, &amount, &usd, &d), DIAG_EINPUT);
	diag_init(&d);
	assert_int_equal(cost_rent_year(prices_find(pr, PRICE_SEAT, "claude-pro"), 8, &amount, &usd,
					&d), DIAG_EINPUT);
	assert_non_null(strstr(d.msg, "expected a gpu_hour or dedicated_month row"));

	/* a rented 8xH100 node at $16,000 a month serving 620 tok/s */
	double tokens, per;
	assert_int_equal(cost_per_mtok_at(16000, 620, 1, &tokens, &per, &d), 0);
	NEAR(tokens, 620.0 * 730 * 3600); /* 1.63B */
	assert_true(fabs(per - 9.82) < 0.005);
	static const double util[3] = {0.5, 0.2, 0.05}, want_per[3] = {19.64, 49.10, 196.40};
	for (int i = 0; i < 3; i++) {
		assert_int_equal(cost_per_mtok_at(16000, 620, util[i], &tokens, &per, &d), 0);
		assert_true(fabs(per - want_per[i]) < 0.005);
	}
	diag_init(&d);
	assert_int_equal(cost_per_mtok_at(16000, 620, 0, &tokens, &per, &d), DIAG_EINPUT);
	diag_init(&d);
	assert_int_equal(cost_per_mtok_at(16000, 0, 1, &tokens, &per, &d), DIAG_EINPUT);
	prices_free(pr);
}

static void test_bad_inputs(void **state)
{
	(void)state;
	struct cost_api p = { .label = "x" };
	cost_fig_set(&p.input_usd_mtok, 1, "t");
	cost_fig_set(&p.cached_usd_mtok, 0.1, "t");
	cost_fig_set(&p.output_usd_mtok, 5, "t");
	struct cost_usage u = {
		.duration_s = 0, .gpus_per_replica = 1, .replicas = 1, .tasks = 1,
	};
	struct cost_result r;
	struct diag d;
	diag_init(&d);
	assert_int_equal(cost_api_eval(&p, &u, NULL, &r, &d), DIAG_EINPUT);
	assert_non_null(strstr(d.msg, "expected a duration > 0"));
	u.duration_s = 10;
	u.prompt_tokens = 5;
	u.cached_tokens = 6;
	diag_init(&d);
	assert_int_equal(cost_api_eval(&p, &u, NULL, &r, &d), DIAG_EINPUT);
	assert_non_null(strstr(d.msg, "expected cached <= prompt"));
	u.cached_tokens = 1;
	u.busy_s_per_gpu = 11;
	diag_init(&d);
	assert_int_equal(cost_api_eval(&p, &u, NULL, &r, &d), DIAG_EINPUT);
	u.busy_s_per_gpu = 1;
	cost_fig_set(&p.output_usd_mtok, -5, "a bad row");
	diag_init(&d);
	assert_int_equal(cost_api_eval(&p, &u, NULL, &r, &d), DIAG_EINPUT);
	assert_non_null(strstr(d.msg, "api.output_usd_mtok = -5"));
	assert_non_null(strstr(d.msg, "a bad row"));
	cost_fig_set(&p.output_usd_mtok, 5, "t");
	struct cost_task t;
	cost_task_default(&t);
	t.acceptance_rate.value = 1.5;
	diag_init(&d);
	assert_int_equal(cost_api_eval(&p, &u, &t, &r, &d), DIAG_EINPUT);
	assert_non_null(strstr(d.msg, "acceptance rate 1.5"));
	/* the trace's own acceptance when the option sets none */
	u.tasks = 5;
	u.tasks_accept_known = 4;
	u.tasks_accepted = 3;
	assert_int_equal(cost_api_eval(&p, &u, NULL, &r, &d), 0);
	NEAR(find_assumption(&r, "acceptance_rate")->value, 0.75);
	NEAR(r.accepted_tasks_month, 5 * 0.75 * cost_periods_per_month(&u));
	assert_non_null(strstr(find_assumption(&r, "acceptance_rate")->source, "3 accepted of 4"));
	u.tasks_accepted = 5;
	diag_init(&d);
	assert_int_equal(cost_api_eval(&p, &u, NULL, &r, &d), DIAG_EINPUT);
	assert_non_null(strstr(d.msg, "expected accepted <= known <= tasks"));
	assert_string_equal(cost_option_name(COST_ELASTIC), "elastic");
}

/* Long-prompt tiers and off-peak hours as the price catalogue gives them.
 * Claude Haiku 5.5 bills every token of a request whose prompt is above
 * 100,000 tokens at $0.50 / $0.05 / $2.50 (else $0.10 / $0.01 / $0.50):
 * 150,000 prompt tokens, 100,000 of them cached, and 1,000 out cost
 * 50,000 x 0.5 + 100,000 x 0.05 + 1,000 x 2.5 = $0.0325, and exactly
 * 100,000 stays in the base tier.  Qwen3-Coder-Plus has three tiers, above
 * 32,000, 128,000 and 256,000 (models.dev).  DeepSeek V4 Pro is at peak
 * 01-04 and 06-10 UTC Monday to Friday, half price otherwise: a trace's
 * t = 2 h (a Monday, as t = 0 is 00:00 UTC of one) is peak, 5 h and a
 * Saturday's 2 h are not; with the trace's start on a clock, its dates
 * decide (2026-12-07 is a Monday, 2026-12-05 a Saturday). */
static void test_api_tiers_and_off_peak(void **state)
{
	(void)state;
	struct prices *pr = NULL;
	struct diag d;
	diag_init(&d);
	assert_int_equal(prices_load(&pr, NULL, &d), 0);
	struct cost_api h, q, ds;
	assert_int_equal(cost_api_from_prices(&h, pr, "claude-haiku-5-5", &d), 0);
	assert_int_equal(cost_api_from_prices(&q, pr, "qwen3-coder-plus", &d), 0);
	assert_int_equal(cost_api_from_prices(&ds, pr, "deepseek-v4-pro-peak", &d), 0);
	assert_int_equal(h.n_tiers, 1);
	assert_int_equal(cost_api_class(&h, 100000, 0), 0);
	assert_int_equal(cost_api_class(&h, 100001, 0), 1);
	struct cost_api_tokens t = {.calls = 1, .prompt = 150000, .cached = 100000,
				    .output = 1000};
	NEAR(cost_api_usd_class(&h, 1, &t), 0.0325);
	NEAR(cost_api_usd_class(&h, 0, &t), (50000 * 0.1 + 100000 * 0.01 + 1000 * 0.5) / 1e6);
	/* no cache-write row: writes at the tier's input price */
	t.cache_write = 50000;
	NEAR(cost_api_usd_class(&h, 1, &t), 0.0325);

	const int64_t over[] = {32000, 32001, 128000, 128001, 256000, 256001, 1000000};
	const int want[] = {0, 1, 1, 2, 2, 3, 3};
	for (size_t i = 0; i < sizeof(over) / sizeof(over[0]); i++)
		assert_int_equal(cost_api_class(&q, over[i], 0), want[i]);
	struct cost_api_tokens o = {.calls = 1, .prompt = 300000, .output = 2000};
	NEAR(cost_api_usd_class(&q, 3, &o), (300000 * 6.0 + 2000 * 60.0) / 1e6);

	const int64_t H = INT64_C(3600000000000), D = 24 * H;
	assert_int_equal(cost_api_class(&ds, 1000, 2 * H), 0);
	assert_int_equal(cost_api_class(&ds, 1000, 5 * H), COST_API_OFF_PEAK);
	assert_int_equal(cost_api_class(&ds, 1000, 4 * D + 9 * H), 0);       /* Friday */
	assert_int_equal(cost_api_class(&ds, 1000, 5 * D + 2 * H), COST_API_OFF_PEAK);
	assert_int_equal(cost_api_class(&ds, 1000, 7 * D + 2 * H), 0);       /* Monday */
	/* on a clock (cost.trace_start_utc): t = 0 at 2026-12-07 00:00 UTC, a
	 * Monday, then at 2026-12-05 00:00, a Saturday */
	struct cost_api dc = ds;
	dc.clock_set = true;
	dc.clock_t0_ns = INT64_C(1796601600) * 1000000000;
	assert_int_equal(cost_api_class(&dc, 1000, 2 * H), 0);
	dc.clock_t0_ns = INT64_C(1796428800) * 1000000000;
	assert_int_equal(cost_api_class(&dc, 1000, 2 * H), COST_API_OFF_PEAK);
	assert_int_equal(cost_api_class(&dc, 1000, 2 * D + 2 * H), 0);
	struct cost_api_tokens x = {.calls = 1, .prompt = 1000000, .cached = 0, .output = 1000000};
	NEAR(cost_api_usd_class(&ds, 0, &x), 1.32 + 3.96);
	NEAR(cost_api_usd_class(&ds, COST_API_OFF_PEAK, &x), 0.66 + 1.98);

	/* a month of it: the parts add the classes, the tiers' tokens are
	 * said; a usage not split by the classes is refused */
	struct cost_usage u = {.duration_s = 3600, .periods_per_month = 1, .gpus_per_replica = 1,
			       .replicas = 1, .idle_s_per_gpu = 3600, .tasks = 1,
			       .prompt_tokens = 150000 + 20000, .cached_tokens = 100000,
			       .output_tokens = 2000, .calls = 2};
	struct cost_result r;
	assert_int_equal(cost_api_eval(&h, &u, NULL, &r, &d), DIAG_EINTERNAL);
	u.api_split = true;
	snprintf(u.api_split_label, sizeof(u.api_split_label), "%s", h.label);
	cost_api_tokens_add(u.api_class, 1, 150000, 100000, 0, 1000);
	cost_api_tokens_add(u.api_class, 0, 20000, 0, 0, 1000);
	diag_init(&d);
	assert_int_equal(cost_api_eval(&h, &u, NULL, &r, &d), 0);
	NEAR(r.usd_month, 0.0325 + (20000 * 0.1 + 1000 * 0.5) / 1e6);
	NEAR(find_assumption(&r, "tokens_prompt_over_100000")->value, 0.151);
	/* the sensitivity swing moves every class */
	struct cost_api h2 = h;
	cost_api_scale(&h2, 1.5);
	assert_int_equal(cost_api_eval(&h2, &u, NULL, &r, &d), 0);
	NEAR(r.usd_month, 1.5 * (0.0325 + (20000 * 0.1 + 1000 * 0.5) / 1e6));
	/* priced at another API's classes: an internal error, never a bill */
	assert_int_equal(cost_api_eval(&q, &u, NULL, &r, &d), DIAG_EINTERNAL);
	prices_free(pr);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_purchase_8xh100_by_hand),
		cmocka_unit_test(test_purchase_whole_systems),
		cmocka_unit_test(test_energy_busy_idle),
		cmocka_unit_test(test_elastic_gpu_hours_times_price),
		cmocka_unit_test(test_elastic_billed_stretches),
		cmocka_unit_test(test_api_by_hand),
		cmocka_unit_test(test_seats_by_hand),
		cmocka_unit_test(test_dedicated_by_hand),
		cmocka_unit_test(test_from_catalogues),
		cmocka_unit_test(test_operator_model_by_hand),
		cmocka_unit_test(test_complete_capital_by_hand),
		cmocka_unit_test(test_prices_as_of),
		cmocka_unit_test(test_projections),
		cmocka_unit_test(test_bad_inputs),
		cmocka_unit_test(test_api_tiers_and_off_peak),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
