/* SPDX-License-Identifier: Apache-2.0
 * perf_model: the step-latency model behind models/perf.h.
 *
 * A step runs its kernels one after the other, and each kernel is limited
 * either by its FLOPs or by its bytes (a roofline per operation, summed):
 *
 *   step_ns = overhead
 *           + max(C_lin  T,        M_lin)             dense matrices
 *           + max(C_exp  T,        M_exp  D(T))       routed experts (MoE)
 *           + max(C_head S,        M_head)            lm-head
 *           + max(C_attn P,        M_kv   K)          full attention
 *           + max(C_sw   min(P, T W), M_sw min(K, S W))  sliding-window layers
 *           + max(C_lin_attn T,    M_state S)         linear-attention layers
 *           + tensor-parallel all-reduces + pipeline hand-offs
 *           + host-expert cost (offload; the cheaper of stream and CPU)
 *
 * and where the engine has step floors (models/floors.h) the operations'
 * sum gives way to the kernel-launch floor when that is larger, expert-
 * parallel all-to-alls add, and an engine that overlaps its host work takes
 * max(host, GPU) instead of their sum.
 *
 * with T new tokens, S sequences, P attention pairs, K KV tokens touched
 * (context after the step plus the new tokens written), D(T) the expected
 * distinct experts a batch touches (models/moe.h) and W the sliding window.
 * Every coefficient is precomputed by perf_model_init from the catalogue
 * (peaks, bandwidth, architecture), the hardware family's efficiency
 * factors and the engine profile (models/engine.h), split over the tensor-
 * parallel GPUs.  Pipeline stages run one batch in sequence, so their time
 * adds up (the simulator keeps one batch in flight per replica).
 *
 * A measured profile (models/profile.h) may override the result for one
 * hardware/model pair: the step time is then scaled by the measured over
 * modelled ratio interpolated at the batch's size.
 *
 * Decode runs.  Over k decode steps only P and K grow (by S per step), so
 * every term is piecewise affine in the step index with at most a few
 * breakpoints (the compute/memory crossover of each attention term and the
 * points where a window fills); perf_decode_run_ns sums each affine piece
 * in closed form: O(1) whatever k is.
 *
 * struct perf_model is plain data the caller owns: it keeps no pointer into
 * the catalogue or the engine table, so it stays valid after catalog_free
 * and may be copied or shared read-only between threads.  The only pointer
 * is the optional profile, borrowed: it must outlive the model.
 */
#ifndef MODELS_PERF_MODEL_H
#define MODELS_PERF_MODEL_H

#include <stdbool.h>
#include <stdint.h>

#include "base/diag.h"
#include "models/catalog.h"
#include "models/engine.h"
#include "models/floors.h"
#include "models/moe.h"
#include "models/offload.h"
#include "models/perf.h"
#include "models/spec.h"

struct perf_profile; /* models/profile.h */

/* Link latencies of one collective or hand-off, in ns: NVLink from NCCL
 * all-reduce timings (Vidur's H100 DGX profile: 16 MiB in 74 us over 8
 * GPUs, 46 us over 2, leaving ~7 us of fixed cost), PCIe and network links
 * several times slower. */
#define PERF_LINK_LATENCY_NVLINK_NS 7000.0
#define PERF_LINK_LATENCY_PCIE_NS 25000.0
#define PERF_LINK_EFF 0.9
/* The most tokens a step may have for an engine's matrix-vector kernels to
 * run it (llama.cpp: MMVQ_MAX_BATCH_SIZE, ggml-cuda mmvq.cuh). */
#define PERF_MATVEC_MAX_TOKENS 8

/* What to model.  Start from perf_opts_init. */
struct perf_opts {
	const char *hardware;
	const char *model;
	const char *weight_format;   /* NULL: "bf16" */
	const char *kv_dtype;        /* NULL: "bf16" */
	const char *engine;          /* engine id or alias; NULL: ENGINE_DEFAULT_ID */
	const struct engine_table *engines; /* NULL: the built-in table */
	int tp;                      /* tensor-parallel GPUs per stage, >= 1 */
	int pp;                      /* pipeline stages, >= 1 */
	int ep;                      /* expert parallelism: 1 (experts split by
					tensor parallelism) or tp (whole experts
					spread over the tp GPUs, all-to-all
					dispatch and combine); 0 = 1 */
	double gpu_expert_fraction;  /* share of each MoE layer's routed experts
					resident on the GPUs (an LRU cache), in
					[0, 1]; 1 = no offload */
	struct offload_host host;    /* host RAM/CPU for offloaded experts */
	const struct spec_opts *spec; /* speculative decoding; NULL: off */
	double power_limit_w;        /* board power limit per GPU (models/power.h):
					0 = the catalogue entry's, if any */
	bool no_flash_attention;     /* the engine's attention without flash
					attention (llama.cpp -fa 0), where its
					profile has attention_scale_without_fa */
	int64_t engine_build;        /* the engine's build number, where known
					(llama.cpp's "build <commit> (N)"); 0:
					unknown, taken as a current build */
	bool allow_unknown_compute;  /* hardware without any compute figure:
					model bandwidth only (compute terms 0,
					compute_unknown set) instead of failing */
};

/* tp = pp = 1, gpu_expert_fraction = 1, everything else NULL/0. */
void perf_opts_init(struct perf_opts *o);

struct perf_model {
	/* what was resolved (canonical ids) */
	char hardware_id[CAT_ID_MAX];
	char model_id[CAT_ID_MAX];
	char weight_format_id[CAT_ID_MAX];
	char kv_dtype_id[CAT_ID_MAX];
	char family_id[CAT_ID_MAX];
	char engine_id[ENGINE_NAME_MAX];
	int tp;
	int pp;
	int ep;                       /* 1, or tp under expert parallelism */
	enum cat_dtype matmul_dtype;  /* tensor path of the weight matmuls */
	bool vector_fallback;         /* no tensor rate: FP32 vector rate used */
	bool dequantizing;            /* weight-only format dequantized in the
					 kernels: weights stream at the engine's
					 quant_bw_scale */
	bool compute_unknown;         /* no compute figure at all: compute terms
					 are 0, only bandwidth-bound results
					 (decode) mean anything */
	bool rate_estimated;          /* that rate estimated from the family's
					 TFLOPS per GPU core (none published) */
	bool mla_expanded;            /* a multi-head latent attention model the
					 engine runs as plain multi-head
					 attention in this format (its
					 mla_formats): full K and V per head */

	/* machine, per GPU: peaks, and the factors applied to them */
	double matmul_peak_flops;     /* FLOP/s of the weight matmuls */
	double bf16_peak_flops;       /* FLOP/s of 16-bit attention and lm-head */
	double mem_bw_bytes;          /* bytes/s */
	double link_bw_bytes;         /* GPU-to-GPU, per direction (tp/pp > 1) */
	double link_latency_ns;
	double power_limit_w;         /* the limit applied; 0 none */
	double clock_fraction;        /* core clock under it over the rated clock
					 (models/power.h): scales every compute
					 rate and the GPU's fixed and per-kernel
					 times, not bandwidth; 1 without a limit */
	double core_clock_hz;         /* GPU cores x boost clock (per second);
					 0 unknown.  The rate of kernels bound
					 by instruction issue, not by a peak
					 (perf_model.c, core clock) */
	bool issue_bound_matmul;      /* the weight matmuls run at the engine's
					 quant_matmul_flops_per_core_clock x
					 core_clock_hz x eff_issue, not at a
					 tensor rate */
	double eff_issue;             /* family (catalog_eff_issue); 0 when the
					 matmuls are not issue bound */
	double sustained_clock;       /* of the rated clock, what the board holds
					 in those matmuls at its rating
					 (perf_sustained_clock); 1 when they are
					 not issue bound */
	double eff_compute;           /* family */
	double eff_bw;                /* family */
	double format_efficiency;     /* the weight format's tensor-core share
					 (cat_weight_format.tensor_efficiency)
					 when its matmuls run in its own dtype;
					 1 otherwise */
	double die_factor;            /* share of the bandwidth a package of
					 several dies reaches against one die
					 (catalog_die_factor); 1 for one die */
	char die_penalty_family[CAT_ID_MAX]; /* whose die_remote_penalty it
					 took; "" for one die */
	struct engine_params engine;  /* after family overrides */
	double overhead_ns;           /* fixed per step: family + engine + layers */

	/* architecture (whole replica) */
	double layers;
	double hidden;
	double moe_layers;
	double experts;               /* routed, per MoE layer; 0 dense */
	double experts_per_token;
	double window;                /* sliding window in tokens; 0 none */
	struct moe_routing routing;

	/* work per unit (whole replica, before the tensor-parallel split) */
	double matmul_flops_per_token;/* 2 x active matrix params (experts too) */
	double dense_flops_per_token; /* 2 x non-expert matrix params */
	double expert_flops_per_token;/* 2 x k x params of one expert x MoE layers */
	double attn_flops_per_pair;   /* full-attention layers */
	double sw_flops_per_pair;     /* sliding-window layers */
	double lin_attn_flops_per_token; /* linear-attention layers */
	double lm_head_flops_per_seq; /* 2 x hidden x vocab */
	double dense_weight_bytes;    /* non-expert matrices, norms */
	double expert_bytes;          /* one expert of one layer */
	double lm_head_bytes;
	double weight_bytes_per_step; /* dense + lm-head (+ experts at batch 1) */
	double kv_bytes_per_token;    /* K and V (or latent) of every layer */
	double kv_full_bytes_per_token; /* full-attention layers only */
	double kv_sw_bytes_per_token; /* sliding-window layers only */
	double state_bytes_per_seq;   /* linear-attention state, read + written */
	double kv_gpu_fraction;        /* KV copies across the TP group / tp */

	/* the same as time per GPU after efficiencies and the tp split (ns) */
	double ns_per_token;          /* C_lin: dense matrices, per new token */
	double ns_weights;            /* M_lin: dense matrices, per step */
	double ns_per_expert_token;   /* C_exp */
	double ns_per_expert;         /* M_exp: one distinct expert, all layers */
	double ns_per_seq;            /* C_head */
	double ns_lm_head;            /* M_head */
	/* M_lin, M_exp and M_head of a step of at most matvec_max_tokens
	 * tokens, which the engine runs through its matrix-vector kernels
	 * (their bytes per core clock: engine.h); 0 tokens and the same
	 * values as above when the engine has no such bound */
	double ns_weights_mv, ns_per_expert_mv, ns_lm_head_mv;
	double matvec_max_tokens;
	double ns_per_pair;           /* C_attn */
	double ns_per_kv_token;       /* M_kv */
	double ns_per_sw_pair;        /* C_sw */
	double ns_per_sw_kv_token;    /* M_sw */
	double ns_per_lin_attn_token; /* C_lin_attn */
	double ns_per_state_seq;      /* M_state */
	double ns_allreduce_fixed;    /* per step: latency of all all-reduces */
	double ns_allreduce_per_token;
	double ns_pp_fixed;           /* per step: pipeline hand-off latency */
	double ns_pp_per_token;
	double ns_host_routing_per_token; /* builds that route the experts'
					 tokens on the host, batched steps only
					 (engine.h moe_host_routing_us); 0 */

	/* floors that do not shrink with the work (models/floors.h) */
	struct floors floors;
	double gpu_fixed_ns;          /* overhead_ns minus the host's share */

	/* expert offload */
	double gpu_expert_fraction;   /* LRU hit fraction */
	struct offload_host host;     /* defaults filled in */

	/* speculative decoding (models/spec.h): the drafter, off unless
	 * perf_opts.spec asks for it; steps whose batch has spec_seqs add its
	 * cost */
	struct spec_model spec;

	const struct perf_profile *profile; /* borrowed; NULL: analytic only */
};

/* Fill pm.  Returns 0 or DIAG_EINPUT (unknown name, bad tp/pp, an engine
 * the table does not know, hardware without any compute rate for the
 * format, tp x pp beyond a system's GPU count).  pm is unspecified on
 * failure. */
int perf_model_init_opts(struct perf_model *pm, const struct catalog *cat,
			 const struct perf_opts *o, struct diag *d);

/* FP32 vector FLOP/s of hw estimated from the entries of its family that
 * publish both a vector rate and a core count: their mean TFLOPS per core
 * times hw's cores, per core and clock times hw's cores and clock when hw
 * and those entries give a clock; 0 when hw has no core count or no peer
 * has both. */
double perf_vector_flops_estimate(const struct catalog *cat, const struct cat_hardware *hw);

/* hw's GPU cores (SMs) times its boost clock in Hz, the clock taken as the
 * mean of its family's entries that give one when hw gives none; 0 when hw
 * has no core count (or nothing gives a clock).  perf_model.c, core clock,
 * says which kernels it bounds. */
double perf_core_clock_hz(const struct catalog *cat, const struct cat_hardware *hw);

/* The share of its rated clock hw holds in an issue-bound matmul at its
 * rated power, with sm_w the dynamic watts of one SM in that load at 1 GHz
 * (families.json sm_w_at_1ghz): the SMs' power grows with the cube of the
 * clock (the voltage follows it, models/power.h), so the clock the rating
 * feeds is cbrt((1 - POWER_FIXED_SHARE) tdp / (SMs sm_w)) GHz, at most the
 * rated one.  1 when sm_w, the rating, the SMs or the clock is unknown. */
double perf_sustained_clock(const struct catalog *cat, const struct cat_hardware *hw,
			    double sm_w);

/* The same with the default engine, pp = 1 and no offload. */
int perf_model_init(struct perf_model *pm, const struct catalog *cat,
		    const char *hardware_id, const char *model_id,
		    const char *weight_format, const char *kv_dtype, int tp,
		    struct diag *d);

/* Use profile p (NULL: none) for pm's steps; p must outlive pm's use. */
void perf_model_set_profile(struct perf_model *pm, const struct perf_profile *p);

/* True when pm holds a usable model.  For assert() and tests. */
bool perf_model_check(const struct perf_model *pm);

/* What limited a step: the largest share of its time. */
enum perf_bound {
	PERF_BOUND_OVERHEAD = 0,  /* fixed per-step and per-layer costs */
	PERF_BOUND_COMPUTE,       /* operations limited by FLOPs */
	PERF_BOUND_MEMORY,        /* operations limited by bytes */
	PERF_BOUND_INTERCONNECT,  /* all-reduces and pipeline hand-offs */
	PERF_BOUND_HOST,          /* experts streamed from or run on the host */
	PERF_BOUND_LAUNCH,        /* the kernel-launch floor (models/floors.h) */
};

/* "overhead", "compute", "memory", "interconnect", "host", "launch"
 * (static). */
const char *perf_bound_name(enum perf_bound b);

/* One step taken apart, for `predict` and utilisation reports. */
struct perf_breakdown {
	double matmul_flops;          /* dense and expert matrices */
	double attn_flops;
	double lm_head_flops;
	double flops;                 /* all of the above, whole replica */
	double weight_bytes;          /* read from GPU memory */
	double kv_bytes;              /* KV read plus written, state */
	double bytes;
	double experts_touched;       /* per MoE layer, expected */
	double compute_ns;            /* sum of every operation's FLOP time */
	double memory_ns;             /* sum of every operation's byte time */
	double compute_bound_ns;      /* time of operations FLOPs limited */
	double memory_bound_ns;       /* time of operations bytes limited */
	double overhead_ns;
	double comm_ns;               /* all-reduces, pipeline hand-offs and
					 expert-parallel all-to-alls */
	double host_ns;               /* offload, after the choice */
	enum offload_choice offload;
	double profile_ratio;         /* 1 without a profile */
	double step_ns;               /* == perf_step_ns */
	double spec_draft_ns;         /* of which the drafter's (speculative
					 decoding), 0 without */
	enum perf_bound bound;
	/* the step's terms as floors.h combines them */
	double ops_ns;                /* roofline: every operation's max(FLOP
					 time, byte time), summed */
	double weights_ns;            /* byte time of the weights read */
	double kv_ns;                 /* byte time of KV (and state) traffic */
	double launch_ns;             /* kernel floor: kernels x their least
					 times */
	double kernels;               /* kernels of the step */
	double alltoall_ns;           /* expert-parallel dispatch + combine
					 (part of comm_ns) */
	double imbalance;             /* busiest-GPU over mean expert load
					 (1 without expert parallelism) */
	double gpu_fixed_ns;          /* per-step GPU cost and per-layer gaps */
	double host_step_ns;          /* the engine's host work per step */
	double host_routing_ns;       /* of the step, the host's expert routing
					 the GPU waits for (old builds) */
	bool floor_binds;             /* launch floor above the roofline */
	bool graphed;                 /* the step runs as a CUDA graph */
	bool host_overlap;            /* step = max(host, GPU) */
	double flops_fraction;        /* achieved FLOP/s over the matmul peak x GPUs */
	double bw_fraction;           /* achieved bytes/s over peak bandwidth x GPUs */
};

/* Take step b apart.  An empty batch (new_tokens == 0) is all zeros. */
void perf_step_breakdown(const struct perf_model *pm, const struct perf_batch *b,
			 struct perf_breakdown *out);

/* The analytic time of b, ignoring any profile (used to build profiles). */
double perf_step_analytic_ns(const struct perf_model *pm, const struct perf_batch *b);

/* A decode step of `seqs` sequences, each `context` tokens long before it. */
struct perf_batch perf_decode_batch(int32_t seqs, int64_t context);

/* A prefill chunk of n tokens of one sequence on top of `cached` tokens. */
struct perf_batch perf_prefill_batch(int64_t n, int64_t cached);

/* Time to prefill `tokens` prompt tokens after `cached` ones in chunks of
 * at most `chunk` tokens (one step per chunk), in ns. */
double perf_prefill_ns(const struct perf_model *pm, int64_t tokens, int64_t cached,
		       int64_t chunk);

#endif
