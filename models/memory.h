/* SPDX-License-Identifier: Apache-2.0
 * memory: what fits -- weights, the runtime and activation reserve, and the
 * KV-cache capacity left at a gpu_memory_utilization, per GPU under tensor
 * and pipeline parallelism, with mixture-of-experts weights optionally kept
 * in host RAM.
 *
 * The plan follows how vLLM sizes its KV cache at start-up
 * (vllm/v1/worker/gpu_worker.py, determine_available_memory): each GPU may
 * use the memory the driver reports x gpu_memory_utilization; from that it
 * subtracts its share of the weights, the memory outside PyTorch's
 * allocator (cuBLAS and NCCL workspaces; not the CUDA context, which is
 * already in use before the profile's baseline), the activation peak of its
 * profiling step -- a forward pass of max_num_batched_tokens tokens, then a
 * dummy sampling step over max_num_seqs rows of logits -- and, from v0.21,
 * an estimate of the CUDA graphs' memory; the rest is KV cache.  How the
 * engine profiles (struct mem_engine) comes from its profile in
 * models/catalog/engines.json; without one, engine-neutral defaults.  Under tensor
 * parallelism every matrix is split over the tp GPUs of a stage (and the KV
 * heads with it, replicated when there are fewer KV heads than GPUs; an MLA
 * latent is kept whole on every GPU); under pipeline parallelism the layers
 * are split over pp stages, the first holding the embeddings and the last
 * the lm-head.  On a unified-memory machine (Apple, GB10) the memory a model
 * may use is the platform's usable fraction of RAM (or less, when
 * gpu_memory_utilization is lower).  Byte counts are exact integers; "GB"
 * in messages is 1e9 bytes.  docs/performance-model.md gives the formulas
 * and sources.
 */
#ifndef MODELS_MEMORY_H
#define MODELS_MEMORY_H

#include <stdbool.h>
#include <stdint.h>

#include "base/diag.h"
#include "models/catalog.h"
#include "models/spec.h"

/* Sequences the profiling step samples logits for when the engine says
 * nothing else (vLLM's default max_num_seqs below 70 GiB). */
#define MEM_PROFILE_SEQS 256

/* Bytes live per logit at the peak of the profiling step's dummy sampling
 * of max_num_seqs rows x vocabulary (vllm/v1/worker/gpu_model_runner.py,
 * _dummy_sampler_run, with top_p 0.9 and top_k vocab - 1):
 *   SORT, PyTorch's top-k/top-p (vllm/v1/sample/ops/topk_topp_sampler.py,
 *   apply_top_k_top_p): the model's 16-bit logits (2), their FP32 copy (4),
 *   sort's FP32 values (4) and int64 indices (8), the int64 index input it
 *   sorts with them (8), and the radix sort's double buffers for both (4 +
 *   8): 38 bytes.  vLLM 0.11.0 on H100 logs 4.76 GiB of activation peak for
 *   Llama-3.1-8B, 5.56 for Qwen3-0.6B, 5.64 for Qwen3-32B and 7.38 for
 *   gpt-oss-20b at 1024 sequences (llm-d/llm-d-benchmark,
 *   config_explorer/empirical-vllm-memory-results.md at 4f4d449): 38 bytes x
 *   1024 x vocabulary plus the hidden states gives 4.71, 5.52, 5.60, 7.33.
 *   FLASHINFER, FlashInfer's top_k_top_p_sampling_from_logits: the 16-bit
 *   logits, their FP32 copy and FP32 probabilities: 10 bytes.
 *   FP32, an engine-neutral logits buffer (engines without a profile). */
#define MEM_SAMPLER_SORT_BYTES_PER_LOGIT 38.0
#define MEM_SAMPLER_FLASHINFER_BYTES_PER_LOGIT 10.0
#define MEM_SAMPLER_FP32_BYTES_PER_LOGIT 4.0

/* How an engine sizes its KV cache at start-up (struct engine_params'
 * kv_* figures; mem_engine_of fills it). */
struct mem_engine {
	int64_t sampler_seqs;          /* rows the dummy sampling step takes (its
					  max_num_seqs); 0: MEM_PROFILE_SEQS */
	double sampler_bytes_per_logit;/* 0: MEM_SAMPLER_FP32_BYTES_PER_LOGIT */
	double non_torch_gib;          /* memory outside PyTorch per GPU; <= 0:
					  the hardware family's runtime_reserve_gib */
	double non_torch_tp_gib;       /* more per GPU when tp x pp > 1 */
	double cuda_graph_gib;         /* CUDA-graph memory charged before the KV
					  cache is sized; 0: none */
};

/* Host RAM kept free for the operating system and the engine's own buffers
 * when experts are offloaded, in GB. */
#define MEM_HOST_RESERVE_GB 16.0

struct mem_opts {
	const char *hardware;
	const char *model;
	const char *weight_format;     /* NULL: "bf16" */
	const char *kv_dtype;          /* NULL: "bf16" */
	int tp;                        /* >= 1 */
	int pp;                        /* >= 1 */
	double gpu_memory_utilization; /* (0, 1] */
	int64_t max_num_batched_tokens;/* >= 1 */
	double gpu_expert_fraction;    /* routed experts kept on the GPUs, [0, 1] */
	double device_memory_gb;       /* per-GPU memory instead of the
					  catalogue's (a budget what-if); 0 none */
	bool mla_expanded;             /* the engine runs a multi-head latent
					  attention model as plain multi-head
					  attention (struct perf_model's
					  mla_expanded): a full K and V per
					  head, split over tp like GQA */
	const struct spec_opts *spec;  /* speculative decoding: the drafter's
					  weights and KV are counted too
					  (models/spec.h); NULL: none */
	struct mem_engine engine;      /* how the engine profiles (zero: the
					  engine-neutral defaults) */
};

/* tp = pp = 1, utilisation 0.9, 8192 batched tokens, experts all on GPU,
 * the engine-neutral profile. */
void mem_opts_init(struct mem_opts *o);

struct engine_params; /* models/engine.h */

/* The start-up profile of an engine with parameters p (after family
 * overrides) that samples max_num_seqs rows. */
void mem_engine_of(struct mem_engine *out, const struct engine_params *p, int64_t max_num_seqs);

/* How vLLM's hybrid KV-cache manager lays out a model's attention layers
 * (vllm/v1/core/kv_cache_utils.py, _get_kv_cache_groups_uniform_page_size
 * and get_kv_cache_config_from_groups, 2025-06 on): layers of one kind
 * (full attention, sliding window, linear/Mamba-style state) are cut into
 * groups of `group_layers` layers -- the fewest layers of any kind, or the
 * most when they are within 25% of each other -- padding the last group of
 * a kind; one shared pool hands out blocks, and a block of the pool is one
 * page in each of group_layers tensors.  A token of context so costs
 * full_groups x group_layers layers' KV, a sliding-window group holds only
 * its window's blocks per sequence, and a linear group one state per
 * sequence.  A model of one kind has one group of all its layers. */
struct mem_kv_groups {
	int64_t full_layers, window_layers, linear_layers;
	int64_t group_layers;
	int64_t full_groups, window_groups, linear_groups;
	int64_t window_tokens;         /* sliding window, tokens (0: none) */
};

/* The layout of m (kv_layers that keep KV; linear layers none). */
void mem_kv_groups_of(const struct cat_model *m, struct mem_kv_groups *g);

/* Linear-attention state of one sequence, whole model, in bytes: per layer
 * the recurrent state (v_heads x head_dim x head_dim in FP32) and the
 * convolution window ((conv_kernel - 1) x (2 qk_heads + v_heads) x
 * head_dim in 16 bits). */
int64_t mem_linear_state_bytes(const struct cat_model *m);

struct mem_plan {
	int gpus;                      /* tp x pp */
	int64_t device_bytes;          /* memory one GPU offers the engine */
	int64_t budget_bytes;          /* per GPU, after gpu_memory_utilization */
	int64_t weights_bytes;         /* per GPU (the fullest one) */
	int64_t weights_total_bytes;   /* whole model at the format's bits */
	int64_t expert_bytes;          /* routed experts, whole model */
	int64_t host_expert_bytes;     /* of which kept in host RAM */
	int64_t host_ram_needed_bytes; /* host_expert_bytes + MEM_HOST_RESERVE_GB */
	int64_t non_torch_bytes;       /* outside PyTorch's allocator, per GPU */
	int64_t cuda_graph_bytes;      /* CUDA graphs charged before the KV cache */
	int64_t runtime_reserve_bytes; /* non_torch + cuda_graph */
	int64_t forward_bytes;         /* activation peak of the profiling forward
					  pass of max_num_batched_tokens tokens */
	int64_t sampler_bytes;         /* peak of its dummy sampling step (logits
					  of max_num_seqs rows, and the hidden
					  states still held) */
	int64_t activation_bytes;      /* per GPU: max(forward, sampler) */
	int64_t reserve_bytes;         /* runtime + activation */
	int64_t kv_bytes;              /* per GPU: budget - weights - reserve */
	int64_t kv_bytes_per_token;    /* whole model, per token of context: the
					  full-attention KV-cache groups */
	int64_t kv_gpu_bytes_per_token;/* what one GPU stores per token */
	int64_t kv_capacity_tokens;    /* floor(kv_bytes / kv_gpu_bytes_per_token) */
	/* Hybrid attention (see struct mem_kv_groups): what each running
	 * sequence holds besides its context, per GPU. */
	struct mem_kv_groups groups;
	int64_t window_bytes_per_seq;  /* sliding-window groups: window + a block */
	int64_t state_bytes_per_seq;   /* linear-attention (Gated DeltaNet) state */
	int64_t seq_kv_tokens;         /* both, in KV tokens of this plan, rounded up */
	/* speculative decoding (mem_opts.spec): in weights_bytes and
	 * kv_gpu_bytes_per_token above */
	int64_t spec_weights_bytes;    /* the drafter's weights, per GPU */
	int64_t spec_kv_gpu_bytes_per_token; /* its KV per token, per GPU */
};

/* Plan a replica.  Returns 0 or DIAG_EINPUT: an unknown name, a bad argument,
 * weights that do not fit ("needs X GB ... Y GB available"), or no room
 * left for a single KV token.  *out is filled as far as it was computed
 * even on failure (weights_bytes and budget_bytes always, when the names
 * resolve). */
int mem_plan_opts(struct mem_plan *out, const struct catalog *cat, const struct mem_opts *o,
		  struct diag *d);

/* The same for one stage of tp GPUs with every expert on the GPUs. */
int mem_plan(struct mem_plan *out, const struct catalog *cat, const char *hardware_id,
	     const char *model_id, const char *weight_format, const char *kv_dtype, int tp,
	     double gpu_memory_utilization, int64_t max_num_batched_tokens,
	     struct diag *d);

/* The largest share of routed experts that fits on the GPUs while leaving
 * room for kv_tokens tokens of KV cache (o->gpu_expert_fraction ignored):
 * in [0, 1], or a negative value when even the dense weights and that KV
 * do not fit.  1 for dense models that fit. */
double mem_max_gpu_expert_fraction(const struct catalog *cat, const struct mem_opts *o,
				   int64_t kv_tokens);

/* Bytes of all weights: linear layers at bits_per_weight, embeddings,
 * lm-head and norms at embedding_bits. */
int64_t mem_weights_bytes(const struct cat_model *m, const struct cat_weight_format *f);

/* K and V bytes one token occupies in the full-attention groups of the
 * hybrid layout (what capacity is counted in); equal to
 * mem_kv_bytes_per_token for a model with no sliding-window layers. */
int64_t mem_kv_context_bytes_per_token(const struct cat_model *m, const struct cat_kv_dtype *k);

/* K and V bytes one token occupies over all layers that keep a KV cache:
 * 2 x kv_layers x kv_heads x head_dim x bits / 8 (GQA; 131072 for
 * Llama-3.1-8B in BF16), or kv_layers x (kv_lora_rank + qk_rope_head_dim) x
 * bits / 8 (MLA).  Sliding-window layers count in full: this is the KV a
 * step reads and writes, not what the cache holds. */
int64_t mem_kv_bytes_per_token(const struct cat_model *m, const struct cat_kv_dtype *k);

/* Activation peak of one profiling step of `tokens` tokens on one GPU under
 * the engine-neutral profile (see the .c). */
int64_t mem_activation_bytes(const struct cat_model *m, int64_t tokens);

/* Memory one device offers, in bytes: what the driver reports, else the
 * datasheet; on unified memory the usable fraction of it. */
int64_t mem_device_bytes(const struct cat_hardware *hw);

#endif
