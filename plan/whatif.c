/* SPDX-License-Identifier: Apache-2.0
 * whatif: two replays of one trace and their comparison, and with a sizing
 * the deployment and monthly cost of each (see whatif.h). */
#include "plan/whatif.h"

#include "base/diag.h"
#include "base/pool.h"
#include "models/cost.h"
#include "plan/compare.h"
#include "plan/run.h"
#include "replay/replay.h"
#include "replay/slo.h"
#include "reports/charts.h"
#include "reports/output.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void whatif_result_release(struct whatif_result *r)
{
	for (int i = 0; i < 2; i++) {
		metrics_free(r->side[i].m);
		r->side[i].m = NULL;
		if (r->side[i].size)
			size_result_release(r->side[i].size);
		free(r->side[i].size);
		r->side[i].size = NULL;
		free(r->side[i].cost);
		r->side[i].cost = NULL;
	}
}

/* Size variant v as `agentcap size` does. */
static int size_side(const struct whatif_setup *s, const struct whatif_variant *v,
		     struct whatif_side *w, struct diag *d)
{
	const struct whatif_sizing *z = s->sizing;
	struct size_setup *ss = &w->sizing;
	*ss = (struct size_setup){
		.cat = z->cat,
		.base = z->base,
		.hardware = z->hardware,
		.n_hardware = z->n_hardware,
		.slo = z->slo,
		.replay = s->replay,
		.traces = &s->replay.trace_path,
		.seeds = &s->replay.seed,
		.replicates = 1,
		.confidence = 1.0,
		.max_replicas = z->max_replicas,
		.prices = z->prices,
		/* a rules object keeps its match data between calls: the
		 * replays that share one run one after another */
		.pool = v->xform.rules ? NULL : s->pool,
	};
	ss->replay.xform = &v->xform;
	ss->replay.compact_at = v->compact_at;
	if (!(w->size = calloc(1, sizeof(*w->size))))
		return diag_set(d, DIAG_ENOMEM, "out of memory");
	return size_run(ss, w->size, d);
}

/* Price side w's winners as `agentcap size` prices them. */
static int price_side(const struct whatif_setup *s, int64_t days, struct whatif_side *w,
		      struct diag *d)
{
	const struct whatif_sizing *z = s->sizing;
	if (size_found(w->size) == 0)
		return 0;
	struct compare_setup cs = {.size = &w->sizing, .cat = z->cat, .prices = z->prices,
				   .api_id = z->api_id, .seat_id = z->seat_id,
				   .engineers = z->engineers, .days = days};
	cost_task_default(&cs.task);
	cost_task_default(&cs.base_task);
	if (!(w->cost = malloc(sizeof(*w->cost))))
		return diag_set(d, DIAG_ENOMEM, "out of memory");
	return compare_run(&cs, w->size, w->cost, d);
}

/* One variant's replay or its sizing (or, for a variant with rules, the
 * one then the other), as a pool task. */
struct side_task {
	const struct whatif_setup *s;
	const struct whatif_variant *v;
	struct whatif_side *w;
	bool replay, size;
	int rc;
	struct diag d;
};

static int replay_side(const struct whatif_setup *s, const struct whatif_variant *v,
		       struct whatif_side *w, struct diag *d)
{
	struct run_setup rs = {
		.dep = s->dep,
		.replay = s->replay,
		.vary = {.compact = s->compact},
		.own_slo = true,
		.slo_ttft_ms = s->slo_ttft_ms,
		.slo_tpot_ms = s->slo_tpot_ms,
	};
	rs.replay.xform = &v->xform;
	rs.replay.compact_at = v->compact_at;
	struct run_result *r = malloc(sizeof(*r));
	int rc = r ? run_replay(&rs, r, d) : diag_set(d, DIAG_ENOMEM, "out of memory");
	if (rc == 0) {
		w->sum = r->sum;
		w->st = r->st;
		w->m = r->m; /* the summary points into it */
		r->m = NULL;
	}
	if (r)
		run_release(r);
	free(r);
	return rc;
}

static void side_task_run(void *arg)
{
	struct side_task *t = arg;
	if (t->replay)
		t->rc = replay_side(t->s, t->v, t->w, &t->d);
	if (t->rc == 0 && t->size)
		t->rc = size_side(t->s, t->v, t->w, &t->d);
}

int whatif_run(const struct whatif_setup *s, const struct whatif_variant v[2],
	       struct whatif_result *r, struct diag *d)
{
	memset(r, 0, sizeof(*r));
	for (int i = 0; i < 2; i++)
		snprintf(r->side[i].label, sizeof(r->side[i].label), "%s",
			 v[i].label ? v[i].label : "?");
	/* the replays, and the sizings beside them; a variant with rules does
	 * one after the other in one task */
	struct side_task t[4];
	int n = 0;
	for (int i = 0; i < 2; i++) {
		bool apart = s->sizing && !v[i].xform.rules;
		t[n++] = (struct side_task){.s = s, .v = &v[i], .w = &r->side[i], .replay = true,
					    .size = s->sizing && !apart};
		if (apart)
			t[n++] = (struct side_task){.s = s, .v = &v[i], .w = &r->side[i],
						    .size = true};
	}
	struct pool_group *g = pool_group_new(s->pool);
	for (int i = 0; i < n; i++) {
		diag_init(&t[i].d);
		pool_run(g, side_task_run, &t[i]);
	}
	pool_group_finish(g);
	for (int i = 0; i < n; i++)
		if (t[i].rc != 0)
			return diag_set(d, t[i].rc, "%s", t[i].d.msg);
	if (!s->sizing)
		return 0;
	r->sized = true;
	slo_format(s->sizing->slo, r->slo, sizeof(r->slo));
	/* the month: a resampled team's days; else the whole days the trace as
	 * recorded spans (the same for both variants) */
	/* a team's own working days, as replay --cost, size and compare count
	 * them (a one-day team across time zones is one day, not the two UTC
	 * dates it touches); a request-level trace keeps the whole days its
	 * span covers */
	int64_t engineers = 0;
	int rc = replay_month_days(&s->replay, &r->side[0].st, &r->days, &engineers, d);
	if (rc != 0)
		return rc;
	if (r->days == 0)
		r->days = (int64_t)ceil(r->side[0].sum.duration_s / 86400.0);
	if (r->days < 1)
		r->days = 1;
	for (int i = 0; i < 2 && rc == 0; i++)
		rc = price_side(s, r->days, &r->side[i], d);
	return rc;
}

/* USD per month of hardware hw's winner under option o, or NAN. */
static double usd_month(const struct whatif_side *w, const char *hw, enum cost_option o)
{
	if (!w->cost)
		return NAN;
	for (size_t i = 0; i < w->cost->n; i++) {
		const struct compare_row *row = &w->cost->rows[i];
		if (row->option == o && strcmp(row->hardware, hw) == 0)
			return row->r.usd_month;
	}
	return NAN;
}

static double gpus_of(const struct size_option *o)
{
	return o->found ? (double)o->best.gpus : NAN;
}

size_t whatif_rows(const struct whatif_result *r, struct whatif_row *rows, size_t max)
{
	const struct metrics_summary *a = &r->side[0].sum, *b = &r->side[1].sum;
	const struct whatif_row all[] = {
		{"completed", "Requests completed", "", NULL, (double)a->completed,
		 (double)b->completed, 0},
		{"failed", "Requests failed", "", NULL, (double)a->failed, (double)b->failed, 0},
		{"prompt_tokens", "Prompt tokens", "tokens", NULL, (double)a->prompt_tokens,
		 (double)b->prompt_tokens, 0},
		{"prefill_tokens_computed", "Prefill tokens computed", "tokens", NULL,
		 (double)a->computed_prefill_tokens, (double)b->computed_prefill_tokens, 0},
		{"prefix_cache_hit_rate", "Prefix cache hit rate", "%", NULL,
		 100 * a->prefix_cache_hit_rate, 100 * b->prefix_cache_hit_rate, 2},
		{"mean_ttft_ms", "Mean TTFT", "ms", NULL, a->ttft_ms.mean, b->ttft_ms.mean, 2},
		{"median_ttft_ms", "Median TTFT", "ms", NULL, a->ttft_ms.median, b->ttft_ms.median, 2},
		{"p90_ttft_ms", "P90 TTFT", "ms", NULL, a->ttft_ms.p90, b->ttft_ms.p90, 2},
		{"p99_ttft_ms", "P99 TTFT", "ms", NULL, a->ttft_ms.p99, b->ttft_ms.p99, 2},
		{"mean_tpot_ms", "Mean TPOT", "ms", NULL, a->tpot_ms.mean, b->tpot_ms.mean, 2},
		{"median_tpot_ms", "Median TPOT", "ms", NULL, a->tpot_ms.median, b->tpot_ms.median, 2},
		{"p90_tpot_ms", "P90 TPOT", "ms", NULL, a->tpot_ms.p90, b->tpot_ms.p90, 2},
		{"p99_tpot_ms", "P99 TPOT", "ms", NULL, a->tpot_ms.p99, b->tpot_ms.p99, 2},
		{"request_goodput", "Request goodput", "req/s", NULL, a->request_goodput,
		 b->request_goodput, 4},
		{"slo_attainment", "SLO attainment", "%", NULL, 100 * a->slo_attainment,
		 100 * b->slo_attainment, 2},
		{"gpu_busy_fraction", "GPU busy fraction", "%", NULL, 100 * a->gpu_busy_fraction,
		 100 * b->gpu_busy_fraction, 2},
		{"duration_s", "Duration", "s", NULL, a->duration_s, b->duration_s, 2},
	};
	size_t n = sizeof(all) / sizeof(all[0]);
	if (n > max)
		n = max;
	memcpy(rows, all, n * sizeof(*rows));
	if (!r->sized || !r->side[0].size || !r->side[1].size)
		return n;
	/* the options are the same, in the same order, for both variants */
	const struct size_result *sa = r->side[0].size, *sb = r->side[1].size;
	for (size_t i = 0; i < sa->n && i < sb->n; i++) {
		const char *hw = sa->opt[i].hardware;
		const struct whatif_row more[] = {
			{"gpus", "GPUs needed", "GPUs", hw, gpus_of(&sa->opt[i]), gpus_of(&sb->opt[i]),
			 0},
			{"usd_month_purchase", "Purchase", "USD/month", hw,
			 usd_month(&r->side[0], hw, COST_PURCHASE),
			 usd_month(&r->side[1], hw, COST_PURCHASE), 2},
			{"usd_month_dedicated", "Dedicated rental", "USD/month", hw,
			 usd_month(&r->side[0], hw, COST_DEDICATED),
			 usd_month(&r->side[1], hw, COST_DEDICATED), 2},
			{"usd_month_elastic", "Elastic rental", "USD/month", hw,
			 usd_month(&r->side[0], hw, COST_ELASTIC),
			 usd_month(&r->side[1], hw, COST_ELASTIC), 2},
		};
		for (size_t k = 0; k < sizeof(more) / sizeof(more[0]) && n < max; k++)
			rows[n++] = more[k];
	}
	return n;
}

static void row_label(const struct whatif_row *w, char *buf, size_t size)
{
	if (w->hardware)
		snprintf(buf, size, "%s, %s (%s)", w->label, w->hardware, w->unit);
	else
		snprintf(buf, size, w->unit[0] ? "%s (%s)" : "%s", w->label, w->unit);
}

/* Why option o has no deployment (its search found none). */
static const char *why_none(const struct size_option *o)
{
	return o->n_path ? "no deployment meets the objectives"
			 : "no shape runs (agentcap size says why)";
}

/* "2 x TP4 (8 GPUs)", or why there is none. */
static void deployment_text(const struct size_option *o, char *buf, size_t size)
{
	char dep[48];
	if (!o->found) {
		snprintf(buf, size, "%s", why_none(o));
		return;
	}
	size_eval_label(&o->best, dep, sizeof(dep));
	snprintf(buf, size, "%s (%d GPU%s)", dep, o->best.gpus, o->best.gpus == 1 ? "" : "s");
}

void whatif_table(FILE *fp, const char *kind, const struct whatif_result *r)
{
	struct whatif_row rows[WHATIF_MAX_ROWS];
	size_t n = whatif_rows(r, rows, WHATIF_MAX_ROWS);
	int width = 28;
	char label[160];
	for (size_t i = 0; i < n; i++) {
		row_label(&rows[i], label, sizeof(label));
		if ((int)strlen(label) > width)
			width = (int)strlen(label);
	}
	fprintf(fp, "============= What-if: %s =============\n", kind);
	fprintf(fp, "%-*s %18s %18s %18s %9s\n", width, "", r->side[0].label, r->side[1].label,
		"difference", "ratio");
	for (size_t i = 0; i < n; i++) {
		const struct whatif_row *w = &rows[i];
		row_label(w, label, sizeof(label));
		char a[32] = "-", b[32] = "-", diff[32] = "-", ratio[32] = "-";
		if (!isnan(w->a))
			snprintf(a, sizeof(a), "%.*f", w->digits, w->a);
		if (!isnan(w->b))
			snprintf(b, sizeof(b), "%.*f", w->digits, w->b);
		if (!isnan(w->a) && !isnan(w->b))
			snprintf(diff, sizeof(diff), "%+.*f", w->digits, w->b - w->a);
		if (w->a != 0 && isfinite(w->b / w->a))
			snprintf(ratio, sizeof(ratio), "%.3fx", w->b / w->a);
		fprintf(fp, "%-*s %18s %18s %18s %9s\n", width, label, a, b, diff, ratio);
	}
	if (r->sized && r->side[0].size && r->side[1].size) {
		/* the month compare priced with (the scenario's calendar) */
		const struct compare_result *cr = r->side[0].cost ? r->side[0].cost : r->side[1].cost;
		double periods = cr ? cr->periods_per_month
				    : COST_WORKDAYS_PER_MONTH / (double)r->days;
		fprintf(fp, "Deployments meeting %s, no call failing (agentcap size; a month is %.2f "
			"replays of %lld day%s):\n", r->slo, periods, (long long)r->days,
			r->days == 1 ? "" : "s");
		const struct size_result *sa = r->side[0].size, *sb = r->side[1].size;
		for (size_t i = 0; i < sa->n && i < sb->n; i++) {
			char da[96], db[96];
			deployment_text(&sa->opt[i], da, sizeof(da));
			deployment_text(&sb->opt[i], db, sizeof(db));
			fprintf(fp, "  %s: %s %s; %s %s\n", sa->opt[i].hardware, r->side[0].label, da,
				r->side[1].label, db);
		}
	}
	fprintf(fp, "==================================================\n");
}

/* The shortest of %.15g, %.16g, %.17g that reads back to x; null when x
 * is not finite (docs/output-schema.md). */
static void json_num(FILE *fp, double x)
{
	if (!isfinite(x)) {
		fputs("null", fp);
		return;
	}
	char buf[40];
	for (int p = 15; p <= 17; p++) {
		snprintf(buf, sizeof(buf), "%.*g", p, x);
		if (strtod(buf, NULL) == x)
			break;
	}
	fputs(buf, fp);
}

static void json_size_variant(FILE *fp, const struct whatif_side *w, const struct size_option *o)
{
	const struct size_eval *e = &o->best;
	fprintf(fp, "{\"variant\":\"%s\",\"found\":%s,", w->label, o->found ? "true" : "false");
	if (o->found) {
		char dep[48];
		size_eval_label(e, dep, sizeof(dep));
		fprintf(fp, "\"deployment\":\"%s\",\"replicas\":%d,\"tensor_parallel_size\":%d,"
			"\"pipeline_parallel_size\":%d,\"gpus\":%d,\"why\":null", dep, e->replicas, e->tp,
			e->pp, e->gpus);
	} else {
		fprintf(fp, "\"deployment\":null,\"replicas\":null,\"tensor_parallel_size\":null,"
			"\"pipeline_parallel_size\":null,\"gpus\":null,\"why\":\"%s\"", why_none(o));
	}
	fprintf(fp, ",\"replays\":%d,\"usd_month\":{\"purchase\":", o->replays);
	json_num(fp, usd_month(w, o->hardware, COST_PURCHASE));
	fprintf(fp, ",\"dedicated\":");
	json_num(fp, usd_month(w, o->hardware, COST_DEDICATED));
	fprintf(fp, ",\"elastic\":");
	json_num(fp, usd_month(w, o->hardware, COST_ELASTIC));
	fprintf(fp, "}}");
}

int whatif_json(FILE *fp, const char *kind, uint64_t seed, const struct report_run *run,
		const struct whatif_result *r)
{
	struct whatif_row rows[WHATIF_MAX_ROWS];
	size_t n = whatif_rows(r, rows, WHATIF_MAX_ROWS);
	fprintf(fp, "{\"schema\":\"agentcap-whatif\",\"version\":1,");
	if (run) {
		report_run_json(fp, run);
		fputc(',', fp);
	}
	fprintf(fp, "\"whatif\":\"%s\",\"seed\":%llu,"
		"\"variants\":[\"%s\",\"%s\"],\"rows\":[", kind, (unsigned long long)seed,
		r->side[0].label, r->side[1].label);
	for (size_t i = 0; i < n; i++) {
		const struct whatif_row *w = &rows[i];
		fprintf(fp, "%s{\"key\":\"%s\",", i ? "," : "", w->key);
		if (w->hardware)
			fprintf(fp, "\"hardware\":\"%s\",", w->hardware);
		fprintf(fp, "\"unit\":\"%s\",\"a\":", w->unit);
		json_num(fp, w->a);
		fprintf(fp, ",\"b\":");
		json_num(fp, w->b);
		fprintf(fp, ",\"diff\":");
		json_num(fp, w->b - w->a);
		fprintf(fp, "}");
	}
	fprintf(fp, "]");
	if (r->sized && r->side[0].size && r->side[1].size) {
		fprintf(fp, ",\"size\":{\"slo\":\"%s\",\"days\":%lld,\"options\":[", r->slo,
			(long long)r->days);
		const struct size_result *sa = r->side[0].size, *sb = r->side[1].size;
		for (size_t i = 0; i < sa->n && i < sb->n; i++) {
			fprintf(fp, "%s{\"hardware\":\"%s\",\"variants\":[", i ? "," : "",
				sa->opt[i].hardware);
			json_size_variant(fp, &r->side[0], &sa->opt[i]);
			fprintf(fp, ",");
			json_size_variant(fp, &r->side[1], &sb->opt[i]);
			fprintf(fp, "]}");
		}
		fprintf(fp, "]}");
	}
	fprintf(fp, ",\"charts\":[");
	for (int k = 0; k < 2; k++) {
		struct charts *c = malloc(sizeof(*c));
		struct diag d;
		diag_init(&d);
		if (!c || charts_init(c, r->side[k].m, r->side[k].sum.duration_s, &d) != 0) {
			free(c);
			return DIAG_ENOMEM;
		}
		fputs(k ? "," : "", fp);
		charts_json(fp, c);
		charts_release(c);
		free(c);
	}
	fprintf(fp, "]}\n");
	return ferror(fp) ? DIAG_EIO : 0;
}
