/* SPDX-License-Identifier: Apache-2.0
 * The quoted case of issue 33: a 30-engineer one-office team (the synthetic
 * generator's default profile, one time zone, one day, seed 1) on
 * Llama-3.1-8B with vLLM on up to 4 H100, the autoscaler targeting 4 calls
 * in flight per replica.  Under the HPA's rules (and KEDA's, which drive an
 * HPA between 1 and max) the cluster starts fewer than 40 replicas in the
 * day; the old cooldown rule, which scales in to the instantaneous demand,
 * starts several times as many, costs more GPU-hours and has a longer TTFT
 * tail.  A broken HPA (no scale-down window) starts hundreds, so this fails.
 *
 * Each replay of the day takes well under a second in a release build (a
 * few seconds under the sanitizers): the team and the deployment are built
 * once.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "replay/deploy.h"
#include "replay/scenario.h"
#include "reports/cluster.h"
#include "traces/synth.h"
#include "traces/synth_profile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct team {
	char path[64];
	struct catalog *cat;
	int64_t calls;
};

static int setup(void **state)
{
	struct team *t = calloc(1, sizeof(*t));
	struct synth_profile *p = malloc(sizeof(*p));
	if (!t || !p)
		return -1;
	struct diag d;
	diag_init(&d);
	snprintf(t->path, sizeof(t->path), "/tmp/agentcap-team30-XXXXXX");
	int fd = mkstemp(t->path);
	if (fd < 0)
		return -1;
	close(fd);
	struct synth_team_opts o = {.engineers = 30, .days = 1, .seed = 1};
	struct synth_team_stats ts;
	int rc = synth_profile_load(p, NULL, &d);
	if (rc == 0) {
		synth_profile_keep_zones(p, 1); /* one office: --timezones 1 */
		rc = synth_team_write(p, &o, t->path, true, &ts, &d);
	}
	free(p);
	if (rc == 0)
		rc = catalog_load(&t->cat, NULL, &d);
	if (rc != 0) {
		fprintf(stderr, "%s\n", d.msg);
		return -1;
	}
	t->calls = ts.calls;
	*state = t;
	return 0;
}

static int teardown(void **state)
{
	struct team *t = *state;
	unlink(t->path);
	catalog_free(t->cat);
	free(t);
	return 0;
}

struct day {
	int64_t starts, completed, scale_ins;
	double p95_ttft_s, gpu_hours;
	double *ttft;
	int64_t n, cap;
};

static void on_request(void *ctx, const struct res_request *r)
{
	struct day *y = ctx;
	if (r->status != RES_COMPLETED)
		return;
	y->completed++;
	if (y->n == y->cap) {
		y->cap = y->cap ? 2 * y->cap : 4096;
		y->ttft = realloc(y->ttft, (size_t)y->cap * sizeof(*y->ttft));
		assert_non_null(y->ttft);
	}
	y->ttft[y->n++] = (double)(r->first_token_ns - r->arrival_ns) / 1e9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* The day under `policy` (and any further --set). */
static void run_day(const struct team *t, const char *policy, const char *extra, struct day *y)
{
	memset(y, 0, sizeof(*y));
	char pol[64];
	snprintf(pol, sizeof(pol), "autoscale.policy=%s", policy);
	const char *sets[] = {"model=llama-3.1-8b", "hardware=h100-sxm", "replicas=4",
			      "autoscale.enabled=true", "autoscale.target=4", pol, extra};
	int n_sets = extra ? 7 : 6;
	struct scenario *sc = malloc(sizeof(*sc));
	struct deployment *dp = malloc(sizeof(*dp));
	assert_non_null(sc);
	assert_non_null(dp);
	struct diag d;
	diag_init(&d);
	if (scenario_load(sc, NULL, sets, n_sets, &d) != 0 ||
	    deploy_build(dp, sc, t->cat, NULL, NULL, &d) != 0)
		fail_msg("%s: %s", policy, d.msg);
	struct cluster *cl = cluster_new(4, (struct res_sink){.ctx = y, .request = on_request});
	assert_non_null(cl);
	struct replay_opts o = {.trace_path = t->path, .seed = 1};
	struct replay_stats st;
	if (deploy_run(dp, &o, NULL, cluster_sink(cl), &st, &d) != 0)
		fail_msg("%s: %s", policy, d.msg);
	y->starts = st.elastic.starts;
	y->scale_ins = st.elastic.scale_ins;
	qsort(y->ttft, (size_t)y->n, sizeof(*y->ttft), cmp_double);
	/* numpy's linear rule, as the report's percentiles */
	double pos = 0.95 * (double)(y->n - 1);
	int64_t lo = (int64_t)pos;
	double frac = pos - (double)lo;
	y->p95_ttft_s = lo + 1 < y->n ? y->ttft[lo] + frac * (y->ttft[lo + 1] - y->ttft[lo])
				      : y->ttft[lo];
	/* with replicas that come and go, GPU-hours are the billed replicas
	 * over the run as the records give it (one GPU each) */
	struct cluster_summary cs;
	cluster_summarize(cl, 0.0, 1, &cs);
	y->gpu_hours = cs.gpu_hours_provisioned;
	free(y->ttft);
	y->ttft = NULL;
	cluster_free(cl);
	deploy_release(dp);
	free(dp);
	free(sc);
}

static void test_one_office_team(void **state)
{
	const struct team *t = *state;
	struct day hpa, keda, cool;
	run_day(t, "hpa", NULL, &hpa);
	run_day(t, "keda", NULL, &keda);
	run_day(t, "cooldown", NULL, &cool);
	printf("# one-office team, %lld calls: starts hpa %lld keda %lld cooldown %lld; "
	       "P95 TTFT %.1f / %.1f / %.1f s; GPU-hours %.1f / %.1f / %.1f\n",
	       (long long)t->calls, (long long)hpa.starts, (long long)keda.starts,
	       (long long)cool.starts, hpa.p95_ttft_s, keda.p95_ttft_s, cool.p95_ttft_s,
	       hpa.gpu_hours, keda.gpu_hours, cool.gpu_hours);
	assert_int_equal(hpa.completed, t->calls);
	assert_int_equal(cool.completed, t->calls);
	/* the HPA: fewer than 40 replica starts a day */
	assert_true(hpa.starts > 0 && hpa.starts < 40);
	/* KEDA at min_replicas 1 is its HPA */
	assert_int_equal(keda.starts, hpa.starts);
	assert_true(keda.p95_ttft_s == hpa.p95_ttft_s);
	/* the old rule starts and stops replicas all day, and pays for it */
	assert_true(cool.starts > 40 && cool.starts > 2 * hpa.starts);
	assert_true(cool.p95_ttft_s > hpa.p95_ttft_s);
	assert_true(cool.gpu_hours > hpa.gpu_hours);
	/* without its scale-down window the HPA flaps as badly */
	struct day flap;
	run_day(t, "hpa", "autoscale.scale_down_window_s=0", &flap);
	assert_true(flap.starts > 2 * hpa.starts);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_office_team),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
