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
	cost_fig_set(&p.operator_usd_month, 3000, "test");
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
	cost_fig_set(&p.operator_usd_month, 0, "test");
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
	/* a turns factor of 2 doubles the busy hours */
	struct cost_task t;
	cost_task_default(&t);
	t.turns_factor.value = 2;
	assert_int_equal(cost_energy_eval(&u, 700, 80, 1.5, &t, &e, &d), 0);
	NEAR(e.busy_gpu_hours_month, 168);
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
	cost_fig_set(&p.operator_usd_month, 0, "test");
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
	double up[2] = {1000, 2000.5};
	struct cost_usage v = {
		.duration_s = 8 * 3600, .periods_per_month = 20, .gpus_per_replica = 2,
		.replicas = 2, .replica_up_s = up, .replica_up_count = 2,
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

	/* a weaker model: 1.5x the turns, 40% accepted:
	 * 0.79 x 1.5 = 1.185 per month; 4 x 0.4 = 1.6 accepted tasks */
	struct cost_task t;
	cost_task_default(&t);
	cost_fig_set(&t.turns_factor, 1.5, "test");
	cost_fig_set(&t.acceptance_rate, 0.4, "test");
	assert_int_equal(cost_api_eval(&p, &u, &t, &r, &d), 0);
	NEAR(r.usd_month, 1.185);
	NEAR(r.accepted_tasks_month, 1.6);
	NEAR(r.usd_per_accepted_task, 1.185 / 1.6);

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
 * x $10,804 = 21,608, plus $5,000 operator time = 26,608. */
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
	NEAR(p.operator_usd_month.value, 5000);
	struct cost_usage u = {
		.duration_s = 3600, .gpus_per_replica = 4, .replicas = 3, .output_tokens = 1,
		.tasks = 1, 
	};
	struct cost_result r;
	assert_int_equal(cost_dedicated_eval(&p, &u, NULL, &r, &d), 0);
	NEAR(find_assumption(&r, "servers")->value, 2);
	NEAR(r.usd_month, 26608);
	/* no dedicated price for a bare H100 */
	assert_int_equal(cost_dedicated_from_prices(&p, pr, catalog_hardware(cat, "h100-sxm"), &d),
			 COST_NO_PRICE);
	/* a EUR server converted at the stated rate: 889 x 1.068 */
	assert_int_equal(cost_dedicated_from_prices(&p, pr, catalog_hardware(cat, "hetzner-gex131"),
						    &d), 0);
	NEAR(p.server_usd_month.value, 889 * 1.068);
	assert_non_null(strstr(p.server_usd_month.source, "EUR 889"));
	catalog_free(cat);
	prices_free(pr);
}

/* Parameters from the catalogues: the 8xH100 system is priced as eight
 * street H100s (the higher middle of $23,500 used and $30,000 street),
 * watts from the TDP, defaults from the named rows. */
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
	NEAR(p.system_usd.value, 240000);
	NEAR(p.gpus_per_system.value, 8);
	assert_non_null(strstr(p.system_usd.source, "GPUs only"));
	NEAR(p.busy_w.value, 700);
	NEAR(p.idle_w.value, 700 * COST_IDLE_TDP_FRACTION);
	assert_non_null(strstr(p.busy_w.source, "TDP"));
	NEAR(p.pue.value, 1.54);
	NEAR(p.electricity_usd_kwh.value, 0.1194);
	NEAR(p.amortisation_months.value, 36);
	NEAR(p.resale_fraction.value, 0);
	NEAR(p.operator_usd_month.value, 5000);
	/* measured figures win over the TDP: DGX Spark */
	struct cost_fig busy, idle;
	assert_int_equal(cost_watts(catalog_hardware(cat, "dgx-spark"), &busy, &idle, &d), 0);
	assert_true(busy.value < 140);
	NEAR(idle.value, 40);
	assert_non_null(strstr(idle.source, "measured idle"));

	struct cost_elastic e;
	assert_int_equal(cost_elastic_from_prices(&e, pr, catalog_hardware(cat, "hgx-h100-8"), &d), 0);
	NEAR(e.usd_per_gpu_hour.value, 2.5); /* median of the nine H100 rows */
	assert_int_equal(cost_elastic_from_prices(&e, pr, catalog_hardware(cat, "rtx-3090"), &d),
			 COST_NO_PRICE);
	/* no row here: the hardware catalogue's own figures (field notes) */
	assert_int_equal(cost_elastic_from_prices(&e, pr, catalog_hardware(cat, "h100-pcie"), &d), 0);
	NEAR(e.usd_per_gpu_hour.value, 2.79);
	assert_non_null(strstr(e.usd_per_gpu_hour.source, "hardware.json h100-pcie: rent_per_hour"));
	assert_int_equal(cost_purchase_from_prices(&p, pr, catalog_hardware(cat, "ws-rtx-pro-6000"),
						   &d), 0);
	NEAR(p.system_usd.value, 16000 * 1.068); /* EUR at the price file's rate */
	NEAR(p.gpus_per_system.value, 1);
	assert_non_null(strstr(p.system_usd.source, "EUR 16000 converted"));
	assert_int_equal(cost_purchase_from_prices(&p, pr, catalog_hardware(cat, "ws-2x-rtx-5090"),
						   &d), 0);
	NEAR(p.gpus_per_system.value, 2);
	assert_int_equal(cost_purchase_from_prices(&p, pr, catalog_hardware(cat, "rtx-3090"), &d),
			 COST_NO_PRICE);
	catalog_free(cat);
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_purchase_8xh100_by_hand),
		cmocka_unit_test(test_purchase_whole_systems),
		cmocka_unit_test(test_energy_busy_idle),
		cmocka_unit_test(test_elastic_gpu_hours_times_price),
		cmocka_unit_test(test_api_by_hand),
		cmocka_unit_test(test_seats_by_hand),
		cmocka_unit_test(test_dedicated_by_hand),
		cmocka_unit_test(test_from_catalogues),
		cmocka_unit_test(test_bad_inputs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
