/* SPDX-License-Identifier: Apache-2.0
 * test_scale: resampling engineer-days into a larger team.  Start order and
 * distinct ids; the same seed gives the same team and another seed another;
 * N a multiple of the pool uses every engineer-day equally often (so load
 * scales exactly by N / pool) and keeps every time of day; a source of two
 * weeks keeps weekends idle; shared contents keep their identity and one
 * engineer's contents are salted per copy; request-level traces count as
 * one engineer; jitter stays within the day; days are counted in each
 * engineer's own time zone, so synthetic teams spread over four time zones
 * keep their day count when scaled (to their own size or to many); replay
 * --engineers replays the team; bad options fail.
 */
#include "base/diag.h"
#include "replay/replay.h"
#include "replay/scale.h"
#include "traces/reader.h"
#include "traces/synth.h"
#include "traces/synth_profile.h"
#include "traces/trace.h"

#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <cmocka.h>

#define DAY 86400.0

static void scratch(char *out, size_t n, const char *name)
{
	mkdir(AC_BIN_DIR "/tests/replay/scratch", 0777);
	snprintf(out, n, "%s/tests/replay/scratch/%s", AC_BIN_DIR, name);
}

/* A team of `eng` engineers over `days` days: engineer e works on the days
 * `works(e, day)` allows, 1-3 sessions a day between 8:00 and 18:00 plus
 * e hours, each of 1-4 calls.  Every prompt starts with the team's "sys",
 * then the engineer's "repo-e", then its own content.  Returns sessions. */
static int write_team(const char *path, int eng, int days, bool weekends_off, double *tods,
		      int max_tods)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs("{\"format\":\"agentcap-trace\",\"version\":1}\n", f);
	uint64_t x = 0x9e3779b97f4a7c15ULL;
	int n = 0;
	for (int day = 0; day < days; day++) {
		/* sessions of one day, in start order across engineers */
		double t[64];
		int who[64], m = 0;
		for (int e = 0; e < eng; e++) {
			if (weekends_off && day % 7 >= 5)
				continue;
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			int k = 1 + (int)(x % 3);
			for (int i = 0; i < k && m < 64; i++) {
				x ^= x << 13, x ^= x >> 7, x ^= x << 17;
				t[m] = day * DAY + (8 + e) * 3600.0 + (double)(x % 36000) + (double)(x % 1000) / 1000.0;
				who[m++] = e;
			}
		}
		for (int i = 1; i < m; i++) /* insertion sort by time */
			for (int j = i; j > 0 && t[j] < t[j - 1]; j--) {
				double tt = t[j];
				t[j] = t[j - 1];
				t[j - 1] = tt;
				int w = who[j];
				who[j] = who[j - 1];
				who[j - 1] = w;
			}
		for (int i = 0; i < m; i++) {
			if (tods && n < max_tods)
				tods[n] = t[i] - day * DAY;
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			int calls = 1 + (int)(x % 4);
			fprintf(f, "{\"session\":\"d%d-%d\",\"engineer\":\"eng%d\",\"task\":\"t%d\",\"t\":%.3f,"
				"\"prompt\":[[\"sys\",64],[\"repo-%d\",32],[\"own-%d-%d\",%d]],\"output_tokens\":%d}\n",
				day, i, who[i], n, t[i], who[i], day, i, 1 + (int)(x % 50), 1 + (int)(x % 20));
			for (int c = 1; c < calls; c++)
				fprintf(f, "{\"session\":\"d%d-%d\",\"task\":\"t%d\",\"gap\":%d,\"extends\":true,"
					"\"prompt\":[[\"more-%d-%d-%d\",%d]],\"output_tokens\":%d}\n",
					day, i, n, 1 + c, day, i, c, 5 + c, 3 + c);
			n++;
		}
	}
	assert_int_equal(fclose(f), 0);
	return n;
}

struct team {
	struct trace_session **s;
	size_t n;
	struct scale_info info;
};

static int scale_all(const char *path, const struct scale_opts *o, struct team *t, struct diag *d)
{
	memset(t, 0, sizeof(*t));
	diag_init(d);
	struct trace_reader *r;
	int rc = trace_reader_open(&r, path, TRACE_FMT_AUTO, d);
	if (rc != 0)
		return rc;
	struct scale *sc;
	rc = scale_open(&sc, r, o, d);
	if (rc != 0) {
		trace_reader_free(r);
		return rc;
	}
	size_t cap = 0;
	struct trace_session *s;
	while ((rc = scale_next(sc, &s, d)) == 1) {
		if (t->n == cap) {
			cap = cap ? 2 * cap : 64;
			t->s = realloc(t->s, cap * sizeof(*t->s));
		}
		t->s[t->n++] = s;
	}
	scale_get_info(sc, &t->info);
	scale_free(sc);
	trace_reader_free(r);
	return rc;
}

static void team_free(struct team *t)
{
	for (size_t i = 0; i < t->n; i++)
		trace_session_free(t->s[i]);
	free(t->s);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Start order, distinct session ids, valid sessions. */
static void check_stream(const struct team *t)
{
	uint64_t *ids = malloc((t->n + 1) * sizeof(*ids));
	for (size_t i = 0; i < t->n; i++) {
		assert_true(trace_session_check(t->s[i]));
		if (i > 0)
			assert_true(t->s[i]->t_s >= t->s[i - 1]->t_s);
		ids[i] = t->s[i]->id;
	}
	qsort(ids, t->n, sizeof(*ids), cmp_u64);
	for (size_t i = 1; i < t->n; i++)
		assert_true(ids[i] != ids[i - 1]);
	free(ids);
}

static void test_multiple_of_pool_keeps_load_and_times(void **state)
{
	(void)state;
	char path[512];
	scratch(path, sizeof(path), "scale_team3x2.jsonl");
	double tods[256];
	int S = write_team(path, 3, 2, false, tods, 256);
	struct scale_opts o = {.engineers = 12, .seed = 7};
	struct team t;
	struct diag d;
	assert_int_equal(scale_all(path, &o, &t, &d), 0);
	check_stream(&t);
	assert_int_equal(t.info.source_sessions, S);
	assert_int_equal(t.info.source_engineers, 3);
	assert_int_equal(t.info.source_days, 2);
	assert_int_equal(t.info.source_engineer_days, 6);
	assert_int_equal(t.info.days, 2);
	/* under a week: each target day draws from all 6 engineer-days; 12
	 * engineers use each twice, so each day holds 2 x the whole source */
	assert_int_equal((int64_t)t.n, 2 * 2 * S);
	assert_int_equal(t.info.sessions_out, (int64_t)t.n);
	/* ... at the source's times of day */
	double *want = malloc(4 * (size_t)S * sizeof(double));
	double *got = malloc(t.n * sizeof(double));
	for (int k = 0; k < 4; k++)
		memcpy(want + k * S, tods, (size_t)S * sizeof(double));
	for (size_t i = 0; i < t.n; i++) {
		double day = floor(t.s[i]->t_s / DAY);
		got[i] = t.s[i]->t_s - day * DAY;
		assert_true(day == 0 || day == 1);
	}
	qsort(want, 4 * (size_t)S, sizeof(double), cmp_dbl);
	qsort(got, t.n, sizeof(double), cmp_dbl);
	for (size_t i = 0; i < t.n; i++)
		assert_true(fabs(want[i] - got[i]) < 1e-6);
	free(want);
	free(got);
	/* 12 distinct engineer ids */
	uint64_t eng[4096];
	size_t ne = 0;
	for (size_t i = 0; i < t.n && ne < 4096; i++)
		eng[ne++] = t.s[i]->engineer;
	qsort(eng, ne, sizeof(eng[0]), cmp_u64);
	size_t distinct = ne ? 1 : 0;
	for (size_t i = 1; i < ne; i++)
		distinct += eng[i] != eng[i - 1];
	assert_int_equal(distinct, 12);
	team_free(&t);
}

static void test_seed_decides(void **state)
{
	(void)state;
	char path[512];
	scratch(path, sizeof(path), "scale_seed.jsonl");
	write_team(path, 4, 3, false, NULL, 0);
	struct scale_opts o = {.engineers = 5, .days = 4, .seed = 11};
	struct team a, b, c;
	struct diag d;
	assert_int_equal(scale_all(path, &o, &a, &d), 0);
	assert_int_equal(scale_all(path, &o, &b, &d), 0);
	o.seed = 12;
	assert_int_equal(scale_all(path, &o, &c, &d), 0);
	check_stream(&a);
	assert_int_equal(a.n, b.n);
	assert_int_equal(a.info.days, 4);
	for (size_t i = 0; i < a.n; i++) {
		assert_true(a.s[i]->id == b.s[i]->id && a.s[i]->t_s == b.s[i]->t_s);
		assert_int_equal(a.s[i]->n_calls, b.s[i]->n_calls);
		for (size_t k = 0; k < a.s[i]->n_calls; k++)
			assert_true(a.s[i]->calls[k].segs == NULL ||
				    a.s[i]->calls[k].segs[0].content == b.s[i]->calls[k].segs[0].content);
	}
	bool differs = a.n != c.n;
	for (size_t i = 0; !differs && i < a.n; i++)
		differs = a.s[i]->t_s != c.s[i]->t_s || a.s[i]->id != c.s[i]->id;
	assert_true(differs);
	team_free(&a);
	team_free(&b);
	team_free(&c);
}

static void test_weekends_stay_idle(void **state)
{
	(void)state;
	char path[512];
	scratch(path, sizeof(path), "scale_weeks.jsonl");
	write_team(path, 3, 14, true, NULL, 0);
	struct scale_opts o = {.engineers = 10, .days = 21, .seed = 3};
	struct team t;
	struct diag d;
	assert_int_equal(scale_all(path, &o, &t, &d), 0);
	check_stream(&t);
	/* the last active day is day 11 (a Friday): spans are days 0..11 */
	assert_int_equal(t.info.source_days, 12);
	assert_int_equal(t.info.source_engineer_days, 3 * 12);
	assert_int_equal(t.info.active_engineer_days, 3 * 10);
	int per_day[21] = {0};
	for (size_t i = 0; i < t.n; i++) {
		int day = (int)floor(t.s[i]->t_s / DAY);
		assert_true(day >= 0 && day < 21);
		per_day[day]++;
	}
	for (int day = 0; day < 21; day++) {
		if (day % 7 >= 5)
			assert_int_equal(per_day[day], 0);
		else
			assert_true(per_day[day] > 0);
	}
	team_free(&t);
}

static void test_contents_shared_or_salted(void **state)
{
	(void)state;
	char path[512];
	scratch(path, sizeof(path), "scale_contents.jsonl");
	write_team(path, 2, 1, false, NULL, 0);
	/* 2 engineer-days, 4 target engineers: each engineer-day used twice */
	struct scale_opts o = {.engineers = 4, .seed = 5};
	struct team t;
	struct diag d;
	assert_int_equal(scale_all(path, &o, &t, &d), 0);
	assert_int_equal(t.info.shared_contents, 1); /* "sys" */
	uint64_t sys = trace_content_str("sys", 64);
	uint64_t repo0 = trace_content_str("repo-0", 32), repo1 = trace_content_str("repo-1", 32);
	/* every first call keeps "sys"; its repo content is salted, equal
	 * within one target engineer and different between target engineers */
	uint64_t repo_of[4] = {0};
	uint64_t eng_of[4] = {0};
	int n_eng = 0;
	for (size_t i = 0; i < t.n; i++) {
		const struct trace_call *c = &t.s[i]->calls[0];
		assert_true(c->segs[0].content == sys);
		assert_true(c->segs[1].content != repo0 && c->segs[1].content != repo1);
		int j = 0;
		while (j < n_eng && eng_of[j] != t.s[i]->engineer)
			j++;
		if (j == n_eng) {
			assert_true(n_eng < 4);
			eng_of[n_eng] = t.s[i]->engineer;
			repo_of[n_eng++] = c->segs[1].content;
		}
		assert_true(repo_of[j] == c->segs[1].content);
	}
	assert_int_equal(n_eng, 4);
	for (int a = 0; a < 4; a++)
		for (int b = a + 1; b < 4; b++)
			assert_true(repo_of[a] != repo_of[b]);
	team_free(&t);
}

static void test_request_level_trace_is_one_engineer(void **state)
{
	(void)state;
	const char *path = AC_SRC_DIR "/tests/fixtures/traces/mooncake_head200.jsonl";
	struct scale_opts o = {.engineers = 3, .seed = 1};
	struct team t;
	struct diag d;
	assert_int_equal(scale_all(path, &o, &t, &d), 0);
	check_stream(&t);
	assert_int_equal(t.info.source_engineers, 1);
	assert_int_equal(t.info.source_sessions, 200);
	assert_int_equal(t.n, 600);
	for (size_t i = 0; i < t.n; i++)
		assert_true(t.s[i]->open_loop && t.s[i]->n_calls == 1);
	team_free(&t);
}

static void test_jitter_within_day(void **state)
{
	(void)state;
	char path[512];
	scratch(path, sizeof(path), "scale_jitter.jsonl");
	write_team(path, 3, 2, false, NULL, 0);
	struct scale_opts o = {.engineers = 6, .jitter_s = 1800, .seed = 9};
	struct team a, b;
	struct diag d;
	assert_int_equal(scale_all(path, &o, &a, &d), 0);
	o.jitter_s = 0;
	assert_int_equal(scale_all(path, &o, &b, &d), 0);
	check_stream(&a);
	assert_int_equal(a.n, b.n);
	/* the same engineer-days are drawn with or without jitter (same ids);
	 * each copy moves by one shift of at most 1800 s and stays in its day */
	int moved = 0;
	for (size_t i = 0; i < a.n; i++) {
		double day = floor(a.s[i]->t_s / DAY);
		assert_true(day == 0 || day == 1);
		size_t k = 0;
		while (k < b.n && b.s[k]->id != a.s[i]->id)
			k++;
		assert_true(k < b.n);
		double shift = a.s[i]->t_s - b.s[k]->t_s;
		assert_true(fabs(shift) <= 1800 + 1e-6);
		assert_true(floor(b.s[k]->t_s / DAY) == day);
		moved += shift != 0;
		for (size_t q = 0; q < a.n; q++) { /* one shift per engineer-day copy */
			if (q == i || a.s[q]->engineer != a.s[i]->engineer ||
			    floor(a.s[q]->t_s / DAY) != day)
				continue;
			size_t r = 0;
			while (r < b.n && b.s[r]->id != a.s[q]->id)
				r++;
			assert_true(r < b.n && fabs((a.s[q]->t_s - b.s[r]->t_s) - shift) < 1e-6);
		}
	}
	assert_true(moved > 0);
	team_free(&a);
	team_free(&b);
}

/* step time a + b * new tokens (ns) */
static double lin_step(const void *ctx, const struct perf_batch *pb)
{
	(void)ctx;
	return 1e6 + 1e3 * (double)pb->new_tokens;
}

static double lin_run(const void *ctx, const struct perf_batch *b0, int64_t k)
{
	return (double)k * lin_step(ctx, b0);
}

struct count {
	int64_t calls, sessions;
};

static void on_req(void *ctx, const struct res_request *r)
{
	(void)r;
	((struct count *)ctx)->calls++;
}

static void on_sess(void *ctx, const struct res_span *s)
{
	(void)s;
	((struct count *)ctx)->sessions++;
}

static void test_replay_engineers(void **state)
{
	(void)state;
	char path[512];
	scratch(path, sizeof(path), "scale_replay.jsonl");
	int S = write_team(path, 2, 1, false, NULL, 0);
	struct engine_config cfg = {
		.max_num_seqs = 64, .max_num_batched_tokens = 2048, .block_size = 16,
		.gpu_memory_utilization = 0.9, .enable_chunked_prefill = true,
		.enable_prefix_caching = true, .kv_cache_tokens = 1 << 20, .max_model_len = 1 << 16,
	};
	struct sim_perf perf = {.ctx = NULL, .step_ns = lin_step, .decode_run_ns = lin_run};
	struct count c1 = {0}, c2 = {0};
	struct res_sink s1 = {.ctx = &c1, .request = on_req, .session = on_sess};
	struct res_sink s2 = {.ctx = &c2, .request = on_req, .session = on_sess};
	struct replay_opts o = {.trace_path = path, .format = TRACE_FMT_AUTO, .seed = 1};
	struct replay_stats st;
	struct diag d;
	diag_init(&d);
	assert_int_equal(replay_run(&o, &cfg, perf, s1, &st, &d), 0);
	assert_int_equal(c1.sessions, S);
	o.scale.engineers = 6; /* 3 copies of each of the 2 engineer-days */
	o.scale.seed = 1;
	assert_int_equal(replay_run(&o, &cfg, perf, s2, &st, &d), 0);
	assert_int_equal(c2.sessions, 3 * S);
	assert_int_equal(c2.calls, 3 * c1.calls);
	assert_int_equal(st.sessions, 3 * S);
	assert_int_equal(st.scale.engineers, 6);
	assert_int_equal(st.scale.sessions_out, 3 * S);
}

static void test_bad_options(void **state)
{
	(void)state;
	const char *path = AC_SRC_DIR "/tests/fixtures/traces/mooncake_head200.jsonl";
	struct team t;
	struct diag d;
	struct scale_opts o = {.engineers = 0};
	assert_int_equal(scale_all(path, &o, &t, &d), DIAG_EINPUT);
	assert_non_null(strstr(d.msg, "--engineers 0"));
	o = (struct scale_opts){.engineers = 2, .jitter_s = 50000};
	assert_int_equal(scale_all(path, &o, &t, &d), DIAG_EINPUT);
	assert_non_null(strstr(d.msg, "--jitter"));
	o = (struct scale_opts){.engineers = 2, .days = 20000};
	assert_int_equal(scale_all(path, &o, &t, &d), DIAG_EINPUT);
	assert_non_null(strstr(d.msg, "past t = 1e9 s"));
	/* a bad line in the source stops the first pass with its place */
	char bad[512];
	scratch(bad, sizeof(bad), "scale_bad.jsonl");
	FILE *f = fopen(bad, "w");
	fputs("{\"format\":\"agentcap-trace\",\"version\":1}\n{\"t\":0,\"prompt\":[[\"a\",0]],\"output_tokens\":1}\n", f);
	fclose(f);
	o = (struct scale_opts){.engineers = 2};
	assert_int_equal(scale_all(bad, &o, &t, &d), DIAG_EINPUT);
	assert_non_null(strstr(d.msg, "scale_bad.jsonl:2:"));
}

/* Stream a scaled team without keeping it: sessions in start order,
 * their count and the target days they fall on (UTC days spanned). */
static int scale_count(const char *path, const struct scale_opts *o, struct scale_info *info,
		       int64_t *sessions, struct diag *d)
{
	diag_init(d);
	struct trace_reader *r;
	int rc = trace_reader_open(&r, path, TRACE_FMT_AUTO, d);
	if (rc != 0)
		return rc;
	struct scale *sc;
	rc = scale_open(&sc, r, o, d);
	if (rc != 0) {
		trace_reader_free(r);
		return rc;
	}
	struct trace_session *s;
	double last = -1;
	*sessions = 0;
	while ((rc = scale_next(sc, &s, d)) == 1) {
		assert_true(s->t_s >= last && s->t_s >= 0);
		last = s->t_s;
		(*sessions)++;
		trace_session_free(s);
	}
	scale_get_info(sc, info);
	scale_free(sc);
	trace_reader_free(r);
	return rc;
}

/* The cases: a one-day team of 30 in the default profile's four
 * time zones (US Pacific to India, so its working hours cross 00:00 UTC)
 * is one day, scaled to 30 as to 300; a 20-engineer 5-day pilot scaled to
 * 300 engineers is 5 days.  Counting UTC days made them 2 and 6. */
static void test_days_in_own_time_zone(void **state)
{
	(void)state;
	struct synth_profile p;
	struct diag d;
	diag_init(&d);
	assert_int_equal(synth_profile_load(&p, NULL, &d), 0);
	assert_true(p.n_zones >= 4);
	char one[512], five[512];
	scratch(one, sizeof(one), "scale_synth30x1.jsonl.gz");
	scratch(five, sizeof(five), "scale_synth20x5.jsonl.gz");
	struct synth_team_opts so = {.engineers = 30, .days = 1, .seed = 1};
	struct synth_team_stats st;
	assert_int_equal(synth_team_write(&p, &so, one, true, &st, &d), 0);
	assert_true(st.last_start_s > DAY); /* crosses 00:00 UTC */
	struct scale_opts o = {.engineers = 30, .seed = 1};
	struct scale_info in;
	int64_t n;
	assert_int_equal(scale_count(one, &o, &in, &n, &d), 0);
	assert_int_equal(in.source_days, 1);
	assert_int_equal(in.days, 1);
	assert_int_equal(in.engineers, 30);
	assert_true(n > 0);
	o.engineers = 300;
	assert_int_equal(scale_count(one, &o, &in, &n, &d), 0);
	assert_int_equal(in.days, 1);

	so = (struct synth_team_opts){.engineers = 20, .days = 5, .seed = 1};
	assert_int_equal(synth_team_write(&p, &so, five, true, &st, &d), 0);
	o = (struct scale_opts){.engineers = 300, .seed = 7};
	assert_int_equal(scale_count(five, &o, &in, &n, &d), 0);
	assert_int_equal(in.source_days, 5);
	assert_int_equal(in.days, 5);
	/* each target day holds about 300 / 20 times a source day's sessions */
	assert_true(n > 10 * st.sessions && n < 20 * st.sessions);
	/* scaled to its own size: still 5 days, about as many sessions */
	o.engineers = 20;
	assert_int_equal(scale_count(five, &o, &in, &n, &d), 0);
	assert_int_equal(in.days, 5);
	assert_true(n > st.sessions / 2 && n < 2 * st.sessions);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_multiple_of_pool_keeps_load_and_times),
		cmocka_unit_test(test_seed_decides),
		cmocka_unit_test(test_weekends_stay_idle),
		cmocka_unit_test(test_contents_shared_or_salted),
		cmocka_unit_test(test_request_level_trace_is_one_engineer),
		cmocka_unit_test(test_jitter_within_day),
		cmocka_unit_test(test_replay_engineers),
		cmocka_unit_test(test_days_in_own_time_zone),
		cmocka_unit_test(test_bad_options),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
