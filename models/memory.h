/* SPDX-License-Identifier: Apache-2.0
 * memory: what fits on one device -- weights, the runtime and activation
 * reserve, and the KV-cache capacity left at a gpu_memory_utilization.
 *
 * The plan follows how vLLM sizes its KV cache at start-up: the engine may
 * use device memory x gpu_memory_utilization; from that it subtracts the
 * weights, the memory outside PyTorch (CUDA context, library workspaces) and
 * the activation peak of a profiling step of max_num_batched_tokens tokens;
 * the rest is KV cache.  Byte counts are exact integers; "GB" in messages is
 * 1e9 bytes.  docs/performance-model.md gives the formulas and sources.
 */
#ifndef MODELS_MEMORY_H
#define MODELS_MEMORY_H

#include <stdint.h>

#include "base/diag.h"
#include "models/catalog.h"

/* Sequences vLLM's profiling step samples logits for (its default
 * max_num_seqs); the logits buffer is part of the activation peak. */
#define MEM_PROFILE_SEQS 256

struct mem_plan {
	int64_t device_bytes;          /* memory one device offers the engine */
	int64_t budget_bytes;          /* device_bytes x gpu_memory_utilization */
	int64_t weights_bytes;         /* every weight, at the format's bits */
	int64_t runtime_reserve_bytes; /* CUDA context, workspaces (family) */
	int64_t activation_bytes;      /* peak of a max_num_batched_tokens step */
	int64_t reserve_bytes;         /* runtime + activation */
	int64_t kv_bytes;              /* budget - weights - reserve */
	int64_t kv_bytes_per_token;
	int64_t kv_capacity_tokens;    /* floor(kv_bytes / kv_bytes_per_token) */
};

/* Plan one device.  weight_format and kv_dtype NULL mean "bf16"; tp must be
 * 1; gpu_memory_utilization in (0, 1]; max_num_batched_tokens >= 1.
 * Returns 0 or DIAG_EINPUT: an unknown name, a bad argument, weights that do
 * not fit ("needs X GB ... Y GB available"), or no room left for a single
 * KV token.  *out is filled as far as it was computed even on failure. */
int mem_plan(struct mem_plan *out, const struct catalog *cat, const char *hardware_id,
	     const char *model_id, const char *weight_format, const char *kv_dtype, int tp,
	     double gpu_memory_utilization, int64_t max_num_batched_tokens,
	     struct diag *d);

/* Bytes of all weights: linear layers at bits_per_weight, embeddings,
 * lm-head and norms at embedding_bits. */
int64_t mem_weights_bytes(const struct cat_model *m, const struct cat_weight_format *f);

/* K and V bytes one token occupies over all layers:
 * 2 x layers x kv_heads x head_dim x bits / 8 (GQA; 131072 for Llama-3.1-8B
 * in BF16), or layers x (kv_lora_rank + qk_rope_head_dim) x bits / 8 (MLA). */
int64_t mem_kv_bytes_per_token(const struct cat_model *m, const struct cat_kv_dtype *k);

/* Activation peak of one step of `tokens` tokens (see the .c file). */
int64_t mem_activation_bytes(const struct cat_model *m, int64_t tokens);

/* Memory of one device the engine can address, in bytes. */
int64_t mem_device_bytes(const struct cat_hardware *hw);

#endif
