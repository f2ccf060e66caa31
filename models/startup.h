/* SPDX-License-Identifier: Apache-2.0
 * startup: how long a replica takes to start, as its parts.
 *
 * A replica started on a new machine passes through, in order:
 *   provision     the cloud's node provisioning (0 on a node already up);
 *   image pull    the engine's serving image (0 when pre-pulled): its
 *                 compressed size / the pull bandwidth;
 *   engine start  process start to the model's load, plus a worker (and its
 *                 communicator) per GPU beyond the first;
 *   weight load   each GPU loads its shard in parallel: weight bytes /
 *                 (GPUs x storage bandwidth per GPU);
 *   compile       torch.compile, cold or from a cache of an earlier start
 *                 (ranks compile in parallel: the same at any TP);
 *   CUDA graphs   capture per layer of a pipeline stage, growing with the
 *                 tensor-parallel GPUs beyond the first;
 *   warm-up       the first request's extra time.
 * The engine's figures and their sources are models/catalog/engines.json
 * (struct engine_startup); the scenario gives the rest (startup.*).
 * `model_load_s` is what loading the model alone takes (engine start
 * onwards): what an engine that loads on demand (Ollama) pays again on the
 * first call after it unloaded the model.
 */
#ifndef MODELS_STARTUP_H
#define MODELS_STARTUP_H

#include "models/engine.h"

#include <stdbool.h>
#include <stdint.h>

struct startup_opts {
	double provision_s;        /* >= 0 */
	double image_pull_gbs;     /* > 0 */
	bool image_prepulled;
	double storage_gbs;        /* > 0: per GPU */
	bool compile_cache;
};

struct startup_parts {
	double provision_s, image_pull_s, engine_start_s, weight_load_s;
	double compile_s, cuda_graph_s, warmup_s;
	double total_s;            /* every part */
	double server_s;           /* provision + image pull */
	double model_load_s;       /* engine start to warm-up */
};

/* The parts for engine e loading weight_bytes over tp x pp GPUs (tp, pp
 * >= 1) of a model of `layers` decoder layers. */
void startup_parts(const struct engine_startup *e, const struct startup_opts *o,
		   double weight_bytes, int64_t layers, int32_t tp, int32_t pp,
		   struct startup_parts *out);

#endif
