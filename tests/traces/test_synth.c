/* SPDX-License-Identifier: Apache-2.0
 * test_synth: the synthetic team.  Same seed, same bytes; an engineer's
 * sessions do not depend on the team size; the stream obeys the trace rules
 * and the model's own rules (start order, working windows, retries, context
 * window, acceptance, subagents beside their parent); the default profile
 * reproduces its targets within the tolerances of docs/synth-profile.md,
 * counted independently from the written file; and the knobs move what they
 * claim to move.
 */
#include "base/outkind.h"
#include "tests/traces/test_synth_count.h"
#include "tests/traces/testutil.h"

#include "base/diag.h"
#include "base/map.h"
#include "traces/synth.h"
#include "traces/synth_profile.h"
#include "traces/trace.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

/* Tolerances of docs/synth-profile.md for a moderate team (at least 100
 * active engineer-days; "Targets and tolerances"). */
#define TOL_PROMPT_REL 0.12
#define TOL_OUTPUT_REL 0.05
#define TOL_HIT_ABS 0.006
#define TOL_AMPLIFICATION_REL 0.45
#define TOL_FAILURE_ABS 0.01
#define TOL_OVERLAP_P50_ABS 0.08
#define TOL_OVERLAP_P90_ABS 0.25

static struct synth_profile default_profile(void)
{
	struct synth_profile p;
	struct diag d;
	diag_init(&d);
	assert_int_equal(synth_profile_load(&p, NULL, &d), 0);
	return p;
}

static void write_team(const char *path, const struct synth_profile *p, int engineers, int days,
		       uint64_t seed, bool gz, struct synth_team_stats *st)
{
	struct synth_team_opts o = {.engineers = engineers, .days = days, .seed = seed};
	struct diag d;
	diag_init(&d);
	int rc = synth_team_write(p, &o, path, gz, st, &d);
	if (rc)
		fail_msg("synth_team_write: %s", d.msg);
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *buf = malloc((size_t)n + 1);
	assert_non_null(buf);
	*len = fread(buf, 1, (size_t)n, f);
	fclose(f);
	return buf;
}

static bool same_file(const char *a, const char *b)
{
	size_t na, nb;
	char *x = slurp(a, &na), *y = slurp(b, &nb);
	bool same = na == nb && memcmp(x, y, na) == 0;
	free(x);
	free(y);
	return same;
}

static void test_deterministic(void **state)
{
	(void)state;
	struct synth_profile p = default_profile();
	char a[512], b[512], c[512], g1[512], g2[512];
	testutil_scratch(a, sizeof(a), "synth_a.jsonl");
	testutil_scratch(b, sizeof(b), "synth_b.jsonl");
	testutil_scratch(c, sizeof(c), "synth_c.jsonl");
	testutil_scratch(g1, sizeof(g1), "synth_a.jsonl.gz");
	testutil_scratch(g2, sizeof(g2), "synth_b.jsonl.gz");
	struct synth_team_stats sa, sb;
	write_team(a, &p, 4, 2, 7, false, &sa);
	write_team(b, &p, 4, 2, 7, false, &sb);
	assert_true(same_file(a, b));
	assert_memory_equal(&sa, &sb, sizeof(sa));
	write_team(c, &p, 4, 2, 8, false, NULL);
	assert_false(same_file(a, c));
	write_team(g1, &p, 4, 2, 7, true, NULL);
	write_team(g2, &p, 4, 2, 7, true, NULL);
	assert_true(same_file(g1, g2));
	/* the gzip file holds the same sessions */
	struct trace_session **x, **y;
	size_t nx, ny;
	char msg[DIAG_MSG_MAX];
	assert_int_equal(testutil_read_all(a, &x, &nx, msg, sizeof(msg)), 0);
	assert_int_equal(testutil_read_all(g1, &y, &ny, msg, sizeof(msg)), 0);
	assert_int_equal(nx, ny);
	assert_int_equal((int64_t)nx, sa.sessions);
	for (size_t i = 0; i < nx; i++)
		assert_true(testutil_session_equal(x[i], y[i], false));
	testutil_free_all(x, nx);
	testutil_free_all(y, ny);
}

/* output_kinds: calls carry kinds in about the shares asked for, and the
 * trace is otherwise the one the profile without kinds makes. */
static void test_output_kinds(void **state)
{
	(void)state;
	struct synth_profile p = default_profile(), q = default_profile();
	q.kind_share[OUT_KIND_CODE] = 0.5;
	q.kind_share[OUT_KIND_STRUCTURED] = 0.2;
	q.kind_share[OUT_KIND_PROSE] = 0.2;
	char a[512], b[512];
	testutil_scratch(a, sizeof(a), "synth_nokinds.jsonl");
	testutil_scratch(b, sizeof(b), "synth_kinds.jsonl");
	write_team(a, &p, 4, 1, 7, false, NULL);
	write_team(b, &q, 4, 1, 7, false, NULL);
	struct trace_session **x, **y;
	size_t nx, ny;
	char msg[DIAG_MSG_MAX];
	assert_int_equal(testutil_read_all(a, &x, &nx, msg, sizeof(msg)), 0);
	assert_int_equal(testutil_read_all(b, &y, &ny, msg, sizeof(msg)), 0);
	assert_int_equal(nx, ny);
	int64_t count[OUT_KINDS] = {0}, calls = 0;
	for (size_t i = 0; i < nx; i++) {
		assert_int_equal(x[i]->n_calls, y[i]->n_calls);
		for (size_t j = 0; j < x[i]->n_calls; j++) {
			assert_int_equal(x[i]->calls[j].kind, OUT_KIND_UNKNOWN);
			assert_int_equal(x[i]->calls[j].prompt_tokens, y[i]->calls[j].prompt_tokens);
			assert_int_equal(x[i]->calls[j].output_tokens, y[i]->calls[j].output_tokens);
			count[y[i]->calls[j].kind]++;
			calls++;
		}
	}
	assert_true(calls > 500);
	double want[OUT_KINDS] = {0.1, 0.5, 0.2, 0.2};
	for (int k = 0; k < OUT_KINDS; k++)
		assert_true(fabs((double)count[k] / (double)calls - want[k]) < 0.05);
	testutil_free_all(x, nx);
	testutil_free_all(y, ny);
}

/* Engineer e's sessions depend on the seed, e and the day only: growing the
 * team or adding days leaves the first engineers' first days as they were. */
static void test_independent_of_team_size(void **state)
{
	(void)state;
	struct synth_profile p = default_profile();
	struct synth_team_opts small = {.engineers = 3, .days = 2, .seed = 11};
	struct synth_team_opts big = {.engineers = 7, .days = 3, .seed = 11};
	struct diag d;
	diag_init(&d);
	struct synth_team *ts = NULL, *tb = NULL;
	assert_int_equal(synth_team_new(&ts, &p, &small, &d), 0);
	assert_int_equal(synth_team_new(&tb, &p, &big, &d), 0);
	struct trace_session *s, *t;
	struct trace_session *mine[4096];
	size_t n = 0;
	struct map engineers, ids; /* engineer -> last start (bits); session -> index */
	map_init(&engineers);
	map_init(&ids);
	while (synth_team_next(ts, &s, &d) == 1) {
		assert_true(n < 4096);
		map_put(&ids, s->id, n);
		mine[n++] = s;
		uint64_t bits;
		memcpy(&bits, &s->t_s, sizeof(bits));
		map_put(&engineers, s->engineer, bits);
	}
	assert_int_equal(engineers.len, 3);
	assert_true(n > 10);
	/* the big team holds every one of them unchanged, and the same
	 * engineers' other sessions come on a later day */
	size_t found = 0, later = 0, others = 0;
	while (synth_team_next(tb, &t, &d) == 1) {
		const uint64_t *last = map_get(&engineers, t->engineer);
		const uint64_t *k = map_get(&ids, t->id);
		if (k) {
			assert_true(testutil_session_equal(mine[*k], t, true));
			found++;
		} else if (last) {
			double last_t;
			memcpy(&last_t, last, sizeof(last_t));
			assert_true(t->t_s > last_t);
			later++;
		} else {
			others++;
		}
		trace_session_free(t);
	}
	assert_int_equal(found, n);
	assert_true(later > 0 && others > 0);
	for (size_t i = 0; i < n; i++)
		trace_session_free(mine[i]);
	map_release(&engineers);
	map_release(&ids);
	synth_team_free(ts);
	synth_team_free(tb);
}

/* Smallest arc of the 24-hour clock that holds every start hour. */
static double clock_arc_h(double *h, size_t n)
{
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0 && h[j - 1] > h[j]; j--) {
			double x = h[j];
			h[j] = h[j - 1];
			h[j - 1] = x;
		}
	double widest_gap = 24 - h[n - 1] + h[0];
	for (size_t i = 1; i < n; i++)
		if (h[i] - h[i - 1] > widest_gap)
			widest_gap = h[i] - h[i - 1];
	return 24 - widest_gap;
}

#define MAX_ENG 16
#define MAX_STARTS 256

static void test_structure(void **state)
{
	(void)state;
	struct synth_profile p = default_profile();
	struct synth_team_opts o = {.engineers = 8, .days = 3, .seed = 3};
	struct diag d;
	diag_init(&d);
	struct synth_team *t = NULL;
	assert_int_equal(synth_team_new(&t, &p, &o, &d), 0);
	struct map parents; /* session id -> index into ends */
	map_init(&parents);
	double ends[4096];
	size_t n_parents = 0;
	uint64_t eng_id[MAX_ENG];
	double starts[MAX_ENG][MAX_STARTS];
	size_t n_eng = 0, n_starts[MAX_ENG] = {0};
	double last_t = 0;
	int64_t calls = 0, compactions = 0, subagents = 0, accepted_set = 0, tasks = 0;
	int64_t max_run = 0;
	struct trace_session *s;
	int got;
	while ((got = synth_team_next(t, &s, &d)) == 1) {
		assert_true(trace_session_check(s));
		assert_false(s->open_loop);
		assert_true(s->t_s >= last_t);
		last_t = s->t_s;
		assert_true(s->t_s >= 0 && s->t_s < (o.days + 2) * 86400.0);
		/* engineers and their working windows */
		size_t e = 0;
		while (e < n_eng && eng_id[e] != s->engineer)
			e++;
		if (e == n_eng) {
			assert_true(n_eng < MAX_ENG);
			eng_id[n_eng++] = s->engineer;
		}
		/* nominal timeline: a call lasts output / decode rate */
		double now = s->t_s;
		for (size_t i = 0; i < s->n_calls; i++) {
			const struct trace_call *c = &s->calls[i];
			now += (i ? c->gap_s : 0) + (double)c->output_tokens / p.decode_tokens_per_s;
			calls++;
			assert_true(c->prompt_tokens + c->output_tokens <= p.context_window_tokens);
			if (c->tool == TRACE_TOOL_NONE) {
				/* only compaction requests lack a tool outcome */
				compactions++;
				assert_true(c->extends_prev && c->n_segs == 1);
				assert_int_equal(c->segs[0].tokens, p.compact_request_tokens);
				/* requested when the next call would pass the threshold;
				 * that call adds at most one tool output and one answer */
				assert_true(c->prompt_tokens + (int64_t)(p.explore_tool_output_tokens.max +
									 p.output_tokens.max) >
					    synth_profile_compact_threshold(&p));
				assert_true(i + 1 < s->n_calls && !s->calls[i + 1].extends_prev);
			}
			if (c->retry_of >= 0) {
				/* a retry follows a failed attempt of the same step (a
				 * compaction may come in between) */
				size_t prev = i - 1;
				while (s->calls[prev].tool == TRACE_TOOL_NONE)
					prev--;
				assert_int_equal(s->calls[prev].tool, TRACE_TOOL_FAIL);
				assert_int_equal(s->calls[c->retry_of].tool, TRACE_TOOL_FAIL);
				int64_t run = 0; /* attempts so far, compactions aside */
				for (size_t k = (size_t)c->retry_of; k <= i; k++)
					run += s->calls[k].tool != TRACE_TOOL_NONE;
				if (run > max_run)
					max_run = run;
				assert_true(run <= p.max_attempts);
			}
			bool last_of_task = i + 1 == s->n_calls || s->calls[i + 1].task != c->task;
			assert_true(c->task != 0);
			if (s->parent) {
				assert_int_equal(c->accepted, TRACE_ACCEPT_UNKNOWN);
			} else if (last_of_task) {
				tasks++;
				accepted_set += c->accepted != TRACE_ACCEPT_UNKNOWN;
			} else {
				assert_int_equal(c->accepted, TRACE_ACCEPT_UNKNOWN);
			}
		}
		if (s->parent) {
			/* a subagent starts while its parent is running and ends
			 * before the parent's call that gets its result */
			subagents++;
			const uint64_t *k = map_get(&parents, s->parent);
			assert_non_null(k);
			assert_true(s->t_s <= ends[*k]);
		} else {
			assert_true(n_parents < 4096);
			map_put(&parents, s->id, n_parents);
			ends[n_parents++] = now;
			if (n_starts[e] < MAX_STARTS)
				starts[e][n_starts[e]++] = fmod(s->t_s, 86400.0) / 3600.0;
		}
		trace_session_free(s);
	}
	assert_int_equal(got, 0);
	assert_int_equal(synth_team_next(t, &s, &d), 0); /* stays at the end */
	const struct synth_team_stats *st = synth_team_stats(t);
	assert_int_equal(st->calls, calls);
	assert_int_equal(st->compactions, compactions);
	assert_int_equal(st->subagent_sessions, subagents);
	assert_int_equal(st->tasks, tasks);
	assert_int_equal(accepted_set, tasks); /* every root task ends with an outcome */
	assert_true(compactions > 0 && subagents > 0);
	assert_int_equal(max_run, p.max_attempts); /* retry loops reach the cap, never pass it */
	assert_int_equal(n_eng, 8);
	/* each engineer starts sessions inside a daily window: the longest
	 * window (11 h) plus the day-to-day jitter (+-1 h) */
	for (size_t e = 0; e < n_eng; e++)
		if (n_starts[e] > 1)
			assert_true(clock_arc_h(starts[e], n_starts[e]) <= 13.0);
	map_release(&parents);
	synth_team_free(t);
}

static void count(const char *path, const struct synth_profile *p, struct synth_count *c)
{
	char msg[DIAG_MSG_MAX];
	int rc = synth_count_file(path, 16, p->decode_tokens_per_s, c, msg, sizeof(msg));
	if (rc)
		fail_msg("counting %s: %s", path, msg);
}

static void near_rel(const char *what, double got, double want, double tol)
{
	if (!(fabs(got - want) <= tol * want))
		fail_msg("%s: %g, target %g +- %g%%", what, got, want, 100 * tol);
}

static void near_abs(const char *what, double got, double want, double tol)
{
	if (!(fabs(got - want) <= tol))
		fail_msg("%s: %g, target %g +- %g", what, got, want, tol);
}

/* The default profile reproduces its targets on a moderate team. */
static void test_targets(void **state)
{
	(void)state;
	struct synth_profile p = default_profile();
	char path[512];
	testutil_scratch(path, sizeof(path), "synth_targets.jsonl");
	struct synth_team_stats st;
	write_team(path, &p, 40, 3, 1, false, &st);
	assert_true(st.engineer_days >= 100);
	struct synth_count c;
	count(path, &p, &c);
	print_message("synth targets: %lld calls, median prompt %.0f, median output %.0f, hit rate "
		      "%.4f, amplification %.2f, failure rate %.4f, overlap %.3f / %.3f over %lld turns\n",
		      (long long)c.calls, c.median_prompt_tokens, c.median_output_tokens, c.hit_rate,
		      c.miss_amplification, c.tool_failure_rate, c.overlap_median, c.overlap_p90,
		      (long long)c.overlap_turns);
	assert_int_equal(c.calls, st.calls);
	assert_int_equal(c.sessions, st.sessions);
	assert_int_equal(c.prompt_tokens, st.prompt_tokens);
	assert_int_equal(c.engineers, 40);
	near_rel("median prompt tokens", c.median_prompt_tokens, p.target_median_prompt_tokens,
		 TOL_PROMPT_REL);
	near_rel("median output tokens", c.median_output_tokens, p.target_median_output_tokens,
		 TOL_OUTPUT_REL);
	near_abs("prefix hit rate", c.hit_rate, p.target_prefix_hit_rate, TOL_HIT_ABS);
	near_rel("miss amplification", c.miss_amplification, p.target_miss_amplification,
		 TOL_AMPLIFICATION_REL);
	near_abs("tool failure rate", c.tool_failure_rate, p.target_tool_failure_rate, TOL_FAILURE_ABS);
	near_abs("overlap concurrency p50", c.overlap_median, p.target_overlap_median,
		 TOL_OVERLAP_P50_ABS);
	near_abs("overlap concurrency p90", c.overlap_p90, p.target_overlap_p90, TOL_OVERLAP_P90_ABS);
	assert_int_equal(c.max_attempts, p.max_attempts);
	assert_int_equal(c.accepted + c.rejected, c.tasks);
	near_abs("acceptance", (double)c.accepted / (double)c.tasks, p.accept_probability, 0.05);
}

/* Each knob moves the figure it is documented to move. */
static void test_knobs(void **state)
{
	(void)state;
	char path[512];
	testutil_scratch(path, sizeof(path), "synth_knobs.jsonl");
	struct synth_profile base = default_profile();
	struct synth_count c0, c;
	write_team(path, &base, 5, 2, 5, false, NULL);
	count(path, &base, &c0);

	struct synth_profile p = base;
	p.bust_probability = 0;
	write_team(path, &p, 5, 2, 5, false, NULL);
	count(path, &p, &c);
	assert_true(c.hit_rate > c0.hit_rate + 0.01);

	p = base;
	p.failure_rate = 0.25;
	write_team(path, &p, 5, 2, 5, false, NULL);
	count(path, &p, &c);
	near_abs("failure rate 0.25", c.tool_failure_rate, 0.25, 0.02);

	p = base;
	p.spawn_probability = 0;
	write_team(path, &p, 5, 2, 5, false, NULL);
	count(path, &p, &c);
	assert_int_equal(c.subagent_sessions, 0);
	assert_int_equal(c.overlap_turns, 0);

	/* a 100K window (the harness and maxima made to fit, as loading
	 * demands) compacts more often and keeps prompts smaller */
	p = base;
	struct diag d;
	diag_init(&d);
	int rc = synth_profile_load_text(
		&p, "{\"harness\": {\"context_window_tokens\": 100000, "
		    "\"summary_tokens\": {\"dist\": \"fixed\", \"value\": 6000},"
		    "\"kept_tokens\": {\"dist\": \"fixed\", \"value\": 10000}},"
		    "\"team\": {\"repo_context_tokens\": {\"dist\": \"fixed\", \"value\": 3000}},"
		    "\"step\": {\"output_tokens\": {\"dist\": \"lognormal\", \"median\": 215, "
		    "\"sigma\": 1.4, \"max\": 8000}}}", "100k window", &d);
	if (rc)
		fail_msg("%s", d.msg);
	assert_int_equal(synth_profile_step_cap(&p), 100000 - 34000 - 24050 - 6000 - 8000);
	struct synth_team_stats st0, st;
	write_team(path, &base, 5, 2, 5, false, &st0);
	write_team(path, &p, 5, 2, 5, false, &st);
	count(path, &p, &c);
	assert_true(st.compactions > 2 * st0.compactions);
	assert_true(c.median_prompt_tokens < 0.6 * c0.median_prompt_tokens);
	struct trace_session **all;
	size_t n;
	char msg[DIAG_MSG_MAX];
	assert_int_equal(testutil_read_all(path, &all, &n, msg, sizeof(msg)), 0);
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < all[i]->n_calls; k++)
			assert_true(all[i]->calls[k].prompt_tokens + all[i]->calls[k].output_tokens <=
				    100000);
	testutil_free_all(all, n);

	p = base;
	p.zones[0].utc_offset_h = 9; /* only engineers in one zone east of UTC */
	p.n_zones = 1;
	p.day_jitter_h.min = p.day_jitter_h.max = p.day_jitter_h.p1 = p.day_jitter_h.p2 = 0;
	write_team(path, &p, 8, 1, 5, false, NULL);
	count(path, &p, &c);
	/* 9:00 local in UTC+9 is 00:00 UTC: engineers whose window would open
	 * before t = 0 start a day later, inside their local window */
	assert_true(c.first_t_s >= 0);
	assert_true(fmod(c.first_t_s + 9 * 3600.0, 86400.0) >= p.day_start_local_h.min * 3600.0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_deterministic),
		cmocka_unit_test(test_output_kinds),
		cmocka_unit_test(test_independent_of_team_size),
		cmocka_unit_test(test_structure),
		cmocka_unit_test(test_targets),
		cmocka_unit_test(test_knobs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
