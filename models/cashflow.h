/* SPDX-License-Identifier: Apache-2.0
 * cashflow: the ways of paying for one deployment over a horizon of
 * months - the cash each option pays month by month, its cumulative cash,
 * its net present value at a discount rate, and the month buying pays back
 * against each way of renting.  cost.h prices one month; this adds the
 * time a finance lead asks about ("when does buying pay back, and what is
 * each worth over three years").  Formulas, defaults and sources:
 * docs/cost.md, "Cash flow over years".
 *
 * Timing (the invariants every figure keeps):
 *   - month 0 is the day of the decision: a purchase pays the price of its
 *     systems then, and nothing else is paid at month 0;
 *   - every recurring cost (power, hosting, operator; a rent) is counted at
 *     the end of the month it pays for, months 1..H (in arrears: the
 *     field notes' "EUR 14,000 / EUR 889 a month = 15.7 months");
 *   - what the hardware is still worth (its residual) comes back as cash at
 *     the end of month H, the horizon;
 *   - cash out is positive, cash in negative: every total here is a cost,
 *     and the smaller one is the cheaper option.
 * Money is in USD, like cost.h (the arithmetic is the same in any currency:
 * a payback month does not change with the exchange rate).
 *
 * The arithmetic is pure: nothing here reads files or allocates; the two
 * writers print to a FILE* the caller owns.
 */
#ifndef MODELS_CASHFLOW_H
#define MODELS_CASHFLOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "base/diag.h"
#include "models/cost.h"

/* Longest horizon: 20 years.  No GPU is worth planning further out, and the
 * per-month arrays below are sized for it. */
#define CASHFLOW_MAX_MONTHS 240
/* Options compared at once (one purchase and its rentals, seats, API). */
#define CASHFLOW_MAX_OPTIONS 8

/* Default horizon: three years, the default amortisation of cost.h. */
#define CASHFLOW_DEFAULT_HORIZON_MONTHS 36.0
/* Default discount rate, a share per year (an assumption, docs/cost.md):
 * the round 8% cost of capital Damodaran uses for an average-risk US
 * company (BVWire, 2017-02-15: global median 8.03%); his January 2026 US
 * industry table has business & consumer services at 7.23%. */
#define CASHFLOW_DEFAULT_DISCOUNT_RATE 0.08
/* Highest annual rate accepted (100% a year). */
#define CASHFLOW_MAX_DISCOUNT_RATE 1.0

/* Horizon and discount rate, each with where it comes from. */
struct cashflow_params {
	struct cost_fig horizon_months;  /* whole months, 1..CASHFLOW_MAX_MONTHS */
	struct cost_fig discount_rate;   /* effective annual rate, a share in
					    [0, CASHFLOW_MAX_DISCOUNT_RATE]:
					    0.08 = 8% a year */
};

/* 36 months and 8% a year, sourced as docs/cost.md gives them. */
void cashflow_params_default(struct cashflow_params *p);

/* One way of paying, as cash.  Fill it by cashflow_option_from_result, or
 * by hand (then every figure needs a source). */
struct cashflow_option {
	enum cost_option option;             /* COST_PURCHASE: the option the
						others pay back against */
	char label[COST_LABEL_MAX];
	struct cost_fig upfront_usd;         /* paid at month 0 (>= 0): a
						purchase's systems x price per
						system; 0 for a rental */
	struct cost_fig monthly_usd;         /* paid at the end of each month
						1..H (>= 0): a purchase's power +
						hosting + operator; a rental's
						whole monthly cost */
	struct cost_fig amortisation_months; /* purchase: months the price is
						written off over (>= 1); 0 =
						nothing to resell (a rental) */
	struct cost_fig resale_fraction;     /* purchase: share of the price
						recovered at the end of the
						amortisation, [0, 1]; 0 for a
						rental */
};

/* The cash flow of one option from the monthly cost cost.h computed for
 * it.  A purchase result (cost_purchase_eval) gives its price from the
 * assumptions "systems" x "system_price", the amortisation and resale from
 * "amortisation" and "resale", and its recurring cost as usd_month less the
 * "capital" part; any other option pays usd_month every month and nothing
 * up front.  Returns 0, or DIAG_EINPUT when a purchase result lacks one of
 * those assumptions or parts, or its capital part is not systems x price x
 * (1 - resale) / amortisation (not a result of cost_purchase_eval).  The
 * sources are the result's own. */
int cashflow_option_from_result(struct cashflow_option *o, const struct cost_result *r,
				struct diag *d);

/* Where a purchase's residual value comes from (docs/cost.md). */
enum cashflow_residual {
	CASHFLOW_RESIDUAL_NONE = 0,          /* not a purchase */
	CASHFLOW_RESIDUAL_RESALE,            /* horizon >= amortisation: the
						resale fraction of the price */
	CASHFLOW_RESIDUAL_STRAIGHT_LINE,     /* horizon < amortisation: the
						price less H / amortisation of
						(price - resale) */
};

/* "none", "resale_fraction", "straight_line" (static strings). */
const char *cashflow_residual_name(enum cashflow_residual r);

/* When an option's cumulative cost reaches the purchase's. */
enum cashflow_cross {
	CASHFLOW_CROSS_NONE = 0,   /* the purchase itself, or no purchase to
				      cross */
	CASHFLOW_CROSS_WITHIN,     /* at month_of (a fraction of a month
				      interpolated between whole months) */
	CASHFLOW_CROSS_AT_RESALE,  /* only when the hardware is sold at the end
				      of month H (month_of = H) */
	CASHFLOW_CROSS_NEVER,      /* not within the horizon */
};

/* "none", "within", "at_resale", "never" (static strings). */
const char *cashflow_cross_name(enum cashflow_cross c);

struct cashflow_crossing {
	enum cashflow_cross state;
	double month;                        /* months from month 0 when state
						is WITHIN or AT_RESALE; else 0 */
};

/* One option over the horizon.  Arrays hold months 0..horizon. */
struct cashflow_series {
	struct cashflow_option in;           /* as given */
	double cash_usd[CASHFLOW_MAX_MONTHS + 1];       /* net cash out of
							   month m (month H
							   net of the
							   residual) */
	double cumulative_usd[CASHFLOW_MAX_MONTHS + 1]; /* cash_usd[0..m] */
	double pv_cumulative_usd[CASHFLOW_MAX_MONTHS + 1]; /* the same,
							      each month
							      discounted to
							      month 0 */
	enum cashflow_residual residual_rule;
	double residual_usd;                 /* cash in at the end of month H */
	double total_usd;                    /* cumulative_usd[H]: the cash over
						the horizon, residual counted */
	double npv_usd;                      /* pv_cumulative_usd[H]: present
						value at month 0 of that cash */
	/* Against the purchase (state NONE for the purchase itself and when
	 * there is none): the first time the purchase's cumulative cash is at
	 * most this option's - simple payback on cumulative_usd, discounted
	 * payback on pv_cumulative_usd. */
	struct cashflow_crossing payback;
	struct cashflow_crossing payback_discounted;
};

struct cashflow {
	struct cashflow_params params;       /* as given */
	int horizon_months;                  /* H */
	double monthly_rate;                 /* (1 + annual)^(1/12) - 1 */
	struct cashflow_series series[CASHFLOW_MAX_OPTIONS];
	size_t n;
	size_t purchase;                     /* index of the purchase in series;
						n when there is none */
};

/* The cash flow of opts[0..n) over p (NULL: cashflow_params_default) into
 * cf (caller storage, about 60 KB; overwritten).  At most one option may
 * be a purchase; the others pay back against it.  Returns 0, or
 * DIAG_EINPUT naming the figure and what was expected: horizon not a whole
 * number of months from 1 to CASHFLOW_MAX_MONTHS, discount rate outside
 * [0, CASHFLOW_MAX_DISCOUNT_RATE], n of 0 or above CASHFLOW_MAX_OPTIONS,
 * two purchases, a negative or non-finite amount, a purchase without an
 * amortisation of at least one month, a resale fraction outside [0, 1]. */
int cashflow_eval(struct cashflow *cf, const struct cashflow_params *p,
		  const struct cashflow_option *opts, size_t n, struct diag *d);

/* The summary as text: horizon and rate with their sources, one row per
 * option (up front, monthly, residual, cash over the horizon, NPV, payback
 * against the purchase), the cumulative cash at the end of each year, and
 * every figure's source.  Returns 0, or DIAG_EIO when the stream reports
 * an error. */
int cashflow_text(FILE *fp, const struct cashflow *cf);

/* The same as one JSON document ({"schema":"agentcap-cashflow",
 * "version":1, ...}, docs/cost.md), numbers as %.17g, a payback that does
 * not happen as null with its reason.  Returns 0, or DIAG_EIO. */
int cashflow_json(FILE *fp, const struct cashflow *cf);

#endif
