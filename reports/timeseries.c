/* SPDX-License-Identifier: Apache-2.0
 * timeseries: keep a run's time-series samples (see timeseries.h). */
#include "reports/timeseries.h"

#include "base/diag.h"

#include <stdlib.h>
#include <string.h>

struct timeseries {
	struct res_sink inner;
	int32_t n;
	struct res_sample *rows;           /* cluster rows; .replicas fixed up on read */
	struct res_sample_replica *reps;   /* n per sample */
	int64_t len, cap;
	int err;                           /* first failure: DIAG_EINPUT, _ENOMEM, _EINTERNAL */
};

struct timeseries *timeseries_new(int32_t replicas, struct res_sink inner)
{
	if (replicas < 1)
		return NULL;
	struct timeseries *ts = calloc(1, sizeof(*ts));
	if (!ts)
		return NULL;
	ts->inner = inner;
	ts->n = replicas;
	return ts;
}

void timeseries_free(struct timeseries *ts)
{
	if (!ts)
		return;
	free(ts->rows);
	free(ts->reps);
	free(ts);
}

static int grow(struct timeseries *ts)
{
	int64_t ncap = ts->cap ? 2 * ts->cap : 256;
	if (ncap * ts->n > TIMESERIES_MAX_ROWS)
		ncap = TIMESERIES_MAX_ROWS / ts->n;
	if (ncap <= ts->cap)
		return DIAG_EINPUT;
	struct res_sample *r = realloc(ts->rows, (size_t)ncap * sizeof(*r));
	if (r)
		ts->rows = r;
	struct res_sample_replica *p = realloc(ts->reps, (size_t)(ncap * ts->n) * sizeof(*p));
	if (p)
		ts->reps = p;
	if (!r || !p)
		return DIAG_ENOMEM;
	ts->cap = ncap;
	return 0;
}

static void on_sample(void *ctx, const struct res_sample *s)
{
	struct timeseries *ts = ctx;
	if (!ts->err && s->n_replicas != ts->n)
		ts->err = DIAG_EINTERNAL;
	if (!ts->err && ts->len == ts->cap)
		ts->err = grow(ts);
	if (!ts->err) {
		ts->rows[ts->len] = *s;
		ts->rows[ts->len].replicas = NULL;
		memcpy(&ts->reps[ts->len * ts->n], s->replicas, (size_t)ts->n * sizeof(*ts->reps));
		ts->len++;
	}
	if (ts->inner.sample)
		ts->inner.sample(ts->inner.ctx, s);
}

static void on_request(void *ctx, const struct res_request *r)
{
	struct timeseries *ts = ctx;
	if (ts->inner.request)
		ts->inner.request(ts->inner.ctx, r);
}

static void on_itl(void *ctx, const struct res_itl_run *r)
{
	struct timeseries *ts = ctx;
	if (ts->inner.itl_run)
		ts->inner.itl_run(ts->inner.ctx, r);
}

static void on_busy(void *ctx, const struct res_busy *b)
{
	struct timeseries *ts = ctx;
	if (ts->inner.busy)
		ts->inner.busy(ts->inner.ctx, b);
}

static void on_session(void *ctx, const struct res_span *s)
{
	struct timeseries *ts = ctx;
	if (ts->inner.session)
		ts->inner.session(ts->inner.ctx, s);
}

static void on_task(void *ctx, const struct res_span *t)
{
	struct timeseries *ts = ctx;
	if (ts->inner.task)
		ts->inner.task(ts->inner.ctx, t);
}

static void on_replica(void *ctx, const struct res_replica *r)
{
	struct timeseries *ts = ctx;
	if (ts->inner.replica)
		ts->inner.replica(ts->inner.ctx, r);
}

struct res_sink timeseries_sink(struct timeseries *ts)
{
	struct res_sink s = {.ctx = ts, .request = on_request, .itl_run = on_itl, .busy = on_busy,
			     .session = on_session, .task = on_task, .replica = on_replica,
			     .sample = on_sample};
	return s;
}

int timeseries_check(const struct timeseries *ts, struct diag *d)
{
	switch (ts->err) {
	case 0:
		return 0;
	case DIAG_EINPUT:
		return diag_set(d, DIAG_EINPUT,
				"the time series would pass %lld replica samples: raise report.interval_s",
				(long long)TIMESERIES_MAX_ROWS);
	case DIAG_ENOMEM:
		return diag_set(d, DIAG_ENOMEM, "out of memory for the time series");
	default:
		return diag_set(d, DIAG_EINTERNAL, "a time-series sample has the wrong replica count");
	}
}

int64_t timeseries_len(const struct timeseries *ts)
{
	return ts->len;
}

int32_t timeseries_replicas(const struct timeseries *ts)
{
	return ts->n;
}

const struct res_sample *timeseries_at(const struct timeseries *ts, int64_t k)
{
	ts->rows[k].replicas = &ts->reps[k * ts->n];
	return &ts->rows[k];
}
