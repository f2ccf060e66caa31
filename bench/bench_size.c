/* SPDX-License-Identifier: Apache-2.0
 * bench_size: how long `agentcap size` takes, and how fast an undersized
 * candidate is answered "no".
 *
 *     bench_size [OUT_DIR [JOBS]]
 *
 * JOBS: replays at once (default: the online cores), as size --jobs.  CPU
 * time is the process's, every thread's together.
 *
 * 1. A synthetic 50-engineer day (default profile, seed 1) sized over four
 *    hardware options (h100-sxm, l40s, rtx-pro-6000, hgx-h100-8) with the
 *    default objectives (ttft_p95=2s,tpot_p50=50ms): wall and CPU time,
 *    replays and simulator events per option.
 * 2. A synthetic 300-engineer day on one H100 (TP 1, one replica): the
 *    early "no" (wall time, events, simulated time reached), beside one
 *    replay to the end of the same team on a deployment that holds the
 *    objectives (one replica at TP 8), the time a sized candidate takes.
 * Teams are written to OUT_DIR (default bench/out) once and reused.
 */
#include "base/diag.h"
#include "base/pool.h"
#include "models/catalog.h"
#include "plan/size.h"
#include "replay/scenario.h"
#include "replay/slo.h"
#include "traces/synth.h"
#include "traces/synth_profile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static double wall_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double cpu_s(void)
{
	return (double)clock() / CLOCKS_PER_SEC;
}

static int team(const char *path, int engineers, struct diag *d)
{
	struct stat sb;
	if (stat(path, &sb) == 0)
		return 0;
	struct synth_profile *p = malloc(sizeof(*p));
	if (!p)
		return diag_set(d, DIAG_ENOMEM, "out of memory");
	int rc = synth_profile_load(p, NULL, d);
	struct synth_team_opts o = {.engineers = engineers, .days = 1, .seed = 1};
	if (rc == 0)
		rc = synth_team_write(p, &o, path, true, NULL, d);
	free(p);
	return rc;
}

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : "bench/out";
	long jobs = argc > 2 ? strtol(argv[2], NULL, 10) : sysconf(_SC_NPROCESSORS_ONLN);
	if (jobs < 1 || jobs > POOL_MAX_JOBS) {
		fprintf(stderr, "bench_size: JOBS '%s' (expected 1..%d)\n", argc > 2 ? argv[2] : "",
			POOL_MAX_JOBS);
		return 2;
	}
	mkdir(dir, 0777);
	char t50[4096], t300[4096];
	snprintf(t50, sizeof(t50), "%s/size-team50.jsonl.gz", dir);
	snprintf(t300, sizeof(t300), "%s/size-team300.jsonl.gz", dir);
	struct diag d;
	diag_init(&d);
	struct catalog *cat = NULL;
	struct scenario sc;
	struct slo slo;
	struct size_result *res = calloc(1, sizeof(*res));
	struct size_eval *e = malloc(sizeof(*e));
	int rc = res && e ? 0 : diag_set(&d, DIAG_ENOMEM, "out of memory");
	if (rc == 0)
		rc = catalog_load(&cat, NULL, &d);
	if (rc == 0)
		rc = scenario_load(&sc, NULL, NULL, 0, &d);
	if (rc == 0)
		rc = slo_parse(&slo, "ttft_p95=2s,tpot_p50=50ms", "objectives", &d);
	struct pool *pool = NULL;
	if (rc == 0)
		rc = pool_new(&pool, (int32_t)jobs, &d);
	if (rc == 0)
		rc = team(t50, 50, &d);
	if (rc == 0)
		rc = team(t300, 300, &d);
	if (rc != 0) {
		fprintf(stderr, "bench_size: %s\n", d.msg);
		return 2;
	}
	const char *hw[] = {"h100-sxm", "l40s", "rtx-pro-6000", "hgx-h100-8"};
	const char *traces[1] = {t50};
	uint64_t seeds[1] = {1};
	struct size_setup s = {
		.cat = cat, .base = &sc, .hardware = hw, .n_hardware = 4, .slo = &slo,
		.replay = {.context_policy = sc.context_policy},
		.traces = traces, .seeds = seeds, .replicates = 1, .confidence = 1.0, .pool = pool,
	};
	double w0 = wall_s(), c0 = cpu_s();
	rc = size_run(&s, res, &d);
	double w1 = wall_s(), c1 = cpu_s();
	if (rc != 0) {
		fprintf(stderr, "bench_size: %s\n", d.msg);
		return 3;
	}
	printf("== size: 50-engineer synthetic day (%lld calls), four hardware options, %ld jobs\n",
	       (long long)res->total_calls[0], jobs);
	for (size_t i = 0; i < res->n; i++) {
		const struct size_option *o = &res->opt[i];
		printf("  %-14s %s %3d GPUs (%d x TP%d/PP%d)  %2d replays  %9lld events\n",
		       o->hardware, o->found ? "found" : "none ", o->found ? o->best.gpus : 0,
		       o->found ? o->best.replicas : 0, o->found ? o->best.tp : 0,
		       o->found ? o->best.pp : 0, o->replays, (long long)o->events);
	}
	printf("size_50_engineers_4_options_wall_s %.2f\n", w1 - w0);
	printf("size_50_engineers_4_options_cpu_s %.2f\n", c1 - c0);
	size_result_release(res);

	/* 300 engineers on one H100 */
	traces[0] = t300;
	s.n_hardware = 1;
	struct replay_opts count = {.trace_path = t300};
	rc = replay_count(&count, &res->total_calls[0], &d);
	w0 = wall_s();
	c0 = cpu_s();
	if (rc == 0)
		rc = size_evaluate(&s, res, "h100-sxm", 1, 1, 1, 0, e, &d);
	w1 = wall_s();
	c1 = cpu_s();
	if (rc != 0) {
		fprintf(stderr, "bench_size: %s\n", d.msg);
		return 3;
	}
	printf("== 300-engineer synthetic day (%lld calls) on one H100, TP 1\n",
	       (long long)res->total_calls[0]);
	printf("  %s after %lld events, %.0f s of simulated time: %s\n",
	       e->meets ? "met" : "no", (long long)e->fig[0].events, e->fig[0].sim_s, e->why);
	printf("early_no_300_on_1_gpu_wall_s %.2f\n", w1 - w0);
	printf("early_no_300_on_1_gpu_cpu_s %.2f\n", c1 - c0);
	w0 = wall_s();
	c0 = cpu_s();
	rc = size_evaluate(&s, res, "h100-sxm", 8, 1, 1, 0, e, &d);
	w1 = wall_s();
	c1 = cpu_s();
	if (rc != 0) {
		fprintf(stderr, "bench_size: %s\n", d.msg);
		return 3;
	}
	printf("  the same team on 1 x TP8: %s after %lld events\n", e->meets ? "met" : "no",
	       (long long)e->fig[0].events);
	printf("sized_candidate_300_wall_s %.2f\n", w1 - w0);
	printf("sized_candidate_300_cpu_s %.2f\n", c1 - c0);
	free(e);
	free(res);
	pool_free(pool);
	catalog_free(cat);
	return 0;
}
