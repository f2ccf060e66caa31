/* SPDX-License-Identifier: Apache-2.0
 * bench_replay: replay a trace on the default scenario and print how fast the
 * simulator went: wall time, simulated calls per second, events per second,
 * engine steps per step event (how much decode runs coalesce) and peak RSS.
 *
 *     bench_replay TRACE [--pin PATTERN] [dotted.key=value ...]
 *
 * With --pin the replay applies a PCRE2 pin rule to every segment's text as
 * the trace streams (the cache-bust what-if), and a second pass reads the
 * trace again timing nothing but the rule evaluation, so the share of the
 * replay's wall time that rules cost is printed (rules_share_pct).
 *
 * `replicas=N` and `router.*` settings replay on a cluster (bench/run_route.sh
 * sets them); the report then adds the routing policy, the token-weighted
 * prefix-cache hit rate and the p95 TTFT, so the cost of routing can be read
 * beside what it buys.  Peak RSS is the process's own (getrusage): run one
 * configuration per process.
 */
#include "models/catalog.h"
#include "models/memory.h"
#include "models/perf_model.h"
#include "replay/replay.h"
#include "replay/scenario.h"
#include "reports/metrics.h"
#include "traces/reader.h"
#include "traces/rules.h"
#include "traces/trace.h"
#include "traces/xform.h"

#include <string.h>

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
		fprintf(stderr, "usage: bench_replay TRACE [--pin PATTERN] [dotted.key=value ...]\n");
		return 2;
	}
	const char *pin = NULL;
	int first_set = 2;
	if (argc >= 4 && strcmp(argv[2], "--pin") == 0) {
		pin = argv[3];
		first_set = 4;
	}
	struct diag d;
	diag_init(&d);
	struct scenario sc;
	struct catalog *cat = NULL;
	struct perf_model pm;
	struct rules *rules = NULL;
	struct xform_opts xo;
	xform_opts_init(&xo);
	int rc = scenario_load(&sc, NULL, (const char *const *)argv + first_set, argc - first_set, &d);
	if (rc == 0 && pin && (rc = rules_new(&rules, &d)) == 0 &&
	    (rc = rules_add(rules, "pin", pin, RULE_PIN, "--pin", &d)) == 0)
		xo.rules = rules;
	if (rc == 0)
		rc = catalog_load(&cat, NULL, &d);
	if (rc == 0)
		rc = scenario_resolve(&sc, cat, NULL, &d);
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
		struct replay_opts o = {.trace_path = argv[1], .xform = pin ? &xo : NULL,
					.replicas = sc.replicas, .router = &sc.router};
		rc = replay_run(&o, &cfg, sim_perf_from_model(&pm), metrics_sink(m), &st, &d);
	}
	double wall = now_s() - t0;
	/* the rules alone: read the trace again and time only rules_apply */
	double rules_s = 0, read_s = 0;
	struct rules_stats rst = {0};
	if (rc == 0 && pin) {
		struct trace_reader *tr = NULL;
		double r0 = now_s();
		rc = trace_reader_open(&tr, argv[1], TRACE_FMT_AUTO, &d);
		if (rc == 0)
			trace_reader_set_keep_text(tr, true);
		struct trace_session *s = NULL;
		int got;
		while (rc == 0 && (got = trace_reader_next(tr, &s, &d)) == 1) {
			double a = now_s();
			rc = rules_apply(rules, s, &rst, &d);
			rules_s += now_s() - a;
			trace_session_free(s);
		}
		if (rc == 0 && got < 0)
			rc = got;
		trace_reader_free(tr);
		read_s = now_s() - r0 - rules_s;
	}
	struct metrics_summary sum;
	if (rc == 0)
		rc = metrics_summarize(m, &sum, &d);
	if (rc != 0) {
		fprintf(stderr, "bench_replay: %s\n", d.msg);
		rules_free(rules);
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
	printf("replicas         %d (router %s)\n", (int)sc.replicas,
	       router_policy_name(sc.router.policy));
	printf("hit_rate         %.4f\n", sum.prefix_cache_hit_rate);
	printf("p95_ttft_ms      %.1f\n", sum.ttft_ms.p95);
	printf("simulated_s      %.1f\n", sum.duration_s);
	printf("peak_rss_mib     %.1f\n", (double)ru.ru_maxrss / 1024.0);
	printf("cpu_s            %.3f (user + system; wall time counts other processes' load too)\n",
	       (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
		       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6);
	printf("peak_sessions_in_flight %lld\n", (long long)st.peak_sessions_in_flight);
	if (pin) {
		printf("rules            1 pin rule '%s', JIT %s\n", pin, rules_jit(rules) ? "on" : "off");
		printf("rules_segments   %lld with text, %lld pinned, %lld matches\n",
		       (long long)rst.segments_seen, (long long)rst.segments_pinned, (long long)rst.matches);
		printf("rules_s          %.3f (reading the trace again without replay: %.3f s)\n",
		       rules_s, read_s);
		printf("rules_share_pct  %.2f of the replay's wall time\n", 100 * rules_s / wall);
	}
	rules_free(rules);
	metrics_free(m);
	catalog_free(cat);
	return 0;
}
