/* SPDX-License-Identifier: Apache-2.0
 * backends: per-backend figures of a local-plus-cloud run (see backends.h). */
#include "reports/backends.h"

#include "base/diag.h"
#include "base/map.h"
#include "base/vec.h"
#include "reports/metrics.h"

#include <stdlib.h>
#include <string.h>

struct backends {
	struct res_sink next;
	int64_t api_tasks;                /* tasks with a bit above row 0 */
	int32_t n;                        /* rows */
	struct backends_api api[BACKENDS_MAX_ROWS];
	struct backends_row rows[BACKENDS_MAX_ROWS];
	struct vec ttft[BACKENDS_MAX_ROWS]; /* double ms, one per call */
	struct vec e2el[BACKENDS_MAX_ROWS];
	struct map task_rows;             /* task id -> bit per row it used */
	int err;
};

struct backends *backends_new(const struct backends_api *apis, int32_t n, struct res_sink next)
{
	if (n < 0 || n + 1 > BACKENDS_MAX_ROWS)
		return NULL;
	struct backends *b = calloc(1, sizeof(*b));
	if (!b)
		return NULL;
	b->next = next;
	b->n = n + 1;
	map_init(&b->task_rows);
	for (int32_t k = 0; k < b->n; k++) {
		vec_init(&b->ttft[k], sizeof(double), VEC_NO_LIMIT);
		vec_init(&b->e2el[k], sizeof(double), VEC_NO_LIMIT);
		struct backends_row *r = &b->rows[k];
		if (k == 0) {
			r->name = "local";
			r->kind = "local";
			continue;
		}
		b->api[k] = apis[k - 1];
		r->name = apis[k - 1].name;
		r->kind = apis[k - 1].kind;
		r->price_id = apis[k - 1].price_id;
		r->seat_usd_month = apis[k - 1].seat_usd_month;
	}
	return b;
}

void backends_free(struct backends *b)
{
	if (!b)
		return;
	for (int32_t k = 0; k < b->n; k++) {
		vec_release(&b->ttft[k]);
		vec_release(&b->e2el[k]);
	}
	map_release(&b->task_rows);
	free(b);
}

static void on_request(void *ctx, const struct res_request *r)
{
	struct backends *b = ctx;
	int32_t lim = r->limited_backend;
	if (lim > 0 && lim < b->n && !b->err) {
		struct backends_row *row = &b->rows[lim];
		row->rate_limited += r->rate_limited;
		row->backoff_s += (double)r->backoff_ns / 1e9;
		row->limit_failed += r->status != RES_COMPLETED;
	}
	if (r->status == RES_COMPLETED && !b->err) {
		int32_t k = r->backend >= 0 && r->backend < b->n ? r->backend : 0;
		struct backends_row *row = &b->rows[k];
		row->calls++;
		row->prompt_tokens += r->prompt_tokens;
		row->cached_prompt_tokens += r->cached_prompt_tokens;
		int64_t written = 0;
		if (k > 0 && b->api[k].cache && r->prompt_tokens >= b->api[k].cache_min_tokens)
			written = r->prompt_tokens - r->cached_prompt_tokens;
		row->cache_write_tokens += written;
		row->output_tokens += r->output_tokens;
		const struct cost_api *list = k > 0 ? b->api[k].list : NULL;
		if (list) {
			int cls = cost_api_class(list, r->prompt_tokens, r->arrival_ns);
			cost_api_tokens_add(row->by_class, cls, r->prompt_tokens,
					    r->cached_prompt_tokens, written, r->output_tokens);
			if (list->off_peak && !list->clock_set)
				row->clock_assumed = true;
		}
		if (r->route >= 0 && r->route < RES_N_ROUTES)
			row->by_route[r->route]++;
		double ttft = (double)(r->first_token_ns - r->arrival_ns) / 1e6;
		double e2el = (double)(r->done_ns - r->arrival_ns) / 1e6;
		double *pt = vec_push(&b->ttft[k]), *pe = pt ? vec_push(&b->e2el[k]) : NULL;
		if (!pt || !pe)
			b->err = DIAG_ENOMEM;
		else {
			*pt = ttft;
			*pe = e2el;
		}
		if (r->task) {
			uint64_t *bits = map_ref(&b->task_rows, r->task);
			if (!bits)
				b->err = DIAG_ENOMEM;
			else
				*bits |= UINT64_C(1) << k;
		}
	}
	if (b->next.request)
		b->next.request(b->next.ctx, r);
}

static void on_itl(void *ctx, const struct res_itl_run *r)
{
	struct backends *b = ctx;
	if (b->next.itl_run)
		b->next.itl_run(b->next.ctx, r);
}

static void on_busy(void *ctx, const struct res_busy *x)
{
	struct backends *b = ctx;
	if (b->next.busy)
		b->next.busy(b->next.ctx, x);
}

static void on_session(void *ctx, const struct res_span *s)
{
	struct backends *b = ctx;
	if (b->next.session)
		b->next.session(b->next.ctx, s);
}

static void on_task(void *ctx, const struct res_span *t)
{
	struct backends *b = ctx;
	uint64_t *bits = map_get(&b->task_rows, t->id);
	if (bits) {
		for (int32_t k = 0; k < b->n; k++)
			b->rows[k].tasks += (*bits >> k) & 1u;
		b->api_tasks += (*bits >> 1) != 0;
		map_del(&b->task_rows, t->id);
	}
	if (b->next.task)
		b->next.task(b->next.ctx, t);
}

static void on_replica(void *ctx, const struct res_replica *r)
{
	struct backends *b = ctx;
	if (b->next.replica)
		b->next.replica(b->next.ctx, r);
}

static void on_sample(void *ctx, const struct res_sample *s)
{
	struct backends *b = ctx;
	if (b->next.sample)
		b->next.sample(b->next.ctx, s);
}

struct res_sink backends_sink(struct backends *b)
{
	struct res_sink s = {.ctx = b, .request = on_request, .itl_run = on_itl, .busy = on_busy,
			     .session = on_session, .task = on_task,
			     .replica = b->next.replica ? on_replica : NULL,
			     .sample = b->next.sample ? on_sample : NULL};
	return s;
}

/* Statistics of a copy of v (metrics_stats_of sorts in place). */
static int stats_of(const struct vec *v, struct metrics_stats *st)
{
	size_t n = v->len;
	double *x = malloc((n ? n : 1) * sizeof(*x));
	if (!x)
		return DIAG_ENOMEM;
	if (n)
		memcpy(x, v->data, n * sizeof(*x));
	metrics_stats_of(x, n, st);
	free(x);
	return 0;
}

int64_t backends_api_tasks(const struct backends *b)
{
	return b->api_tasks;
}

int backends_summarize(const struct backends *b, struct backends_summary *out, struct diag *d)
{
	memset(out, 0, sizeof(*out));
	if (b->err)
		return diag_set(d, b->err, "out of memory for the per-backend figures");
	out->n = b->n;
	int64_t by_route[RES_N_ROUTES] = {0};
	for (int32_t k = 0; k < b->n; k++) {
		out->calls += b->rows[k].calls;
		for (int x = 0; x < RES_N_ROUTES; x++)
			by_route[x] += b->rows[k].by_route[x];
	}
	for (int32_t k = 0; k < b->n; k++) {
		struct backends_row *r = &out->rows[k];
		*r = b->rows[k];
		r->call_share = out->calls ? (double)r->calls / (double)out->calls : 0.0;
		const struct backends_api *a = &b->api[k];
		if (k > 0 && strcmp(r->kind, "api") == 0 && a->list) {
			r->usd = cost_api_usd(a->list, r->by_class);
			out->usd += r->usd;
		}
		if (k > 0)
			out->api_share += r->call_share;
		struct metrics_stats t, e;
		if (stats_of(&b->ttft[k], &t) != 0 || stats_of(&b->e2el[k], &e) != 0)
			return diag_set(d, DIAG_ENOMEM, "out of memory for the per-backend figures");
		r->ttft_mean_ms = t.mean;
		r->ttft_median_ms = t.median;
		r->ttft_p90_ms = t.p90;
		r->ttft_p95_ms = t.p95;
		r->ttft_p99_ms = t.p99;
		r->e2el_mean_ms = e.mean;
		r->e2el_median_ms = e.median;
		r->e2el_p90_ms = e.p90;
		r->e2el_p95_ms = e.p95;
		r->e2el_p99_ms = e.p99;
	}
	if (out->calls) {
		out->spilled_share = (double)by_route[RES_ROUTE_SPILL] / (double)out->calls;
		out->fallback_share = (double)by_route[RES_ROUTE_FALLBACK] / (double)out->calls;
		out->size_share = (double)by_route[RES_ROUTE_SIZE] / (double)out->calls;
	}
	return 0;
}
