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
#include "plan/run.h"
#include "replay/deploy.h"
#include "replay/scenario.h"
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
	struct rules *rules = NULL;
	struct xform_opts xo;
	xform_opts_init(&xo);
	int rc = scenario_load(&sc, NULL, (const char *const *)argv + first_set, argc - first_set, &d);
	if (rc == 0 && pin && (rc = rules_new(&rules, &d)) == 0 &&
	    (rc = rules_add(rules, "pin", pin, RULE_PIN, "--pin", &d)) == 0)
		xo.rules = rules;
	if (rc == 0)
		rc = catalog_load(&cat, NULL, &d);
	struct deployment dep;
	bool built = false;
	if (rc == 0) {
		rc = deploy_build(&dep, &sc, cat, NULL, NULL, &d);
		built = rc == 0;
	}
	struct run_result *res = malloc(sizeof(*res));
	bool ran = false;
	if (rc == 0 && !res)
		rc = diag_set(&d, DIAG_ENOMEM, "out of memory");
	double t0 = now_s();
	if (rc == 0) {
		struct run_setup rs = {.dep = &dep,
				       .replay = {.trace_path = argv[1], .xform = pin ? &xo : NULL}};
		rc = run_replay(&rs, res, &d);
		ran = true;
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
	if (rc != 0) {
		fprintf(stderr, "bench_replay: %s\n", d.msg);
		if (ran)
			run_release(res);
		free(res);
		if (built)
			deploy_release(&dep);
		rules_free(rules);
		catalog_free(cat);
		return 2;
	}
	const struct replay_stats st = res->st;
	const struct metrics_summary sum = res->sum;
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
	printf("replicas         %d (router %s)\n", (int)deploy_replicas(&dep, NULL),
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
	run_release(res);
	free(res);
	deploy_release(&dep);
	rules_free(rules);
	catalog_free(cat);
	return 0;
}
