/* SPDX-License-Identifier: Apache-2.0
 * compare: the sized deployments priced beside seats and an API (see
 * compare.h). */
#include "plan/compare.h"

#include "models/apilat.h"

#include "base/diag.h"
#include "base/jsonw.h"
#include "models/cashflow.h"
#include "models/catalog.h"
#include "models/prices.h"
#include "models/quality.h"
#include "replay/slo.h"
#include "reports/output.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* Replays of the replayed span a month: the scenario's cost.periods_per_month
 * where it sets one (0: continuous traffic), else one working day a month
 * per day replayed (the scenario's calendar, cost.workdays_per_year), as
 * replay --cost counts them. */
static double periods_of_days(const struct compare_setup *c, int64_t fig_days)
{
	const struct scenario *sc = c->size ? c->size->base : NULL;
	if (sc && sc->cost.periods_per_month >= 0)
		return sc->cost.periods_per_month;
	double days = fig_days > 0 ? (double)fig_days : (double)(c->days > 0 ? c->days : 1);
	return scenario_workdays_per_year(sc, NULL, 0) / 12.0 / days;
}

static double periods_of(const struct compare_setup *c, const struct size_eval *e)
{
	return periods_of_days(c, e->fig[0].days);
}

/* The usage of a winner's first replicate (reports/costing.h filled it as
 * for replay --cost), over the month, with its traffic scaled by util on
 * the same GPUs: busy time (up to the whole span), tokens, calls and tasks
 * move with it; the GPUs kept up do not. */
static void usage_from(const struct compare_setup *c, const struct cost_usage *base,
		       int64_t days, double util, struct cost_usage *u)
{
	*u = *base;
	if (!(u->duration_s > 0)) { /* one call or none: nothing to spread over */
		u->duration_s = 1;
		u->idle_s_per_gpu = 1 - u->busy_s_per_gpu;
	}
	u->periods_per_month = periods_of_days(c, days);
	u->engineers = c->engineers;
	if (util == 1.0)
		return;
	double busy_s = u->busy_s_per_gpu * util;
	if (busy_s > u->duration_s)
		busy_s = u->duration_s;
	u->busy_s_per_gpu = busy_s;
	u->idle_s_per_gpu = u->duration_s - busy_s;
	u->gpu_hours_busy = (double)u->replicas * (double)u->gpus_per_replica * busy_s / 3600.0;
	u->prompt_tokens = llround((double)u->prompt_tokens * util);
	u->cached_tokens = llround((double)u->cached_tokens * util);
	if (u->cached_tokens > u->prompt_tokens)
		u->cached_tokens = u->prompt_tokens;
	u->cache_write_tokens = llround((double)u->cache_write_tokens * util);
	if (u->cache_write_tokens > u->prompt_tokens - u->cached_tokens)
		u->cache_write_tokens = u->prompt_tokens - u->cached_tokens;
	u->output_tokens = llround((double)u->output_tokens * util);
	u->calls = llround((double)u->calls * util);
	cost_api_tokens_scale(u->api_class, util);
	u->tasks = llround((double)u->tasks * util);
	u->tasks_accept_known = llround((double)u->tasks_accept_known * util);
	u->tasks_accepted = llround((double)u->tasks_accepted * util);
	if (u->tasks_accepted > u->tasks_accept_known)
		u->tasks_accepted = u->tasks_accept_known;
}

/* A winner's usage (replicate 0), scaled by util. */
static void usage_of(const struct compare_setup *c, const struct size_eval *e, double util,
		     struct cost_usage *u)
{
	usage_from(c, &e->fig[0].usage, e->fig[0].days, util, u);
}

/* One column of the sensitivity table (all 1, share 0: the row itself). */
struct sens_case {
	double price;     /* x the hardware or rental price */
	double acc;       /* x the self-hosted acceptance */
	double util;      /* x the traffic on the same GPUs */
	double acc_share; /* > 0: the self-hosted acceptance = this x the traced model's */
	enum cost_operator_end op; /* not the default: operator time at that end
				      of its sourced ranges */
};

static const struct sens_case BASE_CASE = {1, 1, 1, 0, COST_OPERATOR_DEFAULT};

#define OP_DEF COST_OPERATOR_DEFAULT
static const struct sens_case SENS[COMPARE_SENS] = {
	{1 - COMPARE_SWING, 1, 1, 0, OP_DEF}, {1 + COMPARE_SWING, 1, 1, 0, OP_DEF},
	{1, 1 - COMPARE_SWING, 1, 0, OP_DEF}, {1, 1 + COMPARE_SWING, 1, 0, OP_DEF},
	{1, 1, 1, COMPARE_ACC_LOW, OP_DEF},   {1, 1, 1, 1.0, OP_DEF},
	{1, 1, 1 - COMPARE_SWING, 0, OP_DEF}, {1, 1, 1 + COMPARE_SWING, 0, OP_DEF},
	{1, 1, 1, 0, COST_OPERATOR_LOW},      {1, 1, 1, 0, COST_OPERATOR_HIGH},
};
#undef OP_DEF

/* The self-hosted task figures of one sensitivity column: the acceptance
 * scaled by k->acc, or set to a share of the traced model's. */
static void task_of(const struct compare_setup *c, const struct cost_usage *u,
		    const struct sens_case *k, struct cost_task *t)
{
	*t = c->task;
	if (k->acc_share > 0) {
		cost_fig_set(&t->acceptance_rate, -1, "sensitivity: the trace's own");
		cost_fig_set(&t->quality_factor, k->acc_share, "sensitivity: %.0f%% of the traced "
			     "model's acceptance", 100 * k->acc_share);
		return;
	}
	double acc = k->acc;
	if (acc == 1.0)
		return;
	double a = t->acceptance_rate.value;
	if (a < 0)
		a = (u->tasks_accept_known > 0 ? (double)u->tasks_accepted /
							 (double)u->tasks_accept_known
					       : 1.0) *
		    t->quality_factor.value;
	a *= acc;
	if (a > 1)
		a = 1;
	cost_fig_set(&t->acceptance_rate, a, "%s x %.2f (sensitivity)", t->acceptance_rate.source,
		     acc);
}

/* Price one row; COST_NO_PRICE when the catalogue has no price for it (or,
 * bought, when the hardware has no power figure: d->msg then says so, its
 * code left unset, for the list of what is not priced). */
static int price_row(const struct compare_setup *c, const struct compare_row *row,
		     const struct size_eval *e, const struct sens_case *k, struct cost_result *out,
		     struct diag *d)
{
	double price_f = k->price, util_f = k->util;
	struct cost_usage u;
	/* seats and the API bill the team's work as the API served it (the
	 * baseline replay), never the local replay's compacted prompts */
	bool base = row->option == COST_SEATS || row->option == COST_API;
	if (base && c->baseline)
		usage_from(c, &c->baseline->usage, c->baseline->days, util_f, &u);
	else
		usage_of(c, e, util_f, &u);
	struct cost_task t;
	const struct cat_hardware *hw = row->hardware[0] ? catalog_hardware(c->cat, row->hardware)
							 : NULL;
	/* the scenario's cost.* keys over the catalogues' figures, as for
	 * replay --cost (the task figures are c->task's) */
	const struct scenario *sc = c->size ? c->size->base : NULL;
	int rc;
	switch (row->option) {
	case COST_PURCHASE: {
		struct cost_purchase p;
		task_of(c, &u, k, &t);
		rc = cost_purchase_from_prices(&p, c->prices, hw, d);
		if (rc == COST_NO_PRICE && p.why_none[0] && d->code == DIAG_OK)
			snprintf(d->msg, sizeof(d->msg), "%s", p.why_none);
		if (rc != 0)
			return rc;
		if (sc)
			scenario_cost_apply(sc, &p, NULL, NULL, NULL);
		p.system_usd.value *= price_f;
		if (k->op != COST_OPERATOR_DEFAULT &&
		    (rc = cost_operator_from_prices(&p.op, c->prices, k->op, d)))
			return rc;
		return cost_purchase_eval(&p, &u, &t, out, d);
	}
	case COST_DEDICATED: {
		struct cost_dedicated p;
		task_of(c, &u, k, &t);
		rc = cost_dedicated_from_prices(&p, c->prices, hw, d);
		if (rc != 0)
			return rc;
		if (sc)
			scenario_cost_apply(sc, NULL, &p, NULL, NULL);
		p.server_usd_month.value *= price_f;
		if (k->op != COST_OPERATOR_DEFAULT &&
		    (rc = cost_operator_from_prices(&p.op, c->prices, k->op, d)))
			return rc;
		return cost_dedicated_eval(&p, &u, &t, out, d);
	}
	case COST_ELASTIC: {
		struct cost_elastic p;
		task_of(c, &u, k, &t);
		rc = cost_elastic_from_prices(&p, c->prices, hw, sc ? sc->cost.gpu_hour_row : NULL, d);
		if (rc != 0)
			return rc;
		if (sc)
			scenario_cost_apply(sc, NULL, NULL, &p, NULL);
		p.usd_per_gpu_hour.value *= price_f;
		if (k->op != COST_OPERATOR_DEFAULT &&
		    (rc = cost_operator_from_prices(&p.op, c->prices, k->op, d)))
			return rc;
		return cost_elastic_eval(&p, &u, &t, out, d);
	}
	case COST_SEATS: {
		struct cost_seats p;
		t = c->base_task;
		rc = cost_seats_from_prices(&p, c->prices, c->seat_id, c->api_id, d);
		if (rc == 0 && c->baseline)
			cost_api_cache_ttl(&p.list, c->prices, c->api_id, c->baseline->cache_ttl_s);
		p.usd_per_seat_month.value *= price_f;
		return rc != 0 ? rc : cost_seats_eval(&p, &u, &t, out, d);
	}
	case COST_API: {
		struct cost_api p;
		t = c->base_task;
		rc = cost_api_from_prices(&p, c->prices, c->api_id, d);
		if (rc == 0 && c->baseline)
			cost_api_cache_ttl(&p, c->prices, c->api_id, c->baseline->cache_ttl_s);
		cost_api_scale(&p, price_f);
		return rc != 0 ? rc : cost_api_eval(&p, &u, &t, out, d);
	}
	default:
		return diag_set(d, DIAG_EINTERNAL, "compare: option %d", (int)row->option);
	}
}

static int fill_row(const struct compare_setup *c, struct compare_row *row,
		    const struct size_eval *e, struct diag *d)
{
	int rc = price_row(c, row, e, &BASE_CASE, &row->r, d);
	if (rc != 0)
		return rc;
	row->busy = e->fig[0].busy;
	for (int k = 0; k < COMPARE_SENS; k++) {
		struct cost_result *tmp = malloc(sizeof(*tmp));
		if (!tmp)
			return diag_set(d, DIAG_ENOMEM, "out of memory");
		rc = price_row(c, row, e, &SENS[k], tmp, d);
		row->sens[k] = tmp->usd_per_accepted_task;
		free(tmp);
		if (rc != 0)
			return rc;
	}
	return 0;
}

/* ---- hybrid rows: one box plus the API backends ---- */

/* Backend k of the scenario: its kind, price id, and the id of the API
 * list prices that value a seat plan's usage. */
static const struct scenario_backend *backend(const struct compare_setup *c, int32_t k)
{
	return &c->size->base->backends[k];
}

static const char *list_id(const struct compare_setup *c, int32_t k)
{
	const struct scenario_backend *b = backend(c, k);
	return b->latency[0] ? b->latency : b->price;
}

static int32_t n_backends(const struct compare_setup *c)
{
	return c->backends ? c->size->base->n_backends : 0;
}

/* How long backend k's prompt-cache entries live, s: the scenario's
 * cache_ttl_s, else its latency row's (models/apilat.h), else 5 minutes;
 * the cache-write price follows it. */
static double backend_ttl_s(const struct compare_setup *c, int32_t k)
{
	const struct scenario_backend *b = backend(c, k);
	if (b->cache_ttl_s >= 0)
		return b->cache_ttl_s;
	struct apilat *lat = NULL;
	struct diag d;
	diag_init(&d);
	double ttl = 300;
	if (apilat_load(&lat, NULL, NULL, &d) == 0) {
		const struct apilat_row *row = apilat_find(lat, list_id(c, k));
		if (row)
			ttl = row->cache_ttl_s;
	}
	apilat_free(lat);
	return ttl;
}

/* The monthly cost of every API backend's calls in replicate 0 of e, with
 * traffic scaled by util.  0 or an error. */
static int api_month(const struct compare_setup *c, const struct size_eval *e, double util,
		     double *usd, struct diag *d)
{
	*usd = 0;
	const struct size_fig *f = &e->fig[0];
	struct cost_task t;
	cost_task_default(&t);
	t.turns_factor = c->task.turns_factor;
	for (int32_t k = 0; k < n_backends(c); k++) {
		struct cost_usage u;
		usage_of(c, e, 1.0, &u);
		u.prompt_tokens = llround((double)f->api_prompt_tokens[k] * util);
		u.cached_tokens = llround((double)f->api_cached_tokens[k] * util);
		if (u.cached_tokens > u.prompt_tokens)
			u.cached_tokens = u.prompt_tokens;
		u.cache_write_tokens = llround((double)f->api_cache_write_tokens[k] * util);
		if (u.cache_write_tokens > u.prompt_tokens - u.cached_tokens)
			u.cache_write_tokens = u.prompt_tokens - u.cached_tokens;
		u.output_tokens = llround((double)f->api_output_tokens[k] * util);
		u.calls = llround((double)f->api_calls[k] * util);
		u.api_split = true;
		u.api_clock_assumed = f->api_clock_assumed[k];
		memcpy(u.api_class, f->api_class[k], sizeof(u.api_class));
		cost_api_tokens_scale(u.api_class, util);
		struct cost_result *r = malloc(sizeof(*r));
		if (!r)
			return diag_set(d, DIAG_ENOMEM, "out of memory");
		int rc;
		if (strcmp(backend(c, k)->kind, "seat") == 0) {
			struct cost_seats p;
			rc = cost_seats_from_prices(&p, c->prices, backend(c, k)->price, list_id(c, k),
						    d);
			snprintf(u.api_split_label, sizeof(u.api_split_label), "%s", p.list.label);
			if (rc == 0)
				rc = cost_seats_eval(&p, &u, &t, r, d);
		} else {
			struct cost_api p;
			rc = cost_api_from_prices(&p, c->prices, backend(c, k)->price, d);
			if (rc == 0)
				cost_api_cache_ttl(&p, c->prices, backend(c, k)->price,
						   backend_ttl_s(c, k));
			snprintf(u.api_split_label, sizeof(u.api_split_label), "%s", p.label);
			if (rc == 0)
				rc = cost_api_eval(&p, &u, &t, r, d);
		}
		if (rc == 0)
			*usd += r->usd_month;
		free(r);
		if (rc != 0)
			return rc;
	}
	return 0;
}

/* The share of replicate 0's calls the API backends served. */
static double api_share_of(const struct compare_setup *c, const struct size_eval *e)
{
	const struct size_fig *f = &e->fig[0];
	int64_t api = 0;
	for (int32_t k = 0; k < n_backends(c); k++)
		api += f->api_calls[k];
	return f->calls > 0 ? (double)api / (double)f->calls : 0.0;
}

/* Price a hybrid row with the factors of one sensitivity column (all 1:
 * the row itself): the box by price_row, the API by api_month, per
 * accepted task at the blended acceptance.  *res gets the box's result
 * with the totals replaced. */
static int price_hybrid(const struct compare_setup *c, const struct compare_row *row,
			const struct size_eval *e, const struct sens_case *k,
			struct cost_result *res, struct compare_hybrid *hy, struct diag *d)
{
	int rc = price_row(c, row, e, k, res, d);
	double api = 0;
	if (rc == 0)
		rc = api_month(c, e, k->util, &api, d);
	if (rc != 0)
		return rc;
	const struct size_fig *f = &e->fig[0];
	double share = api_share_of(c, e);
	double acc_local = res->tasks_month > 0 ? res->accepted_tasks_month / res->tasks_month : 0;
	/* the API side at the API model's acceptance (a figure given, else the
	 * trace's x its quality factor) */
	double acc_trace = c->base_task.acceptance_rate.value > 0
				   ? c->base_task.acceptance_rate.value
				   : (f->tasks_accept_known > 0 ? (double)f->tasks_accepted /
									  (double)f->tasks_accept_known
								: 1.0) *
					     c->base_task.quality_factor.value;
	double acc = (1 - share) * acc_local + share * acc_trace;
	hy->on = true;
	hy->api_share = share;
	hy->api_usd_month = api;
	hy->local_usd_month = res->usd_month;
	hy->acceptance = acc;
	res->usd_month += api;
	res->accepted_tasks_month = res->tasks_month * acc;
	res->usd_per_accepted_task = res->accepted_tasks_month > 0 ? res->usd_month / res->accepted_tasks_month : 0;
	res->usd_per_mtok_output =
		res->output_tokens_month > 0 ? res->usd_month / (res->output_tokens_month / 1e6) : 0;
	res->usd_per_engineer_month = c->engineers > 0 ? res->usd_month / (double)c->engineers : 0;
	if (res->part_count < COST_MAX_PARTS) {
		struct cost_part *pt = &res->parts[res->part_count++];
		snprintf(pt->name, sizeof(pt->name), "api");
		pt->usd_month = api;
	}
	if (res->assumption_count < COST_MAX_ASSUMPTIONS) {
		struct cost_assumption *a = &res->assumptions[res->assumption_count++];
		snprintf(a->name, sizeof(a->name), "api_usd_month");
		a->value = api;
		snprintf(a->unit, sizeof(a->unit), "USD/month");
		snprintf(a->source, sizeof(a->source),
			 "the API backends' calls in the replay of one box plus them, at list prices "
			 "(price ids %.48s%s%.48s), periods as above",
			 backend(c, 0)->price, n_backends(c) > 1 ? ", " : "",
			 n_backends(c) > 1 ? backend(c, 1)->price : "");
	}
	if (res->assumption_count < COST_MAX_ASSUMPTIONS) {
		struct cost_assumption *a = &res->assumptions[res->assumption_count++];
		snprintf(a->name, sizeof(a->name), "blended_acceptance");
		a->value = acc;
		snprintf(a->unit, sizeof(a->unit), "share of tasks");
		snprintf(a->source, sizeof(a->source),
			 "%.4f of the calls local at %.4f, %.4f on the API at the trace's %.4f", 1 - share,
			 acc_local, share, acc_trace);
	}
	return 0;
}

/* Hybrid rows for option o (one box, with the backends); appended to
 * out.  0, or an error. */
static int hybrid_rows(const struct compare_setup *c, const struct size_result *sr,
		       const struct size_option *o, struct compare_result *out, struct diag *d)
{
	struct size_setup s2 = *c->size;
	s2.local_only = false;
	s2.no_early = true;
	struct size_eval *e = malloc(sizeof(*e));
	if (!e)
		return diag_set(d, DIAG_ENOMEM, "out of memory");
	/* one box: one replica of the scenario's shape on this hardware (a
	 * multi-GPU system whole, else one GPU), not the winner's */
	int rc = size_evaluate(&s2, sr, o->hardware, 0, 0, 1, 0, e, d);
	if (rc == 1) { /* the memory model rules the shape out: no row */
		free(e);
		return 0;
	}
	static const enum cost_option SELF[] = {COST_PURCHASE, COST_DEDICATED, COST_ELASTIC};
	for (int k = 0; rc == 0 && k < 3; k++) {
		struct compare_row *row = &out->rows[out->n];
		memset(row, 0, sizeof(*row));
		row->option = SELF[k];
		snprintf(row->hardware, sizeof(row->hardware), "%s", o->hardware);
		row->gpus = e->gpus;
		if (e->pp > 1) /* the label says "+ API" */
			snprintf(row->deployment, sizeof(row->deployment), "1 x TP%d/PP%d", e->tp, e->pp);
		else
			snprintf(row->deployment, sizeof(row->deployment), "1 x TP%d", e->tp);
		struct diag pd;
		diag_init(&pd);
		rc = price_hybrid(c, row, e, &BASE_CASE, &row->r, &row->hy, &pd);
		if (rc == COST_NO_PRICE) {
			rc = 0;
			continue;
		}
		for (int j = 0; rc == 0 && j < COMPARE_SENS; j++) {
			struct cost_result *tmp = malloc(sizeof(*tmp));
			struct compare_hybrid hy;
			rc = tmp ? price_hybrid(c, row, e, &SENS[j], tmp, &hy, &pd)
				 : DIAG_ENOMEM;
			row->sens[j] = tmp ? tmp->usd_per_accepted_task : 0;
			free(tmp);
		}
		if (rc != 0) {
			rc = diag_set(d, rc, "%s %s + API: %s", o->hardware, cost_option_name(SELF[k]),
				      pd.msg);
			break;
		}
		row->busy = e->fig[0].busy;
		row->hy.meets = e->meets;
		row->hy.ttft_p95_ms = e->fig[0].ttft_p95_ms;
		out->n++;
	}
	free(e);
	return rc;
}

/* The API baseline of c on the first winner's shape (plan/baseline.h). */
static int baseline_of(const struct compare_setup *c, const struct size_option *o,
		       struct baseline_result *out, struct diag *d)
{
	const struct scenario *sc = c->size->base;
	struct baseline_setup bs = {
		.size = c->size,
		.hardware = o->hardware,
		.tp = o->best.tp,
		.pp = o->best.pp,
		.api_id = c->api_id,
		.prices = c->prices,
		.cache_ttl_s = sc->cost.api_cache_ttl_s > 0 ? sc->cost.api_cache_ttl_s
							    : BASELINE_CACHE_TTL_S,
	};
	return baseline_run(&bs, out, d);
}

/* One model's acceptance basis: a figure given (t's acceptance_rate >= 0),
 * else scores, else assumed equal; the quality factor set in t. */
static void quality_of(struct compare_quality *o, const char *role, const char *model,
		       const char *traced, const struct quality *q, struct cost_task *t)
{
	memset(o, 0, sizeof(*o));
	snprintf(o->model, sizeof(o->model), "%s", model);
	o->role = role;
	o->factor = 1;
	if (t->acceptance_rate.value >= 0) {
		o->basis = COMPARE_BASIS_PILOT;
		snprintf(o->why, sizeof(o->why), "acceptance %.4g given for it (%s)",
			 t->acceptance_rate.value, t->acceptance_rate.source);
		return;
	}
	struct quality_rel rel;
	quality_relative(q, model, traced, &rel);
	if (rel.found && !rel.model_row) {
		o->basis = COMPARE_BASIS_TRACED;
		snprintf(o->why, sizeof(o->why), "the traced model: the trace's own acceptance");
		return;
	}
	if (rel.found) {
		o->basis = COMPARE_BASIS_SCORES;
		o->factor = rel.factor;
		snprintf(o->why, sizeof(o->why), "the trace's acceptance x %.4g: %s", rel.factor,
			 rel.basis);
		cost_fig_set(&t->quality_factor, rel.factor, "published scores against the traced "
			     "model %s: %s", traced, rel.basis);
		return;
	}
	o->basis = COMPARE_BASIS_ASSUMED;
	snprintf(o->why, sizeof(o->why), "quality assumed equal to the traced model %s (%s); "
		 "give a pilot figure with --acceptance %s=RATE", traced, rel.basis, model);
	cost_fig_set(&t->quality_factor, 1, "quality assumed equal to the traced model %s: %s",
		     traced, rel.basis);
}

void compare_quality(struct compare_setup *c, const struct quality *q, const char *model)
{
	quality_of(&c->quality[0], "self-hosted", model, c->traced_model, q, &c->task);
	quality_of(&c->quality[1], "api", c->api_id, c->traced_model, q, &c->base_task);
}

int compare_run(const struct compare_setup *c0, const struct size_result *sr,
		struct compare_result *out, struct diag *d)
{
	memset(out, 0, sizeof(*out));
	out->engineers = c0->engineers;
	struct compare_setup cc = *c0, *c = &cc;
	if (!c->baseline) {
		for (size_t i = 0; i < sr->n; i++)
			if (sr->opt[i].found) {
				int rc = baseline_of(c, &sr->opt[i], &out->baseline, d);
				if (rc != 0)
					return rc;
				c->baseline = &out->baseline;
				break;
			}
	} else {
		out->baseline = *c->baseline;
	}
	const struct size_eval *first = NULL;
	for (size_t i = 0; i < sr->n; i++) {
		const struct size_option *o = &sr->opt[i];
		if (!o->found)
			continue;
		if (!first)
			first = &o->best;
		static const enum cost_option SELF[] = {COST_PURCHASE, COST_DEDICATED, COST_ELASTIC};
		for (int k = 0; k < 3; k++) {
			struct compare_row *row = &out->rows[out->n];
			memset(row, 0, sizeof(*row));
			row->option = SELF[k];
			snprintf(row->hardware, sizeof(row->hardware), "%s", o->hardware);
			row->gpus = o->best.gpus;
			size_eval_label(&o->best, row->deployment, sizeof(row->deployment));
			struct diag pd;
			diag_init(&pd);
			int rc = fill_row(c, row, &o->best, &pd);
			if (rc == COST_NO_PRICE) {
				size_t at = strlen(out->unpriced);
				snprintf(out->unpriced + at, sizeof(out->unpriced) - at, "%s%s %s%s%s%s",
					 at ? ", " : "", o->hardware, cost_option_name(SELF[k]),
					 pd.msg[0] ? " (" : "", pd.msg, pd.msg[0] ? ")" : "");
				continue;
			}
			if (rc != 0)
				return diag_set(d, rc, "%s %s: %s", o->hardware, cost_option_name(SELF[k]),
						pd.msg);
			out->n++;
		}
	}
	if (!first)
		return 0;
	for (size_t i = 0; n_backends(c) > 0 && i < sr->n; i++)
		if (sr->opt[i].found) {
			int rc = hybrid_rows(c, sr, &sr->opt[i], out, d);
			if (rc != 0)
				return rc;
		}
	out->periods_per_month = periods_of(c, first);
	static const enum cost_option BASE[] = {COST_SEATS, COST_API};
	size_t api_row = 0;
	for (int k = 0; k < 2; k++) {
		struct compare_row *row = &out->rows[out->n];
		memset(row, 0, sizeof(*row));
		row->option = BASE[k];
		int rc = fill_row(c, row, first, d);
		if (rc == COST_NO_PRICE)
			rc = diag_set(d, DIAG_EINPUT, "%s: no price", BASE[k] == COST_API ? c->api_id
											 : c->seat_id);
		if (rc != 0)
			return rc;
		if (BASE[k] == COST_API)
			api_row = out->n;
		out->n++;
	}
	out->prices_as_of[0] = '\0';
	for (size_t i = 0; i < out->n; i++)
		cost_newest_date(out->prices_as_of, &out->rows[i].r);
	/* break-even on cost per accepted task, with each side's acceptance and
	 * turns: the API's cost per accepted task is the same at any team size;
	 * this deployment's month spread over more engineers' accepted tasks
	 * (the team size), or over more traffic on the same GPUs (the busy
	 * fraction) */
	const struct cost_result *api = &out->rows[api_row].r;
	double api_task = api->usd_per_accepted_task;
	for (size_t i = 0; i < out->n; i++) {
		struct compare_row *row = &out->rows[i];
		if (row->option == COST_SEATS || row->option == COST_API || row->hy.on)
			continue;
		double acc_per_eng = c->engineers > 0 ? row->r.accepted_tasks_month /
								(double)c->engineers
						      : 0;
		row->breakeven_engineers = api_task > 0 && acc_per_eng > 0
						   ? row->r.usd_month / (api_task * acc_per_eng)
						   : 0;
		row->breakeven_utilisation = api_task > 0
						     ? row->busy * row->r.usd_per_accepted_task / api_task
						     : 0;
		/* past 100% busy the GPUs cannot carry the traffic at which the
		 * API would cost as much: no team this deployment serves gets there */
		row->breakeven_never = !(api->usd_month > 0) || row->breakeven_utilisation > 1.0;
	}
	return 0;
}

static const char *row_label(const struct compare_setup *c, const struct compare_row *row,
			     char *buf, size_t size)
{
	if (row->option == COST_API)
		snprintf(buf, size, "API %s", c->api_id);
	else if (row->option == COST_SEATS)
		snprintf(buf, size, "seats %s", c->seat_id);
	else if (row->hy.on)
		snprintf(buf, size, "%s %s + API", row->hardware, cost_option_name(row->option));
	else
		snprintf(buf, size, "%s %s", row->hardware, cost_option_name(row->option));
	return buf;
}

/* The index of the row cheapest per accepted task in column k (-1: base). */
static size_t cheapest(const struct compare_result *r, int k)
{
	size_t best = 0;
	for (size_t i = 1; i < r->n; i++) {
		double a = k < 0 ? r->rows[i].r.usd_per_accepted_task : r->rows[i].sens[k];
		double b = k < 0 ? r->rows[best].r.usd_per_accepted_task : r->rows[best].sens[k];
		if (a > 0 && (b <= 0 || a < b))
			best = i;
	}
	return best;
}

static const char *const BASIS_NAME[] = {"assumed", "scores", "pilot", "traced"};

/* The share of a row's month its operator time takes (0: none). */
static double operator_share(const struct compare_row *row)
{
	for (size_t i = 0; i < row->r.part_count; i++)
		if (strcmp(row->r.parts[i].name, "operator") == 0 && row->r.usd_month > 0)
			return row->r.parts[i].usd_month / row->r.usd_month;
	return 0;
}

/* Warnings a row may carry (row_warning's k). */
#define ROW_WARNINGS 3

/* Warning k of a row into buf (0: its operator time decides it; 1: what
 * its purchase price leaves out; 2: off-peak rates by a clock the trace
 * does not give); false when it has none. */
static bool row_warning(const struct compare_row *row, int k, char *buf, size_t size)
{
	if (k == 0) {
		double share = operator_share(row);
		if (!(share > COMPARE_OPERATOR_DECIDES))
			return false;
		snprintf(buf, size, "operator time is %.1f%% of its month (%.2f of %.2f USD): it "
			 "decides this row; set cost.operator_base_usd_month and "
			 "cost.operator_per_system_usd_month from your own staffing (or "
			 "cost.operator_usd_month for the whole figure)", 100 * share,
			 share * row->r.usd_month, row->r.usd_month);
		return true;
	}
	if (k == 2) {
		for (size_t i = 0; i < row->r.assumption_count; i++) {
			const struct cost_assumption *a = &row->r.assumptions[i];
			if (strcmp(a->name, "off_peak_call_share") == 0 &&
			    strstr(a->source, "not dates")) {
				snprintf(buf, size, "off-peak rates billed on %.1f%% of its calls by "
					 "trace times read from 00:00 UTC of a Monday; set "
					 "cost.trace_start_utc to the trace's start to bill the "
					 "team's own hours", 100 * a->value);
				return true;
			}
		}
		return false;
	}
	for (size_t i = 0; i < row->r.assumption_count; i++)
		if (strcmp(row->r.assumptions[i].name, "not_priced") == 0) {
			snprintf(buf, size, "%s", row->r.assumptions[i].source);
			return true;
		}
	return false;
}

/* The cash flow of hardware hw's ways of paying beside the seats and the
 * API, over the scenario's horizon and discount rate (models/cashflow.h). */
static int cash_of(const struct compare_setup *c, const struct compare_result *r,
		   const char *hw, struct cashflow *cf, struct diag *d)
{
	struct cashflow_params p;
	cashflow_params_default(&p);
	const struct scenario *sc = c->size ? c->size->base : NULL;
	if (sc && sc->cost.horizon_months >= 0)
		cost_fig_set(&p.horizon_months, sc->cost.horizon_months,
			     "scenario %s: cost.horizon_months", sc->source);
	if (sc && sc->cost.discount_rate >= 0)
		cost_fig_set(&p.discount_rate, sc->cost.discount_rate,
			     "scenario %s: cost.discount_rate", sc->source);
	struct cashflow_option o[CASHFLOW_MAX_OPTIONS];
	size_t n = 0;
	for (size_t i = 0; i < r->n && n < CASHFLOW_MAX_OPTIONS; i++) {
		const struct compare_row *row = &r->rows[i];
		bool base = row->option == COST_SEATS || row->option == COST_API;
		if (row->hy.on || (!base && strcmp(row->hardware, hw) != 0))
			continue;
		int rc = cashflow_option_from_result(&o[n], &row->r, d);
		if (rc)
			return rc;
		n++;
	}
	return cashflow_eval(cf, &p, o, n, d);
}

/* Each hardware option's cash flow over the horizon, as text. */
static void cash_text(FILE *fp, const struct compare_setup *c, const struct compare_result *r)
{
	struct cashflow *cf = malloc(sizeof(*cf));
	if (!cf) {
		fprintf(fp, "\nCash flow: not computed (out of memory)\n");
		return;
	}
	for (size_t i = 0; i < r->n; i++) {
		const struct compare_row *row = &r->rows[i];
		if (row->option != COST_PURCHASE && row->option != COST_DEDICATED &&
		    row->option != COST_ELASTIC)
			continue;
		if (row->hy.on)
			continue;
		bool seen = false;
		for (size_t j = 0; j < i; j++)
			seen |= !r->rows[j].hy.on && strcmp(r->rows[j].hardware, row->hardware) == 0;
		if (seen)
			continue;
		struct diag d;
		diag_init(&d);
		fprintf(fp, "\n%s: ", row->hardware);
		if (cash_of(c, r, row->hardware, cf, &d) == 0)
			cashflow_text(fp, cf);
		else
			fprintf(fp, "cash flow not computed: %s\n", d.msg);
	}
	free(cf);
}

/* What each side's acceptance rests on, and the warnings a reader must see:
 * a traced model taken by default, a quality assumed equal. */
static void compare_quality_text(FILE *fp, const struct compare_setup *c)
{
	fprintf(fp, "Acceptance (share of tasks accepted) against the traced model %s%s:\n",
		c->traced_model ? c->traced_model : "-",
		c->traced_assumed ? " (taken to be the API's model: set --traced-model)" : "");
	for (int k = 0; k < 2; k++) {
		const struct compare_quality *q = &c->quality[k];
		if (!q->role)
			continue;
		fprintf(fp, "  %-11s %-28s %s\n", q->role, q->model, q->why);
	}
	if (c->traced_assumed)
		fprintf(fp, "Warning: the trace's acceptance is taken as %s's, the API compared; if "
			"the trace was recorded with another model, say which with --traced-model\n",
			c->traced_model);
	for (int k = 0; k < 2; k++)
		if (c->quality[k].role && c->quality[k].basis == COMPARE_BASIS_ASSUMED)
			fprintf(fp, "Warning: %s: quality assumed equal to the traced model %s; the "
				"sensitivity table moves its acceptance from %.0f%% to 100%% of the "
				"traced model's\n", c->quality[k].model, c->traced_model,
				100 * COMPARE_ACC_LOW);
}

void compare_table(FILE *fp, const struct compare_setup *c, const struct compare_result *r)
{
	char label[160];
	fprintf(fp, "================ agentcap compare: %lld engineers ================\n",
		(long long)r->engineers);
	const struct scenario *sc = c->size ? c->size->base : NULL;
	fprintf(fp, "All money in USD (other currencies at the price catalogue's stated rate). A month "
		"is %.0f h; ", COST_HOURS_PER_MONTH);
	if (sc && sc->cost.periods_per_month > 0)
		fprintf(fp, "the replayed span repeats %.2f times a month (the scenario's "
			"cost.periods_per_month).\n", r->periods_per_month);
	else if (sc && sc->cost.periods_per_month == 0)
		fprintf(fp, "the traffic is continuous (the scenario's cost.periods_per_month 0).\n");
	else {
		char why[256];
		double wd = scenario_workdays_per_year(sc, why, sizeof(why));
		fprintf(fp, "one replayed day counts as one of %.2f working days a month "
			"(%.2f replays a month; %s / 12).\n", wd / 12.0, r->periods_per_month, why);
	}
	fprintf(fp, "Prices as of %s (the newest date of the prices used; each price's own date is "
		"in the list of figures below).\n", r->prices_as_of[0] ? r->prices_as_of
								: "- (no dated price used)");
	compare_quality_text(fp, c);
	fprintf(fp, "%-36s %5s %-10s %14s %14s %14s %14s\n", "Option", "GPUs", "Deployment",
		"USD/month", "USD/engineer", "USD/1M output", "USD/accepted");
	fprintf(fp, "%-36s %5s %-10s %14s %14s %14s %14s\n", "", "", "", "(whole team)",
		"(per month)", "(tokens)", "(task)");
	for (size_t i = 0; i < r->n; i++) {
		const struct compare_row *row = &r->rows[i];
		char gpus[16] = "-";
		if (row->gpus)
			snprintf(gpus, sizeof(gpus), "%d", row->gpus);
		fprintf(fp, "%-36s %5s %-10s %14.2f %14.2f %14.2f %14.2f\n",
			row_label(c, row, label, sizeof(label)), gpus,
			row->deployment[0] ? row->deployment : "-", row->r.usd_month,
			row->r.usd_per_engineer_month, row->r.usd_per_mtok_output,
			row->r.usd_per_accepted_task);
	}
	if (r->unpriced[0])
		fprintf(fp, "Not on offer in the price catalogue: %s\n", r->unpriced);
	if (r->n)
		fprintf(fp, "Cheapest per accepted task: %s\n",
			row_label(c, &r->rows[cheapest(r, -1)], label, sizeof(label)));
	for (size_t i = 0; i < r->n; i++) {
		char w[COST_SOURCE_MAX + 64];
		for (int k = 0; k < ROW_WARNINGS; k++)
			if (row_warning(&r->rows[i], k, w, sizeof(w)))
				fprintf(fp, "Warning: %s: %s\n",
					row_label(c, &r->rows[i], label, sizeof(label)), w);
	}

	fprintf(fp, "\nBreak-even against the API (%s), per self-hosted option:\n", c->api_id);
	for (size_t i = 0; i < r->n; i++) {
		const struct compare_row *row = &r->rows[i];
		if (row->option == COST_SEATS || row->option == COST_API || row->hy.on)
			continue;
		if (row->breakeven_never) {
			fprintf(fp, "  %-34s never at this size: %s (GPU busy now %.1f%%)\n",
				row_label(c, row, label, sizeof(label)), COMPARE_NEVER, 100 * row->busy);
			continue;
		}
		fprintf(fp, "  %-34s team of %.1f engineers (where its USD per accepted task, "
			"spread over more engineers, meets the API's)%s; GPU busy fraction %.1f%% "
			"(now %.1f%%)\n",
			row_label(c, row, label, sizeof(label)), row->breakeven_engineers,
			row->breakeven_engineers > (double)r->engineers
				? ", more than this deployment was sized for"
				: "",
			100 * row->breakeven_utilisation, 100 * row->busy);
	}

	bool any_hybrid = false;
	for (size_t i = 0; i < r->n; i++)
		any_hybrid |= r->rows[i].hy.on;
	if (any_hybrid) {
		fprintf(fp, "\nLocal plus cloud: one box (one replica of the scenario's shape) of each "
			"hardware option with the scenario's backends beside it, the same team "
			"replayed (docs/hybrid.md):\n");
		fprintf(fp, "  %-34s %8s %10s %9s %12s %12s %10s\n", "Option", "API %", "p95 TTFT",
			"meets", "box USD/mo", "API USD/mo", "accepted");
		for (size_t i = 0; i < r->n; i++) {
			const struct compare_row *row = &r->rows[i];
			if (!row->hy.on)
				continue;
			fprintf(fp, "  %-34s %8.2f %10.0f %9s %12.2f %12.2f %10.4f\n",
				row_label(c, row, label, sizeof(label)), 100 * row->hy.api_share,
				row->hy.ttft_p95_ms, row->hy.meets ? "yes" : "no",
				row->hy.local_usd_month, row->hy.api_usd_month, row->hy.acceptance);
		}
		fprintf(fp, "  (p95 TTFT in ms, first replicate; accepted: the share of tasks accepted, "
			"blended by the calls each side served)\n");
	}

	cash_text(fp, c, r);

	static const char *const HEAD[COMPARE_SENS] = {
		"price-20%", "price+20%", "acc-20%", "acc+20%", "acc=30%tr", "acc=100%tr",
		"util-20%", "util+20%", "oper low", "oper high"};
	fprintf(fp, "\nSensitivity: USD per accepted task with one input moved (price: self-hosted "
		"hardware and rental prices, the seat price, the API's token prices, each row its own, "
		"-/+%.0f%%; acc: the self-hosted model's acceptance "
		"-/+%.0f%%, then set to %.0f%% and 100%% of the traced model's (tr); util: traffic on "
		"the same deployment -/+%.0f%%; oper: operator time at the low and the high end of "
		"its sourced ranges, base %s / %s and per system %s / %s, docs/cost.md)\n",
		100 * COMPARE_SWING, 100 * COMPARE_SWING, 100 * COMPARE_ACC_LOW, 100 * COMPARE_SWING,
		COST_DEFAULT_OPERATOR, COST_OPERATOR_BASE_HIGH, COST_OPERATOR_SYSTEM_LOW,
		COST_OPERATOR_SYSTEM_HIGH);
	fprintf(fp, "%-36s %9s", "Option", "base");
	for (int k = 0; k < COMPARE_SENS; k++)
		fprintf(fp, " %10s", HEAD[k]);
	fputc('\n', fp);
	for (size_t i = 0; i < r->n; i++) {
		const struct compare_row *row = &r->rows[i];
		fprintf(fp, "%-36s %9.2f", row_label(c, row, label, sizeof(label)),
			row->r.usd_per_accepted_task);
		for (int k = 0; k < COMPARE_SENS; k++)
			fprintf(fp, " %10.2f", row->sens[k]);
		fprintf(fp, "\n");
	}
	if (r->n) {
		fprintf(fp, "Cheapest per accepted task in each column:\n");
		for (int k = 0; k < COMPARE_SENS; k++) {
			const struct compare_row *best = &r->rows[cheapest(r, k)];
			fprintf(fp, "  %-10s %s (%.2f)\n", HEAD[k],
				row_label(c, best, label, sizeof(label)), best->sens[k]);
		}
	}

	fprintf(fp, "\nEvery figure used, with its unit, source and date:\n");
	for (size_t i = 0; i < r->n; i++) {
		const struct compare_row *row = &r->rows[i];
		fprintf(fp, "  %s:\n", row_label(c, row, label, sizeof(label)));
		for (size_t j = 0; j < row->r.assumption_count; j++) {
			const struct cost_assumption *a = &row->r.assumptions[j];
			fprintf(fp, "    %-26s %14.6g %-22s %s\n", a->name, a->value, a->unit, a->source);
		}
	}
	fprintf(fp, "=================================================================\n");
}

/* The size option a self-hosted row prices, or NULL. */
static const struct size_option *row_option(const struct size_result *sr,
					    const struct compare_row *row)
{
	for (size_t i = 0; sr && i < sr->n; i++)
		if (sr->opt[i].found && strcmp(sr->opt[i].hardware, row->hardware) == 0)
			return &sr->opt[i];
	return NULL;
}

void compare_summary(FILE *fp, const struct compare_setup *c, const struct compare_result *r,
		     const struct size_result *sr)
{
	static const char *const MOVED[COMPARE_SENS] = {
		"prices -20%", "prices +20%", "self-hosted acceptance -20%",
		"self-hosted acceptance +20%", "self-hosted acceptance at 30% of the traced model's",
		"self-hosted acceptance equal to the traced model's", "traffic -20%", "traffic +20%",
		"operator time at the low end", "operator time at the high end"};
	char label[160], slo[256] = "";
	const struct scenario *sc = c->size ? c->size->base : NULL;
	if (c->size && c->size->slo)
		slo_format(c->size->slo, slo, sizeof(slo));
	fprintf(fp, "agentcap compare: %lld engineers on %s (%s); objectives %s\n",
		(long long)r->engineers, sc ? sc->model : "-", sc ? sc->weight_format : "-",
		slo[0] ? slo : "-");
	/* the cheapest self-hosted row that met the objectives */
	size_t best = r->n;
	for (size_t i = 0; i < r->n; i++) {
		const struct compare_row *row = &r->rows[i];
		if (row->option == COST_SEATS || row->option == COST_API || row->hy.on ||
		    !(row->r.usd_per_accepted_task > 0))
			continue;
		if (best == r->n ||
		    row->r.usd_per_accepted_task < r->rows[best].r.usd_per_accepted_task)
			best = i;
	}
	if (best < r->n) {
		const struct compare_row *row = &r->rows[best];
		const struct size_option *o = row_option(sr, row);
		fprintf(fp, "Self-hosted, cheapest: %s, %d GPU%s (%s)",
			row_label(c, row, label, sizeof(label)), (int)row->gpus,
			row->gpus == 1 ? "" : "s", row->deployment);
		if (o)
			fprintf(fp, ", P95 TTFT %.0f ms, P50 TPOT %.1f ms",
				size_eval_median(&o->best, offsetof(struct size_fig, ttft_p95_ms)),
				size_eval_median(&o->best, offsetof(struct size_fig, tpot_p50_ms)));
		fprintf(fp, "\n  USD %.0f a month (USD %.0f an engineer), USD %.2f per accepted task\n",
			row->r.usd_month, row->r.usd_per_engineer_month, row->r.usd_per_accepted_task);
	} else {
		bool any = false;
		for (size_t i = 0; sr && i < sr->n; i++) {
			const struct size_option *o = &sr->opt[i];
			if (!o->found)
				continue;
			fprintf(fp, "Self-hosted: %s meets the objectives with %d GPU%s, P95 TTFT %.0f "
				"ms, but has no price (not priced: %s)\n", o->hardware,
				(int)o->best.gpus, o->best.gpus == 1 ? "" : "s",
				size_eval_median(&o->best, offsetof(struct size_fig, ttft_p95_ms)),
				r->unpriced[0] ? r->unpriced : "-");
			any = true;
		}
		if (!any)
			fprintf(fp, "Self-hosted: no option met the objectives\n");
	}
	for (size_t i = 0; i < r->n; i++) {
		const struct compare_row *row = &r->rows[i];
		if (row->option == COST_SEATS || row->option == COST_API)
			fprintf(fp, "%-22s USD %.0f a month, USD %.2f per accepted task\n",
				row_label(c, row, label, sizeof(label)), row->r.usd_month,
				row->r.usd_per_accepted_task);
	}
	if (r->n) {
		size_t all = cheapest(r, -1);
		fprintf(fp, "Answer: %s is the cheapest per accepted task (USD %.2f).\n",
			row_label(c, &r->rows[all], label, sizeof(label)),
			r->rows[all].r.usd_per_accepted_task);
	}
	if (best < r->n) {
		const struct compare_row *row = &r->rows[best];
		if (row->breakeven_never)
			fprintf(fp, "Break-even with the API: never at this size (%s).\n", COMPARE_NEVER);
		else
			fprintf(fp, "Break-even with the API: %s matches its cost per accepted task at a "
				"team of %.0f engineers (GPUs %.0f%% busy; now %.0f%%).\n",
				row_label(c, row, label, sizeof(label)), row->breakeven_engineers,
				100 * row->breakeven_utilisation, 100 * row->busy);
	}
	fprintf(fp, "\nEvery option (USD a month / per accepted task):\n");
	for (size_t i = 0; i < r->n; i++) {
		const struct compare_row *row = &r->rows[i];
		fprintf(fp, "  %-34s %5s %10.0f %8.2f\n", row_label(c, row, label, sizeof(label)),
			row->deployment[0] ? row->deployment : "-", row->r.usd_month,
			row->r.usd_per_accepted_task);
	}
	fprintf(fp, "\nWhat moves the answer (one input moved at a time, the sensitivity table):\n");
	int moved = 0;
	if (r->n) {
		size_t all = cheapest(r, -1);
		for (int k = 0; k < COMPARE_SENS; k++) {
			size_t b = cheapest(r, k);
			if (b == all)
				continue;
			fprintf(fp, "  %s: %s becomes the cheapest (USD %.2f)\n", MOVED[k],
				row_label(c, &r->rows[b], label, sizeof(label)), r->rows[b].sens[k]);
			moved++;
		}
	}
	if (!moved)
		fprintf(fp, "  none of prices, acceptance, traffic or operator time moved alone "
			"changes the cheapest option\n");
	fprintf(fp, "\nAssumed: ");
	for (int k = 0; k < 2; k++)
		if (c->quality[k].role && c->quality[k].basis == COMPARE_BASIS_ASSUMED)
			fprintf(fp, "%s's acceptance equal to the traced model's (no published score; "
				"--acceptance MODEL=RATE from a pilot); ", c->quality[k].model);
	double oper = 0;
	for (size_t j = 0; best < r->n && j < r->rows[best].r.part_count; j++)
		if (strstr(r->rows[best].r.parts[j].name, "operator"))
			oper += r->rows[best].r.parts[j].usd_month;
	if (oper > 0)
		fprintf(fp, "operator time USD %.0f a month in the self-hosted figure (%.0f%% of it; "
			"cost.operator_* from your staffing); ", oper,
			100 * oper / r->rows[best].r.usd_month);
	fprintf(fp, "prices as of %s.\n", r->prices_as_of[0] ? r->prices_as_of : "-");
	fprintf(fp, "Details: the same command without --summary (every figure, source and "
		"warning), --json FILE, --html FILE (one page).\n");
}

void compare_monthly(FILE *fp, const struct compare_result *r)
{
	fprintf(fp, "Monthly cost of each winner, USD per month for the whole team (docs/cost.md; "
		"'-': no price in the catalogue; agentcap compare for the details), prices as of "
		"%s:\n", r->prices_as_of[0] ? r->prices_as_of : "- (no dated price used)");
	fprintf(fp, "%-22s %14s %14s %14s\n", "Hardware", "purchase", "dedicated", "elastic");
	for (size_t i = 0; i < r->n;) {
		const struct compare_row *row = &r->rows[i];
		if (row->option == COST_SEATS || row->option == COST_API || row->hy.on) {
			i++;
			continue;
		}
		double usd[3] = {-1, -1, -1};
		size_t j = i;
		for (; j < r->n && !r->rows[j].hy.on && strcmp(r->rows[j].hardware, row->hardware) == 0;
		     j++)
			if (r->rows[j].option <= COST_ELASTIC)
				usd[r->rows[j].option] = r->rows[j].r.usd_month;
		fprintf(fp, "%-22s", row->hardware);
		for (int k = 0; k < 3; k++) {
			if (usd[k] < 0)
				fprintf(fp, " %14s", "-");
			else
				fprintf(fp, " %14.2f", usd[k]);
		}
		fprintf(fp, "\n");
		i = j;
	}
	if (r->unpriced[0])
		fprintf(fp, "Not priced: %s\n", r->unpriced);
}


int compare_json(FILE *fp, const struct compare_setup *c, const struct compare_result *r)
{
	fprintf(fp, "{\"schema\":\"agentcap-compare\",\"version\":1,");
	if (c->size->run) {
		report_run_json(fp, c->size->run);
		fputc(',', fp);
	}
	fprintf(fp, "\"currency\":\"USD\",\"prices_as_of\":");
	jsonw_str(fp, r->prices_as_of[0] ? r->prices_as_of : NULL);
	char slo[256] = "";
	if (c->size && c->size->slo)
		slo_format(c->size->slo, slo, sizeof(slo));
	fprintf(fp, ",\"slo\":");
	jsonw_str(fp, slo[0] ? slo : NULL);
	char why[256];
	double wd = scenario_workdays_per_year(c->size ? c->size->base : NULL, why, sizeof(why));
	fprintf(fp, ",\"engineers\":%lld,\"periods_per_month\":%.17g,\"workdays_per_year\":%.17g,"
		"\"workdays_per_year_source\":", (long long)r->engineers, r->periods_per_month, wd);
	jsonw_str(fp, why);
	fprintf(fp, ",\"api\":");
	jsonw_str(fp, c->api_id);
	fprintf(fp, ",\"seats\":");
	jsonw_str(fp, c->seat_id);
	fprintf(fp, ",\"traced_model\":");
	jsonw_str(fp, c->traced_model);
	fprintf(fp, ",\"traced_model_assumed\":%s,\"quality\":[",
		c->traced_assumed ? "true" : "false");
	for (int k = 0, n = 0; k < 2; k++) {
		const struct compare_quality *q = &c->quality[k];
		if (!q->role)
			continue;
		fprintf(fp, "%s{\"role\":\"%s\",\"model\":", n++ ? "," : "", q->role);
		jsonw_str(fp, q->model);
		fprintf(fp, ",\"basis\":\"%s\",\"quality_factor\":%.17g,\"why\":",
			BASIS_NAME[q->basis], q->factor);
		jsonw_str(fp, q->why);
		fputc('}', fp);
	}
	fprintf(fp, "],\"acceptance_low_share\":%.17g,\"operator_low_rows\":[\"%s\",\"%s\"],"
		"\"operator_high_rows\":[\"%s\",\"%s\"],\"operator_decides_share\":%.17g",
		COMPARE_ACC_LOW, COST_DEFAULT_OPERATOR, COST_OPERATOR_SYSTEM_LOW,
		COST_OPERATOR_BASE_HIGH, COST_OPERATOR_SYSTEM_HIGH, COMPARE_OPERATOR_DECIDES);
	fprintf(fp, ",\"swing\":%.17g,\"rows\":[", COMPARE_SWING);
	static const char *const SENS_KEYS[COMPARE_SENS] = {
		"price_minus", "price_plus", "acceptance_minus", "acceptance_plus",
		"acceptance_30pct_of_traced", "acceptance_100pct_of_traced", "utilisation_minus",
		"utilisation_plus", "operator_low", "operator_high"};
	for (size_t i = 0; i < r->n; i++) {
		const struct compare_row *row = &r->rows[i];
		fprintf(fp, "%s{\"option\":\"%s\",\"hardware\":", i ? "," : "",
			cost_option_name(row->option));
		jsonw_str(fp, row->hardware);
		fprintf(fp, ",\"gpus\":%d,\"deployment\":", row->gpus);
		jsonw_str(fp, row->deployment);
		fprintf(fp, ",\"usd_per_month\":%.17g,\"usd_per_engineer_month\":%.17g,"
			"\"usd_per_1m_output_tokens\":%.17g,\"usd_per_accepted_task\":%.17g,"
			"\"gpu_busy_fraction\":%.17g,\"tasks_per_month\":%.17g,"
			"\"accepted_tasks_per_month\":%.17g,", row->r.usd_month,
			row->r.usd_per_engineer_month, row->r.usd_per_mtok_output,
			row->r.usd_per_accepted_task, row->busy, row->r.tasks_month,
			row->r.accepted_tasks_month);
		if (row->hy.on)
			fprintf(fp, "\"breakeven_engineers\":null,\"breakeven_gpu_busy_fraction\":null,"
				"\"breakeven_reason\":\"a local plus cloud row has no break-even\","
				"\"hybrid\":{\"meets\":%s,\"ttft_p95_ms\":%.17g,\"api_share\":%.17g,"
				"\"local_usd_per_month\":%.17g,\"api_usd_per_month\":%.17g,"
				"\"acceptance\":%.17g},", row->hy.meets ? "true" : "false",
				row->hy.ttft_p95_ms, row->hy.api_share, row->hy.local_usd_month,
				row->hy.api_usd_month, row->hy.acceptance);
		else if (row->breakeven_never)
			fprintf(fp, "\"breakeven_engineers\":null,\"breakeven_gpu_busy_fraction\":null,"
				"\"breakeven_reason\":\"never at this size: %s\",", COMPARE_NEVER);
		else
			fprintf(fp, "\"breakeven_engineers\":%.17g,\"breakeven_gpu_busy_fraction\":%.17g,"
				"\"breakeven_reason\":null,", row->breakeven_engineers,
				row->breakeven_utilisation);
		bool self = row->option != COST_SEATS && row->option != COST_API;
		if (self)
			fprintf(fp, "\"operator_share\":%.17g,\"warnings\":[", operator_share(row));
		else
			fprintf(fp, "\"operator_share\":null,\"warnings\":[");
		for (int k = 0, n = 0; k < ROW_WARNINGS; k++) {
			char w[COST_SOURCE_MAX + 64];
			if (!row_warning(row, k, w, sizeof(w)))
				continue;
			if (n++)
				fputc(',', fp);
			jsonw_str(fp, w);
		}
		fprintf(fp, "],\"sensitivity_usd_per_accepted_task\":{");
		for (int k = 0; k < COMPARE_SENS; k++)
			fprintf(fp, "%s\"%s\":%.17g", k ? "," : "", SENS_KEYS[k], row->sens[k]);
		fprintf(fp, "},\"assumptions\":[");
		for (size_t j = 0; j < row->r.assumption_count; j++) {
			const struct cost_assumption *a = &row->r.assumptions[j];
			fprintf(fp, "%s{\"name\":", j ? "," : "");
			jsonw_str(fp, a->name);
			fprintf(fp, ",\"value\":%.17g,\"unit\":", a->value);
			jsonw_str(fp, a->unit);
			fprintf(fp, ",\"source\":");
			jsonw_str(fp, a->source);
			fprintf(fp, "}");
		}
		fprintf(fp, "]}");
	}
	fprintf(fp, "],\"cashflow\":[");
	struct cashflow *cf = malloc(sizeof(*cf));
	if (!cf)
		return DIAG_ENOMEM;
	size_t k = 0;
	for (size_t i = 0; i < r->n; i++) {
		const struct compare_row *row = &r->rows[i];
		if (row->option == COST_SEATS || row->option == COST_API || row->hy.on)
			continue;
		bool seen = false;
		for (size_t j = 0; j < i; j++)
			seen |= !r->rows[j].hy.on && strcmp(r->rows[j].hardware, row->hardware) == 0;
		if (seen)
			continue;
		struct diag d;
		diag_init(&d);
		fprintf(fp, "%s{\"hardware\":", k++ ? "," : "");
		jsonw_str(fp, row->hardware);
		fprintf(fp, ",\"result\":");
		if (cash_of(c, r, row->hardware, cf, &d) == 0) {
			cashflow_json(fp, cf);
		} else {
			fprintf(fp, "null,\"error\":");
			jsonw_str(fp, d.msg);
		}
		fputc('}', fp);
	}
	free(cf);
	fprintf(fp, "]}\n");
	return ferror(fp) ? DIAG_EIO : 0;
}
