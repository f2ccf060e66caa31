/* SPDX-License-Identifier: Apache-2.0
 * cluster: per-replica aggregation over the records of a run (see cluster.h). */
#include "reports/cluster.h"

#include "base/diag.h"
#include "reports/loghist.h"

#include <stdlib.h>
#include <string.h>

struct cluster {
	struct res_sink inner;
	int32_t n;
	struct cluster_replica *rep;
	int64_t *busy_ns;
	int64_t stray;
	int32_t n_pools;            /* 0: one shape */
	struct cluster_pool *pools;
	int32_t *pool_of;           /* per replica */
	struct loghist *ttft_ns;    /* per pool */
	bool ttft_lost;             /* a TTFT could not be added (no memory) */
	struct cluster_point *tl;    /* the replica timeline */
	size_t tl_len, tl_cap;
	bool tl_oom;                 /* a record could not be kept */
	struct cluster_move {        /* every replica record, for per-pool
					billing and the billed stretches */
		int64_t t_ns;
		int32_t replica, to;
	} *moves;
	size_t n_moves, moves_cap;
	struct cost_stretch *stretches; /* the last cluster_summarize's */
	size_t n_stretches;
	bool have_req;
	int64_t first_arrival_ns, last_end_ns;
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
	c->tl_len = 1;
	c->rep = calloc((size_t)replicas, sizeof(*c->rep));
	c->busy_ns = calloc((size_t)replicas, sizeof(*c->busy_ns));
	c->tl = calloc(8, sizeof(*c->tl));
	c->tl_cap = 8;
	if (!c->rep || !c->busy_ns || !c->tl) {
		cluster_free(c);
		return NULL;
	}
	c->tl[0].n[REP_UP] = replicas;
	return c;
}

void cluster_free(struct cluster *c)
{
	if (!c)
		return;
	free(c->rep);
	free(c->busy_ns);
	for (int32_t p = 0; p < c->n_pools; p++)
		loghist_release(&c->ttft_ns[p]);
	free(c->ttft_ns);
	free(c->pools);
	free(c->pool_of);
	free(c->tl);
	free(c->moves);
	free(c->stretches);
	free(c);
}

int cluster_set_pools(struct cluster *c, const struct cluster_pool *pools, int32_t n_pools)
{
	if (c->n_pools || n_pools < 1)
		return DIAG_EINPUT;
	int32_t next = 0;
	for (int32_t p = 0; p < n_pools; p++) {
		if (pools[p].first != next || pools[p].replicas < 1 || pools[p].gpus_per_replica < 1 ||
		    pools[p].replicas > c->n - next)
			return DIAG_EINPUT;
		next += pools[p].replicas;
	}
	if (next != c->n)
		return DIAG_EINPUT;
	c->pools = calloc((size_t)n_pools, sizeof(*c->pools));
	c->pool_of = calloc((size_t)c->n, sizeof(*c->pool_of));
	c->ttft_ns = calloc((size_t)n_pools, sizeof(*c->ttft_ns));
	if (!c->pools || !c->pool_of || !c->ttft_ns) {
		free(c->pools);
		free(c->pool_of);
		free(c->ttft_ns);
		c->pools = NULL;
		c->pool_of = NULL;
		c->ttft_ns = NULL;
		return DIAG_ENOMEM;
	}
	for (int32_t p = 0; p < n_pools; p++) {
		struct cluster_pool *q = &c->pools[p];
		*q = pools[p];
		loghist_init(&c->ttft_ns[p]);
		for (int32_t k = 0; k < q->replicas; k++)
			c->pool_of[q->first + k] = p;
	}
	c->n_pools = n_pools;
	return 0;
}

static void on_request(void *ctx, const struct res_request *r)
{
	struct cluster *c = ctx;
	if (!c->have_req || r->arrival_ns < c->first_arrival_ns)
		c->first_arrival_ns = r->arrival_ns;
	if (!c->have_req || r->done_ns > c->last_end_ns)
		c->last_end_ns = r->done_ns;
	c->have_req = true;
	if (r->status == RES_COMPLETED) {
		if (r->replica < 0 || r->replica >= c->n) {
			c->stray++;
		} else {
			struct cluster_replica *p = &c->rep[r->replica];
			p->requests++;
			p->prompt_tokens += r->prompt_tokens;
			p->cached_prompt_tokens += r->cached_prompt_tokens;
			p->preemptions += r->preemptions;
			if (c->n_pools) {
				double ttft = (double)(r->first_token_ns - r->arrival_ns);
				/* a histogram that cannot get its bins loses only
				 * this percentile: the summary gives -1 */
				if (loghist_add(&c->ttft_ns[c->pool_of[r->replica]], ttft, ttft, 1.0) != 0)
					c->ttft_lost = true;
			}
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

static void on_sample(void *ctx, const struct res_sample *smp)
{
	struct cluster *c = ctx;
	if (c->inner.sample)
		c->inner.sample(c->inner.ctx, smp);
}

static void on_replica(void *ctx, const struct res_replica *r)
{
	struct cluster *c = ctx;
	if (r->replica < 0 || r->replica >= c->n || r->from < 0 || r->from >= REP_N_LIFE ||
	    r->to < 0 || r->to >= REP_N_LIFE) {
		c->stray++;
	} else {
		struct cluster_point *last = &c->tl[c->tl_len - 1];
		if (last->t_ns != r->t_ns) {
			if (c->tl_len == c->tl_cap) {
				struct cluster_point *n = realloc(c->tl, 2 * c->tl_cap * sizeof(*n));
				if (!n) {
					c->tl_oom = true;
					c->stray++;
					goto forward;
				}
				c->tl = n;
				c->tl_cap *= 2;
			}
			c->tl[c->tl_len] = c->tl[c->tl_len - 1];
			c->tl[c->tl_len].t_ns = r->t_ns;
			c->tl_len++;
			last = &c->tl[c->tl_len - 1];
		}
		last->n[r->from]--;
		last->n[r->to]++;
		if (c->n_moves == c->moves_cap) {
			size_t cap = c->moves_cap ? 2 * c->moves_cap : 64;
			struct cluster_move *n = realloc(c->moves, cap * sizeof(*n));
			if (!n) {
				c->tl_oom = true;
				c->stray++;
				goto forward;
			}
			c->moves = n;
			c->moves_cap = cap;
		}
		c->moves[c->n_moves++] =
			(struct cluster_move){.t_ns = r->t_ns, .replica = r->replica, .to = r->to};
	}
forward:
	if (c->inner.replica)
		c->inner.replica(c->inner.ctx, r);
}

struct res_sink cluster_sink(struct cluster *c)
{
	struct res_sink s = {.ctx = c, .request = on_request, .itl_run = on_itl, .busy = on_busy,
			     .session = on_session, .task = on_task, .replica = on_replica,
			     .sample = on_sample};
	return s;
}

static bool billed_state(int32_t life)
{
	return life == REP_UP || life == REP_STARTING || life == REP_DRAINING;
}

/* Seconds each pool's replicas were billed within [t0_ns, t1_ns), from the
 * replica records (every replica billed from time 0 until one says
 * otherwise).  pool_s has n_pools entries.  0 or DIAG_ENOMEM. */
static int pools_billed_s(const struct cluster *c, int64_t t0_ns, int64_t t1_ns, double *pool_s)
{
	int64_t *since = malloc((size_t)c->n * sizeof(*since));
	if (!since)
		return DIAG_ENOMEM;
	for (int32_t i = 0; i < c->n; i++)
		since[i] = 0; /* billed since; -1 = not billed */
	for (int32_t p = 0; p < c->n_pools; p++)
		pool_s[p] = 0.0;
	for (size_t k = 0; k <= c->n_moves; k++) {
		bool end = k == c->n_moves;
		for (int32_t i = end ? 0 : c->moves[k].replica; i < (end ? c->n : c->moves[k].replica + 1);
		     i++) {
			int64_t t = end ? t1_ns : c->moves[k].t_ns;
			bool billed = !end && billed_state(c->moves[k].to);
			if (since[i] >= 0 && !billed) {
				int64_t a = since[i] > t0_ns ? since[i] : t0_ns;
				int64_t b = t < t1_ns ? t : t1_ns;
				if (b > a)
					pool_s[c->pool_of[i]] += (double)(b - a) / 1e9;
				since[i] = -1;
			} else if (since[i] < 0 && billed) {
				since[i] = t;
			}
		}
	}
	free(since);
	return 0;
}

/* Each replica's billed stretches within [t0_ns, t1_ns), from the replica
 * records (every replica billed from time 0 until one says otherwise): a
 * stretch opens when a replica enters a billed state from an unbilled one
 * (a start: the cold start is billed) and closes when it leaves them.  Kept
 * in c->stretches; 0 or DIAG_ENOMEM (then none are kept). */
static int billed_stretches(struct cluster *c, int64_t t0_ns, int64_t t1_ns)
{
	free(c->stretches);
	c->stretches = NULL;
	c->n_stretches = 0;
	/* a replica's stretches are at most its starts + 1 */
	size_t cap = (size_t)c->n + c->n_moves;
	int64_t *since = malloc((size_t)c->n * sizeof(*since));
	c->stretches = malloc(cap * sizeof(*c->stretches));
	if (!since || !c->stretches) {
		free(since);
		free(c->stretches);
		c->stretches = NULL;
		return DIAG_ENOMEM;
	}
	for (int32_t i = 0; i < c->n; i++)
		since[i] = 0; /* billed since; -1 = not billed */
	for (size_t k = 0; k <= c->n_moves; k++) {
		bool end = k == c->n_moves;
		int32_t lo = end ? 0 : c->moves[k].replica, hi = end ? c->n : lo + 1;
		for (int32_t i = lo; i < hi; i++) {
			int64_t t = end ? INT64_MAX : c->moves[k].t_ns;
			bool billed = !end && billed_state(c->moves[k].to);
			if (since[i] >= 0 && !billed) {
				int64_t a = since[i] > t0_ns ? since[i] : t0_ns;
				int64_t b = t < t1_ns ? t : t1_ns;
				if (b > a)
					c->stretches[c->n_stretches++] = (struct cost_stretch){
						.s = (double)(b - a) / 1e9,
						.from_start = since[i] <= t0_ns,
						.to_end = t >= t1_ns,
					};
				since[i] = -1;
			} else if (since[i] < 0 && billed) {
				since[i] = t;
			}
		}
	}
	free(since);
	return 0;
}

/* The pools' figures, and the cluster's GPU-hours replica by replica at
 * each one's pool's GPU count.  With replicas that came and went, the
 * provisioned hours count the time each was billed within the run. */
static void summarize_pools(struct cluster *c, double duration_s, struct cluster_summary *out)
{
	double gpus_total = 0.0, gpu_busy_s = 0.0;
	double *billed = NULL;
	if (c->tl_len > 1) {
		billed = calloc((size_t)c->n_pools, sizeof(*billed));
		int64_t t0 = c->have_req ? c->first_arrival_ns : 0;
		int64_t t1 = c->have_req ? c->last_end_ns : 0;
		if (!billed || pools_billed_s(c, t0, t1, billed) != 0) {
			free(billed); /* out of memory: the hours stay unknown */
			billed = NULL;
			c->stray++;
		}
	}
	out->gpus_per_replica = c->pools[0].gpus_per_replica;
	for (int32_t p = 0; p < c->n_pools; p++) {
		struct cluster_pool *q = &c->pools[p];
		if (q->gpus_per_replica != out->gpus_per_replica)
			out->gpus_per_replica = 0;
		q->requests = q->prompt_tokens = q->cached_prompt_tokens = q->preemptions = 0;
		q->busy_s = 0.0;
		for (int32_t k = 0; k < q->replicas; k++) {
			const struct cluster_replica *r = &c->rep[q->first + k];
			q->requests += r->requests;
			q->prompt_tokens += r->prompt_tokens;
			q->cached_prompt_tokens += r->cached_prompt_tokens;
			q->preemptions += r->preemptions;
			q->busy_s += r->busy_s;
			gpus_total += (double)q->gpus_per_replica;
			gpu_busy_s += (double)q->gpus_per_replica * r->busy_s;
		}
		q->prefix_cache_hit_rate = q->prompt_tokens > 0 ? (double)q->cached_prompt_tokens /
									  (double)q->prompt_tokens
								: 0.0;
		q->busy_fraction = duration_s > 0.0 ? q->busy_s / ((double)q->replicas * duration_s)
						    : 0.0;
		q->ttft_p95_ms = c->ttft_lost ? -1.0 : loghist_percentile(&c->ttft_ns[p], 95.0) / 1e6;
		q->gpu_hours_provisioned =
			(billed ? billed[p] : (double)q->replicas * duration_s) *
			(double)q->gpus_per_replica / 3600.0;
		q->gpu_hours_busy = (double)q->gpus_per_replica * q->busy_s / 3600.0;
	}
	if (c->tl_len > 1) {
		out->gpu_hours_provisioned = 0.0;
		for (int32_t p = 0; p < c->n_pools; p++)
			out->gpu_hours_provisioned += c->pools[p].gpu_hours_provisioned;
	} else {
		out->gpu_hours_provisioned = gpus_total * duration_s / 3600.0;
	}
	free(billed);
	out->gpu_hours_busy = gpu_busy_s / 3600.0;
	out->n_pools = c->n_pools;
	out->pools = c->pools;
}

void cluster_set_routed(struct cluster *c, int32_t i, int64_t calls)
{
	if (i >= 0 && i < c->n)
		c->rep[i].routed = calls;
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
	if (c->tl_len > 1) {
		/* replicas came and went: the billed ones, over the run */
		int64_t t0 = c->have_req ? c->first_arrival_ns : 0;
		int64_t t1 = c->have_req ? c->last_end_ns : 0;
		double billed = cluster_billed_replica_s(c, t0, t1);
		out->gpu_hours_provisioned = (double)gpus_per_replica * billed / 3600.0;
		struct cluster_elastic *e = &out->elastic;
		e->replicas_billed_mean = t1 > t0 ? billed / ((double)(t1 - t0) / 1e9) : 0.0;
		e->replicas_up_min = INT32_MAX;
		for (size_t k = 0; k < c->tl_len; k++) {
			/* the points in force during [t0, t1] */
			if (k + 1 < c->tl_len && c->tl[k + 1].t_ns <= t0)
				continue;
			if (c->tl[k].t_ns > t1)
				break;
			int32_t up = c->tl[k].n[REP_UP];
			if (up < e->replicas_up_min)
				e->replicas_up_min = up;
			if (up > e->replicas_up_max)
				e->replicas_up_max = up;
		}
		if (e->replicas_up_min == INT32_MAX)
			e->replicas_up_min = 0;
	} else {
		out->gpu_hours_provisioned = (double)c->n * gpus_per_replica * duration_s / 3600.0;
		out->elastic.replicas_billed_mean = c->n;
		out->elastic.replicas_up_min = out->elastic.replicas_up_max = c->n;
	}
	out->gpu_hours_busy = (double)gpus_per_replica * busy_s / 3600.0;
	out->per_replica = c->rep;
	if (billed_stretches(c, c->have_req ? c->first_arrival_ns : 0,
			     c->have_req ? c->last_end_ns : 0) != 0)
		c->stray++; /* out of memory: the cost model bills the hours as they are */
	out->replica_up = c->stretches;
	out->replica_up_count = c->n_stretches;
	if (c->n_pools)
		summarize_pools(c, duration_s, out);
}

int64_t cluster_stray(const struct cluster *c)
{
	return c->stray;
}

const struct cluster_point *cluster_timeline(const struct cluster *c, size_t *n)
{
	*n = c->tl_len;
	return c->tl;
}

double cluster_billed_replica_s(const struct cluster *c, int64_t t0_ns, int64_t t1_ns)
{
	double sum = 0.0;
	for (size_t k = 0; k < c->tl_len; k++) {
		int64_t a = c->tl[k].t_ns, b = k + 1 < c->tl_len ? c->tl[k + 1].t_ns : INT64_MAX;
		if (a < t0_ns)
			a = t0_ns;
		if (b > t1_ns)
			b = t1_ns;
		if (b <= a)
			continue;
		const int32_t *n = c->tl[k].n;
		sum += (double)(n[REP_UP] + n[REP_STARTING] + n[REP_DRAINING]) * ((double)(b - a) / 1e9);
	}
	return sum;
}
