/* SPDX-License-Identifier: Apache-2.0
 * scenario: schema-checked JSON scenario with dotted-key overrides. */
#include "replay/scenario.h"

#include "base/diag.h"
#include "base/keys.h"
#include "base/textfile.h"
#include "models/apilat.h"
#include "models/memory.h"
#include "models/offload.h"
#include "models/perf_model.h"
#include "models/prices.h"
#include "models/profile.h"
#include "sim/backend.h"
#include "traces/import_util.h"
#include "traces/jsontext.h"
#include "traces/trace.h"

#include <cjson/cJSON.h>

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* K_INTERVAL: 0 (off) or in [lo, hi]; K_COST: -1 (the default) or in
 * [lo, hi], nothing between. */
enum kind { K_STR, K_INT, K_INT_OPT, K_INT64, K_INT64_OPT, K_NUM, K_BOOL, K_BOOL_OPT, K_POLICY,
	    K_TIERMODE, K_RETMODE, K_ROUTER, K_SCORER, K_METRIC, K_ASPOLICY, K_KEEPALIVE, K_FAULTS, K_INTERVAL, K_COST, K_OBJ, K_SCHED, K_TEAMS,
	    K_TEXT, K_POOLS, K_BACKENDS, K_RATES };

struct key {
	const char *path;   /* dotted */
	enum kind kind;
	size_t off;         /* into struct scenario */
	double lo, hi;      /* range for numbers */
	const char *help;
};

#define OFF(f) offsetof(struct scenario, f)
static const struct key KEYS[] = {
	{"name", K_STR, OFF(name), 0, 0, "a short name for reports"},
	{"description", K_TEXT, 0, 0, 0, "free text"},
	{"model", K_STR, OFF(model), 0, 0, "a model id from `agentcap catalog`"},
	{"hardware", K_STR, OFF(hardware), 0, 0, "a hardware id from `agentcap catalog`"},
	{"weight_format", K_STR, OFF(weight_format), 0, 0, "a weight format id, e.g. bf16, fp8"},
	{"kv_cache_dtype", K_STR, OFF(kv_cache_dtype), 0, 0, "KV cache dtype, e.g. bf16, fp8"},
	{"tensor_parallel_size", K_INT_OPT, OFF(tensor_parallel_size), 1, 64,
	 "GPUs per pipeline stage (null = the system's GPUs)"},
	{"pipeline_parallel_size", K_INT_OPT, OFF(pipeline_parallel_size), 1, 64,
	 "pipeline stages per replica (null = 1, or what the system's GPUs leave)"},
	{"expert_parallel_size", K_INT_OPT, OFF(expert_parallel_size), 1, 64,
	 "GPUs a MoE model's experts are spread over: 1 or tensor_parallel_size (null = 1)"},
	{"engine_profile", K_STR, OFF(engine_profile), 0, 0,
	 "engine profile: vllm, vllm-2025, vllm-v0, sglang, trtllm, llama.cpp, ollama, mlx (unset = "
	 "the hardware's)"},
	{"profile", K_STR, OFF(profile), 0, 0,
	 "measured step profile CSV overriding the performance model"},
	{"prices", K_STR, OFF(prices), 0, 0,
	 "price file of the shape of models/catalog/prices.json (unset = the built-in one)"},
	{"offload", K_OBJ, 0, 0, 0, "mixture-of-experts weights in host RAM"},
	{"offload.gpu_expert_fraction", K_NUM, OFF(offload_gpu_expert_fraction), 0, 1,
	 "share of routed experts kept on the GPUs (1 = no offload)"},
	{"host", K_OBJ, 0, 0, 0, "host RAM and CPU for offloaded experts"},
	{"host.memory_gb", K_NUM, OFF(host_memory_gb), 0, 1e6, "host RAM in GB (0 = unchecked)"},
	{"host.mem_bw_gbs", K_NUM, OFF(host_mem_bw_gbs), 0, 1e6, "host RAM bandwidth, GB/s (0 = default)"},
	{"host.tflops", K_NUM, OFF(host_tflops), 0, 1e6, "CPU matmul peak, TFLOPS (0 = default)"},
	{"host.link_gbs", K_NUM, OFF(host_link_gbs), 0, 1e5,
	 "GPU-host link per direction, GB/s (0 = the hardware's)"},
	{"power_limit_w", K_NUM, OFF(power_limit_w), 0, 1e5,
	 "board power limit per GPU in watts: compute runs at the clock it allows (0 = the catalogue's)"},
	{"replicas", K_INT, OFF(replicas), 1, SCENARIO_MAX_REPLICAS,
	 "engine instances of this shape behind the router"},
	{"kv_tiers", K_OBJ, 0, 0, 0, "KV-cache tiers below each replica's GPU cache (off by default)"},
	{"kv_tiers.host_gb", K_NUM, OFF(kv_tiers.host_gb), 0, 1e7,
	 "host DRAM tier, GB per replica or per sharing group (0 = no tiers)"},
	{"kv_tiers.host_gbs", K_NUM, OFF(kv_tiers.host_gbs), 0, 1e5,
	 "host-to-GPU load bandwidth per GPU, GB/s (0 = the hardware's host link)"},
	{"kv_tiers.disk_gb", K_NUM, OFF(kv_tiers.disk_gb), 0, 1e9,
	 "disk or remote tier below the host tier, GB (0 = none)"},
	{"kv_tiers.disk_gbs", K_NUM, OFF(kv_tiers.disk_gbs), 0, 1e5,
	 "its load bandwidth per GPU, GB/s (needed with disk_gb)"},
	{"kv_tiers.shared_by", K_INT, OFF(kv_tiers.shared_by), 1, 4096,
	 "replicas in a row sharing one set of tiers (one node's, LMCache-style)"},
	{"kv_tiers.mode", K_TIERMODE, OFF(kv_tiers.mode), 0, 0,
	 "write_through (a prefill stores each chunk to the host as computed; default) or evict "
	 "(a block reaches the host when the GPU evicts it)"},
	{"kv_tiers.chunk_tokens", K_INT, OFF(kv_tiers.chunk_tokens), 1, 1 << 20,
	 "write_through: tokens a stored chunk spans, a multiple of the block size (256)"},
	{"kv_tiers.save_unfull_chunk", K_BOOL, OFF(kv_tiers.save_unfull_chunk), 0, 0,
	 "write_through: store a prompt's last, partial chunk too (false)"},
	{"kv_tiers.async_store", K_BOOL, OFF(kv_tiers.async_store), 0, 0,
	 "write_through: stores overlap compute, holding the host link (true); false: the step "
	 "waits for them"},
	{"kv_retention", K_OBJ, 0, 0, 0,
	 "keeping an agent session's KV blocks across its tool pauses (off by default)"},
	{"kv_retention.mode", K_RETMODE, OFF(kv_retention.mode), 0, 0,
	 "off (plain LRU; default) or ttl (a finished call's cached blocks are passed over by "
	 "eviction for ttl_s while anything else is free)"},
	{"kv_retention.ttl_s", K_NUM, OFF(kv_retention.ttl_s), 0.001, 1e7,
	 "ttl: seconds a finished call's blocks stay retained (300)"},
	{"kv_retention.max_fraction", K_NUM, OFF(kv_retention.max_fraction), 0.0001, 1,
	 "ttl: most of a replica's KV cache held retained; past it the oldest retained blocks "
	 "expire (0.6)"},
	{"disaggregation", K_OBJ, 0, 0, 0,
	 "prefill/decode disaggregation between two pools (off by default; docs/disaggregation.md)"},
	{"disaggregation.prefill_pool", K_STR, OFF(pd.prefill_pool), 0, 0,
	 "the name of the pool that prefills"},
	{"disaggregation.decode_pool", K_STR, OFF(pd.decode_pool), 0, 0,
	 "the name of the pool that decodes (every call's replica)"},
	{"disaggregation.decider", K_STR, OFF(pd.decider), 0, 0,
	 "uncached (a call goes to the prefill pool when more than non_cached_tokens of its "
	 "prompt are missing from its decode replica's cache; default) or always"},
	{"disaggregation.non_cached_tokens", K_INT64, OFF(pd.non_cached_tokens), 0, 1 << 30,
	 "uncached: the threshold (16, llm-d's guides)"},
	{"disaggregation.link", K_STR, OFF(pd.link), 0, 0,
	 "the link the KV crosses: nvlink, infiniband (default), roce or ethernet (kv_links.json)"},
	{"disaggregation.layerwise", K_BOOL, OFF(pd.layerwise), 0, 0,
	 "the transfer overlaps the prefill layer by layer (false: after it, as vLLM's "
	 "NixlConnector)"},
	{"disaggregation.buffered", K_BOOL, OFF(pd.buffered), 0, 0,
	 "one transfer a call (LMCache's buffer) instead of one a KV block (false)"},
	{"pools", K_POOLS, 0, 1, SCENARIO_MAX_POOLS,
	 "replica pools of their own shapes behind the router (keys as above, per pool)"},
	{"router", K_OBJ, 0, 0, 0, "how calls are spread over the replicas"},
	{"router.policy", K_ROUTER, OFF(router.policy), 0, 0,
	 "sglang_smg_v1.9_approx (default), sglang_smg_v1.9_exact, llmd_v0.10_approx, "
	 "llmd_v0.10_precise, dynamo_v1.0_kv, round_robin, least_requests, least_tokens, "
	 "power_of_two, session_affinity, prefix_aware"},
	{"router.max_outstanding", K_INT64, OFF(router.max_outstanding), 0, 1e9,
	 "calls a replica may hold before the router queues (0 = no limit)"},
	{"router.queue_limit", K_INT64, OFF(router.queue_limit), 0, 1e12,
	 "calls the router may hold; more are refused (0 = no limit)"},
	{"router.affinity_saturation", K_INT64, OFF(router.affinity_saturation), 0, 1e9,
	 "session_affinity: outstanding calls at which a session leaves its replica (0 = auto)"},
	{"router.sticky_subagents", K_BOOL, OFF(router.sticky_subagents), 0, 0,
	 "session_affinity: a sub-agent's calls follow its parent session's replica (false)"},
	{"router.team_max_inflight", K_INT64, OFF(router.team_max_inflight), 0, 1e9,
	 "calls of one team the router lets be in the engines at once; more wait at the router, "
	 "released round robin over teams (0 = no cap)"},
	{"router.prefix_scorer", K_SCORER, OFF(router.prefix_scorer), 0, 0,
	 "prefix_aware: cache_aware (SGLang model gateway) or weighted (llm-d)"},
	{"router.prefix_load_cap", K_INT64, OFF(router.prefix_load_cap), 0, 1e9,
	 "prefix_aware, sglang_*: outstanding calls above the least loaded at which load wins"},
	{"router.cache_threshold", K_NUM, OFF(router.cache_threshold), 0, 1,
	 "prefix_aware cache_aware, sglang_*_approx: cached share of the prompt that attracts a call"},
	{"router.balance_rel_threshold", K_NUM, OFF(router.balance_rel_threshold), 0, 1e6,
	 "prefix_aware cache_aware, sglang_*: max/min outstanding calls that, with the cap, is imbalance"},
	{"router.prefix_weight", K_NUM, OFF(router.prefix_weight), 0, 1e6,
	 "prefix_aware weighted, llmd_*: weight of the cached share of the prompt"},
	{"router.load_weight", K_NUM, OFF(router.load_weight), 0, 1e6,
	 "prefix_aware weighted: weight of the (normalised) outstanding calls"},
	{"router.max_tree_tokens", K_INT64, OFF(router.max_tree_tokens), 1, 1e12,
	 "sglang_*_approx: prompt tokens each replica's approximate tree keeps (LRU)"},
	{"router.queue_weight", K_NUM, OFF(router.queue_weight), 0, 1e6,
	 "llmd_*: weight of the scraped waiting queue (min-max normalised)"},
	{"router.kv_weight", K_NUM, OFF(router.kv_weight), 0, 1e6,
	 "llmd_*: weight of the scraped KV-cache room (1 - usage)"},
	{"router.scrape_interval_ms", K_NUM, OFF(router.scrape_interval_ms), 0, 1e9,
	 "llmd_*: how often the router reads the replicas' metrics, ms (0 = always current)"},
	{"router.overlap_weight", K_NUM, OFF(router.overlap_weight), 0, 1e6,
	 "dynamo_*: weight of the prefill blocks against the decode blocks"},
	{"router.temperature", K_NUM, OFF(router.temperature), 0, 1e3,
	 "dynamo_*: softmax temperature over the costs (0 = the lowest cost)"},
	{"router.spill_to", K_STR, OFF(routes.spill_to), 0, 0,
	 "a backend's name: calls the local replicas would keep waiting go there"},
	{"router.spill_wait_ms", K_NUM, OFF(routes.spill_wait_ms), 0, 1e12,
	 "spill when the predicted queue wait passes this, ms (0 = no bound)"},
	{"router.spill_ttft_ms", K_NUM, OFF(routes.spill_ttft_ms), 0, 1e12,
	 "spill when the predicted TTFT passes this, ms (0 = no bound)"},
	{"router.fallback_to", K_STR, OFF(routes.fallback_to), 0, 0,
	 "a backend's name: calls go there while no local replica that could serve them is up"},
	{"router.size_to", K_STR, OFF(routes.size_to), 0, 0,
	 "a backend's name: prompts longer than router.size_prompt_tokens go there"},
	{"router.size_prompt_tokens", K_INT64, OFF(routes.size_prompt_tokens), 0, 1e12,
	 "prompt tokens above which router.size_to takes a call"},
	{"backends", K_BACKENDS, 0, 0, SCENARIO_MAX_BACKENDS,
	 "API backends and seat plans beside the local engines (docs/hybrid.md)"},
	{"startup", K_OBJ, 0, 0, 0, "how long a replica takes to start"},
	{"startup.provision_s", K_NUM, OFF(provision_s), 0, 1e6,
	 "seconds to provision a cloud node (120; 0 = a node already up)"},
	{"startup.image_pull_gbs", K_NUM, OFF(image_pull_gbs), 0.0001, 1e4,
	 "GB/s a new node pulls and unpacks the engine's image at (0.037)"},
	{"startup.image_prepulled", K_BOOL, OFF(image_prepulled), 0, 0,
	 "true: the image is on the node already, no pull (false)"},
	{"startup.storage_gbs", K_NUM, OFF(storage_gbs), 0.001, 1e6,
	 "GB/s each GPU loads its share of the weights at (1)"},
	{"startup.compile_cache", K_BOOL, OFF(compile_cache), 0, 0,
	 "true: torch.compile reads the cache of an earlier start (false: compiles cold)"},
	{"startup.keep_alive_s", K_KEEPALIVE, OFF(keep_alive_s), -1e9, 1e9,
	 "engines that load on demand (ollama): seconds idle before the model unloads, "
	 "-1 never (null = the engine's: Ollama 300)"},
	{"autoscale", K_OBJ, 0, 0, 0, "replicas that follow the load"},
	{"autoscale.enabled", K_BOOL, OFF(autoscale), 0, 0, "true or false (false)"},
	{"autoscale.policy", K_ASPOLICY, OFF(autoscale_policy), 0, 0,
	 "keda (default), hpa (Kubernetes HorizontalPodAutoscaler) or cooldown (this tool's first rule)"},
	{"autoscale.metric", K_METRIC, OFF(autoscale_metric), 0, 0, "queue, kv or inflight (inflight)"},
	{"autoscale.target", K_NUM, OFF(autoscale_target), 0, 1e9,
	 "target value of the metric per replica (0 = the metric's default)"},
	{"autoscale.min_replicas", K_INT, OFF(autoscale_min), 0, 4096,
	 "fewest replicas (0 = scale to zero; default 1)"},
	{"autoscale.max_replicas", K_INT, OFF(autoscale_max), 0, 4096,
	 "most replicas (0 = replicas)"},
	{"autoscale.interval_s", K_NUM, OFF(autoscale_interval_s), 0.001, 1e6,
	 "seconds between evaluations (15)"},
	{"autoscale.cooldown_s", K_NUM, OFF(autoscale_cooldown_s), 0, 1e7,
	 "keda: seconds after the last active poll before scaling to zero; cooldown: after a "
	 "scaling action before a scale-in (300)"},
	{"autoscale.tolerance", K_NUM, OFF(hpa.tolerance), 0, 1e6,
	 "hpa, keda: relative change of the metric within which nothing scales (0.1)"},
	{"autoscale.scale_up_window_s", K_NUM, OFF(hpa.up_window_s), 0, 1e7,
	 "hpa, keda: scale-up stabilisation window, the lowest recommendation in it wins (0)"},
	{"autoscale.scale_down_window_s", K_NUM, OFF(hpa.down_window_s), 0, 1e7,
	 "hpa, keda: scale-down stabilisation window, the highest recommendation in it wins (300)"},
	{"autoscale.scale_up_pods", K_INT, OFF(hpa.up_pods), 0, 1 << 20,
	 "hpa, keda: replicas a scale-up may add per period (4; 0 = no such policy)"},
	{"autoscale.scale_up_percent", K_NUM, OFF(hpa.up_percent), 0, 1e6,
	 "hpa, keda: percent a scale-up may add per period (100; 0 = no such policy)"},
	{"autoscale.scale_up_period_s", K_NUM, OFF(hpa.up_period_s), 0.001, 1e7,
	 "hpa, keda: the scale-up policies' period (15)"},
	{"autoscale.scale_down_percent", K_NUM, OFF(hpa.down_percent), 0, 100,
	 "hpa, keda: percent a scale-down may remove per period (100)"},
	{"autoscale.scale_down_period_s", K_NUM, OFF(hpa.down_period_s), 0.001, 1e7,
	 "hpa, keda: the scale-down policy's period (15)"},
	{"autoscale.metric_lag_s", K_NUM, OFF(hpa.metric_lag_s), 0, 1e6,
	 "hpa, keda: age of the metric the autoscaler reads, one scrape interval (30)"},
	{"autoscale.polling_interval_s", K_NUM, OFF(hpa.polling_s), 0.001, 1e6,
	 "keda: seconds between polls that scale to and from zero (30)"},
	{"autoscale.activation_target", K_NUM, OFF(hpa.activation), 0, 1e9,
	 "keda: the metric above which the scaler is active and wakes from zero (0)"},
	{"faults", K_OBJ, 0, 0, 0, "replicas that fail"},
	{"faults.list", K_FAULTS, OFF(fault_list), 0, 0,
	 "failures: [{\"replica\": i, \"pool\": p, \"at_s\": t, \"repair_s\": r}, ...]; "
	 "replica counts across pools, or within `pool` (a name or index); a pool without a "
	 "replica fails whole"},
	{"faults.mtbf_h", K_INTERVAL, OFF(faults_mtbf_h), 0.05, 1e9,
	 "mean hours between failures of each replica (0 = none)"},
	{"faults.repair_h", K_NUM, OFF(faults_repair_h), 0, 1e6, "hours a failed replica is down (1)"},
	{"faults.max_retries", K_INT, OFF(faults_max_retries), 0, 1000,
	 "retries of a call whose replica failed (2)"},
	{"faults.detection", K_STR, OFF(faults_detection), 0, 0,
	 "how a failure is seen: probe (a hung replica is noticed by a health probe; its calls "
	 "wait, then retry with back-off) or instant (seen at once, retried at once) (probe)"},
	{"faults.probe_period_s", K_NUM, OFF(faults_probe_period_s), 0.001, 1e6,
	 "seconds between health probes (10, Kubernetes' periodSeconds)"},
	{"faults.probe_failure_threshold", K_INT, OFF(faults_probe_failure_threshold), 1, 1000,
	 "failed probes in a row that mark a replica failed (3, Kubernetes' failureThreshold)"},
	{"faults.probe_timeout_s", K_NUM, OFF(faults_probe_timeout_s), 0, 1e6,
	 "seconds a probe waits on a hung replica (1, Kubernetes' timeoutSeconds)"},
	{"faults.client_timeout_s", K_NUM, OFF(faults_client_timeout_s), 0.001, 1e7,
	 "seconds a client waits for a call on a hung replica (600, the OpenAI and Anthropic SDKs')"},
	{"faults.retry_initial_s", K_NUM, OFF(faults_retry_initial_s), 0, 1e6,
	 "the client's first back-off before a retry, seconds (0.5, the SDKs')"},
	{"faults.retry_max_s", K_NUM, OFF(faults_retry_max_s), 0, 1e6,
	 "the client's longest back-off, seconds (8, the SDKs')"},
	{"engine", K_OBJ, 0, 0, 0, "engine settings"},
	{"engine.max_num_seqs", K_INT_OPT, OFF(engine.max_num_seqs), 1, 1 << 20,
	 "sequences per batch (null = the engine version's default for the GPU)"},
	{"engine.reserve_full_prompt", K_BOOL_OPT, OFF(reserve_full_prompt), 0, 0,
	 "admit a request only if its whole prompt's KV fits (null = the engine's default)"},
	{"engine.max_num_batched_tokens", K_INT64_OPT, OFF(engine.max_num_batched_tokens), 1, 1 << 24,
	 "tokens per step (null = the engine version's default)"},
	{"engine.block_size", K_INT64, OFF(engine.block_size), 1, 4096, "tokens per KV block"},
	{"engine.gpu_memory_utilization", K_NUM, OFF(engine.gpu_memory_utilization), 0.01, 1.0,
	 "fraction of GPU memory the engine may use"},
	{"engine.enable_chunked_prefill", K_BOOL, OFF(engine.enable_chunked_prefill), 0, 0, "true or false"},
	{"engine.enable_prefix_caching", K_BOOL, OFF(engine.enable_prefix_caching), 0, 0, "true or false"},
	{"engine.flash_attention", K_BOOL, OFF(flash_attention), 0, 0,
	 "true or false (true): false charges the engine's attention without flash attention "
	 "(llama.cpp -fa off; other engines unchanged)"},
	{"engine.build", K_INT64, OFF(engine_build), 0, 1e7,
	 "the engine's build number (0: a current build): llama.cpp builds up to 6210 route each "
	 "MoE step's tokens on the host (docs/performance-model.md)"},
	{"engine.kv_cache_tokens", K_INT64_OPT, OFF(engine.kv_cache_tokens), 1, 1e15,
	 "KV capacity in tokens, overriding the memory model (null = computed)"},
	{"engine.max_model_len", K_INT64_OPT, OFF(engine.max_model_len), 1, 1e9,
	 "longest prompt + output (null = the model's context length)"},
	{"replay", K_OBJ, 0, 0, 0, "how the trace is replayed"},
	{"replay.context_policy", K_POLICY, OFF(context_policy), 0, 0,
	 "calls beyond max_model_len: compact, truncate or reject"},
	{"cost", K_OBJ, 0, 0, 0, "cost assumptions (docs/cost.md); -1 = the default"},
	{"cost.acceptance_rate", K_COST, OFF(cost.acceptance_rate), 0.001, 1,
	 "share of tasks accepted with this model (-1 = the trace's own)"},
	{"cost.horizon_months", K_COST, OFF(cost.horizon_months), 1, 240,
	 "compare: months the cash flow runs over, whole (-1 = 36)"},
	{"cost.discount_rate", K_COST, OFF(cost.discount_rate), 0, 1,
	 "compare: the cash flow's discount rate, a share a year (-1 = 0.08)"},
	{"cost.api_acceptance_rate", K_COST, OFF(cost.api_acceptance_rate), 0.001, 1,
	 "share of tasks accepted with the API's model, seats and API rows (-1 = the trace's, "
	 "x its quality against the traced model)"},
	{"cost.traced_model", K_STR, OFF(cost.traced_model), 0, 0,
	 "the model the trace was recorded with: a model id of models.json or an API id of "
	 "prices.json (unset = the API compared)"},
	{"cost.trace_start_utc", K_STR, OFF(cost.trace_start_utc), 0, 0,
	 "the UTC date and time of the trace's t = 0, e.g. 2026-12-07T08:00:00Z: the clock "
	 "off-peak API rates are read on (unset = t = 0 is 00:00 UTC of a Monday)"},
	{"cost.turns_factor", K_COST, OFF(cost.turns_factor), 0.01, 100,
	 "calls and tokens per task relative to the trace (-1 = 1)"},
	{"cost.periods_per_month", K_COST, OFF(cost.periods_per_month), 0, 1e6,
	 "replayed spans per month (0 = around the clock; -1 = the default)"},
	{"cost.amortisation_months", K_COST, OFF(cost.amortisation_months), 1, 600,
	 "purchase: months the price is spread over (-1 = 36)"},
	{"cost.resale_fraction", K_COST, OFF(cost.resale_fraction), 0, 1,
	 "purchase: share of the price recovered at the end (-1 = 0)"},
	{"cost.hosting_usd_month", K_COST, OFF(cost.hosting_usd_month), 0, 1e9,
	 "purchase: rack or colocation per system per month, USD (-1 = 0)"},
	{"cost.operator_usd_month", K_COST, OFF(cost.operator_usd_month), 0, 1e9,
	 "self-hosting: operator time per month, USD, the whole figure, overriding the model "
	 "base + per-system share x systems (-1 = the model)"},
	{"cost.operator_base_usd_month", K_COST, OFF(cost.operator_base_usd_month), 0, 1e9,
	 "self-hosting: operator time per deployment per month, USD (-1 = the price catalogue's "
	 "field-notes-loaded, $5,000)"},
	{"cost.operator_per_system_usd_month", K_COST, OFF(cost.operator_per_system_usd_month), 0,
	 1e9, "self-hosting: operator time per system per month, USD, whatever its GPUs (-1 = the "
	 "price catalogue's gpu-cluster-engineer-100-nodes, per 8-GPU system)"},
	{"cost.workdays_per_year", K_COST, OFF(cost.workdays_per_year), 1, 366,
	 "working days a year: a replayed day counts workdays / 12 times a month (-1 = 261, "
	 "weekdays with no holidays; 250 with the 11 US federal holidays of 2026)"},
	{"cost.electricity_usd_kwh", K_COST, OFF(cost.electricity_usd_kwh), 0, 100,
	 "purchase: electricity, USD per kWh (-1 = the price catalogue's)"},
	{"cost.pue", K_COST, OFF(cost.pue), 1, 10,
	 "purchase: facility / IT power (-1 = the price catalogue's)"},
	{"cost.billing_granularity_s", K_COST, OFF(cost.billing_granularity_s), 1, 2678400,
	 "elastic: billing unit of a replica's up-time, s (-1 = 1)"},
	{"cost.api_cache_ttl_s", K_COST, OFF(cost.api_cache_ttl_s), 1, 86400,
	 "the API baseline's prompt-cache lifetime, s: 300 (5-minute entries, Claude Code "
	 "with an API key) or 3600 (1-hour); -1 = 300"},
	{"cost.min_billing_s", K_COST, OFF(cost.min_billing_s), 0, 2678400,
	 "elastic: least time each replica stretch is billed, s (-1 = 60)"},
	{"cost.min_replicas", K_COST, OFF(cost.min_replicas), 0, 4096,
	 "elastic: replicas kept up outside the replayed periods (-1 = 0)"},
	{"cost.gpu_hour_row", K_STR, OFF(cost.gpu_hour_row), 0, 0,
	 "elastic: the id of the gpu_hour row to price by, of the hardware or its GPU (agentcap "
	 "catalog --prices; unset = the median of the on-demand rows)"},
	{"slo", K_OBJ, 0, 0, 0, "latency objectives"},
	{"slo.ttft_ms", K_NUM, OFF(slo_ttft_ms), 0, 1e12, "time to first token objective, ms (0 = none)"},
	{"slo.tpot_ms", K_NUM, OFF(slo_tpot_ms), 0, 1e12, "time per output token objective, ms (0 = none)"},
	{"slo.attainment", K_NUM, OFF(slo_attainment), 0, 1,
	 "share of calls that must meet the objectives for the answer to be yes (default 0.9)"},
	{"speculative", K_OBJ, 0, 0, 0, "speculative decoding (off by default; docs/speculative.md)"},
	{"speculative.method", K_STR, OFF(spec.method), 0, 0,
	 "off, draft (a draft model), mtp (the target's multi-token-prediction heads), eagle3 (an "
	 "EAGLE-3 head), ngram or suffix (model-free drafters on the host)"},
	{"speculative.draft_model", K_STR, OFF(spec.draft_model), 0, 0,
	 "method draft: a model id from `agentcap catalog` with the target's tokenizer"},
	{"speculative.k", K_INT, OFF(spec.k), 1, SPEC_K_MAX, "tokens drafted per verify step (3)"},
	{"speculative.acceptance_rate", K_NUM, OFF(spec.acceptance_rate), 0, 1,
	 "per-token chance a drafted token is accepted (0.7, or the method's published figure; "
	 "give at most one of the four acceptance keys)"},
	{"speculative.draft_acceptance_rate", K_NUM, OFF(spec.draft_acceptance_rate), 0, 1,
	 "vLLM's logged 'Avg Draft acceptance rate' as a share (accepted / drafted tokens at "
	 "this k), converted to the per-token rate"},
	{"speculative.mean_acceptance_length", K_NUM, OFF(spec.mean_acceptance_length), 1,
	 SPEC_K_MAX + 1,
	 "vLLM's logged 'Mean acceptance length' (1 + accepted / drafts, at most k + 1), "
	 "converted to the per-token rate"},
	{"speculative.position_acceptance_rates", K_RATES, OFF(spec.position_rates), 0, 1,
	 "vLLM's logged 'Per-position acceptance rate', k shares, converted to the per-token "
	 "rate with the same mean acceptance length"},
	{"speculative.disable_by_batch_size", K_INT, OFF(spec.disable_by_batch_size), 0, 1 << 20,
	 "a step with this many running sequences or more does not speculate (vLLM V0's "
	 "speculative_disable_by_batch_size; 0 = never, the default)"},
	{"speculative.acceptance_code", K_NUM, OFF(spec.acceptance_kind[OUT_KIND_CODE]), -1, 1,
	 "per-token rate for calls that generate code (-1 = the acceptance above)"},
	{"speculative.acceptance_structured", K_NUM, OFF(spec.acceptance_kind[OUT_KIND_STRUCTURED]),
	 -1, 1, "the same for structured output, JSON and tool calls (-1 = the acceptance above)"},
	{"speculative.acceptance_prose", K_NUM, OFF(spec.acceptance_kind[OUT_KIND_PROSE]), -1, 1,
	 "the same for prose (-1 = the acceptance above)"},
	{"scheduling", K_OBJ, 0, 0, 0, "the engines' scheduling policy and priority classes"},
	{"scheduling.policy", K_SCHED, OFF(scheduling.policy), 0, 0,
	 "fcfs (default) or priority (vLLM --scheduling-policy priority)"},
	{"scheduling.classes", K_OBJ, 0, 0, 0,
	 "priority of calls whose trace gives none, or a class name (0 = first served)"},
	{"scheduling.classes.main", K_INT, OFF(scheduling.class_main), 0, 15,
	 "a main agent's calls: sessions without a parent (0)"},
	{"scheduling.classes.subagent", K_INT, OFF(scheduling.class_subagent), 0, 15,
	 "a sub-agent's calls: sessions with a parent_session (1)"},
	{"scheduling.classes.batch", K_INT, OFF(scheduling.class_batch), 0, 15,
	 "calls marked \"priority\": \"batch\" in the trace (2)"},
	{"teams", K_TEAMS, OFF(teams), 0, 0,
	 "engineers by team: {\"team\": [engineer ids]}, for per-team caps and figures"},
	{"report", K_OBJ, 0, 0, 0, "what the report adds"},
	{"report.by_class_and_team", K_BOOL, OFF(report_groups), 0, 0,
	 "latency percentiles per priority class and per team even with both features off"},
	{"report.interval_s", K_INTERVAL, OFF(report_interval_s), 0.001, 1e9,
	 "time-series sample interval, simulated seconds (0 = no time series)"},
};
#undef OFF
#define N_KEYS (sizeof(KEYS) / sizeof(KEYS[0]))

/* The keys a pool may set: a top-level key's path (its kind, range and help
 * come from KEYS) and where the pool keeps it.  Objects have no field. */
struct pool_key {
	const char *path;
	size_t off;         /* into struct scenario_pool */
};

#define POFF(f) offsetof(struct scenario_pool, f)
static const struct pool_key POOL_KEYS[] = {
	{"name", POFF(name)},
	{"model", POFF(model)},
	{"hardware", POFF(hardware)},
	{"weight_format", POFF(weight_format)},
	{"kv_cache_dtype", POFF(kv_cache_dtype)},
	{"tensor_parallel_size", POFF(tensor_parallel_size)},
	{"pipeline_parallel_size", POFF(pipeline_parallel_size)},
	{"expert_parallel_size", POFF(expert_parallel_size)},
	{"engine_profile", POFF(engine_profile)},
	{"profile", POFF(profile)},
	{"offload", 0},
	{"offload.gpu_expert_fraction", POFF(offload_gpu_expert_fraction)},
	{"host", 0},
	{"host.memory_gb", POFF(host_memory_gb)},
	{"host.mem_bw_gbs", POFF(host_mem_bw_gbs)},
	{"host.tflops", POFF(host_tflops)},
	{"host.link_gbs", POFF(host_link_gbs)},
	{"power_limit_w", POFF(power_limit_w)},
	{"replicas", POFF(replicas)},
	{"engine", 0},
	{"engine.max_num_seqs", POFF(engine.max_num_seqs)},
	{"engine.reserve_full_prompt", POFF(reserve_full_prompt)},
	{"engine.max_num_batched_tokens", POFF(engine.max_num_batched_tokens)},
	{"engine.block_size", POFF(engine.block_size)},
	{"engine.gpu_memory_utilization", POFF(engine.gpu_memory_utilization)},
	{"engine.enable_chunked_prefill", POFF(engine.enable_chunked_prefill)},
	{"engine.enable_prefix_caching", POFF(engine.enable_prefix_caching)},
	{"engine.flash_attention", POFF(flash_attention)},
	{"engine.build", POFF(engine_build)},
	{"engine.kv_cache_tokens", POFF(engine.kv_cache_tokens)},
	{"engine.max_model_len", POFF(engine.max_model_len)},
};
#undef POFF
#define N_POOL_KEYS (sizeof(POOL_KEYS) / sizeof(POOL_KEYS[0]))
_Static_assert(N_POOL_KEYS <= 64, "struct scenario_pool.set has a bit per pool key");

static const struct key *key_find(const char *path)
{
	return keys_find(KEYS, N_KEYS, sizeof(KEYS[0]), path);
}

/* "a, b, c": the children of `prefix` ("" = top level). */
static void key_children(const char *prefix, char *out, size_t cap)
{
	keys_children(KEYS, N_KEYS, sizeof(KEYS[0]), prefix, out, cap);
}

static const char *kind_expect(const struct key *k, char *buf, size_t cap)
{
	switch (k->kind) {
	case K_STR:
		snprintf(buf, cap, "a string of 1 to %d bytes", SCENARIO_STR_MAX - 1);
		return buf;
	case K_TEXT:
		return "a string";
	case K_BOOL:
		return "true or false";
	case K_BOOL_OPT:
		return "true, false or null";
	case K_POLICY:
		return "\"compact\", \"truncate\" or \"reject\"";
	case K_TIERMODE:
		return "\"write_through\" or \"evict\"";
	case K_RETMODE:
		return "\"off\" or \"ttl\"";
	case K_SCHED:
		return "\"fcfs\" or \"priority\"";
	case K_TEAMS:
		snprintf(buf, cap, "an object of at most %d teams, each a list of engineer ids (strings "
			 "or integers), %d engineers in all, each in one team", SCENARIO_MAX_TEAMS,
			 SCENARIO_MAX_TEAM_MEMBERS);
		return buf;
	case K_ROUTER:
		snprintf(buf, cap, "one of %s", router_policy_names());
		return buf;
	case K_SCORER:
		return "\"cache_aware\" or \"weighted\"";
	case K_METRIC:
		return "\"queue\", \"kv\" or \"inflight\"";
	case K_ASPOLICY:
		return "\"keda\", \"hpa\" or \"cooldown\"";
	case K_KEEPALIVE:
		return "null (the engine's), a negative number (never unload) or seconds in [0, 1e9]";
	case K_FAULTS:
		return "a list of {\"replica\": integer >= 0, \"pool\": index or name, \"at_s\": seconds >= 0, \"repair_s\": seconds >= 0}";
	case K_OBJ:
		return "an object";
	case K_POOLS:
		snprintf(buf, cap, "an array of 1 to %d pool objects", SCENARIO_MAX_POOLS);
		return buf;
	case K_BACKENDS:
		snprintf(buf, cap, "an array of 0 to %d backend objects", SCENARIO_MAX_BACKENDS);
		return buf;
	case K_RATES:
		snprintf(buf, cap, "an array of 1 to %d shares in [0, 1], one per draft position",
			 SPEC_K_MAX);
		return buf;
	case K_INT:
	case K_INT64:
		snprintf(buf, cap, "an integer in [%.15g, %.15g]", k->lo, k->hi);
		return buf;
	case K_INT64_OPT:
	case K_INT_OPT:
		snprintf(buf, cap, "an integer in [%.15g, %.15g] or null", k->lo, k->hi);
		return buf;
	case K_NUM:
		snprintf(buf, cap, "a number in [%.15g, %.15g]", k->lo, k->hi);
		return buf;
	case K_INTERVAL:
		snprintf(buf, cap, "0 (off) or a number in [%.15g, %.15g]", k->lo, k->hi);
		return buf;
	case K_COST:
		snprintf(buf, cap, "-1 (the default) or a number in [%.15g, %.15g]", k->lo, k->hi);
		return buf;
	}
	return "?";
}

/* A number field of a fault entry: -1 when missing, -2 when not a number in
 * [0, hi] (an integer when `integer`). */
static double fault_field(const cJSON *o, const char *name, double hi, bool integer)
{
	const cJSON *f = cJSON_GetObjectItemCaseSensitive(o, name);
	if (!f)
		return -1;
	if (!cJSON_IsNumber(f) || !isfinite(f->valuedouble) || f->valuedouble < 0 ||
	    f->valuedouble > hi || (integer && f->valuedouble != floor(f->valuedouble)))
		return -2;
	return f->valuedouble;
}

/* faults.list: replaces any list given before.  Pool references are checked
 * once the whole scenario is read (scenario_load). */
static int store_faults(struct scenario_fault_list *fl, const cJSON *v, const char *where,
			struct diag *d)
{
	if (!cJSON_IsArray(v))
		return diag_set(d, DIAG_EINPUT,
				"%s: faults.list: expected a list of {\"replica\", \"pool\", \"at_s\", \"repair_s\"} objects",
				where);
	int n = cJSON_GetArraySize(v);
	if (n > SCENARIO_MAX_FAULTS)
		return diag_set(d, DIAG_EINPUT, "%s: faults.list: %d entries (expected at most %d)", where,
				n, SCENARIO_MAX_FAULTS);
	int k = 0;
	for (const cJSON *e = v->child; e; e = e->next, k++) {
		if (!cJSON_IsObject(e))
			return diag_set(d, DIAG_EINPUT, "%s: faults.list[%d]: expected an object", where, k);
		for (const cJSON *f = e->child; f; f = f->next)
			if (strcmp(f->string, "replica") != 0 && strcmp(f->string, "pool") != 0 &&
			    strcmp(f->string, "at_s") != 0 && strcmp(f->string, "repair_s") != 0)
				return diag_set(d, DIAG_EINPUT,
						"%s: faults.list[%d].%s: unknown key (expected one of: replica, pool, at_s, repair_s)",
						where, k, f->string);
		struct scenario_fault *out = &fl->e[k];
		*out = (struct scenario_fault){.replica = -1, .pool = -1};
		const cJSON *pool = cJSON_GetObjectItemCaseSensitive(e, "pool");
		if (cJSON_IsString(pool) && strlen(pool->valuestring) > 0 &&
		    strlen(pool->valuestring) < SCENARIO_STR_MAX)
			snprintf(out->pool_name, sizeof(out->pool_name), "%s", pool->valuestring);
		else if (pool && (out->pool = (int32_t)fault_field(e, "pool", SCENARIO_MAX_POOLS - 1,
								    true)) < 0)
			return diag_set(d, DIAG_EINPUT,
					"%s: faults.list[%d].pool: expected a pool's name or an index in [0, %d]",
					where, k, SCENARIO_MAX_POOLS - 1);
		double rep = fault_field(e, "replica", 4095, true);
		bool whole_pool = rep == -1 && pool;
		double at = fault_field(e, "at_s", 1e9, false);
		double repair = fault_field(e, "repair_s", 1e9, false);
		if (rep < 0 && !whole_pool)
			return diag_set(d, DIAG_EINPUT,
					"%s: faults.list[%d].replica: expected an integer in [0, 4095] (or a \"pool\" and no replica: the whole pool)",
					where, k);
		const char *bad = at < 0 ? "at_s" : repair < 0 ? "repair_s" : NULL;
		if (bad)
			return diag_set(d, DIAG_EINPUT,
					"%s: faults.list[%d].%s: expected a number of seconds in [0, 1e9]", where,
					k, bad);
		out->replica = whole_pool ? -1 : (int32_t)rep;
		out->at_ns = (int64_t)llround(at * 1e9);
		out->repair_ns = (int64_t)llround(repair * 1e9);
	}
	fl->n = n;
	return 0;
}

/* teams: replaces any mapping given before; false when v is not an object
 * of team names, each a list of engineer ids, within the limits, every
 * engineer in one team. */
static bool store_teams(struct scenario_teams *t, const cJSON *v)
{
	if (!cJSON_IsObject(v) || cJSON_GetArraySize(v) > SCENARIO_MAX_TEAMS)
		return false;
	struct scenario_teams n = {0};
	for (const cJSON *e = v->child; e; e = e->next) {
		if (!e->string[0] || strlen(e->string) >= SCENARIO_STR_MAX || !cJSON_IsArray(e))
			return false;
		snprintf(n.name[n.n], SCENARIO_STR_MAX, "%s", e->string);
		for (const cJSON *m = e->child; m; m = m->next) {
			char id[64];
			if (cJSON_IsString(m) && m->valuestring[0])
				snprintf(id, sizeof(id), "%s", m->valuestring);
			else if (cJSON_IsNumber(m) && m->valuedouble == floor(m->valuedouble) &&
				 fabs(m->valuedouble) <= 9007199254740992.0)
				snprintf(id, sizeof(id), "%.0f", m->valuedouble);
			else
				return false;
			if (cJSON_IsString(m) && strlen(m->valuestring) >= sizeof(id))
				return false;
			uint64_t h = trace_id_hash(id);
			for (int32_t k = 0; k < n.n_members; k++)
				if (n.member[k] == h)
					return false;
			if (n.n_members == SCENARIO_MAX_TEAM_MEMBERS)
				return false;
			n.member[n.n_members] = h;
			n.member_team[n.n_members++] = n.n;
		}
		n.n++;
	}
	*t = n;
	return true;
}

/* Store one value of kind k->kind at `field`; `where` names the file or the
 * --set argument, `shown` the key as messages give it. */
static int store_value(char *field, const struct key *k, const cJSON *v, const char *where,
		       const char *shown, struct diag *d)
{
	char buf[320];
	bool ok = false;
	switch (k->kind) {
	case K_POOLS: /* key_store's */
	case K_BACKENDS:
		break;
	case K_TEXT:
		ok = cJSON_IsString(v);
		break;
	case K_OBJ:
		ok = cJSON_IsObject(v);
		break;
	case K_STR:
		ok = cJSON_IsString(v) && strlen(v->valuestring) > 0 &&
		     strlen(v->valuestring) < SCENARIO_STR_MAX;
		if (ok)
			snprintf(field, SCENARIO_STR_MAX, "%s", v->valuestring);
		break;
	case K_ROUTER:
		ok = cJSON_IsString(v) &&
		     router_policy_parse(v->valuestring, (enum router_policy *)(void *)field);
		break;
	case K_SCORER:
		ok = cJSON_IsString(v) &&
		     router_scorer_parse(v->valuestring, (enum router_prefix_scorer *)(void *)field);
		break;
	case K_METRIC:
		ok = cJSON_IsString(v) &&
		     autoscale_metric_parse(v->valuestring, (enum autoscale_metric *)(void *)field);
		break;
	case K_ASPOLICY:
		ok = cJSON_IsString(v) &&
		     autoscale_policy_parse(v->valuestring, (enum autoscale_policy *)(void *)field);
		break;
	case K_KEEPALIVE:
		if (cJSON_IsNull(v)) {
			*(double *)field = SCENARIO_KEEP_ALIVE_UNSET;
			ok = true;
			break;
		}
		ok = cJSON_IsNumber(v) && isfinite(v->valuedouble) && v->valuedouble >= k->lo &&
		     v->valuedouble <= k->hi;
		if (ok)
			*(double *)field = v->valuedouble < 0 ? -1.0 : v->valuedouble;
		break;
	case K_FAULTS:
		return store_faults((struct scenario_fault_list *)(void *)field, v, where, d);
	case K_TEAMS:
		ok = store_teams((struct scenario_teams *)(void *)field, v);
		break;
	case K_SCHED:
		ok = cJSON_IsString(v);
		if (ok && strcmp(v->valuestring, "fcfs") == 0)
			*(int32_t *)field = SCENARIO_SCHED_FCFS;
		else if (ok && strcmp(v->valuestring, "priority") == 0)
			*(int32_t *)field = SCENARIO_SCHED_PRIORITY;
		else
			ok = false;
		break;
	case K_RATES: {
		struct scenario_rates *r = (struct scenario_rates *)(void *)field;
		int n = cJSON_IsArray(v) ? cJSON_GetArraySize(v) : 0;
		ok = n >= 1 && n <= SPEC_K_MAX;
		for (int i = 0; ok && i < n; i++) {
			const cJSON *e = cJSON_GetArrayItem(v, i);
			ok = cJSON_IsNumber(e) && isfinite(e->valuedouble) && e->valuedouble >= 0 &&
			     e->valuedouble <= 1;
			if (ok)
				r->v[i] = e->valuedouble;
		}
		if (ok)
			r->n = n;
		break;
	}
	case K_BOOL:
		ok = cJSON_IsBool(v);
		if (ok)
			*(bool *)field = cJSON_IsTrue(v);
		break;
	case K_BOOL_OPT:
		ok = cJSON_IsBool(v) || cJSON_IsNull(v);
		if (ok)
			*(int32_t *)field = cJSON_IsNull(v) ? -1 : cJSON_IsTrue(v) ? 1 : 0;
		break;
	case K_POLICY:
		ok = cJSON_IsString(v) &&
		     context_policy_parse(v->valuestring, (enum context_policy *)(void *)field);
		break;
	case K_TIERMODE:
		ok = cJSON_IsString(v);
		if (ok && strcmp(v->valuestring, "write_through") == 0)
			*(int32_t *)field = SIM_TIER_WRITE_THROUGH;
		else if (ok && strcmp(v->valuestring, "evict") == 0)
			*(int32_t *)field = SIM_TIER_EVICT;
		else
			ok = false;
		break;
	case K_RETMODE:
		ok = cJSON_IsString(v);
		if (ok && strcmp(v->valuestring, "off") == 0)
			*(int32_t *)field = SCENARIO_RETAIN_OFF;
		else if (ok && strcmp(v->valuestring, "ttl") == 0)
			*(int32_t *)field = SCENARIO_RETAIN_TTL;
		else
			ok = false;
		break;
	case K_INT_OPT:
	case K_INT64_OPT:
		if (cJSON_IsNull(v)) {
			if (k->kind == K_INT_OPT)
				*(int32_t *)field = 0;
			else
				*(int64_t *)field = 0;
			ok = true;
			break;
		}
		/* fall through */
	case K_INT:
	case K_INT64:
		ok = cJSON_IsNumber(v) && v->valuedouble == floor(v->valuedouble) &&
		     v->valuedouble >= k->lo && v->valuedouble <= k->hi;
		if (ok && (k->kind == K_INT || k->kind == K_INT_OPT))
			*(int32_t *)field = (int32_t)v->valuedouble;
		else if (ok)
			*(int64_t *)field = (int64_t)v->valuedouble;
		break;
	case K_INTERVAL:
	case K_COST:
	case K_NUM:
		ok = cJSON_IsNumber(v) && isfinite(v->valuedouble) &&
		     ((k->kind == K_INTERVAL && v->valuedouble == 0.0) ||
		      (k->kind == K_COST && v->valuedouble == -1.0) ||
		      (v->valuedouble >= k->lo && v->valuedouble <= k->hi));
		if (ok)
			*(double *)field = v->valuedouble;
		break;
	}
	bool named = k->kind == K_ROUTER || k->kind == K_SCORER || k->kind == K_METRIC ||
		     k->kind == K_POLICY || k->kind == K_TIERMODE || k->kind == K_RETMODE ||
		     k->kind == K_SCHED;
	if (!ok && named && cJSON_IsString(v) && strlen(v->valuestring) < 64)
		return diag_set(d, DIAG_EINPUT, "%s: %s: unknown '%s' (expected %s)", where, shown,
				v->valuestring, kind_expect(k, buf, sizeof(buf)));
	if (!ok)
		return diag_set(d, DIAG_EINPUT, "%s: %s: expected %s", where, shown,
				kind_expect(k, buf, sizeof(buf)));
	return 0;
}

/* Bytes a value of kind `kind` takes in its struct. */
static size_t kind_size(enum kind kind)
{
	switch (kind) {
	case K_STR:
		return SCENARIO_STR_MAX;
	case K_INT:
	case K_INT_OPT:
	case K_BOOL_OPT:
	case K_TIERMODE:
	case K_RETMODE:
	case K_SCHED:
		return sizeof(int32_t);
	case K_INT64:
	case K_INT64_OPT:
		return sizeof(int64_t);
	case K_NUM:
		return sizeof(double);
	case K_BOOL:
		return sizeof(bool);
	default:
		return 0;
	}
}

static const struct pool_key *pool_key_find(const char *path)
{
	return keys_find(POOL_KEYS, N_POOL_KEYS, sizeof(POOL_KEYS[0]), path);
}

/* Store value v of pool key pk in pool p (index i, for messages). */
static int pool_store(struct scenario_pool *p, int32_t i, const struct pool_key *pk, const cJSON *v,
		      const char *where, struct diag *d)
{
	char shown[300];
	snprintf(shown, sizeof(shown), "pools[%d].%s", (int)i, pk->path);
	const struct key *k = key_find(pk->path);
	int rc = store_value((char *)p + pk->off, k, v, where, shown, d);
	if (rc == 0)
		p->set |= UINT64_C(1) << (pk - POOL_KEYS);
	return rc;
}

/* Walk one pool object (or a nested object at `prefix`). */
static int walk_pool(struct scenario_pool *p, int32_t i, const cJSON *obj, const char *prefix,
		     const char *where, struct diag *d)
{
	const cJSON *twice = jsontext_repeated_key(obj);
	if (twice)
		return diag_set(d, DIAG_EINPUT,
				"%s: pools[%d].%s%s%.200s: given twice (expected each key once)", where,
				(int)i, prefix, *prefix ? "." : "", twice->string);
	for (const cJSON *c = obj->child; c; c = c->next) {
		char path[256];
		snprintf(path, sizeof(path), "%s%s%s", prefix, *prefix ? "." : "", c->string);
		const struct pool_key *pk = pool_key_find(path);
		if (!pk) {
			char kids[1024];
			keys_children(POOL_KEYS, N_POOL_KEYS, sizeof(POOL_KEYS[0]), prefix, kids,
				      sizeof(kids));
			return diag_set(d, DIAG_EINPUT,
					"%s: pools[%d].%s: unknown key (expected one of: %s)", where,
					(int)i, path, kids);
		}
		const struct key *k = key_find(pk->path);
		int rc;
		if (k->kind == K_OBJ) {
			if (!cJSON_IsObject(c))
				return diag_set(d, DIAG_EINPUT, "%s: pools[%d].%s: expected an object",
						where, (int)i, path);
			rc = walk_pool(p, i, c, path, where, d);
		} else {
			rc = pool_store(p, i, pk, c, where, d);
		}
		if (rc != 0)
			return rc;
	}
	return 0;
}

/* `pools`: an array of 1..SCENARIO_MAX_POOLS objects, replacing any given
 * before. */
static int parse_pools(struct scenario *sc, const cJSON *v, const char *where, struct diag *d)
{
	int n = cJSON_IsArray(v) ? cJSON_GetArraySize(v) : 0;
	if (n < 1 || n > SCENARIO_MAX_POOLS)
		return diag_set(d, DIAG_EINPUT, "%s: pools: expected an array of 1 to %d pool objects",
				where, SCENARIO_MAX_POOLS);
	sc->n_pools = 0;
	memset(sc->pools, 0, sizeof(sc->pools));
	int32_t i = 0;
	for (const cJSON *c = v->child; c; c = c->next, i++) {
		if (!cJSON_IsObject(c))
			return diag_set(d, DIAG_EINPUT, "%s: pools[%d]: expected an object", where,
					(int)i);
		int rc = walk_pool(&sc->pools[i], i, c, "", where, d);
		if (rc != 0)
			return rc;
		sc->n_pools = i + 1;
		/* faults, reports and the router name pools: one name, one pool */
		for (int32_t k = 0; sc->pools[i].name[0] && k < i; k++)
			if (strcmp(sc->pools[k].name, sc->pools[i].name) == 0)
				return diag_set(d, DIAG_EINPUT,
						"%s: pools[%d].name: '%.100s' is pools[%d]'s name too "
						"(expected a name of its own)", where, (int)i,
						sc->pools[i].name, (int)k);
	}
	return 0;
}

void scenario_backend_unset(struct scenario_backend *b)
{
	double *all[] = {&b->ttft_ms, &b->ttft_base_ms, &b->prefill_tok_s, &b->cached_tok_s,
			 &b->output_tok_s, &b->cache_min_tokens, &b->cache_ttl_s, &b->rpm,
			 &b->input_tpm, &b->output_tpm, &b->tpm, &b->limits_count_cached,
			 &b->max_retries, &b->backoff_initial_s, &b->backoff_max_s};
	for (size_t j = 0; j < sizeof(all) / sizeof(all[0]); j++)
		*all[j] = -1;
}

/* One entry of `backends`. */
static int parse_backend(struct scenario_backend *b, int i, const cJSON *o, const char *where,
			 struct diag *d)
{
	static const char *const keys = "name, kind, price, latency, ttft_model, ttft_ms, "
					"ttft_base_ms, prefill_tok_s, cached_tok_s, output_tok_s, "
					"cache_min_tokens, cache_ttl_s, rpm, input_tpm, output_tpm, tpm, "
					"limits_count_cached, max_retries, backoff_initial_s, "
					"backoff_max_s";
	memset(b, 0, sizeof(*b));
	snprintf(b->kind, sizeof(b->kind), "api");
	const cJSON *twice = jsontext_repeated_key(o);
	if (twice)
		return diag_set(d, DIAG_EINPUT, "%s: backends[%d].%.200s: given twice (expected each "
				"key once)", where, i, twice->string);
	/* the numbers: what each must be (> 0, >= 0, whole >= 0, a bool) */
	enum { POS, NONNEG, WHOLE, BOOL };
	const struct {
		const char *key;
		double *at;
		int rule;
	} nums[] = {
		{"ttft_ms", &b->ttft_ms, POS},
		{"ttft_base_ms", &b->ttft_base_ms, NONNEG},
		{"prefill_tok_s", &b->prefill_tok_s, POS},
		{"cached_tok_s", &b->cached_tok_s, POS},
		{"output_tok_s", &b->output_tok_s, POS},
		{"cache_min_tokens", &b->cache_min_tokens, WHOLE},
		{"cache_ttl_s", &b->cache_ttl_s, NONNEG},
		{"rpm", &b->rpm, NONNEG},
		{"input_tpm", &b->input_tpm, NONNEG},
		{"output_tpm", &b->output_tpm, NONNEG},
		{"tpm", &b->tpm, NONNEG},
		{"limits_count_cached", &b->limits_count_cached, BOOL},
		{"max_retries", &b->max_retries, WHOLE},
		{"backoff_initial_s", &b->backoff_initial_s, NONNEG},
		{"backoff_max_s", &b->backoff_max_s, NONNEG},
	};
	const size_t n_nums = sizeof(nums) / sizeof(nums[0]);
	scenario_backend_unset(b);
	const cJSON *f;
	cJSON_ArrayForEach(f, o)
	{
		const char *k = f->string;
		char *str = strcmp(k, "name") == 0	    ? b->name
			    : strcmp(k, "kind") == 0	    ? b->kind
			    : strcmp(k, "price") == 0	    ? b->price
			    : strcmp(k, "latency") == 0    ? b->latency
			    : strcmp(k, "ttft_model") == 0 ? b->ttft_model
							    : NULL;
		size_t cap = strcmp(k, "name") == 0	    ? sizeof(b->name)
			     : strcmp(k, "kind") == 0	    ? sizeof(b->kind)
			     : strcmp(k, "ttft_model") == 0 ? sizeof(b->ttft_model)
							    : SCENARIO_STR_MAX;
		size_t j = 0;
		while (!str && j < n_nums && strcmp(k, nums[j].key) != 0)
			j++;
		if (!str && j == n_nums)
			return diag_set(d, DIAG_EINPUT, "%s: backends[%d].%s: unknown key (expected one of: %s)",
					where, i, k, keys);
		if (str) {
			if (!cJSON_IsString(f) || !f->valuestring[0] || strlen(f->valuestring) >= cap)
				return diag_set(d, DIAG_EINPUT,
						"%s: backends[%d].%s: expected a non-empty string of at most %d characters",
						where, i, k, (int)cap - 1);
			snprintf(str, cap, "%s", f->valuestring);
			continue;
		}
		int rule = nums[j].rule;
		if (rule == BOOL) {
			if (!cJSON_IsBool(f))
				return diag_set(d, DIAG_EINPUT, "%s: backends[%d].%s: expected true or false",
						where, i, k);
			*nums[j].at = cJSON_IsTrue(f) ? 1 : 0;
			continue;
		}
		double v = cJSON_IsNumber(f) ? f->valuedouble : NAN;
		if (!isfinite(v) || v < 0 || v > 1e12 || (rule == WHOLE && v != floor(v)) ||
		    (rule == POS && !(v > 0)))
			return diag_set(d, DIAG_EINPUT, "%s: backends[%d].%s: expected %s", where, i, k,
					rule == WHOLE	 ? "an integer >= 0"
					: rule == NONNEG ? "a number >= 0"
							 : "a number > 0");
		*nums[j].at = v;
	}
	if (!b->name[0] || !b->price[0])
		return diag_set(d, DIAG_EINPUT, "%s: backends[%d]: %s: missing (expected a %s)", where, i,
				b->name[0] ? "price" : "name",
				b->name[0] ? "prices.json id" : "short name the router keys refer to");
	if (strcmp(b->kind, "api") != 0 && strcmp(b->kind, "seat") != 0)
		return diag_set(d, DIAG_EINPUT, "%s: backends[%d].kind: '%s' (expected \"api\" or \"seat\")",
				where, i, b->kind);
	if (b->ttft_model[0] && strcmp(b->ttft_model, "prompt") != 0 &&
	    strcmp(b->ttft_model, "fixed") != 0)
		return diag_set(d, DIAG_EINPUT, "%s: backends[%d].ttft_model: '%s' (expected \"prompt\" "
				"or \"fixed\")", where, i, b->ttft_model);
	if (strcmp(b->ttft_model, "prompt") == 0 && b->ttft_ms > 0)
		return diag_set(d, DIAG_EINPUT, "%s: backends[%d].ttft_ms: the fixed model's TTFT "
				"(expected ttft_base_ms with ttft_model \"prompt\")", where, i);
	return 0;
}

/* `backends`: an array of 0..SCENARIO_MAX_BACKENDS objects, replacing any
 * given before. */
static int parse_backends(struct scenario *sc, const cJSON *v, const char *where, struct diag *d)
{
	int n = cJSON_IsArray(v) ? cJSON_GetArraySize(v) : -1;
	if (n < 0 || n > SCENARIO_MAX_BACKENDS)
		return diag_set(d, DIAG_EINPUT, "%s: backends: expected an array of 0 to %d backend objects",
				where, SCENARIO_MAX_BACKENDS);
	sc->n_backends = 0;
	memset(sc->backends, 0, sizeof(sc->backends));
	for (int i = 0; i < n; i++) {
		const cJSON *o = cJSON_GetArrayItem(v, i);
		if (!cJSON_IsObject(o))
			return diag_set(d, DIAG_EINPUT, "%s: backends[%d]: expected an object", where, i);
		int rc = parse_backend(&sc->backends[i], i, o, where, d);
		if (rc != 0)
			return rc;
		for (int j = 0; j < i; j++)
			if (strcmp(sc->backends[j].name, sc->backends[i].name) == 0)
				return diag_set(d, DIAG_EINPUT,
						"%s: backends[%d].name: '%s' is taken by backends[%d] (expected unique names)",
						where, i, sc->backends[i].name, j);
		sc->n_backends = i + 1;
	}
	return 0;
}

/* Store one value; `where` names the file or the --set argument. */
static int key_store(struct scenario *sc, const struct key *k, const cJSON *v, const char *where,
		     struct diag *d)
{
	if (k->kind == K_POOLS)
		return parse_pools(sc, v, where, d);
	if (k->kind == K_BACKENDS)
		return parse_backends(sc, v, where, d);
	return store_value((char *)sc + k->off, k, v, where, k->path, d);
}

void scenario_pool_view(const struct scenario *sc, int32_t i, struct scenario *out)
{
	*out = *sc;
	const struct scenario_pool *p = &sc->pools[i];
	for (size_t j = 0; j < N_POOL_KEYS; j++) {
		if (!((p->set >> j) & 1) || strcmp(POOL_KEYS[j].path, "name") == 0)
			continue;
		const struct key *k = key_find(POOL_KEYS[j].path);
		memcpy((char *)out + k->off, (const char *)p + POOL_KEYS[j].off, kind_size(k->kind));
	}
	out->n_pools = 0;
	memset(out->pools, 0, sizeof(out->pools));
	if (p->name[0])
		snprintf(out->name, sizeof(out->name), "%s", p->name);
	else
		snprintf(out->name, sizeof(out->name), "pools[%d]", (int)i);
	snprintf(out->key_prefix, sizeof(out->key_prefix), "pools[%d].", (int)i);
}

bool scenario_disaggregated(const struct scenario *sc)
{
	return sc->pd.prefill_pool[0] || sc->pd.decode_pool[0];
}

/* The bit of pool key `key` in scenario_pool.set, or -1. */
static int pool_key_bit(const char *key)
{
	const struct pool_key *pk = pool_key_find(key);
	return pk ? (int)(pk - POOL_KEYS) : -1;
}

bool scenario_pool_sets(const struct scenario *sc, int32_t i, const char *key)
{
	int b = pool_key_bit(key);
	return b >= 0 && (sc->pools[i].set >> b & 1u);
}

void scenario_pool_unset(struct scenario *sc, int32_t i, const char *key)
{
	int b = pool_key_bit(key);
	if (b >= 0)
		sc->pools[i].set &= ~(UINT64_C(1) << b);
}

/* Walk a parsed object, storing every known key and rejecting unknown ones. */
static int walk(struct scenario *sc, const cJSON *obj, const char *prefix, const char *where,
		struct diag *d)
{
	const cJSON *twice = jsontext_repeated_key(obj);
	if (twice)
		return diag_set(d, DIAG_EINPUT, "%s: %s%s%.200s: given twice (expected each key once)",
				where, prefix, *prefix ? "." : "", twice->string);
	for (const cJSON *c = obj->child; c; c = c->next) {
		char path[256];
		snprintf(path, sizeof(path), "%s%s%s", prefix, *prefix ? "." : "", c->string);
		const struct key *k = key_find(path);
		if (!k) {
			char kids[1024];
			key_children(prefix, kids, sizeof(kids));
			return diag_set(d, DIAG_EINPUT, "%s: %s: unknown key (expected one of: %s)", where,
					path, kids);
		}
		int rc = key_store(sc, k, c, where, d);
		if (rc != 0)
			return rc;
		if (k->kind == K_OBJ && (rc = walk(sc, c, path, where, d)) != 0)
			return rc;
	}
	return 0;
}

static int parse_text(struct scenario *sc, const char *text, const char *where, struct diag *d)
{
	const char *end = NULL;
	cJSON *root = cJSON_ParseWithOpts(text, &end, true);
	if (!root) {
		long line, col;
		const char *at = end ? end : text;
		textfile_line_col(text, at, &line, &col);
		if (!*at)
			return diag_at(d, DIAG_EINPUT, where, line, col,
				       "malformed JSON: unexpected end of file (expected a scenario object)");
		int n = 0;
		while (n < 16 && at[n] && at[n] != '\n')
			n++;
		return diag_at(d, DIAG_EINPUT, where, line, col,
			       "malformed JSON at '%.*s' (expected a scenario object)", n, at);
	}
	int rc = 0;
	if (!cJSON_IsObject(root))
		rc = diag_set(d, DIAG_EINPUT, "%s: expected a JSON object at the top level", where);
	else
		rc = walk(sc, root, "", where, d);
	cJSON_Delete(root);
	return rc;
}

/* Parse a --set value as JSON when the whole of it is JSON, else as a bare
 * string (so "2s" or "falsey" reach the key's type check as strings, never
 * as the JSON prefix "2" or "false"); NULL when out of memory. */
static cJSON *set_value(const char *val)
{
	cJSON *v = cJSON_ParseWithOpts(val, NULL, 1);
	return v ? v : cJSON_CreateString(val);
}

/* --set pools[i].key=value: one key of a pool the scenario lists. */
static int apply_pool_set(struct scenario *sc, const char *path, const char *val, const char *where,
			  struct diag *d)
{
	char *end;
	long i = strtol(path + 6, &end, 10);
	if (end == path + 6 || path[6] == '-' || path[6] == '+' || end[0] != ']' || end[1] != '.')
		return diag_set(d, DIAG_EINPUT, "%s: %s: expected pools[i].key with i an index",
				where, path);
	if (i >= sc->n_pools)
		return diag_set(d, DIAG_EINPUT,
				"%s: pools[%ld]: no such pool (the scenario lists %d; expected an index "
				"below %d)", where, i, (int)sc->n_pools, (int)sc->n_pools);
	const struct pool_key *pk = pool_key_find(end + 2);
	const struct key *k = pk ? key_find(pk->path) : NULL;
	if (!k || k->kind == K_OBJ) {
		char prefix[256], kids[1024];
		snprintf(prefix, sizeof(prefix), "%s", end + 2);
		char *dot = strrchr(prefix, '.');
		if (dot)
			*dot = '\0';
		if (!dot || !pool_key_find(prefix))
			prefix[0] = '\0';
		keys_children(POOL_KEYS, N_POOL_KEYS, sizeof(POOL_KEYS[0]), prefix, kids, sizeof(kids));
		return diag_set(d, DIAG_EINPUT, "%s: %s: unknown key (expected one of: %s)", where,
				path, kids);
	}
	cJSON *v = set_value(val);
	if (!v)
		return diag_set(d, DIAG_ENOMEM, "%s: out of memory", where);
	int rc = pool_store(&sc->pools[i], (int32_t)i, pk, v, where, d);
	cJSON_Delete(v);
	return rc;
}

static int apply_set(struct scenario *sc, const char *arg, struct diag *d)
{
	char where[300];
	snprintf(where, sizeof(where), "--set %s", arg);
	const char *eq = strchr(arg, '=');
	if (!eq || eq == arg)
		return diag_set(d, DIAG_EINPUT, "%s: expected dotted.key=value", where);
	char path[256];
	size_t plen = (size_t)(eq - arg);
	if (plen >= sizeof(path))
		return diag_set(d, DIAG_EINPUT, "%s: key too long", where);
	memcpy(path, arg, plen);
	path[plen] = '\0';
	if (strncmp(path, "pools[", 6) == 0)
		return apply_pool_set(sc, path, eq + 1, where, d);
	const struct key *k = key_find(path);
	if (!k || k->kind == K_OBJ) {
		char prefix[256], kids[1024];
		snprintf(prefix, sizeof(prefix), "%s", path);
		char *dot = strrchr(prefix, '.');
		if (dot)
			*dot = '\0';
		else
			prefix[0] = '\0';
		key_children(key_find(prefix) ? prefix : "", kids, sizeof(kids));
		return diag_set(d, DIAG_EINPUT, "%s: %s: unknown key (expected one of: %s)", where, path,
				kids);
	}
	cJSON *v = set_value(eq + 1);
	if (!v)
		return diag_set(d, DIAG_ENOMEM, "%s: out of memory", where);
	int rc = key_store(sc, k, v, where, d);
	cJSON_Delete(v);
	return rc;
}

/* Replicas of pool i: its own count, else the top level's. */
static int32_t pool_replicas(const struct scenario *sc, int32_t i)
{
	const struct scenario_pool *p = &sc->pools[i];
	for (size_t j = 0; j < N_POOL_KEYS; j++)
		if (((p->set >> j) & 1) && strcmp(POOL_KEYS[j].path, "replicas") == 0)
			return p->replicas;
	return sc->replicas;
}

int32_t scenario_replicas(const struct scenario *sc)
{
	if (sc->n_pools == 0)
		return sc->replicas;
	int32_t n = 0;
	for (int32_t i = 0; i < sc->n_pools; i++)
		n += pool_replicas(sc, i);
	return n;
}

int32_t scenario_backend_index(const struct scenario *sc, const char *name)
{
	if (!name[0])
		return -1;
	for (int32_t i = 0; i < sc->n_backends; i++)
		if (strcmp(sc->backends[i].name, name) == 0)
			return i;
	return -2;
}

/* router.*_to name backends; spill-over has a bound. */
static int check_routes(const struct scenario *sc, struct diag *d)
{
	const struct scenario_routes *r = &sc->routes;
	const char *keys[3] = {"spill_to", "fallback_to", "size_to"};
	const char *vals[3] = {r->spill_to, r->fallback_to, r->size_to};
	for (int j = 0; j < 3; j++)
		if (scenario_backend_index(sc, vals[j]) == -2) {
			char names[SCENARIO_MAX_BACKENDS * 50] = "";
			for (int32_t i = 0; i < sc->n_backends; i++)
				snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s",
					 i ? ", " : "", sc->backends[i].name);
			return diag_set(d, DIAG_EINPUT, "%s: router.%s: '%s' (expected a backend's name%s%s)",
					sc->source, keys[j], vals[j], sc->n_backends ? ": " : "; the scenario lists none",
					names);
		}
	if (r->spill_to[0] && !(r->spill_wait_ms > 0) && !(r->spill_ttft_ms > 0))
		return diag_set(d, DIAG_EINPUT,
				"%s: router.spill_to: no bound (expected router.spill_wait_ms or router.spill_ttft_ms > 0)",
				sc->source);
	return 0;
}

/* faults.list as faults[]: replicas numbered across the cluster (pool after
 * pool), a whole pool's fault one entry per replica. */
static int resolve_faults(struct scenario *sc, struct diag *d)
{
	int32_t total = scenario_replicas(sc);
	sc->n_faults = 0;
	for (int32_t k = 0; k < sc->fault_list.n; k++) {
		const struct scenario_fault *f = &sc->fault_list.e[k];
		int32_t first = 0, n = total;
		if (f->pool >= 0 || f->pool_name[0]) {
			int32_t p = f->pool;
			for (int32_t i = 0; p < 0 && i < sc->n_pools; i++)
				if (strcmp(sc->pools[i].name, f->pool_name) == 0)
					p = i;
			if (p < 0 || p >= sc->n_pools) {
				char got[SCENARIO_STR_MAX + 8];
				if (f->pool_name[0])
					snprintf(got, sizeof(got), "'%s'", f->pool_name);
				else
					snprintf(got, sizeof(got), "%d", (int)f->pool);
				return diag_set(d, DIAG_EINPUT,
						"%s: faults.list[%d].pool: %s (expected a pool's name or an index below %d: the scenario lists %d pools)",
						sc->source, (int)k, got, (int)sc->n_pools, (int)sc->n_pools);
			}
			for (int32_t i = 0; i < p; i++)
				first += pool_replicas(sc, i);
			n = pool_replicas(sc, p);
		}
		if (f->replica >= n)
			return diag_set(d, DIAG_EINPUT,
					"%s: faults.list[%d].replica: %d (expected a replica in [0, %d): %s %d)",
					sc->source, (int)k, (int)f->replica, (int)n,
					f->pool >= 0 || f->pool_name[0] ? "the pool has" : "replicas is", (int)n);
		int32_t lo = f->replica >= 0 ? first + f->replica : first;
		int32_t hi = f->replica >= 0 ? lo + 1 : first + n;
		for (int32_t r = lo; r < hi; r++) {
			if (sc->n_faults == SCENARIO_MAX_FAULTS)
				return diag_set(d, DIAG_EINPUT,
						"%s: faults.list: more than %d replica failures once whole pools are counted",
						sc->source, SCENARIO_MAX_FAULTS);
			sc->faults[sc->n_faults++] = (struct fault_spec){
				.replica = r, .at_ns = f->at_ns, .repair_ns = f->repair_ns};
		}
	}
	return 0;
}

/* The key of autoscale.* that the policy ignores but the scenario set to
 * other than its default, or NULL. */
/* disaggregation.*: both pools named and distinct; its keys only with it */
static int check_pd(const struct scenario *sc, struct diag *d)
{
	const struct scenario_pd *pd = &sc->pd;
	if (!scenario_disaggregated(sc)) {
		const char *stray = strcmp(pd->decider, "uncached") != 0 ? "disaggregation.decider"
				    : pd->non_cached_tokens != SCENARIO_DEFAULT_PD_NON_CACHED
					    ? "disaggregation.non_cached_tokens"
				    : strcmp(pd->link, SCENARIO_DEFAULT_PD_LINK) != 0 ? "disaggregation.link"
				    : pd->layerwise ? "disaggregation.layerwise"
				    : pd->buffered ? "disaggregation.buffered" : NULL;
		if (stray)
			return diag_set(d, DIAG_EINPUT, "%s: %s: disaggregation is off and does not "
					"use it (expected disaggregation.prefill_pool and decode_pool, "
					"or the key left out)", sc->source, stray);
		return 0;
	}
	const char *names[2] = { pd->prefill_pool, pd->decode_pool };
	const char *keys[2] = { "disaggregation.prefill_pool", "disaggregation.decode_pool" };
	for (int k = 0; k < 2; k++) {
		bool found = false;
		for (int32_t i = 0; i < sc->n_pools && !found; i++)
			found = strcmp(sc->pools[i].name, names[k]) == 0;
		if (!found)
			return diag_set(d, DIAG_EINPUT, "%s: %s: '%s' (expected the name of one of "
					"the scenario's pools%s)", sc->source, keys[k], names[k],
					sc->n_pools ? "" : "; it has none");
	}
	if (strcmp(pd->prefill_pool, pd->decode_pool) == 0)
		return diag_set(d, DIAG_EINPUT, "%s: disaggregation.decode_pool: '%s' is the prefill "
				"pool too (expected two different pools)", sc->source, pd->decode_pool);
	if (strcmp(pd->decider, "uncached") != 0 && strcmp(pd->decider, "always") != 0)
		return diag_set(d, DIAG_EINPUT, "%s: disaggregation.decider: '%s' (expected "
				"\"uncached\" or \"always\")", sc->source, pd->decider);
	if (strcmp(pd->decider, "always") == 0 &&
	    pd->non_cached_tokens != SCENARIO_DEFAULT_PD_NON_CACHED)
		return diag_set(d, DIAG_EINPUT, "%s: disaggregation.non_cached_tokens: the always "
				"decider does not use it (expected decider uncached, or the key left "
				"out)", sc->source);
	return 0;
}

static const char *autoscale_stray_key(const struct scenario *sc)
{
	struct scenario_hpa def;
	scenario_hpa_default(&def);
	const struct scenario_hpa *h = &sc->hpa;
	enum autoscale_policy p = sc->autoscale_policy;
	if (p == AUTOSCALE_POLICY_COOLDOWN) {
		const struct { bool moved; const char *key; } hk[] = {
			{h->tolerance != def.tolerance, "autoscale.tolerance"},
			{h->up_window_s != def.up_window_s, "autoscale.scale_up_window_s"},
			{h->down_window_s != def.down_window_s, "autoscale.scale_down_window_s"},
			{h->up_pods != def.up_pods, "autoscale.scale_up_pods"},
			{h->up_percent != def.up_percent, "autoscale.scale_up_percent"},
			{h->up_period_s != def.up_period_s, "autoscale.scale_up_period_s"},
			{h->down_percent != def.down_percent, "autoscale.scale_down_percent"},
			{h->down_period_s != def.down_period_s, "autoscale.scale_down_period_s"},
			{h->metric_lag_s != def.metric_lag_s, "autoscale.metric_lag_s"},
		};
		for (size_t i = 0; i < sizeof(hk) / sizeof(hk[0]); i++)
			if (hk[i].moved)
				return hk[i].key;
	}
	if (p != AUTOSCALE_POLICY_KEDA) {
		if (h->polling_s != def.polling_s)
			return "autoscale.polling_interval_s";
		if (h->activation != def.activation)
			return "autoscale.activation_target";
	}
	if (p == AUTOSCALE_POLICY_HPA && sc->autoscale_cooldown_s != SCENARIO_DEFAULT_AUTOSCALE_COOLDOWN_S)
		return "autoscale.cooldown_s";
	return NULL;
}

void scenario_hpa_default(struct scenario_hpa *h)
{
	/* field by field over zeroed bytes: a compound literal leaves the
	 * padding after up_pods unspecified, and scenarios compare bytewise */
	memset(h, 0, sizeof(*h));
	h->tolerance = HPA_DEFAULT_TOLERANCE;
	h->up_window_s = HPA_DEFAULT_UP_WINDOW_S;
	h->down_window_s = HPA_DEFAULT_DOWN_WINDOW_S;
	h->up_pods = HPA_DEFAULT_UP_PODS;
	h->up_percent = HPA_DEFAULT_UP_PERCENT;
	h->up_period_s = HPA_DEFAULT_UP_PERIOD_S;
	h->down_percent = HPA_DEFAULT_DOWN_PERCENT;
	h->down_period_s = HPA_DEFAULT_DOWN_PERIOD_S;
	h->metric_lag_s = SCENARIO_DEFAULT_METRIC_LAG_S;
	h->polling_s = KEDA_DEFAULT_POLLING_S;
	h->activation = KEDA_DEFAULT_ACTIVATION;
}

/* speculative.*: the per-token acceptance of each output kind from the one
 * acceptance key given (converted where it is what vLLM logs), else the
 * method's published figure, else SCENARIO_DEFAULT_SPEC_ACCEPTANCE. */
static int resolve_acceptance(struct scenario *sc, enum spec_method m, struct diag *d)
{
	struct scenario_spec *p = &sc->spec;
	int32_t k = p->k;
	const char *keys[4] = {"speculative.acceptance_rate", "speculative.draft_acceptance_rate",
			       "speculative.mean_acceptance_length",
			       "speculative.position_acceptance_rates"};
	bool set[4] = {p->acceptance_rate >= 0, p->draft_acceptance_rate >= 0,
		       p->mean_acceptance_length >= 0, p->position_rates.n > 0};
	int given = -1;
	for (int i = 0; i < 4; i++) {
		if (!set[i])
			continue;
		if (given >= 0)
			return diag_set(d, DIAG_EINPUT, "%s: %s and %s are both given (expected one "
					"way of giving the acceptance)", sc->source, keys[given], keys[i]);
		given = i;
	}
	double base = SCENARIO_DEFAULT_SPEC_ACCEPTANCE, tokens = 0;
	int rc = 0;
	switch (given) {
	case 0:
		base = p->acceptance_rate;
		p->given = "per_token";
		snprintf(p->given_text, sizeof(p->given_text), "per-token rate %.4g (%s)", base,
			 keys[0]);
		break;
	case 1:
		tokens = 1 + p->draft_acceptance_rate * (double)k;
		rc = spec_alpha_from_tokens(tokens, k, keys[1], &base, d);
		p->given = "draft_acceptance_rate";
		snprintf(p->given_text, sizeof(p->given_text), "vLLM draft acceptance rate %.4g at k "
			 "%d (%s) = %.4g tokens per verify step -> per-token %.4f",
			 p->draft_acceptance_rate, (int)k, keys[1], tokens, base);
		break;
	case 2:
		if (p->mean_acceptance_length > (double)k + 1)
			return diag_set(d, DIAG_EINPUT, "%s: %s %.6g (expected 1 to k + 1 = %d: the "
					"bonus token and at most k accepted)", sc->source, keys[2],
					p->mean_acceptance_length, (int)k + 1);
		rc = spec_alpha_from_tokens(p->mean_acceptance_length, k, keys[2], &base, d);
		p->given = "mean_acceptance_length";
		snprintf(p->given_text, sizeof(p->given_text), "vLLM mean acceptance length %.4g at "
			 "k %d (%s) -> per-token %.4f", p->mean_acceptance_length, (int)k, keys[2],
			 base);
		break;
	case 3:
		if (p->position_rates.n != k)
			return diag_set(d, DIAG_EINPUT, "%s: %s has %d rates (expected one per draft "
					"position: speculative.k is %d)", sc->source, keys[3],
					(int)p->position_rates.n, (int)k);
		tokens = 1;
		for (int32_t i = 0; i < k; i++) {
			if (i > 0 && p->position_rates.v[i] > p->position_rates.v[i - 1])
				return diag_set(d, DIAG_EINPUT, "%s: %s[%d] %.4g is above the rate "
						"before it (expected rates that do not rise: a "
						"token is accepted only after every one before "
						"it)", sc->source, keys[3], (int)i,
						p->position_rates.v[i]);
			tokens += p->position_rates.v[i];
		}
		rc = spec_alpha_from_tokens(tokens, k, keys[3], &base, d);
		p->given = "position_acceptance_rates";
		snprintf(p->given_text, sizeof(p->given_text), "vLLM per-position rates at k %d "
			 "(%s): mean acceptance length %.4g -> per-token %.4f", (int)k, keys[3],
			 tokens, base);
		break;
	default:
		p->given = "default";
		snprintf(p->given_text, sizeof(p->given_text), "per-token rate %.4g (default; not a "
			 "measurement: set one of the acceptance keys)", base);
		break;
	}
	if (rc != 0)
		return rc;
	const struct spec_default_acceptance *def = given < 0 ? spec_default_acceptance(m) : NULL;
	for (int i = 0; i < OUT_KINDS; i++) {
		double a = base;
		if (def && (rc = spec_alpha_from_tokens(def->mean_length[i], def->k_measured,
							 "speculative.method", &a, d)) != 0)
			return rc;
		p->alpha[i] = p->acceptance_kind[i] >= 0 ? p->acceptance_kind[i] : a;
	}
	if (def) {
		p->given = "method_default";
		snprintf(p->given_text, sizeof(p->given_text), "%s's published figure: per-token "
			 "%.4f (%s)", spec_method_name(m), p->alpha[OUT_KIND_UNKNOWN], def->source);
	}
	/* rates given by output kind come first: the text above is only the
	 * other kinds' */
	char kinds[160] = "";
	size_t at = 0;
	for (int i = 0; i < OUT_KINDS && at < sizeof(kinds); i++)
		if (p->acceptance_kind[i] >= 0) {
			int w = snprintf(kinds + at, sizeof(kinds) - at, "%s%s %.4g", at ? ", " : "",
					 out_kind_name(i), p->acceptance_kind[i]);
			at += w > 0 ? (size_t)w : 0;
		}
	if (kinds[0]) {
		/* the other kinds' text, bounded so that the whole fits */
		char rest[sizeof(p->given_text) - sizeof(kinds) - 100];
		snprintf(rest, sizeof(rest), "%.*s", (int)sizeof(rest) - 1, p->given_text);
		snprintf(p->given_text, sizeof(p->given_text), "per-token rate by output kind, %s "
			 "(speculative.acceptance_<kind>); the other kinds: %s", kinds, rest);
	}
	return 0;
}

int scenario_load(struct scenario *sc, const char *path, const char *const *sets, int n_sets,
		  struct diag *d)
{
	memset(sc, 0, sizeof(*sc));
	sc->offload_gpu_expert_fraction = 1.0;
	sc->reserve_full_prompt = -1;
	sc->flash_attention = true;
	sc->context_policy = CONTEXT_COMPACT;
	sc->kv_tiers.shared_by = 1;
	/* how the host tier fills: write-through, as both LMCache (store on
	 * every prefill, lmcache/integration/vllm/vllm_v1_adapter.py at
	 * 0043281d, read 2026-12-06) and vLLM's OffloadingConnector (blocks
	 * offloaded once computed, vLLM 0.11.0, October 2025) do */
	sc->kv_tiers.mode = SIM_TIER_WRITE_THROUGH;
	/* LMCache's chunk_size default, 256 tokens, and its save_unfull_chunk
	 * default, false (lmcache/v1/config.py, LMCache/LMCache at 000620e3,
	 * read 2026-12-06) */
	sc->kv_tiers.chunk_tokens = 256;
	sc->kv_tiers.save_unfull_chunk = false;
	/* vLLM's OffloadingConnector copies on its own CUDA streams, overlapping
	 * compute (vLLM 0.11.0, blog.vllm.ai "Inside vLLM's New KV Offloading
	 * Connector", read 2026-12-06) */
	sc->kv_tiers.async_store = true;
	snprintf(sc->pd.decider, sizeof(sc->pd.decider), "uncached");
	sc->pd.non_cached_tokens = SCENARIO_DEFAULT_PD_NON_CACHED;
	snprintf(sc->pd.link, sizeof(sc->pd.link), "%s", SCENARIO_DEFAULT_PD_LINK);
	sc->kv_retention.mode = SCENARIO_RETAIN_OFF;
	sc->scheduling.class_main = SCENARIO_DEFAULT_CLASS_MAIN;
	sc->scheduling.class_subagent = SCENARIO_DEFAULT_CLASS_SUBAGENT;
	sc->scheduling.class_batch = SCENARIO_DEFAULT_CLASS_BATCH;
	sc->kv_retention.ttl_s = SCENARIO_DEFAULT_RETAIN_TTL_S;
	sc->kv_retention.max_fraction = SCENARIO_DEFAULT_RETAIN_MAX_FRACTION;
	router_config_default(&sc->router);
	sc->slo_attainment = SCENARIO_DEFAULT_SLO_ATTAINMENT;
	double *costs[] = {&sc->cost.acceptance_rate, &sc->cost.turns_factor,
			   &sc->cost.periods_per_month, &sc->cost.amortisation_months,
			   &sc->cost.resale_fraction, &sc->cost.hosting_usd_month,
			   &sc->cost.operator_usd_month, &sc->cost.operator_base_usd_month,
			   &sc->cost.operator_per_system_usd_month, &sc->cost.workdays_per_year,
			   &sc->cost.electricity_usd_kwh,
			   &sc->cost.pue, &sc->cost.billing_granularity_s, &sc->cost.min_billing_s,
			   &sc->cost.min_replicas, &sc->cost.api_cache_ttl_s,
			   &sc->cost.api_acceptance_rate, &sc->cost.horizon_months,
			   &sc->cost.discount_rate};
	for (size_t i = 0; i < sizeof(costs) / sizeof(costs[0]); i++)
		*costs[i] = -1;
	sc->provision_s = SCENARIO_DEFAULT_PROVISION_S;
	sc->storage_gbs = SCENARIO_DEFAULT_STORAGE_GBS;
	sc->image_pull_gbs = SCENARIO_DEFAULT_IMAGE_PULL_GBS;
	sc->keep_alive_s = SCENARIO_KEEP_ALIVE_UNSET;
	sc->autoscale_metric = AUTOSCALE_INFLIGHT;
	sc->autoscale_min = 1;
	sc->autoscale_interval_s = SCENARIO_DEFAULT_AUTOSCALE_INTERVAL_S;
	sc->autoscale_cooldown_s = SCENARIO_DEFAULT_AUTOSCALE_COOLDOWN_S;
	sc->autoscale_policy = SCENARIO_DEFAULT_AUTOSCALE_POLICY;
	scenario_hpa_default(&sc->hpa);
	sc->faults_repair_h = SCENARIO_DEFAULT_REPAIR_H;
	sc->faults_max_retries = FAULT_DEFAULT_MAX_RETRIES;
	snprintf(sc->faults_detection, sizeof(sc->faults_detection), "probe");
	sc->faults_probe_period_s = SCENARIO_DEFAULT_PROBE_PERIOD_S;
	sc->faults_probe_failure_threshold = SCENARIO_DEFAULT_PROBE_FAILURE_THRESHOLD;
	sc->faults_probe_timeout_s = SCENARIO_DEFAULT_PROBE_TIMEOUT_S;
	sc->faults_client_timeout_s = SCENARIO_DEFAULT_CLIENT_TIMEOUT_S;
	sc->faults_retry_initial_s = CLIENT_BACKOFF_INITIAL_S;
	sc->faults_retry_max_s = CLIENT_BACKOFF_MAX_S;
	snprintf(sc->spec.method, sizeof(sc->spec.method), "off");
	sc->spec.k = SCENARIO_DEFAULT_SPEC_K;
	sc->spec.acceptance_rate = sc->spec.draft_acceptance_rate = -1;
	sc->spec.mean_acceptance_length = -1;
	for (int i = 0; i < OUT_KINDS; i++)
		sc->spec.acceptance_kind[i] = -1;
	/* Anything the file leaves out keeps the built-in default. */
	int rc = parse_text(sc, scenario_default_json, "(built-in default scenario)", d);
	if (rc != 0)
		return rc;
	snprintf(sc->source, sizeof(sc->source), "(built-in default)");
	if (path) {
		char *text = textfile_read(path, 16u << 20, "a scenario file", d);
		if (!text)
			return d->code;
		rc = parse_text(sc, text, path, d);
		free(text);
		if (rc != 0)
			return rc;
		snprintf(sc->source, sizeof(sc->source), "%s", path);
	}
	for (int i = 0; i < n_sets; i++)
		if ((rc = apply_set(sc, sets[i], d)) != 0)
			return rc;
	/* keys that must agree with each other, once all are read */
	if ((rc = resolve_faults(sc, d)) != 0)
		return rc;
	if ((rc = check_routes(sc, d)) != 0)
		return rc;
	if (strcmp(sc->faults_detection, "probe") != 0 && strcmp(sc->faults_detection, "instant") != 0)
		return diag_set(d, DIAG_EINPUT, "%s: faults.detection '%s' (expected probe or instant)",
				sc->source, sc->faults_detection);
	const char *m = sc->spec.method;
	enum spec_method sm;
	if (!spec_method_parse(m, &sm))
		return diag_set(d, DIAG_EINPUT, "%s: speculative.method '%s' (expected off, draft, "
				"mtp, eagle3, ngram or suffix)", sc->source, m);
	if (strcmp(m, "draft") == 0 && !sc->spec.draft_model[0])
		return diag_set(d, DIAG_EINPUT, "%s: speculative.method draft needs "
				"speculative.draft_model (expected a model id from `agentcap "
				"catalog`)", sc->source);
	if ((rc = resolve_acceptance(sc, sm, d)) != 0)
		return rc;
	int32_t total = scenario_replicas(sc);
	int32_t max = sc->autoscale_max ? sc->autoscale_max : total;
	if (sc->autoscale && (max > total || sc->autoscale_min > max))
		return diag_set(d, DIAG_EINPUT,
				"%s: autoscale: min_replicas %d, max_replicas %d, replicas %d (expected min_replicas <= max_replicas <= replicas%s)",
				sc->source, (int)sc->autoscale_min, (int)max, (int)total,
				sc->n_pools ? ", the pools' replicas together" : "");
	if (sc->cost.trace_start_utc[0] &&
	    !imp_parse_time(sc->cost.trace_start_utc, &sc->cost.trace_start_ns))
		return diag_set(d, DIAG_EINPUT,
				"%s: cost.trace_start_utc: '%s' (expected a date and time such as "
				"2026-12-07T08:00:00Z; no zone means UTC)",
				sc->source, sc->cost.trace_start_utc);
	if (sc->scheduling.policy == SCENARIO_SCHED_FCFS && !sc->report_groups &&
	    (sc->scheduling.class_main != SCENARIO_DEFAULT_CLASS_MAIN ||
	     sc->scheduling.class_subagent != SCENARIO_DEFAULT_CLASS_SUBAGENT ||
	     sc->scheduling.class_batch != SCENARIO_DEFAULT_CLASS_BATCH))
		return diag_set(d, DIAG_EINPUT,
				"%s: scheduling.classes: the fcfs policy does not use them (expected "
				"scheduling.policy priority, report.by_class_and_team true, or the "
				"keys left out)", sc->source);
	if (sc->kv_retention.mode == SCENARIO_RETAIN_OFF &&
	    (sc->kv_retention.ttl_s != SCENARIO_DEFAULT_RETAIN_TTL_S ||
	     sc->kv_retention.max_fraction != SCENARIO_DEFAULT_RETAIN_MAX_FRACTION))
		return diag_set(d, DIAG_EINPUT,
				"%s: %s: retention is off and does not use it (expected "
				"kv_retention.mode ttl, or the key left out)",
				sc->source,
				sc->kv_retention.ttl_s != SCENARIO_DEFAULT_RETAIN_TTL_S
					? "kv_retention.ttl_s" : "kv_retention.max_fraction");
	if ((rc = check_pd(sc, d)) != 0)
		return rc;
	const char *stray = autoscale_stray_key(sc);
	if (stray) {
		const char *owner = strcmp(stray, "autoscale.polling_interval_s") == 0 ||
					    strcmp(stray, "autoscale.activation_target") == 0
				    ? "keda"
				    : strcmp(stray, "autoscale.cooldown_s") == 0 ? "keda or cooldown"
										 : "hpa or keda";
		return diag_set(d, DIAG_EINPUT,
				"%s: %s: the %s policy does not use it (expected autoscale.policy %s, "
				"or the key left out)",
				sc->source, stray, autoscale_policy_name(sc->autoscale_policy), owner);
	}
	return 0;
}

/* f = v when the scenario sets v (>= 0), sourced to the scenario. */
static void cost_set(struct cost_fig *f, double v, const struct scenario *sc, const char *key)
{
	if (v >= 0)
		cost_fig_set(f, v, "scenario %s: cost.%s", sc->source, key);
}

/* The operator keys of sc over o: the whole figure, the base, and a
 * per-system share that no longer scales with the GPUs of a system. */
static void operator_set(struct cost_operator *o, const struct scenario *sc)
{
	const struct scenario_cost *c = &sc->cost;
	cost_set(&o->usd_month, c->operator_usd_month, sc, "operator_usd_month");
	cost_set(&o->base_usd_month, c->operator_base_usd_month, sc, "operator_base_usd_month");
	if (c->operator_per_system_usd_month >= 0) {
		cost_set(&o->system_usd_month, c->operator_per_system_usd_month, sc,
			 "operator_per_system_usd_month");
		cost_fig_set(&o->system_gpus, 0, "scenario %s: cost.operator_per_system_usd_month "
			     "is per system, whatever its GPUs", sc->source);
	}
}

double scenario_workdays_per_year(const struct scenario *sc, char *why, size_t why_size)
{
	if (sc && sc->cost.workdays_per_year >= 0) {
		if (why)
			snprintf(why, why_size, "%.6g working days a year (scenario %s: "
				 "cost.workdays_per_year)", sc->cost.workdays_per_year, sc->source);
		return sc->cost.workdays_per_year;
	}
	if (why)
		snprintf(why, why_size, "%.6g working days a year (weekdays, no holidays: the "
			 "default; cost.workdays_per_year sets a calendar, docs/cost.md)",
			 COST_WORKDAYS_PER_YEAR);
	return COST_WORKDAYS_PER_YEAR;
}

void scenario_cost_apply(const struct scenario *sc, struct cost_purchase *p,
			 struct cost_dedicated *dp, struct cost_elastic *e, struct cost_task *t)
{
	const struct scenario_cost *c = &sc->cost;
	if (p) {
		cost_set(&p->amortisation_months, c->amortisation_months, sc, "amortisation_months");
		cost_set(&p->resale_fraction, c->resale_fraction, sc, "resale_fraction");
		cost_set(&p->hosting_usd_month, c->hosting_usd_month, sc, "hosting_usd_month");
		operator_set(&p->op, sc);
		cost_set(&p->electricity_usd_kwh, c->electricity_usd_kwh, sc, "electricity_usd_kwh");
		cost_set(&p->pue, c->pue, sc, "pue");
	}
	if (dp)
		operator_set(&dp->op, sc);
	if (e) {
		operator_set(&e->op, sc);
		cost_set(&e->billing_granularity_s, c->billing_granularity_s, sc,
			 "billing_granularity_s");
		cost_set(&e->min_billing_s, c->min_billing_s, sc, "min_billing_s");
		cost_set(&e->min_replicas, c->min_replicas, sc, "min_replicas");
	}
	if (t) {
		cost_set(&t->acceptance_rate, c->acceptance_rate, sc, "acceptance_rate");
		cost_set(&t->turns_factor, c->turns_factor, sc, "turns_factor");
	}
}
