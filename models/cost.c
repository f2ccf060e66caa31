/* SPDX-License-Identifier: Apache-2.0
 * cost: the arithmetic of each way of paying (see cost.h and docs/cost.md
 * for every formula), and the helpers that fill an option's parameters from
 * the price and hardware catalogues.
 *
 * Every eval function validates its inputs, computes the monthly total as a
 * sum of named parts, then the per-token, per-task and per-engineer figures
 * from that total, and records every figure it used as an assumption.  No
 * function here allocates.
 */
#include "models/cost.h"

#include "models/catalog.h"
#include "models/prices.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const char *const option_names[COST_OPTION_COUNT] = {
	"purchase", "dedicated", "elastic", "seats", "api",
};

const char *cost_option_name(enum cost_option o)
{
	return ((int)o >= 0 && (int)o < COST_OPTION_COUNT) ? option_names[o] : "?";
}

void cost_fig_set(struct cost_fig *f, double value, const char *fmt, ...)
{
	f->value = value;
	f->date[0] = '\0';
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(f->source, sizeof(f->source), fmt, ap);
	va_end(ap);
}

static bool digits(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return false;
	return true;
}

void cost_date_of(const char *date, char out[COST_DATE_MAX])
{
	size_t n = 0;
	if (date && digits(date, 4)) {
		n = 4;
		if (date[4] == '-' && digits(date + 5, 2)) {
			n = 7;
			if (date[7] == '-' && digits(date + 8, 2))
				n = 10;
		} else if (date[4] == '-' && date[5] == 'Q' && date[6] >= '1' && date[6] <= '4') {
			n = 7;
		}
	}
	memcpy(out, date, n);
	out[n] = '\0';
}

/* year x 10000 + month x 100 + day of a cost_date_of date; -1 for "". */
static long date_key(const char *d)
{
	if (!d[0])
		return -1;
	long y = (d[0] - '0') * 1000 + (d[1] - '0') * 100 + (d[2] - '0') * 10 + (d[3] - '0');
	long m = 0, day = 0;
	if (d[4] == '-' && d[5] == 'Q')
		m = 3 * (d[6] - '0');
	else if (d[4] == '-')
		m = (d[5] - '0') * 10 + (d[6] - '0');
	if (d[4] == '-' && d[7] == '-')
		day = (d[8] - '0') * 10 + (d[9] - '0');
	return y * 10000 + m * 100 + day;
}

bool cost_date_after(const char *a, const char *b)
{
	return date_key(a) > date_key(b);
}

void cost_newest_date(char newest[COST_DATE_MAX], const struct cost_result *r)
{
	for (size_t i = 0; i < r->assumption_count; i++)
		if (cost_date_after(r->assumptions[i].date, newest))
			snprintf(newest, COST_DATE_MAX, "%s", r->assumptions[i].date);
}

void cost_task_default(struct cost_task *t)
{
	cost_fig_set(&t->acceptance_rate, -1,
		     "default: the trace's own accepted / tasks with a known outcome "
		     "(docs/cost.md)");
	cost_fig_set(&t->turns_factor, 1, "default: as the trace recorded (docs/cost.md)");
	cost_fig_set(&t->quality_factor, 1, "quality assumed equal to the traced model's (no "
		     "published scores of both on one benchmark and scaffold, and no pilot figure; "
		     "docs/cost.md)");
}

/* ---- results ------------------------------------------------------------ */

static void result_init(struct cost_result *r, enum cost_option o, const char *label)
{
	memset(r, 0, sizeof(*r));
	r->option = o;
	snprintf(r->label, sizeof(r->label), "%s", label[0] ? label : option_names[o]);
}

/* The assumption added (no date), or NULL when the array is full. */
static struct cost_assumption *assume(struct cost_result *r, const char *name, double value,
				      const char *unit, const char *source)
{
	if (r->assumption_count == COST_MAX_ASSUMPTIONS)
		return NULL; /* the array is sized for the longest option */
	struct cost_assumption *a = &r->assumptions[r->assumption_count++];
	snprintf(a->name, sizeof(a->name), "%s", name);
	a->value = value;
	snprintf(a->unit, sizeof(a->unit), "%s", unit);
	snprintf(a->source, sizeof(a->source), "%s", source);
	a->date[0] = '\0';
	return a;
}

static void assume_fig(struct cost_result *r, const char *name, const struct cost_fig *f,
		       const char *unit)
{
	struct cost_assumption *a = assume(r, name, f->value, unit, f->source);
	if (a)
		snprintf(a->date, sizeof(a->date), "%s", f->date);
}

static void part(struct cost_result *r, const char *name, double usd_month)
{
	if (r->part_count == COST_MAX_PARTS)
		return;
	struct cost_part *p = &r->parts[r->part_count++];
	snprintf(p->name, sizeof(p->name), "%s", name);
	p->usd_month = usd_month;
	r->usd_month += usd_month;
}

/* ---- checks ------------------------------------------------------------- */

static bool finite_ge(double x, double lo)
{
	return isfinite(x) && x >= lo;
}

int cost_usage_check(const struct cost_usage *u, struct diag *d)
{
	if (!finite_ge(u->duration_s, 0) || u->duration_s <= 0)
		return diag_set(d, DIAG_EINPUT, "cost: usage duration %g s (expected a duration > 0)",
				u->duration_s);
	if (!finite_ge(u->periods_per_month, 0))
		return diag_set(d, DIAG_EINPUT, "cost: periods_per_month %g (expected >= 0; 0 = "
				"continuous traffic)", u->periods_per_month);
	if (u->gpus_per_replica < 1 || u->replicas < 1)
		return diag_set(d, DIAG_EINPUT, "cost: %lld replicas of %lld GPUs (expected at least "
				"one replica of at least one GPU)", (long long)u->replicas,
				(long long)u->gpus_per_replica);
	if (!finite_ge(u->gpu_hours_provisioned, 0) || !finite_ge(u->gpu_hours_busy, 0) ||
	    !finite_ge(u->busy_s_per_gpu, 0) || !finite_ge(u->idle_s_per_gpu, 0))
		return diag_set(d, DIAG_EINPUT, "cost: GPU-hours and busy/idle seconds must be "
				"finite and >= 0 (expected measured times)");
	if (u->busy_s_per_gpu + u->idle_s_per_gpu > u->duration_s * (1 + 1e-9))
		return diag_set(d, DIAG_EINPUT, "cost: busy %g s + idle %g s per GPU exceed the span "
				"of %g s (expected at most the span)", u->busy_s_per_gpu,
				u->idle_s_per_gpu, u->duration_s);
	if (u->prompt_tokens < 0 || u->cached_tokens < 0 || u->output_tokens < 0 ||
	    u->calls < 0 || u->tasks < 0 || u->engineers < 0)
		return diag_set(d, DIAG_EINPUT, "cost: negative token, call, task or engineer count "
				"(expected counts >= 0)");
	if (u->cached_tokens > u->prompt_tokens)
		return diag_set(d, DIAG_EINPUT, "cost: %lld cached tokens of %lld prompt tokens "
				"(expected cached <= prompt)", (long long)u->cached_tokens,
				(long long)u->prompt_tokens);
	if (u->tasks_accept_known < 0 || u->tasks_accepted < 0 ||
	    u->tasks_accepted > u->tasks_accept_known || u->tasks_accept_known > u->tasks)
		return diag_set(d, DIAG_EINPUT, "cost: %lld accepted of %lld tasks with a known "
				"outcome of %lld tasks (expected accepted <= known <= tasks)",
				(long long)u->tasks_accepted, (long long)u->tasks_accept_known,
				(long long)u->tasks);
	for (size_t i = 0; i < u->replica_up_count; i++)
		if (!u->replica_up || !finite_ge(u->replica_up[i].s, 0) ||
		    u->replica_up[i].s > u->duration_s * (1 + 1e-9))
			return diag_set(d, DIAG_EINPUT, "cost: replica stretch %zu is not a time from 0 "
					"to the span of %g s (expected seconds within the span)", i,
					u->duration_s);
	return 0;
}

double cost_periods_per_month(const struct cost_usage *u)
{
	if (u->periods_per_month > 0)
		return u->periods_per_month;
	return COST_HOURS_PER_MONTH * 3600.0 / u->duration_s;
}

static int check_fig(const struct cost_fig *f, const char *name, double lo, double hi,
		     struct diag *d)
{
	if (!isfinite(f->value) || f->value < lo || f->value > hi)
		return diag_set(d, DIAG_EINPUT, "cost: %s = %g (expected a value from %g to %g; "
				"source: %s)", name, f->value, lo, hi, f->source);
	return 0;
}

/* The usage-driven figures every option shares. */
struct common {
	double periods;       /* per month */
	double turns;
	double acceptance;
};

static int common_begin(const struct cost_usage *u, const struct cost_task *t,
			struct cost_result *r, struct common *c, struct diag *d)
{
	int rc = cost_usage_check(u, d);
	if (rc)
		return rc;
	struct cost_task def;
	if (!t) {
		cost_task_default(&def);
		t = &def;
	}
	if (!isfinite(t->turns_factor.value) || !(t->turns_factor.value > 0) ||
	    t->turns_factor.value > 100)
		return diag_set(d, DIAG_EINPUT, "cost: turns factor %g (expected a number in (0, "
				"100]; source: %s)", t->turns_factor.value, t->turns_factor.source);
	double qf = t->quality_factor.value;
	if (!isfinite(qf) || !(qf > 0) || qf > 1)
		return diag_set(d, DIAG_EINPUT, "cost: quality factor %g (expected a share in (0, 1]; "
				"source: %s)", qf, t->quality_factor.source);
	double acc = t->acceptance_rate.value;
	if (!isfinite(acc) || acc > 1 || acc == 0)
		return diag_set(d, DIAG_EINPUT, "cost: acceptance rate %g (expected a share in "
				"(0, 1], or < 0 for the trace's own; source: %s)", acc,
				t->acceptance_rate.source);
	c->periods = cost_periods_per_month(u);
	c->turns = t->turns_factor.value;
	const char *acc_src = t->acceptance_rate.source;
	char buf[COST_SOURCE_MAX];
	if (acc < 0) {
		if (u->tasks_accept_known > 0) {
			acc = (double)u->tasks_accepted / (double)u->tasks_accept_known;
			snprintf(buf, sizeof(buf), "the trace: %lld accepted of %lld tasks with a "
				 "known outcome", (long long)u->tasks_accepted,
				 (long long)u->tasks_accept_known);
		} else {
			acc = 1;
			snprintf(buf, sizeof(buf), "the trace records no acceptance: every task "
				 "counted as accepted");
		}
		if (qf != 1) {
			size_t at = strlen(buf);
			snprintf(buf + at, sizeof(buf) - at, ", x quality factor %.4g", qf);
			acc *= qf;
		}
		acc_src = buf;
	}
	c->acceptance = acc;
	/* the served traffic is the replay's; a model needing T times the
	 * turns gets 1/T of the tasks done with it */
	r->output_tokens_month = (double)u->output_tokens * c->periods;
	r->tasks_month = (double)u->tasks * c->periods / c->turns;
	r->accepted_tasks_month = r->tasks_month * acc;
	char src[COST_SOURCE_MAX];
	if (u->periods_source && u->periods_source[0])
		snprintf(src, sizeof(src), "%s", u->periods_source);
	else if (u->periods_per_month > 0)
		snprintf(src, sizeof(src), "given: the %.6g h replayed repeat %.6g times a month",
			 u->duration_s / 3600.0, c->periods);
	else
		snprintf(src, sizeof(src), "continuous traffic: %.0f h a month / %.6g h replayed",
			 COST_HOURS_PER_MONTH, u->duration_s / 3600.0);
	assume(r, "periods_per_month", c->periods, "1/month", src);
	assume(r, "acceptance_rate", acc, "share of tasks", acc_src);
	if (t->acceptance_rate.value < 0)
		assume(r, "quality_factor", qf, "x trace acceptance", t->quality_factor.source);
	assume(r, "turns_factor", c->turns, "x trace", t->turns_factor.source);
	return 0;
}

static void common_end(const struct cost_usage *u, struct cost_result *r)
{
	if (r->output_tokens_month > 0)
		r->usd_per_mtok_output = r->usd_month / (r->output_tokens_month / 1e6);
	if (r->accepted_tasks_month > 0)
		r->usd_per_accepted_task = r->usd_month / r->accepted_tasks_month;
	if (u->engineers > 0)
		r->usd_per_engineer_month = r->usd_month / (double)u->engineers;
}

static double gpus_of(const struct cost_usage *u)
{
	return (double)u->replicas * (double)u->gpus_per_replica;
}

/* ---- operator time ------------------------------------------------------ */

double cost_operator_per_system(const struct cost_operator *o, double gpus)
{
	double g = o->system_gpus.value;
	return g > 0 ? o->system_usd_month.value * gpus / g : o->system_usd_month.value;
}

static int check_operator(const struct cost_operator *o, const char *opt, struct diag *d)
{
	char name[64];
	int rc;
	snprintf(name, sizeof(name), "%s.operator_usd_month", opt);
	if (o->usd_month.value >= 0 || !isfinite(o->usd_month.value))
		return check_fig(&o->usd_month, name, 0, 1e9, d);
	snprintf(name, sizeof(name), "%s.operator_base_usd_month", opt);
	if ((rc = check_fig(&o->base_usd_month, name, 0, 1e9, d)))
		return rc;
	snprintf(name, sizeof(name), "%s.operator_per_system_usd_month", opt);
	if ((rc = check_fig(&o->system_usd_month, name, 0, 1e9, d)))
		return rc;
	snprintf(name, sizeof(name), "%s.operator_system_gpus", opt);
	return check_fig(&o->system_gpus, name, 0, 4096, d);
}

/* Operator time a month of systems systems of gpus GPUs each. */
static double operator_month(const struct cost_operator *o, double systems, double gpus)
{
	if (o->usd_month.value >= 0)
		return o->usd_month.value;
	return o->base_usd_month.value + cost_operator_per_system(o, gpus) * systems;
}

/* The assumptions of operator_month: the whole figure, or the base, the
 * per-system share and the total (named "operator" either way). */
static void assume_operator(struct cost_result *r, const struct cost_operator *o, double systems,
			    double gpus, const char *what)
{
	if (o->usd_month.value >= 0) {
		assume_fig(r, "operator", &o->usd_month, "USD per month");
		return;
	}
	char src[COST_SOURCE_MAX];
	assume_fig(r, "operator_base", &o->base_usd_month, "USD per month");
	if (o->system_gpus.value > 0)
		snprintf(src, sizeof(src), "%.10g x %g / %g GPUs: %.250s", o->system_usd_month.value,
			 gpus, o->system_gpus.value, o->system_usd_month.source);
	else
		snprintf(src, sizeof(src), "%s", o->system_usd_month.source);
	struct cost_assumption *a = assume(r, "operator_per_system",
					   cost_operator_per_system(o, gpus), "USD per system-month",
					   src);
	if (a)
		snprintf(a->date, sizeof(a->date), "%s", o->system_usd_month.date);
	snprintf(src, sizeof(src), "operator_base + operator_per_system x %g %s (docs/cost.md)",
		 systems, what);
	assume(r, "operator", operator_month(o, systems, gpus), "USD per month", src);
}

/* ---- energy ------------------------------------------------------------- */

int cost_energy_eval(const struct cost_usage *u, double busy_w, double idle_w, double pue,
		     const struct cost_task *t, struct cost_energy *e, struct diag *d)
{
	memset(e, 0, sizeof(*e));
	int rc = cost_usage_check(u, d);
	if (rc)
		return rc;
	if (!finite_ge(busy_w, 0) || !finite_ge(idle_w, 0) || !finite_ge(pue, 1) || pue > 10)
		return diag_set(d, DIAG_EINPUT, "cost: busy %g W, idle %g W, PUE %g (expected watts "
				">= 0 and a PUE from 1 to 10)", busy_w, idle_w, pue);
	double turns = t ? t->turns_factor.value : 1;
	if (!isfinite(turns) || !(turns > 0))
		return diag_set(d, DIAG_EINPUT, "cost: turns factor %g (expected > 0)", turns);
	double gpus = gpus_of(u);
	double month_h = COST_HOURS_PER_MONTH;
	/* the replay's traffic: turns change the tasks it completes, not it */
	double busy_h = u->busy_s_per_gpu / 3600.0 * cost_periods_per_month(u);
	if (busy_h > month_h)
		busy_h = month_h; /* a GPU cannot be busy longer than the month */
	e->gpus = gpus;
	e->busy_gpu_hours_month = busy_h * gpus;
	e->idle_gpu_hours_month = (month_h - busy_h) * gpus;
	e->kwh_month_it = (e->busy_gpu_hours_month * busy_w + e->idle_gpu_hours_month * idle_w) /
			  1000.0;
	e->kwh_month_facility = e->kwh_month_it * pue;
	if (u->output_tokens > 0)
		e->j_per_output_token = (u->busy_s_per_gpu * busy_w + u->idle_s_per_gpu * idle_w) *
					gpus / (double)u->output_tokens;
	return 0;
}

/* ---- purchase ----------------------------------------------------------- */

int cost_purchase_eval(const struct cost_purchase *p, const struct cost_usage *u,
		       const struct cost_task *t, struct cost_result *r, struct diag *d)
{
	result_init(r, COST_PURCHASE, p->label);
	int rc;
	if ((rc = check_fig(&p->system_usd, "purchase.system_usd", 0, 1e10, d)) ||
	    (rc = check_fig(&p->gpus_per_system, "purchase.gpus_per_system", 1, 4096, d)) ||
	    (rc = check_fig(&p->amortisation_months, "purchase.amortisation_months", 1, 600, d)) ||
	    (rc = check_fig(&p->resale_fraction, "purchase.resale_fraction", 0, 1, d)) ||
	    (rc = check_fig(&p->busy_w, "purchase.busy_w", 0, 1e5, d)) ||
	    (rc = check_fig(&p->idle_w, "purchase.idle_w", 0, 1e5, d)) ||
	    (rc = check_fig(&p->pue, "purchase.pue", 1, 10, d)) ||
	    (rc = check_fig(&p->electricity_usd_kwh, "purchase.electricity_usd_kwh", 0, 100, d)) ||
	    (rc = check_fig(&p->hosting_usd_month, "purchase.hosting_usd_month", 0, 1e9, d)) ||
	    (rc = check_fig(&p->host_share_usd, "purchase.host_share_usd", 0, 1e10, d)) ||
	    (rc = check_operator(&p->op, "purchase", d)))
		return rc;
	if (p->gpus_per_system.value != floor(p->gpus_per_system.value))
		return diag_set(d, DIAG_EINPUT, "cost: purchase.gpus_per_system = %g (expected a "
				"whole number)", p->gpus_per_system.value);
	struct common c;
	if ((rc = common_begin(u, t, r, &c, d)))
		return rc;
	double gpus = gpus_of(u);
	double systems = ceil(gpus / p->gpus_per_system.value);
	struct cost_task tt = { .turns_factor = { .value = c.turns } };
	struct cost_energy e;
	if ((rc = cost_energy_eval(u, p->busy_w.value, p->idle_w.value, p->pue.value, &tt, &e, d)))
		return rc;
	double capital = systems * p->system_usd.value * (1 - p->resale_fraction.value) /
			 p->amortisation_months.value;
	part(r, "capital", capital);
	part(r, "power", e.kwh_month_facility * p->electricity_usd_kwh.value);
	part(r, "hosting", systems * p->hosting_usd_month.value);
	part(r, "operator", operator_month(&p->op, systems, p->gpus_per_system.value));
	char src[COST_SOURCE_MAX];
	snprintf(src, sizeof(src), "%lld replicas x %lld GPUs in systems of %g",
		 (long long)u->replicas, (long long)u->gpus_per_replica, p->gpus_per_system.value);
	assume(r, "systems", systems, "systems", src);
	assume_fig(r, "system_price", &p->system_usd, "USD per system");
	if (p->host_share_usd.value > 0)
		assume_fig(r, "host_share", &p->host_share_usd, "USD per GPU (in the price)");
	assume_fig(r, "amortisation", &p->amortisation_months, "months");
	assume_fig(r, "resale", &p->resale_fraction, "share of price");
	assume_fig(r, "busy_power", &p->busy_w, "W per GPU");
	assume_fig(r, "idle_power", &p->idle_w, "W per GPU");
	snprintf(src, sizeof(src), "replay: %.6g s busy per GPU per %.6g h, x periods x turns; "
		 "idle the rest of %.0f h", u->busy_s_per_gpu, u->duration_s / 3600.0,
		 COST_HOURS_PER_MONTH);
	assume(r, "busy_gpu_hours", e.busy_gpu_hours_month, "GPU-h per month", src);
	assume(r, "energy_it", e.kwh_month_it, "kWh per month", "busy x busy W + idle x idle W");
	assume_fig(r, "pue", &p->pue, "ratio");
	assume_fig(r, "electricity", &p->electricity_usd_kwh, "USD per kWh");
	assume_fig(r, "hosting", &p->hosting_usd_month, "USD per system-month");
	if (p->not_priced[0])
		assume(r, "not_priced", 0, "warning", p->not_priced);
	assume_operator(r, &p->op, systems, p->gpus_per_system.value, "systems bought");
	common_end(u, r);
	return 0;
}

/* ---- dedicated ---------------------------------------------------------- */

int cost_dedicated_eval(const struct cost_dedicated *p, const struct cost_usage *u,
			const struct cost_task *t, struct cost_result *r, struct diag *d)
{
	result_init(r, COST_DEDICATED, p->label);
	int rc;
	if ((rc = check_fig(&p->server_usd_month, "dedicated.server_usd_month", 0, 1e9, d)) ||
	    (rc = check_fig(&p->gpus_per_server, "dedicated.gpus_per_server", 1, 4096, d)) ||
	    (rc = check_operator(&p->op, "dedicated", d)))
		return rc;
	if (p->gpus_per_server.value != floor(p->gpus_per_server.value))
		return diag_set(d, DIAG_EINPUT, "cost: dedicated.gpus_per_server = %g (expected a "
				"whole number)", p->gpus_per_server.value);
	struct common c;
	if ((rc = common_begin(u, t, r, &c, d)))
		return rc;
	double servers = ceil(gpus_of(u) / p->gpus_per_server.value);
	part(r, "rent", servers * p->server_usd_month.value);
	part(r, "operator", operator_month(&p->op, servers, p->gpus_per_server.value));
	char src[COST_SOURCE_MAX];
	snprintf(src, sizeof(src), "%lld replicas x %lld GPUs in servers of %g",
		 (long long)u->replicas, (long long)u->gpus_per_replica, p->gpus_per_server.value);
	assume(r, "servers", servers, "servers", src);
	assume_fig(r, "server_price", &p->server_usd_month, "USD per server-month");
	assume_operator(r, &p->op, servers, p->gpus_per_server.value, "servers rented");
	common_end(u, r);
	return 0;
}

/* ---- elastic ------------------------------------------------------------ */

int cost_elastic_eval(const struct cost_elastic *p, const struct cost_usage *u,
		      const struct cost_task *t, struct cost_result *r, struct diag *d)
{
	result_init(r, COST_ELASTIC, p->label);
	int rc;
	if ((rc = check_fig(&p->usd_per_gpu_hour, "elastic.usd_per_gpu_hour", 0, 1e6, d)) ||
	    (rc = check_fig(&p->billing_granularity_s, "elastic.billing_granularity_s", 1,
			    31 * 86400.0, d)) ||
	    (rc = check_fig(&p->min_billing_s, "elastic.min_billing_s", 0, 31 * 86400.0, d)) ||
	    (rc = check_fig(&p->min_replicas, "elastic.min_replicas", 0, 4096, d)) ||
	    (rc = check_operator(&p->op, "elastic", d)))
		return rc;
	struct common c;
	if ((rc = common_begin(u, t, r, &c, d)))
		return rc;
	double g = p->billing_granularity_s.value, m = p->min_billing_s.value;
	/* outside the replayed periods only min_replicas stay up */
	double off_h = COST_HOURS_PER_MONTH - c.periods * u->duration_s / 3600.0;
	if (off_h < 0)
		off_h = 0;
	/* Periods back to back (none of the month left outside them): a
	 * stretch reaching an end of the span runs on into the next period's,
	 * one stretch of the month whose rounding is at most one unit, so it
	 * is billed as measured.  Otherwise each stretch is a bill of its own:
	 * rounded up to whole units of g, and at least m. */
	bool joined = off_h < 1e-9;
	double span_h;
	char src[COST_SOURCE_MAX];
	double whole = gpus_of(u) * u->duration_s / 3600.0;
	if (u->replica_up_count > 0 ||
	    !(u->gpu_hours_provisioned > 0) ||
	    fabs(u->gpu_hours_provisioned - whole) <= 1e-9 * whole) {
		/* without stretches, every replica up the whole span: one
		 * stretch each, open at both ends */
		struct cost_stretch all = { .s = u->duration_s, .from_start = true, .to_end = true };
		size_t n = u->replica_up_count ? u->replica_up_count : (size_t)u->replicas;
		double billed_s = 0;
		size_t own = 0;
		for (size_t i = 0; i < n; i++) {
			const struct cost_stretch *st = u->replica_up_count ? &u->replica_up[i] : &all;
			if (joined && (st->from_start || st->to_end)) {
				billed_s += st->s;
				continue;
			}
			double s = st->s > m ? st->s : m;
			billed_s += ceil(s / g - 1e-9) * g;
			own++;
		}
		span_h = billed_s * (double)u->gpus_per_replica / 3600.0;
		snprintf(src, sizeof(src), "replay: %zu replica stretches%s (%zu billed on their own: "
			 "each rounded up to %g s, at least %g s; %zu running on across the span's "
			 "ends, as measured) x %lld GPUs per replica", n,
			 u->replica_up_count ? "" : ", every replica up the whole span", own, g, m,
			 n - own, (long long)u->gpus_per_replica);
	} else {
		span_h = u->gpu_hours_provisioned;
		snprintf(src, sizeof(src), "replay: GPU-hours provisioned (no replica stretches "
			 "given: granularity and minimum not applied)");
	}
	double traced_h = span_h * c.periods;
	double floor_h = off_h * p->min_replicas.value * (double)u->gpus_per_replica;
	part(r, "gpu_hours", traced_h * p->usd_per_gpu_hour.value);
	part(r, "min_replicas", floor_h * p->usd_per_gpu_hour.value);
	/* the systems an operator looks after: the replicas, at the peak the
	 * autoscaler kept up */
	double replicas = (double)u->replicas, gpus = (double)u->gpus_per_replica;
	part(r, "operator", operator_month(&p->op, replicas, gpus));
	assume(r, "gpu_hours_per_period", span_h, "GPU-h", src);
	assume(r, "gpu_hours_month", traced_h, "GPU-h per month", "per period x periods");
	snprintf(src, sizeof(src), "%.6g h outside the replayed periods x min replicas x %lld GPUs",
		 off_h, (long long)u->gpus_per_replica);
	assume(r, "floor_gpu_hours_month", floor_h, "GPU-h per month", src);
	assume_fig(r, "gpu_hour_price", &p->usd_per_gpu_hour, "USD per GPU-hour");
	assume_fig(r, "billing_granularity", &p->billing_granularity_s, "s");
	assume_fig(r, "min_billing_period", &p->min_billing_s, "s per stretch");
	assume_fig(r, "min_replicas", &p->min_replicas, "replicas");
	assume_operator(r, &p->op, replicas, gpus, "replicas (the peak kept up)");
	common_end(u, r);
	return 0;
}

/* ---- API and seats ------------------------------------------------------ */

static int check_api(const struct cost_api *p, struct diag *d)
{
	int rc;
	if ((rc = check_fig(&p->input_usd_mtok, "api.input_usd_mtok", 0, 1e4, d)) ||
	    (rc = check_fig(&p->cached_usd_mtok, "api.cached_usd_mtok", 0, 1e4, d)) ||
	    (rc = check_fig(&p->cache_write_usd_mtok, "api.cache_write_usd_mtok", 0, 1e4, d)) ||
	    (rc = check_fig(&p->output_usd_mtok, "api.output_usd_mtok", 0, 1e4, d)))
		return rc;
	return 0;
}

/* List-price value of the month's tokens, by part. */
struct api_parts {
	double in, cached, written, out;
};

static double class_price(const struct cost_api *p, int k, int part)
{
	if (k > 0 && k < COST_API_CLASSES)
		return p->class_usd_mtok[k][part];
	switch (part) {
	case COST_API_IN:
		return p->input_usd_mtok.value;
	case COST_API_CACHED:
		return p->cached_usd_mtok.value;
	case COST_API_WRITE:
		return p->cache_write_usd_mtok.value;
	default:
		return p->output_usd_mtok.value;
	}
}

/* The tokens of one class at its prices, by part, in USD x 1e6. */
static void class_parts(const struct cost_api *p, int k, const struct cost_api_tokens *t,
			struct api_parts *a)
{
	int64_t uncached = t->prompt - t->cached;
	int64_t written = t->cache_write < uncached ? t->cache_write : uncached;
	a->in += (double)(uncached - written) * class_price(p, k, COST_API_IN);
	a->written += (double)written * class_price(p, k, COST_API_WRITE);
	a->cached += (double)t->cached * class_price(p, k, COST_API_CACHED);
	a->out += (double)t->output * class_price(p, k, COST_API_OUT);
}

static bool peak_hour(const struct cost_api *p, int64_t t_ns)
{
	if (t_ns < 0)
		t_ns = 0;
	int64_t sec = t_ns / INT64_C(1000000000);
	if (p->clock_set) {
		/* floor: a start before 1970 must not misplace the hour */
		int64_t t0 = p->clock_t0_ns / INT64_C(1000000000);
		if (p->clock_t0_ns < 0 && p->clock_t0_ns % INT64_C(1000000000))
			t0--;
		sec += t0;
	}
	int64_t day = sec >= 0 ? sec / 86400 : -((-sec + 86399) / 86400);
	int hour = (int)((sec - day * 86400) / 3600);
	/* 1970-01-01 was a Thursday (3 with Monday 0) */
	int wd = (int)((((p->clock_set ? day + 3 : day) % 7) + 7) % 7);
	return (p->peak_days >> wd & 1u) && (p->peak_hours >> hour & 1u);
}

int cost_api_class(const struct cost_api *p, int64_t prompt_tokens, int64_t t_ns)
{
	for (int32_t i = p->n_tiers; i > 0; i--)
		if (prompt_tokens > p->tier_over[i - 1])
			return i;
	if (p->off_peak && !peak_hour(p, t_ns))
		return COST_API_OFF_PEAK;
	return 0;
}

void cost_api_tokens_add(struct cost_api_tokens *cls, int k, int64_t prompt, int64_t cached,
			 int64_t cache_write, int64_t output)
{
	if (k < 0 || k >= COST_API_CLASSES)
		k = 0;
	cls[k].calls++;
	cls[k].prompt += prompt;
	cls[k].cached += cached;
	cls[k].cache_write += cache_write;
	cls[k].output += output;
}

void cost_api_tokens_scale(struct cost_api_tokens *cls, double f)
{
	for (int k = 0; k < COST_API_CLASSES; k++) {
		struct cost_api_tokens *y = &cls[k];
		y->calls = llround((double)y->calls * f);
		y->prompt = llround((double)y->prompt * f);
		y->cached = llround((double)y->cached * f);
		y->cache_write = llround((double)y->cache_write * f);
		y->output = llround((double)y->output * f);
	}
}

double cost_api_usd_class(const struct cost_api *p, int k, const struct cost_api_tokens *t)
{
	struct api_parts a = {0};
	class_parts(p, k, t, &a);
	return (a.in + a.written + a.cached + a.out) / 1e6;
}

double cost_api_usd(const struct cost_api *p, const struct cost_api_tokens *cls)
{
	double usd = 0;
	for (int k = 0; k < COST_API_CLASSES; k++)
		usd += cost_api_usd_class(p, k, &cls[k]);
	return usd;
}

void cost_api_scale(struct cost_api *p, double f)
{
	p->input_usd_mtok.value *= f;
	p->cached_usd_mtok.value *= f;
	p->cache_write_usd_mtok.value *= f;
	p->output_usd_mtok.value *= f;
	for (int k = 1; k < COST_API_CLASSES; k++)
		for (int q = 0; q < COST_API_PARTS; q++)
			p->class_usd_mtok[k][q] *= f;
}

static double api_month(const struct cost_api *p, const struct cost_usage *u,
			const struct common *c, struct api_parts *a)
{
	double scale = c->periods / 1e6;
	*a = (struct api_parts){0};
	if (u->api_split) {
		for (int k = 0; k < COST_API_CLASSES; k++)
			class_parts(p, k, &u->api_class[k], a);
	} else {
		struct cost_api_tokens all = {.calls = u->calls, .prompt = u->prompt_tokens,
					      .cached = u->cached_tokens,
					      .cache_write = u->cache_write_tokens,
					      .output = u->output_tokens};
		class_parts(p, 0, &all, a);
	}
	a->in *= scale;
	a->written *= scale;
	a->cached *= scale;
	a->out *= scale;
	return a->in + a->written + a->cached + a->out;
}

/* A usage split by class must be split by p's classes. */
static int check_split(const struct cost_api *p, const struct cost_usage *u, struct diag *d)
{
	if (!u->api_split)
		return (p->n_tiers || p->off_peak) && u->calls > 0
		       ? diag_set(d, DIAG_EINTERNAL, "cost: %s has long-prompt or off-peak prices "
				  "but the usage is not split by them", p->label)
		       : 0;
	if (strcmp(u->api_split_label, p->label) != 0)
		return diag_set(d, DIAG_EINTERNAL, "cost: usage split by %s priced at %s",
				u->api_split_label, p->label);
	return 0;
}

/* The tokens each tier or the off-peak hours took, as assumptions. */
static void assume_classes(const struct cost_api *p, const struct cost_usage *u, double scale,
			   struct cost_result *r)
{
	if (!u->api_split)
		return;
	for (int32_t t = 0; t < p->n_tiers; t++) {
		const struct cost_api_tokens *x = &u->api_class[t + 1];
		char name[COST_NAME_MAX];
		snprintf(name, sizeof(name), "tokens_prompt_over_%lld", (long long)p->tier_over[t]);
		assume(r, name, (double)(x->prompt + x->output) * scale, "M tokens per month",
		       "replay: calls whose prompt is above this many tokens, every token billed at "
		       "the tier's prices (prices.json tiers of the same rows)");
	}
	if (p->off_peak) {
		const struct cost_api_tokens *x = &u->api_class[COST_API_OFF_PEAK];
		int64_t all = 0;
		for (int k = 0; k < COST_API_CLASSES; k++)
			all += u->api_class[k].calls;
		assume(r, "off_peak_call_share", all ? (double)x->calls / (double)all : 0.0,
		       "fraction", u->api_clock_assumed
		       ? "replay: calls that start outside the peak hours (prices.json off_peak); "
			 "the trace's t = 0 read as 00:00 UTC of a Monday (not dates: set "
			 "cost.trace_start_utc)"
		       : "replay: calls that start outside the peak hours (prices.json off_peak), "
			 "on the clock cost.trace_start_utc gives the trace");
	}
}

int cost_api_eval(const struct cost_api *p, const struct cost_usage *u,
		  const struct cost_task *t, struct cost_result *r, struct diag *d)
{
	result_init(r, COST_API, p->label);
	int rc;
	if ((rc = check_api(p, d)))
		return rc;
	struct common c;
	if ((rc = common_begin(u, t, r, &c, d)))
		return rc;
	if ((rc = check_split(p, u, d)))
		return rc;
	struct api_parts a;
	api_month(p, u, &c, &a);
	part(r, "input", a.in);
	part(r, "cached_input", a.cached);
	if (u->cache_write_tokens > 0)
		part(r, "cache_write", a.written);
	part(r, "output", a.out);
	double scale = c.periods / 1e6;
	int64_t uncached = u->prompt_tokens - u->cached_tokens;
	int64_t written = u->cache_write_tokens < uncached ? u->cache_write_tokens : uncached;
	assume(r, "input_tokens", (double)(uncached - written) * scale, "M tokens per month",
	       "replay: prompt tokens neither read from nor written to the prefix cache");
	assume(r, "cached_tokens", (double)u->cached_tokens * scale, "M tokens per month",
	       "replay: prefix-cache hits, priced as cache reads");
	if (u->cache_write_tokens > 0) {
		assume(r, "cache_write_tokens", (double)written * scale, "M tokens per month",
		       "replay: prompt tokens written to the API's prompt cache");
		assume_fig(r, "cache_write_price", &p->cache_write_usd_mtok, "USD per 1M tokens");
	}
	assume(r, "output_tokens", (double)u->output_tokens * scale, "M tokens per month",
	       "replay");
	assume_fig(r, "input_price", &p->input_usd_mtok, "USD per 1M tokens");
	assume_fig(r, "cached_price", &p->cached_usd_mtok, "USD per 1M tokens");
	assume_fig(r, "output_price", &p->output_usd_mtok, "USD per 1M tokens");
	assume_classes(p, u, scale, r);
	common_end(u, r);
	return 0;
}

int cost_seats_eval(const struct cost_seats *p, const struct cost_usage *u,
		    const struct cost_task *t, struct cost_result *r, struct diag *d)
{
	result_init(r, COST_SEATS, p->label);
	int rc;
	if ((rc = check_fig(&p->usd_per_seat_month, "seats.usd_per_seat_month", 0, 1e6, d)) ||
	    (rc = check_fig(&p->min_seats, "seats.min_seats", 0, 1e6, d)) ||
	    (rc = check_fig(&p->included_usage_usd, "seats.included_usage_usd", -1, 1e6, d)) ||
	    (rc = check_fig(&p->overage_at_api_list, "seats.overage_at_api_list", 0, 1, d)) ||
	    (rc = check_api(&p->list, d)))
		return rc;
	if (u->engineers < 1)
		return diag_set(d, DIAG_EINPUT, "cost: seats need the number of engineers (expected "
				"at least 1)");
	struct common c;
	if ((rc = common_begin(u, t, r, &c, d)))
		return rc;
	double seats = (double)u->engineers;
	if (seats < p->min_seats.value)
		seats = p->min_seats.value;
	part(r, "seats", seats * p->usd_per_seat_month.value);
	if ((rc = check_split(&p->list, u, d)))
		return rc;
	struct api_parts a;
	double usage = api_month(&p->list, u, &c, &a);
	double included = p->included_usage_usd.value * seats;
	char src[COST_SOURCE_MAX];
	snprintf(src, sizeof(src), "%lld engineers, plan minimum %g", (long long)u->engineers,
		 p->min_seats.value);
	assume(r, "seats", seats, "seats", src);
	assume_fig(r, "seat_price", &p->usd_per_seat_month, "USD per seat-month");
	snprintf(src, sizeof(src), "the team's tokens at %s list prices", p->list.label);
	assume(r, "usage_at_list", usage, "USD per month", src);
	if (p->included_usage_usd.value < 0) {
		assume(r, "included_usage", -1, "USD per seat-month",
		       "the plan states no usage allowance: usage limits not modelled");
	} else {
		assume_fig(r, "included_usage", &p->included_usage_usd, "USD per seat-month");
		if (p->overage_at_api_list.value > 0) {
			double over = usage > included ? usage - included : 0;
			part(r, "overage", over);
			assume(r, "overage", over, "USD per month",
			       "usage beyond the included, pooled over seats, at list prices");
		} else {
			/* past the allowance the plan throttles; the team still has
			 * the work to do, and buys it at list price */
			double over = usage > included ? usage - included : 0;
			part(r, "overflow_at_list", over);
			assume(r, "usage_over_included", included > 0 ? usage / included : 0,
			       "x included", "the plan states no overage price: usage past the "
			       "allowance is throttled, and priced here at API list prices (the "
			       "team buys the rest of its work there)");
			assume(r, "overflow", over, "USD per month",
			       "usage beyond the included, pooled over seats, at list prices");
		}
	}
	common_end(u, r);
	return 0;
}

/* ---- parameters from the catalogues ------------------------------------- */

static void fig_row(struct cost_fig *f, double value, const struct price_row *row,
		    const char *extra)
{
	bool none = strcmp(row->currency, "none") == 0;
	cost_fig_set(f, value, "prices.json %s%s: %s, %s, %s%s%g %s%s, %s (%s)", row->id, extra,
		     row->item, row->provider, none ? "" : row->currency, none ? "" : " ",
		     row->amount, row->unit,
		     !none && strcmp(row->currency, "USD") ? " converted" : "", row->date,
		     row->source);
	cost_date_of(row->date, f->date);
}

static const struct price_row *named_row(const struct prices *pr, enum price_kind kind,
					 const char *id, struct cost_fig *f, const char *extra,
					 struct diag *d)
{
	const struct price_row *row = prices_find(pr, kind, id);
	if (!row) {
		diag_set(d, DIAG_EINPUT, "cost: the price file has no %s row '%s' (expected "
			 "the default row docs/cost.md names)", price_kind_name(kind), id);
		return NULL;
	}
	fig_row(f, row->usd, row, extra);
	return row;
}

static int default_row(const struct prices *pr, enum price_kind kind, const char *id,
		       struct cost_fig *f, struct diag *d)
{
	return named_row(pr, kind, id, f, " (default)", d) ? 0 : DIAG_EINPUT;
}

int cost_watts(const struct cat_hardware *hw, struct cost_fig *busy_w, struct cost_fig *idle_w,
	       struct diag *d)
{
	const struct cat_hardware *dev = hw->device ? hw->device : hw;
	if (dev->inference_w_max > 0)
		cost_fig_set(busy_w, dev->inference_w_max, "hardware.json %s: measured while "
			     "serving an LLM (upper end)", dev->id);
	else if (dev->tdp_w > 0)
		cost_fig_set(busy_w, dev->tdp_w, "hardware.json %s: TDP (no measured serving power; "
			     "an upper bound)", dev->id);
	else
		return diag_set(d, DIAG_EINPUT, "cost: hardware %s has no measured power and no TDP "
				"(expected tdp_w or inference_w in hardware.json)", dev->id);
	if (dev->idle_w > 0)
		cost_fig_set(idle_w, dev->idle_w, "hardware.json %s: measured idle", dev->id);
	else if (dev->tdp_w > 0)
		cost_fig_set(idle_w, dev->tdp_w * COST_IDLE_TDP_FRACTION, "%.3g x TDP %g W (no "
			     "measured idle; H200 SXM 80.3 W idle of 700 W, docs/cost.md)",
			     COST_IDLE_TDP_FRACTION, dev->tdp_w);
	else
		cost_fig_set(idle_w, busy_w->value * COST_IDLE_TDP_FRACTION, "%.3g x busy power "
			     "(no measured idle, no TDP; docs/cost.md)", COST_IDLE_TDP_FRACTION);
	return 0;
}

int cost_operator_from_prices(struct cost_operator *o, const struct prices *pr,
			      enum cost_operator_end end, struct diag *d)
{
	memset(o, 0, sizeof(*o));
	cost_fig_set(&o->usd_month, -1, "the model: base + per-system share x systems "
		     "(docs/cost.md)");
	const char *base = end == COST_OPERATOR_HIGH ? COST_OPERATOR_BASE_HIGH
						     : COST_DEFAULT_OPERATOR;
	const char *sys = end == COST_OPERATOR_LOW    ? COST_OPERATOR_SYSTEM_LOW
			  : end == COST_OPERATOR_HIGH ? COST_OPERATOR_SYSTEM_HIGH
						      : COST_DEFAULT_OPERATOR_SYSTEM;
	const char *extra = end == COST_OPERATOR_LOW    ? " (low end of the range)"
			    : end == COST_OPERATOR_HIGH ? " (high end of the range)"
							: " (default)";
	if (!named_row(pr, PRICE_OPERATOR_MONTH, base, &o->base_usd_month, extra, d))
		return DIAG_EINPUT;
	const struct price_row *row = named_row(pr, PRICE_OPERATOR_SYSTEM_MONTH, sys,
						&o->system_usd_month, extra, d);
	if (!row)
		return DIAG_EINPUT;
	cost_fig_set(&o->system_gpus, (double)row->gpus, "prices.json %s: gpus", row->id);
	return 0;
}

static int operator_default(const struct prices *pr, struct cost_operator *o, struct diag *d)
{
	return cost_operator_from_prices(o, pr, COST_OPERATOR_DEFAULT, d);
}

/* What a purchase of that scope leaves out (p->not_priced); host: a bare
 * GPU's host is in the price. */
static void not_priced(struct cost_purchase *p, enum price_scope scope, bool host)
{
	static const char how[] = "no sourced default: add them to the price (--prices) or per "
				  "system-month with cost.hosting_usd_month; docs/cost.md";
	switch (scope) {
	case PRICE_SCOPE_COMPLETE:
		snprintf(p->not_priced, sizeof(p->not_priced), "not priced: a maintenance contract "
			 "(a complete box runs as bought, with no network or installation; %s)", how);
		break;
	case PRICE_SCOPE_SERVER:
		snprintf(p->not_priced, sizeof(p->not_priced), "not priced: network, installation "
			 "and a maintenance contract (%s)", how);
		break;
	case PRICE_SCOPE_GPUS:
		snprintf(p->not_priced, sizeof(p->not_priced), "not priced: %snetwork, "
			 "installation and a maintenance contract (%s)",
			 host ? "" : "the host (chassis, CPUs, memory: GPUs only), ", how);
		break;
	default:
		snprintf(p->not_priced, sizeof(p->not_priced), "not priced, perhaps: the price "
			 "does not say what it includes (no scope): the host, network, installation "
			 "and a maintenance contract may be missing (%s)", how);
		break;
	}
}

/* The host share of GPU row row into p (0 when it names no host);
 * returns whether it names one. */
static bool host_share(struct cost_purchase *p, const struct prices *pr,
		       const struct price_row *row)
{
	double share;
	const struct price_row *g;
	const struct price_row *h = prices_host_of(pr, row, &share, &g);
	if (!h) {
		cost_fig_set(&p->host_share_usd, 0, "prices.json %s: no host named", row->id);
		return false;
	}
	cost_fig_set(&p->host_share_usd, share, "prices.json %s, host of %s: (USD %.10g - %lld x "
		     "%s USD %.10g) / %lld GPUs: %s, %s (%s)", h->id, row->id, h->usd,
		     (long long)h->gpus, g->id, g->usd, (long long)h->gpus, h->item, h->date,
		     h->source);
	cost_date_of(h->date, p->host_share_usd.date);
	return true;
}

int cost_purchase_from_prices(struct cost_purchase *p, const struct prices *pr,
			      const struct cat_hardware *hw, struct diag *d)
{
	memset(p, 0, sizeof(*p));
	const struct cat_hardware *dev = hw->device ? hw->device : hw;
	const struct price_row *row = prices_median_for_hardware(pr, PRICE_PURCHASE, hw->id);
	double count = (double)(hw->device_count > 0 ? hw->device_count : 1);
	if (row) {
		bool host = host_share(p, pr, row);
		fig_row(&p->system_usd, row->usd + p->host_share_usd.value, row,
			host ? " + its host's share per GPU (host_share)" : "");
		cost_fig_set(&p->gpus_per_system, (double)row->gpus, "prices.json %s: gpus",
			     row->id);
		not_priced(p, row->scope, host);
	} else if (hw->price.currency != CAT_CUR_NONE &&
		   prices_usd(pr, cat_currency_name(hw->price.currency), hw->price.amount) > 0) {
		const char *cur = cat_currency_name(hw->price.currency);
		cost_fig_set(&p->system_usd, prices_usd(pr, cur, hw->price.amount),
			     "hardware.json %s: price %s %g%s (%s, %s)", hw->id, cur, hw->price.amount,
			     strcmp(cur, "USD") ? " converted" : "", hw->price.date,
			     hw->price.source);
		cost_date_of(hw->price.date, p->system_usd.date);
		cost_fig_set(&p->gpus_per_system, count, "hardware.json %s: %g GPUs", hw->id, count);
		cost_fig_set(&p->host_share_usd, 0, "hardware.json %s: the entry's own price",
			     hw->id);
		/* a system entry is a box as sold (a server without its network);
		 * a bare device with a price runs as bought only when its memory
		 * is the machine's (Apple, GB10, Ryzen AI Max) */
		enum price_scope scope = hw->system_kind ? (strcmp(hw->system_kind, "server") == 0
								    ? PRICE_SCOPE_SERVER
								    : PRICE_SCOPE_COMPLETE)
				       : hw->unified_memory ? PRICE_SCOPE_COMPLETE
							    : PRICE_SCOPE_GPUS;
		not_priced(p, scope, false);
	} else if (dev != hw && (row = prices_median_for_hardware(pr, PRICE_PURCHASE, dev->id))) {
		bool host = host_share(p, pr, row);
		fig_row(&p->system_usd, (row->usd + p->host_share_usd.value) * count, row,
			host ? " x GPUs, each with its host's share (host_share)"
			     : " x GPUs (GPUs only: chassis, CPUs and network not priced)");
		cost_fig_set(&p->gpus_per_system, count * (double)row->gpus,
			     "hardware.json %s: %g x %s", hw->id, count, dev->id);
		not_priced(p, row->scope, host);
	} else {
		return COST_NO_PRICE;
	}
	snprintf(p->label, sizeof(p->label), "purchase %s", hw->id);
	cost_fig_set(&p->amortisation_months, COST_DEFAULT_AMORTISATION_MONTHS,
		     "default: three years, docs/cost.md");
	cost_fig_set(&p->resale_fraction, 0, "default: no resale counted, docs/cost.md");
	cost_fig_set(&p->hosting_usd_month, 0, "default: not priced (own premises), docs/cost.md");
	struct diag wd;
	diag_init(&wd);
	if (cost_watts(hw, &p->busy_w, &p->idle_w, &wd) != 0) {
		snprintf(p->why_none, sizeof(p->why_none), "%.*s", (int)sizeof(p->why_none) - 1,
			 wd.msg);
		return COST_NO_PRICE;
	}
	int rc;
	if ((rc = default_row(pr, PRICE_PUE, COST_DEFAULT_PUE, &p->pue, d)) ||
	    (rc = default_row(pr, PRICE_ELECTRICITY, COST_DEFAULT_ELECTRICITY,
			      &p->electricity_usd_kwh, d)) ||
	    (rc = operator_default(pr, &p->op, d)))
		return rc;
	return 0;
}

int cost_dedicated_from_prices(struct cost_dedicated *p, const struct prices *pr,
			       const struct cat_hardware *hw, struct diag *d)
{
	memset(p, 0, sizeof(*p));
	const struct price_row *row = prices_median_for_hardware(pr, PRICE_DEDICATED_MONTH, hw->id);
	if (!row)
		return COST_NO_PRICE;
	snprintf(p->label, sizeof(p->label), "dedicated %s", row->id);
	fig_row(&p->server_usd_month, row->usd, row, "");
	cost_fig_set(&p->gpus_per_server, (double)row->gpus, "prices.json %s: gpus", row->id);
	return operator_default(pr, &p->op, d);
}

int cost_gpu_hour_row_check(const struct prices *pr, const struct cat_hardware *hw,
			    const char *row_id, struct diag *d)
{
	if (!row_id || !row_id[0])
		return 0;
	const struct cat_hardware *dev = hw->device ? hw->device : hw;
	const struct price_row *row = prices_find(pr, PRICE_GPU_HOUR, row_id);
	if (!row)
		return diag_set(d, DIAG_EINPUT, "cost.gpu_hour_row '%s': the price file has no "
				"gpu_hour row of that id (expected the id of a gpu_hour row: agentcap "
				"catalog --prices)", row_id);
	if (!row->hardware ||
	    (strcmp(row->hardware, hw->id) != 0 && strcmp(row->hardware, dev->id) != 0))
		return diag_set(d, DIAG_EINPUT, "cost.gpu_hour_row '%s' prices %s, not the "
				"deployment's %s (expected a gpu_hour row of %s%s%s)", row_id,
				row->hardware ? row->hardware : "no hardware id", hw->id, hw->id,
				dev != hw ? " or its GPU " : "", dev != hw ? dev->id : "");
	return 0;
}

int cost_elastic_from_prices(struct cost_elastic *p, const struct prices *pr,
			     const struct cat_hardware *hw, const char *row_id, struct diag *d)
{
	memset(p, 0, sizeof(*p));
	const struct cat_hardware *dev = hw->device ? hw->device : hw;
	int rc = cost_gpu_hour_row_check(pr, hw, row_id, d);
	if (rc)
		return rc;
	/* on-demand rows only: a spot floor can be taken away, a reservation
	 * or a capacity block is paid whether the autoscaler uses it or not */
	size_t n = 0;
	const struct price_row *row = NULL;
	if (row_id && row_id[0]) {
		row = prices_find(pr, PRICE_GPU_HOUR, row_id);
		char extra[96];
		snprintf(extra, sizeof(extra), " (chosen by cost.gpu_hour_row; tariff %s)",
			 price_tariff_name(row->tariff));
		snprintf(p->label, sizeof(p->label), "elastic %s", row->id);
		fig_row(&p->usd_per_gpu_hour, row->usd, row, extra);
	} else if ((row = prices_median_gpu_hour(pr, hw->id, PRICE_ON_DEMAND, &n)) ||
		   (dev != hw && (row = prices_median_gpu_hour(pr, dev->id, PRICE_ON_DEMAND, &n)))) {
		char extra[64];
		snprintf(extra, sizeof(extra), " (median of the %zu on-demand rows of %s)", n,
			 row->hardware);
		snprintf(p->label, sizeof(p->label), "elastic %s", row->id);
		fig_row(&p->usd_per_gpu_hour, row->usd, row, extra);
	} else if (prices_for_hardware(pr, PRICE_DEDICATED_MONTH, hw->id, NULL, 0) > 0) {
		/* a server rented by the month only: an hourly figure for it can
		 * only be its monthly rent / 730, which no one bills by the hour */
		return COST_NO_PRICE;
	} else if (hw->rent_hour.currency != CAT_CUR_NONE &&
		   prices_usd(pr, cat_currency_name(hw->rent_hour.currency), hw->rent_hour.amount) >
			   0) {
		const char *cur = cat_currency_name(hw->rent_hour.currency);
		snprintf(p->label, sizeof(p->label), "elastic %s", hw->id);
		cost_fig_set(&p->usd_per_gpu_hour, prices_usd(pr, cur, hw->rent_hour.amount),
			     "hardware.json %s: rent_per_hour %s %g%s (%s, %s)", hw->id, cur,
			     hw->rent_hour.amount, strcmp(cur, "USD") ? " converted" : "",
			     hw->rent_hour.date, hw->rent_hour.source);
		cost_date_of(hw->rent_hour.date, p->usd_per_gpu_hour.date);
	} else {
		return COST_NO_PRICE;
	}
	cost_fig_set(&p->billing_granularity_s, 1, "default: per-second billing (Amazon EC2, "
		     "docs/cost.md)");
	cost_fig_set(&p->min_billing_s, COST_DEFAULT_MIN_BILLING_S, "default: Amazon EC2 bills "
		     "per second with a minimum of 60 s (AWS, 2017-10-02, docs/cost.md)");
	cost_fig_set(&p->min_replicas, 0, "default: scale to zero outside the traced periods, "
		     "docs/cost.md");
	return operator_default(pr, &p->op, d);
}

int cost_api_from_prices(struct cost_api *p, const struct prices *pr, const char *id,
			 struct diag *d)
{
	memset(p, 0, sizeof(*p));
	const struct price_row *in = prices_find(pr, PRICE_API_INPUT, id);
	const struct price_row *out = prices_find(pr, PRICE_API_OUTPUT, id);
	const struct price_row *cached = prices_find(pr, PRICE_API_CACHED_INPUT, id);
	if (!in || !out)
		return diag_set(d, DIAG_EINPUT, "cost: no API prices for '%s' (expected an id of an "
				"api_input row: agentcap catalog --prices)", id);
	snprintf(p->label, sizeof(p->label), "api %s", in->id);
	fig_row(&p->input_usd_mtok, in->usd, in, "");
	fig_row(&p->output_usd_mtok, out->usd, out, "");
	if (cached)
		fig_row(&p->cached_usd_mtok, cached->usd, cached, "");
	else
		fig_row(&p->cached_usd_mtok, in->usd, in, " (no cached price published: cache "
			"reads priced as input)");
	cost_api_cache_ttl(p, pr, id, 300);
	return 0;
}

/* Row r's price in class k (1..n_tiers: its tier k - 1; COST_API_OFF_PEAK:
 * its off-peak rate), or in's where r is NULL. */
static double row_class_usd(const struct price_row *r, const struct price_row *in, int k)
{
	if (!r)
		r = in;
	if (k == COST_API_OFF_PEAK)
		return r->off_peak ? r->off_peak_usd : r->usd;
	return k <= r->tier_count ? r->tier_usd[k - 1] : r->usd;
}

void cost_api_cache_ttl(struct cost_api *p, const struct prices *pr, const char *id,
			double cache_ttl_s)
{
	bool hour = cache_ttl_s > 300;
	const struct price_row *w = prices_find(pr, hour ? PRICE_API_CACHE_WRITE_1H
							  : PRICE_API_CACHE_WRITE_5M, id);
	const struct price_row *in = prices_find(pr, PRICE_API_INPUT, id);
	if (w)
		fig_row(&p->cache_write_usd_mtok, w->usd, w, "");
	else if (in)
		fig_row(&p->cache_write_usd_mtok, in->usd, in, hour
			? " (no 1-hour cache-write price published: writes priced as input)"
			: " (no cache-write price published: writes priced as input)");
	if (!in)
		return;
	/* the other classes, from the same rows (prices.c checks that every row
	 * of the model splits calls alike) */
	const struct price_row *cached = prices_find(pr, PRICE_API_CACHED_INPUT, id);
	const struct price_row *out = prices_find(pr, PRICE_API_OUTPUT, id);
	p->n_tiers = in->tier_count;
	for (int32_t t = 0; t < in->tier_count; t++)
		p->tier_over[t] = in->tier_over[t];
	p->off_peak = in->off_peak;
	p->peak_days = in->peak_days;
	p->peak_hours = in->peak_hours;
	memset(p->class_usd_mtok, 0, sizeof(p->class_usd_mtok));
	for (int k = 1; k < COST_API_CLASSES; k++) {
		if (k != COST_API_OFF_PEAK ? k > p->n_tiers : !p->off_peak)
			continue;
		p->class_usd_mtok[k][COST_API_IN] = row_class_usd(in, in, k);
		p->class_usd_mtok[k][COST_API_CACHED] = row_class_usd(cached, in, k);
		p->class_usd_mtok[k][COST_API_WRITE] = row_class_usd(w, in, k);
		p->class_usd_mtok[k][COST_API_OUT] = row_class_usd(out, in, k);
	}
}

int cost_seats_from_prices(struct cost_seats *p, const struct prices *pr, const char *seat_id,
			   const char *api_id, struct diag *d)
{
	memset(p, 0, sizeof(*p));
	const struct price_row *row = prices_find(pr, PRICE_SEAT, seat_id);
	if (!row)
		return diag_set(d, DIAG_EINPUT, "cost: no seat plan '%s' (expected an id of a seat "
				"row: agentcap catalog --prices)", seat_id);
	int rc = cost_api_from_prices(&p->list, pr, api_id, d);
	if (rc)
		return rc;
	snprintf(p->label, sizeof(p->label), "seats %s", row->id);
	fig_row(&p->usd_per_seat_month, row->usd, row, "");
	cost_fig_set(&p->min_seats, (double)row->min_seats, "prices.json %s: %s", row->id,
		     row->min_seats ? "plan minimum" : "no minimum stated");
	cost_fig_set(&p->included_usage_usd, row->included_usage_usd, "prices.json %s: %s",
		     row->id, row->included_usage_usd >= 0 ? "usage included per seat"
							   : "no allowance stated");
	cost_fig_set(&p->overage_at_api_list, row->overage_at_api_list ? 1 : 0,
		     "prices.json %s: %s", row->id, row->overage_at_api_list
		     ? "usage beyond the allowance billed at API list prices"
		     : "no overage price stated");
	return 0;
}

/* ---- projections from one price ----------------------------------------- */

int cost_rent_year(const struct price_row *row, double hours_per_day, double *amount,
		   double *usd, struct diag *d)
{
	if (!isfinite(hours_per_day) || !(hours_per_day > 0) || hours_per_day > 24)
		return diag_set(d, DIAG_EINPUT, "cost: %g hours a day (expected more than 0 and at "
				"most 24)", hours_per_day);
	double rate = row->usd / row->amount;
	if (row->kind == PRICE_GPU_HOUR)
		*amount = row->amount * hours_per_day * COST_DAYS_PER_YEAR;
	else if (row->kind == PRICE_DEDICATED_MONTH)
		*amount = row->amount * 12.0; /* a flat rent: the hours change nothing */
	else
		return diag_set(d, DIAG_EINPUT, "cost: %s row '%s' is no rent (expected a gpu_hour "
				"or dedicated_month row)", price_kind_name(row->kind), row->id);
	*usd = *amount * rate;
	return 0;
}

int cost_per_mtok_at(double usd_month, double tok_s, double u, double *tokens_month,
		     double *usd_per_mtok, struct diag *d)
{
	if (!isfinite(usd_month) || usd_month < 0)
		return diag_set(d, DIAG_EINPUT, "cost: %g USD a month (expected a cost >= 0)",
				usd_month);
	if (!isfinite(tok_s) || !(tok_s > 0))
		return diag_set(d, DIAG_EINPUT, "cost: %g output tokens per second (expected a "
				"throughput > 0)", tok_s);
	if (!isfinite(u) || !(u > 0) || u > 1)
		return diag_set(d, DIAG_EINPUT, "cost: utilisation %g (expected a share in (0, 1])",
				u);
	*tokens_month = tok_s * 3600.0 * COST_HOURS_PER_MONTH * u;
	*usd_per_mtok = usd_month / (*tokens_month / 1e6);
	return 0;
}
