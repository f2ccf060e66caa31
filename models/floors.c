/* SPDX-License-Identifier: Apache-2.0
 * floors: kernel-launch, all-to-all and load-imbalance floors of a step
 * (see floors.h).  Pure arithmetic on a few precomputed numbers. */
#include "models/floors.h"

#include <assert.h>
#include <math.h>
#include <string.h>

void floors_kernels_per_step(const struct cat_model *m, double *gemm, double *small)
{
	double L = (double)m->layers;
	double lin = (double)m->linear_attention_layers;
	bool mla = m->attention == CAT_ATTN_MLA;
	double moe = 0;
	if (m->experts > 0)
		moe = m->moe_layers > 0 ? (double)m->moe_layers : L - (double)m->dense_layers;
	if (moe < 0)
		moe = 0;
	double shared = m->shared_experts > 0 ? (double)m->shared_experts : 0;
	*gemm = (L - lin) * (mla ? FLOORS_GEMM_MLA : FLOORS_GEMM_GQA) +
		lin * FLOORS_GEMM_LINEAR_ATTN + (L - moe) * FLOORS_GEMM_DENSE_MLP +
		moe * (FLOORS_GEMM_MOE + shared * FLOORS_GEMM_SHARED_EXPERT) + FLOORS_GEMM_STEP;
	*small = (L - lin) * (mla ? FLOORS_SMALL_MLA : FLOORS_SMALL_GQA) +
		 lin * FLOORS_SMALL_LINEAR_ATTN + (L - moe) * FLOORS_SMALL_DENSE_MLP +
		 moe * (FLOORS_SMALL_MOE + shared * FLOORS_SMALL_SHARED_EXPERT) +
		 FLOORS_SMALL_STEP;
}

void floors_init(struct floors *f, const struct cat_model *m, const struct engine_params *e,
		 int ep, double moe_layers, double link_bytes_s, double link_latency_ns,
		 bool weight_only)
{
	memset(f, 0, sizeof(*f));
	floors_kernels_per_step(m, &f->gemm_kernels, &f->small_kernels);
	f->kernel_graph_ns = e->kernel_graph_us * 1e3;
	f->gemm_ns = e->gemm_kernel_us * 1e3;
	f->kernel_eager_ns = e->kernel_eager_us * 1e3;
	f->graph_max_seqs = e->graph_max_seqs;
	f->host_overlap = e->host_overlap;
	f->host_ns = e->step_overhead_us * 1e3;
	f->ep = ep > 1 ? ep : 1;
	if (e->piecewise_layer_us > 0) {
		/* every layer with softmax attention (full, latent or sliding
		 * window) leaves the graph for its attention op (vLLM's
		 * splitting ops); linear-attention layers are not counted */
		f->attn_layers = (double)(m->layers - m->linear_attention_layers);
		f->piecewise_ns = e->piecewise_layer_us * 1e3;
	}
	f->experts = (double)m->experts;
	f->per_token = (double)m->experts_per_token;
	floors_set_alltoall(f, moe_layers, (double)m->hidden_size, 2.0, link_bytes_s,
			    link_latency_ns);
	if (weight_only && e->expert_kernel_empty_us > 0 && f->experts > 0 && moe_layers > 0) {
		/* the expert GEMMs run as one kernel per expert: they replace
		 * the two grouped GEMMs of every MoE layer */
		f->expert_kernels = f->experts / (double)f->ep;
		f->expert_gemm_layers = 2.0 * moe_layers;
		f->gemm_kernels -= 2.0 * moe_layers;
		f->expert_empty_ns = e->expert_kernel_empty_us * 1e3;
		f->expert_eager_ns = e->expert_kernel_eager_us * 1e3;
	}
}

double floors_kernel_count(const struct floors *f)
{
	return f->gemm_kernels + f->small_kernels + f->expert_gemm_layers * f->expert_kernels;
}

bool floors_graphed(const struct floors *f, double seqs, double decode_seqs, double new_tokens)
{
	return new_tokens > 0 && decode_seqs == seqs && new_tokens == seqs &&
	       f->graph_max_seqs > 0 && seqs <= f->graph_max_seqs && f->kernel_graph_ns > 0;
}

/* The per-expert kernels of a step: on each GPU, of its expert_kernels
 * experts, `touched` receive tokens (a short GEMM each, a small kernel's
 * least time) and the others exit at once. */
static double expert_launch_ns(const struct floors *f, double touched, bool graphed)
{
	if (!(f->expert_kernels > 0))
		return 0;
	double busy = touched / (double)f->ep;
	if (busy > f->expert_kernels)
		busy = f->expert_kernels;
	if (busy < 0)
		busy = 0;
	double idle = f->expert_kernels - busy;
	if (graphed)
		return f->expert_gemm_layers * (busy * f->kernel_graph_ns + idle * f->expert_empty_ns);
	return f->expert_gemm_layers * (busy * fmax(f->kernel_graph_ns, f->expert_eager_ns) +
					idle * fmax(f->expert_empty_ns, f->expert_eager_ns));
}

double floors_launch_ns(const struct floors *f, double seqs, double decode_seqs,
			double new_tokens, double touched)
{
	if (!(new_tokens > 0))
		return 0;
	if (floors_graphed(f, seqs, decode_seqs, new_tokens))
		return f->gemm_kernels * f->gemm_ns + f->small_kernels * f->kernel_graph_ns +
		       f->attn_layers * f->piecewise_ns + expert_launch_ns(f, touched, true);
	if (f->kernel_eager_ns <= 0)
		return 0;
	return f->gemm_kernels * fmax(f->gemm_ns, f->kernel_eager_ns) +
	       f->small_kernels * fmax(f->kernel_graph_ns, f->kernel_eager_ns) +
	       expert_launch_ns(f, touched, false);
}

double floors_imbalance(const struct floors *f, double n_items, double per_gpu_capacity)
{
	if (f->ep <= 1 || !(n_items > 0))
		return 1;
	double g = (double)f->ep;
	double mean = n_items / g;
	double p = 1.0 / g;
	double sd = sqrt(n_items * p * (1 - p));
	double mx = mean + sd * sqrt(2.0 * log(g));
	if (mx > n_items)
		mx = n_items;
	if (per_gpu_capacity > 0 && mx > per_gpu_capacity)
		mx = per_gpu_capacity;
	if (mx < mean)
		mx = mean;
	return mx / mean;
}

double floors_alltoall_ns(const struct floors *f, double tokens)
{
	if (f->ep <= 1 || !(tokens > 0))
		return 0;
	return f->a2a_fixed_ns + f->a2a_ns_per_token * tokens;
}

double floors_a2a_remote_gpus(double experts, double per_token, int ep)
{
	if (ep <= 1 || !(experts > 0) || !(per_token > 0))
		return 0;
	double g = (double)ep, other = experts - experts / g;
	double none = 1;
	for (double i = 0; i < per_token && none > 0; i++)
		none *= other - i > 0 ? (other - i) / (experts - i) : 0;
	return (g - 1) * (1 - none);
}

void floors_set_alltoall(struct floors *f, double moe_layers, double hidden,
			 double dispatch_bytes, double link_bytes_s, double link_latency_ns)
{
	f->a2a_fixed_ns = f->a2a_ns_per_token = 0;
	f->a2a_dispatch_ns_per_token = f->a2a_combine_ns_per_token = 0;
	if (f->ep <= 1 || !(moe_layers > 0) || !(link_bytes_s > 0))
		return;
	/* per GPU: its 1/ep of the tokens, each to its remote GPUs */
	double per_token = floors_a2a_remote_gpus(f->experts, f->per_token, f->ep) * hidden /
			   (double)f->ep / link_bytes_s * 1e9;
	f->a2a_dispatch_ns_per_token = per_token * dispatch_bytes;
	f->a2a_combine_ns_per_token = per_token * 2.0;
	f->a2a_fixed_ns = 2.0 * moe_layers * link_latency_ns;
	f->a2a_ns_per_token = moe_layers * (f->a2a_dispatch_ns_per_token +
					    f->a2a_combine_ns_per_token);
}
