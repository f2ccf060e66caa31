/* SPDX-License-Identifier: Apache-2.0
 * scenario: what to simulate, read from a JSON file and `--set` overrides.
 *
 * A scenario names the model, the hardware, the weight and KV-cache formats,
 * the engine settings (vLLM's names under "engine") and the latency SLOs.
 * Every key has a type and a range in one schema table; an unknown key or a
 * wrong type is an input error naming the file (or the --set argument), the
 * dotted key path and what was expected.  docs/scenario.md lists the keys.
 *
 * Values that depend on the model and hardware (KV capacity, max_model_len)
 * may be left out; scenario_load leaves them 0 and the caller derives them
 * from the memory model.
 */
#ifndef REPLAY_SCENARIO_H
#define REPLAY_SCENARIO_H

#include "base/outkind.h"
#include "models/catalog.h"
#include "models/cost.h"
#include "models/engine.h"
#include "models/spec.h"
#include "replay/replay.h"
#include "sim/router.h"
#include "sim/sim.h"

#include <stdint.h>

#define SCENARIO_STR_MAX 128

/* Target share of calls (completed or failed) that must meet every latency
 * objective when the scenario does not set slo.attainment: nine in ten, the
 * P90 that the default objectives are written against. */
#define SCENARIO_DEFAULT_SLO_ATTAINMENT 0.9

/* kv_retention.mode */
enum { SCENARIO_RETAIN_OFF = 0, SCENARIO_RETAIN_TTL = 1 };
/* disaggregation defaults: llm-d's guides set the prefix-based decider's
 * nonCachedTokens to 16 (docs/disaggregation.md) */
#define SCENARIO_DEFAULT_PD_NON_CACHED 16
#define SCENARIO_DEFAULT_PD_LINK "infiniband"
/* kv_retention's defaults, from SGLang's TTL prefix pinning (sgl-project/
 * sglang pull request 18941, merged February 2026, read 2026-12-06): its
 * worked example pins with ttl 300 s and a pin budget of 0.6 of the cache
 * (SGLANG_HICACHE_MAX_PINNED_RATIO) */
#define SCENARIO_DEFAULT_RETAIN_TTL_S 300.0
#define SCENARIO_DEFAULT_RETAIN_MAX_FRACTION 0.6

/* Speculative decoding when speculative.method is set but k and the
 * acceptance are not: round figures of this tool, not measurements (the
 * eagle3, ngram and suffix drafters take published figures instead,
 * models/spec.h).  vLLM logs the acceptance three ways, each a key of its
 * own (docs/speculative.md); set one from a run of your own. */
#define SCENARIO_DEFAULT_SPEC_K 3
#define SCENARIO_DEFAULT_SPEC_ACCEPTANCE 0.7

/* scheduling.policy */
enum { SCENARIO_SCHED_FCFS = 0, SCENARIO_SCHED_PRIORITY = 1 };
/* scheduling.classes' defaults: the main agent first, its sub-agents next,
 * batch work last (docs/priorities.md) */
#define SCENARIO_DEFAULT_CLASS_MAIN 0
#define SCENARIO_DEFAULT_CLASS_SUBAGENT 1
#define SCENARIO_DEFAULT_CLASS_BATCH 2
/* `teams`: at most this many teams (team 0 of the simulator is "no team")
 * and this many engineers over them */
#define SCENARIO_MAX_TEAMS 63
#define SCENARIO_MAX_TEAM_MEMBERS 1024

/* Pools a scenario may list (`pools`). */
#define SCENARIO_MAX_POOLS 16
/* Replicas of a cluster, the pools' together (the `replicas` key's range). */
#define SCENARIO_MAX_REPLICAS 4096

/* One entry of `pools`: the keys it sets; every other shape key comes from
 * the scenario's top level (after all --set).  The fields mean what the
 * same keys of struct scenario mean. */
struct scenario_pool {
	char name[SCENARIO_STR_MAX];      /* "" = "pools[i]" */
	char model[SCENARIO_STR_MAX];
	char hardware[SCENARIO_STR_MAX];
	char weight_format[SCENARIO_STR_MAX];
	char kv_cache_dtype[SCENARIO_STR_MAX];
	int32_t tensor_parallel_size;
	int32_t pipeline_parallel_size;
	int32_t expert_parallel_size;
	char engine_profile[SCENARIO_STR_MAX];
	char profile[SCENARIO_STR_MAX];
	double offload_gpu_expert_fraction;
	double host_memory_gb;
	double host_mem_bw_gbs;
	double host_tflops;
	double host_link_gbs;
	double power_limit_w;
	int32_t replicas;
	struct engine_config engine;
	int32_t reserve_full_prompt;
	bool flash_attention;
	int64_t engine_build;
	uint64_t set;                     /* bit k: the k-th pool key was given */
};

/* Cost assumptions a scenario may set (the "cost" object; docs/cost.md).
 * A negative value (the built-in default) means "not set": the price and
 * hardware catalogues' figure, or the default docs/cost.md gives. */
struct scenario_cost {
	double acceptance_rate;       /* of the self-hosted model */
	double turns_factor;
	double periods_per_month;     /* 0 = continuous traffic */
	double amortisation_months;
	double resale_fraction;
	double hosting_usd_month;
	double operator_usd_month;    /* the whole figure, overriding the model */
	double operator_base_usd_month;
	double operator_per_system_usd_month; /* per system, whatever its GPUs */
	double workdays_per_year;     /* a replayed working day's share of a
					 month: workdays / 12 (-1 = 261) */
	double electricity_usd_kwh;
	double pue;
	double billing_granularity_s;
	double min_billing_s;
	double min_replicas;
	double api_cache_ttl_s;       /* the API baseline's prompt-cache lifetime */
	double horizon_months;        /* compare's cash flow (models/cashflow.h) */
	double discount_rate;         /* a share a year */
	double api_acceptance_rate;   /* of the API's model (seats and API rows;
					 -1 = the trace's x its quality factor) */
	char traced_model[SCENARIO_STR_MAX]; /* the model the trace was recorded
					 with ("" = the API compared) */
	char trace_start_utc[SCENARIO_STR_MAX]; /* the UTC date and time of the
					 trace's t = 0, for off-peak API rates
					 ("" = 00:00 UTC of a Monday) */
	int64_t trace_start_ns;       /* it, ns since 1970-01-01 UTC (loaded) */
	char gpu_hour_row[SCENARIO_STR_MAX]; /* elastic: the id of one gpu_hour
						row to price by ("" = the median
						of the on-demand rows); checked
						against the prices when they load
						(cost_gpu_hour_row_check) */
};

/* Start-up of a replica, part by part (models/startup.h); the engine's
 * parts come from its profile, these from the scenario.
 * Provisioning a cloud GPU node: 80-120 s (Tensorfuse, "Lazy loading
 * performance degradation", 2025-08-24), 1-5 min from zero (Union.ai, "We cut
 * container cold boot from minutes to seconds"); issue 33 of this project
 * quotes 2-8 min.  The default takes 120 s, the low end (0: a node already
 * up).
 * Image pull on a fresh node: a 10 GB image in 4-5 minutes (Union.ai, as
 * above), a 20.2 GB one pulled in 5-6 min and extracted in 3-4 (BentoML,
 * "Cold-Starting LLMs on Kubernetes in Under 30 Seconds", 2025-04-11):
 * about 0.037 GB/s, download and extraction together; read 2026-12-06.
 * Storage: an AWS EBS gp3 volume delivers at most 1,000 MiB/s (EC2
 * CreateVolume API reference; read 2026-12-01), about 1 GB/s, taken per GPU
 * (each GPU loads its own shard). */
#define SCENARIO_DEFAULT_PROVISION_S 120.0
#define SCENARIO_DEFAULT_STORAGE_GBS 1.0
#define SCENARIO_DEFAULT_IMAGE_PULL_GBS 0.037
/* startup.keep_alive_s left unset: the engine profile's. */
#define SCENARIO_KEEP_ALIVE_UNSET (-2.0)
/* Autoscaler clock: the Kubernetes HorizontalPodAutoscaler's 15 s sync
 * period (kube-controller-manager --horizontal-pod-autoscaler-sync-period;
 * read 2026-12-01).  Cool-down: 300 s, KEDA's cooldownPeriod (autoscale.h),
 * which the cooldown policy also takes (it borrowed the figure from the
 * HPA's 300 s scale-down stabilisation window). */
#define SCENARIO_DEFAULT_AUTOSCALE_INTERVAL_S 15.0
#define SCENARIO_DEFAULT_AUTOSCALE_COOLDOWN_S 300.0
/* The policy a team running vLLM on Kubernetes in 2026 scales with: KEDA
 * on vLLM's Prometheus metrics.  vLLM's production stack Helm chart builds
 * its autoscaling on KEDA (docs.vllm.ai/projects/production-stack,
 * "Autoscaling with KEDA", chart v0.1.9 and later; its FAQ points to it for
 * autoscaling) and KServe autoscales LLM InferenceServices with KEDA
 * (kserve.github.io, "Autoscale InferenceService with LLM metrics",
 * v0.16); both read 2026-12-06.  With min_replicas 1 (the default) KEDA's
 * own poll never acts and the HPA it creates does all the scaling. */
#define SCENARIO_DEFAULT_AUTOSCALE_POLICY AUTOSCALE_POLICY_KEDA
/* Age of the metric the autoscaler acts on: one Prometheus scrape interval,
 * the Prometheus Operator's default scrapeInterval of 30 s
 * (monitoring.coreos.com/v1 PrometheusSpec, Documentation/api.md; the
 * kube-prometheus-stack chart leaves it unset, and vLLM's production stack
 * chart bundles that stack since v0.1.11); read 2026-12-06.  The
 * autoscaler sees the metric as it stood this long ago: the worst case of
 * a sample scraped at most one interval earlier. */
#define SCENARIO_DEFAULT_METRIC_LAG_S 30.0
/* Repair time of a fault rate when faults.repair_h is not set: a round
 * hour, not a measured figure; set it. */
#define SCENARIO_DEFAULT_REPAIR_H 1.0
/* Fault detection (faults.detection probe, sim/lifecycle.h): Kubernetes'
 * probe defaults, periodSeconds 10, failureThreshold 3, timeoutSeconds 1
 * (the Probe API reference, as in kubernetes-client/go docs/V1Probe.md;
 * read 2026-12-03); a client gives up on a call after 600 s, the OpenAI
 * and Anthropic Python SDKs' DEFAULT_TIMEOUT (src/{openai,anthropic}/
 * _constants.py: "default timeout is 10 minutes"; read 2026-12-03), and
 * retries after their back-off (sim/backend.h CLIENT_BACKOFF_*). */
#define SCENARIO_DEFAULT_PROBE_PERIOD_S 10.0
#define SCENARIO_DEFAULT_PROBE_FAILURE_THRESHOLD 3
#define SCENARIO_DEFAULT_PROBE_TIMEOUT_S 1.0
#define SCENARIO_DEFAULT_CLIENT_TIMEOUT_S 600.0
/* Autoscale targets per replica when autoscale.target is 0.  In-flight
 * calls: Knative's default concurrency target, 100 requests per replica
 * (container-concurrency-target-default; Knative docs, "Configuring
 * concurrency", read 2026-12-01).  Queue: 1 waiting call, i.e. scale out as
 * soon as calls wait, and KV: 0.8 of the cache in use -- both choices of
 * this tool, not published figures. */
#define SCENARIO_DEFAULT_TARGET_INFLIGHT 100.0
#define SCENARIO_DEFAULT_TARGET_QUEUE 1.0
#define SCENARIO_DEFAULT_TARGET_KV 0.8
#define SCENARIO_MAX_FAULTS 256
/* API backends a scenario may list (`backends`; sim/backend.h). */
#define SCENARIO_MAX_BACKENDS 8

/* One entry of `backends`: an API (per-token prices) or a seat plan beside
 * the local engines.  A number < 0 is "not set": the latency catalogue's
 * figure (models/apilat.h). */
struct scenario_backend {
	char name[48];
	char kind[8];                     /* "api" or "seat" */
	char price[SCENARIO_STR_MAX];     /* prices.json id: the API model's token
					     rows, or the seat plan's row */
	char latency[SCENARIO_STR_MAX];   /* api_backends.json id; "" = price */
	double ttft_ms;
	double output_tok_s;
	double cache_min_tokens;
	double cache_ttl_s;
	char ttft_model[8];               /* "prompt", "fixed"; "" = prompt where a
					     fit exists, fixed with ttft_ms alone */
	double ttft_base_ms;              /* the prompt model's figures */
	double prefill_tok_s;
	double cached_tok_s;
	/* per-minute limits (0 = none) and the client's retries */
	double rpm, input_tpm, output_tpm, tpm;
	double limits_count_cached;       /* 0 false, 1 true */
	double max_retries;
	double backoff_initial_s, backoff_max_s;
};

struct scenario {
	char name[SCENARIO_STR_MAX];
	char model[SCENARIO_STR_MAX];
	char hardware[SCENARIO_STR_MAX];
	char weight_format[SCENARIO_STR_MAX];
	char kv_cache_dtype[SCENARIO_STR_MAX];
	int32_t tensor_parallel_size;     /* 0 = derived (deploy_resolve) */
	int32_t pipeline_parallel_size;   /* 0 = derived */
	int32_t expert_parallel_size;     /* 0 = 1: experts split by TP */
	char engine_profile[SCENARIO_STR_MAX]; /* "" = the hardware's default */
	char profile[SCENARIO_STR_MAX];   /* measured step profile CSV; "" = none */
	char prices[SCENARIO_STR_MAX];    /* price file (models/prices.h); "" = the
					     built-in prices.json */
	double offload_gpu_expert_fraction; /* 1 unless set: MoE experts on GPU */
	double host_memory_gb;            /* host side of expert offload; 0 = default */
	double host_mem_bw_gbs;
	double host_tflops;
	double host_link_gbs;
	double power_limit_w;         /* board power limit per GPU (models/power.h);
					 0 = the catalogue entry's */
	int32_t replicas;             /* engine instances of this shape */
	struct scenario_kv_tiers {    /* kv_tiers.*: lower KV-cache tiers, off
					 while host_gb is 0 */
		double host_gb;       /* host DRAM for the tier, GB */
		double host_gbs;      /* GPU <- host load bandwidth per GPU, GB/s
					 (0: the hardware's host link) */
		double disk_gb;       /* a disk or remote tier below it (0: none) */
		double disk_gbs;      /* its load bandwidth per GPU, GB/s */
		int32_t shared_by;    /* replicas sharing one set of tiers */
		int32_t mode;         /* enum sim_tier_mode: how blocks reach
					 the host tier */
		int32_t chunk_tokens; /* write-through: tokens a stored chunk spans */
		bool save_unfull_chunk; /* write-through: a prompt's last,
					   partial chunk is stored too */
		bool async_store;     /* write-through: stores overlap compute */
	} kv_tiers;
	struct scenario_kv_retention { /* kv_retention.*: off by default */
		int32_t mode;         /* SCENARIO_RETAIN_OFF or _TTL */
		double ttl_s;         /* a finished call's blocks stay retained */
		double max_fraction;  /* most of a replica's cache held retained */
	} kv_retention;
	/* disaggregation.*: prefill/decode disaggregation between two pools
	 * (off while prefill_pool is ""; docs/disaggregation.md) */
	struct scenario_pd {
		char prefill_pool[SCENARIO_STR_MAX]; /* a pool's name */
		char decode_pool[SCENARIO_STR_MAX];
		char decider[SCENARIO_STR_MAX];      /* "uncached" (default) or "always" */
		int64_t non_cached_tokens;           /* uncached: the threshold (16) */
		char link[SCENARIO_STR_MAX];         /* an id of kv_links.json (infiniband) */
		bool layerwise;                      /* transfer overlaps the prefill (false) */
		bool buffered;                       /* one transfer a call, not a block (false) */
	} pd;
	struct router_config router;  /* router.*: defaults from router_config_default */
	struct scenario_scheduling {  /* scheduling.*: fcfs by default */
		int32_t policy;       /* SCENARIO_SCHED_FCFS or _PRIORITY */
		int32_t class_main;   /* classes.main: a session without a parent */
		int32_t class_subagent; /* classes.subagent: one with a parent */
		int32_t class_batch;  /* classes.batch: "priority": "batch" */
	} scheduling;
	struct scenario_teams {       /* teams: engineers by team, as given */
		int32_t n;
		char name[SCENARIO_MAX_TEAMS][SCENARIO_STR_MAX];
		int32_t n_members;
		uint64_t member[SCENARIO_MAX_TEAM_MEMBERS]; /* engineer id hashes */
		int32_t member_team[SCENARIO_MAX_TEAM_MEMBERS]; /* index into name */
	} teams;
	bool report_groups;           /* report.by_class_and_team */
	double provision_s;           /* startup.provision_s: node provisioning */
	double storage_gbs;           /* startup.storage_gbs: per GPU */
	double image_pull_gbs;        /* startup.image_pull_gbs */
	bool image_prepulled;         /* startup.image_prepulled */
	bool compile_cache;           /* startup.compile_cache */
	double keep_alive_s;          /* startup.keep_alive_s: SCENARIO_KEEP_ALIVE_UNSET
					 (the engine's), < 0 never unload, else s */
	struct engine_startup engine_startup; /* the engine profile's start-up
					 figures (deploy_resolve; zero before) */
	bool autoscale;               /* autoscale.enabled */
	enum autoscale_metric autoscale_metric;
	double autoscale_target;      /* 0 = the metric's default (deploy.c) */
	int32_t autoscale_min;
	int32_t autoscale_max;        /* 0 = replicas */
	double autoscale_interval_s;
	double autoscale_cooldown_s;
	enum autoscale_policy autoscale_policy; /* autoscale.policy */
	struct scenario_hpa {         /* autoscale.* of the hpa and keda policies */
		double tolerance;
		double up_window_s, down_window_s;
		int32_t up_pods;
		double up_percent, up_period_s;
		double down_percent, down_period_s;
		double metric_lag_s;
		double polling_s;     /* keda */
		double activation;    /* keda */
	} hpa;
	struct scenario_fault_list {  /* faults.list as given */
		int32_t n;
		struct scenario_fault {
			int32_t replica;  /* -1: every replica of the pool */
			int32_t pool;     /* -1: none, or given by name */
			char pool_name[SCENARIO_STR_MAX]; /* "" or a pool's name */
			int64_t at_ns, repair_ns;
		} e[SCENARIO_MAX_FAULTS];
	} fault_list;
	struct fault_spec faults[SCENARIO_MAX_FAULTS]; /* faults.list resolved
					 (scenario_load): replicas numbered
					 across the cluster, pool after pool */
	int32_t n_faults;
	double faults_mtbf_h;         /* 0 = no rate */
	double faults_repair_h;
	int32_t faults_max_retries;
	char faults_detection[SCENARIO_STR_MAX]; /* "probe" or "instant" */
	double faults_probe_period_s;
	int32_t faults_probe_failure_threshold;
	double faults_probe_timeout_s;
	double faults_client_timeout_s;
	double faults_retry_initial_s, faults_retry_max_s;
	struct engine_config engine;  /* kv_cache_tokens, max_model_len,
					 max_num_seqs: 0 = derive */
	int32_t reserve_full_prompt;  /* -1 = the engine profile's default */
	bool flash_attention;         /* engine.flash_attention (true): false runs
					 the engine's attention without flash
					 attention where its profile has a figure
					 for that (llama.cpp -fa off) */
	int64_t engine_build;         /* engine.build (0: a current build): the
					 engine's build number, for costs of
					 older builds (llama.cpp's host-routed
					 MoE up to build 6210) */
	enum context_policy context_policy; /* replay.context_policy */
	double slo_ttft_ms;           /* 0 = no objective */
	double slo_tpot_ms;
	double slo_attainment;        /* share of calls within the objectives
					 below which a replay's answer is "no" */
	struct scenario_cost cost;
	double report_interval_s;     /* report.interval_s: time-series step, 0 = off */
	struct scenario_spec {        /* speculative.*: off unless method is set
					 (docs/speculative.md) */
		char method[SCENARIO_STR_MAX];      /* "off", "draft", "mtp", "eagle3",
						       "ngram" or "suffix" */
		char draft_model[SCENARIO_STR_MAX]; /* method draft: a catalogue id */
		int32_t k;                          /* draft length */
		/* the acceptance as given: at most one of these four is set
		 * (-1 / n 0 = not given) */
		double acceptance_rate;             /* per-token alpha */
		double draft_acceptance_rate;       /* vLLM's logged accepted / drafted */
		double mean_acceptance_length;      /* vLLM's logged 1 + accepted / drafts */
		struct scenario_rates {
			int32_t n;
			double v[SPEC_K_MAX];
		} position_rates;                   /* vLLM's per-position rates */
		double acceptance_kind[OUT_KINDS];  /* per-token, by output kind; -1 = the
						       above (or the method's default) */
		int32_t disable_by_batch_size;      /* 0 = never */
		/* resolved by scenario_load: the per-token alpha of each output
		 * kind, what the acceptance was given as, and how it converted */
		double alpha[OUT_KINDS];
		const char *given;                  /* "per_token",
						       "draft_acceptance_rate",
						       "mean_acceptance_length",
						       "position_acceptance_rates",
						       "method_default", "default" */
		char given_text[640];
	} spec;
	char source[512];             /* file it came from, "(built-in default)" */
	char key_prefix[32];          /* "" or "pools[i]." (a pool's view): what
					 messages put before a key */
	int32_t n_pools;              /* 0: one shape (the top-level keys) */
	struct scenario_pool pools[SCENARIO_MAX_POOLS];
	int32_t n_backends;           /* `backends`; 0 = none */
	struct scenario_backend backends[SCENARIO_MAX_BACKENDS];
	struct scenario_routes {      /* router.spill_to ... (backend names, "" = off) */
		char spill_to[SCENARIO_STR_MAX];
		double spill_wait_ms;     /* 0 = no bound */
		double spill_ttft_ms;     /* 0 = no bound */
		char fallback_to[SCENARIO_STR_MAX];
		char size_to[SCENARIO_STR_MAX];
		int64_t size_prompt_tokens;
	} routes;
};

/* The default scenario shipped with agentcap (scenarios/default.json). */
extern const char scenario_default_json[];

/* Load `path` (NULL: the built-in default), then apply each "dotted.key=value"
 * in sets[0..n_sets).  A value is read as JSON when the whole of it parses as JSON
 * (numbers, true/false, null, quoted strings), else as a bare string. */
int scenario_load(struct scenario *sc, const char *path, const char *const *sets, int n_sets,
		  struct diag *d);

/* Pool i of sc (0 <= i < sc->n_pools) as a one-shape scenario: sc's keys
 * with the pool's on top, n_pools 0, name the pool's (or "pools[i]"), and
 * key_prefix "pools[i]." so that deploy_resolve's messages name the
 * pool's key. */
void scenario_pool_view(const struct scenario *sc, int32_t i, struct scenario *out);

/* Whether sc turns disaggregation on (names a prefill or a decode pool). */
bool scenario_disaggregated(const struct scenario *sc);

/* Whether pool i of sc gives `key` (a pool key: "hardware",
 * "tensor_parallel_size", ...); false for a key pools do not take. */
bool scenario_pool_sets(const struct scenario *sc, int32_t i, const char *key);

/* Pool i of sc no longer gives `key`: it takes the scenario's value (size
 * places every pool on the hardware option it searches). */
void scenario_pool_unset(struct scenario *sc, int32_t i, const char *key);

/* Put the cost assumptions sc sets over parameters filled from the
 * catalogues (cost_*_from_prices), each sourced to the scenario.  Any
 * pointer may be NULL; t is the task economics of the self-hosted model. */
void scenario_cost_apply(const struct scenario *sc, struct cost_purchase *p,
			 struct cost_dedicated *dp, struct cost_elastic *e, struct cost_task *t);

/* Working days a year of sc's calendar: cost.workdays_per_year, else
 * COST_WORKDAYS_PER_YEAR (weekdays, no holidays); why (may be NULL) gets
 * what it rests on, for the assumption a report prints.  sc may be NULL
 * (the default). */
double scenario_workdays_per_year(const struct scenario *sc, char *why, size_t why_size);

/* Per backend of sc, what its calls cost: the API's list prices per 1M
 * tokens (for a seat plan, those of its `latency` model when prices.json
 * has them, else 0) and, for a seat plan, the seat's price per engineer
 * per month.  Rows borrowed from the price catalogue. */
struct scenario_backend_price {
	const struct price_row *input, *cached, *output; /* NULL when none */
	const struct price_row *write;                   /* the cache-write row of
							    its entries' lifetime
							    (5 minutes or 1 hour);
							    NULL when none */
	const struct price_row *seat;                    /* seat plans */
	struct cost_api list;                            /* the API's prices (a
							    seat plan's: of the
							    API that values its
							    usage), every class */
	bool priced;                                     /* list is set */
};

/* Every number of b "not set" (-1): the latency catalogue's figures and
 * the defaults of sim/backend.h. */
void scenario_backend_unset(struct scenario_backend *b);

/* Index of the backend named name in sc, or -1 for "" (the rule is off);
 * -2 when no backend has that name. */
int32_t scenario_backend_index(const struct scenario *sc, const char *name);

/* The autoscale.* defaults of the hpa and keda policies (Kubernetes' and
 * KEDA's: sim/autoscale.h; the metric lag above). */
void scenario_hpa_default(struct scenario_hpa *h);

/* Replicas in the cluster: `replicas`, or the pools' together. */
int32_t scenario_replicas(const struct scenario *sc);

#endif
