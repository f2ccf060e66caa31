/* SPDX-License-Identifier: Apache-2.0
 * memory: device memory plan (see memory.h).
 *
 * Activation peak of a step of T tokens, in 16-bit activations:
 *   T x 2 bytes x (4 x intermediate + (heads + 2 kv_heads) x head_dim
 *                  + 2 x hidden)
 *   + MEM_PROFILE_SEQS x vocab x 4 bytes (FP32 logits of the sampler)
 * The MLP dominates: its fused gate/up output (2 x intermediate) and the
 * activated product (intermediate) are live together, plus one more
 * intermediate-wide buffer the caching allocator keeps from the previous
 * layer; the q/k/v output and the residual stream and its normalised copy
 * add the rest.  For Llama-3-8B at 8192 tokens this gives 1.21 GiB, where
 * vLLM logs a PyTorch activation peak of 1.26 GiB (its pull request 10511).
 */
#include "models/memory.h"

#include <math.h>

#define GB 1e9
#define GIB 1073741824.0

static int64_t bits_to_bytes(double params, double bits)
{
	return (int64_t)ceil(params * bits / 8.0);
}

int64_t mem_weights_bytes(const struct cat_model *m, const struct cat_weight_format *f)
{
	double side = (double)(m->embedding_params + m->lm_head_params + m->norm_params);
	return bits_to_bytes((double)m->linear_params, f->bits_per_weight) +
	       bits_to_bytes(side, f->embedding_bits);
}

int64_t mem_kv_bytes_per_token(const struct cat_model *m, const struct cat_kv_dtype *k)
{
	double elems;
	if (m->attention == CAT_ATTN_MLA)
		elems = (double)m->layers * (double)(m->kv_lora_rank + m->qk_rope_head_dim);
	else
		elems = 2.0 * (double)m->layers * (double)m->kv_heads * (double)m->head_dim;
	return bits_to_bytes(elems, k->bits_per_element);
}

int64_t mem_activation_bytes(const struct cat_model *m, int64_t tokens)
{
	int64_t ffn = m->experts ? m->expert_intermediate_size * m->experts_per_token
				 : m->intermediate_size;
	if (m->intermediate_size > ffn)
		ffn = m->intermediate_size;
	int64_t per_token = 2 * (4 * ffn + (m->heads + 2 * m->kv_heads) * m->head_dim +
				 2 * m->hidden_size);
	return tokens * per_token + (int64_t)MEM_PROFILE_SEQS * m->vocab_size * 4;
}

int64_t mem_device_bytes(const struct cat_hardware *hw)
{
	double bytes = hw->memory_visible_gib > 0 ? hw->memory_visible_gib * GIB
						  : hw->memory_gb * GB;
	if (hw->unified_memory)
		bytes *= hw->usable_memory_fraction;
	return (int64_t)floor(bytes);
}

int mem_plan(struct mem_plan *out, const struct catalog *cat, const char *hardware_id,
	     const char *model_id, const char *weight_format, const char *kv_dtype, int tp,
	     double gpu_memory_utilization, int64_t max_num_batched_tokens, struct diag *d)
{
	*out = (struct mem_plan){ 0 };
	if (tp != 1)
		return diag_set(d, DIAG_EINPUT,
				"tensor parallelism (tp=%d) is not modelled yet: this version "
				"plans one GPU per replica (tp=1)", tp);
	if (!(gpu_memory_utilization > 0 && gpu_memory_utilization <= 1))
		return diag_set(d, DIAG_EINPUT,
				"gpu_memory_utilization %g is out of range (expected a "
				"fraction in (0, 1])", gpu_memory_utilization);
	if (max_num_batched_tokens < 1 || max_num_batched_tokens > ((int64_t)1 << 31))
		return diag_set(d, DIAG_EINPUT,
				"max_num_batched_tokens %lld is out of range (expected 1 to "
				"2^31)", (long long)max_num_batched_tokens);
	struct cat_selection sel;
	int rc = catalog_select(cat, &sel, hardware_id, model_id, weight_format, kv_dtype, d);
	if (rc)
		return rc;
	const struct cat_hardware *hw = sel.hardware;
	const struct cat_model *m = sel.model;

	out->device_bytes = mem_device_bytes(hw);
	out->budget_bytes = (int64_t)floor((double)out->device_bytes * gpu_memory_utilization);
	out->weights_bytes = mem_weights_bytes(m, sel.weight_format);
	out->runtime_reserve_bytes = (int64_t)ceil(hw->family->runtime_reserve_gib * GIB);
	out->activation_bytes = mem_activation_bytes(m, max_num_batched_tokens);
	out->reserve_bytes = out->runtime_reserve_bytes + out->activation_bytes;
	out->kv_bytes_per_token = mem_kv_bytes_per_token(m, sel.kv_dtype);

	int64_t after_reserve = out->budget_bytes - out->reserve_bytes;
	if (out->weights_bytes > after_reserve)
		return diag_set(d, DIAG_EINPUT,
				"%s in %s needs %.1f GB for its weights, but %s has %.1f GB "
				"available (%.1f GB x gpu_memory_utilization %.2f, minus "
				"%.1f GB runtime and activation reserve)",
				m->id, sel.weight_format->id, out->weights_bytes / GB, hw->id,
				after_reserve / GB, out->device_bytes / GB,
				gpu_memory_utilization, out->reserve_bytes / GB);
	out->kv_bytes = after_reserve - out->weights_bytes;
	out->kv_capacity_tokens = out->kv_bytes / out->kv_bytes_per_token;
	if (out->kv_capacity_tokens < 1)
		return diag_set(d, DIAG_EINPUT,
				"%s in %s fits on %s, but leaves %.3f GB for the KV cache: "
				"not one token (%lld bytes)", m->id, sel.weight_format->id,
				hw->id, out->kv_bytes / GB, (long long)out->kv_bytes_per_token);
	return 0;
}
