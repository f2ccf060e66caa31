/* SPDX-License-Identifier: Apache-2.0
 * bench_replay: replay a trace on the default scenario and print how fast the
 * simulator went: wall time, simulated calls per second, events per second,
 * engine steps per step event (how much decode runs coalesce) and peak RSS.
 *
 *     bench_replay TRACE [dotted.key=value ...]
 */
#include "models/catalog.h"
#include "models/memory.h"
#include "models/perf_model.h"
#include "replay/replay.h"
#include "replay/scenario.h"
#include "reports/metrics.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: bench_replay TRACE [dotted.key=value ...]\n");
		return 2;
	}
	struct diag d;
	diag_init(&d);
	struct scenario sc;
	struct catalog *cat = NULL;
	struct perf_model pm;
	int rc = scenario_load(&sc, NULL, (const char *const *)argv + 2, argc - 2, &d);
	if (rc == 0)
		rc = catalog_load(&cat, NULL, &d);
	struct perf_opts po;
	perf_opts_init(&po);
	po.hardware = sc.hardware;
	po.model = sc.model;
	po.weight_format = sc.weight_format;
	po.kv_dtype = sc.kv_cache_dtype;
	po.engine = sc.engine_profile[0] ? sc.engine_profile : NULL;
	po.tp = sc.tensor_parallel_size;
	po.pp = sc.pipeline_parallel_size;
	po.gpu_expert_fraction = sc.offload_gpu_expert_fraction;
	po.host = (struct offload_host){ sc.host_memory_gb, sc.host_mem_bw_gbs, sc.host_tflops,
					 sc.host_link_gbs };
	if (rc == 0)
		rc = perf_model_init_opts(&pm, cat, &po, &d);
	struct engine_config cfg = sc.engine;
	if (rc == 0 && cfg.kv_cache_tokens == 0) {
		struct mem_plan plan;
		struct mem_opts mo;
		mem_opts_init(&mo);
		mo.hardware = sc.hardware;
		mo.model = sc.model;
		mo.weight_format = sc.weight_format;
		mo.kv_dtype = sc.kv_cache_dtype;
		mo.tp = sc.tensor_parallel_size;
		mo.pp = sc.pipeline_parallel_size;
		mo.gpu_memory_utilization = cfg.gpu_memory_utilization;
		mo.max_num_batched_tokens = cfg.max_num_batched_tokens;
		mo.gpu_expert_fraction = sc.offload_gpu_expert_fraction;
		mo.mla_expanded = pm.mla_expanded;
		rc = mem_plan_opts(&plan, cat, &mo, &d);
		cfg.kv_cache_tokens = plan.kv_capacity_tokens;
	}
	if (rc == 0 && cfg.max_model_len == 0)
		cfg.max_model_len = catalog_model(cat, sc.model)->max_context;
	struct metrics *m = metrics_new();
	struct replay_stats st;
	double t0 = now_s();
	if (rc == 0) {
		struct replay_opts o = {.trace_path = argv[1]};
		rc = replay_run(&o, &cfg, sim_perf_from_model(&pm), metrics_sink(m), &st, &d);
	}
	double wall = now_s() - t0;
	struct metrics_summary sum;
	if (rc == 0)
		rc = metrics_summarize(m, &sum, &d);
	if (rc != 0) {
		fprintf(stderr, "bench_replay: %s\n", d.msg);
		metrics_free(m);
		catalog_free(cat);
		return 2;
	}
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	printf("trace            %s\n", argv[1]);
	printf("calls            %lld (%lld sessions)\n", (long long)st.calls, (long long)st.sessions);
	printf("wall_s           %.3f\n", wall);
	printf("calls_per_s      %.0f\n", (double)st.calls / wall);
	printf("events           %lld\n", (long long)st.sim.events);
	printf("events_per_s     %.0f\n", (double)st.sim.events / wall);
	printf("engine_steps     %lld in %lld step events (%.1f steps per event)\n",
	       (long long)st.sim.steps, (long long)st.sim.step_events,
	       (double)st.sim.steps / (double)(st.sim.step_events ? st.sim.step_events : 1));
	printf("simulated_s      %.1f\n", sum.duration_s);
	printf("peak_rss_mib     %.1f\n", (double)ru.ru_maxrss / 1024.0);
	printf("peak_sessions_in_flight %lld\n", (long long)st.peak_sessions_in_flight);
	metrics_free(m);
	catalog_free(cat);
	return 0;
}
