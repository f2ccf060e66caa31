/* SPDX-License-Identifier: Apache-2.0
 * Tests for models/cashflow: the field notes' rent-vs-buy crossing of a
 * 96 GB card, present values and paybacks against arithmetic done by hand
 * (the figures in the comments), the residual rule at the horizon, options
 * that never pay back, the link to cost.h's monthly results, the input
 * errors, and the text and JSON writers.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/cashflow.h"
#include "models/cost.h"

static void near(double a, double b, int line)
{
	if (!(fabs(a - b) <= 1e-9 * fmax(1.0, fabs(b))))
		fail_msg("line %d: %.15g, expected %.15g", line, a, b);
}
#define NEAR(a, b) near((a), (b), __LINE__)

/* One decimal (or two) as a person reads the figure. */
static double rounded(double x, double places)
{
	double s = pow(10, places);
	return round(x * s) / s;
}

static struct cashflow_option buy(double price, double monthly, double months, double resale)
{
	struct cashflow_option o = {.option = COST_PURCHASE, .label = "buy"};
	cost_fig_set(&o.upfront_usd, price, "test price");
	cost_fig_set(&o.monthly_usd, monthly, "test recurring");
	cost_fig_set(&o.amortisation_months, months, "test amortisation");
	cost_fig_set(&o.resale_fraction, resale, "test resale");
	return o;
}

static struct cashflow_option rent(enum cost_option kind, const char *label, double monthly)
{
	struct cashflow_option o = {.option = kind};
	snprintf(o.label, sizeof(o.label), "%s", label);
	cost_fig_set(&o.upfront_usd, 0, "test: nothing up front");
	cost_fig_set(&o.monthly_usd, monthly, "test rent");
	cost_fig_set(&o.amortisation_months, 0, "test: a rental");
	cost_fig_set(&o.resale_fraction, 0, "test: a rental");
	return o;
}

static struct cashflow_params params(double months, double rate)
{
	struct cashflow_params p;
	cost_fig_set(&p.horizon_months, months, "test horizon");
	cost_fig_set(&p.discount_rate, rate, "test rate");
	return p;
}

/* The struct is large (the per-month arrays): one per test, on the heap. */
static struct cashflow *eval_ok(const struct cashflow_params *p, const struct cashflow_option *o,
				size_t n)
{
	struct cashflow *cf = malloc(sizeof(*cf));
	assert_non_null(cf);
	struct diag d;
	diag_init(&d);
	int rc = cashflow_eval(cf, p, o, n, &d);
	if (rc)
		fail_msg("cashflow_eval: %s", d.msg);
	return cf;
}

/* Field notes, "Rental and purchase economics": "Rent vs buy, 96 GB card: a
 * year of Hetzner GEX131 (EUR 10,668, the 300 W Max-Q) costs less than the
 * ~EUR 14,000 Workstation card (600 W) alone; the card-only spend crosses
 * after ~15.7 months, the complete EUR 16,000-18,000 workstation after
 * ~18-20 months (power and operations not included)."
 * No power, operator or resale, no discounting:
 *   14,000 / 889 = 15.748 -> 15.75 months
 *   16,000 / 889 = 17.998 -> 18.0
 *   18,000 / 889 = 20.247 -> 20.2 */
static void test_field_notes_96gb_card(void **state)
{
	(void)state;
	struct cashflow_params p = params(36, 0);
	struct cashflow_option o[2] = {buy(14000, 0, 36, 0),
				       rent(COST_DEDICATED, "hetzner-gex131", 889)};
	struct cashflow *cf = eval_ok(&p, o, 2);
	assert_int_equal(cf->purchase, 0);
	const struct cashflow_series *gex = &cf->series[1];
	/* a year of the rental costs less than the card alone */
	NEAR(gex->cumulative_usd[12], 10668);
	assert_true(gex->cumulative_usd[12] < cf->series[0].cumulative_usd[12]);
	assert_int_equal(gex->payback.state, CASHFLOW_CROSS_WITHIN);
	NEAR(gex->payback.month, 14000.0 / 889.0);
	assert_true(rounded(gex->payback.month, 2) == 15.75);
	/* without discounting the discounted payback is the same month */
	assert_int_equal(gex->payback_discounted.state, CASHFLOW_CROSS_WITHIN);
	NEAR(gex->payback_discounted.month, 14000.0 / 889.0);
	free(cf);

	const double workstation[2] = {16000, 18000}, expect[2] = {18.0, 20.2};
	for (int i = 0; i < 2; i++) {
		o[0] = buy(workstation[i], 0, 36, 0);
		cf = eval_ok(&p, o, 2);
		NEAR(cf->series[1].payback.month, workstation[i] / 889.0);
		assert_true(rounded(cf->series[1].payback.month, 1) == expect[i]);
		free(cf);
	}

	/* the month does not depend on the currency: the same in USD at the
	 * price catalogue's EUR rate (1.068) */
	o[0] = buy(14000 * 1.068, 0, 36, 0);
	o[1] = rent(COST_DEDICATED, "hetzner-gex131", 889 * 1.068);
	cf = eval_ok(&p, o, 2);
	NEAR(cf->series[1].payback.month, 14000.0 / 889.0);
	free(cf);
}

/* The same case through cost.h: a one-GPU purchase and a one-GPU dedicated
 * server priced by cost_*_eval with no power, hosting or operator, turned
 * into cash flows by cashflow_option_from_result. */
static void test_field_notes_through_cost(void **state)
{
	(void)state;
	struct cost_usage u = {
		.duration_s = 3600, .gpus_per_replica = 1, .replicas = 1,
		.busy_s_per_gpu = 1800, .idle_s_per_gpu = 1800,
		.output_tokens = 1000000, .calls = 10, .tasks = 2,
	};
	struct cost_purchase pp = {.label = "rtx-pro-6000 workstation card"};
	cost_fig_set(&pp.system_usd, 14000, "field notes: ~EUR 14,000 card");
	cost_fig_set(&pp.gpus_per_system, 1, "test");
	cost_fig_set(&pp.amortisation_months, 36, "test");
	cost_fig_set(&pp.resale_fraction, 0, "test");
	cost_fig_set(&pp.busy_w, 0, "power not included");
	cost_fig_set(&pp.idle_w, 0, "power not included");
	cost_fig_set(&pp.pue, 1, "test");
	cost_fig_set(&pp.electricity_usd_kwh, 0, "power not included");
	cost_fig_set(&pp.hosting_usd_month, 0, "test");
	cost_fig_set(&pp.op.usd_month, 0, "operations not included");
	struct cost_dedicated dp = {.label = "hetzner-gex131"};
	cost_fig_set(&dp.server_usd_month, 889, "field notes: EUR 889/month");
	cost_fig_set(&dp.gpus_per_server, 1, "test");
	cost_fig_set(&dp.op.usd_month, 0, "operations not included");
	struct cost_result r[2];
	struct diag d;
	diag_init(&d);
	assert_int_equal(cost_purchase_eval(&pp, &u, NULL, &r[0], &d), 0);
	assert_int_equal(cost_dedicated_eval(&dp, &u, NULL, &r[1], &d), 0);
	struct cashflow_option o[2];
	assert_int_equal(cashflow_option_from_result(&o[0], &r[0], &d), 0);
	assert_int_equal(cashflow_option_from_result(&o[1], &r[1], &d), 0);
	assert_int_equal(o[0].option, COST_PURCHASE);
	NEAR(o[0].upfront_usd.value, 14000);
	NEAR(o[0].monthly_usd.value, 0);
	NEAR(o[0].amortisation_months.value, 36);
	NEAR(o[0].resale_fraction.value, 0);
	assert_non_null(strstr(o[0].upfront_usd.source, "field notes: ~EUR 14,000 card"));
	assert_string_equal(o[0].label, "rtx-pro-6000 workstation card");
	NEAR(o[1].upfront_usd.value, 0);
	NEAR(o[1].monthly_usd.value, 889);
	assert_non_null(strstr(o[1].monthly_usd.source, "hetzner-gex131"));
	struct cashflow_params p = params(36, 0);
	struct cashflow *cf = eval_ok(&p, o, 2);
	NEAR(cf->series[1].payback.month, 14000.0 / 889.0);
	free(cf);
}

/* A purchase's recurring cost from cost_purchase_eval is its month less the
 * capital part, and with the straight-line residual the cash over a horizon
 * H <= amortisation is H x the monthly cost exactly: the two views agree.
 *   2 systems x 60,000, 48 months, resale 0.2: capital 2,000 a month;
 *   power 8 GPUs x 730 h x 500 W = 2,920 kWh x PUE 1.5 x $0.10 = 438;
 *   hosting 2 x 250 = 500; operator 1,000 -> month 3,938.
 *   H = 24: residual 120,000 x (1 - 0.8 x 24/48) = 72,000;
 *   cash = 120,000 + 24 x 1,938 - 72,000 = 94,512 = 24 x 3,938. */
static void test_purchase_result_agrees_with_monthly_cost(void **state)
{
	(void)state;
	struct cost_usage u = {
		.duration_s = 3600, .gpus_per_replica = 4, .replicas = 2,
		.busy_s_per_gpu = 3600, .output_tokens = 1000, .calls = 1, .tasks = 1,
	};
	struct cost_purchase pp = {.label = "2x 4-GPU server"};
	cost_fig_set(&pp.system_usd, 60000, "test");
	cost_fig_set(&pp.gpus_per_system, 4, "test");
	cost_fig_set(&pp.amortisation_months, 48, "test amortisation");
	cost_fig_set(&pp.resale_fraction, 0.2, "test resale");
	cost_fig_set(&pp.busy_w, 500, "test");
	cost_fig_set(&pp.idle_w, 50, "test");
	cost_fig_set(&pp.pue, 1.5, "test");
	cost_fig_set(&pp.electricity_usd_kwh, 0.10, "test");
	cost_fig_set(&pp.hosting_usd_month, 250, "test");
	cost_fig_set(&pp.op.usd_month, 1000, "test");
	struct cost_result r;
	struct diag d;
	diag_init(&d);
	assert_int_equal(cost_purchase_eval(&pp, &u, NULL, &r, &d), 0);
	NEAR(r.usd_month, 3938);
	struct cashflow_option o;
	assert_int_equal(cashflow_option_from_result(&o, &r, &d), 0);
	NEAR(o.upfront_usd.value, 120000);
	NEAR(o.monthly_usd.value, 1938);
	NEAR(o.amortisation_months.value, 48);
	NEAR(o.resale_fraction.value, 0.2);
	assert_string_equal(o.amortisation_months.source, "test amortisation");
	assert_string_equal(o.resale_fraction.source, "test resale");
	struct cashflow_params p = params(24, 0);
	struct cashflow *cf = eval_ok(&p, &o, 1);
	const struct cashflow_series *s = &cf->series[0];
	assert_int_equal(s->residual_rule, CASHFLOW_RESIDUAL_STRAIGHT_LINE);
	NEAR(s->residual_usd, 72000);
	NEAR(s->total_usd, 94512);
	NEAR(s->total_usd, 24 * r.usd_month);
	free(cf);
	/* and at the full amortisation: the resale fraction of the price */
	p = params(48, 0);
	cf = eval_ok(&p, &o, 1);
	assert_int_equal(cf->series[0].residual_rule, CASHFLOW_RESIDUAL_RESALE);
	NEAR(cf->series[0].residual_usd, 24000);
	NEAR(cf->series[0].total_usd, 48 * r.usd_month);
	free(cf);
}

/* Present values by hand, at an annual rate that compounds from exactly 1%
 * a month: 1.01^12 - 1 = 0.12682503013196977.  v = 1/1.01.
 * Rental 1,000 a month for 12 months:
 *   NPV = 1,000 x (1 - v^12) / 0.01 = 1,000 x 11.255077473484631
 *       = 11,255.077473484631; cash 12,000.
 * Purchase 10,000 up front, 100 a month, amortisation 36, resale 0.25,
 * horizon 12 (shorter than the amortisation: straight-line residual):
 *   residual = 10,000 x (1 - 0.75 x 12/36) = 7,500 at month 12
 *   NPV = 10,000 + 100 x 11.255077 - 7,500 x v^12 = 4,469.638557859812
 *   cash = 10,000 + 1,200 - 7,500 = 3,700
 * Payback of the rental: 10,000 - 900 m = 0 at m = 11.111 months;
 * discounted: 10,000 - 900 x (1 - v^m) / 0.01 changes sign between months
 * 11 and 12, interpolated 11.837775099380469. */
static void test_npv_by_hand(void **state)
{
	(void)state;
	struct cashflow_params p = params(12, 0.12682503013196977);
	struct cashflow_option o[2] = {buy(10000, 100, 36, 0.25),
				       rent(COST_DEDICATED, "rent", 1000)};
	struct cashflow *cf = eval_ok(&p, o, 2);
	NEAR(cf->monthly_rate, 0.01);
	const struct cashflow_series *b = &cf->series[0], *r = &cf->series[1];
	NEAR(r->npv_usd, 11255.077473484631);
	NEAR(r->total_usd, 12000);
	NEAR(r->cash_usd[0], 0);
	NEAR(r->cash_usd[1], 1000);
	NEAR(r->pv_cumulative_usd[1], 1000 / 1.01);
	assert_int_equal(b->residual_rule, CASHFLOW_RESIDUAL_STRAIGHT_LINE);
	NEAR(b->residual_usd, 7500);
	NEAR(b->cash_usd[0], 10000);
	NEAR(b->cash_usd[11], 100);
	NEAR(b->cash_usd[12], 100 - 7500);
	NEAR(b->total_usd, 3700);
	NEAR(b->npv_usd, 4469.638557859812);
	assert_int_equal(r->payback.state, CASHFLOW_CROSS_WITHIN);
	NEAR(r->payback.month, 10000.0 / 900.0);
	assert_int_equal(r->payback_discounted.state, CASHFLOW_CROSS_WITHIN);
	NEAR(r->payback_discounted.month, 11.837775099380469);
	assert_int_equal(b->payback.state, CASHFLOW_CROSS_NONE);
	free(cf);

	/* at a rate of 0 the NPV is the cash */
	p = params(12, 0);
	cf = eval_ok(&p, o, 2);
	NEAR(cf->monthly_rate, 0);
	NEAR(cf->series[0].npv_usd, 3700);
	NEAR(cf->series[1].npv_usd, 12000);
	free(cf);
}

/* The default: 36 months at 8% a year, a monthly rate of
 * 1.08^(1/12) - 1 = 0.00643403011000343 that compounds back to 8%. */
static void test_defaults(void **state)
{
	(void)state;
	struct cashflow_params p;
	cashflow_params_default(&p);
	NEAR(p.horizon_months.value, 36);
	NEAR(p.discount_rate.value, 0.08);
	assert_non_null(strstr(p.horizon_months.source, "docs/cost.md"));
	assert_non_null(strstr(p.discount_rate.source, "assumption"));
	assert_non_null(strstr(p.discount_rate.source, "docs/cost.md"));
	struct cashflow_option o = rent(COST_API, "api", 100);
	struct cashflow *cf = eval_ok(NULL, &o, 1);
	assert_int_equal(cf->horizon_months, 36);
	NEAR(cf->monthly_rate, 0.00643403011000343);
	NEAR(pow(1 + cf->monthly_rate, 12), 1.08);
	assert_string_equal(cf->params.discount_rate.source, p.discount_rate.source);
	/* no purchase: nothing pays back */
	assert_int_equal(cf->purchase, 1);
	assert_int_equal(cf->series[0].payback.state, CASHFLOW_CROSS_NONE);
	free(cf);
}

/* Resale at the horizon: price 20,000, amortisation 24, resale 0.3.
 *   H = 36 (past the amortisation): 0.3 x 20,000 = 6,000 back at month 36
 *   H = 24 (at it): the same 6,000 at month 24
 *   H = 12 (before it): 20,000 x (1 - 0.7 x 12/24) = 13,000 at month 12 */
static void test_resale_at_horizon(void **state)
{
	(void)state;
	struct cashflow_option o = buy(20000, 50, 24, 0.3);
	const double horizon[3] = {36, 24, 12}, residual[3] = {6000, 6000, 13000};
	const enum cashflow_residual rule[3] = {CASHFLOW_RESIDUAL_RESALE, CASHFLOW_RESIDUAL_RESALE,
						CASHFLOW_RESIDUAL_STRAIGHT_LINE};
	for (int i = 0; i < 3; i++) {
		struct cashflow_params p = params(horizon[i], 0);
		struct cashflow *cf = eval_ok(&p, &o, 1);
		const struct cashflow_series *s = &cf->series[0];
		int h = (int)horizon[i];
		assert_int_equal(s->residual_rule, rule[i]);
		NEAR(s->residual_usd, residual[i]);
		NEAR(s->cash_usd[h], 50 - residual[i]);
		NEAR(s->cash_usd[h - 1], 50);
		NEAR(s->total_usd, 20000 + 50 * horizon[i] - residual[i]);
		free(cf);
	}
	assert_string_equal(cashflow_residual_name(CASHFLOW_RESIDUAL_RESALE), "resale_fraction");
	assert_string_equal(cashflow_residual_name(CASHFLOW_RESIDUAL_STRAIGHT_LINE),
			    "straight_line");
	assert_string_equal(cashflow_residual_name(CASHFLOW_RESIDUAL_NONE), "none");
}

/* A purchase that catches up only when its hardware is sold: 10,000, resale
 * 0.5 at the end of a 12-month amortisation, against 500 a month.  Before
 * the sale: 10,000 > 6,000 at month 12; after it: 5,000 <= 6,000.
 * Discounted at 10% a year the sale still pays back (PV 5,454.55 against
 * 5,700.25); at 20% it does not (5,833.33 against 5,443.25). */
static void test_payback_only_at_resale(void **state)
{
	(void)state;
	struct cashflow_option o[2] = {buy(10000, 0, 12, 0.5), rent(COST_ELASTIC, "rent", 500)};
	struct cashflow_params p = params(12, 0.10);
	struct cashflow *cf = eval_ok(&p, o, 2);
	const struct cashflow_series *r = &cf->series[1];
	assert_int_equal(r->payback.state, CASHFLOW_CROSS_AT_RESALE);
	NEAR(r->payback.month, 12);
	assert_int_equal(r->payback_discounted.state, CASHFLOW_CROSS_AT_RESALE);
	free(cf);
	p = params(12, 0.20);
	cf = eval_ok(&p, o, 2);
	assert_int_equal(cf->series[1].payback.state, CASHFLOW_CROSS_AT_RESALE);
	assert_int_equal(cf->series[1].payback_discounted.state, CASHFLOW_CROSS_NEVER);
	free(cf);
}

/* Rentals that stay cheaper: 300 a month never reaches a 14,000 card in 36
 * months (10,800); a rental of 800 a month against a purchase that costs
 * 1,000 a month to run never does at any horizon.  A purchase with nothing
 * up front and a lower running cost pays back from month 0. */
static void test_rental_always_cheaper(void **state)
{
	(void)state;
	struct cashflow_params p = params(36, 0.08);
	struct cashflow_option o[3] = {buy(14000, 0, 36, 0), rent(COST_ELASTIC, "cheap", 300),
				       rent(COST_DEDICATED, "dear", 889)};
	struct cashflow *cf = eval_ok(&p, o, 3);
	assert_int_equal(cf->series[1].payback.state, CASHFLOW_CROSS_NEVER);
	assert_int_equal(cf->series[1].payback_discounted.state, CASHFLOW_CROSS_NEVER);
	NEAR(cf->series[1].payback.month, 0);
	assert_int_equal(cf->series[2].payback.state, CASHFLOW_CROSS_WITHIN);
	free(cf);

	struct cashflow_option o2[2] = {buy(5000, 1000, 36, 0), rent(COST_DEDICATED, "r", 800)};
	p = params(240, 0);
	cf = eval_ok(&p, o2, 2);
	assert_int_equal(cf->series[1].payback.state, CASHFLOW_CROSS_NEVER);
	free(cf);

	struct cashflow_option o3[2] = {buy(0, 100, 36, 0), rent(COST_API, "api", 200)};
	p = params(36, 0.08);
	cf = eval_ok(&p, o3, 2);
	assert_int_equal(cf->series[1].payback.state, CASHFLOW_CROSS_WITHIN);
	NEAR(cf->series[1].payback.month, 0);
	free(cf);
	/* ... and so it does against a rental with a setup fee */
	cost_fig_set(&o3[1].upfront_usd, 500, "test setup fee");
	cf = eval_ok(&p, o3, 2);
	assert_int_equal(cf->series[1].payback.state, CASHFLOW_CROSS_WITHIN);
	NEAR(cf->series[1].payback.month, 0);
	NEAR(cf->series[1].cash_usd[0], 500);
	free(cf);
	assert_string_equal(cashflow_cross_name(CASHFLOW_CROSS_NEVER), "never");
	assert_string_equal(cashflow_cross_name(CASHFLOW_CROSS_AT_RESALE), "at_resale");
}

static void expect_error(const struct cashflow_params *p, const struct cashflow_option *o,
			 size_t n, const char *needle, int line)
{
	struct cashflow *cf = malloc(sizeof(*cf));
	assert_non_null(cf);
	struct diag d;
	diag_init(&d);
	int rc = cashflow_eval(cf, p, o, n, &d);
	free(cf);
	if (rc != DIAG_EINPUT)
		fail_msg("line %d: rc %d, expected DIAG_EINPUT", line, rc);
	if (!strstr(d.msg, needle))
		fail_msg("line %d: '%s' does not say '%s'", line, d.msg, needle);
}
#define EXPECT_ERROR(p, o, n, needle) expect_error((p), (o), (n), (needle), __LINE__)

static void test_input_errors(void **state)
{
	(void)state;
	struct cashflow_option o[3] = {buy(14000, 0, 36, 0), rent(COST_DEDICATED, "r", 889),
				       buy(1, 0, 36, 0)};
	struct cashflow_params p;
	const double bad_horizon[] = {-12, 0, 12.5, 241, NAN, INFINITY};
	for (size_t i = 0; i < sizeof(bad_horizon) / sizeof(bad_horizon[0]); i++) {
		p = params(bad_horizon[i], 0.08);
		EXPECT_ERROR(&p, o, 2, "expected a whole number of months from 1 to 240");
	}
	p = params(-12, 0.08);
	EXPECT_ERROR(&p, o, 2, "horizon -12 months");
	EXPECT_ERROR(&p, o, 2, "source: test horizon");
	const double bad_rate[] = {-0.01, 1.5, NAN, INFINITY};
	for (size_t i = 0; i < sizeof(bad_rate) / sizeof(bad_rate[0]); i++) {
		p = params(36, bad_rate[i]);
		EXPECT_ERROR(&p, o, 2, "discount rate");
		EXPECT_ERROR(&p, o, 2, "expected a share from 0 to 1");
	}
	/* the edges are fine */
	p = params(240, 1.0);
	free(eval_ok(&p, o, 2));
	p = params(1, 0);
	free(eval_ok(&p, o, 2));

	p = params(36, 0.08);
	EXPECT_ERROR(&p, o, 0, "0 options (expected 1 to 8)");
	struct cashflow_option many[CASHFLOW_MAX_OPTIONS + 1];
	for (size_t i = 0; i < CASHFLOW_MAX_OPTIONS + 1; i++)
		many[i] = rent(COST_API, "api", 1);
	EXPECT_ERROR(&p, many, CASHFLOW_MAX_OPTIONS + 1, "9 options");
	EXPECT_ERROR(&p, o, 3, "expected at most one purchase");

	struct cashflow_option x = rent(COST_DEDICATED, "neg", -1);
	EXPECT_ERROR(&p, &x, 1, "dedicated 'neg': monthly_usd = -1");
	x = buy(NAN, 0, 36, 0);
	EXPECT_ERROR(&p, &x, 1, "upfront_usd = nan");
	x = buy(1000, 0, 36, 1.2);
	EXPECT_ERROR(&p, &x, 1, "resale_fraction = 1.2");
	x = buy(1000, 0, 0, 0);
	EXPECT_ERROR(&p, &x, 1, "amortisation_months = 0");
	x = rent(COST_ELASTIC, "e", 10);
	cost_fig_set(&x.amortisation_months, 36, "test");
	EXPECT_ERROR(&p, &x, 1, "only a purchase has hardware to resell");
	x = rent(COST_ELASTIC, "e", 10);
	x.option = COST_OPTION_COUNT;
	EXPECT_ERROR(&p, &x, 1, "expected a purchase, dedicated");
}

/* cashflow_option_from_result refuses a purchase result it cannot read. */
static void test_from_result_errors(void **state)
{
	(void)state;
	struct cost_usage u = {.duration_s = 3600, .gpus_per_replica = 1, .replicas = 1};
	struct cost_purchase pp = {.label = "p"};
	cost_fig_set(&pp.system_usd, 3600, "test");
	cost_fig_set(&pp.gpus_per_system, 1, "test");
	cost_fig_set(&pp.amortisation_months, 36, "test");
	cost_fig_set(&pp.resale_fraction, 0, "test");
	cost_fig_set(&pp.busy_w, 0, "test");
	cost_fig_set(&pp.idle_w, 0, "test");
	cost_fig_set(&pp.pue, 1, "test");
	cost_fig_set(&pp.electricity_usd_kwh, 0, "test");
	cost_fig_set(&pp.hosting_usd_month, 0, "test");
	cost_fig_set(&pp.op.usd_month, 0, "test");
	struct cost_result r, bad;
	struct diag d;
	diag_init(&d);
	assert_int_equal(cost_purchase_eval(&pp, &u, NULL, &r, &d), 0);
	struct cashflow_option o;
	assert_int_equal(cashflow_option_from_result(&o, &r, &d), 0);

	bad = r;
	bad.part_count = 0;
	diag_init(&d);
	assert_int_equal(cashflow_option_from_result(&o, &bad, &d), DIAG_EINPUT);
	assert_non_null(strstr(d.msg, "no 'capital' part"));

	bad = r;
	bad.assumption_count = 0;
	diag_init(&d);
	assert_int_equal(cashflow_option_from_result(&o, &bad, &d), DIAG_EINPUT);
	assert_non_null(strstr(d.msg, "no assumption 'systems'"));

	bad = r;
	bad.parts[0].usd_month *= 2; /* capital no longer price / amortisation */
	diag_init(&d);
	assert_int_equal(cashflow_option_from_result(&o, &bad, &d), DIAG_EINPUT);
	assert_non_null(strstr(d.msg, "expected a result of cost_purchase_eval"));
}

static char *capture(int (*write)(FILE *, const struct cashflow *), const struct cashflow *cf)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	assert_int_equal(write(f, cf), 0);
	fclose(f);
	return buf;
}

static struct cashflow *three_options(void)
{
	struct cashflow_params p = params(36, 0.08);
	struct cashflow_option o[3] = {buy(14000, 0, 36, 0),
				       rent(COST_DEDICATED, "hetzner-gex131", 889),
				       rent(COST_ELASTIC, "cheap", 300)};
	return eval_ok(&p, o, 3);
}

static void test_text(void **state)
{
	(void)state;
	struct cashflow *cf = three_options();
	char *t = capture(cashflow_text, cf);
	const char *want[] = {
		"Cash flow over 36 months, discounted at 8.00% a year (0.6434% a month",
		"discount rate: test rate",
		"after 15.75 months (discounted: after 16.",
		"never within 36 months (discounted: never within 36 months)",
		"Residual: the resale fraction 0 of the 14000.00 price = 0.00",
		"32004.00", /* 36 x 889 */
		"10800.00", /* 36 x 300 */
		"10668.00", /* a year of the dedicated rental */
		"buy': up front 14000.00 (test price)",
		"amortisation 36 months (test amortisation)",
	};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		if (!strstr(t, want[i]))
			fail_msg("no '%s' in:\n%s", want[i], t);
	free(t);
	free(cf);

	/* a straight-line residual says so */
	struct cashflow_params p = params(12, 0);
	struct cashflow_option o = buy(10000, 0, 36, 0.25);
	cf = eval_ok(&p, &o, 1);
	t = capture(cashflow_text, cf);
	assert_non_null(strstr(t, "Residual: straight line"));
	assert_non_null(strstr(t, "= 7500.00"));
	free(t);
	free(cf);
}

static void test_json(void **state)
{
	(void)state;
	struct cashflow *cf = three_options();
	char *j = capture(cashflow_json, cf);
	cJSON *doc = cJSON_Parse(j);
	if (!doc)
		fail_msg("not JSON:\n%s", j);
	assert_string_equal(cJSON_GetObjectItem(doc, "schema")->valuestring, "agentcap-cashflow");
	assert_int_equal(cJSON_GetObjectItem(doc, "version")->valueint, 1);
	NEAR(cJSON_GetObjectItem(doc, "horizon_months")->valuedouble, 36);
	assert_string_equal(cJSON_GetObjectItem(doc, "discount_rate_annual_source")->valuestring,
			    "test rate");
	assert_true(cJSON_GetObjectItem(doc, "discount_rate_monthly")->valuedouble ==
		    cf->monthly_rate);
	assert_string_equal(cJSON_GetObjectItem(doc, "purchase")->valuestring, "buy");
	const cJSON *opts = cJSON_GetObjectItem(doc, "options");
	assert_int_equal(cJSON_GetArraySize(opts), 3);
	const cJSON *b = cJSON_GetArrayItem(opts, 0), *ded = cJSON_GetArrayItem(opts, 1),
		    *el = cJSON_GetArrayItem(opts, 2);
	assert_string_equal(cJSON_GetObjectItem(b, "option")->valuestring, "purchase");
	assert_string_equal(cJSON_GetObjectItem(b, "residual_rule")->valuestring,
			    "resale_fraction");
	assert_string_equal(cJSON_GetObjectItem(b, "payback")->valuestring, "none");
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(b, "payback_months")));
	assert_string_equal(cJSON_GetObjectItem(b, "upfront_usd_source")->valuestring,
			    "test price");
	/* %.17g: the numbers come back bit for bit */
	assert_true(cJSON_GetObjectItem(ded, "npv_usd")->valuedouble == cf->series[1].npv_usd);
	assert_true(cJSON_GetObjectItem(ded, "payback_months")->valuedouble ==
		    cf->series[1].payback.month);
	assert_string_equal(cJSON_GetObjectItem(ded, "payback")->valuestring, "within");
	const cJSON *cash = cJSON_GetObjectItem(ded, "cash_usd");
	assert_int_equal(cJSON_GetArraySize(cash), 37);
	NEAR(cJSON_GetArrayItem(cash, 0)->valuedouble, 0);
	NEAR(cJSON_GetArrayItem(cash, 36)->valuedouble, 889);
	const cJSON *pv = cJSON_GetObjectItem(ded, "pv_cumulative_usd");
	assert_int_equal(cJSON_GetArraySize(pv), 37);
	for (int m = 0; m <= 36; m++)
		assert_true(cJSON_GetArrayItem(pv, m)->valuedouble ==
			    cf->series[1].pv_cumulative_usd[m]);
	NEAR(cJSON_GetArrayItem(cJSON_GetObjectItem(ded, "cumulative_usd"), 36)->valuedouble,
	     32004);
	assert_string_equal(cJSON_GetObjectItem(el, "payback")->valuestring, "never");
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(el, "payback_months")));
	assert_string_equal(cJSON_GetObjectItem(el, "payback_discounted")->valuestring, "never");
	cJSON_Delete(doc);
	free(j);
	free(cf);

	/* without a purchase: "purchase": null */
	struct cashflow_params p = params(3, 0);
	struct cashflow_option o = rent(COST_SEATS, "seats \"team\"", 10);
	cf = eval_ok(&p, &o, 1);
	j = capture(cashflow_json, cf);
	doc = cJSON_Parse(j);
	assert_non_null(doc);
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(doc, "purchase")));
	assert_string_equal(
		cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "options"), 0),
				    "label")->valuestring, "seats \"team\"");
	cJSON_Delete(doc);
	free(j);
	free(cf);
}

/* A stream that refuses writes: both writers say so. */
static void test_write_errors(void **state)
{
	(void)state;
	struct cashflow *cf = three_options();
	FILE *f = fopen("/dev/null", "r");
	assert_non_null(f);
	assert_int_equal(cashflow_text(f, cf), DIAG_EIO);
	fclose(f);
	f = fopen("/dev/null", "r");
	assert_non_null(f);
	assert_int_equal(cashflow_json(f, cf), DIAG_EIO);
	fclose(f);
	free(cf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_field_notes_96gb_card),
		cmocka_unit_test(test_field_notes_through_cost),
		cmocka_unit_test(test_purchase_result_agrees_with_monthly_cost),
		cmocka_unit_test(test_npv_by_hand),
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_resale_at_horizon),
		cmocka_unit_test(test_payback_only_at_resale),
		cmocka_unit_test(test_rental_always_cheaper),
		cmocka_unit_test(test_input_errors),
		cmocka_unit_test(test_from_result_errors),
		cmocka_unit_test(test_text),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_write_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
