/* SPDX-License-Identifier: Apache-2.0
 * sim: event dispatch, request lifecycle and end-of-run invariants (see sim.h). */
#include "sim/sim.h"

#include "base/hash.h"
#include "models/perf.h"
#include "models/perf_model.h"
#include "sim/kvtier.h"
#include "sim/lifecycle.h"
#include "sim/replica.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A call an API backend serves finishes (sim/backend.h); a client tries an
 * API backend again after a 429 (arg: the backend, gen: the route). */
enum { EV_API_DONE = 9, EV_API_RETRY = 13 };
/* Event kinds are shared out: 1-3 and 12 sim/replica.h, 4-8, 10 and 11
 * sim/lifecycle.h, 9 and 13-17 here. */
/* faults.detection probe (sim/lifecycle.h): a call on a hung replica gives
 * up (arg: the replica); its client tries it again after the back-off; the
 * probes notice a hang (background; obj: the replica, gen: the hang). */
enum { EV_HUNG_GIVEUP = 14, EV_CLIENT_RETRY = 15, EV_DETECTED = 16 };
/* prefill/decode disaggregation: a call's KV reaches its decode replica */
enum { EV_PD_ARRIVE = 17 };

static double model_step_ns(const void *ctx, const struct perf_batch *b)
{
	return perf_step_ns(ctx, b);
}

static double model_run_ns(const void *ctx, const struct perf_batch *b0, int64_t k)
{
	return perf_decode_run_ns(ctx, b0, k);
}

static void model_work(const void *ctx, const struct perf_batch *b0, int64_t k, double *flops,
		       double *bytes)
{
	struct perf_breakdown first, last;
	perf_step_breakdown(ctx, b0, &first);
	if (k <= 1) {
		*flops = first.flops;
		*bytes = first.bytes;
		return;
	}
	struct perf_batch bk = *b0;
	bk.attn_pairs += (k - 1) * b0->seqs;
	bk.kv_read_tokens += (k - 1) * b0->seqs;
	perf_step_breakdown(ctx, &bk, &last);
	*flops = (double)k * 0.5 * (first.flops + last.flops);
	*bytes = (double)k * 0.5 * (first.bytes + last.bytes);
}

struct sim_perf sim_perf_from_model(const struct perf_model *pm)
{
	struct sim_perf p = {.ctx = pm, .step_ns = model_step_ns, .decode_run_ns = model_run_ns,
			     .work = model_work};
	return p;
}

int sim_init(struct sim *s, const struct engine_config *cfg, int32_t n_replicas,
	     struct sim_perf perf, struct res_sink sink, sim_done_fn done, void *done_ctx,
	     struct diag *d)
{
	struct sim_pool one = {.cfg = *cfg, .perf = perf, .replicas = n_replicas};
	return sim_init_pools(s, &one, 1, sink, done, done_ctx, d);
}

int sim_init_pools(struct sim *s, const struct sim_pool *pools, int32_t n_pools,
		   struct res_sink sink, sim_done_fn done, void *done_ctx, struct diag *d)
{
	memset(s, 0, sizeof(*s));
	s->sink = sink;
	s->done = done;
	s->done_ctx = done_ctx;
	evq_init(&s->q);
	if (n_pools < 1 || n_pools > SIM_MAX_POOLS)
		return diag_set(d, DIAG_EINPUT, "%d pools (expected 1 to %d)", (int)n_pools,
				SIM_MAX_POOLS);
	int64_t n_replicas = 0;
	for (int32_t p = 0; p < n_pools; p++) {
		const struct engine_config *cfg = &pools[p].cfg;
		if (cfg->max_num_seqs < 1 || cfg->max_num_batched_tokens < 1 || cfg->block_size < 1 ||
		    cfg->max_model_len < 1 || pools[p].replicas < 1)
			return diag_set(d, DIAG_EINPUT,
					"engine settings out of range (max_num_seqs, max_num_batched_tokens, block_size, max_model_len and replicas must be >= 1)");
		if (cfg->block_size != pools[0].cfg.block_size)
			return diag_set(d, DIAG_EINPUT,
					"pools[%d]: block size %lld differs from pools[0]'s %lld (expected one "
					"KV block size for every pool: a call carries one chain of block hashes)",
					(int)p, (long long)cfg->block_size,
					(long long)pools[0].cfg.block_size);
		n_replicas += pools[p].replicas;
	}
	if (n_replicas > INT32_MAX / 2)
		return diag_set(d, DIAG_EINPUT, "%lld replicas in all (too many)", (long long)n_replicas);
	s->pools = calloc((size_t)n_pools, sizeof(*s->pools));
	s->replicas = calloc((size_t)n_replicas, sizeof(*s->replicas));
	if (!s->pools || !s->replicas)
		return diag_set(d, DIAG_ENOMEM, "out of memory for %lld replicas", (long long)n_replicas);
	s->n_pools = n_pools;
	s->cfg = pools[0].cfg;
	int32_t next = 0;
	for (int32_t p = 0; p < n_pools; p++) {
		struct sim_pool *pl = &s->pools[p];
		*pl = pools[p];
		pl->first = next;
		for (int32_t k = 0; k < pl->replicas; k++, next++) {
			int rc = replica_init(&s->replicas[next], next, p, &pl->cfg, &pl->perf, d);
			s->n_replicas = next + 1;
			if (rc != 0)
				return rc;
		}
	}
	struct router_config rc;
	router_config_default(&rc);
	return router_init(&s->router, &rc, s->n_replicas, s->cfg.max_num_seqs, s->replicas, d);
}

static void tier_demote(void *ctx, uint64_t hash)
{
	kvtier_put(ctx, hash);
}

int sim_set_tiers(struct sim *s, const struct sim_tiers_config *tc, struct diag *d)
{
	if (s->stats.submitted != 0 || s->tiers)
		return diag_set(d, DIAG_EINTERNAL, "KV tiers set after calls were submitted");
	if (tc->n <= 0)
		return 0;
	if (tc->n > RES_MAX_TIERS || tc->shared_by < 1)
		return diag_set(d, DIAG_EINPUT, "kv_tiers: %d tiers shared by %d replicas "
				"(expected 1 to %d tiers, shared by 1 or more)", (int)tc->n,
				(int)tc->shared_by, RES_MAX_TIERS);
	if (tc->mode == SIM_TIER_WRITE_THROUGH && tc->chunk_blocks < 1)
		return diag_set(d, DIAG_EINPUT, "kv_tiers: write-through chunks of %lld blocks "
				"(expected 1 or more)", (long long)tc->chunk_blocks);
	if (tc->mode != SIM_TIER_EVICT && tc->mode != SIM_TIER_WRITE_THROUGH)
		return diag_set(d, DIAG_EINTERNAL, "kv_tiers: unknown mode %d", (int)tc->mode);
	int32_t sets = (s->n_replicas + tc->shared_by - 1) / tc->shared_by;
	s->tiers = calloc((size_t)sets * (size_t)tc->n, sizeof(*s->tiers));
	if (!s->tiers)
		return diag_set(d, DIAG_ENOMEM, "out of memory for %d KV tiers", (int)(sets * tc->n));
	s->n_tier_sets = sets;
	s->tiers_cfg = *tc;
	for (int32_t i = 0; i < sets; i++)
		for (int32_t t = tc->n - 1; t >= 0; t--) {
			struct kvtier *k = &s->tiers[i * tc->n + t];
			struct kvtier *lower = t + 1 < tc->n ? k + 1 : NULL;
			if (kvtier_init(k, tc->tier[t].blocks, tc->tier[t].ns_per_block, lower) != 0)
				return diag_set(d, DIAG_EINPUT,
						"kv_tiers: tier %d holds %lld blocks (expected 1 to 2^31-1)",
						(int)t, (long long)tc->tier[t].blocks);
		}
	for (int32_t r = 0; r < s->n_replicas; r++) {
		struct replica *rep = &s->replicas[r];
		rep->tier = &s->tiers[(r / tc->shared_by) * tc->n];
		rep->tier_shared = tc->shared_by > 1 && s->n_replicas > 1;
		rep->runs = false; /* a lower tier sees each block evicted or stored */
		/* write-through: the host already holds what it was given, and a
		 * GPU eviction copies nothing */
		rep->kv.on_evict = tc->mode == SIM_TIER_EVICT ? tier_demote : NULL;
		rep->kv.evict_ctx = rep->tier;
		rep->link_free_ns = 0;
	}
	return 0;
}

int sim_set_series(struct sim *s, int64_t interval_ns, struct diag *d)
{
	if (s->stats.submitted != 0)
		return diag_set(d, DIAG_EINTERNAL, "time series set after calls were submitted");
	if (interval_ns < 0)
		return diag_set(d, DIAG_EINPUT, "time-series interval must be >= 0");
	free(s->series.rep);
	memset(&s->series, 0, sizeof(s->series));
	if (interval_ns == 0)
		return 0;
	s->series.rep = calloc((size_t)s->n_replicas, sizeof(*s->series.rep));
	if (!s->series.rep)
		return diag_set(d, DIAG_ENOMEM, "out of memory for the time series");
	s->series.interval_ns = interval_ns;
	s->series.next_ns = interval_ns;
	return 0;
}

/* Step time of replica rep's step that began at t0_ns and runs until
 * until_ns, inside the open interval. */
static void series_busy(struct sim *s, const struct replica *rep, int64_t t0_ns, int64_t until_ns)
{
	int64_t from = s->series.next_ns - s->series.interval_ns;
	if (t0_ns > from)
		from = t0_ns;
	if (until_ns > from)
		s->series.rep[rep->id].busy_ns += until_ns - from;
}

/* Emit the sample at next_ns and open the next interval. */
static void series_emit(struct sim *s)
{
	struct sim_series *ts = &s->series;
	int64_t t = ts->next_ns;
	for (int32_t i = 0; i < s->n_replicas; i++) {
		const struct replica *rep = &s->replicas[i];
		struct res_sample_replica *p = &ts->rep[i];
		if (rep->busy)
			series_busy(s, rep, rep->run_t0_ns, t);
		p->waiting = rep->wq_len;
		p->running = rep->n_running;
		p->batch_tokens = rep->busy ? rep->run_b0.new_tokens : 0;
		p->kv_blocks_used = replica_kv_used(rep);
		p->kv_blocks_total = rep->kv.total_blocks;
		p->life = rep->life;
	}
	/* the lifecycle's counts; without it every replica is up */
	struct res_sample smp = {.t_ns = t, .interval_ns = ts->interval_ns,
				 .router_queue = s->router.q_len, .arrivals = ts->arrivals,
				 .completions = ts->completions, .failed = ts->failed,
				 .replicas_up = s->elastic ? s->n_life[REP_UP] : s->n_replicas,
				 .replicas_starting = s->n_life[REP_STARTING],
				 .replicas_draining = s->n_life[REP_DRAINING],
				 .replicas_down = s->n_life[REP_DOWN],
				 .n_replicas = s->n_replicas, .replicas = ts->rep,
				 .n_tiers = s->tiers ? s->tiers_cfg.n : 0};
	for (int32_t k = 0; k < s->n_tier_sets * smp.n_tiers; k++) {
		smp.tier_blocks_used[k % smp.n_tiers] += s->tiers[k].len;
		smp.tier_blocks_total[k % smp.n_tiers] += s->tiers[k].capacity;
	}
	if (s->sink.sample)
		s->sink.sample(s->sink.ctx, &smp);
	ts->arrivals = ts->completions = ts->failed = 0;
	for (int32_t i = 0; i < s->n_replicas; i++) {
		ts->rep[i].busy_ns = 0;
		ts->rep[i].arrivals = 0;
		ts->rep[i].completions = 0;
	}
	ts->next_ns += ts->interval_ns;
}

void sim_series_flush(struct sim *s)
{
	if (s->series.interval_ns > 0 && s->stats.events > 0)
		series_emit(s);
}

int sim_set_router(struct sim *s, const struct router_config *rc, struct diag *d)
{
	if (s->stats.submitted != 0)
		return diag_set(d, DIAG_EINTERNAL, "router changed after calls were submitted");
	router_release(&s->router);
	int rc2 = router_init(&s->router, rc, s->n_replicas, s->cfg.max_num_seqs, s->replicas, d);
	for (int32_t i = 0; rc2 == 0 && i < s->n_replicas; i++)
		router_set_up(&s->router, i, s->replicas[i].life == REP_UP);
	return rc2;
}

int sim_set_hybrid(struct sim *s, const struct hybrid_config *c, struct diag *d)
{
	if (s->stats.submitted != 0 || s->backends)
		return diag_set(d, DIAG_EINTERNAL, "backends set after calls were submitted");
	int rc = hybrid_config_check(c, d);
	if (rc != 0 || c->n == 0)
		return rc;
	s->backends = calloc((size_t)c->n, sizeof(*s->backends));
	if (!s->backends)
		return diag_set(d, DIAG_ENOMEM, "out of memory for %d backends", (int)c->n);
	int32_t seqs = 1;
	for (int32_t p = 0; p < s->n_pools; p++)
		if (s->pools[p].cfg.max_num_seqs > seqs)
			seqs = s->pools[p].cfg.max_num_seqs;
	s->hyb_scratch = malloc((size_t)seqs * sizeof(*s->hyb_scratch));
	if (!s->hyb_scratch)
		return diag_set(d, DIAG_ENOMEM, "out of memory for %d backends", (int)c->n);
	s->hyb = *c;
	s->n_backends = c->n;
	for (int32_t k = 0; k < c->n; k++)
		backend_init(&s->backends[k], &c->b[k]);
	return 0;
}

_Static_assert(ELASTIC_MAX_POOLS >= SIM_MAX_POOLS, "a start-up time for every pool");

int sim_set_elastic(struct sim *s, const struct elastic_config *c, struct diag *d)
{
	if (s->stats.submitted != 0 || s->elastic)
		return diag_set(d, DIAG_EINTERNAL, "lifecycle set after calls were submitted");
	if (!elastic_active(c))
		return 0;
	s->el = *c;
	s->el.faults = NULL;
	if (c->n_faults > 0) {
		s->faults = malloc((size_t)c->n_faults * sizeof(*s->faults));
		if (!s->faults)
			return diag_set(d, DIAG_ENOMEM, "out of memory for %d faults", (int)c->n_faults);
		memcpy(s->faults, c->faults, (size_t)c->n_faults * sizeof(*s->faults));
		s->el.faults = s->faults;
	}
	s->scratch = malloc(sizeof(*s->scratch) * (size_t)s->cfg.max_num_seqs);
	if (!s->scratch)
		return diag_set(d, DIAG_ENOMEM, "out of memory");
	if (c->detection == FAULT_DETECT_PROBE) {
		if (c->probe_period_ns <= 0 || c->probe_failure_threshold < 1 ||
		    c->probe_timeout_ns < 0 || c->client_timeout_ns <= 0 ||
		    !(c->retry_initial_ns >= 0) || !(c->retry_max_ns >= 0))
			return diag_set(d, DIAG_EINPUT, "fault detection settings out of range (expected "
					"a probe period > 0, a failure threshold >= 1, timeouts and "
					"back-off >= 0)");
		s->hang_detect_ns = calloc((size_t)s->n_replicas, sizeof(*s->hang_detect_ns));
		s->hang_gen = calloc((size_t)s->n_replicas, sizeof(*s->hang_gen));
		if (!s->hang_detect_ns || !s->hang_gen)
			return diag_set(d, DIAG_ENOMEM, "out of memory");
	}
	s->elastic = true;
	return lifecycle_start(s, d);
}

static void sreq_destroy(struct sreq *r)
{
	free(r->kr.ent); /* its layers belong to the replica's cache */
	free(r->rt_act.ent); /* and these to the router's active set */
	free(r->own);
	free(r->blocks);
	free(r);
}

void sim_release(struct sim *s)
{
	/* Requests still in flight (an aborted run) are reachable from the
	 * queues and the event heap; free each exactly once. */
	for (int32_t i = 0; s->replicas && i < s->n_replicas; i++) {
		struct replica *rep = &s->replicas[i];
		for (int32_t j = 0; j < rep->n_running; j++)
			sreq_destroy(rep->running[j]);
		for (int64_t j = 0; j < rep->wq_len; j++)
			sreq_destroy(rep->wq[(rep->wq_head + j) % rep->wq_cap]);
		replica_release(rep);
	}
	struct event e;
	while (evq_pop(&s->q, &e))
		if (e.kind == EV_ARRIVAL || e.kind == EV_API_DONE || e.kind == EV_API_RETRY ||
		    e.kind == EV_HUNG_GIVEUP || e.kind == EV_CLIENT_RETRY || e.kind == EV_PD_ARRIVE)
			sreq_destroy(e.obj);
	for (int32_t k = 0; k < s->n_backends; k++)
		backend_release(&s->backends[k]);
	free(s->backends);
	free(s->hyb_scratch);
	evq_release(&s->q);
	for (struct sreq *r; (r = router_queue_take_any(&s->router)) != NULL;)
		sreq_destroy(r);
	router_release(&s->router);
	for (int32_t i = 0; s->tiers && i < s->n_tier_sets * s->tiers_cfg.n; i++)
		kvtier_release(&s->tiers[i]);
	free(s->tiers);
	free(s->series.rep);
	free(s->replicas);
	free(s->pools);
	free(s->faults);
	free(s->scratch);
	lifecycle_release(s);
	free(s->hang_detect_ns);
	free(s->hang_gen);
	for (struct sreq *r = s->free_reqs, *next; r; r = next) {
		next = r->next_free;
		sreq_destroy(r);
	}
	memset(s, 0, sizeof(*s));
}

/* Make room for n elements of `size` bytes in *p, which holds *cap: the
 * room only grows, and what it held is dropped, not copied. */
static int room(void **p, int64_t *cap, int64_t n, size_t size)
{
	if (n <= *cap)
		return 0;
	void *q = malloc((size_t)n * size);
	if (!q)
		return -1;
	free(*p);
	*p = q;
	*cap = n;
	return 0;
}

/* A pooled request whose block table holds max_blocks positions for the
 * full-attention group and, after them, max_blocks x window_group_blocks
 * for the sliding-window groups (the most of any pool: the router has not
 * picked a replica yet), with room for n_own hashes of its own. */
static struct sreq *sreq_get(struct sim *s, int64_t max_blocks, int64_t n_own)
{
	int64_t groups = 0;
	for (int32_t p = 0; p < s->n_pools; p++)
		if (s->pools[p].cfg.window_group_blocks > groups)
			groups = s->pools[p].cfg.window_group_blocks;
	int64_t table = max_blocks * (1 + groups);
	struct sreq *r = s->free_reqs;
	if (r)
		s->free_reqs = r->next_free;
	else if ((r = calloc(1, sizeof(*r))) == NULL)
		return NULL;
	void *own = r->own, *blocks = r->blocks;
	int64_t cap_own = r->cap_own, cap_blocks = r->cap_blocks;
	int bad = room(&own, &cap_own, n_own ? n_own : 1, sizeof(uint64_t)) |
		  room(&blocks, &cap_blocks, table ? table : 1, sizeof(int32_t));
	struct kvr_ent *ent = r->kr.ent; /* a table's room, kept for the next call */
	int64_t cap_ent = r->kr.cap_ent;
	struct kvr_ent *act_ent = r->rt_act.ent;
	int64_t act_cap = r->rt_act.cap_ent;
	memset(r, 0, sizeof(*r));
	r->own = own;
	r->cap_own = cap_own;
	r->blocks = blocks;
	r->cap_blocks = cap_blocks;
	r->kr.ent = ent;
	r->kr.cap_ent = cap_ent;
	r->rt_act.ent = act_ent;
	r->rt_act.cap_ent = act_cap;
	if (bad) {
		sreq_destroy(r);
		return NULL;
	}
	r->hashes = r->own;
	r->wblocks = r->blocks + max_blocks;
	r->max_blocks = max_blocks;
	return r;
}

static void sreq_put(struct sim *s, struct sreq *r)
{
	r->next_free = s->free_reqs;
	s->free_reqs = r;
}

int64_t sim_state_blocks(const struct engine_config *cfg)
{
	return (cfg->seq_state_tokens + cfg->block_size - 1) / cfg->block_size;
}

int64_t sim_window_peak_blocks(const struct engine_config *cfg, int64_t tokens)
{
	if (cfg->sliding_window_tokens <= 0 || cfg->window_group_blocks <= 0)
		return 0;
	int64_t bs = cfg->block_size;
	int64_t all = (tokens + bs - 1) / bs;
	int64_t cap = (cfg->sliding_window_tokens - 1 + cfg->max_num_batched_tokens + bs - 1) / bs + 1;
	return all < cap ? all : cap;
}

void sim_engine_hybrid(struct engine_config *cfg, const struct mem_plan *plan)
{
	if (cfg->kv_cache_tokens == 0)
		cfg->kv_cache_tokens = plan->kv_capacity_tokens;
	int64_t per = plan->kv_gpu_bytes_per_token > 0 ? plan->kv_gpu_bytes_per_token : 1;
	cfg->seq_state_tokens = (plan->state_bytes_per_seq + per - 1) / per;
	cfg->sliding_window_tokens = 0;
	cfg->window_group_blocks = 0;
	const struct mem_kv_groups *g = &plan->groups;
	if (g->window_tokens > 0 && g->window_groups > 0 && g->full_groups > 0) {
		cfg->sliding_window_tokens = g->window_tokens;
		cfg->window_group_blocks = (g->window_groups + g->full_groups - 1) / g->full_groups;
	}
}

/* Why a call can never be served, or NULL. */
const char *sim_reject_reason(const struct engine_config *cfg, int64_t kv_blocks,
			      int64_t prompt_tokens, int64_t output_tokens)
{
	int64_t total = prompt_tokens + output_tokens;
	if (prompt_tokens >= cfg->max_model_len)
		return "prompt does not fit max_model_len";
	if (total > cfg->max_model_len)
		return "prompt + output exceed max_model_len";
	if ((total + cfg->block_size - 1) / cfg->block_size +
		    sim_window_peak_blocks(cfg, total) * cfg->window_group_blocks +
		    sim_state_blocks(cfg) >
	    kv_blocks)
		return "prompt + output need more KV blocks than the cache holds";
	if (!cfg->enable_chunked_prefill && total > cfg->max_num_batched_tokens)
		return "prompt exceeds max_num_batched_tokens with chunked prefill disabled";
	return NULL;
}

/* The pools that can serve call c (bit p for pool p); when none can, *why
 * is pools[0]'s reason. */
static uint64_t pools_ok(const struct sim *s, const struct sim_call *c, const char **why)
{
	uint64_t ok = 0;
	*why = NULL;
	for (int32_t p = 0; p < s->n_pools; p++) {
		const struct sim_pool *pl = &s->pools[p];
		const char *w = sim_reject_reason(&pl->cfg, s->replicas[pl->first].kv.total_blocks,
						  c->prompt_tokens, c->output_tokens);
		if (!w)
			ok |= UINT64_C(1) << p;
		else if (p == 0)
			*why = w;
	}
	if (ok)
		*why = NULL;
	return ok;
}

int sim_submit(struct sim *s, const struct sim_call *c, int64_t t_ns, struct diag *d)
{
	if (t_ns < s->now_ns)
		return diag_set(d, DIAG_EINTERNAL, "call submitted in the past (%lld < %lld ns)",
				(long long)t_ns, (long long)s->now_ns);
	if (c->prompt_tokens < 1 || c->output_tokens < 1 || c->n_hashes < 0)
		return diag_set(d, DIAG_EINTERNAL, "call with %lld prompt and %lld output tokens",
				(long long)c->prompt_tokens, (long long)c->output_tokens);
	if (c->prio < 0 || c->prio > SIM_MAX_PRIO || c->team < 0 || c->team >= SIM_MAX_TEAMS)
		return diag_set(d, DIAG_EINTERNAL, "call of priority %d and team %d (expected 0..%d "
				"and 0..%d)", (int)c->prio, (int)c->team, SIM_MAX_PRIO,
				SIM_MAX_TEAMS - 1);
	int64_t bs = s->cfg.block_size;
	int64_t total = c->prompt_tokens + c->output_tokens;
	int64_t n_hashes = c->n_hashes < total / bs ? c->n_hashes : total / bs;
	int64_t max_blocks = (total + bs - 1) / bs;
	const char *why;
	uint64_t ok = pools_ok(s, c, &why);
	/* no local pool can serve it: it holds no blocks; an API backend that
	 * takes such calls still reads its prompt's hashes for its cache */
	bool to_api = s->n_backends && (s->hyb.size_to >= 0 || s->hyb.fallback_to >= 0);
	if (!ok) {
		max_blocks = 0;
		if (!to_api)
			n_hashes = 0;
	}
	struct sreq *r = sreq_get(s, max_blocks, c->borrow_hashes ? 0 : n_hashes);
	if (!r)
		return diag_set(d, DIAG_ENOMEM, "out of memory for a call of %lld tokens", (long long)total);
	r->call = *c;
	if (c->borrow_hashes)
		r->hashes = c->block_hashes;
	else if (n_hashes)
		memcpy(r->own, c->block_hashes, (size_t)n_hashes * sizeof(*r->own));
	r->call.block_hashes = r->hashes;
	r->call.n_hashes = n_hashes;
	r->arrival_ns = t_ns;
	r->pools_ok = ok;
	s->live_reqs++;
	s->stats.submitted++;
	struct event e = {.t_ns = t_ns, .prio = PRIO_ARRIVAL, .kind = EV_ARRIVAL, .obj = r};
	if (evq_push(&s->q, &e) != 0) {
		sreq_destroy(r);
		s->live_reqs--;
		return diag_set(d, DIAG_ENOMEM, "out of memory for the event queue");
	}
	return 0;
}

static void report(struct sim *s, struct sreq *r, int32_t replica, enum res_status st,
		   const char *reason)
{
	struct res_request rec = {
		.session = r->call.session,
		.task = r->call.task,
		.seq = r->call.seq,
		.replica = replica,
		.status = st,
		.reason = reason,
		.arrival_ns = r->arrival_ns,
		.dispatched_ns = st == RES_COMPLETED ? r->dispatched_ns : s->now_ns,
		.scheduled_ns = st == RES_COMPLETED ? r->scheduled_ns : s->now_ns,
		.first_token_ns = st == RES_COMPLETED ? r->first_token_ns : s->now_ns,
		.done_ns = s->now_ns,
		.prompt_tokens = r->call.prompt_tokens,
		.output_tokens = r->call.output_tokens,
		.cached_prompt_tokens = r->cached_first,
		.computed_prefill_tokens = r->prefill_computed,
		.inflight_miss_tokens = r->inflight_miss,
		.preemptions = r->preemptions,
		.retries = r->retries,
		.outage = r->outage,
		.backend = st == RES_COMPLETED ? r->backend : 0,
		.route = st == RES_COMPLETED ? r->route : RES_ROUTE_LOCAL,
		.kind = r->call.kind,
		.rate_limited = r->rate_limited,
		.limited_backend = r->limited_backend,
		.backoff_ns = r->backoff_ns,
		.prio = r->call.prio,
		.team = r->call.team,
	};
	for (int t = 0; t < RES_MAX_TIERS; t++)
		rec.tier_cached_tokens[t] = r->tier_first[t];
	if (s->sink.request)
		s->sink.request(s->sink.ctx, &rec);
	if (s->done)
		s->done(s->done_ctx, &rec, r->call.user);
}

static int dispatch(struct sim *s, struct sreq *r, int32_t i);
static int32_t hybrid_first(const struct sim *s, const struct sreq *r, int *why);
static int backend_serve(struct sim *s, struct sreq *r, int32_t k, int route);

/* Hand waiting calls to replicas while the policy finds room (FIFO). */
void sim_router_drain(struct sim *s)
{
	struct sreq *h;
	while ((h = router_queue_front(&s->router)) != NULL) {
		int32_t i = router_pick(&s->router, h, s->replicas);
		int why = RES_ROUTE_LOCAL;
		int32_t k = i < 0 && s->n_backends ? hybrid_first(s, h, &why) : -1;
		if (i < 0 && k < 0)
			break;
		router_queue_pop(&s->router);
		int rc = k >= 0 ? backend_serve(s, h, k, why) : dispatch(s, h, i);
		if (rc != 0 && !s->err)
			s->err = rc;
	}
}

static int pd_prefilled(struct sim *s, struct replica *rep, struct sreq *r);

void sim_finish_request(struct sim *s, struct replica *rep, struct sreq *r)
{
	if (r->pd_phase == SREQ_PD_PREFILL) {
		int rc = pd_prefilled(s, rep, r);
		if (rc != 0 && !s->err)
			s->err = rc;
		return;
	}
	/* Every KV position was obtained once per admission, by cache or by
	 * compute; preemption threw some away.  What is left is prompt + output
	 * minus the last token, whose KV is never computed. */
	if (r->kv_obtained - r->kv_dropped != r->call.prompt_tokens + r->call.output_tokens - 1 &&
	    !s->err)
		s->err = DIAG_EINTERNAL;
	replica_finish_blocks(rep, r, s->now_ns);
	replica_kv_reserve(rep, -r->seq_blocks);
	r->state = SREQ_DONE;
	s->stats.completed++;
	s->live_reqs--;
	if (s->series.interval_ns) {
		s->series.completions++;
		s->series.rep[rep->id].completions++;
	}
	router_done(&s->router, rep->id, r);
	report(s, r, rep->id, RES_COMPLETED, NULL);
	sreq_put(s, r);
	if (rep->n_running == 0 && rep->wq_len == 0)
		rep->idle_since_ns = s->now_ns;
	if (s->elastic)
		lifecycle_on_finish(s, rep);
	if (s->router.q_len)
		sim_router_drain(s);
}

static void pd_reserve(struct sim *s, struct sreq *r, int32_t i, int dir);

/* Fail a call that never completed. */
static int fail_call(struct sim *s, struct sreq *r, const char *why)
{
	router_team_drop(&s->router, r);
	pd_reserve(s, r, r->pd_decode, -1);
	if (r->pd_phase == SREQ_PD_PREFILL)
		r->call.output_tokens = r->pd_output; /* reported as the call asked */
	if (s->series.interval_ns)
		s->series.failed++;
	s->stats.rejected++;
	s->live_reqs--;
	report(s, r, -1, RES_REJECTED, why);
	sreq_put(s, r);
	return s->err;
}

/* ---- API backends (sim/backend.h) ---- */

/* The key of r's back-off jitter: the same call draws the same waits
 * whatever else happens in the run. */
static uint64_t call_key(const struct sreq *r)
{
	return hash_combine(hash_combine(r->call.session, (uint64_t)r->call.seq),
			    (uint64_t)r->arrival_ns);
}

/* r met a 429 at backend k: its client tries again after the back-off, or
 * gives up after max_retries of them. */
static int backend_limited(struct sim *s, struct sreq *r, int32_t k, int route)
{
	struct backend *b = &s->backends[k];
	b->stats.rate_limited++;
	r->rate_limited++;
	r->limited_backend = k + 1;
	if (r->rate_limited > b->cfg.max_retries) {
		b->stats.limit_failed++;
		return fail_call(s, r, "429 from an API backend's per-minute limits, retries used up "
				       "(backends[].max_retries)");
	}
	int64_t wait = client_backoff_ns(b->cfg.backoff_initial_ns, b->cfg.backoff_max_ns,
					 r->rate_limited - 1, s->hyb.seed, call_key(r));
	b->stats.backoff_ns += wait;
	r->backoff_ns += wait;
	struct event e = {.t_ns = s->now_ns + wait, .prio = PRIO_ARRIVAL, .kind = EV_API_RETRY,
			  .obj = r, .arg = k, .gen = (uint64_t)route};
	if (evq_push(&s->q, &e) != 0) {
		s->live_reqs--;
		sreq_destroy(r);
		return DIAG_ENOMEM;
	}
	return 0;
}

/* Hand r to API backend k for reason `route`: within its per-minute limits
 * its cache is read and written now, and it finishes at its backend's
 * time; past them it gets a 429 (backend_limited). */
static int backend_serve(struct sim *s, struct sreq *r, int32_t k, int route)
{
	struct backend *b = &s->backends[k];
	int64_t bs = s->cfg.block_size;
	int64_t n = r->call.prompt_tokens / bs;
	if (n > r->call.n_hashes)
		n = r->call.n_hashes;
	int64_t peek = backend_cache_peek(b, r->call.block_hashes, n, bs, r->call.prompt_tokens,
					  s->now_ns);
	if (!backend_admit(b, s->now_ns, r->call.prompt_tokens, peek, r->call.output_tokens))
		return backend_limited(s, r, k, route);
	int64_t cached = 0;
	int rc = backend_cache(b, r->call.block_hashes, n, bs, r->call.prompt_tokens, s->now_ns,
			       &cached);
	if (rc != 0) {
		s->live_reqs--;
		sreq_destroy(r);
		return rc;
	}
	b->stats.calls++;
	r->backend = k + 1;
	r->route = route;
	r->dispatched_ns = r->scheduled_ns = s->now_ns;
	r->cached_first = cached;
	r->prefill_computed = r->call.prompt_tokens - cached;
	r->generated = 0;
	int64_t first, done;
	backend_times(&b->cfg, s->now_ns, r->call.prompt_tokens, cached, r->call.output_tokens,
		      &first, &done);
	r->api_first_ns = first;
	r->first_token_ns = first;
	struct event e = {.t_ns = done, .prio = PRIO_STEP_END, .kind = EV_API_DONE, .obj = r};
	if (evq_push(&s->q, &e) != 0) {
		s->live_reqs--;
		sreq_destroy(r);
		return DIAG_ENOMEM;
	}
	return 0;
}

/* r's API backend is done with it. */
static void backend_done(struct sim *s, struct sreq *r)
{
	int64_t out = r->call.output_tokens;
	if (out > 1 && s->sink.itl_run) {
		double total = (double)(s->now_ns - r->api_first_ns);
		struct res_itl_run run = {.first_ns = total / (double)(out - 1),
					  .last_ns = total / (double)(out - 1),
					  .total_ns = total, .steps = out - 1, .seqs = 1};
		s->sink.itl_run(s->sink.ctx, &run);
	}
	r->generated = out;
	r->state = SREQ_DONE;
	s->stats.completed++;
	s->live_reqs--;
	if (s->series.interval_ns)
		s->series.completions++;
	report(s, r, -1, RES_COMPLETED, NULL);
	sreq_put(s, r);
}

/* Whether a replica that could serve r is up. */
static bool local_up(const struct sim *s, const struct sreq *r)
{
	for (int32_t i = 0; i < s->n_replicas; i++)
		if (s->router.up[i] && ((r->pools_ok >> s->replicas[i].pool) & 1u))
			return true;
	return false;
}

/* Time to prefill `tokens` of a call whose whole prompt is ctx tokens on
 * rep, in chunks of `chunk` tokens, by its step-time model. */
static double prefill_ns(const struct replica *rep, int64_t tokens, int64_t ctx, int64_t chunk)
{
	double ns = 0;
	int64_t done = ctx - tokens;
	while (tokens > 0) {
		int64_t c = tokens < chunk ? tokens : chunk;
		struct perf_batch b = {.new_tokens = c, .seqs = 1, .decode_seqs = 0,
				       .attn_pairs = c * done + c * (c + 1) / 2, .kv_read_tokens = done + c};
		ns += rep->perf->step_ns(rep->perf->ctx, &b);
		done += c;
		tokens -= c;
	}
	return ns;
}

/* Prompt tokens of r that rep's prefix cache does not hold now. */
static int64_t uncached_on(const struct replica *rep, const struct sreq *r)
{
	int64_t bs = rep->cfg->block_size, hit = 0;
	int64_t n = r->call.prompt_tokens / bs;
	if (n > r->call.n_hashes)
		n = r->call.n_hashes;
	if (rep->cfg->enable_prefix_caching)
		hit = replica_match_len(rep, r->call.block_hashes, n);
	int64_t left = r->call.prompt_tokens - hit * bs;
	return left > 1 ? left : 1;
}

/* The k-th smallest (1-based) of x[0..n), reordering x: Hoare's
 * selection, O(n) on average. */
static int64_t kth_smallest(int64_t *x, int64_t n, int64_t k)
{
	int64_t lo = 0, hi = n - 1, want = k - 1;
	while (lo < hi) {
		int64_t pivot = x[lo + (hi - lo) / 2], i = lo, j = hi;
		while (i <= j) {
			while (x[i] < pivot)
				i++;
			while (x[j] > pivot)
				j--;
			if (i <= j) {
				int64_t t = x[i];
				x[i++] = x[j];
				x[j--] = t;
			}
		}
		if (want <= j)
			hi = j;
		else if (want >= i)
			lo = i;
		else
			return x[want];
	}
	return x[want];
}

/* Time until `need` of rep's running calls have finished, by their output
 * tokens still to come at the step time of the current decode batch; when
 * the calls waiting outnumber the slots, one such wait per round of
 * slots. */
static double slot_wait_ns(struct sim *s, const struct replica *rep, int64_t need)
{
	int64_t n = rep->n_running, kv = 0;
	if (n == 0)
		return 0;
	for (int64_t j = 0; j < n; j++) {
		const struct sreq *q = rep->running[j];
		s->hyb_scratch[j] = q->call.output_tokens - q->generated;
		kv += q->call.prompt_tokens + q->generated;
	}
	struct perf_batch b = {.new_tokens = n, .seqs = (int32_t)n, .decode_seqs = (int32_t)n,
			       .attn_pairs = kv + n, .kv_read_tokens = kv + n};
	double step = rep->perf->step_ns(rep->perf->ctx, &b);
	if (need <= n)
		return step * (double)kth_smallest(s->hyb_scratch, n, need);
	int64_t most = kth_smallest(s->hyb_scratch, n, n);
	return step * (double)most * (double)((need + n - 1) / n);
}

/* Whether r, picked for replica i (-1: it would wait at the router), goes
 * to the spill backend instead: the predicted queue wait or TTFT is over
 * its bound. */
static bool spill_over(struct sim *s, const struct sreq *r, int32_t i)
{
	const struct hybrid_config *h = &s->hyb;
	if (i < 0)
		return true;
	const struct replica *rep = &s->replicas[i];
	int64_t chunk = rep->cfg->max_num_batched_tokens - rep->n_running;
	if (chunk < 1)
		chunk = 1;
	double wait = 0;
	if (rep->busy) { /* a decode run is cut at its next step for an arrival */
		double left = (double)rep->run_t0_ns + rep->run_total_ns - (double)s->now_ns;
		double step = rep->run_k > 1 ? rep->run_total_ns / (double)rep->run_k : left;
		wait += left < step ? left : step;
	}
	int64_t need = (int64_t)rep->n_running + rep->wq_len + 1 - rep->cfg->max_num_seqs;
	if (need > 0)
		wait += slot_wait_ns(s, rep, need);
	for (int32_t j = 0; j < rep->n_running; j++) {
		const struct sreq *q = rep->running[j];
		if (q->computed < q->call.prompt_tokens)
			wait += prefill_ns(rep, q->call.prompt_tokens - q->computed, q->call.prompt_tokens,
					   chunk);
	}
	for (int64_t j = 0; j < rep->wq_len; j++) {
		if (h->spill_wait_ns > 0 && wait > h->spill_wait_ns)
			return true;
		if (h->spill_ttft_ns > 0 && wait > h->spill_ttft_ns)
			return true;
		const struct sreq *q = rep->wq[(rep->wq_head + j) % rep->wq_cap];
		wait += prefill_ns(rep, uncached_on(rep, q), q->call.prompt_tokens, chunk);
	}
	if (h->spill_wait_ns > 0 && wait > h->spill_wait_ns)
		return true;
	if (h->spill_ttft_ns > 0 &&
	    wait + prefill_ns(rep, uncached_on(rep, r), r->call.prompt_tokens, chunk) > h->spill_ttft_ns)
		return true;
	return false;
}

/* The backend the size and fallback rules send r to before the router
 * picks, or -1; *why says which rule. */
static int32_t hybrid_first(const struct sim *s, const struct sreq *r, int *why)
{
	const struct hybrid_config *h = &s->hyb;
	if (h->size_to >= 0 && r->call.prompt_tokens > h->size_prompt_tokens) {
		*why = RES_ROUTE_SIZE;
		return h->size_to;
	}
	if (h->fallback_to >= 0 && !local_up(s, r)) {
		*why = RES_ROUTE_FALLBACK;
		return h->fallback_to;
	}
	return -1;
}

/* r waits at the router, or is refused when its queue is full. */
static int queue_call(struct sim *s, struct sreq *r, const char *refused)
{
	struct router *rt = &s->router;
	if (router_queue_full(rt)) {
		rt->stats.refused++;
		return fail_call(s, r, refused);
	}
	if (router_queue_push(rt, r) != 0) {
		s->live_reqs--;
		sreq_destroy(r);
		return DIAG_ENOMEM;
	}
	return 0;
}

static int pd_route(struct sim *s, struct sreq *r, const char *refused);

/* Route r now (to a replica or an API backend), or queue it at the router,
 * or refuse it (queue full). */
static int route(struct sim *s, struct sreq *r, const char *refused)
{
	struct router *rt = &s->router;
	if (s->pd_on && r->pd_phase == SREQ_PD_NONE)
		return pd_route(s, r, refused);
	int why = RES_ROUTE_LOCAL;
	int32_t k = s->n_backends ? hybrid_first(s, r, &why) : -1;
	if (k >= 0)
		return backend_serve(s, r, k, why);
	int32_t i = router_queue_bypass(rt, r) ? router_pick(rt, r, s->replicas) : -1;
	if (s->n_backends && s->hyb.spill_to >= 0 && spill_over(s, r, i))
		return backend_serve(s, r, s->hyb.spill_to, RES_ROUTE_SPILL);
	if (i >= 0)
		return dispatch(s, r, i);
	return queue_call(s, r, refused);
}

int sim_retry(struct sim *s, struct sreq *r)
{
	r->outage = true;
	if (r->retries == 0)
		s->el_stats.retried_calls++;
	if (r->retries >= s->el.max_retries && !(s->n_backends && s->hyb.fallback_to >= 0)) {
		s->el_stats.fault_failed++;
		return fail_call(s, r, "replica failed and the call used its retries (faults.max_retries)");
	}
	r->retries++;
	s->el_stats.retries++;
	int64_t refused0 = s->router.stats.refused;
	int rc = route(s, r, "replica failed and the router queue was full on retry (router.queue_limit)");
	if (s->router.stats.refused != refused0)
		s->el_stats.fault_failed++;
	return rc;
}

/* ---- prefill/decode disaggregation (sim_set_pd) ---- */

int sim_set_pd(struct sim *s, const struct sim_pd_config *c, struct diag *d)
{
	if (c->prefill_pool < 0 || c->prefill_pool >= s->n_pools || c->decode_pool < 0 ||
	    c->decode_pool >= s->n_pools || c->prefill_pool == c->decode_pool)
		return diag_set(d, DIAG_EINPUT, "disaggregation: pools %d and %d (expected two "
				"different pools of the %d)", (int)c->prefill_pool, (int)c->decode_pool,
				(int)s->n_pools);
	if (!(c->kv_bytes_per_token > 0) || c->gpus < 1 || c->layers < 1 || !(c->link.gbs > 0) ||
	    c->non_cached_tokens < 0)
		return diag_set(d, DIAG_EINPUT, "disaggregation: KV bytes per token, GPUs, layers "
				"and link bandwidth must be positive");
	for (int32_t p = 0; p < 2; p++) {
		const struct engine_config *cfg = &s->pools[p ? c->decode_pool : c->prefill_pool].cfg;
		if (!cfg->enable_prefix_caching)
			return diag_set(d, DIAG_EINPUT, "disaggregation: the %s pool runs without "
					"prefix caching (expected engine.enable_prefix_caching true: "
					"the decode replica finds the blocks it holds by their hashes)",
					p ? "decode" : "prefill");
		if (cfg->sliding_window_tokens > 0 && cfg->window_group_blocks > 0)
			return diag_set(d, DIAG_EINPUT, "disaggregation: a model with sliding-window "
					"layers is not modelled yet (expected full attention)");
	}
	s->pd = *c;
	s->pd_on = true;
	s->router.rr_per_pool = true;
	for (int32_t i = 0; i < s->n_replicas; i++)
		s->replicas[i].runs = false; /* remote blocks are taken block by block */
	return 0;
}

/* Count r on decode replica i at the router from its pick (+1) to its
 * arrival there or its end (-1), so that load-based policies see the calls
 * still prefilling or in transfer. */
static void pd_reserve(struct sim *s, struct sreq *r, int32_t i, int dir)
{
	struct router *rt = &s->router;
	if (i < 0 || (dir > 0) == r->pd_reserved)
		return;
	int64_t tok = r->call.prompt_tokens + (r->pd_output > 0 ? r->pd_output : r->call.output_tokens);
	rt->out_reqs[i] += dir;
	rt->out_tokens[i] += dir * tok;
	r->pd_reserved = dir > 0;
}

/* Pick a replica of pool p for r, or -1 (the router queues it). */
static int32_t pd_pick(struct sim *s, struct sreq *r, int32_t p)
{
	r->pools_ok &= UINT64_C(1) << p;
	return router_queue_bypass(&s->router, r) && r->pools_ok
		       ? router_pick(&s->router, r, s->replicas) : -1;
}

/* A new call: pick its decode replica, and let the decider say whether
 * its prefill goes to the prefill pool. */
static int pd_route(struct sim *s, struct sreq *r, const char *refused)
{
	uint64_t ok = r->pools_ok;
	bool prefill_ok = (ok >> s->pd.prefill_pool) & 1u;
	int32_t dsel = pd_pick(s, r, s->pd.decode_pool);
	if (!r->pools_ok)
		return fail_call(s, r, "the decode pool cannot hold the call (its max_model_len or KV "
				 "cache)");
	/* the decider reads the picked replica's cache; with none picked yet
	 * (the router queues the call), the best any decode replica has */
	int64_t uncached = INT64_MAX;
	if (dsel >= 0)
		uncached = uncached_on(&s->replicas[dsel], r);
	for (int32_t i = 0; dsel < 0 && i < s->n_replicas; i++)
		if (s->replicas[i].pool == s->pd.decode_pool && s->router.up[i]) {
			int64_t u = uncached_on(&s->replicas[i], r);
			if (u < uncached)
				uncached = u;
		}
	bool remote = prefill_ok && (s->pd.always || uncached > s->pd.non_cached_tokens);
	if (!remote) {
		r->pd_phase = SREQ_PD_LOCAL;
		s->pd_stats.local++;
		return dsel >= 0 ? dispatch(s, r, dsel) : queue_call(s, r, refused);
	}
	r->pd_phase = SREQ_PD_PREFILL;
	r->pd_decode = dsel;
	r->pd_output = r->call.output_tokens;
	pd_reserve(s, r, dsel, +1);
	r->call.output_tokens = 1;
	s->pd_stats.remote++;
	r->pools_ok = ok;
	int32_t p = pd_pick(s, r, s->pd.prefill_pool);
	return p >= 0 ? dispatch(s, r, p) : queue_call(s, r, refused);
}

/* r's prefill and first token are done on rep: its KV leaves for the
 * decode replica, which it reaches after the transfer's exposed time. */
static int pd_prefilled(struct sim *s, struct replica *rep, struct sreq *r)
{
	int64_t bs = s->cfg.block_size;
	int64_t blocks = r->call.prompt_tokens / bs;
	if (blocks > r->call.n_hashes)
		blocks = r->call.n_hashes;
	/* the decode replica pulls what its cache lacks (vLLM's NIXL
	 * connector counts its local hits first) */
	int64_t have = 0;
	if (r->pd_decode >= 0 && s->router.up[r->pd_decode])
		have = replica_match_len(&s->replicas[r->pd_decode], r->call.block_hashes, blocks);
	else
		r->pd_decode = -1;
	int64_t send = blocks - have;
	struct kv_transfer x = {
		.bytes = (double)(send * bs) * s->pd.kv_bytes_per_token,
		.pieces = send > 0 ? (s->pd.buffered ? 1 : send) : 0,
		.gpus = s->pd.gpus,
		.layers = s->pd.layers,
		.layerwise = s->pd.layerwise,
		/* the prefill the layers overlap: the last admission's (a
		 * preempted or retried call computes again from there) */
		.prefill_ns = (double)(s->now_ns - r->admitted_ns),
	};
	double whole = 0, exposed = 0;
	if (send > 0)
		kvlink_time(&s->pd.link, &x, &whole, &exposed);
	struct sim_pd_stats *ps = &s->pd_stats;
	ps->transfers++;
	ps->blocks += send;
	ps->bytes += x.bytes;
	ps->whole_ns += whole;
	ps->exposed_ns += exposed;
	if (exposed > ps->max_exposed_ns)
		ps->max_exposed_ns = exposed;
	/* leave the prefill replica as a finished call does (its blocks stay
	 * in that replica's prefix cache) */
	replica_finish_blocks(rep, r, s->now_ns);
	replica_kv_reserve(rep, -r->seq_blocks);
	r->team_carry = true; /* its team's slot goes with it to the decode replica */
	router_done(&s->router, rep->id, r);
	if (rep->n_running == 0 && rep->wq_len == 0)
		rep->idle_since_ns = s->now_ns;
	if (s->elastic)
		lifecycle_on_finish(s, rep);
	/* on the decode replica it is a call with its first token and its
	 * prompt's KV to take, as a preempted one has with its KV to recompute */
	r->pd_phase = SREQ_PD_TRANSFER;
	r->call.output_tokens = r->pd_output;
	r->pd_remote_blocks = blocks;
	r->computed = 0;
	r->kv_obtained = 0;
	r->kv_dropped = 0;
	r->state = SREQ_WAITING;
	struct event e = {.t_ns = s->now_ns + (int64_t)ceil(exposed), .prio = PRIO_ARRIVAL,
			  .kind = EV_PD_ARRIVE, .obj = r};
	int rc = evq_push(&s->q, &e);
	if (s->router.q_len)
		sim_router_drain(s);
	return rc;
}

static int pd_arrive(struct sim *s, struct sreq *r)
{
	r->pd_phase = SREQ_PD_DECODE;
	r->pools_ok = UINT64_C(1) << s->pd.decode_pool;
	int32_t i = r->pd_decode;
	pd_reserve(s, r, i, -1); /* dispatch counts it for real */
	if (i < 0 || !s->router.up[i]) { /* picked none, or it went down meanwhile */
		/* it holds its team's slot already: no team queue for it */
		r->pools_ok &= UINT64_C(1) << s->pd.decode_pool;
		i = r->pools_ok && (r->team_carry || router_queue_bypass(&s->router, r))
			    ? router_pick(&s->router, r, s->replicas) : -1;
	}
	return i >= 0 ? dispatch(s, r, i)
		      : queue_call(s, r, "router queue full (router.queue_limit)");
}

static int on_arrival(struct sim *s, struct sreq *r)
{
	const char *why = NULL;
	r->sent_ns = s->now_ns;
	if (!r->pools_ok)
		pools_ok(s, &r->call, &why);
	if (s->series.interval_ns)
		s->series.arrivals++;
	if (why && s->n_backends && (s->hyb.size_to >= 0 || s->hyb.fallback_to >= 0))
		return backend_serve(s, r, s->hyb.size_to >= 0 ? s->hyb.size_to : s->hyb.fallback_to,
				     s->hyb.size_to >= 0 ? RES_ROUTE_SIZE : RES_ROUTE_FALLBACK);
	if (why)
		return fail_call(s, r, why);
	if (s->elastic) {
		r->outage = s->n_life[REP_DOWN] > 0; /* a hung replica is down too */
		int rc = lifecycle_on_arrival(s);
		if (rc != 0) {
			s->live_reqs--;
			sreq_destroy(r);
			return rc;
		}
	}
	return route(s, r, "router queue full (router.queue_limit)");
}

/* ---- fault detection by probe (sim/lifecycle.h) ---- */

/* r waits on hung replica i until the probes notice or its client's
 * timeout passes. */
static int hang_park(struct sim *s, struct sreq *r, int32_t i)
{
	int64_t t = s->hang_detect_ns[i];
	if (r->sent_ns + s->el.client_timeout_ns < t)
		t = r->sent_ns + s->el.client_timeout_ns;
	if (t < s->now_ns)
		t = s->now_ns;
	r->hung_on = i + 1;
	struct event e = {.t_ns = t, .prio = PRIO_ARRIVAL, .kind = EV_HUNG_GIVEUP, .obj = r,
			  .arg = i};
	if (evq_push(&s->q, &e) != 0) {
		router_done(&s->router, i, r);
		s->live_reqs--;
		sreq_destroy(r);
		return DIAG_ENOMEM;
	}
	return 0;
}

int sim_hang_begin(struct sim *s, struct replica *rep, int64_t repair_ns)
{
	const struct elastic_config *c = &s->el;
	int64_t p = c->probe_period_ns;
	/* the threshold-th failed probe after the fault, each failing after
	 * its timeout; the repair (a restart) ends the hang first if sooner */
	int64_t detect = (s->now_ns / p + c->probe_failure_threshold) * p + c->probe_timeout_ns;
	bool restarted = repair_ns >= 0 && s->now_ns + repair_ns < detect;
	if (restarted)
		detect = s->now_ns + repair_ns;
	if (detect <= s->now_ns)
		detect = s->now_ns + 1;
	s->hang_detect_ns[rep->id] = detect;
	uint64_t gen = ++s->hang_gen[rep->id];
	int64_t n = 0, need = (int64_t)rep->n_running + rep->wq_len;
	struct sreq **buf = s->scratch, **own = NULL;
	if (need > s->cfg.max_num_seqs) {
		own = malloc((size_t)need * sizeof(*own));
		if (!own)
			return DIAG_ENOMEM;
		buf = own;
	}
	replica_fail(s, rep, buf, &n);
	int rc = 0;
	for (int64_t j = 0; j < n; j++) {
		if (rc == 0) {
			rc = hang_park(s, buf[j], rep->id);
			continue;
		}
		/* out of memory: the calls not parked belong to no one */
		router_done(&s->router, rep->id, buf[j]);
		s->live_reqs--;
		sreq_destroy(buf[j]);
	}
	free(own);
	if (rc != 0)
		return rc;
	struct event e = {.t_ns = detect, .prio = PRIO_LIFE, .kind = EV_DETECTED, .obj = rep,
			  .arg = restarted, .gen = gen};
	if (evq_push(&s->q, &e) != 0)
		return DIAG_ENOMEM;
	s->n_background++;
	return 0;
}

void sim_hang_route(struct sim *s, struct replica *rep, bool was_up)
{
	if (was_up && rep->life == REP_DOWN)
		router_set_up(&s->router, rep->id, true);
}

/* The probes noticed the hang of rep (or its repair restarted it first:
 * `restarted`): the router stops sending it calls (those parked on it
 * give up now, by their own events). */
static int hang_detected(struct sim *s, struct replica *rep, uint64_t gen, bool restarted)
{
	if (gen != s->hang_gen[rep->id] || s->hang_detect_ns[rep->id] == 0)
		return 0;
	s->hang_detect_ns[rep->id] = 0;
	s->el_stats.detected += !restarted;
	if (rep->life == REP_DOWN)
		router_set_up(&s->router, rep->id, false);
	if (s->router.q_len)
		sim_router_drain(s);
	return s->err;
}

/* r gave up on hung replica i: the router learns it is no longer there,
 * and its client tries again after the back-off, within max_retries. */
static int hang_giveup(struct sim *s, struct sreq *r, int32_t i)
{
	router_done(&s->router, i, r);
	r->hung_on = 0;
	s->el_stats.hung_calls++;
	s->el_stats.hung_wait_ns += s->now_ns - r->sent_ns;
	s->el_stats.client_timeouts += s->now_ns - r->sent_ns >= s->el.client_timeout_ns;
	r->outage = true;
	if (r->retries == 0)
		s->el_stats.retried_calls++;
	if (r->retries >= s->el.max_retries && !(s->n_backends && s->hyb.fallback_to >= 0)) {
		s->el_stats.fault_failed++;
		return fail_call(s, r, "replica hung and the call used its retries (faults.max_retries)");
	}
	int64_t wait = client_backoff_ns(s->el.retry_initial_ns, s->el.retry_max_ns, r->retries,
					 s->el.seed, call_key(r));
	r->retries++;
	s->el_stats.retries++;
	s->el_stats.backoff_ns += wait;
	r->backoff_ns += wait;
	struct event e = {.t_ns = s->now_ns + wait, .prio = PRIO_ARRIVAL, .kind = EV_CLIENT_RETRY,
			  .obj = r};
	if (evq_push(&s->q, &e) != 0) {
		s->live_reqs--;
		sreq_destroy(r);
		return DIAG_ENOMEM;
	}
	return 0;
}

/* The client sends r again. */
static int client_retry(struct sim *s, struct sreq *r)
{
	r->sent_ns = s->now_ns;
	int64_t refused0 = s->router.stats.refused;
	int rc = route(s, r, "replica hung and the router queue was full on retry (router.queue_limit)");
	if (s->router.stats.refused != refused0)
		s->el_stats.fault_failed++;
	return rc;
}

/* Hand r to replica i (chosen by the router). */
static int dispatch(struct sim *s, struct sreq *r, int32_t i)
{
	struct router *rt = &s->router;
	int64_t waited = s->now_ns - r->arrival_ns;
	/* a retry's time includes its service, and a disaggregated call's
	 * second dispatch its prefill and transfer */
	bool second = r->pd_phase == SREQ_PD_DECODE;
	if (waited > 0 && r->retries == 0 && !second) {
		rt->stats.wait_ns_sum += waited;
		if (waited > rt->stats.wait_ns_max)
			rt->stats.wait_ns_max = waited;
	}
	if (!second)
		r->dispatched_ns = s->now_ns;
	int rc = router_sent(rt, i, r);
	if (second) /* its prompt arrives computed: no prefill for the router to wait on */
		router_first_token(rt, i, r);
	struct replica *rep = &s->replicas[i];
	if (rc == 0 && s->hang_detect_ns && s->hang_detect_ns[i] > 0 && rep->life == REP_DOWN)
		return hang_park(s, r, i); /* the router does not know yet */
	r->seq_blocks = sim_state_blocks(rep->cfg);
	if (s->series.interval_ns)
		s->series.rep[i].arrivals++;
	if (rc == 0)
		rc = replica_need_model(s, rep);
	if (rc == 0)
		rc = replica_enqueue(s, rep, r);
	if (rc != 0 && r->state != SREQ_WAITING) {
		router_done(rt, i, r);
		s->live_reqs--;
		sreq_destroy(r); /* never queued, so no one else will free it */
	}
	return rc;
}

static void backlog_add(const struct sreq *r, int64_t t_ns, struct sim_backlog *out)
{
	if (r->arrival_ns >= t_ns)
		return;
	out->arrived_before++;
	if (r->generated == 0)
		out->no_token_before++;
}

struct backlog_ctx {
	int64_t t_ns;
	struct sim_backlog *out;
};

static void backlog_router(void *ctx, const struct sreq *r)
{
	struct backlog_ctx *b = ctx;
	backlog_add(r, b->t_ns, b->out);
	b->out->waiting++;
}

void sim_backlog(const struct sim *s, int64_t t_ns, struct sim_backlog *out)
{
	memset(out, 0, sizeof(*out));
	struct backlog_ctx b = {t_ns, out};
	router_queue_each(&s->router, backlog_router, &b);
	for (int32_t i = 0; i < s->n_replicas; i++) {
		const struct replica *rep = &s->replicas[i];
		for (int64_t j = 0; j < rep->wq_len; j++)
			backlog_add(rep->wq[(rep->wq_head + j) % rep->wq_cap], t_ns, out);
		out->waiting += rep->wq_len;
		for (int32_t j = 0; j < rep->n_running; j++)
			backlog_add(rep->running[j], t_ns, out);
	}
}

int64_t sim_next_time(const struct sim *s)
{
	if (s->elastic && s->live_reqs == 0 && (int64_t)evq_len(&s->q) == s->n_background)
		return INT64_MAX; /* only lifecycle events: the run is over */
	const struct event *e = evq_peek(&s->q);
	return e ? e->t_ns : INT64_MAX;
}

int sim_step(struct sim *s, struct diag *d)
{
	struct event e;
	if (sim_next_time(s) == INT64_MAX || !evq_pop(&s->q, &e))
		return 0;
	while (s->series.interval_ns && s->series.next_ns <= e.t_ns)
		series_emit(s);
	if (s->router.scrape_ns > 0)
		router_scrape(&s->router, e.t_ns);
	s->now_ns = e.t_ns;
	s->stats.events++;
	int rc = 0;
	switch (e.kind) {
	case EV_ARRIVAL:
		rc = on_arrival(s, e.obj);
		break;
	case EV_STEP_END: {
		struct replica *rep = e.obj;
		bool was_busy = rep->busy;
		int64_t t0 = rep->run_t0_ns;
		rc = replica_step_end(s, rep, e.gen);
		if (s->series.interval_ns && was_busy && !rep->busy)
			series_busy(s, rep, t0, s->now_ns);
		break;
	}
	case EV_SCHEDULE:
		rc = replica_schedule(s, e.obj);
		break;
	case EV_API_DONE:
		backend_done(s, e.obj);
		break;
	case EV_LOADED:
		rc = replica_loaded(s, e.obj, e.gen);
		break;
	case EV_API_RETRY:
		rc = backend_serve(s, e.obj, (int32_t)e.arg, (int)e.gen);
		break;
	case EV_HUNG_GIVEUP:
		rc = hang_giveup(s, e.obj, (int32_t)e.arg);
		break;
	case EV_CLIENT_RETRY:
		rc = client_retry(s, e.obj);
		break;
	case EV_PD_ARRIVE:
		rc = pd_arrive(s, e.obj);
		break;
	case EV_DETECTED:
		s->n_background--;
		rc = hang_detected(s, e.obj, e.gen, e.arg != 0);
		break;
	case EV_FAULT:
	case EV_RATE_FAULT:
	case EV_REPAIRED:
	case EV_STARTED:
	case EV_AUTOSCALE:
	case EV_POLL:
	case EV_DECIDE:
		s->n_background--;
		rc = lifecycle_event(s, e.kind, e.obj, e.arg, e.gen);
		break;
	default:
		rc = DIAG_EINTERNAL;
	}
	if (rc == 0 && s->err)
		rc = s->err;
	if (rc == 0 && s->router.err)
		rc = s->router.err;
	for (int32_t i = 0; rc == 0 && s->tiers && i < s->n_tier_sets * s->tiers_cfg.n; i++)
		rc = s->tiers[i].err;
	if (rc == DIAG_ENOMEM)
		return diag_set(d, rc, "out of memory at t=%.6f s", (double)s->now_ns / 1e9);
	if (rc == DIAG_EINPUT && s->err_limit)
		return diag_set(d, rc, "the run stopped at t=%.6f s: %s", (double)s->now_ns / 1e9,
				s->err_limit);
	if (rc != 0)
		return diag_set(d, rc, "internal error in the simulator at t=%.6f s (event kind %u)",
				(double)s->now_ns / 1e9, e.kind);
	return 1;
}

struct sim_stats sim_get_stats(const struct sim *s)
{
	struct sim_stats st = s->stats;
	st.kv_evictions = 0;
	for (int32_t i = 0; i < s->n_replicas; i++) {
		const struct replica *rep = &s->replicas[i];
		st.kv_evictions += replica_kv_evictions(rep);
		if (!rep->retain)
			continue;
		const struct kvcache *kv = &rep->kv;
		if (kv->retain_peak > st.retain_peak_blocks)
			st.retain_peak_blocks = kv->retain_peak;
		double share = (double)kv->retain_peak / (double)kv->total_blocks;
		if (share > st.retain_peak_share)
			st.retain_peak_share = share;
		/* the level since the last change holds until now */
		st.retain_block_ns += rep->retain_area;
		if (s->now_ns > rep->retain_last_ns)
			st.retain_block_ns += (double)kv->retained * (double)(s->now_ns - rep->retain_last_ns);
		st.retain_hit_blocks += kv->retain_hits;
		st.retain_forced += kv->retain_forced;
		st.retain_capped += kv->retain_capped;
		st.retain_avoided += kv->retain_avoided;
	}
	if (s->now_ns > 0)
		st.retain_mean_blocks = st.retain_block_ns / (double)s->now_ns;
	return st;
}

struct elastic_stats sim_elastic_stats(const struct sim *s)
{
	struct elastic_stats st = s->el_stats;
	if (s->n_life[REP_DOWN] > 0)
		st.outage_ns += s->now_ns - s->outage_since_ns;
	return st;
}

int sim_check_end(const struct sim *s, struct diag *d)
{
	const struct sim_stats *st = &s->stats;
	if ((int64_t)evq_len(&s->q) != s->n_background)
		return diag_set(d, DIAG_EINTERNAL, "invariant: %lld events still queued",
				(long long)((int64_t)evq_len(&s->q) - s->n_background));
	if (st->submitted != st->completed + st->rejected || s->live_reqs != 0)
		return diag_set(d, DIAG_EINTERNAL,
				"invariant: %lld calls submitted but %lld completed and %lld rejected",
				(long long)st->submitted, (long long)st->completed, (long long)st->rejected);
	if (s->tokens_scheduled != s->tokens_applied)
		return diag_set(d, DIAG_EINTERNAL,
				"invariant: %lld tokens scheduled but %lld credited to requests",
				(long long)s->tokens_scheduled, (long long)s->tokens_applied);
	if (s->router.q_len != 0)
		return diag_set(d, DIAG_EINTERNAL, "invariant: %lld calls still wait at the router",
				(long long)s->router.q_len);
	for (int32_t i = 0; i < s->n_replicas; i++) {
		const struct replica *rep = &s->replicas[i];
		if (s->router.out_reqs[i] != 0 || s->router.out_tokens[i] != 0)
			return diag_set(d, DIAG_EINTERNAL,
					"invariant: the router counts %lld calls outstanding on replica %d",
					(long long)s->router.out_reqs[i], (int)i);
		if (rep->life == REP_DRAINING)
			return diag_set(d, DIAG_EINTERNAL, "invariant: replica %d drains with nothing left", (int)i);
		if (rep->n_running || rep->wq_len || rep->busy)
			return diag_set(d, DIAG_EINTERNAL, "invariant: replica %d still has work", (int)i);
		if (rep->kv_err)
			return diag_set(d, rep->kv_err, "replica %d ran out of memory releasing KV blocks",
					(int)i);
		if (replica_kv_reserved(rep) != 0)
			return diag_set(d, DIAG_EINTERNAL, "invariant: replica %d still reserves %lld blocks",
					(int)i, (long long)replica_kv_reserved(rep));
		if (replica_kv_used(rep) != 0)
			return diag_set(d, DIAG_EINTERNAL, "invariant: replica %d leaked %lld KV blocks",
					(int)i, (long long)replica_kv_used(rep));
		if (rep->n_pend != 0)
			return diag_set(d, DIAG_EINTERNAL,
					"invariant: replica %d has %d requests with prompt blocks in flight",
					(int)i, (int)rep->n_pend);
		if (!replica_kv_check(rep))
			return diag_set(d, DIAG_EINTERNAL, "invariant: replica %d KV cache structure broken", (int)i);
	}
	return 0;
}
