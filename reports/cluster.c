/* SPDX-License-Identifier: Apache-2.0
 * cluster: per-replica aggregation over the records of a run (see cluster.h). */
#include "reports/cluster.h"

#include <stdlib.h>
#include <string.h>

struct cluster {
	struct res_sink inner;
	int32_t n;
	struct cluster_replica *rep;
	int64_t *busy_ns;
	int64_t stray;
};

struct cluster *cluster_new(int32_t replicas, struct res_sink inner)
{
	if (replicas < 1)
		return NULL;
	struct cluster *c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->inner = inner;
	c->n = replicas;
	c->rep = calloc((size_t)replicas, sizeof(*c->rep));
	c->busy_ns = calloc((size_t)replicas, sizeof(*c->busy_ns));
	if (!c->rep || !c->busy_ns) {
		cluster_free(c);
		return NULL;
	}
	return c;
}

void cluster_free(struct cluster *c)
{
	if (!c)
		return;
	free(c->rep);
	free(c->busy_ns);
	free(c);
}

static void on_request(void *ctx, const struct res_request *r)
{
	struct cluster *c = ctx;
	if (r->status == RES_COMPLETED) {
		if (r->replica < 0 || r->replica >= c->n) {
			c->stray++;
		} else {
			struct cluster_replica *p = &c->rep[r->replica];
			p->requests++;
			p->prompt_tokens += r->prompt_tokens;
			p->cached_prompt_tokens += r->cached_prompt_tokens;
			p->preemptions += r->preemptions;
		}
	}
	if (c->inner.request)
		c->inner.request(c->inner.ctx, r);
}

static void on_busy(void *ctx, const struct res_busy *b)
{
	struct cluster *c = ctx;
	if (b->replica < 0 || b->replica >= c->n)
		c->stray++;
	else
		c->busy_ns[b->replica] += b->end_ns - b->start_ns;
	if (c->inner.busy)
		c->inner.busy(c->inner.ctx, b);
}

static void on_itl(void *ctx, const struct res_itl_run *r)
{
	struct cluster *c = ctx;
	if (c->inner.itl_run)
		c->inner.itl_run(c->inner.ctx, r);
}

static void on_session(void *ctx, const struct res_span *s)
{
	struct cluster *c = ctx;
	if (c->inner.session)
		c->inner.session(c->inner.ctx, s);
}

static void on_task(void *ctx, const struct res_span *t)
{
	struct cluster *c = ctx;
	if (c->inner.task)
		c->inner.task(c->inner.ctx, t);
}

struct res_sink cluster_sink(struct cluster *c)
{
	struct res_sink s = {.ctx = c, .request = on_request, .itl_run = on_itl, .busy = on_busy,
			     .session = on_session, .task = on_task};
	return s;
}

void cluster_summarize(struct cluster *c, double duration_s, int32_t gpus_per_replica,
		       struct cluster_summary *out)
{
	memset(out, 0, sizeof(*out));
	out->replicas = c->n;
	out->gpus_per_replica = gpus_per_replica;
	double busy_s = 0.0;
	for (int32_t i = 0; i < c->n; i++) {
		struct cluster_replica *p = &c->rep[i];
		p->busy_s = (double)c->busy_ns[i] / 1e9;
		p->busy_fraction = duration_s > 0.0 ? p->busy_s / duration_s : 0.0;
		p->prefix_cache_hit_rate =
			p->prompt_tokens > 0 ? (double)p->cached_prompt_tokens / (double)p->prompt_tokens : 0.0;
		busy_s += p->busy_s;
	}
	out->gpu_hours_provisioned = (double)c->n * gpus_per_replica * duration_s / 3600.0;
	out->gpu_hours_busy = (double)gpus_per_replica * busy_s / 3600.0;
	out->per_replica = c->rep;
}

int64_t cluster_stray(const struct cluster *c)
{
	return c->stray;
}
