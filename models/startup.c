/* SPDX-License-Identifier: Apache-2.0
 * startup: a replica's start-up parts (see startup.h). */
#include "models/startup.h"

void startup_parts(const struct engine_startup *e, const struct startup_opts *o,
		   double weight_bytes, int64_t layers, int32_t tp, int32_t pp,
		   struct startup_parts *out)
{
	int32_t gpus = tp * pp;
	struct startup_parts r = {0};
	r.provision_s = o->provision_s;
	r.image_pull_s = o->image_prepulled ? 0.0 : e->image_gb / o->image_pull_gbs;
	r.engine_start_s = e->engine_start_s + e->engine_start_per_gpu_s * (double)(gpus - 1);
	r.weight_load_s = weight_bytes / ((double)gpus * o->storage_gbs * 1e9);
	r.compile_s = o->compile_cache ? e->compile_cached_s : e->compile_cold_s;
	/* each pipeline stage captures its own layers, at once */
	double stage_layers = (double)layers / (double)pp;
	r.cuda_graph_s = e->cuda_graph_s_per_layer * stage_layers *
			 (1.0 + e->cuda_graph_tp_growth * (double)(tp - 1));
	r.warmup_s = e->warmup_s;
	r.server_s = r.provision_s + r.image_pull_s;
	r.model_load_s = r.engine_start_s + r.weight_load_s + r.compile_s + r.cuda_graph_s + r.warmup_s;
	r.total_s = r.server_s + r.model_load_s;
	*out = r;
}
