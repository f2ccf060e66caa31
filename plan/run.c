/* SPDX-License-Identifier: Apache-2.0
 * run: one replay of a deployment and its report's figures (see run.h). */
#include "plan/run.h"

#include "base/diag.h"
#include "models/catalog.h"
#include "models/prices.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- the progress tap: passes every record on, tells of each call ---- */

struct tap {
	void (*fn)(void *ctx, int64_t done_ns);
	void *ctx;
	struct res_sink next;
};

static void tap_request(void *ctx, const struct res_request *r)
{
	struct tap *t = ctx;
	t->fn(t->ctx, r->done_ns);
	if (t->next.request)
		t->next.request(t->next.ctx, r);
}

static void tap_itl_run(void *ctx, const struct res_itl_run *r)
{
	struct tap *t = ctx;
	if (t->next.itl_run)
		t->next.itl_run(t->next.ctx, r);
}

static void tap_busy(void *ctx, const struct res_busy *b)
{
	struct tap *t = ctx;
	if (t->next.busy)
		t->next.busy(t->next.ctx, b);
}

static void tap_session(void *ctx, const struct res_span *s)
{
	struct tap *t = ctx;
	if (t->next.session)
		t->next.session(t->next.ctx, s);
}

static void tap_task(void *ctx, const struct res_span *s)
{
	struct tap *t = ctx;
	if (t->next.task)
		t->next.task(t->next.ctx, s);
}

static void tap_sample(void *ctx, const struct res_sample *smp)
{
	struct tap *t = ctx;
	if (t->next.sample)
		t->next.sample(t->next.ctx, smp);
}

static void tap_replica(void *ctx, const struct res_replica *r)
{
	struct tap *t = ctx;
	if (t->next.replica)
		t->next.replica(t->next.ctx, r);
}

static struct res_sink tap_sink(struct tap *t)
{
	return (struct res_sink){.ctx = t, .request = tap_request, .itl_run = tap_itl_run,
				 .busy = tap_busy, .session = tap_session, .task = tap_task,
				 .replica = tap_replica, .sample = tap_sample};
}

/* ---- the run ---- */

/* The cluster section of the pools (each pool's shape, its replicas). */
static int cluster_pools(const struct deployment *dp, const struct deploy_vary *v,
			 struct cluster *cl, struct diag *d)
{
	struct cluster_pool cp[SCENARIO_MAX_POOLS];
	for (int32_t i = 0, first = 0; i < dp->n_pools; i++) {
		const struct deploy_pool *p = &dp->pool[i];
		cp[i] = (struct cluster_pool){
			.name = p->sc.name, .model_id = p->pm.model_id,
			.hardware_id = p->pm.hardware_id, .weight_format = p->pm.weight_format_id,
			.kv_dtype = p->pm.kv_dtype_id, .engine_profile = p->sc.engine_profile,
			.tp = p->pm.tp, .pp = p->pm.pp, .ep = p->pm.ep,
			.kv_capacity_tokens = p->cfg.kv_cache_tokens,
			.max_num_seqs = p->cfg.max_num_seqs, .max_model_len = p->cfg.max_model_len,
			.first = first, .replicas = deploy_pool_replicas(dp, v, i),
			.gpus_per_replica = p->pm.tp * p->pm.pp};
		first += cp[i].replicas;
	}
	return cluster_set_pools(cl, cp, dp->n_pools) == 0
		       ? 0
		       : diag_set(d, DIAG_ENOMEM, "out of memory");
}

/* The lifecycle section of the cluster report: settings, the simulator's
 * counters and the SLO attainment inside and outside outages. */
static void fill_elastic(struct cluster_elastic *e, const struct deployment *dp, int32_t n_rep,
			 const struct elastic_stats *es, const struct sim_stats *sim,
			 const struct metrics_summary *sum)
{
	const struct scenario *sc = dp->sc;
	const struct elastic_config *ec = &dp->elastic;
	e->on = true;
	e->lifecycle = dp->elastic_on;
	/* with pools, the slowest pool's start-up */
	const struct deploy_pool *slow = &dp->pool[0];
	for (int32_t i = 1; i < dp->n_pools; i++)
		if (dp->pool[i].startup.total_s > slow->startup.total_s)
			slow = &dp->pool[i];
	const struct startup_parts *sp = &slow->startup;
	e->provision_s = sp->provision_s;
	e->image_pull_s = sp->image_pull_s;
	e->engine_start_s = sp->engine_start_s;
	e->weight_load_s = sp->weight_load_s;
	e->compile_s = sp->compile_s;
	e->cuda_graph_s = sp->cuda_graph_s;
	e->warmup_s = sp->warmup_s;
	e->model_load_s = sp->model_load_s;
	e->startup_s = slow->cfg.load_on_demand ? sp->server_s : sp->total_s;
	e->image_prepulled = sc->image_prepulled;
	e->compile_cache = sc->compile_cache;
	e->on_demand = dp->on_demand;
	e->keep_alive_s = -1.0;
	for (int32_t i = 0; i < dp->n_pools; i++)
		if (dp->pool[i].cfg.load_on_demand) {
			e->keep_alive_s = (double)dp->pool[i].cfg.keep_alive_ns / 1e9;
			break;
		}
	e->model_loads = sim->model_loads;
	e->model_reloads = sim->model_reloads;
	e->model_load_total_s = (double)sim->model_load_ns / 1e9;
	e->autoscale = ec->autoscale;
	e->policy = autoscale_policy_name(ec->policy);
	e->tolerance = ec->hpa.tolerance;
	e->up_window_s = (double)ec->hpa.up_window_ns / 1e9;
	e->down_window_s = (double)ec->hpa.down_window_ns / 1e9;
	e->up_pods = ec->hpa.up_pods;
	e->up_percent = ec->hpa.up_percent;
	e->up_period_s = (double)ec->hpa.up_period_ns / 1e9;
	e->down_percent = ec->hpa.down_percent;
	e->down_period_s = (double)ec->hpa.down_period_ns / 1e9;
	e->metric_lag_s = (double)ec->metric_lag_ns / 1e9;
	e->polling_s = (double)ec->polling_ns / 1e9;
	e->activation = ec->activation;
	e->activations = es->activations;
	e->deactivations = es->deactivations;
	e->metric = autoscale_metric_name(ec->metric);
	e->target = ec->target;
	e->min_replicas = ec->min_replicas;
	e->max_replicas = ec->max_replicas > 0 ? ec->max_replicas : n_rep;
	e->interval_s = (double)ec->interval_ns / 1e9;
	e->cooldown_s = (double)ec->cooldown_ns / 1e9;
	e->evaluations = es->evaluations;
	e->scale_outs = es->scale_outs;
	e->scale_ins = es->scale_ins;
	e->starts = es->starts;
	e->active_min = es->active_min;
	e->active_max = es->active_max;
	e->faults = ec->n_faults > 0 || ec->mtbf_ns > 0.0;
	e->fault_count = es->faults;
	e->faults_skipped = es->faults_skipped;
	e->retries = es->retries;
	e->retried_calls = es->retried_calls;
	e->fault_failed = es->fault_failed;
	e->outage_s = (double)es->outage_ns / 1e9;
	e->detection = ec->detection == FAULT_DETECT_PROBE ? "probe" : "instant";
	e->probe_period_s = (double)ec->probe_period_ns / 1e9;
	e->probe_timeout_s = (double)ec->probe_timeout_ns / 1e9;
	e->client_timeout_s = (double)ec->client_timeout_ns / 1e9;
	e->probe_failure_threshold = ec->probe_failure_threshold;
	e->detected = es->detected;
	e->hung_calls = es->hung_calls;
	e->client_timeouts = es->client_timeouts;
	e->hung_wait_s = (double)es->hung_wait_ns / 1e9;
	e->backoff_s = (double)es->backoff_ns / 1e9;
	int64_t calls = sum->completed + sum->failed;
	e->calls_outage = sum->calls_outage;
	e->good_outage = sum->good_outage;
	e->calls_outside = calls - sum->calls_outage;
	e->good_outside = sum->good_requests - sum->good_outage;
	e->slo_attainment_outage =
		e->calls_outage > 0 ? (double)e->good_outage / (double)e->calls_outage : 0.0;
	e->slo_attainment_outside =
		e->calls_outside > 0 ? (double)e->good_outside / (double)e->calls_outside : 0.0;
}

/* The cluster summary: per replica and pool, the router's decisions, the
 * lifecycle. */
static void cluster_figures(const struct run_setup *s, struct run_result *r)
{
	const struct deployment *dp = s->dep;
	const struct scenario *top = dp->sc;
	const struct scenario *shape = &dp->pool[0].sc;
	for (int32_t i = 0; i < r->replicas; i++)
		cluster_set_routed(r->cl, i, r->routed[i]);
	cluster_summarize(r->cl, r->sum.duration_s,
			  shape->tensor_parallel_size * shape->pipeline_parallel_size, &r->cls);
	const struct router_stats *rs = &r->st.router;
	r->cls.router = (struct cluster_router){
		.policy = router_policy_name(top->router.policy),
		.prefix_scorer = top->router.policy == ROUTER_PREFIX_AWARE
					 ? router_scorer_name(top->router.prefix_scorer)
					 : NULL,
		.routed = rs->routed,
		.queued = rs->queued,
		.refused = rs->refused,
		.affinity_fallbacks = rs->affinity_fallbacks,
		.load_capped = rs->load_capped,
		.prefix_matched = rs->prefix_matched,
		.queue_peak = rs->queue_peak,
		.wait_mean_ms = rs->queued ? (double)rs->wait_ns_sum / (double)rs->queued / 1e6 : 0.0,
		.wait_max_ms = (double)rs->wait_ns_max / 1e6,
	};
	if (dp->elastic_on || dp->on_demand)
		fill_elastic(&r->cls.elastic, dp, r->replicas, &r->st.elastic, &r->st.sim, &r->sum);
}

/* The step model's error bars for pool 0's shape; a measured profile
 * replaces the model, and has none. */
static int error_bars(const struct deployment *dp, struct run_result *r, struct diag *d)
{
	const struct deploy_pool *p0 = &dp->pool[0];
	if (p0->prof)
		return 0;
	int rc = uncert_load(&r->bands, NULL, d);
	static const char *const metric[3] = {"output_throughput_tok_s", "ttft_ms", "tpot_ms"};
	double *pct[3] = {&r->rb.throughput_pct, &r->rb.ttft_pct, &r->rb.tpot_pct};
	const char **name[3] = {&r->rb.throughput_regime, &r->rb.ttft_regime, &r->rb.tpot_regime};
	/* a shape outside the calibration set's coverage (a package, memory
	 * kind, format or engine with no row) gets wider bands, and says so */
	const struct cat_hardware *hw = catalog_hardware(dp->cat, p0->pm.hardware_id);
	struct uncert_point pt = { .package = hw ? catalog_package_kind(hw) : NULL,
				   .memory = hw ? catalog_memory_kind(hw) : NULL,
				   .format = p0->pm.weight_format_id,
				   .engine = p0->pm.engine_id };
	for (int k = 0; k < 3 && rc == 0; k++) {
		struct uncert_band b =
			uncert_lookup(&r->bands, p0->pm.family_id, p0->pm.engine_id, metric[k]);
		if (!b.regime)
			break;
		if (uncert_widen(&r->bands, &pt, &b, r->extrapolation, sizeof(r->extrapolation)))
			r->rb.extrapolation = r->extrapolation;
		*pct[k] = b.pct;
		*name[k] = uncert_regime_name(b.regime, r->regimes[k], sizeof(r->regimes[k]));
		r->rb.coverage = r->bands.coverage;
	}
	r->rb.commit = r->bands.commit[0] ? r->bands.commit : NULL;
	return rc;
}

/* Whether the report splits latencies by priority class and team: with
 * either feature on, with teams named, or when asked. */
static bool run_groups(const struct run_setup *s)
{
	const struct scenario *sc = s->dep->sc;
	return s->detail && (sc->scheduling.policy == SCENARIO_SCHED_PRIORITY ||
			     sc->router.team_max_inflight > 0 || sc->teams.n > 0 || sc->report_groups);
}

int run_replay(const struct run_setup *s, struct run_result *r, struct diag *d)
{
	const struct deployment *dp = s->dep;
	const struct scenario *sc = dp->sc;
	memset(r, 0, sizeof(*r));
	uncert_init(&r->bands);
	diag_init(&r->csv_d);
	r->replicas = deploy_replicas(dp, &s->vary);
	bool backends = dp->backends.hybrid.n > 0;
	bool cluster = s->detail && (r->replicas > 1 || dp->pooled || dp->elastic_on || dp->on_demand);
	bool series = s->detail && sc->report_interval_s > 0.0;
	int rc = (r->m = metrics_new()) ? 0 : diag_set(d, DIAG_ENOMEM, "out of memory");
	if (rc == 0) {
		metrics_set_replicas(r->m, r->replicas);
		metrics_set_slo(r->m, s->own_slo ? s->slo_ttft_ms : sc->slo_ttft_ms,
				s->own_slo ? s->slo_tpot_ms : sc->slo_tpot_ms);
		struct res_capacity cap;
		deploy_capacity(dp, &s->vary, &cap);
		metrics_set_capacity(r->m, &cap);
		metrics_set_groups(r->m, run_groups(s));
	}
	struct res_sink sink = r->m ? metrics_sink(r->m) : (struct res_sink){0};
	/* several replicas, pools, or replicas that come and go: a
	 * per-replica aggregator in front of the metrics */
	if (rc == 0 && cluster) {
		if (!(r->cl = cluster_new(r->replicas, sink)) ||
		    !(r->routed = calloc((size_t)r->replicas, sizeof(*r->routed))))
			rc = diag_set(d, DIAG_ENOMEM, "out of memory");
		else
			sink = cluster_sink(r->cl);
		if (rc == 0 && dp->pooled)
			rc = cluster_pools(dp, &s->vary, r->cl, d);
	}
	const char *names[SCENARIO_MAX_BACKENDS];
	if (rc == 0 && backends) {
		struct backends_api apis[SCENARIO_MAX_BACKENDS];
		for (int32_t i = 0; i < dp->backends.hybrid.n; i++) {
			const struct scenario_backend *b = &sc->backends[i];
			const struct scenario_backend_price *p = &dp->backends.price[i];
			names[i] = b->name;
			apis[i] = (struct backends_api){
				.name = b->name, .kind = b->kind, .price_id = b->price,
				.list = p->priced ? &p->list : NULL,
				.seat_usd_month = p->seat ? p->seat->usd : 0,
				.cache_min_tokens = dp->backends.hybrid.b[i].cache_min_tokens,
				.cache = dp->backends.hybrid.b[i].cache_ttl_ns > 0};
		}
		if ((r->bk = backends_new(apis, dp->backends.hybrid.n, sink)) != NULL)
			sink = backends_sink(r->bk);
		else
			rc = diag_set(d, DIAG_ENOMEM, "out of memory");
	}
	if (rc == 0 && s->csv) {
		reqcsv_init_backends(&r->csv, s->csv, sink, backends ? names : NULL,
				     backends ? dp->backends.hybrid.n : 0);
		sink = reqcsv_sink(&r->csv);
	}
	struct tap tap;
	if (rc == 0 && s->progress) {
		tap = (struct tap){.fn = s->progress, .ctx = s->progress_ctx, .next = sink};
		sink = tap_sink(&tap);
	}
	/* report.interval_s: a recorder in front of everything else */
	if (rc == 0 && series) {
		if ((r->tsr = timeseries_new(r->replicas, sink)) != NULL)
			sink = timeseries_sink(r->tsr);
		else
			rc = diag_set(d, DIAG_ENOMEM, "out of memory");
	}
	struct replay_opts o = s->replay;
	o.routed = r->routed;
	if (series)
		o.series_interval_ns = llround(sc->report_interval_s * 1e9);
	if (rc == 0)
		rc = deploy_run(dp, &o, &s->vary, sink, &r->st, d);
	if (rc == 0 && r->tsr)
		rc = timeseries_check(r->tsr, d);
	if (rc == 0 && s->csv)
		r->csv_rc = reqcsv_status(&r->csv, s->csv_name ? s->csv_name : "the per-call CSV",
					   &r->csv_d);
	if (rc == 0)
		rc = metrics_summarize(r->m, &r->sum, d);
	for (int32_t k = 0; rc == 0 && k < METRICS_MAX_TEAMS; k++) {
		char *l = r->team_label[k];
		if (k == 0)
			snprintf(l, SCENARIO_STR_MAX, "none");
		else if (k <= sc->teams.n)
			snprintf(l, SCENARIO_STR_MAX, "%s", sc->teams.name[k - 1]);
		else
			snprintf(l, SCENARIO_STR_MAX, "#%016" PRIx64, r->st.team_ids[k]);
	}
	if (rc == 0 && r->cl)
		cluster_figures(s, r);
	if (rc == 0 && r->bk) {
		rc = backends_summarize(r->bk, &r->bsum, d);
		const struct scenario_routes *ru = &sc->routes;
		r->bsum.spill_to = ru->spill_to[0] ? ru->spill_to : NULL;
		r->bsum.spill_wait_ms = ru->spill_wait_ms;
		r->bsum.spill_ttft_ms = ru->spill_ttft_ms;
		r->bsum.fallback_to = ru->fallback_to[0] ? ru->fallback_to : NULL;
		r->bsum.size_to = ru->size_to[0] ? ru->size_to : NULL;
		r->bsum.size_prompt_tokens = ru->size_prompt_tokens;
	}
	if (rc == 0 && s->detail)
		rc = error_bars(dp, r, d);
	return rc;
}

void run_release(struct run_result *r)
{
	uncert_release(&r->bands);
	backends_free(r->bk);
	cluster_free(r->cl);
	timeseries_free(r->tsr);
	free(r->routed);
	metrics_free(r->m);
	r->bk = NULL;
	r->cl = NULL;
	r->tsr = NULL;
	r->routed = NULL;
	r->m = NULL;
}

void run_meta(const struct run_setup *s, const struct run_result *r, struct report_meta *meta)
{
	const struct deployment *dp = s->dep;
	const struct scenario *sc = dp->sc;
	const struct deploy_pool *p0 = &dp->pool[0];
	const struct scenario *shape = &p0->sc;
	const struct engine_config *cfg = &p0->cfg;
	const struct replay_stats *st = &r->st;
	bool scaled = s->replay.scale.engineers > 0;
	memset(meta, 0, sizeof(*meta));
	*meta = (struct report_meta){
		.trace_path = s->replay.trace_path,
		.trace_format = st->trace_format,
		.scenario_name = sc->name,
		.scenario_path = sc->source,
		.model_id = shape->model,
		.hardware_id = shape->hardware,
		.weight_format = shape->weight_format,
		.kv_dtype = shape->kv_cache_dtype,
		.tp = shape->tensor_parallel_size,
		.ep = p0->pm.ep,
		.seed = s->replay.seed,
		.kv_capacity_tokens = cfg->kv_cache_tokens,
		.block_size = (int32_t)cfg->block_size,
		.max_num_seqs = cfg->max_num_seqs,
		.max_num_batched_tokens = cfg->max_num_batched_tokens,
		.prefix_caching = cfg->enable_prefix_caching,
		.chunked_prefill = cfg->enable_chunked_prefill,
		.skipped_bad_lines = st->skipped_lines,
		.events_processed = st->sim.events,
		.engine_steps = st->sim.steps,
		.kv_evicted_blocks = st->sim.kv_evictions,
		.scaled_engineers = scaled ? st->scale.engineers : 0,
		.scaled_days = scaled ? st->scale.days : 0,
		.slo_ttft_ms = s->own_slo ? s->slo_ttft_ms : sc->slo_ttft_ms,
		.slo_tpot_ms = s->own_slo ? s->slo_tpot_ms : sc->slo_tpot_ms,
		.engine = {.profile = shape->engine_profile, .pp = shape->pipeline_parallel_size,
			   .max_model_len = cfg->max_model_len,
			   .gpu_memory_utilization = cfg->gpu_memory_utilization,
			   .reserve_full_prompt = cfg->reserve_full_prompt},
		.context = {.policy = context_policy_name(s->vary.compact ? CONTEXT_COMPACT
									  : sc->context_policy),
			    .compacted = st->calls_compacted, .truncated = st->calls_truncated,
			    .too_long = st->calls_too_long},
		.cluster = r->cl ? &r->cls : NULL,
		.backends = r->bk ? &r->bsum : NULL,
		.timeseries = r->tsr,
		.timeseries_interval_s = r->tsr ? sc->report_interval_s : 0.0,
		.slo_attainment_target = sc->slo_attainment,
		.bands = r->rb,
	};
	if (dp->tiers.n > 0)
		meta->tiers = (struct report_tiers){
			.n = dp->tiers.n, .host_gb = sc->kv_tiers.host_gb,
			.disk_gb = sc->kv_tiers.disk_gb, .host_gbs = dp->tier_host_gbs,
			.disk_gbs = dp->tiers.n > 1 ? sc->kv_tiers.disk_gbs : 0,
			.shared_by = dp->tiers.shared_by,
			.mode = dp->tiers.mode == SIM_TIER_WRITE_THROUGH ? "write_through" : "evict",
			.chunk_tokens = sc->kv_tiers.chunk_tokens,
			.async_store = sc->kv_tiers.async_store};
	if (run_groups(s)) {
		meta->groups.on = true;
		meta->groups.policy = sc->scheduling.policy == SCENARIO_SCHED_PRIORITY ? "priority"
											: "fcfs";
		meta->groups.team_max_inflight = sc->router.team_max_inflight;
		for (int32_t k = 0; k < METRICS_MAX_TEAMS; k++)
			meta->groups.team_label[k] = r->team_label[k];
	}
	if (cfg->kv_retain_ttl_ns > 0)
		meta->retention = (struct report_retention){
			.on = true, .ttl_s = sc->kv_retention.ttl_s,
			.max_fraction = sc->kv_retention.max_fraction,
			.peak_blocks = st->sim.retain_peak_blocks,
			.peak_share = st->sim.retain_peak_share,
			.mean_blocks = st->sim.retain_mean_blocks,
			.hit_tokens = st->sim.retain_hit_blocks * cfg->block_size,
			.avoided = st->sim.retain_avoided, .forced = st->sim.retain_forced,
			.capped = st->sim.retain_capped};
	if (dp->pd_on) {
		const struct sim_pd_stats *ps = &st->pd;
		meta->pd = (struct report_pd){
			.on = true, .link = sc->pd.link, .decider = sc->pd.decider,
			.threshold = dp->pd.always ? 0 : dp->pd.non_cached_tokens,
			.remote = ps->remote, .local = ps->local, .blocks = ps->blocks,
			.gb = ps->bytes / 1e9,
			.wait_mean_ms = ps->transfers ? ps->exposed_ns / (double)ps->transfers / 1e6 : 0,
			.wait_max_ms = ps->max_exposed_ns / 1e6, .transfer_s = ps->whole_ns / 1e9};
	}
	meta->tiers.loaded_blocks = st->sim.tier_loaded_blocks;
	meta->tiers.load_s = st->sim.tier_load_ns / 1e9;
	meta->tiers.stored_blocks = st->sim.tier_stored_blocks;
	meta->tiers.stored_chunks = st->sim.tier_stored_chunks;
	meta->tiers.stored_gb = st->sim.tier_stored_bytes / 1e9;
	meta->tiers.store_s = st->sim.tier_store_ns / 1e9;
	meta->tiers.stall_s = st->sim.tier_store_stall_ns / 1e9;
	meta->tiers.load_wait_s = st->sim.tier_load_wait_ns / 1e9;
	if (strcmp(sc->spec.method, "off") != 0) {
		struct report_spec *p = &meta->spec;
		p->on = true;
		p->method = sc->spec.method;
		p->draft = strcmp(sc->spec.method, "draft") == 0 ? sc->spec.draft_model
			   : strcmp(sc->spec.method, "ngram") == 0 || strcmp(sc->spec.method, "suffix") == 0
				   ? "(model-free, on the host)"
				   : sc->model;
		p->k = sc->spec.k;
		p->given = sc->spec.given;
		p->given_text = sc->spec.given_text;
		for (int i = 0; i < OUT_KINDS; i++) {
			p->acceptance[i] = sc->spec.alpha[i];
			p->seq_steps[i] = st->sim.spec_seq_steps[i];
			p->tokens[i] = st->sim.spec_tokens[i];
		}
		p->run_s = st->sim.spec_run_ns / 1e9;
		p->plain_s = st->sim.spec_plain_ns / 1e9;
	}
}

/* One option: its parameters from the catalogue (COST_NO_PRICE: not on
 * offer), the scenario's keys over them, then its figures. */
int run_cost(struct costing *c, const struct prices *pr, const struct catalog *cat,
	     const struct scenario *sc, const struct run_result *r, int64_t engineers, int64_t days,
	     struct diag *d)
{
	memset(c, 0, sizeof(*c));
	const struct cat_hardware *hw = catalog_hardware(cat, sc->hardware);
	if (!hw)
		return diag_set(d, DIAG_EINPUT, "unknown hardware '%s'", sc->hardware);
	snprintf(c->hardware, sizeof(c->hardware), "%s", hw->id);
	if (sc->cost.periods_per_month >= 0) {
		c->periods_per_month = sc->cost.periods_per_month;
		snprintf(c->periods_source, sizeof(c->periods_source), "cost.periods_per_month");
	} else if (engineers > 0 && days > 0) {
		char why[COSTING_NOTE_MAX / 2];
		double workdays = scenario_workdays_per_year(sc, why, sizeof(why));
		c->periods_per_month = workdays / 12.0 / (double)days;
		snprintf(c->periods_source, sizeof(c->periods_source), "%s / 12 over the team's "
			 "%lld day%s", why, (long long)days, days == 1 ? "" : "s");
	} else {
		snprintf(c->periods_source, sizeof(c->periods_source),
			 "730 h / the replayed span: the trace taken as round-the-clock traffic");
	}
	struct cost_usage u;
	costing_usage(&u, &r->sum, r->cl ? &r->cls : NULL, sc->replicas,
		      sc->tensor_parallel_size * sc->pipeline_parallel_size, engineers,
		      c->periods_per_month);
	if (u.periods_per_month == 0)
		c->periods_per_month = cost_periods_per_month(&u);
	else
		u.periods_source = c->periods_source;
	struct cost_task t;
	cost_task_default(&t);
	scenario_cost_apply(sc, NULL, NULL, NULL, &t);
	struct diag pd;
	diag_init(&pd);
	int rc = cost_watts(hw, &c->busy_w, &c->idle_w, &pd);
	c->powered = rc == 0;
	if (!c->powered)
		snprintf(c->note, sizeof(c->note), "purchase and energy: %s", pd.msg);
	struct cost_purchase pp;
	rc = cost_purchase_from_prices(&pp, pr, hw, d); /* COST_NO_PRICE unpowered */
	if (rc == 0) {
		scenario_cost_apply(sc, &pp, NULL, NULL, NULL);
		rc = cost_purchase_eval(&pp, &u, &t, &c->r[c->n++], d);
	}
	if (rc == 0 || rc == COST_NO_PRICE) {
		struct cost_dedicated dp;
		rc = cost_dedicated_from_prices(&dp, pr, hw, d);
		if (rc == 0) {
			scenario_cost_apply(sc, NULL, &dp, NULL, NULL);
			rc = cost_dedicated_eval(&dp, &u, &t, &c->r[c->n++], d);
		}
	}
	if (rc == 0 || rc == COST_NO_PRICE) {
		struct cost_elastic ep;
		rc = cost_elastic_from_prices(&ep, pr, hw, sc->cost.gpu_hour_row, d);
		if (rc == 0) {
			scenario_cost_apply(sc, NULL, NULL, &ep, NULL);
			rc = cost_elastic_eval(&ep, &u, &t, &c->r[c->n++], d);
		}
	}
	if (rc && rc != COST_NO_PRICE)
		return rc;
	if (!c->powered)
		return 0;
	const struct price_row *row = prices_find(pr, PRICE_PUE, COST_DEFAULT_PUE);
	if (row)
		cost_fig_set(&c->pue, row->usd, "prices.json %s", row->id);
	else
		cost_fig_set(&c->pue, 1.0, "no PUE row: IT power only");
	if (sc->cost.pue >= 0)
		cost_fig_set(&c->pue, sc->cost.pue, "cost.pue");
	return cost_energy_eval(&u, c->busy_w.value, c->idle_w.value, c->pue.value, &t, &c->e, d);
}
