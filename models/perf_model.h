/* SPDX-License-Identifier: Apache-2.0
 * perf_model: the roofline step-latency model behind models/perf.h.
 *
 * One engine step costs a fixed overhead plus the larger of its compute time
 * and its memory time:
 *
 *   step_ns = overhead_ns + max(compute_ns, memory_ns)
 *   compute_ns = matmul FLOPs / (matmul peak x eff_compute)
 *              + (attention + lm-head FLOPs) / (16-bit peak x eff_compute)
 *   memory_ns  = (weight bytes + KV bytes read and written) / (bandwidth x eff_bw)
 *
 * Both terms are affine in the batch counts, which is what lets
 * perf_decode_run_ns sum k decode steps in O(1).  docs/performance-model.md
 * gives the equations, the parameters and their sources.
 *
 * struct perf_model is plain data the caller owns: perf_model_init fills it
 * from the catalogue and it keeps no pointer into the catalogue, so it stays
 * valid after catalog_free and may be copied or shared read-only between
 * threads.  This version models one GPU (tp = 1) and dense GQA models.
 */
#ifndef MODELS_PERF_MODEL_H
#define MODELS_PERF_MODEL_H

#include <stdbool.h>
#include <stdint.h>

#include "base/diag.h"
#include "models/catalog.h"
#include "models/perf.h"

struct perf_model {
	/* what was resolved (canonical catalogue ids) */
	char hardware_id[CAT_ID_MAX];
	char model_id[CAT_ID_MAX];
	char weight_format_id[CAT_ID_MAX];
	char kv_dtype_id[CAT_ID_MAX];
	char family_id[CAT_ID_MAX];
	int tp;
	enum cat_dtype matmul_dtype;  /* tensor path of the weight matmuls */

	/* machine: peaks and the family's efficiency factors */
	double matmul_peak_flops;     /* FLOP/s, dense, of matmul_dtype */
	double bf16_peak_flops;       /* FLOP/s, dense 16-bit: attention, lm-head */
	double mem_bw_bytes;          /* bytes/s, peak */
	double eff_compute;
	double eff_bw;
	double overhead_ns;           /* fixed per step */

	/* work per unit of a batch */
	double matmul_flops_per_token;/* 2 x non-embedding params */
	double attn_flops_per_pair;   /* 4 x layers x heads x head_dim */
	double lm_head_flops_per_seq; /* 2 x hidden x vocab */
	double weight_bytes_per_step; /* every matrix once (no embedding gathers) */
	double kv_bytes_per_token;    /* K and V of every layer */

	/* the same as time: ns per unit, after efficiency */
	double ns_per_token;          /* compute, per new token */
	double ns_per_pair;           /* compute, per attention pair */
	double ns_per_seq;            /* compute, per sequence (lm-head) */
	double ns_weights;            /* memory, per step */
	double ns_per_kv_token;       /* memory, per KV token read or written */
};

/* Fill pm for one hardware/model/format combination.  weight_format and
 * kv_dtype NULL mean "bf16"; names are ids or aliases (catalog.h).  tp must
 * be 1.  Returns 0 or DIAG_EINPUT (unknown name, tp != 1, an architecture
 * this version does not model, hardware without a tensor rate for the
 * format).  pm is unspecified on failure. */
int perf_model_init(struct perf_model *pm, const struct catalog *cat,
		    const char *hardware_id, const char *model_id,
		    const char *weight_format, const char *kv_dtype, int tp,
		    struct diag *d);

/* True when pm holds a usable model (positive peaks, finite non-negative
 * costs per unit).  For assert() and tests. */
bool perf_model_check(const struct perf_model *pm);

/* What limited a step. */
enum perf_bound {
	PERF_BOUND_OVERHEAD = 0,  /* the fixed overhead exceeds both terms */
	PERF_BOUND_COMPUTE,
	PERF_BOUND_MEMORY,
};

/* "overhead", "compute", "memory" (static strings). */
const char *perf_bound_name(enum perf_bound b);

/* One step taken apart, for `predict` and utilisation reports. */
struct perf_breakdown {
	double matmul_flops;
	double attn_flops;
	double lm_head_flops;
	double flops;                 /* sum of the three */
	double weight_bytes;
	double kv_bytes;              /* KV read plus KV written */
	double bytes;
	double compute_ns;
	double memory_ns;
	double overhead_ns;
	double step_ns;               /* == perf_step_ns */
	enum perf_bound bound;
	double flops_fraction;        /* achieved FLOP/s over the matmul peak */
	double bw_fraction;           /* achieved bytes/s over peak bandwidth */
};

/* Take step b apart.  An empty batch (new_tokens == 0) is all zeros. */
void perf_step_breakdown(const struct perf_model *pm, const struct perf_batch *b,
			 struct perf_breakdown *out);

#endif
