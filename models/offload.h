/* SPDX-License-Identifier: Apache-2.0
 * offload: mixture-of-experts weights kept in host RAM (llama.cpp
 * --n-cpu-moe, hybrid CPU/GPU engines).
 *
 * The GPUs hold the dense weights, the KV cache and an LRU cache of experts
 * (a fraction f of every MoE layer's routed experts); the rest live in
 * system RAM.  Under uniform routing an LRU cache holding a fraction f of
 * equally popular experts hits with probability f, so of the D experts a
 * step touches per layer, D (1 - f) are missing.  Each step either
 *   - streams the missing experts over the host link and runs them on the
 *     GPU:  stream_ns = missing bytes / (link x OFFLOAD_LINK_EFF), or
 *   - runs the tokens routed to missing experts on the CPU, reading those
 *     experts from RAM:  cpu_ns = max(FLOPs / (cpu peak x OFFLOAD_CPU_EFF),
 *     bytes / (RAM bandwidth x OFFLOAD_RAM_EFF)) plus moving the tokens'
 *     activations over the link both ways,
 * whichever is cheaper.  Streaming costs the same at any batch once every
 * expert is touched, while CPU work grows with the tokens, so small decode
 * batches compute on the CPU and large prefill chunks stream: the choice
 * flips where the two costs cross, as in llama.cpp, which copies host
 * weights to the GPU for batches above a threshold.
 */
#ifndef MODELS_OFFLOAD_H
#define MODELS_OFFLOAD_H

/* The host side of a machine.  Zero fields take the defaults below. */
struct offload_host {
	double memory_gb;     /* RAM for expert weights (0: no limit checked) */
	double mem_bw_gbs;    /* CPU memory bandwidth, peak */
	double tflops;        /* CPU dense matmul peak (AVX-512/AMX, BF16) */
	double link_gbs;      /* GPU <-> host per GPU, per direction
				 (0: the hardware's host link) */
};

/* Defaults: a workstation that can hold 512 GB of RAM (8-channel
 * DDR5-4800: 8 x 38.4 GB/s; 32 cores x 3.5 GHz x 32 FP32 FLOP/cycle with
 * two AVX-512 FMA units ~ 3.6 TFLOPS).  docs/performance-model.md cites
 * them. */
#define OFFLOAD_DEFAULT_MEM_BW_GBS 307.2
#define OFFLOAD_DEFAULT_TFLOPS 3.6
#define OFFLOAD_DEFAULT_LINK_GBS 32.0   /* PCIe 4.0 x16, when nothing is known */
/* Achievable fractions of those peaks. */
#define OFFLOAD_RAM_EFF 0.7
#define OFFLOAD_CPU_EFF 0.5
#define OFFLOAD_LINK_EFF 0.8
/* Fixed cost of one CPU hand-off per MoE layer (synchronisation, thread
 * wake-up), in ns. */
#define OFFLOAD_CPU_LAYER_NS 20000.0

enum offload_choice {
	OFFLOAD_NONE = 0,     /* nothing missing on the GPU */
	OFFLOAD_STREAM,       /* copy missing experts to the GPU */
	OFFLOAD_CPU,          /* compute them on the CPU */
};

/* "none", "stream", "cpu" (static strings). */
const char *offload_choice_name(enum offload_choice c);

/* Host figures with defaults filled in; host_link_gbs is the hardware's
 * host link (0 when unknown). */
struct offload_host offload_host_resolve(const struct offload_host *h, double host_link_gbs);

/* What one step needs from the host (sums over MoE layers). */
struct offload_demand {
	double missing_experts;    /* expert-layers touched but not on the GPU */
	double expert_bytes;       /* bytes of one expert of one layer */
	double host_token_experts; /* (token, expert) pairs routed to them */
	double flops_per_token_expert;
	double activation_bytes;   /* hidden states sent to the CPU, summed over
				      layers (the outputs come back: x2) */
	double moe_layers;         /* layers that hand work to the CPU */
	double gpus;               /* links used in parallel (tensor parallel) */
};

struct offload_cost {
	double stream_ns;
	double cpu_ns;
};

/* Both options' cost for one step (0 and 0 when nothing is missing). */
struct offload_cost offload_step_cost(const struct offload_host *h,
				      const struct offload_demand *dm);

/* Hit fraction of an LRU holding `slots` of `experts` equally popular
 * experts: min(1, slots / experts). */
double offload_lru_hit(double slots, double experts);

#endif
