/* SPDX-License-Identifier: Apache-2.0
 * scenario: what to simulate, read from a JSON file and `--set` overrides.
 *
 * A scenario names the model, the hardware, the weight and KV-cache formats,
 * the engine settings (vLLM's names under "engine") and the latency SLOs.
 * Every key has a type and a range in one schema table; an unknown key or a
 * wrong type is an input error naming the file (or the --set argument), the
 * dotted key path and what was expected.  docs/scenario.md lists the keys.
 *
 * Values that depend on the model and hardware (KV capacity, max_model_len)
 * may be left out; scenario_load leaves them 0 and the caller derives them
 * from the memory model.
 */
#ifndef REPLAY_SCENARIO_H
#define REPLAY_SCENARIO_H

#include "sim/sim.h"

#include <stdint.h>

#define SCENARIO_STR_MAX 128

struct scenario {
	char name[SCENARIO_STR_MAX];
	char model[SCENARIO_STR_MAX];
	char hardware[SCENARIO_STR_MAX];
	char weight_format[SCENARIO_STR_MAX];
	char kv_cache_dtype[SCENARIO_STR_MAX];
	int32_t tensor_parallel_size;
	int32_t pipeline_parallel_size;   /* 1 unless set */
	char engine_profile[SCENARIO_STR_MAX]; /* "" = the default (vllm) */
	char profile[SCENARIO_STR_MAX];   /* measured step profile CSV; "" = none */
	double offload_gpu_expert_fraction; /* 1 unless set: MoE experts on GPU */
	double host_memory_gb;            /* host side of expert offload; 0 = default */
	double host_mem_bw_gbs;
	double host_tflops;
	double host_link_gbs;
	int32_t replicas;
	struct engine_config engine;  /* kv_cache_tokens, max_model_len: 0 = derive */
	double slo_ttft_ms;           /* 0 = no objective */
	double slo_tpot_ms;
	char source[512];             /* file it came from, "(built-in default)" */
};

/* The default scenario shipped with agentcap (scenarios/default.json). */
extern const char scenario_default_json[];

/* Load `path` (NULL: the built-in default), then apply each "dotted.key=value"
 * in sets[0..n_sets).  A value is read as JSON when it parses as JSON
 * (numbers, true/false, null, quoted strings), else as a bare string. */
int scenario_load(struct scenario *sc, const char *path, const char *const *sets, int n_sets,
		  struct diag *d);

#endif
