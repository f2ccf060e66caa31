/* SPDX-License-Identifier: Apache-2.0
 * offload: cost of experts held in host RAM (see offload.h). */
#include "models/offload.h"

#include <math.h>

static const char *const choice_names[] = { "none", "stream", "cpu" };

const char *offload_choice_name(enum offload_choice c)
{
	return ((int)c >= 0 && (int)c < 3) ? choice_names[c] : "?";
}

struct offload_host offload_host_resolve(const struct offload_host *h, double host_link_gbs)
{
	struct offload_host r = h ? *h : (struct offload_host){ 0 };
	if (!(r.mem_bw_gbs > 0))
		r.mem_bw_gbs = OFFLOAD_DEFAULT_MEM_BW_GBS;
	if (!(r.tflops > 0))
		r.tflops = OFFLOAD_DEFAULT_TFLOPS;
	if (!(r.link_gbs > 0))
		r.link_gbs = host_link_gbs > 0 ? host_link_gbs : OFFLOAD_DEFAULT_LINK_GBS;
	if (!(r.memory_gb >= 0))
		r.memory_gb = 0;
	return r;
}

struct offload_cost offload_step_cost(const struct offload_host *h,
				      const struct offload_demand *dm)
{
	struct offload_cost c = { 0, 0 };
	if (!(dm->missing_experts > 0))
		return c;
	double gpus = dm->gpus >= 1 ? dm->gpus : 1;
	double bytes = dm->missing_experts * dm->expert_bytes;
	double link = h->link_gbs * 1e9 * OFFLOAD_LINK_EFF * gpus;
	c.stream_ns = bytes / link * 1e9;
	double flops = dm->host_token_experts * dm->flops_per_token_expert;
	double cpu_compute = flops / (h->tflops * 1e12 * OFFLOAD_CPU_EFF);
	double cpu_mem = bytes / (h->mem_bw_gbs * 1e9 * OFFLOAD_RAM_EFF);
	/* the routed tokens' hidden states go down and their outputs come back */
	double xfer = 2.0 * dm->activation_bytes / link;
	c.cpu_ns = (fmax(cpu_compute, cpu_mem) + xfer) * 1e9 + dm->moe_layers * OFFLOAD_CPU_LAYER_NS;
	return c;
}

double offload_lru_hit(double slots, double experts)
{
	if (!(experts > 0))
		return 1;
	if (!(slots > 0))
		return 0;
	return fmin(1.0, slots / experts);
}
