/* SPDX-License-Identifier: Apache-2.0
 * deploy: a loaded scenario compiled into the simulator's pools, router,
 * tiers, lifecycle and backends (see deploy.h). */
#include "replay/deploy.h"

#include "models/kvlink.h"

#include "base/diag.h"
#include "models/apilat.h"
#include "models/catalog.h"
#include "models/cost.h"
#include "models/engine.h"
#include "models/kvlink.h"
#include "models/memory.h"
#include "models/offload.h"
#include "models/preflight.h"
#include "models/prices.h"
#include "models/profile.h"
#include "traces/trace.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- what each command can vary ---- */

static const char *const FEATURE_KEY[DEPLOY_N_FEATURES] = {
	[DEPLOY_POOLS] = "pools",
	[DEPLOY_BACKENDS] = "backends",
	[DEPLOY_TIERS] = "kv_tiers",
	[DEPLOY_AUTOSCALE] = "autoscale.enabled",
	[DEPLOY_FAULTS] = "faults",
	[DEPLOY_SPECULATIVE] = "speculative.method",
	[DEPLOY_STARTUP] = "startup",
	[DEPLOY_DISAGG] = "disaggregation",
	[DEPLOY_PRIORITY] = "scheduling.policy",
	[DEPLOY_TEAM_CAP] = "router.team_max_inflight",
};

/* Why size (and what sizes as it does) refuses a feature; NULL: it takes
 * it.  Every other feature reaches each command's replays through
 * deploy_build and deploy_run. */
#define SIZE_REFUSES                                                                          \
	{                                                                                     \
		[DEPLOY_POOLS] = "the search varies the replicas of one replica shape per "   \
				 "hardware option and cannot resize pools other than "        \
				 "disaggregation's prefill and decode pools on one hardware " \
				 "(expected a scenario without pools, or with those two "     \
				 "only; replay, whatif and sweep take any)",                  \
		[DEPLOY_AUTOSCALE] = "the search replays fixed replica counts (expected "     \
				     "autoscale.enabled false; replay, whatif and sweep "     \
				     "take an autoscaler)",                                   \
		[DEPLOY_FAULTS] = "the search replays every candidate without faults "        \
				  "(expected no faults.list or faults.mtbf_h; --redundancy F " \
				  "sizes with F replicas failed; replay, whatif and sweep "   \
				  "take faults)",                                             \
	}

static const struct {
	const char *name;
	const char *refuses[DEPLOY_N_FEATURES];
} COMMANDS[DEPLOY_N_COMMANDS] = {
	[DEPLOY_CMD_REPLAY] = {"replay", {0}},
	[DEPLOY_CMD_SIZE] = {"size", SIZE_REFUSES},
	[DEPLOY_CMD_COMPARE] = {"compare", SIZE_REFUSES},
	[DEPLOY_CMD_WHATIF] = {"whatif", {0}},
	[DEPLOY_CMD_WHATIF_SIZED] = {"whatif --slo", SIZE_REFUSES},
	[DEPLOY_CMD_SWEEP] = {"sweep", {0}},
};

const char *deploy_feature_key(enum deploy_feature f)
{
	return (unsigned)f < DEPLOY_N_FEATURES ? FEATURE_KEY[f] : NULL;
}

const char *deploy_command_name(enum deploy_command c)
{
	return (unsigned)c < DEPLOY_N_COMMANDS ? COMMANDS[c].name : NULL;
}

/* The hardware pool i of sc runs on. */
static const char *pool_hardware(const struct scenario *sc, int32_t i)
{
	return scenario_pool_sets(sc, i, "hardware") ? sc->pools[i].hardware : sc->hardware;
}

/* Whether sc's pools are disaggregation's prefill and decode pools on one
 * hardware, and nothing else: they belong to that feature (size sizes
 * both on each hardware option). */
static bool pd_pools_only(const struct scenario *sc)
{
	if (sc->n_pools != 2 || !scenario_disaggregated(sc))
		return false;
	bool p = false, q = false;
	for (int32_t i = 0; i < 2; i++) {
		p = p || strcmp(sc->pools[i].name, sc->pd.prefill_pool) == 0;
		q = q || strcmp(sc->pools[i].name, sc->pd.decode_pool) == 0;
	}
	return p && q && strcmp(pool_hardware(sc, 0), pool_hardware(sc, 1)) == 0;
}

uint32_t deploy_features(const struct scenario *sc)
{
	uint32_t f = 0;
	if (sc->n_pools > 0 && !pd_pools_only(sc))
		f |= 1u << DEPLOY_POOLS;
	if (sc->n_backends > 0)
		f |= 1u << DEPLOY_BACKENDS;
	if (sc->kv_tiers.host_gb > 0 || sc->kv_tiers.disk_gb > 0)
		f |= 1u << DEPLOY_TIERS;
	if (sc->autoscale)
		f |= 1u << DEPLOY_AUTOSCALE;
	if (sc->n_faults > 0 || sc->fault_list.n > 0 || sc->faults_mtbf_h > 0)
		f |= 1u << DEPLOY_FAULTS;
	if (strcmp(sc->spec.method, "off") != 0)
		f |= 1u << DEPLOY_SPECULATIVE;
	if (sc->provision_s != SCENARIO_DEFAULT_PROVISION_S ||
	    sc->storage_gbs != SCENARIO_DEFAULT_STORAGE_GBS ||
	    sc->image_pull_gbs != SCENARIO_DEFAULT_IMAGE_PULL_GBS || sc->image_prepulled ||
	    sc->compile_cache || sc->keep_alive_s != SCENARIO_KEEP_ALIVE_UNSET)
		f |= 1u << DEPLOY_STARTUP;
	if (scenario_disaggregated(sc))
		f |= 1u << DEPLOY_DISAGG;
	if (sc->scheduling.policy == SCENARIO_SCHED_PRIORITY)
		f |= 1u << DEPLOY_PRIORITY;
	if (sc->router.team_max_inflight > 0)
		f |= 1u << DEPLOY_TEAM_CAP;
	return f;
}

bool deploy_takes(enum deploy_command c, enum deploy_feature f)
{
	return (unsigned)c < DEPLOY_N_COMMANDS && (unsigned)f < DEPLOY_N_FEATURES &&
	       !COMMANDS[c].refuses[f];
}

int deploy_check(const struct scenario *sc, enum deploy_command c, struct diag *d)
{
	uint32_t used = deploy_features(sc);
	for (int f = 0; f < DEPLOY_N_FEATURES; f++)
		if ((used >> f & 1u) && !deploy_takes(c, (enum deploy_feature)f))
			return diag_set(d, DIAG_EINPUT, "%s: %s: agentcap %s does not take it: %s",
					sc->source, FEATURE_KEY[f], COMMANDS[c].name,
					COMMANDS[c].refuses[f]);
	return 0;
}

/* ---- one shape ---- */

int deploy_resolve(struct scenario *sc, const struct catalog *cat, const struct engine_table *et,
		   struct diag *d)
{
	const struct cat_hardware *hw = catalog_hardware(cat, sc->hardware);
	if (!hw)
		return diag_set(d, DIAG_EINPUT, "%s: %shardware: unknown id '%s' (see agentcap catalog)",
				sc->source, sc->key_prefix, sc->hardware);
	struct engine_table *own = NULL;
	if (!et)
		et = cat->engines;
	if (!et) {
		own = malloc(sizeof(*own));
		if (!own)
			return diag_set(d, DIAG_ENOMEM, "out of memory");
		int rc = engine_table_load(own, NULL, d);
		if (rc != 0) {
			free(own);
			return rc;
		}
		et = own;
	}
	if (!sc->engine_profile[0])
		snprintf(sc->engine_profile, sizeof(sc->engine_profile), "%s", engine_default_for(hw));
	const struct engine_profile *ep = engine_find(et, sc->engine_profile);
	if (!ep) {
		char ids[512];
		engine_list_ids(et, ids, sizeof(ids));
		free(own);
		return diag_set(d, DIAG_EINPUT, "%s: %sengine_profile: unknown engine '%s' (expected one of: %s)",
				sc->source, sc->key_prefix, sc->engine_profile, ids);
	}
	snprintf(sc->engine_profile, sizeof(sc->engine_profile), "%s", ep->id);
	struct engine_params par;
	engine_resolve(ep, hw->family ? hw->family->id : NULL, &par);
	sc->engine_startup = ep->startup;
	bool on_demand = ep->startup.keep_alive_s >= 0.0;
	free(own);
	if (sc->keep_alive_s != SCENARIO_KEEP_ALIVE_UNSET && !on_demand)
		return diag_set(d, DIAG_EINPUT,
				"%s: startup.keep_alive_s: engine '%s' loads its model at start and never "
				"unloads it (expected no startup.keep_alive_s, or an engine that loads on "
				"demand: %sengine_profile ollama)",
				sc->source, sc->engine_profile, sc->key_prefix);

	/* a multi-GPU system runs as one replica over all its GPUs unless told */
	int32_t gpus = hw->system_kind && hw->device_count > 1 ? (int32_t)hw->device_count : 1;
	int32_t tp = sc->tensor_parallel_size, pp = sc->pipeline_parallel_size;
	if (tp == 0 && pp == 0) {
		tp = gpus;
		pp = 1;
		if (tp > 8) { /* TP within a node of eight, pipeline stages across */
			for (tp = 8; tp > 1 && gpus % tp != 0; tp--)
				;
			pp = gpus / tp;
		}
	} else if (tp == 0) {
		tp = gpus % pp == 0 && gpus / pp >= 1 ? gpus / pp : 1;
	} else if (pp == 0) {
		pp = gpus % tp == 0 && gpus / tp >= 1 ? gpus / tp : 1;
	}
	int32_t most = catalog_replica_gpus_max(hw);
	if (most > 0 && (int64_t)tp * pp > most)
		return diag_set(d, DIAG_EINPUT,
				"%s: %stensor_parallel_size %d x %spipeline_parallel_size %d: '%s' shares "
				"its memory with its CPU and %s (expected at most %d GPU%s per replica)",
				sc->source, sc->key_prefix, (int)tp, sc->key_prefix, (int)pp, hw->id,
				most == 1 ? "has no link to another unit's GPU"
					  : "links at most two units",
				(int)most, most == 1 ? "" : "s");
	sc->tensor_parallel_size = tp;
	sc->pipeline_parallel_size = pp;
	if (sc->engine.max_num_seqs == 0)
		sc->engine.max_num_seqs = engine_default_max_num_seqs(&par, hw);
	if (sc->engine.max_num_batched_tokens == 0)
		sc->engine.max_num_batched_tokens = engine_default_chunk(&par, hw);
	if (sc->reserve_full_prompt < 0)
		sc->reserve_full_prompt = par.reserve_full_prompt > 0 ? 1 : 0;
	sc->engine.reserve_full_prompt = sc->reserve_full_prompt == 1;
	return 0;
}

/* The memory model's options for sc's deployment. */
static void mem_opts_of(const struct scenario *sc, const struct engine_config *cfg,
			const struct perf_model *pm, struct mem_opts *mo)
{
	mem_opts_init(mo);
	mo->hardware = sc->hardware;
	mo->model = sc->model;
	mo->weight_format = sc->weight_format;
	mo->kv_dtype = sc->kv_cache_dtype;
	mo->tp = sc->tensor_parallel_size;
	mo->pp = sc->pipeline_parallel_size;
	mo->gpu_memory_utilization = cfg->gpu_memory_utilization;
	mo->max_num_batched_tokens = cfg->max_num_batched_tokens;
	mo->gpu_expert_fraction = sc->offload_gpu_expert_fraction;
	mo->mla_expanded = pm->mla_expanded;
	mem_engine_of(&mo->engine, &pm->engine, cfg->max_num_seqs);
}

/* The whole model's weight bytes in sc's format, as one replica loads them
 * at start-up (the drafter's too); 0 when the memory model cannot say. */
static double weight_bytes_of(const struct scenario *sc, const struct catalog *cat,
			      const struct perf_model *pm, const struct engine_config *cfg)
{
	struct mem_plan plan;
	struct mem_opts mo;
	struct diag d;
	diag_init(&d);
	mem_opts_of(sc, cfg, pm, &mo);
	struct spec_opts so;
	deploy_spec_opts(sc, &so);
	mo.spec = &so;
	if (mem_plan_opts(&plan, cat, &mo, &d) != 0)
		return 0.0;
	/* the drafter loads too */
	return (double)plan.weights_total_bytes + (double)plan.spec_weights_bytes * plan.gpus;
}

void deploy_spec_opts(const struct scenario *sc, struct spec_opts *out)
{
	*out = (struct spec_opts){ SPEC_OFF, NULL, sc->spec.k };
	if (!spec_method_parse(sc->spec.method, &out->method))
		out->method = SPEC_OFF; /* scenario_load refuses it first */
	if (out->method == SPEC_DRAFT)
		out->draft_model = sc->spec.draft_model;
}

int deploy_engine(const struct scenario *sc, const struct catalog *cat, struct perf_model *pm,
		  struct perf_profile **prof, struct engine_config *cfg, struct diag *d)
{
	struct spec_opts so;
	deploy_spec_opts(sc, &so);
	struct perf_opts po;
	perf_opts_init(&po);
	po.spec = &so;
	po.hardware = sc->hardware;
	po.model = sc->model;
	po.weight_format = sc->weight_format;
	po.kv_dtype = sc->kv_cache_dtype;
	po.engine = sc->engine_profile[0] ? sc->engine_profile : NULL;
	po.tp = sc->tensor_parallel_size;
	po.pp = sc->pipeline_parallel_size;
	po.ep = sc->expert_parallel_size;
	po.gpu_expert_fraction = sc->offload_gpu_expert_fraction;
	po.host = (struct offload_host){ sc->host_memory_gb, sc->host_mem_bw_gbs, sc->host_tflops,
					 sc->host_link_gbs };
	po.power_limit_w = sc->power_limit_w;
	po.no_flash_attention = !sc->flash_attention;
	po.engine_build = sc->engine_build;
	int rc = perf_model_init_opts(pm, cat, &po, d);
	if (rc == 0 && sc->profile[0]) {
		rc = perf_profile_load(prof, sc->profile, pm, d);
		perf_model_set_profile(pm, *prof);
	}
	if (rc != 0)
		return rc;
	*cfg = sc->engine;
	if (so.method != SPEC_OFF) {
		/* expected tokens per verify step, by output kind */
		cfg->spec_k = so.k;
		for (int i = 0; i < OUT_KINDS; i++)
			cfg->spec_tokens[i] = spec_expected_tokens(sc->spec.alpha[i], so.k);
		cfg->spec_disable_batch = sc->spec.disable_by_batch_size;
	}
	{
		struct mem_plan plan;
		struct mem_opts mo;
		mem_opts_of(sc, cfg, pm, &mo);
		mo.spec = &so;
		rc = mem_plan_opts(&plan, cat, &mo, d);
		if (rc != 0 && cfg->kv_cache_tokens == 0)
			return rc;
		if (rc == 0) {
			/* the cache as vLLM's hybrid manager sizes it; with the capacity
			 * given, the per-sequence part still applies */
			sim_engine_hybrid(cfg, &plan);
		}
		diag_init(d);
		rc = 0;
	}
	if (sc->kv_retention.mode == SCENARIO_RETAIN_TTL) {
		if (!cfg->enable_prefix_caching)
			return diag_set(d, DIAG_EINPUT, "%s: kv_retention.mode ttl keeps cached prefixes, "
					"but prefix caching is off (expected engine.enable_prefix_caching "
					"true, or kv_retention.mode off)", sc->source);
		cfg->kv_retain_ttl_ns = (int64_t)llround(sc->kv_retention.ttl_s * 1e9);
		cfg->kv_retain_max_fraction = sc->kv_retention.max_fraction;
	}
	cfg->sched_priority = sc->scheduling.policy == SCENARIO_SCHED_PRIORITY;
	if (cfg->max_model_len == 0)
		cfg->max_model_len = catalog_model(cat, sc->model)->max_context;
	if (cfg->kv_cache_tokens < cfg->block_size)
		return diag_set(d, DIAG_EINPUT, "%s%sKV cache of %lld tokens is smaller than one block of %lld",
				sc->key_prefix[0] ? "" : sc->source, sc->key_prefix[0] ? "" : ": ",
				(long long)cfg->kv_cache_tokens, (long long)cfg->block_size);
	return 0;
}

/* A resolved one-shape scenario's start-up parts for a replica loading
 * weight_bytes, and, for an engine that loads on demand, its keep-alive
 * and model load in cfg. */
static void startup_of(const struct scenario *sc, const struct catalog *cat, double weight_bytes,
		       struct startup_parts *out, struct engine_config *cfg)
{
	struct startup_opts o = {.provision_s = sc->provision_s,
				 .image_pull_gbs = sc->image_pull_gbs,
				 .image_prepulled = sc->image_prepulled,
				 .storage_gbs = sc->storage_gbs,
				 .compile_cache = sc->compile_cache};
	const struct cat_model *m = catalog_model(cat, sc->model);
	startup_parts(&sc->engine_startup, &o, weight_bytes, m ? m->layers : 0,
		      sc->tensor_parallel_size, sc->pipeline_parallel_size, out);
	double keep = sc->keep_alive_s != SCENARIO_KEEP_ALIVE_UNSET ? sc->keep_alive_s
								     : sc->engine_startup.keep_alive_s;
	cfg->load_on_demand = sc->engine_startup.keep_alive_s >= 0.0;
	cfg->keep_alive_ns = cfg->load_on_demand && keep >= 0.0 ? (int64_t)llround(keep * 1e9) : -1;
	cfg->model_load_ns = cfg->load_on_demand ? (int64_t)llround(out->model_load_s * 1e9) : 0;
}

/* Start-up in ns of a replica of a pool: its whole start-up, or up to the
 * model's load for an engine that loads it on the first call. */
static int64_t startup_ns(const struct deploy_pool *p)
{
	return (int64_t)llround((p->cfg.load_on_demand ? p->startup.server_s : p->startup.total_s) *
				1e9);
}

/* The lifecycle settings of sc for the pools' replicas (pool[0] for one
 * shape): their start-up (startup_ns); an autoscale target of 0 becomes
 * the metric's default (SCENARIO_DEFAULT_TARGET_*).  out->faults points
 * into sc. */
static void elastic_of(const struct scenario *sc, const struct deploy_pool *pool, uint64_t seed,
		       struct elastic_config *out)
{
	elastic_config_default(out);
	out->startup_ns = startup_ns(&pool[0]);
	for (int32_t i = 0; i < sc->n_pools && i < ELASTIC_MAX_POOLS; i++)
		out->pool_startup_ns[i] = startup_ns(&pool[i]);
	out->autoscale = sc->autoscale;
	out->metric = sc->autoscale_metric;
	out->target = sc->autoscale_target;
	if (out->target == 0.0)
		out->target = sc->autoscale_metric == AUTOSCALE_INFLIGHT ? SCENARIO_DEFAULT_TARGET_INFLIGHT
			      : sc->autoscale_metric == AUTOSCALE_QUEUE  ? SCENARIO_DEFAULT_TARGET_QUEUE
									 : SCENARIO_DEFAULT_TARGET_KV;
	out->min_replicas = sc->autoscale_min;
	out->max_replicas = sc->autoscale_max;
	out->interval_ns = (int64_t)llround(sc->autoscale_interval_s * 1e9);
	out->cooldown_ns = (int64_t)llround(sc->autoscale_cooldown_s * 1e9);
	out->policy = sc->autoscale_policy;
	const struct scenario_hpa *h = &sc->hpa;
	out->hpa = (struct hpa_config){
		.tolerance = h->tolerance,
		.up_window_ns = (int64_t)llround(h->up_window_s * 1e9),
		.down_window_ns = (int64_t)llround(h->down_window_s * 1e9),
		.up_pods = h->up_pods,
		.up_percent = h->up_percent,
		.up_period_ns = (int64_t)llround(h->up_period_s * 1e9),
		.down_percent = h->down_percent,
		.down_period_ns = (int64_t)llround(h->down_period_s * 1e9),
	};
	out->metric_lag_ns = out->policy == AUTOSCALE_POLICY_COOLDOWN
				     ? 0
				     : (int64_t)llround(h->metric_lag_s * 1e9);
	out->polling_ns = (int64_t)llround(h->polling_s * 1e9);
	out->activation = h->activation;
	out->faults = sc->faults;
	out->n_faults = sc->n_faults;
	out->mtbf_ns = sc->faults_mtbf_h * 3600.0 * 1e9;
	out->repair_ns = (int64_t)llround(sc->faults_repair_h * 3600.0 * 1e9);
	out->max_retries = sc->faults_max_retries;
	out->seed = seed;
	if (strcmp(sc->faults_detection, "probe") == 0) {
		out->detection = FAULT_DETECT_PROBE;
		out->probe_period_ns = (int64_t)llround(sc->faults_probe_period_s * 1e9);
		out->probe_failure_threshold = sc->faults_probe_failure_threshold;
		out->probe_timeout_ns = (int64_t)llround(sc->faults_probe_timeout_s * 1e9);
		out->client_timeout_ns = (int64_t)llround(sc->faults_client_timeout_s * 1e9);
		out->retry_initial_ns = sc->faults_retry_initial_s * 1e9;
		out->retry_max_ns = sc->faults_retry_max_s * 1e9;
	}
}

/* The API backends and routing rules of sc as the simulator takes them:
 * each backend's TTFT, output speed and cache rules from lat (its `latency`
 * id, else its `price` id) unless the scenario gives them, and its price
 * rows from pr.  0, or DIAG_EINPUT naming the backend and what was
 * expected. */
static int backends_of(const struct scenario *sc, const struct apilat *lat, const struct prices *pr,
		       struct hybrid_config *out, struct scenario_backend_price *prices_out,
		       struct diag *d)
{
	hybrid_config_default(out);
	for (int32_t i = 0; i < sc->n_backends; i++) {
		const struct scenario_backend *b = &sc->backends[i];
		bool seat = strcmp(b->kind, "seat") == 0;
		const char *lat_id = b->latency[0] ? b->latency : b->price;
		struct scenario_backend_price bp = {0};
		if (seat) {
			bp.seat = prices_find(pr, PRICE_SEAT, b->price);
			if (!bp.seat)
				return diag_set(d, DIAG_EINPUT,
						"%s: backends[%d] '%s': price: '%s' is no seat plan of the price catalogue (expected a seat row's id; agentcap catalog --prices)",
						sc->source, (int)i, b->name, b->price);
			if (!b->latency[0] && !(b->ttft_ms > 0 && b->output_tok_s > 0))
				return diag_set(d, DIAG_EINPUT,
						"%s: backends[%d] '%s': latency: missing (expected the api_backends.json id of the model the plan serves, or ttft_ms and output_tok_s)",
						sc->source, (int)i, b->name);
		}
		const char *list_id = seat ? lat_id : b->price;
		const struct apilat_row *row0 = apilat_find(lat, lat_id);
		bp.input = prices_find(pr, PRICE_API_INPUT, list_id);
		bp.cached = prices_find(pr, PRICE_API_CACHED_INPUT, list_id);
		bp.output = prices_find(pr, PRICE_API_OUTPUT, list_id);
		double ttl_s = b->cache_ttl_s >= 0 ? b->cache_ttl_s : row0 ? row0->cache_ttl_s : 0;
		bp.write = prices_find(pr, ttl_s > 300 ? PRICE_API_CACHE_WRITE_1H
						       : PRICE_API_CACHE_WRITE_5M, list_id);
		if (!seat && (!bp.input || !bp.output))
			return diag_set(d, DIAG_EINPUT,
					"%s: backends[%d] '%s': price: '%s' has no api_input and api_output rows in the price catalogue (expected an API model's id; agentcap catalog --prices)",
					sc->source, (int)i, b->name, b->price);
		if (bp.input && bp.output) {
			int rc = cost_api_from_prices(&bp.list, pr, list_id, d);
			if (rc)
				return rc;
			cost_api_cache_ttl(&bp.list, pr, list_id, ttl_s);
			bp.list.clock_set = sc->cost.trace_start_utc[0] != '\0';
			bp.list.clock_t0_ns = sc->cost.trace_start_ns;
			bp.priced = true;
		}
		const struct apilat_row *row = apilat_find(lat, lat_id);
		bool own = b->ttft_ms > 0 && b->output_tok_s > 0 && b->cache_min_tokens >= 0 &&
			   b->cache_ttl_s >= 0;
		if (!row && !own)
			return diag_set(d, DIAG_EINPUT,
					"%s: backends[%d] '%s': %s: '%s' has no latency row in api_backends.json (expected one of its ids, or ttft_ms, output_tok_s, cache_min_tokens and cache_ttl_s in the scenario)",
					sc->source, (int)i, b->name, b->latency[0] ? "latency" : "price", lat_id);
		struct backend_config *c = &out->b[i];
		snprintf(c->name, sizeof(c->name), "%s", b->name);
		double ttft_s = b->ttft_ms > 0 ? b->ttft_ms / 1e3 : row->ttft_s;
		double speed = b->output_tok_s > 0 ? b->output_tok_s : row->output_tok_s;
		c->ttft_ns = ttft_s * 1e9;
		c->ns_per_token = 1e9 / speed;
		/* TTFT by prompt: the scenario's figures over the row's fit; a
		 * fixed TTFT (ttft_model fixed, or ttft_ms alone) keeps ttft_ns */
		bool fixed = strcmp(b->ttft_model, "fixed") == 0 ||
			     (!b->ttft_model[0] && b->ttft_ms > 0);
		if (!fixed) {
			double base = b->ttft_base_ms >= 0 ? b->ttft_base_ms / 1e3
				      : row && row->prefill_tok_s > 0 ? row->ttft_base_s : -1;
			double pre = b->prefill_tok_s > 0 ? b->prefill_tok_s
				     : row && row->prefill_tok_s > 0 ? row->prefill_tok_s : 0;
			double cac = b->cached_tok_s > 0 ? b->cached_tok_s
				     : row && row->prefill_tok_s > 0 ? row->cached_tok_s : 0;
			if (strcmp(b->ttft_model, "prompt") == 0 && !(base >= 0 && pre > 0 && cac > 0))
				return diag_set(d, DIAG_EINPUT,
						"%s: backends[%d] '%s': ttft_model: prompt needs ttft_base_ms, prefill_tok_s and cached_tok_s (expected them in the scenario, or a row of api_backends.json with a fit)",
						sc->source, (int)i, b->name);
			if (base >= 0 && pre > 0 && cac > 0) {
				c->ttft_base_ns = base * 1e9;
				c->ns_per_uncached = 1e9 / pre;
				c->ns_per_cached = 1e9 / cac;
			}
		}
		/* per-minute limits and the client's retries */
		backend_config_limits_default(c);
		if (row && row->limits_tier) {
			c->rpm = row->rpm;
			c->input_tpm = row->input_tpm;
			c->output_tpm = row->output_tpm;
			c->tpm = row->tpm;
			c->limits_count_cached = row->limits_count_cached;
		}
		if (b->rpm >= 0)
			c->rpm = b->rpm;
		if (b->input_tpm >= 0)
			c->input_tpm = b->input_tpm;
		if (b->output_tpm >= 0)
			c->output_tpm = b->output_tpm;
		if (b->tpm >= 0)
			c->tpm = b->tpm;
		if (b->limits_count_cached >= 0)
			c->limits_count_cached = b->limits_count_cached > 0;
		if (b->max_retries >= 0)
			c->max_retries = (int32_t)b->max_retries;
		if (b->backoff_initial_s >= 0)
			c->backoff_initial_ns = b->backoff_initial_s * 1e9;
		if (b->backoff_max_s >= 0)
			c->backoff_max_ns = b->backoff_max_s * 1e9;
		c->cache_min_tokens = b->cache_min_tokens >= 0 ? (int64_t)b->cache_min_tokens
							       : row->cache_min_tokens;
		c->cache_ttl_ns = (int64_t)llround((b->cache_ttl_s >= 0 ? b->cache_ttl_s : row->cache_ttl_s) * 1e9);
		if (prices_out)
			prices_out[i] = bp;
		out->n = i + 1;
	}
	out->spill_to = scenario_backend_index(sc, sc->routes.spill_to);
	out->spill_wait_ns = sc->routes.spill_wait_ms * 1e6;
	out->spill_ttft_ns = sc->routes.spill_ttft_ms * 1e6;
	out->fallback_to = scenario_backend_index(sc, sc->routes.fallback_to);
	out->size_to = scenario_backend_index(sc, sc->routes.size_to);
	out->size_prompt_tokens = sc->routes.size_prompt_tokens;
	return hybrid_config_check(out, d);
}

/* kv_tiers in blocks of this cache: a block is block_size tokens of the
 * model's context KV on every GPU of a replica (kv_gpu_bytes_per_token per
 * GPU); each GPU loads its share over its own link, so a block loads in
 * (per-GPU share) / (per-GPU bandwidth). */
static int tiers_of(const struct scenario *sc, const struct catalog *cat,
		    const struct perf_model *pm, const struct engine_config *cfg,
		    struct sim_tiers_config *tc, double *host_gbs_out, struct diag *d)
{
	memset(tc, 0, sizeof(*tc));
	*host_gbs_out = 0;
	const struct scenario_kv_tiers *k = &sc->kv_tiers;
	if (!(k->host_gb > 0)) {
		if (k->disk_gb > 0)
			return diag_set(d, DIAG_EINPUT, "%s: kv_tiers.disk_gb is set without a host tier "
					"above it (expected kv_tiers.host_gb > 0)", sc->source);
		return 0;
	}
	if (k->disk_gb > 0 && !(k->disk_gbs > 0))
		return diag_set(d, DIAG_EINPUT, "%s: kv_tiers.disk_gb is set without its bandwidth "
				"(expected kv_tiers.disk_gbs > 0, GB/s per GPU)", sc->source);
	struct mem_plan plan;
	struct mem_opts mo;
	mem_opts_of(sc, cfg, pm, &mo);
	struct diag pd;
	diag_init(&pd);
	if (mem_plan_opts(&plan, cat, &mo, &pd) != 0)
		return diag_set(d, DIAG_EINPUT, "%s: kv_tiers need the model's KV size: %s", sc->source,
				pd.msg);
	double block_gpu = (double)plan.kv_gpu_bytes_per_token * (double)cfg->block_size;
	double block_all = block_gpu * (double)plan.gpus;
	double host_gbs = k->host_gbs > 0 ? k->host_gbs : pm->host.link_gbs * OFFLOAD_LINK_EFF;
	double gb[2] = {k->host_gb, k->disk_gb}, gbs[2] = {host_gbs, k->disk_gbs};
	tc->n = k->disk_gb > 0 ? 2 : 1;
	tc->shared_by = k->shared_by > 0 ? k->shared_by : 1;
	for (int t = 0; t < tc->n; t++) {
		double blocks = floor(gb[t] * 1e9 / block_all);
		if (blocks < 1 || blocks > INT32_MAX)
			return diag_set(d, DIAG_EINPUT, "%s: kv_tiers.%s_gb = %g holds %.0f KV blocks of "
					"%.0f bytes (expected 1 to 2^31-1 blocks)", sc->source,
					t ? "disk" : "host", gb[t], blocks, block_all);
		tc->tier[t].blocks = (int64_t)blocks;
		tc->tier[t].ns_per_block = block_gpu / gbs[t]; /* bytes / (GB/s) = ns */
	}
	/* write-through stores whole chunks of GPU blocks (vLLM's offloaded
	 * block size, like LMCache's chunk, is a multiple of the GPU's) */
	if (k->mode == SIM_TIER_WRITE_THROUGH && k->chunk_tokens % cfg->block_size != 0)
		return diag_set(d, DIAG_EINPUT, "%s: kv_tiers.chunk_tokens = %d is not a multiple of "
				"the KV block size (expected a multiple of %lld tokens)", sc->source,
				(int)k->chunk_tokens, (long long)cfg->block_size);
	tc->mode = (enum sim_tier_mode)k->mode;
	tc->chunk_blocks = k->chunk_tokens / cfg->block_size;
	tc->save_unfull_chunk = k->save_unfull_chunk;
	tc->async_store = k->async_store;
	tc->bytes_per_block = block_all;
	*host_gbs_out = host_gbs;
	return 0;
}
/* ---- the deployment ---- */

/* Put pool i's name before d's message ("file: pools[i] (name): ..."),
 * unless the message already names the pool's key ("file: pools[i].key"). */
static int pool_error(const struct scenario *top, int32_t i, const struct scenario *v, int rc,
		      struct diag *d)
{
	char head[600];
	snprintf(head, sizeof(head), "%s: pools[%d].", top->source, (int)i);
	if (strncmp(d->msg, head, strlen(head)) == 0)
		return rc;
	char msg[DIAG_MSG_MAX];
	int n = snprintf(msg, sizeof(msg), "%s: pools[%d] (%s): ", top->source, (int)i, v->name);
	if (n < 0 || (size_t)n >= sizeof(msg))
		return rc;
	size_t room = sizeof(msg) - (size_t)n - 1, len = strlen(d->msg);
	memcpy(msg + n, d->msg, len < room ? len : room);
	msg[(size_t)n + (len < room ? len : room)] = '\0';
	memcpy(d->msg, msg, sizeof(msg));
	return rc;
}

/* Put "pools[i] (name): " before the warnings w gained from `before` on. */
static void pool_warnings(struct warn_list *w, size_t before, int32_t i, const char *name)
{
	for (size_t k = before; w && k < w->count; k++) {
		char msg[WARN_MSG_MAX];
		int n = snprintf(msg, sizeof(msg), "pools[%d] (%.64s): ", (int)i, name);
		size_t room = sizeof(msg) - (size_t)n - 1, len = strlen(w->items[k].msg);
		memcpy(msg + n, w->items[k].msg, len < room ? len : room);
		msg[(size_t)n + (len < room ? len : room)] = '\0';
		memcpy(w->items[k].msg, msg, sizeof(msg));
	}
}

/* Resolve pool i of dp (its view of the scenario, or the scenario), its
 * engine and performance model, and the catalogue's pre-flight checks.
 * *unfit: the error is the shape's (memory model, engine). */
static int pool_build(struct deployment *dp, int32_t i, struct warn_list *w, bool *unfit,
		      struct diag *d)
{
	const struct scenario *sc = dp->sc;
	struct deploy_pool *p = &dp->pool[i];
	if (dp->pooled)
		scenario_pool_view(sc, i, &p->sc);
	else
		p->sc = *sc;
	int rc = deploy_resolve(&p->sc, dp->cat, NULL, d);
	if (rc == 0) {
		rc = deploy_engine(&p->sc, dp->cat, &p->pm, &p->prof, &p->cfg, d);
		*unfit = rc == DIAG_EINPUT;
	}
	size_t before = w ? w->count : 0;
	struct warn_list none;
	warn_list_init(&none);
	if (rc == 0) {
		rc = preflight_deployment(dp->cat, NULL, &p->pm, p->sc.engine.max_model_len,
					  w ? w : &none, d);
		*unfit = rc == DIAG_EINPUT;
	}
	if (rc != 0)
		return dp->pooled ? pool_error(sc, i, &p->sc, rc, d) : rc;
	if (dp->pooled)
		pool_warnings(w, before, i, p->sc.name);
	p->weight_bytes = weight_bytes_of(&p->sc, dp->cat, &p->pm, &p->cfg);
	startup_of(&p->sc, dp->cat, p->weight_bytes, &p->startup, &p->cfg);
	if (!dp->pooled || i == 0)
		return 0;
	/* one tokenizer and one block size: the router sends every pool the
	 * same calls, counted in the same tokens and hashed in the same blocks */
	const struct deploy_pool *p0 = &dp->pool[0];
	if (p->cfg.block_size != p0->cfg.block_size)
		return diag_set(d, DIAG_EINPUT,
				"%s: pools[%d].engine.block_size: %lld differs from pools[0]'s "
				"%lld (expected one KV block size for every pool: a call carries "
				"one chain of block hashes)",
				sc->source, (int)i, (long long)p->cfg.block_size,
				(long long)p0->cfg.block_size);
	const struct cat_model *m0 = catalog_model(dp->cat, p0->sc.model);
	const struct cat_model *mi = catalog_model(dp->cat, p->sc.model);
	if (mi->vocab_size != m0->vocab_size)
		return diag_set(d, DIAG_EINPUT,
				"%s: pools[%d].model: '%s' has a vocabulary of %lld tokens, "
				"pools[0]'s '%s' %lld (expected models with one tokenizer: the "
				"router sends every pool the same calls, counted in the same tokens)",
				sc->source, (int)i, mi->id, (long long)mi->vocab_size, m0->id,
				(long long)m0->vocab_size);
	return 0;
}

int deploy_backends(const struct scenario *sc, const struct prices *pr, struct deploy_backends *out,
		    struct diag *d)
{
	hybrid_config_default(&out->hybrid);
	struct apilat *lat = NULL;
	int rc = apilat_load(&lat, NULL, NULL, d);
	if (rc == 0)
		rc = backends_of(sc, lat, pr, &out->hybrid, out->price, d);
	apilat_free(lat);
	return rc;
}

/* The API backends of dp's scenario with their price rows. */
static int backends_build(struct deployment *dp, const struct deploy_opts *o, struct diag *d)
{
	const struct scenario *sc = dp->sc;
	const struct prices *pr = o ? o->prices : NULL;
	int rc = 0;
	if (!pr) {
		rc = prices_load(&dp->own_prices, sc->prices[0] ? sc->prices : NULL, d);
		pr = dp->own_prices;
	}
	return rc ? rc : deploy_backends(sc, pr, &dp->backends, d);
}

/* disaggregation.*: the pools by index, the link, and the KV a token
 * crosses (the decode pool's model: both pools must serve one model with
 * one KV cache type, so that the blocks are the same). */
static int pd_of(struct deployment *dp, const struct scenario *sc, struct diag *d)
{
	if (sc->n_backends > 0)
		return diag_set(d, DIAG_EINPUT, "%s: disaggregation: with API backends beside it is "
				"not modelled yet (expected no backends with disaggregation)",
				sc->source);
	int32_t pi = -1, di = -1;
	for (int32_t i = 0; i < sc->n_pools; i++) {
		if (strcmp(sc->pools[i].name, sc->pd.prefill_pool) == 0)
			pi = i;
		if (strcmp(sc->pools[i].name, sc->pd.decode_pool) == 0)
			di = i;
	}
	if (pi < 0 || di < 0)
		return diag_set(d, DIAG_EINPUT, "%s: disaggregation: pools '%s' and '%s' (expected "
				"two of the scenario's pools)", sc->source, sc->pd.prefill_pool,
				sc->pd.decode_pool);
	const struct perf_model *p = &dp->pool[pi].pm, *q = &dp->pool[di].pm;
	if (strcmp(p->model_id, q->model_id) != 0 || strcmp(p->kv_dtype_id, q->kv_dtype_id) != 0)
		return diag_set(d, DIAG_EINPUT, "%s: disaggregation: the prefill pool serves %s with "
				"a %s KV cache, the decode pool %s with %s (expected one model and "
				"KV cache type, whose blocks the decode replica can take)", sc->source,
				p->model_id, p->kv_dtype_id, q->model_id, q->kv_dtype_id);
	for (int k = 0; k < 2; k++) {
		const struct engine_config *cfg = &dp->pool[k ? di : pi].cfg;
		if (!cfg->enable_prefix_caching)
			return diag_set(d, DIAG_EINPUT, "%s: disaggregation: the %s pool runs without "
					"prefix caching (expected engine.enable_prefix_caching true: the "
					"decode replica finds the blocks it holds by their hashes)",
					sc->source, k ? "decode" : "prefill");
		if (cfg->sliding_window_tokens > 0 && cfg->window_group_blocks > 0)
			return diag_set(d, DIAG_EINPUT, "%s: disaggregation: %s has sliding-window "
					"layers, not modelled with disaggregation yet (expected a model "
					"of full attention)", sc->source, q->model_id);
	}
	if (dp->pool[pi].cfg.block_size != dp->pool[di].cfg.block_size)
		return diag_set(d, DIAG_EINPUT, "%s: disaggregation: block sizes %lld and %lld "
				"(expected one)", sc->source, (long long)dp->pool[pi].cfg.block_size,
				(long long)dp->pool[di].cfg.block_size);
	struct kvlink_table links;
	int rc = kvlink_load(&links, NULL, d);
	if (rc)
		return rc;
	const struct kv_link *l = kvlink_find(&links, sc->pd.link);
	if (!l) {
		char ids[128];
		kvlink_ids(&links, ids, sizeof(ids));
		return diag_set(d, DIAG_EINPUT, "%s: disaggregation.link: '%s' (expected one of: %s)",
				sc->source, sc->pd.link, ids);
	}
	int32_t tp_p = dp->pool[pi].sc.tensor_parallel_size, tp_d = dp->pool[di].sc.tensor_parallel_size;
	dp->pd = (struct sim_pd_config){
		.prefill_pool = pi,
		.decode_pool = di,
		.always = strcmp(sc->pd.decider, "always") == 0,
		.non_cached_tokens = sc->pd.non_cached_tokens,
		.kv_bytes_per_token = q->kv_bytes_per_token,
		.link = *l,
		.gpus = tp_p < tp_d ? (tp_p > 0 ? tp_p : 1) : (tp_d > 0 ? tp_d : 1),
		.layers = q->layers > 0 ? (int32_t)q->layers : 1,
		.layerwise = sc->pd.layerwise,
		.buffered = sc->pd.buffered,
	};
	dp->pd_on = true;
	return 0;
}

int deploy_build(struct deployment *dp, const struct scenario *sc, const struct catalog *cat,
		 const struct deploy_opts *o, struct warn_list *w, struct diag *d)
{
	memset(dp, 0, sizeof(*dp));
	dp->sc = sc;
	dp->cat = cat;
	dp->pooled = sc->n_pools > 0;
	dp->n_pools = dp->pooled ? sc->n_pools : 1;
	hybrid_config_default(&dp->backends.hybrid);
	bool unfit = false;
	int rc = 0;
	if (dp->pooled && (sc->kv_tiers.host_gb > 0 || sc->kv_tiers.disk_gb > 0))
		rc = diag_set(d, DIAG_EINPUT, "%s: kv_tiers: not modelled with pools yet (a tier's "
			      "block and load time follow each pool's model and GPUs; expected "
			      "kv_tiers.host_gb 0 with pools)", sc->source);
	if (rc == 0 && !(dp->pool = calloc((size_t)dp->n_pools, sizeof(*dp->pool))))
		rc = diag_set(d, DIAG_ENOMEM, "out of memory for %d pools", (int)dp->n_pools);
	for (int32_t i = 0; rc == 0 && i < dp->n_pools; i++)
		rc = pool_build(dp, i, w, &unfit, d);
	for (int32_t i = 0; rc == 0 && i < dp->n_pools; i++) {
		dp->replicas += dp->pool[i].sc.replicas;
		dp->on_demand |= dp->pool[i].cfg.load_on_demand;
	}
	/* each replica holds its scheduler's slots and its own cache: a
	 * cluster is bounded as one shape's replicas are */
	if (rc == 0 && dp->replicas > SCENARIO_MAX_REPLICAS)
		rc = diag_set(d, DIAG_EINPUT, "%s: pools: %d replicas in all (expected at most %d "
			      "across the pools)", sc->source, (int)dp->replicas,
			      SCENARIO_MAX_REPLICAS);
	if (rc == 0 && dp->pooled) {
		if (!(dp->sim_pools = calloc((size_t)dp->n_pools, sizeof(*dp->sim_pools))))
			rc = diag_set(d, DIAG_ENOMEM, "out of memory");
		for (int32_t i = 0; rc == 0 && i < dp->n_pools; i++)
			dp->sim_pools[i] = (struct sim_pool){
				.cfg = dp->pool[i].cfg, .perf = sim_perf_from_model(&dp->pool[i].pm),
				.replicas = dp->pool[i].sc.replicas};
	}
	if (rc == 0 && !dp->pooled)
		rc = tiers_of(&dp->pool[0].sc, cat, &dp->pool[0].pm, &dp->pool[0].cfg, &dp->tiers,
			      &dp->tier_host_gbs, d);
	if (rc == 0 && scenario_disaggregated(sc))
		rc = pd_of(dp, sc, d);
	if (rc == 0) {
		elastic_of(sc, dp->pool, 0, &dp->elastic);
		dp->elastic_on = elastic_active(&dp->elastic);
	}
	if (rc == 0 && sc->n_backends > 0 && !(o && o->local_only))
		rc = backends_build(dp, o, d);
	if (rc != 0) {
		if (o && o->unfit)
			*o->unfit = unfit;
		deploy_release(dp);
	}
	return rc;
}

void deploy_release(struct deployment *dp)
{
	for (int32_t i = 0; dp->pool && i < dp->n_pools; i++)
		perf_profile_free(dp->pool[i].prof);
	free(dp->pool);
	free(dp->sim_pools);
	prices_free(dp->own_prices);
	memset(dp, 0, sizeof(*dp));
}

/* ---- pre-flight over the trace ---- */

/* The pass's findings as warnings; every call rejected makes the run
 * meaningless: DIAG_EINPUT. */
static int preflight_trace(const struct replay_scan *sc, const struct engine_config *cfg,
			   enum context_policy policy, const char *model_id, int64_t context,
			   const char *trace, struct warn_list *w, struct diag *d)
{
	if (sc->calls > 0 && sc->rejected == sc->calls)
		return diag_set(d, DIAG_EINPUT,
				"%s: none of its %lld calls can be served by this deployment "
				"(max_model_len %lld, KV cache %lld tokens; longest call %lld tokens): "
				"nothing to simulate", trace, (long long)sc->calls,
				(long long)cfg->max_model_len, (long long)cfg->kv_cache_tokens,
				(long long)sc->longest_call);
	double pct = sc->calls ? 100.0 / (double)sc->calls : 0.0;
	if (sc->over_max_model_len > 0) {
		const char *hint = cfg->max_model_len < context
					   ? "raise engine.max_model_len toward the model's context"
					   : "pick a model with a longer context";
		const char *fate =
			policy == CONTEXT_REJECT
				? "they will fail (replay.context_policy=reject), and the rest of "
				  "their sessions with them"
			: policy == CONTEXT_COMPACT
				? "replay.context_policy=compact has the harness compact them, so the "
				  "replay serves shorter prompts than recorded (counted as Calls "
				  "compacted)"
				: "replay.context_policy=truncate cuts them to their last max_model_len "
				  "tokens, so the replay serves shorter prompts than recorded";
		warn_add(w, "calls_over_max_model_len",
			 "Pre-flight: %lld of %lld calls (%.1f%%) are longer than max_model_len %lld "
			 "(%s's context is %lld tokens; the longest call has %lld): %s. To serve them "
			 "as recorded: %s.",
			 (long long)sc->over_max_model_len, (long long)sc->calls,
			 pct * (double)sc->over_max_model_len, (long long)cfg->max_model_len, model_id,
			 (long long)context, (long long)sc->longest_call, fate, hint);
	}
	if (sc->over_kv > 0)
		warn_add(w, "calls_over_kv_cache",
			 "Pre-flight: %lld of %lld calls (%.1f%%) need more KV cache than the %lld "
			 "tokens this deployment has (the longest call has %lld): they will fail. "
			 "To change: more GPUs per replica, a smaller weight format, kv_cache_dtype "
			 "fp8, or a larger engine.kv_cache_tokens if it was set by hand.",
			 (long long)sc->over_kv, (long long)sc->calls, pct * (double)sc->over_kv,
			 (long long)cfg->kv_cache_tokens, (long long)sc->longest_call);
	if (sc->over_budget > 0)
		warn_add(w, "calls_over_batch_budget",
			 "Pre-flight: %lld of %lld calls are larger than max_num_batched_tokens %lld "
			 "with chunked prefill off: they will fail. To change: "
			 "engine.enable_chunked_prefill=true.",
			 (long long)sc->over_budget, (long long)sc->calls,
			 (long long)cfg->max_num_batched_tokens);
	return 0;
}

int deploy_scan(const struct deployment *dp, const struct replay_opts *o, struct warn_list *w,
		int64_t *calls, struct diag *d)
{
	struct replay_opts so = {.trace_path = o->trace_path, .format = o->format,
				 .skip_bad = o->skip_bad, .context_policy = dp->sc->context_policy};
	const struct deploy_pool *p0 = &dp->pool[0];
	int64_t context = catalog_model(dp->cat, p0->sc.model)->max_context;
	*calls = 0;
	if (!dp->pooled) {
		struct replay_scan scan;
		int rc = replay_scan(&so, &p0->cfg, context, &scan, d);
		if (rc == 0)
			*calls = scan.calls;
		return rc ? rc
			  : preflight_trace(&scan, &p0->cfg, dp->sc->context_policy, p0->pm.model_id,
					    context, o->trace_path, w, d);
	}
	/* the cluster-wide warnings (calls no pool can serve) against the
	 * largest pool's limits; per pool, the calls only others can serve */
	int32_t n = dp->n_pools;
	struct engine_config *cfgs = calloc((size_t)n, sizeof(*cfgs));
	struct replay_scan *each = calloc((size_t)n, sizeof(*each));
	int rc = cfgs && each ? 0 : diag_set(d, DIAG_ENOMEM, "out of memory");
	struct engine_config big = p0->cfg;
	for (int32_t i = 0; rc == 0 && i < n; i++) {
		cfgs[i] = dp->pool[i].cfg;
		if (cfgs[i].max_model_len > big.max_model_len)
			big.max_model_len = cfgs[i].max_model_len;
		if (cfgs[i].kv_cache_tokens > big.kv_cache_tokens)
			big.kv_cache_tokens = cfgs[i].kv_cache_tokens;
		if (cfgs[i].max_num_batched_tokens > big.max_num_batched_tokens)
			big.max_num_batched_tokens = cfgs[i].max_num_batched_tokens;
	}
	struct replay_scan all;
	if (rc == 0)
		rc = replay_scan_pools(&so, cfgs, n, context, each, &all, d);
	if (rc == 0) {
		*calls = all.calls;
		rc = preflight_trace(&all, &big, dp->sc->context_policy, p0->pm.model_id, context,
				     o->trace_path, w, d);
	}
	for (int32_t i = 0; rc == 0 && i < n; i++) {
		int64_t elsewhere = each[i].rejected - all.rejected;
		if (elsewhere <= 0)
			continue;
		warn_add(w, "pool_calls_elsewhere",
			 "Pre-flight: pools[%d] (%s) cannot serve %lld of %lld calls that another "
			 "pool can (its max_model_len is %lld, its KV cache %lld tokens per "
			 "replica): the router sends them to the other pools only.",
			 (int)i, dp->pool[i].sc.name, (long long)elsewhere, (long long)all.calls,
			 (long long)dp->pool[i].cfg.max_model_len,
			 (long long)dp->pool[i].cfg.kv_cache_tokens);
	}
	free(cfgs);
	free(each);
	return rc;
}

/* ---- runs ---- */

void deploy_capacity(const struct deployment *dp, const struct deploy_vary *v,
		     struct res_capacity *cap)
{
	double seqs = 0, blocks = 0, flops = 0, bytes = 0, reps = 0;
	bool unknown = false;
	for (int32_t i = 0; i < dp->n_pools; i++) {
		const struct deploy_pool *p = &dp->pool[i];
		double r = dp->pooled ? (double)deploy_pool_replicas(dp, v, i) : 1.0;
		double gpus = (double)p->pm.tp * (double)p->pm.pp;
		seqs += r * p->cfg.max_num_seqs;
		blocks += r * (double)(p->cfg.kv_cache_tokens / p->cfg.block_size);
		flops += r * p->pm.matmul_peak_flops * gpus;
		bytes += r * p->pm.mem_bw_bytes * gpus;
		unknown = unknown || p->pm.compute_unknown;
		reps += r;
	}
	cap->max_num_seqs = (int32_t)llround(seqs / reps);
	cap->kv_blocks = llround(blocks / reps);
	cap->peak_flops = unknown ? 0.0 : flops / reps;
	cap->peak_bytes_per_s = bytes / reps;
}

int32_t deploy_pool_replicas(const struct deployment *dp, const struct deploy_vary *v, int32_t i)
{
	if (!dp->pooled)
		return deploy_replicas(dp, v);
	return v && v->pool_replicas[i] > 0 ? v->pool_replicas[i] : dp->pool[i].sc.replicas;
}

int32_t deploy_replicas(const struct deployment *dp, const struct deploy_vary *v)
{
	if (!dp->pooled)
		return v && v->replicas > 0 ? v->replicas : dp->sc->replicas;
	int32_t n = 0;
	for (int32_t i = 0; i < dp->n_pools; i++)
		n += deploy_pool_replicas(dp, v, i);
	return n;
}

int32_t deploy_gpus(const struct deployment *dp, const struct deploy_vary *v)
{
	int32_t gpus = 0;
	for (int32_t i = 0; i < dp->n_pools; i++)
		gpus += deploy_pool_replicas(dp, v, i) * dp->pool[i].pm.tp * dp->pool[i].pm.pp;
	return gpus;
}

/* A repair time no replay reaches: about 36 years of simulated time. */
#define DEPLOY_NEVER_NS (INT64_C(1) << 60)

int deploy_run(const struct deployment *dp, const struct replay_opts *o,
	       const struct deploy_vary *v, struct res_sink sink, struct replay_stats *st,
	       struct diag *d)
{
	struct deploy_vary none = {0};
	if (!v)
		v = &none;
	if (v->failed_replicas < 0 || v->failed_replicas > DEPLOY_MAX_FAILED)
		return diag_set(d, DIAG_EINPUT, "%d replicas failed (expected 0..%d)",
				(int)v->failed_replicas, DEPLOY_MAX_FAILED);
	if (v->failed_replicas > 0 && dp->elastic_on)
		return diag_set(d, DIAG_EINPUT, "%s: replicas failed for the whole run (N+F sizing) "
				"beside the scenario's own lifecycle (expected one of them)",
				dp->sc->source);
	if (dp->pooled && v->replicas > 0)
		return diag_set(d, DIAG_EINPUT, "%s: pools: their replicas are the scenario's or "
				"each pool's own (expected no one replica count)", dp->sc->source);
	for (int32_t i = 0; i < SCENARIO_MAX_POOLS; i++)
		if (v->pool_replicas[i] < 0 || (v->pool_replicas[i] > 0 && i >= dp->n_pools))
			return diag_set(d, DIAG_EINPUT, "%s: pools[%d]: %d replicas asked of a "
					"deployment of %d pools (expected 1 or more replicas of one "
					"of its pools)", dp->sc->source, (int)i,
					(int)v->pool_replicas[i], (int)dp->n_pools);
	if (dp->pooled && deploy_replicas(dp, v) > SCENARIO_MAX_REPLICAS)
		return diag_set(d, DIAG_EINPUT, "%s: pools: %d replicas in all (expected at most %d "
				"across the pools)", dp->sc->source, (int)deploy_replicas(dp, v),
				SCENARIO_MAX_REPLICAS);
	struct sim_pool pools[SCENARIO_MAX_POOLS];
	for (int32_t i = 0; dp->pooled && i < dp->n_pools; i++) {
		pools[i] = dp->sim_pools[i];
		pools[i].replicas = deploy_pool_replicas(dp, v, i);
	}
	struct replay_opts r = *o;
	struct router_config router = dp->sc->router;
	router.seed = o->seed;
	r.router = &router;
	r.context_policy = v->compact ? CONTEXT_COMPACT : dp->sc->context_policy;
	r.as_recorded = v->as_recorded;
	r.replicas = deploy_replicas(dp, v);
	r.pools = dp->pooled ? pools : NULL;
	r.n_pools = dp->pooled ? dp->n_pools : 0;
	r.pd = dp->pd_on ? &dp->pd : NULL;
	r.tiers = dp->tiers.n > 0 ? &dp->tiers : NULL;
	struct hybrid_config hyb = dp->backends.hybrid;
	hyb.seed = o->seed;
	r.hybrid = hyb.n > 0 ? &hyb : NULL;
	struct elastic_config el = dp->elastic;
	el.seed = o->seed;
	struct fault_spec faults[DEPLOY_MAX_FAILED];
	if (v->failed_replicas > 0) {
		/* down as the run starts; the repair falls after any run's end */
		elastic_config_default(&el);
		el.seed = o->seed;
		for (int32_t i = 0; i < v->failed_replicas; i++)
			faults[i] = (struct fault_spec){.replica = i, .at_ns = 0,
							.repair_ns = DEPLOY_NEVER_NS};
		el.faults = faults;
		el.n_faults = v->failed_replicas;
	}
	r.elastic = dp->elastic_on || v->failed_replicas > 0 ? &el : NULL;
	const struct scenario_teams *tm = &dp->sc->teams;
	uint64_t name_ids[SCENARIO_MAX_TEAMS];
	for (int32_t k = 0; k < tm->n; k++)
		name_ids[k] = trace_id_hash(tm->name[k]);
	struct replay_groups groups = {
		.class_main = dp->sc->scheduling.class_main,
		.class_subagent = dp->sc->scheduling.class_subagent,
		.class_batch = dp->sc->scheduling.class_batch,
		.n_names = tm->n, .name_ids = name_ids,
		.n_members = tm->n_members, .member = tm->member, .member_team = tm->member_team,
	};
	r.groups = &groups;
	const struct deploy_pool *p0 = &dp->pool[0];
	return replay_run(&r, &p0->cfg, sim_perf_from_model(&p0->pm), sink, st, d);
}
