/* SPDX-License-Identifier: Apache-2.0
 * bench_synth: how long the synthetic team takes to generate and write, and
 * how close its figures come to the profile's targets.
 *
 *   bench_synth [--engineers N] [--days D] [--seed S] [--profile FILE]
 *               [--out PATH] [--block-size N] [--no-count]
 *
 * Generates the team into PATH (default: a file under /tmp, removed
 * afterwards), prints wall time, calls per second and output size, then
 * reads the file back with the figures of `agentcap stats` (traces/stats.h,
 * at the profile's decode rate, blocks of N tokens, default 16, without the
 * capacity curve) and prints each target beside what stats measures.  The
 * tests check that stats and an independent count agree
 * (tests/traces/test_synth_stats.c).
 */
#define _POSIX_C_SOURCE 200809L
#include "base/diag.h"
#include "traces/stats.h"
#include "traces/synth.h"
#include "traces/synth_profile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	struct synth_team_opts o = {.engineers = 300, .days = 5, .seed = 1};
	const char *profile = NULL, *out = NULL;
	int count = 1;
	long long block = 16;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (strcmp(a, "--engineers") == 0 && v) {
			o.engineers = atoi(v);
			i++;
		} else if (strcmp(a, "--days") == 0 && v) {
			o.days = atoi(v);
			i++;
		} else if (strcmp(a, "--seed") == 0 && v) {
			o.seed = strtoull(v, NULL, 10);
			i++;
		} else if (strcmp(a, "--profile") == 0 && v) {
			profile = v;
			i++;
		} else if (strcmp(a, "--out") == 0 && v) {
			out = v;
			i++;
		} else if (strcmp(a, "--block-size") == 0 && v && atoll(v) >= 1) {
			block = atoll(v);
			i++;
		} else if (strcmp(a, "--no-count") == 0) {
			count = 0;
		} else {
			fprintf(stderr, "usage: bench_synth [--engineers N] [--days D] [--seed S] "
					"[--profile FILE] [--out PATH] [--block-size N] [--no-count]\n");
			return 2;
		}
	}
	char tmp[64];
	if (!out) {
		snprintf(tmp, sizeof(tmp), "/tmp/bench-synth-%d.jsonl", (int)getpid());
		out = tmp;
	}
	struct diag d;
	diag_init(&d);
	struct synth_profile p;
	if (synth_profile_load(&p, profile, &d) != 0) {
		fprintf(stderr, "bench_synth: %s\n", d.msg);
		return 2;
	}
	struct synth_team_stats st;
	double t0 = now_s();
	if (synth_team_write(&p, &o, out, false, &st, &d) != 0) {
		fprintf(stderr, "bench_synth: %s\n", d.msg);
		return 3;
	}
	double wall = now_s() - t0;
	struct stat sb;
	long long bytes = stat(out, &sb) == 0 ? (long long)sb.st_size : -1;
	printf("team: %d engineers x %d days, seed %llu, profile %s\n", (int)o.engineers, (int)o.days,
	       (unsigned long long)o.seed, p.source);
	printf("generated: %lld sessions (%lld subagents), %lld calls, %lld tasks, %lld engineer-days\n",
	       (long long)st.sessions, (long long)st.subagent_sessions, (long long)st.calls,
	       (long long)st.tasks, (long long)st.engineer_days);
	printf("wall %.2f s, %.0f calls/s, %.1f MB written to %s\n", wall, (double)st.calls / wall,
	       (double)bytes / 1e6, out);
	printf("compactions %lld, cache busts %lld, tool failures %lld, retries %lld, reattempts %lld\n",
	       (long long)st.compactions, (long long)st.busts, (long long)st.tool_failures,
	       (long long)st.retries, (long long)st.reattempts);
	int rc = 0;
	if (count) {
		struct stats_opts so = {.block_size = block, .decode_tokens_per_s = p.decode_tokens_per_s,
					.no_curve = true};
		struct stats *sx = NULL;
		struct stats_summary m;
		t0 = now_s();
		if (stats_new(&sx, &so, &d) != 0 ||
		    stats_read(sx, out, TRACE_FMT_AUTO, false, &m, NULL, &d) != 0) {
			fprintf(stderr, "bench_synth: stats: %s\n", d.msg);
			rc = 3;
		} else {
			printf("agentcap stats figures (%.1f s, block %lld, decode %.0f tok/s, no curve):\n",
			       now_s() - t0, block, p.decode_tokens_per_s);
			printf("  %-28s %12s %12s\n", "figure", "measured", "target");
			printf("  %-28s %12.0f %12.0f\n", "median prompt tokens", m.input_tokens.p50,
			       p.target_median_prompt_tokens);
			printf("  %-28s %12.0f %12.0f\n", "median output tokens", m.output_tokens_per_call.p50,
			       p.target_median_output_tokens);
			printf("  %-28s %12.4f %12.4f\n", "prefix hit rate (unbounded)",
			       m.prefix_hit_rate_unbounded, p.target_prefix_hit_rate);
			printf("  %-28s %12.4f %12.4f\n", "tool failure rate", m.tool_failure_rate,
			       p.target_tool_failure_rate);
			printf("  %-28s %12.3f %12.3f\n", "overlap concurrency p50", m.overlap_concurrency.p50,
			       p.target_overlap_median);
			printf("  %-28s %12.3f %12.3f\n", "overlap concurrency p90", m.overlap_concurrency.p90,
			       p.target_overlap_p90);
			printf("  turns %lld (overlapping %lld); tasks %lld (accepted %lld, rejected %lld); "
			       "retries %lld\n",
			       (long long)m.turns, (long long)m.overlap_turns, (long long)m.tasks,
			       (long long)m.tasks_accepted, (long long)m.tasks_rejected,
			       (long long)m.retry_calls);
			printf("  calls per engineer-day %.0f, first call %.0f s, last call %.0f s "
			       "(zero service time)\n",
			       (double)m.calls / (double)(st.engineer_days ? st.engineer_days : 1),
			       m.first_t_s, m.last_t_s);
			printf("  (miss amplification needs first appearances of contents, which stats does "
			       "not count: tests/traces/test_synth_count.c)\n");
		}
		stats_free(sx);
	}
	if (out == tmp)
		unlink(tmp);
	return rc;
}
