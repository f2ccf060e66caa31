/* SPDX-License-Identifier: Apache-2.0
 * cashflow: month-by-month cash, cumulative cash, NPV and payback of the
 * ways of paying for one deployment (see cashflow.h and docs/cost.md,
 * "Cash flow over years").
 *
 * cashflow_eval validates every figure first, then fills each series in
 * one pass over months 0..H (cash, its running sum, and the running sum of
 * its present values), then finds each option's crossing with the
 * purchase on those running sums.  Nothing here allocates.
 */
#include "models/cashflow.h"

#include "base/jsonw.h"

#include <math.h>
#include <string.h>

static const char *const residual_names[] = {"none", "resale_fraction", "straight_line"};
static const char *const cross_names[] = {"none", "within", "at_resale", "never"};

const char *cashflow_residual_name(enum cashflow_residual r)
{
	return ((int)r >= 0 && (int)r <= CASHFLOW_RESIDUAL_STRAIGHT_LINE) ? residual_names[r] : "?";
}

const char *cashflow_cross_name(enum cashflow_cross c)
{
	return ((int)c >= 0 && (int)c <= CASHFLOW_CROSS_NEVER) ? cross_names[c] : "?";
}

void cashflow_params_default(struct cashflow_params *p)
{
	cost_fig_set(&p->horizon_months, CASHFLOW_DEFAULT_HORIZON_MONTHS,
		     "default: three years, the default amortisation (docs/cost.md)");
	cost_fig_set(&p->discount_rate, CASHFLOW_DEFAULT_DISCOUNT_RATE,
		     "default, an assumption: the round 8%% cost of capital Damodaran uses for "
		     "an average-risk US company (global median 8.03%%, BVWire 2017-02-15; "
		     "January 2026 US table: business & consumer services 7.23%%) "
		     "(docs/cost.md)");
}

/* ---- from a monthly cost ------------------------------------------------ */

static const struct cost_assumption *assumption_of(const struct cost_result *r, const char *name)
{
	for (size_t i = 0; i < r->assumption_count; i++)
		if (strcmp(r->assumptions[i].name, name) == 0)
			return &r->assumptions[i];
	return NULL;
}

static const struct cost_part *part_of(const struct cost_result *r, const char *name)
{
	for (size_t i = 0; i < r->part_count; i++)
		if (strcmp(r->parts[i].name, name) == 0)
			return &r->parts[i];
	return NULL;
}

int cashflow_option_from_result(struct cashflow_option *o, const struct cost_result *r,
				struct diag *d)
{
	memset(o, 0, sizeof(*o));
	o->option = r->option;
	snprintf(o->label, sizeof(o->label), "%s", r->label);
	const char *opt = cost_option_name(r->option);
	if (r->option != COST_PURCHASE) {
		cost_fig_set(&o->upfront_usd, 0, "%s: nothing paid up front", opt);
		cost_fig_set(&o->monthly_usd, r->usd_month, "%s '%s': its monthly cost (models/cost.c)",
			     opt, r->label);
		cost_fig_set(&o->amortisation_months, 0, "%s: no hardware to resell", opt);
		cost_fig_set(&o->resale_fraction, 0, "%s: no hardware to resell", opt);
		return 0;
	}
	static const char *const needed[] = {"systems", "system_price", "amortisation", "resale"};
	const struct cost_assumption *a[4];
	for (size_t i = 0; i < 4; i++)
		if (!(a[i] = assumption_of(r, needed[i])))
			return diag_set(d, DIAG_EINPUT, "cashflow: purchase '%s' has no assumption "
					"'%s' (expected a result of cost_purchase_eval)", r->label,
					needed[i]);
	const struct cost_part *capital = part_of(r, "capital");
	if (!capital)
		return diag_set(d, DIAG_EINPUT, "cashflow: purchase '%s' has no 'capital' part "
				"(expected a result of cost_purchase_eval)", r->label);
	double systems = a[0]->value, price = a[1]->value, months = a[2]->value,
	       resale = a[3]->value;
	double upfront = systems * price;
	double want = months > 0 ? upfront * (1 - resale) / months : NAN;
	if (!(fabs(capital->usd_month - want) <= 1e-9 * fmax(1.0, fabs(want))))
		return diag_set(d, DIAG_EINPUT, "cashflow: purchase '%s': capital %.10g a month is "
				"not %g systems x %g x (1 - resale %g) / %g months = %.10g "
				"(expected a result of cost_purchase_eval)", r->label,
				capital->usd_month, systems, price, resale, months, want);
	cost_fig_set(&o->upfront_usd, upfront, "%g systems x %.10g (%s)", systems, price,
		     a[1]->source);
	cost_fig_set(&o->monthly_usd, r->usd_month - capital->usd_month,
		     "purchase '%s': its monthly cost less the capital part (power, hosting, "
		     "operator; models/cost.c)", r->label);
	cost_fig_set(&o->amortisation_months, months, "%s", a[2]->source);
	cost_fig_set(&o->resale_fraction, resale, "%s", a[3]->source);
	return 0;
}

/* ---- checks ------------------------------------------------------------- */

static int check_amount(const struct cashflow_option *o, const struct cost_fig *f,
			const char *name, double lo, double hi, struct diag *d)
{
	if (!isfinite(f->value) || f->value < lo || f->value > hi)
		return diag_set(d, DIAG_EINPUT, "cashflow: %s '%s': %s = %g (expected a value from "
				"%g to %g; source: %s)", cost_option_name(o->option), o->label, name,
				f->value, lo, hi, f->source);
	return 0;
}

static int check_option(const struct cashflow_option *o, struct diag *d)
{
	int rc;
	if ((int)o->option < 0 || (int)o->option >= COST_OPTION_COUNT)
		return diag_set(d, DIAG_EINPUT, "cashflow: option '%s' is of kind %d (expected a "
				"purchase, dedicated, elastic, seats or api option)", o->label,
				(int)o->option);
	if ((rc = check_amount(o, &o->upfront_usd, "upfront_usd", 0, 1e12, d)) ||
	    (rc = check_amount(o, &o->monthly_usd, "monthly_usd", 0, 1e12, d)))
		return rc;
	if (o->option == COST_PURCHASE) {
		if ((rc = check_amount(o, &o->amortisation_months, "amortisation_months", 1, 600,
				       d)) ||
		    (rc = check_amount(o, &o->resale_fraction, "resale_fraction", 0, 1, d)))
			return rc;
		return 0;
	}
	if (o->amortisation_months.value != 0 || o->resale_fraction.value != 0)
		return diag_set(d, DIAG_EINPUT, "cashflow: %s '%s': amortisation %g months, resale "
				"%g (expected 0 for both: only a purchase has hardware to resell)",
				cost_option_name(o->option), o->label, o->amortisation_months.value,
				o->resale_fraction.value);
	return 0;
}

static int check_params(const struct cashflow_params *p, struct diag *d)
{
	double h = p->horizon_months.value;
	if (!isfinite(h) || h != floor(h) || h < 1 || h > CASHFLOW_MAX_MONTHS)
		return diag_set(d, DIAG_EINPUT, "cashflow: horizon %g months (expected a whole "
				"number of months from 1 to %d; source: %s)", h, CASHFLOW_MAX_MONTHS,
				p->horizon_months.source);
	double r = p->discount_rate.value;
	if (!isfinite(r) || r < 0 || r > CASHFLOW_MAX_DISCOUNT_RATE)
		return diag_set(d, DIAG_EINPUT, "cashflow: discount rate %g a year (expected a "
				"share from 0 to %g, e.g. 0.08 for 8%%; source: %s)", r,
				CASHFLOW_MAX_DISCOUNT_RATE, p->discount_rate.source);
	return 0;
}

/* ---- the series --------------------------------------------------------- */

/* Month m's discount factor: (1 + i)^-m. */
static double discount(const struct cashflow *cf, int m)
{
	return pow(1 + cf->monthly_rate, -(double)m);
}

static void series_fill(const struct cashflow *cf, struct cashflow_series *s)
{
	const struct cashflow_option *o = &s->in;
	int h = cf->horizon_months;
	double up = o->upfront_usd.value, monthly = o->monthly_usd.value;
	if (o->option == COST_PURCHASE) {
		double months = o->amortisation_months.value, f = o->resale_fraction.value;
		if ((double)h >= months) {
			s->residual_rule = CASHFLOW_RESIDUAL_RESALE;
			s->residual_usd = f * up;
		} else {
			s->residual_rule = CASHFLOW_RESIDUAL_STRAIGHT_LINE;
			s->residual_usd = up * (1 - (1 - f) * (double)h / months);
		}
	}
	double cum = 0, pv = 0;
	for (int m = 0; m <= h; m++) {
		double cash = m == 0 ? up : monthly;
		if (m == h)
			cash -= s->residual_usd;
		cum += cash;
		pv += cash * discount(cf, m);
		s->cash_usd[m] = cash;
		s->cumulative_usd[m] = cum;
		s->pv_cumulative_usd[m] = pv;
	}
	s->total_usd = cum;
	s->npv_usd = pv;
}

/* The first time the purchase's running sum p is at most the option's r.
 * Both leave the residual out until the sale at the end of month H
 * (p_residual: the purchase's residual as counted in p[H]; the option has
 * none): a crossing that needs the sale is AT_RESALE, not a fraction of the
 * last month. */
static struct cashflow_crossing crossing(const double *p, double p_residual, const double *r,
					 int h)
{
	struct cashflow_crossing c = {.state = CASHFLOW_CROSS_WITHIN, .month = 0};
	double prev = p[0] - r[0]; /* h >= 1: no sale at month 0 */
	if (prev <= 0)
		return c;
	for (int m = 1; m <= h; m++) {
		double diff = p[m] - r[m] + (m == h ? p_residual : 0);
		if (diff <= 0) {
			c.month = (double)(m - 1) + prev / (prev - diff);
			return c;
		}
		prev = diff;
	}
	if (p[h] - r[h] <= 0) {
		c.state = CASHFLOW_CROSS_AT_RESALE;
		c.month = (double)h;
		return c;
	}
	c.state = CASHFLOW_CROSS_NEVER;
	return c;
}

int cashflow_eval(struct cashflow *cf, const struct cashflow_params *p,
		  const struct cashflow_option *opts, size_t n, struct diag *d)
{
	memset(cf, 0, sizeof(*cf));
	struct cashflow_params def;
	if (!p) {
		cashflow_params_default(&def);
		p = &def;
	}
	int rc = check_params(p, d);
	if (rc)
		return rc;
	if (n < 1 || n > CASHFLOW_MAX_OPTIONS)
		return diag_set(d, DIAG_EINPUT, "cashflow: %zu options (expected 1 to %d)", n,
				CASHFLOW_MAX_OPTIONS);
	cf->purchase = n;
	for (size_t k = 0; k < n; k++) {
		if ((rc = check_option(&opts[k], d)))
			return rc;
		if (opts[k].option != COST_PURCHASE)
			continue;
		if (cf->purchase != n)
			return diag_set(d, DIAG_EINPUT, "cashflow: purchases '%s' and '%s' (expected "
					"at most one purchase: the other options pay back against "
					"it)", opts[cf->purchase].label, opts[k].label);
		cf->purchase = k;
	}
	cf->params = *p;
	cf->horizon_months = (int)p->horizon_months.value;
	/* the monthly rate that compounds to the annual one over 12 months */
	cf->monthly_rate = expm1(log1p(p->discount_rate.value) / 12.0);
	cf->n = n;
	for (size_t k = 0; k < n; k++) {
		cf->series[k].in = opts[k];
		series_fill(cf, &cf->series[k]);
	}
	if (cf->purchase == n)
		return 0;
	const struct cashflow_series *buy = &cf->series[cf->purchase];
	int h = cf->horizon_months;
	for (size_t k = 0; k < n; k++) {
		if (k == cf->purchase)
			continue;
		struct cashflow_series *s = &cf->series[k];
		s->payback = crossing(buy->cumulative_usd, buy->residual_usd, s->cumulative_usd, h);
		s->payback_discounted = crossing(buy->pv_cumulative_usd,
						 buy->residual_usd * discount(cf, h),
						 s->pv_cumulative_usd, h);
	}
	return 0;
}

/* ---- text --------------------------------------------------------------- */

static void crossing_text(FILE *fp, const struct cashflow_crossing *c, int h)
{
	switch (c->state) {
	case CASHFLOW_CROSS_WITHIN:
		if (c->month == 0)
			fprintf(fp, "from month 0");
		else
			fprintf(fp, "after %.2f months", c->month);
		break;
	case CASHFLOW_CROSS_AT_RESALE:
		fprintf(fp, "only by selling the hardware at the end of month %d", h);
		break;
	case CASHFLOW_CROSS_NEVER:
		fprintf(fp, "never within %d months", h);
		break;
	case CASHFLOW_CROSS_NONE:
		fprintf(fp, "-");
		break;
	}
}

int cashflow_text(FILE *fp, const struct cashflow *cf)
{
	int h = cf->horizon_months;
	double rate = cf->params.discount_rate.value;
	fprintf(fp, "Cash flow over %d months, discounted at %.2f%% a year (%.4f%% a month, "
		"compounded monthly)\n", h, 100 * rate, 100 * cf->monthly_rate);
	fprintf(fp, "  horizon: %s\n  discount rate: %s\n", cf->params.horizon_months.source,
		cf->params.discount_rate.source);
	fprintf(fp, "USD, cash out positive: up front at month 0, monthly at the end of each month, "
		"the residual back at the end of month %d.\n", h);
	char total[32], npv[32];
	snprintf(total, sizeof(total), "Cash over %d mo", h);
	snprintf(npv, sizeof(npv), "NPV at %.2f%%", 100 * rate);
	fprintf(fp, "%-10s %-34s %12s %12s %12s %15s %15s\n", "Option", "Label", "Up front",
		"Monthly", "Residual", total, npv);
	for (size_t k = 0; k < cf->n; k++) {
		const struct cashflow_series *s = &cf->series[k];
		fprintf(fp, "%-10s %-34s %12.2f %12.2f %12.2f %15.2f %15.2f\n",
			cost_option_name(s->in.option), s->in.label, s->in.upfront_usd.value,
			s->in.monthly_usd.value, s->residual_usd, s->total_usd, s->npv_usd);
	}

	if (cf->purchase < cf->n) {
		const struct cashflow_series *buy = &cf->series[cf->purchase];
		if (buy->residual_rule == CASHFLOW_RESIDUAL_STRAIGHT_LINE)
			fprintf(fp, "Residual: straight line, the %.2f price less %d/%g of (price - "
				"resale %g x price) = %.2f (the horizon ends before the amortisation)\n",
				buy->in.upfront_usd.value, h, buy->in.amortisation_months.value,
				buy->in.resale_fraction.value, buy->residual_usd);
		else
			fprintf(fp, "Residual: the resale fraction %g of the %.2f price = %.2f (the "
				"horizon reaches the %g-month amortisation)\n",
				buy->in.resale_fraction.value, buy->in.upfront_usd.value,
				buy->residual_usd, buy->in.amortisation_months.value);
		if (cf->n > 1)
			fprintf(fp, "\nBuying ('%s') pays back against (the first time its cumulative "
				"cash is at most the option's; discounted: on present values):\n",
				buy->in.label);
		for (size_t k = 0; k < cf->n; k++) {
			const struct cashflow_series *s = &cf->series[k];
			if (k == cf->purchase)
				continue;
			fprintf(fp, "  %-10s %-34s ", cost_option_name(s->in.option), s->in.label);
			crossing_text(fp, &s->payback, h);
			fprintf(fp, " (discounted: ");
			crossing_text(fp, &s->payback_discounted, h);
			fprintf(fp, ")\n");
		}
	}

	/* the running sums at each year's end (every few years past ten) */
	int step = 12 * ((h + 119) / 120);
	fprintf(fp, "\nCumulative cash at the end of month:\n%-10s %-34s %12s", "", "", "0");
	for (int m = step; m < h; m += step)
		fprintf(fp, " %12d", m);
	fprintf(fp, " %12d\n", h);
	for (size_t k = 0; k < cf->n; k++) {
		const struct cashflow_series *s = &cf->series[k];
		fprintf(fp, "%-10s %-34s %12.2f", cost_option_name(s->in.option), s->in.label,
			s->cumulative_usd[0]);
		for (int m = step; m < h; m += step)
			fprintf(fp, " %12.2f", s->cumulative_usd[m]);
		fprintf(fp, " %12.2f\n", s->cumulative_usd[h]);
	}

	fprintf(fp, "\nSources:\n");
	for (size_t k = 0; k < cf->n; k++) {
		const struct cashflow_option *o = &cf->series[k].in;
		fprintf(fp, "  %s '%s': up front %.2f (%s); monthly %.2f (%s)", cost_option_name(o->option),
			o->label, o->upfront_usd.value, o->upfront_usd.source, o->monthly_usd.value,
			o->monthly_usd.source);
		if (o->option == COST_PURCHASE)
			fprintf(fp, "; amortisation %g months (%s); resale %g of the price (%s)",
				o->amortisation_months.value, o->amortisation_months.source,
				o->resale_fraction.value, o->resale_fraction.source);
		fputc('\n', fp);
	}
	return ferror(fp) ? DIAG_EIO : 0;
}

/* ---- JSON --------------------------------------------------------------- */

static void json_fig(FILE *fp, const char *key, const struct cost_fig *f)
{
	fprintf(fp, "\"%s\":%.17g,\"%s_source\":", key, f->value, key);
	jsonw_str(fp, f->source);
}

static void json_crossing(FILE *fp, const char *key, const struct cashflow_crossing *c)
{
	bool at = c->state == CASHFLOW_CROSS_WITHIN || c->state == CASHFLOW_CROSS_AT_RESALE;
	fprintf(fp, "\"%s\":\"%s\",\"%s_months\":", key, cashflow_cross_name(c->state), key);
	if (at)
		fprintf(fp, "%.17g", c->month);
	else
		fprintf(fp, "null");
}

static void json_array(FILE *fp, const char *key, const double *v, int h)
{
	fprintf(fp, "\"%s\":[", key);
	for (int m = 0; m <= h; m++)
		fprintf(fp, "%s%.17g", m ? "," : "", v[m]);
	fputc(']', fp);
}

int cashflow_json(FILE *fp, const struct cashflow *cf)
{
	int h = cf->horizon_months;
	fprintf(fp, "{\"schema\":\"agentcap-cashflow\",\"version\":1,\"currency\":\"USD\","
		"\"timing\":\"up front at month 0; monthly at the end of months 1..horizon; the "
		"residual back at the end of the horizon\",");
	json_fig(fp, "horizon_months", &cf->params.horizon_months);
	fputc(',', fp);
	json_fig(fp, "discount_rate_annual", &cf->params.discount_rate);
	fprintf(fp, ",\"discount_rate_monthly\":%.17g,\"purchase\":", cf->monthly_rate);
	if (cf->purchase < cf->n)
		jsonw_str(fp, cf->series[cf->purchase].in.label);
	else
		fprintf(fp, "null");
	fprintf(fp, ",\"options\":[");
	for (size_t k = 0; k < cf->n; k++) {
		const struct cashflow_series *s = &cf->series[k];
		fprintf(fp, "%s{\"option\":\"%s\",\"label\":", k ? "," : "",
			cost_option_name(s->in.option));
		jsonw_str(fp, s->in.label);
		fputc(',', fp);
		json_fig(fp, "upfront_usd", &s->in.upfront_usd);
		fputc(',', fp);
		json_fig(fp, "monthly_usd", &s->in.monthly_usd);
		fputc(',', fp);
		json_fig(fp, "amortisation_months", &s->in.amortisation_months);
		fputc(',', fp);
		json_fig(fp, "resale_fraction", &s->in.resale_fraction);
		fprintf(fp, ",\"residual_rule\":\"%s\",\"residual_usd\":%.17g,\"total_usd\":%.17g,"
			"\"npv_usd\":%.17g,", cashflow_residual_name(s->residual_rule),
			s->residual_usd, s->total_usd, s->npv_usd);
		json_crossing(fp, "payback", &s->payback);
		fputc(',', fp);
		json_crossing(fp, "payback_discounted", &s->payback_discounted);
		fputc(',', fp);
		json_array(fp, "cash_usd", s->cash_usd, h);
		fputc(',', fp);
		json_array(fp, "cumulative_usd", s->cumulative_usd, h);
		fputc(',', fp);
		json_array(fp, "pv_cumulative_usd", s->pv_cumulative_usd, h);
		fputc('}', fp);
	}
	fprintf(fp, "]}\n");
	return ferror(fp) ? DIAG_EIO : 0;
}
