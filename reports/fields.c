/* SPDX-License-Identifier: Apache-2.0
 * fields: the replay report's figures, one row each (see fields.h). */
#include "reports/fields.h"

#include "reports/output.h"

#include <stddef.h>
#include <string.h>

#define M(f) true, offsetof(struct report_meta, f), NULL
#define S(f) false, offsetof(struct metrics_summary, f), NULL
#define GET(fn) false, 0, fn

/* Cached prompt tokens found in the GPU cache itself. */
static double cached_gpu(const struct report_meta *m, const struct metrics_summary *s)
{
	(void)m;
	return (double)(s->cached_prompt_tokens - s->tier_cached_tokens[0] -
			s->tier_cached_tokens[1]);
}

static const struct report_field FIELDS[RF_N_FIELDS] = {
	[RF_VERSION] = {"agentcap_version", "Version:", "", RT_STR, RS_PLAIN, M(version)},
	[RF_TRACE_PATH] = {"trace_path", "Trace:", "", RT_STR, RS_PLAIN, M(trace_path)},
	[RF_TRACE_FORMAT] = {"trace_format", "Trace format:", "", RT_STR, RS_PLAIN, M(trace_format)},
	[RF_SCENARIO_NAME] = {"scenario_name", "Scenario:", "", RT_STR, RS_PLAIN, M(scenario_name)},
	[RF_SCENARIO_PATH] = {"scenario_path", "Scenario file:", "", RT_STR, RS_PLAIN,
			      M(scenario_path)},
	[RF_MODEL] = {"model_id", "Model:", "", RT_STR, RS_PLAIN, M(model_id)},
	[RF_HARDWARE] = {"hardware_id", "Hardware:", "", RT_STR, RS_PLAIN, M(hardware_id)},
	[RF_WEIGHT_FORMAT] = {"weight_format", "Weight format:", "", RT_STR, RS_PLAIN,
			      M(weight_format)},
	[RF_KV_DTYPE] = {"kv_cache_dtype", "KV cache dtype:", "", RT_STR, RS_PLAIN, M(kv_dtype)},
	[RF_ENGINE_PROFILE] = {"engine_profile", "Engine profile:", "", RT_STR, RS_PLAIN,
			       M(engine.profile)},
	[RF_TP] = {"tensor_parallel_size", "Tensor parallel size:", "GPUs", RT_I32, RS_PLAIN, M(tp)},
	[RF_PP] = {"pipeline_parallel_size", "Pipeline parallel size:", "stages", RT_I32, RS_PLAIN,
		   M(engine.pp)},
	[RF_EP] = {"expert_parallel_size", "Expert parallel size:", "GPUs", RT_I32, RS_PLAIN, M(ep)},
	[RF_GPU_MEMORY_UTILIZATION] = {"gpu_memory_utilization", "GPU memory utilization:",
				       "fraction", RT_DBL, RS_PLAIN,
				       M(engine.gpu_memory_utilization)},
	[RF_MAX_MODEL_LEN] = {"max_model_len", "Max model len:", "tokens", RT_I64, RS_PLAIN,
			      M(engine.max_model_len)},
	[RF_RESERVE_FULL_PROMPT] = {"reserve_full_prompt", "Admission:", "", RT_BOOL, RS_ADMISSION,
				    M(engine.reserve_full_prompt)},
	[RF_CONTEXT_POLICY] = {"context_policy", "Context policy:", "", RT_STR, RS_PLAIN,
			       M(context.policy)},
	[RF_SEED] = {"seed", "Seed:", "", RT_U64, RS_PLAIN, M(seed)},
	[RF_KV_CAPACITY] = {"kv_capacity_tokens", "KV cache capacity (tokens/replica):", "tokens",
			    RT_I64, RS_PLAIN, M(kv_capacity_tokens)},
	[RF_BLOCK_SIZE] = {"block_size", "Block size (tokens):", "tokens", RT_I32, RS_PLAIN,
			   M(block_size)},
	[RF_MAX_NUM_SEQS] = {"max_num_seqs", "Max num seqs:", "sequences", RT_I32, RS_PLAIN,
			     M(max_num_seqs)},
	[RF_MAX_NUM_BATCHED_TOKENS] = {"max_num_batched_tokens", "Max num batched tokens:",
				       "tokens", RT_I64, RS_PLAIN, M(max_num_batched_tokens)},
	[RF_PREFIX_CACHING] = {"enable_prefix_caching", "Prefix caching:", "", RT_BOOL, RS_ONOFF,
			       M(prefix_caching)},
	[RF_CHUNKED_PREFILL] = {"enable_chunked_prefill", "Chunked prefill:", "", RT_BOOL, RS_ONOFF,
				M(chunked_prefill)},
	[RF_SKIPPED_LINES] = {"skipped_bad_lines", "Skipped bad trace lines:", "lines", RT_I64,
			      RS_PLAIN, M(skipped_bad_lines)},
	[RF_EVENTS] = {"events_processed", "Events processed:", "events", RT_I64, RS_PLAIN,
		       M(events_processed)},
	[RF_ENGINE_STEPS] = {"engine_steps", "Engine steps:", "steps", RT_I64, RS_PLAIN,
			     M(engine_steps)},
	[RF_SCALED_ENGINEERS] = {"scaled_engineers", NULL, "engineers", RT_I64, RS_PLAIN,
				 M(scaled_engineers)},
	[RF_SCALED_DAYS] = {"scaled_days", NULL, "days", RT_I64, RS_PLAIN, M(scaled_days)},
	[RF_SLO_TTFT] = {"slo_ttft_ms", "SLO TTFT (ms):", "ms", RT_DBL, RS_NULL_ZERO,
			 M(slo_ttft_ms)},
	[RF_SLO_TPOT] = {"slo_tpot_ms", "SLO TPOT (ms):", "ms", RT_DBL, RS_NULL_ZERO,
			 M(slo_tpot_ms)},
	[RF_SLO_TARGET] = {"slo_attainment_target", "SLO attainment target (%):", "fraction",
			   RT_DBL, RS_PERCENT, M(slo_attainment_target)},

	[RF_COMPLETED] = {"completed", "Successful requests:", "requests", RT_I64, RS_PLAIN,
			  S(completed)},
	[RF_FAILED] = {"failed", "Failed requests:", "requests", RT_I64, RS_PLAIN, S(failed)},
	[RF_DURATION] = {"duration_s", "Benchmark duration (s):", "s", RT_DBL, RS_DURATION,
			 S(duration_s)},
	[RF_REQUEST_THROUGHPUT] = {"request_throughput", "Request throughput (req/s):", "req/s",
				   RT_DBL, RS_PLAIN, S(request_throughput)},
	[RF_OUTPUT_THROUGHPUT] = {"output_throughput", "Output token throughput (tok/s):", "tok/s",
				  RT_DBL, RS_PLAIN, S(output_throughput)},
	[RF_TOTAL_THROUGHPUT] = {"total_token_throughput", "Total Token throughput (tok/s):",
				 "tok/s", RT_DBL, RS_PLAIN, S(total_token_throughput)},
	[RF_GOOD_REQUESTS] = {"good_requests", NULL, "requests", RT_I64, RS_PLAIN,
			      S(good_requests)},
	[RF_GOODPUT] = {"request_goodput", "Request goodput (req/s):", "req/s", RT_DBL, RS_PLAIN,
			S(request_goodput)},
	[RF_SLO_ATTAINMENT] = {"slo_attainment", "SLO attainment (%):", "fraction", RT_DBL,
			       RS_PERCENT, S(slo_attainment)},

	[RF_PROMPT_TOKENS] = {"prompt_tokens", "Total input tokens:", "tokens", RT_I64, RS_PLAIN,
			      S(prompt_tokens)},
	[RF_OUTPUT_TOKENS] = {"output_tokens", "Total generated tokens:", "tokens", RT_I64,
			      RS_PLAIN, S(output_tokens)},
	[RF_CACHED_TOKENS] = {"cached_prompt_tokens", "Cached prompt tokens:", "tokens", RT_I64,
			      RS_PLAIN, S(cached_prompt_tokens)},
	[RF_COMPUTED_PREFILL] = {"computed_prefill_tokens", "Prefill tokens computed:", "tokens",
				 RT_I64, RS_PLAIN, S(computed_prefill_tokens)},
	[RF_INFLIGHT_MISS] = {"inflight_miss_tokens", "In-flight miss tokens:", "tokens", RT_I64,
			      RS_PLAIN, S(inflight_miss_tokens)},
	[RF_CACHED_GPU] = {"cached_tokens_gpu", "Cached tokens from GPU:", "tokens", RT_I64,
			   RS_PLAIN, GET(cached_gpu)},
	[RF_CACHED_HOST] = {"cached_tokens_host", "Cached tokens from host tier:", "tokens", RT_I64,
			    RS_PLAIN, S(tier_cached_tokens[0])},
	[RF_CACHED_DISK] = {"cached_tokens_disk", "Cached tokens from disk tier:", "tokens", RT_I64,
			    RS_PLAIN, S(tier_cached_tokens[1])},
	[RF_TIER_LOADED] = {"kv_tier_loaded_blocks", "KV blocks loaded from tiers:", "blocks",
			    RT_I64, RS_PLAIN, M(tiers.loaded_blocks)},
	[RF_TIER_LOAD_S] = {"kv_tier_load_s", "KV tier load time (s):", "s", RT_DBL, RS_PLAIN,
			    M(tiers.load_s)},
	[RF_TIER_HOST_GB] = {"kv_tier_host_gb", NULL, "GB", RT_DBL, RS_PLAIN, M(tiers.host_gb)},
	[RF_TIER_HOST_GBS] = {"kv_tier_host_gbs", NULL, "GB/s", RT_DBL, RS_PLAIN, M(tiers.host_gbs)},
	[RF_TIER_DISK_GB] = {"kv_tier_disk_gb", NULL, "GB", RT_DBL, RS_PLAIN, M(tiers.disk_gb)},
	[RF_TIER_DISK_GBS] = {"kv_tier_disk_gbs", NULL, "GB/s", RT_DBL, RS_PLAIN, M(tiers.disk_gbs)},
	[RF_TIER_SHARED_BY] = {"kv_tier_shared_by", NULL, "replicas", RT_I32, RS_PLAIN,
			       M(tiers.shared_by)},
	[RF_TIER_MODE] = {"kv_tier_mode", "KV tier mode:", "", RT_STR, RS_PLAIN, M(tiers.mode)},
	[RF_TIER_CHUNK_TOKENS] = {"kv_tier_chunk_tokens", NULL, "tokens", RT_I32, RS_PLAIN,
				  M(tiers.chunk_tokens)},
	[RF_TIER_ASYNC_STORE] = {"kv_tier_async_store", NULL, "", RT_BOOL, RS_ONOFF,
				 M(tiers.async_store)},
	[RF_TIER_STORED_BLOCKS] = {"kv_tier_stored_blocks", "KV blocks stored to host tier:",
				   "blocks", RT_I64, RS_PLAIN, M(tiers.stored_blocks)},
	[RF_TIER_STORED_CHUNKS] = {"kv_tier_stored_chunks", "KV chunks stored to host tier:",
				   "chunks", RT_I64, RS_PLAIN, M(tiers.stored_chunks)},
	[RF_TIER_STORED_GB] = {"kv_tier_stored_gb", "KV stored to host tier (GB):", "GB", RT_DBL,
			       RS_PLAIN, M(tiers.stored_gb)},
	[RF_TIER_STORE_S] = {"kv_tier_store_s", "KV tier store time (s):", "s", RT_DBL, RS_PLAIN,
			     M(tiers.store_s)},
	[RF_TIER_STALL_S] = {"kv_tier_store_stall_s", "Step stall on KV stores (s):", "s", RT_DBL,
			     RS_PLAIN, M(tiers.stall_s)},
	[RF_TIER_LOAD_WAIT_S] = {"kv_tier_load_wait_s", "KV loads waiting on stores (s):", "s",
				 RT_DBL, RS_PLAIN, M(tiers.load_wait_s)},
	[RF_RETAIN_TTL] = {"kv_retention_ttl_s", "KV retention TTL (s):", "s", RT_DBL, RS_PLAIN,
			   M(retention.ttl_s)},
	[RF_RETAIN_MAX_FRACTION] = {"kv_retention_max_fraction", "KV retention cap (%):", "fraction",
				    RT_DBL, RS_PERCENT, M(retention.max_fraction)},
	[RF_RETAIN_PEAK_BLOCKS] = {"kv_retained_blocks_peak", "KV blocks retained, peak:", "blocks",
				   RT_I64, RS_PLAIN, M(retention.peak_blocks)},
	[RF_RETAIN_PEAK_SHARE] = {"kv_retained_share_peak", "KV cache held retained, peak (%):",
				  "fraction", RT_DBL, RS_PERCENT, M(retention.peak_share)},
	[RF_RETAIN_MEAN_BLOCKS] = {"kv_retained_blocks_mean", "KV blocks retained, mean:", "blocks",
				   RT_DBL, RS_PLAIN, M(retention.mean_blocks)},
	[RF_RETAIN_HIT_TOKENS] = {"kv_retained_hit_tokens", "Prefix hits on retained blocks:",
				  "tokens", RT_I64, RS_PLAIN, M(retention.hit_tokens)},
	[RF_RETAIN_AVOIDED] = {"kv_retention_evictions_avoided", "Evictions avoided by retention:",
			       "blocks", RT_I64, RS_PLAIN, M(retention.avoided)},
	[RF_RETAIN_FORCED] = {"kv_retained_evicted_blocks", "Retained blocks evicted (none free):",
			      "blocks", RT_I64, RS_PLAIN, M(retention.forced)},
	[RF_RETAIN_CAPPED] = {"kv_retained_capped_blocks", "Retained blocks released by cap:",
			      "blocks", RT_I64, RS_PLAIN, M(retention.capped)},
	[RF_PD_LINK] = {"pd_link", "Prefill/decode KV link:", "id", RT_STR, RS_PLAIN, M(pd.link)},
	[RF_PD_DECIDER] = {"pd_decider", "Prefill/decode decider:", "name", RT_STR, RS_PLAIN,
			   M(pd.decider)},
	[RF_PD_THRESHOLD] = {"pd_non_cached_tokens", "Decider threshold (uncached tokens):",
			     "tokens", RT_I64, RS_PLAIN, M(pd.threshold)},
	[RF_PD_REMOTE] = {"pd_prefilled_remote", "Calls prefilled on the prefill pool:", "calls",
			  RT_I64, RS_PLAIN, M(pd.remote)},
	[RF_PD_LOCAL] = {"pd_prefilled_local", "Calls prefilled on their decode replica:", "calls",
			 RT_I64, RS_PLAIN, M(pd.local)},
	[RF_PD_BLOCKS] = {"pd_kv_blocks_sent", "KV blocks sent to decode replicas:", "blocks",
			  RT_I64, RS_PLAIN, M(pd.blocks)},
	[RF_PD_GB] = {"pd_kv_sent_gb", "KV sent to decode replicas (GB):", "GB", RT_DBL, RS_PLAIN,
		      M(pd.gb)},
	[RF_PD_WAIT_MEAN_MS] = {"pd_transfer_wait_ms_mean", "KV transfer wait per call, mean (ms):",
				"ms", RT_DBL, RS_PLAIN, M(pd.wait_mean_ms)},
	[RF_PD_WAIT_MAX_MS] = {"pd_transfer_wait_ms_max", "KV transfer wait per call, max (ms):",
			       "ms", RT_DBL, RS_PLAIN, M(pd.wait_max_ms)},
	[RF_PD_WIRE_S] = {"pd_transfer_s", "KV transfer time, all calls (s):", "s", RT_DBL,
			  RS_PLAIN, M(pd.transfer_s)},
	[RF_HIT_RATE] = {"prefix_cache_hit_rate", "Prefix cache hit rate (%):", "fraction", RT_DBL,
			 RS_PERCENT, S(prefix_cache_hit_rate)},
	[RF_PREEMPTIONS] = {"preemptions", "Preemptions:", "preemptions", RT_I64, RS_PLAIN,
			    S(preemptions)},
	[RF_EVICTED] = {"kv_evicted_blocks", "KV blocks evicted:", "blocks", RT_I64, RS_PLAIN,
			M(kv_evicted_blocks)},

	[RF_COMPACTED] = {"calls_compacted", "Calls compacted:", "calls", RT_I64, RS_PLAIN,
			  M(context.compacted)},
	[RF_TRUNCATED] = {"calls_truncated", "Calls truncated:", "calls", RT_I64, RS_PLAIN,
			  M(context.truncated)},
	[RF_TOO_LONG] = {"calls_over_max_model_len", "Calls over max_model_len:", "calls", RT_I64,
			 RS_PLAIN, M(context.too_long)},

	[RF_REPLICAS] = {"replicas", "Replicas:", "replicas", RT_I32, RS_PLAIN, S(replicas)},
	[RF_BUSY] = {"gpu_busy_fraction", "Time a step was running (%):", "fraction", RT_DBL,
		     RS_PERCENT, S(gpu_busy_fraction)},
	[RF_COMPUTE] = {"compute_fraction", "Compute, run average (% of peak):", "fraction", RT_DBL,
			RS_PERCENT, S(compute_fraction)},
	[RF_COMPUTE_BUSY] = {"compute_fraction_busy", "Compute, while running (% of peak):",
			     "fraction", RT_DBL, RS_PERCENT, S(compute_fraction_busy)},
	[RF_BANDWIDTH] = {"bandwidth_fraction", "Bandwidth, run average (% of peak):", "fraction",
			  RT_DBL, RS_PERCENT, S(bandwidth_fraction)},
	[RF_BANDWIDTH_BUSY] = {"bandwidth_fraction_busy", "Bandwidth, while running (% of peak):",
			       "fraction", RT_DBL, RS_PERCENT, S(bandwidth_fraction_busy)},
	[RF_BATCH_MEAN] = {"batch_seqs_mean", "Mean batch, while running (seqs):", "sequences",
			   RT_DBL, RS_PLAIN, S(batch_seqs_mean)},
	[RF_BATCH_OCCUPANCY] = {"batch_occupancy", "Mean batch (% of max_num_seqs):", "fraction",
				RT_DBL, RS_PERCENT, S(batch_occupancy)},
	[RF_BATCH_MAX] = {"batch_seqs_max", "Largest batch (seqs):", "sequences", RT_I32, RS_PLAIN,
			  S(batch_seqs_max)},
	[RF_KV_USE_MEAN] = {"kv_use_mean", "Mean KV in use, while running (%):", "fraction", RT_DBL,
			    RS_PERCENT, S(kv_use_mean)},
	[RF_KV_USE_PEAK] = {"kv_use_peak", "Peak KV in use (%):", "fraction", RT_DBL, RS_PERCENT,
			    S(kv_use_peak)},

	[RF_PEAK_WINDOW] = {"peak_window_s", NULL, "s", RT_DBL, RS_PLAIN, S(peak_window_s)},
	[RF_PEAK_OFFSET] = {"peak_offset_s", "Starts after the first call (s):", "s", RT_DBL,
			    RS_PLAIN, S(peak_offset_s)},
	[RF_PEAK_CALLS] = {"peak_calls", "Calls arriving:", "calls", RT_I64, RS_PLAIN,
			   S(peak_calls)},
	[RF_PEAK_COMPLETED] = {"peak_completed", NULL, "calls", RT_I64, RS_PLAIN,
			       S(peak_completed)},
	[RF_PEAK_FAILED] = {"peak_failed", "Failed calls:", "calls", RT_I64, RS_PLAIN,
			    S(peak_failed)},
	[RF_PEAK_TOKENS] = {"peak_tokens", "Prompt + output tokens:", "tokens", RT_I64, RS_PLAIN,
			    S(peak_tokens)},
	[RF_PEAK_SLO] = {"peak_slo_attainment", "SLO attainment (%):", "fraction", RT_DBL,
			 RS_PERCENT, S(peak_slo_attainment)},

	[RF_SESSIONS] = {"sessions", "Sessions:", "sessions", RT_I64, RS_PLAIN, S(sessions)},
	[RF_SESSION_CALLS] = {"session_calls_mean", "Calls per session (mean):", "calls", RT_DBL,
			      RS_PLAIN, S(session_calls_mean)},
	[RF_TASKS] = {"tasks", "Tasks:", "tasks", RT_I64, RS_PLAIN, S(tasks)},
	[RF_TASKS_ACCEPTED] = {"tasks_accepted", "Tasks accepted:", "tasks", RT_I64, RS_PLAIN,
			       S(tasks_accepted)},
	[RF_TASKS_KNOWN] = {"tasks_accept_known", "Tasks with known outcome:", "tasks", RT_I64,
			    RS_PLAIN, S(tasks_accept_known)},
};

#define ST(f) offsetof(struct metrics_summary, f)
static const struct report_stats_field STATS[RST_N] = {
	[RST_TTFT] = {"ttft", "Time to First Token", "TTFT", "ms", false, ST(ttft_ms)},
	[RST_TPOT] = {"tpot", "Time per Output Token (excl. 1st token)", "TPOT", "ms", false,
		      ST(tpot_ms)},
	[RST_ITL] = {"itl", "Inter-token Latency", "ITL", "ms", false, ST(itl_ms)},
	[RST_E2EL] = {"e2el", "End-to-end Latency", "E2EL", "ms", false, ST(e2el_ms)},
	[RST_PEAK_TTFT] = {"peak_ttft", NULL, "TTFT", "ms", false, ST(peak_ttft_ms)},
	[RST_PEAK_TPOT] = {"peak_tpot", NULL, "TPOT", "ms", false, ST(peak_tpot_ms)},
	[RST_SESSION] = {"session", "Session Makespan", "session makespan", "s", true,
			 ST(session_makespan_s)},
	[RST_TASK] = {"task", "Task Makespan", "task makespan", "s", true, ST(task_makespan_s)},
};

const struct report_field *report_field(enum report_field_id id)
{
	return (unsigned)id < RF_N_FIELDS ? &FIELDS[id] : NULL;
}

const struct report_stats_field *report_stats_field(enum report_stats_id id)
{
	return (unsigned)id < RST_N ? &STATS[id] : NULL;
}

const struct report_field *report_field_find(const char *key)
{
	for (int i = 0; i < RF_N_FIELDS; i++)
		if (strcmp(FIELDS[i].key, key) == 0)
			return &FIELDS[i];
	return NULL;
}

static const void *where(const struct report_field *f, const struct report_meta *m,
			 const struct metrics_summary *s)
{
	return (const char *)(f->meta ? (const void *)m : (const void *)s) + f->off;
}

int64_t report_field_int(const struct report_field *f, const struct report_meta *m,
			 const struct metrics_summary *s)
{
	if (f->get)
		return (int64_t)f->get(m, s);
	const void *p = where(f, m, s);
	switch (f->type) {
	case RT_I32: return *(const int32_t *)p;
	case RT_I64: return *(const int64_t *)p;
	case RT_U64: return (int64_t)*(const uint64_t *)p;
	case RT_BOOL: return *(const bool *)p;
	case RT_DBL: return (int64_t)*(const double *)p;
	case RT_STR: return 0;
	}
	return 0;
}

uint64_t report_field_uint(const struct report_field *f, const struct report_meta *m,
			   const struct metrics_summary *s)
{
	if (f->type == RT_U64 && !f->get)
		return *(const uint64_t *)where(f, m, s);
	return (uint64_t)report_field_int(f, m, s);
}

double report_field_num(const struct report_field *f, const struct report_meta *m,
			const struct metrics_summary *s)
{
	if (f->get)
		return f->get(m, s);
	if (f->type == RT_DBL)
		return *(const double *)where(f, m, s);
	if (f->type == RT_U64)
		return (double)report_field_uint(f, m, s);
	return (double)report_field_int(f, m, s);
}

const char *report_field_str(const struct report_field *f, const struct report_meta *m)
{
	if (f->type != RT_STR || !f->meta)
		return NULL;
	return *(const char *const *)((const char *)m + f->off);
}

const struct metrics_stats *report_stats_of(const struct report_stats_field *st,
					    const struct metrics_summary *s)
{
	return (const struct metrics_stats *)((const char *)s + st->off);
}
