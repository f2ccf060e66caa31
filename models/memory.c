/* SPDX-License-Identifier: Apache-2.0
 * memory: device memory plan (see memory.h).
 *
 * The activation peak of vLLM's profiling step, on one GPU of a
 * tensor-parallel group of tp, is the larger of its two phases
 * (vllm/v1/worker/gpu_model_runner.py, profile_run: _dummy_run, then
 * _dummy_sampler_run on the last token of each sequence; the forward's
 * buffers are freed in between, its hidden states are not):
 *   forward = T x 2 bytes x (3 x ffn / tp + 3 x hidden)
 *   sampler = S x V x bytes_per_logit + T x hidden x 2 bytes
 * with T = max_num_batched_tokens, S = max_num_seqs, V the vocabulary.  In
 * the forward pass the MLP's fused gate/up output (2 x ffn / tp) and its
 * activated product (ffn / tp) are live together in 16 bits, beside the
 * residual stream, its normalised copy and one more hidden-wide buffer,
 * which each GPU keeps whole.  On an RTX 3090, vLLM 0.6.4 logs a PyTorch
 * peak of 17.06 GiB at 20,000 tokens and 17.98 GiB at 29,000 for
 * Llama-3.1-8B (vLLM issue 10517, comment of 2024-12-02): 109.8 KB a token,
 * where the formula gives 110.6 KB.  The sampler's bytes per logit are the
 * engine's (memory.h, MEM_SAMPLER_*); every GPU samples the gathered
 * logits, so that phase is not split by tp.
 */
#include "models/memory.h"

#include "models/engine.h"

#include <math.h>
#include <stdio.h>

#define GB 1e9
#define GIB 1073741824.0

static int64_t bits_to_bytes(double params, double bits)
{
	return (int64_t)ceil(params * bits / 8.0);
}

void mem_opts_init(struct mem_opts *o)
{
	*o = (struct mem_opts){ .tp = 1, .pp = 1, .gpu_memory_utilization = 0.9,
				.max_num_batched_tokens = 8192, .gpu_expert_fraction = 1.0 };
}

void mem_engine_of(struct mem_engine *out, const struct engine_params *p, int64_t max_num_seqs)
{
	*out = (struct mem_engine){
		.sampler_seqs = max_num_seqs > 0 ? max_num_seqs : 0,
		.sampler_bytes_per_logit = p->kv_sampler_bytes_per_logit,
		.non_torch_gib = p->kv_non_torch_gib,
		.non_torch_tp_gib = p->kv_non_torch_tp_gib,
		.cuda_graph_gib = p->kv_cuda_graph_gib,
	};
}

int64_t mem_weights_bytes(const struct cat_model *m, const struct cat_weight_format *f)
{
	double side = (double)(m->embedding_params + m->lm_head_params + m->norm_params);
	/* a uniform format rounds its linear weights up once; one with its
	 * dense part at other bits (gguf-mxfp4) rounds the two parts apart */
	if (f->dense_bits == f->bits_per_weight)
		return bits_to_bytes((double)m->linear_params, f->bits_per_weight) +
		       bits_to_bytes(side, f->embedding_bits);
	return bits_to_bytes((double)m->expert_params, f->bits_per_weight) +
	       bits_to_bytes((double)(m->linear_params - m->expert_params), f->dense_bits) +
	       bits_to_bytes(side, f->embedding_bits);
}

static int64_t kv_layers(const struct cat_model *m)
{
	return m->kv_layers > 0 ? m->kv_layers : m->layers - m->linear_attention_layers;
}

int64_t mem_kv_bytes_per_token(const struct cat_model *m, const struct cat_kv_dtype *k)
{
	double elems;
	if (m->attention == CAT_ATTN_MLA)
		elems = (double)kv_layers(m) * (double)(m->kv_lora_rank + m->qk_rope_head_dim);
	else
		elems = 2.0 * (double)kv_layers(m) * (double)m->kv_heads * (double)m->head_dim;
	return bits_to_bytes(elems, k->bits_per_element);
}

void mem_kv_groups_of(const struct cat_model *m, struct mem_kv_groups *g)
{
	*g = (struct mem_kv_groups){0};
	int64_t kvl = kv_layers(m);
	g->window_layers = m->sliding_window > 0 ? m->sliding_window_layers : 0;
	if (g->window_layers > kvl)
		g->window_layers = kvl;
	g->full_layers = kvl - g->window_layers;
	g->linear_layers = m->linear_attention_layers;
	g->window_tokens = g->window_layers > 0 ? m->sliding_window : 0;
	int64_t n[3] = {g->full_layers, g->window_layers, g->linear_layers};
	int64_t lo = 0, hi = 0;
	for (int i = 0; i < 3; i++) {
		if (n[i] <= 0)
			continue;
		lo = lo == 0 || n[i] < lo ? n[i] : lo;
		hi = n[i] > hi ? n[i] : hi;
	}
	g->group_layers = (double)hi < 1.25 * (double)lo ? hi : lo;
	if (g->group_layers < 1)
		g->group_layers = 1;
	g->full_groups = (g->full_layers + g->group_layers - 1) / g->group_layers;
	g->window_groups = (g->window_layers + g->group_layers - 1) / g->group_layers;
	g->linear_groups = (g->linear_layers + g->group_layers - 1) / g->group_layers;
}

int64_t mem_linear_state_bytes(const struct cat_model *m)
{
	if (m->linear_attention_layers <= 0)
		return 0;
	double vh = (double)(m->linear_v_heads > 0 ? m->linear_v_heads : m->heads);
	double qh = (double)(m->linear_qk_heads > 0 ? m->linear_qk_heads : vh);
	double d = (double)(m->linear_head_dim > 0 ? m->linear_head_dim : m->head_dim);
	double conv = m->linear_conv_kernel > 1 ? (double)(m->linear_conv_kernel - 1) : 0;
	double layer = vh * d * d * 4.0 + conv * (2.0 * qh + vh) * d * 2.0;
	return (int64_t)ceil(layer * (double)m->linear_attention_layers);
}

int64_t mem_kv_context_bytes_per_token(const struct cat_model *m, const struct cat_kv_dtype *k)
{
	struct mem_kv_groups g;
	mem_kv_groups_of(m, &g);
	int64_t all = mem_kv_bytes_per_token(m, k), layers = kv_layers(m);
	if (layers <= 0 || g.window_layers == 0)
		return all; /* one kind of KV layer: one group (linear layers hold none) */
	return (int64_t)ceil((double)all / (double)layers *
			     (double)(g.full_groups * g.group_layers));
}

/* The profiling forward pass and sampling step (see the top of the file). */
static void activation_split(const struct cat_model *m, int64_t tokens, int tp,
			     const struct mem_engine *e, int64_t *forward, int64_t *sampler)
{
	int64_t ffn = m->experts ? m->expert_intermediate_size * m->experts_per_token
				 : m->intermediate_size;
	if (m->intermediate_size > ffn)
		ffn = m->intermediate_size;
	double per_token = 2.0 * (3.0 * (double)ffn / tp + 3.0 * (double)m->hidden_size);
	*forward = (int64_t)ceil((double)tokens * per_token);
	double seqs = (double)(e->sampler_seqs > 0 ? e->sampler_seqs : MEM_PROFILE_SEQS);
	double bpl = e->sampler_bytes_per_logit > 0 ? e->sampler_bytes_per_logit
						    : MEM_SAMPLER_FP32_BYTES_PER_LOGIT;
	*sampler = (int64_t)ceil(seqs * (double)m->vocab_size * bpl +
				 (double)tokens * (double)m->hidden_size * 2.0);
}

int64_t mem_activation_bytes(const struct cat_model *m, int64_t tokens)
{
	struct mem_engine e = { 0 };
	int64_t f, s;
	activation_split(m, tokens, 1, &e, &f, &s);
	return f > s ? f : s;
}

/* Memory as the driver or datasheet states it, before any usable fraction. */
static double raw_device_bytes(const struct cat_hardware *hw)
{
	return hw->memory_visible_gib > 0 ? hw->memory_visible_gib * GIB : hw->memory_gb * GB;
}

int64_t mem_device_bytes(const struct cat_hardware *hw)
{
	double bytes = raw_device_bytes(hw);
	if (hw->unified_memory)
		bytes *= hw->usable_memory_fraction;
	return (int64_t)floor(bytes);
}

/* The parts of a plan that do not depend on the expert fraction. */
struct pieces {
	const struct cat_hardware *hw;
	const struct cat_model *m;
	const struct cat_weight_format *wf;
	int64_t device, budget;
	double fixed_weights;       /* per GPU without routed experts */
	double expert_weights;      /* per GPU if every routed expert is resident */
	int64_t expert_total;       /* whole model */
	int64_t non_torch, cuda_graph, forward, sampler;
	int64_t kv_per_token, kv_gpu_per_token;
	int64_t window_gpu_per_seq, state_gpu_per_seq;
	struct mem_kv_groups groups;
	int64_t weights_total;
	int64_t spec_weights, spec_kv_gpu_per_token; /* the drafter's, per GPU */
};

static int pieces_of(struct pieces *pc, const struct catalog *cat, const struct mem_opts *o,
		     struct diag *d)
{
	if (o->tp < 1 || o->tp > 1024 || o->pp < 1 || o->pp > 1024)
		return diag_set(d, DIAG_EINPUT, "tensor_parallel_size %d and pipeline_parallel_size "
				"%d: expected whole numbers from 1 to 1024", o->tp, o->pp);
	if (!(o->gpu_memory_utilization > 0 && o->gpu_memory_utilization <= 1))
		return diag_set(d, DIAG_EINPUT,
				"gpu_memory_utilization %g is out of range (expected a "
				"fraction in (0, 1])", o->gpu_memory_utilization);
	if (o->max_num_batched_tokens < 1 || o->max_num_batched_tokens > ((int64_t)1 << 31))
		return diag_set(d, DIAG_EINPUT,
				"max_num_batched_tokens %lld is out of range (expected 1 to "
				"2^31)", (long long)o->max_num_batched_tokens);
	if (!(o->gpu_expert_fraction >= 0 && o->gpu_expert_fraction <= 1))
		return diag_set(d, DIAG_EINPUT, "gpu_expert_fraction %g: expected a fraction in "
				"[0, 1]", o->gpu_expert_fraction);
	if (!(o->device_memory_gb >= 0 && o->device_memory_gb < 1e7))
		return diag_set(d, DIAG_EINPUT, "device memory %g GB is out of range",
				o->device_memory_gb);
	const struct mem_engine *me = &o->engine;
	if (me->sampler_seqs < 0 || me->sampler_seqs > (1 << 24) ||
	    !(me->sampler_bytes_per_logit >= 0 && me->sampler_bytes_per_logit <= 1024) ||
	    !(me->non_torch_gib <= 1e4) || !(me->non_torch_tp_gib >= 0 && me->non_torch_tp_gib <= 1e4) ||
	    !(me->cuda_graph_gib >= 0 && me->cuda_graph_gib <= 1e4))
		return diag_set(d, DIAG_EINPUT, "engine start-up profile out of range (sampler %lld "
				"sequences at %g bytes a logit, %g + %g GiB outside PyTorch, %g GiB of "
				"CUDA graphs)", (long long)me->sampler_seqs,
				me->sampler_bytes_per_logit, me->non_torch_gib, me->non_torch_tp_gib,
				me->cuda_graph_gib);
	struct cat_selection sel;
	int rc = catalog_select(cat, &sel, o->hardware, o->model, o->weight_format, o->kv_dtype, d);
	if (rc)
		return rc;
	const struct cat_hardware *hw = sel.hardware;
	const struct cat_model *m = sel.model;
	const struct cat_weight_format *wf = sel.weight_format;
	pc->hw = hw;
	pc->m = m;
	pc->wf = wf;
	int gpus = o->tp * o->pp;
	if (hw->system_kind && hw->device_count > 0 && gpus > hw->device_count)
		return diag_set(d, DIAG_EINPUT, "%s has %lld GPUs; tensor_parallel_size %d x "
				"pipeline_parallel_size %d needs %d", hw->id,
				(long long)hw->device_count, o->tp, o->pp, gpus);

	double raw = o->device_memory_gb > 0 ? o->device_memory_gb * GB : raw_device_bytes(hw);
	double util = o->gpu_memory_utilization;
	if (hw->unified_memory) {
		pc->device = (int64_t)floor(raw * hw->usable_memory_fraction);
		pc->budget = (int64_t)floor(raw * fmin(hw->usable_memory_fraction, util));
	} else {
		pc->device = (int64_t)floor(raw);
		pc->budget = (int64_t)floor(raw * util);
	}

	double tp = o->tp, pp = o->pp;
	double bpw = wf->bits_per_weight, ebw = wf->embedding_bits;
	pc->expert_total = bits_to_bytes((double)m->expert_params, bpw);
	double blocks = (double)bits_to_bytes((double)(m->linear_params - m->expert_params),
					      wf->dense_bits) +
			(double)bits_to_bytes((double)m->norm_params, ebw);
	double embed = (double)bits_to_bytes((double)m->embedding_params, ebw);
	double head = (double)bits_to_bytes((double)(m->lm_head_params ? m->lm_head_params
								      : m->embedding_params), ebw);
	if (o->pp == 1)
		pc->fixed_weights = (blocks + embed + (m->lm_head_params ? head : 0)) / tp;
	else /* the first stage holds the embeddings, the last the lm-head */
		pc->fixed_weights = (blocks / pp + fmax(embed, head)) / tp;
	pc->expert_weights = (double)pc->expert_total / pp / tp;
	pc->weights_total = mem_weights_bytes(m, wf);
	const struct mem_engine *en = &o->engine;
	double non_torch = en->non_torch_gib > 0 ? en->non_torch_gib : hw->family->runtime_reserve_gib;
	if (o->tp * o->pp > 1)
		non_torch += en->non_torch_tp_gib;
	pc->non_torch = (int64_t)ceil(non_torch * GIB);
	pc->cuda_graph = (int64_t)ceil(en->cuda_graph_gib * GIB);
	activation_split(m, o->max_num_batched_tokens, o->tp, en, &pc->forward, &pc->sampler);
	struct cat_model mha = *m;
	const struct cat_model *km = m;
	if (o->mla_expanded && m->attention == CAT_ATTN_MLA) {
		/* no latent cache: every head keeps its K and V */
		mha.attention = CAT_ATTN_GQA;
		mha.kv_heads = mha.heads;
		km = &mha;
	}
	pc->kv_per_token = mem_kv_context_bytes_per_token(km, sel.kv_dtype);
	double frac = 1;
	if (km->attention != CAT_ATTN_MLA && km->kv_heads > 0)
		frac = ceil((double)km->kv_heads / tp) / (double)km->kv_heads;
	pc->kv_gpu_per_token = (int64_t)ceil((double)pc->kv_per_token * frac / pp);
	if (pc->kv_gpu_per_token < 1)
		pc->kv_gpu_per_token = 1;
	/* per running sequence: the window's blocks (plus the one being filled)
	 * in each sliding-window group, and the linear layers' state */
	mem_kv_groups_of(m, &pc->groups);
	const struct mem_kv_groups *g = &pc->groups;
	pc->window_gpu_per_seq = 0;
	if (g->window_groups > 0) {
		double layer = (double)mem_kv_bytes_per_token(km, sel.kv_dtype) / (double)kv_layers(m);
		int64_t bs = 16; /* vLLM's default block size: one partial block */
		pc->window_gpu_per_seq = (int64_t)ceil(layer * frac / pp *
			(double)(g->window_groups * g->group_layers) * (double)(g->window_tokens + bs));
	}
	pc->state_gpu_per_seq = (int64_t)ceil((double)mem_linear_state_bytes(m) / tp / pp);
	/* a drafter's weights sit beside the target's, its KV beside every
	 * token's */
	double sw, skv;
	rc = spec_memory(cat, m, wf, sel.kv_dtype, o->spec, o->tp, o->pp, &sw, &skv, d);
	if (rc)
		return rc;
	pc->spec_weights = (int64_t)ceil(sw);
	pc->spec_kv_gpu_per_token = (int64_t)ceil(skv);
	pc->fixed_weights += (double)pc->spec_weights;
	pc->kv_gpu_per_token += pc->spec_kv_gpu_per_token;
	return 0;
}

int mem_plan_opts(struct mem_plan *out, const struct catalog *cat, const struct mem_opts *o,
		  struct diag *d)
{
	*out = (struct mem_plan){ 0 };
	struct pieces pc;
	int rc = pieces_of(&pc, cat, o, d);
	if (rc)
		return rc;
	const struct cat_hardware *hw = pc.hw;
	const struct cat_model *m = pc.m;
	double f = m->experts > 0 ? o->gpu_expert_fraction : 1;
	out->gpus = o->tp * o->pp;
	out->device_bytes = pc.device;
	out->budget_bytes = pc.budget;
	out->weights_bytes = (int64_t)ceil(pc.fixed_weights + f * pc.expert_weights);
	out->weights_total_bytes = pc.weights_total;
	out->expert_bytes = pc.expert_total;
	out->host_expert_bytes = (int64_t)ceil((1 - f) * (double)pc.expert_total);
	out->host_ram_needed_bytes = out->host_expert_bytes > 0
					     ? out->host_expert_bytes + (int64_t)(MEM_HOST_RESERVE_GB * GB)
					     : 0;
	out->non_torch_bytes = pc.non_torch;
	out->cuda_graph_bytes = pc.cuda_graph;
	out->runtime_reserve_bytes = pc.non_torch + pc.cuda_graph;
	out->forward_bytes = pc.forward;
	out->sampler_bytes = pc.sampler;
	out->activation_bytes = pc.forward > pc.sampler ? pc.forward : pc.sampler;
	out->reserve_bytes = out->runtime_reserve_bytes + out->activation_bytes;
	out->kv_bytes_per_token = pc.kv_per_token;
	out->kv_gpu_bytes_per_token = pc.kv_gpu_per_token;
	out->spec_weights_bytes = pc.spec_weights;
	out->spec_kv_gpu_bytes_per_token = pc.spec_kv_gpu_per_token;
	out->groups = pc.groups;
	out->window_bytes_per_seq = pc.window_gpu_per_seq;
	out->state_bytes_per_seq = pc.state_gpu_per_seq;
	out->seq_kv_tokens = (pc.window_gpu_per_seq + pc.state_gpu_per_seq + pc.kv_gpu_per_token - 1) /
			     pc.kv_gpu_per_token;

	if (f < 1 && hw->unified_memory)
		return diag_set(d, DIAG_EINPUT, "%s has unified memory: experts cannot be kept "
				"in a separate host RAM (gpu_expert_fraction must be 1)", hw->id);
	int64_t after_reserve = out->budget_bytes - out->reserve_bytes;
	if (out->weights_bytes > after_reserve) {
		const char *hint = m->experts > 0 && f >= 1
					   ? "; a mixture of experts can keep experts in host RAM "
					     "(gpu_expert_fraction < 1)"
					   : "";
		char draft[96] = "";
		if (out->spec_weights_bytes > 0)
			snprintf(draft, sizeof(draft), ", %.1f GB of them the speculative drafter's",
				 out->spec_weights_bytes / GB);
		return diag_set(d, DIAG_EINPUT,
				"%s in %s needs %.1f GB per GPU for its weights (%d GPU%s%s), but "
				"%s has %.1f GB available (%.1f GB x gpu_memory_utilization "
				"%.2f, minus %.1f GB runtime and activation reserve)%s",
				m->id, pc.wf->id, out->weights_bytes / GB, out->gpus,
				out->gpus > 1 ? "s" : "", draft, hw->id, after_reserve / GB,
				out->device_bytes / GB, o->gpu_memory_utilization,
				out->reserve_bytes / GB, hint);
	}
	out->kv_bytes = after_reserve - out->weights_bytes;
	out->kv_capacity_tokens = out->kv_bytes / out->kv_gpu_bytes_per_token;
	if (out->kv_capacity_tokens < 1)
		return diag_set(d, DIAG_EINPUT,
				"%s in %s fits on %s, but leaves %.3f GB for the KV cache: "
				"not one token (%lld bytes)", m->id, pc.wf->id, hw->id,
				out->kv_bytes / GB, (long long)out->kv_gpu_bytes_per_token);
	return 0;
}

int mem_plan(struct mem_plan *out, const struct catalog *cat, const char *hardware_id,
	     const char *model_id, const char *weight_format, const char *kv_dtype, int tp,
	     double gpu_memory_utilization, int64_t max_num_batched_tokens, struct diag *d)
{
	struct mem_opts o;
	mem_opts_init(&o);
	o.hardware = hardware_id;
	o.model = model_id;
	o.weight_format = weight_format;
	o.kv_dtype = kv_dtype;
	o.tp = tp;
	o.gpu_memory_utilization = gpu_memory_utilization;
	o.max_num_batched_tokens = max_num_batched_tokens;
	return mem_plan_opts(out, cat, &o, d);
}

double mem_max_gpu_expert_fraction(const struct catalog *cat, const struct mem_opts *o,
				   int64_t kv_tokens)
{
	struct pieces pc;
	struct diag d;
	diag_init(&d);
	if (pieces_of(&pc, cat, o, &d) != 0)
		return -1;
	double act = (double)(pc.forward > pc.sampler ? pc.forward : pc.sampler);
	double room = (double)pc.budget - (double)pc.non_torch - (double)pc.cuda_graph - act -
		      (double)kv_tokens * (double)pc.kv_gpu_per_token - ceil(pc.fixed_weights) - 1;
	if (room < 0)
		return -1;
	if (pc.expert_weights <= 0)
		return 1;
	if (pc.hw->unified_memory)
		return room >= pc.expert_weights ? 1 : -1;
	double f = floor(room / pc.expert_weights * 1e4) / 1e4; /* round down */
	return f > 1 ? 1 : f;
}
