/* SPDX-License-Identifier: Apache-2.0
 * engine: what a serving engine adds to the hardware's step time.
 *
 * Engines run the same matrices on the same hardware at different speeds:
 * vLLM and TensorRT-LLM capture a decoder step in CUDA graphs, llama.cpp
 * launches its kernels one by one (and on GeForce cards accumulates FP16
 * matmuls in FP16, at twice the FP32-accumulate rate), MLX dispatches Metal
 * kernels from Python.  Those differences are a small table of per-engine
 * parameters (models/catalog/engines.json, each figure with its source),
 * selected by the scenario or by a measurement's engine column, never per
 * measurement.  An engine may carry per-family overrides where its kernels
 * are known to behave differently on one hardware family (llama.cpp's
 * CUDA kernels on data-centre GPUs, its Metal backend on Apple silicon).
 *
 * struct engine_table is plain fixed-size data (no heap), so it can be
 * copied and shared read-only between threads.  Strings in it are
 * NUL-terminated and stay valid as long as the table.
 */
#ifndef MODELS_ENGINE_H
#define MODELS_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/diag.h"

#define ENGINE_MAX 16          /* engines in one table */
#define ENGINE_NAME_MAX 64     /* id, alias, match string, family prefix */
#define ENGINE_ALIASES_MAX 8
#define ENGINE_MATCH_MAX 8
#define ENGINE_OVERRIDES_MAX 12
#define ENGINE_FORMATS_MAX 24
#define ENGINE_RUNS_ON_MAX 8
#define ENGINE_SOURCE_MAX 512
#define ENGINE_FILE_MAX_BYTES (1u << 20)
#define ENGINE_GPU_TIERS_MAX 6 /* steps of defaults by device memory */
#define ENGINE_LAUNCH_MAX 64   /* launch.cli and launch.version */

/* One step of the defaults an engine picks from the device's memory at
 * start-up (vLLM's get_batch_defaults, SGLang's
 * _handle_gpu_memory_settings): from min_gib of device memory up, until the
 * next step.  A figure of 0 is not set by the step (the profile's own, or
 * max_num_seqs_large_gpu, holds). */
struct engine_gpu_tier {
	double min_gib;
	double prefill_chunk_tokens;   /* default tokens per step */
	double max_num_seqs;           /* default batch limit */
	double graph_max_seqs;         /* decode graphs up to this batch, TP < 4 */
	double graph_max_seqs_tp4;     /* the same at TP >= 4 (0: graph_max_seqs) */
};

/* The numbers an engine contributes (after family overrides). */
struct engine_params {
	double step_overhead_us;   /* host side, once per step: scheduler,
				      input preparation, sampling, graph launch */
	double layer_overhead_us;  /* per decoder layer per step: kernel launch
				      and small-kernel latency not hidden by
				      graphs */
	double compute_scale;      /* its GEMM kernels' share of the family's
				      achievable FLOP rate, (0, 1] */
	double attention_scale;    /* its attention kernels' share, (0, 1] */
	double attention_scale_without_fa; /* > 0: the share of its attention
				      when flash attention is off (the KQ
				      matrix written out and soft-maxed in
				      memory; llama.cpp -fa 0); 0: none */
	double bw_scale;           /* its GEMV / weight-streaming kernels' share
				      of the family's achievable bandwidth */
	double quant_bw_scale;     /* the same for weight-only quantized formats
				      its kernels dequantize on the fly (on top
				      of bw_scale) */
	double moe_scale;          /* its grouped expert GEMMs' share of its
				      dense GEMM rate (mixture of experts) */
	double moe_tile_rows;      /* > 0: its expert GEMMs are grouped GEMMs
				      that pad each expert's token rows to an
				      M tile of this many rows (models/moe.h);
				      0: no grouped-GEMM model (the expert
				      matmuls take moe_scale alone) */
	double moe_tile_rows_small; /* the same tile at a batch of at most as
				      many tokens as the layer has experts
				      (vLLM fused_moe's small-batch config);
				      0: moe_tile_rows */
	bool moe_tile_spans_batch; /* the expert tile's width is picked against
				      the step's whole token count, capped at
				      moe_tile_rows, not against the tokens an
				      expert gets (llama.cpp's MMQ on NVIDIA) */
	double moe_layer_overhead_us; /* extra per MoE layer per step: router,
				      top-k, gather and expert dispatch kernels */
	double moe_host_routing_us; /* per token and MoE layer, in a batched
				      step, for builds that route the experts'
				      tokens on the host (perf_opts.engine_build
				      at most moe_host_routing_last_build): the
				      GPU waits, whatever its size; 0: none */
	double moe_host_routing_last_build; /* the last build number that
				      does; 0: no build does */
	bool fp16_accumulate;      /* uses FP16-accumulate tensor rates where
				      the hardware has them */
	double max_num_seqs;       /* default batch limit (sequences) */
	double prefill_chunk_tokens; /* default tokens per step (vLLM
				      max_num_batched_tokens, llama.cpp
				      ubatch) */
	bool fp4_tensor_cores;     /* runs FP4 weight formats (MXFP4, NVFP4) on
				      the hardware's FP4 tensor cores where it
				      has them (TensorRT-LLM, vLLM); false: its
				      quantized-matmul kernels dequantize them
				      and multiply at the 16-bit path's rate,
				      as for every other quantized format
				      (llama.cpp MMQ, MLX).  Key
				      "fp4_tensor_cores", default true */
	bool fp8_kv_with_fp8_weights; /* FP8/FP4 checkpoints come with an FP8
				      KV cache (NVIDIA ModelOpt checkpoints
				      under TensorRT-LLM) */
	double reserve_full_prompt;  /* 1: a waiting request is admitted only
				      if KV blocks for its whole prompt can
				      be had (vLLM scheduler_reserve_full_isl);
				      0: its first chunk is enough */
	double max_num_seqs_large_gpu; /* default batch limit on a discrete GPU
				      of at least large_gpu_min_gib; 0 = the
				      same as max_num_seqs */
	double large_gpu_min_gib;    /* see max_num_seqs_large_gpu */
	/* Step floors (models/floors.h); 0 = no such floor. */
	double kernel_graph_us;    /* least time one small kernel holds the
				      stream when the step runs as a CUDA graph */
	double gemm_kernel_us;     /* least time of one GEMM-class kernel at a
				      small batch */
	double kernel_eager_us;    /* the same launched one by one (the host's
				      launch rate bounds it) */
	double graph_max_seqs;     /* decode-only batches up to this many
				      sequences run as captured graphs */
	bool host_overlap;         /* the host's per-step work overlaps the GPU
				      (step = max(host, GPU)) instead of
				      preceding it (step = host + GPU) */
	double expert_kernel_empty_us; /* > 0: the MoE GEMMs of weight-only
				      quantized formats launch one kernel per
				      expert (models/floors.h); the least time
				      of one whose expert got no token, inside
				      a CUDA graph */
	double expert_kernel_eager_us; /* one such launch outside a graph (a
				      C++ loop's launch rate) */
	double piecewise_layer_us; /* > 0: decode graphs are piecewise (vLLM V1
				      before full CUDA graphs): each attention
				      layer's attention runs eagerly between
				      graph pieces and costs this much more
				      than inside a full graph */
	/* Kernels bound per GPU core rather than by a peak (models/
	 * perf_model.c, core clock): engine-wide, never per family, since what
	 * sets them is the kernel and the GPU's cores (and clock).  0 = not
	 * modelled. */
	double quant_matmul_flops_per_core_clock; /* its quantized-weight
				      matmuls (llama.cpp MMQ) on hardware with
				      a matrix unit: FLOPs per GPU core (SM)
				      per clock cycle, in place of the tensor
				      rate */
	double matvec_bytes_per_core_clock; /* its weight-streaming matrix-
				      vector kernels move at most this many
				      weight bytes per GPU core per clock
				      cycle, whatever the memory's bandwidth */
	double quant_matvec_bytes_per_core_clock; /* the same for sub-byte
				      weights it unpacks on the fly */
	double spec_draft_overhead_us; /* speculative decoding: host and
				      bookkeeping cost per draft step (proposer
				      input preparation, rejection sampling,
				      synchronisation) beside the drafter's
				      own kernels (models/spec.h); 0 = none */
	/* How the engine sizes its KV cache at start-up (models/memory.h,
	 * struct mem_engine); engine-wide.  0 = not given: the memory model's
	 * engine-neutral defaults (an FP32 logits buffer, the family's
	 * runtime_reserve_gib, no CUDA-graph reserve). */
	double kv_sampler_bytes_per_logit; /* bytes live per logit at the peak of
				      its profiling step's dummy sampling of
				      max_num_seqs rows over the vocabulary */
	double kv_non_torch_gib;   /* memory outside PyTorch's allocator its
				      profile charges per GPU (cuBLAS and
				      NCCL workspaces) */
	double kv_non_torch_tp_gib; /* more of it per GPU when the model spans
				      several GPUs (communicator buffers) */
	double kv_cuda_graph_gib;  /* CUDA-graph memory charged before the KV
				      cache is sized; 0: graphs are captured
				      after it */
	/* Defaults by device memory ("by_gpu_memory", ascending min_gib); a
	 * family override's list replaces the engine's ([] drops it: vLLM
	 * keeps A100s on its small-GPU defaults).  gpu_tier_count -1 in an
	 * override: not overridden. */
	struct engine_gpu_tier gpu_tiers[ENGINE_GPU_TIERS_MAX];
	int gpu_tier_count;
};

/* Overrides for hardware families whose id starts with family_prefix.
 * A field set to a negative value is not overridden. */
struct engine_override {
	char family_prefix[ENGINE_NAME_MAX];
	struct engine_params p;
	int fp16_accumulate;       /* -1 not overridden, else 0/1 */
};

/* What an engine takes to start and to load a model (models/startup.h
 * turns these into a replica's start-up parts).  Figures an engine's entry
 * leaves out are 0; keep_alive_s is -1 for an engine that loads its model
 * at start and never unloads it. */
struct engine_startup {
	double image_gb;               /* its serving container image, compressed */
	double engine_start_s;         /* process start to the model's load:
					  imports, configuration, workers */
	double engine_start_per_gpu_s; /* more per GPU beyond the first: worker
					  processes, NCCL, the P2P check */
	double compile_cold_s;         /* torch.compile with an empty cache */
	double compile_cached_s;       /* ... with the cache of an earlier start */
	double cuda_graph_s_per_layer; /* CUDA-graph capture per decoder layer
					  on one GPU */
	double cuda_graph_tp_growth;   /* relative growth of the capture per
					  tensor-parallel GPU beyond the first */
	double warmup_s;               /* the first request's extra time */
	double keep_alive_s;           /* >= 0: the model loads on the first
					  call and unloads after this long idle
					  (Ollama); -1: loaded at start, never
					  unloaded */
};

struct engine_profile {
	char id[ENGINE_NAME_MAX];
	char name[ENGINE_NAME_MAX * 2];
	char aliases[ENGINE_ALIASES_MAX][ENGINE_NAME_MAX];
	size_t alias_count;
	char match[ENGINE_MATCH_MAX][ENGINE_NAME_MAX]; /* lower-case substrings
							  of free-text names */
	size_t match_count;
	struct engine_params p;
	struct engine_override overrides[ENGINE_OVERRIDES_MAX];
	size_t override_count;
	char formats[ENGINE_FORMATS_MAX][ENGINE_NAME_MAX]; /* weight formats it
					  loads: ids, or prefixes ending in '*';
					  none listed = any */
	size_t format_count;
	char mla_formats[ENGINE_FORMATS_MAX][ENGINE_NAME_MAX]; /* weight formats
					  it runs multi-head latent attention
					  with (others fall back to plain
					  multi-head attention); none listed =
					  all */
	size_t mla_format_count;
	char runs_on[ENGINE_RUNS_ON_MAX][ENGINE_NAME_MAX]; /* hardware family ids,
					  or prefixes ending in '*', it has a
					  GPU backend for; none listed = any */
	size_t runs_on_count;
	char runs_on_source[ENGINE_SOURCE_MAX];
	struct engine_startup startup;
	/* How the engine is started ("launch"; replay/launch.h): the command
	 * line family ("vllm", "vllm-v0", "sglang", "trtllm", "llama-server",
	 * "ollama", "mlx"; "" = none known), the release the profile stands
	 * for, and where that comes from. */
	char launch_cli[ENGINE_LAUNCH_MAX];
	char launch_version[ENGINE_LAUNCH_MAX];
	char launch_source[ENGINE_SOURCE_MAX];
};

struct engine_table {
	struct engine_profile engines[ENGINE_MAX];
	size_t count;
};

/* The engine used when none is named and the hardware says nothing else. */
#define ENGINE_DEFAULT_ID "vllm"

struct cat_hardware; /* models/catalog.h */

/* The engine a deployment on hw runs when the scenario names none:
 * llama.cpp on unified-memory machines (Apple silicon, DGX Spark, Ryzen AI
 * Max; what `fit` assumes), vLLM on discrete data-centre and workstation
 * GPUs.  A static id. */
const char *engine_default_for(const struct cat_hardware *hw);

/* The device memory an engine sees on hw, GiB: the catalogue's visible
 * memory, else its nominal GB; 0 on unified-memory machines, where the
 * engines' device-memory query fails or is not made (vLLM takes its
 * small-GPU branch there). */
double engine_device_gib(const struct cat_hardware *hw);

/* The step of p's gpu_tiers that applies on hw (the last whose min_gib
 * the device reaches); NULL when none does or hw is NULL.  Points into p. */
const struct engine_gpu_tier *engine_gpu_tier(const struct engine_params *p,
					      const struct cat_hardware *hw);

/* The engine's default max_num_seqs on hw (after family overrides in p):
 * its memory step's max_num_seqs when set, else max_num_seqs_large_gpu on
 * a discrete device of at least large_gpu_min_gib, else max_num_seqs. */
int engine_default_max_num_seqs(const struct engine_params *p, const struct cat_hardware *hw);

/* The engine's default max_num_batched_tokens (tokens one step computes)
 * on hw (NULL: whatever the device): its memory step's
 * prefill_chunk_tokens when set, else its prefill_chunk_tokens, or
 * ENGINE_DEFAULT_CHUNK when the profile gives none. */
#define ENGINE_DEFAULT_CHUNK 8192
int64_t engine_default_chunk(const struct engine_params *p, const struct cat_hardware *hw);

/* The largest decode batch the engine captures as a graph on hw at tensor
 * parallel size tp: its memory step's graph_max_seqs (graph_max_seqs_tp4 at
 * tp >= 4) when set, else p->graph_max_seqs. */
double engine_default_graph_max_seqs(const struct engine_params *p, const struct cat_hardware *hw,
				     int32_t tp);

/* An entry may name an earlier one in "inherits": it starts as a copy of
 * that engine (parameters, overrides, formats, hardware, start-up) without
 * its aliases and match strings, and its own keys replace what they name.
 * Load engines.json from `path`, or the copy built into the library when
 * path is NULL.  Returns 0, DIAG_EIO (unreadable file) or DIAG_EINPUT
 * ("engines.json: engines[2].compute_scale.value: expected a fraction in
 * (0, 1]"; invalid JSON as file:line:col).  *t is unspecified on failure. */
int engine_table_load(struct engine_table *t, const char *path, struct diag *d);

/* Same from text in memory (need not be NUL-terminated); `name` is used
 * in messages. */
int engine_table_parse(struct engine_table *t, const char *name, const char *text,
		       size_t len, struct diag *d);

/* The built-in engines.json text (static, NUL-terminated). */
const char *engine_embedded_json(void);

/* An engine by id or alias under the catalogue's rule (case-insensitive,
 * ' ', '-' and '_' alike); NULL when unknown. */
const struct engine_profile *engine_find(const struct engine_table *t, const char *name);

/* The engine a free-text description names ("llama.cpp 8e672ef (Metal)",
 * "SGLang v0.3.0 TP4"): the profile with the longest `match` string found
 * in the text (case-insensitive), ids and aliases included; NULL if none. */
const struct engine_profile *engine_match(const struct engine_table *t, const char *text);

/* The override of engine e that applies to hardware family family_id: the
 * one with the longest matching prefix; NULL when none does (or family_id
 * is NULL).  Valid as long as e. */
const struct engine_override *engine_override_for(const struct engine_profile *e,
						  const char *family_id);

/* Parameters of engine e on hardware family family_id (NULL: none), after
 * the override with the longest matching prefix. */
void engine_resolve(const struct engine_profile *e, const char *family_id,
		    struct engine_params *out);

/* True when engine e loads weight format `format_id` (exact id, or a
 * listed prefix ending in '*'; an engine listing no formats loads any). */
bool engine_supports_format(const struct engine_profile *e, const char *format_id);

/* True when engine e runs a multi-head latent attention model in weight
 * format `format_id` with its latent KV cache (mla_formats; none listed =
 * every format). */
bool engine_runs_mla(const struct engine_profile *e, const char *format_id);

/* True when engine e has a backend for hardware family `family_id` (exact
 * id, or a listed prefix ending in '*'; an engine listing none runs on any). */
bool engine_runs_on(const struct engine_profile *e, const char *family_id);

/* Comma-separated ids of the table, for messages. */
void engine_list_ids(const struct engine_table *t, char *buf, size_t size);

#endif
